#!/bin/bash
# record_exfil.sh [--long] - record exfil.py against dnsmasq in the lab (lab.sh)
# into dnsmasq_pointer_exfil.pcap (with --long: dnsmasq_long_exfil.pcap), the
# client side, and, for FINDINGS.md, the authority's side and log into $OUT
# (default /tmp/ewh3-exfil, /tmp/ewh3-exfil-long).
set -euo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
NS=${EW_LAB_NS:-ewh3}
LONG=${1:-}
PCAP=dnsmasq_pointer_exfil.pcap
[ "$LONG" = --long ] && PCAP=dnsmasq_long_exfil.pcap
OUT=${OUT:-/tmp/${NS}-exfil${LONG:+-long}}
mkdir -p "$OUT"
trap '"$DIR/lab.sh" down; kill $P1 $P2 2>/dev/null || true' EXIT
"$DIR/lab.sh" up
: >/tmp/${NS}-lab/auth.log
timeout 120 ip netns exec "${NS}c" tcpdump -i "${NS}c" -s 0 -U -w "$DIR/$PCAP" "port 53" 2>/dev/null &
P1=$!
timeout 120 ip netns exec "${NS}a" tcpdump -i "${NS}a" -s 0 -U -w "$OUT/upstream.pcap" "port 53" 2>/dev/null &
P2=$!
sleep 1
ip netns exec "${NS}c" timeout 60 python3 "$DIR/exfil.py" 10.53.3.53 $LONG
sleep 1
kill $P1 $P2; wait $P1 $P2 2>/dev/null || true
cp /tmp/${NS}-lab/auth.log "$OUT/auth.log"
cp /tmp/${NS}-lab/dnsmasq.log "$OUT/dnsmasq.log"
