#!/bin/bash
# record_dns_pp_bigtlv.sh (review19) - record pcaps/review19/dns_pp_bigtlv.pcap with
# ../record_dns_proxyproto.sh (the same two namespaces and unbound 1.17.1 with
# proxy-protocol-port: 53), its client dns_pp_bigtlv_client.py sending DNS over TCP and
# UDP behind PROXY v2 headers of 1,000, 16,000 and 20,000 bytes (R19-5).
#   sudo pcaps/review19/record_dns_pp_bigtlv.sh [OUT.pcap]
HERE=$(cd "$(dirname "$0")" && pwd)
EW_DPP_CLIENT=$HERE/dns_pp_bigtlv_client.py \
EW_DPP_NAMES="tlv1000 tlv16000 tlv20000 udp1000 udp20000" \
NS_PREFIX=${NS_PREFIX:-ew-rv19-} \
	exec "$HERE/../record_dns_proxyproto.sh" "${1:-$HERE/dns_pp_bigtlv.pcap}"
