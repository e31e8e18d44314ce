/*
 * eve.c - the --eve follower of eve.h.
 *
 * One thread ("ew-eve") wakes every interval_ms and runs a pass: the events
 * after the last id it wrote, PAGE at a time (each page one statement, so
 * one short read transaction: a reader that held one for a whole pass would
 * keep the checkpointer from resetting the WAL), then in live mode the
 * alerts after the last write sequence it saw. Lines are rendered into
 * e->line (event_json_line) and gathered in e->out_buf, which goes to the
 * file with write(2) when it holds OUT_FLUSH bytes and at the end of each
 * pass, so a pass adds whole lines and a reader tailing the file sees
 * whole lines at every pass's end. A write that fails loses the lines of
 * that buffer: they are counted (errors) and the first failure after a
 * success is logged; the follower goes on, as the store goes on when the
 * disk is full.
 *
 * Ids of events are one sequence that a single writer fills without gaps
 * (sensor/store.c numbers each batch from max(id)), so a gap between two
 * ids the follower reads is events deleted before it got to them: only
 * `watch --retain` shorter than a pass deletes that fast. They are counted
 * (missed) and logged once.
 */
#include "eve.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../sensor/log.h"
#include "../sensor/sync.h"
#include "event_json.h"
#include "query.h"

#define PAGE 10000             /* rows a statement reads */
#define PASS_PAGES 10          /* event pages a pass of the thread reads at most */
#define OUT_FLUSH (64 * 1024)  /* bytes gathered before a write */
#define DEFAULT_INTERVAL_MS 1000u

struct eve {
	char *path, *db_path;
	int live;
	unsigned interval_ms;
	int fd;               /* -1 once closed; 1 for "-" */
	struct query *q;
	struct query_marks mark; /* what has been written: the last event id,
				  * alert id (replay) and alert sequence (live) */
	char *line;            /* one rendered line, reused */
	size_t line_cap;
	char *out_buf;         /* whole lines waiting for write(2) */
	size_t out_len, out_cap, out_lines;
	int in_error;          /* the last write failed (logged once) */
	int missed_logged;
	int read_error;        /* the last pass could not read the database
				* (logged once until one can) */
	int behind;            /* the last pass stopped at PASS_PAGES of events */

	pthread_t thread;
	int running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;              /* under mu */
	atomic_int reopen;
	_Atomic uint64_t n_events, n_alerts, n_missed, n_errors, n_reopens;
};

static int open_file(const char *path, char *err, size_t errlen)
{
	if (!strcmp(path, "-"))
		return STDOUT_FILENO;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		snprintf(err, errlen, "%s: cannot open for --eve: %s", path, strerror(errno));
	return fd;
}

/* Write what is gathered. On failure its lines are lost: counted, logged
 * (once until a write succeeds again). */
static void out_flush(struct eve *e)
{
	size_t off = 0;

	while (off < e->out_len) {
		ssize_t n = write(e->fd, e->out_buf + off, e->out_len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int saved = n < 0 ? errno : ENOSPC;
			atomic_fetch_add(&e->n_errors, e->out_lines);
			if (!e->in_error)
				log_err("eve", "%s: write failed: %s; %zu lines lost (and counted "
					"until a write succeeds)", e->path, strerror(saved), e->out_lines);
			e->in_error = 1;
			e->out_len = e->out_lines = 0;
			return;
		}
		off += (size_t)n;
	}
	if (e->in_error && e->out_len)
		log_info("eve", "%s: writing again", e->path);
	if (e->out_len)
		e->in_error = 0;
	e->out_len = e->out_lines = 0;
}

/* Render o as a line and gather it (o is released). Returns 0, or -1 when
 * out of memory. */
static int out_line(struct eve *e, json_t *o)
{
	size_t n = event_json_line(o, &e->line, &e->line_cap);

	json_decref(o);
	if (n == 0)
		return -1;
	if (e->out_len + n > e->out_cap) {
		size_t cap = e->out_cap ? e->out_cap : OUT_FLUSH;
		while (cap < e->out_len + n)
			cap *= 2;
		char *b = realloc(e->out_buf, cap);
		if (!b)
			return -1;
		e->out_buf = b;
		e->out_cap = cap;
	}
	memcpy(e->out_buf + e->out_len, e->line, n);
	e->out_len += n;
	e->out_lines++;
	if (e->out_len >= OUT_FLUSH)
		out_flush(e);
	return 0;
}

