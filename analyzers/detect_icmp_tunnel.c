/*
 * detect_icmp_tunnel.c - the icmp_tunnel detector of detect_icmp_tunnel.h.
 *
 * Echo messages are meant to carry a few bytes that come back unchanged;
 * a tunnel needs them to carry its data. So a reply that does not bring its
 * request's bytes back, or data (the payload before ping's filler) that is
 * large, or dense (high entropy) while not tiny, or a source that pushes
 * many bytes of data a minute, is raised. The facts come from the ICMP
 * analyzer: the type, the payload size (obs.size), and for the kinds that
 * carry data its measures (obs.icmp: data length and entropy, digest, echo
 * id and sequence); without them, the whole payload and the entropy of the
 * detail record (field 7, bits/byte x100). A message the capture cut is
 * judged by its size on the wire (the bytes libpcap did not keep are added
 * back, as data) and has no digest.
 */
#include "detect_icmp_tunnel.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sensor/hash.h"
#include "../sensor/record.h"
#include "../sensor/rules.h"
#include "../sensor/text.h"
#include "icmp.h"
#include "module.h"

#define VOL_NONE UINT16_MAX
#define VOL_BUCKETS (2 * ICMP_TUNNEL_SOURCES)
#define PEND_BUCKETS (2 * ICMP_TUNNEL_PENDING)

/* The minute window of a key: a source (the volume) or a source and its
 * peer (the distinct data); entries 0..nused-1 of a table are taken. The
 * fields a source's window uses are in the first cache line. */
struct vol {
	uint8_t ipv, alerted;
	uint8_t ndig;          /* pairs: digests in dig */
	uint8_t a[32];         /* the source; for a pair, the peer after it */
	uint16_t hnext;        /* bucket chain */
	uint16_t newer, older; /* activity list */
	uint64_t start_us;     /* window start, packet time */
	uint64_t bytes;        /* sources: echo payload bytes sent in the window */
	uint64_t dig[ICMP_TUNNEL_DISTINCT_MAX]; /* pairs: the different data digests */
	/* pairs: the last request's lead (obs_icmp.lead) and its packet time,
	 * kept across windows (lead_len 0: none yet) */
	uint8_t lead_len;
	uint8_t lead[ICMP_DIGEST_SKIP];
	uint64_t lead_us;
	/* pairs: the hour window of distinct data (a tumbling hour of packet
	 * time from hour_us): hour_n different digests, kept in the state's
	 * hour_dig row of the same index */
	uint8_t hour_alerted;
	uint16_t hour_n;
	uint64_t hour_us;
};

/*
 * A table of windows, chained by a keyed hash of the key (sensor/hash.h):
 * an agent that can forge source addresses cannot choose which share a
 * bucket. A full table gives up the least recently active key's window,
 * over the whole table: what is kept does not depend on the hash, so
 * neither does a replay, and to push a busy key out a sender must bring in
 * ICMP_TUNNEL_SOURCES - 1 others after that key's last message.
 */
struct vol_table {
	struct vol e[ICMP_TUNNEL_SOURCES];
	uint16_t bucket[VOL_BUCKETS];
	uint16_t newest, oldest; /* activity list ends */
	unsigned nused;
};

/* An echo request awaiting its replies (an entry of the pending table). */
struct pend {
	uint8_t ipv;
	uint16_t id, seq;
	uint16_t hnext;        /* bucket chain */
	uint16_t bucket;       /* the chain it is on */
	uint32_t len;          /* payload bytes */
	uint64_t digest;       /* obs_icmp.digest of the request */
	uint64_t ts_us;        /* packet time of the request */
	uint8_t lead_len;      /* its obs_icmp.lead */
	uint8_t lead[ICMP_DIGEST_SKIP];
	uint8_t src[16], dst[16];
};

