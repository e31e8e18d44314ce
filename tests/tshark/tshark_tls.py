#!/usr/bin/python3
"""tshark_tls.py - the TLS ClientHellos tshark decodes in a capture, in the corpus schema.

README
------
    tests/tshark/tshark_tls.py PCAP [-d tcp.port==8443,tls ...]

prints {"sni": [...], "client_hellos": [...]} as one JSON object; arguments after
PCAP go to tshark (decode-as rules, -o preferences).  Exit 2 if tshark ($TSHARK,
else `tshark` on PATH) is missing or on usage errors, 1 if tshark fails.
Library: tshark_tls(pcap, extra_args=()) -> {"sni": [...], "client_hellos": [...]}
and tshark_tls_ex(...) -> [(hello, flagged), ...], flagged when tshark flagged the
frame (_ws.malformed, an expert info of severity Error, or _ws.short).  The result
is shaped as the corpus's "tls" expectations (shared/corpus/conformance/README.md)
and compares with conformance.compare("tls", "exact", tshark_tls(pcap),
normalize_tls(events)).

It reads `tshark -n -r PCAP -T pdml -Y "tls.handshake.type == 1"` (TCP
desegmentation, TLS record desegmentation and IP reassembly on, whatever the user's
preferences; out-of-order TCP reassembly stays off as in tshark's defaults:
`-o tcp.reassemble_out_of_order:TRUE` turns it on).
  - One hello per `tls.handshake` whose type is 1 (Client Hello), in a top-level
    `tls` layer over TCP: several per frame when tshark shows several (two layers,
    or two messages in one record).  A hello split over several records is counted
    once, where tshark shows it reassembled; its fragments are not hellos.  DTLS
    (layer `dtls`) and QUIC (a `tls` layer inside `quic`) are left out, as are
    SSLv2-format hellos (an "SSLv2 Record Layer") and what is quoted in an ICMP
    error.
  - `frame`: the frame of the layer, i.e. where the hello is complete (TCP
    reassembly, record reassembly).
  - `sni`: the first host_name (name_type 0) of the server_name extension, from the
    wire bytes (PDML `value`), escaped as egresswatch escapes text (\\xNN outside
    0x20-0x7e, \\\\ for a backslash; tshark's own text mangles bytes >= 0x80);
    None without a server_name extension, without a host_name in it, or with an
    empty one.  The top-level "sni" list holds the names of the hellos that have
    one, in order.
  - `ech`: an extension of type 0xfe0d (ECH), 0xff02 (draft ECH) or 0xffce (ESNI).
Checked against the corpus: it reproduces all 30 of its tshark-derived "tls" lines,
frames included.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tshark_dns import cli, esc, first, flagged, num, pdml_records  # noqa: E402

ECH_TYPES = (0xfe0d, 0xff02, 0xffce)
PREFS = ["-o", "tcp.desegment_tcp_streams:TRUE", "-o", "tls.desegment_ssl_records:TRUE",
         "-o", "ip.defragment:TRUE", "-o", "ipv6.defragment:TRUE"]
DFILTER = "tls.handshake.type == 1"

# ---------------------------------------------------------------- tshark


# ---------------------------------------------------------------- hellos


def raw_of(f):
    """The field's wire bytes (PDML value), or None when tshark did not give them."""
    v = f.get("value")
    try:
        size = int(f.get("size"))
        return bytes.fromhex(v) if v is not None and len(v) == 2 * size else None
    except (TypeError, ValueError):
        return None


def hello_sni(hs):
    """The first host_name of a ClientHello's tls.handshake element, escaped."""
    kind = None
    for f in hs.iter("field"):
        name = f.get("name")
        if name == "tls.handshake.extensions_server_name_type":
            kind = num(f)
        elif name == "tls.handshake.extensions_server_name" and kind == 0:
            raw = raw_of(f)
            if raw is None:                          # no wire bytes: tshark's text
                raw = f.get("show", "").encode("utf-8", "replace")
            return esc(raw) or None
    return None


def hello_ech(hs):
    return any(f.get("name") == "tls.handshake.extension.type" and num(f) in ECH_TYPES
               for f in hs.iter("field"))


def layer_hellos(layer):
    """The ClientHello tls.handshake elements of one tls layer, in order."""
    out = []
    for rec in layer.iter("field"):
        if rec.get("name") != "tls.record" or rec.get("showname", "").startswith("SSLv2"):
            continue
        for hs in rec.findall("field"):
            if hs.get("name") != "tls.handshake":
                continue
            t = [f for f in hs.findall("field") if f.get("name") == "tls.handshake.type"]
            if t and num(t[0]) == 1:
                out.append(hs)
    return out


def packet_hellos(pkt):
    """[(hello, flagged)] of one PDML <packet>."""
    frame = num(first(pkt, "num")) or num(first(pkt, "frame.number"))
    bad = flagged(pkt)
    out, transport, quoted = [], None, False
    for p in pkt.findall("proto"):                 # top level: QUIC's tls is inside quic
        name = p.get("name")
        quoted = quoted or name in ("icmp", "icmpv6")
        if name in ("udp", "tcp"):
            transport = name
        elif name == "tls" and transport == "tcp" and not quoted:
            for hs in layer_hellos(p):
                out.append(({"frame": frame, "sni": hello_sni(hs), "ech": hello_ech(hs)}, bad))
    return out


def tshark_tls_ex(pcap, extra_args=()):
    return pdml_records(pcap, DFILTER, PREFS, packet_hellos, extra_args)


def as_expect(hellos):
    """The corpus's "tls" expectation of a list of hellos."""
    return {"sni": [h["sni"] for h in hellos if h["sni"] is not None], "client_hellos": list(hellos)}


def tshark_tls(pcap, extra_args=()):
    return as_expect([h for h, _ in tshark_tls_ex(pcap, extra_args)])


if __name__ == "__main__":
    sys.exit(cli("tshark_tls.py", tshark_tls_ex, "hellos", sys.argv[1:],
                 lambda hellos: print(json.dumps(as_expect(hellos), sort_keys=True))))
