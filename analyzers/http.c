/*
 * http.c - the HTTP/1.x analyzer: request heads from the client stream,
 * status heads from the server stream, each response paired with the
 * request it answers. The rules it enforces are listed in http.h.
 *
 * The parser (http_parse_head) reads one head through sensor/cursor.h, line
 * by line: line_take() finds the next line end and refuses bytes that have
 * no business in a head, so a binary stream is caught at its first bad byte
 * rather than after 8 KiB. Tokens are matched with locale-free ASCII tests
 * and every value is escaped into a bounded buffer of struct http_head.
 *
 * The module keeps one struct http_flow per claimed flow in flow->app_state
 * (112 bytes, which the flow table frees with free()): for each direction
 * where the next message starts and how much body is left to skip, and the
 * FIFO of requests still waiting for their response, a struct pend
 * (pending.h) allocated with the first of them and freed with the last, or
 * by http_flow_end when the flow ends first; every flow's together are
 * bounded by HTTP_PENDING_BUDGET. Its own state (the head being parsed,
 * the record buffer and that budget) is per module, not per flow. Nothing
 * here prints, judges or keeps a global.
 */
#include "http.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sensor/cursor.h"
#include "../sensor/flow.h"
#include "../sensor/record.h"
#include "../sensor/text.h"
#include "module.h"
#include "pending.h"
#include "proxyproto.h"

/* ---- locale-free ASCII classes ------------------------------------------- */

static int is_digit(int b)
{
	return b >= '0' && b <= '9';
}

static int is_alpha(int b)
{
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
}

/* RFC 9110 tchar */
static int is_tchar(int b)
{
	if (is_alpha(b) || is_digit(b))
		return 1;
	switch (b) {
	case '!': case '#': case '$': case '%': case '&': case '\'': case '*':
	case '+': case '-': case '.': case '^': case '_': case '`': case '|':
	case '~':
		return 1;
	default:
		return 0;
	}
}

static int is_ows(int b)
{
	return b == ' ' || b == '\t';
}

/*
 * Whitespace between the parts of a request line, as the most lenient
 * servers split it: squid's relaxed parser (its default) also splits on
 * CR, VT and FF, and Python's http.server (str.split over the line read
 * as Latin-1) on those, on 0x1c..0x1f and on 0x85 (NEL) and 0xa0 (NBSP)
 * too. A request an agent sends either of them with such a separator is
 * served, so it is one here too (flagged malformed). A raw 0x85 or 0xa0
 * inside a target (UTF-8 that was not percent-encoded, itself no valid
 * request-target) so marks the line, and one at the target's end is cut
 * off it, as Python reads it.
 */
static int is_rws(int b)
{
	return is_ows(b) || b == '\r' || b == 0x0b || b == 0x0c || (b >= 0x1c && b <= 0x1f) ||
	       b == 0x85 || b == 0xa0;
}

static int to_lower(int b)
{
	return b >= 'A' && b <= 'Z' ? b + ('a' - 'A') : b;
}

/* ---- cursor helpers -------------------------------------------------------- */

/* The next byte without consuming it; -1 when there is none. */
static int peek(const struct cur *c)
{
	struct cur t = *c;
	uint8_t b = cur_u8(&t);
	return t.err ? -1 : b;
}

