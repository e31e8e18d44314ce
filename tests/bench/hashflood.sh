#!/usr/bin/env bash
# hashflood.sh - what a capture made to flood a hash table costs a replay.
# A benchmark, not a test: it prints figures, asserts nothing.
#
#   tests/bench/hashflood.sh [-q QUERIES] [-r ROUNDS] [BUILD_DIR]
#
# gen_hashflood.py makes two captures of QUERIES DNS queries (default
# 200,000) under 4096 registered domains: in one the domains all fall in one
# bucket of the dns_tunnel detector's domain table under the unkeyed FNV-1a
# it used to hash them with (keys anyone can compute offline), in the other
# they do not. Each is replayed ROUNDS times (default 3, alternating) with
# --no-store by BUILD_DIR/egresswatch (default build-bench, release+LTO, set
# up on first use), and the median packets/s of each and their ratio are
# printed. With the keyed hash (sensor/hash.h) the ratio is ~1; with FNV-1a
# the flood replayed five times slower.
set -euo pipefail
cd "$(dirname "$0")/../.."
Q=200000 ROUNDS=3 BDIR=build-bench
while [ $# -gt 0 ]; do
	case "$1" in
	-q) Q=$2; shift 2 ;;
	-r) ROUNDS=$2; shift 2 ;;
	-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) BDIR=$1; shift ;;
	esac
done
case "$Q$ROUNDS" in *[!0-9]*) echo "hashflood: -q and -r want counts" >&2; exit 2 ;; esac
if [ "$BDIR" = build-bench ] && [ ! -f "$BDIR/build.ninja" ]; then
	meson setup "$BDIR" --buildtype=release -Db_lto=true >/dev/null ||
		{ echo "hashflood: meson setup $BDIR failed" >&2; exit 2; }
fi
ninja -C "$BDIR" >/dev/null || { echo "hashflood: build in $BDIR failed" >&2; exit 2; }
EW=$BDIR/egresswatch
mkdir -p build/bench
for kind in plain collide; do
	f=build/bench/hashflood-$kind-$Q.pcap
	[ -f "$f" ] || python3 tests/bench/gen_hashflood.py $kind 4096 "$Q" "$f"
done
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
declare -A T
for ((r = 1; r <= ROUNDS; r++)); do
	for kind in plain collide; do
		s=$( { /usr/bin/time -f %e "$EW" replay --no-store -q \
			build/bench/hashflood-$kind-$Q.pcap >/dev/null; } 2>&1 | tail -n 1)
		T[$kind]+="$s "
		printf 'round %d  %-8s %6.2f s  %8.0f packets/s\n' "$r" "$kind" "$s" "$(echo "$Q / $s" | bc -l)"
	done
done
p=$(echo ${T[plain]} | tr ' ' '\n' | median)
c=$(echo ${T[collide]} | tr ' ' '\n' | median)
printf 'medians: plain %.2f s (%.0f packets/s), collide %.2f s (%.0f packets/s): the flood takes %.2fx the time\n' \
	"$p" "$(echo "$Q / $p" | bc -l)" "$c" "$(echo "$Q / $c" | bc -l)" "$(echo "$c / $p" | bc -l)"
