#!/usr/bin/python3
"""conformance.py - check egresswatch's events against the shared conformance corpus.

README
------
    tests/conformance/conformance.py --egresswatch BUILD/egresswatch \\
        --corpus ../shared/corpus/conformance [--kinds dns[,http,tls,icmp]] \\
        [--known tests/conformance/known-differences.txt] [--report FILE] \\
        [--only SUBSTRING] [--verbose]

(--corpus and --report may also come from $EW_CONFORMANCE_CORPUS and
$EW_CONFORMANCE_REPORT.)  If the corpus folder does not exist it prints
"SKIP: ... not found" and exits 77, which meson counts as a skipped test.

For every line of the corpus's expected.jsonl that carries an expectation for one of
the selected kinds (default: dns; the "dns" lists of http/tls/icmp/tunnel lines are
checked too), it replays the line's pcap once into a temporary database
(`egresswatch replay -d DB PCAP`, exit 0 or 1 accepted), reads
`egresswatch events -d DB --json --kind K`, normalizes our events into the corpus
schema (conformance/README.md) with the kind's normalizer, and compares:
  - "match": "exact" (derived_by tshark): the whole list, in order.  `frame` is
    dropped from the expectation unless our events carry a `frame` field.
  - "match": "subset" (derived_by source): every listed record must be matched by
    some record of ours (not one-to-one), comparing only the fields the record has
    (answers: each listed answer must be among ours; answers_by_type; answers_len;
    a TXT value given as one string matches the concatenation of our strings).
Names are compared case-insensitively on their label bytes (our `\\xNN`, `\\.`,
`\\\\` and the corpus's `\\DDD` forms are decoded first), addresses as addresses.

It prints PASS/FAIL/KNOWN per (pcap, kind, derived_by) with the first mismatch of a
failure, then "N passed, N failed" (known differences are counted apart), and exits 1
if any failure's pcap is not listed in the known-differences file, 2 on usage errors.
known-differences.txt: one line per pcap path as written in expected.jsonl, then
" # reason"; blank lines and lines starting with '#' are ignored.

Adding a kind: write normalize_<kind>(events) -> list of corpus-shaped records and a
compare function if the generic one is not enough, and add it to KINDS below.
"""
import argparse
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

OPCODES = {"QUERY": 0, "IQUERY": 1, "STATUS": 2, "NOTIFY": 4, "UPDATE": 5, "DSO": 6}
RCODES = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN",
          "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE", "DSOTYPENI", "RCODE12", "RCODE13",
          "RCODE14", "RCODE15", "BADVERS", "BADKEY", "BADTIME", "BADMODE", "BADNAME",
          "BADALG", "BADTRUNC", "BADCOOKIE"]


def header_rcode(rc):
    """The corpus gives the 4-bit header RCODE; we may give the EDNS-extended one
    (BADVERS = 16 ...): keep its low 4 bits.  BADSIG shares 16 with BADVERS."""
    if not isinstance(rc, str):
        return rc
    if rc == "BADSIG":
        n = 16
    elif rc in RCODES:
        n = RCODES.index(rc)
    elif rc.startswith("RCODE") and rc[5:].isdigit():
        n = int(rc[5:])
    else:
        return rc
    return RCODES[n & 0xF] if n > 15 else rc

# ---------------------------------------------------------------- names


def decode_name(s):
    """Presentation-form name -> list of label bytes (root -> []), case kept.
    Understands `\\xNN` (ours), `\\DDD` (RFC 1035, the corpus) and `\\X`."""
    labels, cur, i, n = [], bytearray(), 0, len(s)
    if s in (".", ""):
        return []
    while i < n:
        c = s[i]
        if c == "\\" and i + 1 < n:
            hx, dd = s[i + 2:i + 4], s[i + 1:i + 4]
            if s[i + 1] == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", hx):
                cur.append(int(hx, 16))
                i += 4
            elif re.fullmatch(r"[0-9]{3}", dd) and int(dd) < 256:
                cur.append(int(dd))
                i += 4
            else:
                cur += s[i + 1].encode("utf-8")
                i += 2
            continue
        if c == ".":
            labels.append(bytes(cur))
            cur = bytearray()
        else:
            cur += c.encode("utf-8")
        i += 1
    if cur or not labels:
        labels.append(bytes(cur))
    return labels


