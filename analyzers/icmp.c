/*
 * icmp.c - the ICMP and ICMPv6 analyzer of icmp.h.
 *
 * icmp_parse() reads one message through cursors: the 8-byte header, then
 * for an echo the payload (length and entropy), for an error the quoted IP
 * header (IPv4 with options, or IPv6 with a bounded extension-header walk)
 * and the first bytes of the quoted transport header. icmp_tie_flow() looks
 * the quoted tuple up in the flow table and marks the flow unreachable;
 * icmp_record() writes the detail record. The module runs the three and
 * emits one observation per message. Nothing here judges or prints; the only
 * state is the module's own struct, reached through its state pointer.
 */
#include "icmp.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "../sensor/cursor.h"
#include "../sensor/flow.h"
#include "../sensor/hash.h"
#include "../sensor/text.h"
#include "module.h"

enum { PR_ICMP = 1, PR_TCP = 6, PR_UDP = 17, PR_ICMPV6 = 58 };

enum icmp_class { C_OTHER = 0, C_ECHO, C_ERROR };

struct icmp_type_info {
	uint8_t ipv, type, cls;
	const char *name;
};

/* IANA "ICMP Type Numbers" and "ICMPv6 Parameters", the common ones. */
static const struct icmp_type_info type_table[] = {
	{4, 0, C_ECHO, "echo-reply"},
	{4, 3, C_ERROR, "dest-unreachable"},
	{4, 4, C_OTHER, "source-quench"},
	{4, 5, C_ERROR, "redirect"},
	{4, 8, C_ECHO, "echo-request"},
	{4, 9, C_OTHER, "router-advertisement"},
	{4, 10, C_OTHER, "router-solicitation"},
	{4, 11, C_ERROR, "time-exceeded"},
	{4, 12, C_ERROR, "param-problem"},
	{4, 13, C_OTHER, "timestamp-request"},
	{4, 14, C_OTHER, "timestamp-reply"},
	{4, 15, C_OTHER, "info-request"},
	{4, 16, C_OTHER, "info-reply"},
	{4, 17, C_OTHER, "mask-request"},
	{4, 18, C_OTHER, "mask-reply"},
	{4, 42, C_OTHER, "extended-echo-request"},
	{4, 43, C_OTHER, "extended-echo-reply"},
	{6, 1, C_ERROR, "dest-unreachable"},
	{6, 2, C_ERROR, "packet-too-big"},
	{6, 3, C_ERROR, "time-exceeded"},
	{6, 4, C_ERROR, "param-problem"},
	{6, 128, C_ECHO, "echo-request"},
	{6, 129, C_ECHO, "echo-reply"},
	{6, 130, C_OTHER, "mld-query"},
	{6, 131, C_OTHER, "mld-report"},
	{6, 132, C_OTHER, "mld-done"},
	{6, 133, C_OTHER, "router-solicitation"},
	{6, 134, C_OTHER, "router-advertisement"},
	{6, 135, C_OTHER, "neighbor-solicitation"},
	{6, 136, C_OTHER, "neighbor-advertisement"},
	{6, 137, C_OTHER, "redirect"},
	{6, 143, C_OTHER, "mldv2-report"},
	{6, 160, C_OTHER, "extended-echo-request"},
	{6, 161, C_OTHER, "extended-echo-reply"},
};

static const struct icmp_type_info *type_info(int ipv, unsigned type)
{
	for (size_t i = 0; i < sizeof(type_table) / sizeof(type_table[0]); i++)
		if (type_table[i].ipv == ipv && type_table[i].type == type)
			return &type_table[i];
	return NULL;
}

const char *icmp_type_name(int ipv, unsigned type)
{
	const struct icmp_type_info *t = type_info(ipv, type);
	return t ? t->name : NULL;
}

static int is_echo(int ipv, unsigned type)
{
	return ipv == 4 ? type == 8 || type == 0 : type == 128 || type == 129;
}

