#!/usr/bin/env python3
"""send_frames.py - send COUNT DNS queries (A, IN, RD), each an Ethernet
frame built here, out of IFACE with an AF_PACKET socket, as fast as they go.

  send_frames.py IFACE COUNT PREFIX

The query names are PREFIX0.test, PREFIX1.test, ...; the frames go from
10.77.0.1:40000 to 10.77.0.53:53, broadcast at the link layer, so the peer
of a veth pair (the interface the sensor watches) receives them whatever
its address. Run it inside the test's own namespace (`ip netns exec`): the
packets never leave that veth pair. Needs CAP_NET_RAW. Prints how many were
sent.
"""
import socket
import struct
import sys


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    return ~(s + (s >> 16)) & 0xFFFF


def frame(i, prefix):
    name = ("%s%d.test" % (prefix, i)).encode()
    q = struct.pack(">HHHHHH", i & 0xFFFF, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(l)]) + l for l in name.split(b".")) + b"\0" + struct.pack(">HH", 1, 1)
    udp = struct.pack(">HHHH", 40000, 53, 8 + len(q), 0) + q
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), i & 0xFFFF, 0, 64, 17, 0,
                     bytes([10, 77, 0, 1]), bytes([10, 77, 0, 53]))
    ip = ip[:10] + struct.pack(">H", csum(ip)) + ip[12:]
    return b"\xff" * 6 + b"\x02\x00\x00\x77\x00\x01" + b"\x08\x00" + ip + udp


def main():
    iface, count, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    frames = [frame(i, prefix) for i in range(count)]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
    s.bind((iface, 0))
    sent = 0
    for f in frames:
        try:
            s.send(f)
            sent += 1
        except OSError:
            pass
    print(sent)


main()
