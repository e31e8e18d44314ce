/*
 * alerts.c - the alert table of alerts.h.
 *
 * Open rows live in a fixed array (max_open slots) with a hash on (class,
 * source, subject) and an LRU list for eviction. Flows that raised a row are
 * remembered in a bounded two-way set-associative cache keyed by flow id, so
 * that when a flow ends its outcome can settle the row; a flow pushed out of
 * the cache keeps the outcome it had when it last raised. Every flow's end
 * asks the cache, so a bitmap of the sets that hold a reference (4 KiB, one
 * bit per set) answers "no reference" for almost every flow without touching
 * the 2 MiB cache itself.
 */
#include "alerts.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "mem.h"
#include "record.h"
#include "text.h"

#define DEFAULT_MAX_OPEN 4096u
#define FLOWREF_SETS 16384u
#define FLOWREF_WAYS 4u /* a flow may raise several rows (metadata_probe, proxy_bypass, ipv6_egress) */
#define SUBJECT_MAX 256
#define EVIDENCE_LEN 256
#define SUMMARY_MAX 256
#define WRITE_EVERY_US 1000000u
#define ADDR_TEXT_MAX 64

static const char *const class_names[AC_COUNT] = {
	[AC_DNS_TUNNEL] = "dns_tunnel",
	[AC_METADATA_PROBE] = "metadata_probe",
	[AC_DNS_REBIND] = "dns_rebind",
	[AC_PROXY_BYPASS] = "proxy_bypass",
	[AC_UDP_EGRESS] = "udp_egress",
	[AC_ICMP_EGRESS] = "icmp_egress",
	[AC_ICMP_TUNNEL] = "icmp_tunnel",
	[AC_IPV6_EGRESS] = "ipv6_egress",
	[AC_DNS_OVER_TCP] = "dns_over_tcp",
	[AC_DOH] = "doh",
	[AC_WEBSOCKET] = "websocket",
	[AC_SMTP] = "smtp",
	[AC_DOMAIN_NOT_ALLOWED] = "domain_not_allowed",
	[AC_PROXY_DENIED] = "proxy_denied",
};

enum outcome { OUT_UNKNOWN = 0, OUT_BLOCKED, OUT_ANSWERED };

struct row {
	/* what the passes over the open rows (alerts_tick, alerts_refresh)
	 * read, in the row's first cache line */
	int64_t id;              /* store id; 0 = slot free */
	uint64_t first_ts, last_ts, count, written_ts;
	int dirty;
	uint32_t flows_open, flows_blocked, flows_answered;
	int severity, score;
	int fixed_outcome;       /* stated by the detector, OUT_* or -1 */
	int cls;
	uint8_t ipv, proto;
	uint16_t sport, dport;
	uint8_t src[16], dst[16];
	char subject[SUBJECT_MAX];
	/* src and dst as text, rendered at the first write (they never change
	 * for a row, and a row is written again at most once a second) */
	uint8_t have_text;
	char src_text[ADDR_TEXT_MAX], dst_text[ADDR_TEXT_MAX];
	char summary[SUMMARY_MAX];
	char evidence[ALERTS_EVIDENCE_MAX][EVIDENCE_LEN];
	unsigned n_evidence;
	uint32_t hnext;          /* hash chain: slot + 1, 0 = end */
	uint32_t lru_prev, lru_next; /* slot + 1, 0 = none */
};

struct flowref {
	uint64_t flow_id;        /* 0 = empty */
	const struct flow *flow; /* alive while referenced: alerts_flow_end drops
				  * the reference before the table frees it */
	uint32_t slot;
	int64_t row_id;
	uint8_t as;              /* what the row counts it as: OUT_UNKNOWN (open) or
				  * OUT_BLOCKED (refused, but an answer may follow) */
};

