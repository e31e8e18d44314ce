/*
 * test_rebind.c - the dns_rebind detector (analyzers/detect_rebind.h). The
 * DNS observations are real: each test builds a DNS message on the wire and
 * runs the DNS analyzer's parser (dns_parse_message) over it, so the detail
 * record the detector reads is exactly what the analyzer writes. A test emit
 * records every alert.
 *
 * Covered: every class of address (metadata, link-local, loopback,
 * unspecified, private, IPv4-mapped and NAT64 forms), A, AAAA and HTTPS
 * ipv4hint answers, CNAME chains from a public name into an internal one,
 * internal and trusted names that may resolve privately, public answers,
 * messages without a question, and question names that spell addresses
 * (nip.io, sslip.io, ...). Every sound response is judged twice, with the
 * wire records dns.c gives (obs.rrs) and from the detail record alone, to
 * the same verdict and alerts, also over 20,000 random responses.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyzers/detect_rebind.h"
#include "../../analyzers/dns.h"
#include "../../analyzers/module.h"
#include "../../sensor/rules.h"
#include "../../sensor/text.h"
#include "check.h"

/* ---- the recording emit --------------------------------------------------- */

#include "alert_rec.h"

/* ---- DNS messages on the wire ----------------------------------------------- */

struct mb {
	uint8_t b[4096];
	size_t n;
};

static struct mb M;
static struct dns_out OUT;

static void u8(unsigned v)
{
	M.b[M.n++] = (uint8_t)v;
}

static void u16(unsigned v)
{
	u8(v >> 8);
	u8(v & 0xff);
}

static void u32(uint32_t v)
{
	u16(v >> 16);
	u16(v & 0xffff);
}

static void wname(const char *s)
{
	while (*s) {
		const char *d = strchr(s, '.');
		size_t l = d ? (size_t)(d - s) : strlen(s);
		u8((unsigned)l);
		memcpy(M.b + M.n, s, l);
		M.n += l;
		s += l;
		if (*s == '.')
			s++;
	}
	u8(0);
}

/* Start a response (or a query) with one question and an answers. */
static void msg(int response, const char *qname, unsigned qtype, unsigned an)
{
	M.n = 0;
	u16(0x1234);
	u16(response ? 0x8180 : 0x0100);
	u16(qname ? 1 : 0);
	u16(an);
	u16(0);
	u16(0);
	if (qname) {
		wname(qname);
		u16(qtype);
		u16(1);
	}
}

static unsigned RR_CLASS = 1; /* of the RRs rr() writes */

/* One answer RR; owner NULL means a pointer to the question name. */
static void rr(const char *owner, unsigned type, const void *rdata, size_t rdlen)
{
	if (owner) {
		wname(owner);
	} else {
		u16(0xc00c);
	}
	u16(type);
	u16(RR_CLASS);
	u32(300);
	u16((unsigned)rdlen);
	memcpy(M.b + M.n, rdata, rdlen);
	M.n += rdlen;
}

static void rr_a(const char *owner, const char *addr)
{
	uint8_t a[4];

	if (inet_pton(AF_INET, addr, a) != 1)
		abort();
	rr(owner, 1, a, 4);
}

static void rr_aaaa(const char *owner, const char *addr)
{
	uint8_t a[16];

	if (inet_pton(AF_INET6, addr, a) != 1)
		abort();
	rr(owner, 28, a, 16);
}

static void rr_cname(const char *owner, const char *target)
{
	struct mb save = M;
	size_t start;

	M.n = 0;
	wname(target);
	start = M.n;
	uint8_t w[300];
	memcpy(w, M.b, start);
	M = save;
	rr(owner, 5, w, start);
}

/* ---- running the detector --------------------------------------------------- */

static struct rules *RD;
static void *ST;
static struct pkt RESP, QUERY;

static void mkpkt(struct pkt *p, const char *src, const char *dst, uint16_t sport,
		  uint16_t dport, int dir)
{
	memset(p, 0, sizeof(*p));
	p->ipv = 4;
	inet_pton(AF_INET, src, p->src);
	inet_pton(AF_INET, dst, p->dst);
	p->proto = IPPROTO_UDP;
	p->sport = sport;
	p->dport = dport;
	p->dir = dir;
	p->ts_us = 1700000000000000ull;
}

