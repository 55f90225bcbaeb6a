/* info.c - the INFO command and the statistics behind it.
 *
 * INFO speaks Redis 7.2's section and field names so dashboards, exporters
 * and client libraries read it unchanged. Counters are per worker
 * (single-writer atomics, see server.h) and are summed here on read; the
 * instantaneous rates come from samples that worker 0 takes in its cron.
 * Fields for machinery HotKV does not have (forks, RDB/AOF, replicas, defrag)
 * report the idle values Redis reports when that machinery is idle, which
 * is the truth here. This file does not reset or own any per-request state:
 * CONFIG RESETSTAT asks each worker to zero its own counters
 * (stats_reset_worker). */
#include "../core/alloc.h"
#include "../server/config.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"

#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ---- instantaneous metrics and peak memory --------------------------------- */

#define INST_SAMPLES 16
#define INST_PERIOD_MS 100
enum { INST_OPS, INST_NET_IN, INST_NET_OUT, INST_N };

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
    out[INST_OPS] = out[INST_NET_IN] = out[INST_NET_OUT] = 0;
    for (int i = 0; i < server.nworkers; i++) {
        struct worker *w = &server.workers[i];
        out[INST_OPS] += stat_get(&w->stats.commands_processed);
        out[INST_NET_IN] += stat_get(&w->stats.net_input_bytes);
        out[INST_NET_OUT] += stat_get(&w->stats.net_output_bytes);
    }
}

/* Called from worker 0's cron: one sample per metric every 100 ms (per
 * second rates, averaged over the last 16 samples on read, as Redis does),
 * and the memory peak. */
void info_cron(struct worker *w) {
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

static long long inst_get(int m) {
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
}

void stats_reset_global(void) {
    for (int m = 0; m < INST_N; m++)
        for (int i = 0; i < INST_SAMPLES; i++) atomic_store_explicit(&inst_samples[m][i], 0, memory_order_relaxed);
    atomic_store(&peak_memory, hk_used_memory());
    atomic_store(&server.stat_reset_ms, hk_mstime());
}

/* ---- sums over workers ------------------------------------------------------ */

struct totals {
    unsigned long long conns, cmds, rejected, net_in, net_out, expired, hits, misses, dirty, errors;
    unsigned long long qbuf_disc, obuf_disc, reads, writes, unexpected, evicted_clients;
    long long clients;
    unsigned long long blocked, blocked_timeout, blocking_keys;
};

static void totals_get(struct totals *t) {
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
        t->clients += atomic_load_explicit(&w->nclients, memory_order_relaxed);
        t->blocked += stat_get(&w->nblocked);
        t->blocked_timeout += stat_get(&w->nblocked_timeout);
        /* Each worker counts the keys it registered minus those it
         * released; only the sum (modulo 2^64) is meaningful. */
        t->blocking_keys += stat_get(&w->nblocking_keys);
    }
}

/* ---- sections --------------------------------------------------------------- */

static void bytes_human(char *buf, size_t size, unsigned long long n) {
    static const char units[] = "KMGTP";
    double d = (double)n;
    if (n < 1024) {
        snprintf(buf, size, "%lluB", n);
        return;
    }
    for (int i = 0; units[i]; i++) {
        d /= 1024;
        if (d < 1024 || !units[i + 1]) {
            snprintf(buf, size, "%.2f%c", d, units[i]);
            return;
        }
    }
}

static char replid_buf[41];
static pthread_once_t replid_once = PTHREAD_ONCE_INIT;
static void replid_init(void) { hk_random_hex(replid_buf, 40); }

static void sec_server(struct sbuf *b, struct client *c) {
    struct utsname un;
    uname(&un);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n < 0) snprintf(exe, sizeof(exe), "%s", server.executable ? server.executable : "");
    else exe[n] = '\0';
    struct timeval tv;
    gettimeofday(&tv, NULL);
    long long up = server_uptime_s();
    char clk[64];
    hk_clock_describe(clk, sizeof(clk));
    sb_catf(b,
            "# Server\r\n"
            "redis_version:%s\r\n"
            "redis_git_sha1:00000000\r\n"
            "redis_git_dirty:0\r\n"
            "redis_build_id:0\r\n"
            "redis_mode:standalone\r\n"
            "hotkv_version:%s\r\n"
            "os:%s %s %s\r\n"
            "arch_bits:%d\r\n"
            "monotonic_clock:%s\r\n"
            "multiplexing_api:epoll\r\n"
            "atomicvar_api:c11-builtin\r\n",
            HK_REDIS_COMPAT_VERSION, HOTKV_VERSION, un.sysname, un.release, un.machine, (int)(sizeof(long) * 8),
            clk);
