/*
 * flow.c - the bidirectional flow table.
 *
 * Flow structs live in a slab: chunks of FLOW_CHUNK flows (2 MiB, in huge
 * pages where the kernel gives them: mem.h), added as needed up to max_flows and kept until the table is freed; a flow
 * is named by its index in the slab (chunk, position), and the LRU links are
 * such indices (+ 1) rather than pointers, which keeps struct flow at two
 * cache lines. Freed flows go on a free list, so after warm-up no packet
 * calls malloc except for the first bytes of a stream or a growing stream
 * buffer, and those mostly reuse released buffers (below).
 *
 * A TCP flow's pair of stream records comes from a second slab (chunks of
 * PAIR_CHUNK pairs, at most one pair per flow, so at most max_flows pairs)
 * with its own free list; UDP, ICMP and other flows have none.
 *
 * The hash table is open addressing with linear probing over slots of (hash,
 * index + 1), at least two slots per allowed flow (so at most half full).
 * The hash is symmetric: each (address, port) end is mixed on its own with a
 * seed and the two are added, so both directions of a flow hash alike with
 * no need to order the ends. A lookup compares the 32-bit hashes in the slot
 * array (eight slots to a cache line) and reads a flow only when its hash
 * matches, so looking up a new flow touches no flow at all. Removal shifts
 * the following slots of the run back (no tombstones), finding the flow's
 * slot from the hash of its own tuple.
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
 * held ranges are tracked in a sorted array (at most ooo_max ranges, room
 * for OOO_INIT at first, doubled as needed; past ooo_max a segment is not
 * held), and the held segments themselves beside them (at most OOO_SEGS);
 * a byte already in order is never overwritten (the first copy wins);
 * held bytes give way to a segment in order, and among held segments each
 * byte is that of the one that starts lowest, as Linux's receiver takes
 * them (stream_write). Offsets are serial-number differences from the ISN
 * (int32), so sequence wraparound is invisible.
 *
 * Holes (flow.h, "Holes"): stream_skip() turns the hole in front of the next
 * data into zeros and moves len past it. It is called when the peer's
 * highest ACK (kept per direction in acked) covers the hole before held or
 * arriving data, and at FIN/RST with data held. The skip never touches
 * bytes we hold, and the hole record is a single range per direction, so
 * all of it is bounded and needs no allocation beyond the stream buffer
 * itself.
 *
 * Buffer reuse: a released stream buffer whose size is one of the growth
 * steps (STREAM_INIT_CAP << k) is kept on a list per size, and the next
 * buffer of that size is taken from there instead of malloc or realloc.
 * Those sizes fall in glibc's slow path, which also consolidates the small
 * blocks the analyzers churn through. The kept buffers are bounded twice:
 * at most STREAM_CACHE_BYTES, and held plus kept bytes never exceed
 * stream_total_max (kept ones are freed first), so stream_total_max still
 * bounds all stream memory while limits apply to held bytes exactly as
 * before.
 *
 * Reclaim: when a direction needs room and stream_total_max is full, the
 * buffers of idle directions go to it rather than the new bytes being lost
 * (stream_reclaim). Idle is told by a CLOCK sweep over the pair slab, as
 * page caches tell it: every write sets the direction's touched bit; the
 * sweep, from where it last stopped, clears the bit of a direction it finds
 * set and takes back the buffer of one it finds clear, which had no byte
 * since the sweep's last pass, so busy directions are passed over and the
 * ones left idle longest go first (flows.stream_reclaimed). When the
 * direction's analyzer had read every byte it holds (a keep-alive HTTP or
 * DNS connection waiting for its next message), nothing is lost: the
 * window is slid past them and only the buffer goes, the next bytes
 * getting a new one. Otherwise the direction is done, as if its analyzer
 * had finished with it. Without this, a
 * few thousand connections, each left open with its window nearly full
 * (under stream_max: not released at once, flow_release_unread), held the
 * cap for as long as they stayed open and the sensor read no new stream.
 * The sweep never takes from the pair being written to, and looks at a
 * bounded number of directions per call (RECLAIM_STEPS). It takes first
 * from the directions no analyzer is in the middle of reading (none has
 * the flow, or it read every byte), and from the others only when those
 * cannot make the room: a request head begun and left waiting while the
 * cap was filled with connections no analyzer had lost its bytes to them,
 * and its Host with them (review19 R19-3). With the cap filled by
 * messages analyzers are reading, as such a head is, one of those goes.
 */
#include "flow.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csum.h"
#include "cursor.h"
#include "decode.h"
#include "mem.h"

enum { PROTO_ICMP = 1, PROTO_TCP = 6, PROTO_UDP = 17, PROTO_ICMPV6 = 58 };

/* LRU lists, one per idle class. */
enum { LRU_TCP = 0, LRU_OTHER, LRU_CLOSED, LRU_N };

enum {
	/* Flow structs allocated at a time: 16,384 of 128 bytes, 2 MiB chunks
	 * (huge pages where the kernel gives them, mem.h), big enough that
	 * malloc maps them apart from its heap (smaller ones, carved from the
	 * heap among the analyzers' small blocks, made later mallocs slower). */
	FLOW_CHUNK_SHIFT = 14,
	FLOW_CHUNK = 1 << FLOW_CHUNK_SHIFT,
	STREAM_INIT_CAP = 1024, /* first stream buffer size */
	/* Stream record pairs allocated at a time (256 KiB, as for flows). */
	PAIR_CHUNK = 2048,
	/* Released stream buffers kept for reuse: sizes STREAM_INIT_CAP << k
	 * for k < STREAM_CACHE_CLASSES (1 KiB .. 128 KiB), at most
	 * STREAM_CACHE_BYTES in all. */
	STREAM_CACHE_CLASSES = 8,
	STREAM_CACHE_BYTES = 512 * 1024,
	/* Directions the reclaim sweep looks at per call, at most: two full
	 * turns of a slab of 4,096 pairs; a bigger slab is swept over as
	 * many calls (each starts where the last stopped). */
	RECLAIM_STEPS = 16384,
	/* The sweep for directions no analyzer is reading gives up after this
	 * many that are being read in a row, so a cap held by those alone
	 * costs each newcomer this many steps, not RECLAIM_STEPS. */
	RECLAIM_LOOK = 1024,
};

/* A TCP flow's stream records (f->st points at st), or a link of the free
 * list. */
/* Each pair starts on a cache line, and a chunk of them is a whole number
 * of lines (aligned_alloc wants a size that is a multiple of the alignment). */
union stream_pair {
	_Alignas(64) struct flow_stream st[2];
	union stream_pair *next;
};
_Static_assert(sizeof(union stream_pair) % 64 == 0, "stream pairs: whole cache lines");
/* Pair chunks are aligned to a pair's size, so a stream record's pair is
 * its address rounded down (pair_of). */
#define PAIR_ALIGN 256
_Static_assert(sizeof(union stream_pair) == PAIR_ALIGN, "a pair: 256 bytes");
_Static_assert(sizeof(struct flow_stream) <= 128, "a pair of stream records: 256 bytes");

/* Keeps every flow of a chunk on its own cache lines (see struct flow). */
_Static_assert(sizeof(struct flow) % 64 == 0, "struct flow: whole cache lines");

#define MAX_FLOWS_LIMIT (1u << 24)
#define STREAM_MAX_LIMIT (1u << 30)

/* A hash table slot: ref is the flow's slab index + 1, 0 for an empty
 * slot; hash is the flow's full hash, compared before the flow is read. */
struct slot {
	uint32_t hash, ref;
};

struct lru_list {
	uint32_t head, tail; /* slab index + 1, 0: empty; head: most recently seen */
};

/* A released buffer kept for reuse; it is stored in the buffer itself. */
struct cached_buf {
	struct cached_buf *next;
};

