/*
 * test_flow.c - the flow table: direction, TCP state bits, stream
 * reassembly (order, holes, overlaps, wraparound, caps), packet-time expiry,
 * eviction, quoted-tuple lookup, the hash table under churn, and
 * boundedness under random input.
 * Packets are built as struct pkt values directly; no frames involved.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "csum.h"
#include "decode.h"
#include "flow.h"

enum { P_ICMP = 1, P_TCP = 6, P_UDP = 17, P_GRE = 47, P_ICMPV6 = 58 };

#define C_IP 0x0a63000au  /* 10.99.0.10, the client */
#define S_IP 0x5db8d822u  /* 93.184.216.34, the server */
#define SEC 1000000ull

/* Records on_end calls: how many, and how often each id ended. */
struct ends {
	uint64_t calls;
	unsigned by_id[64];
	uint64_t last_id;
};

static void on_end(void *user, struct flow *f)
{
	struct ends *e = user;
	e->calls++;
	e->last_id = f->id;
	if (f->id < 64)
		e->by_id[f->id]++;
}

static void put32(uint8_t *a, uint32_t v)
{
	a[0] = (uint8_t)(v >> 24);
	a[1] = (uint8_t)(v >> 16);
	a[2] = (uint8_t)(v >> 8);
	a[3] = (uint8_t)v;
}

static struct pkt mk(uint8_t proto, uint32_t s, uint16_t sp, uint32_t d, uint16_t dp,
		     uint64_t ts)
{
	struct pkt p;
	memset(&p, 0, sizeof(p));
	p.ipv = 4;
	p.proto = proto;
	p.ts_us = ts;
	put32(p.src, s);
	put32(p.dst, d);
	p.sport = sp;
	p.dport = dp;
	return p;
}

/* p seen from the other end. */
static struct pkt reversed(const struct pkt *p)
{
	struct pkt q = *p;
	memcpy(q.src, p->dst, 16);
	memcpy(q.dst, p->src, 16);
	q.sport = p->dport;
	q.dport = p->sport;
	return q;
}

/* One TCP segment; returns the flow and sets *dir. */
static struct flow *tcp(struct flow_table *ft, uint32_t s, uint16_t sp, uint32_t d,
			uint16_t dp, uint8_t flags, uint32_t seq, uint32_t ack,
			const char *data, uint64_t ts, int *dir)
{
	struct pkt p = mk(P_TCP, s, sp, d, dp, ts);
	p.tcp_flags = flags;
	p.seq = seq;
	p.ack = ack;
	p.payload = (const uint8_t *)data;
	p.payload_len = data ? strlen(data) : 0;
	struct flow *f = flow_table_update(ft, &p);
	if (dir)
		*dir = p.dir;
	CHECK(p.flow == f);
	return f;
}

/* Client to server data on the standard test connection. */
static struct flow *cdata(struct flow_table *ft, uint32_t seq, const char *data)
{
	return tcp(ft, C_IP, 40000, S_IP, 443, TH_ACK | TH_PUSH, seq, 1, data, 2 * SEC, NULL);
}

static int stream_is_n(const struct flow *f, int dir, const char *want, size_t n)
{
	const struct flow_stream *st = &f->st[dir];
	return st->len == n && (n == 0 || (st->buf && memcmp(st->buf, want, n) == 0));
}

static int stream_is(const struct flow *f, int dir, const char *want)
{
	return stream_is_n(f, dir, want, strlen(want));
}

/* ----------------------------------------------------------- direction */

static void test_direction(void)
{
	struct ends e = {0};
	struct flow_table *ft = flow_table_new(NULL, on_end, &e);
	struct flow *f, *g;
	int dir;
	uint8_t cip[4], sip[4];
	put32(cip, C_IP);
	put32(sip, S_IP);
	CHECK(ft != NULL);

	/* SYN first: the sender initiates. */
	f = tcp(ft, C_IP, 40000, S_IP, 443, TH_SYN, 100, 0, NULL, 1 * SEC, &dir);
	CHECK(f != NULL);
	CHECK_EQ(dir, 0);
	CHECK_EQ(f->id, 1);
	CHECK(memcmp(f->src, cip, 4) == 0);
	CHECK_EQ(f->sport, 40000);
	CHECK_EQ(f->dport, 443);
	g = tcp(ft, S_IP, 443, C_IP, 40000, TH_SYN | TH_ACK, 900, 101, NULL, 1 * SEC, &dir);
	CHECK(g == f);
	CHECK_EQ(dir, 1);
	g = tcp(ft, C_IP, 40000, S_IP, 443, TH_ACK, 101, 901, NULL, 1 * SEC, &dir);
	CHECK(g == f);
	CHECK_EQ(dir, 0);
	CHECK_EQ(f->pkts[0], 2);
	CHECK_EQ(f->pkts[1], 1);

	/* SYN+ACK first: its receiver is the initiator. */
	f = tcp(ft, S_IP, 443, C_IP, 40001, TH_SYN | TH_ACK, 900, 101, NULL, 1 * SEC, &dir);
	CHECK(f != NULL);
	CHECK_EQ(f->id, 2);
	CHECK_EQ(dir, 1);
	CHECK(memcmp(f->src, cip, 4) == 0);
	CHECK(memcmp(f->dst, sip, 4) == 0);
	CHECK_EQ(f->sport, 40001);
	CHECK_EQ(f->dport, 443);
	CHECK(!(f->state & FLOW_MIDSTREAM));
	CHECK(f->state & FLOW_SYNACK);
	g = tcp(ft, C_IP, 40001, S_IP, 443, TH_ACK | TH_PUSH, 101, 901, "GET", 1 * SEC, &dir);
	CHECK(g == f);
	CHECK_EQ(dir, 0);
	CHECK(f->state & FLOW_DATA0);
	CHECK(stream_is(f, 0, "GET")); /* ISN taken from the SYN+ACK's ack */

	/* Midstream: first packet without SYN; its sender initiates (between
	 * two ports below the ephemeral ranges) ... */
	f = tcp(ft, S_IP, 443, C_IP, 20002, TH_ACK, 5000, 7000, "xyz", 1 * SEC, &dir);
	CHECK_EQ(dir, 0);
	CHECK(f->state & FLOW_MIDSTREAM);
	CHECK(memcmp(f->src, sip, 4) == 0);
	CHECK(stream_is(f, 0, "xyz"));
	/* ... until a pure SYN from the other end turns it around. */
	g = tcp(ft, C_IP, 20002, S_IP, 443, TH_SYN, 6999, 0, NULL, 1 * SEC, &dir);
	CHECK(g == f);
	CHECK_EQ(dir, 0);
	CHECK(memcmp(f->src, cip, 4) == 0);
	CHECK_EQ(f->sport, 20002);
	CHECK(f->state & FLOW_DATA1);
	CHECK(!(f->state & FLOW_DATA0));
	CHECK(f->state & FLOW_REPLY);
	CHECK(stream_is(f, 1, "xyz"));
	CHECK_EQ(f->pkts[0], 1);
	CHECK_EQ(f->pkts[1], 1);

	/* Midstream, from a server port to an ephemeral one (a keepalive ACK
	 * of a connection whose flow expired): its receiver initiated, so the
	 * client's request after it is the initiator's stream */
	f = tcp(ft, S_IP, 8080, C_IP, 44100, TH_ACK, 9000, 3000, NULL, 1 * SEC, &dir);
	CHECK_EQ(dir, 1);
	CHECK(memcmp(f->src, cip, 4) == 0 && f->sport == 44100);
	tcp(ft, C_IP, 44100, S_IP, 8080, TH_ACK | TH_PUSH, 3000, 9000, "GET /", 1 * SEC, &dir);
	CHECK_EQ(dir, 0);
	CHECK(stream_is(f, 0, "GET /"));

	/* UDP: first sender initiates. */
	struct pkt p = mk(P_UDP, C_IP, 5353, S_IP, 53, 1 * SEC);
	f = flow_table_update(ft, &p);
	CHECK(f != NULL);
	CHECK_EQ(p.dir, 0);
	CHECK_EQ(f->id, 5); /* the fifth flow of the table */
	p = mk(P_UDP, S_IP, 53, C_IP, 5353, 1 * SEC);
	CHECK(flow_table_update(ft, &p) == f);
	CHECK_EQ(p.dir, 1);
	CHECK(f->state & FLOW_REPLY);
	CHECK(!(f->state & FLOW_MIDSTREAM));
	/* Other ports make another flow. */
	p = mk(P_UDP, C_IP, 5354, S_IP, 53, 1 * SEC);
	CHECK(flow_table_update(ft, &p) != f);

	/* ICMP echo keyed on the id; a reply seen first makes its receiver
	 * the initiator. */
	uint8_t echo[8] = {8, 0, 0, 0, 0x12, 0x34, 0, 1};
	p = mk(P_ICMP, C_IP, 0, S_IP, 0, 1 * SEC);
	p.l4 = echo;
	p.l4_len = sizeof(echo);
	f = flow_table_update(ft, &p);
	CHECK(f != NULL);
	CHECK_EQ(p.dir, 0);
	CHECK_EQ(f->sport, 0x1234);
	CHECK_EQ(f->dport, 0x1234);
	uint8_t reply[8] = {0, 0, 0, 0, 0x12, 0x34, 0, 1};
	p = mk(P_ICMP, S_IP, 0, C_IP, 0, 1 * SEC);
	p.l4 = reply;
	p.l4_len = sizeof(reply);
	CHECK(flow_table_update(ft, &p) == f);
	CHECK_EQ(p.dir, 1);
	uint8_t reply2[8] = {0, 0, 0, 0, 0x55, 0x55, 0, 1};
	p.l4 = reply2;
	g = flow_table_update(ft, &p);
	CHECK(g != NULL && g != f);
	CHECK_EQ(p.dir, 1);
	CHECK(memcmp(g->src, cip, 4) == 0);
	/* A truncated ICMP header is portless. */
	p = mk(P_ICMP, C_IP, 0, S_IP, 0, 1 * SEC);
	p.l4 = echo;
	p.l4_len = 5;
	g = flow_table_update(ft, &p);
	CHECK(g != NULL);
	CHECK_EQ(g->sport, 0);

	/* Other protocols: ports 0 whatever the packet says. */
	p = mk(P_GRE, C_IP, 77, S_IP, 88, 1 * SEC);
	f = flow_table_update(ft, &p);
	CHECK(f != NULL);
	CHECK_EQ(f->sport, 0);
	CHECK_EQ(f->dport, 0);
	p = mk(P_GRE, S_IP, 1, C_IP, 2, 1 * SEC);
	CHECK(flow_table_update(ft, &p) == f);
	CHECK_EQ(p.dir, 1);

	/* IPv6 UDP. */
	p = mk(P_UDP, 0, 1000, 0, 53, 1 * SEC);
	p.ipv = 6;
	memset(p.src, 0, 16);
	memset(p.dst, 0, 16);
	p.src[0] = 0xfd;
	p.src[15] = 1;
	p.dst[0] = 0x20;
	p.dst[15] = 2;
	f = flow_table_update(ft, &p);
	CHECK(f != NULL && f->ipv == 6);
	struct pkt q = p;
	memcpy(q.src, p.dst, 16);
	memcpy(q.dst, p.src, 16);
	q.sport = 53;
	q.dport = 1000;
	CHECK(flow_table_update(ft, &q) == f);
	CHECK_EQ(q.dir, 1);

	/* Not IP, and non-first fragments: no flow. */
	p = mk(P_UDP, C_IP, 1, S_IP, 2, 1 * SEC);
	p.ipv = 0;
	CHECK(flow_table_update(ft, &p) == NULL);
	CHECK(p.flow == NULL);
	p.ipv = 4;
	p.flags = PKT_FRAGMENT;
	CHECK(flow_table_update(ft, &p) == NULL);

	uint64_t created = flow_table_stats(ft)->created;
	CHECK_EQ(flow_table_stats(ft)->active, created);
	flow_table_free(ft);
	CHECK_EQ(e.calls, created);
	flow_table_free(NULL);
}

/* ---------------------------------------------------------- state bits */

static void test_state(void)
{
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct flow *f;
	int dir;

	/* Answered connection with data both ways and FIN both ways. */
	f = tcp(ft, C_IP, 41000, S_IP, 80, TH_SYN, 1000, 0, NULL, SEC, &dir);
	CHECK_EQ(f->state, FLOW_SYN);
	tcp(ft, S_IP, 80, C_IP, 41000, TH_SYN | TH_ACK, 5000, 1001, NULL, SEC, &dir);
	CHECK_EQ(f->state, FLOW_SYN | FLOW_SYNACK | FLOW_REPLY);
	tcp(ft, C_IP, 41000, S_IP, 80, TH_ACK, 1001, 5001, NULL, SEC, &dir);
	tcp(ft, C_IP, 41000, S_IP, 80, TH_ACK | TH_PUSH, 1001, 5001, "GET / HTTP/1.0\r\n\r\n",
	    SEC, &dir);
	tcp(ft, S_IP, 80, C_IP, 41000, TH_ACK | TH_PUSH, 5001, 1019, "HTTP/1.0 200 OK\r\n",
	    SEC, &dir);
	CHECK_EQ(f->state, FLOW_SYN | FLOW_SYNACK | FLOW_REPLY | FLOW_DATA0 | FLOW_DATA1);
	CHECK(stream_is(f, 0, "GET / HTTP/1.0\r\n\r\n"));
	CHECK(stream_is(f, 1, "HTTP/1.0 200 OK\r\n"));
	CHECK_EQ(f->bytes[0], 18);
	CHECK_EQ(f->bytes[1], 17);
	tcp(ft, S_IP, 80, C_IP, 41000, TH_ACK | TH_FIN, 5018, 1019, NULL, SEC, &dir);
	CHECK(f->state & FLOW_FIN);
	tcp(ft, C_IP, 41000, S_IP, 80, TH_ACK | TH_FIN, 1019, 5019, NULL, SEC, &dir);
	CHECK(!(f->state & (FLOW_RST | FLOW_RST_INIT | FLOW_MIDSTREAM | FLOW_UNREACH)));

	/* The same connection again, every packet a copy (dumpcap on two
	 * interfaces writes each one's packets in a block of its own): its SYN
	 * carries the closed flow's ISN, so it is that flow, and its data is
	 * old bytes, reassembled once. */
	uint64_t first_id = f->id, created = flow_table_stats(ft)->created;
	struct flow *g = tcp(ft, C_IP, 41000, S_IP, 80, TH_SYN, 1000, 0, NULL, 2 * SEC, &dir);
	CHECK(g == f && g->id == first_id);
	tcp(ft, S_IP, 80, C_IP, 41000, TH_SYN | TH_ACK, 5000, 1001, NULL, 2 * SEC, &dir);
	tcp(ft, C_IP, 41000, S_IP, 80, TH_ACK | TH_PUSH, 1001, 5001, "GET / HTTP/1.0\r\n\r\n",
	    2 * SEC, &dir);
	tcp(ft, S_IP, 80, C_IP, 41000, TH_ACK | TH_PUSH, 5001, 1019, "HTTP/1.0 200 OK\r\n",
	    2 * SEC, &dir);
	CHECK(stream_is(f, 0, "GET / HTTP/1.0\r\n\r\n"));
	CHECK(stream_is(f, 1, "HTTP/1.0 200 OK\r\n"));
	CHECK_EQ(flow_table_stats(ft)->created, created);

	/* SYN with no reply (retransmitted). */
	f = tcp(ft, C_IP, 41001, S_IP, 25, TH_SYN, 77, 0, NULL, SEC, &dir);
	tcp(ft, C_IP, 41001, S_IP, 25, TH_SYN, 77, 0, NULL, 2 * SEC, &dir);
	CHECK_EQ(f->state, FLOW_SYN);
	CHECK_EQ(f->pkts[0], 2);
	CHECK_EQ(f->pkts[1], 0);
	CHECK_EQ(f->last_us, 2 * SEC);
	CHECK_EQ(f->first_us, SEC);

	/* RST reply: refused. */
	f = tcp(ft, C_IP, 41002, S_IP, 22, TH_SYN, 77, 0, NULL, SEC, &dir);
	tcp(ft, S_IP, 22, C_IP, 41002, TH_RST | TH_ACK, 0, 78, NULL, SEC, &dir);
	CHECK_EQ(f->state, FLOW_SYN | FLOW_RST | FLOW_REPLY);

	/* RST from the initiator. */
	f = tcp(ft, C_IP, 41003, S_IP, 22, TH_SYN, 77, 0, NULL, SEC, &dir);
	tcp(ft, C_IP, 41003, S_IP, 22, TH_RST, 78, 0, NULL, SEC, &dir);
	CHECK_EQ(f->state, FLOW_SYN | FLOW_RST_INIT);

	/* Port reuse: a pure SYN on a closed flow starts a new flow. */
	uint64_t old_id = f->id;
	f = tcp(ft, C_IP, 41003, S_IP, 22, TH_SYN, 9000, 0, NULL, SEC, &dir);
	CHECK(f->id != old_id);
	CHECK_EQ(f->state, FLOW_SYN);
	CHECK_EQ(flow_table_stats(ft)->expired, 1);

	/* Port reuse after a half close (the other FIN not captured): a SYN
	 * of another ISN is a new connection; one with the old ISN (a copy)
	 * is not */
	struct flow *h = tcp(ft, C_IP, 41004, S_IP, 80, TH_SYN, 100, 0, NULL, SEC, &dir);
	tcp(ft, S_IP, 80, C_IP, 41004, TH_SYN | TH_ACK, 300, 101, NULL, SEC, &dir);
	tcp(ft, C_IP, 41004, S_IP, 80, TH_ACK | TH_PUSH, 101, 301, "GET /a", SEC, &dir);
	tcp(ft, C_IP, 41004, S_IP, 80, TH_ACK | TH_FIN, 107, 301, NULL, SEC, &dir);
	CHECK(tcp(ft, C_IP, 41004, S_IP, 80, TH_SYN, 100, 0, NULL, SEC, &dir) == h);
	old_id = h->id;
	h = tcp(ft, C_IP, 41004, S_IP, 80, TH_SYN, 90000, 0, NULL, SEC, &dir);
	CHECK(h->id != old_id);
	tcp(ft, S_IP, 80, C_IP, 41004, TH_SYN | TH_ACK, 5000, 90001, NULL, SEC, &dir);
	tcp(ft, C_IP, 41004, S_IP, 80, TH_ACK | TH_PUSH, 90001, 5001, "GET /b", SEC, &dir);
	CHECK(stream_is(h, 0, "GET /b"));
	CHECK_EQ(flow_table_stats(ft)->expired, 2);

	/* The UNREACH bit is the ICMP analyzer's to set; nothing clears it. */
	f->state |= FLOW_UNREACH;
	tcp(ft, C_IP, 41003, S_IP, 22, TH_SYN, 9000, 0, NULL, SEC, &dir);
	CHECK(f->state & FLOW_UNREACH);

	flow_table_free(ft);
}

