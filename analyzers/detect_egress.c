/*
 * detect_egress.c - the egress policy detector of detect_egress.h.
 *
 * The sandbox section of the rules says where agents live and the allow
 * section what they may reach: the proxies, the resolvers (for DNS), other
 * destinations, a domain allowlist, and whether IPv6 and DNS over TCP are
 * allowed. Everything an agent starts towards anything else is a policy
 * alert, named for the path it took: a TCP connection (proxy_bypass, with
 * smtp or dns_over_tcp beside it for those ports), a UDP datagram
 * (udp_egress), an ICMP echo (icmp_egress), IPv6 at all (ipv6_egress), and
 * the other ways out past the proxy: any other IP protocol and a TCP
 * segment whose header cannot be read (proxy_bypass), a UDP datagram whose
 * header cannot be read (udp_egress), and the carrier of a tunnel (pkt.outer:
 * the datagram on the wire, judged as a packet of its own). The
 * application observations add what the addresses cannot tell: a name
 * outside the allowlist (domain_not_allowed), a WebSocket upgrade
 * (websocket), a 403 from the proxy (proxy_denied, outcome "blocked" by
 * definition), DNS over TCP on any port. DNS over HTTPS/TLS (doh) is a
 * content class: it is judged with or without a sandbox section, from any
 * source.
 *
 * "From the sandbox" means: the source address is in sandbox.networks and
 * is not itself an allowed proxy or resolver (those are the sanctioned ways
 * out and their own upstream traffic is not an agent's), and for packets,
 * the sender started the flow (a reply to something outside is not egress).
 * Destinations that never leave the segment (IPv4 limited broadcast and
 * multicast, IPv6 multicast) are not egress either.
 *
 * Only header fields of struct pkt are read (addresses, ports, protocol,
 * TCP flags, flow direction and id), never payload bytes.
 */
#include "detect_egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sensor/flow.h"
#include "../sensor/record.h"
#include "../sensor/rules.h"
#include "../sensor/text.h"
#include "icmp.h"
#include "module.h"

#define SEEN_SETS 4096u  /* per-flow cache: two ways per set */
#define SUBJECT_LEN 256
#define DETAIL_LEN 256
#define NAME_LEN 256

enum sev { SEV_INFO = 1, SEV_LOW, SEV_MEDIUM, SEV_HIGH, SEV_CRITICAL };

/* What a flow has already raised (the low bits of a cache key). */
enum seen_tag {
	K_PROXY_BYPASS = 1, K_UDP_EGRESS, K_ICMP_EGRESS, K_IPV6_EGRESS, K_DNS_OVER_TCP,
	K_DOH_ADDR, K_SMTP, K_OTHER_PROTO, K_SRCROUTE,
	K_OUTER = 16, /* added to a tag raised for a tunnel's outermost datagram */
};
#define SEEN_TAG_BITS 5

/* Known DNS-over-HTTPS/TLS resolver names: the name and its subdomains.
 * D("name") keeps its length, so the per-name test needs no strlen. */
#define D(s) {s, sizeof(s) - 1}
static const struct {
	const char *s;
	size_t n;
} doh_names[] = {
	D("dns.google"), D("dns.google.com"), D("cloudflare-dns.com"), D("one.one.one.one"),
	D("dns.quad9.net"), D("dns9.quad9.net"), D("dns10.quad9.net"), D("dns11.quad9.net"),
	D("dns12.quad9.net"), D("doh.opendns.com"), D("doh.familyshield.opendns.com"),
	D("doh.sandbox.opendns.com"), D("dns.nextdns.io"), D("doh.cleanbrowsing.org"),
	D("dns.adguard-dns.com"), D("unfiltered.adguard-dns.com"), D("family.adguard-dns.com"),
	D("dns.adguard.com"), D("dns-unfiltered.adguard.com"), D("dns-family.adguard.com"),
	D("dns.mullvad.net"), D("doh.mullvad.net"), D("dns.controld.com"), D("freedns.controld.com"),
	D("doh.dns.sb"), D("dns.alidns.com"), D("doh.pub"), D("dns.pub"), D("dns0.eu"),
	D("dns.switch.ch"), D("ordns.he.net"), D("doh.libredns.gr"), D("doh.applied-privacy.net"),
	D("dns.digitale-gesellschaft.ch"), D("doh.ffmuc.net"), D("dns.twnic.tw"),
	D("doh.xfinity.com"), D("dns.comss.one"),
};
#undef D

