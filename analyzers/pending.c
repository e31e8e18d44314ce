/*
 * pending.c - the requests a flow waits to see answered, packed, under a
 * module's byte budget (pending.h).
 *
 * A set is one allocation: struct pend, then cap bytes of which len hold
 * the entries in the order they were pushed. An entry is a 16-byte header
 * (key, tag, flags and the three string lengths, read and written with
 * memcpy: no alignment is assumed) followed by the three strings, each
 * with its NUL. Entries are few (the owners allow 16) and small, so
 * finding one walks the headers and removing one moves the bytes after
 * it; nothing is indexed.
 */
#include "pending.h"

#include <stdlib.h>
#include <string.h>

#include "module.h"

struct pend {
	struct pend *prev, *next; /* the budget's list */
	uint32_t cap;             /* bytes of data */
	uint32_t len;             /* bytes of entries */
	uint32_t n;               /* entries */
	unsigned char data[];
};

#define ENTRY_HEAD 16
#define GRAIN 32u            /* capacities are multiples of this */
#define SHRINK_FLOOR 256u    /* a set this small is not shrunk */

struct ehead {
	uint64_t key;
	uint8_t tag, flags;
	uint16_t len[3];
};

static void head_get(const unsigned char *at, struct ehead *h)
{
	memcpy(&h->key, at, 8);
	h->tag = at[8];
	h->flags = at[9];
	memcpy(h->len, at + 10, 6);
}

static size_t entry_size(const struct ehead *h)
{
	return ENTRY_HEAD + (size_t)h->len[0] + h->len[1] + h->len[2] + 3;
}

/* Offset of entry i (i <= n: n gives the end). */
static uint32_t entry_off(const struct pend *p, unsigned i)
{
	uint32_t off = 0;
	struct ehead h;

	for (unsigned k = 0; k < i && k < p->n; k++) {
		head_get(p->data + off, &h);
		off += (uint32_t)entry_size(&h);
	}
	return off;
}

static size_t set_size(size_t cap)
{
	return sizeof(struct pend) + cap + PEND_OVERHEAD;
}

static size_t round_cap(size_t n)
{
	return (n + GRAIN - 1) / GRAIN * GRAIN;
}

