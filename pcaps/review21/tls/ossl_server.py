#!/usr/bin/python3
"""ossl_server.py ADDR PORT CERT KEY LOG - OpenSSL (through Python's ssl) as
an SNI reader: a servername callback logs, per client port, the name
OpenSSL's parser took (SSL_get_servername), then the handshake's outcome.
One connection at a time, each bounded by a 3 s timeout; the lab's
`timeout` bounds the process."""
import socket
import ssl
import sys

addr, port, cert, key, logp = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
seen = {}


def on_sni(sslobj, name, _ctx):
    seen['name'] = name


ctx.sni_callback = on_sni
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((addr, port))
ls.listen(16)
with open(logp, 'a', buffering=1) as log:
    while True:
        c, peer = ls.accept()
        c.settimeout(3)
        seen.clear()
        outcome = 'ok'
        try:
            s = ctx.wrap_socket(c, server_side=True)
            s.close()
        except (ssl.SSLError, OSError, UnicodeError) as e:
            outcome = 'err:' + (getattr(e, 'reason', None) or type(e).__name__)
            c.close()
        name = seen.get('name')
        log.write('%d sni=%s %s\n' % (peer[1], '-' if name is None else repr(name), outcome))
