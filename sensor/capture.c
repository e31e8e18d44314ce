/*
 * capture.c - packet sources for capture.h: libpcap, and pcapng.c for
 * pcapng files.
 *
 * A file's first four bytes choose its reader: pcapng's block type goes to
 * pcapng.c (each packet with its own interface's link type, which libpcap
 * 1.10 cannot give), anything else to libpcap. A stream that cannot seek
 * back over those bytes (stdin, a pipe) is handed to libpcap through a
 * stdio cookie that reads them first.
 * pcap files are read with pcap_next_ex, whose status codes tell a clean end
 * (PCAP_ERROR_BREAK) from a file damaged part-way (PCAP_ERROR): the caller
 * keeps everything decoded before the damage and reports where it stopped.
 * Live sources are set up with pcap_create/pcap_activate so buffer size and
 * immediate mode can be chosen before activation.
 */
#define _GNU_SOURCE /* fopencookie */
#include "capture.h"
#include "pcapng.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* stdio buffer for capture files: libpcap reads each record with two
 * freads, and the default 4 KiB buffer makes that a read(2) every few
 * packets. */
enum { FILE_IOBUF = 1 << 20 };

/* A stream whose first bytes were read already: they come first. */
struct peeked {
	FILE *f;
	uint8_t pre[4];
	size_t n, i;
};

struct capture {
	pcap_t *pcap;
	struct pcapng *ng;   /* a pcapng file: read by pcapng.c, not by pcap */
	FILE *ng_file;       /* its stream (ours to close) */
	char *name;
	FILE *file;          /* the stream under a file source (for progress) */
	int dlt;             /* the source's link type (pcapng: its first interface's) */
	char *iobuf;         /* its stdio buffer (FILE_IOBUF bytes), freed after pcap_close */
	uint64_t size;       /* file size, 0 when unknown */
	uint64_t count;
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

static ssize_t peek_read(void *cookie, char *buf, size_t n)
{
	struct peeked *pk = cookie;
	size_t got = 0;

	while (got < n && pk->i < pk->n)
		buf[got++] = (char)pk->pre[pk->i++];
	/* read(2), not fread: return what a pipe has now rather than wait
	 * for all n bytes (libpcap asks for one record at a time) */
	while (got == 0 && n > 0) {
		ssize_t r = read(fileno(pk->f), buf, n);
		if (r >= 0)
			return r;
		if (errno != EINTR)
			return -1;
	}
	return (ssize_t)got;
}

/* The first n bytes of a stream that may not seek back, read past stdio
 * (so its buffer stays empty for whoever reads on). */
static size_t read_head(FILE *f, uint8_t *dst, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fileno(f), dst + got, n - got);
		if (r > 0)
			got += (size_t)r;
		else if (r == 0 || errno != EINTR)
			break;
	}
	return got;
}

static int peek_close(void *cookie)
{
	struct peeked *pk = cookie;
	int r = pk->f == stdin ? 0 : fclose(pk->f);
	free(pk);
	return r;
}

struct capture *capture_open_file(const char *path, char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE + 256] = "";
	struct capture *c = capture_alloc(path);
	uint8_t magic[4];
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
			/* libpcap's own wording, which names the path too */
			snprintf(err, errlen, "%s: %s: %s", path, path, strerror(errno));
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
	nmagic = seekable ? fread(magic, 1, sizeof(magic), f) : read_head(f, magic, sizeof(magic));
	/* (the block type reads the same in either byte order) */
	if (nmagic == 4 && ((uint32_t)magic[0] << 24 | (uint32_t)magic[1] << 16 |
			    (uint32_t)magic[2] << 8 | magic[3]) == PCAPNG_MAGIC) {
		c->ng_file = f;
		c->ng = pcapng_open(f, magic, nmagic, perr, sizeof(perr));
		if (!c->ng)
			goto fail;
		c->dlt = pcapng_first_dlt(c->ng);
	} else if (seekable && fseek(f, 0, SEEK_SET) == 0) {
		/* pcap_close closes f */
		c->pcap = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_MICRO,
								  perr);
		if (!c->pcap) {
			fclose(f);
			goto fail;
		}
	} else {
		/* libpcap reads the bytes we looked at through the cookie */
		cookie_io_functions_t io = {.read = peek_read, .close = peek_close};
		struct peeked *pk = calloc(1, sizeof(*pk));
		FILE *cf = pk ? fopencookie(pk, "rb", io) : NULL;
		if (!cf) {
			snprintf(perr, sizeof(perr), "out of memory");
			free(pk);
			if (f != stdin)
				fclose(f);
			goto fail;
		}
		pk->f = f;
		pk->n = nmagic;
		memcpy(pk->pre, magic, nmagic);
		c->pcap = pcap_fopen_offline_with_tstamp_precision(cf, PCAP_TSTAMP_PRECISION_MICRO,
								  perr);
		if (!c->pcap) {
			fclose(cf);
			goto fail;
		}
	}
	if (c->pcap)
		c->dlt = pcap_datalink(c->pcap);
	c->file = c->pcap ? pcap_file(c->pcap) : f;
	if (seekable)
		c->size = (uint64_t)st.st_size;
	return c;
