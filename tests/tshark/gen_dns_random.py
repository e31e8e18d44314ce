#!/usr/bin/python3
"""gen_dns_random.py - a capture of random, well-formed DNS traffic, for the tshark
differential test (tests/tshark/tshark_diff.py).

README
------
    /usr/bin/python3 tests/tshark/gen_dns_random.py SEED COUNT OUT.pcap

Writes COUNT DNS exchanges (a query, and usually its response) drawn from a
random.Random(SEED): the same SEED and COUNT give the same bytes.  The messages are
built with pcaps/gen_fixtures.py's DNS builder (compression pointers to earlier
names, as servers write them) and its containers; scapy builds the L3/L4 headers.

What varies, all within what RFC 1035 and its successors allow:
  - names: 1-6 labels of letters, digits and '-', mixed case; some with a label of
    63 bytes; some with bytes a presentation form must escape (a dot, a backslash,
    a space, quote, control and high bytes) inside a label;
  - the header: id, opcode QUERY or NOTIFY, every header RCODE 0-10, TC, AA, RD, RA,
    AD, CD; one question or two;
  - answer records of the types the sensor renders (A, AAAA, CNAME, NS, PTR, MX, TXT
    with 0-4 strings of any bytes, SRV, SOA, NULL, HTTPS, SVCB, CAA, DNAME) and
    unknown types, in the answer, authority and additional sections, with an OPT
    record (EDNS, sometimes with the DO bit and an option) in some;
  - the header's opcode also UPDATE (the zone as question); an OPT record with an
    extended RCODE; record classes CH, HS, NONE and IN with mDNS's cache-flush bit;
  - transport: UDP over IPv4 (some responses in IPv4 fragments, in order or
    reversed) or IPv6; mDNS (5353, multicast, answers without a question) and LLMNR
    (5355); or TCP (handshake, then each message behind its length prefix: several
    messages in one segment, a message split over two segments, the second part
    sent first, or a segment sent twice).

Every address is a documentation or private one (10.98.0.0/16, fd00:98::/64).
"""
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "pcaps"))
import gen_fixtures as fx  # noqa: E402
from gen_fixtures import (dns_msg, rr, opt_rr, rd_a, rd_name, rd_mx, rd_soa,  # noqa: E402
                          rd_srv, rd_txt, rd_caa, rd_svcb, ether, ip4_udp, ip6_udp, lp)

TYPE_NUM = {"DNAME": 39, "SVCB": 64}
PLAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
ODD = b". \\\"();$@\x00\x01\x7f\x80\xc3\xff\t"


def label(rng, odd):
    n = 63 if rng.random() < 0.03 else rng.randint(1, 12)
    b = bytearray(rng.choice(PLAIN).encode() * n)
    for j in range(n):
        b[j] = ord(rng.choice(PLAIN))
    if odd:
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(n)] = rng.choice(ODD)
    return bytes(b)


def name(rng, odd_rate=0.08, base=None):
    """A list of label bytes; under base (a list) when given."""
    k = rng.randint(1, 4)
    labels = [label(rng, rng.random() < odd_rate) for _ in range(k)]
    if base is None:
        base = rng.choice([[b"example", b"test"], [b"example", b"com"], [b"test"],
                           [b"Example", b"NET"], [b"in-addr", b"arpa"]])
    while len(labels) > 1 and sum(len(x) + 1 for x in labels + base) + 1 > 255:
        labels.pop(0)                       # keep the name within 255 bytes
    return labels + base


def txt_strings(rng):
    out = []
    for _ in range(rng.randint(0, 4)):
        n = rng.choice([0, 1, 5, 20, 60, 255])
        if rng.random() < 0.3:
            out.append(bytes(rng.randrange(256) for _ in range(n)))
        else:
            out.append("".join(rng.choice(PLAIN + " \"\\;") for _ in range(n)).encode())
    return out or [b""]


