/*
 * test_rules.c - the rules file: every key, every error with its exact
 * message and line, rules/default.yaml equal to rules_default(), the
 * fixtures of tests/rules/ (each bad-*.yaml says on its first line what it
 * must print), and the matching helpers (CIDR and port edges, IPv6,
 * IPv4-mapped addresses, dot-boundary and wildcard names).
 *
 * Files are found from this source file's path (meson runs the test in the
 * build directory, and compiles with a path relative to it), else from
 * EW_SRCROOT or the working directory and its parents.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sensor/rules.h"

static char tmpdir[256];
static char srcroot[512];

static void find_srcroot(void)
{
	const char *f = __FILE__;
	const char *tail = strstr(f, "tests/unit/test_rules.c");
	size_t n = tail ? (size_t)(tail - f) : 0;

	if (n == 0 && tail)
		snprintf(srcroot, sizeof(srcroot), ".");
	else if (tail)
		snprintf(srcroot, sizeof(srcroot), "%.*s", (int)(n - 1), f);
	else
		snprintf(srcroot, sizeof(srcroot), "..");
	/* Run by hand from elsewhere: EW_SRCROOT, or the usual places. */
	if (getenv("EW_SRCROOT")) {
		snprintf(srcroot, sizeof(srcroot), "%s", getenv("EW_SRCROOT"));
	} else {
		static const char *const tries[] = {".", "..", "../.."};
		char p[600];
		snprintf(p, sizeof(p), "%s/rules/default.yaml", srcroot);
		for (size_t i = 0; access(p, R_OK) != 0 && i < 3; i++) {
			snprintf(srcroot, sizeof(srcroot), "%s", tries[i]);
			snprintf(p, sizeof(p), "%s/rules/default.yaml", srcroot);
		}
	}
}

static const char *write_tmp(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	return path;
}

/* Load text; return the rules (NULL on error, message in err). */
static struct rules *load_text(const char *text, char *err, size_t errlen)
{
	struct rules *r = NULL;
	const char *p = write_tmp("t.yaml", text);

	if (rules_load(p, &r, err, errlen) < 0)
		return NULL;
	return r;
}

/* The text must fail with "PATH:" + want. */
static void expect_err_at(const char *text, const char *want, int line)
{
	char err[1024], full[1024];
	struct rules *r = load_text(text, err, sizeof(err));

	snprintf(full, sizeof(full), "%s/t.yaml:%s", tmpdir, want);
	if (r) {
		check_fail++;
		fprintf(stderr, "%s:%d: loaded, expected error \"%s\"\n", __FILE__, line, want);
		rules_free(r);
		return;
	}
	if (strcmp(err, full) != 0) {
		check_fail++;
		fprintf(stderr, "%s:%d: error is \"%s\"\n%*sexpected \"%s\"\n", __FILE__, line, err,
			(int)strlen(__FILE__) + 8, "", full);
		return;
	}
	check_pass++;
}
#define EXPECT_ERR(text, want) expect_err_at(text, want, __LINE__)

static int net_eq(const struct rules_netlist *a, const struct rules_netlist *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].ipv != b->v[i].ipv || a->v[i].prefix != b->v[i].prefix ||
		    a->v[i].port != b->v[i].port || memcmp(a->v[i].addr, b->v[i].addr, 16))
			return 0;
	return 1;
}

static int str_eq(const struct rules_strlist *a, const struct rules_strlist *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return 0;
	return 1;
}

static int rules_eq(const struct rules *a, const struct rules *b)
{
	return a->has_sandbox == b->has_sandbox && net_eq(&a->sandbox, &b->sandbox) &&
	       net_eq(&a->proxies, &b->proxies) && net_eq(&a->resolvers, &b->resolvers) &&
	       net_eq(&a->destinations, &b->destinations) && str_eq(&a->domains, &b->domains) &&
	       a->allow_ipv6 == b->allow_ipv6 && a->allow_dns_over_tcp == b->allow_dns_over_tcp &&
	       str_eq(&a->trusted_domains, &b->trusted_domains) &&
	       net_eq(&a->metadata_addrs, &b->metadata_addrs) &&
	       str_eq(&a->metadata_names, &b->metadata_names) &&
	       memcmp(&a->t, &b->t, sizeof(a->t)) == 0;
}

static const char *fmt_net(const struct rules_net *n)
{
	static char buf[80];
	rules_net_format(n, buf, sizeof(buf));
	return buf;
}

static int has_name(const struct rules_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return 1;
	return 0;
}

static int has_net(const struct rules_netlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(fmt_net(&l->v[i]), s))
			return 1;
	return 0;
}

/* ---- defaults ------------------------------------------------------------ */

static void test_default(void)
{
	struct rules *d = rules_default(), *f = NULL;
	char path[600], err[512];
	static const char *const meta_addrs[] = {
		"169.254.169.254", "fd00:ec2::254", "169.254.170.2", "169.254.170.23",
		"fd00:ec2::23",	   "168.63.129.16", "100.100.100.200", "192.0.0.192",
		"fe80::a9fe:a9fe"};
	static const char *const meta_names[] = {
		"metadata.google.internal", "metadata.goog", "metadata", "instance-data",
		"instance-data.ec2.internal", "kubernetes.default.svc"};

	CHECK(d != NULL);
	if (!d)
		return;
	CHECK_EQ(d->has_sandbox, 0);
	CHECK_EQ(d->sandbox.n, 0);
	CHECK_EQ(d->proxies.n + d->resolvers.n + d->destinations.n + d->domains.n, 0);
	CHECK_EQ(d->allow_ipv6, 0);
	CHECK_EQ(d->allow_dns_over_tcp, 0);
	for (size_t i = 0; i < sizeof(meta_addrs) / sizeof(meta_addrs[0]); i++) {
		if (!has_net(&d->metadata_addrs, meta_addrs[i])) {
			check_fail++;
			fprintf(stderr, "default metadata lacks %s\n", meta_addrs[i]);
		} else {
			check_pass++;
		}
	}
	for (size_t i = 0; i < sizeof(meta_names) / sizeof(meta_names[0]); i++)
		CHECK(has_name(&d->metadata_names, meta_names[i]));
	CHECK_EQ(d->metadata_addrs.n, 10);
	CHECK(has_name(&d->metadata_names, "metadata.tencentyun.com"));
	CHECK(has_name(&d->trusted_domains, "cloudfront.net"));
	CHECK(has_name(&d->trusted_domains, "internal"));
	CHECK(has_name(&d->trusted_domains, "local"));
	CHECK_EQ(d->t.tunnel_min_queries, 8);
	CHECK_EQ(d->t.tunnel_window_s, 60);
	CHECK_EQ(d->t.tunnel_score, 70);
	CHECK_EQ(d->t.tunnel_budget_hour, 4096);
	CHECK_EQ(d->t.tunnel_budget_day, 32768);
	CHECK_EQ(d->t.icmp_payload_max, 128);
	CHECK_EQ(d->t.icmp_entropy_x100, 600);
	CHECK_EQ(d->t.icmp_volume_bytes, 8192);
	CHECK_EQ(d->t.icmp_distinct_data, 8);
	CHECK_EQ(d->t.icmp_distinct_data_hour, 60);
	CHECK_EQ(d->t.suppress_s, 300);
	CHECK(d->path != NULL);

	/* rules/default.yaml is the same thing, key for key. */
	snprintf(path, sizeof(path), "%s/rules/default.yaml", srcroot);
	CHECK_EQ(rules_load(path, &f, err, sizeof(err)), 0);
	if (!f) {
		fprintf(stderr, "%s\n", err);
	} else {
		CHECK(rules_eq(d, f));
		CHECK_STR(f->path, path);
	}
	/* The default metadata names and zones are all valid names. */
	for (size_t i = 0; i < d->trusted_domains.n; i++) {
		char out[256];
		const char *z = d->trusted_domains.v[i];
		CHECK_EQ(rules_name_parse(z, strlen(z), 0, out, sizeof(out), NULL, 0), 0);
	}
	rules_free(f);
	rules_free(d);
	rules_free(NULL);
}

