/*
 * test_metadata.c - the metadata_probe detector (analyzers/detect_metadata.h):
 * the host normaliser on every spelling of every endpoint and on the
 * negatives at its edges (near misses, out-of-range parts, overlong and
 * garbage input, escaped bytes), the helpers for ports, URIs, names that
 * spell addresses and metadata names, and then the module itself on hand-made
 * packets and observations, with a test emit that records every alert.
 * HTTP observations are made by the HTTP analyzer's own parser and record
 * writer (http_parse_head, http_head_record), so the detail record the
 * detector reads has the true layout.
 *
 * The rules are the built-in defaults (rules_default, the shipped metadata
 * list), copied into a struct with a sandbox section where a test needs one.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyzers/detect_metadata.h"
#include "../../analyzers/http.h"
#include "../../analyzers/module.h"
#include "../../sensor/flow.h"
#include "../../sensor/record.h"
#include "../../sensor/rules.h"
#include "../../sensor/text.h"
#include "check.h"

/* ---- the recording emit --------------------------------------------------- */

#include "alert_rec.h"

/* ---- the normaliser --------------------------------------------------------- */

/* Parse s; return the kind and the address as text ("" unless ADDR). */
static int host(const char *s, char *txt, size_t cap)
{
	uint8_t ipv = 0, a[16] = {0};
	char name[META_NAME_MAX];
	int k = meta_parse_host(s, strlen(s), &ipv, a, name, sizeof(name));

	txt[0] = '\0';
	if (k == META_HOST_ADDR)
		text_addr(txt, cap, ipv, a);
	else if (k == META_HOST_NAME)
		snprintf(txt, cap, "%s", name);
	return k;
}

#define HOST_IS(s, kind, want)                                                   \
	do {                                                                     \
		char t_[META_NAME_MAX];                                          \
		CHECK_EQ(host((s), t_, sizeof(t_)), (kind));                     \
		CHECK_STR(t_, (want));                                           \
	} while (0)

static void test_parse_ipv4_forms(void)
{
	static const char *const forms[] = {
		"169.254.169.254",
		"2852039166",                 /* decimal */
		"0xA9FEA9FE",                 /* hex */
		"0xa9fea9fe",
		"0XA9FEA9FE",
		"0251.0376.0251.0376",        /* octal */
		"00000000251.0376.0251.0376", /* octal with many zeros */
		"169.254.43518",              /* short forms */
		"169.16689662",
		"0xa9.254.0251.254",          /* mixed */
		"0xa9.0xfe.0xa9.0xfe",
		"0x0a9.0x0fe.0xa9.0xfe",
		"0xa9.0376.43518",
		"169.254.169.254.",           /* trailing dot */
		"169.254.169.254:80",         /* with a port */
		"169.254.169.254:",
		"2852039166:8080",
		"user:pass@169.254.169.254",  /* userinfo */
		"a@b@169.254.169.254:80",
		"%31%36%39.254.169.254",      /* percent-encoded */
		"%31%36%39%2e%32%35%34.169.254",
		"\\xef\\xbc\\x91\\xef\\xbc\\x96\\xef\\xbc\\x99.254.169.254", /* fullwidth digits */
		"169\\xe3\\x80\\x82" "254\\xe3\\x80\\x82" "169\\xe3\\x80\\x82" "254", /* ideographic stops */
		"\\xef\\xbc\\x90\\xef\\xbd\\x98a9fea9fe", /* fullwidth 0x */
		/* what else UTS 46 (WHATWG's URL parser, Node) folds to ASCII */
		"\\xe2\\x91\\xa0\\xe2\\x91\\xa5\\xe2\\x91\\xa8.\\xe2\\x91\\xa1\\xe2\\x91\\xa4\\xe2\\x91\\xa3.\\xe2\\x91\\xa0\\xe2\\x91\\xa5\\xe2\\x91\\xa8.\\xe2\\x91\\xa1\\xe2\\x91\\xa4\\xe2\\x91\\xa3", /* circled digits */
		"169.254.169.254\\xc2\\xad", /* a soft hyphen, deleted */
		"169.2\\xe2\\x80\\x8b54.169.254", /* a zero-width space, deleted */
		"\\xc2\\xb9\\xe2\\x81\\xb6\\xe2\\x81\\xb9.254.169.254", /* superscript digits */
		"\\xf0\\x9d\\x9f\\x8f\\xf0\\x9d\\x9f\\x94\\xf0\\x9d\\x9f\\x97.254.169.254", /* mathematical bold digits */
	};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char t[META_NAME_MAX];
		int k = host(forms[i], t, sizeof(t));
		if (k != META_HOST_ADDR || strcmp(t, "169.254.169.254") != 0)
			fprintf(stderr, "form %zu \"%s\": kind %d \"%s\"\n", i, forms[i], k, t);
		CHECK_EQ(k, META_HOST_ADDR);
		CHECK_STR(t, "169.254.169.254");
	}
	/* the decoded text is what was written, lowercase, without the rest */
	{
		uint8_t ipv, a[16];
		char name[META_NAME_MAX];
		CHECK_EQ(meta_parse_host("u@0xA9FEA9FE.:80", 16, &ipv, a, name, sizeof(name)),
			 META_HOST_ADDR);
		CHECK_STR(name, "0xa9fea9fe");
		CHECK_EQ(ipv, 4);
	}
	/* the last part fills what is left */
	HOST_IS("1", META_HOST_ADDR, "0.0.0.1");
	HOST_IS("127.1", META_HOST_ADDR, "127.0.0.1");
	HOST_IS("10.0.258", META_HOST_ADDR, "10.0.1.2");
	HOST_IS("0x7f.1", META_HOST_ADDR, "127.0.0.1");
	HOST_IS("4294967295", META_HOST_ADDR, "255.255.255.255");
	HOST_IS("0x", META_HOST_ADDR, "0.0.0.0");
}

