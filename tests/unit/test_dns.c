/*
 * test_dns.c - the DNS analyzer on hand-built messages: every rdata type we
 * decode, compression, the hostile-protocol rules (loops, forward pointers,
 * long labels and names, counts that lie, a cut at every byte), EDNS, odd
 * bytes in names, the JSON renderer, the TCP stream path of the module, and
 * a fixed-seed random smoke loop (run it under ASan/UBSan).
 *
 * Every message that parses cleanly is parsed twice, through ldns (forced
 * with DNS_PARSE_LDNS, even when the walk would keep it) and through the
 * cursor walk alone (DNS_PARSE_OWN), and the two detail records must be
 * byte-identical. A third parse, as the sensor does it, must match too.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../analyzers/dns.h"
#include "../../analyzers/module.h"
#include "../../api/dns_json.h"
#include "../../sensor/flow.h"
#include "../../sensor/pkt.h"
#include "check.h"

/* ---- message builder ------------------------------------------------------ */

struct mb {
	uint8_t b[70000];
	size_t n;
};

static struct mb M;                /* the message under test */
static struct dns_out OUT, OUT2;   /* results (large: static) */

static void mb_u8(struct mb *m, unsigned v)
{
	m->b[m->n++] = (uint8_t)v;
}

static void mb_u16(struct mb *m, unsigned v)
{
	mb_u8(m, v >> 8);
	mb_u8(m, v & 0xff);
}

static void mb_u32(struct mb *m, uint32_t v)
{
	mb_u16(m, v >> 16);
	mb_u16(m, v & 0xffff);
}

static void mb_bytes(struct mb *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

/* A dotted name ("" or "." is the root); labels must not contain dots. */
static void mb_name(struct mb *m, const char *name)
{
	while (*name && strcmp(name, ".") != 0) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);
		mb_u8(m, (unsigned)l);
		mb_bytes(m, name, l);
		name += l + (dot ? 1 : 0);
	}
	mb_u8(m, 0);
}

/* A name that ends in a compression pointer to off. */
static void mb_name_ptr(struct mb *m, const char *prefix, unsigned off)
{
	size_t start = m->n;
	mb_name(m, prefix);
	m->n--; /* drop the root label */
	if (m->n < start)
		m->n = start;
	mb_u16(m, 0xc000 | off);
}

static void mb_hdr(struct mb *m, unsigned id, unsigned flags, unsigned qd, unsigned an,
		   unsigned ns, unsigned ar)
{
	m->n = 0;
	mb_u16(m, id);
	mb_u16(m, flags);
	mb_u16(m, qd);
	mb_u16(m, an);
	mb_u16(m, ns);
	mb_u16(m, ar);
}

static void mb_q(struct mb *m, const char *name, unsigned type, unsigned cls)
{
	mb_name(m, name);
	mb_u16(m, type);
	mb_u16(m, cls);
}

/* RR header after its owner name; returns where rdlength goes. */
static size_t mb_rr(struct mb *m, unsigned type, unsigned cls, uint32_t ttl)
{
	mb_u16(m, type);
	mb_u16(m, cls);
	mb_u32(m, ttl);
	size_t at = m->n;
	mb_u16(m, 0);
	return at;
}

static void mb_rr_end(struct mb *m, size_t at)
{
	size_t len = m->n - at - 2;
	m->b[at] = (uint8_t)(len >> 8);
	m->b[at + 1] = (uint8_t)len;
}

#define RESP 0x8180 /* response, rd, ra */
#define QUERY 0x0100

/* ---- helpers -------------------------------------------------------------- */

/* The record with separators made visible: US '|', RS '\n', GS '~'. */
static const char *vis(const struct dns_out *o)
{
	static char buf[DNS_INFO_MAX];
	size_t i;

	for (i = 0; i < o->info_len && i < sizeof(buf) - 1; i++) {
		char c = o->info[i];
		buf[i] = c == REC_US ? '|' : c == REC_RS ? '\n' : c == REC_GS ? '~' : c;
	}
	buf[i] = '\0';
	return buf;
}

/* The JSON of the current OUT, compact with sorted keys (static buffer). */
static const char *json_of(const struct dns_out *o)
{
	static char buf[65536];
	json_t *dns = json_object();
	int r = dns_info_json(dns, o->info, o->info_len, o->qr ? OBS_DNS_ANSWER : OBS_DNS_QUERY);
	char *s;

	if (r != 0) {
		json_decref(dns);
		snprintf(buf, sizeof(buf), "(error %d)", r);
		return buf;
	}
	s = json_dumps(dns, JSON_COMPACT | JSON_SORT_KEYS);
	snprintf(buf, sizeof(buf), "%s", s ? s : "(null)");
	free(s);
	json_decref(dns);
	return buf;
}

static int ok_diff; /* clean messages whose two parses differed */

/* Valid messages kept as seeds for the random smoke loop. */
static struct mb bases[8];
static int nbases;
static struct mb keep_hinfo; /* a response with a HINFO answer, for test_random */

static void keep(void)
{
	if (nbases < 8)
		bases[nbases++] = M;
}

/* Parse M through ldns, and (when clean) again through the walk alone. */
static int parse_flags(unsigned flags)
{
	static struct dns_out out3;
	int r3 = dns_parse_message(M.b, M.n, flags, &out3);
	int r = dns_parse_message(M.b, M.n, flags | DNS_PARSE_LDNS, &OUT);
	int r2 = dns_parse_message(M.b, M.n, flags | DNS_PARSE_OWN, &OUT2);

	/* the sensor's own choice of path gives what ldns gives */
	if (r3 != r || out3.info_len != OUT.info_len ||
	    memcmp(out3.info, OUT.info, OUT.info_len) != 0 || strcmp(out3.qname, OUT.qname) != 0 ||
	    strcmp(out3.reason, OUT.reason) != 0) {
		ok_diff++;
		fprintf(stderr, "sensor path and ldns differ:\n%s\n", vis(&out3));
		fprintf(stderr, "----\n%s\n", vis(&OUT));
	}

	/* ldns may reject what the walk accepts (then the walk renders it and
	 * the message is malformed); a message ldns takes must look the same */
	if (r == MOD_OK) {
		if (r != r2 || OUT.info_len != OUT2.info_len ||
		    memcmp(OUT.info, OUT2.info, OUT.info_len) != 0 ||
		    strcmp(OUT.qname, OUT2.qname) != 0) {
			ok_diff++;
			fprintf(stderr, "ldns and walk differ:\n%s\n", vis(&OUT));
			fprintf(stderr, "----\n%s\n", vis(&OUT2));
		}
	}
	return r;
}

static int parse(void)
{
	return parse_flags(0);
}

/* Field f (0-based) of the k-th (0-based) record whose tag is tag. */
static const char *field(const struct dns_out *o, const char *tag, int k, int f)
{
	static char buf[DNS_INFO_MAX];
	const char *s = o->info, *rec;
	size_t n = o->info_len, rlen;

	while (rec_split(&s, &n, REC_RS, &rec, &rlen)) {
		const char *fs = rec, *piece;
		size_t fn = rlen, plen;
		int i = 0;
		if (!rec_split(&fs, &fn, REC_US, &piece, &plen))
			continue;
		if (plen != strlen(tag) || memcmp(piece, tag, plen) != 0 || k-- > 0)
			continue;
		while (i < f && rec_split(&fs, &fn, REC_US, &piece, &plen))
			i++;
		if (i < f)
			return "(none)";
		snprintf(buf, sizeof(buf), "%.*s", (int)plen, piece);
		for (char *c = buf; *c; c++)
			if (*c == REC_GS)
				*c = '~';
		return buf;
	}
	return "(none)";
}

static int count_tag(const struct dns_out *o, const char *tag)
{
	int k = 0;
	while (strcmp(field(o, tag, k, 0), "(none)") != 0)
		k++;
	return k;
}

/* A response to "example.com IN <type>" with one answer whose rdata the
 * caller writes through rd(). */
static size_t start_answer(unsigned type)
{
	mb_hdr(&M, 0x1234, RESP, 1, 1, 0, 0);
	mb_q(&M, "example.com", type, 1);
	mb_u16(&M, 0xc00c);
	return mb_rr(&M, type, 1, 300);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_a(void)
{
	size_t at = start_answer(1);
	mb_bytes(&M, "\x5d\xb8\xd8\x22", 4);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(OUT.qname, "example.com");
	CHECK_EQ(OUT.qtype, 1);
	CHECK_EQ(OUT.rcode, 0);
	CHECK_EQ(OUT.id, 0x1234);
	CHECK_EQ(OUT.qr, 1);
	CHECK_EQ(OUT.flags, 0);
	CHECK_STR(vis(&OUT), "4660|response|0|0|rd,ra|1|1|0|0||||udp||0\n"
			     "Q|example.com|1|1\n"
			     "AN|example.com|1|1|300|93.184.216.34\n");
	CHECK_STR(json_of(&OUT),
		  "{\"answers\":[{\"data\":\"93.184.216.34\",\"name\":\"example.com\",\"ttl\":300,"
		  "\"type\":\"A\"}],\"counts\":{\"an\":1,\"ar\":0,\"ns\":0,\"qd\":1},"
		  "\"flags\":[\"rd\",\"ra\"],\"id\":4660,\"opcode\":\"QUERY\",\"qname\":\"example.com\","
		  "\"qr\":\"response\",\"qtype\":\"A\",\"rcode\":\"NOERROR\",\"tc\":false}");
}

/* A records are formatted without inet_ntop: compare with it for every
 * value of each byte (0, 1 and 2 digits, 100 and over). */
static void test_a_text(void)
{
	static const uint8_t vals[] = {0, 1, 9, 10, 11, 42, 99, 100, 101, 109, 110, 199, 200, 250, 255};
	int bad = 0;

	for (size_t i = 0; i < sizeof(vals); i++) {
		for (size_t j = 0; j < sizeof(vals); j++) {
			uint8_t a[4] = {vals[i], vals[j], vals[(i + j) % sizeof(vals)], vals[sizeof(vals) - 1 - i]};
			char want[INET_ADDRSTRLEN];
			size_t at = start_answer(1);
			mb_bytes(&M, a, 4);
			mb_rr_end(&M, at);
			CHECK_EQ(parse(), MOD_OK);
			inet_ntop(AF_INET, a, want, sizeof(want));
			bad += strcmp(field(&OUT, "AN", 0, 5), want) != 0;
		}
	}
	CHECK_EQ(bad, 0);
}

static void test_query(void)
{
	mb_hdr(&M, 7, QUERY, 1, 0, 0, 0);
	mb_q(&M, "www.example.org", 28, 1);
	CHECK_EQ(parse_flags(OBS_F_TCP), MOD_OK);
	CHECK_EQ(OUT.qr, 0);
	CHECK_EQ(OUT.flags, OBS_F_TCP);
	CHECK_STR(vis(&OUT), "7|query|0|0|rd|1|0|0|0||||tcp||0\nQ|www.example.org|28|1\n");
	CHECK_STR(json_of(&OUT),
		  "{\"answers\":[],\"counts\":{\"an\":0,\"ar\":0,\"ns\":0,\"qd\":1},\"flags\":[\"rd\"],"
		  "\"id\":7,\"opcode\":\"QUERY\",\"qname\":\"www.example.org\",\"qr\":\"query\","
		  "\"qtype\":\"AAAA\",\"rcode\":\"NOERROR\",\"tc\":false}");
}

static void test_aaaa(void)
{
	size_t at = start_answer(28);
	mb_bytes(&M, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "2001:db8::1");
}

static void test_names_rdata(void)
{
	static const struct {
		unsigned type;
		const char *want_type;
	} t[] = {{5, "CNAME"}, {2, "NS"}, {12, "PTR"}, {39, "DNAME"}};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t at = start_answer(t[i].type);
		mb_name_ptr(&M, "cdn", 12); /* cdn.example.com */
		mb_rr_end(&M, at);
		CHECK_EQ(parse(), MOD_OK);
		CHECK_STR(field(&OUT, "AN", 0, 5), "cdn.example.com");
		CHECK_STR(field(&OUT, "AN", 0, 2), t[i].type == 5 ? "5" : t[i].type == 2 ? "2"
					  : t[i].type == 12 ? "12" : "39");
		char want[200];
		snprintf(want, sizeof(want), "\"answers\":[{\"data\":\"cdn.example.com\","
			 "\"name\":\"example.com\",\"ttl\":300,\"type\":\"%s\"}]", t[i].want_type);
		CHECK(strstr(json_of(&OUT), want) != NULL);
	}
}

static void test_mx(void)
{
	size_t at = start_answer(15);
	mb_u16(&M, 10);
	mb_name_ptr(&M, "mail", 12);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "10 mail.example.com");
}

static void test_txt(void)
{
	size_t at = start_answer(16);
	mb_bytes(&M, "\x05hello\x00\x06" "a b\x01\\\"", 14);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "hello~~a b\\x01\\\\\"");
	keep();
	CHECK(strstr(json_of(&OUT),
		     "\"data\":[\"hello\",\"\",\"a b\\\\x01\\\\\\\\\\\"\"]") != NULL);

	/* one empty string; a trailing empty string */
	at = start_answer(16);
	mb_u8(&M, 0);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK(strstr(json_of(&OUT), "\"data\":[\"\"]") != NULL);
	at = start_answer(16);
	mb_bytes(&M, "\x01x\x00", 3);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK(strstr(json_of(&OUT), "\"data\":[\"x\",\"\"]") != NULL);

	/* SPF is shown the same way */
	at = start_answer(99);
	mb_bytes(&M, "\x06v=spf1", 7);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK(strstr(json_of(&OUT), "\"data\":[\"v=spf1\"],\"name\":\"example.com\",\"ttl\":300,"
				    "\"type\":\"SPF\"") != NULL);

	/* a string that runs past the rdata: malformed, shown as generic */
	at = start_answer(16);
	mb_bytes(&M, "\x05hel", 4);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "answer 1: character-string runs past the rdata");
	CHECK_STR(field(&OUT, "AN", 0, 5), "\\# 4 0568656c");
	CHECK(strstr(json_of(&OUT), "\"data\":\"\\\\# 4 0568656c\"") != NULL);
}

static void test_null(void)
{
	size_t at = start_answer(10);
	mb_bytes(&M, "\x00\xab\xff", 3);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "00abff");
	CHECK(strstr(json_of(&OUT), "\"type\":\"NULL\"") != NULL);
}

