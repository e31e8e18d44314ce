#!/bin/bash
# lab.sh up|down|cap-start NAME|cap-stop - a two-namespace lab for the review:
#   ewrv-c 10.98.0.10 (the agent)  <-veth->  ewrv-s 10.98.0.80 (nginx :80, squid :3128,
#   python3 http.server :8000). No route, NAT or link to real interfaces.
#   EW_LAB_NS, EW_LAB_NET and EW_LAB_HEADER_TIMEOUT name the namespaces, the /24 and
#   nginx's client_header_timeout otherwise (review19/lab.sh: ew-rv19, 10.96.0, 30s).
#   nginx :85 is h2c with large_client_header_buffers 4 128k; with EW_LAB_NGHTTPD set
#   (review20/h2c), nghttpd (nghttp2-server) serves h2c on that port from $T/www.
set -eu
N=${EW_LAB_NS:-ewrv}
NET=${EW_LAB_NET:-10.98.0}
HDR_TIMEOUT=${EW_LAB_HEADER_TIMEOUT:-5s}
T=/tmp/$N-lab
case "$1" in
up)
	mkdir -p $T/ngx; chmod 755 $T
	ip netns add $N-c; ip netns add $N-s
	ip link add $N-c0 netns $N-c type veth peer $N-s0 netns $N-s
	ip -n $N-c addr add $NET.10/24 dev $N-c0; ip -n $N-c link set $N-c0 up
	ip -n $N-s addr add $NET.80/24 dev $N-s0; ip -n $N-s link set $N-s0 up
	ip -n $N-c link set lo up; ip -n $N-s link set lo up
	for n in c s; do ip netns exec $N-$n ethtool -K $N-${n}0 tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
		ip netns exec $N-$n sysctl -qw net.ipv6.conf.all.disable_ipv6=1; done
	cat >$T/nginx.conf <<NG
worker_processes 1; user root root; error_log $T/nginx.log info; pid $T/nginx.pid;
events { worker_connections 1200; }
http { access_log $T/nginx-access.log; client_body_temp_path $T/ngx/body; proxy_temp_path $T/ngx/p;
 fastcgi_temp_path $T/ngx/f; uwsgi_temp_path $T/ngx/u; scgi_temp_path $T/ngx/s; default_type text/plain;
 keepalive_timeout 5s; client_header_timeout $HDR_TIMEOUT;
 server { listen $NET.80:80; server_name _; location / { return 200 "ok host=\$host uri=\$request_uri\n"; } }
 server { listen $NET.80:82 http2; server_name _; keepalive_timeout 120s; location / { return 200 "h2 host=\$host uri=\$request_uri\n"; } }
 server { listen $NET.80:83; large_client_header_buffers 4 32k; server_name _; location / { return 200 "big host=\$host uri=\$request_uri\n"; } }
 server { listen $NET.80:85 http2; large_client_header_buffers 4 128k; server_name _; location / { return 200 "h2big host=\$host uri=\$request_uri\n"; } }
 server { listen $NET.80:84 proxy_protocol http2; server_name _; location / { return 200 "pph2 host=\$host uri=\$request_uri\n"; } }
 server { listen $NET.80:81 proxy_protocol; server_name _; location / { return 200 "pp host=\$host uri=\$request_uri pp=\$proxy_protocol_addr\n"; } }
}
NG
	ip netns exec $N-s nginx -c $T/nginx.conf
	printf "%s www.evil.test www.decoy.test\n" "$NET.80" >$T/hosts; chmod 644 $T/hosts
	touch $T/squid-access.log $T/squid-cache.log; chmod 666 $T/squid-*.log
	cat >$T/squid.conf <<SQ
http_port $NET.80:3128
acl agents src $NET.0/24
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
	ip netns exec $N-s squid -f $T/squid.conf
	(cd $T && exec ip netns exec $N-s timeout 3000 python3 -m http.server -b $NET.80 8000 >$T/py.log 2>&1) & echo $! >$T/py.pid
	if [ -n "${EW_LAB_NGHTTPD:-}" ]; then
		mkdir -p $T/www; echo nghttpd >$T/www/index.html
		(exec ip netns exec $N-s timeout 3000 nghttpd --no-tls -a $NET.80 -d $T/www "$EW_LAB_NGHTTPD" >$T/nghttpd.log 2>&1) &
		echo $! >$T/nghttpd.pid
	fi
	sleep 2; echo up ;;
down)
	[ -f $T/nginx.pid ] && kill "$(cat $T/nginx.pid)" 2>/dev/null || true
	[ -f $T/squid.pid ] && kill "$(cat $T/squid.pid)" 2>/dev/null || true
	[ -f $T/py.pid ] && kill "$(cat $T/py.pid)" 2>/dev/null || true
	[ -f $T/nghttpd.pid ] && kill "$(cat $T/nghttpd.pid)" 2>/dev/null || true
	sleep 2
	ip netns del $N-c 2>/dev/null || true; ip netns del $N-s 2>/dev/null || true; echo down ;;
cap-start)
	ip netns exec $N-c timeout 120 dumpcap -q -i $N-c0 -f tcp -w "$2" >/dev/null 2>&1 & echo $! >$T/cap.pid; sleep 1.5 ;;
cap-stop)
	sleep 0.5; kill -INT "$(cat $T/cap.pid)" 2>/dev/null || true; sleep 1 ;;
esac
