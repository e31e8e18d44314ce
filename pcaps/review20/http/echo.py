#!/usr/bin/python3
"""echo.py ADDR PORT - a tiny HTTP/1.1 server on Python's http.server
(BaseHTTPRequestHandler, which reads heads with http.client.parse_headers:
up to 100 field lines of up to 65,536 bytes each). Every request, whatever
its method, is answered, keep-alive, with what Python took from it: the Host
it parsed, the Content-Length or chunked framing, and the body it read
(repr). GET /longstatus is answered with a 302 whose reason phrase is
20,000 bytes. Stops after 300 s (timeout in the caller too)."""
import sys, threading, os
from http.server import BaseHTTPRequestHandler, HTTPServer


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def body(self):
        te = self.headers.get("Transfer-Encoding", "")
        if te.lower().endswith("chunked"):
            out = b""
            while True:
                size = int(self.rfile.readline(1024).split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline(1024)
        n = int(self.headers.get("Content-Length", "0") or 0)
        return self.rfile.read(n) if n else b""

    def any(self):
        b = self.body()
        if self.path == "/longstatus":
            self.send_response(302, "r" * 20000)
            self.send_header("Location", "http://www.decoy.test/")
            self.send_header("Content-Length", "3")
            self.end_headers()
            self.wfile.write(b"abc")
            return
        msg = ("py host=%r uri=%s cl=%r te=%r body=%r\n" % (
            self.headers.get("Host"), self.path, self.headers.get("Content-Length"),
            self.headers.get("Transfer-Encoding"), b)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(msg)))
        self.end_headers()
        self.wfile.write(msg)

    do_GET = do_POST = do_PUT = any


threading.Timer(300, lambda: os._exit(0)).start()
HTTPServer((sys.argv[1], int(sys.argv[2])), H).serve_forever()