struct tunnel_state {
	const struct rules *rules; /* borrowed from module_env */
	/* Echo requests by (requester, peer, id, sequence), chained by a keyed
	 * hash; entries are taken in arrival order, the oldest request giving
	 * its place to a new one once all ICMP_TUNNEL_PENDING are taken (first
	 * in, first out over the whole table: what is kept does not depend on
	 * the hash). A request repeated with the same key updates its entry. */
	struct pend pend[ICMP_TUNNEL_PENDING];
	uint16_t pbucket[PEND_BUCKETS];
	unsigned pnext, pused;     /* the next entry taken; entries in use */
	struct vol_table src;      /* by source: the volume */
	struct vol_table pair;     /* by source and peer: the distinct data */
	/* the hour's different digests of pair.e[i] (the first hour_n of row
	 * i; 2 MiB, whose pages are touched only as pairs use them) */
	uint64_t hour_dig[ICMP_TUNNEL_SOURCES][ICMP_TUNNEL_HOUR_MAX];
};

static int is_echo(int ipv, unsigned type)
{
	return ipv == 4 ? (type == 8 || type == 0) : (type == 128 || type == 129);
}

/* "echo", or the message's type for the other kinds that carry data. */
static void kind_word(char *dst, size_t cap, int ipv, unsigned type)
{
	if (is_echo(ipv, type))
		snprintf(dst, cap, "echo");
	else
		snprintf(dst, cap, "ICMP%s type %u", ipv == 6 ? "v6" : "", type);
}

/* Entropy x100 from field 7 of the ICMP detail record; -1 when absent (or
 * not a number of at most 4 digits: it is at most 800). */
static int entropy_x100(const struct obs *o)
{
	const char *info = o->info, *rec;
	size_t len = o->info_len, rlen;
	struct rec_fields f;
	long long v;

	if (!info || !rec_split(&info, &len, REC_RS, &rec, &rlen))
		return -1;
	rec_fields_split(&f, rec, rlen);
	v = rec_fields_num(&f, 7);
	return v < 0 || v > 9999 ? -1 : (int)v;
}

/* A key's bucket: its ipv and its klen bytes. */
static uint32_t addr_bucket(int ipv, const uint8_t *a, size_t klen)
{
	uint8_t k[33];

	k[0] = (uint8_t)ipv;
	memcpy(k + 1, a, klen);
	return (uint32_t)hash_keyed(k, klen + 1) & (VOL_BUCKETS - 1);
}

static void vol_unlink(struct vol_table *t, uint16_t i)
{
	struct vol *v = &t->e[i];

	if (v->newer != VOL_NONE)
		t->e[v->newer].older = v->older;
	else
		t->newest = v->older;
	if (v->older != VOL_NONE)
		t->e[v->older].newer = v->newer;
	else
		t->oldest = v->newer;
}

static void vol_push(struct vol_table *t, uint16_t i)
{
	struct vol *v = &t->e[i];

	v->newer = VOL_NONE;
	v->older = t->newest;
	if (t->newest != VOL_NONE)
		t->e[t->newest].newer = i;
	else
		t->oldest = i;
	t->newest = i;
}

/* The window of key a (the source; with peer, that pair), now the most
 * recently active: found, else a new one starting at now_us, in a free
 * slot or in place of the least recently active key's. Never NULL. */
