/*
 * test_pcapng.c - the pcapng reader (sensor/pcapng.c).
 *
 * Files are built in memory by a small writer (either byte order, any
 * block) and read through fmemopen:
 *   - random files of one link type, read by pcapng.c and by libpcap,
 *     must give the same packets, timestamps and lengths (property);
 *   - interfaces of different link types, sections in both byte orders,
 *     if_tsresol/if_tsoffset, Simple and obsolete Packet blocks, skipped
 *     blocks: what each packet must be;
 *   - every cut of a file: a clean end exactly at block boundaries, damage
 *     (with the packets before it) anywhere else, and where a read fails
 *     (a decompressor's error) even at a boundary;
 *   - lying lengths, interface ids, resolutions: refused with a reason,
 *     never read out of bounds (ASan runs this too).
 */
#define _GNU_SOURCE /* fmemopen */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../sensor/pcapng.h"
#include "../../sensor/text.h"
#include "check.h"

/* ---- a pcapng writer ------------------------------------------------------ */

struct w {
	uint8_t *b;
	size_t n, cap;
	int be;
};

static void put(struct w *w, const void *p, size_t n)
{
	if (w->n + n > w->cap) {
		w->cap = (w->n + n) * 2 + 256;
		w->b = realloc(w->b, w->cap);
		if (!w->b)
			abort();
	}
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void put32(struct w *w, uint32_t v)
{
	uint8_t b[4];
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(w->be ? v >> (24 - 8 * i) : v >> (8 * i));
	put(w, b, 4);
}

static void put16(struct w *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(w->be ? v >> 8 : v), (uint8_t)(w->be ? v : v >> 8)};
	put(w, b, 2);
}

static void pad4(struct w *w)
{
	static const uint8_t z[3];
	put(w, z, (4 - w->n % 4) % 4);
}

/* A block: header, the body written by the caller between begin and end,
 * trailer; end patches the length. */
static size_t begin(struct w *w, uint32_t type)
{
	size_t at = w->n;
	put32(w, type);
	put32(w, 0);
	return at;
}

static void end(struct w *w, size_t at)
{
	pad4(w);
	uint32_t len = (uint32_t)(w->n - at + 4);
	put32(w, len);
	struct w p = {.b = w->b + at + 4, .cap = 4, .be = w->be};
	put32(&p, len);
}

static void shb(struct w *w, int be)
{
	w->be = be;
	size_t at = begin(w, PCAPNG_MAGIC);
	put32(w, 0x1A2B3C4D);
	put16(w, 1);
	put16(w, 0);
	put32(w, 0xffffffff);
	put32(w, 0xffffffff);
	end(w, at);
}

/* tsresol < 0: none; tsoffset written when nonzero */
static void idb(struct w *w, uint16_t linktype, uint32_t snaplen, int tsresol, int64_t tsoffset)
{
	size_t at = begin(w, 1);
	put16(w, linktype);
	put16(w, 0);
	put32(w, snaplen);
	put16(w, 2); /* if_name, to be skipped */
	put16(w, 3);
	put(w, "eth", 3);
	pad4(w);
	if (tsresol >= 0) {
		uint8_t r = (uint8_t)tsresol;
		put16(w, 9);
		put16(w, 1);
		put(w, &r, 1);
		pad4(w);
	}
	if (tsoffset) {
		put16(w, 14);
		put16(w, 8);
		uint64_t o = (uint64_t)tsoffset;
		if (w->be) {
			put32(w, (uint32_t)(o >> 32));
			put32(w, (uint32_t)o);
		} else {
			put32(w, (uint32_t)o);
			put32(w, (uint32_t)(o >> 32));
		}
	}
	put16(w, 0);
	put16(w, 0);
	end(w, at);
}

