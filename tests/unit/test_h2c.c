/*
 * test_h2c.c - the HTTP/2 cleartext analyzer on crafted bytes: the preface,
 * requests and responses from HPACK blocks (RFC 7541 C.4's, Huffman-coded,
 * the dynamic table reused from one request to the next), the bytes split
 * across segments at every boundary, PADDED and PRIORITY, CONTINUATION,
 * frame lengths and padding that lie, HPACK errors, the table size as
 * SETTINGS and their ACK set it, the header block bound, DATA past the
 * window, the memory the inflaters may take, more flows than slots, the
 * hand-over from HTTP/1.1 "Upgrade: h2c", and the JSON of an event. The
 * module runs over a struct flow built here, with stream buffers filled as
 * the flow table fills them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <jansson.h>

#include "../unit/check.h"
#include "../unit/many_flows.h"
#include "api/http_json.h"
#include "flow.h"
#include "h2c.h"
#include "http.h"
#include "module.h"

/* ---- observations captured from the module -------------------------------- */

#define MAX_EV 64

struct ev {
	int kind;
	int dir;            /* the packet's, as the event shows it */
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

/* Field i of a record. */
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

enum { RQ_METHOD = 1, RQ_URI, RQ_VERSION, RQ_HOST, RQ_UA, RQ_UPGRADE, RQ_CONN, RQ_CL,
       RQ_META, RQ_FLAVOR, RQ_TOKEN, RQ_TTL, RQ_WHY, RQ_CUT };
enum { RS_VERSION = 1, RS_STATUS, RS_PHRASE, RS_CL, RS_UPGRADE, RS_CONN, RS_SERVER,
       RS_LOCATION, RS_RMETHOD, RS_RHOST, RS_RURI, RS_WHY, RS_CUT };

/* ---- a connection over a hand-built flow ----------------------------------- */

struct conn {
	void *state;
	struct flow f;
	struct flow_stream st[2];
	uint8_t *buf[2];
	uint32_t max;
	int res[2]; /* the worst result each direction's packets had */
	struct cap cap;
};

static void conn_init(struct conn *c, void *state, uint32_t max)
{
	memset(c, 0, sizeof(*c));
	c->state = state;
	c->f.proto = IPPROTO_TCP;
	c->f.ipv = 4;
	c->f.st = c->st;
	c->max = max;
	c->buf[0] = malloc(max);
	c->buf[1] = malloc(max);
	c->cap.emit.obs = cap_obs;
}

static void conn_open(struct conn *c, uint32_t max)
{
	void *state = NULL;

	CHECK_EQ(h2c_module.init(NULL, &state), 0);
	conn_init(c, state, max);
}

static void conn_free(struct conn *c)
{
	/* as the core and the flow table do */
	h2c_module.on_flow_end(c->state, &c->f);
	free(c->f.app_state);
	free(c->buf[0]);
	free(c->buf[1]);
}

static void conn_close(struct conn *c)
{
	conn_free(c);
	h2c_module.fini(c->state);
}

static int rank(int r)
{
	return r == MOD_MALFORMED ? 3 : r == MOD_TRUNCATED ? 2 : r == MOD_OK ? 1 : 0;
}

/* Append n bytes to direction dir as the flow table does, then run the
 * module on the packet. */
static int feed(struct conn *c, int dir, const void *data, size_t n)
{
	struct flow_stream *s = &c->f.st[dir];
	struct pkt p;
	int r;

	if (!s->buf)
		s->buf = c->buf[dir];
	if (!s->overflow && !s->done) {
		size_t k = n < c->max - s->len ? n : c->max - s->len;
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
	r = h2c_module.on_packet(c->state, &p, &c->cap.emit);
	if (rank(r) > rank(c->res[dir]) || r < 0)
		c->res[dir] = r;
	return r;
}

static void feed_segments(struct conn *c, int dir, const uint8_t *data, size_t n, size_t seg)
{
	for (size_t i = 0; i < n; i += seg)
		feed(c, dir, data + i, n - i < seg ? n - i : seg);
}

/* ---- building frames -------------------------------------------------------- */

struct buf {
	uint8_t b[200000];
	size_t n;
};

static void put(struct buf *o, const void *p, size_t n)
{
	CHECK(o->n + n <= sizeof(o->b));
	if (p)
		memcpy(o->b + o->n, p, n);
	else
		memset(o->b + o->n, 0, n);
	o->n += n;
}

static void put_u8(struct buf *o, unsigned v)
{
	uint8_t b = (uint8_t)v;
	put(o, &b, 1);
}

/* A frame header: its payload follows. */
static void head(struct buf *o, uint32_t len, unsigned type, unsigned flags, uint32_t sid)
{
	uint8_t h[9] = {(uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len, (uint8_t)type,
			(uint8_t)flags, (uint8_t)(sid >> 24), (uint8_t)(sid >> 16),
			(uint8_t)(sid >> 8), (uint8_t)sid};
	put(o, h, 9);
}

static void frame(struct buf *o, unsigned type, unsigned flags, uint32_t sid, const void *pl,
		  size_t len)
{
	head(o, (uint32_t)len, type, flags, sid);
	put(o, pl, len);
}

enum { DATA = 0, HEADERS = 1, PRIORITY = 2, RST = 3, SETTINGS = 4, PUSH = 5, PING = 6,
       GOAWAY = 7, WINUP = 8, CONT = 9 };
enum { END_STREAM = 1, ACK = 1, END_HEADERS = 4, PADDED = 8, PRIO = 0x20 };

static const char preface_s[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

static void preface(struct buf *o)
{
	put(o, preface_s, 24);
	frame(o, SETTINGS, 0, 0, NULL, 0);
}

/* An HPACK integer (RFC 7541 5.1) with an n-bit prefix after the bits
 * flags. */
static void hp_int(struct buf *o, unsigned flags, int n, uint32_t v)
{
	uint32_t max = (1u << n) - 1;

	if (v < max) {
		put_u8(o, flags | v);
		return;
	}
	put_u8(o, flags | max);
	v -= max;
	while (v >= 128) {
		put_u8(o, (v & 0x7f) | 0x80);
		v >>= 7;
	}
	put_u8(o, v);
}

/* A literal field with a new name, without indexing (or with: idx). */
static void hp_lit(struct buf *o, int idx, const char *name, const char *value)
{
	put_u8(o, idx ? 0x40 : 0x00);
	hp_int(o, 0, 7, (uint32_t)strlen(name));
	put(o, name, strlen(name));
	hp_int(o, 0, 7, (uint32_t)strlen(value));
	put(o, value, strlen(value));
}

/* A literal field whose name is static-table entry i, without indexing. */
static void hp_lit_name(struct buf *o, unsigned i, const char *value)
{
	hp_int(o, 0x00, 4, i);
	hp_int(o, 0, 7, (uint32_t)strlen(value));
	put(o, value, strlen(value));
}

/* RFC 7541 C.4.1 to C.4.3: three requests, Huffman-coded, each reusing
 * the dynamic table the ones before it filled (www.example.com is index 62
 * in the second, 63 in the third). */
static const uint8_t c41[] = {0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2,
			      0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff};
static const uint8_t c42[] = {0x82, 0x86, 0x84, 0xbe, 0x58, 0x86, 0xa8, 0xeb, 0x10, 0x64,
			      0x9c, 0xbf};
static const uint8_t c43[] = {0x82, 0x87, 0x85, 0xbf, 0x40, 0x88, 0x25, 0xa8, 0x49, 0xe9,
			      0x5b, 0xa9, 0x7d, 0x7f, 0x89, 0x25, 0xa8, 0x49, 0xe9, 0x5b,
			      0xb8, 0xe8, 0xb4, 0xbf};

/* The client's bytes of three requests (streams 1, 3, 5) with a PING and
 * a body between them, and the server's: SETTINGS, its ACK, then
 * responses to 3, 1 and 5 with DATA. */
static void conversation(struct buf *cl, struct buf *sv)
{
	static const uint8_t ping[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	static const uint8_t body[] = "hello";

	cl->n = sv->n = 0;
	preface(cl);
	frame(cl, HEADERS, END_HEADERS | END_STREAM, 1, c41, sizeof(c41));
	frame(cl, PING, 0, 0, ping, 8);
	frame(cl, HEADERS, END_HEADERS, 3, c42, sizeof(c42));
	frame(cl, DATA, END_STREAM, 3, body, 5);
	frame(cl, SETTINGS, ACK, 0, NULL, 0);
	frame(cl, WINUP, 0, 0, "\0\0\x10\0", 4);
	frame(cl, HEADERS, END_HEADERS | END_STREAM, 5, c43, sizeof(c43));

	frame(sv, SETTINGS, 0, 0, "\0\x03\0\0\0\x64", 6); /* MAX_CONCURRENT_STREAMS 100 */
	frame(sv, SETTINGS, ACK, 0, NULL, 0);
	struct buf *b = malloc(sizeof(*b));
	b->n = 0;
	put_u8(b, 0x8d);                   /* :status 404 */
	put_u8(b, 0x76);                   /* server: nginx, indexed */
	put_u8(b, 5);
	put(b, "nginx", 5);
	frame(sv, HEADERS, END_HEADERS, 3, b->b, b->n);
	frame(sv, DATA, END_STREAM, 3, "not found", 9);
	b->n = 0;
	put_u8(b, 0x88);                   /* :status 200 */
	put_u8(b, 0xbe);                   /* server: nginx, from the table */
	hp_lit_name(b, 28, "5");           /* content-length: 5 */
	frame(sv, HEADERS, END_HEADERS, 1, b->b, b->n);
	frame(sv, DATA, END_STREAM, 1, "hello", 5);
	b->n = 0;
	put_u8(b, 0x88);
	frame(sv, HEADERS, END_HEADERS | END_STREAM, 5, b->b, b->n);
	free(b);
}

/* The events of the conversation, as read whole. */
static void check_conversation(struct conn *c)
{
	CHECK_EQ(c->cap.n, 6);
	if (c->cap.n != 6)
		return;
	struct ev *e = c->cap.ev;
	CHECK_EQ(e[0].kind, OBS_HTTP_REQUEST);
	CHECK_STR(e[0].name, "www.example.com");
	CHECK_STR(e[0].aux, "/");
	CHECK_STR(EVF(&e[0], RQ_METHOD), "GET");
	CHECK_STR(EVF(&e[0], RQ_VERSION), "HTTP/2");
	CHECK_STR(EVF(&e[0], RQ_HOST), "www.example.com");
	CHECK_STR(EVF(&e[0], RQ_WHY), "");
	CHECK_EQ(e[0].size, 9 + sizeof(c41));
	CHECK_EQ(e[0].flags, 0);
	/* the second's host is index 62 of the dynamic table */
	CHECK_EQ(e[1].kind, OBS_HTTP_REQUEST);
	CHECK_STR(e[1].name, "www.example.com");
	CHECK_STR(e[1].aux, "/");
	/* the third's host is index 63, its path /index.html */
	CHECK_STR(e[2].name, "www.example.com");
	CHECK_STR(e[2].aux, "/index.html");
	CHECK_STR(EVF(&e[2], RQ_METHOD), "GET");
	/* responses, each paired with its own stream's request */
	CHECK_EQ(e[3].kind, OBS_HTTP_RESPONSE);
	CHECK_EQ(e[3].type, 404);
	CHECK_STR(EVF(&e[3], RS_SERVER), "nginx");
	CHECK_STR(EVF(&e[3], RS_VERSION), "HTTP/2");
	CHECK_STR(EVF(&e[3], RS_RURI), "/");
	CHECK_EQ(e[4].type, 200);
	CHECK_STR(EVF(&e[4], RS_SERVER), "nginx");
	CHECK_STR(EVF(&e[4], RS_CL), "5");
	CHECK_STR(e[4].name, "www.example.com");
	CHECK_EQ(e[5].type, 200);
	CHECK_STR(e[5].aux, "/index.html");
	CHECK_STR(EVF(&e[5], RS_RMETHOD), "GET");
}

/* ---- tests ------------------------------------------------------------------ */

static void test_sniff(void)
{
	const uint8_t *p = (const uint8_t *)preface_s;

	CHECK_EQ(h2c_sniff(p, 24), 1);
	CHECK_EQ(h2c_sniff(p, 30), 1);
	for (size_t i = 0; i < 24; i++)
		CHECK_EQ(h2c_sniff(p, i), -1);
	CHECK_EQ(h2c_sniff((const uint8_t *)"PRI * HTTP/2.0\r\n\r\nSN\r\n\r\n", 24), 0);
	CHECK_EQ(h2c_sniff((const uint8_t *)"GET / HTTP/1.1\r\n", 16), 0);
	CHECK_EQ(h2c_sniff((const uint8_t *)"\x16\x03\x01", 3), 0);
}

static void test_claim(void)
{
	struct conn c;

	/* not the preface: not claimed, no state */
	conn_open(&c, 16384);
	CHECK_EQ(feed(&c, 0, "GET / HTTP/1.1\r\n\r\n", 18), MOD_NOT_MINE);
	CHECK(c.f.app_state == NULL);
	CHECK_EQ(c.f.app, APP_NONE);
	conn_close(&c);

	/* the preface in two pieces: claimed when whole */
	conn_open(&c, 16384);
	CHECK_EQ(feed(&c, 0, preface_s, 10), MOD_NOT_MINE);
	CHECK_EQ(feed(&c, 0, preface_s + 10, 14), MOD_OK);
	CHECK_EQ(c.f.app, APP_HTTP2);
	CHECK(h2c_heap(c.state) > 0);
	/* a flow another analyzer owns is not looked at */
	conn_close(&c);
	conn_open(&c, 16384);
	c.f.app = APP_HTTP;
	CHECK_EQ(feed(&c, 0, preface_s, 24), MOD_NOT_MINE);
	conn_close(&c);
	/* the server speaking first claims nothing */
	conn_open(&c, 16384);
	CHECK_EQ(feed(&c, 1, preface_s, 24), MOD_NOT_MINE);
	conn_close(&c);
}

/* A PROXY protocol header (v1, v2) before the preface, as nginx's `listen
 * ... proxy_protocol http2` takes it: skipped, the connection read after
 * it, in one segment or byte by byte. A PROXY header followed by HTTP/1 is
 * not claimed here. */
static void test_proxy_protocol(void)
{
	static const char v1[] = "PROXY TCP4 192.0.2.1 192.0.2.2 1111 84\r\n";
	static const uint8_t v2[28] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55,
				       0x49, 0x54, 0x0a, 0x21, 0x11, 0x00, 0x0c, 192, 0, 2, 1,
				       192, 0, 2, 2, 0x04, 0x57, 0x00, 0x54};
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv)),
		   *o = malloc(sizeof(*o));
	struct conn c;

	conversation(cl, sv);
	for (int v = 0; v < 2; v++) {
		for (int seg = 0; seg < 2; seg++) {
			o->n = 0;
			if (v == 0)
				put(o, v1, strlen(v1));
			else
				put(o, v2, sizeof(v2));
			put(o, cl->b, cl->n);
			conn_open(&c, 16384);
			if (seg)
				feed_segments(&c, 0, o->b, o->n, 1);
			else
				feed(&c, 0, o->b, o->n);
			feed(&c, 1, sv->b, sv->n);
			CHECK_EQ(c.f.app, APP_HTTP2);
			check_conversation(&c);
			CHECK_EQ(c.res[0], MOD_OK);
			CHECK_EQ(c.res[1], MOD_OK);
			conn_close(&c);
		}
	}
	o->n = 0;
	put(o, v1, strlen(v1));
	put(o, "GET / HTTP/1.1\r\n\r\n", 18);
	conn_open(&c, 16384);
	CHECK_EQ(feed(&c, 0, o->b, o->n), MOD_NOT_MINE);
	CHECK_EQ(c.f.app, APP_NONE);
	conn_close(&c);
	free(cl);
	free(sv);
	free(o);
}

static void test_conversation(void)
{
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv));
	struct conn c;

