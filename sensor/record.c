/*
 * record.c - the out-of-line parts of record.h: numbers into a record, and
 * the splitter the reader side uses.
 */
#include "record.h"

/* The decimal digits of v, written backwards from end; returns the first.
 * (Analyzers write several numbers per record: snprintf was a visible
 * share of the packet path.) */
static char *dec_digits(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

void rec_u64(struct rec *r, uint64_t v)
{
	char tmp[24], *p = dec_digits(tmp + sizeof(tmp), v);
	rec_field(r, p, (size_t)(tmp + sizeof(tmp) - p));
}

void rec_i64(struct rec *r, int64_t v)
{
	char tmp[24], *p;
	/* the magnitude as unsigned, so INT64_MIN needs no special case */
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	p = dec_digits(tmp + sizeof(tmp), m);
	if (v < 0)
		*--p = '-';
	rec_field(r, p, (size_t)(tmp + sizeof(tmp) - p));
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

void rec_fields_split(struct rec_fields *f, const char *rec, size_t len)
{
	f->count = 0;
	for (;;) {
		const char *us = len ? memchr(rec, REC_US, len) : NULL;
		size_t n = us ? (size_t)(us - rec) : len;

		if (f->count == REC_FIELDS_MAX) {
			f->count++; /* too many: no known layout */
			return;
		}
		f->s[f->count] = rec;
		f->n[f->count] = n;
		f->count++;
		if (!us)
			return;
		rec = us + 1;
		len -= n + 1;
	}
}

long long rec_fields_num(const struct rec_fields *f, int i)
{
	size_t n;
	const char *s = rec_fields_str(f, i, &n);
	long long v = 0;

	if (n == 0 || n > 10)
		return -1;
	for (size_t k = 0; k < n; k++) {
		if (s[k] < '0' || s[k] > '9')
			return -1;
		v = v * 10 + (s[k] - '0');
	}
	return v;
}
