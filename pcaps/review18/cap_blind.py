#!/usr/bin/python3
"""cap_blind.py OUT.pcap [N] [narrow] - N (default 520) connections, kept open, each
opening with one 20,000-byte segment (over FLOW_SEG_WIRE_MAX and over the 16 KiB
window: the direction widens to 132 KiB, flow.c stream_add) and then 112 KiB more of
bytes no analyzer claims; then a plain HTTP request on a new connection. 520 x 132 KiB
fill stream_total_max (64 MiB) and the request is not seen.
With "narrow": the same bytes in 1,448-byte segments (no widening): it then takes
N = 4,200 connections of 16 KiB each (the weakness predates the widening; the
widening cuts the number of connections by 8).
With "under": 16,000 bytes each in 1,448-byte segments, under the 16 KiB window,
so no direction is full and none is released at stream_max: 4,200 of them still
fill the cap (added after the review, for the reclaim sweep, flow.c "Reclaim").
With "claimed": connections an analyzer claims, each left waiting in the middle of
a message: an HTTP head of 7,900 bytes with no end (to port 80), a TLS ClientHello
of 40 KB (three records) of which 15,000 bytes are sent (443), a DNS message over TCP
with 15,000 of its 65,535 bytes sent (53), in turn; 7,200 of them fill the cap
with windows the analyzers still read (the sweep takes those too).
With "keepalive": HTTP keep-alive connections (port 80), each with one request
of a 12 KB head answered, idle between two requests: their windows, all read
but still 16 KiB each, fill the cap; after the new connection, the first 10
send a second request (Host www.hidden.test), which must still be read (the
sweep takes only the buffer of a direction whose bytes were all read)."""
import sys
from pcapgen import Pcap, Conn
out = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 520
mode = sys.argv[3] if len(sys.argv) > 3 else ""
narrow = mode == "narrow"
p = Pcap(out)
conns = []
for i in range(n):
    kind = i % 3
    c = Conn(p, "10.0.%d.10" % (i // 4000), 20000 + i % 4000, "10.0.1.%d" % (1 + i % 200),
             (80, 443, 53)[kind] if mode == "claimed" else 80 if mode == "keepalive" else 9000)
    if mode == "keepalive":
        head = b"GET /first HTTP/1.1\r\nHost: www.idle.test\r\n"
        while len(head) < 12000:
            head += b"X-Idle: waiting\r\n"
        c.send(head + b"\r\n", mss=1448)
        c.recv(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        conns.append(c)
        continue
    if mode == "claimed":
        if kind == 0:
            head = b"GET /idle HTTP/1.1\r\nHost: www.idle.test\r\n"
            while len(head) < 7900:
                head += b"X-Idle: waiting\r\n"
            c.send(head, mss=1448)
        elif kind == 1:
            pad = 40000
            ext = b"\x00\x15" + pad.to_bytes(2, "big")
            body = (b"\x03\x03" + bytes(32) + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00" +
                    (len(ext) + pad).to_bytes(2, "big") + ext)
            hs = b"\x01" + (len(body) + pad).to_bytes(3, "big") + body
            rec = b"\x16\x03\x01" + (16384).to_bytes(2, "big") + hs  # the first of 3 records
            c.send(rec + b"\x00" * (15000 - len(rec)), mss=1448)
        else:
            c.send(b"\xff\xff" + b"\x12\x34\x01\x00\x00\x01" + b"Q" * 14992, mss=1448)
        continue
    if mode == "under":
        c.send(b"Z" * 16000, mss=1448)
    elif narrow:
        c.send(b"Z" * 16500, mss=1448)
    else:
        c.send(b"Z" * 20000, mss=20000)
        c.send(b"Z" * (132 * 1024 - 20000 - 100), mss=1448)
v = Conn(p, "10.0.9.10", 45000, "10.0.2.1", 80)
v.send(b"GET /after-the-cap-is-full HTTP/1.1\r\nHost: www.hidden.test\r\n\r\n")
v.recv(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
v.fin()
for i, c in enumerate(conns[:10]):
    c.send(b"GET /second-%d HTTP/1.1\r\nHost: www.hidden.test\r\n\r\n" % i)
    c.recv(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
p.close()
