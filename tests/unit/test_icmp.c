/*
 * test_icmp.c - the ICMP/ICMPv6 analyzer (analyzers/icmp.h) and its JSON
 * reader (api/icmp_json.h) on crafted bytes: echo fields and entropy, error
 * quotes tied to flows of a real flow table, every truncation point of an
 * echo and of an error, the malformed rules, and the exact JSON.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../analyzers/icmp.h"
#include "../../analyzers/module.h"
#include "../../api/icmp_json.h"
#include "../../sensor/flow.h"
#include "check.h"

/* ---- byte builder --------------------------------------------------------- */

struct bb {
	uint8_t b[2048];
	size_t n;
};

static void put8(struct bb *b, unsigned v)
{
	b->b[b->n++] = (uint8_t)v;
}

static void put16(struct bb *b, unsigned v)
{
	put8(b, v >> 8);
	put8(b, v & 0xff);
}

static void put32(struct bb *b, uint32_t v)
{
	put16(b, v >> 16);
	put16(b, v & 0xffff);
}

static void putn(struct bb *b, const uint8_t *s, size_t n)
{
	memcpy(b->b + b->n, s, n);
	b->n += n;
}

/* ICMP header: type, code, checksum 0, 4 bytes of rest-of-header. */
static void icmp_hdr(struct bb *b, unsigned type, unsigned code, uint32_t rest)
{
	put8(b, type);
	put8(b, code);
	put16(b, 0);
	put32(b, rest);
}

static const uint8_t A_SBX[4] = {10, 99, 0, 10};    /* sandbox host */
static const uint8_t A_DST[4] = {198, 51, 100, 7};  /* outside */
static const uint8_t A_RTR[4] = {192, 0, 2, 1};     /* a router */
static const uint8_t A6_SBX[16] = {0xfd, 0, 0, 0x99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10};
static const uint8_t A6_DST[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t A6_RTR[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff};

/* A quoted IPv4 header (ihl in 4-byte words, options zero-filled). */
static void ip4_hdr(struct bb *b, unsigned ihl, unsigned tot, unsigned frag, unsigned proto,
		    const uint8_t *src, const uint8_t *dst)
{
	put8(b, 0x40 | ihl);
	put8(b, 0);
	put16(b, tot);
	put16(b, 0x1234);
	put16(b, frag);
	put8(b, 64);
	put8(b, proto);
	put16(b, 0);
	putn(b, src, 4);
	putn(b, dst, 4);
	for (unsigned i = 5; i < ihl; i++)
		put32(b, 0x01010101); /* NOP options */
}

static void ip6_hdr(struct bb *b, unsigned plen, unsigned nh, const uint8_t *src,
		    const uint8_t *dst)
{
	put32(b, 0x60000000);
	put16(b, plen);
	put8(b, nh);
	put8(b, 64);
	putn(b, src, 16);
	putn(b, dst, 16);
}

/* A UDP header (8 bytes). */
static void udp_hdr(struct bb *b, unsigned sport, unsigned dport)
{
	put16(b, sport);
	put16(b, dport);
	put16(b, 8);
	put16(b, 0);
}

/* ---- a sink for observations ---------------------------------------------- */

struct sink {
	int n;
	int kind;
	char name[64];
	unsigned type, code, flags;
	uint32_t size;
	char info[ICMP_INFO_MAX];
	size_t info_len;
};

static int sink_obs(struct emit *e, const struct obs *o)
{
	struct sink *s = e->core;

	s->n++;
	s->kind = o->kind;
	snprintf(s->name, sizeof(s->name), "%.*s", (int)o->name_len, o->name ? o->name : "");
	s->type = o->type;
	s->code = o->code;
	s->flags = o->flags;
	s->size = o->size;
	s->info_len = o->info_len < sizeof(s->info) ? o->info_len : sizeof(s->info) - 1;
	memcpy(s->info, o->info, s->info_len);
	s->info[s->info_len] = '\0';
	return 0;
}

struct rig {
	struct flow_table *ft;
	void *state;
	struct emit emit;
	struct sink sink;
	uint64_t ts;
};

static void rig_open(struct rig *r, int with_flows)
{
	memset(r, 0, sizeof(*r));
	r->ft = with_flows ? flow_table_new(NULL, NULL, NULL) : NULL;
	struct module_env env = {.flows = r->ft};
	CHECK_EQ(icmp_module.init(&env, &r->state), 0);
	r->emit.obs = sink_obs;
	r->emit.core = &r->sink;
	r->ts = 1796032800000000ull;
}

static void rig_close(struct rig *r)
{
	icmp_module.fini(r->state);
	flow_table_free(r->ft);
}

static void pkt_fill(struct pkt *p, uint64_t ts, int ipv, unsigned proto, const uint8_t *src,
		     const uint8_t *dst)
{
	memset(p, 0, sizeof(*p));
	p->ts_us = ts;
	p->ipv = (uint8_t)ipv;
	p->proto = (uint8_t)proto;
	memcpy(p->src, src, ipv == 4 ? 4 : 16);
	memcpy(p->dst, dst, ipv == 4 ? 4 : 16);
}

/* A UDP or TCP (SYN) packet into the flow table; returns its flow. */
static struct flow *rig_flow(struct rig *r, int ipv, unsigned proto, const uint8_t *src,
			     unsigned sport, const uint8_t *dst, unsigned dport)
{
	struct pkt p;

	pkt_fill(&p, r->ts++, ipv, proto, src, dst);
	p.sport = (uint16_t)sport;
	p.dport = (uint16_t)dport;
	if (proto == IPPROTO_TCP) {
		p.tcp_flags = TH_SYN;
		p.seq = 1000; /* what the quotes below quote */
	}
	return flow_table_update(r->ft, &p);
}

/* An ICMP message through the flow table (as the core does) and the module. */
static int rig_icmp(struct rig *r, int ipv, const uint8_t *src, const uint8_t *dst,
		    const struct bb *m, unsigned pflags)
{
	struct pkt p;

	pkt_fill(&p, r->ts++, ipv, ipv == 4 ? IPPROTO_ICMP : IPPROTO_ICMPV6, src, dst);
	p.l4 = m->b;
	p.l4_len = m->n;
	p.payload = m->n >= 8 ? m->b + 8 : NULL;
	p.payload_len = m->n >= 8 ? m->n - 8 : 0;
	p.flags = pflags;
	if (r->ft)
		flow_table_update(r->ft, &p);
	return icmp_module.on_packet(r->state, &p, &r->emit);
}

/* ---- record helpers ------------------------------------------------------- */

/* The record with US shown as '|' and RS as '$', for readable comparisons. */
static const char *show(const char *info, size_t n, char *buf, size_t cap)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k + 1 < cap; i++)
		buf[k++] = info[i] == REC_US ? '|' : info[i] == REC_RS ? '$' : info[i];
	buf[k] = '\0';
	return buf;
}

