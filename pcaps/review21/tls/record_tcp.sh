#!/bin/bash
# record_tcp.sh - tcp_tricks.py against nginx (:443) and haproxy (:8443) in
# the lab (lab.sh): overlapping segments with different SNI bytes; the
# capture (also to tcp_overlap.pcap here) and each reader's log go to $OUT
# (default /tmp/${EW_LAB_NS:-ewt4}-tcp).
set -euo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
NS=${EW_LAB_NS:-ewt4}
OUT=${OUT:-/tmp/${NS}-tcp}
P1=
mkdir -p "$OUT"
trap '"$DIR/lab.sh" down; [ -z "$P1" ] || kill $P1 2>/dev/null || true' EXIT
"$DIR/lab.sh" up
timeout 300 ip netns exec "${NS}c" tcpdump -i "${NS}c" -s 0 -U -w "$OUT/client.pcap" \
	"tcp and host 10.54.4.20" 2>/dev/null &
P1=$!
sleep 1
for port in 443 8443; do
	ip netns exec "${NS}c" timeout 120 /usr/bin/python3 "$DIR/tcp_tricks.py" 10.54.4.20 $port \
		"$OUT/results_$port.json" "${NS}c"
done
sleep 1
kill $P1 2>/dev/null || true
wait $P1 2>/dev/null || true
P1=
cp "/tmp/${NS}-lab/nginx.log" "/tmp/${NS}-lab/haproxy.log" "$OUT/"
cp "$OUT/client.pcap" "$DIR/tcp_overlap.pcap"
