#!/bin/bash
# record_h2c.sh - record real `curl --http2-prior-knowledge` against nginx's
# cleartext HTTP/2 into pcaps/h2c_curl_nginx.pcap
#
# README
#   sudo pcaps/record_h2c.sh [OUTDIR]          (default: the folder of this script)
#
# Needs root, iproute2, ethtool, nginx (1.22: `listen ... http2` without ssl
# speaks HTTP/2 with prior knowledge), curl (built with nghttp2, as Debian's),
# python3 with python3-h2, and dumpcap (wireshark-common); tshark, if present,
# audits the run.
# It builds a private three-namespace network and nothing else:
#   ewh2-agent   10.99.0.10/24                          on veth ewh2-a
#   ewh2-server  10.99.0.80/24 and the fake metadata host 169.254.169.254/32
#                (nginx on :80, HTTP/2 only)            on veth ewh2-s
#   ewh2-switch  a bridge ewh2-br joining the other ends ewh2-wa/-ws
# Every veth is created with both ends already inside these namespaces; the root
# namespace's interfaces are not touched. No default route, no NAT, no link to the
# host's interfaces: the only routes are the on-link 10.99.0.0/24 and, in the agent,
# 169.254.169.254/32 on-link. IPv6 is off. Offloads are off on every veth, so the
# capture holds wire-size segments with real checksums.
#
# dumpcap captures on the agent's veth ("tcp port 80") into h2c_curl_nginx.pcap:
#   - curl for /;
#   - three requests on one connection (python3-h2: curl 7.88 does not reuse a prior-
#     knowledge connection), the second and third's fields from HPACK's dynamic
#     table: /, a 404, and a 40 KB download (DATA far past the 16 KiB window);
#   - a POST with a body;
#   - the metadata service's credentials path, to 169.254.169.254;
#   - a request with 60 custom headers (about 4 KB of them): they fill curl's
#     dynamic table (4096 bytes) and evict its entries.
# Every client is bounded (curl --max-time 5); the capture stops by itself after 60 s.
# A second dumpcap on the switch ports records everything (and stops by itself after
# 120 s); at the end tshark checks that no packet went to an address other than these
# hosts' (the run fails otherwise). A trap kills every process started here (by pid,
# then whatever is left inside these namespaces) and deletes the namespaces on any exit.
#
# The capture is real traffic, so ports and timestamps differ on every run: record
# once and commit the file; the golden test then pins its events.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/lib/netns.sh"
OUTDIR=${1:-$HERE}
NS_A=ewh2-agent
NS_S=ewh2-server
NS_W=ewh2-switch
ALL_NS="$NS_A $NS_S $NS_W"
IP_A=10.99.0.10
IP_S=10.99.0.80
IP_MD=169.254.169.254
D=h2.example.test

netns_init record_h2c.sh /tmp/ew-record-h2c.XXXXXX "$ALL_NS" # TMP, PIDS, the cleanup trap

[ "$(id -u)" -eq 0 ] || { echo "record_h2c.sh: must run as root" >&2; exit 2; }
for t in ip ethtool nginx curl dumpcap timeout /usr/bin/python3; do
	command -v "$t" >/dev/null || { echo "record_h2c.sh: $t not found" >&2; exit 2; }
done

# leftovers of an interrupted run
netns_clear_leftovers

# --- the network ---------------------------------------------------------------------
netns_create $ALL_NS
netns_ipv4_only $ALL_NS
NETNS_OFFLOAD_OFF=1
netns_switch "$NS_W" ewh2-br
netns_host "$NS_A" ewh2-a ewh2-wa "$IP_A/24"
netns_host "$NS_S" ewh2-s ewh2-ws "$IP_S/24" "$IP_MD/32"
ip -n "$NS_A" route add "$IP_MD/32" dev ewh2-a src "$IP_A"

netns_audit_start 120