#ifdef __GNUC__
    sb_catf(b, "gcc_version:%d.%d.%d\r\n", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
    sb_catf(b, "gcc_version:0.0.0\r\n");
#endif
    sb_catf(b,
            "process_id:%d\r\n"
            "process_supervised:no\r\n"
            "run_id:%s\r\n"
            "tcp_port:%lld\r\n"
            "server_time_usec:%lld\r\n"
            "uptime_in_seconds:%lld\r\n"
            "uptime_in_days:%lld\r\n"
            "hz:%lld\r\n"
            "configured_hz:%lld\r\n"
            "lru_clock:%u\r\n"
            "executable:%s\r\n"
            "config_file:%s\r\n"
            "io_threads_active:0\r\n"
            "hotkv_threads:%d\r\n",
            (int)getpid(), server.run_id, CFG(port), (long long)tv.tv_sec * 1000000 + tv.tv_usec, up,
            up / 86400, CFG(hz), CFG(hz), lru_clock(c->now_ms), exe, server.config_file ? server.config_file : "",
            server.nworkers);
    int li = 0;
    if (CFG(port)) {
        char *bind = cfg_get_string(&cfg.bind);
        sb_catf(b, "listener%d:name=tcp", li++);
        char *save = NULL;
        for (char *t = strtok_r(bind, " ", &save); t; t = strtok_r(NULL, " ", &save)) sb_catf(b, ",bind=%s", t);
        sb_catf(b, ",port=%lld\r\n", CFG(port));
        hk_free(bind);
    }
    char *us = cfg_get_string(&cfg.unixsocket);
    if (us[0]) sb_catf(b, "listener%d:name=unix,bind=%s\r\n", li++, us);
    hk_free(us);
}

static void sec_clients(struct sbuf *b, const struct totals *t) {
    sb_catf(b,
            "# Clients\r\n"
            "connected_clients:%lld\r\n"
            "cluster_connections:0\r\n"
            "maxclients:%lld\r\n"
            "blocked_clients:%llu\r\n"
            "tracking_clients:0\r\n"
            "clients_in_timeout_table:%llu\r\n"
            "total_blocking_keys:%llu\r\n"
            "total_blocking_keys_on_nokey:0\r\n",
            t->clients, CFG(maxclients), t->blocked, t->blocked_timeout,
            /* The per-worker counters are read one after the other while
             * they move: a release seen before its registration would show
             * a negative sum for a moment. */
            (long long)t->blocking_keys < 0 ? 0ULL : t->blocking_keys);
}

static void sec_memory(struct sbuf *b) {
    size_t used = hk_used_memory(), rss = hk_rss_bytes();
    peak_update(used);
    size_t peak = atomic_load(&peak_memory);
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    unsigned long long sysmem = pages > 0 && psize > 0 ? (unsigned long long)pages * (unsigned long long)psize : 0;
    char h_used[32], h_rss[32], h_peak[32], h_sys[32];
    bytes_human(h_used, sizeof(h_used), used);
    bytes_human(h_rss, sizeof(h_rss), rss);
    bytes_human(h_peak, sizeof(h_peak), peak);
    bytes_human(h_sys, sizeof(h_sys), sysmem);
    sb_catf(b,
            "# Memory\r\n"
            "used_memory:%zu\r\n"
            "used_memory_human:%s\r\n"
            "used_memory_rss:%zu\r\n"
            "used_memory_rss_human:%s\r\n"
            "used_memory_peak:%zu\r\n"
            "used_memory_peak_human:%s\r\n"
            "used_memory_peak_perc:%.2f%%\r\n"
            "total_system_memory:%llu\r\n"
            "total_system_memory_human:%s\r\n"
            "maxmemory:0\r\n"
            "maxmemory_human:0B\r\n"
            "maxmemory_policy:noeviction\r\n"
            "mem_fragmentation_ratio:%.2f\r\n"
            "mem_fragmentation_bytes:%lld\r\n"
            "mem_not_counted_for_evict:0\r\n"
            "mem_replication_backlog:0\r\n"
            "mem_total_replication_buffers:0\r\n"
            "mem_clients_slaves:0\r\n"
            "mem_cluster_links:0\r\n"
            "mem_aof_buffer:0\r\n"
            "mem_allocator:%s\r\n"
            "active_defrag_running:0\r\n",
            used, h_used, rss, h_rss, peak, h_peak, peak ? (double)used * 100 / (double)peak : 0.0, sysmem, h_sys,
            used ? (double)rss / (double)used : 0.0, (long long)rss - (long long)used, hk_allocator_name());
}