struct alerts {
	struct store *store;
	uint64_t suppress_us;
	unsigned max_open;
	struct row *rows;
	uint32_t *buckets;       /* max_open * 2 buckets, slot + 1 */
	uint32_t nbuckets;
	uint32_t lru_head, lru_tail; /* most / least recently hit, slot + 1 */
	uint32_t free_hint;
	unsigned n_open;
	/* bit i: rows[i] is open. A row is ~2 KiB, so the periodic passes
	 * over the open rows read these words instead of every row's id:
	 * touching all 4096 rows twice a second of packet time was 3% of a
	 * replay. */
	uint64_t *open_bits;
	/* due[i]: the packet time before which alerts_tick has nothing to do
	 * for open row i (it cannot close: flows open or window not over; no
	 * write is due). A lower bound: whatever may bring either sooner (a
	 * change to write, a flow settling, a new window) sets it to 0, and
	 * the tick recomputes it when it looks. So a tick reads 8 bytes per
	 * waiting row, not the row: the passes over rows that only wait for
	 * their window cost ~3% of a replay. */
	uint64_t *due;
	struct flowref *refs;    /* FLOWREF_SETS * FLOWREF_WAYS */
	uint64_t ref_sets[FLOWREF_SETS / 64]; /* bit set: that set holds a reference */
	uint32_t n_refs;         /* references held (0: nothing to settle) */
	struct alerts_stats stats;
};

int alerts_class_index(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < AC_COUNT; i++)
		if (strcmp(class_names[i], name) == 0)
			return i;
	return -1;
}

const char *alerts_class_name(int idx)
{
	return idx >= 0 && idx < AC_COUNT ? class_names[idx] : "unknown";
}

struct alerts *alerts_new(struct store *store, uint64_t suppress_us, unsigned max_open)
{
	struct alerts *t;

	if (hash_init() != 0)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->store = store;
	t->suppress_us = suppress_us;
	t->max_open = max_open ? max_open : DEFAULT_MAX_OPEN;
	t->nbuckets = 1;
	while (t->nbuckets < t->max_open * 2)
		t->nbuckets <<= 1;
	/* rows (8 MiB by default) and refs: fresh zero pages, touched as used */
	t->rows = mem_table_zalloc((size_t)t->max_open * sizeof(*t->rows));
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	t->refs = mem_table_zalloc((size_t)FLOWREF_SETS * FLOWREF_WAYS * sizeof(*t->refs));
	t->open_bits = calloc((t->max_open + 63) / 64, sizeof(*t->open_bits));
	t->due = calloc(t->max_open, sizeof(*t->due));
	if (!t->rows || !t->buckets || !t->refs || !t->open_bits || !t->due) {
		alerts_free(t);
		return NULL;
	}
	return t;
}

/* The first open row at or after slot from, in slot order, or UINT32_MAX. */
static uint32_t next_open(const struct alerts *t, uint32_t from)
{
	uint32_t w = from / 64, words = (t->max_open + 63) / 64;

	if (from >= t->max_open)
		return UINT32_MAX;
	for (uint64_t bits = t->open_bits[w] & (~0ull << (from % 64));;
	     bits = t->open_bits[w]) {
		if (bits)
			return w * 64 + (uint32_t)__builtin_ctzll(bits);
		if (++w == words)
			return UINT32_MAX;
	}
}

#define FOR_EACH_OPEN(t, i) \
	for (uint32_t i = next_open(t, 0); i != UINT32_MAX; i = next_open(t, i + 1))

/* Row slot has something to write, and its next tick may be sooner. */
static void row_changed(struct alerts *t, uint32_t slot)
{
	t->rows[slot].dirty = 1;
	t->due[slot] = 0;
}

/* The last packet time of row r's window: a hit after it opens a new row,
 * and a tick after it closes r once no flow of r is open. */
static uint64_t window_end(const struct alerts *t, const struct row *r)
{
	return r->last_ts > UINT64_MAX - t->suppress_us ? UINT64_MAX
							: r->last_ts + t->suppress_us;
}

/* The bucket key of a row: keyed (hash.h), since the subject is a name or
 * address a packet chose. subject is at most SUBJECT_MAX - 1 bytes. */
static uint32_t row_hash(int cls, uint8_t ipv, const uint8_t *src, const char *subject)
{
	uint8_t k[2 + 16 + SUBJECT_MAX];
	size_t a = ipv == 6 ? 16 : 4, n = strnlen(subject, SUBJECT_MAX - 1);

	k[0] = (uint8_t)cls;
	k[1] = ipv;
	memcpy(k + 2, src, a);
	memcpy(k + 2 + a, subject, n);
	return (uint32_t)hash_keyed(k, 2 + a + n);
}

static int row_outcome(const struct row *r)
{
	if (r->fixed_outcome >= 0)
		return r->fixed_outcome;
	if (r->flows_answered)
		return OUT_ANSWERED;
	if (r->flows_blocked && !r->flows_open)
		return OUT_BLOCKED;
	return OUT_UNKNOWN;
}

