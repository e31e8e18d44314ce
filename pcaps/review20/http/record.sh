#!/bin/bash
# record.sh OUTDIR - record review20's captures against real servers (root):
# review18's lab (../../review18/lab.sh: nginx, with large_client_header_buffers
# 4 32k on :83) under the names EW_LAB_NS (default ewh1: namespaces ewh1-c,
# ewh1-s, veth ewh1-c0/ewh1-s0) and EW_LAB_NET (default 10.95.0), plus echo.py
# (Python's http.server, echoing the Host and body it parsed) on :8001 of the
# server namespace. Each request is sent by ../../review18/send.py; what the
# server answered is printed (OUTDIR/*.answers). Writes
#   OUTDIR/nginx32k_far_host.pcap   heads of 66 KB and more to nginx :83
#   OUTDIR/python_far_host.pcap     the same kind to echo.py, a 20 KB status line
# Every address is a lab namespace host; every step times out; the namespaces
# are deleted on any exit.
set -eu
OUT=$(realpath "${1:?usage: record.sh OUTDIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
export EW_LAB_NS=${EW_LAB_NS:-ewh1} EW_LAB_NET=${EW_LAB_NET:-10.95.0} EW_LAB_HEADER_TIMEOUT=30s
export EW_LAB_SERVER=$EW_LAB_NET.80
LAB=$HERE/../../review18/lab.sh
# send.py runs in the client namespace: its only route is the lab link
SEND="ip netns exec $EW_LAB_NS-c timeout 20 /usr/bin/python3 $HERE/../../review18/send.py"
T=/tmp/$EW_LAB_NS-lab
cleanup() {
	[ -f $T/echo.pid ] && kill "$(cat $T/echo.pid)" 2>/dev/null || true
	[ -f $T/cap.pid ] && kill -INT "$(cat $T/cap.pid)" 2>/dev/null || true
	"$LAB" down >/dev/null 2>&1 || true
}
trap cleanup EXIT
"$LAB" down >/dev/null 2>&1 || true
"$LAB" up
(exec ip netns exec $EW_LAB_NS-s timeout 600 /usr/bin/python3 "$HERE/echo.py" $EW_LAB_SERVER 8001 \
	>$T/echo.log 2>&1) & echo $! >$T/echo.pid
sleep 1

FAKE='b"GET /fake HTTP/1.1\r\nHost: fake.test\r\n\r\n"'       # 39 bytes: the body
NEXT='b"GET /next HTTP/1.1\r\nHost: www.decoy.test\r\n\r\n"'  # the real next request

# nginx with 4 buffers of 32k: each line fits one, the head four
"$LAB" cap-start "$OUT/nginx32k_far_host.pcap"
{
echo "== A: 3 field lines of 22,000 bytes (66 KB), then Host, Content-Length: 39, a body that looks like a request, the next request"
$SEND 83 "b'POST /far-cl HTTP/1.1\r\n' + (b'X-Filler: ' + b'f'*21988 + b'\r\n')*3 + b'Host: www.evil.test\r\nContent-Length: 39\r\n\r\n' + $FAKE + $NEXT" w
echo "== B: 66 field lines of 1,000 bytes, then Host, Transfer-Encoding: chunked, a chunk that looks like a request, the next request"
$SEND 83 "b'POST /far-chunked HTTP/1.1\r\n' + (b'X-Filler: ' + b'f'*988 + b'\r\n')*66 + b'Host: www.evil.test\r\nTransfer-Encoding: chunked\r\n\r\n27\r\n' + $FAKE + b'\r\n0\r\n\r\n' + $NEXT" w
echo "== E: a bare CR in the middle of a 20 KB field line, a Host after it"
$SEND 83 "b'GET /bare-cr HTTP/1.1\r\nX-Long: ' + b'v'*12000 + b'\rHost: www.evil.test\r\n\r\n'" w
echo "== F: a NUL in the middle of a 20 KB field line"
$SEND 83 "b'GET /nul HTTP/1.1\r\nHost: www.evil.test\r\nX-Long: ' + b'v'*12000 + b'\x00' + b'v'*8000 + b'\r\n\r\n' + $NEXT" w
} 2>&1 | cut -c1-400 | tee "$OUT/nginx32k_far_host.answers"
"$LAB" cap-stop

"$LAB" cap-start "$OUT/python_far_host.pcap"
{
echo "== C: 2 field lines of 33,000 bytes, then Host, Content-Length: 39, a body that looks like a request, the next request"
$SEND 8001 "b'POST /far-cl HTTP/1.1\r\n' + (b'X-Filler: ' + b'f'*32988 + b'\r\n')*2 + b'Host: www.evil.test\r\nContent-Length: 39\r\n\r\n' + $FAKE + $NEXT" w
echo "== D: curl, two URLs on one connection; the first answered with a 20,000-byte reason phrase"
ip netns exec $EW_LAB_NS-c curl -s --max-time 5 -o /dev/null -w '%{http_code} %{num_connects}\n' \
	http://www.decoy.test:8001/longstatus http://www.decoy.test:8001/after \
	--resolve www.decoy.test:8001:$EW_LAB_SERVER || true
echo "== E: a bare CR in the middle of a 20 KB field line, a Host after it"
$SEND 8001 "b'GET /bare-cr HTTP/1.1\r\nX-Long: ' + b'v'*12000 + b'\rHost: www.evil.test\r\n\r\n'" w
echo "== F: a NUL in the middle of a 20 KB field line"
$SEND 8001 "b'GET /nul HTTP/1.1\r\nHost: www.evil.test\r\nX-Long: ' + b'v'*12000 + b'\x00' + b'v'*8000 + b'\r\n\r\n' + $NEXT" w
} 2>&1 | cut -c1-400 | tee "$OUT/python_far_host.answers"
"$LAB" cap-stop
ls -l "$OUT"/*.pcap
