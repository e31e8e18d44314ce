/*
 * test_quic.c - the QUIC analyzer: RFC 9001 Appendix A (v1 client keys, the
 * A.2 client Initial rebuilt byte for byte and opened again), RFC 9369
 * Appendix A (v2 keys and packet), every truncation point of the header,
 * a bad tag, non-Initial long headers, frames, a ClientHello split over two
 * Initial packets (CRYPTO offsets out of order) and coalesced packets, and
 * the "transport":"quic" rendering.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <malloc.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "../unit/check.h"
#include "cursor.h"
#include "flow.h"
#include "module.h"
#include "quic.h"
#include "tls.h"
#include "tls_json.h"

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;

	for (; s[0] && s[1]; s += 2) {
		unsigned v;
		sscanf(s, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	return n;
}

static int eqhex(const uint8_t *b, const char *hex)
{
	uint8_t want[2048];
	size_t n = unhex(hex, want);
	return memcmp(b, want, n) == 0;
}

static const char dcid_hex[] = "8394c8f03e515708";

/* RFC 9001 A.2: the CRYPTO frame with the ClientHello (245 bytes). */
static const char a2_crypto[] =
	"060040f1010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e868"
	"04fe3a47f06a2b69484c00000413011302010000c000000010000e00000b6578"
	"616d706c652e636f6dff01000100000a00080006001d00170018001000070005"
	"04616c706e000500050100000000003300260024001d00209370b2c9caa47fba"
	"baf4559fedba753de171fa71f50f1ce15d43e994ec74d748002b000302030400"
	"0d0010000e0403050306030203080408050806002d00020101001c0002400100"
	"3900320408ffffffffffffffff05048000ffff07048000ffff08011001048000"
	"75300901100f088394c8f03e51570806048000ffff";

/* RFC 9001 A.2: the first bytes of the protected packet. */
static const char a2_protected[] =
	"c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11"
	"d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399"
	"1c260ec4c60d17b31f8429157bb35a1282a643a8d2262cad67500cadb8e7378c"
	"8eb7539ec4d4905fed1bee1fc8aafba17c750e2c7ace01e6005f80fcb7df6212"
	"30c83711b39343fa028cea7f7fb5ff89eac2308249a02252155e2347b63d58c5"
	"457afd84d05dfffdb20392844ae812154682e9cf012f9021a6f0be17";

/* RFC 9369 A.2: the first bytes of the protected v2 packet. */
static const char v2_protected[] = "d76b3343cf088394c8f03e5157080000449ea0c95e82ffe67b6abcdb";

/*
 * Protect an Initial: header (first byte's type from the version, pn_len
 * bytes of packet number pn, 2-byte length) + payload, encrypted with the
 * client keys of dcid. Returns the packet length written to out.
 */
static size_t build(uint32_t version, const uint8_t *dcid, size_t dlen, uint32_t pn,
		    size_t pn_len, const uint8_t *pl, size_t plen, uint8_t *out)
{
	struct quic_keys k;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t nonce[12], mask[32];
	size_t n = 0, pn_off;
	int l, type = version == QUIC_V2 ? 1 : 0;
	size_t length = pn_len + plen + 16;

	quic_initial_keys(version, dcid, dlen, &k);
	out[n++] = (uint8_t)(0xc0 | type << 4 | (pn_len - 1));
	for (int i = 3; i >= 0; i--)
		out[n++] = (uint8_t)(version >> (8 * i));
	out[n++] = (uint8_t)dlen;
	memcpy(out + n, dcid, dlen);
	n += dlen;
	out[n++] = 0; /* scid */
	out[n++] = 0; /* token */
	out[n++] = (uint8_t)(0x40 | length >> 8);
	out[n++] = (uint8_t)length;
	pn_off = n;
	for (size_t i = 0; i < pn_len; i++)
		out[n++] = (uint8_t)(pn >> (8 * (pn_len - 1 - i)));
	memcpy(nonce, k.iv, 12);
	for (int i = 0; i < 4; i++)
		nonce[8 + i] ^= (uint8_t)(pn >> (24 - 8 * i));
	EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, k.key, nonce);
	EVP_EncryptUpdate(c, NULL, &l, out, (int)n);
	EVP_EncryptUpdate(c, out + n, &l, pl, (int)plen);
	EVP_EncryptFinal_ex(c, out + n + plen, &l);
	EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, out + n + plen);
	n += plen + 16;
	EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, k.hp, NULL);
	EVP_CIPHER_CTX_set_padding(c, 0);
	EVP_EncryptUpdate(c, mask, &l, out + pn_off + 4, 16);
	out[0] ^= mask[0] & 0x0f;
	for (size_t i = 0; i < pn_len; i++)
		out[pn_off + i] ^= mask[1 + i];
	EVP_CIPHER_CTX_free(c);
	return n;
}

