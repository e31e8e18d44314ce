#!/usr/bin/python3
"""frag_fuzz.py - random fragment layouts, for a differential test of the
fragment table's Linux view against the Linux kernel (scapy;
/usr/bin/python3 for scapy), from record6.sh's client to its listener on
port 53 (FINDINGS.md, "The kernel as the reference"). Each case is a DNS
query in three versions that differ in two bytes of the name (and in the
DNS id, which keeps the UDP checksum the same), sent as random fragments
of random versions (offsets on 8-byte steps, lengths of 0 to 24 bytes and
some not a multiple of 8, overlaps, duplicates, any order), then, one case
in two, the whole query again in two fragments. Whatever the kernel
delivers to the listener (frag_fuzz.delivered) the sensor must report:
the first-wins datagram, or the Linux view beside it. 150 IPv4 and 150
IPv6 cases, seeded: the same bytes each run. One packet every 3 ms."""
import os, random, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frag6_chain import udp, SRC, DST  # noqa: E402  (the same builders)
from scapy.all import IP, IPv6, UDP, DNS, DNSQR, Raw, send, conf  # noqa: E402

conf.verb = 0
CLI4, SRV4 = "10.56.6.10", "10.56.6.53"
N = 150
TAGS = [b"aa", b"bb", b"cc"]


def versions(u):
    """u with bytes 22-23 (the name's 2nd and 3rd characters) set to each
    tag, and the DNS id (bytes 8-9) moved so the checksum stays right."""
    out = []
    a0 = int.from_bytes(u[22:24], "big")
    for t in TAGS:
        v = bytearray(u)
        a = int.from_bytes(t, "big")
        i = (int.from_bytes(u[8:10], "big") + a0 - a) % 0xffff
        v[8:10] = i.to_bytes(2, "big")
        v[22:24] = t
        out.append(bytes(v))
    return out


def layout(r, n):
    """Random fragments (off, length, more, version) of an n-byte datagram."""
    frs = []
    for _ in range(r.randrange(3, 9)):
        off = 8 * r.randrange(0, (n + 7) // 8)
        ln = 8 * r.randrange(1, 4)
        if r.random() < 1 / 16:
            ln = 0
        if off + ln > n:
            ln = n - off
        more = 1 if off + ln < n else r.randrange(2)
        if more and r.random() < 1 / 8 and off + ln + 7 <= n:
            ln += r.randrange(1, 8)
        frs.append((off, ln, more, r.randrange(3)))
    if r.random() < 0.5:
        v = r.randrange(3)
        frs += [(0, 16, 1, v), (16, n - 16, 0, v)]
    return frs


def main():
    r = random.Random(1914)
    for i in range(N):
        name = "faa%03d.fuzz.example" % i
        u = bytes(IP(bytes(IP(src=CLI4, dst=SRV4) / UDP(sport=45000 + i, dport=53) /
                           DNS(id=0x3000 + i, rd=1, qd=DNSQR(qname=name))))[UDP])
        vs = versions(u)
        send([IP(src=CLI4, dst=SRV4, id=0x9000 + i, proto=17, flags="MF" if more else 0,
                 frag=off // 8) / Raw(vs[v][off:off + ln])
              for off, ln, more, v in layout(r, len(u))], inter=0.003)
    for i in range(N):
        name = "faa%03d.fuzz.example" % (N + i)
        vs = versions(udp(name, 46000 + i, 0x3000 + N + i))
        pkts = []
        for off, ln, more, v in layout(r, len(vs[0])):
            fh = bytes([17, 0]) + ((off & 0xfff8) | more).to_bytes(2, "big") + \
                (0xa000 + i).to_bytes(4, "big")
            pkts.append(IPv6(src=SRC, dst=DST, nh=44) / Raw(fh + vs[v][off:off + ln]))
        send(pkts, inter=0.003)


if __name__ == "__main__":
    main()
