/*
 * test_reader.c - sensor/reader.c: capture files written here with libpcap
 * (pcap_open_dead + pcap_dump) into a temporary directory, read back
 * through the reader thread and compared record by record: every frame's
 * bytes, time, lengths, file and link type, in order, with each file's
 * start, end and errors where they belong.
 *
 * Cases: several files of different link types; frames of every size class
 * from 0 to the largest (262144 bytes); a file cut in the middle of a record
 * (its frames, then the error, then the next file); a file that cannot be
 * opened and a refused link type (the stream ends there); a ring far smaller
 * than the data, with a consumer that holds still (the reader must wait and
 * its position stay within a ring of the consumer's); a FIFO (what was read
 * arrives before the writer sends more); stopping the reader mid-way, asleep
 * on a full ring or at once; two files merged by time (--merge). Run under
 * ASan (leaks) and TSan (./dev test).
 */
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "sensor/reader.h"

static char dir[256];

enum size_mode {
	SZ_SMALL, /* 0..1499 bytes, every 17th empty */
	SZ_MIX,   /* the largest, empty, one short of the largest, up to ~70 KB */
	SZ_WIDE,  /* up to 64 KiB, every 97th the largest */
	SZ_HUGE,  /* 150,000 bytes to the largest: a ring's end is padded often */
};

static void path_in(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", dir, name);
}

/* Frame k of stream `seed`: its lengths, time and bytes. */
static uint32_t gen_caplen(unsigned seed, unsigned k, enum size_mode m)
{
	switch (m) {
	case SZ_SMALL:
		return k % 17 == 0 ? 0 : (k * 37u + seed) % 1500u;
	case SZ_MIX:
		switch (k % 10) {
		case 0:
			return READER_MAX_FRAME;
		case 1:
			return 0;
		case 2:
			return READER_MAX_FRAME - 1;
		default:
			return (k * 7919u + seed) % 70000u + 1;
		}
	case SZ_WIDE:
		return k % 97 == 5 ? READER_MAX_FRAME : (k * 40503u + seed * 7u) % 65536u;
	default:
		return 150000u + (k * 7919u + seed) % (READER_MAX_FRAME - 150000u + 1);
	}
}

/* Frame bytes are a slice of one pseudo-random pattern, at an offset of
 * their own. */
static uint8_t pattern[2 * READER_MAX_FRAME];

static void pattern_init(void)
{
	uint32_t x = 2463534242u;
	for (size_t i = 0; i < sizeof(pattern); i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		pattern[i] = (uint8_t)x;
	}
}

static const uint8_t *gen_frame(unsigned seed, unsigned k, enum size_mode m,
				struct pcap_pkthdr *h)
{
	h->caplen = gen_caplen(seed, k, m);
	h->len = h->caplen + (k % 3) * 100;
	h->ts.tv_sec = 1700000000 + (time_t)seed * 1000 + (time_t)(k / 7);
	h->ts.tv_usec = (suseconds_t)((k * 1009u + seed) % 1000000u);
	return pattern + (seed * 7919u + k * 104729u) % READER_MAX_FRAME;
}

static uint64_t gen_ts(const struct pcap_pkthdr *h)
{
	return (uint64_t)h->ts.tv_sec * 1000000u + (uint64_t)h->ts.tv_usec;
}

/* Write n frames of stream seed as a pcap file of link type dlt; returns
 * the file's size. */
static long write_pcap(const char *path, int dlt, unsigned seed, unsigned n, enum size_mode m)
{
	pcap_t *p = pcap_open_dead_with_tstamp_precision(dlt, (int)READER_MAX_FRAME,
							 PCAP_TSTAMP_PRECISION_MICRO);
	pcap_dumper_t *d = p ? pcap_dump_open(p, path) : NULL;
	struct pcap_pkthdr h;
	struct stat st;

	if (!d) {
		fprintf(stderr, "cannot write %s: %s\n", path, p ? pcap_geterr(p) : "pcap_open_dead");
		exit(1);
	}
	for (unsigned k = 0; k < n; k++) {
		const uint8_t *data = gen_frame(seed, k, m, &h);
		pcap_dump((u_char *)d, &h, data);
	}
	pcap_dump_close(d);
	pcap_close(p);
	CHECK(stat(path, &st) == 0);
	return (long)st.st_size;
}

/* The expected stream: a list of items, a run of n frames being one item. */
struct exp {
	enum reader_kind kind;
	unsigned file;
	int dlt;
	unsigned seed, n; /* RD_FRAME: frames 0..n-1 of stream seed */
	enum size_mode mode;
	const char *msg;  /* a substring of the message (NULL: not checked) */
};

struct run_opts {
	unsigned sleep_first_ms; /* before taking anything */
	unsigned stop_after;     /* close after this many frames (0: read to the end) */
	unsigned hold;           /* keep one frame in hand while taking the next */
};

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* A record taken with a deadline of 30 s (a hang fails, not blocks). */
static const struct reader_rec *next_rec(struct reader *r)
{
	for (int i = 0; i < 300; i++) {
		const struct reader_rec *rec = reader_next(r, 100);
		if (rec)
			return rec;
	}
	return NULL;
}