/* The A.2 plaintext: CRYPTO frame + PADDING to 1162 bytes. */
static size_t a2_payload(uint8_t *pl)
{
	memset(pl, 0, 1162);
	unhex(a2_crypto, pl);
	return 1162;
}

static void test_keys(void)
{
	uint8_t dcid[8];
	struct quic_keys k;

	unhex(dcid_hex, dcid);
	CHECK_EQ(quic_initial_keys(QUIC_V1, dcid, 8, &k), 0);
	CHECK(eqhex(k.key, "1f369613dd76d5467730efcbe3b1a22d"));
	CHECK(eqhex(k.iv, "fa044b2f42a3fd3b46fb255c"));
	CHECK(eqhex(k.hp, "9f50449e04a0e810283a1e9933adedd2"));
	CHECK_EQ(quic_initial_keys(QUIC_V2, dcid, 8, &k), 0);
	CHECK(eqhex(k.key, "8b1a0bc121284290a29e0971b5cd045d"));
	CHECK(eqhex(k.iv, "91f73e2351d8fa91660e909f"));
	CHECK(eqhex(k.hp, "45b95e15235d6f45a6b19cbcb0294ba9"));
	CHECK_EQ(quic_initial_keys(QUIC_DRAFT29, dcid, 8, &k), 0);
	CHECK_EQ(quic_initial_keys(0x12345678, dcid, 8, &k), -EINVAL);
	CHECK_EQ(quic_initial_keys(QUIC_V1, dcid, 21, &k), -EINVAL);
}

static void test_varint(void)
{
	uint8_t b[8];
	struct cur c;

	/* RFC 9000 A.1 examples */
	unhex("c2197c5eff14e88c", b);
	c = cur_init(b, 8);
	CHECK(quic_varint(&c) == 151288809941952652ull && !c.err);
	unhex("9d7f3e7d", b);
	c = cur_init(b, 4);
	CHECK_EQ(quic_varint(&c), 494878333);
	unhex("7bbd", b);
	c = cur_init(b, 2);
	CHECK_EQ(quic_varint(&c), 15293);
	c = cur_init(b, 1);
	CHECK_EQ(quic_varint(&c), 0);
	CHECK(c.err);
}

