/*
 * sha256.h - SHA-256 (FIPS 180-4), small and dependency-free, for the JA4
 * fingerprint of analyzers/tls.c. Not constant-time and not meant for
 * secrets: it hashes public packet fields.
 *
 * Use: sha256_init, any number of sha256_update, then sha256_final. The
 * context is the caller's (no allocation, no globals); after sha256_final it
 * must be initialised again before reuse.
 */
#ifndef EW_SHA256_H
#define EW_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

struct sha256 {
	uint32_t h[8];
	uint64_t bits;   /* message length so far, in bits */
	uint8_t buf[64]; /* the partial block */
	size_t n;        /* bytes in buf */
};

void sha256_init(struct sha256 *s);
/* Hash n more bytes of p (p may be NULL when n is 0). */
void sha256_update(struct sha256 *s, const void *p, size_t n);
/* Pad, finish and write the 32-byte digest to out. */
void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]);

#endif
