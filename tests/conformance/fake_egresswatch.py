#!/usr/bin/python3
"""fake_egresswatch.py - a tshark-backed stand-in for egresswatch, to test conformance.py.

README
------
    tests/conformance/conformance.py --egresswatch tests/conformance/fake_egresswatch.py \\
        --corpus ../shared/corpus/conformance

Implements just `replay -d DB PCAP...` (records the pcap paths in DB, a JSON file)
and `events -d DB --json --kind dns`: it decodes the pcaps with the normalizer inside
../shared/corpus/check_tshark.sh (tshark PDML) and prints the records in
architecture.md section 4's event shape (names with \\xNN escapes, opcode mnemonics,
MX "pref exchange", SOA "mname ..." and so on).  conformance.py must then turn them
back into exactly the corpus's tshark lines, so this exercises its normalizer and
comparator end to end without the real binary.  Set EW_CHECK_TSHARK to the script's
path if the corpus is elsewhere.  Not a test of egresswatch; never registered in meson.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.environ.get("EW_CHECK_TSHARK",
                       os.path.join(HERE, "..", "..", "..", "shared", "corpus", "check_tshark.sh"))
OPNAMES = {0: "QUERY", 1: "IQUERY", 2: "STATUS", 4: "NOTIFY", 5: "UPDATE", 6: "DSO"}


def load_normalizer():
    src = open(CHECK, encoding="utf-8").read()
    py = src.split("<<'PYEOF'\n", 1)[1].split("\nPYEOF", 1)[0]
    ns = {"__name__": "check_tshark"}
    exec(compile(py, CHECK, "exec"), ns)
    return ns


def ours(name):
    """Corpus form (\\DDD, \\X) -> ours (\\xNN outside 0x20-0x7e, \\. and \\\\)."""
    if name is None or name == ".":
        return name
    out, i = [], 0
    while i < len(name):
        c = name[i]
        if c == "\\" and re.fullmatch(r"[0-9]{3}", name[i + 1:i + 4]):
            b = int(name[i + 1:i + 4])
            out.append(chr(b) if 0x20 <= b <= 0x7E and b not in (0x2E, 0x5C) else
                       ("\\." if b == 0x2E else "\\\\" if b == 0x5C else "\\x%02x" % b))
            i += 4
        elif c == "\\" and i + 1 < len(name):
            out.append("\\" + name[i + 1] if name[i + 1] in ".\\" else name[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def event(n, m):
    answers = []
    for a in m["answers"]:
        d, t = a["data"], a["type"]
        if t in ("CNAME", "NS", "PTR", "DNAME"):
            d = ours(d)
        elif t == "MX" and d is not None:
            d = "10 " + ours(d)
        elif t == "SOA" and d is not None:
            d = ours(d) + " hostmaster.invalid 1 2 3 4 5"
        elif t == "SRV" and d is not None:
            p = d.split(" ", 3)
            d = " ".join(p[:3] + [ours(p[3])])
        answers.append({"name": ours(a["name"]), "type": t, "ttl": a["ttl"], "data": d})
    dns = {"id": m["id"], "qr": m["qr"],
           "opcode": OPNAMES.get(m["opcode"], "OPCODE%s" % m["opcode"]),
           "rcode": m["rcode"] or "NOERROR", "flags": [], "tc": m["tc"],
           "qname": ours(m["qname"]), "qtype": m["qtype"], "answers": answers,
           "counts": {"qd": m["qdcount"], "an": len(answers), "ns": 0, "ar": 0}}
    if dns["qname"] is None:
        del dns["qname"]
    if "questions" in m:
        dns["questions"] = [{"qname": ours(q["qname"]), "qtype": q["qtype"]} for q in m["questions"]]
    return {"id": n, "ts": "2026-11-29T10:00:00.000000Z", "kind": "dns", "src_ip": "192.0.2.1",
            "src_port": 1, "dst_ip": "192.0.2.2", "dst_port": 53, "proto": m["transport"], "dns": dns}


def main(argv):
    if len(argv) < 2:
        return 2
    cmd, args = argv[1], argv[2:]
    db = args[args.index("-d") + 1]
    if cmd == "replay":
        pcaps = [a for i, a in enumerate(args) if a != "-d" and (i == 0 or args[i - 1] != "-d")]
        json.dump(pcaps, open(db, "w"))
        return 0
    if cmd == "events":
        ct = load_normalizer()
        n = 0
        for pcap in json.load(open(db)):
            for m in ct["run"](pcap, ["dns"])["dns"]:
                n += 1
                print(json.dumps(event(n, m), ensure_ascii=False))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
