/* alloc.h - the one allocator wrapper of HotKV, with accounting.
 *
 * Every byte the server keeps goes through hk_malloc/hk_free so that
 * INFO memory and (later) maxmemory see it. Accounting uses the allocator's
 * usable size and per-thread counters that are summed on read, so the hot
 * path never touches a shared cache line. This file knows nothing of the
 * server. */
#ifndef HK_ALLOC_H
#define HK_ALLOC_H

#include <stddef.h>

void *hk_malloc(size_t size);
void *hk_calloc(size_t n, size_t size);
void *hk_realloc(void *ptr, size_t size);
void hk_free(void *ptr);
char *hk_strdup(const char *s);
char *hk_strndup(const char *s, size_t n);
size_t hk_usable_size(void *ptr);
/* The usable size hk_malloc(size) would give (its size class), so a
 * caller can tell whether an existing block is what a fresh allocation of
 * that size would be. */
size_t hk_good_size(size_t size);

/* Count `delta` bytes allocated (or, negative, freed) by another
 * allocator of HotKV's in the calling thread's slot (src/core/slab.h). */
void hk_account(long long delta);

/* Bytes currently allocated through this wrapper, summed over all threads. */
size_t hk_used_memory(void);
/* The calling thread's slot: what it allocated minus what it freed (of
 * anyone's). Its change across a call is what that call freed here. */
long long hk_thread_allocated(void);
/* Bytes the allocator holds from the OS (resident estimate) and peak. */
size_t hk_rss_bytes(void);
const char *hk_allocator_name(void);
/* What the allocator holds beyond what was asked of it: `active` the
 * bytes it has committed (mimalloc's count plus the slab's pages; the same
 * as allocated for the libc allocator of sanitizer builds, which does not
 * say), `resident` the same commit, as mimalloc does not track residency. */
void hk_allocator_stats(size_t *allocated, size_t *active, size_t *resident);
/* Give free memory back to the OS (MEMORY PURGE). */
void hk_allocator_purge(void);
/* The allocator's own statistics report, a line at a time, or NULL when
 * it has none. */
int hk_allocator_report(void (*out)(const char *line, void *arg), void *arg);

/* Give the calling thread its own accounting slot. Threads that never call
 * this share slot 0 (with atomic updates). Returns the slot index. */
int hk_alloc_thread_init(void);

#endif
