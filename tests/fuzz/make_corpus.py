#!/usr/bin/env python3
"""Seed the fuzz corpus from the fixture pcaps.

Each seed is one flow's worth of frames in the fuzz_packet.c input format:
  1 byte link-type selector (index into fuzz_dlts[]), 2 bytes length, frame.
Usage: make_corpus.py OUTDIR PCAP...   (deterministic: same pcaps, same seeds)
"""
import hashlib
import os
import struct
import sys

# Index into fuzz_dlts[] of fuzz_packet.c, by pcap link type.
DLT_INDEX = {1: 0, 113: 1, 276: 2, 12: 3, 101: 3, 0: 4, 108: 5, 228: 6, 229: 7}


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        e = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = ">"
    else:
        return None, []  # pcapng: skipped (its packets are in the pcap fixtures too)
    linktype = struct.unpack(e + "I", data[20:24])[0] & 0x0FFFFFFF
    off, frames = 24, []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(e + "IIII", data[off:off + 16])
        off += 16
        frames.append(data[off:off + incl])
        off += incl
    return linktype, frames


def main():
    out, pcaps = sys.argv[1], sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    n = 0
    for path in pcaps:
        lt, frames = read_pcap(path)
        if lt not in DLT_INDEX:
            continue
        sel = DLT_INDEX[lt]
        # one seed per 8 consecutive frames keeps seeds small but multi-packet
        for i in range(0, len(frames), 8):
            blob = b"".join(bytes([sel]) + struct.pack(">H", len(f)) + f for f in frames[i:i + 8])
            name = hashlib.sha1(blob).hexdigest()[:16]
            with open(os.path.join(out, name), "wb") as f:
                f.write(blob)
            n += 1
    print("%d seeds in %s" % (n, out))


if __name__ == "__main__":
    main()
