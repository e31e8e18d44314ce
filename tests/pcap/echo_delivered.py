#!/usr/bin/env python3
"""echo_delivered.py EGRESSWATCH PCAP DELIVERED - the ICMP echo requests of
id 0x77 the sensor reports in PCAP must be exactly those whose sequence
numbers DELIVERED lists (one a line): what the Linux kernel of the
recording delivered to raw sockets (pcaps/review21/frag/record6.sh ping).
Prints how many agree and each difference; exits 1 on any."""
import json, os, subprocess, sys, tempfile


def main():
    ew, pcap, delivered = sys.argv[1:4]
    want = {int(x) for x in open(delivered).read().split()}
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "ew.db")
        subprocess.run([ew, "replay", "-q", "--no-progress", "-d", db, pcap], check=True)
        out = subprocess.run([ew, "events", "-d", db, "--kind", "icmp", "--json"], check=True,
                             capture_output=True, text=True).stdout
    got = set()
    for line in out.splitlines():
        m = json.loads(line)["icmp"]
        if m.get("name") == "echo-request" and m.get("id") == 0x77:
            got.add(m["seq"])
    for s in sorted(got - want):
        print("reported, not delivered by the kernel: seq %d" % s)
    for s in sorted(want - got):
        print("delivered by the kernel, not reported: seq %d" % s)
    print("%d echo requests delivered by the kernel, %d reported" % (len(want), len(got)))
    return 1 if got != want or not want else 0


if __name__ == "__main__":
    sys.exit(main())
