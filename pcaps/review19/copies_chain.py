"""copies_chain.py - CPU of the copies memory (sensor/copies.c) when one source
repeats one datagram: every repeat is remembered (a retransmission is read again),
all in one bucket chain, so each packet walks up to COPIES_MAX entries in
copies_seen and again in unlink_entry.
  copies_same.pcap:  N identical 60-byte UDP datagrams, 10 us apart (iface of file 1)
  copies_diff.pcap:  N datagrams differing in one payload byte pair (control)
  copies_other.pcap: one datagram (a second capture source so --merge turns copies on)
usage: copies_chain.py DIR N"""
import sys, struct
sys.path.insert(0, __import__("os").path.dirname(__file__))
from udpgen import Pcap
d, n = sys.argv[1], int(sys.argv[2])
for name, vary in (("copies_same", False), ("copies_diff", True)):
    p = Pcap(f"{d}/{name}.pcap")
    for i in range(n):
        pl = b"x" * 30 + (struct.pack("!I", i) if vary else b"\0\0\0\0")
        p.udp("10.1.0.2", "10.9.9.9", 40000, 7777, pl, t=1_700_000_000.0 + i * 1e-5)
    p.close()
p = Pcap(f"{d}/copies_other.pcap")
p.udp("10.1.0.3", "10.9.9.8", 40001, 7778, b"y" * 10, t=1_700_000_000.0)
p.close()