struct flow_table {
	struct flow_config cfg;
	flow_end_fn on_end;
	void *user;
	struct slot *slots;
	uint32_t mask;      /* slots - 1 */
	uint64_t seed;
	struct lru_list lru[LRU_N];
	/* No tail is idle before this packet time (a lower bound: it may be
	 * early, never late), so most packets skip the expiry scan. */
	uint64_t expire_at;
	struct flow **chunks; /* the slab: chunk i holds indices i * FLOW_CHUNK ... */
	uint32_t n_chunks;
	uint32_t free_ref;  /* freed flows (slab index + 1), linked through lru_next */
	uint32_t allocated; /* flow structs in chunks */
	uint32_t fresh_ref; /* the next never-used flow of the last chunk (slab
			     * index + 1; allocated + 1 when there is none) */
	union stream_pair **pair_chunks; /* the pair slab, PAIR_CHUNK pairs each */
	uint32_t n_pair_chunks;
	uint32_t pairs_allocated;
	union stream_pair *pair_free;
	uint32_t sweep; /* the next direction the reclaim sweep looks at (pair
			 * index * 2 + direction) */
	struct cached_buf *cache[STREAM_CACHE_CLASSES]; /* by size class */
	uint64_t cache_bytes;
	uint64_t next_id;
	uint32_t ahead_h; /* flow_table_prefetch: the hint's hash, */
	int ahead_ok;     /* when there was one */
	struct flow_stats stats;
	int syn_taken; /* flow_table_syn_taken */
	/* "UDP checksums" in flow.h: per capture source (pkt.iface modulo),
	 * datagrams whose checksums the sender's stack wrote and wrong ones
	 * before it settled (both saturate) */
	struct udp_csum_src {
		uint32_t ok, bad;
		uint8_t settled;
	} udp_csum[FLOW_UDP_CSUM_SOURCES];
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
		/* the DNS analyzer's ports (analyzers/dns.c): its messages
		 * may be longer than stream_max */
		.wide_ports = {53, 5353, 5355, 0},
		.ooo_max = 1024,
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
	c->narrow = in->narrow;
	if (in->wide_ports[0])
		memcpy(c->wide_ports, in->wide_ports, sizeof(c->wide_ports));
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

static inline uint32_t load32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* One end of a tuple, mixed with the seed. */
static inline uint64_t end_hash(uint64_t seed, int v6, const uint8_t *addr, uint16_t port)
{
	if (!v6)
		return murmur_step(seed, (uint64_t)load32(addr) << 16 | port);
	uint64_t h = murmur_step(seed, load64(addr));
	h = murmur_step(h, load64(addr + 8));
	return murmur_step(h, port);
}

/* Hash of a tuple, the same for both orientations: the ends are mixed apart
 * and added. For IPv4 only the first 4 bytes of each address are read. */
static uint32_t tuple_hash(const struct flow_table *ft, uint8_t ipv, uint8_t proto,
			   const uint8_t *a, uint16_t ap, const uint8_t *b, uint16_t bp)
{
	const int v6 = ipv == 6;
	uint64_t h = end_hash(ft->seed, v6, a, ap) + end_hash(ft->seed, v6, b, bp);

	return (uint32_t)fmix64(h ^ ((uint64_t)ipv << 8 | proto) * 0x9e3779b97f4a7c15ull);
}

static inline uint32_t key_hash(const struct flow_table *ft, const struct flow_key *k)
{
	return tuple_hash(ft, k->ipv, k->proto, k->src, k->sport, k->dst, k->dport);
}

static inline uint32_t flow_hash(const struct flow_table *ft, const struct flow *f)
{
	return tuple_hash(ft, f->ipv, f->proto, f->src, f->sport, f->dst, f->dport);
}

static inline struct flow *flow_at(const struct flow_table *ft, uint32_t ref)
{
	uint32_t i = ref - 1;

	return &ft->chunks[i >> FLOW_CHUNK_SHIFT][i & (FLOW_CHUNK - 1)];
}

/* Equal 16-byte addresses (IPv4 ones are zero beyond their 4 bytes). */
static inline int addr_eq(const uint8_t *a, const uint8_t *b)
{
	return ((load64(a) ^ load64(b)) | (load64(a + 8) ^ load64(b + 8))) == 0;
}

/* The flow of k in either orientation; *dir is 0 when k's sender is the
 * initiator, *ref its slab index + 1. */
static struct flow *lookup(const struct flow_table *ft, const struct flow_key *k,
			   uint32_t h, int *dir, uint32_t *ref)
{
	const struct slot *slots = ft->slots;
	const uint32_t mask = ft->mask;
	uint32_t r;

	for (uint32_t i = h & mask; (r = slots[i].ref) != 0; i = (i + 1) & mask) {
		if (slots[i].hash != h)
			continue;
		struct flow *f = flow_at(ft, r);
		if (f->ipv != k->ipv || f->proto != k->proto)
			continue;
		if (f->sport == k->sport && f->dport == k->dport &&
		    addr_eq(f->src, k->src) && addr_eq(f->dst, k->dst)) {
			*dir = 0;
			*ref = r;
			return f;
		}
		if (f->sport == k->dport && f->dport == k->sport &&
		    addr_eq(f->src, k->dst) && addr_eq(f->dst, k->src)) {
			*dir = 1;
			*ref = r;
			return f;
		}
	}
	return NULL;
}

/* Put slab index idx, hash h, in the first free slot of its run. */
static void hash_insert(struct flow_table *ft, uint32_t h, uint32_t idx)
{
	uint32_t i = h & ft->mask;

	while (ft->slots[i].ref)
		i = (i + 1) & ft->mask;
	ft->slots[i].hash = h;
	ft->slots[i].ref = idx + 1;
}

/* Remove f from the table; returns its slab index. Later slots of the run
 * whose home is not between the hole and themselves move back into the
 * hole, so every flow stays reachable from its home slot without tombstones. */
static uint32_t hash_remove(struct flow_table *ft, const struct flow *f)
{
	const uint32_t h = flow_hash(ft, f), mask = ft->mask;
	uint32_t i = h & mask, ref;

	for (;; i = (i + 1) & mask) {
		ref = ft->slots[i].ref;
		if (ref == 0)
			abort(); /* every live flow is in the table */
		if (ft->slots[i].hash == h && flow_at(ft, ref) == f)
			break;
	}
	for (uint32_t j = i;;) {
		j = (j + 1) & mask;
		if (!ft->slots[j].ref)
			break;
		uint32_t home = ft->slots[j].hash & mask;
		/* slot j may fill the hole at i unless its home lies in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			ft->slots[i] = ft->slots[j];
			i = j;
		}
	}
	ft->slots[i].hash = 0;
	ft->slots[i].ref = 0;
	return ref - 1;
}

/* ------------------------------------------------------------------- LRU */

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

/* The packet time from which f, as a list tail, is idle: now - last_us >=
 * timeout (never, when that time is beyond the clock). */
static uint64_t idle_at(const struct flow_table *ft, const struct flow *f, int cls)
{
	uint64_t t = class_timeout(ft, cls);

	return f->last_us > UINT64_MAX - t ? UINT64_MAX : f->last_us + t;
}

/* f became the tail of list cls: its idle time may come before expire_at. */
static void new_tail(struct flow_table *ft, const struct flow *f, int cls)
{
	uint64_t t = idle_at(ft, f, cls);

	if (t < ft->expire_at)
		ft->expire_at = t;
}

/* The least recently seen flow of list cls, or NULL when it is empty. */
static struct flow *lru_tail(const struct flow_table *ft, int cls)
{
	return ft->lru[cls].tail ? flow_at(ft, ft->lru[cls].tail) : NULL;
}

static void lru_unlink(struct flow_table *ft, struct flow *f)
{
	struct lru_list *l = &ft->lru[f->lru_class];

	if (f->lru_prev)
		flow_at(ft, f->lru_prev)->lru_next = f->lru_next;
	else
		l->head = f->lru_next;
	if (f->lru_next) {
		flow_at(ft, f->lru_next)->lru_prev = f->lru_prev;
	} else {
		l->tail = f->lru_prev;
		if (l->tail)
			new_tail(ft, flow_at(ft, l->tail), f->lru_class);
	}
	f->lru_prev = f->lru_next = 0;
}

/* Put f, whose slab index + 1 is ref, at the head of list cls. */
static void lru_push_head(struct flow_table *ft, struct flow *f, uint32_t ref, uint8_t cls)
{
	struct lru_list *l = &ft->lru[cls];

	f->lru_class = cls;
	f->lru_prev = 0;
	f->lru_next = l->head;
	if (l->head) {
		flow_at(ft, l->head)->lru_prev = ref;
	} else {
		l->tail = ref;
		new_tail(ft, f, cls);
	}
	l->head = ref;
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
		const struct flow *f = lru_tail(ft, cls);
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

/* The sequence number after the direction's SYN (ISN + 1): isn has moved
 * on by the bytes slid off the front and the urgent bytes taken out. */
static inline uint32_t stream_isn1(const struct flow_stream *st)
{
	return st->isn - st->slid - st->urg_taken;
}

/*
 * The held ranges' table (st->ooo) is one allocation: a header (its end is
 * ooo_max), the ooo_max ranges, then the held segments, up to OOO_SEGS, as
 * Linux's out-of-order queue keeps them: a red-black tree by start whose
 * shape is the kernel's own (lib/rbtree.c), because where a segment lands
 * depends on it (tcp_data_queue_ofo, below). The ranges say which bytes
 * are held; the segments, who wins an overlap: the held segment that
 * starts lowest, delivered first (stream_write).
 */
#define OOO_SEGS 32
#define OOO_NIL 0xff
/* The ranges' table starts with room for OOO_INIT ranges (fewer when
 * ooo_max is lower) and doubles, up to ooo_max, as more are held. */
#define OOO_INIT 16

struct ooo_node {
	uint32_t start, end; /* stream offsets, as held (coalesced) */
	uint8_t l, r, p;     /* tree links, OOO_NIL for none */
	uint8_t red;
};

struct ooo_tree {
	uint32_t used; /* bit k: node k holds a segment */
	uint8_t root;
	struct ooo_node n[OOO_SEGS];
};

_Static_assert(OOO_SEGS <= 32 && OOO_SEGS < OOO_NIL, "OOO_SEGS: a bit of used and an index each");

/* The table's size with room for cap ranges. */
static uint64_t ooo_bytes(uint32_t cap)
{
	return ((uint64_t)cap + 1) * sizeof(struct flow_seg) + sizeof(struct ooo_tree);
}

static struct flow_seg *ooo_hdr(const struct flow_stream *st)
{
	return st->ooo - 1;
}

/* The ranges the table has room for now (the first: OOO_INIT). */
static uint32_t ooo_cap(const struct flow_table *ft, const struct flow_stream *st)
{
	if (st->ooo)
		return ooo_hdr(st)->end;
	return ft->cfg.ooo_max < OOO_INIT ? ft->cfg.ooo_max : OOO_INIT;
}

static struct ooo_tree *ooo_tree(const struct flow_stream *st)
{
	return (struct ooo_tree *)(void *)(st->ooo + ooo_hdr(st)->end);
}

static void ooo_free(struct flow_table *ft, struct flow_stream *st)
{
	if (st->ooo) {
		ft->stats.stream_bytes -= ooo_bytes(ooo_hdr(st)->end);
		free(ooo_hdr(st));
	}
	st->ooo = NULL;
	st->ooo_n = 0;
}

/* Move the held segments (bytes past len) down by d: a slide, an urgent
 * byte. */
static void ooo_segs_shift(struct flow_stream *st, uint32_t d)
{
	if (!st->ooo)
		return;
	struct ooo_tree *t = ooo_tree(st);
	for (uint32_t k = 0; k < OOO_SEGS; k++)
		if (t->used & (1u << k)) {
			t->n[k].start -= d;
			t->n[k].end -= d;
		}
}

/* ---- the held segments' tree: lib/rbtree.c's insert and erase, on indices */

static void rb_change_child(struct ooo_tree *t, uint8_t old, uint8_t nw, uint8_t parent)
{
	if (parent == OOO_NIL)
		t->root = nw;
	else if (t->n[parent].l == old)
		t->n[parent].l = nw;
	else
		t->n[parent].r = nw;
}

/* nw takes old's parent and colour; old becomes nw's child, of colour red */
static void rb_rotate_set_parents(struct ooo_tree *t, uint8_t old, uint8_t nw, int red)
{
	uint8_t parent = t->n[old].p;

	t->n[nw].p = parent;
	t->n[nw].red = t->n[old].red;
	t->n[old].p = nw;
	t->n[old].red = (uint8_t)red;
	rb_change_child(t, old, nw, parent);
}

static void rb_set_black_child(struct ooo_tree *t, uint8_t k, uint8_t parent)
{
	if (k != OOO_NIL) {
		t->n[k].p = parent;
		t->n[k].red = 0;
	}
}

static int rb_red(const struct ooo_tree *t, uint8_t k)
{
	return k != OOO_NIL && t->n[k].red;
}

/* Node k's child on the right (1) or the left (0). */
static uint8_t *rb_kid(struct ooo_tree *t, uint8_t k, int right)
{
	return right ? &t->n[k].r : &t->n[k].l;
}

/* __rb_insert: node k, just linked as a leaf (red), rebalanced. far is
 * the side of g away from parent (1: parent is g's left child), where the
 * uncle is. */
static void rb_insert_color(struct ooo_tree *t, uint8_t k)
{
	uint8_t parent = t->n[k].p, g, u;

	for (;;) {
		if (parent == OOO_NIL) {
			t->n[k].red = 0;
			return;
		}
		if (!t->n[parent].red)
			return;
		g = t->n[parent].p;
		int far = t->n[g].r != parent;
		u = *rb_kid(t, g, far);
		if (rb_red(t, u)) { /* uncle red: colour flips, up two levels */
			t->n[u].red = 0;
			t->n[parent].red = 0;
			k = g;
			parent = t->n[k].p;
			t->n[k].red = 1;
			continue;
		}
		uint8_t tmp = *rb_kid(t, parent, far);
		if (k == tmp) { /* rotate at parent */
			tmp = *rb_kid(t, k, !far);
			*rb_kid(t, parent, far) = tmp;
			*rb_kid(t, k, !far) = parent;
			rb_set_black_child(t, tmp, parent);
			t->n[parent].p = k;
			t->n[parent].red = 1;
			parent = k;
			tmp = *rb_kid(t, k, far);
		}
		/* rotate at g */
		*rb_kid(t, g, !far) = tmp;
		*rb_kid(t, parent, far) = g;
		rb_set_black_child(t, tmp, g);
		rb_rotate_set_parents(t, g, parent, 1);
		return;
	}
}

/* ____rb_erase_color: the paths through parent on k's side lack one black
 * node; far is the side away from k (the sibling's). */
static void rb_erase_color(struct ooo_tree *t, uint8_t parent)
{
	uint8_t k = OOO_NIL, sib, a, b;

	for (;;) {
		int far = t->n[parent].r != k;
		sib = *rb_kid(t, parent, far);
		if (t->n[sib].red) { /* rotate at parent */
			a = *rb_kid(t, sib, !far);
			*rb_kid(t, parent, far) = a;
			*rb_kid(t, sib, !far) = parent;
			rb_set_black_child(t, a, parent);
			rb_rotate_set_parents(t, parent, sib, 1);
			sib = a;
		}
		a = *rb_kid(t, sib, far);
		if (!rb_red(t, a)) {
			b = *rb_kid(t, sib, !far);
			if (!rb_red(t, b)) { /* sibling colour flip */
				t->n[sib].red = 1;
				if (t->n[parent].red) {
					t->n[parent].red = 0;
				} else {
					k = parent;
					parent = t->n[k].p;
					if (parent != OOO_NIL)
						continue;
				}
				return;
			}
			/* rotate at sibling */
			a = *rb_kid(t, b, far);
			*rb_kid(t, sib, !far) = a;
			*rb_kid(t, b, far) = sib;
			*rb_kid(t, parent, far) = b;
			rb_set_black_child(t, a, sib);
			a = sib;
			sib = b;
		}
		/* rotate at parent, colour flips */
		b = *rb_kid(t, sib, !far);
		*rb_kid(t, parent, far) = b;
		*rb_kid(t, sib, !far) = parent;
		rb_set_black_child(t, a, sib);
		if (b != OOO_NIL)
			t->n[b].p = parent;
		rb_rotate_set_parents(t, parent, sib, 0);
		return;
	}
}

/* rb_erase: node k leaves the tree (relinked, never copied: the indices
 * of the others stay), and its slot is free. */
static void rb_erase(struct ooo_tree *t, uint8_t k)
{
	struct ooo_node *x = &t->n[k];
	uint8_t child = x->r, tmp = x->l, parent, rebalance = OOO_NIL;

	if (tmp == OOO_NIL) {
		parent = x->p;
		rb_change_child(t, k, child, parent);
		if (child != OOO_NIL) {
			t->n[child].p = parent;
			t->n[child].red = x->red;
		} else if (!x->red) {
			rebalance = parent;
		}
	} else if (child == OOO_NIL) {
		t->n[tmp].p = x->p;
		t->n[tmp].red = x->red;
		rb_change_child(t, k, tmp, x->p);
	} else {
		uint8_t succ = child, child2;
		tmp = t->n[child].l;
		if (tmp == OOO_NIL) { /* the successor is the right child */
			parent = succ;
			child2 = t->n[succ].r;
		} else { /* the leftmost under the right child */
			do {
				parent = succ;
				succ = tmp;
				tmp = t->n[tmp].l;
			} while (tmp != OOO_NIL);
			child2 = t->n[succ].r;
			t->n[parent].l = child2;
			t->n[succ].r = child;
			t->n[child].p = succ;
		}
		tmp = x->l;
		t->n[succ].l = tmp;
		t->n[tmp].p = succ;
		rb_change_child(t, k, succ, x->p);
		if (child2 != OOO_NIL)
			rb_set_black_child(t, child2, parent);
		else if (!t->n[succ].red)
			rebalance = parent;
		t->n[succ].p = x->p;
		t->n[succ].red = x->red;
	}
	t->used &= ~(1u << k);
	if (rebalance != OOO_NIL)
		rb_erase_color(t, rebalance);
}

static uint8_t rb_first(const struct ooo_tree *t)
{
	uint8_t k = t->root;

	while (k != OOO_NIL && t->n[k].l != OOO_NIL)
		k = t->n[k].l;
	return k;
}

static uint8_t rb_last(const struct ooo_tree *t)
{
	uint8_t k = t->root;

	while (k != OOO_NIL && t->n[k].r != OOO_NIL)
		k = t->n[k].r;
	return k;
}

static uint8_t rb_next(const struct ooo_tree *t, uint8_t k)
{
	if (t->n[k].r != OOO_NIL) {
		k = t->n[k].r;
		while (t->n[k].l != OOO_NIL)
			k = t->n[k].l;
		return k;
	}
	while (t->n[k].p != OOO_NIL && t->n[t->n[k].p].r == k)
		k = t->n[k].p;
	return t->n[k].p;
}

/* Held segments after k that k covers to their end go (merge_right). */
static void ooo_merge_right(struct ooo_tree *t, uint8_t k)
{
	uint8_t m;

	while ((m = rb_next(t, k)) != OOO_NIL && t->n[k].end > t->n[m].start &&
	       t->n[k].end >= t->n[m].end)
		rb_erase(t, m);
}

/* A new node [s, e) as a child of parent (OOO_NIL: the root), on its right
 * or left; OOO_NIL when every slot is taken. */
static uint8_t ooo_link(struct ooo_tree *t, uint32_t s, uint32_t e, uint8_t parent, int right)
{
	if (t->used == (OOO_SEGS == 32 ? UINT32_MAX : (1u << OOO_SEGS) - 1u))
		return OOO_NIL;
	uint8_t k = (uint8_t)__builtin_ctz(~t->used);
	t->used |= 1u << k;
	t->n[k] = (struct ooo_node){s, e, OOO_NIL, OOO_NIL, parent, 1};
	if (parent == OOO_NIL)
		t->root = k;
	else if (right)
		t->n[parent].r = k;
	else
		t->n[parent].l = k;
	rb_insert_color(t, k);
	return k;
}

/*
 * Hold the out-of-order segment [s, e) as tcp_data_queue_ofo does. The
 * last held segment first: one that starts where it ends is appended to it
 * (coalesced: one segment now, of the last one's start), one past it goes
 * after it. Else down the tree from its root, as a search for s: one
 * inside a segment it meets is dropped (0), one of the same start that
 * reaches further replaces it, one that starts where a segment it meets
 * ends is appended to that one; else it is linked where the search ends.
 * A segment now in the tree drops those after it that it covers to their
 * end. Only the segments the search meets are weighed, so the shape of the
 * tree decides, and it is the kernel's. Returns 1 with *key the start of
 * the segment whose bytes these now are (s, or the start of the one it
 * was appended to), or 0 when it is dropped. With every slot taken, it is
 * held without a node (1, *key s).
 */
static int ooo_hold(struct ooo_tree *t, uint32_t s, uint32_t e, uint32_t *key)
{
	uint8_t k = rb_last(t), parent = OOO_NIL;
	int right = 0;

	*key = s;
	if (k != OOO_NIL) {
		struct ooo_node *x = &t->n[k];
		if (s == x->end) {
			x->end = e;
			*key = x->start;
			return 1;
		}
		if (s > x->end) {
			ooo_link(t, s, e, k, 1);
			return 1;
		}
	}
	for (k = t->root; k != OOO_NIL;) {
		struct ooo_node *x = &t->n[k];
		parent = k;
		if (s < x->start) {
			k = x->l;
			right = 0;
			continue;
		}
		if (s < x->end) {
			if (e <= x->end)
				return 0; /* all its bytes are held */
			if (s == x->start) { /* it replaces x */
				x->end = e;
				ooo_merge_right(t, k);
				return 1;
			}
		} else if (s == x->end) {
			x->end = e;
			*key = x->start;
			return 1;
		}
		k = x->r;
		right = 1;
	}
	k = ooo_link(t, s, e, parent, right);
	if (k != OOO_NIL)
		ooo_merge_right(t, k);
	return 1;
}

/* The held segments of what is now in order go, lowest start first, as
 * tcp_ofo_queue takes them out of the tree. */
static void ooo_delivered(struct flow_stream *st)
{
	if (!st->ooo)
		return;
	struct ooo_tree *t = ooo_tree(st);
	uint8_t k;
	while ((k = rb_first(t)) != OOO_NIL && t->n[k].start < st->len)
		rb_erase(t, k);
}

/* The reuse list for buffers of cap bytes, or -1 when that size is not
 * kept (not a growth step). */
static int cache_class(uint32_t cap)
{
	for (int k = 0; k < STREAM_CACHE_CLASSES; k++)
		if (cap == (uint32_t)STREAM_INIT_CAP << k)
			return k;
	return -1;
}

/* A kept buffer of cap bytes, or NULL. */
static uint8_t *cache_get(struct flow_table *ft, uint32_t cap)
{
	int k = cache_class(cap);
	struct cached_buf *b;

	if (k < 0 || !(b = ft->cache[k]))
		return NULL;
	ft->cache[k] = b->next;
	ft->cache_bytes -= cap;
	return (uint8_t *)b;
}

/* Keep buf (cap bytes, no longer counted in stream_bytes) for reuse, or free
 * it when its size is not kept or keeping it would break a bound. */
static void cache_put(struct flow_table *ft, uint8_t *buf, uint32_t cap)
{
	int k = cache_class(cap);

	if (!buf)
		return;
	if (k < 0 || ft->cache_bytes + cap > STREAM_CACHE_BYTES ||
	    ft->stats.stream_bytes + ft->cache_bytes + cap > ft->cfg.stream_total_max) {
		free(buf);
		return;
	}
	struct cached_buf *b = (struct cached_buf *)(void *)buf;
	b->next = ft->cache[k];
	ft->cache[k] = b;
	ft->cache_bytes += cap;
}

/* stream_bytes grew: free kept buffers, largest first, until held plus
 * kept fit under stream_total_max again. */
static void cache_trim(struct flow_table *ft)
{
	for (int k = STREAM_CACHE_CLASSES - 1;
	     k >= 0 && ft->stats.stream_bytes + ft->cache_bytes > ft->cfg.stream_total_max;) {
		struct cached_buf *b = ft->cache[k];
		if (!b) {
			k--;
			continue;
		}
		ft->cache[k] = b->next;
		ft->cache_bytes -= (uint32_t)STREAM_INIT_CAP << k;
		free(b);
	}
}

static void stream_release(struct flow_table *ft, struct flow_stream *st)
{
	ooo_free(ft, st);
	ft->stats.stream_bytes -= st->cap;
	cache_put(ft, st->buf, st->cap);
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

static union stream_pair *pair_of(const struct flow_stream *st)
{
	return (union stream_pair *)((uintptr_t)st & ~(uintptr_t)(PAIR_ALIGN - 1));
}

/* 1 when taking st's buffer loses bytes an analyzer is in the middle of
 * reading (a claimed direction with unread bytes), else 0: no analyzer
 * has the flow, or its analyzer read every byte. */
static int reclaim_costly(const struct flow_stream *st)
{
	return st->claimed && (st->consumed != st->len || st->ooo_n || st->syn_len);
}

/* One sweep of at most RECLAIM_STEPS directions over those whose
 * reclaim_costly() is costly. */
static void stream_sweep(struct flow_table *ft, const struct flow_stream *self, uint64_t need,
			 int costly)
{
	const union stream_pair *mine = pair_of(self);
	uint64_t dirs = (uint64_t)ft->pairs_allocated * 2;
	uint32_t futile = 0; /* directions being read met in a row */

	for (uint32_t n = 0; n < RECLAIM_STEPS && stream_room(ft) < need; n++) {
		if (ft->sweep >= dirs)
			ft->sweep = 0;
		uint32_t i = ft->sweep++, k = i >> 1;
		union stream_pair *sp = &ft->pair_chunks[k / PAIR_CHUNK][k % PAIR_CHUNK];
		struct flow_stream *st = &sp->st[i & 1];
		if (sp == mine || (!st->cap && !st->ooo))
			continue;
		if (reclaim_costly(st) != costly) {
			if (!costly && ++futile >= RECLAIM_LOOK)
				break;
			continue;
		}
		futile = 0;
		if (st->touched) {
			st->touched = 0; /* a second chance: idle if still clear next time */
			continue;
		}
		ft->stats.stream_reclaimed++;
		if (!st->done && !st->overflow && !st->ooo_n && !st->syn_len &&
		    st->consumed == st->len && st->len > 0)
			flow_stream_slide(st); /* all read: nothing is lost */
		if (!st->done && !st->overflow && !st->ooo_n && !st->syn_len && st->len == 0 &&
		    st->slid > 0) {
			/* an analyzer read every byte: the buffer goes, the
			 * direction stays open and its next bytes get a new one */
			stream_release(ft, st);
			continue;
		}
		stream_release(ft, st);
		st->syn_len = 0;
		st->done = 1;
	}
}

/*
 * Make room for need bytes under stream_total_max by taking back the
 * buffers of idle directions ("Reclaim" above), never one of self's pair:
 * first those no analyzer is in the middle of reading, then, when they
 * cannot make the room, the others.
 * A free pair, or a direction holding nothing, has cap 0 and no ooo table
 * (pair chunks start zeroed, and flow_end releases both directions).
 */
static void stream_reclaim(struct flow_table *ft, const struct flow_stream *self, uint64_t need)
{
	for (int costly = 0; costly < 2 && stream_room(ft) < need; costly++)
		stream_sweep(ft, self, need, costly);
}

/* The bytes a direction may hold: stream_max, or FLOW_STREAM_WIDE once
 * it is a flow on one of cfg.wide_ports. */
static uint32_t stream_limit(const struct flow_table *ft, const struct flow_stream *st)
{
	return st->wide && ft->cfg.stream_max < FLOW_STREAM_WIDE ? FLOW_STREAM_WIDE
								  : ft->cfg.stream_max;
}

uint32_t flow_stream_window(const struct flow_table *ft, const struct flow_stream *st)
{
	return ft ? stream_limit(ft, st) : 16384;
}

/*
 * Make st->buf hold at least need (<= stream_limit) bytes: doubling, capped
 * at the limit, or exactly need when the doubled size does not fit under
 * stream_total_max. Returns 0, or -1 (buffer unchanged) when it cannot.
 */
static int stream_reserve(struct flow_table *ft, struct flow_stream *st, uint32_t need)
{
	st->touched = 1; /* bytes are coming: not idle (reclaim) */
	if (need <= st->cap)
		return 0;
	uint64_t cap = st->cap ? st->cap : STREAM_INIT_CAP;
	while (cap < need)
		cap *= 2;
	if (cap > stream_limit(ft, st))
		cap = stream_limit(ft, st);
	if (cap - st->cap > stream_room(ft))
		stream_reclaim(ft, st, cap - st->cap);
	uint64_t room = stream_room(ft);
	if (cap - st->cap > room)
		cap = need;
	if (cap - st->cap > room)
		return -1;
	uint8_t *old = st->buf, *nb = cache_get(ft, (uint32_t)cap);
	uint32_t old_cap = st->cap;
	if (nb) {
		/* what realloc would keep: the data and the held ranges */
		uint32_t used = st->len;
		if (st->ooo_n && st->ooo[st->ooo_n - 1].end > used)
			used = st->ooo[st->ooo_n - 1].end;
		if (old)
			memcpy(nb, old, used);
	} else {
		nb = realloc(old, cap);
		if (!nb)
			return -1;
		old = NULL; /* realloc took it */
	}
	st->buf = nb;
	ft->stats.stream_bytes += cap - old_cap;
	st->cap = (uint32_t)cap;
	cache_put(ft, old, old_cap);
	cache_trim(ft);
	return 0;
}

/*
 * Copy stream bytes [lo, hi) of an out-of-order segment from data (whose
 * byte 0 is at stream offset s0 <= lo, and which is [s0, hi) whole) as
 * Linux's out-of-order queue takes it (ooo_hold, then tcp_ofo_queue
 * delivering the held segments lowest start first): each held byte comes
 * from the held segment that starts lowest over it, and the bytes of a
 * segment appended to a held one count as that one's. Where no held
 * segment covers a held byte (all OOO_SEGS were taken), the start of its
 * range stands in for it, as when the ranges alone decided. An in-order
 * segment overwrites held bytes (stream_add). Bytes below len are never
 * passed in. At most 2 (ranges + OOO_SEGS + 1) pieces, each weighed
 * against every held segment.
 */
static void stream_write(struct flow_table *ft, struct flow_stream *st, int64_t s0,
			 const uint8_t *data, uint32_t lo, uint32_t hi)
{
	struct ooo_tree *t = ooo_tree(st);
	uint32_t s;

	if (!ooo_hold(t, (uint32_t)s0, hi, &s))
		return; /* all its bytes are held: a duplicate */

	/* the pieces of [lo, hi) between every edge of a range or record */
	uint32_t pos = lo;
	while (pos < hi) {
		uint32_t next = hi, key = s, held = 0;
		for (uint32_t i = 0; i < st->ooo_n; i++) {
			const struct flow_seg *r = &st->ooo[i];
			if (r->start <= pos && pos < r->end) {
				held = 1;
				key = r->start; /* no record covers it: the range's start */
				if (r->end < next)
					next = r->end;
			} else if (r->start > pos && r->start < next) {
				next = r->start;
			}
		}
		if (held) {
			uint32_t best = UINT32_MAX;
			for (uint32_t k = 0; k < OOO_SEGS; k++) {
				const struct ooo_node *x = &t->n[k];
				if (!(t->used & (1u << k)))
					continue;
				if (x->start <= pos && pos < x->end) {
					if (x->start < best)
						best = x->start;
					if (x->end < next)
						next = x->end;
				} else if (x->start > pos && x->start < next) {
					next = x->start;
				}
			}
			if (best != UINT32_MAX)
				key = best;
		}
		if (!held || key == s)
			memcpy(st->buf + pos, data + (pos - s0), next - pos);
		pos = next;
	}
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
	ooo_delivered(st);
}

/*
 * Take the pending urgent byte out once the in-order data reaches it, as
 * Linux's receiver does with SO_OOBINLINE off (tcp_recvmsg steps over the
 * byte at urg_seq): the bytes after it (in order and held) move down by
 * one, and so does the numbering (isn moves on by one, as for a slide), so
 * every sequence number past the byte still lands on its own. Bytes below
 * it keep their place and are now numbered one low; only a retransmission
 * would name them, which reassembly drops (below len), and `aligned` keeps
 * it from comparing them (flows.inconsistent). At most one byte per call:
 * there is one pending urgent byte per direction.
 */
static void stream_urg_take(struct flow_table *ft, struct flow_stream *st)
{
	if (!st->urg_pending || st->urg_off >= st->len || !st->buf)
		return;
	const uint32_t u = st->urg_off;
	uint32_t end = st->len;

	if (st->ooo_n && st->ooo[st->ooo_n - 1].end > end)
		end = st->ooo[st->ooo_n - 1].end;
	memmove(st->buf + u, st->buf + u + 1, end - u - 1);
	st->len--;
	for (uint32_t i = 0; i < st->ooo_n; i++) { /* all start past len, so past u */
		st->ooo[i].start--;
		st->ooo[i].end--;
	}
	ooo_segs_shift(st, 1);
	if (st->hole_start > u)
		st->hole_start--;
	if (st->resync > u)
		st->resync--;
	if (st->consumed > u)
		st->consumed--;
	st->isn++;
	st->urg_taken++;
	st->aligned = u;
	st->urg_pending = 0;
	ft->stats.urgent++;
}

/*
 * A segment with URG set whose first byte has sequence number seq (n bytes
 * of payload). Its urgent pointer names the urgent byte: seq + urg_ptr - 1
 * (the BSD reading, Linux's default net.ipv4.tcp_stdurg = 0; seq itself when
 * urg_ptr is 0, as Linux's tcp_check_urg reads it). As there: a byte before
 * what the stream holds in order (rcv_nxt) is ignored, and so is one not
 * after the pending one (a retransmission, or an older pointer); a later one
 * replaces the pending one, whose byte then stays in the stream. The byte
 * may lie past this segment: it is taken out when the stream reaches it
 * (stream_urg_take).
 */
static void stream_urgent(struct flow_stream *st, uint32_t seq, uint16_t urg_ptr, size_t n)
{
	if (st->done || st->overflow || (!st->isn_set && !n))
		return;
	if (!st->isn_set) { /* midstream: this segment's data is byte 0 */
		st->isn = seq;
		st->isn_set = 1;
	}
	const int64_t off = (int32_t)(seq + (urg_ptr ? urg_ptr - 1u : 0u) - st->isn);

	if (off < (int64_t)st->len ||
	    (st->urg_pending && off <= (int64_t)st->urg_off))
		return;
	st->urg_off = (uint32_t)off;
	st->urg_pending = 1;
}

/*
 * Skip the hole [len, to): len < to <= stream_max and no held byte lies
 * below to. The hole's bytes become zeros, len moves to to, held ranges that
 * now touch the stream are absorbed, and the hole is recorded: it replaces
 * the recorded range when the analyzer's cursor has passed that range, else
 * extends it. Returns 0, or -1 when the buffer cannot grow (the direction
 * then stops, as overflow).
 */
static int stream_skip(struct flow_table *ft, struct flow_stream *st, uint32_t to, int acked)
{
	if (stream_reserve(ft, st, to) < 0) {
		st->overflow = 1;
		ft->stats.stream_capped++;
		ooo_free(ft, st);
		return -1;
	}
	memset(st->buf + st->len, 0, to - st->len);
	if (!st->holes || st->consumed >= st->resync) {
		st->hole_start = st->len;
		st->unsure = 0; /* a new range */
	}
	if (!acked)
		st->unsure = 1;
	st->resync = to;
	st->holes++;
	ft->stats.stream_holes++;
	st->len = to;
	ooo_absorb(st);
	stream_urg_take(ft, st);
	if (st->len >= stream_limit(ft, st)) {
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
		if ((int64_t)to > ack || stream_skip(ft, st, to, 1) < 0)
			break;
	}
}

void flow_stream_slide(struct flow_stream *st)
{
	const uint32_t d = st->consumed;

	if (!st->buf || st->done || st->overflow || d == 0 || d > st->len)
		return;
	/* held out-of-order bytes lie past len, up to the last range's end */
	uint32_t end = st->ooo_n ? st->ooo[st->ooo_n - 1].end : st->len;
	memmove(st->buf, st->buf + d, end - d);
	for (uint32_t i = 0; i < st->ooo_n; i++) {
		st->ooo[i].start -= d;
		st->ooo[i].end -= d;
	}
	ooo_segs_shift(st, d);
	st->len -= d;
	st->hole_start = st->hole_start > d ? st->hole_start - d : 0;
	st->resync = st->resync > d ? st->resync - d : 0;
	st->aligned = st->aligned > d ? st->aligned - d : 0;
	if (st->urg_pending)
		st->urg_off -= d; /* pending: at or past len, so past d */
	st->isn += d;
	st->slid += d;
	st->consumed = 0;
}

/* No more bytes will come before the held data (FIN, RST): skip every hole
 * in front of it. */
static void stream_flush(struct flow_table *ft, struct flow_stream *st)
{
	while (!st->done && !st->overflow && st->ooo_n)
		if (stream_skip(ft, st, st->ooo[0].start, 0) < 0)
			break;
}

/* Do bytes [lo, hi) of a segment (its byte 0 at offset s0 <= lo) differ
 * from the held out-of-order bytes they overlap? */
static int ooo_differs(const struct flow_stream *st, int64_t s0, const uint8_t *data,
		       uint32_t lo, uint32_t hi)
{
	for (uint32_t i = 0; i < st->ooo_n; i++) {
		const struct flow_seg *r = &st->ooo[i];
		if (r->end <= lo)
			continue;
		if (r->start >= hi)
			break;
		uint32_t a = r->start > lo ? r->start : lo, b = r->end < hi ? r->end : hi;
		if (memcmp(st->buf + a, data + (a - s0), b - a) != 0)
			return 1;
	}
	return 0;
}

/*
 * Do bytes of a segment ([s0, e) in offsets, byte 0 at s0) that the stream
 * already holds in order differ from them? Only bytes that are the
 * sender's own are compared: not those slid away (below 0), not skipped
 * holes (zeros, all below resync) and not those numbered before an urgent
 * byte was taken out (below aligned).
 */
static int inorder_differs(const struct flow_stream *st, int64_t s0, const uint8_t *data,
			   int64_t e)
{
	int64_t lo = s0, hi = e < (int64_t)st->len ? e : (int64_t)st->len;
	uint32_t from = st->aligned;

	if (st->holes && st->resync > from)
		from = st->resync;
	if (lo < (int64_t)from)
		lo = from;
	return lo < hi && memcmp(st->buf + lo, data + (lo - s0), (size_t)(hi - lo)) != 0;
}

/* A hash of a segment's bytes under the table's secret seed (packets
 * choose the bytes; the seed keeps a sender from making two copies alike). */
static uint32_t seg_hash(const struct flow_table *ft, const uint8_t *d, size_t n)
{
	uint64_t h = ft->seed ^ n, t = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		h = murmur_step(h, load64(d + i));
	memcpy(&t, d + i, n - i);
	return (uint32_t)fmix64(murmur_step(h, t));
}

/*
 * A copy of a remembered segment (same sequence number and length) with
 * other bytes: 1 (counted), else 0. The bytes themselves may be gone (slid
 * away, or the analyzer done), so the memo is what is left to compare.
 */
static int memo_differs(struct flow_table *ft, const struct flow_stream *st, uint32_t seq,
			const uint8_t *data, size_t n)
{
	for (unsigned i = 0; i < FLOW_SEG_MEMO; i++) {
		const struct flow_seg_memo *m = &st->memo[i];
		if (st->memo_len[i] && m->seq == seq && st->memo_len[i] == n &&
		    m->hash != seg_hash(ft, data, n)) {
			ft->stats.inconsistent++;
			return 1;
		}
	}
	return 0;
}

/* Remember a segment that brought new bytes of the first window (hashing
 * at most about a window of bytes per direction). */
static void memo_put(const struct flow_table *ft, struct flow_stream *st, uint32_t seq,
		     const uint8_t *data, size_t n)
{
	if (n == 0 || n > UINT16_MAX)
		return;
	unsigned i = st->memo_next++ % FLOW_SEG_MEMO;
	st->memo[i].seq = seq;
	st->memo[i].hash = seg_hash(ft, data, n);
	st->memo_len[i] = (uint16_t)n;
}

/*
 * Do the n bytes at seq start the direction with a TLS handshake record
 * (0x16 0x03)? Such a direction gets the wide window (FLOW_STREAM_WIDE):
 * a ClientHello may be far longer than stream_max (OpenSSL takes 128 KiB),
 * and a capture made with segmentation offload (on the sending host, a
 * veth, loopback) brings it in segments of up to 64 KiB, which a 16 KiB
 * window would cut before the TLS analyzer could walk and slide past it.
 * The analyzer releases the stream once it has read the hellos, so the
 * wider buffer lasts as long as they do (and stream_total_max bounds it).
 */
static int tls_first(const struct flow_table *ft, const struct flow_stream *st, uint32_t seq,
		     const uint8_t *data, size_t n)
{
	/* (a first segment of one byte, 0x16, counts: a sender could send
	 * that and then the hello in one large write) */
	return !ft->cfg.narrow && !st->wide && st->len == 0 && st->slid == 0 && n >= 1 &&
	       data && data[0] == 0x16 && (n == 1 || data[1] == 0x03) &&
	       (!st->isn_set || seq == st->isn);
}

/*
 * A buffer over stream_max (a widened window) that the analyzer's slides
 * left at most a quarter full, with nothing held past len, gives back what
 * it does not need: it moves to the smallest growth step that holds twice
 * its bytes. Called as bytes arrive, so a busy direction that met one
 * offloaded segment does not keep 132 KiB of the cap for the rest of its
 * life (an idle one is the reclaim sweep's).
 */
static void stream_shrink(struct flow_table *ft, struct flow_stream *st)
{
	if (!st->buf || st->cap <= ft->cfg.stream_max || st->ooo_n || st->syn_len ||
	    (uint64_t)st->len * 4 > st->cap)
		return;
	uint32_t cap = STREAM_INIT_CAP;
	while (cap < 2 * st->len)
		cap *= 2;
	if ((uint64_t)cap * 2 > st->cap)
		return;
	uint8_t *nb = cache_get(ft, cap);
	if (!nb && !(nb = malloc(cap)))
		return;
	memcpy(nb, st->buf, st->len);
	ft->stats.stream_bytes -= st->cap - cap;
	cache_put(ft, st->buf, st->cap);
	st->buf = nb;
	st->cap = cap;
	ft->stats.stream_shrunk++;
}

/*
 * Make room for need ranges (OOO_INIT <= need <= ooo_max) in a direction's
 * table: it doubles (up to ooo_max), its held segments' tree moved to its
 * new end. 0, or -1 when the memory is not there (stream_total_max, after
 * reclaiming idle directions; malloc).
 */
static int ooo_grow(struct flow_table *ft, struct flow_stream *st, uint32_t need)
{
	uint32_t cap = ooo_hdr(st)->end, ncap = cap;

	while (ncap < need)
		ncap = ncap > ft->cfg.ooo_max / 2 ? ft->cfg.ooo_max : 2 * ncap;
	uint64_t more = ooo_bytes(ncap) - ooo_bytes(cap);
	if (more > stream_room(ft))
		stream_reclaim(ft, st, more);
	if (more > stream_room(ft))
		return -1;
	struct flow_seg *t = realloc(ooo_hdr(st), ooo_bytes(ncap));
	if (!t)
		return -1;
	memmove(t + 1 + ncap, t + 1 + cap, sizeof(struct ooo_tree));
	t[0].end = ncap;
	st->ooo = t + 1;
	ft->stats.stream_bytes += more;
	cache_trim(ft);
	return 0;
}

/*
 * Add n payload bytes whose first byte has sequence number seq. A segment
 * whose bytes differ from bytes held for the same range (in order or out
 * of order) is counted (flows.inconsistent): the sender sent two versions
 * and the receiver took one, which one a passive copy cannot know (a
 * decoy with a bad checksum or a short TTL, one PAWS drops ...); which
 * copy the stream keeps does not change.
 */
static void stream_add(struct flow_table *ft, struct flow_stream *st, uint32_t seq,
		       const uint8_t *data, size_t n, int counted, int claimed)
{
	if (tls_first(ft, st, seq, data, n))
		st->wide = 1;
	uint32_t max = stream_limit(ft, st);

	if (st->done || st->overflow || st->gap || n == 0 || !data)
		return;
	stream_shrink(ft, st);
	if (!st->isn_set) {
		st->isn = seq;
		st->isn_set = 1;
	}
	int64_t s0 = (int32_t)(seq - st->isn); /* serial arithmetic */
	int64_t e = s0 + (int64_t)n;
	int64_t s = s0 < (int64_t)st->len ? (int64_t)st->len : s0;
	int differs = counted;

	if (!differs && (differs = inorder_differs(st, s0, data, e)) != 0)
		ft->stats.inconsistent++;
	if (e <= (int64_t)st->len)
		return; /* retransmission: every byte already here */
	if (e > (int64_t)max && s0 == (int64_t)st->len && n > FLOW_SEG_WIRE_MAX && !st->wide &&
	    !ft->cfg.narrow &&
	    (claimed || s0 == 0 || s0 + (int64_t)st->slid < (int64_t)FLOW_FIRST_BYTES)) {
		/* More bytes than any wire segment, and more than the window
		 * has left: a capture of segmentation offload (a veth or a
		 * bridge hands libpcap the sender's TSO/GSO segments of up to
		 * 64 KiB whole, loopback has a 64 KiB MTU). Cut at the window,
		 * such a segment would end the direction for the analyzer that
		 * slides past what it read (HTTP, DNS: the rest of a long head,
		 * the request after an upload) and cut a hello that a receiver
		 * reads whole: take it whole, in a window of FLOW_STREAM_WIDE
		 * from now on, in a flow an analyzer claimed, for the first
		 * bytes of a direction (up to FLOW_FIRST_BYTES), or when the
		 * window is empty (all read: a tunnel an analyzer handed back
		 * starts) (the global cap still bounds all). */
		st->wide = 1;
		max = stream_limit(ft, st);
		ft->stats.stream_widened++;
	}
	if (s >= (int64_t)max) {
		ft->stats.stream_far++;
		return;
	}
	if (e > (int64_t)max)
		e = max;

	/* A hole in front: skip it if the peer has the bytes. */
	uint32_t i = 0, j = 0, taken = st->urg_taken;
	if (s > (int64_t)st->len)
		stream_skip_acked(ft, st, (uint32_t)s);
	if (st->urg_taken != taken) {
		/* an urgent byte in a skipped hole was taken out: this
		 * segment's bytes, all past it, are numbered one lower */
		s0 -= st->urg_taken - taken;
		e -= st->urg_taken - taken;
		s -= st->urg_taken - taken;
	}
	if (st->overflow || e <= (int64_t)st->len)
		return;
	if (s < (int64_t)st->len)
		s = st->len;
	if (s > (int64_t)st->len) {
		/* Out of order: held if it fits in ooo_max ranges. Past
		 * that it is not held, and what is held stays: Linux's queue
		 * keeps thousands of segments (4,000 one-byte ones, apart,
		 * R22-F5), so what the table holds the receiver holds too,
		 * and the bytes in front (a request's line and Host) are
		 * still read when they come; skipping the first hole instead,
		 * as the table once did past 16 ranges, lost them. */
		uint32_t need = ooo_span(st, (uint32_t)s, (uint32_t)e, &i, &j);
		if (need > ooo_cap(ft, st) &&
		    (need > ft->cfg.ooo_max || ooo_grow(ft, st, need) < 0)) {
			ft->stats.ooo_dropped++;
			return;
		}
	}

	if (s == (int64_t)st->len) {
		if (stream_reserve(ft, st, (uint32_t)e) < 0) {
			st->overflow = 1;
			ft->stats.stream_capped++;
			ft->stats.stream_cap_bytes += (uint64_t)(e - s);
			ooo_free(ft, st);
			return;
		}
		/* in order: every byte is the receiver's (as Linux and the
		 * BSDs take it: held out-of-order bytes it overlaps give way,
		 * so a decoy sent ahead cannot stand in for what arrives in
		 * order) */
		if (!differs && ooo_differs(st, s0, data, (uint32_t)s, (uint32_t)e))
			ft->stats.inconsistent++;
		memcpy(st->buf + s, data + (s - s0), (size_t)(e - s));
		st->len = (uint32_t)e;
		ooo_absorb(st);
		stream_urg_take(ft, st);
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
		uint32_t cap = ooo_cap(ft, st);
		if (ooo_bytes(cap) > stream_room(ft))
			stream_reclaim(ft, st, ooo_bytes(cap));
		if (ooo_bytes(cap) > stream_room(ft)) {
			ft->stats.ooo_dropped++;
			ft->stats.stream_cap_bytes += (uint64_t)(e - s);
			return;
		}
		struct flow_seg *t = malloc(ooo_bytes(cap));
		if (!t) {
			ft->stats.ooo_dropped++;
			return;
		}
		t[0] = (struct flow_seg){0, cap};
		st->ooo = t + 1;
		ooo_tree(st)->used = 0;
		ooo_tree(st)->root = OOO_NIL;
		ft->stats.stream_bytes += ooo_bytes(cap);
		cache_trim(ft);
	}
	if (stream_reserve(ft, st, (uint32_t)e) < 0) {
		ft->stats.ooo_dropped++;
		ft->stats.stream_cap_bytes += (uint64_t)(e - s);
		return;
	}
	if (!differs && ooo_differs(st, s0, data, (uint32_t)s, (uint32_t)e))
		ft->stats.inconsistent++;
	stream_write(ft, st, s0, data, (uint32_t)s, (uint32_t)e);
	ooo_merge(st, (uint32_t)s, (uint32_t)e, i, j);
}

/* ----------------------------------------------------------------- flows */

/* Flows in chunk i: FLOW_CHUNK, but the last may hold fewer (max_flows). */
static uint32_t chunk_flows(const struct flow_table *ft, uint32_t i)
{
	uint64_t left = (uint64_t)ft->cfg.max_flows - (uint64_t)i * FLOW_CHUNK;

	if ((uint64_t)i * FLOW_CHUNK >= ft->cfg.max_flows)
		return 0;
	return left > FLOW_CHUNK ? FLOW_CHUNK : (uint32_t)left;
}

/* A free flow struct and its slab index + 1, or NULL when out of memory. */
/* A freed flow, the last freed first, else the next never used, in slab
 * order: a chunk's flows are touched as they are taken, not all at once
 * when it is mapped (a table that holds a few flows touches a page or two
 * of its first 2 MiB). */
static struct flow *flow_alloc(struct flow_table *ft, uint32_t *ref)
{
	struct flow *f;

	if (ft->free_ref) {
		f = flow_at(ft, ft->free_ref);
		*ref = ft->free_ref;
		ft->free_ref = f->lru_next;
		return f;
	}
	if (ft->fresh_ref > ft->allocated) {
		/* Every chunk but the last is full, so chunk n_chunks starts
		 * at index allocated. */
		uint32_t n = chunk_flows(ft, ft->n_chunks);
		if (n == 0)
			return NULL; /* cannot happen: flow_create evicts first */
		struct flow *c = mem_table_zalloc((size_t)n * sizeof(struct flow));
		if (!c)
			return NULL;
		ft->chunks[ft->n_chunks++] = c;
		ft->fresh_ref = ft->allocated + 1;
		ft->allocated += n;
	}
	*ref = ft->fresh_ref++;
	return flow_at(ft, *ref);
}

/* A zeroed pair of stream records, or NULL when out of memory. */
static struct flow_stream *pair_alloc(struct flow_table *ft)
{
	if (!ft->pair_free) {
		/* At most one pair per flow, so chunks never exceed the
		 * max_flows pairs that pair_chunks has room for. */
		uint32_t n = ft->cfg.max_flows - ft->pairs_allocated;
		if (n == 0)
			return NULL; /* cannot happen: every pair belongs to a flow */
		if (n > PAIR_CHUNK)
			n = PAIR_CHUNK;
		union stream_pair *c = aligned_alloc(PAIR_ALIGN, (size_t)n * sizeof(*c));
		if (!c)
			return NULL;
		memset(c, 0, (size_t)n * sizeof(*c)); /* nothing held (reclaim) */
		ft->pair_chunks[ft->n_pair_chunks++] = c;
		for (uint32_t i = n; i-- > 0;) {
			c[i].next = ft->pair_free;
			ft->pair_free = &c[i];
		}
		ft->pairs_allocated += n;
	}
	union stream_pair *sp = ft->pair_free;
	ft->pair_free = sp->next;
	memset(sp, 0, sizeof(*sp));
	return sp->st;
}

static void pair_free(struct flow_table *ft, struct flow_stream *st)
{
	union stream_pair *sp = (union stream_pair *)(void *)st;

	sp->next = ft->pair_free;
	ft->pair_free = sp;
}

/* Call on_end, release everything the flow holds and return it to the free
 * list. */
static void flow_end(struct flow_table *ft, struct flow *f)
{
	if (ft->on_end)
		ft->on_end(ft->user, f);
	free(f->app_state);
	f->app_state = NULL;
	if (f->st) { /* TCP */
		stream_release(ft, &f->st[0]);
		stream_release(ft, &f->st[1]);
		pair_free(ft, f->st);
		f->st = NULL;
	}
	uint32_t idx = hash_remove(ft, f);
	lru_unlink(ft, f);
	ft->stats.active--;
	f->lru_next = ft->free_ref;
	ft->free_ref = idx + 1;
}

/* A new flow for k, *ref its slab index + 1; with turn, k's receiver is the
 * initiator. Evicts the least recently seen flow when the table is full. */
static struct flow *flow_create(struct flow_table *ft, const struct flow_key *k,
				uint32_t h, int turn, uint64_t ts, uint32_t *ref)
{
	if (ft->stats.active >= ft->cfg.max_flows) {
		int cls = oldest_class(ft, 0, 0);
		if (cls >= 0) {
			struct flow *victim = lru_tail(ft, cls);
			victim->state |= FLOW_EVICTED;
			flow_end(ft, victim);
			ft->stats.evicted++;
		}
	}
	struct flow_stream *st = NULL;
	if (k->proto == PROTO_TCP && !(st = pair_alloc(ft)))
		return NULL;
	struct flow *f = flow_alloc(ft, ref);
	if (!f) {
		if (st)
			pair_free(ft, st);
		return NULL;
	}
	memset(f, 0, sizeof(*f));
	f->st = st;
	for (unsigned i = 0; st && i < 4 && ft->cfg.wide_ports[i]; i++)
		if (k->sport == ft->cfg.wide_ports[i] || k->dport == ft->cfg.wide_ports[i])
			st[0].wide = st[1].wide = 1;
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
	hash_insert(ft, h, *ref - 1);
	lru_push_head(ft, f, *ref, flow_class(f));
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

/* Nothing of this direction reassembled or held yet (SYN data waiting for
 * the peer's word aside: it is not the stream's until then). */
static int stream_unused(const struct flow_stream *st)
{
	return st->len == 0 && st->ooo_n == 0 && st->slid == 0 && st->urg_taken == 0 &&
	       !st->done && !st->overflow;
}

/* Number the direction from isn (byte 0); what its peer acknowledged and
 * the pending urgent byte were of the old numbering. SYN data held stays
 * with its own SYN (syn_held_isn1): the peer may answer that one. */
static void stream_rebase(struct flow_table *ft, struct flow_stream *st, uint32_t isn)
{
	(void)ft;
	st->isn = isn;
	st->isn_set = 1;
	st->acked_set = 0;
	st->urg_pending = 0;
	st->aligned = 0;
}

/* ISN + 1 of the SYN whose data is held (byte 0 of that numbering), when
 * it is still among the SYNs kept: 1 and *isn1 set, else 0. */
static int syn_held_isn1(const struct flow_stream *st, uint32_t *isn1)
{
	if (!st->syn_len || (uint8_t)(st->syn_n - st->syn_hold_i) > FLOW_SYN_ISNS ||
	    st->syn_n == st->syn_hold_i)
		return 0;
	*isn1 = st->syn_isn[st->syn_hold_i % FLOW_SYN_ISNS];
	return 1;
}

/*
 * A SYN without ACK carried n bytes, the first at seq (the stream's byte
 * 0). Without TCP Fast Open the receiver does not take them (its SYN-ACK
 * acknowledges the SYN alone) and the sender sends them again after the
 * handshake, so they are held aside (buf[0, syn_len), len staying 0) until
 * the peer says: stream_syn_decide. Only the first SYN's data is held; a
 * SYN after it with data (a copy, or one after the stream began, which
 * Linux ignores) adds nothing.
 */
static void stream_syn_hold(struct flow_table *ft, struct flow_stream *st, uint32_t seq,
			    const uint8_t *data, size_t n)
{
	uint32_t held;

	if (!data || n == 0)
		return;
	if (syn_held_isn1(st, &held) && held == seq)
		return; /* the held SYN again */
	if (st->syn_len || !stream_unused(st) || st->isn != seq) {
		ft->stats.syn_data_dropped++;
		return;
	}
	uint32_t m = n > stream_limit(ft, st) ? stream_limit(ft, st) : (uint32_t)n;
	if (stream_reserve(ft, st, m) < 0) {
		ft->stats.syn_data_dropped++;
		return;
	}
	memcpy(st->buf, data, m);
	st->syn_len = m;
	st->syn_hold_i = (uint8_t)(st->syn_n - 1); /* the SYN just counted */
}

/*
 * The peer took the first k bytes of the held SYN data (the SYN-ACK's ACK
 * names k; without a SYN-ACK, the sender's next segment, see flow.h "SYN
 * data"): they become the stream's first bytes, as Linux's Fast Open
 * queues them; the rest, or all when k is not in (0, syn_len] (0: no Fast
 * Open; else a SYN-ACK for another SYN), are dropped. While data is held
 * nothing else is (len 0, no held range): the sender's segments come
 * after the decision.
 */
static void stream_syn_decide(struct flow_table *ft, struct flow_stream *st, uint32_t to)
{
	uint32_t held;

	if (!st->syn_len)
		return;
	int64_t k = syn_held_isn1(st, &held) ? (int32_t)(to - held) : 0;
	if (k > 0 && k <= (int64_t)st->syn_len) {
		if (k < (int64_t)st->syn_len)
			ft->stats.syn_data_dropped++;
		if (st->isn != held) /* a later SYN of another ISN came between */
			stream_rebase(ft, st, held);
		st->len = (uint32_t)k;
		st->syn_len = 0;
		ooo_absorb(st);
		if (st->len >= stream_limit(ft, st)) {
			st->overflow = 1;
			ft->stats.stream_truncated++;
			ooo_free(ft, st);
		}
		return;
	}
	st->syn_len = 0;
	ft->stats.syn_data_dropped++;
}

/* The urgent pointer of TCP segment p, or -1 when its header cannot be
 * read (decode.c checked it; a struct pkt made by hand may lack it). */
static int tcp_urg_ptr(const struct pkt *p)
{
	struct cur c = cur_init(p->l4, p->l4 ? p->l4_len : 0);

	cur_skip(&c, 18); /* ports, seq, ack, offset, flags, window, checksum */
	uint16_t v = cur_be16(&c);
	return c.err ? -1 : v;
}

/* The window scale option (RFC 7323) of TCP segment p's header: its shift
 * (at most 14), or -1 when it has none. */
static int tcp_wscale_opt(const struct pkt *p)
{
	struct cur c = cur_init(p->l4, p->l4 ? p->l4_len : 0);

	cur_skip(&c, 12);
	size_t hlen = (size_t)(cur_u8(&c) >> 4) * 4;
	if (c.err || hlen <= 20)
		return -1;
	struct cur o = cur_init(p->l4, p->l4_len);
	cur_skip(&o, 20);
	o = cur_take(&o, hlen - 20);
	while (!o.err && cur_left(&o)) {
		uint8_t kind = cur_u8(&o);
		if (kind == 0)
			break;
		if (kind == 1)
			continue;
		uint8_t len = cur_u8(&o);
		if (o.err || len < 2)
			break;
		struct cur v = cur_take(&o, len - 2u);
		if (kind == 3 && len == 3) {
			uint8_t sh = cur_u8(&v);
			return v.err ? -1 : sh > 14 ? 14 : sh;
		}
	}
	return -1;
}

/* Would the receiver take the urgent pointer of TCP segment p (seq, n bytes)
 * of direction st, its peer's stream peer? Linux reads it only from a
 * segment it accepts (tcp_sequence): not wholly before what it has read in
 * order (an old retransmission), nor starting past the window the receiver
 * advertised from there (its last window, taken as at least 64 KiB: the
 * capture sees the window late, and a sender respects a smaller one). */
static int urg_acceptable(const struct flow_stream *st, const struct flow_stream *peer,
			  uint32_t seq, size_t n)
{
	if (!st->isn_set)
		return 1;
	const int64_t off = (int32_t)(seq - st->isn);
	if (off + (int64_t)n < (int64_t)st->len)
		return 0;
	const int64_t win = peer->win_set && peer->win > 65535 ? peer->win : 65535;
	return off <= (int64_t)st->len + win;
}

/* A segment with none of SYN, ACK and RST: Linux discards it in every
 * state (tcp_rcv_state_process, tcp_rcv_established: "!th->ack"), so its
 * data, FIN and urgent pointer never reach the receiver. */
static int tcp_discarded(uint8_t flags)
{
	return !(flags & (TH_SYN | TH_ACK | TH_RST));
}

/*
 * A RST from the responder that the connecting stack would drop (RFC 9293
 * 3.10.7.3, as Linux does): before any SYN-ACK, to a SYN the initiator sent,
 * one without an ACK, or whose ACK is not the SYN's (ISN + 1, or past data
 * the SYN carried). A sender that is neither end (or the initiator itself,
 * spoofing its peer) could otherwise make an answered connection read as
 * refused.
 */
static int rst_unacceptable(const struct flow *f, const struct pkt *p)
{
	const struct flow_stream *c = f->st;

	if (!c || !(p->tcp_flags & TH_RST) || (p->tcp_flags & TH_SYN) ||
	    (f->state & (FLOW_SYNACK | FLOW_MIDSTREAM)) || !(f->state & FLOW_SYN) || !c->isn_set)
		return 0;
	if (!(p->tcp_flags & TH_ACK))
		return 1;
	/* stream_isn1(c) is ISN + 1; the SYN's own data (Fast Open) may be
	 * acknowledged too */
	return (uint32_t)(p->ack - stream_isn1(c)) > (uint32_t)f->bytes[0];
}

/* The checksums of TCP segment p ("Checksums" in flow.h): 1 right, -1
 * wrong (the IPv4 header's, or the TCP one and not offload's partial
 * sum), 0 not known (cut by the capture, or offload's partial sum). */
static int tcp_csum(const struct pkt *p)
{
	size_t len = p->l4 ? p->l4_len : 0;
	const uint8_t *dst = (p->flags & PKT_SRCROUTE) ? p->route_to : p->dst;

	if (p->flags & PKT_IP_CSUM_BAD)
		return -1;
	if ((p->flags & PKT_SHORT) || len < 20 || len > 0xffff)
		return 0;
	struct cur c = cur_init(p->l4, len);
	const uint8_t *seg = cur_ptr(&c, len);
	if (!seg)
		return 0;
	uint64_t pseudo = csum_pseudo(p->ipv, p->src, dst, PROTO_TCP, len);
	if (csum_fold(csum_add(pseudo, seg, len)) == 0xffff)
		return 1;
	uint16_t field = (uint16_t)(seg[16] << 8 | seg[17]);
	if (field == csum_be(csum_fold(pseudo)))
		return 0;
	/* a segment longer than an Ethernet frame holds was coalesced by the
	 * capturing host (LRO, which may leave the first segment's checksum)
	 * or is one the sending host's offload had yet to cut: not known */
	return len > 1480 ? 0 : -1;
}

/* Is TCP segment p one its receiver drops for a bad checksum, in a
 * direction whose sender computes them ("Checksums" in flow.h)? Counts it
 * (1), or notes a right one (0). */
static int tcp_csum_drop(struct flow_table *ft, struct flow *f, const struct pkt *p, int dir)
{
	struct flow_stream *st = f->st ? &f->st[dir] : NULL;
	size_t n = p->payload ? p->payload_len : 0;

	if (!st || (!n && !(p->tcp_flags & (TH_SYN | TH_FIN | TH_RST | TH_URG)) && st->csum_ok >= 2))
		return 0;
	int r = tcp_csum(p);
	if (r > 0 && st->csum_ok < 2)
		st->csum_ok++;
	if (r < 0) {
		if (st->csum_ok >= 2) {
			ft->stats.bad_checksum++;
			return 1;
		}
		/* two right ones in a row settle it: a rewritten capture's
		 * garbage is right by chance one time in 65,536 */
		st->csum_ok = 0;
	}
	return 0;
}

/* The checksums of UDP datagram p ("UDP checksums" in flow.h): 1 written
 * by its sender's stack (right, or offload's partial sum), -1 wrong (the
 * IPv4 header's, or the UDP one; over IPv6 a zero one off tunnel ports),
 * 0 not known (none over IPv4, cut by the capture, longer than a frame). */
static int udp_csum(const struct pkt *p)
{
	size_t len = p->l4 ? p->l4_len : 0;
	const uint8_t *dst = (p->flags & PKT_SRCROUTE) ? p->route_to : p->dst;

	if (p->flags & PKT_IP_CSUM_BAD)
		return -1;
	if ((p->flags & PKT_SHORT) || len < 8 || len > 0xffff)
		return 0;
	struct cur c = cur_init(p->l4, len);
	const uint8_t *dg = cur_ptr(&c, len);
	if (!dg)
		return 0;
	uint16_t field = (uint16_t)(dg[6] << 8 | dg[7]);
	if (field == 0) /* none: IPv4 takes it; udp6 only on a tunnel's socket
			 * (VXLAN, GENEVE: RFC 6935) */
		return p->ipv == 4 || p->dport == 4789 || p->dport == 6081 ? 0 : -1;
	uint64_t pseudo = csum_pseudo(p->ipv, p->src, dst, PROTO_UDP, len);
	if (csum_fold(csum_add(pseudo, dg, len)) == 0xffff || field == csum_be(csum_fold(pseudo)))
		return 1;
	/* longer than an Ethernet frame holds and not reassembled here: the
	 * sending host's UDP GSO not yet cut, or the capturing host's GRO */
	return len > 1480 && !(p->flags & PKT_REASSEMBLED) ? 0 : -1;
}

/* Is UDP datagram p one its receiver drops for a bad checksum, from a
 * capture source whose checksums are computed ("UDP checksums" in
 * flow.h)? Counts it (1), or weighs it toward settling the source (0). */
static int udp_csum_drop(struct flow_table *ft, const struct pkt *p)
{
	struct udp_csum_src *s = &ft->udp_csum[p->iface % FLOW_UDP_CSUM_SOURCES];
	int r = udp_csum(p);

	if (r < 0 && s->settled) {
		ft->stats.udp_bad_checksum++;
		return 1;
	}
	if (s->settled || !r)
		return 0;
	if (r > 0 && s->ok < UINT32_MAX)
		s->ok++;
	if (r < 0 && s->bad < UINT32_MAX)
		s->bad++;
	/* garbage is right by chance one time in 65,536: two such among the
	 * first 34 datagrams of a rewritten capture, once in ~7.7 million */
	if (s->ok >= 2 && (uint64_t)s->bad <= (uint64_t)s->ok * FLOW_UDP_CSUM_RATIO)
		s->settled = 1;
	return 0;
}

static void tcp_update(struct flow_table *ft, struct flow *f, const struct pkt *p, int dir)
{
	const uint8_t fl = p->tcp_flags;
	struct flow_stream *st = &f->st[dir];
	uint32_t seq = p->seq;
	const size_t n = p->payload ? p->payload_len : 0;

	if (tcp_discarded(fl)) {
		if (n)
			ft->stats.noack_ignored++;
		return;
	}
	if (fl & TH_SYN) {
		int ws = tcp_wscale_opt(p);
		st->wscale = (uint8_t)(ws < 0 ? 0 : ws + 1);
		if (!(fl & TH_ACK))
			st->syn_data = n > 0;
	}
	if (fl & TH_ACK) {
		/* the window this sender advertises for its peer's data: a
		 * SYN's is never scaled, and scaling needs both SYNs' option */
		const struct flow_stream *peer = &f->st[!dir];
		unsigned sh = !(fl & TH_SYN) && st->wscale && peer->wscale ? st->wscale - 1u : 0;
		st->win = (uint32_t)p->tcp_win << sh;
		st->win_set = 1;
	}
	if (fl & TH_SYN) {
		if (!(fl & TH_ACK)) {
			if (dir == 0)
				f->state |= FLOW_SYN;
			st->syn_isn[st->syn_n++ % FLOW_SYN_ISNS] = seq + 1;
		} else if (dir == 1) {
			struct flow_stream *c = &f->st[0];
			f->state |= FLOW_SYNACK;
			/* the SYN's data: taken as far as this ACK names it
			 * (Fast Open), else dropped */
			if (c->syn_len) {
				stream_syn_decide(ft, c, p->ack);
				if (c->len) {
					c->isn_fixed = 1;
					ft->syn_taken = 1;
				}
			}
			/* the server's ACK names the client's ISN; it decides
			 * between SYNs of other ISNs (a retry, a decoy) while
			 * the client has sent nothing, and once it acknowledges
			 * a SYN the client sent, no later SYN or SYN-ACK (a
			 * decoy after the handshake) renumbers the client */
			if (!c->isn_fixed && (!c->isn_set || stream_unused(c))) {
				stream_rebase(ft, c, p->ack);
				for (unsigned i = 0; i < FLOW_SYN_ISNS && i < c->syn_n; i++)
					if (c->syn_isn[i] == p->ack)
						c->isn_fixed = 1;
			}
		}
		/* a SYN again with another ISN, before any data: the latest
		 * (a retry with a new ISN; the SYN-ACK settles the client's) */
		if (!st->isn_set || (st->isn != seq + 1 && stream_unused(st) && !st->isn_fixed))
			stream_rebase(ft, st, seq + 1);
		seq++; /* the SYN takes one sequence number before any data */
	} else if ((fl & TH_ACK) && dir == 0 && (f->state & FLOW_SYNACK) && f->st[1].isn_set &&
		   !f->st[1].isn_fixed && p->ack == f->st[1].isn && stream_unused(&f->st[1])) {
		/* the client acknowledges the server's SYN-ACK: its numbering */
		f->st[1].isn_fixed = 1;
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
	if ((fl & (TH_SYN | TH_ACK)) == TH_SYN) {
		stream_syn_hold(ft, st, seq, p->payload, n);
		return;
	}
	if ((fl & (TH_SYN | TH_ACK)) == (TH_SYN | TH_ACK) && n && (f->state & FLOW_SYN) &&
	    !f->st[!dir].syn_data) {
		/* data on a SYN-ACK: a client queues it only after a Fast Open
		 * SYN of its own (tcp_rcv_fastopen_synack), which carries data;
		 * else it is dropped and the server sends it again (a SYN not
		 * captured: taken, as before) */
		ft->stats.syn_data_dropped++;
		return;
	}
	if (st->syn_len && !(fl & TH_SYN)) {
		/* SYN data held and no SYN-ACK seen (a capture of one
		 * direction): the sender goes on after what the peer took,
		 * so its first segment since says how much (from 0 again: none) */
		stream_syn_decide(ft, st, seq);
	}
	if ((fl & TH_URG) && !(fl & TH_SYN) && urg_acceptable(st, &f->st[!dir], seq, n)) {
		int up = tcp_urg_ptr(p);
		if (up >= 0)
			stream_urgent(st, seq, (uint16_t)up, n);
	}
	if (n) {
		/* a copy of a remembered segment with other bytes is counted
		 * once; one bringing new bytes of the first window is
		 * remembered */
		int counted = memo_differs(ft, st, seq, p->payload, n);
		int fresh = !st->done && !st->overflow && st->slid == 0 &&
			    (!st->isn_set || (int64_t)(int32_t)(seq - st->isn) + (int64_t)n >
						     (int64_t)st->len);
		stream_add(ft, st, seq, p->payload, n, counted, f->app != APP_NONE);
		if (fresh && !counted)
			memo_put(ft, st, seq, p->payload, n);
	}
	if (fl & TH_FIN)
		stream_flush(ft, st);
}

/*
 * The key of p. *reply_first is set when p, if it were the first packet of
 * its flow, would be an answer (TCP SYN+ACK, ICMP echo reply).
 */
static void key_from_pkt(struct flow_key *k, const struct pkt *p, int *reply_first)
{
	memset(k, 0, sizeof(*k));
	k->ipv = p->ipv;
	k->proto = p->proto;
	if (p->ipv == 4) {
		memcpy(k->src, p->src, 4);
		memcpy(k->dst, p->dst, 4);
	} else {
		memcpy(k->src, p->src, 16);
		memcpy(k->dst, p->dst, 16);
	}
	*reply_first = 0;
	switch (p->proto) {
	case PROTO_TCP:
		k->sport = p->sport;
		k->dport = p->dport;
		*reply_first = (p->tcp_flags & (TH_SYN | TH_ACK)) == (TH_SYN | TH_ACK);
		/* Without a SYN (a capture started mid-connection, or one that
		 * resumes after its flow expired), a packet from a port below
		 * the ephemeral ranges (Linux's from 32768, IANA's from 49152)
		 * to one inside them is the server's: its receiver initiated,
		 * whichever side happens to send first (a bare ACK, a
		 * keepalive). Otherwise the first sender is the initiator. */
		if (!(p->tcp_flags & TH_SYN) && p->sport < 32768 && p->dport >= 32768)
			*reply_first = 1;
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
	ft->fresh_ref = 1; /* none yet: allocated + 1 */
	while (nb < 2 * ft->cfg.max_flows) /* at most half full */
		nb <<= 1;
	ft->mask = nb - 1; /* (flow_table_free sizes the slots by it) */
	ft->slots = mem_table_zalloc((size_t)nb * sizeof(*ft->slots));
	ft->chunks = calloc((ft->cfg.max_flows + FLOW_CHUNK - 1) / FLOW_CHUNK,
			    sizeof(*ft->chunks));
	ft->pair_chunks = calloc((ft->cfg.max_flows + PAIR_CHUNK - 1) / PAIR_CHUNK,
				 sizeof(*ft->pair_chunks));
	if (!ft->slots || !ft->chunks || !ft->pair_chunks)
		goto fail;
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
	flow_table_end_all(ft);
	for (uint32_t i = 0; i < ft->n_chunks; i++) /* all full but the last */
		mem_table_free(ft->chunks[i], (size_t)chunk_flows(ft, i) * sizeof(struct flow));
	free(ft->chunks);
	for (uint32_t i = 0; i < ft->n_pair_chunks; i++)
		free(ft->pair_chunks[i]);
	free(ft->pair_chunks);
	for (int k = 0; k < STREAM_CACHE_CLASSES; k++) {
		while (ft->cache[k]) {
			struct cached_buf *b = ft->cache[k];
			ft->cache[k] = b->next;
			free(b);
		}
	}
	mem_table_free(ft->slots, (size_t)(ft->mask + 1) * sizeof(*ft->slots));
	free(ft);
}

void flow_table_end_all(struct flow_table *ft)
{
	if (!ft)
		return;
	for (;;) {
		int cls = oldest_class(ft, 0, 0);
		if (cls < 0)
			break;
		flow_end(ft, lru_tail(ft, cls));
		ft->stats.expired++;
	}
	ft->expire_at = UINT64_MAX;
}

void flow_table_expire(struct flow_table *ft, uint64_t now_us)
{
	if (!ft || now_us < ft->expire_at)
		return;
	for (;;) {
		int cls = oldest_class(ft, now_us, 1);
		if (cls < 0)
			break;
		flow_end(ft, lru_tail(ft, cls));
		ft->stats.expired++;
	}
	/* The next flow to expire, and with it the run ends: start fetching
	 * its hash slot, its second cache line (id, app_state, st: the first
	 * was read just now) and the flow that becomes its list's tail after
	 * it, which its flow_end will read and write (all cold: the flow has
	 * been idle a minute or more), while the packets until then go by. */
	const struct flow *next = NULL;
	ft->expire_at = UINT64_MAX;
	for (int cls = 0; cls < LRU_N; cls++) {
		const struct flow *t = lru_tail(ft, cls);
		if (t && idle_at(ft, t, cls) < ft->expire_at) {
			ft->expire_at = idle_at(ft, t, cls);
			next = t;
		}
	}
	if (next) {
		__builtin_prefetch(&ft->slots[flow_hash(ft, next) & ft->mask]);
		__builtin_prefetch((const char *)next + 64);
		if (next->lru_prev)
			__builtin_prefetch(flow_at(ft, next->lru_prev));
	}
}

int flow_table_syn_taken(struct flow_table *ft)
{
	int r = ft && ft->syn_taken;

	if (ft)
		ft->syn_taken = 0;
	return r;
}

struct flow *flow_table_update(struct flow_table *ft, struct pkt *p)
{
	struct flow_key k;
	struct flow *f;
	int dir = 0, reply_first;
	uint32_t ref = 0;

	if (!ft || !p)
		return NULL;
	ft->syn_taken = 0;
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
	f = lookup(ft, &k, h, &dir, &ref);

	int pure_syn = p->proto == PROTO_TCP && (p->tcp_flags & (TH_SYN | TH_ACK)) == TH_SYN;
	if (f && pure_syn && (p->flags & PKT_RX_DROP)) {
		/* a SYN its receiver's IP layer drops (its options): it ends
		 * nothing, starts nothing */
		ft->stats.rx_drop++;
		p->payload_len = 0;
		p->flow = f;
		p->dir = dir;
		return f;
	}
	if (f && pure_syn && f->st && f->st[dir].csum_ok >= 2 && tcp_csum(p) < 0) {
		/* a SYN its receiver drops for a bad checksum, from a sender
		 * whose checksums are right: it ends nothing, starts nothing */
		ft->stats.bad_checksum++;
		p->payload_len = 0;
		p->flow = f;
		p->dir = dir;
		return f;
	}
	if (f && pure_syn) {
		if (flow_closed(f) && dir == 0 && f->st[0].isn_set &&
		    stream_isn1(&f->st[0]) == p->seq + 1) {
			/* the closed connection's own SYN again, with its ISN: a
			 * copy (a capture on two interfaces that wrote each one's
			 * packets in a block of its own, as dumpcap does) or a
			 * retransmission, not a new connection; its segments are
			 * old bytes, which reassembly does not hand on twice */
		} else if (flow_closed(f) ||
			   (f->fin_dirs && dir == 0 && f->st && f->st[0].isn_set &&
			    stream_isn1(&f->st[0]) != p->seq + 1)) {
			/* port reuse: the old connection is over (closed, or
			 * half closed and this SYN of another ISN: the other
			 * FIN was not captured) */
			flow_end(ft, f);
			ft->stats.expired++;
			f = NULL;
		} else if (dir == 1) {
			flow_turn(f);
			dir = 0;
		}
	}
	if (!f) {
		f = flow_create(ft, &k, h, reply_first, p->ts_us, &ref);
		if (!f)
			return NULL;
		dir = reply_first ? 1 : 0;
		if (p->proto == PROTO_TCP && !(p->tcp_flags & TH_SYN))
			f->state |= FLOW_MIDSTREAM;
	} else if (p->ts_us > f->last_us) {
		f->last_us = p->ts_us;
	}

	if (p->proto == PROTO_TCP && (p->flags & PKT_RX_DROP))
		ft->stats.rx_drop++;
	if (p->proto == PROTO_TCP && ((p->flags & PKT_RX_DROP) || tcp_csum_drop(ft, f, p, dir))) {
		/* dropped by its receiver before TCP sees it: nothing of it
		 * reaches a stream or an analyzer */
		p->payload_len = 0;
		p->flow = f;
		p->dir = dir;
		return f;
	}
	if (p->proto == PROTO_UDP && p->payload_len && (p->flags & PKT_RX_DROP))
		ft->stats.udp_rx_drop++;
	if (p->proto == PROTO_UDP && p->payload_len &&
	    ((p->flags & PKT_RX_DROP) || udp_csum_drop(ft, p))) {
		/* dropped by its receiver's IP layer (its options) or UDP
		 * stack: no analyzer reads it, the policy judges it (it went
		 * out) */
		p->payload_len = 0;
		p->flow = f;
		p->dir = dir;
		return f;
	}
	size_t plen = p->payload ? p->payload_len : 0;
	f->pkts[dir]++;
	f->bytes[dir] += plen;
	if (p->proto == PROTO_TCP && dir && rst_unacceptable(f, p)) {
		/* not an answer, nor a refusal: the connecting stack drops it */
		ft->stats.rst_ignored++;
	} else {
		if (dir)
			f->state |= FLOW_REPLY;
		/* data on a RST is a diagnostic no stack delivers (RFC 9293
		 * 3.5.3), and data without ACK Linux discards: not an answer */
		if (plen && !(p->proto == PROTO_TCP &&
			      ((p->tcp_flags & TH_RST) || tcp_discarded(p->tcp_flags))))
			f->state |= dir ? FLOW_DATA1 : FLOW_DATA0;
		if (p->proto == PROTO_TCP)
			tcp_update(ft, f, p, dir);
	}

	uint8_t cls = flow_class(f);
	if (ft->lru[cls].head != ref || f->lru_class != cls) {
		/* (already the head of its list: nothing moves) */
		lru_unlink(ft, f);
		lru_push_head(ft, f, ref, cls);
	}
	p->flow = f;
	p->dir = dir;
	return f;
}

void flow_table_prefetch(struct flow_table *ft, const struct tuple_hint *t)
{
	if (!ft)
		return;
	if (ft->ahead_ok) {
		const struct slot *sl = &ft->slots[ft->ahead_h & ft->mask];
		if (sl->ref && sl->hash == ft->ahead_h)
			__builtin_prefetch(flow_at(ft, sl->ref));
	}
	ft->ahead_ok = t != NULL;
	if (t) {
		ft->ahead_h = tuple_hash(ft, t->ipv, t->proto, t->src, t->sport, t->dst, t->dport);
		__builtin_prefetch(&ft->slots[ft->ahead_h & ft->mask]);
	}
}

int flow_seq_sent(const struct flow *f, int dir, uint32_t seq)
{
	const struct flow_stream *st = f->proto == PROTO_TCP && f->st ? &f->st[dir & 1] : NULL;

	if (!st || !st->isn_set)
		return 1;
	/* stream_isn1(st) is ISN + 1: the SYN, then the bytes sent (all
	 * the payload counted, retransmissions too: never too few) */
	return (uint32_t)(seq - (stream_isn1(st) - 1)) <= 1 + (uint32_t)f->bytes[dir & 1];
}

struct flow *flow_table_find(struct flow_table *ft, uint8_t ipv, uint8_t proto,
			     const uint8_t *src, uint16_t sport, const uint8_t *dst,
			     uint16_t dport, int *dir)
{
	struct flow_key k;
	int d = 0;
	uint32_t ref;

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
	struct flow *f = lookup(ft, &k, key_hash(ft, &k), &d, &ref);
	if (f && dir)
		*dir = d;
	return f;
}

void flow_stream_done(struct flow_table *ft, struct flow *f, int dir)
{
	if (!ft || !f || !f->st || dir < 0 || dir > 1)
		return;
	stream_release(ft, &f->st[dir]);
	f->st[dir].done = 1;
}

void flow_note_claim(struct flow *f)
{
	if (!f || !f->st)
		return;
	f->st[0].claimed = f->st[1].claimed = f->app != APP_NONE;
}

void flow_release_unread(struct flow_table *ft, struct flow *f)
{
	if (!ft || !f || !f->st || f->app != APP_NONE)
		return;
	for (int d = 0; d < 2; d++) {
		struct flow_stream *st = &f->st[d];
		if (st->buf && !st->done && (st->overflow || st->len >= ft->cfg.stream_max) &&
		    st->consumed == 0 && st->slid == 0) {
			stream_release(ft, st);
			st->done = 1;
			ft->stats.stream_released++;
		}
	}
}

const struct flow_stats *flow_table_stats(const struct flow_table *ft)
{
	return ft ? &ft->stats : NULL;
}
