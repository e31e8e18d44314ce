/*
 * test_egress.c - the egress detectors (analyzers/detect_egress.h and
 * analyzers/detect_icmp_tunnel.h) on synthetic packets and observations,
 * with a test emit that records every alert: for each class a positive and
 * the negatives at its edges, the policy classes off without a sandbox
 * section while doh and icmp_tunnel still run, allowed proxies, resolvers
 * and destinations raising nothing, and proxy_denied's stated outcome.
 *
 * The rules are built by hand (struct rules), so these tests depend on the
 * loader only through rules_net_match and rules_domain_match; one test at
 * the end loads the same layout from YAML to tie the two together.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../analyzers/detect_egress.h"
#include "../../analyzers/detect_icmp_tunnel.h"
#include "../../analyzers/module.h"
#include "../../sensor/flow.h"
#include "../../sensor/record.h"
#include "../../sensor/rules.h"
#include "../../sensor/text.h"
#include "alert_rec.h"
#include "check.h"

/* ---- the recording emit: R, E (alert_rec.h) ------------------------------ */

/* Alerts of class cls recorded since the last reset. */
static int count(const char *cls)
{
	int n = 0;
	for (int i = 0; i < R.n; i++)
		if (strcmp(R.a[i].class, cls) == 0)
			n++;
	return n;
}

/* The first alert of class cls, or NULL. */
static const struct got *first(const char *cls)
{
	for (int i = 0; i < R.n; i++)
		if (strcmp(R.a[i].class, cls) == 0)
			return &R.a[i];
	return NULL;
}

static void reset(void)
{
	R.n = 0;
}

/* ---- rules by hand --------------------------------------------------------- */

static struct rules_net net(const char *addr, unsigned prefix, unsigned port)
{
	struct rules_net n = {0};

	if (inet_pton(AF_INET, addr, n.addr) == 1) {
		n.ipv = 4;
	} else {
		n.ipv = 6;
		if (inet_pton(AF_INET6, addr, n.addr) != 1)
			abort();
	}
	n.prefix = (uint8_t)prefix;
	n.port = (uint16_t)port;
	return n;
}

static struct rules_net sandbox_nets[2], proxy_nets[2], resolver_nets[2], dest_nets[2];
static char dom1[] = "example.org", dom2[] = "*.api.example.com";
static char *domain_v[] = {dom1, dom2};

static void thresholds(struct rules *r)
{
	r->t.icmp_payload_max = 128;
	r->t.icmp_entropy_x100 = 600;
	r->t.icmp_volume_bytes = 8192;
	r->t.icmp_distinct_data = 8;
	r->t.icmp_distinct_data_hour = 60;
	r->t.suppress_s = 300;
}

/*
 * The layout: sandbox 10.99.0.0/24 and fd00:99::/64; proxies 10.99.0.2:8080
 * (inside) and 10.98.0.2:3128 (outside); resolvers 10.99.0.53 and
 * 10.98.0.53; destinations 203.0.113.0/24 port 443 and 192.0.2.10 (any
 * port). Domains empty unless a test sets them.
 */
static void sandbox_rules(struct rules *r)
{
	memset(r, 0, sizeof(*r));
	sandbox_nets[0] = net("10.99.0.0", 24, 0);
	sandbox_nets[1] = net("fd00:99::", 64, 0);
	proxy_nets[0] = net("10.99.0.2", 32, 8080);
	proxy_nets[1] = net("10.98.0.2", 32, 3128);
	resolver_nets[0] = net("10.99.0.53", 32, 0);
	resolver_nets[1] = net("10.98.0.53", 32, 0);
	dest_nets[0] = net("203.0.113.0", 24, 443);
	dest_nets[1] = net("192.0.2.10", 32, 0);
	r->path = "(test)";
	r->has_sandbox = 1;
	r->sandbox = (struct rules_netlist){.v = sandbox_nets, .n = 2};
	r->proxies = (struct rules_netlist){.v = proxy_nets, .n = 2};
	r->resolvers = (struct rules_netlist){.v = resolver_nets, .n = 2};
	r->destinations = (struct rules_netlist){.v = dest_nets, .n = 2};
	thresholds(r);
}

static void bare_rules(struct rules *r)
{
	memset(r, 0, sizeof(*r));
	r->path = "(test)";
	thresholds(r);
}

/* ---- packets and observations --------------------------------------------- */

static uint64_t next_flow_id = 1;

struct tpkt {
	struct pkt p;
	struct flow f;
};

/* A packet from src to dst (text addresses) with its own new flow. */
static void mk(struct tpkt *t, unsigned proto, const char *src, unsigned sport, const char *dst,
	       unsigned dport, unsigned tcp_flags)
{
	memset(t, 0, sizeof(*t));
	if (inet_pton(AF_INET, src, t->p.src) == 1) {
		t->p.ipv = 4;
		if (inet_pton(AF_INET, dst, t->p.dst) != 1)
			abort();
	} else {
		t->p.ipv = 6;
		if (inet_pton(AF_INET6, src, t->p.src) != 1 ||
		    inet_pton(AF_INET6, dst, t->p.dst) != 1)
			abort();
	}
	t->p.proto = (uint8_t)proto;
	t->p.sport = (uint16_t)sport;
	t->p.dport = (uint16_t)dport;
	t->p.tcp_flags = (uint8_t)tcp_flags;
	t->p.ts_us = 1700000000000000ull;
	t->p.caplen = t->p.wirelen = 100;
	t->f.id = next_flow_id++;
	t->p.flow = &t->f;
	t->p.dir = 0;
}

struct mod {
	const struct module *m;
	void *state;
};

static void mod_open(struct mod *md, const struct module *m, const struct rules *r)
{
	struct module_env env = {.rules = r};

	md->m = m;
	md->state = NULL;
	CHECK_EQ(m->init(&env, &md->state), 0);
}

static void mod_close(struct mod *md)
{
	md->m->fini(md->state);
	md->state = NULL;
}

static void pkt_in(struct mod *md, const struct pkt *p)
{
	md->m->on_packet(md->state, p, &E);
}

static void obs_in(struct mod *md, const struct obs *o)
{
	if (md->m->obs_mask & (1u << o->kind))
		md->m->on_obs(md->state, o, &E);
}

/* A TCP SYN from src to dst:dport, through the module. */
static void syn(struct mod *md, const char *src, const char *dst, unsigned dport)
{
	struct tpkt t;
	mk(&t, IPPROTO_TCP, src, 40000, dst, dport, TH_SYN);
	pkt_in(md, &t.p);
}

static void udp(struct mod *md, const char *src, const char *dst, unsigned dport)
{
	struct tpkt t;
	mk(&t, IPPROTO_UDP, src, 40000, dst, dport, 0);
	pkt_in(md, &t.p);
}

/* A packet that joins no flow, with flags (PKT_L4_BAD, PKT_FRAGMENT: what
 * decode and the core hand on for broken headers and lost fragments). */
static void flowless(struct mod *md, unsigned proto, const char *src, unsigned sport,
		     const char *dst, unsigned dport, unsigned flags)
{
	struct tpkt t;

	mk(&t, proto, src, sport, dst, dport, 0);
	t.p.flags = flags;
	t.p.flow = NULL;
	pkt_in(md, &t.p);
}

static char infobuf[4096];

/* An HTTP request observation with its detail record. */
static void http_req(struct mod *md, const struct pkt *p, const char *method, const char *target,
		     const char *host, const char *upgrade)
{
	struct rec r;

	rec_init(&r, infobuf, sizeof(infobuf));
	rec_str(&r, "req");
	rec_str(&r, method);
	rec_str(&r, target);
	rec_str(&r, "HTTP/1.1");
	rec_str(&r, host);
	rec_str(&r, "curl/8.0");
	rec_str(&r, upgrade);
	rec_str(&r, upgrade[0] ? "Upgrade" : "");
	rec_str(&r, "");
	rec_str(&r, "0");
	rec_str(&r, "0");
	rec_str(&r, "0");
	rec_str(&r, "");
	rec_str(&r, "");
	rec_str(&r, "0");
	rec_end(&r);
	struct obs o = {
		.kind = OBS_HTTP_REQUEST, .pkt = p, .name = host, .name_len = strlen(host),
		.aux = target, .aux_len = strlen(target), .info = infobuf, .info_len = r.len,
	};
	obs_in(md, &o);
}

/* An HTTP response observation (p from the server) paired with a request. */
static void http_resp(struct mod *md, const struct pkt *p, unsigned status, const char *method,
		      const char *host, const char *target)
{
	struct rec r;

	rec_init(&r, infobuf, sizeof(infobuf));
	rec_str(&r, "resp");
	rec_str(&r, "HTTP/1.1");
	rec_u64(&r, status);
	rec_str(&r, "Forbidden");
	rec_str(&r, "153");
	rec_str(&r, "");
	rec_str(&r, "");
	rec_str(&r, "nginx");
	rec_str(&r, "");
	rec_str(&r, method);
	rec_str(&r, host);
	rec_str(&r, target);
	rec_str(&r, "");
	rec_str(&r, "0");
	rec_end(&r);
	struct obs o = {
		.kind = OBS_HTTP_RESPONSE, .pkt = p, .name = host, .name_len = strlen(host),
		.aux = target, .aux_len = strlen(target), .type = (uint16_t)status,
		.info = infobuf, .info_len = r.len,
	};
	obs_in(md, &o);
}

static void name_obs(struct mod *md, enum obs_kind kind, const struct pkt *p, const char *name,
		     unsigned flags)
{
	struct obs o = {
		.kind = kind, .pkt = p, .name = name, .name_len = strlen(name), .flags = flags,
	};
	obs_in(md, &o);
}

/* An ICMP/ICMPv6 observation: type, payload size, entropy x100. */
static void icmp_obs(struct mod *md, const struct pkt *p, unsigned type, unsigned size, int ent)
{
	struct rec r;

	rec_init(&r, infobuf, sizeof(infobuf));
	rec_u64(&r, p->ipv);
	rec_u64(&r, type);
	rec_u64(&r, 0);
	rec_str(&r, "echo");
	rec_u64(&r, 7);
	rec_u64(&r, 1);
	rec_u64(&r, size);
	if (ent >= 0)
		rec_u64(&r, (uint64_t)ent);
	else
		rec_str(&r, "");
	for (int i = 0; i < 6; i++)
		rec_str(&r, "");
	rec_str(&r, "0");
	rec_str(&r, "");
	rec_str(&r, "0");
	rec_str(&r, "");
	rec_str(&r, "");
	rec_end(&r);
	struct obs o = {
		.kind = OBS_ICMP, .pkt = p, .name = "", .type = (uint16_t)type, .size = size,
		.info = infobuf, .info_len = r.len,
	};
	obs_in(md, &o);
}

static void ping(struct mod *md, const char *src, const char *dst, unsigned type, unsigned size,
		 int ent)
{
	struct tpkt t;
	mk(&t, strchr(src, ':') ? IPPROTO_ICMPV6 : IPPROTO_ICMP, src, 0, dst, 0, 0);
	icmp_obs(md, &t.p, type, size, ent);
}

#define SBX "10.99.0.10"
#define SBX6 "fd00:99::10"
#define OUT "198.51.100.7"
#define OUT6 "2001:db8::1"

/* ---- the descriptors ------------------------------------------------------- */

static void test_descriptors(void)
{
	CHECK_STR(detect_egress_module.name, "detect_egress");
	CHECK(detect_egress_module.on_packet && detect_egress_module.on_obs);
	CHECK(detect_egress_module.obs_mask & (1u << OBS_HTTP_RESPONSE));
	CHECK(detect_egress_module.obs_mask & (1u << OBS_ICMP));
	CHECK_STR(detect_icmp_tunnel_module.name, "detect_icmp_tunnel");
	CHECK_EQ(detect_icmp_tunnel_module.obs_mask, 1u << OBS_ICMP);
	CHECK(detect_icmp_tunnel_module.on_packet == NULL);

	struct module_env env = {0};
	void *st = NULL;
	CHECK(detect_egress_module.init(&env, &st) < 0); /* no rules */
	CHECK(detect_icmp_tunnel_module.init(&env, &st) < 0);
	detect_egress_module.fini(NULL);
	detect_icmp_tunnel_module.fini(NULL);
}

/* ---- doh names -------------------------------------------------------------- */

static void test_doh_names(void)
{
	static const char *const yes[] = {
		"dns.google", "DNS.Google", "dns.google.", "dns.google:443", "8888.dns.google",
		"cloudflare-dns.com", "mozilla.cloudflare-dns.com", "one.one.one.one",
		"dns.quad9.net", "doh.opendns.com", "dns.nextdns.io", "abc123.dns.nextdns.io",
		"doh.cleanbrowsing.org", "dns.adguard-dns.com", "[dns.google]:443",
	};
	static const char *const no[] = {
		"google", "xdns.google", "dns.google.example", "google.com", "cloudflare.com",
		"notcloudflare-dns.com", "one.one.one", "quad9.net", "opendns.com", "", ".",
	};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK(detect_egress_doh_name(yes[i], strlen(yes[i])) == 1);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK(detect_egress_doh_name(no[i], strlen(no[i])) == 0);
	CHECK(detect_egress_doh_name(NULL, 0) == 0);
}

