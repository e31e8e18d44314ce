/*
 * cursor.h - the bounds-checked view through which every packet byte is read.
 *
 * A cursor is a half-open byte range [p, end) plus a sticky error flag. Every
 * read checks (size_t)(end - p) >= n before touching memory and never forms a
 * pointer past end. A failed read sets err, returns 0 and leaves the cursor
 * empty, so a header parse is straight-line code with one `if (c.err)` at the
 * end (tcpdump's GET_* rule, without longjmp).
 *
 * Nested lengths make nested cursors: cur_take(&c, n) returns a sub-cursor of
 * exactly n bytes and advances the parent past them, so an inner length field
 * can never escape the outer one.
 *
 * Cursors never own memory: they borrow the packet buffer for the duration of
 * a callback.
 */
#ifndef EW_CURSOR_H
#define EW_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cur {
	const uint8_t *p;   /* next byte to read */
	const uint8_t *end; /* one past the last readable byte */
	int err;            /* sticky: set by the first failed read */
};

/* A cursor over len bytes at p. p may be NULL when len is 0. */
static inline struct cur cur_init(const uint8_t *p, size_t len)
{
	struct cur c = {p, p ? p + len : p, 0};
	return c;
}

/* Bytes left to read (0 after an error). */
static inline size_t cur_left(const struct cur *c)
{
	return (size_t)(c->end - c->p);
}

/* Mark the cursor failed and empty it. */
static inline void cur_fail(struct cur *c)
{
	c->err = 1;
	c->p = c->end;
}

/* True when at least n bytes remain. Never fails the cursor. */
static inline int cur_has(const struct cur *c, size_t n)
{
	return !c->err && cur_left(c) >= n;
}

static inline uint8_t cur_u8(struct cur *c)
{
	if (!cur_has(c, 1)) {
		cur_fail(c);
		return 0;
	}
	return *c->p++;
}

static inline uint16_t cur_be16(struct cur *c)
{
	if (!cur_has(c, 2)) {
		cur_fail(c);
		return 0;
	}
	uint16_t v = (uint16_t)((uint16_t)c->p[0] << 8 | c->p[1]);
	c->p += 2;
	return v;
}

static inline uint32_t cur_be24(struct cur *c)
{
	if (!cur_has(c, 3)) {
		cur_fail(c);
		return 0;
	}
	uint32_t v = (uint32_t)c->p[0] << 16 | (uint32_t)c->p[1] << 8 | c->p[2];
	c->p += 3;
	return v;
}

static inline uint32_t cur_be32(struct cur *c)
{
	if (!cur_has(c, 4)) {
		cur_fail(c);
		return 0;
	}
	uint32_t v = (uint32_t)c->p[0] << 24 | (uint32_t)c->p[1] << 16 |
		     (uint32_t)c->p[2] << 8 | c->p[3];
	c->p += 4;
	return v;
}

/* Little-endian 16/32 (pcap headers of other-endian files, NULL link type). */
static inline uint16_t cur_le16(struct cur *c)
{
	if (!cur_has(c, 2)) {
		cur_fail(c);
		return 0;
	}
	uint16_t v = (uint16_t)((uint16_t)c->p[1] << 8 | c->p[0]);
	c->p += 2;
	return v;
}

static inline uint32_t cur_le32(struct cur *c)
{
	if (!cur_has(c, 4)) {
		cur_fail(c);
		return 0;
	}
	uint32_t v = (uint32_t)c->p[3] << 24 | (uint32_t)c->p[2] << 16 |
		     (uint32_t)c->p[1] << 8 | c->p[0];
	c->p += 4;
	return v;
}

/* Copy n bytes into dst; on failure dst is zero-filled and the cursor fails. */
static inline void cur_bytes(struct cur *c, void *dst, size_t n)
{
	if (!cur_has(c, n)) {
		memset(dst, 0, n);
		cur_fail(c);
		return;
	}
	memcpy(dst, c->p, n);
	c->p += n;
}

static inline void cur_skip(struct cur *c, size_t n)
{
	if (!cur_has(c, n)) {
		cur_fail(c);
		return;
	}
	c->p += n;
}

/*
 * A sub-cursor over the next n bytes; the parent advances past them. When
 * fewer than n bytes remain both cursors fail (the sub-cursor is empty).
 */
static inline struct cur cur_take(struct cur *c, size_t n)
{
	struct cur sub;
	if (!cur_has(c, n)) {
		cur_fail(c);
		sub.p = sub.end = c->end;
		sub.err = 1;
		return sub;
	}
	sub.p = c->p;
	sub.end = c->p + n;
	sub.err = 0;
	c->p += n;
	return sub;
}

/*
 * Like cur_take, but when fewer than n bytes remain it takes what is there
 * and sets *short_read (truncated capture, not a lie in the length field).
 */
static inline struct cur cur_take_upto(struct cur *c, size_t n, int *short_read)
{
	size_t left = c->err ? 0 : cur_left(c);
	*short_read = left < n;
	return cur_take(c, left < n ? left : n);
}

/* Borrow the next n bytes without copying; NULL (and failure) when short. */
static inline const uint8_t *cur_ptr(struct cur *c, size_t n)
{
	if (!cur_has(c, n)) {
		cur_fail(c);
		return NULL;
	}
	const uint8_t *q = c->p;
	c->p += n;
	return q;
}

#endif
