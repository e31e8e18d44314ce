/*
 * h2c.c - the HTTP/2 cleartext (prior knowledge) analyzer: frames walked in
 * both directions of a TCP flow through sensor/cursor.h, header blocks
 * decoded with libnghttp2's HPACK inflater, requests and responses emitted
 * with http.h's detail record. The rules and bounds are listed in h2c.h.
 *
 * A direction is read frame by frame from the flow's stream window: a
 * frame whose payload is not needed (DATA above all) is passed as its bytes
 * arrive, so the window never fills with a body; a SETTINGS frame is read
 * entry by entry and a header block fed to the inflater piece by piece as
 * their bytes arrive, so neither is held or copied. What was read is slid out of the window
 * (flow_stream_slide), so a long-lived connection is followed to its end.
 *
 * The inflaters are not in flow->app_state, which the flow table frees with
 * free(): they live in the module's slots (found ended when a new flow
 * needs one, or idle, not when the flow ends), each
 * tied to its flow by a ticket the flow's state keeps, and every byte
 * nghttp2 allocates for them is counted against the slot and the module
 * (the nghttp2_mem hooks), so the memory is bounded whatever the peer
 * sends. The requests waiting for their response hang off the flow's state
 * (pending.h), counted against the module's budget and given back by
 * h2c_flow_end, which the core calls before the flow table frees
 * app_state. Nothing here prints, judges or keeps a global.
 */
#include "h2c.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>
#include <sodium.h>

#include "../sensor/cursor.h"
#include "../sensor/flow.h"
#include "../sensor/record.h"
#include "../sensor/text.h"
#include "http.h"
#include "module.h"
#include "pending.h"
#include "proxyproto.h"

static const uint8_t preface[H2C_PREFACE_LEN] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

enum frame_type {
	FT_DATA = 0, FT_HEADERS = 1, FT_PRIORITY = 2, FT_RST_STREAM = 3, FT_SETTINGS = 4,
	FT_PUSH_PROMISE = 5, FT_PING = 6, FT_GOAWAY = 7, FT_WINDOW_UPDATE = 8,
	FT_CONTINUATION = 9,
};

enum frame_flag {
	FF_ACK = 0x01, FF_END_STREAM = 0x01, FF_END_HEADERS = 0x04, FF_PADDED = 0x08,
	FF_PRIORITY = 0x20,
};

enum { SET_HEADER_TABLE_SIZE = 1, SET_ENABLE_PUSH = 2, SET_MAX_FRAME_SIZE = 5 };

/* ---- per flow ------------------------------------------------------------- */

/* One SETTINGS of the peer waiting for this direction's ACK: the
 * SETTINGS_HEADER_TABLE_SIZE values it held (the smallest and the last;
 * has = 0 when none), and its last SETTINGS_ENABLE_PUSH (PUSH_*). */
struct h2c_table_set {
	uint8_t has;
	uint8_t push;
	uint32_t min, last;
};

enum { PUSH_UNSAID = 0, PUSH_OFF, PUSH_ON };

/* Where a header block's bytes stand among its representations (RFC 7541
 * 6), walked as they are fed (hpack_feed_walked). */
struct hpack_walk {
	uint8_t st;         /* enum walk_state */
	uint8_t what;       /* what the integer or string being read is */
	uint8_t shift;      /* the integer's continuation bits so far */
	uint8_t field;      /* a field began since the inflater's block began */
	uint8_t indexed;    /* the representation is a literal with incremental indexing */
	uint8_t huff;       /* the string being read is Huffman-coded */
	uint8_t ones;       /* ... the 1 bits it ends with so far (at most 255) */
	uint8_t drop;       /* ... its bytes are passed, not fed (enum walk_drop) */
	uint8_t empty;      /* the table is emptied when the representation ends */
	uint8_t held_n;     /* bytes of a string's length read, not yet fed */
	uint8_t held[6];    /* ... them (a prefix byte and 5 more: 32 bits) */
	uint32_t val;       /* the integer so far; W_BYTES: string bytes left */
};

struct h2c_dir {
	uint8_t stop;       /* nothing more is parsed in this direction */
	uint8_t table_lost; /* its inflater was made anew: the peer's table is unknown */
	uint32_t skip;      /* payload bytes of the current frame still to pass */
	uint32_t set_left;  /* bytes of the current SETTINGS still to read */
	/* the header block being read, frame by frame as its bytes come */
	uint8_t in_block;   /* a block is open (its END_HEADERS not yet read) */
	uint8_t in_frame;   /* ... inside one of its frames (else the next
			     * CONTINUATION's header is due) */
	uint8_t b_end;      /* that frame has END_HEADERS */
	uint8_t b_type;     /* FT_HEADERS or FT_PUSH_PROMISE */
	uint32_t b_sid;     /* the block's stream */
	uint32_t b_promised; /* PUSH_PROMISE: the promised stream */
	uint32_t b_frag;    /* fragment bytes of the frame still to decode */
	uint32_t b_pad;     /* its padding, passed after the fragment */
	uint64_t b_span;    /* the block's bytes so far, frame headers included */
	struct hpack_walk walk; /* the block's representations so far */
	struct h2c_table_set set_t; /* what the current SETTINGS said so far */
	uint32_t max_frame; /* largest frame it may send (the peer's SETTINGS) */
	uint32_t last_sid;  /* client: the highest stream it opened */
	uint32_t q_n;       /* the peer's SETTINGS not yet acknowledged */
	struct h2c_table_set q[H2C_SETTINGS_QUEUE];
};

/* Per flow, in flow->app_state: one flat allocation. */
struct h2c_flow {
	uint64_t ticket;    /* the slot holding our inflaters, while it says so */
	uint32_t slot;
	uint8_t lost;       /* the slot went to another flow */
	uint8_t push_off;   /* the server acknowledged the client's ENABLE_PUSH=0 */
	struct h2c_dir d[2];
	uint32_t p_next;    /* next pending slot to overwrite */
	/* the requests waiting for a final response (pending.h: key the
	 * stream id, tag the slot 0..H2C_PENDING_MAX-1 it holds; NULL when
	 * none): allocated as they come, counted against the module's
	 * budget, freed by h2c_flow_end when the flow ends */
	struct pend *pend;
};

/* ---- per module ------------------------------------------------------------ */

/* A header block being decoded: what its fields said beyond struct
 * http_head. */
struct h2c_block {
	unsigned pseudo;    /* pseudo-headers seen (PS_* bits) */
	int regular;        /* a regular field was seen */
	unsigned fields;    /* fields decoded */
	int status_ok;      /* a sound :status */
	char authority[HTTP_HOST_MAX];
	size_t authority_len;
};

/* The head of the block a direction is decoding (per slot: a block may
 * take many packets, other flows' blocks between them). */
struct h2c_decode {
	struct http_head head;
	struct h2c_block blk;
};

struct h2c_state;

struct h2c_slot {
	uint64_t ticket;    /* 0: free */
	uint64_t last_us;   /* packet time of the flow's latest packet */
	/* the flow holding the slot, compared, never followed but for its
	 * own fields: the flow table's flows stay in memory for the run, and
	 * one that ends has its app_state set to NULL */
	const struct flow *flow;
	const struct h2c_flow *fs;
	uint8_t blocks;     /* the flow began a header block */
	size_t heap;        /* bytes allocated by nghttp2 for this slot */
	struct h2c_state *ms;
	nghttp2_hd_inflater *inf[2];
	uint32_t bound[2];  /* the table bound each inflater holds to (table_apply) */
	struct h2c_decode *dec; /* [2], allocated with the slot's first flow, kept */
	/* the hooks, with this slot as their user data: nghttp2 1.52 keeps a
	 * pointer to them in the inflater (its manual says it does not), so
	 * they live as long as the slot */
	nghttp2_mem mem;
};

struct h2c_state {
	struct h2c_decode *dc; /* the direction being read: its slot's dec[dir] */
	char info[HTTP_INFO_MAX];
	uint64_t tickets;   /* tickets handed out */
	size_t heap;        /* bytes allocated by nghttp2, all slots */
	struct http_pair pair;   /* a pending request, copied in or out */
	struct pend_budget pend; /* every flow's pending requests: H2C_PENDING_BUDGET */
	uint64_t push_refused;   /* server header blocks of a push the client disabled */
	struct h2c_slot slots[H2C_FLOWS_MAX];
};

/* ---- counting allocator for nghttp2 ---------------------------------------- */

/* Each allocation carries its size in front, so that free can count it
 * back; 16 bytes keep the alignment malloc gives. */
#define ALLOC_HEAD 16