static int same_got(const struct got *a, const struct got *b)
{
	return strcmp(a->class, b->class) == 0 && strcmp(a->subject, b->subject) == 0 &&
	       strcmp(a->detail, b->detail) == 0 && strcmp(a->evidence, b->evidence) == 0 &&
	       strcmp(a->outcome, b->outcome) == 0 && strcmp(a->src, b->src) == 0 &&
	       a->severity == b->severity && a->score == b->score;
}

static unsigned n_quick; /* responses handed over with their wire records */

/*
 * Hand the observation of the message in OUT to the detector, as dns.c
 * does: with the wire records when the message is sound (obs.rrs, which
 * lets a response with nothing of concern be ruled out at once). A
 * response goes to the detector a second time without them (the detail
 * record alone), and both must give the same result and the same alerts.
 */
static int judge(void)
{
	struct obs o = {
		.kind = OUT.qr ? OBS_DNS_ANSWER : OBS_DNS_QUERY,
		.pkt = OUT.qr ? &RESP : &QUERY,
		.name = OUT.qname,
		.name_len = OUT.qname_len,
		.type = OUT.qtype,
		.code = OUT.rcode,
		.size = (uint32_t)M.n,
		.flags = OUT.flags,
		.info = OUT.info,
		.info_len = OUT.info_len,
	};
	static struct got first[MAX_ALERTS];

	if (OUT.n_rrs && !(OUT.flags & OBS_F_MALFORMED)) {
		o.rrs = OUT.seen;
		o.n_rrs = OUT.n_rrs;
	}
	R.n = 0;
	int r = detect_rebind_module.on_obs(ST, &o, &E);
	if (o.kind != OBS_DNS_ANSWER || !o.rrs)
		return r;
	n_quick++;
	int n = R.n;
	memcpy(first, R.a, sizeof(first[0]) * (size_t)n);
	o.rrs = NULL;
	o.n_rrs = 0;
	R.n = 0;
	CHECK_EQ(detect_rebind_module.on_obs(ST, &o, &E), r);
	CHECK_EQ(R.n, n);
	for (int i = 0; i < n && i < R.n; i++)
		CHECK(same_got(&first[i], &R.a[i]));
	return r;
}

/* Parse M with the DNS analyzer and hand the observation to the detector. */
static int run(void)
{
	int r = dns_parse_message(M.b, M.n, 0, &OUT);

	CHECK_EQ(r, MOD_OK);
	return judge();
}

/* A response for qname with one A or AAAA answer. */
static int answer(const char *qname, const char *addr)
{
	int v6 = strchr(addr, ':') != NULL;

	msg(1, qname, v6 ? 28 : 1, 1);
	if (v6)
		rr_aaaa(NULL, addr);
	else
		rr_a(NULL, addr);
	return run();
}

static void test_classes(void)
{
	static const struct {
		const char *addr;
		int cls;
	} t[] = {
		{"169.254.169.254", REBIND_METADATA}, {"169.254.170.2", REBIND_METADATA},
		{"168.63.129.16", REBIND_METADATA},   {"100.100.100.200", REBIND_METADATA},
		{"192.0.0.192", REBIND_METADATA},     {"fd00:ec2::254", REBIND_METADATA},
		{"fe80::a9fe:a9fe", REBIND_METADATA}, {"::ffff:169.254.169.254", REBIND_METADATA},
		{"64:ff9b::a9fe:a9fe", REBIND_METADATA},
		{"169.254.1.1", REBIND_LINKLOCAL},    {"fe80::1", REBIND_LINKLOCAL},
		{"febf::1", REBIND_LINKLOCAL},        {"::ffff:169.254.1.1", REBIND_LINKLOCAL},
		{"127.0.0.1", REBIND_LOOPBACK},       {"127.255.255.254", REBIND_LOOPBACK},
		{"::1", REBIND_LOOPBACK},             {"::ffff:127.0.0.1", REBIND_LOOPBACK},
		{"0.0.0.0", REBIND_UNSPEC},           {"::", REBIND_UNSPEC},
		{"10.0.0.1", REBIND_PRIVATE},         {"10.255.255.255", REBIND_PRIVATE},
		{"172.16.0.1", REBIND_PRIVATE},       {"172.31.255.255", REBIND_PRIVATE},
		{"192.168.1.1", REBIND_PRIVATE},      {"100.64.0.1", REBIND_PRIVATE},
		{"100.127.255.255", REBIND_PRIVATE},  {"fc00::1", REBIND_PRIVATE},
		{"fd12:3456::1", REBIND_PRIVATE},     {"::ffff:10.0.0.1", REBIND_PRIVATE},
		{"fec0::1", REBIND_PRIVATE},
		{"93.184.216.34", REBIND_NONE},       {"172.15.255.255", REBIND_NONE},
		{"172.32.0.1", REBIND_NONE},          {"100.63.255.255", REBIND_NONE},
		{"100.128.0.1", REBIND_NONE},         {"169.253.255.255", REBIND_NONE},
		{"11.0.0.1", REBIND_NONE},            {"0.0.0.1", REBIND_NONE},
		{"2606:2800:220:1:248:1893:25c8:1946", REBIND_NONE}, {"fe00::1", REBIND_NONE},
		{"::2", REBIND_NONE},                 {"192.167.1.1", REBIND_NONE},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t a[16] = {0};
		int ipv = strchr(t[i].addr, ':') ? 6 : 4;
		inet_pton(ipv == 6 ? AF_INET6 : AF_INET, t[i].addr, a);
		int c = rebind_addr_class(RD, ipv, a);
		if (c != t[i].cls)
			fprintf(stderr, "%s: class %d, expected %d\n", t[i].addr, c, t[i].cls);
		CHECK_EQ(c, t[i].cls);
	}
	CHECK_EQ(rebind_addr_class(RD, 5, (const uint8_t *)"xxxx"), REBIND_NONE);
	CHECK_EQ(rebind_addr_class(RD, 4, NULL), REBIND_NONE);
	CHECK_STR(rebind_class_name(REBIND_METADATA), "metadata");
	CHECK_STR(rebind_class_name(REBIND_PRIVATE), "private");
	CHECK_STR(rebind_class_name(REBIND_NONE), "");
}

