#!/usr/bin/python3
"""check_dom.py - check the dashboard's DOM (chromium --dump-dom) against the CLI.

    check_dom.py MODE DOM ALERTS_JSONL [PACKETS]

MODE is one of
  full      the unfiltered page: one row per alert (ids and classes), one
            timeline <g data-class data-count> per class with the CLI's
            per-class counts, #stat-packets = PACKETS, top sources and
            subjects, the capture-health cards, the filter selects, and no
            markup from attacker-chosen names reaching the DOM as elements
  filtered  a page loaded with a filter in its URL: rows = ALERTS_JSONL
            (the CLI's answer to the same filter), all of them of that class
  empty     a database without alerts: no rows, the empty states shown
  detail    check_dom.py detail DOM ALERTS_JSONL ID EVENTS_JSONL FROM TO: a page
            loaded with #alert=ID shows that alert's panel, and in it the
            events of EVENTS_JSONL (the CLI's --host SRC --from FROM --to TO)

Prints one "ok: ..." or "FAIL: ..." line per check; the exit status is the
number of failures (capped at 100).
"""
import json
import sys
from collections import Counter
from html.parser import HTMLParser

VOID = {'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta',
        'source', 'track', 'wbr'}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], []

    def all(self):
        yield self
        for c in self.children:
            yield from c.all()

    def content(self):
        return ''.join(self.text_parts())

    def text_parts(self):
        for t in self.text:
            if isinstance(t, Node):
                yield from t.text_parts()
            else:
                yield t

    def find(self, pred):
        return [n for n in self.all() if pred(n)]


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node('#root', [], None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        self.cur.text.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        self.cur.text.append(n)

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text.append(data)


def classes(n):
    return (n.attrs.get('class') or '').split()


passed = failed = 0


def check(cond, what, detail=''):
    global passed, failed
    if cond:
        passed += 1
        print('ok: ' + what)
    else:
        failed += 1
        print('FAIL: ' + what + (': ' + detail if detail else ''))


def main():
    mode, dom_path, alerts_path = sys.argv[1:4]
    packets = int(sys.argv[4]) if len(sys.argv) > 4 and mode == 'full' else None
    t = Tree()
    t.feed(open(dom_path, encoding='utf-8', errors='replace').read())
    root = t.root
    alerts = [json.loads(line) for line in open(alerts_path, encoding='utf-8') if line.strip()]

    def by_id(i):
        r = root.find(lambda n: n.attrs.get('id') == i)
        return r[0] if r else None

    body = root.find(lambda n: n.tag == 'body')
    body = body[0] if body else Node('body', [], None)
    check(body.attrs.get('data-state') == 'ready', 'page loaded (body data-state=ready)',
          'data-state=%r' % body.attrs.get('data-state'))
    errs = by_id('errors')
    check('data-errors' not in body.attrs and (errs is None or 'hidden' in errs.attrs),
          'no script errors or CSP violations', errs.content() if errs else '')

    table = by_id('alerts')
    rows = []
    if table is not None:
        rows = [n for n in table.all() if n.tag == 'tr' and n.parent is not None and n.parent.tag == 'tbody']
    check(len(rows) == len(alerts), 'one table row per alert (%d)' % len(alerts), 'got %d rows' % len(rows))
    want = {str(a['id']): a['class'] for a in alerts}
    got = {r.attrs.get('data-id'): r.attrs.get('data-class') for r in rows}
    check(got == want, 'rows carry the alerts\' data-id and data-class',
          'missing %s, extra %s, wrong class %s' % (
              sorted(set(want) - set(got)), sorted(set(got) - set(want)),
              sorted(k for k in want if k in got and got[k] != want[k])))

    svg = by_id('timeline')
    groups = svg.find(lambda n: n.tag == 'g' and 'data-class' in n.attrs) if svg else []
    per_class = Counter(a['class'] for a in alerts)
    gcounts = {}
    for g in groups:
        gcounts.setdefault(g.attrs['data-class'], []).append(g.attrs.get('data-count'))
    check(sorted(gcounts) == sorted(per_class) and all(len(v) == 1 for v in gcounts.values()),
          'timeline has one <g data-class> per class (%d)' % len(per_class),
          'got %s' % sorted(gcounts))
    check({k: int(v[0]) for k, v in gcounts.items() if v and (v[0] or '').isdigit()} == dict(per_class),
          'timeline data-count per class matches the CLI',
          'timeline %s, CLI %s' % ({k: v for k, v in gcounts.items()}, dict(per_class)))
    bars = sum(int(r.attrs.get('data-n', 0)) for g in groups for r in g.children if r.tag == 'rect')
    check(bars == len(alerts), 'timeline bars add up to the number of alerts', 'got %d' % bars)

    if mode == 'empty':
        empty = by_id('alerts-empty')
        check(empty is not None and 'hidden' not in empty.attrs and 'No alerts' in empty.content(),
              'the table says "No alerts"', empty.content() if empty else 'no #alerts-empty')
        check(svg is not None and svg.attrs.get('data-empty') == 'true' and 'no alerts' in svg.content(),
              'the timeline says "no alerts"')
        for lid in ('top-sources', 'top-subjects'):
            lis = [n for n in (by_id(lid) or Node('ol', [], None)).all() if n.tag == 'li']
            check(len(lis) == 1 and lis[0].attrs.get('data-empty') == 'true',
                  '#%s shows its empty state' % lid)
    else:
        empty = by_id('alerts-empty')
        check(empty is not None and 'hidden' in empty.attrs, 'no empty-state message when there are alerts')

    if mode == 'filtered':
        cls = body.attrs.get('data-filter-class', '')
        sev = body.attrs.get('data-filter-severity', '')
        check(cls or sev, 'the filter from the URL was taken (class=%r severity=%r)' % (cls, sev))
        if cls:
            check(all(r.attrs.get('data-class') == cls for r in rows), 'every row is of class ' + cls)
        if sev:
            order = ['info', 'low', 'medium', 'high', 'critical']
            check(all(order.index(r.attrs.get('data-severity', 'info')) >= order.index(sev) for r in rows),
                  'every row is of severity %s or above' % sev)

    if mode == 'full':
        st = by_id('stat-packets')
        digits = ''.join(ch for ch in (st.content() if st else '') if ch.isdigit())
        check(packets is not None and digits == str(packets), '#stat-packets shows the packet count (%s)' % packets,
              'shows %r' % (st.content() if st else None))
        for sid in ('stat-drops', 'stat-malformed'):
            n = by_id(sid)
            check(n is not None and n.content().replace(',', '').strip().isdigit(), '#%s shows a number' % sid,
                  repr(n.content() if n else None))

        def top(lid, key):
            lis = [n for n in (by_id(lid) or Node('ol', [], None)).all() if n.tag == 'li']
            counts = Counter(str(a[key]) for a in alerts if a.get(key))
            best = max(counts.values()) if counts else 0
            first = lis[0] if lis else None
            check(len(lis) == min(8, len(counts)) and first is not None and
                  counts.get(first.attrs.get('data-key')) == best and
                  first.attrs.get('data-count') == str(best),
                  '#%s lists the most frequent %s first (%d alerts)' % (lid, key, best),
                  '%d items, first %r' % (len(lis), first.attrs if first else None))
        top('top-sources', 'src_ip')
        top('top-subjects', 'subject')

        for sid, n_min in (('filter-class', 15), ('filter-severity', 5)):
            sel = by_id(sid)
            opts = [n for n in sel.all() if n.tag == 'option'] if sel else []
            check(sel is not None and sel.tag == 'select' and len(opts) >= n_min,
                  'select#%s has its options' % sid, '%d options' % len(opts))

        # Names are attacker-chosen: markup in them must stay text.
        hostile = [a for a in alerts if '<' in (a.get('subject') or '')]
        check(len(hostile) > 0, 'the fixtures include an alert whose subject is HTML')
        check(not root.find(lambda n: (n.attrs.get('id') or '').startswith('xss-')) and 'data-xss' not in body.attrs,
              'no element or script from an attacker-chosen name reached the page')
        for a in hostile:
            row = [r for r in rows if r.attrs.get('data-id') == str(a['id'])]
            cells = row[0].find(lambda n: n.tag == 'td') if row else []
            texts = [c.content() for c in cells]
            check(a['subject'] in texts and a['summary'] in texts,
                  'alert %d shows its HTML subject and summary as text' % a['id'], repr(texts))

    if mode == 'detail':
        aid, events_path, want_from, want_to = sys.argv[4:8]
        events = [json.loads(line) for line in open(events_path, encoding='utf-8') if line.strip()]
        panel = by_id('detail')
        title = by_id('detail-title')
        check(panel is not None and 'hidden' not in panel.attrs, 'the URL\'s #alert opens the detail panel')
        check(title is not None and title.content() == 'Alert #' + aid, 'the panel shows alert #' + aid,
              repr(title.content() if title else None))
        box = root.find(lambda n: 'context' in classes(n))
        box = box[0] if box else None
        check(box is not None and box.attrs.get('data-from') == want_from and
              box.attrs.get('data-to') == want_to,
              'the events asked for run from 5 s before the first hit to 5 s after the last (%s, %s)'
              % (want_from, want_to), repr(box.attrs if box else None))
        got = [n.attrs.get('data-id') for n in (box.all() if box else []) if n.tag == 'tr']
        check(got == [str(e['id']) for e in events] and len(events) > 0,
              'the panel lists the events the CLI gives for that source and range (%d)' % len(events),
              'got %s' % got)

    return min(failed, 100)


if __name__ == '__main__':
    sys.exit(main())