static void epb(struct w *w, uint32_t ifid, uint64_t ts, const uint8_t *d, uint32_t caplen,
		uint32_t wirelen)
{
	size_t at = begin(w, 6);
	put32(w, ifid);
	put32(w, (uint32_t)(ts >> 32));
	put32(w, (uint32_t)ts);
	put32(w, caplen);
	put32(w, wirelen);
	put(w, d, caplen);
	pad4(w);
	put16(w, 1); /* opt_comment */
	put16(w, 2);
	put(w, "hi", 2);
	pad4(w);
	end(w, at);
}

static void spb(struct w *w, const uint8_t *d, uint32_t len, uint32_t wirelen)
{
	size_t at = begin(w, 3);
	put32(w, wirelen);
	put(w, d, len);
	end(w, at);
}

static void pb(struct w *w, uint16_t ifid, uint64_t ts, const uint8_t *d, uint32_t caplen)
{
	size_t at = begin(w, 2);
	put16(w, ifid);
	put16(w, 0);
	put32(w, (uint32_t)(ts >> 32));
	put32(w, (uint32_t)ts);
	put32(w, caplen);
	put32(w, caplen);
	put(w, d, caplen);
	end(w, at);
}

/* a block of another kind: name resolution, statistics, custom */
static void other(struct w *w, uint32_t type, size_t n)
{
	size_t at = begin(w, type);
	for (size_t i = 0; i < n; i++)
		put(w, "x", 1);
	end(w, at);
}

/* ---- reading -------------------------------------------------------------- */

struct got {
	uint64_t ts;
	uint32_t caplen, wirelen;
	int dlt;
	uint8_t first; /* first data byte, 0 if none */
};

/* Read stream f whole: the packets into g (up to max), returns the pcapng
 * result of the last call (0 clean end, -1 damaged) or -2 when open failed.
 * f is closed. */
static int read_stream(FILE *f, struct got *g, size_t max, size_t *count, char *err,
		       size_t errlen)
{
	struct pcapng_pkt p;
	int r;

	*count = 0;
	struct pcapng *ng = pcapng_open(f, NULL, 0, err, errlen);
	if (!ng) {
		fclose(f);
		return -2;
	}
	while ((r = pcapng_next(ng, &p, err, errlen)) == 1) {
		if (*count < max)
			g[*count] = (struct got){p.ts_us, p.caplen, p.wirelen, p.dlt,
						 p.caplen ? p.data[0] : 0};
		(*count)++;
	}
	pcapng_close(ng);
	fclose(f);
	return r;
}

/* Read a file whole, as read_stream. */
static int read_all(const uint8_t *b, size_t n, struct got *g, size_t max, size_t *count,
		    char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)b, n ? n : 1, "rb");

	if (!f)
		abort();
	if (n == 0) /* fmemopen wants a size; an empty stream is read past it */
		fgetc(f);
	return read_stream(f, g, max, count, err, errlen);
}

/* A stream of b[0..n) whose read past them fails (EIO), as instream.c's
 * does where a decompressor meets damage or a cut after a whole block. */
struct failing {
	const uint8_t *b;
	size_t n, at;
};

static ssize_t failing_read(void *cookie, char *buf, size_t len)
{
	struct failing *s = cookie;
	size_t k = s->n - s->at < len ? s->n - s->at : len;

	if (!k) {
		errno = EIO;
		return -1;
	}
	memcpy(buf, s->b + s->at, k);
	s->at += k;
	return (ssize_t)k;
}

static int read_failing(const uint8_t *b, size_t n, struct got *g, size_t max, size_t *count,
			char *err, size_t errlen)
{
	struct failing s = {b, n, 0};
	FILE *f = fopencookie(&s, "rb", (cookie_io_functions_t){.read = failing_read});

	if (!f)
		abort();
	return read_stream(f, g, max, count, err, errlen);
}

/* ---- tests ---------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

/* Units per second of an if_tsresol value (-1: none, microseconds). */
static uint64_t resol_units(int r)
{
	uint64_t u = 1;
	if (r < 0)
		return 1000000;
	for (int i = 0; i < (r & 0x7f); i++)
		u *= r & 0x80 ? 2 : 10;
	return u;
}