def name_labels(s):
    """Comparison key of a name: lowercased label bytes; non-strings pass through."""
    if not isinstance(s, str):
        return s
    return tuple(x.lower() for x in decode_name(s))


def rfc1035(s):
    """Our name form -> the corpus's presentation form (\\DDD outside 0x21-0x7e,
    backslash before . \\ " ( ) ; @ $), as check_tshark.sh's wire_name() writes it."""
    if not isinstance(s, str):
        return s
    labs = decode_name(s)
    if not labs:
        return "."
    out = []
    for lab in labs:
        o = []
        for c in lab:
            if c in (0x2E, 0x5C, 0x22, 0x28, 0x29, 0x3B, 0x40, 0x24):
                o.append("\\" + chr(c))
            elif 0x21 <= c <= 0x7E:
                o.append(chr(c))
            else:
                o.append("\\%03d" % c)
        out.append("".join(o))
    return ".".join(out)


def strip_dot(s):
    if isinstance(s, str) and len(s) > 1 and s.endswith(".") and not s.endswith("\\."):
        return s[:-1]
    return s

# ---------------------------------------------------------------- dns normalizer


def _split(data, n):
    if not isinstance(data, str):
        return None
    parts = data.split(" ")
    return parts if len(parts) >= n else None


def dns_answer(a):
    t = a.get("type")
    d = a.get("data")
    ttl = a.get("ttl")
    if isinstance(d, str) and d.startswith("\\# "):
        d = None                  # RFC 3597 form: rdata we (and tshark) could not interpret
    if t == "OPT":
        ttl = None                # tshark gives no TTL for OPT (it holds the EDNS flags)
    if d is None:
        pass
    elif t in ("CNAME", "NS", "PTR", "DNAME"):
        d = rfc1035(strip_dot(d)) if isinstance(d, str) else d
    elif t == "MX":
        p = _split(d, 2)
        d = rfc1035(strip_dot(p[1])) if p else d
    elif t == "SOA":
        p = _split(d, 1)
        d = rfc1035(strip_dot(p[0])) if p else d
    elif t == "SRV":
        p = _split(d, 4)
        d = "%s %s %s %s" % (p[0], p[1], p[2], rfc1035(strip_dot(p[3]))) if p else d
    elif t in ("TXT", "SPF"):
        d = list(d) if isinstance(d, list) else ([d] if isinstance(d, str) else d)
    elif t == "NULL":
        d = d.lower() if isinstance(d, str) else d
    elif t in ("A", "AAAA"):
        pass
    else:
        d = None
    return {"name": rfc1035(strip_dot(a.get("name"))), "type": t, "ttl": ttl, "data": d}


