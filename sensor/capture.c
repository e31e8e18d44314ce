/*
 * capture.c - packet sources for capture.h: libpcap, and pcapng.c for
 * pcapng files.
 *
 * A file's first four bytes, read with read(2), choose its reader: gzip's
 * or zstd's magic puts instream.c under it (and the first four inflated
 * bytes choose again); pcapng's block type goes to pcapng.c (each packet
 * with its own interface's link type, which libpcap 1.10 cannot give),
 * anything else to libpcap. A plain regular file is read through its own
 * stdio stream (seeked back for libpcap); a stream that cannot seek back
 * (stdin, a pipe) goes through instream.c too, which gives those bytes
 * back first.
 * pcap files are read with pcap_next_ex, whose status codes tell a clean end
 * (PCAP_ERROR_BREAK) from a file damaged part-way (PCAP_ERROR): the caller
 * keeps everything decoded before the damage and reports where it stopped.
 * A plain regular file is then searched for the next place two whole
 * records start, and read on from there (pcap_resync: only the damage is
 * lost; a stream that cannot be searched reads past whole records of zero
 * bytes alone, zero_run), and a second file header met as a record (files
 * joined with cat) is read past when it is of the same kind
 * (joined_header); a pcapng section header there hands the rest of the
 * file to pcapng.c (damaged).
 * Live sources are set up with pcap_create/pcap_activate so buffer size,
 * immediate mode (off by default: a TPACKET_V3 ring) and the block timeout
 * can be chosen before activation; their pcap_stats counters are summed
 * into 64 bits (capture_stats).
 */
#include "capture.h"
#include "instream.h"
#include "pcapng.h"

#include <errno.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* stdio buffer for capture files: libpcap reads each record with two
 * freads, and the default 4 KiB buffer makes that a read(2) every few
 * packets. */
enum { FILE_IOBUF = 1 << 20 };

struct capture {
	pcap_t *pcap;
	struct pcapng *ng;   /* a pcapng file: read by pcapng.c, not by pcap */
	FILE *ng_file;       /* its stream (ours to close) */
	struct instream *in; /* a pipe or a compressed file: the stream under the reader */
	char *name;
	FILE *file;          /* the stream under a file source (for progress) */
	int dlt;             /* the source's link type (pcapng: its first interface's) */
	char *iobuf;         /* its stdio buffer (FILE_IOBUF bytes), freed after pcap_close */
	uint64_t size;       /* file size, 0 when unknown */
	uint64_t count;
	/* classic pcap: the file's header as it was, and what is needed to
	 * read past damage (pcap_resync) */
	uint8_t fhdr[24];
	int have_fhdr;       /* fhdr holds the 24 bytes */
	int seekable;        /* a plain regular file: damage can be searched past */
	int live;            /* an interface, not a file */
	/* live: pcap_stats's 32-bit counters as last read, and their 64-bit
	 * sums since the open (capture_stats) */
	int have_stats;
	unsigned last_recv, last_drop, last_ifdrop;
	uint64_t sum_recv, sum_drop, sum_ifdrop;
	int64_t last_sec;    /* the last record's time (seconds), for plausibility */
	unsigned skips;      /* damaged places skipped, and their bytes */
	uint64_t skipped;
	/* a stream: what pcap_next_ex gave after a run of zero records, for
	 * the next capture_next (h and data are libpcap's until its next call) */
	int pend;
	int pend_r;
	struct pcap_pkthdr *pend_h;
	const u_char *pend_data;
	char err[PCAP_ERRBUF_SIZE + 256];
};

static struct capture *capture_alloc(const char *name)
{
	struct capture *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->name = strdup(name);
	if (!c->name) {
		free(c);
		return NULL;
	}
	return c;
}

/* The first n bytes of a file, read past stdio (so its buffer stays empty
 * for whoever reads on, and a pipe gives what it has). */
