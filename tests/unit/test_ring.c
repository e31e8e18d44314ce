/*
 * test_ring.c - sensor/ring.c, the byte ring under the store's queue and the
 * replay's reader, driven directly.
 *
 * Cases: a record of every length reserved at every 8-byte position of a
 * small ring (a pad of exactly the end's length when it does not fit there,
 * nothing padded when it does, and a record exactly filling the end leaves
 * the next one at the start with no pad); indices far past 2^32; a full ring
 * (nothing reserved, nothing written, until space is handed back, and a
 * record that fits only without its pad refused); two threads passing about
 * a million records of varied sizes, the consumer holding one while taking
 * the next, compared byte for byte and by checksum; and the sleeps: a
 * consumer asleep on an empty ring woken by a publish (and not by fewer
 * bytes than it is to be woken for), a producer asleep on a full ring woken
 * once a quarter of it is free (and not before; for a record of more than
 * a quarter, once its room is there), having published what it held, and
 * ring_stop() ending a producer's sleep. A lost wake-up fails a check (a
 * sleeper back only at its timeout, or stopped to be joined) rather than
 * hanging. Run under ASan and TSan (./dev test).
 */
#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "sensor/ring.h"

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Put both sides of an empty ring at byte pos (since the start). */
static void ring_place(struct ring *r, uint64_t pos)
{
	r->p_head = r->p_pub = r->p_tail = pos;
	r->c_read = r->c_head = r->c_rel = r->c_pub = pos;
	atomic_store(&r->head, pos);
	atomic_store(&r->tail, pos);
}

static struct ring_hdr hdr_at(const struct ring *r, size_t off)
{
	struct ring_hdr h;
	memcpy(&h, r->buf + off, sizeof(h));
	return h;
}

/* Record bytes after the header: a function of its tag and offset. */
static uint8_t fill_byte(uint32_t tag, size_t i)
{
	return (uint8_t)(tag * 131u + i * 7u + (i >> 8));
}

static void write_rec(void *at, uint32_t len, uint32_t tag)
{
	struct ring_hdr h = {len, tag};
	unsigned char *p = at;
	memcpy(p, &h, sizeof(h));
	for (size_t i = sizeof(h); i < len; i++)
		p[i] = fill_byte(tag, i);
}

static int rec_ok(const void *at, uint32_t len, uint32_t tag)
{
	struct ring_hdr h;
	const unsigned char *p = at;
	memcpy(&h, p, sizeof(h));
	if (h.len != len || h.tag != tag)
		return 0;
	for (size_t i = sizeof(h); i < len; i++)
		if (p[i] != fill_byte(tag, i))
			return 0;
	return 1;
}

/* ---- one thread -------------------------------------------------------- */

static void test_init(void)
{
	struct ring r, z;

	CHECK_EQ(ring_init(&r, 1000), 0);
	CHECK_EQ(r.cap, 1024);
	CHECK(r.buf != NULL);
	ring_destroy(&r);
	CHECK_EQ(ring_init(&r, 4096), 0);
	CHECK_EQ(r.cap, 4096);
	CHECK_EQ(atomic_load(&r.head), 0);
	CHECK_EQ(ring_used(&r), 0);
	ring_destroy(&r);
	ring_destroy(&r); /* twice is fine */
	memset(&z, 0, sizeof(z));
	ring_destroy(&z); /* so is a ring never set up */
}

/* One record of need bytes put at byte `at` of an empty ring, taken and
 * handed back: NULL, or what went wrong. Counts pads and exact fits. */
