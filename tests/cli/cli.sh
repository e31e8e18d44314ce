#!/bin/sh
# cli.sh - the command line's contract (architecture.md section 2): exit
# statuses, one-line errors naming the file, --help on every subcommand,
# several files in order, stdin, and a capture damaged part-way.
#   cli.sh EGRESSWATCH PCAPS_DIR
set -u
EW=$1
PCAPS=$2
T=$(mktemp -d /tmp/ew-cli.XXXXXX)
# (the read-only mount below is undone first, on any exit)
trap 'umount "$T/romnt" 2>/dev/null; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect STATUS STDERR-PATTERN -- command...
expect() {
	want=$1 pat=$2
	shift 3
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	if [ "$got" != "$want" ]; then
		bad "$* exited $got, want $want: $(head -c 300 "$T/err")"
	elif [ -n "$pat" ] && ! grep -q -- "$pat" "$T/err"; then
		bad "$* stderr lacks '$pat': $(head -c 300 "$T/err")"
	else
		ok
	fi
}

# Usage and help.
expect 2 "usage" -- "$EW"
expect 0 "" -- "$EW" --help
expect 2 "unknown command 'frobnicate'" -- "$EW" frobnicate
for c in replay watch serve events alerts version; do  # rules --help is checked below
	expect 0 "" -- "$EW" "$c" --help
	grep -q "usage: egresswatch $c" "$T/out" && ok || bad "$c --help does not show its usage"
done
# The overview (egresswatch --help) lists each command with the options its
# own --help shows, no more and no fewer.
"$EW" --help > "$T/top"
opts_of() { grep -oE -- '(^|[[ ])--?[a-zA-Z][a-z-]*' | tr -d '[ ' | sort -u; }
for c in replay watch serve events alerts; do
	awk -v c="$c" '$1 == c { on = 1; print; next } on && /^         [^ ]/ { print; next } { on = 0 }' \
		"$T/top" | sed "s/^  $c//" | opts_of > "$T/top_$c"
	"$EW" "$c" --help | awk '/^$/ { exit } { print }' | sed "s/^usage: egresswatch $c//" |
		opts_of > "$T/own_$c"
	[ -s "$T/own_$c" ] && cmp -s "$T/top_$c" "$T/own_$c" && ok ||
		bad "egresswatch --help and $c --help list different options: $(diff "$T/top_$c" "$T/own_$c" | tr '\n' ' ')"
done
expect 2 "no capture file" -- "$EW" replay -d "$T/x.db"
expect 2 "no interface" -- "$EW" watch -d "$T/x.db"
expect 2 "--kind bogus" -- "$EW" events -d "$T/x.db" --kind bogus
expect 2 "--limit -3" -- "$EW" events -d "$T/x.db" --limit -3
expect 2 "--class bogus: want one of the classes" -- "$EW" alerts -d "$T/x.db" --class bogus
expect 0 "" -- "$EW" version
# version: ours, the schema (as many as schema/ has migrations), and each
# library's; --version the first line alone.
nmig=$(ls "$PCAPS/../schema/"[0-9]*.sql | wc -l)
grep -q "^  database schema $nmig\$" "$T/out" && ok || bad "version's schema is not $nmig: $(cat "$T/out")"
for lib in "libpcap version 1\." "ldns 1\." "SQLite 3\." "libmicrohttpd 0\.9\." "jansson 2\." \
	"libyaml 0\." "libpsl 0\." "zlib 1\..*, zstd 1\." "OpenSSL 3\." "libsodium 1\." "allocator: "; do
	grep -q "^  $lib" "$T/out" && ok || bad "version lacks $lib: $(cat "$T/out")"
done
expect 0 "" -- "$EW" --version
[ "$(cat "$T/out")" = "$("$EW" version | head -n 1)" ] && grep -q "^egresswatch [0-9]" "$T/out" && ok ||
	bad "--version: $(cat "$T/out")"