/* Does the whole of v equal lit, ASCII case-insensitively? lit is lowercase. */
static int cur_ieq(struct cur v, const char *lit)
{
	size_t n = strlen(lit);

	if (cur_left(&v) != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (to_lower(cur_u8(&v)) != (uint8_t)lit[i])
			return 0;
	return !v.err;
}

/* v without leading and trailing OWS. */
static struct cur trim(struct cur v)
{
	struct cur t;
	size_t n = 0, keep = 0;

	while (is_ows(peek(&v)))
		cur_skip(&v, 1);
	t = v;
	while (cur_has(&t, 1)) {
		n++;
		if (!is_ows(cur_u8(&t)))
			keep = n;
	}
	return cur_take(&v, keep);
}

enum { LINE_OK = 0, LINE_SHORT, LINE_BAD, LINE_CTL };

/* What line_take lets through (LINE_CTL) rather than refuse. */
enum {
	LT_VALUES = 1, /* a field line: controls but CR after its first ':' */
	LT_CR = 2,     /* a request line: a bare CR */
};

/*
 * Take the next line of *c: *line gets its bytes without the CRLF or LF and
 * *c moves past the terminator. Returns LINE_OK; LINE_SHORT when the bytes
 * end before a line end (*c untouched); LINE_BAD at a byte that may not
 * appear in a head (NUL and other controls but HT, DEL, a CR not followed by
 * LF): *bad and *bad_at (its offset in the line) say which. With LT_VALUES
 * (a field line), such a byte after the line's first ':' is in a field
 * value, which nginx and squid pass on: the line is taken all the same and
 * LINE_CTL says it held one (*bad, *bad_at the first). A bare CR there ends
 * the line (LINE_CTL, *c past the CR), as Python's http.server reads it
 * (its header parser splits on CR, LF and CRLF, so "X: a" CR "Host: h" is
 * a Host to it; nginx answers 400, squid keeps the CR in the value): the
 * fields after it are read and the head goes on, as it does in the
 * skipped middle of a long field line, rather than stop the direction and
 * hide every later request. In a request line (LT_CR) squid reads a bare
 * CR as whitespace and serves the request, so the line goes on to its LF
 * and LINE_CTL says so.
 */
static int line_take(struct cur *c, struct cur *line, int *bad, size_t *bad_at, int how)
{
	struct cur r = *c;
	size_t n = 0;
	int colon = 0, ctl = 0;

	for (;;) {
		int b = peek(&r);
		if (b < 0)
			return LINE_SHORT;
		cur_skip(&r, 1);
		if (b == '\n') {
			*line = cur_take(c, n);
			cur_skip(c, 1);
			return ctl ? LINE_CTL : LINE_OK;
		}
		if (b == '\r') {
			int b2 = peek(&r);
			if (b2 < 0)
				return LINE_SHORT;
			if (b2 == '\n') {
				*line = cur_take(c, n);
				cur_skip(c, 2);
				return ctl ? LINE_CTL : LINE_OK;
			}
			if ((how & LT_VALUES) && colon) {
				if (!ctl) {
					*bad = b;
					*bad_at = n;
				}
				*line = cur_take(c, n);
				cur_skip(c, 1);
				return LINE_CTL;
			}
		}
		if ((b < 0x20 && b != '\t') || b == 0x7f) {
			int ok = is_rws(b) ? (how & LT_CR) || (b != '\r' && (how & LT_VALUES) && colon)
					   : (how & LT_VALUES) && colon;
			if (!ok) {
				*bad = b;
				*bad_at = n;
				return LINE_BAD;
			}
			if (!ctl) {
				*bad = b;
				*bad_at = n;
			}
			ctl = 1;
		}
		colon |= b == ':';
		n++;
	}
}

/* ---- the head -------------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static void note(struct http_head *h, int fatal, const char *fmt, ...);

static void note(struct http_head *h, int fatal, const char *fmt, ...)
{
	va_list ap;

	if (fatal)
		h->fatal = 1;
	if (h->malformed)
		return;
	h->malformed = 1;
	va_start(ap, fmt);
	vsnprintf(h->why, sizeof(h->why), fmt, ap);
	va_end(ap);
}

/* Escape the bytes of v into dst (cap bytes). Returns the length. */
static size_t put_text(struct http_head *h, char *dst, size_t cap, struct cur v)
{
	size_t n = cur_left(&v);
	const uint8_t *s = cur_ptr(&v, n);
	int cut = 0;
	size_t k = text_escape(dst, cap, s, s ? n : 0, &cut);

	h->cut |= cut;
	return k;
}

/* Append v to a list value in dst, after ", " when dst is not empty. */
static void join_text(struct http_head *h, char *dst, size_t cap, struct cur v)
{
	size_t l = strlen(dst);

	if (l) {
		if (cap - l < 3) {
			h->cut = 1;
			return;
		}
		memcpy(dst + l, ", ", 3);
		l += 2;
	}
	put_text(h, dst + l, cap - l, v);
}

/* Skip a run of request-line whitespace (is_rws); returns its length. */
static size_t skip_rws(struct cur *v)
{
	size_t n = 0;

	while (is_rws(peek(v))) {
		cur_skip(v, 1);
		n++;
	}
	return n;
}

/* v without leading and trailing request-line whitespace. */
static struct cur trim_rws(struct cur v)
{
	struct cur t;
	size_t n = 0, keep = 0;

	skip_rws(&v);
	t = v;
	while (cur_has(&t, 1)) {
		n++;
		if (!is_rws(cur_u8(&t)))
			keep = n;
	}
	return cur_take(&v, keep);
}

/*
 * "HTTP/" 1*DIGIT "." 1*DIGIT, the whole of v: 1 when each number is one
 * DIGIT (RFC 9112's HTTP-version), 2 when one has more ("HTTP/1.10", which
 * nginx and squid take as 1.10, so a request line is still read with it),
 * 0 when v is no version.
 */
static int version_kind(struct cur v)
{
	static const char pre[] = "HTTP/";
	size_t major = 0, minor = 0;

	for (size_t i = 0; i < 5; i++)
		if (cur_u8(&v) != (uint8_t)pre[i])
			return 0;
	while (is_digit(peek(&v))) {
		cur_skip(&v, 1);
		major++;
	}
	if (peek(&v) != '.')
		return 0;
	cur_skip(&v, 1);
	while (is_digit(peek(&v))) {
		cur_skip(&v, 1);
		minor++;
	}
	if (v.err || cur_has(&v, 1) || !major || !minor)
		return 0;
	return major == 1 && minor == 1 ? 1 : 2;
}

/* "HTTP/" DIGIT "." DIGIT, the whole of v. */
static int version_ok(struct cur v)
{
	return version_kind(v) == 1;
}

/*
 * method SP request-target SP HTTP-version, read as RFC 9112 3 allows for
 * robustness and as servers and proxies read it: the parts split on runs
 * of SP and HTAB, whitespace after the version ignored, the version
 * HTTP/<digits>.<digits>, and a target that holds whitespace is what lies
 * between the method and the version (nginx reads it so). Such a line is
 * malformed but not fatal, nor is a line that is not all there: its head
 * still ends at the empty line, and a reader that stopped at it would miss
 * the requests after it that the server answers. Only a line that does not
 * start with a method (no request at all) loses the stream.
 */
static void request_line(struct http_head *h, struct cur l)
{
	struct cur t = l, rest, part, ver;
	size_t n = 0, len, last, lead;
	int odd = 0; /* whitespace other than one SP between the parts */

	while (is_tchar(peek(&t))) {
		cur_skip(&t, 1);
		n++;
	}
	if (n == 0) {
		note(h, 1, "bad request line: no method");
		return;
	}
	if (n > HTTP_METHOD_LEN)
		note(h, 0, "method longer than %d bytes", HTTP_METHOD_LEN);
	put_text(h, h->method, sizeof(h->method), cur_take(&l, n));
	h->have_line = 1;
	if (cur_has(&l, 1) && !is_rws(peek(&l))) {
		note(h, 0, "bad request line: no SP after the method");
		return;
	}
	t = l;
	lead = skip_rws(&t);
	odd |= lead > 1 || (lead == 1 && peek(&l) != ' ');
	rest = trim_rws(l);
	odd |= cur_left(&t) != cur_left(&rest); /* whitespace after the version */
	len = cur_left(&rest);
	if (len == 0) {
		note(h, 0, "bad request line: no request-target");
		return;
	}

	/* the last part is the version when it reads as one */
	last = len;
	t = rest;
	for (size_t i = 0; i < len; i++)
		if (is_rws(cur_u8(&t)))
			last = i;
	t = rest;
	part = cur_take(&t, last);
	ver = part;
	if (last < len) {
		size_t k = cur_left(&part);

		odd |= peek(&t) != ' ';
		cur_skip(&t, 1);
		ver = t;
		part = trim_rws(part);
		odd |= cur_left(&part) != k; /* a run of whitespace before the version */
	}
	if (version_kind(ver)) {
		if (last < len) {
			t = part;
			while (cur_has(&t, 1))
				odd |= is_rws(cur_u8(&t));
		} else {
			part = cur_take(&part, 0); /* "GET  HTTP/1.1" */
		}
		put_text(h, h->version, sizeof(h->version), ver);
		if (version_kind(ver) != 1)
			note(h, 0, "bad request line: HTTP version of several digits");
	} else {
		/* no version: the target is the first part (HTTP/0.9's
		 * "GET /" when it is the only one) */
		t = rest;
		n = 0;
		while (cur_has(&t, 1) && !is_rws(cur_u8(&t)))
			n++;
		part = cur_take(&rest, n);
		note(h, 0, last < len ? "bad request line: bad HTTP version"
				      : "bad request line: no HTTP version");
	}
	if (odd)
		note(h, 0, "bad request line: whitespace other than one SP between its parts");
	h->uri_len = put_text(h, h->uri, sizeof(h->uri), part);
	if (!cur_left(&part))
		note(h, 0, "bad request line: no request-target");
}

/* HTTP-version SP 3DIGIT [SP reason-phrase] */
static void status_line(struct http_head *h, struct cur l)
{
	struct cur v = cur_take(&l, 8);
	unsigned status = 0;

	if (l.err || !version_ok(v) || peek(&l) != ' ') {
		note(h, 1, "bad status line: bad HTTP version");
		return;
	}
	put_text(h, h->version, sizeof(h->version), v);
	cur_skip(&l, 1);
	for (int i = 0; i < 3; i++) {
		int b = peek(&l);
		if (!is_digit(b) || (i == 0 && b == '0')) {
			note(h, 1, "bad status line: bad status code");
			return;
		}
		status = status * 10 + (unsigned)(b - '0');
		cur_skip(&l, 1);
	}
	if (cur_has(&l, 1) && peek(&l) != ' ') {
		note(h, 1, "bad status line: bad status code");
		return;
	}
	h->status = (uint16_t)status;
	if (cur_has(&l, 1)) {
		cur_skip(&l, 1);
		put_text(h, h->phrase, sizeof(h->phrase), l);
	}
	h->have_line = 1;
}

/* Content-Length: 1*DIGIT, or a list of equal ones. -1 when bad. Leading
 * zeros count for nothing, as servers read them: only 18 significant
 * digits are a bound. */
static int64_t content_length(struct cur v)
{
	int64_t val = -1;

	for (;;) {
		int64_t x = 0;
		int nd = 0, sig = 0;

		while (is_digit(peek(&v))) {
			int d = cur_u8(&v) - '0';
			nd++;
			if ((x || d) && ++sig > 18)
				return -1;
			x = x * 10 + d;
		}
		if (nd == 0 || (val >= 0 && x != val))
			return -1;
		val = x;
		while (is_ows(peek(&v)))
			cur_skip(&v, 1);
		if (!cur_has(&v, 1))
			return val;
		if (cur_u8(&v) != ',')
			return -1;
		while (is_ows(peek(&v)))
			cur_skip(&v, 1);
	}
}

/* Is the last coding of a Transfer-Encoding list "chunked"? */
static int last_coding_chunked(struct cur v)
{
	struct cur last = cur_init(NULL, 0);

	while (cur_has(&v, 1)) {
		struct cur t = v;
		size_t n = 0;

		while (cur_has(&t, 1) && cur_u8(&t) != ',')
			n++;
		struct cur e = trim(cur_take(&v, n));
		if (cur_has(&v, 1))
			cur_skip(&v, 1);
		if (cur_left(&e))
			last = e;
	}
	return cur_ieq(last, "chunked");
}

enum field_id {
	F_OTHER = 0, F_HOST, F_USER_AGENT, F_UPGRADE, F_CONNECTION, F_CONTENT_LENGTH,
	F_TRANSFER_ENCODING, F_SERVER, F_LOCATION, F_METADATA, F_METADATA_FLAVOR,
	F_AWS_TOKEN, F_AWS_TTL, F_HTTP2_SETTINGS,
};

static const struct {
	const char *name; /* lowercase */
	enum field_id id;
} field_names[] = {
	{"host", F_HOST},
	{"user-agent", F_USER_AGENT},
	{"upgrade", F_UPGRADE},
	{"connection", F_CONNECTION},
	{"content-length", F_CONTENT_LENGTH},
	{"transfer-encoding", F_TRANSFER_ENCODING},
	{"server", F_SERVER},
	{"location", F_LOCATION},
	{"metadata", F_METADATA},
	{"metadata-flavor", F_METADATA_FLAVOR},
	{"x-aws-ec2-metadata-token", F_AWS_TOKEN},
	{"x-aws-ec2-metadata-token-ttl-seconds", F_AWS_TTL},
	{"http2-settings", F_HTTP2_SETTINGS},
};

static enum field_id field_lookup(struct cur name)
{
	for (size_t i = 0; i < sizeof(field_names) / sizeof(field_names[0]); i++)
		if (cur_ieq(name, field_names[i].name))
			return field_names[i].id;
	return F_OTHER;
}

/* field-name ":" OWS field-value OWS */
static void field_line(struct http_head *h, struct cur l)
{
	struct cur t = l;
	size_t n = 0;
	int64_t cl;

	if (is_ows(peek(&l))) {
		note(h, 0, "obsolete line folding");
		return;
	}
	while (is_tchar(peek(&t))) {
		cur_skip(&t, 1);
		n++;
	}
	struct cur name = cur_take(&l, n);
	if (n == 0 || peek(&l) != ':') {
		note(h, 0, "bad header field name");
		return;
	}
	cur_skip(&l, 1);
	struct cur v = trim(l);

	switch (field_lookup(name)) {
	case F_HOST:
		if (h->have_host) {
			note(h, 0, "several Host fields");
			break;
		}
		h->have_host = 1;
		h->host_len = put_text(h, h->host, sizeof(h->host), v);
		break;
	case F_USER_AGENT:
		if (!h->user_agent[0])
			put_text(h, h->user_agent, sizeof(h->user_agent), v);
		break;
	case F_UPGRADE:
		join_text(h, h->upgrade, sizeof(h->upgrade), v);
		break;
	case F_CONNECTION:
		join_text(h, h->connection, sizeof(h->connection), v);
		break;
	case F_CONTENT_LENGTH:
		cl = content_length(v);
		if (cl < 0) {
			note(h, 1, "bad Content-Length");
			h->content_length = -2;
		} else if (h->content_length == -2) {
			/* an earlier one was bad: stays bad */
		} else if (h->content_length >= 0 && h->content_length != cl) {
			note(h, 1, "conflicting Content-Length fields");
			h->content_length = -2;
		} else {
			h->content_length = cl;
		}
		break;
	case F_TRANSFER_ENCODING:
		h->te = 1;
		h->chunked = last_coding_chunked(v);
		break;
	case F_SERVER:
		if (!h->server[0])
			put_text(h, h->server, sizeof(h->server), v);
		break;
	case F_LOCATION:
		if (!h->location[0])
			put_text(h, h->location, sizeof(h->location), v);
		break;
	case F_METADATA:
		h->meta |= HTTP_META;
		break;
	case F_METADATA_FLAVOR:
		h->meta |= HTTP_META_FLAVOR;
		break;
	case F_AWS_TOKEN:
		h->meta |= HTTP_META_TOKEN; /* never the token itself */
		break;
	case F_AWS_TTL:
		if (!(h->meta & HTTP_META_TTL))
			put_text(h, h->ttl, sizeof(h->ttl), v);
		h->meta |= HTTP_META_TTL;
		break;
	case F_HTTP2_SETTINGS:
		/* for the h2c analyzer, should the request be upgraded */
		if (!h->response)
			h2c_upgrade_settings(&h->h2s, cur_ptr(&v, cur_left(&v)), cur_left(&v));
		break;
	default:
		break;
	}
}

static void head_reset(struct http_head *h, int response)
{
	h->response = response != 0;
	h->have_line = 0;
	h->method[0] = h->uri[0] = h->version[0] = h->phrase[0] = '\0';
	h->host[0] = h->user_agent[0] = h->upgrade[0] = h->connection[0] = '\0';
	h->server[0] = h->location[0] = h->ttl[0] = h->why[0] = '\0';
	h->uri_len = h->host_len = 0;
	h->have_host = 0;
	h->status = 0;
	h->meta = 0;
	h->content_length = -1;
	h->te = h->chunked = 0;
	h->head_len = h->seen = h->taken = 0;
	h->lines = 0;
	h->malformed = h->fatal = h->cut = h->too_long = h->truncated = 0;
	memset(&h->h2s, 0, sizeof(h->h2s));
}

int http_parse_head(const uint8_t *buf, size_t len, int response, struct http_head *h)
{
	head_reset(h, response);
	return http_parse_more(buf, len, h);
}

int http_parse_more(const uint8_t *buf, size_t len, struct http_head *h)
{
	struct cur all = cur_init(buf, len);
	int is_short, bad = 0;
	const size_t base = h->taken; /* buf[0] is byte base of the head */
	struct cur c = cur_take_upto(&all, base < HTTP_HEAD_FAR ? HTTP_HEAD_FAR - base : 0,
				     &is_short);
	size_t avail = cur_left(&c), bad_at = 0;

	/* RFC 9112 2.2: empty lines before the start line are ignored */
	if (h->lines == 0)
		while (peek(&c) == '\r' || peek(&c) == '\n')
			cur_skip(&c, 1);
	for (;;) {
		size_t off = base + avail - cur_left(&c);
		struct cur line;
		int r = line_take(&c, &line, &bad, &bad_at,
				  h->lines > 0 ? LT_VALUES : h->response ? 0 : LT_CR);

		if (r == LINE_CTL) {
			/* in a field value: the head goes on, flagged */
			note(h, 0, "control byte 0x%02x at offset %zu", (unsigned)bad, off + bad_at);
			r = LINE_OK;
		}
		if (r == LINE_BAD) {
			h->seen = off + bad_at + 1;
			note(h, 1, "control byte 0x%02x at offset %zu", (unsigned)bad, off + bad_at);
			break;
		}
		if (r == LINE_SHORT) {
			h->seen = base + avail;
			h->taken = off;
			if (!is_short) {
				note(h, 1, "head longer than %d bytes", HTTP_HEAD_FAR);
				h->too_long = 1;
			}
			break;
		}
		/* Past HTTP_HEAD_MAX the head is read on (servers do: Go up
		 * to 1 MiB, Python's http.server 100 lines of 64 KiB), so a
		 * Host or a framing field behind 64 KiB of filler is not lost;
		 * it is marked, as nginx's and squid's defaults refuse it. */
		if (base + avail - cur_left(&c) > HTTP_HEAD_MAX)
			note(h, 0, "head longer than %d bytes", HTTP_HEAD_MAX);
		if (h->lines++ == 0) {
			if (h->response)
				status_line(h, line);
			else
				request_line(h, line);
			if (h->fatal) {
				h->seen = base + avail - cur_left(&c);
				break;
			}
			continue;
		}
		if (cur_left(&line) == 0) {
			h->head_len = h->seen = h->taken = base + avail - cur_left(&c);
			break;
		}
		field_line(h, line);
	}
	if (h->content_length < 0)
		h->content_length = -1;
	if (h->fatal)
		return MOD_MALFORMED;
	if (!h->head_len)
		return MOD_TRUNCATED;
	if (h->te && h->content_length >= 0)
		note(h, 0, "Transfer-Encoding with Content-Length");
	if (!h->response && h->te && !h->chunked)
		note(h, 1, "Transfer-Encoding without chunked");
	return h->malformed ? MOD_MALFORMED : MOD_OK;
}

/* ---- recognition ----------------------------------------------------------- */

/* Request methods that claim a flow at once (IANA HTTP Method Registry). */
static const char *const methods[] = {
	"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
	"PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "SEARCH",
	"REPORT", "MKCALENDAR", "MKACTIVITY", "CHECKOUT", "CHECKIN", "UNCHECKOUT", "MERGE",
	"ACL", "BIND", "UNBIND", "REBIND", "LINK", "UNLINK", "PURGE", "QUERY", "LABEL",
	"UPDATE", "ORDERPATCH", "MKWORKSPACE", "MKREDIRECTREF", "UPDATEREDIRECTREF",
	"VERSION-CONTROL", "BASELINE-CONTROL",
};

#define SNIFF_MAX 18 /* longer than the longest method */

/* Is tok[0..n) a known method (whole), or (prefix) the start of one? */
static int method_match(const uint8_t *tok, size_t n, int prefix)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		size_t m = strlen(methods[i]);
		if ((prefix ? n <= m : n == m) && memcmp(tok, methods[i], n) == 0)
			return 1;
	}
	return 0;
}

