/*
 * decode.c - link, network and transport decoding (L2..L4) with IP fragment
 * reassembly.
 *
 * One frame goes down the layers in order: the link header (Ethernet with a
 * bounded loop over VLAN tags, Linux SLL/SLL2, raw IP, BSD NULL/LOOP) yields
 * an IP version; the IP header yields a view bounded by its own declared
 * length (struct l3: the captured bytes plus how many declared bytes caplen
 * cut off); the transport header is read from that view and, for UDP,
 * narrowed again to the UDP length. Every byte is read through cursor.h.
 *
 * A read that fails is a truncation when the declared length would have held
 * it (caplen cut the frame) and a malformation when it would not (a length
 * field lied); both are counted per layer and returned, never logged.
 *
 * Fragments (IPv4 MF/offset, IPv6 fragment header) go to a small table keyed
 * by (ipv, src, dst, proto, id), proto being 0 for IPv6. Each datagram keeps
 * its payload bytes and a bitmap of the bytes it has; a byte is written only
 * the first time it arrives, so overlaps resolve to the earliest data. The
 * table is bounded in datagrams, in bytes and in packet time (entries are
 * kept in creation order, so expiry looks only at the oldest). A complete
 * datagram is copied to the decoder's reassembly buffer and decoded from
 * there. The common, unfragmented path never allocates.
 */
#include "decode.h"

#include <pcap/dlt.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"

#define DEF_VLAN_DEPTH 4u
#define DEF_FRAG_DATAGRAMS 1024u
#define DEF_FRAG_BYTES (16u << 20)
#define DEF_FRAG_TIMEOUT_US 30000000u

#define IP6_MAX_EXT 8        /* extension headers walked before giving up */
#define IP_MAX_LEN 65535u    /* largest IP datagram */
#define FRAG_KEY_LEN 38      /* ipv, proto, id[4], src[16], dst[16] */
#define FRAG_MAX_BUCKETS 65536u

/* Raw-IP link type numbers: DLT_RAW is 12 on most systems and 14 on
 * OpenBSD; LINKTYPE_RAW (101) is what savefiles carry. */
#define LT_RAW_12 12
#define LT_RAW_14 14
#define LT_LINKTYPE_RAW 101

enum {
	ETHERTYPE_IPV4 = 0x0800,
	ETHERTYPE_IPV6 = 0x86dd,
	ETHER_MAX_LEN_FIELD = 1500, /* 802.3: a length, not a type */
};

enum link_kind {
	LK_NONE = 0, LK_ETH, LK_SLL, LK_SLL2, LK_RAW, LK_IPV4, LK_IPV6, LK_NULL, LK_LOOP,
};

/* The captured part of an IP payload and how much of it caplen cut off. */
struct l3 {
	struct cur c;
	size_t missing;
};

struct frag {
	struct frag *hnext;         /* hash chain */
	struct frag *older, *newer; /* creation order, for expiry and eviction */
	uint8_t key[FRAG_KEY_LEN];
	uint64_t first_ts;
	uint8_t *data;              /* payload bytes, cap long */
	uint8_t *have;              /* one bit per byte of data */
	size_t cap;
	size_t got;                 /* distinct bytes received */
	size_t max_end;             /* highest end offset received */
	size_t total;               /* payload length, once the last fragment came */
	size_t mem;                 /* bytes charged to frag_max_bytes */
	int total_known;
	int have_first;             /* the offset-0 fragment arrived */
	uint8_t ttl;                /* of the offset-0 fragment */
	uint8_t nh;                 /* IPv6: next header of the offset-0 fragment */
};

/* One fragment on its way into the table. */
struct frag_in {
	uint8_t key[FRAG_KEY_LEN];
	size_t off;
	size_t limit;  /* offset + length may not exceed this */
	int more;
	uint8_t nh;    /* IPv6: next header after the fragment header */
};

/* What the IPv6 extension-header walk found about fragmentation. */
struct ip6_frag {
	int present;
	int more;
	size_t off;
	uint32_t id;
};