static const char *one_record(struct ring *r, uint64_t at, size_t need, uint32_t tag,
			      unsigned *pads, unsigned *exact)
{
	size_t pos = (size_t)(at & (r->cap - 1));
	size_t contig = r->cap - pos;
	size_t used = (need > contig ? contig : 0) + need;
	unsigned char *rec;
	const void *got;

	ring_place(r, at);
	rec = ring_reserve(r, need);
	if (!rec)
		return "no room in an empty ring";
	if (need > contig) {
		struct ring_hdr pad = hdr_at(r, pos);
		(*pads)++;
		if (rec != r->buf)
			return "not at the start after a pad";
		if (pad.len != contig || pad.tag != 0)
			return "the pad's header";
	} else {
		*exact += need == contig;
		if (rec != r->buf + pos)
			return "not where the ring was";
	}
	write_rec(rec, (uint32_t)need, tag);
	ring_commit(r, rec);
	if (r->p_head != at + used || ring_unpublished(r) != used)
		return "the producer's head";
	if (ring_publish(r) != 1 || ring_publish(r) != 0 || atomic_load(&r->head) != at + used)
		return "published";
	if (ring_used(r) != used)
		return "used";
	got = ring_take(r);
	if (got != rec)
		return "taken";
	if (!ring_caught_up(r) || ring_take(r) != NULL)
		return "more than one record";
	if (!rec_ok(got, (uint32_t)need, tag))
		return "the record's bytes";
	ring_release(r, got);
	if (ring_unreturned(r) != used)
		return "released";
	ring_hand_back(r);
	if (atomic_load(&r->tail) != at + used || ring_used(r) != 0 || ring_unreturned(r) != 0)
		return "handed back";
	return NULL;
}

/* Every record length (8 .. cap/2) at every 8-byte position of a 256-byte
 * ring, at indices just below and far above 2^32: where it goes, the pad
 * before it, what the consumer gets, and what goes back to the producer. */
static void test_every_position(void)
{
	const uint64_t bases[] = {0, (1ull << 32) - 256, 7ull << 40};
	struct ring r;
	unsigned bad = 0, pads = 0, exact = 0;
	uint32_t tag = 1;

	CHECK_EQ(ring_init(&r, 256), 0);
	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		for (size_t pos = 0; pos < r.cap; pos += 8) {
			for (size_t need = 8; need <= r.cap / 2; need += 8, tag++) {
				const char *what = one_record(&r, bases[b] + pos, need, tag,
							      &pads, &exact);
				if (what && bad++ < 5)
					fprintf(stderr, "at %zu of 256 (+%llu), %zu bytes: %s\n",
						pos, (unsigned long long)bases[b], need, what);
			}
		}
	}
	CHECK_EQ(bad, 0);
	/* per base: at the 15 positions with 8..120 bytes left, the end is
	 * too short for 15, 14, .., 1 of the 16 lengths; 128 bytes or less
	 * left match one length exactly */
	CHECK_EQ(pads, 3 * (15 * 16 / 2));
	CHECK_EQ(exact, 3 * 16);
	ring_destroy(&r);
}

/* A record exactly filling the ring's end: no pad, and the next record at
 * the ring's start, without a pad either; the consumer takes both in order
 * and the ring wraps with no byte lost. */
static void test_exact_end(void)
{
	struct ring r;
	unsigned char *a, *b, *c;

	CHECK_EQ(ring_init(&r, 256), 0);
	ring_place(&r, 1000 * 256 + 160);
	a = ring_reserve(&r, 96); /* 160 + 96 = 256 */
	CHECK(a == r.buf + 160);
	write_rec(a, 96, 11);
	ring_commit(&r, a);
	b = ring_reserve(&r, 40);
	CHECK(b == r.buf); /* no pad before it */
	write_rec(b, 40, 12);
	ring_commit(&r, b);
	CHECK_EQ(ring_unpublished(&r), 136);
	ring_publish(&r);
	CHECK(ring_take(&r) == a);
	CHECK(ring_take(&r) == b);
	CHECK(ring_take(&r) == NULL);
	CHECK(rec_ok(a, 96, 11) && rec_ok(b, 40, 12));
	ring_release(&r, a);
	ring_release(&r, b);
	CHECK_EQ(ring_unreturned(&r), 136);
	ring_hand_back(&r);
	CHECK_EQ(atomic_load(&r.tail), 1000 * 256 + 160 + 136);
	/* held records and a pad: a taken, b (after a pad) taken, a released
	 * alone, then b, the pad going back with b */
	ring_place(&r, 5 * 256 + 200);
	a = ring_reserve(&r, 48); /* 200 + 48 = 248: 8 bytes left */
	write_rec(a, 48, 13);
	ring_commit(&r, a);
	b = ring_reserve(&r, 16);
	CHECK(b == r.buf);
	CHECK_EQ(hdr_at(&r, 248).len, 8); /* the shortest pad */
	CHECK_EQ(hdr_at(&r, 248).tag, 0);
	write_rec(b, 16, 14);
	ring_commit(&r, b);
	c = ring_reserve(&r, 8);
	CHECK(c == r.buf + 16);
	write_rec(c, 8, 15);
	ring_commit(&r, c);
	ring_publish(&r);
	CHECK(ring_take(&r) == a);
	CHECK(ring_take(&r) == b);
	ring_release(&r, a);
	CHECK_EQ(ring_unreturned(&r), 48);
	ring_release(&r, b);
	CHECK_EQ(ring_unreturned(&r), 48 + 8 + 16);
	CHECK(ring_take(&r) == c);
	CHECK(rec_ok(c, 8, 15));
	ring_release(&r, c);
	ring_hand_back(&r);
	CHECK_EQ(atomic_load(&r.tail), 5 * 256 + 200 + 48 + 8 + 16 + 8);
	CHECK_EQ(ring_used(&r), 0);
	ring_destroy(&r);
}