/* snprintf(dst, cap, "%s", s) (cap > 0) without the format machinery: a
 * raise copies its subject, summary and evidence. */
static void copy_str(char *dst, size_t cap, const char *s)
{
	size_t n = strnlen(s, cap - 1);

	memcpy(dst, s, n);
	dst[n] = '\0';
}

static void row_write(struct alerts *t, struct row *r)
{
	static const char *const outcomes[] = {"unknown", "blocked", "answered"};
	char evidence[ALERTS_EVIDENCE_MAX * (EVIDENCE_LEN + 1)];
	struct store_alert sa = {0};
	size_t off = 0;

	r->dirty = 0;
	if (!t->store)
		return;
	if (r->ipv && !r->have_text) {
		text_addr(r->src_text, sizeof(r->src_text), r->ipv, r->src);
		text_addr(r->dst_text, sizeof(r->dst_text), r->ipv, r->dst);
		r->have_text = 1;
	}
	evidence[0] = '\0';
	for (unsigned i = 0; i < r->n_evidence; i++) {
		size_t n = strlen(r->evidence[i]);
		if (i)
			evidence[off++] = REC_GS;
		memcpy(evidence + off, r->evidence[i], n);
		off += n;
		evidence[off] = '\0';
	}
	sa.id = r->id;
	sa.class = class_names[r->cls];
	sa.severity = r->severity;
	sa.first_ts = r->first_ts;
	sa.last_ts = r->last_ts;
	sa.count = r->count;
	sa.outcome = outcomes[row_outcome(r)];
	sa.proto = r->proto;
	sa.src_ip = r->ipv ? r->src_text : NULL;
	sa.dst_ip = r->ipv ? r->dst_text : NULL;
	sa.src_port = r->sport;
	sa.dst_port = r->dport;
	sa.subject = r->subject;
	sa.score = r->score / 100.0;
	sa.rule = class_names[r->cls];
	sa.summary = r->summary;
	sa.evidence = r->n_evidence ? evidence : NULL;
	store_alert_upsert(t->store, &sa);
}

static void lru_unlink(struct alerts *t, uint32_t slot)
{
	struct row *r = &t->rows[slot];
	if (r->lru_prev)
		t->rows[r->lru_prev - 1].lru_next = r->lru_next;
	else
		t->lru_head = r->lru_next;
	if (r->lru_next)
		t->rows[r->lru_next - 1].lru_prev = r->lru_prev;
	else
		t->lru_tail = r->lru_prev;
	r->lru_prev = r->lru_next = 0;
}

static void lru_push_head(struct alerts *t, uint32_t slot)
{
	struct row *r = &t->rows[slot];
	r->lru_prev = 0;
	r->lru_next = t->lru_head;
	if (t->lru_head)
		t->rows[t->lru_head - 1].lru_prev = slot + 1;
	t->lru_head = slot + 1;
	if (!t->lru_tail)
		t->lru_tail = slot + 1;
}

/* Close a row: write it if it changed, unlink it, free the slot. */
static void row_close(struct alerts *t, uint32_t slot)
{
	struct row *r = &t->rows[slot];
	uint32_t b = row_hash(r->cls, r->ipv, r->src, r->subject) & (t->nbuckets - 1);
	uint32_t *pp = &t->buckets[b];

	if (r->dirty)
		row_write(t, r);
	while (*pp && *pp != slot + 1)
		pp = &t->rows[*pp - 1].hnext;
	if (*pp)
		*pp = r->hnext;
	lru_unlink(t, slot);
	memset(r, 0, sizeof(*r));
	t->open_bits[slot / 64] &= ~(1ull << (slot % 64));
	t->n_open--;
}

static uint32_t row_find(struct alerts *t, int cls, uint8_t ipv, const uint8_t *src,
			 const char *subject)
{
	uint32_t b = row_hash(cls, ipv, src, subject) & (t->nbuckets - 1);
	for (uint32_t s = t->buckets[b]; s; s = t->rows[s - 1].hnext) {
		const struct row *r = &t->rows[s - 1];
		if (r->cls == cls && r->ipv == ipv &&
		    memcmp(r->src, src, ipv == 6 ? 16 : 4) == 0 && strcmp(r->subject, subject) == 0)
			return s;
	}
	return 0;
}