struct decoder {
	struct decode_config cfg;
	struct decode_stats stats;
	struct frag **buckets;
	size_t nbuckets; /* power of two */
	struct frag *oldest, *newest;
	unsigned nfrag;
	size_t frag_bytes;
	uint32_t seed;
	uint8_t *rbuf;   /* the reassembled datagram handed out, IP_MAX_LEN bytes */
};

static const char *const layer_names[L_COUNT] = {
	[L_LINK] = "link", [L_VLAN] = "vlan", [L_IPV4] = "ipv4", [L_IPV6] = "ipv6",
	[L_FRAG] = "frag", [L_TCP] = "tcp", [L_UDP] = "udp", [L_ICMP] = "icmp",
	[L_ICMPV6] = "icmpv6",
};

static const uint16_t vlan_tpids[] = {0x8100, 0x88a8, 0x9100, 0x9200};

/* Count r against layer l and return it. */
static enum decode_result tally(struct decoder *d, enum decode_layer l, enum decode_result r)
{
	switch (r) {
	case DECODE_OK:
		d->stats.ok[l]++;
		break;
	case DECODE_TRUNCATED:
		d->stats.truncated[l]++;
		break;
	case DECODE_MALFORMED:
		d->stats.malformed[l]++;
		break;
	default:
		break;
	}
	return r;
}

static enum decode_result not_ip(struct decoder *d)
{
	d->stats.not_ip++;
	return DECODE_NOT_IP;
}

/* Why n bytes cannot be read from v: caplen cut them, or the declared
 * length never had room for them. */
static enum decode_result l3_short(const struct l3 *v, size_t n)
{
	return cur_left(&v->c) + v->missing >= n ? DECODE_TRUNCATED : DECODE_MALFORMED;
}

static enum link_kind link_kind(int dlt)
{
	if (dlt == DLT_EN10MB)
		return LK_ETH;
	if (dlt == DLT_LINUX_SLL)
		return LK_SLL;
	if (dlt == DLT_LINUX_SLL2)
		return LK_SLL2;
	if (dlt == DLT_NULL)
		return LK_NULL;
	if (dlt == DLT_LOOP) /* before raw: 12 is DLT_LOOP on OpenBSD */
		return LK_LOOP;
	if (dlt == DLT_IPV4)
		return LK_IPV4;
	if (dlt == DLT_IPV6)
		return LK_IPV6;
	if (dlt == DLT_RAW || dlt == LT_RAW_12 || dlt == LT_LINKTYPE_RAW)
		return LK_RAW;
#if !defined(DLT_PPP_BSDOS) || DLT_PPP_BSDOS != LT_RAW_14
	if (dlt == LT_RAW_14)
		return LK_RAW;
#endif
	return LK_NONE;
}

int decode_linktype_supported(int dlt)
{
	return link_kind(dlt) != LK_NONE;
}

const char *decode_layer_name(enum decode_layer l)
{
	if ((unsigned)l >= L_COUNT)
		return "unknown";
	return layer_names[l];
}

const struct decode_stats *decode_stats(const struct decoder *d)
{
	return &d->stats;
}

unsigned decode_frag_pending(const struct decoder *d)
{
	return d->nfrag;
}

/* ---- link layer ---------------------------------------------------------- */

static int is_vlan_tpid(uint16_t type)
{
	size_t i;

	for (i = 0; i < sizeof(vlan_tpids) / sizeof(vlan_tpids[0]); i++)
		if (vlan_tpids[i] == type)
			return 1;
	return 0;
}

