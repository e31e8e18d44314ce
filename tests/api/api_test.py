#!/usr/bin/env python3
"""The HTTP API (docs/api.md, architecture.md section 5), end to end.

usage: api_test.py EGRESSWATCH PCAPS_DIR

Replays fixtures into a temporary database, starts `egresswatch serve` on
127.0.0.1 with an ephemeral port (read back from its log line), and checks
every endpoint: JSON shapes, filters, every bad parameter, methods, unknown
paths, cursor paging (also while another process inserts alerts), the
server-sent-event stream, /metrics, the bearer token, slow and oversized
clients, and shutdown. Python's standard library only; every connection goes
to 127.0.0.1. Prints "N passed, N failed" and exits 1 on any failure.
"""
import datetime
import http.client
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

EW = os.path.abspath(sys.argv[1])
PCAPS = os.path.abspath(sys.argv[2])
SRC_ROOT = os.path.dirname(PCAPS)

RULES = """\
sandbox:
  networks: [10.99.0.0/24, "fd00:99::/64"]
allow:
  proxies: ["10.99.0.2:8080"]
  resolvers: ["10.99.0.53"]
  destinations: []
  domains: []
  ipv6: false
  dns_over_tcp: false
"""

CLASSES = ["dns_tunnel", "metadata_probe", "dns_rebind", "proxy_bypass", "udp_egress",
           "icmp_egress", "icmp_tunnel", "ipv6_egress", "dns_over_tcp", "doh", "websocket",
           "smtp", "domain_not_allowed", "proxy_denied"]
SEVERITIES = ["info", "low", "medium", "high", "critical"]
ALERT_KEYS = ["id", "class", "severity", "first_ts", "last_ts", "count", "outcome", "src_ip",
              "src_port", "dst_ip", "dst_port", "proto", "subject", "score", "rule", "summary",
              "evidence"]
TS_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")

passed = 0
failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s %s" % (name, detail), flush=True)
    return cond


class Server:
    """egresswatch serve, its log read on a thread until the URL shows."""

    def __init__(self, db, addr="127.0.0.1:0", token_file=None):
        args = [EW, "serve", "-d", db, "--api", addr]
        if token_file:
            args += ["--token-file", token_file]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        self.log = []
        self.port = None
        ready = threading.Event()

        def reader():
            for line in self.proc.stdout:
                self.log.append(line)
                m = re.search(r"serving API on http://(\[[^\]]+\]|[^/:]+):(\d+)/", line)
                if m and not self.port:
                    self.port = int(m.group(2))
                    ready.set()
            ready.set()

        self.thread = threading.Thread(target=reader, daemon=True)
        self.thread.start()
        ready.wait(10)
        if not self.port:
            raise RuntimeError("serve did not start: %s" % "".join(self.log))

    def stop(self, timeout=10):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
            rc = "hung"
        self.thread.join(2)
        return rc


def request(port, path, method="GET", headers=None, body=None, timeout=10):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    finally:
        c.close()


def get_json(port, path, headers=None):
    st, hd, data = request(port, path, headers=headers)
    try:
        return st, hd, json.loads(data)
    except ValueError:
        return st, hd, None


def run(args, **kw):
    return subprocess.run([EW] + args, capture_output=True, text=True, **kw)


# ---- the tests -------------------------------------------------------------------------


