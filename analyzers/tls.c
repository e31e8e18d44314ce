/*
 * tls.c - the TLS analyzer: the ClientHello and the ServerHello of every TCP
 * connection whose client stream starts like a TLS handshake record, on any
 * port; one observation per hello.
 *
 * The flow table already keeps the first bytes of each direction in order
 * (up to 16 KiB), so nothing is buffered here per flow: on each new segment
 * of a claimed flow, tls_reassemble() walks the record layer of that
 * direction from its first byte, one sub-cursor per record, gathering
 * handshake payload into the module's scratch buffer, until the first
 * handshake message is whole. A 1,500+ byte hello with a post-quantum key
 * share split over several segments and several records simply waits for its
 * last byte. Then tls_parse_handshake() parses it with one sub-cursor per
 * length field (record → handshake → extensions → each extension → its
 * lists), and the direction's stream is released.
 *
 * A ClientHello that will not be whole in the window is walked instead
 * (tls.h, "Big hellos"): tls_walk_feed() takes the bytes as they come and
 * keeps only its place and the fields of the event, in a struct tls_walk
 * that rides on the flow's state until the walk ends; the window slides past
 * what was walked.
 *
 * A client stream that began with a whole ClientHello is then followed, a
 * record at a time, for a second ClientHello (after a HelloRetryRequest),
 * skipping ChangeCipherSpec, until anything else arrives (tls.h, "Direction");
 * a second one too big for the window is walked as a big first one is.
 *
 * The not-mine exit is cheap: a flow owned by another analyzer, or a client
 * stream not starting 0x16 0x03 0x00..0x04 (SSLv2-format hellos included)
 * nor with text lines ending in a STARTTLS-like command and such a record,
 * is not ours and is not claimed. Nothing here prints, judges or keeps a
 * global: the working memory (scratch message and struct tls_hello) is the
 * module state; flow->app_state holds a small struct tls_flow (where each
 * direction's records start, hellos seen; and during a walk the walk's
 * state), and each direction's cursor is its stream's consumed.
 */
#include "tls.h"

#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../sensor/cursor.h"
#include "../sensor/flow.h"
#include "../sensor/record.h"
#include "../sensor/text.h"
#include "module.h"
#include "proxyproto.h"
#include "sha256.h"

enum { CT_CCS = 20, CT_HANDSHAKE = 22 };

