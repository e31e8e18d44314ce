/*
 * detect_dns_tunnel.c - the dns_tunnel detector: DNS traffic to one
 * registered domain that carries encoded data, in bursts (iodine, dns2tcp,
 * dnscat2, a shell loop of dig) or slowly (one name a minute).
 *
 * Each DNS query is cut at its registered domain with libpsl (so x.co.uk and
 * bucket.s3.amazonaws.com are cut where a registrant's control begins); the
 * part before it is the subdomain, the only part an attacker can fill.
 * Names under .arpa and .local, names without a registered domain (a public
 * suffix, a single label), and names inside a trusted zone
 * (rules->trusted_domains, dot-boundary match) are left alone.
 *
 * Per registered domain the detector keeps, in a bounded table (DT_SLOTS
 * domains, least recently used evicted), three tumbling windows of packet
 * time: the burst window (thresholds.tunnel_window_s), an hour and a day. A
 * Bloom filter over the day's names tells new names from repeats; only new
 * names feed the lexical features (struct dns_tunnel_feat: label classes,
 * lengths, symbol histogram) and the information budget, in the manner of
 * Paxson et al. (USENIX Security 2013): each new subdomain is deflated with
 * the domain's recent unique subdomains as preset dictionary, and the
 * compressed bytes are counted per hour and per day.
 *
 * Verdict, on each query, once the window holds tunnel_min_queries new
 * names: the burst window scoring >= tunnel_score raises severity high (4);
 * else the hour window scoring that high, or the hour or day budget
 * exceeded, raises medium (3). From then on for an hour every new name to
 * that domain raises the alert again (the core aggregates them into one row,
 * so the row's count is the number of tunnel queries from the first alert).
 *
 * Detectors judge observations only: this file never reads packet bytes and
 * takes time from o->pkt->ts_us.
 *
 * Speed: most queries repeat a name seen moments ago (and every response
 * repeats its query's name), so the outcome of the trusted-zone match and of
 * the cut (libpsl, the label classifier) is kept per lowercase name in a
 * direct-mapped cache (DT_CUT_SLOTS names of at most DT_CUT_NAME bytes). Both
 * are functions of the name alone for the life of the state (a rules reload
 * makes a new state), so a hit gives exactly what the call would. The key is
 * the whole name, not its last few labels: the public suffix list has rules
 * of five labels (s3.dualstack.<region>.amazonaws.com), so no short suffix
 * decides the cut for every list. A window's entropy changes only when a new
 * name is merged into it, so it is computed once per change, not per query.
 */
#include "detect_dns_tunnel.h"

#include <errno.h>
#include <libpsl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../sensor/rules.h"
#include "module.h"

#define DT_SLOTS 4096           /* domains tracked */
#define DT_BUCKETS 8192         /* hash buckets (power of two) */
#define DT_KEY_MAX 256          /* registered domain as key (escaped, lowercase) */
#define DT_NAME_MAX 1100        /* a normalised qname (DNS_NAME_MAX plus \x2e growth, capped) */
#define DT_BLOOM_BITS 4096      /* the day's names, k = 3 */
#define DT_DICT_MAX 256         /* recent unique subdomains: deflate dictionary */
#define DT_HOUR_US (3600ull * 1000000ull)
#define DT_DAY_US (86400ull * 1000000ull)
#define DT_IDLE_US DT_DAY_US    /* on_tick forgets domains idle this long */
#define DT_NONE UINT32_MAX
#define DT_CUT_SLOTS 32768      /* cut cache entries (power of two), 4 MiB */
#define DT_CUT_NAME 104         /* longest name the cut cache keeps */

/* ---- label classes ------------------------------------------------------- */

static int is_vowel(uint8_t c)
{
	switch (c | 0x20) {
	case 'a': case 'e': case 'i': case 'o': case 'u':
		return 1;
	default:
		return 0;
	}
}

