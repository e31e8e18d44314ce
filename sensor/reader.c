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
 * The ring is sensor/ring.h, which holds the mechanism (records 8-byte
 * aligned that never wrap, each side's cached copy of the other's index,
 * the sleeps on a full or an empty ring, and why no wake-up is lost); the
 * policy is here. Each side hands over PUBLISH_BYTES at a time: the reader
 * its records, the packet thread the space of the records it released (in
 * the order it took them). The reader also publishes at the end of each
 * file, before it sleeps, and after every record of a source of unknown size
 * (a pipe: its next read may block, and what was read must not wait behind
 * it).
 *
 * Room: a record is at most REC_MAX bytes, and the packet thread holds at
 * most two unreleased (the frame it processes and the record after it), with
 * at most one pad among them; a ring of at least 4 * REC_MAX always has the
 * room the reader waits for, whatever the packet thread holds.
 *
 * Stopping: reader_close() stops the ring (ring_stop), which the reader
 * looks at before each frame and while it sleeps, and joins the thread; the
 * files it had open are closed there. SIGINT, SIGTERM and SIGHUP are blocked
 * on the reader thread, so the command line's handlers run on the packet
 * thread.
 */
#include "reader.h"

#include <pcap/pcap.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "capture.h"
#include "instream.h"
#include "ring.h"
#include "sync.h"

#define REC_MAX ((sizeof(struct reader_rec) + READER_MAX_FRAME + 7) & ~(size_t)7)
#define MIN_RING (4 * REC_MAX)
#define PUBLISH_BYTES 65536u /* each side hands over this much at a time */
#define MSG_MAX 1024u        /* a control record's message, NUL included */
#define MAX_PROGS 16         /* the filter compiled for this many link types at once */
#define MAX_OPEN_DLTS 64     /* a pcapng file's link types looked at when it opens */

_Static_assert(sizeof(struct reader_rec) == 32, "the record header is 32 bytes");
_Static_assert(sizeof(struct reader_rec) % 8 == 0, "records stay 8-byte aligned");
_Static_assert(offsetof(struct reader_rec, len) == offsetof(struct ring_hdr, len) &&
		       offsetof(struct reader_rec, kind) == offsetof(struct ring_hdr, tag) &&
		       offsetof(struct reader_rec, file) == sizeof(struct ring_hdr) && RD_PAD == 0,
	       "a record starts with ring.h's header, kind and pad_ in its tag: the ring's "
	       "pads are RD_PAD");

struct reader {
	struct ring ring;
	struct reader_config cfg;
	pthread_t thread;
	int started;
	_Atomic int finished; /* reader_main has returned */
	/* the reader thread's own */
	struct capture *cur; /* the file being read, for progress */
	int eager;           /* publish every record (size unknown) */
	struct {             /* the filter, compiled per link type */
		int dlt;
		struct bpf_program prog;
	} progs[MAX_PROGS];
	unsigned nprogs, next_prog;
	_Atomic uint64_t filtered;
	_Atomic uint64_t outside;
	/* --merge: the files being merged, for progress (the reader's own) */
	struct msrc *msrc;
	uint64_t merge_closed; /* the sizes of the files the merge has finished */
	/* progress, written by the reader at each publish */
	alignas(64) _Atomic unsigned prog_file;
	_Atomic uint64_t prog_done;
	_Atomic uint64_t prog_total; /* --merge: the files' sizes (0: one is a pipe) */
	alignas(64) char end_; /* nothing after the shared lines shares them */
};

/* ---- the reader thread (producer) -------------------------------------- */

static uint64_t merge_done(const struct reader *r);

/* Make every record written so far visible to the packet thread. */
static void prod_publish(struct reader *r)
{
	if (r->cur && !r->eager) {
		uint64_t done, total;
		capture_progress(r->cur, &done, &total);
		atomic_store_explicit(&r->prog_done, done, memory_order_release);
	} else if (r->msrc && !r->eager) {
		atomic_store_explicit(&r->prog_done, merge_done(r), memory_order_release);
	}
	if (ring_publish(&r->ring))
		ring_wake_consumer(&r->ring, 0);
}

/* Room for a record of need bytes (a multiple of 8, at most REC_MAX);
 * waits while the ring is full. NULL when asked to stop. */
static struct reader_rec *prod_reserve(struct reader *r, size_t need)
{
	struct reader_rec *rec;

	while (!(rec = ring_reserve(&r->ring, need))) {
		prod_publish(r); /* the packet thread can take all of it */
		if (ring_wait_room(&r->ring, need, 0) < 0)
			return NULL;
	}
	return rec;
}

