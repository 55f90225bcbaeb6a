/* config.c - the configuration table and its parsers.
 *
 * Each row names a setting, its type, bounds, default and mutability. The
 * same rows parse redis.conf-style files, "--name value" command-line
 * options, CONFIG SET and CONFIG GET, and CONFIG REWRITE writes them back.
 * Defaults follow Redis where Redis has the setting. */
#include "config.h"
#include "../types/types.h"

#include "../core/alloc.h"
#include "../core/util.h"
#include "../proto/resp.h"
#include "configtab.h"
#include "acl.h"
#include "aof.h"
#include "clientmem.h"
#include "evict.h"
#include "../store/db.h"
#include "notify.h"
#include "snapshot.h"
#include "server.h"
#include "tlsconf.h"
#include "../net/tls.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct server_config cfg;
pthread_rwlock_t cfg_lock = PTHREAD_RWLOCK_INITIALIZER;

static const struct cfg_enum loglevel_enum[] = {
    {"debug", LL_DEBUG}, {"verbose", LL_VERBOSE}, {"notice", LL_NOTICE}, {"warning", LL_WARNING}, {NULL, 0}};
static const struct cfg_enum tls_auth_enum[] = {
    {"no", TLS_AUTH_NO}, {"yes", TLS_AUTH_YES}, {"optional", TLS_AUTH_OPTIONAL}, {NULL, 0}};
static const struct cfg_enum no_only_enum[] = {{"no", 0}, {NULL, 0}};
static const struct cfg_enum appendfsync_enum[] = {
    {"always", AOF_FSYNC_ALWAYS}, {"everysec", AOF_FSYNC_EVERYSEC}, {"no", AOF_FSYNC_NO}, {NULL, 0}};
static const struct cfg_enum sanitize_enum[] = {
    {"no", SANITIZE_NO}, {"yes", SANITIZE_YES}, {"clients", SANITIZE_CLIENTS}, {NULL, 0}};
static const struct cfg_enum maxmemory_policy_enum[] = {
    {"volatile-lru", MAXMEM_VOLATILE_LRU},       {"volatile-lfu", MAXMEM_VOLATILE_LFU},
    {"volatile-random", MAXMEM_VOLATILE_RANDOM}, {"volatile-ttl", MAXMEM_VOLATILE_TTL},
    {"allkeys-lru", MAXMEM_ALLKEYS_LRU},         {"allkeys-lfu", MAXMEM_ALLKEYS_LFU},
    {"allkeys-random", MAXMEM_ALLKEYS_RANDOM},   {"noeviction", MAXMEM_NOEVICTION},
    {NULL, 0}};
static const struct cfg_enum acl_pubsub_enum[] = {{"resetchannels", 0}, {"allchannels", 1}, {NULL, 0}};
static const struct cfg_enum protected_enum[] = {
    {"no", CFG_DEBUG_NO}, {"yes", CFG_DEBUG_YES}, {"local", CFG_DEBUG_LOCAL}, {NULL, 0}};

/* The entry clocks follow the policy: LFU counters or LRU times. */
static int apply_maxmemory_policy(char *err, size_t errsize) {
    (void)err;
    (void)errsize;
    atomic_store(&store_lfu, maxmem_policy_lfu((int)CFG(maxmemory_policy)));
    return 1;
}

/* A limit below what is used now is enforced from the workers' next loop
 * turn; Redis warns about it the same way. */
static int apply_maxmemory(char *err, size_t errsize) {
    (void)err;
    (void)errsize;
    long long mm = CFG(maxmemory);
    if (mm > 0 && (size_t)mm < hk_used_memory())
        hk_log(LL_WARNING, "WARNING: the new maxmemory value set via CONFIG SET (%lld) is smaller than the current "
                           "memory usage (%zu). This will result in key eviction and/or the inability to accept new "
                           "write commands depending on the maxmemory-policy.",
               mm, hk_used_memory());
    return 1;
}

static int set_maxmemory_clients(const char *value, char *err, size_t errsize);
static void get_maxmemory_clients(char *buf, size_t size);
static int apply_maxmemory_clients(char *err, size_t errsize);
static int set_obl(const char *value, char *err, size_t errsize);
static void get_obl(char *buf, size_t size);
static int check_save(const char *value, char *err, size_t errsize);
static int check_dbfilename(const char *value, char *err, size_t errsize);
static int apply_requirepass(char *err, size_t errsize);
static int apply_maxclients(char *err, size_t errsize);
static int apply_listeners(char *err, size_t errsize);
/* Any setting the TLS context is built from. Before the workers start
 * the context is built once by workers_start; with no tls-port there is
 * nothing to build (Redis builds it only when a TLS port is set). */
static int apply_tls(char *err, size_t errsize) {
    if (!server.workers || !CFG(tls_port)) return 1;
    return tlsconf_reload(err, errsize);
}

/* tls-port: a context first (when none is built yet), then the listeners. */
static int apply_tls_port(char *err, size_t errsize) {
    if (!server.workers) return 1;
    if (CFG(tls_port) && !tlsconf_ready() && !tlsconf_reload(err, errsize)) return 0;
    if (!listeners_prepare(err, errsize)) {
        snprintf(err, errsize, "Unable to listen on this port. Check server logs.");
        return 0;
    }
    return 1;
}

static int set_io_threads(const char *value, char *err, size_t errsize);
static void get_io_threads(char *buf, size_t size);
static int apply_hz(char *err, size_t errsize);
static int apply_save(char *err, size_t errsize);
static int apply_dir(char *err, size_t errsize);
static int apply_appendonly(char *err, size_t errsize);
static int apply_appendfsync(char *err, size_t errsize);
static int apply_tls(char *err, size_t errsize);
static int apply_tls_port(char *err, size_t errsize);

#define INT(n, field, lo, hi, d, fl) {n, NULL, CFG_INT, fl, &cfg.field, NULL, lo, hi, d, NULL, NULL, NULL, NULL, NULL}
#define MEM(n, field, lo, hi, d, fl) {n, NULL, CFG_MEM, fl, &cfg.field, NULL, lo, hi, d, NULL, NULL, NULL, NULL, NULL}
#define BOOL(n, field, d, fl) {n, NULL, CFG_BOOL, fl, &cfg.field, NULL, 0, 1, d, NULL, NULL, NULL, NULL, NULL}
#define ENUM(n, field, e, d, fl) {n, NULL, CFG_ENUM, fl, &cfg.field, NULL, 0, 0, d, e, NULL, NULL, NULL, NULL}
#define STR(n, field, d, fl, ap) {n, NULL, CFG_STRING, fl, NULL, &cfg.field, 0, 0, d, NULL, NULL, NULL, NULL, ap}
/* An encoding limit of the types layer (types/types.h), with Redis's
 * older ziplist name as an alias where it has one. */
