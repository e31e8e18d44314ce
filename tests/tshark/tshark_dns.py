#!/usr/bin/python3
"""tshark_dns.py - the DNS messages tshark decodes in a capture, in the corpus schema.

README
------
    tests/tshark/tshark_dns.py PCAP [-d tcp.port==1053,dns ...]

prints one JSON object per DNS message (query or response) a line, in capture order;
arguments after PCAP go to tshark (decode-as rules, -o preferences).  Exit 2 if tshark
($TSHARK, else `tshark` on PATH) is missing or on usage errors, 1 if tshark fails.
Library: tshark_dns(pcap, extra_args=()) -> [message, ...] and tshark_dns_ex(...) ->
[(message, flagged), ...], flagged when tshark flagged the frame (_ws.malformed, an
expert info of severity Error, or _ws.short: cut by the snaplen).  Messages are shaped
as the corpus's "dns" lists (shared/corpus/conformance/README.md) and as
conformance.normalize_dns() output: compare them with conformance.compare("dns", "exact",
tshark_dns(pcap), normalize_dns(events)).

It reads `tshark -n -r PCAP -T pdml -Y "dns || mdns || llmnr"` (TCP desegmentation and
IP reassembly on, whatever the user's preferences; out-of-order TCP reassembly stays
off as in tshark's defaults: `-o tcp.reassemble_out_of_order:TRUE` turns it on).
  - One message per dns/mdns/llmnr layer, several per frame if tshark shows several;
    `frame` is the frame of the layer (for TCP where the message completes);
    `transport` the last udp/tcp layer before it (None when quoted in an ICMP error).
  - `id`, `opcode`, `tc`, `qdcount` (QDCOUNT) from the header; `rcode` the mnemonic
    of the 4-bit header RCODE (RCODEn when unnamed) for responses, None for queries.
  - Names come from the wire bytes, not tshark's text (which leaves dots inside labels
    unescaped and bytes >= 0x80 mangled): the message's bytes are rebuilt from the
    PDML fields' positions and raw values, and compression pointers are followed in
    them.  They are written as conformance.rfc1035() writes them (\\DDD outside
    0x21-0x7e, a backslash before . \\ " ( ) ; @ $), no trailing dot, root ".".  When
    the wire name cannot be read (a pointer loops or leads to bytes tshark did not
    dissect, label type 01/10, over 255 bytes on the wire) tshark's text is kept: its
    "<...>" placeholders as they are, other text through rfc1035(strip_dot()).
  - `qname`, `qtype`: the first question (the zone for UPDATE); `questions` only when
    there are 2+.  Types are IANA mnemonics, TYPEn when unnamed.
  - `answers`: the answer section only, {name, type, ttl, data}; ttl None for OPT;
    data: the address for A, RFC 5952 text for AAAA, the target name for CNAME, NS,
    PTR, DNAME, the exchange for MX, MNAME for SOA, "priority weight port target" for
    SRV, the list of character-strings for TXT/SPF (escaped as egresswatch escapes
    text: \\xNN outside 0x20-0x7e, \\\\ for a backslash), lowercase hex rdata for
    NULL; None for other types or a value tshark did not dissect.
  - UPDATE (opcode 5): `qdcount` None and `answers` [] (tshark counts zones and
    prerequisites there).  A message tshark could only partly dissect has what tshark
    read; what it did not read is None.
"""
import codecs
import hashlib
import ipaddress
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance"))
from conformance import RCODES, rfc1035, strip_dot  # noqa: E402

DNS_LAYERS = ("dns", "mdns", "llmnr")
PI_ERROR = "8388608"          # _ws.expert.severity of an Error (PI_ERROR)
FLAG_LAYERS = ("_ws.malformed", "_ws.short")   # exception caught: malformed / cut by snaplen
PREFS = ["-o", "tcp.desegment_tcp_streams:TRUE", "-o", "dns.desegment_dns_messages:TRUE",
         "-o", "ip.defragment:TRUE", "-o", "ipv6.defragment:TRUE"]

