/*
 * store.h - the SQLite writer: one connection, statements prepared once,
 * inserts batched in transactions of N rows or T milliseconds of packet
 * time, WAL, and numbered migrations from schema/ recorded in
 * PRAGMA user_version.
 *
 * Everything handed to store_* is copied before the call returns (into the
 * writer queue, or into a scratch record bound for one step), so callers may
 * pass borrowed observations. A crash loses at most the open batch; WAL keeps
 * the database consistent, in every mode.
 *
 * Writer thread (the default): store_event() only copies the row (its
 * addresses raw: the writer renders them) into a bounded queue of
 * variable-size records (names and subjects cut at STORE_NAME_MAX, info and
 * evidence at STORE_INFO_MAX, cuts counted in `truncated`), and a writer
 * thread owns the connection and drains the queue,
 * so decoding uses one core and SQLite another. When the queue is full the
 * caller waits (counted in `queue_waits`): nothing is dropped. Write errors
 * then surface asynchronously: they are counted in `errors`, and the next
 * store_flush() or store_close() returns -1. With STORE_WRITER_INLINE the
 * caller's thread writes and store_event() returns -1 for the failed row.
 *
 * All store_* calls on one store must come from one thread (the capture
 * thread); the writer thread is internal.
 */
#ifndef EW_STORE_H
#define EW_STORE_H

#include <stddef.h>
#include <stdint.h>

struct obs;
struct store;

#define STORE_NAME_MAX 1024 /* bytes kept of a name, subject, address, summary */
#define STORE_INFO_MAX 8192 /* bytes kept of an event's info or an alert's evidence */

enum store_writer {
	STORE_WRITER_DEFAULT = 0, /* = STORE_WRITER_THREAD */
	STORE_WRITER_THREAD,      /* a writer thread drains a bounded queue */
	STORE_WRITER_INLINE,      /* the caller's thread steps SQLite itself */
};

struct store_config {
	unsigned batch_rows; /* commit after this many rows (default 50000) */
	unsigned batch_ms;   /* or after this much packet time (default 1000); the
			      * writer thread also commits an open batch after
			      * batch_ms of wall-clock idleness, so a quiet link
			      * still gets its events visible */
	unsigned busy_ms;    /* SQLite busy timeout (default 5000) */
	/*
	 * Bulk load (replay): a 16 MiB page cache while the store is open,
	 * and batches spanning up to max(batch_ms, 60 s) of packet time (a
	 * replay runs far ahead of the clock; batch_rows still applies).
	 * Durability is that of every mode (WAL, synchronous=NORMAL): a crash
	 * loses at most the open batch; store_close() checkpoints, so the file
	 * is complete once close returns.
	 */
	int bulk;
	enum store_writer writer;
	unsigned queue_kib;  /* writer queue size (default 8192 KiB, min 256) */
	int drop_when_full;  /* live capture: when the queue is full, drop the
			      * event and count it (store_stats.dropped) rather
			      * than stall the capture thread */
	/*
	 * Retention: 0 keeps every event. Otherwise each commit deletes, in
	 * the same transaction, the events whose packet time is not within
	 * retain_us of the newest event this store has written (or of the
	 * batch's newest, when that is more than retain_us older: the clock
	 * stepped back), table by
	 * table in id order: a table's rows go up to its first row that is
	 * within, at most STORE_EXPIRE_MAX of them a commit, and never the
	 * table's last row (which keeps the id sequence going up). Alerts are
	 * kept. retain_us is at most STORE_RETAIN_MAX_US.
	 */
	uint64_t retain_us;
	/*
	 * Failed writes are logged as runs (store.c, set_err): the first
	 * failure at once, then a line every fail_log_ms (default 60000) of
	 * wall-clock time while they go on, and one when a commit succeeds
	 * again, with the rows lost in between.
	 */
	unsigned fail_log_ms;
};

#define STORE_EXPIRE_MAX 100000u /* events a table loses in one commit, at most */
#define STORE_RETAIN_MAX_US (100ull * 366 * 86400 * 1000000) /* 100 years */