#define TLIM_ROW(n, alias, kind, field, lo, hi, d)                                                                 \
    {n, alias, kind, 0, &type_limits.field, NULL, lo, hi, d, NULL, NULL, NULL, NULL, NULL}

const struct cfg_entry cfg_table[] = {
    /* Changed at run time as in Redis: the new listeners are opened before
     * the old ones close, and a failure keeps the old ones. */
    STR("bind", bind, "* -::*", CFG_MULTI_ARG, apply_listeners),
    {"port", NULL, CFG_INT, 0, &cfg.port, NULL, 0, 65535, "6379", NULL, NULL, NULL, NULL, apply_listeners},
    STR("unixsocket", unixsocket, "", CFG_IMMUTABLE, NULL),
    /* TLS (docs/tls.md): a change of any setting the context is built
     * from builds a new one while tls-port is set, swapped in for new
     * connections; one that fails keeps the context in force. */
    {"tls-port", NULL, CFG_INT, 0, &cfg.tls_port, NULL, 0, 65535, "0", NULL, NULL, NULL, NULL, apply_tls_port},
    STR("tls-cert-file", tls_cert_file, "", 0, apply_tls),
    STR("tls-key-file", tls_key_file, "", 0, apply_tls),
    STR("tls-key-file-pass", tls_key_file_pass, "", CFG_SENSITIVE, apply_tls),
    STR("tls-client-cert-file", tls_client_cert_file, "", 0, apply_tls),
    STR("tls-client-key-file", tls_client_key_file, "", 0, apply_tls),
    STR("tls-client-key-file-pass", tls_client_key_file_pass, "", CFG_SENSITIVE, apply_tls),
    STR("tls-ca-cert-file", tls_ca_cert_file, "", 0, apply_tls),
    STR("tls-ca-cert-dir", tls_ca_cert_dir, "", 0, apply_tls),
    STR("tls-dh-params-file", tls_dh_params_file, "", 0, apply_tls),
    STR("tls-protocols", tls_protocols, "", 0, apply_tls),
    STR("tls-ciphers", tls_ciphers, "", 0, apply_tls),
    STR("tls-ciphersuites", tls_ciphersuites, "", 0, apply_tls),
    {"tls-auth-clients", NULL, CFG_ENUM, 0, &cfg.tls_auth_clients, NULL, 0, 0, "yes", tls_auth_enum, NULL, NULL, NULL,
     apply_tls},
    {"tls-prefer-server-ciphers", NULL, CFG_BOOL, 0, &cfg.tls_prefer_server_ciphers, NULL, 0, 1, "no", NULL, NULL,
     NULL, NULL, apply_tls},
    {"tls-session-caching", NULL, CFG_BOOL, 0, &cfg.tls_session_caching, NULL, 0, 1, "yes", NULL, NULL, NULL, NULL,
     apply_tls},
    {"tls-session-cache-size", NULL, CFG_INT, 0, &cfg.tls_session_cache_size, NULL, 0, INT_MAX, "20480", NULL, NULL,
     NULL, NULL, apply_tls},
    {"tls-session-cache-timeout", NULL, CFG_INT, 0, &cfg.tls_session_cache_timeout, NULL, 0, INT_MAX, "300", NULL,
     NULL, NULL, NULL, apply_tls},
    {"unixsocketperm", NULL, CFG_OCTAL, CFG_IMMUTABLE, &cfg.unixsocketperm, NULL, 0, 0777, "0", NULL, NULL, NULL, NULL,
     NULL},
    INT("tcp-backlog", tcp_backlog, 0, INT_MAX, "511", CFG_IMMUTABLE),
    INT("timeout", timeout, 0, INT_MAX, "0", 0),
    INT("tcp-keepalive", tcp_keepalive, 0, INT_MAX, "300", 0),
    {"maxclients", NULL, CFG_INT, 0, &cfg.maxclients, NULL, 1, INT_MAX, "10000", NULL, NULL, NULL, NULL,
     apply_maxclients},
    INT("databases", databases, 1, INT_MAX, "16", CFG_IMMUTABLE),
    /* Any value is accepted and clamped to 1..500 on apply, as Redis does. */
    {"hz", NULL, CFG_INT, 0, &cfg.hz, NULL, 0, INT_MAX, "10", NULL, NULL, NULL, NULL, apply_hz},
    INT("active-expire-effort", active_expire_effort, 1, 10, "1", 0),
    MEM("proto-max-bulk-len", proto_max_bulk_len, 1024 * 1024, LLONG_MAX, "512mb", 0),
    MEM("client-query-buffer-limit", client_query_buffer_limit, 1024 * 1024, LLONG_MAX, "1gb", 0),
    ENUM("loglevel", loglevel, loglevel_enum, "notice", 0),
    STR("logfile", logfile, "", CFG_IMMUTABLE, NULL),
    STR("requirepass", requirepass, "", CFG_SENSITIVE, apply_requirepass),
    STR("aclfile", aclfile, "", CFG_IMMUTABLE, NULL),
    INT("acllog-max-len", acllog_max_len, 0, LLONG_MAX, "128", 0),
    ENUM("acl-pubsub-default", acl_pubsub_default, acl_pubsub_enum, "resetchannels", 0),
    BOOL("protected-mode", protected_mode, "yes", 0),
    /* HotKV's own settings are hidden from CONFIG GET patterns, as Redis
     * hides its special ones, and answered when named. */
    INT("threads", threads, 0, HK_MAX_THREADS, "0", CFG_IMMUTABLE | CFG_HIDDEN),
    /* Redis's I/O threads setting names HotKV's workers (they read and run
     * commands both): a redis.conf that sets it gets that many. */
    {"io-threads", NULL, CFG_SPECIAL, CFG_IMMUTABLE, NULL, NULL, 0, 0, NULL, NULL, set_io_threads, NULL, get_io_threads,
     NULL},
    {"busy-reply-threshold", "lua-time-limit", CFG_INT, 0, &cfg.busy_reply_threshold, NULL, 0, LLONG_MAX, "5000", NULL,
     NULL, NULL, NULL, NULL},
    INT("shards", shards, 1, 65536, "1024", CFG_IMMUTABLE | CFG_HIDDEN),
    STR("pidfile", pidfile, "", CFG_IMMUTABLE, NULL),
    STR("dir", dir, "", CFG_PROTECTED, apply_dir),
    ENUM("daemonize", daemonize, no_only_enum, "no", CFG_IMMUTABLE),
    {"appendonly", NULL, CFG_BOOL, 0, &cfg.appendonly, NULL, 0, 1, "no", NULL, NULL, NULL, NULL, apply_appendonly},
    {"maxmemory", NULL, CFG_MEM, 0, &cfg.maxmemory, NULL, 0, LLONG_MAX, "0", NULL, NULL, NULL, NULL, apply_maxmemory},
    {"maxmemory-policy", NULL, CFG_ENUM, 0, &cfg.maxmemory_policy, NULL, 0, 0, "noeviction", maxmemory_policy_enum,
     NULL, NULL, NULL, apply_maxmemory_policy},
    /* Redis 8's range (7.0 took up to INT_MAX). */
    INT("maxmemory-samples", maxmemory_samples, 1, 64, "5", 0),
    INT("maxmemory-eviction-tenacity", maxmemory_eviction_tenacity, 0, 100, "10", 0),
    /* Client eviction: a memory value or a percentage of maxmemory. */
    {"maxmemory-clients", NULL, CFG_SPECIAL, 0, NULL, NULL, 0, 0, "0", NULL, set_maxmemory_clients, NULL,
     get_maxmemory_clients, apply_maxmemory_clients},
    /* Read by the keyspace on every access under an LFU policy (db.h). */
    {"lfu-log-factor", NULL, CFG_INT, 0, &store_lfu_log_factor, NULL, 0, INT_MAX, "10", NULL, NULL, NULL, NULL, NULL},
    {"lfu-decay-time", NULL, CFG_INT, 0, &store_lfu_decay_time, NULL, 0, INT_MAX, "1", NULL, NULL, NULL, NULL, NULL},
    ENUM("cluster-enabled", cluster_enabled, no_only_enum, "no", CFG_IMMUTABLE),
    ENUM("enable-debug-command", enable_debug_command, protected_enum, "no", CFG_IMMUTABLE),
    ENUM("enable-protected-configs", enable_protected_configs, protected_enum, "no", CFG_IMMUTABLE),
    TLIM_ROW("hash-max-listpack-entries", "hash-max-ziplist-entries", CFG_INT, hash_max_listpack_entries, 0, LONG_MAX,
             "512"),
    TLIM_ROW("hash-max-listpack-value", "hash-max-ziplist-value", CFG_MEM, hash_max_listpack_value, 0, LONG_MAX, "64"),
    TLIM_ROW("zset-max-listpack-entries", "zset-max-ziplist-entries", CFG_INT, zset_max_listpack_entries, 0, LONG_MAX,
             "128"),
    TLIM_ROW("zset-max-listpack-value", "zset-max-ziplist-value", CFG_INT, zset_max_listpack_value, 0, LONG_MAX, "64"),
    TLIM_ROW("list-max-listpack-size", "list-max-ziplist-size", CFG_INT, list_max_listpack_size, INT_MIN, INT_MAX, "-2"),
    /* Read when a list becomes a quicklist; that list keeps it. */
    TLIM_ROW("list-compress-depth", NULL, CFG_INT, list_compress_depth, 0, INT_MAX, "0"),
    TLIM_ROW("set-max-intset-entries", NULL, CFG_INT, set_max_intset_entries, 0, LONG_MAX, "512"),
    TLIM_ROW("set-max-listpack-entries", NULL, CFG_INT, set_max_listpack_entries, 0, LONG_MAX, "128"),
    TLIM_ROW("set-max-listpack-value", NULL, CFG_INT, set_max_listpack_value, 0, LONG_MAX, "64"),
    TLIM_ROW("stream-node-max-bytes", NULL, CFG_MEM, stream_node_max_bytes, 0, LONG_MAX, "4096"),
    TLIM_ROW("stream-node-max-entries", NULL, CFG_INT, stream_node_max_entries, 0, LONG_MAX, "100"),
    {"hll-sparse-max-bytes", NULL, CFG_MEM, 0, &cfg.hll_sparse_max_bytes, NULL, 0, LONG_MAX, "3000", NULL, NULL, NULL,
     NULL, NULL},
    BOOL("lazyfree-lazy-eviction", lazyfree_lazy_eviction, "no", 0),
    BOOL("lazyfree-lazy-expire", lazyfree_lazy_expire, "no", 0),
    BOOL("lazyfree-lazy-server-del", lazyfree_lazy_server_del, "no", 0),
    BOOL("lazyfree-lazy-user-del", lazyfree_lazy_user_del, "no", 0),
    BOOL("lazyfree-lazy-user-flush", lazyfree_lazy_user_flush, "no", 0),
    {"save", NULL, CFG_STRING, CFG_MULTI_ARG, NULL, &cfg.save, 0, 0, "3600 1 300 100 60 10000", NULL, check_save,
     NULL, NULL, apply_save},
    {"dbfilename", NULL, CFG_STRING, CFG_PROTECTED, NULL, &cfg.dbfilename, 0, 0, "dump.rdb", NULL, check_dbfilename, NULL, NULL,
     NULL},
    BOOL("rdbcompression", rdbcompression, "yes", 0),
    BOOL("rdbchecksum", rdbchecksum, "yes", CFG_IMMUTABLE),
    BOOL("stop-writes-on-bgsave-error", stop_writes_on_bgsave_error, "yes", 0),
    BOOL("rdb-del-sync-files", rdb_del_sync_files, "no", 0),
    BOOL("rdb-save-incremental-fsync", rdb_save_incremental_fsync, "yes", 0),
    ENUM("sanitize-dump-payload", sanitize_dump_payload, sanitize_enum, "no", 0),
    {"appendfsync", NULL, CFG_ENUM, 0, &cfg.appendfsync, NULL, 0, 0, "everysec", appendfsync_enum, NULL, NULL, NULL,
     apply_appendfsync},
    STR("appenddirname", appenddirname, "appendonlydir", CFG_IMMUTABLE, NULL),
    STR("appendfilename", appendfilename, "appendonly.aof", CFG_IMMUTABLE, NULL),
    BOOL("aof-use-rdb-preamble", aof_use_rdb_preamble, "yes", 0),
    BOOL("aof-timestamp-enabled", aof_timestamp_enabled, "no", 0),
    INT("auto-aof-rewrite-percentage", auto_aof_rewrite_percentage, 0, INT_MAX, "100", 0),
    MEM("auto-aof-rewrite-min-size", auto_aof_rewrite_min_size, 0, LLONG_MAX, "64mb", 0),
    BOOL("aof-load-truncated", aof_load_truncated, "yes", 0),
    BOOL("aof-rewrite-incremental-fsync", aof_rewrite_incremental_fsync, "yes", 0),
    BOOL("no-appendfsync-on-rewrite", no_appendfsync_on_rewrite, "no", 0),
    /* Slow log and latency monitoring: a change recomputes the request
     * path's one threshold (observe.h). */
    {"slowlog-log-slower-than", NULL, CFG_INT, 0, &cfg.slowlog_log_slower_than, NULL, -1, LLONG_MAX, "10000", NULL,
     NULL, NULL, NULL, observe_config_changed},
    {"slowlog-max-len", NULL, CFG_INT, 0, &cfg.slowlog_max_len, NULL, 0, LONG_MAX, "128", NULL, NULL, NULL, NULL,
     observe_config_changed},
    {"latency-monitor-threshold", NULL, CFG_INT, 0, &cfg.latency_monitor_threshold, NULL, 0, LLONG_MAX, "0", NULL,
     NULL, NULL, NULL, observe_config_changed},
    BOOL("latency-tracking", latency_tracking, "yes", 0),
    {"latency-tracking-info-percentiles", NULL, CFG_SPECIAL, CFG_MULTI_ARG, NULL, NULL, 0, 0, "50 99 99.9", NULL,
     lat_percentiles_set, NULL, lat_percentiles_get, NULL},
    {"client-output-buffer-limit", NULL, CFG_SPECIAL, CFG_MULTI_ARG, NULL, NULL, 0, 0,
     "normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60", NULL, set_obl, NULL, get_obl, NULL},
    {"notify-keyspace-events", NULL, CFG_SPECIAL, 0, NULL, NULL, 0, 0, "", NULL, notify_config_set, NULL,
     notify_config_get, NULL},
    {"tracking-table-max-keys", NULL, CFG_INT, 0, &cfg.tracking_table_max_keys, NULL, 0, LLONG_MAX, "1000000", NULL,
     NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL},
};

