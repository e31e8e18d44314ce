/*
 * eve.h - `--eve FILE`: the events and alerts of a run as JSON lines in one
 * file, for a SIEM's shipper (Filebeat, Vector, Fluent Bit) to tail, as
 * Suricata's eve.json is.
 *
 * The file is written from the database, not from the packet path: a
 * follower with its own read-only connection (query.h) appends, at each
 * pass, the events stored since the last one, in id order, each line the
 * object `events --json` prints. An alert's line is the object `alerts
 * --json` prints with "kind":"alert" after its id. So the lines are those
 * of the CLI and the API byte for byte, a slow or stuck reader of the file
 * never slows the capture, and only what is committed is written.
 *
 * Alerts grow after they are raised (count, last_ts, outcome, evidence). In
 * live mode (watch) each pass also writes the alerts written to the
 * database since the last pass, in the order they were written
 * (query_alerts with by_seq): an alert's line comes again as it grows, and its
 * last line is its state. Otherwise (replay) the alerts of the run are
 * written once, at eve_finish(), in id order and their final state, after
 * every event: the file of a replay is the same every time.
 *
 * Only rows written after eve_open() are written: the database's marks
 * (query_marks) are taken there.
 */
#ifndef EW_EVE_H
#define EW_EVE_H

#include <stddef.h>
#include <stdint.h>

struct eve;

struct eve_config {
	const char *path;     /* appended to (created 0640), "-" for stdout */
	const char *db_path;  /* an egresswatch database (schema 3 or newer) */
	int live;             /* see above */
	unsigned interval_ms; /* between passes of the follower (default 1000) */
};

struct eve_stats {
	uint64_t events, alerts; /* lines rendered (written, but for the lost) */
	uint64_t missed;         /* events deleted (watch --retain) before a pass reached them */
	uint64_t errors;         /* lines that could not be written (the file's errors) */
	uint64_t reopens;        /* times the file was reopened (eve_reopen) */
};

/*
 * Open the file and the database and take the marks. Returns 0, or -1 with
 * a one-line reason naming the file in err.
 */
int eve_open(struct eve **out, const struct eve_config *cfg, char *err, size_t errlen);

/* Start the follower thread: a pass every interval_ms. Returns 0 or -1
 * with a reason in err. Without it, eve_finish() does the one pass. */
int eve_start(struct eve *e, char *err, size_t errlen);

/*
 * Ask for the file to be opened again by path at the next pass (after log
 * rotation moved it away: SIGHUP). What is buffered goes to the old file
 * first; if the path cannot be opened, the old file is kept and the reason
 * logged. Safe from any thread (not from a signal handler). "-" is never
 * reopened.
 */
void eve_reopen(struct eve *e);

/*
 * Stop the follower (if it runs) and make a pass on the caller's thread:
 * every event stored by now and the alerts not yet written (live: those
 * written since the last pass; otherwise: the run's alerts not yet
 * written, in id order). Called again, it makes one more pass. Returns 0,
 * or -1 when any line of the run could not be written (stats.errors) or
 * this pass could not read the database, with the reason logged (a pass of
 * the thread that could not is made good by the next one).
 */
int eve_finish(struct eve *e);

/* A snapshot of the counters; safe from any thread. */
void eve_get_stats(const struct eve *e, struct eve_stats *out);

/* Close (stopping the follower first, without a last pass). NULL is fine. */
void eve_close(struct eve *e);

#endif
