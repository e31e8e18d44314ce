#!/bin/sh
# watch_capture.sh - what the live capture holds and tells:
#  - the ring: with -B 8 and the default snap length a burst of 3,000
#    packets that arrives while the sensor is stopped (SIGSTOP) is kept
#    whole (a TPACKET_V3 ring of blocks; immediate mode's TPACKET_V2 ring
#    of 64 KiB frames holds about 120 of them);
#  - a link taken down and up again is logged once each way, and captured
#    on afterwards;
#  - stderr a pipe whose reader has gone (`watch 2>&1 | head -n 1`): SIGTERM
#    still settles and commits what came last and exits 0 (not SIGPIPE);
#  - a packet seen on two watched interfaces is one event.
#   watch_capture.sh EGRESSWATCH
# Everything happens in a network namespace of the test's own (ew-live-cap)
# on a veth pair inside it (cap0, watched; cap1, its peer, where
# send_frames.py puts hand-made frames); no packet leaves it. Needs root;
# skips (77) without it. About 8 s.
set -u
EW=$1
HERE=$(dirname "$0")
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (namespaces, capture)"; exit 77; }
NS=ew-live-cap
T=$(mktemp -d /tmp/ew-capture.XXXXXX)
PID= HPID=
cleanup() {
	[ -n "$PID" ] && kill -CONT "$PID" 2>/dev/null && kill -TERM "$PID" 2>/dev/null
	[ -n "$HPID" ] && kill "$HPID" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
. "$HERE/../lib/live.sh" # ok, bad, watch_stop, live_done (not live_init)

ip netns del "$NS" 2>/dev/null
ip netns add "$NS" || { echo "SKIP: cannot create a network namespace"; exit 77; }
IN="ip netns exec $NS"
$IN sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n "$NS" link add cap0 type veth peer name cap1
ip -n "$NS" link set cap0 up
ip -n "$NS" link set cap1 up
send() { $IN /usr/bin/python3 "$HERE/send_frames.py" cap1 "$@" >/dev/null; }
# wait up to 5 s for PATTERN in FILE
wait_for() {
	i=0
	while [ $i -lt 50 ] && ! grep -q "$1" "$2" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
}

# 1. The ring. The sensor stopped, the burst fills the ring; resumed, it
# takes all of it.
$IN "$EW" watch -d "$T/ring.db" -i cap0 -B 8 2> "$T/log" &
PID=$!
wait_for "watching 1 interface" "$T/log"
kill -STOP "$PID"
send 3000 burst
sleep 0.3
kill -CONT "$PID"
sleep 1.5

# 2. The link goes down (libpcap says nothing of it: the sensor looks once a
# second), comes back, and is captured on.
ip -n "$NS" link set cap0 down
sleep 1.5
[ "$(grep -c 'cap0: interface down' "$T/log")" -eq 1 ] && ok ||
	bad "a link taken down is not logged once: $(cat "$T/log")"
sleep 1
[ "$(grep -c 'cap0: interface down' "$T/log")" -eq 1 ] && ok || bad "link down logged again"
ip -n "$NS" link set cap0 up
ip -n "$NS" link set cap1 up
sleep 1.5
grep -q "cap0: interface up again" "$T/log" && ok || bad "a link back up is not logged: $(cat "$T/log")"
send 1 after-up
sleep 1.2
watch_stop
grep -q "\[capture\] 3001 packets decoded; the kernel received 3001 and dropped 0 " "$T/log" && ok ||
	bad "the burst was not kept whole in an 8 MiB ring: $(tail -n 1 "$T/log")"
[ "$("$EW" events -d "$T/ring.db" --json | grep -c '"qname":"burst[0-9]*.test"')" -eq 3000 ] && ok ||
	bad "not every query of the burst was stored"
"$EW" events -d "$T/ring.db" --json | grep -q '"qname":"after-up0.test"' && ok ||
	bad "nothing captured after the link came back"

# 3. stderr a pipe whose reader has gone: the first log line is read, then
# every write to it fails (EPIPE), the stop's lines included.
mkfifo "$T/fifo"
head -n 1 < "$T/fifo" > "$T/head" &
HPID=$!
$IN "$EW" watch -d "$T/pipe.db" -i cap0 2> "$T/fifo" &
PID=$!
wait "$HPID"
HPID=
grep -q "watching 1 interface" "$T/head" && ok || bad "the reader did not get the first line"
send 1 last-before-stop
sleep 0.3
watch_stop
"$EW" events -d "$T/pipe.db" --json | grep -q '"qname":"last-before-stop0.test"' && ok ||
	bad "with its reader gone, the stop did not commit the last query"

# 4. Two watched interfaces that one packet crosses (the two ends of the
# veth pair: each frame leaves by cap1 and arrives by cap0): each DNS query
# is one event, the other interface's copy skipped (sensor/copies.h).
$IN "$EW" watch -d "$T/two.db" -i cap0 -i cap1 2> "$T/log" &
PID=$!
wait_for "watching 2 interfaces" "$T/log"
send 20 twice
sleep 1.2
watch_stop
n=$("$EW" events -d "$T/two.db" --json | grep -c '"qname":"twice[0-9]*.test"')
[ "$n" -eq 20 ] && ok || bad "20 queries seen on two interfaces made $n events, want 20"
grep -q "\[capture\] 40 packets decoded" "$T/log" && ok ||
	bad "both copies were not captured: $(tail -n 1 "$T/log")"
live_done