/* A full ring: nothing is reserved or written until the consumer hands
 * space back (released alone is not enough), and a record that would fit
 * only without the pad the end needs is refused too. */
static void test_full(void)
{
	struct ring r;
	unsigned char *rec[8], *x;
	unsigned char copy[256];

	CHECK_EQ(ring_init(&r, 256), 0);
	ring_place(&r, 3 * 256);
	for (int i = 0; i < 8; i++) {
		rec[i] = ring_reserve(&r, 32);
		CHECK(rec[i] == r.buf + 32 * i);
		write_rec(rec[i], 32, (uint32_t)(20 + i));
		ring_commit(&r, rec[i]);
	}
	CHECK_EQ(ring_used(&r), 256);
	CHECK(!ring_fits(&r, 8));
	memcpy(copy, r.buf, sizeof(copy));
	CHECK(ring_reserve(&r, 8) == NULL);
	CHECK(memcmp(copy, r.buf, sizeof(copy)) == 0); /* not a byte written */
	CHECK_EQ(r.p_head, 4 * 256);
	ring_publish(&r);
	CHECK(ring_take(&r) == rec[0]);
	ring_release(&r, rec[0]);
	CHECK(ring_reserve(&r, 8) == NULL); /* released, not handed back */
	ring_hand_back(&r);
	CHECK(ring_fits(&r, 32));
	CHECK(!ring_fits(&r, 40));
	x = ring_reserve(&r, 32);
	CHECK(x == r.buf);
	write_rec(x, 32, 28);
	ring_commit(&r, x);
	CHECK(ring_reserve(&r, 8) == NULL);
	ring_publish(&r);
	for (int i = 1; i < 8; i++) {
		const void *got = ring_take(&r);
		CHECK(got == rec[i] && rec_ok(got, 32, (uint32_t)(20 + i)));
		ring_release(&r, got);
	}
	CHECK(ring_take(&r) == x);
	ring_release(&r, x);
	ring_hand_back(&r);
	CHECK_EQ(ring_used(&r), 0);

	/* 56 bytes left at the end, 100 free in all: 64 bytes would fit in
	 * the free space but not after the 56-byte pad they need */
	ring_place(&r, 9 * 256 + 200);
	r.p_tail = r.c_pub = r.c_rel = r.c_read = 9 * 256 + 200 - 156;
	atomic_store(&r.tail, r.p_tail);
	CHECK(ring_fits(&r, 56));
	CHECK(!ring_fits(&r, 64));
	CHECK(ring_reserve(&r, 64) == NULL);
	CHECK_EQ(r.p_head, 9 * 256 + 200);
	r.p_tail = r.c_pub = r.c_rel = r.c_read = 9 * 256 + 200 - 136; /* 120 free */
	atomic_store(&r.tail, r.p_tail);
	x = ring_reserve(&r, 64);
	CHECK(x == r.buf);
	CHECK_EQ(hdr_at(&r, 200).len, 56);
	CHECK_EQ(r.p_head, 10 * 256);
	ring_destroy(&r);
}

