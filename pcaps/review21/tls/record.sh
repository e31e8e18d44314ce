#!/bin/bash
# record.sh - record sni_routers.pcap (FINDINGS.md): the hellos on which
# nginx or haproxy act on a name the sensor did not report before the fix,
# and a sound one, each sent to nginx (:443) and haproxy (:8443) in the lab
# (lab.sh, through run.sh); the readers' logs and results.json stay in
# $OUT (default /tmp/${EW_LAB_NS:-ewt4}-record) for analyze.py.
set -euo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
NS=${EW_LAB_NS:-ewt4}
export OUT=${OUT:-/tmp/${NS}-record}
READERS=nginx,haproxy "$DIR/run.sh" base_A haproxy_shift_A_F type1A_ext_then_F_ext list_len_short \
	sni_ext_len_long name_len_long nul_in_name nul_dot_allowed sid_len_33 comp_len_0 recver_0401
cp "$OUT/client.pcap" "$DIR/sni_routers.pcap"
