/*
 * hash.h - the keyed hash of the tables whose keys come from packets.
 *
 * A chained hash table keyed by what a packet says (a domain, an alert's
 * subject, a fragment's id) is a table whose buckets the sender chooses: with
 * an unkeyed hash (FNV, a published seed) an agent can compute, offline,
 * thousands of names that land in one bucket, and every later lookup walks
 * them all (a capture of 4096 such domains replayed five times slower; see
 * docs/architecture.md, "Hash tables"). These tables hash with SipHash-2-4
 * (libsodium's crypto_shorthash) under a key drawn at random once per
 * process, so nobody outside it can tell which keys collide.
 *
 * Only the layout of a table depends on the key, never what it holds or
 * what it evicts (eviction is by age, over the whole table), so a replay is
 * as deterministic as before.
 */
#ifndef EW_HASH_H
#define EW_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Draw the process's key (once; later calls return at once): 0, or -1 when
 * libsodium cannot start. Call before the first hash_keyed. */
int hash_init(void);

/* SipHash-2-4 of p[0..n) under the process's key. */
uint64_t hash_keyed(const void *p, size_t n);

#endif
