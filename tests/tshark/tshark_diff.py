#!/usr/bin/python3
"""tshark_diff.py - egresswatch's DNS events against tshark's, message for message.

README
------
    tests/tshark/tshark_diff.py --egresswatch BUILD/egresswatch
        [--random SEED:COUNT ...] [--known tests/tshark/known-differences.txt]
        [--verbose] [PCAP|DIR ...]

For every PCAP (and every .pcap and .pcapng file in a DIR), and for every SEED:COUNT capture that gen_dns_random.py makes (random
well-formed DNS over UDP, IPv6 and TCP), it replays the capture into a temporary
database, reads `egresswatch events --json --kind dns`, and compares that with the
DNS messages tshark decodes from the same file (tshark_dns.py), both normalized into
the conformance corpus's schema (tests/conformance/conformance.py, normalize_dns):
the whole list, in capture order, each message's transport, id, QR, opcode, header
RCODE, TC, QDCOUNT, questions, and every answer's name, type, TTL and data.  Names
are compared on their label bytes, addresses as addresses.

This is the issue's "events --json lists every DNS message that tshark shows for the
same pcap, with the same names, types, rcodes and answers", checked on every run
(the conformance suite checks it too, but only where ../shared/corpus exists).

A PCAP listed in the known-differences file (a path relative to the project root,
then " # reason") may differ by design: it is reported KNOWN and does not fail.  A
random capture must always agree: a difference there is a bug on one side, and the
failure names the seed so the capture can be made again.

Without tshark it prints SKIP and exits 77 (meson counts the test as skipped); ./dev
installs tshark, so CI always runs it.  Exit 1 on any unexpected difference.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))
import conformance  # noqa: E402

SKIP = 77
# The sensor reassembles TCP segments that arrive out of order; tshark 4.0 only
# does when asked (pcaps/dns_tcp.pcap has such a response).
TSHARK_ARGS = ("-o", "tcp.reassemble_out_of_order:TRUE")


def load_known(path):
    known = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    p, _, why = line.partition(" # ")
                    known[p.strip()] = why.strip()
    return known


def check(runner, pcap, label, verbose):
    """(ok, detail) for one capture."""
    import tshark_dns
    db, note = runner.replay(pcap)
    if db is None:
        return False, note
    ours = conformance.normalize_dns(runner.events(db, "dns"))
    theirs = tshark_dns.tshark_dns(pcap, TSHARK_ARGS)
    ok, detail = conformance.compare("dns", "exact", theirs, ours)
    if verbose or not ok:
        detail = "%s (tshark %d, egresswatch %d messages)" % (detail, len(theirs), len(ours))
    return ok, detail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--egresswatch", required=True)
    ap.add_argument("--random", action="append", default=[], metavar="SEED:COUNT")
    ap.add_argument("--known")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("pcaps", nargs="*")
    a = ap.parse_args()
    if not shutil.which("tshark"):
        print("SKIP: tshark not found")
        return SKIP
    known = load_known(a.known)
    runner = conformance.Runner(a.egresswatch, 300)
    tmp = tempfile.mkdtemp(prefix="ew-tshark.")
    passed = failed = known_n = 0
    unexpected = []
    try:
        jobs = []
        for p in a.pcaps:
            files = ([os.path.join(p, f) for f in sorted(os.listdir(p))
                      if f.endswith((".pcap", ".pcapng"))] if os.path.isdir(p) else [p])
            for f in files:
                jobs.append((os.path.relpath(os.path.abspath(f), ROOT), f, None))
        for spec in a.random:
            seed, _, count = spec.partition(":")
            out = os.path.join(tmp, "random-%s.pcap" % seed)
            # scapy comes from Debian's python3-scapy: the system python
            py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
            g = subprocess.run([py, os.path.join(HERE, "gen_dns_random.py"), seed, count or "1000",
                                out], capture_output=True, text=True)
            if g.returncode != 0:
                print("FAIL gen_dns_random.py %s %s: exit %d\n    %s" % (
                    seed, count, g.returncode, g.stderr.strip().replace("\n", "\n    ")))
                failed += 1
                unexpected.append("random seed " + seed)
                continue
            jobs.append(("random seed %s, %s exchanges" % (seed, count or "1000"), out, seed))
        for label, path, seed in jobs:
            ok, detail = check(runner, path, label, a.verbose)
            if ok:
                passed += 1
                print("PASS %s: %s" % (label, detail))
            elif seed is None and label in known:
                known_n += 1
                print("KNOWN %s  # %s\n    %s" % (label, known[label], detail.replace("\n", "\n    ")))
            else:
                failed += 1
                unexpected.append(label)
                again = ("\n    make it again: gen_dns_random.py %s %s OUT.pcap" %
                         (seed, label.split(", ")[1].split()[0]) if seed is not None else "")
                print("FAIL %s:\n    %s%s" % (label, detail.replace("\n", "\n    "), again))
        for k in known:
            if not any(k == j[0] for j in jobs):
                print("NOTE: %s is listed as a known difference but was not checked" % k)
    finally:
        runner.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed, %d known differences" % (passed, failed, known_n))
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
