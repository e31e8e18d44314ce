/*
 * record.h - the compact text encoding of an event's kind-specific detail,
 * as analyzers write it and the store keeps it (column events.info).
 *
 * Analyzers must not allocate per packet and must not build JSON, so they
 * write their detail as fields separated by US (0x1f), grouped into records
 * separated by RS (0x1e); a field that is itself a list separates its items
 * by GS (0x1d). Every value is printable ASCII: attacker-chosen text goes
 * through text_escape() first (bytes outside 0x20..0x7e become \xNN), so the
 * separators can never appear inside a value. The reader side (api/) turns
 * records into JSON through jansson.
 *
 * The layout of each kind's records is documented in docs/architecture.md
 * ("Event detail records").
 */
#ifndef EW_RECORD_H
#define EW_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define REC_US '\x1f' /* between fields */
#define REC_RS '\x1e' /* between records */
#define REC_GS '\x1d' /* between items of a list field */

struct rec {
	char *buf;    /* caller's buffer */
	size_t cap;   /* its size; one byte is kept for the terminating NUL */
	size_t len;   /* bytes written */
	int overflow; /* a write did not fit; the record is cut (and marked) */
	int fresh;    /* next field starts a record (no US before it) */
};

static inline void rec_init(struct rec *r, char *buf, size_t cap)
{
	r->buf = buf;
	r->cap = cap;
	r->len = 0;
	r->overflow = 0;
	r->fresh = 1;
	if (cap)
		buf[0] = '\0';
}

/*
 * Append raw bytes (already escaped; no separators inside). These run for
 * every field of every record, so buf and len are read into locals once: a
 * store through the char pointer buf may alias *r, and the compiler would
 * otherwise load them again after each byte written.
 */
static inline void rec_raw(struct rec *r, const char *s, size_t n)
{
	char *buf = r->buf;
	size_t len = r->len;

	if (r->overflow)
		return;
	if (r->cap == 0 || n > r->cap - 1 - len) {
		r->overflow = 1;
		return;
	}
	memcpy(buf + len, s, n);
	len += n;
	buf[len] = '\0';
	r->len = len;
}

/* rec_raw of the one byte sep. */
static inline void rec_sep(struct rec *r, char sep)
{
	char *buf = r->buf;
	size_t len = r->len;

	if (r->overflow)
		return;
	if (r->cap == 0 || r->cap - 1 - len < 1) {
		r->overflow = 1;
		return;
	}
	buf[len] = sep;
	buf[len + 1] = '\0';
	r->len = len + 1;
}

/* Start a new field and write s (escaped text) into it. */
static inline void rec_field(struct rec *r, const char *s, size_t n)
{
	if (!r->fresh)
		rec_sep(r, REC_US);
	r->fresh = 0;
	rec_raw(r, s, n);
}

static inline void rec_str(struct rec *r, const char *s)
{
	rec_field(r, s, strlen(s));
}

void rec_u64(struct rec *r, uint64_t v);
void rec_i64(struct rec *r, int64_t v);

/* End the current record; the next field starts a new one. */
static inline void rec_end(struct rec *r)
{
	rec_sep(r, REC_RS);
	r->fresh = 1;
}

/*
 * Reader: split s[0..n) at sep. Returns the next piece in *out and *out_len and
 * advances *s and *n past it and its separator; returns 0 when nothing is left.
 */
int rec_split(const char **s, size_t *n, char sep, const char **out, size_t *out_len);

/*
 * Reader: one record cut into its fields at US. Every field counts, an empty
 * last one too, so the count tells one layout from another; a record with
 * more than REC_FIELDS_MAX fields has count REC_FIELDS_MAX + 1 (no known
 * layout) and its first REC_FIELDS_MAX fields.
 */
#define REC_FIELDS_MAX 20

struct rec_fields {
	const char *s[REC_FIELDS_MAX];
	size_t n[REC_FIELDS_MAX];
	int count;
};

void rec_fields_split(struct rec_fields *f, const char *rec, size_t len);

/* Field i, or "" (*n = 0) when the record has no field i. */
static inline const char *rec_fields_str(const struct rec_fields *f, int i, size_t *n)
{
	if (i < 0 || i >= f->count || i >= REC_FIELDS_MAX) {
		*n = 0;
		return "";
	}
	*n = f->n[i];
	return f->s[i];
}

/* Field i is empty or missing. */
static inline int rec_fields_empty(const struct rec_fields *f, int i)
{
	size_t n;
	(void)rec_fields_str(f, i, &n);
	return n == 0;
}

/* Field i reads lit (a missing field reads ""). */
static inline int rec_fields_is(const struct rec_fields *f, int i, const char *lit)
{
	size_t n;
	const char *s = rec_fields_str(f, i, &n);
	return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

/* Field i as a decimal number of at most 10 digits (every 32-bit field);
 * -1 when empty, not a number, or longer. */
long long rec_fields_num(const struct rec_fields *f, int i);

#endif
