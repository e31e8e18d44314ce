/*
 * test_proxyproto.c - the PROXY protocol header (analyzers/proxyproto.h):
 * the parser on v1 and v2 headers, whole, cut at every byte and broken in
 * each way the specification forbids; the stream rule (start of the client
 * stream only, no waiting once no more bytes can come); and the HTTP and
 * TLS analyzers, run as the core runs them over the flow table, reading
 * the request or the ClientHello behind a v1 and a v2 header, split at
 * every byte; and, with DNS, what follows a v2 header longer than the
 * window (16 KiB to 64 KiB + 15), passed as its bytes come, before DNS,
 * HTTP, TLS and h2c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include "../unit/check.h"
#include "flow.h"
#include "http.h"
#include "module.h"
#include "proxyproto.h"
#include "tls.h"

extern const struct module tls_module;
extern const struct module dns_module;
extern const struct module h2c_module;

static int parse_s(const char *s)
{
	return proxyproto_parse((const uint8_t *)s, strlen(s));
}

/* Every cut of h[0..n) short of the whole header asks for more; the whole
 * header, and the header with bytes after it, give its length. Returns the
 * number of cuts that did not. */
static int cuts(const uint8_t *h, size_t n)
{
	uint8_t *b = malloc(n + 64);
	int bad = 0;

	memcpy(b, h, n);
	memcpy(b + n, "GET / HTTP/1.1\r\n\r\n\x16\x03\x01\r\n\r\n\0\r\nQUIT\n!!!!!!!!!!!!!!!!!!!!", 54);
	for (size_t k = 0; k < n; k++) {
		/* a copy of exactly k bytes: ASan sees any read past them */
		uint8_t *t = malloc(k ? k : 1);
		memcpy(t, b, k);
		if (proxyproto_parse(k ? t : NULL, k) != -1) {
			fprintf(stderr, "cut at %zu of %zu: %d\n", k, n, proxyproto_parse(t, k));
			bad++;
		}
		free(t);
	}
	for (size_t k = n; k <= n + 54; k++)
		if (proxyproto_parse(b, k) != (int)n)
			bad++;
	free(b);
	return bad;
}

static int cuts_s(const char *s)
{
	return cuts((const uint8_t *)s, strlen(s));
}

/* ---- v1 ---------------------------------------------------------------------- */

static void test_v1_valid(void)
{
	static const char *const ok[] = {
		"PROXY TCP4 1.2.3.4 5.6.7.8 111 222\r\n",
		"PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n",
		"PROXY TCP4 0.0.0.0 255.255.255.255 0 65535\r\n",
		"PROXY TCP6 2001:db8::1 fd00:99::80 40000 80\r\n",
		"PROXY TCP6 ::ffff:10.99.0.10 ::1 1 2\r\n",
		"PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
		"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n", /* 104: the longest */
		"PROXY TCP6 0:0:0:0:0:0:0:0 FD00:99:0:0:0:0:0:80 9 10\r\n",
		"PROXY UNKNOWN\r\n",
		"PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n",
		"PROXY UNKNOWN\r\r\n", /* anything before the first CRLF is ignored */
		/* nginx checks an address's bytes, not its form, and a port's
		 * value, not its digits: it serves behind each of these */
		"PROXY TCP4 a b 1 2\r\n",
		"PROXY TCP4 01.2.3.4 5.6.7.8 01 2\r\n",
		"PROXY TCP4 2001:db8::1 2001:db8::2 1 2\r\n", /* IPv6 text in TCP4 */
		"PROXY TCP6 1.2.3.4 5.6.7.8 1 2\r\n",        /* IPv4 text in TCP6 */
		"PROXY TCP4 256.2.3.4 1.2.3 1 00\r\n",
		"PROXY TCP4 1.2.3.4.5 1111.2.3.4444 0000065535 2\r\n",
		"PROXY TCP6 2001:db8::1::2 1:2:3:4:5:6:7:8:9 1 2\r\n",
		"PROXY TCP6 12345::1 ::1 1 2\r\n",
		"PROXY TCP4  5.6.7.8 1 2\r\n", /* an empty address */
		"PROXY TCP4 1.2.3.4.5.6.7.8.9.1.2.3.4.5.6.7.8.9.1.2.3.4.5.6.7.8.9 : 1 2\r\n",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK_EQ(parse_s(ok[i]), strlen(ok[i]));
		CHECK_EQ(cuts_s(ok[i]), 0);
	}

	/* the longest line there may be: PROXY_V1_MAX bytes with its CRLF
	 * (nginx's first buffer, not the specification's 107) */
	char l[PROXY_V1_MAX + 100];
	memset(l, 'x', sizeof(l));
	memcpy(l, "PROXY UNKNOWN ", 14);
	memcpy(l + PROXY_V1_MAX - 2, "\r\n", 2);
	CHECK_EQ(proxyproto_parse((uint8_t *)l, sizeof(l)), PROXY_V1_MAX);
	CHECK_EQ(cuts((uint8_t *)l, PROXY_V1_MAX), 0);
}