def normalize_dns(events):
    out = []
    for ev in events:
        d = ev.get("dns") or {}
        op = d.get("opcode")
        if isinstance(op, str):
            op = OPCODES.get(op, int(op[6:]) if op.startswith("OPCODE") and op[6:].isdigit() else op)
        qr = d.get("qr")
        rec = {}
        if "frame" in ev:
            rec["frame"] = ev["frame"]
        rec["transport"] = ev.get("proto")
        rec["id"] = d.get("id")
        rec["qr"] = qr
        rec["opcode"] = op
        rec["rcode"] = header_rcode(d.get("rcode")) if qr == "response" else None
        rec["tc"] = bool(d.get("tc"))
        counts = d.get("counts") or {}
        rec["qdcount"] = counts.get("qd")
        qs = d.get("questions")
        if isinstance(qs, list) and qs:
            questions = [{"qname": rfc1035(strip_dot(q.get("qname", q.get("name")))),
                          "qtype": q.get("qtype", q.get("type"))} for q in qs]
        elif d.get("qname") is not None or d.get("qtype") is not None:
            questions = [{"qname": rfc1035(strip_dot(d.get("qname"))), "qtype": d.get("qtype")}]
        else:
            questions = []
        rec["qname"] = questions[0]["qname"] if questions else None
        rec["qtype"] = questions[0]["qtype"] if questions else None
        if len(questions) > 1:
            rec["questions"] = questions
        rec["answers"] = [dns_answer(a) for a in (d.get("answers") or [])]
        if op == 5:
            # UPDATE: tshark counts "zones" and "prerequisites", not questions and
            # answers, so the corpus has qdcount null and no answers for it.
            rec["qdcount"] = None
            rec["answers"] = []
        out.append(rec)
    return out


NAME_FIELDS = {"qname", "name"}
NAME_DATA_TYPES = {"CNAME", "NS", "PTR", "DNAME", "MX", "SOA"}


def _addr(s):
    try:
        return ipaddress.ip_address(s)
    except (ValueError, TypeError):
        return s


def dns_value_eq(field, exp, got, rtype=None, loose_txt=False):
    if field in NAME_FIELDS or (field == "data" and rtype in NAME_DATA_TYPES):
        return name_labels(exp) == name_labels(got)
    if field == "data" and rtype in ("A", "AAAA"):
        return _addr(exp) == _addr(got)
    if field == "data" and rtype == "SRV" and isinstance(exp, str) and isinstance(got, str):
        e, g = exp.split(" ", 3), got.split(" ", 3)
        return len(e) == 4 and len(g) == 4 and e[:3] == g[:3] and name_labels(e[3]) == name_labels(g[3])
    if field == "data" and rtype == "NULL" and isinstance(exp, str) and isinstance(got, str):
        return exp.lower() == got.lower()
    if field == "data" and loose_txt and isinstance(got, list):
        if isinstance(exp, str):
            return exp == "".join(got) or exp in got
        if isinstance(exp, list):
            return exp == got or "".join(exp) == "".join(got)
    if field == "data" and rtype is None:
        # a subset answer without a type: try every interpretation
        if isinstance(got, list):
            return dns_value_eq(field, exp, got, "TXT", True)
        return (exp == got or _addr(exp) == _addr(got)
                or (isinstance(exp, str) and isinstance(got, str) and name_labels(exp) == name_labels(got)))
    return exp == got


def dns_answer_eq(exp, got, partial):
    rtype = exp.get("type") or got.get("type")
    for k, v in exp.items():
        if partial and k not in got:
            return False
        if not dns_value_eq(k, v, got.get(k), rtype, loose_txt=partial):
            return False
    return partial or not (set(got) - set(exp))


def dns_record_eq(exp, got, partial):
    """partial=False: all of exp's fields and only those; partial=True: exp's fields only."""
    for k, v in exp.items():
        if k == "answers":
            ga = got.get("answers") or []
            if partial:
                if not match_all(v, ga, lambda e, g: dns_answer_eq(e, g, True)):
                    return False
            else:
                if len(v) != len(ga) or not all(dns_answer_eq(e, g, False) for e, g in zip(v, ga)):
                    return False
        elif k == "answers_by_type":
            ga = got.get("answers") or []
            for t, vals in v.items():
                have = [a.get("data") for a in ga if a.get("type") == t]
                for val in vals:
                    if not any(dns_value_eq("data", val, h, t, True) for h in have):
                        return False
        elif k == "answers_len":
            if len(got.get("answers") or []) != v:
                return False
        elif k == "questions":
            gq = got.get("questions") or ([{"qname": got.get("qname"), "qtype": got.get("qtype")}]
                                          if got.get("qname") is not None else [])
            if len(v) != len(gq) or not all(
                    name_labels(a.get("qname")) == name_labels(b.get("qname")) and a.get("qtype") == b.get("qtype")
                    for a, b in zip(v, gq)):
                return False
        elif k not in got and not partial and v is None:
            continue
        elif not dns_value_eq(k, v, got.get(k)):
            return False
    if not partial:
        extra = [k for k in got if k not in exp and got[k] is not None]
        if extra:
            return False
    return True