def test_shapes(port, db):
    st, hd, body = get_json(port, "/healthz")
    check("healthz 200", st == 200 and body and body.get("status") == "ok", str(body))

    st, hd, body = get_json(port, "/api/v1/alerts")
    check("alerts 200", st == 200, str(st))
    check("alerts content-type", hd.get("content-type", "").startswith("application/json"))
    check("alerts no-store", hd.get("cache-control") == "no-store")
    check("alerts nosniff", hd.get("x-content-type-options") == "nosniff")
    check("alerts body keys", body and list(body) == ["alerts", "next_since_id"], str(body)[:200])
    alerts = body["alerts"]
    check("alerts not empty", len(alerts) >= 3, str(len(alerts)))
    classes = {a["class"] for a in alerts}
    check("alerts of several classes", len(classes) >= 3, str(classes))
    ids = [a["id"] for a in alerts]
    check("alerts in id order", ids == sorted(ids) and len(set(ids)) == len(ids))
    check("next_since_id is the last id", body["next_since_id"] == ids[-1])
    for a in alerts:
        ok = (list(a) == ALERT_KEYS and a["class"] in CLASSES and a["severity"] in SEVERITIES
              and TS_RE.match(a["first_ts"]) and TS_RE.match(a["last_ts"])
              and isinstance(a["count"], int) and a["outcome"] in ("blocked", "answered", "unknown")
              and isinstance(a["evidence"], list))
        if not check("alert shape (section 4)", ok, json.dumps(a)[:300]):
            break
    # The same objects as the CLI's --json lines.
    cli = run(["alerts", "-d", db, "--json"])
    cli_rows = [json.loads(l) for l in cli.stdout.splitlines() if l.strip()]
    check("alerts equal the CLI's", cli_rows == alerts,
          "%d vs %d rows" % (len(cli_rows), len(alerts)))

    # Alert by id.
    st, hd, one = get_json(port, "/api/v1/alerts/%d" % ids[0])
    check("alert by id 200", st == 200 and one == alerts[0], str(one)[:200])
    st, hd, one = get_json(port, "/api/v1/alerts/999999999")
    check("alert by id 404", st == 404 and one and "error" in one, "%s %s" % (st, one))
    for bad in ("abc", "0", "-1", "1x", "99999999999999999999", "%20"):
        st, hd, one = get_json(port, "/api/v1/alerts/" + bad)
        check("alert id %r is 400" % bad, st == 400 and one and "id" in one.get("error", ""),
              "%s %s" % (st, one))
    st, hd, one = get_json(port, "/api/v1/alerts/1/extra")
    check("alert id with a path after it is 404", st == 404, str(st))

    # Events.
    st, hd, body = get_json(port, "/api/v1/events?limit=1000")
    check("events 200", st == 200 and list(body) == ["events", "next_since_id"], str(body)[:200])
    events = body["events"]
    cli = run(["events", "-d", db, "--json", "--limit", "1000"])
    cli_rows = [json.loads(l) for l in cli.stdout.splitlines() if l.strip()]
    check("events equal the CLI's", cli_rows == events, "%d vs %d" % (len(cli_rows), len(events)))
    kinds = set()
    for kind in ("dns", "http", "tls", "icmp"):
        st, hd, body = get_json(port, "/api/v1/events?kind=%s&limit=1000" % kind)
        ok = st == 200 and all(e["kind"] == kind for e in body["events"])
        check("events kind=%s" % kind, ok, str(body)[:200])
        if body["events"]:
            kinds.add(kind)
        check("events kind=%s count" % kind,
              len(body["events"]) == sum(1 for e in events if e["kind"] == kind))
    check("events of every kind", kinds == {"dns", "http", "tls", "icmp"}, str(kinds))
    # Event paging with the cursor.
    seen, since = [], 0
    while True:
        st, hd, body = get_json(port, "/api/v1/events?limit=37&since_id=%d" % since)
        if st != 200 or not body["events"]:
            check("events page end keeps the cursor", st == 200 and body["next_since_id"] == since)
            break
        seen += [e["id"] for e in body["events"]]
        since = body["next_since_id"]
    check("event paging equals one listing", seen == [e["id"] for e in events])
    # host: the events to or from one address, with kind, and paged; the
    # CLI's --host lists the same
    hosts = sorted({e["src_ip"] for e in events} | {e["dst_ip"] for e in events})
    for host in hosts:
        want = [e["id"] for e in events if host in (e["src_ip"], e["dst_ip"])]
        st, hd, body = get_json(port, "/api/v1/events?host=%s&limit=1000" % host)
        check("events host=%s" % host, st == 200 and [e["id"] for e in body["events"]] == want,
              "%s: %d vs %d" % (st, len(body["events"]) if body else -1, len(want)))
        cli = run(["events", "-d", db, "--json", "--host", host])
        check("events --host %s equals host=" % host,
              [json.loads(l)["id"] for l in cli.stdout.splitlines() if l.strip()] == want)
    host = max(hosts, key=lambda h: sum(1 for e in events if host_of(e, h)))
    want = [e["id"] for e in events if host_of(e, host) and e["kind"] == "dns"]
    seen, since = [], 0
    while True:
        st, hd, body = get_json(port, "/api/v1/events?host=%s&kind=dns&limit=7&since_id=%d"
                                % (host, since))
        if st != 200 or not body["events"]:
            break
        seen += [e["id"] for e in body["events"]]
        since = body["next_since_id"]
    check("host and kind paged equal one listing", seen == want and len(want) > 7,
          "%d vs %d" % (len(seen), len(want)))
    st, hd, body = get_json(port, "/api/v1/events?host=0:0::1")
    check("host IPv6 in another spelling", st == 200 and body["events"] == [], str(body))
    # name: the events whose name is the one asked for or one under it,
    # case ignored, with or without a port; the CLI's --name lists the same
    names = {}
    for e in events:
        n = event_name(e)
        if n:
            labels = n.split(":")[0].split(".")
            for k in range(len(labels)):
                names.setdefault(".".join(labels[k:]), set())
    check("names to filter by", len(names) > 5, str(sorted(names)))
    matched = 0
    for name in sorted(names):
        for asked in (name, name.upper() + ".", "*." + name):
            want = [e["id"] for e in events if name_under(event_name(e), name)]
            st, hd, body = get_json(port, "/api/v1/events?name=%s&limit=1000"
                                    % urllib.parse.quote(asked))
            got = [e["id"] for e in body["events"]] if st == 200 else None
            check("events name=%s" % asked, got == want, "%s: %s vs %s" % (st, got, want))
            matched += asked == name and len(want) > 0
            if asked != name:
                continue
            cli = run(["events", "-d", db, "--json", "--name", asked])
            check("events --name %s equals name=" % asked,
                  [json.loads(l)["id"] for l in cli.stdout.splitlines() if l.strip()] == want)
    # most are names of events or their parents; an address's parts are not
    check("names that match events", matched > len(names) // 2, "%d of %d" % (matched, len(names)))
    test_time_range(port, db, events, alerts)
    return alerts


def epoch_us(ts):
    """An RFC 3339 time as the events show it, in microseconds."""
    d = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ")
    d = d.replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp()) * 1000000 + d.microsecond


