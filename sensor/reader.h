/*
 * reader.h - capture files read on a thread of their own (`replay`).
 *
 * A reader opens the given files in order with capture.h and copies every
 * frame into a fixed single-producer single-consumer ring, with records of
 * each file's opening, end and errors between the frames, in the order they
 * happened; one consumer takes the records out in place and releases them in
 * the order it got them. The stream always ends with RD_DONE: after every
 * file, or after the first file that could not be opened (RD_OPEN_ERROR) or
 * whose link type accept_dlt refused (RD_BAD_LINK), or for whose link
 * type the filter does not compile (RD_OPEN_ERROR); no file after those is
 * opened. A file damaged part-way (RD_DAMAGED) does not end the stream.
 * With a filter, only the frames that match it are copied.
 *
 * A record returned by reader_next() stays valid, and in place, until it is
 * released; holding one record while taking the next is what a one-frame
 * read-ahead needs, and always fits (the ring holds at least four of the
 * largest records).
 */
#ifndef EW_READER_H
#define EW_READER_H

#include <stddef.h>
#include <stdint.h>

/* The largest frame kept (libpcap's MAXIMUM_SNAPLEN, the most it returns for
 * any link type egresswatch decodes); a longer frame (libpcap allows more for
 * a few link types, D-Bus and USB among them) is cut to it. */
#define READER_MAX_FRAME 262144u
#define READER_DEFAULT_RING (4u << 20)

enum reader_kind {
	RD_PAD = 0,    /* internal: never returned */
	RD_FRAME,      /* a frame of file `file`, link type dlt */
	RD_FILE,       /* file `file` is open: dlt, size, message = its link
			* type's name (a pcapng file's: of the first of its
			* interfaces before its first packet that accept_dlt
			* takes; each frame has its own) */
	RD_EOF,        /* file `file` ended cleanly */
	RD_DAMAGED,    /* file `file` is damaged here: message = capture_error(),
			* naming it; its earlier frames came before */
	RD_SKIPPED,    /* file `file` is damaged here and is read on past it:
			* message = capture_error() (where, and the bytes
			* skipped); after the tenth of a file, one more at its
			* end with the count */
	RD_JOINED,     /* file `file` holds a second file header here (files
			* joined with cat) and is read on: message */
	RD_OPEN_ERROR, /* file `file` could not be opened: message naming it */
	RD_BAD_LINK,   /* accept_dlt refused file `file`'s link type dlt (a
			* pcapng file's: every one of its interfaces before
			* its first packet; dlt the first): message = the
			* link type's name */
	RD_DONE,       /* the end, nothing follows; file = npaths after every
			* file, else the file that ended the stream */
};

struct reader_rec {
	uint32_t len;     /* bytes in the ring: this header, data, padding to 8 */
	uint16_t kind;    /* enum reader_kind */
	uint16_t pad_;
	uint32_t file;    /* index into reader_config.paths */
	int32_t dlt;      /* RD_FRAME, RD_FILE, RD_BAD_LINK: the file's link type */
	union {
		uint64_t ts_us; /* RD_FRAME: capture time */
		uint64_t size;  /* RD_FILE: the file's size, 0 when unknown (stdin) */
	};
	uint32_t caplen;  /* RD_FRAME: bytes of data; otherwise the message's length */
	uint32_t wirelen; /* RD_FRAME: length on the wire */
	uint8_t data[];   /* RD_FRAME: the frame; otherwise a NUL-terminated message */
};

struct reader_config {
	char *const *paths;         /* the files, "-" for stdin; borrowed until close */
	unsigned npaths;
	size_t ring_bytes;          /* 0: READER_DEFAULT_RING; rounded up to a power
				     * of two of at least four of the largest records */
	int (*accept_dlt)(int dlt); /* NULL: every link type */
	const char *bpf;            /* a pcap-filter(7) expression frames must match,
				     * or NULL; compiled for each link type met
				     * (reader_check_filter tells a bad one first) */
	int timed;                  /* only frames with from_us <= time < to_us */
	uint64_t from_us, to_us;
	int merge;                  /* the files side by side, frames in time
				     * order (at most READER_MERGE_MAX open at
				     * once; no progress position) */
};

#define READER_MERGE_MAX 64

struct reader;

/* Start the reader thread. -1 and a one-line reason in err on failure. */
int reader_open(struct reader **out, const struct reader_config *cfg, char *err, size_t errlen);

/* The next record, or NULL when none came within timeout_ms (the caller can
 * look at its own stop flag and ask again). Not to be called after RD_DONE. */
const struct reader_rec *reader_next(struct reader *r, unsigned timeout_ms);

/* Give a record's space back to the reader. Records are released in the
 * order reader_next() returned them. */
void reader_release(struct reader *r, const struct reader_rec *rec);

/* Bytes of file `file` the reader has read (updated every 64 KiB; not for
 * a file of unknown size), or UINT64_MAX once it has gone past that file. */
uint64_t reader_progress(struct reader *r, unsigned file);

/* --merge: bytes of all the files read so far, and their sizes together
 * into *total (0 until the reader has looked at them all, and when one is
 * a pipe or stdin, whose size is not known). */
uint64_t reader_merge_progress(struct reader *r, uint64_t *total);

/* Frames the filter left out so far (read after RD_DONE for the total). */
uint64_t reader_filtered(struct reader *r);

/* Frames left out as outside the time range so far (read after RD_DONE for
 * the total). */
uint64_t reader_outside(struct reader *r);

/* Does expression bpf compile (for Ethernet)? 0, or -1 with libpcap's reason
 * in err. A filter that compiles there may still not for another link type
 * ("ether host" on raw IP): the stream then ends with RD_OPEN_ERROR naming
 * the file, the filter and the link type. */
int reader_check_filter(const char *bpf, char *err, size_t errlen);

/* Stop the reader (wherever it is) and join its thread; records not
 * released are dropped. NULL is fine. */
void reader_close(struct reader *r);

#endif