void pend_budget_init(struct pend_budget *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void pend_budget_fini(struct pend_budget *b)
{
	if (!b)
		return;
	while (b->all) {
		struct pend *p = b->all;
		pend_free(&p, b);
	}
}

unsigned pend_budget_counters(const struct pend_budget *b, struct mod_counter *out)
{
	out[0] = (struct mod_counter){"pending_refused", b->refused, MODC_SUMMARY};
	out[1] = (struct mod_counter){"pending_bytes", b->used, 0};
	out[2] = (struct mod_counter){"pending_peak", b->peak, 0};
	return 3;
}

unsigned pend_count(const struct pend *p)
{
	return p ? p->n : 0;
}

size_t pend_size(const struct pend *p)
{
	return p ? set_size(p->cap) : 0;
}

int pend_at(const struct pend *p, unsigned i, struct pend_entry *e)
{
	struct ehead h;
	uint32_t off;
	const char *s;

	if (!p || i >= p->n)
		return 0;
	off = entry_off(p, i);
	head_get(p->data + off, &h);
	s = (const char *)p->data + off + ENTRY_HEAD;
	e->key = h.key;
	e->tag = h.tag;
	e->flags = h.flags;
	e->method = s;
	e->method_len = h.len[0];
	e->host = s + h.len[0] + 1;
	e->host_len = h.len[1];
	e->uri = e->host + h.len[1] + 1;
	e->uri_len = h.len[2];
	return 1;
}

static void list_unlink(struct pend_budget *b, struct pend *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		b->all = p->next;
	if (p->next)
		p->next->prev = p->prev;
}

/* Resize the set *pp (NULL: a new one) to cap bytes of data, keeping its
 * list place and counting the change. 0, or -1 (nothing changed). */
static int set_resize(struct pend **pp, struct pend_budget *b, size_t cap)
{
	struct pend *p = *pp, *q;
	size_t old = pend_size(p);

	if (p)
		list_unlink(b, p);
	q = realloc(p, sizeof(*q) + cap);
	if (!q) {
		if (p) { /* put it back as it was */
			p->prev = NULL;
			p->next = b->all;
			if (b->all)
				b->all->prev = p;
			b->all = p;
		}
		return -1;
	}
	if (!p) {
		q->len = 0;
		q->n = 0;
	}
	q->cap = (uint32_t)cap;
	q->prev = NULL;
	q->next = b->all;
	if (b->all)
		b->all->prev = q;
	b->all = q;
	b->used = b->used - old + set_size(cap);
	if (b->used > b->peak)
		b->peak = b->used;
	*pp = q;
	return 0;
}

/* May the set go from old to new bytes? */
static int fits(const struct pend_budget *b, size_t old, size_t new_size)
{
	return b->used - old + new_size <= b->max;
}

int pend_push(struct pend **pp, struct pend_budget *b, int drop, uint64_t key, uint8_t tag,
	      uint8_t flags, const char *method, const char *host, const char *uri)
{
	struct pend *p = *pp;
	const char *s[3] = {method ? method : "", host ? host : "", uri ? uri : ""};
	uint16_t l[3];
	size_t esz = ENTRY_HEAD + 3, len = p ? p->len : 0, dsz = 0, need;
	uint32_t doff = 0;
	struct ehead h;

	for (int i = 0; i < 3; i++) {
		size_t n = strlen(s[i]);
		l[i] = (uint16_t)(n > PEND_STR_MAX ? PEND_STR_MAX : n);
		esz += l[i];
	}
	if (drop >= 0 && (unsigned)drop < pend_count(p)) {
		doff = entry_off(p, (unsigned)drop);
		head_get(p->data + doff, &h);
		dsz = entry_size(&h);
	} else {
		drop = -1;
		if (pend_count(p) >= PEND_ENTRIES_MAX)
			goto refuse;
	}
	need = len - dsz + esz;
	if (need > UINT32_MAX / 2)
		goto refuse;
	if (!p || need > p->cap) {
		/* grow by half again, so a run of pushes reallocates a few
		 * times; when that would pass the budget, to the bytes needed */
		size_t cap = round_cap(need + need / 2);
		if (!fits(b, pend_size(p), set_size(cap)))
			cap = round_cap(need);
		if (!fits(b, pend_size(p), set_size(cap)) || set_resize(pp, b, cap) < 0)
			goto refuse;
		p = *pp;
	}
	if (drop >= 0) {
		memmove(p->data + doff, p->data + doff + dsz, p->len - doff - dsz);
		p->len -= (uint32_t)dsz;
		p->n--;
	}
	unsigned char *at = p->data + p->len;
	memcpy(at, &key, 8);
	at[8] = tag;
	at[9] = flags;
	memcpy(at + 10, l, 6);
	at += ENTRY_HEAD;
	for (int i = 0; i < 3; i++) {
		memcpy(at, s[i], l[i]);
		at[l[i]] = '\0';
		at += l[i] + 1;
	}
	p->len += (uint32_t)esz;
	p->n++;
	return 0;
refuse:
	b->refused++;
	return 1;
}

void pend_remove(struct pend **pp, struct pend_budget *b, unsigned i)
{
	struct pend *p = *pp;
	struct ehead h;
	uint32_t off;
	size_t sz;

	if (!p || i >= p->n)
		return;
	if (p->n == 1) {
		pend_free(pp, b);
		return;
	}
	off = entry_off(p, i);
	head_get(p->data + off, &h);
	sz = entry_size(&h);
	memmove(p->data + off, p->data + off + sz, p->len - off - sz);
	p->len -= (uint32_t)sz;
	p->n--;
	if (p->cap > SHRINK_FLOOR && p->len <= p->cap / 4)
		(void)set_resize(pp, b, round_cap((size_t)p->len * 2)); /* a failure keeps it */
}

void pend_free(struct pend **pp, struct pend_budget *b)
{
	struct pend *p = *pp;

	if (!p)
		return;
	list_unlink(b, p);
	b->used -= pend_size(p);
	free(p);
	*pp = NULL;
}
