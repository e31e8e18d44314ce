#!/usr/bin/python3
"""gen_http_random.py - a capture of random, well-formed HTTP/1.x client traffic, for
the tshark differential test (tests/tshark/tshark_diff.py).

README
------
    /usr/bin/python3 tests/tshark/gen_http_random.py SEED COUNT OUT.pcap

Writes TCP connections carrying COUNT HTTP/1.x requests in all (and the servers'
responses) drawn from a random.Random(SEED): the same SEED and COUNT give the same
bytes.  Each connection has a handshake, its requests and responses, and a FIN
exchange; connections follow one another (never interleaved), so the order of the
requests is the same whether a tool reports a request at its head or at the end of
its body.  scapy builds the IP/TCP headers (pcaps/gen_fixtures.py's TcpConn, widened
here to IPv6 and to sequence numbers that wrap), the HTTP bytes are written by hand.

What varies, all within what RFC 9110/9112 allow:
  - servers on TCP 80, 8080 and 3128, ports tshark 4.0 dissects as HTTP by default
    (`tshark -G decodes`); clients on 49152-65535, above every such port, so tshark
    tries the server port first; IPv4 and IPv6; sequence numbers that wrap;
  - methods GET POST PUT HEAD DELETE OPTIONS PATCH CONNECT; HTTP/1.1 and HTTP/1.0;
  - request targets: origin-form (paths, queries, percent-escapes, sub-delims, a few
    over 200 bytes), absolute-form "http://host[:port]/..." to the proxy ports,
    authority-form "host:port" for CONNECT, asterisk-form "*" for OPTIONS;
  - Host: a name, a name with a port, an IPv4 literal, an IPv6 literal
    "[fd00:97::1]" or "[fd00:97::1]:8080"; absent in some HTTP/1.0 requests; empty
    (a target without an authority) in a few; its name spelled Host, host, HOST or
    mixed; 0-3 spaces or tabs after the colon, some after the value; other fields
    in mixed case too; a few heads with bare-LF line ends or a stray CRLF before;
  - bodies with Content-Length or chunked (chunk extensions, upper/lower hex,
    trailers), some behind "Expect: 100-continue" and a 100 response;
  - sending: one request per segment, requests pipelined in one segment (their
    responses after), a request (or a pipelined run) cut into 2-4 segments at random
    byte positions, bodies over 1400 bytes in MSS-sized segments; a segment that
    arrives before those it follows, or twice (tshark needs
    tcp.reassemble_out_of_order, as tshark_diff.py passes it);
  - responses with Content-Length, chunked, no body (HEAD, 204, 304), or delimited
    by the close (last one only); after CONNECT a 200 (then a TLS ClientHello, or a
    plain HTTP request, inside the tunnel) or a 407 (the connection goes on);
  - a connection carries at most 16 KiB each way, further requests going on a new
    connection (from when egresswatch read only the first 16 KiB of a direction;
    it now follows an HTTP connection to its end, which the committed
    pcaps/http_keepalive.pcap, far past 16 KiB, checks).

What the capture avoids, because tshark 4.0 gets it wrong (egresswatch reports
every such request; tests/tshark/tshark_diff.py would only find tshark's bugs):
  - HTTP inside a CONNECT tunnel: tshark dissects the tunnel only when the
    target's port is not one of its HTTP ports (to ":80" it shows Data, so as not
    to recurse into itself), and then only a request that fits one segment, and
    not the next one.  A tunnel here carries one GET or HEAD in one segment, to
    port 8000 or 8888.
  - a CONNECT after a 2xx response on the same connection: tshark then takes a
    407 to the CONNECT for an open tunnel, and hands the rest of the client
    stream to the target port's dissector (GET -> 200, CONNECT a:80 -> 407, GET:
    the last GET is Data; to ":22" SSH takes it; to ":443" TLS refuses it and
    it is HTTP again).  A CONNECT comes before any 2xx on its connection.
  - a cut inside a chunked body's last-chunk line and trailer section (between
    "0\\r\\n...\\r" and "\\n"): [Malformed Packet], the request is lost.
  - a message after a chunked body in the segment that completes that body when
    the body took several segments: tshark misses it about one time in six when
    the message is chunked too (it appears to read the second body's framing at
    a wrong offset, so it depends on the bytes), about 1 in 500 for a GET.  A
    cut at the chunked body's end is added then.
  - a segment that arrives early in bytes holding a chunked body: now and then
    (2 in 66 for a chunked request followed by one with a trailer that ends the
    early segment) tshark reports the early segment's last request once for
    every later segment, or never.  Such bytes are sent in order.
  - a stray CRLF before a request line (RFC 9112 2.2) cut between its CR and LF,
    or followed by a single byte of the request in its segment: tshark shows the
    request as Continuation.  (A bare LF there too; none is sent.)

Every address is a private one (10.97.0.0/16, fd00:97::/64).
"""
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "pcaps"))
import gen_fixtures as fx  # noqa: E402
from gen_fixtures import IP, IPv6, TCP, Raw, ether  # noqa: E402