	conversation(cl, sv);
	conn_open(&c, 16384);
	feed(&c, 0, cl->b, cl->n);
	feed(&c, 1, sv->b, sv->n);
	check_conversation(&c);
	CHECK_EQ(c.res[0], MOD_OK);
	CHECK_EQ(c.res[1], MOD_OK);
	/* the window was slid past what was read */
	CHECK_EQ(c.f.st[0].consumed, 0);
	CHECK_EQ(c.f.st[0].len, 0);
	conn_close(&c);
	free(cl);
	free(sv);
}

/* Every split of each direction into two segments, and one byte at a time:
 * the same events. */
static void test_split(void)
{
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv));
	void *state = NULL;
	struct conn c;

	conversation(cl, sv);
	CHECK_EQ(h2c_module.init(NULL, &state), 0);
	for (size_t i = 1; i < cl->n; i++) {
		conn_init(&c, state, 16384);
		feed(&c, 0, cl->b, i);
		feed(&c, 0, cl->b + i, cl->n - i);
		feed(&c, 1, sv->b, sv->n);
		check_conversation(&c);
		conn_free(&c);
	}
	for (size_t i = 1; i < sv->n; i++) {
		conn_init(&c, state, 16384);
		feed(&c, 0, cl->b, cl->n);
		feed(&c, 1, sv->b, i);
		feed(&c, 1, sv->b + i, sv->n - i);
		check_conversation(&c);
		conn_free(&c);
	}
	conn_init(&c, state, 16384);
	feed_segments(&c, 0, cl->b, cl->n, 1);
	feed_segments(&c, 1, sv->b, sv->n, 1);
	check_conversation(&c);
	CHECK_EQ(c.res[0], MOD_OK);
	CHECK_EQ(c.res[1], MOD_OK);
	conn_free(&c);
	h2c_module.fini(state);
	free(cl);
	free(sv);
}

/* PADDED and PRIORITY on HEADERS, the block in a HEADERS and two
 * CONTINUATIONs, a host field standing for :authority. */
static void test_padded_continuation(void)
{
	struct buf *o = malloc(sizeof(*o)), *blk = malloc(sizeof(*blk));
	struct conn c;

	blk->n = 0;
	put_u8(blk, 0x83);                   /* :method POST */
	put_u8(blk, 0x86);                   /* :scheme http */
	hp_lit_name(blk, 4, "/api/v1/x");    /* :path */
	hp_lit_name(blk, 38, "example.org"); /* host */
	hp_lit_name(blk, 58, "grpc-go/1.0"); /* user-agent */
	hp_lit(blk, 0, "metadata-flavor", "Google");

	o->n = 0;
	preface(o);
	/* HEADERS: pad length 7, 5 bytes of priority, 4 block bytes, padding */
	head(o, 1 + 5 + 4 + 7, HEADERS, PADDED | PRIO, 1);
	put_u8(o, 7);
	put(o, "\x80\0\0\x03\x10", 5);
	put(o, blk->b, 4);
	put(o, NULL, 7);
	frame(o, CONT, 0, 1, blk->b + 4, 10);
	frame(o, CONT, END_HEADERS, 1, blk->b + 14, blk->n - 14);
	conn_open(&c, 16384);
	feed(&c, 0, o->b, o->n);
	CHECK_EQ(c.res[0], MOD_OK);
	CHECK_EQ(c.cap.n, 1);
	if (c.cap.n == 1) {
		struct ev *e = &c.cap.ev[0];
		CHECK_STR(e->name, "example.org");
		CHECK_STR(e->aux, "/api/v1/x");
		CHECK_STR(EVF(e, RQ_METHOD), "POST");
		CHECK_STR(EVF(e, RQ_UA), "grpc-go/1.0");
		CHECK_STR(EVF(e, RQ_FLAVOR), "1");
		CHECK_EQ(e->size, o->n - 24 - 9);
	}
	conn_close(&c);

	/* PADDED alone on a one-frame block; padding of 0 */
	o->n = 0;
	preface(o);
	head(o, 1 + sizeof(c41), HEADERS, PADDED | END_HEADERS, 1);
	put_u8(o, 0);
	put(o, c41, sizeof(c41));
	conn_open(&c, 16384);
	feed(&c, 0, o->b, o->n);
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(c.cap.ev[0].name, "www.example.com");
	CHECK_EQ(c.res[0], MOD_OK);
	conn_close(&c);

	/* trailers (a second block of stream 1) make no event; CONNECT takes
	 * its :authority as the target */
	o->n = 0;
	preface(o);
	frame(o, HEADERS, END_HEADERS, 1, c41, sizeof(c41));
	blk->n = 0;
	hp_lit(blk, 0, "grpc-status", "0");
	frame(o, HEADERS, END_HEADERS | END_STREAM, 1, blk->b, blk->n);
	blk->n = 0;
	hp_lit_name(blk, 2, "CONNECT");
	hp_lit_name(blk, 1, "proxy.test:443");
	frame(o, HEADERS, END_HEADERS, 3, blk->b, blk->n);
	conn_open(&c, 16384);
	feed(&c, 0, o->b, o->n);
	CHECK_EQ(c.res[0], MOD_OK);
	CHECK_EQ(c.cap.n, 2);
	CHECK_STR(c.cap.ev[1].aux, "proxy.test:443");
	CHECK_STR(c.cap.ev[1].name, "proxy.test:443");
	CHECK_STR(EVF(&c.cap.ev[1], RQ_METHOD), "CONNECT");
	conn_close(&c);
	free(o);
	free(blk);
}

/* A client's bytes: the preface, then bad, then a sound request that must
 * not be read (the direction stopped). */
static void bad_then_request(const struct buf *bad, int want_events, int want_res)
{
	struct buf *o = malloc(sizeof(*o));
	struct conn c;

	o->n = 0;
	preface(o);
	put(o, bad->b, bad->n);
	frame(o, HEADERS, END_HEADERS, 101, c41, sizeof(c41));
	conn_open(&c, 16384);
	feed(&c, 0, o->b, o->n);
	CHECK_EQ(c.cap.n, want_events);
	CHECK_EQ(c.res[0], want_res);
	/* stopped: later bytes count as ok and make nothing */
	CHECK_EQ(feed(&c, 0, o->b + 24, o->n - 24), MOD_OK);
	CHECK_EQ(c.cap.n, want_events);
	conn_close(&c);
	free(o);
}

static void test_bad_frames(void)
{
	struct buf *b = malloc(sizeof(*b));

	/* a frame longer than the peer allows (16384 without its SETTINGS) */
	b->n = 0;
	head(b, 16385, DATA, 0, 1);
	bad_then_request(b, 0, MOD_MALFORMED);
	b->n = 0;
	head(b, 0xffffff, HEADERS, END_HEADERS, 1);
	bad_then_request(b, 0, MOD_MALFORMED);
	/* padding longer than the frame */
	b->n = 0;
	head(b, 4, HEADERS, PADDED | END_HEADERS, 1);
	put(b, "\x04\x82\x86\x84", 4);
	bad_then_request(b, 0, MOD_MALFORMED);
	/* PADDED with no room for its length byte; PRIORITY with no room */
	b->n = 0;
	head(b, 0, HEADERS, PADDED | END_HEADERS, 1);
	bad_then_request(b, 0, MOD_MALFORMED);
	b->n = 0;
	head(b, 3, HEADERS, PRIO | END_HEADERS, 1);
	put(b, "\0\0\0", 3);
	bad_then_request(b, 0, MOD_MALFORMED);
	/* HEADERS on stream 0 */
	b->n = 0;
	frame(b, HEADERS, END_HEADERS, 0, c41, sizeof(c41));
	bad_then_request(b, 0, MOD_MALFORMED);
	/* a CONTINUATION outside a block */
	b->n = 0;
	frame(b, CONT, END_HEADERS, 1, c41, sizeof(c41));
	bad_then_request(b, 0, MOD_MALFORMED);
	/* a block continued by DATA, or by another stream's CONTINUATION */
	b->n = 0;
	frame(b, HEADERS, 0, 1, c41, 5);
	frame(b, DATA, 0, 1, "x", 1);
	bad_then_request(b, 0, MOD_MALFORMED);
	b->n = 0;
	frame(b, HEADERS, 0, 1, c41, 5);
	frame(b, CONT, END_HEADERS, 3, c41 + 5, sizeof(c41) - 5);
	bad_then_request(b, 0, MOD_MALFORMED);
	/* SETTINGS: not a multiple of 6, on a stream, an ACK with a payload,
	 * longer than the receiver allows */
	b->n = 0;
	frame(b, SETTINGS, 0, 0, "\0\x01\0\0\x10", 5);
	bad_then_request(b, 0, MOD_MALFORMED);
	b->n = 0;
	frame(b, SETTINGS, 0, 1, "\0\x01\0\0\x10\0", 6);
	bad_then_request(b, 0, MOD_MALFORMED);
	b->n = 0;
	frame(b, SETTINGS, ACK, 0, "\0\x01\0\0\x10\0", 6);
	bad_then_request(b, 0, MOD_MALFORMED);
	b->n = 0;
	head(b, 16386, SETTINGS, 0, 0);
	put(b, NULL, 16386);
	bad_then_request(b, 0, MOD_MALFORMED);
	/* unknown frame types and PRIORITY, RST_STREAM, GOAWAY are passed */
	b->n = 0;
	frame(b, 0xee, 0xff, 7, "abc", 3);
	frame(b, PRIORITY, 0, 1, "\0\0\0\0\x10", 5);
	frame(b, RST, 0, 1, "\0\0\0\x08", 4);
	frame(b, GOAWAY, 0, 0, "\0\0\0\0\0\0\0\0debug", 13);
	bad_then_request(b, 1, MOD_OK);
	free(b);
}

