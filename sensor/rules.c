/*
 * rules.c - the rules file: read with libyaml's document API, checked key by
 * key against a table per section (the shape of Redis config.c), and turned
 * into an immutable struct rules.
 *
 * Strict at startup (style.md practice 8): the first problem stops the load
 * and is reported as "file:line: message", the line being that of the YAML
 * node at fault (1-based, from libyaml's marks); syntax errors carry
 * libyaml's own problem and line. Unknown keys, duplicate keys, wrong types,
 * bad addresses, CIDRs with host bits set, ports and numbers out of range are
 * all errors. A section that is absent keeps its default (rules_default()); a
 * section that is present replaces it.
 *
 * Nothing here runs in the packet path except rules_net_match() and
 * rules_domain_match(), which allocate nothing and take locale-free ASCII.
 */
#include "rules.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "text.h"

#define RULES_MAX_BYTES (1u << 20) /* a rules file is small; refuse anything bigger */

/* ---- defaults ------------------------------------------------------------ */

/* Keep in step with rules/default.yaml: tests/unit/test_rules.c compares them. */
static const char *const default_metadata[] = {
	"169.254.169.254",  /* AWS, GCP, Azure, OCI, DigitalOcean, OpenStack IMDS */
	"fd00:ec2::254",    /* AWS IMDS over IPv6 (Nitro) */
	"169.254.170.2",    /* AWS ECS task metadata and credentials */
	"169.254.170.23",   /* AWS EKS Pod Identity agent */
	"fd00:ec2::23",     /* AWS EKS Pod Identity agent over IPv6 */
	"168.63.129.16",    /* Azure WireServer and host agent */
	"100.100.100.200",  /* Alibaba Cloud ECS metadata */
	"192.0.0.192",      /* Oracle Cloud (classic) metadata */
	"fe80::a9fe:a9fe",  /* OpenStack metadata over IPv6 link-local */
	"169.254.0.23",     /* Tencent Cloud metadata */
	"metadata.tencentyun.com", /* Tencent Cloud metadata */
	"metadata.google.internal",
	"metadata.goog",
	"metadata",
	"instance-data",
	"instance-data.ec2.internal",
	"kubernetes.default",
	"kubernetes.default.svc",
	"kubernetes.default.svc.cluster.local",
};

static const char *const default_trusted[] = {
	"akamai.net", "akamaiedge.net", "akamaihd.net", "edgekey.net", "edgesuite.net",
	"cloudfront.net", "amazonaws.com", "fastly.net", "azureedge.net", "azurefd.net",
	"googlevideo.com", "gvt1.com", "gvt2.com", "1e100.net", "windowsupdate.com",
	"avqs.mcafee.com", "avts.mcafee.com", "sophosxl.net", "e5.sk",
	"internal", "local", "home.arpa", "internal.cloudapp.net",
};

struct threshold_key {
	const char *name;
	size_t off;
	unsigned min, max, def;
};

#define TH(field, lo, hi, d) {#field, offsetof(struct rules_thresholds, field), lo, hi, d}
static const struct threshold_key threshold_keys[] = {
	TH(tunnel_min_queries, 1, 1000000, 8),
	TH(tunnel_window_s, 1, 86400, 60),
	TH(tunnel_score, 1, 100, 70),
	TH(tunnel_budget_hour, 1, 1u << 30, 4096),
	TH(tunnel_budget_day, 1, 1u << 30, 32768),
	TH(icmp_payload_max, 1, 65535, 128),
	TH(icmp_entropy_x100, 1, 800, 600),
	TH(icmp_volume_bytes, 1, 1u << 30, 8192),
	TH(icmp_distinct_data, 1, 16, 8),
	TH(icmp_distinct_data_hour, 1, 256, 60),
	TH(suppress_s, 1, 86400, 300),
};
#undef TH
#define N_THRESHOLDS (sizeof(threshold_keys) / sizeof(threshold_keys[0]))

static unsigned *th_field(struct rules_thresholds *t, const struct threshold_key *k)
{
	return (unsigned *)(void *)((char *)t + k->off);
}

/* ---- lists --------------------------------------------------------------- */

/* Fill the first-byte filter of rules.h from the entries. */
static void netlist_index(struct rules_netlist *l)
{
	memset(l->lead, 0, sizeof(l->lead));
	for (size_t i = 0; i < l->n; i++) {
		const struct rules_net *e = &l->v[i];
		unsigned bits = e->prefix < 8 ? e->prefix : 8;
		unsigned lo = e->addr[0] & (0xff00u >> bits) & 0xffu;
		uint64_t *set = l->lead[e->ipv == 6];
		for (unsigned b = lo; b < lo + (1u << (8 - bits)); b++)
			set[b / 64] |= 1ull << (b % 64);
	}
	l->lead_v = l->v;
	l->lead_n = l->n;
}

