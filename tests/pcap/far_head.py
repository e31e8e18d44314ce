#!/usr/bin/env python3
"""far_head.py - heads far past 64 KiB, in a capture too large to commit.

    far_head.py EGRESSWATCH REVIEW_DIR

Writes REVIEW_DIR/far_head.py's 'big' capture (pcaps/review20/http: a request with
1,000,000 bytes of filler fields before its Host and Content-Length, as Go's
net/http takes, whose body looks like a request; and one of 8.5 MB, past the
sensor's second bound HTTP_HEAD_FAR, each followed by another request),
replays it and requires exactly these requests, in order (method, Host,
target): the body is no request, the Host behind a megabyte is read, the
head past 8 MiB is reported without the Host it never reached, and the
requests after both are read. Exit 0 when so, 1 otherwise, 2 on a failed
command.
"""
import json
import os
import subprocess
import sys
import tempfile

WANT = [
    ("POST", "www.evil.test", "/go-bound", "head longer than 65536 bytes"),
    ("GET", "www.decoy.test", "/next", None),
    ("GET", None, "/past-far", "head longer than 65536 bytes"),
    ("GET", "www.after.test", "/after-far", None),
]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    ew, review = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="ew-farhead.") as tmp:
        pcap, db = os.path.join(tmp, "far.pcap"), os.path.join(tmp, "far.db")
        try:
            subprocess.run([sys.executable, os.path.join(review, "far_head.py"), pcap, "big"],
                           check=True)
            subprocess.run([ew, "replay", "-q", "-d", db, pcap], check=True)
            out = subprocess.run([ew, "events", "-d", db, "--json"], check=True,
                                 capture_output=True, text=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            print("far_head.py: %s" % e, file=sys.stderr)
            return 2
    got = []
    for line in out.splitlines():
        h = json.loads(line).get("http", {})
        if "method" in h:
            got.append((h["method"], h.get("host"), h.get("uri"), h.get("malformed")))
    for g in got:
        print("far_head.py: %r" % (g,))
    if got != WANT:
        print("far_head.py: expected %r" % (WANT,))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
