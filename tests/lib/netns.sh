# tests/lib/netns.sh - shared plumbing for the scripts that build private test networks
# out of Linux network namespaces joined by a bridge:
#   pcaps/record_web.sh, pcaps/record_detect.sh  (recorders of the committed captures)
#   tests/live/e2e_bridge.sh                     (the end-to-end test)
#
# Sourced, never run. Bash only (arrays, PIPESTATUS-free but `declare -F` and `+=`); the
# three scripts run with bash. Every function works the same with or without `set -e`:
# what may fail returns non-zero to its caller, what must not fail the script ends in
# `|| true`. It touches nothing outside the namespaces it is given: every veth is created
# with both ends inside them, no route, NAT or link to the host's interfaces is added.
#
# Typical use:
#   . "$(dirname "$0")/../tests/lib/netns.sh"
#   netns_init my-script.sh /tmp/ew-my.XXXXXX "$ALL_NS"   # $TMP, PIDS, trap cleanup
#   netns_clear_leftovers                                   # an interrupted run's namespaces
#   netns_create $ALL_NS; netns_ipv4_only ...
#   netns_switch "$NS_W" "$BR"
#   netns_host "$NS_A" "$IF_A" "$PORT_A" 10.99.0.10/24 ...
#   netns_bg "$NS_S" daemon ... >"$TMP/daemon.log" 2>&1     # pid remembered in PIDS
#   netns_audit_start 300                                   # safety capture on the ports
#   ...
#   netns_audit_finish 'ALLOWED-ERE'                        # stop it, check destinations
#
# State the library owns (global, read freely by the scripts):
#   TMP          the run's temporary folder (netns_init); removed by the cleanup
#   PIDS         every background process started through netns_bg / the captures
#   NETNS_PID    the pid netns_bg started last
#   DUMPCAP_PID  the capture netns_capture_start is running now (empty when none)
#   AUDIT_PID    the safety capture on the switch ports (empty when none)
#   NETNS_ME     the script's name, the prefix of every message
#   NETNS_NAMES  the namespaces the cleanup kills into and deletes
#   NETNS_SWITCH, NETNS_BRIDGE, NETNS_PORTS  the switch namespace, its bridge, and the
#                switch-side veth ends netns_host put into it
# Settings the scripts may change (before the call that reads them):
#   NETNS_OFFLOAD_OFF=1  netns_host turns checksum/TSO/GSO/GRO offloads off on both ends
#                        of every veth (ethtool; the recorders want wire-size segments)
#   NETNS_PIDFILES=1     the cleanup also stops every pid written in "$TMP"/*.pid
#                        (daemons that fork: dnsmasq, nginx's pidfile, ...)
# Hooks a script may define (functions, called by the cleanup if they exist):
#   netns_hook_stop      first, before the remembered pids are stopped (e2e: the sensor)
#   netns_hook_report RC after the namespaces are gone, before $TMP is removed; without
#                        it a non-zero RC prints "$NETNS_ME: failed (exit RC); logs:" and
#                        the last 5 lines of "$TMP"/*.log and *.err on stderr

NETNS_OFFLOAD_OFF=
NETNS_PIDFILES=
NETNS_PORTS=
NETNS_PID=
DUMPCAP_PID=
AUDIT_PID=
PIDS=()

# stop_pid PID SIGNAL [TENTHS]: send SIGNAL to PID, wait up to TENTHS tenths of a second
# (default 20: 2 s) for it to end, then SIGKILL. Always returns 0; a PID already gone is
# left alone.
stop_pid() {
	kill -0 "$1" 2>/dev/null || return 0
	kill -"$2" "$1" 2>/dev/null
	for _ in $(seq 1 "${3:-20}"); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
	return 0
}

# netns_init ME TEMPLATE NAMES: creates the run's temporary folder TMP=$(mktemp -d
# TEMPLATE), remembers ME (messages) and NAMES (a space-separated list of namespaces,
# which need not exist yet), empties PIDS, and installs the traps: netns_cleanup on EXIT,
# and `exit 130` on INT and TERM (so an interrupted run cleans up too).
# Undone by: netns_cleanup (which removes TMP).
netns_init() {
	NETNS_ME=$1
	NETNS_NAMES=$3
	TMP=$(mktemp -d "$2")
	PIDS=()
	trap netns_cleanup EXIT
	trap 'exit 130' INT TERM
}