static void test_srv_soa(void)
{
	size_t at = start_answer(33);
	mb_u16(&M, 10);
	mb_u16(&M, 20);
	mb_u16(&M, 443);
	mb_name(&M, "svc.example.com");
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "10 20 443 svc.example.com");

	/* NXDOMAIN with the SOA in the authority section */
	mb_hdr(&M, 1, 0x8183, 1, 0, 1, 0);
	mb_q(&M, "nope.example.com", 1, 1);
	mb_u16(&M, 0xc000 | 17); /* example.com inside the qname */
	at = mb_rr(&M, 6, 1, 3600);
	mb_name_ptr(&M, "ns1", 17);
	mb_name_ptr(&M, "hostmaster", 17);
	mb_u32(&M, 2024010101);
	mb_u32(&M, 7200);
	mb_u32(&M, 3600);
	mb_u32(&M, 1209600);
	mb_u32(&M, 300);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_EQ(OUT.rcode, 3);
	CHECK_STR(field(&OUT, "NS", 0, 1), "example.com");
	keep();
	CHECK_STR(field(&OUT, "NS", 0, 5),
		  "ns1.example.com hostmaster.example.com 2024010101 7200 3600 1209600 300");
	CHECK_STR(json_of(&OUT),
		  "{\"answers\":[],\"authority\":[{\"data\":\"ns1.example.com hostmaster.example.com "
		  "2024010101 7200 3600 1209600 300\",\"name\":\"example.com\",\"ttl\":3600,"
		  "\"type\":\"SOA\"}],\"counts\":{\"an\":0,\"ar\":0,\"ns\":1,\"qd\":1},"
		  "\"flags\":[\"rd\",\"ra\"],\"id\":1,\"opcode\":\"QUERY\","
		  "\"qname\":\"nope.example.com\",\"qr\":\"response\",\"qtype\":\"A\","
		  "\"rcode\":\"NXDOMAIN\",\"tc\":false}");
}

static void test_svcb(void)
{
	size_t at = start_answer(65);
	mb_u16(&M, 1);
	mb_u8(&M, 0); /* target "." */
	mb_u16(&M, 0); /* mandatory=alpn */
	mb_u16(&M, 2);
	mb_u16(&M, 1);
	mb_u16(&M, 1); /* alpn=h2,h3 and one with a comma */
	mb_u16(&M, 10);
	mb_bytes(&M, "\x02h2\x02h3\x03" "a,b", 10);
	mb_u16(&M, 2); /* no-default-alpn */
	mb_u16(&M, 0);
	mb_u16(&M, 3); /* port=8443 */
	mb_u16(&M, 2);
	mb_u16(&M, 8443);
	mb_u16(&M, 4); /* ipv4hint */
	mb_u16(&M, 8);
	mb_bytes(&M, "\xc0\x00\x02\x01\xc0\x00\x02\x02", 8);
	mb_u16(&M, 5); /* ech */
	mb_u16(&M, 2);
	mb_bytes(&M, "\x01\x02", 2);
	mb_u16(&M, 6); /* ipv6hint */
	mb_u16(&M, 16);
	mb_bytes(&M, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	mb_u16(&M, 999); /* unknown key */
	mb_u16(&M, 1);
	mb_u8(&M, 0xee);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5),
		  "1 . mandatory=alpn alpn=h2,h3,a\\x2cb no-default-alpn port=8443 "
		  "ipv4hint=192.0.2.1,192.0.2.2 ech=0102 ipv6hint=2001:db8::2 key999=ee");
	keep();
	CHECK(strstr(json_of(&OUT), "\"type\":\"HTTPS\"") != NULL);

	/* SVCB alias form */
	at = start_answer(64);
	mb_u16(&M, 0);
	mb_name(&M, "svc.example.net");
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "0 svc.example.net");

	/* a parameter that runs past the rdata */
	at = start_answer(65);
	mb_u16(&M, 1);
	mb_u8(&M, 0);
	mb_u16(&M, 3);
	mb_u16(&M, 4);
	mb_u16(&M, 443);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "answer 1: SvcParam runs past the rdata");
	CHECK_STR(field(&OUT, "AN", 0, 5), "\\# 9 0001000003000401bb");

	/* RFC 9460 2.2 and 8: keys in increasing order, each once; the
	 * mandatory list too, without mandatory itself */
	static const struct {
		uint16_t params[6];
		const char *why;
	} bad[] = {
		{{3, 2, 443, 1, 2, 0x0168}, "SvcParamKeys out of order"},
		{{3, 2, 443, 3, 2, 443}, "SvcParamKey repeated"},
		{{0, 4, 0, 1, 0xffff, 0xffff}, "mandatory SvcParam lists mandatory"},
		{{0, 4, 3, 1, 0xffff, 0xffff}, "mandatory SvcParam keys out of order"},
		{{0, 4, 3, 3, 0xffff, 0xffff}, "mandatory SvcParam repeats a key"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char why[DNS_REASON_MAX];
		at = start_answer(65);
		mb_u16(&M, 1);
		mb_u8(&M, 0);
		for (int k = 0; k < 6 && bad[i].params[k] != 0xffff; k++)
			mb_u16(&M, bad[i].params[k]);
		mb_rr_end(&M, at);
		CHECK_EQ(parse(), MOD_MALFORMED);
		snprintf(why, sizeof(why), "answer 1: %s", bad[i].why);
		CHECK_STR(OUT.reason, why);
		CHECK(strncmp(field(&OUT, "AN", 0, 5), "\\# ", 3) == 0);
		CHECK(strstr(field(&OUT, "AN", 0, 5), " 000100") != NULL);
	}
	/* in order, and mandatory naming others in order: fine */
	at = start_answer(65);
	mb_u16(&M, 1);
	mb_u8(&M, 0);
	mb_bytes(&M, "\x00\x00\x00\x04\x00\x01\x00\x03" "\x00\x01\x00\x03\x02h2"
		     "\x00\x03\x00\x02\x01\xbb", 21);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "1 . mandatory=alpn,port alpn=h2 port=443");
}

static void test_caa_unknown(void)
{
	size_t at = start_answer(257);
	mb_u8(&M, 0);
	mb_u8(&M, 5);
	mb_bytes(&M, "issueletsencrypt.org", 20);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "0 issue letsencrypt.org");
	CHECK(strstr(json_of(&OUT), "\"type\":\"CAA\"") != NULL);

	at = start_answer(65280);
	mb_bytes(&M, "\x01\x02\x03", 3);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "\\# 3 010203");
	CHECK(strstr(json_of(&OUT), "\"data\":\"\\\\# 3 010203\",\"name\":\"example.com\","
				    "\"ttl\":300,\"type\":\"TYPE65280\"") != NULL);
	CHECK(strstr(json_of(&OUT), "\"qtype\":\"TYPE65280\"") != NULL);

	at = start_answer(65280);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "\\# 0");

	/* empty rdata of a decoded type (an UPDATE delete): "\# 0", not malformed */
	at = start_answer(1);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "\\# 0");
	at = start_answer(16);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK(strstr(json_of(&OUT), "\"data\":\"\\\\# 0\"") != NULL);

	/* A with 5 bytes: ldns would drop the 5th silently; we flag it */
	at = start_answer(1);
	mb_bytes(&M, "\x01\x02\x03\x04\x05", 5);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "answer 1: A rdata is not 4 bytes");
	CHECK_STR(field(&OUT, "AN", 0, 5), "\\# 5 0102030405");
	CHECK_EQ(OUT.flags, OBS_F_MALFORMED);
}

static void test_compression(void)
{
	/* question www.example.com; answer owner -> qname; CNAME target
	 * cdn + -> "example.com" (offset 16); second answer owner -> the CNAME
	 * target, which itself ends in a pointer (a chain of two jumps) */
	mb_hdr(&M, 2, RESP, 1, 2, 0, 0);
	mb_q(&M, "www.example.com", 1, 1);
	mb_u16(&M, 0xc00c);
	size_t at = mb_rr(&M, 5, 1, 60);
	size_t target = M.n;
	mb_name_ptr(&M, "cdn", 16);
	mb_rr_end(&M, at);
	mb_u16(&M, 0xc000 | (unsigned)target);
	at = mb_rr(&M, 1, 1, 60);
	mb_bytes(&M, "\x0a\x00\x00\x01", 4);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(vis(&OUT), "2|response|0|0|rd,ra|1|2|0|0||||udp||0\n"
			     "Q|www.example.com|1|1\n"
			     "AN|www.example.com|5|1|60|cdn.example.com\n"
			     "AN|cdn.example.com|1|1|60|10.0.0.1\n");
	keep();
}

/* A legal name reached through 100 pointers, each after one label (a name
 * has at most 127 labels, so a legal one needs at most 127): read whole; a
 * chain of 129 pointers that point at pointers is refused. */
static void test_pointer_chain(void)
{
	for (int n = 100; n <= 129; n += 29) {
		/* answer 1: NULL, whose rdata holds the pieces: "\1a" then a
		 * pointer to the piece before (the first to the qname); answer
		 * 2: CNAME, its target the last piece */
		mb_hdr(&M, 3, RESP, 1, 2, 0, 0);
		mb_q(&M, "q.example", 1, 1);
		mb_u16(&M, 0xc00c);
		size_t at = mb_rr(&M, 10, 1, 60), prev = 12;
		for (int k = 0; k < n; k++) {
			size_t here = M.n;
			if (n == 100) {
				mb_u8(&M, 1);
				mb_u8(&M, 'a');
			}
			mb_u16(&M, 0xc000 | (unsigned)prev);
			prev = here;
		}
		mb_rr_end(&M, at);
		mb_u16(&M, 0xc00c);
		at = mb_rr(&M, 5, 1, 60);
		mb_u16(&M, 0xc000 | (unsigned)prev);
		mb_rr_end(&M, at);
		int r = parse();
		if (n == 100) {
			CHECK_EQ(r, MOD_OK);
			const char *t = field(&OUT, "AN", 1, 5);
			CHECK(strlen(t) == 200 + strlen("q.example") &&
			      !strcmp(t + 200, "q.example") && !strncmp(t, "a.a.a.", 6));
		} else {
			CHECK_EQ(r, MOD_MALFORMED);
			CHECK_STR(OUT.reason, "answer 2: too many compression pointers");
		}
	}
}

static void test_pointer_loop(void)
{
	/* answer owner points at itself */
	mb_hdr(&M, 3, RESP, 1, 1, 0, 0);
	mb_q(&M, "example.com", 1, 1);
	size_t self = M.n;
	mb_u16(&M, 0xc000 | (unsigned)self);
	size_t at = mb_rr(&M, 1, 1, 60);
	mb_bytes(&M, "\x01\x02\x03\x04", 4);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_EQ(OUT.flags, OBS_F_MALFORMED);
	CHECK_STR(OUT.qname, "example.com");
	CHECK_STR(OUT.reason, "answer 1: compression pointer does not point backwards");
	CHECK_STR(vis(&OUT), "3|response|0|0|rd,ra|1|1|0|0||||udp|answer 1: compression "
			     "pointer does not point backwards|0\nQ|example.com|1|1\n");
	CHECK_STR(json_of(&OUT),
		  "{\"answers\":[],\"counts\":{\"an\":1,\"ar\":0,\"ns\":0,\"qd\":1},"
		  "\"flags\":[\"rd\",\"ra\"],\"id\":3,\"malformed\":\"answer 1: compression pointer "
		  "does not point backwards\",\"opcode\":\"QUERY\",\"qname\":\"example.com\","
		  "\"qr\":\"response\",\"qtype\":\"A\",\"rcode\":\"NOERROR\",\"tc\":false}");

	/* a two-step loop: X -> Y (backwards), Y's name ends pointing to X */
	mb_hdr(&M, 3, RESP, 1, 1, 0, 0);
	mb_q(&M, "a.example", 1, 1);            /* starts at 12 */
	size_t x = M.n;
	mb_name_ptr(&M, "b", 12);               /* b.a.example */
	M.b[22] = 0xc0;                         /* "example"'s root -> pointer to x */
	M.b[23] = (uint8_t)x;                   /* (overwrites qtype's high byte) */
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_EQ(OUT.info_len > 0, 1);

	/* a loop inside a CNAME target: framing intact, later RRs still read */
	mb_hdr(&M, 4, RESP, 1, 2, 0, 0);
	mb_q(&M, "example.com", 1, 1);
	mb_u16(&M, 0xc00c);
	at = mb_rr(&M, 5, 1, 60);
	size_t here = M.n;
	mb_u16(&M, 0xc000 | (unsigned)here);
	mb_rr_end(&M, at);
	mb_u16(&M, 0xc00c);
	at = mb_rr(&M, 1, 1, 60);
	mb_bytes(&M, "\x01\x02\x03\x04", 4);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "answer 1: compression pointer does not point backwards");
	CHECK_EQ(count_tag(&OUT, "AN"), 2);
	char want[32];
	snprintf(want, sizeof(want), "\\# 2 c0%02x", (unsigned)here);
	CHECK_STR(field(&OUT, "AN", 0, 5), want);
	CHECK_STR(field(&OUT, "AN", 1, 5), "1.2.3.4");
}

/* A pointer into the 12-byte header is refused by our rules (ldns refuses
 * offset 0 only): the walk renders what comes before it and the message is
 * malformed, whichever path it would otherwise take. */
static void test_header_pointer(void)
{
	for (unsigned target = 0; target < 12; target++) {
		mb_hdr(&M, 6, RESP, 1, 2, 0, 0);
		mb_q(&M, "example.com", 1, 1);
		mb_u16(&M, 0xc00c);
		size_t at = mb_rr(&M, 5, 1, 60); /* CNAME -> x.<header bytes> */
		mb_u8(&M, 1);
		mb_u8(&M, 'x');
		mb_u16(&M, 0xc000 | target);
		mb_rr_end(&M, at);
		mb_u16(&M, 0xc00c);
		at = mb_rr(&M, 1, 1, 60);
		mb_bytes(&M, "\x01\x02\x03\x04", 4);
		mb_rr_end(&M, at);
		CHECK_EQ(parse(), MOD_MALFORMED);
		CHECK_STR(OUT.reason, "answer 1: compression pointer into the header");
		CHECK_EQ(count_tag(&OUT, "AN"), 2);
		CHECK_STR(field(&OUT, "AN", 1, 5), "1.2.3.4");
	}
}

static void test_forward_pointer(void)
{
	/* the question name points forward, to the answer's owner: ldns takes
	 * it, our rules do not */
	mb_hdr(&M, 5, RESP, 1, 1, 0, 0);
	mb_u16(&M, 0xc000 | 18);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	mb_name(&M, "a"); /* offset 18 */
	size_t at = mb_rr(&M, 1, 1, 60);
	mb_bytes(&M, "\x01\x02\x03\x04", 4);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "question 1: compression pointer does not point backwards");
	/* the name a resolver that follows it reads (dnsmasq does: review20
	 * R20-1, test_question_loose_pointer); the walk ends after it */
	CHECK_STR(OUT.qname, "a");
	CHECK_EQ(OUT.qtype, 1);
	CHECK_STR(vis(&OUT), "5|response|0|0|rd,ra|1|1|0|0||||udp|question 1: compression "
			     "pointer does not point backwards|0\nQ|a|1|1\n");
	CHECK(strstr(json_of(&OUT), "\"qname\":\"a\"") != NULL);

	/* a pointer to its own name's start is not "before" it either (and
	 * read loosely it loops: no name) */
	mb_hdr(&M, 5, QUERY, 1, 0, 0, 0);
	mb_u8(&M, 1);
	mb_u8(&M, 'a');
	mb_u16(&M, 0xc00c);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "question 1: compression pointer does not point backwards");
	CHECK_STR(OUT.qname, "");
}

