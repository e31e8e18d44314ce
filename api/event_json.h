/*
 * event_json.h - database rows (events, alerts) as the JSON objects of
 * docs/architecture.md section 4, built with jansson.
 *
 * The rows are borrowed views of one result row (query.c fills them from
 * sqlite3_column_*); the JSON objects returned are new references that the
 * caller releases with json_decref(). Every text value goes through jansson,
 * which escapes it; text that is not valid UTF-8 (never written by our
 * store, but a database is input too) is escaped as \xNN first.
 */
#ifndef EW_EVENT_JSON_H
#define EW_EVENT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Flags for json_dumps() of these objects: compact, keys in section 4 order,
 * and reals with 15 significant digits so a score of 0.97 prints as 0.97. */
#define EVENT_JSON_DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

struct event_row {
	int64_t id;
	uint64_t ts;       /* microseconds */
	int kind;          /* enum obs_kind */
	int64_t flow_id;   /* 0 if none */
	int proto;         /* IPPROTO_* */
	const char *src_ip, *dst_ip; /* NULL is rendered as "" */
	int src_port, dst_port;
	const char *name;  /* NULL if none */
	int type, code;
	int64_t size;
	unsigned flags;    /* OBS_F_* */
	const char *info;  /* record.h encoding, NULL if none */
	size_t info_len;
};

struct alert_row {
	int64_t id;
	const char *class_name;
	int severity;      /* 1 info .. 5 critical */
	uint64_t first_ts, last_ts;
	int64_t count;
	const char *outcome;
	int proto;         /* 0: none (null in JSON) */
	const char *src_ip, *dst_ip; /* NULL: null in JSON */
	int src_port, dst_port;      /* < 0: null in JSON */
	const char *subject, *rule, *summary; /* NULL: null in JSON */
	int has_score;
	double score;
	const char *evidence; /* items separated by GS (0x1d), NULL for none */
	size_t evidence_len;
	int64_t cursor;    /* its place in a listing (query.c): the id, or the
			    * write sequence when paging by it; not rendered */
};

/* "dns", "http", "tls" or "icmp" for an obs kind, NULL for an unknown one. */
const char *event_kind_name(int kind);

/* "udp", "tcp", "icmp", "icmpv6" ("igmp", "gre", "esp", "ah", "sctp" for
 * the other protocols an alert or a quoted packet can name), or the number,
 * written into buf (>= 4 bytes) when it has no name. Returns the name or
 * buf. */
const char *event_proto_name(int proto, char *buf, size_t cap);

/* "info", "low", "medium", "high", "critical", or NULL outside 1..5. */
const char *event_severity_name(int severity);

/*
 * The event object: id, ts, kind, src_ip, src_port, dst_ip, dst_port, proto,
 * then the kind object ("dns" from dns_info_json(); for the other kinds for
 * now {"name","type","code","size"}), then "malformed": true when flags has
 * OBS_F_MALFORMED. Returns a new reference, or NULL when out of memory.
 */
json_t *event_json_new(const struct event_row *r);

/* The alert object of section 4 (evidence split on GS into an array).
 * Returns a new reference, or NULL when out of memory. */
json_t *alert_json_new(const struct alert_row *r);

/*
 * Render o as one line, EVENT_JSON_DUMP_FLAGS and a newline, into *buf,
 * which is grown as needed (*cap is its size; both may start 0/NULL and are
 * reused from line to line). One json_dumpb into a buffer, written with one
 * write, is what lets a line go out whole: json_dumpf writes each token with
 * an fwrite of its own, which took the stream's lock each time and was over
 * a quarter of an export's time. Returns the line's length, newline
 * included, or 0 when out of memory. o is not released.
 */
size_t event_json_line(json_t *o, char **buf, size_t *cap);

#endif