/* Random files of one link type: pcapng.c agrees with libpcap on every
 * packet (time in µs, lengths, bytes). The times are about 2023 in each
 * interface's units: past 9999, where pcapng.c holds the time to the end of
 * 9999 and libpcap wraps it, test_ts_range checks them. */
static void test_against_libpcap(void)
{
	static uint8_t data[2048];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	static const int resols[] = {-1, 6, 9, 3, 0, 0x80 | 10, 0x80 | 20, 0x80 | 30};
	unsigned agree = 0;

	for (int round = 0; round < 400; round++) {
		struct w w = {0};
		/* one byte order per file: libpcap 1.10 reads a later
		 * section's length in the first one's (test_layout has both) */
		int nsec = 1 + (int)rnd(3), nifs[4], be = (int)rnd(2);
		uint64_t units[3];
		size_t want_pkts = 0;
		for (int s = 0; s < nsec; s++) {
			shb(&w, be);
			nifs[s] = 1 + (int)rnd(3);
			for (int i = 0; i < nifs[s]; i++) {
				int r = resols[rnd(8)];
				units[i] = resol_units(r);
				idb(&w, 1, 65535, r, rnd(4) == 0 ? (int64_t)rnd(100000) - 50000 : 0);
			}
			int npk = (int)rnd(12);
			for (int k = 0; k < npk; k++) {
				uint32_t cap = rnd(300), wire = cap + rnd(3) * rnd(100);
				uint32_t ifid = rnd((uint32_t)nifs[s]);
				uint64_t u = units[ifid];
				uint64_t ts = (1700000000ull + rnd(1u << 26)) * u +
					      ((uint64_t)rnd(1u << 30) * rnd(1u << 30)) % u;
				if (rnd(5) == 0)
					other(&w, rnd(2) ? 4 : 5, rnd(40));
				if (rnd(6) == 0)
					pb(&w, (uint16_t)ifid, ts, data, cap);
				else
					epb(&w, ifid, ts, data + rnd(100), cap, wire);
				want_pkts++;
			}
		}
		struct got mine[64];
		size_t n_mine = 0;
		char err[256];
		int r = read_all(w.b, w.n, mine, 64, &n_mine, err, sizeof(err));
		CHECK_EQ(r, 0);
		CHECK_EQ(n_mine, want_pkts);

		char perr[PCAP_ERRBUF_SIZE];
		FILE *f = fmemopen(w.b, w.n, "rb");
		pcap_t *pc = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_MICRO,
								      perr);
		CHECK(pc != NULL);
		if (!pc) {
			fprintf(stderr, "libpcap: %s\n", perr);
			fclose(f);
			free(w.b);
			continue;
		}
		struct pcap_pkthdr *h;
		const u_char *d;
		size_t k = 0;
		int same = 1;
		int pr;
		while ((pr = pcap_next_ex(pc, &h, &d)) == 1) {
			uint64_t ts = (uint64_t)h->ts.tv_sec * 1000000u + (uint64_t)h->ts.tv_usec;
			if (k >= n_mine || mine[k].ts != ts || mine[k].caplen != h->caplen ||
			    mine[k].wirelen != h->len || (h->caplen && mine[k].first != d[0])) {
				if (same && k < n_mine)
					fprintf(stderr, "round %d packet %zu: ts %llu/%llu caplen %u/%u "
							"len %u/%u\n",
						round, k, (unsigned long long)mine[k].ts,
						(unsigned long long)ts, mine[k].caplen, h->caplen,
						mine[k].wirelen, h->len);
				same = 0;
			}
			k++;
		}
		if (pr == PCAP_ERROR)
			fprintf(stderr, "round %d: libpcap: %s after %zu of %zu\n", round,
				pcap_geterr(pc), k, n_mine);
		CHECK(same && k == n_mine);
		agree += same && k == n_mine;
		pcap_close(pc);
		free(w.b);
	}
	CHECK_EQ(agree, 400);
}