/* ---- proxy_bypass ----------------------------------------------------------- */

static void test_proxy_bypass(void)
{
	struct rules r;
	struct mod md;
	struct tpkt t;

	sandbox_rules(&r);
	mod_open(&md, &detect_egress_module, &r);

	reset();
	syn(&md, SBX, OUT, 80);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK_STR(R.a[0].subject, "198.51.100.7:80");
	CHECK_EQ(R.a[0].severity, 4);
	CHECK_STR(R.a[0].src, SBX);
	CHECK_STR(R.a[0].outcome, ""); /* from the flow */

	/* once per flow: a retransmitted SYN adds nothing, a new flow does */
	reset();
	mk(&t, IPPROTO_TCP, SBX, 40001, OUT, 443, TH_SYN);
	pkt_in(&md, &t.p);
	pkt_in(&md, &t.p);
	CHECK_EQ(count("proxy_bypass"), 1);
	syn(&md, SBX, OUT, 443);
	CHECK_EQ(count("proxy_bypass"), 2);

	/* IPv6 literal subject */
	reset();
	r.allow_ipv6 = 1;
	syn(&md, SBX6, OUT6, 443);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK_STR(R.a[0].subject, "[2001:db8::1]:443");
	CHECK_EQ(count("ipv6_egress"), 0);
	r.allow_ipv6 = 0;

	/* not a connection start: SYN+ACK, ACK, RST, data */
	reset();
	mk(&t, IPPROTO_TCP, SBX, 40000, OUT, 80, TH_SYN | TH_ACK);
	pkt_in(&md, &t.p);
	mk(&t, IPPROTO_TCP, SBX, 40000, OUT, 80, TH_ACK);
	pkt_in(&md, &t.p);
	mk(&t, IPPROTO_TCP, SBX, 40000, OUT, 80, TH_ACK | TH_PUSH);
	pkt_in(&md, &t.p);
	CHECK_EQ(R.n, 0);

	/* allowed: the proxies (on their port), destinations, inside the sandbox */
	reset();
	syn(&md, SBX, "10.98.0.2", 3128);
	syn(&md, SBX, "10.99.0.2", 8080);
	syn(&md, SBX, "203.0.113.5", 443);
	syn(&md, SBX, "192.0.2.10", 8443);
	syn(&md, SBX, "10.99.0.20", 22);
	syn(&md, SBX, "10.99.0.255", 5000);
	CHECK_EQ(R.n, 0);
	/* the edges: the proxy's address on another port, a destination on
	 * another port, just outside the sandbox network */
	syn(&md, SBX, "10.98.0.2", 3129);
	syn(&md, SBX, "203.0.113.5", 80);
	syn(&md, SBX, "10.99.1.0", 22);
	syn(&md, SBX, "192.0.2.11", 443);
	CHECK_EQ(count("proxy_bypass"), 4);
	CHECK_EQ(R.n, 4);

	/* not judged: from outside, from the proxy or resolver themselves,
	 * from just outside the sandbox network */
	reset();
	syn(&md, OUT, SBX, 22);
	syn(&md, "10.99.0.2", OUT, 443);
	syn(&md, "10.99.0.53", OUT, 443);
	syn(&md, "10.99.1.10", OUT, 443);
	CHECK_EQ(R.n, 0);

	/* without a sandbox section: off */
	reset();
	r.has_sandbox = 0;
	syn(&md, SBX, OUT, 80);
	CHECK_EQ(R.n, 0);
	mod_close(&md);
}

/* ---- udp_egress ------------------------------------------------------------- */

static void test_udp_egress(void)
{
	struct rules r;
	struct mod md;
	struct tpkt t;

	sandbox_rules(&r);
	mod_open(&md, &detect_egress_module, &r);

	reset();
	udp(&md, SBX, OUT, 9999);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(count("udp_egress"), 1);
	CHECK_STR(R.a[0].subject, "198.51.100.7:9999");
	CHECK_EQ(R.a[0].severity, 4);

	/* DNS to a resolver that is not allowed is udp_egress too */
	reset();
	udp(&md, SBX, "8.8.8.8", 53);
	CHECK_EQ(count("udp_egress"), 1);
	CHECK_STR(R.a[0].subject, "8.8.8.8:53");

	/* once per flow */
	reset();
	mk(&t, IPPROTO_UDP, SBX, 5353, OUT, 4000, 0);
	pkt_in(&md, &t.p);
	pkt_in(&md, &t.p);
	pkt_in(&md, &t.p);
	CHECK_EQ(count("udp_egress"), 1);

	/* allowed: the resolvers (DNS), destinations, inside, multicast,
	 * broadcast */
	reset();
	udp(&md, SBX, "10.98.0.53", 53);
	udp(&md, SBX, "10.99.0.53", 53);
	udp(&md, SBX, "192.0.2.10", 123);
	udp(&md, SBX, "10.99.0.20", 9999);
	udp(&md, SBX, "224.0.0.251", 5353);
	udp(&md, SBX, "239.255.255.250", 1900);
	udp(&md, SBX, "255.255.255.255", 67);
	CHECK_EQ(R.n, 0);
	/* edges: a resolver takes DNS, not NTP; a destination's port */
	udp(&md, SBX, "10.98.0.53", 123);
	udp(&md, SBX, "203.0.113.5", 53);
	CHECK_EQ(count("udp_egress"), 2);

	/* a reply from the sandbox to a flow started outside is not egress */
	reset();
	mk(&t, IPPROTO_UDP, SBX, 53, OUT, 40000, 0);
	t.p.dir = 1;
	pkt_in(&md, &t.p);
	udp(&md, OUT, SBX, 9999);
	CHECK_EQ(R.n, 0);

	reset();
	r.has_sandbox = 0;
	udp(&md, SBX, OUT, 9999);
	CHECK_EQ(R.n, 0);
	mod_close(&md);
}

/* ---- icmp_egress ------------------------------------------------------------ */

static void test_icmp_egress(void)
{
	struct rules r;
	struct mod md;
	struct tpkt t;

	sandbox_rules(&r);
	mod_open(&md, &detect_egress_module, &r);

	reset();
	ping(&md, SBX, OUT, 8, 56, 500);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(count("icmp_egress"), 1);
	CHECK_STR(R.a[0].subject, OUT);

	/* once per echo flow */
	reset();
	mk(&t, IPPROTO_ICMP, SBX, 0, OUT, 0, 0);
	icmp_obs(&md, &t.p, 8, 56, 500);
	icmp_obs(&md, &t.p, 8, 56, 500);
	CHECK_EQ(count("icmp_egress"), 1);

	/* not egress: replies, errors, inside, allowed, from outside,
	 * broadcast, the packet path (ICMP is judged from observations) */
	reset();
	ping(&md, SBX, OUT, 0, 56, 500);
	ping(&md, SBX, OUT, 3, 28, 0);
	ping(&md, SBX, "10.99.0.20", 8, 56, 500);
	ping(&md, SBX, "192.0.2.10", 8, 56, 500);
	ping(&md, SBX, "10.98.0.53", 8, 56, 500);
	ping(&md, OUT, SBX, 8, 56, 500);
	ping(&md, SBX, "255.255.255.255", 8, 56, 500);
	mk(&t, IPPROTO_ICMP, SBX, 0, OUT, 0, 0);
	pkt_in(&md, &t.p);
	CHECK_EQ(R.n, 0);

	/* ICMPv6 echo: icmp_egress and (IPv6 not allowed) ipv6_egress */
	reset();
	ping(&md, SBX6, OUT6, 128, 56, 500);
	CHECK_EQ(count("icmp_egress"), 1);
	CHECK_EQ(count("ipv6_egress"), 1);
	reset();
	ping(&md, SBX6, OUT6, 129, 56, 500);
	ping(&md, SBX6, "ff02::1", 128, 56, 500);
	ping(&md, SBX6, "fd00:99::20", 128, 56, 500);
	ping(&md, SBX6, "ff02::1:ff00:1", 135, 24, 0); /* neighbour solicitation */
	ping(&md, SBX6, OUT6, 135, 24, 0);
	CHECK_EQ(R.n, 0);

	/* Other messages that start something: the other requests and any
	 * type of no known kind (a covert channel needs no echo); not the
	 * answering kinds, whatever their payload */
	static const struct {
		const char *src, *dst;
		unsigned type;
		const char *what; /* NULL: no alert */
	} kinds[] = {
		{SBX, OUT, 13, "ICMP timestamp request"},
		{SBX, OUT, 15, "ICMP information request"},
		{SBX, OUT, 17, "ICMP address mask request"},
		{SBX, OUT, 42, "ICMP extended echo request"},
		{SBX, OUT, 200, "ICMP message of type 200"},
		{SBX, OUT, 37, "ICMP message of type 37"},
		{SBX, OUT, 14, NULL}, {SBX, OUT, 16, NULL}, {SBX, OUT, 18, NULL},
		{SBX, OUT, 11, NULL}, {SBX, OUT, 12, NULL}, {SBX, OUT, 5, NULL},
		{SBX, OUT, 43, NULL}, {SBX, OUT, 9, NULL}, {SBX, OUT, 10, NULL},
		{SBX6, OUT6, 139, "ICMPv6 node information query"},
		{SBX6, OUT6, 160, "ICMPv6 extended echo request"},
		{SBX6, OUT6, 200, "ICMPv6 message of type 200"},
		{SBX6, OUT6, 100, "ICMPv6 message of type 100"},
		{SBX6, OUT6, 1, NULL}, {SBX6, OUT6, 140, NULL}, {SBX6, OUT6, 143, NULL},
		{SBX6, OUT6, 134, NULL}, {SBX6, OUT6, 161, NULL},
		{SBX, "10.99.0.20", 13, NULL}, {SBX, "224.0.0.1", 200, NULL},
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		reset();
		ping(&md, kinds[i].src, kinds[i].dst, kinds[i].type, 16, 0);
		CHECK_EQ(count("icmp_egress"), kinds[i].what ? 1 : 0);
		if (kinds[i].what && count("icmp_egress"))
			CHECK(strstr(first("icmp_egress")->detail, kinds[i].what) != NULL);
	}

	reset();
	r.has_sandbox = 0;
	ping(&md, SBX, OUT, 8, 56, 500);
	ping(&md, SBX, OUT, 13, 12, 0);
	CHECK_EQ(R.n, 0);
	mod_close(&md);
}

/* ---- ipv6_egress ------------------------------------------------------------ */

static void test_ipv6_egress(void)
{
	struct rules r;
	struct mod md;
	struct tpkt t;

	sandbox_rules(&r);
	mod_open(&md, &detect_egress_module, &r);

	reset();
	udp(&md, SBX6, OUT6, 443);
	CHECK_EQ(count("ipv6_egress"), 1);
	CHECK_EQ(count("udp_egress"), 1);
	CHECK_STR(first("ipv6_egress")->subject, "[2001:db8::1]:443");
	CHECK_EQ(first("ipv6_egress")->severity, 4);

	/* any packet from the initiator counts (once per flow), not only SYNs */
	reset();
	mk(&t, IPPROTO_TCP, SBX6, 40000, OUT6, 22, TH_ACK);
	pkt_in(&md, &t.p);
	pkt_in(&md, &t.p);
	CHECK_EQ(count("ipv6_egress"), 1);
	CHECK_EQ(count("proxy_bypass"), 0);
	/* another protocol (GRE) */
	mk(&t, 47, SBX6, 0, OUT6, 0, 0);
	pkt_in(&md, &t.p);
	CHECK_EQ(count("ipv6_egress"), 2);

	/* not egress: link-local, multicast, inside, a reply */
	reset();
	udp(&md, SBX6, "ff02::fb", 5353);
	udp(&md, SBX6, "fd00:99::53", 53);
	mk(&t, IPPROTO_TCP, SBX6, 40000, "fe80::1", 22, TH_ACK);
	pkt_in(&md, &t.p);
	mk(&t, IPPROTO_TCP, SBX6, 22, OUT6, 40000, TH_ACK);
	t.p.dir = 1;
	pkt_in(&md, &t.p);
	mk(&t, IPPROTO_TCP, OUT6, 40000, SBX6, 22, TH_SYN);
	pkt_in(&md, &t.p);
	CHECK_EQ(count("ipv6_egress"), 0);

	/* allowed by the rules */
	reset();
	r.allow_ipv6 = 1;
	udp(&md, SBX6, OUT6, 443);
	CHECK_EQ(count("ipv6_egress"), 0);
	CHECK_EQ(count("udp_egress"), 1);
	r.allow_ipv6 = 0;

	/* IPv4 is never ipv6_egress; no sandbox: off */
	reset();
	udp(&md, SBX, OUT, 443);
	CHECK_EQ(count("ipv6_egress"), 0);
	reset();
	r.has_sandbox = 0;
	udp(&md, SBX6, OUT6, 443);
	CHECK_EQ(R.n, 0);
	mod_close(&md);
}

