/*
 * quic.c - the QUIC analyzer: the SNI (and the rest of the ClientHello) of a
 * client's QUIC Initial packets, on any UDP port; one OBS_TLS_CLIENT_HELLO
 * per flow, its record marked transport "quic" (tls.h).
 *
 * The not-mine exit is cheap and comes before any crypto: the first byte
 * must be a long header with the version's Initial type, and the version one
 * of v1, v2 or draft-29. Then the client Initial keys are derived from the
 * DCID (HKDF-SHA256 over analyzers/sha256.c, cached per flow), header
 * protection is removed and the payload opened with AES-128-GCM through two
 * OpenSSL cipher contexts made once in quic_init and reused for every
 * packet; a tag that does not verify is MOD_MALFORMED (counted, no event).
 * The frames' CRYPTO data is gathered by offset in the flow's state (one
 * flat struct quic_flow in flow->app_state, freed by the flow table), so a
 * ClientHello spread over several Initial packets or datagrams is parsed
 * once its last byte arrives. Then the flow is done: later packets are
 * MOD_OK without decryption, and its state shrinks to the struct quic_done
 * at its start (9 KiB to 4 bytes, for the minute an idle UDP flow stays).
 * At most QUIC_GATHER_MAX flows gather at once (about 38 MB), each in a
 * slot: when all are taken, a new one takes the slot of the flow that has
 * held its slot through the most newcomers (a hand goes round the slots),
 * whose gathering stops (module.quic.gather_evicted). Holding every slot
 * with half-sent hellos so that a real one spread over two datagrams is
 * not read (review19 R19-1) would take 4,096 new ones between its two
 * datagrams. A flow that ends while gathering gives its slot back
 * (on_flow_end). Without a flow (no table), each datagram is
 * looked at on its own in the module's scratch buffer.
 *
 * Nothing here prints, judges or keeps a global; every packet byte is read
 * through sensor/cursor.h.
 */
#include "quic.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "../sensor/cursor.h"
#include "../sensor/flow.h"
#include "module.h"
#include "sha256.h"
#include "tls.h"

/* ---- header --------------------------------------------------------------- */

uint64_t quic_varint(struct cur *c)
{
	uint8_t b = cur_u8(c);
	unsigned n = 1u << (b >> 6);
	uint64_t v = b & 0x3f;

	for (unsigned i = 1; i < n; i++)
		v = v << 8 | cur_u8(c);
	return c->err ? 0 : v;
}

/* The Initial long-packet type of a version; -1 for an unknown version. */
static int initial_type(uint32_t version)
{
	switch (version) {
	case QUIC_V1:
	case QUIC_DRAFT29:
		return 0;
	case QUIC_V2:
		return 1;
	default:
		return -1;
	}
}

int quic_parse_header(const uint8_t *d, size_t n, struct quic_hdr *h)
{
	struct cur c = cur_init(d, n);
	int type;

	memset(h, 0, sizeof(*h));
	h->first = cur_u8(&c);
	h->version = cur_be32(&c);
	if (n >= 1 && (h->first & 0xc0) != 0xc0)
		return MOD_NOT_MINE;
	if (c.err)
		return MOD_TRUNCATED;
	type = initial_type(h->version);
	if (type < 0 || ((h->first >> 4) & 3) != type)
		return MOD_NOT_MINE;

	h->dcid_len = cur_u8(&c);
	if (h->dcid_len > QUIC_CID_MAX)
		return MOD_MALFORMED;
	cur_bytes(&c, h->dcid, h->dcid_len);
	h->scid_len = cur_u8(&c);
	if (h->scid_len > QUIC_CID_MAX)
		return MOD_MALFORMED;
	cur_bytes(&c, h->scid, h->scid_len);
	h->token_len = quic_varint(&c);
	if (c.err)
		return MOD_TRUNCATED;
	if (!cur_has(&c, h->token_len))
		return MOD_TRUNCATED;
	cur_skip(&c, (size_t)h->token_len);
	h->length = quic_varint(&c);
	if (c.err)
		return MOD_TRUNCATED;
	if (h->length < 20)
		return MOD_MALFORMED; /* packet number (<= 4) + the 16-byte sample */
	h->pn_off = n - cur_left(&c);
	if (!cur_has(&c, h->length))
		return MOD_TRUNCATED;
	h->pkt_len = h->pn_off + (size_t)h->length;
	return MOD_OK;
}

