#!/bin/sh
# watch_daemon.sh - `egresswatch watch` as a service: readiness and stopping
# through the systemd notification socket, running as an unprivileged user
# (--user) with only CAP_NET_RAW, and an interface that
# disappears and comes back (retried, not fatal; the kernel's counts of the
# handle before, drops included, are kept in the stats and the stop's
# summary).
#   watch_daemon.sh EGRESSWATCH
# Everything happens in a network namespace of the test's own (ew-live-dmn)
# on a veth pair inside it and loopback; no packet leaves it. Needs root; skips
# (77) without it.
set -u
EW=$1
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (namespaces, capture)"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user 'nobody'"; exit 77; }
NS=ew-live-dmn
T=$(mktemp -d /tmp/ew-daemon.XXXXXX)
chmod 755 "$T"
PID= LPID=
cleanup() {
	[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null
	[ -n "$LPID" ] && kill "$LPID" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
. "$(dirname "$0")/../lib/live.sh" # ok, bad, watch_stop, live_done (not live_init)

ip netns del "$NS" 2>/dev/null
ip netns add "$NS" || { echo "SKIP: cannot create a network namespace"; exit 77; }
ip -n "$NS" link set lo up
ip -n "$NS" link add dum0 type veth peer name dum1
ip -n "$NS" link set dum0 up
ip -n "$NS" link set dum1 up

# A notification socket that records what the service says.
/usr/bin/python3 - "$T/notify.sock" "$T/notify.log" <<'PY' &
import os, socket, sys, time
path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o777)
s.settimeout(1.0)
end = time.time() + 60
with open(log, "a") as f:
    while time.time() < end:
        try:
            f.write(s.recv(4096).decode() + "\n")
            f.flush()
        except socket.timeout:
            pass
PY
LPID=$!
sleep 0.5

mkdir -p "$T/db" && chown nobody "$T/db"
NOTIFY_SOCKET=$T/notify.sock ip netns exec "$NS" "$EW" watch -d "$T/db/live.db" -i lo -i dum0 \
	-B 1 --user nobody 2> "$T/log" &
PID=$!
sleep 1.5
grep -q "READY=1" "$T/notify.log" 2>/dev/null && ok || bad "no READY=1 on the notification socket"
uid=$(awk '/^Uid:/ {print $2}' /proc/$PID/status 2>/dev/null)
[ "$uid" = "$(id -u nobody)" ] && ok || bad "watch runs as uid '$uid', not nobody"
capeff=$(awk '/^CapEff:/ {print $2}' /proc/$PID/status 2>/dev/null)
[ "$capeff" = "0000000000002000" ] && ok || bad "effective capabilities $capeff, want NET_RAW only"

# Drops: 20,000 packets while the sensor is stopped overflow its 1 MiB
# ring on dum0; they are counted (the stats are written once a second).
kill -STOP "$PID"
n=$(ip netns exec "$NS" /usr/bin/python3 "$(dirname "$0")/send_frames.py" dum1 20000 drop)
kill -CONT "$PID"
sleep 1.5
recv1=$(sqlite3 "$T/db/live.db" "select value from stats where name = 'capture.dum0.received'")
drop1=$(sqlite3 "$T/db/live.db" "select value from stats where name = 'capture.dum0.dropped'")
[ "$n" = 20000 ] && [ "${recv1:-0}" -ge 20000 ] && [ "${drop1:-0}" -gt 0 ] && ok ||
	bad "a burst into a 1 MiB ring: sent $n, stats received '$recv1' dropped '$drop1'"

# The veth disappears: logged, retried, the sensor lives on.
ip -n "$NS" link del dum0
sleep 1
grep -q "dum0.*retrying every 5 s" "$T/log" && ok || bad "no retry message for a vanished interface: $(cat "$T/log")"
kill -0 "$PID" 2>/dev/null && ok || bad "watch exited when an interface disappeared"
ip -n "$NS" link add dum0 type veth peer name dum1
ip -n "$NS" link set dum0 up
ip -n "$NS" link set dum1 up
sleep 6
grep -q "dum0: capturing again" "$T/log" && ok || bad "the interface was not reopened: $(cat "$T/log")"
# ... and captured on, as nobody: a DNS query framed by hand into its peer
ip netns exec "$NS" /usr/bin/python3 -c '
import socket, struct
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
q = struct.pack(">HHHHHH", 8, 0x0100, 1, 0, 0, 0) + b"\x08reopened\x04test\x00" + struct.pack(">HH", 1, 1)
udp = struct.pack(">HHHH", 40000, 53, 8 + len(q), 0) + q
ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                 bytes([10, 77, 0, 1]), bytes([10, 77, 0, 53]))
ip = ip[:10] + struct.pack(">H", csum(ip)) + ip[12:]
eth = b"\xff" * 6 + b"\x02\x00\x00\x77\x00\x01" + b"\x08\x00"
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("dum1", 0))
s.send(eth + ip + udp)'

# Traffic on loopback inside the namespace is still captured as nobody.
ip netns exec "$NS" /usr/bin/python3 -c '
import socket, struct
q = struct.pack(">HHHHHH", 7, 0x0100, 1, 0, 0, 0) + b"\x06daemon\x04test\x00" + struct.pack(">HH", 1, 1)
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(q, ("127.0.0.1", 53))'
sleep 1.5
watch_stop
sleep 1.2
grep -q "STOPPING=1" "$T/notify.log" && ok || bad "no STOPPING=1 on the notification socket"
# The counts of the handle closed when dum0 went away go on under the new
# one's, in the stats and in the stop's summary (lo adds its own).
recv2=$(sqlite3 "$T/db/live.db" "select value from stats where name = 'capture.dum0.received'")
drop2=$(sqlite3 "$T/db/live.db" "select value from stats where name = 'capture.dum0.dropped'")
[ "${recv2:-0}" -gt "${recv1:-0}" ] && [ "${drop2:-0}" -eq "${drop1:-0}" ] && ok ||
	bad "counts across the reopen: received $recv1 then '$recv2', dropped $drop1 then '$drop2'"
sum=$(sed -n 's/.* the kernel received \([0-9]*\) and dropped \([0-9]*\) .*/\1 \2/p' "$T/log")
[ "${sum#* }" -ge "${drop1:-1}" ] && [ "${sum% *}" -gt "${recv1:-0}" ] && ok ||
	bad "the stop's summary lost the first handle's counts: '$sum', before $recv1/$drop1: $(tail -n 1 "$T/log")"
"$EW" events -d "$T/db/live.db" --json | grep -q '"qname":"daemon.test"' && ok ||
	bad "the query sent after dropping root was not stored"
"$EW" events -d "$T/db/live.db" --json | grep -q '"qname":"reopened.test"' && ok ||
	bad "the query on the reopened interface was not stored"
live_done
