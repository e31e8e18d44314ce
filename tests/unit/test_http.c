/*
 * test_http.c - the HTTP/1.x analyzer on crafted bytes: every field of a
 * request and a status head, every truncation point of both, heads split
 * at every byte across segments, pipelining and pairing, bodies by
 * Content-Length and chunked framing, interim and no-body responses,
 * CONNECT and Upgrade, the hostile-input bounds, recognition, and the JSON
 * renderer. The module runs over a struct flow built here, with stream
 * buffers filled the way the flow table fills them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include "../unit/check.h"
#include "../unit/many_flows.h"
#include "api/http_json.h"
#include "flow.h"
#include "http.h"
#include "module.h"

/* ---- observations captured from the module -------------------------------- */

#define MAX_EV 64

struct ev {
	int kind;
	int dir; /* of the packet it bears */
	unsigned flags;
	uint16_t type;
	uint32_t size;
	char name[HTTP_HOST_MAX];
	char aux[HTTP_URI_MAX];
	char info[HTTP_INFO_MAX];
	size_t info_len;
};

struct cap {
	struct emit emit;
	int n;
	struct ev ev[MAX_EV];
};

static int cap_obs(struct emit *e, const struct obs *o)
{
	struct cap *c = (struct cap *)e;
	struct ev *v;

	CHECK(o->name && o->aux && o->info);
	CHECK_EQ(strlen(o->name), o->name_len);
	CHECK_EQ(strlen(o->aux), o->aux_len);
	CHECK_EQ(strlen(o->info), o->info_len);
	if (c->n >= MAX_EV)
		return 0;
	v = &c->ev[c->n++];
	v->kind = o->kind;
	v->dir = o->pkt ? o->pkt->dir : -1;
	v->flags = o->flags;
	v->type = o->type;
	v->size = o->size;
	snprintf(v->name, sizeof(v->name), "%s", o->name);
	snprintf(v->aux, sizeof(v->aux), "%s", o->aux);
	memcpy(v->info, o->info, o->info_len + 1);
	v->info_len = o->info_len;
	return 0;
}

/* Field i of a record, copied into a static-free caller buffer. */
static const char *field(const char *info, size_t len, int i, char *buf, size_t cap)
{
	const char *rec, *piece;
	size_t rlen, plen;

	buf[0] = '\0';
	if (!rec_split(&info, &len, REC_RS, &rec, &rlen))
		return "(none)";
	for (int k = 0; rec_split(&rec, &rlen, REC_US, &piece, &plen); k++) {
		if (k == i) {
			snprintf(buf, cap, "%.*s", (int)plen, piece);
			return buf;
		}
	}
	return "(none)";
}

static char fb[HTTP_INFO_MAX];
#define EVF(e, i) field((e)->info, (e)->info_len, (i), fb, sizeof(fb))

/* Request record fields (http.h). */
enum { RQ_METHOD = 1, RQ_URI, RQ_VERSION, RQ_HOST, RQ_UA, RQ_UPGRADE, RQ_CONN, RQ_CL,
       RQ_META, RQ_FLAVOR, RQ_TOKEN, RQ_TTL, RQ_WHY, RQ_CUT };
/* Response record fields. */
enum { RS_VERSION = 1, RS_STATUS, RS_PHRASE, RS_CL, RS_UPGRADE, RS_CONN, RS_SERVER,
       RS_LOCATION, RS_RMETHOD, RS_RHOST, RS_RURI, RS_WHY, RS_CUT, RS_TRUNC };

/* ---- a connection over a hand-built flow ----------------------------------- */

struct conn {
	void *state;
	struct flow f;
	struct flow_stream st[2]; /* f.st: the flow table keeps streams out of line */
	uint8_t *buf[2];
	uint32_t max; /* stream_max */
	struct cap cap;
};

static void conn_open(struct conn *c, uint32_t max)
{
	memset(c, 0, sizeof(*c));
	CHECK_EQ(http_module.init(NULL, &c->state), 0);
	c->f.proto = IPPROTO_TCP;
	c->f.ipv = 4;
	c->f.st = c->st;
	c->max = max;
	c->buf[0] = malloc(max);
	c->buf[1] = malloc(max);
	c->cap.emit.obs = cap_obs;
}

static void conn_close(struct conn *c)
{
	/* as the core and the flow table do */
	http_module.on_flow_end(c->state, &c->f);
	free(c->f.app_state);
	free(c->buf[0]);
	free(c->buf[1]);
	http_module.fini(c->state);
}

/* Append n bytes to direction dir as the flow table does, then run the
 * module on the packet, which has TCP flags fl. */
static int feed_fl(struct conn *c, int dir, const void *data, size_t n, uint8_t fl)
{
	struct flow_stream *s = &c->f.st[dir];
	struct pkt p;

	if (!s->buf)
		s->buf = c->buf[dir];
	if (!s->overflow && !s->gap && !s->done) {
		size_t k = n < c->max - s->len ? n : c->max - s->len;
		if (k)
			memcpy(s->buf + s->len, data, k);
		s->len += (uint32_t)k;
		if (s->len >= c->max)
			s->overflow = 1;
	}
	memset(&p, 0, sizeof(p));
	p.proto = IPPROTO_TCP;
	p.ipv = 4;
	p.flow = &c->f;
	p.dir = dir;
	p.payload = data;
	p.payload_len = n;
	p.tcp_flags = fl;
	return http_module.on_packet(c->state, &p, &c->cap.emit);
}

static int feed(struct conn *c, int dir, const void *data, size_t n)
{
	return feed_fl(c, dir, data, n, 0);
}

static int feeds(struct conn *c, int dir, const char *s)
{
	return feed(c, dir, s, strlen(s));
}

/* ---- the pure parser ------------------------------------------------------- */

static struct http_head H;

/* why an irregular request line is malformed */
#define ODD_WS "bad request line: whitespace other than one SP between its parts"


static const char curl_req[] =
	"GET /latest/meta-data/ HTTP/1.1\r\n"
	"Host: 169.254.169.254\r\n"
	"User-Agent: curl/7.88.1\r\n"
	"Accept: */*\r\n"
	"\r\n";

static void test_request_fields(void)
{
	static const char req[] =
		"PUT /latest/api/token HTTP/1.1\r\n"
		"host:   169.254.169.254  \r\n"
		"USER-AGENT: aws-sdk-go/1.44\r\n"
		"Connection: keep-alive\r\n"
		"connection: Upgrade\r\n"
		"Upgrade: websocket\r\n"
		"Content-Length: 0\r\n"
		"Metadata: true\r\n"
		"Metadata-Flavor: Google\r\n"
		"X-aws-ec2-metadata-token: AQAEAKsecretTOKENvalue==\r\n"
		"X-aws-ec2-metadata-token-ttl-seconds: 21600\r\n"
		"\r\n";
	struct rec r;
	char info[HTTP_INFO_MAX];

	CHECK_EQ(http_parse_head((const uint8_t *)req, strlen(req), 0, &H), MOD_OK);
	CHECK_EQ(H.head_len, strlen(req));
	CHECK_STR(H.method, "PUT");
	CHECK_STR(H.uri, "/latest/api/token");
	CHECK_EQ(H.uri_len, strlen("/latest/api/token"));
	CHECK_STR(H.version, "HTTP/1.1");
	CHECK_STR(H.host, "169.254.169.254");
	CHECK_EQ(H.host_len, 15);
	CHECK_STR(H.user_agent, "aws-sdk-go/1.44");
	CHECK_STR(H.connection, "keep-alive, Upgrade");
	CHECK_STR(H.upgrade, "websocket");
	CHECK_EQ(H.content_length, 0);
	CHECK_EQ(H.meta, HTTP_META | HTTP_META_FLAVOR | HTTP_META_TOKEN | HTTP_META_TTL);
	CHECK_STR(H.ttl, "21600");
	CHECK_EQ(H.malformed, 0);
	CHECK_EQ(H.cut, 0);

	rec_init(&r, info, sizeof(info));
	http_head_record(&H, NULL, &r);
	CHECK_STR(info, "req\x1fPUT\x1f/latest/api/token\x1fHTTP/1.1\x1f"
			"169.254.169.254\x1f"
			"aws-sdk-go/1.44\x1fwebsocket\x1fkeep-alive, Upgrade\x1f"
			"0\x1f"
			"1\x1f"
			"1\x1f"
			"1\x1f"
			"21600\x1f\x1f\x1f" "1\x1f" "1\x1f\x1e");
	CHECK(strstr(info, "secret") == NULL); /* the token is never kept */
	CHECK(!r.overflow);

	/* curl, and the defaults of absent fields */
	CHECK_EQ(http_parse_head((const uint8_t *)curl_req, strlen(curl_req), 0, &H), MOD_OK);
	CHECK_STR(H.user_agent, "curl/7.88.1");
	CHECK_EQ(H.content_length, -1);
	CHECK_EQ(H.meta, 0);
	rec_init(&r, info, sizeof(info));
	http_head_record(&H, NULL, &r);
	CHECK_STR(info, "req\x1fGET\x1f/latest/meta-data/\x1fHTTP/1.1\x1f"
			"169.254.169.254\x1f"
			"curl/7.88.1\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f" "1\x1f\x1f\x1e");
}

static void test_request_targets(void)
{
	static const struct {
		const char *req, *method, *uri;
	} t[] = {
		{"GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n",
		 "GET", "http://169.254.169.254/latest/meta-data/"},
		{"CONNECT metadata.google.internal:443 HTTP/1.1\r\nHost: metadata.google.internal:443\r\n\r\n",
		 "CONNECT", "metadata.google.internal:443"},
		{"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", "OPTIONS", "*"},
		{"GET /a%20b?x=1&y=\"2\"#f HTTP/1.0\n\n", "GET", "/a%20b?x=1&y=\"2\"#f"},
		{"PROPFIND /dav/ HTTP/1.1\r\n\r\n", "PROPFIND", "/dav/"},
		{"GET /\\\xff\x80 HTTP/1.1\r\n\r\n", "GET", "/\\\\\\xff\\x80"},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK_EQ(http_parse_head((const uint8_t *)t[i].req, strlen(t[i].req), 0, &H),
			 MOD_OK);
		CHECK_STR(H.method, t[i].method);
		CHECK_STR(H.uri, t[i].uri);
		CHECK_EQ(H.head_len, strlen(t[i].req));
	}
	/* Host escaped: non-ASCII and backslash */
	static const char esc[] = "GET / HTTP/1.1\r\nHost: \xe4\xbe\x8b.\\test\r\n\r\n";
	CHECK_EQ(http_parse_head((const uint8_t *)esc, strlen(esc), 0, &H), MOD_OK);
	CHECK_STR(H.host, "\\xe4\\xbe\\x8b.\\\\test");
	/* HTTP/1.0 version kept as sent; empty Host */
	static const char h10[] = "GET / HTTP/1.0\r\nHost:\r\n\r\n";
	CHECK_EQ(http_parse_head((const uint8_t *)h10, strlen(h10), 0, &H), MOD_OK);
	CHECK_STR(H.version, "HTTP/1.0");
	CHECK_STR(H.host, "");
	CHECK_EQ(H.have_host, 1);
	/* leading empty lines are skipped */
	static const char lead[] = "\r\n\r\nGET /x HTTP/1.1\r\n\r\n";
	CHECK_EQ(http_parse_head((const uint8_t *)lead, strlen(lead), 0, &H), MOD_OK);
	CHECK_STR(H.uri, "/x");
	CHECK_EQ(H.head_len, strlen(lead));
}

/*
 * Request lines that servers and proxies read though RFC 9112 3 does not
 * call them regular (runs of SP and HTAB between the parts, whitespace
 * after the version, a version of several digits): each is read, flagged,
 * and its head goes on to the empty line.
 */
static void test_irregular_lines(void)
{
	static const struct {
		const char *line, *method, *uri, *version, *why;
	} t[] = {
		{"GET  http://evil.example/ HTTP/1.1", "GET", "http://evil.example/", "HTTP/1.1",
		 ODD_WS},
		{"GET\thttp://evil.example/\tHTTP/1.1", "GET", "http://evil.example/", "HTTP/1.1",
		 ODD_WS},
		{"GET http://evil.example/ HTTP/1.1 ", "GET", "http://evil.example/", "HTTP/1.1",
		 ODD_WS},
		{"GET http://evil.example/ \t HTTP/1.1\t", "GET", "http://evil.example/",
		 "HTTP/1.1", ODD_WS},
		{"CONNECT  evil.example:80 HTTP/1.1", "CONNECT", "evil.example:80", "HTTP/1.1",
		 ODD_WS},
		{"GET http://evil.example/ HTTP/1.10", "GET", "http://evil.example/", "HTTP/1.10",
		 "bad request line: HTTP version of several digits"},
		{"GET / HTTP/01.1", "GET", "/", "HTTP/01.1",
		 "bad request line: HTTP version of several digits"},
		{"GET /a b HTTP/1.1", "GET", "/a b", "HTTP/1.1", ODD_WS},
		{"GET  HTTP/1.1", "GET", "", "HTTP/1.1", ODD_WS},
		{"GET / HTTP/1.", "GET", "/", "", "bad request line: bad HTTP version"},
		{"GET / HTTP/x.1 y", "GET", "/", "", "bad request line: bad HTTP version"},
		{"GET ", "GET", "", "", "bad request line: no request-target"},
		{"GET  /", "GET", "/", "", "bad request line: no HTTP version"},
	};
	char req[256];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int n = snprintf(req, sizeof(req), "%s\r\nHost: evil.example\r\n\r\n", t[i].line);
		CHECK_EQ(http_parse_head((const uint8_t *)req, (size_t)n, 0, &H), MOD_MALFORMED);
		CHECK_EQ(H.fatal, 0);
		CHECK_EQ(H.have_line, 1);
		CHECK_STR(H.method, t[i].method);
		CHECK_STR(H.uri, t[i].uri);
		CHECK_STR(H.version, t[i].version);
		CHECK_STR(H.host, "evil.example");
		CHECK_STR(H.why, t[i].why);
		CHECK_EQ(H.head_len, (size_t)n);
	}

	/* over a connection: the irregular request is an event, flagged, and
	 * the one after it on the same connection is read too */
	struct conn c;

	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "GET  / HTTP/1.1\r\nHost: api.example.com\r\n\r\n"
			      "GET http://evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n"),
		 MOD_MALFORMED);
	CHECK_EQ(c.f.app, APP_HTTP);
	CHECK_EQ(c.cap.n, 2);
	CHECK(c.cap.ev[0].flags & OBS_F_MALFORMED);
	CHECK_STR(c.cap.ev[0].aux, "/");
	CHECK_STR(c.cap.ev[1].name, "evil.example");
	CHECK_EQ(c.cap.ev[1].flags & OBS_F_MALFORMED, 0);
	conn_close(&c);
}

static void test_response_fields(void)
{
	static const char resp[] =
		"HTTP/1.1 403 Forbidden by policy\r\n"
		"Server: squid/5.7\r\n"
		"Content-Length: 3\r\n"
		"Location: http://proxy.example/denied\r\n"
		"Connection: close\r\n"
		"\r\n";
	struct http_pair pair = {"GET", "169.254.169.254", "http://169.254.169.254/"};
	struct rec r;
	char info[HTTP_INFO_MAX];

	CHECK_EQ(http_parse_head((const uint8_t *)resp, strlen(resp), 1, &H), MOD_OK);
	CHECK_EQ(H.response, 1);
	CHECK_EQ(H.status, 403);
	CHECK_STR(H.phrase, "Forbidden by policy");
	CHECK_STR(H.version, "HTTP/1.1");
	CHECK_STR(H.server, "squid/5.7");
	CHECK_STR(H.location, "http://proxy.example/denied");
	CHECK_STR(H.connection, "close");
	CHECK_EQ(H.content_length, 3);
	rec_init(&r, info, sizeof(info));
	http_head_record(&H, &pair, &r);
	CHECK_STR(info, "resp\x1fHTTP/1.1\x1f"
			"403\x1f"
			"Forbidden by policy\x1f"
			"3\x1f\x1f"
			"close\x1fsquid/5.7\x1fhttp://proxy.example/denied\x1fGET\x1f"
			"169.254.169.254\x1fhttp://169.254.169.254/\x1f\x1f\x1f\x1e");

	static const struct {
		const char *s;
		int ret;
		unsigned status;
		const char *phrase;
	} t[] = {
		{"HTTP/1.1 200\r\n\r\n", MOD_OK, 200, ""},
		{"HTTP/1.1 200 \r\n\r\n", MOD_OK, 200, ""},
		{"HTTP/1.0 404 Not\tFound\n\n", MOD_OK, 404, "Not\\x09Found"},
		{"HTTP/1.1 099 X\r\n\r\n", MOD_MALFORMED, 0, ""},
		{"HTTP/1.1 20 OK\r\n\r\n", MOD_MALFORMED, 0, ""},
		{"HTTP/1.1 2000 OK\r\n\r\n", MOD_MALFORMED, 0, ""},
		{"HTTP/1.1  200 OK\r\n\r\n", MOD_MALFORMED, 0, ""},
		{"HTTP/11 200 OK\r\n\r\n", MOD_MALFORMED, 0, ""},
		{"http/1.1 200 OK\r\n\r\n", MOD_MALFORMED, 0, ""},
		{"SSH-2.0-OpenSSH_9.2\r\n", MOD_MALFORMED, 0, ""},
		{"HTTP/1.1\r\n\r\n", MOD_MALFORMED, 0, ""},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int ret = http_parse_head((const uint8_t *)t[i].s, strlen(t[i].s), 1, &H);
		CHECK_EQ(ret, t[i].ret);
		CHECK_EQ(H.status, t[i].status);
		CHECK_STR(H.phrase, t[i].phrase);
		if (ret == MOD_MALFORMED) {
			CHECK(H.fatal);
			CHECK(H.why[0] != '\0');
			CHECK_EQ(H.have_line, 0);
		}
	}
}