/* Compare frame rec with frame k of e; 0 when equal. */
static int frame_differs(const struct reader_rec *rec, const struct exp *e, unsigned k)
{
	struct pcap_pkthdr h;
	const uint8_t *data = gen_frame(e->seed, k, e->mode, &h);

	if (rec->kind != RD_FRAME || rec->file != e->file || rec->dlt != e->dlt ||
	    rec->ts_us != gen_ts(&h) || rec->caplen != h.caplen || rec->wirelen != h.len ||
	    (h.caplen && memcmp(rec->data, data, h.caplen) != 0) ||
	    rec->len < sizeof(*rec) + h.caplen || rec->len % 8 != 0) {
		fprintf(stderr, "frame %u of file %u differs (kind %u file %u dlt %d caplen %u/%u)\n",
			k, e->file, rec->kind, rec->file, rec->dlt, rec->caplen, h.caplen);
		return 1;
	}
	return 0;
}

/* Read the stream of cfg and compare it with exp[0..n-1]; returns the
 * frames seen. With stop_after, closes the reader after that many frames
 * (with records still unreleased). */
static unsigned run(const struct reader_config *cfg, const struct exp *exp, unsigned n,
		    const struct run_opts *o)
{
	struct reader *r = NULL;
	const struct reader_rec *held = NULL;
	const struct exp *held_e = NULL;
	unsigned held_k = 0, frames = 0, bad = 0;
	char err[256];

	CHECK(reader_open(&r, cfg, err, sizeof(err)) == 0);
	if (!r)
		return 0;
	if (o->sleep_first_ms)
		sleep_ms(o->sleep_first_ms);
	for (unsigned i = 0; i < n; i++) {
		const struct exp *e = &exp[i];
		unsigned count = e->kind == RD_FRAME ? e->n : 1;
		for (unsigned k = 0; k < count; k++) {
			const struct reader_rec *rec = next_rec(r);
			if (!rec) {
				CHECK(!"a record came within 30 s");
				goto out;
			}
			/* the one held is compared only now: the record after
			 * it must not have overwritten it */
			if (held) {
				bad += frame_differs(held, held_e, held_k);
				reader_release(r, held);
				held = NULL;
			}
			if (e->kind == RD_FRAME) {
				frames++;
				if (o->hold) {
					held = rec, held_e = e, held_k = k;
				} else {
					bad += frame_differs(rec, e, k);
					reader_release(r, rec);
				}
				if (o->stop_after && frames == o->stop_after)
					goto out;
				continue;
			}
			CHECK_EQ(rec->kind, e->kind);
			CHECK_EQ(rec->file, e->file);
			if (e->kind == RD_FILE || e->kind == RD_BAD_LINK)
				CHECK_EQ(rec->dlt, e->dlt);
			if (e->kind == RD_FILE) {
				struct stat st;
				CHECK(stat(cfg->paths[e->file], &st) == 0 &&
				      rec->size == (uint64_t)st.st_size);
			}
			CHECK_EQ(rec->caplen, strlen((const char *)rec->data));
			if (e->msg && !strstr((const char *)rec->data, e->msg)) {
				fprintf(stderr, "message \"%s\" lacks \"%s\"\n",
					(const char *)rec->data, e->msg);
				CHECK(!"the message names what went wrong");
			}
			if (rec->kind == RD_DONE)
				goto out; /* nothing may be asked after it */
			reader_release(r, rec);
		}
	}
	CHECK(!"the stream ended with RD_DONE");
out:
	CHECK_EQ(bad, 0);
	reader_close(r);
	return frames;
}

static const struct run_opts READ_ALL = {.hold = 1};

/* Three files, two link types, every size class; with a default ring and
 * the smallest one, holding a frame while taking the next, and not. */
static void test_files_in_order(void)
{
	char a[512], b[512], c[512];
	path_in(a, sizeof(a), "a.pcap");
	path_in(b, sizeof(b), "b.pcap");
	path_in(c, sizeof(c), "c.pcap");
	write_pcap(a, DLT_EN10MB, 1, 700, SZ_SMALL);
	write_pcap(b, DLT_RAW, 2, 333, SZ_SMALL);
	write_pcap(c, DLT_EN10MB, 3, 40, SZ_MIX);
	char *paths[] = {a, b, c};
	const struct exp exp[] = {
		{RD_FILE, 0, DLT_EN10MB, 0, 0, 0, "EN10MB"},
		{RD_FRAME, 0, DLT_EN10MB, 1, 700, SZ_SMALL, NULL},
		{RD_EOF, 0, 0, 0, 0, 0, NULL},
		{RD_FILE, 1, DLT_RAW, 0, 0, 0, "RAW"},
		{RD_FRAME, 1, DLT_RAW, 2, 333, SZ_SMALL, NULL},
		{RD_EOF, 1, 0, 0, 0, 0, NULL},
		{RD_FILE, 2, DLT_EN10MB, 0, 0, 0, "EN10MB"},
		{RD_FRAME, 2, DLT_EN10MB, 3, 40, SZ_MIX, NULL},
		{RD_EOF, 2, 0, 0, 0, 0, NULL},
		{RD_DONE, 3, 0, 0, 0, 0, NULL},
	};
	const size_t n = sizeof(exp) / sizeof(exp[0]);
	struct reader_config cfg = {.paths = paths, .npaths = 3};
	const struct run_opts no_hold = {0};

	CHECK_EQ(run(&cfg, exp, n, &READ_ALL), 1073);
	CHECK_EQ(run(&cfg, exp, n, &no_hold), 1073);
	cfg.ring_bytes = 1; /* the smallest ring: 4 of the largest records */
	CHECK_EQ(run(&cfg, exp, n, &READ_ALL), 1073);
	unlink(a);
	unlink(b);
	unlink(c);
}

/* A file cut in the middle of a record: its whole frames, the error naming
 * it and where, then the next file as usual. Cut in the record header too. */