const struct cfg_entry *cfg_find(const char *name, size_t len) {
    for (const struct cfg_entry *e = cfg_table; e->name; e++)
        if (hk_eqi(name, len, e->name) || (e->alias && hk_eqi(name, len, e->alias))) return e;
    return NULL;
}

/* Parse "1gb", "100k", "512mb", "123" (Redis's memtoll units). */
int cfg_parse_memory(const char *s, long long *out) {
    size_t len = strlen(s), i = 0;
    while (i < len && (isdigit((unsigned char)s[i]) || (i == 0 && s[i] == '-'))) i++;
    long long mul = 1;
    const char *u = s + i;
    if (!*u || !strcasecmp(u, "b")) mul = 1;
    else if (!strcasecmp(u, "k")) mul = 1000;
    else if (!strcasecmp(u, "kb")) mul = 1024;
    else if (!strcasecmp(u, "m")) mul = 1000LL * 1000;
    else if (!strcasecmp(u, "mb")) mul = 1024LL * 1024;
    else if (!strcasecmp(u, "g")) mul = 1000LL * 1000 * 1000;
    else if (!strcasecmp(u, "gb")) mul = 1024LL * 1024 * 1024;
    else return 0;
    long long v;
    if (!hk_str2ll(s, i, &v)) return 0;
    if (v != 0 && (v > LLONG_MAX / mul || v < LLONG_MIN / mul)) return 0;
    *out = v * mul;
    return 1;
}