/* ---------------------------------------------------------- reassembly */

/* A fresh table and a connection whose client ISN makes byte 0 seq isn. */
static struct flow *conn(struct flow_table *ft, uint32_t isn)
{
	struct flow *f = tcp(ft, C_IP, 40000, S_IP, 443, TH_SYN, isn - 1, 0, NULL, SEC, NULL);
	tcp(ft, S_IP, 443, C_IP, 40000, TH_SYN | TH_ACK, 1000, isn, NULL, SEC, NULL);
	CHECK(f != NULL && f->st[0].isn == isn);
	return f;
}

/*
 * A SYN or SYN-ACK with another ISN after the handshake (a decoy: Linux
 * answers it with a challenge ACK and keeps the connection) renumbers
 * neither direction: the SYN-ACK that acknowledged a SYN the client sent,
 * and the client's ACK of the server's SYN-ACK, fixed them. Before that,
 * a SYN-ACK still picks among SYNs of other ISNs.
 */
static void test_reasm_decoy_isn(void)
{
	for (int how = 0; how < 4; how++) {
		struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
		struct flow *f = conn(ft, 1000); /* SYN 999, SYN-ACK 1000/ack 1000 */

		if (how == 0) /* a client SYN with another ISN */
			tcp(ft, C_IP, 40000, S_IP, 443, TH_SYN, 500000, 0, NULL, SEC, NULL);
		else if (how == 1) /* a SYN-ACK acknowledging another ISN */
			tcp(ft, S_IP, 443, C_IP, 40000, TH_SYN | TH_ACK, 1000, 888888, NULL, SEC,
			    NULL);
		else if (how == 2) /* the client's ACK, then a server SYN-ACK anew */
			tcp(ft, C_IP, 40000, S_IP, 443, TH_ACK, 1000, 1001, NULL, SEC, NULL),
			tcp(ft, S_IP, 443, C_IP, 40000, TH_SYN | TH_ACK, 77000, 1000, NULL, SEC,
			    NULL);
		else /* both: a decoy SYN, then a SYN-ACK for it */
			tcp(ft, C_IP, 40000, S_IP, 443, TH_SYN, 500000, 0, NULL, SEC, NULL),
			tcp(ft, S_IP, 443, C_IP, 40000, TH_SYN | TH_ACK, 1000, 500001, NULL, SEC,
			    NULL);
		CHECK_EQ(f->st[0].isn, 1000);
		CHECK_EQ(f->st[1].isn, 1001);
		cdata(ft, 1000, "CONNECT evil.example:443");
		CHECK(stream_is(f, 0, "CONNECT evil.example:443"));
		tcp(ft, S_IP, 443, C_IP, 40000, TH_ACK | TH_PUSH, 1001, 1024, "HTTP/1.1 200", SEC,
		    NULL);
		CHECK(stream_is(f, 1, "HTTP/1.1 200"));
		flow_table_free(ft);
	}
	/* before the SYN-ACK, the SYN-ACK decides: the real SYN, then a
	 * decoy with another ISN, then the SYN-ACK for the real one */
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct flow *f = tcp(ft, C_IP, 40000, S_IP, 443, TH_SYN, 999, 0, NULL, SEC, NULL);
	tcp(ft, C_IP, 40000, S_IP, 443, TH_SYN, 500000, 0, NULL, SEC, NULL);
	CHECK_EQ(f->st[0].isn, 500001);
	tcp(ft, S_IP, 443, C_IP, 40000, TH_SYN | TH_ACK, 1000, 1000, NULL, SEC, NULL);
	CHECK_EQ(f->st[0].isn, 1000);
	/* ... and a SYN-ACK for the decoy after it changes nothing */
	tcp(ft, S_IP, 443, C_IP, 40000, TH_SYN | TH_ACK, 1000, 500001, NULL, SEC, NULL);
	CHECK_EQ(f->st[0].isn, 1000);
	flow_table_free(ft);
}

static void test_reasm_basic(void)
{
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct flow *f = conn(ft, 1000);

	/* In order. */
	CHECK(f->st[0].buf == NULL); /* lazy */
	cdata(ft, 1000, "hello ");
	CHECK(f->st[0].buf != NULL);
	cdata(ft, 1006, "world");
	CHECK(stream_is(f, 0, "hello world"));
	CHECK_EQ(f->st[0].consumed, 0);

	/* Retransmission, even with other bytes: the first copy wins. */
	cdata(ft, 1000, "HELLO ");
	cdata(ft, 1006, "WORLD");
	CHECK(stream_is(f, 0, "hello world"));
	/* Overlap with the in-order data: only the new tail is taken. */
	cdata(ft, 1009, "LDXY!");
	CHECK(stream_is(f, 0, "hello worldXY!"));
	/* A segment starting before the ISN (old data) is trimmed. */
	cdata(ft, 995, "ZZZZZHELLO WORLDxy!?");
	CHECK(stream_is(f, 0, "hello worldXY!?"));
	/* A bare ACK or FIN adds nothing. */
	tcp(ft, C_IP, 40000, S_IP, 443, TH_ACK | TH_FIN, 1014, 1, NULL, SEC, NULL);
	CHECK(stream_is(f, 0, "hello worldXY!?"));
	/* RST payload is not stream data. */
	tcp(ft, C_IP, 40000, S_IP, 443, TH_RST, 1014, 1, "rst-text", SEC, NULL);
	CHECK(stream_is(f, 0, "hello worldXY!?"));
	flow_table_free(ft);

	/* Reverse order of 5 segments. */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 500);
	static const char *const seg[5] = {"AAAA", "BBBB", "CCCC", "DDDD", "EEEE"};
	for (int i = 4; i >= 1; i--) {
		cdata(ft, 500 + 4 * (uint32_t)i, seg[i]);
		CHECK_EQ(f->st[0].len, 0);
		CHECK_EQ(f->st[0].ooo_n, 1); /* adjacent ranges merge */
	}
	cdata(ft, 500, seg[0]);
	CHECK(stream_is(f, 0, "AAAABBBBCCCCDDDDEEEE"));
	CHECK_EQ(f->st[0].ooo_n, 0);
	CHECK_EQ(flow_table_stats(ft)->ooo_dropped, 0);
	flow_table_free(ft);

	/* Overlapping out-of-order segments, as Linux's out-of-order queue
	 * takes them: the copy that starts lower wins, at the same start the
	 * one that reaches further; a segment in order wins over the held
	 * bytes it overlaps. So a decoy sent ahead gives way to the real bytes
	 * sent after it from lower down, in order or not. */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	cdata(ft, 11, "1111");          /* [10,14) */
	cdata(ft, 9, "22222222");       /* [8,16): starts lower, covers it */
	cdata(ft, 21, "33");            /* [20,22): a separate range */
	CHECK_EQ(f->st[0].ooo_n, 2);
	cdata(ft, 17, "4444444");       /* [16,23): joins both, covers [20,22) */
	CHECK_EQ(f->st[0].ooo_n, 1);
	cdata(ft, 1, "abcdefghijk");    /* [0,11): in order, over held 8, 9, 10 */
	CHECK(stream_is(f, 0, "abcdefghijk222224444444"));
	CHECK_EQ(f->st[0].ooo_n, 0);
	flow_table_free(ft);

	/* ... and where the held copy starts lower, or at the same place and
	 * reaches as far, it stays */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	cdata(ft, 9, "11111111");       /* [8,16) */
	cdata(ft, 11, "222222222");     /* [10,19): only 16..18 new */
	cdata(ft, 31, "3333");          /* [30,34) */
	cdata(ft, 31, "44");            /* [30,32): same start, shorter: kept */
	cdata(ft, 31, "5555");          /* [30,34): same start and end: kept */
	cdata(ft, 41, "66");            /* [40,42) */
	cdata(ft, 41, "7777");          /* [40,44): same start, further: wins */
	cdata(ft, 1, "abcdefgh");       /* [0,8) */
	CHECK(stream_is(f, 0, "abcdefgh11111111222"));
	cdata(ft, 20, "ijklmnopqrs");   /* [19,30) */
	CHECK(stream_is(f, 0, "abcdefgh11111111222ijklmnopqrs3333"));
	cdata(ft, 35, "tuvwxy");        /* [34,40) */
	CHECK(stream_is(f, 0, "abcdefgh11111111222ijklmnopqrs3333tuvwxy7777"));
	flow_table_free(ft);

	/* ... and per held segment, not per range (FINDINGS R21-F6): a
	 * segment that starts inside a range of two held segments, below the
	 * later one, covers that one and wins its bytes, as Linux delivers
	 * the held segments lowest start first; the first one's stay */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	cdata(ft, 16, "AAAAAAAAAAAA");           /* [15,27) */
	cdata(ft, 24, "bbbbbbbbbbbb");           /* [23,35): 27..34 new */
	CHECK_EQ(f->st[0].ooo_n, 1);
	cdata(ft, 23, "cccccccccccccccccccccc"); /* [22,44): covers [23,35) */
	cdata(ft, 1, "0123456789abcde");         /* [0,15) */
	CHECK(stream_is(f, 0, "0123456789abcdeAAAAAAAAAAAAccccccccccccccccc"));
	/* a segment inside one held segment is a duplicate even where a
	 * later one overlaps it */
	cdata(ft, 61, "DDDDDDDDDD");             /* [60,70) */
	cdata(ft, 66, "eeeeeeeeee");             /* [65,75) */
	cdata(ft, 62, "ffff");                   /* [61,65): inside [60,70) */
	cdata(ft, 64, "gggggg");                 /* [63,69): inside [60,70) */
	cdata(ft, 45, "hhhhhhhhhhhhhhh");        /* [44,59) */
	cdata(ft, 60, "i");                      /* [59,60) */
	CHECK(stream_is(f, 0, "0123456789abcdeAAAAAAAAAAAAccccccccccccccccc"
			      "hhhhhhhhhhhhhhhiDDDDDDDDDDeeeee"));
	flow_table_free(ft);

	/* Midstream: the first data segment fixes the ISN. */
	ft = flow_table_new(NULL, NULL, NULL);
	f = tcp(ft, C_IP, 40000, S_IP, 443, TH_ACK, 7777, 1, "abc", SEC, NULL);
	CHECK_EQ(f->st[0].isn, 7777);
	cdata(ft, 7780, "def");
	CHECK(stream_is(f, 0, "abcdef"));
	/* Data carried on the SYN+ACK starts after the SYN's number. */
	tcp(ft, S_IP, 443, C_IP, 40001, TH_SYN | TH_ACK, 99, 1, "srv", SEC, NULL);
	struct flow *g = tcp(ft, S_IP, 443, C_IP, 40001, TH_ACK, 103, 1, "!", SEC, NULL);
	CHECK(stream_is(g, 1, "srv!"));
	flow_table_free(ft);
}

static uint64_t rng_next(uint64_t *s);

/*
 * Linux's out-of-order queue, as a reference (tcp_data_queue_ofo and
 * tcp_ofo_queue over lib/rbtree.c): held segments in a red-black tree by
 * start, pointers and recursion here where the table has indices and loops.
 * A segment holds the version of the message each byte came from; one
 * appended to another (coalesced) keeps its own bytes in it. A Python
 * replica of this replayed the three recordings of pcaps/review21/frag
 * (tcp_fuzz, tcp_urg, tcp_tree: 500 connections to Linux 6.18) and agreed
 * with the server on every byte; without the coalescing it did not on 27.
 */
struct ofo_node {
	struct ofo_node *kid[2], *up; /* kid[0] left, kid[1] right */
	int red;
	uint32_t s, e;
	char bytes[64]; /* bytes[p] for p in [s, e) */
};

struct ofo_ref {
	struct ofo_node pool[64], *root;
	unsigned used;
	uint32_t nxt;
	char out[128];
};

static char ofo_byte(int v, uint32_t p)
{
	return v == 0 ? (char)('a' + p % 26) : v == 1 ? (char)('A' + p % 26) : (char)('0' + p % 10);
}

static int ofo_is_red(const struct ofo_node *x)
{
	return x && x->red;
}

static int ofo_side(const struct ofo_node *x)
{
	return x->up->kid[1] == x;
}

static void ofo_put(struct ofo_ref *r, struct ofo_node *up, struct ofo_node *old, struct ofo_node *x)
{
	if (!up)
		r->root = x;
	else
		up->kid[up->kid[1] == old] = x;
	if (x)
		x->up = up;
}

/* Rotate x's child on side d up into x's place: the child takes x's
 * colour, x the colour given. */
static struct ofo_node *ofo_rotate(struct ofo_ref *r, struct ofo_node *x, int d, int red)
{
	struct ofo_node *c = x->kid[d], *in = c->kid[!d];

	ofo_put(r, x->up, x, c);
	c->kid[!d] = x;
	x->up = c;
	x->kid[d] = in;
	if (in)
		in->up = x;
	c->red = x->red;
	x->red = red;
	return c;
}

static void ofo_fix_insert(struct ofo_ref *r, struct ofo_node *x)
{
	struct ofo_node *p = x->up;

	if (!p) {
		x->red = 0;
		return;
	}
	if (!p->red)
		return;
	struct ofo_node *g = p->up;
	int d = ofo_side(p);
	if (ofo_is_red(g->kid[!d])) {
		g->kid[!d]->red = 0;
		p->red = 0;
		g->red = 1;
		ofo_fix_insert(r, g);
		return;
	}
	if (p->kid[!d] == x) {
		ofo_rotate(r, p, !d, 1);
		p = x;
	}
	if (p->kid[!d])
		p->kid[!d]->red = 0; /* lib/rbtree.c paints the subtree it moves black */
	ofo_rotate(r, g, d, 1);
}

/* The paths through p on side d lack a black node. */
static void ofo_fix_erase(struct ofo_ref *r, struct ofo_node *p, int d)
{
	struct ofo_node *sib = p->kid[!d];

	if (sib->red) {
		if (sib->kid[d])
			sib->kid[d]->red = 0;
		ofo_rotate(r, p, !d, 1);
		sib = p->kid[!d];
	}
	if (!ofo_is_red(sib->kid[!d])) {
		if (!ofo_is_red(sib->kid[d])) {
			sib->red = 1;
			if (p->red)
				p->red = 0;
			else if (p->up)
				ofo_fix_erase(r, p->up, ofo_side(p));
			return;
		}
		if (sib->kid[d]->kid[!d])
			sib->kid[d]->kid[!d]->red = 0;
		ofo_rotate(r, sib, d, 1);
		sib = p->kid[!d];
	}
	sib->kid[!d]->red = 0;
	ofo_rotate(r, p, !d, 0);
}

static void ofo_erase(struct ofo_ref *r, struct ofo_node *x)
{
	struct ofo_node *up = x->up, *fix = NULL;
	int side = up ? ofo_side(x) : 0;

	if (!x->kid[0] || !x->kid[1]) {
		struct ofo_node *c = x->kid[0] ? x->kid[0] : x->kid[1];
		ofo_put(r, up, x, c);
		if (c)
			c->red = 0; /* a lone child is red under a black node */
		else if (!x->red && up)
			fix = up;
	} else {
		struct ofo_node *y = x->kid[1];
		while (y->kid[0])
			y = y->kid[0];
		struct ofo_node *c = y->kid[1], *yp = y->up == x ? y : y->up;
		int yside = y->up == x ? 1 : 0;
		if (y->up != x) {
			ofo_put(r, y->up, y, c);
			y->kid[1] = x->kid[1];
			y->kid[1]->up = y;
		}
		y->kid[0] = x->kid[0];
		y->kid[0]->up = y;
		ofo_put(r, up, x, y);
		int y_red = y->red;
		y->red = x->red;
		if (c)
			c->red = 0;
		else if (!y_red)
			fix = yp, side = yside;
	}
	if (fix)
		ofo_fix_erase(r, fix, side);
}

static struct ofo_node *ofo_edge(struct ofo_node *x, int d)
{
	while (x && x->kid[d])
		x = x->kid[d];
	return x;
}

static struct ofo_node *ofo_after(struct ofo_node *x)
{
	if (x->kid[1])
		return ofo_edge(x->kid[1], 0);
	while (x->up && x->up->kid[1] == x)
		x = x->up;
	return x->up;
}

static void ofo_take(struct ofo_node *x, uint32_t s, uint32_t e, int v)
{
	for (uint32_t p = s; p < e; p++)
		x->bytes[p] = ofo_byte(v, p);
	x->e = e;
}

static void ofo_link(struct ofo_ref *r, struct ofo_node *up, int d, uint32_t s, uint32_t e, int v)
{
	struct ofo_node *x = &r->pool[r->used++];

	memset(x, 0, sizeof(*x));
	x->s = s;
	x->red = 1;
	ofo_take(x, s, e, v);
	if (up) {
		up->kid[d] = x;
		x->up = up;
	} else {
		r->root = x;
	}
	ofo_fix_insert(r, x);
	for (struct ofo_node *m; (m = ofo_after(x)) && x->e > m->s && x->e >= m->e;)
		ofo_erase(r, m);
}

