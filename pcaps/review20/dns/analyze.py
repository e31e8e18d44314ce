#!/usr/bin/env python3
"""analyze.py DIR EGRESSWATCH - join record.sh's results per case: did each
resolver answer (rcode), what question reached the authority (its log, by
time window), and what the sensor reported for the client's query (replay of
client_*.pcap, events --json, joined on the DNS id). Prints one table per
resolver and writes table.json into $TMPDIR (default /tmp). DIR is record.sh's
$OUT (results_R.json, auth_R.log, client_R.pcap) or this directory, whose
hostile_R_results.json, hostile_R_authority.log and hostile_R_client.pcap are
the committed recording (FINDINGS.md)."""
import json, os, subprocess, sys

OUTD, EW = sys.argv[1], sys.argv[2]
TMP = os.environ.get("TMPDIR", "/tmp")
table = {}
for res in ("dnsmasq", "unbound"):
    rp = os.path.join(OUTD, "results_%s.json" % res)
    names = ("results_%s.json", "auth_%s.log", "client_%s.pcap")
    if not os.path.exists(rp):
        names = ("hostile_%s_results.json", "hostile_%s_authority.log", "hostile_%s_client.pcap")
    rp, ap, cp = (os.path.join(OUTD, n % res) for n in names)
    if not os.path.exists(rp):
        continue
    results = json.load(open(rp))
    auth = [json.loads(l) for l in open(ap)]
    db = os.path.join(TMP, "ewh3-sensor_%s.db" % res)
    if os.path.exists(db):
        os.unlink(db)
    subprocess.run([EW, "replay", "-q", "-d", db, cp], check=True)
    ev = subprocess.run([EW, "events", "-d", db, "--json", "--limit", "100000"], check=True,
                        capture_output=True, text=True).stdout
    evs = [json.loads(l) for l in ev.splitlines() if l.strip()]
    rows = []
    for k, r in enumerate(results):
        t0 = r["t"]
        t1 = results[k + 1]["t"] if k + 1 < len(results) else 1e12
        # (auth.py rounds its times to the millisecond: the window starts
        # 1 ms early, so a query forwarded at once is not put in the case before)
        up = [a.get("qname") if a.get("qname") is not None else "?" + a["hex"][:24]
              for a in auth if t0 - 0.001 <= a["t"] < t1 - 0.001]
        ids = {r["id"]}
        if r["cid"] in ("tcp_two_seg", "tcp_len_big", "tcp_garbage", "tcp_len_small"):
            ids.add(r["id"] + 1)
        sens = []
        for e in evs:
            d = e.get("dns") or {}
            if d.get("id") in ids and d.get("qr") == "query" and e["src_ip"] == "10.53.3.10":
                s = d.get("qname", "")
                extra = []
                if d.get("malformed"):
                    extra.append("MALFORMED:" + str(d.get("malformed")))
                if d.get("opcode") != "QUERY":
                    extra.append(str(d.get("opcode")))
                sens.append(s + (" [" + ",".join(extra) + "]" if extra else ""))
        ans = ";".join("rc%d" % x.get("rcode", -1) for x in r["replies"]) or "none"
        rows.append(dict(cid=r["cid"], answered=ans, upstream=up, sensor=sens))
        print("%-16s %-10s up=%s\n%28s sensor=%s" % (r["cid"], ans, up, "", sens))
    table[res] = rows
    print("-" * 60)
json.dump(table, open(os.path.join(TMP, "table.json"), "w"), indent=1)