/* How many bytes of a request line that has no LF yet are judged byte by
 * byte on each call of request_line_shape (below). */
#define SHAPE_LOOK 1024

/*
 * Is the first line of buf[0..len) a request line with any method: token,
 * whitespace, a target, whitespace, "HTTP/" 1*DIGIT "." 1*DIGIT, optional
 * whitespace, (CR)LF? Servers and proxies pass methods they do not know
 * (FETCH, an extension's), so the method alone cannot decide; the version
 * at the line's end does, which no other text protocol sends there. The
 * HTTP/2 preface ("PRI * HTTP/2.0") is not a request. 1 yes, 0 no, -1 when
 * the bytes so far could still be one.
 *
 * The line may be as long as a head (HTTP_HEAD_MAX): nginx with large
 * header buffers, Go and Python serve request lines of tens of KiB with
 * any method, and the claim waits for the LF while the line is shorter
 * than HTTP_LINE_SKIP; past it, http_claim takes the -1 of a line whose
 * start has the shape (below) as a claim, since the window (stream_max
 * for an unclaimed flow) may never hold the LF, and http_stream reads
 * the line as a long one (reqline_skip_start).
 * This runs on every packet of an unclaimed client stream, over all its
 * bytes again, so the cost of a call is kept down: the LF is looked for
 * with memchr, and while it has not come only the first SHAPE_LOOK bytes
 * are judged byte by byte (a byte a head may not hold there, or a first
 * word that is no token followed by whitespace, answers 0); past them the
 * bytes so far can still be a request line when those first bytes hold a
 * token, whitespace and the start of a target. The whole line is walked
 * once its LF is there (the claim then happens, or the answer stays 0).
 */
static int request_line_shape(const uint8_t *buf, size_t len)
{
	size_t lim = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
	const uint8_t *lf = lim ? memchr(buf, '\n', lim) : NULL;
	size_t n = lf ? (size_t)(lf - buf) : lim, look = n, i;
	struct cur c, l, t;
	int b, method = 1, target = 0; /* still in the method; a target byte seen */

	if (!lf && len >= HTTP_HEAD_MAX)
		return 0; /* no line end within a head's bound */
	if (!lf && look > SHAPE_LOOK)
		look = SHAPE_LOOK;
	/* a byte a head may not hold ends it; a CR before the LF, or not
	 * followed by one (a bare CR, which squid splits on), is whitespace */
	c = cur_init(buf, look);
	for (i = 0; i < look; i++) {
		b = cur_u8(&c);
		if ((b < 0x20 && !is_rws(b)) || b == 0x7f)
			return 0;
		if (method && !is_tchar(b) && (i == 0 || !is_rws(b)))
			return 0;
		target |= !method && !is_rws(b);
		method &= is_tchar(b);
	}
	if (!lf)
		return look == n || target ? -1 : 0;
	c = cur_init(buf, n);
	l = trim_rws(c);

	/* method, then whitespace */
	n = 0;
	t = l;
	while (is_tchar(peek(&t))) {
		cur_skip(&t, 1);
		n++;
	}
	if (!is_rws(peek(&t)) || skip_rws(&t) == 0)
		return 0;
	/* the last part is the version, and something lies before it */
	size_t left = cur_left(&t), last = left;
	struct cur r = t;
	for (i = 0; i < left; i++)
		if (is_rws(cur_u8(&r)))
			last = i;
	if (last == left)
		return 0;
	r = t;
	cur_skip(&r, last + 1);
	if (!version_kind(r))
		return 0;
	return !cur_ieq(l, "pri * http/2.0");
}

/*
 * A known method and SP or HTAB claims at once (the first segment may hold
 * no more); any other token waits for its line and claims when that is a
 * request line (request_line_shape).
 */
int http_sniff(const uint8_t *buf, size_t len)
{
	struct cur c = cur_init(buf, len);
	uint8_t tok[SNIFF_MAX];
	size_t n = 0;

	while (n < sizeof(tok)) {
		int b = peek(&c);
		if (b < 0)
			break;
		cur_skip(&c, 1);
		if (b == '\r') { /* a bare CR is whitespace; CRLF ends the line */
			int b2 = peek(&c);
			if (b2 < 0)
				return method_match(tok, n, 0) ? -1 : request_line_shape(buf, len);
			if (b2 == '\n')
				break;
		}
		if (is_rws(b)) { /* servers take HTAB there too (RFC 9112 3) */
			if (method_match(tok, n, 0))
				return 1;
			break;
		}
		if (!is_tchar(b))
			break;
		tok[n++] = (uint8_t)b;
	}
	return request_line_shape(buf, len);
}

/* ---- the record ------------------------------------------------------------ */

size_t http_copy_escaped(char *dst, size_t cap, const char *src, int *cut)
{
	size_t i = 0, o = 0, n = strlen(src);

	if (cut)
		*cut = 0;
	if (cap == 0) {
		if (cut && n)
			*cut = 1;
		return 0;
	}
	while (i < n) {
		size_t k = 1;
		if (src[i] == '\\')
			k = i + 1 < n && src[i + 1] == 'x' ? 4 : 2;
		if (k > n - i)
			k = n - i;
		if (k > cap - 1 - o) {
			if (cut)
				*cut = 1;
			break;
		}
		memcpy(dst + o, src + i, k);
		o += k;
		i += k;
	}
	dst[o] = '\0';
	return o;
}

static void flag_field(struct rec *r, int on)
{
	rec_str(r, on ? "1" : "");
}

static void length_field(struct rec *r, int64_t cl)
{
	if (cl >= 0)
		rec_u64(r, (uint64_t)cl);
	else
		rec_str(r, "");
}

