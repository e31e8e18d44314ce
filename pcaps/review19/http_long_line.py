#!/usr/bin/python3
"""http_long_line.py OUT.pcap - request lines of 9,000 / 20,000 / 40,000 bytes, with a
known method (GET) and an unknown one (FOO), each followed by Host; then a plain
keep-alive request on the same connection. One connection per case."""
import sys
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "review18"))
from pcapgen import Pcap, Conn  # review18's TCP conversation writer
p = Pcap(sys.argv[1])
port = 41000
for meth in (b"GET", b"FOO"):
    for n in (9000, 20000, 40000):
        c = Conn(p, "10.1.0.2", port, "10.9.0.80", 80); port += 1
        tag = b"%s-%d" % (meth.lower(), n)
        c.send(meth + b" /" + b"a" * n + b" HTTP/1.1\r\nHost: " + tag + b".long.test\r\n\r\n", mss=1448)
        c.recv(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        c.send(b"GET /next HTTP/1.1\r\nHost: next-" + tag + b".long.test\r\n\r\n")
        c.recv(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        c.fin()
p.close()