struct store_stats {
	uint64_t events, alerts; /* rows written and committed */
	uint64_t commits;
	uint64_t errors;         /* rows or commits that failed (counted, reported, not fatal) */
	uint64_t stats;          /* stat rows written */
	uint64_t truncated;      /* text fields cut to STORE_NAME_MAX / STORE_INFO_MAX */
	uint64_t queue_waits;    /* times store_* waited for room in the writer queue */
	uint64_t dropped;        /* events dropped because the queue was full (drop_when_full) */
	uint64_t queue_bytes;    /* bytes waiting in the writer queue now */
	uint64_t expired;        /* events deleted by retention (retain_us), committed */
};

/*
 * Events are stored one table per family of kinds (schema/002_event_tables.sql):
 * events_dns (OBS_DNS_QUERY, OBS_DNS_ANSWER), events_http, events_tls and
 * events_icmp, with ids from one sequence over the four; the view `events`
 * joins them.
 */
enum store_family {
	STORE_FAM_DNS,
	STORE_FAM_HTTP,
	STORE_FAM_TLS,
	STORE_FAM_ICMP,
	STORE_FAM_COUNT
};

/* The family of an OBS_* kind, or -1 for a kind that has none. */
int store_kind_family(int kind);

/*
 * Open (creating if needed) the database at path, apply pending migrations,
 * switch to WAL and prepare the statements. cfg may be NULL. path may be a
 * SQLite "file:" URI. A read-only database, or one whose user_version is
 * newer than this build knows, is refused. On failure returns -1 and writes
 * a one-line reason naming the file into err.
 */
int store_open(struct store **out, const char *path, const struct store_config *cfg,
	       char *err, size_t errlen);

/*
 * Commit the open batch and close (after draining the writer queue). NULL is
 * fine. Returns 0, or -1 when the final commit or close failed or any write
 * failed during the run (stats.errors != 0; read store_get_stats() before
 * closing for the numbers). The last error is logged, naming the file.
 */
int store_close(struct store *s);

/* Queue an observation as an event row (copied). flow_id 0 is stored as
 * NULL. Returns 0, or -1 when the row could not be written (inline writer)
 * or queued; counted in errors. */
int store_event(struct store *s, const struct obs *o, uint64_t flow_id);

/* Commit the open batch now (waiting for the writer to drain the queue).
 * Returns 0, or -1 if the commit failed or any write failed since the
 * previous store_flush(). */
int store_flush(struct store *s);

/* Record a named counter of the run (stats table: name -> value), replacing
 * the previous value. Used for packets, bytes, drops, per-module counts.
 * Written in the current batch. */
int store_put_stat(struct store *s, const char *name, int64_t value);

/*
 * An aggregated alert row (architecture.md section 4). The core aggregates;
 * the store only writes: the first upsert of an id inserts a row (numbered
 * past every row of the database, under the write lock), later upserts of
 * the same id replace every column of that row (count, last_ts, outcome,
 * evidence, ...). Strings are copied; NULL strings are stored as NULL
 * (outcome NULL as "unknown").
 */
struct store_alert {
	int64_t id;            /* from store_alert_id() */
	const char *class;     /* architecture.md section 3 */
	int severity;          /* 1 info .. 5 critical */
	uint64_t first_ts, last_ts; /* packet time, microseconds */
	uint64_t count;
	const char *outcome;   /* "blocked" | "answered" | "unknown" */
	uint8_t proto;         /* IPPROTO_*, 0 if none */
	const char *src_ip, *dst_ip; /* text_addr() form, or NULL */
	uint16_t src_port, dst_port;
	const char *subject;
	double score;
	const char *rule;
	const char *summary;
	const char *evidence;  /* items separated by GS (0x1d) */
};

/* Allocate the id of a new alert (max(id) at open + 1, then increasing).
 * It is this process's handle of the alert: its row's id is the same while
 * no other process writes alerts into the database, and otherwise the next
 * free one when the alert is first written (store.c, alert_row), which its
 * later upserts then update. */
int64_t store_alert_id(struct store *s);

/* Insert or update the alert's row (in the current batch). Returns 0 or -1. */
int store_alert_upsert(struct store *s, const struct store_alert *a);

/* A snapshot of the counters, refreshed by each call (call from the store's
 * thread). Valid until the next call or store_close(). */
const struct store_stats *store_get_stats(const struct store *s);

/* The last error, "path: what: sqlite message", or "" if none. Valid until
 * the next store_* call. */
const char *store_last_error(const struct store *s);

/* Number of schema migrations compiled in (== user_version after open). */
int store_schema_version(void);

#endif