static void *h2c_malloc(size_t n, void *user)
{
	struct h2c_slot *sl = user;
	size_t total;
	uint8_t *b;

	if (n > H2C_HEAP_MAX)
		return NULL;
	total = n + ALLOC_HEAD;
	if (sl->heap + total > H2C_HEAP_MAX || sl->ms->heap + total > H2C_HEAP_TOTAL_MAX)
		return NULL;
	b = malloc(total);
	if (!b)
		return NULL;
	memcpy(b, &total, sizeof(total));
	sl->heap += total;
	sl->ms->heap += total;
	return b + ALLOC_HEAD;
}

static void h2c_free(void *ptr, void *user)
{
	struct h2c_slot *sl = user;
	uint8_t *b;
	size_t total;

	if (!ptr)
		return;
	b = (uint8_t *)ptr - ALLOC_HEAD;
	memcpy(&total, b, sizeof(total));
	sl->heap -= total;
	sl->ms->heap -= total;
	free(b);
}

static void *h2c_calloc(size_t nmemb, size_t size, void *user)
{
	void *p;

	if (size && nmemb > H2C_HEAP_MAX / size)
		return NULL;
	p = h2c_malloc(nmemb * size, user);
	if (p)
		memset(p, 0, nmemb * size);
	return p;
}

static void *h2c_realloc(void *ptr, size_t n, void *user)
{
	size_t old;
	void *p;

	if (!ptr)
		return h2c_malloc(n, user);
	memcpy(&old, (uint8_t *)ptr - ALLOC_HEAD, sizeof(old));
	old -= ALLOC_HEAD;
	p = h2c_malloc(n, user);
	if (!p)
		return NULL; /* ptr stays valid, as realloc leaves it */
	memcpy(p, ptr, old < n ? old : n);
	h2c_free(ptr, user);
	return p;
}

/* ---- slots ----------------------------------------------------------------- */

static void slot_release(struct h2c_slot *sl)
{
	for (int i = 0; i < 2; i++) {
		if (sl->inf[i])
			nghttp2_hd_inflate_del(sl->inf[i]);
		sl->inf[i] = NULL;
	}
	sl->ticket = 0;
}

/* Has the connection of sl's flow ended: the flow table ended the flow
 * (it no longer holds our state), or FIN both ways, or a RST? */
static int slot_ended(const struct h2c_slot *sl)
{
	const struct flow *f = sl->flow;

	if (!f || f->app != APP_HTTP2 || f->app_state != sl->fs)
		return 1;
	return (f->state & (FLOW_RST | FLOW_RST_INIT)) || (f->fin_dirs & 3) == 3;
}

/*
 * The slot for a new flow: a free one, else one whose connection ended,
 * else the one seen least recently among the flows that never began a
 * header block (the connections that only opened), else the one seen least
 * recently (at the same packet time, the one that took its slot first).
 */
static struct h2c_slot *slot_pick(struct h2c_state *ms)
{
	struct h2c_slot *best = NULL;

	for (size_t i = 0; i < H2C_FLOWS_MAX; i++) {
		struct h2c_slot *sl = &ms->slots[i];
		if (!sl->ticket)
			return sl;
	}
	for (size_t i = 0; i < H2C_FLOWS_MAX; i++) {
		struct h2c_slot *sl = &ms->slots[i];
		if (slot_ended(sl))
			return sl;
		if (!best || sl->blocks < best->blocks ||
		    (sl->blocks == best->blocks &&
		     (sl->last_us < best->last_us ||
		      (sl->last_us == best->last_us && sl->ticket < best->ticket))))
			best = sl; /* at the same time, the flow that came first */
	}
	return best;
}

/* Give fs (of flow f) a slot with two fresh inflaters. 0, or -ENOMEM. */
static int slot_take(struct h2c_state *ms, const struct flow *f, struct h2c_flow *fs,
		     uint64_t now_us)
{
	struct h2c_slot *sl = slot_pick(ms);

	slot_release(sl);
	if (!sl->dec) {
		sl->dec = calloc(2, sizeof(*sl->dec));
		if (!sl->dec)
			return -ENOMEM;
	}
	for (int i = 0; i < 2; i++) {
		if (nghttp2_hd_inflate_new2(&sl->inf[i], &sl->mem) != 0) {
			sl->inf[i] = NULL;
			slot_release(sl);
			return -ENOMEM;
		}
	}
	sl->bound[0] = sl->bound[1] = H2C_TABLE_DEFAULT;
	sl->ticket = ++ms->tickets;
	sl->last_us = now_us;
	sl->flow = f;
	sl->fs = fs;
	sl->blocks = 0;
	fs->ticket = sl->ticket;
	fs->slot = (uint32_t)(sl - ms->slots);
	return 0;
}

/* fs's slot when it still holds fs's inflaters, else NULL. */
static struct h2c_slot *slot_of(struct h2c_state *ms, const struct h2c_flow *fs)
{
	struct h2c_slot *sl;

	if (fs->slot >= H2C_FLOWS_MAX)
		return NULL;
	sl = &ms->slots[fs->slot];
	return sl->ticket == fs->ticket ? sl : NULL;
}

/* ---- header fields ----------------------------------------------------------- */

enum pseudo_bits {
	PS_METHOD = 1u << 0, PS_PATH = 1u << 1, PS_AUTHORITY = 1u << 2, PS_SCHEME = 1u << 3,
	PS_STATUS = 1u << 4, PS_PROTOCOL = 1u << 5,
};

static void note(struct http_head *h, const char *why)
{
	if (h->malformed)
		return;
	h->malformed = 1;
	snprintf(h->why, sizeof(h->why), "%s", why);
}

static size_t put(struct http_head *h, char *dst, size_t cap, const uint8_t *s, size_t n)
{
	int cut = 0;
	size_t k = text_escape(dst, cap, s, n, &cut);

	h->cut |= cut;
	return k;
}

/* Does name[0..n) equal lit (lowercase), ASCII case-insensitively? */
static int name_is(const uint8_t *name, size_t n, const char *lit)
{
	size_t m = strlen(lit);

	if (n != m)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int b = name[i];
		if (b >= 'A' && b <= 'Z')
			b += 'a' - 'A';
		if (b != (uint8_t)lit[i])
			return 0;
	}
	return 1;
}

/* content-length: 1*DIGIT, at most 18 significant; -1 when not. */
static int64_t digits(const uint8_t *v, size_t n)
{
	int64_t x = 0;
	int sig = 0;

	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		if ((x || v[i] != '0') && ++sig > 18)
			return -1;
		x = x * 10 + (v[i] - '0');
	}
	return x;
}

/* A pseudo-header (name starts with ':'). */
static void pseudo_field(struct h2c_state *ms, const nghttp2_nv *nv)
{
	struct http_head *h = &ms->dc->head;
	struct h2c_block *b = &ms->dc->blk;
	const uint8_t *v = nv->value;
	size_t n = nv->valuelen;
	unsigned bit;

	if (b->regular)
		note(h, "pseudo-header after a regular field");
	if (name_is(nv->name, nv->namelen, ":method"))
		bit = PS_METHOD;
	else if (name_is(nv->name, nv->namelen, ":path"))
		bit = PS_PATH;
	else if (name_is(nv->name, nv->namelen, ":authority"))
		bit = PS_AUTHORITY;
	else if (name_is(nv->name, nv->namelen, ":scheme"))
		bit = PS_SCHEME;
	else if (name_is(nv->name, nv->namelen, ":protocol"))
		bit = PS_PROTOCOL;
	else if (name_is(nv->name, nv->namelen, ":status"))
		bit = PS_STATUS;
	else {
		note(h, "unknown pseudo-header");
		return;
	}
	if (b->pseudo & bit) {
		note(h, "repeated pseudo-header");
		return;
	}
	b->pseudo |= bit;
	if ((bit == PS_STATUS) != (h->response != 0)) {
		note(h, h->response ? "request pseudo-header in a response"
				    : ":status in a request");
		return;
	}
	switch (bit) {
	case PS_METHOD:
		put(h, h->method, sizeof(h->method), v, n);
		if (n > HTTP_METHOD_LEN)
			note(h, "method longer than 32 bytes");
		break;
	case PS_PATH:
		h->uri_len = put(h, h->uri, sizeof(h->uri), v, n);
		break;
	case PS_AUTHORITY:
		b->authority_len = put(h, b->authority, sizeof(b->authority), v, n);
		break;
	case PS_STATUS:
		if (n == 3 && v[0] >= '1' && v[0] <= '9' && v[1] >= '0' && v[1] <= '9' &&
		    v[2] >= '0' && v[2] <= '9') {
			h->status = (uint16_t)((v[0] - '0') * 100 + (v[1] - '0') * 10 + (v[2] - '0'));
			h->have_line = 1;
			b->status_ok = 1;
		} else {
			note(h, "bad :status");
		}
		break;
	default:
		break;
	}
}