static void test_answers(void)
{
	static const struct {
		const char *addr;
		int severity;
		const char *what;
	} t[] = {
		{"169.254.169.254", 4, "metadata"}, {"fd00:ec2::254", 4, "metadata"},
		{"::ffff:169.254.169.254", 4, "metadata"}, {"169.254.7.7", 4, "link-local"},
		{"fe80::1", 4, "link-local"},       {"127.0.0.1", 4, "loopback"},
		{"::1", 4, "loopback"},             {"10.1.2.3", 3, "private"},
		{"172.16.0.1", 3, "private"},       {"192.168.0.10", 3, "private"},
		{"100.64.0.1", 3, "private"},       {"fd00::1", 3, "private"},
		{"0.0.0.0", 3, "unspecified"},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK_EQ(answer("evil.example.com", t[i].addr), MOD_OK);
		CHECK_EQ(R.n, 1);
		CHECK_STR(R.a[0].class, "dns_rebind");
		CHECK_STR(R.a[0].subject, "evil.example.com");
		CHECK_EQ(R.a[0].severity, t[i].severity);
		CHECK(strstr(R.a[0].detail, t[i].what) != NULL);
		CHECK(strstr(R.a[0].detail, t[i].addr) != NULL ||
		      strchr(t[i].addr, ':') != NULL);
		CHECK_STR(R.a[0].outcome, "answered");
		CHECK_STR(R.a[0].src, "10.99.0.10"); /* the client, not the resolver */
	}
	answer("evil.example.com", "169.254.169.254");
	CHECK_STR(R.a[0].detail,
		  "public name evil.example.com resolves to 169.254.169.254 (metadata)");
	CHECK_STR(R.a[0].evidence, "evil.example.com A 169.254.169.254");
	CHECK_EQ(R.a[0].score, 95);
	/* nip.io-style names that resolve as they spell */
	CHECK_EQ(answer("169-254-169-254.nip.io", "169.254.169.254"), MOD_OK);
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "169-254-169-254.nip.io");
	/* subject is lowercase, whatever the case on the wire */
	answer("EVIL.Example.COM", "127.0.0.1");
	CHECK_STR(R.a[0].subject, "evil.example.com");
	/* public answers, internal names, trusted zones */
	CHECK_EQ(answer("www.example.com", "93.184.216.34"), MOD_NOT_MINE);
	CHECK_EQ(answer("www.example.com", "2606:2800:220:1:248:1893:25c8:1946"), MOD_NOT_MINE);
	CHECK_EQ(answer("db.cluster.local", "10.0.0.5"), MOD_NOT_MINE);
	CHECK_EQ(answer("kubernetes.default.svc.cluster.local", "10.96.0.1"), MOD_NOT_MINE);
	CHECK_EQ(answer("metadata.google.internal", "169.254.169.254"), MOD_NOT_MINE);
	CHECK_EQ(answer("instance-data.ec2.internal", "169.254.169.254"), MOD_NOT_MINE);
	CHECK_EQ(answer("ip-10-0-0-1.ec2.internal", "10.0.0.1"), MOD_NOT_MINE);
	CHECK_EQ(answer("myhost", "192.168.1.5"), MOD_NOT_MINE);
	CHECK_EQ(answer("localhost", "127.0.0.1"), MOD_NOT_MINE);
	CHECK_EQ(answer("printer.home.arpa", "192.168.1.9"), MOD_NOT_MINE);
	CHECK_EQ(answer("nas.lan", "192.168.1.2"), MOD_NOT_MINE);
	CHECK_EQ(answer("1.2.3.4.sophosxl.net", "127.0.0.1"), MOD_NOT_MINE); /* trusted */
	CHECK_EQ(R.n, 0);
	/* a name under a reverse zone is answered by whoever holds the
	 * addresses: an address answer there is judged (home.arpa aside) */
	CHECK_EQ(answer("x.113.0.203.in-addr.arpa", "127.0.0.1"), MOD_OK);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(answer("a.8.b.d.0.1.0.0.2.IP6.ARPA.", "169.254.169.254"), MOD_OK);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(answer("printer.home.arpa.", "192.168.1.9"), MOD_NOT_MINE);
	CHECK_EQ(R.n, 0);
	/* ... but a trusted zone does not excuse a metadata answer */
	CHECK_EQ(answer("x.cloudfront.net", "169.254.169.254"), MOD_OK);
	CHECK_EQ(R.n, 1);
}