/* ---- a file with every key ----------------------------------------------- */

static void test_every_key(void)
{
	char path[600], err[512];
	struct rules *r = NULL;

	snprintf(path, sizeof(path), "%s/tests/rules/good-full.yaml", srcroot);
	CHECK_EQ(rules_load(path, &r, err, sizeof(err)), 0);
	if (!r) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK_EQ(r->has_sandbox, 1);
	CHECK_EQ(r->sandbox.n, 3);
	CHECK_STR(fmt_net(&r->sandbox.v[0]), "10.99.0.0/24");
	CHECK_STR(fmt_net(&r->sandbox.v[1]), "10.98.0.0/16");
	CHECK_STR(fmt_net(&r->sandbox.v[2]), "fd00:99::/64");
	CHECK_EQ(r->proxies.n, 2);
	CHECK_STR(fmt_net(&r->proxies.v[0]), "10.99.0.2:8080");
	CHECK_STR(fmt_net(&r->proxies.v[1]), "[fd00:99::2]:3128");
	CHECK_EQ(r->proxies.v[1].port, 3128);
	CHECK_EQ(r->proxies.v[1].prefix, 128);
	CHECK_EQ(r->resolvers.n, 2);
	CHECK_STR(fmt_net(&r->resolvers.v[0]), "10.99.0.53");
	CHECK_STR(fmt_net(&r->resolvers.v[1]), "fd00:99::53");
	CHECK_EQ(r->destinations.n, 3);
	CHECK_STR(fmt_net(&r->destinations.v[0]), "192.0.2.0/24:443");
	CHECK_STR(fmt_net(&r->destinations.v[1]), "198.51.100.7");
	CHECK_STR(fmt_net(&r->destinations.v[2]), "[2001:db8::/32]:443");
	CHECK_EQ(r->domains.n, 3);
	CHECK_STR(r->domains.v[0], "api.example.com");
	CHECK_STR(r->domains.v[1], "*.pypi.org");
	CHECK_STR(r->domains.v[2], "files.pythonhosted.org");
	CHECK_EQ(r->allow_ipv6, 1);
	CHECK_EQ(r->allow_dns_over_tcp, 1);
	CHECK_EQ(r->trusted_domains.n, 2);
	CHECK_STR(r->trusted_domains.v[0], "cloudfront.net");
	CHECK_STR(r->trusted_domains.v[1], "corp.example");
	CHECK_EQ(r->metadata_addrs.n, 3);
	CHECK_STR(fmt_net(&r->metadata_addrs.v[0]), "169.254.169.254");
	CHECK_STR(fmt_net(&r->metadata_addrs.v[1]), "169.254.169.254:80");
	CHECK_STR(fmt_net(&r->metadata_addrs.v[2]), "[fd00:ec2::254]:80");
	CHECK_EQ(r->metadata_names.n, 1);
	CHECK_STR(r->metadata_names.v[0], "metadata.google.internal");
	CHECK_EQ(r->t.tunnel_min_queries, 20);
	CHECK_EQ(r->t.tunnel_window_s, 120);
	CHECK_EQ(r->t.tunnel_score, 80);
	CHECK_EQ(r->t.tunnel_budget_hour, 1000);
	CHECK_EQ(r->t.tunnel_budget_day, 10000);
	CHECK_EQ(r->t.icmp_payload_max, 64);
	CHECK_EQ(r->t.icmp_entropy_x100, 700);
	CHECK_EQ(r->t.icmp_volume_bytes, 4096);
	CHECK_EQ(r->t.icmp_distinct_data, 12);
	CHECK_EQ(r->t.icmp_distinct_data_hour, 30);
	CHECK_EQ(r->t.suppress_s, 60);
	CHECK_STR(r->path, path);
	rules_free(r);
}

static void test_sections_default(void)
{
	char err[512];
	struct rules *d = rules_default(), *r;

	/* {} is the defaults. */
	r = load_text("{}\n", err, sizeof(err));
	CHECK(r && rules_eq(r, d));
	rules_free(r);

	/* A section present replaces its default; the others keep theirs. */
	r = load_text("metadata: [10.0.0.1]\n", err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(r->metadata_addrs.n, 1);
		CHECK_EQ(r->metadata_names.n, 0);
		CHECK(str_eq(&r->trusted_domains, &d->trusted_domains));
		CHECK(memcmp(&r->t, &d->t, sizeof(r->t)) == 0);
	}
	rules_free(r);

	/* Empty lists are allowed (and null means an empty list). */
	r = load_text("trusted_domains: []\nmetadata:\n", err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(r->trusted_domains.n, 0);
		CHECK_EQ(r->metadata_addrs.n + r->metadata_names.n, 0);
	}
	rules_free(r);

	/* One threshold changes only itself. */
	r = load_text("thresholds: {suppress_s: 10}\n", err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(r->t.suppress_s, 10);
		CHECK_EQ(r->t.tunnel_score, 70);
	}
	rules_free(r);

	/* allow with null lists, booleans in their three spellings */
	r = load_text("sandbox:\n  networks: [10.0.0.0/8]\nallow:\n  proxies:\n  ipv6: TRUE\n"
		      "  dns_over_tcp: False\n",
		      err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(r->proxies.n, 0);
		CHECK_EQ(r->allow_ipv6, 1);
		CHECK_EQ(r->allow_dns_over_tcp, 0);
	}
	rules_free(r);

	/* sandbox alone, the policy on with nothing allowed; sandbox after allow */
	r = load_text("allow: {ipv6: true}\nsandbox: {networks: [\"fd00::/8\"]}\n", err,
		      sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(r->has_sandbox, 1);
		CHECK_EQ(r->allow_ipv6, 1);
	}
	rules_free(r);

	/* Anchors and aliases work as YAML says. */
	r = load_text("sandbox:\n  networks: &n [10.1.0.0/16]\nallow:\n  destinations: *n\n", err,
		      sizeof(err));
	CHECK(r != NULL);
	if (r)
		CHECK_STR(fmt_net(&r->destinations.v[0]), "10.1.0.0/16");
	rules_free(r);

	/* Unquoted IPv6 in block style, and a plain addr:port */
	r = load_text("sandbox:\n  networks:\n    - fd00:99::/64\nallow:\n  proxies:\n"
		      "    - 10.99.0.2:8080\n",
		      err, sizeof(err));
	CHECK(r != NULL);
	if (r) {
		CHECK_STR(fmt_net(&r->sandbox.v[0]), "fd00:99::/64");
		CHECK_STR(fmt_net(&r->proxies.v[0]), "10.99.0.2:8080");
	} else {
		fprintf(stderr, "%s\n", err);
	}
	rules_free(r);
	rules_free(d);
}