static int netlist_add(struct rules_netlist *l, const struct rules_net *n)
{
	struct rules_net *v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	v[l->n++] = *n;
	l->v = v;
	netlist_index(l);
	return 0;
}

static int strlist_add(struct rules_strlist *l, const char *s)
{
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
	size_t *len;
	if (!v)
		return -1;
	l->v = v;
	len = realloc(l->len, (l->n + 1) * sizeof(*len));
	if (!len)
		return -1;
	l->len = len;
	if (!(v[l->n] = strdup(s)))
		return -1;
	len[l->n] = strlen(s);
	l->n++;
	l->len_v = l->v;
	l->len_n = l->n;
	return 0;
}

static void netlist_clear(struct rules_netlist *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static void strlist_clear(struct rules_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->len);
	memset(l, 0, sizeof(*l));
}

void rules_free(struct rules *r)
{
	if (!r)
		return;
	free(r->path);
	netlist_clear(&r->sandbox);
	netlist_clear(&r->proxies);
	netlist_clear(&r->resolvers);
	netlist_clear(&r->destinations);
	strlist_clear(&r->domains);
	strlist_clear(&r->trusted_domains);
	netlist_clear(&r->metadata_addrs);
	strlist_clear(&r->metadata_names);
	free(r);
}

/* ---- addresses and names ------------------------------------------------- */

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* Decimal digits only (no sign, no spaces), at most maxdigits; -1 if not. */
static long parse_dec(const char *s, size_t n, size_t maxdigits)
{
	long v = 0;

	if (n == 0 || n > maxdigits)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int set_why(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* host[/prefix] of family ipv into out (addr and prefix). */
static int parse_host_prefix(const char *s, size_t n, int ipv, struct rules_net *out, char *why,
			     size_t whylen)
{
	char host[64];
	const char *slash = memchr(s, '/', n);
	size_t hl = slash ? (size_t)(slash - s) : n;
	unsigned maxp = ipv == 4 ? 32 : 128;
	long p = maxp;

	if (hl == 0 || hl >= sizeof(host))
		return set_why(why, whylen, "is not an address");
	memcpy(host, s, hl);
	host[hl] = '\0';
	memset(out->addr, 0, sizeof(out->addr));
	if (inet_pton(ipv == 4 ? AF_INET : AF_INET6, host, out->addr) != 1)
		return set_why(why, whylen, "is not an address");
	if (slash) {
		p = parse_dec(slash + 1, n - hl - 1, 3);
		if (p < 0)
			return set_why(why, whylen, "is not an address");
		if ((unsigned long)p > maxp)
			return set_why(why, whylen, "has a prefix length out of range (0..%u)", maxp);
	}
	out->ipv = (uint8_t)ipv;
	out->prefix = (uint8_t)p;
	/* Host bits set is almost always a typo for the network or for a host. */
	for (unsigned bit = (unsigned)p; bit < maxp; bit++) {
		if (out->addr[bit / 8] & (0x80u >> (bit % 8))) {
			struct rules_net net = *out;
			char buf[64];
			for (unsigned b = (unsigned)p; b < maxp; b++)
				net.addr[b / 8] &= (uint8_t) ~(0x80u >> (b % 8));
			net.port = 0;
			rules_net_format(&net, buf, sizeof(buf));
			return set_why(why, whylen, "has host bits set (the network is %s)", buf);
		}
	}
	return 0;
}

static int parse_port(const char *s, size_t n, struct rules_net *out, char *why, size_t whylen)
{
	long port = parse_dec(s, n, 5);

	if (port < 0)
		return set_why(why, whylen, "is not an address");
	if (port < 1 || port > 65535)
		return set_why(why, whylen, "has a port out of range (1..65535)");
	out->port = (uint16_t)port;
	return 0;
}

int rules_net_parse(const char *s, struct rules_net *out, char *why, size_t whylen)
{
	size_t n = strlen(s);
	const char *colon;
	struct rules_net net = {0};

	if (n == 0)
		return set_why(why, whylen, "is not an address");
	if (s[0] == '[') {
		/* [v6], [v6]:port, [v6/prefix]:port */
		const char *rb = memchr(s, ']', n);
		if (!rb)
			return set_why(why, whylen, "is not an address");
		if (!memchr(s + 1, ':', (size_t)(rb - s - 1)))
			return set_why(why, whylen, "is not an address (brackets are for IPv6)");
		if (parse_host_prefix(s + 1, (size_t)(rb - s - 1), 6, &net, why, whylen) < 0)
			return -1;
		if (rb[1] != '\0') {
			if (rb[1] != ':')
				return set_why(why, whylen, "is not an address");
			if (parse_port(rb + 2, n - (size_t)(rb + 2 - s), &net, why, whylen) < 0)
				return -1;
		}
	} else if ((colon = memchr(s, ':', n)) != NULL &&
		   memchr(colon + 1, ':', n - (size_t)(colon + 1 - s))) {
		/* two or more colons: IPv6 without a port ("[...]:port" for one) */
		if (parse_host_prefix(s, n, 6, &net, why, whylen) < 0)
			return -1;
	} else {
		size_t hl = colon ? (size_t)(colon - s) : n;
		if (parse_host_prefix(s, hl, 4, &net, why, whylen) < 0)
			return -1;
		if (colon && parse_port(colon + 1, n - hl - 1, &net, why, whylen) < 0)
			return -1;
	}
	*out = net;
	return 0;
}

size_t rules_net_format(const struct rules_net *n, char *dst, size_t cap)
{
	char a[64];
	int len;
	int full = n->prefix == (n->ipv == 4 ? 32 : 128);

	if (cap == 0)
		return 0;
	text_addr(a, sizeof(a), n->ipv, n->addr);
	if (n->ipv == 6 && n->port)
		len = full ? snprintf(dst, cap, "[%s]:%u", a, n->port)
			   : snprintf(dst, cap, "[%s/%u]:%u", a, n->prefix, n->port);
	else if (n->port)
		len = full ? snprintf(dst, cap, "%s:%u", a, n->port)
			   : snprintf(dst, cap, "%s/%u:%u", a, n->prefix, n->port);
	else
		len = full ? snprintf(dst, cap, "%s", a) : snprintf(dst, cap, "%s/%u", a, n->prefix);
	if (len < 0)
		return 0;
	return (size_t)len < cap ? (size_t)len : cap - 1;
}

static int name_char(int c)
{
	return (c >= 'a' && c <= 'z') || is_digit(c) || c == '-' || c == '_';
}

int rules_name_parse(const char *s, size_t len, int wildcard, char *out, size_t outlen, char *why,
		     size_t whylen)
{
	size_t o = 0, label = 0, start = 0;

	if (len && s[len - 1] == '.')
		len--;
	if (len >= 2 && s[0] == '*' && s[1] == '.') {
		if (!wildcard)
			return set_why(why, whylen,
				       "has a wildcard (only allow.domains takes \"*.\"; a zone "
				       "already covers its subdomains)");
		start = 2;
	}
	if (len - start == 0)
		return set_why(why, whylen, "is not a domain name (empty)");
	if (len - start > 253)
		return set_why(why, whylen, "is not a domain name (longer than 253 characters)");
	if (outlen < len + 1)
		return set_why(why, whylen, "is not a domain name (too long)");
	for (size_t i = 0; i < start; i++)
		out[o++] = s[i];
	for (size_t i = start; i < len; i++) {
		int c = ascii_lower((unsigned char)s[i]);
		if (c == '.') {
			if (label == 0)
				return set_why(why, whylen, "is not a domain name (empty label)");
			label = 0;
		} else if (name_char(c)) {
			if (++label > 63)
				return set_why(why, whylen,
					       "is not a domain name (a label is longer than 63 "
					       "characters)");
		} else if (c > 0x20 && c < 0x7f) {
			return set_why(why, whylen, "is not a domain name (bad character '%c')", c);
		} else {
			return set_why(why, whylen, "is not a domain name (bad character \\x%02x)",
				       (unsigned)c);
		}
		out[o++] = (char)c;
	}
	if (label == 0)
		return set_why(why, whylen, "is not a domain name (empty label)");
	out[o] = '\0';
	return 0;
}

/* ---- matching ------------------------------------------------------------ */

static int prefix_eq(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	/* byte by byte, not memcmp: nearly every address differs from an
	 * entry in its first byte, and this runs for every entry of a list
	 * on most packets and observations */
	for (unsigned i = 0; i < whole; i++)
		if (a[i] != b[i])
			return 0;
	if (rest) {
		uint8_t m = (uint8_t)(0xffu << (8 - rest));
		if ((a[whole] & m) != (b[whole] & m))
			return 0;
	}
	return 1;
}

static int net_match1(const struct rules_netlist *l, int ipv, const uint8_t *addr, uint16_t port)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct rules_net *e = &l->v[i];
		if (e->ipv != ipv)
			continue;
		if (e->port && port && e->port != port)
			continue;
		if (prefix_eq(e->addr, addr, e->prefix))
			return 1;
	}
	return 0;
}

