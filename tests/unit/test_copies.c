/*
 * test_copies.c - the same UDP or ICMP datagram from two capture sources
 * (sensor/copies.h): a copy from another source within the window is
 * recognised whatever its TTL; the same datagram again from the same
 * source, one outside the window, and one that differs in any byte the
 * fingerprint covers are not; the memory keeps the last COPIES_MAX
 * datagrams, the oldest forgotten first.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "sensor/copies.h"
#include "sensor/hash.h"

/* A UDP datagram 10.0.0.5:40000 -> 10.0.0.53:53 whose transport bytes are
 * l4[0..n), at time ts. */
static struct pkt dgram(const uint8_t *l4, size_t n, uint64_t ts)
{
	struct pkt p;

	memset(&p, 0, sizeof(p));
	p.ts_us = ts;
	p.ipv = 4;
	p.proto = IPPROTO_UDP;
	p.ttl = 64;
	memcpy(p.src, "\x0a\x00\x00\x05", 4);
	memcpy(p.dst, "\x0a\x00\x00\x35", 4);
	p.sport = 40000;
	p.dport = 53;
	p.l4 = l4;
	p.l4_len = n;
	p.payload = l4 + 8;
	p.payload_len = n - 8;
	return p;
}

int main(void)
{
	uint8_t a[40], b[40];
	const uint64_t t0 = 1796032800000000ull;

	CHECK_EQ(hash_init(), 0);
	struct copies *c = copies_new();
	CHECK(c != NULL);
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 7 + 1);
	memcpy(b, a, sizeof(b));

	struct pkt p = dgram(a, sizeof(a), t0);
	CHECK_EQ(copies_seen(c, &p, 0), 0); /* first seen */
	CHECK_EQ(copies_seen(c, &p, 0), 0); /* again from the same source: a retry */
	struct pkt q = dgram(b, sizeof(b), t0 + 40);
	q.ttl = 63; /* one router further on */
	CHECK_EQ(copies_seen(c, &q, 1), 1); /* the other source's copy */
	CHECK_EQ(copies_seen(c, &q, 2), 1); /* and a third's */
	/* the other source first, then the first one's, 0.9 s later */
	q.ts_us = t0 + 900000;
	CHECK_EQ(copies_seen(c, &q, 1), 1);
	/* a copy outside the window (1 s) is a new datagram */
	q.ts_us = t0 + 2500000;
	CHECK_EQ(copies_seen(c, &q, 1), 0);
	p.ts_us = t0 + 2500100; /* ... whose own copy is then recognised */
	CHECK_EQ(copies_seen(c, &p, 0), 1);
	/* any byte of the transport, an address or the protocol differs: not a copy */
	b[39] ^= 1;
	q = dgram(b, sizeof(b), t0);
	CHECK_EQ(copies_seen(c, &q, 5), 0);
	b[39] ^= 1;
	q = dgram(b, sizeof(b), t0);
	q.src[3] = 6;
	CHECK_EQ(copies_seen(c, &q, 5), 0);
	q = dgram(b, sizeof(b), t0);
	q.proto = IPPROTO_ICMP;
	CHECK_EQ(copies_seen(c, &q, 5), 0);
	q = dgram(b, 39, t0); /* one byte shorter */
	CHECK_EQ(copies_seen(c, &q, 5), 0);
	/* the same datagram inside a tunnel, or source-routed, is another way
	 * out, not a copy (egress_paths.pcap has the one next to the other) */
	q = dgram(b, sizeof(b), t0);
	q.encap = 1;
	q.outer.ipv = 4;
	q.outer.proto = IPPROTO_UDP;
	q.outer.dport = 4789;
	CHECK_EQ(copies_seen(c, &q, 5), 0);
	q.outer.dport = 6081; /* another carrier */
	CHECK_EQ(copies_seen(c, &q, 6), 0);
	q.outer.dport = 4789; /* the first tunnelled one's copy */
	CHECK_EQ(copies_seen(c, &q, 6), 1);
	q = dgram(b, sizeof(b), t0);
	q.flags |= PKT_SRCROUTE;
	q.route_to[0] = 192;
	CHECK_EQ(copies_seen(c, &q, 5), 0);

	/* one datagram sent over and over from one source (review19 R19-2: each
	 * repeat was remembered again, in one chain, and every packet walked
	 * it): one entry, holding the latest time */
	copies_free(c);
	c = copies_new();
	for (uint32_t i = 0; i < 20000; i++) {
		p = dgram(a, sizeof(a), t0 + (uint64_t)i * 500);
		CHECK_EQ(copies_seen(c, &p, 0), 0);
	}
	CHECK_EQ(copies_held(c), 1);
	q = dgram(b, sizeof(b), t0 + 19999ull * 500 + 900000); /* 10.9 s after the first */
	CHECK_EQ(copies_seen(c, &q, 1), 1);
	CHECK_EQ(copies_held(c), 1);

	/* the last COPIES_MAX datagrams are remembered, no more */
	copies_free(c);
	c = copies_new();
	static uint8_t many[COPIES_MAX + 1][12];
	for (uint32_t i = 0; i <= COPIES_MAX; i++) {
		memcpy(many[i], &i, sizeof(i));
		p = dgram(many[i], sizeof(many[i]), t0 + i);
		CHECK_EQ(copies_seen(c, &p, 0), 0);
	}
	p = dgram(many[0], sizeof(many[0]), t0 + COPIES_MAX + 1); /* forgotten */
	CHECK_EQ(copies_seen(c, &p, 1), 0);
	for (uint32_t i = 2; i <= COPIES_MAX; i += 997) { /* kept */
		p = dgram(many[i], sizeof(many[i]), t0 + COPIES_MAX + 1);
		CHECK_EQ(copies_seen(c, &p, 1), 1);
	}
	copies_free(c);
	copies_free(NULL);
	return check_done();
}
