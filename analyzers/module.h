/*
 * module.h - the one interface between the core and the analyzers and
 * detectors.
 *
 * Analyzers turn packets into observations (struct obs): facts, never
 * verdicts. Detectors turn observations into alerts (struct alert). Both are
 * `struct module` descriptors listed once, in analyzers/registry.c. A module
 * keeps all its state in *state, takes time from packets, never prints, and
 * never sees the store: it hands what it found to struct emit.
 *
 * Everything passed to a callback (pkt, obs, alert and the strings they point
 * to) is borrowed for the duration of the call; whoever keeps data copies it.
 *
 * Return convention (libpcap's sign, Knot's kr_error): 0 = handled;
 * MOD_NOT_MINE / MOD_TRUNCATED / MOD_MALFORMED (> 0) are counted per module;
 * -errno (< 0) is a real failure (fatal only from init).
 */
#ifndef EW_MODULE_H
#define EW_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "../sensor/pkt.h"
#include "../sensor/text.h"

enum sel_bits {
	SEL_UDP = 1u << 0,
	SEL_TCP = 1u << 1,
	SEL_ICMP = 1u << 2,        /* ICMP and ICMPv6 */
	SEL_PAYLOAD = 1u << 3,     /* only packets with payload (or new stream bytes) */
	SEL_CONN_START = 1u << 4,  /* TCP SYN without ACK, or any UDP datagram */
	SEL_ALL = 1u << 5,         /* every IP packet, PKT_L4_BAD ones too (pkt.h) */
	SEL_TCP_END = 1u << 6,     /* with SEL_PAYLOAD: TCP FIN and RST without
				    * payload too (an end the stream's
				    * analyzer may read its unfinished bytes at) */
};

enum mod_result { MOD_OK = 0, MOD_NOT_MINE = 1, MOD_TRUNCATED = 2, MOD_MALFORMED = 3 };

enum obs_kind {
	OBS_DNS_QUERY = 1,
	OBS_DNS_ANSWER,       /* a DNS response */
	OBS_HTTP_REQUEST,
	OBS_HTTP_RESPONSE,
	OBS_TLS_CLIENT_HELLO,
	OBS_TLS_SERVER_HELLO,
	OBS_ICMP,
	OBS_KIND_MAX
};

enum obs_flags {
	OBS_F_MALFORMED = 1u << 0, /* stored with what could be read */
	OBS_F_TRUNCATED = 1u << 1, /* capture cut the message */
	OBS_F_TCP = 1u << 2,       /* carried over TCP (DNS) */
};

/* One resource record of a DNS message as the DNS analyzer's walk read it
 * from the wire: its section (1 answer, 2 authority, 3 additional), type,
 * class and rdata (valid during the observation's callbacks). */
struct obs_rr {
	const uint8_t *rd, *rd_end;
	uint16_t type, rclass;
	uint8_t section;
};

/* What the ICMP analyzer measured of a message that can carry data (an
 * echo, or another kind icmp_carries_data names), beyond its detail record:
 * the payload's digest, to compare a reply with its request, and how much
 * of the payload is not filler (analyzers/icmp.h, icmp_fill). */
struct obs_icmp {
	uint64_t digest;         /* keyed hash of the payload bytes past the
				  * first 16 (ping's timestamp); 0 when the
				  * capture cut the message (no digest) */
	uint64_t data_digest;    /* the same of the data alone: the bytes past
				  * the first 16 and before the filler (a
				  * `ping -p` pattern; not the size); 0 when cut */
	uint32_t data_len;       /* payload bytes before the filler, as captured */
	uint8_t lead[16];        /* the data's first bytes, which both digests
				  * leave out (ping's timestamp, or data) */
	uint8_t lead_len;        /* 0..16, at most data_len; 0 when cut */
	int32_t data_entropy100; /* entropy of those bytes, bits/byte x100 */
	int32_t id, seq;         /* echo identifier and sequence; -1 when not an echo */
};

struct obs {
	enum obs_kind kind;
	const struct pkt *pkt; /* 5-tuple, ts, flow; for TCP the packet that completed it */
	const char *name;      /* qname / Host / SNI: escaped text (text_escape), NUL-terminated */
	size_t name_len;
	const char *aux;       /* optional: HTTP uri, TLS ALPN, ... (escaped) */
	size_t aux_len;
	uint16_t type;         /* qtype / ICMP type / TLS version / HTTP status */
	uint16_t code;         /* DNS rcode / ICMP code */
	uint32_t size;         /* message or payload size */
	unsigned flags;        /* OBS_F_* */
	/* Kind-specific detail for the store, in the sensor/record.h encoding;
	 * the layout per kind is in docs/architecture.md. */
	const char *info;
	size_t info_len;
	/* DNS: every resource record of the message past the questions (OPT
	 * included), when the message is sound and the walk kept them all;
	 * else NULL. A detector may read them to see at once that a message
	 * holds nothing for it; what it reports comes from info, as stored. */
	const struct obs_rr *rrs;
	unsigned n_rrs;
	/* ICMP: the measures of obs_icmp for the kinds that carry data; else
	 * NULL (a detector then judges the whole payload: size and info) */
	const struct obs_icmp *icmp;
};

