#!/bin/bash
# e2e_bridge.sh - egresswatch end to end: a sandbox of network namespaces joined by a
# Linux bridge, real agent traffic (an allowlisting nginx egress proxy, a dnsmasq
# resolver, an iodine DNS tunnel, a fake metadata service, direct connections, ping),
# `egresswatch watch --api` capturing on the bridge, and every verdict read back
# through the HTTP API.
#
# README
#   sudo tests/live/e2e_bridge.sh EGRESSWATCH      (meson test -C build --suite live)
#
# Needs root, /dev/net/tun, iproute2, nginx, dnsmasq, iodine (iodine, iodined), ifconfig
# (net-tools: iodine configures its tun device with it), curl, ping (iputils-ping),
# python3 and timeout. Without root, or with one of them missing, it prints "SKIP: ..."
# and exits 77 (`./dev deps` installs them all).
#
# The network, and nothing else: every veth is created with both ends already inside
# these namespaces; the host's interfaces, routes and firewall are not touched. No
# default route, no NAT, no link to a real interface; IPv6 is disabled in every
# namespace. The only routes are the on-link 10.99.0.0/24, 169.254.169.254/32 in the
# agent (and 10.99.0.0/24 back from the metadata host), and the iodine tunnel's
# 10.99.1.0/27 on the tun devices of the agent and of ew-e2e-iod.
#   ew-e2e-agent  10.99.0.10      the sandboxed agent                      veth ew-e2e-a
#   ew-e2e-proxy  10.99.0.2       nginx egress proxy on :8080: /v1/ goes to the API
#                                 host, everything else is answered 403    veth ew-e2e-p
#   ew-e2e-dns    10.99.0.53      dnsmasq, the sandbox resolver: local records, and
#                                 t.example-tunnel.test forwarded to iodined  veth ew-e2e-d
#   ew-e2e-iod    10.99.0.60      iodined ("outside"); tunnel 10.99.1.1/27 on ew-e2e-dns0
#                                 and a TCP sink on 10.99.1.1:7000        veth ew-e2e-i
#   ew-e2e-api    10.99.0.80      nginx on :80, the "LLM API" the proxy allows (nothing
#                                 listens on :443: a direct TLS attempt gets a RST)
#                                                                          veth ew-e2e-s
#   ew-e2e-md     169.254.169.254 the fake instance-metadata service
#                                 (python3 http.server on :80)            veth ew-e2e-m
#   ew-e2e-sw     bridge br-e2e joining the other ends (ew-e2e-w?); egresswatch runs here,
#                 captures on br-e2e and serves its API on this namespace's own loopback
# Rules: sandbox 10.99.0.0/28 (the agent; the proxy too, but an allowed proxy is never
# judged), allow.proxies 10.99.0.2:8080, allow.resolvers 10.99.0.53; the other hosts are
# outside the sandbox.
#
# Traffic, from the agent, each client bounded (curl --max-time, ping -w, timeout):
#   allowed:   a DNS look-up at the resolver; GET /v1/ok through the proxy (absolute form,
#              as curl -x sends it) and GET /v1/models in origin form (an SDK's base URL)
#   refused:   /admin through the proxy in both forms, and /v1/ for another host (403)
#                                                                 -> proxy_denied, blocked
#   direct:    TCP to 10.99.0.80:443 (RST)                        -> proxy_bypass, blocked
#              GET http://10.99.0.80/v1/ok, no proxy (200)        -> proxy_bypass, answered
#   metadata:  GET http://169.254.169.254/latest/meta-data/       -> metadata_probe, answered
#   ping:      3 echoes to 10.99.0.80                             -> icmp_egress, answered
#   tunnel:    iodine (-r: no raw mode) through the resolver to iodined, a ping and 4 KB
#              of random data over the tunnel                     -> dns_tunnel, answered
# Assertions read the API (GET /api/v1/alerts?class=..., /api/v1/stats, /healthz),
# polling up to 10 s for each expected class; then the allowed traffic must have raised
# nothing (no proxy_bypass to the proxy, nothing about DNS to the resolver but the
# tunnel, no udp_egress); the stats must count packets and br-e2e's capture counters;
# SIGTERM must flush and exit 0, and `egresswatch alerts` must then read the same rows
# with every outcome settled (the shutdown ends every flow).
# Prints "N passed, N failed"; exit 0 when none failed, 1 otherwise (a set-up failure
# is a failure too), 77 when skipped. E2E_KEEP=DIR keeps the database and the logs. A trap stops every process started here (by pid,
# then whatever is left inside these namespaces) and deletes the namespaces on any exit.
set -u