/*
 * review20 R20-1 (pcaps/review20/dns/FINDINGS.md): dnsmasq 2.90 resolves and
 * forwards a question whose name reaches its tail through a compression
 * pointer into the header or forward; the sensor reported no name, so no
 * detector judged it. The first question's name is now read as such a
 * resolver reads it (name_read_loose), the message still malformed.
 */
static void test_question_loose_pointer(void)
{
	/* into the header: offset 4 is QDCOUNT's high byte, 0, the root */
	for (unsigned off = 4; off <= 10; off += 2) {
		mb_hdr(&M, 0x4114, QUERY, 1, 0, 0, 0);
		mb_name_ptr(&M, "metadata.google.internal", off);
		mb_u16(&M, 1);
		mb_u16(&M, 1);
		CHECK_EQ(parse(), MOD_MALFORMED);
		CHECK_STR(OUT.reason, "question 1: compression pointer into the header");
		CHECK_STR(OUT.qname, "metadata.google.internal");
		CHECK_EQ(OUT.qtype, 1);
		CHECK_EQ(OUT.qclass, 1);
		CHECK(OUT.flags & OBS_F_MALFORMED);
		CHECK(strstr(vis(&OUT), "\nQ|metadata.google.internal|1|1\n") != NULL);
	}
	/* offset 0: the id's high byte 0 is the root; a whole name spelled by
	 * the header: id 01 'x', flags 01 '0', QDCOUNT's 00 ends it */
	mb_hdr(&M, 0x0012, QUERY, 1, 0, 0, 0);
	mb_name_ptr(&M, "secret.exfil-lab.com", 0);
	mb_u16(&M, 16);
	mb_u16(&M, 1);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.qname, "secret.exfil-lab.com");
	CHECK_EQ(OUT.qtype, 16);
	mb_hdr(&M, 0x0178, 0x0130, 1, 0, 0, 0);
	mb_u16(&M, 0xc000);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.qname, "x.0");

	/* forward, to bytes after the question (dnsmasq forwards them) */
	mb_hdr(&M, 0x4116, QUERY, 1, 0, 0, 0);
	mb_name_ptr(&M, "mzxw6ytboi4dcnzrgy3tqmjv", 12 + 25 + 2 + 4);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	mb_name(&M, "t16.exfil-lab.com");
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "question 1: compression pointer does not point backwards");
	CHECK_STR(OUT.qname, "mzxw6ytboi4dcnzrgy3tqmjv.t16.exfil-lab.com");
	CHECK_STR(vis(&OUT), "16662|query|0|0|rd|1|0|0|0||||udp|question 1: compression pointer "
			     "does not point backwards|0\nQ|mzxw6ytboi4dcnzrgy3tqmjv.t16.exfil-lab.com|1|1\n");
	/* forward, into an OPT option's data: the OPT is not read (the walk
	 * ends after the question) */
	mb_hdr(&M, 0x4117, QUERY, 1, 0, 0, 1);
	mb_name_ptr(&M, "data", 12 + 5 + 2 + 4 + 15);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	mb_u8(&M, 0);
	size_t at = mb_rr(&M, 41, 1232, 0);
	mb_u16(&M, 65001);
	mb_u16(&M, 19);
	mb_name(&M, "t17.exfil-lab.com");
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.qname, "data.t17.exfil-lab.com");
	/* a chain of forward and backward jumps, each to a pointer */
	mb_hdr(&M, 7, QUERY, 1, 0, 0, 0);
	mb_u8(&M, 1);
	mb_u8(&M, 'a');
	mb_u16(&M, 0xc000 | 22);   /* 14: -> 22 */
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	mb_u16(&M, 0xc000 | 4);    /* 20 (not reached) */
	mb_u8(&M, 1);              /* 22: "b", then -> 20 -> 4 (root) */
	mb_u8(&M, 'b');
	mb_u16(&M, 0xc000 | 20);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.qname, "a.b");

	/* what a loose reader refuses too gives no name: a loop (dnsmasq
	 * gives up after 255 jumps), a target past the end, label types 01
	 * and 10, a name over 1,025 bytes (below) */
	mb_hdr(&M, 8, QUERY, 1, 0, 0, 0);
	mb_u8(&M, 1);
	mb_u8(&M, 'a');
	mb_u16(&M, 0xc000 | 20);   /* 14 -> 20 -> 14 ... */
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	mb_u16(&M, 0xc000 | 14);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.qname, "");
	CHECK_STR(vis(&OUT), "8|query|0|0|rd|1|0|0|0||||udp|question 1: compression pointer "
			     "does not point backwards|0\n");
	mb_hdr(&M, 8, QUERY, 1, 0, 0, 0);
	mb_name_ptr(&M, "a", 200);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.qname, "");
	for (unsigned lt = 0x40; lt <= 0x80; lt += 0x40) {
		mb_hdr(&M, 8, QUERY, 1, 0, 0, 0);
		mb_name_ptr(&M, "a", 20);
		mb_u16(&M, 1);
		mb_u16(&M, 1);
		mb_u8(&M, lt | 1);
		mb_u8(&M, 'b');
		mb_u8(&M, 0);
		CHECK_EQ(parse(), MOD_MALFORMED);
		CHECK_STR(OUT.qname, "");
	}
	/* 3 x 63-byte labels (192 bytes and the root) through a pointer */
	mb_hdr(&M, 9, QUERY, 1, 0, 0, 0);
	char lab3[3 * 64];
	memset(lab3, 'q', sizeof(lab3));
	for (int k = 1; k < 3; k++)
		lab3[k * 64 - 1] = '.';
	lab3[sizeof(lab3) - 1] = '\0';
	mb_name_ptr(&M, lab3, 12 + 192 + 4);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	mb_u8(&M, 0);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.qname, lab3);

	/* R20-2: names over 255 bytes, which dnsmasq takes up to 1,025 and
	 * forwards: the last labels that fit 255, with or without pointers */
	static char big[1200], want[300];
	for (size_t total = 256; total <= 1026; total++) {
		/* labels "NNN" + 'y' * 59 (63 bytes), then the tail: a label of
		 * what is left, "exfil-lab", "com" (15 bytes and the root) */
		size_t body = total - 1 - 14, bn = 0, k = 0;
		while (body - bn > 64) {
			bn += (size_t)snprintf(big + bn, sizeof(big) - bn, "%03zuyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy.", k++);
		}
		size_t last = body - bn - 1; /* the label that makes it total */
		if (last == 0) {
			continue; /* (an empty label would be the root) */
		}
		memset(big + bn, 'z', last);
		bn += last;
		memcpy(big + bn, ".exfil-lab.com", 15);
		for (int ptr = 0; ptr < 2; ptr++) {
			mb_hdr(&M, 11, QUERY, 1, 0, 0, 0);
			if (ptr) {
				/* the name after the question, reached forward */
				mb_name_ptr(&M, "", 12 + 2 + 4);
				mb_u16(&M, 16);
				mb_u16(&M, 1);
				mb_name(&M, big);
			} else {
				mb_q(&M, big, 16, 1);
			}
			CHECK_EQ(parse(), MOD_MALFORMED);
			CHECK_STR(OUT.reason, ptr ? "question 1: compression pointer does not point backwards"
						  : "question 1: name longer than 255 bytes");
			if (total > DNS_LOOSE_NAME_MAX) {
				CHECK_STR(OUT.qname, "");
				continue;
			}
			/* the wanted tail: drop whole labels from the front
			 * until the rest is at most 254 text bytes (255 on the
			 * wire with the root) */
			const char *t = big;
			while (strlen(t) + 2 > 255)
				t = strchr(t, '.') + 1;
			snprintf(want, sizeof(want), "%s", t);
			CHECK_STR(OUT.qname, want);
			CHECK_EQ(OUT.qtype, 16); /* the type after the name read loosely */
		}
	}
	/* a loop through labels ends at 1,025 bytes: 200 labels "a" then a
	 * pointer to the first of them, forever */
	mb_hdr(&M, 12, QUERY, 1, 0, 0, 0);
	for (int k = 0; k < 200; k++) {
		mb_u8(&M, 1);
		mb_u8(&M, 'a');
	}
	mb_u16(&M, 0xc00c);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.qname, "");

	/* only the first question, and no RR, is read loosely: a second
	 * question's or an owner's bad pointer gives no record */
	mb_hdr(&M, 10, QUERY, 2, 0, 0, 0);
	mb_q(&M, "www.example.org", 1, 1);
	mb_name_ptr(&M, "data", 4);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "question 2: compression pointer into the header");
	CHECK_STR(OUT.qname, "www.example.org");
	CHECK_EQ(count_tag(&OUT, "Q"), 1);
	mb_hdr(&M, 10, RESP, 1, 1, 0, 0);
	mb_q(&M, "www.example.org", 1, 1);
	mb_name_ptr(&M, "data", 4);
	at = mb_rr(&M, 1, 1, 60);
	mb_bytes(&M, "\x01\x02\x03\x04", 4);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "answer 1: compression pointer into the header");
	CHECK_EQ(count_tag(&OUT, "AN"), 0);
	/* both parsers agree (the ldns path is not taken for a malformed
	 * message) */
	mb_hdr(&M, 0x4114, QUERY, 1, 0, 0, 0);
	mb_name_ptr(&M, "metadata.google.internal", 4);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	CHECK_EQ(parse_flags(DNS_PARSE_LDNS), MOD_MALFORMED);
	CHECK_STR(OUT.qname, "metadata.google.internal");
}

static void test_long_label_name(void)
{
	char lab[64];

	/* label length byte 64 (0x40: the reserved 01 label type) */
	mb_hdr(&M, 6, QUERY, 1, 0, 0, 0);
	mb_u8(&M, 64);
	memset(lab, 'a', 64);
	mb_bytes(&M, lab, 64);
	mb_u8(&M, 0);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "question 1: label type 01 (extended, or a label over 63 bytes)");
	/* the reserved 10 label type has a reason of its own */
	M.b[12] = 0x80;
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "question 1: label type 10 (reserved)");
	M.b[12] = 0x41;
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "question 1: label type 01 (extended, or a label over 63 bytes)");

	/* 63+63+63+61 labels: exactly 255 wire bytes is fine */
	mb_hdr(&M, 6, QUERY, 1, 0, 0, 0);
	memset(lab, 'a', 63);
	for (int i = 0; i < 4; i++) {
		mb_u8(&M, i < 3 ? 63 : 61);
		mb_bytes(&M, lab, i < 3 ? 63 : 61);
	}
	mb_u8(&M, 0);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_EQ(OUT.qname_len, 63 * 3 + 61 + 3);

	/* one more byte: 256 */
	mb_hdr(&M, 6, QUERY, 1, 0, 0, 0);
	for (int i = 0; i < 4; i++) {
		mb_u8(&M, i < 3 ? 63 : 62);
		mb_bytes(&M, lab, i < 3 ? 63 : 62);
	}
	mb_u8(&M, 0);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "question 1: name longer than 255 bytes");

	/* too long through compression: 200 bytes + pointer to 200 bytes */
	mb_hdr(&M, 6, RESP, 1, 1, 0, 0);
	for (int i = 0; i < 4; i++) {
		mb_u8(&M, 49);
		mb_bytes(&M, lab, 49);
	}
	mb_u8(&M, 0);
	mb_u16(&M, 1);
	mb_u16(&M, 1);
	for (int i = 0; i < 2; i++) {
		mb_u8(&M, 49);
		mb_bytes(&M, lab, 49);
	}
	mb_u16(&M, 0xc00c);
	size_t at = mb_rr(&M, 1, 1, 1);
	mb_bytes(&M, "\x01\x02\x03\x04", 4);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "answer 1: name longer than 255 bytes");
	CHECK_EQ(count_tag(&OUT, "Q"), 1);
}

