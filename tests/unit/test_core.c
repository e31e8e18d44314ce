/*
 * test_core.c - sensor/core.c when packet time goes back (core_packet):
 * the path `watch` takes, where no input ever starts, and the one `replay`
 * takes at each file (core_input_start). No store: the counters and the
 * alert rows per class say what happened.
 *
 * Cases: time going forward and small steps back change nothing; a lone
 * packet two days early is folded, not a restart, and its metadata probe
 * joins the open alert row; eight in a row restart (the first seven
 * folded), end every flow and open a new row; at an input's first packet a
 * step back restarts at once; a capture whose time jumps back and forth
 * restarts at most CORE_RESTARTS_FREE times and then once every
 * CORE_RESTART_MIN_PACKETS packets. And the analyzers hear of every flow
 * the table ends (on_flow_end): the HTTP module's pending requests come
 * back at a restart and at the end of the run.
 */
#include <pcap/dlt.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "sensor/alerts.h"
#include "sensor/core.h"
#include "sensor/flow.h"

#define S 1000000ull /* a second, in microseconds */
static const uint64_t T0 = 1796032800ull * S; /* 2026-11-30T10:00:00Z */

/* An Ethernet frame with an IPv4 TCP SYN from 10.99.0.10:sport to
 * 169.254.169.254:80 (a metadata probe, one flow per sport). */
static uint32_t syn_frame(uint8_t *f, uint16_t sport)
{
	static const uint8_t eth[14] = {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 6, 0x08, 0x00};
	uint8_t *ip = f + 14, *tcp = ip + 20;

	memset(f, 0, 54);
	memcpy(f, eth, sizeof(eth));
	ip[0] = 0x45;
	ip[3] = 40; /* total length */
	ip[8] = 64;
	ip[9] = 6;
	ip[12] = 10, ip[13] = 99, ip[14] = 0, ip[15] = 10;
	ip[16] = 169, ip[17] = 254, ip[18] = 169, ip[19] = 254;
	tcp[0] = (uint8_t)(sport >> 8), tcp[1] = (uint8_t)sport;
	tcp[3] = 80;
	tcp[7] = 1;      /* seq */
	tcp[12] = 0x50;  /* data offset 5 */
	tcp[13] = 0x02;  /* SYN */
	tcp[15] = 0xff;  /* window */
	return 54;
}

static void syn(struct core *c, uint64_t ts, uint16_t sport)
{
	uint8_t f[64];
	uint32_t n = syn_frame(f, sport);

	core_packet(c, DLT_EN10MB, ts, f, n, n, 0);
}

static struct core *open_core(void)
{
	struct core_config cfg = {0}; /* no store, the built-in rules */
	struct core *c = NULL;
	char err[256];

	CHECK(core_open(&c, &cfg, err, sizeof(err)) == 0);
	return c;
}

static uint64_t probe_rows(const struct core *c)
{
	uint64_t by_class[AC_COUNT];

	core_alert_counts(c, by_class);
	return by_class[AC_METADATA_PROBE];
}

/* Forward, then small steps back: no restart, nothing folded, one row. */
static void test_small_steps(void)
{
	struct core *c = open_core();
	if (!c)
		return;
	for (unsigned k = 0; k < 20; k++)
		syn(c, T0 + k * S, (uint16_t)(1000 + k));
	for (unsigned k = 0; k < 20; k++) /* 30 s back and less: interleaved interfaces */
		syn(c, T0 + 19 * S - 30 * S + k * S, (uint16_t)(2000 + k));
	CHECK_EQ(core_stats(c)->time_restarts, 0);
	CHECK_EQ(core_stats(c)->time_folded, 0);
	CHECK_EQ(probe_rows(c), 1);
	CHECK_EQ(core_flow_stats(c)->active, 40);
	core_close(c);
}

/* A lone packet two days early is folded: the flows stay, its probe joins
 * the open row. Then eight in a row restart at the eighth: every flow
 * ended, a new row for the probes of the earlier time. */
