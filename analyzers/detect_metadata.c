/*
 * detect_metadata.c - the metadata_probe detector: traffic aimed at a cloud
 * instance-metadata service or at the orchestrator, however it is spelled.
 *
 * Two ways in. on_packet sees the start of every plain connection (a TCP
 * SYN, a UDP datagram) and every ICMP message, and flags those whose
 * destination is one of the rules' metadata addresses, and TCP SYNs from the
 * sandbox to the kubelet ports (10250, 10255). on_obs judges what the
 * analyzers read: the DNS question, the HTTP Host field, the absolute URI
 * sent to a proxy or the CONNECT target, the TLS SNI, and the metadata
 * request headers (Metadata, Metadata-Flavor, X-aws-ec2-metadata-token and
 * its TTL), which mark a metadata request even when the host looks innocent
 * (SSRF through a proxy or a relay).
 *
 * Every host goes through meta_parse_host(), which reads it the way
 * inet_aton, curl and browsers do, so 2852039166, 0xA9FEA9FE,
 * 0251.0376.0251.0376, 169.254.43518, [::ffff:a9fe:a9fe] and
 * %31%36%39.254.169.254 are all 169.254.169.254. Where parsers disagree about
 * a URI (several '@', a backslash before '@') every reading is tried.
 *
 * Findings on one endpoint share a subject ("169.254.169.254:80", or the
 * name), so the core aggregates the SYN, the HTTP request and its retries into
 * one row per source, whose severity rises to critical when a request asks for
 * credentials. The outcome comes from the flow (a SYN that got a RST is
 * blocked, an answered one leaked). The state is a small ring of flow ids
 * already reported by on_packet, so UDP datagrams and SYN retransmissions of
 * one flow count once, and a cache of quiet names.
 *
 * Quiet names: every DNS question and SNI is judged, and nearly all of them
 * are ordinary names asked again and again. Whether a host spelling is an
 * endpoint, a metadata name or a name that spells an endpoint depends only on
 * its text and the rules (which do not change under a state; a reload makes
 * a new one), except for orchestrator names, which also depend on who asks.
 * So a spelling judged HIT_NONE for a reason that is not about the asker is
 * remembered in a direct-mapped cache (META_QUIET_SLOTS spellings of at most
 * META_QUIET_NAME bytes), and the next DNS question or SNI with exactly that
 * text is not mine without parsing it again.
 */
#include "detect_metadata.h"

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
#include "module.h"

#define META_SEEN_MAX 64      /* flow ids remembered by on_packet */
#define META_SUBJECT_MAX 300
#define META_DETAIL_MAX 256
#define META_EVIDENCE_MAX 256
#define META_PATH_MAX 512     /* normalised request path looked at */
#define META_RAW_SHOWN 64     /* bytes of a raw spelling quoted in a detail */
#define META_QUIET_SLOTS 4096 /* quiet-name cache entries (power of two) */
#define META_QUIET_NAME 102   /* longest spelling the cache keeps */

static const char CLASS[] = "metadata_probe";

/* ---- character helpers (locale-free) --------------------------------------- */

static int lc(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int name_char(int c)
{
	return (c >= 'a' && c <= 'z') || is_digit(c) || c == '-' || c == '_';
}

/*
 * Undo text_escape: \xNN is the byte, \\ is '\'. Any other escape (DNS "\."
 * inside a label) makes the host unusable. Returns the length, or -1.
 */
static long unescape(const char *s, size_t n, uint8_t *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int b = (unsigned char)s[i];
		if (b == '\\') {
			if (i + 1 < n && s[i + 1] == '\\') {
				i++;
			} else if (i + 3 < n && s[i + 1] == 'x' && text_hexval(s[i + 2]) >= 0 &&
				   text_hexval(s[i + 3]) >= 0) {
				b = text_hexval(s[i + 2]) * 16 + text_hexval(s[i + 3]);
				i += 3;
			} else {
				return -1;
			}
		}
		if (o >= cap)
			return -1;
		out[o++] = (uint8_t)b;
	}
	return (long)o;
}

/*
 * The ASCII that UTS 46 (as WHATWG's URL parser, Node and browsers apply it)
 * makes of code point cp, into out (at most 3 bytes): its length, 0 for a
 * code point it deletes, -1 for one it does not map to ASCII. Only what can
 * spell a host name: fullwidth forms (U+FF01..FF5E), the ideographic full
 * stops, circled and parenthesised-free compatibility digits and letters
 * (①..⑳, ⓪, Ⓐ..ⓩ, ⒈..⒛ "1."), super- and subscript digits, the
 * mathematical alphanumerics (𝟏, 𝐦), and the characters deleted outright
 * (soft hyphen, zero-width joiners and spaces, word joiner, variation
 * selectors, byte-order mark).
 */
static int fold_cp(unsigned cp, char out[3])
{
	static const unsigned ignored[][2] = {
		{0x00ad, 0x00ad}, {0x034f, 0x034f}, {0x180b, 0x180d}, {0x200b, 0x200d},
		{0x2060, 0x2060}, {0xfe00, 0xfe0f}, {0xfeff, 0xfeff},
	};
	unsigned v;

	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (cp >= ignored[i][0] && cp <= ignored[i][1])
			return 0;
	if (cp >= 0xff01 && cp <= 0xff5e) {
		out[0] = (char)(cp - 0xff00 + 0x20);
		return 1;
	}
	if (cp == 0x3002 || cp == 0xff61) {
		out[0] = '.';
		return 1;
	}
	if (cp == 0x00b9 || cp == 0x00b2 || cp == 0x00b3) {
		out[0] = cp == 0x00b9 ? '1' : cp == 0x00b2 ? '2' : '3';
		return 1;
	}
	if (cp == 0x2070 || (cp >= 0x2074 && cp <= 0x2079)) { /* ¹²³ are above */
		out[0] = (char)('0' + (cp - 0x2070));
		return 1;
	}
	if (cp >= 0x2080 && cp <= 0x2089) {
		out[0] = (char)('0' + (cp - 0x2080));
		return 1;
	}
	if (cp == 0x24ea) {
		out[0] = '0';
		return 1;
	}
	if ((cp >= 0x2460 && cp <= 0x2473) || (cp >= 0x2488 && cp <= 0x249b)) {
		int dot = cp >= 0x2488;
		int n = 0;
		v = cp - (dot ? 0x2488 : 0x2460) + 1; /* 1..20 */
		if (v >= 10)
			out[n++] = (char)('0' + v / 10);
		out[n++] = (char)('0' + v % 10);
		if (dot)
			out[n++] = '.';
		return n;
	}
	if (cp >= 0x24b6 && cp <= 0x24e9) {
		out[0] = (char)('a' + (cp - 0x24b6) % 26);
		return 1;
	}
	if (cp >= 0x1d400 && cp <= 0x1d6a3) {
		v = (cp - 0x1d400) % 52;
		out[0] = (char)('a' + v % 26);
		return 1;
	}
	if (cp >= 0x1d7ce && cp <= 0x1d7ff) {
		out[0] = (char)('0' + (cp - 0x1d7ce) % 10);
		return 1;
	}
	return -1;
}