static void test_shapes(void)
{
	uint8_t hint[64];
	size_t n = 0;

	/* a public name CNAMEs into an internal one that the resolver answers */
	msg(1, "www.evil.example", 1, 2);
	rr_cname(NULL, "metadata.google.internal");
	rr_a("metadata.google.internal", "169.254.169.254");
	CHECK_EQ(run(), MOD_OK);
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "www.evil.example");
	CHECK(strstr(R.a[0].detail, "via metadata.google.internal") != NULL);
	CHECK_STR(R.a[0].evidence, "metadata.google.internal A 169.254.169.254");
	/* several answers: the worst wins, one alert per message */
	msg(1, "multi.example.net", 1, 3);
	rr_a(NULL, "93.184.216.34");
	rr_a(NULL, "10.0.0.1");
	rr_a(NULL, "127.0.0.1");
	CHECK_EQ(run(), MOD_OK);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(R.a[0].severity, 4);
	CHECK(strstr(R.a[0].detail, "127.0.0.1 (loopback), and more") != NULL);
	/* only A/AAAA/SVCB/HTTPS data are addresses */
	msg(1, "txt.example.net", 16, 1);
	rr(NULL, 16, "\x0a" "10.0.0.1xx", 11);
	CHECK_EQ(run(), MOD_NOT_MINE);
	/* HTTPS ipv4hint */
	hint[n++] = 0, hint[n++] = 1; /* priority */
	hint[n++] = 0;                /* target "." */
	hint[n++] = 0, hint[n++] = 4; /* ipv4hint */
	hint[n++] = 0, hint[n++] = 8;
	memcpy(hint + n, "\x5d\xb8\xd8\x22\xa9\xfe\xa9\xfe", 8);
	n += 8;
	msg(1, "hint.example.org", 65, 1);
	rr(NULL, 65, hint, n);
	CHECK_EQ(run(), MOD_OK);
	CHECK_EQ(R.n, 1);
	CHECK(strstr(R.a[0].evidence, "ipv4hint 169.254.169.254") != NULL);
	/* a target name whose label reads " ipv4hint=...": a name's space in
	 * rdata text is \x20, so the label can neither stand for a hint (no
	 * alert for 10.0.0.1 here) nor hide the real one after it */
	n = 0;
	hint[n++] = 0, hint[n++] = 1;
	hint[n++] = 20;
	memcpy(hint + n, "x ipv4hint=10.0.0.1 ", 20);
	n += 20;
	hint[n++] = 0;
	hint[n++] = 0, hint[n++] = 4, hint[n++] = 0, hint[n++] = 4;
	memcpy(hint + n, "\x5d\xb8\xd8\x22", 4); /* 93.184.216.34 */
	n += 4;
	msg(1, "decoy.example.org", 65, 1);
	rr(NULL, 65, hint, n);
	CHECK_EQ(run(), MOD_NOT_MINE);
	CHECK_EQ(R.n, 0);
	memcpy(hint + n - 4, "\xa9\xfe\xa9\xfe", 4); /* 169.254.169.254 */
	msg(1, "decoy.example.org", 65, 1);
	rr(NULL, 65, hint, n);
	CHECK_EQ(run(), MOD_OK);
	CHECK_EQ(R.n, 1);
	CHECK(R.n == 1 && strstr(R.a[0].evidence, "ipv4hint 169.254.169.254") != NULL);
	/* no question: the owner decides */
	msg(1, NULL, 0, 1);
	rr_a("evil.example.com", "10.0.0.1");
	CHECK_EQ(run(), MOD_OK);
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "evil.example.com");
	msg(1, NULL, 0, 1);
	rr_a("db.internal", "10.0.0.1");
	CHECK_EQ(run(), MOD_NOT_MINE);
	/* an empty answer */
	msg(1, "nx.example.com", 1, 0);
	CHECK_EQ(run(), MOD_NOT_MINE);
	/* an observation without a record */
	{
		struct obs o = {.kind = OBS_DNS_ANSWER, .pkt = &RESP, .name = "x.example", .name_len = 9};
		CHECK_EQ(detect_rebind_module.on_obs(ST, &o, &E), MOD_NOT_MINE);
		o.kind = OBS_HTTP_REQUEST;
		CHECK_EQ(detect_rebind_module.on_obs(ST, &o, &E), MOD_NOT_MINE);
	}
}

