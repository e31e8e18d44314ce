/*
 * fuzz_tls.c - fuzz target over the TLS analyzer's pure parsers and its JSON
 * renderer: the input is taken (1) as the first bytes of a TCP stream
 * (tls_reassemble, then tls_parse_handshake on what it gathered, whole or as
 * a prefix), (2) as the same stream walked as it passes (tls_walk_feed in
 * pieces of sizes drawn from the input's length, then tls_walk_hello), which
 * must give what the whole parse gives when the message is whole and no
 * bound of the walk was reached, (3) as one handshake message, whole and as
 * a prefix, and (4)
 * as the start of a stream that may upgrade to TLS (tls_upgrade, the
 * client's side and each kind of server side: the offset it gives must lie
 * inside the input and start a handshake record). Every
 * detail record produced is rendered by tls_info_json. Invariants that must
 * hold for any input abort (so the fuzzer and the corpus test notice).
 *
 * Built with tests/fuzz/driver.c (main() replays the corpus directory
 * tests/fuzz/corpus-tls/ as an ordinary test) or with -fsanitize=fuzzer.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analyzers/module.h"
#include "analyzers/tls.h"
#include "api/tls_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The record must be printable ASCII plus separators, end in RS, and render;
 * a sound ClientHello has a JA4 unless no_ja4 (a walk past its bounds). */
static void check_hello_ja4(const struct tls_hello *h, int r, int no_ja4)
{
	if (h->info_len != strlen(h->info) || h->sni_len != strlen(h->sni) ||
	    h->alpn_aux_len != strlen(h->alpn_aux) || strlen(h->ja4) >= TLS_JA4_MAX)
		abort();
	if (r == MOD_NOT_MINE || h->info_len == 0)
		return;
	if (h->info[h->info_len - 1] != REC_RS)
		abort();
	for (size_t i = 0; i < h->info_len; i++) {
		char c = h->info[i];
		if ((c < 0x20 || c > 0x7e) && c != REC_US && c != REC_RS && c != REC_GS)
			abort();
	}
	if (r == MOD_OK && h->hs_type == TLS_CLIENT_HELLO && strlen(h->ja4) != (no_ja4 ? 0 : 36))
		abort();
	json_t *o = json_object();
	if (!o)
		return;
	int kind = h->hs_type == TLS_CLIENT_HELLO ? OBS_TLS_CLIENT_HELLO : OBS_TLS_SERVER_HELLO;
	if (tls_info_json(o, h->info, h->info_len, kind) == -EINVAL)
		abort(); /* the analyzer's own record must always be readable */
	json_decref(o);
}

static void check_hello(const struct tls_hello *h, int r)
{
	check_hello_ja4(h, r, 0);
}

/*
 * The stream s[0..n) walked in pieces, each call given the bytes not yet
 * used, as the module slides its window; into g, compared with h (the
 * whole parse of the same message) when whole is set.
 */
static void walk(const uint8_t *s, size_t n, int whole, const struct tls_hello *h,
		 struct tls_hello *g)
{
	struct tls_walk *w = malloc(sizeof(*w));
	uint32_t x = (uint32_t)n * 2654435761u + 1;
	size_t start = 0, end = 0, used;
	const char *why;
	int r = TLS_ASM_MORE;

	if (!w)
		abort();
	tls_walk_init(w);
	while (end < n) {
		x = x * 1103515245u + 12345u;
		end += 1 + ((x >> 16) % 4 == 0 ? (x >> 8) % 2000 : (x >> 8) % 4);
		if (end > n)
			end = n;
		r = tls_walk_feed(w, s + start, end - start, &used, &why);
		if ((r == TLS_ASM_BAD) != (why != NULL) || (r == TLS_ASM_MORE && used > end - start))
			abort();
		start += used;
		if (r != TLS_ASM_MORE)
			break;
	}
	int rw = tls_walk_hello(w, r == TLS_ASM_DONE ? 0 : OBS_F_TRUNCATED, g);
	check_hello_ja4(g, rw, w->inexact);
	if (whole && r == TLS_ASM_DONE && !w->inexact && !w->sni_cut && !w->alpn_cut &&
	    (strcmp(h->info, g->info) != 0 || strcmp(h->sni, g->sni) != 0 ||
	     strcmp(h->alpn_aux, g->alpn_aux) != 0 || h->flags != g->flags))
		abort(); /* the walk and the whole parse disagree */
	free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tls_hello *h = malloc(sizeof(*h));
	uint8_t *msg = malloc(TLS_MSG_MAX);
	uint8_t *copy = malloc(size ? size : 1);
	const char *why;
	size_t mlen;
	int r;

	if (!h || !msg || !copy)
		abort();
	/* an exact-size copy, so ASan sees any overread */
	memcpy(copy, data, size);

	r = tls_reassemble(copy, size, msg, TLS_MSG_MAX, &mlen, &why);
	if (mlen > TLS_MSG_MAX || (r == TLS_ASM_BAD) != (why != NULL))
		abort();
	if (r != TLS_ASM_NOT_HS) {
		uint8_t *m = malloc(mlen ? mlen : 1);
		if (!m)
			abort();
		memcpy(m, msg, mlen);
		int pr = tls_parse_handshake(m, mlen, r == TLS_ASM_DONE ? 0 : OBS_F_TRUNCATED, h);
		check_hello(h, pr);
		free(m);
		struct tls_hello *g = malloc(sizeof(*g));
		if (!g)
			abort();
		walk(copy, size, r == TLS_ASM_DONE && mlen >= 1 && msg[0] == TLS_CLIENT_HELLO, h, g);
		free(g);
	}

	/* the name an SNI router takes: of the input as a message, and of
	 * the bytes after a first record header as on the wire */
	for (size_t at = 0; at <= 5 && at <= size; at += 5) {
		char name[TLS_SNI_MAX];
		size_t nl = tls_router_sni(copy + at, size - at, name, sizeof(name));
		if (nl >= sizeof(name) || strlen(name) != nl)
			abort();
	}

	r = tls_parse_handshake(copy, size, 0, h);
	check_hello(h, r);
	r = tls_parse_handshake(copy, size, OBS_F_TRUNCATED, h);
	check_hello(h, r);

	for (int side = 0; side <= TLS_UP_MYSQL; side++) { /* the last kind */
		int kind = side, client = side == 0;
		size_t off = 0;
		r = tls_upgrade(copy, size, client, &kind, &off);
		if (r < -1 || r > 1 || (r == 1 && (off + 3 > size || copy[off] != 0x16)) ||
		    (client && r == 1 && (kind < TLS_UP_TEXT || kind > TLS_UP_MYSQL)))
			abort();
	}

	free(copy);
	free(msg);
	free(h);
	return 0;
}