/* Interfaces of different link types, a second section in the other byte
 * order, resolutions and offsets, the other packet blocks. */
static void test_layout(void)
{
	static const uint8_t d[8] = {0x45, 1, 2, 3, 4, 5, 6, 7};
	struct w w = {0};
	struct got g[16];
	size_t n;
	char err[256];

	shb(&w, 0);
	idb(&w, 1, 65535, -1, 0);            /* Ethernet, µs */
	other(&w, 0x80000001u, 8);           /* systemd journal: skipped */
	idb(&w, 101, 65535, 9, 0);           /* LINKTYPE_RAW, ns */
	idb(&w, 113, 4, 0x80 | 20, 100);     /* SLL, 2^-20 s, +100 s, snaplen 4 */
	epb(&w, 0, 1700000000000001ull, d, 8, 60);
	epb(&w, 1, 1700000000123456789ull, d, 8, 8);
	epb(&w, 2, (uint64_t)1700000000 << 20 | (1u << 19), d, 8, 8); /* + half a second */
	other(&w, 4, 12);                    /* name resolution: skipped */
	spb(&w, d, 8, 8);                    /* interface 0, last time, cut to... */
	other(&w, 0x00000BAD, 5);            /* custom: skipped */
	shb(&w, 1);                          /* a new section, big-endian */
	idb(&w, 228, 0, 3, 0);               /* IPv4, ms */
	pb(&w, 0, 1700000001000ull, d, 6);
	spb(&w, d, 8, 5);                    /* the wire had 5: 5 are kept */

	CHECK_EQ(read_all(w.b, w.n, g, 16, &n, err, sizeof(err)), 0);
	CHECK_EQ(n, 6);
	CHECK_EQ(g[0].dlt, DLT_EN10MB);
	CHECK_EQ(g[0].ts, 1700000000000001ull);
	CHECK_EQ(g[0].caplen, 8);
	CHECK_EQ(g[0].wirelen, 60);
	CHECK_EQ(g[1].dlt, DLT_RAW);
	CHECK_EQ(g[1].ts, 1700000000123456ull);
	CHECK_EQ(g[2].dlt, DLT_LINUX_SLL);
	CHECK_EQ(g[2].ts, 1700000100500000ull);
	CHECK_EQ(g[3].dlt, DLT_EN10MB);      /* simple: interface 0 */
	CHECK_EQ(g[3].ts, 1700000100500000ull); /* the last time seen */
	CHECK_EQ(g[3].caplen, 8);
	CHECK_EQ(g[4].dlt, DLT_IPV4);        /* the new section's interface 0 */
	CHECK_EQ(g[4].ts, 1700000001000000ull);
	CHECK_EQ(g[4].caplen, 6);
	CHECK_EQ(g[5].dlt, DLT_IPV4);
	CHECK_EQ(g[5].caplen, 5);
	CHECK_EQ(g[5].wirelen, 5);
	CHECK_EQ(g[5].first, 0x45);

	/* known at open: the link types of the interfaces before the first
	 * packet (a file need not be of its first one's alone) */
	FILE *f = fmemopen(w.b, w.n, "rb");
	struct pcapng *ng = f ? pcapng_open(f, NULL, 0, err, sizeof(err)) : NULL;
	CHECK(ng != NULL);
	if (ng) {
		int dlts[8];
		CHECK_EQ(pcapng_dlts(ng, dlts, 8), 3);
		CHECK(dlts[0] == DLT_EN10MB && dlts[1] == DLT_RAW && dlts[2] == DLT_LINUX_SLL);
		CHECK_EQ(pcapng_dlts(ng, dlts, 2), 2);
		struct pcapng_pkt p;
		CHECK_EQ(pcapng_next(ng, &p, err, sizeof(err)), 1);
		CHECK_EQ(p.ts_us, 1700000000000001ull);
		pcapng_close(ng);
	}
	if (f)
		fclose(f);

	/* a Simple Packet Block keeps at most the interface's snaplen */
	struct w s = {0};
	shb(&s, 0);
	idb(&s, 1, 4, -1, 0);
	spb(&s, d, 8, 8);
	CHECK_EQ(read_all(s.b, s.n, g, 16, &n, err, sizeof(err)), 0);
	CHECK_EQ(n, 1);
	CHECK_EQ(g[0].caplen, 4);
	CHECK_EQ(g[0].wirelen, 8);
	free(s.b);

	/* Every cut: open fails before the first interface is whole; after
	 * that, a cut on a block boundary is a clean end, any other is damage
	 * after the packets of the whole blocks before it. */
	size_t bounds[32], nb = 0, pkts_before[32];
	{
		size_t at = 0, pk = 0;
		int cur_be = 0;
		while (at < w.n && nb < 32) {
			uint32_t type, len;
			memcpy(&type, w.b + at, 4); /* (x86: little-endian) */
			if (type == PCAPNG_MAGIC) /* the byte-order magic's first byte */
				cur_be = w.b[at + 8] == 0x1A;
			len = cur_be ? (uint32_t)w.b[at + 4] << 24 | (uint32_t)w.b[at + 5] << 16 |
					       (uint32_t)w.b[at + 6] << 8 | w.b[at + 7]
				     : (uint32_t)w.b[at + 4] | (uint32_t)w.b[at + 5] << 8 |
					       (uint32_t)w.b[at + 6] << 16 | (uint32_t)w.b[at + 7] << 24;
			uint32_t t = cur_be ? __builtin_bswap32(type) : type;
			at += len;
			if (t == 2 || t == 3 || t == 6)
				pk++;
			bounds[nb] = at;
			pkts_before[nb++] = pk;
		}
		CHECK_EQ(at, w.n);
	}
	for (size_t cut = 0; cut <= w.n; cut++) {
		size_t b = 0;
		while (b < nb && bounds[b] < cut)
			b++;
		int on_bound = b < nb && bounds[b] == cut;
		int r = read_all(w.b, cut, g, 16, &n, err, sizeof(err));
		if (cut < bounds[1]) { /* the SHB and the first IDB */
			CHECK_EQ(r, -2);
		} else if (on_bound) {
			CHECK_EQ(r, 0);
			CHECK_EQ(n, pkts_before[b]);
			/* a stream whose read fails there has not ended */
			CHECK_EQ(read_failing(w.b, cut, g, 16, &n, err, sizeof(err)), -1);
			CHECK_EQ(n, pkts_before[b]);
		} else {
			CHECK_EQ(r, -1);
			CHECK_EQ(n, pkts_before[b - 1]);
		}
	}
	free(w.b);
}

