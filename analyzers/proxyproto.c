/*
 * proxyproto.c - the PROXY protocol header before a client's first bytes
 * (the rules are in proxyproto.h).
 *
 * Every step answers one of three ways: the bytes are right so far and
 * complete (PP_OK), wrong (PP_BAD: no header, whatever follows), or right
 * so far but cut (PP_SHORT: more bytes may finish it). A cut v1 line is
 * "ask again" only while it is under PROXY_V1_MAX bytes; a v2 header is
 * judged byte by byte as its fixed part arrives, then waits for its
 * length's worth; over a stream (proxyproto_stream) its bytes are passed as
 * they come, so that one longer than the window is read past.
 */
#include "proxyproto.h"

#include <string.h>

#include "../sensor/cursor.h"
#include "../sensor/flow.h"

enum { PP_OK = 0, PP_BAD, PP_SHORT };

static const uint8_t v2_sig[12] = {'\r', '\n', '\r', '\n', 0, '\r', '\n', 'Q', 'U', 'I', 'T', '\n'};

/* The next byte without taking it; -1 when there is none. */
static int peek(const struct cur *c)
{
	struct cur t = *c;
	uint8_t b = cur_u8(&t);
	return t.err ? -1 : b;
}

/* Take the literal s, as far as the bytes go. */
static int lit(struct cur *c, const char *s)
{
	for (; *s; s++) {
		int b = peek(c);
		if (b < 0)
			return PP_SHORT;
		if (b != (uint8_t)*s)
			return PP_BAD;
		cur_skip(c, 1);
	}
	return PP_OK;
}

static int is_digit(int b)
{
	return b >= '0' && b <= '9';
}

static int is_hex(int b)
{
	return is_digit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F');
}

/*
 * An address, as nginx reads it: any run (even none) of hex digits, ':'
 * and '.', ended by SP (taken too). The receiver does not parse it, so
 * neither the family's form nor leading zeros matter ("a", "01.2.3.4",
 * IPv6 text after TCP4 are all taken). Another byte is PP_BAD at once, so
 * that a line that cannot be a header is refused before its end arrives.
 */
static int address(struct cur *c)
{
	for (;;) {
		int b = peek(c);
		if (b < 0)
			return PP_SHORT;
		cur_skip(c, 1);
		if (b == ' ')
			return PP_OK;
		if (!is_hex(b) && b != ':' && b != '.')
			return PP_BAD;
	}
}

/* A port, as nginx reads it: one or more decimal digits (leading zeros
 * too) worth at most 65535, ended by end (taken too). */
static int port(struct cur *c, int end)
{
	unsigned v = 0;
	size_t n = 0;

	for (;;) {
		int b = peek(c);
		if (b < 0)
			return PP_SHORT;
		cur_skip(c, 1);
		if (b == end)
			return n ? PP_OK : PP_BAD;
		if (!is_digit(b))
			return PP_BAD;
		v = v * 10 + (unsigned)(b - '0');
		if (v > 65535)
			return PP_BAD;
		n++;
	}
}

/* "UNKNOWN": the receiver ignores anything before the first CRLF. */
static int v1_unknown(struct cur *c)
{
	for (;;) {
		int b = peek(c);
		if (b < 0)
			return PP_SHORT;
		cur_skip(c, 1);
		if (b != '\r')
			continue;
		b = peek(c);
		if (b < 0)
			return PP_SHORT;
		if (b == '\n') {
			cur_skip(c, 1);
			return PP_OK;
		}
	}
}

/* addr SP addr SP port SP port CRLF */
static int v1_inet(struct cur *c)
{
	int r;

	if ((r = address(c)) != PP_OK || (r = address(c)) != PP_OK ||
	    (r = port(c, ' ')) != PP_OK || (r = port(c, '\r')) != PP_OK)
		return r;
	return lit(c, "\n");
}

/* The line, from "PROXY". */
static int v1_line(struct cur *c)
{
	static const char *const proto[] = {"TCP4 ", "TCP6 ", "UNKNOWN"};
	int r = lit(c, "PROXY "), shrt = 0;

	if (r != PP_OK)
		return r;
	for (int i = 0; i < 3; i++) {
		struct cur t = *c;
		r = lit(&t, proto[i]);
		if (r == PP_SHORT)
			shrt = 1;
		if (r != PP_OK)
			continue;
		*c = t;
		return i == 2 ? v1_unknown(c) : v1_inet(c);
	}
	return shrt ? PP_SHORT : PP_BAD;
}

