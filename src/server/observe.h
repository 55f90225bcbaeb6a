/* observe.h - what the server records about the commands it runs: the
 * slow log (slowlog.c), the latency monitor's events and the per-command
 * latency histograms (latency.c), and the MONITOR feed (monitor.c).
 *
 * One measurement per command feeds all of them: client_count_call
 * (server.h) takes the handler's time that commandstats counts, records
 * it into the calling worker's histogram of the command, and only when it
 * reaches obs_slow_ns (the lower of the slow-log and latency-monitor
 * thresholds, LLONG_MAX when both are off) calls observe_slow, which may
 * take a lock. Nothing here writes replies: the SLOWLOG, LATENCY and
 * MONITOR handlers (src/cmd/observe.c) read what these files keep.
 *
 * Ownership (docs/threads.md): a worker's histograms are written by that
 * worker only and read by anyone with relaxed loads; the slow log and
 * the latency events sit behind their own leaf locks; the monitor list
 * and each monitor's pending lines behind monitor_lock. */
#ifndef HK_OBSERVE_H
#define HK_OBSERVE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct client;
struct command;
struct worker;
struct hk_slice;

/* ---- the shared threshold ----------------------------------------------- */

extern _Atomic long long obs_slow_ns;
/* Recompute obs_slow_ns from slowlog-log-slower-than and
 * latency-monitor-threshold, and trim the slow log to slowlog-max-len:
 * the apply step of those config rows. Returns 1. */
int observe_config_changed(char *err, size_t errsize);
/* A finished command at or past obs_slow_ns: the slow log and the
 * "command"/"fast-command" latency event, each against its own threshold.
 * The logged arguments are c->ctx.argv/argc. */
void observe_slow(struct client *c, const struct command *cmd, long long nsec);

/* ---- latency histograms --------------------------------------------------- */

/* Log-linear buckets over 1 ns .. 1 s with 256 sub-buckets per power of
 * two (two significant digits, HdrHistogram's layout, so bucket bounds
 * and percentiles come out as Redis's). */
#define LH_MIN_NS 1
#define LH_MAX_NS 1000000000LL
#define LH_SUB_BITS 8
#define LH_HALF (1 << (LH_SUB_BITS - 1))
#define LH_COUNTS 3072 /* past the index of LH_MAX_NS (3054), in whole chunks */

/* Bucket counts only (the number of calls is their sum, lat_hist_merge),
 * in chunks of one power of two each, allocated when a call first lands
 * in one: a command's calls usually span a few powers of two, so a
 * histogram costs a few KB per command and worker, not all 24 KB. */
#define LH_CHUNK (1 << (LH_SUB_BITS - 1))
#define LH_NCHUNKS (LH_COUNTS / LH_CHUNK)
struct lat_hist {
    _Atomic unsigned long long *_Atomic chunk[LH_NCHUNKS];
};

static inline int lh_index(long long v) {
    /* One test for both ends in the common case. */
    if (__builtin_expect((unsigned long long)(v - LH_MIN_NS) >= (unsigned long long)(LH_MAX_NS - LH_MIN_NS), 0))
        v = v < LH_MIN_NS ? LH_MIN_NS : LH_MAX_NS;
    uint64_t u = (uint64_t)v;
    int pow2 = 63 - __builtin_clzll(u | (uint64_t)(2 * LH_HALF - 1));
    int bucket = pow2 - (LH_SUB_BITS - 1);
    return (bucket << (LH_SUB_BITS - 1)) + (int)(u >> bucket);
}
/* The lowest and highest value that land in index i. */
static inline long long lh_lowest(int i) {
    int bucket = i < 2 * LH_HALF ? 0 : (i >> (LH_SUB_BITS - 1)) - 1;
    long long sub = i - ((long long)bucket << (LH_SUB_BITS - 1));
    return sub << bucket;
}
static inline long long lh_highest(int i) {
    int bucket = i < 2 * LH_HALF ? 0 : (i >> (LH_SUB_BITS - 1)) - 1;
    return lh_lowest(i) + (1LL << bucket) - 1;
}

/* The calling worker's histogram slot of command id (allocated on first
 * use, published with a release store). */