/* ---- errors -------------------------------------------------------------- */

static void test_errors(void)
{
	char err[512], want[600];
	struct rules *r = (struct rules *)1;

	/* Missing file */
	snprintf(want, sizeof(want), "%s/nope.yaml: No such file or directory", tmpdir);
	{
		char p[512];
		snprintf(p, sizeof(p), "%s/nope.yaml", tmpdir);
		CHECK_EQ(rules_load(p, &r, err, sizeof(err)), -1);
		CHECK(r == NULL);
		CHECK_STR(err, want);
	}
	/* A directory */
	CHECK_EQ(rules_load(tmpdir, &r, err, sizeof(err)), -1);
	CHECK(strncmp(err, tmpdir, strlen(tmpdir)) == 0);
	/* NULL or zero-length err buffers are tolerated */
	CHECK_EQ(rules_load(tmpdir, &r, NULL, 0), -1);
	/* The size limit: a file of exactly 1 MiB (comment lines, then {})
	 * loads; one byte more is refused */
	{
		size_t big = 1u << 20;
		char *text = malloc(big + 2);
		CHECK(text != NULL);
		memset(text, '#', big);
		for (size_t i = 63; i < big; i += 64)
			text[i] = '\n';
		memcpy(text + big - 4, "\n{}\n", 4);
		text[big] = '\0';
		struct rules *ok = load_text(text, err, sizeof(err));
		CHECK(ok != NULL);
		rules_free(ok);
		memcpy(text + big - 4, "\n{} \n", 5);
		text[big + 1] = '\0';
		CHECK(load_text(text, err, sizeof(err)) == NULL);
		CHECK(strstr(err, ": larger than 1048576 bytes; not a rules file?") != NULL);
		free(text);
	}

	/* The document */
	EXPECT_ERR("", "1: empty rules file (write {} for the built-in defaults)");
	EXPECT_ERR("# only a comment\n", "1: empty rules file (write {} for the built-in defaults)");
	EXPECT_ERR("- a\n- b\n",
		   "1: want a mapping of sections (sandbox, allow, trusted_domains, metadata, "
		   "thresholds), not a list");
	EXPECT_ERR("hello\n",
		   "1: want a mapping of sections (sandbox, allow, trusted_domains, metadata, "
		   "thresholds), not a scalar");
	EXPECT_ERR("{}\n---\nmetadata: []\n",
		   "2: a second YAML document (one rules document per file)");

	/* YAML syntax: libyaml's problem and line */
	EXPECT_ERR("sandbox:\n  networks: [10.0.0.0/8\nallow: {}\n",
		   "3: did not find expected ',' or ']' (while parsing a flow sequence on line 2)");
	EXPECT_ERR("a: b\n  c: d\n", "2: mapping values are not allowed in this context");
	EXPECT_ERR("sandbox:\n\tnetworks: []\n",
		   "2: found character that cannot start any token (while scanning for the next "
		   "token on line 2)");
	EXPECT_ERR("metadata: [*nope]\n", "1: found undefined alias");
	EXPECT_ERR("metadata: [\"\\xff\xff\"]\n", "1: invalid leading UTF-8 octet (byte 16)");

	/* Keys */
	EXPECT_ERR("sandboxes: {}\n",
		   "1: unknown key \"sandboxes\" (want sandbox, allow, trusted_domains, metadata or "
		   "thresholds)");
	EXPECT_ERR("metadata: []\nmetadata: []\n",
		   "2: duplicate key \"metadata\" (first on line 1)");
	EXPECT_ERR("[a]: 1\n", "1: a key must be a name, not a list");
	EXPECT_ERR("sandbox:\n  networks: [10.0.0.0/8]\n  nets: []\n",
		   "3: sandbox: unknown key \"nets\" (want networks)");
	EXPECT_ERR("sandbox:\n  networks: [10.0.0.0/8]\n  networks: [10.0.0.0/8]\n",
		   "3: sandbox: duplicate key \"networks\" (first on line 2)");
	EXPECT_ERR("sandbox: {networks: [10.0.0.0/8]}\nallow:\n  Proxies: []\n",
		   "3: allow: unknown key \"Proxies\" (want proxies, resolvers, destinations, "
		   "domains, ipv6 or dns_over_tcp)");
	EXPECT_ERR("sandbox: {networks: [10.0.0.0/8]}\nallow:\n  ipv6: true\n  ipv6: false\n",
		   "4: allow: duplicate key \"ipv6\" (first on line 3)");
	EXPECT_ERR("thresholds:\n  suppress: 10\n",
		   "2: thresholds: unknown key \"suppress\" (want tunnel_min_queries, "
		   "tunnel_window_s, tunnel_score, tunnel_budget_hour, tunnel_budget_day, "
		   "icmp_payload_max, icmp_entropy_x100, icmp_volume_bytes, icmp_distinct_data, "
		   "icmp_distinct_data_hour or suppress_s)");
	EXPECT_ERR("thresholds:\n  suppress_s: 10\n  suppress_s: 20\n",
		   "3: thresholds: duplicate key \"suppress_s\" (first on line 2)");
	EXPECT_ERR("\"bad\\tkey\": 1\n",
		   "1: unknown key \"bad\\x09key\" (want sandbox, allow, trusted_domains, metadata "
		   "or thresholds)");

	/* Sections of the wrong shape */
	EXPECT_ERR("sandbox:\n", "1: sandbox: missing networks");
	EXPECT_ERR("sandbox: {}\n", "1: sandbox: missing networks");
	EXPECT_ERR("sandbox: [10.0.0.0/8]\n", "1: sandbox: want a mapping (key: value), not a list");
	EXPECT_ERR("sandbox:\n  networks: []\n",
		   "2: sandbox.networks: empty (remove the sandbox section to turn the policy "
		   "classes off)");
	EXPECT_ERR("sandbox:\n  networks: 10.0.0.0/8\n",
		   "2: sandbox.networks: want a list ([...]), not a scalar");
	EXPECT_ERR("sandbox:\n  networks: [[10.0.0.0/8]]\n",
		   "2: sandbox.networks: want an address, not a list");
	EXPECT_ERR("sandbox:\n  networks: [10.0.0.0/8:80]\n",
		   "2: sandbox.networks: \"10.0.0.0/8:80\" has a port (a sandbox network has none)");
	EXPECT_ERR("sandbox:\n  networks:\n    - 10.0.0.0/8\n    - 10.0.0.1/8\n",
		   "4: sandbox.networks: \"10.0.0.1/8\" has host bits set (the network is "
		   "10.0.0.0/8)");
	EXPECT_ERR("sandbox:\n  networks: [\"fd00:99::1/64\"]\n",
		   "2: sandbox.networks: \"fd00:99::1/64\" has host bits set (the network is "
		   "fd00:99::/64)");
	EXPECT_ERR("allow: 3\n", "1: allow: want a mapping (key: value), not a scalar");
	EXPECT_ERR("allow:\n  ipv6: true\n",
		   "1: allow: no sandbox section (the allow list judges only sandbox traffic; add "
		   "sandbox.networks)");
	EXPECT_ERR("trusted_domains: {a: b}\n",
		   "1: trusted_domains: want a list ([...]), not a mapping");
	EXPECT_ERR("metadata: x\n", "1: metadata: want a list ([...]), not a scalar");
	EXPECT_ERR("thresholds: [1]\n", "1: thresholds: want a mapping (key: value), not a list");

	/* Addresses */
#define SB "sandbox: {networks: [10.0.0.0/8]}\nallow:\n"
	EXPECT_ERR(SB "  proxies: [\"10.99.0.300:8080\"]\n",
		   "3: allow.proxies: \"10.99.0.300:8080\" is not an address");
	EXPECT_ERR(SB "  proxies: [\"10.99.0.2:0\"]\n",
		   "3: allow.proxies: \"10.99.0.2:0\" has a port out of range (1..65535)");
	EXPECT_ERR(SB "  proxies: [\"10.99.0.2:65536\"]\n",
		   "3: allow.proxies: \"10.99.0.2:65536\" has a port out of range (1..65535)");
	EXPECT_ERR(SB "  proxies: [\"10.99.0.2:http\"]\n",
		   "3: allow.proxies: \"10.99.0.2:http\" is not an address");
	EXPECT_ERR(SB "  proxies: [\"10.99.0.2:\"]\n",
		   "3: allow.proxies: \"10.99.0.2:\" is not an address");
	EXPECT_ERR(SB "  proxies: [proxy.example]\n",
		   "3: allow.proxies: \"proxy.example\" is not an address");
	EXPECT_ERR(SB "  proxies: [{a: b}]\n", "3: allow.proxies: want an address, not a mapping");
	EXPECT_ERR(SB "  proxies: [10.0.0.2:8080, [fd00::2]:3128]\n",
		   "3: allow.proxies: want an address, not a mapping (quote an IPv6 address with a "
		   "port: \"[fd00::1]:8080\")");
	EXPECT_ERR(SB "  domains: [*.example.org]\n",
		   "3: did not find expected alphabetic or numeric character (while scanning an "
		   "alias on line 3); quote a name that starts with '*': \"*.example.org\"");
	EXPECT_ERR(SB "  resolvers: [\"[10.0.0.53]:53\"]\n",
		   "3: allow.resolvers: \"[10.0.0.53]:53\" is not an address (brackets are for IPv6)");
	EXPECT_ERR(SB "  resolvers: [\"[fd00::53]53\"]\n",
		   "3: allow.resolvers: \"[fd00::53]53\" is not an address");
	EXPECT_ERR(SB "  resolvers: [\"[fd00::53\"]\n",
		   "3: allow.resolvers: \"[fd00::53\" is not an address");
	EXPECT_ERR(SB "  resolvers: [\"fe80::1%eth0\"]\n",
		   "3: allow.resolvers: \"fe80::1%eth0\" is not an address");
	EXPECT_ERR(SB "  destinations: [10.0.0.0/33]\n",
		   "3: allow.destinations: \"10.0.0.0/33\" has a prefix length out of range (0..32)");
	EXPECT_ERR(SB "  destinations: [\"10.0.0.0/\"]\n",
		   "3: allow.destinations: \"10.0.0.0/\" is not an address");
	EXPECT_ERR(SB "  destinations: [\"10.0.0.0/+8\"]\n",
		   "3: allow.destinations: \"10.0.0.0/+8\" is not an address");
	EXPECT_ERR(SB "  destinations: [\"2001:db8::/129\"]\n",
		   "3: allow.destinations: \"2001:db8::/129\" has a prefix length out of range "
		   "(0..128)");
	EXPECT_ERR(SB "  destinations: [\"[2001:db8::/32]:99999\"]\n",
		   "3: allow.destinations: \"[2001:db8::/32]:99999\" has a port out of range "
		   "(1..65535)");
	EXPECT_ERR(SB "  destinations: [\"010.0.0.1\"]\n",
		   "3: allow.destinations: \"010.0.0.1\" is not an address");
	EXPECT_ERR(SB "  destinations: [\"\"]\n", "3: allow.destinations: \"\" is not an address");
	EXPECT_ERR(SB "  destinations: [\" 10.0.0.1\"]\n",
		   "3: allow.destinations: \" 10.0.0.1\" is not an address");
	EXPECT_ERR(SB "  destinations: [\"10.0.0.1\\0\"]\n",
		   "3: allow.destinations: value contains a NUL byte");
	EXPECT_ERR(SB "  destinations:\n    - 10.0.0.1\n    - 10.0.0.256\n",
		   "5: allow.destinations: \"10.0.0.256\" is not an address");

	/* Booleans */
	EXPECT_ERR(SB "  ipv6: yes\n", "3: allow.ipv6: \"yes\" is not a boolean (true or false)");
	EXPECT_ERR(SB "  dns_over_tcp: 1\n",
		   "3: allow.dns_over_tcp: \"1\" is not a boolean (true or false)");
	EXPECT_ERR(SB "  ipv6:\n", "3: allow.ipv6: \"\" is not a boolean (true or false)");
	EXPECT_ERR(SB "  ipv6: [true]\n", "3: allow.ipv6: want a single value, not a list");

	/* Names */
	EXPECT_ERR(SB "  domains: [\"a..b\"]\n",
		   "3: allow.domains: \"a..b\" is not a domain name (empty label)");
	EXPECT_ERR(SB "  domains: [\".a\"]\n",
		   "3: allow.domains: \".a\" is not a domain name (empty label)");
	EXPECT_ERR(SB "  domains: [\".\"]\n", "3: allow.domains: \".\" is not a domain name (empty)");
	EXPECT_ERR(SB "  domains: [\"*\"]\n",
		   "3: allow.domains: \"*\" is not a domain name (bad character '*')");
	EXPECT_ERR(SB "  domains: [\"*.\"]\n",
		   "3: allow.domains: \"*.\" is not a domain name (bad character '*')");
	EXPECT_ERR(SB "  domains: [\"a.*.b\"]\n",
		   "3: allow.domains: \"a.*.b\" is not a domain name (bad character '*')");
	EXPECT_ERR(SB "  domains: [\"exa mple.org\"]\n",
		   "3: allow.domains: \"exa mple.org\" is not a domain name (bad character \\x20)");
	EXPECT_ERR(SB "  domains: [\"http://example.org\"]\n",
		   "3: allow.domains: \"http://example.org\" is not a domain name (bad character ':')");
	EXPECT_ERR(SB "  domains: [\"caf\xc3\xa9.fr\"]\n",
		   "3: allow.domains: \"caf\\xc3\\xa9.fr\" is not a domain name (bad character "
		   "\\xc3)");
	EXPECT_ERR(SB "  domains: [aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.org]\n",
		   "3: allow.domains: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.org\" "
		   "is not a domain name (a label is longer than 63 characters)");
	{
		/* 254 characters: too long, shown cut */
		char text[600], want2[400];
		char name[255];
		for (int i = 0; i < 254; i++)
			name[i] = (i % 10 == 9) ? '.' : 'a';
		name[253] = 'a';
		name[254] = '\0';
		snprintf(text, sizeof(text), "trusted_domains: [%s]\n", name);
		snprintf(want2, sizeof(want2),
			 "1: trusted_domains: \"%.92s...\" is not a domain name (longer than 253 "
			 "characters)",
			 name);
		EXPECT_ERR(text, want2);
		/* 253 is fine */
		name[253] = '\0';
		snprintf(text, sizeof(text), "trusted_domains: [%s]\n", name);
		r = load_text(text, err, sizeof(err));
		CHECK(r != NULL);
		rules_free(r);
	}
	EXPECT_ERR("trusted_domains: [\"*.cloudfront.net\"]\n",
		   "1: trusted_domains: \"*.cloudfront.net\" has a wildcard (only allow.domains "
		   "takes \"*.\"; a zone already covers its subdomains)");
	EXPECT_ERR("trusted_domains: [[a]]\n", "1: trusted_domains: want a domain name, not a list");
	EXPECT_ERR("metadata: [\"*.metadata\"]\n",
		   "1: metadata: \"*.metadata\" has a wildcard (only allow.domains takes \"*.\"; a "
		   "zone already covers its subdomains)");

	/* Metadata: what looks like an address must be one */
	EXPECT_ERR("metadata: [169.254.169.2544]\n",
		   "1: metadata: \"169.254.169.2544\" is not an address");
	EXPECT_ERR("metadata: [\"metadata.google.internal:80\"]\n",
		   "1: metadata: \"metadata.google.internal:80\" is not an address");
	EXPECT_ERR("metadata: [\"169.254.169.254:0\"]\n",
		   "1: metadata: \"169.254.169.254:0\" has a port out of range (1..65535)");
	EXPECT_ERR("metadata: [{a: 1}]\n", "1: metadata: want an address or a name, not a mapping");
	EXPECT_ERR("metadata: [\"bad_name!\"]\n",
		   "1: metadata: \"bad_name!\" is not a domain name (bad character '!')");

	/* Thresholds: every key's range, and number syntax */
	EXPECT_ERR("thresholds:\n  tunnel_min_queries: 0\n",
		   "2: thresholds.tunnel_min_queries: 0 is out of range (1..1000000)");
	EXPECT_ERR("thresholds:\n  tunnel_window_s: 86401\n",
		   "2: thresholds.tunnel_window_s: 86401 is out of range (1..86400)");
	EXPECT_ERR("thresholds:\n  tunnel_score: 101\n",
		   "2: thresholds.tunnel_score: 101 is out of range (1..100)");
	EXPECT_ERR("thresholds:\n  tunnel_budget_hour: 0\n",
		   "2: thresholds.tunnel_budget_hour: 0 is out of range (1..1073741824)");
	EXPECT_ERR("thresholds:\n  tunnel_budget_day: 1073741825\n",
		   "2: thresholds.tunnel_budget_day: 1073741825 is out of range (1..1073741824)");
	EXPECT_ERR("thresholds:\n  icmp_payload_max: 65536\n",
		   "2: thresholds.icmp_payload_max: 65536 is out of range (1..65535)");
	EXPECT_ERR("thresholds:\n  icmp_entropy_x100: 801\n",
		   "2: thresholds.icmp_entropy_x100: 801 is out of range (1..800)");
	EXPECT_ERR("thresholds:\n  icmp_volume_bytes: 0\n",
		   "2: thresholds.icmp_volume_bytes: 0 is out of range (1..1073741824)");
	EXPECT_ERR("thresholds:\n  icmp_distinct_data: 17\n",
		   "2: thresholds.icmp_distinct_data: 17 is out of range (1..16)");
	EXPECT_ERR("thresholds:\n  icmp_distinct_data_hour: 257\n",
		   "2: thresholds.icmp_distinct_data_hour: 257 is out of range (1..256)");
	EXPECT_ERR("thresholds:\n  suppress_s: 0\n",
		   "2: thresholds.suppress_s: 0 is out of range (1..86400)");
	EXPECT_ERR("thresholds:\n  suppress_s: -5\n",
		   "2: thresholds.suppress_s: \"-5\" is not a whole number");
	EXPECT_ERR("thresholds:\n  suppress_s: 1.5\n",
		   "2: thresholds.suppress_s: \"1.5\" is not a whole number");
	EXPECT_ERR("thresholds:\n  suppress_s: 0x10\n",
		   "2: thresholds.suppress_s: \"0x10\" is not a whole number");
	EXPECT_ERR("thresholds:\n  suppress_s: 99999999999\n",
		   "2: thresholds.suppress_s: \"99999999999\" is not a whole number");
	EXPECT_ERR("thresholds:\n  suppress_s:\n",
		   "2: thresholds.suppress_s: \"\" is not a whole number");
	EXPECT_ERR("thresholds:\n  suppress_s: {a: 1}\n",
		   "2: thresholds.suppress_s: want a single value, not a mapping");
	EXPECT_ERR("thresholds:\n  tunnel_budget_hour: 100\n  tunnel_budget_day: 99\n",
		   "3: thresholds: tunnel_budget_day (99) is less than tunnel_budget_hour (100)");
	EXPECT_ERR("thresholds:\n  tunnel_budget_hour: 40000\n",
		   "2: thresholds: tunnel_budget_day (32768) is less than tunnel_budget_hour (40000)");
	/* Equal budgets are fine, and quoted numbers are numbers. */
	r = load_text("thresholds:\n  tunnel_budget_hour: 100\n  tunnel_budget_day: \"100\"\n", err,
		      sizeof(err));
	CHECK(r != NULL);
	rules_free(r);

	/* A long message is cut, not overflowed */
	{
		char small[24];
		struct rules *rr = NULL;
		const char *p = write_tmp("t.yaml", "sandboxes: {}\n");
		CHECK_EQ(rules_load(p, &rr, small, sizeof(small)), -1);
		CHECK_EQ(strlen(small), sizeof(small) - 1);
	}
#undef SB
}