static size_t read_head(FILE *f, uint8_t *dst, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fileno(f), dst + got, n - got);
		if (r > 0)
			got += (size_t)r;
		else if (r == 0 || errno != EINTR || instream_woken())
			break;
	}
	return got;
}

static int is_pcapng(const uint8_t *m, size_t n)
{
	/* (the block type reads the same in either byte order) */
	return n == 4 && ((uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 | m[3]) ==
				 PCAPNG_MAGIC;
}

/* Open the reader for stream f, whose first bytes are magic (npre of them
 * already read from f, 0 when f gives them again). f is the reader's on
 * success; on failure, still the caller's (or, for pcapng, c->ng_file). */
static int open_reader(struct capture *c, FILE *f, const uint8_t *magic, size_t nmagic,
		       size_t npre, char *perr, size_t perrlen)
{
	if (is_pcapng(magic, nmagic)) {
		c->ng_file = f;
		c->ng = pcapng_open(f, magic, npre, perr, perrlen);
		if (!c->ng)
			return -1;
		c->dlt = pcapng_first_dlt(c->ng);
		return 0;
	}
	char pe[PCAP_ERRBUF_SIZE] = "";
	c->pcap = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_MICRO, pe);
	if (!c->pcap) {
		snprintf(perr, perrlen, "%s", pe);
		return -1;
	}
	c->dlt = pcap_datalink(c->pcap);
	return 0;
}

struct capture *capture_open_file(const char *path, char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE + 256] = "";
	struct capture *c = capture_alloc(path);
	uint8_t magic[4], inner[24];
	size_t nmagic;
	struct stat st;
	FILE *f;

	if (!c) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	if (strcmp(path, "-") != 0) {
		/* Our own FILE, so its buffer is set before any read */
		f = fopen(path, "rb");
		if (!f) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			capture_close(c);
			return NULL;
		}
		c->iobuf = malloc(FILE_IOBUF);
		if (c->iobuf && setvbuf(f, c->iobuf, _IOFBF, FILE_IOBUF) != 0) {
			free(c->iobuf);
			c->iobuf = NULL;
		}
	} else {
		f = stdin;
	}
	/* Only one thread reads it (replay's reader thread): no stdio lock
	 * around each read. */
	__fsetlocking(f, FSETLOCKING_BYCALLER);
	int seekable = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
	if (seekable)
		c->size = (uint64_t)st.st_size;
	nmagic = read_head(f, magic, sizeof(magic));
	enum instream_kind kind = instream_kind_of(magic, nmagic);
	if (kind == IN_PLAIN && seekable) {
		/* the fast path: stdio's buffer straight under the reader */
		if (!is_pcapng(magic, nmagic) && fseek(f, 0, SEEK_SET) != 0) {
			snprintf(perr, sizeof(perr), "%s", strerror(errno));
			fclose(f);
			goto fail;
		}
		if (open_reader(c, f, magic, nmagic, nmagic, perr, sizeof(perr)) < 0) {
			if (!c->ng_file && f != stdin)
				fclose(f);
			goto fail;
		}
		c->file = c->pcap ? pcap_file(c->pcap) : f;
		/* a plain file: damage is searched past; a classic pcap's
		 * header is kept (joined_header) */
		c->seekable = 1;
		c->have_fhdr = c->pcap && pread(fileno(f), c->fhdr, sizeof(c->fhdr), 0) ==
						  (ssize_t)sizeof(c->fhdr);
		return c;
	}
	/* A pipe, or a compressed file: through instream.c, which gives the
	 * bytes read so far back, and inflates. */
	FILE *in = instream_open(f, kind, magic, nmagic, &c->in, perr, sizeof(perr));
	if (!in) {
		if (f != stdin)
			fclose(f);
		goto fail;
	}
	/* the file's header (its first 24 bytes, under any compression): the
	 * first four choose the reader, all 24 are kept for a classic pcap */
	size_t ninner = instream_peek(c->in, inner, sizeof(inner));
	if (instream_error(c->in)[0]) {
		snprintf(perr, sizeof(perr), "%s", instream_error(c->in));
		fclose(in);
		c->in = NULL;
		goto fail;
	}
	if (open_reader(c, in, inner, ninner < 4 ? ninner : 4, 0, perr, sizeof(perr)) < 0) {
		if (instream_error(c->in)[0]) /* what the decompressor met */
			snprintf(perr, sizeof(perr), "%s", instream_error(c->in));
		if (!c->ng_file)
			fclose(in); /* (c->in with it) */
		c->in = NULL;
		goto fail;
	}
	if (c->pcap && ninner == sizeof(c->fhdr)) {
		memcpy(c->fhdr, inner, sizeof(c->fhdr));
		c->have_fhdr = 1;
	}
	return c;