/* Every prefix of a complete head is MOD_TRUNCATED with nothing wrong; the
 * whole is MOD_OK. */
static void truncation_points(const char *s, int response)
{
	size_t n = strlen(s);
	int bad = 0;

	for (size_t k = 0; k < n; k++) {
		int ret = http_parse_head((const uint8_t *)s, k, response, &H);
		if (ret != MOD_TRUNCATED || H.malformed || H.head_len) {
			fprintf(stderr, "prefix %zu of %zu: ret %d why '%s'\n", k, n, ret, H.why);
			bad++;
		}
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(http_parse_head((const uint8_t *)s, n, response, &H), MOD_OK);
	CHECK_EQ(H.head_len, n);
}

static void test_truncation(void)
{
	truncation_points(curl_req, 0);
	truncation_points("POST /x HTTP/1.1\nHost: a\nContent-Length: 10\n\n", 0);
	truncation_points("HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 5\r\n\r\n", 1);
	/* start line fields are there as soon as the line is complete */
	CHECK_EQ(http_parse_head((const uint8_t *)curl_req, 33, 0, &H), MOD_TRUNCATED);
	CHECK_EQ(H.have_line, 1);
	CHECK_STR(H.uri, "/latest/meta-data/");
	CHECK_EQ(http_parse_head((const uint8_t *)curl_req, 32, 0, &H), MOD_TRUNCATED);
	CHECK_EQ(H.have_line, 0);
	CHECK_EQ(http_parse_head(NULL, 0, 0, &H), MOD_TRUNCATED);
}

static void test_hostile(void)
{
	static uint8_t big[HTTP_HEAD_MAX + 64];
	static const char pre[] = "GET / HTTP/1.1\r\nX-Pad: ";
	size_t n = strlen(pre);

	/* exactly HTTP_HEAD_MAX with its terminator: fine */
	memcpy(big, pre, n);
	memset(big + n, 'a', HTTP_HEAD_MAX - n - 4);
	memcpy(big + HTTP_HEAD_MAX - 4, "\r\n\r\n", 4);
	CHECK_EQ(http_parse_head(big, HTTP_HEAD_MAX, 0, &H), MOD_OK);
	CHECK_EQ(H.head_len, HTTP_HEAD_MAX);
	/* one byte more: marked, but read on to its end (servers take
	 * longer heads: Go 1 MiB, Python's http.server 100 lines of 64 KiB),
	 * its framing and Host kept; before, the head broke at the bound */
	memset(big + n, 'a', HTTP_HEAD_MAX - n - 3);
	memcpy(big + HTTP_HEAD_MAX - 3, "\r\n\r\n", 4);
	CHECK_EQ(http_parse_head(big, HTTP_HEAD_MAX - 1, 0, &H), MOD_TRUNCATED);
	CHECK_EQ(http_parse_head(big, HTTP_HEAD_MAX, 0, &H), MOD_TRUNCATED);
	CHECK_EQ(H.malformed, 0);
	CHECK_EQ(http_parse_head(big, HTTP_HEAD_MAX + 1, 0, &H), MOD_MALFORMED);
	CHECK_STR(H.why, "head longer than 65536 bytes");
	CHECK_EQ(H.fatal, 0);
	CHECK_EQ(H.too_long, 0);
	CHECK_EQ(H.head_len, HTTP_HEAD_MAX + 1);
	CHECK_STR(H.method, "GET");

	/* a Host, Content-Length and Transfer-Encoding behind 64 KiB and
	 * more of filler lines: read (before, lost at the bound) */
	static uint8_t far[HTTP_HEAD_FAR + 64];
	size_t k = (size_t)snprintf((char *)far, 64, "POST /far HTTP/1.1\r\n");
	while (k < 3 * HTTP_HEAD_MAX) {
		memcpy(far + k, "X-Pad: ", 7);
		memset(far + k + 7, 'p', 993);
		memcpy(far + k + 1000, "\r\n", 2);
		k += 1002;
	}
	k += (size_t)snprintf((char *)far + k, 128,
			      "Host: far.test\r\nContent-Length: 7\r\nUpgrade: h2c\r\n\r\n");
	CHECK_EQ(http_parse_head(far, k + 5, 0, &H), MOD_MALFORMED);
	CHECK_STR(H.why, "head longer than 65536 bytes");
	CHECK_EQ(H.fatal, 0);
	CHECK_STR(H.host, "far.test");
	CHECK_EQ(H.content_length, 7);
	CHECK_STR(H.upgrade, "h2c");
	CHECK_EQ(H.head_len, k);
	/* chunked there: framed too */
	memcpy(far + k - 16, "Transfer-Encoding: chunked\r\n\r\n", 30);
	CHECK_EQ(http_parse_head(far, k + 14, 0, &H), MOD_MALFORMED);
	CHECK_EQ(H.head_len, k + 14);
	CHECK_EQ(H.chunked, 1);
	CHECK_EQ(H.content_length, 7);
	CHECK_EQ(H.fatal, 0);
	/* up to the second bound: a head without its end past it breaks */
	k = (size_t)snprintf((char *)far, 64, "GET /far HTTP/1.1\r\n");
	while (k + 1002 <= HTTP_HEAD_FAR) {
		memcpy(far + k, "X-Pad: ", 7);
		memset(far + k + 7, 'p', 993);
		memcpy(far + k + 1000, "\r\n", 2);
		k += 1002;
	}
	memset(far + k, 'q', sizeof(far) - k);
	CHECK_EQ(http_parse_head(far, HTTP_HEAD_FAR - 1, 0, &H), MOD_TRUNCATED);
	CHECK_EQ(http_parse_head(far, sizeof(far), 0, &H), MOD_MALFORMED);
	CHECK(H.fatal);
	CHECK(H.too_long);
	CHECK_STR(H.why, "head longer than 65536 bytes");
	CHECK_EQ(H.seen, HTTP_HEAD_FAR);
	CHECK_EQ(H.taken, k);

	static const struct {
		const char *s;
		size_t len; /* 0: strlen */
		int fatal;
		const char *why;
	} t[] = {
		{"GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n", 29, 0, "control byte 0x00 at offset 23"},
		{"GET / HTTP/1.1\r\nHo\0st: a\r\n\r\n", 29, 1, "control byte 0x00 at offset 18"},
		{"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", 0, 0, "control byte 0x0d at offset 20"},
		{"GET /\x01 HTTP/1.1\r\n\r\n", 0, 1, "control byte 0x01 at offset 5"},
		{"GET / HTTP/1.1\r\nX: \x7f\r\n\r\n", 0, 0, "control byte 0x7f at offset 19"},
		{"GET / HTTP/1.1\rHost: a\r\n\r\n", 0, 0, "control byte 0x0d at offset 14"},
		{"GET / HTTP/1.1\r\n\x16\x03\x01", 0, 1, "control byte 0x16 at offset 16"},
		{"GET /\r\n\r\n", 0, 0, "bad request line: no HTTP version"},
		{"OPTIONS\r\n\r\n", 0, 0, "bad request line: no request-target"},
		{"GET / HTTP/1.1 x\r\n\r\n", 0, 0, "bad request line: bad HTTP version"},
		{"GET  / HTTP/1.1\r\n\r\n", 0, 0, ODD_WS},
		{"GET\t/ HTTP/1.1\r\n\r\n", 0, 0, ODD_WS},
		{"GET/ HTTP/1.1\r\n\r\n", 0, 0, "bad request line: no SP after the method"},
		{" GET / HTTP/1.1\r\n\r\n", 0, 1, "bad request line: no method"},
		{"OPTIONS rtsp://cam/ RTSP/1.0\r\n\r\n", 0, 0, "bad request line: bad HTTP version"},
		{"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA / HTTP/1.1\r\n\r\n", 0, 0,
		 "method longer than 32 bytes"},
		{"GET / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 0, 1, "bad Content-Length"},
		{"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 0, 1,
		 "conflicting Content-Length fields"},
		{"GET / HTTP/1.1\r\nContent-Length: 1, 2\r\n\r\n", 0, 1, "bad Content-Length"},
		{"GET / HTTP/1.1\r\nContent-Length: 1234567890123456789\r\n\r\n", 0, 1,
		 "bad Content-Length"},
		{"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 0, 1, "bad Content-Length"},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 0, 1,
		 "Transfer-Encoding without chunked"},
		{"GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n", 0, 0, "obsolete line folding"},
		{"GET / HTTP/1.1\r\nHost : a\r\n\r\n", 0, 0, "bad header field name"},
		{"GET / HTTP/1.1\r\nno colon\r\n\r\n", 0, 0, "bad header field name"},
		{"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 0, 0, "several Host fields"},
		{"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 0,
		 0, "Transfer-Encoding with Content-Length"},
		/* a bare CR before a field line's ':' still breaks the head */
		{"GET / HTTP/1.1\r\nX\r: a\r\n\r\n", 0, 1, "control byte 0x0d at offset 17"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t len = t[i].len ? t[i].len : strlen(t[i].s);
		int ret = http_parse_head((const uint8_t *)t[i].s, len, 0, &H);
		CHECK_EQ(ret, MOD_MALFORMED);
		CHECK_EQ(H.fatal, t[i].fatal);
		CHECK_STR(H.why, t[i].why);
		if (!t[i].fatal)
			CHECK_EQ(H.head_len, len);
	}
	/* the first Host wins */
	CHECK_EQ(http_parse_head((const uint8_t *)t[25].s, strlen(t[25].s), 0, &H), MOD_MALFORMED);
	CHECK_STR(H.host, "a");
	/* a list of equal Content-Length values is one value */
	static const char cl2[] = "GET / HTTP/1.1\r\nContent-Length: 7 , 7\r\nContent-Length: 7\r\n\r\n";
	CHECK_EQ(http_parse_head((const uint8_t *)cl2, strlen(cl2), 0, &H), MOD_OK);
	CHECK_EQ(H.content_length, 7);
	/* chunked last: fine for a request */
	static const char te[] = "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, Chunked \r\n\r\n";
	CHECK_EQ(http_parse_head((const uint8_t *)te, strlen(te), 0, &H), MOD_OK);
	CHECK_EQ(H.chunked, 1);
	/* a response may end in a non-chunked coding (body to the close) */
	static const char te1[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n";
	CHECK_EQ(http_parse_head((const uint8_t *)te1, strlen(te1), 1, &H), MOD_OK);
	CHECK_EQ(H.chunked, 0);
	CHECK_EQ(H.te, 1);
	/* a control byte in an incomplete head is seen at once */
	CHECK_EQ(http_parse_head((const uint8_t *)"GET / HTTP/1.1\r\nX\0", 18, 0, &H),
		 MOD_MALFORMED);
	/* values longer than their buffers are cut at a whole escape */
	static char longua[2048];
	n = (size_t)snprintf(longua, sizeof(longua), "GET / HTTP/1.1\r\nUser-Agent: ");
	for (int i = 0; i < 300; i++)
		longua[n++] = (char)0xff;
	memcpy(longua + n, "\r\n\r\n", 5);
	CHECK_EQ(http_parse_head((const uint8_t *)longua, strlen(longua), 0, &H), MOD_OK);
	CHECK_EQ(H.cut, 1);
	CHECK_EQ(strlen(H.user_agent) % 4, 0);
	CHECK(strlen(H.user_agent) > HTTP_VALUE_MAX - 5);
}

static void test_sniff(void)
{
	static const struct {
		const char *s;
		int want;
	} t[] = {
		{"GET / HTTP/1.1\r\n", 1}, {"GET ", 1}, {"GET", -1}, {"G", -1}, {"", -1},
		{"POST /", 1}, {"PROPFIND /", 1}, {"PROPPATC", -1}, {"CONNECT a:1", 1},
		{"BASELINE-CONTROL /", 1}, {"GET\t/", 1},
		{"\x16\x03\x01\x02\x00\x01\x00\x01", 0}, {"SSH-2.0-OpenSSH_9.2\r\n", 0},
		{"PRI * HTTP/2.0\r\n", 0}, {"HTTP/1.1 200 OK", 0}, {"EHLO x\r\n", 0},
		{"\r\nGET / HTTP/1.1", 0},
		/* any other method: when its line is a request line */
		{"FETCH http://evil.example/ HTTP/1.1\r\n", 1}, {"get / HTTP/1.1\n", 1},
		{"FETCH http://evil.example/ HTTP/1.1", -1}, {"FETCH http://evil.example/", -1},
		{"GETX /", -1}, {"SSH-2.0-", -1}, {"EHLO x", -1}, {"FETCH\t/\tHTTP/1.10 \r\n", 1},
		{"FETCH / HTTP/1.1\r", -1}, {"FETCH / HTTP/1.1\rX", -1}, {"FETCH /\x01 HTTP/1.1", 0},
		/* request-line whitespace as squid and Python's http.server split it */
		{"GET\r/x\rHTTP/1.1\r\n", 1}, {"GET\x0b/", 1}, {"GET\x0c/", 1}, {"GET\x1c/", 1},
		{"GET\x1f/", 1}, {"FETCH\x0b/\x0cHTTP/1.1\r\n", 1}, {"FETCH\r/\rHTTP/1.1\r\n", 1},
		{"GET\r", -1}, {"GET\r\n", 0}, {"GET\x01/", 0}, {"GET\x1b/", 0},
		{"FETCH / RTSP/1.0\r\n", 0}, {"FETCH HTTP/1.1\r\n", 0}, {"FETCH\r\n", 0},
		{"FE/TCH / HTTP/1.1\r\n", 0}, {" FETCH / HTTP/1.1\r\n", 0},
		{"FETCH / HTTP/1.1 x\r\n", 0}, {"FETCH / HTTP/\r\n", 0},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int got = http_sniff((const uint8_t *)t[i].s, strlen(t[i].s));
		if (got != t[i].want)
			fprintf(stderr, "sniff '%s': %d\n", t[i].s, got);
		CHECK_EQ(got, t[i].want);
	}
	CHECK_EQ(http_sniff(NULL, 0), -1);
	/* a request line of any method as long as a head (nginx with 32k
	 * buffers serves "FOO /" + 9,000 bytes): it waits for its LF past
	 * 8 KiB (review F15: refused at HTTP_HEAD_HOLD before), and is no
	 * request when it does not end within HTTP_HEAD_MAX */
	static uint8_t lng[HTTP_HEAD_MAX + 16];
	memcpy(lng, "FETCH /", 7);
	memset(lng + 7, 'a', sizeof(lng) - 7);
	CHECK_EQ(http_sniff(lng, HTTP_HEAD_HOLD - 1), -1);
	CHECK_EQ(http_sniff(lng, HTTP_HEAD_HOLD + 8), -1);
	CHECK_EQ(http_sniff(lng, 9005), -1);
	CHECK_EQ(http_sniff(lng, HTTP_HEAD_MAX - 1), -1);
	CHECK_EQ(http_sniff(lng, HTTP_HEAD_MAX), 0);
	CHECK_EQ(http_sniff(lng, sizeof(lng)), 0);
	static const size_t ends[] = {100, HTTP_HEAD_HOLD - 20, HTTP_HEAD_HOLD, 9005, 16000,
				      40000, HTTP_HEAD_MAX - 11};
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t e = ends[i];
		memcpy(lng + e, " HTTP/1.1\r\n", 11);
		CHECK_EQ(http_sniff(lng, e + 11), 1);
		CHECK_EQ(http_sniff(lng, e + 10), -1); /* its CR, no LF yet */
		CHECK_EQ(http_sniff(lng, e + 5), -1);
		lng[e + 6] = '2'; /* "HTTP/2.1": still a version */
		CHECK_EQ(http_sniff(lng, e + 11), 1);
		lng[e + 6] = 'x';
		CHECK_EQ(http_sniff(lng, e + 11), 0);
		lng[e + 6] = '1';
		lng[e / 2 + 4] = 0x01; /* a control byte anywhere in the line */
		CHECK_EQ(http_sniff(lng, e + 11), 0);
		lng[e / 2 + 4] = 'a';
		memset(lng + e, 'a', 11);
	}
	CHECK_EQ(http_sniff(lng, sizeof(lng)), 0); /* restored */
	/* a control byte among the first bytes refuses at once; past them, it
	 * is seen when the LF comes */
	lng[500] = 0x7f;
	CHECK_EQ(http_sniff(lng, 20000), 0);
	lng[500] = 'a';
	lng[5000] = 0x00;
	CHECK_EQ(http_sniff(lng, 4000), -1);
	CHECK_EQ(http_sniff(lng, 5001), -1);
	memcpy(lng + 20000, " HTTP/1.1\n", 10);
	CHECK_EQ(http_sniff(lng, 20010), 0);
	lng[5000] = 'a';
	CHECK_EQ(http_sniff(lng, 20010), 1);
	memset(lng + 20000, 'a', 10);
	/* past the first bytes, a token, whitespace and the start of a target
	 * must have come: a long token, or a long run of whitespace, is none */
	memset(lng, 'A', 3000);
	CHECK_EQ(http_sniff(lng, 900), -1);
	CHECK_EQ(http_sniff(lng, 3000), 0);
	memcpy(lng, "FETCH", 5);
	memset(lng + 5, ' ', 2000);
	CHECK_EQ(http_sniff(lng, 900), -1);
	CHECK_EQ(http_sniff(lng, 2500), 0);
	memcpy(lng + 2000, " / HTTP/1.1\n", 13);
	CHECK_EQ(http_sniff(lng, 2013), 1); /* whole: any whitespace run */
}


static void test_copy_escaped(void)
{
	char d[8];
	int cut;

	CHECK_EQ(http_copy_escaped(d, sizeof(d), "ab\\xffc", &cut), 7);
	CHECK_EQ(cut, 0);
	CHECK_EQ(http_copy_escaped(d, sizeof(d), "abcd\\xff", &cut), 4);
	CHECK_STR(d, "abcd");
	CHECK_EQ(cut, 1);
	CHECK_EQ(http_copy_escaped(d, sizeof(d), "abcdef\\\\", &cut), 6);
	CHECK_STR(d, "abcdef");
	CHECK_EQ(cut, 1);
	CHECK_EQ(http_copy_escaped(d, 0, "a", &cut), 0);
	CHECK_EQ(cut, 1);
}

/* ---- the module over a flow ------------------------------------------------ */

static void test_claim(void)
{
	struct conn c;

	/* a TLS ClientHello: not mine, not claimed */
	conn_open(&c, 16384);
	CHECK_EQ(feed(&c, 0, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11), MOD_NOT_MINE);
	CHECK_EQ(c.f.app, APP_NONE);
	CHECK(c.f.app_state == NULL);
	conn_close(&c);

	/* the server speaks first: not claimed on its bytes */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 1, "HTTP/1.1 200 OK\r\n\r\n"), MOD_NOT_MINE);
	CHECK_EQ(c.f.app, APP_NONE);
	conn_close(&c);

	/* another analyzer's flow */
	conn_open(&c, 16384);
	c.f.app = APP_TLS;
	CHECK_EQ(feeds(&c, 0, curl_req), MOD_NOT_MINE);
	CHECK_EQ(c.cap.n, 0);
	c.f.app = APP_NONE;
	conn_close(&c);

	/* any number of empty lines before the first request (nginx and squid
	 * serve one behind 200 CRLF), and between requests */
	conn_open(&c, 16384);
	{
		char lead[600 + 64];
		size_t k = 0;
		for (int i = 0; i < 200; i++)
			lead[k++] = '\r', lead[k++] = '\n';
		for (int i = 0; i < 20; i++)
			lead[k++] = '\n';
		const char *r1 = "GET /lead HTTP/1.1\r\nHost: evil.test\r\n\r\n";
		memcpy(lead + k, r1, strlen(r1));
		k += strlen(r1);
		CHECK_EQ(feed(&c, 0, lead, k), MOD_OK);
		CHECK_EQ(c.f.app, APP_HTTP);
		CHECK_EQ(c.cap.n, 1);
		CHECK_STR(c.cap.ev[0].name, "evil.test");
		/* 20 more CRLF, then another */
		const char *r2 = "GET /2 HTTP/1.1\r\nHost: b.test\r\n\r\n";
		memcpy(lead + 40, r2, strlen(r2));
		CHECK_EQ(feed(&c, 0, lead, 40 + strlen(r2)), MOD_OK);
		CHECK_EQ(c.cap.n, 2);
		CHECK_STR(c.cap.ev[1].name, "b.test");
	}
	conn_close(&c);

	/* a method split across segments: wait, then claim */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "GE"), MOD_NOT_MINE);
	CHECK_EQ(c.f.app, APP_NONE);
	CHECK_EQ(feed(&c, 0, curl_req + 2, strlen(curl_req) - 2), MOD_OK);
	CHECK_EQ(c.f.app, APP_HTTP);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(c.f.st[0].slid + c.f.st[0].consumed, strlen(curl_req));
	conn_close(&c);

	/* a method the list does not know: claimed once its line is a request
	 * line, and read from its first byte */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "FETCH http://evil.example/ HTTP/1."), MOD_NOT_MINE);
	CHECK_EQ(c.f.app, APP_NONE);
	CHECK_EQ(feeds(&c, 0, "1\r\nHost: evil.example\r\n\r\n"), MOD_OK);
	CHECK_EQ(c.f.app, APP_HTTP);
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(EVF(&c.cap.ev[0], RQ_METHOD), "FETCH");
	CHECK_STR(c.cap.ev[0].aux, "http://evil.example/");
	CHECK_STR(c.cap.ev[0].name, "evil.example");
	CHECK_EQ(c.cap.ev[0].flags, 0);
	conn_close(&c);

	/* any port, and UDP is never looked at */
	conn_open(&c, 16384);
	struct pkt p;
	memset(&p, 0, sizeof(p));
	p.proto = IPPROTO_UDP;
	p.flow = &c.f;
	CHECK_EQ(http_module.on_packet(c.state, &p, &c.cap.emit), MOD_NOT_MINE);
	CHECK_EQ(http_module.sel, SEL_TCP | SEL_PAYLOAD | SEL_TCP_END);
	conn_close(&c);
}

