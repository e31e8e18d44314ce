/*
 * record.c - the out-of-line parts of record.h: numbers into a record, and
 * the splitter the reader side uses.
 */
#include "record.h"

#include <stdio.h>

void rec_u64(struct rec *r, uint64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	rec_field(r, tmp, (size_t)n);
}

void rec_i64(struct rec *r, int64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
	rec_field(r, tmp, (size_t)n);
}

int rec_split(const char **s, size_t *n, char sep, const char **out, size_t *out_len)
{
	if (*n == 0)
		return 0;
	const char *p = *s;
	const char *q = memchr(p, sep, *n);
	if (q) {
		*out = p;
		*out_len = (size_t)(q - p);
		*n -= (size_t)(q - p) + 1;
		*s = q + 1;
	} else {
		*out = p;
		*out_len = *n;
		*s = p + *n;
		*n = 0;
	}
	return 1;
}