unsigned alerts_chain_max(const struct alerts *t)
{
	unsigned most = 0;

	for (uint32_t b = 0; b < t->nbuckets; b++) {
		unsigned n = 0;
		for (uint32_t s = t->buckets[b]; s; s = t->rows[s - 1].hnext)
			n++;
		if (n > most)
			most = n;
	}
	return most;
}

static uint32_t row_alloc(struct alerts *t)
{
	if (t->n_open == t->max_open) {
		uint32_t victim = t->lru_tail - 1;
		row_close(t, victim);
		t->stats.evicted++;
	}
	for (unsigned i = 0; i < t->max_open; i++) {
		uint32_t s = (t->free_hint + i) % t->max_open;
		if (!t->rows[s].id) {
			t->free_hint = s + 1;
			return s;
		}
	}
	return UINT32_MAX; /* not reached: a slot was freed above */
}

/* A SYN-ACK or payload from the responder is an answer whatever follows it
 * (a connection reset after the server spoke has still leaked); short of
 * that, a RST or an ICMP error is a refusal; any other packet back (a bare
 * ACK, an ICMP reply without data) is an answer. */
static int flow_outcome(const struct flow *f, int ended)
{
	if (f->state & (FLOW_SYNACK | FLOW_DATA1))
		return OUT_ANSWERED;
	if (f->state & (FLOW_RST | FLOW_UNREACH))
		return OUT_BLOCKED;
	if (f->state & FLOW_REPLY)
		return OUT_ANSWERED;
	/* evicted for room: it may have been answered after */
	return ended && !(f->state & FLOW_EVICTED) ? OUT_BLOCKED : OUT_UNKNOWN;
}

static void row_count_flow(struct row *r, int outcome, int delta)
{
	switch (outcome) {
	case OUT_ANSWERED:
		r->flows_answered += (uint32_t)delta;
		break;
	case OUT_BLOCKED:
		r->flows_blocked += (uint32_t)delta;
		break;
	default:
		r->flows_open += (uint32_t)delta;
		break;
	}
}

/* Remember that flow f raised row slot (still open, unless settled now). */
static void flow_remember(struct alerts *t, uint32_t slot, const struct flow *f)
{
	struct row *r = &t->rows[slot];
	uint32_t set = (uint32_t)(f->id * 0x9E3779B97F4A7C15ull >> 40) & (FLOWREF_SETS - 1);
	struct flowref *w = &t->refs[set * FLOWREF_WAYS], *dst = NULL;
	int out = flow_outcome(f, 0);

	for (unsigned i = 0; i < FLOWREF_WAYS; i++)
		if (w[i].flow_id == f->id && w[i].row_id == r->id)
			return; /* already counted */
	/* An answer is final; a refusal is counted now but the flow is
	 * still followed, since an answer after it wins (alerts_refresh) */
	if (out == OUT_ANSWERED) {
		row_count_flow(r, out, 1);
		return;
	}
	/* An empty way, else the oldest goes (the ways shift down): its row
	 * keeps counting that flow as open, so it stays "unknown" unless
	 * another of its flows settles it. */
	for (unsigned i = 0; i < FLOWREF_WAYS && !dst; i++)
		if (!w[i].flow_id)
			dst = &w[i];
	if (!dst) {
		memmove(&w[0], &w[1], sizeof(w[0]) * (FLOWREF_WAYS - 1));
		dst = &w[FLOWREF_WAYS - 1];
	}
	if (!dst->flow_id)
		t->n_refs++;
	t->ref_sets[set / 64] |= 1ull << (set % 64);
	dst->flow_id = f->id;
	dst->flow = f;
	dst->slot = slot;
	dst->row_id = r->id;
	dst->as = (uint8_t)out;
	row_count_flow(r, out, 1);
}

