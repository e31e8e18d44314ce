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
 * set-associative cache (DT_CUT_SLOTS names of at most DT_CUT_NAME bytes in
 * sets of DT_CUT_WAYS, and DT_CUT_LONG_SLOTS longer ones, direct-mapped).
 * Both are functions of the name alone for the life of the state (a rules
 * reload makes a new state), so a hit gives exactly what the call would.
 * The key is the whole name, not its last few labels: the public suffix
 * list has rules of five labels (s3.dualstack.<region>.amazonaws.com), so
 * no short suffix decides the cut for every list. A name the cache does not
 * hold is cut from its parent's entry (the name without its first label,
 * looked up the same way) and one public-suffix test, instead of libpsl's
 * walk of one or two list searches per label (cut_derive says why that is
 * the same cut): a tunnel's names are new each time and four to eight
 * labels long. The name is lowercased and hashed in one pass; its case is
 * recovered only for a new name's features. A window's entropy changes only
 * when a new name is merged into it, so it is computed once per change, not
 * per query, and only when the score could reach the threshold with it
 * (win_may_reach). The alert detail is formatted by hand, as snprintf
 * would.
 */
#include "detect_dns_tunnel.h"

#include <errno.h>
#include <libpsl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../sensor/hash.h"
#include "../sensor/mem.h"
#include "../sensor/rules.h"
#include "../sensor/text.h"
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
#define DT_CUT_WAYS 4           /* in sets of this many */
#define DT_CUT_NAME 104         /* longest name the cut cache keeps */
#define DT_CUT_LONG_SLOTS 64    /* cut cache entries for longer names (power of two), 16 KiB */
#define DT_CUT_LONG_NAME 232    /* longest name those keep */
#define DT_TRUST_UNKNOWN 2      /* cut cache: trusted-zone match not made yet */

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

/*
 * Decode one escaped byte at s[*i] (s[0..n)): \xNN, \\, \. or a plain byte.
 * Sets *sep when it is an unescaped '.'. Advances *i.
 */