static void join(struct http_head *h, char *dst, size_t cap, const uint8_t *v, size_t n)
{
	size_t l = strlen(dst);

	if (l) {
		if (cap - l < 3) {
			h->cut = 1;
			return;
		}
		memcpy(dst + l, ", ", 3);
		l += 2;
	}
	put(h, dst + l, cap - l, v, n);
}

/* A regular field: the ones http.h's record holds. */
static void regular_field(struct h2c_state *ms, const nghttp2_nv *nv)
{
	struct http_head *h = &ms->dc->head;
	const uint8_t *name = nv->name, *v = nv->value;
	size_t nl = nv->namelen, n = nv->valuelen;

	ms->dc->blk.regular = 1;
	for (size_t i = 0; i < nl; i++)
		if (name[i] >= 'A' && name[i] <= 'Z') {
			note(h, "uppercase header field name");
			break;
		}
	/* malformed (RFC 9113 8.2.1, 8.2.2), which nginx or nghttpd refuse
	 * (GOAWAY or RST_STREAM: pcaps/review20/h2c), nghttp2's inflater
	 * takes, and the sensor reports, marked */
	if (nl == 0)
		note(h, "empty header field name");
	if (memchr(v, '\0', n) || memchr(v, '\r', n) || memchr(v, '\n', n))
		note(h, "NUL, CR or LF in a field value");
	if (name_is(name, nl, "connection") || name_is(name, nl, "keep-alive") ||
	    name_is(name, nl, "proxy-connection") || name_is(name, nl, "transfer-encoding") ||
	    name_is(name, nl, "upgrade") ||
	    (name_is(name, nl, "te") && !(n == 8 && memcmp(v, "trailers", 8) == 0)))
		note(h, "connection-specific header field");
	if (name_is(name, nl, "host")) {
		if (h->have_host)
			note(h, "several host fields");
		else
			h->host_len = put(h, h->host, sizeof(h->host), v, n);
		h->have_host = 1;
	} else if (name_is(name, nl, "user-agent")) {
		if (!h->user_agent[0])
			put(h, h->user_agent, sizeof(h->user_agent), v, n);
	} else if (name_is(name, nl, "upgrade")) {
		join(h, h->upgrade, sizeof(h->upgrade), v, n);
	} else if (name_is(name, nl, "connection")) {
		join(h, h->connection, sizeof(h->connection), v, n);
	} else if (name_is(name, nl, "content-length")) {
		int64_t cl = digits(v, n);
		if (cl < 0 || (h->content_length >= 0 && h->content_length != cl))
			note(h, "bad content-length");
		else
			h->content_length = cl;
	} else if (name_is(name, nl, "server")) {
		if (!h->server[0])
			put(h, h->server, sizeof(h->server), v, n);
	} else if (name_is(name, nl, "location")) {
		if (!h->location[0])
			put(h, h->location, sizeof(h->location), v, n);
	} else if (name_is(name, nl, "metadata")) {
		h->meta |= HTTP_META;
	} else if (name_is(name, nl, "metadata-flavor")) {
		h->meta |= HTTP_META_FLAVOR;
	} else if (name_is(name, nl, "x-aws-ec2-metadata-token")) {
		h->meta |= HTTP_META_TOKEN; /* never the token itself */
	} else if (name_is(name, nl, "x-aws-ec2-metadata-token-ttl-seconds")) {
		if (!(h->meta & HTTP_META_TTL))
			put(h, h->ttl, sizeof(h->ttl), v, n);
		h->meta |= HTTP_META_TTL;
	}
}

static void on_field(struct h2c_state *ms, const nghttp2_nv *nv)
{
	ms->dc->blk.fields++;
	if (nv->namelen && nv->name[0] == ':')
		pseudo_field(ms, nv);
	else
		regular_field(ms, nv);
}

static void block_reset(struct h2c_state *ms, int response)
{
	memset(&ms->dc->head, 0, sizeof(ms->dc->head));
	ms->dc->head.response = response;
	ms->dc->head.content_length = -1;
	snprintf(ms->dc->head.version, sizeof(ms->dc->head.version), "HTTP/2");
	memset(&ms->dc->blk, 0, sizeof(ms->dc->blk));
}

/* The block's fields are all in: what a request's record takes from its
 * pseudo-headers. */
static void block_finish(struct h2c_state *ms)
{
	struct http_head *h = &ms->dc->head;
	struct h2c_block *b = &ms->dc->blk;

	if (h->response)
		return;
	h->have_line = (b->pseudo & PS_METHOD) != 0;
	if (b->pseudo & PS_AUTHORITY) {
		/* :authority stands for Host (RFC 9113 8.3.1) */
		h->host_len = http_copy_escaped(h->host, sizeof(h->host), b->authority, NULL);
		h->have_host = 1;
	}
	if (!(b->pseudo & PS_METHOD))
		note(h, "no :method");
	if (!(b->pseudo & PS_PATH)) {
		if (strcmp(h->method, "CONNECT") == 0 && (b->pseudo & PS_AUTHORITY))
			h->uri_len = http_copy_escaped(h->uri, sizeof(h->uri), b->authority, NULL);
		else
			note(h, "no :path");
	}
}

/*
 * Feed in[0..n) of a header block to inf, fields to ms->dc->head; last when it
 * is the block's last fragment. 0, or -1 on an HPACK error (or nghttp2's
 * allocation refused).
 */
static int hpack_feed(struct h2c_state *ms, nghttp2_hd_inflater *inf, const uint8_t *in,
		      size_t n, int last)
{
	static const uint8_t none[1];

	if (!in)
		in = none; /* nghttp2 reads nothing with n 0, but wants a pointer */
	for (;;) {
		nghttp2_nv nv;
		int fl = 0;
		ssize_t rv = nghttp2_hd_inflate_hd2(inf, &nv, &fl, in, n, last);

		if (rv < 0 || (size_t)rv > n)
			return -1;
		in += rv;
		n -= (size_t)rv;
		if (fl & NGHTTP2_HD_INFLATE_EMIT)
			on_field(ms, &nv);
		if (fl & NGHTTP2_HD_INFLATE_FINAL) {
			nghttp2_hd_inflate_end_headers(inf);
			return 0;
		}
		if (!(fl & NGHTTP2_HD_INFLATE_EMIT) && n == 0)
			return last ? -1 : 0;
	}
}

/* ---- HPACK representations walked ----------------------------------------- */

/*
 * nghttp2's inflater refuses some header blocks nginx (1.22) serves, and
 * once it failed it refuses every later block. To read what nginx reads,
 * the block's bytes are walked representation by representation (their
 * lengths only: an integer with its continuation bytes, a string by its
 * length, Huffman-coded or not, through the cursor, in a few bytes of
 * state per direction, so across pieces and CONTINUATIONs) before they
 * are fed (hpack_feed_walked), and three things are done about them:
 *
 * - A dynamic table size update after a block's first field (RFC 7541 4.2
 *   forbids it; nginx, ngx_http_v2_state_header_block, applies it in place
 *   and serves the request): the block is cut before it, what comes before
 *   ended as a block of its own for nghttp2 (in_final,
 *   nghttp2_hd_inflate_end_headers), so the update opens the next one,
 *   where nghttp2 takes it and changes the table there, as nginx does.
 * - A string longer than H2C_STRING_MAX, which nghttp2 refuses
 *   (NGHTTP2_HD_MAX_NV) and nginx takes with large_client_header_buffers
 *   big enough: its length is held back until it is whole (at most 6
 *   bytes, kept here across pieces), and nghttp2 gets an empty string
 *   instead, the string's bytes being passed; the head is marked. Its
 *   entry, for a literal with incremental indexing, is larger than any
 *   table (name, value and 32 bytes: over H2C_TABLE_MAX), so the peer
 *   empties its table on adding it (RFC 7541 4.4): nghttp2's is emptied
 *   too when the representation ends, by two size updates (to 0, then back
 *   to the size it had) in a block of their own.
 * - A Huffman string that ends with 8 to 29 bits of 1s, padding longer
 *   than RFC 7541 5.2 allows, which nghttp2 refuses and nginx decodes (its
 *   decoder takes any run of 1s short of EOS at a string's end): each
 *   Huffman string is fed on its own, and when nghttp2 fails on its last
 *   bytes with such an end, its field is lost (marked) and the inflater is
 *   made anew (hpack_renew) for the rest of the block and those after.
 *   Its table is then empty where the peer's holds what it held: unless
 *   that was nothing and the lost field was not to be indexed, every later
 *   block of the direction is marked "HPACK table unknown" (a block
 *   naming an entry the new table lacks is an HPACK error, and stops the
 *   direction; entries added since are at the same indexes in both).
 *
 * An integer nghttp2 would refuse (over 32 bits) ends the walk: nghttp2
 * then reports the error itself.
 */