static void test_v1_bad(void)
{
	static const char *const bad[] = {
		/* not PROXY */
		"GET / HTTP/1.1\r\n", "proxy TCP4 1.2.3.4 5.6.7.8 1 2\r\n", "PROXX", "PROXYTCP4",
		"PROXY  TCP4 1.2.3.4 5.6.7.8 1 2\r\n", "\x16\x03\x01\x00\x05",
		/* family */
		"PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n", "PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n",
		"PROXY tcp4 1.2.3.4 5.6.7.8 1 2\r\n", "PROXY TCP4\r\n", "PROXY \r\n",
		/* addresses: a byte other than a hex digit, ':' or '.' */
		"PROXY TCP4 1.2.3.4 5.6.7.x 1 2\r\n", "PROXY TCP6 ::g ::1 1 2\r\n",
		"PROXY TCP4 1.2.3.4\t5.6.7.8 1 2\r\n", "PROXY TCP4 1.2.3.4/8 5.6.7.8 1 2\r\n",
		/* ports: no digits, another byte, more than 65535 */
		"PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n", "PROXY TCP4 1.2.3.4 5.6.7.8 1 99999\r\n",
		"PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n", /* "5.6.7.8" read as a port */
		"PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n", "PROXY TCP4 1.2.3.4 5.6.7.8 123456 2\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8  2\r\n", "PROXY TCP4 1.2.3.4 5.6.7.8 1 \r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", "PROXY TCP4 1.2.3.4 5.6.7.8 0x1 2\r\n",
		/* the line end */
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX",
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse_s(bad[i]);
		if (r != 0)
			fprintf(stderr, "bad[%zu] \"%s\": %d\n", i, bad[i], r);
		CHECK_EQ(r, 0);
	}

	/* too long: no CRLF within PROXY_V1_MAX bytes is no header, whatever
	 * follows; fewer bytes than that may still become one */
	char l[PROXY_V1_MAX + 200];
	memset(l, 'x', sizeof(l));
	memcpy(l, "PROXY UNKNOWN ", 14);
	memcpy(l + PROXY_V1_MAX - 1, "\r\nGET / HTTP/1.1\r\n\r\n", 20); /* one byte too long */
	/* over the specification's 107 bytes, as nginx takes them */
	static const char *const long_ok[] = {
		"PROXY TCP4 0000000000000000000000000000000000000000000000000000000001.2.3.4 "
		"5.6.7.8 0000000000000000000000000000000000000000000000000000000000000080 443\r\n",
	};
	CHECK_EQ(parse_s(long_ok[0]), strlen(long_ok[0]));
	CHECK(strlen(long_ok[0]) > 107);
	CHECK_EQ(proxyproto_parse((uint8_t *)l, sizeof(l)), 0);
	CHECK_EQ(proxyproto_parse((uint8_t *)l, PROXY_V1_MAX), 0);
	CHECK_EQ(proxyproto_parse((uint8_t *)l, PROXY_V1_MAX - 1), -1);
	CHECK_EQ(proxyproto_parse((uint8_t *)l, 14), -1);

	/* a token that cannot end well is refused at once, before its line's
	 * end arrives */
	CHECK_EQ(parse_s("PROXY TCP4 1.2.3.4.5.6.7.8.9.1"), -1);
	CHECK_EQ(parse_s("PROXY TCP4 1.2.3.4.5.6.7.8.x"), 0);
	CHECK_EQ(parse_s("PROXY TCP4 1.2.3.4 5.6.7.8 123456"), 0);
	CHECK_EQ(parse_s("PROXY TCP4 1.2.3.4 5.6.7.8 0000012345"), -1);
	CHECK_EQ(parse_s("PROXY TCP4 1.2.3.4 5.6.7.8 12345"), -1);
	CHECK_EQ(parse_s("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r"), -1);
	CHECK_EQ(parse_s("PROXY TCP"), -1);
	CHECK_EQ(parse_s("PROXY UNK"), -1);
	CHECK_EQ(parse_s("PROXY UNKNOWN whatever"), -1);
}

/* ---- v2 ---------------------------------------------------------------------- */

static const uint8_t sig[12] = {'\r', '\n', '\r', '\n', 0, '\r', '\n', 'Q', 'U', 'I', 'T', '\n'};

/* A v2 header: vc, family, n bytes after the fixed part (a pattern). */
static size_t v2(uint8_t *b, uint8_t vc, uint8_t fam, uint16_t n)
{
	memcpy(b, sig, 12);
	b[12] = vc;
	b[13] = fam;
	b[14] = (uint8_t)(n >> 8);
	b[15] = (uint8_t)n;
	for (size_t i = 0; i < n; i++)
		b[16 + i] = (uint8_t)(i * 7 + 1);
	return 16u + n;
}