static int apply_requirepass(char *err, size_t errsize) {
    (void)err;
    (void)errsize;
    /* Under the lock: another thread's CONFIG SET may be replacing (and
     * freeing) the string, and a mirror computed from an older value must
     * not be stored after a newer one's. */
    pthread_rwlock_rdlock(&cfg_lock);
    atomic_store(&cfg.requirepass_set, cfg.requirepass && cfg.requirepass[0] != '\0');
    pthread_rwlock_unlock(&cfg_lock);
    /* The default user's password (once the ACL users exist; acl_init
     * applies the configured one). */
    acl_requirepass_changed();
    return 1;
}

/* bind and port: the listeners are first opened when the workers start
 * (workers_start); a change at run time opens the new ones beside those in
 * force (worker.c), and CONFIG SET hands them over. */
static int apply_listeners(char *err, size_t errsize) {
    if (!server.workers) return 1;
    return listeners_prepare(err, errsize);
}

static int set_io_threads(const char *value, char *err, size_t errsize) {
    long long v;
    if (!hk_str2ll(value, strlen(value), &v)) {
        snprintf(err, errsize, "argument couldn't be parsed into an integer");
        return 0;
    }
    if (v < 1 || v > HK_MAX_THREADS) {
        snprintf(err, errsize, "argument must be between 1 and %d inclusive", HK_MAX_THREADS);
        return 0;
    }
    atomic_store(&cfg.threads, v);
    return 1;
}

/* The workers running, once started. */
static void get_io_threads(char *buf, size_t size) {
    snprintf(buf, size, "%lld", server.nworkers ? (long long)server.nworkers : atomic_load(&cfg.threads));
}

static int apply_hz(char *err, size_t errsize) {
    (void)err;
    (void)errsize;
    long long hz = atomic_load(&cfg.hz);
    if (hz < 1) atomic_store(&cfg.hz, 1);
    else if (hz > 500) atomic_store(&cfg.hz, 500);
    return 1;
}

/* Descriptors kept for listeners, logs and the like besides clients. */
#define RESERVED_FDS 32

/* Raise RLIMIT_NOFILE so that `clients` connections fit, as far as the
 * system lets. The answer is Redis's (adjustOpenFilesLimit: the wanted
 * limit, then 16 less each time it is refused, down to the current one),
 * found by bisection over those candidates: a limit the system accepts
 * accepts every lower one, and Redis's walk would take billions of calls
 * for a huge maxclients. The hard limit is never lowered. Returns the
 * number of clients the limit now allows, at least `clients` when it was
 * raised enough. */
