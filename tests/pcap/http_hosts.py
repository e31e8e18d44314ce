#!/usr/bin/env python3
"""http_hosts.py EGRESSWATCH PCAP DELIVERED - for each connection listed in
DELIVERED ("<client port> <Host>" a line: what the Linux server of the
recording read, pcaps/review21/frag/record6.sh tcp), the sensor's HTTP
request event from that client port in PCAP must have that Host ("-": the
server read no Host, and the sensor must report none). Prints how many
agree and each difference; exits 1 on any."""
import json, os, subprocess, sys, tempfile


def main():
    ew, pcap, delivered = sys.argv[1:4]
    want = {}
    for line in open(delivered):
        port, host = line.split()[:2] # a third column: the bytes it read
        want[int(port)] = host
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "ew.db")
        subprocess.run([ew, "replay", "-q", "--no-progress", "-d", db, pcap], check=True)
        out = subprocess.run([ew, "events", "-d", db, "--kind", "http", "--json"], check=True,
                             capture_output=True, text=True).stdout
    got = {}
    for line in out.splitlines():
        e = json.loads(line)
        if e["http"].get("method") and e["src_port"] in want:
            got.setdefault(e["src_port"], e["http"].get("host") or "-")
    bad = 0
    for port in sorted(want):
        if got.get(port, "-") != want[port]:
            bad += 1
            print("port %d: the server read %s, the sensor %s" % (port, want[port], got.get(port, "-")))
    print("%d connections, %d agree, %d differ" % (len(want), len(want) - bad, bad))
    return 1 if bad or not want else 0


if __name__ == "__main__":
    sys.exit(main())
