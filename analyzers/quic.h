/*
 * quic.h - the QUIC analyzer's pure parts: the ClientHello carried in the
 * CRYPTO frames of a client's Initial packets (RFC 9000, RFC 9001), handed to
 * the TLS parser (tls.h) and reported as an OBS_TLS_CLIENT_HELLO whose detail
 * record ends with the transport field "quic".
 *
 * Steps, each over bounded cursors (sensor/cursor.h):
 *  1. quic_parse_header() reads a long header: first byte 0b11TT_xxxx with TT
 *     the version's Initial type (0 for v1 and draft-29, 1 for v2), version,
 *     DCID (<= 20 bytes), SCID (<= 20), token length (varint) and token,
 *     length (varint), then the packet number offset. No crypto: a datagram
 *     that is not an Initial of a known version is MOD_NOT_MINE here.
 *  2. quic_initial_keys() derives the client Initial key, IV and header
 *     protection key from the version's salt and the DCID (HKDF-SHA256 on
 *     analyzers/sha256.c; labels "quic key"/"quic iv"/"quic hp", for v2
 *     "quicv2 key"/"quicv2 iv"/"quicv2 hp").
 *  3. quic_decrypt() removes header protection (AES-128-ECB of the 16-byte
 *     sample 4 bytes after the packet number offset) and opens the payload
 *     with AES-128-GCM (nonce = IV ^ packet number, AAD = the unprotected
 *     header). OpenSSL's cipher contexts live in struct quic_ctx, made once.
 *  4. quic_frames() walks the plaintext frames allowed in an Initial
 *     (PADDING, PING, ACK, ACK_ECN, CRYPTO, CONNECTION_CLOSE) and copies
 *     CRYPTO data to its offset in a bounded buffer (struct quic_crypto),
 *     marking the bytes present; quic_crypto_hello() says when the first
 *     handshake message (4-byte header + its declared length) is whole.
 *
 * Hostile-protocol rules: connection IDs <= 20 bytes; the length field must
 * fit the datagram and hold the packet number and a 16-byte sample (>= 20);
 * reserved header bits 0 after unprotection; any frame type outside the
 * list above, a varint running past the payload, or a CRYPTO frame reaching
 * past 2^62 is malformed. CRYPTO bytes at offsets >= QUIC_CRYPTO_MAX are
 * dropped: a longer hello is parsed as a prefix (OBS_F_TRUNCATED).
 *
 * The analyzer (quic.c) looks only at the initiator's datagrams (the
 * server's Initials use server keys), one or more coalesced Initial packets
 * per datagram; per-flow state (flow->app_state) gathers CRYPTO data across
 * datagrams until the hello is whole, then the flow is done.
 */
#ifndef EW_QUIC_H
#define EW_QUIC_H

#include <stddef.h>
#include <stdint.h>

#define QUIC_CID_MAX 20
#define QUIC_CRYPTO_MAX 8192   /* CRYPTO stream bytes gathered per flow */
#define QUIC_GATHER_MAX 4096   /* flows gathering a hello at once (quic.c) */
#define QUIC_PLAIN_MAX 65536   /* largest decrypted payload (a UDP datagram) */

enum quic_version_num {
	QUIC_V1 = 0x00000001,
	QUIC_V2 = 0x6b3343cf,     /* RFC 9369 */
	QUIC_DRAFT29 = 0xff00001d,
};

/* A parsed long header; offsets are from the packet's first byte. */
struct quic_hdr {
	uint8_t first;            /* as on the wire (still protected) */
	uint32_t version;
	uint8_t dcid_len, scid_len;
	uint8_t dcid[QUIC_CID_MAX], scid[QUIC_CID_MAX];
	uint64_t token_len;
	uint64_t length;          /* packet number + payload + tag */
	size_t pn_off;            /* where the packet number starts */
	size_t pkt_len;           /* pn_off + length: the packet's bytes */
};

/* Client Initial protection keys (AES-128-GCM). */
struct quic_keys {
	uint8_t key[16], iv[12], hp[16];
};

/* CRYPTO stream bytes by offset, and which of them are present. */
struct quic_crypto {
	uint8_t buf[QUIC_CRYPTO_MAX];
	uint8_t have[QUIC_CRYPTO_MAX / 8];
};

struct quic_ctx;

/*
 * Read a QUIC variable-length integer (RFC 9000 16) from c; 0 and c->err set
 * when it runs out.
 */
struct cur;
uint64_t quic_varint(struct cur *c);

/*
 * Parse the long header of the packet at d[0..n) (the rest of a datagram).
 * Returns MOD_OK (*h filled, pkt_len <= n); MOD_NOT_MINE (not a long header
 * Initial of v1, v2 or draft-29: no field beyond the version is looked at);
 * MOD_TRUNCATED (the bytes end inside the header or before pkt_len);
 * MOD_MALFORMED (a CID over 20 bytes, a length under 20). Pure.
 */
int quic_parse_header(const uint8_t *d, size_t n, struct quic_hdr *h);

/*
 * Derive the client Initial keys of version from the client's DCID into *k.
 * Returns 0, or -EINVAL for an unknown version or a DCID over 20 bytes. Pure.
 */
int quic_initial_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len,
		      struct quic_keys *k);

/*
 * The cipher contexts and the plaintext buffer (about 64 KiB), made once per
 * module. quic_ctx_new returns NULL when out of memory or when libcrypto
 * lacks AES-128-GCM/ECB; the caller frees with quic_ctx_free (NULL is fine).
 */
struct quic_ctx *quic_ctx_new(void);
void quic_ctx_free(struct quic_ctx *q);

/*
 * Unprotect and decrypt the packet d[0..h->pkt_len) whose header is *h with
 * keys *k. On MOD_OK, *plain (inside q, valid until the next call) holds
 * *plain_len payload bytes and *pn the packet number. MOD_MALFORMED when
 * the tag does not verify or the reserved bits are set. No allocation.
 */
int quic_decrypt(struct quic_ctx *q, const struct quic_keys *k, const uint8_t *d,
		 const struct quic_hdr *h, const uint8_t **plain, size_t *plain_len, uint64_t *pn);

/* Forget every CRYPTO byte of cr (the buffer contents are left). */
void quic_crypto_reset(struct quic_crypto *cr);

/*
 * Walk the frames of an Initial payload p[0..n), copying CRYPTO data into
 * cr. Returns MOD_OK or MOD_MALFORMED (frames before the bad one are
 * kept). Pure: p is only borrowed.
 */
int quic_frames(const uint8_t *p, size_t n, struct quic_crypto *cr);

/*
 * The first handshake message of cr: returns 1 with *len = its length when
 * it is whole, or with *len = QUIC_CRYPTO_MAX and *cut = 1 when it is
 * longer than the buffer and the buffer is full; 0 while bytes are missing.
 */
int quic_crypto_hello(const struct quic_crypto *cr, size_t *len, int *cut);

/* The analyzer descriptor (analyzers/registry.c). */
struct module;
extern const struct module quic_module;

#endif