/* Each lie is refused with its reason; none is read past. */
static void expect_damage(const struct w *w, const char *want, size_t want_pkts)
{
	struct got g[8];
	size_t n;
	char err[256] = "";
	int r = read_all(w->b, w->n, g, 8, &n, err, sizeof(err));
	CHECK(r == -1 || r == -2);
	CHECK_EQ(n, want_pkts);
	if (!strstr(err, want))
		fprintf(stderr, "want \"%s\", got \"%s\"\n", want, err);
	CHECK(strstr(err, want) != NULL);
}

static void test_lies(void)
{
	static const uint8_t d[64];
	struct w w;

	/* not a section header first */
	w = (struct w){0};
	other(&w, 1, 8);
	expect_damage(&w, "not a pcapng file", 0);
	free(w.b);
	/* no interface, a packet before any interface */
	w = (struct w){0};
	shb(&w, 0);
	expect_damage(&w, "no Interface Description Blocks", 0);
	epb(&w, 0, 1, d, 4, 4);
	expect_damage(&w, "a packet block before any Interface Description Blocks", 0);
	free(w.b);
	/* a bad byte-order magic, an unsupported version */
	w = (struct w){0};
	shb(&w, 0);
	w.b[8] = 0x4e;
	expect_damage(&w, "bad byte-order magic", 0);
	w.b[8] = 0x4d;
	w.b[12] = 2;
	expect_damage(&w, "unsupported pcapng version 2.0", 0);
	free(w.b);

	/* lengths: not a multiple of 4, below the minimum, over the maximum */
	static const uint32_t bad_len[] = {13, 8, PCAPNG_MAX_BLOCK + 4, 0xfffffffc};
	for (size_t i = 0; i < sizeof(bad_len) / sizeof(bad_len[0]); i++) {
		w = (struct w){0};
		shb(&w, 0);
		idb(&w, 1, 0, -1, 0);
		epb(&w, 0, 1, d, 4, 4);
		size_t at = w.n;
		epb(&w, 0, 2, d, 4, 4);
		memcpy(w.b + at + 4, &bad_len[i], 4);
		expect_damage(&w, "bad length", 1);
		free(w.b);
	}
	/* the length at a block's end not the one at its start: a trailer
	 * overwritten, or a leading length that takes the next block in too
	 * (its packet would be lost without a word) */
	w = (struct w){0};
	shb(&w, 0);
	idb(&w, 1, 0, -1, 0);
	epb(&w, 0, 1, d, 4, 4);
	epb(&w, 0, 2, d, 4, 4);
	w.b[w.n - 4] = 200;
	expect_damage(&w, "block of type 0x00000006 with a length of 44 at its start and 200 at "
			  "its end", 1);
	free(w.b);
	w = (struct w){0};
	shb(&w, 0);
	idb(&w, 1, 0, -1, 0);
	epb(&w, 0, 1, d, 4, 4);
	size_t second = w.n;
	epb(&w, 0, 2, d, 4, 4);
	epb(&w, 0, 3, d, 4, 4);
	w.b[second + 4] = 88;
	expect_damage(&w, "a length of 88 at its start and 44 at its end", 1);
	free(w.b);
	/* an interface that is not there (in a new section, the old ones are
	 * gone) */
	w = (struct w){0};
	shb(&w, 0);
	idb(&w, 1, 0, -1, 0);
	idb(&w, 1, 0, -1, 0);
	epb(&w, 1, 1, d, 4, 4);
	shb(&w, 0);
	idb(&w, 1, 0, -1, 0);
	epb(&w, 1, 2, d, 4, 4);
	expect_damage(&w, "a packet block for interface 1, but the section has 1", 1);
	free(w.b);
	/* a captured length past the block */
	w = (struct w){0};
	shb(&w, 0);
	idb(&w, 1, 0, -1, 0);
	size_t at = w.n;
	epb(&w, 0, 1, d, 8, 8);
	w.b[at + 20] = 200;
	expect_damage(&w, "a captured length of 200 past its block", 0);
	free(w.b);
	/* fixed fields cut by the block's own length */
	w = (struct w){0};
	shb(&w, 0);
	idb(&w, 1, 0, -1, 0);
	other(&w, 6, 8);
	expect_damage(&w, "enhanced packet block shorter than its fixed fields", 0);
	free(w.b);
	/* a resolution past 10^19 or 2^63 */
	w = (struct w){0};
	shb(&w, 0);
	idb(&w, 1, 0, 20, 0);
	expect_damage(&w, "if_tsresol 0x14 is out of range", 0);
	free(w.b);
	w = (struct w){0};
	shb(&w, 0);
	idb(&w, 1, 0, 0x80 | 64, 0);
	expect_damage(&w, "if_tsresol 0xc0 is out of range", 0);
	free(w.b);

	/* an option that runs past its block ends the options; the interface
	 * stands */
	w = (struct w){0};
	shb(&w, 0);
	at = begin(&w, 1);
	put16(&w, 1);
	put16(&w, 0);
	put32(&w, 0);
	put16(&w, 9);
	put16(&w, 400);
	end(&w, at);
	epb(&w, 0, 7, d, 4, 4);
	struct got g[2];
	size_t n;
	char err[256];
	CHECK_EQ(read_all(w.b, w.n, g, 2, &n, err, sizeof(err)), 0);
	CHECK_EQ(n, 1);
	CHECK_EQ(g[0].ts, 7);
	free(w.b);

	/* the interfaces of a section are bounded */
	w = (struct w){0};
	shb(&w, 0);
	for (unsigned i = 0; i <= PCAPNG_MAX_IFACES; i++)
		idb(&w, 1, 0, -1, 0);
	expect_damage(&w, "more than 65536 interfaces in one section", 0);
	free(w.b);
}

