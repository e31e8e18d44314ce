#!/bin/bash
# record_tls_upgrades.sh - record pcaps/tls_upgrades.pcap: real `openssl s_client
# -starttls` upgrades to TLS that are not text command lines.
#
# README
#   sudo pcaps/record_tls_upgrades.sh [OUT.pcap]   (default: pcaps/tls_upgrades.pcap)
#
# Needs root, iproute2, openssl, python3 and dumpcap. Three namespaces on one bridge,
# nothing else (tests/lib/netns.sh; IPv6 off; no route, NAT or link to the host's
# interfaces):
#   ew-upg-client 10.99.0.10/24   runs openssl s_client; the capture is taken here
#   ew-upg-server 10.99.0.80/24   a python responder per protocol that answers the
#                                 upgrade as a real server does, then completes TLS
#                                 with Python's ssl module (a throw-away self-signed
#                                 certificate made here)
#   ew-upg-switch                 the bridge
# The upgrades, one connection each, every client bounded by `timeout 10`:
#   PostgreSQL (5432)  s_client -starttls postgres: SSLRequest, the server's 'S'
#   LDAP (389)         s_client -starttls ldap: the StartTLS extended request, the
#                      server's success response
#   XMPP (5222)        s_client -starttls xmpp: stream header, features with
#                      <starttls/>, <starttls/>, <proceed/>
#   MySQL (3306)       s_client -starttls mysql: the server's greeting (CLIENT_SSL),
#                      the client's SSLRequest
# each with SNI <proto>.upgrade.example. tshark dissects every hello here, and the
# golden test pins the sensor's events (tests/pcap/tls_upgrades.expected).
#
# A safety capture on the switch ports checks at the end that no packet went to an
# address other than the two hosts'. Real traffic: keys, ports and times differ on
# every run; record once and commit the file.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/lib/netns.sh"
OUT=${1:-$HERE/tls_upgrades.pcap}
NS_C=ew-upg-client
NS_S=ew-upg-server
NS_W=ew-upg-switch
ALL_NS="$NS_C $NS_S $NS_W"
IP_C=10.99.0.10
IP_S=10.99.0.80

netns_init record_tls_upgrades.sh /tmp/ew-record-upg.XXXXXX "$ALL_NS"
[ "$(id -u)" -eq 0 ] || { echo "record_tls_upgrades.sh: must run as root" >&2; exit 2; }
for t in ip openssl python3 dumpcap tshark; do
	command -v "$t" >/dev/null || { echo "record_tls_upgrades.sh: $t not found" >&2; exit 2; }
done
NETNS_OFFLOAD_OFF=1 # wire-size segments
netns_clear_leftovers
netns_create $ALL_NS
netns_ipv4_only $ALL_NS
netns_switch "$NS_W" ew-upg-br
netns_host "$NS_C" ew-upg-c ew-upg-pc "$IP_C/24"
netns_host "$NS_S" ew-upg-s ew-upg-ps "$IP_S/24"
netns_audit_start 120

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=upgrade.example" \
	-keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1

cat >"$TMP/servers.py" <<'EOF'
# One listener per protocol on ADDR; each answers one upgrade, completes TLS and
# closes. Exits after 60 s or once every listener has served one connection.
import socket, ssl, struct, sys, threading

addr, cert, key, ready = sys.argv[1:5]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)


def recv_exact(c, n):
    b = b""
    while len(b) < n:
        d = c.recv(n - len(b))
        if not d:
            raise EOFError
        b += d
    return b


def recv_until(c, token):
    b = b""
    while token not in b:
        d = c.recv(4096)
        if not d:
            raise EOFError
        b += d
    return b


def postgres(c):
    recv_exact(c, 8)
    c.sendall(b"S")


def ldap(c):
    head = recv_exact(c, 2)
    body = recv_exact(c, head[1])            # short-form length: the request is small
    msgid = body[2:2 + body[1]]              # 02 len id
    op = b"\x0a\x01\x00\x04\x00\x04\x00"     # success, no DN, no message
    ext = b"\x78" + bytes([len(op)]) + op
    msg = b"\x02" + bytes([len(msgid)]) + msgid + ext
    c.sendall(b"\x30" + bytes([len(msg)]) + msg)


def xmpp(c):
    recv_until(c, b">")
    c.sendall(b"<?xml version='1.0'?><stream:stream from='upgrade.example' id='u1' "
              b"xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' "
              b"version='1.0'><stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'>"
              b"<required/></starttls></stream:features>")
    recv_until(c, b"/>")
    c.sendall(b"<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")


def mysql(c):
    body = (b"\x0a" + b"8.0.36\x00" + struct.pack("<I", 7) + b"abcdefgh\x00" +
            struct.pack("<HBHH", 0xffff, 0xff, 0x0002, 0xdfff) + b"\x15" + b"\x00" * 10 +
            b"ijklmnopqrst\x00" + b"caching_sha2_password\x00")
    c.sendall(struct.pack("<I", len(body))[:3] + b"\x00" + body)
    recv_exact(c, 36)


def serve(port, upgrade):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(1)
    s.settimeout(60)
    try:
        c, _ = s.accept()
        c.settimeout(10)
        upgrade(c)
        t = ctx.wrap_socket(c, server_side=True)
        t.close()
    except (OSError, EOFError) as e:
        print("port %d: %s" % (port, e), flush=True)


threads = [threading.Thread(target=serve, args=a) for a in
           ((5432, postgres), (389, ldap), (5222, xmpp), (3306, mysql))]
for t in threads:
    t.start()
open(ready, "w").close()
for t in threads:
    t.join()
EOF
netns_bg "$NS_S" python3 "$TMP/servers.py" "$IP_S" "$TMP/cert.pem" "$TMP/key.pem" "$TMP/ready" \
	>"$TMP/servers.log" 2>&1
for _ in $(seq 1 50); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
[ -e "$TMP/ready" ] || { echo "record_tls_upgrades.sh: the responders did not start" >&2; exit 1; }

netns_capture_start "$NS_C" ew-upg-c tls_upgrades "host $IP_S"
for pp in postgres:5432 ldap:389 xmpp:5222 mysql:3306; do
	proto=${pp%%:*} port=${pp##*:}
	netns_log_exec "$NS_C" "$TMP/client.log" timeout 10 openssl s_client -brief \
		-connect "$IP_S:$port" -starttls "$proto" -servername "$proto.upgrade.example" \
		-xmpphost upgrade.example </dev/null
done
netns_capture_stop

netns_audit_finish "10\.99\.0\.(10|80)"
cp "$TMP/tls_upgrades.pcap" "$OUT"
chmod 644 "$OUT"
echo "record_tls_upgrades.sh: wrote $OUT ($(wc -c <"$OUT") bytes," \
	"$(tshark -r "$OUT" 2>/dev/null | wc -l) packets)"
grep -a -E "^\+|CONNECTION ESTABLISHED|Protocol version|error|port [0-9]+:" \
	"$TMP/client.log" "$TMP/servers.log" || true
