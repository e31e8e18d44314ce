#!/usr/bin/env python3
"""The detection suite: replay each recorded capture with the sandbox rules and
require exactly the expected set of alert classes (tests/detect/expected.txt),
the expected outcomes, and nothing at all on the benign capture. Also prints
each tunnel's detection delay: the DNS queries to the tunnel's domain up to
and including the one that raised the first dns_tunnel alert (at most 20),
and for ICMP the echo messages between the alert's two hosts up to and
including the one that raised the first icmp_tunnel alert (at most 8; for a
channel that only sends, whose replies are the kernel's echoes, at most the
requests thresholds.icmp_distinct_data allows, 8, the ninth, and the replies
to the eight before it: 17).

    detect.py EGRESSWATCH PROJECT_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

ew, root = sys.argv[1], sys.argv[2]
here = os.path.join(root, "tests", "detect")
rules = os.path.join(here, "sandbox.yaml")
want, outcomes = {}, []
# captures of a channel that only sends (the far end's kernel echoes it): the
# most echo messages before its icmp_tunnel alert
SEND_ONLY = {"icmp_pattern.pcap": 2 * (8 + 1) - 1, "icmp_lead.pcap": 2 * (8 + 1) - 1}
with open(os.path.join(here, "expected.txt")) as f:
    for line in f:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("outcome "):
            outcomes.append(line.split()[1:])
            continue
        pcap, _, classes = line.partition(":")
        want[pcap.strip()] = set(classes.split())

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what)


def lines(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines() if l.strip()]


alerts_of = {}
with tempfile.TemporaryDirectory(prefix="ew-detect.") as tmp:
    for pcap in sorted(want):
        db = os.path.join(tmp, pcap + ".db")
        path = os.path.join(root, "pcaps", "detect", pcap)
        r = subprocess.run([ew, "replay", "-q", "-c", rules, "-d", db, path],
                           capture_output=True, text=True)
        check(r.returncode == 0, "%s: replay exited %d: %s" % (pcap, r.returncode, r.stderr.strip()))
        alerts = lines([ew, "alerts", "-d", db, "--json"])
        alerts_of[pcap] = alerts
        got = {a["class"] for a in alerts}
        check(got == want[pcap], "%s: classes %s, want %s" % (pcap, sorted(got), sorted(want[pcap])))
        print("%-18s %s" % (pcap, " ".join("%s(%d)" % (a["class"], a["count"]) for a in alerts) or "no alerts"))
        for a in alerts:
            if a["class"] != "dns_tunnel" or a is not next(
                    x for x in alerts if x["class"] == "dns_tunnel"):
                continue
            events = lines([ew, "events", "-d", db, "--json", "--kind", "dns"])
            dom = a["subject"]
            n = sum(1 for e in events if e["dns"]["qr"] == "query"
                    and e["dns"].get("qname", "").lower().endswith(dom)
                    and e["ts"] <= a["first_ts"])
            print("%-18s first dns_tunnel alert after %d queries to %s" % ("", n, dom))
            check(n <= 20, "%s: detected after %d queries, want at most 20" % (pcap, n))
        tun = [a for a in alerts if a["class"] == "icmp_tunnel"]
        if tun:
            a = tun[0]
            hosts = {a["src_ip"], a["subject"]}
            events = lines([ew, "events", "-d", db, "--json", "--kind", "icmp"])
            n = sum(1 for e in events if e["icmp"]["type"] in (0, 8, 128, 129)
                    and {e["src_ip"], e["dst_ip"]} == hosts and e["ts"] <= a["first_ts"])
            most = SEND_ONLY.get(pcap, 8)
            print("%-18s first icmp_tunnel alert after %d echo messages with %s" % ("", n, a["subject"]))
            check(n <= most, "%s: detected after %d echo messages, want at most %d" % (pcap, n, most))
    for pcap, cls, subject, outcome in outcomes:
        rows = [a for a in alerts_of.get(pcap, []) if a["class"] == cls and a["subject"] == subject]
        check(len(rows) == 1 and rows[0]["outcome"] == outcome,
              "%s: %s %s outcome %s, want %s" % (pcap, cls, subject,
                                                [r["outcome"] for r in rows], outcome))
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