/* ---- dns_over_tcp ----------------------------------------------------------- */

static void test_dns_over_tcp(void)
{
	struct rules r;
	struct mod md;
	struct tpkt t;

	sandbox_rules(&r);
	mod_open(&md, &detect_egress_module, &r);

	/* to the allowed resolver: dns_over_tcp only */
	reset();
	syn(&md, SBX, "10.98.0.53", 53);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(count("dns_over_tcp"), 1);
	CHECK_STR(R.a[0].subject, "10.98.0.53:53");
	/* inside the sandbox too: the policy is about the protocol */
	reset();
	syn(&md, SBX, "10.99.0.53", 53);
	CHECK_EQ(count("dns_over_tcp"), 1);
	CHECK_EQ(count("proxy_bypass"), 0);
	/* elsewhere: also a bypass */
	reset();
	syn(&md, SBX, "8.8.8.8", 53);
	CHECK_EQ(count("dns_over_tcp"), 1);
	CHECK_EQ(count("proxy_bypass"), 1);

	/* a DNS-over-TCP observation (any port); once per flow with its SYN */
	reset();
	mk(&t, IPPROTO_TCP, SBX, 40000, "10.98.0.53", 5353, TH_ACK | TH_PUSH);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "example.com", OBS_F_TCP);
	CHECK_EQ(count("dns_over_tcp"), 1);
	CHECK_STR(first("dns_over_tcp")->subject, "10.98.0.53:5353");
	reset();
	mk(&t, IPPROTO_TCP, SBX, 40000, "10.98.0.53", 53, TH_SYN);
	pkt_in(&md, &t.p);
	t.p.tcp_flags = TH_ACK | TH_PUSH;
	name_obs(&md, OBS_DNS_QUERY, &t.p, "example.com", OBS_F_TCP);
	CHECK_EQ(count("dns_over_tcp"), 1);

	/* DNS over UDP, other TCP ports: nothing */
	reset();
	mk(&t, IPPROTO_UDP, SBX, 40000, "10.98.0.53", 53, 0);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "example.com", 0);
	syn(&md, SBX, "10.99.0.53", 54);
	CHECK_EQ(count("dns_over_tcp"), 0);

	/* allowed by the rules, or no sandbox */
	reset();
	r.allow_dns_over_tcp = 1;
	syn(&md, SBX, "10.98.0.53", 53);
	mk(&t, IPPROTO_TCP, SBX, 40000, "10.98.0.53", 53, TH_ACK);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "example.com", OBS_F_TCP);
	CHECK_EQ(R.n, 0);
	r.allow_dns_over_tcp = 0;
	r.has_sandbox = 0;
	syn(&md, SBX, "10.98.0.53", 53);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "example.com", OBS_F_TCP);
	CHECK_EQ(R.n, 0);
	mod_close(&md);
}

/* ---- doh -------------------------------------------------------------------- */

static void run_doh(struct rules *r)
{
	struct mod md;
	struct tpkt t;

	mod_open(&md, &detect_egress_module, r);

	/* a known resolver address on 443, TCP or UDP (HTTP/3) */
	reset();
	syn(&md, SBX, "1.1.1.1", 443);
	CHECK_EQ(count("doh"), 1);
	CHECK_STR(first("doh")->subject, "1.1.1.1:443");
	reset();
	syn(&md, SBX6, "2606:4700:4700::1111", 443);
	CHECK_EQ(count("doh"), 1);
	reset();
	udp(&md, SBX, "8.8.8.8", 443);
	CHECK_EQ(count("doh"), 1);
	/* any TCP to 853 (DoT), UDP 853 (DoQ) */
	reset();
	syn(&md, SBX, OUT, 853);
	udp(&md, SBX, OUT, 853);
	CHECK_EQ(count("doh"), 2);
	/* not: the address on another port, another address on 443, not a SYN */
	reset();
	syn(&md, SBX, "1.1.1.1", 80);
	syn(&md, SBX, "1.1.1.4", 443);
	mk(&t, IPPROTO_TCP, SBX, 40000, "1.1.1.1", 443, TH_ACK);
	pkt_in(&md, &t.p);
	CHECK_EQ(count("doh"), 0);

	/* names: SNI, Host, the request-target, a DNS question */
	reset();
	mk(&t, IPPROTO_TCP, SBX, 40000, "10.98.0.2", 3128, TH_ACK);
	name_obs(&md, OBS_TLS_CLIENT_HELLO, &t.p, "Mozilla.Cloudflare-DNS.com", 0);
	CHECK_EQ(count("doh"), 1);
	CHECK_STR(first("doh")->subject, "Mozilla.Cloudflare-DNS.com");
	reset();
	http_req(&md, &t.p, "CONNECT", "dns.google:443", "dns.google:443", "");
	CHECK_EQ(count("doh"), 1);
	CHECK_STR(first("doh")->subject, "dns.google");
	reset();
	http_req(&md, &t.p, "GET", "/dns-query?dns=AAAB", "doh.example.net", "");
	CHECK_EQ(count("doh"), 1);
	CHECK_STR(first("doh")->subject, "doh.example.net");
	reset();
	mk(&t, IPPROTO_UDP, SBX, 40000, "10.98.0.53", 53, 0);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "one.one.one.one", 0);
	CHECK_EQ(count("doh"), 1);
	/* not: lookalikes, other paths */
	reset();
	name_obs(&md, OBS_DNS_QUERY, &t.p, "dns.google.example", 0);
	name_obs(&md, OBS_TLS_CLIENT_HELLO, &t.p, "xdns.google", 0);
	name_obs(&md, OBS_TLS_CLIENT_HELLO, &t.p, "", 0);
	http_req(&md, &t.p, "GET", "/dns-queryx", "example.org", "");
	http_req(&md, &t.p, "GET", "/api/dns-query", "example.org", "");
	CHECK_EQ(count("doh"), 0);
	mod_close(&md);
}

static void test_doh(void)
{
	struct rules r;

	sandbox_rules(&r);
	run_doh(&r);
	/* a content class: the same without a sandbox section */
	bare_rules(&r);
	run_doh(&r);

	/* and from any source */
	struct mod md;
	mod_open(&md, &detect_egress_module, &r);
	reset();
	syn(&md, "172.16.5.5", "9.9.9.9", 443);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(count("doh"), 1);
	mod_close(&md);
}

/* ---- websocket -------------------------------------------------------------- */

static void test_websocket(void)
{
	struct rules r;
	struct mod md;
	struct tpkt t;

	sandbox_rules(&r);
	mod_open(&md, &detect_egress_module, &r);
	mk(&t, IPPROTO_TCP, SBX, 40000, "10.98.0.2", 3128, TH_ACK);

	reset();
	http_req(&md, &t.p, "GET", "/chat", "ws.example.org", "websocket");
	CHECK_EQ(R.n, 1);
	CHECK_EQ(count("websocket"), 1);
	CHECK_STR(R.a[0].subject, "ws.example.org");
	CHECK_STR(R.a[0].evidence, "/chat");
	reset();
	http_req(&md, &t.p, "GET", "http://ws.example.org/chat", "ws.example.org", "WebSocket");
	http_req(&md, &t.p, "GET", "/chat", "ws.example.org", "foo/1, websocket");
	CHECK_EQ(count("websocket"), 2);
	/* no Host: the destination */
	reset();
	http_req(&md, &t.p, "GET", "/chat", "", "websocket");
	CHECK_STR(first("websocket")->subject, "10.98.0.2:3128");

	/* not: other upgrades, none, a lookalike token, from outside */
	reset();
	http_req(&md, &t.p, "GET", "/", "ws.example.org", "h2c");
	http_req(&md, &t.p, "GET", "/", "ws.example.org", "");
	http_req(&md, &t.p, "GET", "/", "ws.example.org", "websockets");
	mk(&t, IPPROTO_TCP, OUT, 40000, SBX, 80, TH_ACK);
	http_req(&md, &t.p, "GET", "/", "ws.example.org", "websocket");
	CHECK_EQ(R.n, 0);

	reset();
	r.has_sandbox = 0;
	mk(&t, IPPROTO_TCP, SBX, 40000, "10.98.0.2", 3128, TH_ACK);
	http_req(&md, &t.p, "GET", "/chat", "ws.example.org", "websocket");
	CHECK_EQ(R.n, 0);
	mod_close(&md);
}

/* ---- smtp ------------------------------------------------------------------- */

static void test_smtp(void)
{
	struct rules r;
	struct mod md;
	static const unsigned ports[] = {25, 465, 587, 2525};

	sandbox_rules(&r);
	mod_open(&md, &detect_egress_module, &r);

	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		reset();
		syn(&md, SBX, OUT, ports[i]);
		CHECK_EQ(count("smtp"), 1);
		CHECK_EQ(count("proxy_bypass"), 1);
		CHECK_EQ(first("smtp")->severity, 4);
	}
	CHECK_STR(first("smtp")->subject, "198.51.100.7:2525");

	/* not: neighbouring ports, an allowed mail relay, inside, UDP */
	reset();
	syn(&md, SBX, OUT, 24);
	syn(&md, SBX, OUT, 2526);
	syn(&md, SBX, OUT, 588);
	syn(&md, SBX, "192.0.2.10", 25);
	syn(&md, SBX, "10.99.0.25", 25);
	udp(&md, SBX, "192.0.2.10", 25);
	CHECK_EQ(count("smtp"), 0);

	reset();
	r.has_sandbox = 0;
	syn(&md, SBX, OUT, 25);
	CHECK_EQ(R.n, 0);
	mod_close(&md);
}

/* ---- domain_not_allowed ----------------------------------------------------- */

static void test_domain_not_allowed(void)
{
	struct rules r;
	struct mod md;
	struct tpkt t, tp;

	sandbox_rules(&r);
	mod_open(&md, &detect_egress_module, &r);
	mk(&t, IPPROTO_UDP, SBX, 40000, "10.98.0.53", 53, 0);
	mk(&tp, IPPROTO_TCP, SBX, 40000, "10.98.0.2", 3128, TH_ACK);

	/* no allowlist: any name */
	reset();
	name_obs(&md, OBS_DNS_QUERY, &t.p, "evil.test", 0);
	name_obs(&md, OBS_TLS_CLIENT_HELLO, &tp.p, "evil.test", 0);
	http_req(&md, &tp.p, "GET", "http://evil.test/", "evil.test", "");
	CHECK_EQ(R.n, 0);

	r.domains = (struct rules_strlist){.v = domain_v, .n = 2};
	reset();
	name_obs(&md, OBS_DNS_QUERY, &t.p, "evil.test", 0);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(count("domain_not_allowed"), 1);
	CHECK_STR(R.a[0].subject, "evil.test");
	CHECK_EQ(R.a[0].severity, 3);
	reset();
	name_obs(&md, OBS_TLS_CLIENT_HELLO, &tp.p, "evil.test", 0);
	CHECK_EQ(count("domain_not_allowed"), 1);
	reset();
	http_req(&md, &tp.p, "GET", "/", "Evil.test:8080", "");
	CHECK_EQ(count("domain_not_allowed"), 0); /* origin form to the proxy: Host is the proxy */
	mk(&tp, IPPROTO_TCP, SBX, 40000, OUT, 80, TH_ACK);
	http_req(&md, &tp.p, "GET", "/", "Evil.test:8080", "");
	CHECK_EQ(count("domain_not_allowed"), 1);
	CHECK_STR(first("domain_not_allowed")->subject, "Evil.test");
	mk(&tp, IPPROTO_TCP, SBX, 40000, "10.98.0.2", 3128, TH_ACK);
	/* through the proxy: the absolute target and CONNECT authority count */
	reset();
	http_req(&md, &tp.p, "GET", "http://user@evil.test:81/x", "evil.test:81", "");
	CHECK_EQ(count("domain_not_allowed"), 1);
	CHECK_STR(first("domain_not_allowed")->subject, "evil.test");
	reset();
	http_req(&md, &tp.p, "CONNECT", "evil.test:443", "evil.test:443", "");
	CHECK_EQ(count("domain_not_allowed"), 1);
	/* authority form is CONNECT's alone: "http:/evil.test/" on a GET has
	 * no authority (not "http"), and its Host is judged, proxy or not */
	reset();
	http_req(&md, &tp.p, "GET", "http:/evil.test/", "example.org", "");
	http_req(&md, &tp.p, "GET", "example.org:80", "example.org", "");
	CHECK_EQ(R.n, 0);
	http_req(&md, &tp.p, "GET", "http:/example.org/", "evil.test", "");
	CHECK_EQ(count("domain_not_allowed"), 1);
	CHECK_STR(first("domain_not_allowed")->subject, "evil.test");
	reset();
	http_req(&md, &tp.p, "GET", "evil.test:80", "", "");
	CHECK_EQ(R.n, 0);
	/* a Host that hides the real target: both are judged */
	reset();
	http_req(&md, &tp.p, "GET", "http://evil.test/", "example.org", "");
	CHECK_EQ(count("domain_not_allowed"), 1);
	CHECK_STR(first("domain_not_allowed")->subject, "evil.test");

	/* allowed names, the wildcard's edges */
	reset();
	name_obs(&md, OBS_DNS_QUERY, &t.p, "example.org", 0);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "www.Example.ORG", 0);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "x.api.example.com", 0);
	name_obs(&md, OBS_TLS_CLIENT_HELLO, &tp.p, "example.org", 0);
	name_obs(&md, OBS_TLS_CLIENT_HELLO, &tp.p, "", 0);
	http_req(&md, &tp.p, "CONNECT", "www.example.org:443", "www.example.org:443", "");
	http_req(&md, &tp.p, "GET", "http://example.org./", "", "");
	CHECK_EQ(R.n, 0);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "api.example.com", 0); /* "*." takes subdomains only */
	name_obs(&md, OBS_DNS_QUERY, &t.p, "xexample.org", 0);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "example.org.evil.test", 0);
	CHECK_EQ(count("domain_not_allowed"), 3);

	/* not judged: from outside; no sandbox */
	reset();
	mk(&t, IPPROTO_UDP, OUT, 40000, "10.98.0.53", 53, 0);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "evil.test", 0);
	mk(&t, IPPROTO_UDP, SBX, 40000, "10.98.0.53", 53, 0);
	r.has_sandbox = 0;
	name_obs(&md, OBS_DNS_QUERY, &t.p, "evil.test", 0);
	CHECK_EQ(R.n, 0);
	mod_close(&md);
}