static void test_parse_ipv6_forms(void)
{
	HOST_IS("[::ffff:169.254.169.254]", META_HOST_ADDR, "::ffff:169.254.169.254");
	HOST_IS("[::ffff:a9fe:a9fe]", META_HOST_ADDR, "::ffff:169.254.169.254");
	HOST_IS("[::FFFF:A9FE:A9FE]:80", META_HOST_ADDR, "::ffff:169.254.169.254");
	HOST_IS("[fd00:ec2::254]", META_HOST_ADDR, "fd00:ec2::254");
	HOST_IS("[fd00:ec2:0:0:0:0:0:254]:80", META_HOST_ADDR, "fd00:ec2::254");
	HOST_IS("[fe80::a9fe:a9fe%25eth0]", META_HOST_ADDR, "fe80::a9fe:a9fe");
	HOST_IS("[fe80::a9fe:a9fe%eth0]:80", META_HOST_ADDR, "fe80::a9fe:a9fe");
	HOST_IS("user@[fd00:ec2::23]:8080", META_HOST_ADDR, "fd00:ec2::23");
	HOST_IS("fd00:ec2::254", META_HOST_ADDR, "fd00:ec2::254"); /* bare */
	HOST_IS("fe80::a9fe:a9fe%eth0", META_HOST_ADDR, "fe80::a9fe:a9fe");
	HOST_IS("[64:ff9b::a9fe:a9fe]", META_HOST_ADDR, "64:ff9b::a9fe:a9fe");
}

static void test_parse_names(void)
{
	HOST_IS("METADATA.Google.Internal.", META_HOST_NAME, "metadata.google.internal");
	HOST_IS("metadata.google.internal:80", META_HOST_NAME, "metadata.google.internal");
	HOST_IS("metadata", META_HOST_NAME, "metadata");
	HOST_IS("x@metadata.goog", META_HOST_NAME, "metadata.goog");
	HOST_IS("example.com", META_HOST_NAME, "example.com");
	HOST_IS("1.2.3.foo", META_HOST_NAME, "1.2.3.foo");
	HOST_IS("0xfoo", META_HOST_NAME, "0xfoo");
	HOST_IS("\\xef\\xbd\\x8d\\xef\\xbd\\x85\\xef\\xbd\\x94\\xef\\xbd\\x81" "data.goog",
		META_HOST_NAME, "metadata.goog"); /* fullwidth letters */
	HOST_IS("\\xf0\\x9d\\x90\\xa6\\xf0\\x9d\\x90\\x9e\\xf0\\x9d\\x90\\xad\\xf0\\x9d\\x90\\x9a" "data.google.internal", META_HOST_NAME,
		"metadata.google.internal"); /* mathematical bold letters */
	HOST_IS("\\xe2\\x93\\x9c\\xe2\\x93\\x94\\xe2\\x93\\xa3\\xe2\\x93\\x90" "data.goog", META_HOST_NAME, "metadata.goog"); /* circled letters */
	HOST_IS("\\xe2\\x92\\x88\\xe2\\x92\\x8d\\xe2\\x92\\x90" "254", META_HOST_ADDR, "1.6.9.254"); /* digits with a full stop */
}

/*
 * meta_parse_host reads a plain host ([A-Za-z0-9._-] only) on a fast path.
 * The same host with one byte percent-encoded takes the general path
 * (unescape, fold_host, valid_name) and must read the same.
 */
static void test_parse_plain_path(void)
{
	static const char *const hosts[] = {
		"example.com", "EXAMPLE.Com.", "a", "A.", ".", "..", "a..b", "a.b..", ".a",
		"x_y-z.example", "-.-", "1.2.3.4", "1.2.3.4.", "0x10.0x20.1.2", "010.1", "a.0x1f",
		"a.0x1g", "abc.123", "169.254.169.254.nip.io", "a9fea9fe.nip.io", "0", "00.",
		"4294967295", "4294967296",
	};
	char label[70], host[300], enc[400];

	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]) + 6; i++) {
		const char *h = i < sizeof(hosts) / sizeof(hosts[0]) ? hosts[i] : host;
		size_t k = i - sizeof(hosts) / sizeof(hosts[0]);
		uint8_t ipv1 = 0, ipv2 = 0, a1[16] = {0}, a2[16] = {0};
		char n1[META_NAME_MAX], n2[META_NAME_MAX];
		int r1, r2;

		if (h == host) { /* labels of 63/64 bytes, names of 253..257 bytes */
			size_t want = k < 2 ? 63 + k : 251 + k;
			memset(label, 'a', 64);
			label[k < 2 ? 63 + k : 63] = '\0';
			host[0] = '\0';
			while (strlen(host) + strlen(label) + 1 < want)
				strcat(strcat(host, label), ".");
			while (strlen(host) < want)
				strcat(host, "b");
		}
		snprintf(enc, sizeof(enc), "%%%02X%s", (unsigned char)h[0], h + 1);
		r1 = meta_parse_host(h, strlen(h), &ipv1, a1, n1, sizeof(n1));
		r2 = meta_parse_host(enc, strlen(enc), &ipv2, a2, n2, sizeof(n2));
		CHECK_EQ(r1, r2);
		CHECK_STR(n1, n2);
		CHECK_EQ(ipv1, ipv2);
		CHECK(memcmp(a1, a2, 16) == 0);
	}
}