static void test_hpack_errors(void)
{
	struct buf *b = malloc(sizeof(*b));

	/* index 0 */
	b->n = 0;
	frame(b, HEADERS, END_HEADERS, 1, "\x82\x80", 2);
	bad_then_request(b, 1, MOD_MALFORMED);
	/* index 62 with an empty dynamic table: the head read so far (its
	 * :method) is emitted, malformed */
	b->n = 0;
	frame(b, HEADERS, END_HEADERS, 1, "\x82\xbe", 2);
	bad_then_request(b, 1, MOD_MALFORMED);
	/* a block that ends inside a field */
	b->n = 0;
	frame(b, HEADERS, END_HEADERS, 1, c41, sizeof(c41) - 3);
	bad_then_request(b, 1, MOD_MALFORMED);
	/* bad Huffman: EOS inside a string */
	b->n = 0;
	frame(b, HEADERS, END_HEADERS, 1, "\x82\x84\x41\x84\xff\xff\xff\xff", 8);
	bad_then_request(b, 1, MOD_MALFORMED);
	/* a table size update above the default 4096 without SETTINGS */
	b->n = 0;
	{
		struct buf *blk = malloc(sizeof(*blk));
		blk->n = 0;
		hp_int(blk, 0x20, 5, 8192);
		put(blk, c41, sizeof(c41));
		frame(b, HEADERS, END_HEADERS, 1, blk->b, blk->n);
		free(blk);
	}
	bad_then_request(b, 0, MOD_MALFORMED);
	free(b);

	/* the event of an HPACK error names it */
	struct buf *o = malloc(sizeof(*o));
	struct conn c;
	o->n = 0;
	preface(o);
	frame(o, HEADERS, END_HEADERS, 1, "\x82\x86\x84\xbe", 4);
	conn_open(&c, 16384);
	feed(&c, 0, o->b, o->n);
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "HPACK decoding error");
	CHECK_STR(EVF(&c.cap.ev[0], RQ_METHOD), "GET");
	CHECK_EQ(c.cap.ev[0].flags, OBS_F_MALFORMED);
	conn_close(&c);
	free(o);
}

/* A request's header block in frames no longer than 16384 (HEADERS, then
 * CONTINUATIONs), with one more cut at cut when it is not 0. */
static void block_out(struct buf *o, uint32_t sid, const uint8_t *blk, size_t n, size_t cut)
{
	size_t at = 0;

	while (at < n || at == 0) {
		size_t k = n - at < 16384 ? n - at : 16384;
		if (cut > at && cut < at + k)
			k = cut - at;
		frame(o, at ? CONT : HEADERS, (at + k == n ? END_HEADERS : 0) | (at ? 0 : END_STREAM),
		      sid, blk + at, k);
		at += k;
		if (n == 0)
			break;
	}
}

/* GET http://host/path, literals without indexing. */
static void plain_req(struct buf *blk, const char *host, const char *path)
{
	put(blk, "\x82\x86", 2);
	hp_lit_name(blk, 4, path);
	hp_lit_name(blk, 1, host);
}

/*
 * HPACK that nghttp2 refuses and nginx 1.22 serves (pcaps/review20/h2c):
 * a Huffman string that ends with 8 to 29 bits of 1s (padding over 7
 * bits), in a value or a name. The request is reported with its other
 * fields, marked; its field is lost; the inflater is made anew and the
 * requests after it are read: unmarked when the table was empty and the
 * lost field not indexed, else marked "HPACK table unknown", the entries
 * added since read right, an older one an HPACK error (the stop). Padding
 * of 30 or more 1s (EOS), or not all 1s, still stops the direction.
 */
static void test_huffman_long_padding(void)
{
	static const char *const pads[] = {"\x82\x1f\xff", "\x83\x1f\xff\xff", "\x84\x1f\xff\xff\xff"};
	struct buf *o = malloc(sizeof(*o)), *blk = malloc(sizeof(*blk));
	struct conn c;

	for (int p = 0; p < 3; p++)
		for (int name = 0; name < 2; name++)
			for (int seg = 0; seg < 3; seg++) {
				/* x-a: <"a", padded> (or <"a", padded>: v) */
				o->n = blk->n = 0;
				preface(o);
				plain_req(blk, "www.hidden.test", "/bad");
				put_u8(blk, 0x00);
				if (name) {
					put(blk, pads[p], strlen(pads[p]));
					put(blk, "\x01v", 2);
				} else {
					put(blk, "\x03x-a", 4);
					put(blk, pads[p], strlen(pads[p]));
				}
				put(blk, "\x00\x03x-b\x01w", 7); /* a field after it */
				/* seg 2: a CONTINUATION cut inside the string */
				block_out(o, 1, blk->b, blk->n, seg == 2 ? blk->n - 8 : 0);
				blk->n = 0;
				plain_req(blk, "www.after.test", "/after");
				block_out(o, 3, blk->b, blk->n, 0);
				conn_open(&c, 16384);
				if (seg == 1)
					feed_segments(&c, 0, o->b, o->n, 1);
				else
					feed(&c, 0, o->b, o->n);
				CHECK_EQ(c.res[0], MOD_MALFORMED);
				CHECK_EQ(c.cap.n, 2);
				if (c.cap.n == 2) {
					struct ev *e = c.cap.ev;
					CHECK_STR(e[0].name, "www.hidden.test");
					CHECK_STR(e[0].aux, "/bad");
					CHECK_STR(EVF(&e[0], RQ_WHY), "Huffman padding longer than 7 bits");
					CHECK_EQ(e[0].flags, OBS_F_MALFORMED);
					CHECK_STR(e[1].name, "www.after.test");
					CHECK_STR(e[1].aux, "/after");
					CHECK_EQ(e[1].flags, 0); /* the table was empty: known */
				}
				conn_close(&c);
			}

	/* the table held an entry (RFC 7541 C.4.1 adds www.example.com):
	 * the requests after the padding are marked; an entry added since is
	 * read right (62), the old one (63 then) is an HPACK error */
	for (int idx = 0; idx < 2; idx++) {
		o->n = blk->n = 0;
		preface(o);
		frame(o, HEADERS, END_HEADERS | END_STREAM, 1, c41, sizeof(c41));
		plain_req(blk, "www.hidden.test", "/bad");
		if (idx) {
			/* empty table before, but the lost field was to be indexed */
			o->n = 0;
			preface(o);
		}
		put(blk, idx ? "\x40\x03x-a\x82\x1f\xff" : "\x00\x03x-a\x82\x1f\xff", 8);
		frame(o, HEADERS, END_HEADERS | END_STREAM, 3, blk->b, blk->n);
		blk->n = 0;
		put(blk, "\x82\x86\x84\x41\x09n.example", 14); /* n.example: 62 */
		frame(o, HEADERS, END_HEADERS | END_STREAM, 5, blk->b, blk->n);
		frame(o, HEADERS, END_HEADERS | END_STREAM, 7, "\x82\x86\x84\xbe", 4);
		frame(o, HEADERS, END_HEADERS | END_STREAM, 9, "\x82\x86\x84\xbf", 4);
		frame(o, HEADERS, END_HEADERS | END_STREAM, 11, "\x82\x86\x84\xbe", 4);
		conn_open(&c, 16384);
		feed(&c, 0, o->b, o->n);
		CHECK_EQ(c.res[0], MOD_MALFORMED);
		CHECK_EQ(c.cap.n, 5 - idx);
		if (c.cap.n == 5 - idx) {
			struct ev *e = c.cap.ev + (1 - idx);
			CHECK_STR(e[0].name, "www.hidden.test");
			CHECK_STR(EVF(&e[0], RQ_WHY), "Huffman padding longer than 7 bits");
			CHECK_STR(e[1].name, "n.example");
			CHECK_STR(EVF(&e[1], RQ_WHY),
				  "HPACK table unknown (a Huffman string before could not be decoded)");
			CHECK_EQ(e[1].flags, OBS_F_MALFORMED);
			CHECK_STR(e[2].name, "n.example");
			CHECK_EQ(e[2].flags, OBS_F_MALFORMED);
			/* 63: an entry of the old table: the HPACK error, the head
			 * so far emitted, and the stop (stream 11 unread) */
			CHECK_STR(e[3].name, "");
			CHECK_EQ(e[3].flags, OBS_F_MALFORMED);
		}
		conn_close(&c);
	}

	/* 32 bits of 1s (EOS), or padding of 0s: still an error that stops */
	for (int k = 0; k < 2; k++) {
		o->n = blk->n = 0;
		preface(o);
		plain_req(blk, "www.hidden.test", "/bad");
		put(blk, k ? "\x00\x03x-a\x81\x18" : "\x00\x03x-a\x84\xff\xff\xff\xff", k ? 7 : 10);
		frame(o, HEADERS, END_HEADERS | END_STREAM, 1, blk->b, blk->n);
		frame(o, HEADERS, END_HEADERS | END_STREAM, 3, c41, sizeof(c41));
		conn_open(&c, 16384);
		feed(&c, 0, o->b, o->n);
		CHECK_EQ(c.cap.n, 1);
		CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "HPACK decoding error");
		conn_close(&c);
	}
	free(o);
	free(blk);
}

/*
 * A string longer than 65536 bytes, which nghttp2 refuses and nginx with
 * large_client_header_buffers 4 128k serves (pcaps/review20/h2c): not
 * decoded, the request reported with its other fields, marked; its length
 * held across pieces and CONTINUATIONs; the requests after it read with
 * the table as the server has it: unchanged, or emptied when the field
 * was to be indexed (its entry is larger than any table: naming the entry
 * before it is then an HPACK error, as nginx's GOAWAY says it is).
 */
static void test_long_string(void)
{
	struct buf *o = malloc(sizeof(*o)), *blk = malloc(sizeof(*blk));
	struct conn c;
	static char big[70001];

	memset(big, 'b', sizeof(big) - 1);
	/* value; value, indexed; name; name, indexed, with an empty value */
	for (int kind = 0; kind < 4; kind++)
		for (int seg = 0; seg < 3; seg++) {
			size_t at;
			o->n = blk->n = 0;
			preface(o);
			/* an entry the server keeps (62): kept.example */
			put(blk, "\x82\x86\x84\x41\x0ckept.example", 17);
			frame(o, HEADERS, END_HEADERS | END_STREAM, 1, blk->b, blk->n);
			blk->n = 0;
			plain_req(blk, "www.hidden.test", "/bad");
			at = blk->n;
			put_u8(blk, kind == 1 || kind == 3 ? 0x40 : 0x00);
			if (kind >= 2) {
				hp_int(blk, 0, 7, 70000);
				put(blk, big, 70000);
				put(blk, kind == 3 ? "\x00" : "\x01v", kind == 3 ? 1 : 2);
			} else {
				put(blk, "\x05x-big", 6);
				hp_int(blk, 0, 7, 70000);
				put(blk, big, 70000);
			}
			put(blk, "\x00\x03x-b\x01w", 7);
			/* seg 2: a CONTINUATION cut inside the long length */
			block_out(o, 3, blk->b, blk->n, seg == 2 ? at + (kind >= 2 ? 3 : 8) : 0);
			/* then 62: kept.example, unless the table was emptied */
			frame(o, HEADERS, END_HEADERS | END_STREAM, 5, "\x82\x86\x84\xbe", 4);
			blk->n = 0;
			plain_req(blk, "www.after.test", "/after");
			frame(o, HEADERS, END_HEADERS | END_STREAM, 7, blk->b, blk->n);
			conn_open(&c, 16384);
			/* in segments (the window is 16384) */
			feed_segments(&c, 0, o->b, o->n, seg == 1 ? 7 : 1460);
			CHECK_EQ(c.res[0], MOD_MALFORMED);
			int emptied = kind == 1 || kind == 3;
			CHECK_EQ(c.cap.n, emptied ? 3 : 4);
			if (c.cap.n >= 2) {
				struct ev *e = c.cap.ev;
				CHECK_STR(e[0].name, "kept.example");
				CHECK_STR(e[1].name, "www.hidden.test");
				CHECK_STR(e[1].aux, "/bad");
				CHECK_STR(EVF(&e[1], RQ_WHY),
					  "header field longer than 65536 bytes not decoded");
				CHECK_EQ(e[1].flags, OBS_F_MALFORMED);
			}
			if (emptied && c.cap.n == 3) {
				/* 62 is gone, as nginx has it (GOAWAY): the error */
				CHECK_STR(c.cap.ev[2].name, "");
				CHECK_STR(EVF(&c.cap.ev[2], RQ_WHY), "HPACK decoding error");
			}
			if (c.cap.n == 4) {
				struct ev *e = c.cap.ev;
				CHECK_STR(e[2].name, "kept.example");
				CHECK_EQ(e[2].flags, 0);
				CHECK_STR(e[3].name, "www.after.test");
				CHECK_EQ(e[3].flags, 0);
			}
			conn_close(&c);
		}

	/* emptied, then an entry added and named: read right */
	o->n = blk->n = 0;
	preface(o);
	put(blk, "\x82\x86\x84\x41\x0ckept.example", 17);
	frame(o, HEADERS, END_HEADERS | END_STREAM, 1, blk->b, blk->n);
	blk->n = 0;
	plain_req(blk, "www.hidden.test", "/bad");
	put(blk, "\x40\x05x-big", 7);
	hp_int(blk, 0, 7, 70000);
	put(blk, big, 70000);
	put(blk, "\x41\x09n.example", 11);
	block_out(o, 3, blk->b, blk->n, 0);
	frame(o, HEADERS, END_HEADERS | END_STREAM, 5, "\x82\x86\x84\xbe", 4);
	conn_open(&c, 16384);
	feed_segments(&c, 0, o->b, o->n, 1460);
	CHECK_EQ(c.cap.n, 3);
	if (c.cap.n == 3) {
		CHECK_STR(c.cap.ev[1].name, "www.hidden.test"); /* the first :authority */
		CHECK_STR(c.cap.ev[2].name, "n.example");
		CHECK_EQ(c.cap.ev[2].flags, 0);
	}
	conn_close(&c);
	free(o);
	free(blk);
}