static void test_v2(void)
{
	static uint8_t b[PROXY_V2_MAX + 64];
	static const struct {
		uint8_t vc, fam;
		uint16_t n;
	} ok[] = {
		{0x21, 0x11, 12},       /* PROXY, TCP over IPv4 */
		{0x21, 0x11, 12 + 40},  /* ... with TLVs after the addresses */
		{0x21, 0x12, 12},       /* UDP over IPv4 */
		{0x21, 0x21, 36},       /* TCP over IPv6 */
		{0x21, 0x22, 36 + 5},
		{0x21, 0x31, 216},      /* UNIX stream */
		{0x21, 0x32, 216},
		{0x21, 0x00, 0},        /* UNSPEC: the real endpoints */
		{0x21, 0x00, 7},
		{0x20, 0x00, 0},        /* LOCAL (health checks) */
		{0x20, 0x11, 12},
		{0x20, 0xff, 3},        /* LOCAL: the family is ignored */
		{0x20, 0x11, 0},        /* ... and so are the addresses */
		/* nginx reads addresses for INET and INET6 over STREAM only and
		 * skips any other block, and any command but PROXY, unread */
		{0x22, 0x11, 12}, {0x2f, 0x11, 0}, {0x21, 0x13, 12}, {0x21, 0x10, 0},
		{0x21, 0x01, 12}, {0x21, 0x41, 12}, {0x21, 0xff, 300}, {0x21, 0x31, 215},
		{0x21, 0x12, 0}, {0x21, 0x22, 1},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		size_t n = v2(b, ok[i].vc, ok[i].fam, ok[i].n);
		CHECK_EQ(proxyproto_parse(b, n), n);
		CHECK_EQ(cuts(b, n), 0);
	}

	/* the longest: 65535 bytes after the fixed part, all there or not */
	size_t n = v2(b, 0x21, 0x21, 65535);
	CHECK_EQ(n, PROXY_V2_MAX);
	CHECK_EQ(proxyproto_parse(b, n + 64), PROXY_V2_MAX);
	CHECK_EQ(proxyproto_parse(b, n), PROXY_V2_MAX);
	CHECK_EQ(proxyproto_parse(b, n - 1), -1);
	CHECK_EQ(proxyproto_parse(b, 16), -1);

	/* broken: version, command, family, a length that cannot hold the
	 * addresses; each refused as soon as the byte at fault is there (at) */
	static const struct {
		uint8_t vc, fam;
		uint16_t n;
		size_t at;
	} bad[] = {
		{0x11, 0x11, 12, 13}, /* version 1 */
		{0x31, 0x11, 12, 13}, /* version 3 */
		{0x01, 0x11, 12, 13}, /* version 0 */
		{0xf1, 0x11, 12, 13},
		{0x21, 0x11, 11, 16}, /* IPv4 addresses need 12 */
		{0x21, 0x11, 0, 16},
		{0x21, 0x21, 35, 16}, /* IPv6 36 */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = v2(b, bad[i].vc, bad[i].fam, bad[i].n);
		CHECK_EQ(proxyproto_parse(b, n), 0);
		CHECK_EQ(proxyproto_parse(b, bad[i].at), 0);
		CHECK_EQ(proxyproto_parse(b, bad[i].at - 1), -1);
	}
	for (size_t i = 0; i < 12; i++) {
		n = v2(b, 0x21, 0x11, 12);
		b[i] ^= 0x20;
		CHECK_EQ(proxyproto_parse(b, n), 0);
		CHECK_EQ(proxyproto_parse(b, i + 1), 0);
	}

	/* a length beyond the bytes: more are needed, none is read past len
	 * (the copies are exactly len bytes long, for ASan) */
	n = v2(b, 0x21, 0x11, 4000);
	for (size_t k = 16; k < n; k += 397) {
		uint8_t *t = malloc(k);
		memcpy(t, b, k);
		CHECK_EQ(proxyproto_parse(t, k), -1);
		free(t);
	}

	/* v1 and v2 are told apart by their first byte: a CR that does not
	 * start the signature, and CRLF before "PROXY", are neither */
	CHECK_EQ(parse_s("\r\nPROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n"), 0);
	CHECK_EQ(parse_s("\r\n\r\nGET"), 0);
	CHECK_EQ(parse_s("\r"), -1);
	CHECK_EQ(proxyproto_parse(NULL, 0), -1);
}

/*
 * Random headers, valid and mutated: whatever the bytes, the answer for a
 * prefix agrees with the answer for the whole (a header of n bytes is
 * -1 below n and n from there on; "not one" stays so with more bytes), and
 * no length exceeds the bytes given.
 */
static void test_prefix_consistency(void)
{
	static const char *const seeds[] = {
		"PROXY TCP4 1.2.3.4 5.6.7.8 111 222\r\n",
		"PROXY TCP6 2001:db8::1 ::ffff:1.2.3.4 1 65535\r\n",
		"PROXY UNKNOWN\r\n",
	};
	uint8_t b[256];
	uint32_t x = 12345;
	int bad = 0;

	for (int it = 0; it < 20000; it++) {
		size_t n;
		if (it % 2) {
			const char *s = seeds[it % 3];
			n = strlen(s);
			memcpy(b, s, n);
		} else {
			n = v2(b, 0x21, 0x11, (uint16_t)(12 + it % 40));
		}
		memcpy(b + n, "GET / HTTP/1.1\r\n", 16);
		n += 16;
		for (int m = 0; m < 1 + it % 3; m++) {
			x = x * 1103515245u + 12345u;
			size_t at = (x >> 8) % n;
			switch ((x >> 4) % 4) {
			case 0: b[at] = (uint8_t)(x >> 20); break;
			case 1: b[at] = "0123456789.: \r\n"[(x >> 20) % 15]; break;
			case 2: b[at] ^= 1; break;
			default: b[at] = (uint8_t)(b[at] + 1); break;
			}
		}
		int whole = proxyproto_parse(b, n), prev = -1;
		for (size_t k = 0; k <= n; k++) {
			int r = proxyproto_parse(b, k);
			if (r > (int)k)
				bad++;
			if (whole > 0)
				bad += r != (k < (size_t)whole ? -1 : whole);
			else if (whole < 0)
				bad += r != -1;
			else
				bad += prev == 0 && r != 0; /* "none" stays none */
			prev = r;
		}
	}
	CHECK_EQ(bad, 0);
}

/* ---- the stream rule ----------------------------------------------------------- */