static size_t build_response(void)
{
	/* a response with a bit of everything: 3 sections and EDNS */
	mb_hdr(&M, 0xbeef, RESP, 1, 2, 1, 2);
	mb_q(&M, "www.example.com", 1, 1);
	mb_u16(&M, 0xc00c);
	size_t at = mb_rr(&M, 5, 1, 60);
	size_t cname = M.n;
	mb_name_ptr(&M, "cdn", 16);
	mb_rr_end(&M, at);
	mb_u16(&M, 0xc000 | (unsigned)cname);
	at = mb_rr(&M, 1, 1, 60);
	mb_bytes(&M, "\xc6\x33\x64\x07", 4);
	mb_rr_end(&M, at);
	mb_u16(&M, 0xc010);
	at = mb_rr(&M, 2, 1, 3600);
	size_t ns = M.n;
	mb_name_ptr(&M, "ns", 16);
	mb_rr_end(&M, at);
	mb_u8(&M, 0);
	at = mb_rr(&M, 41, 1232, 0x8000);
	mb_rr_end(&M, at);
	mb_u16(&M, 0xc000 | (unsigned)ns);
	at = mb_rr(&M, 28, 1, 3600);
	mb_bytes(&M, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x35", 16);
	mb_rr_end(&M, at);
	return M.n;
}

static void test_truncated_everywhere(void)
{
	static struct mb full;
	static char full_recs[DNS_INFO_MAX];
	size_t n = build_response();
	int bad_ok = 0, bad_trunc = 0, bad_prefix = 0, bad_json = 0;

	CHECK_EQ(parse(), MOD_OK);
	CHECK_EQ(count_tag(&OUT, "AN") + count_tag(&OUT, "NS") + count_tag(&OUT, "AR"), 4);
	full = M;
	const char *tail = memchr(OUT.info, REC_RS, OUT.info_len);
	snprintf(full_recs, sizeof(full_recs), "%s", tail ? tail + 1 : "");

	for (size_t cut = 0; cut < n; cut++) {
		int r = dns_parse_message(full.b, cut, DNS_PARSE_LDNS, &OUT);
		int r2 = dns_parse_message(full.b, cut, DNS_PARSE_OWN, &OUT2);
		if (r == MOD_OK || r2 == MOD_OK)
			bad_ok++;
		if (r != MOD_MALFORMED || !(OUT.flags & OBS_F_MALFORMED))
			bad_ok++;
		/* what was read is a prefix of the full message's records */
		if (cut >= 12) {
			const char *t = memchr(OUT.info, REC_RS, OUT.info_len);
			size_t tl = t ? OUT.info_len - (size_t)(t + 1 - OUT.info) : 0;
			/* a question cut after its name ends "<US><US><RS>" */
			if (tl >= 3 && memcmp(t + 1 + tl - 3, "\x1f\x1f\x1e", 3) == 0)
				tl -= 3;
			if (!t || strncmp(t + 1, full_recs, tl) != 0)
				bad_prefix++;
			json_t *j = json_object();
			if (dns_info_json(j, OUT.info, OUT.info_len, OBS_DNS_ANSWER) != 0 ||
			    !json_object_get(j, "malformed"))
				bad_json++;
			json_decref(j);
		} else if (OUT.info_len != 0) {
			bad_prefix++;
		}
		r = dns_parse_message(full.b, cut, OBS_F_TRUNCATED, &OUT);
		if (r != MOD_TRUNCATED || (OUT.flags & OBS_F_MALFORMED) ||
		    !(OUT.flags & OBS_F_TRUNCATED))
			bad_trunc++;
		/* cut, not malformed: the JSON says so, and gives no reason */
		if (cut >= 12) {
			json_t *j = json_object();
			if (dns_info_json(j, OUT.info, OUT.info_len, OBS_DNS_ANSWER) != 0 ||
			    json_object_get(j, "malformed") ||
			    json_object_get(j, "truncated") != json_true())
				bad_json++;
			json_decref(j);
		}
	}
	CHECK_EQ(bad_ok, 0);
	CHECK_EQ(bad_trunc, 0);
	CHECK_EQ(bad_prefix, 0);
	CHECK_EQ(bad_json, 0);

	/* one cut in detail: inside the second answer's rdata */
	M = full;
	M.n = 12 + 21 + 12 + 6 + 12 + 2;
	CHECK_EQ(parse_flags(OBS_F_TRUNCATED), MOD_TRUNCATED);
	CHECK_STR(OUT.reason, "answer 2: rdata runs past the end");
	CHECK_EQ(count_tag(&OUT, "AN"), 1);

	/* cut between the question's name and its type: the name is kept */
	M = full;
	M.n = 12 + 17 + 1;
	CHECK_EQ(parse_flags(OBS_F_TRUNCATED), MOD_TRUNCATED);
	CHECK_STR(OUT.reason, "question 1: question runs past the end");
	CHECK_STR(OUT.qname, "www.example.com");
	CHECK_EQ(OUT.qtype, 0);
	/* the record states the cut, and no malformed reason (tls.h and icmp.h
	 * do the same) */
	CHECK_STR(vis(&OUT), "48879|response|0|0|rd,ra|1|2|1|2||||udp||1\n"
			     "Q|www.example.com||\n");
	CHECK_STR(json_of(&OUT),
		  "{\"answers\":[],\"counts\":{\"an\":2,\"ar\":2,\"ns\":1,\"qd\":1},"
		  "\"flags\":[\"rd\",\"ra\"],\"id\":48879,\"opcode\":\"QUERY\","
		  "\"qname\":\"www.example.com\",\"qr\":\"response\",\"rcode\":\"NOERROR\","
		  "\"tc\":false,\"truncated\":true}");
	/* the same bytes without the capture's word for it: the length lies */
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(vis(&OUT), "48879|response|0|0|rd,ra|1|2|1|2||||udp|question 1: question "
			     "runs past the end|0\nQ|www.example.com||\n");
	CHECK_STR(json_of(&OUT),
		  "{\"answers\":[],\"counts\":{\"an\":2,\"ar\":2,\"ns\":1,\"qd\":1},"
		  "\"flags\":[\"rd\",\"ra\"],\"id\":48879,\"malformed\":\"question 1: question "
		  "runs past the end\",\"opcode\":\"QUERY\",\"qname\":\"www.example.com\","
		  "\"qr\":\"response\",\"rcode\":\"NOERROR\",\"tc\":false}");
	/* cut by the capture and malformed before the cut: both are said */
	M = full;
	M.b[12] = 0xc0;
	M.b[13] = 0x20;
	M.n = 12 + 17 + 1;
	CHECK_EQ(parse_flags(OBS_F_TRUNCATED), MOD_MALFORMED);
	CHECK_EQ(OUT.flags, OBS_F_TRUNCATED | OBS_F_MALFORMED);
	CHECK(strstr(json_of(&OUT), "\"malformed\":\"question 1: compression pointer does not "
				    "point backwards\"") != NULL);
	CHECK(strstr(json_of(&OUT), "\"truncated\":true") != NULL);
}

static void test_counts_lie(void)
{
	size_t at;

	mb_hdr(&M, 8, RESP, 1, 5, 0, 0);
	mb_q(&M, "example.com", 1, 1);
	mb_u16(&M, 0xc00c);
	at = mb_rr(&M, 1, 1, 60);
	mb_bytes(&M, "\x01\x02\x03\x04", 4);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "answer 2: name runs past the end");
	CHECK_EQ(count_tag(&OUT, "AN"), 1);
	CHECK_STR(field(&OUT, "AN", 0, 5), "1.2.3.4");
	CHECK(strstr(json_of(&OUT), "\"counts\":{\"an\":5,\"ar\":0,\"ns\":0,\"qd\":1}") != NULL);
	CHECK_EQ(parse_flags(OBS_F_TRUNCATED), MOD_TRUNCATED);
	CHECK_EQ(OUT.flags, OBS_F_TRUNCATED);

	/* bytes after the last record */
	mb_hdr(&M, 8, QUERY, 1, 0, 0, 0);
	mb_q(&M, "example.com", 1, 1);
	mb_bytes(&M, "xyz", 3);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "3 bytes after the last record");

	/* shorter than a header */
	CHECK_EQ(dns_parse_message((const uint8_t *)"\x01\x02\x03", 3, 0, &OUT), MOD_MALFORMED);
	CHECK_EQ(OUT.info_len, 0);
	CHECK_EQ(dns_parse_message(NULL, 0, OBS_F_TRUNCATED, &OUT), MOD_TRUNCATED);

	/* header only: fine */
	mb_hdr(&M, 9, QUERY, 0, 0, 0, 0);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(OUT.qname, "");
	CHECK_STR(vis(&OUT), "9|query|0|0|rd|0|0|0|0||||udp||0\n");
}

static void test_edns(void)
{
	size_t at;

	mb_hdr(&M, 10, 0x8100, 1, 0, 0, 1); /* rcode 0 in the header */
	mb_q(&M, "example.com", 1, 1);
	mb_u8(&M, 0);
	at = mb_rr(&M, 41, 1232, 0x01008000); /* ext rcode 1, version 0, DO */
	mb_u16(&M, 10); /* option: cookie, 8 bytes */
	mb_u16(&M, 8);
	mb_bytes(&M, "12345678", 8);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_EQ(OUT.rcode, 16);
	CHECK_STR(vis(&OUT), "10|response|0|16|rd|1|0|0|1|1232|0|1|udp||0\nQ|example.com|1|1\n");
	CHECK_STR(json_of(&OUT),
		  "{\"answers\":[],\"counts\":{\"an\":0,\"ar\":1,\"ns\":0,\"qd\":1},"
		  "\"edns\":{\"do\":true,\"udp_size\":1232,\"version\":0},\"flags\":[\"rd\"],"
		  "\"id\":10,\"opcode\":\"QUERY\",\"qname\":\"example.com\",\"qr\":\"response\","
		  "\"qtype\":\"A\",\"rcode\":\"BADVERS\",\"tc\":false}");

	/* RFC 6891 6.1.2: the owner is the root, and the options fill the
	 * rdata; what the record says is still shown */
	mb_hdr(&M, 10, QUERY, 1, 0, 0, 1);
	mb_q(&M, "example.com", 1, 1);
	mb_u16(&M, 0xc00c);
	at = mb_rr(&M, 41, 1232, 0x8000);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "additional 1: OPT owner is not the root");
	CHECK(strstr(json_of(&OUT), "\"edns\":{\"do\":true,\"udp_size\":1232,\"version\":0}") !=
	      NULL);
	for (int k = 0; k < 3; k++) {
		/* an option's length past the data, by 1 and by all of it,
		 * and a code without its length */
		static const char *const opts[] = {"\x00\x0a\x00\x09" "12345678",
						   "\x00\x0a\x00\x08" "12345678" "\x00\x0c\x00\x04",
						   "\x00\x0a\x00\x08" "12345678" "\x00\x0c"};
		static const size_t lens[] = {12, 16, 14};
		mb_hdr(&M, 10, QUERY, 1, 0, 0, 1);
		mb_q(&M, "example.com", 1, 1);
		mb_u8(&M, 0);
		at = mb_rr(&M, 41, 1232, 0);
		mb_bytes(&M, opts[k], lens[k]);
		mb_rr_end(&M, at);
		CHECK_EQ(parse(), MOD_MALFORMED);
		CHECK_STR(OUT.reason, "additional 1: EDNS option runs past the OPT data");
		CHECK_EQ(OUT.flags, OBS_F_MALFORMED);
	}

	/* two OPT records */
	mb_hdr(&M, 10, QUERY, 1, 0, 0, 2);
	mb_q(&M, "example.com", 1, 1);
	for (int i = 0; i < 2; i++) {
		mb_u8(&M, 0);
		at = mb_rr(&M, 41, 4096, 0);
		mb_rr_end(&M, at);
	}
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "additional 2: more than one OPT record");
	CHECK_STR(vis(&OUT), "10|query|0|0|rd|1|0|0|2|4096|0|0|udp|additional 2: more than "
			     "one OPT record|0\nQ|example.com|1|1\n");

	/* OPT with TSIG after it: TSIG is listed, last */
	mb_hdr(&M, 11, QUERY, 1, 0, 0, 2);
	mb_q(&M, "example.com", 6, 1);
	mb_u8(&M, 0);
	at = mb_rr(&M, 41, 4096, 0);
	mb_rr_end(&M, at);
	mb_name(&M, "key.example");
	at = mb_rr(&M, 250, 255, 0);
	mb_name(&M, "hmac-sha256");
	mb_bytes(&M, "\x00\x00\x65\x00\x00\x00\x01\x2c\x00\x02\xaa\xbb\x00\x0b\x00\x00\x00\x00", 18);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_EQ(count_tag(&OUT, "AR"), 1);
	CHECK_STR(field(&OUT, "AR", 0, 1), "key.example");
	keep();
	CHECK(strstr(json_of(&OUT), "\"additional\":[{\"class\":\"ANY\",\"data\":\"\\\\# 31 "
				    "0b686d61632d73686132353600000065000000012c0002aabb000b00000000\","
				    "\"name\":\"key.example\",\"ttl\":0,\"type\":\"TSIG\"}]") != NULL);
}

static void test_weird_names(void)
{
	mb_hdr(&M, 12, QUERY, 1, 0, 0, 0);
	mb_u8(&M, 3);
	mb_bytes(&M, "a.b", 3);
	mb_u8(&M, 4);
	mb_bytes(&M, "\x00\xff\\ ", 4);
	mb_u8(&M, 2);
	mb_bytes(&M, "\"\x7f", 2);
	mb_name(&M, "example");
	mb_u16(&M, 16);
	mb_u16(&M, 3); /* CH */
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(OUT.qname, "a\\.b.\\x00\\xff\\\\ .\"\\x7f.example");
	keep();
	CHECK_EQ(OUT.qname_len, strlen(OUT.qname));
	CHECK_STR(json_of(&OUT),
		  "{\"answers\":[],\"counts\":{\"an\":0,\"ar\":0,\"ns\":0,\"qd\":1},\"flags\":[\"rd\"],"
		  "\"id\":12,\"opcode\":\"QUERY\",\"qclass\":\"CH\","
		  "\"qname\":\"a\\\\.b.\\\\x00\\\\xff\\\\\\\\ .\\\"\\\\x7f.example\",\"qr\":\"query\","
		  "\"qtype\":\"TXT\",\"rcode\":\"NOERROR\",\"tc\":false}");

	/* the root */
	mb_hdr(&M, 13, QUERY, 1, 0, 0, 0);
	mb_q(&M, ".", 2, 1);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(OUT.qname, ".");
	CHECK(strstr(json_of(&OUT), "\"qname\":\".\",") != NULL);

	/* dns_name_text on its own */
	char buf[16];
	int cut = 0;
	CHECK_EQ(dns_name_text(buf, sizeof(buf), (const uint8_t *)"\x03" "abc\x00", 5, &cut), 3);
	CHECK_EQ(cut, 0);
	dns_name_text(buf, 4, (const uint8_t *)"\x05" "abcde\x00", 7, &cut);
	CHECK_EQ(cut, 1);
	dns_name_text(buf, sizeof(buf), (const uint8_t *)"\x05" "ab", 3, &cut);
	CHECK_EQ(cut, 1);
}

/*
 * A space inside a label of a name in rdata is \x20, so that the fields of
 * the data can be split at spaces (an SOA's mname then rname, an MX's
 * exchange); a name that is a field of its own (qname, owner) keeps it. The
 * owner that repeats a CNAME's target (the text reused from the data, when
 * the names match) must get the owner's form, not the data's.
 */
static void test_space_in_rdata_names(void)
{
	/* question "example.com"; CNAME -> "a b.example.com"; A owned by the
	 * target (a pointer to it); MX "m x.example.com" (an ldns type) */
	mb_hdr(&M, 0x77, RESP, 1, 3, 0, 0);
	mb_q(&M, "example.com", 1, 1);
	mb_u16(&M, 0xc00c);
	size_t at = mb_rr(&M, 5, 1, 60);
	size_t target = M.n;
	mb_u8(&M, 3);
	mb_bytes(&M, "a b", 3);
	mb_u16(&M, 0xc00c);
	mb_rr_end(&M, at);
	mb_u16(&M, (unsigned)(0xc000 | target));
	at = mb_rr(&M, 1, 1, 60);
	mb_bytes(&M, "\xc0\x00\x02\x01", 4);
	mb_rr_end(&M, at);
	size_t end_a = M.n;
	mb_u16(&M, 0xc00c);
	at = mb_rr(&M, 15, 1, 60);
	mb_u16(&M, 10);
	mb_u8(&M, 3);
	mb_bytes(&M, "m x", 3);
	mb_u16(&M, 0xc00c);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "a\\x20b.example.com");
	CHECK_STR(field(&OUT, "AN", 1, 1), "a b.example.com");
	CHECK_STR(field(&OUT, "AN", 2, 5), "10 m\\x20x.example.com");

	/* the same without the MX: the walk renders it alone */
	M.b[7] = 2;
	M.n = end_a;
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "a\\x20b.example.com");
	CHECK_STR(field(&OUT, "AN", 1, 1), "a b.example.com");
	CHECK_EQ(count_tag(&OUT, "AN"), 2);

	/* SOA: "mname rname serial ..." splits into seven fields */
	at = start_answer(6);
	mb_u8(&M, 4);
	mb_bytes(&M, "n s1", 4);
	mb_u16(&M, 0xc00c);
	mb_u8(&M, 3);
	mb_bytes(&M, "h m", 3);
	mb_u16(&M, 0xc00c);
	for (int i = 1; i <= 5; i++)
		mb_u32(&M, (uint32_t)i);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "n\\x20s1.example.com h\\x20m.example.com 1 2 3 4 5");
}