/* ---- keys: HKDF-SHA256 (RFC 5869) on the project's SHA-256 ---------------- */

static void hmac_sha256(const uint8_t *key, size_t klen, const uint8_t *m1, size_t n1,
			const uint8_t *m2, size_t n2, uint8_t out[SHA256_LEN])
{
	uint8_t k[64] = {0}, pad[64], inner[SHA256_LEN];
	struct sha256 s;

	if (klen > sizeof(k)) {
		sha256_init(&s);
		sha256_update(&s, key, klen);
		sha256_final(&s, k);
	} else {
		memcpy(k, key, klen);
	}
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	sha256_init(&s);
	sha256_update(&s, pad, 64);
	sha256_update(&s, m1, n1);
	sha256_update(&s, m2, n2);
	sha256_final(&s, inner);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	sha256_init(&s);
	sha256_update(&s, pad, 64);
	sha256_update(&s, inner, sizeof(inner));
	sha256_final(&s, out);
}

/* HKDF-Expand-Label(secret, label, "", len) of TLS 1.3 (RFC 8446 7.1), len <= 32. */
static void expand_label(const uint8_t secret[SHA256_LEN], const char *label, uint8_t *out,
			 size_t len)
{
	uint8_t info[2 + 1 + 255 + 1 + 1], t[SHA256_LEN];
	size_t ll = strlen(label), n = 0;
	const uint8_t one = 1;

	info[n++] = (uint8_t)(len >> 8);
	info[n++] = (uint8_t)len;
	info[n++] = (uint8_t)(6 + ll);
	memcpy(info + n, "tls13 ", 6);
	n += 6;
	memcpy(info + n, label, ll);
	n += ll;
	info[n++] = 0; /* empty context */
	/* one block: T(1) = HMAC(secret, info || 0x01) */
	hmac_sha256(secret, SHA256_LEN, info, n, &one, 1, t);
	memcpy(out, t, len);
}

static const uint8_t salt_v1[20] = {
	0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
	0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a,
};
static const uint8_t salt_v2[20] = {
	0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
	0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9,
};
static const uint8_t salt_draft29[20] = {
	0xaf, 0xbf, 0xec, 0x28, 0x99, 0x93, 0xd2, 0x4c, 0x9e, 0x97,
	0x86, 0xf1, 0x9c, 0x61, 0x11, 0xe0, 0x43, 0x90, 0xa8, 0x99,
};

int quic_initial_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len,
		      struct quic_keys *k)
{
	uint8_t initial[SHA256_LEN], client[SHA256_LEN];
	const uint8_t *salt;
	int v2 = 0;

	switch (version) {
	case QUIC_V1:
		salt = salt_v1;
		break;
	case QUIC_V2:
		salt = salt_v2;
		v2 = 1;
		break;
	case QUIC_DRAFT29:
		salt = salt_draft29;
		break;
	default:
		return -EINVAL;
	}
	if (dcid_len > QUIC_CID_MAX)
		return -EINVAL;
	hmac_sha256(salt, sizeof(salt_v1), dcid, dcid_len, NULL, 0, initial); /* Extract */
	expand_label(initial, "client in", client, sizeof(client));
	expand_label(client, v2 ? "quicv2 key" : "quic key", k->key, sizeof(k->key));
	expand_label(client, v2 ? "quicv2 iv" : "quic iv", k->iv, sizeof(k->iv));
	expand_label(client, v2 ? "quicv2 hp" : "quic hp", k->hp, sizeof(k->hp));
	return 0;
}

/* ---- packet protection ---------------------------------------------------- */

struct quic_ctx {
	EVP_CIPHER_CTX *ecb; /* header protection */
	EVP_CIPHER_CTX *gcm; /* payload */
	uint8_t plain[QUIC_PLAIN_MAX];
};

