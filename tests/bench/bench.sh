#!/usr/bin/env bash
# bench.sh - replay throughput of egresswatch next to tshark and ndpiReader on
# the same capture. A benchmark, not a test: it prints figures, asserts nothing.
#
#   tests/bench/bench.sh [-n PACKETS] [-s SEED] [-r ROUNDS] [--no-peers] [PCAP]
#
# Without PCAP it builds ../shared/bench/gen_bench_pcap.c and makes a
# deterministic mixed capture of PACKETS packets (default 2,000,000, seed 42)
# under build/bench/. For each program it prints packets/s, MB/s and peak RSS
# (from /usr/bin/time -v), and egresswatch's ratio to each peer, from one run.
# With -r ROUNDS (default 1) the three run in turn ROUNDS times, each round's
# lines are printed, and the ratios are also given of the medians, which
# the machine's changing speed moves less than one run's.
# egresswatch is built release+LTO in build-bench/ (set up on first use) and
# stores every event (a fresh SQLite database each run).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=2000000 SEED=42 PEERS=1 PCAP="" ROUNDS=1
while [ $# -gt 0 ]; do
	case "$1" in
	-n) N=$2; shift 2 ;;
	-s) SEED=$2; shift 2 ;;
	-r) ROUNDS=$2; shift 2 ;;
	--no-peers) PEERS=0; shift ;;
	-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) PCAP=$1; shift ;;
	esac
done
# A benchmark measures the release build: its own release+LTO build
# directory, not the debug-optimized build/ that development uses.
BDIR=build-bench
if [ ! -f "$BDIR/build.ninja" ]; then
	meson setup "$BDIR" --buildtype=release -Db_lto=true >/dev/null ||
		{ echo "bench: meson setup $BDIR failed" >&2; exit 2; }
fi
ninja -C "$BDIR" >/dev/null || { echo "bench: build in $BDIR failed" >&2; exit 2; }
EW=$BDIR/egresswatch
[ -x "$EW" ] || { echo "bench: $EW not built" >&2; exit 2; }
mkdir -p build/bench
if [ -z "$PCAP" ]; then
	GEN=../shared/bench/gen_bench_pcap.c
	[ -f "$GEN" ] || { echo "bench: $GEN not found; pass a PCAP" >&2; exit 2; }
	cc -O2 -o build/bench/gen_bench_pcap "$GEN"
	PCAP=build/bench/bench-$N-$SEED.pcap
	[ -f "$PCAP" ] || build/bench/gen_bench_pcap -n "$N" -s "$SEED" -o "$PCAP"
fi
[ -x /usr/bin/time ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time bc >/dev/null
if [ $PEERS = 1 ] && ! command -v ndpiReader >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libndpi-bin >/dev/null || true
fi
PKTS=$(capinfos -M -c "$PCAP" 2>/dev/null | awk -F': *' '/Number of packets/ {print $2}' || true)
[ -n "$PKTS" ] || PKTS=$N
BYTES=$(stat -c %s "$PCAP")

case "$ROUNDS" in ''|*[!0-9]*|0) echo "bench: -r wants a count of rounds" >&2; exit 2 ;; esac

declare -A RATE RSS ALL
run() { # name, command...
	local name=$1; shift
	local log=build/bench/$name.time
	sync
	local t0=$(date +%s.%N)
	/usr/bin/time -v "$@" >"build/bench/$name.out" 2>"$log" || { echo "bench: $name failed:" >&2; tail -5 "$log" >&2; return 0; }
	local t1=$(date +%s.%N)
	local secs=$(echo "$t1 - $t0" | bc -l)
	local rss=$(awk -F': *' '/Maximum resident set size/ {print $2}' "$log")
	RATE[$name]=$(echo "$PKTS / $secs" | bc -l)
	RSS[$name]=$rss
	ALL[$name]="${ALL[$name]:-} ${RATE[$name]}"
	printf '%-12s %10.0f packets/s %8.1f MB/s %8.1f MiB peak RSS %7.2f s\n' "$name" \
		"${RATE[$name]}" "$(echo "$BYTES / $secs / 1000000" | bc -l)" "$(echo "$rss / 1024" | bc -l)" "$secs"
}
ratios() { # label, then RATE-like values by name: egresswatch's over each peer's
	for peer in tshark ndpiReader; do
		[ -n "${2:-}" ] || return 0
		local ew=$2 other
		case $peer in tshark) other=${3:-} ;; ndpiReader) other=${4:-} ;; esac
		[ -n "$other" ] || continue
		printf 'egresswatch / %-10s %6.1fx packets/s%s\n' "$peer" \
			"$(echo "$ew / $other" | bc -l)" "$1"
	done
}
median() { # values...
	printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
echo "capture: $PCAP ($PKTS packets, $((BYTES / 1048576)) MiB)"
for round in $(seq 1 "$ROUNDS"); do
	[ "$ROUNDS" -eq 1 ] || echo "round $round of $ROUNDS"
	RATE=()
	rm -f build/bench/ew.db build/bench/ew.db-wal build/bench/ew.db-shm
	run egresswatch "$EW" replay --no-progress -d build/bench/ew.db "$PCAP"
	[ "$round" -gt 1 ] || grep -E "^  (events|store):" build/bench/egresswatch.out || true
	if [ $PEERS = 1 ]; then
		command -v tshark >/dev/null && run tshark tshark -n -r "$PCAP" -T fields -e dns.qry.name \
			-e tls.handshake.extensions_server_name -e http.host
		command -v ndpiReader >/dev/null && run ndpiReader ndpiReader -i "$PCAP" -q
		ratios "" "${RATE[egresswatch]:-}" "${RATE[tshark]:-}" "${RATE[ndpiReader]:-}"
	fi
done
if [ "$ROUNDS" -gt 1 ]; then
	declare -A MED
	for name in egresswatch tshark ndpiReader; do
		[ -n "${ALL[$name]:-}" ] || continue
		# shellcheck disable=SC2086
		MED[$name]=$(median ${ALL[$name]})
		printf 'median %-12s %10.0f packets/s over %d rounds\n' "$name" "${MED[$name]}" "$ROUNDS"
	done
	[ $PEERS = 1 ] && ratios " (medians)" "${MED[egresswatch]:-}" "${MED[tshark]:-}" "${MED[ndpiReader]:-}"
fi