static void test_lone_then_run(void)
{
	struct core *c = open_core();
	if (!c)
		return;
	for (unsigned k = 0; k < 10; k++)
		syn(c, T0 + k * S, (uint16_t)(1000 + k));
	syn(c, T0 - 2 * 86400 * S, 3000);
	syn(c, T0 + 10 * S, 1010);
	CHECK_EQ(core_stats(c)->time_restarts, 0);
	CHECK_EQ(core_stats(c)->time_folded, 1);
	CHECK_EQ(probe_rows(c), 1);
	CHECK_EQ(core_flow_stats(c)->active, 12);
	CHECK_EQ(core_flow_stats(c)->expired, 0);

	for (unsigned k = 0; k < CORE_CLOCK_BACK_RUN; k++)
		syn(c, T0 - 86400 * S + k * S, (uint16_t)(4000 + k));
	CHECK_EQ(core_stats(c)->time_restarts, 1);
	CHECK_EQ(core_stats(c)->time_folded, 1 + CORE_CLOCK_BACK_RUN - 1);
	/* the 12 flows and the 7 folded ones ended; the eighth is the new time's */
	CHECK_EQ(core_flow_stats(c)->expired, 12 + CORE_CLOCK_BACK_RUN - 1);
	CHECK_EQ(core_flow_stats(c)->active, 1);
	CHECK_EQ(probe_rows(c), 2);
	/* the new time goes on: later packets of it are not steps */
	for (unsigned k = 0; k < 5; k++)
		syn(c, T0 - 86400 * S + (10 + k) * S, (uint16_t)(5000 + k));
	CHECK_EQ(core_stats(c)->time_restarts, 1);
	CHECK_EQ(probe_rows(c), 2);
	core_close(c);
}

/* At an input's first packet, a step back restarts at once. */
static void test_input_start(void)
{
	struct core *c = open_core();
	if (!c)
		return;
	for (unsigned k = 0; k < 5; k++)
		syn(c, T0 + k * S, (uint16_t)(1000 + k));
	core_input_start(c);
	syn(c, T0 - 3600 * S, 2000);
	CHECK_EQ(core_stats(c)->time_restarts, 1);
	CHECK_EQ(core_stats(c)->time_folded, 0);
	CHECK_EQ(core_flow_stats(c)->active, 1);
	CHECK_EQ(probe_rows(c), 2);
	/* the flag is for one packet: a later lone step is folded again */
	syn(c, T0 - 3600 * S + S, 2001);
	syn(c, T0 - 3 * 3600 * S, 2002);
	CHECK_EQ(core_stats(c)->time_restarts, 1);
	CHECK_EQ(core_stats(c)->time_folded, 1);
	/* forward again, past the old clock: nothing to do */
	syn(c, T0 + 10 * S, 2003);
	CHECK_EQ(core_stats(c)->time_restarts, 1);
	core_close(c);
}

/* Runs of eight two hours back, then eight forward, over and over: the
 * first CORE_RESTARTS_FREE restart, then one per CORE_RESTART_MIN_PACKETS
 * packets at most; every other step is folded. */
static void test_back_and_forth(void)
{
	struct core *c = open_core();
	const unsigned runs = 6000, len = CORE_CLOCK_BACK_RUN; /* 96,000 packets */
	uint64_t hi = T0 + 7200 * S, lo = T0;
	if (!c)
		return;
	for (unsigned r = 0; r < runs; r++) {
		for (unsigned k = 0; k < len; k++)
			syn(c, hi + k, (uint16_t)(1000 + k));
		for (unsigned k = 0; k < len; k++)
			syn(c, lo + k, (uint16_t)(2000 + k));
		hi += S, lo += S;
	}
	uint64_t packets = core_stats(c)->packets, restarts = core_stats(c)->time_restarts;
	CHECK_EQ(packets, 2ull * runs * len);
	CHECK(restarts >= CORE_RESTARTS_FREE);
	CHECK(restarts <= CORE_RESTARTS_FREE + packets / CORE_RESTART_MIN_PACKETS + 1);
	CHECK(core_stats(c)->time_folded > 0);
	core_close(c);
}

/* An Ethernet frame with an IPv4 TCP segment between 10.99.0.10:sport and
 * 10.99.0.1:80 (server: from the server), flags, seq, ack and payload. */
