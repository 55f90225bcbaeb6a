/* stats.c - the server's statistics: per-worker counters summed on read,
 * the instantaneous rates and memory peak sampled by worker 0's cron, and
 * CONFIG RESETSTAT's resets. INFO (src/cmd/info.c) formats what this file
 * computes; nothing here writes a reply. */
#include "stats.h"

#include "../core/alloc.h"
#include "../core/util.h"
#include "creply.h"
#include "lazyfree.h"
#include "server.h"

#include <string.h>

/* ---- instantaneous metrics and peak memory --------------------------------- */

#define INST_SAMPLES 16
#define INST_PERIOD_MS 100
#define INST_N STATS_INST_N

/* Written by worker 0 only (last_*), samples read by any thread. */
static long long inst_last_ms;
static unsigned long long inst_last[INST_N];
static _Atomic long long inst_samples[INST_N][INST_SAMPLES];
static _Atomic int inst_idx;
static _Atomic size_t peak_memory;

static void peak_update(size_t used) {
    size_t cur = atomic_load_explicit(&peak_memory, memory_order_relaxed);
    while (used > cur && !atomic_compare_exchange_weak(&peak_memory, &cur, used)) {
    }
}

static void sum_counters(unsigned long long out[INST_N]) {
    out[STATS_INST_OPS] = out[STATS_INST_NET_IN] = out[STATS_INST_NET_OUT] = 0;
    for (int i = 0; i < server.nworkers; i++) {
        struct worker *w = &server.workers[i];
        out[STATS_INST_OPS] += stat_get(&w->stats.commands_processed);
        out[STATS_INST_NET_IN] += stat_get(&w->stats.net_input_bytes);
        out[STATS_INST_NET_OUT] += stat_get(&w->stats.net_output_bytes);
    }
}

/* Called from worker 0's cron: one sample per metric every 100 ms (per
 * second rates, averaged over the last 16 samples on read, as Redis does),
 * and the memory peak. */
void stats_cron(struct worker *w) {
    if (w->id != 0) return;
    peak_update(hk_used_memory());
    long long now = w->now_ms;
    if (inst_last_ms && now - inst_last_ms < INST_PERIOD_MS) return;
    unsigned long long cur[INST_N];
    sum_counters(cur);
    if (inst_last_ms) {
        long long dt = now - inst_last_ms;
        int idx = atomic_load_explicit(&inst_idx, memory_order_relaxed);
        for (int m = 0; m < INST_N; m++) {
            /* Counters go back to 0 after CONFIG RESETSTAT: no negative rate. */
            unsigned long long d = cur[m] >= inst_last[m] ? cur[m] - inst_last[m] : 0;
            atomic_store_explicit(&inst_samples[m][idx], (long long)(d * 1000 / (unsigned long long)dt),
                                  memory_order_relaxed);
        }
        atomic_store_explicit(&inst_idx, (idx + 1) % INST_SAMPLES, memory_order_relaxed);
    }
    inst_last_ms = now;
    memcpy(inst_last, cur, sizeof(cur));
}

long long stats_inst(int m) {
    long long sum = 0;
    for (int i = 0; i < INST_SAMPLES; i++) sum += atomic_load_explicit(&inst_samples[m][i], memory_order_relaxed);
    return sum / INST_SAMPLES;
}

/* ---- resetting -------------------------------------------------------------- */

static void zero(stat_t *s) { atomic_store_explicit(s, 0, memory_order_relaxed); }

/* Runs on w's own thread (through worker_broadcast): w is the only writer
 * of these counters, so zeroing them here races with nothing. The dirty
 * counters are left alone: Redis does not reset rdb_changes_since_last_save. */