static struct vol *vol_slot(struct vol_table *t, int ipv, const uint8_t *src, const uint8_t *peer,
			    uint64_t now_us)
{
	size_t al = ipv == 6 ? 16 : 4, klen = peer ? 2 * al : al;
	uint8_t a[32];
	uint32_t b;
	uint16_t i;
	struct vol *v;

	memcpy(a, src, al);
	if (peer)
		memcpy(a + al, peer, al);
	b = addr_bucket(ipv, a, klen);
	for (i = t->bucket[b]; i != VOL_NONE; i = t->e[i].hnext) {
		v = &t->e[i];
		if (v->ipv == ipv && memcmp(v->a, a, klen) == 0) {
			if (t->newest != i) {
				vol_unlink(t, i);
				vol_push(t, i);
			}
			return v;
		}
	}
	if (t->nused < ICMP_TUNNEL_SOURCES) {
		i = (uint16_t)t->nused++;
	} else { /* the least recently active goes (its key is as long as ours) */
		i = t->oldest;
		v = &t->e[i];
		uint16_t *pp = &t->bucket[addr_bucket(v->ipv, v->a,
						      (v->ipv == 6 ? 16 : 4) * (peer ? 2 : 1))];
		while (*pp != i)
			pp = &t->e[*pp].hnext;
		*pp = v->hnext;
		vol_unlink(t, i);
	}
	v = &t->e[i];
	memset(v, 0, sizeof(*v));
	v->ipv = (uint8_t)ipv;
	memcpy(v->a, a, klen);
	v->start_us = now_us;
	v->hnext = t->bucket[b];
	t->bucket[b] = i;
	vol_push(t, i);
	return v;
}

/* Window v, started over when it is a minute old or more at now_us. */
static void vol_roll(struct vol *v, uint64_t now_us)
{
	if (now_us >= v->start_us + ICMP_TUNNEL_WINDOW_US) {
		v->start_us = now_us;
		v->bytes = 0;
		v->ndig = 0;
		v->alerted = 0;
	}
}

/* ---- the clock in a request's lead --------------------------------------- */

static uint64_t le_n(const uint8_t *b, unsigned n)
{
	uint64_t v = 0;
	while (n--)
		v = v << 8 | b[n];
	return v;
}

static uint64_t be_n(const uint8_t *b, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | b[i];
	return v;
}

/*
 * The send times pingers write at the start of their payload, widest first
 * (a 16-byte timeval must not be taken for an 8-byte one whose second half
 * is data). SEC: seconds then a fraction (unit_ns: microseconds or
 * nanoseconds, below one second), each of span/2 bytes; NS: one count of
 * nanoseconds; US32: a 32-bit count of microseconds that wraps, from an
 * unknown start (busybox's monotonic clock), so never judged against the
 * packet's time, only against the pair's last request.
 */
enum clock_kind { CK_SEC, CK_NS, CK_US32 };
static const struct clock_fmt {
	uint8_t span, kind, be;
	uint32_t unit_ns;
} clock_fmts[] = {
	{ 16, CK_SEC, 0, 1000 },  /* iputils on 64 bits: struct timeval */
	{ 16, CK_SEC, 0, 1 },     /* struct timespec */
	{ 8, CK_SEC, 0, 1000 },   /* a 32-bit timeval */
	{ 8, CK_SEC, 0, 1 },
	{ 8, CK_SEC, 1, 1000 },   /* BSD and macOS: struct tv32, network order */
	{ 8, CK_SEC, 1, 1 },
	{ 8, CK_NS, 1, 1 },       /* Go's pro-bing: UnixNano, big-endian */
	{ 8, CK_NS, 0, 1 },
	{ 4, CK_US32, 0, 1000 },  /* busybox */
	{ 4, CK_US32, 1, 1000 },
};

#define CLOCK_SEC_MAX (1ull << 33)     /* seconds past this are not a time (year 2242) */
#define CLOCK_NEAR_US (86400ull * 1000000ull) /* a first request's clock: within a day */
#define CLOCK_SLACK_NS 100000000ull    /* 100 ms, and a thousandth of the gap */

/* The time lead[0..f->span) holds in nanoseconds (US32: modulo 2^32 us);
 * 0 when it cannot be one. */