/* ---- tests/rules/ fixtures ------------------------------------------------ */

static void test_fixtures(void)
{
	char dir[600];
	DIR *d;
	struct dirent *e;
	int good = 0, bad = 0;

	snprintf(dir, sizeof(dir), "%s/tests/rules", srcroot);
	d = opendir(dir);
	CHECK(d != NULL);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[1200], err[1024], line[1024], want[2300];
		struct rules *r = NULL;
		size_t n = strlen(e->d_name);
		FILE *f;

		if (n < 6 || strcmp(e->d_name + n - 5, ".yaml"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!strncmp(e->d_name, "good-", 5)) {
			good++;
			if (rules_load(path, &r, err, sizeof(err)) == 0) {
				check_pass++;
			} else {
				check_fail++;
				fprintf(stderr, "%s: %s\n", e->d_name, err);
			}
			rules_free(r);
			continue;
		}
		if (strncmp(e->d_name, "bad-", 4))
			continue;
		bad++;
		f = fopen(path, "r");
		CHECK(f != NULL);
		if (!f)
			continue;
		if (!fgets(line, sizeof(line), f) || strncmp(line, "# expect: ", 10)) {
			check_fail++;
			fprintf(stderr, "%s: first line is not \"# expect: LINE: MESSAGE\"\n",
				e->d_name);
			fclose(f);
			continue;
		}
		fclose(f);
		line[strcspn(line, "\n")] = '\0';
		snprintf(want, sizeof(want), "%s:%s", path, line + 10);
		CHECK_EQ(rules_load(path, &r, err, sizeof(err)), -1);
		if (strcmp(err, want)) {
			check_fail++;
			fprintf(stderr, "%s: error is \"%s\"\n  expected \"%s\"\n", e->d_name, err,
				want);
		} else {
			check_pass++;
		}
		rules_free(r);
	}
	closedir(d);
	CHECK(good >= 3);
	CHECK(bad >= 10);
}

