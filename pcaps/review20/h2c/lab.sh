#!/bin/bash
# lab.sh (review20/h2c) up|down|cap-start NAME|cap-stop - review18's lab
# (../../review18/lab.sh) under other names: ewh2-c 10.93.20.10 (the client)
# <-veth-> ewh2-s 10.93.20.80 (nginx 1.22: h2c on :82, h2c with
# large_client_header_buffers 4 128k on :85; nghttpd --no-tls on :8082).
EW_LAB_NS=ewh2 EW_LAB_NET=10.93.20 EW_LAB_NGHTTPD=8082 \
	exec "$(dirname "$0")/../../review18/lab.sh" "$@"