/*
 * A dynamic table size update after a block's first field (review F8):
 * nginx takes it and applies it in place, nghttp2 alone refuses it. The
 * request is read whole (malformed: RFC 7541 4.2), the table changes where
 * the update stands, and the requests after it are read; in one segment
 * and byte by byte (the walk across pieces), also after a long literal
 * whose length takes continuation bytes.
 */
static void test_midblock_size_update(void)
{
	struct buf *o = malloc(sizeof(*o)), *blk = malloc(sizeof(*blk));
	struct conn c;
	char ua[300];

	memset(ua, 'u', sizeof(ua) - 1);
	ua[sizeof(ua) - 1] = '\0';
	for (int seg = 0; seg < 2; seg++) {
		/* review F8's block: GET, update to 4096, then the rest */
		o->n = blk->n = 0;
		preface(o);
		put(blk, "\x82\x3f\xe1\x1f\x86", 5);
		hp_lit_name(blk, 1, "www.hidden.test");
		hp_lit_name(blk, 4, "/h2-tsu-first");
		frame(o, HEADERS, END_HEADERS | END_STREAM, 1, blk->b, blk->n);
		/* stream 3: a literal with indexing adds a.example (62), an
		 * update to 0 empties the table and one to 4096 (two in a
		 * row: one cut) opens it again, then b.example is added, so
		 * stream 5's index 62 is b.example, as nginx reads it (a.example
		 * without the update); a 299-byte user-agent before them */
		blk->n = 0;
		put(blk, "\x82\x86\x84", 3);
		hp_lit_name(blk, 58, ua);
		put_u8(blk, 0x41);
		hp_int(blk, 0, 7, 9);
		put(blk, "a.example", 9);
		hp_int(blk, 0x20, 5, 0);
		hp_int(blk, 0x20, 5, 4096);
		put_u8(blk, 0x41);
		hp_int(blk, 0, 7, 9);
		put(blk, "b.example", 9);
		frame(o, HEADERS, END_HEADERS | END_STREAM, 3, blk->b, blk->n);
		frame(o, HEADERS, END_HEADERS | END_STREAM, 5, "\x82\x86\x84\xbe", 4);
		/* and review F8's request 2 */
		blk->n = 0;
		put(blk, "\x82\x86", 2);
		hp_lit_name(blk, 1, "www.hidden.test");
		hp_lit_name(blk, 4, "/h2-after-tsu");
		frame(o, HEADERS, END_HEADERS | END_STREAM, 7, blk->b, blk->n);
		conn_open(&c, 16384);
		if (seg)
			feed_segments(&c, 0, o->b, o->n, 1);
		else
			feed(&c, 0, o->b, o->n);
		CHECK_EQ(c.res[0], MOD_MALFORMED);
		CHECK_EQ(c.cap.n, 4);
		if (c.cap.n == 4) {
			struct ev *e = c.cap.ev;
			CHECK_STR(e[0].name, "www.hidden.test");
			CHECK_STR(e[0].aux, "/h2-tsu-first");
			CHECK_STR(EVF(&e[0], RQ_METHOD), "GET");
			CHECK_STR(EVF(&e[0], RQ_WHY), "dynamic table size update after a field");
			CHECK_EQ(e[0].flags, OBS_F_MALFORMED);
			CHECK_STR(e[1].name, "a.example"); /* the first :authority */
			CHECK_STR(EVF(&e[1], RQ_UA), ua);
			CHECK_EQ(e[1].flags, OBS_F_MALFORMED);
			CHECK_STR(e[2].name, "b.example");
			CHECK_EQ(e[2].flags, 0);
			CHECK_STR(e[3].name, "www.hidden.test");
			CHECK_STR(e[3].aux, "/h2-after-tsu");
			CHECK_EQ(e[3].flags, 0);
		}
		conn_close(&c);
	}

	/* an update after a field is bound as one at the start: above the
	 * table the peer allows (4096 without SETTINGS) it is an HPACK
	 * error, the head read so far emitted */
	o->n = blk->n = 0;
	preface(o);
	put(blk, "\x82", 1);
	hp_int(blk, 0x20, 5, 8192);
	put(blk, "\x86\x84", 2);
	frame(o, HEADERS, END_HEADERS, 1, blk->b, blk->n);
	frame(o, HEADERS, END_HEADERS, 3, c41, sizeof(c41));
	conn_open(&c, 16384);
	feed(&c, 0, o->b, o->n);
	CHECK_EQ(c.res[0], MOD_MALFORMED);
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(EVF(&c.cap.ev[0], RQ_METHOD), "GET");
	conn_close(&c);

	/* an update after the fields of the HEADERS, its integer cut
	 * between the HEADERS and a CONTINUATION; and one that opens the
	 * CONTINUATION (the part before it already fed) */
	for (int k = 0; k < 2; k++) {
		o->n = 0;
		preface(o);
		if (k == 0) {
			frame(o, HEADERS, 0, 1, "\x82\x86\x3f", 3);
			frame(o, CONT, END_HEADERS, 1, "\xe1\x1f\x84\x41\x01x", 6);
		} else {
			frame(o, HEADERS, 0, 1, "\x82\x86", 2);
			frame(o, CONT, END_HEADERS, 1, "\x3f\xe1\x1f\x84\x41\x01x", 7);
		}
		frame(o, HEADERS, END_HEADERS, 3, "\x82\x86\x84\xbe", 4);
		conn_open(&c, 16384);
		feed(&c, 0, o->b, o->n);
		CHECK_EQ(c.res[0], MOD_MALFORMED);
		CHECK_EQ(c.cap.n, 2);
		if (c.cap.n == 2) {
			CHECK_STR(c.cap.ev[0].name, "x");
			CHECK_STR(c.cap.ev[0].aux, "/");
			CHECK_STR(c.cap.ev[1].name, "x");
		}
		conn_close(&c);
	}
	free(o);
	free(blk);
}

/*
 * A server's PUSH_PROMISE (PADDED, continued by a CONTINUATION): the
 * promised request is reported as a request, seen from the client's side,
 * and the pushed response on the promised stream pairs with it. Its block
 * is decoded with the server's table: an entry it adds (server: pushsrv,
 * index 62) is the one the pushed response names. A promised id that is
 * odd is malformed and pairs nothing; a client's PUSH_PROMISE makes no
 * event.
 */
static void test_push_promise(void)
{
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv)),
		   *blk = malloc(sizeof(*blk));
	struct conn c;

	cl->n = sv->n = blk->n = 0;
	preface(cl);
	frame(cl, HEADERS, END_HEADERS | END_STREAM, 1, c41, sizeof(c41));
	frame(sv, SETTINGS, 0, 0, NULL, 0);
	/* PUSH_PROMISE on stream 1 for stream 2: pad length 3, promised id,
	 * the first part of the block, the padding; then a CONTINUATION */
	put_u8(blk, 3);
	put(blk, "\0\0\0\x02\x82\x86", 6);
	hp_lit_name(blk, 1, "push.example");
	put(blk, NULL, 3);
	frame(sv, PUSH, PADDED, 1, blk->b, blk->n);
	blk->n = 0;
	hp_lit_name(blk, 4, "/style.css");
	put_u8(blk, 0x76);                 /* server: pushsrv, indexed (62) */
	hp_int(blk, 0, 7, 7);
	put(blk, "pushsrv", 7);
	frame(sv, CONT, END_HEADERS, 1, blk->b, blk->n);
	frame(sv, HEADERS, END_HEADERS, 1, "\x88", 1);
	frame(sv, DATA, END_STREAM, 1, "<html>", 6);
	frame(sv, HEADERS, END_HEADERS, 2, "\x88\xbe", 2);
	frame(sv, DATA, END_STREAM, 2, "p{}", 3);
	/* a promise of an odd stream: reported, malformed, pairs nothing */
	blk->n = 0;
	put(blk, "\0\0\0\x05\x82\x86\x84", 7);
	hp_lit_name(blk, 1, "odd.example");
	frame(sv, PUSH, END_HEADERS, 1, blk->b, blk->n);
	frame(sv, HEADERS, END_HEADERS, 5, "\x88", 1);
	for (int seg = 0; seg < 2; seg++) {
		conn_open(&c, 16384);
		feed(&c, 0, cl->b, cl->n);
		if (seg)
			feed_segments(&c, 1, sv->b, sv->n, 1);
		else
			feed(&c, 1, sv->b, sv->n);
		CHECK_EQ(c.cap.n, 6);
		if (c.cap.n == 6) {
			struct ev *e = c.cap.ev;
			CHECK_EQ(e[0].kind, OBS_HTTP_REQUEST);
			CHECK_EQ(e[1].kind, OBS_HTTP_REQUEST); /* the promised request */
			CHECK_EQ(e[1].dir, 0);
			CHECK_STR(e[1].name, "push.example");
			CHECK_STR(e[1].aux, "/style.css");
			CHECK_STR(EVF(&e[1], RQ_METHOD), "GET");
			CHECK_STR(EVF(&e[1], RQ_VERSION), "HTTP/2");
			CHECK_STR(EVF(&e[1], RQ_WHY), "");
			CHECK_EQ(e[1].flags, 0);
			CHECK_EQ(e[1].size, 9 + 1 + 4 + 2 + 14 + 3 + 9 + 12 + 9);
			CHECK_EQ(e[2].kind, OBS_HTTP_RESPONSE);
			CHECK_EQ(e[2].dir, 1);
			CHECK_STR(e[2].name, "www.example.com");
			/* the pushed response: paired, its server from the entry
			 * the promise's block added */
			CHECK_EQ(e[3].kind, OBS_HTTP_RESPONSE);
			CHECK_EQ(e[3].type, 200);
			CHECK_STR(e[3].name, "push.example");
			CHECK_STR(e[3].aux, "/style.css");
			CHECK_STR(EVF(&e[3], RS_SERVER), "pushsrv");
			CHECK_STR(EVF(&e[3], RS_RMETHOD), "GET");
			CHECK_EQ(e[3].flags, 0);
			CHECK_EQ(e[4].kind, OBS_HTTP_REQUEST);
			CHECK_STR(e[4].name, "odd.example");
			CHECK_STR(EVF(&e[4], RQ_WHY), "promised stream id not even");
			CHECK_EQ(e[4].flags, OBS_F_MALFORMED);
			CHECK_EQ(e[5].kind, OBS_HTTP_RESPONSE);
			CHECK_STR(e[5].name, "");
		}
		CHECK_EQ(c.res[1], MOD_MALFORMED);
		conn_close(&c);
	}

	/* a client's PUSH_PROMISE: decoded (the client's table), no event */
	cl->n = blk->n = 0;
	preface(cl);
	put(blk, "\0\0\0\x02", 4);
	put(blk, c41, sizeof(c41));
	frame(cl, PUSH, END_HEADERS, 1, blk->b, blk->n);
	frame(cl, HEADERS, END_HEADERS, 3, c42, sizeof(c42)); /* names index 62 */
	conn_open(&c, 16384);
	feed(&c, 0, cl->b, cl->n);
	CHECK_EQ(c.cap.n, 1);
	CHECK_STR(c.cap.ev[0].name, "www.example.com");
	conn_close(&c);
	free(cl);
	free(sv);
	free(blk);
}

/* SETTINGS_HEADER_TABLE_SIZE from the server binds the client's blocks once
 * the client acknowledged it; the cap holds whatever it says. */