enum {
	EXT_SERVER_NAME = 0x0000,
	EXT_SIG_ALGS = 0x000d,
	EXT_ALPN = 0x0010,
	EXT_SUPPORTED_VERSIONS = 0x002b,
	EXT_ECH = 0xfe0d,       /* RFC 9849 encrypted_client_hello */
	EXT_ECH_DRAFT = 0xff02, /* early ECH drafts */
	EXT_ESNI = 0xffce,      /* encrypted_server_name (ESNI drafts) */
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char hexdig[] = "0123456789abcdef";

/* "0x" and four lowercase hex digits into t (7 bytes); returns 6. */
static size_t hex16(char *t, uint16_t v)
{
	t[0] = '0';
	t[1] = 'x';
	for (int i = 0; i < 4; i++)
		t[2 + i] = hexdig[(v >> (12 - 4 * i)) & 15];
	t[6] = '\0';
	return 6;
}

/* ---- record layer --------------------------------------------------------- */

/* A ChangeCipherSpec record header (type 20, major 3, length 1), which
 * tls_next skips after a hello, and GnuTLS before and inside one. */
static int ccs_record(uint8_t type, uint8_t major, uint16_t rlen)
{
	return type == CT_CCS && major == 3 && rlen == 1;
}

int tls_gather(const uint8_t *s, size_t n, uint8_t *buf, size_t cap, size_t *msg_len,
	       size_t *used, const char **why)
{
	struct cur c = cur_init(s, n);
	size_t got = 0, need = 0; /* need: 4 + body length, once the header is in */
	size_t rec_end = 0;       /* offset in s just past the last record read */
	int first = 1, cut = 0, ret;

	*why = NULL;
	for (;;) {
		if (need && got >= need) {
			got = need; /* later messages of the same record are not ours */
			ret = TLS_ASM_DONE;
			goto out;
		}
		if (got >= cap) {
			ret = TLS_ASM_BIG;
			goto out;
		}
		if (cut) {
			ret = TLS_ASM_MORE;
			goto out;
		}

		size_t have = cur_left(&c); /* bytes of this header present */
		uint8_t type = cur_u8(&c);
		uint8_t major = cur_u8(&c);
		cur_skip(&c, 1); /* minor: any */
		uint16_t rlen = cur_be16(&c);
		if (c.err) {
			/* a header cut short: judge the bytes that are there (a
			 * failed cursor read leaves the earlier values intact) */
			ret = TLS_ASM_MORE;
			if (first && ((have >= 1 && type != CT_HANDSHAKE && type != CT_CCS) ||
				      (have >= 2 && major < 3)))
				ret = TLS_ASM_NOT_HS;
			goto out;
		}
		if (ccs_record(type, major, rlen)) {
			/* GnuTLS takes a ChangeCipherSpec before the ClientHello
			 * and among its records (pcaps/review21/tls): skipped */
			cur_skip(&c, 1);
			if (c.err) {
				ret = TLS_ASM_MORE;
				goto out;
			}
			rec_end = n - cur_left(&c);
			continue;
		}
		/* the first record's major may be above 3: haproxy routes such a
		 * hello (tls_sniff); later records are held to 3 */
		if (type != CT_HANDSHAKE || major < 3 || (major != 3 && !first)) {
			ret = first ? TLS_ASM_NOT_HS : TLS_ASM_BAD;
			if (!first)
				*why = type != CT_HANDSHAKE
					       ? "a non-handshake record inside the handshake message"
					       : "record version is not 3.x";
			goto out;
		}
		if (rlen > TLS_REC_MAX) {
			ret = TLS_ASM_BAD;
			*why = "record longer than 2^14 bytes";
			goto out;
		}
		first = 0;
		rec_end = (n - cur_left(&c)) + rlen;

		struct cur r = cur_take_upto(&c, rlen, &cut);
		size_t k = cur_left(&r);
		if (k > cap - got)
			k = cap - got;
		cur_bytes(&r, buf + got, k);
		got += k;
		if (!need && got >= 4) {
			struct cur h = cur_init(buf, got);
			cur_skip(&h, 1);
			need = 4 + (size_t)cur_be24(&h);
		}
	}
out:
	*msg_len = got;
	*used = rec_end;
	return ret;
}

int tls_reassemble(const uint8_t *s, size_t n, uint8_t *buf, size_t cap, size_t *msg_len,
		   const char **why)
{
	size_t used;

	return tls_gather(s, n, buf, cap, msg_len, &used, why);
}

int tls_next(const uint8_t *s, size_t n, size_t *skip)
{
	struct cur c = cur_init(s, n);

	*skip = 0;
	for (;;) {
		uint8_t type = cur_u8(&c);
		uint8_t major = cur_u8(&c);
		cur_skip(&c, 1); /* minor: any */
		uint16_t rlen = cur_be16(&c);
		size_t have = n - *skip; /* bytes of this record header present */

		if (c.err) {
			/* judge the bytes of the header that are there */
			if ((have >= 1 && type != CT_HANDSHAKE && type != CT_CCS) ||
			    (have >= 2 && major != 3))
				return TLS_NEXT_END;
			return TLS_NEXT_WAIT;
		}
		if (major != 3)
			return TLS_NEXT_END;
		if (type == CT_HANDSHAKE)
			return TLS_NEXT_HS;
		if (type != CT_CCS || rlen != 1)
			return TLS_NEXT_END; /* application data, alert, ... */
		cur_skip(&c, rlen);
		if (c.err)
			return TLS_NEXT_WAIT;
		*skip = n - cur_left(&c);
	}
}

/* ---- STARTTLS ------------------------------------------------------------- */

/* A byte of a text protocol line: no control characters but tab, CR and LF. */
static int text_byte(uint8_t b)
{
	return (b >= 0x20 && b != 0x7f) || b == '\t' || b == '\r' || b == '\n';
}

static int upper(uint8_t b)
{
	return b >= 'a' && b <= 'z' ? b - 'a' + 'A' : b;
}

/* The line s[0..n) (line end removed) equals lit, ASCII case-insensitively. */
static int line_is(const uint8_t *s, size_t n, const char *lit)
{
	size_t k = strlen(lit);

	if (n != k)
		return 0;
	for (size_t i = 0; i < k; i++)
		if (upper(s[i]) != (uint8_t)lit[i])
			return 0;
	return 1;
}

/*
 * A command after which the client speaks TLS: STARTTLS (SMTP, LMTP, NNTP,
 * ManageSieve), "<tag> STARTTLS" (IMAP), STLS (POP3), AUTH TLS / AUTH SSL
 * (FTP, RFC 4217).
 */
static int starttls_cmd(const uint8_t *s, size_t n)
{
	if (line_is(s, n, "STARTTLS") || line_is(s, n, "STLS") || line_is(s, n, "AUTH TLS") ||
	    line_is(s, n, "AUTH SSL"))
		return 1;
	if (n <= 9 || !line_is(s + n - 9, 9, " STARTTLS"))
		return 0;
	for (size_t i = 0; i < n - 9; i++)
		if (s[i] == ' ')
			return 0; /* the IMAP tag is one token */
	return 1;
}

int tls_starttls(const uint8_t *s, size_t n, int client, size_t *off)
{
	size_t m = n < TLS_STARTTLS_SCAN ? n : TLS_STARTTLS_SCAN;
	int more = m == n ? 0 : -1; /* running out: wait, or past the scan bound */
	struct cur c = cur_init(s, m);
	int armed = 0; /* a TLS record may start at this line start */

	*off = 0;
	while (cur_left(&c)) {
		size_t at = m - cur_left(&c), len = 0;
		const uint8_t *line = s + at;

		if (armed && line[0] == CT_HANDSHAKE) {
			struct cur h = cur_init(line, m - at);
			cur_skip(&h, 1);
			uint8_t major = cur_u8(&h);
			cur_skip(&h, 1); /* minor: any (tls_sniff) */
			if (h.err)
				return (m - at >= 2 && major != 3) ? -1 : more;
			if (major != 3)
				return -1;
			*off = at;
			return 1;
		}
		for (;;) {
			uint8_t b = cur_u8(&c);
			if (c.err)
				return more; /* the line goes on */
			if (!text_byte(b))
				return -1;
			if (b == '\n')
				break;
			len++;
		}
		if (len && line[len - 1] == '\r')
			len--;
		armed = client ? starttls_cmd(line, len) : 1;
	}
	return more;
}

/* ---- upgrades that are not text lines: XMPP, PostgreSQL, LDAP, MySQL ------ */

/* A handshake record head (0x16 0x03, any minor: see tls_sniff) at s[at..n),
 * at <= n: 1; 0 when the bytes there so far could still be one; -1 when
 * they are not. */
static int record_at(const uint8_t *s, size_t n, size_t at)
{
	struct cur c = cur_init(s + at, n - at);
	uint8_t b;

	b = cur_u8(&c);
	if (c.err)
		return 0;
	if (b != CT_HANDSHAKE)
		return -1;
	b = cur_u8(&c);
	if (c.err)
		return 0;
	if (b != 3)
		return -1;
	cur_skip(&c, 1); /* minor: any */
	return c.err ? 0 : 1;
}

/* Where TLS starts at s[at..n) (at <= n): 1 with *off = at, or record_at's
 * 0 or -1. */
static int tls_from(const uint8_t *s, size_t n, size_t at, size_t *off)
{
	int r = record_at(s, n, at);

	if (r == 1)
		*off = at;
	return r;
}

/* The first "</name>" in s[from..m): 1 with *end just past it, or 0. */
static int xml_close_tag(const uint8_t *s, size_t m, size_t from, const char *name, size_t nl,
			 size_t *end)
{
	while (from < m) {
		const uint8_t *o = memchr(s + from, '<', m - from);
		size_t i;

		if (!o)
			return 0;
		i = (size_t)(o - s);
		from = i + 1;
		if (m - i >= nl + 3 && s[i + 1] == '/' && memcmp(s + i + 2, name, nl) == 0 &&
		    s[i + 2 + nl] == '>') {
			*end = i + nl + 3;
			return 1;
		}
	}
	return 0;
}

/*
 * The end of the XML element <name ...> of s[0..m): just past "/>" when it
 * closes itself, else past "</name>". 1 with *end set; 0 when it is not
 * there whole (yet).
 */
static int xml_element_end(const uint8_t *s, size_t m, const char *name, size_t *end)
{
	size_t nl = strlen(name), at = 0;

	while (at < m) {
		const uint8_t *o = memchr(s + at, '<', m - at);
		size_t i, k;

		if (!o)
			return 0;
		i = (size_t)(o - s) + 1;
		at = i;
		if (m - i < nl + 1 || memcmp(s + i, name, nl) != 0)
			continue;
		k = i + nl;
		if (s[k] != ' ' && s[k] != '/' && s[k] != '>' && s[k] != '\t' && s[k] != '\r' &&
		    s[k] != '\n')
			continue; /* <starttlsX>: another element */
		const uint8_t *gt = memchr(s + k, '>', m - k);
		if (!gt)
			return 0;
		k = (size_t)(gt - s);
		if (s[k - 1] == '/') {
			*end = k + 1;
			return 1;
		}
		return xml_close_tag(s, m, k, name, nl, end);
	}
	return 0;
}

/*
 * XMPP (RFC 6120 section 5): the client's <starttls
 * xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>, the server's <proceed .../>;
 * TLS starts right after it (XML white space may come between). Every byte
 * before must be text.
 */
static int upgrade_xmpp(const uint8_t *s, size_t n, int client, size_t *off)
{
	size_t m = n < TLS_STARTTLS_SCAN ? n : TLS_STARTTLS_SCAN, end = 0, i;
	int found = xml_element_end(s, m, client ? "starttls" : "proceed", &end);
	size_t upto = found ? end : m;

	for (i = 0; i < upto; i++)
		if (!text_byte(s[i]))
			return -1;
	if (!found)
		return m == n ? 0 : -1;
	while (end < n && (s[end] == ' ' || s[end] == '\t' || s[end] == '\r' || s[end] == '\n'))
		end++;
	return tls_from(s, n, end, off);
}

/* PostgreSQL: the client's SSLRequest (length 8, code 80877103), the
 * server's 'S'; TLS right after. ('N', or a GSSENCRequest, is no TLS.) */
static int upgrade_pgsql(const uint8_t *s, size_t n, int client, size_t *off)
{
	static const uint8_t ssl_request[8] = {0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f};
	size_t k = n < sizeof(ssl_request) ? n : sizeof(ssl_request);

	if (!client) {
		if (n == 0)
			return 0;
		return s[0] == 'S' ? tls_from(s, n, 1, off) : -1;
	}
	if (memcmp(s, ssl_request, k) != 0)
		return -1;
	return k < sizeof(ssl_request) ? 0 : tls_from(s, n, sizeof(ssl_request), off);
}

/* A BER tag and definite length (up to 2 length bytes) from c. 0, or -1
 * when c ran out (c->err set) or the length form is not one a StartTLS
 * message uses (c->err clear). */
static int ber_head(struct cur *c, uint8_t *tag, size_t *len)
{
	uint8_t l;

	*tag = cur_u8(c);
	l = cur_u8(c);
	if (c->err)
		return -1;
	if (l < 0x80) {
		*len = l;
		return 0;
	}
	if (l == 0x81)
		*len = cur_u8(c);
	else if (l == 0x82)
		*len = cur_be16(c);
	else
		return -1;
	return c->err ? -1 : 0;
}

#define LDAP_STARTTLS_OID "1.3.6.1.4.1.1466.20037"
#define LDAP_MSG_MAX 1024 /* a StartTLS request or response is far shorter */

/*
 * LDAP (RFC 4511 section 4.14): the client's ExtendedRequest [APPLICATION
 * 23] naming the StartTLS OID, the server's ExtendedResponse [APPLICATION
 * 24] with resultCode success (0); TLS right after that LDAPMessage.
 */
static int upgrade_ldap(const uint8_t *s, size_t n, int client, size_t *off)
{
	struct cur c = cur_init(s, n), body, op;
	size_t len;
	uint8_t tag;

	if (ber_head(&c, &tag, &len) < 0)
		return c.err && (n == 0 || s[0] == 0x30) ? 0 : -1;
	if (tag != 0x30 || len > LDAP_MSG_MAX)
		return -1;
	if (!cur_has(&c, len))
		return 0;
	body = cur_take(&c, len);
	/* messageID INTEGER */
	if (ber_head(&body, &tag, &len) < 0 || tag != 0x02 || len < 1 || len > 4)
		return -1;
	cur_skip(&body, len);
	if (ber_head(&body, &tag, &len) < 0 || tag != (client ? 0x77 : 0x78) || !cur_has(&body, len))
		return -1;
	op = cur_take(&body, len);
	if (client) {
		/* requestName [0] LDAPOID */
		if (ber_head(&op, &tag, &len) < 0 || tag != 0x80 ||
		    len != sizeof(LDAP_STARTTLS_OID) - 1)
			return -1;
		const uint8_t *oid = cur_ptr(&op, len);
		if (!oid || memcmp(oid, LDAP_STARTTLS_OID, len) != 0)
			return -1;
	} else {
		/* resultCode ENUMERATED success */
		if (ber_head(&op, &tag, &len) < 0 || tag != 0x0a || len != 1 || cur_u8(&op) != 0 ||
		    op.err)
			return -1;
	}
	return tls_from(s, n, n - cur_left(&c), off);
}

/*
 * MySQL: the server speaks first, a greeting packet (3-byte little-endian
 * length, sequence 0, protocol version 10), and TLS starts right after it;
 * the client answers with an SSLRequest (length 32, sequence 1, capability
 * CLIENT_SSL 0x0800) and TLS starts right after that.
 */
#define MYSQL_CLIENT_SSL 0x0800u
#define MYSQL_GREETING_MAX 1024

static int upgrade_mysql(const uint8_t *s, size_t n, int client, size_t *off)
{
	static const uint8_t request_head[4] = {32, 0, 0, 1}; /* length 32, sequence 1 */
	struct cur c = cur_init(s, n);

	if (client) {
		size_t k = n < sizeof(request_head) ? n : sizeof(request_head);
		if (memcmp(s, request_head, k) != 0)
			return -1;
		cur_skip(&c, sizeof(request_head));
		uint32_t caps = cur_le32(&c);
		if (c.err)
			return 0;
		if (!(caps & MYSQL_CLIENT_SSL))
			return -1;
		return n < 4 + 32 ? 0 : tls_from(s, n, 4 + 32, off);
	}
	uint32_t len = cur_u8(&c);
	len |= (uint32_t)cur_u8(&c) << 8;
	len |= (uint32_t)cur_u8(&c) << 16;
	uint8_t seq = cur_u8(&c);
	uint8_t proto = cur_u8(&c);
	if (c.err)
		return 0;
	if (seq != 0 || proto != 10 || len > MYSQL_GREETING_MAX)
		return -1;
	return n < 4 + (size_t)len ? 0 : tls_from(s, n, 4 + (size_t)len, off);
}

int tls_upgrade(const uint8_t *s, size_t n, int client, int *kind, size_t *off)
{
	int r, best = -1;

	*off = 0;
	if (!client) {
		switch (*kind) {
		case TLS_UP_XMPP:
			return upgrade_xmpp(s, n, 0, off);
		case TLS_UP_PGSQL:
			return upgrade_pgsql(s, n, 0, off);
		case TLS_UP_LDAP:
			return upgrade_ldap(s, n, 0, off);
		case TLS_UP_MYSQL:
			return upgrade_mysql(s, n, 0, off);
		default:
			return tls_starttls(s, n, 0, off);
		}
	}
	/* The client: text lines first, then the others by their first byte. */
	r = tls_starttls(s, n, 1, off);
	if (r == 1) {
		*kind = TLS_UP_TEXT;
		return 1;
	}
	best = r;
	if (n == 0)
		return 0;
	switch (s[0]) {
	case '<':
		r = upgrade_xmpp(s, n, 1, off);
		*kind = TLS_UP_XMPP;
		break;
	case 0x00:
		r = upgrade_pgsql(s, n, 1, off);
		*kind = TLS_UP_PGSQL;
		break;
	case 0x30:
		r = upgrade_ldap(s, n, 1, off);
		*kind = TLS_UP_LDAP;
		break;
	case 32: /* the length byte of MySQL's SSLRequest */
		r = upgrade_mysql(s, n, 1, off);
		*kind = TLS_UP_MYSQL;
		break;
	default:
		r = -1;
		break;
	}
	if (r == 1)
		return 1;
	*kind = 0;
	return r > best ? r : best;
}

/* ---- handshake parsing ---------------------------------------------------- */

struct pctx {
	struct tls_hello *o;
	int result; /* MOD_OK until the first stop */
};

/* Stop the parse; the first result (and reason) wins. */
static void stop(struct pctx *x, int result, const char *why)
{
	if (x->result != MOD_OK)
		return;
	x->result = result;
	if (result == MOD_MALFORMED)
		x->o->reason = why;
}

/*
 * After reads from c: non-zero (and the parse stopped) when c ran out. An
 * open cursor ends at the cut of a prefix, so running out of it is
 * truncation; a closed one ends at a length field, so it is malformed.
 */
static int ran_out(struct pctx *x, const struct cur *c, int open, const char *why)
{
	if (!c->err)
		return 0;
	stop(x, open ? MOD_TRUNCATED : MOD_MALFORMED, why);
	return 1;
}

/* A sub-cursor of exactly n bytes for a length field; non-zero when short. */
static int take(struct pctx *x, struct cur *c, int open, size_t n, struct cur *sub,
		const char *why)
{
	*sub = cur_take(c, n);
	return ran_out(x, c, open, why);
}

/* A length field's bytes must exactly fill the extension that holds it. */
static int leftover(struct pctx *x, const struct cur *c, const char *why)
{
	if (cur_left(c) == 0)
		return 0;
	stop(x, MOD_MALFORMED, why);
	return 1;
}

/*
 * Append one protocol name, escaped, to a text list (sep between items),
 * whole or not at all; commas inside it become \x2c when sep is ','.
 */
static void list_add(char *buf, size_t cap, size_t *len, char sep, const uint8_t *s, size_t n,
		     int *cut)
{
	char piece[4 * 255 + 1];
	size_t pl = 0;

	for (size_t i = 0; i < n && i < 255; i++) {
		if (sep == ',' && s[i] == ',') {
			memcpy(piece + pl, "\\x2c", 4);
			pl += 4;
		} else {
			pl += text_escape(piece + pl, sizeof(piece) - pl, s + i, 1, NULL);
		}
	}
	if (pl + (*len ? 1 : 0) > cap - 1 - *len) {
		*cut = 1;
		return;
	}
	if (*len)
		buf[(*len)++] = sep;
	memcpy(buf + *len, piece, pl);
	*len += pl;
	buf[*len] = '\0';
}

/* server_name (RFC 6066): a list of (name_type, name); the first host_name is the SNI. */
static void ext_server_name(struct pctx *x, struct cur *v)
{
	struct tls_hello *o = x->o;
	struct cur list;
	uint16_t n = cur_be16(v);

	if (ran_out(x, v, 0, "server_name extension shorter than its list length") ||
	    take(x, v, 0, n, &list, "server_name list runs past its extension") ||
	    leftover(x, v, "bytes after the server_name list"))
		return;
	if (n == 0) {
		stop(x, MOD_MALFORMED, "empty server_name list");
		return;
	}
	while (cur_left(&list)) {
		uint8_t type = cur_u8(&list);
		uint16_t hl = cur_be16(&list);
		struct cur h;

		if (ran_out(x, &list, 0, "server_name entry runs past its list") ||
		    take(x, &list, 0, hl, &h, "host_name runs past the server_name list"))
			return;
		if (type != 0 || o->has_sni)
			continue;
		if (hl == 0) {
			stop(x, MOD_MALFORMED, "empty host_name");
			return;
		}
		int cut = 0;
		o->sni_len = text_escape(o->sni, sizeof(o->sni), cur_ptr(&h, hl), hl, &cut);
		o->cut |= cut;
		o->has_sni = 1;
	}
}

/* ALPN (RFC 7301): a list of non-empty protocol names, each length-prefixed. */
static void ext_alpn(struct pctx *x, struct cur *v)
{
	struct tls_hello *o = x->o;
	struct cur list;
	uint16_t n = cur_be16(v);

	if (ran_out(x, v, 0, "ALPN extension shorter than its list length") ||
	    take(x, v, 0, n, &list, "ALPN list runs past its extension") ||
	    leftover(x, v, "bytes after the ALPN list"))
		return;
	if (n == 0) {
		stop(x, MOD_MALFORMED, "empty ALPN list");
		return;
	}
	while (cur_left(&list)) {
		uint8_t pl = cur_u8(&list);
		struct cur pn;

		if (pl == 0) {
			stop(x, MOD_MALFORMED, "empty ALPN protocol name");
			return;
		}
		if (take(x, &list, 0, pl, &pn, "ALPN protocol name runs past its list"))
			return;
		const uint8_t *s = cur_ptr(&pn, pl);
		if (o->n_alpn++ == 0) {
			o->ja_alpn = 1;
			o->ja_alpn_first = s[0];
			o->ja_alpn_last = s[pl - 1];
		}
		list_add(o->alpn, sizeof(o->alpn), &o->alpn_len, REC_GS, s, pl, &o->cut);
		list_add(o->alpn_aux, sizeof(o->alpn_aux), &o->alpn_aux_len, ',', s, pl, &o->cut);
	}
}

/* supported_versions in a ClientHello (RFC 8446 4.2.1): u8 length, 2-byte versions. */
static void ext_versions(struct pctx *x, struct cur *v)
{
	struct tls_hello *o = x->o;
	struct cur list;
	uint8_t n = cur_u8(v);

	if (ran_out(x, v, 0, "empty supported_versions extension"))
		return;
	if (n == 0 || n % 2) {
		stop(x, MOD_MALFORMED, "supported_versions length is odd or zero");
		return;
	}
	if (take(x, v, 0, n, &list, "supported_versions list runs past its extension") ||
	    leftover(x, v, "bytes after the supported_versions list"))
		return;
	o->has_versions = 1;
	while (cur_left(&list)) {
		uint16_t ver = cur_be16(&list);
		if (!tls_grease(ver) && o->n_versions < NELEM(o->versions))
			o->versions[o->n_versions++] = ver;
	}
}

/* signature_algorithms (RFC 8446 4.2.3): 2-byte length, 2-byte schemes. */
static void ext_sigalgs(struct pctx *x, struct cur *v)
{
	struct tls_hello *o = x->o;
	struct cur list;
	uint16_t n = cur_be16(v);

	if (ran_out(x, v, 0, "signature_algorithms extension shorter than its list length"))
		return;
	if (n == 0 || n % 2) {
		stop(x, MOD_MALFORMED, "signature_algorithms length is odd or zero");
		return;
	}
	if (take(x, v, 0, n, &list, "signature_algorithms list runs past its extension") ||
	    leftover(x, v, "bytes after the signature_algorithms list"))
		return;
	while (cur_left(&list)) {
		uint16_t alg = cur_be16(&list);
		if (!tls_grease(alg) && o->ja_nsigalgs < NELEM(o->ja_sigalgs))
			o->ja_sigalgs[o->ja_nsigalgs++] = alg;
	}
}

/*
 * The host_name an SNI router takes from the ClientHello at m[0..n) (its
 * 4-byte header first), read as leniently as the routers of the review21
 * lab read it (pcaps/review21/tls/FINDINGS.md), so that a name one of them
 * acts on is reported even where the strict parse above finds none or
 * another: a session_id of any length and no compression method (nginx's
 * ssl_preread), the first server_name extension whose first entry is a
 * host_name, that entry's length trusted over the list's and the
 * extension's (haproxy's req.ssl_sni), and the name cut at its first NUL
 * (what a router's string match sees). Bounded by n and by the declared
 * message length; the extensions block must fit it, and each extension
 * the block. The name is escaped into dst (cap bytes, NUL-terminated);
 * returns its length, 0 when there is none. Pure.
 */
size_t tls_router_sni(const uint8_t *m, size_t n, char *dst, size_t cap)
{
	struct cur c = cur_init(m, n), v;
	uint8_t type = cur_u8(&c);
	uint32_t hl = cur_be24(&c);
	const uint8_t *end;

	dst[0] = '\0';
	if (c.err || type != TLS_CLIENT_HELLO)
		return 0;
	if (cur_left(&c) > hl)
		c = cur_take(&c, hl);
	end = c.end;
	cur_skip(&c, 2 + 32); /* legacy_version, random */
	cur_skip(&c, cur_u8(&c)); /* session_id: up to 255 bytes */
	cur_skip(&c, cur_be16(&c)); /* cipher_suites */
	cur_skip(&c, cur_u8(&c)); /* compression_methods: none will do */
	uint16_t elen = cur_be16(&c);
	struct cur e = cur_take(&c, elen);
	while (!e.err && cur_left(&e) >= 4) {
		uint16_t et = cur_be16(&e);
		v = cur_take(&e, cur_be16(&e));
		if (e.err)
			return 0;
		if (et != EXT_SERVER_NAME)
			continue;
		cur_skip(&v, 2); /* the list length: not trusted */
		uint8_t nt = cur_u8(&v);
		uint16_t nl = cur_be16(&v);
		if (v.err || nt != 0)
			continue; /* the next server_name extension, if any */
		/* the name may run past its list and extension: to the message's end */
		struct cur name = cur_init(v.p, (size_t)(end - v.p));
		size_t k = nl < cur_left(&name) ? nl : cur_left(&name);
		const uint8_t *q = cur_ptr(&name, k);
		const uint8_t *nul = k ? memchr(q, 0, k) : NULL;
		if (nul)
			k = (size_t)(nul - q);
		return k ? text_escape(dst, cap, q, k, NULL) : 0;
	}
	return 0;
}

static void client_ext(struct pctx *x, uint16_t type, struct cur *v)
{
	switch (type) {
	case EXT_SERVER_NAME:
		ext_server_name(x, v);
		break;
	case EXT_ALPN:
		ext_alpn(x, v);
		break;
	case EXT_SUPPORTED_VERSIONS:
		ext_versions(x, v);
		break;
	case EXT_SIG_ALGS:
		ext_sigalgs(x, v);
		break;
	case EXT_ECH:
	case EXT_ECH_DRAFT:
	case EXT_ESNI:
		x->o->ech = 1;
		break;
	default:
		break;
	}
}

static void server_ext(struct pctx *x, uint16_t type, struct cur *v)
{
	struct tls_hello *o = x->o;

	if (type != EXT_SUPPORTED_VERSIONS)
		return;
	o->version = cur_be16(v);
	if (ran_out(x, v, 0, "ServerHello supported_versions is not 2 bytes") ||
	    leftover(x, v, "ServerHello supported_versions is not 2 bytes"))
		return;
	o->has_versions = 1;
	o->versions[0] = o->version;
	o->n_versions = 1;
}

/* The extensions block: each extension (type, length) is its own sub-cursor. */
static void extensions(struct pctx *x, struct cur *e, int open, int client)
{
	struct tls_hello *o = x->o;

	while (x->result == MOD_OK && cur_left(e)) {
		uint16_t type = cur_be16(e);
		uint16_t len = cur_be16(e);
		struct cur v;

		if (ran_out(x, e, open, "extension header runs past the extensions") ||
		    take(x, e, open, len, &v, "extension runs past the extensions"))
			return;
		if (o->seen[type >> 3] & (1u << (type & 7))) {
			stop(x, MOD_MALFORMED, "extension repeated");
			return;
		}
		o->seen[type >> 3] |= (uint8_t)(1u << (type & 7));
		if (client) {
			o->n_exts++;
			if (!tls_grease(type) && o->ja_nexts < NELEM(o->ja_exts))
				o->ja_exts[o->ja_nexts++] = type;
			client_ext(x, type, &v);
		} else {
			server_ext(x, type, &v);
		}
	}
}

/*
 * The fields both hellos share up to the extensions, then the extensions
 * block (optional: absent when the body ends after compression).
 */
static void hello_body(struct pctx *x, struct cur *b, int open, int client)
{
	struct tls_hello *o = x->o;
	struct cur sid, list, exts;
	int exts_open = 0;

	o->legacy_version = cur_be16(b);
	cur_skip(b, 32); /* random */
	uint8_t sid_len = cur_u8(b);
	if (ran_out(x, b, open, "hello ends before its session_id"))
		return;
	if (sid_len > 32) {
		stop(x, MOD_MALFORMED, "session_id longer than 32 bytes");
		return;
	}
	if (take(x, b, open, sid_len, &sid, "session_id runs past the message"))
		return;
	if (client) {
		uint16_t cs_len = cur_be16(b);
		if (ran_out(x, b, open, "ClientHello ends before its cipher_suites"))
			return;
		if (cs_len == 0 || cs_len % 2) {
			stop(x, MOD_MALFORMED, "cipher_suites length is odd or zero");
			return;
		}
		if (take(x, b, open, cs_len, &list, "cipher_suites run past the message"))
			return;
		while (cur_left(&list)) {
			uint16_t cs = cur_be16(&list);
			o->n_ciphers++;
			if (!tls_grease(cs) && o->ja_nciphers < NELEM(o->ja_ciphers))
				o->ja_ciphers[o->ja_nciphers++] = cs;
		}
		uint8_t comp_len = cur_u8(b);
		if (ran_out(x, b, open, "ClientHello ends before its compression_methods"))
			return;
		if (comp_len == 0) {
			stop(x, MOD_MALFORMED, "no compression_methods");
			return;
		}
		if (take(x, b, open, comp_len, &list, "compression_methods run past the message"))
			return;
	} else {
		o->cipher = cur_be16(b);
		cur_skip(b, 1); /* compression_method */
		if (ran_out(x, b, open, "ServerHello ends before its compression_method"))
			return;
	}
	if (cur_left(b) == 0)
		return; /* no extensions (TLS 1.2 and older may omit them) */

	uint16_t ext_len = cur_be16(b);
	if (ran_out(x, b, open, "extensions length cut"))
		return;
	if (cur_has(b, ext_len)) {
		exts = cur_take(b, ext_len);
	} else if (open) {
		exts = cur_take_upto(b, ext_len, &exts_open);
	} else {
		stop(x, MOD_MALFORMED, "extensions run past the message");
		return;
	}
	extensions(x, &exts, exts_open, client);
	if (x->result == MOD_OK)
		leftover(x, b, "bytes after the extensions");
}

static int cmp_u16(const void *a, const void *b)
{
	uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;
	return (x > y) - (x < y);
}

/* One "xxxx" item of a JA4 hash input, comma-separated from the previous. */
static void ja4_item(struct sha256 *h, uint16_t v, unsigned *n)
{
	char t[7];

	if ((*n)++)
		sha256_update(h, ",", 1);
	hex16(t, v);
	sha256_update(h, t + 2, 4);
}

/* The first 12 hex digits of the digest, or twelve zeros for an empty input. */
static void ja4_hash12(struct sha256 *h, unsigned n, char *dst)
{
	uint8_t d[SHA256_LEN];

	if (n == 0) {
		memset(dst, '0', 12);
		return;
	}
	sha256_final(h, d);
	for (int i = 0; i < 6; i++) {
		dst[2 * i] = hexdig[d[i] >> 4];
		dst[2 * i + 1] = hexdig[d[i] & 15];
	}
}

static const char *ja4_version(uint16_t v)
{
	switch (v) {
	case 0x0304:
		return "13";
	case 0x0303:
		return "12";
	case 0x0302:
		return "11";
	case 0x0301:
		return "10";
	case 0x0300:
		return "s3";
	case 0x0002:
		return "s2";
	case 0xfeff:
		return "d1";
	case 0xfefd:
		return "d2";
	case 0xfefc:
		return "d3";
	default:
		return "00";
	}
}

static int alnum(uint8_t b)
{
	return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
}

/*
 * JA4 (FoxIO, "JA4: TLS Client Fingerprinting"):
 *   t (q when the transport is "quic"), version, d|i (SNI extension
 *   present), cipher count, extension count (two digits each, capped at
 *   99, GREASE left out), first and last character of the first ALPN name
 *   ("00" without ALPN; when either end is not ASCII alphanumeric, the
 *   first and last hex digit of the name), "_",
 *   sha256 of the sorted ciphers, "_", sha256 of the sorted extensions
 *   without server_name and ALPN, then "_" and the signature algorithms in
 *   wire order (left out when there are none). Hashes are cut to 12 hex
 *   digits; an empty input hashes to twelve zeros.
 */
static void ja4(struct tls_hello *o)
{
	char *p = o->ja4;
	struct sha256 h;
	unsigned n = 0, ns = 0;
	unsigned nc = o->ja_nciphers > 99 ? 99 : o->ja_nciphers;
	unsigned ne = o->ja_nexts > 99 ? 99 : o->ja_nexts;

	*p++ = o->transport && strcmp(o->transport, "quic") == 0 ? 'q' : 't';
	memcpy(p, ja4_version(o->version), 2);
	p += 2;
	*p++ = (o->seen[0] & 1) ? 'd' : 'i';
	*p++ = (char)('0' + nc / 10);
	*p++ = (char)('0' + nc % 10);
	*p++ = (char)('0' + ne / 10);
	*p++ = (char)('0' + ne % 10);
	if (!o->ja_alpn) {
		*p++ = '0';
		*p++ = '0';
	} else if (alnum(o->ja_alpn_first) && alnum(o->ja_alpn_last)) {
		*p++ = (char)o->ja_alpn_first;
		*p++ = (char)o->ja_alpn_last;
	} else {
		*p++ = hexdig[o->ja_alpn_first >> 4];
		*p++ = hexdig[o->ja_alpn_last & 15];
	}
	*p++ = '_';

	qsort(o->ja_ciphers, o->ja_nciphers, sizeof(o->ja_ciphers[0]), cmp_u16);
	sha256_init(&h);
	for (unsigned i = 0; i < o->ja_nciphers; i++)
		ja4_item(&h, o->ja_ciphers[i], &n);
	ja4_hash12(&h, n, p);
	p += 12;
	*p++ = '_';

	qsort(o->ja_exts, o->ja_nexts, sizeof(o->ja_exts[0]), cmp_u16);
	sha256_init(&h);
	n = 0;
	for (unsigned i = 0; i < o->ja_nexts; i++)
		if (o->ja_exts[i] != EXT_SERVER_NAME && o->ja_exts[i] != EXT_ALPN)
			ja4_item(&h, o->ja_exts[i], &n);
	if (o->ja_nsigalgs) {
		sha256_update(&h, "_", 1);
		for (unsigned i = 0; i < o->ja_nsigalgs; i++)
			ja4_item(&h, o->ja_sigalgs[i], &ns);
	}
	ja4_hash12(&h, n + ns, p);
	p += 12;
	*p = '\0';
}

/* The detail record of tls.h from the parsed fields. */
static void write_record(struct tls_hello *o)
{
	struct rec *r = &o->rec;
	char t[8];
	const char *trunc = (o->flags & OBS_F_TRUNCATED) ? "1" : "0";

	rec_init(r, o->info_buf, sizeof(o->info_buf));
	if (o->hs_type == TLS_CLIENT_HELLO) {
		rec_field(r, o->sni, o->sni_len);
		rec_field(r, o->alpn, o->alpn_len);
		rec_field(r, t, hex16(t, o->legacy_version));
		rec_field(r, "", 0);
		for (unsigned i = 0; i < o->n_versions; i++) {
			if (i)
				rec_sep(r, REC_GS);
			rec_raw(r, t, hex16(t, o->versions[i]));
		}
		rec_u64(r, o->n_ciphers);
		rec_u64(r, o->n_exts);
		rec_str(r, o->ech ? "1" : "0");
		rec_str(r, o->ja4);
		rec_str(r, o->reason ? o->reason : "");
		rec_field(r, t, hex16(t, o->version));
		rec_str(r, trunc);
		if (o->transport)
			rec_str(r, o->transport);
	} else {
		rec_field(r, t, hex16(t, o->version));
		rec_field(r, t, hex16(t, o->cipher));
		rec_field(r, t, hex16(t, o->legacy_version));
		rec_str(r, o->reason ? o->reason : "");
		rec_str(r, trunc);
	}
	rec_end(r);
	o->info = o->info_buf;
	o->info_len = r->len;
}

/* Every result field of out cleared, before a parse. */
static void hello_reset(struct tls_hello *out, const char *transport)
{
	memset(out, 0, offsetof(struct tls_hello, ja_ciphers));
	out->ja_nciphers = out->ja_nexts = out->ja_nsigalgs = 0;
	out->ja_alpn = 0;
	memset(out->seen, 0, sizeof(out->seen));
	out->info = out->info_buf;
	out->info_buf[0] = '\0';
	out->transport = transport;
}

/* The highest version a ClientHello offers: supported_versions, else legacy_version. */
static void client_version(struct tls_hello *out)
{
	out->version = out->legacy_version;
	if (out->n_versions) {
		out->version = out->versions[0];
		for (unsigned i = 1; i < out->n_versions; i++)
			if (out->versions[i] > out->version)
				out->version = out->versions[i];
	}
}

int tls_parse_handshake(const uint8_t *msg, size_t len, unsigned flags, struct tls_hello *out)
{
	return tls_parse_transport(msg, len, flags, NULL, out);
}

int tls_parse_transport(const uint8_t *msg, size_t len, unsigned flags, const char *transport,
			struct tls_hello *out)
{
	struct pctx x = {out, MOD_OK};
	struct cur c = cur_init(msg, len), b;
	int trunc = (flags & OBS_F_TRUNCATED) != 0, open = 0;

