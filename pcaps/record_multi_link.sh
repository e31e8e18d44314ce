#!/bin/bash
# record_multi_link.sh - record pcaps/multi_link.pcapng: one dumpcap capture of three
# interfaces of three link types, the file libpcap 1.10 cannot read past its second
# interface (docs/cli.md, sensor/pcapng.c).
#
# README
#   sudo pcaps/record_multi_link.sh [OUTDIR]     (default: pcaps/ beside this script)
#
# Needs root, /dev/net/tun, iproute2, python3, dnsmasq, dig, dumpcap and tshark. Three
# namespaces on one bridge, nothing else (tests/lib/netns.sh; IPv6 off):
#   ew-ml-agent   10.99.0.10/24 on its veth; a stub resolver on 127.0.0.53 (dnsmasq,
#                 forwarding to 10.99.0.53, as systemd-resolved's stub does); and
#                 192.168.78.10/24 on a tun device ml0 whose other end is a python
#                 relay in the same namespace: it takes each DNS query the kernel routes
#                 into ml0 (to 192.168.78.53), asks 10.99.0.53 over the veth, and
#                 writes the answer back into ml0 as if 192.168.78.53 had sent it (a
#                 user-space tunnel endpoint, as VPNs are)
#   ew-ml-dns     10.99.0.53/24: dnsmasq with local records only
#   ew-ml-switch  the bridge
# No route, NAT or link to the host's interfaces.
#
# dumpcap runs in the agent on its veth (Ethernet), on ml0 (raw IP: a tun device has
# no link-layer header) and on "any" with a filter that keeps the stub's loopback
# traffic (Linux cooked capture), writing pcapng with one interface description per
# link type, each interface's packets in blocks of their own (not in time order). The
# agent asks with dig: the stub (UDP, then TCP; the stub asks upstream over the veth)
# and 192.168.78.53 through the tunnel (UDP; relayed over the veth). No packet is on
# two interfaces.
#
# A safety capture on the switch ports checks at the end that no packet went to an
# address other than these hosts'. The trap stops everything and deletes the
# namespaces on any exit. Real traffic: ids, ports and times differ on every run;
# record once and commit the file.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/lib/netns.sh"
OUTDIR=${1:-$HERE}
NS_A=ew-ml-agent
NS_D=ew-ml-dns
NS_W=ew-ml-switch
ALL_NS="$NS_A $NS_D $NS_W"
IP_A=10.99.0.10
IP_D=10.99.0.53
TUN_A=192.168.78.10
TUN_D=192.168.78.53
Z=multi.link.test

netns_init record_multi_link.sh /tmp/ew-record-ml.XXXXXX "$ALL_NS"
NETNS_PIDFILES=1
[ "$(id -u)" -eq 0 ] || { echo "record_multi_link.sh: must run as root" >&2; exit 2; }
for t in ip dnsmasq dig dumpcap tshark; do
	command -v "$t" >/dev/null || { echo "record_multi_link.sh: $t not found" >&2; exit 2; }
done
netns_clear_leftovers
netns_create $ALL_NS
netns_ipv4_only $ALL_NS
netns_switch "$NS_W" ew-ml-br
netns_host "$NS_A" ew-ml-a ew-ml-pa "$IP_A/24"
netns_host "$NS_D" ew-ml-d ew-ml-pd "$IP_D/24"
netns_audit_start 120

ip netns exec "$NS_D" dnsmasq \
	--conf-file=/dev/null --no-resolv --no-hosts --no-poll \
	--user=root --group=root \
	--listen-address="$IP_D" --bind-interfaces --port=53 \
	--pid-file="$TMP/dnsmasq.pid" \
	--log-queries --log-facility="$TMP/dnsmasq.log" \
	--local=/$Z/ \
	--host-record=veth.$Z,192.0.2.31 \
	--host-record=tcp.$Z,192.0.2.32 \
	--host-record=tunnel.$Z,192.0.2.33 \
	--txt-record=txt.$Z,"through the tunnel"
ip -n "$NS_A" link set lo up
ip netns exec "$NS_A" dnsmasq \
	--conf-file=/dev/null --no-resolv --no-hosts --no-poll \
	--user=root --group=root \
	--listen-address=127.0.0.53 --bind-interfaces --port=53 \
	--pid-file="$TMP/stub.pid" --cache-size=0 \
	--server="$IP_D"
