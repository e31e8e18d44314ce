/*
 * pcapng.h - a pcapng reader whose packets each carry their interface's
 * link type.
 *
 * libpcap (1.10, Debian 12's) gives one link type per file and stops at the
 * first Interface Description Block whose type differs from the first one's,
 * so a capture from `dumpcap -i eth0 -i lo`, or two sections joined by
 * `cat`, could not be replayed past that block; tshark reads them whole.
 * capture.c reads pcapng files with this reader instead: every section
 * (either byte order), every interface with its own link type, timestamp
 * resolution (if_tsresol) and offset (if_tsoffset), Enhanced, Simple and the
 * obsolete Packet blocks; other blocks are skipped.
 *
 * Bounds: a block is at most PCAPNG_MAX_BLOCK bytes (libpcap's limit), a
 * section at most PCAPNG_MAX_IFACES interfaces; the one buffer grows to the
 * largest block read. Where libpcap refuses a file at open (no interface
 * before the first packet block) this reader does too, with its words.
 */
#ifndef EW_PCAPNG_H
#define EW_PCAPNG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PCAPNG_MAGIC 0x0A0D0D0Au
#define PCAPNG_MAX_BLOCK (16u << 20)
#define PCAPNG_MAX_IFACES 65536u

struct pcapng;

struct pcapng_pkt {
	uint64_t ts_us;   /* microseconds since the epoch (if_tsresol, if_tsoffset applied) */
	uint32_t caplen;  /* bytes at data */
	uint32_t wirelen; /* length on the wire */
	int dlt;          /* the interface's link type, as a libpcap DLT_* value */
	const uint8_t *data;
};

/* Start reading a pcapng stream from f, whose first npre bytes (at most 4,
 * the block type the caller looked at) have already been read into pre.
 * Reads up to the first Interface Description Block (a stream without one
 * is refused), and on over the interfaces and skipped blocks after it to
 * the first packet, section header, damage or end, which pcapng_next then
 * gives first. NULL and a one-line
 * reason (without the file's name) in err when the stream is not a usable
 * pcapng file. f stays the caller's. */
struct pcapng *pcapng_open(FILE *f, const uint8_t *pre, size_t npre, char *err, size_t errlen);

/* f was at byte base of its file when pcapng_open started reading it (a
 * pcapng section met inside a classic pcap file): count offsets from the
 * file's start, as pcapng_resync needs. */
void pcapng_rebase(struct pcapng *g, uint64_t base);

/* The first interface's link type (DLT_*). */
int pcapng_first_dlt(const struct pcapng *g);

/* The link types (DLT_*) of the interfaces described before the file's
 * first packet (pcapng_open reads that far), in order, up to max into
 * dlts. Returns their count (at least 1). Only before pcapng_next. */
size_t pcapng_dlts(const struct pcapng *g, int *dlts, size_t max);

/* The next packet: 1, with *out valid until the next call; 0 at a clean
 * end of the stream; -1 when the stream is damaged here (reason in err). */
int pcapng_next(struct pcapng *g, struct pcapng_pkt *out, char *err, size_t errlen);

/* After pcapng_next found the stream damaged, in a file of size bytes that
 * f can seek in: search past the start of the block it was reading for the
 * next place a whole block of a known type (its length given twice) is
 * followed by another or by the end, and read on from there. 0 with the
 * bytes skipped in [*from, *to); -1 when there is none (the file stops).
 * Where the damage was a section header, what follows is that section's:
 * its interfaces start afresh (none until its own IDBs). */
int pcapng_resync(struct pcapng *g, uint64_t size, uint64_t *from, uint64_t *to);

void pcapng_close(struct pcapng *g);

#endif