/* Walk VLAN tags from an ethertype, then map it to an IP version. */
static enum decode_result ethertype(struct decoder *d, struct cur *c, struct pkt *p,
				    uint16_t type, int *ipv)
{
	unsigned depth;

	for (depth = 0; is_vlan_tpid(type); depth++) {
		uint16_t tci;

		if (depth >= d->cfg.max_vlan_depth)
			return tally(d, L_VLAN, DECODE_MALFORMED);
		if (!cur_has(c, 4))
			return tally(d, L_VLAN, DECODE_TRUNCATED);
		tci = cur_be16(c);
		type = cur_be16(c);
		if (depth == 0)
			p->vlan = tci & 0x0fff;
	}
	if (depth)
		tally(d, L_VLAN, DECODE_OK);
	switch (type) {
	case ETHERTYPE_IPV4:
		*ipv = 4;
		return DECODE_OK;
	case ETHERTYPE_IPV6:
		*ipv = 6;
		return DECODE_OK;
	default:
		return not_ip(d); /* includes 802.3 length fields (<= 1500) */
	}
}

/* AF_INET and the AF_INET6 values of Linux, the BSDs and Darwin. */
static int af_ipv(uint32_t af)
{
	switch (af) {
	case 2:
		return 4;
	case 10:
	case 24:
	case 28:
	case 30:
		return 6;
	default:
		return 0;
	}
}

/* Read the link header; on DECODE_OK *ipv is 4 or 6. */
static enum decode_result decode_link(struct decoder *d, enum link_kind lk, struct cur *c,
				      struct pkt *p, int *ipv)
{
	struct cur h = *c;
	uint16_t type;
	uint32_t le, be;
	uint8_t vers;

	switch (lk) {
	case LK_ETH:
		if (!cur_has(c, 14))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		cur_skip(c, 12);
		type = cur_be16(c);
		tally(d, L_LINK, DECODE_OK);
		if (type <= ETHER_MAX_LEN_FIELD)
			return not_ip(d);
		return ethertype(d, c, p, type, ipv);
	case LK_SLL:
		if (!cur_has(c, 16))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		cur_skip(c, 14);
		type = cur_be16(c);
		tally(d, L_LINK, DECODE_OK);
		return ethertype(d, c, p, type, ipv);
	case LK_SLL2:
		if (!cur_has(c, 20))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		type = cur_be16(c);
		cur_skip(c, 18);
		tally(d, L_LINK, DECODE_OK);
		return ethertype(d, c, p, type, ipv);
	case LK_NULL:
	case LK_LOOP:
		if (!cur_has(c, 4))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		be = cur_be32(c);
		le = cur_le32(&h);
		*ipv = af_ipv(be);
		if (!*ipv && lk == LK_NULL) /* host byte order of the capturer */
			*ipv = af_ipv(le);
		tally(d, L_LINK, DECODE_OK);
		return *ipv ? DECODE_OK : not_ip(d);
	case LK_RAW:
		if (!cur_has(&h, 1))
			return tally(d, L_LINK, DECODE_TRUNCATED);
		vers = cur_u8(&h) >> 4;
		if (vers != 4 && vers != 6)
			return tally(d, L_LINK, DECODE_MALFORMED);
		*ipv = vers;
		return tally(d, L_LINK, DECODE_OK);
	case LK_IPV4:
		*ipv = 4;
		return tally(d, L_LINK, DECODE_OK);
	case LK_IPV6:
		*ipv = 6;
		return tally(d, L_LINK, DECODE_OK);
	case LK_NONE:
	default:
		return not_ip(d);
	}
}

/* ---- transport ----------------------------------------------------------- */

static enum decode_result decode_tcp(struct decoder *d, struct l3 *v, struct pkt *p)
{
	struct cur h = v->c;
	size_t hlen;

	if (!cur_has(&h, 20))
		return tally(d, L_TCP, l3_short(v, 20));
	p->sport = cur_be16(&h);
	p->dport = cur_be16(&h);
	p->seq = cur_be32(&h);
	p->ack = cur_be32(&h);
	hlen = (size_t)(cur_u8(&h) >> 4) * 4;
	p->tcp_flags = cur_u8(&h);
	p->tcp_win = cur_be16(&h);
	if (hlen < 20)
		return tally(d, L_TCP, DECODE_MALFORMED);
	if (!cur_has(&v->c, hlen))
		return tally(d, L_TCP, l3_short(v, hlen));
	p->l4 = v->c.p;
	p->l4_len = cur_left(&v->c);
	cur_skip(&v->c, hlen); /* options */
	p->payload = v->c.p;
	p->payload_len = cur_left(&v->c);
	return tally(d, L_TCP, DECODE_OK);
}

