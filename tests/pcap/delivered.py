#!/usr/bin/env python3
"""delivered.py [--subset] EGRESSWATCH PCAP DELIVERED SUFFIX - the DNS
queries the sensor reports in PCAP whose names end in SUFFIX must be
exactly the names listed in DELIVERED (one a line): what the Linux kernel of
the recording delivered to its listener (pcaps/review21/frag/record6.sh
fuzz, frag). With --subset the sensor may report more (a first-wins
datagram beside the one Linux made), but must report every one the kernel
delivered. Prints how many agree and each difference; exits 1 on any."""
import json, os, subprocess, sys, tempfile


def main():
    args = sys.argv[1:]
    subset = args[:1] == ["--subset"]
    ew, pcap, delivered, suffix = args[1:5] if subset else args[:4]
    want = set(open(delivered).read().split())
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "ew.db")
        subprocess.run([ew, "replay", "-q", "--no-progress", "-d", db, pcap], check=True)
        out = subprocess.run([ew, "events", "-d", db, "--kind", "dns", "--json"], check=True,
                             capture_output=True, text=True).stdout
    got = set()
    for line in out.splitlines():
        d = json.loads(line)["dns"]
        if d.get("qr") == "query" and d.get("qname", "").endswith(suffix):
            got.add(d["qname"])
    for n in sorted(got - want):
        if not subset:
            print("reported, not delivered by the kernel: %s" % n)
    for n in sorted(want - got):
        print("delivered by the kernel, not reported: %s" % n)
    print("%d queries delivered by the kernel, %d reported, %d of the kernel's missing" %
          (len(want), len(got), len(want - got)))
    bad = want - got if subset else got ^ want
    return 1 if bad or not want else 0


if __name__ == "__main__":
    sys.exit(main())