	hello_reset(out, transport);

	uint8_t type = cur_u8(&c);
	uint32_t hl = cur_be24(&c);
	if (len && type != TLS_CLIENT_HELLO && type != TLS_SERVER_HELLO)
		return MOD_NOT_MINE;
	if (c.err)
		return trunc ? MOD_TRUNCATED : MOD_MALFORMED;
	out->hs_type = type;
	out->hs_len = hl;
	if (cur_has(&c, hl)) {
		b = cur_take(&c, hl);
	} else {
		/* a prefix: parse what is there; without the flag, the length lies */
		if (!trunc)
			stop(&x, MOD_MALFORMED, "handshake message runs past its end");
		b = cur_take_upto(&c, hl, &open);
	}

	hello_body(&x, &b, open, type == TLS_CLIENT_HELLO);
	if (open && x.result == MOD_OK)
		x.result = MOD_TRUNCATED;

	if (type == TLS_CLIENT_HELLO) {
		client_version(out);
		if (x.result == MOD_OK)
			ja4(out);
	} else if (!out->has_versions) {
		out->version = out->legacy_version;
	}
	if (x.result == MOD_MALFORMED)
		out->flags |= OBS_F_MALFORMED;
	if (open)
		out->flags |= OBS_F_TRUNCATED;
	write_record(out);
	return x.result;
}

/* ---- a ClientHello too big for the window: the streaming walk ------------- */

/*
 * The steps of the walk, in message order. A fixed step gathers its bytes
 * (wsize) in acc, across record and segment edges, then is judged whole; a
 * run step (wsize 0) passes w->run bytes as they come, keeping those of the
 * first host_name and of ALPN names. Each step reads inside the innermost
 * open length (left[depth]), as the whole parse reads inside its sub-cursor,
 * and stops with the whole parse's reason where that one would.
 */
enum wstep {
	W_HDR,      /* handshake type and length */
	W_VERSION,  /* legacy_version */
	W_RANDOM,   /* random, session_id length */
	W_SID,      /* run: session_id */
	W_CS_LEN,   /* cipher_suites length */
	W_CS,       /* a cipher suite (depth 1) */
	W_COMP_LEN, /* compression_methods length */
	W_COMP,     /* run: compression_methods */
	W_EXT_LEN,  /* extensions length */
	W_EXT_HDR,  /* an extension's type and length (depth 1) */
	W_EXT_SKIP, /* run: an extension body not looked into (depth 2) */
	W_SN_LEN,   /* server_name list length (depth 2) */
	W_SN_ENT,   /* a server_name entry's type and length (depth 3) */
	W_SN_NAME,  /* run: its name */
	W_AL_LEN,   /* ALPN list length (depth 2) */
	W_AL_NLEN,  /* an ALPN name's length (depth 3) */
	W_AL_NAME,  /* run: the name */
	W_SV_LEN,   /* supported_versions list length (depth 2) */
	W_SV,       /* a version (depth 3) */
	W_SA_LEN,   /* signature_algorithms list length (depth 2) */
	W_SA,       /* a signature algorithm (depth 3) */
	W_END,      /* walked whole, or stopped */
};

/* Bytes of each fixed step; 0 for runs. */
static const uint8_t wsize[W_END] = {
	[W_HDR] = 4,     [W_VERSION] = 2,  [W_RANDOM] = 33, [W_CS_LEN] = 2,
	[W_CS] = 2,      [W_COMP_LEN] = 1, [W_EXT_LEN] = 2, [W_EXT_HDR] = 4,
	[W_SN_LEN] = 2,  [W_SN_ENT] = 3,   [W_AL_LEN] = 2,  [W_AL_NLEN] = 1,
	[W_SV_LEN] = 1,  [W_SV] = 2,       [W_SA_LEN] = 2,  [W_SA] = 2,
};

/* Why a fixed step did not fit its length: the whole parse's words. */
static const char *const wshort[W_END] = {
	[W_VERSION] = "hello ends before its session_id",
	[W_RANDOM] = "hello ends before its session_id",
	[W_CS_LEN] = "ClientHello ends before its cipher_suites",
	[W_CS] = "cipher_suites run past the message", /* not reached: even length */
	[W_COMP_LEN] = "ClientHello ends before its compression_methods",
	[W_EXT_LEN] = "extensions length cut",
	[W_EXT_HDR] = "extension header runs past the extensions",
	[W_SN_LEN] = "server_name extension shorter than its list length",
	[W_SN_ENT] = "server_name entry runs past its list",
	[W_AL_LEN] = "ALPN extension shorter than its list length",
	[W_AL_NLEN] = "ALPN protocol name runs past its list", /* not reached */
	[W_SV_LEN] = "empty supported_versions extension",
	[W_SV] = "supported_versions list runs past its extension", /* not reached */
	[W_SA_LEN] = "signature_algorithms extension shorter than its list length",
	[W_SA] = "signature_algorithms list runs past its extension", /* not reached */
};

/* Extensions looked into (exts_seen, exts_done). */
enum { WX_SNI = 1, WX_ALPN = 2, WX_VERSIONS = 4, WX_SIGALGS = 8 };

static void wstop(struct tls_walk *w, const char *why)
{
	w->reason = why;
	w->step = W_END;
}

static uint16_t acc16(const struct tls_walk *w, size_t at)
{
	return (uint16_t)(w->acc[at] << 8 | w->acc[at + 1]);
}

/* Open a length of n bytes at the next depth (n fits: checked by the caller). */
static void wopen(struct tls_walk *w, uint32_t n)
{
	w->left[++w->depth] = n;
}

static void wnext(struct tls_walk *w);

/* The next step is a fixed one: it must fit the innermost length. */
static void wgo(struct tls_walk *w, enum wstep step)
{
	w->step = (uint8_t)step;
	w->acc_n = 0;
	if (w->depth > 0 || step != W_HDR)
		if (wsize[step] > w->left[w->depth])
			wstop(w, wshort[step]);
}

/* The next step is a run of n bytes (n fits: checked by the caller); an
 * empty one is over at once. */
static void wrun(struct tls_walk *w, enum wstep step, uint32_t n, int keep)
{
	w->step = (uint8_t)step;
	w->run = w->run_len = n;
	w->keep = (uint8_t)keep;
	if (n == 0)
		wnext(w);
}

/* A list of the innermost length is over when its bytes are. */
static int wlist_over(const struct tls_walk *w)
{
	return w->left[w->depth] == 0;
}

/* The next extension, or the end of the extensions block. */
static void wext_next(struct tls_walk *w)
{
	if (w->left[1] > 0) {
		wgo(w, W_EXT_HDR);
		return;
	}
	w->depth = 0;
	if (w->left[0] > 0)
		wstop(w, "bytes after the extensions");
	else
		w->step = W_END;
}

/* An extension walked whole: what it gave counts now (a cut one counts for
 * nothing, as in the whole parse). */
static void wext_end(struct tls_walk *w)
{
	w->depth = 1;
	switch (w->ext_type) {
	case EXT_SERVER_NAME:
		w->exts_done |= WX_SNI;
		break;
	case EXT_ALPN:
		w->exts_done |= WX_ALPN;
		break;
	case EXT_SUPPORTED_VERSIONS:
		w->exts_done |= WX_VERSIONS;
		break;
	case EXT_SIG_ALGS:
		w->exts_done |= WX_SIGALGS;
		break;
	case EXT_ECH:
	case EXT_ECH_DRAFT:
	case EXT_ESNI:
		w->ech = 1;
		break;
	default:
		break;
	}
	wext_next(w);
}

/* An inner list's length n against what is left of its extension after
 * the length field (left[2]): exactly its bytes. 0 when fine. */
static int wlist_len(struct tls_walk *w, uint32_t n, const char *past, const char *after)
{
	if (n > w->left[2]) {
		wstop(w, past);
		return -1;
	}
	if (n < w->left[2]) {
		wstop(w, after);
		return -1;
	}
	return 0;
}

/* An extension header: repeats, counts, and the walk of its body. */
static void wext_head(struct tls_walk *w, uint16_t type, uint16_t len)
{
	static const uint16_t looked[] = {EXT_SERVER_NAME, EXT_ALPN, EXT_SUPPORTED_VERSIONS,
					  EXT_SIG_ALGS};

	if (len > w->left[1]) {
		wstop(w, "extension runs past the extensions");
		return;
	}
	for (unsigned i = 0; i < NELEM(looked); i++)
		if (type == looked[i]) {
			if (w->exts_seen & (1u << i)) {
				wstop(w, "extension repeated");
				return;
			}
			w->exts_seen |= (uint8_t)(1u << i);
		}
	for (unsigned i = 0; i < w->n_types; i++)
		if (w->types[i] == type) {
			wstop(w, "extension repeated");
			return;
		}
	if (w->n_types < NELEM(w->types))
		w->types[w->n_types++] = type;
	else
		w->inexact = 1; /* later repeats go unseen: no JA4 */
	w->n_exts++;
	w->ext_type = type;
	wopen(w, len);
	switch (type) {
	case EXT_SERVER_NAME:
		wgo(w, W_SN_LEN);
		break;
	case EXT_ALPN:
		wgo(w, W_AL_LEN);
		break;
	case EXT_SUPPORTED_VERSIONS:
		wgo(w, W_SV_LEN);
		break;
	case EXT_SIG_ALGS:
		wgo(w, W_SA_LEN);
		break;
	default:
		wrun(w, W_EXT_SKIP, len, 0);
		break;
	}
}

/* A server_name entry: the first host_name is kept. */
static void wsn_entry(struct tls_walk *w, uint8_t type, uint16_t hl)
{
	if (hl > w->left[3]) {
		wstop(w, "host_name runs past the server_name list");
		return;
	}
	if (type != 0 || w->sni_state) {
		wrun(w, W_SN_NAME, hl, 0);
		return;
	}
	if (hl == 0) {
		wstop(w, "empty host_name");
		return;
	}
	w->sni_state = 1;
	w->sni_len = 0;
	w->sni_cut = hl > TLS_WALK_SNI;
	wrun(w, W_SN_NAME, hl, 1);
}

/* An ALPN name of pl bytes: kept whole when there is room. */
static void wal_name(struct tls_walk *w, uint8_t pl)
{
	if (pl == 0) {
		wstop(w, "empty ALPN protocol name");
		return;
	}
	if (pl > w->left[3]) {
		wstop(w, "ALPN protocol name runs past its list");
		return;
	}
	int keep = 0;
	if ((size_t)w->alpn_len + 1 + pl <= sizeof(w->alpn)) {
		w->alpn[w->alpn_len++] = pl;
		keep = 2;
	} else {
		w->alpn_cut = 1;
	}
	w->n_alpn++;
	wrun(w, W_AL_NAME, pl, keep);
}

/* A fixed step's bytes are all in acc: judge them and go on. */
static void wfield(struct tls_walk *w)
{
	uint16_t v = w->acc_n >= 2 ? acc16(w, 0) : 0;

	switch (w->step) {
	case W_HDR:
		w->hs_len = (uint32_t)w->acc[1] << 16 | acc16(w, 2);
		if (w->acc[0] != TLS_CLIENT_HELLO || w->hs_len > TLS_WALK_MAX) {
			w->not_hello = 1;
			w->step = W_END;
			return;
		}
		w->depth = 0;
		w->left[0] = w->hs_len;
		wgo(w, W_VERSION);
		return;
	case W_VERSION:
		w->legacy_version = v;
		wgo(w, W_RANDOM);
		return;
	case W_RANDOM:
		if (w->acc[32] > 32) {
			wstop(w, "session_id longer than 32 bytes");
			return;
		}
		if (w->acc[32] > w->left[0]) {
			wstop(w, "session_id runs past the message");
			return;
		}
		wrun(w, W_SID, w->acc[32], 0);
		return;
	case W_CS_LEN:
		if (v == 0 || v % 2) {
			wstop(w, "cipher_suites length is odd or zero");
		} else if (v > w->left[0]) {
			wstop(w, "cipher_suites run past the message");
		} else {
			wopen(w, v);
			wgo(w, W_CS);
		}
		return;
	case W_CS:
		w->cs_seen++;
		if (!tls_grease(v)) {
			if (w->n_ja_ciphers < NELEM(w->ciphers))
				w->ciphers[w->n_ja_ciphers++] = v;
			else
				w->inexact = 1;
		}
		if (!wlist_over(w)) {
			wgo(w, W_CS);
			return;
		}
		w->n_ciphers = w->cs_seen;
		w->depth = 0;
		wgo(w, W_COMP_LEN);
		return;
	case W_COMP_LEN:
		if (w->acc[0] == 0)
			wstop(w, "no compression_methods");
		else if (w->acc[0] > w->left[0])
			wstop(w, "compression_methods run past the message");
		else
			wrun(w, W_COMP, w->acc[0], 0);
		return;
	case W_EXT_LEN:
		if (v > w->left[0]) {
			wstop(w, "extensions run past the message");
			return;
		}
		wopen(w, v);
		wext_next(w);
		return;
	case W_EXT_HDR:
		wext_head(w, v, acc16(w, 2));
		return;
	case W_SN_LEN:
		if (wlist_len(w, v, "server_name list runs past its extension",
			      "bytes after the server_name list") < 0)
			return;
		if (v == 0) {
			wstop(w, "empty server_name list");
			return;
		}
		wopen(w, v);
		wgo(w, W_SN_ENT);
		return;
	case W_SN_ENT:
		wsn_entry(w, w->acc[0], acc16(w, 1));
		return;
	case W_AL_LEN:
		if (wlist_len(w, v, "ALPN list runs past its extension", "bytes after the ALPN list") <
		    0)
			return;
		if (v == 0) {
			wstop(w, "empty ALPN list");
			return;
		}
		wopen(w, v);
		wgo(w, W_AL_NLEN);
		return;
	case W_AL_NLEN:
		wal_name(w, w->acc[0]);
		return;
	case W_SV_LEN:
		if (w->acc[0] == 0 || w->acc[0] % 2) {
			wstop(w, "supported_versions length is odd or zero");
			return;
		}
		if (wlist_len(w, w->acc[0], "supported_versions list runs past its extension",
			      "bytes after the supported_versions list") < 0)
			return;
		wopen(w, w->acc[0]);
		wgo(w, W_SV);
		return;
	case W_SV:
		if (!tls_grease(v) && w->n_versions < NELEM(w->versions))
			w->versions[w->n_versions++] = v;
		if (wlist_over(w))
			wext_end(w);
		else
			wgo(w, W_SV);
		return;
	case W_SA_LEN:
		if (v == 0 || v % 2) {
			wstop(w, "signature_algorithms length is odd or zero");
			return;
		}
		if (wlist_len(w, v, "signature_algorithms list runs past its extension",
			      "bytes after the signature_algorithms list") < 0)
			return;
		wopen(w, v);
		wgo(w, W_SA);
		return;
	case W_SA:
		if (!tls_grease(v)) {
			if (w->n_sigalgs < NELEM(w->sigalgs))
				w->sigalgs[w->n_sigalgs++] = v;
			else
				w->inexact = 1;
		}
		if (wlist_over(w))
			wext_end(w);
		else
			wgo(w, W_SA);
		return;
	default:
		return;
	}
}

/* A run is over: go on after it. */
static void wnext(struct tls_walk *w)
{
	switch (w->step) {
	case W_SID:
		wgo(w, W_CS_LEN);
		return;
	case W_COMP:
		if (w->left[0] == 0)
			w->step = W_END; /* no extensions (TLS 1.2 and older may omit them) */
		else
			wgo(w, W_EXT_LEN);
		return;
	case W_EXT_SKIP:
		wext_end(w);
		return;
	case W_SN_NAME:
		if (w->keep)
			w->sni_state = 2;
		if (wlist_over(w))
			wext_end(w);
		else
			wgo(w, W_SN_ENT);
		return;
	case W_AL_NAME:
		if (wlist_over(w))
			wext_end(w);
		else
			wgo(w, W_AL_NLEN);
		return;
	default:
		return;
	}
}

/* The bytes p[0..n) of a run (w->run not yet counted down): the kept ones
 * are copied, and the first ALPN name's ends noted (JA4) kept or not. */
static void wkeep(struct tls_walk *w, const uint8_t *p, size_t n)
{
	if (w->keep == 1) {
		size_t k = TLS_WALK_SNI - w->sni_len;
		if (k > n)
			k = n;
		memcpy(w->sni + w->sni_len, p, k);
		w->sni_len = (uint16_t)(w->sni_len + k);
	} else if (w->keep == 2) {
		memcpy(w->alpn + w->alpn_len, p, n); /* room made in wal_name */
		w->alpn_len = (uint16_t)(w->alpn_len + n);
	}
	if (w->step == W_AL_NAME && w->n_alpn == 1) {
		if (w->run == w->run_len)
			w->alpn_first = p[0];
		if (w->run == n)
			w->alpn_last = p[n - 1];
	}
}

/* Handshake bytes p[0..n) (record headers taken out) into the walk; returns
 * the bytes used: all of them, unless the walk ends first. */
static size_t wbytes(struct tls_walk *w, const uint8_t *p, size_t n)
{
	size_t at = 0;

	while (at < n && w->step != W_END) {
		size_t k = wsize[w->step], m;
		int in_body = w->step != W_HDR;

		if (k) {
			m = k - w->acc_n < n - at ? k - w->acc_n : n - at;
			memcpy(w->acc + w->acc_n, p + at, m);
			w->acc_n = (uint8_t)(w->acc_n + m);
		} else {
			m = w->run < n - at ? w->run : n - at;
			wkeep(w, p + at, m);
			w->run -= (uint32_t)m;
		}
		at += m;
		for (unsigned d = 0; in_body && d <= w->depth; d++)
			w->left[d] -= (uint32_t)m;
		if (k && w->acc_n == k)
			wfield(w);
		else if (!k && w->run == 0)
			wnext(w);
	}
	return at;
}

void tls_walk_init(struct tls_walk *w)
{
	memset(w, 0, sizeof(*w));
	w->step = W_HDR;
}

int tls_walk_feed(struct tls_walk *w, const uint8_t *s, size_t n, size_t *used, const char **why)
{
	struct cur c = cur_init(s, n);

	*why = NULL;
	*used = 0;
	while (w->step != W_END) {
		if (w->rec_left == 0) {
			struct cur h = c; /* a header is taken only whole */
			uint8_t type = cur_u8(&h), major = cur_u8(&h);
			cur_skip(&h, 1); /* minor: any */
			uint16_t rlen = cur_be16(&h);
			size_t have = cur_left(&c);
			if (h.err && !((have >= 1 && type != CT_HANDSHAKE && type != CT_CCS) ||
				       (have >= 2 && major != 3)))
				break; /* cut short: the rest comes later */
			if (!h.err && ccs_record(type, major, rlen)) {
				/* skipped, as tls_gather does */
				cur_skip(&h, 1);
				if (h.err)
					break;
				c = h;
				continue;
			}
			if (type != CT_HANDSHAKE)
				*why = "a non-handshake record inside the handshake message";
			else if (major != 3)
				*why = "record version is not 3.x";
			else if (rlen > TLS_REC_MAX)
				*why = "record longer than 2^14 bytes";
			if (*why) {
				*used = n - cur_left(&c);
				return TLS_ASM_BAD;
			}
			c = h;
			w->rec_left = rlen;
			continue;
		}
		size_t k = w->rec_left < cur_left(&c) ? w->rec_left : cur_left(&c);
		if (k == 0)
			break;
		size_t m = wbytes(w, c.p, k);
		cur_skip(&c, m);
		w->rec_left = (uint16_t)(w->rec_left - m);
	}
	*used = n - cur_left(&c);
	if (w->step != W_END)
		return TLS_ASM_MORE;
	if (!w->reason && !w->not_hello) {
		/* later messages of the same record are not ours: the next
		 * one starts at a record boundary */
		*used += w->rec_left;
		w->rec_left = 0;
	}
	return TLS_ASM_DONE;
}

/* The kept ALPN names into out's two texts, as ext_alpn writes them. */
static void walk_alpn(const struct tls_walk *w, struct tls_hello *o)
{
	struct cur c = cur_init(w->alpn, w->alpn_len);

	o->n_alpn = w->n_alpn;
	o->ja_alpn = 1;
	o->ja_alpn_first = w->alpn_first;
	o->ja_alpn_last = w->alpn_last;
	o->cut |= w->alpn_cut;
	while (cur_left(&c)) {
		uint8_t pl = cur_u8(&c);
		const uint8_t *s = cur_ptr(&c, pl);
		if (!s)
			break;
		list_add(o->alpn, sizeof(o->alpn), &o->alpn_len, REC_GS, s, pl, &o->cut);
		list_add(o->alpn_aux, sizeof(o->alpn_aux), &o->alpn_aux_len, ',', s, pl, &o->cut);
	}
}

int tls_walk_hello(const struct tls_walk *w, unsigned flags, struct tls_hello *out)
{
	int open = w->step != W_END, result = MOD_OK;
	/* What an extension gave counts when it was walked whole; when the
	 * walk stopped malformed inside it, what it gave before (the whole
	 * parse keeps a name read before the fault); a cut one gives nothing. */
	unsigned usable = w->exts_done | (w->reason ? WX_SNI | WX_ALPN : 0);

	hello_reset(out, NULL);
	if (w->not_hello)
		return MOD_NOT_MINE;
	if (w->step == W_HDR)
		return (flags & OBS_F_TRUNCATED) ? MOD_TRUNCATED : MOD_MALFORMED;
	out->hs_type = TLS_CLIENT_HELLO;
	out->hs_len = w->hs_len;
	out->legacy_version = w->legacy_version;
	out->n_ciphers = w->n_ciphers;
	/* an extension cut by the end of the stream counts for nothing */
	out->n_exts = w->n_exts - (open && w->depth >= 2 ? 1 : 0);
	out->ech = w->ech;
	if (w->sni_state == 2 && (usable & WX_SNI)) {
		int cut = 0;
		out->sni_len = text_escape(out->sni, sizeof(out->sni), w->sni, w->sni_len, &cut);
		out->cut |= cut | w->sni_cut;
		out->has_sni = 1;
	}
	if ((usable & WX_ALPN) && w->n_alpn)
		walk_alpn(w, out);
	if (w->exts_done & WX_VERSIONS) {
		out->has_versions = 1;
		memcpy(out->versions, w->versions, w->n_versions * sizeof(w->versions[0]));
		out->n_versions = w->n_versions;
	}
	for (unsigned i = 0; i < w->n_ja_ciphers; i++)
		out->ja_ciphers[out->ja_nciphers++] = w->ciphers[i];
	for (unsigned i = 0; i < w->n_types; i++)
		if (!tls_grease(w->types[i]))
			out->ja_exts[out->ja_nexts++] = w->types[i];
	for (unsigned i = 0; i < w->n_sigalgs; i++)
		out->ja_sigalgs[out->ja_nsigalgs++] = w->sigalgs[i];
	if (w->exts_seen & WX_SNI)
		out->seen[0] |= 1; /* JA4's d */
	client_version(out);

	if (w->reason) {
		result = MOD_MALFORMED;
		out->reason = w->reason;
		out->flags |= OBS_F_MALFORMED;
	} else if (open && !(flags & OBS_F_TRUNCATED)) {
		result = MOD_MALFORMED;
		out->reason = "handshake message runs past its end";
		out->flags |= OBS_F_MALFORMED;
	} else if (open) {
		result = MOD_TRUNCATED;
	} else if (!w->inexact) {
		ja4(out);
	}
	if (open)
		out->flags |= OBS_F_TRUNCATED;
	write_record(out);
	return result;
}

/* ---- the module ----------------------------------------------------------- */

struct tls_state {
	struct flow_table *flows; /* borrowed from module_env: flow_stream_done */
	uint8_t msg[TLS_MSG_MAX]; /* the handshake message being parsed */
	struct tls_hello hello;
	char alt[2][TLS_SNI_MAX]; /* names SNI routers take (router_names) */
	size_t alt_len[2];
};

/* Per claimed flow, in flow->app_state (freed by the flow table). Each
 * direction's cursor is its stream's consumed: where its next record starts. */
struct tls_flow {
	uint8_t started[2]; /* the direction's first record offset is known */
	uint8_t hellos[2];  /* ClientHellos emitted from the direction */
	uint8_t walking;    /* 1 + the direction whose hello (its first, or one
			     * after a HelloRetryRequest) is walked: the
			     * struct is then a struct tls_flow_walk */
	int upgrade;        /* enum tls_upgrade_kind the client used; 0: direct */
};

/* A flow whose ClientHello is too big for the window (tls.h, "Big
 * hellos"): the walk's state rides with it, one allocation that the flow
 * table frees with the flow, taken back when the walk is over. */
struct tls_flow_walk {
	struct tls_flow tf;
	struct tls_walk w;
};

static int tls_init(const struct module_env *env, void **state)
{
	struct tls_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->flows = env ? env->flows : NULL;
	*state = st;
	return 0;
}

static void tls_fini(void *state)
{
	free(state);
}

/*
 * A TLS handshake record header at s[0..n): 0x16, major 3 or above, any
 * minor. The record version is legacy (RFC 8446 5.1: ignored but for its
 * major), and OpenSSL takes a first record of 3.5 or 3.255; holding the
 * minor to 0..4 let such a ClientHello pass unread. haproxy's req.ssl_sni
 * takes any major from 3 up (4.1, 255.255: pcaps/review21/tls), so such a
 * first record is read too, and its hello reported malformed. ChangeCipherSpec
 * records before it (GnuTLS takes them) are looked past.
 */
static int tls_sniff(const uint8_t *s, size_t n)
{
	struct cur c = cur_init(s, n);

	/* GnuTLS takes ChangeCipherSpec records before the ClientHello:
	 * up to TLS_CCS_SNIFF of them are looked past */
	for (int k = 0;; k++) {
		uint8_t type = cur_u8(&c), major = cur_u8(&c);
		cur_skip(&c, 1); /* minor: any */
		if (c.err)
			return 0;
		if (type == CT_HANDSHAKE)
			return major >= 3;
		if (k == TLS_CCS_SNIFF || type != CT_CCS || major != 3)
			return 0;
		uint16_t rlen = cur_be16(&c);
		cur_skip(&c, 1);
		if (c.err || rlen != 1)
			return 0;
	}
}

static int emit_hello(const struct tls_hello *h, const struct pkt *p, struct emit *out)
{
	int client = h->hs_type == TLS_CLIENT_HELLO;
	struct obs ob = {
		.kind = client ? OBS_TLS_CLIENT_HELLO : OBS_TLS_SERVER_HELLO,
		.pkt = p,
		.name = client ? h->sni : "",
		.name_len = client ? h->sni_len : 0,
		.aux = client && h->n_alpn ? h->alpn_aux : NULL,
		.aux_len = client && h->n_alpn ? h->alpn_aux_len : 0,
		.type = h->version,
		.code = client ? 0 : h->cipher,
		.size = h->hs_len,
		.flags = h->flags,
		.info = h->info,
		.info_len = h->info_len,
	};
	return out->obs(out, &ob);
}

/* The major version of the first handshake record at s[0..n), past
 * ChangeCipherSpec records (tls_gather skips them); 3 when it is not there. */
static uint8_t hs_major(const uint8_t *s, size_t n)
{
	struct cur c = cur_init(s, n);

	for (;;) {
		uint8_t type = cur_u8(&c), major = cur_u8(&c);
		cur_skip(&c, 1);
		uint16_t rlen = cur_be16(&c);
		if (c.err)
			return 3;
		if (type == CT_HANDSHAKE)
			return major;
		cur_skip(&c, rlen);
	}
}

/* h's SNI set to name[0..len), flagged malformed (why, unless it has a
 * reason), and its record written again. */
static void set_router_sni(struct tls_hello *h, const char *name, size_t len, const char *why)
{
	memcpy(h->sni, name, len + 1);
	h->sni_len = len;
	h->has_sni = 1;
	h->flags |= OBS_F_MALFORMED;
	if (!h->reason)
		h->reason = why;
	write_record(h);
}

/*
 * Emit the ClientHello just parsed into st->hello (mlen bytes of it in
 * st->msg; the stream's bytes from its first record header at s[0..n)),
 * and again for each other name an SNI router would take from it
 * (tls_router_sni; FINDINGS.md of pcaps/review21/tls): read from the
 * reassembled message, as nginx does, and from the bytes after the first
 * record header as they are on the wire, as haproxy does when the hello
 * spans records. A hello with no host_name of its own carries the first
 * such name; every other name different from the event's gets an event of
 * its own, the same hello with that SNI, malformed. So a router's name is
 * judged by the detectors whatever the strict parse made of the hello.
 * Returns emit's error, MOD_MALFORMED when a name was added, else MOD_OK.
 */
static int router_hellos(struct tls_state *st, const struct pkt *p, const uint8_t *s, size_t n,
			 size_t mlen, struct emit *out)
{
	struct tls_hello *h = &st->hello;
	struct cur c = cur_init(s, n);
	unsigned na = 0, i;
	int e, added = 0;

	st->alt_len[na] = tls_router_sni(st->msg, mlen, st->alt[na], sizeof(st->alt[na]));
	if (st->alt_len[na])
		na++;
	/* the first record's own length: the raw view differs only when the
	 * message goes on past it (and haproxy wants a handshake record first) */
	uint8_t type = cur_u8(&c);
	cur_skip(&c, 2);
	uint16_t rlen = cur_be16(&c);
	if (!c.err && type == CT_HANDSHAKE && rlen < mlen) {
		st->alt_len[na] =
			tls_router_sni(c.p, cur_left(&c), st->alt[na], sizeof(st->alt[na]));
		if (st->alt_len[na] &&
		    !(na && st->alt_len[0] == st->alt_len[na] &&
		      memcmp(st->alt[0], st->alt[na], st->alt_len[na]) == 0))
			na++;
	}
	for (i = 0; i < na; i++) {
		if (h->has_sni && h->sni_len == st->alt_len[i] &&
		    memcmp(h->sni, st->alt[i], h->sni_len) == 0)
			continue;
		if (!h->has_sni) {
			set_router_sni(h, st->alt[i], st->alt_len[i],
				       "server_name read as an SNI router reads it");
			added = 1;
			continue;
		}
		e = emit_hello(h, p, out);
		if (e < 0)
			return e;
		h->reason = NULL; /* this event's reason is its own name */
		set_router_sni(h, st->alt[i], st->alt_len[i],
			       "another server_name, as an SNI router reads the hello");
		added = 1;
	}
	e = emit_hello(h, p, out);
	if (e < 0)
		return e;
	return added ? MOD_MALFORMED : MOD_OK;
}

/* What a direction does after a step. */
enum step { STEP_WAIT, STEP_STOP, STEP_GO, STEP_WALK };

/*
 * Should the first message, gathered so far into st->msg (mlen bytes; the
 * records up to used of the n bytes at s->consumed), be walked as it passes
 * instead? Only a ClientHello that will not be whole in the window: longer
 * than the scratch message, or with records that take the stream past the
 * window before its last byte, surely (its rest in one more record) or at
 * the rate its records have gone so far (records of one byte take six
 * bytes of stream for each). A hello that fits is read whole, as always.
 * The walk starts once 4 KiB are held (a quarter of the window, when that
 * is smaller), so a flow's walk state (tls.h) stands on stream bytes that
 * stream_total_max bounds, not on 9 bytes of a lying header. (In a window
 * wider than TLS_MSG_MAX, a DNS port's, the scratch message fills first:
 * TLS_ASM_BIG, walked too.)
 */
static int walk_wanted(const struct tls_state *st, const struct flow_stream *s, size_t n,
		       size_t mlen, size_t used)
{
	struct cur h = cur_init(st->msg, mlen);
	uint8_t type = cur_u8(&h);
	uint32_t hl = cur_be24(&h);

	if (h.err || type != TLS_CLIENT_HELLO || hl > TLS_WALK_MAX)
		return 0;
	uint32_t window = flow_stream_window(st->flows, s);
	size_t need = 4 + (size_t)hl;
	size_t got = mlen + (used > n ? used - n : 0); /* with the last record's rest */
	size_t rest = need > got ? need - got : 0;
	size_t end = s->consumed + used + (rest ? 5 + rest : 0);
	size_t rate = s->consumed + used + (got ? rest * used / got : 0);
	if (need <= sizeof(st->msg) && end <= window && rate <= window)
		return 0;
	return s->consumed + n >= (window < TLS_MSG_MAX ? window : TLS_MSG_MAX) / 4;
}

/*
 * The first handshake message of a direction whose records start at
 * s->consumed, once it is whole or can no longer become whole (final). Emits
 * it when it is whole, or when it is a ClientHello whose host_name was read.
 * *next: STEP_WAIT (not whole yet), STEP_GO (a whole ClientHello: later ones
 * may follow; s->consumed moved to the end of its last record) or STEP_STOP.
 * Returns the module result.
 */
static int first_message(struct tls_state *st, const struct pkt *p, struct flow_stream *s,
			 size_t avail, int final, struct emit *out, enum step *next)
{
	struct tls_hello *h = &st->hello;
	const char *why;
	size_t mlen, used;
	int r, ret, e;

	*next = STEP_STOP;
	r = tls_gather(s->buf + s->consumed, avail - s->consumed, st->msg, sizeof(st->msg), &mlen,
		       &used, &why);
	if ((r == TLS_ASM_MORE || r == TLS_ASM_BIG) && !final &&
	    walk_wanted(st, s, avail - s->consumed, mlen, used)) {
		*next = STEP_WALK;
		return MOD_OK;
	}
	if (r == TLS_ASM_MORE && !final) {
		*next = STEP_WAIT;
		return MOD_OK;
	}
	if (r == TLS_ASM_NOT_HS)
		return MOD_NOT_MINE;
	ret = tls_parse_handshake(st->msg, mlen, r == TLS_ASM_DONE ? 0 : OBS_F_TRUNCATED, h);
	if (ret == MOD_NOT_MINE)
		return ret;
	if (r == TLS_ASM_BAD) {
		/* the record layer broke before the message was whole */
		h->flags |= OBS_F_MALFORMED;
		if (!h->reason)
			h->reason = why;
		write_record(h);
		ret = MOD_MALFORMED;
	}
	/* A ClientHello that cannot be whole (cut by the stream's window, as
	 * one of over 16 KiB with its SNI past it; or its records broke) is
	 * still a hello that went out: reported with what it has, flagged */
	if (r != TLS_ASM_DONE && h->hs_type != TLS_CLIENT_HELLO)
		return ret;
	if (h->hs_type == TLS_CLIENT_HELLO &&
	    hs_major(s->buf + s->consumed, avail - s->consumed) != 3) {
		/* a first record of major 4 or more (tls_sniff): only haproxy takes it */
		h->flags |= OBS_F_MALFORMED;
		if (!h->reason)
			h->reason = "record version is not 3.x";
		write_record(h);
		ret = MOD_MALFORMED;
	}
	if (h->hs_type == TLS_CLIENT_HELLO) {
		e = router_hellos(st, p, s->buf + s->consumed, avail - s->consumed, mlen, out);
		if (e < 0)
			return e;
		if (e == MOD_MALFORMED)
			ret = MOD_MALFORMED;
	} else {
		e = emit_hello(h, p, out);
		if (e < 0)
			return e;
	}
	if (r == TLS_ASM_DONE && h->hs_type == TLS_CLIENT_HELLO) {
		s->consumed += (uint32_t)used;
		*next = STEP_GO;
	}
	return ret;
}

/* The walk's state onto f's struct tls_flow for direction dir; NULL when
 * out of memory (the hello is then read as before: cut by the window). */
static struct tls_flow *walk_start(struct flow *f, int dir)
{
	struct tls_flow_walk *fw = realloc(f->app_state, sizeof(*fw));