static int clock_read(const struct clock_fmt *f, const uint8_t *lead, uint64_t *ns)
{
	unsigned half = f->span / 2u;

	if (f->kind == CK_SEC) {
		uint64_t sec = f->be ? be_n(lead, half) : le_n(lead, half);
		uint64_t sub = f->be ? be_n(lead + half, half) : le_n(lead + half, half);
		if (sec >= CLOCK_SEC_MAX || sub >= 1000000000ull / f->unit_ns)
			return 0;
		*ns = sec * 1000000000ull + sub * f->unit_ns;
		return 1;
	}
	*ns = f->be ? be_n(lead, f->span) : le_n(lead, f->span);
	if (f->kind == CK_US32)
		*ns *= f->unit_ns;
	return 1;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* Whether the clock of format f moved from lead0 (len0 bytes) to lead (len
 * bytes) by gap_us, give or take CLOCK_SLACK_NS and a thousandth of it. */
static int clock_moved(const struct clock_fmt *f, const uint8_t *lead0, unsigned len0,
		       const uint8_t *lead, unsigned len, uint64_t gap_us)
{
	uint64_t t, t0, moved, gap_ns = gap_us * 1000u;

	if (f->span > len || f->span > len0 || gap_us >= CLOCK_NEAR_US || !clock_read(f, lead, &t) ||
	    !clock_read(f, lead0, &t0))
		return 0;
	if (f->kind == CK_US32) {
		if (gap_ns >= (1ull << 31) * 1000u)
			return 0;
		moved = (uint64_t)((uint32_t)(t / 1000u) - (uint32_t)(t0 / 1000u)) * 1000u;
	} else {
		if (t < t0)
			return 0;
		moved = t - t0;
	}
	return absdiff(moved, gap_ns) <= CLOCK_SLACK_NS + gap_ns / 1000u;
}

/*
 * How many leading bytes of lead[0..len) are a sender's clock: the span of
 * the first format (clock_fmts) whose time moved, since the pair's last
 * request (v->lead, v->lead_us), by the packets' own gap give or take
 * CLOCK_SLACK_NS and a thousandth; only for the pair's first request (or a
 * day or more after the last), a wall clock within CLOCK_NEAR_US of the
 * packet's time. 0 when none is. (Not the wall-clock test when the last
 * request cannot be read in a format: a clock that runs fast, read in
 * another format each time, would pass it.)
 */
static unsigned clock_span(const struct vol *v, const uint8_t *lead, unsigned len, uint64_t now_us)
{
	int have_last = v->lead_len > 0 && now_us >= v->lead_us &&
			now_us - v->lead_us < CLOCK_NEAR_US;

	for (size_t i = 0; i < sizeof(clock_fmts) / sizeof(clock_fmts[0]); i++) {
		const struct clock_fmt *f = &clock_fmts[i];
		uint64_t t;

		if (have_last) {
			if (clock_moved(f, v->lead, v->lead_len, lead, len, now_us - v->lead_us))
				return f->span;
		} else if (f->kind != CK_US32 && f->span <= len && clock_read(f, lead, &t) &&
			   absdiff(t / 1000u, now_us) <= CLOCK_NEAR_US) {
			return f->span;
		}
	}
	return 0;
}

/*
 * Whether a reply's lead (rlead[0..rlen)) is its request's (qlead[0..qlen)),
 * gap_us after it: the same bytes, or the same but for a clock at their
 * start that moved by the gap (a responder that writes its own send time
 * there, as the benchmark's generator does). A host echoes every byte it
 * was sent; a tunnel's far end that answers with data of its own in the
 * first 16 bytes (which the digests leave out) does not.
 */
static int lead_echoed(const uint8_t *qlead, unsigned qlen, const uint8_t *rlead, unsigned rlen,
		       uint64_t gap_us)
{
	if (qlen != rlen)
		return 0;
	if (memcmp(qlead, rlead, qlen) == 0)
		return 1;
	for (size_t i = 0; i < sizeof(clock_fmts) / sizeof(clock_fmts[0]); i++) {
		const struct clock_fmt *f = &clock_fmts[i];
		if (clock_moved(f, qlead, qlen, rlead, rlen, gap_us))
			return memcmp(qlead + f->span, rlead + f->span, qlen - f->span) == 0;
	}
	return 0;
}

/*
 * The digest a request counts under in its pair's distinct data: its
 * data_digest, which leaves out the data's first ICMP_DIGEST_SKIP bytes
 * (its lead: where ping writes its send time), joined with the digest of
 * what of the lead is not a clock (clock_span). ping's requests then count
 * as one, whatever their times, and data carried in the lead (a payload of
 * at most 16 bytes, `ping -s 15 -p HEX`; a send time replaced) counts as
 * different at every change. The lead is remembered for the next request.
 */
static uint64_t request_digest(struct vol *v, const struct obs_icmp *oi, uint64_t now_us)
{
	unsigned len = oi->lead_len > ICMP_DIGEST_SKIP ? ICMP_DIGEST_SKIP : oi->lead_len;
	unsigned span = len ? clock_span(v, oi->lead, len, now_us) : 0;
	uint64_t d = oi->data_digest;

	if (span < len) {
		uint8_t k[ICMP_DIGEST_SKIP + 8];
		memcpy(k, oi->lead + span, len - span);
		for (unsigned i = 0; i < 8; i++)
			k[len - span + i] = (uint8_t)(d >> (8 * i));
		d = hash_keyed(k, len - span + 8) | 1;
	}
	if (len) {
		memcpy(v->lead, oi->lead, len);
		v->lead_len = (uint8_t)len;
		v->lead_us = now_us;
	}
	return d;
}

/*
 * The hour's count of different data of pair v, whose digests are dig[],
 * with digest d of a request at now_us: 1 when it is the (max + 1)th in the
 * pair's hour (a tumbling hour of packet time), for the first time in that
 * hour and when the minute's count has not been raised in it (a channel
 * that fast is raised every minute already). The digests are kept whole,
 * as the minute's are, so the count does not depend on the hash's key.
 */
static int distinct_hour(struct vol *v, uint64_t *dig, uint64_t d, uint64_t now_us, unsigned max)
{
	if (!v->hour_us || now_us >= v->hour_us + ICMP_TUNNEL_HOUR_US || now_us < v->hour_us) {
		v->hour_us = now_us ? now_us : 1;
		v->hour_n = 0;
		v->hour_alerted = 0;
	}
	if (v->hour_alerted)
		return 0;
	for (unsigned i = 0; i < v->hour_n; i++)
		if (dig[i] == d)
			return 0;
	if (v->hour_n < max && v->hour_n < ICMP_TUNNEL_HOUR_MAX) {
		dig[v->hour_n++] = d;
		return 0;
	}
	v->hour_alerted = 1;
	return 1;
}

/*
 * Distinct data from src to peer: oi is the obs_icmp of a message src began
 * (a request, not a reply), counted under request_digest. DD_MINUTE when it
 * is the (max + 1)th different one within the pair's minute window, for the
 * first time in that window; else DD_HOUR when it is the (max_hour + 1)th in
 * the pair's hour (distinct_hour); else 0. ping sends the same data each
 * time, whatever its size and pattern (-p), so data that keeps changing
 * between one pair is a channel, fast or slow.
 */
enum { DD_MINUTE = 1, DD_HOUR };
static int distinct_data(struct tunnel_state *st, int ipv, const uint8_t *src,
			 const uint8_t *peer, const struct obs_icmp *oi, uint64_t now_us,
			 unsigned max, unsigned max_hour)
{
	struct vol *v = vol_slot(&st->pair, ipv, src, peer, now_us);
	uint64_t digest = request_digest(v, oi, now_us);
	int hour = distinct_hour(v, st->hour_dig[v - st->pair.e], digest, now_us, max_hour);

	vol_roll(v, now_us);
	if (v->alerted)
		return hour ? DD_HOUR : 0;
	for (unsigned i = 0; i < v->ndig; i++)
		if (v->dig[i] == digest)
			return hour ? DD_HOUR : 0;
	if (v->ndig < max && v->ndig < ICMP_TUNNEL_DISTINCT_MAX) {
		v->dig[v->ndig++] = digest;
		return hour ? DD_HOUR : 0;
	}
	v->alerted = 1;
	v->hour_alerted = 1; /* raised this hour: the hour's count need not be */
	return DD_MINUTE;
}

/* The bucket of the request src -> dst, id, seq. */
static uint16_t pend_bucket(int ipv, const uint8_t *src, const uint8_t *dst, uint16_t id,
			    uint16_t seq)
{
	uint8_t k[37];
	size_t al = ipv == 6 ? 16 : 4;

	k[0] = (uint8_t)ipv;
	memcpy(k + 1, src, al);
	memcpy(k + 1 + al, dst, al);
	k[1 + 2 * al] = (uint8_t)(id >> 8);
	k[2 + 2 * al] = (uint8_t)id;
	k[3 + 2 * al] = (uint8_t)(seq >> 8);
	k[4 + 2 * al] = (uint8_t)seq;
	return (uint16_t)(hash_keyed(k, 5 + 2 * al) & (PEND_BUCKETS - 1));
}

/* The entry of that request on chain b; NULL when there is none. */
static struct pend *pend_find(struct tunnel_state *st, uint16_t b, int ipv, const uint8_t *src,
			      const uint8_t *dst, uint16_t id, uint16_t seq)
{
	size_t al = ipv == 6 ? 16 : 4;

	for (uint16_t i = st->pbucket[b]; i != VOL_NONE; i = st->pend[i].hnext) {
		struct pend *e = &st->pend[i];
		if (e->ipv == ipv && e->id == id && e->seq == seq && memcmp(e->src, src, al) == 0 &&
		    memcmp(e->dst, dst, al) == 0)
			return e;
	}
	return NULL;
}

/* A new entry on chain b: a free one, else the oldest, taken off its chain. */
static struct pend *pend_take(struct tunnel_state *st, uint16_t b)
{
	uint16_t i = (uint16_t)st->pnext;
	struct pend *e = &st->pend[i];

	st->pnext = (st->pnext + 1) % ICMP_TUNNEL_PENDING;
	if (st->pused < ICMP_TUNNEL_PENDING) {
		st->pused++;
	} else {
		uint16_t *pp = &st->pbucket[e->bucket];
		while (*pp != i)
			pp = &st->pend[*pp].hnext;
		*pp = e->hnext;
	}
	memset(e, 0, sizeof(*e));
	e->bucket = b;
	e->hnext = st->pbucket[b];
	st->pbucket[b] = i;
	return e;
}

/*
 * Echo bookkeeping for message o of packet p: a request is remembered; a
 * reply is compared with the request it answers (the same id and sequence,
 * the other way, within ICMP_TUNNEL_REPLY_US). Returns 1 when the reply's
 * payload is not its request's (length, digest, or lead: lead_echoed), with
 * *req_len the
 * request's length; 0 otherwise, and when either digest is unknown.
 */
static int echo_mismatch(struct tunnel_state *st, const struct pkt *p, const struct obs *o,
			 int reply, uint32_t *req_len)
{
	const struct obs_icmp *oi = o->icmp;
	struct pend *e;
	uint16_t id, seq;

	if (!oi || oi->id < 0 || oi->seq < 0 || !is_echo(p->ipv, o->type))
		return 0;
	id = (uint16_t)oi->id;
	seq = (uint16_t)oi->seq;
	if (!reply) {
		uint16_t b = pend_bucket(p->ipv, p->src, p->dst, id, seq);
		e = pend_find(st, b, p->ipv, p->src, p->dst, id, seq);
		if (!e) {
			e = pend_take(st, b);
			e->ipv = (uint8_t)p->ipv;
			e->id = id;
			e->seq = seq;
			memcpy(e->src, p->src, p->ipv == 6 ? 16 : 4);
			memcpy(e->dst, p->dst, p->ipv == 6 ? 16 : 4);
		}
		e->len = o->size;
		e->digest = oi->digest;
		e->lead_len = oi->lead_len > ICMP_DIGEST_SKIP ? ICMP_DIGEST_SKIP : oi->lead_len;
		memcpy(e->lead, oi->lead, e->lead_len);
		e->ts_us = p->ts_us;
		return 0;
	}
	e = pend_find(st, pend_bucket(p->ipv, p->dst, p->src, id, seq), p->ipv, p->dst, p->src,
		      id, seq);
	if (!e || p->ts_us < e->ts_us || p->ts_us - e->ts_us > ICMP_TUNNEL_REPLY_US ||
	    !e->digest || !oi->digest)
		return 0;
	*req_len = e->len;
	return e->len != o->size || e->digest != oi->digest ||
	       !lead_echoed(e->lead, e->lead_len, oi->lead,
			    oi->lead_len > ICMP_DIGEST_SKIP ? ICMP_DIGEST_SKIP : oi->lead_len,
			    p->ts_us - e->ts_us);
}

/*
 * Raise for message p. The row belongs to the echo's requester: a reply is
 * turned around (its destination becomes the alert's source), so a
 * conversation is one row whichever way its data flowed; the subject is the
 * peer.
 */
static void raise_tunnel(struct emit *out, const struct pkt *p, int reply, int score,
			 const char *detail, const char *evidence)
{
	char subject[64];
	struct pkt q = reply ? pkt_turned(p) : *p;

	text_addr(subject, sizeof(subject), q.ipv, q.dst);
	struct alert a = {
		.class = "icmp_tunnel",
		.severity = 4,
		.score = score,
		.pkt = &q,
		.subject = subject,
		.detail = detail,
		.evidence = evidence,
	};
	out->alert(out, &a);
}

/* The evidence item of one message: an echo "request" or "reply", another
 * kind by its type; the data bytes when filler followed them. */
static void echo_evidence(char *dst, size_t cap, const char *kind, int reply, uint64_t size,
			  uint64_t data, int ent)
{
	int echo = strcmp(kind, "echo") == 0;
	char dpart[48] = "";

	if (data != size)
		snprintf(dpart, sizeof(dpart), " (%llu of data, then filler)",
			 (unsigned long long)data);
	snprintf(dst, cap, "%s%s: %llu bytes%s, entropy %d.%02d", echo ? "" : kind,
		 echo ? (reply ? "reply" : "request") : (reply ? " reply" : ""),
		 (unsigned long long)size, dpart, ent < 0 ? 0 : ent / 100, ent < 0 ? 0 : ent % 100);
}

static int tunnel_on_obs(void *state, const struct obs *o, struct emit *out)
{
	struct tunnel_state *st = state;
	const struct rules_thresholds *t = &st->rules->t;
	const struct pkt *p = o->pkt;
	char detail[256], evidence[160];
	uint64_t size, data, missing = 0;
	uint32_t req_len = 0;
	int ent, reply;
	char who[64];

	char kind[32];

	if (o->kind != OBS_ICMP || !p || (p->ipv != 4 && p->ipv != 6) ||
	    !icmp_carries_data(p->ipv, o->type))
		return MOD_NOT_MINE;
	if ((o->flags & OBS_F_TRUNCATED) && p->wirelen > p->caplen)
		missing = p->wirelen - p->caplen;
	size = o->size + missing;
	/* What is judged is the data: the payload less the filler that ping,
	 * traceroute and mtr put after it (obs_icmp; the bytes the capture
	 * did not keep count as data), and that part's entropy. */
	if (o->icmp) {
		data = o->icmp->data_len + missing;
		ent = o->icmp->data_entropy100;
	} else {
		data = size;
		ent = entropy_x100(o);
	}
	reply = !icmp_starts(p->ipv, o->type);
	kind_word(kind, sizeof(kind), p->ipv, o->type);
	/* the evidence is written only when something is raised: nearly every
	 * echo is an ordinary ping */
	evidence[0] = '\0';

	if (echo_mismatch(st, p, o, reply, &req_len)) {
		/* A host answers an echo with the request's own bytes; a reply
		 * with others is the far end talking back. */
		echo_evidence(evidence, sizeof(evidence), kind, reply, size, data, ent);
		snprintf(detail, sizeof(detail),
			 "echo reply of %llu bytes differs from its request of %u bytes "
			 "(id %d, sequence %d)",
			 (unsigned long long)size, req_len, o->icmp->id, o->icmp->seq);
		raise_tunnel(out, p, reply, 85, detail, evidence);
	} else if (data > t->icmp_payload_max) {
		echo_evidence(evidence, sizeof(evidence), kind, reply, size, data, ent);
		snprintf(detail, sizeof(detail), "%s payload of %llu bytes (more than %u)", kind,
			 (unsigned long long)data, t->icmp_payload_max);
		raise_tunnel(out, p, reply, 80, detail, evidence);
	} else if (data >= ICMP_TUNNEL_ENTROPY_MIN && ent > (int)t->icmp_entropy_x100) {
		echo_evidence(evidence, sizeof(evidence), kind, reply, size, data, ent);
		snprintf(detail, sizeof(detail),
			 "%s payload of %llu bytes at %d.%02d bits/byte (more than %u.%02u)", kind,
			 (unsigned long long)data, ent / 100, ent % 100,
			 t->icmp_entropy_x100 / 100, t->icmp_entropy_x100 % 100);
		raise_tunnel(out, p, reply, 75, detail, evidence);
	}

	struct vol *v = vol_slot(&st->src, p->ipv, p->src, NULL, p->ts_us);
	vol_roll(v, p->ts_us);
	v->bytes += data;
	if (v->bytes > t->icmp_volume_bytes && !v->alerted) {
		v->alerted = 1;
		if (!evidence[0])
			echo_evidence(evidence, sizeof(evidence), kind, reply, size, data, ent);
		text_addr(who, sizeof(who), p->ipv, p->src);
		snprintf(detail, sizeof(detail),
			 "%llu ICMP payload bytes from %s within a minute (more than %u)",
			 (unsigned long long)v->bytes, who, t->icmp_volume_bytes);
		raise_tunnel(out, p, reply, 70, detail, evidence);
	}

	int dd = 0;
	if (!reply && o->icmp && o->icmp->data_digest)
		dd = distinct_data(st, p->ipv, p->src, p->dst, o->icmp, p->ts_us,
				   t->icmp_distinct_data, t->icmp_distinct_data_hour);
	if (dd) {
		unsigned max = dd == DD_MINUTE ? t->icmp_distinct_data : t->icmp_distinct_data_hour;
		if (!evidence[0])
			echo_evidence(evidence, sizeof(evidence), kind, reply, size, data, ent);
		text_addr(who, sizeof(who), p->ipv, p->src);
		char peer[64];
		text_addr(peer, sizeof(peer), p->ipv, p->dst);
		snprintf(detail, sizeof(detail),
			 "%u distinct ICMP payloads from %s to %s within %s (more than %u)",
			 max + 1, who, peer, dd == DD_MINUTE ? "a minute" : "an hour", max);
		raise_tunnel(out, p, 0, dd == DD_MINUTE ? 75 : 70, detail, evidence);
	}
	return MOD_OK;
}

static int tunnel_init(const struct module_env *env, void **state)
{
	struct tunnel_state *st;

	if (!env || !env->rules)
		return -EINVAL;
	if (hash_init() != 0)
		return -ENOMEM;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->rules = env->rules;
	memset(st->src.bucket, 0xff, sizeof(st->src.bucket));
	memset(st->pair.bucket, 0xff, sizeof(st->pair.bucket));
	memset(st->pbucket, 0xff, sizeof(st->pbucket));
	st->src.newest = st->src.oldest = st->pair.newest = st->pair.oldest = VOL_NONE;
	*state = st;
	return 0;
}

static void tunnel_fini(void *state)
{
	free(state);
}

const struct module detect_icmp_tunnel_module = {
	.name = "detect_icmp_tunnel",
	.obs_mask = 1u << OBS_ICMP,
	.init = tunnel_init,
	.fini = tunnel_fini,
	.on_obs = tunnel_on_obs,
};