/* A response whose detail record is written by hand (not by dns.c). */
static int hand(const char *info)
{
	struct obs o = {
		.kind = OBS_DNS_ANSWER,
		.pkt = &RESP,
		.name = "evil.example.com",
		.name_len = 16,
		.info = info,
		.info_len = strlen(info),
	};
	R.n = 0;
	return detect_rebind_module.on_obs(ST, &o, &E);
}

/*
 * on_answer cuts the record itself and reads addresses without inet_pton
 * where it can: every spelling must be judged as inet_pton reads it, and
 * records cut as rec_split would cut them.
 */
static void test_hand_records(void)
{
	static const char *const v4[] = {
		"10.0.0.1", "010.0.0.1", "10.0.0.01", "10.0.0.1.", "10.0.0", "10.0.0.256",
		"10..0.1", ".10.0.0.1", "10.0.0.1 ", "0.0.0.0", "127.0.0.1", "10.0.0.1x", "1e1.0.0.1",
		"10.0.0.255", "00.0.0.0",
	};
	static const char *const v6[] = {
		"fd00::1", "FD00::1", "fd00:0:0:0:0:0:0:1", "fd00::1:", "fd00:::1", "::ffff:10.0.0.1",
		"fd00::1::2", "fd00:0:0:0:0:0:0:0:1", "fd000::1", "::1", "::", "fd00:0:0:0:0:0:0::",
		"::fd00:0:0:0:0:0:1", ":fd00::1", "fd00:0:0:0:0:0:1", "fe80::1%eth0", "fd00::g",
		"::ffff:0a00:0001", "0:0:0:0:0:0:0:1", "fd00:0000:0000::0001",
	};
	static const struct {
		const char *rec;
		int hit;
	} shapes[] = {
		{"AN\x1fx.example\x1f" "1\x1f" "1\x1f" "300", 0},           /* five fields */
		{"AN\x1fx.example\x1f" "1\x1f" "1\x1f" "300\x1f", 0},       /* empty last */
		{"AN\x1fx.example\x1f" "1\x1f" "01\x1f" "300\x1f" "10.0.0.1", 1},
		{"AN\x1fx.example\x1f" "00001\x1f" "1\x1f" "300\x1f" "10.0.0.1", 1},
		{"AN\x1fx.example\x1f" "000001\x1f" "1\x1f" "300\x1f" "10.0.0.1", 0},
		{"AN\x1fx.example\x1f" "1\x1f" "3\x1f" "300\x1f" "10.0.0.1", 0},
		{"AN\x1fx.example\x1f" "1\x1f" "1\x1f" "300\x1f" "10.0.0.1\x1f" "more", 1},
		{"AN\x1fx.example\x1f" "1\x1f" "1\x1f\x1f" "10.0.0.1", 1},  /* empty TTL */
		{"ANX\x1fx.example\x1f" "1\x1f" "1\x1f" "300\x1f" "10.0.0.1", 0},
		{"NS\x1fx.example\x1f" "1\x1f" "1\x1f" "300\x1f" "10.0.0.1", 0},
		{"AN", 0},
		{"", 0},
		{"\x1e\x1e" "AN\x1fx.example\x1f" "1\x1f" "1\x1f" "300\x1f" "10.0.0.1", 1},
		{"AN\x1fx.example\x1f" "1\x1f" "1\x1f" "300\x1f" "93.184.216.34\x1e"
		 "AN\x1fx.example\x1f" "1\x1f" "1\x1f" "300\x1f" "10.0.0.1\x1e", 1},
		{"AN\x1fx.example\x1f" "1\x1f" "1\x1f" "300\x1f" "10.0.0.1\x1e\x1e", 1},
		{"AN\x1fx.example\x1f" "5\x1f" "1\x1f" "300\x1f" "10.0.0.1", 0}, /* CNAME */
	};
	char info[256];
	uint8_t a[16];

	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		snprintf(info, sizeof(info), "hdr\x1e" "AN\x1fx.example\x1f" "1\x1f" "1\x1f"
			 "300\x1f%s\x1e", v4[i]);
		CHECK_EQ(hand(info), inet_pton(AF_INET, v4[i], a) == 1 ? MOD_OK : MOD_NOT_MINE);
	}
	for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		int ok = inet_pton(AF_INET6, v6[i], a) == 1;
		snprintf(info, sizeof(info), "AN\x1fx.example\x1f" "28\x1f" "1\x1f" "300\x1f%s", v6[i]);
		CHECK_EQ(hand(info), ok && rebind_addr_class(RD, 6, a) != REBIND_NONE ? MOD_OK
										 : MOD_NOT_MINE);
		if (ok && R.n == 1)
			CHECK(strstr(R.a[0].evidence, v6[i]) != NULL);
	}
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		CHECK_EQ(hand(shapes[i].rec), shapes[i].hit ? MOD_OK : MOD_NOT_MINE);
}