# Input errors name the file and exit 2.
expect 2 "replay: $T/missing.pcap: No such file or directory\$" -- "$EW" replay -d "$T/a.db" "$T/missing.pcap"
# ... checked before anything is opened: no database is created, no summary
# printed, and only the one line; a later file is checked too.
[ ! -e "$T/a.db" ] && ok || bad "a missing capture left a database behind"
[ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" -eq 1 ] && ok || bad "a missing capture printed more: $(cat "$T/out" "$T/err")"
expect 2 "replay: $T/missing.pcap: No such file or directory\$" -- "$EW" replay -d "$T/a.db" "$PCAPS/demo.pcap" "$T/missing.pcap"
[ ! -e "$T/a.db" ] && ok || bad "a missing second capture left a database behind"
# ... and a first file that is not a capture (or too short for a header):
# nothing can be read, so no database either; with --merge, any such file.
# A later file that is not one ends the run there, what came before kept.
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$T/passwd"
printf 'ab' > "$T/short.pcap"
expect 2 "^egresswatch replay: $T/passwd: unknown file format\$" -- "$EW" replay -d "$T/a.db" "$T/passwd"
[ ! -e "$T/a.db" ] && ok || bad "a first file that is not a capture left a database behind"
expect 2 "^egresswatch replay: $T/short.pcap: truncated dump file; tried to read 4 file header bytes, only got 2\$" -- \
	"$EW" replay -d "$T/a.db" "$T/short.pcap"
[ ! -e "$T/a.db" ] && ok || bad "a first file too short for a header left a database behind"
expect 2 "^egresswatch replay: $T/passwd: unknown file format\$" -- "$EW" replay -d "$T/a.db" --merge "$PCAPS/demo.pcap" "$T/passwd"
[ ! -e "$T/a.db" ] && ok || bad "replay --merge with a file that is not a capture left a database behind"
expect 2 "^egresswatch replay: $T/passwd: unknown file format\$" -- "$EW" replay -q -d "$T/a.db" "$PCAPS/demo.pcap" "$T/passwd"
[ "$("$EW" events -d "$T/a.db" --json | wc -l)" -eq 217 ] && ok || bad "the capture before a file that is not one was not kept"
rm -f "$T/a.db" "$T/a.db-wal" "$T/a.db-shm"
# --host and --src take an IPv4-mapped IPv6 address as its IPv4 address.
"$EW" replay -q -d "$T/mapped.db" "$PCAPS/demo.pcap"
for h in 10.99.0.10 ::ffff:10.99.0.10 ::ffff:a63:a; do
	[ "$("$EW" events -d "$T/mapped.db" --host "$h" | wc -l)" -eq 217 ] &&
		[ "$("$EW" alerts -d "$T/mapped.db" --src "$h" | wc -l)" -eq 2 ] && ok ||
		bad "--host/--src $h: $("$EW" events -d "$T/mapped.db" --host "$h" | wc -l) events"
done
# A directory stands for its capture files in `ls -v` order: a fixture cut
# into 12 files named as tcpdump -C names them (trace, trace1, ..., trace11,
# where plain name order would put trace10 before trace2), one of them
# gzipped, with a README, a subdirectory and a dot file beside them, replays
# as the whole file (no order warning); the others are named as skipped.
mkdir -p "$T/ring/sub"
python3 - "$(dirname "$0")/../pcap" "$PCAPS/dns_tcp_long.pcap" "$T/ring/trace" <<'PYEOF2'
import sys
sys.path.insert(0, sys.argv[1])
import pcapfile
p = pcapfile.read(open(sys.argv[2], "rb").read())
k = 12
per = (len(p.raw) + k - 1) // k
for i in range(k):
    with open(sys.argv[3] + (str(i) if i else ""), "wb") as f:
        f.write(p.head + b"".join(p.raw[i * per:(i + 1) * per]))
PYEOF2
gzip "$T/ring/trace7"
printf 'captures of the incident\n' > "$T/ring/README"
printf 'x' > "$T/ring/.notes"
rm -f "$T/whole.db" "$T/ring.db"
"$EW" replay -q -d "$T/whole.db" "$PCAPS/dns_tcp_long.pcap"
expect 0 "" -- "$EW" replay -d "$T/ring.db" "$T/ring"
grep -q "^egresswatch replay: 12 files, " "$T/out" && ok || bad "directory replay summary: $(head -1 "$T/out")"
[ "$(grep -c "skipped" "$T/err")" -eq 2 ] && grep -q "^egresswatch replay: $T/ring/README: skipped: not a capture file" "$T/err" &&
	grep -q "^egresswatch replay: $T/ring/sub: skipped: a directory (not read recursively)\$" "$T/err" &&
	! grep -q "warning" "$T/err" && ok || bad "directory replay messages: $(cat "$T/err")"
[ "$("$EW" events -d "$T/ring.db" --json)" = "$("$EW" events -d "$T/whole.db" --json)" ] &&
	[ -n "$("$EW" events -d "$T/whole.db" --json)" ] && ok || bad "the directory's events differ from the whole file's"
mkdir "$T/empty"
expect 2 "^egresswatch replay: $T/empty: no capture file in it (pcap, pcapng, gzip or zstd)\$" -- \
	"$EW" replay -d "$T/a.db" "$T/empty"
[ ! -e "$T/a.db" ] && [ ! -s "$T/out" ] && ok || bad "an empty directory left a database or a summary behind"
printf 'this is not a capture file at all\n' > "$T/text.pcap"
expect 2 "$T/text.pcap" -- "$EW" replay -d "$T/a.db" "$T/text.pcap"
[ ! -s "$T/out" ] && ok || bad "a run that read no packet printed a summary: $(cat "$T/out")"
# An interface that does not exist: one line, said once, exit 1, and no
# database created (as root; without, libpcap refuses for want of rights).
if [ "$(id -u)" -eq 0 ]; then
	expect 1 "^egresswatch watch: ewnosuch0: No such device exists\$" -- "$EW" watch -i ewnosuch0 -d "$T/w.db"
	[ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -e "$T/w.db" ] && ok || bad "missing interface: $(cat "$T/err"; ls "$T")"
fi
# An unsupported link type (802.11 = 105) is named.
printf '\324\303\262\241\002\000\004\000\000\000\000\000\000\000\000\000\377\377\000\000\151\000\000\000' > "$T/wifi.pcap"
expect 2 "unsupported link type IEEE802_11 (105)" -- "$EW" replay -d "$T/a.db" "$T/wifi.pcap"
# A database that cannot be opened is a runtime failure naming it.
expect 1 "$T/nodir/x.db" -- "$EW" replay -d "$T/nodir/x.db" "$PCAPS/dns_basic.pcap"
expect 1 "^egresswatch events: $T/nothere.db: No such file or directory\$" -- "$EW" events -d "$T/nothere.db"
expect 1 "^egresswatch alerts: $T/nothere.db: No such file or directory\$" -- "$EW" alerts -d "$T/nothere.db"
# Another program's SQLite database is not written into, and not read.
rm -f "$T/other.db"
sqlite3 "$T/other.db" "CREATE TABLE notes(x); INSERT INTO notes VALUES (1)"
expect 1 "^egresswatch replay: $T/other.db: not an egresswatch database (it holds 1 other table and no egresswatch schema); give a new file\$" -- \
	"$EW" replay -d "$T/other.db" "$PCAPS/dns_basic.pcap"
[ "$(sqlite3 "$T/other.db" "SELECT group_concat(name) FROM sqlite_master")" = notes ] &&
	[ "$(sqlite3 "$T/other.db" "PRAGMA user_version")" = 0 ] && ok || bad "replay wrote into another program's database"
expect 1 "^egresswatch events: $T/other.db: not an egresswatch database (no schema)\$" -- "$EW" events -d "$T/other.db"
# An empty SQLite file (no table yet) is taken, and given the schema.
rm -f "$T/empty.db"
sqlite3 "$T/empty.db" "PRAGMA user_version" >/dev/null
expect 0 "" -- "$EW" replay -q -d "$T/empty.db" "$PCAPS/dns_basic.pcap"

# A database on read-only media (an evidence copy, a read-only mount: as
# root a read-only bind mount, else a directory without write permission,
# which root would ignore), closed cleanly: SQLite cannot make the -shm its
# WAL mode reads through, so it is read as immutable; events, alerts and
# serve work. With a -wal file beside it (rows not in the file yet), the
# message says what is wrong.
mkdir -p "$T/rosrc" "$T/romnt"
"$EW" replay -q -d "$T/rosrc/ev.db" "$PCAPS/demo.pcap"
if [ "$(id -u)" = 0 ]; then
	mount --bind "$T/rosrc" "$T/romnt" && mount -o remount,bind,ro "$T/romnt" && ro="$T/romnt"
else
	chmod 555 "$T/rosrc" && ro="$T/rosrc"
fi
if [ -n "${ro:-}" ] && ! touch "$ro/probe" 2>/dev/null; then
	expect 0 "" -- "$EW" events -d "$ro/ev.db" --json
	[ "$(wc -l < "$T/out")" -eq 217 ] && ok || bad "events on read-only media: $(wc -l < "$T/out") lines"
	expect 0 "" -- "$EW" alerts -d "$ro/ev.db"
	[ "$(wc -l < "$T/out")" -eq 2 ] && ok || bad "alerts on read-only media: $(cat "$T/out")"
	"$EW" serve -d "$ro/ev.db" --api 127.0.0.1:0 > "$T/out" 2> "$T/err" &
	sv=$!
	i=0
	while ! grep -q "serving API on" "$T/err" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$T/err")
	n=$(curl -s --max-time 5 "http://127.0.0.1:${port:-1}/api/v1/alerts" | grep -o '"class"' | wc -l)
	kill "$sv"
	wait "$sv"
	[ "$n" -eq 2 ] && ok || bad "serve on read-only media: $n alerts: $(cat "$T/err")"
	[ ! -e "$ro/ev.db-wal" ] && [ ! -e "$ro/ev.db-shm" ] && ok || bad "reading made files on read-only media"
else
	echo "cli: read-only media not checked (no read-only mount or directory)"
fi
[ "$(id -u)" = 0 ] && umount "$T/romnt"
chmod 755 "$T/rosrc"
# ... with a -wal file beside it: refused, saying why
cp "$T/rosrc/ev.db" "$T/rosrc/w.db"
echo "not empty" > "$T/rosrc/w.db-wal"
ro=
if [ "$(id -u)" = 0 ]; then
	mount --bind "$T/rosrc" "$T/romnt" && mount -o remount,bind,ro "$T/romnt" && ro="$T/romnt"
else
	chmod 555 "$T/rosrc" && ro="$T/rosrc"
fi
if [ -n "$ro" ] && ! touch "$ro/probe" 2>/dev/null; then
	expect 1 "^egresswatch events: $ro/w.db: cannot read: SQLite cannot make the database's -shm file (a read-only directory or mount?), and its -wal file holds rows not yet in the database: copy" -- \
		"$EW" events -d "$ro/w.db"
fi
[ "$(id -u)" = 0 ] && umount "$T/romnt"
chmod 755 "$T/rosrc"

# Output that cannot be written (a full disk): the message names stdout, not
# the database, and the status is 1; table and JSON alike.
for c in events alerts; do
	for j in "" --json; do
		"$EW" $c -d "$T/rosrc/ev.db" $j > /dev/full 2> "$T/err"
		rc=$?
		[ "$rc" -eq 1 ] && [ "$(cat "$T/err")" = "egresswatch $c: stdout: No space left on device" ] && ok ||
			bad "$c $j > /dev/full: exit $rc: $(cat "$T/err")"
	done
done

# Several files in order, and stdin.
expect 0 "" -- "$EW" replay -q -d "$T/two.db" "$PCAPS/dns_basic.pcap" "$PCAPS/dns_tcp.pcap"
"$EW" events -d "$T/two.db" --json > "$T/two.json"
"$EW" replay -q -d "$T/b1.db" "$PCAPS/dns_basic.pcap" && "$EW" replay -q -d "$T/b1.db" "$PCAPS/dns_tcp.pcap"
"$EW" events -d "$T/b1.db" --json > "$T/b1.json"
cmp -s "$T/two.json" "$T/b1.json" && ok || bad "two files in one run differ from two runs in order"
# Files out of time order are replayed as given, with a warning naming both.
expect 0 "dns_tcp.pcap starts 3.271000 s before the latest packet of .*/dns_basic.pcap: files are replayed in the order given, not merged by time (--merge merges them)\$" -- \
	"$EW" replay -q -d "$T/two.db" "$PCAPS/dns_basic.pcap" "$PCAPS/dns_tcp.pcap"
[ "$(wc -l <"$T/err")" -eq 1 ] && ok || bad "out-of-order warning: $(cat "$T/err")"
expect 0 "" -- "$EW" replay -q --no-store "$PCAPS/dns_tcp.pcap" "$PCAPS/dns_tcp.pcap"
grep -q "dns_tcp.pcap starts 0.210100 s before the latest packet of" "$T/err" && ok ||
	bad "the same file twice is not warned about: $(cat "$T/err")"
expect 0 "" -- "$EW" replay -q --no-store "$PCAPS/demo.pcap"
[ ! -s "$T/err" ] && ok || bad "one file warns: $(cat "$T/err")"
# Packet time going back more than a minute (a capture replayed after a
# later one, two captures joined in one file) starts flows, detector windows
# and alert rows over (core_packet): the alerts and events are those of the
# captures replayed in time order, where they would otherwise fold into the
# later capture's rows and wait for its windows to end. (Two days apart:
# what a detector remembers longer than the gap, dns_tunnel's day budget of
# a domain, starts over too.)
python3 - "$(dirname "$0")/../pcap" "$PCAPS/demo.pcap" "$T" <<'PYEOF2'
import struct, sys
sys.path.insert(0, sys.argv[1])
import pcapfile
p = pcapfile.read(open(sys.argv[2], "rb").read())
e = "<" if p.head[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
def shifted(days):
    return [struct.pack(e + "I", struct.unpack(e + "I", r[:4])[0] + days * 86400) + r[4:]
            for r in p.raw]
early, late = shifted(-2), shifted(2)
# demo.pcap with one packet amid the tunnel's queries stamped two days early
glitch = list(p.raw)
glitch[120] = early[120]
for name, recs in (("early", early), ("late", late), ("joined", late + early),
                   ("glitch", glitch)):
    open("%s/%s.pcap" % (sys.argv[3], name), "wb").write(p.head + b"".join(recs))
PYEOF2
# alerts and events of a database, without their ids (given in the order
# rows are made), sorted
rows_of() {
	{ "$EW" alerts -d "$1" --json; "$EW" events -d "$1" --json; } |
		python3 -c 'import json, sys
for l in sorted(json.dumps({k: v for k, v in json.loads(l).items() if k != "id"}, sort_keys=True) for l in sys.stdin): print(l)'
}
R="$PCAPS/../rules/demo.yaml"
rm -f "$T/inorder.db" "$T/back.db" "$T/joined.db" "$T/pair.db"
"$EW" replay -q -c "$R" -d "$T/inorder.db" "$T/early.pcap" "$PCAPS/demo.pcap" "$T/late.pcap"
expect 0 "\[core\] packet time went back 345625 s, from 2026-12-01T10:00:25.878050Z to 2026-11-27T10:00:00.000000Z: flows, detector windows and alert rows start over\$" -- \
	"$EW" replay -c "$R" -d "$T/back.db" "$T/late.pcap" "$T/early.pcap" "$PCAPS/demo.pcap"
grep -q "^  flows: .*; packet time went back: 1 restarts (flows, windows and alert rows began afresh), 0 packets folded\$" "$T/out" &&
	ok || bad "restart summary: $(grep flows: "$T/out")"
n=$("$EW" alerts -d "$T/inorder.db" | wc -l)
[ "$n" -eq 15 ] && [ "$(rows_of "$T/inorder.db")" = "$(rows_of "$T/back.db")" ] && ok ||
	bad "captures out of time order give other alerts or events than in order ($n alerts in order)"
"$EW" replay -q -c "$R" -d "$T/pair.db" "$T/early.pcap" "$T/late.pcap"
# part-way through a file, a step back is one once 8 packets in a row
# (CORE_CLOCK_BACK_RUN) confirm it: the first 7 fold in
expect 0 "packet time went back 345624 s, from 2026-12-01T10:00:25.878050Z to 2026-11-27T10:00:01.711197Z" -- \
	"$EW" replay -c "$R" -d "$T/joined.db" "$T/joined.pcap"
grep -q "; packet time went back: 1 restarts (flows, windows and alert rows began afresh), 7 packets folded\$" "$T/out" &&
	[ "$(rows_of "$T/pair.db")" = "$(rows_of "$T/joined.db")" ] && ok ||
	bad "a capture whose time steps back part-way gives other alerts or events than its halves in order: $(grep flows: "$T/out")"
# a lone packet with a wrong time is not a step: nothing starts over, and
# the tunnel it falls amid stays one alert
rm -f "$T/glitch.db" "$T/demo_r.db"
expect 0 "" -- "$EW" replay -c "$R" -d "$T/glitch.db" "$T/glitch.pcap"
"$EW" replay -q -c "$R" -d "$T/demo_r.db" "$PCAPS/demo.pcap"
[ ! -s "$T/err" ] && grep -q "; packet time went back: 0 restarts (flows, windows and alert rows began afresh), 1 packets folded\$" "$T/out" &&
	[ "$("$EW" alerts -d "$T/glitch.db" --json)" = "$("$EW" alerts -d "$T/demo_r.db" --json)" ] && ok ||
	bad "a lone packet stamped two days early changes the alerts: $(grep flows: "$T/out") $(cat "$T/err")"
expect 0 "" -- sh -c "\"$EW\" replay -q -d \"$T/stdin.db\" - < \"$PCAPS/dns_basic.pcap\""
"$EW" replay -q -d "$T/file.db" "$PCAPS/dns_basic.pcap"
[ "$("$EW" events -d "$T/stdin.db" --json)" = "$("$EW" events -d "$T/file.db" --json)" ] && ok ||
	bad "stdin replay differs from file replay"
# Standard input is one stream: '-' twice is a usage error, with or without --merge.
for m in "" --merge; do
	expect 2 "^egresswatch replay: '-' (standard input) is given more than once\$" -- \
		sh -c "\"$EW\" replay -q $m -d \"$T/twice.db\" - - < \"$PCAPS/demo.pcap\""
done
[ ! -e "$T/twice.db" ] && ok || bad "'-' twice made a database"
# From a pipe (no seeking back over the first bytes): pcap and pcapng.
for f in dns_basic.pcap link_multi.pcapng; do
	rm -f "$T/pipe.db" "$T/pfile.db"
	expect 0 "" -- sh -c "cat \"$PCAPS/$f\" | \"$EW\" replay -q -d \"$T/pipe.db\" -"
	"$EW" replay -q -d "$T/pfile.db" "$PCAPS/$f"
	[ "$("$EW" events -d "$T/pipe.db" --json)" = "$("$EW" events -d "$T/pfile.db" --json)" ] &&
		[ -n "$("$EW" events -d "$T/pfile.db" --json)" ] && ok || bad "$f from a pipe differs from the file"
done

# --merge: captures of one exchange taken side by side (every third packet
# in one file, the rest in the other, given in the wrong order) replay as
# the whole capture, byte for byte: TCP reassembly (dns_tcp), fragments
# (ip_frag) and the policy's flows and outcomes (egress_paths under the
# detection suite's sandbox) across the two files. Without --merge they do not.
for f in egress_paths dns_tcp ip_frag; do
	python3 - "$(dirname "$0")/../pcap" "$PCAPS/$f.pcap" "$T/$f" <<'PYEOF2'
import sys
sys.path.insert(0, sys.argv[1])
import pcapfile
p = pcapfile.read(open(sys.argv[2], "rb").read())
for part, keep in (("a", lambda k: k % 3 == 0), ("b", lambda k: k % 3 != 0)):
    open("%s_%s.pcap" % (sys.argv[3], part), "wb").write(
        p.head + b"".join(r for k, r in enumerate(p.raw) if keep(k)))
PYEOF2
	S="$(dirname "$0")/../detect/sandbox.yaml"
	rm -f "$T/whole.db" "$T/merged.db" "$T/given.db"
	"$EW" replay -q -c "$S" -d "$T/whole.db" "$PCAPS/$f.pcap"
	expect 0 "" -- "$EW" replay -q --merge -c "$S" -d "$T/merged.db" "$T/${f}_b.pcap" "$T/${f}_a.pcap"
	[ ! -s "$T/err" ] && [ "$("$EW" events -d "$T/whole.db" --json)" = "$("$EW" events -d "$T/merged.db" --json)" ] &&
		[ "$("$EW" alerts -d "$T/whole.db" --json)" = "$("$EW" alerts -d "$T/merged.db" --json)" ] &&
		ok || bad "$f split in two and merged differs from the whole capture: $(cat "$T/err")"
	"$EW" replay -q -c "$S" -d "$T/given.db" "$T/${f}_b.pcap" "$T/${f}_a.pcap" 2>/dev/null
	[ "$("$EW" events -d "$T/whole.db" --json)$("$EW" alerts -d "$T/whole.db" --json)" != \
	  "$("$EW" events -d "$T/given.db" --json)$("$EW" alerts -d "$T/given.db" --json)" ] &&
		ok || bad "$f split in two replays as the whole even without --merge: the test shows nothing"
done
# ... two interfaces' rings of rotated files (dns_tcp_long's 600 messages,
# every other packet on each interface, each ring cut into 40 files, all in
# one directory, where `ls -v` puts one ring after the other): a file opens
# when the merge reaches its time, so 80 files merge as the whole capture
mkdir -p "$T/rings"
python3 - "$(dirname "$0")/../pcap" "$PCAPS/dns_tcp_long.pcap" "$T/rings" <<'PYEOF2'
import sys
sys.path.insert(0, sys.argv[1])
import pcapfile
p = pcapfile.read(open(sys.argv[2], "rb").read())
for side in (0, 1):
    recs = [r for k, r in enumerate(p.raw) if k % 2 == side]
    per = (len(recs) + 39) // 40
    for i in range(40):
        open("%s/if%d_%d.pcap" % (sys.argv[3], side, i), "wb").write(
            p.head + b"".join(recs[i * per:(i + 1) * per]))
PYEOF2
rm -f "$T/whole.db" "$T/rings.db"
"$EW" replay -q -d "$T/whole.db" "$PCAPS/dns_tcp_long.pcap"
expect 0 "" -- "$EW" replay -q --merge -d "$T/rings.db" "$T/rings"
[ ! -s "$T/err" ] && [ "$("$EW" events -d "$T/whole.db" --json)" = "$("$EW" events -d "$T/rings.db" --json)" ] &&
	[ "$("$EW" events -d "$T/rings.db" --json | wc -l)" -eq 600 ] &&
	ok || bad "two rings of 40 files merged differ from the whole capture: $(cat "$T/err")"
# ... a file damaged part-way loses what follows the damage, the others go
# on to their end (exit 1); more files overlapping in time than it keeps
# open ends the run (exit 2)
size=$(wc -c < "$T/dns_tcp_a.pcap")
head -c $((size - 20)) "$T/dns_tcp_a.pcap" > "$T/dns_tcp_cut.pcap"
expect 1 "dns_tcp_cut.pcap: .*; the packets before it are kept" -- \
	"$EW" replay -q --merge -d "$T/cutm.db" "$T/dns_tcp_b.pcap" "$T/dns_tcp_cut.pcap"
mkdir -p "$T/many"
for i in $(seq 1 65); do cp "$PCAPS/dns_basic.pcap" "$T/many/c$i.pcap"; done
expect 2 "^egresswatch replay: .*/many/c65.pcap: --merge keeps at most 64 files open at once, and more than that overlap in time here (merge them in groups with mergecap)\$" -- \
	"$EW" replay -q --merge -d "$T/many.db" "$T/many"
[ "$("$EW" events -d "$T/many.db" --json | wc -l)" -eq 0 ] && ok ||
	bad "--merge with too many files overlapping replayed some"

# SIGINT while the pipe is quiet (its writer has more to say, later): the
# replay stops at once, stores what it read and exits 1, instead of waiting
# for the writer to write or close (the reader thread is woken out of its
# read, sensor/instream.h). The writer sleeps 20 s; the replay must be gone
# within 5 s of the signal.
rm -f "$T/quiet.db" "$T/fifo"
mkfifo "$T/fifo"
(cat "$PCAPS/demo.pcap"; exec sleep 20) > "$T/fifo" &
writer=$!
"$EW" replay -q -d "$T/quiet.db" - < "$T/fifo" 2> "$T/err" &
ew=$!
sleep 1
kill -INT "$ew"
i=0
while kill -0 "$ew" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$ew" 2>/dev/null; then
	bad "replay of a quiet pipe still runs 5 s after SIGINT"
	kill -KILL "$ew"
fi
wait "$ew"
rc=$?
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
n=$("$EW" events -d "$T/quiet.db" --json | wc -l)
[ "$rc" -eq 1 ] && [ "$n" -eq 217 ] && grep -q "^egresswatch replay: interrupted; what was read is stored$" "$T/err" &&
	ok || bad "SIGINT on a quiet pipe: exit $rc, $n events (want 1, 217): $(cat "$T/err")"

# A SIGURG from outside while the reader waits on the pipe is not a stop:
# the read is made again and the whole capture replays (exit 0).
rm -f "$T/urg.db" "$T/fifo"
mkfifo "$T/fifo"
(sleep 1; cat "$PCAPS/demo.pcap") > "$T/fifo" &
writer=$!
"$EW" replay -q -d "$T/urg.db" - < "$T/fifo" 2> "$T/err" &
ew=$!
sleep 0.5
kill -URG "$ew"
wait "$ew"
rc=$?
wait "$writer" 2>/dev/null
n=$("$EW" events -d "$T/urg.db" --json | wc -l)
[ "$rc" -eq 0 ] && [ "$n" -eq 217 ] && ok ||
	bad "SIGURG from outside during a pipe replay: exit $rc, $n events (want 0, 217): $(cat "$T/err")"

# Two writers on one database: a replay that opened it (and took its alert
# ids from max(id) + 1) waits on a pipe while another replay writes its
# alerts; each one's alerts get rows of their own, none overwritten, with
# their counts.
rm -f "$T/clash.db"* "$T/fifo"
"$EW" replay -q -d "$T/clash.db" "$PCAPS/demo.pcap"
mkfifo "$T/fifo"
"$EW" replay -q -d "$T/clash.db" - < "$T/fifo" 2> "$T/err" &
ew=$!
exec 3> "$T/fifo"
sleep 1
"$EW" replay -q -d "$T/clash.db" "$PCAPS/demo.pcap" "$PCAPS/detect/icmptx.pcap" 2>> "$T/err"
rc2=$?
cat "$PCAPS/demo.pcap" >&3
exec 3>&-
wait "$ew"
rc=$?
"$EW" alerts -d "$T/clash.db" --json > "$T/clash.json"
n=$(wc -l < "$T/clash.json")
# demo.pcap's two alerts three times, icmptx.pcap's one (icmp_tunnel), each
# with its counts
dc=$(grep -c '"class":"dns_tunnel".*"count":73,' "$T/clash.json")
[ "$rc" -eq 0 ] && [ "$rc2" -eq 0 ] && [ "$n" -eq 7 ] && [ "$dc" -eq 3 ] &&
	[ "$(sqlite3 "$T/clash.db" "SELECT count(DISTINCT id) FROM alerts")" = 7 ] && ok ||
	bad "two writers: exit $rc and $rc2, $n alerts (want 7), $dc dns_tunnel of 73: $(cat "$T/err")"

# A capture cut part-way: keeps what came before, says where, exits 1.
size=$(wc -c < "$PCAPS/dns_basic.pcap")
head -c $((size - 40)) "$PCAPS/dns_basic.pcap" > "$T/cut.pcap"
expect 1 "$T/cut.pcap: .*after packet 27" -- "$EW" replay -d "$T/cut.db" "$T/cut.pcap"
grep -q "28 packets\|27 packets" "$T/out" && ok || bad "summary missing after a damaged file: $(cat "$T/out")"
n=$("$EW" events -d "$T/cut.db" --json | wc -l)
[ "$n" -eq 27 ] && ok || bad "a cut capture kept $n events, want 27"

# The summary, whole: every line but the first's time and rate is fixed by
# the input. dns_malformed.pcap gives the analyzers' line its bad counts.
rm -f "$T/sum.db"
expect 0 "" -- "$EW" replay -d "$T/sum.db" "$PCAPS/demo.pcap" "$PCAPS/dns_malformed.pcap"
sed -E '1s/ in [0-9.]+ s \([0-9.]+[kM]? packets\/s\)$/ in T s (R packets\/s)/' "$T/out" >"$T/sum"
cat >"$T/want" <<SUMEOF
egresswatch replay: 2 files, 254 packets, 32535 bytes in T s (R packets/s)
  decode:    1 truncated, 0 malformed, 0 not IP; fragments 0 reassembled, 0 expired
  layers:    link 254 ipv4 254 tcp 18 udp 229 (1 truncated) icmp 6
  flows:     120 created, 0 evicted
  events:    dns 229 (116 queries, 113 responses), http 2, tls 1, icmp 6; 9 malformed
  analyzers: dns 219 (1 truncated, 10 malformed), tls 1, quic 0, http 2, h2c 0, icmp 6
  detectors: egress 125, icmp_tunnel 6, metadata 2, rebind 0, dns_tunnel 229
  alerts:    2 (dns_tunnel 1, metadata_probe 1) from 75 detections
  store:     $T/sum.db, 238 events written, 0 rows not written
SUMEOF
diff "$T/want" "$T/sum" >"$T/diff" && ok || bad "replay summary differs: $(cat "$T/diff")"
# With nothing decoded, the layers line says so.
expect 0 "" -- sh -c "head -c 24 \"$PCAPS/demo.pcap\" | \"$EW\" replay --no-store -"
grep -q "^  layers:    none$" "$T/out" && ok || bad "empty capture's layers line: $(cat "$T/out")"

# The events table, whole (tests/cli/events_table.expected): each kind's
# last column in words (a DNS type and rcode, a response's answers after
# them, a long one cut with "..."; an HTTP request line or
# status; a TLS hello's side, version and ALPN, over TCP and QUIC; an ICMP
# message's name, code, echo id and sequence, the flow an error quotes, the
# payload), "-" for no name, and malformed DNS marked. After a deliberate
# change: replay the same files in the same order into a fresh database and
# write `events` over the file, then read the diff.
rm -f "$T/tbl.db"
"$EW" replay -q -d "$T/tbl.db" "$PCAPS/web_http.pcap" "$PCAPS/web_tls.pcap" "$PCAPS/web_icmp.pcap" \
	"$PCAPS/egress_paths.pcap" "$PCAPS/quic_initial.pcap" "$PCAPS/dns_malformed.pcap" \
	"$PCAPS/dns_basic.pcap" "$PCAPS/dns_tcp.pcap" "$PCAPS/dns_axfr.pcap" 2>/dev/null
"$EW" events -d "$T/tbl.db" > "$T/tbl"
diff "$(dirname "$0")/events_table.expected" "$T/tbl" > "$T/diff" && ok || bad "events table differs: $(head -20 "$T/diff")"
# A response whose status line holds a control byte is stored malformed,
# without a status: its row says "response", not "0" and empty fields.
python3 - "$T/badresp.pcap" <<'PYEOF3'
import struct, sys
def ck(b):
    b += b"\0" * (len(b) % 2)
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def seg(src, dst, sp, dp, seq, ack, fl, data=b""):
    a, b = bytes(src), bytes(dst)
    th = struct.pack("!HHIIBBHHH", sp, dp, seq, ack, 0x50, fl, 65535, 0, 0)
    th = th[:16] + struct.pack("!H", ck(a + b + struct.pack("!BBH", 0, 6, 20 + len(data)) + th + data)) + th[18:]
    ih = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(data), 7, 0x4000, 64, 6, 0, a, b)
    ih = ih[:10] + struct.pack("!H", ck(ih)) + ih[12:]
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ih + th + data
C, S = [10, 99, 0, 10], [10, 99, 0, 80]
req = b"GET / HTTP/1.1\r\nHost: ok.example.test\r\n\r\n"
resp = b"HTTP/1.1 404 \x1b[2JNot Found\r\nContent-Length: 0\r\n\r\n"
frames = [seg(C, S, 40000, 80, 1, 0, 0x02), seg(S, C, 80, 40000, 9, 2, 0x12),
          seg(C, S, 40000, 80, 2, 10, 0x10), seg(C, S, 40000, 80, 2, 10, 0x18, req),
          seg(S, C, 80, 40000, 10, 2 + len(req), 0x18, resp)]
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, fr in enumerate(frames):
        f.write(struct.pack("<IIII", 1795946400, 1000 * i, len(fr), len(fr)) + fr)
PYEOF3
rm -f "$T/badresp.db"
"$EW" replay -q -d "$T/badresp.db" "$T/badresp.pcap"
"$EW" events -d "$T/badresp.db" --kind http > "$T/badresp"
tail -1 "$T/badresp" | grep -q "10.99.0.80:80 -> 10.99.0.10:40000  ok.example.test  response malformed\$" && ok ||
	bad "a malformed response's row: $(cat "$T/badresp")"
# --host: the events to or from one address, in any spelling (the API's
# host= is checked against it in `api`)
"$EW" events -d "$T/tbl.db" --host 10.99.0.2 > "$T/host"
[ "$(wc -l <"$T/host")" -eq "$(grep -c " 10\.99\.0\.2:" "$T/tbl")" ] && [ -s "$T/host" ] && ok ||
	bad "events --host 10.99.0.2: $(wc -l <"$T/host") lines"
expect 2 "^egresswatch events: --host 10.0.0.0/8: not an IPv4 or IPv6 address\$" -- "$EW" events -d "$T/tbl.db" --host 10.0.0.0/8
# --from/--to: the events with from <= ts < to (the table's times, RFC 3339
# in one width, compare as strings), given as written, in another zone and
# as seconds since 1970 (the API's from=/to= are checked in `api`)
from=$(sort "$T/tbl" | sed -n 10p | cut -d' ' -f1)
to=$(sort "$T/tbl" | sed -n 40p | cut -d' ' -f1)
awk -v f="$from" -v t="$to" '$1 >= f && $1 < t' "$T/tbl" > "$T/want"
[ "$(wc -l <"$T/want")" -ge 20 ] && ok || bad "--from/--to test range too small: $from $to"
fs=$(date -u -d "$from" +%s).$(echo "$from" | cut -c21-26)
tz=$(date -u -d "@$(($(date -u -d "$to" +%s) - 7200))" +%Y-%m-%dT%H:%M:%S).$(echo "$to" | cut -c21-26)-02:00
"$EW" events -d "$T/tbl.db" --from "$from" --to "$to" > "$T/range"
diff "$T/want" "$T/range" > "$T/diff" && ok || bad "events --from $from --to $to: $(head "$T/diff")"
"$EW" events -d "$T/tbl.db" --from "$fs" --to "$tz" > "$T/range"
diff "$T/want" "$T/range" > "$T/diff" && ok || bad "events --from $fs --to $tz: $(head "$T/diff")"
expect 2 "^egresswatch events: --from 10:00: want a time as 2026-11-29T10:00:08Z (RFC 3339), 2026-11-29 or seconds since 1970\$" -- "$EW" events -d "$T/tbl.db" --from 10:00
expect 2 "^egresswatch alerts: --to 2026-11-31: want a time" -- "$EW" alerts -d "$T/tbl.db" --to 2026-11-31
expect 2 "^egresswatch events: --from is not before --to: nothing lies between\$" -- "$EW" events -d "$T/tbl.db" --from "$to" --to "$from"
# replay --from/--to: only the packets of the range, as if the capture had
# been cut to it first (the cut made here with pcapfile.py); the summary
# counts the others, and after the filter's when there is one.
python3 - "$(dirname "$0")/../pcap" "$PCAPS/demo.pcap" "$T/cut.pcap" 1795946408000000 1795946413000000 > "$T/ncut" <<'PYEOF2'
import sys
sys.path.insert(0, sys.argv[1])
import pcapfile
p = pcapfile.read(open(sys.argv[2], "rb").read())
lo, hi = int(sys.argv[4]), int(sys.argv[5])
keep = [r for r, pk in zip(p.raw, p.packets) if lo <= pk[0] < hi]
open(sys.argv[3], "wb").write(p.head + b"".join(keep))
print(len(keep), len(p.raw) - len(keep))
PYEOF2
read -r nin nout < "$T/ncut"
rm -f "$T/win.db" "$T/cut.db"
expect 0 "" -- "$EW" replay -d "$T/win.db" --from 2026-11-29T10:00:08Z --to 1795946413 "$PCAPS/demo.pcap"
grep -q "^egresswatch replay: 1 file, $nin packets ($nout outside --from/--to), " "$T/out" && [ "$nin" -gt 10 ] && ok ||
	bad "replay --from/--to summary: $(head -1 "$T/out"), want $nin in, $nout out"
"$EW" replay -q -d "$T/cut.db" "$T/cut.pcap"
[ "$("$EW" events -d "$T/win.db" --json)" = "$("$EW" events -d "$T/cut.db" --json)" ] &&
	[ "$("$EW" alerts -d "$T/win.db" --json)" = "$("$EW" alerts -d "$T/cut.db" --json)" ] && ok ||
	bad "replay --from/--to differs from a replay of the capture cut to the range"
expect 0 "" -- "$EW" replay --no-store -f udp --to 2026-11-29T10:00:13Z "$PCAPS/demo.pcap"
grep -q "^egresswatch replay: 1 file, [0-9]* packets ([0-9]* left out by the filter, [0-9]* outside --from/--to), " "$T/out" && ok ||
	bad "replay -f --to summary: $(head -1 "$T/out")"
expect 2 "^egresswatch replay: --to soon: want a time as" -- "$EW" replay --no-store --to soon "$PCAPS/demo.pcap"
expect 2 "^egresswatch replay: --from is not before --to: nothing lies between\$" -- \
	"$EW" replay --no-store --from 2026-11-30 --to 2026-11-29 "$PCAPS/demo.pcap"

# --alert ID: what the alert's source did from 5 s before its first hit to
# 5 s after its last, for every alert of the demo: the same as --host with
# --from and --to worked out here from `alerts --json`.
rm -f "$T/al.db"
"$EW" replay -q -c "$PCAPS/../rules/demo.yaml" -d "$T/al.db" "$PCAPS/demo.pcap"
"$EW" alerts -d "$T/al.db" --json | python3 -c 'import json,sys,calendar,time
def p(ts, shift):
    return "%d.%s" % (calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S")) + shift,
                      (ts[20:26] + "000000")[:6])
for l in sys.stdin:
    a = json.loads(l)
    print(a["id"], a["src_ip"], p(a["first_ts"], -5), p(a["last_ts"], 5))' > "$T/around"
[ "$(wc -l < "$T/around")" -ge 3 ] && ok || bad "the demo raised $(wc -l < "$T/around") alerts"
while read -r aid asrc afrom ato; do
	"$EW" events -d "$T/al.db" --json --alert "$aid" > "$T/got"
	"$EW" events -d "$T/al.db" --json --host "$asrc" --from "$afrom" --to "$ato" > "$T/want"
	[ -s "$T/want" ] && cmp -s "$T/got" "$T/want" && ok || bad "events --alert $aid is not --host $asrc --from $afrom --to $ato"
done < "$T/around"
expect 2 "^egresswatch events: --alert 999: $T/al.db has no such alert\$" -- "$EW" events -d "$T/al.db" --alert 999
expect 2 "^egresswatch events: --alert sets the address and the time range: not with --host, --from or --to\$" -- \
	"$EW" events -d "$T/al.db" --alert 1 --from 2026-11-29

# Compressed captures (gzip, zstd), from a file and from a pipe, give the
# plain file's events; one cut short keeps what came before and says why.
for f in dns_basic.pcap link_multi.pcapng; do
	rm -f "$T/plain.db"
	"$EW" replay -q -d "$T/plain.db" "$PCAPS/$f"
	gzip -c "$PCAPS/$f" > "$T/$f.gz"
	zstd -q -c "$PCAPS/$f" > "$T/$f.zst"
	for z in "$T/$f.gz" "$T/$f.zst"; do
		rm -f "$T/z.db" "$T/zp.db"
		expect 0 "" -- "$EW" replay -q -d "$T/z.db" "$z"
		expect 0 "" -- sh -c "cat \"$z\" | \"$EW\" replay -q -d \"$T/zp.db\" -"
		[ "$("$EW" events -d "$T/z.db" --json)" = "$("$EW" events -d "$T/plain.db" --json)" ] &&
			[ "$("$EW" events -d "$T/zp.db" --json)" = "$("$EW" events -d "$T/plain.db" --json)" ] &&
			ok || bad "$z gives other events than $f"
	done
done
size=$(wc -c < "$T/dns_basic.pcap.gz")
head -c $((size - 100)) "$T/dns_basic.pcap.gz" > "$T/cut.pcap.gz"
expect 1 "$T/cut.pcap.gz: gzip: the file ends inside a member (cut short?) after packet" -- "$EW" replay -d "$T/cutgz.db" "$T/cut.pcap.gz"
n=$("$EW" events -d "$T/cutgz.db" --json | wc -l)
[ "$n" -gt 0 ] && ok || bad "a cut .gz kept no events"

# A filter (-f) keeps the packets it matches, on every link type of a file,
# and the summary counts the others; a bad one, or one that does not apply
# to a link type in the file, exits 2 naming it.
expect 0 "" -- "$EW" replay -d "$T/flt.db" -f "udp port 35021 or udp port 35024" "$PCAPS/link_multi.pcapng"
grep -q "4 packets (7 left out by the filter)" "$T/out" && ok || bad "filter summary: $(head -1 "$T/out")"
[ "$("$EW" events -d "$T/flt.db" | grep -c "ng-eth\|ng-ipv4")" = 4 ] &&
	[ "$("$EW" events -d "$T/flt.db" | wc -l)" = 4 ] && ok || bad "the filter kept other events"
expect 2 'bad filter "hots 1": can.t parse filter expression' -- "$EW" replay -d "$T/flt2.db" -f "hots 1" "$PCAPS/dns_basic.pcap"
expect 2 "link_multi.pcapng: filter \"ether src 2:0:0:99:0:a\" does not apply to link type RAW" -- \
	"$EW" replay -d "$T/flt3.db" -f "ether src 2:0:0:99:0:a" "$PCAPS/link_multi.pcapng"
# (a packet of it was replayed before the filter met the link type: the
# file counts)
grep -q "^egresswatch replay: 1 file, 1 packets" "$T/out" && ok || bad "files counted: $(head -1 "$T/out")"
# The summary counts the files replayed, not those given: a file the
# filter does not apply to, or that is not a capture, stops the run at it.
expect 2 "link_raw.pcap: filter .* does not apply to link type RAW" -- \
	"$EW" replay -d "$T/flt4.db" -f "not ether host 2:0:0:0:0:1" "$PCAPS/demo.pcap" "$PCAPS/link_raw.pcap"
grep -q "^egresswatch replay: 1 file, 232 packets" "$T/out" && ok || bad "files counted: $(head -1 "$T/out")"
printf 'not a capture at all\n' > "$T/notcap.pcap"
expect 2 "notcap.pcap: unknown file format" -- "$EW" replay -d "$T/flt5.db" "$PCAPS/demo.pcap" "$T/notcap.pcap"
grep -q "^egresswatch replay: 1 file, 232 packets" "$T/out" && ok || bad "files counted: $(head -1 "$T/out")"

# alerts --severity (a minimum) and --src (any spelling inet_pton takes).
"$EW" replay -q -d "$T/al.db" -c "$PCAPS/../tests/detect/sandbox.yaml" "$PCAPS/demo.pcap"
all=$("$EW" alerts -d "$T/al.db" --json | wc -l)
high=$("$EW" alerts -d "$T/al.db" --json | grep -c '"severity":"\(high\|critical\)"')
[ "$all" -gt "$high" ] && [ "$high" -gt 0 ] &&
	[ "$("$EW" alerts -d "$T/al.db" --json --severity high | wc -l)" = "$high" ] &&
	[ "$("$EW" alerts -d "$T/al.db" --json --severity 4 | wc -l)" = "$high" ] && ok ||
	bad "alerts --severity high: not the $high of $all that are high or critical"
[ "$("$EW" alerts -d "$T/al.db" --src 10.99.0.10 | wc -l)" = "$all" ] &&
	[ "$("$EW" alerts -d "$T/al.db" --src 10.99.0.11 | wc -l)" = 0 ] && ok || bad "alerts --src"
expect 2 "--severity loud: want info, low, medium, high or critical, or 1..5\$" -- "$EW" alerts -d "$T/al.db" --severity loud
expect 2 "--src 10.99.0.010: not an IPv4 or IPv6 address" -- "$EW" alerts -d "$T/al.db" --src 10.99.0.010
expect 2 "unrecognized option '--severity'" -- "$EW" events -d "$T/al.db" --severity high
# Every message starts with the command, getopt's too; what is not an
# option or an argument is named; a control byte is shown escaped.
expect 2 "^egresswatch replay: unrecognized option '--bogus'" -- "$EW" replay --bogus x.pcap
expect 2 "^egresswatch events: option '--kind' requires an argument" -- "$EW" events --kind
expect 2 "^egresswatch rules check: unknown option '--bogus'" -- "$EW" rules check --bogus
expect 0 "" -- "$EW" rules check -- "$(dirname "$0")/../../rules/default.yaml"
expect 2 "^--help: " -- "$EW" rules check -- --help
expect 2 "^egresswatch version: unexpected argument extra" -- "$EW" version extra
expect 2 "^egresswatch watch: unexpected argument extra" -- "$EW" watch -i lo extra
# watch's usage errors exit 2 before anything is opened or created (no
# root needed: no interface is opened), each in one line naming the value:
# a -B past what libpcap takes (an int of bytes; 2048 overflowed it), a
# filter that does not compile, a user that does not exist, an interface
# given twice (every packet would be stored twice).
for b in 0 2048 4096 12x; do
	expect 2 "^egresswatch watch: --buffer $b: want 1..2047 MiB\$" -- "$EW" watch -i lo -d "$T/w.db" -B "$b"
done
expect 2 '^egresswatch watch: bad filter "port nonsense": ' -- "$EW" watch -i lo -d "$T/w.db" -f "port nonsense"
expect 2 "^egresswatch watch: --user ew-no-such-user: no such user\$" -- \
	"$EW" watch -i lo -d "$T/w.db" --user ew-no-such-user
expect 2 "^egresswatch watch: -i lo is given more than once\$" -- "$EW" watch -i lo -i eth9 -i lo -d "$T/w.db"
[ ! -e "$T/w.db" ] && ok || bad "a watch usage error left a database behind"
# A stdout whose reader has gone. replay ignores SIGPIPE: the summary's
# write fails, the run still ends 0 with every event stored, nothing said.
# events and alerts end quietly, as cat does (killed by SIGPIPE, nothing on
# stderr).
/usr/bin/python3 - "$EW" "$PCAPS/dns_basic.pcap" "$T" <<'PYEOF3' && ok || bad "a stdout whose reader has gone: see above"
import os, subprocess, sys
ew, pcap, t = sys.argv[1:4]
def closed(*argv):
    r, w = os.pipe()
    os.close(r)
    p = subprocess.run(argv, stdout=w, stderr=subprocess.PIPE)
    os.close(w)
    return p.returncode, p.stderr.decode()
rc, err = closed(ew, "replay", "-d", t + "/sigpipe.db", pcap)
bad = []
if rc != 0 or err:
    bad.append("replay to a closed pipe: status %d, stderr %r" % (rc, err))
for cmd in (["events", "--json"], ["events"], ["alerts"]):
    rc, err = closed(ew, *cmd, "-d", t + "/sigpipe.db")
    if rc not in (0, -13) or err:
        bad.append("%s to a closed pipe: status %d, stderr %r" % (" ".join(cmd), rc, err))
n = subprocess.run([ew, "events", "--json", "-d", t + "/sigpipe.db"], capture_output=True).stdout.count(b"\n")
if n != 28:
    bad.append("replay to a closed pipe stored %d events, want 28" % n)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PYEOF3
expect 2 '^egresswatch events: --name a\\x01b: want a name' -- "$EW" events -d "$T/al.db" --name "$(printf 'a\001b')"

# A pcapng cut inside a block: the same, in pcapng.c's words.
size=$(wc -c < "$PCAPS/link_multi.pcapng")
head -c $((size - 30)) "$PCAPS/link_multi.pcapng" > "$T/cut.pcapng"
expect 1 "$T/cut.pcapng: truncated pcapng block: .* after packet 10" -- "$EW" replay -d "$T/cutng.db" "$T/cut.pcapng"
n=$("$EW" events -d "$T/cutng.db" --json | wc -l)
[ "$n" -eq 9 ] && ok || bad "a cut pcapng kept $n events, want 9"

# Paging with --since-id neither skips nor repeats.
"$EW" events -d "$T/two.db" --json | sed 's/^{"id":\([0-9]*\),.*/\1/' > "$T/all.ids"
: > "$T/paged.ids"
last=0
while :; do
	"$EW" events -d "$T/two.db" --json --since-id "$last" --limit 5 | sed 's/^{"id":\([0-9]*\),.*/\1/' > "$T/page"
	[ -s "$T/page" ] || break
	cat "$T/page" >> "$T/paged.ids"
	last=$(tail -n 1 "$T/page")
done
cmp -s "$T/all.ids" "$T/paged.ids" && ok || bad "paging by --since-id differs from one listing"
"$EW" events -d "$T/two.db" --kind dns --json | grep -v '"kind":"dns"' | grep -q . && bad "--kind dns lists other kinds" || ok

# Rules files (docs/rules.md): "FILE: ok (...)" on stdout; "FILE:LINE: message" on stderr, exit 2.
RULES=$PCAPS/../tests/rules
expect 0 "" -- "$EW" rules check "$PCAPS/../rules/default.yaml"
grep -q "default.yaml: ok (no sandbox, policy classes off, 23 trusted zones, 19 metadata endpoints)" "$T/out" && ok || bad "rules check default.yaml: $(cat "$T/out")"
expect 0 "" -- "$EW" rules check "$RULES/good-sandbox.yaml" "$RULES/good-full.yaml" "$RULES/good-empty.yaml"
grep -q "good-sandbox.yaml: ok (2 sandbox networks, 1 proxy, 1 resolver, 0 destinations" "$T/out" && ok || bad "rules check summary: $(cat "$T/out")"
expect 2 "bad-address.yaml:7: allow.proxies: \"10.99.0.300:8080\" is not an address" -- "$EW" rules check "$RULES/bad-address.yaml"
expect 2 "bad-duplicate.yaml:6: allow: duplicate key \"resolvers\" (first on line 5)" -- "$EW" rules check "$RULES/bad-duplicate.yaml"
expect 2 "bad-unknown-key.yaml:5: allow: unknown key \"proxy\"" -- "$EW" rules check "$RULES/bad-unknown-key.yaml"
expect 2 "bad-syntax.yaml:4: did not find expected ',' or ']'" -- "$EW" rules check "$RULES/bad-syntax.yaml"
expect 2 "bad-threshold.yaml:4: thresholds.tunnel_score: 150 is out of range (1..100)" -- "$EW" rules check "$RULES/bad-threshold.yaml"
expect 2 "bad-address.yaml:7:" -- "$EW" rules check "$RULES/good-sandbox.yaml" "$RULES/bad-address.yaml"
expect 2 "$T/none.yaml: No such file or directory" -- "$EW" rules check "$T/none.yaml"
expect 2 "no rules file given" -- "$EW" rules check
expect 2 "unknown action 'frob'" -- "$EW" rules frob
expect 0 "" -- "$EW" rules --help
grep -q "usage: egresswatch rules check" "$T/out" && ok || bad "rules --help does not show its usage"
# -c with a bad rules file stops replay before it starts
expect 2 "bad-cidr.yaml:3: sandbox.networks" -- "$EW" replay -c "$RULES/bad-cidr.yaml" -d "$T/r.db" "$PCAPS/dns_basic.pcap"

# An ICMP echo request of 4 bytes (shorter than its 8-byte header) from the
# sandbox to the outside: counted malformed, and still icmp_egress. Raw IPv4
# (linktype 101), 10.99.0.10 -> 93.184.216.9.
printf '\324\303\262\241\002\000\004\000\000\000\000\000\000\000\000\000\377\377\000\000\145\000\000\000' > "$T/short.pcap"
printf '\000\000\000\000\000\000\000\000\030\000\000\000\030\000\000\000' >> "$T/short.pcap"
printf '\105\000\000\030\000\001\000\000\100\001\000\000\012\143\000\012\135\270\330\011' >> "$T/short.pcap"
printf '\010\000\367\377' >> "$T/short.pcap"
expect 0 "" -- "$EW" replay -c "$PCAPS/../tests/detect/sandbox.yaml" -d "$T/short.db" "$T/short.pcap"
grep -q "icmp 0 ok, 0 truncated, 1 malformed\|1 malformed" "$T/out" && ok || bad "short ICMP not counted malformed: $(cat "$T/out")"
"$EW" alerts -d "$T/short.db" --json > "$T/alerts" 2>&1
grep -q '"class":"icmp_egress".*"dst_ip":"93.184.216.9"' "$T/alerts" && ok || bad "short ICMP echo raised no icmp_egress: $(cat "$T/alerts")"

# An export to a file with stderr on a terminal (script(1) gives it one):
# a progress line every 50,000 rows, erased at the end; the file is the same
# as without a terminal, and without one stderr stays empty.
set --
for i in $(seq 310); do set -- "$@" "$PCAPS/demo.pcap"; done  # 310 x 217 events
expect 0 "" -- "$EW" replay -q -d "$T/big.db" "$@"
expect 0 "" -- "$EW" events -d "$T/big.db" --json
[ ! -s "$T/err" ] && ok || bad "events --json without a terminal wrote to stderr: $(head -c 300 "$T/err")"
mv "$T/out" "$T/big.plain"
if script -qec "'$EW' events -d '$T/big.db' --json > '$T/big.tty'" "$T/typescript" > /dev/null 2>&1; then
	cmp -s "$T/big.plain" "$T/big.tty" && ok || bad "events --json to a file differs with stderr on a terminal"
	[ "$(wc -l < "$T/big.tty")" -eq 67270 ] && ok || bad "the export has $(wc -l < "$T/big.tty") lines, want 67270"
	grep -q "$(printf '\revents: 50000 written, [0-9]*%% \r\033\[K')" "$T/typescript" && ok ||
		bad "no progress line, or not erased: $(cat -v "$T/typescript" | head -c 300)"
else
	bad "script(1) could not run the export"
fi

# --eve to a file that takes nothing: exit 1, and the summary does not call
# the lost lines written.
expect 1 "/dev/full: not every event or alert could be written" -- \
	"$EW" replay -d "$T/full.db" --eve /dev/full "$PCAPS/demo.pcap"
grep -q "^  eve:       /dev/full, 217 events and 2 alerts rendered, 219 lines lost\$" "$T/out" && ok ||
	bad "--eve /dev/full summary: $(grep eve: "$T/out")"

# replay --eve with stderr on a terminal: while the --eve thread catches up
# after the last packet, a progress line that is erased before the summary;
# the file is the same as without a terminal.
expect 0 "" -- "$EW" replay -q -d "$T/eve1.db" --eve "$T/eve1.json" "$@"
[ "$(grep -vc '"kind":"alert"' "$T/eve1.json")" -eq 67270 ] && ok ||
	bad "replay --eve wrote $(grep -vc '"kind":"alert"' "$T/eve1.json") events, want 67270"
if script -qec "'$EW' replay -d '$T/eve2.db' --eve '$T/eve2.json' $*" "$T/typescript" > /dev/null 2>&1; then
	cmp -s "$T/eve1.json" "$T/eve2.json" && ok || bad "replay --eve with a terminal wrote another file"
	# whatever progress was drawn is erased before the summary's first line
	tr '\r' '\n' < "$T/typescript" | grep -a -A1 -- '^--eve ' | grep -a -v -- '^--eve ' |
		grep -a -v '^--$' | grep -a -q -v "$(printf '^\033\[K')" && bad "an --eve progress line was left: $(cat -v "$T/typescript" | tail -c 400)" || ok
	grep -a -q "eve: *$T/eve2.json, 67270 events and [0-9]* alerts written, 0 lines lost" "$T/typescript" && ok ||
		bad "no eve line in the summary: $(cat -v "$T/typescript" | tail -c 600)"
	# the replay's own progress line names the file and which of the 310 it is
	grep -a -q "$(printf '\r')$PCAPS/demo.pcap (1 of 310) \[" "$T/typescript" && ok ||
		bad "no progress line for the first of 310 files: $(cat -v "$T/typescript" | head -c 300)"
else
	bad "script(1) could not run the replay"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
