#!/bin/bash
# record6.sh [slow|opts|fuzz|whole|ping|frag|tcp|urg|tree|many] - record, in a lab of two namespaces joined by one
# veth pair (prefix ${EW_LAB_NS:-ewf6}: ${NS}c fd53:6::10 and 10.56.6.10,
# the client; ${NS}s fd53:6::53 and 10.56.6.53, a listener on port 53 that
# logs what Linux delivered to its socket, listen6.py), the client's packets
# from frag6_chain.py into ipv6_chain_cut.pcap here (R21-F3); with `slow`,
# frag6_slow.py's into ipv6_slow.pcap (R21-F4); with `opts`, opts.py's IP
# options and extension headers into ip_opts.pcap (R21-F5), the server also
# answering HTTP on port 80 (http6.py, whose log is $OUT/http.txt); with
# `fuzz`, opts_fuzz.py's random options into ip_opts_fuzz.pcap, and the
# names the listener got into ip_opts_fuzz.delivered here; with `whole`,
# its queries unfragmented under the options (ip_opts_whole.pcap and
# .delivered); with `ping`, its echo requests under them (icmp_opts.pcap,
# and the sequence numbers a raw socket there got, icmp_sink.py, into
# icmp_opts.delivered); with `frag`,
# frag_fuzz.py's random fragments into frag_fuzz.pcap and
# frag_fuzz.delivered; with `tcp`, tcp_fuzz.py's random segments into
# tcp_fuzz.pcap.gz and the Host each connection's server read (tcp_sink.py)
# into tcp_fuzz.delivered; with `urg` and `tree`, tcp_fuzz.py's urgent
# pointers (tcp_urg.pcap.gz) and segments that meet end to start
# (tcp_tree.pcap.gz), and each connection's Host and bytes read into
# tcp_urg.delivered and tcp_tree.delivered; with `many`, tcp_many.py's
# hundreds of out-of-order segments at once (tcp_many.pcap.gz,
# tcp_many.delivered). The
# listener's log goes to $OUT/delivered.txt (default OUT
# /tmp/${NS}-chain_cut, -slow, -opts) (FINDINGS.md). No router
# solicitations, no routes beyond the link (ARP, neighbour discovery and
# MLD are left out of the capture); every sender runs in the client
# namespace and times out; the namespaces go on exit.
set -euo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
NS=${EW_LAB_NS:-ewf6}
NAME=chain_cut SEND=frag6_chain.py
[ "${1:-}" = slow ] && NAME=slow SEND=frag6_slow.py
[ "${1:-}" = opts ] && NAME=opts SEND="opts.py ${NS}c"
PCAP=ipv6_$NAME.pcap
[ "$NAME" = opts ] && PCAP=ip_opts.pcap
[ "${1:-}" = fuzz ] && NAME=fuzz SEND=opts_fuzz.py PCAP=ip_opts_fuzz.pcap
[ "${1:-}" = whole ] && NAME=whole SEND="opts_fuzz.py whole" PCAP=ip_opts_whole.pcap
[ "${1:-}" = ping ] && NAME=ping SEND="opts_fuzz.py ping" PCAP=icmp_opts.pcap
[ "${1:-}" = frag ] && NAME=frag SEND=frag_fuzz.py PCAP=frag_fuzz.pcap
[ "${1:-}" = tcp ] && NAME=tcp SEND="tcp_fuzz.py ${NS}c" PCAP=tcp_fuzz.pcap
[ "${1:-}" = urg ] && NAME=urg SEND="tcp_fuzz.py ${NS}c urg" PCAP=tcp_urg.pcap
[ "${1:-}" = tree ] && NAME=tree SEND="tcp_fuzz.py ${NS}c tree" PCAP=tcp_tree.pcap
[ "${1:-}" = many ] && NAME=many SEND="tcp_many.py ${NS}c" PCAP=tcp_many.pcap
OUT=${OUT:-/tmp/${NS}-$NAME}
P1= P2= P3=
down() {
	kill $P1 $P2 $P3 2>/dev/null || true
	ip netns del "${NS}c" 2>/dev/null || true
	ip netns del "${NS}s" 2>/dev/null || true
}
trap down EXIT
down
mkdir -p "$OUT"
ip netns add "${NS}c"
ip netns add "${NS}s"
ip link add "${NS}c" type veth peer name "${NS}s"
for h in c s; do
	ip link set "${NS}$h" netns "${NS}$h"
	ip netns exec "${NS}$h" sysctl -qw net.ipv6.conf.all.accept_ra=0 \
		net.ipv6.conf.default.router_solicitations=0 \
		net.ipv6.conf.all.router_solicitations=0 \
		"net.ipv6.conf.${NS}$h.router_solicitations=0" "net.ipv6.conf.${NS}$h.accept_ra=0"
	ip -n "${NS}$h" link set lo up
