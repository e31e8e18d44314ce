#!/usr/bin/python3
"""gen_tls_random.py - a capture of random, well-formed TLS ClientHellos over TCP, for
the tshark differential test (tests/tshark/tshark_diff.py).

README
------
    /usr/bin/python3 tests/tshark/gen_tls_random.py [--hostile] [--all-starttls] SEED COUNT OUT.pcap

Writes COUNT TCP connections, each carrying one ClientHello (two when the server
answers with a HelloRetryRequest), drawn from a random.Random(SEED): the same SEED and
COUNT give the same bytes.  The TLS bytes are built here by hand; scapy builds the
IP and TCP headers (pcaps/gen_fixtures.py's TcpConn, Clock, ether, write_pcap).

What varies, all within what RFC 8446 / 5246 / 6066 allow and what tshark 4.0
dissects with its default preferences:
  - the hello: TLS 1.3 style (supported_versions with 1.3 first, key_share with
    x25519 / P-256 / a 1,216-byte ML-KEM share, psk_key_exchange_modes, sometimes
    early_data, a pre_shared_key last), TLS 1.2 style (legacy_version 0x0301-0x0303,
    no supported_versions; 1 in 10 of those without SNI has an empty extensions
    block) and a few SSL 3.0 / TLS 1.0 hellos with no extensions at all; session ids
    of 0, 1-31 and 32 bytes; 1-80 cipher suites, a GREASE one first (as Chrome);
    null or deflate+null compression;
  - extensions in random order: server_name with one host_name (85% of hellos: 1 to
    253 bytes, mixed case, labels up to 63, a trailing dot, an IPv4 literal, IDNA
    and raw UTF-8, bytes a text form must escape: NUL, tab, LF, 0x1f, space,
    backslash, quote, 0x7f, 0x80-0xff), ALPN (odd names too), supported_groups,
    ec_point_formats, signature_algorithms, padding (0-4,096 bytes),
    session_ticket (empty or up to 2,500 bytes), status_request, SCT,
    extended_master_secret, renegotiation_info, compress_certificate,
    record_size_limit, ALPS, delegated_credentials, encrypt_then_mac,
    max_fragment_length, heartbeat, post_handshake_auth, GREASE extensions (first
    and last, with GREASE groups, versions and key share) and unassigned types; ECH
    (0xfe0d, outer), ESNI (0xffce, draft-02 layout) or draft ECH (0xff02), with or
    without an SNI;
  - records: the hello in one record, or split over 2-8 records at random points,
    or 1-byte records (small hellos); the first record's version 0x0301 or 0x0303
    (0x0300 for an SSL 3.0 hello);
  - TCP: the client's flight in one segment, cut at random points (up to 8
    segments) or at 1,448 bytes; out of order (a pair swapped, all reversed, the
    first sent last); a segment sent twice; a range across segments sent again as
    one; a segment in IPv4 or IPv6 fragments (sometimes the last first); sequence
    numbers that wrap at 2^32; 1 in 10 groups of 2-4 connections interleaved;
  - around the hello: early data (CCS + application data) right behind it; the
    server answers with a ServerHello (TLS 1.2: + ServerHelloDone; 1.3: + CCS +
    application data), a HelloRetryRequest (with a cookie or not; then the client
    sends CCS or not, and a second ClientHello repeating the first but for one key
    share, the cookie and no early_data), a fatal alert, or nothing; the client's
    second flight: ClientKeyExchange + CCS + Finished, CCS + application data, or a
    close_notify alert; FIN exchange;
  - ports where tshark 4.0 dissects TLS by default: by port 443, 465, 636, 853,
    993, 995, 5061, 5671, 8883 (443 most); by its TLS heuristic only (the first
    client segment then holds a whole record header and comes first: the heuristic
    looks at the first segment alone) 4433, 4443, 563, 989, 990, 992, 6697, 8443,
    9443; plain-text upgrades tshark and the sensor both follow: SMTP STARTTLS (25,
    587, upper and lower case), IMAP "tag STARTTLS" (143), POP3 STLS (110, after
    CAPA too), FTP "AUTH TLS" (21), NNTP (119), ManageSieve (4190), HTTP CONNECT
    tunnels (3128, 8080), and the upgrades that are not text lines: XMPP
    <starttls/> and <proceed/> (5222), PostgreSQL SSLRequest and 'S' (5432), LDAP
    StartTLS extended operation (389), MySQL greeting and SSLRequest (3306);
    client ports 49152-65535;
  - IPv4 (10.96.0.0/16) and IPv6 (fd00:96::/64).
The client's stream stays within the first 16 KiB the sensor keeps of each
direction (a second hello that would cross it is sent in one record, or the server
does not ask for it).

--all-starttls adds the upgrades only one side follows (STARTTLS_OTHER): FTP "AUTH
SSL" and "auth tls" (tshark 4.0 follows only "AUTH TLS"; the sensor follows both).
--hostile adds HOSTILE_KINDS connections at the end that are not well-formed on
purpose or go past a limit the sensor documents: an alert or a CCS before the hello,
an empty host_name, a server_name list with two host_names, a repeated extension, a
name whose escaped form exceeds the sensor's 1,023 bytes, a hello on a port tshark
does not take for TLS (8080 without CONNECT), an SSLv2-format hello, hellos over 16
KiB (SNI first and ECH last; no SNI), the peer's ACK of the hello captured before its
first segment.  Neither belongs in tshark_diff.py's random captures, which must agree.
"""
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "pcaps"))
import gen_fixtures as fx  # noqa: E402
from gen_fixtures import ether  # noqa: E402
from scapy.layers.inet import IP, TCP, fragment  # noqa: E402
from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment, fragment6  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402

