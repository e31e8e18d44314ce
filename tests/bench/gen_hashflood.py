#!/usr/bin/env python3
"""gen_hashflood.py - a capture that floods the dns_tunnel detector's domain
table, and its control: DNS queries (Ethernet, IPv4, UDP) for names under
DOMAINS registered domains, QUERIES in all, round robin, 100 us apart.

  gen_hashflood.py collide|plain DOMAINS QUERIES OUT.pcap

collide: the domains ("d<6 digits><3 chars>.com") are those an agent would
compute offline against an unkeyed FNV-1a (text_fnv64, the hash the table
had): all of them fall in one of its 8192 buckets, so every lookup walks
them all. plain: as many domains of the same length that do not. The same
arguments give the same bytes. tests/bench/hashflood.sh replays both.
"""
import itertools
import struct
import sys

BASIS, PRIME, M64 = 1469598103934665603, 1099511628211, (1 << 64) - 1
BITS = 13
LOW = (1 << BITS) - 1
ALPHA = b"abcdefghijklmnopqrstuvwxyz0123456789"


def fnv(s):
    h = BASIS
    for c in s:
        h = ((h ^ c) * PRIME) & M64
    return h


def colliding(n):
    """n keys whose FNV-1a agree in the low BITS bits: one step of FNV-1a
    maps low bits to low bits and is invertible there, so each 3-character
    suffix is run back from the target to the state it needs."""
    inv = pow(PRIME, -1, 1 << BITS)
    need = {}
    for sfx in itertools.product(ALPHA, repeat=3):
        s = 0
        for c in reversed(sfx):
            s = ((s * inv) & LOW) ^ c
        need.setdefault(s, bytes(sfx))
    out, i = [], 0
    while len(out) < n:
        pre = b"d%06d" % i
        i += 1
        if fnv(pre) & LOW in need:
            out.append(pre + need[fnv(pre) & LOW] + b".com")
    assert len({fnv(d) & LOW for d in out}) == 1
    return out


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("collide", "plain"):
        sys.exit("usage: gen_hashflood.py collide|plain DOMAINS QUERIES OUT.pcap")
    ndom, nq = int(sys.argv[2]), int(sys.argv[3])
    doms = colliding(ndom) if sys.argv[1] == "collide" else \
        [b"d%06dxyz.com" % i for i in range(ndom)]
    with open(sys.argv[4], "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        ts = 1700000000 * 1000000
        for k in range(nq):
            name = b"q%d." % (k // ndom) + doms[k % ndom]
            qname = b"".join(bytes([len(l)]) + l for l in name.split(b".")) + b"\0"
            dns = struct.pack("!HHHHHH", k & 0xffff, 0x0100, 1, 0, 0, 0) + qname + b"\0\1\0\1"
            udp = struct.pack("!HHHH", 10000 + k % 50000, 53, 8 + len(dns), 0) + dns
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                             bytes([10, 0, 0, 2]), bytes([10, 0, 0, 1]))
            ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
            frame = b"\x02\0\0\0\0\1\x02\0\0\0\0\2\x08\0" + ip + udp
            ts += 100
            f.write(struct.pack("<IIII", ts // 1000000, ts % 1000000, len(frame), len(frame)))
            f.write(frame)


main()