void http_head_record(const struct http_head *h, const struct http_pair *pair, struct rec *r)
{
	if (!h->response) {
		rec_str(r, "req");
		rec_str(r, h->method);
		rec_field(r, h->uri, h->uri_len);
		rec_str(r, h->version);
		rec_field(r, h->host, h->host_len);
		rec_str(r, h->user_agent);
		rec_str(r, h->upgrade);
		rec_str(r, h->connection);
		length_field(r, h->content_length);
		flag_field(r, h->meta & HTTP_META);
		flag_field(r, h->meta & HTTP_META_FLAVOR);
		flag_field(r, h->meta & HTTP_META_TOKEN);
		rec_str(r, h->ttl);
	} else {
		rec_str(r, "resp");
		rec_str(r, h->version);
		if (h->have_line)
			rec_u64(r, h->status);
		else
			rec_str(r, "");
		rec_str(r, h->phrase);
		length_field(r, h->content_length);
		rec_str(r, h->upgrade);
		rec_str(r, h->connection);
		rec_str(r, h->server);
		rec_str(r, h->location);
		rec_str(r, pair ? pair->method : "");
		rec_str(r, pair ? pair->host : "");
		rec_str(r, pair ? pair->uri : "");
	}
	rec_str(r, h->why);
	flag_field(r, h->cut);
	if (!h->response) {
		flag_field(r, h->have_host); /* tells an empty Host from none */
		flag_field(r, h->meta & HTTP_META_TTL); /* and an empty TTL */
	}
	flag_field(r, h->truncated);
	rec_end(r);
}

/* Every field at its cap, the separators and the numbers fit the record. */
_Static_assert(HTTP_METHOD_MAX + HTTP_URI_MAX + HTTP_VERSION_MAX + HTTP_HOST_MAX +
		       5 * HTTP_VALUE_MAX + HTTP_PHRASE_MAX + HTTP_TTL_MAX + HTTP_WHY_MAX +
		       HTTP_PAIR_HOST_MAX + HTTP_PAIR_URI_MAX + 256 <= HTTP_INFO_MAX,
	       "HTTP_INFO_MAX too small");

/* ---- the module ------------------------------------------------------------ */

enum { SKIP_FIELD = 1, SKIP_REQLINE = 2, SKIP_STATUS = 3 }; /* http_dir.skipline */

/* A request line skipped to its LF keeps its first RL_KEEP bytes (a method
 * and whitespace, then HTTP_URI_MAX - 1 bytes of target: what the event
 * shows) and its last RL_TAIL (SP HTTP/1.1 and whitespace after it). */
#define RL_KEEP (HTTP_URI_MAX + 128)
#define RL_TAIL 32

enum body_state {
	BODY_NONE = 0,  /* the next byte starts a message */
	BODY_LENGTH,    /* left bytes of a Content-Length body */
	BODY_CHUNK_SIZE,/* a chunk-size line */
	BODY_CHUNK_DATA,/* left bytes of chunk data */
	BODY_CHUNK_END, /* the CRLF after chunk data */
	BODY_TRAILER,   /* trailer lines up to the empty line */
};

struct http_dir {
	uint8_t stop;      /* nothing more is parsed in this direction */
	uint8_t body;      /* enum body_state */
	uint8_t longh;     /* a head over HTTP_HEAD_HOLD is being read a line
			    * at a time: its state is in the flow's roomy part */
	uint8_t skipline;  /* ... and a field line of it too long to hold is
			    * being skipped, up to its LF (SKIP_FIELD), or
			    * its request line (SKIP_REQLINE), or its
			    * status line (SKIP_STATUS) */
	uint8_t skiphead;  /* a head over HTTP_HEAD_MAX was reported: the rest
			    * of it is skipped, up to its empty line */
	uint8_t nl;        /* skiphead: 0 in a line, 1 after its LF, 2 after
			    * LF CR */
	uint8_t colon;     /* skipline SKIP_FIELD: the line's ':' has passed */
	uint8_t cr;        /* ... and its last byte so far was a CR */
	uint64_t left;     /* body bytes still to skip */
	uint32_t wait_len; /* stream length when the last head was incomplete */
	uint8_t told;      /* the head being read was reported unfinished at a
			    * FIN or RST (http_close) */
};

/* Per flow, in flow->app_state: one flat allocation. */
struct http_flow {
	struct http_dir d[2];
	uint64_t req_seq;  /* requests seen */
	uint64_t resp_seq; /* final responses seen */
	uint64_t wait_seq; /* 1 + number of the CONNECT/Upgrade request whose
			    * response the client direction waits for; 0 none */
	uint8_t wait_connect;
	uint8_t wait_h2c;  /* ... an Upgrade that offers h2c */
	struct h2c_upgrade h2s; /* ... and its HTTP2-Settings */
	uint8_t tunnel;    /* a 2xx answered CONNECT, or a 101 an Upgrade to h2c:
			    * hand the flow back */
	uint8_t roomy;     /* allocated as a struct http_flow_roomy */
	uint8_t simple;    /* an HTTP/0.9 request was answered */
	/* the unanswered requests, oldest first (at most HTTP_PIPELINE_MAX;
	 * NULL when there is none): allocated as they come, counted against
	 * the module's budget, freed by http_flow_end when the flow ends */
	struct pend *q;
	/* bit (n % 64): request n, unanswered, is a HEAD, whose response has
	 * no body: kept apart from q, so that a request q could not take
	 * (more than HTTP_PIPELINE_MAX, or the budget full) still frames its
	 * response right; for the 64 requests after the last answered */
	uint64_t head_bits;
};

/*
 * A flow that met a head longer than HTTP_HEAD_HOLD grows, once, into this
 * (still one flat allocation, which the flow table frees): the heads being
 * read a line at a time, one per direction, kept between packets while the
 * window moves on past their complete lines.
 */
struct http_flow_roomy {
	struct http_flow fs;
	struct http_head head[2];
	/* a request line longer than HTTP_LINE_SKIP being skipped to its LF
	 * (http_dir.skipline == SKIP_REQLINE): its first bytes (the method
	 * and as much of the target as the event keeps) and its last bytes
	 * so far (where the version is when the LF comes) */
	uint8_t rl[RL_KEEP];
	uint8_t tail[RL_TAIL];
	uint16_t rl_len;
	uint8_t tail_len;
};

/* Per module: working space shared by all flows (one packet at a time),
 * and the budget of every flow's pending requests. */
struct http_state {
	struct http_head head;
	uint8_t line[RL_KEEP + RL_TAIL]; /* a skipped request line's kept bytes */
	char info[HTTP_INFO_MAX];
	struct http_pair pair;   /* the request a response pairs with, copied out */
	struct pend_budget pend; /* HTTP_PENDING_BUDGET */
};

static int http_init(const struct module_env *env, void **state)
{
	struct http_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	pend_budget_init(&st->pend, HTTP_PENDING_BUDGET);
	*state = st;
	return 0;
}

static void http_fini(void *state)
{
	struct http_state *st = state;

	if (st)
		pend_budget_fini(&st->pend);
	free(st);
}

/* The flow table ends f: give back its pending requests (app_state itself
 * is freed by the table). */
static void http_flow_end(void *state, struct flow *f)
{
	struct http_state *st = state;
	struct http_flow *fs = f->app_state;

	if (f->app == APP_HTTP && fs)
		pend_free(&fs->q, &st->pend);
}

static unsigned http_counters(const void *state, struct mod_counter *out)
{
	const struct http_state *st = state;

	return pend_budget_counters(&st->pend, out);
}

size_t http_pending_bytes(const void *state)
{
	const struct http_state *st = state;
	return st ? st->pend.used : 0;
}

/* The worse of two results: malformed > truncated > ok. */
static int worse(int a, int b)
{
	if (a == MOD_MALFORMED || b == MOD_MALFORMED)
		return MOD_MALFORMED;
	if (a == MOD_TRUNCATED || b == MOD_TRUNCATED)
		return MOD_TRUNCATED;
	return MOD_OK;
}

enum { SKIP_DONE = 0, SKIP_MORE, SKIP_BAD };

/* One line of chunked framing, bounded by HTTP_CHUNK_LINE_MAX. */
static int chunk_line(struct cur *c, struct cur *line)
{
	int is_short, bad;
	size_t bad_at;
	struct cur t = *c;
	struct cur v = cur_take_upto(&t, HTTP_CHUNK_LINE_MAX, &is_short);
	size_t n = cur_left(&v);
	int r = line_take(&v, line, &bad, &bad_at, 0);

	if (r == LINE_SHORT && !is_short)
		return LINE_BAD; /* longer than HTTP_CHUNK_LINE_MAX */
	if (r == LINE_OK)
		cur_skip(c, n - cur_left(&v));
	return r;
}

/*
 * chunk-size [chunk-ext]: the size, or -1 when the line is not one. Read as
 * nginx reads it: leading zeros count for nothing (seventeen digits that
 * say 5 are 5), and after the size a ';', SP or HTAB starts what is
 * skipped to the line end ("5 junk" is 5); a reader that gave up on either
 * lost every request after the body.
 */
static int64_t chunk_size(struct cur l)
{
	int64_t size = 0;
	int nd = 0, sig = 0, b;

	while ((b = text_hexval(peek(&l))) >= 0) {
		nd++;
		if ((size || b) && ++sig > 15)
			return -1;
		size = size * 16 + b;
		cur_skip(&l, 1);
	}
	if (nd == 0 || (cur_has(&l, 1) && peek(&l) != ';' && !is_ows(peek(&l))))
		return -1;
	return size;
}

/*
 * Skip body bytes at c per d's state, advancing *used past what was
 * skipped (whole framing lines only). Returns SKIP_DONE when the body
 * ended, SKIP_MORE when the bytes ran out first, SKIP_BAD when chunked
 * framing is broken.
 */
static int body_skip(struct http_dir *d, struct cur c, size_t *used)
{
	size_t avail = cur_left(&c);

	*used = 0;
	while (d->body != BODY_NONE) {
		struct cur t = c, line;
		int64_t size;
		int r = LINE_OK;

		switch (d->body) {
		case BODY_LENGTH:
		case BODY_CHUNK_DATA: {
			size_t n = cur_left(&t) < d->left ? cur_left(&t) : (size_t)d->left;
			cur_skip(&t, n);
			d->left -= n;
			if (!d->left)
				d->body = d->body == BODY_LENGTH ? BODY_NONE : BODY_CHUNK_END;
			break;
		}
		case BODY_CHUNK_END:
			r = chunk_line(&t, &line);
			if (r == LINE_OK && cur_left(&line))
				r = LINE_BAD;
			if (r == LINE_OK)
				d->body = BODY_CHUNK_SIZE;
			break;
		case BODY_CHUNK_SIZE:
			r = chunk_line(&t, &line);
			if (r != LINE_OK)
				break;
			size = chunk_size(line);
			if (size < 0) {
				r = LINE_BAD;
			} else if (size == 0) {
				d->body = BODY_TRAILER;
			} else {
				d->left = (uint64_t)size;
				d->body = BODY_CHUNK_DATA;
			}
			break;
		case BODY_TRAILER:
			r = chunk_line(&t, &line);
			if (r == LINE_OK && !cur_left(&line))
				d->body = BODY_NONE;
			break;
		default:
			r = LINE_BAD;
			break;
		}
		if (r == LINE_BAD)
			return SKIP_BAD;
		if (r == LINE_SHORT)
			return SKIP_MORE;
		c = t;
		*used = avail - cur_left(&c);
		if (d->body != BODY_NONE && !cur_has(&c, 1))
			return SKIP_MORE;
	}
	return SKIP_DONE;
}

