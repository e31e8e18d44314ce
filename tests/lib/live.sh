# tests/lib/live.sh - what the `watch` tests on loopback share (tests/live/watch_lo.sh,
# watch_retain.sh; watch_daemon.sh takes the counters and watch_stop).
#
# Sourced, never run; POSIX sh. State it owns, read freely by the scripts:
#   T     the test's temporary folder (live_init); removed at exit
#   PID   the `watch` running in the background, or empty; sent SIGTERM at exit
#   pass, fail   the counters ok and bad add to; live_done reports them
#
# Typical use:
#   . "$(dirname "$0")/../lib/live.sh"
#   live_init                          # skips (77) without root; T, PID, trap
#   "$EW" watch ... -i lo -f "udp and port $PORT" 2> "$T/log" & PID=$!
#   lo_dns_send "$PORT" a.example.test b.example.test
#   watch_stop                         # SIGTERM, wait, exit status 0
#   live_done                          # "N passed, M failed"; the script's status

pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

live_cleanup() {
	[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null
	rm -rf "$T"
}

# Root (capture on lo) or skip; the temporary folder; the exit trap.
live_init() {
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to capture on lo"; exit 77; }
	T=$(mktemp -d /tmp/ew-live.XXXXXX)
	PID=
	trap live_cleanup EXIT
}

# One DNS query (A, IN, RD) per NAME from 127.0.0.1:PORT to 127.0.0.2:53, over
# loopback only, with python3.
lo_dns_send() {
	/usr/bin/python3 - "$@" <<'PY'
import socket, struct, sys
port = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", port))
for name in sys.argv[2:]:
    q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0" + struct.pack(">HH", 1, 1)
    s.sendto(q, ("127.0.0.2", 53))
PY
}

# SIGTERM to the watch in PID, which must flush and exit 0.
watch_stop() {
	kill -TERM "$PID"
	wait "$PID"
	rc=$?
	PID=
	[ "$rc" -eq 0 ] && ok || bad "watch exited $rc on SIGTERM"
}

live_done() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
