#!/bin/bash
# record_http_quirks.sh - record HTTP requests that real servers take but that have no
# ordinary head, sent by a Python client to nginx and squid, into
# pcaps/http_quirks.pcap, and long heads and an upload captured with segmentation
# offload on, into pcaps/http_gso.pcap
#
# README
#   sudo pcaps/record_http_quirks.sh [OUTDIR]      (default: the folder of this script)
#
# Needs root, iproute2, ethtool, nginx, squid, python3 and dumpcap (wireshark-common);
# tshark, if present, audits the run. It builds a private four-namespace network and
# nothing else:
#   ew-hq-agent  10.97.0.10/24                       on veth ew-hq-a
#   ew-hq-proxy  10.97.0.2/24  (squid on :3128)      on veth ew-hq-p
#   ew-hq-server 10.97.0.80/24 (nginx on :80, its default header buffers: 1 KiB, then
#                up to 4 of 8 KiB)                    on veth ew-hq-s
#   ew-hq-switch a bridge ew-hq-br joining the other ends ew-hq-wa/-wp/-ws
# Every veth is created with both ends inside these namespaces; IPv6 is off in all of
# them; no default route, no NAT, no link to the host's interfaces. squid resolves
# www.quirks.test from its own hosts file (to the server) and asks no DNS server.
# Offloads are off on every veth, so the capture holds wire-size segments.
#
# dumpcap captures "tcp" on the agent's veth (http_quirks.pcap):
#   1. nginx, keep-alive: a GET whose head is 20,000 bytes (five 3,900-byte fields, then
#      Host), its answer, then a second GET on the same connection (nginx serves both)
#   2. the same through squid, in absolute form (squid takes heads up to 64 KiB)
#   3. nginx: a GET whose head is 12,000 bytes with Host as its last field
#   4. nginx: an HTTP/0.9 request, "GET /http09" CRLF: the body alone comes back
#   5. squid: an HTTP/0.9 request in absolute form: squid answers with a status line
#   6. squid: a request line with a bare CR before "Host:" (squid reads it as
#      whitespace and fetches the URI)
# Then TSO/GSO go back on for the agent's veth (its switch-side end keeps them off,
# so the bridge cuts what it forwards into wire-size segments) and dumpcap captures
# "tcp" on it again (http_gso.pcap): the capture holds the sender's segments as the
# kernel handed them to the veth, up to 64 KiB each, as it does on any veth or bridge
# with offloads on (their checksums are the offload's partial sums):
#   7. nginx, keep-alive: a GET whose head is 31,185 bytes (eight 3,900-byte fields,
#      then Host), then a second GET
#   8. nginx, keep-alive: a POST with a 100,000-byte body, then a GET
# Every socket times out after 3 s; each capture stops by itself after 60 s, the safety
# capture on the switch ports after 120 s, and tshark then checks that no packet went
# to an address other than these hosts'. A trap kills every process started here and
# deletes the namespaces on any exit.
#
# Real traffic: ports and timestamps differ on every run. Record once and commit the
# file; the golden test pcap.http_quirks pins its events.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/lib/netns.sh"
OUTDIR=${1:-$HERE}
NS_A=ew-hq-agent
NS_P=ew-hq-proxy
NS_S=ew-hq-server
NS_W=ew-hq-switch
ALL_NS="$NS_A $NS_P $NS_S $NS_W"
IF_A=ew-hq-a
IP_A=10.97.0.10
IP_P=10.97.0.2
IP_S=10.97.0.80
D=www.quirks.test

netns_init record_http_quirks.sh /tmp/ew-record-hq.XXXXXX "$ALL_NS"

[ "$(id -u)" -eq 0 ] || { echo "record_http_quirks.sh: must run as root" >&2; exit 2; }
for t in ip ethtool nginx squid python3 dumpcap timeout; do
	command -v "$t" >/dev/null || { echo "record_http_quirks.sh: $t not found" >&2; exit 2; }