/*
 * Percent-decode, fold what UTS 46 folds to ASCII (fold_cp), and lowercase,
 * into out (cap bytes, NUL-terminated). Any other byte outside 0x21..0x7e,
 * and UTF-8 that is not well formed, makes the host unusable. Returns the
 * length, or -1.
 */
static long fold_host(const uint8_t *s, size_t n, char *out, size_t cap)
{
	uint8_t dec[META_IN_MAX];
	size_t dn = 0, o = 0;

	for (size_t i = 0; i < n && dn < sizeof(dec); i++) {
		if (s[i] == '%' && i + 2 < n && text_hexval(s[i + 1]) >= 0 && text_hexval(s[i + 2]) >= 0) {
			dec[dn++] = (uint8_t)(text_hexval(s[i + 1]) * 16 + text_hexval(s[i + 2]));
			i += 2;
		} else {
			dec[dn++] = s[i];
		}
	}
	for (size_t i = 0; i < dn; i++) {
		int c = dec[i];
		char m[3];
		int ml = 1;

		if (c >= 0x80) {
			/* a UTF-8 sequence of 2 to 4 bytes (no overlong forms) */
			size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
							   : (c & 0xf8) == 0xf0 ? 4 : 0;
			unsigned cp = (unsigned)c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
			static const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000};

			if (len == 0 || i + len > dn)
				return -1;
			for (size_t k = 1; k < len; k++) {
				if ((dec[i + k] & 0xc0) != 0x80)
					return -1;
				cp = cp << 6 | (dec[i + k] & 0x3f);
			}
			if (cp < least[len] || cp > 0x10ffff)
				return -1;
			i += len - 1;
			ml = fold_cp(cp, m);
			if (ml < 0)
				return -1;
		} else {
			m[0] = (char)c;
		}
		for (int k = 0; k < ml; k++) {
			c = (unsigned char)m[k];
			if (c <= 0x20 || c >= 0x7f)
				return -1;
			if (o + 1 >= cap)
				return -1;
			out[o++] = (char)lc(c);
		}
	}
	if (cap)
		out[o] = '\0';
	return (long)o;
}

/* ---- IPv4 in the forms inet_aton and WHATWG accept -------------------------- */

static int v4_part(const char *p, size_t n, uint64_t *v)
{
	unsigned base = 10;
	size_t i = 0;
	uint64_t acc = 0;

	if (n == 0)
		return -1;
	if (n >= 2 && p[0] == '0' && p[1] == 'x') {
		base = 16;
		i = 2;
	} else if (n >= 2 && p[0] == '0') {
		base = 8;
		i = 1;
	}
	for (; i < n; i++) {
		int d = text_hexval(p[i]);
		if (d < 0 || (unsigned)d >= base)
			return -1;
		acc = acc * base + (unsigned)d;
		if (acc > 0xffffffffu)
			return -1;
	}
	*v = acc;
	return 0;
}

/* WHATWG "ends in a number": the last label is all digits or 0x + hex. */
static int ends_in_number(const char *s, size_t n)
{
	size_t i = n;

	while (i > 0 && s[i - 1] != '.')
		i--;
	if (i == n)
		return 0;
	if (n - i >= 2 && s[i] == '0' && s[i + 1] == 'x') {
		for (size_t j = i + 2; j < n; j++)
			if (text_hexval(s[j]) < 0)
				return 0;
		return 1;
	}
	for (size_t j = i; j < n; j++)
		if (!is_digit(s[j]))
			return 0;
	return 1;
}

static int parse_v4(const char *s, size_t n, uint8_t out[4])
{
	uint64_t part[4], v;
	size_t k = 0, start = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (k == 4 || v4_part(s + start, i - start, &part[k]) < 0)
			return -1;
		k++;
		start = i + 1;
	}
	for (size_t i = 0; i + 1 < k; i++)
		if (part[i] > 255)
			return -1;
	if (k < 4 && part[k - 1] >> (8 * (5 - k)))
		return -1;
	if (k == 4 && part[3] > 255)
		return -1;
	v = part[k - 1];
	for (size_t i = 0; i + 1 < k; i++)
		v |= part[i] << (8 * (3 - i));
	out[0] = (uint8_t)(v >> 24);
	out[1] = (uint8_t)(v >> 16);
	out[2] = (uint8_t)(v >> 8);
	out[3] = (uint8_t)v;
	return 0;
}

static int parse_v6(const char *s, size_t n, uint8_t out[16])
{
	char buf[INET6_ADDRSTRLEN + 1];
	size_t i;

	for (i = 0; i < n && s[i] != '%'; i++) /* a zone id is not part of the address */
		;
	if (i == 0 || i >= sizeof(buf))
		return -1;
	memcpy(buf, s, i);
	buf[i] = '\0';
	return inet_pton(AF_INET6, buf, out) == 1 ? 0 : -1;
}

static int valid_name(const char *s, size_t n)
{
	size_t label = 0;

	if (n == 0 || n > 253)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (label == 0)
				return 0;
			label = 0;
		} else if (!name_char((unsigned char)s[i]) || ++label > 63) {
			return 0;
		}
	}
	return label > 0;
}

static void put_name(char *name, size_t cap, const char *s, size_t n)
{
	if (!name || cap == 0)
		return;
	if (n >= cap)
		n = cap - 1;
	memcpy(name, s, n);
	name[n] = '\0';
}

/*
 * A plain host (the usual case: letters, digits, '-', '_' and '.' only, at
 * most META_NAME_MAX bytes): nothing is escaped, percent-encoded or folded
 * and there is no userinfo, bracket or port, so all the general path would do
 * is lowercase it. Writes that into text (META_NAME_MAX + 1 bytes) and
 * returns 1; 0 for anything else (text is then scratch). Since every byte is
 * a name byte or a dot, *labels_ok says whether valid_name() would find the
 * labels fine (none empty, none over 63 bytes; a last empty label, i.e. a
 * trailing dot, aside), leaving only the length to check.
 */
static int plain_host(const char *s, size_t n, char *text, int *labels_ok)
{
	size_t label = 0;
	int ok = 1;

	if (n > META_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned c = (unsigned char)s[i], low = c | 0x20;
		if (low - 'a' < 26) {
			c = low;
		} else if (c == '.') {
			ok &= label != 0;
			label = 0;
			text[i] = '.';
			continue;
		} else if (!(c - '0' < 10 || c == '-' || c == '_')) {
			return 0;
		}
		text[i] = (char)c;
		ok &= ++label <= 63;
	}
	text[n] = '\0';
	*labels_ok = ok;
	return 1;
}