enum walk_state { W_OP = 0, W_INT, W_STR, W_BYTES, W_LOST };
enum walk_what { WW_INDEX = 0, WW_SIZE, WW_NAME_INDEX, WW_NAME, WW_VALUE };
enum walk_drop { WD_NO = 0, WD_LONG, WD_LOST };
/* where walk_block stopped */
enum walk_stop { WS_END = 0, WS_UPDATE, WS_LENGTH, WS_FEED, WS_HUFF_END, WS_EMPTY };

/* The integer (its value in w->val) is read: what follows it. */
static void walk_int_done(struct hpack_walk *w)
{
	switch (w->what) {
	case WW_NAME_INDEX:
		w->st = W_STR; /* a new name (index 0), else the value */
		w->what = w->val == 0 ? WW_NAME : WW_VALUE;
		break;
	default:
		w->st = W_OP;  /* an indexed field, a size update: whole */
		break;
	}
}

/* An integer with a prefix of bits bits starts in byte b. */
static void walk_int(struct hpack_walk *w, uint8_t b, unsigned bits)
{
	uint32_t mask = (1u << bits) - 1;

	w->val = b & mask;
	w->shift = 0;
	if (w->val < mask)
		walk_int_done(w);
	else
		w->st = W_INT;
}

/* A string is passed: the value after a name, or the next representation. */
static void walk_str_done(struct hpack_walk *w)
{
	w->st = w->what == WW_NAME ? W_STR : W_OP;
	w->what = WW_VALUE;
	w->drop = WD_NO;
}

/*
 * Walk in[0..n) on from w, up to the first place where the feeder has
 * something to do (*why, enum walk_stop): a size update after a field
 * begins, a string's length over one byte (or of a string to drop) begins
 * (read by walk_length), a Huffman string begins (what is before it is fed
 * apart) or ended, a representation that
 * empties the table ended. Returns its offset (w is left there), else n
 * (WS_END). A string's bytes to drop (w->drop) are the feeder's, never
 * walked here. Each turn takes a byte or ends a string: bounded by 2n + 1.
 */
static size_t walk_block(struct hpack_walk *w, const uint8_t *in, size_t n, int *why)
{
	struct cur c = cur_init(in, n);

	*why = WS_END;
	for (;;) {
		uint8_t b;
		size_t k;

		if (w->st == W_BYTES && w->val == 0) {
			/* a string ended (or was empty) */
			int huff = w->huff;
			walk_str_done(w);
			if (huff) {
				*why = WS_HUFF_END;
				return n - cur_left(&c);
			}
			if (w->st == W_OP && w->empty) {
				*why = WS_EMPTY;
				return n - cur_left(&c);
			}
			continue;
		}
		if (!cur_has(&c, 1))
			return n;
		switch (w->st) {
		case W_OP: {
			struct cur peek = c;
			b = cur_u8(&peek);
			if ((b & 0xe0) == 0x20 && w->field) {
				*why = WS_UPDATE;
				return n - cur_left(&c);
			}
			c = peek;
			if ((b & 0xe0) == 0x20) {
				w->what = WW_SIZE;
				walk_int(w, b, 5);
			} else {
				w->field = 1;
				w->what = b & 0x80 ? WW_INDEX : WW_NAME_INDEX;
				w->indexed = (b & 0xc0) == 0x40;
				/* indexed; literal with incremental indexing;
				 * without indexing, or never indexed */
				walk_int(w, b, b & 0x80 ? 7 : b & 0x40 ? 6 : 4);
			}
			break;
		}
		case W_INT:
			b = cur_u8(&c);
			if (w->shift > 28 || (uint64_t)w->val + ((uint64_t)(b & 0x7f) << w->shift) >
						     UINT32_MAX) {
				w->st = W_LOST;
				return n;
			}
			w->val += (uint32_t)(b & 0x7f) << w->shift;
			w->shift += 7;
			if (!(b & 0x80))
				walk_int_done(w);
			break;
		case W_STR: {
			/* a length in one byte (under 127) is fed as it is; a
			 * longer one, or a string to drop, is the feeder's */
			struct cur peek = c;
			b = cur_u8(&peek);
			if (w->drop || (b & 0x7f) == 0x7f) {
				*why = WS_LENGTH;
				return n - cur_left(&c);
			}
			c = peek;
			w->huff = b >> 7;
			w->val = b & 0x7f;
			w->ones = 0;
			w->st = W_BYTES;
			if (w->huff && w->val) {
				/* what comes before a Huffman string is fed apart,
				 * so that an error on the string's bytes is its own */
				*why = WS_FEED;
				return n - cur_left(&c);
			}
			break;
		}
		case W_BYTES:
			if (w->drop) {
				/* the feeder's (it passes them before walking) */
				*why = WS_LENGTH;
				return n - cur_left(&c);
			}
			if (!w->huff) {
				k = cur_left(&c) < w->val ? cur_left(&c) : w->val;
				cur_skip(&c, k);
				w->val -= (uint32_t)k;
				break;
			}
			/* byte by byte: the 1 bits it ends with */
			b = cur_u8(&c);
			w->val--;
			if (b == 0xff) {
				w->ones = w->ones > 255 - 8 ? 255 : (uint8_t)(w->ones + 8);
			} else {
				w->ones = 0;
				while (b & 1) {
					w->ones++;
					b >>= 1;
				}
			}
			break;
		default:
			return n;
		}
	}
}

/*
 * Read a string's length (RFC 7541 5.2: the Huffman bit, a 7-bit prefix)
 * from *in, into w->held, across pieces. 1 when it is whole (w->val, w->huff),
 * 0 when the piece ended first (all of it taken), -1 when it is longer than
 * 32 bits (nghttp2 refuses it).
 */
static int walk_length(struct hpack_walk *w, const uint8_t **in, size_t *n)
{
	while (*n) {
		uint8_t b = **in;

		if (w->held_n >= sizeof(w->held))
			return -1;
		w->held[w->held_n++] = b;
		(*in)++;
		(*n)--;
		if (w->held_n == 1) {
			w->huff = b >> 7;
			w->val = b & 0x7f;
			w->shift = 0;
			if (w->val < 0x7f)
				return 1;
			continue;
		}
		if (w->shift > 28 || (uint64_t)w->val + ((uint64_t)(b & 0x7f) << w->shift) > UINT32_MAX)
			return -1;
		w->val += (uint32_t)(b & 0x7f) << w->shift;
		w->shift += 7;
		if (!(b & 0x80))
			return 1;
	}
	return 0;
}

/* An HPACK integer of value v with a prefix of bits bits and flags first
 * into out (at least 6 bytes); its length. */
static size_t hpack_int(uint8_t *out, uint32_t v, unsigned bits, uint8_t first)
{
	uint32_t mask = (1u << bits) - 1;
	size_t k = 0;

	if (v < mask) {
		out[k++] = (uint8_t)(first | v);
		return k;
	}
	out[k++] = (uint8_t)(first | mask);
	v -= mask;
	while (v >= 128) {
		out[k++] = (uint8_t)(0x80 | (v & 0x7f));
		v >>= 7;
	}
	out[k++] = (uint8_t)v;
	return k;
}

/* End nghttp2's block at this representation's end, and empty its table
 * as the peer does on an entry larger than the table: a block of two size
 * updates, to 0 and back to the size it had. 0, or -1. */
static int hpack_empty(struct h2c_state *ms, nghttp2_hd_inflater *inf)
{
	uint8_t syn[1 + 6];
	size_t k = 0;
	uint32_t cur = (uint32_t)nghttp2_hd_inflate_get_max_dynamic_table_size(inf);

	if (hpack_feed(ms, inf, NULL, 0, 1) < 0)
		return -1;
	syn[k++] = 0x20;
	k += hpack_int(syn + k, cur, 5, 0x20);
	return hpack_feed(ms, inf, syn, k, 1);
}

/* Make direction dir's inflater anew after it failed, bound as the old one
 * was (its table bound, and the size the peer's encoder last set). 0, or
 * -1 (nghttp2's memory refused: the slot keeps no inflater for dir). */
static int hpack_renew(struct h2c_state *ms, struct h2c_slot *sl, int dir)
{
	uint8_t syn[6];
	uint32_t cur = (uint32_t)nghttp2_hd_inflate_get_max_dynamic_table_size(sl->inf[dir]);

	nghttp2_hd_inflate_del(sl->inf[dir]);
	sl->inf[dir] = NULL;
	if (nghttp2_hd_inflate_new2(&sl->inf[dir], &sl->mem) != 0) {
		sl->inf[dir] = NULL;
		return -1;
	}
	nghttp2_hd_inflate_change_table_size(sl->inf[dir], sl->bound[dir]);
	return hpack_feed(ms, sl->inf[dir], syn, hpack_int(syn, cur, 5, 0x20), 1);
}