/* The A.2 packet, rebuilt and opened again; and the v2 packet of RFC 9369. */
static void test_a2(struct quic_ctx *q, struct tls_hello *h)
{
	uint8_t dcid[8], pl[1162], pkt[1300];
	struct quic_hdr hd;
	struct quic_keys k;
	struct quic_crypto *cr = calloc(1, sizeof(*cr));
	const uint8_t *plain;
	size_t plen, n, len;
	uint64_t pn;
	int cut;

	unhex(dcid_hex, dcid);
	a2_payload(pl);
	n = build(QUIC_V1, dcid, 8, 2, 4, pl, sizeof(pl), pkt);
	CHECK_EQ(n, 1200);
	CHECK(eqhex(pkt, a2_protected));
	CHECK_EQ(quic_parse_header(pkt, n, &hd), MOD_OK);
	CHECK_EQ(hd.version, QUIC_V1);
	CHECK_EQ(hd.dcid_len, 8);
	CHECK_EQ(hd.scid_len, 0);
	CHECK_EQ(hd.token_len, 0);
	CHECK_EQ(hd.length, 1182);
	CHECK_EQ(hd.pn_off, 18);
	CHECK_EQ(hd.pkt_len, 1200);
	quic_initial_keys(QUIC_V1, hd.dcid, hd.dcid_len, &k);
	CHECK_EQ(quic_decrypt(q, &k, pkt, &hd, &plain, &plen, &pn), MOD_OK);
	CHECK_EQ(pn, 2);
	CHECK_EQ(plen, 1162);
	CHECK(plain && memcmp(plain, pl, 1162) == 0);
	CHECK_EQ(quic_frames(plain, plen, cr), MOD_OK);
	CHECK_EQ(quic_crypto_hello(cr, &len, &cut), 1);
	CHECK_EQ(len, 4 + 0xed);
	CHECK_EQ(cut, 0);
	CHECK_EQ(tls_parse_transport(cr->buf, len, 0, "quic", h), MOD_OK);
	CHECK_STR(h->sni, "example.com");
	CHECK_STR(h->alpn_aux, "alpn");
	CHECK_EQ(h->version, 0x0304);
	CHECK(strstr(h->info, "\x1fquic\x1e") != NULL);

	json_t *o = json_object();
	CHECK_EQ(tls_info_json(o, h->info, h->info_len, OBS_TLS_CLIENT_HELLO), 0);
	CHECK_STR(json_string_value(json_object_get(o, "transport")), "quic");
	CHECK_STR(json_string_value(json_object_get(o, "sni")), "example.com");
	json_decref(o);
	/* TLS over TCP: no transport field, no key */
	CHECK_EQ(tls_parse_handshake(cr->buf, len, 0, h), MOD_OK);
	CHECK(strstr(h->info, "quic") == NULL);
	o = json_object();
	CHECK_EQ(tls_info_json(o, h->info, h->info_len, OBS_TLS_CLIENT_HELLO), 0);
	CHECK(json_object_get(o, "transport") == NULL);
	json_decref(o);

	/* a bad tag, a bad byte of ciphertext, a bad header byte (AAD) */
	for (int i = 0; i < 3; i++) {
		size_t at = i == 0 ? n - 1 : i == 1 ? 100 : 3;
		pkt[at] ^= 0x01;
		if (quic_parse_header(pkt, n, &hd) == MOD_OK) {
			quic_initial_keys(hd.version, hd.dcid, hd.dcid_len, &k);
			CHECK_EQ(quic_decrypt(q, &k, pkt, &hd, &plain, &plen, &pn), MOD_MALFORMED);
			CHECK(plain == NULL);
		} else {
			CHECK_EQ(quic_parse_header(pkt, n, &hd), MOD_NOT_MINE); /* version */
		}
		pkt[at] ^= 0x01;
	}

	/* every truncation point of the header (and of the packet) */
	for (size_t t = 0; t < n; t++)
		CHECK_EQ(quic_parse_header(pkt, t, &hd), MOD_TRUNCATED);

	/* v2 (RFC 9369 A.2): same payload, packet number 2 */
	n = build(QUIC_V2, dcid, 8, 2, 4, pl, sizeof(pl), pkt);
	CHECK_EQ(n, 1200);
	CHECK(eqhex(pkt, v2_protected));
	CHECK_EQ(quic_parse_header(pkt, n, &hd), MOD_OK);
	quic_initial_keys(hd.version, hd.dcid, hd.dcid_len, &k);
	CHECK_EQ(quic_decrypt(q, &k, pkt, &hd, &plain, &plen, &pn), MOD_OK);
	CHECK(plain && memcmp(plain, pl, 1162) == 0);
	/* draft-29 round trip */
	n = build(QUIC_DRAFT29, dcid, 8, 7, 1, pl, sizeof(pl), pkt);
	CHECK_EQ(quic_parse_header(pkt, n, &hd), MOD_OK);
	quic_initial_keys(hd.version, hd.dcid, hd.dcid_len, &k);
	CHECK_EQ(quic_decrypt(q, &k, pkt, &hd, &plain, &plen, &pn), MOD_OK);
	CHECK_EQ(pn, 7);
	free(cr);
}

