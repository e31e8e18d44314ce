"""hellos.py - hand-built TLS ClientHellos for the review21 SNI lab
(client.py) and the recorded captures: every length field can be made to
lie, the message can be cut into records of any sizes, and records of
other types can be put before or among them. Deterministic (fixed random)."""
import struct

A = b'allowed.example'
F = b'forbidden.example'


def be16(n):
    return struct.pack('>H', n & 0xffff)


def be24(n):
    return struct.pack('>I', n)[1:]


def ext(t, body, length=None):
    return be16(t) + be16(len(body) if length is None else length) + body


def sni_body(entries, list_len=None):
    """entries: [(name_type, name)]"""
    lst = b''.join(bytes([t]) + be16(len(n)) + n for t, n in entries)
    return be16(len(lst) if list_len is None else list_len) + lst


def sni(name=None, entries=None, list_len=None, ext_len=None, extra=b''):
    if entries is None:
        entries = [(0, name)]
    body = sni_body(entries, list_len) + extra
    return ext(0, body, ext_len)


def alpn(*protos, ext_len=None, extra=b''):
    lst = b''.join(bytes([len(p)]) + p for p in protos)
    return ext(16, be16(len(lst)) + lst + extra, ext_len)


# what a TLS 1.2/1.3 client needs for OpenSSL and GnuTLS to answer
GROUPS = ext(0x000a, be16(4) + be16(0x001d) + be16(0x0017))
POINTS = ext(0x000b, b'\x01\x00')
SIGALGS = ext(0x000d, be16(8) + be16(0x0804) + be16(0x0401) + be16(0x0403) + be16(0x0805))
VERSIONS = ext(0x002b, b'\x04\x03\x04\x03\x03')
KEYSHARE = ext(0x0033, be16(36) + be16(0x001d) + be16(32) + bytes(range(9, 41)))
COMMON = GROUPS + POINTS + SIGALGS + VERSIONS + KEYSHARE


def body(exts, legacy=0x0303, sid=b'', ciphers=(0x1301, 0x1302, 0xc02f, 0xc030), comp=b'\x00',
         ext_block_len=None, sid_len=None, cs_len=None, comp_len=None, tail=b'', no_exts=False):
    cs = b''.join(be16(c) for c in ciphers)
    b = be16(legacy) + bytes(range(32))
    b += bytes([len(sid) if sid_len is None else sid_len]) + sid
    b += be16(len(cs) if cs_len is None else cs_len) + cs
    b += bytes([len(comp) if comp_len is None else comp_len]) + comp
    if not no_exts:
        b += be16(len(exts) if ext_block_len is None else ext_block_len) + exts
    return b + tail


def hs(b, hs_type=1, hs_len=None):
    return bytes([hs_type]) + be24(len(b) if hs_len is None else hs_len) + b


def hello(exts=None, name=A, **kw):
    """A ClientHello handshake message; exts defaults to SNI name + COMMON."""
    hs_len = kw.pop('hs_len', None)
    if exts is None:
        exts = sni(name) + COMMON
    return hs(body(exts, **kw), hs_len=hs_len)


def record(payload, ctype=0x16, ver=0x0301, length=None):
    return bytes([ctype]) + be16(ver) + be16(len(payload) if length is None else length) + payload


def records(msg, sizes, ver=0x0301):
    """msg cut into handshake records of the given sizes (the last takes the rest)."""
    out, at = b'', 0
    for s in sizes:
        out += record(msg[at:at + s], ver=ver)
        at += s
    if at < len(msg):
        out += record(msg[at:], ver=ver)
    return out


def one_byte_records(msg):
    return b''.join(record(msg[i:i + 1]) for i in range(len(msg)))


def haproxy_shift(true_name=A, fake_name=F):
    """A sound hello in two records whose SNI is true_name; a reader that
    takes the bytes after the first record header as one message (not
    removing the second record's 5-byte header) finds fake_name first.
    Extension Y (0xff01) holds the record boundary; its last 5 bytes are,
    to that reader, the head of an extension (0xff03) whose body runs over
    the real header of X (0xff02) into X's body, where a server_name
    extension naming fake_name sits."""
    pad = 8
    fake = sni(fake_name)
    x_body = bytes(pad) + fake + bytes(4)
    z_len = 1 + 4 + pad
    y_body = bytes(20) + be16(0xff03) + be16(z_len) + b'\x00'
    exts = ext(0xff01, y_body) + ext(0xff02, x_body) + sni(true_name) + COMMON
    msg = hello(exts)
    # the boundary: 10 bytes into Y's body
    y_at = msg.index(ext(0xff01, y_body))
    return records(msg, [y_at + 4 + 10])


def sslv2_hello():
    """An SSLv2-format ClientHello (RFC 6101 appendix E.2) offering TLS 1.2: no extensions."""
    specs = b'\x00\xc0\x2f' + b'\x00\x00\xff'
    chal = bytes(range(16))
    b = b'\x01' + be16(0x0303) + be16(len(specs)) + be16(0) + be16(len(chal)) + specs + chal
    return bytes([0x80 | (len(b) >> 8), len(b) & 0xff]) + b
