/*
 * reader.c - the replay's reader thread of reader.h.
 *
 * One thread reads the capture files with capture.h (libpcap's pcap_next_ex:
 * freads from the stdio buffer, the read(2) and its kernel copy under them)
 * and copies each frame, behind a 32-byte header, into a byte ring; the
 * packet thread decodes the frames where they lie and so never waits on the
 * file, and its read-ahead (the next record taken before this frame is
 * processed) needs no copy of its own.
 *
 * The ring is the store's (sensor/store.c) in the other direction:
 * single-producer single-consumer, a power of two long, records 8-byte
 * aligned that never wrap (a pad record fills the end when the next record
 * does not fit there; it may be as short as 8 bytes, so only len and kind
 * are read from one), head and tail counted in bytes since the start
 * (uint64_t, never wrapping). Each side keeps its own position and a cached
 * copy of the other's, and touches the shared head and tail, each on its own
 * cache line, only once per PUBLISH_BYTES (a store: release, and see
 * Sleeping) or when its cached copy says the ring is full or empty (a load,
 * acquire). The packet thread releases records in the order it took them,
 * and hands their space back PUBLISH_BYTES at a time too. The reader
 * also publishes at the end of each file, before it sleeps, and after every
 * record of a source of unknown size (a pipe: its next read may block, and
 * what was read must not wait behind it).
 *
 * Sleeping: a side that finds the ring full (the reader) or empty (the
 * packet thread) first publishes what it has, then sets its waiting flag and
 * looks at the other side's index again under the lock, and sleeps on a
 * condition variable. The other side, after each publish, looks at that flag
 * and wakes it under the lock. The flag store and the index load on one side,
 * and the index store and the flag load on the other, are sequentially
 * consistent (the default of atomic_store/atomic_load), so one of the two
 * always sees the other's store and no wake-up is lost. A full reader sleeps
 * until a quarter of the ring is free, so it wakes about once per quarter
 * ring rather than once per frame.
 *
 * Room: a record is at most REC_MAX bytes, and the packet thread holds at
 * most two unreleased (the frame it processes and the record after it), with
 * at most one pad among them; a ring of at least 4 * REC_MAX always has the
 * room the reader waits for, whatever the packet thread holds.
 *
 * Stopping: reader_close() sets `stop`, which the reader looks at before
 * each frame and while it sleeps, and joins the thread; the files it had
 * open are closed there. SIGINT, SIGTERM and SIGHUP are blocked on the
 * reader thread, so the command line's handlers run on the packet thread.
 */
#include "reader.h"

#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture.h"
#include "sync.h"

#define REC_MAX ((sizeof(struct reader_rec) + READER_MAX_FRAME + 7) & ~(size_t)7)
#define MIN_RING (4 * REC_MAX)
#define PUBLISH_BYTES 65536u /* each side hands over this much at a time */
#define MSG_MAX 1024u        /* a control record's message, NUL included */

_Static_assert(sizeof(struct reader_rec) == 32, "the record header is 32 bytes");
_Static_assert(sizeof(struct reader_rec) % 8 == 0, "records stay 8-byte aligned");

struct reader {
	struct reader_config cfg;
	unsigned char *ring;
	size_t cap; /* a power of two */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	int started, sync_ready;

	/* the reader thread's own */
	alignas(64) uint64_t p_head; /* where the next record goes */
	uint64_t p_pub;              /* what it last stored in head */
	uint64_t p_tail;             /* its copy of tail */
	struct capture *cur;         /* the file being read, for progress */
	int eager;                   /* publish every record (size unknown) */

	/* the packet thread's own */
	alignas(64) uint64_t c_read; /* the next record to return */
	uint64_t c_head;             /* its copy of head */
	uint64_t c_rel;              /* the end of what was released */
	uint64_t c_pub;              /* what it last stored in tail */