# Ports tshark 4.0 dissects as TLS with no preference set (checked one by one): by
# port, and (HEUR_PORTS) only by its TLS-over-TCP heuristic, which needs the first
# client segment in capture order to hold a whole record header (5 bytes) of a
# record version 0x0300-0x0303 (is_sslv3_or_tls), else the connection stays "TCP".
TLS_PORTS = [443] * 12 + [465, 636, 853, 993, 995, 5061, 5671, 8883]
HEUR_PORTS = [8443, 8443, 4433, 4443, 563, 989, 990, 992, 6697, 9443]
# Client ports: 49152-65535 but 57000, which tshark gives to IRC (it tries the port
# with a dissector when the server port has none, before any heuristic).
CLIENT_PORTS = [p for p in range(49152, 65536) if p != 57000]

CT_CCS, CT_ALERT, CT_HANDSHAKE, CT_APPDATA = 20, 21, 22, 23
# The sensor keeps the first 16 KiB of each direction of a flow (sensor/flow.c
# stream_max): a client stream stays within it up to the end of its last hello.
STREAM_MAX = 16384
HRR_RANDOM = bytes.fromhex("cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c")
GREASE = [0x0a0a + 0x1010 * i for i in range(16)]

# Extension types named by IANA or tshark 4.0 (an "unknown" one is never one of these).
KNOWN_EXT = set(range(0, 64)) | {13172, 17513, 17613, 30031, 30032, 0xfe0d, 0xff01, 0xff02,
                                 0xffce, 0xffa5, 0xfd00, 0xfdff, 0x3377, 0xffc7}

CIPHERS = [0x1301, 0x1302, 0x1303, 0x1304, 0x1305, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9,
           0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035, 0x000a, 0xc009, 0xc00a,
           0x0033, 0x0039, 0x009e, 0x009f, 0xc023, 0xc024, 0xc027, 0xc028, 0x003c, 0x003d,
           0x0067, 0x006b, 0xccaa, 0xc0ad, 0xc0ac, 0xc0af, 0xc0ae, 0x00ff, 0x5600, 0x0004,
           0x0005, 0xc012, 0xc008, 0x0016, 0x0013, 0xc0a0, 0xc0a1, 0xc09c, 0xc09d]
GROUPS = [0x001d, 0x0017, 0x0018, 0x0019, 0x001e, 0x0100, 0x0101, 0x11ec, 0x6399, 0x0015]
SIGALGS = [0x0403, 0x0503, 0x0603, 0x0804, 0x0805, 0x0806, 0x0401, 0x0501, 0x0601, 0x0807,
           0x0808, 0x0203, 0x0201, 0x0402, 0x0303, 0x0301]

PLAIN = "abcdefghijklmnopqrstuvwxyz0123456789-"
# bytes a text rendering must escape or that tshark shows oddly
ODD = b"\x00\x01\x09\x0a\x1f \\\"%'*_@,;:/\x7f\x80\x9f\xa0\xc3\xa9\xe2\xff"
UTF8_WORDS = ["b\u00fccher", "\u4f8b\u3048", "caf\u00e9", "\u043f\u0440\u0438\u043c\u0435\u0440"]
SUFFIXES = [[b"example", b"com"], [b"example", b"net"], [b"test"], [b"example", b"org"],
            [b"Example", b"TEST"], [b"svc", b"cluster", b"local"], [b"co", b"uk"]]


def u8(v):
    return struct.pack("!B", v)


def u16(v):
    return struct.pack("!H", v)


def vec8(b):
    return u8(len(b)) + b


def vec16(b):
    return u16(len(b)) + b


def ext(t, body):
    return struct.pack("!HH", t, len(body)) + body


def rbytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))

# ---------------------------------------------------------------- the server name


def label(rng, n, odd):
    b = bytearray(ord(rng.choice(PLAIN)) for _ in range(n))
    if n > 1 and b[0] == ord("-"):
        b[0] = ord("a")
    for j in range(n):
        if rng.random() < 0.15:
            b[j] = bytes(b[j:j + 1]).upper()[0]
    if odd:
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(n)] = rng.choice(ODD)
    return bytes(b)


def host_name(rng):
    """One HostName (bytes, non-empty, at most 253 bytes before a trailing dot)."""
    r = rng.random()
    if r < 0.04:
        return rng.choice([b"a", b"x", b"localhost", b"0", b"-"])
    if r < 0.07:
        return ("10.96.%d.%d" % (rng.randrange(256), rng.randrange(256))).encode()
    if r < 0.10:
        return rng.choice(UTF8_WORDS).encode("utf-8") + b".example.com"
    if r < 0.12:
        return rng.choice([b"xn--bcher-kva", b"xn--r8jz45g", b"xn--caf-dma"]) + b".example"
    odd = rng.random() < 0.12
    labels = []
    for _ in range(rng.randint(1, 5)):
        n = 63 if rng.random() < 0.05 else rng.randint(1, 14)
        labels.append(label(rng, n, odd and rng.random() < 0.6))
    if odd and not any(set(x) & set(ODD) for x in labels):
        labels[0] = label(rng, len(labels[0]), True)
    if rng.random() < 0.03:                      # one very long name, labels of 63
        labels = [label(rng, 63, False) for _ in range(3)] + [label(rng, rng.randint(1, 40), odd)]
    name = labels + rng.choice(SUFFIXES)
    while len(name) > 2 and len(b".".join(name)) > 253:
        name.pop(0)
    out = b".".join(name)[:253]
    if rng.random() < 0.08:
        out += b"."                              # trailing dot (RFC 6066 says none; seen)
    return out