# IANA "Resource Record (RR) TYPEs"
TYPES = dict((int(v), k) for v, k in (x.split(":") for x in """
1:A 2:NS 3:MD 4:MF 5:CNAME 6:SOA 7:MB 8:MG 9:MR 10:NULL 11:WKS 12:PTR 13:HINFO 14:MINFO
15:MX 16:TXT 17:RP 18:AFSDB 19:X25 20:ISDN 21:RT 22:NSAP 23:NSAP-PTR 24:SIG 25:KEY 26:PX
27:GPOS 28:AAAA 29:LOC 30:NXT 31:EID 32:NIMLOC 33:SRV 34:ATMA 35:NAPTR 36:KX 37:CERT 38:A6
39:DNAME 40:SINK 41:OPT 42:APL 43:DS 44:SSHFP 45:IPSECKEY 46:RRSIG 47:NSEC 48:DNSKEY
49:DHCID 50:NSEC3 51:NSEC3PARAM 52:TLSA 53:SMIMEA 55:HIP 56:NINFO 57:RKEY 58:TALINK 59:CDS
60:CDNSKEY 61:OPENPGPKEY 62:CSYNC 63:ZONEMD 64:SVCB 65:HTTPS 99:SPF 100:UINFO 101:UID
102:GID 103:UNSPEC 104:NID 105:L32 106:L64 107:LP 108:EUI48 109:EUI64 249:TKEY 250:TSIG
251:IXFR 252:AXFR 253:MAILB 254:MAILA 255:ANY 256:URI 257:CAA 258:AVC 259:DOA 260:AMTRELAY
261:RESINFO 32768:TA 32769:DLV""".split()))

NAME_DATA = {"CNAME": "dns.cname", "NS": "dns.ns", "PTR": "dns.ptr.domain_name",
             "DNAME": "dns.dname", "MX": "dns.mx.mail_exchange", "SOA": "dns.soa.mname"}


class TsharkMissing(RuntimeError):
    pass

# ---------------------------------------------------------------- PDML fields


def first(elem, name):
    """The first field called name in elem's subtree, or None."""
    return next((f for f in elem.iter("field") if f.get("name") == name), None)


def num(f):
    """A numeric field's value: its decimal or 0x show, else its raw hex value."""
    if f is None:
        return None
    s = f.get("show", "")
    try:
        if s.isdigit():
            return int(s)
        if s[:2] in ("0x", "0X"):
            return int(s, 16)
        return int(f.get("value", ""), 16)
    except ValueError:
        return None


def wire_map(layer):
    """{position: byte} of every byte the layer's fields show raw (PDML `value`, or
    `unmaskedvalue` for bit fields), positions as in the PDML (in the layer's tvb)."""
    mem = {}
    for f in layer.iter("field"):
        v = f.get("unmaskedvalue") or f.get("value")
        try:
            pos, size = int(f.get("pos")), int(f.get("size"))
            raw = bytes.fromhex(v) if v and len(v) == 2 * size else b""
        except (TypeError, ValueError):
            continue
        for i, c in enumerate(raw):
            mem.setdefault(pos + i, c)
    return mem

# ---------------------------------------------------------------- names and text


def esc(raw, dot=False):
    """Bytes as egresswatch writes text: \\xNN outside 0x20-0x7e, \\\\ (and \\. in a
    label) for a backslash (a dot)."""
    return "".join("\\x%02x" % c if c < 0x20 or c > 0x7E else
                   "\\" + chr(c) if c == 0x5C or (dot and c == 0x2E) else chr(c) for c in raw)


def wire_labels(mem, at, base):
    """The labels of the name at `at`, pointers relative to `base`; None when a byte
    is missing, a pointer loops, a label type is 01/10, or it exceeds 255 bytes."""
    labels, seen, total = [], set(), 1
    while True:
        n = mem.get(at)
        if n is None:
            return None
        if n == 0:
            return labels
        if n & 0xC0 == 0xC0:
            if at + 1 not in mem:
                return None
            at = base + ((n & 0x3F) << 8 | mem[at + 1])
            if at in seen:
                return None
            seen.add(at)
            continue
        if n & 0xC0:
            return None
        lab = [mem.get(at + 1 + i) for i in range(n)]
        total += n + 1
        if None in lab or total > 255:
            return None
        labels.append(bytes(lab))
        at += n + 1


def name_at(pos, s, mem, base):
    """The name at pos from the wire, else from tshark's text s."""
    try:
        labels = wire_labels(mem, int(pos), base)
    except (TypeError, ValueError):
        labels = None
    if labels is not None:
        return rfc1035(".".join(esc(x, dot=True) for x in labels)) if labels else "."
    if s.startswith("<") and s.endswith(">"):
        return "." if s == "<Root>" else s
    return rfc1035(strip_dot(s))


def name_of(f, mem, base):
    return None if f is None else name_at(f.get("pos"), f.get("show", ""), mem, base)

# ---------------------------------------------------------------- messages


def type_name(f):
    t = num(f)
    return None if t is None else TYPES.get(t, "TYPE%d" % t)


