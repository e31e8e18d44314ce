/*
 * many_flows.h - what test_http.c and test_h2c.c share to drive one
 * analyzer over thousands of hand-made flows (the pending-request budget
 * tests): a tally of the events, the feeding of a flow's bytes through one
 * buffer per direction shared by every flow (each flow's bytes are read
 * whole, and slid out, before the next one's), the hosts that fill a
 * request summary's bounds, and a module's own counters by name.
 */
#ifndef EW_TEST_MANY_FLOWS_H
#define EW_TEST_MANY_FLOWS_H

#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analyzers/module.h"
#include "check.h"
#include "sensor/flow.h"

#define MANY 3000
static uint8_t shared_buf[2][16384];

struct tally {
	struct emit emit;
	uint64_t req, resp, paired, wrong;
	const char *want; /* the host the next response pairs with ("" none) */
};

static int tally_obs(struct emit *e, const struct obs *o)
{
	struct tally *t = (struct tally *)e;

	if (o->kind == OBS_HTTP_REQUEST) {
		t->req++;
		return 0;
	}
	t->resp++;
	if (o->name_len) {
		t->paired++;
		t->wrong += strcmp(o->name, t->want) != 0;
	}
	return 0;
}

/* d[0, n) of f's direction dir, through shared_buf, to module m. */
static int many_feed_bytes(const struct module *m, void *state, struct flow *f, struct tally *t,
			   int dir, const uint8_t *d, size_t n)
{
	struct flow_stream *s = &f->st[dir];
	struct pkt p;

	s->buf = shared_buf[dir];
	CHECK(s->len + n <= sizeof(shared_buf[dir]));
	memcpy(s->buf + s->len, d, n);
	s->len += (uint32_t)n;
	memset(&p, 0, sizeof(p));
	p.proto = IPPROTO_TCP;
	p.ipv = 4;
	p.flow = f;
	p.dir = dir;
	p.payload = d;
	p.payload_len = (uint32_t)n;
	int r = m->on_packet(state, &p, &t->emit);
	CHECK_EQ(s->len, 0); /* all read and slid out */
	return r;
}

/* Host of request j of flow i: the flow and request first (a request
 * summary keeps HTTP_PAIR_HOST_MAX - 1 bytes of a host), then padding. */
static void many_host(char *h, size_t cap, int i, int j)
{
	int k = snprintf(h, cap, "f%d-r%d-", i, j);
	while (k < 300 && (size_t)k + 1 < cap)
		h[k++] = 'h';
	h[k] = '\0';
}

/* Module m's own counter name (m->counters). */
static uint64_t module_counter(const struct module *m, const void *state, const char *name)
{
	struct mod_counter mc[MOD_COUNTERS_MAX];
	unsigned n = m->counters(state, mc);

	for (unsigned i = 0; i < n; i++)
		if (strcmp(mc[i].name, name) == 0)
			return mc[i].value;
	CHECK(!"no such counter");
	return 0;
}

#endif
