#!/usr/bin/python3
"""tcp_tricks.py SERVER PORT OUT.json - one ClientHello per connection sent as
hand-made TCP segments that overlap, with different SNI bytes in the
overlapping copies (allowed.example / blocked.example, the same length), from
10.54.4.11 (no kernel owns it, so none resets the connection; lab.sh gives
the server a neighbour entry for it). Which copy the server's kernel kept is
what nginx or haproxy logs; the sensor reads the capture. Each connection is
bounded (3 s for its SYN-ACK, 2 s for an answer) and ends with a RST.
Needs scapy (/usr/bin/python3)."""
import json
import random
import sys
import time

sys.path.insert(0, __import__('os').path.dirname(__file__))
from hellos import hello, record  # noqa: E402
from scapy.all import IP, TCP, Ether, AsyncSniffer, conf, get_if_hwaddr, sendp, srp1  # noqa: E402

SRC = '10.54.4.11'
IFACE = sys.argv[4] if len(sys.argv) > 4 else 'ewt4c'
conf.verb = 0
A, B = b'allowed.example', b'blocked.example'
HA, HB = record(hello(name=A)), record(hello(name=B))
assert len(HA) == len(HB)
at = HA.index(A)  # the name's offset in the stream


def variants():
    n = len(HA)
    # (name, [(offset, bytes)]) in sending order
    return {
        # a retransmission of the whole hello with other SNI bytes
        'retrans_whole': [(0, HA), (0, HB)],
        # the tail (SNI B) first, out of order; then the whole hello (SNI A) in order
        'ooo_tail_then_whole': [(at - 5, HB[at - 5:]), (0, HA)],
        # two out-of-order copies of the tail, the second starting lower
        # (SNI B), then the head
        'ooo_two_tails': [(at, HA[at:]), (at - 10, HB[at - 10:]), (0, HA[:at - 10])],
        # two out-of-order copies of the same range, then the head
        'ooo_same_range': [(at, HA[at:]), (at, HB[at:]), (0, HA[:at])],
        # the head in order, then two out-of-order copies of the tail
        'head_then_two_tails': [(0, HA[:at - 10]), (at + 5, HA[at + 5:]), (at - 10, HB[at - 10:])],
    }


def run(server, port, out):
    dmac = None
    smac = get_if_hwaddr(IFACE)
    res = []
    for name, segs in variants().items():
        sport = random.randint(40000, 60000)
        isn = random.randint(0, 2**31)
        eth = Ether(src=smac)
        syn = eth / IP(src=SRC, dst=server) / TCP(sport=sport, dport=port, flags='S', seq=isn,
                                                   options=[('MSS', 1460)])
        sa = srp1(syn, iface=IFACE, timeout=3)
        if sa is None or not sa.haslayer(TCP):
            res.append({'case': name, 'sport': sport, 'error': 'no SYN-ACK'})
            continue
        dmac = sa[Ether].src
        eth = Ether(src=smac, dst=dmac)
        ack = sa[TCP].seq + 1
        base = isn + 1
        ip = IP(src=SRC, dst=server)
        sn = AsyncSniffer(iface=IFACE, filter='tcp and src port %d and dst port %d' % (port, sport))
        sn.start()
        sendp(eth / ip / TCP(sport=sport, dport=port, flags='A', seq=base, ack=ack), iface=IFACE)
        for off, data in segs:
            sendp(eth / ip / TCP(sport=sport, dport=port, flags='PA', seq=base + off, ack=ack) / data,
                  iface=IFACE)
            time.sleep(0.1)
        time.sleep(2)
        sn.stop()
        got = b''.join(bytes(p[TCP].payload) for p in sn.results if len(p[TCP].payload))
        sendp(eth / ip / TCP(sport=sport, dport=port, flags='R', seq=base + len(HA)), iface=IFACE)
        res.append({'case': name, 'sport': sport, 'reply': got[:16].hex()})
    with open(out, 'w') as f:
        json.dump(res, f, indent=0)


run(sys.argv[1], int(sys.argv[2]), sys.argv[3])
