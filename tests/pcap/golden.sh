#!/bin/sh
# golden.sh - golden-output test of one pcap fixture.
#
# README
#   golden.sh [--update] [--alerts | --eve] [--rules FILE] [--status N] EGRESSWATCH PCAP EXPECTED
#       Replay PCAP into a fresh temporary database, print `events --json` (and, with
#       --alerts, then `alerts --json`; with --eve, the file `replay --eve` wrote
#       instead), and compare that with the EXPECTED file:
#       exit 0 if identical, 1 with a unified diff if not (or if EXPECTED is missing),
#       2 on usage errors or when egresswatch itself fails.
#       --update      write the output to EXPECTED instead of comparing (exit 0).
#       --rules FILE  replay with `-c FILE` (a sandbox section turns the policy classes on).
#       --status N    the exit status replay must return (default 0; a pcap damaged
#                     part-way returns 1, see architecture.md section 2).
#   golden.sh --determinism [--alerts | --eve] [--status N] EGRESSWATCH PCAP
#       Replay PCAP twice into two fresh databases; the `events --json` (and
#       `alerts --json`, or the --eve files) must be byte-identical (exit 0), else a
#       diff and exit 1.
#
# Meson (registered by the lead) would run e.g.
#   test('pcap.dns_basic', find_program('golden.sh'),
#        args: [egresswatch, files('../../pcaps/dns_basic.pcap'), files('dns_basic.expected')],
#        suite: ['pcap'])
# Regenerate every expected file after an intended change with --update, and read
# the diff before committing it.
set -u

MODE=compare
ALERTS=0
EVE=0
RULES=
WANT_STATUS=0
while [ $# -gt 0 ]; do
	case "$1" in
	--update) MODE=update; shift ;;
	--determinism) MODE=determinism; shift ;;
	--alerts) ALERTS=1; shift ;;
	--eve) EVE=1; shift ;;
	--rules) [ $# -ge 2 ] || { echo "golden.sh: --rules needs a file" >&2; exit 2; }
		RULES=$2; shift 2 ;;
	--status) [ $# -ge 2 ] || { echo "golden.sh: --status needs a value" >&2; exit 2; }
		WANT_STATUS=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "golden.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done

usage() {
	echo "usage: golden.sh [--update] [--alerts | --eve] [--rules FILE] [--status N] EGRESSWATCH PCAP EXPECTED" >&2
	echo "       golden.sh --determinism [--alerts | --eve] [--status N] EGRESSWATCH PCAP" >&2
	exit 2
}
if [ "$MODE" = determinism ]; then
	[ $# -eq 2 ] || usage
else
	[ $# -eq 3 ] || usage
	EXPECTED=$3
fi
EW=$1
PCAP=$2
[ -x "$EW" ] || { echo "golden.sh: $EW: not an executable" >&2; exit 2; }
[ -r "$PCAP" ] || { echo "golden.sh: $PCAP: cannot read" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ew-golden.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

# run_once N: replay into $TMP/N.db and write the JSON lines to $TMP/N.out
run_once() {
	n=$1
	if [ "$EVE" -eq 1 ]; then
		set -- --eve "$TMP/$n.out"
	else
		set --
	fi
	"$EW" replay ${RULES:+-c "$RULES"} -d "$TMP/$n.db" "$@" "$PCAP" >"$TMP/$n.replay" 2>&1
	st=$?
	if [ "$st" -ne "$WANT_STATUS" ]; then
		echo "golden.sh: replay of $PCAP exited $st (expected $WANT_STATUS):" >&2
		sed 's/^/  /' "$TMP/$n.replay" >&2
		exit 2
	fi
	[ "$EVE" -eq 1 ] && return 0
	if ! "$EW" events -d "$TMP/$n.db" --json >"$TMP/$n.out" 2>"$TMP/$n.err"; then
		echo "golden.sh: events on $PCAP failed:" >&2
		sed 's/^/  /' "$TMP/$n.err" >&2
		exit 2
	fi
	if [ "$ALERTS" -eq 1 ]; then
		if ! "$EW" alerts -d "$TMP/$n.db" --json >>"$TMP/$n.out" 2>"$TMP/$n.err"; then
			echo "golden.sh: alerts on $PCAP failed:" >&2
			sed 's/^/  /' "$TMP/$n.err" >&2
			exit 2
		fi
	fi
}

case "$MODE" in
update)
	run_once a
	cp "$TMP/a.out" "$EXPECTED" || exit 2
	echo "golden.sh: wrote $EXPECTED ($(wc -l <"$EXPECTED") lines)"
	exit 0 ;;
determinism)
	run_once a
	run_once b
	if cmp -s "$TMP/a.out" "$TMP/b.out"; then
		echo "golden.sh: $PCAP: two replays identical ($(wc -l <"$TMP/a.out") lines)"
		exit 0
	fi
	echo "golden.sh: $PCAP: two replays differ:"
	diff -u --label "first replay" --label "second replay" "$TMP/a.out" "$TMP/b.out" | head -n 200
	exit 1 ;;
compare)
	if [ ! -f "$EXPECTED" ]; then
		echo "golden.sh: $EXPECTED does not exist (create it with --update)"
		exit 1
	fi
	run_once a
	if cmp -s "$EXPECTED" "$TMP/a.out"; then
		echo "golden.sh: $PCAP: matches $EXPECTED"
		exit 0
	fi
	echo "golden.sh: $PCAP: output differs from $EXPECTED (--update rewrites it):"
	diff -u --label "$EXPECTED" --label "egresswatch output" "$EXPECTED" "$TMP/a.out" | head -n 300
	exit 1 ;;
esac