def test_time_range(port, db, events, alerts):
    """from= and to=: the events with from <= ts < to, the alerts hit in the
    range (last_ts >= from, first_ts < to), written as RFC 3339 in other
    zones and as seconds since 1970; the same as the CLI's --from/--to."""
    times = sorted({epoch_us(e["ts"]) for e in events})
    check("events span some time", len(times) > 10, str(len(times)))
    lo, hi = times[len(times) // 4], times[3 * len(times) // 4]

    def rfc(us, zone=0):
        d = datetime.datetime.fromtimestamp(us // 1000000, datetime.timezone.utc) + \
            datetime.timedelta(hours=zone, microseconds=us % 1000000)
        s = d.strftime("%Y-%m-%dT%H:%M:%S.%f")
        return s + ("Z" if zone == 0 else "%+03d:00" % zone)
    want = [e["id"] for e in events if lo <= epoch_us(e["ts"]) < hi]
    check("a quarter to three quarters is some", 0 < len(want) < len(events), str(len(want)))
    for f, t in ((rfc(lo), rfc(hi)), (rfc(lo, 5), rfc(hi, -3)),
                 ("%d.%06d" % divmod(lo, 1000000), "%d.%06d" % divmod(hi, 1000000))):
        q = urllib.parse.urlencode({"from": f, "to": t, "limit": 1000})
        st, hd, body = get_json(port, "/api/v1/events?" + q)
        check("events from=%s to=%s" % (f, t),
              st == 200 and [e["id"] for e in body["events"]] == want,
              "%s %s" % (st, str(body)[:200]))
    cli = run(["events", "-d", db, "--json", "--from", rfc(lo), "--to", rfc(hi)])
    check("events --from --to equal from= to=",
          [json.loads(l)["id"] for l in cli.stdout.splitlines() if l.strip()] == want)
    # one bound, with a kind and paged
    want = [e["id"] for e in events if epoch_us(e["ts"]) >= lo and e["kind"] == "dns"]
    seen, since = [], 0
    while True:
        q = urllib.parse.urlencode({"from": rfc(lo), "kind": "dns", "limit": 5, "since_id": since})
        st, hd, body = get_json(port, "/api/v1/events?" + q)
        if st != 200 or not body["events"]:
            break
        seen += [e["id"] for e in body["events"]]
        since = body["next_since_id"]
    check("from, kind, paged equal one listing", seen == want and len(want) > 5,
          "%d vs %d" % (len(seen), len(want)))
    q = urllib.parse.urlencode({"to": rfc(times[0])})
    st, hd, body = get_json(port, "/api/v1/events?" + q)
    check("to= the first event's time: none (to is not in the range)",
          st == 200 and body["events"] == [], str(body)[:200])
    # alerts: hit within the range
    spans = [(a["id"], epoch_us(a["first_ts"]), epoch_us(a["last_ts"])) for a in alerts]
    for f, t in ((lo, hi), (times[0], times[0] + 1), (hi, times[-1] + 1)):
        want = [i for i, first, last in spans if last >= f and first < t]
        q = urllib.parse.urlencode({"from": rfc(f), "to": rfc(t), "limit": 1000})
        st, hd, body = get_json(port, "/api/v1/alerts?" + q)
        check("alerts from=%s to=%s" % (rfc(f), rfc(t)),
              st == 200 and [a["id"] for a in body["alerts"]] == want,
              "%s %s vs %s" % (st, str(body)[:200], want))
        cli = run(["alerts", "-d", db, "--json", "--from", rfc(f), "--to", rfc(t)])
        check("alerts --from --to equal from= to=",
              [json.loads(l)["id"] for l in cli.stdout.splitlines() if l.strip()] == want)
    check("some alert is outside some range",
          any(len([i for i, first, last in spans if last >= f and first < t]) < len(spans)
              for f, t in ((lo, hi), (times[0], times[0] + 1), (hi, times[-1] + 1))))


def host_of(e, h):
    return h in (e["src_ip"], e["dst_ip"])


def event_name(e):
    """The name an event carries (its row's name): the qname, the Host (a
    response's: its request's), the SNI, an ICMP error's quoted destination."""
    if e["kind"] == "dns":
        return e["dns"].get("qname")
    if e["kind"] == "http":
        h = e["http"]
        return h.get("host") if "method" in h else h.get("request", {}).get("host")
    if e["kind"] == "tls":
        return e["tls"].get("sni")
    return e["icmp"].get("quoted", {}).get("dst_ip")


def name_under(n, name):
    """n is name or under it, with or without a port, ASCII case ignored."""
    if not n:
        return False
    raw, name = n.lower(), name.lower()
    n = raw.replace(".:", ":").rstrip(".")  # a trailing dot as sent is no matter
    if n == name:
        return True
    if raw.count(":") >= 2:  # an IPv6 address: itself alone
        return False
    address = re.fullmatch(r"[0-9.:]*", raw) is not None  # under nothing
    for m in (n, n.split(":", 1)[0] if ":" in n else None):
        if m is not None and (m == name or (m.endswith("." + name) and not address)):
            return True
    return False


def test_filters(port, alerts):
    by_class = {}
    for a in alerts:
        by_class.setdefault(a["class"], []).append(a["id"])
    for cls, ids in by_class.items():
        st, hd, body = get_json(port, "/api/v1/alerts?class=" + cls)
        check("class=%s" % cls, st == 200 and [a["id"] for a in body["alerts"]] == ids,
              str(body)[:200])
    st, hd, body = get_json(port, "/api/v1/alerts?class=smtp&since_id=0")
    check("class with no alerts", st == 200 and body["alerts"] == [] and body["next_since_id"] == 0)
    for i, sev in enumerate(SEVERITIES):
        st, hd, body = get_json(port, "/api/v1/alerts?severity=" + sev)
        want = [a["id"] for a in alerts if SEVERITIES.index(a["severity"]) >= i]
        check("severity=%s is a minimum" % sev,
              st == 200 and [a["id"] for a in body["alerts"]] == want)
    srcs = {a["src_ip"] for a in alerts if a["src_ip"]}
    for src in srcs:
        st, hd, body = get_json(port, "/api/v1/alerts?src=" + src)
        want = [a["id"] for a in alerts if a["src_ip"] == src]
        check("src=%s" % src, st == 200 and [a["id"] for a in body["alerts"]] == want)
    st, hd, body = get_json(port, "/api/v1/alerts?src=0:0:0::1")
    check("src IPv6 accepted", st == 200 and body["alerts"] == [], str(body))
    mid = alerts[len(alerts) // 2]["id"]
    st, hd, body = get_json(port, "/api/v1/alerts?since_id=%d" % mid)
    check("since_id", st == 200 and [a["id"] for a in body["alerts"]] ==
          [a["id"] for a in alerts if a["id"] > mid])
    st, hd, body = get_json(port, "/api/v1/alerts?limit=2")
    check("limit=2", st == 200 and len(body["alerts"]) == 2 and
          body["next_since_id"] == alerts[1]["id"])
    cls = alerts[0]["class"]
    st, hd, body = get_json(port, "/api/v1/alerts?class=%s&severity=info&src=%s&limit=1000"
                            % (cls, alerts[0]["src_ip"]))
    check("filters combined", st == 200 and body["alerts"] and
          all(a["class"] == cls for a in body["alerts"]))

    # Paging with limit=1 through every alert equals one listing.
    seen, since, pages = [], 0, 0
    while pages < 10000:
        st, hd, body = get_json(port, "/api/v1/alerts?limit=1&since_id=%d" % since)
        pages += 1
        if not body["alerts"]:
            break
        check("page of one", len(body["alerts"]) == 1)
        seen.append(body["alerts"][0])
        since = body["next_since_id"]
    check("limit=1 paging equals one listing", seen == alerts, "%d vs %d" % (len(seen), len(alerts)))


def test_errors(port):
    bad = [
        ("/api/v1/alerts?limit=0", "limit"),
        ("/api/v1/alerts?limit=1001", "limit"),
        ("/api/v1/alerts?limit=abc", "limit"),
        ("/api/v1/alerts?limit=-1", "limit"),
        ("/api/v1/alerts?limit=", "limit"),
        ("/api/v1/alerts?limit", "limit"),
        ("/api/v1/alerts?limit=%2B5", "limit"),
        ("/api/v1/alerts?since_id=-1", "since_id"),
        ("/api/v1/alerts?since_id=x", "since_id"),
        ("/api/v1/alerts?since_id=99999999999999999999", "since_id"),
        ("/api/v1/alerts?since_seq=-1", "since_seq"),
        ("/api/v1/alerts?since_seq=abc", "since_seq"),
        ("/api/v1/alerts?since_seq=1&since_id=1", "since_seq"),
        ("/api/v1/events?since_seq=1", "since_seq"),
        ("/api/v1/alerts?class=nope", "class"),
        ("/api/v1/alerts?class=", "class"),
        ("/api/v1/alerts?severity=urgent", "severity"),
        ("/api/v1/alerts?severity=6", "severity"),
        ("/api/v1/alerts?src=999.1.1.1", "src"),
        ("/api/v1/alerts?src=abc", "src"),
        ("/api/v1/alerts?src=10.0.0.0/8", "src"),
        ("/api/v1/events?host=10.0.0.0/8", "host"),
        ("/api/v1/events?host=abc", "host"),
        ("/api/v1/events?name=", "name"),
        ("/api/v1/events?name=.example.com", "name"),
        ("/api/v1/events?name=a%09b", "name"),
        ("/api/v1/events?name=" + "a" * 1025, "name"),
        ("/api/v1/events?from=yesterday", "from"),
        ("/api/v1/events?to=2026-11-29T10:00:08", "to"),
        ("/api/v1/events?from=2026-11-30&to=2026-11-29", "from"),
        ("/api/v1/events?from=2026-11-30&to=2026-11-30", "from"),
        ("/api/v1/alerts?from=2026-02-30", "from"),
        ("/api/v1/alerts?to=", "to"),
        ("/api/v1/stream?from=x", "from"),
        ("/api/v1/events?kind=foo", "kind"),
        ("/api/v1/events?kind=dns_query", "kind"),
        ("/api/v1/events?limit=5000", "limit"),
        ("/api/v1/events?since_id=1.5", "since_id"),
        ("/api/v1/stream?since_id=x", "since_id"),
        ("/api/v1/stream?class=x", "class"),
    ]
    for path, name in bad:
        st, hd, body = get_json(port, path)
        check("400 %s" % path, st == 400 and body and name in body.get("error", ""),
              "%s %s" % (st, body))
    for path, name in [("/api/v1/alerts?foo=1", "foo"), ("/api/v1/events?class=dns", "class"),
                       ("/api/v1/stats?x=1", "x"), ("/metrics?a=b", "a"),
                       ("/healthz?verbose", "verbose"), ("/api/v1/alerts/1?limit=1", "limit")]:
        st, hd, body = get_json(port, path)
        check("unknown parameter %s" % path,
              st == 400 and body == {"error": "unknown parameter: " + name}, "%s %s" % (st, body))
    st, hd, body = get_json(port, "/api/v1/alerts?limit=1&limit=2")
    check("duplicate parameter", st == 400 and "limit" in body["error"], str(body))
    st, hd, body = get_json(port, "/api/v1/alerts?%3Cscript%3E%FF=1")
    check("hostile parameter name escaped", st == 400 and body and
          "<script>\\xff" in body["error"], str(body))
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        st, hd, data = request(port, "/api/v1/alerts", method=method, body=b"{}" if method in
                               ("POST", "PUT", "PATCH") else None)
        body = json.loads(data) if data else None
        check("%s is 405" % method, st == 405 and "GET" in hd.get("allow", "") and
              body and "error" in body, "%s %s %s" % (st, hd.get("allow"), data[:100]))
    st, hd, data = request(port, "/api/v1/alerts/1", method="DELETE")
    check("DELETE alert is 405", st == 405)
    for path in ("/api/v1/nope", "/nope", "/api/v2/alerts", "/static/nope.js", "/api/v1/alertsx",
                 "/static/../api/v1/alerts"):
        st, hd, body = get_json(port, path)
        check("404 %s" % path, st == 404 and body and "error" in body, "%s %s" % (st, body))
    st, hd, data = request(port, "/api/v1/alerts", method="HEAD")
    check("HEAD 200 without a body", st == 200 and data == b"", "%s %r" % (st, data[:50]))


def test_stats_metrics(port, db, alerts):
    st, hd, s = get_json(port, "/api/v1/stats")
    check("stats 200", st == 200 and s is not None)
    for k in ("packets", "bytes", "drops", "capture", "decode", "analyzers", "events", "alerts",
              "uptime_s"):
        check("stats has %s" % k, k in s, str(list(s)))
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    table = dict(con.execute("SELECT name, value FROM stats"))
    con.close()
    check("stats packets", s["packets"] == table["packets"] and s["packets"] > 0)
    check("stats bytes", s["bytes"] == table["bytes"])
    check("stats decode layers", s["decode"]["ipv4"] ==
          {"ok": table["decode.ipv4.ok"], "truncated": table["decode.ipv4.truncated"],
           "malformed": table["decode.ipv4.malformed"]}, str(s["decode"].get("ipv4")))
    check("stats analyzers", s["analyzers"]["dns"]["ok"] == table["module.dns.ok"] and
          set(s["analyzers"]["dns"]) == {"ok", "truncated", "malformed"})
    frag_keys = {"held", "reassembled", "expired", "evicted", "overlap", "duplicate", "conflict",
                 "bad_checksum", "linux_discard", "linux_view", "linux_same", "linux_lost",
                 "linux_far", "trimmed", "chain_cut", "rx_drop"}
    check("stats fragments", set(s.get("fragments", {})) == frag_keys and
          all(s["fragments"][k] == table["fragments." + k] for k in frag_keys),
          str(s.get("fragments")))
    flow_keys = {"udp_bad_checksum", "udp_rx_drop", "bad_checksum", "rx_drop", "inconsistent",
                 "ooo_dropped"}
    check("stats flows", all(k in s.get("flows", {}) and
                             s["flows"][k] == table["flows." + k] for k in flow_keys),
          str(s.get("flows")))
    by_class = {c: sum(1 for a in alerts if a["class"] == c) for c in CLASSES}
    by_sev = {v: sum(1 for a in alerts if a["severity"] == v) for v in SEVERITIES}
    check("stats alerts by class", s["alerts"]["by_class"] == by_class, str(s["alerts"]))
    check("stats alerts by severity", s["alerts"]["by_severity"] == by_sev, str(s["alerts"]))
    check("stats uptime", isinstance(s["uptime_s"], int) and s["uptime_s"] >= 0)

    st, hd, data = request(port, "/metrics")
    text = data.decode()
    check("metrics 200 text/plain", st == 200 and hd.get("content-type", "").startswith(
        "text/plain"), hd.get("content-type"))
    helps, types, samples = set(), {}, {}
    order_ok = True
    for line in text.splitlines():
        if not line:
            continue
        m = re.match(r"^# (HELP|TYPE) (\S+) (.+)$", line)
        if m:
            (helps.add(m.group(2)) if m.group(1) == "HELP" else
             types.__setitem__(m.group(2), m.group(3)))
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-z_]+="(?:[^"\\]|\\.)*"'
                     r'(?:,[a-z_]+="(?:[^"\\]|\\.)*")*\})? (-?[0-9.e+]+)$', line)
        if not check("metrics line format", m, repr(line)):
            continue
        name = m.group(1)
        if name not in helps or name not in types:
            order_ok = False
        samples.setdefault(name, []).append((m.group(2) or "", float(m.group(3))))
    check("metrics: HELP and TYPE before every family's samples", order_ok)
    check("metrics: names prefixed egresswatch_",
          all(n.startswith("egresswatch_") for n in list(samples) + list(types)))
    check("metrics: types known", all(t in ("counter", "gauge") for t in types.values()))
    check("metrics packets", samples.get("egresswatch_packets_total") == [("", s["packets"])])
    check("metrics decode", ('{layer="ipv4",result="ok"}', s["decode"]["ipv4"]["ok"]) in
          samples.get("egresswatch_decode_total", []))
    check("metrics analyzer", ('{analyzer="dns",result="ok"}', s["analyzers"]["dns"]["ok"]) in
          samples.get("egresswatch_analyzer_total", []))
    check("metrics fragments", sorted(samples.get("egresswatch_fragments_total", [])) ==
          sorted(('{result="%s"}' % k, v) for k, v in s["fragments"].items()),
          str(samples.get("egresswatch_fragments_total")))
    total = sum(v for _, v in samples.get("egresswatch_alerts", []))
    check("metrics alerts", total == len(alerts), "%s vs %d" % (total, len(alerts)))
    check("metrics alerts labels", all(re.match(r'^\{class="[a-z_]+",severity="[a-z]+"\}$', l)
                                       for l, _ in samples.get("egresswatch_alerts", [])))
    for fam in ("egresswatch_capture_dropped_total", "egresswatch_uptime_seconds",
                "egresswatch_events_total", "egresswatch_build_info"):
        check("metrics family %s" % fam, fam in types)


