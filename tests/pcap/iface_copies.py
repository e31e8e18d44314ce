#!/usr/bin/env python3
"""iface_copies.py - a capture and its copy from a second interface, merged.

    iface_copies.py EGRESSWATCH PCAP...

A packet that crosses two watched interfaces is captured on each: the
second copy is one router further on (TTL or hop limit one lower, the IPv4
checksum redone) and a little later (40 us). For each Ethernet pcap given,
this writes that copy, replays the two with --merge, and requires the same
events and alerts, byte for byte, as the original alone: TCP copies are
retransmissions to the flow table, and UDP and ICMP copies are skipped
(sensor/copies.h), the summary saying how many. Replayed one after the
other (no --merge) the files are separate passes, and every UDP event comes
twice. Exit 0 when all hold, 1 otherwise, 2 on a failed command.
"""
import os
import sqlite3
import struct
import subprocess
import sys
import tempfile


def csum(h):
    s = sum(struct.unpack(">%dH" % (len(h) // 2), h))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def second_interface(src, dst):
    """The copy of src (pcap, Ethernet) a second interface would see."""
    d = open(src, "rb").read()
    magic, link = struct.unpack("<I", d[:4])[0], struct.unpack("<I", d[20:24])[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D) or link != 1:
        raise SystemExit("iface_copies.py: %s: not a little-endian Ethernet pcap" % src)
    step = 40 if magic == 0xA1B2C3D4 else 40000  # microseconds or nanoseconds
    out, off = [d[:24]], 24
    while off + 16 <= len(d):
        sec, frac, cl, ol = struct.unpack("<IIII", d[off:off + 16])
        f = bytearray(d[off + 16:off + 16 + cl])
        off += 16 + cl
        et = struct.unpack(">H", f[12:14])[0] if len(f) >= 14 else 0
        if et == 0x0800 and len(f) >= 34 and f[22] > 1:
            ihl = (f[14] & 15) * 4
            f[22] -= 1
            f[24:26] = b"\0\0"
            f[24:26] = struct.pack(">H", csum(bytes(f[14:14 + ihl])))
        elif et == 0x86DD and len(f) >= 54 and f[21] > 1:
            f[21] -= 1
        frac += step
        if frac >= step * 25000:  # a second
            sec, frac = sec + 1, frac - step * 25000
        out.append(struct.pack("<IIII", sec, frac, len(f), ol) + bytes(f))
    open(dst, "wb").write(b"".join(out))


def run(args):
    return subprocess.run(args, check=True, capture_output=True, text=True)


def export(ew, db):
    return run([ew, "events", "-d", db, "--json"]).stdout, run([ew, "alerts", "-d", db, "--json"]).stdout


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    ew, bad = sys.argv[1], 0
    with tempfile.TemporaryDirectory(prefix="ew-copies.") as tmp:
        for n, pcap in enumerate(sys.argv[2:]):
            copy = os.path.join(tmp, "%d-copy.pcap" % n)
            second_interface(pcap, copy)
            db = [os.path.join(tmp, "%d-%s.db" % (n, k)) for k in ("one", "merged", "passes")]
            run([ew, "replay", "-q", "-d", db[0], pcap])
            r = run([ew, "replay", "-d", db[1], "--merge", pcap, copy])
            summary = r.stdout + r.stderr
            run([ew, "replay", "-q", "-d", db[2], pcap, copy])
            one, merged, passes = export(ew, db[0]), export(ew, db[1]), export(ew, db[2])
            name = os.path.basename(pcap)
            skipped = [l for l in summary.splitlines() if "copies from another source skipped" in l]
            udp = sum('"proto":"udp"' in l for l in one[0].splitlines())
            again = sum('"proto":"udp"' in l for l in passes[0].splitlines())
            print("iface_copies.py: %s: %d events alone, %d merged with its copy (%s); "
                  "%d UDP events alone, %d in two passes"
                  % (name, len(one[0].splitlines()), len(merged[0].splitlines()),
                     skipped[0].split("; ")[-1] if skipped else "no copies skipped", udp, again))
            if merged != one:
                print("iface_copies.py: %s: merged with its copy, the events or alerts differ"
                      % name)
                bad = 1
            con = sqlite3.connect(db[1])
            stat = con.execute("select value from stats where name = 'copies.skipped'").fetchone()
            con.close()
            if not skipped or udp == 0 or again != 2 * udp:
                bad = 1
            if not stat or "%d UDP/ICMP copies" % stat[0] not in skipped[0]:
                print("iface_copies.py: %s: copies.skipped in the stats table is %s" % (name, stat))
                bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