/* Emit the observation of the head in ms->head. */
static int emit_head(struct http_state *ms, const struct pkt *p, struct emit *out,
		     const struct http_pair *pair, unsigned flags)
{
	const struct http_head *h = &ms->head;
	struct rec r;

	rec_init(&r, ms->info, sizeof(ms->info));
	http_head_record(h, pair, &r);
	struct obs ob = {
		.kind = h->response ? OBS_HTTP_RESPONSE : OBS_HTTP_REQUEST,
		.pkt = p,
		.name = h->response ? (pair ? pair->host : "") : h->host,
		.name_len = h->response ? (pair ? strlen(pair->host) : 0) : h->host_len,
		.aux = h->response ? (pair ? pair->uri : "") : h->uri,
		.aux_len = h->response ? (pair ? strlen(pair->uri) : 0) : h->uri_len,
		.type = h->response ? h->status : 0,
		.size = (uint32_t)(h->head_len ? h->head_len : h->seen),
		.flags = flags,
		.info = ms->info,
		.info_len = r.len,
	};
	return out->obs(out, &ob);
}

/* Does the comma-separated list (an Upgrade value) hold tok (lowercase),
 * ASCII case-insensitively? */
static int list_has(const char *list, const char *tok)
{
	struct cur v = cur_init((const uint8_t *)list, strlen(list));

	while (cur_has(&v, 1)) {
		struct cur t = v;
		size_t n = 0;

		while (cur_has(&t, 1) && cur_u8(&t) != ',')
			n++;
		if (cur_ieq(trim(cur_take(&v, n)), tok))
			return 1;
		if (cur_has(&v, 1))
			cur_skip(&v, 1);
	}
	return 0;
}

/* A request head was parsed (r from http_parse_head). */
static int request_done(struct http_state *ms, struct http_flow *fs, const struct pkt *p,
			struct emit *out, int r)
{
	const struct http_head *h = &ms->head;
	struct http_dir *d = &fs->d[0];
	unsigned flags = 0;
	int e;

	d->told = 0; /* the next head is another */
	if (!h->have_line)
		return r; /* no request line: counted, nothing worth an event */
	if (h->malformed)
		flags |= OBS_F_MALFORMED;
	if (r == MOD_TRUNCATED) {
		flags |= OBS_F_TRUNCATED;
		ms->head.truncated = 1;
	}
	e = emit_head(ms, p, out, NULL, flags);
	if (e < 0)
		return e;

	if (h->method[0]) {
		uint64_t seq = fs->req_seq++;
		uint64_t bit = 1ull << (seq % 64);
		if (strcmp(h->method, "HEAD") == 0 && seq - fs->resp_seq < 64)
			fs->head_bits |= bit;
		else
			fs->head_bits &= ~bit;
		if (pend_count(fs->q) < HTTP_PIPELINE_MAX) {
			/* cut as struct http_pair holds them; not remembered
			 * (counted) when the module's budget is full */
			struct http_pair *q = &ms->pair;
			http_copy_escaped(q->method, sizeof(q->method), h->method, NULL);
			http_copy_escaped(q->host, sizeof(q->host), h->host, NULL);
			http_copy_escaped(q->uri, sizeof(q->uri), h->uri, NULL);
			(void)pend_push(&fs->q, &ms->pend, -1, seq, 0,
					0, q->method,
					q->host, q->uri);
		}
		if (strcmp(h->method, "CONNECT") == 0 || h->upgrade[0]) {
			fs->wait_seq = seq + 1;
			fs->wait_connect = strcmp(h->method, "CONNECT") == 0;
			fs->wait_h2c = list_has(h->upgrade, "h2c");
			fs->h2s = h->h2s;
		}
	}
	if (r == MOD_OK || (r == MOD_MALFORMED && !h->fatal)) {
		if (h->chunked) {
			d->body = BODY_CHUNK_SIZE;
		} else if (h->content_length > 0) {
			d->body = BODY_LENGTH;
			d->left = (uint64_t)h->content_length;
		}
	}
	return r;
}

/* The unanswered request a response answers, copied into ms->pair (NULL:
 * none); *head says whether it was a HEAD. Final responses use it up. */
static const struct http_pair *pair_take(struct http_state *ms, struct http_flow *fs,
					 int final, int *head)
{
	uint64_t seq = fs->resp_seq;
	struct pend_entry e;

	/* HEAD or not is known for the 64 requests after the last answered,
	 * remembered in q or not (head_bits) */
	*head = seq < fs->req_seq && seq + 64 >= fs->req_seq && (fs->head_bits >> (seq % 64) & 1);
	if (final) {
		fs->head_bits &= ~(1ull << (seq % 64));
		fs->resp_seq++;
	}
	while (pend_at(fs->q, 0, &e) && e.key < seq)
		pend_remove(&fs->q, &ms->pend, 0);
	if (!pend_at(fs->q, 0, &e) || e.key != seq)
		return NULL;
	/* pushed cut to these sizes: copied whole */
	http_copy_escaped(ms->pair.method, sizeof(ms->pair.method), e.method, NULL);
	http_copy_escaped(ms->pair.host, sizeof(ms->pair.host), e.host, NULL);
	http_copy_escaped(ms->pair.uri, sizeof(ms->pair.uri), e.uri, NULL);
	if (final)
		pend_remove(&fs->q, &ms->pend, 0);
	return &ms->pair;
}

/* A response head was parsed (r from http_parse_head). */
static int response_done(struct http_state *ms, struct http_flow *fs, const struct pkt *p,
			 struct emit *out, int r)
{
	const struct http_head *h = &ms->head;
	struct http_dir *d = &fs->d[1];
	unsigned status = h->status;
	int interim = h->have_line && status >= 100 && status < 200 && status != 101;
	int answers_wait, connect, e, head;
	unsigned flags = 0;

	d->told = 0; /* the next head is another */
	if (r == MOD_TRUNCATED && !h->have_line)
		return MOD_TRUNCATED;
	answers_wait = !interim && fs->wait_seq && fs->resp_seq + 1 >= fs->wait_seq;
	connect = answers_wait && fs->wait_connect;
	const struct http_pair *q = pair_take(ms, fs, !interim, &head);
	if (h->malformed)
		flags |= OBS_F_MALFORMED;
	if (r == MOD_TRUNCATED) {
		flags |= OBS_F_TRUNCATED;
		ms->head.truncated = 1;
	}
	e = emit_head(ms, p, out, q, flags);
	if (e < 0)
		return e;
	if (answers_wait)
		fs->wait_seq = 0;
	if (r != MOD_OK && !(r == MOD_MALFORMED && !h->fatal))
		return r;

	if (connect && status >= 200 && status < 300) {
		/* a tunnel: what follows is another protocol (usually TLS),
		 * which the flow's next claimant may read (http_stream) */
		fs->d[0].stop = fs->d[1].stop = 1;
		fs->tunnel = 1;
	} else if (status == 101) {
		/* the connection now carries another protocol; HTTP/2 (RFC
		 * 7540 3.2) is the h2c analyzer's, from the client's preface */
		fs->d[0].stop = fs->d[1].stop = 1;
		fs->tunnel = answers_wait && fs->wait_h2c;
	} else if (interim || status == 204 || status == 304 || head) {
		/* no body */
	} else if (h->chunked) {
		d->body = BODY_CHUNK_SIZE;
	} else if (!h->te && h->content_length >= 0) {
		if (h->content_length > 0) {
			d->body = BODY_LENGTH;
			d->left = (uint64_t)h->content_length;
		}
	} else {
		d->stop = 1; /* the body runs to the end of the connection */
	}
	return r;
}

/* Is there anything new since the last incomplete head: a line end, a byte
 * that breaks the head, or HTTP_HEAD_HOLD bytes held (once: the head is
 * then read a line at a time), or, in a head read a line at a time,
 * HTTP_LINE_SKIP bytes of its line (once: the line is then skipped; before,
 * a second long field line after a skipped one was never looked at again
 * and filled the window)? Saves re-parsing a long head per small segment:
 * the bytes after wait_len are looked at once each. */
static int head_news(const struct http_dir *d, const struct flow_stream *s)
{
	if (!d->wait_len || d->wait_len <= s->consumed || d->wait_len > s->len ||
	    s->len - s->consumed >= (d->longh ? HTTP_LINE_SKIP : HTTP_HEAD_HOLD))
		return 1;
	struct cur c = cur_init(s->buf + d->wait_len, s->len - d->wait_len);
	while (cur_has(&c, 1)) {
		uint8_t b = cur_u8(&c);
		if (b == '\n' || (b < 0x20 && b != '\t' && b != '\r') || b == 0x7f)
			return 1;
	}
	return 0;
}

/* How many of the first bytes of buf[0..n) are CR or LF: empty lines before
 * a head, which RFC 9112 2.2 says to ignore. nginx and squid skip any number
 * of them (200 CRLF before a request: served), so there is no bound but the
 * stream's window. */
static uint32_t blank_prefix(const uint8_t *buf, uint32_t n)
{
	struct cur c = cur_init(buf, n);
	uint32_t k = 0;

	while (cur_has(&c, 1)) {
		uint8_t b = cur_u8(&c);
		if (b != '\r' && b != '\n')
			break;
		k++;
	}
	return k;
}

/* Skip the empty lines at the stream cursor (never past end). Returns
 * whether any were skipped. */
static int skip_blank_lines(struct flow_stream *s, uint32_t end)
{
	uint32_t n = blank_prefix(s->buf + s->consumed, end - s->consumed);

	s->consumed += n;
	return n > 0;
}