def test_dashboard(port):
    st, hd, data = request(port, "/")
    check("dashboard 200 html", st == 200 and hd.get("content-type", "").startswith("text/html"))
    check("dashboard CSP", "default-src 'self'" in hd.get("content-security-policy", ""))
    check("dashboard nosniff", hd.get("x-content-type-options") == "nosniff")
    src = os.path.join(SRC_ROOT, "api", "dashboard")
    if os.path.isfile(os.path.join(src, "index.html")):
        with open(os.path.join(src, "index.html"), "rb") as f:
            check("dashboard index.html embedded as is", f.read() == data)
    for name in sorted(os.listdir(src)) if os.path.isdir(src) else []:
        if name.startswith(".") or not os.path.isfile(os.path.join(src, name)):
            continue
        st, hd, data = request(port, "/static/" + name)
        with open(os.path.join(src, name), "rb") as f:
            check("static %s" % name, st == 200 and data == f.read(), str(st))
    st, hd, data = request(port, "/", method="HEAD")
    check("HEAD / has no body", st == 200 and data == b"")


def test_abuse(port):
    # A client that connects and sends nothing, and one that sends half a
    # request, must not stop others.
    idle = socket.create_connection(("127.0.0.1", port))
    half = socket.create_connection(("127.0.0.1", port))
    half.sendall(b"GET /api/v1/alerts HTTP/1.1\r\nHost: x\r\n")
    t0 = time.monotonic()
    ok = all(request(port, "/healthz", timeout=5)[0] == 200 for _ in range(5))
    ok = ok and request(port, "/api/v1/alerts?limit=5", timeout=5)[0] == 200
    check("slow clients do not block others", ok and time.monotonic() - t0 < 3)

    # An oversized request (100 KB header) is refused or dropped.
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    status = None
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n")
        resp = s.recv(4096)
        m = re.match(rb"HTTP/1\.[01] (\d+)", resp)
        status = int(m.group(1)) if m else "closed"
    except OSError as e:
        status = "reset (%s)" % e.__class__.__name__
    finally:
        s.close()
    check("oversized header refused", status == "closed" or str(status).startswith("reset") or
          (isinstance(status, int) and status >= 400), str(status))
    st, _, _ = request(port, "/healthz")
    check("still serving after the oversized request", st == 200)
    # A long URL too.
    st, _, _ = request(port, "/api/v1/alerts?class=" + "a" * 60000)
    check("oversized URL refused", st >= 400, str(st))

    # Concurrent clients all get answers.
    results = []

    def worker():
        for _ in range(10):
            try:
                results.append(request(port, "/api/v1/alerts?limit=10")[0])
            except OSError as e:
                results.append(repr(e))

    ts = [threading.Thread(target=worker) for _ in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check("16 concurrent clients x 10 requests", results.count(200) == 160,
          str([r for r in results if r != 200][:5]))
    half.close()
    return idle, t0


def test_idle_closed(idle, t0):
    # The idle timeout (10 s) closes a connection that never sent a request.
    idle.settimeout(max(1.0, t0 + 14 - time.monotonic()))
    try:
        data = idle.recv(100)
        closed = data == b"" or data.startswith(b"HTTP/1.1 408")
    except socket.timeout:
        closed = False
    except OSError:
        closed = True
    check("an idle connection is closed after the timeout", closed)
    idle.close()


INSERTER = r"""
import sqlite3, sys, time
db, n = sys.argv[1], int(sys.argv[2])
con = sqlite3.connect(db, timeout=10)
con.execute("PRAGMA journal_mode=WAL")
done = 0
while done < n:
    batch = min(1 + done % 4, n - done)
    with con:
        (top,) = con.execute("SELECT coalesce(max(id), 0) FROM alerts").fetchone()
        # each write takes the next write sequence, as the sensor's do
        for i in range(batch):
            con.execute("INSERT INTO alerts(id, class, severity, first_ts, last_ts, src_ip, subject, seq)"
                        " VALUES (?, 'dns_tunnel', 4, ?, ?, '10.99.0.77', ?,"
                        " (SELECT coalesce(max(seq), 0) + 1 FROM alerts))",
                        (top + 1 + i, 1795946400000000 + done, 1795946400000000 + done,
                         "t%d.example-tunnel.test" % (top + 1 + i)))
        # rows are also updated in place, as the sensor does (count, last_ts)
        con.execute("UPDATE alerts SET count = count + 1, "
                    "seq = (SELECT max(seq) + 1 FROM alerts) WHERE id = ?", (top,))
    done += batch
    time.sleep(0.002)
print("done", flush=True)
"""


def test_paging_while_inserting(port, db):
    before = [a["id"] for a in get_json(port, "/api/v1/alerts?limit=1000")[2]["alerts"]]
    ins = subprocess.Popen([sys.executable, "-c", INSERTER, db, "400"], stdout=subprocess.PIPE,
                           text=True)
    seen, since, rounds = [], 0, 0
    while rounds < 100000:
        rounds += 1
        st, hd, body = get_json(port, "/api/v1/alerts?limit=7&since_id=%d" % since)
        if st != 200:
            check("paging while inserting: 200", False, str(st))
            break
        seen += [a["id"] for a in body["alerts"]]
        since = body["next_since_id"]
        if not body["alerts"] and ins.poll() is not None:
            # The inserter is done: one more page to catch its last commit.
            st, hd, body = get_json(port, "/api/v1/alerts?limit=1000&since_id=%d" % since)
            seen += [a["id"] for a in body["alerts"]]
            break
    ins.wait()
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    all_ids = [r[0] for r in con.execute("SELECT id FROM alerts ORDER BY id")]
    con.close()
    check("paging while inserting: no repeat", len(seen) == len(set(seen)))
    check("paging while inserting: in order", seen == sorted(seen))
    check("paging while inserting: no skip", seen == all_ids,
          "%d seen, %d in the table" % (len(seen), len(all_ids)))
    check("paging while inserting: rows arrived meanwhile", len(all_ids) == len(before) + 400)


def test_paging_by_seq_while_inserting(port, db):
    """since_seq: every alert at least once, each one's last line its final
    state, the cursor only growing, while rows are inserted and updated.
    The rows already there are read first, so that the pages keep up with
    the inserter on a loaded machine and meet a row before its update."""
    seen, since, cursors, rounds = [], 0, [], 0
    while True:
        st, hd, body = get_json(port, "/api/v1/alerts?limit=1000&since_seq=%d" % since)
        if st != 200 or not body["alerts"]:
            break
        seen += [(a["id"], a["count"]) for a in body["alerts"]]
        since = body["next_since_seq"]
    ins = subprocess.Popen([sys.executable, "-c", INSERTER, db, "300"], stdout=subprocess.PIPE,
                           text=True)
    while rounds < 100000:
        rounds += 1
        st, hd, body = get_json(port, "/api/v1/alerts?limit=7&since_seq=%d" % since)
        if st != 200 or list(body) != ["alerts", "next_since_seq"]:
            check("paging by seq while inserting: 200 and the cursor", False, "%s %s" % (st, body))
            break
        seen += [(a["id"], a["count"]) for a in body["alerts"]]
        check_cursor = body["next_since_seq"] >= since and (body["alerts"] or body["next_since_seq"] == since)
        cursors.append(check_cursor)
        since = body["next_since_seq"]
        if not body["alerts"] and ins.poll() is not None:
            st, hd, body = get_json(port, "/api/v1/alerts?limit=1000&since_seq=%d" % since)
            seen += [(a["id"], a["count"]) for a in body["alerts"]]
            break
    ins.wait()
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    table = dict(con.execute("SELECT id, count FROM alerts"))
    con.close()
    last = dict(seen)  # the last line of each id wins
    check("paging by seq: the cursor only grows, and stays on an empty page", all(cursors))
    check("paging by seq: no alert skipped", set(last) == set(table),
          "%d ids seen, %d in the table" % (len(last), len(table)))
    check("paging by seq: each alert's last line is its final state",
          all(last.get(i) == c for i, c in table.items()),
          str([(i, last.get(i), c) for i, c in table.items() if last.get(i) != c][:5]))
    check("paging by seq: grown alerts came again", len(seen) > len(last), "%d lines" % len(seen))
    # Nothing written since: an empty page that keeps the cursor.
    st, hd, body = get_json(port, "/api/v1/alerts?since_seq=%d" % since)
    check("since_seq at the end: empty, cursor kept", st == 200 and body["alerts"] == [] and
          body["next_since_seq"] == since, str(body)[:200])
    # One alert grows: it alone comes next, with its new count, filtered too.
    con = sqlite3.connect(db, timeout=10)
    with con:
        (aid, cls, cnt) = con.execute("SELECT id, class, count FROM alerts ORDER BY id LIMIT 1").fetchone()
        con.execute("UPDATE alerts SET count = count + 5, seq = (SELECT max(seq) + 1 FROM alerts) "
                    "WHERE id = ?", (aid,))
    con.close()
    st, hd, body = get_json(port, "/api/v1/alerts?since_seq=%d" % since)
    check("a grown alert comes again", st == 200 and [(a["id"], a["count"]) for a in body["alerts"]]
          == [(aid, cnt + 5)] and body["next_since_seq"] > since, str(body)[:300])
    st, hd, body = get_json(port, "/api/v1/alerts?since_seq=%d&class=%s" % (since, cls))
    check("since_seq with a class filter", st == 200 and [a["id"] for a in body["alerts"]] == [aid])
    other = "smtp" if cls != "smtp" else "doh"
    st, hd, body = get_json(port, "/api/v1/alerts?since_seq=%d&class=%s" % (since, other))
    check("since_seq with another class: nothing, cursor kept", st == 200 and body["alerts"] == []
          and body["next_since_seq"] == since, str(body)[:200])


class SSE:
    """A /api/v1/stream reader on a thread: collects (id, event, data)."""

    def __init__(self, port, path="/api/v1/stream", headers=None):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.conn.request("GET", path, headers=headers or {})
        self.resp = self.conn.getresponse()
        self.events, self.comments = [], []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        cur = {}
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    break
                line = line.decode().rstrip("\n")
                with self.lock:
                    if line == "":
                        if "id" in cur or "data" in cur:
                            self.events.append(cur)
                        cur = {}
                    elif line.startswith(":"):
                        self.comments.append(line)
                    else:
                        k, _, v = line.partition(":")
                        cur[k] = v[1:] if v.startswith(" ") else v
        except Exception:  # closed under us by close(): the end of the stream
            pass

    def wait_for(self, pred, timeout=5):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if pred(self):
                    return True
            time.sleep(0.05)
        return False

    def close(self):
        try:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()


def insert_alert(db, cls="metadata_probe"):
    con = sqlite3.connect(db, timeout=10)
    with con:
        (top,) = con.execute("SELECT coalesce(max(id), 0) FROM alerts").fetchone()
        con.execute("INSERT INTO alerts(id, class, severity, first_ts, last_ts, subject, seq) "
                    "VALUES (?, ?, 5, 1, 2, 'sse \"<x>\" \x01', "
                    "(SELECT coalesce(max(seq), 0) + 1 FROM alerts))", (top + 1, cls))
    con.close()
    return top + 1


def grow_alert(db, alert_id, by=1):
    """What the sensor does when an alert grows: a new count, the next write
    sequence. Returns that sequence."""
    con = sqlite3.connect(db, timeout=10)
    with con:
        con.execute("UPDATE alerts SET count = count + ?, seq = (SELECT max(seq) + 1 FROM alerts) "
                    "WHERE id = ?", (by, alert_id))
        (seq,) = con.execute("SELECT seq FROM alerts WHERE id = ?", (alert_id,)).fetchone()
    con.close()
    return seq


def max_seq(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    (seq,) = con.execute("SELECT coalesce(max(seq), 0) FROM alerts").fetchone()
    con.close()
    return seq


def test_stream_seq(port, db):
    """?since_seq: every alert written after it, new or grown, each event's id
    its write sequence, so Last-Event-ID resumes by sequence."""
    start = max_seq(db)
    s = SSE(port, "/api/v1/stream?since_seq=%d" % start)
    check("stream since_seq connected", s.resp.status == 200 and s.wait_for(lambda x: x.comments))
    new_id = insert_alert(db)
    seq_new = max_seq(db)
    seq_grown = grow_alert(db, 1, by=7)
    ok = s.wait_for(lambda x: [e.get("id") for e in x.events] == [str(seq_new), str(seq_grown)], 5)
    check("stream since_seq: a new alert, then a grown one, ids their sequences", ok,
          str([(e.get("id"), e.get("data", "")[:40]) for e in s.events]))
    if ok:
        a, b = [json.loads(e["data"]) for e in s.events]
        (want,) = [r for r in get_json(port, "/api/v1/alerts/1")[2:]]
        check("stream since_seq: the grown alert in its new state",
              a["id"] == new_id and b["id"] == 1 and b == want, str(b)[:200])
    s.close()
    # A reconnecting EventSource sends the last id it got: a sequence here.
    s = SSE(port, "/api/v1/stream?since_seq=0", headers={"Last-Event-ID": str(seq_new)})
    ok = s.wait_for(lambda x: [e.get("id") for e in x.events] == [str(seq_grown)], 5)
    check("stream since_seq resumes after Last-Event-ID as a sequence", ok,
          str([e.get("id") for e in s.events]))
    s.close()
    for path in ("/api/v1/stream?since_seq=1&since_id=1", "/api/v1/stream?since_seq=x"):
        st, hd, body = get_json(port, path)
        check("400 %s" % path, st == 400 and "since_seq" in body.get("error", ""), str(body))


def test_stream(port, db):
    s = SSE(port)
    check("stream 200 text/event-stream", s.resp.status == 200 and
          s.resp.getheader("Content-Type", "").startswith("text/event-stream"))
    check("stream connected comment", s.wait_for(lambda x: x.comments))
    new_id = insert_alert(db)
    got = s.wait_for(lambda x: any(e.get("id") == str(new_id) for e in x.events), 5)
    check("stream delivers a new alert", got, str(s.events)[:300])
    if got:
        ev = [e for e in s.events if e.get("id") == str(new_id)][0]
        data = json.loads(ev["data"])
        check("stream event shape", ev.get("event") == "alert" and data["id"] == new_id and
              list(data) == ALERT_KEYS and data["subject"] == 'sse "<x>" \x01', str(ev)[:300])
    check("stream sends only new alerts", all(int(e["id"]) >= new_id for e in s.events))
    s.close()

    # Last-Event-ID resumes after that id; since_id does the same.
    s = SSE(port, headers={"Last-Event-ID": str(new_id - 2)})
    ok = s.wait_for(lambda x: [e.get("id") for e in x.events] ==
                    [str(new_id - 1), str(new_id)], 5)
    check("stream resumes after Last-Event-ID", ok, str([e.get("id") for e in s.events]))
    s.close()
    s = SSE(port, "/api/v1/stream?since_id=%d&class=metadata_probe" % (new_id - 3))
    ok = s.wait_for(lambda x: x.events and x.events[-1].get("id") == str(new_id), 5)
    check("stream since_id and class filter", ok and all(
        json.loads(e["data"])["class"] == "metadata_probe" for e in s.events))
    s.close()
    st, hd, body = get_json(port, "/api/v1/stream", headers={"Last-Event-ID": "abc"})
    check("bad Last-Event-ID is 400", st == 400 and "Last-Event-ID" in body["error"])

    # At most 16 streams; the 17th gets 503.
    def open_streams():
        data = request(port, "/metrics")[2].decode()
        m = re.search(r"^egresswatch_api_streams (\d+)$", data, re.M)
        return int(m.group(1)) if m else -1

    time.sleep(0.6)
    base = open_streams()
    streams = [SSE(port) for _ in range(16 - base)]
    time.sleep(0.3)
    st, hd, body = get_json(port, "/api/v1/stream")
    check("17th stream refused", st == 503 and body and "error" in body, str(st))
    for x in streams:
        x.close()
    # The server notices a client leave at its next poll (500 ms).
    ok = False
    for _ in range(30):
        time.sleep(0.2)
        if open_streams() == base:
            ok = True
            break
    check("closed streams are released", ok)
    s = SSE(port)
    check("a stream after the others left", s.resp.status == 200)
    s.close()
    return new_id


def test_shutdown_with_stream(db):
    srv = Server(db)
    s = SSE(srv.port)
    s.wait_for(lambda x: x.comments)
    idle = socket.create_connection(("127.0.0.1", srv.port))
    t0 = time.monotonic()
    rc = srv.stop()
    took = time.monotonic() - t0
    check("SIGTERM with an open stream exits 0 promptly", rc == 0 and took < 3,
          "rc=%s in %.1f s" % (rc, took))
    idle.close()
    s.close()


def test_auth(tmp, db):
    tok = os.path.join(tmp, "token")
    with open(tok, "w") as f:
        f.write("  Zm9vYmFyLXNlY3JldC10b2tlbg  \nnot-this-line\n")
    os.chmod(tok, 0o600)
    srv = Server(db, "0.0.0.0:0", tok)
    port = srv.port
    try:
        st, hd, body = get_json(port, "/api/v1/alerts")
        check("no token: 401", st == 401 and body == {"error": "missing or bad bearer token"},
              "%s %s" % (st, body))
        check("401 has WWW-Authenticate: Bearer", hd.get("www-authenticate", "").startswith("Bearer"))
        for h in ("Bearer wrong", "Bearer Zm9vYmFyLXNlY3JldC10b2tlbg-x",
                  "Bearer Zm9vYmFyLXNlY3JldC10b2tl", "Basic Zm9vYmFyLXNlY3JldC10b2tlbg",
                  "Zm9vYmFyLXNlY3JldC10b2tlbg", "Bearer "):
            st, hd, body = get_json(port, "/api/v1/alerts", {"Authorization": h})
            check("token %r: 401" % h, st == 401, str(st))
        good = {"Authorization": "Bearer Zm9vYmFyLXNlY3JldC10b2tlbg"}
        for path in ("/api/v1/alerts", "/api/v1/stats", "/metrics", "/", "/api/v1/events"):
            st, hd, body = request(port, path, headers=good)
            check("token: 200 %s" % path, st == 200, str(st))
        st, hd, body = get_json(port, "/api/v1/alerts", {"Authorization": "bearer  Zm9vYmFyLXNlY3JldC10b2tlbg "})
        check("scheme is case-insensitive", st == 200, str(st))
        st, hd, body = get_json(port, "/healthz")
        check("healthz needs no token", st == 200)
        st, hd, body = get_json(port, "/nope")
        check("unknown path without token: 401", st == 401)
        st, hd, body = get_json(port, "/nope", good)
        check("unknown path with token: 404", st == 404)
    finally:
        check("auth server stops with 0", srv.stop() == 0)

    r = run(["serve", "-d", db, "--api", "0.0.0.0:0"], timeout=10)
    check("non-loopback without --token-file: exit 2", r.returncode == 2 and
          "--token-file" in r.stderr, "%s %s" % (r.returncode, r.stderr))
    r = run(["serve", "-d", db, "--api", "[::]:0"], timeout=10)
    check("[::] without --token-file: exit 2", r.returncode == 2)
    r = run(["serve", "-d", db, "--api", "[::ffff:10.1.2.3]:0"], timeout=10)
    check("IPv4-mapped non-loopback without --token-file: exit 2", r.returncode == 2 and
          "--token-file" in r.stderr, "%s %s" % (r.returncode, r.stderr))
    # an IPv4-mapped loopback address and localhost serve on 127.0.0.1
    for addr in ("[::ffff:127.0.0.1]:0", "localhost:0"):
        srv = Server(db, addr)
        try:
            st, hd, body = get_json(srv.port, "/healthz")
            check("--api %s serves on 127.0.0.1" % addr, st == 200 and
                  any("http://127.0.0.1:" in l for l in srv.log), "".join(srv.log))
        finally:
            srv.stop()
    r = run(["serve", "-d", db, "--api", "0.0.0.0:0", "--token-file",
             os.path.join(tmp, "missing.tok")], timeout=10)
    check("missing token file: exit 2 naming it", r.returncode == 2 and "missing.tok" in r.stderr,
          r.stderr)
    empty = os.path.join(tmp, "empty.tok")
    open(empty, "w").write("\n  \n")
    r = run(["serve", "-d", db, "--api", "0.0.0.0:0", "--token-file", empty], timeout=10)
    check("empty token file: exit 2 naming it", r.returncode == 2 and "empty.tok" in r.stderr)


def test_cli(tmp, db):
    r = run(["serve", "-d", os.path.join(tmp, "nope.db"), "--api", "127.0.0.1:0"], timeout=10)
    check("missing DB: exit 1 naming it", r.returncode == 1 and "nope.db" in r.stderr,
          "%s %s" % (r.returncode, r.stderr))
    for bad in ("127.0.0.1", "1.2.3.4.5:80", "127.0.0.1:99999", "::1:80", "[::1]80",
                "127.0.0.1:", "example.com:80", "127.0.0.1:-1"):
        r = run(["serve", "-d", db, "--api", bad], timeout=10)
        check("--api %s: exit 2" % bad, r.returncode == 2 and "--api" in r.stderr,
              "%s %s" % (r.returncode, r.stderr))
    r = run(["serve", "--help"])
    check("serve --help", r.returncode == 0 and "--token-file" in r.stdout)
    r = run(["serve", "-d", db, "extra"])
    check("serve extra argument: exit 2", r.returncode == 2)
    # The port in use: exit 1 naming the address.
    srv = Server(db)
    r = run(["serve", "-d", db, "--api", "127.0.0.1:%d" % srv.port], timeout=10)
    check("port in use: exit 1", r.returncode == 1 and "127.0.0.1" in r.stderr, r.stderr)
    srv.stop()
    # IPv6 loopback, when the host has it.
    try:
        socket.socket(socket.AF_INET6).close()
        srv6 = Server(db, "[::1]:0")
        c = http.client.HTTPConnection("::1", srv6.port, timeout=5)
        c.request("GET", "/healthz")
        check("[::1] serves", c.getresponse().status == 200)
        c.close()
        srv6.stop()
    except (OSError, RuntimeError) as e:
        print("skip: IPv6 loopback: %s" % e)


def main():
    tmp = tempfile.mkdtemp(prefix="ew-api-")
    srv = None
    try:
        db = os.path.join(tmp, "api.db")
        rules = os.path.join(tmp, "sandbox.yaml")
        with open(rules, "w") as f:
            f.write(RULES)
        pcaps = [os.path.join(PCAPS, p) for p in
                 ("demo.pcap", "web_http.pcap", "web_icmp.pcap", "web_tls.pcap")
                 if os.path.exists(os.path.join(PCAPS, p))]
        r = run(["replay", "-q", "-c", rules, "-d", db] + pcaps)
        if r.returncode != 0:
            print("replay failed: %s" % r.stderr)
            return 1
        srv = Server(db)
        port = srv.port
        quiet = SSE(port, "/api/v1/stream?class=smtp")  # for the keep-alive, checked last
        t_quiet = time.monotonic()
        alerts = test_shapes(port, db)
        test_filters(port, alerts)
        test_errors(port)
        test_stats_metrics(port, db, alerts)
        test_dashboard(port)
        idle, t_idle = test_abuse(port)
        test_paging_while_inserting(port, db)
        test_paging_by_seq_while_inserting(port, db)
        test_stream(port, db)
        test_stream_seq(port, db)
        test_idle_closed(idle, t_idle)
        ok = quiet.wait_for(lambda x: ": keep-alive" in x.comments,
                            max(1.0, t_quiet + 17 - time.monotonic()))
        check("a quiet stream gets a keep-alive comment within 15 s", ok, str(quiet.comments))
        check("a quiet stream gets no events", quiet.events == [], str(quiet.events)[:200])
        quiet.close()
        st, _, _ = request(port, "/healthz")
        check("still healthy at the end", st == 200)
        rc = srv.stop()
        check("serve: SIGTERM exits 0", rc == 0, str(rc))
        srv = None
        test_shutdown_with_stream(db)
        test_auth(tmp, db)
        test_cli(tmp, db)
    finally:
        if srv:
            srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