/* Does an event's record end with the request's truncated flag set? */
static int info_truncated(const struct ev *v)
{
	return v->info_len >= 3 && memcmp(v->info + v->info_len - 3, "\x1f" "1\x1e", 3) == 0;
}

/* A head the connection ends in the middle of (http_close). */
static void test_close(void)
{
	struct conn c;

	/* the client's FIN: the head as it stands, once, truncated */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "GET /drop/4f3c HTTP/1.1\r\nHost: drop.example\r\nX-D: 1"), MOD_OK);
	CHECK_EQ(c.cap.n, 0);
	CHECK_EQ(feed_fl(&c, 0, NULL, 0, TH_FIN | TH_ACK), MOD_TRUNCATED);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(c.cap.ev[0].kind, OBS_HTTP_REQUEST);
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_TRUNCATED);
	CHECK_EQ(c.cap.ev[0].dir, 0);
	CHECK_STR(c.cap.ev[0].name, "drop.example");
	CHECK_STR(c.cap.ev[0].aux, "/drop/4f3c");
	CHECK(info_truncated(&c.cap.ev[0]));
	/* once: the FIN again, a RST */
	CHECK_EQ(feed_fl(&c, 0, NULL, 0, TH_FIN | TH_ACK), MOD_NOT_MINE);
	CHECK_EQ(feed_fl(&c, 1, NULL, 0, TH_RST), MOD_NOT_MINE);
	CHECK_EQ(c.cap.n, 1);
	/* the rest comes after all (the FIN was sent ahead of it): the whole
	 * head is reported too, and the next one may be reported unfinished */
	CHECK_EQ(feeds(&c, 0, "\r\nHost: late.example\r\n\r\nGET /2 HTTP/1.1\r\n"), MOD_MALFORMED);
	CHECK_EQ(c.cap.n, 2);
	CHECK_EQ(c.cap.ev[1].flags, OBS_F_MALFORMED); /* two Host fields */
	CHECK_STR(c.cap.ev[1].name, "drop.example");
	CHECK(!info_truncated(&c.cap.ev[1]));
	CHECK_EQ(feed_fl(&c, 1, NULL, 0, TH_RST | TH_ACK), MOD_TRUNCATED);
	CHECK_EQ(c.cap.n, 3);
	CHECK_STR(c.cap.ev[2].aux, "/2");
	CHECK_EQ(c.cap.ev[2].dir, 0); /* the server's RST: the client's event */
	conn_close(&c);

	/* the last bytes on the FIN: whole, one event; unfinished, truncated */
	conn_open(&c, 16384);
	CHECK_EQ(feed_fl(&c, 0, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 27, TH_FIN | TH_ACK), MOD_OK);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(c.cap.ev[0].flags, 0);
	conn_close(&c);
	conn_open(&c, 16384);
	CHECK_EQ(feed_fl(&c, 0, "GET / HTTP/1.1\r\nHost: a\r\n", 25, TH_FIN | TH_ACK), MOD_TRUNCATED);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_TRUNCATED);
	conn_close(&c);

	/* the server's FIN is not the client's end; a request line of a
	 * known method without its end is read as it stands, and so is
	 * HTTP/0.9's form (no version) */
	static const struct {
		const char *sent, *uri;
	} open_line[] = {
		{"GET /data-7f2c", "/data-7f2c"},
		{"GET /x\r\nHost: a\r\n", "/x"},
		{"POST /up/1 HTTP/1.", "/up/1"},
	};
	for (size_t i = 0; i < sizeof(open_line) / sizeof(open_line[0]); i++) {
		conn_open(&c, 16384);
		CHECK_EQ(feeds(&c, 0, open_line[i].sent), MOD_OK);
		CHECK_EQ(feed_fl(&c, 1, NULL, 0, TH_FIN | TH_ACK), MOD_NOT_MINE);
		CHECK_EQ(c.cap.n, 0);
		CHECK_EQ(feed_fl(&c, 0, NULL, 0, TH_FIN | TH_ACK), MOD_TRUNCATED);
		CHECK_EQ(c.cap.n, 1);
		CHECK_STR(c.cap.ev[0].aux, open_line[i].uri);
		CHECK(c.cap.ev[0].flags & OBS_F_TRUNCATED);
		CHECK(info_truncated(&c.cap.ev[0]));
		conn_close(&c);
	}
	/* ... and what the FIN finds that is no request: the events before
	 * it, nothing new (a whole head; the bytes after a body longer than
	 * its Content-Length, with no known method; an unknown token without
	 * a version) */
	static const struct {
		const char *sent;
		int events;
	} none[] = {
		{"GET / HTTP/1.1\r\n\r\n", 1},
		{"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcPUBLIC /x\n", 1},
		{"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcPUBLIC /x", 1},
	};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		conn_open(&c, 16384);
		CHECK_EQ(feeds(&c, 0, none[i].sent), MOD_OK);
		CHECK_EQ(feed_fl(&c, 0, NULL, 0, TH_FIN | TH_ACK), MOD_NOT_MINE);
		CHECK_EQ(c.cap.n, none[i].events);
		conn_close(&c);
	}

	/* a head read a line at a time (over HTTP_HEAD_HOLD), then the FIN */
	conn_open(&c, 16384);
	static char big[9000];
	int k = snprintf(big, sizeof(big), "POST /up HTTP/1.1\r\nHost: long.example\r\nCookie: ");
	memset(big + k, 'k', 8500 - (size_t)k);
	memcpy(big + 8500, "\r\nX-A: 1\r\n", 10);
	CHECK_EQ(feed(&c, 0, big, 8510), MOD_OK);
	CHECK_EQ(c.cap.n, 0);
	CHECK_EQ(feed_fl(&c, 1, NULL, 0, TH_RST), MOD_TRUNCATED);
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(c.cap.ev[0].name, "long.example");
	CHECK_STR(c.cap.ev[0].aux, "/up");
	CHECK(info_truncated(&c.cap.ev[0]));
	conn_close(&c);

	/* the flow ends (expiry, eviction, the end of the capture) with a head
	 * open: on_flow_left reports it, once, as the client's */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "GET /open HTTP/1.1\r\nHost: open.example\r\n"), MOD_OK);
	struct pkt q;
	memset(&q, 0, sizeof(q));
	q.proto = IPPROTO_TCP;
	q.flow = &c.f;
	CHECK_EQ(http_module.on_flow_left(c.state, &c.f, &q, &c.cap.emit), MOD_TRUNCATED);
	CHECK_EQ(http_module.on_flow_left(c.state, &c.f, &q, &c.cap.emit), MOD_NOT_MINE);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(c.cap.ev[0].dir, 0);
	CHECK_STR(c.cap.ev[0].name, "open.example");
	CHECK(info_truncated(&c.cap.ev[0]));
	conn_close(&c);
}

/* The same for a response head (close_response): the server's FIN or a
 * RST from either end, or the flow's end; the request stays unanswered. */
static void test_close_response(void)
{
	struct conn c;
	static const char req[] = "GET /latest/meta-data/iam/security-credentials/ HTTP/1.1\r\n"
				  "Host: 169.254.169.254\r\n\r\n";

	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, req), MOD_OK);
	CHECK_EQ(feeds(&c, 1, "HTTP/1.1 200 OK\r\nServer: EC2ws\r\nX-D: 1"), MOD_OK);
	CHECK_EQ(c.cap.n, 1);
	/* the client's FIN is not the server's end */
	CHECK_EQ(feed_fl(&c, 0, NULL, 0, TH_FIN | TH_ACK), MOD_NOT_MINE);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(feed_fl(&c, 1, NULL, 0, TH_FIN | TH_ACK), MOD_TRUNCATED);
	CHECK_EQ(c.cap.n, 2);
	struct ev *e = &c.cap.ev[1];
	CHECK_EQ(e->kind, OBS_HTTP_RESPONSE);
	CHECK_EQ(e->flags, OBS_F_TRUNCATED);
	CHECK_EQ(e->dir, 1);
	CHECK_EQ(e->type, 200);
	CHECK_STR(e->name, "169.254.169.254");
	CHECK_STR(EVF(e, RS_RMETHOD), "GET");
	CHECK_STR(EVF(e, RS_SERVER), "EC2ws");
	CHECK_STR(EVF(e, RS_TRUNC), "1");
	CHECK(info_truncated(e));
	/* once */
	CHECK_EQ(feed_fl(&c, 1, NULL, 0, TH_FIN | TH_ACK), MOD_NOT_MINE);
	CHECK_EQ(feed_fl(&c, 0, NULL, 0, TH_RST), MOD_NOT_MINE);
	CHECK_EQ(c.cap.n, 2);
	/* the rest comes after all: the whole head, paired with the same
	 * request, then a second response head, cut by the client's RST */
	CHECK_EQ(feeds(&c, 1, "\r\nContent-Length: 0\r\n\r\nHTTP/1.1 404 Not Found\r\n"), MOD_OK);
	CHECK_EQ(c.cap.n, 3);
	CHECK_EQ(c.cap.ev[2].type, 200);
	CHECK_EQ(c.cap.ev[2].flags, 0);
	CHECK_STR(EVF(&c.cap.ev[2], RS_RMETHOD), "GET");
	CHECK(!info_truncated(&c.cap.ev[2]));
	CHECK_EQ(feed_fl(&c, 0, NULL, 0, TH_RST | TH_ACK), MOD_TRUNCATED);
	CHECK_EQ(c.cap.n, 4);
	CHECK_EQ(c.cap.ev[3].type, 404);
	CHECK_EQ(c.cap.ev[3].dir, 1); /* the client's RST: the server's event */
	CHECK_STR(EVF(&c.cap.ev[3], RS_RMETHOD), ""); /* no request left */
	conn_close(&c);

	/* a status line without its end, as it stands; bytes that are none */
	static const struct {
		const char *sent;
		int status; /* 0: no event */
	} open_line[] = {
		{"HTTP/1.1 403 Forbidden", 403},
		{"HTTP/1.0 302", 302},
		{"\r\nHTTP/1.1 200 O", 200},
		{"HTTP/1.1 2", 0},
		{"HTTP/1.1 099 X", 0},
		{"SSH-2.0-OpenSSH_9.2", 0},
		{"HTTP/1.1 200 OK\r\nX: 1\r\n\r\n", 0}, /* whole: its own event */
	};
	for (size_t i = 0; i < sizeof(open_line) / sizeof(open_line[0]); i++) {
		conn_open(&c, 16384);
		CHECK_EQ(feeds(&c, 0, "GET /x HTTP/1.1\r\nHost: a\r\n\r\n"), MOD_OK);
		feeds(&c, 1, open_line[i].sent);
		size_t before = c.cap.n;
		CHECK_EQ(feed_fl(&c, 1, NULL, 0, TH_RST),
			 open_line[i].status ? MOD_TRUNCATED : MOD_NOT_MINE);
		CHECK_EQ(c.cap.n, before + (open_line[i].status != 0));
		if (open_line[i].status) {
			CHECK_EQ(c.cap.ev[c.cap.n - 1].type, open_line[i].status);
			CHECK(info_truncated(&c.cap.ev[c.cap.n - 1]));
		}
		conn_close(&c);
	}

	/* a head read a line at a time (over HTTP_HEAD_HOLD), then the FIN */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "GET /big HTTP/1.1\r\nHost: long.example\r\n\r\n"), MOD_OK);
	static char big[9000];
	int k = snprintf(big, sizeof(big), "HTTP/1.1 200 OK\r\nServer: s1\r\nSet-Cookie: ");
	memset(big + k, 'k', 8500 - (size_t)k);
	memcpy(big + 8500, "\r\nX-A: 1\r\n", 10);
	CHECK_EQ(feed(&c, 1, big, 8510), MOD_OK);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(feed_fl(&c, 1, NULL, 0, TH_FIN), MOD_TRUNCATED);
	CHECK_EQ(c.cap.n, 2);
	CHECK_EQ(c.cap.ev[1].type, 200);
	CHECK_STR(EVF(&c.cap.ev[1], RS_SERVER), "s1");
	CHECK_STR(EVF(&c.cap.ev[1], RS_RHOST), "long.example");
	CHECK(info_truncated(&c.cap.ev[1]));
	conn_close(&c);

	/* both heads open when the flow ends: two events, the client's first */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\n"), MOD_OK);
	CHECK_EQ(feeds(&c, 1, "HTTP/1.1 301 Moved\r\nLocation: /c\r\n"), MOD_OK);
	CHECK_EQ(c.cap.n, 1);
	struct pkt q;
	memset(&q, 0, sizeof(q));
	q.proto = IPPROTO_TCP;
	q.flow = &c.f;
	CHECK_EQ(http_module.on_flow_left(c.state, &c.f, &q, &c.cap.emit), MOD_TRUNCATED);
	CHECK_EQ(http_module.on_flow_left(c.state, &c.f, &q, &c.cap.emit), MOD_NOT_MINE);
	CHECK_EQ(c.cap.n, 3);
	CHECK_EQ(c.cap.ev[1].kind, OBS_HTTP_REQUEST);
	CHECK_STR(c.cap.ev[1].aux, "/b");
	CHECK_EQ(c.cap.ev[2].kind, OBS_HTTP_RESPONSE);
	CHECK_EQ(c.cap.ev[2].dir, 1);
	CHECK_EQ(c.cap.ev[2].type, 301);
	CHECK_STR(EVF(&c.cap.ev[2], RS_LOCATION), "/c");
	CHECK_STR(EVF(&c.cap.ev[2], RS_RURI), "/a");
	conn_close(&c);
}