static void test_parse_negatives(void)
{
	char big[3000], label[80], name[300];

	HOST_IS("169.254.169.25", META_HOST_ADDR, "169.254.169.25");
	HOST_IS("10.0.0.1", META_HOST_ADDR, "10.0.0.1");
	HOST_IS("0xA9FEA9FF", META_HOST_ADDR, "169.254.169.255");
	HOST_IS("metadata.example.com", META_HOST_NAME, "metadata.example.com");
	HOST_IS("256.1.1.1", META_HOST_BAD, "");
	HOST_IS("1.256.1.1", META_HOST_BAD, "");
	HOST_IS("1.2.3.256", META_HOST_BAD, "");
	HOST_IS("1.2.65536", META_HOST_BAD, "");
	HOST_IS("1.2.3.4.5", META_HOST_BAD, "");
	HOST_IS("4294967296", META_HOST_BAD, "");
	HOST_IS("99999999999999999999999", META_HOST_BAD, "");
	HOST_IS("08.1.1.1", META_HOST_BAD, "");  /* 8 is no octal digit */
	HOST_IS("0x1g.1.1.1", META_HOST_BAD, "");
	HOST_IS("foo.1", META_HOST_BAD, "");     /* ends in a number, no address */
	HOST_IS("1..1", META_HOST_BAD, "");
	HOST_IS(".", META_HOST_BAD, "");
	HOST_IS("", META_HOST_BAD, "");
	HOST_IS("a..b", META_HOST_BAD, "");
	HOST_IS("exa mple.com", META_HOST_BAD, "");
	HOST_IS("169.254.169.254:http", META_HOST_BAD, "");
	HOST_IS("[::1", META_HOST_BAD, "");
	HOST_IS("[zz::1]", META_HOST_BAD, "");
	HOST_IS("[::1]x", META_HOST_BAD, "");
	HOST_IS("[169.254.169.254]", META_HOST_BAD, "");
	HOST_IS("user@", META_HOST_BAD, "");
	/* escaped bytes: controls, NUL, a stray backslash, invalid UTF-8 */
	HOST_IS("169.254.169.254\\x00", META_HOST_BAD, "");
	HOST_IS("\\x01\\x02\\x03", META_HOST_BAD, "");
	HOST_IS("169.254.169.254\\\\", META_HOST_BAD, "");
	HOST_IS("169\\.254.169.254", META_HOST_BAD, "");
	HOST_IS("\\xff\\xfe", META_HOST_BAD, "");
	HOST_IS("\\xe2\\x91", META_HOST_BAD, "");          /* a cut UTF-8 sequence */
	HOST_IS("\\xc0\\xb1.1.1.1", META_HOST_BAD, "");    /* an overlong "1" */
	HOST_IS("\\xe2\\x98\\x83.example", META_HOST_BAD, ""); /* a snowman: no ASCII */
	HOST_IS("169.254.169.254\\x", META_HOST_BAD, "");
	HOST_IS("%zz.254.169.254", META_HOST_BAD, "");
	/* too long: input, a label, a name */
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	HOST_IS(big, META_HOST_BAD, "");
	memset(label, 'a', sizeof(label) - 1);
	label[sizeof(label) - 1] = '\0';
	HOST_IS(label, META_HOST_BAD, "");
	for (size_t i = 0; i < sizeof(name) - 1; i++)
		name[i] = i % 10 == 9 ? '.' : 'a';
	name[sizeof(name) - 1] = '\0';
	HOST_IS(name, META_HOST_BAD, "");
	/* garbage: every byte value escaped, never a crash, never an endpoint */
	{
		struct rules *r = rules_default();
		char esc[8];
		for (int b = 0; b < 256; b++) {
			uint8_t ipv = 0, a[16] = {0};
			uint8_t raw = (uint8_t)b;
			text_escape(esc, sizeof(esc), &raw, 1, NULL);
			int k = meta_parse_host(esc, strlen(esc), &ipv, a, NULL, 0);
			CHECK(k != META_HOST_ADDR || !meta_is_endpoint(r, ipv, a));
		}
		rules_free(r);
	}
}

static void test_endpoints(void)
{
	static const char *const yes[] = {
		"169.254.169.254", "[fd00:ec2::254]", "169.254.170.2", "169.254.170.23",
		"[fd00:ec2::23]", "168.63.129.16", "100.100.100.200", "192.0.0.192",
		"[fe80::a9fe:a9fe]", "[::ffff:169.254.169.254]", "[::ffff:a9fe:a9fe]",
		"[::a9fe:a9fe]", "[64:ff9b::a9fe:a9fe]", "2852039166", "0xA9FEAA02",
		"0250.0077.0201.020", "100.6579400", "0xc0.0.0.0xc0",
		"[64:ff9b:1:a9fe:a9:fe00::]", /* RFC 8215's /48, RFC 6052's layout */
		"169.254.0.23",                /* Tencent Cloud */
	};
	static const char *const no[] = {
		"169.254.169.25", "169.254.169.255", "10.0.0.1", "0xA9FEA9FF", "[fe80::1]",
		"[::1]", "127.0.0.1", "[fd00:ec2::255]", "192.0.0.193",
		"[64:ff9b:1:a9fe:1a9:fe00::]", /* the u octet is not zero */
		"[64:ff9b:2:a9fe:a9:fe00::]",
	};
	struct rules *r = rules_default();

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		uint8_t ipv = 0, a[16] = {0};
		CHECK_EQ(meta_parse_host(yes[i], strlen(yes[i]), &ipv, a, NULL, 0), META_HOST_ADDR);
		CHECK(meta_is_endpoint(r, ipv, a));
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		uint8_t ipv = 0, a[16] = {0};
		CHECK_EQ(meta_parse_host(no[i], strlen(no[i]), &ipv, a, NULL, 0), META_HOST_ADDR);
		CHECK(!meta_is_endpoint(r, ipv, a));
	}
	rules_free(r);
}

static void test_port_and_uri(void)
{
	const char *auth, *path;
	size_t al;
	uint16_t dp;

	CHECK_EQ(meta_host_port("169.254.169.254:8080", 20), 8080);
	CHECK_EQ(meta_host_port("169.254.169.254", 15), 0);
	CHECK_EQ(meta_host_port("[::1]:443", 9), 443);
	CHECK_EQ(meta_host_port("[::1]", 5), 0);
	CHECK_EQ(meta_host_port("u:p@h:81", 8), 81);
	CHECK_EQ(meta_host_port("h:0", 3), 0);
	CHECK_EQ(meta_host_port("h:65536", 7), 0);
	CHECK_EQ(meta_host_port("fd00::1", 7), 0);

	CHECK_EQ(meta_uri_authority("http://169.254.169.254/latest/", 30, &auth, &al, &path, &dp), 1);
	CHECK_EQ(al, 15);
	CHECK(memcmp(auth, "169.254.169.254", 15) == 0);
	CHECK_STR(path, "/latest/");
	CHECK_EQ(dp, 80);
	CHECK_EQ(meta_uri_authority("HTTPS://x:8443?q", 16, &auth, &al, &path, &dp), 1);
	CHECK_EQ(al, 6);
	CHECK_EQ(dp, 443);
	CHECK_STR(path, "?q");
	CHECK_EQ(meta_uri_authority("gopher://h", 10, &auth, &al, &path, &dp), 1);
	CHECK_EQ(dp, 0);
	CHECK_EQ(meta_uri_authority("/latest/meta-data/", 18, &auth, &al, &path, &dp), 0);
	CHECK_EQ(meta_uri_authority("*", 1, &auth, &al, &path, &dp), 0);
	CHECK_EQ(meta_uri_authority("169.254.169.254:80", 18, &auth, &al, &path, &dp), 0);
	CHECK_EQ(meta_uri_authority("//169.254.169.254/", 18, &auth, &al, &path, &dp), 0);
}