int dns_tunnel_label_class(const uint8_t *s, size_t n)
{
	size_t lower = 0, upper = 0, digit = 0, dash = 0, sym = 0, other = 0, vowels = 0;
	size_t dl_trans = 0, hexlow = 0, hexup = 0;
	int prev = 0; /* 1 letter, 2 digit */

	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];
		int cur = 0;

		if (c >= 'a' && c <= 'z') {
			lower++;
			cur = 1;
			hexlow += c <= 'f';
		} else if (c >= 'A' && c <= 'Z') {
			upper++;
			cur = 1;
			hexup += c <= 'F';
		} else if (c >= '0' && c <= '9') {
			digit++;
			cur = 2;
		} else if (c == '-' || c == '_') {
			dash++;
		} else if (c == '+' || c == '/' || c == '=') {
			sym++;
		} else {
			other++;
		}
		if (cur == 1)
			vowels += (size_t)is_vowel(c);
		if (cur && prev && cur != prev)
			dl_trans++;
		prev = cur;
	}
	/* Bytes no hostname has: base128 (iodine), raw binary, gzip+base64 with '*'. */
	if (n >= 8 && other >= 2)
		return DNS_TUNNEL_RAW;
	if (n < 12)
		return DNS_TUNNEL_PLAIN;

	size_t letters = lower + upper;
	double vr = letters ? (double)vowels / (double)letters : 0.0;
	int mixed = lower >= 2 && upper >= 2;

	if (n < 16) {
		/* short: only mixed case with digits is telling (base64) */
		if (mixed && !other && digit >= 1 && vr < 0.34 && dl_trans >= 2)
			return DNS_TUNNEL_BASE64;
		return DNS_TUNNEL_PLAIN;
	}
	if (other)
		return DNS_TUNNEL_RAW;

	/* Hex: one case, only [0-9a-f], both digits and letters (UUIDs have dashes). */
	if (dash == 0 && sym == 0 && digit >= 1 && letters >= 1 &&
	    ((upper == 0 && hexlow == lower) || (lower == 0 && hexup == upper)))
		return DNS_TUNNEL_HEX;
	/* Mixed case: base64 / base64url when it does not read as words. */
	if (mixed) {
		if ((digit >= 1 || sym >= 1) && (vr < 0.34 || dl_trans >= 3))
			return DNS_TUNNEL_BASE64;
		return DNS_TUNNEL_PLAIN;
	}
	/* One case, no dashes: base32 / base36 when digits are sprinkled through
	 * consonant runs, or when there are almost no vowels at all. */
	if (dash == 0 && letters >= 1) {
		if (digit >= 1 && dl_trans >= 2 && vr < 0.34)
			return DNS_TUNNEL_BASE32;
		/* digits all through it: random whatever its vowels (base32 of
		 * random bytes has a digit-letter change every ~3 characters) */
		if (dl_trans >= 6 && dl_trans * 6 >= n)
			return DNS_TUNNEL_BASE32;
		if (vr < 0.2 && n >= 20)
			return DNS_TUNNEL_BASE32;
	}
	return DNS_TUNNEL_PLAIN;
}

/* ---- features ------------------------------------------------------------ */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decode one escaped byte at s[*i] (s[0..n)): \xNN, \\, \. or a plain byte.
 * Sets *sep when it is an unescaped '.'. Advances *i.
 */
static uint8_t unescape_at(const char *s, size_t n, size_t *i, int *sep)
{
	size_t k = *i;
	*sep = 0;
	if (s[k] == '\\' && k + 1 < n) {
		if (s[k + 1] == 'x' && k + 3 < n && hexval(s[k + 2]) >= 0 && hexval(s[k + 3]) >= 0) {
			*i = k + 4;
			return (uint8_t)(hexval(s[k + 2]) << 4 | hexval(s[k + 3]));
		}
		*i = k + 2;
		return (uint8_t)s[k + 1];
	}
	*i = k + 1;
	if (s[k] == '.')
		*sep = 1;
	return (uint8_t)s[k];
}

static unsigned symbol_of(uint8_t c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return 26u + (c - 'A');
	if (c >= '0' && c <= '9')
		return 52u + (c - '0');
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	if (c >= 0x20 && c <= 0x7e)
		return 64u + (c & 7u);
	return 72u + (c >> 5); /* escaped bytes: spread, they are high-entropy */
}

static void hist_add(struct dns_tunnel_feat *f, unsigned sym, uint32_t k)
{
	if ((uint32_t)f->hist[sym] + k > UINT16_MAX) {
		for (unsigned j = 0; j < DNS_TUNNEL_SYMBOLS; j++)
			f->hist[j] = (uint16_t)(f->hist[j] / 2);
		if (k > UINT16_MAX / 2)
			k = UINT16_MAX / 2;
	}
	f->hist[sym] = (uint16_t)(f->hist[sym] + k);
}

