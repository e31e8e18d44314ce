#!/bin/bash
# record_dns.sh - record real dig <-> dnsmasq traffic into pcaps/dig_dnsmasq.pcap
#
# README
#   sudo pcaps/record_dns.sh [OUT.pcap]        (default: pcaps/dig_dnsmasq.pcap beside this script)
#
# Needs root, iproute2, dnsmasq, dig (bind9-dnsutils) and dumpcap (wireshark-common).
# It builds a private two-namespace network and nothing else:
#   ew-rec-client (10.99.0.10/24 on veth ew-rec-c)  <->  ew-rec-dns (10.99.0.53/24 on veth ew-rec-d)
# No routes, no NAT, no link to the host's interfaces; IPv6 is disabled in both
# namespaces so router/neighbour solicitations do not clutter the capture.
# dnsmasq runs in ew-rec-dns with local records only (--no-resolv --no-hosts, no
# config file), bound to 10.99.0.53, logging to a temporary folder. dumpcap captures
# "port 53" on the client's veth (pcap format), then dig asks a handful of questions
# over UDP and over TCP (+tcp), each with +tries=1 +time=2.
# A trap kills dnsmasq and dumpcap (by pid) and deletes both namespaces on any exit.
#
# The capture is real traffic, so ids, ports and timestamps differ on every run:
# record once and commit the file; the golden test then pins its events.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE/dig_dnsmasq.pcap}
NS_C=ew-rec-client
NS_D=ew-rec-dns
IF_C=ew-rec-c
IF_D=ew-rec-d
IP_C=10.99.0.10
IP_D=10.99.0.53
Z=rec.example.test

TMP=$(mktemp -d /tmp/ew-record.XXXXXX)
DNSMASQ_PID=
DUMPCAP_PID=

cleanup() {
	rc=$?
	set +e
	if [ -n "$DUMPCAP_PID" ] && kill -0 "$DUMPCAP_PID" 2>/dev/null; then
		kill -INT "$DUMPCAP_PID" 2>/dev/null
		for _ in $(seq 1 20); do kill -0 "$DUMPCAP_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$DUMPCAP_PID" 2>/dev/null
	fi
	if [ -s "$TMP/dnsmasq.pid" ]; then
		p=$(cat "$TMP/dnsmasq.pid")
		kill -TERM "$p" 2>/dev/null
		for _ in $(seq 1 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	elif [ -n "$DNSMASQ_PID" ]; then
		kill -TERM "$DNSMASQ_PID" 2>/dev/null
	fi
	ip netns del "$NS_C" 2>/dev/null
	ip netns del "$NS_D" 2>/dev/null
	if [ "$rc" -ne 0 ]; then
		echo "record_dns.sh: failed (exit $rc); logs:" >&2
		tail -n 5 "$TMP"/*.log "$TMP"/*.err >&2 2>/dev/null
	fi
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || { echo "record_dns.sh: must run as root" >&2; exit 2; }
for t in ip dnsmasq dig dumpcap; do
	command -v "$t" >/dev/null || { echo "record_dns.sh: $t not found" >&2; exit 2; }
done

# leftovers of an interrupted run
ip netns del "$NS_C" 2>/dev/null || true
ip netns del "$NS_D" 2>/dev/null || true

ip netns add "$NS_C"
ip netns add "$NS_D"
for ns in "$NS_C" "$NS_D"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	ip -n "$ns" link set lo up
done
ip link add "$IF_C" netns "$NS_C" type veth peer name "$IF_D" netns "$NS_D"
ip -n "$NS_C" addr add "$IP_C/24" dev "$IF_C"
ip -n "$NS_D" addr add "$IP_D/24" dev "$IF_D"
ip -n "$NS_C" link set "$IF_C" up
ip -n "$NS_D" link set "$IF_D" up

# dnsmasq: local data only
ip netns exec "$NS_D" dnsmasq \
	--conf-file=/dev/null --no-resolv --no-hosts --no-poll \
	--user=root --group=root \
	--listen-address="$IP_D" --bind-interfaces --port=53 \
	--pid-file="$TMP/dnsmasq.pid" \
	--log-queries --log-facility="$TMP/dnsmasq.log" \
	--local=/$Z/ \
	--address=/a.$Z/192.0.2.10 \
	--address=/a.$Z/2001:db8::10 \
	--host-record=host.$Z,192.0.2.20,2001:db8::20 \
	--cname=www.$Z,host.$Z \
	--txt-record=txt.$Z,"v=spf1 -all","second string with spaces" \
	--mx-host=$Z,mail.$Z,10 \
	--host-record=mail.$Z,192.0.2.25 \
	--srv-host=_sip._udp.$Z,sip.$Z,5060,10,60 \
	--ptr-record=20.2.0.192.in-addr.arpa,host.$Z \
	2>"$TMP/dnsmasq.err"

ready=
for _ in $(seq 1 30); do
	if ip netns exec "$NS_C" dig @"$IP_D" +tries=1 +time=1 +short a.$Z A 2>/dev/null | grep -q 192.0.2.10; then
		ready=1; break
	fi
	sleep 0.2
done
[ -n "$ready" ] || { echo "record_dns.sh: dnsmasq did not answer" >&2; exit 1; }

# capture on the client's veth; autostop after 60 s whatever happens
ip netns exec "$NS_C" dumpcap -q -i "$IF_C" -P -s 65535 -f "port 53" -a duration:60 \
	-w "$TMP/cap.pcap" 2>"$TMP/dumpcap.err" &
DUMPCAP_PID=$!
started=
for _ in $(seq 1 50); do
	if grep -q "Capturing on" "$TMP/dumpcap.err" 2>/dev/null; then started=1; break; fi
	kill -0 "$DUMPCAP_PID" 2>/dev/null || break
	sleep 0.1
done
[ -n "$started" ] || { echo "record_dns.sh: dumpcap did not start" >&2; exit 1; }
sleep 0.3

ask() { # ask [+tcp] NAME TYPE
	ip netns exec "$NS_C" dig @"$IP_D" +tries=1 +time=2 "$@" >>"$TMP/dig.log" 2>&1 || true
	sleep 0.05
}
for mode in +notcp +tcp; do
	ask $mode a.$Z A
	ask $mode a.$Z AAAA
	ask $mode www.$Z A
	ask $mode txt.$Z TXT
	ask $mode $Z MX
	ask $mode _sip._udp.$Z SRV
	ask $mode -x 192.0.2.20
	ask $mode nope.$Z A
done
sleep 0.5

kill -INT "$DUMPCAP_PID"
for _ in $(seq 1 50); do kill -0 "$DUMPCAP_PID" 2>/dev/null || break; sleep 0.1; done
wait "$DUMPCAP_PID" 2>/dev/null || true
DUMPCAP_PID=

n=$(grep -c "status: " "$TMP/dig.log" || true)
cp "$TMP/cap.pcap" "$OUT"
chmod 644 "$OUT"
echo "record_dns.sh: $n dig answers; wrote $OUT ($(wc -c <"$OUT") bytes)"
grep -o "status: [A-Z]*" "$TMP/dig.log" | sort | uniq -c
