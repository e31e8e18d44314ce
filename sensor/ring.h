/*
 * ring.h - the single-producer single-consumer byte ring under two of the
 * sensor's thread hand-offs: the store's queue (sensor/store.c: the packet
 * thread to the SQLite writer) and the replay's reader (sensor/reader.c: the
 * reader thread to the packet thread). This is the mechanism; what the
 * records hold, when each side publishes and when it wakes the other are
 * its user's.
 *
 * Records: the ring is a power of two long, and its records are 8-byte
 * aligned and never wrap. Each begins with struct ring_hdr: its length in
 * bytes (the header included, a multiple of 8) and four bytes of the user's
 * own (its op or kind), never all zero. When a record does not fit in what
 * is left of the ring's end, ring_reserve() fills the end with a pad, a
 * record whose four bytes are zero and which may be as short as the 8-byte
 * header, and puts the record at the ring's start; ring_take() steps over
 * pads, and ring_release() gives a pad back with the record after it. A
 * record is at most half the ring, so that it always fits in an empty one.
 *
 * Indices: head and tail count bytes since the start (uint64_t, never
 * wrapping), each on a cache line of its own; only the producer writes
 * head, only the consumer tail. Each side keeps its own position and a
 * cached copy of the other's index, and touches the shared ones only when
 * it publishes or when its cached copy says the ring is full (the producer)
 * or empty (the consumer). The producer commits each record it wrote
 * (ring_commit) and publishes them, a batch at a time, with a store of head
 * (ring_publish); the consumer takes records (ring_take), releases them in
 * the order it took them (ring_release) and hands their space back, a batch
 * at a time, with a store of tail (ring_hand_back). How big a batch is is
 * the user's policy.
 *
 * Ordering: a store of head or tail is a release (what the producer wrote
 * into the records, or the consumer read out of them, comes before it), and
 * a side that reloads the other's index does so with an acquire before it
 * reads the records (the consumer) or overwrites their bytes (the
 * producer).
 *
 * Sleeping: a side that finds the ring full (the producer, ring_wait_room)
 * or empty (the consumer, ring_wait_data) first publishes what it has, then
 * sets its waiting flag and looks at the other side's index again under the
 * lock, and sleeps on a condition variable. The other side, after each
 * publish, looks at that flag and wakes it under the lock (ring_hand_back
 * does so itself; the producer calls ring_wake_consumer, and may leave a
 * consumer that sleeps with a timeout asleep until enough is pending).
 * The flag store and the index load on one side, and the index store and
 * the flag load on the other, are sequentially consistent (the default of
 * atomic_store and atomic_load), so one of the two always sees the other's
 * store and no wake-up is lost. A full producer sleeps until a quarter of
 * the ring is free (or what its record needs, if more), so it wakes about
 * once per quarter ring rather than once per record. The waiting flags,
 * written only on sleeping, share a cache line of their own that both
 * sides read at each publish.
 *
 * Stopping: ring_stop() makes a producer asleep in ring_wait_room(), or
 * about to be, return -1.
 */
#ifndef EW_RING_H
#define EW_RING_H

