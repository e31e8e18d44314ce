#!/usr/bin/python3
"""live_update.py - the dashboard replaces an alert's row when the alert grows.

    live_update.py SOURCE_ROOT

In a live watch an alert is written again as it grows (count, last_ts, an
outcome settled from unknown to answered), and /api/v1/alerts?since_seq=N
returns it again, in its latest state (docs/api.md). This serves the
dashboard's own files (api/dashboard/) with a scripted API on 127.0.0.1:

  since_seq=0   alerts 1 (count 1, outcome unknown) and 2; next_since_seq 2
  since_seq=2   first time: nothing (the first load ends); after that: alert 1
                again, count 9, answered, next_since_seq 3
  since_seq=3   nothing

and loads the page in headless chromium with 12 s of page time, so its 5 s
poll runs. The DOM must have two rows, alert 1's showing count 9 and
outcome answered, and the "containment leaked" card 1; every alerts request
must page by since_seq. Skips (77) without /usr/bin/chromium.
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_dom import Tree, classes  # noqa: E402

CHROMIUM = '/usr/bin/chromium'


def alert(i, count, outcome, seq_ts):
    return {"id": i, "class": "dns_tunnel" if i == 1 else "metadata_probe", "severity": "high",
            "first_ts": "2026-11-29T10:00:0%dZ" % i, "last_ts": "2026-11-29T10:00:%02dZ" % seq_ts,
            "count": count, "outcome": outcome, "src_ip": "10.99.0.10", "src_port": 40000 + i,
            "dst_ip": "10.99.0.53", "dst_port": 53, "proto": "udp",
            "subject": "t%d.example-tunnel.test" % i, "score": 0.9, "rule": "x",
            "summary": "s%d" % i, "evidence": []}


requests = []
lock = threading.Lock()
seq2_calls = [0]


class Handler(BaseHTTPRequestHandler):
    root = None

    def log_message(self, *a):
        pass

    def send(self, code, ctype, body):
        self.send_response(code)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(body)))
        self.send_header('Cache-Control', 'no-store')
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        u = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        if u.path in ('/', '/static/app.js', '/static/style.css'):
            name = {'/': 'index.html', '/static/app.js': 'app.js', '/static/style.css': 'style.css'}[u.path]
            ctype = {'html': 'text/html', 'js': 'text/javascript', 'css': 'text/css'}[name.split('.')[-1]]
            with open(os.path.join(self.root, 'api', 'dashboard', name), 'rb') as f:
                return self.send(200, ctype + '; charset=utf-8', f.read())
        if u.path == '/api/v1/stats':
            body = {"packets": 10, "bytes": 1000, "drops": 0, "capture": {}, "decode": {},
                    "analyzers": {}, "flows": {}, "events": {},
                    "alerts": {"total": 2, "detections": 2, "by_class": {}, "by_severity": {}}}
            return self.send(200, 'application/json', json.dumps(body).encode())
        if u.path == '/api/v1/alerts':
            with lock:
                requests.append(q)
                if 'since_seq' not in q:
                    body = {"alerts": [], "next_since_id": 0}
                elif q['since_seq'] == '0':
                    body = {"alerts": [alert(1, 1, "unknown", 1), alert(2, 1, "blocked", 2)],
                            "next_since_seq": 2}
                elif q['since_seq'] == '2':
                    seq2_calls[0] += 1
                    body = {"alerts": [] if seq2_calls[0] == 1 else [alert(1, 9, "answered", 30)],
                            "next_since_seq": 2 if seq2_calls[0] == 1 else 3}
                else:
                    body = {"alerts": [], "next_since_seq": int(q['since_seq'])}
            return self.send(200, 'application/json', json.dumps(body).encode())
        self.send(404, 'application/json', b'{"error":"not found"}')


def main():
    if not os.access(CHROMIUM, os.X_OK):
        print('SKIP: %s is missing' % CHROMIUM)
        return 77
    Handler.root = sys.argv[1]
    srv = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = 'http://127.0.0.1:%d/' % srv.server_address[1]
    failed = 0

    def check(cond, what, detail=''):
        nonlocal failed
        print(('ok: ' if cond else 'FAIL: ') + what + ('' if cond or not detail else ': ' + detail))
        failed += 0 if cond else 1

    with tempfile.TemporaryDirectory(prefix='ew-live-update.') as tmp:
        env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=tmp + '/c', XDG_CACHE_HOME=tmp + '/k')
        p = subprocess.run([CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                            '--disable-background-networking', '--disable-component-update',
                            '--disable-sync', '--disable-quic', '--user-data-dir=' + tmp + '/p',
                            '--virtual-time-budget=12000', '--dump-dom', url],
                           env=env, capture_output=True, text=True, timeout=90)
    srv.shutdown()
    t = Tree()
    t.feed(p.stdout)
    rows = {n.attrs.get('data-id'): n for n in t.root.all()
            if n.tag == 'tr' and n.parent is not None and n.parent.tag == 'tbody'}
    check(sorted(rows) == ['1', '2'], 'two rows, one per alert', 'rows %s' % sorted(rows))
    r1 = rows.get('1')
    count = ''
    if r1 is not None:
        cells = [c for c in r1.children if 'c-count' in classes(c)]
        count = cells[0].content() if cells else ''
    check(r1 is not None and r1.attrs.get('data-outcome') == 'answered',
          'alert 1 shows its settled outcome', r1.attrs.get('data-outcome') if r1 is not None else 'no row')
    check(count == '9', 'alert 1 shows its grown count', repr(count))
    leaked = [n for n in t.root.all() if n.attrs.get('id') == 'stat-answered']
    check(leaked and leaked[0].content() == '1', 'the leaked card counts the settled alert',
          leaked[0].content() if leaked else 'no card')
    check(seq2_calls[0] >= 2, 'the page polled after its first load', '%d polls' % seq2_calls[0])
    check(requests and all('since_seq' in q and 'since_id' not in q for q in requests),
          'every alerts request pages by since_seq', str(requests[:3]))
    errs = [n for n in t.root.all() if n.attrs.get('id') == 'errors']
    check(not errs or 'hidden' in errs[0].attrs, 'no script errors', errs[0].content() if errs else '')
    print('%s' % ('all passed' if not failed else '%d failed' % failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