/* Can an entry of l for family ipv match an address starting with byte
 * lead? 1 when the list has no filter (built by hand). */
static int lead_maybe(const struct rules_netlist *l, int ipv, uint8_t lead)
{
	if (l->lead_v != l->v || l->lead_n != l->n)
		return 1;
	return (int)(l->lead[ipv == 6][lead / 64] >> (lead % 64) & 1);
}

int rules_net_match(const struct rules_netlist *l, int ipv, const uint8_t *addr, uint16_t port)
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (!l || !addr || (ipv != 4 && ipv != 6))
		return 0;
	if (lead_maybe(l, ipv, addr[0]) && net_match1(l, ipv, addr, port))
		return 1;
	if (ipv == 6 && addr[0] == 0 && memcmp(addr, v4mapped, sizeof(v4mapped)) == 0)
		return lead_maybe(l, 4, addr[12]) && net_match1(l, 4, addr + 12, port);
	return 0;
}

/* Does name[0..len) end in zone[0..zl)? Compared from the end: the last
 * bytes tell almost every zone apart. */
static int tail_eq(const char *name, size_t len, const char *zone, size_t zl)
{
	if (zl > len)
		return 0;
	name += len - zl;
	for (size_t i = zl; i-- > 0;)
		if (ascii_lower((unsigned char)name[i]) != zone[i])
			return 0;
	return 1;
}

