#!/usr/bin/env python3
"""expect_events.py - a capture too large for a golden file, checked by what it must show.

    expect_events.py EGRESSWATCH PCAP FILTER WANT...

Replays PCAP into a fresh database and lists `events --json` with FILTER
(an `events` option and its value, such as `--host=10.9.0.80`, or `-` for
none); each WANT is a string that must appear in that list, in that
order, one line each (later WANTs on later lines). Prints the lines matched.
Exit 0 when all are found, 1 otherwise, 2 on a failed command.
"""
import os
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    ew, pcap, filt, wants = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    with tempfile.TemporaryDirectory(prefix="ew-expect.") as tmp:
        db = os.path.join(tmp, "e.db")
        subprocess.run([ew, "replay", "-q", "-d", db, pcap], check=True)
        args = [ew, "events", "-d", db, "--json"] + ([] if filt == "-" else filt.split("=", 1))
        lines = subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()
    at, bad = 0, 0
    for w in wants:
        while at < len(lines) and w not in lines[at]:
            at += 1
        if at == len(lines):
            print("expect_events.py: %s: no line with %r (in order)" % (os.path.basename(pcap), w))
            bad = 1
            break
        print("expect_events.py: %s" % lines[at][:200])
        at += 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
