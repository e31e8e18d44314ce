#!/usr/bin/env python3
"""formats.py - the same packets in any capture format replay the same.

    formats.py EGRESSWATCH PCAP|DIR...

For each classic pcap file given (and each *.pcap file of a DIR), this writes its packets again as
  - pcapng, little-endian, with if_tsresol 9 (nanoseconds);
  - pcapng, big-endian, with no if_tsresol (microseconds) and an if_tsoffset
    of 1,000,000 s, the timestamps lowered by as much, behind a Section
    Header with an option, an Interface Statistics block and a Name
    Resolution block (both to skip), with a comment on every packet;
  - pcapng whose packets are on its second interface, the first an 802.11
    one (a link type not decoded) that no packet names;
  - that little-endian pcapng compressed with gzip, and with zstd
    (the `zstd` command, when it is there), and that behind a skippable
    zstd frame as pzstd writes (in a directory given as such);
  - the classic pcap given on standard input (-), as a pipe;
replays each into a fresh database, and compares `events --json` and
`alerts --json` with those of the original file: they must be the same
bytes, since only the container changed. And the packets moved 2^30 s
later (to 2060: the 32-bit seconds of a pcap record past 2^31, which
libpcap reads as negative) replay the same as a classic pcap as they do as
pcapng, whose times are 64 bits. Exit 0 when every variant of every
file agrees, 1 (naming the file and the variant, with a diff) otherwise, 2
on a usage error or a failed command.
"""
import difflib
import gzip
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapfile  # noqa: E402


def block(e, btype, body):
    body += b"\0" * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack(e + "II", btype, n) + body + struct.pack(e + "I", n)


def option(e, code, value):
    return struct.pack(e + "HH", code, len(value)) + value + b"\0" * (-len(value) % 4)


def pcapng(linktype, snaplen, pkts, e, tsresol, tsoffset, extras, unused=()):
    """The packets on one interface, after an interface of each link type
    in unused (which no packet names)."""
    end_opt = struct.pack(e + "HH", 0, 0)
    shb_opts = option(e, 4, b"formats.py") + end_opt if extras else b""
    out = block(e, 0x0A0D0D0A, struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1) + shb_opts)
    for lt in unused:
        out += block(e, 1, struct.pack(e + "HHI", lt, 0, 0))
    opts = b""
    if tsresol is not None:
        opts += option(e, 9, bytes([tsresol]))
    if tsoffset:
        opts += option(e, 14, struct.pack(e + "q", tsoffset))
    if opts:
        opts += end_opt
    out += block(e, 1, struct.pack(e + "HHI", linktype, 0, snaplen) + opts)
    if extras:  # a Name Resolution block (an IPv4 record) to skip
        rec = struct.pack(e + "HH", 1, 4 + 5) + bytes([10, 0, 0, 1]) + b"host\0"
        rec += b"\0" * (-len(rec) % 4) + struct.pack(e + "HH", 0, 0)
        out += block(e, 4, rec)
    units = 10 ** tsresol if tsresol is not None else 1000000
    for ts_us, caplen, wirelen, data in pkts:
        t = (ts_us - tsoffset * 1000000) * units // 1000000
        body = struct.pack(e + "IIIII", len(unused), t >> 32, t & 0xffffffff, caplen, wirelen)
        body += data + b"\0" * (-len(data) % 4)
        if extras:
            body += option(e, 1, b"packet") + end_opt
        out += block(e, 6, body)
    if extras:  # an Interface Statistics block to skip
        out += block(e, 5, struct.pack(e + "III", 0, 0, 0) + option(e, 4, struct.pack(e + "Q", 0))
                     + end_opt)
    return out


def pcap_le(linktype, snaplen, pkts, shift):
    """A little-endian microsecond pcap file of pkts, their times shift s later."""
    out = [struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, snaplen, linktype)]
    for ts_us, caplen, wirelen, data in pkts:
        sec = ts_us // 1000000 + shift
        out.append(struct.pack("<IIII", sec, ts_us % 1000000, caplen, wirelen) + data)
    return b"".join(out)


