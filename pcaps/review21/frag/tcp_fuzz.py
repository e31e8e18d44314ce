#!/usr/bin/python3
"""tcp_fuzz.py IFACE [urg] - random TCP segment layouts, for a differential test
of the flow table's reassembly against the Linux kernel (scapy;
/usr/bin/python3 for scapy). From 10.56.6.11 on IFACE (an address no
kernel owns, so none resets the connection; record6.sh gives the server a
neighbour entry for it) to the server's port 80 (tcp_sink.py, which logs
the Host of the request head it read): one connection per case, the head
"GET /c<case> HTTP/1.1 / Host: h<case>-<tag>.fuzz.example" in three
versions that differ only in the 10-byte tag, sent as 2-7 random segments
of random versions (any offset and length, overlaps, duplicates, any
order), then the whole head cut at 1-5 random places into pieces of
random versions sent in random order (which fills what is still
missing), then a RST. Whatever Host the server read, the sensor must
read (tcp_fuzz.delivered). 150 cases, seeded: the same bytes each run.
With `urg` (seed 1067): one segment in three has URG set and an urgent
pointer of 0-40, so Linux takes a byte out of what the server reads
(tcp_urg.delivered: what it read, in hex, too)."""
import random, sys, time
from scapy.all import IP, TCP, Ether, conf, get_if_hwaddr, sendp, srp1

conf.verb = 0
SRC, SERVER, PORT = "10.56.6.11", "10.56.6.53", 80
N = 150
TAGS = [b"aaaaaaaaaa", b"bbbbbbbbbb", b"cccccccccc"]


def handshake(iface, smac, sport, isn):
    """A SYN of isn from SRC:sport to the server; with its SYN-ACK, the
    Ethernet and IP headers for the client's segments and the client's and
    the server's next sequence numbers, else None."""
    ip = IP(src=SRC, dst=SERVER)
    sa = srp1(Ether(src=smac) / ip / TCP(sport=sport, dport=PORT, flags="S", seq=isn,
                                         options=[("MSS", 1460)]), iface=iface, timeout=3)
    if sa is None or not sa.haslayer(TCP):
        return None
    return Ether(src=smac, dst=sa[Ether].src), ip, isn + 1, sa[TCP].seq + 1


def send_then_reset(iface, segs, inter, wait, rst):
    """Send segs inter seconds apart, wait, then the RST."""
    sendp(segs, iface=iface, inter=inter)
    time.sleep(wait)
    sendp(rst, iface=iface)
    time.sleep(0.05)


def main():
    iface = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else ""
    urg, tree = mode == "urg", mode == "tree"
    r = random.Random(1067 if urg else 1068 if tree else 1066)

    def tcp(**kw):
        if urg and r.randrange(3) == 0:
            kw["flags"] += "U"
            return TCP(urgptr=r.randrange(0, 41), **kw)
        return TCP(**kw)
    smac = get_if_hwaddr(iface)
    for i in range(200 if tree else N):
        heads = [b"GET /c%03d HTTP/1.1\r\nHost: h%03d-%s.fuzz.example\r\n\r\n" % (i, i, t) for t in TAGS]
        n = len(heads[0])
        sport, isn = 20000 + i, r.randrange(2**31)
        hs = handshake(iface, smac, sport, isn)
        if hs is None:
            continue
        eth, ip, base, ack = hs
        segs = [eth / ip / TCP(sport=sport, dport=PORT, flags="A", seq=base, ack=ack)]
        edges = sorted(r.sample(range(1, n), 9)) + [n] if tree else []
        for _ in range(r.randrange(4, 15) if tree else r.randrange(2, 8)):
            if tree: # edges shared, so that segments often meet end to start
                a = r.randrange(len(edges) - 1)
                b = r.randrange(a + 1, min(a + 4, len(edges)))
                off, ln = edges[a], edges[b] - edges[a]
            else:
                off = r.randrange(0, n)
                ln = r.randrange(1, min(24, n - off) + 1)
            v = r.randrange(3)
            segs.append(eth / ip / tcp(sport=sport, dport=PORT, flags="PA", seq=base + off, ack=ack) /
                        heads[v][off:off + ln])
        # then the whole head, cut at random places, of random versions, in
        # random order: what is still missing is filled
        cuts = sorted(r.sample(range(1, n), r.randrange(1, 6)))
        pieces = list(zip([0] + cuts, cuts + [n]))
        r.shuffle(pieces)
        for lo, hi in pieces:
            segs.append(eth / ip / tcp(sport=sport, dport=PORT, flags="PA", seq=base + lo, ack=ack) /
                        heads[r.randrange(3)][lo:hi])
        send_then_reset(iface, segs, 0.004, 0.15,
                        eth / ip / TCP(sport=sport, dport=PORT, flags="R", seq=base + n))


if __name__ == "__main__":
    main()
