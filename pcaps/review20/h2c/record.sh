#!/bin/bash
# record.sh - remake the captures of README.md (root): the lab up (lab.sh, its
# namespaces ewh2-*), hpack_cases.py's connections recorded with dumpcap on the
# client's side, the lab down (also on failure).
#   nginx_hpack_cases.pcap     every case against nginx 1.22 h2c (:82)
#   nginx_big_fields.pcap.gz   the long fields against nginx with
#                              large_client_header_buffers 4 128k (:85)
#   nghttpd_hpack_cases.pcap   every case against nghttpd (nghttp2-server, :8082)
set -eu
cd "$(dirname "$0")"
trap './lab.sh down >/dev/null 2>&1' EXIT
./lab.sh up
rec() { # rec OUT PORT CASE...
	local out=$1 port=$2; shift 2
	./lab.sh cap-start /tmp/ewh2-rec.pcap
	ip netns exec ewh2-c timeout 200 /usr/bin/python3 hpack_cases.py 10.93.20.80 "$port" "$@" | tee "${out%%.*}.txt"
	./lab.sh cap-stop
	case $out in
	*.gz) gzip -9n </tmp/ewh2-rec.pcap >"$out" ;;
	*) cp /tmp/ewh2-rec.pcap "$out" ;;
	esac
	rm -f /tmp/ewh2-rec.pcap
}
SMALL=$(/usr/bin/python3 hpack_cases.py list | tr ' ' '\n' | grep -v -e "^field_[47]0k" -e "^name_70k" -e '^fields_200$')
rec nginx_hpack_cases.pcap 82 $SMALL
rec nginx_big_fields.pcap.gz 85 control field_40k field_70k field_70k_indexed field_70k_indexed_ref_old field_70k_split_len name_70k
rec nghttpd_hpack_cases.pcap 8082 $SMALL