def run(cmd, stdin=None):
    p = subprocess.run(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.stderr.write("formats.py: %s exited %d: %s" %
                         (" ".join(cmd), p.returncode, p.stderr.decode(errors="replace")))
        sys.exit(2)
    return p.stdout


def replay(ew, tmp, name, path, stdin_path=None):
    db = os.path.join(tmp, name + ".db")
    if stdin_path:
        with open(stdin_path, "rb") as f:
            run([ew, "replay", "-q", "-d", db, "-"], stdin=f)
    else:
        run([ew, "replay", "-q", "-d", db, path])
    out = run([ew, "events", "-d", db, "--json"]) + run([ew, "alerts", "-d", db, "--json"])
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    return out


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: formats.py EGRESSWATCH PCAP|DIR...")
    ew, files = argv[0], []
    for a in argv[1:]:
        if os.path.isdir(a):
            files += sorted(os.path.join(a, n) for n in os.listdir(a) if n.endswith(".pcap"))
        else:
            files.append(a)
    if not files:
        sys.exit("formats.py: no .pcap file given")
    has_zstd = shutil.which("zstd") is not None
    failed = checked = 0
    with tempfile.TemporaryDirectory(prefix="ew-formats.") as tmp:
        for pcap in files:
            with open(pcap, "rb") as f:
                cap = pcapfile.read(f.read(), "formats.py")
            linktype, snaplen, pkts = cap.linktype, cap.snaplen, cap.packets
            want = replay(ew, tmp, "orig", pcap)
            if not want:
                sys.exit("formats.py: %s gives no events" % pcap)
            le = pcapng(linktype, snaplen, pkts, "<", 9, 0, False)
            be = pcapng(linktype, snaplen, pkts, ">", None, 1000000, True)
            # the first interface 802.11 and unused: the file is not refused
            # for it (its link type is not decoded; the second's is)
            wifi = pcapng(linktype, snaplen, pkts, "<", None, 0, False, unused=(105,))
            variants = [("pcapng-le-ns", le), ("pcapng-be-offset", be),
                        ("pcapng-first-if-802.11", wifi),
                        ("pcapng.gz", gzip.compress(le, mtime=0))]
            if has_zstd:
                zst = subprocess.run(["zstd", "-q", "-c"], input=le, stdout=subprocess.PIPE,
                                     check=True).stdout
                variants.append(("pcapng.zst", zst))
                # a skippable frame first, as pzstd writes; given as a
                # directory, which must take it for a capture file
                variants.append(("dir/pcapng.zst-skippable-first",
                                 struct.pack("<II", 0x184D2A50, 4) + b"pzst" + zst))
            results = []
            for name, data in variants:
                path = os.path.join(tmp, name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)
                results.append((name, replay(ew, tmp, name.replace("/", "-"),
                                             os.path.dirname(path) if "/" in name else path)))
            results.append(("stdin", replay(ew, tmp, "stdin", None, stdin_path=pcap)))
            # After 2038: the classic pcap as its pcapng twin
            late = [(ts + (1 << 30) * 1000000, c, w, d) for ts, c, w, d in pkts]
            late_ng = os.path.join(tmp, "late.pcapng")
            late_pcap = os.path.join(tmp, "late.pcap")
            with open(late_ng, "wb") as f:
                f.write(pcapng(linktype, snaplen, late, "<", 9, 0, False))
            with open(late_pcap, "wb") as f:
                f.write(pcap_le(linktype, snaplen, pkts, 1 << 30))
            late_want = replay(ew, tmp, "late-ng", late_ng)
            if b'"ts":"2060-' not in late_want and b'"ts":"2061-' not in late_want:
                sys.exit("formats.py: %s moved to 2060 gives no events of 2060" % pcap)
            checked += 1
            late_got = replay(ew, tmp, "late-pcap", late_pcap)
            if late_got != late_want:
                failed += 1
                print("FAIL: %s moved to 2060 replays differently as pcap and as pcapng:" % pcap)
                sys.stdout.writelines(list(difflib.unified_diff(
                    late_want.decode(errors="replace").splitlines(True),
                    late_got.decode(errors="replace").splitlines(True),
                    "pcapng", "pcap", n=1))[:40])
            for name, got in results:
                checked += 1
                if got != want:
                    failed += 1
                    print("FAIL: %s as %s replays differently:" % (pcap, name))
                    sys.stdout.writelines(list(difflib.unified_diff(
                        want.decode(errors="replace").splitlines(True),
                        got.decode(errors="replace").splitlines(True),
                        "pcap", name, n=1))[:40])
    print("%d of %d variants replay as their pcap (%d files%s)" %
          (checked - failed, checked, len(files), "" if has_zstd else "; no zstd command"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