/*
 * Feed in[0..n) of the block direction dir is reading (last: the block's
 * last bytes) to its inflater, as the walk above says. 0, or -1 on an
 * HPACK error (the inflater may then be gone: sl->inf[dir] NULL).
 */
static int hpack_feed_walked(struct h2c_state *ms, struct h2c_dir *d, struct h2c_slot *sl,
			     int dir, const uint8_t *in, size_t n, int last)
{
	struct hpack_walk *w = &d->walk;
	struct http_head *h = &ms->dc->head;

	/* each turn takes at least one byte, or a stop the next turn passes,
	 * or returns (WS_END, a string or length the piece ends in): bounded
	 * by 2n + 2 */
	for (;;) {
		nghttp2_hd_inflater *inf = sl->inf[dir];
		int why, r;
		size_t k;

		if (w->st == W_BYTES && w->drop) {
			/* a string passed, not fed */
			k = n < w->val ? n : w->val;
			in += k;
			n -= k;
			w->val -= (uint32_t)k;
			if (w->val)
				return last ? -1 : 0; /* the block ends inside it */
			walk_str_done(w);
			if (w->st == W_OP && w->empty) {
				w->empty = 0;
				w->field = 0;
				if (hpack_empty(ms, inf) < 0)
					return -1;
			}
			continue;
		}
		if (w->st == W_STR) {
			r = walk_length(w, &in, &n);
			if (r == 0 && !last)
				return 0; /* held until the rest comes */
			if (r <= 0) {
				/* over 32 bits, or the block ends in it: nghttp2's error */
				w->st = W_LOST;
				if (hpack_feed(ms, inf, w->held, w->held_n, 0) < 0)
					return -1;
				w->held_n = 0;
				continue;
			}
			if (w->drop == WD_LOST) {
				/* the value of a name lost with the old inflater */
				w->st = W_BYTES;
			} else if (w->val > H2C_STRING_MAX) {
				static const uint8_t empty_str[1] = {0};
				note(h, "header field longer than 65536 bytes not decoded");
				if (hpack_feed(ms, inf, empty_str, 1, 0) < 0)
					return -1;
				w->drop = WD_LONG;
				if (w->indexed)
					w->empty = 1;
				w->st = W_BYTES;
			} else {
				if (hpack_feed(ms, inf, w->held, w->held_n, 0) < 0)
					return -1;
				w->st = W_BYTES;
				w->ones = 0;
			}
			w->held_n = 0;
			if (w->val == 0 && w->drop) {
				/* nothing to pass (an empty value after a lost name) */
				walk_str_done(w);
			}
			continue; /* an empty string fed: the walk ends it */
		}
		k = walk_block(w, in, n, &why);
		if (why == WS_END)
			return hpack_feed(ms, inf, in, n, last);
		if (why == WS_UPDATE) {
			/* the fields before the update are a block to nghttp2,
			 * and the update opens the next */
			if (hpack_feed(ms, inf, in, k, 1) < 0)
				return -1;
			note(h, "dynamic table size update after a field");
			w->field = 0;
		} else if (why == WS_LENGTH || why == WS_FEED) {
			if (hpack_feed(ms, inf, in, k, 0) < 0)
				return -1;
		} else if (why == WS_HUFF_END) {
			/* the string's bytes (or its last ones) alone; the
			 * block's end, if here, is fed by the next turn */
			if (hpack_feed(ms, inf, in, k, 0) < 0) {
				if (w->ones < 8 || w->ones >= 30)
					return -1; /* bad Huffman to nginx too */
				note(h, "Huffman padding longer than 7 bits");
				if (nghttp2_hd_inflate_get_num_table_entries(inf) > H2C_STATIC_ENTRIES ||
				    w->indexed)
					d->table_lost = 1;
				if (hpack_renew(ms, sl, dir) < 0)
					return -1;
				w->field = 0;
				w->empty = 0; /* the new table is empty */
				if (w->st == W_STR)
					w->drop = WD_LOST; /* it was the name: its value goes too */
			}
			if (w->st == W_OP && w->empty) {
				w->empty = 0;
				w->field = 0;
				if (hpack_empty(ms, sl->inf[dir]) < 0)
					return -1;
			}
		} else {
			/* WS_EMPTY: the representation that empties the table ended */
			if (hpack_feed(ms, inf, in, k, 0) < 0)
				return -1;
			w->empty = 0;
			w->field = 0;
			if (hpack_empty(ms, inf) < 0)
				return -1;
		}
		in += k;
		n -= k;
	}
}

/* ---- frames ----------------------------------------------------------------- */

struct frame {
	uint32_t len;
	uint8_t type, flags;
	uint32_t sid;
};

/* The 9-byte frame header at c; 0, or -1 when not all there. */
static int frame_head(struct cur *c, struct frame *fr)
{
	fr->len = cur_be24(c);
	fr->type = cur_u8(c);
	fr->flags = cur_u8(c);
	fr->sid = cur_be32(c) & 0x7fffffffu;
	return c->err ? -1 : 0;
}

/* ---- pairing ------------------------------------------------------------------ */

/* Remember a request for its response: in the lowest free slot, else over
 * the slot p_next (the slots taken in turn). Not remembered (counted) when
 * the module's budget is full; an overwritten request is then kept. */
static void pending_push(struct h2c_state *ms, struct h2c_flow *fs, uint32_t sid,
			 const struct http_head *h)
{
	struct http_pair *q = &ms->pair;
	struct pend_entry e;
	unsigned used = 0, slot = 0, n = pend_count(fs->pend);
	int drop = -1;

	http_copy_escaped(q->method, sizeof(q->method), h->method, NULL);
	http_copy_escaped(q->host, sizeof(q->host), h->host, NULL);
	http_copy_escaped(q->uri, sizeof(q->uri), h->uri, NULL);
	for (unsigned i = 0; pend_at(fs->pend, i, &e); i++) {
		used |= 1u << e.tag;
		if (n >= H2C_PENDING_MAX && e.tag == fs->p_next)
			drop = (int)i;
	}
	if (n < H2C_PENDING_MAX) {
		while (used & (1u << slot))
			slot++;
	} else {
		slot = fs->p_next;
	}
	if (pend_push(&fs->pend, &ms->pend, drop, sid, (uint8_t)slot, 0, q->method, q->host,
		      q->uri) == 0 && drop >= 0)
		fs->p_next = (fs->p_next + 1) % H2C_PENDING_MAX;
}

/* The pending request of stream sid, copied into ms->pair, and its index
 * in *at; NULL when none. */
static const struct http_pair *pending_find(struct h2c_state *ms, struct h2c_flow *fs,
					    uint32_t sid, unsigned *at)
{
	struct pend_entry e;

	for (unsigned i = 0; pend_at(fs->pend, i, &e); i++) {
		if (e.key != sid)
			continue;
		/* pushed cut to these sizes: copied whole */
		http_copy_escaped(ms->pair.method, sizeof(ms->pair.method), e.method, NULL);
		http_copy_escaped(ms->pair.host, sizeof(ms->pair.host), e.host, NULL);
		http_copy_escaped(ms->pair.uri, sizeof(ms->pair.uri), e.uri, NULL);
		*at = i;
		return &ms->pair;
	}
	return NULL;
}

/* ---- events ------------------------------------------------------------------- */

static int emit_head(struct h2c_state *ms, const struct pkt *p, struct emit *out,
		     const struct http_pair *pair, uint32_t size, unsigned flags)
{
	const struct http_head *h = &ms->dc->head;
	struct rec r;

	rec_init(&r, ms->info, sizeof(ms->info));
	http_head_record(h, pair, &r);
	struct obs ob = {
		.kind = h->response ? OBS_HTTP_RESPONSE : OBS_HTTP_REQUEST,
		.pkt = p,
		.name = h->response ? (pair ? pair->host : "") : h->host,
		.name_len = h->response ? (pair ? strlen(pair->host) : 0) : h->host_len,
		.aux = h->response ? (pair ? pair->uri : "") : h->uri,
		.aux_len = h->response ? (pair ? strlen(pair->uri) : 0) : h->uri_len,
		.type = h->response ? h->status : 0,
		.size = size,
		.flags = flags | (h->malformed ? OBS_F_MALFORMED : 0),
		.info = ms->info,
		.info_len = r.len,
	};
	return out->obs(out, &ob);
}