static enum decode_result decode_udp(struct decoder *d, struct l3 *v, struct pkt *p)
{
	struct cur h = v->c;
	struct cur u;
	uint16_t ulen;
	int cut;

	if (!cur_has(&h, 8))
		return tally(d, L_UDP, l3_short(v, 8));
	p->sport = cur_be16(&h);
	p->dport = cur_be16(&h);
	ulen = cur_be16(&h);
	if (ulen < 8 || ulen > cur_left(&v->c) + v->missing)
		return tally(d, L_UDP, DECODE_MALFORMED);
	u = cur_take_upto(&v->c, ulen, &cut);
	if (cut)
		p->flags |= PKT_SHORT;
	p->l4 = u.p;
	p->l4_len = cur_left(&u);
	cur_skip(&u, 8);
	p->payload = u.p;
	p->payload_len = cur_left(&u);
	return tally(d, L_UDP, DECODE_OK);
}

/* ICMP and ICMPv6: l4 is the whole message, payload what follows the
 * 8-byte header (type, code, checksum and 4 bytes of rest-of-header). */
static enum decode_result decode_icmp(struct decoder *d, struct l3 *v, struct pkt *p,
				      enum decode_layer l)
{
	if (!cur_has(&v->c, 8))
		return tally(d, l, l3_short(v, 8));
	p->l4 = v->c.p;
	p->l4_len = cur_left(&v->c);
	cur_skip(&v->c, 8);
	p->payload = v->c.p;
	p->payload_len = cur_left(&v->c);
	return tally(d, l, DECODE_OK);
}

static enum decode_result decode_l4(struct decoder *d, struct l3 *v, struct pkt *p)
{
	switch (p->proto) {
	case 6:
		return decode_tcp(d, v, p);
	case 17:
		return decode_udp(d, v, p);
	case 1:
		if (p->ipv == 4)
			return decode_icmp(d, v, p, L_ICMP);
		break;
	case 58:
		if (p->ipv == 6)
			return decode_icmp(d, v, p, L_ICMPV6);
		break;
	default:
		break;
	}
	p->l4 = v->c.p;
	p->l4_len = cur_left(&v->c);
	return DECODE_OK;
}

/* ---- fragment table ------------------------------------------------------ */

static size_t frag_hash(const struct decoder *d, const uint8_t *key)
{
	uint32_t h = 2166136261u ^ d->seed;
	size_t i;

	for (i = 0; i < FRAG_KEY_LEN; i++) {
		h ^= key[i];
		h *= 16777619u;
	}
	return h & (d->nbuckets - 1);
}

static struct frag *frag_find(const struct decoder *d, const uint8_t *key)
{
	struct frag *f;

	for (f = d->buckets[frag_hash(d, key)]; f; f = f->hnext)
		if (memcmp(f->key, key, FRAG_KEY_LEN) == 0)
			return f;
	return NULL;
}

/* Unlink f from the hash and the age list and free it. */
static void frag_drop(struct decoder *d, struct frag *f)
{
	struct frag **pp = &d->buckets[frag_hash(d, f->key)];

	while (*pp && *pp != f)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = f->hnext;
	if (f->older)
		f->older->newer = f->newer;
	else
		d->oldest = f->newer;
	if (f->newer)
		f->newer->older = f->older;
	else
		d->newest = f->older;
	d->frag_bytes -= f->mem;
	d->nfrag--;
	free(f->data);
	free(f->have);
	free(f);
}

static void frag_expire(struct decoder *d, uint64_t now)
{
	while (d->oldest && now > d->oldest->first_ts &&
	       now - d->oldest->first_ts > d->cfg.frag_timeout_us) {
		frag_drop(d, d->oldest);
		d->stats.frag_expired++;
	}
}