static void sec_persistence(struct sbuf *b, const struct totals *t) {
    sb_catf(b,
            "# Persistence\r\n"
            "loading:0\r\n"
            "async_loading:0\r\n"
            "current_cow_peak:0\r\n"
            "current_cow_size:0\r\n"
            "current_cow_size_age:0\r\n"
            "current_fork_perc:0.00\r\n"
            "current_save_keys_processed:0\r\n"
            "current_save_keys_total:0\r\n"
            "rdb_changes_since_last_save:%llu\r\n"
            "rdb_bgsave_in_progress:0\r\n"
            "rdb_last_save_time:%lld\r\n"
            "rdb_last_bgsave_status:ok\r\n"
            "rdb_last_bgsave_time_sec:-1\r\n"
            "rdb_current_bgsave_time_sec:-1\r\n"
            "rdb_saves:0\r\n"
            "rdb_last_cow_size:0\r\n"
            "rdb_last_load_keys_expired:0\r\n"
            "rdb_last_load_keys_loaded:0\r\n"
            "aof_enabled:%d\r\n"
            "aof_rewrite_in_progress:0\r\n"
            "aof_rewrite_scheduled:0\r\n"
            "aof_last_rewrite_time_sec:-1\r\n"
            "aof_current_rewrite_time_sec:-1\r\n"
            "aof_last_bgrewrite_status:ok\r\n"
            "aof_rewrites:0\r\n"
            "aof_rewrites_consecutive_failures:0\r\n"
            "aof_last_write_status:ok\r\n"
            "aof_last_cow_size:0\r\n"
            "module_fork_in_progress:0\r\n"
            "module_fork_last_cow_size:0\r\n",
            t->dirty, atomic_load(&server.lastsave), CFG(appendonly) ? 1 : 0);
}

static void sec_stats(struct sbuf *b, const struct totals *t) {
    sb_catf(b,
            "# Stats\r\n"
            "total_connections_received:%llu\r\n"
            "total_commands_processed:%llu\r\n"
            "instantaneous_ops_per_sec:%lld\r\n"
            "total_net_input_bytes:%llu\r\n"
            "total_net_output_bytes:%llu\r\n"
            "total_net_repl_input_bytes:0\r\n"
            "total_net_repl_output_bytes:0\r\n"
            "instantaneous_input_kbps:%.2f\r\n"
            "instantaneous_output_kbps:%.2f\r\n"
            "instantaneous_input_repl_kbps:0.00\r\n"
            "instantaneous_output_repl_kbps:0.00\r\n"
            "rejected_connections:%llu\r\n"
            "sync_full:0\r\n"
            "sync_partial_ok:0\r\n"
            "sync_partial_err:0\r\n"
            "expired_keys:%llu\r\n"
            "evicted_keys:0\r\n"
            "evicted_clients:%llu\r\n"
            "total_eviction_exceeded_time:0\r\n"
            "current_eviction_exceeded_time:0\r\n"
            "keyspace_hits:%llu\r\n"
            "keyspace_misses:%llu\r\n"
            "latest_fork_usec:0\r\n"
            "total_forks:0\r\n"
            "migrate_cached_sockets:0\r\n"
            "slave_expires_tracked_keys:0\r\n"
            "active_defrag_hits:0\r\n"
            "active_defrag_misses:0\r\n"
            "active_defrag_key_hits:0\r\n"
            "active_defrag_key_misses:0\r\n"
            "total_active_defrag_time:0\r\n"
            "current_active_defrag_time:0\r\n"
            "tracking_total_keys:0\r\n"
            "tracking_total_items:0\r\n"
            "tracking_total_prefixes:0\r\n"
            "unexpected_error_replies:%llu\r\n"
            "total_error_replies:%llu\r\n"
            "dump_payload_sanitizations:0\r\n"
            "total_reads_processed:%llu\r\n"
            "total_writes_processed:%llu\r\n"
            "io_threaded_reads_processed:0\r\n"
            "io_threaded_writes_processed:0\r\n"
            "client_query_buffer_limit_disconnections:%llu\r\n"
            "client_output_buffer_limit_disconnections:%llu\r\n",
            t->conns, t->cmds, inst_get(INST_OPS), t->net_in, t->net_out, (double)inst_get(INST_NET_IN) / 1024,
            (double)inst_get(INST_NET_OUT) / 1024, t->rejected, t->expired, t->evicted_clients, t->hits, t->misses,
            t->unexpected, t->errors, t->reads, t->writes, t->qbuf_disc, t->obuf_disc);
}