/*
 * A server's PUSH_PROMISE block was decoded: the request the server
 * promises to answer on stream promised (RFC 9113 8.4), as if the client
 * had sent it. Its event is a request's, seen from the client's side (p
 * turned around: src is the client, as in every request event), and it is
 * remembered for the pushed response on the promised stream, which pairs
 * with it. A promised id that is not a server's (odd, or 0) is malformed
 * and not remembered.
 */
static int promise_event(struct h2c_state *ms, struct h2c_flow *fs, const struct pkt *p,
			 struct emit *out, uint32_t promised, uint32_t size, unsigned flags)
{
	struct pkt q = pkt_turned(p);

	block_finish(ms);
	if (promised == 0 || (promised & 1))
		note(&ms->dc->head, "promised stream id not even");
	else
		pending_push(ms, fs, promised, &ms->dc->head);
	return emit_head(ms, &q, out, NULL, size, flags);
}

/*
 * A server's PUSH_PROMISE, or a response on a stream only a push opens
 * (even), after the server acknowledged the client's SETTINGS_ENABLE_PUSH
 * = 0: a connection error to the client (RFC 9113 6.5.2, 8.4), which
 * closes the connection and requests nothing. No event (a request made up
 * by the server would be noise, or worse: a host the client never asked
 * for), the block counted (module.h2c.push_refused) and malformed; it was
 * decoded all the same, so the server's table stays in step.
 */
static int push_refused(struct h2c_state *ms, struct http_head *h)
{
	ms->push_refused++;
	note(h, "server push the client disabled");
	return 0;
}

/* A header block of stream sid was decoded (whole, or as far as it went:
 * flags). Emits its event when it is a request or a response (or a
 * promised request). */
static int block_event(struct h2c_state *ms, struct h2c_flow *fs, const struct pkt *p,
		       struct emit *out, int dir, uint8_t type, uint32_t sid, uint32_t promised,
		       uint32_t size, unsigned flags)
{
	struct http_head *h = &ms->dc->head;

	if (type == FT_PUSH_PROMISE) {
		if (dir == 0)
			return 0; /* a client cannot push (RFC 9113 8.4): no event */
		if (fs->push_off)
			return push_refused(ms, h);
		return promise_event(ms, fs, p, out, promised, size, flags);
	}
	if (dir == 0) {
		if ((sid & 1) == 0) {
			note(h, "client stream id even");
			return 0; /* counted malformed by the caller */
		}
		if (sid <= fs->d[0].last_sid)
			return 0; /* trailers, or a stream reused */
		fs->d[0].last_sid = sid;
		block_finish(ms);
		pending_push(ms, fs, sid, h);
		return emit_head(ms, p, out, NULL, size, flags);
	}
	if (!(ms->dc->blk.pseudo & PS_STATUS))
		return 0; /* trailers */
	if ((sid & 1) == 0 && fs->push_off)
		return push_refused(ms, h); /* the response of a push that cannot be */
	unsigned at = 0;
	const struct http_pair *q = pending_find(ms, fs, sid, &at);
	int e = emit_head(ms, p, out, q, size, flags);
	if (q && ms->dc->blk.status_ok && h->status >= 200)
		pend_remove(&fs->pend, &ms->pend, at); /* a final response uses the request up */
	return e;
}

/* ---- the stream ----------------------------------------------------------------- */

enum { STEP_OK = 0, STEP_MORE, STEP_BAD };

struct step {
	struct h2c_state *ms;
	struct h2c_flow *fs;
	struct h2c_slot *sl;
	const struct pkt *p;
	struct emit *out;
	int dir;
	int final;  /* no more bytes will come into the window */
	int ret;    /* the packet's result so far */
	int err;    /* < 0: emit failed */
};

static int worse(int a, int b)
{
	if (a == MOD_MALFORMED || b == MOD_MALFORMED)
		return MOD_MALFORMED;
	if (a == MOD_TRUNCATED || b == MOD_TRUNCATED)
		return MOD_TRUNCATED;
	return MOD_OK;
}

/* The block direction dir was reading is over (whole, or as far as it
 * went: flags): its event when it is a request or a response. */
static int block_done(struct step *st, unsigned flags)
{
	struct h2c_dir *d = &st->fs->d[st->dir];
	uint32_t size = d->b_span > UINT32_MAX ? UINT32_MAX : (uint32_t)d->b_span;
	int e;

	d->in_block = d->in_frame = 0;
	e = block_event(st->ms, st->fs, st->p, st->out, st->dir, d->b_type, d->b_sid,
			d->b_promised, size, flags);
	if (e < 0) {
		st->err = e;
		return STEP_BAD;
	}
	st->ret = worse(st->ret, st->ms->dc->head.malformed ? MOD_MALFORMED
				 : (flags & OBS_F_TRUNCATED) ? MOD_TRUNCATED : MOD_OK);
	return STEP_OK;
}

/* Broken framing inside or at the start of a block: counted, no event
 * (the peer ends the connection: RFC 9113 5.4.1). */
static int block_bad(struct step *st)
{
	st->fs->d[st->dir].in_block = 0;
	st->ret = worse(st->ret, MOD_MALFORMED);
	return STEP_BAD;
}

/* A HEADERS or PUSH_PROMISE at c (frame header fr read): the block opens;
 * *used: the frame header and the fields before the fragment. */
static int block_start(struct step *st, struct cur c, const struct frame *fr, size_t *used)
{
	struct h2c_dir *d = &st->fs->d[st->dir];
	size_t pre = 0, pad = 0;

	if (fr->sid == 0)
		return block_bad(st); /* a header block on stream 0 */
	if (fr->flags & FF_PADDED)
		pre += 1;
	if (fr->type == FT_HEADERS && (fr->flags & FF_PRIORITY))
		pre += 5;
	if (fr->type == FT_PUSH_PROMISE)
		pre += 4;
	if (pre > fr->len)
		return block_bad(st); /* shorter than its fields */
	cur_skip(&c, H2C_FRAME_HEAD);
	if (!cur_has(&c, pre))
		return STEP_MORE;
	if (fr->flags & FF_PADDED)
		pad = cur_u8(&c);
	if (pre + pad > fr->len)
		return block_bad(st); /* padding longer than the frame */
	d->b_promised = 0;
	if (fr->type == FT_PUSH_PROMISE)
		d->b_promised = cur_be32(&c) & 0x7fffffffu;
	/* a PUSH_PROMISE's block is a request's head (the promised one) */
	block_reset(st->ms, fr->type == FT_PUSH_PROMISE ? 0 : st->dir);
	st->sl->blocks = 1;
	d->in_block = d->in_frame = 1;
	d->b_type = fr->type;
	d->b_sid = fr->sid;
	d->b_frag = (uint32_t)(fr->len - pre - pad);
	d->b_pad = (uint32_t)pad;
	d->b_end = (fr->flags & FF_END_HEADERS) != 0;
	d->b_span = H2C_FRAME_HEAD + pre + pad;
	memset(&d->walk, 0, sizeof(d->walk));
	if (d->table_lost)
		note(&st->ms->dc->head, "HPACK table unknown (a Huffman string before could not be decoded)");
	*used = H2C_FRAME_HEAD + pre;
	return STEP_OK;
}

/*
 * The open block of the direction, at c: the next CONTINUATION's header,
 * or the fragment bytes of the current frame that are there, fed to the
 * inflater at once (the last with in_final; nghttp2 keeps a field cut
 * between two pieces itself, in memory the counting allocator bounds), so
 * the block is never held whole: its length on the wire is not bounded,
 * only what is kept of its fields (struct http_head's fixed fields).
 */
static int block_more(struct step *st, struct cur c, size_t *used)
{
	struct h2c_dir *d = &st->fs->d[st->dir];
	*used = 0;
	if (!d->in_frame) {
		struct frame fr;

		if (frame_head(&c, &fr) < 0)
			return STEP_MORE;
		if (fr.len > d->max_frame || fr.type != FT_CONTINUATION || fr.sid != d->b_sid)
			return block_bad(st); /* not continued by CONTINUATION */
		d->in_frame = 1;
		d->b_frag = fr.len;
		d->b_pad = 0;
		d->b_end = (fr.flags & FF_END_HEADERS) != 0;
		d->b_span += H2C_FRAME_HEAD;
		*used = H2C_FRAME_HEAD;
		return STEP_OK;
	}
	size_t n = cur_left(&c) < d->b_frag ? cur_left(&c) : d->b_frag;
	int last = n == d->b_frag && d->b_end;
	if ((n || last) &&
	    hpack_feed_walked(st->ms, d, st->sl, st->dir, cur_ptr(&c, n), n, last) < 0) {
		d->b_span += n;
		note(&st->ms->dc->head, "HPACK decoding error");
		if (!st->ms->dc->blk.fields)
			return block_bad(st); /* nothing read: only the count */
		block_done(st, 0);
		return STEP_BAD; /* the table is unknown from here */
	}
	d->b_frag -= (uint32_t)n;
	d->b_span += n;
	*used = n;
	if (d->b_frag)
		return n ? STEP_OK : STEP_MORE;
	/* the frame's fragment is all decoded: its padding is passed */
	d->skip = d->b_pad;
	d->b_pad = 0;
	d->in_frame = 0;
	if (d->b_end)
		return block_done(st, 0);
	return STEP_OK;
}

