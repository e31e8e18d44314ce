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

/* n zeroed bytes, 64-byte aligned, released with free(); NULL when out of
 * memory. From 2 MiB up, the size is rounded up to whole 2 MiB pages. */
void *mem_table_zalloc(size_t n);

#endif