/* ---- proxy_denied ----------------------------------------------------------- */

static void test_proxy_denied(void)
{
	struct rules r;
	struct mod md;
	struct tpkt t;

	sandbox_rules(&r);
	mod_open(&md, &detect_egress_module, &r);
	/* the response: from the proxy to the client */
	mk(&t, IPPROTO_TCP, "10.98.0.2", 3128, SBX, 40000, TH_ACK | TH_PUSH);
	t.p.dir = 1;

	reset();
	http_resp(&md, &t.p, 403, "GET", "api.example.com", "/admin");
	CHECK_EQ(R.n, 1);
	CHECK_EQ(count("proxy_denied"), 1);
	CHECK_STR(R.a[0].subject, "api.example.com/admin");
	CHECK_STR(R.a[0].outcome, "blocked");
	CHECK_STR(R.a[0].src, SBX); /* the client's alert */
	CHECK_STR(R.a[0].evidence, "GET /admin");
	reset();
	http_resp(&md, &t.p, 403, "GET", "evil.test", "http://evil.test/x");
	CHECK_STR(first("proxy_denied")->subject, "http://evil.test/x");
	reset();
	http_resp(&md, &t.p, 403, "CONNECT", "evil.test:443", "evil.test:443");
	CHECK_STR(first("proxy_denied")->subject, "evil.test:443");
	CHECK_STR(first("proxy_denied")->outcome, "blocked");
	/* unpaired: the proxy */
	reset();
	http_resp(&md, &t.p, 403, "", "", "");
	CHECK_STR(first("proxy_denied")->subject, "10.98.0.2:3128");
	/* the proxy inside the sandbox network */
	reset();
	mk(&t, IPPROTO_TCP, "10.99.0.2", 8080, SBX, 40000, TH_ACK | TH_PUSH);
	http_resp(&md, &t.p, 403, "GET", "x.test", "/");
	CHECK_EQ(count("proxy_denied"), 1);

	/* not: other statuses, a 403 from elsewhere or from the proxy's other
	 * port, to a client outside the sandbox */
	reset();
	http_resp(&md, &t.p, 200, "GET", "x.test", "/");
	http_resp(&md, &t.p, 404, "GET", "x.test", "/");
	http_resp(&md, &t.p, 407, "GET", "x.test", "/");
	mk(&t, IPPROTO_TCP, OUT, 80, SBX, 40000, TH_ACK | TH_PUSH);
	http_resp(&md, &t.p, 403, "GET", "x.test", "/");
	mk(&t, IPPROTO_TCP, "10.98.0.2", 80, SBX, 40000, TH_ACK | TH_PUSH);
	http_resp(&md, &t.p, 403, "GET", "x.test", "/");
	mk(&t, IPPROTO_TCP, "10.98.0.2", 3128, "10.97.0.10", 40000, TH_ACK | TH_PUSH);
	http_resp(&md, &t.p, 403, "GET", "x.test", "/");
	CHECK_EQ(R.n, 0);

	/* a policy class: off without a sandbox */
	reset();
	r.has_sandbox = 0;
	mk(&t, IPPROTO_TCP, "10.98.0.2", 3128, SBX, 40000, TH_ACK | TH_PUSH);
	http_resp(&md, &t.p, 403, "GET", "api.example.com", "/admin");
	CHECK_EQ(R.n, 0);
	mod_close(&md);
}

/* ---- icmp_tunnel ------------------------------------------------------------ */

static void run_icmp_tunnel(struct rules *r)
{
	struct mod md;
	struct tpkt t;

	mod_open(&md, &detect_icmp_tunnel_module, r);

	/* size: above icmp_payload_max */
	reset();
	ping(&md, SBX, OUT, 8, 128, 300);
	CHECK_EQ(R.n, 0);
	ping(&md, SBX, OUT, 8, 129, 300);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->subject, OUT);
	CHECK_EQ(first("icmp_tunnel")->severity, 4);
	ping(&md, OUT, SBX, 0, 1000, 790); /* replies too, as the requester's */
	CHECK_EQ(count("icmp_tunnel"), 2);
	CHECK_STR(R.a[1].src, SBX);
	CHECK_STR(R.a[1].subject, OUT);
	CHECK_STR(R.a[1].evidence, "reply: 1000 bytes, entropy 7.90");
	ping(&md, SBX6, OUT6, 128, 200, 300);
	CHECK_EQ(count("icmp_tunnel"), 3);

	/* entropy: above icmp_entropy_x100 with at least 32 bytes */
	reset();
	ping(&md, SBX, "198.51.100.8", 8, 32, 600);
	ping(&md, SBX, "198.51.100.8", 8, 31, 700);
	ping(&md, SBX, "198.51.100.8", 8, 100, -1); /* entropy unknown */
	CHECK_EQ(R.n, 0);
	ping(&md, SBX, "198.51.100.8", 8, 32, 601);
	CHECK_EQ(count("icmp_tunnel"), 1);

	/* ping's default: 56 bytes, timestamp and incrementing pattern */
	reset();
	for (int i = 0; i < 120; i++) {
		mk(&t, IPPROTO_ICMP, "10.99.0.11", 0, OUT, 0, 0);
		t.p.ts_us += (uint64_t)i * 1000000u;
		icmp_obs(&md, &t.p, 8, 56, 568);
		mk(&t, IPPROTO_ICMP, OUT, 0, "10.99.0.11", 0, 0);
		t.p.ts_us += (uint64_t)i * 1000000u + 300;
		icmp_obs(&md, &t.p, 0, 56, 568);
	}
	CHECK_EQ(R.n, 0);
	/* not echo: errors and link upkeep are someone else's business */
	ping(&md, SBX, OUT, 3, 548, 700);
	ping(&md, SBX6, OUT6, 135, 500, 700);
	ping(&md, SBX, OUT, 9, 548, 700);
	ping(&md, SBX6, OUT6, 1, 548, 700);
	CHECK_EQ(R.n, 0);
	/* ... but every other kind that can carry data is judged as an echo:
	 * timestamp, extended echo, node information, types of no known kind */
	ping(&md, SBX, OUT, 13, 1000, 300);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(R.a[0].detail, "ICMP type 13 payload of 1000 bytes (more than 128)");
	CHECK_STR(R.a[0].evidence, "ICMP type 13: 1000 bytes, entropy 3.00");
	ping(&md, OUT, SBX, 14, 1000, 300); /* a reply: the requester's */
	CHECK_EQ(count("icmp_tunnel"), 2);
	CHECK_STR(R.a[1].src, SBX);
	CHECK_STR(R.a[1].evidence, "ICMP type 14 reply: 1000 bytes, entropy 3.00");
	ping(&md, SBX, OUT, 42, 1000, 300);
	ping(&md, SBX, OUT, 200, 64, 790);
	ping(&md, SBX6, OUT6, 139, 1000, 300);
	ping(&md, SBX6, OUT6, 200, 1196, 790);
	CHECK_EQ(count("icmp_tunnel"), 6);
	CHECK_STR(R.a[5].detail, "ICMPv6 type 200 payload of 1196 bytes (more than 128)");

	/* volume: echo bytes per source per minute above icmp_volume_bytes */
	reset();
	for (int i = 0; i < 81; i++) {
		mk(&t, IPPROTO_ICMP, "10.99.0.12", 0, OUT, 0, 0);
		t.p.ts_us += (uint64_t)i * 100000u;
		icmp_obs(&md, &t.p, 8, 100, 400);
	}
	CHECK_EQ(R.n, 0); /* 8100 bytes */
	mk(&t, IPPROTO_ICMP, "10.99.0.12", 0, OUT, 0, 0);
	t.p.ts_us += 81 * 100000u;
	icmp_obs(&md, &t.p, 8, 92, 400);
	CHECK_EQ(R.n, 0); /* 8192: not above */
	icmp_obs(&md, &t.p, 8, 1, 0);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->src, "10.99.0.12");
	icmp_obs(&md, &t.p, 8, 100, 400); /* once per window */
	CHECK_EQ(count("icmp_tunnel"), 1);
	/* another source has its own window */
	mk(&t, IPPROTO_ICMP, "10.99.0.13", 0, OUT, 0, 0);
	icmp_obs(&md, &t.p, 8, 100, 400);
	CHECK_EQ(count("icmp_tunnel"), 1);
	/* a reply flood counts against its sender, raised as the requester's */
	reset();
	for (int i = 0; i < 83; i++) {
		mk(&t, IPPROTO_ICMP, "198.51.100.20", 0, "10.99.0.15", 0, 0);
		t.p.ts_us += (uint64_t)i * 1000u;
		icmp_obs(&md, &t.p, 0, 100, 400);
	}
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->src, "10.99.0.15");
	CHECK_STR(first("icmp_tunnel")->subject, "198.51.100.20");
	CHECK(strstr(first("icmp_tunnel")->detail, "from 198.51.100.20") != NULL);
	/* a minute later the window starts again */
	reset();
	for (int i = 0; i < 83; i++) {
		mk(&t, IPPROTO_ICMP, "10.99.0.12", 0, OUT, 0, 0);
		t.p.ts_us += 61000000u + (uint64_t)i * 100000u;
		icmp_obs(&md, &t.p, 8, 100, 400);
	}
	CHECK_EQ(count("icmp_tunnel"), 1);

	/* a message the capture cut: judged by its size on the wire */
	reset();
	mk(&t, IPPROTO_ICMP, "10.99.0.14", 0, OUT, 0, 0);
	t.p.caplen = 96;
	t.p.wirelen = 1042;
	{
		struct obs o = {
			.kind = OBS_ICMP, .pkt = &t.p, .name = "", .type = 8, .size = 54,
			.flags = OBS_F_TRUNCATED,
		};
		obs_in(&md, &o);
	}
	CHECK_EQ(count("icmp_tunnel"), 1);

	/* The source table. A source that sends 100 echo bytes at a time, and
	 * after each echo another echo from one of 8 forged sources: those
	 * that FNV-1a, the table's old unkeyed hash, put in the same slot as
	 * the real one (which they could then push out, its window starting
	 * over, so that it never passed the volume). Keyed and chained, the
	 * table keeps all nine: the volume is raised at the 82nd echo. */
	mod_close(&md);
	mod_open(&md, &detect_icmp_tunnel_module, r);
	reset();
	{
		char forged[8][16], text[24];
		uint8_t a[4] = {10, 99, 0, 12};
		uint32_t h0 = 0;
		int nf = 0;

		for (unsigned k = 0; k < 65536 && nf < 8; k++) {
			uint32_t h = 2166136261u ^ 4u;
			a[2] = (uint8_t)(k >> 8), a[3] = (uint8_t)k;
			for (int j = 0; j < 4; j++)
				h = (h ^ a[j]) * 16777619u;
			if (k == 12) /* 10.99.0.12 */
				h0 = h;
			else if (k > 12 && ((h ^ h0) & (ICMP_TUNNEL_SOURCES - 1)) == 0)
				snprintf(forged[nf++], sizeof(forged[0]), "10.99.%u.%u", a[2], a[3]);
		}
		CHECK_EQ(nf, 8);
		for (int i = 0; i < 82; i++) {
			mk(&t, IPPROTO_ICMP, "10.99.0.12", 0, OUT, 0, 0);
			t.p.ts_us += (uint64_t)i * 100000u;
			icmp_obs(&md, &t.p, 8, 100, 400);
			mk(&t, IPPROTO_ICMP, forged[i % 8], 0, OUT, 0, 0);
			t.p.ts_us += (uint64_t)i * 100000u + 1000u;
			icmp_obs(&md, &t.p, 8, 10, 300);
			CHECK_EQ(R.n, i < 81 ? 0 : 1);
		}
		CHECK(R.n == 1 && strcmp(first("icmp_tunnel")->src, "10.99.0.12") == 0);

		/* A full table gives up the least recently active source: 10.99.1.1
		 * has 8100 bytes, then ICMP_TUNNEL_SOURCES - 1 others send (with
		 * 10.99.1.1 the table is full, none is pushed out), and 100 more
		 * bytes from 10.99.1.1 pass the volume; with one other more, its
		 * window is the one given up, and 100 more start it over. */
		for (int more = 0; more < 2; more++) {
			mod_close(&md);
			mod_open(&md, &detect_icmp_tunnel_module, r);
			reset();
			for (int i = 0; i < 81; i++) {
				mk(&t, IPPROTO_ICMP, "10.99.1.1", 0, OUT, 0, 0);
				t.p.ts_us += (uint64_t)i * 10000u;
				icmp_obs(&md, &t.p, 8, 100, 400);
			}
			for (int i = 0; i < ICMP_TUNNEL_SOURCES - 1 + more; i++) {
				snprintf(text, sizeof(text), "10.98.%d.%d", i >> 8, i & 255);
				mk(&t, IPPROTO_ICMP, text, 0, OUT, 0, 0);
				t.p.ts_us += 1000000u + (uint64_t)i * 1000u;
				icmp_obs(&md, &t.p, 8, 10, 300);
			}
			mk(&t, IPPROTO_ICMP, "10.99.1.1", 0, OUT, 0, 0);
			t.p.ts_us += 3000000u;
			icmp_obs(&md, &t.p, 8, 100, 400);
			CHECK_EQ(R.n, more ? 0 : 1);
		}
	}

	/* thresholds come from the rules */
	reset();
	r->t.icmp_payload_max = 1000;
	ping(&md, SBX, "198.51.100.9", 8, 1000, 300);
	CHECK_EQ(R.n, 0);
	ping(&md, SBX, "198.51.100.9", 8, 1001, 300);
	CHECK_EQ(count("icmp_tunnel"), 1);
	r->t.icmp_payload_max = 128;
	mod_close(&md);
}

