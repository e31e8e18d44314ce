#!/usr/bin/python3
"""copies_flood.py same|diff SECONDS - run in the agent namespace of lab.sh: send
60-byte UDP datagrams to 10.96.0.80:7777 as fast as one socket goes for SECONDS
(same: one datagram repeated; diff: a counter in the payload), and meanwhile 40 DNS
queries, probe-N.flood.test, to 10.96.0.80:53 every SECONDS/40 (from a second
process). Prints the datagrams sent."""
import os, socket, struct, sys, time
mode, secs = sys.argv[1], float(sys.argv[2])
if os.fork() == 0:
    q = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(40):
        name = b"".join(bytes([len(l)]) + l for l in (b"probe-%d" % i, b"flood", b"test")) + b"\0"
        q.sendto(struct.pack("!HHHHHH", 0x1000 + i, 0x0100, 1, 0, 0, 0) + name + b"\0\1\0\1",
                 ("10.96.0.80", 53))
        time.sleep(secs / 40)
    os._exit(0)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
dst = ("10.96.0.80", 7777)
end, n, base = time.time() + secs, 0, b"x" * 28
while time.time() < end:
    for _ in range(1000):
        s.sendto(base + (struct.pack("!I", n) if mode == "diff" else b"\0\0\0\0"), dst)
        n += 1
os.wait()
print(mode, "sent", n)
