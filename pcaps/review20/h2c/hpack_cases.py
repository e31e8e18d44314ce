#!/usr/bin/python3
"""hpack_cases.py HOST PORT CASE... - for each CASE, one HTTP/2 (prior
knowledge) connection to HOST:PORT: the preface and SETTINGS
(ENABLE_PUSH=0), the server's SETTINGS acknowledged, then request 1 on
stream 1 whose header block is the CASE's irregular HPACK (hand-written
bytes, below), then 0.3 s later request 2 on stream 3, a plain
`GET http://www.after.test/after-CASE` (python3-hpack, literals without
indexing, so it reads the same whatever the table holds). Prints, per case,
what the server answered: HEADERS (:status) per stream, RST_STREAM, GOAWAY
(error code), and whether it closed. `list` prints the cases. Every socket
times out after 3 s; each connection lasts at most about 2 s."""
import socket, struct, sys, time

from hpack import Decoder  # python3-hpack
from hpack.huffman import HuffmanEncoder
from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH

HUFF = HuffmanEncoder(REQUEST_CODES, REQUEST_CODES_LENGTH)


def frame(ftype, flags, sid, payload):
    return struct.pack("!I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack("!I", sid) + payload


def hint(v, bits, first=0):
    """An HPACK integer with a prefix of bits bits, first the flag bits."""
    m = (1 << bits) - 1
    if v < m:
        return bytes([first | v])
    out = [first | m]
    v -= m
    while v >= 128:
        out.append(0x80 | (v & 0x7f))
        v >>= 7
    out.append(v)
    return bytes(out)


def hstr(s, huff=False):
    if isinstance(s, str):
        s = s.encode()
    if huff:
        s = HUFF.encode(s)
        return hint(len(s), 7, 0x80) + s
    return hint(len(s), 7) + s


def lit(name, value):
    """A literal field without indexing, new name."""
    return b"\x00" + hstr(name) + hstr(value)


def litidx(idx, value):
    """A literal field without indexing, indexed name (4-bit prefix)."""
    return hint(idx, 4) + hstr(value)


def req(case, host="www.hidden.test"):
    """:method GET, :scheme http, :path /bad-CASE, :authority host."""
    return b"\x82\x86" + litidx(4, "/bad-" + case) + litidx(1, host)


# Huffman of "a" is 00011 (5 bits): padding makes the rest of the byte.
CASES = {
    "control": lambda c: req(c),
    "index0": lambda c: req(c) + b"\x80",
    "index_past": lambda c: req(c) + hint(70, 7, 0x80),
    "name_index_past": lambda c: req(c) + hint(70, 4) + hstr("v"),
    "name_index0_value_missing": lambda c: req(c) + b"\x00",
    "huff_pad_8bits": lambda c: req(c) + lit("x-a", b"")[:-1] + b"\x82\x1f\xff",
    "huff_pad_zero": lambda c: req(c) + lit("x-a", b"")[:-1] + b"\x81\x18",
    "huff_eos": lambda c: req(c) + lit("x-a", b"")[:-1] + b"\x84\xff\xff\xff\xff",
    "int_overflow": lambda c: req(c) + b"\xff\xff\xff\xff\xff\x0f",
    "int_4_octets": lambda c: req(c) + b"\x00" + hstr("x-a") + b"\x7f\x81\x80\x80\x00" + b"b" * 128,
    "int_5_octets": lambda c: req(c) + b"\x00" + hstr("x-a") + b"\x7f\x81\x80\x80\x80\x00" + b"b" * 128,
    "tsu_over_4096": lambda c: hint(8192, 5, 0x20) + req(c),
    "tsu_after_field": lambda c: b"\x82" + hint(4096, 5, 0x20) + req(c)[1:],
    "tsu_twice_first": lambda c: hint(0, 5, 0x20) + hint(4096, 5, 0x20) + req(c),
    "tsu_last": lambda c: req(c) + hint(4096, 5, 0x20),
    "empty_name": lambda c: req(c) + lit("", "v"),
    "empty_name_indexed": lambda c: req(c) + b"\x40" + hstr("") + hstr("v"),
    "upper_name": lambda c: req(c) + lit("X-Upper", "v"),
    "upper_name_huff": lambda c: req(c) + b"\x00" + hstr("X-Upper", True) + hstr("v"),
    "pseudo_after_regular": lambda c: b"\x82\x86" + litidx(1, "www.hidden.test") + lit("x-a", "v") +
    litidx(4, "/bad-" + c),
    "connection_field": lambda c: req(c) + lit("connection", "keep-alive"),
    "te_gzip": lambda c: req(c) + lit("te", "gzip"),
    "nul_in_value": lambda c: req(c) + lit("x-a", b"a\x00b"),
    "crlf_in_value": lambda c: req(c) + lit("x-a", b"a\r\nx-b: c"),
    "string_past_end": lambda c: req(c) + b"\x00" + hstr("x-a") + b"\x10abc",
    "field_cut_at_end": lambda c: req(c) + b"\x00\x03x-",
    "huge_entry_indexed": lambda c: req(c) + b"\x40" + hstr("x-big") + hstr("b" * 4100),
    "field_40k": lambda c: req(c) + lit("x-big", "b" * 40000),
    "field_70k": lambda c: req(c) + lit("x-big", "b" * 70000),
    "field_70k_indexed": lambda c: req(c) + b"\x40" + hstr("x-big") + hstr("b" * 70000),
    "field_70k_indexed_ref_old": lambda c: req(c) + b"\x40" + hstr("x-keep") + hstr("k") + b"\x40" +
    hstr("x-big") + hstr("b" * 70000) + hint(62, 7, 0x80),
    "field_70k_split_len": lambda c: req(c) + lit("x-big", "b" * 70000),
    "name_70k": lambda c: req(c) + b"\x00" + hstr("x" * 70000) + hstr("v"),
    "huff_pad_15bits": lambda c: req(c) + lit("x-a", b"")[:-1] + b"\x83\x1f\xff\xff",
    "huff_pad_27bits": lambda c: req(c) + lit("x-a", b"")[:-1] + b"\x84\x1f\xff\xff\xff",
    "huff_pad_in_name": lambda c: req(c) + b"\x00\x82\x1f\xff" + hstr("v"),
    "fields_200": lambda c: req(c) + b"".join(lit("x-f%d" % i, "v" * 50) for i in range(200)),
}


def block_frames(sid, blk, maxf=16384, split=None):
    """HEADERS (+CONTINUATIONs) of blk on sid, END_STREAM; split: cut points."""
    cuts = sorted(set(split or []) | set(range(maxf, len(blk), maxf)))
    parts, prev = [], 0
    for c in cuts + [len(blk)]:
        parts.append(blk[prev:c])
        prev = c
    out = b""
    for i, p in enumerate(parts):
        last = i == len(parts) - 1
        if i == 0:
            out += frame(1, 0x01 | (0x04 if last else 0), sid, p)
        else:
            out += frame(9, 0x04 if last else 0, sid, p)
    return out


def read_frames(s, t, dec, log):
    buf, end = b"", time.time() + t
    closed = False
    while time.time() < end:
        s.settimeout(max(0.05, end - time.time()))
        try:
            b = s.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            log.append("RESET")
            closed = True
            break
        if not b:
            log.append("EOF")
            closed = True
            break
        buf += b
        while len(buf) >= 9:
            n = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + n:
                break
            ft, fl, sid = buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7fffffff
            p = buf[9:9 + n]
            buf = buf[9 + n:]
            if ft == 1:
                try:
                    hs = dec.decode(p[(1 if fl & 8 else 0) + (5 if fl & 0x20 else 0):])
                    st = [v for k, v in hs if k in (":status", b":status")]
                    log.append("HEADERS(%d) %s" % (sid, st[0] if st else "?"))
                except Exception as e:
                    log.append("HEADERS(%d) undecodable %s" % (sid, e))
            elif ft == 3:
                log.append("RST_STREAM(%d) %d" % (sid, int.from_bytes(p[:4], "big")))
            elif ft == 7:
                log.append("GOAWAY last=%d code=%d" % (int.from_bytes(p[:4], "big") & 0x7fffffff,
                                                      int.from_bytes(p[4:8], "big")))
            elif ft == 0 and p:
                log.append("DATA(%d) %r" % (sid, p[:60]))
    return closed


def run(host, port, case):
    s = socket.create_connection((host, port), timeout=3)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    dec, log = Decoder(), []
    dec.max_allowed_table_size = 65536
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, struct.pack("!HI", 2, 0)))
    read_frames(s, 0.3, dec, [])
    s.sendall(frame(4, 1, 0, b""))
    blk = CASES[case](case)
    # a CONTINUATION cut mid-literal; the long value's length cut after its first byte
    split = {"control": [3, 9], "field_70k_split_len": [len(req(case)) + 8]}.get(case)
    s.sendall(block_frames(1, blk, split=split))
    closed = read_frames(s, 0.3, dec, log)
    if not closed:
        good = b"\x82\x86" + litidx(4, "/after-" + case) + litidx(1, "www.after.test")
        try:
            s.sendall(block_frames(3, good))
            closed = read_frames(s, 0.8, dec, log)
        except (BrokenPipeError, ConnectionResetError):
            log.append("send refused")
            closed = True
    if not closed:
        s.sendall(frame(7, 0, 0, struct.pack("!II", 3, 0)))
        read_frames(s, 0.2, dec, [])
    s.close()
    print("%-28s %s" % (case, "; ".join(log)), flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["list"]:
        print(" ".join(CASES))
        sys.exit(0)
    host, port = sys.argv[1], int(sys.argv[2])
    for c in sys.argv[3:] or list(CASES):
        run(host, port, c)