# netns_kill_inside: SIGKILL every process still inside one of NETNS_NAMES (all of them
# were started by this script: nginx workers, daemons that forked, ...). Returns 0.
netns_kill_inside() {
	local ns p
	for ns in $NETNS_NAMES; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
	done
	return 0
}

# netns_clear_leftovers: the namespaces of an interrupted earlier run: kills what is in
# each of NETNS_NAMES and deletes it (namespaces that do not exist are skipped).
netns_clear_leftovers() {
	local ns p
	for ns in $NETNS_NAMES; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
		ip netns del "$ns" 2>/dev/null || true
	done
	return 0
}

# netns_cleanup: the EXIT trap (installed by netns_init); exits with the status the
# script was leaving with. In order: SIGINT to the running capture (DUMPCAP_PID) and to
# the safety capture (AUDIT_PID), so they write their files out; the hook
# netns_hook_stop; SIGTERM to every pid in PIDS and, with NETNS_PIDFILES, in
# "$TMP"/*.pid (each escalated to SIGKILL after 2 s); SIGKILL to whatever is still inside
# NETNS_NAMES; deletes those namespaces (and with them every veth and the bridge);
# netns_hook_report RC (or the default failure report); removes TMP.
netns_cleanup() {
	rc=$?
	set +e
	[ -n "$DUMPCAP_PID" ] && stop_pid "$DUMPCAP_PID" INT
	[ -n "$AUDIT_PID" ] && stop_pid "$AUDIT_PID" INT
	declare -F netns_hook_stop >/dev/null && netns_hook_stop
	for p in "${PIDS[@]}"; do stop_pid "$p" TERM; done
	if [ -n "$NETNS_PIDFILES" ]; then
		for f in "$TMP"/*.pid; do
			[ -s "$f" ] && stop_pid "$(cat "$f")" TERM
		done
	fi
	netns_kill_inside
	for ns in $NETNS_NAMES; do ip netns del "$ns" 2>/dev/null; done
	if declare -F netns_hook_report >/dev/null; then
		netns_hook_report "$rc"
	elif [ "$rc" -ne 0 ]; then
		echo "$NETNS_ME: failed (exit $rc); logs:" >&2
		tail -n 5 "$TMP"/*.log "$TMP"/*.err >&2 2>/dev/null
	fi
	rm -rf "$TMP"
	exit "$rc"
}

# netns_create NS...: creates each namespace and sets its loopback up. Returns 1 at the
# first `ip netns add` that fails. Undone by: netns_cleanup (ip netns del).
netns_create() {
	local ns
	for ns in "$@"; do
		ip netns add "$ns" || return 1
		ip -n "$ns" link set lo up
	done
}

# netns_ipv4_only NS...: disables IPv6 in each namespace (all and default), so no router
# or neighbour solicitation leaves it.
netns_ipv4_only() {
	local ns
	for ns in "$@"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	done
}

# netns_ipv6_static NS...: IPv6 stays on, but only with the addresses given explicitly:
# router advertisements are ignored and no link-local address is generated.
netns_ipv6_static() {
	local ns
	for ns in "$@"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_ra=0
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.accept_ra=0
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.addr_gen_mode=1
	done
}

# offload_off NS IF: checksum, TSO, GSO and GRO offloads off on IF in NS (ethtool), or,
# where rx/gro cannot be changed, at least tx checksum, TSO and GSO; returns the status
# of that second attempt.
offload_off() {
	ip netns exec "$1" ethtool -K "$2" tx off rx off tso off gso off gro off >/dev/null 2>&1 ||
		ip netns exec "$1" ethtool -K "$2" tx off tso off gso off >/dev/null
}

# netns_switch NS BRIDGE: the switch: a bridge BRIDGE (no STP, no multicast snooping, so
# it forwards at once and floods everything) in the existing namespace NS, set up.
# Remembers both for netns_host. Returns 1 if the bridge cannot be created.
# Undone by: netns_cleanup (deleting NS deletes the bridge).
netns_switch() {
	NETNS_SWITCH=$1
	NETNS_BRIDGE=$2
	NETNS_PORTS=
	ip -n "$1" link add "$2" type bridge stp_state 0 mcast_snooping 0 || return 1
	ip -n "$1" link set "$2" up
}

# netns_host NS IF PORT [ADDR/LEN...]: plugs the existing namespace NS into the switch:
# a veth IF (in NS) <-> PORT (in the switch namespace), created with both ends already
# in place; PORT joins the bridge and goes up (and is added to NETNS_PORTS); with
# NETNS_OFFLOAD_OFF both ends get offload_off; each ADDR/LEN is added to IF in order
# (an IPv6 one, with a ':', without duplicate address detection: nodad); IF goes up.
# No route is added but the on-link ones the kernel derives from the addresses.
# Returns 1 if the veth cannot be created (or, with NETNS_OFFLOAD_OFF, the offloads
# cannot be changed). Undone by: netns_cleanup (deleting NS deletes both ends).
netns_host() {
	local ns=$1 ifc=$2 port=$3 a
	shift 3
	ip link add "$ifc" netns "$ns" type veth peer name "$port" netns "$NETNS_SWITCH" || return 1
	if [ -n "$NETNS_OFFLOAD_OFF" ]; then
		offload_off "$NETNS_SWITCH" "$port" || return 1
		offload_off "$ns" "$ifc" || return 1
	fi
	ip -n "$NETNS_SWITCH" link set "$port" master "$NETNS_BRIDGE"
	ip -n "$NETNS_SWITCH" link set "$port" up
	NETNS_PORTS="$NETNS_PORTS $port"
	for a in "$@"; do
		case $a in
		*:*) ip -n "$ns" addr add "$a" dev "$ifc" nodad ;;
		*) ip -n "$ns" addr add "$a" dev "$ifc" ;;
		esac
	done
	ip -n "$ns" link set "$ifc" up
}

# netns_bg NS CMD...: starts CMD inside NS in the background (redirect the call:
# `netns_bg NS cmd >log 2>&1`), remembers its pid in PIDS and NETNS_PID.
# Undone by: netns_cleanup (SIGTERM, then SIGKILL; and anything left in NS).
netns_bg() {
	local ns=$1
	shift
	ip netns exec "$ns" "$@" &
	NETNS_PID=$!
	PIDS+=("$NETNS_PID")
}

# netns_wait_capturing PID ERRFILE: waits (5 s at most) until the dumpcap PID says
# "Capturing on" in ERRFILE; returns 1 if it does not (or dies first).
netns_wait_capturing() {
	for _ in $(seq 1 50); do
		if grep -q "Capturing on" "$2" 2>/dev/null; then return 0; fi
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}

# netns_audit_start SECONDS: the safety capture: dumpcap in the switch namespace on
# every port of NETNS_PORTS (snaplen 128, stopping by itself after SECONDS) into
# "$TMP/audit.pcapng"; AUDIT_PID. Exits the script (1) if it does not start.
# Undone by: netns_audit_finish, or netns_cleanup (SIGINT).
netns_audit_start() {
	local w ifargs=()
	for w in $NETNS_PORTS; do ifargs+=(-i "$w"); done
	netns_bg "$NETNS_SWITCH" dumpcap -q "${ifargs[@]}" -s 128 -a duration:"$1" \
		-w "$TMP/audit.pcapng" 2>"$TMP/audit.err"
	AUDIT_PID=$NETNS_PID
	netns_wait_capturing "$AUDIT_PID" "$TMP/audit.err" ||
		{ echo "$NETNS_ME: dumpcap (audit) did not start" >&2; exit 1; }
}

# netns_audit_finish ALLOWED-ERE: stops the safety capture and checks it: every
# destination address in it (IPv4, IPv6, ARP target) must match ALLOWED-ERE as a whole
# line; prints "$NETNS_ME: audit: destinations seen: ..." when so, and exits the script
# (1) when the capture is empty or a packet went anywhere else. Without tshark it says
# the audit is skipped (stderr) and returns 0.
netns_audit_finish() {
	local bad
	stop_pid "$AUDIT_PID" INT
	wait "$AUDIT_PID" 2>/dev/null || true
	AUDIT_PID=
	if ! command -v tshark >/dev/null; then
		echo "$NETNS_ME: tshark not found, address audit skipped" >&2
		return 0
	fi
	tshark -r "$TMP/audit.pcapng" -T fields -e ip.dst -e ipv6.dst -e arp.dst.proto_ipv4 \
		2>/dev/null | sed 's/[\t,]/\n/g' | sed '/^$/d' | sort -u >"$TMP/audit.dst"
	bad=$(grep -v -x -E "$1" "$TMP/audit.dst" || true)
	[ -s "$TMP/audit.dst" ] || { echo "$NETNS_ME: audit capture is empty" >&2; exit 1; }
	if [ -n "$bad" ]; then
		echo "$NETNS_ME: packets to addresses outside the test hosts: $(echo "$bad" | tr '\n' ' ')" >&2
		exit 1
	fi
	echo "$NETNS_ME: audit: destinations seen: $(tr '\n' ' ' <"$TMP/audit.dst")"
}

# netns_capture_start NS IF NAME FILTER [SECONDS]: one capture file: dumpcap in NS on IF
# (pcap format, full packets, capture filter FILTER, stopping by itself after SECONDS,
# default 60) into "$TMP/NAME.pcap"; DUMPCAP_PID. Exits the script (1) if it does not
# start; otherwise waits 0.3 s more before returning. Undone by: netns_capture_stop, or
# netns_cleanup (SIGINT).
netns_capture_start() {
	: >"$TMP/dumpcap.err"
	netns_bg "$1" dumpcap -q -i "$2" -P -s 65535 -f "$4" -a duration:"${5:-60}" \
		-w "$TMP/$3.pcap" 2>"$TMP/dumpcap.err"
	DUMPCAP_PID=$NETNS_PID
	netns_wait_capturing "$DUMPCAP_PID" "$TMP/dumpcap.err" ||
		{ echo "$NETNS_ME: dumpcap did not start" >&2; exit 1; }
	sleep 0.3
}

# netns_capture_stop [--strict]: after 0.5 s (the last answers), SIGINT to DUMPCAP_PID,
# waits (5 s at most) for it to write its file, and forgets it. With --strict, a
# capture that already ended by itself (its time limit ran out: the file is cut short)
# makes it return 1 at once.
netns_capture_stop() {
	sleep 0.5
	if [ "${1:-}" = --strict ]; then
		kill -INT "$DUMPCAP_PID" || return 1
	else
		kill -INT "$DUMPCAP_PID" 2>/dev/null || true
	fi
	for _ in $(seq 1 50); do kill -0 "$DUMPCAP_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$DUMPCAP_PID" 2>/dev/null || true
	DUMPCAP_PID=
}

# netns_nginx_conf STEM [PIDFILE [FORMAT]] <SERVERS: writes "$TMP/STEM.conf", the
# configuration of a test nginx: one worker in the foreground as root, its error log
# "$TMP/STEM.log", its pid in PIDFILE (default "$TMP/STEM.pid"), and an http block with
# the access log "$TMP/STEM-access.log" (in FORMAT, a whole `log_format NAME ...;`
# directive, when given), temporary files under "$TMP/ngx" plus what follows "nginx" in
# STEM (made here), text/plain, no server tokens and 5 s timeouts, then what stdin holds
# (http directives and server blocks), then the block's closing brace. The recorders and
# the end-to-end test call it, so each of their servers differs only in its own blocks.
netns_nginx_conf() {
	local stem=$1 pidf=${2:-$TMP/$1.pid} fmt=${3:-} tmpd=$TMP/ngx${1#nginx} name=
	[ -n "$fmt" ] && name=" $(echo "$fmt" | awk '{print $2}')"
	mkdir -p "$tmpd"
	{
		cat <<EOF
worker_processes 1;
daemon off;
user root root;
error_log $TMP/$stem.log info;
pid $pidf;
events { worker_connections 64; }
http {
EOF
		[ -n "$fmt" ] && printf '\t%s\n' "$fmt"
		cat <<EOF
	access_log $TMP/$stem-access.log$name;
	client_body_temp_path $tmpd/body;
	proxy_temp_path $tmpd/proxy;
	fastcgi_temp_path $tmpd/fastcgi;
	uwsgi_temp_path $tmpd/uwsgi;
	scgi_temp_path $tmpd/scgi;
	default_type text/plain;
	server_tokens off;
	keepalive_timeout 5s;
	client_body_timeout 5s;
	client_header_timeout 5s;
	send_timeout 5s;
EOF
		cat
		echo "}"
	} >"$TMP/$stem.conf"
}

# netns_log_exec NS LOG CMD...: runs CMD inside NS, appending "+ CMD", its output and,
# if it fails, "  (exit N)" and a blank line to LOG; never fails; then 0.1 s pause.
netns_log_exec() {
	local ns=$1 log=$2
	shift 2
	echo "+ $*" >>"$log"
	ip netns exec "$ns" "$@" >>"$log" 2>&1 || echo "  (exit $?)" >>"$log"
	echo >>"$log"
	sleep 0.1
}
