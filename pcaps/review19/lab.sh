#!/bin/bash
# lab.sh (review19) up|down|cap-start NAME|cap-stop - review18's lab (../review18/lab.sh)
# under other names: ew-rv19-c 10.96.0.10 (the agent) <-veth-> ew-rv19-s 10.96.0.80
# (nginx :80-84, squid :3128, python3 http.server :8000), nginx's client_header_timeout
# 30 s (the slow request lines of R19-4). Use ../review18/send.py with
# EW_LAB_SERVER=10.96.0.80.
EW_LAB_NS=ew-rv19 EW_LAB_NET=10.96.0 EW_LAB_HEADER_TIMEOUT=30s \
	exec "$(dirname "$0")/../review18/lab.sh" "$@"