int rules_domain_match(const struct rules_strlist *l, const char *name, size_t len)
{
	const size_t *lens;

	if (!l || !name)
		return 0;
	if (len && name[len - 1] == '.')
		len--;
	if (len == 0)
		return 0;
	lens = l->len && l->len_v == l->v && l->len_n == l->n ? l->len : NULL;
	for (size_t i = 0; i < l->n; i++) {
		const char *z = l->v[i];
		size_t zl = lens ? lens[i] : strlen(z);
		if (zl >= 2 && z[0] == '*' && z[1] == '.') {
			/* ".example.org" at the end, with at least one label before */
			if (len > zl - 1 && tail_eq(name, len, z + 1, zl - 1))
				return 1;
		} else if (tail_eq(name, len, z, zl) && (len == zl || name[len - zl - 1] == '.')) {
			return 1;
		}
	}
	return 0;
}

/* ---- summary ------------------------------------------------------------- */

size_t rules_summary(const struct rules *r, char *dst, size_t cap)
{
	size_t o = 0;
	int n;

#define PUT(...)                                                                         \
	do {                                                                             \
		n = snprintf(dst + o, cap - o, __VA_ARGS__);                             \
		if (n < 0)                                                               \
			return o;                                                        \
		o += (size_t)n < cap - o ? (size_t)n : cap - o - 1;                      \
	} while (0)
#define PL(k, one, many) (k), (k) == 1 ? (one) : (many)

	if (cap == 0)
		return 0;
	dst[0] = '\0';
	if (r->has_sandbox)
		PUT("%zu sandbox %s, %zu %s, %zu %s, %zu %s, ", PL(r->sandbox.n, "network", "networks"),
		    PL(r->proxies.n, "proxy", "proxies"), PL(r->resolvers.n, "resolver", "resolvers"),
		    PL(r->destinations.n, "destination", "destinations"));
	else
		PUT("no sandbox, policy classes off, ");
	if (r->domains.n)
		PUT("%zu allowed %s, ", PL(r->domains.n, "domain", "domains"));
	else if (r->has_sandbox)
		PUT("any domain, ");
	if (r->has_sandbox)
		PUT("IPv6 %s, DNS over TCP %s, ", r->allow_ipv6 ? "allowed" : "denied",
		    r->allow_dns_over_tcp ? "allowed" : "denied");
	PUT("%zu trusted %s, %zu metadata %s", PL(r->trusted_domains.n, "zone", "zones"),
	    PL(r->metadata_addrs.n + r->metadata_names.n, "endpoint", "endpoints"));
#undef PL
#undef PUT
	return o;
}

/* ---- defaults as a struct ------------------------------------------------ */

static int set_defaults(struct rules *r)
{
	for (size_t i = 0; i < N_THRESHOLDS; i++)
		*th_field(&r->t, &threshold_keys[i]) = threshold_keys[i].def;
	for (size_t i = 0; i < sizeof(default_trusted) / sizeof(default_trusted[0]); i++)
		if (strlist_add(&r->trusted_domains, default_trusted[i]) < 0)
			return -1;
	for (size_t i = 0; i < sizeof(default_metadata) / sizeof(default_metadata[0]); i++) {
		struct rules_net net;
		if (rules_net_parse(default_metadata[i], &net, NULL, 0) == 0) {
			if (netlist_add(&r->metadata_addrs, &net) < 0)
				return -1;
		} else if (strlist_add(&r->metadata_names, default_metadata[i]) < 0) {
			return -1;
		}
	}
	return 0;
}