static int try_nofile(rlim_t v, rlim_t hard) {
    struct rlimit rl = {v, v > hard ? v : hard};
    return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

static long long open_files_for(long long clients) {
    struct rlimit rl;
    rlim_t want = (rlim_t)clients + RESERVED_FDS;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return clients; /* nothing known: trust the setting */
    rlim_t old = rl.rlim_cur, hard = rl.rlim_max;
    if (old >= want) return clients;
    if (try_nofile(want, hard)) return clients;
    /* Candidates want - 16k for k in 1..kmax, all above the old limit. */
    rlim_t kmax = (want - old - 1) / 16;
    rlim_t lo = 1, hi = kmax, best = 0;
    while (lo <= hi) {
        rlim_t k = lo + (hi - lo) / 2;
        if (try_nofile(want - 16 * k, hard)) {
            best = k;
            if (k == 1) break;
            hi = k - 1;
        } else {
            lo = k + 1;
        }
    }
    if (!best) return old > RESERVED_FDS ? (long long)old - RESERVED_FDS : 1;
    try_nofile(want - 16 * best, hard); /* the last probe may have been a smaller one */
    return (long long)(want - 16 * best) - RESERVED_FDS;
}

/* maxclients: the process must be able to open that many descriptors.
 * CONFIG SET fails when the system refuses; at start-up the setting is
 * lowered to what fits, with a warning, as Redis does. */
static int apply_maxclients(char *err, size_t errsize) {
    long long want = atomic_load(&cfg.maxclients);
    long long fits = open_files_for(want);
    if (fits >= want) return 1;
    if (fits < 1) fits = 1;
    if (!server.workers) {
        hk_log(LL_WARNING,
               "Current maximum open files allows %lld clients: maxclients has been reduced from %lld to %lld. If "
               "you need higher maxclients increase 'ulimit -n'.",
               fits, want, fits);
        atomic_store(&cfg.maxclients, fits);
        return 1;
    }
    snprintf(err, errsize, "The operating system is not able to handle the specified number of clients, try with %lld",
             fits);
    return 0;
}

static int check_dbfilename(const char *value, char *err, size_t errsize) {
    if (strchr(value, '/')) {
        snprintf(err, errsize, "dbfilename can't be a path, just a filename");
        return 0;
    }
    return 1;
}

static int check_save(const char *value, char *err, size_t errsize) {
    return savepoints_parse(value, NULL, NULL, 0, err, errsize) >= 0;
}

static int apply_save(char *err, size_t errsize) {
    (void)err;
    (void)errsize;
    snapshot_config_changed();
    return 1;
}

/* Redis changes the working directory: files are then relative to it. */
static int apply_dir(char *err, size_t errsize) {
    char *d = cfg_get_string(&cfg.dir);
    int ok = d[0] == '\0' || chdir(d) == 0;
    if (!ok) snprintf(err, errsize, "%s", strerror(errno));
    hk_free(d);
    return ok;
}

static int apply_appendfsync(char *err, size_t errsize) {
    (void)err;
    (void)errsize;
    aof_fsync_policy_changed();
    return 1;
}

static int apply_appendonly(char *err, size_t errsize) {
    if (!server.workers) return 1; /* at start-up: main opens the AOF */
    return aof_config_changed(err, errsize);
}

/* maxmemory-clients, parsed as Redis parses its memory-or-percent
 * settings (MEMORY_CONFIG | PERCENT_CONFIG of a signed size): first as a
 * memory value the way memtoull reads one (digits, possibly none, then a
 * unit; the product wraps as Redis's unsigned arithmetic does and is then
 * read as signed), else as "N%" with N a canonical non-negative integer,
 * stored negated. A negative result is a percentage and must not pass
 * 100. The texts are Redis's. */
static int parse_memory_or_percent(const char *value, long long *out) {
    size_t len = strlen(value), nd = 0;
    if (value[0] != '-') {
        while (isdigit((unsigned char)value[nd])) nd++;
        const char *u = value + nd;
        unsigned long long mul = 0;
        if (!*u || !strcasecmp(u, "b")) mul = 1;
        else if (!strcasecmp(u, "k")) mul = 1000;
        else if (!strcasecmp(u, "kb")) mul = 1024;
        else if (!strcasecmp(u, "m")) mul = 1000ULL * 1000;
        else if (!strcasecmp(u, "mb")) mul = 1024ULL * 1024;
        else if (!strcasecmp(u, "g")) mul = 1000ULL * 1000 * 1000;
        else if (!strcasecmp(u, "gb")) mul = 1024ULL * 1024 * 1024;
        if (mul && nd < 128) {
            /* strtoull's reading: saturates at its maximum. */
            unsigned long long v = 0;
            for (size_t i = 0; i < nd; i++) {
                unsigned d = (unsigned)(value[i] - '0');
                v = v > (ULLONG_MAX - d) / 10 ? ULLONG_MAX : v * 10 + d;
            }
            *out = (long long)(v * mul);
            return 1;
        }
    }
    long long pct;
    if (len > 1 && value[len - 1] == '%' && hk_str2ll(value, len - 1, &pct) && pct >= 0) {
        *out = -pct;
        return 1;
    }
    return 0;
}

static int set_maxmemory_clients(const char *value, char *err, size_t errsize) {
    long long v;
    if (!parse_memory_or_percent(value, &v)) {
        snprintf(err, errsize, "argument must be a memory or percent value");
        return 0;
    }
    if (v < -100) {
        snprintf(err, errsize, "percentage argument must be less or equal to 100");
        return 0;
    }
    atomic_store(&cfg.maxmemory_clients, v);
    return 1;
}

static void get_maxmemory_clients(char *buf, size_t size) {
    long long v = atomic_load(&cfg.maxmemory_clients);
    if (v < 0) snprintf(buf, size, "%lld%%", -v);
    else snprintf(buf, size, "%lld", v);
}

/* A lower limit is enforced at once: every worker is woken to take it and
 * check its connections (otherwise an idle one would at its next cron). */
static int apply_maxmemory_clients(char *err, size_t errsize) {
    (void)err;
    (void)errsize;
    for (int i = 0; server.workers && i < server.nworkers; i++) worker_post(&server.workers[i], clientmem_wake, NULL);
    return 1;
}

static int set_obl(const char *value, char *err, size_t errsize) {
    char *copy = hk_strdup(value);
    char *words[64];
    int n = 0;
    for (char *tok = strtok(copy, " \t"); tok && n < 64; tok = strtok(NULL, " \t")) words[n++] = tok;
    long long vals[3][3];
    int seen[3] = {0, 0, 0};
    int ok = (n % 4 == 0 && n > 0);
    for (int i = 0; ok && i < n; i += 4) {
        int cls;
        if (!strcasecmp(words[i], "normal")) cls = OBL_NORMAL;
        else if (!strcasecmp(words[i], "slave") || !strcasecmp(words[i], "replica")) cls = OBL_REPLICA;
        else if (!strcasecmp(words[i], "pubsub")) cls = OBL_PUBSUB;
        else {
            ok = 0;
            break;
        }
        long long h, s, secs;
        if (!cfg_parse_memory(words[i + 1], &h) || !cfg_parse_memory(words[i + 2], &s) ||
            !hk_str2ll(words[i + 3], strlen(words[i + 3]), &secs) || h < 0 || s < 0 || secs < 0) {
            ok = 0;
            break;
        }
        vals[cls][0] = h;
        vals[cls][1] = s;
        vals[cls][2] = secs;
        seen[cls] = 1;
    }
    hk_free(copy);
    if (!ok) {
        snprintf(err, errsize, "Wrong number of arguments in buffer limit configuration.");
        return 0;
    }
    for (int c = 0; c < 3; c++)
        if (seen[c])
            for (int k = 0; k < 3; k++) atomic_store(&cfg.obl[c][k], vals[c][k]);
    return 1;
}

static void get_obl(char *buf, size_t size) {
    static const char *names[3] = {"normal", "slave", "pubsub"};
    size_t off = 0;
    for (int c = 0; c < 3; c++)
        off += (size_t)snprintf(buf + off, size - off, "%s%s %lld %lld %lld", c ? " " : "", names[c],
                                atomic_load(&cfg.obl[c][0]), atomic_load(&cfg.obl[c][1]), atomic_load(&cfg.obl[c][2]));
}

int cfg_set(const struct cfg_entry *e, const char *value, char *err, size_t errsize) {
    if (!cfg_store(e, value, err, errsize)) return 0;
    if (!e->apply) return 1;
    err[0] = '\0';
    return e->apply(err, errsize);
}

/* Redis's memtoull: digits and an optional unit, no sign. */
static int parse_memory_value(const char *value, long long *v) {
    return isdigit((unsigned char)value[0]) && cfg_parse_memory(value, v) && *v >= 0;
}

int cfg_store(const struct cfg_entry *e, const char *value, char *err, size_t errsize) {
    long long v;
    switch (e->type) {
    case CFG_BOOL:
        if (!strcasecmp(value, "yes")) v = 1;
        else if (!strcasecmp(value, "no")) v = 0;
        else {
            snprintf(err, errsize, "argument must be 'yes' or 'no'");
            return 0;
        }
        atomic_store(e->ival, v);
        return 1;
    case CFG_INT:
    case CFG_MEM:
    case CFG_OCTAL: {
        int ok;
        if (e->type == CFG_MEM) ok = parse_memory_value(value, &v);
        else if (e->type == CFG_OCTAL) {
            char *end;
            errno = 0;
            v = strtoll(value, &end, 8);
            ok = *value && !*end && !errno;
        } else ok = hk_str2ll(value, strlen(value), &v);
        if (!ok) {
            /* Redis's texts per kind of number. */
            snprintf(err, errsize, "%s",
                     e->type == CFG_MEM     ? "argument must be a memory value"
                     : e->type == CFG_OCTAL ? "argument couldn't be parsed as an octal number"
                                            : "argument couldn't be parsed into an integer");
            return 0;
        }
        if (v < e->min || v > e->max) {
            snprintf(err, errsize, "argument must be between %lld and %lld inclusive", e->min, e->max);
            return 0;
        }
        if (e->check && !e->check(value, err, errsize)) return 0; /* extra rule of this setting */
        atomic_store(e->ival, v);
        return 1;
    }
    case CFG_ENUM:
        for (const struct cfg_enum *en = e->enums; en->name; en++) {
            if (!strcasecmp(value, en->name)) {
                atomic_store(e->ival, en->value);
                return 1;
            }
        }
        {
            size_t off = (size_t)snprintf(err, errsize, "argument(s) must be one of the following:");
            for (const struct cfg_enum *en = e->enums; en->name && off < errsize; en++)
                off += (size_t)snprintf(err + off, errsize - off, "%s %s", en == e->enums ? "" : ",", en->name);
        }
        return 0;
    case CFG_STRING: {
        if (e->check && !e->check(value, err, errsize)) return 0;
        pthread_rwlock_wrlock(&cfg_lock);
        char *old = *e->sval;
        *e->sval = hk_strdup(value);
        pthread_rwlock_unlock(&cfg_lock);
        hk_free(old);
        return 1;
    }
    case CFG_SPECIAL:
        return e->check(value, err, errsize);
    }
    return 0;
}

void cfg_get(const struct cfg_entry *e, char *buf, size_t size) {
    switch (e->type) {
    case CFG_BOOL: snprintf(buf, size, "%s", atomic_load(e->ival) ? "yes" : "no"); return;
    case CFG_INT:
    case CFG_MEM: snprintf(buf, size, "%lld", atomic_load(e->ival)); return;
    case CFG_OCTAL: snprintf(buf, size, "%llo", (unsigned long long)atomic_load(e->ival)); return;
    case CFG_ENUM: {
        long long v = atomic_load(e->ival);
        for (const struct cfg_enum *en = e->enums; en->name; en++)
            if (en->value == v) {
                snprintf(buf, size, "%s", en->name);
                return;
            }
        buf[0] = '\0';
        return;
    }
    case CFG_STRING:
        pthread_rwlock_rdlock(&cfg_lock);
        snprintf(buf, size, "%s", *e->sval ? *e->sval : "");
        pthread_rwlock_unlock(&cfg_lock);
        return;
    case CFG_SPECIAL: e->get(buf, size); return;
    }
}

char *cfg_get_string(char **field) {
    pthread_rwlock_rdlock(&cfg_lock);
    char *s = hk_strdup(*field ? *field : "");
    pthread_rwlock_unlock(&cfg_lock);
    return s;
}

/* ---- loading ----------------------------------------------------------- */

struct argcollect {
    char *base;
    char *argv[256];
    int argc;
};

static void collect(void *ctx, size_t off, size_t len) {
    struct argcollect *a = ctx;
    if (a->argc < 256) a->argv[a->argc++] = hk_strndup(a->base + off, len);
}

static void fatal_config(const char *source, int line, const char *text, const char *msg) {
    fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (HotKV %s) ***\n", HOTKV_VERSION);
    if (line > 0) fprintf(stderr, "Reading the configuration file %s, at line %d\n", source, line);
    else fprintf(stderr, "Reading the configuration from %s\n", source);
    fprintf(stderr, ">>> '%s'\n%s\n", text, msg);
    exit(1);
}

/* Apply one line of configuration text. */
static void apply_line(const char *source, int lineno, const char *line, int depth);
struct argcollect;
static void apply_args(const char *source, int lineno, const char *line, int depth, struct argcollect *a);

static void load_text(const char *source, char *text, int depth) {
    int lineno = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        apply_line(source, lineno, line, depth);
    }
}