fail:
	snprintf(err, errlen, "%s: %s", path, perr);
	capture_close(c);
	return NULL;
}

struct capture *capture_open_live(const char *iface, const struct capture_live_opts *o,
				  int *bad_filter, char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	struct capture *c = capture_alloc(iface);
	struct bpf_program prog;
	int r;

	if (bad_filter)
		*bad_filter = 0;
	if (!c) {
		snprintf(err, errlen, "%s: out of memory", iface);
		return NULL;
	}
	c->live = 1;
	c->pcap = pcap_create(iface, perr);
	if (!c->pcap) {
		snprintf(err, errlen, "%s: %s", iface, perr);
		goto fail;
	}
	pcap_set_snaplen(c->pcap, o->snaplen > 0 ? o->snaplen : 65535);
	pcap_set_promisc(c->pcap, 1);
	pcap_set_buffer_size(c->pcap, o->buffer_bytes > 0 ? o->buffer_bytes : 64 << 20);
	/* Not immediate: libpcap 1.10 on Linux takes a TPACKET_V3 ring, whose
	 * 256 KiB blocks hold packets end to end (a 64 MiB ring holds some
	 * 300,000 small packets, whatever the snap length), and the kernel
	 * hands a block over when it is full or timeout_ms after its first
	 * packet (tp_retire_blk_tov), waking poll(2). Immediate mode gives
	 * each packet at once but a TPACKET_V2 ring of fixed frames the size
	 * of the snap length, each in a block of its own (-B 64 at -s 65535:
	 * about 1,000 packets, in 128 MiB of mapped blocks). */
	pcap_set_immediate_mode(c->pcap, o->immediate);
	pcap_set_timeout(c->pcap, o->timeout_ms > 0 ? o->timeout_ms : CAPTURE_TIMEOUT_MS);
	pcap_set_tstamp_precision(c->pcap, PCAP_TSTAMP_PRECISION_MICRO);
	r = pcap_activate(c->pcap);
	if (r < 0) {
		/* the status, and libpcap's detail where it says more */
		const char *what = pcap_statustostr(r), *detail = pcap_geterr(c->pcap);
		if (!*detail || !strcmp(detail, what))
			snprintf(err, errlen, "%s: %s", iface, what);
		else
			snprintf(err, errlen, "%s: %s (%s)", iface, what, detail);
		goto fail;
	}
	if (o->bpf && *o->bpf) {
		if (pcap_compile(c->pcap, &prog, o->bpf, 1, PCAP_NETMASK_UNKNOWN) < 0) {
			snprintf(err, errlen, "%s: bad filter \"%s\": %s", iface, o->bpf,
				 pcap_geterr(c->pcap));
			if (bad_filter)
				*bad_filter = 1;
			goto fail;
		}
		r = pcap_setfilter(c->pcap, &prog);
		pcap_freecode(&prog);
		if (r < 0) {
			snprintf(err, errlen, "%s: cannot set filter: %s", iface,
				 pcap_geterr(c->pcap));
			goto fail;
		}
	}
	if (pcap_setnonblock(c->pcap, 1, perr) < 0) {
		snprintf(err, errlen, "%s: %s", iface, perr);
		goto fail;
	}
	c->dlt = pcap_datalink(c->pcap);
	return c;
fail:
	capture_close(c);
	return NULL;
}

