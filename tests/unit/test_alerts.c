/*
 * test_alerts.c - sensor/alerts.c: aggregation per (class, source, subject)
 * within the window, severity and score kept at their highest, evidence
 * deduplicated and capped, rows written through the store, and the outcome
 * settled from the flows that raised a row, and the tick's schedule: rows
 * written a second apart and closed once their window is over.
 */
#include <netinet/in.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "collide.h"
#include "sensor/alerts.h"
#include "sensor/flow.h"
#include "sensor/store.h"

#define SEC 1000000ull
#define T0 (1796032800ull * SEC)

struct env {
	char dir[64], path[96];
	struct store *store;
	struct alerts *al;
	struct flow_table *ft;
};

static void env_end(void *user, struct flow *f)
{
	alerts_flow_end(user, f);
}

static void env_open(struct env *e, uint64_t window_s, unsigned max_open)
{
	struct store_config sc = {.writer = STORE_WRITER_INLINE};
	char err[256];

	snprintf(e->dir, sizeof(e->dir), "/tmp/ew-alerts.XXXXXX");
	if (!mkdtemp(e->dir))
		abort();
	snprintf(e->path, sizeof(e->path), "%s/a.db", e->dir);
	if (store_open(&e->store, e->path, &sc, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	e->al = alerts_new(e->store, window_s * SEC, max_open);
	e->ft = flow_table_new(NULL, env_end, e->al);
	if (!e->al || !e->ft)
		abort();
}

/* Flush everything and read back one column of the alerts table. */
static void env_close(struct env *e)
{
	flow_table_free(e->ft);
	alerts_free(e->al);
	store_close(e->store);
}

static void env_rm(struct env *e)
{
	char p[128];
	const char *sfx[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", e->path, sfx[i]);
		unlink(p);
	}
	rmdir(e->dir);
}

/* SELECT text: "class|subject|count|severity|outcome|evidence" rows joined by ';'. */
static void rows(struct env *e, char *out, size_t cap)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	size_t o = 0;

	out[0] = '\0';
	if (sqlite3_open_v2(e->path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		abort();
	if (sqlite3_prepare_v2(db,
			       "SELECT class, subject, count, severity, outcome, "
			       "coalesce(replace(evidence, char(29), ','), '') FROM alerts ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		abort();
	while (sqlite3_step(st) == SQLITE_ROW)
		o += (size_t)snprintf(out + o, cap - o, "%s%s|%s|%d|%d|%s|%s", o ? ";" : "",
				      sqlite3_column_text(st, 0), sqlite3_column_text(st, 1),
				      sqlite3_column_int(st, 2), sqlite3_column_int(st, 3),
				      sqlite3_column_text(st, 4), sqlite3_column_text(st, 5));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static struct pkt mkpkt(uint8_t proto, uint8_t src_last, uint8_t dst_last, uint16_t sport,
			uint16_t dport, uint8_t flags, uint64_t ts)
{
	struct pkt p;
	memset(&p, 0, sizeof(p));
	p.ipv = 4;
	p.proto = proto;
	p.src[0] = 10, p.src[1] = 99, p.src[3] = src_last;
	p.dst[0] = 192, p.dst[1] = 0, p.dst[2] = 2, p.dst[3] = dst_last;
	p.sport = sport;
	p.dport = dport;
	p.tcp_flags = flags;
	p.ts_us = ts;
	return p;
}

static struct alert mkalert(const char *cls, int sev, int score, const struct pkt *p,
			    const char *subject, const char *ev)
{
	struct alert a = {.class = cls, .severity = sev, .score = score, .pkt = p,
			  .subject = subject, .detail = "d", .evidence = ev};
	return a;
}

static void test_aggregation(void)
{
	struct env e;
	char out[2048];
	struct pkt p = mkpkt(IPPROTO_UDP, 10, 1, 4000, 53, 0, T0);
	struct pkt q = mkpkt(IPPROTO_UDP, 11, 1, 4000, 53, 0, T0);

	env_open(&e, 300, 0);
	struct alert a = mkalert("dns_tunnel", 3, 60, &p, "t.example", "a1.t.example");
	CHECK_EQ(alerts_raise(e.al, &a, T0), 0);
	a.evidence = "a2.t.example";
	a.severity = 4;
	a.score = 90;
	CHECK_EQ(alerts_raise(e.al, &a, T0 + 10 * SEC), 0);
	a.evidence = "a1.t.example"; /* a repeat: not added twice */
	a.severity = 2;
	CHECK_EQ(alerts_raise(e.al, &a, T0 + 20 * SEC), 0);
	/* another subject, another source: rows of their own */
	struct alert b = mkalert("dns_tunnel", 3, 60, &p, "u.example", NULL);
	CHECK_EQ(alerts_raise(e.al, &b, T0 + 30 * SEC), 0);
	struct alert c = mkalert("dns_tunnel", 3, 60, &q, "t.example", NULL);
	CHECK_EQ(alerts_raise(e.al, &c, T0 + 40 * SEC), 0);
	/* not a class of the contract: refused */
	struct alert bad = mkalert("dns_tunel", 3, 60, &p, "t.example", NULL);
	CHECK_EQ(alerts_raise(e.al, &bad, T0), -1);
	bad.class = "dns_tunnel";
	bad.severity = 6;
	CHECK_EQ(alerts_raise(e.al, &bad, T0), -1);
	/* after the window, a new row for the same key */
	CHECK_EQ(alerts_raise(e.al, &a, T0 + 20 * SEC + 301 * SEC), 0);
	CHECK_EQ(alerts_get_stats(e.al)->rows, 4);
	CHECK_EQ(alerts_get_stats(e.al)->by_class[AC_DNS_TUNNEL], 4);
	CHECK_EQ(alerts_get_stats(e.al)->rejected, 2);
	env_close(&e);
	rows(&e, out, sizeof(out));
	CHECK_STR(out, "dns_tunnel|t.example|3|4|unknown|a1.t.example,a2.t.example;"
		       "dns_tunnel|u.example|1|3|unknown|;"
		       "dns_tunnel|t.example|1|3|unknown|;"
		       "dns_tunnel|t.example|1|2|unknown|a1.t.example");
	env_rm(&e);
}

static void test_evidence_cap(void)
{
	struct env e;
	char out[4096], ev[32];
	struct pkt p = mkpkt(IPPROTO_UDP, 10, 1, 4000, 53, 0, T0);

	env_open(&e, 300, 0);
	for (int i = 0; i < 9; i++) {
		snprintf(ev, sizeof(ev), "e%d", i);
		struct alert a = mkalert("doh", 3, 50, &p, "dns.google", ev);
		alerts_raise(e.al, &a, T0 + (uint64_t)i * SEC);
	}
	env_close(&e);
	rows(&e, out, sizeof(out));
	CHECK_STR(out, "doh|dns.google|9|3|unknown|e0,e1,e2,e3,e4");
	env_rm(&e);
}

/* Outcome from flows: a SYN answered by SYN-ACK, a SYN answered by RST, a SYN
 * never answered (blocked once the flow ends), a connection the server spoke
 * on and then reset (answered), a stated outcome. */
static void test_outcome(void)
{
	struct env e;
	char out[2048];

	env_open(&e, 300, 0);
	/* answered: SYN, raise, SYN-ACK */
	struct pkt s1 = mkpkt(IPPROTO_TCP, 10, 1, 40001, 443, TH_SYN, T0);
	flow_table_update(e.ft, &s1);
	struct alert a = mkalert("proxy_bypass", 4, 90, &s1, "192.0.2.1:443", NULL);
	alerts_raise(e.al, &a, T0);
	struct pkt r1 = mkpkt(IPPROTO_TCP, 10, 1, 40001, 443, TH_SYN | TH_ACK, T0 + 1000);
	memcpy(r1.src, s1.dst, 16);
	memcpy(r1.dst, s1.src, 16);
	r1.sport = 443, r1.dport = 40001;
	flow_table_update(e.ft, &r1);
	/* blocked: SYN, raise, RST */
	struct pkt s2 = mkpkt(IPPROTO_TCP, 10, 2, 40002, 443, TH_SYN, T0 + 2000);
	flow_table_update(e.ft, &s2);
	struct alert b = mkalert("proxy_bypass", 4, 90, &s2, "192.0.2.2:443", NULL);
	alerts_raise(e.al, &b, T0 + 2000);
	struct pkt r2 = r1;
	memcpy(r2.src, s2.dst, 16);
	r2.sport = 443, r2.dport = 40002, r2.tcp_flags = TH_RST | TH_ACK;
	r2.ack = s2.seq + 1;
	flow_table_update(e.ft, &r2);
	/* never answered: blocked when the flow ends (table freed) */
	struct pkt s3 = mkpkt(IPPROTO_TCP, 10, 3, 40003, 25, TH_SYN, T0 + 3000);
	flow_table_update(e.ft, &s3);
	struct alert c = mkalert("smtp", 3, 70, &s3, "192.0.2.3:25", NULL);
	alerts_raise(e.al, &c, T0 + 3000);
	/* three rows on one flow all settle (more than two per flow) */
	struct pkt s4 = mkpkt(IPPROTO_TCP, 10, 4, 40004, 80, TH_SYN, T0 + 4000);
	flow_table_update(e.ft, &s4);
	const char *cls[] = {"metadata_probe", "proxy_bypass", "ipv6_egress"};
	for (int i = 0; i < 3; i++) {
		struct alert d = mkalert(cls[i], 4, 90, &s4, "192.0.2.4:80", NULL);
		alerts_raise(e.al, &d, T0 + 4000);
	}
	struct pkt r4 = r1;
	memcpy(r4.src, s4.dst, 16);
	r4.sport = 80, r4.dport = 40004;
	flow_table_update(e.ft, &r4);
	/* answered, then reset: SYN, raise, SYN-ACK, a fatal TLS alert, RST.
	 * The server spoke, so the containment leaked whatever came next. */
	struct pkt s6 = mkpkt(IPPROTO_TCP, 10, 6, 40006, 853, TH_SYN, T0 + 6000);
	flow_table_update(e.ft, &s6);
	struct alert g = mkalert("doh", 3, 80, &s6, "192.0.2.6:853", NULL);
	alerts_raise(e.al, &g, T0 + 6000);
	struct pkt r6 = r1;
	memcpy(r6.src, s6.dst, 16);
	r6.sport = 853, r6.dport = 40006;
	flow_table_update(e.ft, &r6);
	static const uint8_t tls_alert[7] = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x78};
	r6.tcp_flags = TH_ACK | TH_PUSH, r6.seq = 1, r6.payload = tls_alert,
	r6.payload_len = sizeof(tls_alert), r6.ts_us = T0 + 7000;
	flow_table_update(e.ft, &r6);
	r6.tcp_flags = TH_RST | TH_ACK, r6.seq = 8, r6.payload = NULL, r6.payload_len = 0;
	flow_table_update(e.ft, &r6);
	/* RSTs the client's stack drops (no ACK; an ACK that is not its
	 * SYN's), then the SYN-ACK: answered. An ICMP error is tested in
	 * unit.icmp. */
	struct pkt s7 = mkpkt(IPPROTO_TCP, 10, 7, 40007, 443, TH_SYN, T0 + 8000);
	s7.seq = 1000;
	flow_table_update(e.ft, &s7);
	struct alert i7 = mkalert("proxy_bypass", 4, 90, &s7, "192.0.2.7:443", NULL);
	alerts_raise(e.al, &i7, T0 + 8000);
	struct pkt r7 = r1;
	memcpy(r7.src, s7.dst, 16);
	r7.sport = 443, r7.dport = 40007, r7.tcp_flags = TH_RST, r7.seq = 77;
	flow_table_update(e.ft, &r7);
	r7.tcp_flags = TH_RST | TH_ACK, r7.ack = 999;
	flow_table_update(e.ft, &r7);
	CHECK_EQ(flow_table_stats(e.ft)->rst_ignored, 2);
	CHECK(!(s7.flow->state & (FLOW_RST | FLOW_REPLY)));
	alerts_refresh(e.al);
	r7.tcp_flags = TH_SYN | TH_ACK, r7.ack = 1001, r7.seq = 5000;
	flow_table_update(e.ft, &r7);
	/* a RST with the SYN's ACK and text in it: refused all the same
	 * (the text is a diagnostic no stack delivers) */
	struct pkt s8 = mkpkt(IPPROTO_TCP, 10, 8, 40008, 443, TH_SYN, T0 + 9000);
	flow_table_update(e.ft, &s8);
	struct alert i8 = mkalert("proxy_bypass", 4, 90, &s8, "192.0.2.8:443", NULL);
	alerts_raise(e.al, &i8, T0 + 9000);
	struct pkt r8 = r1;
	static const uint8_t why[] = "connection refused by policy";
	memcpy(r8.src, s8.dst, 16);
	r8.sport = 443, r8.dport = 40008, r8.tcp_flags = TH_RST | TH_ACK, r8.ack = 1;
	r8.payload = why, r8.payload_len = sizeof(why) - 1;
	flow_table_update(e.ft, &r8);
	CHECK(s8.flow->state & FLOW_RST);
	CHECK(!(s8.flow->state & FLOW_DATA1));
	/* stated by the detector: a 403 from the proxy */
	struct pkt h = mkpkt(IPPROTO_TCP, 10, 5, 40005, 8080, TH_ACK, T0 + 5000);
	struct alert f = mkalert("proxy_denied", 3, 80, &h, "http://x.example/", NULL);
	f.outcome = "blocked";
	alerts_raise(e.al, &f, T0 + 5000);
	env_close(&e);
	rows(&e, out, sizeof(out));
	CHECK_STR(out, "proxy_bypass|192.0.2.1:443|1|4|answered|;"
		       "proxy_bypass|192.0.2.2:443|1|4|blocked|;"
		       "smtp|192.0.2.3:25|1|3|blocked|;"
		       "metadata_probe|192.0.2.4:80|1|4|answered|;"
		       "proxy_bypass|192.0.2.4:80|1|4|answered|;"
		       "ipv6_egress|192.0.2.4:80|1|4|answered|;"
		       "doh|192.0.2.6:853|1|3|answered|;"
		       "proxy_bypass|192.0.2.7:443|1|4|answered|;"
		       "proxy_bypass|192.0.2.8:443|1|4|blocked|;"
		       "proxy_denied|http://x.example/|1|3|blocked|");
	env_rm(&e);
}

/* Live: the outcome is settled once a second from the flows' state, before
 * they end and while packet time stands still; an answer after a refusal
 * still wins, as in a replay. */
static void test_refresh(void)
{
	struct env e;
	char out[1024];

	env_open(&e, 300, 0);
	struct pkt s1 = mkpkt(IPPROTO_TCP, 10, 1, 40001, 443, TH_SYN, T0);
	flow_table_update(e.ft, &s1);
	struct alert a = mkalert("proxy_bypass", 4, 90, &s1, "192.0.2.1:443", NULL);
	alerts_raise(e.al, &a, T0);
	struct pkt s2 = mkpkt(IPPROTO_TCP, 10, 2, 40002, 443, TH_SYN, T0);
	flow_table_update(e.ft, &s2);
	struct alert b = mkalert("proxy_bypass", 4, 90, &s2, "192.0.2.2:443", NULL);
	alerts_raise(e.al, &b, T0);
	alerts_refresh(e.al);
	store_flush(e.store);
	rows(&e, out, sizeof(out));
	CHECK_STR(out, "proxy_bypass|192.0.2.1:443|1|4|unknown|;proxy_bypass|192.0.2.2:443|1|4|unknown|");
	struct pkt r1 = mkpkt(IPPROTO_TCP, 10, 1, 443, 40001, TH_SYN | TH_ACK, T0 + 1000);
	memcpy(r1.src, s1.dst, 16);
	memcpy(r1.dst, s1.src, 16);
	flow_table_update(e.ft, &r1);
	struct pkt r2 = r1;
	memcpy(r2.src, s2.dst, 16);
	memcpy(r2.dst, s2.src, 16);
	r2.dport = 40002, r2.tcp_flags = TH_RST | TH_ACK;
	r2.ack = s2.seq + 1; /* the SYN's: a RST the client takes */
	flow_table_update(e.ft, &r2);
	alerts_refresh(e.al);
	store_flush(e.store);
	rows(&e, out, sizeof(out));
	CHECK_STR(out, "proxy_bypass|192.0.2.1:443|1|4|answered|;proxy_bypass|192.0.2.2:443|1|4|blocked|");
	/* the SYN-ACK after the RST (the initiator spoofed a RST with the
	 * right numbers, or a stack that took it anyway): answered */
	r2.tcp_flags = TH_SYN | TH_ACK;
	flow_table_update(e.ft, &r2);
	alerts_refresh(e.al);
	store_flush(e.store);
	rows(&e, out, sizeof(out));
	CHECK_STR(out, "proxy_bypass|192.0.2.1:443|1|4|answered|;proxy_bypass|192.0.2.2:443|1|4|answered|");
	env_close(&e);
	rows(&e, out, sizeof(out));
	CHECK_STR(out, "proxy_bypass|192.0.2.1:443|1|4|answered|;proxy_bypass|192.0.2.2:443|1|4|answered|");
	env_rm(&e);
}

/* A flow evicted for room (a flood of others) was not refused: its row
 * stays "unknown", where one whose flow ended unanswered is "blocked". */
static void test_evicted(void)
{
	struct env e;
	char out[512];
	struct flow_config cfg = {.max_flows = 2};

	env_open(&e, 300, 0);
	flow_table_free(e.ft);
	e.ft = flow_table_new(&cfg, env_end, e.al);
	if (!e.ft)
		abort();
	struct pkt s1 = mkpkt(IPPROTO_TCP, 10, 1, 40001, 443, TH_SYN, T0);
	flow_table_update(e.ft, &s1);
	struct alert a = mkalert("proxy_bypass", 4, 90, &s1, "192.0.2.1:443", NULL);
	alerts_raise(e.al, &a, T0);
	for (uint16_t port = 50000; port < 50004; port++) {
		struct pkt x = mkpkt(IPPROTO_TCP, 10, 9, port, 8080, TH_SYN, T0 + port);
		flow_table_update(e.ft, &x);
	}
	CHECK(flow_table_stats(e.ft)->evicted >= 1);
	env_close(&e);
	rows(&e, out, sizeof(out));
	CHECK_STR(out, "proxy_bypass|192.0.2.1:443|1|4|unknown|");
	env_rm(&e);
}

/* The open rows are bounded: the least recently hit is closed (and written). */
static void test_bound(void)
{
	struct env e;
	char subject[32];
	struct pkt p = mkpkt(IPPROTO_UDP, 10, 1, 4000, 53, 0, T0);

	env_open(&e, 300, 8);
	for (int i = 0; i < 100; i++) {
		snprintf(subject, sizeof(subject), "s%d.example", i);
		struct alert a = mkalert("doh", 3, 50, &p, subject, NULL);
		alerts_raise(e.al, &a, T0 + (uint64_t)i * 1000);
	}
	CHECK_EQ(alerts_get_stats(e.al)->rows, 100);
	CHECK_EQ(alerts_get_stats(e.al)->evicted, 92);
	/* a subject hit again after its row was closed opens a new row */
	struct alert a = mkalert("doh", 3, 50, &p, "s0.example", NULL);
	alerts_raise(e.al, &a, T0 + 200 * 1000);
	CHECK_EQ(alerts_get_stats(e.al)->rows, 101);
	/* ticks past the window close every row */
	alerts_tick(e.al, T0 + 1000 * SEC);
	env_close(&e);
	env_rm(&e);
	CHECK_EQ(alerts_class_index("websocket"), AC_WEBSOCKET);
	CHECK_EQ(alerts_class_index("nope"), -1);
	CHECK_STR(alerts_class_name(AC_PROXY_DENIED), "proxy_denied");
	alerts_free(NULL);
}

/* A doh alert on subject from u's source, at ts. */
static void raise_doh(struct env *e, const struct pkt *u, const char *subject, uint64_t ts)
{
	struct alert a = mkalert("doh", 3, 50, u, subject, NULL);
	alerts_raise(e->al, &a, ts);
}

/* The reply to s, with TCP flags, at ts. */
static struct pkt reply_to(const struct pkt *s, uint8_t flags, uint64_t ts)
{
	struct pkt r = *s;
	memcpy(r.src, s->dst, 16);
	memcpy(r.dst, s->src, 16);
	r.sport = s->dport, r.dport = s->sport;
	r.tcp_flags = flags;
	r.ts_us = ts;
	return r;
}

/* Write what is queued and compare the table with want. */
static void rows_now(struct env *e, const char *want)
{
	char out[1024];
	store_flush(e->store);
	rows(e, out, sizeof(out));
	CHECK_STR(out, want);
}

/* alerts_tick looks at a row only once it may close or a write is due (the
 * due times of alerts.c). Each step fails if a change that brings either
 * sooner leaves a row's due time as it was: a write waits for the tick a
 * second after the last one, a row whose flow settles closes at the next
 * tick past its window, and a shorter window closes rows at once. Closing
 * shows as a free slot: with two slots, new subjects evict nothing. */
static void test_tick_schedule(void)
{
	struct env e;
	char out[1024];
	struct pkt u = mkpkt(IPPROTO_UDP, 10, 1, 4000, 53, 0, T0);

	env_open(&e, 5, 2);
	raise_doh(&e, &u, "a.example", T0);            /* written at once */
	raise_doh(&e, &u, "a.example", T0 + SEC / 10); /* within the second: waits */
	alerts_tick(e.al, T0 + SEC / 2);
	rows_now(&e, "doh|a.example|1|3|unknown|");
	alerts_tick(e.al, T0 + SEC); /* a second after the write */
	rows_now(&e, "doh|a.example|2|3|unknown|");
	raise_doh(&e, &u, "a.example", T0 + SEC + SEC / 5); /* written at T0 + 1 s: waits */
	alerts_tick(e.al, T0 + SEC + SEC / 2);
	rows_now(&e, "doh|a.example|2|3|unknown|");
	alerts_tick(e.al, T0 + 2 * SEC);
	rows_now(&e, "doh|a.example|3|3|unknown|");

	/* b's flow stays open: past the window, a closes and b does not */
	struct pkt s1 = mkpkt(IPPROTO_TCP, 10, 2, 40001, 443, TH_SYN, T0 + 2 * SEC);
	flow_table_update(e.ft, &s1);
	struct alert b = mkalert("proxy_bypass", 4, 90, &s1, "192.0.2.2:443", NULL);
	alerts_raise(e.al, &b, T0 + 2 * SEC);
	alerts_tick(e.al, T0 + 3 * SEC);
	alerts_tick(e.al, T0 + 10 * SEC);
	raise_doh(&e, &u, "c.example", T0 + 10 * SEC);
	CHECK_EQ(alerts_get_stats(e.al)->evicted, 0);
	/* b's flow is answered and settled: b closes at the next tick */
	struct pkt r1 = reply_to(&s1, TH_SYN | TH_ACK, T0 + 10 * SEC);
	flow_table_update(e.ft, &r1);
	alerts_refresh(e.al);
	alerts_tick(e.al, T0 + 11 * SEC);
	raise_doh(&e, &u, "d.example", T0 + 11 * SEC);
	CHECK_EQ(alerts_get_stats(e.al)->evicted, 0);

	/* c and d wait for a 5 s window; a 1 s window closes them at once */
	alerts_tick(e.al, T0 + 12 * SEC);
	alerts_set_window(e.al, SEC);
	alerts_tick(e.al, T0 + 13 * SEC);
	raise_doh(&e, &u, "f.example", T0 + 13 * SEC);
	raise_doh(&e, &u, "g.example", T0 + 13 * SEC);
	CHECK_EQ(alerts_get_stats(e.al)->evicted, 0);
	CHECK_EQ(alerts_get_stats(e.al)->rows, 6);

	/* h has two flows, one answered: when the other ends, h's outcome
	 * stays "answered" (nothing to write), yet h may close now */
	alerts_tick(e.al, T0 + 20 * SEC);
	struct pkt s2 = mkpkt(IPPROTO_TCP, 3, 3, 40002, 443, TH_SYN, T0 + 20 * SEC);
	struct pkt s3 = mkpkt(IPPROTO_TCP, 3, 3, 40003, 443, TH_SYN, T0 + 20 * SEC);
	struct pkt *hs[] = {&s2, &s3};
	for (int i = 0; i < 2; i++) {
		struct alert h = mkalert("proxy_bypass", 4, 90, hs[i], "192.0.2.3:443", NULL);
		flow_table_update(e.ft, hs[i]);
		alerts_raise(e.al, &h, T0 + 20 * SEC);
	}
	struct pkt r2 = reply_to(&s2, TH_SYN | TH_ACK, T0 + 20 * SEC);
	flow_table_update(e.ft, &r2);
	alerts_refresh(e.al);
	alerts_tick(e.al, T0 + 25 * SEC); /* s3's flow is open: h stays */
	raise_doh(&e, &u, "i.example", T0 + 25 * SEC);
	CHECK_EQ(alerts_get_stats(e.al)->evicted, 0);
	flow_table_expire(e.ft, T0 + 400 * SEC); /* both flows end */
	alerts_tick(e.al, T0 + 400 * SEC);      /* h and i close */
	raise_doh(&e, &u, "j.example", T0 + 400 * SEC);
	raise_doh(&e, &u, "k.example", T0 + 400 * SEC);
	CHECK_EQ(alerts_get_stats(e.al)->evicted, 0);
	CHECK_EQ(alerts_get_stats(e.al)->rows, 10);
	env_close(&e);
	rows(&e, out, sizeof(out));
	CHECK_STR(out, "doh|a.example|3|3|unknown|;proxy_bypass|192.0.2.2:443|1|4|answered|;"
		       "doh|c.example|1|3|unknown|;doh|d.example|1|3|unknown|;"
		       "doh|f.example|1|3|unknown|;doh|g.example|1|3|unknown|;"
		       "proxy_bypass|192.0.2.3:443|2|4|answered|;doh|i.example|1|3|unknown|;"
		       "doh|j.example|1|3|unknown|;doh|k.example|1|3|unknown|");
	env_rm(&e);
}

/* A window as long as packet time goes never ends: no hit opens a new row
 * and no tick closes one, rather than the end wrapping round to the past. */
static void test_endless_window(void)
{
	struct env e;
	struct pkt u = mkpkt(IPPROTO_UDP, 10, 1, 4000, 53, 0, T0);

	env_open(&e, 5, 2);
	alerts_set_window(e.al, UINT64_MAX);
	raise_doh(&e, &u, "a.example", T0);
	raise_doh(&e, &u, "a.example", T0 + 100000 * SEC);
	CHECK_EQ(alerts_get_stats(e.al)->rows, 1);
	alerts_tick(e.al, T0 + 200000 * SEC);
	raise_doh(&e, &u, "b.example", T0 + 200000 * SEC);
	raise_doh(&e, &u, "c.example", T0 + 200000 * SEC);
	CHECK_EQ(alerts_get_stats(e.al)->evicted, 1); /* a was still open */
	env_close(&e);
	env_rm(&e);
}

/*
 * Subjects are names and addresses packets chose. 4000 subjects made to
 * fall in one bucket under the hash the table used to have (FNV-1a 32 from
 * 2166136261 ^ class over the source address, then the subject) must spread
 * under the keyed one, or every hit would walk 4000 rows; each is still
 * found again. A subject longer than a row keeps is found again too (it was
 * not: the lookup hashed all of it, the row only what it kept, so every hit
 * opened a new row).
 */
static void test_flood(void)
{
	static char subj[4000][COLLIDE_LEN];
	struct env e;
	struct pkt p = mkpkt(IPPROTO_UDP, 10, 1, 4000, 53, 0, T0);
	uint64_t s0 = 2166136261u ^ (uint32_t)AC_DOH;

	for (int i = 0; i < 4; i++)
		s0 = ((s0 ^ p.src[i]) * 16777619u) & 0xffffffffu;
	CHECK_EQ(collide_fnv(s0, 16777619u, 32, 13, subj, 4000), 4000);
	env_open(&e, 300, 4096); /* 8192 buckets */
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 4000; i++) {
			struct alert a = mkalert("doh", 3, 50, &p, subj[i], NULL);
			alerts_raise(e.al, &a, T0 + (uint64_t)i * 1000);
		}
	CHECK_EQ(alerts_get_stats(e.al)->rows, 4000);
	CHECK(alerts_chain_max(e.al) <= 12);
	printf("4000 subjects colliding under FNV-1a: the longest chain holds %u rows\n",
	       alerts_chain_max(e.al));

	char longsub[600];
	memset(longsub, 'x', sizeof(longsub) - 1);
	longsub[sizeof(longsub) - 1] = '\0';
	for (int i = 0; i < 3; i++) {
		struct alert a = mkalert("smtp", 3, 50, &p, longsub, NULL);
		CHECK_EQ(alerts_raise(e.al, &a, T0 + 5 * SEC), 0);
	}
	CHECK_EQ(alerts_get_stats(e.al)->rows, 4001);
	CHECK_EQ(alerts_get_stats(e.al)->by_class[AC_SMTP], 1);
	env_close(&e);
	env_rm(&e);
}

int main(void)
{
	test_aggregation();
	test_evidence_cap();
	test_outcome();
	test_refresh();
	test_evicted();
	test_bound();
	test_tick_schedule();
	test_endless_window();
	test_flood();
	return check_done();
}