def svc_params(rng):
    ps = []
    if rng.random() < 0.7:
        alpn = rng.sample([b"h2", b"h3", b"http/1.1"], rng.randint(1, 3))
        ps.append((1, b"".join(bytes([len(a)]) + a for a in alpn)))
    if rng.random() < 0.4:
        ps.append((3, struct.pack("!H", rng.choice([443, 8443]))))
    if rng.random() < 0.5:
        ps.append((4, bytes([192, 0, 2, rng.randrange(1, 255)])))
    return ps


def rand_rr(rng, owner, qname):
    """One record with a random type (returns the rr tuple)."""
    t = rng.choice(["A", "A", "AAAA", "CNAME", "NS", "PTR", "MX", "TXT", "SRV", "SOA",
                    "NULL", "HTTPS", "SVCB", "CAA", "DNAME", 65280, 65534, 4000, 49152])
    ttl = rng.choice([0, 1, 60, 300, 3600, 86400, 2147483647])
    cls = rng.choice([1] * 20 + [3, 4, 254, 0x8001])   # IN; CH, HS, NONE, IN + cache flush
    other = name(rng, 0.05, base=qname[-2:] if rng.random() < 0.5 else None)
    if t == "A":
        rd = rd_a("%d.%d.%d.%d" % (rng.choice([10, 192, 198]), rng.randrange(256),
                                  rng.randrange(256), rng.randrange(256)))
    elif t == "AAAA":
        rd = [bytes([0x20, 0x01, 0x0d, 0xb8]) + bytes(rng.choice([0, 0, 0, rng.randrange(256)])
                                                      for _ in range(12))]
    elif t in ("CNAME", "NS", "PTR"):
        rd = rd_name(other)
    elif t == "DNAME":
        rd = rd_name(other)
        t = TYPE_NUM["DNAME"]
    elif t == "MX":
        rd = rd_mx(rng.randrange(65536), other)
    elif t == "TXT":
        rd = rd_txt(txt_strings(rng))
    elif t == "SRV":
        rd = rd_srv(rng.randrange(65536), rng.randrange(65536), rng.randrange(65536), other)
    elif t == "SOA":
        rd = rd_soa(other, name(rng, 0), *(rng.randrange(1 << 32) for _ in range(5)))
    elif t == "NULL":
        rd = [bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))]
    elif t in ("HTTPS", "SVCB"):
        rd = rd_svcb(rng.randint(0, 3), "." if rng.random() < 0.5 else other, svc_params(rng))
        t = 65 if t == "HTTPS" else TYPE_NUM["SVCB"]
    elif t == "CAA":
        rd = rd_caa(rng.choice([0, 128]), rng.choice(["issue", "issuewild", "iodef"]),
                    rng.choice(["ca.example.net", "", "mailto:x@example.test"]))
    else:
        rd = [bytes(rng.randrange(256) for _ in range(rng.randint(0, 30)))]
    return rr(owner, t, ttl, rd, cls)