static int spells(const char *name, const char *want)
{
	struct meta_enc e[META_ENC_MAX];
	size_t n = meta_name_addrs(name, strlen(name), e, META_ENC_MAX);

	for (size_t i = 0; i < n; i++) {
		char t[INET6_ADDRSTRLEN];
		text_addr(t, sizeof(t), e[i].ipv, e[i].addr);
		if (strcmp(t, want) == 0)
			return 1;
	}
	return 0;
}

static void test_name_addrs(void)
{
	struct meta_enc e[META_ENC_MAX];

	CHECK(spells("169.254.169.254.nip.io", "169.254.169.254"));
	CHECK(spells("app.169.254.169.254.nip.io", "169.254.169.254"));
	CHECK(spells("169-254-169-254.sslip.io", "169.254.169.254"));
	CHECK(spells("app-169-254-169-254.nip.io", "169.254.169.254"));
	CHECK(spells("a9fea9fe.nip.io", "169.254.169.254"));
	CHECK(spells("magic-a9fea9fe.nip.io", "169.254.169.254"));
	CHECK(spells("make-169.254.169.254-rr.1u.ms", "169.254.169.254"));
	CHECK(spells("a9fea9fe.7f000001.rbndr.us", "169.254.169.254"));
	CHECK(spells("a9fea9fe.7f000001.rbndr.us", "127.0.0.1"));
	CHECK(spells("fe80--a9fe-a9fe.sslip.io", "fe80::a9fe:a9fe"));
	CHECK(spells("fd00-ec2--254.sslip.io", "fd00:ec2::254"));
	CHECK(spells("--1.sslip.io", "::1"));
	CHECK(spells("10.0.0.1.nip.io", "10.0.0.1"));
	CHECK_EQ(meta_name_addrs("254.169.254.169.in-addr.arpa", 28, e, META_ENC_MAX), 0);
	CHECK_EQ(meta_name_addrs("www.example.com", 15, e, META_ENC_MAX), 0);
	CHECK_EQ(meta_name_addrs("1-2-3.example.com", 17, e, META_ENC_MAX), 0);
	CHECK_EQ(meta_name_addrs("256.1.1.1.nip.io", 16, e, META_ENC_MAX), 0);
	CHECK_EQ(meta_name_addrs("a9fea9f.nip.io", 14, e, META_ENC_MAX), 0);
	CHECK_EQ(meta_name_addrs("x", 1, e, 0), 0);

	CHECK(meta_wildcard_zone("10.0.0.1.nip.io", 15));
	CHECK(meta_wildcard_zone("x.SSLIP.IO.", 11));
	CHECK(!meta_wildcard_zone("nip.io", 6));
	CHECK(!meta_wildcard_zone("xnip.io", 7));
	CHECK(!meta_wildcard_zone("nip.io.example.com", 18));
}

static void test_name_match(void)
{
	struct rules *r = rules_default();
	static const char *const meta[] = {
		"metadata.google.internal", "metadata.goog", "metadata", "instance-data",
		"instance-data.ec2.internal", "METADATA.GOOGLE.INTERNAL",
		"metadata.google.internal.default.svc.cluster.local",
		"metadata.google.internal.c.my-project.internal", "metadata.goog.",
		"instance-data.us-west-2.compute.internal", "Instance-Data.eu-central-1.compute.internal.",
		"instance-data.compute.internal", "metadata.ec2.internal",
	};
	static const char *const orch[] = {
		"kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
		"kubernetes.default.svc.default.svc.cluster.local",
	};
	static const char *const none[] = {
		"metadata.example.com", "xmetadata", "metadata.goog.evil.com", "google.internal",
		"instance-data.example.net", "metadata.default.svc.cluster.local", "kubernetes",
		"kubernetes.default.svc.example.com", "instance-data.compute.internal.example.com",
		"instance-datax.us-west-2.compute.internal", "instance-data.corp.local",
		"xinstance-data.us-west-2.compute.internal", "metadata.example.internal",
		"instance-data.internal", "instance-data.xcompute.internal",
	};

	for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
		CHECK_EQ(meta_name_match(r, meta[i], strlen(meta[i])), META_NAME_METADATA);
	for (size_t i = 0; i < sizeof(orch) / sizeof(orch[0]); i++)
		CHECK_EQ(meta_name_match(r, orch[i], strlen(orch[i])), META_NAME_ORCHESTRATOR);
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		CHECK_EQ(meta_name_match(r, none[i], strlen(none[i])), META_NAME_NONE);

	CHECK(meta_name_internal(r, "db", 2, 0));
	CHECK(meta_name_internal(r, "db.cluster.local", 16, 0));
	CHECK(meta_name_internal(r, "ip-10-0-0-1.ec2.internal.", 25, 0));
	CHECK(meta_name_internal(r, "1.0.0.10.in-addr.arpa", 21, 0));
	CHECK(meta_name_internal(r, "printer.home.arpa", 17, 0));
	CHECK(!meta_name_internal(r, "evil.example.com", 16, 0));
	CHECK(!meta_name_internal(r, "internal.example.com", 20, 0));
	CHECK(!meta_name_internal(r, "a.cloudfront.net", 16, 0));
	CHECK(meta_name_internal(r, "a.cloudfront.net", 16, 1));
	rules_free(r);
}

/* ---- the module ------------------------------------------------------------- */

static struct rules *RD;  /* rules_default() */
static struct rules RS;   /* the same with a sandbox section */
static struct rules_net SANDBOX[1], RESOLVER[1];
static struct flow FLOWS[8];

static void *start(const struct rules *r)
{
	struct module_env env = {.rules = r};
	void *st = NULL;

	CHECK_EQ(detect_metadata_module.init(&env, &st), 0);
	CHECK(st != NULL);
	R.n = 0;
	return st;
}

static void addr_of(const char *s, uint8_t *ipv, uint8_t a[16])
{
	memset(a, 0, 16);
	if (inet_pton(AF_INET, s, a) == 1) {
		*ipv = 4;
	} else {
		*ipv = 6;
		if (inet_pton(AF_INET6, s, a) != 1)
			abort();
	}
}