static void load_file(const char *path, int depth) {
    if (depth > 8) fatal_config(path, 0, "include", "Too many nested includes");
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "Fatal error, can't open config file '%s': %s\n", path, strerror(errno));
        exit(1);
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            buf = hk_realloc(buf, cap);
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (!buf) return;
    buf[len] = '\0';
    /* Count lines ourselves so error messages point at the right one
     * (strtok would skip empty lines). */
    int lineno = 0;
    char *p = buf;
    while (p && *p) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        lineno++;
        apply_line(path, lineno, p, depth);
        p = nl ? nl + 1 : NULL;
    }
    hk_free(buf);
}

static void apply_line(const char *source, int lineno, const char *line, int depth) {
    size_t len = strlen(line);
    char *copy = hk_malloc(len + 2);
    memcpy(copy, line, len + 1);
    while (len && (copy[len - 1] == '\r' || isspace((unsigned char)copy[len - 1]))) copy[--len] = '\0';
    size_t s = 0;
    while (s < len && isspace((unsigned char)copy[s])) s++;
    if (s == len || copy[s] == '#') {
        hk_free(copy);
        return;
    }
    struct argcollect a = {.base = copy, .argc = 0};
    if (!resp_split_line(copy, s, len, collect, &a)) fatal_config(source, lineno, line, "Unbalanced quotes in configuration line");
    apply_args(source, lineno, line, depth, &a);
    for (int i = 0; i < a.argc; i++) hk_free(a.argv[i]);
    hk_free(copy);
}

