#!/usr/bin/python3
"""tshark_http.py - the HTTP/1.x requests tshark decodes in a capture, in the corpus schema.

README
------
    tests/tshark/tshark_http.py PCAP [-d tcp.port==8000,http ...]

prints one JSON object per HTTP request a line, in capture order; arguments after
PCAP go to tshark (decode-as rules, -o preferences).  Exit 2 if tshark ($TSHARK,
else `tshark` on PATH) is missing or on usage errors, 1 if tshark fails.
Library: tshark_http(pcap, extra_args=()) -> [request, ...] and tshark_http_ex(...)
-> [(request, flagged), ...], flagged as in tshark_dns.py (_ws.malformed, _ws.short,
or an expert info of severity Error in the frame).  Requests are shaped as the
corpus's "http" lists (shared/corpus/conformance/README.md) and as
conformance.normalize_http() output: compare them with conformance.compare("http",
"exact", tshark_http(pcap), normalize_http(events)).

It reads `tshark -n -r PCAP -T pdml -Y http.request` with TCP desegmentation, HTTP
header and body desegmentation and IP reassembly on, whatever the user's
preferences (out-of-order TCP reassembly stays off as in tshark's defaults:
`-o tcp.reassemble_out_of_order:TRUE` turns it on).  tshark dissects HTTP on its
HTTP ports (80, 8080, 3128, ... `tshark -G decodes`) and, by its heuristic, on
other ports where the stream starts like HTTP; `-d` adds more.
  - One request per `http` layer that has http.request.method, several per frame
    if tshark shows several (pipelining); `frame` is the frame of the layer: where
    the head, or with a body where the body, completes.  An `http` layer after an
    icmp/icmpv6 layer is TCP data quoted in an ICMP error, not a request: left out.
  - `method`: http.request.method; `uri`: the request-target from the raw bytes
    of http.request.uri, written as egresswatch writes text (\\xNN outside
    0x20-0x7e, \\\\ for a backslash);
  - `host`: the first Host field's value (http.host) as sent, port included, in
    that form too; None when the request has none, "" when it is empty.  tshark's
    show text is used when it is plain printable ASCII, else the field line's raw
    bytes after the colon and the whitespace that follows it, without the line end.
    Whitespace after the value is dropped: tshark 4.0 keeps it in http.host, but
    it is not part of a field value (RFC 9110 5.5: "Host: a.test \\r\\n" is "a.test").

tshark is read with tshark_dns.py's pdml_packets(); own_fields(), frame_of() and
the command line (cli()) are shared with tshark_icmp.py.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tshark_dns import cli, esc, first, flagged, num, pdml_records  # noqa: E402

PREFS = ["-o", "tcp.desegment_tcp_streams:TRUE", "-o", "http.desegment_headers:TRUE",
         "-o", "http.desegment_body:TRUE", "-o", "ip.defragment:TRUE", "-o", "ipv6.defragment:TRUE"]
QUOTING = ("icmp", "icmpv6")

# ---------------------------------------------------------------- PDML


def own_fields(elem):
    """The fields in elem's subtree, in document order, without those of the
    protocols nested in it (a quoted packet, an encapsulated message)."""
    for ch in elem:
        if ch.tag == "field":
            yield ch
            yield from own_fields(ch)


def own_first(elem, name):
    return next((f for f in own_fields(elem) if f.get("name") == name), None)


def frame_of(pkt):
    """A PDML <packet>'s frame number."""
    return num(first(pkt, "num")) or num(first(pkt, "frame.number"))


# ---------------------------------------------------------------- HTTP


def printable(s):
    return all(0x20 <= ord(c) <= 0x7E for c in s) and "\\" not in s


def host_value(f):
    """The Host field's value as sent (see README)."""
    show = f.get("show", "")
    if printable(show):
        return show.rstrip(" \t")
    try:
        line = bytes.fromhex(f.get("value", ""))
    except ValueError:
        return show
    _, colon, v = line.partition(b":")
    if not colon:
        return show
    v = v.lstrip(b" \t")
    if v.endswith(b"\n"):
        v = v[:-2] if v.endswith(b"\r\n") else v[:-1]
    return esc(v.rstrip(b" \t"))


def raw_text(f):
    """A field's raw bytes (PDML `value`) as egresswatch writes text; its show
    when the raw value is absent."""
    v = f.get("value")
    try:
        if v is not None and len(v) == 2 * int(f.get("size", -1)):
            return esc(bytes.fromhex(v))
    except ValueError:
        pass
    return f.get("show")


def packet_requests(pkt):
    """[(request, flagged)] of one PDML <packet>."""
    frame, bad = frame_of(pkt), flagged(pkt)
    out, quoted = [], False
    for p in pkt.iter("proto"):
        name = p.get("name")
        quoted = quoted or name in QUOTING
        if name != "http" or quoted:
            continue
        m = own_first(p, "http.request.method")
        if m is None:
            continue                    # a response or a continuation
        uri = own_first(p, "http.request.uri")
        host = own_first(p, "http.host")
        out.append(({"frame": frame, "method": m.get("show"),
                     "host": None if host is None else host_value(host),
                     "uri": None if uri is None else raw_text(uri)}, bad))
    return out


def tshark_http_ex(pcap, extra_args=()):
    return pdml_records(pcap, "http.request", PREFS, packet_requests, extra_args)


def tshark_http(pcap, extra_args=()):
    return [m for m, _ in tshark_http_ex(pcap, extra_args)]


if __name__ == "__main__":
    sys.exit(cli("tshark_http.py", tshark_http_ex, "requests", sys.argv[1:]))
