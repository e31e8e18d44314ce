#!/usr/bin/python3
"""opts_fuzz.py [whole|ping] - random IPv4 options and IPv6 extension headers, for a
differential test against the Linux kernel (scapy; /usr/bin/python3 for
scapy), from record6.sh's client to its listener on port 53 (FINDINGS.md
R21-F5). Each case is a DNS query for c<case>.fuzz.example in two
fragments: the first carries the random options (IPv4) or headers before
its fragment header (IPv6: hop-by-hop, destination options or a routing
header), the second none. The kernel reassembles the query only when it
took the first fragment; the sensor only when it did not flag it
PKT_RX_DROP (its fragment then goes on alone). The listener's log of what
it got is the kernel's verdict (ip_opts_fuzz.delivered). Seeded: the same
bytes each run. One packet every 5 ms. With `whole` (seed 2113, 200 of
each): the queries unfragmented, the options or headers on the datagram
itself, which Linux's IP layer drops just the same (ip_rcv_options,
ipv6_parse_hopopts, ip6_parse_tlv, ipv6_rthdr_rcv) before UDP sees it
(ip_opts_whole.delivered). With `ping` (seed 2114, 150 of each): ICMP
echo requests (id 0x77, the case number as sequence) under them; raw
sockets on the server log those its IP layer took (icmp_sink.py,
icmp_opts.delivered: a reply is no verdict, since Linux builds none when
it cannot echo an option, a record route that is full, say)."""
import os, random, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frag6_chain import udp, SRC, DST  # noqa: E402  (the same builders)
from scapy.all import (IP, IPv6, UDP, DNS, DNSQR, ICMP, ICMPv6EchoRequest, Raw, send,  # noqa: E402
                       conf)

conf.verb = 0
CLI4, SRV4 = "10.56.6.10", "10.56.6.53"
N4, N6 = 300, 300


def rnd_opt4(r):
    """One IPv4 option: sound, or with a length or pointer that lies."""
    k = r.random()
    if k < 0.15:
        return bytes([1])                                   # no-op
    if k < 0.18:
        return bytes([0])                                   # end
    t = r.choice([7, 7, 68, 68, 148, 131, 137, 134, 130, 136, 25, 30, 82, 94, 0x9e, 0xff, 2])
    n = r.choice([2, 3, 4, 7, 8, 11, 12]) if r.random() < 0.8 else r.randrange(0, 20)
    body = bytearray(r.randrange(256) for _ in range(max(0, n - 2)))
    if len(body) >= 1 and t in (7, 131, 137):
        body[0] = r.choice([4, 4, 8, 12, n + 1, r.randrange(0, 16)])
    if len(body) >= 2 and t == 68:
        body[0] = r.choice([5, 5, 9, 13, n + 1, r.randrange(0, 16)])
        body[1] = r.choice([0, 1, 3, 0xf0, 0xe1, 0x32, r.randrange(256)])
    if len(body) >= 2 and t == 148 and r.random() < 0.7:
        body[0] = body[1] = 0
    return bytes([t, n & 0xff]) + bytes(body)


def opts4(r):
    o = b"".join(rnd_opt4(r) for _ in range(r.randrange(1, 5)))[:40]
    return o + b"\0" * (-len(o) % 4)


def rnd_tlv(r):
    k = r.random()
    if k < 0.15:
        return bytes([0])                                   # Pad1
    if k < 0.35:                                            # PadN
        n = r.choice([0, 1, 2, 3, 4, 5, 6, r.randrange(0, 12)])
        return bytes([1, n]) + (bytes(n) if r.random() < 0.85 else bytes(r.randrange(256) for _ in range(n)))
    t = r.choice([5, 5, 194, 7, 49, 49, 201, 0x1e, 0x3e, 0x5e, 0x7e, 0x9e, 0xbe, 0xde, 0xfe, 0x23, 0x63])
    n = r.choice([0, 2, 2, 4, 6, r.randrange(0, 10)])
    return bytes([t, n]) + bytes(r.randrange(256) if r.random() < 0.3 else 0 for _ in range(n))


def ext6(r, nxt):
    """(type, bytes) of one random extension header whose next header is nxt."""
    k = r.random()
    if k < 0.75:
        ht = 0 if k < 0.35 else 60
        b = b"".join(rnd_tlv(r) for _ in range(r.randrange(1, 11)))
        if r.random() < 0.85:
            b += b"\0" * (-(len(b) + 2) % 8)                # Pad1s to fill
        else:
            b = (b + b"\0" * 8)[:max(6, len(b) - len(b) % 8 + 6)]
        units = (len(b) + 2) // 8 - 1
        if r.random() < 0.05:
            units += 1                                      # runs past its bytes
        return ht, bytes([nxt, units & 0xff]) + b[:(units + 1) * 8 - 2].ljust((units + 1) * 8 - 2, b"\0")
    rtype = r.choice([0, 0, 2, 3, 4, 4, 9, 253])
    left = r.choice([0, 0, 1, 2])
    return 43, bytes([nxt, 2, rtype, left]) + bytes(4) + bytes.fromhex("fd530006" + "00" * 11 + "53")


