#!/usr/bin/python3
"""listen6.py SECONDS LOG - a UDP socket on [::]:53 that writes each datagram
Linux delivered to it (the question name of a DNS query) to LOG, one a line,
for SECONDS; it answers nothing."""
import socket, sys, time


def qname(d):
    out, i = [], 12
    while i < len(d) and d[i]:
        out.append(d[i + 1:i + 1 + d[i]].decode("ascii", "replace"))
        i += 1 + d[i]
    return ".".join(out)


def main():
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.bind(("::", 53))
    s.settimeout(0.5)
    end = time.time() + float(sys.argv[1])
    with open(sys.argv[2], "w") as log:
        while time.time() < end:
            try:
                d, a = s.recvfrom(65535)
            except socket.timeout:
                continue
            log.write("%s %d %s\n" % (a[0], a[1], qname(d)))
            log.flush()


if __name__ == "__main__":
    main()