def exchange(rng, msg_id):
    """(query bytes, response bytes or None)."""
    qname = name(rng)
    qtype = rng.choice(["A", "AAAA", "TXT", "MX", "NS", "CNAME", "SRV", "HTTPS", "NULL",
                        "PTR", "SOA", "CAA", 255, 64, 65280])
    qd = [(qname, qtype)]
    if rng.random() < 0.05:
        qd.append((name(rng), rng.choice(["A", "AAAA"])))
    opcode = rng.choice([0] * 30 + [4, 5])            # QUERY, some NOTIFY and UPDATE
    if opcode == 5:
        qd = [(qname[-2:], "SOA")]                     # UPDATE: the zone
    edns = rng.random() < 0.4
    q_ar = [opt_rr(rng.choice([512, 1232, 4096]), do=rng.random() < 0.5,
                   options=(struct.pack("!HH", 10, 8) + bytes(8)) if rng.random() < 0.3 else b"")
            ] if edns else []
    rd = rng.random() < 0.9
    q = dns_msg(msg_id, opcode=opcode, rd=rd, cd=rng.random() < 0.1, qd=qd, ar=q_ar)
    if rng.random() < 0.1:
        return q, None
    an, ns, ar = [], [], []
    owner = qname
    for _ in range(rng.choice([0, 1, 1, 2, 3, 5])):
        rec = rand_rr(rng, owner, qname)
        an.append(rec)
        if rec[1] == 5 and rng.random() < 0.7:   # follow a CNAME chain
            owner = rec[4][0].name
    for _ in range(rng.choice([0, 0, 1, 2])):
        ns.append(rand_rr(rng, qname[-2:], qname))
    for _ in range(rng.choice([0, 0, 1])):
        ar.append(rand_rr(rng, name(rng, 0), qname))
    if edns:                                            # sometimes an extended RCODE
        ar.append(opt_rr(1232, do=rng.random() < 0.5,
                         ext_rcode=1 if rng.random() < 0.05 else 0))
    rcode = rng.choice([0] * 6 + [2, 3, 3, 5] + list(range(1, 11)))
    r = dns_msg(msg_id, qr=True, opcode=opcode, aa=rng.random() < 0.3,
                tc=rng.random() < 0.05, rd=rd, ad=rng.random() < 0.1, rcode=rcode, qd=qd,
                an=an, ns=ns, ar=ar)
    return q, r


def multicast(rng, clk):
    """An mDNS (5353, to 224.0.0.251 or ff02::fb) or LLMNR (5355, to 224.0.0.252)
    query and its answer; an mDNS answer may be unsolicited, without a question."""
    mdns = rng.random() < 0.7
    qname = name(rng, 0.05, base=[b"local"]) if mdns else name(rng, 0.05, base=[])[:2]
    qtype = rng.choice(["A", "AAAA", "PTR", "TXT", "SRV", 255])
    v6 = rng.random() < 0.3
    cli = "fd00:98::%x" % rng.randint(2, 0xfff) if v6 else "10.98.1.%d" % rng.randint(2, 250)
    group = ("ff02::fb" if mdns else "ff02::1:3") if v6 else \
        ("224.0.0.251" if mdns else "224.0.0.252")
    port = 5353 if mdns else 5355
    sport = port if mdns else rng.randint(49152, 65535)   # above 5355: tshark picks the lower port
    msg_id = 0 if mdns else rng.randrange(65536)
    q = dns_msg(msg_id, rd=False, qd=[(qname, qtype)])
    an = [rand_rr(rng, qname, qname) for _ in range(rng.randint(1, 3))]
    qd = [] if mdns and rng.random() < 0.3 else [(qname, qtype)]
    r = dns_msg(msg_id, qr=True, aa=True, rd=False, ra=False, qd=qd, an=an)
    responder = "fd00:98::77" if v6 else "10.98.1.77"
    rdst = group if mdns else cli
    out = []
    for src, dst, sp, dp, m in ((cli, group, sport, port, q), (responder, rdst, port,
                                                               port if mdns else sport, r)):
        if v6:
            pkt = ip6_udp(src, dst, sp, dp, m)
        else:
            pkt = ip4_udp(src, dst, sp, dp, m, rng.randrange(65536))
        out.append((clk(rng.randint(100, 50000)), ether(fx.MAC_CLIENT, fx.MAC_DNS, pkt)))
    return out


