/*
 * copies.c - the same UDP or ICMP datagram seen on two capture sources
 * (copies.h).
 *
 * The datagrams remembered are a ring of COPIES_MAX entries in arrival
 * order, the next to write being the oldest; an index of chained buckets
 * (entry numbers + 1, the chain links in the entries) finds an entry by
 * its fingerprint. Writing over the oldest entry first unlinks it from its
 * chain, so chains hold only live entries and the whole memory is fixed
 * at COPIES_MAX entries (about 256 KiB with the index).
 */
#include "copies.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"

enum { COPIES_BUCKETS = 2 * COPIES_MAX }; /* a power of two */

struct copy {
	uint64_t fp;    /* the datagram's fingerprint */
	uint64_t ts_us; /* when it was seen */
	uint32_t iface; /* from which capture source */
	uint32_t next;  /* the next entry in its bucket, + 1; 0 ends */
};

struct copies {
	struct copy ring[COPIES_MAX];
	uint32_t bucket[COPIES_BUCKETS]; /* the first entry of each chain, + 1 */
	uint32_t head;                   /* the entry to write next (the oldest) */
	uint32_t used;                   /* entries written, up to COPIES_MAX */
};

struct copies *copies_new(void)
{
	return calloc(1, sizeof(struct copies));
}

void copies_free(struct copies *c)
{
	free(c);
}

uint32_t copies_held(const struct copies *c)
{
	return c ? c->used : 0;
}

/* The fingerprint: everything a router forwards unchanged. The tunnel
 * that carried the datagram counts: the same DNS query sent plainly and
 * inside VXLAN are two ways out, not one datagram twice. */
static uint64_t fingerprint(const struct pkt *p)
{
	struct {
		uint64_t l4; /* hash of the transport header and payload */
		uint8_t src[16], dst[16], route_to[16];
		struct pkt_hop outer;
		uint8_t ipv, proto, encap;
	} k;

	memset(&k, 0, sizeof(k)); /* the padding too: it is hashed */
	k.l4 = hash_keyed(p->l4, p->l4 ? p->l4_len : 0);
	memcpy(k.src, p->src, sizeof(k.src));
	memcpy(k.dst, p->dst, sizeof(k.dst));
	if (p->flags & PKT_SRCROUTE)
		memcpy(k.route_to, p->route_to, sizeof(k.route_to));
	if (p->encap) {
		k.outer.ipv = p->outer.ipv;
		k.outer.proto = p->outer.proto;
		k.outer.sport = p->outer.sport;
		k.outer.dport = p->outer.dport;
		memcpy(k.outer.src, p->outer.src, sizeof(k.outer.src));
		memcpy(k.outer.dst, p->outer.dst, sizeof(k.outer.dst));
	}
	k.ipv = p->ipv;
	k.proto = p->proto;
	k.encap = p->encap;
	return hash_keyed(&k, sizeof(k));
}

static uint32_t *bucket_of(struct copies *c, uint64_t fp)
{
	return &c->bucket[fp & (COPIES_BUCKETS - 1)];
}

/* Take entry i (live) out of its chain. */
static void unlink_entry(struct copies *c, uint32_t i)
{
	uint32_t *link = bucket_of(c, c->ring[i].fp);

	while (*link && *link != i + 1)
		link = &c->ring[*link - 1].next;
	if (*link)
		*link = c->ring[i].next;
}

/*
 * A repeat from the same source refreshes that source's entry instead of
 * adding one, so a fingerprint has at most one entry per source and a
 * datagram sent over and over (the review's 200,000 copies of one) cannot
 * grow a chain: every chain holds distinct fingerprints, which the keyed
 * hash spreads over the buckets.
 */
int copies_seen(struct copies *c, const struct pkt *p, uint32_t iface)
{
	const uint64_t fp = fingerprint(p), ts = p->ts_us;
	uint32_t *b = bucket_of(c, fp);
	struct copy *mine = NULL;

	for (uint32_t k = *b; k; k = c->ring[k - 1].next) {
		struct copy *e = &c->ring[k - 1];
		if (e->fp != fp)
			continue;
		uint64_t apart = e->ts_us > ts ? e->ts_us - ts : ts - e->ts_us;
		if (e->iface != iface && apart <= COPIES_WINDOW_US)
			return 1;
		if (e->iface == iface)
			mine = e;
	}
	if (mine) { /* the same source again: a retry, read; remembered as the latest */
		mine->ts_us = ts;
		return 0;
	}
	uint32_t i = c->head;
	if (c->used == COPIES_MAX)
		unlink_entry(c, i);
	else
		c->used++;
	c->ring[i] = (struct copy){.fp = fp, .ts_us = ts, .iface = iface, .next = *b};
	*b = i + 1;
	c->head = (i + 1) % COPIES_MAX;
	return 0;
}
