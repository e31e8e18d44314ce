#!/usr/bin/python3
"""far_head.py OUT.pcap [big] - heads longer than 64 KiB that servers take, crafted
(review18's TCP conversation writer, ../../review18/pcapgen.py; same bytes every run).

Without 'big' (the committed far_head.pcap, 140 KB):
  1. 10.1.0.2 -> 10.9.0.80:80 (a relay that forwards by Host): GET /computeMetadata/v1/
     with 66 KB of filler fields, then Host: metadata.google.internal and
     Metadata-Flavor: Google: a metadata probe behind the 64 KiB bound;
  2. two requests, answered by a 200 whose head is 66 KB of fields, then
     Content-Length: 17 and a body that looks like a status line
     ("HTTP/1.1 500 Fake"), then a 204: the 204 answers the second request.
With 'big' (written at test time by tests/pcap/far_head.py, 10 MB):
  3. Go's bound: 1,000,000 bytes of filler fields (net/http takes 1 MiB + 4 KiB),
     then Host, Content-Length: 39, a body that looks like a request, the next request;
  4. past the sensor's second bound (HTTP_HEAD_FAR, 8 MiB): 8.5 MB of filler and no
     Host before it: reported there, the rest of the head skipped to its empty line,
     the next request read."""
import sys
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "review18"))
from pcapgen import Pcap, Conn  # review18's TCP conversation writer


def filler(total, line=1000):
    one = b"X-Filler: " + b"f" * (line - 12) + b"\r\n"
    return one * (total // line + 1)


FAKE = b"GET /fake HTTP/1.1\r\nHost: fake.test\r\n\r\n"  # 39 bytes
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
p = Pcap(sys.argv[1])
big = len(sys.argv) > 2 and sys.argv[2] == "big"
if not big:
    c = Conn(p, "10.1.0.2", 42000, "10.9.0.80", 80)
    c.send(b"GET /computeMetadata/v1/ HTTP/1.1\r\n" + filler(66000) +
           b"Host: metadata.google.internal\r\nMetadata-Flavor: Google\r\n\r\n", mss=1448)
    c.recv(OK)
    c.fin()
    c = Conn(p, "10.1.0.2", 42001, "10.9.0.80", 80)
    c.send(b"GET /r1 HTTP/1.1\r\nHost: r.test\r\n\r\nGET /r2 HTTP/1.1\r\nHost: r2.test\r\n\r\n")
    c.recv(b"HTTP/1.1 200 OK\r\n" + filler(66000) + b"Content-Length: 17\r\n\r\nHTTP/1.1 500 Fake"
           + b"HTTP/1.1 204 No Content\r\n\r\n", mss=1448)
    c.fin()
else:
    c = Conn(p, "10.1.0.2", 42002, "10.9.0.80", 80)
    c.send(b"POST /go-bound HTTP/1.1\r\n" + filler(1000000) +
           b"Host: www.evil.test\r\nContent-Length: 39\r\n\r\n" + FAKE +
           b"GET /next HTTP/1.1\r\nHost: www.decoy.test\r\n\r\n", mss=1448)
    c.recv(OK + OK)
    c.fin()
    c = Conn(p, "10.1.0.2", 42003, "10.9.0.80", 80)
    c.send(b"GET /past-far HTTP/1.1\r\n" + filler(8500000) + b"Host: lost.test\r\n\r\n" +
           b"GET /after-far HTTP/1.1\r\nHost: www.after.test\r\n\r\n", mss=1448)
    c.recv(b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n\r\n" + OK)
    c.fin()
p.close()