/*
 * HTTP/0.9 (RFC 1945's Simple-Request): "GET /x" CRLF, one line without a
 * version, is a whole request; nginx serves it (the body alone comes back)
 * and squid forwards it. Nothing in the client's stream says that it is
 * whole: no empty line follows. The server's answer does: when the server
 * starts a message while every request before has its answer and the
 * client's bytes waiting for their head's end are exactly one request line
 * without a version, the server took them as a request. (Bytes the server
 * sends for an earlier request, or in a body, prove nothing: an agent
 * could time a line to wait then and hide what follows it.) Emit it (as the
 * client's packet: p turned around) and read on after its line: a real
 * HTTP/0.9 client sends nothing more. A server answer that does not start
 * like a status line is the bare body: the server direction stops, quietly.
 */
static int simple_request(struct http_state *ms, struct flow *f, struct http_flow *fs,
			  const struct pkt *p, struct emit *out)
{
	struct http_dir *d = &fs->d[0];
	struct flow_stream *s = &f->st[0];
	const struct flow_stream *srv = &f->st[1];
	const struct http_head *h = &ms->head;

	if (d->stop || d->body != BODY_NONE || d->longh || fs->wait_seq || !s->buf ||
	    s->consumed >= s->len || fs->req_seq != fs->resp_seq || fs->d[1].stop ||
	    fs->d[1].body != BODY_NONE || !srv->buf || srv->consumed >= srv->len)
		return MOD_OK;
	uint32_t end = flow_stream_avail(s, s->consumed);
	if (end <= s->consumed)
		return MOD_OK;
	size_t n = end - s->consumed, lf = 0;
	if (n > HTTP_HEAD_HOLD)
		return MOD_OK;
	struct cur c = cur_init(s->buf + s->consumed, n);
	uint8_t last = 0;
	while (cur_has(&c, 1)) {
		last = cur_u8(&c);
		lf += last == '\n';
	}
	if (lf != 1 || last != '\n') /* one line, all there */
		return MOD_OK;
	if (http_parse_head(s->buf + s->consumed, n, 0, &ms->head) != MOD_TRUNCATED ||
	    !h->have_line || h->lines != 1 || h->version[0] || h->taken != n)
		return MOD_OK;
	struct pkt q = pkt_turned(p);
	int r = request_done(ms, fs, &q, out, MOD_MALFORMED);
	if (r < 0)
		return r;
	s->consumed += (uint32_t)n;
	d->wait_len = 0;
	fs->simple = 1;
	/* "HTTP/" or the start of it: a status line (squid's answer) */
	size_t k = srv->buf && srv->len > srv->consumed ? srv->len - srv->consumed : 0;
	if (k > 5)
		k = 5;
	if (!k || memcmp(srv->buf + srv->consumed, "HTTP/", k) != 0)
		fs->d[1].stop = 1;
	return r;
}

/*
 * Skip the rest of a head too long to read, up to its empty line (LF LF or
 * LF CR LF), from c: *used gets the bytes skipped. Returns 1 when the head
 * ended, 0 when the bytes ran out first (d->nl keeps where a line stood).
 */
static int head_skip(struct http_dir *d, struct cur c, size_t *used)
{
	size_t n = 0;

	while (cur_has(&c, 1)) {
		uint8_t b = cur_u8(&c);
		n++;
		if (b == '\n') {
			if (d->nl) {
				*used = n;
				return 1;
			}
			d->nl = 1;
		} else {
			d->nl = b == '\r' && d->nl == 1 ? 2 : 0;
		}
	}
	*used = n;
	return 0;
}

/*
 * A head over HTTP_HEAD_FAR was reported (malformed): skip the rest of it
 * and go on with the next message, as a server with a larger bound does,
 * rather than stop the direction and hide every request after it (heads
 * between HTTP_HEAD_MAX and HTTP_HEAD_FAR are read whole). at_line_start: the
 * cursor stands at the start of a line. A Content-Length read before the
 * bound frames the body; chunked framing, lost with the skipped fields,
 * stops the direction.
 */
static void head_too_long(struct http_dir *d, const struct http_head *h, int at_line_start)
{
	d->longh = d->skipline = 0;
	d->wait_len = 0;
	if (h->chunked || h->te) {
		d->stop = 1;
		return;
	}
	d->skiphead = 1;
	d->nl = at_line_start ? 1 : 0;
	d->left = h->content_length > 0 ? (uint64_t)h->content_length : 0;
}

/*
 * The saved state of the head being read a line at a time in direction
 * dir, growing the flow's state into a struct http_flow_roomy the first
 * time (f->app_state and *fsp move). NULL when memory runs out.
 */
static struct http_head *long_head(struct flow *f, struct http_flow **fsp, int dir)
{
	struct http_flow *fs = *fsp;

	if (!fs->roomy) {
		struct http_flow_roomy *r = realloc(fs, sizeof(*r));
		if (!r)
			return NULL;
		r->fs.roomy = 1;
		f->app_state = r;
		*fsp = fs = &r->fs;
	}
	return &((struct http_flow_roomy *)fs)->head[dir];
}

/*
 * A field line longer than HTTP_LINE_SKIP is skipped to its LF
 * (http_dir.skipline == SKIP_FIELD), its skipped bytes looked at so that
 * skipping hides nothing: a bare CR ends the line there, as Python's
 * http.server reads it (its header parser starts a new field after a bare
 * CR: "X: aaa" CR "Host: evil" is a Host to it; nginx answers 400), so
 * a field after it is read (the head is marked already: several
 * Host fields are flagged too); a control byte before the line's ':'
 * breaks the head, as in a line read whole; after it, a control (NUL:
 * nginx 400, Python takes it) passes. A status line skipped the same way
 * (SKIP_STATUS) runs to its LF whatever its bytes, as clients read it
 * (Python's http.client: readline). The line's bytes so far, held at
 * c + at, were read by line_take: what is carried is whether they hold the
 * ':' and end in a CR.
 */
static void skip_field_start(struct http_dir *d, struct cur c, size_t at, size_t held)
{
	cur_skip(&c, at);
	const uint8_t *b = cur_ptr(&c, held);

	d->colon = b && memchr(b, ':', held) != NULL;
	d->cr = b && held && b[held - 1] == '\r';
}

/* Scan c, the next bytes of a field (or status) line being skipped: 1 at
 * its end (*k: the bytes up to and with it: LF, CRLF, or a bare CR in a
 * field line, which may leave *k 0 when the CR ended the bytes before), 0
 * when c ends first (*k: all of it), -1 at a byte that breaks the head
 * (*bad, and *bad_at its offset from c's start). */
static int skip_field_bytes(struct http_dir *d, struct cur c, int status, size_t *k, int *bad,
			    size_t *bad_at)
{
	size_t n = cur_left(&c);

	for (size_t i = 0; i < n; i++) {
		uint8_t b = cur_u8(&c);
		if (d->cr) {
			d->cr = 0;
			if (b == '\n') {
				*k = i + 1;
				return 1;
			}
			if (!status) {
				*k = i; /* the line ended at the bare CR */
				return 1;
			}
		}
		if (b == '\n') {
			*k = i + 1;
			return 1;
		}
		if (b == '\r') {
			d->cr = 1;
		} else if (((b < 0x20 && b != '\t') || b == 0x7f) && !d->colon) {
			*bad = b;
			*bad_at = i;
			return -1;
		}
		d->colon |= b == ':';
	}
	*k = n;
	return 0;
}

/* The first line of a response, too long to hold, at c + at: is it a
 * status line? Read into h from its first bytes (the version, the code and
 * as much of the reason phrase as h keeps); 0, h untouched, when not: the
 * line is then left to fill the window and break the head as before. */
static int status_start(struct http_head *h, struct cur c, size_t at)
{
	struct http_head t;

	cur_skip(&c, at);
	c = cur_take(&c, cur_left(&c) < 2 * HTTP_PHRASE_MAX ? cur_left(&c) : 2 * HTTP_PHRASE_MAX);
	t = *h;
	status_line(&t, c);
	if (!t.have_line || t.fatal)
		return 0;
	*h = t;
	h->lines = 1;
	return 1;
}

/*
 * A request line longer than HTTP_LINE_SKIP (nginx with large header
 * buffers serves 32 KiB ones, Python's http.server 64 KiB, Go's a head of
 * 1 MiB) cannot wait in the 16 KiB window for its LF: its first RL_KEEP
 * bytes are kept (the method and the start of the target, all the event
 * shows), the rest is skipped as it passes, its last RL_TAIL bytes kept,
 * and at the LF the line is read from the two (the version at its end),
 * marked malformed and cut as a skipped field line is; the fields after it
 * (Host) and the requests after it are then read. held: the line's bytes
 * so far, at c.
 */
static void reqline_skip_start(struct http_flow_roomy *r, struct cur c, size_t held)
{
	size_t keep = held < RL_KEEP ? held : RL_KEEP;
	size_t t = held - keep < RL_TAIL ? held - keep : RL_TAIL;
	struct cur k = c;

	cur_bytes(&k, r->rl, keep);
	cur_skip(&k, held - keep - t);
	cur_bytes(&k, r->tail, t);
	r->rl_len = (uint16_t)keep;
	r->tail_len = (uint8_t)t;
}

/* Keep the last RL_TAIL bytes of the skipped line, with v's bytes added. */
static void reqline_tail(struct http_flow_roomy *r, struct cur v)
{
	size_t n = cur_left(&v), keep = r->tail_len;

	if (n >= RL_TAIL) {
		cur_skip(&v, n - RL_TAIL);
		cur_bytes(&v, r->tail, RL_TAIL);
		r->tail_len = RL_TAIL;
		return;
	}
	if (keep + n > RL_TAIL)
		keep = RL_TAIL - n;
	memmove(r->tail, r->tail + r->tail_len - keep, keep);
	cur_bytes(&v, r->tail + keep, n);
	r->tail_len = (uint8_t)(keep + n);
}

/* Read the skipped request line into h from its kept bytes: the first
 * ones, then (lf: the LF came) the last ones, a CR before the LF left out. */
static void reqline_read(struct http_state *ms, const struct http_flow_roomy *r,
			 struct http_head *h, int lf)
{
	size_t n = r->rl_len, t = lf ? r->tail_len : 0;

	memcpy(ms->line, r->rl, n);
	if (t && r->tail[t - 1] == '\r')
		t--;
	memcpy(ms->line + n, r->tail, t);
	request_line(h, cur_init(ms->line, n + t));
	h->lines = 1;
	h->cut = 1;
}

/*
 * Parse what the packet's direction has, from where the last call stopped.
 * A head longer than HTTP_HEAD_HOLD (a request with a few large cookies or
 * tokens: nginx takes up to 32 KiB, squid 64 KiB) is read a line at a time:
 * its complete lines are parsed, its state saved (long_head) and the window
 * moved past them, so that the rest of it, and the requests after it, fit.
 */