/* The end of meta_parse_host for a host without userinfo, brackets or port,
 * decoded into text[0..tn) (tn > 0, NUL-terminated, writable). labels_ok is
 * plain_host's, or -1: run valid_name(). */
static int name_or_v4(char *text, long tn, int labels_ok, uint8_t *ipv, uint8_t addr[16],
		      char *name, size_t name_cap)
{
	int valid;

	if (text[tn - 1] == '.')
		text[--tn] = '\0';
	if (tn == 0)
		return META_HOST_BAD;
	if (ends_in_number(text, (size_t)tn)) {
		memset(addr, 0, 16);
		if (parse_v4(text, (size_t)tn, addr) < 0)
			return META_HOST_BAD;
		*ipv = 4;
		put_name(name, name_cap, text, (size_t)tn);
		return META_HOST_ADDR;
	}
	if (labels_ok < 0)
		valid = valid_name(text, (size_t)tn);
	else /* the last label is not empty: text does not end in '.' here */
		valid = labels_ok && tn <= 253 && text[tn - 1] != '.';
	if (!valid)
		return META_HOST_BAD;
	put_name(name, name_cap, text, (size_t)tn);
	return META_HOST_NAME;
}

int meta_parse_host(const char *s, size_t n, uint8_t *ipv, uint8_t addr[16], char *name,
		    size_t name_cap)
{
	uint8_t raw[META_IN_MAX];
	char text[META_NAME_MAX + 1];
	long rn, tn;
	size_t hs = 0, he, colons = 0, colon = 0;
	int labels_ok;

	if (name && name_cap)
		name[0] = '\0';
	if (!s || n == 0 || n > META_IN_MAX)
		return META_HOST_BAD;
	if (plain_host(s, n, text, &labels_ok))
		return name_or_v4(text, (long)n, labels_ok, ipv, addr, name, name_cap);
	rn = unescape(s, n, raw, sizeof(raw));
	if (rn <= 0)
		return META_HOST_BAD;
	he = (size_t)rn;
	for (size_t i = 0; i < he; i++) /* userinfo ends at the last '@' */
		if (raw[i] == '@')
			hs = i + 1;
	if (hs < he && raw[hs] == '[') {
		size_t rb = hs + 1;
		while (rb < he && raw[rb] != ']')
			rb++;
		if (rb == he || rb - hs - 1 > sizeof(text) - 1)
			return META_HOST_BAD;
		if (rb + 1 < he) { /* only :port may follow */
			if (raw[rb + 1] != ':')
				return META_HOST_BAD;
			for (size_t i = rb + 2; i < he; i++)
				if (!is_digit(raw[i]))
					return META_HOST_BAD;
		}
		tn = 0;
		for (size_t i = hs + 1; i < rb && raw[i] != '%'; i++) {
			if (raw[i] <= 0x20 || raw[i] >= 0x7f)
				return META_HOST_BAD;
			text[tn++] = (char)lc(raw[i]);
		}
		if (parse_v6(text, (size_t)tn, addr) < 0)
			return META_HOST_BAD;
		*ipv = 6;
		put_name(name, name_cap, text, (size_t)tn);
		return META_HOST_ADDR;
	}
	for (size_t i = hs; i < he; i++) {
		if (raw[i] == ':') {
			colons++;
			colon = i;
		}
	}
	if (colons >= 2) { /* a bare IPv6 literal: no port */
		tn = fold_host(raw + hs, he - hs, text, sizeof(text));
		if (tn <= 0 || parse_v6(text, (size_t)tn, addr) < 0)
			return META_HOST_BAD;
		for (long i = 0; i < tn; i++)
			if (text[i] == '%')
				tn = i;
		*ipv = 6;
		put_name(name, name_cap, text, (size_t)tn);
		return META_HOST_ADDR;
	}
	if (colons == 1) {
		for (size_t i = colon + 1; i < he; i++)
			if (!is_digit(raw[i]))
				return META_HOST_BAD;
		he = colon;
	}
	if (he <= hs)
		return META_HOST_BAD;
	tn = fold_host(raw + hs, he - hs, text, sizeof(text));
	if (tn <= 0)
		return META_HOST_BAD;
	return name_or_v4(text, tn, -1, ipv, addr, name, name_cap);
}

uint16_t meta_host_port(const char *s, size_t n)
{
	size_t hs = 0, p = 0, colons = 0;
	unsigned long v = 0;

	if (!s || n > META_IN_MAX)
		return 0;
	if (!memchr(s, ':', n))
		return 0; /* no port (the usual case) */
	for (size_t i = 0; i < n; i++)
		if (s[i] == '@')
			hs = i + 1;
	if (hs < n && s[hs] == '[') {
		const char *rb = memchr(s + hs, ']', n - hs);
		if (!rb || (size_t)(rb - s) + 1 >= n || rb[1] != ':')
			return 0;
		p = (size_t)(rb - s) + 2;
	} else {
		for (size_t i = hs; i < n; i++) {
			if (s[i] == ':') {
				colons++;
				p = i + 1;
			}
		}
		if (colons != 1)
			return 0;
	}
	if (p >= n || n - p > 5)
		return 0;
	for (size_t i = p; i < n; i++) {
		if (!is_digit(s[i]))
			return 0;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	return v >= 1 && v <= 65535 ? (uint16_t)v : 0;
}

int meta_uri_authority(const char *uri, size_t n, const char **auth, size_t *auth_len,
		       const char **path, uint16_t *def_port)
{
	static const struct {
		const char *scheme;
		uint16_t port;
	} schemes[] = {
		{"http", 80}, {"https", 443}, {"ws", 80}, {"wss", 443}, {"ftp", 21},
	};
	size_t i = 0, a;

	if (!uri || n == 0 || !((lc(uri[0]) >= 'a' && lc(uri[0]) <= 'z')))
		return 0;
	while (i < n && i < 32 &&
	       ((lc(uri[i]) >= 'a' && lc(uri[i]) <= 'z') || is_digit(uri[i]) || uri[i] == '+' ||
		uri[i] == '-' || uri[i] == '.'))
		i++;
	if (n - i < 3 || memcmp(uri + i, "://", 3) != 0)
		return 0;
	*def_port = 0;
	for (size_t k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++) {
		size_t sl = strlen(schemes[k].scheme);
		size_t j;
		if (sl != i)
			continue;
		for (j = 0; j < sl && lc(uri[j]) == schemes[k].scheme[j]; j++)
			;
		if (j == sl)
			*def_port = schemes[k].port;
	}
	a = i + 3;
	i = a;
	while (i < n && uri[i] != '/' && uri[i] != '?' && uri[i] != '#')
		i++;
	*auth = uri + a;
	*auth_len = i - a;
	*path = uri + i;
	return 1;
}

/* ---- addresses spelled inside names (nip.io and friends) ------------------- */

/* A zone of a fixed table, with its length (no strlen per name). */
struct zone {
	const char *s;
	size_t n;
};
#define ZONE(s) {s, sizeof(s) - 1}

/* Is name[0..n) the zone or under it? Compared from the end: the last bytes
 * tell almost every name apart. */
static int tail_is(const char *name, size_t n, const struct zone *z)
{
	const char *t;

	if (z->n > n)
		return 0;
	t = name + n - z->n;
	for (size_t i = z->n; i-- > 0;)
		if (lc(t[i]) != z->s[i])
			return 0;
	return z->n == n || t[-1] == '.';
}

static void enc_add(struct meta_enc *out, size_t max, size_t *k, int ipv, const uint8_t *addr)
{
	size_t len = ipv == 4 ? 4 : 16;

	for (size_t i = 0; i < *k; i++)
		if (out[i].ipv == ipv && memcmp(out[i].addr, addr, len) == 0)
			return;
	if (*k >= max)
		return;
	memset(&out[*k], 0, sizeof(out[*k]));
	out[*k].ipv = (uint8_t)ipv;
	memcpy(out[*k].addr, addr, len);
	(*k)++;
}

/* One '.'- or '-'-separated component of a name. */
struct comp {
	uint16_t off, len;
};

static int dec_octet(const char *s, size_t n, uint8_t *v)
{
	unsigned acc = 0;

	if (n == 0 || n > 3)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return 0;
		acc = acc * 10 + (unsigned)(s[i] - '0');
	}
	if (acc > 255)
		return 0;
	*v = (uint8_t)acc;
	return 1;
}

