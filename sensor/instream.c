/*
 * instream.c - plain, gzip and zstd capture streams for instream.h.
 *
 * One cookie read function per call of stdio: it returns as soon as it has
 * produced anything (as read(2) does), reading the descriptor only when the
 * decompressor has consumed all it was given.
 */
#define _GNU_SOURCE /* fopencookie */
#include "instream.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

enum { IN_BUF = 64 * 1024 };

struct instream {
	FILE *f;
	int fd;
	enum instream_kind kind;
	uint8_t pre[4];  /* file bytes read before us: read first */
	size_t npre, ipre;
	uint8_t kept[24]; /* decompressed bytes instream_peek took: returned first */
	size_t nkept, ikept;
	uint8_t *in;     /* compressed input */
	size_t in_len, in_pos;
	uint64_t consumed;
	z_stream z;
	int z_ready;     /* inflateInit2 done */
	int between;     /* gzip: at a member's end; zstd: at a frame's end */
	ZSTD_DStream *zs;
	int failed;
	int done;        /* gzip: what follows the last member is not one */
	char err[160];
};

enum instream_kind instream_kind_of(const uint8_t *h, size_t n)
{
	if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b)
		return IN_GZIP;
	if (n >= 4 && h[0] == 0x28 && h[1] == 0xb5 && h[2] == 0x2f && h[3] == 0xfd)
		return IN_ZSTD;
	/* a skippable frame (0x184D2A50..5F, little-endian) first, as pzstd
	 * writes: libzstd's decoder skips it itself */
	if (n >= 4 && (h[0] & 0xf0) == 0x50 && h[1] == 0x2a && h[2] == 0x4d && h[3] == 0x18)
		return IN_ZSTD;
	return IN_PLAIN;
}

static ssize_t fail(struct instream *s, const char *why)
{
	if (!s->failed)
		snprintf(s->err, sizeof(s->err), "%s", why);
	s->failed = 1;
	errno = EIO;
	return -1;
}

/* A failure after this call produced got bytes: they are returned now and
 * the failure on the next call, so no good byte is lost before it. */
static ssize_t late_fail(struct instream *s, const char *why, size_t got)
{
	if (!got)
		return fail(s, why);
	snprintf(s->err, sizeof(s->err), "%s", why);
	s->failed = 1;
	return (ssize_t)got;
}

/* File bytes: the ones read before us, then read(2). */
static ssize_t raw_read(struct instream *s, uint8_t *buf, size_t n)
{
	if (s->ipre < s->npre) {
		size_t k = s->npre - s->ipre < n ? s->npre - s->ipre : n;
		memcpy(buf, s->pre + s->ipre, k);
		s->ipre += k;
		return (ssize_t)k;
	}
	for (;;) {
		ssize_t r = read(s->fd, buf, n);
		if (r >= 0) {
			s->consumed += (uint64_t)r;
			return r;
		}
		if (errno == EINTR && instream_woken())
			return fail(s, "interrupted");
		if (errno != EINTR) {
			char why[128];
			snprintf(why, sizeof(why), "read: %s", strerror(errno));
			return fail(s, why);
		}
	}
}

/* More compressed input: 1, 0 at the file's end, -1. */
static int fill(struct instream *s)
{
	if (s->in_pos < s->in_len)
		return 1;
	ssize_t r = raw_read(s, s->in, IN_BUF);
	if (r <= 0)
		return (int)r;
	s->in_len = (size_t)r;
	s->in_pos = 0;
	return 1;
}

/* Input for the decompressor's next step: 1; 0 when the file ended between
 * members or frames; -1 when it ended inside one (cut: the reason is cut)
 * or could not be read. */
static int more_input(struct instream *s, const char *cut)
{
	int r = fill(s);
	if (r == 0 && !s->between) {
		fail(s, cut);
		return -1;
	}
	return r;
}

static ssize_t gz_read(struct instream *s, uint8_t *buf, size_t n)
{
	size_t got = 0;

	while (got == 0) {
		int r = more_input(s, "gzip: the file ends inside a member (cut short?)");
		if (r <= 0)
			return r;
		if (s->between) {
			/* another member, or bytes that are not one (padding
			 * after the last member, as gzip itself ignores) */
			if (s->in[s->in_pos] != 0x1f) {
				s->done = 1;
				return 0;
			}
			inflateReset(&s->z);
			s->between = 0;
		}
		s->z.next_in = s->in + s->in_pos;
		s->z.avail_in = (uInt)(s->in_len - s->in_pos);
		s->z.next_out = buf + got;
		s->z.avail_out = (uInt)(n - got > (1u << 30) ? 1u << 30 : n - got);
		uInt out0 = s->z.avail_out;
		int zr = inflate(&s->z, Z_NO_FLUSH);
		s->in_pos = s->in_len - s->z.avail_in;
		got += out0 - s->z.avail_out;
		if (zr == Z_STREAM_END) {
			s->between = 1;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			char why[128];
			snprintf(why, sizeof(why), "gzip: %s", s->z.msg ? s->z.msg : "bad data");
			return late_fail(s, why, got);
		}
	}
	return (ssize_t)got;
}