	alignas(64) _Atomic uint64_t head; /* written by the reader */
	alignas(64) _Atomic uint64_t tail; /* written by the packet thread */
	/* written rarely (on sleeping, on stopping), read at each publish */
	alignas(64) _Atomic size_t prod_waiting; /* free bytes the reader waits for, 0: none */
	_Atomic int cons_waiting;
	_Atomic int stop;
	/* progress, written by the reader at each publish */
	alignas(64) _Atomic unsigned prog_file;
	_Atomic uint64_t prog_done;
	alignas(64) char end_; /* nothing after the shared lines shares them */
};

/* r->lock guards the sleeps on these */
#define READER_CONDS(r) ((pthread_cond_t *const[]){&(r)->not_empty, &(r)->not_full})

static int stopping(struct reader *r)
{
	return atomic_load_explicit(&r->stop, memory_order_relaxed);
}

/* ---- the reader thread (producer) -------------------------------------- */

/* Make every record written so far visible to the packet thread. */
static void prod_publish(struct reader *r)
{
	if (r->cur && !r->eager) {
		uint64_t done, total;
		capture_progress(r->cur, &done, &total);
		atomic_store_explicit(&r->prog_done, done, memory_order_release);
	}
	if (r->p_pub == r->p_head)
		return;
	r->p_pub = r->p_head;
	atomic_store(&r->head, r->p_head); /* release, and seq_cst: see Sleeping */
	if (atomic_load(&r->cons_waiting))
		sync_wake(&r->lock, &r->not_empty);
}

/* Free ring bytes as far as the reader knows. */
static size_t prod_free(const struct reader *r)
{
	return r->cap - (size_t)(r->p_head - r->p_tail);
}

/* Room for a record of need bytes (a multiple of 8, at most REC_MAX),
 * contiguous, padding the ring's end when it is too short; waits while the
 * ring is full. NULL when asked to stop. */
static struct reader_rec *prod_reserve(struct reader *r, size_t need)
{
	for (;;) {
		size_t pos = (size_t)(r->p_head & (r->cap - 1));
		size_t contig = r->cap - pos;
		size_t want = need <= contig ? need : contig + need;

		if (prod_free(r) < want)
			r->p_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (prod_free(r) >= want) {
			if (need > contig) {
				struct reader_rec *pad = (struct reader_rec *)(r->ring + pos);
				pad->len = (uint32_t)contig;
				pad->kind = RD_PAD;
				r->p_head += contig;
				pos = 0;
			}
			return (struct reader_rec *)(r->ring + pos);
		}
		/* Full: sleep until a quarter of the ring is free. */
		size_t low = r->cap / 4 > want ? r->cap / 4 : want;
		prod_publish(r); /* the packet thread can take all of it */
		pthread_mutex_lock(&r->lock);
		atomic_store(&r->prod_waiting, low);
		while (!stopping(r) && r->cap - (size_t)(r->p_head - atomic_load(&r->tail)) < low)
			pthread_cond_wait(&r->not_full, &r->lock);
		atomic_store(&r->prod_waiting, 0);
		pthread_mutex_unlock(&r->lock);
		if (stopping(r))
			return NULL;
	}
}

/* Append a record that reserve() returned, and publish when it is time. */
static void prod_commit(struct reader *r, struct reader_rec *rec)
{
	r->p_head += rec->len;
	if (r->eager || r->p_head - r->p_pub >= PUBLISH_BYTES)
		prod_publish(r);
}

static int put_frame(struct reader *r, unsigned file, int dlt, const struct capture_pkt *p)
{
	uint32_t caplen = p->caplen < READER_MAX_FRAME ? p->caplen : READER_MAX_FRAME;
	size_t need = (sizeof(struct reader_rec) + caplen + 7) & ~(size_t)7;
	struct reader_rec *rec = prod_reserve(r, need);

	if (!rec)
		return -1;
	rec->len = (uint32_t)need;
	rec->kind = RD_FRAME;
	rec->pad_ = 0;
	rec->file = file;
	rec->dlt = dlt;
	rec->ts_us = p->ts_us;
	rec->caplen = caplen;
	rec->wirelen = p->wirelen;
	if (caplen)
		memcpy(rec->data, p->data, caplen);
	prod_commit(r, rec);
	return 0;
}