static void test_table_size(void)
{
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv)),
		   *blk = malloc(sizeof(*blk));
	struct conn c;
	static const uint32_t sizes[] = {8192, 65536, 65537, 100000};
	static const int ok[] = {1, 1, 0, 0};

	for (size_t k = 0; k < 4; k++) {
		uint8_t set[6] = {0, 1, 0, 0x01, 0x86, 0xa0}; /* 100000 */

		sv->n = cl->n = blk->n = 0;
		frame(sv, SETTINGS, 0, 0, set, 6);
		preface(cl);
		frame(cl, SETTINGS, ACK, 0, NULL, 0);
		hp_int(blk, 0x20, 5, sizes[k]);
		put(blk, c41, sizeof(c41));
		frame(cl, HEADERS, END_HEADERS, 1, blk->b, blk->n);
		frame(cl, HEADERS, END_HEADERS, 3, c42, sizeof(c42));
		conn_open(&c, 16384);
		feed(&c, 0, preface_s, 24);
		feed(&c, 1, sv->b, sv->n);
		feed(&c, 0, cl->b + 24, cl->n - 24);
		CHECK_EQ(c.res[0], ok[k] ? MOD_OK : MOD_MALFORMED);
		CHECK_EQ(c.cap.n, ok[k] ? 2 : 0);
		conn_close(&c);
	}

	/* before the client's ACK, the old bound (4096) holds */
	sv->n = cl->n = blk->n = 0;
	frame(sv, SETTINGS, 0, 0, "\0\x01\0\0\x20\0", 6); /* 8192 */
	preface(cl);
	hp_int(blk, 0x20, 5, 8192);
	put(blk, c41, sizeof(c41));
	frame(cl, HEADERS, END_HEADERS, 1, blk->b, blk->n);
	conn_open(&c, 16384);
	feed(&c, 0, preface_s, 24);
	feed(&c, 1, sv->b, sv->n);
	feed(&c, 0, cl->b + 24, cl->n - 24);
	CHECK_EQ(c.res[0], MOD_MALFORMED);
	conn_close(&c);

	/* a server that shrinks the table to 0: after the ACK the client must
	 * say so first; the entry it had is gone */
	sv->n = cl->n = blk->n = 0;
	frame(sv, SETTINGS, 0, 0, "\0\x01\0\0\0\0", 6);
	preface(cl);
	frame(cl, HEADERS, END_HEADERS, 1, c41, sizeof(c41));
	frame(cl, SETTINGS, ACK, 0, NULL, 0);
	hp_int(blk, 0x20, 5, 0);
	put(blk, "\x82\x86\x84", 3);
	hp_lit_name(blk, 1, "b.example");
	frame(cl, HEADERS, END_HEADERS, 3, blk->b, blk->n);
	conn_open(&c, 16384);
	feed(&c, 0, cl->b, 24 + 9 + 9 + sizeof(c41));
	feed(&c, 1, sv->b, sv->n);
	feed(&c, 0, cl->b + 24 + 9 + 9 + sizeof(c41), cl->n - (24 + 9 + 9 + sizeof(c41)));
	CHECK_EQ(c.res[0], MOD_OK);
	CHECK_EQ(c.cap.n, 2);
	CHECK_STR(c.cap.ev[1].name, "b.example");
	conn_close(&c);

	/* a larger SETTINGS_MAX_FRAME_SIZE from the server lets the client's
	 * frames be longer */
	sv->n = cl->n = 0;
	frame(sv, SETTINGS, 0, 0, "\0\x05\0\x01\0\0", 6); /* 65536 */
	preface(cl);
	head(cl, 20000, DATA, 0, 1);
	put(cl, NULL, 20000);
	frame(cl, HEADERS, END_HEADERS, 1, c41, sizeof(c41));
	conn_open(&c, 16384);
	feed(&c, 0, preface_s, 24);
	feed(&c, 1, sv->b, sv->n);
	feed_segments(&c, 0, cl->b + 24, cl->n - 24, 1400);
	CHECK_EQ(c.res[0], MOD_OK);
	CHECK_EQ(c.cap.n, 1);
	conn_close(&c);
	free(cl);
	free(sv);
	free(blk);
}

/* SETTINGS of any length the receiver allows (here 2,730 entries, 16,380
 * bytes, and 300 of unknown identifiers as the review's nginx capture
 * sent), read entry by entry as the bytes come, in one segment or byte by
 * byte: the requests after them are read, and the table size and frame
 * size they hold, repeated (the last counts), take effect. */
static void test_big_settings(void)
{
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv)),
		   *blk = malloc(sizeof(*blk));
	static uint8_t pl[16380], body[20000];
	struct conn c;

	for (int big = 0; big < 2; big++) {
		size_t n = big ? sizeof(pl) : 1800;
		for (size_t i = 0; i < n; i += 6)
			memcpy(pl + i, "\x40\x00\0\0\0\x01", 6); /* unknown 0x4000 */
		/* the server says MAX_FRAME_SIZE 16384 then 32768 (the largest
		 * counts) and HEADER_TABLE_SIZE 100000 then 0: the last, 0,
		 * is the client encoder's bound */
		memcpy(pl + 6, "\0\x05\0\0\x40\0", 6);
		memcpy(pl + 12, "\0\x05\0\0\x80\0", 6);
		memcpy(pl + 18, "\0\x01\0\x01\x86\xa0", 6);
		memcpy(pl + n - 6, "\0\x01\0\0\0\0", 6);
		sv->n = cl->n = 0;
		frame(sv, SETTINGS, 0, 0, pl, n);
		put(cl, preface_s, 24);
		frame(cl, SETTINGS, 0, 0, pl, n);
		frame(cl, HEADERS, END_HEADERS | END_STREAM, 1, c41, sizeof(c41));
		frame(cl, SETTINGS, ACK, 0, NULL, 0);
		/* a frame of 20000 bytes: the server allows it */
		frame(cl, DATA, 0, 1, body, sizeof(body));
		/* the table size 0 the client took: www.example.com (index 62)
		 * cannot be in the table, so the request literal again */
		blk->n = 0;
		put(blk, "\x20\x82\x86\x84", 4);
		hp_lit_name(blk, 1, "www.hidden.test");
		frame(cl, HEADERS, END_HEADERS | END_STREAM, 3, blk->b, blk->n);
		for (int seg = 0; seg < 2; seg++) {
			conn_open(&c, 65536);
			feed(&c, 1, sv->b, sv->n);
			if (seg)
				feed_segments(&c, 0, cl->b, cl->n, 1);
			else
				feed_segments(&c, 0, cl->b, cl->n, 1448);
			CHECK_EQ(c.res[0], MOD_OK);
			CHECK_EQ(c.res[1], MOD_OK);
			CHECK_EQ(c.cap.n, 2);
			if (c.cap.n == 2) {
				CHECK_STR(c.cap.ev[0].name, "www.example.com");
				CHECK_STR(c.cap.ev[1].name, "www.hidden.test");
				CHECK_EQ(c.cap.ev[1].flags, 0);
			}
			conn_close(&c);
		}
	}
	/* cut in the middle of an entry by the window's end: truncated */
	cl->n = 0;
	put(cl, preface_s, 24);
	frame(cl, SETTINGS, 0, 0, pl, 6000);
	conn_open(&c, 4099);
	feed(&c, 0, cl->b, cl->n);
	CHECK_EQ(c.res[0], MOD_TRUNCATED);
	conn_close(&c);
	free(cl);
	free(sv);
	free(blk);
}

/* Header blocks of any length: fed to the inflater frame by frame as their
 * bytes come, never held whole. A block of 20 KB of fields over three
 * frames, one of 2,000 empty CONTINUATIONs around a small block (the
 * review's nginx capture), and one cut into 1-byte CONTINUATIONs (fields
 * split between frames) are read, in one segment, in segments, byte by
 * byte, and the request after each too; the inflaters' memory does not
 * grow with the block. A block cut by the window's end (a segment longer
 * than it): what was decoded is emitted, truncated. */
static void test_block_bound(void)
{
	struct buf *o = malloc(sizeof(*o)), *blk = malloc(sizeof(*blk));
	static char big[1001];
	struct conn c;

	memset(big, 'v', 1000);
	blk->n = 0;
	put(blk, c41, sizeof(c41));
	for (int i = 0; i < 20; i++)
		hp_lit(blk, 0, "x-filler", big);
	for (int kind = 0; kind < 3; kind++) {
		o->n = 0;
		preface(o);
		if (kind == 0) {
			frame(o, HEADERS, PADDED, 1, NULL, 0);
			o->n -= 9;
			head(o, 8000 + 1 + 7, HEADERS, PADDED, 1);
			put_u8(o, 7);
			put(o, blk->b, 8000);
			put(o, "padding", 7);
			frame(o, CONT, 0, 1, blk->b + 8000, 8000);
			frame(o, CONT, END_HEADERS, 1, blk->b + 16000, blk->n - 16000);
		} else if (kind == 1) {
			frame(o, HEADERS, END_STREAM, 1, c41, 5);
			for (int i = 0; i < 1999; i++)
				frame(o, CONT, 0, 1, NULL, 0);
			frame(o, CONT, END_HEADERS, 1, c41 + 5, sizeof(c41) - 5);
		} else {
			frame(o, HEADERS, 0, 1, NULL, 0);
			for (size_t i = 0; i < sizeof(c41); i++)
				frame(o, CONT, i + 1 == sizeof(c41) ? END_HEADERS : 0, 1, c41 + i, 1);
		}
		size_t first = o->n - 24 - 9;
		frame(o, HEADERS, END_HEADERS, 3, c42, sizeof(c42));
		for (int seg = 0; seg < 3; seg++) {
			conn_open(&c, kind ? 16384 : 4096);
			if (seg == 0 && kind == 2)
				feed(&c, 0, o->b, o->n);
			else
				feed_segments(&c, 0, o->b, o->n, seg == 2 ? 1 : 1400);
			CHECK_EQ(c.res[0], MOD_OK);
			CHECK_EQ(c.cap.n, 2);
			if (c.cap.n == 2) {
				CHECK_STR(c.cap.ev[0].name, "www.example.com");
				CHECK_STR(c.cap.ev[0].aux, "/");
				CHECK_EQ(c.cap.ev[0].flags, 0);
				CHECK_EQ(c.cap.ev[0].size, first);
				CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "");
				CHECK_EQ(c.cap.ev[1].flags, 0);
				CHECK_STR(c.cap.ev[1].name, "www.example.com");
			}
			CHECK(h2c_heap(c.state) < 16384);
			conn_close(&c);
		}
	}

	/* 200 KB of fields in one block: the memory stays what it was */
	o->n = 0;
	preface(o);
	frame(o, HEADERS, 0, 1, c41, sizeof(c41));
	for (int i = 0; i < 12; i++) {
		blk->n = 0;
		for (int k = 0; k < 16; k++)
			hp_lit(blk, 0, "x-filler", big);
		frame(o, CONT, i == 11 ? END_HEADERS : 0, 1, blk->b, blk->n);
	}
	frame(o, HEADERS, END_HEADERS, 3, c42, sizeof(c42));
	conn_open(&c, 16384);
	feed_segments(&c, 0, o->b, o->n, 1448);
	CHECK_EQ(c.res[0], MOD_OK);
	CHECK_EQ(c.cap.n, 2);
	CHECK(h2c_heap(c.state) < 16384);
	conn_close(&c);

	/* one segment longer than the 4 KiB window, inside the block */
	blk->n = 0;
	put(blk, c41, sizeof(c41));
	for (int i = 0; i < 20; i++)
		hp_lit(blk, 0, "x-filler", big);
	o->n = 0;
	preface(o);
	frame(o, HEADERS, END_HEADERS, 1, blk->b, 8000);
	conn_open(&c, 4096);
	feed(&c, 0, o->b, o->n);
	CHECK_EQ(c.res[0], MOD_TRUNCATED);
	CHECK_EQ(c.cap.n, 1);
	if (c.cap.n == 1) {
		CHECK_STR(c.cap.ev[0].aux, "/");
		CHECK_STR(c.cap.ev[0].name, "www.example.com");
		CHECK_EQ(c.cap.ev[0].flags, OBS_F_TRUNCATED);
	}
	conn_close(&c);
	free(o);
	free(blk);
}

/* DATA far past the 16 KiB window, in frames split across segments: the
 * window slides, and the request after it is read. */
static void test_long_connection(void)
{
	struct buf *o = malloc(sizeof(*o)), *sv = malloc(sizeof(*sv));
	static uint8_t body[16384];
	struct conn c;

	o->n = 0;
	preface(o);
	frame(o, HEADERS, END_HEADERS, 1, c41, sizeof(c41));
	for (int i = 0; i < 10; i++)
		frame(o, DATA, 0, 1, body, sizeof(body));
	frame(o, HEADERS, END_HEADERS, 3, c42, sizeof(c42));
	for (int i = 0; i < 2; i++)
		frame(o, DATA, 0, 3, body, 1000);
	frame(o, HEADERS, END_HEADERS, 5, c43, sizeof(c43));
	sv->n = 0;
	frame(sv, SETTINGS, 0, 0, NULL, 0);
	frame(sv, HEADERS, END_HEADERS, 1, "\x88", 1);
	for (int i = 0; i < 5; i++)
		frame(sv, DATA, 0, 1, body, sizeof(body));
	frame(sv, HEADERS, END_HEADERS, 3, "\x88", 1);
	conn_open(&c, 16384);
	feed_segments(&c, 0, o->b, o->n, 1448);
	feed_segments(&c, 1, sv->b, sv->n, 1448);
	CHECK_EQ(c.res[0], MOD_OK);
	CHECK_EQ(c.res[1], MOD_OK);
	CHECK_EQ(c.cap.n, 5);
	CHECK_STR(c.cap.ev[2].aux, "/index.html");
	CHECK_EQ(c.cap.ev[4].type, 200);
	CHECK_STR(c.cap.ev[4].name, "www.example.com");
	CHECK(!c.f.st[0].overflow);
	conn_close(&c);

	/* one segment longer than the window (4 KiB here): the bytes past it
	 * are lost, the direction stops, counted truncated */
	o->n = 0;
	preface(o);
	frame(o, DATA, 0, 1, body, 10000);
	frame(o, HEADERS, END_HEADERS, 3, c42, sizeof(c42));
	conn_open(&c, 4096);
	feed(&c, 0, o->b, o->n);
	CHECK_EQ(c.res[0], MOD_TRUNCATED);
	CHECK_EQ(feed(&c, 0, c41, 0), MOD_OK);
	CHECK_EQ(c.cap.n, 0);
	conn_close(&c);
	free(o);
	free(sv);
}

/* Requests without their pseudo-headers, pseudo-headers out of place,
 * uppercase names and a bad :status: malformed events, decoding goes on. */
