/*
 * fuzz_h2c.c - fuzz target over the HTTP/2 cleartext analyzer: frames,
 * header blocks and HPACK (libnghttp2's inflater) in both directions of a
 * hand-built flow.
 *
 * Input: a sequence of segments, each a control byte (bit 0: the server's
 * direction), a 2-byte big-endian length and that many bytes (a short final
 * segment takes what is left). The client's stream starts with the
 * connection preface, given here, so every input is a claimed flow. Each
 * segment is appended to its direction's stream the way the flow table
 * appends (capped at FUZZ_STREAM_MAX, which sets overflow) and handed to
 * the module. Every observation's record must be escaped text that
 * http_info_json reads back, and the inflaters' memory must stay within
 * H2C_HEAP_MAX.
 *
 * Built two ways: with -fsanitize=fuzzer as a libFuzzer target, or (default)
 * with tests/fuzz/driver.c, whose main() replays tests/fuzz/corpus-h2c/.
 */
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analyzers/h2c.h"
#include "analyzers/module.h"
#include "api/http_json.h"
#include "sensor/flow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_STREAM_MAX 16384

static int fuzz_obs(struct emit *e, const struct obs *o)
{
	json_t *j = json_object();

	if (!j || strlen(o->name) != o->name_len || strlen(o->aux) != o->aux_len ||
	    strlen(o->info) != o->info_len)
		abort();
	for (size_t i = 0; i < o->info_len; i++) {
		unsigned char b = (unsigned char)o->info[i];
		if (b != 0x1e && b != 0x1f && (b < 0x20 || b > 0x7e))
			abort(); /* only escaped text and separators */
	}
	if (http_info_json(j, o->info, o->info_len, o->kind) != 0)
		abort();
	json_decref(j);
	return 0;
}

static void append(struct flow_stream *s, const uint8_t *p, size_t n)
{
	if (s->overflow)
		return;
	size_t k = n < FUZZ_STREAM_MAX - s->len ? n : FUZZ_STREAM_MAX - s->len;
	memcpy(s->buf + s->len, p, k);
	s->len += (uint32_t)k;
	if (s->len >= FUZZ_STREAM_MAX)
		s->overflow = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	static uint8_t buf[2][FUZZ_STREAM_MAX];
	struct flow_stream st[2];
	struct flow f;
	struct emit out = {.obs = fuzz_obs};
	void *state = NULL;
	size_t off = 0;

	if (h2c_module.init(NULL, &state) != 0)
		abort();
	memset(&f, 0, sizeof(f));
	memset(st, 0, sizeof(st));
	f.proto = IPPROTO_TCP;
	f.ipv = 4;
	f.st = st;
	st[0].buf = buf[0];
	st[1].buf = buf[1];
	append(&st[0], preface, 24);
	for (int first = 1; first || size - off >= 3; first = 0) {
		int dir = 0;
		const uint8_t *seg = NULL;
		size_t n = 0;
		struct pkt p;

		if (!first) {
			dir = data[off] & 1;
			n = (size_t)data[off + 1] << 8 | data[off + 2];
			off += 3;
			if (n > size - off)
				n = size - off;
			seg = data + off;
			off += n;
			append(&st[dir], seg, n);
		}
		memset(&p, 0, sizeof(p));
		p.proto = IPPROTO_TCP;
		p.ipv = 4;
		p.flow = &f;
		p.dir = dir;
		p.payload = seg;
		p.payload_len = n;
		p.ts_us = off;
		h2c_module.on_packet(state, &p, &out);
		if (h2c_heap(state) > H2C_HEAP_MAX || h2c_pending_bytes(state) > 24 * 1024)
			abort();
	}
	/* as the core and the flow table do: the pending requests come back */
	h2c_module.on_flow_end(state, &f);
	if (h2c_pending_bytes(state) != 0)
		abort();
	free(f.app_state);
	h2c_module.fini(state);
	return 0;
}