/* Known DNS-over-HTTPS/TLS resolver addresses (parsed once, at init). */
static const char *const doh_addr_text[] = {
	"8.8.8.8", "8.8.4.4", "1.1.1.1", "1.0.0.1", "1.1.1.2", "1.0.0.2", "1.1.1.3",
	"1.0.0.3", "9.9.9.9", "149.112.112.112", "9.9.9.10", "149.112.112.10",
	"9.9.9.11", "149.112.112.11", "208.67.222.222", "208.67.220.220",
	"208.67.222.123", "208.67.220.123", "94.140.14.14", "94.140.15.15",
	"94.140.14.140", "94.140.14.141", "185.228.168.168", "185.228.169.168",
	"185.228.168.9", "185.228.169.9", "194.242.2.2", "185.222.222.222",
	"45.11.45.11", "223.5.5.5", "223.6.6.6", "1.12.12.12", "120.53.53.53",
	"193.110.81.0", "185.253.5.0", "76.76.2.0", "76.76.10.0", "45.90.28.0",
	"45.90.30.0",
	"2606:4700:4700::1111", "2606:4700:4700::1001", "2606:4700:4700::1112",
	"2606:4700:4700::1002", "2606:4700:4700::1113", "2606:4700:4700::1003",
	"2001:4860:4860::8888", "2001:4860:4860::8844", "2001:4860:4860::6464",
	"2001:4860:4860::64", "2620:fe::fe", "2620:fe::9", "2620:fe::10",
	"2620:fe::fe:10", "2620:fe::11", "2620:fe::fe:11", "2620:119:35::35",
	"2620:119:53::53", "2a10:50c0::ad1:ff", "2a10:50c0::ad2:ff",
	"2a07:e340::2", "2400:3200::1", "2400:3200:baba::1", "2a09::", "2a11::",
	"2606:1a40::", "2606:1a40:1::",
};
#define DOH_ADDRS (sizeof(doh_addr_text) / sizeof(doh_addr_text[0]))

struct doh_addr {
	uint8_t ipv;
	uint8_t a[16];
};

struct egress_state {
	const struct rules *rules;          /* borrowed from module_env */
	struct doh_addr doh[DOH_ADDRS];
	size_t n_doh;
	uint64_t seen[SEEN_SETS * 2];       /* flow id << SEEN_TAG_BITS | tag; 0 = empty */
};

/* ---- small helpers -------------------------------------------------------- */