static void test_truncated(void)
{
	char cut[512], cut2[512], good[512], msg[600];
	path_in(cut, sizeof(cut), "cut.pcap");
	path_in(cut2, sizeof(cut2), "cut2.pcap");
	path_in(good, sizeof(good), "good.pcap");
	/* SZ_MIX frame 3 is 7919*3+3 % 70000 + 1 = 23761 bytes: cut inside it */
	write_pcap(cut, DLT_EN10MB, 3, 8, SZ_MIX);
	write_pcap(good, DLT_EN10MB, 4, 50, SZ_SMALL);
	long before = 24;
	struct pcap_pkthdr h;
	for (unsigned k = 0; k < 3; k++) {
		gen_frame(3, k, SZ_MIX, &h);
		before += 16 + (long)h.caplen;
	}
	CHECK(truncate(cut, before + 16 + 1000) == 0); /* 3 frames, then half of one */
	write_pcap(cut2, DLT_EN10MB, 5, 10, SZ_SMALL);
	long before2 = 24;
	for (unsigned k = 0; k < 6; k++) {
		gen_frame(5, k, SZ_SMALL, &h);
		before2 += 16 + (long)h.caplen;
	}
	CHECK(truncate(cut2, before2 + 9) == 0); /* 6 frames, then part of a header */
	char *paths[] = {cut, good, cut2};
	snprintf(msg, sizeof(msg), "%s: ", cut);
	const struct exp exp[] = {
		{RD_FILE, 0, DLT_EN10MB, 0, 0, 0, NULL},
		{RD_FRAME, 0, DLT_EN10MB, 3, 3, SZ_MIX, NULL},
		{RD_DAMAGED, 0, 0, 0, 0, 0, msg},
		{RD_FILE, 1, DLT_EN10MB, 0, 0, 0, NULL},
		{RD_FRAME, 1, DLT_EN10MB, 4, 50, SZ_SMALL, NULL},
		{RD_EOF, 1, 0, 0, 0, 0, NULL},
		{RD_FILE, 2, DLT_EN10MB, 0, 0, 0, NULL},
		{RD_FRAME, 2, DLT_EN10MB, 5, 6, SZ_SMALL, NULL},
		{RD_DAMAGED, 2, 0, 0, 0, 0, "after packet 6"},
		{RD_DONE, 3, 0, 0, 0, 0, NULL},
	};
	struct reader_config cfg = {.paths = paths, .npaths = 3};
	CHECK_EQ(run(&cfg, exp, sizeof(exp) / sizeof(exp[0]), &READ_ALL), 59);
	/* the first message says where too */
	const struct exp exp1[] = {
		{RD_FILE, 0, DLT_EN10MB, 0, 0, 0, NULL},
		{RD_FRAME, 0, DLT_EN10MB, 3, 3, SZ_MIX, NULL},
		{RD_DAMAGED, 0, 0, 0, 0, 0, "after packet 3"},
		{RD_DONE, 1, 0, 0, 0, 0, NULL},
	};
	cfg.npaths = 1;
	CHECK_EQ(run(&cfg, exp1, sizeof(exp1) / sizeof(exp1[0]), &READ_ALL), 3);
	unlink(cut);
	unlink(cut2);
	unlink(good);
}

/* A pcapng of one interface per link type in lt[0..n), one frame of len
 * bytes on each, in that order. */
static void write_ng(const char *path, const uint16_t *lt, unsigned n, unsigned len)
{
	FILE *f = fopen(path, "wb");
	uint32_t w[8];
	static uint8_t frame[256];

	if (!f || len > sizeof(frame)) {
		CHECK(!"write_ng");
		return;
	}
	memset(frame, 0x45, sizeof(frame));
	w[0] = 0x0A0D0D0A, w[1] = 28, w[2] = 0x1A2B3C4D, w[3] = 1, w[4] = 0xffffffff,
	w[5] = 0xffffffff, w[6] = 28;
	fwrite(w, 4, 7, f);
	for (unsigned i = 0; i < n; i++) {
		w[0] = 1, w[1] = 20, w[2] = lt[i], w[3] = 0, w[4] = 20;
		fwrite(w, 4, 5, f);
	}
	for (unsigned i = 0; i < n; i++) {
		uint32_t blen = 32 + ((len + 3) & ~3u);
		w[0] = 6, w[1] = blen, w[2] = i, w[3] = 0, w[4] = 1000 + i, w[5] = len, w[6] = len;
		fwrite(w, 4, 7, f);
		fwrite(frame, 1, (len + 3) & ~3u, f);
		fwrite(&blen, 4, 1, f);
	}
	fclose(f);
}

static int only_ethernet(int dlt)
{
	return dlt == DLT_EN10MB;
}

/* An unopenable file or a refused link type ends the stream where it is:
 * after the files before it, and no file after it is read. */