static void test_event(void)
{
	struct conn c;

	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, curl_req), MOD_OK);
	CHECK_EQ(c.cap.n, 1);
	struct ev *e = &c.cap.ev[0];
	CHECK_EQ(e->kind, OBS_HTTP_REQUEST);
	CHECK_STR(e->name, "169.254.169.254");
	CHECK_STR(e->aux, "/latest/meta-data/");
	CHECK_EQ(e->type, 0);
	CHECK_EQ(e->size, strlen(curl_req));
	CHECK_EQ(e->flags, 0);
	CHECK_STR(EVF(e, RQ_UA), "curl/7.88.1");

	CHECK_EQ(feeds(&c, 1, "HTTP/1.1 200 OK\r\nServer: EC2ws\r\nContent-Length: 4\r\n\r\nami-"),
		 MOD_OK);
	CHECK_EQ(c.cap.n, 2);
	e = &c.cap.ev[1];
	CHECK_EQ(e->kind, OBS_HTTP_RESPONSE);
	CHECK_EQ(e->type, 200);
	CHECK_STR(e->name, "169.254.169.254");
	CHECK_STR(e->aux, "/latest/meta-data/");
	CHECK_STR(EVF(e, RS_RMETHOD), "GET");
	CHECK_STR(EVF(e, RS_SERVER), "EC2ws");
	CHECK_EQ(c.f.st[1].consumed, c.f.st[1].len);
	conn_close(&c);
}

/* The request split into two segments at every byte, and fed byte by byte:
 * always one event with the same fields. */
static void test_split(void)
{
	static const char req[] =
		"GET /computeMetadata/v1/instance/ HTTP/1.1\r\n"
		"Host: metadata.google.internal\r\n"
		"Metadata-Flavor: Google\r\n"
		"\r\n";
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
	size_t n = strlen(req), m = strlen(resp);
	int bad = 0;

	for (size_t k = 0; k <= n; k++) {
		struct conn c;
		conn_open(&c, 16384);
		if (k)
			feed(&c, 0, req, k);
		if (k < n)
			feed(&c, 0, req + k, n - k);
		if (c.cap.n != 1 || strcmp(c.cap.ev[0].name, "metadata.google.internal") ||
		    strcmp(EVF(&c.cap.ev[0], RQ_FLAVOR), "1") ||
		    strcmp(c.cap.ev[0].aux, "/computeMetadata/v1/instance/") ||
		    c.cap.ev[0].flags)
			bad++;
		/* and the response, split at every byte too */
		size_t j = k % (m + 1);
		if (j)
			feed(&c, 1, resp, j);
		if (j < m)
			feed(&c, 1, resp + j, m - j);
		if (c.cap.n != 2 || c.cap.ev[1].type != 200 ||
		    strcmp(c.cap.ev[1].name, "metadata.google.internal"))
			bad++;
		conn_close(&c);
	}
	CHECK_EQ(bad, 0);

	struct conn c;
	conn_open(&c, 16384);
	for (size_t k = 0; k < n; k++)
		feed(&c, 0, req + k, 1);
	for (size_t k = 0; k < m; k++)
		feed(&c, 1, resp + k, 1);
	CHECK_EQ(c.cap.n, 2);
	CHECK_STR(c.cap.ev[0].name, "metadata.google.internal");
	CHECK_EQ(c.cap.ev[1].type, 200);
	CHECK_EQ(c.f.st[0].slid + c.f.st[0].consumed, n);
	CHECK_EQ(c.f.st[1].slid + c.f.st[1].consumed, m);
	conn_close(&c);
}

static void test_pipeline(void)
{
	struct conn c;

	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0,
		       "GET /a HTTP/1.1\r\nHost: one\r\n\r\n"
		       "POST /b HTTP/1.1\r\nHost: two\r\nContent-Length: 5\r\n\r\nhello"
		       "HEAD /c HTTP/1.1\r\nHost: three\r\n\r\n"),
		 MOD_OK);
	CHECK_EQ(c.cap.n, 3);
	CHECK_STR(c.cap.ev[0].aux, "/a");
	CHECK_STR(c.cap.ev[1].aux, "/b");
	CHECK_STR(EVF(&c.cap.ev[1], RQ_CL), "5");
	CHECK_STR(c.cap.ev[2].aux, "/c");
	CHECK_STR(c.cap.ev[2].name, "three");
	CHECK_EQ(c.f.st[0].consumed, c.f.st[0].len);
	/* responses in order; the HEAD response has a Content-Length but no body */
	CHECK_EQ(feeds(&c, 1,
		       "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
		       "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"
		       "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
		       "HTTP/1.1 408 Request Timeout\r\n\r\n"),
		 MOD_OK);
	CHECK_EQ(c.cap.n, 7);
	CHECK_STR(c.cap.ev[3].name, "one");
	CHECK_STR(c.cap.ev[4].name, "two");
	CHECK_STR(EVF(&c.cap.ev[4], RS_RMETHOD), "POST");
	CHECK_STR(c.cap.ev[5].name, "three");
	CHECK_STR(EVF(&c.cap.ev[5], RS_RMETHOD), "HEAD");
	CHECK_EQ(c.cap.ev[6].type, 408);
	CHECK_STR(c.cap.ev[6].name, "");            /* nothing left to pair with */
	CHECK_STR(EVF(&c.cap.ev[6], RS_RMETHOD), "");
	conn_close(&c);

	/* more requests in flight than remembered: the rest go unpaired */
	conn_open(&c, 16384);
	for (int i = 0; i < 20; i++) {
		char r[64];
		snprintf(r, sizeof(r), "GET /%d HTTP/1.1\r\nHost: h%d\r\n\r\n", i, i);
		feeds(&c, 0, r);
	}
	CHECK_EQ(c.cap.n, 20);
	for (int i = 0; i < 20; i++)
		feeds(&c, 1, "HTTP/1.1 204 No Content\r\n\r\n");
	CHECK_EQ(c.cap.n, 40);
	int paired = 0, wrong = 0;
	for (int i = 0; i < 20; i++) {
		char want[16];
		snprintf(want, sizeof(want), "h%d", i);
		if (c.cap.ev[20 + i].name[0]) {
			paired++;
			wrong += strcmp(c.cap.ev[20 + i].name, want) != 0;
		}
	}
	CHECK_EQ(paired, HTTP_PIPELINE_MAX);
	CHECK_EQ(wrong, 0);
	conn_close(&c);
}

/* ---- pending requests: their storage and the module's budget --------------- */

static uint64_t own_counter(const void *state, const char *name)
{
	return module_counter(&http_module, state, name);
}

/*
 * A flow holds pending storage only while requests wait: a request
 * answered gives its bytes back, a flow with one request waiting holds a
 * few dozen bytes (not a 13 KiB table from its claim), and requests of
 * every size up to HTTP_PIPELINE_MAX, pushed as the storage grows and
 * answered as it shrinks, with interim responses between, pair as before.
 */