static void ofo_add(struct ofo_ref *r, uint32_t s, uint32_t e, int v)
{
	if (e <= r->nxt)
		return;
	if (s <= r->nxt) {
		for (uint32_t p = r->nxt; p < e; p++)
			r->out[p] = ofo_byte(v, p);
		r->nxt = e;
		struct ofo_node *x; /* deliver what is held, lowest start first */
		while ((x = ofo_edge(r->root, 0)) && x->s <= r->nxt) {
			ofo_erase(r, x);
			for (uint32_t p = r->nxt; p < x->e; p++)
				r->out[p] = x->bytes[p];
			if (x->e > r->nxt)
				r->nxt = x->e;
		}
		return;
	}
	struct ofo_node *last = ofo_edge(r->root, 1);
	if (last && s == last->e) {
		ofo_take(last, s, e, v);
		return;
	}
	if (!last || s > last->e) {
		ofo_link(r, last, 1, s, e, v);
		return;
	}
	struct ofo_node *x = r->root, *up = NULL;
	int d = 0;
	while (x) {
		up = x;
		d = s >= x->s;
		if (d && s < x->e) {
			if (e <= x->e)
				return; /* all its bytes are held */
			if (s == x->s) { /* it replaces x */
				ofo_take(x, s, e, v);
				for (struct ofo_node *m; (m = ofo_after(x)) && x->e > m->s && x->e >= m->e;)
					ofo_erase(r, m);
				return;
			}
		} else if (d && s == x->e) {
			ofo_take(x, s, e, v);
			return;
		}
		x = x->kid[d];
	}
	ofo_link(r, up, d, s, e, v);
}

/*
 * Random overlapping segments of a 60-byte message in three versions
 * (each byte tells its version), then the message again cut at random
 * places into pieces of random versions in random order: the stream must
 * be what the reference queue delivers. The kernel agrees with the
 * reference (pcap.review21.frag.tcp_fuzz: 150 connections recorded
 * against Linux 6.18); the range-only rule before differed in 10.
 */
static void test_reasm_random(void)
{
	struct flow_table *ft = NULL;
	uint64_t rs = 0x0f0f1234abcdull;
	unsigned bad = 0, trials = 20000;

	for (unsigned t = 0; t < trials; t++) {
		struct ofo_ref ref;
		uint32_t segs[16][3], cuts[6], n = 60, ns = 0;
		uint16_t port = (uint16_t)(20000 + t % 1000);

		if (t % 1000 == 0) {
			if (ft)
				flow_table_free(ft);
			ft = flow_table_new(NULL, NULL, NULL);
		}
		memset(&ref, 0, sizeof(ref));
		for (unsigned k = 2 + (unsigned)(rng_next(&rs) % 6); k > 0; k--) {
			uint32_t off = (uint32_t)(rng_next(&rs) % n);
			uint32_t max = n - off < 20 ? n - off : 20;
			segs[ns][0] = off;
			segs[ns][1] = off + 1 + (uint32_t)(rng_next(&rs) % max);
			segs[ns][2] = (uint32_t)(rng_next(&rs) % 3);
			ns++;
		}
		unsigned nc = 1 + (unsigned)(rng_next(&rs) % 5), np = 0;
		for (unsigned k = 0; k < nc; k++)
			cuts[k] = 1 + (uint32_t)(rng_next(&rs) % (n - 1));
		for (unsigned a = 0; a < nc; a++) /* sort */
			for (unsigned b = a + 1; b < nc; b++)
				if (cuts[b] < cuts[a]) {
					uint32_t x = cuts[a];
					cuts[a] = cuts[b], cuts[b] = x;
				}
		uint32_t prev = 0;
		for (unsigned k = 0; k <= nc; k++) {
			uint32_t end = k < nc ? cuts[k] : n;
			if (end > prev) {
				segs[ns + np][0] = prev;
				segs[ns + np][1] = end;
				segs[ns + np][2] = (uint32_t)(rng_next(&rs) % 3);
				np++;
			}
			prev = end;
		}
		for (unsigned k = np; k > 1; k--) { /* shuffle the pieces */
			unsigned j = (unsigned)(rng_next(&rs) % k);
			uint32_t x[3];
			memcpy(x, segs[ns + k - 1], sizeof(x));
			memcpy(segs[ns + k - 1], segs[ns + j], sizeof(x));
			memcpy(segs[ns + j], x, sizeof(x));
		}
		struct flow *f = tcp(ft, C_IP, port, S_IP, 80, TH_SYN, 999, 0, NULL, SEC, NULL);
		tcp(ft, S_IP, 80, C_IP, port, TH_SYN | TH_ACK, 5000, 1000, NULL, SEC, NULL);
		for (unsigned k = 0; k < ns + np; k++) {
			char d[64];
			uint32_t a = segs[k][0], b = segs[k][1];
			for (uint32_t p = a; p < b; p++)
				d[p - a] = ofo_byte((int)segs[k][2], p);
			d[b - a] = 0;
			tcp(ft, C_IP, port, S_IP, 80, TH_ACK | TH_PUSH, 1000 + a, 5001, d, 2 * SEC, NULL);
			ofo_add(&ref, a, b, (int)segs[k][2]);
		}
		bad += ref.nxt != n || !stream_is_n(f, 0, ref.out, n);
		tcp(ft, C_IP, port, S_IP, 80, TH_RST | TH_ACK, 1000 + n, 5001, NULL, 2 * SEC, NULL);
	}
	CHECK_EQ(bad, 0);
	flow_table_free(ft);
}

static void test_reasm_wrap(void)
{
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct flow *f = conn(ft, 0xfffffff8u);

	cdata(ft, 0xfffffff8u, "0123");
	cdata(ft, 0x00000000u, "89ab");   /* out of order, past the wrap */
	CHECK_EQ(f->st[0].len, 4);
	cdata(ft, 0xfffffffcu, "4567");   /* fills [4,8), crosses to 0 */
	cdata(ft, 0xfffffffeu, "XXXXXX"); /* retransmit across the wrap */
	CHECK(stream_is(f, 0, "0123456789ab"));
	cdata(ft, 0x00000004u, "cdef");
	CHECK(stream_is(f, 0, "0123456789abcdef"));
	/* A segment from before the ISN (far in serial terms) is old data. */
	cdata(ft, 0xfffffff0u, "oldoldol");
	CHECK(stream_is(f, 0, "0123456789abcdef"));
	flow_table_free(ft);
}

/*
 * Hundreds of out-of-order segments at once (R22-F5): Linux's queue held
 * 4,000 one-byte segments apart, and read every head whole; the table
 * holds up to ooo_max ranges (1,024), its room doubled as they come, and
 * a segment past that is not held, while the bytes in front still land.
 */
static void test_reasm_many(void)
{
	static char want[2200];
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct flow *f = conn(ft, 1);
	const struct flow_stats *fs = flow_table_stats(ft);
	char b[2] = {0, 0};

	for (uint32_t k = 0; k < sizeof(want); k++)
		want[k] = (char)('a' + k % 26);
	cdata(ft, 1, "ab"); /* [0,2) in order */
	uint64_t base = fs->stream_bytes, grown = 0;
	for (uint32_t k = 0; k < 1025; k++) {
		b[0] = want[100 + 2 * k];
		cdata(ft, 1 + 100 + 2 * k, b);
		if (k == 15)
			grown = fs->stream_bytes;
	}
	CHECK_EQ(f->st[0].ooo_n, 1024);
	CHECK_EQ(fs->ooo_dropped, 1); /* the 1,025th */
	CHECK_EQ(f->st[0].holes, 0);
	CHECK(grown > base && fs->stream_bytes > grown); /* the table grew */
	CHECK(fs->stream_bytes - base < 12 * 1024); /* about 8 KiB of ranges */
	/* the rest, in order, in pieces: every byte lands */
	for (uint32_t at = 2; at < sizeof(want); at += 500) {
		char piece[501];
		uint32_t n = sizeof(want) - at < 500 ? (uint32_t)(sizeof(want) - at) : 500;
		memcpy(piece, want + at, n);
		piece[n] = 0;
		cdata(ft, 1 + at, piece);
	}
	want[0] = 'a';
	want[1] = 'b';
	CHECK_EQ(f->st[0].len, sizeof(want));
	CHECK(stream_is_n(f, 0, want, sizeof(want)));
	CHECK_EQ(f->st[0].ooo_n, 0);
	CHECK_EQ(f->st[0].holes, 0);
	flow_stream_done(ft, f, 0);
	flow_stream_done(ft, f, 1);
	CHECK_EQ(fs->stream_bytes, 0);
	flow_table_free(ft);
}

static void test_reasm_caps(void)
{
	struct flow_config cfg = {.stream_max = 64, .ooo_max = 4};
	struct flow_table *ft = flow_table_new(&cfg, NULL, NULL);
	struct flow *f = conn(ft, 1);
	char big[101];
	memset(big, 'x', 100);
	big[100] = 0;

	/* stream_max: keep 64 bytes, set overflow, ignore the rest. */
	cdata(ft, 1, big);
	CHECK_EQ(f->st[0].len, 64);
	CHECK_EQ(f->st[0].overflow, 1);
	CHECK(f->st[0].cap <= 64);
	CHECK_EQ(flow_table_stats(ft)->stream_truncated, 1);
	cdata(ft, 101, "more");
	CHECK_EQ(f->st[0].len, 64);
	CHECK_EQ(flow_table_stats(ft)->stream_truncated, 1);
	flow_table_free(ft);

	/* ooo_max: a fifth range is not held (counted); the holes stay open,
	 * as the receiver, whose queue holds thousands, keeps them, so the
	 * bytes in front still land (R22-F5: the first hole was skipped, and
	 * they were lost). */
	ft = flow_table_new(&cfg, NULL, NULL);
	f = conn(ft, 1);
	cdata(ft, 1, "ab");
	for (uint32_t i = 0; i < 4; i++)
		cdata(ft, 11 + 4 * i, "x"); /* 4 separate ranges */
	CHECK_EQ(f->st[0].ooo_n, 4);
	cdata(ft, 12, "y"); /* adjacent to a held range: merges, still 4 */
	CHECK_EQ(f->st[0].ooo_n, 4);
	cdata(ft, 40, "z"); /* a fifth range: not held */
	CHECK_EQ(flow_table_stats(ft)->ooo_dropped, 1);
	CHECK_EQ(f->st[0].ooo_n, 4);
	CHECK_EQ(f->st[0].len, 2);
	CHECK_EQ(f->st[0].holes, 0);
	CHECK_EQ(flow_table_stats(ft)->stream_holes, 0);
	cdata(ft, 27, "w"); /* [26,27): a fifth again */
	CHECK_EQ(flow_table_stats(ft)->ooo_dropped, 2);
	cdata(ft, 16, "v"); /* [15,16) touches [14,15): merges, still 4 */
	CHECK_EQ(f->st[0].ooo_n, 4);
	cdata(ft, 3, "cdefgh"); /* in order */
	CHECK_EQ(f->st[0].len, 8);
	cdata(ft, 9, "IJ"); /* in order: [10,12) joins */
	CHECK(stream_is_n(f, 0, "abcdefghIJxy", 12));
	CHECK_EQ(f->st[0].ooo_n, 3); /* [14,16) [18,19) [22,23) */
	cdata(ft, 40, "z"); /* now it fits */
	CHECK_EQ(f->st[0].ooo_n, 4);
	CHECK_EQ(flow_table_stats(ft)->ooo_dropped, 2);
	CHECK_EQ(f->st[0].holes, 0);

	/* Far outside the window: dropped and counted. */
	int dir;
	struct flow *g = tcp(ft, S_IP, 443, C_IP, 40000, TH_ACK, 1000 + 64 + 1, 3, "far",
			     SEC, &dir);
	CHECK(g == f && dir == 1);
	CHECK_EQ(flow_table_stats(ft)->stream_far, 1);
	CHECK_EQ(f->st[1].len, 0);
	CHECK_EQ(f->st[1].ooo_n, 0);
	/* Just inside the window is held. */
	tcp(ft, S_IP, 443, C_IP, 40000, TH_ACK, 1000 + 63, 3, "near", SEC, &dir);
	CHECK_EQ(f->st[1].ooo_n, 1);
	CHECK_EQ(flow_table_stats(ft)->stream_far, 1);

	/* flow_stream_done frees the buffer and later data is ignored. */
	uint64_t held = flow_table_stats(ft)->stream_bytes;
	CHECK(held > 0);
	flow_stream_done(ft, f, 0);
	flow_stream_done(ft, f, 1);
	CHECK(f->st[0].buf == NULL && f->st[0].done);
	CHECK(f->st[1].buf == NULL && f->st[1].ooo == NULL && f->st[1].done);
	CHECK_EQ(flow_table_stats(ft)->stream_bytes, 0);
	tcp(ft, S_IP, 443, C_IP, 40000, TH_ACK, 1001, 3, "late", SEC, &dir);
	CHECK(f->st[1].buf == NULL);
	CHECK_EQ(flow_table_stats(ft)->stream_bytes, 0);
	CHECK(f->state & FLOW_DATA1);
	flow_stream_done(ft, NULL, 0);
	flow_stream_done(ft, f, 2);
	flow_table_free(ft);

	/* stream_total_max: the second buffer does not fit. */
	struct flow_config cfg2 = {.stream_max = 4096, .stream_total_max = 1500};
	ft = flow_table_new(&cfg2, NULL, NULL);
	f = conn(ft, 1);
	char kb[1001];
	memset(kb, 'k', 1000);
	kb[1000] = 0;
	cdata(ft, 1, kb);
	CHECK_EQ(f->st[0].len, 1000);
	CHECK(flow_table_stats(ft)->stream_bytes <= 1500);
	g = tcp(ft, S_IP, 443, C_IP, 40000, TH_ACK, 1001, 1001, kb, SEC, NULL);
	CHECK(g == f);
	CHECK_EQ(f->st[1].len, 0);
	CHECK_EQ(f->st[1].overflow, 1);
	CHECK_EQ(flow_table_stats(ft)->stream_capped, 1);
	CHECK_EQ(flow_table_stats(ft)->stream_cap_bytes, 1000);
	CHECK(flow_table_stats(ft)->stream_bytes <= 1500);
	/* Growing the first one past the cap fails the same way. */
	cdata(ft, 1001, kb);
	CHECK_EQ(f->st[0].len, 1000);
	CHECK_EQ(f->st[0].overflow, 1);
	CHECK(flow_table_stats(ft)->stream_bytes <= 1500);
	flow_table_free(ft);
}

/* Stream records live apart from the flow: only TCP flows have them, a
 * reused pair starts clean, and released buffers are reused with their
 * bytes (held out-of-order ranges included) carried over on growth. */
static void test_stream_records(void)
{
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct pkt p;
	struct flow *f, *g;
	char kb[1501];

	/* UDP and ICMP: no stream records; flow_stream_done is a no-op. */
	p = mk(P_UDP, C_IP, 5353, S_IP, 53, SEC);
	p.payload = (const uint8_t *)"query";
	p.payload_len = 5;
	f = flow_table_update(ft, &p);
	CHECK(f != NULL && f->st == NULL);
	flow_stream_done(ft, f, 0);
	CHECK(f->st == NULL);
	p = mk(P_ICMP, C_IP, 0, S_IP, 0, SEC);
	f = flow_table_update(ft, &p);
	CHECK(f != NULL && f->st == NULL);
	CHECK_EQ(flow_table_stats(ft)->stream_bytes, 0);

	/* A TCP flow with 1500 bytes each way (2 KiB buffers), then closed
	 * by RST and replaced on the same ports: the new flow's records are
	 * all zero. */
	memset(kb, 'k', 1500);
	kb[1500] = 0;
	f = conn(ft, 1);
	cdata(ft, 1, kb);
	tcp(ft, S_IP, 443, C_IP, 40000, TH_ACK, 1001, 1501, kb, 2 * SEC, NULL);
	CHECK(f->st != NULL && f->st[0].len == 1500 && f->st[1].len == 1500);
	const uint8_t *old0 = f->st[0].buf, *old1 = f->st[1].buf;
	tcp(ft, C_IP, 40000, S_IP, 443, TH_RST, 1501, 0, NULL, 2 * SEC, NULL);
	g = tcp(ft, C_IP, 40000, S_IP, 443, TH_SYN, 99, 0, NULL, 3 * SEC, NULL);
	CHECK(g != NULL && g->id != 0 && g->st != NULL);
	CHECK_EQ(flow_table_stats(ft)->stream_bytes, 0);
	for (int d = 0; d < 2; d++) {
		const struct flow_stream *st = &g->st[d];
		CHECK(st->buf == NULL && st->len == 0 && st->cap == 0 && st->consumed == 0 &&
		      st->ooo == NULL && st->ooo_n == 0 && st->holes == 0 && !st->done &&
		      !st->overflow && !st->acked_set);
	}
	CHECK(g->st[0].isn_set && g->st[0].isn == 100);

	/* Data that outgrows the first buffer: a held range is carried over
	 * into the (reused) bigger buffer, and fills in order later. */
	tcp(ft, C_IP, 40000, S_IP, 443, TH_ACK, 100, 1, "ab", 3 * SEC, NULL);
	CHECK(stream_is(g, 0, "ab"));
	CHECK_EQ(g->st[0].cap, 1024);
	tcp(ft, C_IP, 40000, S_IP, 443, TH_ACK, 100 + 500, 1, "HELD", 3 * SEC, NULL);
	tcp(ft, C_IP, 40000, S_IP, 443, TH_ACK, 100 + 1500, 1, "FAR", 3 * SEC, NULL);
	CHECK_EQ(g->st[0].ooo_n, 2);
	CHECK_EQ(g->st[0].cap, 2048);
	/* one of the first flow's 2 KiB buffers, reused */
	CHECK(g->st[0].buf == old0 || g->st[0].buf == old1);
	CHECK_EQ(g->st[0].len, 2);
	CHECK(memcmp(g->st[0].buf, "ab", 2) == 0);
	CHECK(memcmp(g->st[0].buf + 500, "HELD", 4) == 0);
	CHECK(memcmp(g->st[0].buf + 1500, "FAR", 3) == 0);
	static char fill[1501];
	memset(fill, 'f', 1498);
	fill[1498] = 0;
	tcp(ft, C_IP, 40000, S_IP, 443, TH_ACK, 100 + 2, 1, fill, 3 * SEC, NULL);
	CHECK_EQ(g->st[0].len, 1503);
	CHECK_EQ(g->st[0].ooo_n, 0);
	CHECK(memcmp(g->st[0].buf + 500, "ffff", 4) == 0); /* the in-order copy wins */
	CHECK(memcmp(g->st[0].buf + 1500, "FAR", 3) == 0);
	/* the buffer and the held-range table: a header, the default 16
	 * ranges and the held segments' tree (a mask, a root, 32 nodes) */
	CHECK_EQ(flow_table_stats(ft)->stream_bytes,
		 2048 + (1 + 16) * sizeof(struct flow_seg) + 8 + 32 * 12);
	flow_table_free(ft);

	/* Kept buffers never take room from held ones: with a released 2 KiB
	 * buffer kept and stream_total_max 3000, a 2500-byte stream still fits
	 * (the kept buffer is freed to stay under the cap). */
	struct flow_config cfg = {.stream_max = 4096, .stream_total_max = 3000};
	static char big[2501];
	memset(big, 'b', 2500);
	big[2500] = 0;
	ft = flow_table_new(&cfg, NULL, NULL);
	f = conn(ft, 1);
	cdata(ft, 1, kb);
	CHECK_EQ(f->st[0].cap, 2048);
	flow_stream_done(ft, f, 0);
	CHECK_EQ(flow_table_stats(ft)->stream_bytes, 0);
	tcp(ft, S_IP, 443, C_IP, 40000, TH_ACK, 1001, 1501, big, 2 * SEC, NULL);
	CHECK_EQ(f->st[1].len, 2500);
	CHECK_EQ(f->st[1].cap, 2500);
	CHECK_EQ(f->st[1].overflow, 0);
	CHECK_EQ(flow_table_stats(ft)->stream_capped, 0);
	CHECK_EQ(flow_table_stats(ft)->stream_bytes, 2500);
	flow_table_free(ft);
}

