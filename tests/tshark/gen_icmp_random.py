#!/usr/bin/python3
"""gen_icmp_random.py - a capture of random, well-formed ICMP and ICMPv6 traffic, for
the tshark differential test (tests/tshark/tshark_diff.py).

README
------
    /usr/bin/python3 tests/tshark/gen_icmp_random.py SEED COUNT OUT.pcap

Writes COUNT ICMP/ICMPv6 messages drawn from a random.Random(SEED): the same SEED and
COUNT give the same bytes.  The ICMP messages (checksums included) are built by hand
below; scapy builds the IP headers, pcaps/gen_fixtures.py writes the pcap.

What varies:
  - echo request/reply, IPv4 (8/0) and IPv6 (128/129): random id, sequence and a
    payload of 0-1800 random bytes; over 1400 bytes the packet goes out in IPv4 or
    IPv6 fragments (in order or reversed); a few messages are cut by the snaplen
    (after their 8-byte header: with less, egresswatch's decoder counts the
    packet as truncated and reports nothing, where tshark still shows the type
    and code), a few IPv4 ones carry an IP option (router alert), a few IPv6
    ones sit behind a Destination Options or Hop-by-Hop header;
  - errors quoting a UDP, TCP or ICMP echo packet (an IPv4 header, with options in
    some, or an IPv6 header, with a Hop-by-Hop or Fragment header in some, then 8
    bytes or more of the transport header and data; the RFC 4884 length in some):
    IPv4 destination unreachable (codes 0-15, next-hop MTU for code 4), source
    quench, redirect, time exceeded, parameter problem (with its pointer); ICMPv6
    destination unreachable (0-7), packet too big (MTU), time exceeded, parameter
    problem; the quoted packet is sometimes sent first, so a flow exists for it;
  - ICMPv6 neighbour solicitation/advertisement, router solicitation/advertisement,
    redirect (with their options, hop limit 255), MLDv2 reports behind a Hop-by-Hop
    router-alert header; IPv4 timestamp, information, address mask, router
    discovery and extended echo messages;
  - messages of random type and code (0-255), with 4-60 random bytes after the
    checksum.

Every address is a private one (10.97.0.0/16, fd00:97::/64, and the ICMPv6
link-local and multicast addresses fe80::/64 and ff02::).
"""
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "pcaps"))
import gen_fixtures as fx  # noqa: E402
from gen_fixtures import (IP, IPv6, UDP, TCP, Raw, ether, IPv6ExtHdrHopByHop,  # noqa: E402
                          IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, PadN)
from scapy.layers.inet import IPOption_Router_Alert  # noqa: E402
from scapy.layers.inet6 import RouterAlert  # noqa: E402
import ipaddress  # noqa: E402

V4_ERR = {3: range(16), 4: [0], 5: range(4), 11: range(2), 12: range(3)}
V6_ERR = {1: range(8), 2: [0], 3: range(2), 4: range(4)}
V4_OTHER = (9, 10, 13, 14, 15, 16, 17, 18, 42, 43)


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def icmp4(t, code, rest, body):
    m = struct.pack("!BBH", t, code, 0) + rest + body
    return m[:2] + struct.pack("!H", csum(m)) + m[4:]


def icmp6(src, dst, t, code, rest, body):
    m = struct.pack("!BBH", t, code, 0) + rest + body
    ph = (ipaddress.IPv6Address(src).packed + ipaddress.IPv6Address(dst).packed
          + struct.pack("!IxxxB", len(m), 58))
    return m[:2] + struct.pack("!H", csum(ph + m)) + m[4:]


def rbytes(rng, n):
    return bytes(rng.randrange(256) for _ in range(n))


def addr4(rng, net=None):
    return "10.97.%d.%d" % (rng.randint(0, 255) if net is None else net, rng.randint(1, 254))


def addr6(rng):
    return "fd00:97::%x" % rng.randint(1, 0xffff)


