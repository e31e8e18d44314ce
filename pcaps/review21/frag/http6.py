#!/usr/bin/python3
"""http6.py SECONDS LOG - an HTTP server on [::]:80 that answers 200 to every
request and writes its request line and Host, as the server read them, to
LOG, for SECONDS (record6.sh's server)."""
import http.server, socket, sys, threading, time


class V6(http.server.HTTPServer):
    address_family = socket.AF_INET6


def main():
    log = open(sys.argv[2], "w")

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            log.write("%s Host: %s\n" % (self.requestline, self.headers.get("Host")))
            log.flush()
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *a):
            pass

    srv = V6(("::", 80), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    time.sleep(float(sys.argv[1]))
    srv.shutdown()


if __name__ == "__main__":
    main()