int icmp_starts(int ipv, unsigned type)
{
	if (ipv == 4) {
		switch (type) {
		case 0: case 3: case 4: case 5: case 9: case 10: case 11: case 12: case 14:
		case 16: case 18: case 43:
			return 0;
		default:
			return 1;
		}
	}
	switch (type) {
	case 1: case 2: case 3: case 4: case 129: case 130: case 131: case 132: case 133:
	case 134: case 135: case 136: case 137: case 138: case 140: case 141: case 142:
	case 143: case 144: case 145: case 146: case 147: case 148: case 149: case 151:
	case 152: case 153: case 161:
		return 0;
	default:
		return 1;
	}
}

int icmp_carries_data(int ipv, unsigned type)
{
	if (icmp_starts(ipv, type))
		return 1;
	if (ipv == 4)
		return type == 0 || type == 14 || type == 16 || type == 18 || type == 43;
	return type == 129 || type == 140 || type == 161;
}

/* ---- the quote ------------------------------------------------------------ */

/* The worse of two results: malformed > truncated > ok. */
static int worse(int a, int b)
{
	if (a == MOD_MALFORMED || b == MOD_MALFORMED)
		return MOD_MALFORMED;
	if (a == MOD_TRUNCATED || b == MOD_TRUNCATED)
		return MOD_TRUNCATED;
	return MOD_OK;
}

/* The first bytes of the quoted transport header in t. */
static int quote_l4(struct icmp_quote *q, struct cur *t)
{
	uint16_t v;
	uint8_t qt;

	switch (q->proto) {
	case PR_TCP:
	case PR_UDP:
		v = cur_be16(t);
		if (!t->err)
			q->sport = v;
		v = cur_be16(t);
		if (!t->err)
			q->dport = v;
		/* (a quote may end at the ports: RFC 792's 8 bytes) */
		if (q->proto == PR_TCP && !t->err && cur_has(t, 4))
			q->tcp_seq = cur_be32(t);
		break;
	case PR_ICMP:
	case PR_ICMPV6:
		if (q->proto != (q->ipv == 4 ? PR_ICMP : PR_ICMPV6))
			return MOD_OK; /* the other flavour: nothing we key on */
		qt = cur_u8(t);
		if (t->err)
			break;
		q->qtype = qt;
		if (!is_echo(q->ipv, qt))
			return MOD_OK;
		cur_skip(t, 3); /* code, checksum */
		v = cur_be16(t);
		if (!t->err)
			q->id = v;
		break;
	default:
		return MOD_OK;
	}
	return t->err ? MOD_TRUNCATED : MOD_OK;
}

static int quote_ipv4(struct icmp_msg *o, struct cur *c)
{
	struct icmp_quote *q = &o->q;
	uint8_t vihl, proto;
	uint16_t tot, frag;
	size_t ihl;
	uint8_t src[4], dst[4];
	int cut;

	vihl = cur_u8(c);
	if (c->err)
		return MOD_TRUNCATED;
	if (vihl >> 4 != 4) {
		o->reason = "quoted header is not IPv4";
		return MOD_MALFORMED;
	}
	ihl = (size_t)(vihl & 15) * 4;
	if (ihl < 20) {
		o->reason = "quoted IPv4 header length below 20";
		return MOD_MALFORMED;
	}
	cur_skip(c, 1); /* TOS */
	tot = cur_be16(c);
	cur_skip(c, 2); /* identification */
	frag = cur_be16(c);
	cur_skip(c, 1); /* TTL */
	proto = cur_u8(c);
	cur_skip(c, 2); /* checksum */
	cur_bytes(c, src, 4);
	cur_bytes(c, dst, 4);
	if (c->err)
		return MOD_TRUNCATED;
	q->present = 1;
	q->ipv = 4;
	q->proto = proto;
	memcpy(q->src, src, 4);
	memcpy(q->dst, dst, 4);
	cur_skip(c, ihl - 20); /* options */
	if (c->err)
		return MOD_TRUNCATED;
	if (tot < ihl) {
		o->reason = "quoted IPv4 total length below its header length";
		return MOD_MALFORMED;
	}
	if (frag & 0x1fff)
		return MOD_OK; /* a non-first fragment: no transport header */
	struct cur t = cur_take_upto(c, tot - ihl, &cut);
	return quote_l4(q, &t);
}

