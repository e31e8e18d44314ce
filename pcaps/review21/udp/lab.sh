#!/bin/bash
# lab.sh [--offload] OUT.pcap MODE - record one UDP decoy case of FINDINGS.md.
# Namespaces (prefix ewu5) on one bridge in ewu5b, IPv4 10.57.5.0/24 and IPv6
# fd57:5::/64 only; nothing routes out:
#   ewu5c 10.57.5.10 fd57:5::10  the client (the agent in a sandbox)
#   ewu5e 10.57.5.11 fd57:5::11  a second sandbox host of the agent's
#   ewu5d 10.57.5.53 fd57:5::53  dnsmasq, the sandbox resolver, forwarding to
#   ewu5a 10.57.5.60 fd57:5::60  dnsmasq as the authority of exfil-test.example
# The capture is taken on the client's bridge port (what it sends and gets).
# Without --offload the hosts compute checksums in software (ethtool tx off:
# what a link after offload shows); with it the veths keep checksum offload,
# so the capture holds offload's partial sums (a capture on a container bridge).
# decoy.py MODE (run in ewu5c and ewu5e) sends the real queries with dig and
# the decoys with scapy; the resolver's log (RUN/dnsmasq.log) says which
# queries it got, and is copied next to the capture (OUT.pcap -> OUT.log).
set -euo pipefail
NS=ewu5
NET=10.57.5
NET6=fd57:5:
DIR=$(cd "$(dirname "$0")" && pwd)
RUN=/tmp/${NS}-lab
OFFLOAD=0
[ "${1:-}" = --offload ] && { OFFLOAD=1; shift; }
OUT=$1 MODE=$2
hosts="c:10 e:11 d:53 a:60"

down() {
	for f in "$RUN"/*.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
	for h in c e d a b; do
		ip netns del "${NS}$h" 2>/dev/null || true
	done
}
trap down EXIT

down
rm -rf "$RUN"
mkdir -p "$RUN"
ip netns add "${NS}b"
ip -n "${NS}b" link add br0 type bridge
ip -n "${NS}b" link set br0 up
for hv in $hosts; do
	h=${hv%%:*} a=${hv#*:}
	ip netns add "${NS}$h"
	ip link add "${NS}$h" type veth peer name "${NS}$h-p"
	ip link set "${NS}$h" netns "${NS}$h"
	ip link set "${NS}$h-p" netns "${NS}b"
	ip -n "${NS}b" link set "${NS}$h-p" master br0 up
	ip -n "${NS}$h" addr add "$NET.$a/24" dev "${NS}$h"
	ip -n "${NS}$h" addr add "$NET6:$a/64" dev "${NS}$h" nodad
	ip -n "${NS}$h" link set "${NS}$h" up
	ip -n "${NS}$h" link set lo up
	if [ "$OFFLOAD" = 0 ]; then
		ip netns exec "${NS}$h" ethtool -K "${NS}$h" tx off gso off tso off >/dev/null 2>&1 || true
		ip netns exec "${NS}b" ethtool -K "${NS}$h-p" tx off gso off tso off >/dev/null 2>&1 || true
	fi
done
cat >"$RUN/auth.conf" <<EOC
no-resolv
no-hosts
listen-address=$NET.60,$NET6:60
bind-interfaces
address=/exfil-test.example/$NET.99
address=/exfil-test.example/$NET6:99
log-queries
log-facility=$RUN/auth.log
pid-file=$RUN/auth.pid
user=root
EOC
ip netns exec "${NS}a" dnsmasq -C "$RUN/auth.conf"
cat >"$RUN/dnsmasq.conf" <<EOC
no-resolv
no-hosts
server=$NET.60
listen-address=$NET.53,$NET6:53
bind-interfaces
cache-size=0
log-queries=extra
log-facility=$RUN/dnsmasq.log
pid-file=$RUN/dnsmasq.pid
user=root
EOC
ip netns exec "${NS}d" dnsmasq -C "$RUN/dnsmasq.conf"
sleep 1
ip netns exec "${NS}b" timeout 120 tcpdump -i "${NS}c-p" -U -s 0 -w "$OUT" "udp port 53" \
	>/dev/null 2>&1 &
echo $! >"$RUN/tcpdump.pid"
sleep 1
timeout 100 ip netns exec "${NS}c" /usr/bin/python3 "$DIR/decoy.py" "$MODE" client
timeout 60 ip netns exec "${NS}e" /usr/bin/python3 "$DIR/decoy.py" "$MODE" second
sleep 1
kill -INT "$(cat "$RUN/tcpdump.pid")"
sleep 1
rm -f "$RUN/tcpdump.pid"
cp "$RUN/dnsmasq.log" "${OUT%.pcap}.log"
sed -i 's/^[A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]* //' "${OUT%.pcap}.log"