done
chmod 755 "$TMP" # squid drops to its own user
NETNS_PIDFILES=1

netns_clear_leftovers

# --- the network ---------------------------------------------------------------------
netns_create $ALL_NS
netns_ipv4_only $ALL_NS
NETNS_OFFLOAD_OFF=1
netns_switch "$NS_W" ew-hq-br
netns_host "$NS_A" "$IF_A" ew-hq-wa "$IP_A/24"
netns_host "$NS_P" ew-hq-p ew-hq-wp "$IP_P/24"
netns_host "$NS_S" ew-hq-s ew-hq-ws "$IP_S/24"
netns_audit_start 120

# --- the servers -----------------------------------------------------------------------
netns_nginx_conf nginx <<EOF
	server {
		listen $IP_S:80;
		server_name $D;
		client_max_body_size 1m;
		location / { return 200 "ok \$request_uri\n"; }
	}
EOF

printf '%s %s\n' "$IP_S" "$D" >"$TMP/hosts"
touch "$TMP/squid-access.log" "$TMP/squid-cache.log"
chmod 666 "$TMP/squid-access.log" "$TMP/squid-cache.log"
chmod 644 "$TMP/hosts"
cat >"$TMP/squid.conf" <<EOF
http_port $IP_P:3128
acl agents src 10.97.0.0/24
http_access allow agents
http_access deny all
cache deny all
cache_dir null $TMP
pid_filename $TMP/squid.pid
access_log stdio:$TMP/squid-access.log squid
cache_log $TMP/squid-cache.log
hosts_file $TMP/hosts
dns_nameservers 127.0.0.1
shutdown_lifetime 1 seconds
coredump_dir $TMP
EOF
chmod 644 "$TMP/squid.conf"

# The agent's client: each case on its own connection, every socket 3 s at most.
cat >"$TMP/client.py" <<'EOF'
import socket, sys, time
case, host, port, vhost = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].encode()
def conn():
    s = socket.create_connection((host, port), timeout=3)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s
def answer(s):
    """One answer: a head and its Content-Length body, or what comes until close."""
    buf, end = b"", time.monotonic() + 3
    while time.monotonic() < end:
        if b"\r\n\r\n" in buf:
            head, _, body = buf.partition(b"\r\n\r\n")
            for line in head.split(b"\r\n"):
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length" and len(body) >= int(v):
                    return buf
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        if not d:
            break
        buf += d
    return buf
def pad(n, size):  # n fields of size bytes each, CRLF included
    return b"".join(b"X-Pad-%d: %s\r\n" % (i, b"p" * (size - 12)) for i in range(n))
def show(name, r):
    print("%s: %s" % (name, r.split(b"\n", 1)[0].decode("latin-1").strip() or "(nothing)"))
target = (b"http://" + vhost) if port == 3128 else b""
if case == "keepalive":
    head = b"GET " + target + b"/long-head HTTP/1.1\r\n" + pad(5, 3900) + b"Host: " + vhost + b"\r\n\r\n"
    s = conn()
    s.sendall(head)
    show("keepalive 1 (%d-byte head)" % len(head), answer(s))
    s.sendall(b"GET " + target + b"/after-long-head HTTP/1.1\r\nHost: " + vhost + b"\r\n\r\n")
    show("keepalive 2", answer(s))
    s.close()
elif case == "gso-head":
    head = b"GET /gso-long-head HTTP/1.1\r\n" + pad(8, 3900) + b"Host: " + vhost + b"\r\n\r\n"
    s = conn()
    s.sendall(head)
    show("gso-head (%d-byte head)" % len(head), answer(s))
    s.sendall(b"GET /after-gso-head HTTP/1.1\r\nHost: " + vhost + b"\r\n\r\n")
    show("gso-head 2", answer(s))
    s.close()
elif case == "gso-upload":
    s = conn()
    s.sendall(b"POST /upload HTTP/1.1\r\nHost: " + vhost + b"\r\nContent-Length: 100000\r\n\r\n"
              + b"u" * 100000)
    show("gso-upload", answer(s))
    s.sendall(b"GET /after-upload HTTP/1.1\r\nHost: " + vhost + b"\r\n\r\n")
    show("gso-upload 2", answer(s))
    s.close()
