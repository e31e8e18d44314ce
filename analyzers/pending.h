/*
 * pending.h - the requests a flow waits to see answered, kept as small as
 * they are, under a byte budget shared by all the flows of a module.
 *
 * The HTTP/1.x and h2c analyzers pair each response with the request it
 * answers, so for each claimed flow they remember, per request still
 * unanswered, its method, host and target (already escaped and cut to
 * HTTP_METHOD_MAX, HTTP_PAIR_HOST_MAX and HTTP_PAIR_URI_MAX). A struct pend
 * holds them packed one after the other, the strings at their real
 * lengths; it is allocated with the flow's first pending request, grows as
 * requests are pushed, shrinks as they are answered and is freed when none
 * is left, so a flow whose requests were answered holds nothing. (Before
 * it, each flow carried 16 fixed 800-byte entries from its claim: 13 KiB a
 * flow, 3.4 GiB at max_flows.)
 *
 * A struct pend_budget, one per module, counts the bytes all its sets hold
 * (their allocations, with a malloc overhead of PEND_OVERHEAD each): a
 * push that would take it past max is refused, and counted, so that what
 * every flow together remembers is bounded whatever the input. The owner
 * bounds how many entries a set holds (HTTP_PIPELINE_MAX, H2C_PENDING_MAX;
 * at most PEND_ENTRIES_MAX). Every set also sits on its budget's list, so
 * that pend_budget_fini frees those whose flows never said they ended.
 *
 * Pure bookkeeping: no globals, no printing; the strings are the
 * caller's, copied in.
 */
#ifndef EW_PENDING_H
#define EW_PENDING_H

#include <stddef.h>
#include <stdint.h>

#define PEND_ENTRIES_MAX 255
#define PEND_STR_MAX 65535 /* longest string an entry keeps (longer: cut) */
#define PEND_OVERHEAD 16   /* bytes malloc spends per allocation, counted */

struct pend;

struct pend_budget {
	size_t max;        /* bytes all the sets may hold */
	size_t used;       /* bytes they hold */
	size_t peak;       /* the most they held at once */
	uint64_t refused;  /* pushes refused: max reached, or out of memory */
	struct pend *all;  /* every set, for pend_budget_fini */
};

/* One entry, as pend_at shows it: the strings point into the set (valid
 * until it next changes) and are NUL-terminated. */
struct pend_entry {
	uint64_t key;      /* the owner's: a request number, a stream id */
	uint8_t tag;       /* the owner's: a slot number */
	uint8_t flags;     /* the owner's */
	const char *method, *host, *uri;
	size_t method_len, host_len, uri_len;
};

/* An empty budget of max bytes. */
void pend_budget_init(struct pend_budget *b, size_t max);

/* Free every set still held (the flows' pointers to them are then stale:
 * call it when the module ends). NULL is fine. */
void pend_budget_fini(struct pend_budget *b);

/* The budget's counters as a module reports them (module.counters):
 * pending_refused, pending_bytes, pending_peak into out; returns 3. */
struct mod_counter;
unsigned pend_budget_counters(const struct pend_budget *b, struct mod_counter *out);

/* Entries in p (NULL: none). */
unsigned pend_count(const struct pend *p);

/* The bytes p counts against its budget (NULL: 0). */
size_t pend_size(const struct pend *p);

/* Entry i (0 = pushed longest ago) of p into *e: 1, or 0 when there is none. */
int pend_at(const struct pend *p, unsigned i, struct pend_entry *e);

/*
 * Append an entry (strings NUL-terminated, each cut to PEND_STR_MAX) to
 * *pp, allocating or growing the set, and when drop >= 0 remove entry drop
 * in the same step (the new entry replaces it). Returns 0 when stored; 1
 * when not (the budget would pass max, or malloc failed, or the set holds
 * PEND_ENTRIES_MAX): *pp is then as it was (entry drop kept) and
 * b->refused counted.
 */
int pend_push(struct pend **pp, struct pend_budget *b, int drop, uint64_t key, uint8_t tag,
	      uint8_t flags, const char *method, const char *host, const char *uri);

/* Remove entry i of *pp; the set shrinks when mostly empty and is freed
 * (*pp = NULL) when empty. Nothing when there is no entry i. */
void pend_remove(struct pend **pp, struct pend_budget *b, unsigned i);

/* Free the set *pp (NULL is fine) and set *pp to NULL. */
void pend_free(struct pend **pp, struct pend_budget *b);

#endif