static void test_questions_flags(void)
{
	mb_hdr(&M, 14, 0x2f00 | 0x0080 | 0x0400 | 0x0200 | 0x0030, 2, 0, 0, 0);
	/* opcode 5 (UPDATE), aa, tc, rd (0x0100 from 0x2f00), ra, ad, cd */
	mb_q(&M, "a.example", 1, 1);
	mb_q(&M, "b.example", 28, 254);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_EQ(OUT.opcode, 5);
	CHECK_STR(field(&OUT, "Q", 1, 1), "b.example");
	CHECK_STR(json_of(&OUT),
		  "{\"answers\":[],\"counts\":{\"an\":0,\"ar\":0,\"ns\":0,\"qd\":2},"
		  "\"flags\":[\"aa\",\"tc\",\"rd\",\"ra\",\"ad\",\"cd\"],\"id\":14,\"opcode\":\"UPDATE\","
		  "\"qname\":\"a.example\",\"qr\":\"query\",\"qtype\":\"A\","
		  "\"questions\":[{\"name\":\"a.example\",\"type\":\"A\"},"
		  "{\"class\":\"NONE\",\"name\":\"b.example\",\"type\":\"AAAA\"}],"
		  "\"rcode\":\"NOERROR\",\"tc\":true}");
}

static void test_cap(void)
{
	/* 40 TXT RRs of 250 bytes: more than the record holds */
	mb_hdr(&M, 15, RESP, 1, 40, 0, 0);
	mb_q(&M, "big.example", 16, 1);
	for (int i = 0; i < 40; i++) {
		mb_u16(&M, 0xc00c);
		size_t at = mb_rr(&M, 16, 1, 1);
		mb_u8(&M, 250);
		memset(M.b + M.n, 'x', 250);
		M.n += 250;
		mb_rr_end(&M, at);
	}
	CHECK_EQ(parse(), MOD_OK);
	CHECK_EQ(OUT.cut, 1);
	CHECK(OUT.info_len < DNS_INFO_MAX);
	CHECK_EQ(OUT.info_len, strlen(OUT.info));
	int n = count_tag(&OUT, "AN");
	CHECK(n > 20 && n < 40);
	CHECK_EQ(count_tag(&OUT, "CUT"), 1);
	CHECK(strstr(json_of(&OUT), "\"detail_cut\":true") != NULL);

	/* one NULL rdata of 3000 bytes: the data field is capped */
	size_t at = start_answer(10);
	memset(M.b + M.n, 0xab, 3000);
	M.n += 3000;
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	CHECK_EQ(OUT.cut, 1);
	CHECK_EQ(strlen(field(&OUT, "AN", 0, 5)), DNS_DATA_MAX - 2);
}

/*
 * An RR with bytes beyond the fields ldns knows for its type (a HINFO with
 * two more bytes) must not shift the RRs after it: ldns reads HINFO by its
 * descriptor and would start the next owner at those bytes. The message is
 * rendered from the walk, every RR in its place, and is malformed, with
 * the same reason wherever the RR is: first (where the shift makes ldns
 * fail), last (where ldns's lists just come out short), or past the walk's
 * table of RRs.
 */
static void hinfo_rr(const char *rdata, size_t n)
{
	mb_u16(&M, 0xc00c);
	size_t at = mb_rr(&M, 13, 1, 60);
	mb_bytes(&M, rdata, n);
	mb_rr_end(&M, at);
}

static void a_rr(void)
{
	mb_u16(&M, 0xc00c);
	size_t at = mb_rr(&M, 1, 1, 60);
	mb_bytes(&M, "\x0a\x00\x00\x01", 4);
	mb_rr_end(&M, at);
}

static void test_rdata_beyond_descriptor(void)
{
	static const char longer[] = "\x03" "abc" "\x03" "def" "\x01\x02";
	static const char shorter[] = "\x03" "abc" "\x05" "def";

	for (int first = 0; first < 2; first++) {
		mb_hdr(&M, 78, RESP, 1, 2, 0, 0);
		mb_q(&M, "h.example", 13, 1);
		if (!first)
			a_rr();
		hinfo_rr(longer, 10);
		if (first)
			a_rr();
		CHECK_EQ(parse(), MOD_MALFORMED);
		CHECK_STR(OUT.reason, first ? "answer 1: HINFO rdata longer than its fields"
					    : "answer 2: HINFO rdata longer than its fields");
		CHECK_EQ(OUT.flags, OBS_F_MALFORMED);
		CHECK_EQ(count_tag(&OUT, "AN"), 2);
		CHECK_STR(field(&OUT, "AN", !first, 5), "\\# 10 03616263036465660102");
		CHECK_STR(field(&OUT, "AN", first, 1), "h.example");
		CHECK_STR(field(&OUT, "AN", first, 5), "10.0.0.1");
		CHECK(strstr(json_of(&OUT), "\"malformed\":\"answer") != NULL);

		/* a string that runs past rdlength: the fields take more */
		mb_hdr(&M, 79, RESP, 1, 2, 0, 0);
		mb_q(&M, "h.example", 13, 1);
		if (!first)
			a_rr();
		hinfo_rr(shorter, 8);
		if (first)
			a_rr();
		CHECK_EQ(parse(), MOD_MALFORMED);
		CHECK_STR(OUT.reason, first ? "answer 1: HINFO rdata shorter than its fields"
					    : "answer 2: HINFO rdata shorter than its fields");
		CHECK_EQ(count_tag(&OUT, "AN"), 2);
	}

	/* past the walk's table (DNS_RR_SEEN), and in the authority section */
	mb_hdr(&M, 80, RESP, 1, DNS_RR_SEEN + 2, 1, 0);
	mb_q(&M, "h.example", 1, 1);
	for (int i = 0; i < DNS_RR_SEEN + 2; i++)
		a_rr();
	hinfo_rr(longer, 10);
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "authority 1: HINFO rdata longer than its fields");
	hinfo_rr(longer, 10);
	M.b[9] = 2; /* a second one: the first gives the reason */
	CHECK_EQ(parse(), MOD_MALFORMED);
	CHECK_STR(OUT.reason, "authority 1: HINFO rdata longer than its fields");
	CHECK_EQ(count_tag(&OUT, "NS"), 2);

	/* one that fits is shown from the wire, and the message is sound */
	mb_hdr(&M, 81, RESP, 1, 2, 0, 0);
	mb_q(&M, "h.example", 13, 1);
	hinfo_rr(longer, 8);
	a_rr();
	CHECK_EQ(parse(), MOD_OK);
	CHECK_STR(field(&OUT, "AN", 0, 5), "\\# 8 0361626303646566");
	keep_hinfo = M;

	/* types whose ldns layout is not the RFC's are not judged: NSAP-PTR
	 * holds a name (Knot serves "foo.example." so), SINK 3 bytes */
	static const struct {
		uint16_t type;
		const char *rd;
		size_t n;
		const char *text;
	} odd[] = {
		{23, "\x03" "foo" "\x07" "example", 13, "\\# 13 03666f6f076578616d706c6500"},
		{40, "\x01\x02\x03", 3, "\\# 3 010203"},
	};
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		mb_hdr(&M, 82, RESP, 1, 2, 0, 0);
		mb_q(&M, "h.example", odd[i].type, 1);
		mb_u16(&M, 0xc00c);
		size_t at = mb_rr(&M, odd[i].type, 1, 60);
		mb_bytes(&M, odd[i].rd, odd[i].n);
		mb_rr_end(&M, at);
		a_rr();
		CHECK_EQ(parse(), MOD_OK);
		CHECK_STR(field(&OUT, "AN", 0, 5), odd[i].text);
		CHECK_STR(field(&OUT, "AN", 1, 5), "10.0.0.1");
		CHECK_EQ(OUT.flags & OBS_F_MALFORMED, 0);
	}
}

/*
 * More RRs than the walk's table holds (DNS_RR_SEEN): the ldns path takes
 * the first from the table and reads the rest from the wire. A CNAME chain
 * (each owner is the previous target, whose text the record reuses),
 * HINFO (shown generic, from the wire), A records, and an OPT among the
 * additional records; TTLs at every decimal length.
 */
static void test_many_rrs(void)
{
	static const uint32_t ttls[] = {0, 9, 10, 99, 100, 999, 1000, 65535, 100000,
					4294967295u, 1234567890u, 300};
	const unsigned n_an = DNS_RR_SEEN + 30;
	char want[64];
	size_t at, name = 12, ns2 = 0;

	mb_hdr(&M, 77, RESP, 1, n_an, 2, 4);
	mb_q(&M, "chain.example", 1, 1);
	for (unsigned i = 0; i < n_an; i++) {
		mb_u16(&M, 0xc000 | (unsigned)name);
		switch (i % 3) {
		case 0: /* CNAME to the next name of the chain */
			at = mb_rr(&M, 5, 1, ttls[i % 12]);
			name = M.n;
			if (i == 0) {
				mb_bytes(&M, "\x05x.y\x01\\", 6); /* "x.y" \x01 '\' */
				mb_u16(&M, 0xc00c);
			} else {
				snprintf(want, sizeof(want), "c%u", i);
				mb_name_ptr(&M, want, 12);
			}
			break;
		case 1: /* HINFO (shown generic) */
			at = mb_rr(&M, 13, 1, ttls[i % 12]);
			mb_bytes(&M, "\x03" "abc" "\x03" "def", 8);
			break;
		default:
			at = mb_rr(&M, 1, 1, ttls[i % 12]);
			mb_bytes(&M, "\x0a\x00\x00", 3);
			mb_u8(&M, i);
			break;
		}
		mb_rr_end(&M, at);
	}
	for (int i = 0; i < 2; i++) {
		mb_u16(&M, 0xc00c);
		at = mb_rr(&M, 2, 1, 3600);
		ns2 = M.n;
		mb_name_ptr(&M, i ? "ns2" : "ns1", 12);
		mb_rr_end(&M, at);
	}
	mb_u16(&M, 0xc000 | (unsigned)ns2); /* glue: the last NS target */
	at = mb_rr(&M, 1, 1, 60);
	mb_bytes(&M, "\xc0\x00\x02\x01", 4);
	mb_rr_end(&M, at);
	mb_u8(&M, 0);
	at = mb_rr(&M, 41, 1232, 0);
	mb_rr_end(&M, at);
	mb_u16(&M, 0xc00c);
	at = mb_rr(&M, 65281, 1, 5);
	mb_bytes(&M, "\x03" "abc" "\x03" "def" "\x01\x02", 10);
	mb_rr_end(&M, at);
	mb_u16(&M, 0xc000 | (unsigned)ns2); /* after other RRs: still reused */
	at = mb_rr(&M, 65280, 1, 7);
	mb_bytes(&M, "\xff", 1);
	mb_rr_end(&M, at);

	CHECK_EQ(parse(), MOD_OK);
	CHECK_EQ(OUT.cut, 0);
	CHECK_EQ(count_tag(&OUT, "AN"), (int)n_an);
	CHECK_EQ(count_tag(&OUT, "NS"), 2);
	CHECK_EQ(count_tag(&OUT, "AR"), 3);
	CHECK_STR(field(&OUT, "AN", 0, 5), "x\\.y\\x01\\\\.chain.example");
	CHECK_STR(field(&OUT, "AN", 1, 1), "x\\.y\\x01\\\\.chain.example");
	CHECK_STR(field(&OUT, "AN", 3, 1), "x\\.y\\x01\\\\.chain.example");
	CHECK_STR(field(&OUT, "AN", 4, 1), "c3.chain.example");
	for (unsigned i = 0; i < n_an; i++) {
		snprintf(want, sizeof(want), "%u", (unsigned)ttls[i % 12]);
		CHECK_STR(field(&OUT, "AN", (int)i, 4), want);
		if (i % 3 == 1)
			CHECK_STR(field(&OUT, "AN", (int)i, 5), "\\# 8 0361626303646566");
		if (i % 3 == 2) {
			snprintf(want, sizeof(want), "10.0.0.%u", i);
			CHECK_STR(field(&OUT, "AN", (int)i, 5), want);
		}
		if (i >= 3 && i % 3 == 0) {
			snprintf(want, sizeof(want), "c%u.chain.example", i - 3);
			CHECK_STR(field(&OUT, "AN", (int)i, 1), i == 3 ? field(&OUT, "AN", 0, 5)
								    : want);
		}
	}
	CHECK_STR(field(&OUT, "AR", 0, 1), "ns2.chain.example");
	CHECK_STR(field(&OUT, "AR", 1, 5), "\\# 10 03616263036465660102");
	CHECK_STR(field(&OUT, "AR", 2, 1), "ns2.chain.example");
	CHECK_STR(field(&OUT, "AR", 2, 5), "\\# 1 ff");
	CHECK_STR(field(&OUT, "AR", 3, 0), "(none)");
	CHECK_EQ(OUT2.info_len, OUT.info_len);

	/* every byte in a one-byte label renders as the escaping rule says */
	for (unsigned b = 0; b < 256; b++) {
		uint8_t w[3] = {1, (uint8_t)b, 0};
		char got[16];
		int cut = 0;
		if (b < 0x20 || b > 0x7e)
			snprintf(want, sizeof(want), "\\x%02x", b);
		else if (b == '.' || b == '\\')
			snprintf(want, sizeof(want), "\\%c", (char)b);
		else
			snprintf(want, sizeof(want), "%c", (char)b);
		CHECK_EQ(dns_name_text(got, sizeof(got), w, 3, &cut), strlen(want));
		CHECK_STR(got, want);
		CHECK_EQ(cut, 0);
	}
}

static void test_mnemonics(void)
{
	char b[DNS_MNEMONIC_MAX];

	CHECK_STR(dns_type_str(1, b, sizeof(b)), "A");
	CHECK_STR(dns_type_str(65, b, sizeof(b)), "HTTPS");
	CHECK_STR(dns_type_str(32769, b, sizeof(b)), "DLV");
	CHECK_STR(dns_type_str(65280, b, sizeof(b)), "TYPE65280");
	CHECK_STR(dns_type_str(54, b, sizeof(b)), "TYPE54");
	CHECK_STR(dns_class_str(32769, b, sizeof(b)), "CLASS32769");
	CHECK_STR(dns_rcode_str(3, b, sizeof(b)), "NXDOMAIN");
	CHECK_STR(dns_rcode_str(23, b, sizeof(b)), "BADCOOKIE");
	CHECK_STR(dns_rcode_str(4000, b, sizeof(b)), "RCODE4000");
	CHECK_STR(dns_opcode_str(6, b, sizeof(b)), "DSO");
	CHECK_STR(dns_opcode_str(3, b, sizeof(b)), "OPCODE3");

	json_t *j = json_object();
	CHECK_EQ(dns_info_json(j, "", 0, OBS_DNS_QUERY), -EINVAL);
	CHECK_EQ(dns_info_json(j, "x\x1fy", 3, OBS_DNS_QUERY), -EINVAL);
	CHECK_EQ(json_object_size(j), 0);
	json_decref(j);
}

/* ---- the module ----------------------------------------------------------- */

struct test_emit {
	struct emit e;
	int n;
	char names[8][64];
	unsigned flags[8];
	int kinds[8];
	uint32_t sizes[8];
};

