#!/usr/bin/python3
"""hostile_pcap.py OUT - write a small pcap whose names are HTML.

One TCP connection from the sandbox (10.99.0.10) straight to 10.99.0.80:80
(so proxy_bypass) carrying an HTTP Upgrade: websocket request (so websocket,
whose subject and summary are the Host header). The Host header is markup
that would run script and add elements if the dashboard ever inserted data
as HTML instead of text. Written by hand (no scapy): Ethernet, IPv4, TCP
with correct checksums, fixed times and sequence numbers.
"""
import struct
import sys

HOST = ('<img src=x id=xss-img onerror=document.body.setAttribute(\'data-xss\',1)>'
        '<b id=xss-b>x</b>.example.test')
T0 = 1795953600  # 2026-11-29T12:00:00Z, after the other fixtures


def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ip4(a):
    return bytes(int(x) for x in a.split('.'))


def frame(src, sport, dst, dport, seq, ack, flags, payload=b''):
    tcp = struct.pack('!HHIIBBHHH', sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0) + payload
    pseudo = ip4(src) + ip4(dst) + struct.pack('!BBH', 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack('!H', csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, ip4(src), ip4(dst))
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    eth = b'\x02\x00\x00\x00\x00\x02' + b'\x02\x00\x00\x00\x00\x01' + b'\x08\x00'
    return eth + ip + tcp


def main():
    c, s = '10.99.0.10', '10.99.0.80'
    cp, sp = 40123, 80
    req = ('GET /chat HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
           'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n' % HOST).encode()
    resp = (b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
            b'Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n')
    SYN, ACK, PSH = 0x02, 0x10, 0x08
    pkts = [
        frame(c, cp, s, sp, 1000, 0, SYN),
        frame(s, sp, c, cp, 5000, 1001, SYN | ACK),
        frame(c, cp, s, sp, 1001, 5001, ACK),
        frame(c, cp, s, sp, 1001, 5001, PSH | ACK, req),
        frame(s, sp, c, cp, 5001, 1001 + len(req), PSH | ACK, resp),
        frame(c, cp, s, sp, 1001 + len(req), 5001 + len(resp), ACK),
    ]
    with open(sys.argv[1], 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(pkts):
            f.write(struct.pack('<IIII', T0, i * 1000, len(p), len(p)) + p)


if __name__ == '__main__':
    main()
