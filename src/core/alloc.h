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

/* Bytes currently allocated through this wrapper, summed over all threads. */
size_t hk_used_memory(void);
/* The calling thread's slot: what it allocated minus what it freed (of
 * anyone's). Its change across a call is what that call freed here. */
long long hk_thread_allocated(void);
/* Bytes the allocator holds from the OS (resident estimate) and peak. */
size_t hk_rss_bytes(void);
const char *hk_allocator_name(void);

/* Give the calling thread its own accounting slot. Threads that never call
 * this share slot 0 (with atomic updates). Returns the slot index. */
int hk_alloc_thread_init(void);

#endif
