#!/usr/bin/env python3
"""cap_blind.py - idle connections must not blind the sensor to a new one.

    cap_blind.py EGRESSWATCH REVIEW_DIR

The eighteenth session's review (pcaps/review18/FINDINGS.md, F11) filled the
64 MiB stream cap with connections no analyzer claims, each holding its
window (520 widened to 132 KiB by a 20 KB first segment, or 4,200 of 16 KiB
in wire-size segments), and then sent an HTTP request on a new connection:
no buffer was left for it and it made no event. Such windows now go back
to the cap (flow_release_unread). A third capture keeps 4,200 windows just
under 16 KiB, which are not released at once, and a fourth 7,200 that HTTP,
TLS and DNS claimed, each waiting in the middle of a message: the new
connection takes the buffers of the idle ones (the reclaim sweep, flow.c
"Reclaim"); and a fifth 4,200 HTTP keep-alive connections between two
requests, whose windows were all read: their buffers go, and the second
requests of ten of them, after the new connection, are read too. This
writes the five captures with the review's own script (REVIEW_DIR/cap_blind.py),
replays each, and requires the request's two events (request and response,
Host www.hidden.test). Exit 0 when all are seen, 1 otherwise, 2 on a failed
command.
"""
import os
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    ew, review = sys.argv[1], sys.argv[2]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="ew-capblind.") as tmp:
        for name, args in (("widened", ["520"]), ("narrow", ["4200", "narrow"]),
                           ("under", ["4200", "under"]), ("claimed", ["7200", "claimed"]),
                           ("keepalive", ["4200", "keepalive"])):
            pcap = os.path.join(tmp, name + ".pcap")
            db = os.path.join(tmp, name + ".db")
            subprocess.run([sys.executable, os.path.join(review, "cap_blind.py"), pcap] + args,
                           check=True)
            subprocess.run([ew, "replay", "-q", "-d", db, pcap], check=True)
            out = subprocess.run([ew, "events", "-d", db, "--json"], check=True,
                                 capture_output=True, text=True).stdout
            seen = out.count("www.hidden.test")
            want = 22 if name == "keepalive" else 2  # and the 10 second requests, answered
            print("cap_blind.py: %s: %d events name www.hidden.test" % (name, seen))
            if seen != want:
                bad = 1
            os.unlink(pcap)
    return bad


if __name__ == "__main__":
    sys.exit(main())
