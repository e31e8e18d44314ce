/*
 * flow.c - the bidirectional flow table.
 *
 * Flows live in a power-of-two hash table (chained through hnext, at least
 * one bucket per allowed flow) keyed by a seeded murmur-style hash of the
 * canonical tuple: the two (address, port) ends are put in a fixed order
 * before hashing, so both directions of a flow land in the same bucket and a
 * lookup is one chain walk. Flow structs come from a free list refilled in
 * chunks, so after warm-up no packet calls malloc except for the first bytes
 * of a stream or a growing stream buffer.
 *
 * Each flow is on one of three LRU lists (open TCP, UDP/ICMP/other, closed
 * TCP), each with one idle timeout; a packet moves its flow to the head of
 * its list, so expiry only looks at the list tails and stops at the first
 * flow that is not idle. The same tails give the least recently seen flow to
 * evict when the table is full. Out-of-order packet times never move last_us
 * backwards; they can only delay an expiry, never corrupt a list.
 *
 * TCP streams: the bytes of each direction are reassembled in order into a
 * lazily allocated buffer that grows geometrically up to stream_max.
 * Out-of-order data is copied straight into the buffer at its offset, and the
 * held ranges are tracked in a small sorted array (at most ooo_max ranges);
 * a byte already received (in order or held) is never overwritten, so the
 * first copy of any byte wins. Offsets are serial-number differences from the
 * ISN (int32), so sequence wraparound is invisible.
 *
 * Holes (flow.h, "Holes"): stream_skip() turns the hole in front of the next
 * data into zeros and moves len past it. It is called when the peer's
 * highest ACK (kept per direction in acked) covers the hole before held or
 * arriving data, when the ooo_max ranges would be exceeded, and at FIN/RST
 * with data held. The skip never touches bytes we hold, and the hole record
 * is a single range per direction, so all of it is bounded and needs no
 * allocation beyond the stream buffer itself.
 */
#include "flow.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cursor.h"

enum { PROTO_ICMP = 1, PROTO_TCP = 6, PROTO_UDP = 17, PROTO_ICMPV6 = 58 };

/* LRU lists, one per idle class. */
enum { LRU_TCP = 0, LRU_OTHER, LRU_CLOSED, LRU_N };

enum {
	FLOW_CHUNK = 256,       /* flow structs allocated at a time */
	STREAM_INIT_CAP = 1024, /* first stream buffer size */
};

#define MAX_FLOWS_LIMIT (1u << 24)
#define STREAM_MAX_LIMIT (1u << 30)

struct flow_chunk {
	struct flow_chunk *next;
	struct flow flows[];
};

struct lru_list {
	struct flow *head, *tail; /* head: most recently seen */
};

struct flow_table {
	struct flow_config cfg;
	flow_end_fn on_end;
	void *user;
	struct flow **buckets;
	uint32_t mask;
	uint64_t seed;
	struct lru_list lru[LRU_N];
	struct flow *free_list; /* linked through hnext */
	struct flow_chunk *chunks;
	uint32_t allocated; /* flow structs in chunks */
	uint64_t next_id;
	struct flow_stats stats;
};

/* A tuple as seen on the wire (src is the sender). */
struct flow_key {
	uint8_t ipv, proto;
	uint16_t sport, dport;
	uint8_t src[16], dst[16];
};

/* ---------------------------------------------------------------- config */

static void config_fill(struct flow_config *c, const struct flow_config *in)
{
	static const struct flow_config defaults = {
		.max_flows = 262144,
		.stream_max = 16384,
		.ooo_max = 16,
		.stream_total_max = 64ull << 20,
		.tcp_idle_us = 300ull * 1000000,
		.udp_idle_us = 60ull * 1000000,
		.closed_idle_us = 10ull * 1000000,
		.hash_seed = 0,
	};

	*c = defaults;
	if (!in)
		return;
	if (in->max_flows)
		c->max_flows = in->max_flows;
	if (in->stream_max)
		c->stream_max = in->stream_max;
	if (in->ooo_max)
		c->ooo_max = in->ooo_max;
	if (in->stream_total_max)
		c->stream_total_max = in->stream_total_max;
	if (in->tcp_idle_us)
		c->tcp_idle_us = in->tcp_idle_us;
	if (in->udp_idle_us)
		c->udp_idle_us = in->udp_idle_us;
	if (in->closed_idle_us)
		c->closed_idle_us = in->closed_idle_us;
	c->hash_seed = in->hash_seed;
	if (c->max_flows > MAX_FLOWS_LIMIT)
		c->max_flows = MAX_FLOWS_LIMIT;
	if (c->stream_max > STREAM_MAX_LIMIT)
		c->stream_max = STREAM_MAX_LIMIT;
}

