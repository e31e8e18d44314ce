/*
 * query.h - the read side of the database (CLI `events`/`alerts` and the API).
 *
 * NOTE FROM THE LEAD (sensor/main.c already calls these; keep these names and
 * fields, add more as needed): struct event_filter {kind, host, since_id, limit,
 * time range}, struct alert_filter {class_name, severity, src, since_id,
 * limit, time range},
 * query_print_events(), query_print_alerts(). limit < 0 means no limit.
 */
#ifndef EW_QUERY_H
#define EW_QUERY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

struct event_filter {
	const char *kind;   /* "dns", "http", "tls", "icmp" or NULL for all */
	const char *host;   /* NULL for all, else events to or from this address,
			     * in inet_ntop's form (query_canon_addr) */
	const char *name;   /* NULL for all, else events whose name (qname, Host,
			     * SNI) is this one or under it, ASCII case ignored
			     * (query_canon_name) */
	int64_t since_id;   /* only rows with id > since_id */
	int64_t limit;      /* < 0: no limit */
	int timed;          /* only events with from_us <= ts < to_us (packet time, us) */
	int64_t from_us, to_us;
};

struct alert_filter {
	const char *class_name; /* NULL for all */
	const char *severity;   /* NULL for all; a minimum: "high" (or "4") gives
				 * high and critical */
	const char *src;        /* NULL for all */
	int64_t since_id;
	int64_t limit;
	int timed;              /* only alerts hit within [from_us, to_us): last_ts >=
				 * from_us and first_ts < to_us (packet time, us) */
	int64_t from_us, to_us;
	/* since_id is a write sequence (schema/003_alert_seq.sql): the alerts
	 * written (inserted, or updated as they grow) after it, in the order
	 * they were written, each once and in its latest state; *last_id then
	 * gets the last row's sequence. A database before schema 3 has none:
	 * its ids stand in (what the migration gives its rows). */
	int by_seq;
};

struct query;

/*
 * Open db_path read-only (SQLITE_OPEN_READONLY; the writer keeps it in WAL,
 * so readers never block it). A missing file, a file that is not an
 * egresswatch database, or one with a newer schema is refused. On failure
 * returns -1 and writes a one-line reason naming the file into err.
 * A struct query is used by one thread at a time.
 */
int query_open(struct query **out, const char *db_path, char *err, size_t errlen);
void query_close(struct query *q); /* NULL is fine */

/*
 * Called once per row with the row's section 4 JSON object, borrowed for the
 * call (json_incref() to keep it). Return 0 to go on, non-zero to stop.
 */
typedef int query_row_fn(void *arg, json_t *row);

/*
 * Rows in id order, with id > since_id, at most limit of them (< 0: all),
 * events of one kind family (dns, http, tls, icmp) or alerts of one class,
 * minimum severity and source address. Filters are bound parameters; the
 * SQL text comes from fixed fragments only. Returns the number of rows
 * delivered, or -1 with a reason naming the file in err (an unknown kind or
 * severity is an error too). *last_id (if not NULL) gets the id of the last
 * row delivered, or since_id when none: the next page's since_id.
 */
int64_t query_events(struct query *q, const struct event_filter *f, query_row_fn *fn, void *arg,
		     int64_t *last_id, char *err, size_t errlen);
int64_t query_alerts(struct query *q, const struct alert_filter *f, query_row_fn *fn, void *arg,
		     int64_t *last_id, char *err, size_t errlen);

/* As query_alerts, with each row's cursor (its id, or with by_seq its write
 * sequence: what *last_id gets for the last row) passed to fn. */
typedef int query_cursor_fn(void *arg, json_t *row, int64_t cursor);
int64_t query_alerts_cursor(struct query *q, const struct alert_filter *f, query_cursor_fn *fn,
			    void *arg, int64_t *last_id, char *err, size_t errlen);

/* One alert by id into *out (a new reference). Returns 0, 1 when there is no
 * such alert, or -1 with a reason in err. */
int query_alert_get(struct query *q, int64_t id, json_t **out, char *err, size_t errlen);

/* The obs kinds of a family name: dns 1..2, http 3..4, tls 5..6, icmp 7..7.
 * Returns 0, or -1 for an unknown name. */
int query_kind_range(const char *kind, int *lo, int *hi);

/* The statement query_events() runs for a family name (NULL: every kind),
 * for EXPLAIN QUERY PLAN in tests; NULL for an unknown name. */
const char *query_events_sql(const char *kind, int host, int name);

/* A name filter (event_filter.name) as given, in the form the filter wants:
 * without a trailing dot or a leading "*.". 0, or -1 when it is empty,
 * longer than QUERY_NAME_MAX, starts with a dot or holds a control byte. */
#define QUERY_NAME_MAX 1024
int query_canon_name(const char *text, char *buf, size_t len);

/* text, an IPv4 or IPv6 address in any form inet_pton takes, in the form
 * the database stores (inet_ntop's) into buf; an IPv4-mapped IPv6 address
 * (::ffff:10.0.0.1) is its IPv4 address (as Zeek reads it; the events
 * filter also finds an IPv6 packet that carried the mapped form). Returns 0,
 * or -1 when it is not an address. */
int query_canon_addr(const char *text, char *buf, size_t len);

/* "info".."critical" or "1".."5" -> 1..5; -1 for anything else. */
int query_severity_level(const char *s);

/* A (name, value) row of the stats table, borrowed for the call. Return 0
 * to go on, non-zero to stop. */
typedef int query_stat_fn(void *arg, const char *name, int64_t value);

/* Every row of the stats table (name -> value, written by the sensor), in
 * name order. Returns the number of rows delivered, or -1 with a reason
 * naming the file in err. */
int64_t query_stats(struct query *q, query_stat_fn *fn, void *arg, char *err, size_t errlen);

/* Alert rows counted by (class, severity 1..5), class borrowed for the
 * call. Returns the number of groups delivered, or -1 with a reason in err. */
typedef int query_count_fn(void *arg, const char *class_name, int severity, int64_t n);
int64_t query_alert_counts(struct query *q, query_count_fn *fn, void *arg, char *err,
			   size_t errlen);

/* The largest alert id into *out (0 when there are none). Returns 0, or -1
 * with a reason in err. */
int query_alert_max_id(struct query *q, int64_t *out, char *err, size_t errlen);

/* Where the database stands: its largest event id, alert id and alert
 * write sequence (0 for none, and a sequence of 0 before schema 3). */
struct query_marks {
	int64_t event_id, alert_id, alert_seq;
};
int query_marks(struct query *q, struct query_marks *m, char *err, size_t errlen);

/* Print events (JSON lines when json, one json_dumps(EVENT_JSON_DUMP_FLAGS)
 * object per line; else a table, one line per row). Returns 0, or -1 with a
 * one-line message naming the database on stderr. */
int query_print_events(const char *db_path, const struct event_filter *f, FILE *out, int json);
int query_print_alerts(const char *db_path, const struct alert_filter *f, FILE *out, int json);

#endif