static ssize_t zstd_read(struct instream *s, uint8_t *buf, size_t n)
{
	size_t got = 0;

	while (got == 0) {
		int r = more_input(s, "zstd: the file ends inside a frame (cut short?)");
		if (r <= 0)
			return r;
		ZSTD_inBuffer ib = {s->in, s->in_len, s->in_pos};
		ZSTD_outBuffer ob = {buf, n, got};
		size_t zr = ZSTD_decompressStream(s->zs, &ob, &ib);
		s->in_pos = ib.pos;
		got = ob.pos;
		if (ZSTD_isError(zr)) {
			char why[160];
			if (ZSTD_getErrorCode(zr) == ZSTD_error_frameParameter_windowTooLarge)
				snprintf(why, sizeof(why),
					 "zstd: a frame needs a window over %u MiB (written with "
					 "--long?); decompress the file first",
					 1u << (INSTREAM_ZSTD_WINDOW_LOG - 20));
			else
				snprintf(why, sizeof(why), "zstd: %s", ZSTD_getErrorName(zr));
			return late_fail(s, why, got);
		}
		s->between = zr == 0; /* a frame decoded and flushed whole */
	}
	return (ssize_t)got;
}

static ssize_t stream_read(struct instream *s, uint8_t *buf, size_t n)
{
	if (s->failed) {
		errno = EIO;
		return -1;
	}
	if (s->done)
		return 0;
	switch (s->kind) {
	case IN_GZIP:
		return gz_read(s, buf, n);
	case IN_ZSTD:
		return zstd_read(s, buf, n);
	default:
		return raw_read(s, buf, n);
	}
}

static ssize_t cookie_read(void *cookie, char *buf, size_t n)
{
	struct instream *s = cookie;

	if (s->ikept < s->nkept) {
		size_t k = s->nkept - s->ikept < n ? s->nkept - s->ikept : n;
		memcpy(buf, s->kept + s->ikept, k);
		s->ikept += k;
		return (ssize_t)k;
	}
	return n ? stream_read(s, (uint8_t *)buf, n) : 0;
}

static void instream_free(struct instream *s)
{
	if (s->z_ready)
		inflateEnd(&s->z);
	ZSTD_freeDStream(s->zs);
	free(s->in);
	free(s);
}

static int cookie_close(void *cookie)
{
	struct instream *s = cookie;
	int r = s->f && s->f != stdin ? fclose(s->f) : 0;
	instream_free(s);
	return r;
}

FILE *instream_open(FILE *f, enum instream_kind kind, const uint8_t *pre, size_t npre,
		    struct instream **out, char *err, size_t errlen)
{
	struct instream *s = calloc(1, sizeof(*s));
	cookie_io_functions_t io = {.read = cookie_read, .close = cookie_close};
	FILE *cf;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->f = f;
	s->fd = fileno(f);
	s->kind = kind;
	s->npre = npre > sizeof(s->pre) ? sizeof(s->pre) : npre;
	if (s->npre)
		memcpy(s->pre, pre, s->npre);
	s->consumed = s->npre;
	if (kind != IN_PLAIN && !(s->in = malloc(IN_BUF))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (kind == IN_GZIP) {
		if (inflateInit2(&s->z, 16 + MAX_WBITS) != Z_OK) {
			snprintf(err, errlen, "gzip: %s", s->z.msg ? s->z.msg : "cannot start");
			goto fail;
		}
		s->z_ready = 1;
	} else if (kind == IN_ZSTD) {
		s->zs = ZSTD_createDStream();
		if (!s->zs ||
		    ZSTD_isError(ZSTD_DCtx_setParameter(s->zs, ZSTD_d_windowLogMax,
							INSTREAM_ZSTD_WINDOW_LOG))) {
			snprintf(err, errlen, "zstd: cannot start");
			goto fail;
		}
	}
	if (!(cf = fopencookie(s, "rb", io))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	*out = s;
	return cf;
fail:
	s->f = NULL; /* still the caller's */
	instream_free(s);
	return NULL;
}

size_t instream_peek(struct instream *s, uint8_t *dst, size_t n)
{
	size_t got = 0;

	if (n > sizeof(s->kept))
		n = sizeof(s->kept);
	while (got < n) {
		ssize_t r = stream_read(s, s->kept + got, n - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	memcpy(dst, s->kept, got);
	s->nkept = got;
	s->ikept = 0;
	return got;
}

uint64_t instream_consumed(const struct instream *s)
{
	return s->consumed;
}

const char *instream_error(const struct instream *s)
{
	return s->err;
}

/* ---- waking a reader ---------------------------------------------------- */

static _Thread_local volatile sig_atomic_t woken;

/* Only a signal queued by this process (instream_wake) wakes: a SIGURG
 * sent from outside interrupts a read, which is then made again. */
static void on_wake(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	if (si && si->si_code == SI_QUEUE && si->si_pid == getpid())
		woken = 1;
}

static pthread_once_t wake_once = PTHREAD_ONCE_INIT;

static void wake_setup(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_wake;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: the read returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGURG, &sa, NULL);
}

/* Block or unblock SIGURG in the calling thread. */
static void urg_mask(int how)
{
	sigset_t urg;

	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	pthread_sigmask(how, &urg, NULL);
}

void instream_wake_init(void)
{
	pthread_once(&wake_once, wake_setup);
	urg_mask(SIG_BLOCK);
}

void instream_wake_me(void)
{
	urg_mask(SIG_UNBLOCK);
}

int instream_wake(pthread_t t)
{
	union sigval v = {.sival_int = 0};

	return pthread_sigqueue(t, SIGURG, v);
}

int instream_woken(void)
{
	return woken;
}