def ext_sni(names):
    lst = b"".join(u8(t) + vec16(n) for t, n in names)
    return ext(0, vec16(lst))

# ---------------------------------------------------------------- the ClientHello


def grease_pair(rng):
    a, b = rng.sample(GREASE, 2)
    return a, b


def client_hello(rng, sni, style, ech=None, second=False, cookie=b""):
    """The ClientHello handshake message (4-byte header included).
    style: "tls13", "tls12" or "tls10" (no extensions without SNI); ech: None, "ech",
    "esni", "ech-draft".  second: the hello after a HelloRetryRequest (with the HRR's
    cookie when not empty): called with a generator in the state the first hello's
    began with, it repeats the first hello's choices and bytes (RFC 8446 4.1.2) but
    for one key share, the cookie and no early_data."""
    st = {"legacy": 0x0303 if style != "tls10" else rng.choice([0x0300, 0x0301])}
    if style == "tls12" and rng.random() < 0.15:
        st["legacy"] = rng.choice([0x0301, 0x0302])
    st["grease"] = rng.random() < 0.4
    st["ge"] = grease_pair(rng)
    n = rng.choice([1, 2, 3, 5, 8, 15, 16, 17, 28, 31, 45, 80])
    cs = [rng.choice(CIPHERS) for _ in range(n)]
    if style == "tls13":
        cs = [0x1301, 0x1302, 0x1303][:rng.randint(1, 3)] + cs
    cs = list(dict.fromkeys(cs))
    if st["grease"]:
        cs.insert(0, rng.choice(GREASE))
    st["ciphers"] = cs
    st["sid"] = rbytes(rng, rng.choice([0, 0, 32, 32, 32, rng.randint(1, 31)]))
    st["comp"] = b"\x01\x00" if style != "tls13" and rng.random() < 0.05 else b"\x00"
    body = u16(st["legacy"]) + rbytes(rng, 32) + vec8(st["sid"])
    body += vec16(b"".join(u16(c) for c in st["ciphers"])) + vec8(st["comp"])
    if style == "tls10" and ech is None and sni is None:
        return b"\x01" + struct.pack("!I", len(body))[1:] + body
    if style == "tls12" and ech is None and sni is None and rng.random() < 0.1:
        body += vec16(b"")                       # an empty extensions block
        return b"\x01" + struct.pack("!I", len(body))[1:] + body
    exts = []                                    # (type, bytes); order shuffled below
    if sni is not None:
        exts.append((0, ext_sni([(0, sni)])))
    if rng.random() < 0.7:
        protos = rng.sample([b"h2", b"http/1.1", b"h3", b"spdy/3.1", b"imap", b"smtp",
                             b"acme-tls/1", b"dot", b"x" * rng.randint(1, 40),
                             b"\x00odd,\xff"], rng.randint(1, 4))
        exts.append((16, ext(16, vec16(b"".join(vec8(p) for p in protos)))))
    groups = rng.sample(GROUPS, rng.randint(1, 5))
    if st["grease"]:
        groups.insert(0, st["ge"][0])
    if rng.random() < 0.9:
        exts.append((10, ext(10, vec16(b"".join(u16(g) for g in groups)))))
    if rng.random() < 0.7:
        exts.append((11, ext(11, vec8(rng.choice([b"\x00", b"\x00\x01\x02"])))))
    if rng.random() < 0.9:
        sa = rng.sample(SIGALGS, rng.randint(1, len(SIGALGS)))
        exts.append((13, ext(13, vec16(b"".join(u16(s) for s in sa)))))
    if style == "tls13":
        vs = [0x0304] + rng.choice([[], [0x0303], [0x0303, 0x0302, 0x0301]])
        if st["grease"]:
            vs.insert(0, st["ge"][1])
        exts.append((43, ext(43, vec8(b"".join(u16(v) for v in vs)))))
        shares = []
        if st["grease"]:
            shares.append(u16(st["ge"][0]) + vec16(b"\x00"))
        for g in rng.sample([0x001d, 0x0017, 0x11ec], rng.randint(1, 2)):
            size = {0x001d: 32, 0x0017: 65, 0x11ec: 1216}[g]
            shares.append(u16(g) + vec16(rbytes(rng, size)))
        if second:
            shares = shares[-1:]
        exts.append((51, ext(51, vec16(b"".join(shares)))))
        exts.append((45, ext(45, vec8(b"\x01"))))
        if second and cookie:
            exts.append((44, ext(44, vec16(cookie))))
        if rng.random() < 0.2:
            exts.append((49, ext(49, b"")))
        if rng.random() < 0.1 and not second:
            exts.append((42, ext(42, b"")))
        if rng.random() < 0.2:
            exts.append((28, ext(28, u16(0x4001))))
        if rng.random() < 0.2:
            exts.append((34, ext(34, vec16(b"\x04\x03\x08\x04"))))
    else:
        if rng.random() < 0.3:
            exts.append((22, ext(22, b"")))
        if rng.random() < 0.1:
            exts.append((1, ext(1, u8(rng.randint(1, 4)))))
        if rng.random() < 0.1:
            exts.append((15, ext(15, b"\x01")))
    if rng.random() < 0.5:
        exts.append((23, ext(23, b"")))
    if rng.random() < 0.5:
        exts.append((0xff01, ext(0xff01, b"\x00")))
    if rng.random() < 0.4:
        exts.append((35, ext(35, rbytes(rng, rng.choice([0, 0, 16, 128, 192, 1000, 2500])))))
    if rng.random() < 0.4:
        exts.append((5, ext(5, b"\x01\x00\x00\x00\x00")))
    if rng.random() < 0.3:
        exts.append((18, ext(18, b"")))
    if rng.random() < 0.3:
        exts.append((27, ext(27, vec8(b"\x00\x02" + rng.choice([b"", b"\x00\x01"])))))
    if rng.random() < 0.2:
        exts.append((17513, ext(17513, vec16(vec8(b"h2")))))
    for _ in range(rng.choice([0, 0, 0, 1, 2])):   # unassigned types
        t = rng.randrange(64, 0xfff0)
        if t not in KNOWN_EXT and (t & 0x0f0f) != 0x0a0a and all(t != e[0] for e in exts):
            exts.append((t, ext(t, rbytes(rng, rng.choice([0, 1, 4, 30])))))
    if ech == "ech":
        payload = u8(0) + u16(0x0001) + u16(rng.choice([0x0001, 0x0003])) + u8(rng.randrange(256))
        payload += vec16(rbytes(rng, 32)) + vec16(rbytes(rng, rng.choice([144, 176, 208, 239])))
        exts.append((0xfe0d, ext(0xfe0d, payload)))
    elif ech == "esni":
        payload = u16(0x1301) + u16(0x001d) + vec16(rbytes(rng, 32))
        payload += vec16(rbytes(rng, 32)) + vec16(rbytes(rng, rng.choice([148, 276])))
        exts.append((0xffce, ext(0xffce, payload)))
    elif ech == "ech-draft":
        exts.append((0xff02, ext(0xff02, rbytes(rng, rng.choice([100, 200])))))
    rng.shuffle(exts)
    if st["grease"]:                              # as Chrome: one GREASE first, one last
        exts.insert(0, (st["ge"][0], ext(st["ge"][0], b"")))
        exts.append((st["ge"][1], ext(st["ge"][1], b"\x00")))
    if rng.random() < 0.25:
        pad = rng.choice([0, 1, 17, 120, 255, 512, 600, 2000, 4096])
        exts.insert(rng.randint(0, len(exts)), (21, ext(21, bytes(pad))))
    if style == "tls13" and rng.random() < 0.15:  # pre_shared_key: last (RFC 8446 4.2.11)
        ident = vec16(rbytes(rng, rng.choice([32, 96, 192]))) + rbytes(rng, 4)
        exts.append((41, ext(41, vec16(ident) + vec16(vec8(rbytes(rng, 32))))))
    body += vec16(b"".join(e for _, e in exts))
    return b"\x01" + struct.pack("!I", len(body))[1:] + body