static struct pkt mkpkt(const char *src, const char *dst, int proto, uint16_t sport,
			uint16_t dport, uint8_t flags, int flow)
{
	struct pkt p;
	uint8_t ipv;

	memset(&p, 0, sizeof(p));
	addr_of(src, &ipv, p.src);
	addr_of(dst, &p.ipv, p.dst);
	p.proto = (uint8_t)proto;
	p.sport = sport;
	p.dport = dport;
	p.tcp_flags = flags;
	p.ts_us = 1700000000000000ull;
	if (flow) {
		FLOWS[flow].id = (uint64_t)flow;
		p.flow = &FLOWS[flow];
	}
	return p;
}

static void test_packets(void)
{
	static const struct {
		const char *dst, *subject;
	} ep[] = {
		{"169.254.169.254", "169.254.169.254:80"}, {"fd00:ec2::254", "[fd00:ec2::254]:80"},
		{"169.254.170.2", "169.254.170.2:80"},     {"169.254.170.23", "169.254.170.23:80"},
		{"fd00:ec2::23", "[fd00:ec2::23]:80"},     {"168.63.129.16", "168.63.129.16:80"},
		{"100.100.100.200", "100.100.100.200:80"}, {"192.0.0.192", "192.0.0.192:80"},
		{"fe80::a9fe:a9fe", "[fe80::a9fe:a9fe]:80"},
	};
	void *st = start(RD);
	struct pkt p;

	for (size_t i = 0; i < sizeof(ep) / sizeof(ep[0]); i++) {
		const char *src = strchr(ep[i].dst, ':') ? "fd00:99::10" : "10.99.0.10";
		R.n = 0;
		p = mkpkt(src, ep[i].dst, IPPROTO_TCP, 40000, 80, TH_SYN, 0);
		CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_OK);
		CHECK_EQ(R.n, 1);
		CHECK_STR(R.a[0].class, "metadata_probe");
		CHECK_STR(R.a[0].subject, ep[i].subject);
		CHECK_EQ(R.a[0].severity, 4);
		CHECK(R.a[0].score >= 90 && R.a[0].score <= 100);
		CHECK_STR(R.a[0].src, src);
		CHECK_STR(R.a[0].outcome, ""); /* from the flow */
	}
	/* UDP and ICMP are probes too; ICMP has no port */
	R.n = 0;
	p = mkpkt("10.99.0.10", "169.254.169.254", IPPROTO_UDP, 5353, 53, 0, 1);
	detect_metadata_module.on_packet(st, &p, &E);
	p = mkpkt("10.99.0.10", "169.254.169.254", IPPROTO_ICMP, 0, 0, 0, 2);
	detect_metadata_module.on_packet(st, &p, &E);
	CHECK_EQ(R.n, 2);
	CHECK_STR(R.a[0].subject, "169.254.169.254:53");
	CHECK(strstr(R.a[0].detail, "UDP datagram") != NULL);
	CHECK_STR(R.a[1].subject, "169.254.169.254");
	CHECK(strstr(R.a[1].detail, "ICMP") != NULL);
	/* one flow counts once: more datagrams, SYN retransmissions */
	R.n = 0;
	p = mkpkt("10.99.0.10", "169.254.169.254", IPPROTO_UDP, 5353, 53, 0, 1);
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_OK);
	p = mkpkt("10.99.0.10", "169.254.169.254", IPPROTO_TCP, 40001, 80, TH_SYN, 3);
	detect_metadata_module.on_packet(st, &p, &E);
	detect_metadata_module.on_packet(st, &p, &E);
	CHECK_EQ(R.n, 1);
	/* not a probe: SYN-ACK from the endpoint, traffic elsewhere, near misses */
	R.n = 0;
	p = mkpkt("10.99.0.10", "169.254.169.254", IPPROTO_TCP, 40000, 80, TH_SYN | TH_ACK, 0);
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_NOT_MINE);
	p = mkpkt("169.254.169.254", "10.99.0.10", IPPROTO_UDP, 53, 5353, 0, 0);
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_NOT_MINE);
	p = mkpkt("10.99.0.10", "169.254.169.253", IPPROTO_TCP, 40000, 80, TH_SYN, 0);
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_NOT_MINE);
	p = mkpkt("10.99.0.10", "93.184.216.34", IPPROTO_TCP, 40000, 443, TH_SYN, 0);
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_NOT_MINE);
	/* kubelet ports count only from a sandbox */
	p = mkpkt("10.99.0.10", "10.0.0.5", IPPROTO_TCP, 40000, 10250, TH_SYN, 0);
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_NOT_MINE);
	CHECK_EQ(R.n, 0);
	detect_metadata_module.fini(st);

	st = start(&RS);
	p = mkpkt("10.99.0.10", "10.0.0.5", IPPROTO_TCP, 40000, 10250, TH_SYN, 0);
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_OK);
	p = mkpkt("10.99.0.10", "10.0.0.5", IPPROTO_TCP, 40000, 10255, TH_SYN, 0);
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_OK);
	CHECK_EQ(R.n, 2);
	CHECK_STR(R.a[0].subject, "10.0.0.5:10250");
	CHECK(strstr(R.a[0].detail, "kubelet") != NULL);
	CHECK_STR(R.a[1].subject, "10.0.0.5:10255");
	R.n = 0;
	p = mkpkt("10.1.0.10", "10.0.0.5", IPPROTO_TCP, 40000, 10250, TH_SYN, 0); /* not sandbox */
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_NOT_MINE);
	p = mkpkt("10.99.0.10", "10.0.0.5", IPPROTO_TCP, 40000, 10251, TH_SYN, 0);
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_NOT_MINE);
	p = mkpkt("10.99.0.10", "10.0.0.5", IPPROTO_UDP, 40000, 10250, 0, 0);
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_NOT_MINE);
	/* DNS to an allowed resolver that is also an endpoint (Azure) */
	p = mkpkt("10.99.0.10", "168.63.129.16", IPPROTO_UDP, 5353, 53, 0, 0);
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_NOT_MINE);
	CHECK_EQ(R.n, 0);
	p = mkpkt("10.99.0.10", "168.63.129.16", IPPROTO_TCP, 40000, 80, TH_SYN, 0);
	CHECK_EQ(detect_metadata_module.on_packet(st, &p, &E), MOD_OK);
	CHECK_EQ(R.n, 1);
	detect_metadata_module.fini(st);
	detect_metadata_module.fini(NULL);
}