static int test_obs(struct emit *e, const struct obs *o)
{
	struct test_emit *t = (struct test_emit *)e;
	if (t->n < 8) {
		snprintf(t->names[t->n], sizeof(t->names[0]), "%s", o->name);
		t->flags[t->n] = o->flags;
		t->kinds[t->n] = o->kind;
		t->sizes[t->n] = o->size;
	}
	t->n++;
	return 0;
}

/*
 * A UDP datagram on a DNS port too short for a header is a message all the
 * same: counted malformed, as over TCP (truncated when the capture cut
 * it), and not stored, having no header. An empty one is not DNS's.
 */
static void test_module_udp_short(void)
{
	static const uint8_t bytes[12] = {0x12, 0x34, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0};
	void *state = NULL;
	int bad = 0;

	CHECK_EQ(dns_module.init(NULL, &state), 0);
	for (size_t n = 0; n <= 12; n++) {
		for (int snap = 0; snap < 2; snap++) {
			struct test_emit te = {.e = {.obs = test_obs}};
			struct pkt p;
			memset(&p, 0, sizeof(p));
			p.proto = IPPROTO_UDP;
			p.sport = 40000;
			p.dport = n % 2 ? 53 : 5353;
			p.payload = bytes;
			p.payload_len = n;
			p.flags = snap ? PKT_SHORT : 0;
			int want = n == 0 ? MOD_NOT_MINE : n == 12 ? MOD_OK
					: snap ? MOD_TRUNCATED : MOD_MALFORMED;
			if (dns_module.on_packet(state, &p, &te.e) != want || te.n != (n == 12))
				bad++;
		}
	}
	CHECK_EQ(bad, 0);
	dns_module.fini(state);
}

/* A hand-built TCP flow, all zero, whose streams are st (the flow table
 * keeps them out of line). */
static void tcp_flow_init(struct flow *f, struct flow_stream st[2])
{
	memset(f, 0, sizeof(*f));
	memset(st, 0, 2 * sizeof(*st));
	f->st = st;
}

static void test_module_tcp(void)
{
	static uint8_t stream[2048];
	size_t len = 0, m1, m2;
	void *state = NULL;
	int bad = 0;

	CHECK_EQ(dns_module.init(NULL, &state), 0);

	/* message 1: a query; message 2: the response of test_a */
	mb_hdr(&M, 21, QUERY, 1, 0, 0, 0);
	mb_q(&M, "one.example", 1, 1);
	m1 = M.n;
	stream[len++] = (uint8_t)(m1 >> 8);
	stream[len++] = (uint8_t)m1;
	memcpy(stream + len, M.b, m1);
	len += m1;
	test_a();
	test_a_text();
	m2 = M.n;
	stream[len++] = (uint8_t)(m2 >> 8);
	stream[len++] = (uint8_t)m2;
	memcpy(stream + len, M.b, m2);
	len += m2;

	/* every pair of split points: bytes arrive in three segments, each
	 * appended where the stream (slid past what was parsed) ends */
	for (size_t s1 = 1; s1 < len; s1 += 3) {
		for (size_t s2 = s1; s2 <= len; s2 += 5) {
			static uint8_t work[sizeof(stream)];
			struct flow f;
			struct flow_stream fst[2];
			struct pkt p;
			struct test_emit te = {.e = {.obs = test_obs}};
			size_t cuts[3] = {s1, s2, len}, given = 0;

			tcp_flow_init(&f, fst);
			memset(&p, 0, sizeof(p));
			f.st[1].buf = work;
			f.st[1].cap = (uint32_t)sizeof(work);
			p.proto = IPPROTO_TCP;
			p.sport = 53;
			p.dport = 40000;
			p.flow = &f;
			p.dir = 1;
			for (int k = 0; k < 3; k++) {
				memcpy(work + f.st[1].len, stream + given, cuts[k] - given);
				f.st[1].len += (uint32_t)(cuts[k] - given);
				given = cuts[k];
				if (dns_module.on_packet(state, &p, &te.e) != MOD_OK)
					bad++;
				/* what was parsed is dropped from the front */
				if (f.st[1].consumed != 0 ||
				    f.st[1].slid + f.st[1].len != given)
					bad++;
			}
			if (te.n != 2 || f.st[1].slid != len || f.st[1].len != 0 ||
			    strcmp(te.names[0], "one.example") != 0 ||
			    strcmp(te.names[1], "example.com") != 0 ||
			    te.flags[0] != OBS_F_TCP || te.kinds[0] != OBS_DNS_QUERY ||
			    te.kinds[1] != OBS_DNS_ANSWER || te.sizes[1] != m2)
				bad++;
		}
	}
	CHECK_EQ(bad, 0);

	/* a stream that overflowed in the middle of message 2 */
	{
		struct flow f;
		struct flow_stream fst[2];
		struct pkt p;
		struct test_emit te = {.e = {.obs = test_obs}};

		tcp_flow_init(&f, fst);
		memset(&p, 0, sizeof(p));
		f.st[0].buf = stream;
		f.st[0].len = (uint32_t)(len - 10);
		f.st[0].overflow = 1;
		p.proto = IPPROTO_TCP;
		p.sport = 40000;
		p.dport = 53;
		p.flow = &f;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_TRUNCATED);
		CHECK_EQ(te.n, 2);
		CHECK_EQ(te.flags[1], OBS_F_TCP | OBS_F_TRUNCATED);
		CHECK_EQ(f.st[0].done, 1);
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_OK);
		CHECK_EQ(te.n, 2);
	}

	/* UDP: ports, a short payload, a malformed message */
	{
		struct pkt p;
		struct test_emit te = {.e = {.obs = test_obs}};

		memset(&p, 0, sizeof(p));
		p.proto = IPPROTO_UDP;
		p.sport = 40000;
		p.dport = 5353;
		p.payload = M.b;
		p.payload_len = M.n;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_OK);
		CHECK_EQ(te.n, 1);
		CHECK_EQ(te.flags[0], 0);
		p.dport = 5355;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_OK);
		p.dport = 443;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_NOT_MINE);
		p.sport = 53;
		p.payload_len = 11;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_MALFORMED);
		p.flags = PKT_SHORT;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_TRUNCATED);
		p.payload_len = M.n - 3;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_TRUNCATED);
		CHECK_EQ(te.flags[te.n - 1], OBS_F_TRUNCATED);
		p.flags = 0;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_MALFORMED);
		CHECK_EQ(te.flags[te.n - 1], OBS_F_MALFORMED);
		CHECK_EQ(te.n, 4);
		p.proto = IPPROTO_ICMP;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_NOT_MINE);
		p.proto = IPPROTO_TCP; /* TCP: 443 is not mine; 53 without a flow */
		p.sport = 40000;
		p.dport = 443;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_NOT_MINE);
		p.dport = 5353;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_NOT_MINE);
		CHECK_EQ(te.n, 4);
	}
	dns_module.fini(state);
	dns_module.fini(NULL);
	CHECK_STR(dns_module.name, "dns");
	CHECK_EQ(dns_module.sel, SEL_UDP | SEL_TCP | SEL_PAYLOAD);
}

/* One TCP segment through a real flow table, then the module, as core.c
 * does it (payload packets only). Returns the module's result, or -1 when
 * the module was not called. */
static int seg(struct flow_table *ft, void *state, struct test_emit *te, int from_client,
	       uint8_t flags, uint32_t seq, uint32_t ack, const uint8_t *data, size_t n)
{
	struct pkt p;
	const uint8_t c[4] = {10, 0, 0, 1}, sv[4] = {10, 0, 0, 53};

	memset(&p, 0, sizeof(p));
	p.ipv = 4;
	p.proto = IPPROTO_TCP;
	memcpy(p.src, from_client ? c : sv, 4);
	memcpy(p.dst, from_client ? sv : c, 4);
	p.sport = from_client ? 40000 : 53;
	p.dport = from_client ? 53 : 40000;
	p.tcp_flags = flags;
	p.seq = seq;
	p.ack = ack;
	p.payload = data;
	p.payload_len = n;
	p.ts_us = 1000000;
	if (!flow_table_update(ft, &p))
		return -2;
	if (n == 0)
		return -1;
	return dns_module.on_packet(state, &p, &te->e);
}

/* A query for name, length-prefixed, appended to buf at *len. */
/* The client's SYN (its byte 0 at isn) and the server's SYN-ACK (its byte 0
 * at 701). */
static void handshake(struct flow_table *ft, void *state, struct test_emit *te, uint32_t isn)
{
	seg(ft, state, te, 1, TH_SYN, isn - 1, 0, NULL, 0);
	seg(ft, state, te, 0, TH_SYN | TH_ACK, 700, isn, NULL, 0);
}

/* Append the message M to buf[*len..] behind its 2-byte length (TCP). */
static void lp_append(uint8_t *buf, size_t *len)
{
	buf[(*len)++] = (uint8_t)(M.n >> 8);
	buf[(*len)++] = (uint8_t)M.n;
	memcpy(buf + *len, M.b, M.n);
	*len += M.n;
}

static void tcp_query(uint8_t *buf, size_t *len, unsigned id, const char *name)
{
	mb_hdr(&M, id, QUERY, 1, 0, 0, 0);
	mb_q(&M, name, 1, 1);
	lp_append(buf, len);
}

/* Names "m0000.example" ... seen in order: *next is the number expected */
struct seq_emit {
	struct emit e;
	unsigned next, bad;
};

static int seq_obs(struct emit *e, const struct obs *o)
{
	struct seq_emit *t = (struct seq_emit *)e;
	unsigned k;
	if (!o->name || sscanf(o->name, "m%u.example", &k) != 1 || k != t->next)
		t->bad++;
	t->next++;
	return 0;
}

/*
 * One DNS-over-TCP connection far longer than the reassembly window
 * (stream_max, 16 KiB): 3000 queries, ~90 KB, some split over two segments,
 * some pairs sent in reverse order, some segments sent twice. Parsing
 * slides the window (flow_stream_slide), so every message comes out, once
 * and in order, and the buffer never grows past the window.
 */
static void test_module_tcp_long(void)
{
	enum { N = 3000 };
	static uint8_t cs[N * 40];
	static size_t off[N + 1];
	size_t len = 0;
	void *state = NULL;
	const uint32_t isn = 7000;
	char name[32];
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct seq_emit te = {.e = {.obs = seq_obs}};
	struct test_emit dummy = {.e = {.obs = test_obs}};
	uint32_t cap_max = 0;

	CHECK(ft != NULL);
	CHECK_EQ(dns_module.init(NULL, &state), 0);
	for (unsigned i = 0; i < N; i++) {
		off[i] = len;
		snprintf(name, sizeof(name), "m%04u.example", i);
		tcp_query(cs, &len, i, name);
	}
	off[N] = len;
	seg(ft, state, &dummy, 1, TH_SYN, isn - 1, 0, NULL, 0);
	seg(ft, state, &dummy, 0, TH_SYN | TH_ACK, 700, isn, NULL, 0);
	struct flow *f = flow_table_find(ft, 4, IPPROTO_TCP, (const uint8_t[]){10, 0, 0, 1}, 40000,
					 (const uint8_t[]){10, 0, 0, 53}, 53, NULL);
	CHECK(f != NULL);
	for (unsigned i = 0; i < N && f; i++) {
		size_t a = off[i], b = off[i + 1];
		if (i % 11 == 3 && i + 1 < N) {
			/* this message and the next, the next first */
			size_t c = off[i + 2];
			seg(ft, state, (struct test_emit *)&te, 1, TH_ACK | TH_PUSH,
			    isn + (uint32_t)b, 701, cs + b, c - b);
			seg(ft, state, (struct test_emit *)&te, 1, TH_ACK | TH_PUSH,
			    isn + (uint32_t)a, 701, cs + a, b - a);
			i++;
		} else if (i % 7 == 5) {
			/* split inside the message */
			size_t m = a + (b - a) / 2;
			seg(ft, state, (struct test_emit *)&te, 1, TH_ACK | TH_PUSH,
			    isn + (uint32_t)a, 701, cs + a, m - a);
			seg(ft, state, (struct test_emit *)&te, 1, TH_ACK | TH_PUSH,
			    isn + (uint32_t)m, 701, cs + m, b - m);
		} else {
			seg(ft, state, (struct test_emit *)&te, 1, TH_ACK | TH_PUSH,
			    isn + (uint32_t)a, 701, cs + a, b - a);
		}
		if (i % 13 == 0) /* the segment again: a retransmission */
			seg(ft, state, (struct test_emit *)&te, 1, TH_ACK | TH_PUSH,
			    isn + (uint32_t)off[i], 701, cs + off[i], off[i + 1] - off[i]);
		if (f->st[0].cap > cap_max)
			cap_max = f->st[0].cap;
	}
	CHECK_EQ(te.next, N);
	CHECK_EQ(te.bad, 0);
	CHECK(len > 5 * 16384);
	CHECK(cap_max <= 16384);
	if (f) {
		CHECK_EQ(f->st[0].slid, len);
		CHECK_EQ(f->st[0].len, 0);
		CHECK_EQ(f->st[0].overflow, 0);
	}
	CHECK_EQ(flow_table_stats(ft)->stream_truncated, 0);
	flow_table_free(ft);
	dns_module.fini(state);
}

/*
 * DNS over TCP past stream_max in one message: a response of ~60 KB (240
 * TXT records, as a zone transfer or a tunnel's downstream sends), in
 * segments of 1400 bytes, then a small one, then one of the largest size
 * (65535 bytes) sent in one 64 KiB segment after a partial one. A DNS
 * port's window is wide (FLOW_STREAM_WIDE) from the first byte, so each
 * message comes whole, not cut at 16 KiB as before, and the connection
 * goes on after it; the buffer never exceeds FLOW_STREAM_WIDE.
 */