# ---------------------------------------------------------------- other kinds (sketches)


def normalize_http(events):
    out = []
    for ev in events:
        h = ev.get("http") or {}
        if not h.get("method"):
            continue                      # responses are not in the corpus
        rec = {"method": h.get("method"), "host": h.get("host"), "uri": h.get("uri")}
        if "frame" in ev:
            rec = dict(frame=ev["frame"], **rec)
        out.append(rec)
    return out


def normalize_icmp(events):
    out = []
    for ev in events:
        i = ev.get("icmp") or {}
        v = 6 if (ev.get("proto") == "icmpv6" or ":" in str(ev.get("src_ip", ""))) else 4
        rec = {"v": v, "type": i.get("type"), "code": i.get("code")}
        if "frame" in ev:
            rec = dict(frame=ev["frame"], **rec)
        out.append(rec)
    return out


ROUTER_SNI = "another server_name, as an SNI router reads the hello"


def normalize_tls(events):
    """Our ClientHello events (tls.hello == "client") -> {"sni", "ech"} per hello,
    in event order; ServerHello events are not ClientHellos and are left out, and
    so are the hellos of QUIC Initials ("transport": "quic"): the corpus counts
    hellos over TCP only.  A hello without a server_name has "sni": None, as in
    the corpus.  The events that give another name an SNI router would take
    from the same hello (docs/events.md, "tls"; pcaps/review21/tls) are a
    second reading of a hello already counted, not one more hello: left out."""
    hellos = []
    for ev in events:
        t = ev.get("tls") or {}
        if t.get("hello") != "client" or t.get("transport") == "quic" or ev.get("proto") == "udp":
            continue
        if t.get("malformed") == ROUTER_SNI:
            continue
        sni = t.get("sni")
        rec = {"sni": sni if isinstance(sni, str) and sni != "" else None,
               "ech": bool(t.get("ech"))}
        if "frame" in ev:
            rec = dict(frame=ev["frame"], **rec)
        hellos.append(rec)
    return hellos


def _pct_decoded(s):
    """A URI with %XX escapes decoded, as zeek's http.log shows it (README);
    bytes that are not UTF-8 are read as Latin-1."""
    import urllib.parse
    raw = urllib.parse.unquote_to_bytes(s)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def generic_eq(exp, got, partial):
    for k, v in exp.items():
        if partial and k not in got:
            return False
        g = got.get(k)
        if k in ("host", "sni") and isinstance(v, str) and isinstance(g, str):
            if v.lower() != g.lower():
                return False
        elif k == "uri" and partial and isinstance(v, str) and isinstance(g, str):
            # source lines: zeek percent-decodes URIs; we keep them as sent
            if v != g and v != _pct_decoded(g):
                return False
        elif v != g:
            return False
    return partial or not (set(got) - set(exp))


# kind -> (event kind for `events --kind`, expect keys, normalizer, record comparator)
KINDS = {
    "dns": ("dns", ("dns",), normalize_dns, dns_record_eq),
    "http": ("http", ("http",), normalize_http, generic_eq),
    "icmp": ("icmp", ("icmp",), normalize_icmp, generic_eq),
    "tls": ("tls", ("client_hellos", "sni"), normalize_tls, generic_eq),
}

# ---------------------------------------------------------------- matching


def match_all(exp_list, got_list, eq):
    """Every expected item is matched by some got item."""
    return first_unmatched(exp_list, got_list, eq) is None