static void test_open_error_and_bad_link(void)
{
	char a[512], missing[512], text[512], raw[512], b[512];
	path_in(a, sizeof(a), "oe_a.pcap");
	path_in(missing, sizeof(missing), "missing.pcap");
	path_in(text, sizeof(text), "text.pcap");
	path_in(raw, sizeof(raw), "raw.pcap");
	path_in(b, sizeof(b), "oe_b.pcap");
	write_pcap(a, DLT_EN10MB, 6, 120, SZ_SMALL);
	write_pcap(raw, DLT_RAW, 7, 10, SZ_SMALL);
	write_pcap(b, DLT_EN10MB, 8, 10, SZ_SMALL);
	FILE *f = fopen(text, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("this is not a capture file at all\n", f);
		fclose(f);
	}

	char *p1[] = {a, missing, b};
	const struct exp e1[] = {
		{RD_FILE, 0, DLT_EN10MB, 0, 0, 0, NULL},
		{RD_FRAME, 0, DLT_EN10MB, 6, 120, SZ_SMALL, NULL},
		{RD_EOF, 0, 0, 0, 0, 0, NULL},
		{RD_OPEN_ERROR, 1, 0, 0, 0, 0, missing},
		{RD_DONE, 1, 0, 0, 0, 0, NULL},
	};
	struct reader_config cfg = {.paths = p1, .npaths = 3};
	CHECK_EQ(run(&cfg, e1, sizeof(e1) / sizeof(e1[0]), &READ_ALL), 120);

	char *p2[] = {text, a};
	const struct exp e2[] = {
		{RD_OPEN_ERROR, 0, 0, 0, 0, 0, text},
		{RD_DONE, 0, 0, 0, 0, 0, NULL},
	};
	cfg = (struct reader_config){.paths = p2, .npaths = 2};
	CHECK_EQ(run(&cfg, e2, sizeof(e2) / sizeof(e2[0]), &READ_ALL), 0);

	/* without accept_dlt every link type is read; with it, RAW ends it */
	char *p3[] = {a, raw, b};
	const struct exp e3[] = {
		{RD_FILE, 0, DLT_EN10MB, 0, 0, 0, NULL},
		{RD_FRAME, 0, DLT_EN10MB, 6, 120, SZ_SMALL, NULL},
		{RD_EOF, 0, 0, 0, 0, 0, NULL},
		{RD_BAD_LINK, 1, DLT_RAW, 0, 0, 0, "RAW"},
		{RD_DONE, 1, 0, 0, 0, 0, NULL},
	};
	cfg = (struct reader_config){.paths = p3, .npaths = 3, .accept_dlt = only_ethernet};
	CHECK_EQ(run(&cfg, e3, sizeof(e3) / sizeof(e3[0]), &READ_ALL), 120);
	const struct exp e4[] = {
		{RD_FILE, 0, DLT_EN10MB, 0, 0, 0, NULL},
		{RD_FRAME, 0, DLT_EN10MB, 6, 120, SZ_SMALL, NULL},
		{RD_EOF, 0, 0, 0, 0, 0, NULL},
		{RD_FILE, 1, DLT_RAW, 0, 0, 0, NULL},
		{RD_FRAME, 1, DLT_RAW, 7, 10, SZ_SMALL, NULL},
		{RD_EOF, 1, 0, 0, 0, 0, NULL},
		{RD_FILE, 2, DLT_EN10MB, 0, 0, 0, NULL},
		{RD_FRAME, 2, DLT_EN10MB, 8, 10, SZ_SMALL, NULL},
		{RD_EOF, 2, 0, 0, 0, 0, NULL},
		{RD_DONE, 3, 0, 0, 0, 0, NULL},
	};
	cfg.accept_dlt = NULL;
	CHECK_EQ(run(&cfg, e4, sizeof(e4) / sizeof(e4[0]), &READ_ALL), 140);

	/* a pcapng file whose first interface is of a link type refused and
	 * its second of one accepted is read whole, each frame with its own
	 * (the one refused counts as not IP later); one with none accepted is
	 * refused, naming the first */
	char ng[512];
	path_in(ng, sizeof(ng), "oe_ng.pcapng");
	static const uint16_t wifi_eth[] = {105, 1}, wifi_usb[] = {105, 189};
	write_ng(ng, wifi_eth, 2, 60);
	char *p5[] = {ng};
	cfg = (struct reader_config){.paths = p5, .npaths = 1, .accept_dlt = only_ethernet};
	struct reader *rd = NULL;
	char err[256];
	CHECK(reader_open(&rd, &cfg, err, sizeof(err)) == 0);
	if (rd) {
		static const int kinds[] = {RD_FILE, RD_FRAME, RD_FRAME, RD_EOF, RD_DONE};
		static const int dlts[] = {DLT_EN10MB, DLT_IEEE802_11, DLT_EN10MB, 0, 0};
		const struct reader_rec *rec;
		unsigned k = 0;
		while (k < 5 && (rec = next_rec(rd))) {
			CHECK_EQ(rec->kind, kinds[k]);
			if (rec->kind == RD_FILE || rec->kind == RD_FRAME)
				CHECK_EQ(rec->dlt, dlts[k]);
			k++;
			if (rec->kind == RD_DONE)
				break;
			reader_release(rd, rec);
		}
		CHECK_EQ(k, 5);
		reader_close(rd);
	}
	write_ng(ng, wifi_usb, 2, 60);
	const struct exp e5[] = {
		{RD_BAD_LINK, 0, DLT_IEEE802_11, 0, 0, 0, "IEEE802_11"},
		{RD_DONE, 0, 0, 0, 0, 0, NULL},
	};
	CHECK_EQ(run(&cfg, e5, sizeof(e5) / sizeof(e5[0]), &READ_ALL), 0);
	unlink(ng);
	unlink(a);
	unlink(text);
	unlink(raw);
	unlink(b);
}

/* ~90 MB through the smallest ring (2 MiB): it wraps many times (with
 * frames of 150 KB and more, its end is padded at nearly every turn), and
 * with a consumer that first holds still the reader fills it and waits, no
 * more than a ring ahead. */
