#!/bin/bash
# lab.sh up|down|run SCRIPT... - the review20 DNS differential lab (FINDINGS.md).
# Namespaces (prefix from EW_LAB_NS, default ewh3) on one bridge in ${NS}b:
#   ${NS}c 10.53.3.10  the client (the agent in a sandbox)
#   ${NS}d 10.53.3.53  dnsmasq (2.90), forwarding everything to the authority
#   ${NS}u 10.53.3.54  unbound (1.17), forward-zone "." to the authority
#   ${NS}a 10.53.3.60  auth.py: answers every question and logs the exact bytes
# Nothing routes out: the bridge links only these namespaces.
set -euo pipefail
NS=${EW_LAB_NS:-ewh3}
NET=10.53.3
DIR=$(cd "$(dirname "$0")" && pwd)
RUN=/tmp/${NS}-lab
hosts="c:10 d:53 u:54 a:60"

down() {
	for f in "$RUN"/*.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
	for h in c d u a b; do
		ip netns del "${NS}$h" 2>/dev/null || true
	done
}

up() {
	down
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
		ip -n "${NS}$h" link set "${NS}$h" up
		ip -n "${NS}$h" link set lo up
		# no offloads: the capture shows segments as sent
		ip netns exec "${NS}$h" ethtool -K "${NS}$h" tx off gso off tso off >/dev/null 2>&1 || true
	done
	ip netns exec "${NS}a" python3 "$DIR/auth.py" "$NET.60" "$RUN/auth.log" \
		>"$RUN/auth.out" 2>&1 &
	echo $! >"$RUN/auth.pid"
	cat >"$RUN/dnsmasq.conf" <<EOC
no-resolv
no-hosts
server=$NET.60
listen-address=$NET.53
bind-interfaces
cache-size=0
log-queries=extra
log-facility=$RUN/dnsmasq.log
pid-file=$RUN/dnsmasq.pid
user=root
EOC
	ip netns exec "${NS}d" dnsmasq -C "$RUN/dnsmasq.conf"
	cat >"$RUN/unbound.conf" <<EOC
server:
	interface: $NET.54
	port: 53
	do-ip6: no
	access-control: $NET.0/24 allow
	username: ""
	chroot: ""
	directory: "$RUN"
	pidfile: "$RUN/unbound.pid"
	use-syslog: no
	logfile: "$RUN/unbound.log"
	verbosity: 1
	log-queries: yes
	module-config: "iterator"
	do-not-query-localhost: no
	qname-minimisation: no
	cache-max-ttl: 0
	cache-max-negative-ttl: 0
	use-caps-for-id: no
forward-zone:
	name: "."
	forward-addr: $NET.60
EOC
	ip netns exec "${NS}u" unbound -c "$RUN/unbound.conf"
	sleep 1
}

case "${1:-}" in
up) up ;;
down) down ;;
*) echo "usage: lab.sh up|down" >&2; exit 2 ;;
esac
