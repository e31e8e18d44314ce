/*
 * app.js - the egresswatch dashboard (plain JS, no framework, no build step).
 *
 * Data: GET /api/v1/alerts (paged by since_seq, the order alerts are
 * written in, with the class and severity filters in the query),
 * /api/v1/stats, /api/v1/alerts/{id} for the detail panel with
 * /api/v1/events?host=&from=&to= for what its source did around it, and
 * /api/v1/stream (server-sent events) as a hint to poll sooner. Every 5 s
 * it polls the alerts written since the last poll, new ones and ones that
 * grew (count, last seen, outcome settled), and the stats: an alert's row
 * is replaced in place by its latest state.
 *
 * Safety: subjects, summaries, evidence and addresses come from packets, so
 * they are attacker-chosen. They only ever reach the page through
 * textContent / createTextNode / setAttribute, never innerHTML.
 * The page runs under CSP "default-src 'self'": no inline script or style;
 * colours are set through SVG presentation attributes and the CSSOM.
 */
'use strict';

(function () {
	// Alert classes of the contract (architecture.md section 3), in the order
	// of the table there; each has a fixed colour so a class keeps its colour
	// from page to page. Classes not in this list get a colour from EXTRA.
	var CLASSES = [
		['dns_tunnel', '#e6553a'],
		['metadata_probe', '#d62f6c'],
		['dns_rebind', '#b45cd6'],
		['proxy_bypass', '#f08c2e'],
		['udp_egress', '#4f8fe6'],
		['icmp_egress', '#33b3c7'],
		['icmp_tunnel', '#2bb58a'],
		['ipv6_egress', '#8a7ff0'],
		['dns_over_tcp', '#c9a227'],
		['doh', '#6fbf4a'],
		['websocket', '#e57fb8'],
		['smtp', '#a0785a'],
		['domain_not_allowed', '#7d9bb3'],
		['proxy_denied', '#5c6bc0']
	];
	var EXTRA = ['#9ccc65', '#ffb74d', '#4dd0e1', '#f06292', '#ba68c8', '#90a4ae'];
	var SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'];
	var OUTCOMES = ['answered', 'blocked', 'unknown'];

	var POLL_MS = 5000;
	var PAGE = 1000;         // alerts per request while paging
	var MAX_ROWS = 5000;     // table rows kept in the page (all alerts still count)
	var TOP_N = 8;           // entries in the top sources / subjects lists
	var BUCKETS = 60;        // timeline buckets across the data's time range
	var CONTEXT_S = 5;       // the detail's events: this many seconds either side
	var CONTEXT_MAX = 50;    // ... and at most this many

	var classColor = {};
	var classOrder = [];
	CLASSES.forEach(function (c) { classColor[c[0]] = c[1]; classOrder.push(c[0]); });

	var state = {
		alerts: [],          // alerts loaded for the current filter, in id order
		index: {},           // id -> its place in alerts
		sinceSeq: 0,         // next since_seq for polling
		gen: 0,              // bumped when the filter changes; stale loads stop
		filter: { cls: '', severity: '' },
		loading: false,
		polling: false,
		stats: null,
		stream: null,
		lastOk: 0,
		selected: null
	};

	var $ = function (id) { return document.getElementById(id); };

	// ---------------------------------------------------------------- errors

	function reportError(msg) {
		var box = $('errors');
		if (!box) return;
		var line = document.createElement('div');
		line.textContent = msg;
		box.appendChild(line);
		box.hidden = false;
		document.body.setAttribute('data-errors', String(box.childNodes.length));
	}
	window.addEventListener('error', function (e) {
		reportError('script error: ' + (e.message || e.type));
	});
	window.addEventListener('unhandledrejection', function (e) {
		reportError('script error: ' + (e.reason && e.reason.message || e.reason));
	});
	document.addEventListener('securitypolicyviolation', function (e) {
		reportError('blocked by Content-Security-Policy: ' + e.violatedDirective + ' ' + (e.blockedURI || ''));
	});

	// ---------------------------------------------------------------- helpers

	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined && text !== null) e.textContent = String(text);
		return e;
	}

	function svgEl(tag, attrs) {
		var e = document.createElementNS('http://www.w3.org/2000/svg', tag);
		for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, String(attrs[k]));
		return e;
	}

	function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

	function colorOf(cls) {
		if (!classColor[cls]) {
			var n = Object.keys(classColor).length - CLASSES.length;
			classColor[cls] = EXTRA[n % EXTRA.length];
			classOrder.push(cls);
		}
		return classColor[cls];
	}

	function fmtInt(n) {
		if (typeof n !== 'number' || !isFinite(n)) return '–';
		return n.toLocaleString('en-US');
	}

	function fmtBytes(n) {
		if (typeof n !== 'number' || !isFinite(n)) return '–';
		var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
		while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
		return (i === 0 ? String(n) : n.toFixed(n < 10 ? 2 : 1)) + ' ' + u[i];
	}

	function fmtDuration(s) {
		if (typeof s !== 'number' || !isFinite(s)) return '–';
		s = Math.floor(s);
		var d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600),
			m = Math.floor(s % 3600 / 60), sec = s % 60;
		if (d) return d + 'd ' + h + 'h';
		if (h) return h + 'h ' + m + 'm';
		if (m) return m + 'm ' + sec + 's';
		return sec + 's';
	}

	// "2026-11-29T10:01:05.861204Z" -> milliseconds (microseconds dropped).
	function parseTs(ts) {
		if (typeof ts !== 'string') return NaN;
		var m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z$/.exec(ts);
		if (!m) return Date.parse(ts);
		var ms = Date.parse(m[1] + 'Z');
		if (m[2]) ms += Math.floor(parseFloat('0' + m[2]) * 1000);
		return ms;
	}

	// "2026-11-29T10:01:05.861204Z" -> "11-29 10:01:05.861" (the year is in
	// the cell's tooltip, with the microseconds)
	function fmtTs(ts) {
		if (typeof ts !== 'string') return '';
		var m = /^\d{4}-(\d\d-\d\d)T(\d\d:\d\d:\d\d)(\.\d{1,3})?/.exec(ts);
		return m ? m[1] + ' ' + m[2] + (m[3] || '') : ts;
	}

	function fmtClock(ms, withDate) {
		var iso = new Date(ms).toISOString();
		return withDate ? iso.slice(5, 10) + ' ' + iso.slice(11, 19) : iso.slice(11, 19);
	}

	function endpoint(ip, port) {
		if (ip === null || ip === undefined || ip === '') return '';
		ip = String(ip);
		if (!port) return ip;
		return (ip.indexOf(':') >= 0 ? '[' + ip + ']' : ip) + ':' + port;
	}

	function badge(kind, value) {
		var b = el('span', 'badge ' + kind + '-' + (value || 'unknown'), value || 'unknown');
		return b;
	}

	// ---------------------------------------------------------------- API

	function api(path) {
		return fetch(path, { headers: { 'Accept': 'application/json' }, cache: 'no-store' })
			.then(function (r) {
				return r.text().then(function (text) {
					var body = null;
					try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
					if (!r.ok) {
						var why = body && body.error ? body.error : 'HTTP ' + r.status;
						throw new Error(path.split('?')[0] + ': ' + why);
					}
					if (body === null) throw new Error(path.split('?')[0] + ': not JSON');
					return body;
				});
			});
	}

	function alertsQuery(sinceSeq) {
		var q = ['since_seq=' + encodeURIComponent(sinceSeq), 'limit=' + PAGE];
		if (state.filter.cls) q.push('class=' + encodeURIComponent(state.filter.cls));
		if (state.filter.severity) q.push('severity=' + encodeURIComponent(state.filter.severity));
		return '/api/v1/alerts?' + q.join('&');
	}

	// Fetch every alert written after state.sinceSeq, page by page, until a
	// page comes back empty. Returns the alerts by id, each in the latest
	// state seen (one that grew between two pages comes twice: the later
	// wins); null if the filter changed meanwhile.
	function fetchNew() {
		var gen = state.gen;
		var got = {};
		function page() {
			return api(alertsQuery(state.sinceSeq)).then(function (body) {
				if (gen !== state.gen) return null;
				var list = Array.isArray(body.alerts) ? body.alerts : [];
				list.forEach(function (a) {
					if (a && typeof a.id === 'number') got[a.id] = a;
				});
				var next = typeof body.next_since_seq === 'number' ? body.next_since_seq : state.sinceSeq;
				if (list.length === 0 || next <= state.sinceSeq) return got;
				state.sinceSeq = next;
				return page();
			});
		}
		return page();
	}

	function connStatus(status, text) {
		var c = $('conn');
		c.setAttribute('data-status', status);
		$('conn-text').textContent = text;
	}

	function markOk() {
		state.lastOk = Date.now();
		var live = state.stream && state.stream.readyState === 1 ? 'live (stream)' : 'live';
		connStatus('ok', live + ' · updated ' + new Date().toTimeString().slice(0, 8));
	}

	function markFail(err) {
		connStatus('down', 'API unreachable — retrying (' + (err && err.message || err) + ')');
	}

	// ---------------------------------------------------------------- stats

	function sumField(obj, field) {
		var n = 0;
		if (!obj || typeof obj !== 'object') return 0;
		Object.keys(obj).forEach(function (k) {
			var v = obj[k] && obj[k][field];
			if (typeof v === 'number') n += v;
		});
		return n;
	}

	function setStat(id, text, sub) {
		var v = $(id);
		v.textContent = text;
		var card = v.parentNode;
		var s = card.querySelector('.sub');
		if (sub !== undefined) {
			if (!s) { s = el('div', 'sub'); card.appendChild(s); }
			s.textContent = sub;
		}
	}

	function renderStats(st) {
		state.stats = st;
		setStat('stat-packets', fmtInt(st.packets));
		setStat('stat-bytes', fmtBytes(st.bytes));

		var drops = typeof st.drops === 'number' ? st.drops : 0;
		var received = sumField(st.capture, 'received');
		var ifaces = st.capture ? Object.keys(st.capture) : [];
		setStat('stat-drops', fmtInt(drops),
			ifaces.length ? ifaces.length + (ifaces.length === 1 ? ' interface' : ' interfaces') +
				(received ? ' · ' + (100 * drops / (received + drops)).toFixed(2) + '%' : '')
				: 'offline capture');
		$('card-drops').classList.toggle('warn', drops > 0);

		var decMal = sumField(st.decode, 'malformed');
		var anaMal = sumField(st.analyzers, 'malformed');
		var trunc = sumField(st.decode, 'truncated') + sumField(st.analyzers, 'truncated');
		setStat('stat-malformed', fmtInt(decMal + anaMal),
			'decode ' + fmtInt(decMal) + ' · analyzers ' + fmtInt(anaMal));
		$('card-malformed').title = 'malformed: decode ' + decMal + ', analyzers ' + anaMal +
			'\ntruncated: ' + trunc;
		$('card-malformed').classList.toggle('warn', decMal + anaMal > 0);

		var byClass = st.alerts && st.alerts.by_class || {};
		var bySev = st.alerts && st.alerts.by_severity || {};
		var total = 0;
		Object.keys(byClass).forEach(function (k) { if (typeof byClass[k] === 'number') total += byClass[k]; });
		var sevParts = [];
		['critical', 'high'].forEach(function (s) { if (bySev[s]) sevParts.push(fmtInt(bySev[s]) + ' ' + s); });
		setStat('stat-alerts', fmtInt(total), sevParts.length ? sevParts.join(' · ') : 'none critical or high');
		setStat('stat-uptime', fmtDuration(st.uptime_s));

		// Classes the server knows that the contract list lacks: offer them too.
		Object.keys(byClass).forEach(function (k) { addClassOption(k); });
	}

	function refreshStats() {
		return api('/api/v1/stats').then(renderStats);
	}

	// ---------------------------------------------------------------- filters

	function addClassOption(cls) {
		var sel = $('filter-class');
		for (var i = 0; i < sel.options.length; i++) if (sel.options[i].value === cls) return;
		colorOf(cls);
		var o = el('option', null, cls);
		o.value = cls;
		sel.appendChild(o);
	}

	function readHash() {
		var f = { cls: '', severity: '', alert: null };
		var h = location.hash.replace(/^#/, '');
		h.split('&').forEach(function (kv) {
			var i = kv.indexOf('=');
			if (i < 0) return;
			var k = decodeURIComponent(kv.slice(0, i)), v = decodeURIComponent(kv.slice(i + 1));
			if (k === 'class' && /^[a-z0-9_]{1,64}$/.test(v)) f.cls = v;
			if (k === 'severity' && SEVERITIES.indexOf(v) >= 0) f.severity = v;
			if (k === 'alert' && /^[1-9][0-9]{0,15}$/.test(v)) f.alert = Number(v);
		});
		return f;
	}

	function writeHash() {
		var parts = [];
		if (state.filter.cls) parts.push('class=' + encodeURIComponent(state.filter.cls));
		if (state.filter.severity) parts.push('severity=' + encodeURIComponent(state.filter.severity));
		if (state.selected) parts.push('alert=' + state.selected);
		var h = parts.length ? '#' + parts.join('&') : location.pathname + location.search;
		history.replaceState(null, '', h);
	}

	function applyFilter(f) {
		state.filter = f;
		if (f.cls) addClassOption(f.cls);
		$('filter-class').value = f.cls;
		$('filter-severity').value = f.severity;
		document.body.setAttribute('data-filter-class', f.cls);
		document.body.setAttribute('data-filter-severity', f.severity);
		writeHash();
		reload();
	}

	function onFilterChange() {
		applyFilter({ cls: $('filter-class').value, severity: $('filter-severity').value });
	}

	// ---------------------------------------------------------------- table

	function makeRow(a) {
		var tr = document.createElement('tr');
		tr.setAttribute('data-id', String(a.id));
		tr.setAttribute('data-class', String(a['class']));
		tr.setAttribute('data-severity', String(a.severity));
		tr.setAttribute('data-outcome', String(a.outcome));
		tr.tabIndex = 0;

		var t = el('td', 'c-time mono', fmtTs(a.first_ts));
		t.title = 'first ' + a.first_ts + '\nlast  ' + a.last_ts;
		tr.appendChild(t);

		var sev = el('td', 'c-sev');
		sev.appendChild(badge('sev', a.severity));
		tr.appendChild(sev);

		var cls = el('td', 'c-class');
		var sw = el('span', 'swatch');
		sw.style.backgroundColor = colorOf(String(a['class']));
		cls.appendChild(sw);
		cls.appendChild(document.createTextNode(String(a['class'])));
		tr.appendChild(cls);

		var out = el('td', 'c-outcome');
		var ob = badge('out', a.outcome);
		if (a.outcome === 'answered') ob.title = 'the other side answered: containment leaked';
		else if (a.outcome === 'blocked') ob.title = 'no answer, reset, unreachable or 403';
		out.appendChild(ob);
		tr.appendChild(out);

		var src = el('td', 'c-src mono', endpoint(a.src_ip, a.src_port));
		src.title = src.textContent;
		tr.appendChild(src);
		var dst = el('td', 'c-dst mono', endpoint(a.dst_ip, a.dst_port));
		dst.title = dst.textContent;
		if (a.proto) dst.appendChild(el('span', 'proto', a.proto));
		tr.appendChild(dst);

		var subj = el('td', 'c-subject mono', a.subject);
		subj.title = a.subject || '';
		tr.appendChild(subj);
		tr.appendChild(el('td', 'c-count num', fmtInt(a.count)));
		var sum = el('td', 'c-summary', a.summary);
		sum.title = a.summary || '';
		tr.appendChild(sum);
		return tr;
	}

	// New alerts (id order) go on top: the table is newest first.
	function addRows(fresh) {
		var tbody = $('alerts').tBodies[0];
		var frag = document.createDocumentFragment();
		for (var i = fresh.length - 1; i >= 0; i--) frag.appendChild(makeRow(fresh[i]));
		tbody.insertBefore(frag, tbody.firstChild);
		while (tbody.rows.length > MAX_ROWS) tbody.removeChild(tbody.lastChild);
		updateTableNotes();
	}

	function updateTableNotes() {
		var n = state.alerts.length;
		var shown = $('alerts').tBodies[0].rows.length;
		$('alerts-count').textContent = n ? fmtInt(n) : '';
		var empty = $('alerts-empty');
		empty.hidden = n !== 0 || state.loading;
		empty.textContent = state.filter.cls || state.filter.severity ?
			'No alerts match this filter.' : 'No alerts — nothing has tried to get out.';
		var note = $('alerts-note');
		note.hidden = shown >= n;
		note.textContent = 'Showing the ' + fmtInt(shown) + ' most recent of ' + fmtInt(n) + ' alerts.';
		var answered = 0;
		state.alerts.forEach(function (a) { if (a.outcome === 'answered') answered++; });
		setStat('stat-answered', fmtInt(answered),
			(state.filter.cls || state.filter.severity ? 'answered, in this filter' : 'answered from outside'));
		$('card-leaked').classList.toggle('danger', answered > 0);
	}

	// ---------------------------------------------------------------- detail

	// An RFC 3339 time as the API writes it (2026-11-29T10:00:09.000650Z),
	// moved by `shift` whole seconds, as seconds since 1970 for from=/to=:
	// whole seconds and microseconds kept apart, so nothing is rounded.
	function epochParam(ts, shift) {
		var m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?Z$/.exec(ts || '');
		if (!m) return null;
		var sec = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) / 1000 + shift;
		return String(sec) + '.' + ((m[7] || '') + '000000').slice(0, 6);
	}

	// What the alert's source sent and received from CONTEXT_S seconds
	// before its first hit to CONTEXT_S after its last.
	function showContext(a, body) {
		var from = epochParam(a.first_ts, -CONTEXT_S), to = epochParam(a.last_ts, CONTEXT_S);
		if (!from || !to || !a.src_ip) return;
		var h = el('h3', null, 'Around it: ' + a.src_ip + ', ' + CONTEXT_S + ' s either side');
		var box = el('div', 'context');
		box.setAttribute('data-from', from);
		box.setAttribute('data-to', to);
		body.appendChild(h);
		body.appendChild(box);
		var id = a.id;
		api('/api/v1/events?host=' + encodeURIComponent(a.src_ip) + '&from=' + from + '&to=' + to +
		    '&limit=' + CONTEXT_MAX).then(function (page) {
			if (state.selected !== id) return;
			var evs = page.events || [];
			h.textContent = 'Around it: ' + a.src_ip + ', ' + CONTEXT_S + ' s either side (' +
				(evs.length >= CONTEXT_MAX ? 'the first ' : '') + evs.length + ' events)';
			if (!evs.length) {
				box.appendChild(el('p', 'muted', 'no events'));
				return;
			}
			var table = el('table', 'context-events mono');
			var tb = el('tbody');
			evs.forEach(function (e) {
				var tr = el('tr');
				tr.setAttribute('data-id', String(e.id));
				var out = e.src_ip === a.src_ip;
				var peer = out ? endpoint(e.dst_ip, e.dst_port) : endpoint(e.src_ip, e.src_port);
				var t = el('td', null, fmtTs(e.ts).slice(6)); /* the time; the date is the alert's */
				t.title = e.ts;
				tr.appendChild(t);
				tr.appendChild(el('td', null, e.kind));
				tr.appendChild(el('td', null, (out ? '\u2192 ' : '\u2190 ') + peer));
				var n = el('td', null, contextName(e));
				n.title = n.textContent;
				tr.appendChild(n);
				tb.appendChild(tr);
			});
			table.appendChild(tb);
			box.appendChild(table);
		}).catch(function (e) {
			if (state.selected === id) box.appendChild(el('p', 'muted', String(e.message || e)));
		});
	}

	// The name an event is about: qname, Host, SNI, or the ICMP type.
	function contextName(e) {
		var d = e[e.kind] || {};
		return String(d.qname || d.host || d.sni || d.name || '');
	}

	function showDetail(id) {
		var panel = $('detail');
		state.selected = id;
		writeHash();
		var rows = $('alerts').tBodies[0].rows;
		for (var i = 0; i < rows.length; i++)
			rows[i].classList.toggle('selected', rows[i].getAttribute('data-id') === String(id));
		api('/api/v1/alerts/' + encodeURIComponent(id)).then(function (a) {
			if (state.selected !== id) return;
			var body = $('detail-body');
			clear(body);
			$('detail-title').textContent = 'Alert #' + a.id;
			var dl = el('dl');
			function item(k, v) {
				if (v === undefined || v === null || v === '') return;
				dl.appendChild(el('dt', null, k));
				var dd = el('dd');
				if (v instanceof Node) dd.appendChild(v); else dd.textContent = String(v);
				dl.appendChild(dd);
			}
			item('class', a['class']);
			item('severity', badge('sev', a.severity));
			item('outcome', badge('out', a.outcome));
			item('rule', a.rule);
			item('score', typeof a.score === 'number' ? a.score.toFixed(2) : a.score);
			item('first seen', a.first_ts);
			item('last seen', a.last_ts);
			item('count', fmtInt(a.count));
			item('source', endpoint(a.src_ip, a.src_port));
			item('destination', endpoint(a.dst_ip, a.dst_port) + (a.proto ? ' (' + a.proto + ')' : ''));
			item('subject', a.subject);
			item('summary', a.summary);
			body.appendChild(dl);
			var ev = Array.isArray(a.evidence) ? a.evidence : [];
			body.appendChild(el('h3', null, 'Evidence' + (ev.length ? ' (' + ev.length + ')' : '')));
			if (ev.length) {
				var ul = el('ul', 'evidence mono');
				ev.forEach(function (x) { ul.appendChild(el('li', null, x)); });
				body.appendChild(ul);
			} else {
				body.appendChild(el('p', 'muted', 'none recorded'));
			}
			showContext(a, body);
			panel.hidden = false;
		}).catch(function (e) { reportError(String(e.message || e)); });
	}

	function hideDetail() {
		state.selected = null;
		writeHash();
		$('detail').hidden = true;
		var sel = $('alerts').querySelectorAll('tr.selected');
		for (var i = 0; i < sel.length; i++) sel[i].classList.remove('selected');
	}

	// ---------------------------------------------------------------- top lists

	function renderTop(listId, key, emptyText) {
		var counts = {};
		state.alerts.forEach(function (a) {
			var k = a[key];
			if (k === null || k === undefined || k === '') return;
			k = String(k);
			counts[k] = (counts[k] || 0) + 1;
		});
		var keys = Object.keys(counts).sort(function (x, y) {
			return counts[y] - counts[x] || (x < y ? -1 : x > y ? 1 : 0);
		}).slice(0, TOP_N);
		var ol = $(listId);
		clear(ol);
		if (!keys.length) {
			var li = el('li', 'empty-item', emptyText);
			li.setAttribute('data-empty', 'true');
			ol.appendChild(li);
			return;
		}
		var max = counts[keys[0]];
		keys.forEach(function (k) {
			var li = el('li');
			li.setAttribute('data-key', k);
			li.setAttribute('data-count', String(counts[k]));
			li.title = k;
			var bar = el('span', 'bar');
			bar.style.width = Math.max(2, Math.round(100 * counts[k] / max)) + '%';
			li.appendChild(bar);
			li.appendChild(el('span', 'name mono', k));
			li.appendChild(el('span', 'n', fmtInt(counts[k])));
			ol.appendChild(li);
		});
	}

	// ---------------------------------------------------------------- timeline

	function niceStep(max, ticks) {
		var raw = max / ticks;
		var p = Math.pow(10, Math.floor(Math.log10(raw)));
		var m = raw / p;
		return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
	}

	function renderTimeline() {
		var svg = $('timeline');
		clear(svg);
		var W = Math.max(300, Math.round(svg.getBoundingClientRect().width) || 880);
		var H = 200;
		svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
		var padL = 40, padR = 12, padT = 10, padB = 24;
		var plotW = W - padL - padR, plotH = H - padT - padB;

		var legend = $('timeline-legend');
		clear(legend);
		var range = $('timeline-range');

		var pts = [];
		state.alerts.forEach(function (a) {
			var t = parseTs(a.first_ts);
			if (isFinite(t)) pts.push([t, String(a['class'])]);
		});
		if (!pts.length) {
			svg.setAttribute('data-empty', 'true');
			var tx = svgEl('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', 'class': 'empty-text' });
			tx.textContent = state.loading ? 'loading…' : 'no alerts';
			svg.appendChild(tx);
			range.textContent = '';
			return;
		}
		svg.removeAttribute('data-empty');

		var t0 = Infinity, t1 = -Infinity;
		pts.forEach(function (p) { if (p[0] < t0) t0 = p[0]; if (p[0] > t1) t1 = p[0]; });
		if (t1 - t0 < 60000) { var mid = (t0 + t1) / 2; t0 = mid - 30000; t1 = mid + 30000; }
		var span = t1 - t0;
		var bw = span / BUCKETS;
		var bucketOf = function (t) { return Math.min(BUCKETS - 1, Math.max(0, Math.floor((t - t0) / bw))); };

		// counts[class][bucket], totals per class, stack height per bucket
		var counts = {}, totals = {}, stack = new Array(BUCKETS).fill(0);
		pts.forEach(function (p) {
			var c = p[1], b = bucketOf(p[0]);
			if (!counts[c]) { counts[c] = new Array(BUCKETS).fill(0); totals[c] = 0; colorOf(c); }
			counts[c][b]++;
			totals[c]++;
			stack[b]++;
		});
		var ymax = Math.max.apply(null, stack);
		var step = niceStep(Math.max(ymax, 1), 4);
		if (step < 1) step = 1;
		var ytop = Math.ceil(ymax / step) * step;
		var y = function (v) { return padT + plotH - plotH * v / ytop; };

		// grid and y labels
		var grid = svgEl('g', { 'class': 'grid' });
		for (var v = 0; v <= ytop; v += step) {
			grid.appendChild(svgEl('line', { x1: padL, x2: W - padR, y1: y(v), y2: y(v) }));
			var lab = svgEl('text', { x: padL - 6, y: y(v) + 4, 'text-anchor': 'end', 'class': 'axis' });
			lab.textContent = fmtInt(v);
			grid.appendChild(lab);
		}
		// x labels: 5 ticks across the range
		var withDate = new Date(t0).toISOString().slice(0, 10) !== new Date(t1).toISOString().slice(0, 10);
		for (var i = 0; i <= 4; i++) {
			var tx2 = padL + plotW * i / 4;
			grid.appendChild(svgEl('line', { x1: tx2, x2: tx2, y1: padT + plotH, y2: padT + plotH + 4 }));
			var xl = svgEl('text', {
				x: tx2, y: H - 6, 'class': 'axis',
				'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle'
			});
			xl.textContent = fmtClock(t0 + span * i / 4, withDate);
			grid.appendChild(xl);
		}
		svg.appendChild(grid);

		// one stacked series per class, in the contract's class order
		var base = new Array(BUCKETS).fill(0);
		var colW = plotW / BUCKETS;
		var gap = colW > 4 ? 1 : 0;
		var present = classOrder.filter(function (c) { return totals[c]; });
		present.forEach(function (c) {
			var g = svgEl('g', { 'data-class': c, 'data-count': totals[c], fill: colorOf(c) });
			var title = svgEl('title', {});
			title.textContent = c + ': ' + totals[c] + (totals[c] === 1 ? ' alert' : ' alerts');
			g.appendChild(title);
			for (var b = 0; b < BUCKETS; b++) {
				var n = counts[c][b];
				if (!n) continue;
				var r = svgEl('rect', {
					x: (padL + b * colW + gap / 2).toFixed(2),
					y: y(base[b] + n).toFixed(2),
					width: Math.max(1, colW - gap).toFixed(2),
					height: Math.max(1, y(base[b]) - y(base[b] + n)).toFixed(2),
					'data-bucket': b, 'data-n': n
				});
				var rt = svgEl('title', {});
				rt.textContent = c + ': ' + n + ' from ' + fmtClock(t0 + b * bw, withDate) +
					' to ' + fmtClock(t0 + (b + 1) * bw, withDate);
				r.appendChild(rt);
				g.appendChild(r);
				base[b] += n;
			}
			svg.appendChild(g);

			var li = el('li');
			li.setAttribute('data-class', c);
			var sw = el('span', 'swatch');
			sw.style.backgroundColor = colorOf(c);
			li.appendChild(sw);
			li.appendChild(document.createTextNode(c));
			li.appendChild(el('span', 'n', fmtInt(totals[c])));
			legend.appendChild(li);
		});
		svg.appendChild(svgEl('line', {
			x1: padL, x2: W - padR, y1: padT + plotH, y2: padT + plotH, 'class': 'baseline'
		}));
		range.textContent = fmtClock(t0, true) + ' → ' + fmtClock(t1, true) + ' UTC · ' +
			BUCKETS + ' buckets of ' + fmtDuration(bw / 1000);
	}

	// ---------------------------------------------------------------- loading

	function renderAggregates() {
		renderTimeline();
		renderTop('top-sources', 'src_ip', 'no sources');
		renderTop('top-subjects', 'subject', 'no subjects');
		updateTableNotes();
	}

	// An alert seen before, grown: its entry and its row (if shown) are
	// replaced; the detail panel, if it shows it, is read again.
	function update(a) {
		state.alerts[state.index[a.id]] = a;
		var old = $('alerts').tBodies[0].querySelector('tr[data-id="' + a.id + '"]');
		if (old) {
			var tr = makeRow(a);
			if (old.classList.contains('selected')) tr.classList.add('selected');
			old.parentNode.replaceChild(tr, old);
		}
		if (state.selected === a.id) showDetail(a.id);
	}

	// Alerts from fetchNew (by id): new ones are added in id order, known
	// ones updated in place. Returns whether anything changed.
	function ingest(got) {
		if (!got) return false;
		var fresh = [], changed = false;
		Object.keys(got).forEach(function (k) {
			var a = got[k];
			if (state.index[a.id] === undefined) fresh.push(a);
			else { update(a); changed = true; }
		});
		if (!fresh.length) return changed;
		fresh.sort(function (a, b) { return a.id - b.id; });
		fresh.forEach(function (a) { state.index[a.id] = state.alerts.length; state.alerts.push(a); });
		addRows(fresh);
		return true;
	}

	function reload() {
		state.gen++;
		var gen = state.gen;
		state.alerts = [];
		state.index = {};
		state.sinceSeq = 0;
		state.loading = true;
		hideDetail();
		clear($('alerts').tBodies[0]);
		renderAggregates();
		document.body.setAttribute('data-state', 'loading');
		return fetchNew().then(function (fresh) {
			if (gen !== state.gen) return;
			state.loading = false;
			ingest(fresh);
			renderAggregates();
			document.body.setAttribute('data-state', 'ready');
			markOk();
		}).catch(function (e) {
			if (gen !== state.gen) return;
			state.loading = false;
			renderAggregates();
			document.body.setAttribute('data-state', 'error');
			markFail(e);
		});
	}

	function poll() {
		if (state.polling || state.loading) return Promise.resolve();
		state.polling = true;
		var gen = state.gen;
		return Promise.all([
			fetchNew().then(function (fresh) {
				if (gen === state.gen && ingest(fresh)) renderAggregates();
			}),
			refreshStats()
		]).then(function () {
			if (document.body.getAttribute('data-state') === 'error') reload();
			markOk();
		}).catch(markFail).then(function () { state.polling = false; });
	}

	var pollTimer = null;
	function schedule() {
		clearTimeout(pollTimer);
		pollTimer = setTimeout(function () { poll().then(schedule); }, POLL_MS);
	}

	// The stream only says "something new": the poll fetches it, in order and
	// filtered, so a lost or duplicated event changes nothing.
	// Not in a headless browser unless asked for (?stream=on): an open stream
	// holds its virtual time still, so --virtual-time-budget never runs out
	// and --dump-dom / --screenshot would wait forever. ?stream=off turns it
	// off anywhere.
	function streamWanted() {
		var m = /[?&]stream=(on|off)\b/.exec(location.search);
		if (m) return m[1] === 'on';
		return !/HeadlessChrome/.test(navigator.userAgent);
	}

	function openStream() {
		if (!window.EventSource || !streamWanted()) return;
		try {
			// every write, new alerts and grown ones, from where the
			// first load ended; only a hint: the poll fetches them
			var es = new EventSource('/api/v1/stream?since_seq=' + encodeURIComponent(state.sinceSeq));
			state.stream = es;
			var soon = null;
			es.addEventListener('alert', function () {
				if (soon) return;
				soon = setTimeout(function () { soon = null; poll(); }, 250);
			});
			es.onopen = function () { if (state.lastOk) markOk(); };
			es.onerror = function () {
				// A server without the stream: stop asking; polling goes on.
				if (es.readyState === 2) state.stream = null;
			};
		} catch (e) {
			state.stream = null;
		}
	}

	// ---------------------------------------------------------------- start

	function start() {
		var sel = $('filter-class');
		CLASSES.forEach(function (c) { addClassOption(c[0]); });
		sel.addEventListener('change', onFilterChange);
		$('filter-severity').addEventListener('change', onFilterChange);
		window.addEventListener('hashchange', function () {
			var f = readHash();
			if (f.cls !== state.filter.cls || f.severity !== state.filter.severity) applyFilter(f);
			if (f.alert && f.alert !== state.selected) showDetail(f.alert);
			else if (!f.alert && state.selected) hideDetail();
		});

		var tbody = $('alerts').tBodies[0];
		tbody.addEventListener('click', function (e) {
			var tr = e.target.closest('tr[data-id]');
			if (tr) showDetail(Number(tr.getAttribute('data-id')));
		});
		tbody.addEventListener('keydown', function (e) {
			if (e.key !== 'Enter') return;
			var tr = e.target.closest('tr[data-id]');
			if (tr) showDetail(Number(tr.getAttribute('data-id')));
		});
		$('detail-close').addEventListener('click', hideDetail);
		document.addEventListener('keydown', function (e) { if (e.key === 'Escape') hideDetail(); });

		var resizeTimer = null;
		window.addEventListener('resize', function () {
			clearTimeout(resizeTimer);
			resizeTimer = setTimeout(renderTimeline, 150);
		});

		refreshStats().catch(markFail);
		var first = readHash();
		applyFilter(first);
		if (first.alert) showDetail(first.alert); /* a link to one alert: #alert=ID */
		// Open the stream once the first load is done; poll every 5 s anyway.
		var wait = setInterval(function () {
			if (state.loading) return;
			clearInterval(wait);
			openStream();
		}, 200);
		schedule();
	}

	if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
	else start();
})();