static void test_small_ring(void)
{
	char a[512], b[512];
	path_in(a, sizeof(a), "wide_a.pcap");
	path_in(b, sizeof(b), "wide_b.pcap");
	char c[512];
	path_in(c, sizeof(c), "huge_c.pcap");
	long size_a = write_pcap(a, DLT_EN10MB, 9, 900, SZ_WIDE);
	write_pcap(b, DLT_LINUX_SLL, 10, 300, SZ_WIDE);
	write_pcap(c, DLT_EN10MB, 14, 250, SZ_HUGE);
	char *paths[] = {a, b, c};
	const struct exp exp[] = {
		{RD_FILE, 0, DLT_EN10MB, 0, 0, 0, NULL},
		{RD_FRAME, 0, DLT_EN10MB, 9, 900, SZ_WIDE, NULL},
		{RD_EOF, 0, 0, 0, 0, 0, NULL},
		{RD_FILE, 1, DLT_LINUX_SLL, 0, 0, 0, "LINUX_SLL"},
		{RD_FRAME, 1, DLT_LINUX_SLL, 10, 300, SZ_WIDE, NULL},
		{RD_EOF, 1, 0, 0, 0, 0, NULL},
		{RD_FILE, 2, DLT_EN10MB, 0, 0, 0, NULL},
		{RD_FRAME, 2, DLT_EN10MB, 14, 250, SZ_HUGE, NULL},
		{RD_EOF, 2, 0, 0, 0, 0, NULL},
		{RD_DONE, 3, 0, 0, 0, 0, NULL},
	};
	struct reader_config cfg = {.paths = paths, .npaths = 3, .ring_bytes = 4096};
	CHECK(size_a > 8 * 1024 * 1024);
	CHECK_EQ(run(&cfg, exp, sizeof(exp) / sizeof(exp[0]), &READ_ALL), 1450);

	/* Bounded: with nothing taken, the reader stops a ring ahead. */
	struct reader *r = NULL;
	char err[256];
	CHECK(reader_open(&r, &cfg, err, sizeof(err)) == 0);
	if (r) {
		sleep_ms(300);
		uint64_t done = reader_progress(r, 0);
		CHECK(done > 1024 * 1024);
		/* the 2 MiB ring, and the frame libpcap holds for it */
		CHECK(done <= (2u << 20) + (512u << 10));
		CHECK_EQ(reader_progress(r, 1), UINT64_MAX); /* not there yet */
		/* file 0 taken whole: the reader is in file 1 */
		const struct reader_rec *rec;
		while ((rec = next_rec(r)) && rec->kind != RD_FILE)
			reader_release(r, rec);
		CHECK(rec && rec->kind == RD_FILE && rec->file == 0 && rec->size == (uint64_t)size_a);
		if (rec)
			reader_release(r, rec);
		while ((rec = next_rec(r)) && rec->kind != RD_FILE)
			reader_release(r, rec);
		CHECK(rec && rec->file == 1);
		CHECK_EQ(reader_progress(r, 0), UINT64_MAX);
		CHECK(reader_progress(r, 1) <= (2u << 20) + (512u << 10));
		reader_close(r);
	}
	const struct run_opts still = {.sleep_first_ms = 200, .hold = 1};
	CHECK_EQ(run(&cfg, exp, sizeof(exp) / sizeof(exp[0]), &still), 1450);
	unlink(a);
	unlink(b);
	unlink(c);
}

/* Stopping: mid-way with the reader asleep on a full ring and records held,
 * at once after opening, and after the last record but before RD_DONE is
 * taken. ASan finds any file, ring or thread left behind. */
static void test_stop(void)
{
	char a[512], b[512];
	path_in(a, sizeof(a), "stop_a.pcap");
	path_in(b, sizeof(b), "stop_b.pcap");
	write_pcap(a, DLT_EN10MB, 11, 600, SZ_WIDE);
	write_pcap(b, DLT_EN10MB, 12, 600, SZ_WIDE);
	char *paths[] = {a, b};
	const struct exp exp[] = {
		{RD_FILE, 0, DLT_EN10MB, 0, 0, 0, NULL},
		{RD_FRAME, 0, DLT_EN10MB, 11, 600, SZ_WIDE, NULL},
		{RD_EOF, 0, 0, 0, 0, 0, NULL},
		{RD_FILE, 1, DLT_EN10MB, 0, 0, 0, NULL},
		{RD_FRAME, 1, DLT_EN10MB, 12, 600, SZ_WIDE, NULL},
		{RD_EOF, 1, 0, 0, 0, 0, NULL},
		{RD_DONE, 2, 0, 0, 0, 0, NULL},
	};
	const size_t n = sizeof(exp) / sizeof(exp[0]);
	struct reader_config cfg = {.paths = paths, .npaths = 2, .ring_bytes = 1};
	const struct run_opts mid = {.sleep_first_ms = 100, .stop_after = 50, .hold = 1};
	const struct run_opts second = {.stop_after = 700, .hold = 1};
	CHECK_EQ(run(&cfg, exp, n, &mid), 50);
	CHECK_EQ(run(&cfg, exp, n, &second), 700);

	for (int i = 0; i < 20; i++) {
		struct reader *r = NULL;
		char err[256];
		CHECK(reader_open(&r, &cfg, err, sizeof(err)) == 0);
		if (i % 2)
			sleep_ms(1);
		reader_close(r);
	}

	/* everything read, RD_DONE published but not taken */
	char *one[] = {a};
	struct reader *r = NULL;
	char err[256];
	cfg = (struct reader_config){.paths = one, .npaths = 1};
	CHECK(reader_open(&r, &cfg, err, sizeof(err)) == 0);
	if (r) {
		const struct reader_rec *rec;
		unsigned frames = 0;
		while ((rec = next_rec(r)) && rec->kind != RD_EOF) {
			frames += rec->kind == RD_FRAME;
			reader_release(r, rec);
		}
		CHECK_EQ(frames, 600);
		sleep_ms(50);
		reader_close(r);
	}
	reader_close(NULL);
	unlink(a);
	unlink(b);
}