static void apply_args(const char *source, int lineno, const char *line, int depth, struct argcollect *ap) {
    struct argcollect a = *ap;
    if (a.argc == 0) return;
    if (!strcasecmp(a.argv[0], "include")) {
        if (a.argc != 2) fatal_config(source, lineno, line, "Bad directive or wrong number of arguments");
        load_file(a.argv[1], depth + 1);
        return;
    }
    if (!strcasecmp(a.argv[0], "user")) {
        /* ACL users: applied by acl_init once the command table exists. */
        if (a.argc < 2) fatal_config(source, lineno, line, "wrong number of arguments");
        acl_config_user_line(source, lineno, a.argc - 1, a.argv + 1);
        return;
    }
    const struct cfg_entry *e = cfg_find(a.argv[0], strlen(a.argv[0]));
    if (!e) fatal_config(source, lineno, line, "Bad directive or wrong number of arguments");
    char value[4096];
    value[0] = '\0';
    if (a.argc < 2) fatal_config(source, lineno, line, "wrong number of arguments");
    if (!(e->flags & CFG_MULTI_ARG) && a.argc != 2) fatal_config(source, lineno, line, "wrong number of arguments");
    size_t off = 0;
    for (int i = 1; i < a.argc && off < sizeof(value); i++)
        off += (size_t)snprintf(value + off, sizeof(value) - off, "%s%s", i > 1 ? " " : "", a.argv[i]);
    /* Save lines add up, as in Redis: the first one replaces the default
     * points, the next ones append, and `save ""` clears them. */
    static int save_seen;
    if (e->sval == &cfg.save) {
        if (save_seen && value[0] && cfg.save && cfg.save[0]) {
            char joined[4096];
            snprintf(joined, sizeof(joined), "%s %s", cfg.save, value);
            snprintf(value, sizeof(value), "%s", joined);
        }
        save_seen = 1;
    }
    char err[256];
    if (!cfg_set(e, value, err, sizeof(err))) {
        char msg[512];
        snprintf(msg, sizeof(msg), "Invalid value for '%s': %s", e->name, err);
        fatal_config(source, lineno, line, msg);
    }
}

static void load_defaults(void) {
    char err[256];
    for (const struct cfg_entry *e = cfg_table; e->name; e++) {
        if (!e->def) continue; /* another name for a setting that has its own row */
        if (!cfg_set(e, e->def, err, sizeof(err))) {
            fprintf(stderr, "internal error: bad default for %s: %s\n", e->name, err);
            exit(1);
        }
    }
}

void config_load(int argc, char **argv) {
    load_defaults();
    int i = 1;
    if (i < argc && argv[i][0] != '-') {
        char real[PATH_MAX];
        if (!realpath(argv[i], real)) {
            fprintf(stderr, "Fatal error, can't open config file '%s': %s\n", argv[i], strerror(errno));
            exit(1);
        }
        server.config_file = hk_strdup(real);
        load_file(real, 0);
        i++;
    }
    /* "--name v1 v2 --other v" becomes one configuration line per option. */
    size_t cap = 4096, len = 0;
    char *text = hk_malloc(cap);
    text[0] = '\0';
    for (; i < argc; i++) {
        const char *a = argv[i];
        int opt = a[0] == '-' && a[1] == '-' && a[2];
        size_t need = len + strlen(a) * 4 + 8;
        if (need > cap) {
            cap = need * 2;
            text = hk_realloc(text, cap);
        }
        if (opt) {
            if (len) text[len++] = '\n';
            len += (size_t)sprintf(text + len, "%s", a + 2);
        } else {
            if (!len) {
                fprintf(stderr, "Invalid argument '%s': options start with --\n", a);
                exit(1);
            }
            /* Quote each value so spaces and empty strings survive. */
            text[len++] = ' ';
            text[len++] = '"';
            for (const char *p = a; *p; p++) {
                if (*p == '"' || *p == '\\') text[len++] = '\\';
                text[len++] = *p;
            }
            text[len++] = '"';
        }
        text[len] = '\0';
    }
    if (len) load_text("the command line", text, 0);
    hk_free(text);
}

