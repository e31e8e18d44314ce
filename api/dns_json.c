/*
 * dns_json.c - the reader side of the DNS detail record: records split at
 * RS, fields at US, list items at GS (sensor/record.h), turned into the
 * section 4 "dns" object through jansson. Every value in the record is
 * already escaped printable ASCII, so it goes into JSON strings as is and
 * jansson escapes what JSON needs. The mnemonic tables are static const and
 * write their numeric fallbacks into caller buffers.
 */
#include "dns_json.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../analyzers/module.h"
#include "../sensor/record.h"

struct mnemonic {
	unsigned v;
	const char *s;
};

/* Sorted by value (binary search). IANA "Resource Record (RR) TYPEs". */
static const struct mnemonic types[] = {
	{1, "A"}, {2, "NS"}, {3, "MD"}, {4, "MF"}, {5, "CNAME"}, {6, "SOA"}, {7, "MB"},
	{8, "MG"}, {9, "MR"}, {10, "NULL"}, {11, "WKS"}, {12, "PTR"}, {13, "HINFO"},
	{14, "MINFO"}, {15, "MX"}, {16, "TXT"}, {17, "RP"}, {18, "AFSDB"}, {19, "X25"},
	{20, "ISDN"}, {21, "RT"}, {22, "NSAP"}, {23, "NSAP-PTR"}, {24, "SIG"}, {25, "KEY"},
	{26, "PX"}, {27, "GPOS"}, {28, "AAAA"}, {29, "LOC"}, {30, "NXT"}, {31, "EID"},
	{32, "NIMLOC"}, {33, "SRV"}, {34, "ATMA"}, {35, "NAPTR"}, {36, "KX"}, {37, "CERT"},
	{38, "A6"}, {39, "DNAME"}, {40, "SINK"}, {41, "OPT"}, {42, "APL"}, {43, "DS"},
	{44, "SSHFP"}, {45, "IPSECKEY"}, {46, "RRSIG"}, {47, "NSEC"}, {48, "DNSKEY"},
	{49, "DHCID"}, {50, "NSEC3"}, {51, "NSEC3PARAM"}, {52, "TLSA"}, {53, "SMIMEA"},
	{55, "HIP"}, {56, "NINFO"}, {57, "RKEY"}, {58, "TALINK"}, {59, "CDS"},
	{60, "CDNSKEY"}, {61, "OPENPGPKEY"}, {62, "CSYNC"}, {63, "ZONEMD"}, {64, "SVCB"},
	{65, "HTTPS"}, {99, "SPF"}, {100, "UINFO"}, {101, "UID"}, {102, "GID"},
	{103, "UNSPEC"}, {104, "NID"}, {105, "L32"}, {106, "L64"}, {107, "LP"},
	{108, "EUI48"}, {109, "EUI64"}, {249, "TKEY"}, {250, "TSIG"}, {251, "IXFR"},
	{252, "AXFR"}, {253, "MAILB"}, {254, "MAILA"}, {255, "ANY"}, {256, "URI"},
	{257, "CAA"}, {258, "AVC"}, {259, "DOA"}, {260, "AMTRELAY"}, {261, "RESINFO"},
	{32768, "TA"}, {32769, "DLV"},
};

static const struct mnemonic classes[] = {
	{1, "IN"}, {3, "CH"}, {4, "HS"}, {254, "NONE"}, {255, "ANY"},
};

/* IANA "DNS RCODEs"; 16 is BADVERS in an OPT and BADSIG in a TSIG: an
 * rcode in the header record is the OPT view. */
static const struct mnemonic rcodes[] = {
	{0, "NOERROR"}, {1, "FORMERR"}, {2, "SERVFAIL"}, {3, "NXDOMAIN"}, {4, "NOTIMP"},
	{5, "REFUSED"}, {6, "YXDOMAIN"}, {7, "YXRRSET"}, {8, "NXRRSET"}, {9, "NOTAUTH"},
	{10, "NOTZONE"}, {11, "DSOTYPENI"}, {16, "BADVERS"}, {17, "BADKEY"},
	{18, "BADTIME"}, {19, "BADMODE"}, {20, "BADNAME"}, {21, "BADALG"},
	{22, "BADTRUNC"}, {23, "BADCOOKIE"},
};

static const struct mnemonic opcodes[] = {
	{0, "QUERY"}, {1, "IQUERY"}, {2, "STATUS"}, {4, "NOTIFY"}, {5, "UPDATE"}, {6, "DSO"},
};

