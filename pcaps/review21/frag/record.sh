#!/bin/bash
# record.sh [tunnel] - record frag_linux.py's fragments (with `tunnel`,
# frag_linux_tunnel.py's) against dnsmasq in review20's DNS lab
# (../../review20/dns/lab.sh: the client 10.53.3.10, dnsmasq 10.53.3.53
# forwarding to an authority that logs each question it gets) into
# dnsmasq_frag_linux.pcap (dnsmasq_frag_linux_tunnel.pcap) here; the
# authority's and dnsmasq's logs go to $OUT (default
# /tmp/${EW_LAB_NS:-ewf5}-frag): what Linux reassembled is what dnsmasq
# forwarded (FINDINGS.md). The sender runs inside the client namespace and
# times out; the lab is taken down on exit.
set -euo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
LAB=$DIR/../../review20/dns/lab.sh
export EW_LAB_NS=${EW_LAB_NS:-ewf5}
NS=$EW_LAB_NS
NAME=frag_linux
[ "${1:-}" = tunnel ] && NAME=frag_linux_tunnel
OUT=${OUT:-/tmp/${NS}-frag}
P1=
mkdir -p "$OUT"
trap '"$LAB" down; kill $P1 2>/dev/null || true' EXIT
"$LAB" up
: >/tmp/${NS}-lab/auth.log
timeout 120 ip netns exec "${NS}c" tcpdump -i "${NS}c" -s 0 -U -w "$DIR/dnsmasq_$NAME.pcap" \
	"host 10.53.3.53" 2>/dev/null &
P1=$!
sleep 1
ip netns exec "${NS}c" timeout 60 /usr/bin/python3 "$DIR/$NAME.py" 10.53.3.53
sleep 1
kill $P1 2>/dev/null || true
wait $P1 2>/dev/null || true
P1=
cp /tmp/${NS}-lab/auth.log "$OUT/auth.log"
cp /tmp/${NS}-lab/dnsmasq.log "$OUT/dnsmasq.log"