/* An echo as the ICMP analyzer reports it with its measures (obs_icmp):
 * payload size, data before the filler, that part's entropy, the digest;
 * at t0 + us. */
/* An echo (or another kind of type) with its measures; data_digest is the
 * data's alone (obs_icmp), 0 for none. */
static void icmp_obs_dd(struct mod *md, const char *src, const char *dst, unsigned type, int id,
			int seq, unsigned size, unsigned data, int dent, uint64_t digest,
			uint64_t data_digest, uint64_t us)
{
	struct tpkt t;
	struct obs_icmp oi = {
		.digest = digest, .data_digest = data_digest, .data_len = data,
		.data_entropy100 = dent, .id = id, .seq = seq,
	};

	mk(&t, strchr(src, ':') ? IPPROTO_ICMPV6 : IPPROTO_ICMP, src, 0, dst, 0, 0);
	t.p.ts_us += us;
	struct obs o = {
		.kind = OBS_ICMP, .pkt = &t.p, .name = "", .type = (uint16_t)type, .size = size,
		.icmp = &oi,
	};
	obs_in(md, &o);
}

static void echo_obs(struct mod *md, const char *src, const char *dst, unsigned type, int id,
		     int seq, unsigned size, unsigned data, int dent, uint64_t digest, uint64_t us)
{
	icmp_obs_dd(md, src, dst, type, id, seq, size, data, dent, digest, 0, us);
}

/* A request of 64 bytes, 32 of them data, whose data digest is dd. */
static void pattern_ping(struct mod *md, const char *src, const char *dst, int seq, uint64_t dd,
			 uint64_t us)
{
	icmp_obs_dd(md, src, dst, strchr(src, ':') ? 128 : 8, 77, seq, 64, 32, 300,
		    0x100 + 2 * (uint64_t)seq + 1, dd, us);
}

/* Data that changes from one message to the next between one pair: a
 * channel in a new `ping -p` pattern each time. */
static void test_icmp_tunnel_distinct(void)
{
	struct rules r;
	struct mod md;
	char peer[32];

	sandbox_rules(&r);
	mod_open(&md, &detect_icmp_tunnel_module, &r);

	/* eight different data in a minute are not more than 8; the ninth is */
	reset();
	for (int i = 0; i < 8; i++)
		pattern_ping(&md, SBX, OUT, i, 0x1001 + 2 * (uint64_t)i, (uint64_t)i * 1000000u);
	CHECK_EQ(R.n, 0);
	pattern_ping(&md, SBX, OUT, 8, 0x1001 + 2 * 8, 59000000u);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->src, SBX);
	CHECK_STR(first("icmp_tunnel")->subject, OUT);
	CHECK_EQ(first("icmp_tunnel")->score, 75);
	CHECK_STR(first("icmp_tunnel")->detail,
		  "9 distinct ICMP payloads from " SBX " to " OUT " within a minute "
		  "(more than 8)");
	CHECK_STR(first("icmp_tunnel")->evidence,
		  "request: 64 bytes (32 of data, then filler), entropy 3.00");
	/* once per pair and window */
	for (int i = 9; i < 30; i++)
		pattern_ping(&md, SBX, OUT, i, 0x1001 + 2 * (uint64_t)i, 59000000u + (uint64_t)i);
	CHECK_EQ(count("icmp_tunnel"), 1);
	/* a minute after the window began it starts over */
	reset();
	for (int i = 0; i < 9; i++)
		pattern_ping(&md, SBX, OUT, i, 0x5001 + 2 * (uint64_t)i, 60000000u + (uint64_t)i);
	CHECK_EQ(count("icmp_tunnel"), 1);

	/* what is not counted: the same data again (ping, whatever its size:
	 * the digest is of the data alone), replies (the far end echoes what
	 * it was sent), a message whose data the capture cut (no digest), and
	 * other peers, each a pair of its own */
	mod_close(&md);
	mod_open(&md, &detect_icmp_tunnel_module, &r);
	reset();
	for (int i = 0; i < 40; i++) /* (under the volume: 32 bytes each) */
		pattern_ping(&md, SBX, OUT, i, 0x2001 + 2 * (uint64_t)(i % 8), (uint64_t)i * 10000u);
	for (int i = 0; i < 20; i++) {
		icmp_obs_dd(&md, OUT, SBX, 0, 77, i, 64, 32, 300, 0, 0x3001 + 2 * (uint64_t)i,
			    (uint64_t)i * 10000u);
		icmp_obs_dd(&md, SBX, OUT, 8, 77, i, 64, 32, 300, 0, 0, (uint64_t)i * 10000u);
	}
	for (int d = 0; d < 20; d++) {
		snprintf(peer, sizeof(peer), "198.51.100.%d", 100 + d);
		for (int i = 0; i < 8; i++)
			pattern_ping(&md, SBX, peer, i, 0x4001 + 2 * (uint64_t)(d * 8 + i),
				     (uint64_t)i * 1000u);
	}
	CHECK_EQ(R.n, 0);
	/* IPv6 alike */
	for (int i = 0; i < 9; i++)
		pattern_ping(&md, SBX6, OUT6, i, 0x6001 + 2 * (uint64_t)i, (uint64_t)i);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->subject, OUT6);
	mod_close(&md);

	/* the threshold is the rules' */
	r.t.icmp_distinct_data = 2;
	mod_open(&md, &detect_icmp_tunnel_module, &r);
	reset();
	pattern_ping(&md, SBX, OUT, 0, 0x7001, 0);
	pattern_ping(&md, SBX, OUT, 1, 0x7003, 1);
	pattern_ping(&md, SBX, OUT, 2, 0x7001, 2);
	CHECK_EQ(R.n, 0);
	pattern_ping(&md, SBX, OUT, 3, 0x7005, 3);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->detail,
		  "3 distinct ICMP payloads from " SBX " to " OUT " within a minute "
		  "(more than 2)");
	mod_close(&md);

	/* The pairs' table holds ICMP_TUNNEL_SOURCES, the least recently
	 * active giving way: after that many other pairs less one, a pair's
	 * eight are still there and a ninth is raised; after one more they
	 * are gone and it is the first of a new window. (Other sources, each
	 * under the volume.) */
	r.t.icmp_distinct_data = 8;
	for (int more = 0; more < 2; more++) {
		mod_open(&md, &detect_icmp_tunnel_module, &r);
		reset();
		for (int i = 0; i < 8; i++)
			pattern_ping(&md, SBX, OUT, i, 0x8001 + 2 * (uint64_t)i, (uint64_t)i);
		for (int k = 0; k < ICMP_TUNNEL_SOURCES - 1 + more; k++) {
			snprintf(peer, sizeof(peer), "10.%d.%d.%d", 100 + k / 65536, (k / 256) % 256,
				 k % 256);
			pattern_ping(&md, peer, OUT, 0, 0x9001, 100);
		}
		pattern_ping(&md, SBX, OUT, 8, 0x8001 + 2 * 8, 200);
		CHECK_EQ(count("icmp_tunnel"), more ? 0 : 1);
		mod_close(&md);
	}
}

/* An echo of type type (8: request, 0: reply) of 64 bytes whose digests
 * are 0x55 and 0x77 and whose first 16 bytes of data (the lead, which the
 * digests leave out) are lead[0..n), us after the base time (1700000000 s). */
static void lead_echo(struct mod *md, const char *src, const char *dst, unsigned type, int seq,
		      const uint8_t *lead, unsigned n, uint64_t us)
{
	struct tpkt t;
	struct obs_icmp oi = {
		.digest = 0x55, .data_digest = 0x77, .data_len = 32, .data_entropy100 = 300,
		.id = 9, .seq = seq, .lead_len = (uint8_t)n,
	};

	memcpy(oi.lead, lead, n);
	mk(&t, IPPROTO_ICMP, src, 0, dst, 0, 0);
	t.p.ts_us += us;
	struct obs o = {
		.kind = OBS_ICMP, .pkt = &t.p, .name = "", .type = (uint16_t)type, .size = 64,
		.icmp = &oi,
	};
	obs_in(md, &o);
}

/* A request from the sandbox host to dst (lead_echo). */
static void lead_ping(struct mod *md, const char *dst, int seq, const uint8_t *lead, unsigned n,
		      uint64_t us)
{
	lead_echo(md, SBX, dst, 8, seq, lead, n, us);
}