static void test_pending_storage(void)
{
	struct conn c;
	size_t one, last = 0;
	char r[600];

	conn_open(&c, 16384);
	CHECK_EQ(http_pending_bytes(c.state), 0);
	feeds(&c, 0, "GET /x HTTP/1.1\r\nHost: a.example\r\n\r\n");
	one = http_pending_bytes(c.state);
	printf("one pending request: %zu bytes\n", one);
	CHECK(one > 0);
	CHECK(one <= 128);
	feeds(&c, 1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	CHECK_EQ(c.cap.n, 2);
	CHECK_STR(c.cap.ev[1].name, "a.example");
	CHECK_STR(c.cap.ev[1].aux, "/x");
	CHECK_EQ(http_pending_bytes(c.state), 0); /* answered: nothing held */

	/* HTTP_PIPELINE_MAX requests of growing size, then two more (not
	 * remembered: the FIFO is full) */
	for (int i = 0; i < HTTP_PIPELINE_MAX + 2; i++) {
		int k = snprintf(r, sizeof(r), "GET /%d/", i);
		for (int j = 0; j < 30 * i && k < 500; j++)
			r[k++] = 'u';
		snprintf(r + k, sizeof(r) - (size_t)k, " HTTP/1.1\r\nHost: h%d\r\n\r\n", i);
		feeds(&c, 0, r);
		size_t now = http_pending_bytes(c.state);
		CHECK(now >= last);
		last = now;
	}
	printf("%d pending requests: %zu bytes\n", HTTP_PIPELINE_MAX, last);
	CHECK(last < 16 * 1024);
	CHECK_EQ(c.cap.n, 2 + HTTP_PIPELINE_MAX + 2);
	int paired = 0, wrong = 0, base = c.cap.n;
	for (int i = 0; i < HTTP_PIPELINE_MAX + 2; i++) {
		if (i % 4 == 1)
			feeds(&c, 1, "HTTP/1.1 100 Continue\r\n\r\n");
		feeds(&c, 1, "HTTP/1.1 204 No Content\r\n\r\n");
		CHECK(http_pending_bytes(c.state) <= last);
	}
	for (int i = 0, e = base; i < HTTP_PIPELINE_MAX + 2; i++, e++) {
		char want[16], wuri[600];
		int k = snprintf(wuri, sizeof(wuri), "/%d/", i);
		for (int j = 0; j < 30 * i && k < 500; j++)
			wuri[k++] = 'u';
		wuri[k] = '\0';
		snprintf(want, sizeof(want), "h%d", i);
		if (i % 4 == 1) {
			/* the interim response pairs without using the request up */
			CHECK_EQ(c.cap.ev[e].type, 100);
			CHECK_STR(c.cap.ev[e].name, i < HTTP_PIPELINE_MAX ? want : "");
			e++;
		}
		CHECK_EQ(c.cap.ev[e].type, 204);
		if (c.cap.ev[e].name[0]) {
			paired++;
			wrong += strcmp(c.cap.ev[e].name, want) != 0 ||
				 strcmp(c.cap.ev[e].aux, wuri) != 0;
		}
	}
	CHECK_EQ(paired, HTTP_PIPELINE_MAX);
	CHECK_EQ(wrong, 0);
	CHECK_EQ(http_pending_bytes(c.state), 0);

	/* a flow that ends with requests waiting gives them back */
	for (int i = 0; i < 3; i++)
		feeds(&c, 0, "GET /w HTTP/1.1\r\nHost: w\r\n\r\n");
	CHECK(http_pending_bytes(c.state) > 0);
	http_module.on_flow_end(c.state, &c.f);
	CHECK_EQ(http_pending_bytes(c.state), 0);
	CHECK_EQ(own_counter(c.state, "pending_refused"), 0);
	conn_close(&c);
}

/*
 * A HEAD request the pending store did not take (more than
 * HTTP_PIPELINE_MAX waiting, or the module's budget full: review19 R19-6)
 * still frames its response: no body, though it says Content-Length, so
 * the response after it is read.
 */
static void test_head_unremembered(void)
{
	struct conn c;
	char r[64];

	conn_open(&c, 16384);
	for (int i = 0; i < HTTP_PIPELINE_MAX + 2; i++) {
		snprintf(r, sizeof(r), "%s /%d HTTP/1.1\r\nHost: h\r\n\r\n",
			 i == HTTP_PIPELINE_MAX ? "HEAD" : "GET", i);
		feeds(&c, 0, r);
	}
	CHECK_EQ(c.cap.n, HTTP_PIPELINE_MAX + 2);
	for (int i = 0; i < HTTP_PIPELINE_MAX; i++)
		feeds(&c, 1, "HTTP/1.1 204 No Content\r\n\r\n");
	/* the answer to the HEAD, then to the last GET */
	feeds(&c, 1, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
	feeds(&c, 1, "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
	CHECK_EQ(c.cap.n, 2 * (HTTP_PIPELINE_MAX + 2));
	CHECK_EQ(c.cap.ev[c.cap.n - 1].type, 201);
	/* and a body after a GET's response is still skipped */
	feeds(&c, 0, "GET /after HTTP/1.1\r\nHost: h\r\n\r\n");
	feeds(&c, 1, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/");
	feeds(&c, 1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	CHECK_EQ(c.cap.n, 2 * (HTTP_PIPELINE_MAX + 2) + 3);
	conn_close(&c);
}

/* Many flows over one state (many_flows.h). */
static int many_feed(void *state, struct flow *f, struct tally *t, int dir, const char *d)
{
	return many_feed_bytes(&http_module, state, f, t, dir, (const uint8_t *)d, strlen(d));
}

/*
 * Thousands of flows, each with HTTP_PIPELINE_MAX requests waiting whose
 * host and target fill the pair's bounds: the bytes every flow holds stay
 * under HTTP_PENDING_BUDGET (before the budget, 3000 such flows held 39
 * MB, and max_flows of them 3.4 GiB), the requests refused are counted
 * (pending_refused), their responses go unpaired and every other response
 * pairs right; answered or ended, the flows give every byte back, and
 * then requests are remembered again.
 */
static void test_pending_budget(void)
{
	struct flow *fl = calloc(MANY + 1, sizeof(*fl));
	struct flow_stream(*st)[2] = calloc(MANY + 1, sizeof(*st));
	struct tally t = {.emit = {.obs = tally_obs}};
	static char req[2048], host[400], uri[700];
	size_t peak = 0;
	void *state = NULL;

	CHECK(fl && st);
	if (!fl || !st)
		goto out;
	CHECK_EQ(http_module.init(NULL, &state), 0);
	uri[0] = '/';
	memset(uri + 1, 'u', 600);
	uri[601] = '\0';
	for (int i = 0; i <= MANY; i++) {
		fl[i].proto = IPPROTO_TCP;
		fl[i].ipv = 4;
		fl[i].st = st[i];
	}
	for (int i = 0; i < MANY; i++) {
		for (int j = 0; j < HTTP_PIPELINE_MAX; j++) {
			many_host(host, sizeof(host), i, j);
			snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", uri, host);
			CHECK_EQ(many_feed(state, &fl[i], &t, 0, req), MOD_OK);
		}
		if (http_pending_bytes(state) > peak)
			peak = http_pending_bytes(state);
	}
	uint64_t refused = own_counter(state, "pending_refused");
	printf("%d flows x %d requests: %zu bytes held at most, %llu refused\n", MANY,
	       HTTP_PIPELINE_MAX, peak, (unsigned long long)refused);
	CHECK_EQ(t.req, (uint64_t)MANY * HTTP_PIPELINE_MAX);
	CHECK(peak <= HTTP_PENDING_BUDGET);
	CHECK(peak > HTTP_PENDING_BUDGET / 2);
	CHECK_EQ(own_counter(state, "pending_peak"), peak);
	CHECK(refused > 0);
	CHECK(refused < (uint64_t)MANY * HTTP_PIPELINE_MAX);

	/* the first half answered: what was remembered pairs, the rest not */
	uint64_t half = 0;
	for (int i = 0; i < MANY / 2; i++) {
		for (int j = 0; j < HTTP_PIPELINE_MAX; j++) {
			many_host(host, sizeof(host), i, j);
			host[HTTP_PAIR_HOST_MAX - 1] = '\0';
			t.want = host;
			many_feed(state, &fl[i], &t, 1, "HTTP/1.1 204 No Content\r\n\r\n");
		}
		half += HTTP_PIPELINE_MAX;
	}
	CHECK_EQ(t.resp, half);
	CHECK_EQ(t.wrong, 0);
	CHECK(t.paired > 0);
	CHECK(http_pending_bytes(state) < peak);

	/* the budget has room again: a new flow's request is remembered */
	t.paired = 0;
	CHECK_EQ(many_feed(state, &fl[MANY], &t, 0, "GET /again HTTP/1.1\r\nHost: again\r\n\r\n"),
		 MOD_OK);
	t.want = "again";
	many_feed(state, &fl[MANY], &t, 1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	CHECK_EQ(t.paired, 1);
	CHECK_EQ(own_counter(state, "pending_refused"), refused);

	/* the other half end with their requests waiting (the core's
	 * on_flow_end, then the flow table's free) */
	for (int i = 0; i <= MANY; i++) {
		http_module.on_flow_end(state, &fl[i]);
		free(fl[i].app_state);
		fl[i].app_state = NULL;
	}
	CHECK_EQ(http_pending_bytes(state), 0);
	CHECK_EQ(own_counter(state, "pending_bytes"), 0);
	http_module.fini(state);
out:
	free(fl);
	free(st);
}

static void test_bodies(void)
{
	static const char chunked[] =
		"POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
		"5;ext=1\r\nhello\r\n"
		"1A\r\nabcdefghijklmnopqrstuvwxyz\r\n"
		"0\r\nX-Trailer: t\r\n\r\n"
		"GET /next HTTP/1.1\r\nHost: b\r\n\r\n";
	size_t n = strlen(chunked);
	int bad = 0;

	for (size_t k = 0; k <= n; k++) {
		struct conn c;
		conn_open(&c, 16384);
		if (k)
			feed(&c, 0, chunked, k);
		if (k < n)
			feed(&c, 0, chunked + k, n - k);
		if (c.cap.n != 2 || strcmp(c.cap.ev[1].aux, "/next") || c.cap.ev[0].flags ||
		    c.cap.ev[1].flags || c.f.st[0].slid + c.f.st[0].consumed != n)
			bad++;
		conn_close(&c);
	}
	CHECK_EQ(bad, 0);

	/* a Content-Length body arriving in pieces, then the next request */
	struct conn c;
	conn_open(&c, 16384);
	feeds(&c, 0, "PUT /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123");
	feeds(&c, 0, "456");
	CHECK_EQ(c.cap.n, 1);
	feeds(&c, 0, "789GET /y HTTP/1.1\r\n\r\n");
	CHECK_EQ(c.cap.n, 2);
	CHECK_STR(c.cap.ev[1].aux, "/y");
	conn_close(&c);

	/* framing as nginx reads it: leading zeros in a chunk size or a
	 * Content-Length count for nothing, and a chunk size followed by
	 * whitespace has the rest of its line skipped; the request after the
	 * body is read */
	static const char *const framed[] = {
		"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		"00000000000000005\r\nhello\r\n0000000000000000000\r\n\r\n",
		"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		"5 junk\r\nhello\r\n5\t;x\r\nhello\r\n0 \r\n\r\n",
		"POST /x HTTP/1.1\r\nContent-Length: 0000000000000000000005\r\n\r\nhello",
		"POST /x HTTP/1.1\r\nContent-Length: 00000000000000000000\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(framed) / sizeof(framed[0]); i++) {
		conn_open(&c, 16384);
		CHECK_EQ(feeds(&c, 0, framed[i]), MOD_OK);
		CHECK_EQ(feeds(&c, 0, "GET http://evil.example/ HTTP/1.1\r\n\r\n"), MOD_OK);
		CHECK_EQ(c.cap.n, 2);
		CHECK_EQ(c.cap.ev[0].flags, 0);
		CHECK_STR(c.cap.ev[1].aux, "http://evil.example/");
		conn_close(&c);
	}
	CHECK_EQ(http_parse_head((const uint8_t *)framed[2], strlen(framed[2]) - 5, 0, &H),
		 MOD_OK);
	CHECK_EQ(H.content_length, 5);
	/* past 18 significant digits a length is bad, past 15 a chunk size */
	static const char cl19[] = "GET / HTTP/1.1\r\nContent-Length: 01000000000000000000\r\n\r\n";
	CHECK_EQ(http_parse_head((const uint8_t *)cl19, strlen(cl19), 0, &H), MOD_MALFORMED);
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
			      "01000000000000000\r\n"),
		 MOD_MALFORMED);
	conn_close(&c);

	/* broken chunked framing: malformed, the direction stops */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
			      "GET /y HTTP/1.1\r\n\r\n"),
		 MOD_MALFORMED);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(feeds(&c, 0, "GET /z HTTP/1.1\r\n\r\n"), MOD_OK);
	CHECK_EQ(c.cap.n, 1);
	conn_close(&c);

	/* a chunked response, 204 and 304 without bodies, then a body to the close */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\nGET /3 HTTP/1.1\r\n\r\n"
		     "GET /4 HTTP/1.1\r\n\r\nGET /5 HTTP/1.1\r\n\r\n");
	CHECK_EQ(c.cap.n, 5);
	feeds(&c, 1, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
		     "HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n"
		     "HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n"
		     "HTTP/1.0 200 OK\r\n\r\nHTTP/1.1 200 looks like a head but is body\r\n\r\n");
	CHECK_EQ(c.cap.n, 9);
	CHECK_STR(c.cap.ev[5].aux, "/1");
	CHECK_STR(c.cap.ev[6].aux, "/2");
	CHECK_EQ(c.cap.ev[7].type, 304);
	CHECK_STR(c.cap.ev[8].aux, "/4");
	CHECK_EQ(feeds(&c, 1, "HTTP/1.1 200 OK\r\n\r\n"), MOD_OK);
	CHECK_EQ(c.cap.n, 9);
	conn_close(&c);
}

static void test_interim_upgrade_connect(void)
{
	struct conn c;

	/* 100 Continue pairs without using the request up */
	conn_open(&c, 16384);
	feeds(&c, 0, "POST /p HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
	feeds(&c, 1, "HTTP/1.1 100 Continue\r\n\r\n");
	feeds(&c, 0, "hi");
	feeds(&c, 1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	CHECK_EQ(c.cap.n, 3);
	CHECK_EQ(c.cap.ev[1].type, 100);
	CHECK_STR(c.cap.ev[1].aux, "/p");
	CHECK_EQ(c.cap.ev[2].type, 200);
	CHECK_STR(c.cap.ev[2].aux, "/p");
	conn_close(&c);

	/* WebSocket: the client waits for 101, then frames are not HTTP */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /chat HTTP/1.1\r\nHost: ws.example\r\nUpgrade: websocket\r\n"
		     "Connection: Upgrade\r\nSec-WebSocket-Key: x\r\n\r\n");
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(EVF(&c.cap.ev[0], RQ_UPGRADE), "websocket");
	CHECK_STR(EVF(&c.cap.ev[0], RQ_CONN), "Upgrade");
	feed(&c, 0, "\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 11); /* before the 101 */
	CHECK_EQ(c.cap.n, 1);
	feeds(&c, 1, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		     "Connection: Upgrade\r\n\r\n\x81\x05hello");
	CHECK_EQ(c.cap.n, 2);
	CHECK_EQ(c.cap.ev[1].type, 101);
	CHECK_STR(EVF(&c.cap.ev[1], RS_UPGRADE), "websocket");
	CHECK_STR(c.cap.ev[1].aux, "/chat");
	CHECK_EQ(feed(&c, 0, "\x81\x80\x00\x00\x00\x00", 6), MOD_OK);
	CHECK_EQ(feed(&c, 1, "\x81\x02hi", 4), MOD_OK);
	CHECK_EQ(c.cap.n, 2);
	conn_close(&c);

	/* CONNECT refused by the proxy: the 403 is tied to it, then a retry */
	conn_open(&c, 16384);
	feeds(&c, 0, "CONNECT 169.254.169.254:80 HTTP/1.1\r\nHost: 169.254.169.254:80\r\n\r\n");
	feeds(&c, 1, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
	CHECK_EQ(c.cap.n, 2);
	CHECK_EQ(c.cap.ev[1].type, 403);
	CHECK_STR(c.cap.ev[1].aux, "169.254.169.254:80");
	CHECK_STR(c.cap.ev[1].name, "169.254.169.254:80");
	CHECK_STR(EVF(&c.cap.ev[1], RS_RMETHOD), "CONNECT");
	feeds(&c, 0, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
	CHECK_EQ(c.cap.n, 3);
	/* accepted: a tunnel; what follows is TLS, not HTTP: the flow is
	 * handed back (unclaimed, client cursor after the CONNECT head) so
	 * the TLS analyzer can claim it */
	feeds(&c, 1, "HTTP/1.1 200 Connection established\r\n\r\n");
	CHECK_EQ(c.cap.n, 4);
	CHECK_STR(c.cap.ev[3].aux, "example.com:443");
	CHECK_EQ(c.f.app, APP_NONE);
	CHECK(c.f.app_state == NULL);
	CHECK_EQ(c.f.st[0].consumed, c.f.st[0].len);
	CHECK_EQ(feed(&c, 0, "\x16\x03\x01\x00\x05hello", 10), MOD_NOT_MINE);
	CHECK_EQ(feed(&c, 1, "\x16\x03\x03\x00\x02hi", 7), MOD_NOT_MINE);
	CHECK_EQ(c.cap.n, 4);
	conn_close(&c);

	/* TLS sent right after the CONNECT head waits for the answer */
	conn_open(&c, 16384);
	feeds(&c, 0, "CONNECT a:443 HTTP/1.1\r\n\r\n\x16\x03\x01");
	CHECK_EQ(c.cap.n, 1);
	feeds(&c, 1, "HTTP/1.1 200 OK\r\n\r\n");
	CHECK_EQ(c.f.app, APP_NONE);
	CHECK_EQ(feed(&c, 0, "\x00\x05", 2), MOD_NOT_MINE);
	CHECK_EQ(c.cap.n, 2);
	conn_close(&c);
}

static void test_stream_bounds(void)
{
	struct conn c;

	/* binary after a request: malformed event, the direction stops */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "GET / HTTP/1.1\r\nHost: a\r\n\x01\x02: x\r\n\r\n"), MOD_MALFORMED);
	CHECK_EQ(c.cap.n, 1);
	CHECK(c.cap.ev[0].flags & OBS_F_MALFORMED);
	CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "control byte 0x01 at offset 25");
	CHECK_STR(EVF(&c.cap.ev[0], RQ_HOST), "a");
	CHECK_EQ(c.cap.ev[0].size, 26);
	CHECK_EQ(feeds(&c, 0, "GET /again HTTP/1.1\r\n\r\n"), MOD_OK);
	CHECK_EQ(c.cap.n, 1);
	/* its response still pairs */
	feeds(&c, 1, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
	CHECK_EQ(c.cap.n, 2);
	CHECK_STR(EVF(&c.cap.ev[1], RS_RMETHOD), "GET");
	conn_close(&c);

	/* a control byte in a field value (nginx and squid pass it on):
	 * flagged, the Host after it is read, and so is the next request */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "GET /x HTTP/1.1\r\nX-A: a\x01" "b\r\nHost: evil.example\r\n\r\n"
			      "GET http://evil2.example/ HTTP/1.1\r\nHost: evil2.example\r\n\r\n"),
		 MOD_MALFORMED);
	CHECK_EQ(c.cap.n, 2);
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
	CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "control byte 0x01 at offset 23");
	CHECK_STR(c.cap.ev[0].name, "evil.example");
	CHECK_STR(c.cap.ev[1].name, "evil2.example");
	CHECK_EQ(c.cap.ev[1].flags, 0);
	conn_close(&c);

	/* a soft problem: flagged, and the next request is parsed */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "GET /1 HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\nGET /2 HTTP/1.1\r\n\r\n"),
		 MOD_MALFORMED);
	CHECK_EQ(c.cap.n, 2);
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
	CHECK_EQ(c.cap.ev[1].flags, 0);
	conn_close(&c);

	/* a field line that never ends: skipped past 8 KiB (it never fills
	 * the window), reported once the head passes HTTP_HEAD_FAR */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /big HTTP/1.1\r\nX-Pad: ");
	static char pad[1024];
	memset(pad, 'p', sizeof(pad));
	int r = MOD_OK, fed = 0;
	for (int i = 0; i < 9000 && r == MOD_OK; i++, fed++)
		r = feed(&c, 0, pad, sizeof(pad));
	CHECK_EQ(r, MOD_MALFORMED);
	CHECK_EQ(fed, 8192); /* 26 + 8192 * 1024 bytes: past 8 MiB */
	CHECK_EQ(c.cap.ev[0].size, 26 + 8192 * 1024);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
	CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "field line longer than 8192 bytes");
	CHECK_STR(c.cap.ev[0].aux, "/big");
	CHECK_EQ(c.f.st[0].overflow, 0);
	conn_close(&c);

	/* a 20 KB cookie line, then Host, then the next request: nginx with
	 * `large_client_header_buffers 4 32k` serves both (before, the line
	 * filled the window: Host lost and the direction ended) */
	static char cookie[20100];
	memcpy(cookie, "Cookie: c=", 10);
	memset(cookie + 10, 'z', 20000);
	memcpy(cookie + 20010, "\r\n", 3);
	for (size_t step = 1000; step <= 4000; step += 3000) {
		conn_open(&c, 16384);
		feeds(&c, 0, "GET /jwt HTTP/1.1\r\n");
		for (size_t k = 0; k < 20012; k += step)
			feed(&c, 0, cookie + k, 20012 - k < step ? 20012 - k : step);
		feeds(&c, 0, "Host: late.test\r\n\r\nGET /next HTTP/1.1\r\nHost: next.test\r\n\r\n");
		CHECK_EQ(c.cap.n, 2);
		CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
		CHECK_STR(c.cap.ev[0].name, "late.test");
		CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "field line longer than 8192 bytes");
		CHECK_STR(EVF(&c.cap.ev[0], RQ_CUT), "1");
		CHECK_EQ(c.cap.ev[0].size, 19 + 20012 + 17 + 2);
		CHECK_STR(c.cap.ev[1].name, "next.test");
		conn_close(&c);
	}

	/* a head that never ends, in lines: reported once it passes
	 * HTTP_HEAD_FAR (marked since it passed HTTP_HEAD_MAX); the flow's
	 * state does not grow with it */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /big HTTP/1.1\r\n");
	r = MOD_OK;
	fed = 0;
	for (int i = 0; i < 9000 && r == MOD_OK; i++, fed++) {
		memcpy(pad, "X-Pad: ", 7);
		memcpy(pad + sizeof(pad) - 2, "\r\n", 2);
		r = feed(&c, 0, pad, sizeof(pad));
		if (i == 100)
			CHECK(c.f.st[0].len - c.f.st[0].consumed < 2048);
	}
	CHECK_EQ(r, MOD_MALFORMED);
	CHECK_EQ(fed, 8192);
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "head longer than 65536 bytes");
	CHECK_STR(c.cap.ev[0].aux, "/big");
	CHECK_EQ(c.cap.ev[0].size, HTTP_HEAD_FAR);
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
	/* the rest of it is skipped to its empty line, and the next request
	 * read (nginx with big buffers, Go and Python serve such heads; before,
	 * the direction stopped and hid every request after) */
	CHECK_EQ(feeds(&c, 0, "X-More: 1\r\n\r\nGET /next HTTP/1.1\r\nHost: next.test\r\n\r\n"),
		 MOD_OK);
	CHECK_EQ(c.cap.n, 2);
	CHECK_STR(c.cap.ev[1].name, "next.test");
	conn_close(&c);

	/* ... with a body whose Content-Length came before the bound */
	conn_open(&c, 16384);
	feeds(&c, 0, "POST /big HTTP/1.1\r\nContent-Length: 4\r\n");
	for (int i = 0; i < 70; i++)
		feed(&c, 0, pad, sizeof(pad));
	feeds(&c, 0, "\r\nbodyGET /next HTTP/1.1\r\nHost: next.test\r\n\r\n");
	CHECK_EQ(c.cap.n, 2);
	CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "head longer than 65536 bytes");
	CHECK_STR(c.cap.ev[1].aux, "/next");
	conn_close(&c);

	/* the stream cap cuts a head: emitted as truncated */
	conn_open(&c, 64);
	CHECK_EQ(feeds(&c, 0, "GET /cut HTTP/1.1\r\nHost: example.org\r\n"
			      "User-Agent: a-very-long-agent/1.0\r\n\r\n"),
		 MOD_TRUNCATED);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_TRUNCATED);
	CHECK_STR(c.cap.ev[0].name, "example.org");
	CHECK_STR(c.cap.ev[0].aux, "/cut");
	conn_close(&c);

	/* the stream cap inside a body: the direction just stops */
	conn_open(&c, 64);
	CHECK_EQ(feeds(&c, 0, "POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\n"
			      "0123456789012345678901234567890"),
		 MOD_OK);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(feeds(&c, 0, "GET / HTTP/1.1\r\n\r\n"), MOD_OK);
	CHECK_EQ(c.cap.n, 1);
	conn_close(&c);

	/* a hole never filled: what was read is kept */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /gap HTTP/1.1\r\nHost: g\r\n");
	CHECK_EQ(c.cap.n, 0);
	c.f.st[0].gap = 1;
	CHECK_EQ(feeds(&c, 0, "X"), MOD_TRUNCATED);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_TRUNCATED);
	CHECK_STR(c.cap.ev[0].name, "g");
	conn_close(&c);

	/* a response that is not HTTP on a claimed flow */
	conn_open(&c, 16384);
	feeds(&c, 0, curl_req);
	CHECK_EQ(feeds(&c, 1, "SSH-2.0-OpenSSH\r\n"), MOD_MALFORMED);
	CHECK_EQ(c.cap.n, 2);
	CHECK_EQ(c.cap.ev[1].flags, OBS_F_MALFORMED);
	CHECK_EQ(c.cap.ev[1].type, 0);
	CHECK_STR(c.cap.ev[1].aux, "/latest/meta-data/");
	CHECK_STR(EVF(&c.cap.ev[1], RS_STATUS), "");
	conn_close(&c);
}

/* Feed n bytes in pieces of at most 1400, as segments would bring them. */
static void feed_segments(struct conn *c, int dir, const char *data, size_t n)
{
	for (size_t i = 0; i < n; i += 1400)
		feed(c, dir, data + i, n - i < 1400 ? n - i : 1400);
}

/*
 * A keep-alive connection far past the 16 KiB window: twelve requests with
 * 6,000-byte bodies, each answered with 9,000 bytes, a chunked upload of
 * 20 KB, then a request for the metadata endpoint. The analyzer slides the
 * window past what it parsed, so every head is read (before, nothing after
 * the first 16 KiB of a direction was: a probe behind a large body went
 * unseen) and the buffer never fills.
 */