static int question(const char *qname)
{
	msg(0, qname, 1, 0);
	return run();
}

static void test_questions_once(void)
{
	static const char *const meta[] = {
		"169.254.169.254.nip.io", "169-254-169-254.sslip.io", "a9fea9fe.nip.io",
		"app.169.254.169.254.xip.io", "magic-a9fea9fe.nip.io", "fe80--a9fe-a9fe.sslip.io",
		"a9fea9fe.example.com", /* a metadata address counts under any zone */
		"make-169.254.169.254-rr.1u.ms", "7f000001.a9fea9fe.rbndr.us",
	};

	for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++) {
		CHECK_EQ(question(meta[i]), MOD_OK);
		CHECK_EQ(R.n, 1);
		CHECK_STR(R.a[0].class, "dns_rebind");
		CHECK_STR(R.a[0].subject, meta[i]);
		CHECK_EQ(R.a[0].severity, 4);
		CHECK(strstr(R.a[0].detail, "(metadata)") != NULL);
		CHECK_STR(R.a[0].outcome, "");
		CHECK_STR(R.a[0].src, "10.99.0.10");
	}
	CHECK_EQ(question("10.0.0.1.nip.io"), MOD_OK);
	CHECK_EQ(R.a[0].severity, 3);
	CHECK_EQ(question("127-0-0-1.sslip.io"), MOD_OK);
	CHECK_EQ(R.a[0].severity, 4);
	CHECK_EQ(question("--1.sslip.io"), MOD_OK);
	CHECK_EQ(R.a[0].severity, 4);
	/* not judged: no address, a public one, private outside the services */
	CHECK_EQ(question("www.example.com"), MOD_NOT_MINE);
	CHECK_EQ(question("93.184.216.34.nip.io"), MOD_NOT_MINE);
	CHECK_EQ(question("ip-10-0-0-1.example.net"), MOD_NOT_MINE);
	CHECK_EQ(question("ec2-54-1-2-3.compute-1.amazonaws.com"), MOD_NOT_MINE);
	CHECK_EQ(question("254.169.254.169.in-addr.arpa"), MOD_NOT_MINE);
	CHECK_EQ(question("169-254-169-254.svc.cluster.local"), MOD_NOT_MINE);
	CHECK_EQ(question("deadbeef.cdn.example"), MOD_NOT_MINE);
	CHECK_EQ(R.n, 0);
}

