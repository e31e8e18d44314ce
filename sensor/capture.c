/*
 * capture.c - libpcap sources for capture.h.
 *
 * Files are read with pcap_next_ex, whose status codes tell a clean end
 * (PCAP_ERROR_BREAK) from a file damaged part-way (PCAP_ERROR): the caller
 * keeps everything decoded before the damage and reports where it stopped.
 * Live sources are set up with pcap_create/pcap_activate so buffer size and
 * immediate mode can be chosen before activation.
 */
#include "capture.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* stdio buffer for capture files: libpcap reads each record with two
 * freads, and the default 4 KiB buffer makes that a read(2) every few
 * packets. */
enum { FILE_IOBUF = 1 << 20 };

struct capture {
	pcap_t *pcap;
	char *name;
	FILE *file;          /* the stream under a file source (for progress) */
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

struct capture *capture_open_file(const char *path, char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	struct capture *c = capture_alloc(path);
	struct stat st;

	if (!c) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	if (strcmp(path, "-") != 0) {
		/* Our own FILE, so its buffer is set before any read; pcap_close
		 * closes it. */
		FILE *f = fopen(path, "rb");
		if (!f) {
			/* libpcap's own wording, which names the path too */
			snprintf(err, errlen, "%s: %s: %s", path, path, strerror(errno));
			capture_close(c);
			return NULL;
		}
		/* Only one thread reads it (replay's reader thread): no stdio
		 * lock around libpcap's two freads per packet. */
		__fsetlocking(f, FSETLOCKING_BYCALLER);
		c->iobuf = malloc(FILE_IOBUF);
		if (c->iobuf && setvbuf(f, c->iobuf, _IOFBF, FILE_IOBUF) != 0) {
			free(c->iobuf);
			c->iobuf = NULL;
		}
		c->pcap = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_MICRO,
								  perr);
		if (!c->pcap)
			fclose(f);
	} else {
		c->pcap = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_MICRO,
								 perr);
	}
	if (!c->pcap) {
		snprintf(err, errlen, "%s: %s", path, perr);
		capture_close(c);
		return NULL;
	}
	c->file = pcap_file(c->pcap);
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
		c->size = (uint64_t)st.st_size;
	return c;
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
	return c;
fail:
	capture_close(c);
	return NULL;
}

enum capture_rc capture_next(struct capture *c, struct capture_pkt *out)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int r = pcap_next_ex(c->pcap, &h, &data);

	switch (r) {
	case 1:
		c->count++;
		out->ts_us = (uint64_t)h->ts.tv_sec * 1000000u + (uint64_t)h->ts.tv_usec;
		out->caplen = h->caplen;
		out->wirelen = h->len;
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
	return pcap_datalink(c->pcap);
}

const char *capture_datalink_name(const struct capture *c)
{
	const char *n = pcap_datalink_val_to_name(pcap_datalink(c->pcap));
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
	if (pcap_stats(c->pcap, &ps) < 0)
		return -1;
	*received = ps.ps_recv;
	*dropped = ps.ps_drop;
	*if_dropped = ps.ps_ifdrop;
	return 0;
}

int capture_fd(const struct capture *c)
{
	return pcap_get_selectable_fd(c->pcap);
}

void capture_break(struct capture *c)
{
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
	free(c->iobuf); /* after pcap_close: the FILE used it until fclose */
	free(c->name);
	free(c);
}