/* A FIFO (size unknown, like stdin): each frame is handed over as soon as it
 * is read, not held back for a batch while the reader waits for more. */
static void test_fifo(void)
{
	char fifo[512], src[512];
	path_in(fifo, sizeof(fifo), "fifo");
	path_in(src, sizeof(src), "fifo_src.pcap");
	write_pcap(src, DLT_EN10MB, 13, 3, SZ_SMALL);
	if (mkfifo(fifo, 0600) != 0) {
		perror("mkfifo");
		CHECK(!"mkfifo");
		return;
	}
	/* the file's bytes: the header with frame 0, then frames 1 and 2 */
	static uint8_t bytes[8192];
	FILE *f = fopen(src, "rb");
	size_t len = f ? fread(bytes, 1, sizeof(bytes), f) : 0;
	if (f)
		fclose(f);
	size_t cut[3];
	struct pcap_pkthdr h;
	gen_frame(13, 0, SZ_SMALL, &h);
	cut[0] = 24 + 16 + h.caplen;
	gen_frame(13, 1, SZ_SMALL, &h);
	cut[1] = cut[0] + 16 + h.caplen;
	cut[2] = len;
	CHECK(len > cut[1]);

	char *paths[] = {fifo};
	struct reader_config cfg = {.paths = paths, .npaths = 1};
	struct reader *r = NULL;
	char err[256];
	CHECK(reader_open(&r, &cfg, err, sizeof(err)) == 0);
	int fd = open(fifo, O_WRONLY); /* meets the reader's open */
	CHECK(fd >= 0);
	if (!r || fd < 0)
		goto out;
	const struct reader_rec *rec;
	size_t from = 0;
	for (unsigned k = 0; k < 3; k++) {
		CHECK(write(fd, bytes + from, cut[k] - from) == (ssize_t)(cut[k] - from));
		from = cut[k];
		rec = next_rec(r);
		if (k == 0) {
			CHECK(rec && rec->kind == RD_FILE && rec->size == 0);
			if (rec)
				reader_release(r, rec);
			rec = next_rec(r);
		}
		/* frame k arrives while the writer still holds the FIFO open */
		CHECK(rec && rec->kind == RD_FRAME);
		if (!rec)
			goto out;
		const uint8_t *want = gen_frame(13, k, SZ_SMALL, &h);
		CHECK_EQ(rec->caplen, h.caplen);
		CHECK(memcmp(rec->data, want, h.caplen) == 0);
		reader_release(r, rec);
	}
	close(fd);
	fd = -1;
	rec = next_rec(r);
	CHECK(rec && rec->kind == RD_EOF);
	if (rec)
		reader_release(r, rec);
	rec = next_rec(r);
	CHECK(rec && rec->kind == RD_DONE);
out:
	if (fd >= 0)
		close(fd);
	reader_close(r);
	unlink(fifo);
	unlink(src);
}

/* The filter: compiled for each link type met (more of them than it keeps
 * compiled at once), frames that fail it left out and counted, a filter
 * that does not apply to a link type ending the stream with the reason. */
static void test_filter(void)
{
	static const uint16_t lt[] = {1, 101, 113, 276, 228, 229, 0, 108, 9, 50, 51,
				      104, 107, 10, 239, 105, 127, 1, 101, 113};
	const unsigned n = sizeof(lt) / sizeof(lt[0]);
	char ng[512];
	path_in(ng, sizeof(ng), "filter.pcapng");
	write_ng(ng, lt, n, 60);
	char *paths[] = {ng};
	char err[256];

	for (int k = 0; k < 3; k++) {
		static const char *const bpf[] = {"len >= 60", "len > 60", "len = 60 and less 60"};
		struct reader_config cfg = {.paths = paths, .npaths = 1, .bpf = bpf[k]};
		struct reader *r = NULL;
		CHECK(reader_open(&r, &cfg, err, sizeof(err)) == 0);
		if (!r)
			continue;
		const struct reader_rec *rec;
		unsigned frames = 0, done = 0;
		while (!done && (rec = next_rec(r))) {
			frames += rec->kind == RD_FRAME;
			if (rec->kind == RD_FRAME)
				CHECK_EQ(rec->dlt, lt[frames - 1] == 101 ? DLT_RAW : lt[frames - 1]);
			done = rec->kind == RD_DONE;
			reader_release(r, rec);
		}
		CHECK(done);
		CHECK_EQ(frames, k == 1 ? 0 : n);
		CHECK_EQ(reader_filtered(r), k == 1 ? n : 0);
		reader_close(r);
	}

	/* "ether host" compiles for Ethernet, not for raw IP: frame 0, then
	 * the error naming the file, the filter and the link type */
	struct reader_config cfg = {.paths = paths, .npaths = 1, .bpf = "ether host 2:0:0:0:0:1"};
	CHECK_EQ(reader_check_filter(cfg.bpf, err, sizeof(err)), 0);
	struct reader *r = NULL;
	CHECK(reader_open(&r, &cfg, err, sizeof(err)) == 0);
	if (r) {
		const struct reader_rec *rec;
		int kinds[8], nk = 0;
		char msg[1024] = "";
		while (nk < 8 && (rec = next_rec(r))) {
			kinds[nk++] = rec->kind;
			if (rec->kind == RD_OPEN_ERROR)
				snprintf(msg, sizeof(msg), "%s", (const char *)rec->data);
			reader_release(r, rec);
			if (kinds[nk - 1] == RD_DONE)
				break;
		}
		CHECK(nk == 3 && kinds[0] == RD_FILE && kinds[1] == RD_OPEN_ERROR && kinds[2] == RD_DONE);
		CHECK_EQ(reader_filtered(r), 1); /* the Ethernet frame is not from 2:0:0:0:0:1 */
		CHECK(strstr(msg, "filter \"ether host 2:0:0:0:0:1\" does not apply to link type RAW: ") !=
		      NULL);
		CHECK(strncmp(msg, ng, strlen(ng)) == 0);
		reader_close(r);
	}
	CHECK_EQ(reader_check_filter("hots 1", err, sizeof(err)), -1);
	CHECK(strstr(err, "syntax error") != NULL);
	unlink(ng);
}

