#!/bin/sh
# dashboard_test.sh - the dashboard in a real browser (Debian's headless chromium).
#   dashboard_test.sh EGRESSWATCH SOURCE_ROOT [OUT_DIR]
# Replays pcaps/demo.pcap, web_http.pcap, web_icmp.pcap and a capture whose
# HTTP Host is HTML (hostile_pcap.py) into a temporary database with a
# sandbox rules file, runs `egresswatch serve --api 127.0.0.1:0`, loads the
# page in chromium (--dump-dom) and checks the DOM against
# `egresswatch alerts --json` (check_dom.py): the unfiltered page, the page
# filtered by class and by severity from its URL, the detail panel of a
# link to one alert with the events around it, and a database without
# alerts (the empty states). Then saves a 1400x1000 screenshot as
# OUT_DIR/dashboard.png (OUT_DIR: the argument, else $MESON_BUILD_ROOT, else .).
# Skips (77) when /usr/bin/chromium is missing (./dev deps installs it).
set -u
EW=$1
SRC=$2
OUT=${3:-${MESON_BUILD_ROOT:-.}}
HERE=$(cd "$(dirname "$0")" && pwd)
CHROMIUM=/usr/bin/chromium
PY=/usr/bin/python3

if [ ! -x "$CHROMIUM" ]; then
	echo "SKIP: $CHROMIUM is missing (Debian package chromium; ./dev deps installs it)"
	exit 77
fi

T=$(mktemp -d /tmp/ew-browser.XXXXXX)
PIDS=""
cleanup() {
	for p in $PIDS; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $PIDS; do
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 30 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ] && exit 0
	exit 1
}

# Start `egresswatch serve` on an ephemeral port; sets PORT (empty on failure).
serve() { # DB LOG
	: > "$2"
	"$EW" serve -d "$1" --api 127.0.0.1:0 > "$2" 2>&1 &
	PIDS="$PIDS $!"
	PORT=
	i=0
	while [ $i -lt 100 ]; do
		PORT=$(sed -n 's|.*serving API on http://127\.0\.0\.1:\([0-9][0-9]*\)/.*|\1|p' "$2" | head -n 1)
		[ -n "$PORT" ] && break
		kill -0 "$!" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	[ -n "$PORT" ]
}

# Headless chromium with nothing of its own on the network; each run gets a
# fresh profile. --virtual-time-budget lets the page's fetches and timers run
# (5 s of page time) before the DOM is dumped or the screenshot taken.
browse() { # URL OUTPUT-OPTION...
	url=$1
	shift
	prof=$(mktemp -d "$T/profile.XXXXXX")
	HOME=$T XDG_CONFIG_HOME=$T/xdg-config XDG_CACHE_HOME=$T/xdg-cache \
	timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--disable-quic --user-data-dir="$prof" --virtual-time-budget=5000 "$@" "$url" \
		2>> "$T/chromium.log"
}

# Run check_dom.py and count its ok/FAIL lines into ours.
check_dom() { # MODE DOM ALERTS [PACKETS]
	"$PY" "$HERE/check_dom.py" "$@" > "$T/check.out" 2>&1
	rc=$?
	cat "$T/check.out"
	n=$(grep -c '^ok: ' "$T/check.out")
	pass=$((pass + n))
	n=$(grep -c '^FAIL: ' "$T/check.out")
	fail=$((fail + n))
	if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
		bad "check_dom.py $1 exited $rc"
	fi
}

# The policy the fixtures were recorded against.
cat > "$T/rules.yaml" <<'EOF'
sandbox:
  networks: [10.99.0.0/24]
allow:
  proxies: ["10.99.0.2:8080"]
  resolvers: ["10.99.0.53"]
EOF

"$PY" "$HERE/hostile_pcap.py" "$T/hostile.pcap" || { bad "hostile_pcap.py failed"; finish; }
"$EW" replay -c "$T/rules.yaml" -d "$T/ew.db" "$SRC/pcaps/demo.pcap" "$SRC/pcaps/web_http.pcap" \
	"$SRC/pcaps/web_icmp.pcap" "$T/hostile.pcap" > "$T/replay.out" 2>&1 ||
	{ bad "replay failed: $(cat "$T/replay.out")"; finish; }
