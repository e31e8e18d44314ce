/* test_cursor.c - sensor/cursor.h: every read at its bound, the sticky error,
 * nested cursors (cur_take, cur_take_upto) and borrowing (cur_ptr). */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "sensor/cursor.h"

static const uint8_t buf[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};

static void test_empty(void)
{
	struct cur c = cur_init(NULL, 0);
	uint8_t out[2] = {0xaa, 0xbb};

	CHECK_EQ(cur_left(&c), 0);
	CHECK(cur_has(&c, 0));
	CHECK(!cur_has(&c, 1));
	CHECK_EQ(c.err, 0); /* cur_has never fails the cursor */
	CHECK_EQ(cur_u8(&c), 0);
	CHECK_EQ(c.err, 1);
	c = cur_init(NULL, 0);
	cur_bytes(&c, out, sizeof(out));
	CHECK_EQ(out[0], 0);
	CHECK_EQ(out[1], 0);
	CHECK_EQ(c.err, 1);
	c = cur_init(buf, 0);
	CHECK(cur_ptr(&c, 0) == buf); /* zero bytes are always there */
	CHECK(cur_ptr(&c, 1) == NULL);
	CHECK_EQ(c.err, 1);
}

/* Each read succeeds with exactly n bytes left and fails with n - 1. */
static void test_bounds(void)
{
	struct cur c;

	c = cur_init(buf, 1);
	CHECK_EQ(cur_u8(&c), 0x01);
	CHECK_EQ(c.err, 0);
	CHECK_EQ(cur_left(&c), 0);
	CHECK_EQ(cur_u8(&c), 0);
	CHECK_EQ(c.err, 1);

	c = cur_init(buf, 2);
	CHECK_EQ(cur_be16(&c), 0x0102);
	CHECK_EQ(c.err, 0);
	c = cur_init(buf, 1);
	CHECK_EQ(cur_be16(&c), 0);
	CHECK_EQ(c.err, 1);
	CHECK_EQ(cur_left(&c), 0);

	c = cur_init(buf, 3);
	CHECK_EQ(cur_be24(&c), 0x010203);
	CHECK_EQ(c.err, 0);
	c = cur_init(buf, 2);
	CHECK_EQ(cur_be24(&c), 0);
	CHECK_EQ(c.err, 1);

	c = cur_init(buf, 4);
	CHECK_EQ(cur_be32(&c), 0x01020304);
	CHECK_EQ(c.err, 0);
	c = cur_init(buf, 3);
	CHECK_EQ(cur_be32(&c), 0);
	CHECK_EQ(c.err, 1);

	c = cur_init(buf, 2);
	CHECK_EQ(cur_le16(&c), 0x0201);
	CHECK_EQ(c.err, 0);
	c = cur_init(buf, 1);
	CHECK_EQ(cur_le16(&c), 0);
	CHECK_EQ(c.err, 1);

	c = cur_init(buf, 4);
	CHECK_EQ(cur_le32(&c), 0x04030201);
	CHECK_EQ(c.err, 0);
	c = cur_init(buf, 3);
	CHECK_EQ(cur_le32(&c), 0);
	CHECK_EQ(c.err, 1);

	c = cur_init(buf, 8);
	cur_skip(&c, 8);
	CHECK_EQ(c.err, 0);
	CHECK_EQ(cur_left(&c), 0);
	c = cur_init(buf, 8);
	cur_skip(&c, 9);
	CHECK_EQ(c.err, 1);
	CHECK_EQ(cur_left(&c), 0);

	/* High bytes do not sign-extend. */
	{
		const uint8_t ff[4] = {0xff, 0xfe, 0xfd, 0xfc};
		c = cur_init(ff, 4);
		CHECK_EQ(cur_be32(&c), 0xfffefdfcu);
		c = cur_init(ff, 4);
		CHECK_EQ(cur_le32(&c), 0xfcfdfeffu);
		c = cur_init(ff, 3);
		CHECK_EQ(cur_be24(&c), 0xfffefdu);
	}
}

static void test_bytes(void)
{
	struct cur c = cur_init(buf, 8);
	uint8_t out[8];

	memset(out, 0xee, sizeof(out));
	cur_bytes(&c, out, 3);
	CHECK_EQ(c.err, 0);
	CHECK(memcmp(out, buf, 3) == 0);
	CHECK_EQ(out[3], 0xee);
	CHECK_EQ(cur_left(&c), 5);
	cur_bytes(&c, out, 5);
	CHECK_EQ(c.err, 0);
	CHECK(memcmp(out, buf + 3, 5) == 0);
	/* Short: zero-filled, cursor failed. */
	c = cur_init(buf, 4);
	memset(out, 0xee, sizeof(out));
	cur_bytes(&c, out, 5);
	CHECK_EQ(c.err, 1);
	CHECK_EQ(out[0], 0);
	CHECK_EQ(out[4], 0);
	CHECK_EQ(out[5], 0xee);
}

