#!/usr/bin/python3
"""tcp_sink.py SECONDS LOG [IDLE] - a TCP server on 10.56.6.53:80 that reads
each connection's request head (to its blank line, or until IDLE seconds,
default 1, pass without a byte, or a reset) and writes "<client port> <Host it read> <bytes it read,
in hex>" to LOG, for
SECONDS (record6.sh's server for tcp_fuzz.py); it answers nothing."""
import socket, sys, time


def main():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("10.56.6.53", 80))
    srv.listen(16)
    end = time.time() + float(sys.argv[1])
    with open(sys.argv[2], "w") as log:
        while time.time() < end:
            srv.settimeout(max(0.1, end - time.time()))
            try:
                c, a = srv.accept()
            except OSError:
                break
            c.settimeout(float(sys.argv[3]) if len(sys.argv) > 3 else 1.0)
            got = b""
            try:
                while b"\r\n\r\n" not in got and len(got) < 4096:
                    b = c.recv(4096)
                    if not b:
                        break
                    got += b
            except OSError:
                pass
            c.close()
            host = "-"
            for line in got.split(b"\r\n"):
                if line.lower().startswith(b"host:"):
                    host = line[5:].strip().decode("ascii", "replace")
            log.write("%d %s %s\n" % (a[1], host, got.hex() or "-"))
            log.flush()


if __name__ == "__main__":
    main()
