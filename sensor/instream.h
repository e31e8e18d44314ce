/*
 * instream.h - a capture file's bytes as a stdio stream: as they are, or
 * inflated from gzip (zlib) or zstd (libzstd), with the bytes capture.c
 * read to tell the formats apart given back first.
 *
 * capture.c reads a file's first four bytes with read(2) to choose a
 * reader; a stream that cannot seek back (stdin, a pipe) or must be
 * decompressed is then read through instream_open(), a fopencookie() FILE
 * whose reads go to the descriptor with read(2), so a pipe delivers what it
 * has as it comes. gzip members and zstd frames may follow one another
 * (`cat a.pcap.gz b.pcap.gz`). A stream that is damaged, or ends inside a
 * member or frame, fails the read that meets it (EIO), and instream_error()
 * says why: the capture reader then reports the file damaged at that packet
 * and keeps what came before.
 *
 * Memory: a 64 KiB input buffer, zlib's 32 KiB window, and a zstd window of
 * at most 2^INSTREAM_ZSTD_WINDOW_LOG bytes (a frame that asks for more is
 * refused as damage, not allocated).
 */
#ifndef EW_INSTREAM_H
#define EW_INSTREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define INSTREAM_ZSTD_WINDOW_LOG 25 /* 32 MiB: zstd -19 uses 8 MiB, --long 128 MiB */

enum instream_kind { IN_PLAIN = 0, IN_GZIP, IN_ZSTD };

struct instream;

/* The kind the first n bytes of a file show (zstd: a frame's magic, or a
 * skippable frame's, which pzstd writes first). */
enum instream_kind instream_kind_of(const uint8_t *head, size_t n);

/* A stream over f's descriptor, whose first npre bytes (at most 4) were
 * read already into pre. f is closed with the stream unless it is stdin.
 * On success *out is the stream's state, valid until the FILE is closed.
 * NULL (out of memory, or a decompressor that would not start) with a
 * reason in err. */
FILE *instream_open(FILE *f, enum instream_kind kind, const uint8_t *pre, size_t npre,
		    struct instream **out, char *err, size_t errlen);

/* Read up to n bytes of the (decompressed) stream and keep them, so the
 * FILE returns them first: the file's own magic, under its compression.
 * Only before the first read through the FILE. Returns the count. */
size_t instream_peek(struct instream *s, uint8_t *dst, size_t n);

/* Bytes of the file read so far (compressed bytes for gzip and zstd). */
uint64_t instream_consumed(const struct instream *s);

/* Why a read failed ("gzip: invalid distance too far back", "zstd: the
 * stream ends inside a frame"), or "" when none did. */
const char *instream_error(const struct instream *s);

/*
 * Waking a thread out of a read that waits on a pipe (a replay of stdin
 * stopped by SIGINT while the writer is quiet): instream_wake_init()
 * installs (once) a handler for SIGURG without SA_RESTART and blocks SIGURG
 * in the calling thread, and so in the threads it creates after (main()
 * calls it first); the thread that reads unblocks it (instream_wake_me).
 * instream_wake(t) queues SIGURG to thread t, whose read(2) then fails with
 * EINTR, and from then on every read of that thread that meets EINTR fails:
 * instream's with "interrupted", capture.c's first bytes short. A SIGURG
 * from outside the process (its default action is to be ignored) can only
 * reach the reading thread, and only interrupts a read, which is made
 * again. instream_wake returns pthread_sigqueue's result.
 */
#include <pthread.h>
void instream_wake_init(void);
void instream_wake_me(void);
int instream_wake(pthread_t t);
/* The calling thread was woken by instream_wake. */
int instream_woken(void);

#endif