def rdata(rr, t, mem, base):
    f = first(rr, {"A": "dns.a", "AAAA": "dns.aaaa", "NULL": "dns.null"}.get(t, NAME_DATA.get(t)))
    if t in ("A", "AAAA") and f is not None:
        try:
            return str(ipaddress.ip_address(f.get("show")))    # RFC 5952 for IPv6
        except ValueError:
            return f.get("show")
    if t in NAME_DATA:
        return name_of(f, mem, base)
    if t == "SRV":
        p = [num(first(rr, "dns.srv." + k)) for k in ("priority", "weight", "port")]
        target = name_of(first(rr, "dns.srv.target"), mem, base)
        return None if None in p or target is None else "%d %d %d %s" % (p[0], p[1], p[2], target)
    if t in ("TXT", "SPF"):
        key = "dns." + t.lower()
        return [esc(bytes.fromhex(f.get("value", ""))) for f in rr.iter("field") if f.get("name") == key]
    if t == "NULL":
        return f.get("value", "").lower() if f is not None else (
            "" if num(first(rr, "dns.resp.len")) == 0 else None)
    return None


def section(layer, titles):
    """The records of the layer's first section titled one of titles."""
    for f in layer.findall("field"):
        if f.get("name") == "" and f.get("show") in titles:
            return f.findall("field")
    return []


def message(layer, frame, transport):
    mem = wire_map(layer)
    idf = first(layer, "dns.id")
    base = int(idf.get("pos")) if idf is not None else int(layer.get("pos", 0)) + (
        2 if first(layer, "dns.length") is not None else 0)
    qr = num(first(layer, "dns.flags.response"))
    op = num(first(layer, "dns.flags.opcode"))
    rc = num(first(layer, "dns.flags.rcode"))
    tc = num(first(layer, "dns.flags.truncated"))
    rec = {"frame": frame, "transport": transport, "id": num(idf),
           "qr": None if qr is None else ("response" if qr else "query"), "opcode": op,
           "rcode": (RCODES[rc] if rc is not None and rc < 16 else None) if qr else None,
           "tc": bool(tc), "qdcount": num(first(layer, "dns.count.queries"))}
    qs = [{"qname": name_of(first(q, "dns.qry.name"), mem, base),
           "qtype": type_name(first(q, "dns.qry.type"))}
          for q in section(layer, ("Queries", "Zone"))]
    rec["qname"] = qs[0]["qname"] if qs else None
    rec["qtype"] = qs[0]["qtype"] if qs else None
    if len(qs) > 1:
        rec["questions"] = qs
    answers = []
    for rr in section(layer, ("Answers",)):
        t = type_name(first(rr, "dns.resp.type"))
        # the owner name starts the record (SRV's is not dns.resp.name but dns.srv.*)
        owner = name_at(rr.get("pos"), rr.get("show", "").partition(": type ")[0], mem, base)
        answers.append({"name": owner, "type": t,
                        "ttl": None if t == "OPT" else num(first(rr, "dns.resp.ttl")),
                        "data": rdata(rr, t, mem, base)})
    rec["answers"] = answers
    if op == 5:
        rec["qdcount"], rec["answers"] = None, []
    return rec


def flagged(pkt):
    """tshark flagged the frame: malformed, cut by the snaplen, or an Error."""
    return any(p.get("name") in FLAG_LAYERS for p in pkt.iter("proto")) or any(
        f.get("name") == "_ws.expert.severity" and f.get("show") == PI_ERROR
        for f in pkt.iter("field"))


def packet_messages(pkt):
    """[(message, flagged)] of one PDML <packet>."""
    frame = num(first(pkt, "num")) or num(first(pkt, "frame.number"))
    bad = flagged(pkt)
    out, transport, quoted = [], None, False
    for p in pkt.iter("proto"):
        name = p.get("name")
        quoted = quoted or name in ("icmp", "icmpv6")   # what follows is quoted in an error
        if name in ("udp", "tcp"):
            transport = name
        elif name in DNS_LAYERS:
            out.append((message(p, frame, None if quoted else transport), bad))
    return out


class Utf8Repair:
    """A byte stream with invalid UTF-8 replaced by U+FFFD: tshark 4.0 can cut a
    showname in the middle of a character (an SRV target with a byte >= 0x80),
    which expat rejects. Names and data are read from the raw `value` hex, never
    from that text, so nothing we compare changes."""

    def __init__(self, f):
        self.f = f
        self.dec = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def read(self, n=65536):
        while True:                 # b"" only at the end, never for a partial character
            b = self.f.read(n)
            out = self.dec.decode(b, final=not b).encode("utf-8")
            if out or not b:
                return out


