/*
 * core.h - the packet path: decode -> flow table -> analyzers -> detectors
 * -> store, driven one packet at a time by the capture loop.
 *
 * One struct core per run; it owns the decoder, the flow table, the module
 * states and the store writer, and carries them through every callback (no
 * globals). Time is the packets' time: core_packet's ts_us drives fragment
 * and flow expiry and the detectors' windows, so a replay is deterministic.
 */
#ifndef EW_CORE_H
#define EW_CORE_H

#include <stdint.h>

#include "decode.h"
#include "flow.h"
#include "store.h"
#include "../analyzers/module.h"

#define CORE_MAX_MODULES 32

/* A step back of packet time longer than this (a capture replayed after a
 * later one, sections of two captures joined, the capturing host's clock
 * set back) starts flows, detector windows and alert rows over: see
 * core_packet. */
#define CORE_CLOCK_BACK_US (60ull * 1000000u)
/* ... once this many packets in a row are that far back (at once for the
 * first packet of an input, core_input_start): a lone packet with a wrong
 * time is not a step */
#define CORE_CLOCK_BACK_RUN 8u
/* ... and, after the first CORE_RESTARTS_FREE restarts, at most once in
 * CORE_RESTART_MIN_PACKETS packets, but for the first packet of an input:
 * a capture whose times jump back and forth costs a restart per that many
 * packets, not one per jump */
#define CORE_RESTARTS_FREE 16u
#define CORE_RESTART_MIN_PACKETS 10000u

/* What each module's callbacks returned, and the module's own counters
 * (module.counters: read once a second in watch and at core_finish). */
struct mod_counts {
	uint64_t ok, not_mine, truncated, malformed, failed;
	unsigned n_own;
	struct mod_counter own[MOD_COUNTERS_MAX];
};

struct core_stats {
	uint64_t packets, bytes;
	uint64_t events[OBS_KIND_MAX];   /* by obs kind */
	uint64_t events_malformed;
	uint64_t alerts;          /* raised by detectors */
	uint64_t alert_rows;      /* rows after aggregation (known at close) */
	uint64_t alerts_by_class[14]; /* rows per class, AC_* order (sensor/alerts.h) */
	uint64_t store_errors;
	uint64_t first_ts_us, last_ts_us;
	/* packet time went back more than CORE_CLOCK_BACK_US: the times flows,
	 * detector windows and alert rows started over (restarts), and the
	 * packets that far back that were processed in the state of the newest
	 * time instead (folded: a lone packet with a wrong time, the first of
	 * a step back until CORE_CLOCK_BACK_RUN of them confirm it, those too
	 * soon after a restart) */
	uint64_t time_restarts, time_folded;
	/* UDP/ICMP datagrams skipped as copies of one another capture source
	 * gave (copies.h) */
	uint64_t copies;
	struct mod_counts mod[CORE_MAX_MODULES];
};

struct core_config {
	const char *db_path;      /* NULL: no store (events only counted) */
	const struct rules *rules;/* NULL: rules_default(); borrowed for the run */
	struct store_config store;
	struct flow_config flow;
	struct decode_config decode;
	/* 1: a UDP, ICMP or ICMPv6 datagram that two capture sources (the
	 * iface of core_packet) both give is read once (copies.h): watch with
	 * several interfaces, replay --merge; 0: every copy is read (files
	 * replayed one after another are separate passes) */
	int copies;
};

struct core;

/* Open the store, create the decoder and flow table, init every module.
 * On failure returns -1 with a one-line reason in err. */
int core_open(struct core **out, const struct core_config *cfg, char *err, size_t errlen);

/*
 * The end of a run: judge the datagrams waiting for fragments, end every
 * flow (analyzers may still emit from their state), finish the modules,
 * write each alert row's final state and the run's counters, and commit.
 * No packet may follow; the counters stay readable (core_stats ...), so a
 * summary printed after it counts everything, and the database holds the
 * run's last word (what `replay --eve` writes out). Returns 0, or -1 when
 * the commit failed. core_close() calls it when the caller has not; a
 * second call does nothing.
 */
int core_finish(struct core *c);

/* core_finish(), then close the store and free everything. Returns 0, or
 * -1 when the store could not be closed cleanly. NULL is fine. */
int core_close(struct core *c);

/*
 * Process one captured frame (bytes borrowed for the call).
 *
 * Packet time drives every window and expiry, and is expected to go
 * forward. When CORE_CLOCK_BACK_RUN frames in a row (or the first frame of
 * an input) are more than CORE_CLOCK_BACK_US older than the newest so far,
 * what was open belongs to another stretch of time: the
 * datagrams waiting for fragments are judged, every flow ends (settling the
 * outcome of its alerts), every alert row is written and closed, the
 * detectors start afresh (as on a rules reload) and so does the once-a-second
 * tick, all before the frame is decoded; the frame's time is then the clock.
 * So a capture replayed after a later one gives the alerts it gives alone,
 * where it would otherwise fold into rows and windows of the future and wait
 * for the tick of a time that has not come back. Smaller steps (packets of
 * several interfaces interleaved) and a few frames with a wrong time change
 * nothing. Said in the log (the first ten times) and counted (core_stats:
 * time_restarts, time_folded).
 */
void core_packet(struct core *c, int dlt, uint64_t ts_us, const uint8_t *data,
		 uint32_t caplen, uint32_t wirelen, uint32_t iface);

/* Read-ahead for a replay: the frame that core_packet will get next, so
 * that the flow table can warm its caches (flow_table_prefetch). Bytes are
 * borrowed for the call; nothing else changes. */
void core_prefetch(struct core *c, int dlt, const uint8_t *data, uint32_t caplen);

/* The end of the input: IP datagrams still waiting for fragments never
 * will, and are judged now (decode_frag_give_up). core_close does it too;
 * replay calls it first so that its summary counts them. */
void core_end_input(struct core *c);

/* The next frame starts an input (a capture file, a section joined on):
 * if its time steps back, the restart of core_packet happens however
 * recently the last one did. */
void core_input_start(struct core *c);

/* Commit what is batched (watch mode calls this when the wire is quiet). */
int core_flush(struct core *c);

/*
 * Swap in new rules (SIGHUP). Detectors (modules with on_obs or a name
 * starting "detect_") are finished and initialised again with the new rules,
 * so their windows start afresh; analyzers keep their state. The caller keeps
 * ownership of both rule sets and may free the old one when this returns 0.
 * On failure (-1, err filled) the old rules stay in force.
 */
int core_set_rules(struct core *c, const struct rules *rules, char *err, size_t errlen);

/* Settle live alert outcomes and write changed alert rows (alerts_refresh),
 * then write every counter of the run (packets, bytes, per decode layer, per
 * module, flows, alert rows per class, store queue) to the stats table now.
 * watch calls it once a second; replay's core_close does it at the end. */
void core_write_counters(struct core *c);

/* Record an external counter (pcap drops, ...) into the store's stats. */
void core_put_stat(struct core *c, const char *name, int64_t value);

const struct core_stats *core_stats(const struct core *c);
const struct decode_stats *core_decode_stats(const struct core *c);
const struct flow_stats *core_flow_stats(const struct core *c);
const struct store_stats *core_store_stats(const struct core *c);
/* Alert rows so far, per class (AC_* order of sensor/alerts.h). */
void core_alert_counts(const struct core *c, uint64_t by_class[14]);

/* Name of obs kind for output: "dns", "http", "tls", "icmp". */
const char *core_kind_name(enum obs_kind k);

#endif
