/* info.c - the INFO command and the statistics behind it.
 *
 * INFO speaks Redis 7.2's section and field names so dashboards, exporters
 * and client libraries read it unchanged. Counters are per worker
 * (single-writer atomics, see server.h) and are summed here on read; the
 * instantaneous rates come from samples that worker 0 takes in its cron.
 * Fields for machinery HotKV does not have (forks, RDB/AOF, replicas, defrag)
 * report the idle values Redis reports when that machinery is idle, which
 * is the truth here. The counters, their sums, samples and resets belong to
 * the server layer (src/server/stats.c); this file only formats them. */
#include "../core/alloc.h"
#include "../server/pubsub.h"
#include "../server/tracking.h"
#include "../server/txn.h"
#include "../server/acl.h"
#include "../server/config.h"
#include "../server/lazyfree.h"
#include "../server/replid.h"
#include "../server/snapshot.h"
#include "../server/aof.h"
#include "../server/configtab.h"
#include "../server/evict.h"
#include "../server/function.h"
#include "../server/memstats.h"
#include "../server/script.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"
#include "../server/stats.h"
#include "../store/hfe.h"

#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

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


static void sec_server(struct sbuf *b, struct cmd_ctx *c) {
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

static void sec_clients(struct sbuf *b, const struct stats_totals *t) {
    long long ps_channels, ps_patterns, ps_shard, ps_clients;
    pubsub_info(&ps_channels, &ps_patterns, &ps_shard, &ps_clients);
    sb_catf(b,
            "# Clients\r\n"
            "connected_clients:%lld\r\n"
            "cluster_connections:0\r\n"
            "maxclients:%lld\r\n"
            "blocked_clients:%llu\r\n"
            "tracking_clients:%d\r\n"
            "pubsub_clients:%lld\r\n"
            "watching_clients:%llu\r\n"
            "clients_in_timeout_table:%llu\r\n"
            "total_watched_keys:%llu\r\n"
            "total_blocking_keys:%llu\r\n"
            "total_blocking_keys_on_nokey:0\r\n",
            t->clients, CFG(maxclients), t->blocked, atomic_load(&tracking_clients), ps_clients,
            txn_watching_clients(), t->blocked_timeout, txn_watched_keys(),
            /* The per-worker counters are read one after the other while
             * they move: a release seen before its registration would show
             * a negative sum for a moment. */
            (long long)t->blocking_keys < 0 ? 0ULL : t->blocking_keys);
}

static void sec_memory(struct sbuf *b, struct cmd_ctx *c) {
    struct mem_overhead m;
    memstats_get(&m, exec_holds_all(c));
    size_t used = m.total, rss = m.rss, peak = m.peak;
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    unsigned long long sysmem = pages > 0 && psize > 0 ? (unsigned long long)pages * (unsigned long long)psize : 0;
    char h_used[32], h_rss[32], h_peak[32], h_sys[32], h_max[32], h_scripts[32], policy[32];
    long long maxmem = CFG(maxmemory);
    bytes_human(h_max, sizeof(h_max), (size_t)maxmem);
    cfg_get(cfg_find("maxmemory-policy", 16), policy, sizeof(policy));
    bytes_human(h_used, sizeof(h_used), used);
    bytes_human(h_rss, sizeof(h_rss), rss);
    bytes_human(h_peak, sizeof(h_peak), peak);
    bytes_human(h_sys, sizeof(h_sys), sysmem);
    bytes_human(h_scripts, sizeof(h_scripts), m.lua_caches + m.functions_caches);
    unsigned long long libs, fns;
    fn_counts(&libs, &fns);
    /* Redis 7's fields in its order. The Lua VMs (one per worker, on
     * LuaJIT's own allocator, outside used_memory) serve EVAL and
     * functions alike: they show as the eval VM, the functions VM as 0. */
    size_t vm = script_vm_memory();
    char h_vm[32];
    bytes_human(h_vm, sizeof(h_vm), vm);
    sb_catf(b,
            "# Memory\r\n"
            "used_memory:%zu\r\n"
            "used_memory_human:%s\r\n"
            "used_memory_rss:%zu\r\n"
            "used_memory_rss_human:%s\r\n"
            "used_memory_peak:%zu\r\n"
            "used_memory_peak_human:%s\r\n"
            "used_memory_peak_perc:%.2f%%\r\n"
            "used_memory_overhead:%zu\r\n"
            "used_memory_startup:%zu\r\n"
            "used_memory_dataset:%zu\r\n"
            "used_memory_dataset_perc:%.2f%%\r\n"
            "allocator_allocated:%zu\r\n"
            "allocator_active:%zu\r\n"
            "allocator_resident:%zu\r\n"
            "total_system_memory:%llu\r\n"
            "total_system_memory_human:%s\r\n"
            "used_memory_lua:%zu\r\n"
            "used_memory_vm_eval:%zu\r\n"
            "used_memory_lua_human:%s\r\n"
            "used_memory_scripts_eval:%zu\r\n"
            "number_of_cached_scripts:%llu\r\n"
            "number_of_functions:%llu\r\n"
            "number_of_libraries:%llu\r\n"
            "used_memory_vm_functions:0\r\n"
            "used_memory_vm_total:%zu\r\n"
            "used_memory_vm_total_human:%s\r\n"
            "used_memory_functions:%zu\r\n"
            "used_memory_scripts:%zu\r\n"
            "used_memory_scripts_human:%s\r\n"
            "maxmemory:%lld\r\n"
            "maxmemory_human:%s\r\n"
            "maxmemory_policy:%s\r\n"
            "allocator_frag_ratio:%.2f\r\n"
            "allocator_frag_bytes:%lld\r\n"
            "allocator_rss_ratio:%.2f\r\n"
            "allocator_rss_bytes:%lld\r\n"
            "rss_overhead_ratio:%.2f\r\n"
            "rss_overhead_bytes:%lld\r\n"
            "mem_fragmentation_ratio:%.2f\r\n"
            "mem_fragmentation_bytes:%lld\r\n"
            "mem_not_counted_for_evict:%zu\r\n"
            "mem_replication_backlog:0\r\n"
            "mem_total_replication_buffers:0\r\n"
            "mem_clients_slaves:0\r\n"
            "mem_clients_normal:%zu\r\n"
            "mem_cluster_links:0\r\n"
            "mem_aof_buffer:%zu\r\n"
            "mem_allocator:%s\r\n"
            "active_defrag_running:0\r\n"
            "lazyfree_pending_objects:%llu\r\n"
            "lazyfreed_objects:%llu\r\n",
            used, h_used, rss, h_rss, peak, h_peak, m.peak_perc, m.overhead_total, m.startup, m.dataset,
            m.dataset_perc, m.alloc_allocated, m.alloc_active, m.alloc_resident, sysmem, h_sys, vm, vm, h_vm,
            m.lua_caches, m.scripts, fns, libs, vm, h_vm, m.functions_caches, m.lua_caches + m.functions_caches, h_scripts, maxmem, h_max,
            policy, m.alloc_frag, m.alloc_frag_bytes, m.alloc_rss, m.alloc_rss_bytes, m.rss_extra, m.rss_extra_bytes,
            m.total_frag, m.total_frag_bytes, evict_not_counted(), m.clients_normal, m.aof_buffer, hk_allocator_name(),
            lazyfree_pending(), lazyfree_freed());
}

static void sec_persistence(struct sbuf *b, const struct stats_totals *t) {
    (void)t;
    long long now = hk_mstime();
    int loading = atomic_load(&server_loading) != 0;
    sb_catf(b, "# Persistence\r\nloading:%d\r\nasync_loading:0\r\n", loading);
    if (loading) {
        long long start = atomic_load(&load_progress.start_ms), total = atomic_load(&load_progress.total_bytes);
        long long done = atomic_load(&load_progress.loaded_bytes);
        double perc = total ? (double)done * 100 / (double)total : 0;
        long long elapsed = (now - start) / 1000;
        long long eta = done && total > done ? (long long)((double)(total - done) * (double)elapsed / (double)done) : 1;
        sb_catf(b,
                "loading_start_time:%lld\r\nloading_total_bytes:%lld\r\nloading_rdb_used_mem:0\r\n"
                "loading_loaded_bytes:%lld\r\nloading_loaded_perc:%.2f\r\nloading_eta_seconds:%lld\r\n",
                start / 1000, total, done, perc, eta);
    }
    int bg = snapshot_kind() == SNAP_KIND_RDB;
    long long cur = bg ? (now - atomic_load(&snap_status.start_ms)) / 1000 : -1;
    sb_catf(b,
            "current_cow_peak:0\r\n"
            "current_cow_size:0\r\n"
            "current_cow_size_age:0\r\n"
            "current_fork_perc:0.00\r\n"
            "current_save_keys_processed:0\r\n"
            "current_save_keys_total:0\r\n"
            "rdb_changes_since_last_save:%llu\r\n"
            "rdb_bgsave_in_progress:%d\r\n"
            "rdb_last_save_time:%lld\r\n"
            "rdb_last_bgsave_status:%s\r\n"
            "rdb_last_bgsave_time_sec:%lld\r\n"
            "rdb_current_bgsave_time_sec:%lld\r\n"
            "rdb_saves:%llu\r\n"
            "rdb_last_cow_size:%llu\r\n"
            "rdb_last_load_keys_expired:%llu\r\n"
            "rdb_last_load_keys_loaded:%llu\r\n",
            snapshot_dirty(), bg, atomic_load(&server.lastsave), atomic_load(&snap_status.last_ok) ? "ok" : "err",
            atomic_load(&snap_status.last_time_sec), cur, atomic_load(&snap_status.saves),
            atomic_load(&snap_status.last_side_bytes), atomic_load(&load_progress.keys_expired),
            atomic_load(&load_progress.keys_loaded));
    aof_info(b); /* the aof_* lines, with module_fork_* where Redis puts them */
}

static void sec_stats(struct sbuf *b, const struct stats_totals *t) {
    long long ps_channels, ps_patterns, ps_shard, ps_clients, tr_keys, tr_items, tr_prefixes;
    pubsub_info(&ps_channels, &ps_patterns, &ps_shard, &ps_clients);
    tracking_info(&tr_keys, &tr_items, &tr_prefixes);
    long long ex_total, ex_cur;
    evict_exceeded_ms(&ex_total, &ex_cur);
    unsigned long long acl_denied[4];
    acl_denied_counts(acl_denied);
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
            "evicted_keys:%llu\r\n"
            "evicted_clients:%llu\r\n"
            "total_eviction_exceeded_time:%lld\r\n"
            "current_eviction_exceeded_time:%lld\r\n"
            "keyspace_hits:%llu\r\n"
            "keyspace_misses:%llu\r\n"
            "pubsub_channels:%lld\r\n"
            "pubsub_patterns:%lld\r\n"
            "pubsubshard_channels:%lld\r\n"
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
            "tracking_total_keys:%lld\r\n"
            "tracking_total_items:%lld\r\n"
            "tracking_total_prefixes:%lld\r\n"
            "unexpected_error_replies:%llu\r\n"
            "total_error_replies:%llu\r\n"
            "dump_payload_sanitizations:0\r\n"
            "total_reads_processed:%llu\r\n"
            "total_writes_processed:%llu\r\n"
            "io_threaded_reads_processed:0\r\n"
            "io_threaded_writes_processed:0\r\n"
            "client_query_buffer_limit_disconnections:%llu\r\n"
            "client_output_buffer_limit_disconnections:%llu\r\n"
            "acl_access_denied_auth:%llu\r\n"
            "acl_access_denied_cmd:%llu\r\n"
            "acl_access_denied_key:%llu\r\n"
            "acl_access_denied_channel:%llu\r\n",
            t->conns, t->cmds, stats_inst(STATS_INST_OPS), t->net_in, t->net_out, (double)stats_inst(STATS_INST_NET_IN) / 1024,
            (double)stats_inst(STATS_INST_NET_OUT) / 1024, t->rejected, t->expired, t->evicted_keys, t->evicted_clients, ex_total, ex_cur, t->hits, t->misses,
            ps_channels, ps_patterns, ps_shard, tr_keys, tr_items, tr_prefixes, t->unexpected, t->errors, t->reads, t->writes, t->qbuf_disc, t->obuf_disc, acl_denied[0], acl_denied[1], acl_denied[2], acl_denied[3]);
#ifdef HK_LOCK_STATS
    /* Instrumented builds only (bench/scaling.sh): shard locks that were
     * found taken, and the time spent waiting for them. */
    sb_catf(b, "shard_lock_contended:%llu\r\nshard_lock_wait_us:%llu\r\n", t->lock_contended,
            t->lock_wait_ns / 1000);
#endif
}

