/*
 * fuzz_http.c - fuzz target over the HTTP analyzer: the pure head parser,
 * the record writer and its JSON reader, then the module itself over a
 * hand-built flow.
 *
 * Input: client bytes, optionally followed by FUZZ_SEP and server bytes, so
 * corpus files are plain HTTP text. Each side is parsed whole as one head
 * (both ways), then both are cut into segments whose sizes come from a
 * xorshift generator seeded by the input size, appended alternately to the
 * flow's two streams the way the flow table appends (capped at
 * the window, which sets overflow) and handed to the module, so
 * pipelining, bodies, pairing, splits and the caps are reached. The window
 * is FUZZ_STREAM_MAX, or the sensor's 16 KiB for an input over
 * HTTP_HEAD_HOLD (run such inputs with -max_len=70000), so that heads read
 * a line at a time past the window are reached too. Every
 * record, from the parser or from an observation, must be escaped text that
 * http_info_json reads back.
 *
 * Built two ways: with -fsanitize=fuzzer as a libFuzzer target, or (default)
 * with tests/fuzz/driver.c, whose main() replays tests/fuzz/corpus-http/.
 */
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analyzers/http.h"
#include "analyzers/module.h"
#include "api/http_json.h"
#include "sensor/flow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_STREAM_MAX 4096
#define FUZZ_STREAM_WIDE 16384 /* the sensor's window */

static size_t window = FUZZ_STREAM_MAX;

static void check_record(const char *info, size_t len, int kind)
{
	json_t *o = json_object();

	if (!o)
		abort();
	if (strlen(info) != len)
		abort();
	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)info[i];
		if (b != 0x1e && b != 0x1f && (b < 0x20 || b > 0x7e))
			abort(); /* only escaped text and separators */
	}
	if (http_info_json(o, info, len, kind) == -22 && len)
		abort(); /* the analyzer's records always read back */
	json_decref(o);
}

static int fuzz_obs(struct emit *e, const struct obs *o)
{
	if (strlen(o->name) != o->name_len || strlen(o->aux) != o->aux_len)
		abort();
	check_record(o->info, o->info_len, o->kind);
	return 0;
}

static struct http_head head; /* large: not on the stack */
static char info[HTTP_INFO_MAX];

static const char FUZZ_SEP[] = "\n--server--\n";

static void parse_both(const uint8_t *data, size_t size)
{
	/* an exact-size copy, so ASan sees any overread */
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		abort();
	if (size)
		memcpy(copy, data, size);
	for (int response = 0; response < 2; response++) {
		struct rec rec;
		int r = http_parse_head(copy, size, response, &head);
		if (r == MOD_OK && (head.head_len == 0 || head.head_len > size))
			abort();
		if (head.head_len > HTTP_HEAD_FAR || head.seen > size)
			abort();
		/* read past HTTP_HEAD_MAX, but never unmarked */
		if (head.head_len > HTTP_HEAD_MAX && r == MOD_OK)
			abort();
		rec_init(&rec, info, sizeof(info));
		http_head_record(&head, NULL, &rec);
		if (rec.overflow)
			abort();
		check_record(info, rec.len, response ? OBS_HTTP_RESPONSE : OBS_HTTP_REQUEST);
	}
	http_sniff(copy, size);
	free(copy);
}

/* Append n bytes to dir and run the module, as the flow table would. */
static void feed(void *state, struct flow *f, struct emit *out, int dir, const uint8_t *d,
		 size_t n, uint8_t flags)
{
	struct flow_stream *s = &f->st[dir];
	struct pkt p;

	if (!s->overflow) {
		size_t k = n < window - s->len ? n : window - s->len;
		if (k)
			memcpy(s->buf + s->len, d, k);
		s->len += (uint32_t)k;
		if (s->len >= window)
			s->overflow = 1;
	}
	memset(&p, 0, sizeof(p));
	p.proto = IPPROTO_TCP;
	p.flow = f;
	p.dir = dir;
	p.payload = d;
	p.payload_len = n;
	p.tcp_flags = flags;
	(void)http_module.on_packet(state, &p, out);
	if (s->consumed > s->len)
		abort();
	/* one flow's pending requests: 16 at the pairing bounds, 13 KiB
	 * packed, with room to grow */
	if (http_pending_bytes(state) > 24 * 1024)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct emit out = {.obs = fuzz_obs};
	struct flow f;
	struct flow_stream fst[2]; /* f.st: the flow table keeps streams out of line */
	void *state = NULL;
	const uint8_t *side[2] = {data, NULL};
	size_t len[2] = {size, 0}, off[2] = {0, 0};
	size_t sl = sizeof(FUZZ_SEP) - 1;
	uint32_t x = (uint32_t)size * 2654435761u | 1;

	for (size_t i = 0; i + sl <= size; i++) {
		if (memcmp(data + i, FUZZ_SEP, sl) == 0) {
			len[0] = i;
			side[1] = data + i + sl;
			len[1] = size - i - sl;
			break;
		}
	}
	parse_both(side[0], len[0]);
	if (side[1])
		parse_both(side[1], len[1]);

	memset(&f, 0, sizeof(f));
	memset(fst, 0, sizeof(fst));
	f.st = fst;
	f.proto = IPPROTO_TCP;
	window = size > HTTP_HEAD_HOLD ? FUZZ_STREAM_WIDE : FUZZ_STREAM_MAX;
	f.st[0].buf = malloc(window);
	f.st[1].buf = malloc(window);
	if (!f.st[0].buf || !f.st[1].buf || http_module.init(NULL, &state) < 0)
		abort();
	while (off[0] < len[0] || off[1] < len[1]) {
		for (int dir = 0; dir < 2; dir++) {
			size_t n;
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			n = 1 + x % (x & 0x100 ? 1500 : 16);
			if (n > len[dir] - off[dir])
				n = len[dir] - off[dir];
			/* now and then a FIN or a RST with the bytes, or alone
			 * (http_close: either side's head left open) */
			uint8_t fl = (x >> 20) % 16 == 0 ? TH_FIN : (x >> 20) % 16 == 1 ? TH_RST : 0;
			if (n)
				feed(state, &f, &out, dir, side[dir] + off[dir], n, fl);
			if ((x >> 24) % 16 == 0)
				feed(state, &f, &out, dir, NULL, 0, fl ? fl : TH_FIN);
			off[dir] += n;
		}
	}
	/* the flow ends with what is still open (on_flow_left) */
	struct pkt end;
	memset(&end, 0, sizeof(end));
	end.proto = IPPROTO_TCP;
	end.flow = &f;
	(void)http_module.on_flow_left(state, &f, &end, &out);
	/* as the core and the flow table do: the pending requests come back */
	http_module.on_flow_end(state, &f);
	if (http_pending_bytes(state) != 0)
		abort();
	free(f.app_state);
	free(f.st[0].buf);
	free(f.st[1].buf);
	http_module.fini(state);
	return 0;
}