static int dns_query(void *st, const struct pkt *p, const char *qname)
{
	struct obs o = {
		.kind = OBS_DNS_QUERY,
		.pkt = p,
		.name = qname,
		.name_len = strlen(qname),
		.type = 1,
		.info = "",
	};
	return detect_metadata_module.on_obs(st, &o, &E);
}

static void test_dns(void)
{
	static const char *const yes[] = {
		"metadata.google.internal", "metadata.goog", "metadata", "instance-data",
		"instance-data.ec2.internal", "METADATA.google.internal",
		"169.254.169.254.nip.io", "169-254-169-254.sslip.io", "a9fea9fe.nip.io",
		"fd00-ec2--254.sslip.io", "169.254.169.254", "0xa9fea9fe",
		"metadata.google.internal.default.svc.cluster.local",
	};
	static const char *const no[] = {
		"www.example.com", "metadata.example.com", "254.169.254.169.in-addr.arpa",
		"10.0.0.1.nip.io", "kubernetes.default.svc", "169.254.169.253.nip.io", "",
		"bad\\x00name",
	};
	void *st = start(RD);
	struct pkt p = mkpkt("10.99.0.10", "10.99.0.53", IPPROTO_UDP, 5353, 53, 0, 0);

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		R.n = 0;
		CHECK_EQ(dns_query(st, &p, yes[i]), MOD_OK);
		CHECK_EQ(R.n, 1);
		CHECK_EQ(R.a[0].severity, 4);
		CHECK_STR(R.a[0].evidence, yes[i]);
	}
	R.n = 0;
	dns_query(st, &p, "METADATA.google.internal");
	CHECK_STR(R.a[0].subject, "metadata.google.internal");
	R.n = 0;
	dns_query(st, &p, "a9fea9fe.nip.io");
	CHECK_STR(R.a[0].subject, "a9fea9fe.nip.io");
	CHECK(strstr(R.a[0].detail, "169.254.169.254") != NULL);
	R.n = 0;
	dns_query(st, &p, "0xa9fea9fe");
	CHECK_STR(R.a[0].subject, "169.254.169.254");
	R.n = 0;
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK_EQ(dns_query(st, &p, no[i]), MOD_NOT_MINE);
	CHECK_EQ(R.n, 0);
	detect_metadata_module.fini(st);

	/* orchestrator names only from the sandbox */
	st = start(&RS);
	CHECK_EQ(dns_query(st, &p, "kubernetes.default.svc"), MOD_OK);
	CHECK_EQ(dns_query(st, &p, "kubernetes.default.svc.cluster.local"), MOD_OK);
	CHECK_EQ(R.n, 2);
	CHECK(strstr(R.a[0].detail, "orchestrator") != NULL);
	R.n = 0;
	p = mkpkt("10.1.0.10", "10.99.0.53", IPPROTO_UDP, 5353, 53, 0, 0);
	CHECK_EQ(dns_query(st, &p, "kubernetes.default.svc"), MOD_NOT_MINE);
	CHECK_EQ(R.n, 0);
	detect_metadata_module.fini(st);

	/* The quiet-name cache: a name judged quiet stays quiet, a hit is never
	 * cached, and an orchestrator name refused for its asker (outside the
	 * sandbox) is still found when the sandbox asks. Several rounds, with
	 * 9000 quiet filler names between them to force collisions. */
	st = start(&RS);
	struct pkt out = mkpkt("10.1.0.10", "10.99.0.53", IPPROTO_UDP, 5353, 53, 0, 0);
	struct pkt in = mkpkt("10.99.0.10", "10.99.0.53", IPPROTO_UDP, 5353, 53, 0, 0);
	for (int round = 0; round < 3; round++) {
		R.n = 0;
		for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
			CHECK_EQ(dns_query(st, &in, yes[i]), MOD_OK);
		CHECK_EQ(R.n, (int)(sizeof(yes) / sizeof(yes[0])));
		R.n = 0;
		for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
			if (strcmp(no[i], "kubernetes.default.svc") != 0)
				CHECK_EQ(dns_query(st, &in, no[i]), MOD_NOT_MINE);
		CHECK_EQ(dns_query(st, &out, "kubernetes.default.svc"), MOD_NOT_MINE);
		CHECK_EQ(R.n, 0);
		CHECK_EQ(dns_query(st, &in, "kubernetes.default.svc"), MOD_OK);
		CHECK_EQ(R.n, 1);
		char filler[64];
		int loud = 0;
		for (int i = 0; i < 9000; i++) {
			snprintf(filler, sizeof(filler), "host-%d.example-%d.com", i, round);
			loud += dns_query(st, &in, filler) != MOD_NOT_MINE;
		}
		CHECK_EQ(loud, 0);
	}
	detect_metadata_module.fini(st);
}

/* One HTTP request, parsed and recorded by the HTTP analyzer's own code. */
static struct http_head H;
static char INFO[HTTP_INFO_MAX];

static int http(void *st, const struct pkt *p, const char *req)
{
	struct rec r;

	CHECK_EQ(http_parse_head((const uint8_t *)req, strlen(req), 0, &H), MOD_OK);
	rec_init(&r, INFO, sizeof(INFO));
	http_head_record(&H, NULL, &r);
	struct obs o = {
		.kind = OBS_HTTP_REQUEST,
		.pkt = p,
		.name = H.host,
		.name_len = H.host_len,
		.aux = H.uri,
		.aux_len = H.uri_len,
		.size = (uint32_t)H.head_len,
		.info = INFO,
		.info_len = r.len,
	};
	return detect_metadata_module.on_obs(st, &o, &E);
}