def server_hello(rng, version, hrr=False, cookie=None):
    body = u16(0x0303) + (HRR_RANDOM if hrr else rbytes(rng, 32)) + vec8(rbytes(rng, 32))
    body += u16(0x1301 if version == 0x0304 else rng.choice([0xc02f, 0xc030, 0x009c])) + b"\x00"
    exts = b""
    if version == 0x0304:
        exts += ext(43, u16(0x0304))
        exts += ext(51, u16(0x001d) if hrr else u16(0x001d) + vec16(rbytes(rng, 32)))
        if cookie:
            exts += ext(44, vec16(cookie))
    else:
        exts += ext(0xff01, b"\x00") + ext(23, b"")
    body += vec16(exts)
    return b"\x02" + struct.pack("!I", len(body))[1:] + body


def records(rng, msg, ctype=CT_HANDSHAKE, split=True):
    """msg in TLS records; a handshake message split at random points sometimes.
    The first record's version is 0x0301 or 0x0303 (0x0300 for an SSL 3.0 hello)."""
    cuts = []
    if split and ctype == CT_HANDSHAKE:
        r = rng.random()
        if r < 0.05 and len(msg) <= 1400:
            cuts = list(range(1, len(msg)))      # 1-byte records
        elif r < 0.3:
            cuts = sorted(rng.sample(range(1, len(msg)), min(len(msg) - 1, rng.randint(1, 7))))
    first_v = rng.choice([0x0301, 0x0301, 0x0303])
    if ctype == CT_HANDSHAKE and msg[4:6] == b"\x03\x00":
        first_v = 0x0300
    out = b""
    for i, (a, b) in enumerate(zip([0] + cuts, cuts + [len(msg)])):
        v = first_v if i == 0 else 0x0303
        out += u8(ctype) + u16(v) + vec16(msg[a:b])
    return out


def rec(ctype, payload, v=0x0303):
    return u8(ctype) + u16(v) + vec16(payload)


CCS = rec(CT_CCS, b"\x01")

# ---------------------------------------------------------------- TCP


