/*
 * csum.h - the Internet checksum (RFC 1071) of IPv4 headers and TCP
 * segments, to tell the segments a receiver drops for a bad checksum from
 * those it takes (flow.c, "Checksums" in flow.h).
 *
 * A sum is of 16-bit words, an odd last byte padded with zero; one's
 * complement addition does not care about byte order (RFC 1071 2(B)), so
 * it adds the machine's words, 64 bits at a time. The bytes are ones
 * the decoder already bounded (a header it read, a segment narrowed to the
 * IP length); callers pass their exact extent.
 */
#ifndef EGRESSWATCH_CSUM_H
#define EGRESSWATCH_CSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Add the n bytes at b to a running sum (not folded), in the machine's
 * byte order: csum_be turns the folded sum into the field's. Every piece
 * but the last must be of even length. */
static inline uint64_t csum_add(uint64_t sum, const uint8_t *b, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, 8);
		sum += (w & 0xffffffffu) + (w >> 32);
	}
	for (; i + 2 <= n; i += 2) {
		uint16_t w;
		memcpy(&w, b + i, 2);
		sum += w;
	}
	if (i < n) { /* an odd last byte, padded with a zero after it */
		uint16_t w = 0;
		memcpy(&w, b + i, 1);
		sum += w;
	}
	return sum;
}

/* Fold a running sum to 16 bits (not complemented): 0xffff for a header
 * or segment whose checksum is right, in either byte order. */
static inline uint16_t csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The running sum of the pseudo-header (RFC 768, RFC 9293 3.1, RFC 8200
 * 8.1) of a TCP or UDP segment of len bytes from src to dst (4 or 16 bytes
 * by ipv; dst the final destination when a route names one). */
static inline uint64_t csum_pseudo(int ipv, const uint8_t *src, const uint8_t *dst, uint8_t proto,
				   size_t len)
{
	uint8_t ph[40] = {0};
	size_t a = ipv == 4 ? 4 : 16;

	memcpy(ph, src, a);
	memcpy(ph + a, dst, a);
	if (ipv == 4) {
		ph[9] = proto;
		ph[10] = (uint8_t)(len >> 8);
		ph[11] = (uint8_t)len;
		return csum_add(0, ph, 12);
	}
	ph[34] = (uint8_t)(len >> 8);
	ph[35] = (uint8_t)len;
	ph[39] = proto;
	return csum_add(0, ph, 40);
}

/* A folded sum as a checksum field reads big-endian. */
static inline uint16_t csum_be(uint16_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint16_t)(x >> 8 | x << 8);
#else
	return x;
#endif
}

#endif
