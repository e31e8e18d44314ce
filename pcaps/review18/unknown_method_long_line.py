#!/usr/bin/python3
"""unknown_method_long_line.py OUT.pcap - review F15: a request line over 8 KiB whose
method is on no list, which nginx with `large_client_header_buffers 4 32k` serves
(its `return 200` takes any method), then an ordinary request on the same keep-alive
connection. Before the fix the flow was never claimed: no event at all.
  flow A: "FOO /" + 9,000 x "a" + " HTTP/1.1", Host www.hidden.test, then
          GET /after-foo (Host www.after.test), in 1,448-byte segments
  flow B: the same with a 15,000-byte target, in 700-byte segments
  flow C: the same 9,000-byte line in one 9,100-byte segment (an offload's)
  flow D: control, not HTTP: the same long line ending in RTSP/1.0 (no event)"""
import sys
from pcapgen import Pcap, Conn

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"

def request(n, version=b"HTTP/1.1"):
    return b"FOO /" + b"a" * n + b" " + version + b"\r\nHost: www.hidden.test\r\n\r\n"

AFTER = b"GET /after-foo HTTP/1.1\r\nHost: www.after.test\r\n\r\n"

if __name__ == "__main__":
    p = Pcap(sys.argv[1])
    for port, n, mss in ((42001, 9000, 1448), (42002, 15000, 700), (42003, 9000, 9100)):
        c = Conn(p, "10.0.0.10", port, "10.0.0.80", 83)
        c.send(request(n), mss=mss)
        c.recv(OK)
        c.send(AFTER)
        c.recv(OK)
        c.fin()
    d = Conn(p, "10.0.0.10", 42004, "10.0.0.80", 83)
    d.send(request(9000, b"RTSP/1.0"), mss=1448)
    d.fin()
    p.close()