/* The bytes the caller read first (capture.c looks at the block type) are
 * read as the file's start. */
static void test_prefix(void)
{
	static const uint8_t d[4] = {1, 2, 3, 4};
	struct w w = {0};
	shb(&w, 1);
	idb(&w, 1, 0, -1, 0);
	epb(&w, 0, 5, d, 4, 4);
	FILE *f = fmemopen(w.b + 4, w.n - 4, "rb");
	char err[256];
	struct pcapng *ng = pcapng_open(f, w.b, 4, err, sizeof(err));
	CHECK(ng != NULL);
	if (ng) {
		struct pcapng_pkt p;
		CHECK_EQ(pcapng_first_dlt(ng), DLT_EN10MB);
		CHECK_EQ(pcapng_next(ng, &p, err, sizeof(err)), 1);
		CHECK_EQ(p.ts_us, 5);
		CHECK(p.caplen == 4 && memcmp(p.data, d, 4) == 0);
		CHECK_EQ(pcapng_next(ng, &p, err, sizeof(err)), 0);
		pcapng_close(ng);
	}
	fclose(f);
	free(w.b);
}

/* Timestamps RFC 3339 cannot write are held to its range, never wrapped:
 * with 1 s units, 2^64 - 1 s (and an offset that adds more) is the end of
 * 9999, an offset that takes a time before 1970 is 0, and a time in range
 * is kept to the microsecond. */
