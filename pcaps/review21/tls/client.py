#!/usr/bin/python3
"""client.py SERVER OUT.json [CASE...] - send each case of cases.py, one
connection per case and reader port (nginx 443, haproxy 8443, OpenSSL
4433, GnuTLS 5556; READERS=nginx,haproxy in the environment for some), record the client port and the first bytes the
reader sent back (up0/up1/up2 from the proxies' upstreams, a TLS record
from the servers), each connection bounded by a 4 s timeout."""
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from cases import cases  # noqa: E402

PORTS = {'nginx': 443, 'haproxy': 8443, 'openssl': 4433, 'gnutls': 5556}


def run_one(server, port, chunks):
    s = socket.create_connection((server, port), timeout=4)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    cport = s.getsockname()[1]
    for ch in chunks:
        s.sendall(ch)
        time.sleep(0.05)
    got = b''
    try:
        got = s.recv(64)
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return cport, got


def main():
    server, out = sys.argv[1], sys.argv[2]
    want = sys.argv[3:]
    readers = os.environ.get('READERS', ','.join(PORTS)).split(',')
    res = []
    for name, chunks in cases().items():
        if want and name not in want:
            continue
        for reader, port in PORTS.items():
            if reader not in readers:
                continue
            cport, got = run_one(server, port, chunks)
            res.append({'case': name, 'reader': reader, 'cport': cport, 'reply': got[:16].hex()})
    with open(out, 'w') as f:
        json.dump(res, f, indent=0)


main()