/* The reverse of show(): '|' becomes US and '$' RS. Returns the length. */
static size_t unshow(const char *s, char *buf, size_t cap)
{
	size_t k = 0;

	for (; *s && k + 1 < cap; s++)
		buf[k++] = *s == '|' ? REC_US : *s == '$' ? REC_RS : *s;
	buf[k] = '\0';
	return k;
}

static char *dump_info(const char *info, size_t len, size_t flags)
{
	json_t *o = json_object();
	char *s = NULL;

	if (o && icmp_info_json(o, info, len, OBS_ICMP) == 0)
		s = json_dumps(o, flags);
	json_decref(o);
	return s;
}

#define CHECK_JSON(info, len, flags, want)                       \
	do {                                                         \
		char *check_j_ = dump_info((info), (len), (flags));  \
		CHECK_STR(check_j_, (want));                         \
		free(check_j_);                                      \
	} while (0)

#define JF (JSON_COMPACT | JSON_SORT_KEYS)

/* ---- echo ----------------------------------------------------------------- */

static void test_echo(void)
{
	static struct icmp_msg m;
	struct bb b = {.n = 0};
	uint8_t zeros[56] = {0}, all[256];
	char buf[512];

	for (int i = 0; i < 256; i++)
		all[i] = (uint8_t)i;

	/* v4 echo request: 56 zero bytes */
	icmp_hdr(&b, 8, 0, 0x12340007);
	putn(&b, zeros, sizeof(zeros));
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
	CHECK_EQ(m.type, 8);
	CHECK_EQ(m.code, 0);
	CHECK_STR(m.name, "echo-request");
	CHECK_EQ(m.echo, 1);
	CHECK_EQ(m.error, 0);
	CHECK_EQ(m.id, 0x1234);
	CHECK_EQ(m.seq, 7);
	CHECK_EQ(m.payload_len, 56);
	CHECK_EQ(m.entropy100, 0);
	CHECK_EQ(m.flags, 0);
	CHECK_EQ(m.q.present, 0);
	icmp_record(&m);
	CHECK_STR(show(m.info, m.info_len, buf, sizeof(buf)),
		  "4|8|0|echo-request|4660|7|56|0||||||0||0||$");
	CHECK_JSON(m.info, m.info_len, JF,
		   "{\"code\":0,\"entropy\":0.0,\"id\":4660,\"name\":\"echo-request\","
		   "\"payload_len\":56,\"seq\":7,\"type\":8,\"v\":4}");

	/* v4 echo reply, no payload */
	b.n = 0;
	icmp_hdr(&b, 0, 0, 0xbeef0001);
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
	CHECK_STR(m.name, "echo-reply");
	CHECK_EQ(m.id, 0xbeef);
	CHECK_EQ(m.seq, 1);
	CHECK_EQ(m.payload_len, 0);
	CHECK_EQ(m.entropy100, 0);

	/* v6 echo request: bytes 0..255, 8 bits per byte */
	b.n = 0;
	icmp_hdr(&b, 128, 0, 0x0001ffff);
	putn(&b, all, sizeof(all));
	CHECK_EQ(icmp_parse(b.b, b.n, 6, 0, &m), MOD_OK);
	CHECK_STR(m.name, "echo-request");
	CHECK_EQ(m.id, 1);
	CHECK_EQ(m.seq, 0xffff);
	CHECK_EQ(m.payload_len, 256);
	CHECK_EQ(m.entropy100, 800);
	icmp_record(&m);
	CHECK_JSON(m.info, m.info_len, JF,
		   "{\"code\":0,\"entropy\":8.0,\"id\":1,\"name\":\"echo-request\","
		   "\"payload_len\":256,\"seq\":65535,\"type\":128,\"v\":6}");

	/* v6 echo reply with "abc": log2(3) = 1.58 */
	b.n = 0;
	icmp_hdr(&b, 129, 0, 0x00050006);
	putn(&b, (const uint8_t *)"abc", 3);
	CHECK_EQ(icmp_parse(b.b, b.n, 6, 0, &m), MOD_OK);
	CHECK_STR(m.name, "echo-reply");
	CHECK_EQ(m.entropy100, 158);
	icmp_record(&m);
	CHECK_JSON(m.info, m.info_len, JF | JSON_REAL_PRECISION(15),
		   "{\"code\":0,\"entropy\":1.58,\"id\":5,\"name\":\"echo-reply\","
		   "\"payload_len\":3,\"seq\":6,\"type\":129,\"v\":6}");

	/* the v4 echo numbers mean nothing in ICMPv6 (and the other way round) */
	b.n = 0;
	icmp_hdr(&b, 8, 0, 0x12340007);
	CHECK_EQ(icmp_parse(b.b, b.n, 6, 0, &m), MOD_OK);
	CHECK(m.name == NULL);
	CHECK_EQ(m.echo, 0);
	CHECK_EQ(m.id, -1);
	CHECK_EQ(m.entropy100, 0); /* a type of no known kind: its payload is measured */
	icmp_record(&m);
	CHECK_STR(show(m.info, m.info_len, buf, sizeof(buf)), "6|8|0||||0|0||||||0||0||$");
	CHECK_JSON(m.info, m.info_len, JF,
		   "{\"code\":0,\"entropy\":0.0,\"payload_len\":0,\"type\":8,\"v\":6}");
	/* ... as is a timestamp request's (a channel needs no echo) */
	b.n = 0;
	icmp_hdr(&b, 13, 0, 0x00010002);
	putn(&b, (const uint8_t *)"\x00\x01\x02\x03\x04\x05\x06\x07", 8);
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
	CHECK_EQ(m.entropy100, 300);
	CHECK_EQ(m.id, -1);

	/* a neighbour solicitation: an event like any other */
	b.n = 0;
	icmp_hdr(&b, 135, 0, 0);
	putn(&b, A6_DST, 16);
	CHECK_EQ(icmp_parse(b.b, b.n, 6, 0, &m), MOD_OK);
	CHECK_STR(m.name, "neighbor-solicitation");
	CHECK_EQ(m.payload_len, 16);
	CHECK_EQ(m.entropy100, -1);

	/* not ICMP at all */
	CHECK_EQ(icmp_parse(b.b, b.n, 5, 0, &m), MOD_NOT_MINE);
}

/* Every cut of an echo request: 1 byte gives the type, 2 the code, 6 the
 * id, 8 the sequence; below 8 it is malformed (short on the wire) or, when
 * the capture cut it, truncated; from 8 on the payload is what is left. */
