#!/usr/bin/python3
"""tshark_icmp.py - the ICMP and ICMPv6 messages tshark decodes in a capture, in the
corpus schema.

README
------
    tests/tshark/tshark_icmp.py PCAP [tshark args]

prints one JSON object per ICMP/ICMPv6 message a line, in capture order; arguments
after PCAP go to tshark.  Exit codes as tshark_dns.py's.  Library:
tshark_icmp(pcap, extra_args=()) -> [message, ...] and tshark_icmp_ex(...) ->
[(message, flagged), ...] (flagged as in tshark_dns.py).  Messages are shaped as the
corpus's "icmp" lists (shared/corpus/conformance/README.md) and as
conformance.normalize_icmp() output: compare them with conformance.compare("icmp",
"exact", tshark_icmp(pcap), normalize_icmp(events)).

It reads `tshark -n -r PCAP -T pdml -Y "icmp || icmpv6"` with IP reassembly on (a
fragmented message is one message, in the frame that completes it).
  - One message per packet: its first icmp or icmpv6 layer, the outer one.  What
    an ICMP error quotes (an IP packet, perhaps an ICMP echo) is nested inside that
    layer in the PDML and is not a message of its own.
  - {"frame", "v": 4 for icmp, 6 for icmpv6, "type": icmp(v6).type,
    "code": icmp(v6).code}; a value tshark could not read (a message cut short) is
    None.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tshark_dns import cli, flagged, num, pdml_records  # noqa: E402
from tshark_http import frame_of, own_first  # noqa: E402

PREFS = ["-o", "ip.defragment:TRUE", "-o", "ipv6.defragment:TRUE"]
LAYERS = {"icmp": 4, "icmpv6": 6}


def packet_message(pkt):
    """[(message, flagged)] of one PDML <packet>: none or one."""
    for p in pkt.iter("proto"):
        name = p.get("name")
        if name in LAYERS:
            return [({"frame": frame_of(pkt), "v": LAYERS[name],
                      "type": num(own_first(p, name + ".type")),
                      "code": num(own_first(p, name + ".code"))}, flagged(pkt))]
    return []


def tshark_icmp_ex(pcap, extra_args=()):
    return pdml_records(pcap, "icmp || icmpv6", PREFS, packet_message, extra_args)


def tshark_icmp(pcap, extra_args=()):
    return [m for m, _ in tshark_icmp_ex(pcap, extra_args)]


if __name__ == "__main__":
    sys.exit(cli("tshark_icmp.py", tshark_icmp_ex, "messages", sys.argv[1:]))