	if (!fw)
		return NULL;
	f->app_state = fw;
	tls_walk_init(&fw->w);
	fw->tf.walking = (uint8_t)(dir + 1);
	return &fw->tf;
}

/* The walk is over: its state goes, the flow keeps its struct tls_flow. */
static struct tls_flow *walk_end(struct flow *f)
{
	struct tls_flow *tf = realloc(f->app_state, sizeof(*tf));

	if (tf)
		f->app_state = tf; /* (a shrink that fails keeps the block) */
	tf = f->app_state;
	tf->walking = 0;
	return tf;
}

/*
 * A message of a direction too big for its window, walked from s->consumed
 * as its bytes come (tls.h, "Big hellos"): what was walked is dropped and
 * the window slid past it. The first message (later 0) is emitted as
 * first_message does, when the walk is over or can go no further (final);
 * a later one (a second ClientHello after a HelloRetryRequest) as
 * later_hello does: only when it is a ClientHello walked whole and sound,
 * anything else finishing the direction. *next as first_message.
 */
static int walk_message(struct tls_state *st, struct flow *f, const struct pkt *p,
			struct flow_stream *s, size_t avail, int final, struct emit *out,
			enum step *next, int later)
{
	struct tls_flow_walk *fw = f->app_state;
	struct tls_hello *h = &st->hello;
	const char *why;
	size_t used;
	int r, ret, e, whole;

