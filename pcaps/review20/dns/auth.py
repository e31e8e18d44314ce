#!/usr/bin/env python3
"""auth.py ADDR LOG - the lab's authority (lab.sh): answers every DNS query on
ADDR:53 (UDP and TCP) and logs, one JSON line each, the exact message it got
and the question as a liberal reader sees it (pointers followed anywhere, any
label bytes), so the name a resolver forwarded can be compared with the name
the sensor reported. An A question gets 192.0.2.1, others an empty NOERROR.
Bounded: 4096 messages, then it exits; a TCP connection is read for 5 s."""
import json, socket, struct, sys, threading, time

ADDR, LOG = sys.argv[1], sys.argv[2]
lock = threading.Lock()
count = [0]


def qname(msg, off):
    labels, hops, end = [], 0, None
    while True:
        if off >= len(msg):
            return None, None
        l = msg[off]
        if l & 0xC0 == 0xC0:
            if off + 1 >= len(msg) or hops > 64:
                return None, None
            if end is None:
                end = off + 2
            off = ((l & 0x3F) << 8) | msg[off + 1]
            hops += 1
            continue
        if l & 0xC0:
            return None, None
        off += 1
        if l == 0:
            break
        labels.append(msg[off:off + l])
        off += l
    return labels, end if end is not None else off


def show(labels):
    out = []
    for lab in labels:
        out.append("".join(chr(b) if 0x21 <= b <= 0x7E and b not in (0x2E, 0x5C)
                           else "\\x%02x" % b for b in lab))
    return ".".join(out) if out else "."


def answer(msg):
    if len(msg) < 12:
        return None
    qd = struct.unpack(">H", msg[4:6])[0]
    labels, end = qname(msg, 12) if qd else (None, None)
    rec = {"t": round(time.time(), 3), "len": len(msg), "hex": msg.hex(),
           "flags": "%04x" % struct.unpack(">H", msg[2:4])[0],
           "counts": list(struct.unpack(">4H", msg[4:12]))}
    if labels is None:
        rec["qname"] = None
        hdr = msg[:2] + b"\x81\x01" + b"\x00" * 8  # FORMERR, no question
        return rec, hdr
    qtype, qclass = struct.unpack(">HH", msg[end:end + 4]) if end + 4 <= len(msg) else (0, 0)
    rec.update(qname=show(labels), qtype=qtype, qclass=qclass)
    question = msg[12:end + 4]
    an = b""
    if qtype == 1 and qclass == 1:
        an = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 0, 4) + bytes([192, 0, 2, 1])
    flags = 0x8400 | (struct.unpack(">H", msg[2:4])[0] & 0x0100)
    hdr = msg[:2] + struct.pack(">HHHHH", flags, 1, 1 if an else 0, 0, 0)
    return rec, hdr + question + an


def log(rec, proto):
    rec["proto"] = proto
    with lock:
        with open(LOG, "a") as f:
            f.write(json.dumps(rec) + "\n")
        count[0] += 1
        if count[0] > 4096:
            sys.exit(0)


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((ADDR, 53))
    while True:
        msg, peer = s.recvfrom(65535)
        r = answer(msg)
        if r:
            log(r[0], "udp")
            s.sendto(r[1], peer)


def tcp_conn(c):
    c.settimeout(5)
    buf = b""
    try:
        while True:
            d = c.recv(65535)
            if not d:
                break
            buf += d
            while len(buf) >= 2:
                n = struct.unpack(">H", buf[:2])[0]
                if len(buf) < 2 + n:
                    break
                msg, buf = buf[2:2 + n], buf[2 + n:]
                r = answer(msg)
                if r:
                    log(r[0], "tcp")
                    c.sendall(struct.pack(">H", len(r[1])) + r[1])
    except OSError:
        pass
    c.close()


def tcp():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((ADDR, 53))
    s.listen(16)
    while True:
        c, _ = s.accept()
        threading.Thread(target=tcp_conn, args=(c,), daemon=True).start()


threading.Thread(target=tcp, daemon=True).start()
udp()