/* Damage (why) read past: bytes [from, to) skipped to the next whole
 * `unit` (record, block), counted and said in c->err. */
static enum capture_rc skipped(struct capture *c, const char *why, uint64_t from, uint64_t to,
			       const char *unit)
{
	c->skips++;
	c->skipped += to - from;
	snprintf(c->err, sizeof(c->err),
		 "%s: %s after packet %llu; skipped %llu bytes (%llu to %llu) to the next whole %s",
		 c->name, why, (unsigned long long)c->count, (unsigned long long)(to - from),
		 (unsigned long long)from, (unsigned long long)to, unit);
	return CAP_SKIPPED;
}

static enum capture_rc ng_next(struct capture *c, struct capture_pkt *out)
{
	char why[256];
	struct pcapng_pkt p;
	uint64_t from, to;
again:;
	int r = pcapng_next(c->ng, &p, why, sizeof(why));

	if (r > 0) {
		c->count++;
		out->ts_us = p.ts_us;
		out->caplen = p.caplen;
		out->wirelen = p.wirelen;
		out->dlt = p.dlt;
		out->data = p.data;
		return CAP_PACKET;
	}
	/* a clean end; but not where the decompressor (or the pipe's read)
	 * failed, though the failure came at a block boundary */
	if (r == 0 && !(c->in && instream_error(c->in)[0]))
		return CAP_EOF;
	if (c->in && instream_error(c->in)[0]) /* what the decompressor met */
		snprintf(why, sizeof(why), "%s", instream_error(c->in));
	else if (c->seekable && pcapng_resync(c->ng, c->size, &from, &to) == 0) {
		enum capture_rc rc = skipped(c, why, from, to, "block");
		if (c->skips > CAPTURE_SKIPS_TOLD)
			goto again; /* counted, told at the end */
		return rc;
	}
	snprintf(c->err, sizeof(c->err), "%s: %s after packet %llu", c->name, why,
		 (unsigned long long)c->count);
	return CAP_ERROR;
}

/* ---- classic pcap: reading past damage ------------------------------------ */

enum {
	REC_MAX_CAPLEN = 262144,     /* libpcap's largest snapshot for any link type */
	REC_MAX_WIRELEN = 1u << 24,  /* no link carries more in one frame */
	REC_NEAR_S = 7 * 86400,      /* a record found after damage is this near the last */
};

static uint32_t rd32(const uint8_t *b, int swapped)
{
	uint32_t v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
		     (uint32_t)b[3] << 24;
	return swapped ? __builtin_bswap32(v) : v;
}

/* The host-order magic of the file's header, from its first four bytes. */
static uint32_t file_magic(const struct capture *c)
{
	return rd32(c->fhdr, 0);
}

/* Does the 16-byte record header b look like one of this file's? */
static int rec_plausible(const struct capture *c, const uint8_t *b, int swapped, int nsec)
{
	uint32_t sec = rd32(b, swapped), frac = rd32(b + 4, swapped);
	uint32_t caplen = rd32(b + 8, swapped), len = rd32(b + 12, swapped);

	if (frac >= (nsec ? 1000000000u : 1000000u) || caplen == 0 || caplen > REC_MAX_CAPLEN ||
	    caplen > len || len > REC_MAX_WIRELEN)
		return 0;
	if (c->count && ((int64_t)sec > c->last_sec + REC_NEAR_S ||
			 (int64_t)sec < c->last_sec - REC_NEAR_S))
		return 0;
	return 1;
}

/* Are there two plausible records one after another from off (or one that
 * ends exactly at the end of the file)? A record header of random bytes
 * passes rec_plausible about once in 10^15; two in a row, never. */