/* Evict the oldest datagrams other than keep until extra more bytes fit.
 * Returns 0 when they fit. */
static int frag_make_room(struct decoder *d, size_t extra, const struct frag *keep)
{
	while (d->frag_bytes + extra > d->cfg.frag_max_bytes) {
		struct frag *victim = d->oldest;

		if (victim && victim == keep)
			victim = victim->newer;
		if (!victim)
			return -1;
		frag_drop(d, victim);
		d->stats.frag_evicted++;
	}
	return 0;
}

/* A new, empty datagram for key, evicting the oldest when the table is
 * full. NULL when memory is short. */
static struct frag *frag_new(struct decoder *d, const uint8_t *key, uint64_t ts)
{
	struct frag *f = NULL;
	size_t b;

	if (d->nfrag >= d->cfg.frag_max_datagrams && d->oldest) {
		frag_drop(d, d->oldest);
		d->stats.frag_evicted++;
	}
	if (frag_make_room(d, sizeof(*f), NULL) != 0)
		goto out;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto out;
	memcpy(f->key, key, FRAG_KEY_LEN);
	f->first_ts = ts;
	f->mem = sizeof(*f);
	b = frag_hash(d, key);
	f->hnext = d->buckets[b];
	d->buckets[b] = f;
	f->older = d->newest;
	if (d->newest)
		d->newest->newer = f;
	else
		d->oldest = f;
	d->newest = f;
	d->nfrag++;
	d->frag_bytes += f->mem;
out:
	return f;
}

/* Grow f to hold end payload bytes. Returns 0, or -1 when the byte bound
 * or memory does not allow it (f is left as it was). */
static int frag_grow(struct decoder *d, struct frag *f, size_t end)
{
	size_t cap = f->cap ? f->cap : 1024;
	size_t oldmap = (f->cap + 7) / 8, newmap;
	uint8_t *data, *have;

	if (end <= f->cap)
		return 0;
	while (cap < end)
		cap *= 2;
	if (cap > IP_MAX_LEN)
		cap = IP_MAX_LEN;
	newmap = (cap + 7) / 8;
	if (frag_make_room(d, (cap - f->cap) + (newmap - oldmap), f) != 0)
		return -1;
	data = realloc(f->data, cap);
	if (!data)
		return -1;
	f->data = data;
	have = realloc(f->have, newmap);
	if (!have)
		return -1;
	memset(have + oldmap, 0, newmap - oldmap);
	f->have = have;
	d->frag_bytes += (cap - f->cap) + (newmap - oldmap);
	f->mem += (cap - f->cap) + (newmap - oldmap);
	f->cap = cap;
	return 0;
}

/* Copy the bytes of c (placed at off) that f does not have yet: the
 * earliest arrival wins. Counts overlaps. f must already hold off + len. */
static void frag_fill(struct decoder *d, struct frag *f, size_t off, struct cur *c)
{
	size_t i, len = cur_left(c), fresh = 0;

	for (i = 0; i < len; i++) {
		size_t at = off + i;
		uint8_t bit = (uint8_t)(1u << (at & 7));
		uint8_t b = cur_u8(c);

		if (f->have[at >> 3] & bit)
			continue;
		f->have[at >> 3] |= bit;
		f->data[at] = b;
		fresh++;
	}
	f->got += fresh;
	if (fresh < len) {
		d->stats.frag_overlap++;
		if (fresh == 0)
			d->stats.frag_duplicate++;
	}
}

/*
 * Store one fragment (its payload is the rest of v). DECODE_HELD while the
 * datagram is incomplete; DECODE_OK with *len set when d->rbuf now holds it,
 * with p->ttl/p->proto (IPv4) or *nh (IPv6) from its first fragment.
 */
static enum decode_result frag_input(struct decoder *d, struct l3 *v, const struct frag_in *fi,
				     struct pkt *p, uint8_t *nh, size_t *len)
{
	struct frag *f;
	size_t n = cur_left(&v->c), end = fi->off + n;