int dns_tunnel_feat_name(struct dns_tunnel_feat *f, const char *sub, size_t n)
{
	uint8_t lab[256];
	size_t ll = 0, i = 0;
	int enc = 0;

	f->unique++;
	while (i <= n) {
		int sep = 1;
		uint8_t c = 0;

		if (i < n)
			c = unescape_at(sub, n, &i, &sep);
		else
			i++; /* end of input closes the last label */
		if (!sep) {
			if (ll < sizeof(lab))
				lab[ll++] = c;
			hist_add(f, symbol_of(c), 1);
			f->sub_chars++;
			continue;
		}
		if (ll) {
			if (ll > f->max_label)
				f->max_label = (uint32_t)ll;
			if (dns_tunnel_label_class(lab, ll) != DNS_TUNNEL_PLAIN)
				enc = 1;
		}
		ll = 0;
	}
	f->encoded += (uint32_t)enc;
	return enc;
}

void dns_tunnel_feat_merge(struct dns_tunnel_feat *a, const struct dns_tunnel_feat *b)
{
	a->queries += b->queries;
	a->unique += b->unique;
	a->encoded += b->encoded;
	a->odd_type += b->odd_type;
	a->sub_chars += b->sub_chars;
	if (b->max_label > a->max_label)
		a->max_label = b->max_label;
	a->answers += b->answers;
	a->answer_bytes += b->answer_bytes;
	for (unsigned j = 0; j < DNS_TUNNEL_SYMBOLS; j++)
		if (b->hist[j])
			hist_add(a, j, b->hist[j]);
}

double dns_tunnel_entropy(const struct dns_tunnel_feat *f)
{
	double tot = 0, h = 0;

	for (unsigned j = 0; j < DNS_TUNNEL_SYMBOLS; j++)
		tot += f->hist[j];
	if (tot <= 0)
		return 0;
	for (unsigned j = 0; j < DNS_TUNNEL_SYMBOLS; j++) {
		if (f->hist[j]) {
			double p = f->hist[j] / tot;
			h -= p * log2(p);
		}
	}
	return h;
}

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* dns_tunnel_score with the entropy of f->hist given (ent). */
static int score_ent(const struct dns_tunnel_feat *f, double ent)
{
	if (!f->unique)
		return 0;
	double u = f->unique;
	double q = f->queries > f->unique ? f->queries : f->unique;
	double lavg = f->sub_chars / u;
	double s = 0;

	s += 45 * clamp01(f->encoded / u);
	s += 15 * clamp01((lavg - 8) / 24) + 5 * clamp01((f->max_label - 16.0) / 32);
	s += 15 * clamp01((ent - 3.5) / 1.2);
	s += 10 * clamp01(f->odd_type / q);
	s += 5 * clamp01((u / q - 0.5) / 0.4);
	if (f->answers)
		s += 5 * clamp01(((double)f->answer_bytes / f->answers - 128) / 256);
	return (int)(s + 0.5) > 100 ? 100 : (int)(s + 0.5);
}

int dns_tunnel_score(const struct dns_tunnel_feat *f)
{
	return f->unique ? score_ent(f, dns_tunnel_entropy(f)) : 0;
}

/* ---- per-domain state ---------------------------------------------------- */

struct dt_window {
	uint64_t start_us;
	struct dns_tunnel_feat f;
	double ent;             /* dns_tunnel_entropy(&f), when ent_ok */
	int ent_ok;             /* cleared whenever f.hist changes */
};

/* One cut cache entry: a lowercase normalised name and what dt_on_obs
 * decided for it before counting anything. */
struct dt_cut {
	uint64_t hash;          /* fnv64 of name */
	uint16_t len;           /* 0 = empty slot */
	uint8_t trusted;        /* in rules->trusted_domains */
	int32_t cut;            /* name_cut's result (when not trusted) */
	uint32_t sub_len;       /* and its *sub_len */
	char name[DT_CUT_NAME];
};

struct dt_dom {
	char key[DT_KEY_MAX];   /* registered domain, lowercase, escaped */
	uint64_t hash;
	uint32_t bnext;         /* hash chain */
	uint32_t lprev, lnext;  /* LRU list; head = most recent */
	int used;
	uint64_t last_us;
	struct dt_window burst, hour;
	uint64_t day_start_us;
	uint64_t hour_bytes, day_bytes;   /* compressed unique content */
	uint64_t tot_queries, tot_unique, tot_bytes;
	uint64_t flag_until_us; /* alerting every new name until then */
	int flag_sev, flag_score;
	double flag_bits;
	uint8_t bloom[DT_BLOOM_BITS / 8];
	uint8_t dict[DT_DICT_MAX];
	size_t dict_len;
};