struct lat_hist *lat_hist_new(struct lat_hist *_Atomic *slots, int id);
_Atomic unsigned long long *lat_chunk_new(struct lat_hist *h, int c);
static inline void lat_record(struct lat_hist *_Atomic *slots, int id, long long ns) {
    struct lat_hist *h = atomic_load_explicit(&slots[id], memory_order_relaxed);
    if (__builtin_expect(!h, 0)) h = lat_hist_new(slots, id);
    int i = lh_index(ns);
    _Atomic unsigned long long *chunk = atomic_load_explicit(&h->chunk[i / LH_CHUNK], memory_order_relaxed);
    if (__builtin_expect(!chunk, 0)) chunk = lat_chunk_new(h, i / LH_CHUNK);
    _Atomic unsigned long long *b = &chunk[i % LH_CHUNK];
    atomic_store_explicit(b, atomic_load_explicit(b, memory_order_relaxed) + 1, memory_order_relaxed);
}
/* Sum every worker's histogram of command id into counts[LH_COUNTS];
 * returns the total (0: no data). */
unsigned long long lat_hist_merge(int id, unsigned long long *counts);
/* Value (ns) at percentile p of a merged histogram, as HdrHistogram
 * reports it (the highest value of the bucket reaching the count). */
long long lat_hist_percentile(const unsigned long long *counts, unsigned long long total, double p);
/* Zero worker w's histograms (on w's thread: CONFIG RESETSTAT). */
void lat_hist_reset_worker(struct worker *w);
/* latency-tracking-info-percentiles: copy up to max values out, returns
 * how many are set. */
int lat_info_percentiles(double *out, int max);
int lat_percentiles_set(const char *value, char *err, size_t errsize);
void lat_percentiles_get(char *buf, size_t size);
/* A percentile as INFO and CONFIG GET print it: "%f" less trailing zeros. */
void lat_fmt_percentile(char *buf, size_t size, double v);

/* ---- latency monitor events --------------------------------------------- */

#define LAT_TS_LEN 160 /* samples kept per event, one per second at most */
#define LAT_MAX_EVENTS 32

struct lat_sample {
    int64_t time; /* unix seconds, 0: unused */
    uint32_t ms;
};
/* A copy of one event's series (latency_events_copy). */
struct lat_event {
    char name[32];
    int idx; /* next slot to write */
    uint32_t max;
    struct lat_sample s[LAT_TS_LEN];
};

/* Record `ms` for event when latency-monitor-threshold is on and ms
 * reaches it. */
void latency_sample_if_needed(const char *event, long long ms);
/* Copy the events out (creation order); returns the count. */
int latency_events_copy(struct lat_event *out, int max);
/* Forget one event (name, case-insensitive) or all (NULL); returns how
 * many were forgotten. */
int latency_reset(const char *name, size_t len);

/* ---- slow log ------------------------------------------------------------- */

#define SLOWLOG_MAX_ARGC 32
#define SLOWLOG_MAX_STRING 128

struct slowlog_entry {
    struct slowlog_entry *next, *prev;
    long long id, time, duration_us;
    int argc;
    struct hk_slice *argv; /* own copies, trimmed as Redis trims them */
    char *peer, *name;
};
/* Under the slow log's lock: fn(arg, NULL, n) with the number n of
 * entries to be visited (the newest `count`, all when count < 0, at most
 * as many as there are), then fn(arg, e, n) for each, newest first. fn
 * may write replies but must not take this file's lock. */
typedef void (*slowlog_visit_fn)(void *arg, const struct slowlog_entry *e, long long n);
void slowlog_visit(long long count, slowlog_visit_fn fn, void *arg);
long long slowlog_len(void);
/* Log a command of client c that took duration_us (c->ctx.argv). */
void slowlog_push(struct client *c, const struct command *cmd, long long duration_us);
/* Drop the oldest entries past slowlog-max-len. */
void slowlog_trim(void);
void slowlog_reset(void);

/* ---- MONITOR -------------------------------------------------------------- */

/* Monitors attached right now: the request path's only cost while nobody
 * monitors is one relaxed load of it. */
extern _Atomic int monitor_count;
/* Start feeding client c (on its worker's thread). */
void monitor_attach(struct client *c);
/* Stop feeding c (RESET, disconnect): on its worker's thread. */
void monitor_detach(struct client *c);
/* Show a command that ran on client c in database db to every monitor. */
/* Feed one command to every monitor: c is the connection that ran it, or
 * NULL for a command a script ran ("[db lua]"). Takes monitor_lock, which
 * may be taken under shard locks (EXEC and scripts feed their inner
 * commands as they run) and under which only mbox_lock is taken. */
void monitor_feed(struct client *c, const struct command *cmd, const struct hk_slice *argv, int argc, int db);

/* Whether argument i of cmd's argv is a secret Redis shows as
 * "(redacted)" (AUTH's password, HELLO's AUTH pair, the value of a
 * sensitive setting in CONFIG SET). */
int observe_redacted(const struct command *cmd, const struct hk_slice *argv, int argc, int i);

#endif