/* Server to client: a bare ACK (what the client's stream has reached). */
static void sack(struct flow_table *ft, uint32_t ack)
{
	tcp(ft, S_IP, 443, C_IP, 40000, TH_ACK, 1, ack, NULL, 2 * SEC, NULL);
}

static int zeros(const struct flow_stream *st, uint32_t from, uint32_t to)
{
	for (uint32_t k = from; k < to; k++)
		if (st->buf[k])
			return 0;
	return 1;
}

/* Capture loss: holes the peer acknowledged, holes at FIN and RST. */
static void test_reasm_holes(void)
{
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct flow *f = conn(ft, 1000);
	struct flow_stream *st = &f->st[0];

	/* The sv-dns-tcp-ts-gap order: [10,30) never seen, the server ACKs
	 * past it, then the next segment comes. An ACK alone skips nothing
	 * (nothing after the hole yet); the segment lands after the hole. */
	cdata(ft, 1000, "0123456789");
	sack(ft, 1030);
	CHECK_EQ(st->len, 10);
	CHECK_EQ(st->holes, 0);
	CHECK_EQ(flow_stream_avail(st, 0), 10);
	cdata(ft, 1030, "after");
	CHECK_EQ(st->len, 35);
	CHECK_EQ(st->holes, 1);
	CHECK_EQ(st->hole_start, 10);
	CHECK_EQ(st->resync, 30);
	CHECK(zeros(st, 10, 30));
	CHECK(memcmp(st->buf + 30, "after", 5) == 0);
	CHECK_EQ(flow_table_stats(ft)->stream_holes, 1);
	CHECK_EQ(flow_stream_avail(st, 0), 10);  /* up to the hole */
	CHECK_EQ(flow_stream_avail(st, 12), 12); /* inside it: nothing */
	CHECK_EQ(flow_stream_avail(st, 30), 35); /* after it: all */
	/* The missing bytes turn up late: dropped, the zeros stay. */
	cdata(ft, 1010, "LATELATELATELATELATE");
	CHECK(zeros(st, 10, 30));
	CHECK_EQ(st->len, 35);

	/* Held data first, then the ACK that covers the hole before it. An
	 * older ACK never lowers what was acknowledged. */
	cdata(ft, 1040, "held"); /* [40,44), hole [35,40) */
	CHECK_EQ(st->ooo_n, 1);
	sack(ft, 1039);          /* does not reach the held data */
	CHECK_EQ(st->len, 35);
	sack(ft, 1044);
	sack(ft, 1020);
	CHECK_EQ(st->len, 44);
	CHECK_EQ(st->ooo_n, 0);
	CHECK_EQ(st->holes, 2);
	/* the analyzer's cursor is still before the first hole: the recorded
	 * range grows to cover both */
	CHECK_EQ(st->hole_start, 10);
	CHECK_EQ(st->resync, 40);
	CHECK(memcmp(st->buf + 40, "held", 4) == 0);
	CHECK_EQ(flow_stream_avail(st, 35), 35);
	flow_table_free(ft);

	/* Two holes, ACKed one at a time; the record follows the cursor. */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1000);
	st = &f->st[0];
	cdata(ft, 1000, "abcd");
	st->consumed = 4;
	cdata(ft, 1010, "efgh"); /* hole [4,10) */
	cdata(ft, 1020, "ijkl"); /* hole [14,20) */
	CHECK_EQ(st->ooo_n, 2);
	sack(ft, 1012);          /* covers the first hole only */
	CHECK_EQ(st->len, 14);
	CHECK_EQ(st->holes, 1);
	CHECK_EQ(st->hole_start, 4);
	CHECK_EQ(st->resync, 10);
	st->consumed = 14;
	sack(ft, 1024);
	CHECK_EQ(st->len, 24);
	CHECK_EQ(st->holes, 2);
	CHECK_EQ(st->hole_start, 14); /* replaced: the cursor passed [4,10) */
	CHECK_EQ(st->resync, 20);
	CHECK(memcmp(st->buf + 20, "ijkl", 4) == 0);
	CHECK_EQ(flow_stream_avail(st, 14), 14);
	CHECK_EQ(flow_stream_avail(st, 20), 24);
	/* The ACK reaches past a hole with nothing after it: kept open, and a
	 * segment the capture shows after its ACK lands in order. */
	sack(ft, 1040);
	cdata(ft, 1024, "mnop");
	CHECK_EQ(st->len, 28);
	CHECK_EQ(st->holes, 2);
	flow_table_free(ft);

	/* A segment arriving before held data, partly acknowledged: the skip
	 * stops at its start, so none of its bytes become zeros, and, in order,
	 * its copy of the overlap wins. */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1000);
	st = &f->st[0];
	cdata(ft, 1000, "abcd");
	cdata(ft, 1010, "WXYZ");   /* held [10,14) */
	sack(ft, 1008);            /* reaches into the hole, not the data */
	CHECK_EQ(st->len, 4);
	cdata(ft, 1006, "ghijkl"); /* [6,12): hole [4,6) goes */
	CHECK(stream_is_n(f, 0, "abcd\0\0ghijklYZ", 14));
	CHECK_EQ(st->holes, 1);
	CHECK_EQ(st->hole_start, 4);
	CHECK_EQ(st->resync, 6);
	CHECK_EQ(flow_table_stats(ft)->ooo_dropped, 0);
	flow_table_free(ft);

	/* FIN with data held: every hole in front of it goes. */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1000);
	st = &f->st[0];
	cdata(ft, 1000, "AAAA");
	cdata(ft, 1008, "CCCC");
	cdata(ft, 1016, "EEEE");
	CHECK_EQ(st->ooo_n, 2);
	tcp(ft, C_IP, 40000, S_IP, 443, TH_ACK | TH_FIN, 1020, 1, NULL, 2 * SEC, NULL);
	CHECK(stream_is_n(f, 0, "AAAA\0\0\0\0CCCC\0\0\0\0EEEE", 20));
	CHECK_EQ(st->holes, 2);
	CHECK_EQ(st->ooo_n, 0);
	CHECK_EQ(st->hole_start, 4);
	CHECK_EQ(st->resync, 16);
	/* a FIN whose own payload is out of order */
	tcp(ft, S_IP, 443, C_IP, 40000, TH_ACK | TH_PUSH, 1001, 1021, "srv", 2 * SEC, NULL);
	tcp(ft, S_IP, 443, C_IP, 40000, TH_ACK | TH_FIN, 1006, 1021, "end", 2 * SEC, NULL);
	CHECK(stream_is_n(f, 1, "srv\0\0end", 8));
	CHECK_EQ(f->st[1].holes, 1);
	CHECK_EQ(flow_table_stats(ft)->stream_holes, 3);
	flow_table_free(ft);

	/* RST from the other end: the held data is delivered too. */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1000);
	cdata(ft, 1000, "AB");
	cdata(ft, 1004, "EF");
	tcp(ft, S_IP, 443, C_IP, 40000, TH_RST | TH_ACK, 1, 1, NULL, 2 * SEC, NULL);
	CHECK(stream_is_n(f, 0, "AB\0\0EF", 6));
	CHECK_EQ(f->st[0].holes, 1);
	/* no FIN or RST, no ACK: a hole stays open (no data made up) */
	f = tcp(ft, C_IP, 40001, S_IP, 443, TH_SYN, 99, 0, NULL, SEC, NULL);
	tcp(ft, C_IP, 40001, S_IP, 443, TH_ACK, 100, 1, "ab", SEC, NULL);
	tcp(ft, C_IP, 40001, S_IP, 443, TH_ACK, 110, 1, "cd", SEC, NULL);
	CHECK_EQ(f->st[0].len, 2);
	CHECK_EQ(f->st[0].holes, 0);
	CHECK_EQ(f->st[0].ooo_n, 1);
	flow_table_free(ft);

	/* Across the sequence wrap: hole [4,20) crosses 2^32. */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 0xfffffff0u);
	st = &f->st[0];
	cdata(ft, 0xfffffff0u, "abcd");
	sack(ft, 0xfffffff4u);
	cdata(ft, 0x00000004u, "WXYZ"); /* offset 20: held, ACK is behind */
	CHECK_EQ(st->holes, 0);
	sack(ft, 0x00000008u);          /* serially after 0xfffffff4 */
	CHECK(stream_is_n(f, 0, "abcd\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0WXYZ", 24));
	CHECK_EQ(st->holes, 1);
	CHECK_EQ(st->hole_start, 4);
	CHECK_EQ(st->resync, 20);
	CHECK_EQ(st->acked, 8);
	sack(ft, 0xfffffff8u);          /* serially older: ignored */
	CHECK_EQ(st->acked, 8);
	cdata(ft, 0x0000000cu, "hi");   /* [28,30) held */
	cdata(ft, 0xfffffffcu, "late"); /* inside the skipped hole: dropped */
	CHECK_EQ(st->len, 24);
	CHECK(zeros(st, 4, 20));
	sack(ft, 0x0000000eu);          /* offset 30 */
	CHECK_EQ(st->len, 30);
	CHECK_EQ(st->holes, 2);
	CHECK(memcmp(st->buf + 28, "hi", 2) == 0);
	flow_table_free(ft);

	/* Skipping needs the buffer; under stream_total_max it stops the
	 * direction like any other growth that does not fit. */
	struct flow_config cfg = {.stream_max = 4096, .stream_total_max = 1100};
	ft = flow_table_new(&cfg, NULL, NULL);
	f = conn(ft, 1);
	cdata(ft, 1, "a");
	sack(ft, 3000);
	cdata(ft, 2000, "b"); /* offset 1999: hole [1,1999) needs 2 KiB */
	CHECK_EQ(f->st[0].overflow, 1);
	CHECK_EQ(f->st[0].holes, 0);
	CHECK_EQ(f->st[0].len, 1);
	CHECK(flow_table_stats(ft)->stream_bytes <= 1100);
	flow_table_free(ft);
}

/* -------------------------------------------------- expiry and eviction */

static void test_expiry(void)
{
	struct flow_config cfg = {.tcp_idle_us = 100 * SEC, .udp_idle_us = 50 * SEC,
				  .closed_idle_us = 10 * SEC};
	struct ends e = {0};
	struct flow_table *ft = flow_table_new(&cfg, on_end, &e);
	struct flow *f;

	struct pkt p = mk(P_UDP, C_IP, 1000, S_IP, 53, 0);
	f = flow_table_update(ft, &p); /* id 1: UDP at 0 */
	f->app_state = malloc(32);     /* freed by the table after on_end */
	f = tcp(ft, C_IP, 2000, S_IP, 443, TH_SYN, 1, 0, NULL, 0, NULL); /* id 2 */
	tcp(ft, C_IP, 2001, S_IP, 443, TH_SYN, 1, 0, NULL, 0, NULL);     /* id 3 */
	tcp(ft, S_IP, 443, C_IP, 2001, TH_RST | TH_ACK, 0, 2, NULL, 5 * SEC, NULL);
	CHECK_EQ(flow_table_stats(ft)->active, 3);

	/* t=14: nothing idle yet (closed flow last seen at 5). */
	p = mk(P_UDP, C_IP, 1001, S_IP, 53, 14 * SEC); /* id 4 */
	flow_table_update(ft, &p);
	CHECK_EQ(e.calls, 0);
	/* t=15: the closed flow (id 3) goes. */
	flow_table_expire(ft, 15 * SEC);
	CHECK_EQ(e.calls, 1);
	CHECK_EQ(e.by_id[3], 1);
	/* A packet with an older time changes nothing and breaks nothing. */
	p = mk(P_UDP, C_IP, 1000, S_IP, 53, 3 * SEC);
	f = flow_table_update(ft, &p);
	CHECK_EQ(f->id, 1);
	CHECK_EQ(f->last_us, 3 * SEC);
	p = mk(P_UDP, C_IP, 1000, S_IP, 53, 1 * SEC);
	flow_table_update(ft, &p);
	CHECK_EQ(f->last_us, 3 * SEC);
	/* t=60 by packet time: id 1 (last 3) is idle, but the late packet
	 * put it before id 4 (last 14) in LRU order; expiry stops at id 4, so
	 * id 1 waits (out-of-order times delay expiry, never break it). */
	p = mk(P_UDP, C_IP, 1002, S_IP, 53, 60 * SEC); /* id 5 */
	flow_table_update(ft, &p);
	CHECK_EQ(e.calls, 1);
	CHECK_EQ(e.by_id[1], 0);
	/* t=64: id 4 is idle, and id 1 goes right after it. */
	flow_table_expire(ft, 64 * SEC);
	CHECK_EQ(e.calls, 3);
	CHECK_EQ(e.by_id[1], 1);
	CHECK_EQ(e.by_id[4], 1);
	CHECK_EQ(e.by_id[2], 0);
	CHECK_EQ(flow_table_stats(ft)->expired, 3);
	/* A packet of an expired flow makes a new flow. */
	p = mk(P_UDP, C_IP, 1000, S_IP, 53, 65 * SEC);
	f = flow_table_update(ft, &p);
	CHECK_EQ(f->id, 6);
	/* t=100: TCP id 2 (last 0) goes; UDP ids 5 and 6 stay. */
	flow_table_expire(ft, 100 * SEC);
	CHECK_EQ(e.by_id[2], 1);
	CHECK_EQ(e.calls, 4);
	CHECK_EQ(flow_table_stats(ft)->active, 2);
	/* The rest end at table free, each once. */
	flow_table_free(ft);
	CHECK_EQ(e.calls, 6);
	for (int i = 1; i <= 6; i++)
		CHECK_EQ(e.by_id[i], 1);

	/* FIN both ways closes; FIN one way does not. */
	memset(&e, 0, sizeof(e));
	ft = flow_table_new(&cfg, on_end, &e);
	tcp(ft, C_IP, 3000, S_IP, 80, TH_SYN, 1, 0, NULL, 0, NULL);               /* id 1 */
	tcp(ft, C_IP, 3000, S_IP, 80, TH_FIN | TH_ACK, 2, 1, NULL, 1 * SEC, NULL);
	tcp(ft, C_IP, 3001, S_IP, 80, TH_SYN, 1, 0, NULL, 0, NULL);               /* id 2 */
	tcp(ft, C_IP, 3001, S_IP, 80, TH_FIN | TH_ACK, 2, 1, NULL, 1 * SEC, NULL);
	tcp(ft, S_IP, 80, C_IP, 3001, TH_FIN | TH_ACK, 1, 3, NULL, 1 * SEC, NULL);
	flow_table_expire(ft, 11 * SEC);
	CHECK_EQ(e.calls, 1);
	CHECK_EQ(e.by_id[2], 1);
	flow_table_expire(ft, 101 * SEC);
	CHECK_EQ(e.by_id[1], 1);
	flow_table_free(ft);
	CHECK_EQ(e.calls, 2);
}

