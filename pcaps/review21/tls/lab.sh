#!/bin/bash
# lab.sh up|down - the review21 TLS SNI differential lab (FINDINGS.md).
# Two namespaces joined by one veth pair (prefix from EW_LAB_NS, default ewt4):
#   ${NS}c 10.54.4.10  the client (the agent in a sandbox): client.py
#   ${NS}s 10.54.4.20  the SNI readers, each logging the name it took:
#     :443   nginx stream, ssl_preread on, map $ssl_preread_server_name to
#            local upstreams (127.0.0.1:9000 default, :9001 allowed.example,
#            :9002 forbidden.example) that answer "up0\n", "up1\n", "up2\n"
#     :8443  haproxy (mode tcp, inspect-delay, req.ssl_sni) to the same three
#     :4433  ossl_server.py: OpenSSL (Python's ssl) with a servername callback
#     :5556  gnutls-serv (logs "Server Name" with -d)
# tcp_tricks.py sends hand-made TCP segments from 10.54.4.11 (no kernel owns
# it: the server ns has a static neighbour entry for it at ${NS}c's MAC).
# Nothing routes out: the pair links only these two namespaces, no routes.
set -euo pipefail
NS=${EW_LAB_NS:-ewt4}
NET=10.54.4
DIR=$(cd "$(dirname "$0")" && pwd)
RUN=/tmp/${NS}-lab

down() {
	for f in "$RUN"/*.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
	ip netns del "${NS}c" 2>/dev/null || true
	ip netns del "${NS}s" 2>/dev/null || true
}

up() {
	down
	rm -rf "$RUN"
	mkdir -p "$RUN"
	ip netns add "${NS}c"
	ip netns add "${NS}s"
	ip link add "${NS}c" netns "${NS}c" type veth peer "${NS}s" netns "${NS}s"
	for h in c:10 s:20; do
		n=${h%%:*} a=${h#*:}
		ip netns exec "${NS}$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		ip -n "${NS}$n" addr add "$NET.$a/24" dev "${NS}$n"
		ip -n "${NS}$n" link set "${NS}$n" up
		ip -n "${NS}$n" link set lo up
		# no offloads: the capture shows segments as sent
		ip netns exec "${NS}$n" ethtool -K "${NS}$n" tx off gso off tso off >/dev/null 2>&1 || true
	done
	# tcp_tricks.py sends from 10.54.4.11, an address no kernel owns (so
	# none answers the server with a RST): the server reaches it at the
	# client's MAC
	ip -n "${NS}s" neigh replace "$NET.11" lladdr \
		"$(ip netns exec "${NS}c" cat "/sys/class/net/${NS}c/address")" dev "${NS}s"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=allowed.example \
		-keyout "$RUN/key.pem" -out "$RUN/cert.pem" >/dev/null 2>&1
	cat >"$RUN/nginx.conf" <<EOC
load_module /usr/lib/nginx/modules/ngx_stream_module.so;
daemon on;
pid $RUN/nginx.pid;
error_log $RUN/nginx.err info;
events { worker_connections 64; }
stream {
	log_format sni '\$remote_port sni="\$ssl_preread_server_name" up=\$upstream_addr proto=\$ssl_preread_protocol status=\$status';
	map \$ssl_preread_server_name \$up {
		allowed.example 127.0.0.1:9001;
		forbidden.example 127.0.0.1:9002;
		blocked.example 127.0.0.1:9002;
		default 127.0.0.1:9000;
	}
	server {
		listen $NET.20:443;
		ssl_preread on;
		preread_timeout 2s;
		proxy_connect_timeout 1s;
		proxy_timeout 2s;
		access_log $RUN/nginx.log sni;
		proxy_pass \$up;
	}
	server { listen 127.0.0.1:9000; return "up0\n"; }
	server { listen 127.0.0.1:9001; return "up1\n"; }
	server { listen 127.0.0.1:9002; return "up2\n"; }
}
EOC
	ip netns exec "${NS}s" nginx -c "$RUN/nginx.conf" -e "$RUN/nginx.err"
	cat >"$RUN/haproxy.cfg" <<EOC
global
	log stdout format raw local0
	pidfile $RUN/haproxy.pid
defaults
	mode tcp
	log global
	timeout connect 1s
	timeout client 3s
	timeout server 3s
frontend fe
	bind $NET.20:8443
	tcp-request inspect-delay 1500ms
	tcp-request content capture req.ssl_sni len 300
	tcp-request content accept if { req.ssl_sni -m found }
	log-format "%cp sni=\"%[capture.req.hdr(0)]\" backend=%b"
	use_backend b_allowed if { req.ssl_sni -m str allowed.example }
	use_backend b_forbidden if { req.ssl_sni -m str forbidden.example blocked.example }
	default_backend b_default
backend b_default
	server s0 127.0.0.1:9000
backend b_allowed
	server s1 127.0.0.1:9001
backend b_forbidden
	server s2 127.0.0.1:9002
EOC
	ip netns exec "${NS}s" haproxy -db -f "$RUN/haproxy.cfg" >"$RUN/haproxy.log" 2>&1 &
	echo $! >"$RUN/haproxy.pid"
	ip netns exec "${NS}s" timeout 1800 /usr/bin/python3 "$DIR/ossl_server.py" "$NET.20" 4433 \
		"$RUN/cert.pem" "$RUN/key.pem" "$RUN/ossl.log" >"$RUN/ossl.out" 2>&1 &
	echo $! >"$RUN/ossl.pid"
	ip netns exec "${NS}s" timeout 1800 gnutls-serv -d 4 -a -p 5556 \
		--x509certfile "$RUN/cert.pem" --x509keyfile "$RUN/key.pem" >"$RUN/gnutls.log" 2>&1 &
	echo $! >"$RUN/gnutls.pid"
	sleep 1
}

case "${1:-}" in
up) up ;;
down) down ;;
*) echo "usage: lab.sh up|down" >&2; exit 2 ;;
esac