/* ---- parsing and matching helpers ---------------------------------------- */

static void test_net_parse(void)
{
	struct rules_net n;
	char why[128];
	static const struct {
		const char *in, *out;
		int ipv, prefix, port;
	} ok[] = {
		{"10.0.0.1", "10.0.0.1", 4, 32, 0},
		{"10.0.0.0/8", "10.0.0.0/8", 4, 8, 0},
		{"10.0.0.1/32", "10.0.0.1", 4, 32, 0},
		{"0.0.0.0/0", "0.0.0.0/0", 4, 0, 0},
		{"10.0.0.1:1", "10.0.0.1:1", 4, 32, 1},
		{"10.0.0.1:65535", "10.0.0.1:65535", 4, 32, 65535},
		{"10.0.0.0/8:443", "10.0.0.0/8:443", 4, 8, 443},
		{"10.0.0.128/25", "10.0.0.128/25", 4, 25, 0},
		{"::", "::", 6, 128, 0},
		{"::/0", "::/0", 6, 0, 0},
		{"FD00:99::1", "fd00:99::1", 6, 128, 0},
		{"fd00:99::/64", "fd00:99::/64", 6, 64, 0},
		{"fd00::1:8080", "fd00::1:8080", 6, 128, 0}, /* no brackets: all address */
		{"[fd00::1]", "fd00::1", 6, 128, 0},
		{"[fd00::1]:8080", "[fd00::1]:8080", 6, 128, 8080},
		{"[fd00::/16]:53", "[fd00::/16]:53", 6, 16, 53},
		{"::ffff:169.254.169.254", "::ffff:169.254.169.254", 6, 128, 0},
	};
	static const struct {
		const char *in, *why;
	} bad[] = {
		{"", "is not an address"},
		{"10.0.0", "is not an address"},
		{"10.0.0.1.2", "is not an address"},
		{"1e.0.0.1", "is not an address"},
		{"10.0.0.1/", "is not an address"},
		{"10.0.0.1/1234", "is not an address"},
		{"10.0.0.0/8/8", "is not an address"},
		{"10.0.0.1:123456", "is not an address"},
		{"10.0.0.1:-1", "is not an address"},
		{"10.0.0.1:00000", "has a port out of range (1..65535)"},
		{"10.0.0.0/33", "has a prefix length out of range (0..32)"},
		{"::1::2", "is not an address"},
		{"[::1]x", "is not an address"},
		{"[::1]:", "is not an address"},
		{"[]", "is not an address (brackets are for IPv6)"},
		{"fd00::1/64", "has host bits set (the network is fd00::/64)"},
		{"10.1.2.3/0", "has host bits set (the network is 0.0.0.0/0)"},
		{"fd00:0:0:0:0:0:0:0:1", "is not an address"},
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		memset(&n, 0xee, sizeof(n));
		if (rules_net_parse(ok[i].in, &n, why, sizeof(why)) != 0) {
			check_fail++;
			fprintf(stderr, "rules_net_parse(\"%s\") failed: %s\n", ok[i].in, why);
			continue;
		}
		CHECK_STR(fmt_net(&n), ok[i].out);
		CHECK_EQ(n.ipv, ok[i].ipv);
		CHECK_EQ(n.prefix, ok[i].prefix);
		CHECK_EQ(n.port, ok[i].port);
		if (n.ipv == 4) /* the rest of addr is zero */
			CHECK(!memcmp(n.addr + 4, "\0\0\0\0\0\0\0\0\0\0\0\0", 12));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (rules_net_parse(bad[i].in, &n, why, sizeof(why)) == 0) {
			check_fail++;
			fprintf(stderr, "rules_net_parse(\"%s\") took it\n", bad[i].in);
			continue;
		}
		CHECK_STR(why, bad[i].why);
	}
	/* why may be NULL */
	CHECK_EQ(rules_net_parse("nope", &n, NULL, 0), -1);
	/* a small buffer cuts */
	{
		char buf[8];
		rules_net_parse("[2001:db8::/32]:443", &n, NULL, 0);
		CHECK_EQ(rules_net_format(&n, buf, sizeof(buf)), 7);
		CHECK_STR(buf, "[2001:d");
		CHECK_EQ(rules_net_format(&n, buf, 0), 0);
	}
}