static void test_stream(void)
{
	static const char h[] = "PROXY TCP4 1.2.3.4 5.6.7.8 111 222\r\nGET";
	uint8_t buf[64];
	struct flow_stream st[2];
	struct flow f;
#define s st[0]

	memset(st, 0, sizeof(st));
	memset(&f, 0, sizeof(f));
	CHECK_EQ(proxyproto_stream(NULL), 0);
	CHECK_EQ(proxyproto_stream(&f), 0); /* no streams */
	f.st = st;
	CHECK_EQ(proxyproto_stream(&f), 0); /* no bytes yet: no buffer */
	memcpy(buf, h, sizeof(h) - 1);
	s.buf = buf;
	s.len = sizeof(h) - 1;
	CHECK_EQ(proxyproto_stream(&f), 36);
	s.len = 20;
	CHECK_EQ(proxyproto_stream(&f), -1);
	/* no more bytes will come: the window is full, or a hole cuts it */
	s.overflow = 1;
	CHECK_EQ(proxyproto_stream(&f), 0);
	s.overflow = 0;
	s.holes = 1;
	s.hole_start = 20;
	s.resync = 30;
	s.len = 40;
	CHECK_EQ(proxyproto_stream(&f), 0);
	s.holes = 0;
	s.len = 39;
	CHECK_EQ(proxyproto_stream(&f), 36);
	/* read at the cursor: where an analyzer that handed the flow back
	 * stopped (the start of a CONNECT tunnel), and only there */
	s.consumed = 1;
	CHECK_EQ(proxyproto_stream(&f), 0);
	uint8_t b2[64];
	memcpy(b2, "ABCD", 4);
	memcpy(b2 + 4, h, sizeof(h) - 1);
	s.buf = b2;
	s.len = sizeof(h) - 1 + 4;
	s.consumed = 4;
	s.slid = 600;
	CHECK_EQ(proxyproto_stream(&f), 36);
	s.consumed = 0;
	CHECK_EQ(proxyproto_stream(&f), 0);
	s.consumed = 5;
	CHECK_EQ(proxyproto_stream(&f), 0);
	s.consumed = s.len + 1; /* never past the bytes */
	CHECK_EQ(proxyproto_stream(&f), 0);
	s.consumed = 4;
	s.done = 1;
	CHECK_EQ(proxyproto_stream(&f), 0);
#undef s
}

/* ---- the analyzers, as the core runs them ------------------------------------ */

#define MAX_EV 16

struct sink {
	int n;
	int kind[MAX_EV];
	char name[MAX_EV][64];
	char aux[MAX_EV][128];
	uint16_t type[MAX_EV];
	unsigned flags[MAX_EV];
};

static int sink_obs(struct emit *e, const struct obs *o)
{
	struct sink *s = e->core;
	if (s->n >= MAX_EV)
		return 0;
	s->kind[s->n] = o->kind;
	snprintf(s->name[s->n], 64, "%s", o->name ? o->name : "(null)");
	snprintf(s->aux[s->n], 128, "%s", o->aux ? o->aux : "(null)");
	s->type[s->n] = (uint16_t)o->type;
	s->flags[s->n] = o->flags;
	s->n++;
	return 0;
}

struct conn {
	struct flow_table *ft;
	void *tls, *http, *dns, *h2c;
	uint16_t port; /* the server's: 80, or 53 for DNS over TCP */
	struct emit emit;
	struct sink sink;
	uint32_t seq[2];
	struct flow *f;
};

static void put32(uint8_t *a, uint32_t v)
{
	a[0] = (uint8_t)(v >> 24);
	a[1] = (uint8_t)(v >> 16);
	a[2] = (uint8_t)(v >> 8);
	a[3] = (uint8_t)v;
}

/* One segment in direction dir (0 client) through the flow table, then DNS,
 * TLS and HTTP in the registry's order, then what the core does after. */
static void seg(struct conn *c, int dir, uint8_t flags, const void *data, size_t n)
{
	struct pkt p;

	memset(&p, 0, sizeof(p));
	p.ipv = 4;
	p.proto = IPPROTO_TCP;
	p.ts_us = 1796032800000000ull;
	put32(dir ? p.src : p.dst, 0x0a630050u);
	put32(dir ? p.dst : p.src, 0x0a63000au);
	p.sport = dir ? c->port : 40000;
	p.dport = dir ? 40000 : c->port;
	p.tcp_flags = flags;
	p.seq = c->seq[dir];
	p.ack = c->seq[!dir];
	p.payload = data;
	p.payload_len = (uint32_t)n;
	c->seq[dir] += (uint32_t)n + ((flags & TH_SYN) ? 1 : 0);
	c->f = flow_table_update(c->ft, &p);
	CHECK(c->f != NULL);
	if (!c->f || !n)
		return;
	CHECK(dns_module.on_packet(c->dns, &p, &c->emit) >= 0);
	CHECK(tls_module.on_packet(c->tls, &p, &c->emit) >= 0);
	CHECK(http_module.on_packet(c->http, &p, &c->emit) >= 0);
	CHECK(h2c_module.on_packet(c->h2c, &p, &c->emit) >= 0);
	if (c->f->app == APP_NONE)
		flow_release_unread(c->ft, c->f);
	flow_note_claim(c->f);
}

static void conn_open_port(struct conn *c, uint16_t port)
{
	/* one connection a table: a small one (the default's 4 MiB of slots,
	 * made and freed for each of thousands of cuts, took most of the
	 * test's time under ASan) */
	static const struct flow_config cfg = {.max_flows = 16};
	struct module_env env;

	memset(c, 0, sizeof(*c));
	c->port = port;
	c->ft = flow_table_new(&cfg, NULL, NULL);
	CHECK(c->ft != NULL);
	memset(&env, 0, sizeof(env));
	env.flows = c->ft;
	CHECK_EQ(tls_module.init(&env, &c->tls), 0);
	CHECK_EQ(http_module.init(&env, &c->http), 0);
	CHECK_EQ(dns_module.init(&env, &c->dns), 0);
	CHECK_EQ(h2c_module.init(&env, &c->h2c), 0);
	c->emit.obs = sink_obs;
	c->emit.core = &c->sink;
	c->seq[0] = 1000;
	c->seq[1] = 5000;
	seg(c, 0, TH_SYN, NULL, 0);
	seg(c, 1, TH_SYN | TH_ACK, NULL, 0);
	seg(c, 0, TH_ACK, NULL, 0);
}