	*next = STEP_STOP;
	r = tls_walk_feed(&fw->w, s->buf + s->consumed, avail - s->consumed, &used, &why);
	s->consumed += (uint32_t)used;
	if (r == TLS_ASM_MORE && !final) {
		flow_stream_slide(s);
		*next = STEP_WAIT;
		return MOD_OK;
	}
	ret = tls_walk_hello(&fw->w, r == TLS_ASM_DONE ? 0 : OBS_F_TRUNCATED, h);
	whole = r == TLS_ASM_DONE && ret == MOD_OK;
	walk_end(f);
	if (later && (!whole || h->hs_type != TLS_CLIENT_HELLO))
		return MOD_OK;
	if (ret == MOD_NOT_MINE || h->hs_type != TLS_CLIENT_HELLO)
		return ret; /* (the walk starts with a ClientHello's header there) */
	if (r == TLS_ASM_BAD) {
		h->flags |= OBS_F_MALFORMED;
		if (!h->reason)
			h->reason = why;
		write_record(h);
		ret = MOD_MALFORMED;
	}
	e = emit_hello(h, p, out);
	if (e < 0)
		return e;
	if (whole) {
		flow_stream_slide(s);
		*next = STEP_GO;
	}
	return ret;
}

/*
 * After a ClientHello: skip ChangeCipherSpec records, then take the next
 * handshake message, which counts only as a whole and sound ClientHello
 * (sent again after a HelloRetryRequest). *next: STEP_GO (one was emitted
 * and s->consumed moved past its last record), STEP_WAIT, STEP_STOP, or
 * STEP_WALK: a ClientHello that will not be whole in the window, as a
 * first one is judged (walk_wanted; a post-quantum key share, padding),
 * to be walked from s->consumed, where its first record starts.
 * Returns 0 or -errno.
 */
static int later_hello(struct tls_state *st, const struct pkt *p, struct flow_stream *s,
		       size_t avail, int final, struct emit *out, enum step *next)
{
	struct tls_hello *h = &st->hello;
	const char *why;
	size_t mlen, used, skip;
	int r, e;

	*next = final ? STEP_STOP : STEP_WAIT;
	if (s->consumed >= avail)
		return 0;
	r = tls_next(s->buf + s->consumed, avail - s->consumed, &skip);
	s->consumed += (uint32_t)skip;
	if (r == TLS_NEXT_WAIT)
		return 0;
	*next = STEP_STOP;
	if (r == TLS_NEXT_END)
		return 0;
	r = tls_gather(s->buf + s->consumed, avail - s->consumed, st->msg, sizeof(st->msg), &mlen,
		       &used, &why);
	if ((r == TLS_ASM_MORE || r == TLS_ASM_BIG) && !final &&
	    walk_wanted(st, s, avail - s->consumed, mlen, used)) {
		*next = STEP_WALK;
		return 0;
	}
	if (r == TLS_ASM_MORE && !final) {
		*next = STEP_WAIT;
		return 0;
	}
	if (r != TLS_ASM_DONE || tls_parse_handshake(st->msg, mlen, 0, h) != MOD_OK ||
	    h->hs_type != TLS_CLIENT_HELLO)
		return 0;
	e = emit_hello(h, p, out);
	if (e < 0)
		return e;
	s->consumed += (uint32_t)used;
	*next = STEP_GO;
	return 0;
}

/*
 * The hellos of p's direction, from s->consumed (where its TLS starts): the
 * first handshake message, then, in a direction that began with a whole
 * ClientHello, later ClientHellos (at most TLS_HELLOS_MAX in all) until
 * anything else. When the direction is finished, its stream is released.
 */
static int tls_direction(struct tls_state *st, struct tls_flow *tf, const struct pkt *p,
			 struct emit *out)
{
	struct flow *f = p->flow;
	int dir = p->dir ? 1 : 0;
	struct flow_stream *s = &f->st[dir];
	size_t avail, off;
	enum step next;
	int final, r, ret = MOD_OK;

