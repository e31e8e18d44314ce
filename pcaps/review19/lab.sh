#!/bin/bash
# lab.sh (review19, from review18/lab.sh) up|down|cap-start NAME|cap-stop - a two-namespace lab for the review:
#   ew-rv19-c 10.96.0.10 (the agent)  <-veth->  ew-rv19-s 10.96.0.80 (nginx :80, squid :3128,
#   python3 http.server :8000). No route, NAT or link to real interfaces.
set -eu
T=/tmp/ew-rv19-lab
case "$1" in
up)
	mkdir -p $T/ngx; chmod 755 $T
	ip netns add ew-rv19-c; ip netns add ew-rv19-s
	ip link add ew-rv19-c0 netns ew-rv19-c type veth peer ew-rv19-s0 netns ew-rv19-s
	ip -n ew-rv19-c addr add 10.96.0.10/24 dev ew-rv19-c0; ip -n ew-rv19-c link set ew-rv19-c0 up
	ip -n ew-rv19-s addr add 10.96.0.80/24 dev ew-rv19-s0; ip -n ew-rv19-s link set ew-rv19-s0 up
	ip -n ew-rv19-c link set lo up; ip -n ew-rv19-s link set lo up
	for n in c s; do ip netns exec ew-rv19-$n ethtool -K ew-rv19-${n}0 tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
		ip netns exec ew-rv19-$n sysctl -qw net.ipv6.conf.all.disable_ipv6=1; done
	cat >$T/nginx.conf <<NG
worker_processes 1; user root root; error_log $T/nginx.log info; pid $T/nginx.pid;
events { worker_connections 1200; }
http { access_log $T/nginx-access.log; client_body_temp_path $T/ngx/body; proxy_temp_path $T/ngx/p;
 fastcgi_temp_path $T/ngx/f; uwsgi_temp_path $T/ngx/u; scgi_temp_path $T/ngx/s; default_type text/plain;
 keepalive_timeout 5s; client_header_timeout 30s;
 server { listen 10.96.0.80:80; server_name _; location / { return 200 "ok host=\$host uri=\$request_uri\n"; } }
 server { listen 10.96.0.80:82 http2; server_name _; keepalive_timeout 120s; location / { return 200 "h2 host=\$host uri=\$request_uri\n"; } }
 server { listen 10.96.0.80:83; large_client_header_buffers 4 32k; server_name _; location / { return 200 "big host=\$host uri=\$request_uri\n"; } }
 server { listen 10.96.0.80:84 proxy_protocol http2; server_name _; location / { return 200 "pph2 host=\$host uri=\$request_uri\n"; } }
 server { listen 10.96.0.80:81 proxy_protocol; server_name _; location / { return 200 "pp host=\$host uri=\$request_uri pp=\$proxy_protocol_addr\n"; } }
}
NG
	ip netns exec ew-rv19-s nginx -c $T/nginx.conf
	printf '10.96.0.80 www.evil.test www.decoy.test\n' >$T/hosts; chmod 644 $T/hosts
	touch $T/squid-access.log $T/squid-cache.log; chmod 666 $T/squid-*.log
	cat >$T/squid.conf <<SQ
http_port 10.96.0.80:3128
acl agents src 10.96.0.0/24
http_access allow agents
http_access deny all
cache deny all
pid_filename $T/squid.pid
access_log stdio:$T/squid-access.log squid
cache_log $T/squid-cache.log
hosts_file $T/hosts
dns_nameservers 127.0.0.1
shutdown_lifetime 1 seconds
coredump_dir $T
SQ
	chmod 644 $T/squid.conf
	ip netns exec ew-rv19-s squid -f $T/squid.conf
	(cd $T && exec ip netns exec ew-rv19-s timeout 3000 python3 -m http.server -b 10.96.0.80 8000 >$T/py.log 2>&1) & echo $! >$T/py.pid
	sleep 2; echo up ;;
down)
	[ -f $T/nginx.pid ] && kill "$(cat $T/nginx.pid)" 2>/dev/null || true
	[ -f $T/squid.pid ] && kill "$(cat $T/squid.pid)" 2>/dev/null || true
	[ -f $T/py.pid ] && kill "$(cat $T/py.pid)" 2>/dev/null || true
	sleep 2
	ip netns del ew-rv19-c 2>/dev/null || true; ip netns del ew-rv19-s 2>/dev/null || true; echo down ;;
cap-start)
	ip netns exec ew-rv19-c timeout 120 dumpcap -q -i ew-rv19-c0 -f tcp -w "$2" >/dev/null 2>&1 & echo $! >$T/cap.pid; sleep 1.5 ;;
cap-stop)
	sleep 0.5; kill -INT "$(cat $T/cap.pid)" 2>/dev/null || true; sleep 1 ;;
esac
