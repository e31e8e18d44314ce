#!/bin/sh
# watch_disk_full.sh - `egresswatch watch` on a database whose disk fills up
# and then has room again: the capture goes on, the rows that cannot be
# written are counted, the log says when the writes began to fail and when
# they succeeded again (with the rows lost in between), the events after
# that are stored, and the watch exits 1 at SIGTERM because rows were lost.
#   watch_disk_full.sh EGRESSWATCH
# The database is on a 4 MiB tmpfs mounted in a mount namespace of the
# test's own (unshare -m), so nothing is left mounted whatever happens.
# Traffic: DNS queries from 127.0.0.1 to 127.0.0.2:53 from a port of the
# test's own (the BPF filter keeps only those), over loopback only. Needs
# root (CAP_NET_RAW, CAP_SYS_ADMIN); skips (77) without.
set -u
EW=$1
if [ -z "${EW_IN_MOUNT_NS:-}" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
	command -v unshare >/dev/null || { echo "SKIP: no unshare"; exit 77; }
	EW_IN_MOUNT_NS=1 exec unshare -m --propagation private sh "$0" "$@"
fi
. "$(dirname "$0")/../lib/live.sh"
live_init
PORT=$((20000 + ($$ + 23) % 20000))
mkdir "$T/disk"
mount -t tmpfs -o size=4m tmpfs "$T/disk" || { echo "SKIP: cannot mount a tmpfs"; exit 77; }

# N queries, NAME-1.example.test ... NAME-N.example.test
send() {
	names=$(seq -f "$1-%g.example.test" 1 "$2" | tr '\n' ' ')
	# shellcheck disable=SC2086
	lo_dns_send "$PORT" $names
}
events_named() {
	sqlite3 -readonly "$T/disk/w.db" "SELECT count(*) FROM events_dns WHERE name LIKE '$1-%'"
}

"$EW" watch -d "$T/disk/w.db" -i lo -f "udp and port $PORT" 2> "$T/log" &
PID=$!
sleep 1
send before 50
sleep 2.5
[ "$(events_named before)" -eq 50 ] && ok || bad "before the disk filled: $(events_named before) of 50 stored"

# Fill the disk, then send until a commit fails (the WAL may have room for a
# batch or two); at most 20 rounds.
dd if=/dev/zero of="$T/disk/filler" bs=64k 2>/dev/null
i=0
while [ $i -lt 20 ] && ! grep -q "rows are lost until a write succeeds" "$T/log"; do
	i=$((i + 1))
	send "full$i" 500
	sleep 1.2
done
grep -q "\[store\] $T/disk/w.db: .*: database or disk is full (rows are lost until a write succeeds; counted in store.errors)" "$T/log" &&
	ok || bad "no line for the first failed write after $i rounds: $(cat "$T/log")"
kill -0 "$PID" 2>/dev/null && ok || bad "the watch stopped on a full disk"

# Room again: the next commit succeeds, says so, and the events after it are
# stored.
rm -f "$T/disk/filler"
send after 50
sleep 2.5
grep -q "\[store\] $T/disk/w.db: writing again, after [0-9]* s of failed writes and [1-9][0-9]* rows lost" "$T/log" &&
	ok || bad "no line for the writes succeeding again: $(cat "$T/log")"
[ "$(events_named after)" -eq 50 ] && ok || bad "after room was made: $(events_named after) of 50 stored"
lost=$(sed -n 's/.*writing again, after [0-9]* s of failed writes and \([0-9]*\) rows lost.*/\1/p' "$T/log" | head -n 1)
full=$(sqlite3 -readonly "$T/disk/w.db" "SELECT count(*) FROM events_dns WHERE name LIKE 'full%'")
# every query sent while the disk was full was stored or counted lost (the
# lost rows include the counters' rows, so lost may be larger)
[ -n "$lost" ] && [ $((full + lost)) -ge $((i * 500)) ] && [ "$lost" -gt 0 ] && ok ||
	bad "of $((i * 500)) queries while full, $full stored and ${lost:-?} rows lost"

kill -TERM "$PID"
wait "$PID"
rc=$?
PID=
[ "$rc" -eq 1 ] && ok || bad "watch exited $rc at SIGTERM after losing rows, want 1"
grep -q "\[store\] $lost rows could not be written in this run; last: $T/disk/w.db" "$T/log" && ok || bad "no total at the stop: $(cat "$T/log")"
grep -q "could not write the last batch" "$T/log" && bad "the stop blames the last batch" || ok
umount "$T/disk"
live_done