/* Write a pcap whose frame k is at ts[k] microseconds and carries k and
 * the file's tag in its first two bytes. */
static void write_timed(const char *path, const uint64_t *ts, unsigned n, uint8_t tag)
{
	pcap_t *p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
							 PCAP_TSTAMP_PRECISION_MICRO);
	pcap_dumper_t *d = p ? pcap_dump_open(p, path) : NULL;
	uint8_t frame[60] = {0};

	CHECK(d != NULL);
	if (!d)
		exit(1);
	for (unsigned k = 0; k < n; k++) {
		struct pcap_pkthdr h = {.caplen = sizeof(frame), .len = sizeof(frame)};
		h.ts.tv_sec = (time_t)(ts[k] / 1000000u);
		h.ts.tv_usec = (suseconds_t)(ts[k] % 1000000u);
		frame[0] = tag;
		frame[1] = (uint8_t)k;
		pcap_dump((u_char *)d, &h, frame);
	}
	pcap_dump_close(d);
	pcap_close(p);
}

/* --merge: two files side by side come as one stream in time order (a tie
 * to the file given first), each file's start before its first frame (a
 * file opens when the merge reaches its first frame's time), its end right
 * after its last frame; the same with the smallest ring and with a --from
 * that leaves out the first frame of each. Then 70 files, every one a
 * stretch of its own: never more than one open, all merged. */
static void test_merge(void)
{
	char a[512], b[512];
	path_in(a, sizeof(a), "ma.pcap");
	path_in(b, sizeof(b), "mb.pcap");
	const uint64_t base = 1700000000000000ull;
	const uint64_t ta[] = {base + 0, base + 20, base + 40, base + 60};
	const uint64_t tb[] = {base + 10, base + 20, base + 30, base + 50, base + 70, base + 90};
	write_timed(a, ta, 4, 'a');
	write_timed(b, tb, 6, 'b');
	/* the merged order: (file, frame) */
	static const uint8_t want[][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {1, 2}, {0, 2},
					  {1, 3}, {0, 3}, {1, 4}, {1, 5}};
	char *paths[] = {a, b};
	for (int pass = 0; pass < 3; pass++) {
		struct reader_config cfg = {.paths = paths, .npaths = 2, .merge = 1};
		struct reader *r = NULL;
		char err[256];
		unsigned skip = 0, frames = 0, eof = 0, started = 0;
		if (pass == 1)
			cfg.ring_bytes = 1;
		if (pass == 2) { /* leaves out (0, 0) and (1, 0) */
			cfg.timed = 1;
			cfg.from_us = base + 11;
			cfg.to_us = UINT64_MAX;
			skip = 2;
		}
		CHECK(reader_open(&r, &cfg, err, sizeof(err)) == 0);
		if (!r)
			return;
		uint64_t last = 0;
		for (;;) {
			const struct reader_rec *rec = next_rec(r);
			if (!rec) {
				CHECK(!"a record came within 30 s");
				break;
			}
			if (rec->kind == RD_DONE) {
				CHECK_EQ(rec->file, 2);
				break;
			}
			if (rec->kind == RD_FILE) {
				CHECK(rec->file < 2 && !(started & 1u << rec->file));
				started |= 1u << rec->file;
			} else if (rec->kind == RD_EOF) {
				/* right after the file's last frame */
				CHECK(frames > 0 && want[skip + frames - 1][0] == rec->file);
				eof++;
			} else {
				CHECK_EQ(rec->kind, RD_FRAME);
				CHECK(skip + frames < sizeof(want) / sizeof(want[0]));
				CHECK(started & 1u << rec->file);
				if (skip + frames < sizeof(want) / sizeof(want[0])) {
					const uint8_t *w = want[skip + frames];
					CHECK(rec->file == w[0] && rec->data[0] == (w[0] ? 'b' : 'a') &&
					      rec->data[1] == w[1]);
					CHECK(rec->ts_us >= last);
					last = rec->ts_us;
				}
				frames++;
			}
			reader_release(r, rec);
		}
		CHECK_EQ(frames, 10 - skip);
		CHECK_EQ(eof, 2);
		CHECK_EQ(started, 3);
		reader_close(r);
	}
	unlink(a);
	unlink(b);

	/* 70 files of three frames each, given in reverse time order: more
	 * than READER_MERGE_MAX, but one at a time in time */
	enum { NF = 70 };
	char names[NF][512], *many[NF];
	for (unsigned f = 0; f < NF; f++) {
		char leaf[32];
		const uint64_t t[3] = {base + (NF - 1 - f) * 100, base + (NF - 1 - f) * 100 + 1,
				       base + (NF - 1 - f) * 100 + 2};
		snprintf(leaf, sizeof(leaf), "m%02u.pcap", f);
		path_in(names[f], sizeof(names[f]), leaf);
		write_timed(names[f], t, 3, (uint8_t)f);
		many[f] = names[f];
	}
	struct reader_config cfg = {.paths = many, .npaths = NF, .merge = 1};
	struct reader *r = NULL;
	char err[256];
	unsigned frames = 0, bad = 0;
	int open_now = 0, most = 0;
	uint64_t last = 0;
	CHECK(reader_open(&r, &cfg, err, sizeof(err)) == 0);
	for (const struct reader_rec *rec; r && (rec = next_rec(r)) && rec->kind != RD_DONE;
	     reader_release(r, rec)) {
		if (rec->kind == RD_FILE && ++open_now > most)
			most = open_now;
		if (rec->kind == RD_EOF)
			open_now--;
		if (rec->kind == RD_FRAME) {
			/* file NF-1 first, its three frames, then NF-2, ... */
			bad += rec->file != NF - 1 - frames / 3 || rec->ts_us < last;
			last = rec->ts_us;
			frames++;
		}
	}
	CHECK_EQ(frames, 3 * NF);
	CHECK_EQ(bad, 0);
	CHECK_EQ(most, 1);
	/* the position at the end: every file's bytes */
	uint64_t all = 0, sizes = 0, done = r ? reader_merge_progress(r, &all) : 0;
	for (unsigned f = 0; f < NF; f++) {
		struct stat st;
		if (stat(names[f], &st) == 0)
			sizes += (uint64_t)st.st_size;
	}
	CHECK(sizes > 0);
	CHECK_EQ(all, sizes);
	CHECK_EQ(done, sizes);
	reader_close(r);
	for (unsigned f = 0; f < NF; f++)
		unlink(names[f]);
}

