/*
 * store.h - the SQLite writer: one connection, statements prepared once,
 * inserts batched in transactions of N rows or T milliseconds of packet
 * time, WAL, and numbered migrations from schema/ recorded in
 * PRAGMA user_version.
 *
 * Everything handed to store_* is copied before the call returns (bound with
 * SQLITE_TRANSIENT or copied into the batch), so callers may pass borrowed
 * observations. A crash loses at most the open batch; WAL keeps the database
 * consistent.
 */
#ifndef EW_STORE_H
#define EW_STORE_H

#include <stddef.h>
#include <stdint.h>

struct obs;
struct store;

struct store_config {
	unsigned batch_rows; /* commit after this many rows (default 50000) */
	unsigned batch_ms;   /* or after this much packet time (default 1000) */
};

struct store_stats {
	uint64_t events, alerts; /* rows written */
	uint64_t commits;
	uint64_t errors;         /* failed steps (counted, reported, not fatal) */
};

/*
 * Open (creating if needed) the database at path, apply pending migrations,
 * switch to WAL and prepare the statements. cfg may be NULL. On failure
 * returns -1 and writes a one-line reason naming the file into err.
 */
int store_open(struct store **out, const char *path, const struct store_config *cfg,
	       char *err, size_t errlen);

/* Commit the open batch and close. NULL is fine. Returns 0 or -1. */
int store_close(struct store *s);

/* Queue an observation as an event row (copied). Returns 0, or -1 when the
 * row could not be written (counted in errors). */
int store_event(struct store *s, const struct obs *o, uint64_t flow_id);

/* Commit the open batch now. */
int store_flush(struct store *s);

/* Record a named counter of the run (stats table: name -> value), replacing
 * the previous value. Used for packets, bytes, drops, per-module counts. */
int store_put_stat(struct store *s, const char *name, int64_t value);

const struct store_stats *store_get_stats(const struct store *s);

/* Number of schema migrations compiled in (== user_version after open). */
int store_schema_version(void);

#endif