	if (v->missing)
		return tally(d, L_FRAG, DECODE_TRUNCATED);
	if (end > fi->limit || (fi->more && (n & 7)))
		return tally(d, L_FRAG, DECODE_MALFORMED);
	f = frag_find(d, fi->key);
	if (f) {
		/* A fragment that contradicts the known end is refused. */
		if (f->total_known && (end > f->total || (!fi->more && end != f->total)))
			return tally(d, L_FRAG, DECODE_MALFORMED);
		if (!fi->more && f->max_end > end)
			return tally(d, L_FRAG, DECODE_MALFORMED);
	} else {
		f = frag_new(d, fi->key, p->ts_us);
		if (!f) {
			d->stats.frag_evicted++; /* out of memory: dropped */
			return DECODE_HELD;
		}
	}
	tally(d, L_FRAG, DECODE_OK);
	if (frag_grow(d, f, end) != 0) {
		frag_drop(d, f);
		d->stats.frag_evicted++;
		return DECODE_HELD;
	}
	frag_fill(d, f, fi->off, &v->c);
	if (end > f->max_end)
		f->max_end = end;
	if (!fi->more) {
		f->total = end;
		f->total_known = 1;
	}
	if (fi->off == 0 && !f->have_first) {
		f->have_first = 1;
		f->ttl = p->ttl;
		f->nh = fi->nh;
	}
	if (!f->total_known || f->got != f->total || !f->have_first) {
		d->stats.frag_held++;
		return DECODE_HELD;
	}
	memcpy(d->rbuf, f->data, f->total);
	*len = f->total;
	p->ttl = f->ttl;
	*nh = f->nh;
	frag_drop(d, f);
	d->stats.frag_done++;
	return DECODE_OK;
}

/* ---- network ------------------------------------------------------------- */

static enum decode_result decode_ipv4(struct decoder *d, struct cur *c, size_t wire_left,
				      struct pkt *p)
{
	struct cur h = *c;
	struct frag_in fi;
	struct l3 v;
	uint8_t vihl, nh;
	uint16_t total, id, frag;
	size_t ihl, len;
	int cut;
	enum decode_result r;

	if (!cur_has(&h, 20))
		return tally(d, L_IPV4, DECODE_TRUNCATED);
	vihl = cur_u8(&h);
	cur_skip(&h, 1); /* TOS */
	total = cur_be16(&h);
	id = cur_be16(&h);
	frag = cur_be16(&h);
	p->ttl = cur_u8(&h);
	p->proto = cur_u8(&h);
	cur_skip(&h, 2); /* checksum */
	cur_bytes(&h, p->src, 4);
	cur_bytes(&h, p->dst, 4);
	ihl = (size_t)(vihl & 0x0f) * 4;
	if (vihl >> 4 != 4 || ihl < 20 || total < ihl || total > wire_left)
		return tally(d, L_IPV4, DECODE_MALFORMED);
	v.c = cur_take_upto(c, total, &cut);
	v.missing = total - cur_left(&v.c);
	if (!cur_has(&v.c, ihl))
		return tally(d, L_IPV4, DECODE_TRUNCATED); /* options cut */
	cur_skip(&v.c, ihl);
	p->ipv = 4;
	if (cut)
		p->flags |= PKT_SHORT;
	tally(d, L_IPV4, DECODE_OK);
	if (!(frag & 0x2000) && !(frag & 0x1fff))
		return decode_l4(d, &v, p);

	memset(&fi, 0, sizeof(fi));
	fi.key[0] = 4;
	fi.key[1] = p->proto;
	fi.key[2] = (uint8_t)(id >> 8);
	fi.key[3] = (uint8_t)id;
	memcpy(fi.key + 6, p->src, 16);
	memcpy(fi.key + 22, p->dst, 16);
	fi.off = (size_t)(frag & 0x1fff) * 8;
	fi.limit = IP_MAX_LEN - ihl;
	fi.more = (frag & 0x2000) != 0;
	r = frag_input(d, &v, &fi, p, &nh, &len);
	if (r != DECODE_OK)
		return r;
	p->flags = PKT_REASSEMBLED;
	v.c = cur_init(d->rbuf, len);
	v.missing = 0;
	return decode_l4(d, &v, p);
}