static int rec_chain(const struct capture *c, int fd, uint64_t off, int swapped, int nsec)
{
	for (int k = 0; k < 2; k++) {
		uint8_t b[16];
		if (off == c->size)
			return k > 0;
		if (off + 16 > c->size || pread(fd, b, 16, (off_t)off) != 16 ||
		    !rec_plausible(c, b, swapped, nsec))
			return 0;
		off += 16 + (uint64_t)rd32(b + 8, swapped);
		if (off > c->size)
			return 0;
	}
	return 1;
}

/*
 * The record whose header ends where the file's stream now stands is
 * damaged: libpcap refused it (a length past any snapshot: the record was
 * damaged, or the one before it had a wrong length), or it is all zero (a
 * zeroed stretch of the file). Search the bytes after that
 * header's first for the next place two whole records start one after
 * another, and read on from there. 0 with the stream moved and the bytes
 * skipped in [*from, *to); -1 when there is no such place (then the file
 * stops here, as before).
 */
static int pcap_resync(struct capture *c, uint64_t *from, uint64_t *to)
{
	enum { WIN = 1 << 16 };
	FILE *f = pcap_file(c->pcap);
	long pos = f ? ftell(f) : -1;
	int fd = f ? fileno(f) : -1;
	int swapped = pcap_is_swapped(c->pcap);
	uint32_t m = file_magic(c);
	int nsec = m == 0xa1b23c4du || m == 0x4d3cb2a1u;
	uint8_t *win;

	if (!c->seekable || !c->have_fhdr || pos < 24 + 16 || fd < 0)
		return -1;
	if (!(win = malloc(WIN + 16)))
		return -1;
	*from = (uint64_t)pos - 16;
	for (uint64_t base = *from + 1; base + 16 <= c->size; base += WIN) {
		size_t want = WIN + 15, n = 0;
		if (base + want > c->size)
			want = (size_t)(c->size - base);
		ssize_t got = pread(fd, win, want, (off_t)base);
		if (got < 16)
			break;
		n = (size_t)got;
		for (size_t i = 0; i + 16 <= n && i < WIN; i++) {
			if (!rec_plausible(c, win + i, swapped, nsec) ||
			    !rec_chain(c, fd, base + i, swapped, nsec))
				continue;
			free(win);
			*to = base + i;
			return fseek(f, (long)*to, SEEK_SET) == 0 ? 0 : -1;
		}
	}
	free(win);
	return -1;
}

/*
 * A record of zero bytes whose time is a pcap magic is the header of a file
 * joined on after this one (cat a.pcap b.pcap): its first 16 bytes read as
 * a record. The same kind of file (magic, link type) reads on after the
 * header's last 8 bytes: 1. Another kind cannot be read by this reader:
 * -1, c->err says why. 0: not a header.
 */
/* Read the file on from byte off, where a classic pcap header of another
 * kind starts, with a pcap reader of its own (the one before goes). 0, or
 * -1 with the one before left as it was. */
static int reopen_at(struct capture *c, uint64_t off)
{
	char pe[PCAP_ERRBUF_SIZE];
	uint8_t was[sizeof(c->fhdr)];
	FILE *f = NULL;
	char *buf = malloc(FILE_IOBUF);
	pcap_t *p = NULL;

	memcpy(was, c->fhdr, sizeof(was));
	if (strcmp(c->name, "-") != 0) {
		f = fopen(c->name, "rb");
	} else {
		/* stdin redirected from a file: there is no name to open, but
		 * its descriptor (the same offset as stdin's, which is read no
		 * more; libpcap leaves stdin open when it closes) */
		int fd = dup(fileno(stdin));
		if (fd >= 0 && !(f = fdopen(fd, "rb")))
			close(fd);
	}

	if (!f || !buf || setvbuf(f, buf, _IOFBF, FILE_IOBUF) != 0 ||
	    fseek(f, (long)off, SEEK_SET) != 0 ||
	    pread(fileno(f), c->fhdr, sizeof(c->fhdr), (off_t)off) != (ssize_t)sizeof(c->fhdr) ||
	    !(p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_MICRO, pe))) {
		if (f)
			fclose(f);
		free(buf);
		memcpy(c->fhdr, was, sizeof(was)); /* the header still in force */
		return -1;
	}
	__fsetlocking(f, FSETLOCKING_BYCALLER);
	pcap_close(c->pcap); /* its FILE with it, then its buffer */
	free(c->iobuf);
	c->pcap = p;
	c->iobuf = buf;
	c->file = f;
	c->dlt = pcap_datalink(p);
	return 0;
}