static void conn_open(struct conn *c)
{
	conn_open_port(c, 80);
}

static void conn_close(struct conn *c)
{
	tls_module.fini(c->tls);
	http_module.fini(c->http);
	dns_module.fini(c->dns);
	if (c->f)
		h2c_module.on_flow_end(c->h2c, c->f);
	h2c_module.fini(c->h2c);
	flow_table_free(c->ft);
}

/* A small ClientHello record naming sni (TLS 1.2, one suite, SNI only). */
static size_t client_hello(uint8_t *b, const char *sni)
{
	size_t sl = strlen(sni), k = 0, body, ext;

	b[k++] = 0x16, b[k++] = 3, b[k++] = 1, k += 2;          /* record */
	b[k++] = 1, k += 3;                                     /* ClientHello */
	body = k;
	b[k++] = 3, b[k++] = 3;
	memset(b + k, 0x5a, 32), k += 32;                       /* random */
	b[k++] = 0;                                             /* session id */
	b[k++] = 0, b[k++] = 2, b[k++] = 0x13, b[k++] = 0x01;   /* suites */
	b[k++] = 1, b[k++] = 0;                                 /* compression */
	ext = k, k += 2;
	b[k++] = 0, b[k++] = 0;                                 /* server_name */
	b[k++] = (uint8_t)((sl + 5) >> 8), b[k++] = (uint8_t)(sl + 5);
	b[k++] = (uint8_t)((sl + 3) >> 8), b[k++] = (uint8_t)(sl + 3);
	b[k++] = 0;
	b[k++] = (uint8_t)(sl >> 8), b[k++] = (uint8_t)sl;
	memcpy(b + k, sni, sl), k += sl;
	b[ext] = (uint8_t)((k - ext - 2) >> 8), b[ext + 1] = (uint8_t)(k - ext - 2);
	b[body - 3] = (uint8_t)((k - body) >> 16);
	b[body - 2] = (uint8_t)((k - body) >> 8);
	b[body - 1] = (uint8_t)(k - body);
	b[3] = (uint8_t)((k - 5) >> 8), b[4] = (uint8_t)(k - 5);
	return k;
}

static const char req[] = "GET /pp HTTP/1.1\r\nHost: hidden.example\r\n\r\n";
static const char v1h[] = "PROXY TCP4 10.99.0.10 10.99.0.80 40000 80\r\n";

/* The v2 header: PROXY, TCP over IPv4, with a 7-byte TLV after the
 * addresses (PP2_TYPE_AUTHORITY "a.test"). */
static size_t v2h(uint8_t *b)
{
	static const uint8_t addrs[] = {10, 99, 0, 10, 10, 99, 0, 80, 0x9c, 0x40, 0, 80,
					0x02, 0x00, 0x06, 'a', '.', 't', 'e', 's', 't'};
	memcpy(b, sig, 12);
	b[12] = 0x21;
	b[13] = 0x11;
	b[14] = 0;
	b[15] = sizeof(addrs);
	memcpy(b + 16, addrs, sizeof(addrs));
	return 16 + sizeof(addrs);
}

/* Header h then payload m, the client's bytes split once at cut (all at
 * once when cut is 0 or beyond); then the server's answer (a 200 for HTTP,
 * nothing for TLS). Returns the events. */
static struct sink run(const uint8_t *h, size_t hn, const uint8_t *m, size_t mn, size_t cut,
		       int http)
{
	struct conn c;
	uint8_t b[1024];
	size_t n = hn + mn;
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

	if (hn)
		memcpy(b, h, hn);
	memcpy(b + hn, m, mn);
	conn_open(&c);
	if (cut && cut < n) {
		seg(&c, 0, TH_ACK | TH_PUSH, b, cut);
		seg(&c, 0, TH_ACK | TH_PUSH, b + cut, n - cut);
	} else {
		seg(&c, 0, TH_ACK | TH_PUSH, b, n);
	}
	if (http)
		seg(&c, 1, TH_ACK | TH_PUSH, ok, strlen(ok));
	struct sink s = c.sink;
	conn_close(&c);
	return s;
}

static int is_http(const struct sink *s)
{
	return s->n == 2 && s->kind[0] == OBS_HTTP_REQUEST && !strcmp(s->name[0], "hidden.example") &&
	       !strcmp(s->aux[0], "/pp") && s->flags[0] == 0 && s->kind[1] == OBS_HTTP_RESPONSE &&
	       s->type[1] == 200 && !strcmp(s->aux[1], "/pp");
}

static int is_tls(const struct sink *s)
{
	return s->n == 1 && s->kind[0] == OBS_TLS_CLIENT_HELLO &&
	       !strcmp(s->name[0], "hidden.example") && s->flags[0] == 0;
}

