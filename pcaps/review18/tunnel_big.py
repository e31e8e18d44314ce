#!/usr/bin/python3
"""tunnel_big.py OUT.pcap - HTTP CONNECT, answered 200, then a 21 KB ClientHello (a
21,000-byte padding extension before server_name www.hidden.test) sent in the tunnel
as one 21 KB segment (what a capture on a veth with TSO/GSO holds for one write):
  flow A: the hello in one offload segment after CONNECT (read: the window slid to 0)
  flow B: the same hello sent directly (a direction starting with 0x16 0x03: wide
          window, SNI read)                                     - the control
  flow C: the CONNECT hello in 1,448-byte segments (walked, SNI read) - the control
  flow D: a CONNECT whose head is 12 KB (read a line at a time), then the hello in
          1,448-byte segments"""
import sys, struct
from pcapgen import Pcap, Conn

def ext(t, body):
    return struct.pack("!HH", t, len(body)) + body

def hello(sni=b"www.hidden.test", pad=21000):
    name = b"\0" + struct.pack("!H", len(sni)) + sni
    exts = ext(21, b"\0" * pad) + ext(0, struct.pack("!H", len(name)) + name) + \
        ext(43, b"\x02\x03\x04") + ext(13, b"\x00\x02\x04\x03") + \
        ext(10, b"\x00\x02\x00\x1d") + ext(51, b"\x00\x24\x00\x1d\x00\x20" + b"\x11" * 32)
    body = b"\x03\x03" + b"\x22" * 32 + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00" + \
        struct.pack("!H", len(exts)) + exts
    msg = b"\x01" + struct.pack("!I", len(body))[1:] + body
    recs = b""
    for i in range(0, len(msg), 16384):
        part = msg[i:i + 16384]
        recs += b"\x16\x03\x01" + struct.pack("!H", len(part)) + part
    return recs

if __name__ == "__main__":
    H = hello()
    p = Pcap(sys.argv[1])
    a = Conn(p, "10.0.0.10", 41001, "10.0.0.3", 3128)
    a.send(b"CONNECT www.decoy.test:443 HTTP/1.1\r\nHost: www.decoy.test:443\r\n\r\n")
    a.recv(b"HTTP/1.1 200 Connection established\r\n\r\n")
    a.send(H, mss=len(H))
    b = Conn(p, "10.0.0.10", 41002, "10.0.0.4", 443)
    b.send(H, mss=len(H))
    c = Conn(p, "10.0.0.10", 41003, "10.0.0.3", 3128)
    c.send(b"CONNECT www.decoy.test:443 HTTP/1.1\r\nHost: www.decoy.test:443\r\n\r\n")
    c.recv(b"HTTP/1.1 200 Connection established\r\n\r\n")
    c.send(H, mss=1448)
    d = Conn(p, "10.0.0.10", 41004, "10.0.0.3", 3128)
    d.send(b"CONNECT www.decoy.test:443 HTTP/1.1\r\n" + b"".join(b"X-Pad-%d: %s\r\n" % (i, b"p" * 3900) for i in range(3)) + b"Host: www.decoy.test:443\r\n\r\n", mss=1448)
    d.recv(b"HTTP/1.1 200 Connection established\r\n\r\n")
    d.send(H, mss=1448)
    p.close()
