#!/bin/bash
# record_proxyproto.sh - record pcaps/proxyproto_real.pcap: real HTTP and TLS behind
# a PROXY protocol header, sent by curl (--haproxy-protocol, v1) and by HAProxy
# (send-proxy-v2) to nginx listening with `proxy_protocol`.
#
# README
#   sudo pcaps/record_proxyproto.sh [OUT.pcap]   (default: pcaps/proxyproto_real.pcap)
#
# Needs root, iproute2, ethtool, nginx, haproxy, curl, openssl and dumpcap; tshark for
# the address audit. Three namespaces on one bridge, nothing else (tests/lib/netns.sh;
# IPv6 off; no route, NAT or link to the host's interfaces):
#   ewpp-client 10.99.0.10/24   curl; HAProxy on its own 127.0.0.1:8080 and :8443 (TCP
#                               mode) relaying to the server with a v2 header; the
#                               capture is taken here, on the veth (not loopback)
#   ewpp-server 10.99.0.80/24   nginx: `listen 10.99.0.80:80 proxy_protocol` and
#                               `listen 10.99.0.80:443 ssl proxy_protocol` (a
#                               throw-away self-signed certificate made here); it
#                               refuses a connection without the header
#   ewpp-switch                 the bridge
# The connections, every client bounded by `curl --max-time 5` and HAProxy's 5 s
# timeouts:
#   curl --haproxy-protocol http://...       v1 "PROXY TCP4 ..." line, then a GET
#   curl --haproxy-protocol https://...      v1 line, then a ClientHello (SNI)
#   curl via HAProxy :8080                   v2 header (PROXY, TCP over IPv4), a GET
#   curl via HAProxy :8443                   v2 header, then curl's ClientHello
# nginx answers each (200): the access log shows the client address it took from the
# header. The golden test pins the sensor's events (tests/pcap/proxyproto_real.expected).
#
# A safety capture on the switch ports checks at the end that no packet went to an
# address other than the two hosts'. Real traffic: keys, ports and times differ on
# every run; record once and commit the file.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/lib/netns.sh"
OUT=${1:-$HERE/proxyproto_real.pcap}
NS_C=ewpp-client
NS_S=ewpp-server
NS_W=ewpp-switch
ALL_NS="$NS_C $NS_S $NS_W"
IP_C=10.99.0.10
IP_S=10.99.0.80
D=pp.example.test

netns_init record_proxyproto.sh /tmp/ewpp-record.XXXXXX "$ALL_NS"
[ "$(id -u)" -eq 0 ] || { echo "record_proxyproto.sh: must run as root" >&2; exit 2; }
for t in ip ethtool nginx haproxy curl openssl dumpcap tshark timeout; do
	command -v "$t" >/dev/null || { echo "record_proxyproto.sh: $t not found" >&2; exit 2; }
done
NETNS_OFFLOAD_OFF=1 # wire-size segments with real checksums
NETNS_PIDFILES=1    # nginx's pidfile
netns_clear_leftovers
netns_create $ALL_NS
netns_ipv4_only $ALL_NS
netns_switch "$NS_W" ewpp-br
netns_host "$NS_C" ewpp-c ewpp-pc "$IP_C/24"
netns_host "$NS_S" ewpp-s ewpp-ps "$IP_S/24"
netns_audit_start 120

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-keyout "$TMP/key.pem" -out "$TMP/cert.pem" -subj "/CN=$D" \
	-addext "subjectAltName=DNS:*.$D" 2>"$TMP/openssl-req.err"

netns_nginx_conf nginx "$TMP/nginx.pid" \
	"log_format pp '\$proxy_protocol_addr:\$proxy_protocol_port via \$remote_addr \"\$request\" \$status \$ssl_server_name';" <<EOF
	server {
		listen $IP_S:80 proxy_protocol;
		listen $IP_S:443 ssl proxy_protocol;
		server_name *.$D;
		ssl_certificate $TMP/cert.pem;
		ssl_certificate_key $TMP/key.pem;
		ssl_protocols TLSv1.2 TLSv1.3;
		location / { return 200 "from \$proxy_protocol_addr\n"; }
	}
EOF
cat >"$TMP/haproxy.cfg" <<EOF
global
	maxconn 16
defaults
	mode tcp
	timeout connect 2s
	timeout client 5s
	timeout server 5s
frontend http_in
	bind 127.0.0.1:8080
	default_backend http_out
frontend tls_in
	bind 127.0.0.1:8443
	default_backend tls_out
backend http_out
	server s $IP_S:80 send-proxy-v2
backend tls_out
	server s $IP_S:443 send-proxy-v2
EOF
netns_bg "$NS_S" nginx -c "$TMP/nginx.conf" >"$TMP/nginx-stdout.log" 2>&1
netns_bg "$NS_C" haproxy -db -f "$TMP/haproxy.cfg" >"$TMP/haproxy.log" 2>&1
listening() { # NS PORT
	ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q .
}
for _ in $(seq 1 50); do
	listening "$NS_S" 443 && listening "$NS_C" 8443 && break
	sleep 0.1
done
listening "$NS_S" 443 && listening "$NS_C" 8443 ||
	{ echo "record_proxyproto.sh: nginx or haproxy did not start" >&2; exit 1; }

netns_capture_start "$NS_C" ewpp-c proxyproto "host $IP_S"
CURL="timeout 10 curl -s -S --max-time 5 -o /dev/null -w %{http_code}\n"
netns_log_exec "$NS_C" "$TMP/client.log" $CURL --haproxy-protocol \
	-H "Host: v1.$D" "http://$IP_S/v1-http"
netns_log_exec "$NS_C" "$TMP/client.log" $CURL --haproxy-protocol --http1.1 -k \
	--resolve "v1tls.$D:443:$IP_S" "https://v1tls.$D/v1-tls"
netns_log_exec "$NS_C" "$TMP/client.log" $CURL \
	-H "Host: v2.$D" "http://127.0.0.1:8080/v2-http"
netns_log_exec "$NS_C" "$TMP/client.log" $CURL --http1.1 -k \
	--resolve "v2tls.$D:8443:127.0.0.1" "https://v2tls.$D:8443/v2-tls"
netns_capture_stop

netns_audit_finish "10\.99\.0\.(10|80)"
cp "$TMP/proxyproto.pcap" "$OUT"
chmod 644 "$OUT"
echo "record_proxyproto.sh: wrote $OUT ($(wc -c <"$OUT") bytes," \
	"$(tshark -r "$OUT" 2>/dev/null | wc -l) packets)"
cat "$TMP/client.log" "$TMP/nginx-access.log"
