/* memstats.c - where the memory goes (see memstats.h). */
#include "memstats.h"

#include "../core/alloc.h"
#include "../core/buf.h"
#include "../store/db.h"
#include "aof.h"
#include "clientmem.h"
#include "function.h"
#include "script.h"
#include "server.h"
#include "stats.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static _Atomic size_t startup_bytes;

void memstats_startup(void) { atomic_store(&startup_bytes, hk_used_memory()); }
size_t memstats_startup_bytes(void) { return atomic_load(&startup_bytes); }

static double ratio(size_t a, size_t b) { return b ? (double)a / (double)b : 0.0; }

void memstats_get(struct mem_overhead *m, int locked) {
    memset(m, 0, sizeof(*m));
    size_t used = hk_used_memory();
    m->total = used;
    m->startup = memstats_startup_bytes();
    m->peak = stats_peak_memory(used);
    m->rss = hk_rss_bytes();
    hk_allocator_stats(&m->alloc_allocated, &m->alloc_active, &m->alloc_resident);
    /* mimalloc counts what it committed, which Linux maps only when first
     * touched: no more of it can be resident than the process is. */
    if (m->alloc_active > m->rss) m->alloc_active = m->rss;
    if (m->alloc_resident > m->rss) m->alloc_resident = m->rss;
    size_t sum = m->startup;
    m->clients_normal = clientmem_total();
    sum += m->clients_normal;
    m->aof_buffer = (size_t)aof_buffer_bytes();
    sum += m->aof_buffer;
    unsigned long long nscripts, sbytes;
    script_cache_stats(&nscripts, &sbytes);
    m->scripts = nscripts;
    m->lua_caches = (size_t)sbytes;
    sum += m->lua_caches;
    m->functions_caches = fn_memory();
    sum += m->functions_caches;
    unsigned long long *dkeys = hk_malloc(sizeof(*dkeys) * (size_t)ks.ndb);
    size_t *dbytes = hk_malloc(sizeof(*dbytes) * (size_t)ks.ndb);
    ks_table_usage(locked, dkeys, dbytes);
    for (int d = 0; d < ks.ndb; d++) {
        unsigned long long keys = dkeys[d];
        if (!keys) continue;
        m->keys += keys;
        /* MEMORY USAGE counts one bucket handle with each key: what the
         * arrays hold beyond that is the table's overhead. */
        size_t t = dbytes[d], share = (size_t)keys * KV_BUCKET_SHARE;
        t = t > share ? t - share : 0;
        sum += t;
        if (m->ndbs < MEMSTATS_MAX_DB) {
            m->dbs[m->ndbs].db = d;
            m->dbs[m->ndbs].ht_main = t;
            m->dbs[m->ndbs].ht_expires = 0; /* no separate expires table */
            m->ndbs++;
        } else {
            m->dbs_other += t;
        }
    }
    hk_free(dkeys);
    hk_free(dbytes);
    m->overhead_total = sum;
    m->dataset = used > sum ? used - sum : 0;
    m->peak_perc = m->peak ? (double)used * 100 / (double)m->peak : 0.0;
    size_t net = used > m->startup ? used - m->startup : 1;
    m->dataset_perc = (double)m->dataset * 100 / (double)net;
    m->bytes_per_key = m->keys ? net / m->keys : 0;
    m->total_frag = ratio(m->rss, used);
    m->total_frag_bytes = (long long)m->rss - (long long)used;
    m->alloc_frag = ratio(m->alloc_active, m->alloc_allocated);
    m->alloc_frag_bytes = (long long)m->alloc_active - (long long)m->alloc_allocated;
    m->alloc_rss = ratio(m->alloc_resident, m->alloc_active);
    m->alloc_rss_bytes = (long long)m->alloc_resident - (long long)m->alloc_active;
    m->rss_extra = ratio(m->rss, m->alloc_resident);
    m->rss_extra_bytes = (long long)m->rss - (long long)m->alloc_resident;
    m->clients = (unsigned long long)atomic_load(&server.nclients);
}

static void cat(struct hk_buf *b, const char *s) { hk_buf_add(b, s, strlen(s), 1024); }

