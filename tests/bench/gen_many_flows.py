#!/usr/bin/env python3
"""gen_many_flows.py - a capture of many TCP connections left open, each
with its client's first bytes sent and nothing answered, to see what a
claimed flow costs the analyzers (peak RSS of a replay).

  gen_many_flows.py KIND N OUT.pcap

KIND says what each client sends after the handshake:
  none     64 bytes no analyzer claims (the flow table's cost alone)
  http     one GET with a short Host, unanswered (a typical open request)
  http16   16 pipelined GETs whose Host and target fill the pairing
           bounds (256 and 512 bytes kept), unanswered: the most a flow
           may remember
  h2c      the HTTP/2 preface, SETTINGS and one request, unanswered
  h2c16    the preface and 16 requests as http16's
Connections go from 10.<a>.<b>.<c>:40000 to 10.255.0.1:80, 10 us apart
(Ethernet, IPv4); the same arguments give the same bytes.
tests/bench/appstate.sh replays them.
"""
import struct
import sys


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(src, dst, sport, dport, seq, ack, flags, payload=b""):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0)
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp) + len(payload))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp + payload)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(payload), 0, 0x4000, 64, 6,
                     0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    eth = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00"
    return eth + ip + tcp + payload


def hp_int(prefix_bits, flags, v):
    mx = (1 << prefix_bits) - 1
    if v < mx:
        return bytes([flags | v])
    out = [flags | mx]
    v -= mx
    while v >= 128:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def hp_lit(idx, value):
    """a literal field without indexing, its name static-table entry idx"""
    return hp_int(4, 0, idx) + hp_int(7, 0, len(value)) + value


def h2_frame(ftype, flags, sid, payload):
    n = len(payload)
    return struct.pack("!BHBBI", n >> 16, n & 0xFFFF, ftype, flags, sid) + payload


def h2_request(sid, host, path):
    block = b"\x82\x86" + hp_lit(4, path) + hp_lit(1, host)
    return h2_frame(1, 0x05, sid, block)


def payload(kind, i):
    big_host = (b"f%d-" % i).ljust(300, b"h")
    big_uri = b"/" + b"u" * 600
    if kind == "none":
        return bytes((i + k) & 0xFF for k in range(64)) + b"\x00\x01"
    if kind == "http":
        return b"GET /index.html HTTP/1.1\r\nHost: www.example.com\r\nAccept: */*\r\n\r\n"
    if kind == "http16":
        return b"".join(b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (big_uri, big_host)
                        for _ in range(16))
    pre = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(4, 0, 0, b"")
    if kind == "h2c":
        return pre + h2_request(1, b"www.example.com", b"/index.html")
    if kind == "h2c16":
        return pre + b"".join(h2_request(2 * k + 1, big_host, big_uri) for k in range(16))
    raise SystemExit("gen_many_flows: KIND is none, http, http16, h2c or h2c16")


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    srv = bytes([10, 255, 0, 1])
    t = 1796032800 * 1000000
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))

        def put(fr):
            nonlocal t
            f.write(struct.pack("<IIII", t // 1000000, t % 1000000, len(fr), len(fr)) + fr)
            t += 10

        for i in range(n):
            cli = bytes([10, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF])
            cs, ss = 1000, 5000
            pl = payload(kind, i)
            put(frame(cli, srv, 40000, 80, cs, 0, 0x02))
            put(frame(srv, cli, 80, 40000, ss, cs + 1, 0x12))
            put(frame(cli, srv, 40000, 80, cs + 1, ss + 1, 0x10))
            off = 0
            while off < len(pl):  # segments of at most 1448 bytes
                seg = pl[off:off + 1448]
                put(frame(cli, srv, 40000, 80, cs + 1 + off, ss + 1, 0x18, seg))
                off += len(seg)
            put(frame(srv, cli, 80, 40000, ss + 1, cs + 1 + len(pl), 0x10))


main()