static void test_name_parse(void)
{
	char out[256], why[160];

	CHECK_EQ(rules_name_parse("Example.ORG.", 12, 0, out, sizeof(out), why, sizeof(why)), 0);
	CHECK_STR(out, "example.org");
	CHECK_EQ(rules_name_parse("*.Example.org", 13, 1, out, sizeof(out), why, sizeof(why)), 0);
	CHECK_STR(out, "*.example.org");
	CHECK_EQ(rules_name_parse("*.example.org", 13, 0, out, sizeof(out), why, sizeof(why)), -1);
	CHECK_EQ(rules_name_parse("_dmarc.x-y.org", 14, 0, out, sizeof(out), why, sizeof(why)), 0);
	CHECK_STR(out, "_dmarc.x-y.org");
	CHECK_EQ(rules_name_parse("local", 5, 0, out, sizeof(out), why, sizeof(why)), 0);
	CHECK_EQ(rules_name_parse("a..", 3, 0, out, sizeof(out), why, sizeof(why)), -1);
	CHECK_STR(why, "is not a domain name (empty label)");
	CHECK_EQ(rules_name_parse("", 0, 0, out, sizeof(out), why, sizeof(why)), -1);
	CHECK_STR(why, "is not a domain name (empty)");
	CHECK_EQ(rules_name_parse("*.", 2, 1, out, sizeof(out), why, sizeof(why)), -1);
	CHECK_STR(why, "is not a domain name (bad character '*')");
	CHECK_EQ(rules_name_parse("*..", 3, 1, out, sizeof(out), why, sizeof(why)), -1);
	CHECK_STR(why, "is not a domain name (empty)");
	CHECK_EQ(rules_name_parse("a\0b", 3, 0, out, sizeof(out), why, sizeof(why)), -1);
	CHECK_STR(why, "is not a domain name (bad character \\x00)");
	/* length is honoured: the rest is not read */
	CHECK_EQ(rules_name_parse("abc.def!!!", 7, 0, out, sizeof(out), why, sizeof(why)), 0);
	CHECK_STR(out, "abc.def");
	/* an output buffer that is too small is refused */
	CHECK_EQ(rules_name_parse("abcdef", 6, 0, out, 4, why, sizeof(why)), -1);
}