/* icmp_fill by its definition, slowly: each period's tail and the count's. */
static size_t fill_ref(const uint8_t *p, size_t n)
{
	size_t best = n, s;

	if (n < 2)
		return 0;
	for (s = n; s > 1 && p[s - 1] == (uint8_t)(p[s - 2] + 1); s--)
		;
	best = s;
	for (size_t d = 1; d <= ICMP_FILL_PERIOD; d++) {
		for (s = n; s > d && p[s - 1] == p[s - 1 - d]; s--)
			;
		if (s < best)
			best = s;
	}
	return n - best >= ICMP_FILL_PERIOD ? n - best : 0;
}

/* The filler after an echo's data (icmp_fill) and what the parse makes of
 * it: data length and entropy, and the payload digest a reply is compared
 * with. Payloads as iputils ping, ping -p, Windows ping, traceroute and mtr
 * send them, and tunnel data. */
static void test_fill(void)
{
	static struct icmp_msg m;
	struct bb b = {.n = 0};
	uint8_t p[1400];
	uint64_t d1, dd1;

	/* iputils ping -s 1400: a 16-byte timeval, then bytes counting from 0x10 */
	for (int i = 0; i < 1400; i++)
		p[i] = (uint8_t)i;
	memcpy(p, "\x5f\x35\x06\xa7\0\0\0\0\x9b\xc5\x0a\0\0\0\0\0", 16);
	CHECK_EQ(icmp_fill(p, 1400), 1383);      /* data: the timeval and 0x10 */
	CHECK_EQ(icmp_fill(p, 56), 39);          /* ping's default 56 bytes */
	CHECK_EQ(icmp_fill(p, 48), 0);           /* a 31-byte count: too short */
	CHECK_EQ(icmp_fill(p, 49), 32);
	/* ping -p with a 16-byte pattern, after the timeval: the pattern is data */
	for (int i = 16; i < 1000; i++)
		p[i] = (uint8_t)("\x01\x23\x45\x67\x89\xab\xcd\xef\xfe\xdc\xba\x98\x76\x54\x32\x10"[i % 16]);
	CHECK_EQ(icmp_fill(p, 1000), 1000 - 32);
	/* Windows: "abcdefghijklmnopqrstuvw" repeated (period 23), no timestamp */
	for (int i = 0; i < 1000; i++)
		p[i] = (uint8_t)('a' + i % 23);
	CHECK_EQ(icmp_fill(p, 1000), 1000 - 23);
	CHECK_EQ(icmp_fill(p, 32), 0);           /* its default 32: counts 'a'..'w' then 9 */
	/* a period of 32 is the longest; 33 is data */
	for (int i = 0; i < 1000; i++)
		p[i] = (uint8_t)(i % 32 * 7 + 1);
	CHECK_EQ(icmp_fill(p, 1000), 1000 - 32);
	for (int i = 0; i < 1000; i++)
		p[i] = (uint8_t)(i % 33 * 7 + 1);
	CHECK_EQ(icmp_fill(p, 1000), 0);
	/* zeros (mtr): all but the first byte */
	memset(p, 0, sizeof(p));
	CHECK_EQ(icmp_fill(p, 1400), 1399);
	CHECK_EQ(icmp_fill(p, 1), 0);
	CHECK_EQ(icmp_fill(p, 0), 0);
	/* data that ends in a short run is data */
	for (int i = 0; i < 200; i++)
		p[i] = (uint8_t)(i * 151 + (i >> 3) * 17 + 5);
	CHECK_EQ(icmp_fill(p, 200), 0);
	memset(p + 200, 0, 31);
	CHECK_EQ(icmp_fill(p, 231), 0);
	memset(p + 200, 0, 33);
	CHECK_EQ(icmp_fill(p, 233), 32);         /* 200 of data, 1 zero, 32 repeating it */

	/* against the definition: random data, then tails of every period up
	 * to 40 (some cut short, some a count, some nested: a short period's
	 * run inside a long one's) */
	{
		static uint8_t q[1600];
		uint32_t x = 12345;
		int bad = 0;

		for (int k = 0; k < 3000; k++) {
			size_t pre, n, per, inner;
			x = x * 1103515245u + 12345u;
			pre = (x >> 8) % 200;
			x = x * 1103515245u + 12345u;
			per = 1 + (x >> 8) % 40;
			x = x * 1103515245u + 12345u;
			n = pre + (x >> 8) % 1300;
			for (size_t i = 0; i < n; i++) {
				x = x * 1103515245u + 12345u;
				q[i] = i < pre + per ? (uint8_t)(x >> 16) : q[i - per];
			}
			if (k % 5 == 1) /* a count */
				for (size_t i = pre; i < n; i++)
					q[i] = (uint8_t)(q[pre] + (i - pre));
			if (k % 5 == 2 && n > pre + 100) { /* a run of zeros inside */
				inner = pre + (n - pre) / 2;
				memset(q + inner, 0, (n - inner) / 2);
			}
			if (k % 5 == 3) /* few byte values: long chance runs */
				for (size_t i = 0; i < n; i++)
					q[i] &= 1;
			bad += icmp_fill(q, n) != fill_ref(q, n);
		}
		CHECK_EQ(bad, 0);
	}

	/* the parse: data length and its entropy, the digest */
	for (int i = 0; i < 1400; i++)
		p[i] = (uint8_t)i;
	memcpy(p, "\x5f\x35\x06\xa7\0\0\0\0\x9b\xc5\x0a\0\0\0\0\0", 16);
	icmp_hdr(&b, 8, 0, 0x12340001);
	putn(&b, p, 1400);
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
	CHECK_EQ(m.payload_len, 1400);
	CHECK_EQ(m.data_len, 17);
	CHECK(m.entropy100 > 790);               /* the whole payload: nearly 8 bits */
	CHECK(m.data_entropy100 < 400);
	CHECK(m.digest != 0);
	CHECK(m.data_digest != 0);
	/* the lead: the data's first 16 bytes, which the digests leave out */
	CHECK_EQ(m.lead_len, 16);
	CHECK(memcmp(m.lead, p, 16) == 0);
	d1 = m.digest;
	dd1 = m.data_digest;
	/* the data's digest is the same at every size ping is given (-s):
	 * the data is the timestamp and 0x10 whatever follows */
	for (size_t n = 17; n <= 1400; n += 97) {
		b.n = 0;
		icmp_hdr(&b, 8, 0, 0x12340002);
		putn(&b, p, n);
		CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
		CHECK(m.data_digest == dd1);
	}
	b.n = 0;
	icmp_hdr(&b, 8, 0, 0x12340001);
	putn(&b, p, 1400);
	b.b[0] = 0; /* the reply: same payload, same digest */
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
	CHECK(m.digest == d1);
	b.b[8 + 5] ^= 0x40; /* the timestamp: ping's send time, left out */
	b.b[8 + 15] ^= 0x01;
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
	CHECK(m.digest == d1);
	b.b[8 + 16] ^= 0x01; /* past it: another payload */
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
	CHECK(m.digest != d1);
	b.b[8 + 16] ^= 0x01;
	b.b[8 + 700] ^= 1; /* one byte of the payload changed */
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
	CHECK(m.digest != d1);
	CHECK_EQ(m.data_len, 702);               /* the count starts again at 701 */
	CHECK_EQ(icmp_parse(b.b, b.n - 1, 4, 0, &m), MOD_OK); /* one byte shorter */
	CHECK(m.digest != d1);
	CHECK_EQ(icmp_parse(b.b, b.n, 4, OBS_F_TRUNCATED, &m), MOD_TRUNCATED);
	CHECK(m.digest == 0);                    /* a cut payload has none */
	CHECK(m.data_digest == 0);
	CHECK_EQ(m.lead_len, 0);                 /* nor a lead */
	CHECK_EQ(m.data_len, 702);
	/* ping -s 15 -p PATTERN: no send time, the lead is the data, 15 bytes */
	b.n = 0;
	icmp_hdr(&b, 8, 0, 0x12340004);
	putn(&b, (const uint8_t *)"aws_access_key_", 15);
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
	CHECK_EQ(m.data_len, 15);
	CHECK_EQ(m.lead_len, 15);
	CHECK(memcmp(m.lead, "aws_access_key_", 15) == 0);
	/* ping -s 32 -p PATTERN: the data is the timeval and the pattern; its
	 * digest follows the pattern, not the send time nor the size (-s 1000:
	 * the pattern repeated, filler after its first period) */
	{
		static const char *const pat[2] = {"aws_access_key_i", "d = AKIAEXAMPLE7"};
		uint64_t dp[2];
		for (int k = 0; k < 2; k++) {
			for (size_t n = 32; n <= 1000; n += 968) {
				for (size_t i = 16; i < n; i++)
					p[i] = (uint8_t)pat[k][i % 16];
				p[3] = (uint8_t)(n + (size_t)k); /* another send time */
				b.n = 0;
				icmp_hdr(&b, 8, 0, 0x12340003);
				putn(&b, p, n);
				CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
				CHECK_EQ(m.data_len, 32);
				if (n == 32)
					dp[k] = m.data_digest;
				CHECK(m.data_digest == dp[k]);
			}
		}
		CHECK(dp[0] != dp[1]);
		CHECK(dp[0] != dd1);
		/* no data past the timestamp (mtr's zeros): the same digest,
		 * of nothing, whatever the first bytes */
		memset(p, 0, 64);
		p[0] = 1;
		b.n = 0;
		icmp_hdr(&b, 8, 0, 0x12340004);
		putn(&b, p, 64);
		CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
		CHECK(m.data_len <= 16);
		dp[0] = m.data_digest;
		p[0] = 2;
		b.n = 0;
		icmp_hdr(&b, 8, 0, 0x12340004);
		putn(&b, p, 64);
		CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
		CHECK(m.data_digest == dp[0] && dp[0] != 0);
	}
	/* errors carry no data */
	b.n = 0;
	icmp_hdr(&b, 3, 3, 0);
	putn(&b, p, 28);
	icmp_parse(b.b, b.n, 4, 0, &m);
	CHECK_EQ(m.data_len, 0);
	CHECK(m.digest == 0);
}