static int on_event(void *arg, json_t *row)
{
	struct eve *e = arg;
	int64_t id = json_integer_value(json_object_get(row, "id"));

	if (id > e->mark.event_id + 1) {
		uint64_t gap = (uint64_t)(id - e->mark.event_id - 1);
		atomic_fetch_add(&e->n_missed, gap);
		if (!e->missed_logged)
			log_warn("eve", "%s: %llu events were deleted (--retain) before they "
				 "could be written; counted in eve.missed from now on", e->path,
				 (unsigned long long)gap);
		e->missed_logged = 1;
	}
	e->mark.event_id = id;
	json_incref(row);
	if (out_line(e, row) < 0)
		return -1;
	atomic_fetch_add_explicit(&e->n_events, 1, memory_order_relaxed);
	return 0;
}

/* The alert object with "kind":"alert" after its id (the rest in order). */
static int on_alert(void *arg, json_t *row)
{
	struct eve *e = arg;
	json_t *o = json_object(), *v;
	const char *key;
	int rc = 0;

	if (!o)
		return -1;
	rc |= json_object_set(o, "id", json_object_get(row, "id"));
	rc |= json_object_set_new(o, "kind", json_string("alert"));
	json_object_foreach(row, key, v)
		if (strcmp(key, "id"))
			rc |= json_object_set(o, key, v);
	if (rc) {
		json_decref(o);
		return -1;
	}
	if (out_line(e, o) < 0)
		return -1;
	atomic_fetch_add_explicit(&e->n_alerts, 1, memory_order_relaxed);
	return 0;
}

static void do_reopen(struct eve *e)
{
	char err[512];
	int fd;

	if (!strcmp(e->path, "-"))
		return;
	out_flush(e); /* what is gathered belongs to the old file */
	if ((fd = open_file(e->path, err, sizeof(err))) < 0) {
		log_err("eve", "%s; still writing to the file that was open", err);
		return;
	}
	close(e->fd);
	e->fd = fd;
	atomic_fetch_add(&e->n_reopens, 1);
	log_info("eve", "reopened %s", e->path);
}

/*
 * One pass: the new events, then (live) the alerts written since the last
 * pass, or (final and not live) this run's alerts in id order. The
 * thread's passes read at most PASS_PAGES pages of events, so that under a
 * flood of events the alerts (and a reopen) still come every pass; one cut
 * short sets e->behind, and the next starts at once. The final pass reads
 * to the end. Returns 0, or -1 with the reason logged.
 */
static int pass(struct eve *e, int final)
{
	char err[512];
	int64_t n;
	int pages = 0;

	if (atomic_exchange(&e->reopen, 0))
		do_reopen(e);
	do {
		struct event_filter f = {.since_id = e->mark.event_id, .limit = PAGE};
		n = query_events(e->q, &f, on_event, e, NULL, err, sizeof(err));
	} while (n == PAGE && (final || ++pages < PASS_PAGES));
	e->behind = n == PAGE;
	if (n >= 0 && e->live) {
		do {
			struct alert_filter f = {.since_id = e->mark.alert_seq, .limit = PAGE,
						 .by_seq = 1};
			n = query_alerts(e->q, &f, on_alert, e, &e->mark.alert_seq, err,
					 sizeof(err));
		} while (n == PAGE);
	} else if (n >= 0 && final) {
		do {
			struct alert_filter f = {.since_id = e->mark.alert_id, .limit = PAGE};
			n = query_alerts(e->q, &f, on_alert, e, &e->mark.alert_id, err,
					 sizeof(err));
		} while (n == PAGE);
	}
	out_flush(e);
	if (n < 0) {
		/* What was not read is read by the next pass: nothing is lost
		 * unless the last pass fails too. */
		if (!e->read_error)
			log_err("eve", "%s: %s; trying again at the next pass", e->path, err);
		e->read_error = 1;
		return -1;
	}
	if (e->read_error)
		log_info("eve", "%s: reading the database again", e->path);
	e->read_error = 0;
	return 0;
}

