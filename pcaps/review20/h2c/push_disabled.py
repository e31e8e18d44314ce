#!/usr/bin/python3
"""push_disabled.py [OUTDIR] - h2c_push_disabled.pcap, crafted (scapy, through
../../gen_fixtures.py's TcpConn): a server push the client disabled.

The client's SETTINGS say ENABLE_PUSH=0 and the server acknowledges them.
Then the server sends a PUSH_PROMISE on stream 1 for stream 2 (GET
www.pushed-evil.test /fake, its block adding "server: nginx" to the server's
table, index 62), the response to stream 1 (which names 62), and the pushed
response on stream 2. That is a connection error to a real client (RFC 9113
6.5.2, 8.4): it requests nothing. So the sensor reports no promised request
and no pushed response, and counts the two blocks in module.h2c.push_refused.
A second connection, whose client leaves push on, gets the same frames; its
promised request is reported and paired, as in pcaps/h2c_push_promise.pcap."""
import os, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
from gen_fixtures import (BASE_US, CLIENT4, LINKTYPE_ETHERNET, MAC_GW, H2_PREFACE, Clock,  # noqa: E402
                          TcpConn, h2_frame, hp_lit, write_pcap)


def conn(clk, sport, push_off):
    settings_c = h2_frame(4, 0, 0, bytes.fromhex("000200000000") if push_off else b"")
    settings_s, ack = h2_frame(4, 0, 0, b""), h2_frame(4, 1, 0, b"")
    c = TcpConn(clk, CLIENT4, "10.99.0.80", sport, 82, 61000 + sport, 63000, smac=MAC_GW)
    recs = c.handshake()
    req1 = b"\x82\x86\x84" + hp_lit(1, b"www.push.test")
    recs.append(c.c_send(H2_PREFACE + settings_c + h2_frame(1, 0x05, 1, req1), step=300))
    promise = b"\x00\x00\x00\x02" + b"\x82\x86" + hp_lit(1, b"www.pushed-evil.test") + \
        hp_lit(4, b"/fake") + b"\x76\x05nginx"
    recs.append(c.s_send(settings_s + ack + h2_frame(5, 0x04, 1, promise) +
                         h2_frame(1, 0x04, 1, b"\x88\xbe") + h2_frame(0, 0x01, 1, b"<html>"),
                         step=400))
    recs.append(c.c_send(ack, step=100))
    recs.append(c.s_send(h2_frame(1, 0x04, 2, b"\x88\xbe") + h2_frame(0, 0x01, 2, b"alert(1)"),
                         step=400))
    recs += c.close()
    return recs


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else here
    clk = Clock(BASE_US + 9500 * 1000000)
    recs = conn(clk, 44400, True) + conn(clk, 44402, False)
    write_pcap(os.path.join(out, "h2c_push_disabled.pcap"), LINKTYPE_ETHERNET, recs)


if __name__ == "__main__":
    sys.exit(main())