static void test_echo_truncation(void)
{
	static struct icmp_msg m;
	struct bb b = {.n = 0};
	int bad = 0;

	icmp_hdr(&b, 8, 0, 0x12340007);
	putn(&b, (const uint8_t *)"payload!", 8);
	for (unsigned cut = 0; cut <= OBS_F_TRUNCATED; cut += OBS_F_TRUNCATED)
		for (size_t k = 0; k <= b.n; k++) {
			int r = icmp_parse(b.b, k, 4, cut, &m);
			int want = cut || k == 0 ? MOD_TRUNCATED : k < 8 ? MOD_MALFORMED : MOD_OK;
			bad += r != want;
			bad += m.type != (k < 1 ? -1 : 8);
			bad += m.code != (k < 2 ? -1 : 0);
			bad += m.id != (k < 6 ? -1 : 0x1234);
			bad += m.seq != (k < 8 ? -1 : 7);
			bad += m.payload_len != (k < 8 ? 0 : k - 8);
			bad += m.entropy100 != (k < 8 ? -1 : k == 8 ? 0 : m.entropy100);
			bad += m.flags != (want == MOD_TRUNCATED	? OBS_F_TRUNCATED
					   : want == MOD_MALFORMED ? OBS_F_MALFORMED
								   : 0u);
			bad += (want == MOD_MALFORMED) != (m.reason != NULL);
			if (r != want)
				fprintf(stderr, "echo cut at %zu (%u): %d\n", k, cut, r);
		}
	CHECK_EQ(bad, 0);

	/* the capture cut the datagram: flagged and counted as truncated */
	CHECK_EQ(icmp_parse(b.b, b.n, 4, OBS_F_TRUNCATED, &m), MOD_TRUNCATED);
	CHECK_EQ(m.flags, OBS_F_TRUNCATED);
	CHECK_EQ(m.payload_len, 8);
	CHECK_EQ(m.seq, 7);
	icmp_record(&m);
	CHECK_JSON(m.info, m.info_len, JF,
		   "{\"code\":0,\"entropy\":2.75,\"id\":4660,\"name\":\"echo-request\","
		   "\"payload_len\":8,\"seq\":7,\"truncated\":true,\"type\":8,\"v\":4}");

	/* a cut header: still a record with what was read */
	CHECK_EQ(icmp_parse(b.b, 5, 4, OBS_F_TRUNCATED, &m), MOD_TRUNCATED);
	icmp_record(&m);
	CHECK_JSON(m.info, m.info_len, JF,
		   "{\"code\":0,\"name\":\"echo-request\",\"payload_len\":0,\"truncated\":true,"
		   "\"type\":8,\"v\":4}");
	/* ... and one short on the wire: malformed, not "truncated" */
	CHECK_EQ(icmp_parse(b.b, 5, 4, 0, &m), MOD_MALFORMED);
	icmp_record(&m);
	CHECK_JSON(m.info, m.info_len, JF,
		   "{\"code\":0,\"malformed\":\"shorter than its header\",\"name\":\"echo-request\","
		   "\"payload_len\":0,\"type\":8,\"v\":4}");
	/* one byte: the type alone, still reported */
	CHECK_EQ(icmp_parse(b.b, 1, 4, 0, &m), MOD_MALFORMED);
	icmp_record(&m);
	CHECK_JSON(m.info, m.info_len, JF,
		   "{\"malformed\":\"shorter than its header\",\"name\":\"echo-request\","
		   "\"payload_len\":0,\"type\":8,\"v\":4}");
}

/* ---- errors quoting flows ------------------------------------------------- */