MASK = 0xFFFFFFFF


class TcpConn4(fx.TcpConn):
    """fx.TcpConn whose sequence numbers wrap at 2^32."""

    def _pkt(self, from_client, flags, seq, ack, data=b"", step=1000):
        self.cseq &= MASK
        self.sseq &= MASK
        return fx.TcpConn._pkt(self, from_client, flags, seq & MASK, ack & MASK, data, step)


class TcpConn6(TcpConn4):
    """fx.TcpConn over IPv6."""

    def _pkt(self, from_client, flags, seq, ack, data=b"", step=1000):
        self.cseq &= MASK
        self.sseq &= MASK
        if from_client:
            ip = IPv6(src=self.cli, dst=self.srv, hlim=64)
            t = TCP(sport=self.sport, dport=self.dport, seq=seq & MASK, ack=ack & MASK, flags=flags,
                    window=64240)
            mac = (self.cmac, self.smac)
        else:
            ip = IPv6(src=self.srv, dst=self.cli, hlim=64)
            t = TCP(sport=self.dport, dport=self.sport, seq=seq & MASK, ack=ack & MASK, flags=flags,
                    window=65160)
            mac = (self.smac, self.cmac)
        p = ip / t
        if data:
            p = p / Raw(data)
        return (self.clock(step), ether(mac[0], mac[1], p))


def ip_fragments(rng, frame):
    """The Ethernet frame's IP packet in 2-4 IP fragments (IPv4 without DF, or IPv6
    with a Fragment header), as Ethernet frames; sometimes the last one first."""
    e = Ether(frame)
    if IP in e:
        ip = e[IP]
        ip.flags = 0
        del ip.chksum
        ip = IP(bytes(ip))
        size = len(bytes(ip[TCP]))
        step = max(8, (size // rng.randint(2, 4) + 7) // 8 * 8)
        frags = fragment(ip, fragsize=step)
    else:
        ip6 = e[IPv6]
        tcp = TCP(bytes(ip6[TCP]))               # its checksum stays (same addresses)
        pkt = IPv6(src=ip6.src, dst=ip6.dst, hlim=ip6.hlim) / \
            IPv6ExtHdrFragment(id=rng.randrange(1 << 32)) / tcp
        size = len(bytes(tcp))
        step = max(8, (size // rng.randint(2, 4) + 7) // 8 * 8)
        frags = fragment6(pkt, step + 48)
    if len(frags) > 1 and rng.random() < 0.3:
        frags = frags[-1:] + frags[:-1]
    return [ether(e.src, e.dst, f) for f in frags]


def send(rng, c, from_client, data, clk, reorder=True, head=0):
    """data as one flight of segments, cut at random points, sometimes out of order,
    with a segment sent twice, with a range across segments sent again, or in IP
    fragments; advances the sender's sequence number.  head: the first segment holds
    at least that many bytes and goes first."""
    if not data:
        return []
    seq0 = c.cseq if from_client else c.sseq
    r = rng.random()
    cuts = []
    if r < 0.35 and len(data) > 1:
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 7))))
    elif r < 0.45 and len(data) > 1448:
        cuts = list(range(1448, len(data), 1448))     # MSS-sized
    cuts = [x for x in cuts if x >= head]
    pieces = list(zip([0] + cuts, cuts + [len(data)]))
    order = list(range(len(pieces)))
    if head:
        reorder = False
    if reorder and len(pieces) > 1 and rng.random() < 0.3:
        k = rng.random()
        if k < 0.4:
            i = rng.randrange(len(pieces) - 1)
            order[i], order[i + 1] = order[i + 1], order[i]
        elif k < 0.7:
            order.reverse()
        else:
            order = order[1:] + order[:1]
    out = []
    sendf = c.c_send if from_client else c.s_send
    for j in order:
        a, b = pieces[j]
        seg = sendf(data[a:b], seq=seq0 + a, advance=False, step=rng.randint(20, 3000))
        if rng.random() < 0.04 and len(seg[1]) > 100:   # in IP fragments
            out += [(clk(rng.randint(5, 50)), f) for f in ip_fragments(rng, seg[1])]
        else:
            out.append(seg)
        if rng.random() < 0.05:                   # sent again
            out.append((clk(rng.randint(1000, 200000)), seg[1]))
    if len(pieces) > 2 and not head and rng.random() < 0.1:
        # sent again as one segment across the first cuts (repacketized)
        b = pieces[rng.randint(1, len(pieces) - 1)][1]
        out.append(sendf(data[:b], seq=seq0, advance=False, step=rng.randint(1000, 200000)))
    if from_client:
        c.cseq = (seq0 + len(data)) & MASK
    else:
        c.sseq = (seq0 + len(data)) & MASK
    out.append(c.s_ack() if from_client else c.c_ack())
    return out


def text(rng, c, from_client, data):
    return (c.c_send if from_client else c.s_send)(data, step=rng.randint(300, 30000))


# The plain exchange before the client's hello: (server port, [(from_client, bytes)]).
def mysql_packet(seq, payload):
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


# MySQL: the server's greeting (protocol 10, CLIENT_SSL among its
# capabilities), the client's 32-byte SSLRequest; TLS right after each.
MYSQL_GREETING = mysql_packet(0, b"\x0a" + b"8.0.36\x00" + struct.pack("<I", 11) + b"abcdefgh\x00" +
                              struct.pack("<HBHH", 0xffff, 0xff, 0x0002, 0xdfff) + b"\x15" +
                              b"\x00" * 10 + b"ijklmnopqrst\x00" + b"caching_sha2_password\x00")