static int joined_header(struct capture *c, const struct pcap_pkthdr *h)
{
	static const uint32_t magics[] = {0xa1b2c3d4u, 0xd4c3b2a1u, 0xa1b23c4du, 0x4d3cb2a1u};
	uint32_t sec = (uint32_t)h->ts.tv_sec, m = file_magic(c);
	uint8_t rest[8];
	int magic = 0;

	if (h->caplen != 0 || h->len != 0 || !c->have_fhdr)
		return 0;
	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
		magic |= sec == magics[i] || __builtin_bswap32(sec) == magics[i];
	if (!magic)
		return 0;
	FILE *f = pcap_file(c->pcap);
	if (!f || fread(rest, 1, sizeof(rest), f) != sizeof(rest))
		return 0; /* the file ends: an empty record, as libpcap read it */
	/* the same kind: the same magic bytes (byte order, time unit) and link
	 * type as this file's own header (libpcap read the magic as a time, in
	 * this file's byte order) */
	if (sec != (pcap_is_swapped(c->pcap) ? __builtin_bswap32(m) : m) ||
	    memcmp(rest + 4, c->fhdr + 20, 4) != 0) {
		/* another kind: a file that can be searched is opened again at
		 * that header, for libpcap to read on with its own */
		long pos = c->seekable ? ftell(f) : -1;
		if (pos >= 24 && reopen_at(c, (uint64_t)pos - 24) == 0)
			return 2;
		snprintf(c->err, sizeof(c->err),
			 "%s: a second pcap file header after packet %llu, of another byte "
			 "order, time unit or link type (files joined with cat?): replay the "
			 "pieces as files of their own",
			 c->name, (unsigned long long)c->count);
		return -1;
	}
	return 1;
}

/* The record just read (its header ends where the stream stands) is
 * damaged, for reason why: read on past it (CAP_SKIPPED, c->err says where)
 * or stop (CAP_ERROR). */
static enum capture_rc damaged(struct capture *c, const char *why)
{
	uint64_t from, to;
	FILE *f = pcap_file(c->pcap);
	long pos = f && c->seekable ? ftell(f) : -1;
	uint8_t h[16];

	/* A pcapng section header (pcapng joined on with cat): from here on,
	 * the pcapng reader reads the file, every interface with its link type */
	if (pos >= 16 && pread(fileno(f), h, 16, pos - 16) == 16 &&
	    !memcmp(h, "\x0a\x0d\x0d\x0a", 4) &&
	    (!memcmp(h + 8, "\x4d\x3c\x2b\x1a", 4) || !memcmp(h + 8, "\x1a\x2b\x3c\x4d", 4))) {
		char perr[256];
		if (fseek(f, pos - 16, SEEK_SET) == 0 &&
		    (c->ng = pcapng_open(f, NULL, 0, perr, sizeof(perr))) != NULL) {
			pcapng_rebase(c->ng, (uint64_t)pos - 16);
			snprintf(c->err, sizeof(c->err),
				 "%s: a pcapng section after packet %llu (files joined with cat?): "
				 "read on as one capture",
				 c->name, (unsigned long long)c->count);
			return CAP_JOINED;
		}
		snprintf(c->err, sizeof(c->err), "%s: a pcapng section after packet %llu that "
			 "cannot be read (%s)", c->name, (unsigned long long)c->count, perr);
		return CAP_ERROR;
	}
	if (pcap_resync(c, &from, &to) < 0) {
		snprintf(c->err, sizeof(c->err), "%s: %s after packet %llu", c->name, why,
			 (unsigned long long)c->count);
		return CAP_ERROR;
	}
	return skipped(c, why, from, to, "record");
}