static void *follow(void *arg)
{
	struct eve *e = arg;
	struct timespec until;

	sync_name_self("ew-eve");
	pthread_mutex_lock(&e->mu);
	while (!e->stop) {
		sync_deadline_ms(&until, e->interval_ms);
		while (!e->stop && !e->behind &&
		       pthread_cond_timedwait(&e->cv, &e->mu, &until) != ETIMEDOUT)
			;
		if (e->stop)
			break;
		pthread_mutex_unlock(&e->mu);
		pass(e, 0);
		pthread_mutex_lock(&e->mu);
	}
	pthread_mutex_unlock(&e->mu);
	return NULL;
}

int eve_open(struct eve **out, const struct eve_config *cfg, char *err, size_t errlen)
{
	struct eve *e = calloc(1, sizeof(*e));
	pthread_cond_t *cvs[1];

	*out = NULL;
	if (!e || !(e->path = strdup(cfg->path)) || !(e->db_path = strdup(cfg->db_path))) {
		snprintf(err, errlen, "%s: out of memory", cfg->path);
		goto fail_mem;
	}
	e->fd = -1;
	e->live = cfg->live;
	e->interval_ms = cfg->interval_ms ? cfg->interval_ms : DEFAULT_INTERVAL_MS;
	cvs[0] = &e->cv;
	if (sync_init(&e->mu, cvs, 1) < 0) {
		snprintf(err, errlen, "%s: cannot set up a lock", cfg->path);
		goto fail_mem;
	}
	if (query_open(&e->q, cfg->db_path, err, errlen) < 0 ||
	    query_marks(e->q, &e->mark, err, errlen) < 0 ||
	    (e->fd = open_file(cfg->path, err, errlen)) < 0) {
		eve_close(e);
		return -1;
	}
	*out = e;
	return 0;
fail_mem:
	if (e) {
		free(e->path);
		free(e->db_path);
	}
	free(e);
	return -1;
}

int eve_start(struct eve *e, char *err, size_t errlen)
{
	int rc = pthread_create(&e->thread, NULL, follow, e);

	if (rc) {
		snprintf(err, errlen, "%s: cannot start the --eve thread: %s", e->path, strerror(rc));
		return -1;
	}
	e->running = 1;
	return 0;
}

void eve_reopen(struct eve *e)
{
	if (e)
		atomic_store(&e->reopen, 1);
}

static void stop_thread(struct eve *e)
{
	if (!e->running)
		return;
	pthread_mutex_lock(&e->mu);
	e->stop = 1;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	pthread_join(e->thread, NULL);
	e->running = 0;
}

int eve_finish(struct eve *e)
{
	stop_thread(e);
	int rc = pass(e, 1);
	return rc < 0 || atomic_load(&e->n_errors) ? -1 : 0;
}

void eve_get_stats(const struct eve *e, struct eve_stats *out)
{
	out->events = atomic_load_explicit(&e->n_events, memory_order_relaxed);
	out->alerts = atomic_load_explicit(&e->n_alerts, memory_order_relaxed);
	out->missed = atomic_load_explicit(&e->n_missed, memory_order_relaxed);
	out->errors = atomic_load_explicit(&e->n_errors, memory_order_relaxed);
	out->reopens = atomic_load_explicit(&e->n_reopens, memory_order_relaxed);
}

void eve_close(struct eve *e)
{
	pthread_cond_t *cvs[1];

	if (!e)
		return;
	stop_thread(e);
	if (e->fd >= 0 && strcmp(e->path, "-"))
		close(e->fd);
	query_close(e->q);
	cvs[0] = &e->cv;
	sync_destroy(&e->mu, cvs, 1);
	free(e->line);
	free(e->out_buf);
	free(e->path);
	free(e->db_path);
	free(e);
}
