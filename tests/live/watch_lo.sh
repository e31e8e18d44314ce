#!/bin/sh
# watch_lo.sh - `egresswatch watch` on the loopback interface: live capture,
# a BPF filter, SIGHUP reloading the rules (a bad file keeps the old rules and
# says why), SIGTERM flushing the store and exiting 0.
#   watch_lo.sh EGRESSWATCH
# Traffic: two DNS queries from 127.0.0.1 to 127.0.0.2:53 from a port of the test's own (the
# BPF filter keeps only those), sent by python3 over loopback only. Needs root (CAP_NET_RAW); skips (77) without.
set -u
EW=$1
. "$(dirname "$0")/../lib/live.sh"
live_init
PORT=$((20000 + $$ % 20000))

printf 'sandbox:\n  networks: [127.0.0.1/32]\nallow:\n  resolvers: ["127.0.0.53"]\n' > "$T/rules.yaml"
"$EW" watch -c "$T/rules.yaml" -d "$T/live.db" -i lo -f "udp and port $PORT" 2> "$T/log" &
PID=$!
sleep 1
lo_dns_send "$PORT" before.reload.example.test

# A bad file: the old rules stay, and the log says why, naming file and line.
printf 'sandbox:\n  networks: [127.0.0.0/33]\n' > "$T/rules.yaml"
kill -HUP "$PID"
sleep 0.5
grep -q "reload failed, keeping the rules in force: $T/rules.yaml:2:" "$T/log" && ok ||
	bad "bad rules on SIGHUP not reported: $(cat "$T/log")"
kill -0 "$PID" 2>/dev/null && ok || bad "watch died on a bad rules file"
# A good file is taken.
printf 'sandbox:\n  networks: [127.0.0.1/32]\nallow:\n  resolvers: ["127.0.0.2"]\n' > "$T/rules.yaml"
kill -HUP "$PID"
sleep 0.5
grep -q "reloaded $T/rules.yaml" "$T/log" && ok || bad "good rules on SIGHUP not reloaded: $(cat "$T/log")"
lo_dns_send "$PORT" after.reload.example.test
sleep 1.5

watch_stop
"$EW" events -d "$T/live.db" --json > "$T/events"
grep -q '"qname":"before.reload.example.test"' "$T/events" && ok || bad "first query not stored"
grep -q '"qname":"after.reload.example.test"' "$T/events" && ok || bad "query after reload not stored"
n=$(wc -l < "$T/events")
[ "$n" -eq 2 ] && ok || bad "the filter let through $n events, want 2"
"$EW" alerts -d "$T/live.db" --json > "$T/alerts"
# Before the reload 127.0.0.2 was not an allowed resolver; after it, it is.
grep -q '"class":"udp_egress"' "$T/alerts" && ok || bad "DNS to a resolver not allowed raised no udp_egress: $(cat "$T/alerts")"
[ "$(grep -c '"class":"udp_egress"' "$T/alerts")" -eq 1 ] && grep -q '"count":1,' "$T/alerts" && ok ||
	bad "the reloaded rules did not allow the resolver: $(cat "$T/alerts")"
# The stop's account: two packets past the filter, both stored, the one
# alert (on lo libpcap's received count has each packet twice, once each
# way, the outgoing copy skipped).
grep -q "\[capture\] 2 packets decoded; the kernel received [24] and dropped 0 (0 by the interface); 2 events stored, 0 dropped (queue full); alerts: 1 (udp_egress 1)\$" "$T/log" &&
	ok || bad "no stop summary: $(cat "$T/log")"
live_done