struct rules *rules_default(void)
{
	struct rules *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	if (!(r->path = strdup("(built-in)")) || set_defaults(r) < 0) {
		rules_free(r);
		return NULL;
	}
	return r;
}

/* ---- the loader ---------------------------------------------------------- */

struct ctx {
	const char *path;
	yaml_document_t *doc;
	struct rules *r;
	char *err;
	size_t errlen;
	unsigned long allow_line;      /* line of the allow key, 0 if absent */
	unsigned long th_line[N_THRESHOLDS]; /* lines of thresholds that were set */
};

static unsigned long node_line(const yaml_node_t *n)
{
	return (unsigned long)n->start_mark.line + 1;
}

static int fail(struct ctx *c, unsigned long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, unsigned long line, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(c->err, c->errlen, "%s:%lu: ", c->path, line);
	if (n < 0 || (size_t)n >= c->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int oom(struct ctx *c, const yaml_node_t *n)
{
	return fail(c, node_line(n), "out of memory");
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* The value of a scalar node, escaped and shortened for a message. */
static const char *shown(const yaml_node_t *n, char *buf, size_t cap)
{
	int cut = 0;
	size_t len = n->data.scalar.length, k;

	k = text_escape(buf, cap, n->data.scalar.value, len, &cut);
	if (cut && k >= 3)
		memcpy(buf + k - 3, "...", 4);
	return buf;
}

static const char *kind_name(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

static int is_null(const yaml_node_t *n)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	s = scalar(n);
	return !strcmp(s, "") || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

/* A scalar with no NUL byte inside, or an error naming the key. */
static int want_text(struct ctx *c, const char *key, const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE)
		return fail(c, node_line(n), "%s: want a single value, not %s", key, kind_name(n));
	if (strlen(scalar(n)) != n->data.scalar.length)
		return fail(c, node_line(n), "%s: value contains a NUL byte", key);
	return 0;
}

static int get_bool(struct ctx *c, const char *key, const yaml_node_t *n, int *out)
{
	static const char *const t[] = {"true", "True", "TRUE"}, *const f[] = {"false", "False", "FALSE"};
	char b[96];

	if (want_text(c, key, n) < 0)
		return -1;
	for (size_t i = 0; i < 3; i++) {
		if (!strcmp(scalar(n), t[i])) {
			*out = 1;
			return 0;
		}
		if (!strcmp(scalar(n), f[i])) {
			*out = 0;
			return 0;
		}
	}
	return fail(c, node_line(n), "%s: \"%s\" is not a boolean (true or false)", key,
		    shown(n, b, sizeof(b)));
}

/*
 * Iterate the items of a list value: a sequence, or null (an empty list).
 * Calls each(c, key, item) for every item.
 */
static int each_item(struct ctx *c, const char *key, const yaml_node_t *n,
		     int (*each)(struct ctx *, const char *, const yaml_node_t *, void *), void *arg)
{
	if (is_null(n))
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(c, node_line(n), "%s: want a list ([...]), not %s", key, kind_name(n));
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		const yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		if (!item)
			return fail(c, node_line(n), "%s: broken list", key);
		if (each(c, key, item, arg) < 0)
			return -1;
	}
	return 0;
}

enum net_flags { NET_NO_PORT = 1 };

/* Unquoted [fd00::1]:8080 reads as a mapping whose key is a list: say so. */
static const char *bracket_hint(struct ctx *c, const yaml_node_t *n)
{
	const yaml_node_t *k;

	if (n->type != YAML_MAPPING_NODE || n->data.mapping.pairs.start == n->data.mapping.pairs.top)
		return "";
	k = yaml_document_get_node(c->doc, n->data.mapping.pairs.start->key);
	if (!k || k->type != YAML_SEQUENCE_NODE)
		return "";
	return " (quote an IPv6 address with a port: \"[fd00::1]:8080\")";
}

struct net_arg {
	struct rules_netlist *l;
	unsigned flags;
};

static int add_net(struct ctx *c, const char *key, const yaml_node_t *n, void *arg)
{
	struct net_arg *a = arg;
	struct rules_net net;
	char why[128], b[96];

	if (n->type != YAML_SCALAR_NODE)
		return fail(c, node_line(n), "%s: want an address, not %s%s", key, kind_name(n),
			    bracket_hint(c, n));
	if (want_text(c, key, n) < 0)
		return -1;
	if (rules_net_parse(scalar(n), &net, why, sizeof(why)) < 0)
		return fail(c, node_line(n), "%s: \"%s\" %s", key, shown(n, b, sizeof(b)), why);
	if ((a->flags & NET_NO_PORT) && net.port)
		return fail(c, node_line(n), "%s: \"%s\" has a port (a sandbox network has none)",
			    key, shown(n, b, sizeof(b)));
	if (netlist_add(a->l, &net) < 0)
		return oom(c, n);
	return 0;
}

struct name_arg {
	struct rules_strlist *l;
	int wildcard;
};

static int add_name(struct ctx *c, const char *key, const yaml_node_t *n, void *arg)
{
	struct name_arg *a = arg;
	char name[256], why[160], b[96];

	if (n->type != YAML_SCALAR_NODE)
		return fail(c, node_line(n), "%s: want a domain name, not %s", key, kind_name(n));
	if (want_text(c, key, n) < 0)
		return -1;
	if (rules_name_parse(scalar(n), n->data.scalar.length, a->wildcard, name, sizeof(name), why,
			     sizeof(why)) < 0)
		return fail(c, node_line(n), "%s: \"%s\" %s", key, shown(n, b, sizeof(b)), why);
	if (strlist_add(a->l, name) < 0)
		return oom(c, n);
	return 0;
}

/* Looks like an attempt at an address rather than a name. */
static int addr_like(const char *s)
{
	int only_num = 1;

	for (; *s; s++) {
		if (*s == ':' || *s == '/' || *s == '[' || *s == ']')
			return 1;
		if (!is_digit((unsigned char)*s) && *s != '.')
			only_num = 0;
	}
	return only_num;
}

static int add_metadata(struct ctx *c, const char *key, const yaml_node_t *n, void *arg)
{
	struct rules_net net;
	struct name_arg na = {&c->r->metadata_names, 0};
	char why[128], b[96];

	(void)arg;
	if (n->type != YAML_SCALAR_NODE)
		return fail(c, node_line(n), "%s: want an address or a name, not %s", key,
			    kind_name(n));
	if (want_text(c, key, n) < 0)
		return -1;
	if (rules_net_parse(scalar(n), &net, why, sizeof(why)) == 0) {
		if (netlist_add(&c->r->metadata_addrs, &net) < 0)
			return oom(c, n);
		return 0;
	}
	if (addr_like(scalar(n)))
		return fail(c, node_line(n), "%s: \"%s\" %s", key, shown(n, b, sizeof(b)), why);
	return add_name(c, key, n, &na);
}

/*
 * A mapping section: check the keys (scalars, no duplicates, known) and call
 * the handler of each. keys is a NULL-terminated list of names; handle gets
 * the index of the key.
 */
typedef int (*key_fn)(struct ctx *c, size_t idx, const yaml_node_t *k, const yaml_node_t *v);

static int each_pair(struct ctx *c, const char *section, const yaml_node_t *n,
		     const char *const *keys, const char *want, key_fn handle)
{
	char b[96];
	const char *prefix = section ? section : "";
	const char *sep = section ? ": " : "";

	if (is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return fail(c, node_line(n), "%s%swant a mapping (key: value), not %s", prefix, sep,
			    kind_name(n));
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		size_t idx;

		if (!k || !v)
			return fail(c, node_line(n), "%s%sbroken mapping", prefix, sep);
		if (k->type != YAML_SCALAR_NODE)
			return fail(c, node_line(k), "%s%sa key must be a name, not %s", prefix, sep,
				    kind_name(k));
		for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
			const yaml_node_t *k2 = yaml_document_get_node(c->doc, q->key);
			if (k2 && k2->type == YAML_SCALAR_NODE &&
			    k2->data.scalar.length == k->data.scalar.length &&
			    !memcmp(k2->data.scalar.value, k->data.scalar.value, k->data.scalar.length))
				return fail(c, node_line(k),
					    "%s%sduplicate key \"%s\" (first on line %lu)", prefix,
					    sep, shown(k, b, sizeof(b)), node_line(k2));
		}
		for (idx = 0; keys[idx]; idx++)
			if (strlen(keys[idx]) == k->data.scalar.length && !strcmp(keys[idx], scalar(k)))
				break;
		if (!keys[idx])
			return fail(c, node_line(k), "%s%sunknown key \"%s\" (want %s)", prefix, sep,
				    shown(k, b, sizeof(b)), want);
		if (handle(c, idx, k, v) < 0)
			return -1;
	}
	return 0;
}

/* sandbox: networks */
static const char *const sandbox_keys[] = {"networks", NULL};

static int sandbox_key(struct ctx *c, size_t idx, const yaml_node_t *k, const yaml_node_t *v)
{
	struct net_arg a = {&c->r->sandbox, NET_NO_PORT};

	(void)idx;
	(void)k;
	if (each_item(c, "sandbox.networks", v, add_net, &a) < 0)
		return -1;
	if (c->r->sandbox.n == 0)
		return fail(c, node_line(v),
			    "sandbox.networks: empty (remove the sandbox section to turn the "
			    "policy classes off)");
	return 0;
}

/* allow: proxies resolvers destinations domains ipv6 dns_over_tcp */
static const char *const allow_keys[] = {"proxies", "resolvers", "destinations", "domains",
					 "ipv6", "dns_over_tcp", NULL};

static int allow_key(struct ctx *c, size_t idx, const yaml_node_t *k, const yaml_node_t *v)
{
	struct rules *r = c->r;
	struct net_arg na = {NULL, 0};
	struct name_arg da = {&r->domains, 1};

	(void)k;
	switch (idx) {
	case 0:
		na.l = &r->proxies;
		return each_item(c, "allow.proxies", v, add_net, &na);
	case 1:
		na.l = &r->resolvers;
		return each_item(c, "allow.resolvers", v, add_net, &na);
	case 2:
		na.l = &r->destinations;
		return each_item(c, "allow.destinations", v, add_net, &na);
	case 3:
		return each_item(c, "allow.domains", v, add_name, &da);
	case 4:
		return get_bool(c, "allow.ipv6", v, &r->allow_ipv6);
	default:
		return get_bool(c, "allow.dns_over_tcp", v, &r->allow_dns_over_tcp);
	}
}

static const char *const *threshold_names(void)
{
	static const char *const names[N_THRESHOLDS + 1] = {
		"tunnel_min_queries", "tunnel_window_s",   "tunnel_score",
		"tunnel_budget_hour", "tunnel_budget_day", "icmp_payload_max",
		"icmp_entropy_x100",  "icmp_volume_bytes", "icmp_distinct_data",
		"icmp_distinct_data_hour", "suppress_s", NULL};
	return names;
}

static int threshold_key(struct ctx *c, size_t idx, const yaml_node_t *k, const yaml_node_t *v)
{
	const struct threshold_key *t = &threshold_keys[idx];
	char key[64], b[96];
	long val;

	(void)k;
	snprintf(key, sizeof(key), "thresholds.%s", t->name);
	if (want_text(c, key, v) < 0)
		return -1;
	val = parse_dec(scalar(v), v->data.scalar.length, 10);
	if (val < 0)
		return fail(c, node_line(v), "%s: \"%s\" is not a whole number", key,
			    shown(v, b, sizeof(b)));
	if (val < (long)t->min || val > (long)t->max)
		return fail(c, node_line(v), "%s: %ld is out of range (%u..%u)", key, val, t->min,
			    t->max);
	*th_field(&c->r->t, t) = (unsigned)val;
	c->th_line[idx] = node_line(v);
	return 0;
}

/* Cross-checks between thresholds, at the line of the one that was set. */
static int thresholds_check(struct ctx *c)
{
	const struct rules_thresholds *t = &c->r->t;
	size_t ih = 3, id = 4; /* tunnel_budget_hour, tunnel_budget_day */

	if (t->tunnel_budget_day < t->tunnel_budget_hour) {
		unsigned long line = c->th_line[id] ? c->th_line[id] : c->th_line[ih];
		return fail(c, line,
			    "thresholds: tunnel_budget_day (%u) is less than tunnel_budget_hour (%u)",
			    t->tunnel_budget_day, t->tunnel_budget_hour);
	}
	return 0;
}

/* The top level. */
static const char *const top_keys[] = {"sandbox", "allow", "trusted_domains", "metadata",
				       "thresholds", NULL};

static int top_key(struct ctx *c, size_t idx, const yaml_node_t *k, const yaml_node_t *v)
{
	struct rules *r = c->r;
	struct name_arg ta = {&r->trusted_domains, 0};

	switch (idx) {
	case 0:
		r->has_sandbox = 1;
		if (is_null(v) || (v->type == YAML_MAPPING_NODE && v->data.mapping.pairs.start ==
								      v->data.mapping.pairs.top))
			return fail(c, node_line(k), "sandbox: missing networks");
		if (each_pair(c, "sandbox", v, sandbox_keys, "networks", sandbox_key) < 0)
			return -1;
		return 0;
	case 1:
		c->allow_line = node_line(k);
		return each_pair(c, "allow", v, allow_keys,
				 "proxies, resolvers, destinations, domains, ipv6 or dns_over_tcp",
				 allow_key);
	case 2:
		strlist_clear(&r->trusted_domains);
		return each_item(c, "trusted_domains", v, add_name, &ta);
	case 3:
		netlist_clear(&r->metadata_addrs);
		strlist_clear(&r->metadata_names);
		return each_item(c, "metadata", v, add_metadata, NULL);
	default:
		if (each_pair(c, "thresholds", v, threshold_names(),
			      "tunnel_min_queries, tunnel_window_s, tunnel_score, tunnel_budget_hour, "
			      "tunnel_budget_day, icmp_payload_max, icmp_entropy_x100, "
			      "icmp_volume_bytes, icmp_distinct_data, icmp_distinct_data_hour or "
			      "suppress_s",
			      threshold_key) < 0)
			return -1;
		return thresholds_check(c);
	}
}

/* libyaml's own error: problem, line, and what it was parsing. */
static void yaml_fail(struct ctx *c, const yaml_parser_t *p, const unsigned char *buf, size_t len)
{
	unsigned long line;
	const char *problem = p->problem ? p->problem : "cannot parse YAML";

	if (p->error == YAML_READER_ERROR) {
		/* reader errors have an offset, not a mark */
		line = 1;
		for (size_t i = 0; i < p->problem_offset && i < len; i++)
			line += buf[i] == '\n';
		fail(c, line, "%s (byte %zu)", problem, p->problem_offset);
		return;
	}
	line = (unsigned long)p->problem_mark.line + 1;
	if (p->error == YAML_MEMORY_ERROR)
		fail(c, line, "out of memory");
	else if (p->context)
		fail(c, line, "%s (%s on line %lu)%s", problem, p->context,
		     (unsigned long)p->context_mark.line + 1,
		     /* an unquoted "*.example.org" starts an alias */
		     !strcmp(p->context, "while scanning an alias")
			     ? "; quote a name that starts with '*': \"*.example.org\""
			     : "");
	else
		fail(c, line, "%s", problem);
}

static int read_file(const char *path, unsigned char **out, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0;
	int rc = -1;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t got;
		if (n == cap) {
			unsigned char *nb;
			/* (one byte past the limit tells a file of exactly
			 * RULES_MAX_BYTES from a larger one) */
			if (cap > RULES_MAX_BYTES) {
				snprintf(err, errlen, "%s: larger than %u bytes; not a rules file?",
					 path, RULES_MAX_BYTES);
				goto out;
			}
			cap = cap ? cap * 2 : 8192;
			if (cap > RULES_MAX_BYTES)
				cap = RULES_MAX_BYTES + 1;
			if (!(nb = realloc(buf, cap + 1))) {
				snprintf(err, errlen, "%s: out of memory", path);
				goto out;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : EIO));
		goto out;
	}
	if (!buf && !(buf = malloc(1))) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	fclose(f);
	return rc;
}