static void test_ts_range(void)
{
	static const uint8_t d[4] = {1, 2, 3, 4};
	static const struct {
		int tsresol;
		int64_t offset;
		uint64_t ts, want;
	} cases[] = {
		{0, 0, UINT64_MAX, TEXT_TIME_MAX_US},
		{0, INT64_MAX, 1, TEXT_TIME_MAX_US},
		{0, 0, 253402300799ull, 253402300799000000ull},
		{0, 0, 253402300800ull, TEXT_TIME_MAX_US},
		{0, -10, 5, 0},
		{0, INT64_MIN, UINT64_MAX, TEXT_TIME_MAX_US},
		{0, INT64_MIN, 5, 0},
		{6, -10, 12345678, 2345678},
		{9, 0, UINT64_MAX, 18446744073709551ull},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct w w = {0};
		shb(&w, 0);
		idb(&w, 1, 0, cases[k].tsresol, cases[k].offset);
		epb(&w, 0, cases[k].ts, d, 4, 4);
		FILE *f = fmemopen(w.b, w.n, "rb");
		char err[256];
		struct pcapng *ng = pcapng_open(f, NULL, 0, err, sizeof(err));
		CHECK(ng != NULL);
		if (ng) {
			struct pcapng_pkt p;
			CHECK_EQ(pcapng_next(ng, &p, err, sizeof(err)), 1);
			CHECK_EQ(p.ts_us, cases[k].want);
			pcapng_close(ng);
		}
		fclose(f);
		free(w.b);
	}
}

int main(void)
{
	test_against_libpcap();
	test_layout();
	test_lies();
	test_prefix();
	test_ts_range();
	return check_done();
}
