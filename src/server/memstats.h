/* memstats.h - where the memory goes: the figures of INFO memory, MEMORY
 * STATS and MEMORY DOCTOR, as Redis's getMemoryOverheadData gathers them.
 *
 * used_memory is the allocator wrapper's count. The overhead is what is
 * not the dataset: the memory in use when the server had started, the
 * clients' buffers, the AOF's unwritten buffer, the script and function
 * caches, and the keyspace's bucket arrays beyond one pointer per key; the
 * dataset is the rest (key entries, values, a bucket pointer each), which
 * MEMORY USAGE adds up key by key. */
#ifndef HK_MEMSTATS_H
#define HK_MEMSTATS_H

#include <stddef.h>

#define MEMSTATS_MAX_DB 64

struct mem_overhead {
    size_t total, startup, peak;
    size_t clients_normal, aof_buffer, lua_caches, functions_caches;
    int ndbs;
    struct {
        int db;
        size_t ht_main, ht_expires;
    } dbs[MEMSTATS_MAX_DB];
    size_t dbs_other;  /* bucket arrays of databases past MEMSTATS_MAX_DB */
    size_t overhead_total, dataset;
    unsigned long long keys;
    size_t bytes_per_key;
    double dataset_perc, peak_perc;
    size_t rss;
    size_t alloc_allocated, alloc_active, alloc_resident;
    double total_frag, alloc_frag, alloc_rss, rss_extra;
    long long total_frag_bytes, alloc_frag_bytes, alloc_rss_bytes, rss_extra_bytes;
    unsigned long long scripts, clients;
};

/* Record used memory as the server's start-up figure (once, after the
 * workers started). */
void memstats_startup(void);
size_t memstats_startup_bytes(void);
/* Gather the figures; takes every shard in turn, briefly, unless `locked`
 * (the caller, a transaction, holds them all). */
void memstats_get(struct mem_overhead *m, int locked);
/* MEMORY DOCTOR's report (an allocation the caller frees). */
char *memstats_doctor(int locked);

#endif
