#!/usr/bin/python3
"""analyze.py EGRESSWATCH RUNDIR [TABLE] - one line per case: the name each real
reader took (nginx $ssl_preread_server_name and the upstream it chose,
haproxy req.ssl_sni and its backend, OpenSSL's servername callback and
the handshake's outcome, GnuTLS's "Requested server name") and the SNI of
every ClientHello event egresswatch stored for that connection (its
malformed reason too). Reads run.sh's RUNDIR; writes RUNDIR/TABLE (table.txt)."""
import json
import os
import re
import subprocess
import sys

ew, rd = sys.argv[1], sys.argv[2]
table = sys.argv[3] if len(sys.argv) > 3 else 'table.txt'
res = json.load(open(os.path.join(rd, 'results.json')))


def bylog(path, pat):
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path, errors='replace'):
        m = re.match(pat, line)
        if m:
            out[int(m.group(1))] = m.group(2).strip()
    return out


ngx = bylog(os.path.join(rd, 'nginx.log'), r'(\d+) (.*)')
hap = bylog(os.path.join(rd, 'haproxy.log'), r'(\d+) (sni=.*)')
ossl = bylog(os.path.join(rd, 'ossl.log'), r'(\d+) (.*)')
# GnuTLS: sessions in order, each starting at its priority-list line
gsess = []
for line in open(os.path.join(rd, 'gnutls.log'), errors='replace'):
    if 'into priority list' in line:
        gsess.append({'sni': '-', 'err': 'ok'})
    elif gsess and 'Requested server name' in line:
        gsess[-1]['sni'] = line.split('name: ', 1)[1].strip()
    elif gsess and line.startswith('Error in handshake'):
        gsess[-1]['err'] = line.split(':', 1)[1].strip()
db = os.path.join(rd, table + '.db')
if os.path.exists(db):
    os.unlink(db)
subprocess.run([ew, 'replay', '-d', db, os.path.join(rd, 'client.pcap')], check=True,
               stdout=subprocess.DEVNULL)
evs = {}
for line in subprocess.run([ew, 'events', '-d', db, '--json', '--kind', 'tls'], check=True,
                           capture_output=True, text=True).stdout.splitlines():
    e = json.loads(line)
    if e['tls'].get('hello') != 'client':
        continue
    t = e['tls']
    s = 'sni=%s' % json.dumps(t.get('sni', '-'))
    if t.get('malformed'):
        s += ' [%s]' % t['malformed']
    if t.get('truncated'):
        s += ' [truncated]'
    evs.setdefault(e['src_port'], []).append(s)

gi = 0
lines = []
cur = None
for r in res:
    if r['case'] != cur:
        cur = r['case']
        lines.append('== %s' % cur)
    p = r['cport']
    if r['reader'] == 'nginx':
        who = ngx.get(p, '(no log line)')
    elif r['reader'] == 'haproxy':
        who = hap.get(p, '(no log line)')
    elif r['reader'] == 'openssl':
        who = ossl.get(p, '(no log line)')
    else:
        g = gsess[gi] if gi < len(gsess) else {'sni': '?', 'err': '?'}
        gi += 1
        who = 'sni=%s %s' % (g['sni'], g['err'])
    reply = bytes.fromhex(r['reply'])
    rep = reply.decode().strip() if reply.startswith(b'up') else (
        'alert' if reply[:1] == b'\x15' else 'hello' if reply[:1] == b'\x16' else reply[:4].hex() or '-')
    lines.append('  %-8s %-70s reply=%-6s ew: %s' % (r['reader'], who, rep,
                                                    ' | '.join(evs.get(p, ['(no event)']))))
open(os.path.join(rd, table), 'w').write('\n'.join(lines) + '\n')
print('\n'.join(lines))