/* A control record with a message (cut to MSG_MAX - 1 bytes). */
static int put_msg(struct reader *r, enum reader_kind kind, unsigned file, int dlt,
		   const char *msg, uint64_t size)
{
	size_t n = strnlen(msg, MSG_MAX - 1);
	size_t need = (sizeof(struct reader_rec) + n + 1 + 7) & ~(size_t)7;
	struct reader_rec *rec = prod_reserve(r, need);

	if (!rec)
		return -1;
	memset(rec, 0, sizeof(*rec));
	rec->len = (uint32_t)need;
	rec->kind = (uint16_t)kind;
	rec->file = file;
	rec->dlt = dlt;
	rec->size = size;
	rec->caplen = (uint32_t)n;
	memcpy(rec->data, msg, n);
	rec->data[n] = 0;
	prod_commit(r, rec);
	return 0;
}

/* Read file i into the ring. 0: go on with the next file; -1: stop (asked
 * to, or the stream ended with an error record). */
static int read_file(struct reader *r, unsigned i)
{
	char err[MSG_MAX];
	struct capture *cap = capture_open_file(r->cfg.paths[i], err, sizeof(err));
	struct capture_pkt p;
	enum capture_rc rc = CAP_EOF;
	uint64_t done, total;
	int dlt, ret = -1;

	if (!cap) {
		put_msg(r, RD_OPEN_ERROR, i, 0, err, 0);
		return -1;
	}
	dlt = capture_datalink(cap);
	if (r->cfg.accept_dlt && !r->cfg.accept_dlt(dlt)) {
		put_msg(r, RD_BAD_LINK, i, dlt, capture_datalink_name(cap), 0);
		capture_close(cap);
		return -1;
	}
	capture_progress(cap, &done, &total);
	atomic_store_explicit(&r->prog_file, i, memory_order_release);
	atomic_store_explicit(&r->prog_done, done, memory_order_release);
	r->cur = cap;
	r->eager = total == 0; /* a pipe or stdin */
	if (put_msg(r, RD_FILE, i, dlt, capture_datalink_name(cap), total) < 0)
		goto out;
	while (!stopping(r) && (rc = capture_next(cap, &p)) == CAP_PACKET)
		if (put_frame(r, i, dlt, &p) < 0)
			goto out;
	if (stopping(r))
		goto out;
	/* CAP_TIMEOUT is for live sources only; taken as the end */
	if (put_msg(r, rc == CAP_ERROR ? RD_DAMAGED : RD_EOF, i, dlt,
		    rc == CAP_ERROR ? capture_error(cap) : "", 0) < 0)
		goto out;
	prod_publish(r); /* the file's end */
	ret = 0;
out:
	r->cur = NULL;
	capture_close(cap);
	return ret;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	unsigned i = 0;

	sync_name_self("ew-reader");
	while (i < r->cfg.npaths && read_file(r, i) == 0)
		i++;
	if (!stopping(r) && put_msg(r, RD_DONE, i, 0, "", 0) == 0)
		prod_publish(r);
	return NULL;
}

/* ---- the packet thread (consumer) -------------------------------------- */

/* Hand every released byte back to the reader, and wake it when it waits
 * for as much room as there now is. */
static void cons_publish(struct reader *r)
{
	if (r->c_pub == r->c_rel)
		return;
	r->c_pub = r->c_rel;
	atomic_store(&r->tail, r->c_rel); /* release, and seq_cst: see Sleeping */
	size_t want = atomic_load(&r->prod_waiting);
	if (want && r->cap - (size_t)(atomic_load(&r->head) - r->c_rel) >= want)
		sync_wake(&r->lock, &r->not_full);
}