static void test_net_match(void)
{
	struct rules_netlist l = {0};
	struct rules_net v[8];
	uint8_t a4[4], a6[16];
	static const char *const nets[] = {"10.99.0.0/24", "192.0.2.7:8080", "fd00:99::/64",
					   "[2001:db8::/33]:443", "198.51.100.0/31", "172.16.0.0/12"};

	for (size_t i = 0; i < sizeof(nets) / sizeof(nets[0]); i++)
		CHECK_EQ(rules_net_parse(nets[i], &v[i], NULL, 0), 0);
	l.v = v;
	l.n = sizeof(nets) / sizeof(nets[0]);

#define M4(s, port) (inet_pton(AF_INET, s, a4) == 1 && rules_net_match(&l, 4, a4, port))
#define M6(s, port) (inet_pton(AF_INET6, s, a6) == 1 && rules_net_match(&l, 6, a6, port))
	/* IPv4 CIDR edges */
	CHECK(M4("10.99.0.0", 0));
	CHECK(M4("10.99.0.255", 1234));
	CHECK(!M4("10.99.1.0", 0));
	CHECK(!M4("10.98.255.255", 0));
	CHECK(M4("198.51.100.1", 0));
	CHECK(!M4("198.51.100.2", 0));
	CHECK(M4("172.31.255.255", 0));
	CHECK(!M4("172.32.0.0", 0));
	CHECK(!M4("172.15.255.255", 0));
	/* ports: entry with a port takes that port only; query port 0 = address only */
	CHECK(M4("192.0.2.7", 8080));
	CHECK(!M4("192.0.2.7", 8081));
	CHECK(!M4("192.0.2.7", 80));
	CHECK(M4("192.0.2.7", 0));
	CHECK(!M4("192.0.2.8", 8080));
	/* IPv6 CIDR edges, and a non-byte-aligned prefix */
	CHECK(M6("fd00:99::", 0));
	CHECK(M6("fd00:99::ffff:ffff:ffff:ffff", 22));
	CHECK(!M6("fd00:99:0:1::", 0));
	CHECK(!M6("fd00:98:ffff:ffff:ffff:ffff:ffff:ffff", 0));
	CHECK(M6("2001:db8:7fff:ffff::1", 443));
	CHECK(!M6("2001:db8:8000::1", 443));
	CHECK(!M6("2001:db8::1", 80));
	CHECK(M6("2001:db8::1", 0));
	/* families never mix, except IPv4-mapped IPv6 */
	CHECK(!M6("::a63:0", 0)); /* IPv4-compatible ::10.99.0.0 is not mapped */
	CHECK(M6("::ffff:10.99.0.7", 0));
	CHECK(M6("::ffff:192.0.2.7", 8080));
	CHECK(!M6("::ffff:192.0.2.7", 8081));
	CHECK(!M6("::ffff:10.98.0.7", 0));
	/* bad arguments and an empty list */
	CHECK_EQ(rules_net_match(&l, 5, a4, 0), 0);
	CHECK_EQ(rules_net_match(NULL, 4, a4, 0), 0);
	CHECK_EQ(rules_net_match(&l, 4, NULL, 0), 0);
	l.n = 0;
	CHECK(!M4("10.99.0.1", 0));
	/* /0 takes everything of its family only */
	CHECK_EQ(rules_net_parse("0.0.0.0/0", &v[0], NULL, 0), 0);
	l.n = 1;
	CHECK(M4("255.255.255.255", 9));
	CHECK(!M6("::1", 0));
	CHECK(M6("::ffff:1.2.3.4", 0));
	/* the default metadata list */
	{
		struct rules *d = rules_default();
		CHECK(inet_pton(AF_INET, "169.254.169.254", a4) == 1 &&
		      rules_net_match(&d->metadata_addrs, 4, a4, 80));
		CHECK(inet_pton(AF_INET6, "fd00:ec2::254", a6) == 1 &&
		      rules_net_match(&d->metadata_addrs, 6, a6, 80));
		CHECK(inet_pton(AF_INET6, "::ffff:169.254.169.254", a6) == 1 &&
		      rules_net_match(&d->metadata_addrs, 6, a6, 80));
		CHECK(inet_pton(AF_INET6, "fe80::a9fe:a9fe", a6) == 1 &&
		      rules_net_match(&d->metadata_addrs, 6, a6, 0));
		CHECK(inet_pton(AF_INET, "169.254.169.253", a4) == 1 &&
		      !rules_net_match(&d->metadata_addrs, 4, a4, 80));
		rules_free(d);
	}
#undef M4
#undef M6
}

/*
 * rules.c indexes the lists it builds (the first-byte filter of
 * rules_netlist, the zone lengths of rules_strlist): a loaded list must
 * answer exactly as the same entries in a hand-built list (no index), and a
 * list whose v or n was changed by hand must not trust the old index.
 */