/* Walk the quoted IPv6 extension headers from *nh (bounded, hop-by-hop only
 * first). Sets *frag when a non-first fragment leaves no transport header. */
static int quote_ip6_walk(struct icmp_msg *o, struct cur *c, uint8_t *nh, int *frag)
{
	for (unsigned i = 0;; i++) {
		struct cur h = *c;
		uint8_t next;
		size_t hlen;
		uint16_t offm;

		switch (*nh) {
		case 0:  /* hop-by-hop */
		case 43: /* routing */
		case 60: /* destination options */
		case 51: /* AH: length in 4-byte units, minus 2 */
			if (*nh == 0 && i != 0) {
				o->reason = "quoted hop-by-hop header not first";
				return MOD_MALFORMED;
			}
			if (i == ICMP_MAX_EXT)
				goto too_many;
			next = cur_u8(&h);
			hlen = *nh == 51 ? ((size_t)cur_u8(&h) + 2) * 4 : ((size_t)cur_u8(&h) + 1) * 8;
			break;
		case 44: /* fragment */
			if (i == ICMP_MAX_EXT)
				goto too_many;
			next = cur_u8(&h);
			cur_skip(&h, 1);
			offm = cur_be16(&h);
			hlen = 8;
			if (!h.err && (offm & 0xfff8))
				*frag = 1;
			break;
		default:
			return MOD_OK;
		}
		if (h.err)
			return MOD_TRUNCATED;
		cur_skip(c, hlen);
		if (c->err)
			return MOD_TRUNCATED;
		*nh = next;
		o->q.proto = next;
		if (*frag)
			return MOD_OK;
	}
too_many:
	o->reason = "too many quoted IPv6 extension headers";
	return MOD_MALFORMED;
}

static int quote_ipv6(struct icmp_msg *o, struct cur *c)
{
	struct icmp_quote *q = &o->q;
	uint8_t v, nh, src[16], dst[16];
	uint16_t plen;
	int cut, frag = 0, r;

	v = cur_u8(c);
	if (c->err)
		return MOD_TRUNCATED;
	if (v >> 4 != 6) {
		o->reason = "quoted header is not IPv6";
		return MOD_MALFORMED;
	}
	cur_skip(c, 3); /* rest of version, traffic class, flow label */
	plen = cur_be16(c);
	nh = cur_u8(c);
	cur_skip(c, 1); /* hop limit */
	cur_bytes(c, src, 16);
	cur_bytes(c, dst, 16);
	if (c->err)
		return MOD_TRUNCATED;
	q->present = 1;
	q->ipv = 6;
	q->proto = nh;
	memcpy(q->src, src, 16);
	memcpy(q->dst, dst, 16);
	struct cur body = cur_take_upto(c, plen, &cut);
	r = quote_ip6_walk(o, &body, &nh, &frag);
	if (r != MOD_OK || frag)
		return r;
	return quote_l4(q, &body);
}

/* ---- the payload ---------------------------------------------------------- */

