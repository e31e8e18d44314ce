#!/bin/bash
# run.sh [CASE...] - bring the lab up (lab.sh), capture the client's side
# with tcpdump, send the cases (client.py), take the lab down, and keep in
# $OUT (default /tmp/${EW_LAB_NS:-ewt4}-run): client.pcap, results.json and
# each reader's log, for analyze.py.
set -euo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
NS=${EW_LAB_NS:-ewt4}
OUT=${OUT:-/tmp/${NS}-run}
P1=
mkdir -p "$OUT"
trap '"$DIR/lab.sh" down; [ -z "$P1" ] || kill $P1 2>/dev/null || true' EXIT
"$DIR/lab.sh" up
timeout 900 ip netns exec "${NS}c" tcpdump -i "${NS}c" -s 0 -U -w "$OUT/client.pcap" \
	"tcp and host 10.54.4.20" 2>/dev/null &
P1=$!
sleep 1
ip netns exec "${NS}c" timeout 800 /usr/bin/python3 "$DIR/client.py" 10.54.4.20 "$OUT/results.json" "$@"
sleep 2
kill $P1 2>/dev/null || true
wait $P1 2>/dev/null || true
P1=
for f in nginx.log nginx.err haproxy.log ossl.log gnutls.log; do
	cp "/tmp/${NS}-lab/$f" "$OUT/$f" 2>/dev/null || true
done
