#!/bin/bash
# record.sh routers|gnutls - record one of the lab's captures (FINDINGS.md)
# through run.sh (lab.sh up, tcpdump on the client, client.py, lab down);
# the readers' logs and results.json stay in $OUT (default
# /tmp/${EW_LAB_NS:-ewt4}-record-WHAT) for analyze.py.
#   routers  sni_routers.pcap: the hellos on which nginx or haproxy act on a
#            name the sensor did not report before the fix, and a sound one,
#            each sent to nginx (:443) and haproxy (:8443)
#   gnutls   gnutls_ccs.pcap: ChangeCipherSpec records before and inside the
#            ClientHello, which gnutls-serv (:5556) takes
set -euo pipefail
DIR=$(cd "$(dirname "$0")" && pwd)
NS=${EW_LAB_NS:-ewt4}
WHAT=${1:?usage: record.sh routers|gnutls}
export OUT=${OUT:-/tmp/${NS}-record-$WHAT}
case $WHAT in
routers)
	READERS=nginx,haproxy "$DIR/run.sh" base_A haproxy_shift_A_F type1A_ext_then_F_ext \
		list_len_short sni_ext_len_long name_len_long nul_in_name nul_dot_allowed sid_len_33 \
		comp_len_0 recver_0401
	cp "$OUT/client.pcap" "$DIR/sni_routers.pcap"
	;;
gnutls)
	READERS=gnutls "$DIR/run.sh" base_A before_ccs ccs_among_records
	cp "$OUT/client.pcap" "$DIR/gnutls_ccs.pcap"
	;;
*) echo "record.sh: no capture '$WHAT'" >&2; exit 2 ;;
esac
