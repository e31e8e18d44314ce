/*
 * fuzz_pcapng.c - fuzz target over the pcapng reader (sensor/pcapng.c): the
 * input is a capture file, read block by block as capture.c reads one, and
 * every packet it gives is decoded with its own interface's link type.
 * Invariants that must hold for any input abort: a packet's bytes come from
 * the input (so there are never more of them than input bytes, nor more
 * packets than bytes), and a clean end stays the end.
 *
 * Built with tests/fuzz/driver.c (main() replays tests/fuzz/corpus-pcapng/
 * as an ordinary test) or with -fsanitize=fuzzer.
 */
#define _GNU_SOURCE /* fmemopen */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sensor/decode.h"
#include "sensor/pcapng.h"
#include "sensor/pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct decoder *dec;
	char err[256];
	struct pcapng_pkt p;
	struct pkt pk;
	int r;

	if (!size)
		return 0;
	if (!dec && !(dec = decoder_new(NULL)))
		abort();
	FILE *f = fmemopen((void *)data, size, "rb");
	if (!f)
		abort();
	struct pcapng *g = pcapng_open(f, NULL, 0, err, sizeof(err));
	if (g) {
		size_t n = 0;
		while ((r = pcapng_next(g, &p, err, sizeof(err))) == 1) {
			if (p.caplen > size || (p.caplen && !p.data))
				abort();
			(void)decode_packet(dec, p.dlt, p.data, p.caplen, p.wirelen, p.ts_us, &pk);
			if (++n > size)
				abort();
		}
		if (r != 0 && r != -1)
			abort();
		if (r == 0 && pcapng_next(g, &p, err, sizeof(err)) != 0)
			abort(); /* the end stays the end */
		pcapng_close(g);
	}
	fclose(f);
	return 0;
}
