/*
 * mem.c - see mem.h.
 */
#include "mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

void *mem_table_zalloc(size_t n)
{
	size_t align = n < HUGE_PAGE ? 64 : HUGE_PAGE;
	void *p;

	if (n > SIZE_MAX - HUGE_PAGE)
		return NULL;
	n = n ? (n + align - 1) & ~(align - 1) : align;
	p = aligned_alloc(align, n);
	if (!p)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (align == HUGE_PAGE)
		(void)madvise(p, n, MADV_HUGEPAGE); /* before the pages are touched */
#endif
	memset(p, 0, n);
	return p;
}