/* Append a record that reserve() returned, and publish when it is time. */
static void prod_commit(struct reader *r, struct reader_rec *rec)
{
	ring_commit(&r->ring, rec);
	if (r->eager || ring_unpublished(&r->ring) >= PUBLISH_BYTES)
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

/* The filter for link type dlt (compiled the first time it is met; the
 * oldest of MAX_PROGS makes room). NULL, with libpcap's reason in err, when
 * it does not compile for dlt. */
static const struct bpf_program *filter_for(struct reader *r, int dlt, char *err, size_t errlen)
{
	for (unsigned k = 0; k < r->nprogs; k++)
		if (r->progs[k].dlt == dlt)
			return &r->progs[k].prog;
	pcap_t *dead = pcap_open_dead_with_tstamp_precision(dlt, READER_MAX_FRAME,
							    PCAP_TSTAMP_PRECISION_MICRO);
	struct bpf_program prog;
	if (!dead) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (pcap_compile(dead, &prog, r->cfg.bpf, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, errlen, "%s", pcap_geterr(dead));
		pcap_close(dead);
		return NULL;
	}
	pcap_close(dead);
	unsigned k;
	if (r->nprogs < MAX_PROGS) {
		k = r->nprogs++;
	} else {
		k = r->next_prog++ % MAX_PROGS;
		pcap_freecode(&r->progs[k].prog);
	}
	r->progs[k].dlt = dlt;
	r->progs[k].prog = prog;
	return &r->progs[k].prog;
}

/* Does frame p pass the filter? 1, 0, or -1 after an error record. */
static int filter_pass(struct reader *r, unsigned i, const struct capture_pkt *p)
{
	char why[512], msg[MSG_MAX];
	const struct bpf_program *prog = filter_for(r, p->dlt, why, sizeof(why));

	if (!prog) {
		const char *ln = pcap_datalink_val_to_name(p->dlt);
		snprintf(msg, sizeof(msg), "%s: filter \"%s\" does not apply to link type %s: %s",
			 r->cfg.paths[i], r->cfg.bpf, ln ? ln : "unknown", why);
		put_msg(r, RD_OPEN_ERROR, i, p->dlt, msg, 0);
		return -1;
	}
	struct pcap_pkthdr h = {.caplen = p->caplen, .len = p->wirelen};
	h.ts.tv_sec = (time_t)(p->ts_us / 1000000u);
	h.ts.tv_usec = (suseconds_t)(p->ts_us % 1000000u);
	if (pcap_offline_filter(prog, &h, p->data))
		return 1;
	atomic_fetch_add_explicit(&r->filtered, 1, memory_order_relaxed);
	return 0;
}

/* Open file i and say so (RD_FILE): 0 with *cap and *dlt, or -1 after the
 * record that ends the stream (RD_OPEN_ERROR, RD_BAD_LINK) or when asked to
 * stop. */
static int open_file(struct reader *r, unsigned i, struct capture **cap, int *dlt)
{
	char err[MSG_MAX];
	uint64_t done, total;

	*cap = capture_open_file(r->cfg.paths[i], err, sizeof(err));
	if (!*cap) {
		put_msg(r, RD_OPEN_ERROR, i, 0, err, 0);
		return -1;
	}
	/* A pcapng file's interfaces may each have their own link type, and
	 * packets of one not decoded count as not IP: the file is refused only
	 * when none described before its first packet is accepted, and is
	 * of the first that is. */
	int dlts[MAX_OPEN_DLTS];
	size_t ndlt = capture_datalinks(*cap, dlts, MAX_OPEN_DLTS), k = 0;
	*dlt = capture_datalink(*cap);
	while (r->cfg.accept_dlt && k < ndlt && !r->cfg.accept_dlt(dlts[k]))
		k++;
	if (r->cfg.accept_dlt && k == ndlt) {
		put_msg(r, RD_BAD_LINK, i, *dlt, capture_datalink_name(*cap), 0);
		return -1;
	}
	if (k < ndlt)
		*dlt = dlts[k];
	capture_progress(*cap, &done, &total);
	if (!total)
		r->eager = 1; /* a pipe or stdin: publish every record */
	if (!r->cfg.merge) { /* the position, before the packet thread hears of the file */
		atomic_store_explicit(&r->prog_file, i, memory_order_release);
		atomic_store_explicit(&r->prog_done, done, memory_order_release);
		r->cur = *cap;
	}
	const char *ln = pcap_datalink_val_to_name(*dlt);
	return put_msg(r, RD_FILE, i, *dlt, ln ? ln : "unknown", total);
}

/* The next frame of file i that lies within --from/--to and passes the
 * filter, into *p: 1; 0 at the file's end (*rc: how it ended); -1 to stop
 * (asked to, or the stream ended with an error record). Damage read past
 * and captures joined on are said on the way. */
static int next_frame(struct reader *r, unsigned i, struct capture *cap, int dlt,
		      struct capture_pkt *p, enum capture_rc *rc)
{
	while (!ring_stopping(&r->ring)) {
		*rc = capture_next(cap, p);
		if (*rc == CAP_SKIPPED || *rc == CAP_JOINED) { /* said, and read on */
			if (put_msg(r, *rc == CAP_SKIPPED ? RD_SKIPPED : RD_JOINED, i, dlt,
				    capture_error(cap), 0) < 0)
				return -1;
			continue;
		}
		if (*rc != CAP_PACKET)
			return 0;
		if (r->cfg.timed && (p->ts_us < r->cfg.from_us || p->ts_us >= r->cfg.to_us)) {
			atomic_fetch_add_explicit(&r->outside, 1, memory_order_relaxed);
			continue;
		}
		int pass = r->cfg.bpf ? filter_pass(r, i, p) : 1;
		if (pass < 0) {
			prod_publish(r);
			return -1;
		}
		if (pass)
			return 1;
	}
	return -1;
}

/* File i ended (rc): the count of the damage read past beyond the places
 * told one by one, then its end record (RD_EOF, or RD_DAMAGED with where
 * and why). 0, or -1 to stop. */
static int file_end(struct reader *r, unsigned i, struct capture *cap, int dlt,
		    enum capture_rc rc)
{
	unsigned places;
	uint64_t bytes;

	capture_skips(cap, &places, &bytes);
	if (places > CAPTURE_SKIPS_TOLD) { /* the first ones were told one by one */
		char msg[MSG_MAX];
		snprintf(msg, sizeof(msg), "%s: %u places damaged in all, %llu bytes skipped",
			 r->cfg.paths[i], places, (unsigned long long)bytes);
		if (put_msg(r, RD_SKIPPED, i, dlt, msg, 0) < 0)
			return -1;
	}
	/* CAP_TIMEOUT is for live sources only; taken as the end */
	if (put_msg(r, rc == CAP_ERROR ? RD_DAMAGED : RD_EOF, i, dlt,
		    rc == CAP_ERROR ? capture_error(cap) : "", 0) < 0)
		return -1;
	prod_publish(r); /* the file's end */
	return 0;
}

/* Read file i into the ring. 0: go on with the next file; -1: stop (asked
 * to, or the stream ended with an error record). */
static int read_file(struct reader *r, unsigned i)
{
	struct capture *cap = NULL;
	struct capture_pkt p;
	enum capture_rc rc = CAP_EOF;
	int dlt, k, ret = -1;

	r->eager = 0;
	if (open_file(r, i, &cap, &dlt) < 0)
		goto out;
	while ((k = next_frame(r, i, cap, dlt, &p, &rc)) > 0)
		if (put_frame(r, i, p.dlt, &p) < 0)
			goto out;
	if (k == 0 && file_end(r, i, cap, dlt, rc) == 0)
		ret = 0;
out:
	r->cur = NULL;
	capture_close(cap);
	return ret;
}

/*
 * replay --merge: the files side by side, their frames into the ring in
 * time order (the earliest next frame of the open files; on a tie, the
 * file given first), as mergecap merges captures of two interfaces taken
 * side by side. A file is opened when the merge reaches the time of its
 * first frame (looked at once, before anything is handed on) and closed
 * at its end, so two interfaces' rings of rotated files keep two or three
 * open, whatever their number; more than READER_MERGE_MAX open at once (as
 * many files overlapping in time) ends the stream with RD_OPEN_ERROR. Each
 * frame costs a scan of the open files' heads, not of every file. Each
 * file's records come as in read_file: RD_FILE when it opens, its damage
 * where it is met, its end after its last frame. Standard input and named
 * pipes, which cannot be read twice, open first. The position is the bytes
 * read of all the files together: the sizes of those finished, and how far
 * into each open one (none when one is a pipe: its size is not known). 0,
 * or -1: stop.
 */
struct msrc {
	struct capture *cap;
	struct capture_pkt p; /* the file's next frame, when have */
	uint64_t first_ts;    /* its first frame's time (0: none, or stdin) */
	uint64_t size;        /* its size (0: a pipe, or stdin) */
	int dlt, have;
};

/* Bytes of the merged files read so far. */
static uint64_t merge_done(const struct reader *r)
{
	uint64_t sum = r->merge_closed, done, total;

	for (unsigned i = 0; r->msrc && i < r->cfg.npaths; i++)
		if (r->msrc[i].cap) {
			capture_progress(r->msrc[i].cap, &done, &total);
			sum += done;
		}
	return sum;
}

/* File s of the merge is finished: its bytes count whole (its size, or
 * how far it was read when it grew while it was read). */
static void merge_close(struct reader *r, struct msrc *s)
{
	uint64_t done = 0, total;

	if (s->cap)
		capture_progress(s->cap, &done, &total);
	capture_close(s->cap);
	s->cap = NULL;
	r->merge_closed += done > s->size ? done : s->size;
}

/* The time of file i's first frame into s->first_ts (0 when it has none, or
 * is stdin). 0, or -1 after the record that ends the stream. */
static int merge_look(struct reader *r, unsigned i, struct msrc *s)
{
	char err[MSG_MAX];
	struct capture_pkt p;
	enum capture_rc rc;
	struct capture *cap;
	struct stat st;

	s->first_ts = 0;
	s->size = 0;
	/* stdin and named pipes cannot be read twice: they open first */
	if (!strcmp(r->cfg.paths[i], "-") || stat(r->cfg.paths[i], &st) != 0 ||
	    !S_ISREG(st.st_mode))
		return 0;
	s->size = (uint64_t)st.st_size;
	if (!(cap = capture_open_file(r->cfg.paths[i], err, sizeof(err)))) {
		put_msg(r, RD_OPEN_ERROR, i, 0, err, 0);
		return -1;
	}
	while ((rc = capture_next(cap, &p)) == CAP_SKIPPED || rc == CAP_JOINED)
		; /* said when the file is read */
	if (rc == CAP_PACKET)
		s->first_ts = p.ts_us;
	capture_close(cap);
	return 0;
}

/* Open file i for the merge, and take its first frame. 0, or -1: stop. */
static int merge_open(struct reader *r, unsigned i, struct msrc *s)
{
	enum capture_rc rc;

	if (open_file(r, i, &s->cap, &s->dlt) < 0)
		return -1;
	int k = next_frame(r, i, s->cap, s->dlt, &s->p, &rc);
	if (k < 0 || (k == 0 && file_end(r, i, s->cap, s->dlt, rc) < 0))
		return -1;
	s->have = k;
	if (!k)
		merge_close(r, s);
	return 0;
}

/* Files by their first frame's time, then as given. */
struct morder {
	uint64_t first_ts;
	unsigned i;
};

static int morder_cmp(const void *a, const void *b)
{
	const struct morder *x = a, *y = b;

	if (x->first_ts != y->first_ts)
		return x->first_ts < y->first_ts ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int read_merged(struct reader *r)
{
	unsigned n = r->cfg.npaths, i, next = 0, open = 0;
	unsigned act[READER_MERGE_MAX]; /* the open files with a frame in hand */
	struct msrc *src = calloc(n, sizeof(*src));
	struct morder *order = calloc(n, sizeof(*order)); /* by first frame's time */
	enum capture_rc rc;
	int ret = -1;

	if (!src || !order) {
		put_msg(r, RD_OPEN_ERROR, 0, 0, "reader: out of memory", 0);
		goto out;
	}
	atomic_store_explicit(&r->prog_file, n, memory_order_release);
	r->eager = 0;
	r->msrc = src;
	uint64_t total = 0;
	for (i = 0; i < n; i++) {
		if (merge_look(r, i, &src[i]) < 0)
			goto out;
		order[i] = (struct morder){src[i].first_ts, i};
		total = src[i].size && total != UINT64_MAX ? total + src[i].size : UINT64_MAX;
	}
	atomic_store_explicit(&r->prog_total, total == UINT64_MAX ? 0 : total,
			      memory_order_release);
	qsort(order, n, sizeof(*order), morder_cmp);
	for (;;) {
		unsigned best = n, at = 0;
		for (unsigned k = 0; k < open; k++) {
			unsigned f = act[k];
			if (best == n || src[f].p.ts_us < src[best].p.ts_us ||
			    (src[f].p.ts_us == src[best].p.ts_us && f < best))
				best = f, at = k;
		}
		/* a file whose first frame is due opens first, and may hold an
		 * earlier frame than the best so far */
		if (next < n && (best == n || order[next].first_ts <= src[best].p.ts_us)) {
			unsigned f = order[next++].i;
			if (open == READER_MERGE_MAX) {
				char msg[MSG_MAX];
				snprintf(msg, sizeof(msg), "%s: --merge keeps at most %d files open "
					 "at once, and more than that overlap in time here (merge "
					 "them in groups with mergecap)",
					 r->cfg.paths[f], READER_MERGE_MAX);
				put_msg(r, RD_OPEN_ERROR, f, 0, msg, 0);
				goto out;
			}
			if (merge_open(r, f, &src[f]) < 0)
				goto out;
			if (src[f].have)
				act[open++] = f;
			continue;
		}
		if (best == n)
			break;
		struct msrc *b = &src[best];
		if (put_frame(r, best, b->p.dlt, &b->p) < 0)
			goto out;
		int k = next_frame(r, best, b->cap, b->dlt, &b->p, &rc);
		if (k < 0 || (k == 0 && file_end(r, best, b->cap, b->dlt, rc) < 0))
			goto out;
		if (!(b->have = k)) {
			merge_close(r, b);
			act[at] = act[--open];
		}
	}
	ret = 0;
out:
	atomic_store_explicit(&r->prog_done, merge_done(r), memory_order_release);
	r->msrc = NULL;
	for (i = 0; src && i < n; i++)
		capture_close(src[i].cap);
	free(src);
	free(order);
	return ret;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	unsigned i = 0;

	sync_name_self("ew-reader");
	instream_wake_me();
	if (r->cfg.merge)
		i = read_merged(r) == 0 ? r->cfg.npaths : 0;
	else
		while (i < r->cfg.npaths && read_file(r, i) == 0)
			i++;
	if (!ring_stopping(&r->ring) && put_msg(r, RD_DONE, i, 0, "", 0) == 0)
		prod_publish(r);
	atomic_store_explicit(&r->finished, 1, memory_order_release);
	return NULL;
}

/* ---- the packet thread (consumer) -------------------------------------- */

const struct reader_rec *reader_next(struct reader *r, unsigned timeout_ms)
{
	const struct reader_rec *rec;

	while (!(rec = ring_take(&r->ring)))
		if (!ring_wait_data(&r->ring, timeout_ms))
			return NULL;
	ring_prefetch_next(&r->ring);
	return rec;
}

void reader_release(struct reader *r, const struct reader_rec *rec)
{
	ring_release(&r->ring, rec);
	if (ring_unreturned(&r->ring) >= PUBLISH_BYTES)
		ring_hand_back(&r->ring);
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

uint64_t reader_merge_progress(struct reader *r, uint64_t *total)
{
	*total = atomic_load_explicit(&r->prog_total, memory_order_acquire);
	return *total ? atomic_load_explicit(&r->prog_done, memory_order_acquire) : 0;
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
	e = ring_init(&r->ring, want);
	if (e == -1) {
		snprintf(err, errlen, "reader: out of memory for a %zu KiB ring",
			 r->ring.cap / 1024);
		goto fail;
	}
	if (e < 0)
		goto fail_sync;
	instream_wake_init();
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
		ring_stop(&r->ring);
		/* A read waiting on a quiet pipe would hold the join until the
		 * writer wrote or closed: woken out of it (and again, should the
		 * signal come between two reads) until the thread is done. */
		while (!atomic_load_explicit(&r->finished, memory_order_acquire)) {
			struct timespec ts = {0, 10 * 1000 * 1000};
			if (instream_wake(r->thread) != 0)
				break;
			nanosleep(&ts, NULL);
		}
		pthread_join(r->thread, NULL);
	}
	for (unsigned k = 0; k < r->nprogs; k++)
		pcap_freecode(&r->progs[k].prog);
	ring_destroy(&r->ring);
	free(r);
}

uint64_t reader_outside(struct reader *r)
{
	return atomic_load_explicit(&r->outside, memory_order_relaxed);
}

uint64_t reader_filtered(struct reader *r)
{
	return atomic_load_explicit(&r->filtered, memory_order_relaxed);
}

int reader_check_filter(const char *bpf, char *err, size_t errlen)
{
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, READER_MAX_FRAME);
	struct bpf_program prog;
	int rc = 0;

	if (!dead) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (pcap_compile(dead, &prog, bpf, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, errlen, "%s", pcap_geterr(dead));
		rc = -1;
	} else {
		pcap_freecode(&prog);
	}
	pcap_close(dead);
	return rc;
}