struct dt_state {
	const struct rules *rules;
	const psl_ctx_t *psl;
	psl_ctx_t *psl_own;     /* psl_latest's context (freed); NULL with psl_builtin */
	z_stream zs;
	int zs_ok;
	size_t z_base;          /* raw deflate of nothing */
	unsigned min_q, score_thr;
	uint64_t window_us, budget_hour, budget_day;
	uint32_t bucket[DT_BUCKETS];
	uint32_t lru_head, lru_tail, nused;
	uint32_t nfree, freelist[DT_SLOTS]; /* unused slots */
	struct dt_dom dom[DT_SLOTS];
	/* scratch */
	char norm[DT_NAME_MAX], lc[DT_NAME_MAX];
	uint8_t zout[1024];
	char detail[256];
	struct dt_cut cut[DT_CUT_SLOTS];
};

static uint64_t fnv64(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h ^= (uint8_t)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

static void lru_unlink(struct dt_state *st, uint32_t i)
{
	struct dt_dom *d = &st->dom[i];
	if (d->lprev != DT_NONE)
		st->dom[d->lprev].lnext = d->lnext;
	else
		st->lru_head = d->lnext;
	if (d->lnext != DT_NONE)
		st->dom[d->lnext].lprev = d->lprev;
	else
		st->lru_tail = d->lprev;
	d->lprev = d->lnext = DT_NONE;
}

static void lru_push(struct dt_state *st, uint32_t i)
{
	struct dt_dom *d = &st->dom[i];
	d->lprev = DT_NONE;
	d->lnext = st->lru_head;
	if (st->lru_head != DT_NONE)
		st->dom[st->lru_head].lprev = i;
	st->lru_head = i;
	if (st->lru_tail == DT_NONE)
		st->lru_tail = i;
}

static void dom_remove(struct dt_state *st, uint32_t i)
{
	struct dt_dom *d = &st->dom[i];
	uint32_t *pp = &st->bucket[d->hash & (DT_BUCKETS - 1)];

	while (*pp != DT_NONE && *pp != i)
		pp = &st->dom[*pp].bnext;
	if (*pp == i)
		*pp = d->bnext;
	lru_unlink(st, i);
	d->used = 0;
	st->nused--;
	st->freelist[st->nfree++] = i;
}

/* Find the domain key[0..n); create it (evicting the least recent) when
 * create is set. Returns the slot or DT_NONE. */
static uint32_t dom_get(struct dt_state *st, const char *key, size_t n, int create, uint64_t now)
{
	uint64_t h;
	uint32_t i;

	if (n >= DT_KEY_MAX)
		n = DT_KEY_MAX - 1;
	h = fnv64(key, n);
	for (i = st->bucket[h & (DT_BUCKETS - 1)]; i != DT_NONE; i = st->dom[i].bnext) {
		struct dt_dom *d = &st->dom[i];
		if (d->hash == h && strncmp(d->key, key, n) == 0 && d->key[n] == '\0') {
			lru_unlink(st, i);
			lru_push(st, i);
			return i;
		}
	}
	if (!create)
		return DT_NONE;
	if (st->nfree == 0) {
		if (st->lru_tail == DT_NONE)
			return DT_NONE;
		dom_remove(st, st->lru_tail);
	}
	i = st->freelist[--st->nfree];
	struct dt_dom *d = &st->dom[i];
	memset(d, 0, sizeof(*d));
	memcpy(d->key, key, n);
	d->key[n] = '\0';
	d->hash = h;
	d->used = 1;
	d->burst.start_us = d->hour.start_us = d->day_start_us = now;
	d->bnext = st->bucket[h & (DT_BUCKETS - 1)];
	st->bucket[h & (DT_BUCKETS - 1)] = i;
	d->lprev = d->lnext = DT_NONE;
	lru_push(st, i);
	st->nused++;
	return i;
}

/* Tumbling windows: a window that has run its length restarts at now. */
static void dom_roll(const struct dt_state *st, struct dt_dom *d, uint64_t now)
{
	if (now >= d->burst.start_us + st->window_us) {
		memset(&d->burst, 0, sizeof(d->burst));
		d->burst.start_us = now;
	}
	if (now >= d->hour.start_us + DT_HOUR_US) {
		memset(&d->hour, 0, sizeof(d->hour));
		d->hour.start_us = now;
		d->hour_bytes = 0;
	}
	if (now >= d->day_start_us + DT_DAY_US) {
		d->day_start_us = now;
		d->day_bytes = 0;
		memset(d->bloom, 0, sizeof(d->bloom));
	}
	d->last_us = now;
}

/* The window's entropy, computed once per change of its histogram. */
static double win_entropy(struct dt_window *w)
{
	if (!w->ent_ok) {
		w->ent = dns_tunnel_entropy(&w->f);
		w->ent_ok = 1;
	}
	return w->ent;
}

static int win_score(struct dt_window *w)
{
	return w->f.unique ? score_ent(&w->f, win_entropy(w)) : 0;
}

/* Test-and-set the day's Bloom filter. Returns 1 when the name was new. */
static int bloom_add(struct dt_dom *d, uint64_t h)
{
	int fresh = 0;
	for (int k = 0; k < 3; k++) {
		unsigned bit = (unsigned)(h >> (k * 21)) & (DT_BLOOM_BITS - 1);
		if (!(d->bloom[bit >> 3] & (1u << (bit & 7)))) {
			fresh = 1;
			d->bloom[bit >> 3] |= (uint8_t)(1u << (bit & 7));
		}
	}
	return fresh;
}

/* Compressed size of sub[0..n) given the domain's recent unique subdomains
 * as dictionary (raw deflate, minus the cost of an empty stream), then add
 * sub to the dictionary. */
static uint64_t info_cost(struct dt_state *st, struct dt_dom *d, const char *sub, size_t n)
{
	uint64_t cost = n;

	if (n == 0)
		return 0;
	if (st->zs_ok && deflateReset(&st->zs) == Z_OK &&
	    (d->dict_len == 0 || deflateSetDictionary(&st->zs, d->dict, (uInt)d->dict_len) == Z_OK)) {
		st->zs.next_in = (Bytef *)(uintptr_t)sub;
		st->zs.avail_in = (uInt)n;
		st->zs.next_out = st->zout;
		st->zs.avail_out = sizeof(st->zout);
		if (deflate(&st->zs, Z_FINISH) == Z_STREAM_END) {
			size_t out = sizeof(st->zout) - st->zs.avail_out;
			cost = out > st->z_base ? out - st->z_base : 1;
		}
	}
	/* append "sub." to the dictionary, keeping its newest DT_DICT_MAX bytes */
	if (n + 1 >= DT_DICT_MAX) {
		memcpy(d->dict, sub + n - (DT_DICT_MAX - 1), DT_DICT_MAX - 1);
		d->dict[DT_DICT_MAX - 1] = '.';
		d->dict_len = DT_DICT_MAX;
	} else {
		if (d->dict_len + n + 1 > DT_DICT_MAX) {
			size_t drop = d->dict_len + n + 1 - DT_DICT_MAX;
			memmove(d->dict, d->dict + drop, d->dict_len - drop);
			d->dict_len -= drop;
		}
		memcpy(d->dict + d->dict_len, sub, n);
		d->dict[d->dict_len + n] = '.';
		d->dict_len += n + 1;
	}
	return cost;
}

/* ---- names ---------------------------------------------------------------- */

/*
 * Normalise an escaped qname: "\." becomes "\x2e" so that every '.' left is a
 * label separator, one trailing dot goes. norm keeps the case, lc is
 * lowercase. Returns the length, or 0 when it does not fit or is empty.
 */
static size_t name_norm(const char *in, size_t n, char *norm, char *lc, size_t cap)
{
	size_t o = 0;

	if (n && in[n - 1] == '.' && !(n >= 2 && in[n - 2] == '\\'))
		n--;
	for (size_t i = 0; i < n; i++) {
		if (o + 5 > cap)
			return 0;
		if (in[i] == '\\' && i + 1 < n) {
			if (in[i + 1] == '.') {
				memcpy(norm + o, "\\x2e", 4);
				o += 4;
			} else {
				norm[o++] = '\\';
				norm[o++] = in[i + 1];
			}
			i++;
			continue;
		}
		norm[o++] = in[i];
	}
	norm[o] = '\0';
	for (size_t i = 0; i <= o; i++)
		lc[i] = (norm[i] >= 'A' && norm[i] <= 'Z') ? (char)(norm[i] + 32) : norm[i];
	return o;
}

static int is_odd_type(unsigned t)
{
	switch (t) {
	case 5:   /* CNAME */
	case 10:  /* NULL */
	case 13:  /* HINFO */
	case 15:  /* MX */
	case 16:  /* TXT */
	case 25:  /* KEY */
	case 255: /* ANY */
		return 1;
	default:
		return t >= 65280 && t <= 65534; /* private use (iodine's PRIVATE) */
	}
}

/* A label (escaped text s[0..n)) that looks like data: more than 24 bytes,
 * an encoded class, or (with digit set) any digit, which no top-level
 * domain has. */
static int label_is_data(const char *s, size_t n, int digit)
{
	uint8_t lab[256];
	size_t ll = 0, i = 0;
	int sep;

	while (i < n && ll < sizeof(lab)) {
		lab[ll] = unescape_at(s, n, &i, &sep);
		if (digit && lab[ll] >= '0' && lab[ll] <= '9')
			return 1;
		ll++;
	}
	return ll > 24 || dns_tunnel_label_class(lab, ll) != DNS_TUNNEL_PLAIN;
}

/*
 * Cut lc[0..n) into subdomain and registered domain. Returns the offset of
 * the registered domain (its length is n - offset) and the subdomain length
 * in *sub_len, or -1 when the name is not judged (under .arpa, which no
 * outsider can answer for, or .local, which is multicast DNS and never leaves
 * the link; or no registered domain). A name under a top-level label that the public suffix list does
 * not know, where that label or the one before it looks like data
 * ("dnscat.<hex>.<hex>", dnscat2 talking to its server directly), is keyed by
 * its first label instead: the result is then -2 - (first label length).
 */
static long name_cut(const struct dt_state *st, const char *lc, size_t n, size_t *sub_len)
{
	const char *rd;
	size_t dots[2] = {0, 0}, nd = 0; /* offsets of the last two label starts */

	if ((n == 4 && memcmp(lc, "arpa", 4) == 0) || (n > 5 && memcmp(lc + n - 5, ".arpa", 5) == 0) ||
	    (n == 5 && memcmp(lc, "local", 5) == 0) || (n > 6 && memcmp(lc + n - 6, ".local", 6) == 0))
		return -1;
	for (size_t i = n; i > 0 && nd < 2; i--)
		if (lc[i - 1] == '.')
			dots[nd++] = i;
	if (nd == 0)
		return -1;
	if (!psl_is_public_suffix2(st->psl, lc + dots[0], PSL_TYPE_ANY | PSL_TYPE_NO_STAR_RULE) &&
	    (label_is_data(lc + dots[0], n - dots[0], 1) ||
	     label_is_data(lc + (nd > 1 ? dots[1] : 0), dots[0] - 1 - (nd > 1 ? dots[1] : 0), 0))) {
		const char *dot = memchr(lc, '.', n);
		*sub_len = n - (size_t)(dot + 1 - lc);
		return -2 - (long)(dot - lc);
	}
	rd = psl_registrable_domain(st->psl, lc);
	if (!rd)
		return -1;
	*sub_len = rd > lc ? (size_t)(rd - lc) - 1 : 0;
	return (long)(rd - lc);
}

/*
 * The trusted-zone match and name_cut for lc[0..n) (hash h = fnv64 of it),
 * from the cut cache when the name is there, else computed and remembered.
 * Returns 0 when the name is in a trusted zone; else 1, with name_cut's
 * result in *cut and *sub_len.
 */
static int cut_cached(struct dt_state *st, const char *lc, size_t n, uint64_t h, long *cut,
		      size_t *sub_len)
{
	struct dt_cut *e = n <= DT_CUT_NAME ? &st->cut[h & (DT_CUT_SLOTS - 1)] : NULL;

	if (e && e->len == n && e->hash == h && memcmp(e->name, lc, n) == 0) {
		*cut = e->cut;
		*sub_len = e->sub_len;
		return !e->trusted;
	}
	int trusted = st->rules && rules_domain_match(&st->rules->trusted_domains, lc, n);
	*cut = -1;
	*sub_len = 0;
	if (!trusted)
		*cut = name_cut(st, lc, n, sub_len);
	if (e) {
		e->hash = h;
		e->len = (uint16_t)n;
		e->trusted = (uint8_t)trusted;
		e->cut = (int32_t)*cut;
		e->sub_len = (uint32_t)*sub_len;
		memcpy(e->name, lc, n);
	}
	return !trusted;
}

long dns_tunnel_cut(void *state, const char *lc, size_t n, size_t *sub_len)
{
	long cut;

	*sub_len = 0;
	if (!cut_cached(state, lc, n, fnv64(lc, n), &cut, sub_len))
		return -1;
	return cut;
}

/* ---- the module ---------------------------------------------------------- */

static void format_bytes(char *dst, size_t cap, uint64_t b)
{
	if (b < 1024)
		snprintf(dst, cap, "%llu B", (unsigned long long)b);
	else
		snprintf(dst, cap, "%llu KB", (unsigned long long)((b + 512) / 1024));
}

static int dt_judge(struct dt_state *st, struct dt_dom *d, int fresh, const struct obs *o,
		    const char *subject, struct emit *out)
{
	uint64_t now = o->pkt ? o->pkt->ts_us : 0;
	int sev = 0, score = 0;
	double bits = 0;

	if (d->burst.f.unique >= st->min_q) {
		int s = win_score(&d->burst);
		if (s >= (int)st->score_thr) {
			sev = 4;
			score = s;
			bits = win_entropy(&d->burst);
		}
	}
	if (!sev && d->hour.f.unique >= st->min_q) {
		int s = win_score(&d->hour);
		if (s >= (int)st->score_thr) {
			sev = 3;
			score = s;
			bits = win_entropy(&d->hour);
		}
	}
	if (!sev && fresh && (d->hour_bytes > st->budget_hour || d->day_bytes > st->budget_day)) {
		int s = win_score(&d->hour);
		sev = 3;
		score = s > 60 ? s : 60;
		bits = win_entropy(&d->hour);
	}
	if (sev) {
		if (now >= d->flag_until_us || sev >= d->flag_sev) {
			d->flag_sev = sev;
			d->flag_score = score;
			d->flag_bits = bits;
		} else if (score > d->flag_score) {
			d->flag_score = score;
		}
		d->flag_until_us = now + DT_HOUR_US;
	} else if (fresh && now < d->flag_until_us) {
		sev = d->flag_sev;
		score = d->flag_score;
		bits = d->flag_bits;
	} else {
		return 0;
	}
	if (!fresh)
		return 0; /* a repeated name adds nothing to the count */

	char enc[32];
	format_bytes(enc, sizeof(enc), d->tot_bytes);
	snprintf(st->detail, sizeof(st->detail),
		 "%llu queries, %llu distinct names, %.1f bits/char, ~%s encoded",
		 (unsigned long long)d->tot_queries, (unsigned long long)d->tot_unique, bits, enc);
	struct alert a = {
		.class = "dns_tunnel",
		.severity = sev,
		.score = score,
		.pkt = o->pkt,
		.subject = subject,
		.detail = st->detail,
		.evidence = o->name,
	};
	out->alert(out, &a); /* a refused alert is the core's to count */
	return MOD_OK;
}

static int dt_on_obs(void *state, const struct obs *o, struct emit *out)
{
	struct dt_state *st = state;
	uint64_t now = o->pkt ? o->pkt->ts_us : 0;
	size_t n, sub_len = 0, key_off, key_len;
	long cut;
	uint64_t name_hash;
	uint32_t i;
	struct dt_dom *d;
	char subject[DT_KEY_MAX];

	if (!o->name || o->name_len == 0 || (o->kind != OBS_DNS_QUERY && o->kind != OBS_DNS_ANSWER))
		return MOD_OK;
	n = name_norm(o->name, o->name_len, st->norm, st->lc, sizeof(st->norm));
	if (n == 0)
		return MOD_OK;
	name_hash = fnv64(st->lc, n);
	if (!cut_cached(st, st->lc, n, name_hash, &cut, &sub_len))
		return MOD_OK; /* trusted */
	if (cut == -1)
		return MOD_OK;
	if (cut >= 0) {
		key_off = (size_t)cut;
		key_len = n - key_off;
	} else {
		key_off = 0;
		key_len = (size_t)(-2 - cut);
	}
	if (key_len >= DT_KEY_MAX)
		key_len = DT_KEY_MAX - 1;
	memcpy(subject, st->lc + key_off, key_len);
	subject[key_len] = '\0';

	if (o->kind == OBS_DNS_ANSWER) {
		i = dom_get(st, subject, key_len, 0, now);
		if (i == DT_NONE)
			return MOD_OK;
		d = &st->dom[i];
		dom_roll(st, d, now);
		d->burst.f.answers++;
		d->burst.f.answer_bytes += o->size;
		d->hour.f.answers++;
		d->hour.f.answer_bytes += o->size;
		return MOD_OK;
	}

	i = dom_get(st, subject, key_len, 1, now);
	if (i == DT_NONE)
		return MOD_OK;
	d = &st->dom[i];
	dom_roll(st, d, now);

	const char *sub = cut >= 0 ? st->norm : st->norm + (-2 - cut) + 1;
	int odd = is_odd_type(o->type);
	int fresh = bloom_add(d, name_hash);

	d->burst.f.queries++;
	d->hour.f.queries++;
	d->burst.f.odd_type += (uint32_t)odd;
	d->hour.f.odd_type += (uint32_t)odd;
	d->tot_queries++;
	if (fresh) {
		struct dns_tunnel_feat one;
		memset(&one, 0, sizeof(one));
		dns_tunnel_feat_name(&one, sub, sub_len);
		dns_tunnel_feat_merge(&d->burst.f, &one);
		dns_tunnel_feat_merge(&d->hour.f, &one);
		d->burst.ent_ok = d->hour.ent_ok = 0;
		uint64_t c = info_cost(st, d, sub, sub_len);
		d->hour_bytes += c;
		d->day_bytes += c;
		d->tot_bytes += c;
		d->tot_unique++;
	}
	return dt_judge(st, d, fresh, o, subject, out);
}

static void dt_fini(void *state)
{
	struct dt_state *st = state;

	if (!st)
		return;
	if (st->zs_ok)
		deflateEnd(&st->zs);
	if (st->psl_own)
		psl_free(st->psl_own);
	free(st);
}

static int dt_init(const struct module_env *env, void **state)
{
	struct dt_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->rules = env ? env->rules : NULL;
	if (st->rules) {
		const struct rules_thresholds *t = &st->rules->t;
		st->min_q = t->tunnel_min_queries ? t->tunnel_min_queries : 1;
		st->window_us = (uint64_t)(t->tunnel_window_s ? t->tunnel_window_s : 60) * 1000000u;
		st->score_thr = t->tunnel_score ? t->tunnel_score : 70;
		st->budget_hour = t->tunnel_budget_hour;
		st->budget_day = t->tunnel_budget_day;
	} else {
		st->min_q = 8;
		st->window_us = 60ull * 1000000u;
		st->score_thr = 70;
		st->budget_hour = 4096;
		st->budget_day = 32768;
	}
	/* The system list when it is newer than the built-in one. */
	st->psl_own = psl_latest(NULL);
	st->psl = st->psl_own ? st->psl_own : psl_builtin();
	if (!st->psl) {
		free(st);
		return -ENOENT;
	}
	if (deflateInit2(&st->zs, 6, Z_DEFLATED, -9, 2, Z_DEFAULT_STRATEGY) == Z_OK) {
		st->zs_ok = 1;
		st->zs.next_in = (Bytef *)st->zout;
		st->zs.avail_in = 0;
		st->zs.next_out = st->zout;
		st->zs.avail_out = sizeof(st->zout);
		if (deflate(&st->zs, Z_FINISH) == Z_STREAM_END)
			st->z_base = sizeof(st->zout) - st->zs.avail_out;
	}
	memset(st->bucket, 0xff, sizeof(st->bucket));
	for (uint32_t i = 0; i < DT_SLOTS; i++)
		st->freelist[i] = DT_SLOTS - 1 - i;
	st->nfree = DT_SLOTS;
	st->lru_head = st->lru_tail = DT_NONE;
	*state = st;
	return 0;
}

/* Forget domains idle for a day (oldest first), a few per tick. */
static void dt_on_tick(void *state, uint64_t now_us, struct emit *out)
{
	struct dt_state *st = state;

	(void)out;
	for (int k = 0; k < 64 && st->lru_tail != DT_NONE; k++) {
		uint32_t i = st->lru_tail;
		if (st->dom[i].last_us + DT_IDLE_US > now_us)
			break;
		dom_remove(st, i);
	}
}

const struct module detect_dns_tunnel_module = {
	.name = "detect_dns_tunnel",
	.obs_mask = 1u << OBS_DNS_QUERY | 1u << OBS_DNS_ANSWER,
	.init = dt_init,
	.fini = dt_fini,
	.on_obs = dt_on_obs,
	.on_tick = dt_on_tick,
};