static void test_not_mine(void)
{
	uint8_t b[64];
	struct quic_hdr hd;

	memset(b, 0, sizeof(b));
	/* v1 long header types: Initial 0, 0-RTT 1, Handshake 2, Retry 3 */
	unhex("e000000001088394c8f03e5157080000449e", b);
	CHECK_EQ(quic_parse_header(b, 40, &hd), MOD_NOT_MINE);
	unhex("d000000001", b);
	CHECK_EQ(quic_parse_header(b, 40, &hd), MOD_NOT_MINE);
	/* v2: Initial is 0b01, so 0b00 is 0-RTT */
	unhex("c06b3343cf", b);
	CHECK_EQ(quic_parse_header(b, 40, &hd), MOD_NOT_MINE);
	/* short header, a fixed bit unset, version negotiation, unknown version */
	unhex("4000000001", b);
	CHECK_EQ(quic_parse_header(b, 40, &hd), MOD_NOT_MINE);
	unhex("8000000001", b);
	CHECK_EQ(quic_parse_header(b, 40, &hd), MOD_NOT_MINE);
	unhex("c000000000", b);
	CHECK_EQ(quic_parse_header(b, 40, &hd), MOD_NOT_MINE);
	unhex("c012345678", b);
	CHECK_EQ(quic_parse_header(b, 40, &hd), MOD_NOT_MINE);
	/* a DNS query's first byte */
	unhex("12340100", b);
	CHECK_EQ(quic_parse_header(b, 40, &hd), MOD_NOT_MINE);
	/* malformed: DCID 21 bytes, SCID 21 bytes, length < 20 */
	memset(b, 0, sizeof(b));
	unhex("c00000000115", b);
	CHECK_EQ(quic_parse_header(b, 64, &hd), MOD_MALFORMED);
	unhex("c0000000010100ff", b);
	b[7] = 21;
	CHECK_EQ(quic_parse_header(b, 64, &hd), MOD_MALFORMED);
	unhex("c00000000101000000134142434445", b);
	CHECK_EQ(quic_parse_header(b, 64, &hd), MOD_MALFORMED);
	unhex("c00000000101000000144142434445", b);
	CHECK_EQ(quic_parse_header(b, 64, &hd), MOD_OK);
	/* a token, and a token running past the datagram */
	unhex("c0000000010100000341424314", b);
	CHECK_EQ(quic_parse_header(b, 64, &hd), MOD_OK);
	CHECK_EQ(hd.token_len, 3);
	CHECK_EQ(hd.pn_off, 13);
	unhex("c00000000101000000407f", b);
	CHECK_EQ(quic_parse_header(b, 64, &hd), MOD_TRUNCATED);
}

static void test_frames(void)
{
	struct quic_crypto *cr = calloc(1, sizeof(*cr));
	uint8_t f[64];
	size_t n, len;
	int cut;

	/* PING, ACK (1 range), ACK_ECN, CONNECTION_CLOSE, PADDING, CRYPTO */
	n = unhex("01" "0205000101" "02050001000102" "03050000010101" "1c0a00024142" "0000"
		  "060004" "01000000", f);
	CHECK_EQ(quic_frames(f, n, cr), MOD_OK);
	CHECK_EQ(quic_crypto_hello(cr, &len, &cut), 1);
	CHECK_EQ(len, 4);
	/* a frame type not allowed in an Initial (STREAM 0x08), NEW_TOKEN 0x07 */
	quic_crypto_reset(cr);
	n = unhex("0108", f);
	CHECK_EQ(quic_frames(f, n, cr), MOD_MALFORMED);
	/* CRYPTO running past the payload, a cut varint, a cut ACK */
	n = unhex("06000a0102", f);
	CHECK_EQ(quic_frames(f, n, cr), MOD_MALFORMED);
	n = unhex("0640", f);
	CHECK_EQ(quic_frames(f, n, cr), MOD_MALFORMED);
	n = unhex("020500", f);
	CHECK_EQ(quic_frames(f, n, cr), MOD_MALFORMED);
	/* CRYPTO past the cap is dropped; a reach past 2^62 is malformed */
	quic_crypto_reset(cr);
	n = unhex("0680010000" "02" "4142", f);
	CHECK_EQ(quic_frames(f, n, cr), MOD_OK);
	CHECK_EQ(quic_crypto_hello(cr, &len, &cut), 0);
	n = unhex("06ffffffffffffffff0141", f);
	CHECK_EQ(quic_frames(f, n, cr), MOD_MALFORMED);
	/* a hello longer than the buffer: parsed as a prefix once it is full */
	quic_crypto_reset(cr);
	memset(cr->buf, 0, sizeof(cr->buf));
	for (size_t i = 0; i < QUIC_CRYPTO_MAX; i++)
		cr->have[i >> 3] |= (uint8_t)(1u << (i & 7));
	cr->buf[0] = 1;
	cr->buf[1] = 0x01; /* 65536 + ... bytes */
	CHECK_EQ(quic_crypto_hello(cr, &len, &cut), 1);
	CHECK_EQ(len, QUIC_CRYPTO_MAX);
	CHECK_EQ(cut, 1);
	free(cr);
}

/* ---- the module ----------------------------------------------------------- */

struct sink {
	int n;
	char name[256];
	char info[4096];
	unsigned flags;
};

static int sink_obs(struct emit *e, const struct obs *o)
{
	struct sink *s = e->core;

	s->n++;
	if (o->kind != OBS_TLS_CLIENT_HELLO)
		return 0;
	snprintf(s->name, sizeof(s->name), "%s", o->name);
	snprintf(s->info, sizeof(s->info), "%s", o->info);
	s->flags = o->flags;
	return 0;
}

