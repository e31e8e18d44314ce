#!/bin/bash
# record.sh [CASE...] - bring the lab up (lab.sh), send hostile.py's cases to
# dnsmasq and then to unbound, capturing the client side (client_*.pcap) and
# the upstream side (upstream_*.pcap, at the authority); results, the
# authority's log and the resolvers' logs go to $OUT (default /tmp/ewh3-out).
# The lab is taken down on exit.
set -euo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
NS=${EW_LAB_NS:-ewh3}
OUT=${OUT:-/tmp/${NS}-out}
mkdir -p "$OUT"
trap '"$DIR/lab.sh" down; kill $P1 $P2 2>/dev/null || true' EXIT
"$DIR/lab.sh" up
for r in dnsmasq:53 unbound:54; do
	n=${r%%:*} a=10.53.3.${r#*:}
	: >/tmp/${NS}-lab/auth.log
	timeout 600 ip netns exec "${NS}c" tcpdump -i "${NS}c" -s 0 -U -w "$OUT/client_$n.pcap" "port 53" 2>/dev/null &
	P1=$!
	timeout 600 ip netns exec "${NS}a" tcpdump -i "${NS}a" -s 0 -U -w "$OUT/upstream_$n.pcap" "port 53" 2>/dev/null &
	P2=$!
	sleep 1
	ip netns exec "${NS}c" timeout 300 python3 "$DIR/hostile.py" "$a" "$OUT/results_$n.json" "$@"
	sleep 1
	kill $P1 $P2; wait $P1 $P2 2>/dev/null || true
	cp /tmp/${NS}-lab/auth.log "$OUT/auth_$n.log"
done
cp /tmp/${NS}-lab/dnsmasq.log /tmp/${NS}-lab/unbound.log "$OUT/" 2>/dev/null || true