EW=${1:?usage: e2e_bridge.sh EGRESSWATCH}
case $EW in /*) ;; *) EW=$PWD/$EW ;; esac
. "$(dirname "$0")/../lib/netns.sh"

NS_A=ew-e2e-agent
NS_P=ew-e2e-proxy
NS_D=ew-e2e-dns
NS_I=ew-e2e-iod
NS_S=ew-e2e-api
NS_M=ew-e2e-md
NS_W=ew-e2e-sw
ALL_NS="$NS_A $NS_P $NS_D $NS_I $NS_S $NS_M $NS_W"
BR=br-e2e
IP_A=10.99.0.10
IP_P=10.99.0.2
IP_D=10.99.0.53
IP_I=10.99.0.60
IP_S=10.99.0.80
IP_MD=169.254.169.254
TUN_SRV=10.99.1.1 # iodined's end of the tunnel (10.99.1.0/27); the agent gets .2
IOD_ZONE=t.example-tunnel.test
IOD_PASS=ew-e2e-iodine
PROXY=http://$IP_P:8080

say() { echo "e2e_bridge: $*"; }
skip() { echo "SKIP: e2e_bridge: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, a bridge, live capture)"
[ -x "$EW" ] || { echo "e2e_bridge: $EW: not an executable" >&2; exit 2; }
for t in ip nginx dnsmasq iodine iodined curl ping timeout; do
	command -v "$t" >/dev/null 2>&1 || skip "$t not found (./dev deps installs it)"
done
[ -x /sbin/ifconfig ] || skip "/sbin/ifconfig not found (iodine needs it: net-tools)"
[ -c /dev/net/tun ] || skip "/dev/net/tun missing (iodine needs a tun device)"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 2>/dev/null) || skip "python3 not found"
ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"

netns_init e2e_bridge /tmp/ew-e2e.XXXXXX "$ALL_NS" # TMP, PIDS, the cleanup trap
chmod 755 "$TMP"
NETNS_PIDFILES=1 # the cleanup also stops the pids in $TMP/*.pid (dnsmasq forks)
EW_PID=   # the sensor
IODINE_PID=

netns_hook_stop() { # the sensor first, with 5 s to flush its database
	[ -n "$EW_PID" ] && stop_pid "$EW_PID" TERM 50
}
netns_hook_report() { # netns_hook_report RC: E2E_KEEP, and the logs of a failed run
	if [ -n "${E2E_KEEP:-}" ] && mkdir -p "$E2E_KEEP" 2>/dev/null; then
		cp -r "$TMP"/. "$E2E_KEEP"/ && echo "e2e_bridge: kept the database and logs in $E2E_KEEP" >&2
	fi
	if [ "$1" -ne 0 ] && [ "$1" -ne 77 ]; then
		echo "e2e_bridge: exit $1; last lines of the logs:" >&2
		for f in "$TMP"/*.log "$TMP"/*.err; do
			[ -s "$f" ] || continue
			echo "--- ${f##*/}" >&2
			tail -n 8 "$f" >&2
		done
	fi
}

die() { echo "e2e_bridge: set-up failed: $*" >&2; exit 1; }

# leftovers of an interrupted run
netns_clear_leftovers