#include <assert.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The first 8 bytes of every record. A user's record type starts with the
 * same two fields (its len, and its op or kind among the tag's bytes). */
struct ring_hdr {
	uint32_t len; /* bytes of the record, this header included, a multiple of 8 */
	uint32_t tag; /* the user's, never 0; 0: a pad */
};

struct ring {
	unsigned char *buf;
	size_t cap; /* a power of two */
	pthread_mutex_t lock; /* guards the sleeps on not_empty and not_full */
	pthread_cond_t not_empty, not_full;
	int locks_ready;

	/* the producer's own */
	alignas(64) uint64_t p_head; /* where the next record goes */
	uint64_t p_pub;              /* what it last stored in head */
	uint64_t p_tail;             /* its copy of tail */

	/* the consumer's own */
	alignas(64) uint64_t c_read; /* the next record to take */
	uint64_t c_head;             /* its copy of head */
	uint64_t c_rel;              /* the end of what was released */
	uint64_t c_pub;              /* what it last stored in tail */

	alignas(64) _Atomic uint64_t head; /* written by the producer */
	alignas(64) _Atomic uint64_t tail; /* written by the consumer */
	/* written rarely (on sleeping, on stopping), read at each publish */
	alignas(64) _Atomic size_t prod_waiting; /* free bytes the producer waits for, 0: none */
	_Atomic int cons_waiting;
	_Atomic int stop;
	/* (the struct's size is a multiple of its alignment: what follows a
	 * struct ring starts on a cache line of its own) */
};

/* Set up r (all of it; its old contents are ignored) with a buffer of
 * min_bytes rounded up to a power of two (r->cap, set even on failure).
 * 0; -1 when the buffer cannot be allocated, -2 when the locks cannot be
 * set up; nothing is left to undo on failure. */
int ring_init(struct ring *r, size_t min_bytes);

/* Free what ring_init() set up. Fine on a ring whose ring_init() failed,
 * and on one that is all zero. */
void ring_destroy(struct ring *r);

/* ---- the producer ------------------------------------------------------ */

/* Does a record of need bytes fit without waiting (a pad included when the
 * ring's end is too short)? Reloads tail only when the cached copy says
 * no. */
static inline int ring_fits(struct ring *r, size_t need)
{
	size_t contig = r->cap - (size_t)(r->p_head & (r->cap - 1));
	size_t want = need <= contig ? need : contig + need;

	if (r->cap - (size_t)(r->p_head - r->p_tail) >= want)
		return 1;
	r->p_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	return r->cap - (size_t)(r->p_head - r->p_tail) >= want;
}

/* Contiguous room for a record of need bytes (a multiple of 8, at least 8,
 * at most cap / 2), padding the ring's end when it is too short; NULL when
 * the ring is too full (see ring_wait_room). The caller writes the record,
 * its ring_hdr fields included, and commits it. */
static inline void *ring_reserve(struct ring *r, size_t need)
{
	size_t pos = (size_t)(r->p_head & (r->cap - 1));
	size_t contig = r->cap - pos;

	assert(need >= sizeof(struct ring_hdr) && need % 8 == 0 && need <= r->cap / 2);
	if (!ring_fits(r, need))
		return NULL;
	if (need > contig) {
		const struct ring_hdr pad = {(uint32_t)contig, 0};
		memcpy(r->buf + pos, &pad, sizeof(pad));
		r->p_head += contig;
		pos = 0;
	}
	return r->buf + pos;
}

/* Append the record ring_reserve() returned last, with its len written. It
 * reaches the consumer at the next ring_publish(). */
static inline void ring_commit(struct ring *r, const void *rec)
{
	uint32_t len;

	memcpy(&len, rec, sizeof(len));
	assert((const unsigned char *)rec == r->buf + (size_t)(r->p_head & (r->cap - 1)));
	assert(len >= sizeof(struct ring_hdr) && len % 8 == 0);
	r->p_head += len;
}

/* Bytes committed and not yet published. */
static inline size_t ring_unpublished(const struct ring *r)
{
	return (size_t)(r->p_head - r->p_pub);
}

/* Bytes the consumer has not handed back yet, as far as the producer can
 * see. */
static inline size_t ring_used(const struct ring *r)
{
	return (size_t)(r->p_head - atomic_load(&r->tail));
}

/* Make every committed record visible to the consumer (a store of head).
 * 1 when there was something to publish, 0 when not. Wakes nobody: see
 * ring_wake_consumer(). */
int ring_publish(struct ring *r);

/* After ring_publish(): wake the consumer if it sleeps in ring_wait_data()
 * and at least min_pending bytes wait for it (0: whatever there is). A
 * consumer woken only for more than 0 bytes must sleep with a timeout
 * short enough to come back for what is fewer. */
void ring_wake_consumer(struct ring *r, size_t min_pending);

/* The ring had no room for a record of need bytes: publish what is
 * committed (waking a sleeping consumer), and sleep until a quarter of the
 * ring is free, or the room the record needs if more, or the ring is
 * stopped. With poll_ms > 0 it also looks every poll_ms, woken or not. 0
 * (ask ring_reserve() again), or -1 when stopped. */
int ring_wait_room(struct ring *r, size_t need, unsigned poll_ms);

/* Make ring_wait_room() return -1 from now on, and wake a producer asleep
 * in it. Called by any thread. */
void ring_stop(struct ring *r);

static inline int ring_stopping(struct ring *r)
{
	return atomic_load_explicit(&r->stop, memory_order_relaxed);
}

/* ---- the consumer ------------------------------------------------------ */

/* The next record, in place, stepping over pads; NULL when there is none,
 * as far as the last load of head shows (then it loads head again). The
 * record stays put until it is released and handed back. */
static inline const void *ring_take(struct ring *r)
{
	for (;;) {
		if (r->c_read == r->c_head) {
			r->c_head = atomic_load_explicit(&r->head, memory_order_acquire);
			if (r->c_read == r->c_head)
				return NULL;
		}
		const unsigned char *rec = r->buf + (size_t)(r->c_read & (r->cap - 1));
		struct ring_hdr h;
		memcpy(&h, rec, sizeof(h));
		assert(h.len >= sizeof(h) && h.len % 8 == 0);
		r->c_read += h.len;
		if (h.tag != 0)
			return rec;
	}
}

/* Has the consumer taken every record of the head it last loaded? */
static inline int ring_caught_up(const struct ring *r)
{
	return r->c_read == r->c_head;
}

/* Start fetching the next record (its header and first bytes, written by
 * the other core) while the one taken is used. */
static inline void ring_prefetch_next(const struct ring *r)
{
	__builtin_prefetch(r->buf + (size_t)(r->c_read & (r->cap - 1)));
	__builtin_prefetch(r->buf + (size_t)((r->c_read + 64) & (r->cap - 1)));
}

/* Done with a record ring_take() returned; records are released in the
 * order they were taken. Its space goes back to the producer at the next
 * ring_hand_back(). */
static inline void ring_release(struct ring *r, const void *rec)
{
	size_t pos = (size_t)((const unsigned char *)rec - r->buf);
	uint32_t len;

	memcpy(&len, rec, sizeof(len));
	/* The record after a pad is at the ring's start; the pad goes with it. */
	if ((size_t)(r->c_rel & (r->cap - 1)) != pos)
		r->c_rel += r->cap - (size_t)(r->c_rel & (r->cap - 1));
	assert((size_t)(r->c_rel & (r->cap - 1)) == pos && r->c_rel + len <= r->c_read);
	r->c_rel += len;
}

/* Bytes released and not yet handed back. */
static inline size_t ring_unreturned(const struct ring *r)
{
	return (size_t)(r->c_rel - r->c_pub);
}

/* Hand every released byte back to the producer (a store of tail), and
 * wake it when it sleeps for as much room as there now is. */
void ring_hand_back(struct ring *r);

/* The ring looked empty: hand back what was released, and sleep until the
 * producer publishes or timeout_ms go by. 1 when there is a record to take,
 * 0 when the time ran out first. */
int ring_wait_data(struct ring *r, unsigned timeout_ms);

#endif