struct quic_ctx *quic_ctx_new(void)
{
	struct quic_ctx *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->ecb = EVP_CIPHER_CTX_new();
	q->gcm = EVP_CIPHER_CTX_new();
	if (!q->ecb || !q->gcm ||
	    EVP_EncryptInit_ex(q->ecb, EVP_aes_128_ecb(), NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_set_padding(q->ecb, 0) != 1 ||
	    EVP_DecryptInit_ex(q->gcm, EVP_aes_128_gcm(), NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(q->gcm, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) != 1)
		goto fail;
	return q;
fail:
	quic_ctx_free(q);
	return NULL;
}

void quic_ctx_free(struct quic_ctx *q)
{
	if (!q)
		return;
	EVP_CIPHER_CTX_free(q->ecb);
	EVP_CIPHER_CTX_free(q->gcm);
	free(q);
}

int quic_decrypt(struct quic_ctx *q, const struct quic_keys *k, const uint8_t *d,
		 const struct quic_hdr *h, const uint8_t **plain, size_t *plain_len, uint64_t *pn)
{
	struct cur c = cur_init(d, h->pkt_len), s;
	uint8_t sample[16], mask[32], pnb[4], nonce[12], tag[16], first;
	const uint8_t *hdr, *ct;
	size_t pn_len, ct_len;
	int outl = 0, fin = 0;

	*plain = NULL;
	*plain_len = 0;
	*pn = 0;
	s = c;
	cur_skip(&s, h->pn_off + 4);
	cur_bytes(&s, sample, sizeof(sample));
	if (s.err)
		return MOD_MALFORMED;
	if (EVP_EncryptInit_ex(q->ecb, NULL, NULL, k->hp, NULL) != 1 ||
	    EVP_EncryptUpdate(q->ecb, mask, &outl, sample, sizeof(sample)) != 1 || outl != 16)
		return -EIO;
	first = (uint8_t)(cur_u8(&c) ^ (mask[0] & 0x0f));
	pn_len = (size_t)(first & 3) + 1;
	hdr = cur_ptr(&c, h->pn_off - 1); /* version .. length, borrowed for the AAD */
	for (size_t i = 0; i < pn_len; i++) {
		pnb[i] = (uint8_t)(cur_u8(&c) ^ mask[1 + i]);
		*pn = *pn << 8 | pnb[i];
	}
	if (c.err || cur_left(&c) < sizeof(tag))
		return MOD_MALFORMED;
	ct_len = cur_left(&c) - sizeof(tag);
	ct = cur_ptr(&c, ct_len);
	cur_bytes(&c, tag, sizeof(tag));
	if (c.err || ct_len > sizeof(q->plain))
		return MOD_MALFORMED;

	memcpy(nonce, k->iv, sizeof(nonce));
	for (int i = 0; i < 8; i++)
		nonce[4 + i] ^= (uint8_t)(*pn >> (56 - 8 * i));
	if (EVP_DecryptInit_ex(q->gcm, NULL, NULL, k->key, nonce) != 1 ||
	    EVP_DecryptUpdate(q->gcm, NULL, &outl, &first, 1) != 1 ||
	    EVP_DecryptUpdate(q->gcm, NULL, &outl, hdr, (int)(h->pn_off - 1)) != 1 ||
	    EVP_DecryptUpdate(q->gcm, NULL, &outl, pnb, (int)pn_len) != 1 ||
	    EVP_DecryptUpdate(q->gcm, q->plain, &outl, ct, (int)ct_len) != 1 ||
	    EVP_CIPHER_CTX_ctrl(q->gcm, EVP_CTRL_GCM_SET_TAG, sizeof(tag), tag) != 1)
		return -EIO;
	if (EVP_DecryptFinal_ex(q->gcm, q->plain + outl, &fin) != 1)
		return MOD_MALFORMED; /* the tag does not verify */
	if (first & 0x0c)
		return MOD_MALFORMED; /* reserved bits (RFC 9000 17.2) */
	*plain = q->plain;
	*plain_len = (size_t)outl + (size_t)fin;
	return MOD_OK;
}

/* ---- frames and the CRYPTO stream ----------------------------------------- */

enum {
	FR_PADDING = 0x00,
	FR_PING = 0x01,
	FR_ACK = 0x02,
	FR_ACK_ECN = 0x03,
	FR_CRYPTO = 0x06,
	FR_CLOSE = 0x1c,
};

void quic_crypto_reset(struct quic_crypto *cr)
{
	memset(cr->have, 0, sizeof(cr->have));
}

/* Copy data[0..n) to stream offset off; bytes at or past the cap are dropped. */
static void crypto_put(struct quic_crypto *cr, uint64_t off, struct cur *data)
{
	size_t n = cur_left(data);

	if (off >= QUIC_CRYPTO_MAX)
		return;
	if (n > QUIC_CRYPTO_MAX - off)
		n = QUIC_CRYPTO_MAX - (size_t)off;
	cur_bytes(data, cr->buf + off, n);
	for (size_t i = (size_t)off; i < (size_t)off + n; i++)
		cr->have[i >> 3] |= (uint8_t)(1u << (i & 7));
}

int quic_frames(const uint8_t *p, size_t n, struct quic_crypto *cr)
{
	struct cur c = cur_init(p, n), data;
	uint64_t type, off, len, count;

	while (cur_left(&c)) {
		type = quic_varint(&c);
		switch (type) {
		case FR_PADDING:
		case FR_PING:
			break;
		case FR_ACK:
		case FR_ACK_ECN:
			quic_varint(&c); /* largest acknowledged */
			quic_varint(&c); /* delay */
			count = quic_varint(&c);
			quic_varint(&c); /* first range */
			for (uint64_t i = 0; i < count && !c.err; i++) {
				quic_varint(&c); /* gap */
				quic_varint(&c); /* range length */
			}
			if (type == FR_ACK_ECN) {
				quic_varint(&c);
				quic_varint(&c);
				quic_varint(&c);
			}
			break;
		case FR_CRYPTO:
			off = quic_varint(&c);
			len = quic_varint(&c);
			if (c.err || off + len >= (1ull << 62) || !cur_has(&c, len))
				return MOD_MALFORMED;
			data = cur_take(&c, (size_t)len);
			crypto_put(cr, off, &data);
			break;
		case FR_CLOSE:
			quic_varint(&c); /* error code */
			quic_varint(&c); /* frame type */
			len = quic_varint(&c);
			if (c.err || !cur_has(&c, len))
				return MOD_MALFORMED;
			cur_skip(&c, (size_t)len);
			break;
		default:
			return MOD_MALFORMED; /* not allowed in an Initial */
		}
		if (c.err)
			return MOD_MALFORMED;
	}
	return MOD_OK;
}

int quic_crypto_hello(const struct quic_crypto *cr, size_t *len, int *cut)
{
	size_t have = 0, need;
	struct cur h;

	*len = 0;
	*cut = 0;
	while (have < QUIC_CRYPTO_MAX && (cr->have[have >> 3] & (1u << (have & 7))))
		have++;
	if (have < 4)
		return 0;
	h = cur_init(cr->buf, have);
	cur_skip(&h, 1);
	need = 4 + (size_t)cur_be24(&h);
	if (need <= have) {
		*len = need;
		return 1;
	}
	if (have == QUIC_CRYPTO_MAX) {
		*len = have;
		*cut = 1;
		return 1;
	}
	return 0;
}

/* ---- the module ----------------------------------------------------------- */

/* What a flow keeps once its hello was handled: the start of its struct
 * quic_flow, to which the allocation shrinks (realloc). */
struct quic_done {
	int done; /* the hello was handled: nothing more to do */
};

/* Per flow, in flow->app_state (one flat allocation, freed by the flow table). */
struct quic_flow {
	struct quic_done d;       /* first: all a done flow keeps */
	uint32_t slot;            /* its gathering slot (quic_state.slot) */
	int keyed;                /* keys below are for version/dcid */
	uint32_t version;
	uint8_t dcid_len;
	uint8_t dcid[QUIC_CID_MAX];
	struct quic_keys keys;
	struct quic_crypto crypto;
};

struct quic_state {
	struct quic_ctx *ctx;
	struct quic_flow scratch; /* datagrams without a flow */
	struct tls_hello hello;
	uint64_t gathering;       /* flows holding a struct quic_flow (not done) */
	uint64_t gather_peak;
	uint64_t gather_evicted;  /* gatherings stopped for a newer one (all slots held) */
	/* The gathering flows: slot[i] holds one or is NULL; free_slot[0,
	 * n_free) are the NULL ones; hand is the next slot taken when none is
	 * free. */
	struct flow *slot[QUIC_GATHER_MAX];
	uint32_t free_slot[QUIC_GATHER_MAX];
	uint32_t n_free, hand;
};

/* f starts gathering in nf: a free slot, else the one the hand is at,
 * whose flow stops gathering (done, no event). */
static void gather_start(struct quic_state *st, struct flow *f, struct quic_flow *nf)
{
	uint32_t i;

	if (st->n_free) {
		i = st->free_slot[--st->n_free];
	} else {
		i = st->hand;
		st->hand = (st->hand + 1) % QUIC_GATHER_MAX;
		struct flow *old = st->slot[i];
		struct quic_done *qd = realloc(old->app_state, sizeof(*qd));
		if (qd)
			old->app_state = qd;
		((struct quic_done *)old->app_state)->done = 1;
		st->gather_evicted++;
		st->gathering--;
	}
	st->slot[i] = f;
	nf->slot = i;
	if (++st->gathering > st->gather_peak)
		st->gather_peak = st->gathering;
}

/* The flow of qf stops gathering: its slot is free again. */
static void gather_stop(struct quic_state *st, const struct quic_flow *qf)
{
	st->slot[qf->slot] = NULL;
	st->free_slot[st->n_free++] = qf->slot;
	st->gathering--;
}

static int quic_init(const struct module_env *env, void **state)
{
	struct quic_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->ctx = quic_ctx_new();
	if (!st->ctx) {
		free(st);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < QUIC_GATHER_MAX; i++)
		st->free_slot[i] = QUIC_GATHER_MAX - 1 - i; /* slot 0 taken first */
	st->n_free = QUIC_GATHER_MAX;
	*state = st;
	return 0;
}

static void quic_fini(void *state)
{
	struct quic_state *st = state;

	if (!st)
		return;
	quic_ctx_free(st->ctx);
	free(st);
}

static int emit_hello(const struct tls_hello *h, const struct pkt *p, struct emit *out)
{
	struct obs ob = {
		.kind = OBS_TLS_CLIENT_HELLO,
		.pkt = p,
		.name = h->sni,
		.name_len = h->sni_len,
		.aux = h->n_alpn ? h->alpn_aux : NULL,
		.aux_len = h->n_alpn ? h->alpn_aux_len : 0,
		.type = h->version,
		.size = h->hs_len,
		.flags = h->flags,
		.info = h->info,
		.info_len = h->info_len,
	};
	return out->obs(out, &ob);
}

/* Decrypt one Initial packet (header *h at d) into qf's CRYPTO stream. */
static int one_packet(struct quic_state *st, struct quic_flow *qf, const uint8_t *d,
		      const struct quic_hdr *h)
{
	const uint8_t *plain;
	size_t plen;
	uint64_t pn;
	int r;

	if (!qf->keyed || qf->version != h->version || qf->dcid_len != h->dcid_len ||
	    memcmp(qf->dcid, h->dcid, h->dcid_len) != 0) {
		if (quic_initial_keys(h->version, h->dcid, h->dcid_len, &qf->keys) != 0)
			return MOD_MALFORMED;
		qf->keyed = 1;
		qf->version = h->version;
		qf->dcid_len = h->dcid_len;
		memcpy(qf->dcid, h->dcid, h->dcid_len);
	}
	r = quic_decrypt(st->ctx, &qf->keys, d, h, &plain, &plen, &pn);
	if (r != MOD_OK)
		return r;
	return quic_frames(plain, plen, &qf->crypto);
}

static int quic_on_packet(void *state, const struct pkt *p, struct emit *out)
{
	struct quic_state *st = state;
	struct flow *f = p->flow;
	struct quic_flow *qf;
	struct quic_hdr h;
	struct cur c;
	size_t len;
	int r, cut, e, ret = MOD_OK, opened = 0;

	if (p->proto != IPPROTO_UDP)
		return MOD_NOT_MINE;
	r = quic_parse_header(p->payload, p->payload_len, &h);
	if (r == MOD_NOT_MINE)
		return r;
	if (f && (p->dir != 0 || (f->app != APP_NONE && !(f->app == APP_TLS && f->app_state)) ||
		  (f->app == APP_NONE && f->app_state)))
		return MOD_NOT_MINE; /* the server's Initials, or another analyzer's flow */
	if (f && f->app_state && ((const struct quic_done *)f->app_state)->done)
		return MOD_OK;
	qf = f ? f->app_state : NULL;
	if (r != MOD_OK)
		return r;

	if (!qf) {
		qf = &st->scratch;
		qf->d.done = 0;
		qf->keyed = 0;
		quic_crypto_reset(&qf->crypto);
	}
	/* the coalesced Initial packets of the datagram (RFC 9000 12.2) */
	c = cur_init(p->payload, p->payload_len);
	for (;;) {
		const uint8_t *d = c.p;
		r = one_packet(st, qf, d, &h);
		if (r != MOD_OK && r != MOD_MALFORMED)
			return r;
		if (r == MOD_MALFORMED) {
			ret = MOD_MALFORMED;
			if (qf == &st->scratch && !(f && opened))
				return ret; /* not decrypted: nothing to claim */
			break;
		}
		opened = 1;
		cur_skip(&c, h.pkt_len);
		if (quic_parse_header(c.p, cur_left(&c), &h) != MOD_OK)
			break;
	}

	if (!quic_crypto_hello(&qf->crypto, &len, &cut)) {
		if (qf == &st->scratch && f) {
			/* a QUIC flow whose hello goes on in later datagrams:
			 * claimed, and what this one gave kept in a slot */
			struct quic_flow *nf = malloc(sizeof(*nf));
			if (!nf)
				return -ENOMEM;
			memcpy(nf, qf, sizeof(*nf));
			f->app = APP_TLS;
			f->app_state = nf;
			gather_start(st, f, nf);
		}
		return ret;
	}
	qf->d.done = 1;
	r = tls_parse_transport(qf->crypto.buf, len, cut ? OBS_F_TRUNCATED : 0, "quic", &st->hello);
	if (r == MOD_NOT_MINE || st->hello.hs_type != TLS_CLIENT_HELLO)
		r = MOD_MALFORMED; /* the CRYPTO stream does not start with a ClientHello */
	else if (cut && !st->hello.has_sni)
		e = 0;
	else if ((e = emit_hello(&st->hello, p, out)) < 0)
		return e;
	else
		r = r != MOD_OK ? r : ret;
	if (qf != &st->scratch) { /* the hello is out: the rest of the state goes */
		gather_stop(st, qf);
		struct quic_done *qd = realloc(qf, sizeof(*qd));
		if (qd)
			f->app_state = qd; /* (a shrink that fails keeps the block) */
	} else if (f) { /* whole in one datagram: claimed, done, no slot taken */
		struct quic_done *qd = malloc(sizeof(*qd));
		if (!qd)
			return -ENOMEM;
		qd->done = 1;
		f->app = APP_TLS;
		f->app_state = qd;
	}
	return r;
}

/* A flow that ends while gathering gives its place back. Only QUIC puts
 * APP_TLS on a UDP flow. */
static void quic_flow_end(void *state, struct flow *f)
{
	struct quic_state *st = state;

	if (f->proto == IPPROTO_UDP && f->app == APP_TLS && f->app_state &&
	    !((const struct quic_done *)f->app_state)->done)
		gather_stop(st, f->app_state);
}

static unsigned quic_counters(const void *state, struct mod_counter *out)
{
	const struct quic_state *st = state;

	out[0] = (struct mod_counter){"gather_evicted", st->gather_evicted, MODC_SUMMARY};
	out[1] = (struct mod_counter){"gathering", st->gathering, 0};
	out[2] = (struct mod_counter){"gather_peak", st->gather_peak, 0};
	return 3;
}

const struct module quic_module = {
	.name = "quic",
	.sel = SEL_UDP | SEL_PAYLOAD,
	.init = quic_init,
	.fini = quic_fini,
	.on_packet = quic_on_packet,
	.on_flow_end = quic_flow_end,
	.counters = quic_counters,
};