/* Port unreachable from the destination, quoting UDP sbx:40000 -> dst:53. */
static void unreach_udp(struct bb *b, unsigned sport, unsigned code)
{
	b->n = 0;
	icmp_hdr(b, 3, code, code == 4 ? 1400 : 0);
	ip4_hdr(b, 5, 20 + 8 + 40, 0, IPPROTO_UDP, A_SBX, A_DST);
	udp_hdr(b, sport, 53);
}

static void test_unreach_v4(void)
{
	struct rig r;
	struct bb b;
	char buf[512];
	struct flow *f, *g;

	rig_open(&r, 1);
	f = rig_flow(&r, 4, IPPROTO_UDP, A_SBX, 40000, A_DST, 53);
	g = rig_flow(&r, 4, IPPROTO_UDP, A_SBX, 40001, A_DST, 53);
	CHECK(f != NULL && g != NULL);
	CHECK_EQ(f->state & FLOW_UNREACH, 0);

	/* matches the flow: FLOW_UNREACH, "flow": true */
	unreach_udp(&b, 40000, 3);
	CHECK_EQ(rig_icmp(&r, 4, A_DST, A_SBX, &b, 0), MOD_OK);
	CHECK_EQ(r.sink.n, 1);
	CHECK_EQ(r.sink.kind, OBS_ICMP);
	CHECK_STR(r.sink.name, "198.51.100.7");
	CHECK_EQ(r.sink.type, 3);
	CHECK_EQ(r.sink.code, 3);
	CHECK_EQ(r.sink.size, 28);
	CHECK_EQ(r.sink.flags, 0);
	CHECK(f->state & FLOW_UNREACH);
	CHECK_EQ(g->state & FLOW_UNREACH, 0);
	CHECK_STR(show(r.sink.info, r.sink.info_len, buf, sizeof(buf)),
		  "4|3|3|dest-unreachable|||28||17|10.99.0.10|40000|198.51.100.7|53|1||0||$");
	CHECK_JSON(r.sink.info, r.sink.info_len, JF,
		   "{\"code\":3,\"name\":\"dest-unreachable\",\"payload_len\":28,"
		   "\"quoted\":{\"dst_ip\":\"198.51.100.7\",\"dst_port\":53,\"flow\":true,"
		   "\"proto\":\"udp\",\"src_ip\":\"10.99.0.10\",\"src_port\":40000},"
		   "\"type\":3,\"v\":4}");

	/* no such flow: "flow": false */
	unreach_udp(&b, 40002, 3);
	CHECK_EQ(rig_icmp(&r, 4, A_DST, A_SBX, &b, 0), MOD_OK);
	CHECK_EQ(r.sink.n, 2);
	CHECK_EQ(g->state & FLOW_UNREACH, 0);
	CHECK_JSON(r.sink.info, r.sink.info_len, JF,
		   "{\"code\":3,\"name\":\"dest-unreachable\",\"payload_len\":28,"
		   "\"quoted\":{\"dst_ip\":\"198.51.100.7\",\"dst_port\":53,\"flow\":false,"
		   "\"proto\":\"udp\",\"src_ip\":\"10.99.0.10\",\"src_port\":40002},"
		   "\"type\":3,\"v\":4}");

	/* quoting flow g, but not addressed to its sender: not tied */
	unreach_udp(&b, 40001, 3);
	CHECK_EQ(rig_icmp(&r, 4, A_SBX, A_DST, &b, 0), MOD_OK);
	CHECK_EQ(g->state & FLOW_UNREACH, 0);
	CHECK(strstr(r.sink.info, "\x1f" "53\x1f" "0\x1f") != NULL);

	/* fragmentation needed: tied, with the MTU, but not a refusal */
	unreach_udp(&b, 40001, 4);
	CHECK_EQ(rig_icmp(&r, 4, A_RTR, A_SBX, &b, 0), MOD_OK);
	CHECK_EQ(g->state & FLOW_UNREACH, 0);
	CHECK_JSON(r.sink.info, r.sink.info_len, JF,
		   "{\"code\":4,\"mtu\":1400,\"name\":\"dest-unreachable\",\"payload_len\":28,"
		   "\"quoted\":{\"dst_ip\":\"198.51.100.7\",\"dst_port\":53,\"flow\":true,"
		   "\"proto\":\"udp\",\"src_ip\":\"10.99.0.10\",\"src_port\":40001},"
		   "\"type\":3,\"v\":4}");

	/* an unreachable in a packet whose IP options Linux's IP layer refuses
	 * (PKT_RX_DROP): its receiver never reads it, so no event, and the
	 * flow it quotes is not blocked by it (R22-F4) */
	struct flow *h = rig_flow(&r, 4, IPPROTO_UDP, A_SBX, 40003, A_DST, 53);
	unreach_udp(&b, 40003, 3);
	int n_before = r.sink.n;
	CHECK_EQ(rig_icmp(&r, 4, A_DST, A_SBX, &b, PKT_RX_DROP), MOD_NOT_MINE);
	CHECK_EQ(r.sink.n, n_before);
	CHECK_EQ(h->state & FLOW_UNREACH, 0);

	/* time exceeded from a router: tied and blocked */
	b.n = 0;
	icmp_hdr(&b, 11, 0, 0);
	ip4_hdr(&b, 5, 60, 0, IPPROTO_UDP, A_SBX, A_DST);
	udp_hdr(&b, 40001, 53);
	CHECK_EQ(rig_icmp(&r, 4, A_RTR, A_SBX, &b, 0), MOD_OK);
	CHECK(g->state & FLOW_UNREACH);
	CHECK_STR(r.sink.name, "198.51.100.7");

	/* the analyzer without a flow table: same event, never tied */
	struct rig r2;
	rig_open(&r2, 0);
	unreach_udp(&b, 40000, 3);
	CHECK_EQ(rig_icmp(&r2, 4, A_DST, A_SBX, &b, 0), MOD_OK);
	CHECK_EQ(r2.sink.n, 1);
	CHECK(strstr(r2.sink.info, "\x1f" "53\x1f" "0\x1f") != NULL);
	rig_close(&r2);

	/* not ours: ICMP in IPv6, a non-first fragment, TCP */
	struct pkt p;
	pkt_fill(&p, r.ts, 6, IPPROTO_ICMP, A6_DST, A6_SBX);
	p.l4 = b.b;
	p.l4_len = b.n;
	CHECK_EQ(icmp_module.on_packet(r.state, &p, &r.emit), MOD_NOT_MINE);
	pkt_fill(&p, r.ts, 4, IPPROTO_ICMP, A_DST, A_SBX);
	p.l4 = b.b;
	p.l4_len = b.n;
	p.flags = PKT_FRAGMENT;
	CHECK_EQ(icmp_module.on_packet(r.state, &p, &r.emit), MOD_NOT_MINE);
	pkt_fill(&p, r.ts, 4, IPPROTO_TCP, A_DST, A_SBX);
	CHECK_EQ(icmp_module.on_packet(r.state, &p, &r.emit), MOD_NOT_MINE);
	CHECK_EQ(r.sink.n, 5);

	/* one byte: the type is reported (an echo of 1 byte went out) */
	b.n = 1;
	CHECK_EQ(rig_icmp(&r, 4, A_DST, A_SBX, &b, 0), MOD_MALFORMED);
	CHECK_EQ(r.sink.n, 6);
	CHECK_EQ(r.sink.flags, OBS_F_MALFORMED);
	/* none: nothing to report */
	b.n = 0;
	CHECK_EQ(rig_icmp(&r, 4, A_DST, A_SBX, &b, 0), MOD_TRUNCATED);
	CHECK_EQ(r.sink.n, 6);
	rig_close(&r);
}

