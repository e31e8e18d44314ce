/*
 * mem.h - the large tables of the packet path (the flow table's slots and
 * flows, dns_tunnel's caches).
 *
 * A replay touches these tables at random, one or two cache lines per
 * packet; with 4 KiB pages most of those touches also miss the TLB. Tables
 * of 2 MiB and more are therefore asked for in transparent huge pages
 * (madvise(MADV_HUGEPAGE), which Debian's default "madvise" THP mode
 * honours). That is a hint: where the kernel gives none, the table works the
 * same in small pages.
 */
#ifndef EW_MEM_H
#define EW_MEM_H

#include <stddef.h>

/* n zeroed bytes; NULL when out of memory. From 2 MiB up they are fresh
 * anonymous pages (zero, and costing nothing until touched), 2 MiB aligned,
 * the size rounded up to whole 2 MiB pages; below that a 64-byte aligned
 * heap block; under AddressSanitizer always calloc's block, redzones and
 * all. */
void *mem_table_zalloc(size_t n);

/* Release what mem_table_zalloc(n) returned, with the same n. NULL is fine. */
void mem_table_free(void *p, size_t n);

#endif