static void test_analyzers(void)
{
	uint8_t v2b[64], ch[256];
	size_t v2n = v2h(v2b), chn = client_hello(ch, "hidden.example");
	const uint8_t *v1b = (const uint8_t *)v1h, *rq = (const uint8_t *)req;
	size_t v1n = strlen(v1h), rqn = strlen(req);
	struct sink s;
	int bad = 0;

	/* without a header, as before */
	s = run(NULL, 0, rq, rqn, 0, 1);
	CHECK(is_http(&s));
	s = run(NULL, 0, ch, chn, 0, 0);
	CHECK(is_tls(&s));

	/* behind a v1 and a v2 header: the same events */
	s = run(v1b, v1n, rq, rqn, 0, 1);
	CHECK(is_http(&s));
	s = run(v2b, v2n, rq, rqn, 0, 1);
	CHECK(is_http(&s));
	s = run(v1b, v1n, ch, chn, 0, 0);
	CHECK(is_tls(&s));
	s = run(v2b, v2n, ch, chn, 0, 0);
	CHECK(is_tls(&s));

	/* split in two segments at every byte: header cut, header alone,
	 * request or hello cut */
	for (size_t k = 1; k < v1n + rqn; k++) {
		s = run(v1b, v1n, rq, rqn, k, 1);
		bad += !is_http(&s);
	}
	for (size_t k = 1; k < v2n + rqn; k++) {
		s = run(v2b, v2n, rq, rqn, k, 1);
		bad += !is_http(&s);
	}
	for (size_t k = 1; k < v1n + chn; k++) {
		s = run(v1b, v1n, ch, chn, k, 0);
		bad += !is_tls(&s);
	}
	for (size_t k = 1; k < v2n + chn; k++) {
		s = run(v2b, v2n, ch, chn, k, 0);
		bad += !is_tls(&s);
	}
	CHECK_EQ(bad, 0);

	/* PROXY UNKNOWN, and v2 LOCAL (a health check) before a request */
	s = run((const uint8_t *)"PROXY UNKNOWN\r\n", 15, rq, rqn, 0, 1);
	CHECK(is_http(&s));
	uint8_t loc[16];
	v2(loc, 0x20, 0x00, 0);
	s = run(loc, 16, ch, chn, 0, 0);
	CHECK(is_tls(&s));

	/* only at the very start: a header after an empty line is none (the
	 * server would refuse it), so nothing is read behind it */
	uint8_t lead[128];
	memcpy(lead, "\r\n", 2);
	memcpy(lead + 2, v1h, v1n);
	s = run(lead, v1n + 2, rq, rqn, 0, 1);
	CHECK_EQ(s.n, 0);
	/* a broken header (port 65536) is no header either */
	static const char bad1[] = "PROXY TCP4 10.99.0.10 10.99.0.80 65536 80\r\n";
	s = run((const uint8_t *)bad1, strlen(bad1), ch, chn, 0, 0);
	CHECK_EQ(s.n, 0);
	/* a line that is a header and a request line too (to a server without
	 * proxy_protocol, nginx serves it as a request of method PROXY): read
	 * as the request, then what follows */
	static const char both[] = "PROXY UNKNOWN://www.evil.test/x HTTP/1.1\r\n\r\n";
	s = run((const uint8_t *)both, strlen(both), rq, rqn, 0, 1);
	CHECK_EQ(s.n, 3);
	CHECK_EQ(s.kind[0], OBS_HTTP_REQUEST);
	CHECK_STR(s.aux[0], "UNKNOWN://www.evil.test/x");
	CHECK_STR(s.name[1], "hidden.example");
	/* one nginx serves behind: an address it does not parse */
	static const char odd[] = "PROXY TCP4 a 01.2.3.4 01 80\r\n";
	s = run((const uint8_t *)odd, strlen(odd), ch, chn, 0, 0);
	CHECK(is_tls(&s));
}

/* Through the egress proxy to the agent's own proxy_protocol server: a
 * CONNECT tunnel whose first bytes are a PROXY header, then the hello.
 * The tunnel's start is where the header is looked for. */
static void test_tunnel(void)
{
	static const char connect[] = "CONNECT hidden.example:443 HTTP/1.1\r\n"
				      "Host: hidden.example:443\r\n\r\n";
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	uint8_t ch[256], v2b[64];
	size_t chn = client_hello(ch, "hidden.example"), v2n = v2h(v2b);
	struct conn c;

	for (int v = 1; v <= 2; v++) {
		conn_open(&c);
		seg(&c, 0, TH_ACK | TH_PUSH, connect, strlen(connect));
		seg(&c, 1, TH_ACK | TH_PUSH, ok, strlen(ok));
		if (v == 1)
			seg(&c, 0, TH_ACK | TH_PUSH, v1h, strlen(v1h));
		else
			seg(&c, 0, TH_ACK | TH_PUSH, v2b, v2n);
		seg(&c, 0, TH_ACK | TH_PUSH, ch, chn);
		CHECK_EQ(c.sink.n, 3);
		CHECK_EQ(c.sink.kind[0], OBS_HTTP_REQUEST);
		CHECK_EQ(c.sink.kind[1], OBS_HTTP_RESPONSE);
		CHECK_EQ(c.sink.kind[2], OBS_TLS_CLIENT_HELLO);
		CHECK_STR(c.sink.name[2], "hidden.example");
		conn_close(&c);
	}
}

/* The header, then the hello after it past the window's first 16 KiB less
 * the header: the claim slides the window past the header, so a hello that
 * fits the window without one fits it with one. */
