#!/usr/bin/env python3
"""split.py - a capture cut into two files replays as the whole file does.

    split.py [--rules FILE] EGRESSWATCH PCAP

A capture rotated while it was taken (tcpdump -C or -G, dumpcap -b) is
replayed as its pieces, in order, in one run; the flow table, the stream
reassembly, the IP fragment queues and the detectors' state must carry over
from one file to the next. For every point between two packets of PCAP (a
classic pcap file), this writes the packets before it and those after it as
two files, replays them together into a fresh database, and compares
`events --json` and `alerts --json` with those of the whole file; the
replay must write nothing to stderr (no warning that the files are out of
order). Exit 0
when every cut gives the same bytes, 1 (naming the first cut that does not,
with a diff) otherwise, 2 on a usage error or a failed command.
"""
import difflib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapfile  # noqa: E402


def run(cmd):
    """stdout of cmd, which must exit 0 and write nothing to stderr: the
    pieces are in capture order, so replay must not warn about their order."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0 or p.stderr:
        sys.stderr.write("split.py: %s exited %d: %s" %
                         (" ".join(cmd), p.returncode, p.stderr.decode(errors="replace")))
        sys.exit(2 if p.returncode != 0 else 1)
    return p.stdout


def replay(ew, rules, files, db):
    cmd = [ew, "replay", "-q", "-d", db]
    if rules:
        cmd += ["-c", rules]
    run(cmd + files)
    return (run([ew, "events", "-d", db, "--json"]) +
            run([ew, "alerts", "-d", db, "--json"]))


def main(argv):
    rules = None
    if len(argv) >= 2 and argv[0] == "--rules":
        rules, argv = argv[1], argv[2:]
    if len(argv) != 2:
        sys.exit("usage: split.py [--rules FILE] EGRESSWATCH PCAP")
    ew, pcap = argv
    with open(pcap, "rb") as f:
        cap = pcapfile.read(f.read(), "split.py")
    head, recs = cap.head, cap.raw
    if len(recs) < 2:
        sys.exit("split.py: %s has fewer than two packets" % pcap)
    with tempfile.TemporaryDirectory(prefix="ew-split.") as tmp:
        whole = replay(ew, rules, [pcap], os.path.join(tmp, "whole.db"))
        if not whole:
            sys.exit("split.py: %s gives no events" % pcap)
        a, b = os.path.join(tmp, "a.pcap"), os.path.join(tmp, "b.pcap")
        for k in range(1, len(recs)):
            with open(a, "wb") as f:
                f.write(head + b"".join(recs[:k]))
            with open(b, "wb") as f:
                f.write(head + b"".join(recs[k:]))
            db = os.path.join(tmp, "cut%d.db" % k)
            got = replay(ew, rules, [a, b], db)
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(db + suffix):
                    os.unlink(db + suffix)
            if got != whole:
                print("FAIL: %s cut after packet %d of %d replays differently:" %
                      (pcap, k, len(recs)))
                sys.stdout.writelines(difflib.unified_diff(
                    whole.decode(errors="replace").splitlines(True),
                    got.decode(errors="replace").splitlines(True),
                    "whole", "cut", n=1))
                return 1
    print("%s: all %d cuts replay as the whole file (%d lines)" %
          (pcap, len(recs) - 1, whole.count(b"\n")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
