#!/usr/bin/python3
"""dns_pp_bigtlv_client.py SERVER: DNS over TCP behind a PROXY v2 header whose TLVs
(PP2_TYPE_NOOP, 0x04) make it SIZE bytes long, for each SIZE of 1,000 (control),
16,000 and 20,000; then the same over UDP. Prints what came back."""
import socket, struct, sys
srv = sys.argv[1]
SIG = b"\r\n\r\n\x00\r\nQUIT\n"

def q(id, name):
    out = struct.pack("!HHHHHH", id, 0x0100, 1, 0, 0, 0)
    for l in name.split("."):
        out += bytes([len(l)]) + l.encode()
    return out + b"\x00\x00\x01\x00\x01"

def v2(src, sport, dst, dport, total, udp=False):
    body = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!HH", sport, dport)
    pad = total - 16 - len(body) - 3
    body += b"\x04" + struct.pack("!H", pad) + b"\0" * pad
    return SIG + bytes([0x21, 0x12 if udp else 0x11]) + struct.pack("!H", len(body)) + body

def show(r):
    return "id=%d rcode=%d an=%d" % (struct.unpack("!H", r[:2])[0], r[3] & 15,
                                     struct.unpack("!H", r[6:8])[0])

for i, size in enumerate((1000, 16000, 20000)):
    s = socket.create_connection((srv, 53), timeout=3)
    m = q(10 + i, "tlv%d.pp.test" % size)
    s.sendall(v2("192.0.2.10", 40000 + i, srv, 53, size) + struct.pack("!H", len(m)) + m)
    try:
        hdr = s.recv(2, socket.MSG_WAITALL)
        n = struct.unpack("!H", hdr)[0]
        print("tcp v2 tlv", size, show(s.recv(n, socket.MSG_WAITALL)))
    except Exception as e:
        print("tcp v2 tlv", size, "error", e)
    s.close()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(3)
for i, size in enumerate((1000, 20000)):
    u.sendto(v2("192.0.2.10", 41000 + i, srv, 53, size, True) + q(20 + i, "udp%d.pp.test" % size), (srv, 53))
    try:
        print("udp v2 tlv", size, show(u.recv(4096)))
    except OSError as e:
        print("udp v2 tlv", size, "error", e)
