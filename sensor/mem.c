/*
 * mem.c - see mem.h.
 */
#include "mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

/* AddressSanitizer puts redzones around heap blocks only: under it every
 * table comes from the heap, so overruns of them are still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define MEM_HEAP_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEM_HEAP_ONLY 1
#endif
#endif

static int from_heap(size_t n)
{
#ifdef MEM_HEAP_ONLY
	(void)n;
	return 1;
#else
	return n < HUGE_PAGE;
#endif
}

void *mem_table_zalloc(size_t n)
{
	if (n > SIZE_MAX / 2)
		return NULL;
	if (from_heap(n)) {
#ifdef MEM_HEAP_ONLY
		return calloc(1, n ? n : 1); /* ASan's own, with its redzones */
#else
		size_t len = n ? (n + 63) & ~(size_t)63 : 64;
		void *p = aligned_alloc(64, len);
		if (p)
			memset(p, 0, len);
		return p;
#endif
	}
	/* Fresh anonymous pages are zero and cost nothing until touched (a
	 * short run touches little of a 10 MiB cache). Map one huge page more
	 * than needed and trim it to a 2 MiB boundary. */
	size_t len = (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uint8_t *raw = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	uint8_t *p = (uint8_t *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (p > raw)
		munmap(raw, (size_t)(p - raw));
	if (raw + HUGE_PAGE > p)
		munmap(p + len, (size_t)(raw + HUGE_PAGE - p));
#ifdef MADV_HUGEPAGE
	(void)madvise(p, len, MADV_HUGEPAGE); /* a hint, before any page is touched */
#endif
	return p;
}

void mem_table_free(void *p, size_t n)
{
	if (!p)
		return;
	if (from_heap(n))
		free(p);
	else
		munmap(p, (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
}
