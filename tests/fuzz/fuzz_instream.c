/*
 * fuzz_instream.c - fuzz target over the compressed-stream reader
 * (sensor/instream.c): the first input byte chooses gzip (0), zstd (1) or
 * plain (else), the rest is the file, read to its end through the stdio
 * stream capture.c would hand to a capture reader (at most 16 MiB of
 * output, so a small bomb ends the run rather than the fuzzer). Invariants
 * that must hold for any input abort: a plain file comes back byte for
 * byte, a failed read leaves a reason, and no more file bytes are counted
 * than the file has.
 *
 * Built with tests/fuzz/driver.c (main() replays tests/fuzz/corpus-instream/
 * as an ordinary test) or with -fsanitize=fuzzer.
 */
#define _GNU_SOURCE /* memfd_create */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sensor/instream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[1 << 16];
	char err[256];

	if (size < 1)
		return 0;
	enum instream_kind kind = data[0] == 0 ? IN_GZIP : data[0] == 1 ? IN_ZSTD : IN_PLAIN;
	const uint8_t *file = data + 1;
	size_t n = size - 1;
	int fd = memfd_create("fuzz", 0);
	if (fd < 0 || (n && write(fd, file, n) != (ssize_t)n) || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	FILE *f = fdopen(fd, "rb");
	if (!f)
		abort();
	uint8_t head[4];
	size_t nh = (size_t)read(fd, head, n < 4 ? n : 4);
	struct instream *s = NULL;
	FILE *in = instream_open(f, kind, head, nh, &s, err, sizeof(err));
	if (!in)
		abort();
	if (data[0] == 2) { /* the capture reader's look at the inner magic */
		uint8_t m[4];
		if (instream_peek(s, m, sizeof(m)) > 4)
			abort();
	}
	size_t total = 0, r;
	while (total < (16u << 20) && (r = fread(out, 1, sizeof(out), in)) > 0) {
		if (kind == IN_PLAIN && memcmp(out, file + total, r) != 0)
			abort();
		total += r;
	}
	if (ferror(in) && !instream_error(s)[0])
		abort();
	if (kind == IN_PLAIN && !ferror(in) && total != n)
		abort();
	if (instream_consumed(s) > n)
		abort();
	fclose(in);
	return 0;
}