/* A label (or a '-' suffix of it) that is an IPv6 address with '-' for ':'.
 * dashes: how many '-' the label holds (fewer than two spell no address). */
static void label_v6(const char *s, size_t n, size_t dashes, struct meta_enc *out, size_t max,
		     size_t *k)
{
	char buf[64];
	uint8_t a[16];

	if (n >= sizeof(buf) || dashes < 2)
		return;
	for (size_t st = 0; st < n; st++) {
		if (st > 0 && s[st - 1] != '-')
			continue;
		for (size_t i = st; i < n; i++)
			buf[i - st] = s[i] == '-' ? ':' : s[i];
		buf[n - st] = '\0';
		if (inet_pton(AF_INET6, buf, a) == 1) {
			enc_add(out, max, k, 6, a);
			return;
		}
	}
}

size_t meta_name_addrs(const char *name, size_t n, struct meta_enc *out, size_t max)
{
	struct comp c[META_NAME_MAX / 2 + 1];
	size_t nc = 0, k = 0, start = 0, lstart = 0, dashes = 0;
	uint8_t a[16];

	static const struct zone arpa = ZONE("arpa");

	if (!name || n == 0 || n >= META_NAME_MAX || !out || max == 0 || tail_is(name, n, &arpa))
		return 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && name[i] != '.' && name[i] != '-')
			continue;
		if (i > start && nc < sizeof(c) / sizeof(c[0])) {
			c[nc].off = (uint16_t)start;
			c[nc].len = (uint16_t)(i - start);
			nc++;
		}
		start = i + 1;
		if (i == n || name[i] == '.') {
			label_v6(name + lstart, i - lstart, dashes, out, max, &k);
			lstart = i + 1;
			dashes = 0;
		} else {
			dashes++;
		}
	}
	/* four decimal components in a row */
	for (size_t i = 0; i + 4 <= nc; i++) {
		memset(a, 0, sizeof(a));
		size_t j;
		for (j = 0; j < 4; j++)
			if (!dec_octet(name + c[i + j].off, c[i + j].len, &a[j]))
				break;
		if (j == 4)
			enc_add(out, max, &k, 4, a);
	}
	/* a component of exactly eight hex digits */
	for (size_t i = 0; i < nc; i++) {
		const char *p = name + c[i].off;
		size_t j;
		if (c[i].len != 8)
			continue;
		for (j = 0; j < 8 && text_hexval(p[j]) >= 0; j++)
			;
		if (j < 8)
			continue;
		memset(a, 0, sizeof(a));
		for (j = 0; j < 4; j++)
			a[j] = (uint8_t)(text_hexval(p[2 * j]) * 16 + text_hexval(p[2 * j + 1]));
		enc_add(out, max, &k, 4, a);
	}
	return k;
}

int meta_wildcard_zone(const char *name, size_t n)
{
	static const struct zone zones[] = {
		ZONE("nip.io"), ZONE("sslip.io"), ZONE("xip.io"), ZONE("nip.direct"),
		ZONE("traefik.me"), ZONE("rbndr.us"), ZONE("1u.ms"), ZONE("backname.io"),
		ZONE("localtest.me"), ZONE("lvh.me"), ZONE("vcap.me"),
	};

	if (!name)
		return 0;
	if (n && name[n - 1] == '.')
		n--;
	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++)
		if (zones[i].n < n && tail_is(name, n, &zones[i]))
			return 1;
	return 0;
}

/* ---- what counts as an endpoint -------------------------------------------- */

int meta_embedded_v4(const uint8_t addr[16], uint8_t out4[4])
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
	static const uint8_t zero[12];

	static const uint8_t local48[6] = {0, 0x64, 0xff, 0x9b, 0, 1};

	if (memcmp(addr, mapped, 12) == 0 || memcmp(addr, nat64, 12) == 0 ||
	    (memcmp(addr, zero, 12) == 0 && addr[12] != 0)) {
		memcpy(out4, addr + 12, 4);
		return 1;
	}
	/* RFC 8215's local-use NAT64 prefix, 64:ff9b:1::/48, in RFC 6052's
	 * /48 layout: the address in bits 48-63 and 72-87, around the u octet */
	if (memcmp(addr, local48, 6) == 0 && addr[8] == 0) {
		out4[0] = addr[6];
		out4[1] = addr[7];
		out4[2] = addr[9];
		out4[3] = addr[10];
		return 1;
	}
	return 0;
}

int meta_is_endpoint(const struct rules *r, int ipv, const uint8_t *addr)
{
	uint8_t v4[16] = {0};

	if (!r || !addr)
		return 0;
	if (rules_net_match(&r->metadata_addrs, ipv, addr, 0))
		return 1;
	return ipv == 6 && meta_embedded_v4(addr, v4) &&
	       rules_net_match(&r->metadata_addrs, 4, v4, 0);
}

int meta_name_internal(const struct rules *r, const char *name, size_t n, int trusted)
{
	static const struct zone zones[] = {
		ZONE("internal"), ZONE("local"), ZONE("localhost"), ZONE("localdomain"),
		ZONE("arpa"), ZONE("lan"), ZONE("home"), ZONE("corp"), ZONE("intranet"),
		ZONE("private"),
	};

	if (!name)
		return 0;
	if (n && name[n - 1] == '.')
		n--;
	if (n == 0 || !memchr(name, '.', n))
		return 1;
	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++)
		if (tail_is(name, n, &zones[i]))
			return 1;
	return trusted && r && rules_domain_match(&r->trusted_domains, name, n);
}

