#!/usr/bin/env bash
# watch_soak.sh - `egresswatch watch` under a sustained DNS flood on a veth
# pair between two network namespaces of its own. A benchmark, not a test:
# it prints figures, asserts nothing. Root only.
#
#   tests/bench/watch_soak.sh [-t SECONDS] [--retain D] [--eve] [EGRESSWATCH]
#
# Namespace ew-soak-a (10.77.0.1) sends DNS queries, each name new, as fast as
# one python3 process can for SECONDS (default 30; at most 10M queries) to
# ew-soak-b (10.77.0.2), where `watch -i veth-b` captures them (--retain D and
# --eve FILE passed on when given). The two namespaces have no other link and
# no route: nothing leaves them. It then waits for the watch to settle, stops
# it with SIGTERM and prints: queries sent and their rate, events stored,
# dropped by the store and by the kernel ring, deleted by --retain, the --eve
# file's lines and lag, the database's and the file's sizes, and the watch's
# peak RSS. The namespaces and files are removed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=30 RETAIN="" EVE=0 EW=""
while [ $# -gt 0 ]; do
	case "$1" in
	-t) SECS=$2; shift 2 ;;
	--retain) RETAIN=$2; shift 2 ;;
	--eve) EVE=1; shift ;;
	-h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) EW=$1; shift ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "watch_soak: needs root (network namespaces)" >&2; exit 2; }
if [ -z "$EW" ]; then
	BDIR=build-bench
	[ -f "$BDIR/build.ninja" ] || meson setup "$BDIR" --buildtype=release -Db_lto=true >/dev/null
	ninja -C "$BDIR" >/dev/null
	EW=$BDIR/egresswatch
fi
EW=$(readlink -f "$EW")
T=$(mktemp -d /tmp/ew-soak.XXXXXX)
A=ew-soak-a B=ew-soak-b
cleanup() {
	[ -n "${WPID:-}" ] && kill -TERM "$WPID" 2>/dev/null && wait "$WPID" 2>/dev/null
	ip netns del "$A" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
ip netns del "$A" 2>/dev/null || true
ip netns del "$B" 2>/dev/null || true
ip netns add "$A"
ip netns add "$B"
ip link add veth-a netns "$A" type veth peer name veth-b netns "$B"
ip -n "$A" addr add 10.77.0.1/24 dev veth-a
ip -n "$B" addr add 10.77.0.2/24 dev veth-b
ip -n "$A" link set veth-a up
ip -n "$B" link set veth-b up
ip -n "$A" link set lo up
ip -n "$B" link set lo up

args=(watch -d "$T/soak.db" -i veth-b -f "udp and port 53")
[ -n "$RETAIN" ] && args+=(--retain "$RETAIN")
[ "$EVE" = 1 ] && args+=(--eve "$T/eve.json")
# ip netns exec execs the command: $! is the watch itself
ip netns exec "$B" "$EW" "${args[@]}" 2> "$T/watch.log" &
WPID=$!
sleep 1

# Every query a new name (a counter in base 32), so nothing is cached or
# aggregated away; bounded in time and in count.
ip netns exec "$A" /usr/bin/python3 - "$SECS" > "$T/sent" <<'PY'
import socket, struct, sys, time
secs = float(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.77.0.1", 0))
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
head = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
tail = b"\x04soak\x07example\x04test\x00" + struct.pack(">HH", 1, 1)
alpha = b"abcdefghijklmnopqrstuvwxyz234567"
t0 = time.monotonic()
n = 0
while n < 10_000_000:
    if n % 1000 == 0 and time.monotonic() - t0 >= secs:
        break
    v, lab = n, bytearray()
    for _ in range(8):
        lab.append(alpha[v & 31])
        v >>= 5
    try:
        s.sendto(head + bytes([8]) + bytes(lab) + tail, ("10.77.0.2", 53))
        n += 1
    except (BlockingIOError, OSError):
        time.sleep(0.0001)
print(n, time.monotonic() - t0)
PY
read -r SENT ELAPSED < "$T/sent"
sleep 4
RSS=$(awk '/^VmHWM/ {print $2}' "/proc/$WPID/status")
CPU=$(awk '{printf "%.1f s user, %.1f s system", $14 / 100, $15 / 100}' "/proc/$WPID/stat")
kill -TERM "$WPID"
wait "$WPID" || true
WPID=""

counter() { /usr/bin/python3 -c "import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute('SELECT value FROM stats WHERE name = ?', (sys.argv[2],)).fetchone(); print(r[0] if r else 0)" "$T/soak.db" "$1"; }
printf 'sent        %s queries in %.1f s (%.0f/s)\n' "$SENT" "$ELAPSED" "$(echo "$SENT / $ELAPSED" | bc -l)"
printf 'stored      %s events (store.events), %s dropped by the store, %s by the kernel ring\n' \
	"$(counter store.events)" "$(counter store.dropped)" "$(counter capture.veth-b.dropped)"
[ -n "$RETAIN" ] && printf 'retention   %s events deleted (--retain %s)\n' "$(counter store.expired)" "$RETAIN"
if [ "$EVE" = 1 ]; then
	printf 'eve         %s lines (%s events, %s alert lines), %s lost, %s missed\n' \
		"$(wc -l < "$T/eve.json")" "$(counter eve.events)" "$(counter eve.alerts)" \
		"$(counter eve.errors)" "$(counter eve.missed)"
	printf 'eve file    %s bytes\n' "$(stat -c %s "$T/eve.json")"
fi
printf 'database    %s bytes (+ WAL %s)\n' "$(stat -c %s "$T/soak.db")" \
	"$(stat -c %s "$T/soak.db-wal" 2>/dev/null || echo 0)"
printf 'watch       peak RSS %s KiB, CPU %s\n' "$RSS" "$CPU"
grep -E '\[eve\]|\[store\]' "$T/watch.log" | sed 's/^<[0-9]>/log         /' || true
