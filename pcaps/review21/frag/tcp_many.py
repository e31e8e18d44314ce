#!/usr/bin/python3
"""tcp_many.py IFACE - many out-of-order segments at once, for a
differential test of how many the flow table holds against the Linux
kernel (scapy; /usr/bin/python3 for scapy). As tcp_fuzz.py: from
10.56.6.11 on IFACE to the server's port 80 (tcp_sink.py), one connection
per case, the head "GET /m<case> HTTP/1.1 / X-Pad: <2,040 bytes> /
Host: m<case>.fuzz.example". K one-byte segments of the padding, two bytes
apart (K disjoint held ranges, K up to 1,000), come ahead of the rest:
  A  then the whole head in order;
  B  then the head's tail (from its Host line) in one segment, then the
     rest in order, so the Host is only in the tail held out of order;
  C  the tail first, then the K bytes, then the rest in order;
then a RST (what is sent in order goes in segments of 1,400 bytes). On
Linux 6.18 the server read every head whole, for every K (up to 4,000
tried: R22-F5). Whatever Host the server read, the sensor must read
(tcp_many.delivered)."""
import sys
from scapy.all import TCP, conf, get_if_hwaddr
from tcp_fuzz import PORT, handshake, send_then_reset

conf.verb = 0
KS = [4, 16, 17, 32, 33, 64, 100, 200, 400, 1000]


def main():
    iface = sys.argv[1]
    smac = get_if_hwaddr(iface)
    case = 0
    for mode in "ABC":
        for k in KS:
            head = (b"GET /m%03d HTTP/1.1\r\nX-Pad: " % case + b"p" * 2040 +
                    b"\r\nHost: m%03d.fuzz.example\r\n\r\n" % case)
            n, tail = len(head), head.index(b"\r\nHost")
            sport, isn = 21000 + case, 7919 * (case + 1)
            case += 1
            hs = handshake(iface, smac, sport, isn)
            if hs is None:
                continue
            eth, ip, base, ack = hs

            def seg(lo, hi):
                return eth / ip / TCP(sport=sport, dport=PORT, flags="PA", seq=base + lo,
                                      ack=ack) / head[lo:hi]
            def run(lo, hi):
                return [seg(a, min(a + 1400, hi)) for a in range(lo, hi, 1400)]
            segs = [eth / ip / TCP(sport=sport, dport=PORT, flags="A", seq=base, ack=ack)]
            tiny = [seg(30 + 2 * j, 31 + 2 * j) for j in range(k)]
            if mode == "A":
                segs += tiny + run(0, n)
            elif mode == "B":
                segs += tiny + [seg(tail, n)] + run(0, tail)
            else:
                segs += [seg(tail, n)] + tiny + run(0, tail)
            send_then_reset(iface, segs, 0.0005, 0.3,
                            eth / ip / TCP(sport=sport, dport=PORT, flags="R", seq=base + n))


if __name__ == "__main__":
    main()