static struct pkt udp_pkt(const uint8_t *d, size_t n, struct flow *f, int dir)
{
	struct pkt p = {0};

	p.ipv = 4;
	p.proto = IPPROTO_UDP;
	p.sport = 50000;
	p.dport = 443;
	p.payload = d;
	p.payload_len = n;
	p.flow = f;
	p.dir = dir;
	return p;
}

/* The A.2 CRYPTO data (the ClientHello) as two frames in two packets, out of order. */
static void test_module(void)
{
	const struct module *m = &quic_module;
	void *st = NULL;
	struct sink s = {0};
	struct emit e = {sink_obs, NULL, &s};
	uint8_t dcid[8], crypto[300], pl[1200], pkt[2600], p2[1300];
	size_t hl, n, n2, k;
	struct flow f;
	struct pkt p;

	unhex(dcid_hex, dcid);
	hl = unhex(a2_crypto + 8, crypto); /* the handshake message (241 bytes) */
	CHECK_EQ(hl, 241);
	CHECK_EQ(m->init(NULL, &st), 0);
	CHECK(m->sel == (SEL_UDP | SEL_PAYLOAD));

	/* not mine: not UDP, not QUIC; truncated */
	p = udp_pkt((const uint8_t *)"\x12\x34\x01\x00", 4, NULL, 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_NOT_MINE);
	p.proto = IPPROTO_TCP;
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_NOT_MINE);

	/* one datagram, no flow: emitted */
	a2_payload(pl);
	n = build(QUIC_V1, dcid, 8, 2, 4, pl, 1162, pkt);
	p = udp_pkt(pkt, n, NULL, 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_OK);
	CHECK_EQ(s.n, 1);
	CHECK_STR(s.name, "example.com");
	CHECK(strstr(s.info, "\x1fquic\x1e") != NULL);
	p = udp_pkt(pkt, 30, NULL, 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_TRUNCATED);
	/* a bad tag: malformed, no event */
	pkt[n - 1] ^= 0x80;
	p = udp_pkt(pkt, n, NULL, 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_MALFORMED);
	CHECK_EQ(s.n, 1);

	/* split: second half first (offset 100), then the first 100 bytes */
	memset(&f, 0, sizeof(f));
	f.proto = IPPROTO_UDP;
	memset(pl, 0, sizeof(pl));
	k = 0;
	pl[k++] = 0x06;
	pl[k++] = 0x40;
	pl[k++] = 100;
	pl[k++] = 0x40;
	pl[k++] = (uint8_t)(hl - 100);
	memcpy(pl + k, crypto + 100, hl - 100);
	n = build(QUIC_V1, dcid, 8, 0, 1, pl, 1100, pkt);
	p = udp_pkt(pkt, n, &f, 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_OK);
	CHECK_EQ(s.n, 1);
	CHECK(f.app == APP_TLS && f.app_state != NULL);
	/* the server's Initial is not looked at */
	p = udp_pkt(pkt, n, &f, 1);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_NOT_MINE);
	memset(pl, 0, sizeof(pl));
	k = 0;
	pl[k++] = 0x06;
	pl[k++] = 0x00;
	pl[k++] = 0x40; /* 100 needs a 2-byte varint */
	pl[k++] = 100;
	memcpy(pl + k, crypto, 100);
	n2 = build(QUIC_V1, dcid, 8, 1, 2, pl, 1100, p2);
	p = udp_pkt(p2, n2, &f, 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_OK);
	CHECK_EQ(s.n, 2);
	CHECK_STR(s.name, "example.com");
	/* done: the flow keeps a few bytes, not the 9 KiB of its assembly */
	CHECK(f.app_state != NULL && malloc_usable_size(f.app_state) < 64);
	/* ... and later Initials are not decrypted again */
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_OK);
	CHECK_EQ(s.n, 2);
	free(f.app_state);

	/* both halves coalesced in one datagram, then trailing zero padding */
	memset(&f, 0, sizeof(f));
	memcpy(pkt + n, p2, n2);
	memset(pkt + n + n2, 0, 50);
	p = udp_pkt(pkt, n + n2 + 50, &f, 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_OK);
	CHECK_EQ(s.n, 3);
	CHECK(f.app_state != NULL && malloc_usable_size(f.app_state) < 64);
	free(f.app_state);

	/* another analyzer's flow */
	memset(&f, 0, sizeof(f));
	f.app = APP_DNS;
	p = udp_pkt(p2, n2, &f, 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_NOT_MINE);

	/* QUIC_GATHER_MAX flows gathering at once, each in a slot: when all are
	 * held, a new one takes the slot the hand is at (the oldest taker),
	 * whose gathering stops (counted); a hello one datagram holds whole
	 * takes no slot; a flow that ends gives its slot back. 4,096 half-sent
	 * hellos no longer hide a real one spread over two datagrams (review19
	 * R19-1). pkt holds the second part of the hello, then p2 (the first),
	 * then 50 zeros: its first n bytes are the part without the start. */
	static struct flow fl[QUIC_GATHER_MAX + 2];
	struct mod_counter mc[MOD_COUNTERS_MAX];
	uint64_t events = s.n;
	for (unsigned i = 0; i < QUIC_GATHER_MAX; i++) { /* the fillers */
		fl[i].proto = IPPROTO_UDP;
		p = udp_pkt(pkt, n, &fl[i], 0);
		CHECK_EQ(m->on_packet(st, &p, &e), MOD_OK);
		CHECK(fl[i].app == APP_TLS && malloc_usable_size(fl[i].app_state) > 8000);
	}
	CHECK_EQ(m->counters(st, mc), 3);
	CHECK_STR(mc[0].name, "gather_evicted");
	CHECK_EQ(mc[0].value, 0);
	CHECK_EQ(mc[1].value, QUIC_GATHER_MAX); /* gathering */
	CHECK_EQ(mc[2].value, QUIC_GATHER_MAX); /* gather_peak */
	/* the real hello, in two datagrams, after them: read */
	struct flow *real = &fl[QUIC_GATHER_MAX];
	real->proto = IPPROTO_UDP;
	p = udp_pkt(pkt, n, real, 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_OK);
	CHECK(real->app == APP_TLS && malloc_usable_size(real->app_state) > 8000);
	CHECK(malloc_usable_size(fl[0].app_state) < 64); /* the oldest filler gave way */
	m->counters(st, mc);
	CHECK_EQ(mc[0].value, 1);
	CHECK_EQ(mc[1].value, QUIC_GATHER_MAX);
	p = udp_pkt(p2, n2, real, 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_OK);
	CHECK_EQ(s.n, events + 1);
	CHECK_STR(s.name, "example.com");
	m->counters(st, mc);
	CHECK_EQ(mc[1].value, QUIC_GATHER_MAX - 1);
	/* the filler that gave way reads nothing more */
	p = udp_pkt(p2, n2, &fl[0], 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_OK);
	CHECK_EQ(s.n, events + 1);
	/* a filler that ends gives its slot back; one that finishes, too */
	m->on_flow_end(st, &fl[1]);
	free(fl[1].app_state);
	fl[1].app_state = NULL;
	p = udp_pkt(p2, n2, &fl[2], 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_OK);
	CHECK_EQ(s.n, events + 2);
	m->counters(st, mc);
	CHECK_EQ(mc[1].value, QUIC_GATHER_MAX - 3);
	/* a hello one datagram holds whole takes no slot: read, its flow done */
	struct flow *whole = &fl[QUIC_GATHER_MAX + 1];
	whole->proto = IPPROTO_UDP;
	p = udp_pkt(pkt, n + n2 + 50, whole, 0);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_OK);
	CHECK_EQ(s.n, events + 3);
	CHECK(whole->app == APP_TLS && malloc_usable_size(whole->app_state) < 64);
	CHECK_EQ(m->on_packet(st, &p, &e), MOD_OK); /* done: not read again */
	CHECK_EQ(s.n, events + 3);
	m->counters(st, mc);
	CHECK_EQ(mc[0].value, 1);
	CHECK_EQ(mc[1].value, QUIC_GATHER_MAX - 3);
	for (unsigned i = 0; i < QUIC_GATHER_MAX + 2; i++) {
		m->on_flow_end(st, &fl[i]);
		free(fl[i].app_state);
	}
	m->counters(st, mc);
	CHECK_EQ(mc[1].value, 0);

	m->fini(st);
	m->fini(NULL);
}

int main(void)
{
	struct quic_ctx *q = quic_ctx_new();
	struct tls_hello *h = calloc(1, sizeof(*h));

	CHECK(q != NULL);
	test_keys();
	test_varint();
	test_a2(q, h);
	test_not_mine();
	test_frames();
	test_module();
	quic_ctx_free(q);
	quic_ctx_free(NULL);
	free(h);
	return check_done();
}
