"""pcapfile.py - the records of a classic pcap file, for the tests that cut
or rewrite captures (split.py, formats.py).

read(data) returns a Pcap: the 24-byte file header as it was, the link type
and snap length, and each record both as its bytes (header and data, to write
again as they are) and as (ts_us, caplen, wirelen, data). Exits with a
message on anything but a whole classic pcap file.
"""
import struct
import sys
from collections import namedtuple

Pcap = namedtuple("Pcap", "head linktype snaplen raw packets")

# magic: (byte order, sub-second units per microsecond)
MAGICS = {b"\xd4\xc3\xb2\xa1": ("<", 1), b"\xa1\xb2\xc3\xd4": (">", 1),
          b"\x4d\x3c\xb2\xa1": ("<", 1000), b"\xa1\xb2\x3c\x4d": (">", 1000)}


def read(data, who="pcapfile.py"):
    if len(data) < 24 or data[:4] not in MAGICS:
        sys.exit("%s: not a classic pcap file (pcapng is not read here)" % who)
    e, per_us = MAGICS[data[:4]]
    snaplen, linktype = struct.unpack(e + "II", data[16:24])
    raw, packets, off = [], [], 24
    while off + 16 <= len(data):
        sec, sub, caplen, wirelen = struct.unpack(e + "IIII", data[off:off + 16])
        end = off + 16 + caplen
        if end > len(data):
            sys.exit("%s: the capture is cut short" % who)
        if sub % per_us:
            sys.exit("%s: nanosecond times that microseconds cannot hold" % who)
        raw.append(data[off:end])
        packets.append((sec * 1000000 + sub // per_us, caplen, wirelen, data[off + 16:end]))
        off = end
    return Pcap(data[:24], linktype & 0xffff, snaplen, raw, packets)