static void test_malformed_heads(void)
{
	struct buf *o = malloc(sizeof(*o)), *blk = malloc(sizeof(*blk)),
		   *sv = malloc(sizeof(*sv));
	struct conn c;

	o->n = 0;
	preface(o);
	blk->n = 0;
	hp_lit_name(blk, 1, "a.example"); /* no :method, no :path */
	frame(o, HEADERS, END_HEADERS, 1, blk->b, blk->n);
	blk->n = 0;
	put(blk, "\x82\x84", 2);
	hp_lit(blk, 0, "User-Agent", "x");
	frame(o, HEADERS, END_HEADERS, 3, blk->b, blk->n);
	blk->n = 0;
	put(blk, "\x82", 1);
	hp_lit(blk, 0, "x-a", "1");
	put(blk, "\x84", 1);
	frame(o, HEADERS, END_HEADERS, 5, blk->b, blk->n);
	blk->n = 0;
	put(blk, "\x82\x82\x84", 3);
	frame(o, HEADERS, END_HEADERS, 7, blk->b, blk->n);
	frame(o, HEADERS, END_HEADERS, 9, c41, sizeof(c41));
	sv->n = 0;
	blk->n = 0;
	hp_lit_name(blk, 8, "20x");
	frame(sv, HEADERS, END_HEADERS, 1, blk->b, blk->n);
	conn_open(&c, 16384);
	feed(&c, 0, o->b, o->n);
	feed(&c, 1, sv->b, sv->n);
	CHECK_EQ(c.res[0], MOD_MALFORMED);
	CHECK_EQ(c.cap.n, 6);
	CHECK_STR(EVF(&c.cap.ev[0], RQ_WHY), "no :method");
	CHECK_STR(c.cap.ev[0].name, "a.example");
	CHECK_STR(EVF(&c.cap.ev[1], RQ_WHY), "uppercase header field name");
	CHECK_STR(EVF(&c.cap.ev[2], RQ_WHY), "pseudo-header after a regular field");
	CHECK_STR(EVF(&c.cap.ev[3], RQ_WHY), "repeated pseudo-header");
	CHECK_EQ(c.cap.ev[4].flags, 0);
	/* a bad :status: a malformed response without a status, as HTTP/1's */
	CHECK_EQ(c.res[1], MOD_MALFORMED);
	CHECK_EQ(c.cap.ev[5].kind, OBS_HTTP_RESPONSE);
	CHECK_EQ(c.cap.ev[5].type, 0);
	CHECK_STR(EVF(&c.cap.ev[5], RS_STATUS), "");
	CHECK_STR(EVF(&c.cap.ev[5], RS_WHY), "bad :status");
	conn_close(&c);

	/* fields nginx or nghttpd refuse (pcaps/review20/h2c), marked; "te:
	 * trailers" is the one te allowed */
	static const char *const bad[][3] = {
		{"", "v", "empty header field name"},
		{"x-a", "a\r\nx-b: c", "NUL, CR or LF in a field value"},
		{"connection", "keep-alive", "connection-specific header field"},
		{"keep-alive", "1", "connection-specific header field"},
		{"transfer-encoding", "chunked", "connection-specific header field"},
		{"upgrade", "websocket", "connection-specific header field"},
		{"te", "gzip", "connection-specific header field"},
		{"te", "trailers", ""},
	};
	o->n = 0;
	preface(o);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		blk->n = 0;
		put(blk, "\x82\x86\x84", 3);
		hp_lit_name(blk, 1, "a.example");
		hp_lit(blk, 0, bad[i][0], bad[i][1]);
		frame(o, HEADERS, END_HEADERS, 1 + 2 * i, blk->b, blk->n);
	}
	blk->n = 0; /* a NUL */
	put(blk, "\x82\x86\x84\x00\x03x-a\x03" "a\0b", 12);
	frame(o, HEADERS, END_HEADERS, 99, blk->b, blk->n);
	conn_open(&c, 16384);
	feed(&c, 0, o->b, o->n);
	CHECK_EQ(c.cap.n, (int)(sizeof(bad) / sizeof(bad[0])) + 1);
	for (int i = 0; i < c.cap.n && i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
		CHECK_STR(EVF(&c.cap.ev[i], RQ_WHY), bad[i][2]);
		CHECK_EQ(c.cap.ev[i].flags, bad[i][2][0] ? OBS_F_MALFORMED : 0);
	}
	if (c.cap.n == (int)(sizeof(bad) / sizeof(bad[0])) + 1)
		CHECK_STR(EVF(&c.cap.ev[c.cap.n - 1], RQ_WHY), "NUL, CR or LF in a field value");
	conn_close(&c);
	free(o);
	free(blk);
	free(sv);
}

/* Memory: a realistic connection takes a few KiB; a table filled with the
 * smallest entries the 64 KiB bound allows meets H2C_HEAP_MAX first, and
 * the flow's direction stops; all is given back when the module ends. */
static void test_memory(void)
{
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv)),
		   *blk = malloc(sizeof(*blk));
	struct conn c;

	conversation(cl, sv);
	conn_open(&c, 16384);
	feed(&c, 0, cl->b, cl->n);
	feed(&c, 1, sv->b, sv->n);
	printf("heap of one conversation: %zu bytes\n", h2c_heap(c.state));
	CHECK(h2c_heap(c.state) < 16384);
	conn_close(&c);

	/* the default 4096-byte tables, both filled with the smallest
	 * entries: the most a flow takes without a larger SETTINGS */
	cl->n = sv->n = blk->n = 0;
	preface(cl);
	put(blk, c41, sizeof(c41));
	for (int i = 0; i < 200; i++)
		put(blk, "\x40\x01z\x00", 4);
	frame(cl, HEADERS, END_HEADERS, 1, blk->b, blk->n);
	blk->n = 0;
	put_u8(blk, 0x88);
	for (int i = 0; i < 200; i++)
		put(blk, "\x40\x01z\x00", 4);
	frame(sv, HEADERS, END_HEADERS, 1, blk->b, blk->n);
	conn_open(&c, 16384);
	feed(&c, 0, cl->b, cl->n);
	feed(&c, 1, sv->b, sv->n);
	printf("heap with both default tables full of the smallest entries: %zu bytes\n",
	       h2c_heap(c.state));
	CHECK_EQ(c.res[0], MOD_OK);
	CHECK_EQ(c.res[1], MOD_OK);
	CHECK(h2c_heap(c.state) <= 64 * 1024);
	conn_close(&c);

	sv->n = cl->n = blk->n = 0;
	frame(sv, SETTINGS, 0, 0, "\0\x01\0\x01\0\0", 6); /* 65536 */
	preface(cl);
	frame(cl, SETTINGS, ACK, 0, NULL, 0);
	hp_int(blk, 0x20, 5, 65536);
	put(blk, c41, sizeof(c41));
	for (int i = 0; i < 2000; i++)
		put(blk, "\x40\x01z\x00", 4); /* "z: ", indexed: 33 bytes of table */
	frame(cl, HEADERS, END_HEADERS, 1, blk->b, blk->n);
	conn_open(&c, 16384);
	feed(&c, 0, preface_s, 24);
	feed(&c, 1, sv->b, sv->n);
	feed(&c, 0, cl->b + 24, cl->n - 24);
	printf("heap after 2000 small entries: %zu bytes (result %d)\n", h2c_heap(c.state),
	       c.res[0]);
	CHECK(h2c_heap(c.state) <= H2C_HEAP_MAX);
	CHECK_EQ(c.res[0], MOD_MALFORMED);
	CHECK_EQ(c.cap.n, 1);
	conn_close(&c);
	free(cl);
	free(sv);
	free(blk);
}

/* ---- pending requests --------------------------------------------------------- */

/* A request on stream sid: GET, http, :path and :authority literal. */
static void h2_req(struct buf *o, uint32_t sid, const char *host, const char *path)
{
	struct buf *b = malloc(sizeof(*b));

	b->n = 0;
	put_u8(b, 0x82); /* :method GET */
	put_u8(b, 0x86); /* :scheme http */
	hp_lit_name(b, 4, path);
	hp_lit_name(b, 1, host);
	frame(o, HEADERS, END_HEADERS | END_STREAM, sid, b->b, b->n);
	free(b);
}

/* A response on stream sid with status (3 digits). */
static void h2_resp(struct buf *o, uint32_t sid, const char *status)
{
	struct buf *b = malloc(sizeof(*b));

	b->n = 0;
	hp_lit_name(b, 8, status);
	frame(o, HEADERS, END_HEADERS | (status[0] == '1' ? 0 : END_STREAM), sid, b->b, b->n);
	free(b);
}

/*
 * H2C_PENDING_MAX requests are remembered: a new one takes the lowest free
 * slot, or when none is free overwrites the slots in turn; a final
 * response frees its request's slot, an interim one does not. Pairing
 * across more requests than slots, with a slot freed between.
 */
static void test_pending_slots(void)
{
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv));
	struct conn c;
	char h[16];

	conn_open(&c, 65536);
	cl->n = sv->n = 0;
	preface(cl);
	for (uint32_t sid = 1; sid <= 39; sid += 2) {
		snprintf(h, sizeof(h), "h%u", sid);
		h2_req(cl, sid, h, "/p");
	}
	feed(&c, 0, cl->b, cl->n);
	CHECK_EQ(c.cap.n, 20);
	/* slots 0..15: 1..31; 33..39 overwrote 1..7 (slots 0..3) */
	frame(sv, SETTINGS, 0, 0, NULL, 0);
	h2_resp(sv, 13, "200"); /* slot 6 freed */
	feed(&c, 1, sv->b, sv->n);
	CHECK_EQ(c.cap.n, 21);
	CHECK_STR(c.cap.ev[20].name, "h13");
	cl->n = 0;
	h2_req(cl, 41, "h41", "/p"); /* slot 6 */
	h2_req(cl, 43, "h43", "/p"); /* overwrites slot 4: 9 */
	feed(&c, 0, cl->b, cl->n);
	CHECK_EQ(c.cap.n, 23);
	sv->n = 0;
	h2_resp(sv, 15, "100"); /* interim: pairs, keeps it */
	for (uint32_t sid = 1; sid <= 43; sid += 2)
		h2_resp(sv, sid, "204");
	feed(&c, 1, sv->b, sv->n);
	CHECK_EQ(c.cap.n, 23 + 1 + 22);
	CHECK_EQ(c.res[1], MOD_OK);
	CHECK_EQ(c.cap.ev[23].type, 100);
	CHECK_STR(c.cap.ev[23].name, "h15");
	for (uint32_t sid = 1, e = 24; sid <= 43 && e < (uint32_t)c.cap.n; sid += 2, e++) {
		int unpaired = sid <= 9 || sid == 13;
		snprintf(h, sizeof(h), "h%u", sid);
		CHECK_EQ(c.cap.ev[e].type, 204);
		CHECK_STR(c.cap.ev[e].name, unpaired ? "" : h);
		CHECK_STR(c.cap.ev[e].aux, unpaired ? "" : "/p");
	}
	conn_close(&c);
	free(cl);
	free(sv);
}

static uint64_t own_counter(const void *state, const char *name)
{
	return module_counter(&h2c_module, state, name);
}

/*
 * A server push after the server acknowledged the client's
 * SETTINGS_ENABLE_PUSH of 0 (RFC 9113 6.5.2, 8.4: a connection error to
 * the client, which requests nothing): neither the promised request nor
 * the pushed response makes an event; both blocks are counted
 * (push_refused) and malformed, and decoded all the same (the response to
 * stream 1 names the entry the refused promise added). Before the ACK the
 * server may not have read the setting: the promise is reported; an
 * ENABLE_PUSH of 1 acknowledged later allows pushes again. The same from
 * an Upgrade whose HTTP2-Settings say ENABLE_PUSH 0 (the 101 acknowledges
 * them).
 */
static void promise_to(struct buf *sv, uint32_t sid, uint32_t promised, const char *host)
{
	struct buf *blk = malloc(sizeof(*blk));

	blk->n = 0;
	put_u8(blk, 0);
	put_u8(blk, 0);
	put_u8(blk, 0);
	put_u8(blk, promised);
	put(blk, "\x82\x86\x84", 3);
	hp_lit_name(blk, 1, host);
	put_u8(blk, 0x76);                 /* server: pushsrv (62) */
	hp_int(blk, 0, 7, 7);
	put(blk, "pushsrv", 7);
	frame(sv, PUSH, END_HEADERS, sid, blk->b, blk->n);
	free(blk);
}