/* Eight bytes at p, in whatever order: only compared for equality. */
static uint64_t load8(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

size_t icmp_fill(const uint8_t *p, size_t n)
{
	/* start[d]: the first index from which p[i] == p[i - d] holds to the
	 * end (a tail repeating with period d; never below d); best: the
	 * lowest start of any test (the count's included), so the data is
	 * p[0..best). A test of a period not below best cannot beat it. */
	size_t start[ICMP_FILL_PERIOD + 1], best, i;

	if (n < 2)
		return 0;
	for (best = n; best > 1 && p[best - 1] == (uint8_t)(p[best - 2] + 1); best--)
		;
	for (size_t d = 1; d <= ICMP_FILL_PERIOD && d < best; d++) {
		/* A tail of period d' repeats with each multiple d of d' too,
		 * from d - d' bytes later on: the scan starts there, so runs
		 * of zeros or of a short pattern are read once, not once per
		 * multiple of their period. */
		i = n;
		for (size_t e = 1; e < d; e++)
			if (d % e == 0 && start[e] + d - e < i)
				i = start[e] + d - e;
		while (i >= d + 8 && load8(p + i - 8) == load8(p + i - 8 - d))
			i -= 8;
		while (i > d && p[i - 1] == p[i - 1 - d])
			i--;
		start[d] = i;
		if (i < best)
			best = i;
	}
	return n - best >= ICMP_FILL_PERIOD ? n - best : 0;
}

/* ---- the message ---------------------------------------------------------- */

_Static_assert(sizeof(((struct obs_icmp *)0)->lead) == ICMP_DIGEST_SKIP,
	       "obs_icmp.lead holds the bytes the digests leave out");

static void reset(struct icmp_msg *o, int ipv, unsigned flags)
{
	o->ipv = (uint8_t)ipv;
	o->type = o->code = -1;
	o->name = NULL;
	o->echo = o->error = 0;
	o->id = o->seq = -1;
	o->payload_len = 0;
	o->entropy100 = -1;
	o->data_len = 0;
	o->data_entropy100 = 0;
	o->digest = 0;
	o->data_digest = 0;
	o->lead_len = 0;
	o->mtu = -1;
	memset(&o->q, 0, sizeof(o->q));
	o->q.sport = o->q.dport = o->q.qtype = o->q.id = -1;
	o->q.tcp_seq = -1;
	o->reason = NULL;
	o->flags = flags & OBS_F_TRUNCATED;
	o->qdst[0] = '\0';
	o->qdst_len = 0;
	o->info = o->info_buf;
	o->info_len = 0;
	o->info_buf[0] = '\0';
}

/* The rest-of-header of an error: the MTU, and the RFC 4884 length of the
 * quoted datagram in bytes (0 when absent). */
static size_t error_rest(struct icmp_msg *o, struct cur *rc)
{
	uint8_t b0 = cur_u8(rc), b1 = cur_u8(rc);
	uint16_t w = cur_be16(rc);

	if (o->ipv == 4) {
		if (o->type == 3 && o->code == 4)
			o->mtu = w;
		if (o->type == 3 || o->type == 11 || o->type == 12)
			return (size_t)b1 * 4;
		return 0;
	}
	if (o->type == 2)
		o->mtu = (int64_t)((uint32_t)b0 << 24 | (uint32_t)b1 << 16 | w);
	if (o->type == 1 || o->type == 3)
		return (size_t)b0 * 8;
	return 0;
}

/* A message that ends inside its 8-byte header: cut by the capture
 * (truncated) or short on the wire (malformed). */
static int short_msg(struct icmp_msg *o, unsigned flags)
{
	if (flags & OBS_F_TRUNCATED)
		return MOD_TRUNCATED;
	o->reason = "shorter than its header";
	return MOD_MALFORMED;
}

int icmp_parse(const uint8_t *msg, size_t len, int ipv, unsigned flags, struct icmp_msg *o)
{
	struct cur c = cur_init(msg, len);
	const struct icmp_type_info *ti;
	size_t qlen = 0;
	uint8_t type, code;
	uint16_t v;
	int ret = (flags & OBS_F_TRUNCATED) ? MOD_TRUNCATED : MOD_OK;

	reset(o, ipv, flags);
	if (ipv != 4 && ipv != 6)
		return MOD_NOT_MINE;
	type = cur_u8(&c);
	if (c.err) {
		ret = MOD_TRUNCATED;
		goto out;
	}
	o->type = type; /* enough to report: an echo of 1 byte went out */
	ti = type_info(ipv, type);
	o->name = ti ? ti->name : NULL;
	o->echo = ti && ti->cls == C_ECHO;
	o->error = ti && ti->cls == C_ERROR;
	code = cur_u8(&c);
	if (c.err) {
		ret = short_msg(o, flags);
		goto out;
	}
	o->code = code;
	cur_skip(&c, 2); /* checksum, not verified */
	if (o->echo) {
		v = cur_be16(&c);
		if (!c.err)
			o->id = v;
		v = cur_be16(&c);
		if (!c.err)
			o->seq = v;
	} else {
		struct cur rc = cur_take(&c, 4);
		if (!c.err && o->error)
			qlen = error_rest(o, &rc);
	}
	if (c.err) {
		ret = short_msg(o, flags);
		goto out;
	}
	o->payload_len = (uint32_t)cur_left(&c);
	if (icmp_carries_data(ipv, type)) {
		size_t n = cur_left(&c);
		const uint8_t *pl = cur_ptr(&c, n);
		o->entropy100 = (int32_t)(text_entropy(pl, n) * 100.0 + 0.5);
		o->data_len = (uint32_t)(n - icmp_fill(pl, n));
		o->data_entropy100 = o->data_len == n ? o->entropy100 :
			(int32_t)(text_entropy(pl, o->data_len) * 100.0 + 0.5);
		/* keyed: a tunnel cannot make its reply's digest match its
		 * request's; | 1: 0 means "no digest" */
		if (!(o->flags & OBS_F_TRUNCATED)) {
			size_t skip = n < ICMP_DIGEST_SKIP ? n : ICMP_DIGEST_SKIP;
			size_t dskip = o->data_len < skip ? o->data_len : skip;
			o->digest = hash_keyed(pl + skip, n - skip) | 1;
			o->data_digest = hash_keyed(pl + dskip, o->data_len - dskip) | 1;
			memcpy(o->lead, pl, dskip);
			o->lead_len = (uint8_t)dskip;
		}
	} else if (o->error) {
		int cut;
		struct cur q = qlen ? cur_take_upto(&c, qlen, &cut) : c;
		int r = ipv == 4 ? quote_ipv4(o, &q) : quote_ipv6(o, &q);
		ret = worse(ret, r);
		if (o->q.present)
			o->qdst_len = text_addr(o->qdst, sizeof(o->qdst), o->q.ipv, o->q.dst);
	}
out:
	if (ret == MOD_MALFORMED)
		o->flags |= OBS_F_MALFORMED;
	else if (ret == MOD_TRUNCATED)
		o->flags |= OBS_F_TRUNCATED;
	return ret;
}

/* An error that says the quoted packet did not get through. */
static int blocks(const struct icmp_msg *m)
{
	if (m->ipv == 4)
		return (m->type == 3 && m->code != 4) || m->type == 11;
	return m->type == 1 || m->type == 3;
}

struct flow *icmp_tie_flow(struct flow_table *ft, int outer_ipv, const uint8_t *outer_dst,
			   struct icmp_msg *m)
{
	struct icmp_quote *q = &m->q;
	struct flow *f;
	uint16_t sp = 0, dp = 0;
	int dir = 0;

	q->matched = 0;
	if (!ft || !outer_dst || !m->error || !q->present || outer_ipv != q->ipv)
		return NULL;
	if (memcmp(outer_dst, q->src, q->ipv == 4 ? 4 : 16) != 0)
		return NULL; /* not addressed to the quoted sender */
	switch (q->proto) {
	case PR_TCP:
	case PR_UDP:
		if (q->sport < 0 || q->dport < 0)
			return NULL;
		sp = (uint16_t)q->sport;
		dp = (uint16_t)q->dport;
		break;
	case PR_ICMP:
	case PR_ICMPV6:
		if (q->id < 0)
			return NULL; /* only echoes have flows of their own */
		sp = dp = (uint16_t)q->id;
		break;
	default:
		break;
	}
	f = flow_table_find(ft, q->ipv, q->proto, q->src, sp, q->dst, dp, &dir);
	if (!f)
		return NULL;
	/* A TCP segment its sender never sent (a sequence number outside what
	 * it sent): an error a stack drops (RFC 5927, as Linux does), which
	 * would otherwise make an answered connection read as refused. */
	if (q->proto == PR_TCP && q->tcp_seq >= 0 &&
	    !flow_seq_sent(f, dir, (uint32_t)q->tcp_seq))
		return NULL;
	q->matched = 1;
	if (blocks(m))
		f->state |= FLOW_UNREACH;
	return f;
}

/* ---- the record ----------------------------------------------------------- */

static void rec_opt(struct rec *r, int64_t v)
{
	if (v < 0)
		rec_str(r, "");
	else
		rec_u64(r, (uint64_t)v);
}

void icmp_record(struct icmp_msg *m)
{
	const struct icmp_quote *q = &m->q;
	struct rec *r = &m->rec;
	char addr[ICMP_ADDR_MAX];

	rec_init(r, m->info_buf, sizeof(m->info_buf));
	rec_u64(r, m->ipv);
	rec_opt(r, m->type);
	rec_opt(r, m->code);
	rec_str(r, m->name ? m->name : "");
	rec_opt(r, m->id);
	rec_opt(r, m->seq);
	rec_u64(r, m->payload_len);
	rec_opt(r, m->entropy100);
	if (q->present) {
		rec_u64(r, q->proto);
		rec_field(r, addr, text_addr(addr, sizeof(addr), q->ipv, q->src));
		rec_opt(r, q->sport);
		rec_field(r, addr, text_addr(addr, sizeof(addr), q->ipv, q->dst));
		rec_opt(r, q->dport);
	} else {
		for (int i = 0; i < 5; i++)
			rec_str(r, "");
	}
	rec_str(r, q->matched ? "1" : "0");
	rec_str(r, m->reason ? m->reason : "");
	rec_str(r, (m->flags & OBS_F_TRUNCATED) ? "1" : "0");
	rec_opt(r, q->present ? q->id : -1);
	rec_opt(r, m->mtu);
	rec_end(r);
	m->info = m->info_buf;
	m->info_len = r->len;
}

/* ---- the module ----------------------------------------------------------- */

struct icmp_state {
	struct flow_table *flows; /* borrowed from module_env; may be NULL */
	struct icmp_msg msg;
	struct obs_icmp oi; /* the observation's measures, rewritten per message */
};

static int icmp_init(const struct module_env *env, void **state)
{
	struct icmp_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	if (hash_init() != 0) {
		free(st);
		return -ENOMEM;
	}
	st->flows = env ? env->flows : NULL;
	*state = st;
	return 0;
}

static void icmp_fini(void *state)
{
	free(state);
}

static int icmp_on_packet(void *state, const struct pkt *p, struct emit *out)
{
	struct icmp_state *st = state;
	struct icmp_msg *m = &st->msg;
	int ret, e;

	/* a message in a packet whose IP options or extension headers
	 * Linux's IP layer refuses (PKT_RX_DROP) reaches neither its host's
	 * ICMP nor a raw socket there: no event, nothing tied to a flow; the
	 * policy still judges the packet (R22-F4) */
	if (!((p->ipv == 4 && p->proto == IPPROTO_ICMP) ||
	      (p->ipv == 6 && p->proto == IPPROTO_ICMPV6)) ||
	    (p->flags & (PKT_FRAGMENT | PKT_RX_DROP)))
		return MOD_NOT_MINE;
	ret = icmp_parse(p->l4, p->l4_len, p->ipv, (p->flags & PKT_SHORT) ? OBS_F_TRUNCATED : 0,
			 m);
	if (m->type < 0)
		return ret; /* no type and code: nothing to report */
	icmp_tie_flow(st->flows, p->ipv, p->dst, m);
	icmp_record(m);
	struct obs ob = {
		.kind = OBS_ICMP,
		.pkt = p,
		.name = m->qdst,
		.name_len = m->qdst_len,
		.type = (uint16_t)m->type,
		.code = (uint16_t)(m->code < 0 ? 0 : m->code),
		.size = m->payload_len,
		.flags = m->flags,
		.info = m->info,
		.info_len = m->info_len,
	};
	if (icmp_carries_data(p->ipv, (unsigned)m->type)) {
		st->oi.digest = m->digest;
		st->oi.data_digest = m->data_digest;
		memcpy(st->oi.lead, m->lead, m->lead_len);
		st->oi.lead_len = m->lead_len;
		st->oi.data_len = m->data_len;
		st->oi.data_entropy100 = m->data_entropy100;
		st->oi.id = m->id;
		st->oi.seq = m->seq;
		ob.icmp = &st->oi;
	}
	e = out->obs(out, &ob);
	return e < 0 ? e : ret;
}

const struct module icmp_module = {
	.name = "icmp",
	.sel = SEL_ICMP,
	.init = icmp_init,
	.fini = icmp_fini,
	.on_packet = icmp_on_packet,
};