int meta_name_match(const struct rules *r, const char *name, size_t n)
{
	static const struct zone aws_region = ZONE("compute.internal");
	static const struct zone aws_east = ZONE("ec2.internal");

	if (!r || !name)
		return META_NAME_NONE;
	if (n && name[n - 1] == '.')
		n--;
	for (size_t i = 0; i < r->metadata_names.n; i++) {
		const char *m = r->metadata_names.v[i];
		size_t ml;
		int hit = 0;
		/* the entry must be a prefix of the name: compare up to the
		 * entry's end, which also gives its length */
		for (ml = 0; ml < n && m[ml] && lc(name[ml]) == m[ml]; ml++)
			;
		if (m[ml])
			continue;
		if (ml == n)
			hit = 1;
		else if (name[ml] == '.' && memchr(m, '.', ml) &&
			 meta_name_internal(r, name + ml + 1, n - ml - 1, 0))
			hit = 1; /* expanded by a resolver search list */
		else if (name[ml] == '.' && !memchr(m, '.', ml) &&
			 (tail_is(name + ml + 1, n - ml - 1, &aws_region) ||
			  tail_is(name + ml + 1, n - ml - 1, &aws_east)))
			hit = 1; /* a bare name expanded by AWS's search domain,
				  * which the resolver tries first (ndots 1):
				  * "instance-data.us-west-2.compute.internal" */
		if (hit)
			return strncmp(m, "kubernetes.", 11) == 0 ? META_NAME_ORCHESTRATOR
								  : META_NAME_METADATA;
	}
	return META_NAME_NONE;
}

/* ---- request paths that hand out credentials -------------------------------- */

/*
 * Normalise the path of a request-target (escaped text, up to '?' or '#')
 * into out: text escapes and percent-encoding undone, '\' read as '/',
 * empty and "." segments dropped, ".." resolved, lowercase. Bounded by cap.
 */
static void norm_path(const char *s, size_t n, char *out, size_t cap)
{
	uint8_t raw[META_PATH_MAX];
	size_t rn = 0, o = 0, segs[META_PATH_MAX / 2], ns = 0;

	for (size_t i = 0; i < n && rn < sizeof(raw); i++) {
		int b = (unsigned char)s[i];
		if (b == '?' || b == '#')
			break;
		if (b == '\\' && i + 1 < n && s[i + 1] == '\\') {
			i++;
			b = '/';
		} else if (b == '\\' && i + 3 < n && s[i + 1] == 'x' && text_hexval(s[i + 2]) >= 0 &&
			   text_hexval(s[i + 3]) >= 0) {
			b = text_hexval(s[i + 2]) * 16 + text_hexval(s[i + 3]);
			i += 3;
		} else if (b == '%' && i + 2 < n && text_hexval(s[i + 1]) >= 0 && text_hexval(s[i + 2]) >= 0) {
			b = text_hexval(s[i + 1]) * 16 + text_hexval(s[i + 2]);
			i += 2;
		}
		raw[rn++] = (uint8_t)(b == '\\' ? '/' : lc(b));
	}
	out[0] = '\0';
	for (size_t i = 0; i < rn;) {
		size_t j = i;
		while (j < rn && raw[j] != '/')
			j++;
		size_t sl = j - i;
		if (sl == 0 || (sl == 1 && raw[i] == '.')) {
			/* nothing */
		} else if (sl == 2 && raw[i] == '.' && raw[i + 1] == '.') {
			if (ns)
				o = segs[--ns];
		} else if (o + 1 + sl < cap) {
			segs[ns++] = o;
			out[o++] = '/';
			memcpy(out + o, raw + i, sl);
			o += sl;
		}
		out[o] = '\0';
		i = j + 1;
	}
}

/* Does the request ask for credentials (or, for IMDSv2, the session token)? */
static int creds_path(const char *method, size_t mlen, const char *path)
{
	static const struct {
		const char *method; /* NULL: any */
		const char *prefix; /* lowercase; matched at a segment boundary */
	} paths[] = {
		{NULL, "/latest/meta-data/iam/security-credentials"},  /* AWS IMDS */
		{NULL, "/latest/meta-data/identity-credentials"},      /* AWS IMDS */
		{"PUT", "/latest/api/token"},                          /* AWS IMDSv2 session */
		{NULL, "/computemetadata/v1/instance/service-accounts"}, /* GCP */
		{NULL, "/computemetadata/v1beta1/instance/service-accounts"},
		{NULL, "/metadata/identity/oauth2/token"},             /* Azure IMDS */
		{NULL, "/v2/credentials"},                             /* AWS ECS task role */
		{NULL, "/v1/credentials"},                             /* AWS EKS Pod Identity */
		{NULL, "/latest/meta-data/ram/security-credentials"},  /* Alibaba Cloud */
		{NULL, "/opc/v2/identity"},                            /* Oracle Cloud */
		{NULL, "/opc/v1/identity"},
	};
	size_t pl = strlen(path);

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		size_t l = strlen(paths[i].prefix);
		if (paths[i].method &&
		    (mlen != strlen(paths[i].method) || memcmp(method, paths[i].method, mlen) != 0))
			continue;
		if (pl >= l && memcmp(path, paths[i].prefix, l) == 0 &&
		    (pl == l || path[l] == '/'))
			return 1;
	}
	return 0;
}

/* ---- the module ------------------------------------------------------------- */

/* A spelling judged HIT_NONE whatever the asker (see "Quiet names"). */
struct meta_quiet {
	uint64_t hash;               /* text_fnv64 of name */
	uint16_t len;                /* 0 = empty slot */
	char name[META_QUIET_NAME];
};

struct meta_state {
	const struct rules *rules;
	uint64_t seen[META_SEEN_MAX]; /* flow ids on_packet reported; 0 = empty */
	unsigned seen_next;
	struct meta_quiet quiet[META_QUIET_SLOTS];
	struct name_memo memo; /* meta_prefetch's hash, for judge_quiet */
};

/* What a host turned out to be. */
enum hit { HIT_NONE = 0, HIT_ENDPOINT, HIT_NAME, HIT_ORCH, HIT_ENCODED };

struct target {
	enum hit hit;
	uint8_t ipv, addr[16];       /* HIT_ENDPOINT, HIT_ENCODED: the endpoint */
	uint16_t port;               /* 0: unknown */
	int obfuscated;              /* the literal is not written canonically */
	char host[META_NAME_MAX];    /* decoded host text */
	const char *raw;             /* as seen (escaped) */
	size_t raw_len;
	const char *via;             /* "Host", "absolute URI", ... */
	int asker;                   /* HIT_NONE only because of who asked */
};

