/* alloc.c - allocator wrapper with per-thread byte accounting.
 *
 * With HK_MIMALLOC the memory comes from mimalloc (per-thread heaps, free
 * from any thread); otherwise from libc, which is what the sanitizer builds
 * use so that ASan/TSan see every allocation. The accounting is exact with
 * respect to the allocator's usable sizes. */
#include "alloc.h"
#include "slab.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HK_MIMALLOC
#include <mimalloc.h>
#define RAW_MALLOC mi_malloc
#define RAW_CALLOC mi_calloc
#define RAW_REALLOC mi_realloc
#define RAW_FREE mi_free
#define RAW_USABLE mi_usable_size

/* Ask mimalloc to back its segments with 2 MiB pages (transparent huge
 * pages through madvise): a keyspace is read at random, and on a VM every
 * TLB miss is a two-level page walk. Measured with bench/redis_benchmark.sh:
 * about 15% less server CPU per GET and 20% per 10-key MGET at pipeline 16
 * over 1M keys. MIMALLOC_LARGE_OS_PAGES=0 in the environment turns it off
 * (a fork-based snapshot would copy 2 MiB per written page). */
__attribute__((constructor)) static void alloc_large_pages(void) {
    if (!getenv("MIMALLOC_LARGE_OS_PAGES")) mi_option_enable(mi_option_large_os_pages);
}
#else
#include <malloc.h>
#define RAW_MALLOC malloc
#define RAW_CALLOC calloc
#define RAW_REALLOC realloc
#define RAW_FREE free
#define RAW_USABLE malloc_usable_size
#endif

#define HK_ALLOC_SLOTS 256

/* One counter per thread slot, each on its own cache line. A slot is written
 * only by its owning thread except slot 0, shared by unregistered threads. */
static struct {
    _Atomic long long bytes;
    char pad[64 - sizeof(long long)];
} slots[HK_ALLOC_SLOTS];

static _Atomic int next_slot = 1;
static _Thread_local int my_slot = 0;

int hk_alloc_thread_init(void) {
    int s = atomic_fetch_add(&next_slot, 1);
    if (s >= HK_ALLOC_SLOTS) s = 0;
    my_slot = s;
    return s;
}

static inline void account(long long delta) {
    if (my_slot == 0) {
        atomic_fetch_add_explicit(&slots[0].bytes, delta, memory_order_relaxed);
    } else {
        /* Single writer: a load and a store are enough and cost no lock. */
        long long v = atomic_load_explicit(&slots[my_slot].bytes, memory_order_relaxed);
        atomic_store_explicit(&slots[my_slot].bytes, v + delta, memory_order_relaxed);
    }
}

void hk_account(long long delta) { account(delta); }

static void oom(size_t size) {
    fprintf(stderr, "hotkv: out of memory allocating %zu bytes\n", size);
    fflush(stderr);
    abort();
}

void *hk_malloc(size_t size) {
    void *p = RAW_MALLOC(size ? size : 1);
    if (!p) oom(size);
    account((long long)RAW_USABLE(p));
    return p;
}

void *hk_calloc(size_t n, size_t size) {
    void *p = RAW_CALLOC(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    account((long long)RAW_USABLE(p));
    return p;
}

void *hk_realloc(void *ptr, size_t size) {
    if (!ptr) return hk_malloc(size);
    size_t old = RAW_USABLE(ptr);
    void *p = RAW_REALLOC(ptr, size ? size : 1);
    if (!p) oom(size);
    account((long long)RAW_USABLE(p) - (long long)old);
    return p;
}

void hk_free(void *ptr) {
    if (!ptr) return;
    account(-(long long)RAW_USABLE(ptr));
    RAW_FREE(ptr);
}

size_t hk_usable_size(void *ptr) { return ptr ? RAW_USABLE(ptr) : 0; }

#ifdef HK_MIMALLOC
size_t hk_good_size(size_t size) { return mi_good_size(size ? size : 1); }
#else
/* The sanitizers' allocators report exactly the requested size. */
size_t hk_good_size(size_t size) { return size ? size : 1; }
#endif

char *hk_strndup(const char *s, size_t n) {
    char *d = hk_malloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *hk_strdup(const char *s) { return hk_strndup(s, strlen(s)); }

long long hk_thread_allocated(void) { return atomic_load_explicit(&slots[my_slot].bytes, memory_order_relaxed); }

size_t hk_used_memory(void) {
    long long sum = 0;
    /* Only slots handed out so far can hold bytes. */
    int n = atomic_load_explicit(&next_slot, memory_order_relaxed);
    if (n > HK_ALLOC_SLOTS) n = HK_ALLOC_SLOTS;
    for (int i = 0; i < n; i++)
        sum += atomic_load_explicit(&slots[i].bytes, memory_order_relaxed);
    return sum > 0 ? (size_t)sum : 0;
}

size_t hk_rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long size = 0, rss = 0;
    if (fscanf(f, "%lu %lu", &size, &rss) != 2) rss = 0;
    fclose(f);
    return (size_t)rss * (size_t)sysconf(_SC_PAGESIZE);
}

const char *hk_allocator_name(void) {
#ifdef HK_MIMALLOC
    return "mimalloc";
#else
    return "libc";
#endif
}

void hk_allocator_stats(size_t *allocated, size_t *active, size_t *resident) {
    *allocated = hk_used_memory();
#ifdef HK_MIMALLOC
    size_t elapsed, user, sys, rss, peak_rss, commit, peak_commit, faults;
    mi_process_info(&elapsed, &user, &sys, &rss, &peak_rss, &commit, &peak_commit, &faults);
    /* The slab's pages are mapped beside mimalloc's, not through it. */
    commit += slab_committed_bytes();
    *active = commit;
    *resident = commit;
#else
    *active = *allocated;
    *resident = *allocated;
#endif
}

void hk_allocator_purge(void) {
#ifdef HK_MIMALLOC
    mi_collect(true);
#endif
}

#ifdef HK_MIMALLOC
struct report_sink {
    void (*out)(const char *line, void *arg);
    void *arg;
};

static void report_line(const char *msg, void *arg) {
    struct report_sink *r = arg;
    r->out(msg, r->arg);
}
#endif

int hk_allocator_report(void (*out)(const char *line, void *arg), void *arg) {
#ifdef HK_MIMALLOC
    struct report_sink r = {out, arg};
    mi_stats_print_out(report_line, &r);
    return 1;
#else
    (void)out;
    (void)arg;
    return 0;
#endif
}