/* A record's seconds. A file's are 32 bits unsigned (to 2106), which
 * libpcap reads as signed: a time after 2038-01-19 comes back negative, and
 * is its uint32. A live capture's time_t is as the kernel gave it. */
static int64_t rec_sec(const struct capture *c, const struct pcap_pkthdr *h)
{
	return c->live ? (int64_t)h->ts.tv_sec : (int64_t)(uint32_t)h->ts.tv_sec;
}

/* A record of nothing at the time 0: all 16 bytes zero, a zeroed stretch. */
static int zero_rec(const struct pcap_pkthdr *h)
{
	return h->caplen == 0 && h->len == 0 && h->ts.tv_sec == 0 && h->ts.tv_usec == 0;
}

/*
 * A zero record in a stream that cannot be searched (a pipe, a
 * decompressor): it is exactly 16 bytes, so the reader is still in step
 * after it. Read past the run of them (up to ZERO_RUN_MAX bytes a place, so
 * an endless one still returns) and keep what ends it for the next call;
 * the run is damage skipped (CAP_SKIPPED), or, at the stream's end, where
 * the file stops (CAP_ERROR), as for a file.
 */
enum { ZERO_RUN_MAX = 1 << 20 };

static enum capture_rc zero_run(struct capture *c)
{
	const char *why = "a record of zero bytes at the time 0";
	uint64_t n = 16;

	for (;;) {
		c->pend_r = pcap_next_ex(c->pcap, &c->pend_h, &c->pend_data);
		c->pend = !(c->pend_r == 1 && zero_rec(c->pend_h));
		if (c->pend || (n += 16) >= ZERO_RUN_MAX)
			break;
	}
	if (c->pend && c->pend_r == PCAP_ERROR_BREAK) {
		c->pend = 0;
		snprintf(c->err, sizeof(c->err), "%s: %s after packet %llu", c->name, why,
			 (unsigned long long)c->count);
		return CAP_ERROR;
	}
	c->skips++;
	c->skipped += n;
	snprintf(c->err, sizeof(c->err),
		 "%s: %s after packet %llu; skipped %llu bytes to the next whole record", c->name,
		 why, (unsigned long long)c->count, (unsigned long long)n);
	return CAP_SKIPPED;
}

enum capture_rc capture_next(struct capture *c, struct capture_pkt *out)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int r;

	if (c->ng)
		return ng_next(c, out);
again:
	if (c->pend) { /* what ended a run of zero records */
		c->pend = 0;
		r = c->pend_r;
		h = c->pend_h;
		data = c->pend_data;
	} else {
		r = pcap_next_ex(c->pcap, &h, &data);
	}

	switch (r) {
	case 1:
		if (h->caplen == 0) {
			int j = joined_header(c, h);
			if (j < 0)
				return CAP_ERROR;
			if (j > 0) {
				snprintf(c->err, sizeof(c->err),
					 "%s: a second pcap file header after packet %llu (files "
					 "joined with cat?)%s: read on as one capture",
					 c->name, (unsigned long long)c->count,
					 j == 2 ? ", of another kind" : "");
				return CAP_JOINED;
			}
			/* a record of nothing at the time 0: a zeroed stretch,
			 * searched past in a file, read past in a stream */
			if (zero_rec(h) && !c->live) {
				enum capture_rc rc = c->seekable ?
					damaged(c, "a record of zero bytes at the time 0") :
					zero_run(c);
				if (rc == CAP_SKIPPED && c->skips > CAPTURE_SKIPS_TOLD)
					goto again; /* counted, told at the end */
				return rc;
			}
		}
		c->last_sec = rec_sec(c, h);
		c->count++;
		out->ts_us = (uint64_t)c->last_sec * 1000000u + (uint64_t)h->ts.tv_usec;
		out->caplen = h->caplen;
		out->wirelen = h->len;
		out->dlt = c->dlt;
		out->data = data;
		return CAP_PACKET;
	case 0:
		return CAP_TIMEOUT;
	case PCAP_ERROR_BREAK:
		return CAP_EOF;
	default: {
		if (c->in && instream_error(c->in)[0]) {
			snprintf(c->err, sizeof(c->err), "%s: %s after packet %llu", c->name,
				 instream_error(c->in), (unsigned long long)c->count);
			return CAP_ERROR;
		}
		char why[PCAP_ERRBUF_SIZE];
		snprintf(why, sizeof(why), "%s", pcap_geterr(c->pcap));
		enum capture_rc rc = damaged(c, why);
		if (rc == CAP_SKIPPED && c->skips > CAPTURE_SKIPS_TOLD)
			goto again; /* counted, told at the end */
		return rc;
	}
	}
}