/* After the first failure, every read returns 0 even if it would fit. */
static void test_sticky(void)
{
	struct cur c = cur_init(buf, 8);
	uint8_t out[1] = {0xee};

	CHECK_EQ(cur_be16(&c), 0x0102);
	CHECK_EQ(cur_be32(&c), 0x03040506);
	CHECK_EQ(cur_be32(&c), 0); /* 2 left, 4 wanted */
	CHECK_EQ(c.err, 1);
	CHECK_EQ(cur_left(&c), 0);
	CHECK_EQ(cur_u8(&c), 0);
	CHECK_EQ(cur_be16(&c), 0);
	CHECK(!cur_has(&c, 0));
	cur_bytes(&c, out, 1);
	CHECK_EQ(out[0], 0);
	CHECK(cur_ptr(&c, 0) == NULL);
	CHECK_EQ(c.err, 1);
	/* A straight-line parse needs one check at the end. */
	c = cur_init(buf, 5);
	(void)cur_u8(&c);
	(void)cur_be32(&c);
	(void)cur_be16(&c);
	(void)cur_u8(&c);
	CHECK_EQ(c.err, 1);
}

static void test_take(void)
{
	struct cur c = cur_init(buf, 8);
	struct cur a, b, x;
	int cut;

	CHECK_EQ(cur_u8(&c), 0x01);
	a = cur_take(&c, 4); /* 02 03 04 05 */
	CHECK_EQ(a.err, 0);
	CHECK_EQ(cur_left(&a), 4);
	CHECK_EQ(cur_left(&c), 3);
	CHECK_EQ(cur_u8(&c), 0x06); /* parent advanced past the sub-cursor */
	/* Nested take inside the sub-cursor. */
	CHECK_EQ(cur_u8(&a), 0x02);
	b = cur_take(&a, 2); /* 03 04 */
	CHECK_EQ(cur_be16(&b), 0x0304);
	CHECK_EQ(cur_u8(&b), 0); /* the inner cursor cannot see 05 */
	CHECK_EQ(b.err, 1);
	CHECK_EQ(a.err, 0); /* failure does not leak outwards */
	CHECK_EQ(cur_u8(&a), 0x05);
	CHECK_EQ(cur_left(&a), 0);
	CHECK_EQ(c.err, 0);
	/* An inner length larger than the outer fails both. */
	a = cur_take(&c, 2); /* 07 08 */
	x = cur_take(&a, 3);
	CHECK_EQ(x.err, 1);
	CHECK_EQ(cur_left(&x), 0);
	CHECK_EQ(a.err, 1);
	CHECK_EQ(cur_u8(&x), 0);
	CHECK_EQ(c.err, 0);
	CHECK_EQ(cur_left(&c), 0);
	/* Take exactly what is left, then zero bytes. */
	c = cur_init(buf, 8);
	a = cur_take(&c, 8);
	CHECK_EQ(a.err, 0);
	CHECK_EQ(cur_left(&a), 8);
	x = cur_take(&c, 0);
	CHECK_EQ(x.err, 0);
	CHECK_EQ(cur_left(&x), 0);
	x = cur_take(&c, 1);
	CHECK_EQ(x.err, 1);
	CHECK_EQ(c.err, 1);
	/* Taking from a failed cursor fails. */
	x = cur_take(&c, 0);
	CHECK_EQ(x.err, 1);

	/* cur_take_upto: what is there, and whether it was short. */
	c = cur_init(buf, 8);
	a = cur_take_upto(&c, 5, &cut);
	CHECK_EQ(cut, 0);
	CHECK_EQ(cur_left(&a), 5);
	CHECK_EQ(cur_left(&c), 3);
	a = cur_take_upto(&c, 10, &cut);
	CHECK_EQ(cut, 1);
	CHECK_EQ(a.err, 0);
	CHECK_EQ(cur_left(&a), 3);
	CHECK_EQ(cur_u8(&a), 0x06);
	CHECK_EQ(c.err, 0);
	CHECK_EQ(cur_left(&c), 0);
	a = cur_take_upto(&c, 0, &cut);
	CHECK_EQ(cut, 0);
	CHECK_EQ(a.err, 0);
	c = cur_init(buf, 2);
	cur_skip(&c, 3);
	a = cur_take_upto(&c, 1, &cut); /* failed parent: nothing to take */
	CHECK_EQ(cut, 1);
	CHECK_EQ(cur_left(&a), 0);
}

static void test_ptr(void)
{
	struct cur c = cur_init(buf, 8);
	const uint8_t *q;

	cur_skip(&c, 2);
	q = cur_ptr(&c, 6);
	CHECK(q == buf + 2);
	CHECK_EQ(cur_left(&c), 0);
	CHECK_EQ(c.err, 0);
	c = cur_init(buf, 8);
	q = cur_ptr(&c, 9);
	CHECK(q == NULL);
	CHECK_EQ(c.err, 1);
	CHECK(c.p == c.end);
}

int main(void)
{
	test_empty();
	test_bounds();
	test_bytes();
	test_sticky();
	test_take();
	test_ptr();
	return check_done();
}
