#!/usr/bin/env python3
"""delivered.py [--subset | --echo] EGRESSWATCH PCAP DELIVERED [SUFFIX] -
what the sensor reports in PCAP must be exactly what the Linux kernel of
the recording delivered, as DELIVERED lists it (one a line):
- the DNS queries whose names end in SUFFIX, against the names the
  kernel delivered to its listener (pcaps/review21/frag/record6.sh fuzz,
  frag, whole); with --subset the sensor may report more (a first-wins
  datagram beside the one Linux made), but must report every one the
  kernel delivered;
- with --echo, the ICMP echo requests of id 0x77, against the sequence
  numbers the kernel delivered to raw sockets (record6.sh ping).
Prints how many agree and each difference; exits 1 on any."""
import json, os, subprocess, sys, tempfile


def reported(ew, pcap, kind, pick):
    """The set of pick(event's kind object) over PCAP's events of KIND,
    None left out."""
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "ew.db")
        subprocess.run([ew, "replay", "-q", "--no-progress", "-d", db, pcap], check=True)
        out = subprocess.run([ew, "events", "-d", db, "--kind", kind, "--json"], check=True,
                             capture_output=True, text=True).stdout
    got = {pick(json.loads(line)[kind]) for line in out.splitlines()}
    got.discard(None)
    return got


def main():
    args = sys.argv[1:]
    mode = args.pop(0) if args[:1] in (["--subset"], ["--echo"]) else ""
    if mode == "--echo":
        ew, pcap, delivered = args[:3]
        want = {int(x) for x in open(delivered).read().split()}
        got = reported(ew, pcap, "icmp", lambda m: m["seq"] if m.get("name") == "echo-request"
                       and m.get("id") == 0x77 else None)
        what = "echo requests"
    else:
        ew, pcap, delivered, suffix = args[:4]
        want = set(open(delivered).read().split())
        got = reported(ew, pcap, "dns", lambda d: d["qname"] if d.get("qr") == "query"
                       and d.get("qname", "").endswith(suffix) else None)
        what = "queries"
    subset = mode == "--subset"
    for n in sorted(got - want):
        if not subset:
            print("reported, not delivered by the kernel: %s" % n)
    for n in sorted(want - got):
        print("delivered by the kernel, not reported: %s" % n)
    print("%d %s delivered by the kernel, %d reported, %d of the kernel's missing" %
          (len(want), what, len(got), len(want - got)))
    bad = want - got if subset else got ^ want
    return 1 if bad or not want else 0


if __name__ == "__main__":
    sys.exit(main())