/* ---- CONFIG REWRITE ---------------------------------------------------- */

static int is_default(const struct cfg_entry *e) {
    char cur[4096], def[4096];
    if (!e->def) return 1; /* written under the row that owns the value */
    cfg_get(e, cur, sizeof(cur));
    /* Render the default through the same getter by parsing it. */
    if (e->type == CFG_STRING || e->type == CFG_SPECIAL || e->type == CFG_ENUM || e->type == CFG_BOOL) {
        if (e->type == CFG_SPECIAL) {
            /* The getter's rendering of the value against the default as
             * written in the table: equal only when it is spelled the way
             * the getter renders it (otherwise the line is kept). */
            return strcasecmp(cur, e->def) == 0;
        }
        snprintf(def, sizeof(def), "%s", e->def);
        return strcasecmp(cur, def) == 0;
    }
    long long v;
    if (e->type == CFG_MEM) cfg_parse_memory(e->def, &v);
    else if (e->type == CFG_OCTAL) v = strtoll(e->def, NULL, 8);
    else hk_str2ll(e->def, strlen(e->def), &v);
    return atomic_load(e->ival) == v;
}

static void render_line(const struct cfg_entry *e, char *buf, size_t size) {
    char val[4096];
    cfg_get(e, val, sizeof(val));
    if (e->flags & CFG_MULTI_ARG) {
        if (val[0] == '\0') snprintf(buf, size, "%s \"\"", e->name);
        else snprintf(buf, size, "%s %s", e->name, val);
        return;
    }
    if (e->type != CFG_STRING) { /* numbers, yes/no and enum words: unquoted, as Redis writes them */
        if (val[0] == '\0') snprintf(buf, size, "%s \"\"", e->name);
        else snprintf(buf, size, "%s %s", e->name, val);
        return;
    }
    size_t off = (size_t)snprintf(buf, size, "%s \"", e->name);
    /* Escaped the way the loader (resp_split_line) reads it back: a
     * newline written raw would split the setting over two lines. */
    for (const unsigned char *p = (const unsigned char *)val; *p && off + 5 < size; p++) {
        if (*p == '"' || *p == '\\') {
            buf[off++] = '\\';
            buf[off++] = (char)*p;
        } else if (*p == '\n' || *p == '\r' || *p == '\t') {
            buf[off++] = '\\';
            buf[off++] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't';
        } else if (*p < 0x20 || *p == 0x7f) {
            off += (size_t)snprintf(buf + off, size - off, "\\x%02x", *p);
        } else {
            buf[off++] = (char)*p;
        }
    }
    snprintf(buf + off, size - off, "\"");
}

int config_rewrite(char *err, size_t errsize) {
    const char *path = server.config_file;
    if (!path) {
        snprintf(err, errsize, "ERR The server is running without a config file");
        return 0;
    }
    FILE *f = fopen(path, "r");
    char **lines = NULL;
    int nlines = 0, cap = 0;
    if (f) {
        char buf[8192];
        while (fgets(buf, sizeof(buf), f)) {
            size_t l = strlen(buf);
            while (l && (buf[l - 1] == '\n' || buf[l - 1] == '\r')) buf[--l] = '\0';
            if (nlines == cap) {
                cap = cap ? cap * 2 : 64;
                lines = hk_realloc(lines, (size_t)cap * sizeof(char *));
            }
            lines[nlines++] = hk_strdup(buf);
        }
        fclose(f);
    }
    int ntab = 0;
    while (cfg_table[ntab].name) ntab++;
    char *written = hk_calloc((size_t)ntab, 1);
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d", path, (int)getpid());
    FILE *o = fopen(tmp, "w");
    if (!o) {
        snprintf(err, errsize, "ERR Rewriting config file: %s", strerror(errno));
        for (int i = 0; i < nlines; i++) hk_free(lines[i]);
        hk_free(lines);
        hk_free(written);
        return 0;
    }
    char out[8192];
    for (int i = 0; i < nlines; i++) {
        const char *p = lines[i];
        while (isspace((unsigned char)*p)) p++;
        size_t wl = 0;
        while (p[wl] && !isspace((unsigned char)p[wl])) wl++;
        /* ACL users are written from the users themselves, below. */
        if (wl == 4 && !strncasecmp(p, "user", 4)) continue;
        const struct cfg_entry *e = (*p && *p != '#') ? cfg_find(p, wl) : NULL;
        if (!e) {
            fprintf(o, "%s\n", lines[i]);
            continue;
        }
        int idx = (int)(e - cfg_table);
        if (written[idx]) continue; /* later duplicates are dropped */
        written[idx] = 1;
        render_line(e, out, sizeof(out));
        fprintf(o, "%s\n", out);
    }
    int header = 0;
    for (int i = 0; i < ntab; i++) {
        const struct cfg_entry *e = &cfg_table[i];
        if (written[i] || is_default(e)) continue;
        if (!header) {
            fprintf(o, "# Generated by CONFIG REWRITE\n");
            header = 1;
        }
        render_line(e, out, sizeof(out));
        fprintf(o, "%s\n", out);
    }
    /* Without an aclfile the users live in the configuration file, as
     * Redis rewrites them: one "user" line each (ACL LIST's form). */
    char *aclfile = cfg_get_string(&cfg.aclfile);
    if (!aclfile[0]) {
        int n;
        struct acl_user **users = acl_users_all(&n);
        for (int i = 0; i < n; i++) {
            char *d = acl_describe_user(users[i]);
            if (!header) {
                fprintf(o, "# Generated by CONFIG REWRITE\n");
                header = 1;
            }
            fprintf(o, "%s\n", d);
            hk_free(d);
            acl_user_release(users[i]);
        }
        hk_free(users);
    }
    hk_free(aclfile);
    int ok = fflush(o) == 0 && fsync(fileno(o)) == 0;
    ok = (fclose(o) == 0) && ok;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) {
        snprintf(err, errsize, "ERR Rewriting config file: %s", strerror(errno));
        unlink(tmp);
    }
    for (int i = 0; i < nlines; i++) hk_free(lines[i]);
    hk_free(lines);
    hk_free(written);
    return ok;
}
