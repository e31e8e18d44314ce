/*
 * alerts.h - aggregation of the detectors' alerts into alert rows, and their
 * outcome from the state of the flows that raised them.
 *
 * An alert row is one (class, source address, subject) within a suppression
 * window of packet time: the first alert creates the row, later ones within
 * the window add to its count, raise its severity and score to the highest
 * seen, and add evidence (at most ALERTS_EVIDENCE_MAX distinct items). After
 * the window passes without a hit the row is closed; a later hit opens a new
 * row.
 *
 * Outcome (architecture.md section 3): a detector may state it (proxy_denied
 * is "blocked" by definition); otherwise it comes from the flows that raised
 * the alert. A flow that got an answer (a SYN-ACK or data, even if a RST
 * follows; or any other packet back that is not a refusal) makes the row
 * "answered": the containment leaked. A flow that was refused before it was
 * answered (RST, ICMP unreachable) or never answered by the time it ended
 * counts as blocked; a row whose flows were all blocked is "blocked". While
 * flows are still open and nothing came back, the row is "unknown".
 *
 * Rows are written through the store when created, and then at most once per
 * second of packet time while they change, and when the table is freed. The
 * table is bounded (max_open rows; the least recently hit is closed first).
 */
#ifndef EW_ALERTS_H
#define EW_ALERTS_H

#include <stdint.h>

#include "../analyzers/module.h"
#include "flow.h"
#include "store.h"

#define ALERTS_EVIDENCE_MAX 5

/* The alert classes of architecture.md section 3, in a fixed order. */
enum alert_class_id {
	AC_DNS_TUNNEL = 0, AC_METADATA_PROBE, AC_DNS_REBIND, AC_PROXY_BYPASS,
	AC_UDP_EGRESS, AC_ICMP_EGRESS, AC_ICMP_TUNNEL, AC_IPV6_EGRESS,
	AC_DNS_OVER_TCP, AC_DOH, AC_WEBSOCKET, AC_SMTP, AC_DOMAIN_NOT_ALLOWED,
	AC_PROXY_DENIED, AC_COUNT
};

/* Index of a class name, or -1 when it is not one of section 3's. */
int alerts_class_index(const char *name);
const char *alerts_class_name(int idx);

struct alerts_stats {
	uint64_t raised;              /* alerts emitted by detectors */
	uint64_t rows;                /* rows opened */
	uint64_t by_class[AC_COUNT];  /* rows opened per class */
	uint64_t rejected;            /* unknown class or bad alert */
	uint64_t evicted;             /* rows closed early because the table was full */
};

struct alerts;

/* store may be NULL (rows are then only counted). suppress_us is the
 * aggregation window; max_open bounds the open rows (0: 4096). */
struct alerts *alerts_new(struct store *store, uint64_t suppress_us, unsigned max_open);

/* Write every changed row and free the table. NULL is fine. */
void alerts_free(struct alerts *t);

/* Take an alert from a detector (copied). now_us is packet time. Returns 0,
 * or -1 when the alert was rejected (unknown class). */
int alerts_raise(struct alerts *t, const struct alert *a, uint64_t now_us);

/* A flow ends: settle the outcome of the rows it raised. */
void alerts_flow_end(struct alerts *t, const struct flow *f);

/* Once a second of packet time: write changed rows, close expired ones. */
void alerts_tick(struct alerts *t, uint64_t now_us);

/* Wall-clock upkeep for live capture (watch calls it once a second, even
 * when the wire is quiet and packet time stands still): settle the outcome
 * of rows whose open flows have since been answered or refused, and write
 * every changed row. */
void alerts_refresh(struct alerts *t);

/* Write and close every open row, so that the next alert of any class,
 * source and subject opens a new one (packet time stepped back: see
 * core_packet; call it after the flows have ended). */
void alerts_close_all(struct alerts *t);

/* Change the suppression window (rules reload). */
void alerts_set_window(struct alerts *t, uint64_t suppress_us);

const struct alerts_stats *alerts_get_stats(const struct alerts *t);

/* The most open rows that share one bucket, for the unit tests: subjects
 * are names and addresses packets chose, so the bucket hash is keyed
 * (hash.h) and this stays small whatever they are. */
unsigned alerts_chain_max(const struct alerts *t);

#endif