static void sec_replication(struct sbuf *b) {
    pthread_once(&replid_once, replid_init);
    sb_catf(b,
            "# Replication\r\n"
            "role:master\r\n"
            "connected_slaves:0\r\n"
            "master_failover_state:no-failover\r\n"
            "master_replid:%s\r\n"
            "master_replid2:0000000000000000000000000000000000000000\r\n"
            "master_repl_offset:0\r\n"
            "second_repl_offset:-1\r\n"
            "repl_backlog_active:0\r\n"
            "repl_backlog_size:1048576\r\n"
            "repl_backlog_first_byte_offset:0\r\n"
            "repl_backlog_histlen:0\r\n",
            replid_buf);
}

static void sec_cpu(struct sbuf *b) {
    struct rusage self, children, thread;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    getrusage(RUSAGE_THREAD, &thread);
    sb_catf(b,
            "# CPU\r\n"
            "used_cpu_sys:%ld.%06ld\r\n"
            "used_cpu_user:%ld.%06ld\r\n"
            "used_cpu_sys_children:%ld.%06ld\r\n"
            "used_cpu_user_children:%ld.%06ld\r\n"
            "used_cpu_sys_main_thread:%ld.%06ld\r\n"
            "used_cpu_user_main_thread:%ld.%06ld\r\n",
            (long)self.ru_stime.tv_sec, (long)self.ru_stime.tv_usec, (long)self.ru_utime.tv_sec,
            (long)self.ru_utime.tv_usec, (long)children.ru_stime.tv_sec, (long)children.ru_stime.tv_usec,
            (long)children.ru_utime.tv_sec, (long)children.ru_utime.tv_usec, (long)thread.ru_stime.tv_sec,
            (long)thread.ru_stime.tv_usec, (long)thread.ru_utime.tv_sec, (long)thread.ru_utime.tv_usec);
}

static void sec_commandstats(struct sbuf *b) {
    sb_catf(b, "# Commandstats\r\n");
    int total = commands_total();
    for (int id = 0; id < total; id++) {
        unsigned long long calls = 0, usec = 0, rejected = 0, failed = 0;
        for (int i = 0; i < server.nworkers; i++) {
            struct cmdstat *s = &server.workers[i].cmdstats[id];
            calls += stat_get(&s->calls);
            usec += stat_get(&s->nsec);
            rejected += stat_get(&s->rejected);
            failed += stat_get(&s->failed);
        }
        if (!calls && !rejected && !failed) continue;
        usec /= 1000; /* counted in nanoseconds */
        sb_catf(b, "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu\r\n",
                command_by_id(id)->fullname, calls, usec, calls ? (double)usec / (double)calls : 0.0, rejected,
                failed);
    }
}