static uint8_t unescape_at(const char *s, size_t n, size_t *i, int *sep)
{
	size_t k = *i;
	*sep = 0;
	if (s[k] == '\\' && k + 1 < n) {
		if (s[k + 1] == 'x' && k + 3 < n && text_hexval(s[k + 2]) >= 0 && text_hexval(s[k + 3]) >= 0) {
			*i = k + 4;
			return (uint8_t)(text_hexval(s[k + 2]) << 4 | text_hexval(s[k + 3]));
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

		if (i < n && sub[i] != '\\') {
			c = (uint8_t)sub[i++]; /* unescape_at's plain byte */
			sep = c == '.';
		} else if (i < n) {
			c = unescape_at(sub, n, &i, &sep);
		} else {
			i++; /* end of input closes the last label */
		}
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
	/* b is mostly one name: skip its empty symbols four at a time */
	for (unsigned j = 0; j < DNS_TUNNEL_SYMBOLS; j += 4) {
		uint64_t w;
		memcpy(&w, &b->hist[j], sizeof(w));
		if (!w)
			continue;
		for (unsigned k = j; k < j + 4; k++)
			if (b->hist[k])
				hist_add(a, k, b->hist[k]);
	}
}

double dns_tunnel_entropy(const struct dns_tunnel_feat *f)
{
	uint32_t sum = 0; /* at most 80 * 65535: exact, as a sum of doubles would be */
	double tot, h = 0;

	for (unsigned j = 0; j < DNS_TUNNEL_SYMBOLS; j++)
		sum += f->hist[j];
	if (!sum)
		return 0;
	tot = sum;
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
struct dt_cut_val {
	uint64_t hash;          /* fnv64 of name */
	uint16_t len;           /* 0 = empty slot */
	uint8_t trusted;        /* in rules->trusted_domains: 0, 1 or DT_TRUST_UNKNOWN */
	uint8_t how;            /* DT_CUT_* (when not trusted) */
	int32_t cut;            /* name_cut's result (when not trusted) */
	uint32_t sub_len;       /* and its *sub_len */
	uint32_t key_hash;      /* dom_hash of the domain key the cut gives */
};

struct dt_cut {
	struct dt_cut_val v;
	char name[DT_CUT_NAME];
};
_Static_assert(sizeof(struct dt_cut) == 128, "cut cache entries stay 128 bytes");

/* The same for the few longer names (a tunnel's, asked and then answered). */
struct dt_cut_long {
	struct dt_cut_val v;
	char name[DT_CUT_LONG_NAME];
};

struct dt_dom {
	char key[DT_KEY_MAX];   /* registered domain, lowercase, escaped */
	uint32_t hash;          /* dom_hash(key) */
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
	/* dt_prefetch's lowercase name of pf_obs (in lc), for its dt_on_obs */
	const struct obs *pf_obs;
	const char *pf_name;
	size_t pf_name_len, pf_n;
	uint64_t pf_hash;
	/* scratch */
	char norm[DT_NAME_MAX], lc[DT_NAME_MAX];
	uint8_t zout[1024];
	char detail[256];
	struct dt_cut cut[DT_CUT_SLOTS];
	struct dt_cut_long cut_long[DT_CUT_LONG_SLOTS];
};


static uint8_t to_lower(uint8_t c)
{
	return (uint8_t)(c - 'A') < 26 ? (uint8_t)(c + 32) : c;
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

/* The hash of a domain key, kept with a name's cut in the cut cache: keyed
 * (hash.h), since the domains, and so the table's chains, are the querier's
 * to choose. */
static uint32_t dom_hash(const char *key, size_t n)
{
	return (uint32_t)hash_keyed(key, n);
}

/* Find the domain key[0..n) (n < DT_KEY_MAX, h = dom_hash of it); create it
 * (evicting the least recent) when create is set. Returns the slot or
 * DT_NONE. */
static uint32_t dom_get(struct dt_state *st, const char *key, size_t n, uint32_t h, int create,
			uint64_t now)
{
	uint32_t i;

	for (i = st->bucket[h & (DT_BUCKETS - 1)]; i != DT_NONE; i = st->dom[i].bnext) {
		struct dt_dom *d = &st->dom[i];
		if (d->hash == h && strncmp(d->key, key, n) == 0 && d->key[n] == '\0') {
			if (st->lru_head != i) { /* (to the head from the head changes nothing) */
				lru_unlink(st, i);
				lru_push(st, i);
			}
			return i;
		}
	}
	if (!create)
		return DT_NONE;
	if (st->nfree == 0) {
		if (st->lru_tail == DT_NONE)
			return DT_NONE;
		/* The least recently used goes, but not one whose names looked
		 * encoded this hour while a plain one is among the last four: a
		 * flood of throwaway domains would otherwise push a tunnel out
		 * and start its windows and budget afresh. */
		uint32_t v = st->lru_tail;
		for (uint32_t k = 0, c = v; k < 4 && c != DT_NONE; k++, c = st->dom[c].lprev) {
			if (!st->dom[c].hour.f.encoded) {
				v = c;
				break;
			}
		}
		dom_remove(st, v);
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

/*
 * Whether win_score(w) can reach thr, without the entropy (a log2 per symbol
 * of the window): its term is at most 15 points, and floating-point sums and
 * rounding are monotone, so the score with an infinite entropy is an upper
 * bound of the score. Ordinary domains (no encoded names) stay well below.
 */
static int win_may_reach(const struct dt_window *w, unsigned thr)
{
	return score_ent(&w->f, INFINITY) >= (int)thr;
}

/*
 * Test-and-set the day's Bloom filter. Returns 1 when the name was new.
 * (Starting it afresh when half full, so that plain names asked first
 * cannot fill it, was tried: a busy service-discovery zone's repeated names,
 * counted again after each restart, then exceeded the budget.)
 */
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
 * label separator, one trailing dot goes; with lower set, letters are
 * lowercased. Writes out[0..len] ('\0' at len). Returns the length, or 0 when
 * it does not fit or is empty.
 */
static size_t name_norm(const char *in, size_t n, char *out, size_t cap, int lower)
{
	size_t o = 0;

	if (n && in[n - 1] == '.' && !(n >= 2 && in[n - 2] == '\\'))
		n--;
	for (size_t i = 0; i < n; i++) {
		if (o + 5 > cap)
			return 0;
		if (in[i] == '\\' && i + 1 < n) {
			if (in[i + 1] == '.') {
				memcpy(out + o, "\\x2e", 4);
				o += 4;
			} else {
				out[o++] = '\\';
				out[o++] = in[i + 1];
			}
			i++;
			continue;
		}
		out[o++] = in[i];
	}
	out[o] = '\0';
	if (lower)
		for (size_t i = 0; i < o; i++)
			out[i] = (char)to_lower((uint8_t)out[i]);
	return o;
}

#define ONES64 0x0101010101010101ull

/* Whether any byte of w is c. */
static int word_has(uint64_t w, uint8_t c)
{
	uint64_t v = w ^ (ONES64 * c);
	return ((v - ONES64) & ~v & (ONES64 * 0x80)) != 0;
}

/* to_lower on each byte of w: bytes 'A'..'Z' (high bit clear) gain 0x20. */
static uint64_t word_lower(uint64_t w)
{
	uint64_t low7 = w & (ONES64 * 0x7f);
	uint64_t ge_a = low7 + ONES64 * (0x80 - 'A'); /* high bit: low7 >= 'A' */
	uint64_t gt_z = low7 + ONES64 * (0x7f - 'Z'); /* high bit: low7 > 'Z' */
	return w | ((ge_a & ~gt_z & ~w & (ONES64 * 0x80)) >> 2);
}

/*
 * name_norm(in, n, lc, cap, 1), with *fnv = fnv64 of the result, in one
 * pass: every observation needs the lowercase name and its hash (the cut
 * cache's and the Bloom filter's), only a new name's features need the case
 * kept (name_norm then). Eight bytes at a time while there is no backslash;
 * a name that cannot reach cap (each input byte gives at most two) skips the
 * bound check.
 */
static size_t name_lc(const char *in, size_t n, char *lc, size_t cap, uint64_t *fnv)
{
	uint64_t h = TEXT_FNV64_BASIS;
	size_t o = 0, m = n, i = 0;

	if (m && in[m - 1] == '.' && !(m >= 2 && in[m - 2] == '\\'))
		m--;
	if (2 * m + 5 > cap) {
		o = name_norm(in, n, lc, cap, 1);
		*fnv = text_fnv64(lc, o);
		return o;
	}
	while (i < m) {
		uint64_t w;
		uint8_t c;

		if (i + 8 <= m && (memcpy(&w, in + i, 8), !word_has(w, '\\'))) {
			w = word_lower(w);
			const uint8_t *b = (const uint8_t *)lc + o;
			memcpy(lc + o, &w, 8);
			/* unrolled: a loop's count and branch would cost as much */
			h = (h ^ b[0]) * TEXT_FNV64_PRIME;
			h = (h ^ b[1]) * TEXT_FNV64_PRIME;
			h = (h ^ b[2]) * TEXT_FNV64_PRIME;
			h = (h ^ b[3]) * TEXT_FNV64_PRIME;
			h = (h ^ b[4]) * TEXT_FNV64_PRIME;
			h = (h ^ b[5]) * TEXT_FNV64_PRIME;
			h = (h ^ b[6]) * TEXT_FNV64_PRIME;
			h = (h ^ b[7]) * TEXT_FNV64_PRIME;
			i += 8;
			o += 8;
			continue;
		}
		c = (uint8_t)in[i++];
		if (c == '\\' && i < m) {
			c = (uint8_t)in[i++];
			if (c == '.') {
				memcpy(lc + o, "\\x2e", 4);
				o += 4;
				h = (h ^ '\\') * TEXT_FNV64_PRIME;
				h = (h ^ 'x') * TEXT_FNV64_PRIME;
				h = (h ^ '2') * TEXT_FNV64_PRIME;
				h = (h ^ 'e') * TEXT_FNV64_PRIME;
				continue;
			}
			lc[o++] = '\\';
			h = (h ^ '\\') * TEXT_FNV64_PRIME;
		}
		c = to_lower(c);
		lc[o++] = (char)c;
		h = (h ^ c) * TEXT_FNV64_PRIME;
	}
	lc[o] = '\0';
	*fnv = h;
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

/* How name_cut decided: kept with its result so that a longer name's cut can
 * be derived from its parent's (cut_derive). */
enum {
	DT_CUT_SKIP,    /* under .local, or a single label: -1 */
	DT_CUT_DATA,    /* data under an unknown top-level label: keyed by the first label */
	DT_CUT_PSL,     /* libpsl's registered domain (-1: none) */
	DT_CUT_REVERSE, /* a reverse look-up's name: -1, but a longer name is not one */
};

/*
 * Is lc[0..n) a reverse look-up's name: arpa, in-addr.arpa or ip6.arpa, or
 * 1-4 decimal octets under in-addr.arpa, or 1-32 single hex nibbles under
 * ip6.arpa? Anything else under .arpa is judged like any name: reverse zones
 * are delegated to whoever holds the addresses (a tunnel broker's /48, a
 * /24's owner), who can answer any name under them.
 */
static int reverse_name(const char *lc, size_t n)
{
	static const char v4[] = "in-addr.arpa", v6[] = "ip6.arpa";
	size_t zl, labels = 0, max, i = 0;
	int six;

	if ((n == 4 && memcmp(lc, "arpa", 4) == 0))
		return 1;
	if (n >= sizeof(v4) - 1 && memcmp(lc + n - (sizeof(v4) - 1), v4, sizeof(v4) - 1) == 0)
		zl = sizeof(v4) - 1, six = 0, max = 4;
	else if (n >= sizeof(v6) - 1 && memcmp(lc + n - (sizeof(v6) - 1), v6, sizeof(v6) - 1) == 0)
		zl = sizeof(v6) - 1, six = 1, max = 32;
	else
		return 0;
	if (n == zl)
		return 1;
	if (lc[n - zl - 1] != '.')
		return 0;
	n -= zl + 1; /* the labels before the zone, each followed by a dot */
	while (i < n) {
		size_t j = i;
		unsigned v = 0;
		while (j < n && lc[j] != '.')
			j++;
		if (j == i || ++labels > max)
			return 0;
		if (six) {
			if (j - i != 1 || !((lc[i] >= '0' && lc[i] <= '9') || (lc[i] >= 'a' && lc[i] <= 'f')))
				return 0;
		} else {
			if (j - i > 3)
				return 0;
			for (size_t k = i; k < j; k++) {
				if (lc[k] < '0' || lc[k] > '9')
					return 0;
				v = v * 10 + (unsigned)(lc[k] - '0');
			}
			if (v > 255)
				return 0;
		}
		i = j + 1;
	}
	return 1;
}

/*
 * Cut lc[0..n) into subdomain and registered domain. Returns the offset of
 * the registered domain (its length is n - offset) and the subdomain length
 * in *sub_len, or -1 when the name is not judged (a reverse look-up's name,
 * reverse_name; under .local, which is multicast DNS and never leaves the
 * link; or no registered domain). A name under a top-level label that
 * the public suffix list does not know, where that label or the one before
 * it looks like data ("dnscat.<hex>.<hex>", dnscat2 talking to its server
 * directly), is keyed by its first label instead: the result is then
 * -2 - (first label length).
 * *how says which of these decided. lc[n] must be '\0' (libpsl reads to it).
 */
static long name_cut(const struct dt_state *st, const char *lc, size_t n, size_t *sub_len,
		     uint8_t *how)
{
	const char *rd;
	size_t dots[2] = {0, 0}, nd = 0; /* offsets of the last two label starts */

	*how = DT_CUT_SKIP;
	if ((n == 5 && memcmp(lc, "local", 5) == 0) || (n > 6 && memcmp(lc + n - 6, ".local", 6) == 0))
		return -1;
	if (((n == 4 && memcmp(lc, "arpa", 4) == 0) || (n > 5 && memcmp(lc + n - 5, ".arpa", 5) == 0)) &&
	    reverse_name(lc, n)) {
		*how = DT_CUT_REVERSE;
		return -1;
	}
	for (size_t i = n; i > 0 && nd < 2; i--)
		if (lc[i - 1] == '.')
			dots[nd++] = i;
	if (nd == 0)
		return -1;
	if (!psl_is_public_suffix2(st->psl, lc + dots[0], PSL_TYPE_ANY | PSL_TYPE_NO_STAR_RULE) &&
	    (label_is_data(lc + dots[0], n - dots[0], 1) ||
	     label_is_data(lc + (nd > 1 ? dots[1] : 0), dots[0] - 1 - (nd > 1 ? dots[1] : 0), 0))) {
		const char *dot = memchr(lc, '.', n);
		*how = DT_CUT_DATA;
		*sub_len = n - (size_t)(dot + 1 - lc);
		return -2 - (long)(dot - lc);
	}
	*how = DT_CUT_PSL;
	rd = psl_registrable_domain(st->psl, lc);
	if (!rd)
		return -1;
	*sub_len = rd > lc ? (size_t)(rd - lc) - 1 : 0;
	return (long)(rd - lc);
}

/*
 * The length of the first label of lc[0..n) when the name's cut can be
 * derived from its parent's: three to eight labels, none empty. Else 0.
 */
static size_t parent_at(const char *lc, size_t n)
{
	size_t first = 0, dots = 0, start = 0; /* start: where the current label begins */
	const char *dot;

	while (start < n && (dot = memchr(lc + start, '.', n - start)) != NULL) {
		size_t i = (size_t)(dot - lc);
		if (i == start || ++dots > 7)
			return 0;
		if (dots == 1)
			first = i;
		start = i + 1;
	}
	return dots >= 2 && start < n ? first : 0;
}

/*
 * name_cut of lc[0..n), a name for which parent_at gave l0, from the cut of
 * its parent lc[l0 + 1..n) (pcut, phow). Each of name_cut's branches carries
 * over from the parent, which has at least two labels:
 * - .local: the name ends as its parent does (a reverse look-up's name,
 *   DT_CUT_REVERSE, is not derived: a longer name may not be one);
 * - the data rule reads only the last two labels, which the parent shares;
 *   the name is then keyed by its own first label;
 * - psl_registrable_domain walks the suffixes of a name from the left and
 *   returns the one before the first public suffix (psl_is_public_suffix,
 *   the test it makes): the name's is NULL when the name itself is a public
 *   suffix, else its parent's, or the whole name when the parent's is NULL.
 *   That holds where libpsl does nothing else: no empty label (a leading dot
 *   gives NULL) and at most eight labels (libpsl may shorten longer ones),
 *   which is what parent_at admits.
 *   So one public-suffix test replaces a walk of a test per label, each
 *   one or two searches of the list, which a tunnel's unique names (four to
 *   eight labels) would otherwise each pay.
 */
static long cut_derive(const struct dt_state *st, const char *lc, size_t n, size_t l0, long pcut,
		       uint8_t phow, size_t *sub_len, uint8_t *how)
{
	size_t rd;

	*how = phow;
	if (phow == DT_CUT_SKIP)
		return -1;
	if (phow == DT_CUT_DATA) {
		*sub_len = n - l0 - 1;
		return -2 - (long)l0;
	}
	if (psl_is_public_suffix(st->psl, lc))
		return -1;
	rd = pcut >= 0 ? l0 + 1 + (size_t)pcut : 0;
	*sub_len = rd ? rd - 1 : 0;
	return (long)rd;
}

/* Where the domain key of a name of n bytes lies, for a cut other than -1:
 * the registered domain, or (DT_CUT_DATA) the first label; at most
 * DT_KEY_MAX - 1 bytes. */
static void cut_key(long cut, size_t n, size_t *off, size_t *len)
{
	if (cut >= 0) {
		*off = (size_t)cut;
		*len = n - *off;
	} else {
		*off = 0;
		*len = (size_t)(-2 - cut);
	}
	if (*len >= DT_KEY_MAX)
		*len = DT_KEY_MAX - 1;
}

/*
 * The trusted-zone match and name_cut for lc[0..n) (hash h = fnv64 of it,
 * lc[n] = '\0'), from the cut cache when the name is there, else computed
 * (from the parent name's entry, itself looked up or computed, when
 * parent_at allows) and remembered. Returns 0 when the name is in a trusted
 * zone; else 1, with name_cut's result in *cut, *sub_len and *how, and
 * (key_hash not NULL, cut not -1) the dom_hash of the domain key in *key_hash.
 *
 * A parent is looked up for its cut only (trust 0): the name was found not
 * trusted, and a zone that takes the parent takes the name too, so the
 * parent is not trusted either. Its entry leaves the match for later
 * (DT_TRUST_UNKNOWN), when the parent is seen as a name of its own.
 */
/*
 * The cut cache entry of lc[0..n) (hash h), or NULL. A set holds DT_CUT_WAYS
 * names, the most recently used first: a hit swaps to the front, nearly as
 * good as keeping them in order (on the 2M-packet benchmark's names, 72k
 * misses against 87k direct-mapped, 51k of them first sightings).
 */
static struct dt_cut_val *cut_find(struct dt_state *st, const char *lc, size_t n, uint64_t h)
{
	if (n <= DT_CUT_NAME) {
		struct dt_cut *set = &st->cut[(h & (DT_CUT_SLOTS / DT_CUT_WAYS - 1)) * DT_CUT_WAYS];
		for (unsigned w = 0; w < DT_CUT_WAYS; w++) {
			if (set[w].v.len != n || set[w].v.hash != h || memcmp(set[w].name, lc, n) != 0)
				continue;
			if (w) {
				struct dt_cut t = set[0];
				set[0] = set[w];
				set[w] = t;
			}
			return &set[0].v;
		}
	} else if (n <= DT_CUT_LONG_NAME) {
		struct dt_cut_long *c = &st->cut_long[(h >> 32) & (DT_CUT_LONG_SLOTS - 1)];
		if (c->v.len == n && c->v.hash == h && memcmp(c->name, lc, n) == 0)
			return &c->v;
	}
	return NULL;
}

/*
 * Remember v for lc[0..n) (hash h) in place of the last of its set: first
 * when front is set, else last, so that a parent remembered on the way (a
 * tunnel's are as new as its names) goes first unless it is asked again.
 */
static void cut_store(struct dt_state *st, const char *lc, size_t n, uint64_t h,
		      const struct dt_cut_val *v, int front)
{
	struct dt_cut_val *e;
	char *name;

	if (n <= DT_CUT_NAME) {
		struct dt_cut *set = &st->cut[(h & (DT_CUT_SLOTS / DT_CUT_WAYS - 1)) * DT_CUT_WAYS];
		unsigned w = DT_CUT_WAYS - 1;
		if (front) {
			memmove(&set[1], &set[0], (DT_CUT_WAYS - 1) * sizeof(*set));
			w = 0;
		}
		e = &set[w].v;
		name = set[w].name;
	} else if (n <= DT_CUT_LONG_NAME) {
		struct dt_cut_long *c = &st->cut_long[(h >> 32) & (DT_CUT_LONG_SLOTS - 1)];
		e = &c->v;
		name = c->name;
	} else {
		return;
	}
	*e = *v;
	memcpy(name, lc, n);
}

/*
 * The trusted-zone match and name_cut for lc[0..n) (hash h = fnv64 of it,
 * lc[n] = '\0'), from the cut cache when the name is there, else computed
 * (from the parent name's entry, itself looked up or computed, when
 * parent_at allows) and remembered. Returns 0 when the name is in a trusted
 * zone; else 1, with name_cut's result in *cut, *sub_len and *how, and
 * (key_hash not NULL, cut not -1) the dom_hash of the domain key in *key_hash.
 *
 * A parent is looked up for its cut only (trust 0): the name was found not
 * trusted, and a zone that takes the parent takes the name too, so the
 * parent is not trusted either. Its entry leaves the match for later
 * (DT_TRUST_UNKNOWN), when the parent is seen as a name of its own.
 */
static int cut_cached(struct dt_state *st, const char *lc, size_t n, uint64_t h, int trust,
		      long *cut, size_t *sub_len, uint8_t *how, uint32_t *key_hash)
{
	struct dt_cut_val *e = cut_find(st, lc, n, h), v;

	if (e) {
		if (e->trusted == DT_TRUST_UNKNOWN && trust)
			e->trusted = (uint8_t)(st->rules &&
					       rules_domain_match(&st->rules->trusted_domains, lc, n));
		*cut = e->cut;
		*sub_len = e->sub_len;
		*how = e->how;
		if (key_hash)
			*key_hash = e->key_hash;
		return e->trusted != 1;
	}
	memset(&v, 0, sizeof(v));
	v.trusted = DT_TRUST_UNKNOWN;
	if (trust)
		v.trusted = (uint8_t)(st->rules &&
				      rules_domain_match(&st->rules->trusted_domains, lc, n));
	*cut = -1;
	*sub_len = 0;
	*how = DT_CUT_SKIP;
	if (v.trusted != 1) {
		size_t l0 = parent_at(lc, n);
		long pcut;
		size_t psub;
		uint8_t phow;
		const char *p = lc + l0 + 1;

		/* (a parent found trusted after all: cut directly) */
		if (l0 && cut_cached(st, p, n - l0 - 1, text_fnv64(p, n - l0 - 1), 0, &pcut, &psub, &phow,
				     NULL) && phow != DT_CUT_REVERSE)
			*cut = cut_derive(st, lc, n, l0, pcut, phow, sub_len, how);
		else
			*cut = name_cut(st, lc, n, sub_len, how);
		if (*cut != -1) {
			size_t off, len;
			cut_key(*cut, n, &off, &len);
			v.key_hash = dom_hash(lc + off, len);
		}
	}
	if (key_hash)
		*key_hash = v.key_hash;
	v.hash = h;
	v.len = (uint16_t)n;
	v.how = *how;
	v.cut = (int32_t)*cut;
	v.sub_len = (uint32_t)*sub_len;
	cut_store(st, lc, n, h, &v, trust);
	return v.trusted != 1;
}

long dns_tunnel_cut(void *state, const char *lc, size_t n, size_t *sub_len)
{
	long cut;
	uint8_t how;

	*sub_len = 0;
	if (!cut_cached(state, lc, n, text_fnv64(lc, n), 1, &cut, sub_len, &how, NULL))
		return -1;
	return cut;
}

unsigned dns_tunnel_chain_max(const void *state)
{
	const struct dt_state *st = state;
	unsigned most = 0;

	for (uint32_t b = 0; b < DT_BUCKETS; b++) {
		unsigned n = 0;
		for (uint32_t i = st->bucket[b]; i != DT_NONE; i = st->dom[i].bnext)
			n++;
		if (n > most)
			most = n;
	}
	return most;
}

/* ---- the module ---------------------------------------------------------- */

/* The alert detail is written by hand: snprintf cost more than the rest of
 * a tunnel query's judgement. Each put_* writes at p and returns the end. */
static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

/* "%llu" */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	size_t k = 0;

	do {
		tmp[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (k)
		*p++ = tmp[--k];
	return p;
}

/*
 * "%.1f": the tenth nearest to x, ties to even, as printf rounds. A guess m
 * is checked against the half-tenths around it with fma, whose one rounding
 * keeps the sign of x * 20 - (2m +- 1) exact, so no multiplication error can
 * move x across a boundary. Values outside [0, 1e9) (and -0) go to snprintf.
 * p has room for 32 bytes.
 */
static char *put_tenths(char *p, double x)
{
	if (!(x >= 0 && x < 1e9) || signbit(x)) { /* never an entropy: kept to 31 bytes */
		int k = snprintf(p, 32, "%.1f", x);
		return p + (k < 0 ? 0 : k > 31 ? 31 : k);
	}
	uint64_t m = (uint64_t)(x * 10 + 0.5);
	for (;;) {
		double up = fma(x, 20, -(double)(2 * m + 1)); /* 2 (10x - (m + 1/2)) */
		if (up > 0 || (up == 0 && (m & 1))) {
			m++;
			continue;
		}
		double down = m ? fma(x, 20, -(double)(2 * m - 1)) : 1; /* 2 (10x - (m - 1/2)) */
		if (down < 0 || (down == 0 && (m & 1))) {
			m--;
			continue;
		}
		break;
	}
	p = put_u64(p, m / 10);
	*p++ = '.';
	*p++ = (char)('0' + m % 10);
	return p;
}

/* "%llu B" below a KB, else "%llu KB" rounded */
static char *put_bytes(char *p, uint64_t b)
{
	if (b < 1024)
		return put_str(put_u64(p, b), " B");
	return put_str(put_u64(p, (b + 512) / 1024), " KB");
}

static int dt_judge(struct dt_state *st, struct dt_dom *d, int fresh, const struct obs *o,
		    const char *subject, struct emit *out)
{
	uint64_t now = o->pkt ? o->pkt->ts_us : 0;
	int sev = 0, score = 0;
	double bits = 0;

	if (d->burst.f.unique >= st->min_q && win_may_reach(&d->burst, st->score_thr)) {
		int s = win_score(&d->burst);
		if (s >= (int)st->score_thr) {
			sev = 4;
			score = s;
			bits = win_entropy(&d->burst);
		}
	}
	if (!sev && d->hour.f.unique >= st->min_q && win_may_reach(&d->hour, st->score_thr)) {
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

	/* "%llu queries, %llu distinct names, %.1f bits/char, ~%s encoded":
	 * at most 142 bytes of the 256 */
	char *p = st->detail;
	p = put_str(put_u64(p, d->tot_queries), " queries, ");
	p = put_str(put_u64(p, d->tot_unique), " distinct names, ");
	p = put_str(put_tenths(p, bits), " bits/char, ~");
	p = put_str(put_bytes(p, d->tot_bytes), " encoded");
	*p = '\0';
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

/* Lowercase o's name (kept for dt_on_obs of o) and fetch its cut cache set:
 * the line of each way's entry, which cut_find reads first. */
static void dt_prefetch(void *state, const struct obs *o)
{
	struct dt_state *st = state;

	st->pf_obs = NULL;
	if (!o->name || o->name_len == 0 || (o->kind != OBS_DNS_QUERY && o->kind != OBS_DNS_ANSWER))
		return;
	st->pf_n = name_lc(o->name, o->name_len, st->lc, sizeof(st->lc), &st->pf_hash);
	st->pf_obs = o;
	st->pf_name = o->name;
	st->pf_name_len = o->name_len;
	if (st->pf_n && st->pf_n <= DT_CUT_NAME) {
		const struct dt_cut *set =
			&st->cut[(st->pf_hash & (DT_CUT_SLOTS / DT_CUT_WAYS - 1)) * DT_CUT_WAYS];
		for (unsigned w = 0; w < DT_CUT_WAYS; w++)
			__builtin_prefetch(&set[w].v);
	}
}

static int dt_on_obs(void *state, const struct obs *o, struct emit *out)
{
	struct dt_state *st = state;
	uint64_t now = o->pkt ? o->pkt->ts_us : 0;
	size_t n, sub_len = 0, key_off, key_len;
	long cut;
	uint8_t how;
	uint64_t name_hash;
	uint32_t i, key_hash;
	struct dt_dom *d;
	char subject[DT_KEY_MAX];

	if (!o->name || o->name_len == 0 || (o->kind != OBS_DNS_QUERY && o->kind != OBS_DNS_ANSWER))
		return MOD_OK;
	if (st->pf_obs == o && st->pf_name == o->name && st->pf_name_len == o->name_len) {
		n = st->pf_n; /* st->lc holds it */
		name_hash = st->pf_hash;
	} else {
		n = name_lc(o->name, o->name_len, st->lc, sizeof(st->lc), &name_hash);
	}
	st->pf_obs = NULL;
	if (n == 0)
		return MOD_OK;
	if (!cut_cached(st, st->lc, n, name_hash, 1, &cut, &sub_len, &how, &key_hash))
		return MOD_OK; /* trusted */
	if (cut == -1)
		return MOD_OK;
	cut_key(cut, n, &key_off, &key_len);
	memcpy(subject, st->lc + key_off, key_len);
	subject[key_len] = '\0';

	if (o->kind == OBS_DNS_ANSWER) {
		i = dom_get(st, subject, key_len, key_hash, 0, now);
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

	i = dom_get(st, subject, key_len, key_hash, 1, now);
	if (i == DT_NONE)
		return MOD_OK;
	d = &st->dom[i];
	dom_roll(st, d, now);

	int odd = is_odd_type(o->type);
	/* (case ignored: resolvers that randomise the case of what they
	 * forward, dnsmasq 2.90's default, would make each copy new) */
	int fresh = bloom_add(d, name_hash);

	d->burst.f.queries++;
	d->hour.f.queries++;
	d->burst.f.odd_type += (uint32_t)odd;
	d->hour.f.odd_type += (uint32_t)odd;
	d->tot_queries++;
	if (fresh) {
		/* the features read the name with its case (lc's length and cut) */
		const char *sub = cut >= 0 ? st->norm : st->norm + (-2 - cut) + 1;
		struct dns_tunnel_feat one;

		name_norm(o->name, o->name_len, st->norm, sizeof(st->norm), 0);
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
	mem_table_free(st, sizeof(*st));
}

static int dt_init(const struct module_env *env, void **state)
{
	struct dt_state *st;

	if (hash_init() != 0)
		return -ENOMEM;
	st = mem_table_zalloc(sizeof(*st)); /* 10 MiB of caches */
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
		mem_table_free(st, sizeof(*st));
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
	.prefetch = dt_prefetch,
	.on_tick = dt_on_tick,
};
