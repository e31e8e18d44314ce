/*
 * fuzz_packet.c - fuzz target over decode + flow table + analyzers (DNS,
 * and every module registered), with no store.
 *
 * Input format: a sequence of frames, each a 1-byte link-type selector, a
 * 2-byte big-endian length and that many frame bytes (a short final frame
 * takes what is left). Several frames per input let the fuzzer reach TCP
 * reassembly and IP fragment reassembly. Each frame is stamped 1 ms after
 * the previous one, but for a selector of 0xff (an IPv6 frame, as 0xff % 8
 * selects): stamped 2 minutes before it, so that packet time goes back and
 * flows, detector windows and alert rows start over (core_packet).
 *
 * Bit 3 of the selector names the frame's capture source (0 or 1), and
 * copies of a datagram from the other source are skipped (copies.h).
 * An input of odd length runs with 8 KiB of stream bytes for all flows
 * (stream_total_max), so a few streams fill it and the reclaim sweep runs.
 *
 * The rules have a sandbox section (fuzz_rules: agents in 10.0.0.0/8,
 * 192.168.0.0/16 and fd00::/8, one proxy, one resolver), so the egress
 * policy judges every packet from those networks: tunnel carriers, other
 * IP protocols and broken transport headers included.
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
#include "sensor/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int fuzz_dlts[] = {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW,
				DLT_NULL,   DLT_LOOP,      DLT_IPV4,       DLT_IPV6};

/* The built-in defaults with a sandbox section; made once, kept for the
 * process (reachable: not a leak). */
static const struct rules *fuzz_rules(void)
{
	static struct rules r;
	static struct rules *defaults;
	static struct rules_net sandbox[3], proxy[1], resolver[1];
	static const char *const sandbox_text[3] = {"10.0.0.0/8", "192.168.0.0/16", "fd00::/8"};
	char why[128];

	if (defaults)
		return &r;
	defaults = rules_default();
	if (!defaults)
		abort();
	r = *defaults;
	for (size_t i = 0; i < 3; i++)
		if (rules_net_parse(sandbox_text[i], &sandbox[i], why, sizeof(why)) != 0)
			abort();
	if (rules_net_parse("10.0.0.2:8080", &proxy[0], why, sizeof(why)) != 0 ||
	    rules_net_parse("10.0.0.53", &resolver[0], why, sizeof(why)) != 0)
		abort();
	r.has_sandbox = 1;
	r.sandbox = (struct rules_netlist){.v = sandbox, .n = 3};
	r.proxies = (struct rules_netlist){.v = proxy, .n = 1};
	r.resolvers = (struct rules_netlist){.v = resolver, .n = 1};
	return &r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct core_config cfg = {0};
	struct core *core = NULL;
	char err[256];
	uint64_t ts = 1796032800000000ull; /* 2026-11-30T10:00:00Z, any fixed time */
	const uint64_t back = 120000000ull; /* a step back longer than CORE_CLOCK_BACK_US */
	size_t off = 0;

	cfg.rules = fuzz_rules();
	cfg.flow.max_flows = 64;
	/* inputs of odd length share 8 KiB of stream bytes, so the cap is
	 * reached and idle directions are reclaimed (flow.c "Reclaim") */
	cfg.flow.stream_total_max = (size & 1) ? 8192 : 0;
	cfg.copies = 1; /* frames come from two capture sources (copies.h) */
	cfg.decode.frag_max_datagrams = 8;
	if (core_open(&core, &cfg, err, sizeof(err)) < 0)
		abort();
	while (size - off >= 3) {
		const uint8_t sel = data[off];
		int dlt = fuzz_dlts[sel % (sizeof(fuzz_dlts) / sizeof(fuzz_dlts[0]))];
		if (data[off] == 0xff && ts > back)
			ts -= back;
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
		core_packet(core, dlt, ts, frame, (uint32_t)len, (uint32_t)len, sel >> 3 & 1);
		free(frame);
		off += len;
		ts += 1000;
	}
	core_close(core);
	return 0;
}
