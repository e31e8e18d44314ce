#!/bin/sh
# watch_retain.sh - `egresswatch watch --retain`: events older than the
# window (packet time, behind the newest event) are deleted as new ones are
# committed, the rest kept; the count is in the stats table and the log; a
# bad duration is a usage error.
#   watch_retain.sh EGRESSWATCH
# Traffic: three DNS queries from 127.0.0.1 to 127.0.0.2:53 from a port of the
# test's own (the BPF filter keeps only those), sent by python3 over loopback
# only, the first 4 s before the others. Needs root (CAP_NET_RAW); skips (77)
# without.
set -u
EW=$1
. "$(dirname "$0")/../lib/live.sh"
live_init
PORT=$((20000 + ($$ + 7) % 20000))

for d in 0 0s 2x 1.5h -3 36601d; do
	"$EW" watch -d "$T/bad.db" -i lo --retain "$d" 2> "$T/err"
	rc=$?
	[ "$rc" -eq 2 ] && grep -q -- "--retain $d: want N\[s|m|h|d|w\] from 1s to 36600d" "$T/err" && ok ||
		bad "--retain $d: exit $rc, $(cat "$T/err")"
done
[ ! -e "$T/bad.db" ] && ok || bad "a usage error created the database"

"$EW" watch -d "$T/live.db" -i lo -f "udp and port $PORT" --retain 2s 2> "$T/log" &
PID=$!
sleep 1
lo_dns_send "$PORT" old.retain.example.test
sleep 1.5
# committed (watch commits every second): the old query is there
"$EW" events -d "$T/live.db" --json > "$T/before"
grep -q '"qname":"old.retain.example.test"' "$T/before" && ok || bad "the first query was not stored: $(cat "$T/before")"
sleep 2.5
lo_dns_send "$PORT" new1.retain.example.test new2.retain.example.test
sleep 1.5

watch_stop
grep -q "keeping the events of the last 2s of packet time" "$T/log" && ok || bad "no retention line: $(cat "$T/log")"
grep -q "3 events stored, 1 older ones deleted (--retain 2s)" "$T/log" && ok ||
	bad "the log does not count the deleted event: $(cat "$T/log")"
"$EW" events -d "$T/live.db" --json > "$T/events"
grep -q '"qname":"old.retain.example.test"' "$T/events" && bad "the old query was kept: $(cat "$T/events")" || ok
grep -q '"qname":"new1.retain.example.test"' "$T/events" && ok || bad "new1 not kept: $(cat "$T/events")"
grep -q '"qname":"new2.retain.example.test"' "$T/events" && ok || bad "new2 not kept: $(cat "$T/events")"
n=$(wc -l < "$T/events")
[ "$n" -eq 2 ] && ok || bad "$n events kept, want 2"
expired=$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT value FROM stats WHERE name = 'store.expired'\").fetchone()[0])" "$T/live.db")
[ "$expired" = 1 ] && ok || bad "stats store.expired is $expired, want 1"
live_done