/* A traceroute by ping: time exceeded quoting an ICMP echo request. */
static void test_quoted_echo(void)
{
	struct rig r;
	struct bb e = {.n = 0}, b = {.n = 0};
	struct pkt p;
	struct flow *f;

	rig_open(&r, 1);
	icmp_hdr(&e, 8, 0, 0x4242000a);
	putn(&e, (const uint8_t *)"0123456789abcdef", 16);
	pkt_fill(&p, r.ts++, 4, IPPROTO_ICMP, A_SBX, A_DST);
	p.l4 = e.b;
	p.l4_len = e.n;
	f = flow_table_update(r.ft, &p);
	CHECK(f != NULL);

	icmp_hdr(&b, 11, 0, 0);
	ip4_hdr(&b, 5, 20 + e.n, 0, IPPROTO_ICMP, A_SBX, A_DST);
	putn(&b, e.b, 8);
	CHECK_EQ(rig_icmp(&r, 4, A_RTR, A_SBX, &b, 0), MOD_OK);
	CHECK(f->state & FLOW_UNREACH);
	CHECK_JSON(r.sink.info, r.sink.info_len, JF,
		   "{\"code\":0,\"name\":\"time-exceeded\",\"payload_len\":28,"
		   "\"quoted\":{\"dst_ip\":\"198.51.100.7\",\"flow\":true,\"id\":16962,"
		   "\"proto\":\"icmp\",\"src_ip\":\"10.99.0.10\"},\"type\":11,\"v\":4}");

	/* quoting an echo reply cut after the type: no id, no flow */
	b.n = 0;
	icmp_hdr(&b, 11, 0, 0);
	ip4_hdr(&b, 5, 28, 0, IPPROTO_ICMP, A_SBX, A_DST);
	put8(&b, 0);
	CHECK_EQ(rig_icmp(&r, 4, A_RTR, A_SBX, &b, 0), MOD_TRUNCATED);
	CHECK_EQ(r.sink.flags, OBS_F_TRUNCATED);
	CHECK_JSON(r.sink.info, r.sink.info_len, JF,
		   "{\"code\":0,\"name\":\"time-exceeded\",\"payload_len\":21,"
		   "\"quoted\":{\"dst_ip\":\"198.51.100.7\",\"flow\":false,"
		   "\"proto\":\"icmp\",\"src_ip\":\"10.99.0.10\"},\"truncated\":true,"
		   "\"type\":11,\"v\":4}");
	rig_close(&r);
}

/* Time exceeded (v6) quoting TCP behind a destination-options header. */
static void v6_quote_tcp(struct bb *b, unsigned type, unsigned sport)
{
	b->n = 0;
	icmp_hdr(b, type, 0, type == 2 ? 1280 : 0);
	ip6_hdr(b, 8 + 20, 60, A6_SBX, A6_DST);
	put8(b, IPPROTO_TCP); /* destination options, 8 bytes */
	put8(b, 0);
	put16(b, 0x0104);
	put32(b, 0);
	put16(b, sport); /* TCP */
	put16(b, 443);
	put32(b, 1000);
	put32(b, 0);
	put16(b, 0x5002);
	put16(b, 65535);
	put32(b, 0);
}

static void test_v6_errors(void)
{
	struct rig r;
	struct bb b;
	char buf[512];
	struct flow *f;

	rig_open(&r, 1);
	f = rig_flow(&r, 6, IPPROTO_TCP, A6_SBX, 40001, A6_DST, 443);
	CHECK(f != NULL);

	/* quoting a sequence number the client never sent (its SYN was
	 * 1000): an error its stack drops, so not tied to the flow */
	v6_quote_tcp(&b, 1, 40001);
	b.b[8 + 40 + 8 + 4] = 0x7f; /* seq 0x7f0003e8 */
	CHECK_EQ(rig_icmp(&r, 6, A6_DST, A6_SBX, &b, 0), MOD_OK);
	CHECK_EQ(f->state & FLOW_UNREACH, 0);
	/* ... while a quote cut before the sequence number still ties */
	b.n = 8 + 40 + 8 + 4;
	CHECK_EQ(rig_icmp(&r, 6, A6_DST, A6_SBX, &b, 0), MOD_OK);
	CHECK(f->state & FLOW_UNREACH);
	rig_close(&r);
	rig_open(&r, 1);
	f = rig_flow(&r, 6, IPPROTO_TCP, A6_SBX, 40001, A6_DST, 443);

	v6_quote_tcp(&b, 2, 40001);
	CHECK_EQ(rig_icmp(&r, 6, A6_RTR, A6_SBX, &b, 0), MOD_OK);
	CHECK_EQ(f->state & FLOW_UNREACH, 0); /* packet too big is not a refusal */
	CHECK_STR(r.sink.name, "2001:db8::1");
	CHECK_JSON(r.sink.info, r.sink.info_len, JF,
		   "{\"code\":0,\"mtu\":1280,\"name\":\"packet-too-big\",\"payload_len\":68,"
		   "\"quoted\":{\"dst_ip\":\"2001:db8::1\",\"dst_port\":443,\"flow\":true,"
		   "\"proto\":\"tcp\",\"src_ip\":\"fd00:99::10\",\"src_port\":40001},"
		   "\"type\":2,\"v\":6}");

	v6_quote_tcp(&b, 3, 40001);
	CHECK_EQ(rig_icmp(&r, 6, A6_RTR, A6_SBX, &b, 0), MOD_OK);
	CHECK(f->state & FLOW_UNREACH);
	CHECK_STR(show(r.sink.info, r.sink.info_len, buf, sizeof(buf)),
		  "6|3|0|time-exceeded|||68||6|fd00:99::10|40001|2001:db8::1|443|1||0||$");

	/* another port: no flow */
	v6_quote_tcp(&b, 1, 40009);
	CHECK_EQ(rig_icmp(&r, 6, A6_RTR, A6_SBX, &b, 0), MOD_OK);
	CHECK_STR(show(r.sink.info, r.sink.info_len, buf, sizeof(buf)),
		  "6|1|0|dest-unreachable|||68||6|fd00:99::10|40009|2001:db8::1|443|0||0||$");
	rig_close(&r);
}

