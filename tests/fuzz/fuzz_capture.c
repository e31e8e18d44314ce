/*
 * fuzz_capture.c - fuzz target over the capture files replay reads past
 * damage (sensor/capture.c): the input is written to a memory file (a
 * plain, seekable file, as a capture on disk is) and read through
 * capture_open_file and capture_next to the end, classic pcap by libpcap
 * with pcap_resync and joined_header, pcapng by sensor/pcapng.c with
 * pcapng_resync. Invariants that must hold for any input abort: a packet's
 * bytes are no more than the input's, every read moves on (never more
 * packets, skips or joins than input bytes), and the bytes skipped are
 * fewer than the input's.
 *
 * Built with tests/fuzz/driver.c (main() replays tests/fuzz/corpus-capture/
 * as an ordinary test) or with -fsanitize=fuzzer.
 */
#define _GNU_SOURCE /* memfd_create (memfile.h) */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "memfile.h"
#include "sensor/capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[512];
	struct capture_pkt p;
	enum capture_rc rc;
	size_t n = 0;
	int fd = memfile(data, size, "fuzz-capture", path);

	struct capture *c = capture_open_file(path, err, sizeof(err));
	if (c) {
		while ((rc = capture_next(c, &p)) == CAP_PACKET || rc == CAP_SKIPPED ||
		       rc == CAP_JOINED) {
			if (rc == CAP_PACKET && (p.caplen > size || (p.caplen && !p.data)))
				abort();
			if (++n > size)
				abort(); /* a read that did not move on */
		}
		if (rc != CAP_EOF && rc != CAP_ERROR)
			abort();
		unsigned places;
		uint64_t bytes;
		capture_skips(c, &places, &bytes);
		if (bytes > size || places > size)
			abort();
		capture_close(c);
	}
	close(fd);
	return 0;
}