/* The same questions three times, with 9000 harmless ones between the
 * rounds: the quiet-question cache answers only for what it was told was
 * harmless, whether hit, missed or collided. */
static void test_questions(void)
{
	char name[64];

	for (int round = 0; round < 3; round++) {
		test_questions_once();
		int loud = 0;
		for (int i = 0; i < 9000; i++) {
			snprintf(name, sizeof(name), "h%d.example-%d.com", i, round);
			loud += question(name) != MOD_NOT_MINE;
		}
		CHECK_EQ(loud, 0);
	}
}

/* A random response: answer, authority and additional records of the
 * types and classes on_answer tells apart, with addresses of every class
 * of concern and of none. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static void random_response(void)
{
	static const char *const qnames[] = {"www.example.com", "metadata.google.internal",
					     "printer.corp", "a.nip.io", "cdn.example.net"};
	static const char *const owners[] = {NULL, "www.example.com", "x.example.org",
					     "metadata.google.internal"};
	static const char *const v4[] = {"93.184.216.34", "10.1.2.3", "127.0.0.1",
					 "169.254.169.254", "0.0.0.0", "100.64.0.1",
					 "192.168.1.1", "8.8.8.8", "169.254.10.1"};
	static const char *const v6[] = {"2606:2800:220:1::1", "::1", "fe80::1", "fd00::1",
					 "::ffff:10.0.0.1", "64:ff9b::a00:1", "fd00:ec2::254",
					 "::", "2a00:1450::1"};
	unsigned n[3] = {rnd(6), rnd(3), rnd(3)};

	msg(1, rnd(8) ? qnames[rnd(5)] : NULL, rnd(2) ? 1 : 28, n[0]);
	M.b[8] = 0, M.b[9] = (uint8_t)n[1];
	M.b[10] = 0, M.b[11] = (uint8_t)n[2];
	for (unsigned sec = 0; sec < 3; sec++) {
		for (unsigned i = 0; i < n[sec]; i++) {
			const char *owner = owners[rnd(4)];
			RR_CLASS = rnd(8) ? 1 : 3; /* now and then CH: not judged */
			switch (rnd(6)) {
			case 0:
			case 1:
				rr_a(owner, v4[rnd(9)]);
				break;
			case 2:
				rr_aaaa(owner, v6[rnd(9)]);
				break;
			case 3:
				rr_cname(owner, qnames[rnd(5)]);
				break;
			case 4: { /* HTTPS or SVCB: priority 1, target ".", ipv4hint */
				uint8_t d[11] = {0, 1, 0, 0, 4, 0, 4};
				if (inet_pton(AF_INET, v4[rnd(9)], d + 7) != 1)
					abort();
				rr(owner, rnd(2) ? 65 : 64, d, sizeof(d));
				break;
			}
			default: /* TXT */
				rr(owner, 16, "\003abc", 4);
				break;
			}
		}
	}
	RR_CLASS = 1;
}

/* The wire records and the detail record give the same verdicts, over
 * random responses (every class of address, owners that are and are not
 * the question, answers in each section, no question at all). */
static void test_quick_way(void)
{
	unsigned before = n_quick, raised = 0;

	for (int i = 0; i < 20000; i++) {
		random_response();
		(void)dns_parse_message(M.b, M.n, 0, &OUT);
		if (judge() == MOD_OK)
			raised++;
	}
	/* most went the quick way, and both verdicts are well represented */
	CHECK(n_quick - before > 15000);
	CHECK(raised > 2000 && raised < 18000);
}

int main(void)
{
	struct module_env env;

	RD = rules_default();
	if (!RD)
		return 1;
	env.rules = RD;
	env.cfg = NULL;
	env.flows = NULL;
	CHECK_EQ(detect_rebind_module.init(&env, &ST), 0);
	/* the resolver answers the client: dir 1 */
	mkpkt(&RESP, "10.99.0.53", "10.99.0.10", 53, 5353, 1);
	mkpkt(&QUERY, "10.99.0.10", "10.99.0.53", 5353, 53, 0);

	test_classes();
	test_answers();
	test_shapes();
	test_hand_records();
	test_questions();
	test_quick_way();

	detect_rebind_module.fini(ST);
	detect_rebind_module.fini(NULL);
	rules_free(RD);
	return check_done();
}