for _ in $(seq 1 50); do [ -s "$TMP/dnsmasq.pid" ] && [ -s "$TMP/stub.pid" ] && break; sleep 0.1; done
[ -s "$TMP/dnsmasq.pid" ] && [ -s "$TMP/stub.pid" ] ||
	{ echo "record_multi_link.sh: dnsmasq did not start" >&2; exit 1; }

# the tun device and its relay (bounded: 20 packets or 30 s)
cat >"$TMP/relay.py" <<'EOF'
import fcntl, os, select, socket, struct, sys, time
TUNSETIFF, IFF_TUN, IFF_NO_PI = 0x400454CA, 0x0001, 0x1000
fd = os.open("/dev/net/tun", os.O_RDWR)
fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", b"ml0", IFF_TUN | IFF_NO_PI))
resolver, ready = sys.argv[1], sys.argv[2]
open(ready, "w").close()

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

end, n = time.time() + 30, 0
while time.time() < end and n < 20:
    if not select.select([fd], [], [], 1)[0]:
        continue
    p = os.read(fd, 65535)
    n += 1
    ihl = (p[0] & 15) * 4
    if p[0] >> 4 != 4 or p[9] != 17 or len(p) < ihl + 8:
        continue
    sport, dport = struct.unpack("!HH", p[ihl:ihl + 4])
    if dport != 53:
        continue
    q = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    q.settimeout(2)
    q.sendto(p[ihl + 8:], (resolver, 53))
    try:
        a = q.recv(65535)
    except socket.timeout:
        continue
    src, dst = p[16:20], p[12:16]
    udp = struct.pack("!HHHH", 53, sport, 8 + len(a), 0) + a
    c = csum(src + dst + struct.pack("!BBH", 0, 17, len(udp)) + udp) or 0xffff
    udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), n, 0, 64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    os.write(fd, ip + udp)
EOF
netns_bg "$NS_A" python3 "$TMP/relay.py" "$IP_D" "$TMP/relay.ready" >"$TMP/relay.log" 2>&1
for _ in $(seq 1 50); do [ -e "$TMP/relay.ready" ] && break; sleep 0.1; done
[ -e "$TMP/relay.ready" ] || { echo "record_multi_link.sh: the relay did not start" >&2; exit 1; }
ip -n "$NS_A" addr add "$TUN_A/24" dev ml0
ip -n "$NS_A" link set ml0 up

: >"$TMP/dumpcap.err"
netns_bg "$NS_A" dumpcap -q -i ew-ml-a -f "port 53" -i ml0 -i any -f "host 127.0.0.53" -s 65535 \
	-a duration:60 -w "$TMP/multi_link.pcapng" 2>"$TMP/dumpcap.err"
DUMPCAP_PID=$NETNS_PID
netns_wait_capturing "$DUMPCAP_PID" "$TMP/dumpcap.err" ||
	{ echo "record_multi_link.sh: dumpcap did not start" >&2; exit 1; }
sleep 0.5

D="dig +time=2 +tries=1"
netns_log_exec "$NS_A" "$TMP/agent.log" $D @127.0.0.53 veth.$Z A
netns_log_exec "$NS_A" "$TMP/agent.log" $D +tcp @127.0.0.53 tcp.$Z A
netns_log_exec "$NS_A" "$TMP/agent.log" $D @"$TUN_D" tunnel.$Z A
netns_log_exec "$NS_A" "$TMP/agent.log" $D @"$TUN_D" txt.$Z TXT
netns_capture_stop

netns_audit_finish "10\.99\.0\.(10|53)" # (the tunnel and the stub never reach the switch)
cp "$TMP/multi_link.pcapng" "$OUTDIR/multi_link.pcapng"
chmod 644 "$OUTDIR/multi_link.pcapng"
echo "record_multi_link.sh: wrote $OUTDIR/multi_link.pcapng ($(wc -c <"$OUTDIR/multi_link.pcapng") bytes," \
	"$(tshark -r "$OUTDIR/multi_link.pcapng" 2>/dev/null | wc -l) packets)"
tshark -r "$OUTDIR/multi_link.pcapng" -T fields -e frame.interface_name -e frame.encap_type 2>/dev/null |
	sort | uniq -c || true
