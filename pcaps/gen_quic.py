#!/usr/bin/python3
"""gen_quic.py - write pcaps/quic_initial.pcap, the QUIC Initial fixture.

README
------
    /usr/bin/python3 pcaps/gen_quic.py [OUTDIR]      (OUTDIR defaults to this folder)

Every run writes a byte-identical file: timestamps, ports, IP ids and packet
numbers are fixed, nothing is random.  scapy (python3-scapy) builds the
Ethernet/IPv4/UDP headers and checksums; the QUIC packets are protected here
with python3-cryptography (AES-128-GCM, AES-128-ECB header protection) and
the RFC 9001 key schedule (HKDF-SHA256 with the standard library's hmac).
The pcap container is written by hand, as in gen_fixtures.py.

Client 10.99.0.10, server 192.0.2.80, UDP port 443:
  1. port 50000: the client Initial of RFC 9001 Appendix A.2, byte for byte
     (DCID 8394c8f03e515708, packet number 2, SNI example.com, ALPN "alpn");
     the script checks it against the RFC's protected bytes.
  2. port 50001: the same ClientHello with the SNI split.example.net, its
     CRYPTO data split over two Initial datagrams (packet numbers 0 and 1), the
     second half sent first (CRYPTO offsets out of order).
  3. port 50002: a QUIC version 2 (RFC 9369) Initial, SNI v2.example.org.
"""
import hashlib
import hmac
import os
import struct
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from scapy.all import IP, UDP, Ether, raw

T0 = 1795946400 * 1000000  # 2026-11-29T10:00:00Z, as gen_fixtures.py
CLIENT, SERVER = "10.99.0.10", "192.0.2.80"
V1, V2 = 0x00000001, 0x6B3343CF
SALT = {
    V1: bytes.fromhex("38762cf7f55934b34d179ae6a4c80cadccbb7f0a"),
    V2: bytes.fromhex("0dede3def700a6db819381be6e269dcbf9bd2ed9"),
}
# RFC 9001 A.2: the ClientHello (the CRYPTO frame's data)
HELLO = bytes.fromhex(
    "010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e868"
    "04fe3a47f06a2b69484c00000413011302010000c000000010000e00000b6578"
    "616d706c652e636f6dff01000100000a00080006001d00170018001000070005"
    "04616c706e000500050100000000003300260024001d00209370b2c9caa47fba"
    "baf4559fedba753de171fa71f50f1ce15d43e994ec74d748002b000302030400"
    "0d0010000e0403050306030203080408050806002d00020101001c0002400100"
    "3900320408ffffffffffffffff05048000ffff07048000ffff08011001048000"
    "75300901100f088394c8f03e51570806048000ffff")
A2_PROTECTED_PREFIX = bytes.fromhex(
    "c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11"
    "d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399")


def hkdf_expand_label(secret, label, length):
    full = b"tls13 " + label.encode()
    info = struct.pack(">HB", length, len(full)) + full + b"\x00"
    return hmac.new(secret, info + b"\x01", hashlib.sha256).digest()[:length]


def client_keys(version, dcid):
    initial = hmac.new(SALT[version], dcid, hashlib.sha256).digest()
    client = hkdf_expand_label(initial, "client in", 32)
    p = "quicv2 " if version == V2 else "quic "
    return (hkdf_expand_label(client, p + "key", 16), hkdf_expand_label(client, p + "iv", 12),
            hkdf_expand_label(client, p + "hp", 16))


def varint(v):
    if v < 0x40:
        return bytes([v])
    if v < 0x4000:
        return struct.pack(">H", 0x4000 | v)
    return struct.pack(">I", 0x80000000 | v)


def crypto_frame(off, data):
    return b"\x06" + varint(off) + varint(len(data)) + data


def initial(version, dcid, pn, frames, plen=1162):
    """A client Initial (4-byte packet number) whose plaintext is frames
    padded with PADDING to plen bytes."""
    key, iv, hp = client_keys(version, dcid)
    payload = frames + bytes(plen - len(frames))
    typ = 1 if version == V2 else 0
    hdr = bytes([0xC0 | typ << 4 | 3]) + struct.pack(">I", version)
    hdr += bytes([len(dcid)]) + dcid + b"\x00" + b"\x00"
    hdr += struct.pack(">H", 0x4000 | (4 + plen + 16)) + struct.pack(">I", pn)
    nonce = bytes(a ^ b for a, b in zip(iv, pn.to_bytes(12, "big")))
    ct = AESGCM(key).encrypt(nonce, payload, hdr)
    pkt = bytearray(hdr + ct)
    pn_off = len(hdr) - 4
    enc = Cipher(algorithms.AES(hp), modes.ECB()).encryptor()
    mask = enc.update(bytes(pkt[pn_off + 4:pn_off + 20])) + enc.finalize()
    pkt[0] ^= mask[0] & 0x0F
    for i in range(4):
        pkt[pn_off + i] ^= mask[1 + i]
    return bytes(pkt)


def with_sni(name):
    """The A.2 ClientHello with another host_name (lengths fixed up)."""
    h = bytearray(HELLO)
    at = h.index(b"example.com")
    d = len(name) - 11
    h[at:at + 11] = name
    # name length, server_name list, extension, extensions block, handshake
    struct.pack_into(">H", h, at - 2, len(name))
    struct.pack_into(">H", h, at - 5, 14 + d)
    struct.pack_into(">H", h, at - 7, 16 + d)
    struct.pack_into(">H", h, at - 11, 0xC0 + d)
    h[1:4] = (0xED + d).to_bytes(3, "big")
    return bytes(h)


def frame(ts, sport, payload, ipid):
    p = (Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:50") /
         IP(src=CLIENT, dst=SERVER, id=ipid, ttl=64) / UDP(sport=sport, dport=443) / payload)
    return (ts, raw(p))


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    a2 = initial(V1, bytes.fromhex("8394c8f03e515708"), 2, crypto_frame(0, HELLO))
    assert len(a2) == 1200 and a2.startswith(A2_PROTECTED_PREFIX), "not the RFC 9001 A.2 packet"

    split = with_sni(b"split.example.net")
    dcid2 = bytes.fromhex("0011223344556677")
    half = 100
    second = initial(V1, dcid2, 0, crypto_frame(half, split[half:]))
    first = initial(V1, dcid2, 1, crypto_frame(0, split[:half]))

    v2 = initial(V2, bytes.fromhex("a1a2a3a4a5a6a7a8"), 0,
                 crypto_frame(0, with_sni(b"v2.example.org")))

    recs = [
        frame(T0, 50000, a2, 1),
        frame(T0 + 100000, 50001, second, 2),
        frame(T0 + 110000, 50001, first, 3),
        frame(T0 + 200000, 50002, v2, 4),
    ]
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for ts, data in recs:
        out.append(struct.pack("<IIII", ts // 1000000, ts % 1000000, len(data), len(data)))
        out.append(data)
    with open(os.path.join(outdir, "quic_initial.pcap"), "wb") as f:
        f.write(b"".join(out))


if __name__ == "__main__":
    main()
