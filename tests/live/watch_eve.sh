#!/bin/sh
# watch_eve.sh - `egresswatch watch --eve FILE`: events reach the file while
# the watch runs; an alert's line comes again as the alert grows; SIGHUP
# reopens the file after it is moved away (log rotation); at the end the
# lines of both files are, without a gap or a repeat, what `events --json`
# lists, and each alert's last line is what `alerts --json` lists with
# "kind":"alert"; the counts are in the log and the stats table.
#   watch_eve.sh EGRESSWATCH
# Traffic: DNS queries from 127.0.0.1 to 127.0.0.2:53 from a port of the
# test's own (the BPF filter keeps only those), sent by python3 over loopback
# only; metadata.google.internal raises metadata_probe under the built-in
# rules. Needs root (CAP_NET_RAW); skips (77) without.
set -u
EW=$1
. "$(dirname "$0")/../lib/live.sh"
live_init
PORT=$((20000 + ($$ + 11) % 20000))

# The file is checked before anything is captured: an unwritable one is a
# runtime error that names it.
"$EW" watch -d "$T/bad.db" -i lo --eve "$T/no/such/dir.json" 2> "$T/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "$T/no/such/dir.json: cannot open for --eve: No such file or directory" "$T/err" &&
	ok || bad "--eve into a missing folder: exit $rc, $(cat "$T/err")"

"$EW" watch -d "$T/live.db" -i lo -f "udp and port $PORT" --eve "$T/eve.json" 2> "$T/log" &
PID=$!
sleep 1
lo_dns_send "$PORT" a.eve.example.test metadata.google.internal
sleep 2.5
# written while the watch runs (a pass a second after each commit)
grep -q '"qname":"a.eve.example.test"' "$T/eve.json" && ok || bad "the first query is not in the file yet: $(cat "$T/eve.json")"
grep -q '"kind":"alert","class":"metadata_probe"' "$T/eve.json" && ok ||
	bad "the metadata_probe alert is not in the file yet: $(cat "$T/eve.json")"

# the alert grows: a second probe a second and more later
lo_dns_send "$PORT" metadata.google.internal
sleep 2.5
# rotation: move the file away, SIGHUP, and the next lines go to a new one
mv "$T/eve.json" "$T/eve.json.1"
kill -HUP "$PID"
sleep 1.5
lo_dns_send "$PORT" b.eve.example.test
sleep 2.5
watch_stop

grep -q "reopened $T/eve.json" "$T/log" && ok || bad "no reopen line: $(cat "$T/log")"
grep -q '"qname":"b.eve.example.test"' "$T/eve.json" && ok || bad "the query after SIGHUP is not in the new file: $(cat "$T/eve.json")"
grep -q '"qname":"b.eve.example.test"' "$T/eve.json.1" && bad "the query after SIGHUP went to the moved file" || ok
cat "$T/eve.json.1" "$T/eve.json" > "$T/all"
grep -v '"kind":"alert"' "$T/all" > "$T/eve_events"
"$EW" events -d "$T/live.db" --json > "$T/events"
[ "$(wc -l < "$T/events")" -eq 4 ] && ok || bad "want 4 events stored: $(cat "$T/events")"
cmp -s "$T/eve_events" "$T/events" && ok || bad "the files' events differ from events --json: $(diff "$T/eve_events" "$T/events")"
# every alert line, and the last one of each alert is its row as listed
grep '"kind":"alert"' "$T/all" > "$T/eve_alerts"
n=$(grep -c '"class":"metadata_probe"' "$T/eve_alerts")
[ "$n" -ge 2 ] && ok || bad "the growing alert was written $n times, want 2 or more: $(cat "$T/eve_alerts")"
grep -q '"count":1,' "$T/eve_alerts" && ok || bad "no line with the first count: $(cat "$T/eve_alerts")"
tail -n 1 "$T/eve_alerts" | sed 's/^\({"id":[0-9]*,\)"kind":"alert",/\1/' > "$T/last_alert"
"$EW" alerts -d "$T/live.db" --json > "$T/alerts"
cmp -s "$T/last_alert" "$T/alerts" && ok || bad "the last alert line is not the alert's row: $(cat "$T/last_alert") vs $(cat "$T/alerts")"
grep -q '"count":2,' "$T/alerts" && ok || bad "the alert did not grow to 2: $(cat "$T/alerts")"
grep -q "eve.* 4 events and $n alert lines written to $T/eve.json, 0 lines lost, 0 events deleted" "$T/log" && ok ||
	bad "the stop line does not count the lines: $(cat "$T/log")"
v=$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT value FROM stats WHERE name = 'eve.events'\").fetchone()[0])" "$T/live.db")
[ "$v" = 4 ] && ok || bad "stats eve.events is $v, want 4"
live_done
