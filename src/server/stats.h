/* stats.h - statistics summed over workers, sampled rates and resets
 * (src/server/stats.c). */
#ifndef HK_STATS_H
#define HK_STATS_H

#include <stddef.h>

struct worker;

enum { STATS_INST_OPS, STATS_INST_NET_IN, STATS_INST_NET_OUT, STATS_INST_N };

/* Sums of every worker's counters at one moment (not a snapshot: each is
 * read once, relaxed). */
struct stats_totals {
    unsigned long long conns, cmds, rejected, net_in, net_out, expired, hits, misses, dirty, errors;
    unsigned long long qbuf_disc, obuf_disc, reads, writes, unexpected, evicted_clients, evicted_keys;
    long long clients;
    unsigned long long blocked, blocked_timeout, blocking_keys;
    unsigned long long lock_contended, lock_wait_ns;
};
void stats_totals(struct stats_totals *t);
/* Per-second rate of a metric, averaged over the last samples. */
long long stats_inst(int metric);
/* The memory peak, raised to `used` first (INFO sees its own usage). */
size_t stats_peak_memory(size_t used);
/* Worker 0's cron: take a sample every 100 ms, raise the memory peak. */
void stats_cron(struct worker *w);
/* Zero the counters worker w owns (run on w's own thread), and the
 * process-wide samples and peak. */
void stats_reset_worker(struct worker *w);
void stats_reset_global(void);

#endif