MYSQL_SSL_REQUEST = mysql_packet(1, struct.pack("<IIB", 0x01ffaa85 | 0x0800, 1 << 24, 0xff) +
                                 b"\x00" * 23)

# The client's hello follows the last step directly, as the command asks.  tshark
# 4.0 has no ManageSieve dissector, and no TLS port for 8443 behind a CONNECT: it
# finds those hellos by its heuristic (STARTTLS_HEUR), like on HEUR_PORTS.
STARTTLS = {
    "smtp": (25, [(0, b"220 mx.example.test ESMTP\r\n"), (1, b"EHLO client.example.test\r\n"),
                  (0, b"250-mx.example.test\r\n250-PIPELINING\r\n250 STARTTLS\r\n"),
                  (1, b"STARTTLS\r\n"), (0, b"220 2.0.0 Ready to start TLS\r\n")]),
    "submission": (587, [(0, b"220 mx.example.test ESMTP\r\n"), (1, b"EHLO [10.96.0.9]\r\n"),
                         (0, b"250-mx.example.test\r\n250-AUTH PLAIN\r\n250 STARTTLS\r\n"),
                         (1, b"starttls\r\n"), (0, b"220 Go ahead\r\n")]),
    "imap": (143, [(0, b"* OK [CAPABILITY IMAP4rev1 STARTTLS] ready\r\n"),
                   (1, b"a1 STARTTLS\r\n"), (0, b"a1 OK Begin TLS negotiation now\r\n")]),
    "imap-capa": (143, [(0, b"* OK ready\r\n"), (1, b"A001 CAPABILITY\r\n"),
                        (0, b"* CAPABILITY IMAP4rev1 STARTTLS LOGINDISABLED\r\nA001 OK done\r\n"),
                        (1, b"A002 StartTLS\r\n"), (0, b"A002 OK go\r\n")]),
    "pop3": (110, [(0, b"+OK POP3 ready\r\n"), (1, b"STLS\r\n"), (0, b"+OK Begin TLS negotiation\r\n")]),
    "pop3-capa": (110, [(0, b"+OK ready\r\n"), (1, b"CAPA\r\n"), (0, b"+OK\r\nSTLS\r\nUSER\r\n.\r\n"),
                        (1, b"STLS\r\n"), (0, b"+OK go\r\n")]),
    "ftp": (21, [(0, b"220 FTP server ready\r\n"), (1, b"AUTH TLS\r\n"),
                 (0, b"234 AUTH TLS successful\r\n")]),
    "nntp": (119, [(0, b"200 news.example.test ready\r\n"), (1, b"STARTTLS\r\n"),
                   (0, b"382 Continue with TLS negotiation\r\n")]),
    "sieve": (4190, [(0, b'"IMPLEMENTATION" "x"\r\n"STARTTLS"\r\nOK\r\n'), (1, b"STARTTLS\r\n"),
                     (0, b'OK "Begin TLS negotiation now"\r\n')]),
    "connect3128": (3128, [(1, b"CONNECT tls.example.test:443 HTTP/1.1\r\nHost: tls.example.test:443\r\n"
                               b"User-Agent: x\r\n\r\n"),
                           (0, b"HTTP/1.1 200 Connection established\r\n\r\n")]),
    "connect8080": (8080, [(1, b"CONNECT 10.96.0.80:8443 HTTP/1.1\r\nHost: 10.96.0.80:8443\r\n\r\n"),
                           (0, b"HTTP/1.1 200 OK\r\n\r\n")]),
    # upgrades that are not text lines (analyzers/tls.h, tls_upgrade)
    "xmpp": (5222, [(1, b"<?xml version='1.0'?><stream:stream to='example.test' xmlns='jabber:client' "
                        b"xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>"),
                    (0, b"<?xml version='1.0'?><stream:stream from='example.test' id='x1' "
                        b"xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' "
                        b"version='1.0'><stream:features><starttls xmlns='urn:ietf:params:xml:ns:"
                        b"xmpp-tls'><required/></starttls></stream:features>"),
                    (1, b"<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>"),
                    (0, b"<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")]),
    "pgsql": (5432, [(1, struct.pack("!II", 8, 80877103)), (0, b"S")]),
    "ldap": (389, [(1, bytes.fromhex("301d02010177188016312e332e362e312e342e312e313436362e3230303337")),
                   (0, bytes.fromhex("300c02010178070a010004000400"))]),
    "mysql": (3306, [(0, MYSQL_GREETING), (1, MYSQL_SSL_REQUEST)]),
}
STARTTLS_HEUR = ("sieve", "connect8080")
# --all-starttls: upgrades one side does not follow: tshark 4.0's FTP takes only
# "AUTH TLS" (exactly, then a 234), not RFC 4217's "AUTH SSL" nor lower case; the
# sensor takes both.
STARTTLS_OTHER = {
    "ftp-ssl": (21, [(0, b"220 FTP\r\n"), (1, b"AUTH SSL\r\n"), (0, b"234 AUTH SSL OK\r\n")]),
    "ftp-lower": (21, [(0, b"220 FTP\r\n"), (1, b"auth tls\r\n"), (0, b"234 go\r\n")]),
}