static void test_http(void)
{
	void *st = start(RD);
	struct pkt proxy = mkpkt("10.99.0.10", "10.99.0.2", IPPROTO_TCP, 40000, 8080, TH_ACK, 0);
	struct pkt direct = mkpkt("10.99.0.10", "169.254.169.254", IPPROTO_TCP, 40000, 80, TH_ACK, 0);
	struct pkt web = mkpkt("10.99.0.10", "93.184.216.34", IPPROTO_TCP, 40000, 80, TH_ACK, 0);

	/* direct, plain */
	CHECK_EQ(http(st, &direct, "GET /latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n"),
		 MOD_OK);
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "169.254.169.254:80");
	CHECK_EQ(R.a[0].severity, 4);
	CHECK_STR(R.a[0].detail, "HTTP GET to metadata endpoint 169.254.169.254");
	CHECK_STR(R.a[0].evidence, "Host 169.254.169.254");
	/* direct, with the Host spelled otherwise: the row of the SYN, the spelling shown */
	R.n = 0;
	http(st, &direct, "GET / HTTP/1.1\r\nHost: 0251.0376.0251.0376:80\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "169.254.169.254:80");
	CHECK(strstr(R.a[0].detail, "(written 0251.0376.0251.0376:80)") != NULL);
	CHECK_STR(R.a[0].evidence, "Host 0251.0376.0251.0376:80");
	/* direct, with an innocent Host: still the endpoint */
	R.n = 0;
	http(st, &direct, "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "169.254.169.254:80");
	CHECK_STR(R.a[0].evidence, "Host example.com");
	/* Host spelled in hex, through the proxy */
	R.n = 0;
	http(st, &proxy, "GET / HTTP/1.1\r\nHost: 0xA9FEA9FE\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "169.254.169.254:80");
	CHECK_STR(R.a[0].detail, "HTTP GET to metadata endpoint 169.254.169.254 (written 0xA9FEA9FE)");
	CHECK_STR(R.a[0].evidence, "Host 0xA9FEA9FE");
	CHECK_EQ(R.a[0].score, 95);
	/* absolute URI to a proxy, decimal, credentials path: critical */
	R.n = 0;
	http(st, &proxy,
	     "GET http://2852039166/latest/meta-data/iam/security-credentials/role HTTP/1.1\r\n"
	     "Host: 2852039166\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_EQ(R.a[0].severity, 5);
	CHECK_EQ(R.a[0].score, 100);
	CHECK_STR(R.a[0].subject, "169.254.169.254:80");
	CHECK(strstr(R.a[0].detail, "via absolute URI") != NULL);
	CHECK(strstr(R.a[0].detail, "for credentials") != NULL);
	/* absolute URI with userinfo and port, innocent Host */
	R.n = 0;
	http(st, &proxy,
	     "GET http://user:pw@[::ffff:a9fe:a9fe]:8080/ HTTP/1.1\r\nHost: example.com\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "169.254.169.254:8080");
	/* CONNECT */
	R.n = 0;
	http(st, &proxy, "CONNECT 0251.0376.0251.0376:443 HTTP/1.1\r\nHost: 0251.0376.0251.0376:443\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "169.254.169.254:443");
	CHECK(strstr(R.a[0].detail, "CONNECT") != NULL);
	R.n = 0;
	http(st, &proxy, "CONNECT [fd00:ec2::254]:443 HTTP/1.1\r\nHost: [fd00:ec2::254]:443\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "[fd00:ec2::254]:443");
	R.n = 0;
	http(st, &proxy, "CONNECT metadata.google.internal:443 HTTP/1.1\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "metadata.google.internal");
	/* parser differentials: first '@', backslash before '@' */
	R.n = 0;
	http(st, &proxy, "GET http://a@169.254.169.254@example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n");
	CHECK_EQ(R.n, 1);
	R.n = 0;
	http(st, &proxy, "GET http://169.254.169.254\\@example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n");
	CHECK_EQ(R.n, 1);
	/* names: metadata, nip.io */
	R.n = 0;
	http(st, &proxy, "GET http://metadata.google.internal./computeMetadata/v1/ HTTP/1.1\r\n"
			 "Host: metadata.google.internal\r\nMetadata-Flavor: Google\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "metadata.google.internal");
	CHECK(strstr(R.a[0].detail, "Metadata-Flavor") != NULL);
	R.n = 0;
	http(st, &proxy, "GET / HTTP/1.1\r\nHost: 169-254-169-254.nip.io\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "169-254-169-254.nip.io");
	/* metadata headers alone: SSRF through a relay */
	R.n = 0;
	http(st, &web, "GET /computeMetadata/v1/instance/service-accounts/default/token HTTP/1.1\r\n"
		       "Host: example.com\r\nMetadata-Flavor: Google\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "example.com");
	CHECK_EQ(R.a[0].severity, 5);
	R.n = 0;
	http(st, &web, "GET /metadata/instance?api-version=2021-02-01 HTTP/1.1\r\nHost: relay.example\r\n"
		       "Metadata: true\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_EQ(R.a[0].severity, 4);
	CHECK(strstr(R.a[0].detail, "Metadata") != NULL);
	R.n = 0;
	http(st, &web, "GET / HTTP/1.1\r\nHost: relay.example\r\nX-aws-ec2-metadata-token: AQAE\r\n\r\n");
	CHECK_EQ(R.n, 1);
	R.n = 0;
	/* an empty TTL field asks for a token all the same (IMDS answers 400) */
	http(st, &web, "PUT /latest/api/token HTTP/1.1\r\nHost: relay2.example\r\n"
		       "X-aws-ec2-metadata-token-ttl-seconds:\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK(R.n && strstr(R.a[0].detail, "X-aws-ec2-metadata-token-ttl-seconds") != NULL);
	R.n = 0;
	/* IMDSv2 token and credentials paths, with path tricks */
	http(st, &direct, "PUT /latest/api/token HTTP/1.1\r\nHost: 169.254.169.254\r\n"
			  "X-aws-ec2-metadata-token-ttl-seconds: 21600\r\n\r\n");
	CHECK_EQ(R.n, 1);
	CHECK_EQ(R.a[0].severity, 5);
	R.n = 0;
	http(st, &direct, "GET /latest/api/token HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n");
	CHECK_EQ(R.a[0].severity, 4);
	R.n = 0;
	http(st, &direct, "GET //latest/./meta-data/x/../iam/%73ecurity-credentials/ HTTP/1.1\r\n"
			  "Host: 169.254.169.254\r\n\r\n");
	CHECK_EQ(R.a[0].severity, 5);
	R.n = 0;
	http(st, &direct, "GET /metadata/identity/oauth2/token?resource=x HTTP/1.1\r\nHost: 169.254.169.254\r\n"
			  "Metadata: true\r\n\r\n");
	CHECK_EQ(R.a[0].severity, 5);
	R.n = 0;
	http(st, &direct, "GET /latest/meta-data/iam/security-credentialsX HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n");
	CHECK_EQ(R.a[0].severity, 4);
	R.n = 0;
	struct pkt ecs = mkpkt("10.99.0.10", "169.254.170.2", IPPROTO_TCP, 40000, 80, TH_ACK, 0);
	http(st, &ecs, "GET /v2/credentials/1234-abcd HTTP/1.1\r\nHost: 169.254.170.2\r\n\r\n");
	CHECK_EQ(R.a[0].severity, 5);
	CHECK_STR(R.a[0].subject, "169.254.170.2:80");
	/* benign */
	R.n = 0;
	CHECK_EQ(http(st, &web, "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"), MOD_NOT_MINE);
	CHECK_EQ(http(st, &proxy, "GET http://example.com/latest/meta-data/iam/security-credentials HTTP/1.1\r\n"
				  "Host: example.com\r\n\r\n"),
		 MOD_NOT_MINE);
	CHECK_EQ(http(st, &proxy, "GET http://169.254.169.25/ HTTP/1.1\r\nHost: 169.254.169.25\r\n\r\n"),
		 MOD_NOT_MINE);
	CHECK_EQ(http(st, &proxy, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
		 MOD_NOT_MINE);
	CHECK_EQ(http(st, &proxy, "GET http://metadata.example.com/ HTTP/1.1\r\nHost: metadata.example.com\r\n\r\n"),
		 MOD_NOT_MINE);
	CHECK_EQ(http(st, &web, "GET / HTTP/1.1\r\nHost: 0xA9FEA9FF\r\n\r\n"), MOD_NOT_MINE);
	CHECK_EQ(http(st, &web, "GET / HTTP/1.1\r\nHost: 256.254.169.254\r\n\r\n"), MOD_NOT_MINE);
	CHECK_EQ(R.n, 0);
	/* an observation with no detail record and no target is not mine */
	{
		struct obs o = {.kind = OBS_HTTP_REQUEST, .pkt = &web};
		CHECK_EQ(detect_metadata_module.on_obs(st, &o, &E), MOD_NOT_MINE);
	}
	detect_metadata_module.fini(st);
}

static void test_tls(void)
{
	void *st = start(RD);
	struct pkt p = mkpkt("10.99.0.10", "10.99.0.2", IPPROTO_TCP, 40000, 443, TH_ACK, 0);
	struct obs o = {.kind = OBS_TLS_CLIENT_HELLO, .pkt = &p, .info = ""};
	static const char *const yes[] = {"metadata.google.internal", "metadata.goog",
					  "a9fea9fe.nip.io", "169.254.169.254"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		R.n = 0;
		o.name = yes[i];
		o.name_len = strlen(yes[i]);
		CHECK_EQ(detect_metadata_module.on_obs(st, &o, &E), MOD_OK);
		CHECK_EQ(R.n, 1);
		CHECK(strstr(R.a[0].detail, "SNI") != NULL);
	}
	CHECK_STR(R.a[0].subject, "169.254.169.254:443");
	R.n = 0;
	o.name = "example.com";
	o.name_len = 11;
	CHECK_EQ(detect_metadata_module.on_obs(st, &o, &E), MOD_NOT_MINE);
	o.name = "";
	o.name_len = 0;
	CHECK_EQ(detect_metadata_module.on_obs(st, &o, &E), MOD_NOT_MINE);
	o.kind = OBS_ICMP;
	CHECK_EQ(detect_metadata_module.on_obs(st, &o, &E), MOD_NOT_MINE);
	CHECK_EQ(R.n, 0);
	detect_metadata_module.fini(st);
}

/* A fixed-seed smoke loop over random spellings (run it under ASan/UBSan). */
static void test_smoke(void)
{
	static const char alphabet[] = "0123456789abcdefxX.:[]@%\\/-?#AFgz \x7f";
	void *st = start(RD);
	struct pkt p = mkpkt("10.99.0.10", "10.99.0.2", IPPROTO_TCP, 40000, 8080, TH_ACK, 0);
	char s[400], name[META_NAME_MAX];
	struct meta_enc enc[META_ENC_MAX];
	unsigned seed = 12345;
	int ok = 1;

	for (int it = 0; it < 20000; it++) {
		size_t n;
		seed = seed * 1103515245u + 12345u;
		n = (seed >> 16) % sizeof(s);
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			s[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		uint8_t ipv = 0, a[16];
		const char *auth, *path;
		size_t al;
		uint16_t dp;
		int k = meta_parse_host(s, n, &ipv, a, name, sizeof(name));
		if (k < META_HOST_BAD || k > META_HOST_NAME || strlen(name) >= sizeof(name))
			ok = 0;
		if (k == META_HOST_ADDR && ipv != 4 && ipv != 6)
			ok = 0;
		(void)meta_host_port(s, n);
		if (meta_uri_authority(s, n, &auth, &al, &path, &dp) &&
		    (auth < s || auth + al > s + n || path > s + n))
			ok = 0;
		if (meta_name_addrs(s, n, enc, META_ENC_MAX) > META_ENC_MAX)
			ok = 0;
		struct obs o = {.kind = OBS_HTTP_REQUEST, .pkt = &p, .name = s, .name_len = n,
				.aux = s, .aux_len = n, .info = ""};
		detect_metadata_module.on_obs(st, &o, &E);
		o.kind = OBS_DNS_QUERY;
		detect_metadata_module.on_obs(st, &o, &E);
		R.n = 0;
	}
	CHECK(ok);
	detect_metadata_module.fini(st);
}

int main(void)
{
	RD = rules_default();
	if (!RD)
		return 1;
	RS = *RD;
	addr_of("10.99.0.0", &SANDBOX[0].ipv, SANDBOX[0].addr);
	SANDBOX[0].prefix = 24;
	addr_of("168.63.129.16", &RESOLVER[0].ipv, RESOLVER[0].addr);
	RESOLVER[0].prefix = 32;
	RS.has_sandbox = 1;
	RS.sandbox.v = SANDBOX;
	RS.sandbox.n = 1;
	RS.resolvers.v = RESOLVER;
	RS.resolvers.n = 1;

	test_parse_ipv4_forms();
	test_parse_ipv6_forms();
	test_parse_names();
	test_parse_plain_path();
	test_parse_negatives();
	test_endpoints();
	test_port_and_uri();
	test_name_addrs();
	test_name_match();
	test_packets();
	test_dns();
	test_http();
	test_tls();
	test_smoke();
	rules_free(RD);
	return check_done();
}