/* The pkt as the client sent it: alerts are keyed by the client's address. */
static const struct pkt *client_view(const struct pkt *p, struct pkt *tmp)
{
	if (!p || p->dir == 0)
		return p;
	*tmp = *p;
	memcpy(tmp->src, p->dst, 16);
	memcpy(tmp->dst, p->src, 16);
	tmp->sport = p->dport;
	tmp->dport = p->sport;
	tmp->dir = 0;
	return tmp;
}

static int from_sandbox(const struct rules *r, const struct pkt *p)
{
	return r->has_sandbox && p && rules_net_match(&r->sandbox, p->ipv, p->src, 0);
}

/* The endpoint in canonical form: an embedded IPv4 endpoint as IPv4. */
static void canon(const struct rules *r, uint8_t *ipv, uint8_t addr[16])
{
	uint8_t v4[16] = {0};

	if (*ipv == 6 && meta_embedded_v4(addr, v4) && rules_net_match(&r->metadata_addrs, 4, v4, 0)) {
		memset(addr, 0, 16);
		memcpy(addr, v4, 4);
		*ipv = 4;
	}
}

static size_t fmt_endpoint(char *dst, size_t cap, int ipv, const uint8_t *addr, uint16_t port)
{
	char a[INET6_ADDRSTRLEN];
	int w;

	text_addr(a, sizeof(a), ipv, addr);
	if (!port)
		w = snprintf(dst, cap, "%s", a);
	else if (ipv == 6)
		w = snprintf(dst, cap, "[%s]:%u", a, (unsigned)port);
	else
		w = snprintf(dst, cap, "%s:%u", a, (unsigned)port);
	return w < 0 ? 0 : ((size_t)w < cap ? (size_t)w : cap - 1);
}

/*
 * Judge one host spelling s[0..n) seen by the client of p. def_port is used
 * when the spelling carries no port. Fills t and returns t->hit.
 */
static enum hit judge_host(const struct meta_state *st, const struct pkt *p, const char *s,
			   size_t n, uint16_t def_port, const char *via, struct target *t)
{
	const struct rules *r = st->rules;
	int k;

	memset(t, 0, sizeof(*t));
	t->raw = s;
	t->raw_len = n;
	t->via = via;
	k = meta_parse_host(s, n, &t->ipv, t->addr, t->host, sizeof(t->host));
	t->port = meta_host_port(s, n);
	if (!t->port)
		t->port = def_port;
	if (k == META_HOST_ADDR) {
		char c[INET6_ADDRSTRLEN];
		uint8_t was = t->ipv;
		if (!meta_is_endpoint(r, t->ipv, t->addr))
			return HIT_NONE;
		text_addr(c, sizeof(c), t->ipv, t->addr);
		canon(r, &t->ipv, t->addr);
		t->obfuscated = strcmp(c, t->host) != 0 || t->ipv != was;
		return t->hit = HIT_ENDPOINT;
	}
	if (k != META_HOST_NAME)
		return HIT_NONE;
	size_t hl = strlen(t->host);
	switch (meta_name_match(r, t->host, hl)) {
	case META_NAME_METADATA:
		return t->hit = HIT_NAME;
	case META_NAME_ORCHESTRATOR:
		if (from_sandbox(r, p))
			return t->hit = HIT_ORCH;
		t->asker = 1;
		return HIT_NONE;
	default:
		break;
	}
	struct meta_enc enc[META_ENC_MAX];
	size_t ne = meta_name_addrs(t->host, hl, enc, META_ENC_MAX);
	for (size_t i = 0; i < ne; i++) {
		if (meta_is_endpoint(r, enc[i].ipv, enc[i].addr)) {
			t->ipv = enc[i].ipv;
			memcpy(t->addr, enc[i].addr, 16);
			canon(r, &t->ipv, t->addr);
			return t->hit = HIT_ENCODED;
		}
	}
	return HIT_NONE;
}

/*
 * judge_host for callers that do nothing more with a HIT_NONE (t is then
 * left unfilled when the answer comes from the quiet-name cache).
 */
static enum hit judge_quiet(struct meta_state *st, const struct pkt *p, const struct obs *o,
			    uint16_t def_port, const char *via, struct target *t)
{
	struct meta_quiet *q = NULL;
	const char *s = o->name;
	size_t n = o->name_len;
	uint64_t h = 0;

	if (n && n <= META_QUIET_NAME) {
		h = name_memo_take(&st->memo, o);
		q = &st->quiet[h & (META_QUIET_SLOTS - 1)];
		if (q->len == n && q->hash == h && memcmp(q->name, s, n) == 0)
			return HIT_NONE;
	}
	enum hit hit = judge_host(st, p, s, n, def_port, via, t);
	if (hit == HIT_NONE && !t->asker && q) {
		q->hash = h;
		q->len = (uint16_t)n;
		memcpy(q->name, s, n);
	}
	return hit;
}

/* The subject of a target: the endpoint with its port, or the name. */
static void target_subject(const struct target *t, char *dst, size_t cap)
{
	if (t->hit == HIT_ENDPOINT)
		fmt_endpoint(dst, cap, t->ipv, t->addr, t->port);
	else
		snprintf(dst, cap, "%s", t->host);
}

/* A short description of what the target is, for details. */
static void target_what(const struct target *t, char *dst, size_t cap)
{
	char a[INET6_ADDRSTRLEN];
	int rl = t->raw_len > META_RAW_SHOWN ? META_RAW_SHOWN : (int)t->raw_len;

	switch (t->hit) {
	case HIT_ENDPOINT:
		text_addr(a, sizeof(a), t->ipv, t->addr);
		if (t->obfuscated)
			snprintf(dst, cap, "metadata endpoint %s (written %.*s)", a, rl, t->raw);
		else
			snprintf(dst, cap, "metadata endpoint %s", a);
		break;
	case HIT_NAME:
		snprintf(dst, cap, "metadata name %.180s", t->host);
		break;
	case HIT_ORCH:
		snprintf(dst, cap, "orchestrator name %.180s", t->host);
		break;
	case HIT_ENCODED:
		text_addr(a, sizeof(a), t->ipv, t->addr);
		snprintf(dst, cap, "%.140s, a name that spells metadata endpoint %s", t->host, a);
		break;
	default:
		snprintf(dst, cap, "%.*s", rl, t->raw);
		break;
	}
}

static int meta_raise(struct emit *out, const struct pkt *p, int severity, int score,
		 const char *subject, const char *detail, const char *evidence)
{
	struct pkt tmp;
	struct alert a = {
		.class = CLASS,
		.severity = severity,
		.score = score,
		.pkt = client_view(p, &tmp),
		.subject = subject,
		.detail = detail,
		.evidence = evidence,
	};

	return out->alert(out, &a) < 0 ? -EIO : MOD_OK;
}