MSS = 1400
# a connection never carries more, each direction (the same captures as before
# egresswatch followed HTTP past its first 16 KiB)
STREAM_CAP = 16384
TUNNEL_HTTP_PORTS = (8000, 8888)
PORTS = (80, 8080, 3128)
PROXY_PORTS = (8080, 3128)
METHODS = ("GET", "POST", "PUT", "HEAD", "DELETE", "OPTIONS", "PATCH", "CONNECT")
METHOD_WEIGHTS = (30, 12, 6, 6, 5, 4, 4, 5)
NAMES = ("example.test", "www.example.test", "api.example.com", "Mixed.Example.NET",
         "cdn-01.example.org", "localhost", "a.b.c.example.test", "xn--bcher-kva.example",
         "metadata.internal.test", "h")
PCHAR = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"
         "!$&'()*+,;=:@")
WORDS = ("index.html", "api", "v1", "v2", "users", "login", "static", "img", "a.png",
         "search", "latest", "meta-data", "robots.txt", "favicon.ico", "cgi-bin", "x")
TEXT = "abcdefghijklmnopqrstuvwxyz0123456789 ,.;:-_=+/{}[]\"'\n"
PSTATUS = ((200, "OK"), (201, "Created"), (204, "No Content"), (301, "Moved Permanently"),
           (302, "Found"), (304, "Not Modified"), (400, "Bad Request"), (403, "Forbidden"),
           (404, "Not Found"), (500, "Internal Server Error"), (503, "Service Unavailable"))


class Conn(fx.TcpConn):
    """gen_fixtures' TcpConn over IPv4 or IPv6, sequence numbers modulo 2^32."""

    def _pkt(self, from_client, flags, seq, ack, data=b"", step=1000):
        self.ipid += 1
        src, dst = (self.cli, self.srv) if from_client else (self.srv, self.cli)
        sp, dp = (self.sport, self.dport) if from_client else (self.dport, self.sport)
        mac = (self.cmac, self.smac) if from_client else (self.smac, self.cmac)
        if ":" in src:
            ip = IPv6(src=src, dst=dst, hlim=64)
        else:
            ip = IP(src=src, dst=dst, id=self.ipid & 0xFFFF, ttl=64, flags="DF")
        p = ip / TCP(sport=sp, dport=dp, seq=seq & 0xFFFFFFFF, ack=ack & 0xFFFFFFFF,
                     flags=flags, window=64240 if from_client else 65160)
        if data:
            p = p / Raw(data)
        return (self.clock(step), ether(mac[0], mac[1], p))


def case(rng, name):
    """A field name as sent: mostly canonical, else lower, upper or mixed case."""
    r = rng.random()
    if r < 0.6:
        return name
    if r < 0.75:
        return name.lower()
    if r < 0.85:
        return name.upper()
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in name)


def ows(rng):
    """The whitespace after a field's colon."""
    return rng.choice(["", " ", " ", " ", " ", "  ", "\t", " \t", "   "])