elif case == "late-host":
    head = b"GET /late-host HTTP/1.1\r\n" + pad(3, 3900) + b"Host: " + vhost + b"\r\n\r\n"
    s = conn()
    s.sendall(head)
    show("late-host (%d-byte head)" % len(head), answer(s))
    s.close()
elif case == "http09":
    s = conn()
    s.sendall(b"GET " + target + b"/http09\r\n")
    show("http09", answer(s))
    s.close()
elif case == "bare-cr":
    s = conn()
    s.sendall(b"GET " + target + b"/bare-cr HTTP/1.1\rHost: " + vhost + b"\r\n\r\n")
    show("bare-cr", answer(s))
    s.close()
EOF

netns_bg "$NS_S" nginx -e "$TMP/nginx.log" -c "$TMP/nginx.conf" -p "$TMP/ngx" >"$TMP/nginx.err" 2>&1
netns_bg "$NS_P" squid -N -f "$TMP/squid.conf" >"$TMP/squid.err" 2>&1

ready=
for _ in $(seq 1 50); do
	if ip netns exec "$NS_A" python3 - "$IP_S" "$IP_P" "$D" <<'EOF' 2>/dev/null; then ready=1; break; fi
import socket, sys
for host, port, target in ((sys.argv[1], 80, b"/"), (sys.argv[2], 3128, b"http://" + sys.argv[3].encode() + b"/")):
    s = socket.create_connection((host, port), timeout=1)
    s.sendall(b"GET " + target + b" HTTP/1.0\r\nHost: " + sys.argv[3].encode() + b"\r\n\r\n")
    if not s.recv(64).startswith(b"HTTP/1.1 200"):
        sys.exit(1)
    s.close()
EOF
	sleep 0.2
done
[ -n "$ready" ] || { echo "record_http_quirks.sh: nginx or squid did not start" >&2; exit 1; }

# --- the capture -----------------------------------------------------------------------
agent() { netns_log_exec "$NS_A" "$TMP/agent.log" timeout 10 python3 "$TMP/client.py" "$@"; }
netns_capture_start "$NS_A" "$IF_A" http_quirks "tcp"
agent keepalive "$IP_S" 80 "$D"
agent keepalive "$IP_P" 3128 "$D"
agent late-host "$IP_S" 80 "$D"
agent http09 "$IP_S" 80 "$D"
agent http09 "$IP_P" 3128 "$D"
agent bare-cr "$IP_P" 3128 "$D"
netns_capture_stop --strict

ip netns exec "$NS_A" ethtool -K "$IF_A" tx on tso on gso on >/dev/null
netns_capture_start "$NS_A" "$IF_A" http_gso "tcp"
agent gso-head "$IP_S" 80 "$D"
agent gso-upload "$IP_S" 80 "$D"
netns_capture_stop --strict

netns_audit_finish "10\.97\.0\.(2|10|80)"

for f in http_quirks http_gso; do
	cp "$TMP/$f.pcap" "$OUTDIR/$f.pcap"
	chmod 644 "$OUTDIR/$f.pcap"
	echo "record_http_quirks.sh: wrote $OUTDIR/$f.pcap ($(wc -c <"$OUTDIR/$f.pcap") bytes)"
done
largest=$(python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read()
o, big = 24, 0
while o + 16 <= len(d):
    n = struct.unpack_from("<I", d, o + 8)[0]
    big = max(big, n)
    o += 16 + n
print(big)' "$TMP/http_gso.pcap")
echo "record_http_quirks.sh: largest frame in http_gso.pcap: $largest bytes"
echo "record_http_quirks.sh: answers:"
grep -a -E '^[a-z0-9 -]+( \([0-9]+-byte head\))?: ' "$TMP/agent.log" | sed 's/^/  /'
