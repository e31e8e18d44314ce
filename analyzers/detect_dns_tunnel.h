/*
 * detect_dns_tunnel.h - the dns_tunnel detector's pure parts, exported for
 * the unit tests: the label classifier, the per-window features and the
 * score. The module itself (detect_dns_tunnel_module) only keeps the
 * per-domain state around them; docs/detection.md ("dns_tunnel") explains
 * the features, the thresholds and how to tune them.
 *
 * Everything here is pure: no globals, no allocation, no output.
 */
#ifndef EW_DETECT_DNS_TUNNEL_H
#define EW_DETECT_DNS_TUNNEL_H

#include <stddef.h>
#include <stdint.h>

/* What one label looks like (dns_tunnel_label_class). */
enum dns_tunnel_label {
	DNS_TUNNEL_PLAIN = 0, /* readable, short, or structured (UUID, r4---sn-...) */
	DNS_TUNNEL_HEX,       /* >= 16 of [0-9a-f] (one case), digits and letters */
	DNS_TUNNEL_BASE32,    /* >= 16 single-case alphanumerics that read as random */
	DNS_TUNNEL_BASE64,    /* mixed case with digits or + / = that reads as random
			       * (>= 16, or >= 12 with digits between letters) */
	DNS_TUNNEL_RAW,       /* >= 8 with two bytes no hostname has, or >= 16 with
			       * one (base128, binary, gzip+base64 with '*') */
};

/*
 * Classify one label, given as its decoded bytes s[0..n) (not the escaped
 * text: "\xNN" must already be one byte). Returns a DNS_TUNNEL_* value; every
 * value but DNS_TUNNEL_PLAIN counts as "encoded".
 */
int dns_tunnel_label_class(const uint8_t *s, size_t n);

/* Symbol classes of the entropy histogram: a-z, A-Z, 0-9, '-', '_', other
 * printable bytes in 8 buckets, non-printable bytes in 8 buckets. */
#define DNS_TUNNEL_SYMBOLS 80

/*
 * Features of one domain over one window of packet time. Lexical features
 * (unique, encoded, sub_chars, max_label, hist) cover only the names not seen
 * before that day: a repeated name carries no new information.
 */
struct dns_tunnel_feat {
	uint32_t queries;       /* queries in the window */
	uint32_t unique;        /* of them, names new that day */
	uint32_t encoded;       /* unique names with at least one encoded label */
	uint32_t odd_type;      /* queries for TXT, NULL, CNAME, MX, ANY, KEY, HINFO, private types */
	uint32_t sub_chars;     /* subdomain bytes (decoded, without dots) over the unique names */
	uint32_t max_label;     /* longest subdomain label of a unique name */
	uint32_t answers;       /* responses seen for the domain */
	uint64_t answer_bytes;  /* their total message size */
	uint16_t hist[DNS_TUNNEL_SYMBOLS]; /* symbols of the unique subdomains (halved when full) */
};

/*
 * Add one unique name's subdomain part to f: sub[0..n) is escaped text as
 * the DNS analyzer renders names (labels separated by unescaped '.', \xNN,
 * \\ and \. inside labels), without the registered domain and its dot.
 * Updates unique, encoded, sub_chars, max_label and hist (not queries).
 * Returns 1 when a label looked encoded, else 0.
 */
int dns_tunnel_feat_name(struct dns_tunnel_feat *f, const char *sub, size_t n);

/* Merge the lexical features and counts of b into a. */
void dns_tunnel_feat_merge(struct dns_tunnel_feat *a, const struct dns_tunnel_feat *b);

/* Shannon entropy of f->hist in bits per symbol (0 when empty). */
double dns_tunnel_entropy(const struct dns_tunnel_feat *f);

/*
 * Score 0..100: how much the window's traffic to one domain looks like data
 * carried in names. 45 points for the share of unique names with an encoded
 * label, 20 for subdomain length (mean and longest label), 15 for character
 * entropy, 10 for the share of TXT/NULL/CNAME/MX-like queries, 5 for the
 * share of unique names, 5 for large responses. Returns 0 when f->unique is
 * 0. The caller decides whether the window holds enough queries to judge.
 */
int dns_tunnel_score(const struct dns_tunnel_feat *f);

/*
 * The cut a detector state (from detect_dns_tunnel_module.init) makes of a
 * lowercase name lc[0..n) (NUL-terminated, '\.' already written \x2e, no
 * trailing dot), through its cut cache, for the unit tests. Returns -1 when
 * the name is not judged (trusted zone, .arpa, .local, no registered domain);
 * >= 0: the offset of the registered domain (libpsl's
 * psl_registrable_domain), with the subdomain length in *sub_len; <= -2: the
 * name is keyed by its first label, of length -2 - result.
 */
long dns_tunnel_cut(void *state, const char *lc, size_t n, size_t *sub_len);

/* The most domains that share one bucket of a detector state's domain
 * table, for the unit tests: the querier chooses the domains, so the table's
 * hash is keyed (sensor/hash.h) and this stays small whatever they are. */
unsigned dns_tunnel_chain_max(const void *state);

/* The detector descriptor (analyzers/registry.c). */
struct module;
extern const struct module detect_dns_tunnel_module;

#endif