def main():
    if len(sys.argv) != 4:
        sys.stderr.write("usage: gen_dns_random.py SEED COUNT OUT.pcap\n")
        return 2
    seed, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    clk = fx.Clock()
    recs = []
    macs = (fx.MAC_CLIENT, fx.MAC_DNS)
    i = 0
    while i < count:
        kind = rng.random()
        if kind < 0.15:                                    # TCP: 1-3 exchanges
            n = min(rng.randint(1, 3), count - i)
            pairs = [exchange(rng, rng.randrange(65536)) for _ in range(n)]
            cli = "10.98.1.%d" % rng.randint(2, 250)
            c = fx.TcpConn(clk, cli, "10.98.0.53", rng.randint(1024, 65535), 53,
                           rng.randrange(1 << 31), rng.randrange(1 << 31), ipid=rng.randrange(60000))
            recs += c.handshake(step=rng.randint(1000, 200000))
            qs = b"".join(lp(q) for q, _ in pairs)
            rs = b"".join(lp(r) for _, r in pairs if r is not None)
            for data, send, ack in ((qs, c.c_send, c.s_ack), (rs, c.s_send, c.c_ack)):
                if not data:
                    continue
                mode = rng.random()
                if mode < 0.3 and len(data) > 2:           # split inside the stream
                    cut = rng.randint(1, len(data) - 1)
                    recs.append(send(data[:cut]))
                    recs.append(send(data[cut:]))
                elif mode < 0.45 and len(data) > 2:        # the second part first
                    cut = rng.randint(1, len(data) - 1)
                    first = send(data[:cut], advance=False)
                    c_seq = c.cseq if send == c.c_send else c.sseq
                    recs.append(send(data[cut:], seq=(c_seq + cut) & 0xFFFFFFFF,
                                     advance=False))
                    recs.append(first)
                    if send == c.c_send:
                        c.cseq = (c.cseq + len(data)) & 0xFFFFFFFF
                    else:
                        c.sseq = (c.sseq + len(data)) & 0xFFFFFFFF
                elif mode < 0.55:                           # sent twice
                    seg = send(data)
                    recs.append(seg)
                    recs.append((clk(rng.randint(1000, 200000)), seg[1]))
                else:                                       # all in one segment
                    recs.append(send(data))
                recs.append(ack())
            recs += c.close()
            i += n
            continue
        if kind < 0.2:                                     # mDNS or LLMNR
            recs += multicast(rng, clk)
            i += 1
            continue
        q, r = exchange(rng, rng.randrange(65536))
        sport = rng.randint(1024, 65535)
        if kind < 0.25 and r is not None and len(r) > 64:  # the response in IPv4 fragments
            cli = "10.98.1.%d" % rng.randint(2, 250)
            recs.append((clk(rng.randint(100, 50000)), ether(macs[0], macs[1], ip4_udp(
                cli, "10.98.0.53", sport, 53, q, rng.randrange(65536)))))
            n = len(r) + 8
            cuts = sorted(set(rng.randrange(8, n, 8) for _ in range(rng.randint(1, 3))))
            pieces = list(zip([0] + cuts, cuts + [n]))
            frags, _ = fx.frag4("10.98.0.53", cli, 53, sport, r, rng.randrange(65536), pieces)
            if rng.random() < 0.3:
                frags.reverse()
            for f in frags:
                recs.append((clk(rng.randint(10, 300)), ether(macs[1], macs[0], f)))
            i += 1
            continue
        if kind < 0.35:
            cli, srv = "fd00:98::%x" % rng.randint(2, 0xfff), "fd00:98::53"
            pq = ip6_udp(cli, srv, sport, 53, q)
            pr = ip6_udp(srv, cli, 53, sport, r) if r is not None else None
        else:
            cli, srv = "10.98.1.%d" % rng.randint(2, 250), "10.98.0.53"
            pq = ip4_udp(cli, srv, sport, 53, q, rng.randrange(65536))
            pr = ip4_udp(srv, cli, 53, sport, r, rng.randrange(65536)) if r is not None else None
        recs.append((clk(rng.randint(100, 50000)), ether(macs[0], macs[1], pq)))
        if pr is not None:
            recs.append((clk(rng.randint(100, 20000)), ether(macs[1], macs[0], pr)))
        i += 1
    fx.write_pcap(out, fx.LINKTYPE_ETHERNET, recs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