static const char *lookup(const struct mnemonic *t, size_t n, unsigned v, const char *prefix,
			  char *buf, size_t cap)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t[mid].v == v)
			return t[mid].s;
		if (t[mid].v < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (cap)
		snprintf(buf, cap, "%s%u", prefix, v);
	return cap ? buf : "";
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *dns_type_str(unsigned type, char *buf, size_t cap)
{
	return lookup(types, NELEM(types), type, "TYPE", buf, cap);
}

const char *dns_class_str(unsigned cls, char *buf, size_t cap)
{
	return lookup(classes, NELEM(classes), cls, "CLASS", buf, cap);
}

const char *dns_rcode_str(unsigned rcode, char *buf, size_t cap)
{
	return lookup(rcodes, NELEM(rcodes), rcode, "RCODE", buf, cap);
}

const char *dns_opcode_str(unsigned opcode, char *buf, size_t cap)
{
	return lookup(opcodes, NELEM(opcodes), opcode, "OPCODE", buf, cap);
}

/* ---- jansson helpers: each returns -1 on failure, 0 on success ------------ */

static int set(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new(o, key, v) ? -1 : 0; /* steals v, NULL fails */
}

static int set_field(json_t *o, const char *key, const struct rec_fields *f, int i)
{
	size_t n;
	const char *s = rec_fields_str(f, i, &n);
	return set(o, key, json_stringn(s, n));
}

static int set_num(json_t *o, const char *key, long long v)
{
	return set(o, key, json_integer(v < 0 ? 0 : v));
}

static int append(json_t *a, json_t *v)
{
	return json_array_append_new(a, v) ? -1 : 0;
}

/*
 * A list field (items separated by sep) as an array of strings. With
 * keep_empty every separator splits, so "" is [""] and "a<sep>" is
 * ["a",""] (TXT strings may be empty); without, "" is [] (flags).
 */
static json_t *list_array(const char *s, size_t n, char sep, int keep_empty)
{
	json_t *a = json_array();

	if (!a)
		return NULL;
	if (n == 0 && !keep_empty)
		return a;
	for (;;) {
		const char *q = memchr(s, sep, n);
		size_t plen = q ? (size_t)(q - s) : n;
		if (append(a, json_stringn(s, plen))) {
			json_decref(a);
			return NULL;
		}
		if (!q)
			return a;
		n -= plen + 1;
		s = q + 1;
	}
}

static int set_mnemonic(json_t *o, const char *key, const char *(*fn)(unsigned, char *, size_t),
			long long v)
{
	char buf[DNS_MNEMONIC_MAX];
	return set(o, key, json_string(fn(v < 0 ? 0 : (unsigned)v, buf, sizeof(buf))));
}

/* One RR record: "AN"|"NS"|"AR", name, type, class, ttl, data. */
static json_t *rr_json(const struct rec_fields *f)
{
	json_t *rr = json_object();
	long long type = rec_fields_num(f, 2), cls = rec_fields_num(f, 3);
	size_t n;
	const char *data = rec_fields_str(f, 5, &n);
	int err = 0;

	if (!rr)
		return NULL;
	err |= set_field(rr, "name", f, 1);
	err |= set_mnemonic(rr, "type", dns_type_str, type);
	if (cls != 1)
		err |= set_mnemonic(rr, "class", dns_class_str, cls);
	err |= set_num(rr, "ttl", rec_fields_num(f, 4));
	/* TXT/SPF: a list; unless it did not parse and came out as "\# ..." */
	if ((type == 16 || type == 99) && !(n >= 2 && data[0] == '\\' && data[1] == '#'))
		err |= set(rr, "data", list_array(data, n, REC_GS, 1));
	else
		err |= set(rr, "data", json_stringn(data, n));
	if (err) {
		json_decref(rr);
		return NULL;
	}
	return rr;
}

int dns_info_json(json_t *dns, const char *info, size_t len, int obs_kind)
{
	const char *rec;
	size_t rlen;
	struct rec_fields h, f;
	json_t *flags = NULL, *questions = NULL, *secs[3] = {NULL, NULL, NULL};
	static const char *const sec_keys[3] = {"answers", "authority", "additional"};
	static const char *const sec_tags[3] = {"AN", "NS", "AR"};
	int nq = 0, cut = 0, err = 0;
	size_t n;
	const char *s;

	if (!rec_split(&info, &len, REC_RS, &rec, &rlen))
		return -EINVAL;
	rec_fields_split(&h, rec, rlen);
	if (h.count < 9 || rec_fields_num(&h, 0) < 0)
		return -EINVAL;

	questions = json_array();
	for (int i = 0; i < 3; i++)
		secs[i] = json_array();
	if (!questions || !secs[0] || !secs[1] || !secs[2]) {
		err = -1;
		goto out;
	}

	/* header */
	err |= set_num(dns, "id", rec_fields_num(&h, 0));
	if (rec_fields_is(&h, 1, "query") || rec_fields_is(&h, 1, "response"))
		err |= set_field(dns, "qr", &h, 1);
	else
		err |= set(dns, "qr", json_string(obs_kind == OBS_DNS_ANSWER ? "response"
									: "query"));
	err |= set_mnemonic(dns, "opcode", dns_opcode_str, rec_fields_num(&h, 2));
	err |= set_mnemonic(dns, "rcode", dns_rcode_str, rec_fields_num(&h, 3));
	s = rec_fields_str(&h, 4, &n);
	flags = list_array(s, n, ',', 0);
	err |= set(dns, "flags", json_incref(flags));
	{
		int tc = 0;
		for (size_t i = 0; i < json_array_size(flags); i++)
			tc |= strcmp(json_string_value(json_array_get(flags, i)), "tc") == 0;
		err |= set(dns, "tc", json_boolean(tc));
	}

	/* questions and RRs */
	while (rec_split(&info, &len, REC_RS, &rec, &rlen)) {
		rec_fields_split(&f, rec, rlen);
		if (rec_fields_is(&f, 0, "CUT")) {
			cut = 1;
		} else if (rec_fields_is(&f, 0, "Q") && f.count >= 2) {
			/* type and class are empty when the message ended there */
			long long qtype = rec_fields_num(&f, 2), qclass = rec_fields_num(&f, 3);
			if (nq++ == 0) {
				err |= set_field(dns, "qname", &f, 1);
				if (qtype >= 0)
					err |= set_mnemonic(dns, "qtype", dns_type_str, qtype);
				if (qclass >= 0 && qclass != 1)
					err |= set_mnemonic(dns, "qclass", dns_class_str, qclass);
			}
			json_t *q = json_object();
			if (q) {
				err |= set_field(q, "name", &f, 1);
				if (qtype >= 0)
					err |= set_mnemonic(q, "type", dns_type_str, qtype);
				if (qclass >= 0 && qclass != 1)
					err |= set_mnemonic(q, "class", dns_class_str, qclass);
			}
			err |= append(questions, q);
		} else {
			for (int i = 0; i < 3; i++) {
				if (rec_fields_is(&f, 0, sec_tags[i]) && f.count >= 5) {
					err |= append(secs[i], rr_json(&f));
					break;
				}
			}
		}
	}
	if (nq > 1)
		err |= set(dns, "questions", json_incref(questions));
	for (int i = 0; i < 3; i++)
		if (i == 0 || json_array_size(secs[i]))
			err |= set(dns, sec_keys[i], json_incref(secs[i]));

	/* EDNS */
	if (rec_fields_num(&h, 9) >= 0) {
		json_t *e = json_object();
		if (e) {
			err |= set_num(e, "udp_size", rec_fields_num(&h, 9));
			err |= set_num(e, "version", rec_fields_num(&h, 10));
			err |= set(e, "do", json_boolean(rec_fields_num(&h, 11) == 1));
		}
		err |= set(dns, "edns", e);
	}
	s = rec_fields_str(&h, 13, &n);
	if (n)
		err |= set(dns, "malformed", json_stringn(s, n));
	if (rec_fields_is(&h, 14, "1"))
		err |= set(dns, "truncated", json_true());
	{
		json_t *c = json_object();
		if (c) {
			err |= set_num(c, "qd", rec_fields_num(&h, 5));
			err |= set_num(c, "an", rec_fields_num(&h, 6));
			err |= set_num(c, "ns", rec_fields_num(&h, 7));
			err |= set_num(c, "ar", rec_fields_num(&h, 8));
		}
		err |= set(dns, "counts", c);
	}
	if (cut)
		err |= set(dns, "detail_cut", json_true());
out:
	json_decref(flags);
	json_decref(questions);
	for (int i = 0; i < 3; i++)
		json_decref(secs[i]);
	return err ? -ENOMEM : 0;
}