int rules_load(const char *path, struct rules **out, char *err, size_t errlen)
{
	static char dummy[1];
	struct ctx c = {0};
	yaml_parser_t parser;
	yaml_document_t doc, extra;
	int have_parser = 0, have_doc = 0, rc = -1;
	unsigned char *buf = NULL;
	size_t len = 0;
	const yaml_node_t *root;

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	*out = NULL;
	c.path = path;
	c.err = err;
	c.errlen = errlen;
	c.doc = &doc;
	if (read_file(path, &buf, &len, err, errlen) < 0)
		goto out;
	if (!(c.r = calloc(1, sizeof(*c.r))) || !(c.r->path = strdup(path)) ||
	    set_defaults(c.r) < 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	have_parser = 1;
	yaml_parser_set_input_string(&parser, buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_fail(&c, &parser, buf, len);
		goto out;
	}
	have_doc = 1;
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		fail(&c, 1, "empty rules file (write {} for the built-in defaults)");
		goto out;
	}
	if (root->type != YAML_MAPPING_NODE) {
		fail(&c, node_line(root),
		     "want a mapping of sections (sandbox, allow, trusted_domains, metadata, "
		     "thresholds), not %s",
		     kind_name(root));
		goto out;
	}
	/* A second document would be silently ignored: refuse it. */
	if (!yaml_parser_load(&parser, &extra)) {
		yaml_fail(&c, &parser, buf, len);
		goto out;
	}
	if (yaml_document_get_root_node(&extra)) {
		fail(&c, (unsigned long)extra.start_mark.line + 1,
		     "a second YAML document (one rules document per file)");
		yaml_document_delete(&extra);
		goto out;
	}
	yaml_document_delete(&extra);
	if (each_pair(&c, NULL, root, top_keys,
		      "sandbox, allow, trusted_domains, metadata or thresholds", top_key) < 0)
		goto out;
	if (c.allow_line && !c.r->has_sandbox) {
		fail(&c, c.allow_line,
		     "allow: no sandbox section (the allow list judges only sandbox traffic; add "
		     "sandbox.networks)");
		goto out;
	}
	*out = c.r;
	c.r = NULL;
	rc = 0;
out:
	if (have_doc)
		yaml_document_delete(&doc);
	if (have_parser)
		yaml_parser_delete(&parser);
	rules_free(c.r);
	free(buf);
	return rc;
}
