#!/usr/bin/python3
"""pending_fill.py OUT.pcap [N] - fill the HTTP module's 32 MiB pending budget
(analyzers/pending.c) from N (default 3,000) connections, each pipelining 16 requests
(Host 300 bytes, target 600 bytes) that are never answered, then N/10 connections each pipelining 16 small\nrequests (the budget's last bytes); then connection V sends
"HEAD /a" and "GET /b" (pipelined), and the server answers the HEAD with
Content-Length: 1000 and no body, as RFC 9110 9.3.2 says, then the GET with a
2-byte body. With N = 0: the control."""
import sys
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "review18"))
from pcapgen import Pcap, Conn  # review18's TCP conversation writer
out = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
p = Pcap(out)
for i in range(n):
    c = Conn(p, "10.1.%d.2" % (i // 30000), 10000 + i % 30000, "10.9.2.%d" % (1 + i % 200), 80)
    reqs = b"".join(b"GET /" + b"u" * 600 + b" HTTP/1.1\r\nHost: " + b"h" * 300 + b".test\r\n\r\n"
                    for _ in range(16))
    c.send(reqs, mss=1448)
for i in range(n // 10):  # then small ones, for the budget's last bytes
    c = Conn(p, "10.2.%d.2" % (i // 30000), 10000 + i % 30000, "10.9.3.%d" % (1 + i % 200), 80)
    c.send(b"".join(b"GET / HTTP/1.1\r\nHost: s\r\n\r\n" for _ in range(16)), mss=1448)
v = Conn(p, "10.1.200.2", 45000, "10.9.0.80", 80)
v.send(b"HEAD /a HTTP/1.1\r\nHost: v.test\r\n\r\nGET /b HTTP/1.1\r\nHost: v.test\r\n\r\n")
v.recv(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
v.recv(b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")
v.fin()
p.close()
