#!/usr/bin/python3
"""copies_frag.py OUTDIR - one fragmented UDP DNS query (1,600 bytes, two fragments)
seen on two capture sources with the fragments interleaved, as a bridge forwards each
fragment as it comes: a.pcap has fragment 1 at t and 2 at t+20 us, b.pcap the same
fragments at t+10 us and t+30 us. Replay with --merge."""
import sys, struct
from scapy.all import IP, UDP, Ether, raw, fragment, DNS, DNSQR, DNSRROPT
out = sys.argv[1]
# an OPT record with a 1,500-byte option (code 65001) makes the query 1,600 bytes
q = raw(DNS(id=0x4242, rd=1, arcount=1, qd=DNSQR(qname="frag-copy.example.net")))
q += b"\x00\x00\x29\x10\x00\x00\x00\x00\x00" + struct.pack("!H", 1504) + struct.pack("!HH", 65001, 1500) + b"p" * 1500
pkt = IP(src="10.1.0.2", dst="10.9.9.53", id=777, ttl=64) / UDP(sport=40123, dport=53) / q
frags = fragment(pkt, fragsize=1000)
assert len(frags) == 2
def write(name, times):
    with open(f"{out}/{name}", "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
        for fr, t in zip(frags, times):
            d = raw(Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:50") / fr)
            f.write(struct.pack("<IIII", 1700000000, t, len(d), len(d)) + d)
write("copies_frag_a.pcap", (100, 120))
write("copies_frag_b.pcap", (110, 130))
