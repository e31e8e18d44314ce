"""pcapgen.py - a small, fast writer of TCP/IPv4 conversations into a pcap (Ethernet),
with a proper handshake, sequence and acknowledgement numbers and checksums. Used by
the review's repro scripts (deterministic: same bytes every run)."""
import struct

def _csum(b):
    if len(b) & 1:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

def _ip(a):
    return bytes(int(x) for x in a.split("."))

class Pcap:
    def __init__(self, path):
        self.f = open(path, "wb")
        self.f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
        self.t = 1_700_000_000.0

    def tick(self, dt=0.0001):
        self.t += dt

    def raw(self, src, dst, sport, dport, seq, ack, flags, payload=b""):
        self.tick()
        s, d = _ip(src), _ip(dst)
        tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff, ack & 0xffffffff,
                          5 << 4, flags, 65535, 0, 0) + payload
        c = _csum(s + d + struct.pack("!BBH", 0, 6, len(tcp)) + tcp)
        tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0, s, d)
        ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
        fr = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00" + ip + tcp
        sec = int(self.t)
        self.f.write(struct.pack("<IIII", sec, int((self.t - sec) * 1e6), len(fr), len(fr)) + fr)

    def close(self):
        self.f.close()

class Conn:
    """c = Conn(pcap, "10.0.0.1", 40000, "10.0.0.2", 80); c.send(b"..."); c.recv(b"...")"""
    def __init__(self, p, cip, cport, sip, sport, isn_c=1000, isn_s=5000):
        self.p, self.c, self.s = p, (cip, cport), (sip, sport)
        self.cs, self.ss = isn_c, isn_s
        p.raw(cip, sip, cport, sport, self.cs, 0, 0x02)
        p.raw(sip, cip, sport, cport, self.ss, self.cs + 1, 0x12)
        self.cs += 1; self.ss += 1
        p.raw(cip, sip, cport, sport, self.cs, self.ss, 0x10)

    def send(self, data, mss=1460, ack=True):
        """client -> server, in segments of at most mss bytes"""
        for i in range(0, len(data), mss):
            seg = data[i:i + mss]
            self.p.raw(*self.c, *self.s, self.cs, self.ss, 0x18, seg) if False else \
                self.p.raw(self.c[0], self.s[0], self.c[1], self.s[1], self.cs, self.ss, 0x18, seg)
            self.cs += len(seg)
        if ack:
            self.p.raw(self.s[0], self.c[0], self.s[1], self.c[1], self.ss, self.cs, 0x10)

    def recv(self, data, mss=1460, ack=True):
        """server -> client"""
        for i in range(0, len(data), mss):
            seg = data[i:i + mss]
            self.p.raw(self.s[0], self.c[0], self.s[1], self.c[1], self.ss, self.cs, 0x18, seg)
            self.ss += len(seg)
        if ack:
            self.p.raw(self.c[0], self.s[0], self.c[1], self.s[1], self.cs, self.ss, 0x10)

    def fin(self):
        p = self.p
        p.raw(self.c[0], self.s[0], self.c[1], self.s[1], self.cs, self.ss, 0x11)
        p.raw(self.s[0], self.c[0], self.s[1], self.c[1], self.ss, self.cs + 1, 0x11)
        p.raw(self.c[0], self.s[0], self.c[1], self.s[1], self.cs + 1, self.ss + 1, 0x10)
