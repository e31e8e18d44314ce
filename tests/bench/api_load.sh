#!/usr/bin/env bash
# api_load.sh - load on the HTTP API: wrk against GET /api/v1/alerts on
# loopback. A benchmark, not a test: it prints figures, asserts nothing.
#
#   tests/bench/api_load.sh [-e EGRESSWATCH] [-d SECONDS] [-t THREADS] [-c CONNS] [PATH]
#
# Replays pcaps/demo.pcap, web_http.pcap and web_icmp.pcap (with a sandbox
# policy, so there are alerts of several classes) into a fresh database,
# starts `egresswatch serve --api 127.0.0.1:0`, and runs wrk for SECONDS
# (default 10) with THREADS threads (2) and CONNS connections (32) against
# PATH (default /api/v1/alerts). Prints requests/s, latency and errors
# (socket errors and non-2xx answers). Installs wrk with apt-get if missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
EW=build/egresswatch DUR=10 THREADS=2 CONNS=32 URLPATH=/api/v1/alerts
while [ $# -gt 0 ]; do
	case "$1" in
	-e) EW=$2; shift 2 ;;
	-d) DUR=$2; shift 2 ;;
	-t) THREADS=$2; shift 2 ;;
	-c) CONNS=$2; shift 2 ;;
	-h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) URLPATH=$1; shift ;;
	esac
done
[ -x "$EW" ] || { echo "api_load: $EW not found: build first (./dev build) or pass -e" >&2; exit 2; }
if ! command -v wrk >/dev/null 2>&1; then
	echo "api_load: installing wrk" >&2
	SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get install -y -q wrk >/dev/null || {
		$SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q wrk >/dev/null; }
fi
TMP=$(mktemp -d)
SERVE_PID=""
cleanup() {
	[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
cat > "$TMP/rules.yaml" <<'RULES'
sandbox:
  networks: [10.99.0.0/24]
allow:
  proxies: ["10.99.0.2:8080"]
  resolvers: ["10.99.0.53"]
RULES
"$EW" replay -q -c "$TMP/rules.yaml" -d "$TMP/api.db" pcaps/demo.pcap pcaps/web_http.pcap \
	pcaps/web_icmp.pcap
ROWS=$(sqlite3 "$TMP/api.db" 'SELECT count(*) FROM alerts' 2>/dev/null || echo "?")
"$EW" serve -d "$TMP/api.db" --api 127.0.0.1:0 2> "$TMP/serve.log" &
SERVE_PID=$!
PORT=""
for _ in $(seq 50); do
	PORT=$(sed -n 's|.*serving API on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$TMP/serve.log")
	[ -n "$PORT" ] && break
	sleep 0.1
done
[ -n "$PORT" ] || { echo "api_load: serve did not start:" >&2; cat "$TMP/serve.log" >&2; exit 1; }
URL="http://127.0.0.1:$PORT$URLPATH"
BODY=$(curl -s "$URL" | wc -c)
echo "api_load: $URL ($ROWS alerts, $BODY-byte body), ${DUR}s, $THREADS threads, $CONNS connections"
wrk -t "$THREADS" -c "$CONNS" -d "${DUR}s" --latency "$URL" | tee "$TMP/wrk.out"
RPS=$(awk '/^Requests\/sec/ {print $2}' "$TMP/wrk.out")
SOCK=$(awk '/Socket errors/ {s=0; for (i=1;i<=NF;i++) if ($i ~ /^[0-9]+,?$/) s+=$i; print s}' "$TMP/wrk.out")
NON2XX=$(awk '/Non-2xx/ {print $NF}' "$TMP/wrk.out")
echo "api_load: ${RPS:-?} requests/s; errors: ${SOCK:-0} socket, ${NON2XX:-0} non-2xx"