static void put_le(uint8_t *b, unsigned n, uint64_t v)
{
	for (unsigned i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static void put_be(uint8_t *b, unsigned n, uint64_t v)
{
	for (unsigned i = 0; i < n; i++)
		b[n - 1 - i] = (uint8_t)(v >> (8 * i));
}

/* The send time a pinger writes into its first bytes, in one of the
 * formats the detector knows, for packet time us after the base; the
 * sender's clock is skew_s seconds off, and moves rate times as fast. */
enum lead_fmt { L_TIMEVAL64, L_TIMESPEC64, L_TV32_BE, L_TV32_LE, L_NS64_BE, L_US32_LE };
static void lead_time(uint8_t *b, enum lead_fmt f, uint64_t us, int64_t skew_s, unsigned rate)
{
	uint64_t t = (uint64_t)((int64_t)1700000000 + skew_s) * 1000000u + us * rate + 123;

	switch (f) {
	case L_TIMEVAL64: put_le(b, 8, t / 1000000u); put_le(b + 8, 8, t % 1000000u); break;
	case L_TIMESPEC64: put_le(b, 8, t / 1000000u); put_le(b + 8, 8, t % 1000000u * 1000u); break;
	case L_TV32_BE: put_be(b, 4, t / 1000000u); put_be(b + 4, 4, t % 1000000u); break;
	case L_TV32_LE: put_le(b, 4, t / 1000000u); put_le(b + 4, 4, t % 1000000u); break;
	case L_NS64_BE: put_be(b, 8, t * 1000u); break;
	case L_US32_LE: put_le(b, 4, (uint32_t)(t + 0xfff00000u)); break; /* wraps at once */
	}
}

/* A run of pings with a send time in their lead, in a module of its own:
 * n requests step_us apart (plus 1.5 ms of jitter on every third), the
 * clock in format f, skew_s off and running rate times as fast, odd ones
 * jump_us ahead; the bytes of the lead past the clock are 0x5a, or (tail
 * 1) new at each request, or (tail 2) one of two trackers in turn.
 * Returns the alerts raised. */
struct lead_run {
	enum lead_fmt f;
	int n;
	uint64_t step_us;
	int64_t skew_s;
	unsigned rate;
	uint64_t jump_us;
	int tail;
};

static size_t lead_run(const struct rules *r, const struct lead_run *c)
{
	struct mod md;
	uint8_t lead[16];

	mod_open(&md, &detect_icmp_tunnel_module, r);
	reset();
	for (int i = 0; i < c->n; i++) {
		uint64_t us = (uint64_t)i * c->step_us + (uint64_t)(i % 3) * 1500u;
		memset(lead, c->tail == 1 ? 'a' + i : c->tail == 2 ? (i & 1 ? 0x11 : 0x22) : 0x5a,
		       sizeof(lead));
		lead_time(lead, c->f, us + (i & 1 ? c->jump_us : 0), c->skew_s, c->rate);
		lead_ping(&md, OUT, i, lead, 16, us);
	}
	mod_close(&md);
	return R.n;
}

/*
 * The lead: the first 16 bytes of data, where ping writes its send time,
 * count in the distinct data but for the clock in them (a sender's time
 * that moves with the packets'): data carried there (`ping -s 15 -p HEX`)
 * is different data; every pinger's send time, in each format, is not.
 */
static void test_icmp_tunnel_lead(void)
{
	static const enum lead_fmt tools[] = {
		L_TIMEVAL64, L_TIMESPEC64, L_TV32_BE, L_TV32_LE, L_NS64_BE, L_US32_LE,
	};
	static const int64_t skews[] = { 0, 7200, -3 * 365 * 86400 };
	struct rules r;
	struct mod md;
	uint8_t lead[16];

	sandbox_rules(&r);
	mod_open(&md, &detect_icmp_tunnel_module, &r);

	/* data in the lead: 15 bytes of a file a request, each new (the
	 * digest of the data past 16 bytes is the same: there is none) */
	reset();
	for (int i = 0; i < 8; i++) {
		memset(lead, 'a' + i, sizeof(lead));
		lead_ping(&md, OUT, i, lead, 15, (uint64_t)i * 1000000u);
	}
	CHECK_EQ(R.n, 0);
	memset(lead, 'z', sizeof(lead));
	lead_ping(&md, OUT, 8, lead, 15, 8000000u);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->detail,
		  "9 distinct ICMP payloads from " SBX " to " OUT " within a minute "
		  "(more than 8)");
	/* the same bytes again and again are one */
	reset();
	memset(lead, 'q', sizeof(lead));
	for (int i = 0; i < 30; i++)
		lead_ping(&md, "198.51.100.7", i, lead, 15, (uint64_t)i * 500000u);
	CHECK_EQ(R.n, 0);
	mod_close(&md);

	for (size_t k = 0; k < sizeof(tools) / sizeof(tools[0]); k++) {
		/* each pinger's send time, a request every 0.2 s (30 in a
		 * minute), with a clock on time, hours off or years off, and
		 * the tool's own bytes after it the same each time: nothing */
		for (size_t s = 0; s < sizeof(skews) / sizeof(skews[0]); s++) {
			struct lead_run c = { tools[k], 30, 200000u, skews[s], 1, 0, 0 };
			if (lead_run(&r, &c) != 0)
				printf("  lead format %zu, skew %lld: raised\n", k, (long long)skews[s]);
			CHECK_EQ(R.n, 0);
		}
		/* a clock that does not keep the packets' time is data: times
		 * that move ten times as fast */
		struct lead_run fast = { tools[k], 9, 1000000u, 0, 10, 0, 0 };
		if (lead_run(&r, &fast) != 1)
			printf("  lead format %zu running fast: not raised\n", k);
		CHECK_EQ(R.n, 1);
	}
	/* or that jump by seconds (within the slack, 100 ms and a thousandth
	 * of the gap, a send time hides nothing it could not hide in the
	 * sub-second digits read as nanoseconds) */
	struct lead_run jumps = { L_TIMEVAL64, 9, 1000000u, 0, 1, 30000000u, 0 };
	CHECK_EQ(lead_run(&r, &jumps), 1);
	/* data after the clock counts: the bytes past an 8-byte clock, new at
	 * every request (a tv32 followed by 8 bytes of a file) */
	struct lead_run after = { L_TV32_BE, 9, 1000000u, 0, 1, 0, 1 };
	CHECK_EQ(lead_run(&r, &after), 1);
	/* two pingers of Go's pro-bing to one host in turn, each its own
	 * tracker after the clock: two data, whatever their number */
	struct lead_run two = { L_NS64_BE, 40, 250000u, 0, 1, 0, 2 };
	CHECK_EQ(lead_run(&r, &two), 0);

	/* A reply brings its request's lead back: the same bytes, or (a
	 * responder that writes its own send time there, as the benchmark's
	 * generator does) the same but for a clock that moved by the time
	 * between them. Data in a reply's lead is the far end's. */
	uint8_t back[16];
	mod_open(&md, &detect_icmp_tunnel_module, &r);
	reset();
	lead_time(lead, L_TIMEVAL64, 0, 0, 1);
	lead_ping(&md, OUT, 1, lead, 16, 0);
	lead_echo(&md, OUT, SBX, 0, 1, lead, 16, 700); /* the kernel's */
	lead_time(back, L_TIMEVAL64, 700, 0, 1);
	lead_echo(&md, OUT, SBX, 0, 1, back, 16, 700); /* its own time */
	CHECK_EQ(R.n, 0);
	memcpy(back, "cmd: cat ~/.aws", 16);
	lead_echo(&md, OUT, SBX, 0, 1, back, 16, 900); /* data */
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->detail,
		  "echo reply of 64 bytes differs from its request of 64 bytes (id 9, sequence 1)");
	/* a tv32 that moved right, data after it */
	reset();
	lead_time(lead, L_TV32_BE, 1000000u, 0, 1);
	memset(lead + 8, 0x08, 8);
	lead_ping(&md, OUT, 2, lead, 16, 1000000u);
	lead_time(back, L_TV32_BE, 1000500u, 0, 1);
	memset(back + 8, 0x08, 8);
	lead_echo(&md, OUT, SBX, 0, 2, back, 16, 1000500u);
	CHECK_EQ(R.n, 0);
	memcpy(back + 8, "rm -rf /", 8);
	lead_echo(&md, OUT, SBX, 0, 2, back, 16, 1000600u);
	CHECK_EQ(count("icmp_tunnel"), 1);
	/* a clock in the reply that did not move with the time between */
	reset();
	lead_time(back, L_TIMEVAL64, 1000000u + 5000000u, 0, 1);
	lead_echo(&md, OUT, SBX, 0, 2, back, 16, 1000700u);
	CHECK_EQ(count("icmp_tunnel"), 1);
	/* ping -s 15: the whole payload is the lead, and the reply's is other */
	reset();
	lead_ping(&md, OUT, 3, (const uint8_t *)"aws_access_key_", 15, 2000000u);
	lead_echo(&md, OUT, SBX, 0, 3, (const uint8_t *)"aws_access_key_", 15, 2000400u);
	CHECK_EQ(R.n, 0);
	lead_echo(&md, OUT, SBX, 0, 3, (const uint8_t *)"whoami; id; ls ", 15, 2000500u);
	CHECK_EQ(count("icmp_tunnel"), 1);
	/* a lead of another length */
	reset();
	lead_echo(&md, OUT, SBX, 0, 3, (const uint8_t *)"aws_access_key", 14, 2000600u);
	CHECK_EQ(count("icmp_tunnel"), 1);
	mod_close(&md);
}

/* A slow channel: under icmp_distinct_data a minute, more than
 * icmp_distinct_data_hour (60) different data in an hour. */
static void test_icmp_tunnel_hour(void)
{
	const uint64_t m55 = 55000000u; /* one request every 55 s: one a minute at most */
	struct rules r;
	struct mod md;

	sandbox_rules(&r);
	mod_open(&md, &detect_icmp_tunnel_module, &r);
	reset();
	for (int i = 0; i < 60; i++)
		pattern_ping(&md, SBX, OUT, i, 0x1001 + 2 * (uint64_t)i, (uint64_t)i * m55);
	CHECK_EQ(R.n, 0);
	pattern_ping(&md, SBX, OUT, 60, 0x1001 + 2 * 60, 60 * m55);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->src, SBX);
	CHECK_STR(first("icmp_tunnel")->subject, OUT);
	CHECK_EQ(first("icmp_tunnel")->score, 70);
	CHECK_STR(first("icmp_tunnel")->detail,
		  "61 distinct ICMP payloads from " SBX " to " OUT " within an hour "
		  "(more than 60)");
	/* once per pair and hour (the hour began at the first request) */
	pattern_ping(&md, SBX, OUT, 61, 0x1001 + 2 * 61, 61 * m55);
	pattern_ping(&md, SBX, OUT, 62, 0x1001 + 2 * 62, 62 * m55);
	CHECK_EQ(count("icmp_tunnel"), 1);
	/* the next hour starts over: 60 more are not more than 60 */
	for (int i = 0; i < 60; i++)
		pattern_ping(&md, SBX, OUT, i, 0x3001 + 2 * (uint64_t)i,
			     3600000000u + (uint64_t)i * m55);
	CHECK_EQ(count("icmp_tunnel"), 1);
	mod_close(&md);

	/* what is not counted: the same data again and again (ping), and
	 * other peers' data, each pair its own (four peers, 50 each) */
	mod_open(&md, &detect_icmp_tunnel_module, &r);
	reset();
	for (int i = 0; i < 200; i++) {
		char peer[32];
		snprintf(peer, sizeof(peer), "198.51.100.%d", 10 + i % 4);
		pattern_ping(&md, SBX, OUT, i, 0x2001 + 2 * (uint64_t)(i % 4), (uint64_t)i * 15000000u);
		pattern_ping(&md, SBX, peer, i, 0x5001 + 2 * (uint64_t)i, (uint64_t)i * 15000000u + 1);
	}
	CHECK_EQ(R.n, 0);
	mod_close(&md);

	/* a channel raised by the minute's count is not raised again by the
	 * hour's: nine in the first minute, then one a minute */
	mod_open(&md, &detect_icmp_tunnel_module, &r);
	reset();
	for (int i = 0; i < 9; i++)
		pattern_ping(&md, SBX, OUT, i, 0x7001 + 2 * (uint64_t)i, (uint64_t)i * 1000000u);
	CHECK_EQ(count("icmp_tunnel"), 1);
	for (int i = 9; i < 80; i++)
		pattern_ping(&md, SBX, OUT, i, 0x7001 + 2 * (uint64_t)i,
			     60000000u + (uint64_t)(i - 9) * 45000000u);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->detail,
		  "9 distinct ICMP payloads from " SBX " to " OUT " within a minute "
		  "(more than 8)");
	mod_close(&md);

	/* the threshold is the rules' */
	r.t.icmp_distinct_data_hour = 3;
	mod_open(&md, &detect_icmp_tunnel_module, &r);
	reset();
	for (int i = 0; i < 3; i++)
		pattern_ping(&md, SBX, OUT, i, 0x9001 + 2 * (uint64_t)i, (uint64_t)i * 600000000u);
	CHECK_EQ(R.n, 0);
	pattern_ping(&md, SBX, OUT, 3, 0x9001 + 2 * 3, 1900000000u);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->detail,
		  "4 distinct ICMP payloads from " SBX " to " OUT " within an hour "
		  "(more than 3)");
	mod_close(&md);
	/* at its ceiling (256, ICMP_TUNNEL_HOUR_MAX) every digest is kept */
	r.t.icmp_distinct_data_hour = ICMP_TUNNEL_HOUR_MAX;
	mod_open(&md, &detect_icmp_tunnel_module, &r);
	reset();
	for (int i = 0; i < ICMP_TUNNEL_HOUR_MAX + 64; i++) /* 64 of them twice */
		pattern_ping(&md, SBX, OUT, i, 0xa001 + 2 * (uint64_t)(i % ICMP_TUNNEL_HOUR_MAX),
			     (uint64_t)i * 8000000u); /* 8 s apart: 8 a minute */
	CHECK_EQ(R.n, 0);
	pattern_ping(&md, SBX, OUT, 1, 0xa001 + 2 * (uint64_t)ICMP_TUNNEL_HOUR_MAX, 3590000000u);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->detail,
		  "257 distinct ICMP payloads from " SBX " to " OUT " within an hour "
		  "(more than 256)");
	mod_close(&md);
}