def mac(rng):
    return "02:00:00:97:%02x:%02x" % (rng.randrange(256), rng.randrange(256))


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.clk = fx.Clock()
        self.recs = []
        self.ipid = self.rng.randrange(60000)

    def nid(self):
        self.ipid = (self.ipid + 1) & 0xFFFF
        return self.ipid

    def emit(self, l3, cut=0):
        """Write a frame; cut: leave out its last `cut` bytes (as a snaplen
        would), the record keeping the original length."""
        rng = self.rng
        frame = ether(mac(rng), mac(rng), l3)
        ts = self.clk(rng.randint(50, 300000))
        if cut:
            self.recs.append((ts, frame[:len(frame) - cut], len(frame)))
        else:
            self.recs.append((ts, frame))

    def ip(self, src, dst, proto, payload, ttl=64, opts=False):
        if ":" in src:
            if self.rng.random() < 0.05:            # behind a Destination Options or Hop-by-Hop header
                ext = (IPv6ExtHdrDestOpt if self.rng.random() < 0.5 else IPv6ExtHdrHopByHop)(
                    nh=proto, options=[PadN(optdata=b"\0" * 4)])
                return IPv6(src=src, dst=dst, hlim=ttl) / ext / Raw(payload)
            return IPv6(src=src, dst=dst, hlim=ttl, nh=proto) / Raw(payload)
        kw = {"options": [IPOption_Router_Alert()]} if opts else {}
        return IP(src=src, dst=dst, id=self.nid(), ttl=ttl, proto=proto, **kw) / Raw(payload)

    def frags(self, src, dst, proto, payload):
        """The IP packets of payload in 2-3 fragments."""
        rng = self.rng
        n = len(payload)
        cuts = sorted(set(rng.randrange(8, n, 8) for _ in range(rng.randint(1, 2))))
        pieces = list(zip([0] + cuts, cuts + [n]))
        out = []
        ident = self.nid()
        for a, b in pieces:
            mf = 1 if b < n else 0
            if ":" in src:
                out.append(IPv6(src=src, dst=dst, hlim=64, nh=44)
                           / IPv6ExtHdrFragment(nh=proto, offset=a // 8, m=mf, id=ident | 0x97000000)
                           / Raw(payload[a:b]))
            else:
                out.append(IP(src=src, dst=dst, id=ident, ttl=64, proto=proto, flags=mf, frag=a // 8)
                           / Raw(payload[a:b]))
        if rng.random() < 0.3:
            out.reverse()
        return out

    def send(self, src, dst, msg, opts=False, ttl=64):
        rng = self.rng
        proto = 58 if ":" in src else 1
        if len(msg) > 1400 and rng.random() < 0.8:
            for f in self.frags(src, dst, proto, msg):
                self.emit(f)
            return
        cut = 0
        if len(msg) > 9 and rng.random() < 0.03:       # cut by the snaplen, after the 8-byte
            cut = rng.randint(1, len(msg) - 8)          # header (see the README)
        self.emit(self.ip(src, dst, proto, msg, ttl, opts), cut)

    # ---- messages

    def echo(self, v6):
        rng = self.rng
        a, b = (addr6(rng), addr6(rng)) if v6 else (addr4(rng), addr4(rng))
        ident, seq = rng.randrange(65536), rng.randrange(65536)
        n = rng.choice([0, 8, 16, 32, 48, 56, 64, 100, 500, 1000, 1472, 1600, 1800])
        payload = rbytes(rng, n) if rng.random() < 0.5 else bytes((i + rng.randrange(256)) & 0xFF
                                                                 for i in range(n))
        code = 0 if rng.random() < 0.95 else rng.randint(1, 255)
        rest = struct.pack("!HH", ident, seq)
        req, rep = (128, 129) if v6 else (8, 0)
        out = 0
        for t, s, d in ((req, a, b), (rep, b, a)):
            if t == rep and rng.random() < 0.2:
                break                       # no reply
            msg = icmp6(s, d, t, code, rest, payload) if v6 else icmp4(t, code, rest, payload)
            self.send(s, d, msg, opts=not v6 and rng.random() < 0.05)
            out += 1
        return out

    def quoted(self, v6, src, dst):
        """(original IP packet bytes, its proto) sent from src to dst."""
        rng = self.rng
        kind = rng.choice(["udp", "udp", "tcp", "tcp", "echo"])
        data = rbytes(rng, rng.choice([0, 4, 20, 100, 400]))
        sport = rng.randint(1024, 65535)
        dport = rng.choice([53, 123, 443, 22, 5000, 33434 + rng.randrange(30), sport ^ 1])
        if kind == "udp":
            l4 = UDP(sport=sport, dport=dport) / Raw(data)
        elif kind == "tcp":
            l4 = TCP(sport=sport, dport=dport, seq=rng.getrandbits(32), flags=rng.choice(["S", "PA", "A"])) \
                / Raw(data if rng.random() < 0.5 else b"")
        if v6:
            ext = None
            r = rng.random()
            if r < 0.1:
                ext = IPv6ExtHdrHopByHop(options=[RouterAlert()])
            if kind == "echo":
                rest = struct.pack("!HH", rng.randrange(65536), rng.randrange(65536))
                body = icmp6(src, dst, 128, 0, rest, data)
                p = IPv6(src=src, dst=dst, hlim=rng.randint(1, 64), nh=58) / Raw(body)
                if ext is not None:
                    p = IPv6(src=src, dst=dst, hlim=rng.randint(1, 64)) / ext / Raw(body)
                    p[IPv6ExtHdrHopByHop].nh = 58
            else:
                p = IPv6(src=src, dst=dst, hlim=rng.randint(1, 64))
                if ext is not None:
                    p = p / ext
                p = p / l4
        else:
            kw = {"options": [IPOption_Router_Alert()]} if rng.random() < 0.05 else {}
            if kind == "echo":
                body = icmp4(8, 0, struct.pack("!HH", rng.randrange(65536), rng.randrange(65536)), data)
                p = IP(src=src, dst=dst, id=self.nid(), ttl=rng.randint(1, 64), proto=1, **kw) / Raw(body)
            else:
                p = IP(src=src, dst=dst, id=self.nid(), ttl=rng.randint(1, 64), flags="DF", **kw) / l4
        return p

    def error(self, v6):
        rng = self.rng
        if v6:
            host, far, router = addr6(rng), addr6(rng), addr6(rng)
        else:
            host, far, router = addr4(rng), addr4(rng), "10.97.0.%d" % rng.randint(1, 254)
        orig = self.quoted(v6, host, far)
        if rng.random() < 0.3:
            self.emit(orig)                 # the packet that caused the error goes by first
        raw = bytes(orig)
        t = rng.choice(list(V6_ERR if v6 else V4_ERR))
        code = rng.choice(list((V6_ERR if v6 else V4_ERR)[t]))
        # how much is quoted: the IP header and 8 bytes, or more (up to the minimum MTU)
        hl = 40 if v6 else (raw[0] & 15) * 4
        keep = min(len(raw), rng.choice([hl + 8, hl + 8, hl + 28, 548 if not v6 else 1232]))
        q = raw[:keep]
        src = far if rng.random() < 0.3 else router
        rfc4884 = rng.random() < 0.1 and ((not v6 and t in (3, 11, 12)) or (v6 and t in (1, 3)))
        if rfc4884:
            unit = 8 if v6 else 4
            q += b"\0" * ((-len(q)) % unit)
            q = q + b"\0" * max(0, 128 - len(q))     # RFC 4884: at least 128 bytes when extended
            ln = len(q) // unit
        if v6:
            if t == 2:
                rest = struct.pack("!I", rng.choice([1280, 1400, 1480, 1500, 9000]))
            elif t == 4:
                rest = struct.pack("!I", rng.randrange(min(len(q), 60)))
            else:
                rest = struct.pack("!BBH", ln if rfc4884 else 0, 0, 0)
            msg = icmp6(src, host, t, code, rest, q)
        else:
            if t == 3 and code == 4:
                rest = struct.pack("!BBH", 0, ln if rfc4884 else 0, rng.choice([576, 1280, 1400, 1492]))
            elif t == 5:
                rest = ipaddress.IPv4Address("10.97.0.%d" % rng.randint(1, 254)).packed
            elif t == 12:
                rest = struct.pack("!BBH", rng.randrange(hl), ln if rfc4884 else 0, 0)
            else:
                rest = struct.pack("!BBH", 0, ln if rfc4884 else 0, 0)
            msg = icmp4(t, code, rest, q)
        self.send(src, host, msg, opts=not v6 and rng.random() < 0.03)
        return 1

    def ndp(self):
        rng = self.rng
        ll = "fe80::%x" % rng.randint(1, 0xffff)
        tgt = addr6(rng)
        lla = lambda kind: struct.pack("!BB", kind, 1) + bytes(int(x, 16) for x in mac(rng).split(":"))
        k = rng.choice(["ns", "na", "rs", "ra", "redirect", "mld"])
        src = ll
        if k == "ns":
            dst = "ff02::1:ff%02x:%04x" % (rng.randrange(256), rng.randrange(65536))
            src = "::" if rng.random() < 0.2 else ll
            msg = icmp6(src, dst, 135, 0, b"\0" * 4, ipaddress.IPv6Address(tgt).packed
                        + (lla(1) if src != "::" else b""))
        elif k == "na":
            dst = rng.choice(["ff02::1", ll])
            flags = rng.choice([0x20, 0x60, 0xE0, 0x40])
            msg = icmp6(ll, dst, 136, 0, bytes([flags, 0, 0, 0]),
                        ipaddress.IPv6Address(tgt).packed + (lla(2) if rng.random() < 0.8 else b""))
        elif k == "rs":
            src, dst = (ll if rng.random() < 0.8 else "::"), "ff02::2"
            msg = icmp6(src, dst, 133, 0, b"\0" * 4, lla(1) if src != "::" else b"")
        elif k == "ra":
            pfx = struct.pack("!BBBBIII", 3, 4, 64, 0xC0, 2592000, 604800, 0) + \
                ipaddress.IPv6Address("fd00:97::").packed
            dst = "ff02::1"
            msg = icmp6(ll, dst, 134, 0, struct.pack("!BBH", 64, rng.choice([0, 0x80, 0x40]), 1800),
                        struct.pack("!II", 0, 0) + lla(1) + pfx)
        elif k == "redirect":
            dst = ll.replace("fe80::", "fe80::1:")
            msg = icmp6(ll, dst, 137, 0, b"\0" * 4, ipaddress.IPv6Address("fe80::1").packed
                        + ipaddress.IPv6Address(addr6(rng)).packed + lla(2))
        else:
            rec = struct.pack("!BBH", rng.choice([1, 2, 3, 4]), 0, 0) + \
                ipaddress.IPv6Address("ff05::%x" % rng.randint(1, 0xffff)).packed
            msg = icmp6(ll, "ff02::16", 143, 0, struct.pack("!HH", 0, 1), rec)
            p = IPv6(src=ll, dst="ff02::16", hlim=1) / IPv6ExtHdrHopByHop(options=[RouterAlert()]) / Raw(msg)
            p[IPv6ExtHdrHopByHop].nh = 58
            self.emit(p)
            return 1
        self.emit(IPv6(src=src, dst=dst, hlim=255, nh=58) / Raw(msg))
        return 1

    def other4(self):
        rng = self.rng
        t = rng.choice(V4_OTHER)
        a, b = addr4(rng), addr4(rng)
        if t in (13, 14):
            body = struct.pack("!III", *(rng.getrandbits(32) for _ in range(3)))
        elif t in (17, 18):
            body = struct.pack("!I", 0xFFFFFF00)
        elif t == 9:
            body = ipaddress.IPv4Address(a).packed + struct.pack("!I", 0)
            rest = struct.pack("!BBH", 1, 2, 1800)
            self.send(a, "224.0.0.1", icmp4(t, 0, rest, body), ttl=1)
            return 1
        elif t == 10:
            self.send(a, "224.0.0.2", icmp4(t, 0, b"\0" * 4, b""), ttl=1)
            return 1
        elif t in (42, 43):
            body = struct.pack("!HBB", 0x2000, 0, 0) if t == 42 else b""
            if t == 42:
                body += struct.pack("!HBB", 8, 3, 1) + ipaddress.IPv4Address(b).packed
        else:
            body = b""
        rest = struct.pack("!HH", rng.randrange(65536), rng.randrange(65536))
        self.send(a, b, icmp4(t, 0, rest, body))
        return 1

    def random_type(self, v6):
        rng = self.rng
        t, code = rng.randrange(256), rng.randrange(256) if rng.random() < 0.7 else 0
        body = rbytes(rng, rng.randint(4, 60))
        if v6:
            a, b = addr6(rng), addr6(rng)
            msg = icmp6(a, b, t, code, body[:4], body[4:])
        else:
            a, b = addr4(rng), addr4(rng)
            msg = icmp4(t, code, body[:4], body[4:])
        self.send(a, b, msg)
        return 1


def main():
    if len(sys.argv) != 4:
        sys.stderr.write("usage: gen_icmp_random.py SEED COUNT OUT.pcap\n")
        return 2
    seed, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    g = Gen(seed)
    rng = g.rng
    n = 0
    while n < count:
        r = rng.random()
        v6 = rng.random() < 0.45
        if r < 0.35:
            n += g.echo(v6)
        elif r < 0.65:
            n += g.error(v6)
        elif r < 0.8:
            n += g.ndp()
        elif r < 0.87:
            n += g.other4()
        else:
            n += g.random_type(v6)
    fx.write_pcap(out, fx.LINKTYPE_ETHERNET, g.recs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