/* The direction stops (a hole, the window's end) inside a block: what
 * was decoded of it is emitted, truncated. */
static void block_cut(struct step *st)
{
	if (st->fs->d[st->dir].in_block && st->err == 0)
		block_done(st, OBS_F_TRUNCATED);
}

/* Apply a SETTINGS_HEADER_TABLE_SIZE the decoder of dir now holds to. */
static void table_apply(struct h2c_slot *sl, int dir, const struct h2c_table_set *t)
{
	if (!t->has || !sl->inf[dir])
		return;
	/* the smallest first: the encoder must then say a size at most that
	 * (RFC 7541 4.2); then the last, the bound from now on */
	nghttp2_hd_inflate_change_table_size(sl->inf[dir], t->min < H2C_TABLE_MAX ? t->min
										  : H2C_TABLE_MAX);
	sl->bound[dir] = t->last < H2C_TABLE_MAX ? t->last : H2C_TABLE_MAX;
	nghttp2_hd_inflate_change_table_size(sl->inf[dir], sl->bound[dir]);
}

/* A SETTINGS ACK of direction dir: dir took the peer's oldest SETTINGS,
 * its encoder's bound from now on. */
static void settings_ack(struct step *st)
{
	struct h2c_dir *d = &st->fs->d[st->dir];

	if (d->q_n) {
		table_apply(st->sl, st->dir, &d->q[0]);
		/* the server took the client's ENABLE_PUSH: from now on it
		 * may not push (RFC 9113 6.5.2), or may again */
		if (st->dir == 1 && d->q[0].push)
			st->fs->push_off = d->q[0].push == PUSH_OFF;
		memmove(&d->q[0], &d->q[1], (d->q_n - 1) * sizeof(d->q[0]));
		d->q_n--;
	}
}

/* One entry of the SETTINGS direction dir is sending (a repeated
 * identifier: the last one counts, as the peer takes it). */
static void settings_entry(struct step *st, uint16_t id, uint32_t v)
{
	struct h2c_dir *d = &st->fs->d[st->dir], *peer = &st->fs->d[!st->dir];
	struct h2c_table_set *t = &d->set_t;

	if (id == SET_HEADER_TABLE_SIZE) {
		t->min = t->has && t->min < v ? t->min : v;
		t->last = v;
		t->has = 1;
	} else if (id == SET_ENABLE_PUSH && v <= 1) {
		t->push = v ? PUSH_ON : PUSH_OFF; /* another value: the peer's error */
	} else if (id == SET_MAX_FRAME_SIZE && v >= H2C_FRAME_DEFAULT && v <= H2C_FRAME_LIMIT &&
		   v > peer->max_frame) {
		peer->max_frame = v; /* frames to dir may be this long */
	}
}

/* The SETTINGS direction dir was sending is all read: the table bound it
 * holds is the peer's encoder's, once the peer acks it. */
static void settings_end(struct step *st)
{
	struct h2c_dir *d = &st->fs->d[st->dir], *peer = &st->fs->d[!st->dir];
	struct h2c_table_set t = d->set_t;

	memset(&d->set_t, 0, sizeof(d->set_t));
	if (peer->q_n < H2C_SETTINGS_QUEUE) {
		peer->q[peer->q_n++] = t;
	} else {
		struct h2c_table_set *l = &peer->q[H2C_SETTINGS_QUEUE - 1];
		if (t.has) {
			l->min = l->has && l->min < t.min ? l->min : t.min;
			l->last = t.last;
			l->has = 1;
		}
		if (t.push)
			l->push = t.push;
	}
}

/* Read the whole entries of the current SETTINGS that are at c. *used:
 * their bytes. STEP_MORE when the next entry is not all there. */
static int settings_step(struct step *st, struct cur c, size_t *used)
{
	struct h2c_dir *d = &st->fs->d[st->dir];

	*used = 0;
	while (d->set_left) {
		if (!cur_has(&c, 6))
			return *used ? STEP_OK : STEP_MORE;
		uint16_t id = cur_be16(&c);
		uint32_t v = cur_be32(&c);
		settings_entry(st, id, v);
		d->set_left -= 6;
		*used += 6;
	}
	settings_end(st);
	return STEP_OK;
}

/* One frame, or the part of one that is there, at c. */
static int frame_step(struct step *st, struct cur c, size_t *used)
{
	struct h2c_dir *d = &st->fs->d[st->dir];
	struct cur h = c;
	struct frame fr;

	if (frame_head(&h, &fr) < 0)
		return STEP_MORE;
	if (fr.len > d->max_frame) {
		st->ret = worse(st->ret, MOD_MALFORMED);
		return STEP_BAD;
	}
	switch (fr.type) {
	case FT_HEADERS:
	case FT_PUSH_PROMISE:
		return block_start(st, c, &fr, used);
	case FT_CONTINUATION:
		st->ret = worse(st->ret, MOD_MALFORMED); /* outside a block */
		return STEP_BAD;
	case FT_SETTINGS:
		if (fr.sid != 0 || fr.len % 6 || ((fr.flags & FF_ACK) && fr.len)) {
			st->ret = worse(st->ret, MOD_MALFORMED);
			return STEP_BAD;
		}
		*used = H2C_FRAME_HEAD;
		if (fr.flags & FF_ACK) {
			settings_ack(st);
			return STEP_OK;
		}
		/* read entry by entry as its bytes come, however long */
		memset(&d->set_t, 0, sizeof(d->set_t));
		d->set_left = fr.len;
		if (!fr.len)
			settings_end(st);
		return STEP_OK;
	default:
		/* passed by its length as its bytes come */
		d->skip = fr.len;
		*used = H2C_FRAME_HEAD;
		return STEP_OK;
	}
}

/* Read what the packet's direction has, from where the last call stopped. */
static void h2c_stream(struct step *st)
{
	struct flow_stream *s = &st->p->flow->st[st->dir];
	struct h2c_dir *d = &st->fs->d[st->dir];

	st->ms->dc = &st->sl->dec[st->dir];
	while (!d->stop && s->buf && s->consumed < s->len) {
		/* never across a hole the flow table skipped: framing is lost */
		uint32_t end = flow_stream_avail(s, s->consumed);
		if (end <= s->consumed) {
			d->stop = 1;
			st->ret = worse(st->ret, MOD_TRUNCATED);
			block_cut(st);
			break;
		}
		struct cur c = cur_init(s->buf + s->consumed, end - s->consumed);
		size_t used = 0;
		int r;

		if (d->skip) {
			uint32_t n = end - s->consumed < d->skip ? end - s->consumed : d->skip;
			s->consumed += n;
			d->skip -= n;
			continue;
		}
		st->final = s->overflow || s->gap || end < s->len;
		r = d->set_left ? settings_step(st, c, &used)
		    : d->in_block ? block_more(st, c, &used)
		    : frame_step(st, c, &used);
		if (r == STEP_BAD) {
			d->stop = 1;
			break;
		}
		if (r == STEP_MORE) {
			if (st->final) {
				d->stop = 1;
				st->ret = worse(st->ret, MOD_TRUNCATED);
				block_cut(st);
			}
			break;
		}
		s->consumed += (uint32_t)used;
	}
	if (!d->stop && s->overflow && s->consumed >= s->len) {
		/* the window filled before it could slide (a segment longer
		 * than it): the bytes after it are lost, and the framing */
		d->stop = 1;
		st->ret = worse(st->ret, MOD_TRUNCATED);
		block_cut(st);
	}
	flow_stream_slide(s);
}

/* ---- HTTP2-Settings of an Upgrade ------------------------------------------------ */