static void test_module_tcp_wide(void)
{
	static uint8_t cs[3 * 70000];
	size_t len = 0, m1, m2;
	void *state = NULL;
	const uint32_t isn = 9000; /* server byte 0 */
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct test_emit te = {.e = {.obs = test_obs}};
	uint32_t cap_max = 0;
	char txt[250];

	CHECK(ft != NULL);
	CHECK_EQ(dns_module.init(NULL, &state), 0);
	memset(txt, 'x', sizeof(txt));
	/* message 1: 240 TXT answers of 250 bytes */
	mb_hdr(&M, 0x77, RESP, 1, 240, 0, 0);
	mb_q(&M, "big.example", 16, 1);
	for (int i = 0; i < 240; i++) {
		mb_u16(&M, 0xc00c);
		size_t at = mb_rr(&M, 16, 1, 60);
		mb_u8(&M, sizeof(txt) - 1);
		mb_bytes(&M, txt, sizeof(txt) - 1);
		mb_rr_end(&M, at);
	}
	CHECK(M.n > 60000 && M.n < 65536);
	lp_append(cs, &len);
	m1 = len;
	/* message 2: a small answer */
	mb_hdr(&M, 0x78, RESP, 1, 1, 0, 0);
	mb_q(&M, "small.example", 1, 1);
	mb_u16(&M, 0xc00c);
	size_t at = mb_rr(&M, 1, 1, 60);
	mb_bytes(&M, "\xc0\x00\x02\x01", 4);
	mb_rr_end(&M, at);
	lp_append(cs, &len);
	m2 = len;
	/* message 3: 65535 bytes, a NULL record filling it */
	mb_hdr(&M, 0x79, RESP, 1, 1, 0, 0);
	mb_q(&M, "max.example", 10, 1);
	mb_u16(&M, 0xc00c);
	at = mb_rr(&M, 10, 1, 60);
	while (M.n < 65535)
		mb_u8(&M, 0xab);
	mb_rr_end(&M, at);
	lp_append(cs, &len);

	seg(ft, state, &te, 1, TH_SYN, 700, 0, NULL, 0);
	seg(ft, state, &te, 0, TH_SYN | TH_ACK, isn - 1, 701, NULL, 0);
	struct flow *f = flow_table_find(ft, 4, IPPROTO_TCP, (const uint8_t[]){10, 0, 0, 1}, 40000,
					 (const uint8_t[]){10, 0, 0, 53}, 53, NULL);
	CHECK(f != NULL);
	/* messages 1 and 2 in 1400-byte segments, then 100 bytes of message 3 */
	for (size_t a = 0; a < m2 + 100 && f; a += 1400) {
		size_t b = a + 1400 < m2 + 100 ? a + 1400 : m2 + 100;
		seg(ft, state, &te, 0, TH_ACK | TH_PUSH, isn + (uint32_t)a, 701, cs + a, b - a);
		if (f->st[1].cap > cap_max)
			cap_max = f->st[1].cap;
	}
	CHECK_EQ(te.n, 2);
	/* the rest of message 3 in one segment of 64 KiB, as a capture with
	 * segmentation offload shows */
	seg(ft, state, &te, 0, TH_ACK | TH_PUSH, isn + (uint32_t)(m2 + 100), 701, cs + m2 + 100,
	    len - m2 - 100);
	if (f && f->st[1].cap > cap_max)
		cap_max = f->st[1].cap;
	CHECK_EQ(te.n, 3);
	CHECK_STR(te.names[0], "big.example");
	CHECK_STR(te.names[1], "small.example");
	CHECK_STR(te.names[2], "max.example");
	for (int i = 0; i < 3 && i < te.n; i++)
		CHECK_EQ(te.flags[i] & (OBS_F_TRUNCATED | OBS_F_MALFORMED), 0);
	CHECK_EQ(te.sizes[0], m1 - 2);
	CHECK_EQ(te.sizes[2], 65535);
	CHECK(cap_max > 16384 && cap_max <= FLOW_STREAM_WIDE);
	CHECK_EQ(flow_table_stats(ft)->stream_truncated, 0);
	if (f) {
		CHECK_EQ(f->st[1].overflow, 0);
		CHECK_EQ(f->st[1].wide, 1); /* a DNS port's: from the start */
		CHECK_EQ(f->st[0].wide, 1);
	}
	flow_table_free(ft);

	/* messages 1 and 2 in one segment of ~60 KB (a capture with offload):
	 * a DNS port's window is wide from the first byte, so the segment is
	 * not cut at 16 KiB before the analyzer reads its length */
	ft = flow_table_new(NULL, NULL, NULL);
	memset(&te, 0, sizeof(te));
	te.e.obs = test_obs;
	seg(ft, state, &te, 1, TH_SYN, 700, 0, NULL, 0);
	seg(ft, state, &te, 0, TH_SYN | TH_ACK, isn - 1, 701, NULL, 0);
	seg(ft, state, &te, 0, TH_ACK | TH_PUSH, isn, 701, cs, m2);
	CHECK_EQ(te.n, 2);
	CHECK_STR(te.names[0], "big.example");
	CHECK_STR(te.names[1], "small.example");
	CHECK_EQ(te.flags[0] & (OBS_F_TRUNCATED | OBS_F_MALFORMED), 0);
	CHECK_EQ(flow_table_stats(ft)->stream_truncated, 0);
	flow_table_free(ft);
	dns_module.fini(state);
	(void)m1;
}

/*
 * A SYN again with another ISN before any data (a retry, or a decoy sent
 * to hide the connection's bytes): the SYN-ACK's acknowledgment names the
 * client's ISN, and the latest SYN-ACK the server's, so the query and the
 * response are read whichever order the SYNs came in.
 */
static void test_module_tcp_new_isn(void)
{
	static uint8_t q[256], r[256];
	size_t qlen = 0, rlen = 0;
	void *state = NULL;

	CHECK_EQ(dns_module.init(NULL, &state), 0);
	tcp_query(q, &qlen, 7, "isn.example");
	mb_hdr(&M, 7, RESP, 1, 0, 0, 0);
	mb_q(&M, "isn.example", 1, 1);
	lp_append(r, &rlen);
	for (int how = 0; how < 3; how++) {
		struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
		struct test_emit te = {.e = {.obs = test_obs}};
		const uint32_t real = 900000, decoy = 1000, srv = 7000000, srv_decoy = 5000;

		if (how == 0) { /* the decoy SYN first */
			seg(ft, state, &te, 1, TH_SYN, decoy, 0, NULL, 0);
			seg(ft, state, &te, 1, TH_SYN, real, 0, NULL, 0);
		} else if (how == 1) { /* the decoy SYN after the real one */
			seg(ft, state, &te, 1, TH_SYN, real, 0, NULL, 0);
			seg(ft, state, &te, 1, TH_SYN, decoy, 0, NULL, 0);
		} else {
			seg(ft, state, &te, 1, TH_SYN, real, 0, NULL, 0);
			/* a SYN-ACK of another ISN first */
			seg(ft, state, &te, 0, TH_SYN | TH_ACK, srv_decoy, real + 1, NULL, 0);
		}
		seg(ft, state, &te, 0, TH_SYN | TH_ACK, srv, real + 1, NULL, 0);
		seg(ft, state, &te, 1, TH_ACK | TH_PUSH, real + 1, srv + 1, q, qlen);
		seg(ft, state, &te, 0, TH_ACK | TH_PUSH, srv + 1, real + 1 + (uint32_t)qlen, r, rlen);
		CHECK_EQ(te.n, 2);
		CHECK_EQ(te.kinds[0], OBS_DNS_QUERY);
		CHECK_EQ(te.kinds[1], OBS_DNS_ANSWER);
		CHECK_STR(te.names[0], "isn.example");
		CHECK_STR(te.names[1], "isn.example");
		flow_table_free(ft);
	}
	dns_module.fini(state);
}

/*
 * Who owns a TCP connection on a DNS port: a client that speaks TLS or HTTP
 * there belongs to those analyzers, but a DNS query cannot pass for either
 * by its length and id: padded to 0x1603 bytes (16 03, a TLS record's
 * start) or 0x4745 bytes with id 0x5420 ("GET "), it is still DNS.
 */
static void test_module_tcp_claim(void)
{
	static uint8_t cs[20000];
	void *state = NULL;
	const uint32_t isn = 3000;
	static const uint8_t hello[] = {0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00,
					0xc4, 0x03, 0x03, 0x11, 0x22, 0x33};
	static const char get[] = "GET / HTTP/1.1\r\nHost: x.example\r\n\r\n";

	CHECK_EQ(dns_module.init(NULL, &state), 0);
	for (int how = 0; how < 5; how++) {
		struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
		struct test_emit te = {.e = {.obs = test_obs}};
		size_t len = 0;
		int want_dns = how == 2 || how == 3;

		if (how == 0 || how == 4) {
			memcpy(cs, hello, sizeof(hello));
			len = sizeof(hello);
			if (how == 4)
				cs[2] = 0xff; /* record version 3.255: OpenSSL takes it */
		} else if (how == 1) {
			memcpy(cs, get, strlen(get));
			len = strlen(get);
		} else {
			/* a query padded (EDNS padding) to 0x1603 or 0x4745 bytes */
			unsigned size = how == 2 ? 0x1603 : 0x4745, id = how == 2 ? 0x0101 : 0x5420;
			mb_hdr(&M, id, QUERY, 1, 0, 0, 1);
			mb_q(&M, "padded.example", 1, 1);
			size_t pad = size - M.n - 15;
			mb_u8(&M, 0);
			mb_u16(&M, 41);
			mb_u16(&M, 4096);
			mb_u32(&M, 0);
			mb_u16(&M, (unsigned)(4 + pad));
			mb_u16(&M, 12);
			mb_u16(&M, (unsigned)pad);
			for (size_t i = 0; i < pad; i++)
				mb_u8(&M, 0);
			CHECK_EQ(M.n, size);
			lp_append(cs, &len);
			CHECK(how == 2 ? cs[0] == 0x16 && cs[1] == 0x03 : !memcmp(cs, "GET ", 4));
		}
		handshake(ft, state, &te, isn);
		int r = seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn, 701, cs, len);
		struct flow *f = flow_table_find(ft, 4, IPPROTO_TCP, (const uint8_t[]){10, 0, 0, 1},
						 40000, (const uint8_t[]){10, 0, 0, 53}, 53, NULL);
		CHECK(f != NULL);
		if (want_dns) {
			CHECK(f && f->app == APP_DNS);
			CHECK_EQ(te.n, 1);
			CHECK_STR(te.names[0], "padded.example");
			CHECK_EQ(te.flags[0] & OBS_F_MALFORMED, 0);
		} else {
			CHECK_EQ(r, MOD_NOT_MINE);
			CHECK(f && f->app == APP_NONE);
			CHECK_EQ(te.n, 0);
		}
		flow_table_free(ft);
	}
	dns_module.fini(state);
}

/*
 * A PROXY protocol header before DNS: over TCP once, at the client
 * stream's start, before the first length prefix (v2: dnsdist, unbound's
 * proxy-protocol-port, PowerDNS, BIND, Knot Resolver; v1 and v2: CoreDNS's
 * proxyproto, a DNS-over-TCP server behind HAProxy's send-proxy); over UDP
 * a v2 header before each message. The messages after it are read as
 * without it (before, nothing was: the header was taken for a length
 * prefix); the header split at every byte over two segments; in its own
 * segment; a TLS hello or an HTTP request behind it is left to its
 * analyzer; a v1 line over UDP is no header (no server takes one).
 */
static size_t pp_v2(uint8_t *b, uint8_t cmd)
{
	static const uint8_t sig[12] = {'\r', '\n', '\r', '\n', 0, '\r', '\n', 'Q', 'U', 'I', 'T', '\n'};
	static const uint8_t addrs[12] = {10, 0, 0, 1, 10, 0, 0, 53, 0x9c, 0x40, 0, 53};
	memcpy(b, sig, 12);
	b[12] = (uint8_t)(0x20 | cmd);
	b[13] = cmd ? 0x11 : 0x00;
	b[14] = 0;
	b[15] = cmd ? 12 : 0;
	if (cmd)
		memcpy(b + 16, addrs, 12);
	return cmd ? 28 : 16;
}

static void test_module_tcp_proxy(void)
{
	static uint8_t cs[4096];
	static const char v1[] = "PROXY TCP4 10.0.0.1 10.0.0.53 40000 53\r\n";
	static const uint8_t hello[] = {0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00,
					0xc4, 0x03, 0x03, 0x11, 0x22, 0x33};
	static const char get[] = "GET / HTTP/1.1\r\nHost: x.example\r\n\r\n";
	void *state = NULL;
	const uint32_t isn = 3000;
	int bad = 0;

	CHECK_EQ(dns_module.init(NULL, &state), 0);
	for (int kind = 0; kind < 3; kind++) { /* v2 PROXY, v2 LOCAL, v1 */
		size_t hn = kind == 2 ? strlen(v1) : pp_v2(cs, kind == 0);
		if (kind == 2)
			memcpy(cs, v1, hn);
		size_t len = hn;
		tcp_query(cs, &len, 1, "behind.proxy.example");
		tcp_query(cs, &len, 2, "second.example");
		for (size_t cut = 0; cut < len; cut++) {
			struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
			struct test_emit te = {.e = {.obs = test_obs}};
			handshake(ft, state, &te, isn);
			if (cut) {
				seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn, 701, cs, cut);
				/* nothing claimed while the header is not all there */
				if (cut <= hn && te.n != 0)
					bad++;
			}
			seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn + (uint32_t)cut, 701, cs + cut,
			    len - cut);
			if (te.n != 2 || strcmp(te.names[0], "behind.proxy.example") ||
			    strcmp(te.names[1], "second.example") || te.flags[0] != OBS_F_TCP ||
			    te.flags[1] != OBS_F_TCP) {
				fprintf(stderr, "dns behind proxy kind %d cut %zu: %d events, %s\n", kind,
					cut, te.n, te.n ? te.names[0] : "");
				bad++;
			}
			flow_table_free(ft);
		}
	}
	CHECK_EQ(bad, 0);

	/* TLS or HTTP behind the header: not DNS's */
	for (int what = 0; what < 2; what++) {
		struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
		struct test_emit te = {.e = {.obs = test_obs}};
		size_t len = pp_v2(cs, 1);
		if (what == 0) {
			memcpy(cs + len, hello, sizeof(hello));
			len += sizeof(hello);
		} else {
			memcpy(cs + len, get, strlen(get));
			len += strlen(get);
		}
		handshake(ft, state, &te, isn);
		CHECK_EQ(seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn, 701, cs, len), MOD_NOT_MINE);
		struct flow *f = flow_table_find(ft, 4, IPPROTO_TCP, (const uint8_t[]){10, 0, 0, 1},
						 40000, (const uint8_t[]){10, 0, 0, 53}, 53, NULL);
		CHECK(f && f->app == APP_NONE);
		CHECK_EQ(te.n, 0);
		flow_table_free(ft);
	}

	/* UDP: a v2 header before the message; a header alone holds none; a
	 * v1 line is no header there (the datagram is a malformed message) */
	struct pkt p;
	memset(&p, 0, sizeof(p));
	p.proto = IPPROTO_UDP;
	p.sport = 40000;
	p.dport = 53;
	for (int cmd = 0; cmd < 2; cmd++) {
		struct test_emit te = {.e = {.obs = test_obs}};
		size_t len = pp_v2(cs, (uint8_t)cmd);
		mb_hdr(&M, 7, QUERY, 1, 0, 0, 0);
		mb_q(&M, "udp.proxy.example", 1, 1);
		memcpy(cs + len, M.b, M.n);
		p.payload = cs;
		p.payload_len = len + M.n;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_OK);
		CHECK_EQ(te.n, 1);
		CHECK_STR(te.names[0], "udp.proxy.example");
		CHECK_EQ(te.sizes[0], M.n);
		p.payload_len = len;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_NOT_MINE);
		p.payload_len = len - 1; /* a cut header: a (malformed) message */
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_MALFORMED);
		CHECK_EQ(te.n, 2);
	}
	{
		struct test_emit te = {.e = {.obs = test_obs}};
		size_t len = strlen(v1);
		memcpy(cs, v1, len);
		memcpy(cs + len, M.b, M.n);
		p.payload = cs;
		p.payload_len = len + M.n;
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_MALFORMED);
		CHECK_EQ(te.n, 1);
	}
	dns_module.fini(state);
}

