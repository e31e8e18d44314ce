/*
 * dns.c - the DNS analyzer: DNS over UDP and TCP on ports 53, 5353 (mDNS)
 * and 5355 (LLMNR); over TCP, length-prefixed messages from the flow table's
 * stream. One observation per message. A PROXY protocol header before the
 * messages (proxyproto.h) is skipped, as the DNS servers that take one
 * read it: at the TCP stream's start, and a v2 header in a UDP datagram.
 *
 * A message goes through up to two parsers. First a cursor walk (walk())
 * reads the header, the questions and every RR, enforcing the hostile-
 * protocol rules of dns.h: pointers strictly backwards and never into the
 * 12-byte header, names <= 255 bytes,
 * labels <= 63, bounded jumps, rdata of decoded types exactly filled, one
 * OPT (owned by the root, its options filling it), TSIG last, no bytes
 * after the last RR. It says whether the message
 * is sound, remembers the first question, the OPT record and where the
 * first RRs' types and rdata lie (dns_out.seen), and renders the records
 * it reads into dns_out.walk_buf, to follow the header record if the walk
 * is the path taken.
 * A sound message with other resource records than those the walk keeps
 * (below) is then parsed by ldns
 * (ldns_wire2pkt): owner names and the rdata of the types we decode are
 * rendered from the uncompressed wire bytes ldns keeps in its rdfs; the
 * rdata of other types comes from the wire beside it, because ldns splits
 * rdata by its own descriptors. Bytes beyond those descriptors are not
 * skipped by ldns but read as the start of the next RR, which shifts the
 * rest of its lists: when an RR's rdfs do not add up to its rdlength, or a
 * type differs from the wire's, the message is rendered by the walk
 * instead (ldns_rr_record), and is malformed when the RR's fields do not
 * fit its rdata (rdata_misfit), as it is when that shift makes ldns fail
 * (ldns_misfit): one verdict wherever the RR lies.
 * A sound message whose records are all ones the walk has read whole and
 * checked, that is questions, A, AAAA and CNAME records and the OPT record
 * (most queries, and most answers), has nothing left for ldns to decode:
 * the walk renders it, which costs a fraction of ldns's packet, lists and
 * per-name allocations. ldns decodes every message with any other record:
 * NS, MX, TXT, SOA, SRV, HTTPS/SVCB, CAA, NULL, PTR, DNSSEC, unknown types.
 * A message that the walk or ldns rejects gets the walk's records, up to
 * the damage, and is flagged malformed. (The walk renders a second time,
 * after the header, only when its records did not all fit.)
 *
 * Both paths share the renderers (rdata_text, tb_name), so a sound message
 * looks the same whichever way it went; the unit test checks exactly that.
 * Nothing here prints, judges or keeps a global: all working memory is the
 * caller's struct dns_out, which the module keeps in its state.
 */
#include "dns.h"
#include "http.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "../sensor/cursor.h"
#include "../sensor/flow.h"
#include "../sensor/record.h"
#include "../sensor/text.h"
#include "module.h"
#include "proxyproto.h"

enum { SEC_QD = 0, SEC_AN, SEC_NS, SEC_AR, SEC_END };

static const char *const sec_name[] = {"question", "answer", "authority", "additional",
				       "message"};
static const char *const sec_tag[] = {"Q", "AN", "NS", "AR"};

/* ---- bounded text output -------------------------------------------------- */

/*
 * A text buffer that is cut at whole pieces (never mid-escape). p == NULL
 * makes a dry run: the renderers parse but write nothing.
 */
struct tbuf {
	char *p;
	size_t cap; /* including the NUL */
	size_t len;
	int cut;    /* a piece did not fit (or a name was ill-formed) */
};