/* The reply that is not its request's bytes, and ping's filler. */
static void test_icmp_tunnel_replies(void)
{
	struct rules r;
	struct mod md;

	sandbox_rules(&r);
	mod_open(&md, &detect_icmp_tunnel_module, &r);

	/* ptunnel-ng: the kernel's echo reply repeats the request, the proxy's
	 * reply to the same id and sequence carries its own 28 bytes */
	reset();
	echo_obs(&md, SBX, OUT, 8, 60004, 1, 76, 76, 520, 0x1111, 0);
	echo_obs(&md, OUT, SBX, 0, 60004, 1, 76, 76, 520, 0x1111, 300);
	CHECK_EQ(R.n, 0);
	echo_obs(&md, OUT, SBX, 0, 60004, 1, 28, 28, 250, 0x2223, 700);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(first("icmp_tunnel")->src, SBX); /* the requester's */
	CHECK_STR(first("icmp_tunnel")->subject, OUT);
	CHECK_STR(first("icmp_tunnel")->detail,
		  "echo reply of 28 bytes differs from its request of 76 bytes (id 60004, sequence 1)");
	CHECK_EQ(first("icmp_tunnel")->score, 85);
	/* the same length, other bytes (icmptx, and ptunnel's acks) */
	echo_obs(&md, OUT, SBX, 0, 60004, 1, 76, 76, 520, 0x3333, 900);
	CHECK_EQ(count("icmp_tunnel"), 2);
	/* IPv6 the same */
	reset();
	echo_obs(&md, SBX6, OUT6, 128, 7, 9, 48, 48, 500, 0x4445, 0);
	echo_obs(&md, OUT6, SBX6, 129, 7, 9, 48, 48, 500, 0x4447, 100);
	CHECK_EQ(count("icmp_tunnel"), 1);

	/* what is not compared: another sequence, id, peer or direction; a
	 * reply later than ICMP_TUNNEL_REPLY_US; a digest unknown (a cut
	 * message) on either side; a request that never came */
	reset();
	echo_obs(&md, SBX, OUT, 8, 5, 1, 56, 17, 300, 0x5555, 0);
	echo_obs(&md, OUT, SBX, 0, 5, 2, 56, 17, 300, 0x6667, 100);
	echo_obs(&md, OUT, SBX, 0, 6, 1, 56, 17, 300, 0x6667, 100);
	echo_obs(&md, "198.51.100.99", SBX, 0, 5, 1, 56, 17, 300, 0x6667, 100);
	echo_obs(&md, SBX, OUT, 0, 5, 1, 56, 17, 300, 0x6667, 100);
	echo_obs(&md, OUT, SBX, 0, 5, 1, 56, 17, 300, 0, 100);
	echo_obs(&md, OUT, SBX, 0, 5, 1, 56, 17, 300, 0x6667, ICMP_TUNNEL_REPLY_US + 1);
	CHECK_EQ(R.n, 0);
	echo_obs(&md, SBX, OUT, 8, 5, 3, 56, 17, 300, 0, 200);
	echo_obs(&md, OUT, SBX, 0, 5, 3, 56, 17, 300, 0x6667, 300);
	CHECK_EQ(R.n, 0);
	echo_obs(&md, OUT, SBX, 0, 5, 1, 56, 17, 300, 0x6667, ICMP_TUNNEL_REPLY_US);
	CHECK_EQ(count("icmp_tunnel"), 1); /* within the wait: compared */
	/* a newer request takes the place of an older one of the same key */
	reset();
	echo_obs(&md, SBX, OUT, 8, 5, 4, 56, 17, 300, 0x7777, 0);
	echo_obs(&md, SBX, OUT, 8, 5, 4, 56, 17, 300, 0x8889, 10);
	echo_obs(&md, OUT, SBX, 0, 5, 4, 56, 17, 300, 0x8889, 20);
	CHECK_EQ(R.n, 0);

	/* The table holds ICMP_TUNNEL_PENDING requests, the oldest giving way:
	 * with that many others after it a request is still compared, with one
	 * more it is gone (whatever the hash key: eviction is by arrival). No data in them, so
	 * that the volume stays quiet. */
	for (int more = 0; more < 2; more++) {
		mod_close(&md);
		mod_open(&md, &detect_icmp_tunnel_module, &r);
		reset();
		echo_obs(&md, SBX, OUT, 8, 1, 1, 56, 0, 0, 0x1235, 0);
		for (int i = 0; i < ICMP_TUNNEL_PENDING - 1 + more; i++)
			echo_obs(&md, SBX, OUT, 8, 2, i, 56, 0, 0, 0x1237, 1000);
		echo_obs(&md, OUT, SBX, 0, 1, 1, 56, 0, 0, 0x4321, 2000);
		CHECK_EQ(R.n, more ? 0 : 1);
		echo_obs(&md, OUT, SBX, 0, 2, more, 56, 0, 0, 0x4321, 2000);
		CHECK_EQ(R.n, more ? 1 : 2); /* the newer ones are all there */
	}

	/* ping -s 1400 (17 bytes of data, then the count), ping -p, traceroute:
	 * filler is not data, for size, entropy and volume alike */
	reset();
	for (int i = 0; i < 60; i++) {
		echo_obs(&md, SBX, OUT, 8, 9, i, 1400, 17, 380, 0x9999 + 2 * (unsigned)i,
			 (uint64_t)i * 200000u);
		echo_obs(&md, OUT, SBX, 0, 9, i, 1400, 17, 380, 0x9999 + 2 * (unsigned)i,
			 (uint64_t)i * 200000u + 100);
	}
	echo_obs(&md, SBX, OUT, 8, 10, 1, 1000, 32, 500, 0xaaab, 0);
	echo_obs(&md, SBX, OUT, 8, 11, 1, 100, 31, 700, 0xbbbb, 0);
	CHECK_EQ(R.n, 0);
	/* data past the thresholds is still data */
	echo_obs(&md, SBX, OUT, 8, 12, 1, 1400, 129, 380, 0xcccd, 0);
	CHECK_EQ(count("icmp_tunnel"), 1);
	CHECK_STR(R.a[0].detail, "echo payload of 129 bytes (more than 128)");
	CHECK_STR(R.a[0].evidence, "request: 1400 bytes (129 of data, then filler), entropy 3.80");
	echo_obs(&md, SBX, OUT, 8, 13, 1, 100, 32, 601, 0xdddd, 0);
	CHECK_EQ(count("icmp_tunnel"), 2);
	mod_close(&md);
}

static void test_icmp_tunnel(void)
{
	struct rules r;

	sandbox_rules(&r);
	run_icmp_tunnel(&r);
	/* a content class: the same without a sandbox section */
	bare_rules(&r);
	run_icmp_tunnel(&r);
	test_icmp_tunnel_distinct();
}

/* A full volume table still works: stale windows are replaced. */
static void test_icmp_tunnel_bounded(void)
{
	struct rules r;
	struct mod md;
	struct tpkt t;
	char src[32];

	bare_rules(&r);
	mod_open(&md, &detect_icmp_tunnel_module, &r);
	reset();
	for (unsigned i = 0; i < 5000; i++) {
		snprintf(src, sizeof(src), "10.%u.%u.%u", (i >> 16) & 255, (i >> 8) & 255, i & 255);
		mk(&t, IPPROTO_ICMP, src, 0, OUT, 0, 0);
		t.p.ts_us += i;
		icmp_obs(&md, &t.p, 8, 56, 500);
	}
	CHECK_EQ(R.n, 0);
	for (int i = 0; i < 83; i++) {
		mk(&t, IPPROTO_ICMP, "10.200.0.1", 0, OUT, 0, 0);
		t.p.ts_us += 10000 + (uint64_t)i;
		icmp_obs(&md, &t.p, 8, 100, 400);
	}
	CHECK_EQ(count("icmp_tunnel"), 1);
	mod_close(&md);
}

/* ---- the background scenario: allowed traffic raises nothing -------------- */

static void test_allowed_quiet(void)
{
	struct rules r;
	struct mod md, mt;
	struct tpkt t;

	sandbox_rules(&r);
	r.domains = (struct rules_strlist){.v = domain_v, .n = 2};
	mod_open(&md, &detect_egress_module, &r);
	mod_open(&mt, &detect_icmp_tunnel_module, &r);
	reset();
	/* DNS to the resolver for an allowed name, the proxy in both modes,
	 * TLS through a CONNECT tunnel to an allowed name, a ping inside */
	mk(&t, IPPROTO_UDP, SBX, 40000, "10.99.0.53", 53, 0);
	pkt_in(&md, &t.p);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "api.example.org", 0);
	mk(&t, IPPROTO_TCP, SBX, 40001, "10.99.0.2", 8080, TH_SYN);
	pkt_in(&md, &t.p);
	t.p.tcp_flags = TH_ACK | TH_PUSH;
	pkt_in(&md, &t.p);
	http_req(&md, &t.p, "POST", "/v1/chat/completions", "egress-proxy:8080", "");
	http_req(&md, &t.p, "CONNECT", "api.example.org:443", "api.example.org:443", "");
	name_obs(&md, OBS_TLS_CLIENT_HELLO, &t.p, "api.example.org", 0);
	mk(&t, IPPROTO_TCP, "10.99.0.2", 8080, SBX, 40001, TH_ACK | TH_PUSH);
	t.p.dir = 1;
	pkt_in(&md, &t.p);
	http_resp(&md, &t.p, 200, "POST", "egress-proxy:8080", "/v1/chat/completions");
	mk(&t, IPPROTO_ICMP, SBX, 0, "10.99.0.1", 0, 0);
	icmp_obs(&md, &t.p, 8, 56, 568);
	icmp_obs(&mt, &t.p, 8, 56, 568);
	CHECK_EQ(R.n, 0);
	mod_close(&md);
	mod_close(&mt);
}

/* ---- the rules file and the detector together ------------------------------ */

static void test_rules_file(void)
{
	char path[] = "/tmp/test_egress_XXXXXX";
	static const char yaml[] =
		"sandbox:\n"
		"  networks: [10.99.0.0/24, \"fd00:99::/64\"]\n"
		"allow:\n"
		"  proxies: [\"10.99.0.2:8080\"]\n"
		"  resolvers: [\"10.99.0.53\"]\n"
		"  destinations: [\"203.0.113.0/24:443\"]\n"
		"  domains: [\"*.example.org\"]\n"
		"  ipv6: false\n"
		"  dns_over_tcp: false\n";
	struct rules *r = NULL;
	struct mod md;
	struct tpkt t;
	char err[512] = "";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(write(fd, yaml, sizeof(yaml) - 1), (long long)(sizeof(yaml) - 1));
	close(fd);
	CHECK_EQ(rules_load(path, &r, err, sizeof(err)), 0);
	unlink(path);
	if (!r) {
		fprintf(stderr, "rules_load: %s\n", err);
		return;
	}
	mod_open(&md, &detect_egress_module, r);
	reset();
	syn(&md, SBX, "10.99.0.2", 8080);
	syn(&md, SBX, "203.0.113.9", 443);
	udp(&md, SBX, "10.99.0.53", 53);
	mk(&t, IPPROTO_UDP, SBX, 40000, "10.99.0.53", 53, 0);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "www.example.org", 0);
	CHECK_EQ(R.n, 0);
	syn(&md, SBX, OUT, 443);
	udp(&md, SBX, OUT, 443);
	syn(&md, SBX, "10.99.0.53", 53);
	name_obs(&md, OBS_DNS_QUERY, &t.p, "example.org", 0);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK_EQ(count("udp_egress"), 1);
	CHECK_EQ(count("dns_over_tcp"), 1);
	CHECK_EQ(count("domain_not_allowed"), 1);
	CHECK_EQ(R.n, 4);
	mod_close(&md);
	rules_free(r);

	/* the built-in defaults: no sandbox, content classes only */
	r = rules_default();
	CHECK(r != NULL);
	if (!r)
		return;
	mod_open(&md, &detect_egress_module, r);
	reset();
	syn(&md, SBX, OUT, 443);
	syn(&md, SBX, OUT, 853);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(count("doh"), 1);
	mod_close(&md);
	mod_open(&md, &detect_icmp_tunnel_module, r);
	reset();
	ping(&md, SBX, OUT, 8, 56, 568);
	ping(&md, SBX, OUT, 8, 129, 300);
	CHECK_EQ(count("icmp_tunnel"), 1);
	mod_close(&md);
	rules_free(r);
}