def first_unmatched(exp_list, got_list, eq):
    """Index of the first expected item that no got item matches, or None.
    Not a one-to-one matching: a source line often asserts the same message twice
    (suricata-verify's v1 and v2 tests of one pcap are merged into one line)."""
    for i, e in enumerate(exp_list):
        if not any(eq(e, g) for g in got_list):
            return i
    return None


def strip_frames(exp_list, got_list):
    if got_list and all("frame" in g for g in got_list):
        return exp_list
    return [{k: v for k, v in e.items() if k != "frame"} for e in exp_list]


def field_diff(exp, got, eq, extras=True, partial=False):
    """Lines naming the fields of exp that eq() says got does not match (and got's
    extra fields); for lists of answers, the first differing answer."""
    keys = list(exp) + ([k for k in got if k not in exp and got[k] is not None] if extras else [])
    out = []
    for k in keys:
        ev, gv = exp.get(k, "<absent>"), got.get(k, "<absent>")
        if k in ("answers_by_type", "answers_len") and eq({k: ev}, got, True):
            continue                    # assertions about the answers, not fields
        if k in exp and k in got and eq({k: ev}, {k: gv}, partial):
            continue
        if isinstance(ev, list) and isinstance(gv, list) and len(ev) == len(gv):
            for i, (x, y) in enumerate(zip(ev, gv)):
                if json.dumps(x, sort_keys=True) != json.dumps(y, sort_keys=True) and \
                        not eq({k: [x]}, {k: [y]}, partial):
                    ev, gv, k = x, y, "%s[%d]" % (k, i)
                    break
        out.append("      %s: expected %s\n      %s  got      %s" % (
            k, _short(ev), " " * len(k), _short(gv)))
    return "\n".join(out)


def closest(exp, got_list, eq):
    """The got record that matches the most of exp's fields."""
    best, score = None, -1
    for g in got_list:
        n = sum(1 for k in exp if k in g and eq({k: exp[k]}, {k: g[k]}, True))
        if n > score:
            best, score = g, n
    return best


def _short(v, n=300):
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= n else s[:n] + "..."


def compare(kind, match, exp_list, got_list):
    """Returns (ok, detail)."""
    eq = KINDS[kind][3]
    if kind == "tls" and isinstance(exp_list, dict):
        return compare_tls(match, exp_list, got_list)
    if match == "exact":
        exp_list = strip_frames(exp_list, got_list)
        for i, (e, g) in enumerate(zip(exp_list, got_list)):
            if not eq(e, g, False):
                return False, "record %d of %d differs:\n%s" % (i + 1, len(exp_list), field_diff(e, g, eq))
        if len(exp_list) != len(got_list):
            i = min(len(exp_list), len(got_list))
            more = ("missing record %d: %s" % (i + 1, _short(exp_list[i])) if len(exp_list) > i
                    else "extra record %d: %s" % (i + 1, _short(got_list[i])))
            return False, "expected %d records, got %d; %s" % (len(exp_list), len(got_list), more)
        return True, "%d records" % len(exp_list)
    i = first_unmatched(exp_list, got_list, lambda e, g: eq(e, g, True))
    if i is None:
        return True, "%d assertions" % len(exp_list)
    detail = "assertion %d of %d not found among %d records: %s" % (
        i + 1, len(exp_list), len(got_list), _short(exp_list[i]))
    near = closest(exp_list[i], got_list, eq)
    if near is not None:
        detail += "\n    closest record:\n" + field_diff(exp_list[i], near, eq, extras=False, partial=True)
    return False, detail


def _sni_key(s):
    """Comparison key of an SNI: lowercased (zeek lowercases); None stays None."""
    return s.lower() if isinstance(s, str) else None