static void test_eviction(void)
{
	struct flow_config cfg = {.max_flows = 4};
	struct ends e = {0};
	struct flow_table *ft = flow_table_new(&cfg, on_end, &e);
	struct pkt p;

	for (uint16_t i = 1; i <= 4; i++) {
		p = mk(P_UDP, C_IP, i, S_IP, 53, i * SEC);
		flow_table_update(ft, &p);
	}
	CHECK_EQ(flow_table_stats(ft)->active, 4);
	p = mk(P_UDP, C_IP, 5, S_IP, 53, 5 * SEC);
	CHECK_EQ(flow_table_update(ft, &p)->id, 5);
	CHECK_EQ(flow_table_stats(ft)->active, 4);
	CHECK_EQ(flow_table_stats(ft)->evicted, 1);
	CHECK_EQ(e.by_id[1], 1);
	/* Touch id 2 (its reply): id 3 becomes the least recently seen. */
	p = mk(P_UDP, S_IP, 53, C_IP, 2, 6 * SEC);
	CHECK_EQ(flow_table_update(ft, &p)->id, 2);
	/* A TCP flow competes across lists by last packet time. */
	tcp(ft, C_IP, 6, S_IP, 80, TH_SYN, 1, 0, NULL, 7 * SEC, NULL); /* id 6 */
	CHECK_EQ(e.by_id[3], 1);
	CHECK_EQ(e.by_id[2], 0);
	p = mk(P_UDP, C_IP, 7, S_IP, 53, 8 * SEC); /* id 7 evicts id 4 */
	flow_table_update(ft, &p);
	CHECK_EQ(e.by_id[4], 1);
	CHECK_EQ(flow_table_stats(ft)->evicted, 3);
	CHECK_EQ(flow_table_stats(ft)->active, 4);
	CHECK_EQ(flow_table_stats(ft)->created, 7);
	flow_table_free(ft);
	CHECK_EQ(e.calls, 7);
}

/* ---------------------------------------------------------------- find */

static void test_find(void)
{
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	uint8_t cip[16] = {0}, sip[16] = {0}, other[16] = {0};
	int dir = -1;
	put32(cip, C_IP);
	put32(sip, S_IP);
	put32(other, 0x01020304u);

	struct flow *f = tcp(ft, C_IP, 40000, S_IP, 443, TH_SYN, 1, 0, NULL, SEC, NULL);
	/* Quoted packet from the initiator (e.g. port unreachable for its SYN). */
	CHECK(flow_table_find(ft, 4, P_TCP, cip, 40000, sip, 443, &dir) == f);
	CHECK_EQ(dir, 0);
	/* Quoted packet from the responder. */
	dir = -1;
	CHECK(flow_table_find(ft, 4, P_TCP, sip, 443, cip, 40000, &dir) == f);
	CHECK_EQ(dir, 1);
	CHECK(flow_table_find(ft, 4, P_TCP, sip, 443, cip, 40000, NULL) == f);
	/* Misses, and no creation. */
	CHECK(flow_table_find(ft, 4, P_UDP, cip, 40000, sip, 443, &dir) == NULL);
	CHECK(flow_table_find(ft, 4, P_TCP, cip, 40001, sip, 443, &dir) == NULL);
	CHECK(flow_table_find(ft, 4, P_TCP, other, 40000, sip, 443, &dir) == NULL);
	CHECK(flow_table_find(ft, 6, P_TCP, cip, 40000, sip, 443, &dir) == NULL);
	CHECK(flow_table_find(ft, 0, P_TCP, cip, 40000, sip, 443, &dir) == NULL);
	CHECK(flow_table_find(NULL, 4, P_TCP, cip, 40000, sip, 443, &dir) == NULL);
	CHECK_EQ(flow_table_stats(ft)->active, 1);
	CHECK_EQ(flow_table_stats(ft)->created, 1);
	/* The initiator turned by SYN+ACK-first is found the same way. */
	f = tcp(ft, S_IP, 443, C_IP, 40005, TH_SYN | TH_ACK, 1, 1, NULL, SEC, NULL);
	CHECK(flow_table_find(ft, 4, P_TCP, cip, 40005, sip, 443, &dir) == f);
	CHECK_EQ(dir, 0);
	flow_table_free(ft);
}

/* ------------------------------------------------------------- bounded */

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* Ended ids, for the churn test's model of the table. */
struct churn {
	uint8_t ended[4096];
};

static void churn_end(void *user, struct flow *f)
{
	struct churn *c = user;
	if (f->id < sizeof(c->ended))
		c->ended[f->id] = 1;
}

/*
 * The hash table under churn: a small table (long probe runs, removals in
 * the middle of runs, by expiry, eviction and port reuse) must find every
 * live flow from either end and no ended one.
 */
static void test_churn(void)
{
	enum { N = 4000 };
	static struct {
		uint32_t a, b;
		uint16_t ap, bp;
		uint8_t proto;
	} tup[N + 1];
	for (int pass = 0; pass < 2; pass++) {
		struct flow_config cfg = {.max_flows = 48, .udp_idle_us = 40, .tcp_idle_us = 300,
					  .closed_idle_us = 20, .hash_seed = pass ? 0 : 7};
		static struct churn c;
		memset(&c, 0, sizeof(c));
		struct flow_table *ft = flow_table_new(&cfg, churn_end, &c);
		uint64_t s = 0x1234567u + (uint64_t)pass;
		uint64_t ids = 0;

		for (uint32_t i = 0; i < 20000 && ids < N; i++) {
			uint64_t r = rng_next(&s);
			struct pkt p = mk((r & 1) ? P_TCP : P_UDP, 0x0a000000u | (uint32_t)(r >> 8 & 0x7),
					  (uint16_t)(r >> 16 & 0x1f), S_IP, (uint16_t)(r >> 24 & 1),
					  (uint64_t)i);
			if (r >> 40 & 1) /* the other direction */
				p = reversed(&p);
			p.tcp_flags = (uint8_t)((r >> 48 & 3) == 0 ? TH_SYN : (r >> 48 & 3) == 1 ? TH_RST : TH_ACK);
			/* A replay's read-ahead hint (this packet's, or none, or a
			 * stranger's) changes nothing the checks below see. */
			struct tuple_hint th = {.ipv = 4, .proto = p.proto, .sport = p.sport,
						.dport = p.dport};
			memcpy(th.src, p.src, 4);
			memcpy(th.dst, p.dst, 4);
			if (r >> 56 & 1)
				th.sport ^= 0x55;
			flow_table_prefetch(ft, (r >> 57 & 3) ? &th : NULL);
			struct flow *f = flow_table_update(ft, &p);
			CHECK(f != NULL);
			if (!f)
				break;
			if (f->id > ids) {
				ids = f->id;
				tup[ids].proto = f->proto;
				tup[ids].ap = f->sport;
				tup[ids].bp = f->dport;
				memcpy(&tup[ids].a, f->src, 4);
				memcpy(&tup[ids].b, f->dst, 4);
			}
			if (i % 7 == 0)
				flow_table_expire(ft, i + 5);
			/* Every live flow is found from both ends, no ended one. */
			uint64_t live = 0;
			for (uint64_t id = 1; id <= ids; id++) {
				uint8_t a[16] = {0}, b[16] = {0};
				int dir = -1;
				memcpy(a, &tup[id].a, 4);
				memcpy(b, &tup[id].b, 4);
				struct flow *g = flow_table_find(ft, 4, tup[id].proto, a, tup[id].ap, b,
								 tup[id].bp, &dir);
				int rdir = -1;
				struct flow *h = flow_table_find(ft, 4, tup[id].proto, b, tup[id].bp, a,
								 tup[id].ap, &rdir);
				if (c.ended[id]) {
					/* a later flow may have the same tuple */
					if (g && g->id == id)
						CHECK(0);
					continue;
				}
				live++;
				/* (a pure SYN from the responder may have turned it) */
				if (!g || g->id != id || h != g || dir + rdir != 1) {
					CHECK(0);
					break;
				}
			}
			CHECK_EQ(live, flow_table_stats(ft)->active);
			CHECK(live <= 48);
		}
		CHECK(flow_table_stats(ft)->evicted > 0);
		CHECK(flow_table_stats(ft)->expired > 0);
		flow_table_free(ft);
		for (uint64_t id = 1; id <= ids; id++)
			CHECK_EQ(c.ended[id], 1);
	}
}

static void test_bounded(void)
{
	struct flow_config cfg = {.max_flows = 1000, .stream_max = 4096, .ooo_max = 8,
				  .stream_total_max = 256 * 1024};
	struct ends e = {0};
	struct flow_table *ft = flow_table_new(&cfg, on_end, &e);
	static uint8_t payload[1500];
	uint64_t s = 0x9e3779b97f4a7c15ull;
	uint64_t max_active = 0, max_bytes = 0, nulls = 0;
	const struct flow_stats *st = flow_table_stats(ft);

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	for (uint32_t i = 0; i < 1000000; i++) {
		uint64_t r = rng_next(&s), r2 = rng_next(&s);
		struct pkt p = mk((r & 3) ? P_TCP : P_UDP, 0x0a000000u | (uint32_t)(r >> 8 & 0xff),
				  (uint16_t)(r >> 16), 0x5d000000u | (uint32_t)(r >> 32 & 0x3f),
				  (uint16_t)(r >> 40 & 0x7), (uint64_t)i * 10);
		if (r2 & 1) /* sometimes the reverse direction */
			p = reversed(&p);
		p.tcp_flags = (uint8_t)(r2 >> 8);
		p.seq = (uint32_t)(r2 >> 16) & 0x3fff; /* near 0, to hit streams */
		p.ack = (uint32_t)(r2 >> 32);
		p.payload = payload;
		p.payload_len = (size_t)(r2 >> 48) % (sizeof(payload) + 1);
		if (!flow_table_update(ft, &p))
			nulls++;
		if (st->active > max_active)
			max_active = st->active;
		if (st->stream_bytes > max_bytes)
			max_bytes = st->stream_bytes;
	}
	CHECK_EQ(nulls, 0);
	CHECK(max_active <= 1000);
	CHECK_EQ(st->active, 1000);
	CHECK(max_bytes <= 256 * 1024);
	CHECK(max_bytes > 0);
	CHECK(st->evicted > 0);
	CHECK_EQ(st->created - st->expired - st->evicted, st->active);
	CHECK_EQ(e.calls, st->expired + st->evicted);
	uint64_t created = st->created;
	flow_table_free(ft);
	CHECK_EQ(e.calls, created);
}

/*
 * flow_stream_slide: the bytes before the cursor go, the rest moves to the
 * front with the held out-of-order ranges, isn moves on by as much, and
 * later segments (in order, out of order, retransmitted) land where the
 * moved numbering says; the window (stream_max) starts at the cursor.
 */
static void test_reasm_slide(void)
{
	struct flow_config cfg = {.stream_max = 32, .ooo_max = 4};
	struct flow_table *ft = flow_table_new(&cfg, NULL, NULL);
	struct flow *f = conn(ft, 1);
	struct flow_stream *st = &f->st[0];

	cdata(ft, 1, "0123456789");        /* [0,10) */
	cdata(ft, 16, "FGHIJ");            /* [15,20): held past a hole */
	CHECK(stream_is(f, 0, "0123456789"));
	CHECK_EQ(st->ooo_n, 1);
	/* nothing consumed: nothing moves */
	flow_stream_slide(st);
	CHECK(stream_is(f, 0, "0123456789") && st->isn == 1 && st->slid == 0);
	st->consumed = 6;
	flow_stream_slide(st);
	CHECK(stream_is(f, 0, "6789"));
	CHECK_EQ(st->consumed, 0);
	CHECK_EQ(st->slid, 6);
	CHECK_EQ(st->isn, 7);
	CHECK(st->ooo_n == 1 && st->ooo[0].start == 9 && st->ooo[0].end == 14);
	/* the hole filled: the held range joins */
	cdata(ft, 11, "ABCDE");            /* old [10,15), now [4,9) */
	CHECK(stream_is(f, 0, "6789ABCDEFGHIJ"));
	CHECK_EQ(st->ooo_n, 0);
	/* a retransmission from before the slide adds nothing */
	cdata(ft, 1, "0123456789ABCDEFGHIJ");
	CHECK(stream_is(f, 0, "6789ABCDEFGHIJ"));
	/* all consumed: an empty buffer, numbered from the next byte */
	st->consumed = st->len;
	flow_stream_slide(st);
	CHECK_EQ(st->len, 0);
	CHECK_EQ(st->slid, 20);
	/* the window starts at the cursor: 40 bytes past the first 32 are
	 * taken now, the last 8 of them cut at 32 */
	cdata(ft, 21, "abcdefghijklmnopqrstuvwxyz0123456789ABCD");
	CHECK(stream_is(f, 0, "abcdefghijklmnopqrstuvwxyz012345"));
	CHECK_EQ(st->overflow, 1);
	/* an overflowed stream lost bytes: it never slides again */
	st->consumed = 10;
	flow_stream_slide(st);
	CHECK(st->slid == 20 && st->consumed == 10 && st->len == 32);
	CHECK_EQ(flow_table_stats(ft)->stream_truncated, 1);
	flow_table_free(ft);

	/* a closed connection's own SYN again is still known by its first
	 * ISN after a slide (a copy, not a new connection) */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	cdata(ft, 1, "query");
	f->st[0].consumed = 5;
	flow_stream_slide(&f->st[0]);
	uint64_t id = f->id;
	tcp(ft, C_IP, 40000, S_IP, 443, TH_FIN | TH_ACK, 6, 1, NULL, 2 * SEC, NULL);
	tcp(ft, S_IP, 443, C_IP, 40000, TH_FIN | TH_ACK, 1001, 7, NULL, 2 * SEC, NULL);
	struct flow *g = tcp(ft, C_IP, 40000, S_IP, 443, TH_SYN, 0, 0, NULL, 3 * SEC, NULL);
	CHECK(g != NULL && g->id == id);
	flow_table_free(ft);
}

/* ---------------------------------------------- what Linux's receiver reads */

/* A TCP segment whose header (l4) carries urgent pointer urg (urg < 0: no
 * header at all, as tcp() makes). */
static struct flow *useg(struct flow_table *ft, uint8_t flags, uint32_t seq, const char *data,
			 int urg)
{
	struct pkt p = mk(P_TCP, C_IP, 40000, S_IP, 443, 2 * SEC);
	uint8_t h[20] = {0};

	p.tcp_flags = flags;
	p.seq = seq;
	p.ack = 1;
	p.payload = (const uint8_t *)data;
	p.payload_len = data ? strlen(data) : 0;
	if (urg >= 0) {
		h[12] = 5 << 4;
		h[13] = flags;
		h[18] = (uint8_t)(urg >> 8);
		h[19] = (uint8_t)urg;
		p.l4 = h;
		p.l4_len = sizeof(h);
	}
	return flow_table_update(ft, &p);
}

/* A segment with URG set and urgent pointer urg. */
static void urg(struct flow_table *ft, uint32_t seq, const char *data, int ptr)
{
	useg(ft, TH_ACK | TH_PUSH | TH_URG, seq, data, ptr);
}

/*
 * Urgent data (MSG_OOB): with Linux's defaults the byte the urgent pointer
 * names (seq + urg_ptr - 1) is taken out of the stream, so
 * "Host: ev" + OOB "X" + "il.example" reads evil.example, and a ClientHello
 * with an OOB byte after its record header is still a ClientHello. The
 * numbering after it stays right for later, retransmitted and out-of-order
 * segments.
 */