def query4(name, sport, dnsid):
    """The UDP header and payload of a query for name over IPv4."""
    return bytes(IP(bytes(IP(src=CLI4, dst=SRV4) / UDP(sport=sport, dport=53) /
                          DNS(id=dnsid, rd=1, qd=DNSQR(qname=name))))[UDP])


def with_opts(hdr, o, data):
    """The IPv4 packet of header hdr (20 bytes), options o as they are,
    lies and all (scapy would fix them), and data: its length, header
    length and header checksum set."""
    ihl = 5 + len(o) // 4
    raw = bytearray(hdr[:20]) + bytearray(o) + bytearray(data)
    raw[0] = 0x40 | ihl
    raw[2:4] = len(raw).to_bytes(2, "big")
    raw[10:12] = b"\0\0"
    s = sum(int.from_bytes(raw[j:j + 2], "big") for j in range(0, ihl * 4, 2))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    raw[10:12] = (~s & 0xffff).to_bytes(2, "big")
    return IP(bytes(raw))


def whole():
    """The queries unfragmented, the options on each."""
    r = random.Random(2113)
    for i in range(200):
        q = query4("w%03d.fuzz.example" % i, 45000 + i, 0x5800 + i)
        send(with_opts(bytes(IP(src=CLI4, dst=SRV4, id=0x6800 + i, proto=17) / Raw(q)),
                       opts4(r), q))
        time.sleep(0.005)
    for i in range(200):
        name = "w%03d.fuzz.example" % (200 + i)
        q = udp(name, 46000 + i, 0x5800 + 200 + i)
        ht, hb = ext6(r, 17)
        send(IPv6(src=SRC, dst=DST, nh=ht) / Raw(hb + q))
        time.sleep(0.005)


def ping():
    """Echo requests under the options, for the kernel to take or not."""
    r = random.Random(2114)
    for i in range(150):
        m = bytes(ICMP(type=8, id=0x77, seq=i) / Raw(b"ping-opts-%03d" % i))
        send(with_opts(bytes(IP(src=CLI4, dst=SRV4, id=0x6900 + i, proto=1) / Raw(m)),
                       opts4(r), m))
        time.sleep(0.005)
    for i in range(150):
        m = bytes(IPv6(bytes(IPv6(src=SRC, dst=DST) / ICMPv6EchoRequest(
            id=0x77, seq=150 + i, data=b"ping-opts-%03d" % (150 + i))))[ICMPv6EchoRequest])
        ht, hb = ext6(r, 58)
        send(IPv6(src=SRC, dst=DST, nh=ht) / Raw(hb + m))
        time.sleep(0.005)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "whole":
        return whole()
    if len(sys.argv) > 1 and sys.argv[1] == "ping":
        return ping()
    r = random.Random(2112)
    for i in range(N4):
        q = query4("c%03d.fuzz.example" % i, 43000 + i, 0x5000 + i)
        o = opts4(r)
        first = IP(src=CLI4, dst=SRV4, id=0x6000 + i, flags="MF", frag=0, proto=17,
                   ihl=5 + len(o) // 4, options=[]) / Raw(q[:16])
        send(with_opts(bytes(first), o, q[:16]))
        time.sleep(0.005)
        send(IP(src=CLI4, dst=SRV4, id=0x6000 + i, frag=2, proto=17) / Raw(q[16:]))
        time.sleep(0.005)
    for i in range(N6):
        name = "c%03d.fuzz.example" % (N4 + i)
        q = udp(name, 44000 + i, 0x5000 + N4 + i)
        ht, hb = ext6(r, 44)
        fh1 = bytes([17, 0, 0x00, 0x01]) + (0x7000 + i).to_bytes(4, "big")    # offset 0, M
        fh2 = bytes([17, 0, 0x00, 0x10]) + (0x7000 + i).to_bytes(4, "big")    # offset 16
        send(IPv6(src=SRC, dst=DST, nh=ht) / Raw(hb + fh1 + q[:16]))
        time.sleep(0.005)
        send(IPv6(src=SRC, dst=DST, nh=44) / Raw(fh2 + q[16:]))
        time.sleep(0.005)


if __name__ == "__main__":
    main()