static void sec_replication(struct sbuf *b) {
    char replid_buf[REPLID_LEN + 1];
    replid_get(replid_buf);
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

/* Key counts shard by shard, or at once when the context (a transaction)
 * holds every shard. */
static void sec_keyspace(struct sbuf *b, struct cmd_ctx *c) {
    int locked = exec_holds_all(c);
    sb_catf(b, "# Keyspace\r\n");
    for (int db = 0; db < ks.ndb; db++) {
        unsigned long long keys, expires;
        ks_counts(db, locked, &keys, &expires);
        if (!keys) continue;
        /* subexpiry: hashes with field TTLs, as Redis 8 reports them. */
        sb_catf(b, "db%d:keys=%llu,expires=%llu,avg_ttl=0,subexpiry=%llu\r\n", db, keys, expires,
                ks_hfe_count(db, locked));
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
    S_LATENCYSTATS = 1 << 10,
    S_CLUSTER = 1 << 11,
    S_KEYSPACE = 1 << 12,
};
#define S_DEFAULT                                                                                               \
    (S_SERVER | S_CLIENTS | S_MEMORY | S_PERSISTENCE | S_STATS | S_REPLICATION | S_CPU | S_MODULES | S_ERRORSTATS | \
     S_CLUSTER | S_KEYSPACE)
#define S_ALL (S_DEFAULT | S_COMMANDSTATS | S_LATENCYSTATS)

static const struct {
    const char *name;
    unsigned bit;
} section_names[] = {
    {"server", S_SERVER},   {"clients", S_CLIENTS},         {"memory", S_MEMORY},           {"persistence", S_PERSISTENCE},
    {"stats", S_STATS},     {"replication", S_REPLICATION}, {"cpu", S_CPU},                 {"modules", S_MODULES},
    {"commandstats", S_COMMANDSTATS}, {"errorstats", S_ERRORSTATS}, {"latencystats", S_LATENCYSTATS}, {"cluster", S_CLUSTER}, {"keyspace", S_KEYSPACE},
    {"default", S_DEFAULT}, {"all", S_ALL},                 {"everything", S_ALL},
};

/* INFO [section ...]: the named sections (case-insensitive; default,
 * all and everything are groups; unknown names add nothing) in Redis's
 * fixed order, separated by blank lines. A bulk string in RESP2, a
 * verbatim "txt" string in RESP3. */
void cmd_info(struct cmd_ctx *c) {
    unsigned want = c->argc == 1 ? S_DEFAULT : 0;
    for (int i = 1; i < c->argc; i++)
        for (size_t s = 0; s < sizeof(section_names) / sizeof(section_names[0]); s++)
            if (hk_eqi(c->argv[i].ptr, c->argv[i].len, section_names[s].name)) want |= section_names[s].bit;
    struct stats_totals t;
    stats_totals(&t);
    struct sbuf b = {0};
    for (unsigned bit = 1; bit <= S_KEYSPACE; bit <<= 1) {
        if (!(want & bit)) continue;
        if (b.len) sb_cat(&b, "\r\n", 2);
        switch (bit) {
        case S_SERVER: sec_server(&b, c); break;
        case S_CLIENTS: sec_clients(&b, &t); break;
        case S_MEMORY: sec_memory(&b, c); break;
        case S_PERSISTENCE: sec_persistence(&b, &t); break;
        case S_STATS: sec_stats(&b, &t); break;
        case S_REPLICATION: sec_replication(&b); break;
        case S_CPU: sec_cpu(&b); break;
        case S_MODULES: sb_catf(&b, "# Modules\r\n"); break;
        case S_COMMANDSTATS: sec_commandstats(&b); break;
        case S_ERRORSTATS: sec_errorstats(&b); break;
        case S_LATENCYSTATS: info_latencystats(&b); break;
        case S_CLUSTER: sb_catf(&b, "# Cluster\r\ncluster_enabled:0\r\n"); break;
        case S_KEYSPACE: sec_keyspace(&b, c); break;
        }
    }
    reply_verbatim(c, b.p ? b.p : "", b.len, "txt");
    sb_free(&b);
}