static void test_tls_window(void)
{
	struct conn c;
	uint8_t v2b[64], *rec = malloc(20000);
	size_t v2n = v2h(v2b);
	char sni[64];

	/* a ClientHello record of 16384 - 5 bytes of body: the whole window */
	memset(sni, 0, sizeof(sni));
	memcpy(sni, "window.example", 14);
	size_t n = client_hello(rec, sni);
	size_t pad = 16384 - n - 4;
	/* grow the hello with a padding extension (21) to fill the window */
	size_t ext_at = 5 + 4 + 2 + 32 + 1 + 4 + 2;
	size_t ext_len = (size_t)rec[ext_at] << 8 | rec[ext_at + 1];
	rec[n] = 0, rec[n + 1] = 21, rec[n + 2] = (uint8_t)(pad >> 8), rec[n + 3] = (uint8_t)pad;
	memset(rec + n + 4, 0, pad);
	n += 4 + pad;
	ext_len += 4 + pad;
	rec[ext_at] = (uint8_t)(ext_len >> 8), rec[ext_at + 1] = (uint8_t)ext_len;
	rec[3] = (uint8_t)((n - 5) >> 8), rec[4] = (uint8_t)(n - 5);
	rec[6] = 0, rec[7] = (uint8_t)((n - 9) >> 8), rec[8] = (uint8_t)(n - 9);
	CHECK_EQ(n, 16384);

	conn_open(&c);
	seg(&c, 0, TH_ACK | TH_PUSH, v2b, v2n);
	for (size_t off = 0; off < n; off += 1400)
		seg(&c, 0, TH_ACK | TH_PUSH, rec + off, n - off < 1400 ? n - off : 1400);
	CHECK_EQ(c.sink.n, 1);
	CHECK_EQ(c.sink.kind[0], OBS_TLS_CLIENT_HELLO);
	CHECK_STR(c.sink.name[0], "window.example");
	CHECK_EQ(c.sink.flags[0], 0);
	conn_close(&c);
	free(rec);
}

/* ---- a v2 header longer than the window ------------------------------------- */

/* A v2 header of hn bytes (PROXY, TCP over IPv4, the rest one NOOP TLV, or
 * several when hn - 28 > 65535 - 3) into b. */
static void v2_big(uint8_t *b, size_t hn)
{
	size_t n = hn - 16, k = 28;

	memcpy(b, sig, 12);
	b[12] = 0x21;
	b[13] = 0x11;
	b[14] = (uint8_t)(n >> 8);
	b[15] = (uint8_t)n;
	memcpy(b + 16, (const uint8_t[]){10, 99, 0, 10, 10, 99, 0, 80, 0x9c, 0x40, 0, 80}, 12);
	while (k < hn) {
		size_t t = hn - k - 3;
		b[k] = 0x04; /* PP2_TYPE_NOOP */
		b[k + 1] = (uint8_t)(t >> 8);
		b[k + 2] = (uint8_t)t;
		/* bytes that look like what the claims look for: only the
		 * header's end may decide (no TLS record start: that would
		 * widen the window to 132 KiB, flow.h) */
		static const char fill[] = "GET / HTTP/1.1\r\nPROXY TCP4 \r\n\r\n\0\r\nQUIT\n";
		for (size_t i = 0; i < t; i++)
			b[k + 3 + i] = (uint8_t)fill[i % (sizeof(fill) - 1)];
		k += 3 + t;
	}
}

/* A DNS query over TCP for hidden.example, A. */
static size_t dns_query(uint8_t *b)
{
	static const uint8_t q[] = {0, 32, 0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0,
				    6, 'h', 'i', 'd', 'd', 'e', 'n', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0,
				    0, 1, 0, 1};
	memcpy(b, q, sizeof(q));
	return sizeof(q);
}

enum { BIG_HTTP, BIG_TLS, BIG_DNS, BIG_H2C };

/* The header (hn bytes) and the payload m as the client sends them: in
 * segments of at most seg_max bytes, one of them ending at cut (0: none);
 * then, for HTTP, the server's 200. Returns the events. */
static struct sink run_big(size_t hn, const uint8_t *m, size_t mn, size_t cut, size_t seg_max,
			   int kind)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	size_t n = hn + mn;
	uint8_t *b = malloc(n);
	struct conn c;

	CHECK(b != NULL);
	v2_big(b, hn);
	memcpy(b + hn, m, mn);
	conn_open_port(&c, kind == BIG_DNS ? 53 : 80);
	for (size_t off = 0; off < n;) {
		size_t k = n - off < seg_max ? n - off : seg_max;
		if (cut > off && cut < off + k)
			k = cut - off;
		seg(&c, 0, TH_ACK | TH_PUSH, b + off, k);
		off += k;
	}
	if (kind == BIG_HTTP)
		seg(&c, 1, TH_ACK | TH_PUSH, ok, strlen(ok));
	struct sink s = c.sink;
	conn_close(&c);
	free(b);
	return s;
}

/* The h2c preface, an empty SETTINGS and a GET of / at hidden.example
 * (HPACK: :method GET, :scheme http, :path / from the static table, then
 * :authority by its indexed name). */
