/*
 * text.h - rendering attacker-chosen bytes and addresses as safe text.
 *
 * Every name that leaves an analyzer (qname, Host, SNI) is rendered here, so
 * the JSON, the logs and the store see only printable ASCII: bytes outside
 * 0x20..0x7e become \xNN and a backslash becomes \\, so nothing is lost and
 * the text can be decoded back. All functions write into caller buffers and
 * always NUL-terminate when cap > 0.
 */
#ifndef EW_TEXT_H
#define EW_TEXT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Escape n bytes of src into dst (cap bytes). Returns the length written
 * (excluding the NUL). When dst is too small the output is cut at a whole
 * escape and *cut (if not NULL) is set to 1.
 */
size_t text_escape(char *dst, size_t cap, const uint8_t *src, size_t n, int *cut);

/* Render an IPv4 (ipv 4, 4 bytes) or IPv6 (ipv 6, 16 bytes, RFC 5952)
 * address, the same text as glibc's inet_ntop, without its sprintf. dst
 * needs at least 46 bytes (less: "" and 0). Returns the length. */
size_t text_addr(char *dst, size_t cap, int ipv, const uint8_t *addr);

/* The value of one hex digit (either case), or -1. */
static inline int text_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* FNV-1a over s[0..n), 64 bits: the hash of the detectors' name caches.
 * (The basis is one digit short of the published one; every cache uses the
 * same, and it hashes as well.) */
#define TEXT_FNV64_BASIS 1469598103934665603ull
#define TEXT_FNV64_PRIME 1099511628211ull
static inline uint64_t text_fnv64(const char *s, size_t n)
{
	uint64_t h = TEXT_FNV64_BASIS;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * TEXT_FNV64_PRIME;
	return h;
}

/* RFC 3339 UTC with microseconds: 2026-11-29T10:01:05.861204Z (28 bytes).
 * RFC 3339 has four-digit years: a time past the end of 9999 (a pcapng
 * timestamp is 64 bits, and a capture's bytes are anyone's) is shown as
 * TEXT_TIME_MAX_US, 9999-12-31T23:59:59.999999Z. */
#define TEXT_TIME_MAX_US 253402300799999999ull
size_t text_time(char *dst, size_t cap, uint64_t ts_us);

/*
 * A duration: decimal digits and one unit, s, m, h, d or w (seconds when
 * there is none), e.g. "90s", "12h", "7d". Into *us (microseconds); 0, or
 * -1 when s is not one or is not within [min_us, max_us].
 */
int text_duration(const char *s, uint64_t min_us, uint64_t max_us, uint64_t *us);

/*
 * A point in time, as the events and alerts show it or as a person types
 * it, into *us (microseconds since 1970, UTC; negative before):
 *   RFC 3339: 2026-11-29T10:00:08Z, 2026-11-29T10:00:08.661204Z,
 *     2026-11-29T11:00:08+01:00 ('T' or a space, 'Z' or 'z'; a fraction of
 *     any length, read to the microsecond; a leap second :60 is the next);
 *   a date alone: 2026-11-29 (its midnight, UTC);
 *   seconds since 1970: 1795945208 or 1795945208.661 (as tshark's
 *     frame.time_epoch and tcpdump -tt show them).
 * Years 0000-9999. 0, or -1 when s is none of these or names no day (a
 * 30th of February).
 */
int text_parse_time(const char *s, int64_t *us);

/* Shannon entropy of n bytes, bits per byte (0 for n == 0). */
double text_entropy(const uint8_t *s, size_t n);

#endif