static int http_stream(struct http_state *ms, struct flow *f, const struct pkt *p,
		       struct emit *out)
{
	int dir = p->dir ? 1 : 0;
	struct flow_stream *s = &f->st[dir];
	struct http_flow *fs = f->app_state;
	struct http_dir *d = &fs->d[dir];
	int ret = MOD_OK;

	if (dir == 1 && !fs->simple) {
		ret = simple_request(ms, f, fs, p, out);
		if (ret < 0)
			return ret;
	}
	/* A client waiting for the answer to its CONNECT or Upgrade still has
	 * its request's body skipped: the tunnel, or the other protocol,
	 * starts after it. */
	while (!d->stop && s->buf && s->consumed < s->len &&
	       !(dir == 0 && fs->wait_seq && d->body == BODY_NONE)) {
		/* Never read across a hole the flow table skipped (capture
		 * loss): parse up to it, and stop the direction inside it. */
		uint32_t end = flow_stream_avail(s, s->consumed);
		if (end <= s->consumed) {
			d->stop = 1;
			break;
		}
		struct cur c = cur_init(s->buf + s->consumed, end - s->consumed);
		int final = s->overflow || s->gap || end < s->len; /* no more bytes will come */
		size_t used;
		int r;

		if (d->body != BODY_NONE) {
			r = body_skip(d, c, &used);
			s->consumed += (uint32_t)used;
			d->wait_len = 0;
			if (r == SKIP_BAD) {
				d->stop = 1;
				ret = worse(ret, MOD_MALFORMED);
			} else if (r == SKIP_MORE && final) {
				d->stop = 1; /* cannot resynchronise */
			}
			if (r != SKIP_DONE)
				break;
			continue;
		}
		if (d->skiphead) {
			size_t k;
			int done = head_skip(d, c, &k);
			s->consumed += (uint32_t)k;
			if (!done)
				break;
			d->skiphead = 0;
			if (d->left)
				d->body = BODY_LENGTH;
			continue;
		}
		if (d->skipline) {
			/* the rest of a field line too long to hold, up to
			 * its LF, counted in the head's size */
			struct http_head *lh = long_head(f, &fs, dir);
			struct http_flow_roomy *rm = (struct http_flow_roomy *)fs;
			int reqline = d->skipline == SKIP_REQLINE;
			size_t k, bad_at = 0;
			int bad = 0, lf;
			if (reqline) {
				/* a bare CR is whitespace there, and another
				 * control leaves the line running to its LF
				 * (Python's reading; nginx answers 400): the
				 * head is marked already, nothing more to say */
				const uint8_t *nl = memchr(c.p, '\n', cur_left(&c));
				lf = nl != NULL;
				k = lf ? (size_t)(nl - c.p) + 1 : cur_left(&c);
				reqline_tail(rm, cur_take(&c, k - (size_t)lf));
			} else {
				lf = skip_field_bytes(d, c, d->skipline == SKIP_STATUS, &k, &bad,
						      &bad_at);
			}
			if (lf < 0) {
				/* a byte that breaks the head, as it would
				 * have in the part read: reported, and the
				 * direction stops */
				ms->head = *lh;
				note(&ms->head, 1, "control byte 0x%02x at offset %zu",
				     (unsigned)bad, lh->taken + bad_at);
				ms->head.seen = lh->taken + bad_at + 1;
				r = dir ? response_done(ms, fs, p, out, MOD_MALFORMED)
					: request_done(ms, fs, p, out, MOD_MALFORMED);
				if (r < 0)
					return r;
				ret = worse(ret, r);
				d->skipline = d->longh = 0;
				d->stop = 1;
				break;
			}
			lh->taken += k;
			s->consumed += (uint32_t)k;
			d->wait_len = 0;
			if (lf) {
				d->skipline = 0;
				if (reqline && lh->taken < HTTP_HEAD_FAR) {
					/* the line is over: its fields are next */
					reqline_read(ms, rm, lh, 1);
					if (!lh->version[0] &&
					    !method_match((const uint8_t *)lh->method,
							  strlen(lh->method), 0)) {
						/* claimed on its start's shape alone
						 * (http_claim), it ends in no HTTP
						 * version: no request (an RTSP line),
						 * as the sniff would have said had
						 * the window held it; read nothing */
						fs->d[0].stop = fs->d[1].stop = 1;
						break;
					}
					continue;
				}
			}
			if (lh->taken >= HTTP_HEAD_FAR) {
				/* the head is too long whatever follows */
				if (reqline)
					reqline_read(ms, rm, lh, lf);
				ms->head = *lh;
				note(&ms->head, 1, "head longer than %d bytes", HTTP_HEAD_FAR);
				ms->head.seen = ms->head.taken;
				r = dir ? response_done(ms, fs, p, out, MOD_MALFORMED)
					: request_done(ms, fs, p, out, MOD_MALFORMED);
				if (r < 0)
					return r;
				ret = worse(ret, r);
				head_too_long(d, &ms->head, !d->skipline);
				continue;
			}
			if (!lf)
				break;
			continue;
		}
		/* Empty lines before a head are ignored (RFC 9112 2.2): clients
		 * send a stray CRLF after a body or a CONNECT head. */
		if (!d->longh && skip_blank_lines(s, end))
			continue;
		if (!final && !head_news(d, s))
			break;
		size_t base = 0; /* head bytes before c */
		if (d->longh) {
			ms->head = *long_head(f, &fs, dir);
			base = ms->head.taken;
			r = http_parse_more(c.p, cur_left(&c), &ms->head);
		} else {
			r = http_parse_head(c.p, cur_left(&c), dir, &ms->head);
		}
		if (r == MOD_TRUNCATED && !final) {
			if (!d->longh && cur_left(&c) >= HTTP_HEAD_HOLD) {
				if (!long_head(f, &fs, dir))
					return -ENOMEM;
				d = &fs->d[dir];
				d->longh = 1;
			}
			if (d->longh) {
				size_t held = cur_left(&c) - (ms->head.taken - base);
				s->consumed += (uint32_t)(ms->head.taken - base);
				if (ms->head.lines == 0 && dir == 0 && held >= HTTP_LINE_SKIP) {
					/* a request line longer than that: keep
					 * its start, skip the rest to its LF */
					note(&ms->head, 0, "request line longer than %d bytes",
					     HTTP_LINE_SKIP);
					ms->head.cut = 1;
					struct cur lc = c;
					cur_skip(&lc, ms->head.taken - base);
					reqline_skip_start((struct http_flow_roomy *)fs, lc, held);
					ms->head.taken += held;
					s->consumed += (uint32_t)held;
					d->skipline = SKIP_REQLINE;
				} else if (ms->head.lines > 0 && held >= HTTP_LINE_SKIP) {
					/* a field line longer than a server's line
					 * buffer (nginx's default 8 KiB; with big
					 * buffers it takes 32 KiB): skip it rather
					 * than let it fill the window and end the
					 * direction, so the fields after it (a Host
					 * behind a 20 KB cookie) are read */
					note(&ms->head, 0, "field line longer than %d bytes",
					     HTTP_LINE_SKIP);
					skip_field_start(d, c, ms->head.taken - base, held);
					ms->head.cut = 1;
					ms->head.taken += held;
					s->consumed += (uint32_t)held;
					d->skipline = SKIP_FIELD;
				} else if (ms->head.lines == 0 && dir == 1 &&
					   held >= HTTP_LINE_SKIP &&
					   status_start(&ms->head, c, ms->head.taken - base)) {
					/* a status line longer than that (a reason
					 * phrase of 20 KB, which curl and Python's
					 * http.client take): read from its first
					 * bytes, the rest skipped to its LF as a
					 * field line is, so the fields after it and
					 * the responses after it are read */
					note(&ms->head, 0, "status line longer than %d bytes",
					     HTTP_LINE_SKIP);
					skip_field_start(d, c, ms->head.taken - base, held);
					d->colon = 1;
					ms->head.cut = 1;
					ms->head.taken += held;
					s->consumed += (uint32_t)held;
					d->skipline = SKIP_STATUS;
				}
				*long_head(f, &fs, dir) = ms->head;
			}
			d->wait_len = s->len;
			if (d->skipline)
				continue;
			break;
		}
		d->wait_len = 0;
		d->longh = 0;
		r = dir ? response_done(ms, fs, p, out, r) : request_done(ms, fs, p, out, r);
		if (r < 0)
			return r;
		ret = worse(ret, r);
		if (ms->head.too_long && ms->head.have_line && r != MOD_TRUNCATED) {
			/* the complete lines are read: skip the rest */
			s->consumed += (uint32_t)(ms->head.taken - base);
			head_too_long(d, &ms->head, 1);
			continue;
		}
		if (r == MOD_TRUNCATED || ms->head.fatal || !ms->head.head_len) {
			d->stop = 1;
			break;
		}
		s->consumed += (uint32_t)(ms->head.head_len - base);
	}
	/* What was parsed (heads, and bodies as they pass) is not needed
	 * again: the window moves on, so a keep-alive connection is followed
	 * past stream_max, request after request, however large the bodies
	 * between them. */
	uint32_t slid = s->slid;
	flow_stream_slide(s);
	slid = s->slid - slid;
	if (slid)
		d->wait_len = d->wait_len > slid ? d->wait_len - slid : 0;
	if (fs->tunnel) {
		/* Hand the tunnel back: the client stream's consumed cursor sits
		 * after the CONNECT (or Upgrade) head, where another analyzer
		 * (TLS, h2c) may claim the flow. After an Upgrade to h2c whose
		 * HTTP2-Settings bind the server's frames, they are left for
		 * h2c's claim in app_state (h2c.h; without memory, not). */
		pend_free(&fs->q, &ms->pend);
		struct h2c_upgrade *up = NULL;
		if (fs->wait_h2c && !fs->wait_connect && h2c_upgrade_matters(&fs->h2s)) {
			up = malloc(sizeof(*up));
			if (up)
				*up = fs->h2s;
		}
		free(f->app_state);
		f->app_state = up;
		f->app = APP_NONE;
	}
	return ret;
}

/*
 * Claim an unclaimed flow whose client stream starts with a method, also
 * behind a PROXY protocol header (proxyproto.h): the server skips it and
 * reads the request after it, so the stream is read from there.
 */