/* ---- truncation of errors ------------------------------------------------- */

/*
 * Every cut of a v4 unreachable quoting UDP with one option word: the quote
 * appears (proto, addresses) at 8 + 20 bytes, the option ends at 32, the
 * source port at 34, the destination port at 36; only then is it whole.
 */
static void test_error_truncation(void)
{
	static struct icmp_msg m;
	struct bb b = {.n = 0};
	int bad = 0;

	icmp_hdr(&b, 3, 3, 0);
	ip4_hdr(&b, 6, 24 + 8, 0, IPPROTO_UDP, A_SBX, A_DST);
	udp_hdr(&b, 40000, 53);
	CHECK_EQ(b.n, 40);
	for (size_t k = 0; k <= b.n; k++) {
		int r = icmp_parse(b.b, k, 4, 0, &m);
		/* short of its own header: malformed; a quote cut short is
		 * what routers send (RFC 792 asks for 8 bytes of it) */
		int want = k > 0 && k < 8 ? MOD_MALFORMED : k < 36 ? MOD_TRUNCATED : MOD_OK;
		bad += r != want;
		bad += m.type != (k < 1 ? -1 : 3);
		bad += m.q.present != (k >= 28);
		bad += m.q.sport != (k < 34 ? -1 : 40000);
		bad += m.q.dport != (k < 36 ? -1 : 53);
		bad += m.payload_len != (k < 8 ? 0 : k - 8);
		bad += strcmp(m.qdst, k >= 28 ? "198.51.100.7" : "") != 0;
		bad += m.flags != (want == MOD_MALFORMED ? OBS_F_MALFORMED
				   : k < 36	     ? OBS_F_TRUNCATED
						     : 0u);
		if (r != want)
			fprintf(stderr, "v4 error cut at %zu: %d\n", k, r);
	}
	CHECK_EQ(bad, 0);

	/* a quote cut before the ports, as the module reports it */
	struct rig r;
	rig_open(&r, 1);
	struct flow *f = rig_flow(&r, 4, IPPROTO_UDP, A_SBX, 40000, A_DST, 53);
	b.n = 0;
	icmp_hdr(&b, 3, 3, 0);
	ip4_hdr(&b, 5, 28, 0, IPPROTO_UDP, A_SBX, A_DST);
	put16(&b, 40000);
	CHECK_EQ(rig_icmp(&r, 4, A_DST, A_SBX, &b, 0), MOD_TRUNCATED);
	CHECK_EQ(r.sink.n, 1);
	CHECK_EQ(r.sink.flags, OBS_F_TRUNCATED);
	CHECK_STR(r.sink.name, "198.51.100.7");
	CHECK_EQ(f->state & FLOW_UNREACH, 0);
	CHECK_JSON(r.sink.info, r.sink.info_len, JF,
		   "{\"code\":3,\"name\":\"dest-unreachable\",\"payload_len\":22,"
		   "\"quoted\":{\"dst_ip\":\"198.51.100.7\",\"flow\":false,\"proto\":\"udp\","
		   "\"src_ip\":\"10.99.0.10\",\"src_port\":40000},\"truncated\":true,"
		   "\"type\":3,\"v\":4}");
	/* ... and one cut inside the IP header: no quote at all */
	b.n = 8 + 12;
	CHECK_EQ(rig_icmp(&r, 4, A_DST, A_SBX, &b, 0), MOD_TRUNCATED);
	CHECK_STR(r.sink.name, "");
	CHECK_JSON(r.sink.info, r.sink.info_len, JF,
		   "{\"code\":3,\"name\":\"dest-unreachable\",\"payload_len\":12,"
		   "\"truncated\":true,\"type\":3,\"v\":4}");
	rig_close(&r);

	/* every cut of the v6 error: header 8, IPv6 48, options 56, ports 60 */
	v6_quote_tcp(&b, 1, 40001);
	bad = 0;
	for (size_t k = 0; k <= b.n; k++) {
		int rr = icmp_parse(b.b, k, 6, 0, &m);
		int want = k > 0 && k < 8 ? MOD_MALFORMED : k < 60 ? MOD_TRUNCATED : MOD_OK;
		bad += rr != want;
		bad += m.q.present != (k >= 48);
		bad += k >= 48 && m.q.proto != (k < 56 ? 60 : IPPROTO_TCP);
		bad += m.q.sport != (k < 58 ? -1 : 40001);
		bad += m.q.dport != (k < 60 ? -1 : 443);
		if (rr != want)
			fprintf(stderr, "v6 error cut at %zu: %d\n", k, rr);
	}
	CHECK_EQ(bad, 0);
}

/* ---- lengths, fragments and malformed quotes ------------------------------ */