fail:
	snprintf(err, errlen, "%s: %s", path, perr);
	capture_close(c);
	return NULL;
}

struct capture *capture_open_live(const char *iface, const struct capture_live_opts *o,
				  char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	struct capture *c = capture_alloc(iface);
	struct bpf_program prog;
	int r;

	if (!c) {
		snprintf(err, errlen, "%s: out of memory", iface);
		return NULL;
	}
	c->pcap = pcap_create(iface, perr);
	if (!c->pcap) {
		snprintf(err, errlen, "%s: %s", iface, perr);
		goto fail;
	}
	pcap_set_snaplen(c->pcap, o->snaplen > 0 ? o->snaplen : 65535);
	pcap_set_promisc(c->pcap, 1);
	pcap_set_buffer_size(c->pcap, o->buffer_bytes > 0 ? o->buffer_bytes : 64 << 20);
	pcap_set_immediate_mode(c->pcap, o->immediate);
	pcap_set_timeout(c->pcap, o->timeout_ms > 0 ? o->timeout_ms : 100);
	pcap_set_tstamp_precision(c->pcap, PCAP_TSTAMP_PRECISION_MICRO);
	r = pcap_activate(c->pcap);
	if (r < 0) {
		snprintf(err, errlen, "%s: %s (%s)", iface, pcap_statustostr(r),
			 pcap_geterr(c->pcap));
		goto fail;
	}
	if (o->bpf && *o->bpf) {
		if (pcap_compile(c->pcap, &prog, o->bpf, 1, PCAP_NETMASK_UNKNOWN) < 0) {
			snprintf(err, errlen, "%s: bad filter \"%s\": %s", iface, o->bpf,
				 pcap_geterr(c->pcap));
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

static enum capture_rc ng_next(struct capture *c, struct capture_pkt *out)
{
	char why[256];
	struct pcapng_pkt p;
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
	if (r == 0)
		return CAP_EOF;
	snprintf(c->err, sizeof(c->err), "%s: %s after packet %llu", c->name, why,
		 (unsigned long long)c->count);
	return CAP_ERROR;
}

enum capture_rc capture_next(struct capture *c, struct capture_pkt *out)
{
	struct pcap_pkthdr *h;
	const u_char *data;

	if (c->ng)
		return ng_next(c, out);
	int r = pcap_next_ex(c->pcap, &h, &data);

	switch (r) {
	case 1:
		c->count++;
		out->ts_us = (uint64_t)h->ts.tv_sec * 1000000u + (uint64_t)h->ts.tv_usec;
		out->caplen = h->caplen;
		out->wirelen = h->len;
		out->dlt = c->dlt;
		out->data = data;
		return CAP_PACKET;
	case 0:
		return CAP_TIMEOUT;
	case PCAP_ERROR_BREAK:
		return CAP_EOF;
	default:
		snprintf(c->err, sizeof(c->err), "%s: %s after packet %llu", c->name,
			 pcap_geterr(c->pcap), (unsigned long long)c->count);
		return CAP_ERROR;
	}
}

int capture_datalink(const struct capture *c)
{
	return c->dlt;
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
	long pos = c->file ? ftell(c->file) : -1;
	*done = pos > 0 ? (uint64_t)pos : 0;
	*total = c->size;
}

int capture_stats(struct capture *c, uint64_t *received, uint64_t *dropped,
		  uint64_t *if_dropped)
{
	struct pcap_stat ps;
	if (!c->pcap || pcap_stats(c->pcap, &ps) < 0)
		return -1;
	*received = ps.ps_recv;
	*dropped = ps.ps_drop;
	*if_dropped = ps.ps_ifdrop;
	return 0;
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