/* --merge's position: the bytes of all the files together, as far as the
 * reader has read (a ring ahead of what is taken), and none when one of
 * them is a pipe, whose size is not known. */
static void test_merge_progress(void)
{
	char a[512], b[512];
	path_in(a, sizeof(a), "mp_a.pcap");
	path_in(b, sizeof(b), "mp_b.pcap");
	long size_a = write_pcap(a, DLT_EN10MB, 21, 900, SZ_WIDE);
	long size_b = write_pcap(b, DLT_EN10MB, 22, 900, SZ_WIDE);
	char *paths[] = {a, b};
	struct reader_config cfg = {.paths = paths, .npaths = 2, .merge = 1, .ring_bytes = 4096};
	struct reader *r = NULL;
	char err[256];
	uint64_t all = 1, done;

	CHECK(reader_open(&r, &cfg, err, sizeof(err)) == 0);
	if (!r)
		return;
	/* nothing taken: the reader stops a ring ahead (waited for until the
	 * position stays put for 300 ms, 20 s at most) */
	uint64_t was = UINT64_MAX;
	for (int w = 0; w < 66; w++) {
		done = reader_merge_progress(r, &all);
		if (done == was && done > 0)
			break;
		was = done;
		sleep_ms(300);
	}
	CHECK_EQ(all, (uint64_t)(size_a + size_b));
	CHECK(done > 1024 * 1024);
	/* the ring, and each open file's stdio buffer */
	CHECK(done <= (2u << 20) + 2 * (1u << 20) + (512u << 10));
	uint64_t last = done, back = 0;
	unsigned frames = 0;
	const struct reader_rec *rec;
	while ((rec = next_rec(r)) && rec->kind != RD_DONE) {
		frames += rec->kind == RD_FRAME;
		uint64_t now = reader_merge_progress(r, &all);
		back += now < last; /* it never goes back */
		last = now;
		reader_release(r, rec);
	}
	CHECK(rec != NULL);
	CHECK_EQ(frames, 1800);
	CHECK_EQ(back, 0);
	CHECK_EQ(reader_merge_progress(r, &all), (uint64_t)(size_a + size_b));
	reader_close(r);

	/* a pipe among the files: no position */
	char fifo[512];
	path_in(fifo, sizeof(fifo), "mp_fifo");
	CHECK(mkfifo(fifo, 0600) == 0);
	pid_t pid = fork();
	if (pid == 0) { /* the writer: file b into the FIFO */
		char buf[65536];
		FILE *in = fopen(b, "rb"), *out = fopen(fifo, "wb");
		size_t n;
		while (in && out && (n = fread(buf, 1, sizeof(buf), in)) > 0)
			if (fwrite(buf, 1, n, out) != n)
				break;
		if (out)
			fclose(out); /* _exit flushes nothing */
		_exit(0);
	}
	char *mixed[] = {a, fifo};
	struct reader_config pcfg = {.paths = mixed, .npaths = 2, .merge = 1};
	r = NULL;
	CHECK(reader_open(&r, &pcfg, err, sizeof(err)) == 0);
	if (!r && pid > 0) /* the writer waits for a reader of the FIFO: none comes */
		kill(pid, SIGKILL);
	frames = 0;
	uint64_t shown = 0;
	while (r && (rec = next_rec(r)) && rec->kind != RD_DONE) {
		frames += rec->kind == RD_FRAME;
		shown |= reader_merge_progress(r, &all) | all;
		reader_release(r, rec);
	}
	CHECK_EQ(frames, 1800);
	CHECK_EQ(shown, 0);
	reader_close(r);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	unlink(fifo);
	unlink(a);
	unlink(b);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	pattern_init();
	snprintf(dir, sizeof(dir), "%s/ew_reader_XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_files_in_order();
	test_truncated();
	test_open_error_and_bad_link();
	test_small_ring();
	test_stop();
	test_fifo();
	test_filter();
	test_merge();
	test_merge_progress();
	rmdir(dir);
	return check_done();
}