static int http_claim(struct flow *f, const struct pkt *p)
{
	struct flow_stream *s = &f->st[0];
	struct http_flow *fs;
	int pp;

	if (p->dir != 0 || f->app_state || s->done ||
	    !s->buf)
		return MOD_NOT_MINE;
	pp = proxyproto_stream(f);
	if (pp < 0)
		return MOD_NOT_MINE; /* it may yet be a header: ask again */
	/* "PROXY UNKNOWN://host/x HTTP/1.1" is a header to a server with
	 * proxy_protocol and a request (method PROXY) to one without: read as
	 * the request, nothing is hidden from either (not the rest of a v2
	 * header passed in part: no server reads that as a request) */
	if (pp > 0 && !f->pp_rest && http_sniff(s->buf + s->consumed, (size_t)pp) == 1)
		pp = 0;
	uint32_t from = s->consumed + (uint32_t)pp;
	uint32_t at = from + blank_prefix(s->buf + from, s->len - from);
	int sn = http_sniff(s->buf + at, s->len - at);
	/* a line that still may be a request line (a token, whitespace and
	 * the start of a target, no LF yet) and has grown past HTTP_LINE_SKIP
	 * is claimed without waiting for its LF, which the window may never
	 * hold: http_stream skips such a line to its LF and reads the request
	 * from its start and its end (the version) */
	if (sn < 0 && (s->len - at >= HTTP_LINE_SKIP || s->overflow))
		sn = 1;
	if (sn != 1)
		return MOD_NOT_MINE;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	s->consumed = from;
	proxyproto_taken(f);
	f->app = APP_HTTP;
	f->app_state = fs;
	return MOD_OK;
}

/* Does p (a RST from either end, or dir's own FIN) end direction dir while
 * it may hold a head not yet reported: not stopped, not in a body or a
 * skipped head, not told? *end: where its readable bytes end. */
static int head_left_open(const struct flow *f, const struct pkt *p, int dir, uint32_t *end)
{
	const struct http_flow *fs = f->app_state;
	const struct http_dir *d = &fs->d[dir];
	const struct flow_stream *s = &f->st[dir];

	if (!(p->tcp_flags & TH_RST) && (p->dir != 0) != (dir != 0))
		return 0;
	if (d->stop || d->body != BODY_NONE || d->skiphead || d->told || !s->buf)
		return 0;
	*end = s->consumed < s->len ? flow_stream_avail(s, s->consumed) : s->consumed;
	return 1;
}

/* Report ms->head, the head of direction dir (d) left open at p, as dir's
 * event, flagged truncated, once: MOD_TRUNCATED. */
static int report_open(struct http_state *ms, struct http_dir *d, const struct pkt *p, int dir,
		       const struct http_pair *pair, struct emit *out)
{
	struct http_head *h = &ms->head;

	h->truncated = 1;
	struct pkt q = (p->dir != 0) == (dir != 0) ? *p : pkt_turned(p);
	int e = emit_head(ms, &q, out, pair, OBS_F_TRUNCATED | (h->malformed ? OBS_F_MALFORMED : 0));
	if (e < 0)
		return e;
	d->told = 1;
	return MOD_TRUNCATED;
}

/*
 * The connection ends (p: the client's FIN, or a RST from either end, or
 * the flow's end, http_flow_left) while the client's bytes hold a request
 * head without its end: the
 * server's application has read them, and an agent can leave data there
 * (a request line and fields, never a blank line). Report what they hold,
 * once, flagged truncated, when it has a request line, as Zeek logs a
 * request pending at a connection's end; nothing else changes, so bytes
 * that come after it (a FIN sent ahead of them, a RST the receiver
 * ignores) are read as before, and a head they finish is reported again,
 * whole: a decoy FIN adds an event and hides none. Returns MOD_TRUNCATED
 * when it reported one, else MOD_NOT_MINE.
 */
static int close_request(struct http_state *ms, struct flow *f, const struct pkt *p,
			 struct emit *out)
{
	struct http_flow *fs = f->app_state;
	struct http_dir *d = &fs->d[0];
	const struct flow_stream *s = &f->st[0];
	uint32_t end;

	if (fs->wait_seq || !head_left_open(f, p, 0, &end))
		return MOD_NOT_MINE;
	struct http_head *h = &ms->head;
	int known = 0; /* the bytes start with a known method and whitespace */
	if (d->longh) { /* its complete lines are read: the rest, if any */
		*h = *long_head(f, &fs, 0); /* roomy already: no allocation */
		if (d->skipline == SKIP_REQLINE)
			reqline_read(ms, (struct http_flow_roomy *)fs, h, 0);
		else if (!d->skipline && end > s->consumed &&
			 http_parse_more(s->buf + s->consumed, end - s->consumed, h) != MOD_TRUNCATED)
			return MOD_NOT_MINE;
	} else {
		if (end <= s->consumed)
			return MOD_NOT_MINE;
		uint32_t at = s->consumed + blank_prefix(s->buf + s->consumed, end - s->consumed);
		if (http_parse_head(s->buf + at, end - at, 0, h) != MOD_TRUNCATED)
			return MOD_NOT_MINE; /* whole (read on its own turn), or none */
		known = http_sniff(s->buf + at, end - at) == 1;
		if (!h->have_line && known && !memchr(s->buf + at, '\n', end - at)) {
			/* a request line without its end (GET /data, then FIN):
			 * read as it stands, its first RL_KEEP + RL_TAIL bytes */
			size_t n = end - at < sizeof(ms->line) ? end - at : sizeof(ms->line);
			memcpy(ms->line, s->buf + at, n);
			request_line(h, cur_init(ms->line, n));
			h->lines = 1;
			h->cut |= n < end - at;
		}
	}
	/* a request line as servers take one: a method, a target and a
	 * version, or a known method and a target (HTTP/0.9's form, or a line
	 * not ended); not bytes left after a body that lied about its length */
	if (!h->have_line || !h->method[0] || !h->uri_len || h->fatal || (!h->version[0] && !known))
		return MOD_NOT_MINE;
	return report_open(ms, d, p, 0, NULL, out);
}

/*
 * The same for the server's side: the connection ends (p: the server's
 * FIN, or a RST from either end, or the flow's end) while the server's
 * bytes hold a response head without its end. The client has read a
 * status line, and perhaps fields, that no response event would show (a
 * metadata service's 200 cut by a RST; an endpoint that answers with data
 * in its fields and never ends the head): reported once, flagged
 * truncated, with the request it answers, when it has a status line, or
 * the start of one without its end that reads as one (a version and a
 * code). Nothing else changes: the request stays unanswered, so bytes that
 * come after it and finish the head are read and paired as before, and
 * the head is reported again, whole.
 */
static int close_response(struct http_state *ms, struct flow *f, const struct pkt *p,
			  struct emit *out)
{
	struct http_flow *fs = f->app_state;
	struct http_dir *d = &fs->d[1];
	const struct flow_stream *s = &f->st[1];
	uint32_t end;

	if (!head_left_open(f, p, 1, &end))
		return MOD_NOT_MINE;
	struct http_head *h = &ms->head;
	if (d->longh) { /* its complete lines are read: the rest, if any */
		*h = *long_head(f, &fs, 1); /* roomy already: no allocation */
		d = &fs->d[1];
		if (!d->skipline && end > s->consumed &&
		    http_parse_more(s->buf + s->consumed, end - s->consumed, h) != MOD_TRUNCATED)
			return MOD_NOT_MINE;
	} else {
		if (end <= s->consumed)
			return MOD_NOT_MINE;
		uint32_t at = s->consumed + blank_prefix(s->buf + s->consumed, end - s->consumed);
		if (http_parse_head(s->buf + at, end - at, 1, h) != MOD_TRUNCATED)
			return MOD_NOT_MINE; /* whole (read on its own turn), or none */
		/* a status line without its end, read as it stands */
		if (!h->have_line && !h->fatal && !memchr(s->buf + at, '\n', end - at))
			status_start(h, cur_init(s->buf + at, end - at), 0);
	}
	if (!h->have_line || !h->status || h->fatal)
		return MOD_NOT_MINE;
	int head;
	return report_open(ms, d, p, 1, pair_take(ms, fs, 0, &head) /* not used up */, out);
}

/* A FIN or a RST, or the flow's end: the heads either side left open. */
static int http_close(struct http_state *ms, struct flow *f, const struct pkt *p,
		      struct emit *out)
{
	int a = close_request(ms, f, p, out);
	if (a < 0 || f->app != APP_HTTP || !f->app_state)
		return a;
	int b = close_response(ms, f, p, out);
	if (b < 0)
		return b;
	return a == MOD_TRUNCATED || b == MOD_TRUNCATED ? MOD_TRUNCATED : MOD_NOT_MINE;
}

/* The flow ends (expiry, eviction, the end of the run) with a head open:
 * reported as at a RST. */
static int http_flow_left(void *state, struct flow *f, const struct pkt *p, struct emit *out)
{
	if (f->app != APP_HTTP || !f->app_state)
		return MOD_NOT_MINE;
	struct pkt q = *p;
	q.tcp_flags = TH_RST;
	return http_close(state, f, &q, out);
}

static int http_on_packet(void *state, const struct pkt *p, struct emit *out)
{
	struct flow *f = p->flow;
	int r;

	if (p->proto != IPPROTO_TCP || !f)
		return MOD_NOT_MINE;
	if (!p->payload_len) /* a FIN or a RST (SEL_TCP_END) */
		return f->app == APP_HTTP && f->app_state ? http_close(state, f, p, out) : MOD_NOT_MINE;
	if (f->app == APP_NONE) {
		r = http_claim(f, p);
		if (r != MOD_OK)
			return r;
	} else if (f->app != APP_HTTP || !f->app_state) {
		return MOD_NOT_MINE;
	}
	r = http_stream(state, f, p, out);
	if (r >= 0 && (p->tcp_flags & (TH_FIN | TH_RST)) && f->app == APP_HTTP && f->app_state) {
		int c = http_close(state, f, p, out);
		if (c < 0)
			return c;
		if (c == MOD_TRUNCATED)
			r = worse(r, c);
	}
	return r;
}

const struct module http_module = {
	.name = "http",
	.sel = SEL_TCP | SEL_PAYLOAD | SEL_TCP_END,
	.init = http_init,
	.fini = http_fini,
	.on_packet = http_on_packet,
	.on_flow_end = http_flow_end,
	.on_flow_left = http_flow_left,
	.counters = http_counters,
};
