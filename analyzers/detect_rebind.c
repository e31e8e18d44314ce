/*
 * detect_rebind.c - the dns_rebind detector: a public name that resolves to
 * an address inside the host or the cloud (metadata, link-local, loopback,
 * unspecified, private), the DNS half of an SSRF that passes a "no internal
 * hosts" check by name and then connects by address.
 *
 * OBS_DNS_ANSWER: the answer records ("AN" in the DNS detail record,
 * analyzers/dns.h) of class IN and type A or AAAA, and the ipv4hint /
 * ipv6hint of SVCB and HTTPS records (browsers connect to those), are
 * classified with rebind_addr_class(). A question name that is internal
 * (see meta_name_internal: no dot, or under internal, local, ...) is
 * never judged (but a name under .arpa is, home.arpa aside: a reverse zone
 * is delegated to whoever holds the addresses, and an address answer there
 * is no reverse look-up's): metadata.google.internal is meant to resolve to
 * 169.254.169.254 and db.cluster.local to a private address. Under the rules'
 * trusted_domains (CDNs, AV look-ups that answer 127.0.0.x) only metadata and
 * link-local answers count. A CNAME chain does not launder a name: when the
 * question is public, every A/AAAA in the answer counts, whatever its owner.
 * One alert per response, for the worst address, with subject the question
 * name (lowercase) and the client that asked as source; outcome "answered",
 * since the answer reached it.
 *
 * OBS_DNS_QUERY: a question whose name spells an address the way wildcard
 * DNS services decode it (meta_name_addrs: 169.254.169.254.nip.io,
 * 169-254-169-254.sslip.io, a9fea9fe.nip.io, ...). A metadata address counts
 * under any public zone; other internal classes only under the known
 * wildcard services (meta_wildcard_zone), since hostnames such as
 * ip-10-0-0-1.example.net are common and harmless.
 *
 * Speed: a response's detail record is walked once, and only its "AN"
 * records of a type we judge are cut into fields; A and plain AAAA texts
 * are read without inet_pton (same result, see pton4 / pton6_plain). The
 * question name of a response is looked at (internal? trusted?) only once
 * an address of concern turns up, which gives the same verdicts as looking
 * first; a question is looked at for spelled addresses before its zones. A
 * question that on_query found harmless is harmless for every asker (the
 * verdict depends on the name and the rules alone, and a rules reload makes
 * a new state), so its exact text is remembered in a direct-mapped cache of
 * quiet names (REBIND_QUIET_SLOTS names of at most REBIND_QUIET_NAME bytes)
 * and not parsed again. Nothing else is kept between observations.
 */
#include "detect_rebind.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../sensor/record.h"
#include "../sensor/rules.h"
#include "../sensor/text.h"
#include "detect_metadata.h"
#include "module.h"

#define REBIND_SUBJECT_MAX 256
#define REBIND_DETAIL_MAX 256
#define REBIND_EVIDENCE_MAX 256
#define REBIND_QUIET_SLOTS 4096 /* quiet-question cache entries (power of two) */
#define REBIND_QUIET_NAME 102   /* longest question the cache keeps */

static const char CLASS[] = "dns_rebind";

enum { T_A = 1, T_AAAA = 28, T_SVCB = 64, T_HTTPS = 65, C_IN = 1 };

static const struct {
	int severity, score;
} weight[] = {
	[REBIND_NONE] = {0, 0},
	[REBIND_PRIVATE] = {3, 70},
	[REBIND_UNSPEC] = {3, 60},
	[REBIND_LOOPBACK] = {4, 85},
	[REBIND_LINKLOCAL] = {4, 90},
	[REBIND_METADATA] = {4, 95},
};

const char *rebind_class_name(int cls)
{
	switch (cls) {
	case REBIND_PRIVATE:
		return "private";
	case REBIND_UNSPEC:
		return "unspecified";
	case REBIND_LOOPBACK:
		return "loopback";
	case REBIND_LINKLOCAL:
		return "link-local";
	case REBIND_METADATA:
		return "metadata";
	default:
		return "";
	}
}