def prelude(rng, c, kind):
    """The plain-text exchange before the client's hello."""
    steps = (STARTTLS.get(kind) or STARTTLS_OTHER[kind])[1]
    out = []
    for from_client, data in steps:
        out.append(text(rng, c, bool(from_client), data))
        out.append(c.c_ack() if not from_client else c.s_ack())
    return out

# ---------------------------------------------------------------- one connection


def connection(rng, clk, other_starttls=False):
    """The records of one connection with 1 or 2 ClientHellos; returns (recs, hellos)."""
    v6 = rng.random() < 0.3
    starttls = None
    if rng.random() < 0.1:
        kinds = sorted(STARTTLS) + (sorted(STARTTLS_OTHER) if other_starttls else [])
        starttls = rng.choice(kinds)
    heur = starttls in STARTTLS_HEUR if starttls else rng.random() < 0.15
    if starttls:
        port = (STARTTLS.get(starttls) or STARTTLS_OTHER[starttls])[0]
    else:
        port = rng.choice(HEUR_PORTS if heur else TLS_PORTS)
    sport = rng.choice(CLIENT_PORTS)      # above every server port: tshark tries the lower first
    isn = [rng.randrange(1 << 32) if rng.random() < 0.5 else
           rng.randrange((1 << 32) - 20000, 1 << 32) for _ in range(2)]     # wraps soon
    if v6:
        cli, srv = "fd00:96::%x" % rng.randint(0x10, 0xffff), "fd00:96::%x" % rng.randint(1, 0xf)
        c = TcpConn6(clk, cli, srv, sport, port, isn[0], isn[1])
    else:
        cli = "10.96.%d.%d" % (rng.randint(1, 254), rng.randint(1, 254))
        srv = "10.96.0.%d" % rng.randint(1, 254)
        c = TcpConn4(clk, cli, srv, sport, port, isn[0], isn[1], ipid=rng.randrange(60000))
    recs = c.handshake(step=rng.randint(1000, 300000))
    if starttls:
        recs += prelude(rng, c, starttls)
    style = rng.choice(["tls13"] * 6 + ["tls12"] * 3 + ["tls10"] * (1 if rng.random() < 0.1 else 0))
    sni = host_name(rng) if rng.random() < 0.85 else None
    ech = None
    if style == "tls13" and rng.random() < 0.15:
        ech = rng.choice(["ech", "ech", "esni", "ech-draft"])
    if style == "tls10" and rng.random() < 0.5:
        sni = None
    state = rng.getstate()
    hello = client_hello(rng, sni, style, ech)
    flight = records(rng, hello)
    early = style == "tls13" and rng.random() < 0.08
    if early:                                          # 0-RTT: CCS, early data
        flight += CCS + rec(CT_APPDATA, rbytes(rng, rng.randint(20, 300)))
    recs += send(rng, c, True, flight, clk, head=5 if heur else 0)
    hellos = 1
    version = 0x0304 if style == "tls13" else 0x0303
    r = rng.random()
    sent = len(flight) + sum(len(d) for who, d in (STARTTLS.get(starttls) or
                                                   STARTTLS_OTHER.get(starttls) or (0, []))[1] if who)
    assert sent <= STREAM_MAX
    hrr = style == "tls13" and r < 0.12 and not early
    if hrr:                                            # HelloRetryRequest
        cookie = rbytes(rng, rng.choice([0, 16, 64]))
        again = random.Random()
        again.setstate(state)
        hello2 = client_hello(again, sni, style, ech, second=True, cookie=cookie)
        f2 = (CCS if rng.random() < 0.6 else b"") + records(rng, hello2)
        if sent + len(f2) > STREAM_MAX:
            f2 = f2[:6] + records(rng, hello2, split=False) if f2[:1] == CCS[:1] else \
                records(rng, hello2, split=False)
        hrr = sent + len(f2) <= STREAM_MAX
    if hrr:
        sh = records(rng, server_hello(rng, 0x0304, hrr=True, cookie=cookie), split=False)
        if rng.random() < 0.6:
            sh += CCS
        recs += send(rng, c, False, sh, clk)
        recs += send(rng, c, True, f2, clk)
        hellos = 2
        r = 0.5
    if r < 0.75:
        sh = records(rng, server_hello(rng, version), split=False)
        if version == 0x0304:
            sh += CCS + rec(CT_APPDATA, rbytes(rng, rng.randint(50, 900)))
        else:
            sh += rec(CT_HANDSHAKE, b"\x0e\x00\x00\x00")   # ServerHelloDone
        recs += send(rng, c, False, sh, clk)
        k = rng.random()
        if k < 0.6:
            if version == 0x0304:
                f = CCS + rec(CT_APPDATA, rbytes(rng, rng.randint(30, 90)))
            else:
                cke = b"\x10" + struct.pack("!I", 33)[1:] + vec8(rbytes(rng, 32))
                f = rec(CT_HANDSHAKE, cke) + CCS + rec(CT_HANDSHAKE, rbytes(rng, 40))
            recs += send(rng, c, True, f, clk)
        elif k < 0.75:
            recs += send(rng, c, True, rec(CT_ALERT, b"\x01\x00"), clk)  # close_notify
    elif r < 0.9:                                     # the server refuses
        recs += send(rng, c, False, rec(CT_ALERT, b"\x02" + u8(rng.choice([40, 70, 112]))), clk)
    recs += c.close()
    return recs, hellos


