/*
 * test_instream.c - compressed and piped capture streams (sensor/instream.c).
 *
 * Data is compressed here with zlib and libzstd, written to a file, and read
 * back through instream_open as capture.c reads it (the first four bytes
 * taken with read(2) and handed over):
 *   - gzip and zstd give back every byte, in one member/frame or several,
 *     with a skippable zstd frame (between frames, or first, as pzstd
 *     writes) and padding after the last gzip member;
 *   - instream_peek's bytes come first, and consumed counts file bytes;
 *   - every cut of a compressed file gives a prefix of the data and then an
 *     error that says the file ends inside a member or frame; a flipped
 *     byte never ends cleanly with wrong data (gzip's CRC and length, zstd's
 *     checksum), though wrong bytes may come out before the check fails;
 *   - a zstd frame whose window is larger than the bound is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "../../sensor/instream.h"
#include "check.h"

static char tmpl[] = "/tmp/ew-instream-XXXXXX";

static size_t gz(const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	z.next_in = (uint8_t *)src;
	z.avail_in = (uInt)n;
	z.next_out = dst;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	size_t out = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

static size_t zs(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, int checksum)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum);
	size_t r = ZSTD_compress2(c, dst, cap, src, n);
	ZSTD_freeCCtx(c);
	if (ZSTD_isError(r))
		abort();
	return r;
}

/* Read file bytes b[0..n) through an instream as capture.c does. Returns
 * the bytes read into out (up to cap); *rc is 0 at a clean end, -1 when a
 * read failed; err gets instream_error. */
static size_t through(const uint8_t *b, size_t n, uint8_t *out, size_t cap, int *rc, char *err,
		      size_t errlen, int peek)
{
	char path[sizeof(tmpl)];
	memcpy(path, tmpl, sizeof(tmpl));
	int fd = mkstemp(path);
	if (fd < 0 || (n && write(fd, b, n) != (ssize_t)n) || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	unlink(path);
	FILE *f = fdopen(fd, "rb");
	uint8_t head[4];
	size_t nh = (size_t)read(fd, head, 4 < n ? 4 : n);
	struct instream *s = NULL;
	char e[256];
	FILE *in = instream_open(f, instream_kind_of(head, nh), head, nh, &s, e, sizeof(e));
	if (!in)
		abort();
	size_t got = 0;
	if (peek) {
		uint8_t p[4];
		size_t k = instream_peek(s, p, sizeof(p));
		CHECK(k <= 4);
	}
	for (;;) {
		size_t r = fread(out + got, 1, cap - got > 1000 ? 1000 : cap - got, in);
		got += r;
		if (r == 0 || got == cap)
			break;
	}
	*rc = ferror(in) ? -1 : 0;
	snprintf(err, errlen, "%s", instream_error(s));
	if (*rc == 0 && got == cap) { /* the caller's cap is the data's size + 1 */
		*rc = -2;
	}
	CHECK(instream_consumed(s) <= n);
	fclose(in);
	return got;
}

static uint8_t data[200000];

static void make_data(void)
{
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(data); i++) {
		x = x * 1103515245u + 12345u;
		/* compressible, but not trivially */
		data[i] = i % 97 < 60 ? (uint8_t)"abcdefghijklmnop"[(x >> 16) & 15] : (uint8_t)(x >> 24);
	}
}