def pdml_packets(pcap, dfilter, prefs, extra_args=()):
    """Each PDML <packet> element tshark writes for pcap (display filter dfilter,
    preferences prefs then extra_args), read as it streams; the element is cleared
    after the consumer's turn.  Raises TsharkMissing, or RuntimeError when the PDML
    does not parse (a complete PDML with a non-zero exit is a capture cut short,
    read as far as it goes).  Every tshark_*.py of this folder reads tshark so."""
    tshark = shutil.which(os.environ.get("TSHARK") or "tshark")
    if not tshark:
        raise TsharkMissing("tshark not found (install it or set $TSHARK)")
    cmd = [tshark, "-n", "-r", pcap, "-T", "pdml", "-Y", dfilter] + list(prefs) + list(extra_args)
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
        bad = None
        try:
            for _, el in ET.iterparse(Utf8Repair(proc.stdout), events=("end",)):
                if el.tag == "packet":
                    yield el
                    el.clear()
        except ET.ParseError as e:
            bad = "PDML does not parse (%s)" % e
        finally:
            proc.stdout.close()
            rc = proc.wait()
        err.seek(0)
        msg = " ".join(x for x in err.read().decode("utf-8", "replace").splitlines()
                       if "Running as user" not in x).strip()
    if bad:
        raise RuntimeError("%s: tshark exit %d; %s%s" % (pcap, rc, bad, ": " + msg[:300] if msg else ""))


def _cache_key(pcap, dfilter, prefs, per_packet, extra_args):
    """What pdml_records' result depends on: the capture's bytes, tshark (its
    path, size and time), the filter and options, and the reading code (this
    file and per_packet's)."""
    h = hashlib.sha256()
    with open(pcap, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    tshark = shutil.which(os.environ.get("TSHARK") or "tshark") or ""
    st = os.stat(tshark) if tshark else None
    mod = sys.modules.get(per_packet.__module__)
    srcs = {os.path.abspath(__file__), os.path.abspath(getattr(mod, "__file__", "") or __file__)}
    for src in sorted(srcs):
        with open(src, "rb") as f:
            h.update(f.read())
    h.update(repr((tshark, st and (st.st_size, st.st_mtime_ns), dfilter, list(prefs),
                   list(extra_args), per_packet.__module__, per_packet.__qualname__)).encode())
    return h.hexdigest()


def pdml_records(pcap, dfilter, prefs, per_packet, extra_args=()):
    """[(record, flagged)]: per_packet(<packet>) of each packet pdml_packets
    gives, joined in order.  With $EW_TSHARK_CACHE (a folder; ./dev sets it),
    the result is kept there and read back for the same capture, tshark,
    options and reading code: ./dev test runs the comparisons twice (the plain
    build, then ASan), and tshark, the slow part, need not run twice."""
    cache = os.environ.get("EW_TSHARK_CACHE")
    path = None
    if cache:
        path = os.path.join(cache, _cache_key(pcap, dfilter, prefs, per_packet, extra_args) + ".pickle")
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError):
            pass
    out = []
    for pkt in pdml_packets(pcap, dfilter, prefs, extra_args):
        out.extend(per_packet(pkt))
    if path:
        os.makedirs(cache, exist_ok=True)
        tmp = "%s.%d.tmp" % (path, os.getpid())
        with open(tmp, "wb") as f:
            pickle.dump(out, f)
        os.replace(tmp, path)
    return out


def tshark_dns_ex(pcap, extra_args=()):
    return pdml_records(pcap, " || ".join(DNS_LAYERS), PREFS, packet_messages, extra_args)


def tshark_dns(pcap, extra_args=()):
    return [m for m, _ in tshark_dns_ex(pcap, extra_args)]


def cli(name, fn_ex, what, argv, show=None):
    """The command line of every tshark_*.py: PCAP then tshark's arguments; the
    records of fn_ex one JSON line each (or as show(records) prints them), and a
    note on stderr of those in frames tshark flags."""
    def say(code, msg):
        print("%s: %s" % (name, msg), file=sys.stderr)
        return code
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: %s PCAP [tshark args, e.g. -d tcp.port==1053,dns]" % name)
        return 0 if argv else 2
    if not os.path.isfile(argv[0]):
        return say(2, "%s: no such file" % argv[0])
    try:
        recs = fn_ex(argv[0], argv[1:])
    except TsharkMissing as e:
        return say(2, str(e))
    except (RuntimeError, OSError) as e:
        return say(1, str(e))
    if show:
        show([m for m, _ in recs])
    else:
        for m, _ in recs:
            print(json.dumps(m, sort_keys=True))
    bad = sorted(set(m["frame"] for m, f in recs if f))
    if bad:
        say(0, "%d of %d %s are in frames tshark flags (malformed, error or cut): %s"
            % (sum(f for _, f in recs), len(recs), what, " ".join(map(str, bad[:20]))))
    return 0


if __name__ == "__main__":
    sys.exit(cli("tshark_dns.py", tshark_dns_ex, "messages", sys.argv[1:]))