/*
 * Walk IPv6 extension headers from *nh, at most IP6_MAX_EXT of them. Stops
 * at a transport (or ESP, no-next-header, unknown) header with *nh set to
 * it, or right after a fragment header that is not atomic (fh filled, *nh
 * its next header). fh NULL means fragment and hop-by-hop headers are not
 * allowed here (the fragmentable part of a reassembled datagram).
 */
static enum decode_result ip6_walk(struct l3 *v, uint8_t *nh, struct ip6_frag *fh)
{
	unsigned i;

	for (i = 0; i <= IP6_MAX_EXT; i++) {
		struct cur h = v->c;
		size_t hlen;
		uint8_t next;
		uint16_t offm;

		if (*nh == 0 && (i != 0 || !fh))
			return DECODE_MALFORMED; /* hop-by-hop comes first or not at all */
		switch (*nh) {
		case 0:  /* hop-by-hop */
		case 43: /* routing */
		case 60: /* destination options */
			if (i == IP6_MAX_EXT)
				return DECODE_MALFORMED;
			if (!cur_has(&h, 2))
				return l3_short(v, 2);
			next = cur_u8(&h);
			hlen = ((size_t)cur_u8(&h) + 1) * 8;
			break;
		case 51: /* AH: length in 4-byte units, minus 2 */
			if (i == IP6_MAX_EXT)
				return DECODE_MALFORMED;
			if (!cur_has(&h, 2))
				return l3_short(v, 2);
			next = cur_u8(&h);
			hlen = ((size_t)cur_u8(&h) + 2) * 4;
			break;
		case 44: /* fragment */
			if (i == IP6_MAX_EXT || !fh || fh->present)
				return DECODE_MALFORMED;
			if (!cur_has(&h, 8))
				return l3_short(v, 8);
			next = cur_u8(&h);
			cur_skip(&h, 1);
			offm = cur_be16(&h);
			fh->id = cur_be32(&h);
			hlen = 8;
			if ((offm & 0xfff8) || (offm & 1)) {
				fh->present = 1;
				fh->off = offm & 0xfff8;
				fh->more = offm & 1;
				cur_skip(&v->c, 8);
				*nh = next;
				return DECODE_OK;
			}
			break; /* atomic fragment (RFC 6946): just a header */
		default:
			return DECODE_OK;
		}
		if (!cur_has(&v->c, hlen))
			return l3_short(v, hlen);
		cur_skip(&v->c, hlen);
		*nh = next;
	}
	return DECODE_MALFORMED;
}

static enum decode_result decode_ipv6(struct decoder *d, struct cur *c, size_t wire_left,
				      struct pkt *p)
{
	struct cur h = *c;
	struct ip6_frag fh = {0, 0, 0, 0};
	struct frag_in fi;
	struct l3 v;
	uint32_t vtf;
	uint16_t plen;
	uint8_t nh;
	size_t len;
	int cut;
	enum decode_result r;

	if (!cur_has(&h, 40))
		return tally(d, L_IPV6, DECODE_TRUNCATED);
	vtf = cur_be32(&h);
	plen = cur_be16(&h);
	nh = cur_u8(&h);
	p->ttl = cur_u8(&h);
	cur_bytes(&h, p->src, 16);
	cur_bytes(&h, p->dst, 16);
	/* Payload length 0 with hop-by-hop is a jumbogram: not supported. */
	if (vtf >> 28 != 6 || (plen == 0 && nh == 0) || 40 + (size_t)plen > wire_left)
		return tally(d, L_IPV6, DECODE_MALFORMED);
	cur_skip(c, 40);
	v.c = cur_take_upto(c, plen, &cut);
	v.missing = plen - cur_left(&v.c);
	p->ipv = 6;
	if (cut)
		p->flags |= PKT_SHORT;
	r = ip6_walk(&v, &nh, &fh);
	if (r != DECODE_OK)
		return tally(d, L_IPV6, r);
	tally(d, L_IPV6, DECODE_OK);
	p->proto = nh;
	if (!fh.present)
		return decode_l4(d, &v, p);