static void test_round_trip(void)
{
	static uint8_t c[400000], out[400001];
	char err[256];
	int rc;

	for (int kind = 0; kind < 2; kind++) {
		for (int peek = 0; peek < 2; peek++) {
			/* one member/frame, then three of them (the data in thirds),
			 * with a skippable zstd frame or zero padding after */
			size_t n = kind ? zs(data, sizeof(data), c, sizeof(c), 1)
					: gz(data, sizeof(data), c, sizeof(c));
			size_t got = through(c, n, out, sizeof(out), &rc, err, sizeof(err), peek);
			CHECK_EQ(rc, 0);
			CHECK_EQ(got, sizeof(data));
			CHECK(memcmp(out, data, sizeof(data)) == 0);

			size_t third = sizeof(data) / 3, at = 0;
			n = 0;
			for (int k = 0; k < 3; k++) {
				size_t len = k < 2 ? third : sizeof(data) - 2 * third;
				if (kind && k == 1) { /* a skippable frame between */
					static const uint8_t skip[12] = {0x50, 0x2a, 0x4d, 0x18, 4, 0,
									 0,    0,    1,    2,    3, 4};
					memcpy(c + n, skip, sizeof(skip));
					n += sizeof(skip);
				}
				n += kind ? zs(data + at, len, c + n, sizeof(c) - n, 0)
					  : gz(data + at, len, c + n, sizeof(c) - n);
				at += len;
			}
			if (!kind) {
				memset(c + n, 0, 512); /* padding, as tape and some tools leave */
				n += 512;
			}
			got = through(c, n, out, sizeof(out), &rc, err, sizeof(err), peek);
			CHECK_EQ(rc, 0);
			CHECK_EQ(got, sizeof(data));
			CHECK(memcmp(out, data, sizeof(data)) == 0);
			CHECK_STR(err, "");
		}
	}
	/* zstd that starts with a skippable frame (pzstd writes one, of any
	 * of the 16 magics), told by it and read past it */
	for (uint8_t m = 0x50; m <= 0x5f; m += 0xf) {
		const uint8_t skip[12] = {m, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4};
		memcpy(c, skip, sizeof(skip));
		size_t n = sizeof(skip) + zs(data, sizeof(data), c + sizeof(skip),
					     sizeof(c) - sizeof(skip), 1);
		CHECK_EQ(instream_kind_of(c, 4), IN_ZSTD);
		size_t got = through(c, n, out, sizeof(out), &rc, err, sizeof(err), 1);
		CHECK_EQ(rc, 0);
		CHECK_EQ(got, sizeof(data));
		CHECK(memcmp(out, data, sizeof(data)) == 0);
	}
	/* plain: the prefix bytes, then the descriptor */
	size_t got = through(data, 5000, out, sizeof(out), &rc, err, sizeof(err), 0);
	CHECK_EQ(rc, 0);
	CHECK_EQ(got, 5000);
	CHECK(memcmp(out, data, 5000) == 0);
}

/* Every cut, and flipped bytes: a prefix of the data, then an error (or a
 * clean end exactly where the compressed file ends). */
static void test_damage(void)
{
	static uint8_t c[40000], out[40001];
	char err[256];
	int rc;
	size_t len = 30000;

	for (int kind = 0; kind < 2; kind++) {
		size_t n = kind ? zs(data, len, c, sizeof(c), 1) : gz(data, len, c, sizeof(c));
		unsigned errors = 0, cuts = 0, prefix_ok = 1;
		/* (from 4 bytes on: a shorter file shows no compression at all) */
		for (size_t cut = 4; cut < n; cut += (cut < 64 ? 1 : 7), cuts++) {
			size_t got = through(c, cut, out, sizeof(out), &rc, err, sizeof(err), 0);
			if (got > len || memcmp(out, data, got) != 0)
				prefix_ok = 0;
			errors += rc == -1 && strstr(err, kind ? "zstd: the file ends inside a frame"
							     : "gzip: the file ends inside a member");
		}
		CHECK(prefix_ok);
		CHECK_EQ(errors, cuts);

		/* a flipped byte: wrong bytes may come out before the check
		 * that catches them (as from zcat), but a clean end means the
		 * data is exactly right */
		unsigned failed = 0;
		for (size_t at = 4; at < n; at += 13) { /* (past the magic) */
			c[at] ^= 0x5a;
			size_t got = through(c, n, out, sizeof(out), &rc, err, sizeof(err), 0);
			if (rc == 0 && (got != len || memcmp(out, data, len) != 0)) {
				fprintf(stderr, "kind %d: a flip at %zu gave wrong data silently\n", kind,
					at);
				CHECK(!"silent damage");
			}
			failed += rc == -1 && err[0];
			c[at] ^= 0x5a;
		}
		CHECK(failed > n / 13 / 2);
	}
}

/* A zstd frame that asks for a window over the bound is refused, with the
 * reason, before anything is allocated for it. */
static void test_zstd_window(void)
{
	static uint8_t c[1 << 20], out[1 << 16];
	char err[256];
	int rc;
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, INSTREAM_ZSTD_WINDOW_LOG + 2);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_enableLongDistanceMatching, 1);
	ZSTD_outBuffer ob = {c, sizeof(c), 0};
	ZSTD_inBuffer ib = {data, sizeof(data), 0};
	/* streamed without a pledged size, so the header keeps the window */
	size_t r = ZSTD_compressStream2(cc, &ob, &ib, ZSTD_e_continue);
	CHECK(!ZSTD_isError(r));
	while ((r = ZSTD_compressStream2(cc, &ob, &ib, ZSTD_e_end)) != 0)
		CHECK(!ZSTD_isError(r));
	ZSTD_freeCCtx(cc);
	size_t got = through(c, ob.pos, out, sizeof(out), &rc, err, sizeof(err), 0);
	CHECK_EQ(rc, -1);
	CHECK_EQ(got, 0);
	CHECK(strstr(err, "zstd: a frame needs a window over 32 MiB") != NULL);
}

int main(void)
{
	make_data();
	test_round_trip();
	test_damage();
	test_zstd_window();
	return check_done();
}