/* ---- two threads ------------------------------------------------------- */

#define TR_RING 65536u
#define TR_RECORDS 1000000u

struct traffic {
	struct ring r;
	unsigned n;
	uint64_t sum_sent, sum_got;
	unsigned bad, got;
	uint64_t room_waits, data_waits;
};

static uint32_t xs32(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* Record k's length: mostly small, some up to 4 KiB, a few up to a quarter
 * of the ring (so the producer's room is there even while the consumer
 * holds one record), so the end is padded at many different lengths. */
static uint32_t tr_len(uint32_t *x)
{
	uint32_t v = xs32(x);
	uint32_t n;

	if (v % 1000 == 0)
		n = 8 + v / 1000 % (TR_RING / 4 - 8);
	else if (v % 10 == 0)
		n = 8 + v / 10 % 4096;
	else
		n = 8 + v / 10 % 200;
	return (n + 7) & ~7u;
}

static uint64_t sum_rec(uint64_t sum, const unsigned char *p, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		sum = (sum ^ p[i]) * 1099511628211ull;
	return sum;
}

static void *tr_producer(void *arg)
{
	struct traffic *t = arg;
	uint32_t x = 2463534242u;
	uint64_t sum = 14695981039346656037ull;

	for (unsigned k = 0; k < t->n; k++) {
		uint32_t len = tr_len(&x);
		unsigned char *p;
		while (!(p = ring_reserve(&t->r, len))) {
			t->room_waits++;
			if (ring_wait_room(&t->r, len, 0) < 0)
				return NULL;
		}
		write_rec(p, len, k + 1);
		sum = sum_rec(sum, p, len);
		ring_commit(&t->r, p);
		/* publish in batches of about 4 KiB, and at once now and then */
		if (ring_unpublished(&t->r) >= 4096 || k % 61 == 0) {
			ring_publish(&t->r);
			ring_wake_consumer(&t->r, 0);
		}
	}
	if (ring_publish(&t->r))
		ring_wake_consumer(&t->r, 0);
	t->sum_sent = sum;
	return NULL;
}

static void *tr_consumer(void *arg)
{
	struct traffic *t = arg;
	uint32_t x = 2463534242u;
	uint64_t sum = 14695981039346656037ull;
	const void *held = NULL;

	for (unsigned k = 0; k < t->n; k++) {
		const unsigned char *p;
		uint32_t len = tr_len(&x);
		while (!(p = ring_take(&t->r))) {
			double t0 = now_s();
			t->data_waits++;
			if (!ring_wait_data(&t->r, 3000) || now_s() - t0 >= 2.9) {
				/* asleep until the timeout: a lost wake-up (the
				 * producer never stops for long); stop the producer,
				 * should it sleep too */
				t->bad++;
				ring_stop(&t->r);
				return NULL;
			}
		}
		if (!rec_ok(p, len, k + 1))
			t->bad++;
		sum = sum_rec(sum, p, len);
		t->got++;
		/* hold one record while taking the next, like the reader's
		 * consumer, and hand space back in batches of about 2 KiB */
		if (held)
			ring_release(&t->r, held);
		held = p;
		if (ring_unreturned(&t->r) >= 2048)
			ring_hand_back(&t->r);
	}
	if (held)
		ring_release(&t->r, held);
	ring_hand_back(&t->r);
	t->bad += ring_take(&t->r) != NULL;
	t->sum_got = sum;
	return NULL;
}

static void test_two_threads(void)
{
	struct traffic *t = aligned_alloc(alignof(struct traffic), sizeof(*t));
	pthread_t pt, ct;
	const char *env = getenv("EW_RING_RECORDS");

	memset(t, 0, sizeof(*t));
	t->n = env ? (unsigned)strtoul(env, NULL, 10) : TR_RECORDS;
	CHECK_EQ(ring_init(&t->r, TR_RING), 0);
	CHECK_EQ(pthread_create(&ct, NULL, tr_consumer, t), 0);
	CHECK_EQ(pthread_create(&pt, NULL, tr_producer, t), 0);
	pthread_join(pt, NULL);
	pthread_join(ct, NULL);
	CHECK_EQ(t->bad, 0);
	CHECK_EQ(t->got, t->n);
	CHECK(t->sum_sent == t->sum_got);
	CHECK(t->room_waits > 0); /* the ring did fill */
	CHECK_EQ(ring_used(&t->r), 0);
	printf("two threads: %u records, %llu waits for room, %llu for data\n", t->n,
	       (unsigned long long)t->room_waits, (unsigned long long)t->data_waits);
	ring_destroy(&t->r);
	free(t);
}

/* ---- sleeping ---------------------------------------------------------- */

struct sleeper {
	struct ring *r;
	size_t need;       /* the producer: the record it waits to put */
	unsigned timeout;  /* the consumer: ms */
	int rc;
	double slept;      /* seconds */
	_Atomic int done;
};

/* Wait (up to ms) for flag to become nonzero. */
static int await(_Atomic int *flag, unsigned ms)
{
	for (unsigned i = 0; i < ms && !atomic_load(flag); i++)
		sleep_ms(1);
	return atomic_load(flag);
}

static int await_size(_Atomic size_t *v, unsigned ms)
{
	for (unsigned i = 0; i < ms && !atomic_load(v); i++)
		sleep_ms(1);
	return atomic_load(v) != 0;
}

static void *wait_data_main(void *arg)
{
	struct sleeper *z = arg;
	double t0 = now_s();

	z->rc = ring_wait_data(z->r, z->timeout);
	z->slept = now_s() - t0;
	atomic_store(&z->done, 1);
	return NULL;
}

static void put(struct ring *r, uint32_t len, uint32_t tag)
{
	void *p = ring_reserve(r, len);
	write_rec(p, len, tag);
	ring_commit(r, p);
}

/* A consumer asleep on an empty ring: woken by a publish at once (not at
 * its timeout), and not by fewer bytes than the producer wakes it for; a
 * consumer nobody wakes comes back at its timeout with nothing. */
static void test_consumer_sleeps(void)
{
	struct ring r;
	struct sleeper z = {.r = &r, .timeout = 10000};
	pthread_t th;

	CHECK_EQ(ring_init(&r, 4096), 0);
	CHECK_EQ(pthread_create(&th, NULL, wait_data_main, &z), 0);
	CHECK(await(&r.cons_waiting, 5000));
	sleep_ms(50); /* well inside pthread_cond_timedwait by now */
	put(&r, 64, 1);
	CHECK_EQ(ring_publish(&r), 1);
	ring_wake_consumer(&r, 0);
	CHECK(await(&z.done, 10000));
	pthread_join(th, NULL);
	CHECK_EQ(z.rc, 1);
	CHECK(z.slept < 5.0); /* woken, not back at its timeout */
	CHECK(ring_take(&r) != NULL);

	/* woken for 1 KiB: 512 bytes are not enough, 1 KiB is */
	z.done = 0;
	CHECK_EQ(pthread_create(&th, NULL, wait_data_main, &z), 0);
	CHECK(await(&r.cons_waiting, 5000));
	sleep_ms(20);
	put(&r, 512, 2);
	ring_publish(&r);
	ring_wake_consumer(&r, 1024);
	sleep_ms(200);
	CHECK(!atomic_load(&z.done)); /* still asleep */
	put(&r, 512, 3);
	ring_publish(&r);
	ring_wake_consumer(&r, 1024);
	CHECK(await(&z.done, 10000));
	pthread_join(th, NULL);
	CHECK_EQ(z.rc, 1);
	CHECK(z.slept < 5.0);

	/* nobody publishes: back at the timeout with nothing */
	while (ring_take(&r))
		;
	z.done = 0;
	z.timeout = 100;
	CHECK_EQ(pthread_create(&th, NULL, wait_data_main, &z), 0);
	pthread_join(th, NULL);
	CHECK_EQ(z.rc, 0);
	CHECK(z.slept >= 0.09);
	CHECK_EQ(atomic_load(&r.cons_waiting), 0);
	ring_destroy(&r);
}

static void *wait_room_main(void *arg)
{
	struct sleeper *z = arg;
	void *p;

	z->rc = 0;
	while (!(p = ring_reserve(z->r, z->need)))
		if ((z->rc = ring_wait_room(z->r, z->need, 0)) < 0)
			break;
	if (p) {
		write_rec(p, (uint32_t)z->need, 99);
		ring_commit(z->r, p);
		ring_publish(z->r);
	}
	atomic_store(&z->done, 1);
	return NULL;
}

/* Take, release and hand back n records. */
static void hand_back_n(struct ring *r, int n)
{
	for (int i = 0; i < n; i++) {
		const void *got = ring_take(r);
		CHECK(got != NULL);
		if (got)
			ring_release(r, got);
	}
	ring_hand_back(r);
}

/* A ring of 1024 bytes full of 16 records of 64, none published, and a
 * producer thread asleep waiting to put z->need bytes more. */
static void start_full(struct ring *r, struct sleeper *z, pthread_t *th)
{
	CHECK_EQ(ring_init(r, 1024), 0);
	for (uint32_t i = 0; i < 16; i++)
		put(r, 64, i + 1);
	CHECK_EQ(atomic_load(&r->head), 0);
	z->r = r;
	z->done = 0;
	CHECK_EQ(pthread_create(th, NULL, wait_room_main, z), 0);
	CHECK(await_size(&r->prod_waiting, 5000));
	CHECK_EQ(atomic_load(&r->head), 1024); /* published before sleeping */
}

/* The producer of start_full() wakes within seconds; else it is stopped
 * (to join it) and the check fails. */
static void join_woken(struct ring *r, struct sleeper *z, pthread_t th)
{
	if (!await(&z->done, 10000)) {
		CHECK(!"the producer was woken");
		ring_stop(r);
	}
	pthread_join(th, NULL);
	CHECK_EQ(z->rc, 0);
	CHECK_EQ(atomic_load(&r->prod_waiting), 0);
	while (ring_take(r))
		;
	CHECK_EQ(r->c_read, 1024 + z->need); /* its record came after the rest */
	ring_destroy(r);
}

/* A producer asleep on a full ring: it publishes what it committed before
 * it sleeps, is not woken until a quarter of the ring is free (the consumer
 * hands back less first), or the room its record needs when that is more,
 * then is; and ring_stop() ends its sleep. */
static void test_producer_sleeps(void)
{
	struct ring r;
	struct sleeper z = {.need = 64};
	pthread_t th;

	start_full(&r, &z, &th);
	CHECK_EQ(atomic_load(&r.prod_waiting), 256); /* a quarter of the ring */
	hand_back_n(&r, 3); /* 192 bytes free: not enough to wake it */
	sleep_ms(200);
	CHECK(!atomic_load(&z.done));
	hand_back_n(&r, 1); /* 256 */
	join_woken(&r, &z, th);

	/* a record of more than a quarter: it sleeps on at a quarter */
	z.need = 384;
	start_full(&r, &z, &th);
	CHECK_EQ(atomic_load(&r.prod_waiting), 384);
	hand_back_n(&r, 4); /* 256 */
	sleep_ms(200);
	CHECK(!atomic_load(&z.done));
	CHECK_EQ(atomic_load(&r.prod_waiting), 384); /* asleep, not spinning */
	hand_back_n(&r, 2); /* 384 */
	join_woken(&r, &z, th);

	/* stopped while asleep: -1, nothing written */
	z.need = 64;
	start_full(&r, &z, &th);
	sleep_ms(20);
	ring_stop(&r);
	if (!await(&z.done, 10000)) {
		CHECK(!"ring_stop woke the producer"); /* wake it by hand, to join it */
		pthread_mutex_lock(&r.lock);
		pthread_cond_broadcast(&r.not_full);
		pthread_mutex_unlock(&r.lock);
	}
	pthread_join(th, NULL);
	CHECK_EQ(z.rc, -1);
	CHECK(ring_stopping(&r));
	CHECK_EQ(ring_wait_room(&r, 64, 0), -1); /* and at once from now on */
	CHECK_EQ(r.p_head, 1024);
	ring_destroy(&r);
}

int main(void)
{
	test_init();
	test_every_position();
	test_exact_end();
	test_full();
	test_two_threads();
	test_consumer_sleeps();
	test_producer_sleeps();
	return check_done();
}