static void sec_errorstats(struct sbuf *b) {
    sb_catf(b, "# Errorstats\r\n");
    int n = errstat_count();
    for (int idx = 0; idx < n; idx++) {
        unsigned long long count = 0;
        for (int i = 0; i < server.nworkers; i++) count += stat_get(&server.workers[i].errorstats[idx]);
        if (count) sb_catf(b, "errorstat_%s:count=%llu\r\n", errstat_name(idx), count);
    }
}

static void sec_keyspace(struct sbuf *b) {
    sb_catf(b, "# Keyspace\r\n");
    for (int db = 0; db < ks.ndb; db++) {
        unsigned long long keys = ks_dbsize(db);
        if (!keys) continue;
        sb_catf(b, "db%d:keys=%llu,expires=%llu,avg_ttl=0\r\n", db, keys, ks_expires(db));
    }
}

/* ---- the command -------------------------------------------------------------- */

enum {
    S_SERVER = 1 << 0,
    S_CLIENTS = 1 << 1,
    S_MEMORY = 1 << 2,
    S_PERSISTENCE = 1 << 3,
    S_STATS = 1 << 4,
    S_REPLICATION = 1 << 5,
    S_CPU = 1 << 6,
    S_MODULES = 1 << 7,
    S_COMMANDSTATS = 1 << 8,
    S_ERRORSTATS = 1 << 9,
    S_CLUSTER = 1 << 10,
    S_KEYSPACE = 1 << 11,
};
#define S_DEFAULT                                                                                               \
    (S_SERVER | S_CLIENTS | S_MEMORY | S_PERSISTENCE | S_STATS | S_REPLICATION | S_CPU | S_MODULES | S_ERRORSTATS | \
     S_CLUSTER | S_KEYSPACE)
#define S_ALL (S_DEFAULT | S_COMMANDSTATS)

static const struct {
    const char *name;
    unsigned bit;
} section_names[] = {
    {"server", S_SERVER},   {"clients", S_CLIENTS},         {"memory", S_MEMORY},           {"persistence", S_PERSISTENCE},
    {"stats", S_STATS},     {"replication", S_REPLICATION}, {"cpu", S_CPU},                 {"modules", S_MODULES},
    {"commandstats", S_COMMANDSTATS}, {"errorstats", S_ERRORSTATS}, {"cluster", S_CLUSTER}, {"keyspace", S_KEYSPACE},
    {"default", S_DEFAULT}, {"all", S_ALL},                 {"everything", S_ALL},
};

/* INFO [section ...]: the named sections (case-insensitive; default,
 * all and everything are groups; unknown names add nothing) in Redis's
 * fixed order, separated by blank lines. A bulk string in RESP2, a
 * verbatim "txt" string in RESP3. */
void cmd_info(struct client *c) {
    unsigned want = c->argc == 1 ? S_DEFAULT : 0;
    for (int i = 1; i < c->argc; i++)
        for (size_t s = 0; s < sizeof(section_names) / sizeof(section_names[0]); s++)
            if (hk_eqi(c->argv[i].ptr, c->argv[i].len, section_names[s].name)) want |= section_names[s].bit;
    struct totals t;
    totals_get(&t);
    struct sbuf b = {0};
    for (unsigned bit = 1; bit <= S_KEYSPACE; bit <<= 1) {
        if (!(want & bit)) continue;
        if (b.len) sb_cat(&b, "\r\n", 2);
        switch (bit) {
        case S_SERVER: sec_server(&b, c); break;
        case S_CLIENTS: sec_clients(&b, &t); break;
        case S_MEMORY: sec_memory(&b); break;
        case S_PERSISTENCE: sec_persistence(&b, &t); break;
        case S_STATS: sec_stats(&b, &t); break;
        case S_REPLICATION: sec_replication(&b); break;
        case S_CPU: sec_cpu(&b); break;
        case S_MODULES: sb_catf(&b, "# Modules\r\n"); break;
        case S_COMMANDSTATS: sec_commandstats(&b); break;
        case S_ERRORSTATS: sec_errorstats(&b); break;
        case S_CLUSTER: sb_catf(&b, "# Cluster\r\ncluster_enabled:0\r\n"); break;
        case S_KEYSPACE: sec_keyspace(&b); break;
        }
    }
    reply_verbatim(c, b.p ? b.p : "", b.len, "txt");
    sb_free(&b);
}