void h2c_upgrade_settings(struct h2c_upgrade *u, const uint8_t *v, size_t n)
{
	struct cur c = cur_init(v, n);

	if (u->fields < UINT8_MAX)
		u->fields++;
	if (n % 8) {
		u->bad = 1; /* not a whole number of 6-byte settings */
		return;
	}
	while (cur_has(&c, 8)) {
		const char *g = (const char *)cur_ptr(&c, 8), *end = NULL;
		unsigned char e[6];
		size_t got = 0;

		if (sodium_base642bin(e, sizeof(e), g, 8, NULL, &got, &end,
				      sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
		    got != sizeof(e) || end != g + 8) {
			u->bad = 1;
			return;
		}
		struct cur ec = cur_init(e, sizeof(e));
		uint16_t id = cur_be16(&ec);
		uint32_t val = cur_be32(&ec);
		if (id == SET_HEADER_TABLE_SIZE) {
			u->table_min = u->has_table && u->table_min < val ? u->table_min : val;
			u->table_last = val;
			u->has_table = 1;
		} else if (id == SET_MAX_FRAME_SIZE && val >= H2C_FRAME_DEFAULT &&
			   val <= H2C_FRAME_LIMIT && val > u->max_frame) {
			u->max_frame = val;
		} else if (id == SET_ENABLE_PUSH && val <= 1) {
			u->push = val ? PUSH_ON : PUSH_OFF;
		}
	}
}

int h2c_upgrade_matters(const struct h2c_upgrade *u)
{
	return u && u->fields == 1 && !u->bad && (u->has_table || u->max_frame || u->push);
}

/* The client's HTTP2-Settings, acknowledged by the 101: the server's
 * encoder and frames are bound by them from its first frame. */
static void upgrade_apply(struct h2c_flow *fs, struct h2c_slot *sl, const struct h2c_upgrade *u)
{
	if (!h2c_upgrade_matters(u))
		return;
	if (u->has_table) {
		struct h2c_table_set t = {.has = 1, .min = u->table_min, .last = u->table_last};
		table_apply(sl, 1, &t);
	}
	if (u->max_frame > fs->d[1].max_frame)
		fs->d[1].max_frame = u->max_frame;
	fs->push_off = u->push == PUSH_OFF;
}

/* ---- the module ----------------------------------------------------------------- */

int h2c_sniff(const uint8_t *buf, size_t len)
{
	size_t n = len < H2C_PREFACE_LEN ? len : H2C_PREFACE_LEN;

	if (!buf || memcmp(buf, preface, n) != 0)
		return 0;
	return n == H2C_PREFACE_LEN ? 1 : -1;
}

size_t h2c_heap(const void *state)
{
	const struct h2c_state *ms = state;
	return ms ? ms->heap : 0;
}

static int h2c_init(const struct module_env *env, void **state)
{
	struct h2c_state *ms = calloc(1, sizeof(*ms));

	if (!ms)
		return -ENOMEM;
	for (size_t i = 0; i < H2C_FLOWS_MAX; i++) {
		struct h2c_slot *sl = &ms->slots[i];
		nghttp2_mem mem = {sl, h2c_malloc, h2c_free, h2c_calloc, h2c_realloc};
		sl->ms = ms;
		sl->mem = mem;
	}
	pend_budget_init(&ms->pend, H2C_PENDING_BUDGET);
	*state = ms;
	return 0;
}

static void h2c_fini(void *state)
{
	struct h2c_state *ms = state;

	if (!ms)
		return;
	for (size_t i = 0; i < H2C_FLOWS_MAX; i++) {
		slot_release(&ms->slots[i]);
		free(ms->slots[i].dec);
	}
	pend_budget_fini(&ms->pend);
	free(ms);
}

/* The flow table ends f: give back its pending requests (app_state itself
 * is freed by the table; its slot, if any, is found ended by slot_pick). */
static void h2c_flow_end(void *state, struct flow *f)
{
	struct h2c_state *ms = state;
	struct h2c_flow *fs = f->app_state;

	if (f->app == APP_HTTP2 && fs)
		pend_free(&fs->pend, &ms->pend);
}

static unsigned h2c_counters(const void *state, struct mod_counter *out)
{
	const struct h2c_state *ms = state;
	unsigned n = pend_budget_counters(&ms->pend, out);

	out[n++] = (struct mod_counter){"push_refused", ms->push_refused, MODC_SUMMARY};
	return n;
}

size_t h2c_pending_bytes(const void *state)
{
	const struct h2c_state *ms = state;
	return ms ? ms->pend.used : 0;
}

/* Free the slots of flows idle for H2C_IDLE_US (ended, most likely: the
 * flow table says nothing when it frees a flow), or whose last packet lies
 * that far ahead (packet time went back: the core ended every flow). */
static void h2c_tick(void *state, uint64_t now_us, struct emit *out)
{
	struct h2c_state *ms = state;

	for (size_t i = 0; i < H2C_FLOWS_MAX; i++) {
		struct h2c_slot *sl = &ms->slots[i];
		uint64_t d = now_us > sl->last_us ? now_us - sl->last_us : sl->last_us - now_us;
		if (sl->ticket && d >= H2C_IDLE_US)
			slot_release(sl);
	}
}

/* Claim an unclaimed flow whose client stream starts with the preface,
 * also behind a PROXY protocol header (proxyproto.h): nginx's `listen ...
 * proxy_protocol http2` skips it and reads the preface after it. An
 * unclaimed flow's app_state is NULL, or the struct h2c_upgrade http.c
 * left at an Upgrade's 101 (h2c.h), applied and freed here. */
static int h2c_claim(struct h2c_state *ms, struct flow *f, const struct pkt *p)
{
	struct flow_stream *s = &f->st[0];
	struct h2c_upgrade *up = f->app_state;
	struct h2c_flow *fs;
	uint32_t from;
	int r, pp;

	if (p->dir != 0 || s->done || !s->buf || s->consumed > s->len)
		return MOD_NOT_MINE;
	pp = proxyproto_stream(f);
	if (pp < 0)
		return MOD_NOT_MINE; /* it may yet be a header: ask again */
	from = s->consumed + (uint32_t)pp;
	if (from > s->len || h2c_sniff(s->buf + from, s->len - from) != 1)
		return MOD_NOT_MINE;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	r = slot_take(ms, f, fs, p->ts_us);
	if (r < 0) {
		free(fs);
		return r;
	}
	for (int i = 0; i < 2; i++)
		fs->d[i].max_frame = H2C_FRAME_DEFAULT;
	if (up) {
		upgrade_apply(fs, slot_of(ms, fs), up);
		free(up);
	}
	s->consumed = from + H2C_PREFACE_LEN;
	proxyproto_taken(f);
	f->app = APP_HTTP2;
	f->app_state = fs;
	return MOD_OK;
}

static int h2c_on_packet(void *state, const struct pkt *p, struct emit *out)
{
	struct h2c_state *ms = state;
	struct flow *f = p->flow;
	struct h2c_flow *fs;
	struct h2c_slot *sl;
	int r, claimed = 0;

	if (p->proto != IPPROTO_TCP || !f || !f->st)
		return MOD_NOT_MINE;
	if (f->app == APP_NONE) {
		r = h2c_claim(ms, f, p);
		if (r != MOD_OK)
			return r;
		claimed = 1;
	} else if (f->app != APP_HTTP2 || !f->app_state) {
		return MOD_NOT_MINE;
	}
	fs = f->app_state;
	if (fs->d[0].stop && fs->d[1].stop)
		return MOD_OK; /* never parsed again; the flow stays claimed */
	sl = slot_of(ms, fs);
	if (!sl) {
		/* another flow took our inflaters: the tables are gone */
		fs->d[0].stop = fs->d[1].stop = 1;
		if (fs->lost)
			return MOD_OK;
		fs->lost = 1;
		return MOD_TRUNCATED;
	}
	if (p->ts_us > sl->last_us)
		sl->last_us = p->ts_us;

	struct step st = {
		.ms = ms, .fs = fs, .sl = sl, .p = p, .out = out, .dir = p->dir ? 1 : 0,
		.ret = MOD_OK,
	};
	if (claimed && f->st[1].buf && f->st[1].consumed < f->st[1].len) {
		/* After an Upgrade to h2c (http.c hands the flow back at the
		 * 101), the server's SETTINGS and its response to the upgraded
		 * request were sent before the client's preface: read them
		 * first, from the packet turned around (the server may send
		 * nothing more). */
		struct pkt q = pkt_turned(p);
		st.p = &q;
		st.dir = 1;
		h2c_stream(&st);
		st.p = p;
		st.dir = 0;
	}
	if (st.err == 0)
		h2c_stream(&st);
	if (fs->d[0].stop && fs->d[1].stop)
		slot_release(sl); /* nothing more to decode: the memory goes back */
	return st.err < 0 ? st.err : st.ret;
}

const struct module h2c_module = {
	.name = "h2c",
	.sel = SEL_TCP | SEL_PAYLOAD,
	.init = h2c_init,
	.fini = h2c_fini,
	.on_packet = h2c_on_packet,
	.on_tick = h2c_tick,
	.on_flow_end = h2c_flow_end,
	.counters = h2c_counters,
};
