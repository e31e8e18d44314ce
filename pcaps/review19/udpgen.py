"""udpgen.py - a minimal pcap writer of UDP/IPv4 datagrams (Ethernet, checksums right)."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "review18"))
from pcapgen import _csum, _ip  # review18's checksum and address helpers

class Pcap:
    def __init__(self, path, t0=1_700_000_000.0):
        self.f = open(path, "wb")
        self.f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
        self.t = t0

    def frame(self, fr, t=None):
        t = self.t if t is None else t
        sec = int(t)
        self.f.write(struct.pack("<IIII", sec, int(round((t - sec) * 1e6)), len(fr), len(fr)) + fr)

    def udp(self, src, dst, sport, dport, payload, ttl=64, ipid=1, tos=0, t=None, opts=b""):
        s, d = _ip(src), _ip(dst)
        u = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
        c = _csum(s + d + struct.pack("!BBH", 0, 17, len(u)) + u) or 0xffff
        u = u[:6] + struct.pack("!H", c) + u[8:]
        ihl = 5 + len(opts) // 4
        ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, ihl * 4 + len(u), ipid, 0, ttl, 17, 0, s, d) + opts
        ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
        self.frame(b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00" + ip + u, t)

    def close(self):
        self.f.close()

def dns_query(name, txid=0x1234, qtype=1):
    q = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    return struct.pack("!HHHHHH", txid, 0x0100, 1, 0, 0, 0) + q + struct.pack("!HH", qtype, 1)