done
ip -n "${NS}c" addr add fd53:6::10/64 dev "${NS}c" nodad
ip -n "${NS}s" addr add fd53:6::53/64 dev "${NS}s" nodad
ip -n "${NS}c" addr add 10.56.6.10/24 dev "${NS}c"
ip -n "${NS}s" addr add 10.56.6.53/24 dev "${NS}s"
# tcp_fuzz.py sends from 10.56.6.11, which no kernel owns (none resets its
# connections): the server reaches it at the client's address
ip -n "${NS}s" neigh replace 10.56.6.11 lladdr \
	"$(ip netns exec "${NS}c" cat "/sys/class/net/${NS}c/address")" dev "${NS}s" nud permanent
ip -n "${NS}c" link set "${NS}c" up
ip -n "${NS}s" link set "${NS}s" up
sleep 1
timeout 130 ip netns exec "${NS}c" tcpdump -i "${NS}c" -s 0 -U -w "$DIR/$PCAP" \
	"not arp and not (icmp6 and ip6[40] >= 130 and ip6[40] <= 137)" 2>/dev/null &
P1=$!
ip netns exec "${NS}s" timeout 120 /usr/bin/python3 "$DIR/listen6.py" 110 "$OUT/delivered.txt" &
P2=$!
if [ "$NAME" = opts ]; then
	ip netns exec "${NS}s" timeout 120 /usr/bin/python3 "$DIR/http6.py" 110 "$OUT/http.txt" &
	P3=$!
fi
if [ "$NAME" = ping ]; then
	ip netns exec "${NS}s" timeout 120 /usr/bin/python3 "$DIR/icmp_sink.py" 110 "$OUT/echo.txt" &
	P3=$!
fi
if [ "$NAME" = tcp ] || [ "$NAME" = urg ] || [ "$NAME" = tree ] || [ "$NAME" = many ]; then
	# tcp_many.py takes seconds to send 1,000 segments before the rest
	IDLE=1
	[ "$NAME" = many ] && IDLE=8
	ip netns exec "${NS}s" timeout 120 /usr/bin/python3 "$DIR/tcp_sink.py" 110 "$OUT/hosts.txt" $IDLE &
	P3=$!
fi
sleep 1
# shellcheck disable=SC2086
ip netns exec "${NS}c" timeout 100 /usr/bin/python3 "$DIR"/$SEND
sleep 1
kill $P1 $P2 $P3 2>/dev/null || true
wait $P1 $P2 $P3 2>/dev/null || true
P1= P2= P3=
if [ "$NAME" = tcp ] || [ "$NAME" = urg ] || [ "$NAME" = tree ] || [ "$NAME" = many ]; then
	if [ "$NAME" = tcp ] || [ "$NAME" = many ]; then
		awk '{print $1, $2}' "$OUT/hosts.txt" | sort -n >"$DIR/${PCAP%.pcap}.delivered"
	else
		sort -n "$OUT/hosts.txt" >"$DIR/tcp_$NAME.delivered"
	fi
	gzip -9f "$DIR/$PCAP" # 250 KB plain
elif [ "$NAME" = ping ]; then
	sort -n "$OUT/echo.txt" >"$DIR/icmp_opts.delivered"
elif [ "$NAME" = fuzz ] || [ "$NAME" = frag ] || [ "$NAME" = whole ]; then
	awk '{print $3}' "$OUT/delivered.txt" | sort >"$DIR/${PCAP%.pcap}.delivered"
fi
