/*
 * text.c - safe text from packet bytes: escaping, addresses, packet times,
 * entropy. No allocation, no locale: every test is plain ASCII arithmetic.
 */
#include "text.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

size_t text_escape(char *dst, size_t cap, const uint8_t *src, size_t n, int *cut)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (cut)
		*cut = 0;
	if (cap == 0) {
		if (cut && n)
			*cut = 1;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t b = src[i];
		if (b >= 0x20 && b <= 0x7e && b != '\\') {
			if (cap - o < 2)
				goto full;
			dst[o++] = (char)b;
		} else if (b == '\\') {
			if (cap - o < 3)
				goto full;
			dst[o++] = '\\';
			dst[o++] = '\\';
		} else {
			if (cap - o < 5)
				goto full;
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[b >> 4];
			dst[o++] = hex[b & 15];
		}
	}
	dst[o] = '\0';
	return o;
full:
	if (cut)
		*cut = 1;
	dst[o] = '\0';
	return o;
}

size_t text_addr(char *dst, size_t cap, int ipv, const uint8_t *addr)
{
	if (cap == 0)
		return 0;
	if (!inet_ntop(ipv == 6 ? AF_INET6 : AF_INET, addr, dst, (socklen_t)cap)) {
		dst[0] = '\0';
		return 0;
	}
	size_t n = 0;
	while (dst[n])
		n++;
	return n;
}

size_t text_time(char *dst, size_t cap, uint64_t ts_us)
{
	time_t secs = (time_t)(ts_us / 1000000u);
	struct tm tm;
	if (cap == 0)
		return 0;
	if (!gmtime_r(&secs, &tm)) {
		dst[0] = '\0';
		return 0;
	}
	int n = snprintf(dst, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (unsigned)(ts_us % 1000000u));
	if (n < 0)
		return 0;
	return (size_t)n < cap ? (size_t)n : cap - 1;
}

double text_entropy(const uint8_t *s, size_t n)
{
	/* Only the byte values present are touched (a bitmap of them, their
	 * counts set on first sight): no 1 KiB clear and no scan of 256 counts
	 * per call. The sum still runs in ascending byte order, so the result
	 * is bit for bit that of the plain loop. */
	unsigned counts[256];
	uint64_t seen[4] = {0, 0, 0, 0};
	double h = 0.0;

	if (n == 0)
		return 0.0;
	for (size_t i = 0; i < n; i++) {
		uint8_t b = s[i];
		uint64_t bit = 1ull << (b & 63);
		if (!(seen[b >> 6] & bit)) {
			seen[b >> 6] |= bit;
			counts[b] = 0;
		}
		counts[b]++;
	}
	for (unsigned w = 0; w < 4; w++) {
		for (uint64_t m = seen[w]; m; m &= m - 1) {
			unsigned i = w * 64 + (unsigned)__builtin_ctzll(m);
			double p = (double)counts[i] / (double)n;
			h -= p * log2(p);
		}
	}
	return h;
}
