/*
 * fuzz_quic.c - fuzz target over the QUIC analyzer's pure parsers: the input
 * is taken (1) as a UDP datagram: its coalesced long headers
 * (quic_parse_header), each opened with the client Initial keys of its DCID
 * (quic_decrypt: almost always a tag failure, which must be MOD_MALFORMED),
 * and (2) as a decrypted Initial payload: its frames (quic_frames) gathered
 * into the CRYPTO buffer, and the hello, once whole, through
 * tls_parse_transport and tls_info_json. Invariants that must hold for any
 * input abort.
 *
 * Built with tests/fuzz/driver.c (main() replays tests/fuzz/corpus-quic/ as
 * an ordinary test) or with -fsanitize=fuzzer.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analyzers/module.h"
#include "analyzers/quic.h"
#include "analyzers/tls.h"
#include "api/tls_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void datagram(struct quic_ctx *q, const uint8_t *d, size_t n)
{
	struct quic_hdr h;
	struct quic_keys k;
	const uint8_t *plain;
	size_t plen, off = 0;
	uint64_t pn;

	while (off < n && quic_parse_header(d + off, n - off, &h) == MOD_OK) {
		if (h.pkt_len > n - off || h.pn_off + 20 > h.pkt_len || h.dcid_len > QUIC_CID_MAX)
			abort();
		if (quic_initial_keys(h.version, h.dcid, h.dcid_len, &k) != 0)
			abort();
		int r = quic_decrypt(q, &k, d + off, &h, &plain, &plen, &pn);
		if (r != MOD_OK && r != MOD_MALFORMED)
			abort();
		if (r == MOD_OK && (!plain || plen + 16 > h.pkt_len))
			abort();
		off += h.pkt_len;
	}
}

static void frames(const uint8_t *d, size_t n, struct quic_crypto *cr, struct tls_hello *h)
{
	size_t len;
	int cut, r;

	quic_crypto_reset(cr);
	r = quic_frames(d, n, cr);
	if (r != MOD_OK && r != MOD_MALFORMED)
		abort();
	if (!quic_crypto_hello(cr, &len, &cut))
		return;
	if (len > QUIC_CRYPTO_MAX || (cut && len != QUIC_CRYPTO_MAX))
		abort();
	r = tls_parse_transport(cr->buf, len, cut ? OBS_F_TRUNCATED : 0, "quic", h);
	if (r == MOD_NOT_MINE || h->hs_type != TLS_CLIENT_HELLO || h->info_len == 0)
		return;
	json_t *o = json_object();
	if (!o)
		return;
	if (tls_info_json(o, h->info, h->info_len, OBS_TLS_CLIENT_HELLO) == -EINVAL)
		abort();
	const char *t = json_string_value(json_object_get(o, "transport"));
	if (!t || strcmp(t, "quic") != 0)
		abort();
	json_decref(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct quic_ctx *q = quic_ctx_new();
	struct quic_crypto *cr = malloc(sizeof(*cr));
	struct tls_hello *h = malloc(sizeof(*h));
	uint8_t *copy = malloc(size ? size : 1);

	if (!q || !cr || !h || !copy)
		abort();
	/* an exact-size copy, so ASan sees any overread */
	memcpy(copy, data, size);
	datagram(q, copy, size);
	frames(copy, size, cr, h);
	free(copy);
	free(h);
	free(cr);
	quic_ctx_free(q);
	return 0;
}