static void test_quote_rules(void)
{
	static struct icmp_msg m;
	struct bb b = {.n = 0};

	/* a quoted non-first fragment: no transport header, not an error */
	icmp_hdr(&b, 3, 1, 0);
	ip4_hdr(&b, 5, 100, 0x0010, IPPROTO_UDP, A_SBX, A_DST);
	udp_hdr(&b, 1, 2);
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
	CHECK_EQ(m.q.present, 1);
	CHECK_EQ(m.q.sport, -1);
	CHECK_EQ(m.flags, 0);

	/* the quoted total length bounds the transport bytes */
	b.n = 0;
	icmp_hdr(&b, 3, 3, 0);
	ip4_hdr(&b, 5, 22, 0, IPPROTO_UDP, A_SBX, A_DST);
	udp_hdr(&b, 40000, 53);
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_TRUNCATED);
	CHECK_EQ(m.q.sport, 40000);
	CHECK_EQ(m.q.dport, -1);

	/* an RFC 4884 length bounds the quote: 5 words is the IP header alone */
	b.n = 0;
	icmp_hdr(&b, 11, 0, 0x00050000);
	ip4_hdr(&b, 5, 28, 0, IPPROTO_UDP, A_SBX, A_DST);
	udp_hdr(&b, 40000, 53);
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_TRUNCATED);
	CHECK_EQ(m.q.present, 1);
	CHECK_EQ(m.q.sport, -1);
	/* ... and a length beyond the message takes what is there */
	b.b[5] = 200;
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_OK);
	CHECK_EQ(m.q.dport, 53);

	/* malformed: the wrong IP version; the outer fields stay */
	b.n = 0;
	icmp_hdr(&b, 3, 3, 0);
	ip6_hdr(&b, 8, IPPROTO_UDP, A6_SBX, A6_DST);
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_MALFORMED);
	CHECK_EQ(m.flags, OBS_F_MALFORMED);
	CHECK_EQ(m.type, 3);
	CHECK_EQ(m.q.present, 0);
	icmp_record(&m);
	CHECK_JSON(m.info, m.info_len, JF,
		   "{\"code\":3,\"malformed\":\"quoted header is not IPv4\","
		   "\"name\":\"dest-unreachable\",\"payload_len\":40,\"type\":3,\"v\":4}");
	b.n = 0;
	icmp_hdr(&b, 1, 4, 0);
	ip4_hdr(&b, 5, 28, 0, IPPROTO_UDP, A_SBX, A_DST);
	CHECK_EQ(icmp_parse(b.b, b.n, 6, 0, &m), MOD_MALFORMED);
	CHECK_STR(m.reason, "quoted header is not IPv6");

	/* malformed: IHL below 5, total length below IHL */
	b.n = 0;
	icmp_hdr(&b, 3, 3, 0);
	ip4_hdr(&b, 5, 28, 0, IPPROTO_UDP, A_SBX, A_DST);
	b.b[8] = 0x44;
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_MALFORMED);
	CHECK_STR(m.reason, "quoted IPv4 header length below 20");
	b.b[8] = 0x45;
	b.b[10] = 0;
	b.b[11] = 19;
	CHECK_EQ(icmp_parse(b.b, b.n, 4, 0, &m), MOD_MALFORMED);
	CHECK_EQ(m.q.present, 1);
	CHECK_STR(m.reason, "quoted IPv4 total length below its header length");

	/* malformed: too many extension headers, hop-by-hop not first */
	b.n = 0;
	icmp_hdr(&b, 1, 0, 0);
	ip6_hdr(&b, (ICMP_MAX_EXT + 1) * 8 + 4, 60, A6_SBX, A6_DST);
	for (int i = 0; i <= ICMP_MAX_EXT; i++) {
		put8(&b, i == ICMP_MAX_EXT ? IPPROTO_UDP : 60);
		put8(&b, 0);
		put16(&b, 0x0104);
		put32(&b, 0);
	}
	put16(&b, 1);
	put16(&b, 2);
	CHECK_EQ(icmp_parse(b.b, b.n, 6, 0, &m), MOD_MALFORMED);
	CHECK_STR(m.reason, "too many quoted IPv6 extension headers");
	b.b[8 + 40 + (ICMP_MAX_EXT - 1) * 8] = IPPROTO_UDP; /* one fewer: fine */
	CHECK_EQ(icmp_parse(b.b, b.n, 6, 0, &m), MOD_OK);
	CHECK_EQ(m.q.proto, IPPROTO_UDP);
	CHECK_EQ(m.q.sport, 0x1100); /* the ninth header read as ports */
	CHECK_EQ(m.q.dport, 0x0104);
	b.b[8 + 40] = 0; /* the second header becomes hop-by-hop */
	CHECK_EQ(icmp_parse(b.b, b.n, 6, 0, &m), MOD_MALFORMED);
	CHECK_STR(m.reason, "quoted hop-by-hop header not first");

	/* a quoted v6 non-first fragment */
	b.n = 0;
	icmp_hdr(&b, 1, 0, 0);
	ip6_hdr(&b, 16, 44, A6_SBX, A6_DST);
	put8(&b, IPPROTO_UDP);
	put8(&b, 0);
	put16(&b, 0x0100); /* offset 256 */
	put32(&b, 7);
	udp_hdr(&b, 1, 2);
	CHECK_EQ(icmp_parse(b.b, b.n, 6, 0, &m), MOD_OK);
	CHECK_EQ(m.q.proto, IPPROTO_UDP);
	CHECK_EQ(m.q.sport, -1);

	/* a malformed event through the module */
	struct rig r;
	rig_open(&r, 1);
	b.n = 0;
	icmp_hdr(&b, 3, 3, 0);
	ip6_hdr(&b, 8, IPPROTO_UDP, A6_SBX, A6_DST);
	CHECK_EQ(rig_icmp(&r, 4, A_DST, A_SBX, &b, 0), MOD_MALFORMED);
	CHECK_EQ(r.sink.n, 1);
	CHECK_EQ(r.sink.flags, OBS_F_MALFORMED);
	CHECK_EQ(r.sink.type, 3);
	rig_close(&r);
}

/* ---- JSON edge cases ------------------------------------------------------ */

static void test_json(void)
{
	json_t *o = json_object();
	char rec[256];

	CHECK_EQ(icmp_info_json(o, "", 0, OBS_ICMP), -EINVAL);
	CHECK_EQ(icmp_info_json(o, "5\x1f" "8\x1e", 4, OBS_ICMP), -EINVAL);
	CHECK_EQ(icmp_info_json(o, "4\x1f\x1e", 3, OBS_ICMP), -EINVAL);
	CHECK_EQ(icmp_info_json(o, "4\x1f" "8\x1e", 4, OBS_DNS_QUERY), -EINVAL);
	CHECK_EQ(json_object_size(o), 0);
	json_decref(o);

	/* a short record: what is there */
	CHECK_JSON(rec, unshow("4|8$", rec, sizeof(rec)), JF, "{\"type\":8,\"v\":4}");
	/* an unknown quoted protocol is its number */
	CHECK_JSON(rec, unshow("4|3|2||||20||99|1.2.3.4||5.6.7.8||0||0||$", rec, sizeof(rec)), JF,
		   "{\"code\":2,\"payload_len\":20,\"quoted\":{\"dst_ip\":\"5.6.7.8\","
		   "\"flow\":false,\"proto\":\"99\",\"src_ip\":\"1.2.3.4\"},\"type\":3,\"v\":4}");
	/* a named one by its IANA keyword */
	CHECK_JSON(rec, unshow("4|3|2||||20||47|1.2.3.4||5.6.7.8||0||0||$", rec, sizeof(rec)), JF,
		   "{\"code\":2,\"payload_len\":20,\"quoted\":{\"dst_ip\":\"5.6.7.8\","
		   "\"flow\":false,\"proto\":\"gre\",\"src_ip\":\"1.2.3.4\"},\"type\":3,\"v\":4}");
	/* numbers that are not numbers are left out */
	CHECK_JSON(rec, unshow("4|3|x|||-1|20||17|1.2.3.4|99999999999|5.6.7.8|53|1||1|||$", rec,
			       sizeof(rec)),
		   JF,
		   "{\"payload_len\":20,\"quoted\":{\"dst_ip\":\"5.6.7.8\",\"dst_port\":53,"
		   "\"flow\":true,\"proto\":\"udp\",\"src_ip\":\"1.2.3.4\"},\"truncated\":true,"
		   "\"type\":3,\"v\":4}");
}

int main(void)
{
	test_echo();
	test_fill();
	test_echo_truncation();
	test_unreach_v4();
	test_quoted_echo();
	test_v6_errors();
	test_error_truncation();
	test_quote_rules();
	test_json();
	return check_done();
}
