/* slab.c - the handle-addressed block allocator; see slab.h.
 *
 * Layout: the range starts with one unused page (so handle 0 is no block)
 * and grows page by page from `next_page`, an atomic counter. page_class
 * says which class owns each page handed out; it is written once, by the
 * thread that takes the page under its class lock, before any block of
 * the page is handed out, and read by slab_free of a block of that page,
 * which a lock or the allocating thread's own program order has already
 * ordered after the write.
 *
 * A free block on a shared list holds the next handle in its first four
 * bytes. Under AddressSanitizer a page is poisoned when its class takes
 * it, a block is unpoisoned while handed out, and a free block's link is
 * unpoisoned only while this file reads or writes it. */
#include "slab.h"

#include "alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* 2^32 handles of 8 bytes. */
#define SLAB_RESERVE ((size_t)1 << 35)
#define PAGE_SHIFT 16
#define PAGE_SIZE ((size_t)1 << PAGE_SHIFT)
#define NCLASSES (SLAB_MAX / SLAB_GRAIN + 1) /* class c holds c * 8 bytes; 0 unused */
#define CACHE_MAX 64
#define CACHE_BATCH 32

char *slab_base;
static size_t npages;
static _Atomic size_t next_page = 1;
static uint8_t *page_class;

struct slab_class {
    pthread_mutex_t lock;
    slab_h free;     /* shared free list */
    char *bump, *end; /* the page being cut into blocks */
} __attribute__((aligned(64)));

static struct slab_class classes[NCLASSES];

struct slab_cache {
    uint32_t n;
    slab_h h[CACHE_MAX];
};
static _Thread_local struct slab_cache *tcache;
static pthread_key_t cache_key;

static void cache_gone(void *arg);

__attribute__((constructor)) static void slab_reserve(void) {
    /* Take less address space where a limit forbids the full range. */
    for (size_t want = SLAB_RESERVE; want >= ((size_t)1 << 28); want >>= 1) {
        void *p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) continue;
        slab_base = p;
        npages = want >> PAGE_SHIFT;
        break;
    }
    if (!slab_base) {
        fprintf(stderr, "hotkv: cannot reserve address space for the keyspace\n");
        abort();
    }
    page_class = mmap(NULL, npages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (page_class == MAP_FAILED) abort();
    for (int c = 0; c < NCLASSES; c++) pthread_mutex_init(&classes[c].lock, NULL);
    pthread_key_create(&cache_key, cache_gone);
}

static inline slab_h link_get(slab_h h) {
    slab_h *p = slab_ptr(h);
    UNPOISON(p, sizeof(*p));
    slab_h v = *p;
    POISON(p, sizeof(*p));
    return v;
}

static inline void link_set(slab_h h, slab_h next) {
    slab_h *p = slab_ptr(h);
    UNPOISON(p, sizeof(*p));
    *p = next;
    POISON(p, sizeof(*p));
}

/* Move up to `want` free handles of class c into cache k; returns how many. */
static unsigned refill(int c, struct slab_cache *k, unsigned want) {
    struct slab_class *sc = &classes[c];
    size_t sz = (size_t)c * SLAB_GRAIN;
    unsigned got = 0;
    pthread_mutex_lock(&sc->lock);
    while (got < want && sc->free) {
        slab_h h = sc->free;
        sc->free = link_get(h);
        k->h[k->n++] = h;
        got++;
    }
    while (got < want) {
        if ((size_t)(sc->end - sc->bump) < sz) {
            size_t pg = atomic_fetch_add_explicit(&next_page, 1, memory_order_relaxed);
            if (pg >= npages) break;
            page_class[pg] = (uint8_t)c;
            sc->bump = slab_base + (pg << PAGE_SHIFT);
            sc->end = sc->bump + PAGE_SIZE;
            POISON(sc->bump, PAGE_SIZE);
        }
        k->h[k->n++] = slab_handle(sc->bump);
        sc->bump += sz;
        got++;
    }
    pthread_mutex_unlock(&sc->lock);
    return got;
}

/* Give the oldest `n` handles of cache k back to class c's shared list. */
static void spill(int c, struct slab_cache *k, unsigned n) {
    if (n == 0) return;
    for (unsigned i = 0; i + 1 < n; i++) link_set(k->h[i], k->h[i + 1]);
    struct slab_class *sc = &classes[c];
    pthread_mutex_lock(&sc->lock);
    link_set(k->h[n - 1], sc->free);
    sc->free = k->h[0];
    pthread_mutex_unlock(&sc->lock);
    memmove(k->h, k->h + n, (k->n - n) * sizeof(k->h[0]));
    k->n -= n;
}

static struct slab_cache *cache_make(void) {
    /* Plain calloc: the caches are the allocator's own, not data. */
    struct slab_cache *t = calloc(NCLASSES, sizeof(*t));
    if (!t) abort();
    tcache = t;
    pthread_setspecific(cache_key, t);
    return t;
}

static void cache_gone(void *arg) {
    struct slab_cache *t = arg;
    for (int c = 1; c < NCLASSES; c++) spill(c, &t[c], t[c].n);
    free(t);
    tcache = NULL;
}

void slab_thread_flush(void) {
    if (!tcache) return;
    for (int c = 1; c < NCLASSES; c++) spill(c, &tcache[c], tcache[c].n);
}

void *slab_alloc(size_t size) {
    int c = (int)((size + SLAB_GRAIN - 1) / SLAB_GRAIN);
    if (c == 0) c = 1;
    struct slab_cache *t = tcache ? tcache : cache_make();
    struct slab_cache *k = &t[c];
    if (!k->n && !refill(c, k, CACHE_BATCH)) return NULL;
    void *p = slab_ptr(k->h[--k->n]);
    size_t sz = (size_t)c * SLAB_GRAIN;
    UNPOISON(p, sz);
    hk_account((long long)sz);
    return p;
}

size_t slab_usable(const void *p) {
    size_t pg = (size_t)((const char *)p - slab_base) >> PAGE_SHIFT;
    return (size_t)page_class[pg] * SLAB_GRAIN;
}

void slab_free(void *p) {
    size_t pg = (size_t)((char *)p - slab_base) >> PAGE_SHIFT;
    int c = page_class[pg];
    size_t sz = (size_t)c * SLAB_GRAIN;
    hk_account(-(long long)sz);
    POISON(p, sz);
    struct slab_cache *t = tcache ? tcache : cache_make();
    struct slab_cache *k = &t[c];
    if (k->n == CACHE_MAX) spill(c, k, CACHE_BATCH);
    k->h[k->n++] = slab_handle(p);
}

size_t slab_committed_bytes(void) {
    size_t n = atomic_load_explicit(&next_page, memory_order_relaxed);
    if (n > npages) n = npages;
    return (n - 1) << PAGE_SHIFT;
}