static void test_urgent(void)
{
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct flow *f = conn(ft, 1);
	const struct flow_stats *fs = flow_table_stats(ft);

	cdata(ft, 1, "GET / HTTP/1.1\r\nHost: ev");   /* [0,24) */
	urg(ft, 25, "X", 1);                           /* the byte at 25 */
	cdata(ft, 26, "il.example\r\n");
	CHECK(stream_is(f, 0, "GET / HTTP/1.1\r\nHost: evil.example\r\n"));
	CHECK_EQ(fs->urgent, 1);
	/* retransmissions, with URG or without, of the byte or around it,
	 * change nothing and differ from nothing */
	urg(ft, 25, "X", 1);
	cdata(ft, 1, "GET / HTTP/1.1\r\nHost: evXil.example\r\n");
	cdata(ft, 24, "vXil");
	CHECK(stream_is(f, 0, "GET / HTTP/1.1\r\nHost: evil.example\r\n"));
	CHECK_EQ(fs->urgent, 1);
	CHECK_EQ(fs->inconsistent, 0);
	/* a differing copy past the byte is still seen as one */
	cdata(ft, 26, "IL");
	CHECK_EQ(fs->inconsistent, 1);
	/* later data, out of order first, lands after it */
	cdata(ft, 42, "ZZ");                           /* seq 38.. is next */
	cdata(ft, 38, "abcd");
	CHECK(stream_is(f, 0, "GET / HTTP/1.1\r\nHost: evil.example\r\nabcdZZ"));
	/* the sequence numbers the client sent are still its own */
	CHECK(flow_seq_sent(f, 0, 43));
	CHECK(!flow_seq_sent(f, 0, 100));
	flow_table_free(ft);

	/* a pointer past the segment: the byte is taken when it comes; one
	 * before what is held in order, or not after the pending one, is
	 * ignored; a later one replaces the pending one, whose byte stays */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	fs = flow_table_stats(ft);
	urg(ft, 1, "ab", 5);                           /* byte 4 (seq 5) */
	CHECK(stream_is(f, 0, "ab"));
	cdata(ft, 3, "cdXef");
	CHECK(stream_is(f, 0, "abcdef"));
	urg(ft, 2, "b", 1);                            /* before len: ignored */
	urg(ft, 8, "gh", 4);                           /* seq 11 pending */
	urg(ft, 9, "h", 2);                            /* seq 10: not after it */
	urg(ft, 9, "h", 4);                            /* seq 12: replaces 11 */
	cdata(ft, 10, "ijk");                          /* 11 stays, 12 goes */
	CHECK(stream_is(f, 0, "abcdefghij"));
	CHECK_EQ(fs->urgent, 2);
	/* an urgent pointer of 0 names the segment's first byte (Linux reads
	 * seq + 0 with tcp_stdurg off) */
	urg(ft, 13, "Ylm", 0);
	CHECK(stream_is(f, 0, "abcdefghijlm"));
	CHECK_EQ(fs->urgent, 3);

	/* URG with no header to read (a hand-made packet): nothing taken */
	useg(ft, TH_ACK | TH_URG, 16, "n", -1);
	CHECK(stream_is(f, 0, "abcdefghijlmn"));
	flow_table_free(ft);

	/* a pointer carried by a segment Linux does not accept is not read:
	 * an old retransmission (wholly before what is held in order) naming
	 * the next byte, and a pure ACK starting far past the window naming a
	 * byte there (which would block the real pointer after it) */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	fs = flow_table_stats(ft);
	cdata(ft, 1, "GET /evil HTTP/1.1\r\n");        /* seq 1..20 */
	urg(ft, 1, "GET ", 21);                        /* names seq 21 */
	cdata(ft, 21, "Host: a\r\n");                  /* seq 21..29 */
	CHECK(stream_is(f, 0, "GET /evil HTTP/1.1\r\nHost: a\r\n"));
	useg(ft, TH_ACK | TH_URG, 30 + 5000000, NULL, 1);
	urg(ft, 30, "bXc", 2);                         /* seq 31, the X */
	CHECK(stream_is(f, 0, "GET /evil HTTP/1.1\r\nHost: a\r\nbc"));
	CHECK_EQ(fs->urgent, 1);
	flow_table_free(ft);

	/* the urgent byte inside held out-of-order data: taken when the
	 * hole before it fills; a copy of that segment adds nothing */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	fs = flow_table_stats(ft);
	urg(ft, 4, "wXy", 2);                          /* held; X is seq 5 */
	CHECK_EQ(f->st[0].len, 0);
	cdata(ft, 1, "abc");
	CHECK(stream_is(f, 0, "abcwy"));
	urg(ft, 4, "wXy", 2);
	cdata(ft, 7, "z");
	CHECK(stream_is(f, 0, "abcwyz"));
	CHECK_EQ(fs->urgent, 1);
	CHECK_EQ(fs->inconsistent, 0);
	/* pending past a slide: the offset moves with the window */
	urg(ft, 8, "1", 3);                            /* seq 10 pending */
	f->st[0].consumed = 3;
	flow_stream_slide(&f->st[0]);
	CHECK(stream_is(f, 0, "wyz1"));
	cdata(ft, 9, "2U3");
	CHECK(stream_is(f, 0, "wyz123"));
	CHECK_EQ(fs->urgent, 2);
	flow_table_free(ft);

	/* the urgent byte in held data after a hole skipped at FIN, and
	 * inside such a hole (the receiver had the byte and dropped it, so
	 * the data after the hole keeps its place) */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	cdata(ft, 1, "ab");
	urg(ft, 6, "ef", 0);                           /* held; e (seq 6) urgent */
	CHECK(f->st[0].urg_pending && f->st[0].urg_off == 5);
	useg(ft, TH_ACK | TH_FIN, 8, NULL, -1);
	/* ab, the hole's 3 zeros, e taken out, f */
	CHECK(f->st[0].len == 6 && memcmp(f->st[0].buf, "ab\0\0\0f", 6) == 0);
	flow_table_free(ft);
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	cdata(ft, 1, "ab");
	urg(ft, 3, NULL, 2);                           /* seq 4, not yet here */
	cdata(ft, 6, "ef");
	useg(ft, TH_ACK | TH_FIN, 8, NULL, -1);
	CHECK(f->st[0].len == 6 && memcmp(f->st[0].buf, "ab\0\0ef", 6) == 0);
	CHECK(f->st[0].holes == 1 && f->st[0].resync == 4);
	flow_table_free(ft);

	/* midstream, the first segment urgent */
	ft = flow_table_new(NULL, NULL, NULL);
	f = useg(ft, TH_ACK | TH_PUSH | TH_URG, 7000, "!GET", 1);
	CHECK(stream_is(f, 0, "GET"));
	flow_table_free(ft);
}

/*
 * A segment without ACK (nor SYN, RST) is discarded by Linux in every
 * state: a decoy sent so, at the real request's sequence number, no
 * longer stands in for it; nor does its FIN skip holes, nor its data make
 * an answer.
 */
static void test_noack(void)
{
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct flow *f = conn(ft, 1);
	const struct flow_stats *fs = flow_table_stats(ft);

	tcp(ft, C_IP, 40000, S_IP, 443, TH_PUSH, 1, 0, "Host: good.example", SEC, NULL);
	CHECK_EQ(f->st[0].len, 0);
	CHECK(!(f->state & FLOW_DATA0));
	cdata(ft, 1, "Host: evil.example");
	CHECK(stream_is(f, 0, "Host: evil.example"));
	CHECK_EQ(fs->noack_ignored, 1);
	CHECK_EQ(fs->inconsistent, 0);
	/* held data past a hole: a FIN without ACK skips nothing */
	cdata(ft, 30, "later");
	tcp(ft, C_IP, 40000, S_IP, 443, TH_FIN, 35, 0, NULL, SEC, NULL);
	CHECK_EQ(f->st[0].holes, 0);
	CHECK_EQ(f->fin_dirs, 0);
	/* data from the server without ACK is no answer */
	tcp(ft, S_IP, 443, C_IP, 40000, TH_PUSH, 1001, 0, "HTTP/1.1 200", SEC, NULL);
	CHECK(!(f->state & FLOW_DATA1));
	CHECK_EQ(f->st[1].len, 0);
	CHECK_EQ(fs->noack_ignored, 2);
	flow_table_free(ft);
}

/*
 * Data carried in a SYN: the receiver takes it only with Fast Open (its
 * SYN-ACK acknowledges it), else the client sends it again after the
 * handshake; a SYN-data decoy no longer wins over the real bytes.
 */
