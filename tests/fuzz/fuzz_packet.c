/*
 * fuzz_packet.c - fuzz target over decode + flow table + analyzers (DNS,
 * and every module registered), with no store.
 *
 * Input format: a sequence of frames, each a 1-byte link-type selector, a
 * 2-byte big-endian length and that many frame bytes (a short final frame
 * takes what is left). Several frames per input let the fuzzer reach TCP
 * reassembly and IP fragment reassembly. Each frame is stamped 1 ms after
 * the previous one.
 *
 * Built two ways: with -fsanitize=fuzzer as a libFuzzer target, or (default)
 * with tests/fuzz/driver.c, whose main() replays every file of a corpus
 * directory, so the corpus runs as an ordinary test in every CI run.
 */
#include <pcap/dlt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sensor/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int fuzz_dlts[] = {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW,
				DLT_NULL,   DLT_LOOP,      DLT_IPV4,       DLT_IPV6};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct core_config cfg = {0};
	struct core *core = NULL;
	char err[256];
	uint64_t ts = 1796032800000000ull; /* 2026-11-30T10:00:00Z, any fixed time */
	size_t off = 0;

	cfg.flow.max_flows = 64;
	cfg.decode.frag_max_datagrams = 8;
	if (core_open(&core, &cfg, err, sizeof(err)) < 0)
		abort();
	while (size - off >= 3) {
		int dlt = fuzz_dlts[data[off] % (sizeof(fuzz_dlts) / sizeof(fuzz_dlts[0]))];
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];
		off += 3;
		if (len > size - off)
			len = size - off;
		/* Copy into an exact-size buffer so ASan sees any overread. */
		uint8_t *frame = malloc(len ? len : 1);
		if (!frame)
			abort();
		for (size_t i = 0; i < len; i++)
			frame[i] = data[off + i];
		/* the replay's read-ahead hint comes first, as in a replay */
		core_prefetch(core, dlt, frame, (uint32_t)len);
		core_packet(core, dlt, ts, frame, (uint32_t)len, (uint32_t)len, 0);
		free(frame);
		off += len;
		ts += 1000;
	}
	core_close(core);
	return 0;
}