static int v1(const uint8_t *buf, size_t len)
{
	struct cur all = cur_init(buf, len);
	int is_short;
	struct cur c = cur_take_upto(&all, PROXY_V1_MAX, &is_short);
	size_t avail = cur_left(&c);
	int r = v1_line(&c);

	if (r == PP_SHORT) /* no CRLF within PROXY_V1_MAX bytes: none */
		return is_short ? -1 : 0;
	if (r == PP_BAD)
		return 0;
	return (int)(avail - cur_left(&c));
}

/* The address block the receiver reads for a PROXY command over family
 * and transport fam: nginx reads addresses for INET and INET6 over STREAM
 * only, and skips the block of any other (UNIX, unknown, DGRAM) unread. */
static int v2_addr_len(uint8_t fam)
{
	switch (fam) {
	case 0x11:
		return 12;
	case 0x21:
		return 36;
	default:
		return 0;
	}
}

/* The v2 header at buf: its length when whole, 0 when the bytes are not
 * one, -1 while they may become one; *total (when not NULL) is the whole
 * header's length once its fixed part is whole and sound, else 0. */
static int v2(const uint8_t *buf, size_t len, uint32_t *total)
{
	struct cur c = cur_init(buf, len);
	uint8_t vc, fam;
	uint16_t n;

	for (size_t i = 0; i < sizeof(v2_sig); i++) {
		int b = peek(&c);
		if (b < 0)
			return -1;
		if (b != v2_sig[i])
			return 0;
		cur_skip(&c, 1);
	}
	if (!cur_has(&c, 1))
		return -1;
	vc = cur_u8(&c);
	if (vc >> 4 != 2)
		return 0; /* version 2; a command other than PROXY: skipped */
	if (!cur_has(&c, 1))
		return -1;
	fam = cur_u8(&c);
	if (!cur_has(&c, 2))
		return -1;
	n = cur_be16(&c);
	if ((vc & 0x0f) == 1 && n < v2_addr_len(fam))
		return 0; /* the addresses do not fit */
	if (total)
		*total = PROXY_V2_FIXED + (uint32_t)n;
	if (!cur_has(&c, n))
		return -1;
	return PROXY_V2_FIXED + n;
}

int proxyproto_parse(const uint8_t *buf, size_t len)
{
	struct cur c = cur_init(buf, len);

	switch (peek(&c)) {
	case -1:
		return -1;
	case 'P':
		return v1(buf, len);
	case '\r':
		return v2(buf, len, NULL);
	default:
		return 0;
	}
}

/*
 * The rest of a v2 header longer than what has come (f->pp_rest bytes from
 * the cursor): its length when that many bytes are there, so that the
 * claims read what follows it as after any header; else the bytes there
 * are passed (consumed, slid away) and -1 says "ask again". 0 when no more
 * of it can come (a hole before its end, bytes lost past the window).
 */
static int v2_rest(struct flow *f, struct flow_stream *s)
{
	uint32_t avail = flow_stream_avail(s, s->consumed);
	uint32_t left = avail > s->consumed ? avail - s->consumed : 0;

	if (left >= f->pp_rest)
		return f->pp_rest;
	if (s->overflow || avail < s->len)
		return 0; /* its end will not come */
	if (left) {
		f->pp_rest = (uint16_t)(f->pp_rest - left);
		s->consumed = avail;
		flow_stream_slide(s);
	}
	return -1;
}

int proxyproto_stream(struct flow *f)
{
	struct flow_stream *s = f && f->st ? &f->st[0] : NULL;
	uint32_t total = 0;

	if (!s || !s->buf || s->done || s->consumed > s->len)
		return 0;
	if (f->pp_rest)
		return v2_rest(f, s);
	uint32_t avail = flow_stream_avail(s, s->consumed);
	if (avail < s->consumed)
		return 0;
	const uint8_t *b = s->buf + s->consumed;
	uint32_t have = avail - s->consumed;
	int r = proxyproto_parse(b, have);
	if (r < 0 && (s->overflow || avail < s->len))
		return 0; /* no more bytes will come before the cut */
	if (r < 0 && have > PROXY_V2_FIXED && b[0] == '\r' && v2(b, have, &total) < 0 &&
	    total > have) {
		/* A v2 header whose fixed part is whole and sound, cut: it
		 * may be longer than the window holds (up to 64 KiB + 16), so
		 * its bytes are passed as they come, not held until whole:
		 * the cursor goes to their end and the window slides there,
		 * and pp_rest says how many more are header. Every claim reads
		 * at this cursor behind the same header, so this does for all
		 * of them what each would. */
		f->pp_rest = (uint16_t)(total - have); /* have > 16: < 65536 */
		s->consumed = avail;
		flow_stream_slide(s);
		return -1;
	}
	return r;
}

void proxyproto_taken(struct flow *f)
{
	if (f)
		f->pp_rest = 0;
}