PACKETS=$(sed -n 's/^egresswatch replay: .* \([0-9][0-9]*\) packets,.*/\1/p' "$T/replay.out")
[ -n "$PACKETS" ] && ok "replay: $PACKETS packets" || { bad "no packet count in: $(cat "$T/replay.out")"; finish; }
"$EW" alerts -d "$T/ew.db" --json > "$T/alerts.jsonl" || { bad "egresswatch alerts failed"; finish; }
N=$(wc -l < "$T/alerts.jsonl")
[ "$N" -gt 0 ] && ok "CLI lists $N alerts" || bad "the fixtures raised no alerts"

serve "$T/ew.db" "$T/serve.log" && ok "serve listens on port $PORT" ||
	{ bad "serve did not start: $(cat "$T/serve.log")"; finish; }
BASE=http://127.0.0.1:$PORT

# The unfiltered page.
browse "$BASE/" --dump-dom > "$T/dom.html"
[ -s "$T/dom.html" ] && ok "chromium dumped the page" || bad "chromium gave no DOM: $(tail -n 5 "$T/chromium.log")"
check_dom full "$T/dom.html" "$T/alerts.jsonl" "$PACKETS"

# Filters from the URL go into the API query: compare with the CLI's answer.
CLASS=$("$PY" -c 'import json,sys,collections; print(collections.Counter(json.loads(l)["class"] for l in sys.stdin).most_common(1)[0][0])' < "$T/alerts.jsonl")
"$EW" alerts -d "$T/ew.db" --json --class "$CLASS" > "$T/alerts-class.jsonl"
browse "$BASE/#class=$CLASS" --dump-dom > "$T/dom-class.html"
check_dom filtered "$T/dom-class.html" "$T/alerts-class.jsonl"

"$PY" -c 'import json,sys
for l in sys.stdin:
    if json.loads(l)["severity"] in ("high", "critical"): sys.stdout.write(l)' < "$T/alerts.jsonl" > "$T/alerts-high.jsonl"
browse "$BASE/#severity=high" --dump-dom > "$T/dom-high.html"
check_dom filtered "$T/dom-high.html" "$T/alerts-high.jsonl"

# A link to one alert (#alert=ID) opens its panel, with what its source did
# from 5 s before its first hit to 5 s after its last: the events the CLI
# gives for --host SRC --from --to (at most 50).
"$PY" -c 'import json,sys,calendar,time
a = [json.loads(l) for l in sys.stdin if json.loads(l)["class"] == "metadata_probe"][0]
def p(ts, shift):
    s, us = ts[:19], (ts[20:26] + "000000")[:6]
    return "%d.%s" % (calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%S")) + shift, us)
print(a["id"], a["src_ip"], p(a["first_ts"], -5), p(a["last_ts"], 5))' < "$T/alerts.jsonl" > "$T/pick"
read -r AID ASRC AFROM ATO < "$T/pick"
"$EW" events -d "$T/ew.db" --json --host "$ASRC" --from "$AFROM" --to "$ATO" --limit 50 > "$T/context.jsonl"
browse "$BASE/#alert=$AID" --dump-dom > "$T/dom-detail.html"
check_dom detail "$T/dom-detail.html" "$T/alerts.jsonl" "$AID" "$T/context.jsonl" "$AFROM" "$ATO"

# The screenshot, for a human to look at.
mkdir -p "$OUT"
rm -f "$OUT/dashboard.png"
browse "$BASE/" --screenshot="$OUT/dashboard.png" --window-size=1400,1000 > /dev/null
[ -s "$OUT/dashboard.png" ] && ok "screenshot saved: $OUT/dashboard.png" ||
	bad "no screenshot: $(tail -n 5 "$T/chromium.log")"

# A database without alerts: the empty states.
"$EW" replay -c "$T/rules.yaml" -d "$T/empty.db" "$SRC/pcaps/dns_basic.pcap" > "$T/replay-empty.out" 2>&1
"$EW" alerts -d "$T/empty.db" --json > "$T/alerts-empty.jsonl"
if [ -s "$T/alerts-empty.jsonl" ]; then
	bad "dns_basic.pcap raised alerts; no empty database to show"
elif serve "$T/empty.db" "$T/serve-empty.log"; then
	browse "http://127.0.0.1:$PORT/" --dump-dom > "$T/dom-empty.html"
	check_dom empty "$T/dom-empty.html" "$T/alerts-empty.jsonl"
else
	bad "serve (empty database) did not start: $(cat "$T/serve-empty.log")"
fi

finish
