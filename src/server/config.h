/* config.h - the configuration table: one description of every setting
 * drives the config file, the command line, CONFIG GET/SET/REWRITE.
 *
 * Numeric settings live in atomics that any thread may read with CFG();
 * CONFIG SET stores them. String settings are read and written under
 * cfg_lock (cfg_get_string copies one out). */
#ifndef HK_CONFIG_H
#define HK_CONFIG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

enum { OBL_NORMAL = 0, OBL_REPLICA = 1, OBL_PUBSUB = 2 };
enum { CFG_DEBUG_NO = 0, CFG_DEBUG_YES = 1, CFG_DEBUG_LOCAL = 2 }; /* enable-debug-command */
enum { AOF_FSYNC_NO = 0, AOF_FSYNC_ALWAYS = 1, AOF_FSYNC_EVERYSEC = 2 }; /* appendfsync */
enum { SANITIZE_NO = 0, SANITIZE_YES = 1, SANITIZE_CLIENTS = 2 };        /* sanitize-dump-payload */

struct server_config {
    _Atomic long long port, tcp_backlog, timeout, tcp_keepalive, maxclients, databases, hz;
    _Atomic long long proto_max_bulk_len, client_query_buffer_limit, loglevel, protected_mode;
    _Atomic long long threads, shards, unixsocketperm, daemonize, appendonly;
    _Atomic long long active_expire_effort;
    /* Read by clients and tools; only their truthful values are accepted
     * until eviction and cluster mode exist. */
    _Atomic long long maxmemory, maxmemory_policy, maxmemory_samples, maxmemory_eviction_tenacity, cluster_enabled;
    /* maxmemory-clients (src/server/clientmem.h): bytes, or a percentage
     * of maxmemory stored negated (-10 is "10%"), as Redis stores it; 0: off. */
    _Atomic long long maxmemory_clients;
    _Atomic long long enable_debug_command, enable_protected_configs; /* CFG_DEBUG_* */
    /* The encoding thresholds live with the types (type_limits, TLIM()). */
    _Atomic long long hll_sparse_max_bytes;
    /* Lazy freeing (src/server/lazyfree.h): which deletions may free big
     * values in the background, and FLUSH*'s default mode. */
    _Atomic long long lazyfree_lazy_eviction, lazyfree_lazy_expire, lazyfree_lazy_server_del;
    _Atomic long long lazyfree_lazy_user_del, lazyfree_lazy_user_flush;
    /* client-output-buffer-limit: per class, hard bytes, soft bytes, soft seconds. */
    _Atomic long long obl[3][3];
    /* Slow log and latency monitoring (src/server/observe.h). */
    _Atomic long long slowlog_log_slower_than, slowlog_max_len, latency_monitor_threshold, latency_tracking;
    /* Scripts: past this many milliseconds a running script makes other
     * clients' commands answer -BUSY and can be killed (SCRIPT KILL). */
    _Atomic long long busy_reply_threshold;
    /* Client-side caching: most keys the tracking table remembers. */
    _Atomic long long tracking_table_max_keys;
    /* Persistence (src/server/snapshot.h, aof.h). */
    _Atomic long long rdbcompression, rdbchecksum, stop_writes_on_bgsave_error, rdb_del_sync_files;
    _Atomic long long rdb_save_incremental_fsync, sanitize_dump_payload, appendfsync, aof_use_rdb_preamble;
    _Atomic long long aof_timestamp_enabled, auto_aof_rewrite_percentage, auto_aof_rewrite_min_size;
    _Atomic long long aof_load_truncated, aof_rewrite_incremental_fsync, no_appendfsync_on_rewrite;
    /* TLS (src/server/tlsconf.c): the port, and what the context is built from. */
    _Atomic long long tls_port, tls_auth_clients, tls_prefer_server_ciphers, tls_session_caching;
    _Atomic long long tls_session_cache_size, tls_session_cache_timeout;
    /* ACL (acl.h): ACL LOG's length, and whether new users and selectors
     * start with allchannels (1) or resetchannels (0). */
    _Atomic long long acllog_max_len, acl_pubsub_default;
    _Atomic int requirepass_set;
    /* Strings: guarded by cfg_lock. */
    char *bind;       /* space separated, as given */
    char *unixsocket; /* "" when none */
    char *logfile;    /* "" = stdout */
    char *requirepass;
    char *aclfile;    /* "" when none */
    char *pidfile;
    char *dir;
    char *save;
    char *dbfilename;
    char *appenddirname, *appendfilename;
    char *tls_cert_file, *tls_key_file, *tls_key_file_pass;
    char *tls_client_cert_file, *tls_client_key_file, *tls_client_key_file_pass;
    char *tls_ca_cert_file, *tls_ca_cert_dir, *tls_dh_params_file;
    char *tls_protocols, *tls_ciphers, *tls_ciphersuites;
};

extern struct server_config cfg;
extern pthread_rwlock_t cfg_lock;

#define CFG(field) atomic_load_explicit(&cfg.field, memory_order_relaxed)

/* Load defaults, then the file (if any), then the command line options.
 * On error prints a message naming the setting and exits. */
void config_load(int argc, char **argv);
/* Copy of a string setting (caller frees with hk_free). */
char *cfg_get_string(char **field);

struct client;
void cmd_config(struct client *c);

#endif