static size_t h2c_request(uint8_t *b)
{
	static const uint8_t r[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
				   "\0\0\0\x04\0\0\0\0\0"
				   "\0\0\x13\x01\x05\0\0\0\x01"
				   "\x82\x86\x84\x41\x0ehidden.example";
	memcpy(b, r, sizeof(r) - 1);
	return sizeof(r) - 1;
}

static int is_h2c(const struct sink *s)
{
	return s->n == 1 && s->kind[0] == OBS_HTTP_REQUEST && !strcmp(s->name[0], "hidden.example") &&
	       !strcmp(s->aux[0], "/");
}

static int is_dns(const struct sink *s)
{
	return s->n == 1 && s->kind[0] == OBS_DNS_QUERY && !strcmp(s->name[0], "hidden.example");
}

/* unbound answers a query behind a 20,000-byte header (review19 R19-5);
 * the header may be 64 KiB + 15: every claim (DNS, TLS, HTTP, h2c) reads
 * what follows it, with
 * the header cut at many points, in wire-sized segments and in a few
 * larger ones (an offload's). */
static void test_big_header(void)
{
	static const size_t sizes[] = {16000, 16383, 16384, 16385, 16400, 20000, 32768, 40000,
				       65535, PROXY_V2_MAX};
	uint8_t ch[256], dq[64], h2[128];
	size_t chn = client_hello(ch, "hidden.example"), dqn = dns_query(dq), h2n = h2c_request(h2);
	const uint8_t *rq = (const uint8_t *)req;
	size_t rqn = strlen(req);
	int bad = 0, runs = 0;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t hn = sizes[i];
		static const size_t segs[] = {1448, 1000, 9000};
		for (size_t j = 0; j < 3; j++) {
			/* cuts: every byte near the header's fixed part and
			 * near its end, and a stride across it */
			for (size_t cut = 0; cut < hn + 40; cut += (cut < 40 || cut + 40 > hn) ? 1 : 997) {
				struct sink s = run_big(hn, rq, rqn, cut, segs[j], BIG_HTTP);
				bad += !is_http(&s);
				s = run_big(hn, ch, chn, cut, segs[j], BIG_TLS);
				bad += !is_tls(&s);
				s = run_big(hn, dq, dqn, cut, segs[j], BIG_DNS);
				bad += !is_dns(&s);
				s = run_big(hn, h2, h2n, cut, segs[j], BIG_H2C);
				bad += !is_h2c(&s);
				runs += 4;
			}
		}
	}
	CHECK(runs > 1000);
	CHECK_EQ(bad, 0);
}

/* The rest of a header passed in part, as proxyproto_stream keeps it: the
 * cursor moves past what came and the window slides; the rest's length
 * once it is whole; no more when a hole or the window's end cuts it. */
static void test_big_stream(void)
{
	uint8_t *hb = malloc(20000), buf[20100];
	struct flow_stream st[2];
	struct flow f;

	v2_big(hb, 20000);
	memset(st, 0, sizeof(st));
	memset(&f, 0, sizeof(f));
	f.st = st;
	st[0].buf = buf;
	st[0].cap = sizeof(buf);
	/* the fixed part alone: wait, nothing passed */
	memcpy(buf, hb, 16);
	st[0].len = 16;
	CHECK_EQ(proxyproto_stream(&f), -1);
	CHECK_EQ(st[0].consumed, 0);
	CHECK_EQ(f.pp_rest, 0);
	/* 1,000 bytes: passed, 19,000 to come */
	memcpy(buf, hb, 1000);
	st[0].len = 1000;
	CHECK_EQ(proxyproto_stream(&f), -1);
	CHECK_EQ(f.pp_rest, 19000);
	CHECK_EQ(st[0].consumed, 0);
	CHECK_EQ(st[0].slid, 1000);
	CHECK_EQ(st[0].len, 0);
	/* asked again with nothing new: the same */
	CHECK_EQ(proxyproto_stream(&f), -1);
	CHECK_EQ(f.pp_rest, 19000);
	/* 18,999 more, in one go: passed */
	memcpy(buf, hb + 1000, 18999);
	st[0].len = 18999;
	CHECK_EQ(proxyproto_stream(&f), -1);
	CHECK_EQ(f.pp_rest, 1);
	CHECK_EQ(st[0].slid, 19999);
	/* the last byte and 3 after: the rest, 1 byte, is the header now,
	 * for every claim that asks */
	memcpy(buf, hb + 19999, 1);
	memcpy(buf + 1, "GET", 3);
	st[0].len = 4;
	CHECK_EQ(proxyproto_stream(&f), 1);
	CHECK_EQ(proxyproto_stream(&f), 1);
	CHECK_EQ(st[0].consumed, 0);
	proxyproto_taken(&f);
	CHECK_EQ(f.pp_rest, 0);
	CHECK_EQ(proxyproto_stream(&f), 0); /* "\x??GET": no header */
	proxyproto_taken(NULL);

	/* cut by a hole, or the window's end: no more of it comes */
	f.pp_rest = 500;
	st[0].len = 100;
	st[0].holes = 1;
	st[0].hole_start = 50;
	st[0].resync = 60;
	CHECK_EQ(proxyproto_stream(&f), 0);
	CHECK_EQ(f.pp_rest, 500);
	CHECK_EQ(st[0].consumed, 0);
	st[0].holes = 0;
	st[0].overflow = 1;
	CHECK_EQ(proxyproto_stream(&f), 0);
	CHECK_EQ(st[0].consumed, 0);
	st[0].overflow = 0;
	st[0].done = 1;
	CHECK_EQ(proxyproto_stream(&f), 0);
	st[0].done = 0;
	/* a header whose fixed part is broken (addresses longer than its
	 * length) is none, and nothing is passed */
	f.pp_rest = 0;
	memcpy(buf, hb, 1000);
	buf[14] = 0, buf[15] = 11;
	st[0].len = 1000;
	CHECK_EQ(proxyproto_stream(&f), 0);
	CHECK_EQ(st[0].consumed, 0);
	CHECK_EQ(f.pp_rest, 0);
	free(hb);
}

int main(void)
{
	test_v1_valid();
	test_v1_bad();
	test_v2();
	test_prefix_consistency();
	test_stream();
	test_analyzers();
	test_tls_window();
	test_tunnel();
	test_big_header();
	test_big_stream();
	return check_done();
}