	memset(&fi, 0, sizeof(fi));
	fi.key[0] = 6;
	fi.key[2] = (uint8_t)(fh.id >> 24);
	fi.key[3] = (uint8_t)(fh.id >> 16);
	fi.key[4] = (uint8_t)(fh.id >> 8);
	fi.key[5] = (uint8_t)fh.id;
	memcpy(fi.key + 6, p->src, 16);
	memcpy(fi.key + 22, p->dst, 16);
	fi.off = fh.off;
	fi.limit = IP_MAX_LEN;
	fi.more = fh.more;
	fi.nh = nh;
	r = frag_input(d, &v, &fi, p, &nh, &len);
	if (r != DECODE_OK)
		return r;
	p->flags = PKT_REASSEMBLED;
	v.c = cur_init(d->rbuf, len);
	v.missing = 0;
	r = ip6_walk(&v, &nh, NULL);
	if (r != DECODE_OK)
		return tally(d, L_FRAG, r);
	p->proto = nh;
	return decode_l4(d, &v, p);
}

/* ---- entry points -------------------------------------------------------- */

struct decoder *decoder_new(const struct decode_config *cfg)
{
	struct decoder *d = calloc(1, sizeof(*d));
	struct decoder *ret = NULL;
	size_t nb = 16;

	if (!d)
		goto out;
	if (cfg)
		d->cfg = *cfg;
	if (!d->cfg.max_vlan_depth)
		d->cfg.max_vlan_depth = DEF_VLAN_DEPTH;
	if (!d->cfg.frag_max_datagrams)
		d->cfg.frag_max_datagrams = DEF_FRAG_DATAGRAMS;
	if (!d->cfg.frag_max_bytes)
		d->cfg.frag_max_bytes = DEF_FRAG_BYTES;
	if (!d->cfg.frag_timeout_us)
		d->cfg.frag_timeout_us = DEF_FRAG_TIMEOUT_US;
	while (nb < d->cfg.frag_max_datagrams && nb < FRAG_MAX_BUCKETS)
		nb <<= 1;
	d->nbuckets = nb;
	d->seed = (uint32_t)((uintptr_t)d >> 4);
	d->buckets = calloc(nb, sizeof(*d->buckets));
	if (!d->buckets)
		goto out;
	d->rbuf = malloc(IP_MAX_LEN);
	if (!d->rbuf)
		goto out;
	ret = d;
	d = NULL;
out:
	decoder_free(d);
	return ret;
}

void decoder_free(struct decoder *d)
{
	if (!d)
		return;
	while (d->oldest)
		frag_drop(d, d->oldest);
	free(d->buckets);
	free(d->rbuf);
	free(d);
}

enum decode_result decode_packet(struct decoder *d, int dlt, const uint8_t *data,
				 uint32_t caplen, uint32_t wirelen, uint64_t ts_us,
				 struct pkt *p)
{
	struct cur c;
	size_t wire, wire_left;
	int ipv = 0;
	enum decode_result r;

	memset(p, 0, sizeof(*p));
	p->ts_us = ts_us;
	p->caplen = caplen;
	p->wirelen = wirelen;
	p->linktype = dlt;
	if (!data)
		caplen = 0;
	frag_expire(d, ts_us);
	c = cur_init(data, caplen);
	r = decode_link(d, link_kind(dlt), &c, p, &ipv);
	if (r != DECODE_OK)
		return r;
	/* Bytes of the frame on the wire after the link header: an IP length
	 * beyond them is a lie, not a truncation. */
	wire = wirelen > caplen ? wirelen : caplen;
	wire_left = wire - (caplen - cur_left(&c));
	if (ipv == 4)
		return decode_ipv4(d, &c, wire_left, p);
	return decode_ipv6(d, &c, wire_left, p);
}