/*
 * A hole skipped without the peer's ACK (a FIN behind it, with one range
 * held ahead or many) gives no guess at where a message
 * starts after it: a sender could place a whole message there that the
 * receiver never reads as one (it sits inside another message's name), to
 * be reported in place of the real one. The direction is abandoned at the
 * hole instead; nothing after it is reported.
 */
static void test_module_tcp_unsure(void)
{
	static uint8_t cs[2048], fake[64];
	size_t len = 0, flen = 0, m1;
	void *state = NULL;
	const uint32_t isn = 5000;

	CHECK_EQ(dns_module.init(NULL, &state), 0);
	tcp_query(cs, &len, 1, "one.example");
	m1 = len;
	tcp_query(cs, &len, 2, "two.example");
	tcp_query(fake, &flen, 0x4242, "benign.example");
	CHECK(flen < 40);

	for (int how = 0; how < 2; how++) {
		struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
		struct test_emit te = {.e = {.obs = test_obs}};
		struct flow *f;

		CHECK(ft != NULL);
		handshake(ft, state, &te, isn);
		seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn, 701, cs, 10); /* m1's head */
		if (how == 0) {
			/* 17 ranges held ahead, the first a whole (fake) message,
			 * then a FIN behind them: every hole below is skipped */
			static uint8_t pad[40];
			for (unsigned k = 0; k < 17; k++) {
				const uint8_t *d = k ? pad : fake;
				seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn + 100 + 60 * k, 701, d,
				    k ? sizeof(pad) : flen);
			}
			uint32_t end = isn + 100 + 60 * 16 + (uint32_t)sizeof(pad);
			seg(ft, state, &te, 1, TH_ACK | TH_FIN, end, 701, NULL, 0);
			seg(ft, state, &te, 1, TH_ACK | TH_PUSH, end, 701, cs, 4);
		} else {
			/* message 2 held past a hole, then a FIN behind it */
			seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn + (uint32_t)m1, 701, cs + m1,
			    len - m1);
			seg(ft, state, &te, 1, TH_ACK | TH_FIN, isn + (uint32_t)len, 701, NULL, 0);
			/* (the analyzer reads on the next segment of that direction) */
			seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn + (uint32_t)len, 701, cs, 4);
		}
		f = flow_table_find(ft, 4, IPPROTO_TCP, (const uint8_t[]){10, 0, 0, 1}, 40000,
				    (const uint8_t[]){10, 0, 0, 53}, 53, NULL);
		CHECK(f != NULL);
		if (f) {
			CHECK_EQ(f->st[0].holes, how == 0 ? 17 : 1); /* one below each range */
			CHECK_EQ(f->st[0].unsure, 1);
		}
		for (int i = 0; i < te.n && i < 8; i++)
			CHECK(strcmp(te.names[i], "benign.example") != 0 &&
			      strcmp(te.names[i], "two.example") != 0);
		CHECK_EQ(te.n, 0);
		flow_table_free(ft);
	}
	dns_module.fini(state);
}

/*
 * Capture loss on DNS over TCP: the flow table skips a hole the server has
 * acknowledged, and the analyzer drops the message cut by it and resumes at
 * the first byte after it.
 */
static void test_module_tcp_hole(void)
{
	static uint8_t cs[512];
	size_t len = 0, m1, m2;
	void *state = NULL;
	const uint32_t isn = 5000; /* client byte 0 */

	CHECK_EQ(dns_module.init(NULL, &state), 0);
	tcp_query(cs, &len, 1, "one.example");
	m1 = len;
	tcp_query(cs, &len, 2, "two.example");
	m2 = len;
	tcp_query(cs, &len, 3, "three.example");

	/* message 1 comes in two segments and its tail is never seen; the
	 * server acknowledges it all, then message 2 comes */
	{
		struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
		struct test_emit te = {.e = {.obs = test_obs}};
		struct flow *f;

		CHECK(ft != NULL);
		seg(ft, state, &te, 1, TH_SYN, isn - 1, 0, NULL, 0);
		seg(ft, state, &te, 0, TH_SYN | TH_ACK, 700, isn, NULL, 0);
		CHECK_EQ(seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn, 701, cs, 10), MOD_OK);
		CHECK_EQ(te.n, 0);
		/* cs[10..m1) lost; the server has it */
		seg(ft, state, &te, 0, TH_ACK, 701, isn + (uint32_t)m1, NULL, 0);
		CHECK_EQ(seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn + (uint32_t)m1, 701,
			     cs + m1, m2 - m1),
			 MOD_OK);
		CHECK_EQ(te.n, 1);
		CHECK_STR(te.names[0], "two.example");
		CHECK_EQ(te.flags[0], OBS_F_TCP);
		f = flow_table_find(ft, 4, IPPROTO_TCP, (const uint8_t[]){10, 0, 0, 1}, 40000,
				    (const uint8_t[]){10, 0, 0, 53}, 53, NULL);
		CHECK(f != NULL);
		CHECK_EQ(f->st[0].holes, 1);
		CHECK_EQ(f->st[0].slid + f->st[0].consumed, m2);
		CHECK_EQ(f->st[0].done, 0);
		/* and the stream goes on in order */
		CHECK_EQ(seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn + (uint32_t)m2, 701,
			     cs + m2, len - m2),
			 MOD_OK);
		CHECK_EQ(te.n, 2);
		CHECK_STR(te.names[1], "three.example");
		flow_table_free(ft);
	}

	/* the same, but message 2 is held out of order before the ACK: the
	 * ACK skips the hole and the next segment delivers both */
	{
		struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
		struct test_emit te = {.e = {.obs = test_obs}};

		seg(ft, state, &te, 1, TH_SYN, isn - 1, 0, NULL, 0);
		seg(ft, state, &te, 0, TH_SYN | TH_ACK, 700, isn, NULL, 0);
		seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn, 701, cs, 10);
		seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn + (uint32_t)m1, 701, cs + m1, m2 - m1);
		CHECK_EQ(te.n, 0);
		seg(ft, state, &te, 0, TH_ACK, 701, isn + (uint32_t)m2, NULL, 0);
		seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn + (uint32_t)m2, 701, cs + m2,
		    len - m2);
		CHECK_EQ(te.n, 2);
		CHECK_STR(te.names[0], "two.example");
		CHECK_STR(te.names[1], "three.example");
		flow_table_free(ft);
	}

	/* a wrong guess: the segment after the hole starts inside a message.
	 * Its bytes come out malformed, and the direction is abandoned. */
	{
		struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
		struct test_emit te = {.e = {.obs = test_obs}};
		uint32_t cut = (uint32_t)m1 + 5; /* inside message 2's header */
		struct flow *f;

		seg(ft, state, &te, 1, TH_SYN, isn - 1, 0, NULL, 0);
		seg(ft, state, &te, 0, TH_SYN | TH_ACK, 700, isn, NULL, 0);
		seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn, 701, cs, 10);
		seg(ft, state, &te, 0, TH_ACK, 701, isn + cut, NULL, 0);
		/* from cs[cut]: 2 bytes read as a length, then garbage */
		int r = seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn + cut, 701, cs + cut,
			    len - cut);
		f = flow_table_find(ft, 4, IPPROTO_TCP, (const uint8_t[]){10, 0, 0, 1}, 40000,
				    (const uint8_t[]){10, 0, 0, 53}, 53, NULL);
		CHECK(f != NULL);
		/* (here a zero length: nothing to emit, but malformed) */
		CHECK_EQ(r, MOD_MALFORMED);
		CHECK_EQ(f->st[0].done, 1);
		CHECK_EQ(te.n, 0); /* garbage after a wrong guess is no event */
		/* nothing more is parsed from that direction */
		CHECK_EQ(seg(ft, state, &te, 1, TH_ACK | TH_PUSH, isn + (uint32_t)len, 701, cs,
			     m1),
			 MOD_OK);
		CHECK_EQ(te.n, 0);
		flow_table_free(ft);
	}

	/* the analyzer on its own: [m1][m2 cut by a hole][m3]; m1, which lies
	 * wholly before the hole, is still parsed */
	{
		static uint8_t buf[512];
		struct flow f;
		struct flow_stream fst[2];
		struct pkt p;
		struct test_emit te = {.e = {.obs = test_obs}};
		uint32_t hs = (uint32_t)m1 + 7, rs = (uint32_t)m2;

		/* the stream as the flow table leaves it: bytes [0, n) with a
		 * hole [h, rs) (parsing slides the buffer, so each case starts
		 * afresh) */
#define HOLED_STREAM(n, h)                                                       \
	do {                                                                     \
		memcpy(buf, cs, len);                                            \
		memset(buf + hs, 0, rs - hs);                                    \
		tcp_flow_init(&f, fst);                                          \
		f.st[0].buf = buf;                                               \
		f.st[0].cap = (uint32_t)sizeof(buf);                             \
		f.st[0].len = (uint32_t)(n);                                     \
		f.st[0].holes = 1;                                               \
		f.st[0].hole_start = (h);                                        \
		f.st[0].resync = rs;                                             \
		memset(&te, 0, sizeof(te));                                      \
		te.e.obs = test_obs;                                             \
	} while (0)
		memset(&p, 0, sizeof(p));
		p.proto = IPPROTO_TCP;
		p.sport = 40000;
		p.dport = 53;
		p.flow = &f;
		HOLED_STREAM(len, hs);
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_OK);
		CHECK_EQ(te.n, 2);
		CHECK_STR(te.names[0], "one.example");
		CHECK_STR(te.names[1], "three.example");
		CHECK_EQ(f.st[0].slid + f.st[0].consumed, len);
		/* the hole at the very start of the stream, cursor inside it */
		HOLED_STREAM(len, 0);
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_OK);
		CHECK_EQ(te.n, 1);
		CHECK_STR(te.names[0], "three.example");
		/* the message after the hole still incomplete: wait for it, the
		 * bytes before it dropped and its own kept at the front */
		HOLED_STREAM(len - 3, 0);
		CHECK_EQ(dns_module.on_packet(state, &p, &te.e), MOD_OK);
		CHECK_EQ(te.n, 0);
		CHECK_EQ(f.st[0].slid + f.st[0].consumed, rs);
		CHECK_EQ(f.st[0].len, len - 3 - rs);
		CHECK(memcmp(f.st[0].buf, cs + rs, len - 3 - rs) == 0);
		CHECK_EQ(f.st[0].done, 0);
#undef HOLED_STREAM
	}
	dns_module.fini(state);
}

/* ---- random smoke --------------------------------------------------------- */

static uint32_t rng = 12345;

static uint32_t rnd(void)
{
	rng = rng * 1103515245u + 12345u;
	return rng >> 8;
}

static void test_random(void)
{
	int bad = 0, nok = 0, nmisfit = 0;

	build_response();
	keep();
	/* and one of the records the walk keeps from ldns (dns.c): a CNAME
	 * chain, A and AAAA answers, compressed, and EDNS */
	mb_hdr(&M, 0x5151, RESP, 1, 3, 0, 1);
	mb_q(&M, "api.example.org", 28, 1);
	mb_u16(&M, 0xc00c);
	size_t at = mb_rr(&M, 5, 1, 300);
	size_t cname = M.n;
	mb_name_ptr(&M, "edge", 16);
	mb_rr_end(&M, at);
	mb_u16(&M, 0xc000 | (unsigned)cname);
	at = mb_rr(&M, 28, 1, 60);
	mb_bytes(&M, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\x10\x01", 16);
	mb_rr_end(&M, at);
	mb_u16(&M, 0xc000 | (unsigned)cname);
	at = mb_rr(&M, 1, 1, 60);
	mb_bytes(&M, "\xc0\x00\x02\x07", 4);
	mb_rr_end(&M, at);
	mb_u8(&M, 0);
	at = mb_rr(&M, 41, 1232, 0);
	mb_rr_end(&M, at);
	CHECK_EQ(parse(), MOD_OK);
	keep();
	for (int it = 0; it < 60000; it++) {
		if (it % 2) {
			/* random bytes behind a plausible header */
			M.n = 12 + rnd() % 300;
			for (size_t i = 0; i < M.n; i++)
				M.b[i] = (uint8_t)rnd();
			M.b[4] = 0;
			M.b[5] = (uint8_t)(rnd() % 4);
			M.b[6] = 0;
			M.b[7] = (uint8_t)(rnd() % 4);
		} else {
			/* a few flipped bytes in a valid response, maybe cut;
			 * one in nine has a HINFO, whose fields only ldns
			 * reads (the walk frames it by rdlength) */
			uint32_t b = rnd() % (uint32_t)(nbases + 1);
			M = b < (uint32_t)nbases ? bases[b] : keep_hinfo;
			for (int k = 1 + (int)(rnd() % 4); k > 0; k--)
				M.b[rnd() % M.n] = (uint8_t)rnd();
			if (rnd() % 4 == 0)
				M.n = rnd() % M.n;
		}
		int r = parse_flags(rnd() % 2 ? OBS_F_TCP : 0);
		if (r < 0 || r > MOD_MALFORMED)
			bad++;
		if (r == MOD_OK)
			nok++;
		if (strstr(OUT.reason, "rdata longer than its fields") ||
		    strstr(OUT.reason, "rdata shorter than its fields"))
			nmisfit++;
		if (OUT.info_len != strlen(OUT.info) || OUT.qname_len != strlen(OUT.qname))
			bad++;
		if (OUT.info_len) {
			json_t *j = json_object();
			if (dns_info_json(j, OUT.info, OUT.info_len, OBS_DNS_QUERY) != 0)
				bad++;
			json_decref(j);
		}
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(nbases, 8);
	CHECK(nok > 100);
	CHECK(nmisfit > 10);
}

int main(void)
{
	test_a();
	test_query();
	test_aaaa();
	test_names_rdata();
	test_mx();
	test_txt();
	test_null();
	test_srv_soa();
	test_svcb();
	test_caa_unknown();
	test_compression();
	test_pointer_chain();
	test_question_loose_pointer();
	test_pointer_loop();
	test_forward_pointer();
	test_header_pointer();
	test_long_label_name();
	test_truncated_everywhere();
	test_counts_lie();
	test_edns();
	test_weird_names();
	test_space_in_rdata_names();
	test_questions_flags();
	test_cap();
	test_many_rrs();
	test_rdata_beyond_descriptor();
	test_mnemonics();
	test_module_udp_short();
	test_module_tcp();
	test_module_tcp_hole();
	test_module_tcp_long();
	test_module_tcp_wide();
	test_module_tcp_unsure();
	test_module_tcp_claim();
	test_module_tcp_proxy();
	test_module_tcp_new_isn();
	test_random();
	CHECK_EQ(ok_diff, 0);
	return check_done();
}