# --- the network ---------------------------------------------------------------------
for ns in $ALL_NS; do
	netns_create "$ns" || die "ip netns add $ns"
	netns_ipv4_only "$ns"
done
netns_switch "$NS_W" "$BR" || die "bridge $BR"
for x in "$NS_A:a:$IP_A/24" "$NS_P:p:$IP_P/24" "$NS_D:d:$IP_D/24" "$NS_I:i:$IP_I/24" \
	"$NS_S:s:$IP_S/24" "$NS_M:m:$IP_MD/32"; do
	IFS=: read -r ns c addr <<<"$x"
	netns_host "$ns" "ew-e2e-$c" "ew-e2e-w$c" "$addr" || die "veth ew-e2e-$c"
done
ip -n "$NS_A" route add "$IP_MD/32" dev ew-e2e-a src "$IP_A" || die "route to $IP_MD"
ip -n "$NS_M" route add 10.99.0.0/24 dev ew-e2e-m src "$IP_MD" || die "route from $IP_MD"

# --- the servers -----------------------------------------------------------------------
mkdir -p "$TMP/ngx-api" "$TMP/ngx-proxy" "$TMP/md/latest/meta-data"
nginx_conf() { # nginx_conf NAME SERVER-BLOCK: a self-contained nginx.conf in $TMP
	printf '%s\n' "$2" | netns_nginx_conf "nginx-$1"
}
# the "LLM API" host
nginx_conf api "
	server {
		listen $IP_S:80;
		location /v1/ { return 200 \"api ok \$request_uri\n\"; }
		location / { return 404; }
	}"
# the egress proxy: /v1/ goes to the API host, in origin form (Host: the proxy) or
# absolute form naming the API host; the rest is 403
nginx_conf proxy "
	server {
		listen $IP_P:8080 default_server;
		location /v1/ {
			if (\$host !~ ^(10\\.99\\.0\\.2|10\\.99\\.0\\.80)\$) { return 403 \"egress proxy: host not allowed\n\"; }
			proxy_pass http://$IP_S:80;
			proxy_http_version 1.1;
			proxy_connect_timeout 3s;
			proxy_read_timeout 5s;
		}
		location / { return 403 \"egress proxy: not allowed\n\"; }
	}"
printf 'ami-id\ninstance-id\niam/\n' >"$TMP/md/latest/meta-data/index.html"

cat >"$TMP/dnsmasq.conf" <<EOF
no-resolv
no-hosts
no-poll
user=root
group=root
listen-address=$IP_D
bind-interfaces
port=53
pid-file=$TMP/dnsmasq.pid
log-queries
log-facility=$TMP/dnsmasq.log
server=/$IOD_ZONE/$IP_I
address=/api.sandbox.internal/$IP_S
EOF

# A TCP sink behind iodined's end of the tunnel: reads to EOF, answers "received N".
# At most 4 connections, 20 s per socket, 120 s in all.
cat >"$TMP/sink.py" <<'EOF'
import socket, sys, time
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", 7000))
srv.listen(4)
open(sys.argv[1], "w").close()
deadline = time.monotonic() + 120
for _ in range(4):
    left = deadline - time.monotonic()
    if left <= 0:
        break
    srv.settimeout(left)
    try:
        c, _ = srv.accept()
    except OSError:
        break
    c.settimeout(20)
    n = 0
    try:
        while True:
            d = c.recv(4096)
            if not d:
                break
            n += len(d)
        c.sendall(b"received %d\n" % n)
    except OSError:
        pass
    finally:
        c.close()
    print("sink: received %d" % n, flush=True)
EOF

# Agent-side helpers: a DNS query (UDP, 2 s), and N bytes over TCP (20 s).
cat >"$TMP/client.py" <<'EOF'
import os, socket, struct, sys
mode = sys.argv[1]
if mode == "dns":
    server, name = sys.argv[2], sys.argv[3]
    q = struct.pack(">HHHHHH", os.getpid() & 0xFFFF, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    q += struct.pack(">HH", 1, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.sendto(q, (server, 53))
    try:
        r = s.recv(512)
    except socket.timeout:
        print("dns %s: no answer" % name)
        sys.exit(1)
    an = struct.unpack(">H", r[6:8])[0]
    addr = ".".join(str(b) for b in r[-4:]) if an else "-"
    print("dns %s: rcode %d, %d answers, %s" % (name, r[3] & 15, an, addr))
    sys.exit(0 if an else 1)
elif mode == "send":
    host, port, path = sys.argv[2], int(sys.argv[3]), sys.argv[4]
    data = open(path, "rb").read()
    s = socket.create_connection((host, port), timeout=20)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    r = b""
    while True:
        d = s.recv(512)
        if not d:
            break
        r += d
    print("send: %d bytes, %s" % (len(data), r.decode("latin-1").strip()))
    sys.exit(0 if r.strip() == b"received %d" % len(data) else 1)
EOF

netns_bg "$NS_S" nginx -e "$TMP/nginx-api.log" -c "$TMP/nginx-api.conf" -p "$TMP/ngx-api" \
	>"$TMP/nginx-api.err" 2>&1
netns_bg "$NS_P" nginx -e "$TMP/nginx-proxy.log" -c "$TMP/nginx-proxy.conf" \
	-p "$TMP/ngx-proxy" >"$TMP/nginx-proxy.err" 2>&1
netns_bg "$NS_M" "$PY" -m http.server 80 --bind "$IP_MD" --directory "$TMP/md" \
	>"$TMP/metadata.log" 2>&1
ip netns exec "$NS_D" dnsmasq --conf-file="$TMP/dnsmasq.conf" 2>"$TMP/dnsmasq.err" ||
	die "dnsmasq did not start: $(cat "$TMP/dnsmasq.err")"
netns_bg "$NS_I" iodined -f -c -l "$IP_I" -p 53 -P "$IOD_PASS" -d ew-e2e-dns0 \
	"$TUN_SRV/27" "$IOD_ZONE" >"$TMP/iodined.log" 2>&1
IODINED_PID=$NETNS_PID
netns_bg "$NS_I" "$PY" "$TMP/sink.py" "$TMP/sink.ready" >"$TMP/sink.log" 2>&1

# Ready? Probed from the agent before the sensor starts, so none of it is judged.
ready=
for _ in $(seq 1 50); do
	if [ -e "$TMP/sink.ready" ] &&
		ip netns exec "$NS_A" "$PY" "$TMP/client.py" dns "$IP_D" api.sandbox.internal >/dev/null 2>&1 &&
		ip netns exec "$NS_P" curl -s --max-time 2 "http://$IP_S/v1/ready" 2>/dev/null | grep -q "api ok" &&
		ip netns exec "$NS_A" curl -s --max-time 2 -x "$PROXY" "http://$IP_S/v1/ready" 2>/dev/null | grep -q "api ok" &&
		ip netns exec "$NS_A" curl -s --max-time 2 "http://$IP_MD/latest/meta-data/" 2>/dev/null | grep -q "ami-id"; then
		ready=1; break
	fi
	sleep 0.2
done
[ -n "$ready" ] || die "nginx (api or proxy), dnsmasq, the metadata server or the sink did not start"
kill -0 "$IODINED_PID" 2>/dev/null || die "iodined did not start: $(cat "$TMP/iodined.log")"

# --- the sensor ------------------------------------------------------------------------
cat >"$TMP/rules.yaml" <<EOF
sandbox:
  networks: [10.99.0.0/28]
allow:
  proxies: ["$IP_P:8080"]
  resolvers: ["$IP_D"]
EOF
"$EW" rules check "$TMP/rules.yaml" >"$TMP/rules-check.log" 2>&1 ||
	die "rules check: $(cat "$TMP/rules-check.log")"
DB=$TMP/e2e.db
netns_bg "$NS_W" "$EW" watch -c "$TMP/rules.yaml" -d "$DB" -i "$BR" \
	--api 127.0.0.1:0 --eve "$TMP/eve.json" >"$TMP/watch.out" 2>"$TMP/watch.log"
EW_PID=$NETNS_PID
API=
for _ in $(seq 1 50); do
	API=$(sed -n 's|.*serving API on \(http://127\.0\.0\.1:[0-9]*\)/.*|\1|p' "$TMP/watch.log" | head -n 1)
	[ -n "$API" ] && break
	kill -0 "$EW_PID" 2>/dev/null || break
	sleep 0.1
done
[ -n "$API" ] || die "egresswatch watch did not start its API: $(cat "$TMP/watch.log")"
api_get() { # api_get PATH: the body, from inside the switch namespace (its own loopback)
	ip netns exec "$NS_W" curl -sS --max-time 5 "$API$1"
}
healthy=
for _ in $(seq 1 50); do
	if [ "$(ip netns exec "$NS_W" curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$API/healthz")" = 200 ]; then
		healthy=1; break
	fi
	sleep 0.1
done
[ -n "$healthy" ] || die "GET /healthz did not answer 200"
grep -q "watching 1 interface" "$TMP/watch.log" || sleep 0.5
sleep 0.5 # the capture is open before the API starts; a moment for the ring

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }
check() { # check DESC CMD...: ok when CMD succeeds
	local d=$1
	shift
	if "$@"; then ok "$d"; else bad "$d"; fi
}
ok "watch -i $BR --api started; /healthz 200 ($API)"

# --- the agent's traffic ---------------------------------------------------------------
agent() { # agent CMD...: run in the agent namespace; output to agent.log and stdout
	echo "+ $*" >>"$TMP/agent.log"
	ip netns exec "$NS_A" "$@" 2>>"$TMP/agent.log" | tee -a "$TMP/agent.log"
	return "${PIPESTATUS[0]}"
}
code() { # code CURL-ARGS...: the HTTP status curl got ("000" when it got none)
	agent curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "$@"
}

out=$(agent "$PY" "$TMP/client.py" dns "$IP_D" api.sandbox.internal)
check "DNS look-up at the resolver answers ($out)" test $? -eq 0
c=$(code -x "$PROXY" "http://$IP_S/v1/ok")
check "allowed: GET http://$IP_S/v1/ok through the proxy -> 200 (got $c)" test "$c" = 200
c=$(code "$PROXY/v1/models")
check "allowed: GET /v1/models in origin form at the proxy -> 200 (got $c)" test "$c" = 200
c=$(code -x "$PROXY" "http://$IP_S/admin")
check "refused: GET http://$IP_S/admin through the proxy -> 403 (got $c)" test "$c" = 403
c=$(code -x "$PROXY" "http://$IP_I/v1/models")
check "refused: GET http://$IP_I/v1/models (not the API host) through the proxy -> 403 (got $c)" test "$c" = 403
c=$(code "$PROXY/admin/users")
check "refused: GET /admin/users in origin form at the proxy -> 403 (got $c)" test "$c" = 403
agent curl -sS --max-time 5 -o /dev/null "https://$IP_S/" >/dev/null 2>&1
rc=$?
check "direct: TCP to $IP_S:443 is refused (curl exit $rc, want 7)" test "$rc" -eq 7
c=$(code "http://$IP_S/v1/ok")
check "direct: GET http://$IP_S/v1/ok without the proxy -> 200 (a leak, got $c)" test "$c" = 200
c=$(code "http://$IP_MD/latest/meta-data/")
check "metadata: GET http://$IP_MD/latest/meta-data/ -> 200 (got $c)" test "$c" = 200
agent ping -n -c 3 -i 0.2 -W 2 -w 5 "$IP_S" >/dev/null
check "ping $IP_S answered" test $? -eq 0

# iodine: the client in the background (60 s at most); wait (30 s at most) for its tunnel
# address, then a ping and 4 KB of random data through the tunnel; stop the client
netns_bg "$NS_A" timeout 60 iodine -f -r -P "$IOD_PASS" -d ew-e2e-dns0 "$IP_D" "$IOD_ZONE" \
	>"$TMP/iodine.log" 2>&1
IODINE_PID=$NETNS_PID
up=
for _ in $(seq 1 150); do
	if ip -n "$NS_A" -4 addr show dev ew-e2e-dns0 2>/dev/null | grep -q "inet 10\.99\.1\."; then
		up=1; break
	fi
	kill -0 "$IODINE_PID" 2>/dev/null || break
	sleep 0.2
done
check "iodine: the tunnel came up through the resolver" test -n "$up"
if [ -n "$up" ]; then
	agent ping -n -c 1 -W 10 -w 12 "$TUN_SRV" >/dev/null
	check "iodine: ping $TUN_SRV through the tunnel" test $? -eq 0
	head -c 4096 /dev/urandom >"$TMP/payload"
	out=$(agent timeout 25 "$PY" "$TMP/client.py" send "$TUN_SRV" 7000 "$TMP/payload")
	check "iodine: 4 KB through the tunnel ($out)" test $? -eq 0
fi
stop_pid "$IODINE_PID" TERM
IODINE_PID=

# --- what the sensor saw, through the API ----------------------------------------------
# alerts.py CLASS SUBJECT-RE [SRC]: reads GET /api/v1/alerts bodies (or `alerts --json`
# lines) on stdin and prints "class count outcome subject src->dst:port" for the rows
# that match (CLASS "*": any)
cat >"$TMP/alerts.py" <<'EOF'
import json, re, sys
cls, subj = sys.argv[1], re.compile(sys.argv[2])
src = sys.argv[3] if len(sys.argv) > 3 else ""
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    d = json.loads(line)
    for a in d["alerts"] if "alerts" in d else [d]:  # an API page, or one --json line
        if (cls == "*" or a["class"] == cls) and subj.search(a.get("subject") or "") and \
                (not src or a.get("src_ip") == src):
            print(a["class"], a["count"], a["outcome"], a.get("subject"),
                  "%s->%s:%s" % (a.get("src_ip"), a.get("dst_ip"), a.get("dst_port")))
EOF
all_alerts() { # every alert, paged with since_id
	local since=0 body next
	for _ in $(seq 1 50); do
		body=$(api_get "/api/v1/alerts?since_id=$since&limit=100") || return 1
		echo "$body"
		next=$(echo "$body" | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["next_since_id"] if d["alerts"] else "")')
		[ -n "$next" ] && [ "$next" != "$since" ] || return 0
		since=$next
	done
}
expect() { # expect CLASS SUBJECT-REGEX OUTCOME DESC: poll (10 s) for such an alert from the agent
	local cls=$1 re=$2 want=$3 desc=$4 rows=
	for _ in $(seq 1 20); do
		rows=$(api_get "/api/v1/alerts?class=$cls&limit=500" | "$PY" "$TMP/alerts.py" "$cls" "$re" "$IP_A")
		[ -n "$rows" ] && echo "$rows" | grep -q " $want " && break
		sleep 0.5
	done
	if [ -z "$rows" ]; then
		bad "$desc: no $cls alert (subject ~ $re) within 10 s"
	elif echo "$rows" | grep -q " $want "; then
		ok "$desc: $(echo "$rows" | grep " $want " | head -n 1)"
	else
		local why=
		echo "$rows" | grep -q " unknown " &&
			why=" (unknown: not settled yet; a row's outcome settles when its flows end, by packet time)"
		bad "$desc: $cls raised, but outcome is not $want: $(echo "$rows" | tr '\n' ';')$why"
	fi
}
expect proxy_denied "^$IP_S/admin\$|^http://$IP_S/admin\$" blocked "proxy_denied for /admin through the proxy (absolute form)"
expect proxy_denied "^http://$IP_I/v1/models\$" blocked "proxy_denied for /v1/ to a host that is not the API's"
expect proxy_denied "admin/users" blocked "proxy_denied for /admin/users (origin form)"
expect proxy_bypass "^$IP_S:443\$" blocked "proxy_bypass for the direct connection to $IP_S:443 (RST)"
expect proxy_bypass "^$IP_S:80\$" answered "proxy_bypass for the direct GET to $IP_S:80 (answered: a leak)"
expect metadata_probe "169\.254\.169\.254" answered "metadata_probe for $IP_MD"
expect icmp_egress "^$IP_S\$" answered "icmp_egress for the ping to $IP_S"
expect dns_tunnel "example-tunnel\.test" answered "dns_tunnel for the iodine tunnel"

all_alerts >"$TMP/alerts.json" || bad "GET /api/v1/alerts (paging) failed"
"$PY" "$TMP/alerts.py" '*' '' <"$TMP/alerts.json" >"$TMP/alerts.txt"
say "alerts raised (class count outcome subject src->dst):"
sed 's/^/    /' "$TMP/alerts.txt"
n=$(grep -c "^proxy_bypass .* $IP_P:8080 " "$TMP/alerts.txt")
check "allowed: no proxy_bypass for the proxy $IP_P:8080 ($n rows)" test "$n" -eq 0
n=$(grep -c "^udp_egress " "$TMP/alerts.txt")
check "allowed: no udp_egress (DNS went to the allowed resolver; $n rows)" test "$n" -eq 0
n=$(grep -v "^dns_tunnel " "$TMP/alerts.txt" | grep -c -- "->$IP_D:")
check "allowed: nothing but dns_tunnel about traffic to the resolver $IP_D ($n rows)" test "$n" -eq 0
n=$(grep -c "sandbox\.internal " "$TMP/alerts.txt")
check "allowed: nothing about the look-up of api.sandbox.internal ($n rows)" test "$n" -eq 0
n=$(grep -v -c -- " $IP_A->" "$TMP/alerts.txt")
check "every alert is the agent's (the proxy's and resolver's upstream traffic is not judged; $n others)" \
	test "$n" -eq 0
n=$(grep -c -E "^proxy_denied [0-9]+ [a-z]+ (http://)?(10\.99\.0\.80|10\.99\.0\.2:8080)/v1/" "$TMP/alerts.txt")
check "allowed: no proxy_denied for the allowed /v1/ requests ($n rows)" test "$n" -eq 0

# stats: packets counted, br-e2e's capture counters written (every second)
sleep 1.2
api_get /api/v1/stats >"$TMP/stats.json"
stats=$("$PY" - "$TMP/stats.json" "$BR" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
c = s.get("capture", {}).get(sys.argv[2], {})
print(s.get("packets", -1), c.get("received", -1), c.get("dropped", -1))
EOF
) || stats="-1 -1 -1"
read -r st_pk st_rx st_dr <<<"$stats"
check "stats: packets > 0 (packets $st_pk)" test "$st_pk" -gt 0
check "stats: capture.$BR.received > 0 ($st_rx)" test "$st_rx" -gt 0
check "stats: capture.$BR.dropped reported ($st_dr)" test "$st_dr" -ge 0

# events: every address an event names is one of the test's hosts
api_get "/api/v1/events?limit=1000" >"$TMP/events.json"
strays=$("$PY" - "$TMP/events.json" <<'EOF'
import json, re, sys
hosts = re.compile(r"^(10\.99\.0\.(2|10|53|60|80)|169\.254\.169\.254)$")
ev = json.load(open(sys.argv[1]))
ev = ev.get("events", ev) if isinstance(ev, dict) else ev
bad = sorted({a for e in ev for a in (e.get("src_ip"), e.get("dst_ip")) if a and not hosts.match(a)})
print("%d %s" % (len(ev), " ".join(bad)))
EOF
) || strays="0 (events unreadable)"
nev=${strays%% *}
check "events: $nev stored, none to or from an address outside the test hosts${strays#"$nev"}" \
	test "$nev" -gt 0 -a "$strays" = "$nev "

# SIGTERM: flush and exit 0; the CLI reads the same alerts
kill -TERM "$EW_PID"
rc=
for _ in $(seq 1 100); do
	kill -0 "$EW_PID" 2>/dev/null || { wait "$EW_PID"; rc=$?; break; }
	sleep 0.1
done
[ -z "$rc" ] && { stop_pid "$EW_PID" KILL; rc=timeout; }
EW_PID=
check "watch exits 0 on SIGTERM (exit $rc)" test "$rc" = 0
# The rows as the store has them after the shutdown, which ends every flow: each
# flow's outcome is settled by then, whatever the API showed while it was open.
"$EW" alerts -d "$DB" --json --limit 100000 2>"$TMP/cli.err" |
	"$PY" "$TMP/alerts.py" '*' '' >"$TMP/alerts-final.txt"
n_api=$(wc -l <"$TMP/alerts.txt")
n_cli=$(wc -l <"$TMP/alerts-final.txt")
check "egresswatch alerts -d DB --json after SIGTERM: $n_cli rows, the API showed $n_api" \
	test "$n_cli" -ge "$n_api" -a "$n_api" -gt 0
settled() { # settled CLASS SUBJECT-REGEX OUTCOME DESC: in the final rows
	local rows
	rows=$(grep "^$1 " "$TMP/alerts-final.txt" | awk -v re="$2" '$4 ~ re')
	if [ -z "$rows" ]; then
		bad "after shutdown, $4: no $1 row"
	elif echo "$rows" | grep -q "^$1 [0-9]* $3 "; then
		ok "after shutdown, $4: $(echo "$rows" | grep "^$1 [0-9]* $3 " | head -n 1)"
	else
		bad "after shutdown, $4: outcome is not $3: $(echo "$rows" | tr '\n' ';')"
	fi
}
settled proxy_bypass "^$IP_S:443\$" blocked "proxy_bypass $IP_S:443 (RST)"
settled proxy_bypass "^$IP_S:80\$" answered "proxy_bypass $IP_S:80 (leak)"
settled metadata_probe "169[.]254[.]169[.]254" answered "metadata_probe $IP_MD"
settled icmp_egress "^$IP_S\$" answered "icmp_egress $IP_S"
# --eve: the file holds every stored event once, as `events --json` lists
# them, and each alert's last line is its row as `alerts --json` has it.
"$EW" events -d "$DB" --json >"$TMP/events-final.json" 2>>"$TMP/cli.err"
"$EW" alerts -d "$DB" --json --limit 100000 >"$TMP/alerts-final.json" 2>>"$TMP/cli.err"
eve=$("$PY" - "$TMP/eve.json" "$TMP/events-final.json" "$TMP/alerts-final.json" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
events = open(sys.argv[2]).read().splitlines()
alerts = {json.loads(l)["id"]: l for l in open(sys.argv[3]).read().splitlines()}
ev = [l for l in lines if '"kind":"alert"' not in l]
last = {}
for l in lines:
    if '"kind":"alert"' in l:
        last[json.loads(l)["id"]] = l.replace(',"kind":"alert"', "", 1)
print("%d %d %d %d" % (len(ev), ev == events, len(last), last == alerts))
EOF
) || eve="0 0 0 0"
read -r eve_n eve_same eve_na eve_asame <<<"$eve"
check "--eve: $eve_n event lines, exactly the $(wc -l <"$TMP/events-final.json") events stored" \
	test "$eve_same" = 1
check "--eve: the last line of each of $eve_na alerts is its row" \
	test "$eve_asame" = 1 -a "$eve_na" -gt 0
say "alerts after shutdown:"
sed 's/^/    /' "$TMP/alerts-final.txt"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