static int v4_class(const uint8_t *a)
{
	if (a[0] == 169 && a[1] == 254)
		return REBIND_LINKLOCAL;
	if (a[0] == 127)
		return REBIND_LOOPBACK;
	if (a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] == 0)
		return REBIND_UNSPEC;
	if (a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) || (a[0] == 192 && a[1] == 168) ||
	    (a[0] == 100 && (a[1] & 0xc0) == 64))
		return REBIND_PRIVATE;
	return REBIND_NONE;
}

static int v6_class(const uint8_t *a)
{
	static const uint8_t zero[15];

	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return REBIND_LINKLOCAL;
	if (memcmp(a, zero, 15) == 0)
		return a[15] == 1 ? REBIND_LOOPBACK : a[15] == 0 ? REBIND_UNSPEC : REBIND_NONE;
	if ((a[0] & 0xfe) == 0xfc || (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0))
		return REBIND_PRIVATE;
	return REBIND_NONE;
}

int rebind_addr_class(const struct rules *r, int ipv, const uint8_t *addr)
{
	uint8_t v4[4];
	int c;

	if (!addr || (ipv != 4 && ipv != 6))
		return REBIND_NONE;
	if (meta_is_endpoint(r, ipv, addr))
		return REBIND_METADATA;
	if (ipv == 4)
		return v4_class(addr);
	c = v6_class(addr);
	if (meta_embedded_v4(addr, v4)) {
		int c4 = v4_class(v4);
		if (c4 > c)
			c = c4;
	}
	return c;
}

/* ---- the module ------------------------------------------------------------- */

/* A question on_query found harmless, whoever asked. */
struct rebind_quiet {
	uint64_t hash;                   /* text_fnv64 of name */
	uint16_t len;                    /* 0 = empty slot */
	char name[REBIND_QUIET_NAME];
};

struct rebind_state {
	const struct rules *rules;
	struct rebind_quiet quiet[REBIND_QUIET_SLOTS];
	struct name_memo memo; /* rebind_prefetch's hash, for on_query */
};

/* The worst address of a message so far. */
struct worst {
	int cls;
	unsigned n;                      /* addresses of concern seen */
	char addr[INET6_ADDRSTRLEN];
	char owner[REBIND_SUBJECT_MAX];
	const char *type;
	/* the question, looked at on the first address of concern */
	const char *q_name;
	size_t q_len;
	int q_trusted;                   /* -1: not looked at yet */
	int q_internal;                  /* internal: the response is not judged */
};