void stats_reset_worker(struct worker *w) {
    struct worker_stats *s = &w->stats;
    zero(&s->connections_received);
    zero(&s->commands_processed);
    zero(&s->rejected_conn);
    zero(&s->net_input_bytes);
    zero(&s->net_output_bytes);
    zero(&s->expired_keys);
    zero(&s->expired_stale_perc);
    zero(&s->keyspace_hits);
    zero(&s->keyspace_misses);
    zero(&s->total_errors);
    zero(&s->evicted_clients);
    zero(&s->evicted_keys);
    zero(&s->client_qbuf_limit_disconnections);
    zero(&s->client_outbuf_limit_disconnections);
    zero(&s->io_reads);
    zero(&s->io_writes);
    zero(&s->unexpected_error_replies);
    zero(&s->total_reads_processed);
    zero(&s->total_writes_processed);
    zero(&w->sstats.expired);
    zero(&w->sstats.expired_active);
    zero(&w->sstats.hits);
    zero(&w->sstats.misses);
    int total = commands_total();
    for (int i = 0; i < total; i++) {
        zero(&w->cmdstats[i].calls);
        zero(&w->cmdstats[i].nsec);
        zero(&w->cmdstats[i].rejected);
        zero(&w->cmdstats[i].failed);
    }
    for (int i = 0; i < HK_MAX_ERRSTATS; i++) zero(&w->errorstats[i]);
    lat_hist_reset_worker(w);
}

void stats_reset_global(void) {
    for (int m = 0; m < INST_N; m++)
        for (int i = 0; i < INST_SAMPLES; i++) atomic_store_explicit(&inst_samples[m][i], 0, memory_order_relaxed);
    atomic_store(&peak_memory, hk_used_memory());
    atomic_store(&server.stat_reset_ms, hk_mstime());
    lazyfree_reset_stats();
}

/* ---- sums over workers ------------------------------------------------------ */

void stats_totals(struct stats_totals *t) {
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < server.nworkers; i++) {
        struct worker *w = &server.workers[i];
        t->conns += stat_get(&w->stats.connections_received);
        t->cmds += stat_get(&w->stats.commands_processed);
        t->rejected += stat_get(&w->stats.rejected_conn);
        t->net_in += stat_get(&w->stats.net_input_bytes);
        t->net_out += stat_get(&w->stats.net_output_bytes);
        t->expired += stat_get(&w->sstats.expired) + stat_get(&w->stats.expired_keys);
        t->hits += stat_get(&w->sstats.hits) + stat_get(&w->stats.keyspace_hits);
        t->misses += stat_get(&w->sstats.misses) + stat_get(&w->stats.keyspace_misses);
        t->dirty += stat_get(&w->sstats.dirty) + stat_get(&w->stats.dirty);
        t->errors += stat_get(&w->stats.total_errors);
        t->qbuf_disc += stat_get(&w->stats.client_qbuf_limit_disconnections);
        t->obuf_disc += stat_get(&w->stats.client_outbuf_limit_disconnections);
        t->reads += stat_get(&w->stats.total_reads_processed);
        t->writes += stat_get(&w->stats.total_writes_processed);
        t->unexpected += stat_get(&w->stats.unexpected_error_replies);
        t->evicted_clients += stat_get(&w->stats.evicted_clients);
        t->evicted_keys += stat_get(&w->stats.evicted_keys);
        t->clients += atomic_load_explicit(&w->nclients, memory_order_relaxed);
        /* Clients held by CLIENT PAUSE count as blocked, as in Redis. */
        t->blocked += stat_get(&w->nblocked) + stat_get(&w->npaused);
        t->blocked_timeout += stat_get(&w->nblocked_timeout);
        /* Each worker counts the keys it registered minus those it
         * released; only the sum (modulo 2^64) is meaningful. */
        t->blocking_keys += stat_get(&w->nblocking_keys);
        t->lock_contended += stat_get(&w->sstats.lock_contended);
        t->lock_wait_ns += stat_get(&w->sstats.lock_wait_ns);
    }
}

size_t stats_peak_memory(size_t used) {
    peak_update(used);
    return atomic_load(&peak_memory);
}