/* ---- other IP protocols, broken headers, tunnels --------------------------- */

/* Make t's packet a tunnel's inner packet behind an outer datagram from osrc
 * to odst (IPv4) of protocol oproto (UDP to odport for VXLAN/GENEVE). */
static void tunnel(struct tpkt *t, unsigned oproto, const char *osrc, const char *odst,
		   unsigned odport)
{
	t->p.encap = 1;
	t->p.outer.ipv = 4;
	t->p.outer.proto = (uint8_t)oproto;
	t->p.outer.sport = oproto == IPPROTO_UDP ? 50000 : 0;
	t->p.outer.dport = (uint16_t)odport;
	if (inet_pton(AF_INET, osrc, t->p.outer.src) != 1 ||
	    inet_pton(AF_INET, odst, t->p.outer.dst) != 1)
		abort();
}

static void test_other_paths(void)
{
	struct rules r;
	struct mod md;
	struct tpkt t;

	sandbox_rules(&r);
	mod_open(&md, &detect_egress_module, &r);

	/* SCTP, GRE, ESP, a raw protocol: proxy_bypass by address, once a flow */
	reset();
	mk(&t, 132, SBX, 0, OUT, 0, 0);
	pkt_in(&md, &t.p);
	pkt_in(&md, &t.p);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK_STR(R.a[0].subject, "198.51.100.7");
	CHECK_EQ(R.a[0].severity, 4);
	CHECK(strstr(R.a[0].detail, "IP protocol 132 (SCTP)") != NULL);
	reset();
	mk(&t, 253, SBX, 0, OUT, 0, 0);
	pkt_in(&md, &t.p);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK(strstr(R.a[0].detail, "IP protocol 253,") != NULL);
	/* not: to an allowed address, inside, multicast (IGMP, VRRP), from
	 * outside, a reply, without a sandbox section */
	reset();
	mk(&t, 50, SBX, 0, "192.0.2.10", 0, 0);
	pkt_in(&md, &t.p);
	mk(&t, 47, SBX, 0, "10.99.0.20", 0, 0);
	pkt_in(&md, &t.p);
	mk(&t, 2, SBX, 0, "224.0.0.22", 0, 0);
	pkt_in(&md, &t.p);
	mk(&t, 112, SBX, 0, "224.0.0.18", 0, 0);
	pkt_in(&md, &t.p);
	mk(&t, 132, OUT, 0, SBX, 0, 0);
	pkt_in(&md, &t.p);
	mk(&t, 132, SBX, 0, OUT, 0, 0);
	t.p.dir = 1;
	pkt_in(&md, &t.p);
	CHECK_EQ(R.n, 0);
	/* only a destination without a port allows the whole host: GRE to a
	 * proxy (10.98.0.2:3128), SCTP to a destination with a port
	 * (203.0.113.0/24 port 443), ESP to a resolver (10.98.0.53) */
	reset();
	mk(&t, 47, SBX, 0, "10.98.0.2", 0, 0);
	pkt_in(&md, &t.p);
	mk(&t, 132, SBX, 0, "203.0.113.9", 0, 0);
	pkt_in(&md, &t.p);
	mk(&t, 50, SBX, 0, "10.98.0.53", 0, 0);
	pkt_in(&md, &t.p);
	CHECK_EQ(count("proxy_bypass"), 3);
	CHECK_STR(R.a[0].subject, "10.98.0.2");
	CHECK_STR(R.a[1].subject, "203.0.113.9");
	CHECK_STR(R.a[2].subject, "10.98.0.53");
	/* A source route that ends outside: a SYN to the proxy (allowed) whose
	 * route names 198.51.100.7 last, once a flow; UDP to the resolver; an
	 * ICMP echo; not when the route ends at an allowed address or inside,
	 * nor from outside the sandbox */
	reset();
	mk(&t, IPPROTO_TCP, SBX, 40000, "10.99.0.2", 8080, TH_SYN);
	t.p.flags |= PKT_SRCROUTE;
	inet_pton(AF_INET, OUT, t.p.route_to);
	pkt_in(&md, &t.p);
	pkt_in(&md, &t.p);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK_STR(R.a[0].subject, "198.51.100.7:8080");
	CHECK(strstr(R.a[0].detail, "source-routed to 198.51.100.7:8080 through 10.99.0.2") != NULL);
	reset();
	mk(&t, IPPROTO_UDP, SBX, 40001, "10.98.0.53", 53, 0);
	t.p.flags |= PKT_SRCROUTE;
	inet_pton(AF_INET, OUT, t.p.route_to);
	pkt_in(&md, &t.p);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK_EQ(R.n, 1);
	reset();
	mk(&t, IPPROTO_ICMP, SBX, 0, "10.99.0.20", 0, 0);
	t.p.flags |= PKT_SRCROUTE;
	inet_pton(AF_INET, OUT, t.p.route_to);
	icmp_obs(&md, &t.p, 8, 56, 500);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK_STR(R.a[0].subject, "198.51.100.7");
	reset();
	static const char *const ends[] = {"192.0.2.10", "10.99.0.20", "224.0.0.9"};
	for (size_t k = 0; k < 3; k++) {
		mk(&t, IPPROTO_TCP, SBX, (unsigned)(40010 + k), "10.99.0.2", 8080, TH_SYN);
		t.p.flags |= PKT_SRCROUTE;
		inet_pton(AF_INET, ends[k], t.p.route_to);
		pkt_in(&md, &t.p);
	}
	mk(&t, IPPROTO_TCP, OUT, 40020, "10.99.0.2", 8080, TH_SYN);
	t.p.flags |= PKT_SRCROUTE;
	inet_pton(AF_INET, "198.51.100.8", t.p.route_to);
	pkt_in(&md, &t.p);
	CHECK_EQ(R.n, 0);
	/* IPv6: ipv6_egress as well */
	reset();
	mk(&t, 132, SBX6, 0, OUT6, 0, 0);
	pkt_in(&md, &t.p);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK_EQ(count("ipv6_egress"), 1);

	/* Broken transport headers (PKT_L4_BAD, no flow): judged by the
	 * protocol they claim, every packet */
	reset();
	flowless(&md, IPPROTO_UDP, SBX, 40000, OUT, 9999, PKT_L4_BAD);
	flowless(&md, IPPROTO_UDP, SBX, 40000, OUT, 9999, PKT_L4_BAD);
	CHECK_EQ(count("udp_egress"), 2);
	CHECK_STR(R.a[0].subject, "198.51.100.7:9999");
	CHECK(strstr(R.a[0].detail, "broken header") != NULL);
	reset();
	flowless(&md, IPPROTO_TCP, SBX, 40000, OUT, 443, PKT_L4_BAD);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK_STR(R.a[0].subject, "198.51.100.7:443");
	CHECK(strstr(R.a[0].detail, "TCP segment with a broken header") != NULL);
	reset();
	flowless(&md, IPPROTO_ICMP, SBX, 0, OUT, 0, PKT_L4_BAD);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK(strstr(R.a[0].detail, "IP protocol 1 (ICMP) with a broken header") != NULL);
	/* ... but a broken one to the proxy, or DNS to the resolver, is allowed */
	reset();
	flowless(&md, IPPROTO_TCP, SBX, 40000, "10.99.0.2", 8080, PKT_L4_BAD);
	flowless(&md, IPPROTO_UDP, SBX, 40000, "10.99.0.53", 53, PKT_L4_BAD);
	/* and a TCP packet that is not a SYN raises nothing (its flow did) */
	mk(&t, IPPROTO_TCP, SBX, 40000, OUT, 443, TH_ACK);
	pkt_in(&md, &t.p);
	CHECK_EQ(R.n, 0);

	/* Datagrams whose fragments never completed (the fragment table gave
	 * up: PKT_FRAGMENT | PKT_L4_BAD, no flow), by the protocol they
	 * claimed; a fragment on its way to a whole datagram is not judged */
	reset();
	flowless(&md, IPPROTO_UDP, SBX, 40000, OUT, 9999, PKT_FRAGMENT | PKT_L4_BAD);
	CHECK_EQ(count("udp_egress"), 1);
	CHECK_STR(R.a[0].subject, "198.51.100.7:9999");
	CHECK(strstr(R.a[0].detail, "UDP fragments that never made a whole datagram") != NULL);
	flowless(&md, 253, SBX, 0, OUT, 0, PKT_FRAGMENT | PKT_L4_BAD);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK(strstr(R.a[1].detail, "IP protocol 253 in fragments that never made a whole datagram") !=
	      NULL);
	flowless(&md, IPPROTO_UDP, SBX, 40000, "10.99.0.53", 53, PKT_FRAGMENT | PKT_L4_BAD); /* DNS to the resolver: allowed */
	flowless(&md, IPPROTO_UDP, SBX, 0, "10.99.0.53", 0, PKT_FRAGMENT | PKT_L4_BAD); /* no ports: the resolver's address is allowed */
	flowless(&md, IPPROTO_TCP, SBX, 0, "10.99.0.2", 0, PKT_L4_BAD); /* and the proxy's */
	flowless(&md, IPPROTO_UDP, SBX, 40000, OUT, 9999, PKT_FRAGMENT);
	CHECK_EQ(R.n, 2);
	reset();
	flowless(&md, IPPROTO_UDP, SBX, 0, OUT, 0, PKT_FRAGMENT | PKT_L4_BAD); /* no ports, outside: by address, not allowed */
	CHECK_EQ(count("udp_egress"), 1);
	CHECK_STR(R.a[0].subject, "198.51.100.7");

	/* Tunnels: the outer datagram is judged as well as the inner packet.
	 * DNS to the allowed resolver inside VXLAN to a host outside is
	 * udp_egress to that host. */
	reset();
	mk(&t, IPPROTO_UDP, SBX, 5555, "10.99.0.53", 53, 0);
	tunnel(&t, IPPROTO_UDP, SBX, OUT, 4789);
	pkt_in(&md, &t.p);
	CHECK_EQ(R.n, 1);
	CHECK_EQ(count("udp_egress"), 1);
	CHECK_STR(R.a[0].subject, "198.51.100.7:4789");
	CHECK(strstr(R.a[0].detail, "carrying a tunnel") != NULL);
	/* the same inner flow in another carrier raises again: outer hops
	 * are not remembered per inner flow */
	tunnel(&t, 47, SBX, "198.51.100.8", 0);
	pkt_in(&md, &t.p);
	CHECK_EQ(count("proxy_bypass"), 1);
	CHECK_STR(R.a[1].subject, "198.51.100.8");
	CHECK(strstr(R.a[1].detail, "IP protocol 47 (GRE)") != NULL);
	/* outer allowed, inner judged on its own: SYN to the outside */
	reset();
	mk(&t, IPPROTO_TCP, SBX, 40000, OUT, 443, TH_SYN);
	tunnel(&t, 47, SBX, "192.0.2.10", 0);
	pkt_in(&md, &t.p);
	CHECK_EQ(R.n, 1);
	CHECK_STR(R.a[0].subject, "198.51.100.7:443");
	/* an underlay: outer addresses outside the sandbox are not judged,
	 * the inner packet is */
	reset();
	mk(&t, IPPROTO_UDP, SBX, 5555, "10.99.0.53", 53, 0);
	tunnel(&t, IPPROTO_UDP, "192.0.2.200", "192.0.2.201", 4789);
	pkt_in(&md, &t.p);
	CHECK_EQ(R.n, 0);
	/* ICMP inside a tunnel: the outer hop still counts */
	mk(&t, IPPROTO_ICMP, SBX, 0, "10.99.0.20", 0, 0);
	tunnel(&t, 4, SBX, OUT, 0);
	pkt_in(&md, &t.p);
	CHECK_EQ(count("proxy_bypass"), 1);

	/* no sandbox section: none of these is judged */
	reset();
	r.has_sandbox = 0;
	mk(&t, 132, SBX, 0, OUT, 0, 0);
	pkt_in(&md, &t.p);
	mk(&t, IPPROTO_UDP, SBX, 5555, "10.99.0.53", 53, 0);
	tunnel(&t, IPPROTO_UDP, SBX, OUT, 4789);
	pkt_in(&md, &t.p);
	CHECK_EQ(R.n, 0);
	mod_close(&md);
}

int main(void)
{
	test_descriptors();
	test_doh_names();
	test_proxy_bypass();
	test_udp_egress();
	test_other_paths();
	test_icmp_egress();
	test_ipv6_egress();
	test_dns_over_tcp();
	test_doh();
	test_websocket();
	test_smtp();
	test_domain_not_allowed();
	test_proxy_denied();
	test_icmp_tunnel();
	test_icmp_tunnel_replies();
	test_icmp_tunnel_lead();
	test_icmp_tunnel_hour();
	test_icmp_tunnel_bounded();
	test_allowed_quiet();
	test_rules_file();
	return check_done();
}