static uint32_t tcp_frame(uint8_t *f, uint16_t sport, int server, uint8_t flags, uint32_t seq,
			  uint32_t ack, const char *pl)
{
	static const uint8_t eth[14] = {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 6, 0x08, 0x00};
	size_t n = strlen(pl);
	uint8_t *ip = f + 14, *tcp = ip + 20, *a = ip + (server ? 16 : 12),
		*b = ip + (server ? 12 : 16);

	memset(f, 0, 54);
	memcpy(f, eth, sizeof(eth));
	ip[0] = 0x45;
	ip[2] = (uint8_t)((40 + n) >> 8), ip[3] = (uint8_t)(40 + n);
	ip[8] = 64;
	ip[9] = 6;
	a[0] = 10, a[1] = 99, a[2] = 0, a[3] = 10;
	b[0] = 10, b[1] = 99, b[2] = 0, b[3] = 1;
	uint8_t *cp = tcp + (server ? 2 : 0), *sp = tcp + (server ? 0 : 2);
	cp[0] = (uint8_t)(sport >> 8), cp[1] = (uint8_t)sport;
	sp[1] = 80;
	for (int k = 0; k < 4; k++) {
		tcp[4 + k] = (uint8_t)(seq >> (24 - 8 * k));
		tcp[8 + k] = (uint8_t)(ack >> (24 - 8 * k));
	}
	tcp[12] = 0x50;
	tcp[13] = flags;
	tcp[14] = 0xff;
	memcpy(tcp + 20, pl, n);
	return (uint32_t)(54 + n);
}

static void seg(struct core *c, uint64_t ts, uint16_t sport, int server, uint8_t flags,
		uint32_t seq, uint32_t ack, const char *pl)
{
	uint8_t f[1600];
	uint32_t n = tcp_frame(f, sport, server, flags, seq, ack, pl);

	core_packet(c, DLT_EN10MB, ts, f, n, n, 0);
}

/* Module name's own counter, as the core last read it. */
static uint64_t own(const struct core *c, const char *module, const char *name)
{
	for (unsigned i = 0; modules[i] && i < CORE_MAX_MODULES; i++) {
		const struct mod_counts *m = &core_stats(c)->mod[i];
		if (strcmp(modules[i]->name, module) != 0)
			continue;
		for (unsigned k = 0; k < m->n_own; k++)
			if (strcmp(m->own[k].name, name) == 0)
				return m->own[k].value;
	}
	CHECK(!"no such counter");
	return 0;
}

/* HTTP requests left unanswered hold pending storage in the http module
 * (http.h) until their flows end: the core tells the module (on_flow_end)
 * when the flow table ends them, at a time restart and at the end of the
 * run, so the bytes come back (module.http.pending_bytes). */
static void test_flow_end(void)
{
	struct core *c = open_core();
	static const char req[] = "GET /x HTTP/1.1\r\nHost: a.example\r\n\r\n";
	if (!c)
		return;
	for (uint16_t k = 0; k < 10; k++) {
		uint16_t sp = (uint16_t)(1000 + k);
		uint64_t t = T0 + k * S;
		seg(c, t, sp, 0, 0x02, 100, 0, "");
		seg(c, t + 1, sp, 1, 0x12, 500, 101, "");
		seg(c, t + 2, sp, 0, 0x10, 101, 501, "");
		seg(c, t + 3, sp, 0, 0x18, 101, 501, req);
	}
	CHECK_EQ(core_stats(c)->events[OBS_HTTP_REQUEST], 10);
	core_write_counters(c);
	uint64_t held = own(c, "http", "pending_bytes");
	CHECK(held > 0);
	CHECK(held < 10 * 256);
	CHECK_EQ(own(c, "http", "pending_peak"), held);
	/* a step back at an input's start: every flow ends */
	core_input_start(c);
	syn(c, T0 - 3600 * S, 2000);
	CHECK_EQ(core_stats(c)->time_restarts, 1);
	core_write_counters(c);
	CHECK_EQ(own(c, "http", "pending_bytes"), 0);
	/* and at the end of the run */
	seg(c, T0 - 3600 * S + 1, 3000, 0, 0x02, 100, 0, "");
	seg(c, T0 - 3600 * S + 2, 3000, 1, 0x12, 500, 101, "");
	seg(c, T0 - 3600 * S + 3, 3000, 0, 0x10, 101, 501, "");
	seg(c, T0 - 3600 * S + 4, 3000, 0, 0x18, 101, 501, req);
	core_write_counters(c);
	CHECK(own(c, "http", "pending_bytes") > 0);
	core_finish(c);
	CHECK_EQ(own(c, "http", "pending_bytes"), 0);
	CHECK_EQ(own(c, "http", "pending_peak"), held);
	CHECK_EQ(own(c, "http", "pending_refused"), 0);
	core_close(c);
}

int main(void)
{
	test_small_steps();
	test_lone_then_run();
	test_input_start();
	test_back_and_forth();
	test_flow_end();
	return check_done();
}