static void test_indexed_lists(void)
{
	char err[1024];
	struct rules *r = load_text("sandbox:\n"
				    "  networks: [10.99.0.0/24, 96.0.0.0/3, 7.0.0.0/8, 0.0.0.0/1,"
				    " fc00::/7, \"::/0\", 200.1.2.3/32]\n"
				    "allow:\n  domains: [cloudfront.net, \"*.example.org\", local, e5.sk]\n"
				    "metadata: [169.254.169.254, \"169.254.170.2:80\", fd00:ec2::254]\n",
				    err, sizeof(err));
	static const char *const names[] = {
		"cloudfront.net", "a.cloudfront.net", "xcloudfront.net", "example.org",
		"a.example.org", "A.B.EXAMPLE.ORG.", "local", "x.local", "e5.sk", "ae5.sk", "sk", "",
		"org", "net.", ".", "a..example.org",
	};
	uint8_t a[16] = {0};

	CHECK(r != NULL);
	if (!r)
		return;
	const struct rules_netlist *lists[] = {&r->sandbox, &r->metadata_addrs};
	for (size_t k = 0; k < 2; k++) {
		struct rules_netlist hand = {.v = lists[k]->v, .n = lists[k]->n};
		int bad = 0;
		for (unsigned b0 = 0; b0 < 256; b0++) {
			for (unsigned b1 = 0; b1 < 256; b1 += 3) {
				a[0] = (uint8_t)b0;
				a[1] = (uint8_t)b1;
				a[2] = 169;
				a[3] = 254;
				for (int ipv = 4; ipv <= 6; ipv += 2)
					for (uint16_t port = 0; port <= 80; port += 80)
						bad += rules_net_match(lists[k], ipv, a, port) !=
						       rules_net_match(&hand, ipv, a, port);
			}
		}
		CHECK_EQ(bad, 0);
	}
	/* mapped IPv4 goes through the IPv4 filter */
	memset(a, 0, sizeof(a));
	a[10] = a[11] = 0xff;
	a[12] = 169, a[13] = 254, a[14] = 169, a[15] = 254;
	CHECK(rules_net_match(&r->metadata_addrs, 6, a, 0));
	a[12] = 170;
	CHECK(!rules_net_match(&r->metadata_addrs, 6, a, 0));
	/* a copy changed by hand scans its own entries, not the old index */
	{
		struct rules_net one;
		struct rules_netlist copy = r->metadata_addrs;
		CHECK_EQ(rules_net_parse("8.8.8.0/24", &one, NULL, 0), 0);
		copy.v = &one;
		copy.n = 1;
		a[0] = 8, a[1] = 8, a[2] = 8, a[3] = 8;
		CHECK(rules_net_match(&copy, 4, a, 0));
		CHECK(!rules_net_match(&r->metadata_addrs, 4, a, 0));
	}
	/* zone lengths: the loaded list answers as a hand-built one */
	{
		struct rules_strlist hand = {.v = r->domains.v, .n = r->domains.n};
		struct rules_strlist copy = r->domains;
		char *other[] = {"example.com"};
		CHECK_EQ(r->domains.n, 4);
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			CHECK_EQ(rules_domain_match(&r->domains, names[i], strlen(names[i])),
				 rules_domain_match(&hand, names[i], strlen(names[i])));
		CHECK(rules_domain_match(&r->domains, "a.b.example.org", 15));
		CHECK(!rules_domain_match(&r->domains, "example.org", 11));
		copy.v = other;
		copy.n = 1;
		CHECK(rules_domain_match(&copy, "www.example.com", 15));
		CHECK(!rules_domain_match(&copy, "a.cloudfront.net", 16));
	}
	rules_free(r);
}

static void test_domain_match(void)
{
	char *zones[] = {"cloudfront.net", "*.example.org", "local", "e5.sk"};
	struct rules_strlist l = {.v = zones, .n = 4};
	struct rules_strlist empty = {.v = NULL, .n = 0};

#define D(s) rules_domain_match(&l, s, strlen(s))
	CHECK(D("cloudfront.net"));
	CHECK(D("a.cloudfront.net"));
	CHECK(D("d1234.a.b.cloudfront.net"));
	CHECK(D("A.CloudFront.NET"));
	CHECK(D("a.cloudfront.net."));
	CHECK(D("cloudfront.net."));
	CHECK(!D("xcloudfront.net"));
	CHECK(!D("cloudfront.net.evil.com"));
	CHECK(!D("cloudfront.ne"));
	CHECK(!D("loudfront.net"));
	CHECK(!D("net"));
	CHECK(!D(".cloudfront.ne"));
	/* wildcard: subdomains only */
	CHECK(D("www.example.org"));
	CHECK(D("a.b.example.org"));
	CHECK(!D("example.org"));
	CHECK(!D(".example.org"));
	CHECK(!D("xexample.org"));
	CHECK(!D("example.org.x"));
	/* single-label zones */
	CHECK(D("local"));
	CHECK(D("printer.local"));
	CHECK(D("svc.cluster.local"));
	CHECK(!D("notlocal"));
	CHECK(D("abcdef0123.e5.sk"));
	CHECK(!D("e5.sk.com"));
	/* empty, dot, length honoured, NULL */
	CHECK(!D(""));
	CHECK(!D("."));
	CHECK(rules_domain_match(&l, "local.evil", 5));
	CHECK(!rules_domain_match(&l, "a.cloudfront.net", 15));
	CHECK(!rules_domain_match(&l, NULL, 0));
	CHECK(!rules_domain_match(NULL, "local", 5));
	CHECK(!rules_domain_match(&empty, "local", 5));
#undef D
	/* default trusted zones and metadata names */
	{
		struct rules *d = rules_default();
		CHECK(rules_domain_match(&d->trusted_domains, "ip-10-0-0-1.ec2.internal", 24));
		CHECK(rules_domain_match(&d->trusted_domains, "kubernetes.default.svc.cluster.local",
					 36));
		CHECK(!rules_domain_match(&d->trusted_domains, "evil-tunnel.example", 19));
		CHECK(rules_domain_match(&d->metadata_names, "METADATA.google.internal.", 25));
		CHECK(rules_domain_match(&d->metadata_names, "metadata", 8));
		CHECK(!rules_domain_match(&d->metadata_names, "metadata.example", 16));
		rules_free(d);
	}
}

static void test_summary(void)
{
	char buf[512], err[512];
	struct rules *d = rules_default(), *r;

	rules_summary(d, buf, sizeof(buf));
	CHECK_STR(buf, "no sandbox, policy classes off, 23 trusted zones, 19 metadata endpoints");
	rules_free(d);
	r = load_text("sandbox: {networks: [10.0.0.0/8]}\nallow:\n  proxies: [10.0.0.2:3128]\n"
		      "  domains: [a.org, b.org]\n  ipv6: true\ntrusted_domains: [x.org]\n"
		      "metadata: [169.254.169.254]\n",
		      err, sizeof(err));
	CHECK(r != NULL);
	if (!r)
		return;
	rules_summary(r, buf, sizeof(buf));
	CHECK_STR(buf, "1 sandbox network, 1 proxy, 0 resolvers, 0 destinations, 2 allowed "
		       "domains, IPv6 allowed, DNS over TCP denied, 1 trusted zone, 1 metadata "
		       "endpoint");
	CHECK_EQ(rules_summary(r, buf, 10), 9);
	CHECK_STR(buf, "1 sandbox");
	rules_free(r);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/ew-rules.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror(tmpdir);
		return 1;
	}
	find_srcroot();
	test_default();
	test_every_key();
	test_sections_default();
	test_errors();
	test_fixtures();
	test_net_parse();
	test_name_parse();
	test_net_match();
	test_domain_match();
	test_indexed_lists();
	test_summary();
	{
		char p[600];
		snprintf(p, sizeof(p), "%s/t.yaml", tmpdir);
		unlink(p);
		rmdir(tmpdir);
	}
	return check_done();
}