def host_value(rng, port, v6):
    """A Host value (also an absolute URI's authority): a name or an address,
    with a port in some."""
    r = rng.random()
    if r < 0.55:
        h = rng.choice(NAMES)
    elif r < 0.75:
        h = "10.97.%d.%d" % (rng.randrange(256), rng.randint(1, 254))
    else:
        h = "[fd00:97::%x]" % rng.randint(1, 0xffff)
    if rng.random() < 0.4:
        h += ":%d" % rng.choice([port, 80, 8080, 3128, 443, rng.randint(1, 65535)])
    return h


def path(rng):
    segs = []
    for _ in range(rng.choice([0, 1, 1, 2, 3, 4])):
        r = rng.random()
        if r < 0.6:
            segs.append(rng.choice(WORDS))
        elif r < 0.85:
            segs.append("".join(rng.choice(PCHAR) for _ in range(rng.randint(1, 12))))
        else:
            segs.append("%%%02X%s" % (rng.randrange(256), rng.choice(WORDS)))
    p = "/" + "/".join(segs)
    if segs and rng.random() < 0.2:
        p += "/"
    if rng.random() < 0.35:
        q = "&".join("%s=%s" % ("".join(rng.choice(PCHAR[:62]) for _ in range(rng.randint(1, 6))),
                                "".join(rng.choice(PCHAR + "/?") for _ in range(rng.randint(0, 20))))
                     for _ in range(rng.randint(1, 4)))
        p += "?" + q
    if rng.random() < 0.03:
        p += "/" + "".join(rng.choice(PCHAR) for _ in range(rng.randint(200, 1500)))
    return p


def text(rng, n):
    return "".join(rng.choice(TEXT) for _ in range(n)).encode()


def chunked(rng, body):
    out, i = [], 0
    while i < len(body):
        n = min(len(body) - i, rng.choice([1, 7, 16, 100, 500, 1000, 3000]))
        size = ("%x" if rng.random() < 0.5 else "%X") % n
        if rng.random() < 0.1:
            size += ";ext=%d" % rng.randrange(100)
        out.append(size.encode() + b"\r\n" + body[i:i + n] + b"\r\n")
        i += n
    out.append(b"0\r\n")
    if rng.random() < 0.2:
        out.append(case(rng, "X-Checksum").encode() + b": " + text(rng, 8).replace(b"\n", b"") + b"\r\n")
    out.append(b"\r\n")
    return b"".join(out)