	if (s->done || !s->buf || s->len == 0)
		return MOD_OK;
	if (!tf->started[dir]) {
		/* STARTTLS: the server's records start after its text lines */
		r = s->consumed <= s->len
			    ? tls_upgrade(s->buf + s->consumed, s->len - s->consumed, 0, &tf->upgrade,
					  &off)
			    : -1;
		if (r == 0 && !s->overflow)
			return MOD_OK;
		if (r <= 0) {
			ret = MOD_NOT_MINE;
			goto done;
		}
		s->consumed += (uint32_t)off;
		tf->started[dir] = 1;
	}
	avail = flow_stream_avail(s, s->consumed);
	final = s->overflow || avail < s->len; /* a cap or a hole: no more bytes will come */
	if (tf->hellos[dir] == 0) {
		if (tf->walking == dir + 1) {
			ret = walk_message(st, f, p, s, avail, final, out, &next, 0);
		} else {
			ret = first_message(st, p, s, avail, final, out, &next);
			if (next == STEP_WALK) {
				if (tf->walking || !walk_start(f, dir))
					return ret; /* wait, as before */
				ret = walk_message(st, f, p, s, avail, final, out, &next, 0);
			}
		}
		tf = f->app_state; /* the walk moved it */
		if (next == STEP_WAIT)
			return ret;
		if (ret < 0 || next == STEP_STOP)
			goto done;
		tf->hellos[dir] = 1;
		/* the walk slid the window */
		avail = flow_stream_avail(s, s->consumed);
		final = s->overflow || avail < s->len;
	}
	while (tf->hellos[dir] < TLS_HELLOS_MAX) {
		/* a later hello too big for the window is walked as a first
		 * one is (before, it made no event) */
		if (tf->walking == dir + 1) {
			r = walk_message(st, f, p, s, avail, final, out, &next, 1);
		} else {
			r = later_hello(st, p, s, avail, final, out, &next);
			if (r >= 0 && next == STEP_WALK) {
				if (tf->walking || !walk_start(f, dir))
					return ret; /* wait, as before */
				r = walk_message(st, f, p, s, avail, final, out, &next, 1);
			}
		}
		tf = f->app_state; /* the walk moved it */
		if (r < 0) {
			ret = r;
			goto done;
		}
		if (next == STEP_WAIT)
			return ret;
		if (next == STEP_STOP)
			goto done;
		tf->hellos[dir]++;
		/* the walk slid the window */
		avail = flow_stream_avail(s, s->consumed);
		final = s->overflow || avail < s->len;
	}
done:
	flow_stream_done(st->flows, f, dir);
	s->done = 1;
	return ret;
}

/*
 * Claim f when its client stream starts with a TLS handshake record, or
 * carries one right after a STARTTLS-like command line; the per-flow state
 * says where each direction's records start. "Starts" is at the stream's
 * consumed: 0, unless an analyzer handed the flow back (app APP_NONE, no
 * app_state) with its cursors past what it read, e.g. at an HTTP CONNECT
 * tunnel; each direction's TLS then starts at its consumed. There a PROXY
 * protocol header (proxyproto.h) may come first: the server skips it, and
 * so does the claim, which then slides the window past it so that the
 * hello has the whole window, as it has without the header.
 */
static int tls_claim(struct flow *f)
{
	struct flow_stream *c = &f->st[0];
	struct tls_flow *tf;
	size_t off = 0, from;
	int direct, kind = 0, pp;

	if (f->app_state || !c->buf || c->consumed > c->len)
		return MOD_NOT_MINE;
	pp = proxyproto_stream(f);
	if (pp < 0)
		return MOD_NOT_MINE; /* it may yet be a header: ask again */
	from = c->consumed + (size_t)pp;
	direct = tls_sniff(c->buf + from, c->len - from);
	if (!direct && tls_upgrade(c->buf + from, c->len - from, 1, &kind, &off) != 1)
		return MOD_NOT_MINE;
	tf = calloc(1, sizeof(*tf));
	if (!tf)
		return -ENOMEM;
	tf->upgrade = kind;
	tf->started[0] = 1;
	tf->started[1] = direct;
	c->consumed = (uint32_t)(from + off);
	if (pp)
		flow_stream_slide(c);
	proxyproto_taken(f);
	f->app = APP_TLS;
	f->app_state = tf;
	return MOD_OK;
}

static int tls_on_packet(void *state, const struct pkt *p, struct emit *out)
{
	struct flow *f = p->flow;
	int r;

	if (p->proto != IPPROTO_TCP || !f)
		return MOD_NOT_MINE;
	if (f->app == APP_NONE) {
		r = tls_claim(f);
		if (r != MOD_OK)
			return r;
		if (p->dir) {
			/* claimed on the server's packet (an HTTP CONNECT tunnel
			 * handed back when its 200 came): the client's hello,
			 * sent with the CONNECT, was never offered, and the
			 * client may send nothing more. Read it now, from a copy
			 * of the packet turned around. */
			struct pkt q = pkt_turned(p);
			r = tls_direction(state, f->app_state, &q, out);
			if (r < 0)
				return r;
			int r2 = tls_direction(state, f->app_state, p, out);
			return r2 < 0 ? r2 : r == MOD_OK ? r2 : r;
		}
	} else if (f->app != APP_TLS || !f->app_state) {
		return MOD_NOT_MINE;
	}
	return tls_direction(state, f->app_state, p, out);
}

const struct module tls_module = {
	.name = "tls",
	.sel = SEL_TCP | SEL_PAYLOAD,
	.init = tls_init,
	.fini = tls_fini,
	.on_packet = tls_on_packet,
};
