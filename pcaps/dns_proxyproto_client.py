#!/usr/bin/python3
"""dns_proxyproto_client.py SERVER: DNS queries behind PROXY protocol headers, as
record_dns_proxyproto.sh sends them: TCP without a header; TCP with a v2 header then two
queries; TCP with a v1 line then a query; UDP with a v2 header then a query. Prints what
came back (or the error). Every socket times out after 3 s. Its q, v2, show and tcp are
review19/dns_pp_bigtlv_client.py's too."""
import socket, struct, sys
SIG = b"\r\n\r\n\x00\r\nQUIT\n"

def q(id, name):
    out = struct.pack("!HHHHHH", id, 0x0100, 1, 0, 0, 0)
    for l in name.split("."):
        out += bytes([len(l)]) + l.encode()
    return out + b"\x00\x00\x01\x00\x01"

def v2(src, sport, dst, dport, udp=False, total=0):
    """A PROXY v2 PROXY header; with total, padded to total bytes by a NOOP TLV (0x04)."""
    body = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!HH", sport, dport)
    if total:
        pad = total - 16 - len(body) - 3
        body += b"\x04" + struct.pack("!H", pad) + b"\0" * pad
    return SIG + bytes([0x21, 0x12 if udp else 0x11]) + struct.pack("!H", len(body)) + body

def show(r):
    return "id=%d rcode=%d an=%d" % (struct.unpack("!H", r[:2])[0], r[3] & 15,
                                     struct.unpack("!H", r[6:8])[0])

def tcp(srv, label, pre, msgs):
    s = socket.create_connection((srv, 53), timeout=3)
    data = pre + b"".join(struct.pack("!H", len(m)) + m for m in msgs)
    s.sendall(data)
    got = []
    try:
        for _ in msgs:
            hdr = s.recv(2, socket.MSG_WAITALL)
            if len(hdr) < 2:
                break
            n = struct.unpack("!H", hdr)[0]
            got.append(show(s.recv(n, socket.MSG_WAITALL)))
    except OSError as e:
        got.append("error %s" % e)
    s.close()
    return got

def main():
    srv = sys.argv[1]
    for label, pre, msgs in (
            ("tcp plain", b"", [q(1, "plain.pp.test")]),
            ("tcp v2", v2("192.0.2.10", 40000, srv, 53),
             [q(2, "v2-tcp.pp.test"), q(3, "v2-tcp-second.pp.test")]),
            ("tcp v1", b"PROXY TCP4 192.0.2.10 %s 40001 53\r\n" % srv.encode(),
             [q(4, "v1-tcp.pp.test")])):
        print(label, tcp(srv, label, pre, msgs) or "closed, no answer")
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.settimeout(3)
    u.sendto(v2("192.0.2.10", 40002, srv, 53, True) + q(5, "v2-udp.pp.test"), (srv, 53))
    try:
        print("udp v2", show(u.recv(4096)))
    except OSError as e:
        print("udp v2", "error", e)

if __name__ == "__main__":
    main()