void alerts_flow_end(struct alerts *t, const struct flow *f)
{
	uint32_t set;
	struct flowref *w;

	if (!t || !t->n_refs)
		return;
	set = (uint32_t)(f->id * 0x9E3779B97F4A7C15ull >> 40) & (FLOWREF_SETS - 1);
	if (!(t->ref_sets[set / 64] & (1ull << (set % 64))))
		return;
	w = &t->refs[set * FLOWREF_WAYS];
	for (unsigned i = 0; i < FLOWREF_WAYS; i++) {
		if (w[i].flow_id != f->id)
			continue;
		struct row *r = &t->rows[w[i].slot];
		if (r->id == w[i].row_id) {
			int before = row_outcome(r);
			row_count_flow(r, w[i].as, -1);
			row_count_flow(r, flow_outcome(f, 1), 1);
			t->due[w[i].slot] = 0; /* may close now */
			if (row_outcome(r) != before)
				row_changed(t, w[i].slot);
		}
		memset(&w[i], 0, sizeof(w[i]));
		t->n_refs--;
	}
	for (unsigned i = 0; i < FLOWREF_WAYS; i++)
		if (w[i].flow_id)
			return;
	t->ref_sets[set / 64] &= ~(1ull << (set % 64));
}

static void add_evidence(struct alerts *t, uint32_t slot, const char *ev)
{
	struct row *r = &t->rows[slot];

	if (!ev || !*ev || r->n_evidence == ALERTS_EVIDENCE_MAX)
		return;
	for (unsigned i = 0; i < r->n_evidence; i++)
		if (strncmp(r->evidence[i], ev, EVIDENCE_LEN - 1) == 0)
			return;
	copy_str(r->evidence[r->n_evidence++], EVIDENCE_LEN, ev);
	row_changed(t, slot);
}

int alerts_raise(struct alerts *t, const struct alert *a, uint64_t now_us)
{
	static const uint8_t zero[16];
	const struct pkt *p = a->pkt;
	int cls = alerts_class_index(a->class);
	char subject[SUBJECT_MAX];
	uint8_t ipv = p ? p->ipv : 0;
	const uint8_t *src = p ? p->src : zero;
	uint32_t s;
	struct row *r;

	/* the row keeps at most SUBJECT_MAX - 1 bytes: looked up by the
	 * same, or a longer subject could never find its row again */
	copy_str(subject, sizeof(subject), a->subject ? a->subject : "");
	t->stats.raised++;
	if (cls < 0 || a->severity < 1 || a->severity > 5) {
		t->stats.rejected++;
		return -1;
	}
	s = row_find(t, cls, ipv, src, subject);
	if (s && now_us > window_end(t, &t->rows[s - 1])) {
		row_close(t, s - 1); /* window over: a new row */
		s = 0;
	}
	if (!s) {
		uint32_t slot = row_alloc(t);
		uint32_t b;
		/* a free slot is all zero already (fresh zero pages, row_close): only
		 * what is set here is written, not the whole evidence array */
		r = &t->rows[slot];
		r->id = t->store ? store_alert_id(t->store) : (int64_t)t->stats.rows + 1;
		r->cls = cls;
		r->ipv = ipv;
		memcpy(r->src, src, 16);
		if (p) {
			memcpy(r->dst, p->dst, 16);
			r->proto = p->proto;
			r->sport = p->sport;
			r->dport = p->dport;
		}
		memcpy(r->subject, subject, sizeof(r->subject));
		r->first_ts = r->last_ts = now_us;
		r->fixed_outcome = -1;
		b = row_hash(cls, ipv, src, r->subject) & (t->nbuckets - 1);
		r->hnext = t->buckets[b];
		t->buckets[b] = slot + 1;
		lru_push_head(t, slot);
		t->open_bits[slot / 64] |= 1ull << (slot % 64);
		t->n_open++;
		t->stats.rows++;
		t->stats.by_class[cls]++;
		s = slot + 1;
		row_changed(t, slot);
		r->written_ts = 0;
	} else {
		r = &t->rows[s - 1];
		lru_unlink(t, s - 1);
		lru_push_head(t, s - 1);
		row_changed(t, s - 1);
	}
	r->count++;
	if (now_us > r->last_ts)
		r->last_ts = now_us;
	if (a->severity > r->severity)
		r->severity = a->severity;
	if (a->score > r->score)
		r->score = a->score > 100 ? 100 : a->score;
	if (a->detail && *a->detail)
		copy_str(r->summary, sizeof(r->summary), a->detail);
	if (a->outcome) {
		if (strcmp(a->outcome, "blocked") == 0)
			r->fixed_outcome = OUT_BLOCKED;
		else if (strcmp(a->outcome, "answered") == 0)
			r->fixed_outcome = OUT_ANSWERED;
	}
	add_evidence(t, s - 1, a->evidence);
	if (p && p->flow)
		flow_remember(t, s - 1, p->flow);
	/* A new row is written at once; a changing one at most once a second. */
	if (r->count == 1 || now_us >= r->written_ts + WRITE_EVERY_US) {
		row_write(t, r);
		r->written_ts = now_us;
	}
	return 0;
}