static void test_keepalive_long(void)
{
	static char body[20000], req[512], chunk[8192];
	struct conn c;

	memset(body, 'b', sizeof(body));
	conn_open(&c, 16384);
	for (int i = 0; i < 12; i++) {
		int h = snprintf(req, sizeof(req), "POST /up/%d HTTP/1.1\r\nHost: up%d.example\r\n"
					      "Content-Length: 6000\r\n\r\n", i, i);
		feed(&c, 0, req, (size_t)h);
		feed_segments(&c, 0, body, 6000);
		h = snprintf(req, sizeof(req), "HTTP/1.1 200 OK\r\nContent-Length: 9000\r\n\r\n");
		feed(&c, 1, req, (size_t)h);
		feed_segments(&c, 1, body, 9000);
	}
	feeds(&c, 0, "POST /chunked HTTP/1.1\r\nHost: ch.example\r\n"
		     "Transfer-Encoding: chunked\r\n\r\n");
	for (int k = 0; k < 4; k++) {
		int h = snprintf(chunk, sizeof(chunk), "1388\r\n"); /* 5000 bytes */
		feed(&c, 0, chunk, (size_t)h);
		feed_segments(&c, 0, body, 5000);
		feeds(&c, 0, "\r\n");
	}
	feeds(&c, 0, "0\r\n\r\n");
	feeds(&c, 1, "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
	feeds(&c, 0, "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n"
		     "Host: 169.254.169.254\r\n\r\n");
	feeds(&c, 1, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nami-1");
	CHECK_EQ(c.cap.n, 2 * 14);
	CHECK_STR(c.cap.ev[22].aux, "/up/11");
	CHECK_EQ(c.cap.ev[23].type, 200);
	CHECK_STR(c.cap.ev[24].aux, "/chunked");
	CHECK_EQ(c.cap.ev[25].type, 201);
	CHECK_STR(c.cap.ev[26].name, "169.254.169.254");
	CHECK_STR(c.cap.ev[26].aux, "http://169.254.169.254/latest/meta-data/");
	CHECK_EQ(c.cap.ev[27].type, 200);
	CHECK_STR(c.cap.ev[27].name, "169.254.169.254"); /* paired with its request */
	CHECK_EQ(c.f.st[0].overflow, 0);
	CHECK_EQ(c.f.st[1].overflow, 0);
	CHECK(c.f.st[0].slid > 3 * 16384 && c.f.st[1].slid > 6 * 16384);
	CHECK_EQ(c.f.st[0].len, 0);
	conn_close(&c);
}

/*
 * A head of n bytes: the request line (or status line) start, then 1 KB
 * field lines of padding, then the tail fields, then the empty line.
 */
static size_t big_head(char *buf, size_t cap, const char *start, size_t n, const char *tail)
{
	size_t k = (size_t)snprintf(buf, cap, "%s", start);
	size_t t = strlen(tail) + 2;

	while (k + t < n) {
		size_t l = n - k - t < 1024 ? n - k - t : 1024;
		if (l < 16) { /* too short for a field line: grow the last one */
			memset(buf + k - 2, 'q', l);
			k += l;
			memcpy(buf + k - 2, "\r\n", 2);
			continue;
		}
		int w = snprintf(buf + k, cap - k, "X-Pad-%04zu: ", k % 10000);
		memset(buf + k + w, 'p', l - (size_t)w - 2);
		memcpy(buf + k + l - 2, "\r\n", 2);
		k += l;
	}
	memcpy(buf + k, tail, t - 2);
	memcpy(buf + k + t - 2, "\r\n", 2);
	return k + t;
}

/*
 * Heads longer than HTTP_HEAD_HOLD, up to HTTP_HEAD_MAX (nginx takes
 * 32 KiB, squid 64 KiB): read a line at a time past the 16 KiB window, so
 * a Host after 30 KB of cookies is seen and so is the request after it on
 * the same connection (before, a head over 8 KiB stopped the direction).
 */
static void test_long_heads(void)
{
	static char head[HTTP_HEAD_MAX + 4096];
	struct conn c;
	size_t n;
	static const size_t sizes[] = {HTTP_HEAD_HOLD - 1, HTTP_HEAD_HOLD + 1, 16383, 16384,
				       16385, 30000, 50000, HTTP_HEAD_MAX};
	static const size_t steps[] = {1400, 1, 333, 8191, 4000};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (size_t j = 0; j < sizeof(steps) / sizeof(steps[0]); j++) {
			size_t step = steps[j];
			if (step == 1 && sizes[i] > 20000)
				continue;
			n = big_head(head, sizeof(head), "GET /long HTTP/1.1\r\n", sizes[i],
				     "Cookie: c=1\r\nHost: evil.example\r\nContent-Length: 3\r\n");
			CHECK_EQ(n, sizes[i]);
			memcpy(head + n, "abc", 3);
			n += 3;
			n += (size_t)snprintf(head + n, sizeof(head) - n,
					      "GET /next HTTP/1.1\r\nHost: next.example\r\n\r\n");
			conn_open(&c, 16384);
			for (size_t k = 0; k < n; k += step)
				feed(&c, 0, head + k, n - k < step ? n - k : step);
			feeds(&c, 1, "HTTP/1.1 204 No Content\r\n\r\n");
			if (c.cap.n != 3)
				fprintf(stderr, "long head %zu in %zu-byte steps: %d events\n",
					sizes[i], step, c.cap.n);
			CHECK_EQ(c.cap.n, 3);
			CHECK_EQ(c.cap.ev[0].flags, 0);
			CHECK_STR(c.cap.ev[0].name, "evil.example");
			CHECK_STR(c.cap.ev[0].aux, "/long");
			CHECK_EQ(c.cap.ev[0].size, sizes[i]);
			CHECK_STR(EVF(&c.cap.ev[0], RQ_CL), "3");
			CHECK_STR(c.cap.ev[1].name, "next.example");
			CHECK_EQ(c.cap.ev[1].flags, 0);
			CHECK_EQ(c.cap.ev[2].type, 204);
			CHECK_STR(c.cap.ev[2].name, "evil.example"); /* paired */
			CHECK_EQ(c.f.st[0].overflow, 0);
			conn_close(&c);
		}
	}

	/* a long response head (a page of Set-Cookie), its body, the next */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /a HTTP/1.1\r\nHost: a.example\r\n\r\n"
		     "HEAD /b HTTP/1.1\r\nHost: b.example\r\n\r\n");
	n = big_head(head, sizeof(head), "HTTP/1.1 200 OK\r\n", 40000,
		     "Server: big\r\nContent-Length: 5\r\n");
	memcpy(head + n, "hello", 5);
	feed_segments(&c, 1, head, n + 5);
	feeds(&c, 1, "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n");
	CHECK_EQ(c.cap.n, 4);
	CHECK_EQ(c.cap.ev[2].type, 200);
	CHECK_EQ(c.cap.ev[2].size, 40000);
	CHECK_STR(EVF(&c.cap.ev[2], RS_SERVER), "big");
	CHECK_STR(c.cap.ev[2].name, "a.example");
	CHECK_STR(c.cap.ev[3].name, "b.example"); /* HEAD: no body */
	conn_close(&c);

	/* both directions long at once, interleaved */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /a HTTP/1.1\r\nHost: a.example\r\n\r\n");
	static char rq[40000];
	size_t m = big_head(rq, sizeof(rq), "GET /b HTTP/1.1\r\n", 30000, "Host: b.example\r\n");
	n = big_head(head, sizeof(head), "HTTP/1.1 200 OK\r\n", 30000, "Content-Length: 0\r\n");
	for (size_t k = 0; k < 30000; k += 1000) {
		feed(&c, 0, rq + k, 1000);
		feed(&c, 1, head + k, 1000);
	}
	CHECK_EQ(m + n, 60000);
	CHECK_EQ(c.cap.n, 3);
	CHECK_STR(c.cap.ev[1].name, "b.example");
	CHECK_EQ(c.cap.ev[2].type, 200);
	CHECK_STR(c.cap.ev[2].name, "a.example");
	conn_close(&c);

	/* a control byte past the window: its offset is the head's */
	conn_open(&c, 16384);
	n = big_head(head, sizeof(head), "GET /ctl HTTP/1.1\r\n", 20000, "Host: x\x01y\r\n");
	feed_segments(&c, 0, head, n);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
	CHECK_STR(c.cap.ev[0].name, "x\\x01y");
	char why[64];
	snprintf(why, sizeof(why), "control byte 0x01 at offset %zu", n - 6);
	CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), why);
	conn_close(&c);

	/* cut by capture loss inside: emitted truncated, with what was read */
	conn_open(&c, 16384);
	n = big_head(head, sizeof(head), "GET /lost HTTP/1.1\r\nHost: early.example\r\n",
		     30000, "Host: late.example\r\n");
	feed_segments(&c, 0, head, 20000);
	c.f.st[0].gap = 1;
	feeds(&c, 0, "");
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_TRUNCATED);
	CHECK_STR(c.cap.ev[0].name, "early.example");
	conn_close(&c);

	/* the parser alone, a line at a time */
	n = big_head(head, sizeof(head), "GET /p HTTP/1.1\r\n", 30000, "Host: p.example\r\n");
	CHECK_EQ(http_parse_head((const uint8_t *)head, 10000, 0, &H), MOD_TRUNCATED);
	size_t at = H.taken;
	CHECK(at > 8000 && at <= 10000);
	CHECK_EQ(H.lines, 1 + (at - 17) / 1024);
	CHECK_EQ(http_parse_more((const uint8_t *)head + at, n - at, &H), MOD_OK);
	CHECK_EQ(H.head_len, 30000);
	CHECK_STR(H.host, "p.example");
}

/*
 * A request line over 8 KiB with a method the list does not know (review
 * F15): nginx with `large_client_header_buffers 4 32k` serves "FOO /" and
 * 9,000 bytes, and the request after it on the connection. The claim waits
 * for the line's LF, in segments of any size, and the rest is read as any
 * long head; a line longer than the window holds is still no request.
 */
static void test_long_request_line(void)
{
	static char rq[40000];
	static const size_t lens[] = {9000, HTTP_HEAD_HOLD - 30, 12000, 16000};
	static const size_t steps[] = {1448, 1, 700, 9100};
	struct conn c;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (size_t j = 0; j < sizeof(steps) / sizeof(steps[0]); j++) {
			size_t n = (size_t)snprintf(rq, sizeof(rq), "FOO /");
			memset(rq + n, 'a', lens[i]);
			n += lens[i];
			n += (size_t)snprintf(rq + n, sizeof(rq) - n,
					      " HTTP/1.1\r\nHost: www.hidden.test\r\n\r\n"
					      "GET /after-foo HTTP/1.1\r\nHost: www.after.test\r\n\r\n");
			conn_open(&c, 16384);
			for (size_t k = 0; k < n; k += steps[j])
				feed(&c, 0, rq + k, n - k < steps[j] ? n - k : steps[j]);
			feeds(&c, 1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
				     "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
			if (c.cap.n != 4)
				fprintf(stderr, "FOO line of %zu in %zu-byte steps: %d events\n",
					lens[i], steps[j], c.cap.n);
			CHECK_EQ(c.f.app, APP_HTTP);
			CHECK_EQ(c.cap.n, 4);
			CHECK_STR(EVF(&c.cap.ev[0], RQ_METHOD), "FOO");
			CHECK_STR(c.cap.ev[0].name, "www.hidden.test");
			CHECK(strncmp(c.cap.ev[0].aux, "/aaaa", 5) == 0);
			CHECK_STR(c.cap.ev[1].name, "www.after.test");
			CHECK_STR(c.cap.ev[1].aux, "/after-foo");
			CHECK_EQ(c.cap.ev[1].flags, 0);
			CHECK_STR(c.cap.ev[2].name, "www.hidden.test"); /* paired */
			CHECK_STR(c.cap.ev[3].name, "www.after.test");
			conn_close(&c);
		}
	}

	/* not a request line after all (no version at its end), its LF
	 * within HTTP_LINE_SKIP: not claimed */
	conn_open(&c, 16384);
	size_t n = (size_t)snprintf(rq, sizeof(rq), "FOO /");
	memset(rq + n, 'a', 8000);
	n += 8000;
	n += (size_t)snprintf(rq + n, sizeof(rq) - n, " RTSP/1.0\r\nCSeq: 1\r\n\r\n");
	feed_segments(&c, 0, rq, n);
	CHECK_EQ(c.f.app, APP_NONE);
	CHECK_EQ(c.cap.n, 0);
	conn_close(&c);

	/* past HTTP_LINE_SKIP without its LF the line is claimed on its
	 * start's shape (a token, whitespace, a target); at its LF it is no
	 * request line after all: nothing is read, either way */
	for (size_t len = 9000; len <= 30000; len += 21000) {
		conn_open(&c, 16384);
		n = (size_t)snprintf(rq, sizeof(rq), "FOO /");
		memset(rq + n, 'a', len);
		n += len;
		n += (size_t)snprintf(rq + n, sizeof(rq) - n, " RTSP/1.0\r\nCSeq: 1\r\n\r\n");
		feed_segments(&c, 0, rq, n);
		feeds(&c, 1, "RTSP/1.0 200 OK\r\nCSeq: 1\r\n\r\n");
		CHECK_EQ(c.f.app, APP_HTTP);
		CHECK_EQ(c.cap.n, 0);
		conn_close(&c);
	}
	/* ... but a known method's line is a request whatever its end */
	conn_open(&c, 16384);
	n = (size_t)snprintf(rq, sizeof(rq), "GET /");
	memset(rq + n, 'a', 20000);
	n += 20000;
	n += (size_t)snprintf(rq + n, sizeof(rq) - n, " RTSP/1.0\r\nHost: r.test\r\n\r\n");
	feed_segments(&c, 0, rq, n);
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(c.cap.ev[0].name, "r.test");
	CHECK_STR(EVF(&c.cap.ev[0], RQ_VERSION), "");
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
	conn_close(&c);

	/* a line whose start is no request line's: never claimed */
	conn_open(&c, 16384);
	memset(rq, 'a', 20000);
	feed_segments(&c, 0, rq, 20000);
	CHECK_EQ(c.f.app, APP_NONE);
	CHECK_EQ(c.cap.n, 0);
	conn_close(&c);
}

/*
 * A request line longer than the 16 KiB window (review19 R19-4): nginx with
 * `large_client_header_buffers 4 32k` serves GET and FOO lines of 20,000
 * bytes, Python's http.server 40,000-byte ones, Go heads up to 1 MiB. Its
 * start (method, the target as far as the event keeps it) is kept, the rest
 * skipped to its LF with its last bytes (the version), then the fields
 * (Host) and the request after it are read; in any segment sizes, a known
 * method (claimed at once) or not (claimed past HTTP_LINE_SKIP). Before,
 * the line filled the window: no request event, nor for those after it. A
 * line past HTTP_HEAD_MAX is read the same way (up to HTTP_HEAD_FAR).
 */
static void test_line_over_window(void)
{
	static char rq[70000];
	static const size_t lens[] = {16384, 20000, 40000, 65000};
	static const size_t steps[] = {1, 700, 1448, 9100, 16000};
	static const char *const meths[] = {"GET", "FOO"};
	struct conn c;

	for (size_t m = 0; m < 2; m++) {
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			for (size_t j = 0; j < sizeof(steps) / sizeof(steps[0]); j++) {
				size_t n = (size_t)snprintf(rq, sizeof(rq), "%s /", meths[m]);
				memset(rq + n, 'a', lens[i]);
				n += lens[i];
				size_t line = n + 11;
				n += (size_t)snprintf(rq + n, sizeof(rq) - n,
						      " HTTP/1.1\r\nHost: www.hidden.test\r\n\r\n"
						      "GET /next HTTP/1.1\r\nHost: www.next.test\r\n\r\n");
				conn_open(&c, 16384);
				for (size_t k = 0; k < n; k += steps[j])
					feed(&c, 0, rq + k, n - k < steps[j] ? n - k : steps[j]);
				feeds(&c, 1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
					     "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
				if (c.cap.n != 4)
					fprintf(stderr, "%s line of %zu in %zu-byte steps: %d events\n",
						meths[m], lens[i], steps[j], c.cap.n);
				CHECK_EQ(c.f.app, APP_HTTP);
				CHECK_EQ(c.cap.n, 4);
				CHECK_STR(EVF(&c.cap.ev[0], RQ_METHOD), meths[m]);
				CHECK_STR(c.cap.ev[0].name, "www.hidden.test");
				CHECK_EQ(strlen(c.cap.ev[0].aux), HTTP_URI_MAX - 1);
				CHECK(strncmp(c.cap.ev[0].aux, "/aaaa", 5) == 0);
				CHECK_STR(EVF(&c.cap.ev[0], RQ_VERSION), "HTTP/1.1");
				CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
				CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "request line longer than 8192 bytes");
				CHECK_STR(EVF(&c.cap.ev[0], RQ_CUT), "1");
				CHECK_EQ(c.cap.ev[0].size, line + 23 + 2);
				CHECK_STR(c.cap.ev[1].name, "www.next.test");
				CHECK_STR(c.cap.ev[1].aux, "/next");
				CHECK_EQ(c.cap.ev[1].flags, 0);
				CHECK_STR(c.cap.ev[2].name, "www.hidden.test"); /* paired */
				CHECK_STR(c.cap.ev[3].name, "www.next.test");
				conn_close(&c);
			}
		}
	}

	/* whitespace runs: the version still read at the LF, the target up
	 * to the run (a bare LF ending the line) */
	conn_open(&c, 16384);
	size_t n = (size_t)snprintf(rq, sizeof(rq), "GET /x");
	memset(rq + n, ' ', 30000);
	n += 30000;
	n += (size_t)snprintf(rq + n, sizeof(rq) - n,
			      "HTTP/1.0\nHost: ws.test\n\nGET /n HTTP/1.1\r\nHost: n.test\r\n\r\n");
	feed_segments(&c, 0, rq, n);
	CHECK_EQ(c.cap.n, 2);
	CHECK_STR(c.cap.ev[0].aux, "/x");
	CHECK_STR(EVF(&c.cap.ev[0], RQ_VERSION), "HTTP/1.0");
	CHECK_STR(c.cap.ev[0].name, "ws.test");
	CHECK_STR(c.cap.ev[1].name, "n.test");
	conn_close(&c);

	/* past HTTP_HEAD_MAX: read on to its LF all the same (Go takes such a
	 * line), the Host after it kept (before: reported at the bound
	 * without it, the rest of the head skipped) */
	for (size_t m = 0; m < 2; m++) {
		conn_open(&c, 16384);
		n = (size_t)snprintf(rq, sizeof(rq), "%s /", meths[m]);
		memset(rq + n, 'b', 66000);
		n += 66000;
		n += (size_t)snprintf(rq + n, sizeof(rq) - n,
				      " HTTP/1.1\r\nHost: www.hidden.test\r\n\r\n"
				      "GET /next HTTP/1.1\r\nHost: www.next.test\r\n\r\n");
		feed_segments(&c, 0, rq, n);
		CHECK_EQ(c.cap.n, 2);
		CHECK_STR(EVF(&c.cap.ev[0], RQ_METHOD), meths[m]);
		CHECK(strncmp(c.cap.ev[0].aux, "/bbbb", 5) == 0);
		CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
		CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "request line longer than 8192 bytes");
		CHECK_STR(c.cap.ev[0].name, "www.hidden.test");
		CHECK_STR(EVF(&c.cap.ev[0], RQ_VERSION), "HTTP/1.1");
		CHECK_STR(c.cap.ev[1].name, "www.next.test");
		CHECK_STR(c.cap.ev[1].aux, "/next");
		conn_close(&c);
	}
}

