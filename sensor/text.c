/*
 * text.c - safe text from packet bytes: escaping, addresses, packet times,
 * entropy. No allocation, no locale: every test is plain ASCII arithmetic.
 */
#include "text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
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

static const char hexdig[] = "0123456789abcdef";

/* Dotted quad of a[0..4) at tmp + n; returns the new length. */
static size_t fmt_ip4(char *tmp, size_t n, const uint8_t *a)
{
	for (int i = 0; i < 4; i++) {
		unsigned v = a[i];
		if (v >= 100)
			tmp[n++] = (char)('0' + v / 100);
		if (v >= 10)
			tmp[n++] = (char)('0' + v / 10 % 10);
		tmp[n++] = (char)('0' + v % 10);
		if (i < 3)
			tmp[n++] = '.';
	}
	return n;
}

/* An IPv6 address exactly as glibc's inet_ntop writes it (its inet_ntop6:
 * the first longest run of two or more zero words becomes "::", words in
 * lowercase hex without leading zeros, and ::a.b.c.d / ::ffff:a.b.c.d for
 * IPv4-compatible and -mapped addresses). */
static size_t fmt_ip6(char *tmp, const uint8_t *a)
{
	unsigned w[8];
	int best = -1, best_len = 0, cur = -1, cur_len = 0;
	size_t n = 0;

	for (int i = 0; i < 8; i++) {
		w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
		if (w[i] == 0) {
			if (cur < 0)
				cur = i, cur_len = 1;
			else
				cur_len++;
		} else if (cur >= 0) {
			if (best < 0 || cur_len > best_len)
				best = cur, best_len = cur_len;
			cur = -1;
		}
	}
	if (cur >= 0 && (best < 0 || cur_len > best_len))
		best = cur, best_len = cur_len;
	if (best >= 0 && best_len < 2)
		best = -1;
	for (int i = 0; i < 8; i++) {
		if (best >= 0 && i >= best && i < best + best_len) {
			if (i == best)
				tmp[n++] = ':';
			continue;
		}
		if (i != 0)
			tmp[n++] = ':';
		if (i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff)))
			return fmt_ip4(tmp, n, a + 12);
		int started = 0;
		for (int sh = 12; sh >= 0; sh -= 4) {
			unsigned d = w[i] >> sh & 15;
			if (d || started || sh == 0) {
				tmp[n++] = hexdig[d];
				started = 1;
			}
		}
	}
	if (best >= 0 && best + best_len == 8)
		tmp[n++] = ':';
	return n;
}

/* Formatted here rather than by inet_ntop, which goes through sprintf (a
 * visible share of a DNS answer's and a stored row's cost); the unit test
 * checks the text against inet_ntop. */
size_t text_addr(char *dst, size_t cap, int ipv, const uint8_t *addr)
{
	char tmp[48];
	size_t n = ipv == 6 ? fmt_ip6(tmp, addr) : fmt_ip4(tmp, 0, addr);

	if (cap == 0)
		return 0;
	if (n >= cap) {
		dst[0] = '\0';
		return 0;
	}
	memcpy(dst, tmp, n);
	dst[n] = '\0';
	return n;
}

size_t text_time(char *dst, size_t cap, uint64_t ts_us)
{
	if (ts_us > TEXT_TIME_MAX_US)
		ts_us = TEXT_TIME_MAX_US;
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

/* n decimal digits at s into *v; 0, or -1 when one is not a digit. */
static int digits(const char *s, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar (the
 * era arithmetic of Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The digits of a fraction at *p, as microseconds (digits past the sixth
 * are read and dropped); *p moves past them. -1 when there are none. */
static int fraction_us(const char **p, int64_t *us)
{
	const char *s = *p;
	int64_t v = 0;
	int n = 0;

	while (*s >= '0' && *s <= '9') {
		if (n < 6)
			v = v * 10 + (*s - '0');
		n++;
		s++;
	}
	if (n == 0)
		return -1;
	for (int k = n; k < 6; k++)
		v *= 10;
	*us = v;
	*p = s;
	return 0;
}

int text_parse_time(const char *s, int64_t *us)
{
	static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y, mo, d, h = 0, mi = 0, sec = 0, oh = 0, om = 0, sign = 0;
	int64_t frac = 0;
	const char *p;

	if (!s || !*s)
		return -1;
	/* seconds since 1970: digits, then a fraction or nothing */
	size_t n = strspn(s, "0123456789");
	if (n > 0 && (s[n] == '\0' || s[n] == '.')) {
		int64_t v = 0;
		if (n > 12) /* past 9999 */
			return -1;
		for (size_t i = 0; i < n; i++)
			v = v * 10 + (s[i] - '0');
		p = s + n;
		if (*p == '.') {
			p++;
			if (fraction_us(&p, &frac) < 0 || *p)
				return -1;
		}
		if (v * 1000000 + frac > (int64_t)TEXT_TIME_MAX_US)
			return -1;
		*us = v * 1000000 + frac;
		return 0;
	}
	if (strlen(s) < 10 || digits(s, 4, &y) < 0 || s[4] != '-' || digits(s + 5, 2, &mo) < 0 ||
	    s[7] != '-' || digits(s + 8, 2, &d) < 0)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    (mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))))
		return -1;
	p = s + 10;
	if (*p) {
		if ((*p != 'T' && *p != 't' && *p != ' ') || strlen(p) < 9 ||
		    digits(p + 1, 2, &h) < 0 || p[3] != ':' || digits(p + 4, 2, &mi) < 0 ||
		    p[6] != ':' || digits(p + 7, 2, &sec) < 0 || h > 23 || mi > 59 || sec > 60)
			return -1;
		p += 9;
		if (*p == '.') {
			p++;
			if (fraction_us(&p, &frac) < 0)
				return -1;
		}
		if (*p == 'Z' || *p == 'z') {
			p++;
		} else if (*p == '+' || *p == '-') {
			sign = *p == '-' ? -1 : 1;
			if (digits(p + 1, 2, &oh) < 0 || p[3] != ':' || digits(p + 4, 2, &om) < 0 ||
			    oh > 23 || om > 59)
				return -1;
			p += 6;
		} else {
			return -1; /* RFC 3339 always says which zone */
		}
		if (*p)
			return -1;
	}
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
		       sign * (oh * 3600 + om * 60);
	*us = secs * 1000000 + frac;
	return 0;
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

int text_duration(const char *s, uint64_t min_us, uint64_t max_us, uint64_t *us)
{
	uint64_t v = 0, unit;
	size_t i = 0;

	/* digits first; 20 of them would overflow: the range is checked below */
	while (s[i] >= '0' && s[i] <= '9' && i < 19)
		v = v * 10 + (uint64_t)(s[i++] - '0');
	if (i == 0 || (s[i] >= '0' && s[i] <= '9'))
		return -1;
	switch (s[i]) {
	case '\0': unit = 1; break;
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	case 'w': unit = 7 * 86400; break;
	default: return -1;
	}
	if (s[i] && s[i + 1])
		return -1;
	if (v > UINT64_MAX / 1000000 / unit)
		return -1;
	v *= unit * 1000000;
	if (v < min_us || v > max_us)
		return -1;
	*us = v;
	return 0;
}