def request(rng, port, v6, method=None, expect_ok=True, connect_port=None):
    """(head bytes, body bytes, info dict); expect_ok: the body may wait for a 100;
    connect_port: CONNECT's target port."""
    method = method or rng.choices(METHODS, METHOD_WEIGHTS)[0]
    version = "HTTP/1.1" if rng.random() < 0.8 else "HTTP/1.0"
    host = host_value(rng, port, v6)
    connect_target = None
    if method == "CONNECT":
        h = rng.choice(NAMES[:5] + ("10.97.0.9", "[fd00:97::9]"))
        connect_target = "%s:%d" % (h, connect_port or rng.choice([443, 443, 443, 80, 8443, 22]))
        target = connect_target
        host = target if rng.random() < 0.8 else host
    elif method == "OPTIONS" and rng.random() < 0.3:
        target = "*"
    elif port in PROXY_PORTS and rng.random() < 0.6:
        auth = host if rng.random() < 0.8 else host_value(rng, port, v6)
        target = "http://" + auth + path(rng)
    else:
        target = path(rng)
    lines = ["%s %s %s" % (method, target, version)]
    fields = []
    if version == "HTTP/1.1" or rng.random() < 0.5:
        if rng.random() < 0.01:
            host = ""                   # empty: a target without an authority (RFC 9112 3.2)
        fields.append(("Host", host))
    else:
        host = None
    if rng.random() < 0.8:
        fields.append(("User-Agent", rng.choice(["curl/7.88.1", "python-requests/2.31.0",
                                                 "Mozilla/5.0 (X11; Linux x86_64)", "Go-http-client/1.1",
                                                 "agent/0.1 (+https://example.test/bot)"])))
    if rng.random() < 0.6:
        fields.append(("Accept", rng.choice(["*/*", "text/html,application/xhtml+xml;q=0.9",
                                             "application/json"])))
    if rng.random() < 0.3:
        fields.append(("Accept-Encoding", "gzip, deflate"))
    if rng.random() < 0.3:
        fields.append(("Connection", rng.choice(["keep-alive", "Keep-Alive", "close"]) if method != "CONNECT"
                       else "keep-alive"))
    if method == "CONNECT" and rng.random() < 0.3:
        fields.append(("Proxy-Connection", "keep-alive"))
    if rng.random() < 0.2:
        fields.append(("Cookie", "sid=%08x; theme=dark" % rng.getrandbits(32)))
    if rng.random() < 0.15:
        fields.append(("X-Request-Id", "%016x" % rng.getrandbits(64)))
    body, expect = b"", False
    if method in ("POST", "PUT", "PATCH") or (method in ("DELETE", "OPTIONS") and rng.random() < 0.1):
        n = rng.choice([0, 1, 10, 50, 200, 1000, 3000, 9000])
        raw = text(rng, n)
        fields.append(("Content-Type", rng.choice(["application/x-www-form-urlencoded", "text/plain",
                                                   "application/octet-stream"])))
        if version == "HTTP/1.1" and rng.random() < 0.3:
            fields.append(("Transfer-Encoding", "chunked"))
            body = chunked(rng, raw)
        else:
            fields.append(("Content-Length", str(n)))
            body = raw
        expect = expect_ok and version == "HTTP/1.1" and n > 0 and rng.random() < 0.15
        if expect:
            fields.append(("Expect", "100-continue"))
    rng.shuffle(fields)
    for k, v in fields:
        tail = rng.choice([" ", "\t", "  "]) if rng.random() < 0.03 else ""   # OWS after the value
        lines.append("%s:%s%s%s" % (case(rng, k), ows(rng), v, tail))
    eol = "\n" if rng.random() < 0.03 else "\r\n"
    head = (eol.join(lines) + eol + eol).encode()
    return head, body, {"method": method, "host": host, "uri": target, "expect": expect,
                        "version": version, "connect": connect_target}


def response(rng, method, last, status=None):
    """The bytes of a response to method; last: the connection ends after it."""
    if status is None:
        status = rng.choice(PSTATUS)
    code, reason = status
    fields = [("Server", rng.choice(["nginx/1.22.1", "Apache", "squid/5.7", "ew-test"]))]
    if rng.random() < 0.5:
        fields.append(("Date", "Sun, 29 Nov 2026 10:00:00 GMT"))
    n = rng.choice([0, 5, 50, 300, 2000, 6000])
    raw = text(rng, n).replace(b"\n", b" ")
    nobody = method == "HEAD" or code in (204, 304) or (method == "CONNECT" and 200 <= code < 300)
    mode = rng.random()
    body = b""
    if method == "CONNECT" and 200 <= code < 300:
        pass
    elif code in (204, 304):
        pass
    elif mode < 0.65:
        fields.append(("Content-Length", str(n)))
        body = b"" if nobody else raw
    elif mode < 0.9 or not last:
        fields.append(("Transfer-Encoding", "chunked"))
        body = b"" if nobody else chunked(rng, raw)
    else:
        fields.append(("Connection", "close"))
        body = b"" if nobody else raw
    if rng.random() < 0.5:
        fields.append(("Content-Type", "text/plain"))
    head = "HTTP/1.1 %d %s\r\n" % (code, reason) + "".join(
        "%s:%s%s\r\n" % (case(rng, k), ows(rng), v) for k, v in fields) + "\r\n"
    return head.encode() + body


def chunked_ends(data):
    """[(start, end)] of the last-chunk line and trailer section of every chunked
    body in data ("0" CRLF *(field CRLF) CRLF).  Generated bodies and field values
    hold no CR, so LF "0" CRLF is a last chunk (after chunk data's CRLF, or after
    a head's last line end, CRLF or a bare LF, for an empty body)."""
    out, p = [], data.find(b"\n0\r\n")
    while p >= 0:
        t = p + 4
        end = t + 2 if data[t:t + 2] == b"\r\n" else data.find(b"\r\n\r\n", t) + 4
        if end < t:
            break
        out.append((p + 1, end))
        p = data.find(b"\n0\r\n", end - 1)
    return out