# --- the server ------------------------------------------------------------------------
netns_nginx_conf nginx <<EOF
	server {
		listen $IP_S:80 http2;
		server_name www.$D;
		location = / { return 200 "egresswatch h2c test server\n"; }
		location = /big { root $TMP/www; }
		location = /upload { return 201 "stored\n"; }
		location / { return 404; }
	}
	server {
		listen $IP_MD:80 http2;
		server_name metadata.internal;
		location /latest/meta-data/ { return 200 "ami-id\ninstance-id\niam/\n"; }
		location / { return 404; }
	}
EOF
mkdir -p "$TMP/www"
head -c 40000 /dev/zero | tr '\0' 'x' >"$TMP/www/big"

netns_bg "$NS_S" nginx -e "$TMP/nginx.log" -c "$TMP/nginx.conf" -p "$TMP/ngx" \
	>"$TMP/nginx.err" 2>&1

ready=
for _ in $(seq 1 30); do
	if ip netns exec "$NS_A" curl -s --http2-prior-knowledge --max-time 2 "http://$IP_S/" \
		2>/dev/null | grep -q "h2c test server"; then
		ready=1; break
	fi
	sleep 0.2
done
[ -n "$ready" ] || { echo "record_h2c.sh: nginx did not come up" >&2; exit 1; }

# Several requests on one connection, one after the other: curl 7.88 fails to reuse
# a prior-knowledge connection ("Connected to (nil)", exit 16), so python3-h2 sends
# them. Each socket read times out after 5 s.
cat >"$TMP/h2client.py" <<'EOF'
import socket, sys
import h2.connection, h2.events
host, authority, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
s = socket.create_connection((host, 80), timeout=5)
c = h2.connection.H2Connection()
c.initiate_connection()
s.sendall(c.data_to_send())
for path in paths:
    sid = c.get_next_available_stream_id()
    c.send_headers(sid, [(":method", "GET"), (":scheme", "http"), (":authority", authority),
                         (":path", path), ("user-agent", "python-h2/4.1.0")], end_stream=True)
    s.sendall(c.data_to_send())
    done, got = False, 0
    while not done:
        data = s.recv(65536)
        if not data:
            sys.exit("connection closed")
        for ev in c.receive_data(data):
            if isinstance(ev, h2.events.DataReceived):
                got += len(ev.data)
                c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id == sid:
                done = True
        s.sendall(c.data_to_send())
    print("%s: %d bytes" % (path, got))
c.close_connection()
s.sendall(c.data_to_send())
s.close()
EOF

# --- the capture -------------------------------------------------------------------------
# names reach nginx through --connect-to (no DNS here), so :authority is the name
C="curl -s --http2-prior-knowledge --max-time 5 --connect-to www.$D:80:$IP_S:80"
W=http://www.$D
netns_capture_start "$NS_A" ewh2-a h2c_curl_nginx "tcp port 80"
L=$TMP/clients.log
netns_log_exec "$NS_A" "$L" $C -o /dev/null "$W/"
netns_log_exec "$NS_A" "$L" /usr/bin/python3 "$TMP/h2client.py" "$IP_S" "www.$D" / /missing /big
netns_log_exec "$NS_A" "$L" $C -o /dev/null -d "name=agent&secret=42" "$W/upload"
netns_log_exec "$NS_A" "$L" $C -o /dev/null "http://$IP_MD/latest/meta-data/iam/security-credentials/"
hdrs=()
for i in $(seq 1 60); do hdrs+=(-H "x-agent-field-$i: value-$i-$(printf '%040d' "$i")"); done
netns_log_exec "$NS_A" "$L" $C -o /dev/null "${hdrs[@]}" "$W/many"
netns_capture_stop --strict

netns_audit_finish "$IP_A|$IP_S|$IP_MD"

cp "$TMP/h2c_curl_nginx.pcap" "$OUTDIR/h2c_curl_nginx.pcap"
echo "record_h2c.sh: wrote $OUTDIR/h2c_curl_nginx.pcap"
cat "$L"
