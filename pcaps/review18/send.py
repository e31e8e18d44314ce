#!/usr/bin/python3
"""send.py PORT STEP... - one TCP connection to 10.98.0.80:PORT (the server named by
EW_LAB_SERVER, if set: review19's lab is 10.96.0.80); each STEP is a Python
bytes literal to send, or 'w' (read the answer for up to 1.5 s), or 's0.5' (sleep).
Prints what came back. Every socket times out after 3 s."""
import socket, sys, time, ast, os
s = socket.create_connection((os.environ.get("EW_LAB_SERVER", "10.98.0.80"), int(sys.argv[1])),
                             timeout=3)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
def rd(t=1.5):
    s.settimeout(t); out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b: out += b"<EOF>"; break
            out += b
    except socket.timeout: pass
    return out
for st in sys.argv[2:]:
    if st == "w": print("<<", rd())
    elif st.startswith("s"): time.sleep(float(st[1:]))
    else: s.sendall(eval(st))
print("<< end", rd(1.0)); s.close()