def segments(rng, data, split):
    """data as the payloads of successive segments: at most MSS bytes each, and
    with split, cut at 1-3 more random positions; never where tshark 4.0 fails
    (see the README): no cut inside a last-chunk line and trailer section, a cut
    at a chunked body's end when one came before it, none 1 or 3 bytes into data
    that starts with a CRLF."""
    cuts = set(range(MSS, len(data), MSS))
    if split and len(data) > 1:
        cuts |= set(rng.randrange(1, len(data)) for _ in range(rng.randint(1, 3)))
    for a, b in chunked_ends(data):
        cuts = set(c for c in cuts if not a < c < b)
        if b < len(data) and any(c < b for c in cuts):
            cuts.add(b)
    if data.startswith(b"\r\n"):    # a stray CRLF before a request (see the README)
        cuts -= {1, 3}
    pos = [0] + sorted(cuts) + [len(data)]
    return [data[a:b] for a, b in zip(pos, pos[1:])]


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.clk = fx.Clock()
        self.recs = []
        self.n = 0                      # requests made
        self.c = None

    # ---- connections

    def open(self, port, v6):
        rng = self.rng
        if v6:
            cli, srv = "fd00:97::%x" % rng.randint(0x100, 0xffff), "fd00:97::%x" % rng.randint(1, 0xff)
        else:
            cli, srv = "10.97.%d.%d" % (rng.randint(1, 255), rng.randint(1, 254)), \
                "10.97.0.%d" % rng.randint(1, 254)
        c = Conn(self.clk, cli, srv, rng.randint(49152, 65535), port, rng.getrandbits(32),
                 rng.getrandbits(32), ipid=rng.randrange(60000), cmac=fx.MAC_CLIENT, smac=fx.MAC_GW)
        c.port, c.v6, c.sent, c.had_2xx = port, v6, [0, 0], False
        self.recs += c.handshake(step=rng.randint(1000, 300000))
        self.c = c

    def close(self):
        self.recs += self.c.close()
        self.c = None

    def send(self, client, data, split=False):
        """data from one end in segments (see segments()); sometimes reordered (a
        later segment first) or with a segment sent twice; then the peer's ACK.
        split None: no random cuts, never reordered or repeated."""
        rng, c = self.rng, self.c
        if not data:
            return
        c.sent[0 if client else 1] += len(data)
        if not client and re.search(rb"HTTP/1\.[01] 2[0-9][0-9] ", data):
            c.had_2xx = True                        # no CONNECT after this (see the README)
        base = c.cseq if client else c.sseq
        fn = c.c_send if client else c.s_send
        pkts, off = [], 0
        for seg in segments(rng, data, bool(split)):
            pkts.append(lambda seg=seg, off=off: fn(seg, step=rng.randint(50, 20000), advance=False,
                                                     seq=base + off))
            off += len(seg)
        order = list(range(len(pkts)))
        r = rng.random() if split is not None else 1
        if r < 0.12:                                # one segment arrives early
            if len(order) > 1 and not chunked_ends(data):   # (see the README)
                k = rng.randrange(1, len(order))
                order.insert(rng.randrange(k), order.pop(k))
        elif r < 0.2:                               # one segment twice
            k = rng.randrange(len(order))
            order.insert(k + 1 if rng.random() < 0.5 else rng.randrange(k, len(order)) + 1, order[k])
        for k in order:
            self.recs.append(pkts[k]())
        if client:
            c.cseq = base + len(data)
            self.recs.append(c.s_ack(step=rng.randint(20, 500)))
        else:
            c.sseq = base + len(data)
            self.recs.append(c.c_ack(step=rng.randint(20, 500)))

    def run(self, steps):
        for client, data, split in steps:
            self.send(client, data, split)

    # ---- what a connection carries: lists of (from client, bytes, split)

    def exchange(self, method, last):
        rng, c = self.rng, self.c
        head, body, info = request(rng, c.port, c.v6, method)
        if rng.random() < 0.02:
            head = b"\r\n" + head       # a stray CRLF before the request line (RFC 9112 2.2)
        split = rng.random() < 0.3
        if info["expect"]:
            steps = [(True, head, split), (False, b"HTTP/1.1 100 Continue\r\n\r\n", False),
                     (True, body, split)]
        else:
            steps = [(True, head + body, split)]
        steps.append((False, response(rng, info["method"], last), rng.random() < 0.2))
        return steps, 1, False

    def pipelined(self, k):
        rng, c = self.rng, self.c
        reqs = [request(rng, c.port, c.v6, rng.choice(METHODS[:-1]), expect_ok=False) for _ in range(k)]
        data = b"".join(h + b for h, b, _ in reqs)
        resp = b"".join(response(rng, i["method"], False) for _, _, i in reqs)
        return [(True, data, rng.random() < 0.5), (False, resp, rng.random() < 0.3)], k, False

    def connect(self):
        """CONNECT; a 407 (the connection goes on) or a 200 and a tunnel (it ends)."""
        rng, c = self.rng, self.c
        tunnel_http = rng.random() < 0.3
        head, body, info = request(rng, c.port, c.v6, "CONNECT",
                                   connect_port=rng.choice(TUNNEL_HTTP_PORTS) if tunnel_http else None)
        ok = rng.random() < 0.7
        steps = [(True, head, rng.random() < 0.2),
                 (False, response(rng, "CONNECT", False, (200, "Connection established") if ok
                                  else (407, "Proxy Authentication Required")), False)]
        n = 1
        if not ok:
            return steps, n, False
        if tunnel_http:
            # one plain HTTP request inside the tunnel, one segment (see the README)
            while True:
                h, b, i = request(rng, c.port, c.v6, rng.choice(["GET", "HEAD"]), expect_ok=False)
                if len(h + b) <= MSS:
                    break
            n += 1
            steps += [(True, h + b, None), (False, response(rng, i["method"], False), None)]
        else:
            sni = info["connect"].rsplit(":", 1)[0].strip("[]")
            steps += [(True, fx.client_hello(sni), False),
                      (False, b"\x16\x03\x03\x00\x28" + bytes(rng.randrange(256) for _ in range(40)), False)]
        return steps, n, True

    def connection(self, budget):
        """Connections carrying about `budget` more requests (at least one)."""
        rng = self.rng
        port, v6 = rng.choice(PORTS), rng.random() < 0.3
        self.open(port, v6)
        want = min(budget, rng.choice([1, 1, 2, 3, 5, 8]))
        made = 0
        while made < want:
            r = rng.random()
            left = want - made
            if r < 0.25 and left >= 2:
                steps, n, ends = self.pipelined(rng.randint(2, min(left, 6)))
            elif port in PROXY_PORTS and not self.c.had_2xx and r < (0.45 if made == 0 else 0.32):
                steps, n, ends = self.connect()
            else:
                steps, n, ends = self.exchange(rng.choices(METHODS[:-1], METHOD_WEIGHTS[:-1])[0],
                                               made + 1 >= want)
            size = [sum(len(d) for cl, d, _ in steps if cl == x) for x in (True, False)]
            if size[0] > STREAM_CAP or size[1] > STREAM_CAP:
                continue                            # too big for any connection: draw again
            if any(self.c.sent[i] + size[i] > STREAM_CAP for i in (0, 1)):
                self.close()                        # the rest on a new connection
                self.open(port, v6)
            self.run(steps)
            made += n
            self.n += n
            if ends:
                break
        self.close()


def main():
    if len(sys.argv) != 4:
        sys.stderr.write("usage: gen_http_random.py SEED COUNT OUT.pcap\n")
        return 2
    seed, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    g = Gen(seed)
    while g.n < count:
        g.connection(count - g.n)
    fx.write_pcap(out, fx.LINKTYPE_ETHERNET, g.recs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
