#!/bin/bash
# record_frag_tunnel.sh - record frag_tunnel.py against dnsmasq in the lab
# (lab.sh) into dnsmasq_frag_tunnel.pcap (the client side); dnsmasq's log and
# the authority's go to $OUT (default /tmp/${NS}-fragtun).
set -euo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
NS=${EW_LAB_NS:-ewh3}
OUT=${OUT:-/tmp/${NS}-fragtun}
P1=
mkdir -p "$OUT"
trap '"$DIR/lab.sh" down; [ -n "$P1" ] && kill $P1 2>/dev/null || true' EXIT
"$DIR/lab.sh" up
: >/tmp/${NS}-lab/auth.log
timeout 60 ip netns exec "${NS}c" tcpdump -i "${NS}c" -s 0 -U -w "$DIR/dnsmasq_frag_tunnel.pcap" "host 10.53.3.53" 2>/dev/null &
P1=$!
sleep 1
ip netns exec "${NS}c" timeout 30 /usr/bin/python3 "$DIR/frag_tunnel.py" 10.53.3.53
sleep 1
kill $P1; wait $P1 2>/dev/null || true
P1=
cp /tmp/${NS}-lab/auth.log "$OUT/auth.log"
cp /tmp/${NS}-lab/dnsmasq.log "$OUT/dnsmasq.log"