/*
 * text_fnv64 of an observation's name, computed by a detector's prefetch
 * (to find its cache slot) and taken back by its on_obs of the same
 * observation, so the name is hashed once per detector.
 */
struct name_memo {
	const struct obs *o;
	const char *name;
	size_t len;
	uint64_t hash;
};

static inline uint64_t name_memo_put(struct name_memo *m, const struct obs *o)
{
	m->o = o;
	m->name = o->name;
	m->len = o->name_len;
	m->hash = text_fnv64(o->name, o->name_len);
	return m->hash;
}

/* The hash of o's name: the memo's when it is o's, else computed. */
static inline uint64_t name_memo_take(struct name_memo *m, const struct obs *o)
{
	int mine = m->o == o && m->name == o->name && m->len == o->name_len;
	m->o = NULL;
	return mine ? m->hash : text_fnv64(o->name, o->name_len);
}

struct alert {
	const char *class;     /* an alert class of architecture.md section 3 (static) */
	int severity;          /* 1..5: info, low, medium, high, critical */
	int score;             /* 0..100 */
	const struct pkt *pkt; /* NULL for alerts from on_tick */
	const char *subject;   /* domain or host:port */
	const char *detail;    /* short human text, <= 256 bytes */
	const char *evidence;  /* optional: one evidence item (escaped text) */
	const char *outcome;   /* optional: "blocked" or "answered" when the detector
				* knows (a proxy's 403); NULL: from the flow's state */
};

struct emit {
	int (*obs)(struct emit *e, const struct obs *o);
	int (*alert)(struct emit *e, const struct alert *a);
	void *core;
};

/* A counter a module keeps of its own, beyond the per-result ones the core
 * keeps for it (module.counters). */
enum mod_counter_flags {
	MODC_SUMMARY = 1u << 0, /* shown in the replay summary when not zero */
};
#define MOD_COUNTERS_MAX 4
struct mod_counter {
	const char *name;  /* static: "pending_refused" */
	uint64_t value;
	unsigned flags;    /* MODC_* */
};

struct rules;
struct config;
struct flow;
struct flow_table;
struct module_env {
	const struct rules *rules;
	const struct config *cfg;
	struct flow_table *flows; /* for analyzers that tie ICMP errors to flows */
};

struct module {
	const char *name;
	unsigned sel;      /* analyzers: which packets (SEL_*) */
	unsigned obs_mask; /* detectors: 1u << OBS_* consumed */
	int (*init)(const struct module_env *env, void **state);
	void (*fini)(void *state);
	int (*on_packet)(void *state, const struct pkt *p, struct emit *out);
	int (*on_obs)(void *state, const struct obs *o, struct emit *out);
	/* Optional: called with an observation just before the on_obs of
	 * every detector that takes it, to start fetching what on_obs will
	 * read (a cache slot keyed by the name): each lookup misses the CPU
	 * caches, and issued together the misses overlap instead of adding
	 * up. Nothing on_obs decides may depend on whether it was called. */
	void (*prefetch)(void *state, const struct obs *o);
	void (*on_tick)(void *state, uint64_t now_us, struct emit *out);
	/* Optional (analyzers): the flow table is about to end f (expiry,
	 * eviction, close, a time restart, the end of the run), and then to
	 * free f->app_state with free(). The module that claimed f (f->app)
	 * releases what its app_state points to; the others leave f alone.
	 * Nothing may be emitted from here. */
	void (*on_flow_end)(void *state, struct flow *f);
	/* Optional (analyzers): just before on_flow_end, for a TCP flow that
	 * an analyzer claimed (f->app): the module that claimed it may report
	 * what the bytes it has not read yet hold (an HTTP head the flow's end
	 * cut short). p stands for the flow: its addresses and ports (the
	 * client's first, dir 0), its last packet's time, f; nothing else. The
	 * alerts let go of f only after this. Returns as on_packet (counted
	 * unless MOD_NOT_MINE). */
	int (*on_flow_left)(void *state, struct flow *f, const struct pkt *p, struct emit *out);
	/* Optional: the module's own counters, at most MOD_COUNTERS_MAX, into
	 * out; returns how many. The core writes them to the stats table as
	 * module.<module>.<counter> with the per-result ones (/api/v1/stats:
	 * analyzers.<module>.<counter>), reading them last just before fini. */
	unsigned (*counters)(const void *state, struct mod_counter *out);
};

/* registry.c: NULL-terminated, in the order they run. */
extern const struct module *const modules[];

#endif