/*
 * A head past HTTP_HEAD_MAX (review18 F10, review19): Python's http.server
 * takes 100 field lines of 64 KiB, Go 1 MiB, nginx what its large header
 * buffers hold, so a Host, a Content-Length or a Transfer-Encoding behind
 * 64 KiB of filler fields is what the server reads. Before, the head was
 * reported at the bound without them: no Host (domain rules blind), and
 * the body, attacker-chosen, read as requests (a fake event, the next real
 * request hidden). Now the field lines are read on, one at a time, to
 * HTTP_HEAD_FAR; the request carries its Host and its body is framed.
 * Filler of short lines and of lines longer than HTTP_LINE_SKIP (skipped),
 * in several segment sizes.
 */
static char far_rq[300000];

static size_t far_filler(char *b, size_t n, size_t upto, size_t line)
{
	while (n < upto) {
		memcpy(b + n, "X-Filler: ", 10);
		memset(b + n + 10, 'f', line - 12);
		memcpy(b + n + line - 2, "\r\n", 2);
		n += line;
	}
	return n;
}

static void test_head_past_bound(void)
{
	static const size_t lines[] = {1000, 20000};
	static const size_t steps[] = {1, 1448, 9000, 15000};
	struct conn c;

	for (size_t l = 0; l < 2; l++) {
		for (size_t j = 0; j < sizeof(steps) / sizeof(steps[0]); j++) {
			for (int chunked = 0; chunked < 2; chunked++) {
				/* steps of 1 byte: only the short lines (time);
				 * 15000 bytes beside the start of a long line
				 * overflow the window (as in the flow table) */
				if ((steps[j] == 1 || steps[j] == 15000) && l)
					continue;
				size_t n = (size_t)snprintf(far_rq, 64, "POST /up HTTP/1.1\r\n");
				n = far_filler(far_rq, n, 70000 + 1000 * j, lines[l]);
				size_t head = n;
				n += (size_t)snprintf(far_rq + n, 400, "%s%s",
					"Host: hidden.test\r\n",
					chunked ? "Transfer-Encoding: chunked\r\n\r\n"
						  "27\r\nGET /fake HTTP/1.1\r\nHost: fake.test\r\n\r\n\r\n"
						  "0\r\n\r\n"
						: "Content-Length: 39\r\n\r\n"
						  "GET /fake HTTP/1.1\r\nHost: fake.test\r\n\r\n");
				head += 19 + (chunked ? 30 : 22);
				n += (size_t)snprintf(far_rq + n, 100,
						      "GET /next HTTP/1.1\r\nHost: next.test\r\n\r\n");
				conn_open(&c, 16384);
				for (size_t k = 0; k < n; k += steps[j])
					feed(&c, 0, far_rq + k, n - k < steps[j] ? n - k : steps[j]);
				if (c.cap.n != 2)
					fprintf(stderr, "filler %zu, steps %zu, chunked %d: %d events\n",
						lines[l], steps[j], chunked, c.cap.n);
				CHECK_EQ(c.cap.n, 2);
				CHECK_STR(c.cap.ev[0].name, "hidden.test");
				CHECK_STR(c.cap.ev[0].aux, "/up");
				CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
				CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY),
					  l ? "field line longer than 8192 bytes"
					    : "head longer than 65536 bytes");
				CHECK_STR(EVF(&c.cap.ev[0], RQ_CL), chunked ? "" : "39");
				CHECK_EQ(c.cap.ev[0].size, head);
				CHECK_STR(c.cap.ev[1].name, "next.test");
				CHECK_STR(c.cap.ev[1].aux, "/next");
				CHECK_EQ(c.cap.ev[1].flags, 0);
				CHECK(c.f.app_state != NULL);
				conn_close(&c);
			}
		}
	}

	/* an Upgrade to h2c behind the filler: the client waits for the
	 * 101, which hands the flow to h2c after the head */
	conn_open(&c, 16384);
	size_t n = (size_t)snprintf(far_rq, 64, "GET /h2 HTTP/1.1\r\n");
	n = far_filler(far_rq, n, 80000, 1000);
	n += (size_t)snprintf(far_rq + n, 200, "Host: up.test\r\nConnection: Upgrade, HTTP2-Settings\r\n"
				     "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n");
	feed_segments(&c, 0, far_rq, n);
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(c.cap.ev[0].name, "up.test");
	CHECK_STR(EVF(&c.cap.ev[0], RQ_UPGRADE), "h2c");
	feeds(&c, 1, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n");
	CHECK_EQ(c.cap.n, 2);
	CHECK_EQ(c.f.app, APP_NONE);
	CHECK_EQ(c.f.st[0].consumed + c.f.st[0].slid, n);
	conn_close(&c);

	/* a response head past the bound: framed by its late Content-Length,
	 * the response after it read */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: b\r\n\r\n");
	n = (size_t)snprintf(far_rq, 64, "HTTP/1.1 200 OK\r\n");
	n = far_filler(far_rq, n, 70000, 1000);
	n += (size_t)snprintf(far_rq + n, 200, "Content-Length: 17\r\n\r\nHTTP/1.1 500 Fake"
				     "HTTP/1.1 204 No Content\r\n\r\n");
	feed_segments(&c, 1, far_rq, n);
	CHECK_EQ(c.cap.n, 4);
	CHECK_EQ(c.cap.ev[2].type, 200);
	CHECK_STR(EVF(&c.cap.ev[2], RS_CL), "17");
	CHECK_STR(EVF(&c.cap.ev[2], RS_WHY), "head longer than 65536 bytes");
	CHECK_EQ(c.cap.ev[3].type, 204);
	CHECK_STR(c.cap.ev[3].name, "b");
	conn_close(&c);
}

/*
 * A status line longer than the window (a reason phrase of 20 KB: curl
 * and Python's http.client take it): read from its first bytes, skipped to
 * its LF, its fields and the responses after it read. Before, it filled
 * the window and the server direction stopped: no event for it nor for the
 * responses after it.
 */
static void test_status_over_window(void)
{
	static const size_t steps[] = {1, 1448, 16000};
	struct conn c;

	for (size_t j = 0; j < sizeof(steps) / sizeof(steps[0]); j++) {
		size_t n = (size_t)snprintf(far_rq, 64, "HTTP/1.1 302 Found ");
		memset(far_rq + n, 'r', 20000);
		n += 20000;
		n += (size_t)snprintf(far_rq + n, 300,
				      "\r\nLocation: http://x.test/\r\nContent-Length: 3\r\n\r\nabc"
				      "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
		conn_open(&c, 16384);
		feeds(&c, 0, "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: b\r\n\r\n");
		for (size_t k = 0; k < n; k += steps[j])
			feed(&c, 1, far_rq + k, n - k < steps[j] ? n - k : steps[j]);
		CHECK_EQ(c.cap.n, 4);
		CHECK_EQ(c.cap.ev[2].type, 302);
		CHECK_STR(c.cap.ev[2].name, "a");
		CHECK_STR(EVF(&c.cap.ev[2], RS_WHY), "status line longer than 8192 bytes");
		CHECK_STR(EVF(&c.cap.ev[2], RS_LOCATION), "http://x.test/");
		CHECK_STR(EVF(&c.cap.ev[2], RS_CUT), "1");
		CHECK_EQ(strlen(EVF(&c.cap.ev[2], RS_PHRASE)), HTTP_PHRASE_MAX - 1);
		CHECK_EQ(c.cap.ev[2].flags, OBS_F_MALFORMED);
		CHECK_EQ(c.cap.ev[3].type, 200);
		CHECK_STR(c.cap.ev[3].name, "b");
		conn_close(&c);
	}

	/* not a status line: left to fill the window, as before (no event) */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /a HTTP/1.1\r\nHost: a\r\n\r\n");
	memset(far_rq, 'x', 20000);
	feed_segments(&c, 1, far_rq, 20000);
	CHECK_EQ(c.cap.n, 1);
	conn_close(&c);
}

/*
 * The skipped middle of a line longer than HTTP_LINE_SKIP: in a field line
 * a bare CR ends the line, as Python's http.server reads it ("X: aaa" CR
 * "Host: other" is a Host to it; nginx answers 400), so the field after it
 * is read; a control before the ':' breaks the head (reported, the
 * direction stops) as in a line read whole; after it a NUL passes (the head
 * is marked already). In a request line a bare CR is whitespace, another
 * control passes (Python takes it; nginx 400), the line runs to its LF.
 * Before, the skipped bytes were not looked at: the Host after a bare CR
 * was not seen.
 */
static void test_skipped_bytes(void)
{
	struct conn c;
	static const struct {
		const char *at;   /* put at offset 12000 of a 20000-byte field line */
		size_t len;
		int events;
		const char *host; /* of the first request */
	} cases[] = {
		/* then late.test: several Host fields, the first wins */
		{"\rHost: other.test\r\nX-Rest: ", 27, 2, "other.test"},
		{"\r", 1, 2, "late.test"},
		{"\0", 1, 2, "late.test"},
		{"\x01\x7f", 2, 2, "late.test"},
		/* the empty line after the bare CR ends the head: the rest
		 * is the next request (Python: a 400 for "vvv...") */
		{"\r\r\n", 3, 3, ""},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (size_t cut = 0; cut < 2; cut++) {
			size_t n = (size_t)snprintf(far_rq, 64, "GET /s HTTP/1.1\r\nX-Long: ");
			size_t start = n;
			memset(far_rq + n, 'v', 20000);
			memcpy(far_rq + start + 12000, cases[i].at, cases[i].len);
			n += 20000;
			n += (size_t)snprintf(far_rq + n, 200,
					      "\r\nHost: late.test\r\n\r\nGET /n HTTP/1.1\r\nHost: n\r\n\r\n");
			conn_open(&c, 16384);
			/* the CR at a segment's end, or within one */
			size_t split = start + 12000 + (cut ? 1 : 0);
			feed_segments(&c, 0, far_rq, split);
			feed_segments(&c, 0, far_rq + split, n - split);
			CHECK_EQ(c.cap.n, cases[i].events);
			CHECK_STR(c.cap.ev[0].name, cases[i].host);
			CHECK_STR(c.cap.ev[0].aux, "/s");
			CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "field line longer than 8192 bytes");
			CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
			CHECK_STR(c.cap.ev[cases[i].events - 1].name, "n");
			if (cases[i].events == 3)
				CHECK_STR(c.cap.ev[1].name, "late.test");
			conn_close(&c);
		}
	}

	/* a control before the ':' of a long field line */
	conn_open(&c, 16384);
	size_t n = (size_t)snprintf(far_rq, 64, "GET /s HTTP/1.1\r\n");
	memset(far_rq + n, 'N', 20000);
	far_rq[n + 15000] = '\0';
	n += 20000;
	n += (size_t)snprintf(far_rq + n, 200, ": v\r\nHost: late.test\r\n\r\n");
	feed_segments(&c, 0, far_rq, n);
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(c.cap.ev[0].name, "");
	CHECK_EQ(c.cap.ev[0].size, 17 + 15000 + 1);
	conn_close(&c);

	/* a request line's skipped middle: a bare CR and a NUL pass */
	conn_open(&c, 16384);
	n = (size_t)snprintf(far_rq, 64, "GET /");
	memset(far_rq + n, 'a', 20000);
	far_rq[n + 12000] = '\r';
	far_rq[n + 13000] = '\0';
	n += 20000;
	n += (size_t)snprintf(far_rq + n, 200, " HTTP/1.1\r\nHost: late.test\r\n\r\n");
	feed_segments(&c, 0, far_rq, n);
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(c.cap.ev[0].name, "late.test");
	CHECK_STR(EVF(&c.cap.ev[0], RQ_VERSION), "HTTP/1.1");
	conn_close(&c);
}

/*
 * Requests servers take that have no ordinary head: HTTP/0.9's one line
 * (nginx answers with the body alone, squid with a status line), and a
 * request line with a bare CR in it (squid reads it as whitespace). Before,
 * neither made an event.
 */
/* An Upgrade request with a body: the body is skipped while the client
 * waits for the 101, so the protocol after it starts where it does (before,
 * the hand-back left the cursor on the body: h2c never claimed the flow) */
