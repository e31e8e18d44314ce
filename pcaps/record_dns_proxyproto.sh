#!/bin/bash
# record_dns_proxyproto.sh - record pcaps/dns_proxyproto_real.pcap: DNS over TCP and
# UDP behind a PROXY protocol header, sent to unbound listening with
# `proxy-protocol-port: 53` (which takes PROXY v2 only, over UDP and TCP).
#
# README
#   sudo pcaps/record_dns_proxyproto.sh [OUT.pcap]  (default: pcaps/dns_proxyproto_real.pcap)
#   NS_PREFIX=xyz- ... to name the namespaces otherwise (default ewdpp-)
#   EW_DPP_CLIENT=script.py EW_DPP_NAMES="a b ..." ... another client, and the names
#     under pp.test it asks (answered 192.0.2.1, .2 ...): review19/record_dns_pp_bigtlv.sh
#
# Needs root, iproute2, ethtool, unbound and dumpcap. Two namespaces joined by one
# veth pair, IPv6 off, no route, NAT or link to the host's interfaces:
#   ${NS_PREFIX}c 10.97.0.10/24   dns_proxyproto_client.py; the capture (offloads off;
#                                 classic pcap, -P, as pcap.formats wants)
#   ${NS_PREFIX}s 10.97.0.53/24   unbound, local data for pp.test only (no recursion:
#                                 nothing could leave the namespace anyway)
# What unbound 1.17.1 did on the recorded run (the client's output):
#   tcp plain ['error [Errno 104] Connection reset by peer']   (no header: refused)
#   tcp v2 ['id=2 rcode=0 an=1', 'id=3 rcode=0 an=1']          (both queries answered)
#   tcp v1 ['error [Errno 104] Connection reset by peer']      (v1: refused)
#   udp v2 id=5 rcode=0 an=1
# The golden test pins the sensor's events (tests/pcap/dns_proxyproto_real.expected):
# every query, and the answers to the v2 ones. Real traffic: ports and times differ on
# every run; record once and commit the file.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE/dns_proxyproto_real.pcap}
P=${NS_PREFIX:-ewdpp-}
CLIENT=${EW_DPP_CLIENT:-$HERE/dns_proxyproto_client.py}
NAMES=${EW_DPP_NAMES:-plain v2-tcp v2-tcp-second v1-tcp v2-udp}
C=${P}c
S=${P}s
T=$(mktemp -d /tmp/ewdpp.XXXXXX)
CAP=

cleanup() {
	rc=$?
	set +e
	[ -n "$CAP" ] && kill -INT "$CAP" 2>/dev/null && sleep 1
	[ -f "$T/unbound.pid" ] && kill "$(cat "$T/unbound.pid")" 2>/dev/null && sleep 1
	for ns in "$C" "$S"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
	done
	[ "$rc" -ne 0 ] && tail -n 5 "$T"/*.log >&2
	rm -rf "$T"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$C"
ip netns add "$S"
ip link add "${P}c0" netns "$C" type veth peer "${P}s0" netns "$S"
ip -n "$C" addr add 10.97.0.10/24 dev "${P}c0"
ip -n "$S" addr add 10.97.0.53/24 dev "${P}s0"
for n in "$C" "$S"; do
	ip -n "$n" link set lo up
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$n" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
done
ip -n "$C" link set "${P}c0" up
ip -n "$S" link set "${P}s0" up
ip netns exec "$C" ethtool -K "${P}c0" tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
ip netns exec "$S" ethtool -K "${P}s0" tso off gso off gro off tx off rx off >/dev/null 2>&1 || true

chmod 755 "$T"
cat >"$T/unbound.conf" <<UB
server:
	interface: 10.97.0.53
	port: 53
	proxy-protocol-port: 53
	do-ip6: no
	access-control: 0.0.0.0/0 allow
	username: ""
	chroot: ""
	directory: "$T"
	pidfile: "$T/unbound.pid"
	logfile: "$T/unbound.log"
	use-syslog: no
	do-daemonize: yes
	local-zone: "pp.test." static
$(i=0; for n in $NAMES; do i=$((i + 1)); printf '\tlocal-data: "%s.pp.test. 60 IN A 192.0.2.%d"\n' "$n" "$i"; done)
remote-control:
	control-enable: no
UB
ip netns exec "$S" unbound -c "$T/unbound.conf"
sleep 1

rm -f "$OUT"
ip netns exec "$C" timeout 60 dumpcap -q -P -i "${P}c0" -f "host 10.97.0.53" -w "$T/out.pcap" >/dev/null 2>&1 &
CAP=$!
sleep 1.5
ip netns exec "$C" timeout 30 /usr/bin/python3 "$CLIENT" 10.97.0.53
sleep 1
kill -INT "$CAP"
wait "$CAP" 2>/dev/null || true
CAP=
cp "$T/out.pcap" "$OUT"
chmod 644 "$OUT"
echo "wrote $OUT"
