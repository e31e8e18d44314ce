#!/usr/bin/python3
"""icmp_sink.py SECONDS LOG - raw ICMP and ICMPv6 sockets that write the
sequence number of each echo request of id 0x77 that Linux's IP layer
delivered to them to LOG, one a line, for SECONDS (record6.sh ping: the
kernel's verdict on opts_fuzz.py's requests, whether or not it could build
a reply; a request whose options it refused never reaches a raw socket)."""
import select, socket, struct, sys, time


def main():
    s4 = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s6 = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    end = time.time() + float(sys.argv[1])
    seen = set()
    with open(sys.argv[2], "w") as log:
        while time.time() < end:
            r, _, _ = select.select([s4, s6], [], [], 0.5)
            for s in r:
                d = s.recv(65535)
                if s is s4:
                    d = d[(d[0] & 15) * 4:] # IPv4: the header comes too
                    want = 8
                else:
                    want = 128
                if len(d) >= 8 and d[0] == want:
                    ident, seq = struct.unpack("!HH", d[4:8])
                    if ident == 0x77 and seq not in seen:
                        seen.add(seq)
                        log.write("%d\n" % seq)
                        log.flush()


if __name__ == "__main__":
    main()