void capture_skips(const struct capture *c, unsigned *places, uint64_t *bytes)
{
	*places = c->skips;
	*bytes = c->skipped;
}

int capture_datalink(const struct capture *c)
{
	return c->dlt;
}

size_t capture_datalinks(const struct capture *c, int *dlts, size_t max)
{
	if (!max)
		return 0;
	if (c->ng)
		return pcapng_dlts(c->ng, dlts, max);
	dlts[0] = c->dlt;
	return 1;
}

const char *capture_datalink_name(const struct capture *c)
{
	const char *n = pcap_datalink_val_to_name(c->dlt);
	return n ? n : "unknown";
}

const char *capture_error(const struct capture *c)
{
	return c->err;
}

void capture_progress(const struct capture *c, uint64_t *done, uint64_t *total)
{
	long pos = c->in ? (long)instream_consumed(c->in) : c->file ? ftell(c->file) : -1;
	*done = pos > 0 ? (uint64_t)pos : 0;
	*total = c->size;
}

int capture_stats(struct capture *c, uint64_t *received, uint64_t *dropped,
		  uint64_t *if_dropped)
{
	struct pcap_stat ps;
	if (c->live && c->pcap && pcap_stats(c->pcap, &ps) == 0) {
		/* unsigned differences: right across a wrap of libpcap's 32 bits */
		c->sum_recv += (unsigned)(ps.ps_recv - c->last_recv);
		c->sum_drop += (unsigned)(ps.ps_drop - c->last_drop);
		c->sum_ifdrop += (unsigned)(ps.ps_ifdrop - c->last_ifdrop);
		c->last_recv = ps.ps_recv;
		c->last_drop = ps.ps_drop;
		c->last_ifdrop = ps.ps_ifdrop;
		c->have_stats = 1;
	}
	if (!c->have_stats)
		return -1;
	*received = c->sum_recv;
	*dropped = c->sum_drop;
	*if_dropped = c->sum_ifdrop;
	return 0;
}

int capture_link_up(const char *iface)
{
	struct ifreq ifr;
	int fd, r;

	if (strlen(iface) >= sizeof(ifr.ifr_name) || !strcmp(iface, "any"))
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, iface, strlen(iface));
	r = ioctl(fd, SIOCGIFFLAGS, &ifr);
	close(fd);
	if (r < 0)
		return -1;
	return (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING) ? 1 : 0;
}

int capture_fd(const struct capture *c)
{
	return c->pcap ? pcap_get_selectable_fd(c->pcap) : -1;
}

void capture_break(struct capture *c)
{
	if (c->pcap)
		pcap_breakloop(c->pcap);
}

uint64_t capture_count(const struct capture *c)
{
	return c->count;
}

const char *capture_name(const struct capture *c)
{
	return c->name;
}

void capture_close(struct capture *c)
{
	if (!c)
		return;
	if (c->pcap)
		pcap_close(c->pcap);
	pcapng_close(c->ng);
	if (c->ng_file && c->ng_file != stdin)
		fclose(c->ng_file);
	free(c->iobuf); /* after the FILE's close: it used the buffer until then */
	free(c->name);
	free(c);
}