const struct reader_rec *reader_next(struct reader *r, unsigned timeout_ms)
{
	for (;;) {
		if (r->c_read == r->c_head) {
			r->c_head = atomic_load_explicit(&r->head, memory_order_acquire);
			if (r->c_read == r->c_head) {
				/* Empty: let the reader have all we released, then
				 * sleep until it publishes or the time is up. */
				struct timespec dl;
				int timed_out = 0;
				cons_publish(r);
				sync_deadline_ms(&dl, timeout_ms);
				pthread_mutex_lock(&r->lock);
				atomic_store(&r->cons_waiting, 1);
				while (!timed_out && (r->c_head = atomic_load(&r->head)) == r->c_read)
					timed_out = pthread_cond_timedwait(&r->not_empty, &r->lock,
									   &dl) != 0;
				atomic_store(&r->cons_waiting, 0);
				pthread_mutex_unlock(&r->lock);
				if (r->c_read == r->c_head)
					return NULL;
			}
		}
		const struct reader_rec *rec =
			(const struct reader_rec *)(r->ring + (size_t)(r->c_read & (r->cap - 1)));
		r->c_read += rec->len;
		if (rec->kind == RD_PAD)
			continue;
		/* The record after it, written by the other core: its header and
		 * the frame's first bytes are fetched while this one is used. */
		__builtin_prefetch(r->ring + (size_t)(r->c_read & (r->cap - 1)));
		__builtin_prefetch(r->ring + (size_t)((r->c_read + 64) & (r->cap - 1)));
		return rec;
	}
}

void reader_release(struct reader *r, const struct reader_rec *rec)
{
	size_t pos = (size_t)((const unsigned char *)rec - r->ring);

	/* The record after a pad is at the ring's start; the pad goes with it. */
	if ((size_t)(r->c_rel & (r->cap - 1)) != pos)
		r->c_rel += r->cap - (size_t)(r->c_rel & (r->cap - 1));
	assert((size_t)(r->c_rel & (r->cap - 1)) == pos && r->c_rel + rec->len <= r->c_read);
	r->c_rel += rec->len;
	if (r->c_rel - r->c_pub >= PUBLISH_BYTES)
		cons_publish(r);
}

uint64_t reader_progress(struct reader *r, unsigned file)
{
	unsigned at = atomic_load_explicit(&r->prog_file, memory_order_acquire);
	uint64_t done = atomic_load_explicit(&r->prog_done, memory_order_acquire);

	/* the file again: done may be the next file's when it moved on */
	if (at != file || atomic_load_explicit(&r->prog_file, memory_order_acquire) != file)
		return UINT64_MAX;
	return done;
}

/* ---- open and close ---------------------------------------------------- */

int reader_open(struct reader **out, const struct reader_config *cfg, char *err, size_t errlen)
{
	struct reader *r;
	size_t want = cfg->ring_bytes ? cfg->ring_bytes : READER_DEFAULT_RING;
	sigset_t block, old;
	int e;

	*out = NULL;
	/* aligned, so that the shared fields get cache lines of their own */
	r = aligned_alloc(alignof(struct reader), sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "reader: out of memory");
		return -1;
	}
	memset(r, 0, sizeof(*r));
	r->cfg = *cfg;
	if (want < MIN_RING)
		want = MIN_RING;
	r->cap = 1;
	while (r->cap < want)
		r->cap <<= 1;
	r->ring = malloc(r->cap);
	if (!r->ring) {
		snprintf(err, errlen, "reader: out of memory for a %zu KiB ring", r->cap / 1024);
		goto fail;
	}
	if (sync_init(&r->lock, READER_CONDS(r), 2) < 0)
		goto fail_sync;
	r->sync_ready = 1;
	/* The command line's signals go to the packet thread. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	e = pthread_create(&r->thread, NULL, reader_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		snprintf(err, errlen, "reader: cannot start a thread: %s", strerror(e));
		goto fail;
	}
	r->started = 1;
	*out = r;
	return 0;
fail_sync:
	snprintf(err, errlen, "reader: cannot set up its locks");
fail:
	reader_close(r);
	return -1;
}

void reader_close(struct reader *r)
{
	if (!r)
		return;
	if (r->started) {
		atomic_store(&r->stop, 1);
		sync_wake(&r->lock, &r->not_full);
		pthread_join(r->thread, NULL);
	}
	if (r->sync_ready) {
		sync_destroy(&r->lock, READER_CONDS(r), 2);
	}
	free(r->ring);
	free(r);
}