static void lower_copy(char *dst, size_t cap, const char *s, size_t n)
{
	size_t i;

	if (cap == 0)
		return;
	for (i = 0; i < n && i + 1 < cap; i++)
		dst[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
	dst[i] = '\0';
}

static unsigned num(const char *s, size_t n)
{
	unsigned v = 0;

	if (n == 0 || n > 5)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	return v;
}

static int is_dig(int c)
{
	return c >= '0' && c <= '9';
}

/*
 * inet_pton(AF_INET) of s[0..n), without the copy to a NUL-terminated buffer
 * and the library call (nearly every answer is an A record): four decimal
 * parts 0..255 without leading zeros, separated by '.'. Like inet_pton it
 * reads up to the first NUL. Returns 1 with out set, or 0.
 */
static int pton4(const char *s, size_t n, uint8_t out[4])
{
	const char *e = s + n;
	uint8_t tmp[4];

	for (int k = 0; k < 4; k++) {
		unsigned v;
		if (k && (s == e || *s++ != '.'))
			return 0;
		if (s == e || !is_dig(*s))
			return 0;
		v = (unsigned)(*s++ - '0');
		if (v == 0) {
			if (s < e && is_dig(*s))
				return 0; /* a leading zero */
		} else {
			while (s < e && is_dig(*s)) {
				v = v * 10 + (unsigned)(*s++ - '0');
				if (v > 255)
					return 0;
			}
		}
		tmp[k] = (uint8_t)v;
	}
	if (s < e && *s)
		return 0;
	memcpy(out, tmp, 4);
	return 1;
}

/*
 * inet_pton(AF_INET6) of s[0..n) for the plain form DNS answers are written
 * in (analyzers/dns.h: RFC 5952): groups of 1 to 4 hex digits separated by
 * ':', at most one "::", eight groups without it and at most seven with it.
 * Every text taken here is one inet_pton takes, with the same bytes; for
 * anything else (a dotted IPv4 tail, a stray byte, a bad form) it returns 0
 * and the caller asks inet_pton.
 */
static int pton6_plain(const char *s, size_t n, uint8_t out[16])
{
	uint16_t g[8];
	int ng = 0, gap = -1;
	size_t i = 0;

	if (n >= 2 && s[0] == ':' && s[1] == ':') {
		gap = 0;
		i = 2;
	}
	while (i < n) {
		size_t st = i;
		unsigned v = 0;
		int d;
		while (i < n && i - st < 5 && (d = text_hexval((unsigned char)s[i])) >= 0) {
			v = v * 16 + (unsigned)d;
			i++;
		}
		if (i == st || i - st > 4 || ng == 8)
			return 0;
		g[ng++] = (uint16_t)v;
		if (i == n)
			break;
		if (s[i++] != ':' || i == n)
			return 0;
		if (s[i] == ':') {
			if (gap >= 0)
				return 0;
			gap = ng;
			i++;
		}
	}
	if (gap < 0 ? ng != 8 : ng > 7)
		return 0;
	memset(out, 0, 16);
	for (int k = 0; k < ng; k++) {
		int at = gap < 0 || k < gap ? k : 8 - (ng - k);
		out[2 * at] = (uint8_t)(g[k] >> 8);
		out[2 * at + 1] = (uint8_t)g[k];
	}
	return 1;
}

/*
 * Judge one address text s[0..n) of an answer record. owner is the record's
 * name; judge_owner says the owner decides whether the name is internal (a
 * message without a question).
 */
/* s[0..m) is zone z or a name under it (case ignored). */
static int under(const char *s, size_t m, const char *z)
{
	size_t zl = strlen(z);
	return m >= zl && strncasecmp(s + m - zl, z, zl) == 0 && (m == zl || s[m - zl - 1] == '.');
}

/* Internal, and not under .arpa but for home.arpa (RFC 8375, the home
 * network's own zone): see the comment at the top. */
static int internal_owner(const struct rules *r, const char *s, size_t n)
{
	size_t m = n && s[n - 1] == '.' ? n - 1 : n;

	if (under(s, m, "arpa") && !under(s, m, "home.arpa"))
		return 0;
	return meta_name_internal(r, s, n, 0);
}

static void judge_addr(const struct rebind_state *st, const char *s, size_t n, int ipv,
		       const char *owner, size_t owner_len, const char *type, int judge_owner,
		       int trusted, struct worst *w)
{
	char buf[INET6_ADDRSTRLEN];
	uint8_t a[16] = {0};
	int cls;

	if (n == 0 || n >= sizeof(buf))
		return;
	if (ipv == 4) {
		if (!pton4(s, n, a))
			return;
	} else if (!pton6_plain(s, n, a)) {
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (inet_pton(AF_INET6, buf, a) != 1)
			return;
	}
	cls = rebind_addr_class(st->rules, ipv, a);
	if (cls == REBIND_NONE)
		return;
	if (judge_owner) {
		if (internal_owner(st->rules, owner, owner_len))
			return;
		trusted = rules_domain_match(&st->rules->trusted_domains, owner, owner_len);
	} else {
		if (w->q_trusted < 0) {
			if (internal_owner(st->rules, w->q_name, w->q_len)) {
				w->q_internal = 1;
				return;
			}
			w->q_trusted = rules_domain_match(&st->rules->trusted_domains, w->q_name,
							  w->q_len);
		}
		trusted = w->q_trusted;
	}
	if (trusted && cls < REBIND_LINKLOCAL)
		return;
	w->n++;
	if (cls <= w->cls)
		return;
	w->cls = cls;
	memcpy(w->addr, s, n);
	w->addr[n] = '\0';
	lower_copy(w->owner, sizeof(w->owner), owner, owner_len);
	w->type = type;
}

/* The ipv4hint= / ipv6hint= lists of SVCB / HTTPS data. */
static void judge_hints(const struct rebind_state *st, const char *d, size_t n, const char *owner,
			size_t owner_len, int judge_owner, int trusted, struct worst *w)
{
	static const char *const keys[] = {" ipv4hint=", " ipv6hint="};

	for (int k = 0; k < 2; k++) {
		size_t kl = strlen(keys[k]);
		for (size_t i = 0; i + kl <= n; i++) {
			if (memcmp(d + i, keys[k], kl) != 0)
				continue;
			size_t j = i + kl;
			while (j < n && d[j] != ' ') {
				size_t e = j;
				while (e < n && d[e] != ',' && d[e] != ' ')
					e++;
				judge_addr(st, d + j, e - j, k == 0 ? 4 : 6, owner, owner_len,
					   k == 0 ? "ipv4hint" : "ipv6hint", judge_owner, trusted, w);
				j = e < n && d[e] == ',' ? e + 1 : e;
			}
			break;
		}
	}
}

static int rebind_raise(struct emit *out, const struct pkt *p, int swap, int cls,
			const char *subject, const char *detail, const char *evidence,
			const char *outcome)
{
	struct pkt tmp;
	struct alert a = {
		.class = CLASS,
		.severity = weight[cls].severity,
		.score = weight[cls].score,
		.pkt = p,
		.subject = subject,
		.detail = detail,
		.evidence = evidence,
		.outcome = outcome,
	};

	if (p && swap) { /* the alert belongs to the client */
		tmp = *p;
		memcpy(tmp.src, p->dst, 16);
		memcpy(tmp.dst, p->src, 16);
		tmp.sport = p->dport;
		tmp.dport = p->sport;
		a.pkt = &tmp;
	}
	return out->alert(out, &a) < 0 ? -EIO : MOD_OK;
}

/* The next US-separated field of [*p, end), as rec_split() cuts it (none
 * once *p reaches end: an empty last field is not a field). Long fields
 * (names, data) are searched with memchr, short ones (numbers) by hand. */
static int next_field(const char **p, const char *end, const char **f, size_t *fl, int is_short)
{
	const char *q = *p;

	if (q >= end)
		return 0;
	if (is_short) {
		while (q < end && *q != REC_US)
			q++;
	} else if (!(q = memchr(q, REC_US, (size_t)(end - q)))) {
		q = end;
	}
	*f = *p;
	*fl = (size_t)(q - *p);
	*p = q < end ? q + 1 : end;
	return 1;
}

/*
 * Could on_answer find anything in o? Asked of the wire records the DNS
 * analyzer gives with a sound message (obs.rrs): on_answer judges only the
 * class IN answers of type A, AAAA, SVCB and HTTPS, and an address it judges
 * is one of theirs, so a message whose A and AAAA answers all have addresses
 * of no class of concern, and that has no SVCB or HTTPS answer, holds
 * nothing for it, whatever the question or the rules' trusted names. Most
 * answers are that, and are then ruled out without reading the detail
 * record's text. 1 when it could, or when the records are not given.
 */
static int may_rebind(const struct rebind_state *st, const struct obs *o)
{
	if (!o->rrs)
		return 1;
	for (unsigned i = 0; i < o->n_rrs; i++) {
		const struct obs_rr *r = &o->rrs[i];
		size_t n = (size_t)(r->rd_end - r->rd);

		if (r->section != 1 || r->rclass != C_IN)
			continue;
		if (r->type == T_SVCB || r->type == T_HTTPS)
			return 1;
		if (r->type != T_A && r->type != T_AAAA)
			continue;
		if (n != (r->type == T_A ? 4u : 16u))
			return 1;
		uint8_t a[16] = {0}; /* as judge_addr reads an address */
		memcpy(a, r->rd, n);
		if (rebind_addr_class(st->rules, r->type == T_A ? 4 : 6, a) != REBIND_NONE)
			return 1;
	}
	return 0;
}

static int on_answer(struct rebind_state *st, const struct obs *o, struct emit *out)
{
	const char *s = o->info, *end, *rec, *f[6];
	size_t fl[6];
	int have_q = o->name && o->name_len > 0 && !(o->name_len == 1 && o->name[0] == '.');
	struct worst w;
	char subject[REBIND_SUBJECT_MAX], detail[REBIND_DETAIL_MAX], ev[REBIND_EVIDENCE_MAX];
	char via[96] = "";

	if (!s || o->info_len == 0 || !may_rebind(st, o))
		return MOD_NOT_MINE;
	end = s + o->info_len;
	w.cls = REBIND_NONE;
	w.n = 0;
	w.addr[0] = w.owner[0] = '\0';
	w.type = NULL;
	w.q_internal = 0;
	w.q_name = o->name;
	w.q_len = o->name_len;
	w.q_trusted = -1;
	/* Records are cut at RS and fields at US as rec_split() does, but only
	 * an "AN" record is cut into fields, and only as far as its type shows
	 * one of ours: the header, the questions, NS and AR records and the
	 * CNAMEs and TXTs of the answer are skipped with one memchr each. */
	for (rec = s; !w.q_internal && rec < end;) {
		const char *rs = memchr(rec, REC_RS, (size_t)(end - rec));
		const char *re = rs ? rs : end, *p = rec;
		size_t k;
		int type;

		rec = rs ? rs + 1 : end;
		if (re - p < 3 || p[0] != 'A' || p[1] != 'N' || p[2] != REC_US)
			continue;
		p += 3;
		/* f[0] is "AN"; f[1] the owner, f[2] the type, f[3] the class,
		 * f[4] the TTL, f[5] the data */
		if (!next_field(&p, re, &f[1], &fl[1], 0) || !next_field(&p, re, &f[2], &fl[2], 1))
			continue;
		type = (int)num(f[2], fl[2]);
		if (type != T_A && type != T_AAAA && type != T_SVCB && type != T_HTTPS)
			continue;
		for (k = 3; k < 6 && next_field(&p, re, &f[k], &fl[k], k < 5); k++)
			;
		if (k < 6 || num(f[3], fl[3]) != C_IN)
			continue;
		switch (type) {
		case T_A:
			judge_addr(st, f[5], fl[5], 4, f[1], fl[1], "A", !have_q, 0, &w);
			break;
		case T_AAAA:
			judge_addr(st, f[5], fl[5], 6, f[1], fl[1], "AAAA", !have_q, 0, &w);
			break;
		case T_SVCB:
		case T_HTTPS:
			judge_hints(st, f[5], fl[5], f[1], fl[1], !have_q, 0, &w);
			break;
		default:
			break;
		}
	}
	if (w.q_internal || w.cls == REBIND_NONE)
		return MOD_NOT_MINE;
	if (have_q)
		lower_copy(subject, sizeof(subject), o->name, o->name_len);
	else
		snprintf(subject, sizeof(subject), "%s", w.owner);
	if (strcmp(subject, w.owner) != 0)
		snprintf(via, sizeof(via), " (via %.70s)", w.owner);
	snprintf(detail, sizeof(detail), "public name %.70s resolves%.80s to %s (%s)%s", subject, via,
		 w.addr, rebind_class_name(w.cls), w.n > 1 ? ", and more" : "");
	snprintf(ev, sizeof(ev), "%.160s %s %s", w.owner, w.type, w.addr);
	return rebind_raise(out, o->pkt, 1, w.cls, subject, detail, ev, "answered");
}

static int on_query_judge(struct rebind_state *st, const struct obs *o, struct emit *out);

/* on_query_judge behind the quiet-question cache: every MOD_NOT_MINE of it
 * depends on the name and the rules alone. */
static int on_query(struct rebind_state *st, const struct obs *o, struct emit *out)
{
	struct rebind_quiet *q = NULL;
	uint64_t h = 0;
	int rc;

	if (o->name && o->name_len && o->name_len <= REBIND_QUIET_NAME) {
		h = name_memo_take(&st->memo, o);
		q = &st->quiet[h & (REBIND_QUIET_SLOTS - 1)];
		if (q->len == o->name_len && q->hash == h && memcmp(q->name, o->name, o->name_len) == 0)
			return MOD_NOT_MINE;
	}
	rc = on_query_judge(st, o, out);
	if (rc == MOD_NOT_MINE && q) {
		q->hash = h;
		q->len = (uint16_t)o->name_len;
		memcpy(q->name, o->name, o->name_len);
	}
	return rc;
}

static int on_query_judge(struct rebind_state *st, const struct obs *o, struct emit *out)
{
	const struct rules *r = st->rules;
	struct meta_enc enc[META_ENC_MAX];
	char name[META_NAME_MAX], addr[INET6_ADDRSTRLEN] = "", detail[REBIND_DETAIL_MAX];
	uint8_t ipv, a[16];
	size_t ne, nl;
	int worst = REBIND_NONE, wild;

	if (meta_parse_host(o->name, o->name_len, &ipv, a, name, sizeof(name)) != META_HOST_NAME)
		return MOD_NOT_MINE;
	nl = strlen(name);
	/* A name that spells no address is harmless whatever its zone: look
	 * for addresses first, the zones (and the trusted list) after. */
	ne = meta_name_addrs(name, nl, enc, META_ENC_MAX);
	if (ne == 0 || meta_name_internal(r, name, nl, 1))
		return MOD_NOT_MINE;
	wild = meta_wildcard_zone(name, nl);
	for (size_t i = 0; i < ne; i++) {
		int c = rebind_addr_class(r, enc[i].ipv, enc[i].addr);
		if (c != REBIND_METADATA && !wild)
			continue;
		if (c > worst) {
			worst = c;
			text_addr(addr, sizeof(addr), enc[i].ipv, enc[i].addr);
		}
	}
	if (worst == REBIND_NONE)
		return MOD_NOT_MINE;
	snprintf(detail, sizeof(detail), "question for %.140s, a name that spells %s (%s)%s", name,
		 addr, rebind_class_name(worst), wild ? " at a wildcard-DNS service" : "");
	return rebind_raise(out, o->pkt, o->pkt && o->pkt->dir == 1, worst, name, detail, name,
			    NULL);
}

/* The quiet-question cache slot on_query will read. */
static void rebind_prefetch(void *state, const struct obs *o)
{
	struct rebind_state *st = state;

	if (o->kind == OBS_DNS_QUERY && o->name && o->name_len && o->name_len <= REBIND_QUIET_NAME)
		__builtin_prefetch(&st->quiet[name_memo_put(&st->memo, o) & (REBIND_QUIET_SLOTS - 1)]);
}

static int rebind_on_obs(void *state, const struct obs *o, struct emit *out)
{
	struct rebind_state *st = state;

	switch (o->kind) {
	case OBS_DNS_ANSWER:
		return on_answer(st, o, out);
	case OBS_DNS_QUERY:
		return on_query(st, o, out);
	default:
		return MOD_NOT_MINE;
	}
}

static int rebind_init(const struct module_env *env, void **state)
{
	struct rebind_state *st;

	if (!env || !env->rules)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->rules = env->rules;
	*state = st;
	return 0;
}

static void rebind_fini(void *state)
{
	free(state);
}

const struct module detect_rebind_module = {
	.name = "detect_rebind",
	.obs_mask = (1u << OBS_DNS_QUERY) | (1u << OBS_DNS_ANSWER),
	.init = rebind_init,
	.fini = rebind_fini,
	.on_obs = rebind_on_obs,
	.prefetch = rebind_prefetch,
};