def compare_tls(match, exp, hellos):
    """exp: {"sni": [...], "client_hellos": [...]} (either may be absent).
    "sni" of an exact line lists the names of the hellos that have one, in order;
    a source line's "sni" may hold null (zeek's "-"), asserting a hello without one."""
    sni = [h["sni"] for h in hellos if h.get("sni") is not None]
    if "sni" in exp:
        have = [_sni_key(s) for s in sni]
        if match == "exact":
            want = [_sni_key(s) for s in exp["sni"]]
            if want != have:
                return False, "sni: expected %s, got %s" % (_short(exp["sni"]), _short(sni))
        else:
            all_keys = [_sni_key(h.get("sni")) for h in hellos]
            missing = [w for w in exp["sni"] if _sni_key(w) not in all_keys]
            if missing:
                return False, "sni: %s not all among %s" % (
                    _short(exp["sni"]), _short([h.get("sni") for h in hellos]))
    if "client_hellos" in exp:
        ok, detail = compare("tls_hellos", match, exp["client_hellos"], hellos)
        if not ok:
            return False, "client_hellos: " + detail
    return True, "%d hellos" % len(hellos)


KINDS["tls_hellos"] = ("tls", (), normalize_tls, generic_eq)

# ---------------------------------------------------------------- running


class Runner:
    def __init__(self, binary, timeout):
        self.binary, self.timeout = binary, timeout
        self.tmp = tempfile.mkdtemp(prefix="ew-conformance.")
        self.cache = {}

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def replay(self, pcap):
        """Returns (db path or None, note)."""
        if pcap in self.cache:
            return self.cache[pcap]
        db = os.path.join(self.tmp, "%d.db" % len(self.cache))
        try:
            p = subprocess.run([self.binary, "replay", "-d", db, pcap], capture_output=True,
                               timeout=self.timeout)
            if p.returncode in (0, 1):
                res = (db, "" if p.returncode == 0 else
                       "replay exit 1: " + p.stderr.decode("utf-8", "replace").strip()[:200])
            else:
                res = (None, "replay exit %d: %s" % (p.returncode,
                                                    p.stderr.decode("utf-8", "replace").strip()[:300]))
        except subprocess.TimeoutExpired:
            res = (None, "replay timed out after %ds" % self.timeout)
        self.cache[pcap] = res
        return res

    def events(self, db, kind):
        p = subprocess.run([self.binary, "events", "-d", db, "--json", "--kind", kind],
                           capture_output=True, timeout=self.timeout)
        if p.returncode != 0:
            raise RuntimeError("events exit %d: %s" % (p.returncode,
                                                      p.stderr.decode("utf-8", "replace").strip()[:300]))
        out = []
        for n, line in enumerate(p.stdout.decode("utf-8").splitlines(), 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError as e:
                    raise RuntimeError("events line %d is not JSON (%s): %s" % (n, e, line[:200]))
        out = [e for e in out if e.get("kind", kind) == kind]
        out.sort(key=lambda e: e.get("id", 0))
        return out


def load_known(path):
    known = {}
    if not path or not os.path.exists(path):
        return known
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            pcap, _, reason = s.partition("#")
            known[pcap.strip()] = reason.strip()
    return known


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="egresswatch conformance against the shared corpus")
    ap.add_argument("--egresswatch", required=True, help="path of the egresswatch binary")
    ap.add_argument("--corpus", default=os.environ.get("EW_CONFORMANCE_CORPUS"),
                    help="corpus folder holding expected.jsonl")
    ap.add_argument("corpus_pos", nargs="?", help=argparse.SUPPRESS)
    ap.add_argument("--kinds", default="dns", help="comma-separated: dns,http,tls,icmp (default dns)")
    ap.add_argument("--known", default=os.path.join(here, "known-differences.txt"))
    ap.add_argument("--report", default=os.environ.get("EW_CONFORMANCE_REPORT"),
                    help="write the results as JSON to this file")
    ap.add_argument("--only", default=None, help="only pcaps whose path contains this")
    ap.add_argument("--match", choices=("exact", "subset", "both"), default="both")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per egresswatch run")
    ap.add_argument("-v", "--verbose", action="store_true", help="print PASS lines' details too")
    a = ap.parse_args()
    corpus = a.corpus or a.corpus_pos
    if not corpus:
        ap.error("--corpus DIR is required")
    expected = os.path.join(corpus, "expected.jsonl")
    if not os.path.isfile(expected):
        print("SKIP: conformance corpus %s not found" % expected)
        return SKIP
    if not (os.path.isfile(a.egresswatch) and os.access(a.egresswatch, os.X_OK)):
        print("conformance.py: %s: not an executable" % a.egresswatch, file=sys.stderr)
        return 2
    kinds = [k.strip() for k in a.kinds.split(",") if k.strip()]
    for k in kinds:
        if k not in KINDS or k == "tls_hellos":
            ap.error("unknown kind %r (have %s)" % (k, ", ".join(x for x in KINDS if x != "tls_hellos")))
    known = load_known(a.known)

    lines = []
    with open(expected, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                lines.append((n, json.loads(line)))

    runner = Runner(os.path.abspath(a.egresswatch), a.timeout)
    results = []
    npass = nfail = nknown = 0
    unexpected = 0
    try:
        for n, e in lines:
            if a.only and a.only not in e["pcap"]:
                continue
            if a.match != "both" and e.get("match") != a.match:
                continue
            for kind in kinds:
                evkind, keys, normalize, _ = KINDS[kind]
                x = e.get("expect", {})
                if not any(k in x for k in keys):
                    continue
                if kind == "tls":
                    exp = {k: x[k] for k in keys if k in x}
                else:
                    exp = x[keys[0]]
                pcap = os.path.join(corpus, e["pcap"])
                label = "%s [%s %s/%s]" % (e["pcap"], kind, e.get("derived_by"), e.get("match"))
                res = {"pcap": e["pcap"], "line": n, "kind": kind, "derived_by": e.get("derived_by"),
                       "match": e.get("match")}
                db, note = runner.replay(pcap)
                if db is None:
                    ok, detail = False, note
                else:
                    try:
                        got = normalize(runner.events(db, evkind))
                        ok, detail = compare(kind, e.get("match"), exp, got)
                    except (RuntimeError, subprocess.TimeoutExpired) as err:
                        ok, detail = False, str(err)
                    if note and not ok:
                        detail = note + "\n    " + detail
                res["detail"] = detail
                if ok:
                    npass += 1
                    res["status"] = "pass"
                    print("PASS  %s%s" % (label, ("  " + detail) if a.verbose else ""))
                elif e["pcap"] in known:
                    nknown += 1
                    res["status"] = "known"
                    res["reason"] = known[e["pcap"]]
                    print("KNOWN %s  # %s" % (label, known[e["pcap"]]))
                    if a.verbose:
                        print("    " + detail)
                else:
                    nfail += 1
                    unexpected += 1
                    res["status"] = "fail"
                    print("FAIL  %s\n    %s" % (label, detail))
                results.append(res)
    finally:
        runner.close()
    failing = set(r["pcap"] for r in results if r["status"] != "pass")
    tried = set(r["pcap"] for r in results)
    for p in sorted(set(known) & tried - failing):
        print("NOTE  %s is listed in known-differences but passes now" % p)
    print("%d passed, %d failed%s" % (npass, nfail + nknown,
                                      " (%d of them known differences)" % nknown if nknown else ""))
    if a.report:
        with open(a.report, "w", encoding="utf-8") as f:
            json.dump({"egresswatch": a.egresswatch, "corpus": corpus, "kinds": kinds,
                       "passed": npass, "failed": nfail + nknown, "known": nknown,
                       "unexpected_failures": unexpected, "results": results}, f, indent=1)
            f.write("\n")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