char *memstats_doctor(int locked) {
    struct mem_overhead m;
    memstats_get(&m, locked);
    int empty = 0, peak = 0, frag = 0, afrag = 0, arss = 0, prss = 0, clients = 0, scripts = 0;
    /* Redis's thresholds: under 5 MB nothing can be told; otherwise a
     * peak past 150% of now, ratios past 1.4 (total) or 1.1 (allocator,
     * its RSS, the process beyond it) with more than 10 MB at stake,
     * clients averaging more than 200 KB, more than 1000 cached scripts. */
    if (m.total < 5u << 20) {
        empty = 1;
    } else {
        peak = ratio(m.peak, m.total) > 1.5;
        frag = m.total_frag > 1.4 && m.total_frag_bytes > 10 << 20;
        afrag = m.alloc_frag > 1.1 && m.alloc_frag_bytes > 10 << 20;
        arss = m.alloc_rss > 1.1 && m.alloc_rss_bytes > 10 << 20;
        prss = m.rss_extra > 1.1 && m.rss_extra_bytes > 10 << 20;
        clients = m.clients && m.clients_normal / m.clients > 200 * 1024;
        scripts = m.scripts > 1000;
    }
    struct hk_buf b = {0};
    if (empty) {
        cat(&b, "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in "
                "these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam "
                "and I will be back to our programming as soon as I finished rebooting.\n");
    } else if (!(peak || frag || afrag || arss || prss || clients || scripts)) {
        cat(&b, "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this "
                "base.\n");
    } else {
        cat(&b, "Sam, I detected a few issues in this Redis instance memory implants:\n\n");
        if (peak)
            cat(&b, " * Peak memory: In the past this instance used more than 150% the memory that is currently "
                    "using. The allocator is normally not able to release memory after a peak, so you can expect to "
                    "see a big fragmentation ratio, however this is actually harmless and is only due to the memory "
                    "peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the "
                    "memory will be used as soon as you fill the Redis instance with more data. If the memory peak "
                    "was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, "
                    "otherwise the only other option is to shutdown and restart the instance.\n\n");
        if (frag) {
            char line[1024];
            snprintf(line, sizeof(line),
                     " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 "
                     "(this means that the Resident Set Size of the Redis process is much larger than the sum of the "
                     "logical allocations Redis performed). This problem is usually due either to a large peak "
                     "memory (check if there is a peak memory entry above in the report) or may result from a "
                     "workload that causes the allocator to fragment memory a lot. If the problem is a large peak "
                     "memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and "
                     "not the default libc malloc. Note: The currently used allocator is \"%s\".\n\n",
                     hk_allocator_name());
            cat(&b, line);
        }
        if (afrag)
            cat(&b, " * High allocator fragmentation: This instance has an allocator external fragmentation greater "
                    "than 1.1. This problem is usually due either to a large peak memory (check if there is a peak "
                    "memory entry above in the report) or may result from a workload that causes the allocator to "
                    "fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n");
        if (arss)
            cat(&b, " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 "
                    "(this means that the Resident Set Size of the allocator is much larger than the sum what the "
                    "allocator actually holds). This problem is usually due to a large peak memory (check if there "
                    "is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim "
                    "it.\n\n");
        if (prss)
            cat(&b, " * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater "
                    "than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the "
                    "RSS the allocator holds). This problem may be due to Lua scripts or Modules.\n\n");
        if (clients)
            cat(&b, " * Big client buffers: The clients output buffers in this instance are greater than 200K per "
                    "client (on average). This may result from different causes, like Pub/Sub clients subscribed to "
                    "channels bot not receiving data fast enough, so that data piles on the Redis instance output "
                    "buffer, or clients sending commands with large replies or very large sequences of commands in "
                    "the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it "
                    "causes problems in your instance, or to understand better why certain clients are using a big "
                    "amount of memory.\n\n");
        if (scripts)
            cat(&b, " * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This "
                    "may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS "
                    "and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the "
                    "scripts' caches may end up consuming most of your memory.\n\n");
        cat(&b, "I'm here to keep you safe, Sam. I want to help you.\n");
    }
    hk_buf_add(&b, "", 1, 1024);
    return b.p;
}