static void test_upgrade_body(void)
{
	struct conn c;
	static const char rq[] = "POST /up HTTP/1.1\r\nHost: a\r\nUpgrade: h2c\r\n"
				 "Connection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n"
				 "Content-Length: 5\r\n\r\nhello";

	conn_open(&c, 16384);
	feeds(&c, 0, rq);
	feeds(&c, 1, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n");
	CHECK_EQ(c.cap.n, 2);
	CHECK_EQ(c.cap.ev[1].type, 101);
	CHECK_EQ(c.f.app, APP_NONE); /* handed back */
	CHECK_EQ(c.f.st[0].consumed + c.f.st[0].slid, strlen(rq));
	conn_close(&c);
}

static void test_old_and_odd(void)
{
	struct conn c;

	/* nginx: the body alone comes back */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "GET /http09\r\n"), MOD_OK);
	CHECK_EQ(c.cap.n, 0); /* nothing says the request is whole yet */
	CHECK_EQ(feeds(&c, 1, "ok81 /http09\n"), MOD_MALFORMED);
	CHECK_EQ(c.cap.n, 1);
	CHECK_EQ(c.cap.ev[0].kind, OBS_HTTP_REQUEST);
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
	CHECK_STR(c.cap.ev[0].aux, "/http09");
	CHECK_STR(EVF(&c.cap.ev[0], RQ_METHOD), "GET");
	CHECK_STR(EVF(&c.cap.ev[0], RQ_VERSION), "");
	CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "bad request line: no HTTP version");
	CHECK_EQ(c.cap.ev[0].size, 13);
	CHECK_EQ(feeds(&c, 1, "more body\n"), MOD_OK); /* the body: no event */
	CHECK_EQ(c.cap.n, 1);
	conn_close(&c);

	/* squid: a status line comes back, and pairs with it */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET http://evil.test/sq-09\r\n");
	feeds(&c, 1, "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nContent-Length: 3\r\n\r\nok\n");
	CHECK_EQ(c.cap.n, 2);
	CHECK_STR(c.cap.ev[0].aux, "http://evil.test/sq-09");
	CHECK_EQ(c.cap.ev[1].type, 200);
	CHECK_STR(c.cap.ev[1].aux, "http://evil.test/sq-09");
	CHECK_EQ(c.cap.ev[1].flags, 0);
	conn_close(&c);

	/* a status line in pieces still is one */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /x\n");
	feeds(&c, 1, "HTT");
	feeds(&c, 1, "P/1.0 404 Not Found\r\n\r\n");
	CHECK_EQ(c.cap.n, 2);
	CHECK_EQ(c.cap.ev[1].type, 404);
	conn_close(&c);

	/* not a simple request: more than its line, a version, or a line
	 * not yet whole when the server speaks */
	static const char *const not09[] = {
		"GET /x\r\nHost: a\r\n", "GET /x HTTP/1.1\r\n", "GET /x", "GET /x\r\nH",
	};
	for (size_t i = 0; i < sizeof(not09) / sizeof(not09[0]); i++) {
		conn_open(&c, 16384);
		feeds(&c, 0, not09[i]);
		feeds(&c, 1, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
		CHECK_EQ(c.cap.n, 1);
		CHECK_EQ(c.cap.ev[0].kind, OBS_HTTP_RESPONSE);
		CHECK_STR(c.cap.ev[0].aux, ""); /* unpaired */
		conn_close(&c);
	}

	/* a bare CR in a request line: read as whitespace, as squid does */
	conn_open(&c, 16384);
	CHECK_EQ(feeds(&c, 0, "GET http://evil.test/sq-cr HTTP/1.1\rHost: evil.test\r\n\r\n"
			      "GET /after HTTP/1.1\r\nHost: after.test\r\n\r\n"),
		 MOD_MALFORMED);
	CHECK_EQ(c.cap.n, 2);
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
	CHECK_STR(c.cap.ev[0].aux, "http://evil.test/sq-cr");
	CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "control byte 0x0d at offset 35");
	CHECK_STR(c.cap.ev[1].name, "after.test");
	conn_close(&c);
	/* request-line whitespace as squid (CR, VT, FF) and Python's
	 * http.server (also 0x1c..0x1f, 0x85 and 0xa0: str.split of the line
	 * read as Latin-1) split it: the flow is claimed and the request read,
	 * and the next one on the connection too */
	static const char *const sep[] = {"\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0"};
	for (size_t i = 0; i < sizeof(sep) / sizeof(sep[0]); i++) {
		char rq[256];
		snprintf(rq, sizeof(rq),
			 "GET%shttp://evil.test/v%sHTTP/1.1\r\nHost: evil.test\r\n\r\n"
			 "GET /next HTTP/1.1\r\nHost: next.test\r\n\r\n", sep[i], sep[i]);
		conn_open(&c, 16384);
		feeds(&c, 0, rq);
		CHECK_EQ(c.cap.n, 2);
		CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
		CHECK_STR(c.cap.ev[0].aux, "http://evil.test/v");
		CHECK_STR(c.cap.ev[0].name, "evil.test");
		CHECK_STR(EVF(&c.cap.ev[0], RQ_VERSION), "HTTP/1.1");
		CHECK_STR(c.cap.ev[1].name, "next.test");
		conn_close(&c);
	}
	/* a raw 0xa0 inside a target (UTF-8 "\xc3\xa0" not percent-encoded)
	 * stays in it, marked; one at its end is cut off, as Python reads it */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /caf\xc3\xa0x HTTP/1.1\r\nHost: u.test\r\n\r\n"
		     "GET /caf\xc3\xa0 HTTP/1.1\r\nHost: v.test\r\n\r\n");
	CHECK_EQ(c.cap.n, 2);
	CHECK_STR(c.cap.ev[0].aux, "/caf\\xc3\\xa0x");
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
	CHECK_STR(c.cap.ev[1].aux, "/caf\\xc3");
	CHECK_STR(c.cap.ev[1].name, "v.test");
	CHECK_STR(EVF(&c.cap.ev[1], RQ_VERSION), "HTTP/1.1");
	conn_close(&c);
	/* a request line ending in a bare CR before its CRLF has its version */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /2 HTTP/1.1\r\r\nHost: two.test\r\n\r\n");
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(EVF(&c.cap.ev[0], RQ_VERSION), "HTTP/1.1");
	CHECK_STR(c.cap.ev[0].name, "two.test");
	conn_close(&c);

	/* A line without a version waiting while the server answers an
	 * earlier request, or sends that answer's body, is no HTTP/0.9
	 * request (before, it stopped the client direction and hid every
	 * request after it; squid serves them all) */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /1 HTTP/1.1\r\nHost: one.test\r\n\r\nGET /2\r\n");
	feeds(&c, 1, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234");
	feeds(&c, 1, "56789");
	feeds(&c, 0, "Host: two.test\r\n\r\nGET /3 HTTP/1.1\r\nHost: three.test\r\n\r\n");
	CHECK_EQ(c.cap.n, 4);
	CHECK_STR(c.cap.ev[2].aux, "/2");
	CHECK_STR(c.cap.ev[2].name, "two.test");
	CHECK_STR(c.cap.ev[3].name, "three.test");
	conn_close(&c);
	/* a real one answered: read on after it all the same */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /09\r\n");
	feeds(&c, 1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	feeds(&c, 0, "GET /after HTTP/1.1\r\nHost: after.test\r\n\r\n");
	CHECK_EQ(c.cap.n, 3);
	CHECK_STR(c.cap.ev[0].aux, "/09");
	CHECK_STR(c.cap.ev[2].name, "after.test");
	conn_close(&c);

	/* ... but not in a status line; in a field value it ends the line
	 * (test_bare_cr_field) */
	CHECK_EQ(http_parse_head((const uint8_t *)"HTTP/1.1 200 OK\rX\r\n\r\n", 22, 1, &H),
		 MOD_MALFORMED);
	CHECK(H.fatal);
	CHECK_EQ(http_parse_head((const uint8_t *)"GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", 27, 0, &H),
		 MOD_MALFORMED);
	CHECK(!H.fatal);
}

/*
 * A bare CR in a field value of a line read whole ends the line, as
 * Python's http.server reads it ("X: a" CR "Host: h" is a Host to it; nginx
 * answers 400; squid forwards the CR in the value and its first Host): the
 * head is marked, the field after the CR read, and the connection's later
 * requests and responses too. Before, the head broke there and the
 * direction stopped, so one such line hid every later request on a
 * keep-alive connection to a server that serves it.
 */
static void test_bare_cr_field(void)
{
	struct conn c;
	static const struct {
		const char *rq;
		const char *host;
		const char *why;
	} cases[] = {
		{"GET /a HTTP/1.1\r\nX: a\rHost: evil.test\r\n\r\n", "evil.test",
		 "control byte 0x0d at offset 21"},
		/* the first Host wins, as Python's headers['Host'] and squid take it */
		{"GET /a HTTP/1.1\r\nHost: good.test\r\nX: a\rHost: evil.test\r\n\r\n",
		 "good.test", "control byte 0x0d at offset 38"},
		/* several, and a CR at the value's start */
		{"GET /a HTTP/1.1\r\nX:\rY: 1\rHost: evil.test\rZ: 2\r\n\r\n", "evil.test",
		 "control byte 0x0d at offset 19"},
		/* framing after the CR: the body is no request */
		{"POST /a HTTP/1.1\r\nHost: h.test\r\nX: a\rContent-Length: 24\r\n\r\n"
		 "GET /fake HTTP/1.1\r\n\r\n", "h.test", "control byte 0x0d at offset 36"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (size_t step = 0; step < 3; step++) {
			char rq[256];
			int n = snprintf(rq, sizeof(rq), "%sGET /b HTTP/1.1\r\nHost: b.test\r\n\r\n",
					 cases[i].rq);
			conn_open(&c, 16384);
			/* whole, a byte at a time, the CR last in a segment */
			if (step == 0) {
				feed_segments(&c, 0, rq, (size_t)n);
			} else if (step == 1) {
				for (int k = 0; k < n; k++)
					feed_segments(&c, 0, rq + k, 1);
			} else {
				size_t at = (size_t)(strchr(rq + 17, '\r') - rq) + 1;
				feed_segments(&c, 0, rq, at);
				feed_segments(&c, 0, rq + at, (size_t)n - at);
			}
			feeds(&c, 1, "HTTP/1.1 200 OK\r\nX: a\rContent-Length: 3\r\n\r\nabc");
			feeds(&c, 1, "HTTP/1.1 204 No Content\r\n\r\n");
			CHECK_EQ(c.cap.n, 4);
			CHECK_STR(c.cap.ev[0].name, cases[i].host);
			CHECK_STR(c.cap.ev[0].aux, "/a");
			CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
			CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), cases[i].why);
			CHECK_STR(c.cap.ev[1].name, "b.test");
			CHECK_STR(c.cap.ev[1].aux, "/b");
			CHECK_EQ(c.cap.ev[1].flags, 0);
			/* the response's Content-Length after its bare CR frames
			 * its body, so the 204 after it is read */
			CHECK_STR(EVF(&c.cap.ev[2], RS_STATUS), "200");
			CHECK_EQ(c.cap.ev[2].flags, OBS_F_MALFORMED);
			CHECK_STR(EVF(&c.cap.ev[3], RS_STATUS), "204");
			conn_close(&c);
		}
	}
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_is(const char *info, size_t len, int kind, const char *want)
{
	json_t *o = json_object();
	CHECK(o != NULL);
	CHECK_EQ(http_info_json(o, info, len, kind), 0);
	char *s = json_dumps(o, JSON_COMPACT);
	CHECK_STR(s, want);
	free(s);
	json_decref(o);
}

static void test_json(void)
{
	struct conn c;

	conn_open(&c, 16384);
	feeds(&c, 0, curl_req);
	feeds(&c, 0, "PUT /latest/api/token HTTP/1.1\r\nHost: 169.254.169.254\r\n"
		     "X-aws-ec2-metadata-token-ttl-seconds: 21600\r\n"
		     "X-aws-ec2-metadata-token: s3cr3t\r\nMetadata: true\r\n"
		     "Content-Length: 0\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n");
	feeds(&c, 1, "HTTP/1.1 403 Forbidden\r\nServer: squid\r\nContent-Length: 0\r\n\r\n");
	CHECK_EQ(c.cap.n, 3);
	json_is(c.cap.ev[0].info, c.cap.ev[0].info_len, OBS_HTTP_REQUEST,
		"{\"method\":\"GET\",\"host\":\"169.254.169.254\",\"uri\":\"/latest/meta-data/\","
		"\"version\":\"HTTP/1.1\",\"user_agent\":\"curl/7.88.1\"}");
	json_is(c.cap.ev[1].info, c.cap.ev[1].info_len, OBS_HTTP_REQUEST,
		"{\"method\":\"PUT\",\"host\":\"169.254.169.254\",\"uri\":\"/latest/api/token\","
		"\"version\":\"HTTP/1.1\",\"user_agent\":\"\",\"upgrade\":\"h2c\","
		"\"connection\":\"Upgrade, HTTP2-Settings\",\"content_length\":0,"
		"\"metadata_headers\":[\"Metadata\",\"X-aws-ec2-metadata-token\","
		"\"X-aws-ec2-metadata-token-ttl-seconds\"],\"metadata_token_ttl\":\"21600\"}");
	CHECK(strstr(c.cap.ev[1].info, "s3cr3t") == NULL);
	json_is(c.cap.ev[2].info, c.cap.ev[2].info_len, OBS_HTTP_RESPONSE,
		"{\"status\":403,\"reason\":\"Forbidden\",\"version\":\"HTTP/1.1\","
		"\"content_length\":0,\"server\":\"squid\",\"request\":{\"method\":\"GET\","
		"\"host\":\"169.254.169.254\",\"uri\":\"/latest/meta-data/\"}}");
	conn_close(&c);

	/* malformed and cut; escapes survive as text */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /\"q\" HTTP/1.1\r\nHost: \xff\"\r\nX: \x02\r\n\r\n");
	CHECK_EQ(c.cap.n, 1);
	json_is(c.cap.ev[0].info, c.cap.ev[0].info_len, OBS_HTTP_REQUEST,
		"{\"method\":\"GET\",\"host\":\"\\\\xff\\\"\",\"uri\":\"/\\\"q\\\"\","
		"\"version\":\"HTTP/1.1\",\"user_agent\":\"\","
		"\"malformed\":\"control byte 0x02 at offset 32\"}");
	conn_close(&c);

	/* an empty Host field is "", no Host field null (tshark tells them apart) */
	conn_open(&c, 16384);
	feeds(&c, 0, "GET /a HTTP/1.1\r\nHost:\r\n\r\nGET /b HTTP/1.0\r\n\r\n"
		     "GET /c HTTP/1.1\r\nhost: \t \r\n\r\n");
	CHECK_EQ(c.cap.n, 3);
	json_is(c.cap.ev[0].info, c.cap.ev[0].info_len, OBS_HTTP_REQUEST,
		"{\"method\":\"GET\",\"host\":\"\",\"uri\":\"/a\",\"version\":\"HTTP/1.1\","
		"\"user_agent\":\"\"}");
	json_is(c.cap.ev[1].info, c.cap.ev[1].info_len, OBS_HTTP_REQUEST,
		"{\"method\":\"GET\",\"host\":null,\"uri\":\"/b\",\"version\":\"HTTP/1.0\","
		"\"user_agent\":\"\"}");
	json_is(c.cap.ev[2].info, c.cap.ev[2].info_len, OBS_HTTP_REQUEST,
		"{\"method\":\"GET\",\"host\":\"\",\"uri\":\"/c\",\"version\":\"HTTP/1.1\","
		"\"user_agent\":\"\"}");
	conn_close(&c);

	/* an empty X-aws-ec2-metadata-token-ttl-seconds field was still sent */
	conn_open(&c, 16384);
	feeds(&c, 0, "PUT /latest/api/token HTTP/1.1\r\nHost: relay.example\r\n"
		     "X-aws-ec2-metadata-token-ttl-seconds:\r\n\r\n");
	CHECK_EQ(c.cap.n, 1);
	json_is(c.cap.ev[0].info, c.cap.ev[0].info_len, OBS_HTTP_REQUEST,
		"{\"method\":\"PUT\",\"host\":\"relay.example\",\"uri\":\"/latest/api/token\","
		"\"version\":\"HTTP/1.1\",\"user_agent\":\"\","
		"\"metadata_headers\":[\"X-aws-ec2-metadata-token-ttl-seconds\"],"
		"\"metadata_token_ttl\":\"\"}");
	conn_close(&c);
	/* a record of an older version, without the field: an empty TTL is absent */
	json_is("req\x1fGET\x1f/\x1fHTTP/1.1\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f" "1\x1e",
		33, OBS_HTTP_REQUEST,
		"{\"method\":\"GET\",\"host\":\"h\",\"uri\":\"/\",\"version\":\"HTTP/1.1\","
		"\"user_agent\":\"\"}");

	/* an unpaired response without a status line */
	conn_open(&c, 16384);
	feeds(&c, 0, curl_req);
	feeds(&c, 1, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
	feeds(&c, 1, "junk\r\n\r\n");
	CHECK_EQ(c.cap.n, 3);
	json_is(c.cap.ev[2].info, c.cap.ev[2].info_len, OBS_HTTP_RESPONSE,
		"{\"reason\":\"\",\"version\":\"\",\"malformed\":\"bad status line: bad HTTP version\"}");
	conn_close(&c);

	/* a response head left open at a RST: "truncated"; a response record
	 * of an older version, without the field, still reads */
	conn_open(&c, 16384);
	feeds(&c, 0, curl_req);
	feeds(&c, 1, "HTTP/1.1 200 OK\r\nServer: EC2ws\r\n");
	CHECK_EQ(feed_fl(&c, 1, NULL, 0, TH_RST), MOD_TRUNCATED);
	CHECK_EQ(c.cap.n, 2);
	json_is(c.cap.ev[1].info, c.cap.ev[1].info_len, OBS_HTTP_RESPONSE,
		"{\"status\":200,\"reason\":\"OK\",\"version\":\"HTTP/1.1\",\"server\":\"EC2ws\","
		"\"request\":{\"method\":\"GET\",\"host\":\"169.254.169.254\","
		"\"uri\":\"/latest/meta-data/\"},\"truncated\":true}");
	conn_close(&c);
	static const char old_rs[] =
		"resp\x1fHTTP/1.1\x1f" "204\x1fNo Content\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1e";
	json_is(old_rs, strlen(old_rs), OBS_HTTP_RESPONSE,
		"{\"status\":204,\"reason\":\"No Content\",\"version\":\"HTTP/1.1\"}");

	/* the wrong kind, or no record */
	json_t *o = json_object();
	static const char rq[] =
		"req\x1fGET\x1f/\x1fHTTP/1.1\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1e";
	CHECK_EQ(http_info_json(o, rq, strlen(rq), OBS_HTTP_RESPONSE), -22);
	CHECK_EQ(http_info_json(o, "", 0, OBS_HTTP_REQUEST), -22);
	CHECK_EQ(http_info_json(o, NULL, 0, OBS_HTTP_REQUEST), -22);
	CHECK_EQ(http_info_json(o, "req\x1fGET\x1e", 8, OBS_HTTP_REQUEST), -22);
	CHECK_EQ(json_object_size(o), 0);
	CHECK_EQ(http_info_json(o, rq, strlen(rq), OBS_HTTP_REQUEST), 0);
	json_decref(o);
	/* a record written before the Host flag (one field less): empty is none */
	json_is(rq, strlen(rq), OBS_HTTP_REQUEST,
		"{\"method\":\"GET\",\"host\":null,\"uri\":\"/\",\"version\":\"HTTP/1.1\","
		"\"user_agent\":\"\"}");
}

int main(void)
{
	test_request_fields();
	test_request_targets();
	test_irregular_lines();
	test_response_fields();
	test_truncation();
	test_close();
	test_close_response();
	test_hostile();
	test_sniff();
	test_copy_escaped();
	test_claim();
	test_event();
	test_split();
	test_pipeline();
	test_pending_storage();
	test_head_unremembered();
	test_pending_budget();
	test_bodies();
	test_interim_upgrade_connect();
	test_stream_bounds();
	test_keepalive_long();
	test_long_heads();
	test_long_request_line();
	test_line_over_window();
	test_head_past_bound();
	test_status_over_window();
	test_skipped_bytes();
	test_bare_cr_field();
	test_old_and_odd();
	test_upgrade_body();
	test_json();
	return check_done();
}