/* Has on_packet reported this flow already? Remembers it if not. */
static int seen_flow(struct meta_state *st, const struct pkt *p)
{
	uint64_t id = p->flow ? p->flow->id : 0;

	if (!id)
		return 0;
	for (unsigned i = 0; i < META_SEEN_MAX; i++)
		if (st->seen[i] == id)
			return 1;
	st->seen[st->seen_next] = id;
	st->seen_next = (st->seen_next + 1) % META_SEEN_MAX;
	return 0;
}

static const char *proto_word(const struct pkt *p)
{
	switch (p->proto) {
	case IPPROTO_TCP:
		return "TCP connection attempt";
	case IPPROTO_UDP:
		return "UDP datagram";
	case IPPROTO_ICMP:
		return "ICMP message";
	case IPPROTO_ICMPV6:
		return "ICMPv6 message";
	default:
		return "packet";
	}
}

static int meta_on_packet(void *state, const struct pkt *p, struct emit *out)
{
	struct meta_state *st = state;
	const struct rules *r = st->rules;
	char subject[META_SUBJECT_MAX], detail[META_DETAIL_MAX];
	int l4 = p->proto == IPPROTO_TCP || p->proto == IPPROTO_UDP;
	uint16_t port = l4 ? p->dport : 0;
	int found = 0, rc = MOD_OK;

	if (p->ipv != 4 && p->ipv != 6)
		return MOD_NOT_MINE;
	if (p->proto == IPPROTO_TCP && (p->tcp_flags & (TH_SYN | TH_ACK)) != TH_SYN)
		return MOD_NOT_MINE;
	if (meta_is_endpoint(r, p->ipv, p->dst)) {
		/* an allowed resolver that is also an endpoint (Azure's
		 * 168.63.129.16 serves DNS) is not probed by DNS to it */
		if (l4 && port == 53 && rules_net_match(&r->resolvers, p->ipv, p->dst, 53))
			return MOD_NOT_MINE;
		if (seen_flow(st, p))
			return MOD_OK;
		found = 1;
		fmt_endpoint(subject, sizeof(subject), p->ipv, p->dst, port);
		snprintf(detail, sizeof(detail), "%s to metadata endpoint %.120s", proto_word(p),
			 subject);
		rc = meta_raise(out, p, 4, 90, subject, detail, subject);
	} else if (p->proto == IPPROTO_TCP && (p->dport == 10250 || p->dport == 10255) &&
		   from_sandbox(r, p)) {
		if (seen_flow(st, p))
			return MOD_OK;
		found = 1;
		fmt_endpoint(subject, sizeof(subject), p->ipv, p->dst, port);
		snprintf(detail, sizeof(detail), "TCP connection attempt from the sandbox to kubelet port %u on %.120s",
			 (unsigned)p->dport, subject);
		rc = meta_raise(out, p, 4, 90, subject, detail, subject);
	}
	return found ? rc : MOD_NOT_MINE;
}

static int on_dns_query(struct meta_state *st, const struct obs *o, struct emit *out)
{
	struct target t;
	char subject[META_SUBJECT_MAX], what[META_DETAIL_MAX], detail[META_DETAIL_MAX];
	char ev[META_EVIDENCE_MAX];

	if (judge_quiet(st, o->pkt, o, 0, "DNS question", &t) == HIT_NONE)
		return MOD_NOT_MINE;
	if (t.hit == HIT_ENDPOINT)
		t.port = 0;
	target_subject(&t, subject, sizeof(subject));
	target_what(&t, what, sizeof(what));
	snprintf(detail, sizeof(detail), "DNS query (type %u) for %.200s%s", (unsigned)o->type, what,
		 t.hit == HIT_ORCH ? " from the sandbox" : "");
	snprintf(ev, sizeof(ev), "%.*s", (int)(o->name_len > 200 ? 200 : o->name_len), o->name);
	return meta_raise(out, o->pkt, 4, t.hit == HIT_ENDPOINT || t.hit == HIT_ENCODED ? 95 : 90,
		     subject, detail, ev);
}

static int on_tls(struct meta_state *st, const struct obs *o, struct emit *out)
{
	struct target t;
	struct pkt tmp;
	const struct pkt *c = client_view(o->pkt, &tmp);
	char subject[META_SUBJECT_MAX], what[META_DETAIL_MAX], detail[META_DETAIL_MAX];
	char ev[META_EVIDENCE_MAX];

	if (!o->name || !o->name_len)
		return MOD_NOT_MINE;
	if (judge_quiet(st, c, o, c ? c->dport : 0, "SNI", &t) == HIT_NONE)
		return MOD_NOT_MINE;
	target_subject(&t, subject, sizeof(subject));
	target_what(&t, what, sizeof(what));
	snprintf(detail, sizeof(detail), "TLS ClientHello with SNI for %.200s", what);
	snprintf(ev, sizeof(ev), "SNI %.*s", (int)(o->name_len > 200 ? 200 : o->name_len), o->name);
	return meta_raise(out, o->pkt, 4, t.obfuscated || t.hit == HIT_ENCODED ? 95 : 90, subject,
		     detail, ev);
}

/* The fields of an HTTP request detail record the detector reads. */
struct req_fields {
	const char *method;
	size_t method_len;
	int meta, flavor, token, ttl;
};

static void req_fields(const struct obs *o, struct req_fields *f)
{
	const char *s = o->info, *rec, *fld;
	size_t n = o->info_len, rl, fl;
	unsigned i = 0;

	memset(f, 0, sizeof(*f));
	f->method = "";
	if (!s || !rec_split(&s, &n, REC_RS, &rec, &rl))
		return;
	while (rec_split(&rec, &rl, REC_US, &fld, &fl)) {
		int one = fl == 1 && fld[0] == '1';
		switch (i++) {
		case 0:
			if (fl != 3 || memcmp(fld, "req", 3) != 0)
				return;
			break;
		case 1:
			f->method = fld;
			f->method_len = fl;
			break;
		case 9:
			f->meta = one;
			break;
		case 10:
			f->flavor = one;
			break;
		case 11:
			f->token = one;
			break;
		case 12:
			f->ttl |= fl > 0;
			break;
		case 16: /* sent, maybe empty (not in older records) */
			f->ttl |= one;
			break;
		default:
			break;
		}
	}
}