static void test_syn_data(void)
{
	/* refused (SYN-ACK for the SYN alone): dropped, the real bytes win */
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	const struct flow_stats *fs = flow_table_stats(ft);
	struct flow *f = tcp(ft, C_IP, 40000, S_IP, 80, TH_SYN, 1000, 0, "Host: good.example",
			     SEC, NULL);
	CHECK_EQ(f->st[0].len, 0);                     /* held, not the stream's */
	CHECK_EQ(f->st[0].syn_len, 18);
	tcp(ft, S_IP, 80, C_IP, 40000, TH_SYN | TH_ACK, 5000, 1001, NULL, SEC, NULL);
	CHECK_EQ(f->st[0].syn_len, 0);
	CHECK_EQ(fs->syn_data_dropped, 1);
	CHECK_EQ(flow_table_syn_taken(ft), 0); /* nothing for the analyzers */
	tcp(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_PUSH, 1001, 5001, "Host: evil.example", SEC,
	    NULL);
	CHECK(stream_is(f, 0, "Host: evil.example"));
	flow_table_free(ft);

	/* Fast Open: the SYN-ACK acknowledges the data, which is the stream's
	 * first bytes; a differing copy of them later is counted, not taken */
	ft = flow_table_new(NULL, NULL, NULL);
	fs = flow_table_stats(ft);
	f = tcp(ft, C_IP, 40000, S_IP, 80, TH_SYN, 1000, 0, "GET / HTTP/1.1\r\n", SEC, NULL);
	tcp(ft, C_IP, 40000, S_IP, 80, TH_SYN, 1000, 0, "GET / HTTP/1.1\r\n", SEC, NULL);
	tcp(ft, S_IP, 80, C_IP, 40000, TH_SYN | TH_ACK, 5000, 1017, NULL, SEC, NULL);
	CHECK(stream_is(f, 0, "GET / HTTP/1.1\r\n"));
	CHECK(f->st[0].isn_fixed);
	/* the analyzers must read the client's stream now (core_syn_data):
	 * the client may send nothing more; said once */
	CHECK_EQ(flow_table_syn_taken(ft), 1);
	CHECK_EQ(flow_table_syn_taken(ft), 0);
	tcp(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_PUSH, 1017, 5001, "Host: a\r\n\r\n", SEC, NULL);
	CHECK(stream_is(f, 0, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
	tcp(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_PUSH, 1001, 5001, "PUT", SEC, NULL);
	CHECK(stream_is(f, 0, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
	CHECK_EQ(fs->syn_data_dropped, 0);
	CHECK_EQ(fs->inconsistent, 1);
	/* a SYN with data after that (Linux ignores it) adds nothing */
	tcp(ft, C_IP, 40000, S_IP, 80, TH_SYN, 1000, 0, "GET / HTTP/1.1\r\nHost: b\r\n\r\nXX",
	    SEC, NULL);
	CHECK(stream_is(f, 0, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
	flow_table_free(ft);

	/* part of it acknowledged: that part taken */
	ft = flow_table_new(NULL, NULL, NULL);
	f = tcp(ft, C_IP, 40000, S_IP, 80, TH_SYN, 1000, 0, "abcdef", SEC, NULL);
	tcp(ft, S_IP, 80, C_IP, 40000, TH_SYN | TH_ACK, 5000, 1004, NULL, SEC, NULL);
	CHECK(stream_is(f, 0, "abc"));
	CHECK_EQ(flow_table_stats(ft)->syn_data_dropped, 1);
	flow_table_free(ft);

	/* a SYN of another ISN after a SYN with data (a decoy, as a tap near
	 * the client records it before the SYN-ACK) keeps the data with its
	 * own SYN: a Linux server with Fast Open answers the first, takes its
	 * data and resets the other; the SYN-ACK says which */
	ft = flow_table_new(NULL, NULL, NULL);
	f = tcp(ft, C_IP, 40000, S_IP, 80, TH_SYN, 1000, 0, "abc", SEC, NULL);
	tcp(ft, C_IP, 40000, S_IP, 80, TH_SYN, 7000, 0, "xyz", SEC, NULL);
	CHECK_EQ(f->st[0].syn_len, 3);
	tcp(ft, S_IP, 80, C_IP, 40000, TH_SYN | TH_ACK, 5000, 1004, NULL, SEC, NULL);
	CHECK(stream_is(f, 0, "abc"));
	CHECK_EQ(f->st[0].isn, 1001);
	tcp(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_PUSH, 1004, 5001, "def", SEC, NULL);
	CHECK(stream_is(f, 0, "abcdef"));
	flow_table_free(ft);
	/* ... and when the SYN-ACK answers the other, the data goes and the
	 * numbering is the other's */
	ft = flow_table_new(NULL, NULL, NULL);
	f = tcp(ft, C_IP, 40000, S_IP, 80, TH_SYN, 1000, 0, "abc", SEC, NULL);
	tcp(ft, C_IP, 40000, S_IP, 80, TH_SYN, 7000, 0, NULL, SEC, NULL);
	tcp(ft, S_IP, 80, C_IP, 40000, TH_SYN | TH_ACK, 5000, 7001, NULL, SEC, NULL);
	CHECK_EQ(f->st[0].len, 0);
	CHECK_EQ(f->st[0].syn_len, 0);
	CHECK_EQ(f->st[0].isn, 7001);
	tcp(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_PUSH, 7001, 5001, "ghi", SEC, NULL);
	CHECK(stream_is(f, 0, "ghi"));
	flow_table_free(ft);

	/* no SYN-ACK seen (one direction captured): the client's next
	 * segment says; from the SYN's data again: dropped ... */
	ft = flow_table_new(NULL, NULL, NULL);
	f = tcp(ft, C_IP, 40000, S_IP, 80, TH_SYN, 1000, 0, "Host: good.example", SEC, NULL);
	tcp(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_PUSH, 1001, 5001, "Host: evil.example", SEC,
	    NULL);
	CHECK(stream_is(f, 0, "Host: evil.example"));
	flow_table_free(ft);
	/* ... going on after it: taken */
	ft = flow_table_new(NULL, NULL, NULL);
	f = tcp(ft, C_IP, 40000, S_IP, 80, TH_SYN, 1000, 0, "GET / ", SEC, NULL);
	tcp(ft, C_IP, 40000, S_IP, 80, TH_ACK, 1007, 5001, NULL, SEC, NULL);
	CHECK(stream_is(f, 0, "GET / "));
	tcp(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_PUSH, 1007, 5001, "HTTP/1.0", SEC, NULL);
	CHECK(stream_is(f, 0, "GET / HTTP/1.0"));
	flow_table_free(ft);
}

/*
 * Copies that differ: the bytes kept do not change (the first in order;
 * held ones as before), the segment is counted in flows.inconsistent, in
 * order or not, and after the analyzer slid the bytes away or finished.
 * Skipped holes (zeros) filled later are no inconsistency.
 */
/* A TCP segment with its header bytes (l4) and a checksum that is right
 * (how 1), offload's partial sum (0), wrong (-1), right under a wrong
 * IPv4 header checksum (-2), or right in a packet whose IPv6 options its
 * receiver refuses (-3). */
static struct flow *tcp_ck(struct flow_table *ft, uint32_t s, uint16_t sp, uint32_t d,
			   uint16_t dp, uint8_t flags, uint32_t seq, uint32_t ack, const char *data,
			   int how)
{
	static uint8_t seg[2048];
	size_t n = data ? strlen(data) : 0, len = 20 + n;
	struct pkt p = mk(P_TCP, s, sp, d, dp, 2 * SEC);

	memset(seg, 0, 20);
	seg[0] = (uint8_t)(sp >> 8), seg[1] = (uint8_t)sp;
	seg[2] = (uint8_t)(dp >> 8), seg[3] = (uint8_t)dp;
	put32(seg + 4, seq);
	put32(seg + 8, ack);
	seg[12] = 5 << 4;
	seg[13] = flags;
	seg[14] = 0xfa;
	memcpy(seg + 20, data ? data : "", n);
	uint64_t pseudo = csum_pseudo(4, p.src, p.dst, 6, len);
	uint16_t ck = how == 0 ? csum_be(csum_fold(pseudo))
			       : (uint16_t)~csum_be(csum_fold(csum_add(pseudo, seg, len)));
	if (how == -1)
		ck ^= 0x0101;
	seg[16] = (uint8_t)(ck >> 8), seg[17] = (uint8_t)ck;
	p.tcp_flags = flags;
	p.seq = seq;
	p.ack = ack;
	p.l4 = seg;
	p.l4_len = len;
	p.payload = seg + 20;
	p.payload_len = n;
	if (how == -2)
		p.flags |= PKT_IP_CSUM_BAD;
	if (how == -3)
		p.flags |= PKT_RX_DROP; /* (its checksum right) */
	struct flow *f = flow_table_update(ft, &p);
	CHECK(p.flow == f);
	return f;
}

/*
 * A segment in an IPv6 packet whose options Linux's IP layer refuses
 * (PKT_RX_DROP, decode.c ip6_opts_drop; FINDINGS R21-F5) is ignored at
 * once, from any sender: no state, no data. Before, a decoy request sent
 * so, ahead of the real one with the same sequence numbers, was read in
 * its place.
 */
static void test_rx_drop(void)
{
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	const struct flow_stats *fs = flow_table_stats(ft);
	struct flow *f, *g;

	f = tcp_ck(ft, C_IP, 40010, S_IP, 80, TH_SYN, 1000, 0, NULL, 0);
	tcp_ck(ft, S_IP, 80, C_IP, 40010, TH_SYN | TH_ACK, 5000, 1001, NULL, 0);
	tcp_ck(ft, C_IP, 40010, S_IP, 80, TH_ACK, 1001, 5001, NULL, 0);
	tcp_ck(ft, C_IP, 40010, S_IP, 80, TH_ACK | TH_PUSH, 1001, 5001, "GET /decoy HTTP/1.1\r\n", -3);
	CHECK_EQ(fs->rx_drop, 1);
	CHECK_EQ(f->st[0].len, 0);
	tcp_ck(ft, C_IP, 40010, S_IP, 80, TH_ACK | TH_PUSH, 1001, 5001, "GET /creds HTTP/1.1\r\n", 0);
	CHECK(stream_is(f, 0, "GET /creds HTTP/1.1\r\n"));
	CHECK_EQ(fs->inconsistent, 0);
	/* a RST so sent ends nothing */
	tcp_ck(ft, C_IP, 40010, S_IP, 80, TH_RST | TH_ACK, 1022, 5001, NULL, -3);
	CHECK_EQ(f->state & FLOW_RST_INIT, 0);
	CHECK_EQ(fs->rx_drop, 2);
	/* nor does a SYN of another ISN after a half close (port reuse, were
	 * it real) */
	tcp_ck(ft, C_IP, 40010, S_IP, 80, TH_ACK | TH_FIN, 1022, 5001, NULL, 0);
	uint64_t id = f->id;
	g = tcp_ck(ft, C_IP, 40010, S_IP, 80, TH_SYN, 7000, 0, NULL, -3);
	CHECK(g == f && g->id == id);
	CHECK_EQ(fs->rx_drop, 3);
	g = tcp_ck(ft, S_IP, 80, C_IP, 40010, TH_ACK | TH_PUSH, 5001, 1023, "srv", 0);
	CHECK(g == f && g->id == id);
	CHECK(stream_is(f, 1, "srv"));
	flow_table_free(ft);
}

/* "Checksums" (flow.h): a wrong checksum is ignored once a direction had two
 * right ones in a row, never where offload leaves partial sums, and
 * garbage between right ones starts the count again. */
static void test_checksums(void)
{
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	const struct flow_stats *fs = flow_table_stats(ft);
	struct flow *f;

	/* right SYN, a wrong ACK (the count starts again), right ACK: not
	 * settled, so the wrong data after it is taken (a rewrite's garbage) */
	f = tcp_ck(ft, C_IP, 40000, S_IP, 80, TH_SYN, 1000, 0, NULL, 1);
	tcp_ck(ft, S_IP, 80, C_IP, 40000, TH_SYN | TH_ACK, 5000, 1001, NULL, 1);
	tcp_ck(ft, C_IP, 40000, S_IP, 80, TH_ACK, 1001, 5001, NULL, -1);
	tcp_ck(ft, C_IP, 40000, S_IP, 80, TH_ACK, 1001, 5001, NULL, 1);
	CHECK_EQ(f->st[0].csum_ok, 1);
	tcp_ck(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_PUSH, 1001, 5001, "GET /a HTTP/1.1\r\n", -1);
	CHECK(stream_is(f, 0, "GET /a HTTP/1.1\r\n"));
	CHECK_EQ(fs->bad_checksum, 0);
	CHECK_EQ(f->st[0].csum_ok, 0);
	/* two right ones in a row: settled; then a decoy with a wrong TCP or
	 * IPv4 checksum is ignored, the real bytes taken */
	tcp_ck(ft, C_IP, 40000, S_IP, 80, TH_ACK, 1018, 5001, NULL, 1);
	tcp_ck(ft, C_IP, 40000, S_IP, 80, TH_ACK, 1018, 5001, NULL, 1);
	tcp_ck(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_PUSH, 1018, 5001, "Host: good\r\n", -1);
	tcp_ck(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_PUSH, 1018, 5001, "Host: good\r\n", -2);
	CHECK_EQ(fs->bad_checksum, 2);
	CHECK(stream_is(f, 0, "GET /a HTTP/1.1\r\n"));
	tcp_ck(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_PUSH, 1018, 5001, "Host: evil\r\n", 1);
	CHECK(stream_is(f, 0, "GET /a HTTP/1.1\r\nHost: evil\r\n"));
	/* ... a wrong pure ACK with URG names no urgent byte (its pointer, 0,
	 * would take the next byte out) ... */
	tcp_ck(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_URG, 1030, 5001, NULL, -1);
	CHECK_EQ(fs->bad_checksum, 3);
	tcp_ck(ft, C_IP, 40000, S_IP, 80, TH_ACK | TH_PUSH, 1030, 5001, "X", 1);
	CHECK(stream_is(f, 0, "GET /a HTTP/1.1\r\nHost: evil\r\nX"));
	CHECK_EQ(fs->urgent, 0);
	/* ... and a wrong RST neither ends nor refuses it */
	tcp_ck(ft, C_IP, 40000, S_IP, 80, TH_RST | TH_ACK, 1031, 5001, NULL, -1);
	CHECK_EQ(f->state & FLOW_RST_INIT, 0);
	CHECK_EQ(fs->bad_checksum, 4);
	/* the server's direction is its own: not settled, so taken */
	CHECK_EQ(f->st[1].csum_ok, 1);
	tcp_ck(ft, S_IP, 80, C_IP, 40000, TH_ACK | TH_PUSH, 5001, 1030, "HTTP/1.1 200", -1);
	CHECK(stream_is(f, 1, "HTTP/1.1 200"));
	CHECK_EQ(fs->bad_checksum, 4);

	/* offload's partial sums are never wrong, even after right ones */
	f = tcp_ck(ft, C_IP, 40001, S_IP, 80, TH_SYN, 2000, 0, NULL, 1);
	tcp_ck(ft, C_IP, 40001, S_IP, 80, TH_ACK, 2001, 1, NULL, 1);
	tcp_ck(ft, C_IP, 40001, S_IP, 80, TH_ACK | TH_PUSH, 2001, 1, "GET /b HTTP/1.1\r\n", 0);
	CHECK(stream_is(f, 0, "GET /b HTTP/1.1\r\n"));
	CHECK_EQ(fs->bad_checksum, 4);
	/* a wrong sum on a segment longer than an Ethernet frame holds (LRO
	 * on the capturing host, or a send offload had yet to cut) is not
	 * known, not wrong */
	{
		static char big[1600];
		memset(big, 'z', sizeof(big) - 1);
		tcp_ck(ft, C_IP, 40001, S_IP, 80, TH_ACK | TH_PUSH, 2018, 1, big, -1);
		CHECK_EQ(f->st[0].len, 17 + sizeof(big) - 1);
		CHECK_EQ(fs->bad_checksum, 4);
	}
	flow_table_free(ft);

	/* a SYN with a bad checksum and another ISN after a half close (port
	 * reuse, were it real) ends nothing when its sender's checksums are
	 * right: its receiver drops it */
	ft = flow_table_new(NULL, NULL, NULL);
	fs = flow_table_stats(ft);
	f = tcp_ck(ft, C_IP, 40003, S_IP, 80, TH_SYN, 4000, 0, NULL, 1);
	tcp_ck(ft, S_IP, 80, C_IP, 40003, TH_SYN | TH_ACK, 8000, 4001, NULL, 1);
	tcp_ck(ft, C_IP, 40003, S_IP, 80, TH_ACK, 4001, 8001, NULL, 1);
	tcp_ck(ft, C_IP, 40003, S_IP, 80, TH_ACK | TH_FIN, 4001, 8001, NULL, 1);
	uint64_t id = f->id;
	tcp_ck(ft, C_IP, 40003, S_IP, 80, TH_SYN, 6000, 0, NULL, -1);
	CHECK_EQ(fs->bad_checksum, 1);
	CHECK_EQ(fs->expired, 0);
	struct flow *g = tcp_ck(ft, S_IP, 80, C_IP, 40003, TH_ACK | TH_PUSH, 8001, 4002, "srv", 1);
	CHECK(g == f && g->id == id);
	CHECK(stream_is(f, 1, "srv"));
	/* ... and a right one starts the new connection */
	g = tcp_ck(ft, C_IP, 40003, S_IP, 80, TH_SYN, 6000, 0, NULL, 1);
	CHECK(g->id != id);
	CHECK_EQ(fs->expired, 1);
	flow_table_free(ft);

	/* data on a SYN-ACK whose SYN carried none: the client drops it (no
	 * Fast Open of its own), and reads what the server sends again */
	ft = flow_table_new(NULL, NULL, NULL);
	fs = flow_table_stats(ft);
	f = tcp(ft, C_IP, 40002, S_IP, 80, TH_SYN, 3000, 0, NULL, SEC, NULL);
	tcp(ft, S_IP, 80, C_IP, 40002, TH_SYN | TH_ACK, 9000, 3001, "HTTP/1.1 200 decoy", SEC, NULL);
	CHECK_EQ(f->st[1].len, 0);
	CHECK_EQ(fs->syn_data_dropped, 1);
	tcp(ft, S_IP, 80, C_IP, 40002, TH_ACK | TH_PUSH, 9001, 3001, "HTTP/1.1 403 real", SEC, NULL);
	CHECK(stream_is(f, 1, "HTTP/1.1 403 real"));
	flow_table_free(ft);
}

/* One UDP datagram of n payload bytes ('q') from s:sp to d:dp over ipv (the
 * addresses' last 4 bytes; IPv6 ones under fd57:5::), read from capture
 * source iface, its checksum as how says: 1 right, 0 offload's partial sum,
 * -1 wrong, -2 right but a wrong IPv4 header checksum, -4 zero. flags are
 * added (PKT_SHORT, PKT_REASSEMBLED). Returns the payload length the
 * analyzers get (0: dropped) and sets *fp to the flow. */
static size_t udp_ck(struct flow_table *ft, int ipv, uint32_t s, uint16_t sp, uint32_t d,
		     uint16_t dp, size_t n, int how, uint32_t iface, unsigned flags,
		     struct flow **fp)
{
	static uint8_t dg[2048];
	size_t len = 8 + n;
	struct pkt p = mk(P_UDP, s, sp, d, dp, 2 * SEC);

	if (ipv == 6) {
		static const uint8_t pre[12] = {0xfd, 0x57, 0, 5};
		memset(p.src, 0, 16), memset(p.dst, 0, 16);
		memcpy(p.src, pre, 12), memcpy(p.dst, pre, 12);
		put32(p.src + 12, s), put32(p.dst + 12, d);
		p.ipv = 6;
	}
	memset(dg, 0, 8);
	memset(dg + 8, 'q', n);
	dg[0] = (uint8_t)(sp >> 8), dg[1] = (uint8_t)sp;
	dg[2] = (uint8_t)(dp >> 8), dg[3] = (uint8_t)dp;
	dg[4] = (uint8_t)(len >> 8), dg[5] = (uint8_t)len;
	uint64_t pseudo = csum_pseudo(ipv, p.src, p.dst, 17, len);
	uint16_t ck = how == 0 ? csum_be(csum_fold(pseudo))
			       : (uint16_t)~csum_be(csum_fold(csum_add(pseudo, dg, len)));
	if (how == -1)
		ck ^= 0x0101;
	if (how == -4)
		ck = 0;
	dg[6] = (uint8_t)(ck >> 8), dg[7] = (uint8_t)ck;
	p.l4 = dg;
	p.l4_len = len;
	p.payload = dg + 8;
	p.payload_len = n;
	p.iface = iface;
	p.flags = flags | (how == -2 ? PKT_IP_CSUM_BAD : 0);
	struct flow *f = flow_table_update(ft, &p);
	CHECK(p.flow == f);
	if (fp)
		*fp = f;
	return p.payload_len;
}

/*
 * "UDP checksums" (flow.h; pcaps/review21/udp/FINDINGS.md): once a capture
 * source showed two datagrams whose checksums their stacks wrote (right, or
 * offload's partial sum) and at most 16 wrong ones for each before, a
 * datagram with a wrong checksum (the UDP one, the IPv4 header's, or over
 * IPv6 a zero one off tunnel ports) reaches no analyzer, whoever sent it:
 * a DNS query the resolver's kernel dropped is a decoy. Before, every one
 * was read, so decoys diluted dns_tunnel and raised metadata_probe.
 */
static void test_udp_checksums(void)
{
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	const struct flow_stats *fs = flow_table_stats(ft);
	struct flow *f;
	const uint32_t cl = 10, res = 53, spoof = 12;

	/* a decoy before anything settled: taken (a rewritten capture's
	 * garbage looks the same), then a query and its answer settle */
	CHECK_EQ(udp_ck(ft, 4, cl, 40000, res, 53, 30, -1, 0, 0, NULL), 30);
	CHECK_EQ(udp_ck(ft, 4, cl, 40001, res, 53, 30, 1, 0, 0, &f), 30);
	CHECK_EQ(udp_ck(ft, 4, res, 53, cl, 40001, 90, 1, 0, 0, NULL), 90);
	CHECK_EQ(fs->udp_bad_checksum, 0);
	/* now a decoy query is not read, nor counted in its flow ... */
	CHECK_EQ(udp_ck(ft, 4, cl, 40002, res, 53, 30, -1, 0, 0, &f), 0);
	CHECK_EQ(fs->udp_bad_checksum, 1);
	CHECK_EQ(f->pkts[0], 0);
	/* ... nor a decoy answer to a real query (no FLOW_REPLY) ... */
	CHECK_EQ(udp_ck(ft, 4, cl, 40003, res, 53, 30, 1, 0, 0, &f), 30);
	CHECK_EQ(udp_ck(ft, 4, res, 53, cl, 40003, 60, -1, 0, 0, NULL), 0);
	CHECK_EQ(f->state & FLOW_REPLY, 0);
	CHECK_EQ(fs->udp_bad_checksum, 2);
	/* ... nor one from an address never seen (the sender chooses it),
	 * nor one whose IPv4 header checksum is wrong */
	CHECK_EQ(udp_ck(ft, 4, spoof, 40004, res, 53, 30, -1, 0, 0, NULL), 0);
	CHECK_EQ(udp_ck(ft, 4, cl, 40005, res, 53, 30, -2, 0, 0, NULL), 0);
	CHECK_EQ(fs->udp_bad_checksum, 4);
	/* taken: offload's partial sum, IPv4's 0 (none), a datagram cut by
	 * the capture, one longer than a frame (GSO, GRO); a reassembled one
	 * is checked; an empty one is not counted */
	CHECK_EQ(udp_ck(ft, 4, cl, 40006, res, 53, 30, 0, 0, 0, NULL), 30);
	CHECK_EQ(udp_ck(ft, 4, cl, 40007, res, 53, 30, -4, 0, 0, NULL), 30);
	CHECK_EQ(udp_ck(ft, 4, cl, 40008, res, 53, 30, -1, 0, PKT_SHORT, NULL), 30);
	CHECK_EQ(udp_ck(ft, 4, cl, 40009, res, 443, 1600, -1, 0, 0, NULL), 1600);
	CHECK_EQ(udp_ck(ft, 4, cl, 40010, res, 53, 1600, -1, 0, PKT_REASSEMBLED, NULL), 0);
	CHECK_EQ(udp_ck(ft, 4, cl, 40011, res, 53, 0, -1, 0, 0, NULL), 0);
	CHECK_EQ(fs->udp_bad_checksum, 5);
	/* IPv6: 0 is no checksum, which udp6 drops but on a tunnel port */
	CHECK_EQ(udp_ck(ft, 6, cl, 40012, res, 53, 30, 1, 0, 0, NULL), 30);
	CHECK_EQ(udp_ck(ft, 6, cl, 40013, res, 53, 30, -4, 0, 0, NULL), 0);
	CHECK_EQ(udp_ck(ft, 6, cl, 40014, res, 4789, 30, -4, 0, 0, NULL), 30);
	CHECK_EQ(udp_ck(ft, 6, cl, 40015, res, 53, 30, -1, 0, 0, NULL), 0);
	CHECK_EQ(fs->udp_bad_checksum, 7);
	/* another capture source has a verdict of its own: a rewritten file
	 * replayed after this one, all garbage, is read as before */
	for (uint16_t i = 0; i < 40; i++)
		CHECK_EQ(udp_ck(ft, 4, cl, (uint16_t)(41000 + i), res, 53, 30, -1, 1, 0, NULL), 30);
	/* two right by chance after 40 wrong ones: still not settled */
	CHECK_EQ(udp_ck(ft, 4, cl, 41100, res, 53, 30, 1, 1, 0, NULL), 30);
	CHECK_EQ(udp_ck(ft, 4, cl, 41101, res, 53, 30, 1, 1, 0, NULL), 30);
	CHECK_EQ(udp_ck(ft, 4, cl, 41102, res, 53, 30, -1, 1, 0, NULL), 30);
	CHECK_EQ(fs->udp_bad_checksum, 7);
	flow_table_free(ft);

	/* a decoy between every two real datagrams (no two right in a row)
	 * does not keep the source unsettled; nor do partial sums alone */
	ft = flow_table_new(NULL, NULL, NULL);
	fs = flow_table_stats(ft);
	for (uint16_t i = 0; i < 2; i++) {
		CHECK_EQ(udp_ck(ft, 4, cl, (uint16_t)(42000 + i), res, 53, 30, -1, 0, 0, NULL), 30);
		CHECK_EQ(udp_ck(ft, 4, cl, (uint16_t)(42100 + i), res, 53, 30, 1, 0, 0, NULL), 30);
	}
	CHECK_EQ(udp_ck(ft, 4, cl, 42200, res, 53, 30, -1, 0, 0, NULL), 0);
	CHECK_EQ(udp_ck(ft, 4, cl, 42300, res, 53, 30, 0, 2, 0, NULL), 30);
	CHECK_EQ(udp_ck(ft, 4, res, 53, cl, 42300, 30, 0, 2, 0, NULL), 30);
	CHECK_EQ(udp_ck(ft, 4, cl, 42301, res, 53, 30, -1, 2, 0, NULL), 0);
	CHECK_EQ(fs->udp_bad_checksum, 2);
	flow_table_free(ft);

	/* in an IP packet whose options or extension headers Linux's IP layer
	 * refuses (PKT_RX_DROP): not read, whatever its checksum and whether
	 * or not the source settled (R22-F3); its flow is still made, for the
	 * policy */
	ft = flow_table_new(NULL, NULL, NULL);
	fs = flow_table_stats(ft);
	CHECK_EQ(udp_ck(ft, 4, cl, 43000, res, 53, 30, 1, 0, PKT_RX_DROP, &f), 0);
	CHECK(f != NULL);
	CHECK_EQ(udp_ck(ft, 6, cl, 43001, res, 53, 30, 1, 0, PKT_RX_DROP, NULL), 0);
	CHECK_EQ(udp_ck(ft, 4, cl, 43002, res, 53, 30, 1, 0, 0, NULL), 30);
	CHECK_EQ(udp_ck(ft, 4, cl, 43003, res, 53, 30, 1, 0, 0, NULL), 30);
	CHECK_EQ(udp_ck(ft, 4, cl, 43004, res, 53, 30, 1, 0, PKT_RX_DROP, NULL), 0);
	CHECK_EQ(udp_ck(ft, 4, cl, 43005, res, 53, 0, 1, 0, PKT_RX_DROP, NULL), 0);
	CHECK_EQ(fs->udp_rx_drop, 3);
	CHECK_EQ(fs->udp_bad_checksum, 0);
	CHECK_EQ(fs->rx_drop, 0);
	flow_table_free(ft);
}

/*
 * Segments larger than any on the wire: a capture of segmentation offload
 * (libpcap on a veth or a bridge gets the sender's TSO/GSO segments whole,
 * 14,480 bytes and up). Cut at the 16 KiB window, one ended the direction
 * for an analyzer that slides past what it read: the rest of a 31 KB HTTP
 * head, sent in segments of 7,240, 7,240, 14,480 and 2,343 bytes, was lost
 * with its Host. Such a segment, at the first bytes of a direction or in a
 * claimed flow, now widens the window to FLOW_STREAM_WIDE and is taken
 * whole; wire-size segments and unclaimed flows are cut as before.
 */
static void test_offload_segments(void)
{
	static char big[30001];
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct flow *f = conn(ft, 1);

	/* unclaimed, past its first bytes: cut at the window as before */
	memset(big, 'g', 14480);
	big[14480] = '\0';
	cdata(ft, 1, big);
	CHECK_EQ(f->st[0].len, 14480);
	cdata(ft, 1 + 14480, big);
	CHECK_EQ(f->st[0].len, 16384);
	CHECK(f->st[0].overflow && !f->st[0].wide);
	CHECK_EQ(flow_table_stats(ft)->stream_widened, 0);
	flow_table_free(ft);

	/* the first bytes of a direction: 30,000 in one segment, whole */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	memset(big, 'h', 30000);
	big[30000] = '\0';
	cdata(ft, 1, big);
	CHECK_EQ(f->st[0].len, 30000);
	CHECK(f->st[0].wide && !f->st[0].overflow);
	CHECK_EQ(flow_table_stats(ft)->stream_widened, 1);
	CHECK(stream_is(f, 0, big));
	flow_table_free(ft);

	/* claimed: a segment that crosses the window's end is taken whole,
	 * and the window stays FLOW_STREAM_WIDE */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	cdata(ft, 1, "GET / HTTP/1.1\r\n");
	f->app = APP_HTTP;
	memset(big, 'i', 14480);
	big[14480] = '\0';
	cdata(ft, 17, big);
	CHECK_EQ(f->st[0].wide, 0);
	cdata(ft, 17 + 14480, big);
	CHECK_EQ(f->st[0].len, 16 + 2 * 14480);
	CHECK(f->st[0].wide && !f->st[0].overflow);
	cdata(ft, 17 + 2 * 14480, "tail");
	CHECK_EQ(f->st[0].len, 16 + 2 * 14480 + 4);
	CHECK_EQ(flow_table_stats(ft)->stream_widened, 1);
	flow_table_free(ft);

	/* unclaimed, in its first 4 KiB: a PROXY line of its own, then a
	 * 21 KB hello in one segment, whole */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	cdata(ft, 1, "PROXY TCP4 10.0.0.1 10.0.0.2 40000 443\r\n");
	memset(big, 'l', 21000);
	big[21000] = '\0';
	cdata(ft, 1 + 40, big);
	CHECK_EQ(f->st[0].len, 40 + 21000);
	CHECK(f->st[0].wide && !f->st[0].overflow);
	flow_table_free(ft);

	/* unclaimed, its window empty far into the stream: a CONNECT tunnel
	 * an analyzer handed back, whose first segment is a 21 KB hello */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	memset(big, 'o', 6000);
	big[6000] = '\0';
	cdata(ft, 1, big);
	f->st[0].consumed = 6000;
	flow_stream_slide(&f->st[0]);
	CHECK_EQ(f->st[0].len, 0);
	memset(big, 'p', 21000);
	big[21000] = '\0';
	cdata(ft, 1 + 6000, big);
	CHECK_EQ(f->st[0].len, 21000);
	CHECK(f->st[0].wide && !f->st[0].overflow);
	flow_table_free(ft);

	/* claimed: a 9,000-byte segment on 7.9 KB pending (one GSO segment
	 * of a sender with TSO, smaller than a jumbo frame's bound) */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	f->app = APP_HTTP;
	memset(big, 'm', 7900);
	big[7900] = '\0';
	cdata(ft, 1, big);
	memset(big, 'n', 9000);
	big[9000] = '\0';
	cdata(ft, 1 + 7900, big);
	CHECK_EQ(f->st[0].len, 16900);
	CHECK(f->st[0].wide && !f->st[0].overflow);
	flow_table_free(ft);

	/* claimed, wire-size segments: cut at the window as before */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	f->app = APP_HTTP;
	memset(big, 'j', 1448);
	big[1448] = '\0';
	for (uint32_t i = 0; i < 12; i++)
		cdata(ft, 1 + i * 1448, big);
	CHECK_EQ(f->st[0].len, 16384);
	CHECK(f->st[0].overflow && !f->st[0].wide);
	/* ... and so is an offload's segment that starts past the window */
	memset(big, 'k', 14480);
	big[14480] = '\0';
	cdata(ft, 1 + 12 * 1448, big);
	CHECK_EQ(f->st[0].len, 16384);
	CHECK_EQ(flow_table_stats(ft)->stream_widened, 0);
	flow_table_free(ft);
}

/* The standard test connection's handshake from client port sp. */
static struct flow *conn_port(struct flow_table *ft, uint16_t sp)
{
	struct flow *f = tcp(ft, C_IP, sp, S_IP, 443, TH_SYN, 0, 0, NULL, SEC, NULL);
	tcp(ft, S_IP, 443, C_IP, sp, TH_SYN | TH_ACK, 1000, 1, NULL, SEC, NULL);
	CHECK(f != NULL && f->st[0].isn == 1);
	return f;
}

/* n bytes of c from client port sp at stream offset off. */
static void pdata(struct flow_table *ft, uint16_t sp, uint32_t off, char c, size_t n)
{
	static char b[8193];

	memset(b, c, n);
	b[n] = '\0';
	tcp(ft, C_IP, sp, S_IP, 443, TH_ACK | TH_PUSH, 1 + off, 1001, b, 2 * SEC, NULL);
}

/*
 * Reclaim: with stream_total_max full, a new stream takes the buffer of the
 * direction idle longest (the CLOCK sweep: a direction written since the
 * sweep last passed gets a second chance), never one of its own pair; with
 * nothing idle, the new bytes are not kept, as before.
 */
static void test_reclaim(void)
{
	struct flow_config cfg = {.stream_max = 4096, .stream_total_max = 16384};
	struct flow_table *ft = flow_table_new(&cfg, NULL, NULL);
	struct flow *a[6];

	for (int i = 0; i < 4; i++) { /* four windows of 4 KiB fill the cap */
		a[i] = conn_port(ft, (uint16_t)(41000 + i));
		pdata(ft, (uint16_t)(41000 + i), 0, (char)('a' + i), 3000);
		CHECK_EQ(a[i]->st[0].len, 3000);
	}
	CHECK_EQ(flow_table_stats(ft)->stream_bytes, 16384);
	a[4] = conn_port(ft, 41004);
	pdata(ft, 41004, 0, 'e', 3000); /* takes the first idle one's buffer */
	CHECK_EQ(a[4]->st[0].len, 3000);
	CHECK(!a[4]->st[0].overflow && a[4]->st[0].buf && a[4]->st[0].buf[2999] == 'e');
	CHECK(a[0]->st[0].buf == NULL && a[0]->st[0].done);
	for (int i = 1; i < 4; i++)
		CHECK(a[i]->st[0].buf != NULL && !a[i]->st[0].done);
	CHECK_EQ(flow_table_stats(ft)->stream_reclaimed, 1);
	CHECK_EQ(flow_table_stats(ft)->stream_capped, 0);
	CHECK(flow_table_stats(ft)->stream_bytes <= 16384);
	/* later bytes of the reclaimed direction are ignored */
	pdata(ft, 41000, 3000, 'a', 10);
	CHECK(a[0]->st[0].buf == NULL);
	/* b is written again: passed over; c, idle, goes */
	pdata(ft, 41001, 3000, 'b', 10);
	CHECK_EQ(a[1]->st[0].len, 3010);
	a[5] = conn_port(ft, 41005);
	pdata(ft, 41005, 0, 'f', 3000);
	CHECK_EQ(a[5]->st[0].len, 3000);
	CHECK(a[1]->st[0].buf != NULL && !a[1]->st[0].done);
	CHECK(a[2]->st[0].buf == NULL && a[2]->st[0].done);
	CHECK(a[3]->st[0].buf != NULL);
	CHECK_EQ(flow_table_stats(ft)->stream_reclaimed, 2);
	CHECK(flow_table_stats(ft)->stream_bytes <= 16384);
	/* d's analyzer read every byte (a keep-alive connection between two
	 * messages): its buffer goes, nothing is lost, and its next bytes are
	 * read from a new one */
	a[3]->st[0].consumed = a[3]->st[0].len;
	pdata(ft, 41001, 3010, 'b', 10); /* b busy again */
	struct flow *g = conn_port(ft, 41006);
	pdata(ft, 41006, 0, 'g', 3000);
	CHECK_EQ(g->st[0].len, 3000);
	CHECK(a[3]->st[0].buf == NULL && !a[3]->st[0].done);
	CHECK(a[3]->st[0].len == 0 && a[3]->st[0].slid == 3000 && a[3]->st[0].consumed == 0);
	CHECK(a[1]->st[0].buf != NULL);
	CHECK_EQ(flow_table_stats(ft)->stream_reclaimed, 3);
	pdata(ft, 41003, 3000, 'n', 20);
	CHECK(stream_is(a[3], 0, "nnnnnnnnnnnnnnnnnnnn"));
	flow_table_free(ft);

	/* A direction an analyzer is in the middle of reading (claimed, bytes
	 * unread) is taken only when nothing else can make the room: a request
	 * head begun, then the cap filled by connections no analyzer has,
	 * kept its bytes no longer (review19 R19-3) */
	cfg.stream_total_max = 16384;
	ft = flow_table_new(&cfg, NULL, NULL);
	a[0] = conn_port(ft, 43000);
	pdata(ft, 43000, 0, 'v', 3000); /* the head begun, claimed, unread */
	a[0]->app = APP_HTTP;
	flow_note_claim(a[0]);
	for (int i = 1; i < 4; i++) {
		a[i] = conn_port(ft, (uint16_t)(43000 + i));
		pdata(ft, (uint16_t)(43000 + i), 0, 'z', 3000);
		flow_note_claim(a[i]);
	}
	for (int i = 4; i < 6; i++) { /* two newcomers: two unclaimed ones go */
		a[i] = conn_port(ft, (uint16_t)(43000 + i));
		pdata(ft, (uint16_t)(43000 + i), 0, 'n', 3000);
		CHECK_EQ(a[i]->st[0].len, 3000);
	}
	CHECK(a[0]->st[0].buf != NULL && !a[0]->st[0].done);
	CHECK_EQ(flow_table_stats(ft)->stream_reclaimed, 2);
	/* once only claimed, unread ones are left, they go too, idle first */
	for (int i = 1; i < 6; i++) {
		a[i]->app = APP_HTTP;
		flow_note_claim(a[i]);
	}
	g = conn_port(ft, 43010);
	pdata(ft, 43010, 0, 'g', 3000);
	CHECK_EQ(g->st[0].len, 3000);
	CHECK_EQ(flow_table_stats(ft)->stream_reclaimed, 3);
	CHECK_EQ(flow_table_stats(ft)->stream_capped, 0);
	flow_table_free(ft);

	/* Only the writer's own pair holds the cap: nothing is taken from it */
	struct flow_config cfg2 = {.stream_max = 8192, .stream_total_max = 8192};
	ft = flow_table_new(&cfg2, NULL, NULL);
	struct flow *f = conn_port(ft, 42000);
	pdata(ft, 42000, 0, 'x', 4000);
	char srv[4001];
	memset(srv, 'y', 4000);
	srv[4000] = '\0';
	tcp(ft, S_IP, 443, C_IP, 42000, TH_ACK, 1001, 4001, srv, 2 * SEC, NULL);
	CHECK_EQ(f->st[1].len, 4000);
	pdata(ft, 42000, 4000, 'x', 1000); /* needs 8 KiB: no room, nothing idle */
	CHECK_EQ(f->st[0].len, 4000);
	CHECK(f->st[0].overflow);
	CHECK(f->st[1].buf != NULL && !f->st[1].done);
	CHECK_EQ(flow_table_stats(ft)->stream_reclaimed, 0);
	CHECK_EQ(flow_table_stats(ft)->stream_capped, 1);
	flow_table_free(ft);
}

/*
 * A widened buffer left nearly empty by the analyzer's slides shrinks as
 * bytes arrive, and grows again for the next large segment; the bytes held
 * are kept, and stream_bytes follows.
 */
static void test_shrink(void)
{
	static char big[60001];
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct flow *f = conn(ft, 1);

	memset(big, 's', 20000);
	big[20000] = '\0';
	cdata(ft, 1, big); /* an offload's segment in the first 4 KiB: widened */
	CHECK(f->st[0].wide && f->st[0].len == 20000 && f->st[0].cap > 16384);
	uint32_t wide_cap = f->st[0].cap;
	f->st[0].consumed = 19990; /* the analyzer read all but 10 bytes */
	flow_stream_slide(&f->st[0]);
	CHECK_EQ(f->st[0].len, 10);
	CHECK_EQ(f->st[0].cap, wide_cap); /* nothing came yet */
	cdata(ft, 20001, "0123456789");
	CHECK_EQ(f->st[0].cap, 1024);
	CHECK(stream_is_n(f, 0, "ssssssssss0123456789", 20));
	CHECK_EQ(flow_table_stats(ft)->stream_bytes, 1024);
	CHECK_EQ(flow_table_stats(ft)->stream_shrunk, 1);
	/* the next large segment grows it again, up to the wide window */
	memset(big, 't', 60000);
	big[60000] = '\0';
	cdata(ft, 20011, big);
	CHECK_EQ(f->st[0].len, 60020);
	CHECK(f->st[0].cap >= 60020 && !f->st[0].overflow);
	CHECK(f->st[0].buf[19] == '9' && f->st[0].buf[60019] == 't');
	/* a buffer over a quarter full is left as it is */
	f->st[0].consumed = 40000;
	flow_stream_slide(&f->st[0]);
	uint32_t cap = f->st[0].cap;
	cdata(ft, 80011, "x");
	CHECK_EQ(f->st[0].cap, cap);
	CHECK_EQ(flow_table_stats(ft)->stream_shrunk, 1);
	flow_table_free(ft);
}

/* An unclaimed direction at stream_max goes back to the global cap after
 * the packet's analyzers (flow_release_unread); a claimed one, or one below
 * stream_max, keeps its buffer. */
static void test_release_unread(void)
{
	static char big[20001];
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct flow *f = conn(ft, 1);

	memset(big, 'q', 16000);
	big[16000] = '\0';
	cdata(ft, 1, big);
	flow_release_unread(ft, f);
	CHECK(f->st[0].buf != NULL && !f->st[0].done); /* below stream_max */
	cdata(ft, 16001, "0123456789012345678901234567890123456789012345678901234567890123456789"
			 "0123456789012345678901234567890123456789012345678901234567890123456789"
			 "0123456789012345678901234567890123456789012345678901234567890123456789"
			 "0123456789012345678901234567890123456789012345678901234567890123456789"
			 "0123456789012345678901234567890123456789012345678901234567890123456789"
			 "0123456789012345678901234567890123456789012345678901234567890123456789");
	CHECK(f->st[0].overflow);
	f->app = APP_HTTP; /* claimed: kept */
	flow_release_unread(ft, f);
	CHECK(f->st[0].buf != NULL);
	f->app = APP_NONE;
	f->st[0].consumed = 100; /* handed back by an analyzer that read part */
	flow_release_unread(ft, f);
	CHECK(f->st[0].buf != NULL && !f->st[0].done);
	f->st[0].consumed = 0;
	flow_release_unread(ft, f);
	CHECK(f->st[0].buf == NULL && f->st[0].done);
	CHECK_EQ(flow_table_stats(ft)->stream_released, 1);
	CHECK_EQ(flow_table_stats(ft)->stream_bytes, 0);
	flow_release_unread(ft, NULL);
	flow_table_free(ft);

	/* a widened window past stream_max but not full: released too */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	memset(big, 'r', 20000);
	big[20000] = '\0';
	cdata(ft, 1, big);
	CHECK(f->st[0].wide && !f->st[0].overflow);
	flow_release_unread(ft, f);
	CHECK(f->st[0].buf == NULL && f->st[0].done);
	flow_table_free(ft);
}

static void test_inconsistent(void)
{
	struct flow_table *ft = flow_table_new(NULL, NULL, NULL);
	struct flow *f = conn(ft, 1);
	const struct flow_stats *fs = flow_table_stats(ft);

	cdata(ft, 1, "Host: good.example\r\n");
	cdata(ft, 1, "Host: good.example\r\n");        /* the same: nothing */
	CHECK_EQ(fs->inconsistent, 0);
	cdata(ft, 1, "Host: evil.example\r\n");
	CHECK(stream_is(f, 0, "Host: good.example\r\n"));
	CHECK_EQ(fs->inconsistent, 1);
	cdata(ft, 7, "evil");                          /* a part of it */
	CHECK_EQ(fs->inconsistent, 2);
	/* slid away: the remembered segment still tells */
	f->st[0].consumed = f->st[0].len;
	flow_stream_slide(&f->st[0]);
	cdata(ft, 1, "Host: evil.example\r\n");
	CHECK_EQ(fs->inconsistent, 3);
	cdata(ft, 1, "Host: good.example\r\n");
	CHECK_EQ(fs->inconsistent, 3);
	/* done: likewise */
	flow_stream_done(ft, f, 0);
	cdata(ft, 1, "Host: evil.example\r\n");
	CHECK_EQ(fs->inconsistent, 4);
	flow_table_free(ft);

	/* out of order: over held bytes, and in order over held bytes; which
	 * copy wins is as before */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	fs = flow_table_stats(ft);
	cdata(ft, 11, "1111");                         /* [10,14) */
	cdata(ft, 11, "1111");
	CHECK_EQ(fs->inconsistent, 0);
	cdata(ft, 9, "22222222");                      /* [8,16): lower, wins */
	CHECK_EQ(fs->inconsistent, 1);
	cdata(ft, 1, "abcdefghij");                    /* [0,10) over 8, 9 */
	CHECK(stream_is(f, 0, "abcdefghij222222"));
	CHECK_EQ(fs->inconsistent, 2);
	flow_table_free(ft);

	/* a hole skipped (zeros), its bytes arriving after: not counted */
	ft = flow_table_new(NULL, NULL, NULL);
	f = conn(ft, 1);
	fs = flow_table_stats(ft);
	cdata(ft, 1, "ab");
	cdata(ft, 5, "ef");
	tcp(ft, S_IP, 443, C_IP, 40000, TH_ACK, 1001, 7, NULL, 2 * SEC, NULL); /* skips [2,4) */
	CHECK_EQ(f->st[0].holes, 1);
	cdata(ft, 3, "cd");
	CHECK_EQ(fs->inconsistent, 0);
	flow_table_free(ft);
}

int main(void)
{
	test_direction();
	test_state();
	test_reasm_basic();
	test_reasm_decoy_isn();
	test_reasm_random();
	test_reasm_wrap();
	test_reasm_caps();
	test_reasm_many();
	test_reasm_slide();
	test_stream_records();
	test_reasm_holes();
	test_expiry();
	test_eviction();
	test_find();
	test_churn();
	test_bounded();
	test_urgent();
	test_noack();
	test_syn_data();
	test_inconsistent();
	test_offload_segments();
	test_release_unread();
	test_reclaim();
	test_shrink();
	test_checksums();
	test_rx_drop();
	test_udp_checksums();
	return check_done();
}
