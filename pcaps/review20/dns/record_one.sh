#!/bin/bash
# record_one.sh CAPTURE - record one of the lab's (lab.sh) client-side captures
# against dnsmasq (10.53.3.53) into this folder; dnsmasq's log, the
# authority's, and for the exfil ones the authority's side (upstream.pcap),
# go to $OUT (default /tmp/${EW_LAB_NS:-ewh3}-CAPTURE), for FINDINGS.md:
#   pointer_exfil  exfil.py:        dnsmasq_pointer_exfil.pcap (R20-1)
#   long_exfil     exfil.py --long: dnsmasq_long_exfil.pcap    (R20-2)
#   frag_overlap   frag.py:         dnsmasq_frag_overlap.pcap  (R20-3)
#   frag_tunnel    frag_tunnel.py:  dnsmasq_frag_tunnel.pcap   (R20-3)
# Every sender runs inside the client namespace and times out; the lab is
# taken down on exit.
set -euo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
NS=${EW_LAB_NS:-ewh3}
CASE=${1:?usage: record_one.sh pointer_exfil|long_exfil|frag_overlap|frag_tunnel}
UP=0 FILTER="host 10.53.3.53"
case $CASE in
pointer_exfil) SEND=("$DIR/exfil.py" 10.53.3.53) UP=1 FILTER="port 53" ;;
long_exfil) SEND=("$DIR/exfil.py" 10.53.3.53 --long) UP=1 FILTER="port 53" ;;
frag_overlap) SEND=("$DIR/frag.py" 10.53.3.53) ;;
frag_tunnel) SEND=("$DIR/frag_tunnel.py" 10.53.3.53) ;;
*) echo "record_one.sh: no capture '$CASE'" >&2; exit 2 ;;
esac
OUT=${OUT:-/tmp/${NS}-$CASE}
P1= P2=
mkdir -p "$OUT"
trap '"$DIR/lab.sh" down; kill $P1 $P2 2>/dev/null || true' EXIT
"$DIR/lab.sh" up
: >/tmp/${NS}-lab/auth.log
timeout 120 ip netns exec "${NS}c" tcpdump -i "${NS}c" -s 0 -U -w "$DIR/dnsmasq_$CASE.pcap" \
	"$FILTER" 2>/dev/null &
P1=$!
if [ $UP = 1 ]; then
	timeout 120 ip netns exec "${NS}a" tcpdump -i "${NS}a" -s 0 -U -w "$OUT/upstream.pcap" "port 53" \
		2>/dev/null &
	P2=$!
fi
sleep 1
ip netns exec "${NS}c" timeout 60 /usr/bin/python3 "${SEND[@]}"
sleep 1
kill $P1 $P2 2>/dev/null || true
wait $P1 $P2 2>/dev/null || true
P1= P2=
cp /tmp/${NS}-lab/auth.log "$OUT/auth.log"
cp /tmp/${NS}-lab/dnsmasq.log "$OUT/dnsmasq.log"
