/*
 * mem.c - see mem.h.
 */
#include "mem.h"

#include <pthread.h>
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

#ifdef MEM_HEAP_ONLY
#include <sanitizer/asan_interface.h>

/*
 * Under ASan a table freed is kept, poisoned, for the next one of the same
 * size: a process that opens and closes cores again and again (the fuzz
 * driver, one per input; the unit tests, one per case) otherwise has ASan
 * map, poison, quarantine and unmap tens of MiB each time, which took most
 * of their time. A use of a freed table still fails (it is poisoned), and
 * a cached table is still reachable for LeakSanitizer.
 */
#define MEM_CACHE 16
static struct {
	void *p;
	size_t n;
} mem_cache[MEM_CACHE];
static pthread_mutex_t mem_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static void *cache_take(size_t n)
{
	void *p = NULL;

	pthread_mutex_lock(&mem_cache_lock);
	for (int i = 0; i < MEM_CACHE; i++)
		if (mem_cache[i].p && mem_cache[i].n == n) {
			p = mem_cache[i].p;
			mem_cache[i].p = NULL;
			break;
		}
	pthread_mutex_unlock(&mem_cache_lock);
	if (p) {
		ASAN_UNPOISON_MEMORY_REGION(p, n);
		memset(p, 0, n);
	}
	return p;
}

static int cache_put(void *p, size_t n)
{
	int kept = 0;

	pthread_mutex_lock(&mem_cache_lock);
	for (int i = 0; i < MEM_CACHE && !kept; i++)
		if (!mem_cache[i].p) {
			mem_cache[i].p = p;
			mem_cache[i].n = n;
			kept = 1;
		}
	pthread_mutex_unlock(&mem_cache_lock);
	if (kept)
		ASAN_POISON_MEMORY_REGION(p, n);
	return kept;
}
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
		void *p = n >= 65536 ? cache_take(n) : NULL;
		return p ? p : calloc(1, n ? n : 1); /* ASan's own, with its redzones */
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
#ifdef MEM_HEAP_ONLY
	if (n >= 65536 && cache_put(p, n))
		return;
#endif
	if (from_heap(n))
		free(p);
	else
		munmap(p, (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
}
