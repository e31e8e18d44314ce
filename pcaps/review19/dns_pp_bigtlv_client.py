#!/usr/bin/python3
"""dns_pp_bigtlv_client.py SERVER: DNS over TCP behind a PROXY v2 header whose TLVs
(PP2_TYPE_NOOP, 0x04) make it SIZE bytes long, for each SIZE of 1,000 (control),
16,000 and 20,000; then the same over UDP. Prints what came back. The query, header
and TCP exchange are ../dns_proxyproto_client.py's."""
import os, socket, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from dns_proxyproto_client import q, v2, show, tcp

srv = sys.argv[1]
for i, size in enumerate((1000, 16000, 20000)):
    got = tcp(srv, "tcp", v2("192.0.2.10", 40000 + i, srv, 53, total=size),
              [q(10 + i, "tlv%d.pp.test" % size)])
    print("tcp v2 tlv", size, got[0] if got else "closed, no answer")
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(3)
for i, size in enumerate((1000, 20000)):
    u.sendto(v2("192.0.2.10", 41000 + i, srv, 53, True, size) + q(20 + i, "udp%d.pp.test" % size),
             (srv, 53))
    try:
        print("udp v2 tlv", size, show(u.recv(4096)))
    except OSError as e:
        print("udp v2 tlv", size, "error", e)