# ---------------------------------------------------------------- hostile (--hostile)


HOSTILE_KINDS = 10


def hostile(rng, clk, i):
    """One connection that is not well-formed on purpose, or goes past a limit the
    sensor documents."""
    kind = i % HOSTILE_KINDS
    cli = "10.96.200.%d" % rng.randint(1, 254)
    port = 443 if kind != 5 else 8080
    c = TcpConn4(clk, cli, "10.96.0.250", rng.choice(CLIENT_PORTS), port,
                 rng.randrange(1 << 31), rng.randrange(1 << 31))
    recs = c.handshake()
    sni = host_name(rng)
    if kind == 0:     # an alert, or a CCS, before the hello
        pre = rec(CT_ALERT, b"\x01\x00") if rng.random() < 0.5 else CCS
        data = pre + records(rng, client_hello(rng, sni, "tls13"), split=False)
    elif kind == 1:   # empty host_name
        data = records(rng, raw_hello(rng, [(0, ext_sni([(0, b"")]))]), split=False)
    elif kind == 2:   # two host_names
        data = records(rng, raw_hello(rng, [(0, ext_sni([(0, sni), (0, host_name(rng))]))]),
                       split=False)
    elif kind == 3:   # a repeated extension
        data = records(rng, raw_hello(rng, [(0, ext_sni([(0, sni)])), (23, ext(23, b"")),
                                            (23, ext(23, b""))]), split=False)
    elif kind == 4:   # an escaped name longer than the sensor keeps (1,023 bytes)
        data = records(rng, raw_hello(rng, [(0, ext_sni([(0, b"\xff" * 300)]))]), split=False)
    elif kind == 5:   # a port tshark does not dissect as TLS
        data = records(rng, client_hello(rng, sni, "tls13"), split=False)
    elif kind == 6:   # SSLv2-format hello
        body = b"\x01\x03\x01" + u16(3) + u16(0) + u16(16) + b"\x00\x00\x2f" + rbytes(rng, 16)
        data = struct.pack("!H", 0x8000 | len(body)) + body
    elif kind in (7, 8):   # a hello over 16 KiB (TLS_MSG_MAX): SNI first and ECH last, or no SNI
        exts = [(21, ext(21, bytes(18000)))]
        if kind == 7:
            exts = [(0, ext_sni([(0, sni)]))] + exts + [(0xfe0d, ext(0xfe0d, bytes(6) + vec16(b"") +
                                                                         vec16(rbytes(rng, 100))))]
        m = raw_hello(rng, exts)
        data = b"".join(rec(CT_HANDSHAKE, m[j:j + 16384]) for j in range(0, len(m), 16384))
    else:             # the server's ACK of the whole hello captured before its first part
        data = records(rng, client_hello(rng, sni, "tls12"), split=False)
        cut = rng.randint(5, len(data) - 1)
        base = c.cseq
        first = c.c_send(data[:cut], seq=base, advance=False)
        second = c.c_send(data[cut:], seq=base + cut, advance=False)
        c.cseq = base + len(data)
        recs += [second, c.s_ack(), first]
        return recs + c.close()
    recs += send(rng, c, True, data, clk, reorder=False)
    recs += c.close()
    return recs


def raw_hello(rng, exts):
    body = u16(0x0303) + rbytes(rng, 32) + vec8(b"") + vec16(u16(0x1301) + u16(0xc02f))
    body += b"\x01\x00"
    body += vec16(b"".join(e for _, e in exts))
    return b"\x01" + struct.pack("!I", len(body))[1:] + body


def interleave(rng, conns):
    """The packets of several connections merged as if they ran at once: each keeps
    its own order, the timestamps are the merged ones in order."""
    stamps = sorted(ts for recs in conns for ts, _ in recs)
    queues = [list(recs) for recs in conns]
    out = []
    while any(queues):
        q = rng.choice([q for q in queues if q])
        out.append(q.pop(0)[1])
    return list(zip(stamps, out))


def capture(seed, count, hostile_n=0, other_starttls=False):
    """The records of the capture and the number of ClientHellos in it."""
    rng = random.Random(seed)
    clk = fx.Clock()
    recs, hellos, i = [], 0, 0
    while i < count:
        k = min(count - i, rng.randint(2, 4)) if rng.random() < 0.1 else 1
        group = []
        for _ in range(k):
            r, n = connection(rng, clk, other_starttls)
            group.append(r)
            hellos += n
        recs += interleave(rng, group) if k > 1 else group[0]
        i += k
    for j in range(hostile_n):
        recs += hostile(rng, clk, j)
    return recs, hellos


def main(argv):
    hostile_n, other = 0, False
    while argv and argv[0].startswith("--"):
        if argv[0] == "--hostile":
            hostile_n = HOSTILE_KINDS
        elif argv[0] == "--all-starttls":
            other = True
        else:
            break
        argv = argv[1:]
    if len(argv) != 3:
        sys.stderr.write("usage: gen_tls_random.py [--hostile] [--all-starttls] "
                         "SEED COUNT OUT.pcap\n")
        return 2
    seed, count, out = int(argv[0]), int(argv[1]), argv[2]
    recs, _ = capture(seed, count, hostile_n, other)
    fx.write_pcap(out, fx.LINKTYPE_ETHERNET, recs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
