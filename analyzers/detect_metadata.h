/*
 * detect_metadata.h - the metadata_probe detector (architecture.md section 3)
 * and the pure host normaliser it judges with.
 *
 * Every string handed in is escaped text as analyzers write it
 * (sensor/text.h: bytes outside 0x20..0x7e as \xNN, '\' as \\, and in DNS
 * names '.' inside a label as \.). The functions below undo that escaping,
 * percent-decoding (WHATWG URL host parsing does) and the fullwidth forms
 * that UTS 46 maps to ASCII, and then read a host the way inet_aton(3),
 * curl and browsers do, so that every spelling of an address lands on the
 * same 4 or 16 bytes. They are pure: no globals, no allocation, bounded work.
 */
#ifndef EW_DETECT_METADATA_H
#define EW_DETECT_METADATA_H

#include <stddef.h>
#include <stdint.h>

#define META_IN_MAX 2048   /* longest escaped input looked at; longer is refused */
#define META_NAME_MAX 256  /* decoded host text + NUL (253 bytes is the DNS limit) */
#define META_ENC_MAX 8     /* addresses meta_name_addrs reports per name */

enum meta_host_kind {
	META_HOST_BAD = 0,  /* neither an address nor a well-formed name */
	META_HOST_ADDR = 1, /* *ipv and addr are set */
	META_HOST_NAME = 2, /* name holds a lowercase DNS name */
};

/*
 * Read one host as it appears in an HTTP Host field, the authority of an
 * absolute URI, a CONNECT target, a TLS SNI or a DNS qname:
 * [userinfo@]host[:port] with host one of
 *   - an IPv4 literal in any inet_aton/WHATWG form: 1 to 4 parts separated
 *     by '.', each decimal, octal (leading 0) or hex (0x), the last part
 *     filling the remaining bytes (2852039166, 0xA9FEA9FE, 0251.0376.0251.0376,
 *     169.254.43518, 0xa9.254.0251.254);
 *   - an IPv6 literal, bracketed (with an optional %zone) or bare
 *     ([::ffff:169.254.169.254], [fe80::a9fe:a9fe%25eth0]);
 *   - a DNS name (labels of [a-z0-9_-], at most 63 bytes, 253 in all).
 * One trailing dot is ignored. As WHATWG requires, a host whose last label is
 * numeric but which is not a valid IPv4 literal ("256.1.1.1", "1.2.3.4.5")
 * is BAD, not a name.
 *
 * s[0..n) need not be NUL-terminated; n > META_IN_MAX is BAD. On ADDR, *ipv
 * is 4 or 6 and addr holds the address (IPv4 in addr[0..3], the rest zero;
 * IPv4-mapped IPv6 is left as IPv6: see meta_is_endpoint). name (name_cap
 * bytes, may be NULL) receives the decoded host text, lowercase, without
 * userinfo, brackets, zone, port or trailing dot: the name for NAME, the
 * literal as written for ADDR; "" for BAD. Returns an enum meta_host_kind.
 */
int meta_parse_host(const char *s, size_t n, uint8_t *ipv, uint8_t addr[16], char *name,
		    size_t name_cap);

/* The port of [userinfo@]host[:port] (1..65535), or 0 when there is none or
 * it is not a number in range. */
uint16_t meta_host_port(const char *s, size_t n);

/*
 * Find the authority of an absolute-form request-target
 * ("scheme://authority/path?query"). Returns 1 with *auth and *auth_len set
 * (a span of uri), *path at the first byte after the authority (may equal
 * uri + n) and *def_port the scheme's default port (80 for http and ws, 443
 * for https and wss, 21 for ftp, else 0); returns 0 for any other form
 * (origin-form "/x", "*", authority-form). The authority ends at '/', '?',
 * '#' or the end. Pure.
 */
int meta_uri_authority(const char *uri, size_t n, const char **auth, size_t *auth_len,
		       const char **path, uint16_t *def_port);

/* One address found inside a name. */
struct meta_enc {
	uint8_t ipv;
	uint8_t addr[16];
};

/*
 * The addresses a name spells in the ways wildcard-DNS services
 * (nip.io, sslip.io, xip.io, traefik.me, rbndr.us, 1u.ms ...) decode them:
 *   - four decimal components 0..255 in a row, separated by '.' or '-'
 *     ("169.254.169.254.nip.io", "app-169-254-169-254.sslip.io",
 *     "make-169.254.169.254-rr.1u.ms");
 *   - a label, or the last '-'-separated piece of one, of exactly 8 hex
 *     digits ("a9fea9fe.nip.io", "magic-a9fea9fe.nip.io");
 *   - a label, or a '-'-separated suffix of one, that is an IPv6 address
 *     with '-' for ':' ("fe80--a9fe-a9fe.sslip.io", "--1.sslip.io").
 * name is lowercase text (as meta_parse_host writes it). Writes at most max
 * addresses into out and returns how many. Names under .arpa (reverse
 * look-ups) spell nothing. Pure.
 */
size_t meta_name_addrs(const char *name, size_t n, struct meta_enc *out, size_t max);

/* Is name (lowercase) under one of the wildcard-DNS services whose only job
 * is to answer with the address the name spells? 1 or 0. */
int meta_wildcard_zone(const char *name, size_t n);

struct rules;

/*
 * Is the address an instance-metadata endpoint of r->metadata_addrs? Also
 * tried: the IPv4 address inside an IPv4-mapped (::ffff:0:0/96),
 * IPv4-compatible (::/96) or NAT64 (64:ff9b::/96) IPv6 address. 1 or 0.
 */
int meta_is_endpoint(const struct rules *r, int ipv, const uint8_t *addr);

/* The IPv4 address embedded in an IPv6 one as above: 1 and out4 set, or 0. */
int meta_embedded_v4(const uint8_t addr[16], uint8_t out4[4]);

enum meta_name_match {
	META_NAME_NONE = 0,
	META_NAME_METADATA = 1,     /* a metadata name of the rules (or one
				     * expanded by a resolver search list) */
	META_NAME_ORCHESTRATOR = 2, /* kubernetes.default[.svc[.cluster.local]] */
};

/* Match the name (any case) against r->metadata_names: exact, a
 * multi-label entry followed by an internal search suffix
 * ("metadata.google.internal.default.svc.cluster.local"), or a one-label
 * entry followed by AWS's search domain, under "compute.internal" or
 * "ec2.internal" ("instance-data.us-west-2.compute.internal"; not
 * "metadata.example.internal" or "metadata.default.svc.cluster.local", which
 * may be anyone's service). Entries that start with "kubernetes." are
 * orchestrator names. */
int meta_name_match(const struct rules *r, const char *name, size_t n);

/*
 * Is name internal: without a dot, under a zone that never resolves on the
 * public internet (internal, local, localhost, localdomain, arpa, lan, home,
 * corp, intranet, private), or (trusted != 0) under r->trusted_domains?
 * Case-insensitive, one trailing dot ignored. 1 or 0.
 */
int meta_name_internal(const struct rules *r, const char *name, size_t n, int trusted);

/* The detector descriptor (analyzers/registry.c). */
struct module;
extern const struct module detect_metadata_module;

#endif