static int on_http(struct meta_state *st, const struct obs *o, struct emit *out)
{
	const struct rules *r = st->rules;
	struct req_fields f;
	struct pkt tmp;
	const struct pkt *c = client_view(o->pkt, &tmp);
	struct target cand[5], *hit = NULL, *shown;
	size_t nc = 0;
	const char *aux = o->aux ? o->aux : "", *path = aux, *auth;
	size_t aux_len = o->aux ? o->aux_len : 0, auth_len = 0;
	uint16_t def_port = 80;
	int connect;
	char subject[META_SUBJECT_MAX], what[META_DETAIL_MAX], detail[META_DETAIL_MAX];
	char hdrs[96] = "", npath[META_PATH_MAX], ev[META_EVIDENCE_MAX];
	const char *via;
	int sev, score, creds;

	req_fields(o, &f);
	connect = f.method_len == 7 && memcmp(f.method, "CONNECT", 7) == 0;

	/* the server the connection goes to */
	if (c && meta_is_endpoint(r, c->ipv, c->dst)) {
		struct target *t = &cand[nc++];
		memset(t, 0, sizeof(*t));
		t->hit = HIT_ENDPOINT;
		t->ipv = c->ipv;
		memcpy(t->addr, c->dst, 16);
		t->port = c->dport;
		t->via = "connection";
		fmt_endpoint(t->host, sizeof(t->host), c->ipv, c->dst, 0);
		t->raw = t->host;
		t->raw_len = strlen(t->host);
	}
	/* the request-target: CONNECT authority or absolute URI, every reading */
	if (connect) {
		auth = aux;
		auth_len = aux_len;
		path = aux + aux_len;
		def_port = 443;
	} else if (!meta_uri_authority(aux, aux_len, &auth, &auth_len, &path, &def_port)) {
		auth = NULL;
	}
	if (auth && auth_len) {
		const char *uvia = connect ? "CONNECT target" : "absolute URI";
		const char *at1 = memchr(auth, '@', auth_len), *bs = NULL;
		for (size_t i = 0; i + 1 < auth_len && !bs; i++)
			if (auth[i] == '\\' && auth[i + 1] == '\\')
				bs = auth + i;
		if (judge_host(st, c, auth, auth_len, def_port, uvia, &cand[nc]) != HIT_NONE)
			nc++;
		if (bs && judge_host(st, c, auth, (size_t)(bs - auth), def_port, uvia, &cand[nc]) !=
				  HIT_NONE) /* WHATWG: '\' ends the authority */
			nc++;
		if (at1) { /* a parser that stops at the first '@' */
			const char *h = at1 + 1, *e = auth + auth_len;
			const char *at2 = memchr(h, '@', (size_t)(e - h));
			if (at2 && judge_host(st, c, h, (size_t)(at2 - h), def_port, uvia, &cand[nc]) !=
					   HIT_NONE)
				nc++;
		}
	}
	if (o->name && o->name_len &&
	    judge_host(st, c, o->name, o->name_len, def_port == 443 && !connect ? 443 : 80, "Host",
		       &cand[nc]) != HIT_NONE)
		nc++;
	/* the subject from the first hit (the connection's endpoint keeps the
	 * row of the SYN); the detail and evidence from the first spelling */
	for (size_t i = 0; i < nc && !hit; i++)
		hit = &cand[i];
	shown = hit;
	for (size_t i = 0; i < nc; i++) {
		if (strcmp(cand[i].via, "connection") != 0) {
			shown = &cand[i];
			break;
		}
	}
	if (f.meta || f.flavor || f.token || f.ttl)
		snprintf(hdrs, sizeof(hdrs), "%s%s%s%s", f.meta ? " Metadata" : "",
			 f.flavor ? " Metadata-Flavor" : "", f.token ? " X-aws-ec2-metadata-token" : "",
			 f.ttl ? " X-aws-ec2-metadata-token-ttl-seconds" : "");
	if (!hit && !hdrs[0])
		return MOD_NOT_MINE;

	norm_path(path, (size_t)(aux + aux_len - path), npath, sizeof(npath));
	creds = !connect && creds_path(f.method, f.method_len, npath);
	if (hit) {
		target_subject(hit, subject, sizeof(subject));
		target_what(shown, what, sizeof(what));
	} else {
		/* only the headers: name the host the request was meant for */
		struct target t;
		memset(&t, 0, sizeof(t));
		if (o->name && o->name_len)
			judge_host(st, c, o->name, o->name_len, 0, "Host", &t);
		if (o->name && o->name_len && t.host[0]) {
			snprintf(subject, sizeof(subject), "%s", t.host);
		} else if (c) {
			fmt_endpoint(subject, sizeof(subject), c->ipv, c->dst, c->dport);
		} else {
			snprintf(subject, sizeof(subject), "unknown");
		}
		snprintf(what, sizeof(what), "%.200s", subject);
	}
	via = shown && strcmp(shown->via, "connection") != 0 && strcmp(shown->via, "Host") != 0
		      ? shown->via
		      : NULL;
	snprintf(detail, sizeof(detail), "HTTP %.*s %sto %.110s%s%s%s%.50s",
		 (int)(f.method_len > 16 ? 16 : f.method_len), f.method,
		 creds ? "for credentials " : "", what, via ? " via " : "", via ? via : "",
		 hdrs[0] ? " with metadata header" : "", hdrs);
	if (shown && shown == hit && strcmp(shown->via, "connection") == 0 && o->name_len)
		snprintf(ev, sizeof(ev), "Host %.200s", o->name); /* what the client wrote */
	else if (shown)
		snprintf(ev, sizeof(ev), "%s %.*s", shown->via,
			 (int)(shown->raw_len > 200 ? 200 : shown->raw_len), shown->raw);
	else
		snprintf(ev, sizeof(ev), "header%s", hdrs);
	sev = creds ? 5 : 4;
	score = creds ? 100
		      : (hdrs[0] || (shown && (shown->obfuscated || shown->hit == HIT_ENCODED)) ? 95 : 90);
	return meta_raise(out, o->pkt, sev, score, subject, detail, ev);
}

/* The quiet-name cache slot judge_quiet will read for a DNS question. */
static void meta_prefetch(void *state, const struct obs *o)
{
	struct meta_state *st = state;

	if (o->kind == OBS_DNS_QUERY && o->name && o->name_len && o->name_len <= META_QUIET_NAME)
		__builtin_prefetch(&st->quiet[name_memo_put(&st->memo, o) & (META_QUIET_SLOTS - 1)]);
}

static int meta_on_obs(void *state, const struct obs *o, struct emit *out)
{
	struct meta_state *st = state;

	switch (o->kind) {
	case OBS_DNS_QUERY:
		return on_dns_query(st, o, out);
	case OBS_HTTP_REQUEST:
		return on_http(st, o, out);
	case OBS_TLS_CLIENT_HELLO:
		return on_tls(st, o, out);
	default:
		return MOD_NOT_MINE;
	}
}

static int meta_init(const struct module_env *env, void **state)
{
	struct meta_state *st;

	if (!env || !env->rules)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->rules = env->rules;
	*state = st;
	return 0;
}

static void meta_fini(void *state)
{
	free(state);
}

const struct module detect_metadata_module = {
	.name = "detect_metadata",
	.sel = SEL_CONN_START | SEL_ICMP,
	.obs_mask = (1u << OBS_DNS_QUERY) | (1u << OBS_HTTP_REQUEST) | (1u << OBS_TLS_CLIENT_HELLO),
	.init = meta_init,
	.fini = meta_fini,
	.on_packet = meta_on_packet,
	.on_obs = meta_on_obs,
	.prefetch = meta_prefetch,
};