static void test_push_disabled(void)
{
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv));
	struct conn c;

	cl->n = sv->n = 0;
	put(cl, preface_s, 24);
	frame(cl, SETTINGS, 0, 0, "\x00\x02\x00\x00\x00\x00", 6); /* ENABLE_PUSH 0 */
	frame(cl, HEADERS, END_HEADERS | END_STREAM, 1, c41, sizeof(c41));
	frame(cl, HEADERS, END_HEADERS | END_STREAM, 3, c42, sizeof(c42));
	/* a promise before the server's ACK: reported */
	frame(sv, SETTINGS, 0, 0, NULL, 0);
	promise_to(sv, 1, 2, "before.example");
	frame(sv, SETTINGS, ACK, 0, NULL, 0);
	/* after it: refused, the response names its entry (62, then 63) */
	promise_to(sv, 1, 4, "evil.example");
	frame(sv, HEADERS, END_HEADERS, 1, "\x88\xbe", 2);
	frame(sv, HEADERS, END_HEADERS, 4, "\x88\xbe", 2);
	conn_open(&c, 16384);
	feed(&c, 0, cl->b, cl->n);
	feed(&c, 1, sv->b, sv->n);
	CHECK_EQ(c.res[1], MOD_MALFORMED);
	CHECK_EQ(own_counter(c.state, "push_refused"), 2);
	CHECK_EQ(c.cap.n, 4);
	if (c.cap.n == 4) {
		struct ev *e = c.cap.ev;
		CHECK_STR(e[2].name, "before.example");
		CHECK_EQ(e[2].kind, OBS_HTTP_REQUEST);
		CHECK_EQ(e[3].kind, OBS_HTTP_RESPONSE);
		CHECK_STR(e[3].name, "www.example.com");
		CHECK_STR(EVF(&e[3], RS_SERVER), "pushsrv");
	}
	/* ENABLE_PUSH 1, acknowledged: a promise is reported again */
	cl->n = sv->n = 0;
	frame(cl, SETTINGS, 0, 0, "\x00\x02\x00\x00\x00\x01", 6);
	frame(sv, SETTINGS, ACK, 0, NULL, 0);
	promise_to(sv, 3, 6, "again.example");
	feed(&c, 0, cl->b, cl->n);
	feed(&c, 1, sv->b, sv->n);
	CHECK_EQ(c.cap.n, 5);
	if (c.cap.n == 5)
		CHECK_STR(c.cap.ev[4].name, "again.example");
	CHECK_EQ(own_counter(c.state, "push_refused"), 2);
	conn_close(&c);
	free(cl);
	free(sv);

	/* HTTP2-Settings of an Upgrade (ENABLE_PUSH 0) */
	struct h2c_upgrade u;
	memset(&u, 0, sizeof(u));
	h2c_upgrade_settings(&u, (const uint8_t *)"AAIAAAAA", 8);
	CHECK_EQ(u.push, 1);
	CHECK(h2c_upgrade_matters(&u));
	memset(&u, 0, sizeof(u));
	h2c_upgrade_settings(&u, (const uint8_t *)"AAIAAAAB", 8);
	CHECK_EQ(u.push, 2);
}

/* A flow holds pending storage only while requests wait: a few dozen
 * bytes for one (not a 13 KiB table from its claim), nothing once it is
 * answered, nothing once the flow ends. */
static void test_pending_storage(void)
{
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv));
	struct conn c;
	size_t one;

	conn_open(&c, 16384);
	cl->n = sv->n = 0;
	preface(cl);
	h2_req(cl, 1, "a.example", "/x");
	feed(&c, 0, cl->b, cl->n);
	one = h2c_pending_bytes(c.state);
	printf("one pending request: %zu bytes\n", one);
	CHECK(one > 0);
	CHECK(one <= 128);
	frame(sv, SETTINGS, 0, 0, NULL, 0);
	h2_resp(sv, 1, "200");
	feed(&c, 1, sv->b, sv->n);
	CHECK_EQ(c.cap.n, 2);
	CHECK_STR(c.cap.ev[1].name, "a.example");
	CHECK_EQ(h2c_pending_bytes(c.state), 0);
	cl->n = 0;
	h2_req(cl, 3, "b", "/y");
	h2_req(cl, 5, "c", "/z");
	feed(&c, 0, cl->b, cl->n);
	CHECK(h2c_pending_bytes(c.state) > 0);
	h2c_module.on_flow_end(c.state, &c.f);
	CHECK_EQ(h2c_pending_bytes(c.state), 0);
	CHECK_EQ(own_counter(c.state, "pending_refused"), 0);
	conn_close(&c);
	free(cl);
	free(sv);
}

/* Feed f's direction dir through the buffers shared by all the flows
 * (many_flows.h). */
static void many_feed(void *state, struct flow *f, struct tally *t, int dir, const struct buf *b)
{
	(void)many_feed_bytes(&h2c_module, state, f, t, dir, b->b, b->n);
}

/*
 * Thousands of flows, each with H2C_PENDING_MAX requests waiting whose
 * :authority and :path fill the pair's bounds: the bytes every flow holds
 * stay under H2C_PENDING_BUDGET, the requests refused are counted, and
 * once flows are answered or ended the bytes come back and a new flow's
 * request is remembered and paired.
 */
static void test_pending_budget(void)
{
	struct flow *fl = calloc(MANY + 1, sizeof(*fl));
	struct flow_stream(*st)[2] = calloc(MANY + 1, sizeof(*st));
	struct buf *b = malloc(sizeof(*b));
	struct tally t = {.emit = {.obs = tally_obs}};
	static char host[400], uri[700];
	size_t peak = 0;
	void *state = NULL;

	CHECK(fl && st && b);
	if (!fl || !st || !b)
		goto out;
	CHECK_EQ(h2c_module.init(NULL, &state), 0);
	uri[0] = '/';
	memset(uri + 1, 'u', 600);
	uri[601] = '\0';
	for (int i = 0; i <= MANY; i++) {
		fl[i].proto = IPPROTO_TCP;
		fl[i].ipv = 4;
		fl[i].st = st[i];
	}
	for (int i = 0; i < MANY; i++) {
		b->n = 0;
		preface(b);
		for (int j = 0; j < H2C_PENDING_MAX; j++) {
			many_host(host, sizeof(host), i, j);
			h2_req(b, (uint32_t)(2 * j + 1), host, uri);
		}
		many_feed(state, &fl[i], &t, 0, b);
		if (h2c_pending_bytes(state) > peak)
			peak = h2c_pending_bytes(state);
	}
	uint64_t refused = own_counter(state, "pending_refused");
	printf("%d flows x %d requests: %zu bytes held at most, %llu refused\n", MANY,
	       H2C_PENDING_MAX, peak, (unsigned long long)refused);
	CHECK_EQ(t.req, (uint64_t)MANY * H2C_PENDING_MAX);
	CHECK(peak <= H2C_PENDING_BUDGET);
	CHECK(peak > H2C_PENDING_BUDGET / 2);
	CHECK_EQ(own_counter(state, "pending_peak"), peak);
	CHECK(refused > 0);
	CHECK(refused < (uint64_t)MANY * H2C_PENDING_MAX);

	/* every flow ends with its requests waiting: all comes back */
	for (int i = 0; i < MANY; i++) {
		h2c_module.on_flow_end(state, &fl[i]);
		free(fl[i].app_state);
		fl[i].app_state = NULL;
	}
	CHECK_EQ(h2c_pending_bytes(state), 0);

	/* the budget has room again: a new flow's request pairs */
	b->n = 0;
	preface(b);
	h2_req(b, 1, "again", "/again");
	many_feed(state, &fl[MANY], &t, 0, b);
	b->n = 0;
	frame(b, SETTINGS, 0, 0, NULL, 0);
	h2_resp(b, 1, "200");
	t.want = "again";
	many_feed(state, &fl[MANY], &t, 1, b);
	CHECK_EQ(t.resp, 1);
	CHECK_EQ(t.paired, 1);
	CHECK_EQ(t.wrong, 0);
	CHECK_EQ(own_counter(state, "pending_refused"), refused);
	CHECK_EQ(h2c_pending_bytes(state), 0);
	h2c_module.on_flow_end(state, &fl[MANY]);
	free(fl[MANY].app_state);
	h2c_module.fini(state);
out:
	free(fl);
	free(st);
	free(b);
}

/* The connections of test_slots and test_slot_choice (1 MiB each). */
static struct conn many[H2C_FLOWS_MAX + 8];

/* More flows than slots: the one seen least recently loses its inflaters
 * and stops (truncated), the others go on. */
static void test_slots(void)
{
	void *state = NULL;
	struct buf *o = malloc(sizeof(*o));
	struct conn *c = many;

	CHECK_EQ(h2c_module.init(NULL, &state), 0);
	o->n = 0;
	preface(o);
	for (size_t i = 0; i <= H2C_FLOWS_MAX; i++) {
		conn_init(&c[i], state, 256);
		CHECK_EQ(feed(&c[i], 0, o->b, o->n), MOD_OK);
	}
	/* c[0] (time 0, the first slot) lost its slot to c[H2C_FLOWS_MAX] */
	CHECK_EQ(feed(&c[0], 0, c41, 0), MOD_TRUNCATED);
	CHECK_EQ(feed(&c[0], 0, c41, 0), MOD_OK);
	frame(o, HEADERS, END_HEADERS, 1, c41, sizeof(c41));
	feed(&c[1], 0, o->b + 33, o->n - 33);
	CHECK_EQ(c[1].cap.n, 1);
	for (size_t i = 0; i <= H2C_FLOWS_MAX; i++)
		conn_free(&c[i]);
	h2c_module.fini(state);
	free(o);
}

/* Which slot a new flow takes when all are held: one whose connection
 * ended (the flow table ended the flow, FIN both ways, a RST), else one of
 * a flow that never began a header block (1,030 connections that only
 * open, as the review's nginx capture made, no longer take a live flow's
 * inflaters), else the least recently seen. */
static void test_slot_choice(void)
{
	void *state = NULL;
	struct buf *o = malloc(sizeof(*o)), *rq = malloc(sizeof(*rq));
	struct conn *c = many;
	size_t n = 0;

	CHECK_EQ(h2c_module.init(NULL, &state), 0);
	o->n = 0;
	preface(o);
	rq->n = 0;
	frame(rq, HEADERS, END_HEADERS, 1, c41, sizeof(c41));
	/* c[0] makes a request, then every other slot is taken */
	conn_init(&c[0], state, 256);
	CHECK_EQ(feed(&c[0], 0, o->b, o->n), MOD_OK);
	CHECK_EQ(feed(&c[0], 0, rq->b, rq->n), MOD_OK);
	for (n = 1; n < H2C_FLOWS_MAX; n++) {
		conn_init(&c[n], state, 256);
		CHECK_EQ(feed(&c[n], 0, o->b, o->n), MOD_OK);
	}
	/* ended connections give their slots first, whatever they did */
	CHECK_EQ(feed(&c[5], 0, rq->b, rq->n), MOD_OK);
	c[5].f.state |= FLOW_RST;
	c[6].f.state |= FLOW_RST_INIT;
	c[7].f.fin_dirs = 3;
	free(c[8].f.app_state); /* as the flow table ends a flow */
	c[8].f.app_state = NULL;
	c[8].f.app = APP_NONE;
	for (int k = 0; k < 4; k++, n++) {
		conn_init(&c[n], state, 256);
		CHECK_EQ(feed(&c[n], 0, o->b, o->n), MOD_OK);
	}
	CHECK_EQ(feed(&c[5], 0, c41, 0), MOD_TRUNCATED);
	CHECK_EQ(feed(&c[6], 0, c41, 0), MOD_TRUNCATED);
	CHECK_EQ(feed(&c[7], 0, c41, 0), MOD_TRUNCATED);
	CHECK_EQ(feed(&c[1], 0, c41, 0), MOD_OK);
	/* then the flows that only opened, the least recently seen first
	 * (all at time 0 here: the first slot) */
	for (int k = 0; k < 3; k++, n++) {
		conn_init(&c[n], state, 256);
		CHECK_EQ(feed(&c[n], 0, o->b, o->n), MOD_OK);
	}
	CHECK_EQ(feed(&c[1], 0, c41, 0), MOD_TRUNCATED);
	CHECK_EQ(feed(&c[2], 0, c41, 0), MOD_TRUNCATED);
	CHECK_EQ(feed(&c[3], 0, c41, 0), MOD_TRUNCATED);
	CHECK_EQ(feed(&c[4], 0, c41, 0), MOD_OK);
	/* c[0], which made a request, kept its inflaters: its next request
	 * (the table's www.example.com) is read */
	rq->n = 0;
	frame(rq, HEADERS, END_HEADERS, 3, c42, sizeof(c42));
	CHECK_EQ(feed(&c[0], 0, rq->b, rq->n), MOD_OK);
	CHECK_EQ(c[0].cap.n, 2);
	if (c[0].cap.n == 2)
		CHECK_STR(c[0].cap.ev[1].name, "www.example.com");
	for (size_t i = 0; i < n; i++)
		conn_free(&c[i]);
	h2c_module.fini(state);
	free(o);
	free(rq);
}

/* Both modules in registry order, as the core runs them. */
static void feed_both(struct conn *c, void *http_state, int dir, const void *data, size_t n)
{
	struct pkt p;
	struct flow_stream *s = &c->f.st[dir];

	if (!s->buf)
		s->buf = c->buf[dir];
	memcpy(s->buf + s->len, data, n);
	s->len += (uint32_t)n;
	memset(&p, 0, sizeof(p));
	p.proto = IPPROTO_TCP;
	p.ipv = 4;
	p.flow = &c->f;
	p.dir = dir;
	p.payload = data;
	p.payload_len = n;
	http_module.on_packet(http_state, &p, &c->cap.emit);
	c->res[dir] = h2c_module.on_packet(c->state, &p, &c->cap.emit);
}