void alerts_refresh(struct alerts *t)
{
	if (!t)
		return;
	/* Settle the open flows whose state now tells (a SYN-ACK, a reply, a
	 * RST, an ICMP error), without waiting for them to end. An answer is
	 * final; a refusal is shown but the flow is still followed, since an
	 * answer after it wins (a refusal spoofed with the right numbers by
	 * the initiator itself), as it does in a replay. */
	for (uint32_t w64 = 0; t->n_refs && w64 < FLOWREF_SETS / 64; w64++) {
		uint64_t bits = t->ref_sets[w64];
		while (bits) {
			uint32_t set = w64 * 64 + (uint32_t)__builtin_ctzll(bits);
			struct flowref *w = &t->refs[set * FLOWREF_WAYS];
			int left = 0;
			bits &= bits - 1;
			for (unsigned i = 0; i < FLOWREF_WAYS; i++) {
				if (!w[i].flow_id)
					continue;
				int out = flow_outcome(w[i].flow, 0);
				struct row *r = &t->rows[w[i].slot];
				if (out != w[i].as && r->id == w[i].row_id) {
					row_count_flow(r, w[i].as, -1);
					row_count_flow(r, out, 1);
					row_changed(t, w[i].slot);
				}
				w[i].as = (uint8_t)out;
				if (out != OUT_ANSWERED) {
					left = 1;
					continue;
				}
				memset(&w[i], 0, sizeof(w[i]));
				t->n_refs--;
			}
			if (!left)
				t->ref_sets[set / 64] &= ~(1ull << (set % 64));
		}
	}
	FOR_EACH_OPEN(t, i)
		if (t->rows[i].dirty)
			row_write(t, &t->rows[i]);
}

void alerts_tick(struct alerts *t, uint64_t now_us)
{
	if (!t)
		return;
	FOR_EACH_OPEN(t, i) {
		if (now_us < t->due[i])
			continue;
		struct row *r = &t->rows[i];
		uint64_t end = window_end(t, r);
		if (now_us > end && !r->flows_open) {
			row_close(t, i);
			continue;
		}
		if (r->dirty && now_us >= r->written_ts + WRITE_EVERY_US) {
			row_write(t, r);
			r->written_ts = now_us;
		}
		uint64_t due = r->flows_open || end == UINT64_MAX ? UINT64_MAX : end + 1;
		if (r->dirty && r->written_ts + WRITE_EVERY_US < due)
			due = r->written_ts + WRITE_EVERY_US;
		t->due[i] = due;
	}
}

void alerts_close_all(struct alerts *t)
{
	if (!t)
		return;
	FOR_EACH_OPEN(t, i)
		row_close(t, i);
	/* The flows they waited on have all ended (flow_table_end_all), or
	 * their references were lost to a full set: none is settled later. */
	memset(t->refs, 0, FLOWREF_SETS * FLOWREF_WAYS * sizeof(*t->refs));
	memset(t->ref_sets, 0, sizeof(t->ref_sets));
	t->n_refs = 0;
}

void alerts_set_window(struct alerts *t, uint64_t suppress_us)
{
	if (!t)
		return;
	t->suppress_us = suppress_us;
	FOR_EACH_OPEN(t, i)
		t->due[i] = 0; /* a shorter window closes rows sooner */
}

const struct alerts_stats *alerts_get_stats(const struct alerts *t)
{
	return &t->stats;
}

void alerts_free(struct alerts *t)
{
	if (!t)
		return;
	if (t->rows && t->open_bits)
		FOR_EACH_OPEN(t, i)
			if (t->rows[i].dirty)
				row_write(t, &t->rows[i]);
	free(t->open_bits);
	free(t->due);
	mem_table_free(t->refs, (size_t)FLOWREF_SETS * FLOWREF_WAYS * sizeof(*t->refs));
	free(t->buckets);
	mem_table_free(t->rows, (size_t)t->max_open * sizeof(*t->rows));
	free(t);
}
