"""cases.py - the review21 SNI cases: name -> list of byte chunks, each sent
as its own TCP segment. A = allowed.example, F = forbidden.example; every
hostile case is built so that a reader could take F where another takes A
or nothing (FINDINGS.md)."""
from hellos import (A, F, COMMON, alpn, be16, ext, hello, haproxy_shift, one_byte_records,
                    record, records, sni, sslv2_hello, VERSIONS)

R = record


def one(msg, **kw):
    return [record(msg, **kw)]


def cases():
    c = {}
    c['base_A'] = one(hello(name=A))
    c['base_F'] = one(hello(name=F))
    c['two_sni_ext_AF'] = one(hello(sni(A) + sni(F) + COMMON))
    c['two_sni_ext_FA'] = one(hello(sni(F) + sni(A) + COMMON))
    c['list_AF'] = one(hello(sni(entries=[(0, A), (0, F)]) + COMMON))
    c['list_type1_then_F'] = one(hello(sni(entries=[(1, b'x'), (0, F)]) + COMMON))
    c['type1A_ext_then_F_ext'] = one(hello(sni(entries=[(1, b'x'), (0, A)]) + sni(F) + COMMON))
    c['empty_name'] = one(hello(sni(b'') + COMMON))
    c['nul_in_name'] = one(hello(name=F + b'\x00' + A))
    # escaped, the name ends in ".allowed.example": a subdomain of the allowed name
    c['nul_dot_allowed'] = one(hello(name=F + b'\x00.' + A))
    c['trailing_dot'] = one(hello(name=F + b'.'))
    c['uppercase'] = one(hello(name=F.upper()))
    c['long_300'] = one(hello(name=b'a' * 280 + b'.' + F))
    c['non_ascii'] = one(hello(name='forbidden.ex\u00e4mple'.encode()))
    # list length shorter than its entry (extension length true)
    c['list_len_short'] = one(hello(sni(F, list_len=len(F) + 2) + COMMON))
    # list length longer than the extension: the 4 bytes after it are an empty extension 0xfafa
    c['list_len_long'] = one(hello(sni(F, list_len=len(F) + 3 + 4) + ext(0xfafa, b'') + COMMON))
    # extension longer than its list: 4 zero bytes inside the server_name extension
    c['sni_ext_len_long'] = one(hello(sni(F, extra=bytes(4)) + COMMON))
    # name length past the list and the extension
    c['name_len_long'] = one(hello(ext(0, be16(len(F) + 3) + b'\x00' + be16(len(F) + 8) + F) + COMMON))
    # extensions block length: covering only COMMON, server_name after it
    c['ext_block_short'] = one(hello(COMMON + sni(F), ext_block_len=len(COMMON)))
    c['ext_block_long'] = one(hello(sni(F) + COMMON, ext_block_len=0xffff))
    # SNI A in the block, F after its end (inside the handshake message)
    c['after_block_F'] = one(hello(COMMON + sni(A), tail=sni(F)))
    # ALPN's extension longer than its list, hiding a server_name F
    c['alpn_hides_F'] = one(hello(alpn(b'h2', extra=sni(F)) + sni(A) + COMMON))
    # supported_versions' extension longer than its list, hiding a server_name F
    c['versions_hides_F'] = one(hello(ext(0x002b, b'\x02\x03\x04' + sni(F)) + sni(A) +
                                      COMMON.replace(VERSIONS, b'')))
    # handshake length ends before the server_name (sent in the same record)
    m = hello(COMMON + sni(F))
    c['hs_len_short'] = one(m[:1] + (len(m) - 4 - len(sni(F))).to_bytes(3, 'big') + m[4:])
    m = hello(name=A)
    c['hs_trailing_second_hello_F'] = one(m + hello(name=F))
    c['second_hello_record_F'] = one(m) + one(hello(name=F))
    c['trailing_after_exts'] = one(hello(name=F, tail=b'\x00\x00'))
    c['split_mid_sni'] = [records(m, [len(m) - len(COMMON) - 6])]
    c['one_byte_records'] = [one_byte_records(hello(name=F))]
    c['haproxy_shift_A_F'] = [haproxy_shift(A, F)]
    c['haproxy_shift_segments'] = [haproxy_shift(A, F)[:60], haproxy_shift(A, F)[60:]]
    for nm, pre in (('ccs', R(b'\x01', 0x14)), ('alert', R(b'\x01\x00', 0x15)),
                    ('appdata', R(b'xx', 0x17)), ('heartbeat', R(b'\x01\x00\x00', 0x18)),
                    ('empty_hs', R(b'')), ('ccs_bad_len', R(b'\x01\x01', 0x14))):
        c['before_' + nm] = [pre + one(hello(name=F))[0]]
    mf = hello(name=F)
    c['ccs_among_records'] = [records(mf, [40])[:45] + R(b'\x01', 0x14) + records(mf, [40])[45:]]
    c['alert_among_records'] = [records(mf, [40])[:45] + R(b'\x01\x00', 0x15) + records(mf, [40])[45:]]
    for v in (0x0300, 0x0304, 0x03ff, 0x0401, 0xffff, 0x0200):
        c['recver_%04x' % v] = one(hello(name=F), ver=v)
    c['sslv2'] = [sslv2_hello()]
    for v in (0x0300, 0x0200, 0x0304, 0xffff, 0x0302):
        c['legacy_%04x' % v] = one(hello(name=F, legacy=v))
    c['sid_len_33'] = one(hello(name=F, sid=bytes(33)))
    c['cs_len_odd'] = one(hello(name=F, cs_len=7))
    c['comp_len_0'] = one(hello(name=F, comp=b'', comp_len=0))
    c['ech_outer_F'] = one(hello(sni(F) + ext(0xfe0d, b'\x00\x00\x01\x00\x01\x00\x00\x20' + bytes(32) +
                                            be16(16) + bytes(16)) + COMMON))
    c['segments_3'] = [one(hello(name=F))[0][:30], one(hello(name=F))[0][30:90],
                       one(hello(name=F))[0][90:]]
    return c