/* ------------------------------------------------------------------ hash */

static inline uint64_t rotl64(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* One MurmurHash3 x64 block step. */
static inline uint64_t murmur_step(uint64_t h, uint64_t k)
{
	k *= 0x87c37b91114253d5ull;
	k = rotl64(k, 31);
	k *= 0x4cf5ad432745937full;
	h ^= k;
	h = rotl64(h, 27);
	return h * 5 + 0x52dce729;
}

static inline uint64_t fmix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/* Hash of the tuple, the same for both orientations. */
static uint32_t key_hash(const struct flow_table *ft, const struct flow_key *k)
{
	const uint8_t *a = k->src, *b = k->dst;
	uint16_t ap = k->sport, bp = k->dport;
	int c = memcmp(a, b, 16);

	if (c > 0 || (c == 0 && ap > bp)) {
		const uint8_t *t = a;
		uint16_t tp = ap;
		a = b;
		b = t;
		ap = bp;
		bp = tp;
	}
	uint64_t h = ft->seed;
	h = murmur_step(h, load64(a));
	h = murmur_step(h, load64(b));
	if (k->ipv == 6) {
		h = murmur_step(h, load64(a + 8));
		h = murmur_step(h, load64(b + 8));
	}
	h = murmur_step(h, (uint64_t)ap << 48 | (uint64_t)bp << 32 |
				   (uint64_t)k->ipv << 8 | k->proto);
	return (uint32_t)fmix64(h ^ 37);
}

/* The flow of k in either orientation; *dir is 0 when k's sender is the
 * initiator. */
static struct flow *lookup(const struct flow_table *ft, const struct flow_key *k,
			   uint32_t h, int *dir)
{
	for (struct flow *f = ft->buckets[h & ft->mask]; f; f = f->hnext) {
		if (f->hash != h || f->ipv != k->ipv || f->proto != k->proto)
			continue;
		if (f->sport == k->sport && f->dport == k->dport &&
		    memcmp(f->src, k->src, 16) == 0 && memcmp(f->dst, k->dst, 16) == 0) {
			*dir = 0;
			return f;
		}
		if (f->sport == k->dport && f->dport == k->sport &&
		    memcmp(f->src, k->dst, 16) == 0 && memcmp(f->dst, k->src, 16) == 0) {
			*dir = 1;
			return f;
		}
	}
	return NULL;
}

static void hash_unlink(struct flow_table *ft, struct flow *f)
{
	struct flow **pp = &ft->buckets[f->hash & ft->mask];

	while (*pp && *pp != f)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = f->hnext;
	f->hnext = NULL;
}

/* ------------------------------------------------------------------- LRU */

static void lru_unlink(struct flow_table *ft, struct flow *f)
{
	struct lru_list *l = &ft->lru[f->lru_class];

	if (f->lru_prev)
		f->lru_prev->lru_next = f->lru_next;
	else
		l->head = f->lru_next;
	if (f->lru_next)
		f->lru_next->lru_prev = f->lru_prev;
	else
		l->tail = f->lru_prev;
	f->lru_prev = f->lru_next = NULL;
}

static void lru_push_head(struct flow_table *ft, struct flow *f, uint8_t cls)
{
	struct lru_list *l = &ft->lru[cls];

	f->lru_class = cls;
	f->lru_prev = NULL;
	f->lru_next = l->head;
	if (l->head)
		l->head->lru_prev = f;
	else
		l->tail = f;
	l->head = f;
}

static int flow_closed(const struct flow *f)
{
	return (f->state & (FLOW_RST | FLOW_RST_INIT)) || f->fin_dirs == 3;
}

static uint8_t flow_class(const struct flow *f)
{
	if (f->proto != PROTO_TCP)
		return LRU_OTHER;
	return flow_closed(f) ? LRU_CLOSED : LRU_TCP;
}

static uint64_t class_timeout(const struct flow_table *ft, int cls)
{
	switch (cls) {
	case LRU_TCP:
		return ft->cfg.tcp_idle_us;
	case LRU_CLOSED:
		return ft->cfg.closed_idle_us;
	default:
		return ft->cfg.udp_idle_us;
	}
}

/*
 * The list whose tail is the least recently seen flow, or -1 when all are
 * empty. With idle_only, only tails idle at now count. Ties go to closed,
 * then other, then open TCP flows.
 */
static int oldest_class(const struct flow_table *ft, uint64_t now, int idle_only)
{
	static const int order[LRU_N] = {LRU_CLOSED, LRU_OTHER, LRU_TCP};
	int best = -1;
	uint64_t best_us = 0;

	for (int i = 0; i < LRU_N; i++) {
		int cls = order[i];
		const struct flow *f = ft->lru[cls].tail;
		if (!f)
			continue;
		if (idle_only && (now < f->last_us ||
				  now - f->last_us < class_timeout(ft, cls)))
			continue;
		if (best < 0 || f->last_us < best_us) {
			best = cls;
			best_us = f->last_us;
		}
	}
	return best;
}

/* --------------------------------------------------------------- streams */

static uint64_t ooo_bytes(const struct flow_table *ft)
{
	return (uint64_t)ft->cfg.ooo_max * sizeof(struct flow_seg);
}

static void ooo_free(struct flow_table *ft, struct flow_stream *st)
{
	if (st->ooo) {
		free(st->ooo);
		ft->stats.stream_bytes -= ooo_bytes(ft);
	}
	st->ooo = NULL;
	st->ooo_n = 0;
}

static void stream_release(struct flow_table *ft, struct flow_stream *st)
{
	ooo_free(ft, st);
	free(st->buf);
	ft->stats.stream_bytes -= st->cap;
	st->buf = NULL;
	st->cap = 0;
}

/* Room left under stream_total_max. */
static uint64_t stream_room(const struct flow_table *ft)
{
	if (ft->stats.stream_bytes >= ft->cfg.stream_total_max)
		return 0;
	return ft->cfg.stream_total_max - ft->stats.stream_bytes;
}

/*
 * Make st->buf hold at least need (<= stream_max) bytes: doubling, capped at
 * stream_max, or exactly need when the doubled size does not fit under
 * stream_total_max. Returns 0, or -1 (buffer unchanged) when it cannot.
 */
static int stream_reserve(struct flow_table *ft, struct flow_stream *st, uint32_t need)
{
	if (need <= st->cap)
		return 0;
	uint64_t room = stream_room(ft);
	uint64_t cap = st->cap ? st->cap : STREAM_INIT_CAP;
	while (cap < need)
		cap *= 2;
	if (cap > ft->cfg.stream_max)
		cap = ft->cfg.stream_max;
	if (cap - st->cap > room)
		cap = need;
	if (cap - st->cap > room)
		return -1;
	uint8_t *nb = realloc(st->buf, cap);
	if (!nb)
		return -1;
	st->buf = nb;
	ft->stats.stream_bytes += cap - st->cap;
	st->cap = (uint32_t)cap;
	return 0;
}

/*
 * Copy stream bytes [lo, hi) from data (whose byte 0 is at stream offset s0
 * <= lo), skipping every byte that a held range already covers: the first
 * copy of a byte wins. Bytes below len are never passed in.
 */
static void stream_write(struct flow_stream *st, int64_t s0, const uint8_t *data,
			 uint32_t lo, uint32_t hi)
{
	uint32_t pos = lo;

	for (uint32_t i = 0; i < st->ooo_n && pos < hi; i++) {
		const struct flow_seg *r = &st->ooo[i];
		if (r->end <= pos)
			continue;
		if (r->start >= hi)
			break;
		if (r->start > pos)
			memcpy(st->buf + pos, data + (pos - s0), r->start - pos);
		pos = r->end;
	}
	if (pos < hi)
		memcpy(st->buf + pos, data + (pos - s0), hi - pos);
}

/* Held ranges [*i, *j) overlap or touch [s, e]; returns the range count after
 * merging [s, e) with them. */
static uint32_t ooo_span(const struct flow_stream *st, uint32_t s, uint32_t e,
			 uint32_t *i, uint32_t *j)
{
	uint32_t a = 0, b;

	while (a < st->ooo_n && st->ooo[a].end < s)
		a++;
	b = a;
	while (b < st->ooo_n && st->ooo[b].start <= e)
		b++;
	*i = a;
	*j = b;
	return st->ooo_n - (b - a) + 1;
}

static void ooo_merge(struct flow_stream *st, uint32_t s, uint32_t e, uint32_t i,
		      uint32_t j)
{
	if (j > i) {
		if (st->ooo[i].start < s)
			s = st->ooo[i].start;
		if (st->ooo[j - 1].end > e)
			e = st->ooo[j - 1].end;
	}
	memmove(&st->ooo[i + 1], &st->ooo[j], (st->ooo_n - j) * sizeof(st->ooo[0]));
	st->ooo[i].start = s;
	st->ooo[i].end = e;
	st->ooo_n = st->ooo_n - (j - i) + 1;
}

/* After len advanced: absorb held ranges that now touch the in-order data. */
static void ooo_absorb(struct flow_stream *st)
{
	uint32_t k = 0;

	while (k < st->ooo_n && st->ooo[k].start <= st->len) {
		if (st->ooo[k].end > st->len)
			st->len = st->ooo[k].end;
		k++;
	}
	if (k) {
		memmove(&st->ooo[0], &st->ooo[k], (st->ooo_n - k) * sizeof(st->ooo[0]));
		st->ooo_n -= k;
	}
}

/*
 * Skip the hole [len, to): len < to <= stream_max and no held byte lies
 * below to. The hole's bytes become zeros, len moves to to, held ranges that
 * now touch the stream are absorbed, and the hole is recorded: it replaces
 * the recorded range when the analyzer's cursor has passed that range, else
 * extends it. Returns 0, or -1 when the buffer cannot grow (the direction
 * then stops, as overflow).
 */
static int stream_skip(struct flow_table *ft, struct flow_stream *st, uint32_t to)
{
	if (stream_reserve(ft, st, to) < 0) {
		st->overflow = 1;
		ft->stats.stream_capped++;
		ooo_free(ft, st);
		return -1;
	}
	memset(st->buf + st->len, 0, to - st->len);
	if (!st->holes || st->consumed >= st->resync)
		st->hole_start = st->len;
	st->resync = to;
	st->holes++;
	ft->stats.stream_holes++;
	st->len = to;
	ooo_absorb(st);
	if (st->len >= ft->cfg.stream_max) {
		st->overflow = 1;
		ft->stats.stream_truncated++;
		ooo_free(ft, st);
	}
	return 0;
}

/*
 * Skip the holes the peer has acknowledged. With next == 0, every hole in
 * front of held data whose start the peer's ACK reaches; otherwise (a
 * segment starting at next > len is arriving) only up to next, so no byte of
 * that segment falls into a hole. A hole with no data after it is left
 * alone: its bytes may still show up (the capture reordered the directions).
 */
static void stream_skip_acked(struct flow_table *ft, struct flow_stream *st, uint32_t next)
{
	if (!st->acked_set || !st->isn_set)
		return;
	const int64_t ack = (int32_t)(st->acked - st->isn); /* serial */

	while (!st->done && !st->overflow) {
		uint32_t to;
		if (next) {
			if (st->len >= next)
				break;
			to = next;
			if (st->ooo_n && st->ooo[0].start < to)
				to = st->ooo[0].start;
		} else {
			if (!st->ooo_n)
				break;
			to = st->ooo[0].start;
		}
		if ((int64_t)to > ack || stream_skip(ft, st, to) < 0)
			break;
	}
}

/* No more bytes will come before the held data (FIN, RST): skip every hole
 * in front of it. */
static void stream_flush(struct flow_table *ft, struct flow_stream *st)
{
	while (!st->done && !st->overflow && st->ooo_n)
		if (stream_skip(ft, st, st->ooo[0].start) < 0)
			break;
}

/* Add n payload bytes whose first byte has sequence number seq. */
static void stream_add(struct flow_table *ft, struct flow_stream *st, uint32_t seq,
		       const uint8_t *data, size_t n)
{
	const uint32_t max = ft->cfg.stream_max;

	if (st->done || st->overflow || st->gap || n == 0 || !data)
		return;
	if (!st->isn_set) {
		st->isn = seq;
		st->isn_set = 1;
	}
	int64_t s0 = (int32_t)(seq - st->isn); /* serial arithmetic */
	int64_t e = s0 + (int64_t)n;
	int64_t s = s0 < (int64_t)st->len ? (int64_t)st->len : s0;

	if (e <= (int64_t)st->len)
		return; /* retransmission: every byte already here */
	if (s >= (int64_t)max) {
		ft->stats.stream_far++;
		return;
	}
	if (e > (int64_t)max)
		e = max;

	/* A hole in front: skip it if the peer has the bytes, or if holding
	 * this segment would take more than ooo_max ranges (the first hole
	 * goes, never past this segment's start). */
	uint32_t i = 0, j = 0;
	if (s > (int64_t)st->len)
		stream_skip_acked(ft, st, (uint32_t)s);
	for (;;) {
		if (st->overflow || e <= (int64_t)st->len)
			return;
		if (s < (int64_t)st->len)
			s = st->len;
		if (s == (int64_t)st->len ||
		    ooo_span(st, (uint32_t)s, (uint32_t)e, &i, &j) <= ft->cfg.ooo_max)
			break;
		uint32_t to = st->ooo[0].start; /* ooo_n >= ooo_max >= 1 here */
		if ((int64_t)to > s)
			to = (uint32_t)s;
		if (stream_skip(ft, st, to) < 0)
			return;
	}

	if (s == (int64_t)st->len) {
		if (stream_reserve(ft, st, (uint32_t)e) < 0) {
			st->overflow = 1;
			ft->stats.stream_capped++;
			ft->stats.stream_cap_bytes += (uint64_t)(e - s);
			ooo_free(ft, st);
			return;
		}
		stream_write(st, s0, data, (uint32_t)s, (uint32_t)e);
		st->len = (uint32_t)e;
		ooo_absorb(st);
		if (st->len >= max) {
			st->overflow = 1;
			ft->stats.stream_truncated++;
			ooo_free(ft, st);
		}
		return;
	}

	/* Out of order, within the range budget (i, j from ooo_span): hold it
	 * in place. */
	if (!st->ooo) {
		if (ooo_bytes(ft) > stream_room(ft)) {
			ft->stats.ooo_dropped++;
			ft->stats.stream_cap_bytes += (uint64_t)(e - s);
			return;
		}
		st->ooo = malloc(ooo_bytes(ft));
		if (!st->ooo) {
			ft->stats.ooo_dropped++;
			return;
		}
		ft->stats.stream_bytes += ooo_bytes(ft);
	}
	if (stream_reserve(ft, st, (uint32_t)e) < 0) {
		ft->stats.ooo_dropped++;
		ft->stats.stream_cap_bytes += (uint64_t)(e - s);
		return;
	}
	stream_write(st, s0, data, (uint32_t)s, (uint32_t)e);
	ooo_merge(st, (uint32_t)s, (uint32_t)e, i, j);
}

/* ----------------------------------------------------------------- flows */

static struct flow *flow_alloc(struct flow_table *ft)
{
	if (!ft->free_list) {
		uint32_t n = ft->cfg.max_flows - ft->allocated;
		if (n == 0 || n > FLOW_CHUNK)
			n = FLOW_CHUNK;
		struct flow_chunk *c = malloc(sizeof(*c) + (size_t)n * sizeof(struct flow));
		if (!c)
			return NULL;
		c->next = ft->chunks;
		ft->chunks = c;
		ft->allocated += n;
		for (uint32_t i = n; i-- > 0;) {
			c->flows[i].hnext = ft->free_list;
			ft->free_list = &c->flows[i];
		}
	}
	struct flow *f = ft->free_list;
	ft->free_list = f->hnext;
	return f;
}

/* Call on_end, release everything the flow holds and return it to the free
 * list. */
static void flow_end(struct flow_table *ft, struct flow *f)
{
	if (ft->on_end)
		ft->on_end(ft->user, f);
	free(f->app_state);
	f->app_state = NULL;
	if (f->proto == PROTO_TCP) { /* only tcp_update fills streams */
		stream_release(ft, &f->st[0]);
		stream_release(ft, &f->st[1]);
	}
	hash_unlink(ft, f);
	lru_unlink(ft, f);
	ft->stats.active--;
	f->hnext = ft->free_list;
	ft->free_list = f;
}

/* A new flow for k; with turn, k's receiver is the initiator. Evicts the
 * least recently seen flow when the table is full. */
static struct flow *flow_create(struct flow_table *ft, const struct flow_key *k,
				uint32_t h, int turn, uint64_t ts)
{
	if (ft->stats.active >= ft->cfg.max_flows) {
		int cls = oldest_class(ft, 0, 0);
		if (cls >= 0) {
			flow_end(ft, ft->lru[cls].tail);
			ft->stats.evicted++;
		}
	}
	struct flow *f = flow_alloc(ft);
	if (!f)
		return NULL;
	memset(f, 0, sizeof(*f));
	f->id = ++ft->next_id;
	f->ipv = k->ipv;
	f->proto = k->proto;
	if (turn) {
		memcpy(f->src, k->dst, 16);
		memcpy(f->dst, k->src, 16);
		f->sport = k->dport;
		f->dport = k->sport;
	} else {
		memcpy(f->src, k->src, 16);
		memcpy(f->dst, k->dst, 16);
		f->sport = k->sport;
		f->dport = k->dport;
	}
	f->first_us = f->last_us = ts;
	f->hash = h;
	f->hnext = ft->buckets[h & ft->mask];
	ft->buckets[h & ft->mask] = f;
	lru_push_head(ft, f, flow_class(f));
	ft->stats.created++;
	ft->stats.active++;
	return f;
}

static void swap_bits(uint32_t *state, uint32_t a, uint32_t b)
{
	uint32_t s = *state & ~(a | b);
	if (*state & a)
		s |= b;
	if (*state & b)
		s |= a;
	*state = s;
}

/* The responder sent a pure SYN: make it the initiator. */
static void flow_turn(struct flow *f)
{
	uint8_t a[16];
	uint16_t port = f->sport;
	uint64_t n;
	struct flow_stream st = f->st[0];

	memcpy(a, f->src, 16);
	memcpy(f->src, f->dst, 16);
	memcpy(f->dst, a, 16);
	f->sport = f->dport;
	f->dport = port;
	n = f->pkts[0];
	f->pkts[0] = f->pkts[1];
	f->pkts[1] = n;
	n = f->bytes[0];
	f->bytes[0] = f->bytes[1];
	f->bytes[1] = n;
	f->st[0] = f->st[1];
	f->st[1] = st;
	f->fin_dirs = (uint8_t)((f->fin_dirs & 1) << 1 | (f->fin_dirs & 2) >> 1);
	swap_bits(&f->state, FLOW_DATA0, FLOW_DATA1);
	swap_bits(&f->state, FLOW_RST, FLOW_RST_INIT);
	f->state &= ~(uint32_t)(FLOW_SYNACK | FLOW_REPLY);
	if (f->pkts[1])
		f->state |= FLOW_REPLY;
}

static void tcp_update(struct flow_table *ft, struct flow *f, const struct pkt *p, int dir)
{
	const uint8_t fl = p->tcp_flags;
	struct flow_stream *st = &f->st[dir];
	uint32_t seq = p->seq;

	if (fl & TH_SYN) {
		if (!(fl & TH_ACK)) {
			if (dir == 0)
				f->state |= FLOW_SYN;
		} else if (dir == 1) {
			f->state |= FLOW_SYNACK;
			if (!f->st[0].isn_set) {
				f->st[0].isn = p->ack;
				f->st[0].isn_set = 1;
			}
		}
		if (!st->isn_set) {
			st->isn = seq + 1;
			st->isn_set = 1;
		}
		seq++; /* the SYN takes one sequence number before any data */
	}
	if (fl & TH_RST)
		f->state |= dir ? FLOW_RST : FLOW_RST_INIT;
	if (fl & TH_FIN) {
		f->state |= FLOW_FIN;
		f->fin_dirs |= (uint8_t)(1u << dir);
	}
	if ((fl & (TH_ACK | TH_RST)) == TH_ACK) {
		/* The peer's stream: what our ACK says we have received. RST
		 * segments are left out (stacks fill their ACK loosely). */
		struct flow_stream *peer = &f->st[!dir];
		if (!peer->acked_set || (int32_t)(p->ack - peer->acked) > 0) {
			peer->acked = p->ack;
			peer->acked_set = 1;
		}
		stream_skip_acked(ft, peer, 0);
	}
	if (fl & TH_RST) {
		stream_flush(ft, &f->st[0]);
		stream_flush(ft, &f->st[1]);
		return;
	}
	stream_add(ft, st, seq, p->payload, p->payload_len);
	if (fl & TH_FIN)
		stream_flush(ft, st);
}

/*
 * The key of p. *reply_first is set when p, if it were the first packet of
 * its flow, would be an answer (TCP SYN+ACK, ICMP echo reply).
 */
static void key_from_pkt(struct flow_key *k, const struct pkt *p, int *reply_first)
{
	const size_t alen = p->ipv == 4 ? 4 : 16;

	memset(k, 0, sizeof(*k));
	k->ipv = p->ipv;
	k->proto = p->proto;
	memcpy(k->src, p->src, alen);
	memcpy(k->dst, p->dst, alen);
	*reply_first = 0;
	switch (p->proto) {
	case PROTO_TCP:
		k->sport = p->sport;
		k->dport = p->dport;
		*reply_first = (p->tcp_flags & (TH_SYN | TH_ACK)) == (TH_SYN | TH_ACK);
		break;
	case PROTO_UDP:
		k->sport = p->sport;
		k->dport = p->dport;
		break;
	case PROTO_ICMP:
	case PROTO_ICMPV6: {
		struct cur c = cur_init(p->l4, p->l4_len);
		uint8_t type = cur_u8(&c);
		cur_skip(&c, 3); /* code, checksum */
		uint16_t id = cur_be16(&c);
		if (c.err)
			break;
		int req = p->proto == PROTO_ICMP ? type == 8 : type == 128;
		int rep = p->proto == PROTO_ICMP ? type == 0 : type == 129;
		if (req || rep) {
			k->sport = k->dport = id;
			*reply_first = rep;
		}
		break;
	}
	default:
		break;
	}
}

/* ------------------------------------------------------------------- API */

struct flow_table *flow_table_new(const struct flow_config *cfg, flow_end_fn on_end,
				  void *user)
{
	struct flow_table *ft = calloc(1, sizeof(*ft));
	uint32_t nb = 16;

	if (!ft)
		goto fail;
	config_fill(&ft->cfg, cfg);
	ft->on_end = on_end;
	ft->user = user;
	while (nb < ft->cfg.max_flows)
		nb <<= 1;
	ft->buckets = calloc(nb, sizeof(*ft->buckets));
	if (!ft->buckets)
		goto fail;
	ft->mask = nb - 1;
	ft->seed = ft->cfg.hash_seed;
	if (!ft->seed && getentropy(&ft->seed, sizeof(ft->seed)) != 0)
		ft->seed = fmix64((uint64_t)(uintptr_t)ft ^ 0x9e3779b97f4a7c15ull);
	goto out;
fail:
	flow_table_free(ft);
	ft = NULL;
out:
	return ft;
}

void flow_table_free(struct flow_table *ft)
{
	if (!ft)
		return;
	for (;;) {
		int cls = oldest_class(ft, 0, 0);
		if (cls < 0)
			break;
		flow_end(ft, ft->lru[cls].tail);
	}
	struct flow_chunk *c = ft->chunks;
	while (c) {
		struct flow_chunk *next = c->next;
		free(c);
		c = next;
	}
	free(ft->buckets);
	free(ft);
}

void flow_table_expire(struct flow_table *ft, uint64_t now_us)
{
	if (!ft)
		return;
	for (;;) {
		int cls = oldest_class(ft, now_us, 1);
		if (cls < 0)
			break;
		flow_end(ft, ft->lru[cls].tail);
		ft->stats.expired++;
	}
}

struct flow *flow_table_update(struct flow_table *ft, struct pkt *p)
{
	struct flow_key k;
	struct flow *f;
	int dir = 0, reply_first;

	if (!ft || !p)
		return NULL;
	p->flow = NULL;
	p->dir = 0;
	if (p->ipv != 4 && p->ipv != 6)
		return NULL;
	if ((p->flags & PKT_FRAGMENT) &&
	    (p->proto == PROTO_TCP || p->proto == PROTO_UDP || p->proto == PROTO_ICMP ||
	     p->proto == PROTO_ICMPV6))
		return NULL;

	flow_table_expire(ft, p->ts_us);
	key_from_pkt(&k, p, &reply_first);
	uint32_t h = key_hash(ft, &k);
	f = lookup(ft, &k, h, &dir);

	int pure_syn = p->proto == PROTO_TCP && (p->tcp_flags & (TH_SYN | TH_ACK)) == TH_SYN;
	if (f && pure_syn) {
		if (flow_closed(f)) {
			flow_end(ft, f); /* port reuse: the old connection is over */
			ft->stats.expired++;
			f = NULL;
		} else if (dir == 1) {
			flow_turn(f);
			dir = 0;
		}
	}
	if (!f) {
		f = flow_create(ft, &k, h, reply_first, p->ts_us);
		if (!f)
			return NULL;
		dir = reply_first ? 1 : 0;
		if (p->proto == PROTO_TCP && !(p->tcp_flags & TH_SYN))
			f->state |= FLOW_MIDSTREAM;
	} else if (p->ts_us > f->last_us) {
		f->last_us = p->ts_us;
	}

	size_t plen = p->payload ? p->payload_len : 0;
	f->pkts[dir]++;
	f->bytes[dir] += plen;
	if (dir)
		f->state |= FLOW_REPLY;
	if (plen)
		f->state |= dir ? FLOW_DATA1 : FLOW_DATA0;
	if (p->proto == PROTO_TCP)
		tcp_update(ft, f, p, dir);

	lru_unlink(ft, f);
	lru_push_head(ft, f, flow_class(f));
	p->flow = f;
	p->dir = dir;
	return f;
}

struct flow *flow_table_find(struct flow_table *ft, uint8_t ipv, uint8_t proto,
			     const uint8_t *src, uint16_t sport, const uint8_t *dst,
			     uint16_t dport, int *dir)
{
	struct flow_key k;
	int d = 0;

	if (!ft || !src || !dst || (ipv != 4 && ipv != 6))
		return NULL;
	const size_t alen = ipv == 4 ? 4 : 16;
	memset(&k, 0, sizeof(k));
	k.ipv = ipv;
	k.proto = proto;
	memcpy(k.src, src, alen);
	memcpy(k.dst, dst, alen);
	k.sport = sport;
	k.dport = dport;
	struct flow *f = lookup(ft, &k, key_hash(ft, &k), &d);
	if (f && dir)
		*dir = d;
	return f;
}

void flow_stream_done(struct flow_table *ft, struct flow *f, int dir)
{
	if (!ft || !f || dir < 0 || dir > 1)
		return;
	stream_release(ft, &f->st[dir]);
	f->st[dir].done = 1;
}

const struct flow_stats *flow_table_stats(const struct flow_table *ft)
{
	return ft ? &ft->stats : NULL;
}
