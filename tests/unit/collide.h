/*
 * collide.h - keys an attacker would compute to flood a hash table that
 * hashed them with FNV-1a: strings whose FNV-1a hash, started from a given
 * state, agrees in its low `bits` bits, so that they all fall in one bucket
 * of a table of 2^bits buckets (whatever common suffix follows them). The
 * tests give such keys to the tables that hash packet data (sensor/hash.h)
 * and check that they spread.
 *
 * How: one FNV-1a step, h = (h ^ c) * prime, maps the low bits of h to the
 * low bits of the result alone, and is invertible there (prime is odd). So
 * each 3-character suffix can be run backwards from the target to the
 * state it needs; a prefix whose state is one of those gets that suffix.
 */
#ifndef EW_TEST_COLLIDE_H
#define EW_TEST_COLLIDE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLLIDE_LEN 16 /* "d%06u" + 3 characters + NUL */

static uint64_t collide_step(uint64_t h, const char *s, uint64_t prime, uint64_t mask)
{
	for (; *s; s++)
		h = ((h ^ (uint8_t)*s) * prime) & mask;
	return h;
}

/* Fill out[0..n) with keys "d<6 digits><3 chars>" whose FNV-1a from state
 * s0 (prime, width-bit arithmetic) agree in the low `bits` (<= 16) bits.
 * Returns how many it made (n, unless a million prefixes were not enough). */
static unsigned collide_fnv(uint64_t s0, uint64_t prime, unsigned width, unsigned bits,
			   char (*out)[COLLIDE_LEN], unsigned n)
{
	static const char alpha[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	const uint64_t low = (1ull << bits) - 1;
	const uint64_t wmask = width == 64 ? UINT64_MAX : (1ull << width) - 1;
	uint64_t inv = prime; /* prime^-1 mod 2^64 by Newton's iteration */
	char (*need)[4] = calloc(low + 1, sizeof(*need));
	unsigned made = 0;

	if (!need)
		return 0;
	for (int i = 0; i < 5; i++)
		inv *= 2 - prime * inv;
	for (unsigned a = 0; a < 36; a++)
		for (unsigned b = 0; b < 36; b++)
			for (unsigned c = 0; c < 36; c++) {
				const char sfx[3] = {alpha[a], alpha[b], alpha[c]};
				uint64_t s = 0; /* the target */
				for (int k = 2; k >= 0; k--)
					s = ((s * inv) & low) ^ (uint8_t)sfx[k];
				if (!need[s][0])
					memcpy(need[s], sfx, 3);
			}
	for (unsigned i = 0; i < 1000000 && made < n; i++) {
		char pre[COLLIDE_LEN];
		snprintf(pre, sizeof(pre), "d%06u", i % 1000000);
		uint64_t s = collide_step(s0, pre, prime, wmask) & low;
		if (!need[s][0])
			continue;
		memcpy(out[made], pre, 7);
		memcpy(out[made] + 7, need[s], 3);
		out[made++][10] = '\0';
	}
	free(need);
	return made;
}

#endif