static size_t addr_len(int ipv)
{
	return ipv == 6 ? 16 : 4;
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static int ieq(const char *a, size_t an, const char *b, size_t bn)
{
	if (an != bn)
		return 0;
	for (size_t i = 0; i < an; i++)
		if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
			return 0;
	return 1;
}

/* "addr:port" ("[v6]:port"), or the address alone when port is 0. */
static void addr_port(char *dst, size_t cap, int ipv, const uint8_t *addr, uint16_t port)
{
	char a[64];

	text_addr(a, sizeof(a), ipv, addr);
	if (!port)
		snprintf(dst, cap, "%s", a);
	else if (ipv == 6)
		snprintf(dst, cap, "[%s]:%u", a, (unsigned)port);
	else
		snprintf(dst, cap, "%s:%u", a, (unsigned)port);
}

/* Field idx of the first record of a sensor/record.h detail; 0 if absent. */
static int info_field(const char *info, size_t len, unsigned idx, const char **f, size_t *flen)
{
	const char *rec;
	size_t rlen;

	if (!info || !rec_split(&info, &len, REC_RS, &rec, &rlen))
		return 0;
	for (unsigned i = 0; rec_split(&rec, &rlen, REC_US, f, flen); i++)
		if (i == idx)
			return 1;
	return 0;
}

/*
 * The host of a Host value or an authority: brackets of an IPv6 literal,
 * a ":port" suffix and one trailing dot removed. Sets *out and *olen.
 */
static void host_part(const char *s, size_t n, const char **out, size_t *olen)
{
	const char *colon;

	if (n && s[0] == '[') {
		const char *rb = memchr(s, ']', n);
		*out = s + 1;
		*olen = rb ? (size_t)(rb - s) - 1 : n - 1;
		return;
	}
	/* exactly one ':' starts a port (two or more: a bare IPv6 literal) */
	colon = n ? memchr(s, ':', n) : NULL;
	if (colon && !memchr(colon + 1, ':', n - (size_t)(colon + 1 - s)))
		n = (size_t)(colon - s);
	if (n && s[n - 1] == '.')
		n--;
	*out = s;
	*olen = n;
}

/*
 * The authority of an absolute-form ("http://host:port/path") or, for a
 * CONNECT (connect set), authority-form ("host:port") request-target; 0
 * for origin-form ("/path"), asterisk-form, an empty target, or any other
 * target of another method: RFC 9112 3.2 gives authority form to CONNECT
 * alone, and "http:/evil.example/" on a GET is no authority "http" (a
 * proxy goes by its Host).
 */
static int target_authority(const char *t, size_t n, int connect, const char **a, size_t *alen)
{
	size_t i, end;

	if (n == 0 || t[0] == '/' || (n == 1 && t[0] == '*'))
		return 0;
	for (i = 0; i + 2 < n && i < 32; i++)
		if (t[i] == ':' && t[i + 1] == '/' && t[i + 2] == '/')
			break;
	if (i + 2 < n && i < 32) {
		i += 3;
		for (end = i; end < n && t[end] != '/' && t[end] != '?' && t[end] != '#'; end++)
			;
		for (size_t k = end; k > i; k--)
			if (t[k - 1] == '@') { /* userinfo */
				i = k;
				break;
			}
	} else if (connect) {
		i = 0;
		end = n;
	} else {
		return 0;
	}
	if (end == i)
		return 0;
	*a = t + i;
	*alen = end - i;
	return 1;
}

/* The path of a request-target (origin form, or after an absolute form's
 * authority); "" when there is none. */
static void target_path(const char *t, size_t n, int connect, const char **p, size_t *plen)
{
	const char *a;
	size_t alen;

	*p = "";
	*plen = 0;
	if (n && t[0] == '/') {
		*p = t;
		*plen = n;
	} else if (target_authority(t, n, connect, &a, &alen) && a + alen < t + n &&
		   a[alen] == '/') {
		*p = a + alen;
		*plen = (size_t)(t + n - *p);
	}
}

int detect_egress_doh_name(const char *name, size_t len)
{
	const char *h;
	size_t hl;
	int last;

	if (!name)
		return 0;
	host_part(name, len, &h, &hl);
	if (hl == 0)
		return 0;
	last = lower((unsigned char)h[hl - 1]);
	for (size_t i = 0; i < sizeof(doh_names) / sizeof(doh_names[0]); i++) {
		size_t zl = doh_names[i].n;
		/* the last byte and the label boundary first: they tell almost
		 * every name apart before the whole suffix is compared */
		if (hl < zl || doh_names[i].s[zl - 1] != last || (hl > zl && h[hl - zl - 1] != '.'))
			continue;
		if (ieq(h + hl - zl, zl, doh_names[i].s, zl))
			return 1;
	}
	return 0;
}

static int doh_addr(const struct egress_state *st, int ipv, const uint8_t *a)
{
	for (size_t i = 0; i < st->n_doh; i++)
		if (st->doh[i].ipv == ipv && memcmp(st->doh[i].a, a, addr_len(ipv)) == 0)
			return 1;
	return 0;
}

/*
 * Has this flow raised tag already? Records it if not. A NULL flow (a
 * fragment, a test packet) is never remembered. Two-way set-associative:
 * the older way is replaced.
 */
static int seen_once(struct egress_state *st, const struct flow *f, unsigned tag)
{
	uint64_t key, *w;
	uint32_t set;

	if (!f)
		return 0;
	key = (f->id << SEEN_TAG_BITS) | tag;
	set = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (SEEN_SETS - 1);
	w = &st->seen[set * 2];
	if (w[0] == key || w[1] == key)
		return 1;
	if (!w[0]) {
		w[0] = key;
	} else {
		if (w[1])
			w[0] = w[1];
		w[1] = key;
	}
	return 0;
}

/* ---- the rules ----------------------------------------------------------- */

static int in_sandbox(const struct rules *r, int ipv, const uint8_t *a)
{
	return rules_net_match(&r->sandbox, ipv, a, 0);
}

/* A source the policy classes judge: a sandbox address that is not itself
 * an allowed proxy or resolver. */
static int judged_source(const struct rules *r, int ipv, const uint8_t *src)
{
	return r->has_sandbox && in_sandbox(r, ipv, src) &&
	       !rules_net_match(&r->proxies, ipv, src, 0) &&
	       !rules_net_match(&r->resolvers, ipv, src, 0);
}

/* Limited broadcast and multicast: they never leave the segment. */
static int segment_only(int ipv, const uint8_t *a)
{
	if (ipv == 4)
		return (a[0] & 0xf0) == 0xe0 || (a[0] == 255 && a[1] == 255 && a[2] == 255 &&
						  a[3] == 255);
	return a[0] == 0xff;
}

static int link_local6(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

/*
 * The resolvers take DNS: the port an entry names, else 53. (An entry
 * "10.99.0.53" allows DNS to that address, not NTP.)
 */
static int resolver_ok(const struct rules *r, int ipv, const uint8_t *dst, uint16_t dport)
{
	for (size_t i = 0; i < r->resolvers.n; i++) {
		struct rules_net one = r->resolvers.v[i];
		struct rules_netlist l = {.v = &one, .n = 1};
		if (dport == (one.port ? one.port : 53) && rules_net_match(&l, ipv, dst, dport))
			return 1;
	}
	return 0;
}

static int tcp_allowed(const struct rules *r, const struct pkt *p)
{
	return in_sandbox(r, p->ipv, p->dst) ||
	       rules_net_match(&r->proxies, p->ipv, p->dst, p->dport) ||
	       rules_net_match(&r->destinations, p->ipv, p->dst, p->dport) ||
	       resolver_ok(r, p->ipv, p->dst, p->dport);
}

static int udp_allowed(const struct rules *r, const struct pkt *p)
{
	return in_sandbox(r, p->ipv, p->dst) ||
	       rules_net_match(&r->destinations, p->ipv, p->dst, p->dport) ||
	       resolver_ok(r, p->ipv, p->dst, p->dport);
}

/* Allowed by address alone (ICMP, IPv6 as a whole). */
static int addr_allowed(const struct rules *r, int ipv, const uint8_t *dst)
{
	return in_sandbox(r, ipv, dst) || rules_net_match(&r->proxies, ipv, dst, 0) ||
	       rules_net_match(&r->destinations, ipv, dst, 0) ||
	       rules_net_match(&r->resolvers, ipv, dst, 0);
}

/* Allowed as a whole host, for IP protocols other than TCP, UDP and ICMP:
 * the sandbox, or an allow.destinations entry that names no port. A proxy
 * takes TCP and a resolver DNS; an entry with a port allows that service,
 * not GRE or SCTP to the same address. */
static int host_allowed(const struct rules *r, int ipv, const uint8_t *dst)
{
	if (in_sandbox(r, ipv, dst))
		return 1;
	for (size_t i = 0; i < r->destinations.n; i++) {
		struct rules_net one = r->destinations.v[i];
		struct rules_netlist l = {.v = &one, .n = 1};
		if (!one.port && rules_net_match(&l, ipv, dst, 0))
			return 1;
	}
	return 0;
}

/* ---- raising ------------------------------------------------------------- */

static int emit_alert(struct emit *out, const struct pkt *p, const char *cls, int sev,
		      int score, const char *subject, const char *detail, const char *evidence,
		      const char *outcome)
{
	struct alert a = {
		.class = cls,
		.severity = sev,
		.score = score,
		.pkt = p,
		.subject = subject,
		.detail = detail,
		.evidence = evidence,
		.outcome = outcome,
	};
	return out->alert(out, &a);
}

/* A packet-based alert with subject "dst:port", once per flow and tag. A
 * tunnel's outer datagram (K_OUTER) is raised every time: its flow is the
 * inner packet's, which other carriers may share, and the alert rows
 * aggregate the repeats. */
static void raise_conn(struct egress_state *st, struct emit *out, const struct pkt *p,
		       unsigned tag, const char *cls, int sev, int score, const char *what)
{
	char subject[SUBJECT_LEN], detail[DETAIL_LEN];

	if (!(tag & K_OUTER) && seen_once(st, p->flow, tag))
		return;
	addr_port(subject, sizeof(subject), p->ipv, p->dst, p->dport);
	snprintf(detail, sizeof(detail), "%s to %.160s", what, subject);
	emit_alert(out, p, cls, sev, score, subject, detail, NULL, NULL);
}

/* proxy_bypass for a packet whose source route ends outside: subject the
 * route's last address (with the port), the header's destination named as
 * the hop it goes through first. */
static void raise_srcroute(struct egress_state *st, struct emit *out, const struct pkt *p,
			   unsigned tag)
{
	char subject[SUBJECT_LEN], via[64], detail[DETAIL_LEN];

	if (!(tag & K_OUTER) && seen_once(st, p->flow, tag | K_SRCROUTE))
		return;
	addr_port(subject, sizeof(subject), p->ipv, p->route_to, p->dport);
	text_addr(via, sizeof(via), p->ipv, p->dst);
	snprintf(detail, sizeof(detail),
		 "IP packet source-routed to %.80s through %.64s, not through an allowed proxy",
		 subject, via);
	emit_alert(out, p, "proxy_bypass", SEV_HIGH, 90, subject, detail, NULL, NULL);
}

/* domain_not_allowed for name[0..len) (already without port), if an
 * allowlist is set and the name is outside it. */
static void check_domain(const struct rules *r, struct emit *out, const struct pkt *p,
			 const char *name, size_t len, const char *what)
{
	char subject[NAME_LEN], detail[DETAIL_LEN];

	if (!r->domains.n || len == 0 || rules_domain_match(&r->domains, name, len))
		return;
	snprintf(subject, sizeof(subject), "%.*s", (int)(len < NAME_LEN ? len : NAME_LEN - 1),
		 name);
	snprintf(detail, sizeof(detail), "%s outside allow.domains", what);
	emit_alert(out, p, "domain_not_allowed", SEV_MEDIUM, 70, subject, detail, NULL, NULL);
}

static void raise_doh_name(struct emit *out, const struct pkt *p, const char *name,
			   size_t len, const char *what)
{
	char subject[NAME_LEN], detail[DETAIL_LEN];

	snprintf(subject, sizeof(subject), "%.*s", (int)(len < NAME_LEN ? len : NAME_LEN - 1),
		 name);
	snprintf(detail, sizeof(detail), "%s names a DNS-over-HTTPS resolver", what);
	emit_alert(out, p, "doh", SEV_MEDIUM, 80, subject, detail, NULL, NULL);
}

/* ---- packets ------------------------------------------------------------- */

/* The name of IP protocol n for a summary, or NULL. */
static const char *proto_label(unsigned n)
{
	switch (n) {
	case 0: return "IPv6 hop-by-hop options";
	case 1: return "ICMP";
	case 2: return "IGMP";
	case 4: return "IPv4-in-IP";
	case 6: return "TCP";
	case 17: return "UDP";
	case 33: return "DCCP";
	case 41: return "IPv6-in-IP";
	case 43: return "IPv6 routing header";
	case 44: return "IPv6 fragment header";
	case 47: return "GRE";
	case 50: return "ESP";
	case 51: return "AH";
	case 58: return "ICMPv6";
	case 59: return "no next header";
	case 60: return "IPv6 destination options";
	case 97: return "EtherIP";
	case 103: return "PIM";
	case 112: return "VRRP";
	case 115: return "L2TP";
	case 132: return "SCTP";
	case 136: return "UDP-Lite";
	case 137: return "MPLS-in-IP";
	default: return NULL;
	}
}

/*
 * Judge one IP hop p against the policy: a packet, or (tag K_OUTER, from_init
 * 1) the outermost datagram of a tunnelled one. from_init: the sender
 * started the flow, or there is no flow to tell.
 */
static int judge(struct egress_state *st, struct emit *out, const struct pkt *p, unsigned tag,
		 int from_init)
{
	const struct rules *r = st->rules;
	int bad = (p->flags & PKT_L4_BAD) != 0;
	int syn = p->proto == IPPROTO_TCP && !bad &&
		  (p->tcp_flags & (TH_SYN | TH_ACK)) == TH_SYN;
	int frag = (p->flags & PKT_FRAGMENT) != 0;
	/* a broken header or a lost fragment without its ports: judged by
	 * address alone, as for the protocols that have none */
	int noports = bad && !p->sport && !p->dport;
	int rc = MOD_NOT_MINE;

	/* doh (content): DoT on 853, DoQ on UDP 853, a known resolver on 443. */
	if (!frag && (syn || (p->proto == IPPROTO_UDP && !bad && from_init)) &&
	    (p->dport == 853 || (p->dport == 443 && doh_addr(st, p->ipv, p->dst)))) {
		raise_conn(st, out, p, tag | K_DOH_ADDR, "doh", SEV_MEDIUM, 80,
			   p->dport == 853 ? "DNS over TLS/QUIC (port 853)"
					   : "connection to a known DoH resolver");
		rc = MOD_OK;
	}

	if (!r->has_sandbox || !from_init || !judged_source(r, p->ipv, p->src))
		return rc;
	rc = MOD_OK;

	if (p->ipv == 6 && !r->allow_ipv6 && !link_local6(p->dst) && !segment_only(6, p->dst) &&
	    !addr_allowed(r, 6, p->dst))
		raise_conn(st, out, p, tag | K_IPV6_EGRESS, "ipv6_egress", SEV_HIGH, 80,
			   "IPv6 traffic");
	/* A source route names where the packet is to end: the header's
	 * destination may be the proxy, and the last hop outside. */
	if ((p->flags & PKT_SRCROUTE) && !addr_allowed(r, p->ipv, p->route_to) &&
	    !segment_only(p->ipv, p->route_to))
		raise_srcroute(st, out, p, tag);
	/* A fragment is judged in its whole datagram, or (PKT_L4_BAD too)
	 * once the fragment table gave up on that datagram. */
	if (frag && !bad)
		return rc;

	if (syn) {
		int allowed = tcp_allowed(r, p) || segment_only(p->ipv, p->dst);
		if (!allowed)
			raise_conn(st, out, p, tag | K_PROXY_BYPASS, "proxy_bypass", SEV_HIGH, 90,
				   "TCP connection, not through an allowed proxy,");
		if (!allowed && (p->dport == 25 || p->dport == 465 || p->dport == 587 ||
				 p->dport == 2525))
			raise_conn(st, out, p, tag | K_SMTP, "smtp", SEV_HIGH, 80,
				   "connection to a mail port");
		if (p->dport == 53 && !r->allow_dns_over_tcp)
			raise_conn(st, out, p, tag | K_DNS_OVER_TCP, "dns_over_tcp", SEV_MEDIUM, 70,
				   "DNS over TCP");
	} else if (p->proto == IPPROTO_UDP) {
		if (!(noports ? addr_allowed(r, p->ipv, p->dst) : udp_allowed(r, p)) &&
		    !segment_only(p->ipv, p->dst))
			raise_conn(st, out, p, tag | K_UDP_EGRESS, "udp_egress", SEV_HIGH, 85,
				   frag  ? "UDP fragments that never made a whole datagram, not "
					   "to an allowed resolver or destination,"
				   : bad ? "UDP datagram with a broken header, not to an allowed "
					   "resolver or destination,"
				   : tag & K_OUTER
					 ? "UDP datagram carrying a tunnel, not to an allowed "
					   "resolver or destination,"
					 : "UDP, not to an allowed resolver or destination,");
	} else if (p->proto == IPPROTO_TCP) {
		/* a segment with a broken header: no connection to follow, but
		 * its bytes went out */
		if (bad && !(noports ? addr_allowed(r, p->ipv, p->dst) : tcp_allowed(r, p)) &&
		    !segment_only(p->ipv, p->dst))
			raise_conn(st, out, p, tag | K_PROXY_BYPASS, "proxy_bypass", SEV_HIGH, 90,
				   frag ? "TCP fragments that never made a whole segment, not "
					  "through an allowed proxy,"
					: "TCP segment with a broken header, not through an allowed "
					  "proxy,");
	} else if (bad || (p->proto != IPPROTO_ICMP && p->proto != IPPROTO_ICMPV6)) {
		/* Any other IP protocol (SCTP, GRE, ESP, a raw protocol 253...),
		 * an ICMP message without even its type, a tunnel's outer
		 * datagram: a way out past the proxy. Judged by address: only
		 * an entry without a port allows it. */
		if (!host_allowed(r, p->ipv, p->dst) && !segment_only(p->ipv, p->dst)) {
			char what[160];
			const char *name = proto_label(p->proto);
			snprintf(what, sizeof(what), "IP protocol %u%s%s%s%s, not through an allowed proxy,",
				 (unsigned)p->proto, name ? " (" : "", name ? name : "",
				 name ? ")" : "",
				 frag ? " in fragments that never made a whole datagram"
				 : bad ? " with a broken header" : "");
			raise_conn(st, out, p, tag | K_OTHER_PROTO, "proxy_bypass", SEV_HIGH, 90,
				   what);
		}
	}
	return rc;
}

static int egress_on_packet(void *state, const struct pkt *p, struct emit *out)
{
	struct egress_state *st = state;
	int rc = MOD_NOT_MINE;

	/* A tunnel is judged by the datagram that carries it, too: that is
	 * the hop on the wire. An agent that wraps a packet for an allowed
	 * resolver in VXLAN to a host outside is sending to that host. */
	if (p->encap && p->outer.ipv) {
		struct pkt hop = *p;
		hop.ipv = p->outer.ipv;
		hop.proto = p->outer.proto;
		hop.sport = p->outer.sport;
		hop.dport = p->outer.dport;
		memcpy(hop.src, p->outer.src, sizeof(hop.src));
		memcpy(hop.dst, p->outer.dst, sizeof(hop.dst));
		hop.encap = 0;
		hop.flags = 0;
		hop.tcp_flags = 0;
		hop.payload_len = 0;
		rc = judge(st, out, &hop, K_OUTER, 1);
	}
	if (p->ipv != 4 && p->ipv != 6)
		return rc;
	if (!(p->flags & PKT_L4_BAD) && (p->proto == IPPROTO_ICMP || p->proto == IPPROTO_ICMPV6))
		return rc; /* ICMP is judged from its observations */
	if (judge(st, out, p, 0, !p->flow || p->dir == 0) == MOD_OK)
		rc = MOD_OK;
	return rc;
}

/* ---- observations -------------------------------------------------------- */

static void on_dns_query(struct egress_state *st, const struct obs *o, struct emit *out)
{
	const struct rules *r = st->rules;
	const struct pkt *p = o->pkt;

	if (detect_egress_doh_name(o->name, o->name_len))
		raise_doh_name(out, p, o->name, o->name_len, "DNS query");
	if (!judged_source(r, p->ipv, p->src))
		return;
	if ((o->flags & OBS_F_TCP) && !r->allow_dns_over_tcp)
		raise_conn(st, out, p, K_DNS_OVER_TCP, "dns_over_tcp", SEV_MEDIUM, 70,
			   "DNS over TCP");
	check_domain(r, out, p, o->name, o->name_len, "DNS query");
}

static void on_client_hello(struct egress_state *st, const struct obs *o, struct emit *out)
{
	const struct rules *r = st->rules;
	const char *h;
	size_t hl;

	if (!o->name || !o->name_len)
		return;
	host_part(o->name, o->name_len, &h, &hl);
	if (detect_egress_doh_name(h, hl))
		raise_doh_name(out, o->pkt, h, hl, "TLS SNI");
	if (judged_source(r, o->pkt->ipv, o->pkt->src))
		check_domain(r, out, o->pkt, h, hl, "TLS SNI");
}

/* Does a comma-separated header value hold the token tok? */
static int has_token(const char *v, size_t n, const char *tok)
{
	size_t tl = strlen(tok), i = 0;

	while (i < n) {
		size_t s = i, e;
		while (i < n && v[i] != ',')
			i++;
		e = i++;
		while (s < e && (v[s] == ' ' || v[s] == '\t'))
			s++;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (ieq(v + s, e - s, tok, tl))
			return 1;
	}
	return 0;
}

static void on_http_request(struct egress_state *st, const struct obs *o, struct emit *out)
{
	const struct rules *r = st->rules;
	const struct pkt *p = o->pkt;
	const char *t = o->aux ? o->aux : "", *host = NULL, *auth = NULL, *path, *up, *m;
	size_t tn = o->aux ? o->aux_len : 0, hostn = 0, authn = 0, pathn, upn, mn;
	char subject[SUBJECT_LEN], detail[DETAIL_LEN];
	int origin_to_proxy;
	int connect = info_field(o->info, o->info_len, 1, &m, &mn) && mn == 7 &&
		      memcmp(m, "CONNECT", 7) == 0;

	if (o->name && o->name_len)
		host_part(o->name, o->name_len, &host, &hostn);
	if (target_authority(t, tn, connect, &auth, &authn))
		host_part(auth, authn, &auth, &authn);
	/* The host the request is for: the target's authority wins (a proxy
	 * follows it), else Host. */
	const char *for_host = authn ? auth : host;
	size_t for_n = authn ? authn : hostn;
	if (for_n)
		snprintf(subject, sizeof(subject), "%.*s",
			 (int)(for_n < SUBJECT_LEN ? for_n : SUBJECT_LEN - 1), for_host);
	else
		addr_port(subject, sizeof(subject), p->ipv, p->dst, p->dport);

	/* doh (content): Host or target naming a resolver, or the RFC 8484 path. */
	target_path(t, tn, connect, &path, &pathn);
	if (authn && detect_egress_doh_name(auth, authn))
		raise_doh_name(out, p, auth, authn, "HTTP request-target");
	else if (hostn && detect_egress_doh_name(host, hostn))
		raise_doh_name(out, p, host, hostn, "HTTP Host");
	else if (pathn >= 10 && memcmp(path, "/dns-query", 10) == 0 &&
		 (pathn == 10 || path[10] == '?' || path[10] == '/'))
		emit_alert(out, p, "doh", SEV_MEDIUM, 70, subject,
			   "HTTP request to the DNS-over-HTTPS path /dns-query", NULL, NULL);

	if (!judged_source(r, p->ipv, p->src))
		return;
	if (info_field(o->info, o->info_len, 6, &up, &upn) && has_token(up, upn, "websocket")) {
		snprintf(detail, sizeof(detail), "HTTP Upgrade: websocket to %.200s", subject);
		emit_alert(out, p, "websocket", SEV_MEDIUM, 70, subject, detail,
			   t[0] ? t : NULL, NULL);
	}
	/* A request in origin form to an allowed proxy addresses the proxy
	 * itself (reverse-proxy mode): its Host names the proxy. A target of
	 * no form ("http:/evil.test/") is not that: its Host is judged. */
	origin_to_proxy = !authn && (tn == 0 || t[0] == '/' || t[0] == '*') &&
			  rules_net_match(&r->proxies, p->ipv, p->dst, p->dport);
	if (authn)
		check_domain(r, out, p, auth, authn, "HTTP request-target");
	if (hostn && !origin_to_proxy && !(authn && ieq(host, hostn, auth, authn)))
		check_domain(r, out, p, host, hostn, "HTTP Host");
}

static void on_http_response(struct egress_state *st, const struct obs *o, struct emit *out)
{
	const struct rules *r = st->rules;
	const struct pkt *p = o->pkt;
	const char *host = "", *target = "", *method = "";
	size_t hostn = 0, targetn = 0, methodn = 0;
	char subject[SUBJECT_LEN], detail[DETAIL_LEN], evidence[SUBJECT_LEN];
	struct pkt q;

	if (o->type != 403 || !r->has_sandbox ||
	    !rules_net_match(&r->proxies, p->ipv, p->src, p->sport) ||
	    !judged_source(r, p->ipv, p->dst))
		return;
	/* The refused request: the pair in the detail record, else name/aux. */
	if (!info_field(o->info, o->info_len, 10, &host, &hostn) && o->name) {
		host = o->name;
		hostn = o->name_len;
	}
	if (!info_field(o->info, o->info_len, 11, &target, &targetn) && o->aux) {
		target = o->aux;
		targetn = o->aux_len;
	}
	info_field(o->info, o->info_len, 9, &method, &methodn);
	if (targetn && target[0] != '/')
		snprintf(subject, sizeof(subject), "%.*s", (int)targetn, target);
	else if (targetn || hostn)
		snprintf(subject, sizeof(subject), "%.*s%.*s", (int)hostn, host, (int)targetn,
			 target);
	else
		addr_port(subject, sizeof(subject), p->ipv, p->src, p->sport);
	snprintf(evidence, sizeof(evidence), "%.*s%s%.*s", (int)methodn, method,
		 methodn ? " " : "", (int)targetn, target);
	snprintf(detail, sizeof(detail), "the proxy answered 403 to %.200s", subject);
	/* The alert is the client's: its address is the row's source. */
	q = pkt_turned(p);
	emit_alert(out, &q, "proxy_denied", SEV_MEDIUM, 60, subject, detail,
		   evidence[0] ? evidence : NULL, "blocked");
}

/* The summary's words for an ICMP message that starts something. */
static void icmp_what(char *dst, size_t cap, int ipv, unsigned type)
{
	const char *name = NULL;

	if (ipv == 4)
		name = type == 8    ? "echo request"
		       : type == 13 ? "timestamp request"
		       : type == 15 ? "information request"
		       : type == 17 ? "address mask request"
		       : type == 42 ? "extended echo request"
				    : NULL;
	else
		name = type == 128   ? "echo request"
		       : type == 139 ? "node information query"
		       : type == 160 ? "extended echo request"
				     : NULL;
	if (name)
		snprintf(dst, cap, "%s %s", ipv == 4 ? "ICMP" : "ICMPv6", name);
	else
		snprintf(dst, cap, "%s message of type %u", ipv == 4 ? "ICMP" : "ICMPv6", type);
}

static void on_icmp(struct egress_state *st, const struct obs *o, struct emit *out)
{
	const struct rules *r = st->rules;
	const struct pkt *p = o->pkt;
	char what[64];

	if ((p->flags & PKT_SRCROUTE) && judged_source(r, p->ipv, p->src) &&
	    !addr_allowed(r, p->ipv, p->route_to) && !segment_only(p->ipv, p->route_to))
		raise_srcroute(st, out, p, 0);
	/* Only a message that starts something is egress; errors, replies,
	 * neighbour discovery and router messages answer or keep the link. */
	if (!icmp_starts(p->ipv, (unsigned)o->type) || !judged_source(r, p->ipv, p->src) ||
	    segment_only(p->ipv, p->dst) || addr_allowed(r, p->ipv, p->dst))
		return;
	icmp_what(what, sizeof(what), p->ipv, (unsigned)o->type);
	raise_conn(st, out, p, K_ICMP_EGRESS, "icmp_egress", SEV_MEDIUM, 70, what);
	if (p->ipv == 6 && !r->allow_ipv6 && !link_local6(p->dst))
		raise_conn(st, out, p, K_IPV6_EGRESS, "ipv6_egress", SEV_HIGH, 80, "IPv6 traffic");
}

static int egress_on_obs(void *state, const struct obs *o, struct emit *out)
{
	struct egress_state *st = state;
	const struct pkt *p = o->pkt;

	if (!p || (p->ipv != 4 && p->ipv != 6))
		return MOD_NOT_MINE;
	switch (o->kind) {
	case OBS_DNS_QUERY:
		on_dns_query(st, o, out);
		break;
	case OBS_TLS_CLIENT_HELLO:
		on_client_hello(st, o, out);
		break;
	case OBS_HTTP_REQUEST:
		on_http_request(st, o, out);
		break;
	case OBS_HTTP_RESPONSE:
		on_http_response(st, o, out);
		break;
	case OBS_ICMP:
		on_icmp(st, o, out);
		break;
	default:
		return MOD_NOT_MINE;
	}
	return MOD_OK;
}

/* ---- lifecycle ----------------------------------------------------------- */

static int egress_init(const struct module_env *env, void **state)
{
	struct egress_state *st;

	if (!env || !env->rules)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->rules = env->rules;
	for (size_t i = 0; i < DOH_ADDRS; i++) {
		struct doh_addr *d = &st->doh[st->n_doh];
		if (inet_pton(AF_INET, doh_addr_text[i], d->a) == 1)
			d->ipv = 4;
		else if (inet_pton(AF_INET6, doh_addr_text[i], d->a) == 1)
			d->ipv = 6;
		else
			continue; /* cannot happen: the table is ours */
		st->n_doh++;
	}
	*state = st;
	return 0;
}

static void egress_fini(void *state)
{
	free(state);
}

const struct module detect_egress_module = {
	.name = "detect_egress",
	.sel = SEL_ALL,
	.obs_mask = (1u << OBS_DNS_QUERY) | (1u << OBS_HTTP_REQUEST) | (1u << OBS_HTTP_RESPONSE) |
		    (1u << OBS_TLS_CLIENT_HELLO) | (1u << OBS_ICMP),
	.init = egress_init,
	.fini = egress_fini,
	.on_packet = egress_on_packet,
	.on_obs = egress_on_obs,
};