static void tb_raw(struct tbuf *t, const char *s, size_t n)
{
	if (!t->p || t->cut)
		return;
	if (n > t->cap - 1 - t->len) {
		t->cut = 1;
		return;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

static void tb_ch(struct tbuf *t, char c)
{
	tb_raw(t, &c, 1);
}

static void tb_u32(struct tbuf *t, uint32_t v)
{
	char tmp[10];
	size_t i = sizeof(tmp);

	if (!t->p)
		return;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	tb_raw(t, tmp + i, sizeof(tmp) - i);
}

static const char hexdig[] = "0123456789abcdef";

static void tb_hex(struct tbuf *t, const uint8_t *s, size_t n)
{
	if (!t->p)
		return;
	for (size_t i = 0; i < n && !t->cut; i++) {
		char h[2] = {hexdig[s[i] >> 4], hexdig[s[i] & 15]};
		tb_raw(t, h, 2);
	}
}

enum esc_bits {
	ESC_DOT = 1u << 0,  /* '.' as "\." (inside a name label) */
	ESC_LIST = 1u << 1, /* ',' and ' ' as \xNN (items of a list) */
	ESC_SPACE = 1u << 2, /* ' ' as \x20 (a name inside rdata, whose fields
			      * are separated by spaces) */
};

/* 0: copied as is; 1: backslash and the byte; 2: \xNN */
static int esc_kind(uint8_t b, unsigned how)
{
	if (b < 0x20 || b > 0x7e || ((how & ESC_LIST) && (b == ',' || b == ' ')) ||
	    ((how & ESC_SPACE) && b == ' '))
		return 2;
	if (b == '\\' || (b == '.' && (how & ESC_DOT)))
		return 1;
	return 0;
}

static void tb_esc(struct tbuf *t, const uint8_t *s, size_t n, unsigned how)
{
	size_t i = 0;

	if (!t->p)
		return;
	while (i < n && !t->cut) {
		size_t run = i;
		while (run < n && esc_kind(s[run], how) == 0)
			run++;
		if (run > i) {
			/* a plain run may be cut anywhere: take what fits */
			size_t room = t->cap - 1 - t->len;
			size_t k = run - i < room ? run - i : room;
			tb_raw(t, (const char *)s + i, k);
			if (k < run - i)
				t->cut = 1;
			i = run;
			continue;
		}
		uint8_t b = s[i++];
		if (esc_kind(b, how) == 2)
			tb_raw(t, (const char[]){'\\', 'x', hexdig[b >> 4], hexdig[b & 15]}, 4);
		else
			tb_raw(t, (const char[]){'\\', (char)b}, 2);
	}
}

/* Does a label need no escape at all (esc_kind 0 for each byte, ESC_DOT)?
 * One table look-up per byte: names are most of the text rendered. */
static int label_plain(const uint8_t *s, size_t n)
{
	/* 1 for 0x20..0x7e except '.' (0x2e) and '\\' (0x5c) */
	static const uint8_t plain[256] = {
		[0x20] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
	};

	for (size_t i = 0; i < n; i++)
		if (!plain[s[i]])
			return 0;
	return 1;
}

/* An uncompressed wire name in presentation form, labels escaped with how
 * (ESC_DOT, and ESC_SPACE in rdata); ill-formed wire sets cut. */
static void tb_name_esc(struct tbuf *t, const uint8_t *w, size_t n, unsigned how)
{
	size_t i = 0;

	while (i < n) {
		uint8_t l = w[i++];
		if (l == 0) {
			if (i == 1)
				tb_ch(t, '.');
			return;
		}
		if (l > 63 || l > n - i)
			break;
		if (i > 1)
			tb_ch(t, '.');
		if (t->p && !t->cut && l <= t->cap - 1 - t->len && label_plain(w + i, l) &&
		    (!(how & ESC_SPACE) || !memchr(w + i, ' ', l))) {
			/* what tb_esc does with a label that needs no escape */
			memcpy(t->p + t->len, w + i, l);
			t->len += l;
			t->p[t->len] = '\0';
		} else {
			tb_esc(t, w + i, l, how);
		}
		i += l;
	}
	t->cut = 1;
}

/* A name as a field of its own (qname, owner, Host): a space stays a space. */
static void tb_name(struct tbuf *t, const uint8_t *w, size_t n)
{
	tb_name_esc(t, w, n, ESC_DOT);
}

/* An address as inet_ntop writes it (text_addr, without inet_ntop's
 * sprintf). */
static void tb_addr(struct tbuf *t, int ipv, const uint8_t *a)
{
	char tmp[48];

	if (!t->p)
		return;
	tb_raw(t, tmp, text_addr(tmp, sizeof(tmp), ipv, a));
}

size_t dns_name_text(char *dst, size_t cap, const uint8_t *w, size_t n, int *cut)
{
	struct tbuf t = {dst, cap, 0, 0};

	if (cap == 0) {
		if (cut)
			*cut = 1;
		return 0;
	}
	dst[0] = '\0';
	tb_name(&t, w, n);
	if (cut)
		*cut = t.cut;
	return t.len;
}

/* ---- names on the wire ---------------------------------------------------- */

enum { NM_OK = 0, NM_SHORT, NM_BAD };

/*
 * Read the name at *c, which lies inside msg[0..mlen) (the base that
 * compression pointers count from), into d. *c advances past the name's
 * in-place bytes. A pointer must point strictly before the start of the
 * piece that contains it (the name's start, then each pointer's target), so
 * every jump goes backwards and loops are impossible; at most DNS_MAX_JUMPS
 * jumps, labels <= 63, names <= 255 wire bytes. Returns NM_OK; NM_SHORT when
 * the bytes ran out; NM_BAD when a rule was broken. On failure *why is set
 * and *c fails.
 */
static int name_read(const uint8_t *msg, size_t mlen, struct cur *c, struct dns_wname *d,
		     const char **why)
{
	struct cur r = *c;
	size_t piece = (size_t)(c->p - msg);
	int jumps = 0, ret = NM_OK;

	d->len = 0;
	for (;;) {
		uint8_t b = cur_u8(&r);
		if (r.err) {
			*why = "name runs past the end";
			ret = NM_SHORT;
			goto out;
		}
		if ((b & 0xc0) == 0xc0) {
			size_t target = (size_t)(b & 0x3f) << 8 | cur_u8(&r);
			if (r.err) {
				*why = "name runs past the end";
				ret = NM_SHORT;
				goto out;
			}
			if (target >= piece) {
				*why = "compression pointer does not point backwards";
				ret = NM_BAD;
				goto out;
			}
			if (target < 12) { /* (ldns refuses offset 0 too) */
				*why = "compression pointer into the header";
				ret = NM_BAD;
				goto out;
			}
			if (++jumps > DNS_MAX_JUMPS) {
				*why = "too many compression pointers";
				ret = NM_BAD;
				goto out;
			}
			if (jumps == 1)
				c->p = r.p;
			piece = target;
			r = cur_init(msg + target, mlen - target);
			continue;
		}
		if (b & 0xc0) {
			/* 01 is RFC 6891's extended label type (no longer in
			 * use), which a label length over 63 also gives; 10 is
			 * reserved */
			*why = (b & 0xc0) == 0x40
				       ? "label type 01 (extended, or a label over 63 bytes)"
				       : "label type 10 (reserved)";
			ret = NM_BAD;
			goto out;
		}
		if (d->len + 1 + b > 255) {
			*why = "name longer than 255 bytes";
			ret = NM_BAD;
			goto out;
		}
		d->w[d->len++] = b;
		if (b == 0)
			break;
		cur_bytes(&r, d->w + d->len, b);
		if (r.err) {
			*why = "name runs past the end";
			ret = NM_SHORT;
			goto out;
		}
		d->len += b;
	}
	if (jumps == 0)
		c->p = r.p;
out:
	if (ret != NM_OK)
		cur_fail(c);
	return ret;
}

/*
 * The first question's name read as the resolvers that follow compression
 * pointers loosely read it, for when name_read refused it. dnsmasq
 * (extract_name) follows a pointer to any offset of the message: forward,
 * to itself (until its 255 jumps run out), into the 12-byte header (whose
 * id, flags and counts then spell labels: a count's high byte, 0, is the
 * root); and it takes names of up to 1,025 wire bytes. In the review20 lab
 * (pcaps/review20/dns/FINDINGS.md) dnsmasq 2.90 resolved and forwarded
 * such names, metadata.google.internal among them, while the sensor
 * reported no name and the detectors judged nothing. So the question's
 * name is the one the resolver acts on, and the message stays malformed
 * for name_read's reason. A name over 255 bytes is given by its last
 * labels that fit 255 (the registered domain and what is nearest it, what
 * the detectors judge); the reason, "name longer than 255 bytes", says it
 * was longer. Bounds: at most DNS_LOOSE_JUMPS pointers (dnsmasq's; a loop
 * stops there), labels <= 63 (types 01 and 10 refused, as every resolver
 * refuses them), names <= DNS_LOOSE_NAME_MAX wire bytes, read into *big
 * (the caller's). *c advances past the name's in-place bytes. NM_OK or
 * NM_BAD (*c failed); *d is the name.
 */
static int name_read_loose(const uint8_t *msg, size_t mlen, struct cur *c, struct dns_wname *d,
			   uint8_t big[DNS_LOOSE_NAME_MAX])
{
	struct cur r = *c;
	size_t n = 0;
	int jumps = 0;

	for (;;) {
		uint8_t b = cur_u8(&r);
		if (r.err)
			goto bad;
		if ((b & 0xc0) == 0xc0) {
			size_t target = (size_t)(b & 0x3f) << 8 | cur_u8(&r);
			if (r.err || target >= mlen || ++jumps > DNS_LOOSE_JUMPS)
				goto bad;
			if (jumps == 1)
				c->p = r.p;
			r = cur_init(msg + target, mlen - target);
			continue;
		}
		if ((b & 0xc0) || n + 1 + b > DNS_LOOSE_NAME_MAX)
			goto bad;
		big[n++] = b;
		if (b == 0)
			break;
		cur_bytes(&r, big + n, b);
		if (r.err)
			goto bad;
		n += b;
	}
	if (jumps == 0)
		c->p = r.p;
	/* the last labels that fit 255 bytes */
	size_t from = 0;
	while (n - from > 255)
		from += 1 + (size_t)big[from];
	memcpy(d->w, big + from, n - from);
	d->len = n - from;
	return NM_OK;
bad:
	cur_fail(c);
	return NM_BAD;
}

/* ---- rdata ---------------------------------------------------------------- */

/*
 * Where rdata_text left the last name it rendered, for dns_out.prev: the
 * name's wire form goes to *nm and its text is t[from..to). state stays 0
 * when no name was read (*nm untouched), is 1 when the last name read was
 * rendered, -1 when *nm was overwritten by a name that failed.
 */
struct name_keep {
	struct dns_wname *nm;
	size_t from, to;
	int state;
};

/* A name field of an rdata: read it and render it, a space in a label as
 * \x20 (the fields of rdata text are separated by spaces). Non-zero on failure.
 * keep may be NULL. */
static int rd_name(const uint8_t *msg, size_t mlen, struct cur *rd, struct tbuf *t,
		   const char **why, struct name_keep *keep)
{
	struct dns_wname local;
	struct dns_wname *d = keep ? keep->nm : &local;

	if (keep)
		keep->state = -1;
	if (name_read(msg, mlen, rd, d, why) != NM_OK)
		return 1;
	size_t from = t->len;
	tb_name_esc(t, d->w, d->len, ESC_DOT | ESC_SPACE);
	if (keep) {
		keep->from = from;
		keep->to = t->len;
		/* its text serves as an owner's only without a space, which an
		 * owner keeps (a length byte of 32 just loses the reuse) */
		keep->state = memchr(d->w, ' ', d->len) ? -1 : 1;
	}
	return 0;
}

/* RFC 3597: \# len hex */
static void generic_text(struct tbuf *t, struct cur rd)
{
	size_t n = cur_left(&rd);
	const uint8_t *s = cur_ptr(&rd, n);

	tb_raw(t, "\\# ", 3);
	tb_u32(t, (uint32_t)n);
	if (n && s) {
		tb_ch(t, ' ');
		tb_hex(t, s, n);
	}
}

static const char *const svc_keys[] = {"mandatory", "alpn", "no-default-alpn", "port",
				       "ipv4hint", "ech", "ipv6hint", "dohpath"};

static void svc_key(struct tbuf *t, uint16_t key)
{
	if (key < sizeof(svc_keys) / sizeof(svc_keys[0])) {
		tb_raw(t, svc_keys[key], strlen(svc_keys[key]));
	} else {
		tb_raw(t, "key", 3);
		tb_u32(t, key);
	}
}

/* SVCB/HTTPS (RFC 9460): "priority target" then " key=value" per param.
 * Keys out of order or repeated, and a mandatory list out of order or
 * naming mandatory itself, make the RR malformed (RFC 9460 2.2 and 8). */
static const char *svcb_text(const uint8_t *msg, size_t mlen, struct cur rd, struct tbuf *t,
			     struct name_keep *keep)
{
	const char *why = NULL;
	long prev = -1;

	tb_u32(t, cur_be16(&rd));
	tb_ch(t, ' ');
	if (rd_name(msg, mlen, &rd, t, &why, keep))
		return why;
	while (cur_left(&rd)) {
		uint16_t key = cur_be16(&rd);
		uint16_t vlen = cur_be16(&rd);
		struct cur v = cur_take(&rd, vlen);
		uint8_t a[16];

		if (rd.err)
			return "SvcParam runs past the rdata";
		if (key == prev)
			return "SvcParamKey repeated";
		if (key < prev)
			return "SvcParamKeys out of order";
		prev = key;
		tb_ch(t, ' ');
		svc_key(t, key);
		if (vlen)
			tb_ch(t, '=');
		switch (key) {
		case 0: /* mandatory: a list of keys */
			if (vlen == 0 || vlen % 2)
				return "bad mandatory SvcParam";
			for (long i = 0, last = 0; cur_left(&v); i++) {
				uint16_t k = cur_be16(&v);
				if (k == 0)
					return "mandatory SvcParam lists mandatory";
				if (k == last)
					return "mandatory SvcParam repeats a key";
				if (k < last)
					return "mandatory SvcParam keys out of order";
				last = k;
				if (i)
					tb_ch(t, ',');
				svc_key(t, k);
			}
			break;
		case 1: /* alpn: character-strings */
			if (vlen == 0)
				return "empty alpn SvcParam";
			for (int i = 0; cur_left(&v); i++) {
				uint8_t n = cur_u8(&v);
				const uint8_t *s = cur_ptr(&v, n);
				if (!s || n == 0)
					return "bad alpn SvcParam";
				if (i)
					tb_ch(t, ',');
				tb_esc(t, s, n, ESC_LIST);
			}
			break;
		case 2: /* no-default-alpn */
			if (vlen)
				return "no-default-alpn SvcParam has a value";
			break;
		case 3: /* port */
			if (vlen != 2)
				return "port SvcParam is not 2 bytes";
			tb_u32(t, cur_be16(&v));
			break;
		case 4: /* ipv4hint */
		case 6: /* ipv6hint */ {
			size_t n = key == 4 ? 4 : 16;
			if (vlen == 0 || vlen % n)
				return "bad address hint SvcParam";
			for (int i = 0; cur_left(&v); i++) {
				cur_bytes(&v, a, n);
				if (i)
					tb_ch(t, ',');
				tb_addr(t, key == 4 ? 4 : 6, a);
			}
			break;
		}
		case 7: /* dohpath */
			tb_esc(t, cur_ptr(&v, vlen), vlen, ESC_LIST);
			break;
		default: /* ech and unknown keys */
			tb_hex(t, cur_ptr(&v, vlen), vlen);
			break;
		}
	}
	if (rd.err)
		return "rdata shorter than its fields";
	return NULL;
}

/* Types rdata_text decodes field by field (the others are shown generic). */
static int type_decoded(uint16_t type)
{
	switch (type) {
	case LDNS_RR_TYPE_A:
	case LDNS_RR_TYPE_AAAA:
	case LDNS_RR_TYPE_NS:
	case LDNS_RR_TYPE_MD:
	case LDNS_RR_TYPE_MF:
	case LDNS_RR_TYPE_CNAME:
	case LDNS_RR_TYPE_MB:
	case LDNS_RR_TYPE_MG:
	case LDNS_RR_TYPE_MR:
	case LDNS_RR_TYPE_PTR:
	case LDNS_RR_TYPE_DNAME:
	case LDNS_RR_TYPE_MX:
	case LDNS_RR_TYPE_AFSDB:
	case LDNS_RR_TYPE_RT:
	case LDNS_RR_TYPE_KX:
	case LDNS_RR_TYPE_MINFO:
	case LDNS_RR_TYPE_RP:
	case LDNS_RR_TYPE_SOA:
	case LDNS_RR_TYPE_SRV:
	case LDNS_RR_TYPE_TXT:
	case LDNS_RR_TYPE_SPF:
	case LDNS_RR_TYPE_NULL:
	case LDNS_RR_TYPE_CAA:
	case LDNS_RR_TYPE_SVCB:
	case LDNS_RR_TYPE_HTTPS:
		return 1;
	default:
		return 0;
	}
}

/*
 * Parse the rdata rd of an RR of this type and render it into t (dry when
 * t->p is NULL). Names may be compressed against msg[0..mlen), which
 * contains rd. Returns NULL, or why the rdata does not parse as its type
 * (t then holds garbage: the caller renders it as generic instead). keep
 * (may be NULL) learns the last name rendered.
 */
static const char *rdata_text(uint16_t type, const uint8_t *msg, size_t mlen, struct cur rd,
			      struct tbuf *t, struct name_keep *keep)
{
	const char *why = NULL;
	uint8_t a[16];

	if (cur_left(&rd) == 0 && !rd.err && type != LDNS_RR_TYPE_NULL) {
		/* UPDATE deletes and prerequisites carry no rdata */
		generic_text(t, rd);
		return NULL;
	}
	switch (type) {
	case LDNS_RR_TYPE_A:
		if (cur_left(&rd) != 4)
			return "A rdata is not 4 bytes";
		cur_bytes(&rd, a, 4);
		tb_addr(t, 4, a);
		break;
	case LDNS_RR_TYPE_AAAA:
		if (cur_left(&rd) != 16)
			return "AAAA rdata is not 16 bytes";
		cur_bytes(&rd, a, 16);
		tb_addr(t, 6, a);
		break;
	case LDNS_RR_TYPE_NS:
	case LDNS_RR_TYPE_MD:
	case LDNS_RR_TYPE_MF:
	case LDNS_RR_TYPE_CNAME:
	case LDNS_RR_TYPE_MB:
	case LDNS_RR_TYPE_MG:
	case LDNS_RR_TYPE_MR:
	case LDNS_RR_TYPE_PTR:
	case LDNS_RR_TYPE_DNAME:
		if (rd_name(msg, mlen, &rd, t, &why, keep))
			return why;
		break;
	case LDNS_RR_TYPE_MX:
	case LDNS_RR_TYPE_AFSDB:
	case LDNS_RR_TYPE_RT:
	case LDNS_RR_TYPE_KX:
		tb_u32(t, cur_be16(&rd));
		tb_ch(t, ' ');
		if (rd_name(msg, mlen, &rd, t, &why, keep))
			return why;
		break;
	case LDNS_RR_TYPE_MINFO:
	case LDNS_RR_TYPE_RP:
	case LDNS_RR_TYPE_SOA:
		if (rd_name(msg, mlen, &rd, t, &why, keep))
			return why;
		tb_ch(t, ' ');
		if (rd_name(msg, mlen, &rd, t, &why, keep))
			return why;
		if (type != LDNS_RR_TYPE_SOA)
			break;
		for (int i = 0; i < 5; i++) {
			tb_ch(t, ' ');
			tb_u32(t, cur_be32(&rd));
		}
		break;
	case LDNS_RR_TYPE_SRV:
		for (int i = 0; i < 3; i++) {
			tb_u32(t, cur_be16(&rd));
			tb_ch(t, ' ');
		}
		if (rd_name(msg, mlen, &rd, t, &why, keep))
			return why;
		break;
	case LDNS_RR_TYPE_TXT:
	case LDNS_RR_TYPE_SPF:
		for (int i = 0; cur_left(&rd); i++) {
			uint8_t n = cur_u8(&rd);
			const uint8_t *s = cur_ptr(&rd, n);
			if (!s)
				return "character-string runs past the rdata";
			if (i)
				tb_ch(t, REC_GS);
			tb_esc(t, s, n, 0);
		}
		break;
	case LDNS_RR_TYPE_NULL: {
		size_t n = cur_left(&rd);
		tb_hex(t, cur_ptr(&rd, n), n);
		break;
	}
	case LDNS_RR_TYPE_CAA: {
		uint8_t flags = cur_u8(&rd);
		uint8_t tlen = cur_u8(&rd);
		const uint8_t *tag = cur_ptr(&rd, tlen);
		size_t vlen = cur_left(&rd);
		if (!tag || tlen == 0)
			return "bad CAA tag";
		tb_u32(t, flags);
		tb_ch(t, ' ');
		tb_esc(t, tag, tlen, ESC_LIST);
		tb_ch(t, ' ');
		tb_esc(t, cur_ptr(&rd, vlen), vlen, 0);
		break;
	}
	case LDNS_RR_TYPE_SVCB:
	case LDNS_RR_TYPE_HTTPS:
		return svcb_text(msg, mlen, rd, t, keep);
	default: /* keep in step with type_decoded() */
		generic_text(t, rd);
		return NULL;
	}
	if (rd.err)
		return "rdata shorter than its fields";
	if (cur_left(&rd))
		return "bytes after the rdata fields";
	return NULL;
}

/* ---- records -------------------------------------------------------------- */

/* "00" to "99": two digits per division. */
static const char dig2[] = "00010203040506070809101112131415161718192021222324"
			   "25262728293031323334353637383940414243444546474849"
			   "50515253545556575859606162636465666768697071727374"
			   "75767778798081828384858687888990919293949596979899";

/* v in decimal at b (at most 10 bytes, no NUL); returns the end. The
 * length first, so the digits go straight to their place: most numbers
 * here are small (counts, flags, TTLs). */
static char *put_u32(char *b, uint32_t v)
{
	size_t n = 1;

	for (uint32_t lim = 10; n < 10 && v >= lim; lim *= 10)
		n++;
	char *e = b + n;
	while (v >= 100) {
		uint32_t d = v % 100;
		v /= 100;
		e -= 2;
		memcpy(e, dig2 + 2 * d, 2);
	}
	if (v >= 10)
		memcpy(e - 2, dig2 + 2 * v, 2);
	else
		e[-1] = (char)('0' + v);
	return b + n;
}

/* rec_field of v in decimal, in one bounds check and one copy. Same result
 * as rec_field, including when it does not fit. */
static void rec_num(struct rec *r, uint32_t v)
{
	char tmp[10];
	size_t n = (size_t)(put_u32(tmp, v) - tmp);
	size_t sep = r->fresh ? 0 : 1;
	r->fresh = 0;
	if (r->overflow)
		return;
	if (r->cap == 0 || n + sep > r->cap - 1 - r->len) {
		r->overflow = 1;
		return;
	}
	char *b = r->buf + r->len;
	if (sep)
		*b++ = REC_US;
	memcpy(b, tmp, n);
	b[n] = '\0';
	r->len += sep + n;
}

/* rec_num of each of v[0..k): the hot path writes a dozen numbers per
 * message, mostly in runs, so a run that surely fits (11 bytes a number
 * with its separator) takes one bounds check; near the cap, one at a time,
 * which cuts exactly where rec_num would. */
static void rec_nums(struct rec *r, const uint32_t *v, size_t k)
{
	if (r->overflow || r->cap == 0 || k * 11 > r->cap - 1 - r->len) {
		for (size_t i = 0; i < k; i++)
			rec_num(r, v[i]);
		return;
	}
	char *b = r->buf + r->len;
	for (size_t i = 0; i < k; i++) {
		if (!r->fresh)
			*b++ = REC_US;
		r->fresh = 0;
		b = put_u32(b, v[i]);
	}
	*b = '\0';
	r->len = (size_t)(b - r->buf);
}

/* After each record: if it did not fit, drop it whole (the record stays
 * well-formed; finish() marks the cut). */
static void rec_close(struct dns_out *o, size_t start)
{
	rec_end(&o->rec);
	if (o->rec.overflow) {
		o->rec.len = start;
		o->rec.buf[start] = '\0';
		o->rec.fresh = 1;
		o->cut = 1;
	}
}

static void name_field(struct dns_out *o, const uint8_t *w, size_t n)
{
	char tmp[DNS_NAME_MAX];
	struct tbuf t = {tmp, sizeof(tmp), 0, 0};

	/* Most owners are the question name, already rendered into o->qname
	 * the same way (same renderer, same capacity): copy it. Many others
	 * are the name an earlier RR's data ended in (a CNAME chain, glue),
	 * whose text is in the record already: a well-formed name of at most
	 * 255 bytes renders whole into either buffer, so copy that. */
	if (n && n == o->qwire_len && memcmp(w, o->qwire, n) == 0) {
		rec_field(&o->rec, o->qname, o->qname_len);
		return;
	}
	if (o->prev_ok && n == o->prev.len && memcmp(w, o->prev.w, n) == 0) {
		rec_field(&o->rec, o->rec.buf + o->prev_off, o->prev_text_len);
		return;
	}
	tmp[0] = '\0';
	tb_name(&t, w, n);
	rec_field(&o->rec, tmp, t.len);
}

/* A question; without type and class (empty fields) when has_type is 0:
 * the name was read but the message ends before them. */
static void q_record(struct dns_out *o, const uint8_t *w, size_t n, int has_type,
		     uint16_t type, uint16_t cls)
{
	size_t start = o->rec.len;

	rec_str(&o->rec, "Q");
	name_field(o, w, n);
	if (has_type) {
		rec_nums(&o->rec, (const uint32_t[]){type, cls}, 2);
	} else {
		rec_str(&o->rec, "");
		rec_str(&o->rec, "");
	}
	rec_close(o, start);
}

/* One RR record; rd lies inside msg[0..mlen), the base for its pointers. */
static const char *rr_record(struct dns_out *o, int sec, const uint8_t *owner,
			     size_t owner_len, uint16_t type, uint16_t cls, uint32_t ttl,
			     const uint8_t *msg, size_t mlen, struct cur rd)
{
	const char *why;
	char data[DNS_DATA_MAX];
	struct tbuf t = {data, sizeof(data), 0, 0};
	struct name_keep keep = {&o->prev, 0, 0, 0};
	size_t start = o->rec.len;

	/* the owner before the data: rendering the data overwrites o->prev,
	 * which the owner is compared with */
	rec_str(&o->rec, sec_tag[sec]);
	name_field(o, owner, owner_len);
	rec_nums(&o->rec, (const uint32_t[]){type, cls, ttl}, 3);
	data[0] = '\0';
	why = rdata_text(type, msg, mlen, rd, &t, &keep);
	if (why) {
		if (keep.state)
			keep.state = -1; /* its text is not what the record gets */
		t.len = 0;
		t.cut = 0;
		data[0] = '\0';
		generic_text(&t, rd);
	}
	if (t.cut)
		o->cut = 1;
	rec_field(&o->rec, data, t.len);
	if (keep.state) {
		/* o->prev was overwritten: keep it only if its text is whole
		 * in the record */
		o->prev_ok = keep.state > 0 && !t.cut && !o->rec.overflow;
		o->prev_off = o->rec.len - t.len + keep.from;
		o->prev_text_len = keep.to - keep.from;
	}
	rec_close(o, start);
	if (o->rec.overflow)
		o->prev_ok = 0;
	return why;
}

/* ---- the cursor walk ------------------------------------------------------ */

struct walk {
	const uint8_t *msg;
	size_t len;
	uint16_t count[4];
	/* the first problem */
	const char *why;
	int why_sec;
	unsigned why_idx;
	size_t why_n;  /* SEC_END: bytes after the last record */
	int why_short; /* the bytes ran out (a cut capture, or counts that lie) */
	/* what the checking walk remembers */
	struct dns_wname qname;
	uint16_t qtype, qclass;
	int have_q;
	int edns;
	uint16_t edns_udp;
	uint8_t edns_ext_rcode, edns_version, edns_do;
	const uint8_t *rr_start; /* the first RR (past the questions) */
	struct obs_rr *seen;     /* caller's table: the first RRs read */
	unsigned n_seen;
};

static void walk_note(struct walk *w, int sec, unsigned idx, const char *why, int is_short)
{
	if (w->why)
		return;
	w->why = why;
	w->why_sec = sec;
	w->why_idx = idx;
	w->why_short = is_short;
}

/* The first question's name, rendered into o->qname (owners that repeat it
 * copy that text: name_field). */
static void qname_set(struct dns_out *o, const struct walk *w)
{
	o->qname_len = dns_name_text(o->qname, sizeof(o->qname), w->qname.w, w->qname.len, NULL);
	o->qwire = w->qname.w;
	o->qwire_len = w->qname.len;
}

/* Do the OPT record's options (code, length, data) fill its rdata exactly?
 * Most have none or one: a few reads. */
static int opt_options_fit(struct cur rd)
{
	while (cur_left(&rd)) {
		cur_skip(&rd, 2);
		cur_skip(&rd, cur_be16(&rd));
		if (rd.err)
			return 0;
	}
	return 1;
}

/*
 * Walk the message after its header. With check, it checks every rule and
 * fills w (the first question, the OPT record, the RR table, the first
 * problem); with o, it writes a record per question and RR it can read.
 * dns_parse_message does both in one walk, and walks again only to render
 * after all (o alone) when the first walk's records cannot be used. It stops
 * at the first framing problem (a name that breaks a rule, bytes that run
 * out); a bad rdata is noted and the walk goes on, since rdlength still
 * frames the next RR.
 */
static void walk(struct walk *w, struct dns_out *o, int check)
{
	struct cur c = cur_init(w->msg, w->len);
	struct dns_wname d;
	const char *why;
	int r;

	cur_skip(&c, 12);
	for (unsigned i = 0; i < w->count[SEC_QD]; i++) {
		/* the checking walk reads the first name where it is kept */
		struct dns_wname *qd = i == 0 && check ? &w->qname : &d;
		struct cur at = c;
		int loose = 0;
		r = name_read(w->msg, w->len, &c, qd, &why);
		if (r == NM_BAD && i == 0) {
			/* a pointer the walk refuses, which a resolver may
			 * follow: the name it acts on (name_read_loose), and
			 * the walk ends after this question */
			uint8_t big[DNS_LOOSE_NAME_MAX];
			c = at;
			loose = name_read_loose(w->msg, w->len, &c, qd, big) == NM_OK;
			if (!loose)
				cur_fail(&c);
		}
		if (r != NM_OK && !loose) {
			walk_note(w, SEC_QD, i, why, r == NM_SHORT);
			return;
		}
		uint16_t type = cur_be16(&c);
		uint16_t cls = cur_be16(&c);
		if (i == 0 && check) {
			w->qtype = type;
			w->qclass = cls;
			w->have_q = 1;
			if (o)
				qname_set(o, w);
		}
		if (o)
			q_record(o, qd->w, qd->len, !c.err, type, cls);
		if (loose) {
			walk_note(w, SEC_QD, i, why, 0);
			return;
		}
		if (c.err) {
			walk_note(w, SEC_QD, i, "question runs past the end", 1);
			return;
		}
	}
	w->rr_start = c.p;
	for (int s = SEC_AN; s <= SEC_AR; s++) {
		for (unsigned i = 0; i < w->count[s]; i++) {
			r = name_read(w->msg, w->len, &c, &d, &why);
			if (r != NM_OK) {
				walk_note(w, s, i, why, r == NM_SHORT);
				return;
			}
			uint16_t type = cur_be16(&c);
			uint16_t cls = cur_be16(&c);
			uint32_t ttl = cur_be32(&c);
			uint16_t rdlen = cur_be16(&c);
			if (c.err) {
				walk_note(w, s, i, "RR header runs past the end", 1);
				return;
			}
			struct cur rd = cur_take(&c, rdlen);
			if (c.err) {
				walk_note(w, s, i, "rdata runs past the end", 1);
				return;
			}
			if (check && w->n_seen < DNS_RR_SEEN) {
				w->seen[w->n_seen].rd = rd.p;
				w->seen[w->n_seen].rd_end = rd.end;
				w->seen[w->n_seen].type = type;
				w->seen[w->n_seen].rclass = cls;
				w->seen[w->n_seen].section = (uint8_t)s;
				w->n_seen++;
			}
			if (s == SEC_AR && type == LDNS_RR_TYPE_OPT) {
				/* no record: it is in the header record */
				if (!check) {
					/* (read by the checking walk) */
				} else if (w->edns) {
					walk_note(w, s, i, "more than one OPT record", 0);
				} else {
					/* RFC 6891 6.1.2; what it says is still
					 * shown */
					if (d.len != 1)
						walk_note(w, s, i, "OPT owner is not the root", 0);
					else if (!opt_options_fit(rd))
						walk_note(w, s, i,
							  "EDNS option runs past the OPT data", 0);
					w->edns = 1;
					w->edns_udp = cls;
					w->edns_ext_rcode = (uint8_t)(ttl >> 24);
					w->edns_version = (uint8_t)(ttl >> 16);
					w->edns_do = (uint8_t)(ttl >> 15 & 1);
				}
				continue;
			}
			if (s == SEC_AR && type == LDNS_RR_TYPE_TSIG && i + 1 != w->count[s])
				walk_note(w, s, i, "TSIG is not the last record", 0);
			if (o) {
				why = rr_record(o, s, d.w, d.len, type, cls, ttl, w->msg, w->len,
						rd);
			} else {
				struct tbuf dry = {NULL, 0, 0, 0};
				why = rdata_text(type, w->msg, w->len, rd, &dry, NULL);
			}
			if (why && check)
				walk_note(w, s, i, why, 0);
		}
	}
	if (cur_left(&c) && !w->why) {
		walk_note(w, SEC_END, 0, "bytes after the last record", 0);
		w->why_n = cur_left(&c);
	}
}

/*
 * Did the walk read and check every record of the message whole: are they
 * all in its table, and of types that are fixed-size addresses or one name
 * (A, AAAA, CNAME), or the OPT record it took apart? rdata_text checked each
 * exactly (an A of 4 bytes, a CNAME name that fills its rdata), and
 * name_read is stricter than ldns, so ldns could add nothing to them.
 */
static int walk_read_whole(const struct walk *w)
{
	unsigned n = (unsigned)w->count[SEC_AN] + w->count[SEC_NS] + w->count[SEC_AR];

	if (w->why || n > w->n_seen)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		switch (w->seen[i].type) {
		case LDNS_RR_TYPE_A:
		case LDNS_RR_TYPE_AAAA:
		case LDNS_RR_TYPE_CNAME:
		case LDNS_RR_TYPE_OPT:
			break;
		default:
			return 0;
		}
	}
	return 1;
}

/* ---- the ldns path -------------------------------------------------------- */

/*
 * The wire RRs in order, beside ldns's lists. ldns splits rdata by its own
 * per-type descriptors and silently drops bytes beyond them (an A rdata of 5
 * bytes comes out as 4), so the rdata of types we show as generic is taken
 * from the wire, not from ldns's rdfs. The first DNS_RR_SEEN come from the
 * table the checking walk filled (w->seen); the rest are read from the wire
 * after them. The walk already checked the framing, so this cannot fail on
 * a message that reaches the ldns path.
 */
struct wire_it {
	const struct walk *w;
	struct cur c;  /* the wire after the table's last RR */
	int sec;       /* section of the next wire RR */
	unsigned i;    /* its index there */
	unsigned k;    /* its index in the message (into w->seen) */
};

static void wire_init(struct wire_it *it, const struct walk *w)
{
	const uint8_t *end = w->msg + w->len;
	const uint8_t *at = w->n_seen ? w->seen[w->n_seen - 1].rd_end : w->rr_start;

	it->w = w;
	it->c = cur_init(at, (size_t)(end - at));
	it->sec = SEC_AN;
	it->i = 0;
	it->k = 0;
}

/* The next wire RR, of a section no later than upto: its section, type and
 * rdata. 0 or -1. */
static int wire_step(struct wire_it *it, int upto, int *sec, uint16_t *type, struct cur *rd)
{
	const struct walk *w = it->w;
	struct dns_wname d;
	const char *why;

	while (it->sec <= SEC_AR && it->i >= w->count[it->sec]) {
		it->sec++;
		it->i = 0;
	}
	if (it->sec > upto)
		return -1;
	*sec = it->sec;
	it->i++;
	if (it->k < w->n_seen) {
		const struct obs_rr *e = &w->seen[it->k++];
		*type = e->type;
		*rd = cur_init(e->rd, (size_t)(e->rd_end - e->rd));
		return 0;
	}
	if (name_read(w->msg, w->len, &it->c, &d, &why) != NM_OK)
		return -1;
	*type = cur_be16(&it->c);
	cur_skip(&it->c, 6);
	uint16_t rdlen = cur_be16(&it->c);
	*rd = cur_take(&it->c, rdlen);
	return it->c.err ? -1 : 0;
}

/* The next wire RR of section sec as ldns lists them: in the additional
 * section OPT is never listed and TSIG only when tsig is set. 0 or -1. */
static int wire_next(struct wire_it *it, int sec, int tsig, uint16_t *type, struct cur *rd)
{
	for (;;) {
		int s;
		uint16_t t;
		struct cur r;
		if (wire_step(it, sec, &s, &t, &r) != 0)
			return -1;
		if (s < sec)
			continue;
		if (s == SEC_AR && (t == LDNS_RR_TYPE_OPT || (t == LDNS_RR_TYPE_TSIG) != !!tsig))
			continue;
		*type = t;
		*rd = r;
		return 0;
	}
}

/*
 * Do the fields of the rdata rd (inside msg[0..mlen), its rdlength just
 * before it) take exactly its bytes, as ldns reads them by the type's
 * descriptor? The walk frames RRs by rdlength and cannot tell, for the
 * types it does not decode; ldns reads the fields and goes on from where
 * they end, so bytes left over, or fields that run past rdlength, shift
 * every later RR for it (or make it fail). Returns 0 when they fit (or
 * ldns fails on the RR for a reason of its own), 1 with the reason in
 * o->reason when not, or -ENOMEM. Allocates (an ldns RR): only for a
 * message whose lists went out of step or that ldns rejected.
 */
/* Types whose ldns layout is not the RFC's: NSAP-PTR holds a domain name
 * (RFC 1348), not one character-string; SINK is coding, subcoding and data
 * of any length (draft-eastlake-kitchen-sink), not three bytes and base64.
 * Their rdata is not judged (it is shown as "\# len hex"), and ldns's
 * refusal of a message for one of them is not the message's fault. */
static int ldns_layout_wrong(uint16_t type)
{
	return type == 23 || type == 40;
}

static int rdata_misfit(struct dns_out *o, const uint8_t *msg, size_t mlen, struct cur rd,
			int sec, unsigned idx, uint16_t type)
{
	size_t at = (size_t)(rd.p - msg) - 2, pos = at;
	size_t end = at + 2 + cur_left(&rd);
	ldns_rr *rr;
	const char *how;

	if (ldns_layout_wrong(type))
		return 0;
	rr = ldns_rr_new();
	if (!rr)
		return -ENOMEM;
	ldns_rr_set_type(rr, (ldns_rr_type)type);
	ldns_status st = ldns_wire2rdf(rr, msg, mlen, &pos);
	ldns_rr_free(rr);
	if (st == LDNS_STATUS_MEM_ERR)
		return -ENOMEM;
	if (st == LDNS_STATUS_PACKET_OVERFLOW || (st == LDNS_STATUS_OK && pos > end))
		how = "shorter";
	else if (st == LDNS_STATUS_OK && pos < end)
		how = "longer";
	else
		return 0;
	const ldns_rr_descriptor *d = ldns_rr_descript(type);
	if (d && d->_name)
		snprintf(o->reason, sizeof(o->reason), "%s %u: %s rdata %s than its fields",
			 sec_name[sec], idx, d->_name, how);
	else
		snprintf(o->reason, sizeof(o->reason), "%s %u: TYPE%u rdata %s than its fields",
			 sec_name[sec], idx, (unsigned)type, how);
	return 1;
}

/* ldns rejected a message the walk found sound: is it for an RR whose
 * fields do not fit its rdata (rdata_misfit)? The first such RR gives the
 * reason, as it does when ldns's lists go out of step (ldns_rr_record); the
 * decoded types the walk checked itself. 0, 1 or -ENOMEM; 2 when none
 * misfits but an RR has a type ldns lays out wrong (ldns_layout_wrong):
 * ldns's refusal is its own, and the message is sound. */
static int ldns_misfit(struct dns_out *o, const struct walk *w)
{
	struct wire_it it;
	int sec, odd = 0;
	uint16_t type;
	struct cur rd;

	wire_init(&it, w);
	while (wire_step(&it, SEC_AR, &sec, &type, &rd) == 0) {
		if (type_decoded(type))
			continue;
		odd |= ldns_layout_wrong(type);
		int r = rdata_misfit(o, w->msg, w->len, rd, sec, it.i, type);
		if (r)
			return r;
	}
	return odd ? 2 : 0;
}

static const uint8_t root_wire[1] = {0};

/*
 * One RR of ldns's lists, beside its wire RR. Returns -1, writing nothing,
 * when the two disagree: ldns reads the rdata of a type it knows by its own
 * descriptor and does not skip what lies beyond, so an RR with bytes after
 * its fields (a HINFO with two extra bytes) shifts every later RR of
 * ldns's lists (the next owner would start with those bytes). The walk
 * framed each RR by rdlength, so the caller renders the message from it;
 * such an RR makes the message malformed (o->reason set, rdata_misfit),
 * as it does when the shift makes ldns fail, wherever the RR is. A name
 * compressed where the type has none (sizes differ, fields fit) is no
 * fault of the rdata's length: just shown from the wire. -ENOMEM too.
 */
static int ldns_rr_record(struct dns_out *o, struct wire_it *it, int sec, int tsig,
			  const ldns_rr *rr)
{
	const ldns_rdf *ow = ldns_rr_owner(rr);
	uint16_t type = (uint16_t)ldns_rr_get_type(rr);
	uint16_t wtype = 0;
	struct cur wrd;
	const uint8_t *base = o->scratch;
	size_t n = 0;

	if (wire_next(it, sec, tsig, &wtype, &wrd) != 0 || wtype != type)
		return -1;
	if (!type_decoded(type)) {
		/* Shown from the wire; ldns must have read exactly rdlength
		 * bytes (its rdfs hold them as they are: these types carry no
		 * compressed name, and one that did is shown as bytes too). */
		size_t got = 0;
		for (size_t j = 0; j < ldns_rr_rd_count(rr); j++) {
			const ldns_rdf *f = ldns_rr_rdf(rr, j);
			got += f ? ldns_rdf_size(f) : 0;
		}
		if (got != cur_left(&wrd)) {
			int r = rdata_misfit(o, it->w->msg, it->w->len, wrd, it->sec, it->i, type);
			return r < 0 ? r : -1;
		}
		base = it->w->msg;
		n = it->w->len;
	} else {
		/* decoded types: ldns's rdfs, names already uncompressed */
		for (size_t j = 0; j < ldns_rr_rd_count(rr); j++) {
			const ldns_rdf *f = ldns_rr_rdf(rr, j);
			size_t k = f ? ldns_rdf_size(f) : 0;
			if (k > sizeof(o->scratch) - n) {
				o->cut = 1;
				break;
			}
			if (k)
				memcpy(o->scratch + n, ldns_rdf_data(f), k);
			n += k;
		}
		wrd = cur_init(o->scratch, n);
	}
	rr_record(o, sec, ow ? ldns_rdf_data(ow) : root_wire, ow ? ldns_rdf_size(ow) : 1,
		  type, (uint16_t)ldns_rr_get_class(rr), ldns_rr_ttl(rr), base, n, wrd);
	return 0;
}

/* Render the questions and RRs of a packet that ldns parsed. ldns keeps OPT
 * and TSIG out of the additional list; OPT is in the header record, TSIG is
 * listed last, where the walk made sure it was on the wire. 0; -1 when the
 * lists went out of step with the wire (ldns_rr_record); -ENOMEM. */
static int render_ldns(struct dns_out *o, const struct walk *w, const ldns_pkt *pkt)
{
	const ldns_rr_list *q = ldns_pkt_question(pkt);
	const ldns_rr_list *lists[3] = {ldns_pkt_answer(pkt), ldns_pkt_authority(pkt),
					ldns_pkt_additional(pkt)};
	struct wire_it it;

	wire_init(&it, w);
	for (size_t i = 0; i < ldns_rr_list_rr_count(q); i++) {
		const ldns_rr *rr = ldns_rr_list_rr(q, i);
		const ldns_rdf *ow = ldns_rr_owner(rr);
		q_record(o, ow ? ldns_rdf_data(ow) : root_wire, ow ? ldns_rdf_size(ow) : 1, 1,
			 (uint16_t)ldns_rr_get_type(rr), (uint16_t)ldns_rr_get_class(rr));
	}
	for (int s = 0; s < 3; s++) {
		for (size_t i = 0; i < ldns_rr_list_rr_count(lists[s]); i++) {
			int r = ldns_rr_record(o, &it, SEC_AN + s, 0, ldns_rr_list_rr(lists[s], i));
			if (r)
				return r;
		}
	}
	if (ldns_pkt_tsig(pkt))
		return ldns_rr_record(o, &it, SEC_AR, 1, ldns_pkt_tsig(pkt));
	return 0;
}

/* ---- the message ---------------------------------------------------------- */

/* Did the parse stop only because the capture cut the message? Then it is
 * truncated, not malformed: the reason says where the cut fell, which is no
 * fault of the message. */
static int cut_only(const struct dns_out *o, int is_short, unsigned obs_flags)
{
	return is_short && (obs_flags & OBS_F_TRUNCATED) && o->reason[0];
}

static void header_record(struct dns_out *o, const struct walk *w, uint8_t b2, uint8_t b3,
			  unsigned obs_flags, int is_short)
{
	static const struct {
		uint8_t byte, mask;
		const char *name;
	} flag_bits[] = {
		{2, 0x04, "aa"}, {2, 0x02, "tc"}, {2, 0x01, "rd"},
		{3, 0x80, "ra"}, {3, 0x20, "ad"}, {3, 0x10, "cd"},
	};
	char flags[32];
	char reason[DNS_REASON_MAX * 4];
	size_t fl = 0;

	for (size_t i = 0; i < sizeof(flag_bits) / sizeof(flag_bits[0]); i++) {
		if (!((flag_bits[i].byte == 2 ? b2 : b3) & flag_bits[i].mask))
			continue;
		if (fl)
			flags[fl++] = ',';
		memcpy(flags + fl, flag_bits[i].name, 2);
		fl += 2;
	}
	rec_num(&o->rec, o->id);
	rec_str(&o->rec, o->qr ? "response" : "query");
	rec_nums(&o->rec, (const uint32_t[]){o->opcode, o->rcode}, 2);
	rec_field(&o->rec, flags, fl);
	rec_nums(&o->rec, (const uint32_t[]){o->qdcount, o->ancount, o->nscount, o->arcount},
		 4);
	if (w->edns) {
		rec_nums(&o->rec, (const uint32_t[]){w->edns_udp, w->edns_version, w->edns_do},
			 3);
	} else {
		rec_str(&o->rec, "");
		rec_str(&o->rec, "");
		rec_str(&o->rec, "");
	}
	rec_str(&o->rec, (obs_flags & OBS_F_TCP) ? "tcp" : "udp");
	/* the reason is the malformed verdict's, so none for a cut alone (as in
	 * the TLS and ICMP records, which state the cut in a field of its own) */
	rec_field(&o->rec, reason,
		  o->reason[0] && !cut_only(o, is_short, obs_flags)
			  ? text_escape(reason, sizeof(reason), (const uint8_t *)o->reason,
					strlen(o->reason), NULL)
			  : 0);
	rec_str(&o->rec, (obs_flags & OBS_F_TRUNCATED) ? "1" : "0");
	rec_end(&o->rec);
}

static void set_reason(struct dns_out *o, const struct walk *w)
{
	if (w->why_sec == SEC_END)
		snprintf(o->reason, sizeof(o->reason), "%zu %s", w->why_n, w->why);
	else
		snprintf(o->reason, sizeof(o->reason), "%s %u: %s", sec_name[w->why_sec],
			 w->why_idx + 1, w->why);
}

/* Close the detail record (the "CUT" marker goes into the bytes held back
 * for it) and decide the result from the reason. */
static int finish(struct dns_out *o, int is_short, unsigned obs_flags)
{
	if (o->cut || o->rec.overflow) {
		o->cut = 1;
		o->rec.cap = sizeof(o->info_buf);
		o->rec.overflow = 0;
		o->rec.fresh = 1;
		rec_str(&o->rec, "CUT");
		rec_end(&o->rec);
	}
	o->info_len = o->rec.len;
	if (!o->reason[0])
		return MOD_OK;
	if (cut_only(o, is_short, obs_flags))
		return MOD_TRUNCATED;
	o->flags |= OBS_F_MALFORMED;
	return MOD_MALFORMED;
}

int dns_parse_message(const uint8_t *msg, size_t len, unsigned obs_flags, struct dns_out *o)
{
	ldns_pkt *pkt = NULL;
	struct walk w;
	int own = (obs_flags & DNS_PARSE_OWN) != 0;
	int is_short = 0;
	int ret;

	memset(&w, 0, sizeof(w));
	o->qname[0] = '\0';
	o->qname_len = 0;
	o->id = o->qtype = o->qclass = o->rcode = 0;
	o->qr = o->opcode = 0;
	o->qdcount = o->ancount = o->nscount = o->arcount = 0;
	o->flags = obs_flags & (OBS_F_TCP | OBS_F_TRUNCATED);
	o->reason[0] = '\0';
	o->cut = 0;
	o->qwire = NULL;
	o->qwire_len = 0;
	o->prev_ok = 0;
	o->n_rrs = 0;
	rec_init(&o->rec, o->info_buf, sizeof(o->info_buf) - 8); /* room for "CUT" */
	o->info = o->info_buf;
	o->info_len = 0;

	struct cur h = cur_init(msg, len);
	o->id = cur_be16(&h);
	uint8_t b2 = cur_u8(&h);
	uint8_t b3 = cur_u8(&h);
	for (int s = SEC_QD; s <= SEC_AR; s++)
		w.count[s] = cur_be16(&h);
	if (h.err) {
		snprintf(o->reason, sizeof(o->reason), "header: message shorter than 12 bytes");
		o->id = 0;
		ret = finish(o, 1, obs_flags);
		goto out;
	}
	o->qr = b2 >> 7;
	o->opcode = (b2 >> 3) & 15;
	o->qdcount = w.count[SEC_QD];
	o->ancount = w.count[SEC_AN];
	o->nscount = w.count[SEC_NS];
	o->arcount = w.count[SEC_AR];

	/* One walk checks the message and renders its records into walk_buf,
	 * as if they followed the header record. */
	w.msg = msg;
	w.len = len;
	w.seen = o->seen;
	struct rec head = o->rec;
	rec_init(&o->rec, o->walk_buf, head.cap);
	walk(&w, o, 1);
	struct rec body = o->rec;
	int body_cut = o->cut;
	o->rec = head;
	o->cut = 0;
	o->prev_ok = 0;
	if (w.why) {
		set_reason(o, &w);
		is_short = w.why_short;
		own = 1;
	}
	unsigned n_rr = (unsigned)w.count[SEC_AN] + w.count[SEC_NS] + w.count[SEC_AR];
	o->n_rrs = !w.why && n_rr <= w.n_seen ? n_rr : 0;
	/* Nothing for ldns to decode (see the top of the file): the walk
	 * renders it the same way at a fraction of the cost (ldns allocates a
	 * packet, four lists and every name). */
	if (!own && !(obs_flags & DNS_PARSE_LDNS) && walk_read_whole(&w))
		own = 1;
	if (!own) {
		ldns_status st = ldns_wire2pkt(&pkt, msg, len);
		if (st == LDNS_STATUS_MEM_ERR) {
			ret = -ENOMEM;
			goto out;
		}
		if (st != LDNS_STATUS_OK) {
			snprintf(o->reason, sizeof(o->reason), "ldns: %s",
				 ldns_get_errorstr_by_id(st));
			/* an RR whose fields do not fit its rdata is the
			 * likeliest cause: name it, as when it comes last */
			int r = ldns_misfit(o, &w);
			if (r < 0) {
				ret = r;
				goto out;
			}
			if (r == 2)
				o->reason[0] = '\0';
			own = 1;
		}
	}
	o->rcode = (uint16_t)((unsigned)w.edns_ext_rcode << 4 | (b3 & 15));
	if (w.have_q) { /* (the walk rendered o->qname) */
		o->qtype = w.qtype;
		o->qclass = w.qclass;
	}
	header_record(o, &w, b2, b3, obs_flags, is_short);
	if (!own) {
		size_t mark = o->rec.len;
		int cut = o->cut;
		int r = render_ldns(o, &w, pkt);
		if (r == -ENOMEM) {
			ret = r;
			goto out;
		}
		if (r < 0) {
			/* ldns's lists went out of step with the wire (see
			 * ldns_rr_record): drop what they gave, render from
			 * the walk. */
			o->rec.len = mark;
			o->rec.buf[mark] = '\0';
			o->rec.fresh = 1;
			o->rec.overflow = 0;
			o->cut = cut;
			o->prev_ok = 0;
			own = 1;
			if (o->reason[0]) {
				/* because an RR's fields do not fit its
				 * rdata: the header record gets the reason */
				rec_init(&o->rec, o->info_buf, sizeof(o->info_buf) - 8);
				header_record(o, &w, b2, b3, obs_flags, is_short);
			}
		}
	}
	if (own && !body.overflow && !o->rec.overflow &&
	    body.len <= o->rec.cap - 1 - o->rec.len) {
		/* the walk's records, just as rendering them here would write
		 * them: none was cut for room, and all fit after the header */
		memcpy(o->rec.buf + o->rec.len, body.buf, body.len + 1);
		o->rec.len += body.len;
		o->rec.fresh = body.fresh;
		o->cut |= body_cut;
	} else if (own) {
		walk(&w, o, 0);
	}

	ret = finish(o, is_short, obs_flags);
out:
	ldns_pkt_free(pkt);
	return ret;
}

/* ---- the module ----------------------------------------------------------- */

struct dns_state {
	struct dns_out out;
};

static int dns_init(const struct module_env *env, void **state)
{
	struct dns_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	*state = st;
	return 0;
}

static void dns_fini(void *state)
{
	free(state);
}

static int dns_port(uint16_t port)
{
	switch (port) {
	case 53:   /* DNS */
	case 5353: /* mDNS */
	case 5355: /* LLMNR */
		return 1;
	default:
		return 0;
	}
}

/* The worse of two results: malformed > truncated > ok. */
static int worse(int a, int b)
{
	if (a == MOD_MALFORMED || b == MOD_MALFORMED)
		return MOD_MALFORMED;
	if (a == MOD_TRUNCATED || b == MOD_TRUNCATED)
		return MOD_TRUNCATED;
	return MOD_OK;
}

/* The observation of a message dns_parse_message() read into o (len bytes,
 * its result ret); none without a header. */
static int dns_emit(struct dns_out *o, const struct pkt *p, struct emit *out, size_t len,
		    int ret)
{
	if (ret < 0 || o->info_len == 0)
		return ret;
	struct obs ob = {
		.kind = o->qr ? OBS_DNS_ANSWER : OBS_DNS_QUERY,
		.pkt = p,
		.name = o->qname,
		.name_len = o->qname_len,
		.type = o->qtype,
		.code = o->rcode,
		.size = (uint32_t)len,
		.flags = o->flags,
		.info = o->info,
		.info_len = o->info_len,
	};
	if (o->n_rrs && !(o->flags & OBS_F_MALFORMED)) {
		ob.rrs = o->seen;
		ob.n_rrs = o->n_rrs;
	}
	int e = out->obs(out, &ob);
	return e < 0 ? e : ret;
}

/* Parse one message and emit its observation. */
static int dns_message(struct dns_out *o, const struct pkt *p, struct emit *out,
		       const uint8_t *msg, size_t len, unsigned flags)
{
	return dns_emit(o, p, out, len, dns_parse_message(msg, len, flags, o));
}

/*
 * DNS over TCP: every complete length-prefixed message in the stream after
 * what was consumed. A message still missing bytes waits for the next
 * segment, unless the stream can no longer grow (overflow or a hole): then
 * what is there is parsed as a cut message and the direction is finished.
 *
 * Capture loss (flow.h, "Holes"): a message must end before the first
 * skipped hole at or after the cursor (flow_stream_avail). One that reaches
 * into the hole is dropped, unparsed and unemitted, and parsing resumes at
 * s->resync, the first byte after the hole, on the guess that a message
 * starts there (a segment usually begins with one). If the guess is wrong,
 * the message read there is garbage: when it comes out malformed, it is
 * not reported, and the direction is abandoned (done) rather than parsed
 * into more garbage. The guess is made only after holes the peer has
 * acknowledged (real capture loss: the receiver has those bytes); after a
 * hole skipped otherwise (more out-of-order ranges than the table holds, a
 * FIN or RST behind it: s->unsure), what follows may sit anywhere in the
 * receiver's stream, and a sender could place a message there for the
 * sensor alone, so the direction is abandoned at the hole, counted as
 * truncated.
 */
static int dns_tcp(struct dns_out *o, const struct pkt *p, struct emit *out)
{
	struct flow_stream *s;
	int ret = MOD_OK;

	if (!p->flow)
		return MOD_NOT_MINE;
	s = &p->flow->st[p->dir ? 1 : 0];
	while (!s->done && s->buf && s->consumed < s->len) {
		uint32_t avail = flow_stream_avail(s, s->consumed);
		struct cur c = cur_init(s->buf + s->consumed, avail - s->consumed);
		uint16_t mlen = cur_be16(&c);
		struct cur body = c;
		const uint8_t *m = cur_ptr(&c, mlen);
		int resynced = s->holes && s->consumed == s->resync;
		int r;

		if (resynced && s->unsure) {
			s->done = 1;
			ret = worse(ret, MOD_TRUNCATED);
			break;
		}
		if (!m && avail < s->len) {
			/* the message runs into a skipped hole: drop it */
			s->consumed = s->resync;
			continue;
		}
		if (!m) {
			size_t left = cur_left(&body);
			/* the rest is to come: a DNS port's window holds a
			 * whole message (flow.h, FLOW_STREAM_WIDE) */
			if (!s->overflow && !s->gap)
				break;
			/* will never complete: keep what could be read */
			s->done = 1;
			r = body.err ? MOD_TRUNCATED
				     : dns_message(o, p, out, cur_ptr(&body, left), left,
						   OBS_F_TCP | OBS_F_TRUNCATED);
			if (r < 0)
				return r;
			ret = worse(ret, r);
			break;
		}
		s->consumed += 2u + mlen;
		r = dns_parse_message(m, mlen, OBS_F_TCP, o);
		if (r == MOD_MALFORMED && resynced) {
			s->done = 1; /* the boundary guess was wrong: stop here */
			ret = worse(ret, r);
			break;
		}
		r = dns_emit(o, p, out, mlen, r);
		if (r < 0)
			return r;
		ret = worse(ret, r);
	}
	/* what was parsed is not needed again: the window moves on, so a
	 * connection is followed past stream_max, message after message */
	flow_stream_slide(s);
	return ret;
}

/*
 * Does a client stream on a DNS port start as TLS or HTTP rather than DNS?
 * Its first bytes decide, so a DNS message must not be able to pass for
 * either by its length and id alone (a query padded to 0x1603 bytes starts
 * 16 03, like a TLS record; one of 0x4745 bytes with id 0x5420 starts
 * "GET "): a TLS ClientHello record has a version, a length and, once 11
 * bytes are in, handshake type 1 and a client version 3.x at offsets 5
 * and 9, which a DNS query holds only with flags and counts no server
 * accepts (rcode 1, 768 answers or more); an HTTP request has no control
 * byte in its first 12, where a DNS header has its flags and counts.
 */
static int tls_client_start(const uint8_t *b, size_t n)
{
	if (n < 5 || b[0] != 0x16 || b[1] != 0x03) /* any 3.x, as OpenSSL takes it */
		return 0;
	unsigned rec = (unsigned)b[3] << 8 | b[4];
	if (rec < 4 || rec > 18432)
		return 0;
	return n < 11 || (b[5] == 0x01 && b[9] == 0x03);
}

static int http_client_start(const uint8_t *b, size_t n)
{
	if (http_sniff(b, n) == 0)
		return 0;
	for (size_t i = 0; i < n && i < 12; i++)
		if (b[i] < 0x20 || b[i] == 0x7f)
			return 0;
	return 1;
}

static int dns_on_packet(void *state, const struct pkt *p, struct emit *out)
{
	struct dns_state *st = state;

	switch (p->proto) {
	case IPPROTO_UDP: {
		if (!dns_port(p->sport) && !dns_port(p->dport))
			return MOD_NOT_MINE;
		if (p->payload_len == 0)
			return MOD_NOT_MINE;
		/* A PROXY v2 header before the message (dnsdist, unbound,
		 * PowerDNS, BIND, Knot Resolver take one per datagram; no server
		 * takes v1, a stream's text line, over UDP): the message is
		 * what follows it. A header alone (Cloudflare Spectrum sends
		 * one first) holds no message. */
		const uint8_t *m = p->payload;
		size_t n = p->payload_len;
		if (m[0] == '\r') {
			int pp = proxyproto_parse(m, n);
			if (pp > 0) {
				m += pp;
				n -= (size_t)pp;
				if (n == 0)
					return MOD_NOT_MINE;
			}
		}
		/* 1 to 11 bytes, too short for a header, are a message all the
		 * same, as over TCP: counted malformed (or truncated, when the
		 * capture cut them), and not stored, having no header to show */
		return dns_message(&st->out, p, out, m, n,
				   (p->flags & PKT_SHORT) ? OBS_F_TRUNCATED : 0);
	}
	case IPPROTO_TCP:
		if ((!dns_port(p->sport) && !dns_port(p->dport)) || !p->flow)
			return MOD_NOT_MINE;
		if (p->flow->app == APP_NONE) {
			/* Claim the flow, unless the client speaks TLS or HTTP
			 * on the DNS port (a tunnel past a port filter): those
			 * belong to their own analyzers. A PROXY protocol header
			 * at the client stream's start (v2: dnsdist, unbound,
			 * PowerDNS, BIND, Knot Resolver; v1 and v2: CoreDNS's
			 * proxyproto) comes once, before the first length
			 * prefix: the messages are read after it, and while the
			 * first bytes may still become one, the claim waits. */
			struct flow_stream *c = &p->flow->st[0];
			int pp = proxyproto_stream(p->flow);
			if (pp < 0)
				return MOD_NOT_MINE;
			/* (not while the rest of a header passed in part is at
			 * the start: its bytes are no client's) */
			if (c->buf && !p->flow->pp_rest &&
			    (tls_client_start(c->buf, c->len) || http_client_start(c->buf, c->len)))
				return MOD_NOT_MINE;
			if (pp > 0) {
				const uint8_t *b = c->buf + c->consumed + (uint32_t)pp;
				size_t n = c->len - c->consumed - (uint32_t)pp;
				if (n == 0 || tls_client_start(b, n) || http_client_start(b, n))
					return MOD_NOT_MINE; /* n == 0: what follows decides */
				c->consumed += (uint32_t)pp;
			}
			proxyproto_taken(p->flow);
			p->flow->app = APP_DNS;
		} else if (p->flow->app != APP_DNS) {
			return MOD_NOT_MINE;
		}
		return dns_tcp(&st->out, p, out);
	default:
		return MOD_NOT_MINE;
	}
}

const struct module dns_module = {
	.name = "dns",
	.sel = SEL_UDP | SEL_TCP | SEL_PAYLOAD,
	.init = dns_init,
	.fini = dns_fini,
	.on_packet = dns_on_packet,
};