/* HTTP/1.1 "Upgrade: h2c": http.c reads the request and the 101, then
 * hands the flow back; h2c claims it at the client's preface and reads the
 * server's frames already there (its response to the upgraded request,
 * stream 1) from the packet turned around. An Upgrade to something else
 * is not handed back. */
static void test_upgrade(void)
{
	static const char req[] = "GET /up HTTP/1.1\r\nHost: up.example\r\n"
				  "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
				  "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n";
	static const char sw[] = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
				 "Upgrade: h2c\r\n\r\n";
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv));
	void *hs = NULL;
	struct conn c;

	sv->n = 0;
	put(sv, sw, strlen(sw));
	frame(sv, SETTINGS, 0, 0, NULL, 0);
	frame(sv, HEADERS, END_HEADERS, 1, "\x88", 1);
	cl->n = 0;
	preface(cl);
	frame(cl, SETTINGS, ACK, 0, NULL, 0);
	frame(cl, HEADERS, END_HEADERS | END_STREAM, 3, c41, sizeof(c41));

	CHECK_EQ(http_module.init(NULL, &hs), 0);
	conn_open(&c, 16384);
	feed_both(&c, hs, 0, req, strlen(req));
	feed_both(&c, hs, 1, sv->b, sv->n);
	CHECK_EQ(c.f.app, APP_NONE); /* handed back at the 101 */
	feed_both(&c, hs, 0, cl->b, cl->n);
	CHECK_EQ(c.f.app, APP_HTTP2);
	CHECK_EQ(c.res[0], MOD_OK);
	feed_both(&c, hs, 1, "\0\0\x01\x01\x04\0\0\0\x03\x8d", 10); /* 404 to stream 3 */
	CHECK_EQ(c.cap.n, 5);
	if (c.cap.n == 5) {
		CHECK_STR(EVF(&c.cap.ev[0], RQ_VERSION), "HTTP/1.1");
		CHECK_EQ(c.cap.ev[1].type, 101);
		CHECK_EQ(c.cap.ev[2].kind, OBS_HTTP_RESPONSE); /* stream 1, unpaired */
		CHECK_EQ(c.cap.ev[2].type, 200);
		CHECK_STR(EVF(&c.cap.ev[2], RS_VERSION), "HTTP/2");
		CHECK_EQ(c.cap.ev[3].kind, OBS_HTTP_REQUEST);
		CHECK_STR(c.cap.ev[3].name, "www.example.com");
		CHECK_EQ(c.cap.ev[4].type, 404);
		CHECK_STR(c.cap.ev[4].aux, "/");
	}
	conn_close(&c);

	/* a websocket upgrade stays http's: no h2c after it */
	conn_open(&c, 16384);
	feed_both(&c, hs, 0, "GET / HTTP/1.1\r\nHost: w\r\nUpgrade: websocket\r\n\r\n", 47);
	feed_both(&c, hs, 1, sw, strlen(sw));
	CHECK_EQ(c.f.app, APP_HTTP);
	feed_both(&c, hs, 0, cl->b, cl->n);
	CHECK_EQ(c.f.app, APP_HTTP);
	CHECK_EQ(c.cap.n, 2);
	conn_close(&c);
	http_module.fini(hs);
	free(cl);
	free(sv);
}

/*
 * A server push after an Upgrade whose HTTP2-Settings said ENABLE_PUSH 0
 * (curl sends it so; the 101 acknowledges the settings): neither the
 * promised request nor the pushed response makes an event, both counted
 * (push_refused); with settings that leave push on, the same promise is
 * reported. End to end through http.c's hand-back.
 */
static void upgrade_push(const char *settings, int refused)
{
	static const char sw[] = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
				 "Upgrade: h2c\r\n\r\n";
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv));
	char req[256];
	void *hs = NULL;
	struct conn c;

	snprintf(req, sizeof(req),
		 "GET /up HTTP/1.1\r\nHost: up.example\r\n"
		 "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
		 "HTTP2-Settings: %s\r\n\r\n", settings);
	sv->n = 0;
	put(sv, sw, strlen(sw));
	frame(sv, SETTINGS, 0, 0, NULL, 0);
	promise_to(sv, 1, 2, "evil.example");
	frame(sv, HEADERS, END_HEADERS, 1, "\x88\xbe", 2);
	frame(sv, HEADERS, END_HEADERS, 2, "\x88\xbe", 2);
	cl->n = 0;
	preface(cl);
	frame(cl, SETTINGS, ACK, 0, NULL, 0);

	CHECK_EQ(http_module.init(NULL, &hs), 0);
	conn_open(&c, 16384);
	feed_both(&c, hs, 0, req, strlen(req));
	feed_both(&c, hs, 1, sv->b, sv->n);
	feed_both(&c, hs, 0, cl->b, cl->n);
	CHECK_EQ(c.f.app, APP_HTTP2);
	/* the request and the 101 (http.c), stream 1's response, and, when
	 * push is on, the promised request and its response */
	CHECK_EQ(c.cap.n, refused ? 3 : 5);
	CHECK_EQ(own_counter(c.state, "push_refused"), refused ? 2 : 0);
	int promised = 0;
	for (int i = 0; i < (int)c.cap.n; i++)
		promised += c.cap.ev[i].kind == OBS_HTTP_REQUEST &&
			    strcmp(c.cap.ev[i].name, "evil.example") == 0;
	CHECK_EQ(promised, refused ? 0 : 1);
	conn_close(&c);
	http_module.fini(hs);
	free(cl);
	free(sv);
}

static void test_upgrade_push(void)
{
	upgrade_push("AAMAAABkAARAAAAAAAIAAAAA", 1); /* curl's: ENABLE_PUSH 0 */
	upgrade_push("AAIAAAAA", 1);
	upgrade_push("AAMAAABk", 0);                 /* push left on */
	upgrade_push("AAIAAAAB", 0);                 /* ENABLE_PUSH 1 */
}

/*
 * The HTTP2-Settings of an Upgrade request bind the server's first frames
 * (RFC 7540 3.2.1: the 101 acknowledges them): a table size of 8192 lets
 * the server's first block open with an update to 8192 (an HPACK error
 * under the default 4096), and a SETTINGS_MAX_FRAME_SIZE of 20000 a
 * 20,000-byte DATA frame (a frame too long otherwise), so the server's
 * direction is read on. Two fields, or a value that is not base64url
 * settings, are not applied.
 */
static void upgrade_with(const char *fields, int applied)
{
	static const char sw[] = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
				 "Upgrade: h2c\r\n\r\n";
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv)),
		   *blk = malloc(sizeof(*blk));
	char req[512];
	void *hs = NULL;
	struct conn c;

	snprintf(req, sizeof(req), "GET /up HTTP/1.1\r\nHost: up.example\r\n"
		 "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n%s\r\n", fields);
	sv->n = blk->n = 0;
	put(sv, sw, strlen(sw));
	frame(sv, SETTINGS, 0, 0, NULL, 0);
	hp_int(blk, 0x20, 5, 8192);
	put_u8(blk, 0x88);
	put_u8(blk, 0x76);                 /* server: up, indexed (62) */
	put_u8(blk, 2);
	put(blk, "up", 2);
	frame(sv, HEADERS, END_HEADERS, 1, blk->b, blk->n);
	head(sv, 20000, DATA, END_STREAM, 1);
	put(sv, NULL, 20000);
	cl->n = 0;
	preface(cl);
	frame(cl, SETTINGS, ACK, 0, NULL, 0);
	frame(cl, HEADERS, END_HEADERS | END_STREAM, 3, c41, sizeof(c41));

	CHECK_EQ(http_module.init(NULL, &hs), 0);
	conn_open(&c, 65536);
	feed_both(&c, hs, 0, req, strlen(req));
	feed_both(&c, hs, 1, sv->b, strlen(sw));
	CHECK_EQ(c.f.app, APP_NONE);
	CHECK_EQ(c.f.app_state != NULL, applied); /* the settings left for h2c */
	for (size_t i = strlen(sw); i < sv->n; i += 1400)
		feed_both(&c, hs, 1, sv->b + i, sv->n - i < 1400 ? sv->n - i : 1400);
	feed_both(&c, hs, 0, cl->b, cl->n);
	CHECK_EQ(c.f.app, APP_HTTP2);
	feed_both(&c, hs, 1, "\0\0\x02\x01\x04\0\0\0\x03\x8d\xbe", 11); /* 404 to 3 */
	if (applied) {
		CHECK_EQ(c.res[1], MOD_OK);
		CHECK_EQ(c.cap.n, 5);
		if (c.cap.n == 5) {
			CHECK_EQ(c.cap.ev[2].type, 200);
			CHECK_STR(EVF(&c.cap.ev[2], RS_SERVER), "up");
			CHECK_EQ(c.cap.ev[2].flags, 0);
			CHECK_STR(c.cap.ev[3].name, "www.example.com");
			CHECK_EQ(c.cap.ev[4].type, 404);
			CHECK_STR(EVF(&c.cap.ev[4], RS_SERVER), "up");
			CHECK_STR(c.cap.ev[4].aux, "/");
		}
	} else {
		/* the update is an HPACK error before any field (no event):
		 * the server's side stops, the client's is read */
		CHECK_EQ(c.res[1], MOD_OK); /* stopped: later packets count ok */
		CHECK_EQ(c.cap.n, 3);
		if (c.cap.n == 3)
			CHECK_STR(c.cap.ev[2].name, "www.example.com");
	}
	conn_close(&c);
	http_module.fini(hs);
	free(cl);
	free(sv);
	free(blk);
}

static void test_upgrade_settings(void)
{
	struct h2c_upgrade u;

	/* table 8192 and frame 20000 */
	upgrade_with("HTTP2-Settings: AAEAACAAAAUAAE4g\r\n", 1);
	/* also among other settings (MAX_CONCURRENT_STREAMS 100, ENABLE_PUSH 0) */
	upgrade_with("HTTP2-Settings: AAMAAABkAAEAACAAAAIAAAAAAAUAAE4g\r\n", 1);
	/* two fields: a server does not upgrade on them */
	upgrade_with("HTTP2-Settings: AAEAACAAAAUAAE4g\r\nHTTP2-Settings: AAEAACAA\r\n", 0);
	/* not base64url, not whole settings, padded */
	upgrade_with("HTTP2-Settings: AAEAAC+AAAUAAE4g\r\n", 0);
	upgrade_with("HTTP2-Settings: AAEAACAAAAUAAE4\r\n", 0);
	upgrade_with("HTTP2-Settings: AAEAACAAAAUAAE4g=\r\n", 0);
	/* none that matter: nothing left */
	upgrade_with("HTTP2-Settings: AAMAAABk\r\n", 0);
	upgrade_with("", 0);

	memset(&u, 0, sizeof(u));
	h2c_upgrade_settings(&u, (const uint8_t *)"AAH_____AAEAAAAAAAEAABAA", 24);
	CHECK_EQ(u.fields, 1);
	CHECK_EQ(u.bad, 0);
	CHECK_EQ(u.has_table, 1);
	CHECK_EQ(u.table_min, 0);
	CHECK_EQ(u.table_last, 4096);
	CHECK_EQ(u.max_frame, 0);
	CHECK(h2c_upgrade_matters(&u));
	memset(&u, 0, sizeof(u));
	/* frame sizes outside 16384..2^24-1 are not legal: none */
	h2c_upgrade_settings(&u, (const uint8_t *)"AAUAAD__AAUBAAAA", 16);
	CHECK_EQ(u.max_frame, 0);
	CHECK(!h2c_upgrade_matters(&u));
	CHECK(!h2c_upgrade_matters(NULL));
}

static void test_json(void)
{
	struct buf *cl = malloc(sizeof(*cl)), *sv = malloc(sizeof(*sv));
	struct conn c;

	conversation(cl, sv);
	conn_open(&c, 16384);
	feed(&c, 0, cl->b, cl->n);
	feed(&c, 1, sv->b, sv->n);
	CHECK_EQ(c.cap.n, 6);
	json_t *o = json_object();
	CHECK_EQ(http_info_json(o, c.cap.ev[0].info, c.cap.ev[0].info_len, OBS_HTTP_REQUEST), 0);
	char *s = json_dumps(o, JSON_COMPACT);
	CHECK_STR(s, "{\"method\":\"GET\",\"host\":\"www.example.com\",\"uri\":\"/\","
		     "\"version\":\"HTTP/2\",\"user_agent\":\"\"}");
	free(s);
	json_decref(o);
	conn_close(&c);
	free(cl);
	free(sv);
}

int main(void)
{
	test_sniff();
	test_claim();
	test_conversation();
	test_proxy_protocol();
	test_split();
	test_padded_continuation();
	test_bad_frames();
	test_hpack_errors();
	test_midblock_size_update();
	test_huffman_long_padding();
	test_long_string();
	test_push_promise();
	test_table_size();
	test_big_settings();
	test_block_bound();
	test_long_connection();
	test_malformed_heads();
	test_memory();
	test_pending_slots();
	test_push_disabled();
	test_pending_storage();
	test_pending_budget();
	test_slots();
	test_slot_choice();
	test_upgrade();
	test_upgrade_push();
	test_upgrade_settings();
	test_json();
	return check_done();
}
