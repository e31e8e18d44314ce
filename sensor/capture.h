/*
 * capture.h - packet sources: capture files (pcap through libpcap, pcapng
 * through pcapng.h, "-" for stdin) and live interfaces through libpcap
 * (by default a TPACKET_V3 ring of blocks retired every timeout_ms;
 * immediate mode, a TPACKET_V2 ring of fixed frames, on request; a BPF
 * filter, a configurable buffer).
 *
 * Packet bytes returned by capture_next() are borrowed from libpcap and valid
 * until the next call on the same source (pcap_next_ex's contract).
 * Timestamps are always microseconds: pcap files are opened with
 * PCAP_TSTAMP_PRECISION_MICRO, and pcapng.c scales each interface's.
 */
#ifndef EW_CAPTURE_H
#define EW_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

struct capture;

struct capture_live_opts {
	const char *bpf;      /* filter expression, NULL for none */
	int snaplen;          /* default 65535 */
	int buffer_bytes;     /* kernel ring size; default 64 MiB (libpcap takes an int) */
	int immediate;        /* deliver each packet as it arrives: libpcap then
			       * uses a TPACKET_V2 ring of frames each the size of
			       * the snap length (default 0: a TPACKET_V3 ring of
			       * 256 KiB blocks that packets fill end to end) */
	int timeout_ms;       /* not immediate: a block is handed over when full or
			       * after this long (default CAPTURE_TIMEOUT_MS) */
};

#define CAPTURE_TIMEOUT_MS 10
#define CAPTURE_BUFFER_MAX_MB 2047 /* the largest -B libpcap can take (an int of bytes) */

#define CAPTURE_SKIPS_TOLD 10 /* damaged places of a file told one by one (CAP_SKIPPED) */

enum capture_rc {
	CAP_PACKET = 1,  /* *hdr and *data are valid */
	CAP_TIMEOUT = 0, /* live: nothing this time */
	CAP_EOF = -2,    /* file: clean end */
	CAP_ERROR = -1,  /* see capture_error(); for a file: damaged part-way */
	CAP_SKIPPED = -3, /* file: damaged here, and read on from the next whole
			   * record (capture_error() says where and how much was
			   * skipped); only the first CAPTURE_SKIPS_TOLD of a
			   * file are returned,
			   * capture_skips() counts them all */
	CAP_JOINED = -4, /* file: a second file header of the same kind met in
			  * it (files joined with cat), read on (capture_error()
			  * says where) */
};

struct capture_pkt {
	uint64_t ts_us;
	uint32_t caplen, wirelen;
	int dlt; /* this packet's link type: a pcapng file's interfaces may differ */
	const uint8_t *data;
};

/* Open a capture file (or "-" for stdin). Returns NULL and a one-line
 * message naming the file in err on failure. */
struct capture *capture_open_file(const char *path, char *err, size_t errlen);

/* Open a live interface. NULL and a message naming it on failure; then
 * *bad_filter (when not NULL) is 1 when it was o->bpf that failed (it does
 * not compile for the interface's link type), 0 otherwise. */
struct capture *capture_open_live(const char *iface, const struct capture_live_opts *o,
				  int *bad_filter, char *err, size_t errlen);

/* Read the next packet. */
enum capture_rc capture_next(struct capture *c, struct capture_pkt *out);

/* libpcap's DLT_* of the source (a pcapng file: of its first interface;
 * each packet has its own in capture_pkt.dlt), and its name ("EN10MB"). */
int capture_datalink(const struct capture *c);
const char *capture_datalink_name(const struct capture *c);

/* The link types the source is known at open to hold, up to max into dlts:
 * its one, or a pcapng file's interfaces described before its first packet
 * (the first of them capture_datalink's), in order. Returns their count
 * (at least 1). Only before the first capture_next. */
size_t capture_datalinks(const struct capture *c, int *dlts, size_t max);

/* The last error, naming the source. Borrowed until the next call. */
const char *capture_error(const struct capture *c);

/* The places of a classic pcap file where damage was skipped (CAP_SKIPPED),
 * and the bytes skipped, so far. */
void capture_skips(const struct capture *c, unsigned *places, uint64_t *bytes);

/* Files: bytes read so far and the file size (0 when unknown, e.g. stdin). */
void capture_progress(const struct capture *c, uint64_t *done, uint64_t *total);

/* Live: kernel counters (pcap_stats) since this source was opened, 64-bit
 * (libpcap's are 32-bit and wrap; each call adds what they moved since the
 * last). When pcap_stats fails (the interface went away), the counts of the
 * last call that succeeded. Returns 0, or -1 when there are none. A run that
 * reopens an interface adds the closed source's last counts to the new
 * one's (capture_stats just before capture_close). */
int capture_stats(struct capture *c, uint64_t *received, uint64_t *dropped,
		  uint64_t *if_dropped);

/* Is live interface iface up with a carrier (IFF_UP and IFF_RUNNING, by
 * ioctl SIOCGIFFLAGS in this process's network namespace)? 1 yes, 0 no,
 * -1 unknown (no such interface, "any", or the ioctl failed). libpcap says
 * nothing when a link goes down (its socket stays bound and simply gets no
 * packets), so `watch` asks this once a second. */
int capture_link_up(const char *iface);

/* A descriptor to poll for readability (live), or -1. */
int capture_fd(const struct capture *c);

/* Stop a blocking read from a signal handler (pcap_breakloop). */
void capture_break(struct capture *c);

/* Packets read from this source. */
uint64_t capture_count(const struct capture *c);

const char *capture_name(const struct capture *c);

void capture_close(struct capture *c);

#endif
