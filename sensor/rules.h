/*
 * rules.h - the rules file (YAML under rules/, read with libyaml): where the
 * sandbox is, what it may reach, which zones are trusted, which endpoints are
 * instance-metadata services, and the detectors' thresholds.
 *
 * rules_load() is strict (style.md practice 8): any unknown key, wrong type,
 * bad address or CIDR is an error reported as "file:line: message" and the
 * whole file is refused. A loaded struct rules is immutable and owned by the
 * caller; rules_free() accepts NULL. Detectors read it through module_env.
 */
#ifndef EW_RULES_H
#define EW_RULES_H

#include <stddef.h>
#include <stdint.h>

/* An address or a network: ipv 4 or 6, prefix length in bits; port 0 = any. */
struct rules_net {
	uint8_t ipv;
	uint8_t prefix;
	uint16_t port;
	uint8_t addr[16];
};

struct rules_netlist {
	struct rules_net *v;
	size_t n;
	/*
	 * A quick "no" for rules_net_match, filled by rules.c whenever it
	 * builds a list: bit b of lead[0] (IPv4 entries) or lead[1] (IPv6) is
	 * set when some entry can match an address whose first byte is b.
	 * lead_v and lead_n record the v and n it was made for; a list built
	 * or changed by hand does not match them and is scanned in full, so
	 * {v, n} alone (the rest zero) is still a valid list. Entries must not
	 * be changed in place once rules.c has indexed them.
	 */
	uint64_t lead[2][4];
	const struct rules_net *lead_v;
	size_t lead_n;
};

struct rules_strlist {
	char **v; /* lowercase, no trailing dot */
	size_t n;
	/* strlen of each v[i], kept by rules.c for the v and n recorded in
	 * len_v and len_n, so rules_domain_match needs no strlen per zone; a
	 * list built or changed by hand does not match them and is measured
	 * per call. */
	size_t *len;
	char **len_v;
	size_t len_n;
};

struct rules_thresholds {
	/* dns_tunnel */
	unsigned tunnel_min_queries;      /* distinct names under one domain before judging (default 8) */
	unsigned tunnel_window_s;         /* burst window (default 60) */
	unsigned tunnel_score;            /* 0..100 score at which to alert (default 70) */
	unsigned tunnel_budget_hour;      /* compressed unique bytes per domain per hour (default 4096) */
	unsigned tunnel_budget_day;       /* ... per day (default 32768) */
	/* icmp_tunnel */
	unsigned icmp_payload_max;        /* echo data bytes (before the filler) above which it carries data (default 128) */
	unsigned icmp_entropy_x100;       /* bits/byte x100 above which a payload is data (default 600) */
	unsigned icmp_volume_bytes;       /* echo data bytes per source per minute (default 8192) */
	unsigned icmp_distinct_data;      /* different data from a source to a peer per minute (default 8, 1..16) */
	unsigned icmp_distinct_data_hour; /* ... per hour (default 60, 1..256) */
	/* alerts */
	unsigned suppress_s;              /* aggregation window per (class, src, subject) (default 300) */
};

struct rules {
	char *path;                       /* file it came from */
	int has_sandbox;                  /* a sandbox section: the policy classes are on */
	struct rules_netlist sandbox;     /* networks where agents live */
	struct rules_netlist proxies;     /* allow.proxies */
	struct rules_netlist resolvers;   /* allow.resolvers */
	struct rules_netlist destinations;/* allow.destinations */
	struct rules_strlist domains;     /* allow.domains ("*.example.org" allowed); empty = any */
	int allow_ipv6;
	int allow_dns_over_tcp;
	struct rules_strlist trusted_domains;
	struct rules_netlist metadata_addrs; /* metadata: entries that are addresses */
	struct rules_strlist metadata_names; /* metadata: entries that are names */
	struct rules_thresholds t;
};

/*
 * Load and validate a rules file. On success returns 0 and *out (free with
 * rules_free). On failure returns -1 and writes "file:line: message" into err.
 */
int rules_load(const char *path, struct rules **out, char *err, size_t errlen);

/* Built-in defaults (no sandbox section, the shipped metadata list). */
struct rules *rules_default(void);

void rules_free(struct rules *r);

/*
 * Helpers for detectors.
 *
 * rules_net_match: 1 if addr (ipv 4: 4 bytes, ipv 6: 16 bytes) is inside
 * one of the networks of l and the port fits, else 0. An entry with port 0
 * takes any port; a query with port 0 asks about the address alone (ICMP,
 * DNS answers) and ignores the entries' ports. An IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d) is also tried as the IPv4 address a.b.c.d.
 */
int rules_net_match(const struct rules_netlist *l, int ipv, const uint8_t *addr, uint16_t port);
/*
 * Name is inside one of the zones (dot-boundary, case-insensitive): zone
 * "cloudfront.net" takes "cloudfront.net" and "a.cloudfront.net", not
 * "xcloudfront.net"; "*.example.org" takes subdomains only. name need not be
 * NUL-terminated; one trailing dot is ignored. Returns 1 or 0 (0 for an
 * empty list: the caller decides what an empty allow.domains means).
 */
int rules_domain_match(const struct rules_strlist *l, const char *name, size_t len);

/*
 * Parse one address as the rules file spells it: "10.0.0.1", "10.0.0.0/8",
 * "10.0.0.1:8080", "10.0.0.0/8:443", "fd00::1", "fd00::/64", "[fd00::1]:8080",
 * "[fd00::/64]:443". Strict: inet_pton, prefix 0..32 or 0..128 with no host
 * bits set, port 1..65535. Returns 0, or -1 with the reason in why (a phrase
 * that follows the quoted value: "is not an address", "has a port out of
 * range (1..65535)", ...).
 */
int rules_net_parse(const char *s, struct rules_net *out, char *why, size_t whylen);

/*
 * Normalise a domain name of the rules file into out (outlen >= 256):
 * lowercase, one trailing dot removed, labels non-empty and <= 63 bytes of
 * [a-z0-9_-], at most 253 bytes. wildcard = 1 also takes a leading "*.".
 * Returns 0, or -1 with the reason in why (as for rules_net_parse).
 */
int rules_name_parse(const char *s, size_t len, int wildcard, char *out, size_t outlen,
		     char *why, size_t whylen);

/* Render a net as the rules file spells it ("10.0.0.0/8:443",
 * "[fd00::1]:8080"). Returns the length; always NUL-terminates (cap > 0). */
size_t rules_net_format(const struct rules_net *n, char *dst, size_t cap);

/*
 * One line for `rules check` and reload logs: "1 sandbox network, 1 proxy,
 * 1 resolver, 0 destinations, any domain, 12 trusted zones, 17 metadata
 * endpoints". Returns the length; always NUL-terminates (cap > 0).
 */
size_t rules_summary(const struct rules *r, char *dst, size_t cap);

#endif
