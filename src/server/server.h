/* server.h - the server's shared types: workers, clients, the command table
 * entry and the global server state.
 *
 * Ownership in one line each (docs/threads.md has the full story):
 *   - struct server: written at start-up before workers run; the fields
 *     that change later are atomics or sit behind the lock named beside them.
 *   - struct worker: owned by its thread; other threads only post to its
 *     mailbox and read its atomic counters.
 *   - struct client: owned by the worker that accepted it, for its life. */
#ifndef HK_SERVER_H
#define HK_SERVER_H

#include "../core/util.h"
#include "../proto/outbuf.h"
#include "../proto/reply.h"
#include "../proto/resp.h"
#include "../store/db.h"
#include "config.h"
#include "exec.h"
#include "observe.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HOTKV_VERSION "0.1.0"
#define HK_REDIS_COMPAT_VERSION "8.0.0"
#define HK_MAX_THREADS 256
#define HK_MAX_BIND 16

struct client;
struct worker;
struct wbatch;

/* ---- command table -------------------------------------------------- */

/* Command flags, named after Redis's. */
#define CMD_WRITE (1ULL << 0)
#define CMD_READONLY (1ULL << 1)
#define CMD_DENYOOM (1ULL << 2)
/* Served by a Redis module in Redis (vector sets): the upper-case name and
 * the "module" flag COMMAND shows. */
#define CMD_MODULE (1ULL << 3)
#define CMD_ADMIN (1ULL << 4)
#define CMD_PUBSUB (1ULL << 5)
#define CMD_NOSCRIPT (1ULL << 6)
#define CMD_BLOCKING (1ULL << 8)
#define CMD_LOADING (1ULL << 9)
#define CMD_STALE (1ULL << 10)
#define CMD_SKIP_MONITOR (1ULL << 11)
#define CMD_SKIP_SLOWLOG (1ULL << 12)
#define CMD_ASKING (1ULL << 13)
#define CMD_FAST (1ULL << 14)
#define CMD_NO_AUTH (1ULL << 15)
#define CMD_MAY_REPLICATE (1ULL << 16)
#define CMD_SENTINEL (1ULL << 17)
#define CMD_ONLY_SENTINEL (1ULL << 18)
#define CMD_NO_MANDATORY_KEYS (1ULL << 19)
#define CMD_PROTECTED (1ULL << 20)
#define CMD_NO_ASYNC_LOADING (1ULL << 23)
#define CMD_NO_MULTI (1ULL << 24)
#define CMD_MOVABLE_KEYS (1ULL << 25)
#define CMD_ALLOW_BUSY (1ULL << 26)
/* HotKV-only: runs the connection's queued commands (EXEC); CLIENT PAUSE
 * judges it by their flags. */
#define CMD_TXN_EXEC (1ULL << 27)
/* HotKV-only: its reply is gathered from every worker after it returns
 * (CLIENT LIST, CLIENT KILL, CLIENT UNBLOCK, CONFIG RESETSTAT), so it cannot
 * answer inside EXEC's reply: MULTI refuses to queue it. */
#define CMD_GATHER (1ULL << 28)
/* HotKV-only: runs at once even inside MULTI (MULTI, EXEC, DISCARD, WATCH,
 * QUIT, RESET), as in Redis. */
#define CMD_TXN_CONTROL (1ULL << 29)
/* HotKV-only: runs a script or function (EVAL*, FCALL*): MONITOR shows it
 * before the commands it runs (it is skip-monitor, as in Redis). */
#define CMD_RUNS_SCRIPT (1ULL << 31)
/* HotKV-only: may take every shard while it runs (SORT with BY or GET
 * patterns, DEBUG DIGEST): EXEC locks everything for it up front. */
#define CMD_MAY_LOCK_ALL (1ULL << 30)
/* HotKV-only: runs with every shard locked (FLUSHALL, FLUSHDB, SWAPDB). */
#define CMD_ALL_SHARDS (1ULL << 40)
/* HotKV-only: the command must not run while clients are paused for writes. */
#define CMD_PAUSE_WRITE (1ULL << 41)
/* HotKV-only: visits the keyspace shard by shard (KEYS, SCAN, DBSIZE,
 * RANDOMKEY) through exec_shard_enter/leave; locks nothing up front. */
#define CMD_SHARDWISE (1ULL << 42)
/* HotKV-only: updates access clocks even for CLIENT NO-TOUCH (TOUCH). */
#define CMD_TOUCH_ALWAYS (1ULL << 43)
/* HotKV-only: may run on a RESP2 connection that has subscriptions
 * ((P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING, QUIT, RESET), as in Redis. */
#define CMD_PUBSUB_CTX (1ULL << 32)

/* Key-spec flags for COMMAND INFO / GETKEYSANDFLAGS (Redis's CMD_KEY_*),
 * or'ed into a row's flags. A row without any gets RO+access (readonly) or
 * RW+update (write) derived by COMMAND. */
#define KS_RO (1ULL << 44)
#define KS_RW (1ULL << 45)
#define KS_OW (1ULL << 46)
#define KS_RM (1ULL << 47)
#define KS_ACCESS (1ULL << 48)
#define KS_UPDATE (1ULL << 49)
#define KS_INSERT (1ULL << 50)
#define KS_DELETE (1ULL << 51)
#define KS_NOT_KEY (1ULL << 52)
#define KS_INCOMPLETE (1ULL << 53)
#define KS_VARIABLE_FLAGS (1ULL << 54)
#define KS_MASK (0x7ffULL << 44)
/* Command tips (COMMAND INFO), also or'ed into flags: two bits, then the
 * request policy (3-bit field) and the response policy (4-bit field). */
#define TIP_NONDET_OUTPUT (1ULL << 55)
#define TIP_NONDET_ORDER (1ULL << 56)
#define TIP_REQ_SHIFT 57
#define TIP_REQ_ALL_NODES (1ULL << TIP_REQ_SHIFT)
#define TIP_REQ_ALL_SHARDS (2ULL << TIP_REQ_SHIFT)
#define TIP_REQ_MULTI_SHARD (3ULL << TIP_REQ_SHIFT)
#define TIP_REQ_SPECIAL (4ULL << TIP_REQ_SHIFT)
#define TIP_RESP_SHIFT 60
#define TIP_RESP_ONE_SUCCEEDED (1ULL << TIP_RESP_SHIFT)
#define TIP_RESP_ALL_SUCCEEDED (2ULL << TIP_RESP_SHIFT)
#define TIP_RESP_AGG_LOGICAL_AND (3ULL << TIP_RESP_SHIFT)
#define TIP_RESP_AGG_LOGICAL_OR (4ULL << TIP_RESP_SHIFT)
#define TIP_RESP_AGG_MIN (5ULL << TIP_RESP_SHIFT)
#define TIP_RESP_AGG_MAX (6ULL << TIP_RESP_SHIFT)
#define TIP_RESP_AGG_SUM (7ULL << TIP_RESP_SHIFT)
#define TIP_RESP_SPECIAL (8ULL << TIP_RESP_SHIFT)

/* ACL categories, named after Redis's. */
#define ACL_KEYSPACE (1ULL << 0)
#define ACL_READ (1ULL << 1)
#define ACL_WRITE (1ULL << 2)
#define ACL_SET (1ULL << 3)
#define ACL_SORTEDSET (1ULL << 4)
#define ACL_LIST (1ULL << 5)
#define ACL_HASH (1ULL << 6)
#define ACL_STRING (1ULL << 7)
#define ACL_BITMAP (1ULL << 8)
#define ACL_HYPERLOGLOG (1ULL << 9)
#define ACL_GEO (1ULL << 10)
#define ACL_STREAM (1ULL << 11)
#define ACL_PUBSUB (1ULL << 12)
#define ACL_ADMIN (1ULL << 13)
#define ACL_FAST (1ULL << 14)
#define ACL_SLOW (1ULL << 15)
#define ACL_BLOCKING (1ULL << 16)
#define ACL_DANGEROUS (1ULL << 17)
#define ACL_CONNECTION (1ULL << 18)
#define ACL_TRANSACTION (1ULL << 19)
#define ACL_SCRIPTING (1ULL << 20)
#define ACL_VECTORSET (1ULL << 21)

/* One key spec (Redis's begin_search / find_keys pair): where the search
 * for keys starts (an argv index, or the argument after a keyword looked
 * for from `startfrom`), then which keys follow (a range, or a count read
 * from the arguments). COMMAND INFO reports them, COMMAND GETKEYS and
 * GETKEYSANDFLAGS follow them; the execution core locks by the row's key
 * range and finder instead (exec.c). */
enum { KSB_INDEX = 1, KSB_KEYWORD, KSB_UNKNOWN };
enum { KSF_RANGE = 1, KSF_KEYNUM, KSF_UNKNOWN };
struct keyspec {
    const char *command; /* full name, "lmove" or "object|freq" */
    uint64_t flags;      /* KS_* */
    unsigned char bs;    /* KSB_* */
    int bs_pos;          /* index, or keyword's startfrom (<0: from the end) */
    const char *keyword;
    unsigned char fk;    /* KSF_* */
    /* Range: lastkey (<0: from the end), keystep, limit. Keynum: keynumidx,
     * firstkey, keystep (relative to the begin_search position). */
    int fk_a, fk_b, fk_c;
    const char *notes;
};
/* The rows of keyspecs.def (src/cmd/). */
#define BS_INDEX(i) KSB_INDEX, i, NULL
#define BS_KEYWORD(kw, from) KSB_KEYWORD, from, kw
#define BS_UNKNOWN KSB_UNKNOWN, 0, NULL
#define FK_RANGE(last, step, limit) KSF_RANGE, last, step, limit
#define FK_KEYNUM(idx, first, step) KSF_KEYNUM, idx, first, step
#define FK_UNKNOWN KSF_UNKNOWN, 0, 0, 0

/* COMMAND DOCS: the rows of cmddocs.def (src/cmd/), their argument lists
 * parsed into trees at start-up (cmddocs.c) and read-only afterwards. */
#define DOC_DEPRECATED (1u << 0)
#define DOC_SYSCMD (1u << 1)
#define ARGF_OPTIONAL (1u << 0)
#define ARGF_MULTIPLE (1u << 1)
#define ARGF_MULTIPLE_TOKEN (1u << 2)
struct cmdarg {
    const char *name, *type, *token, *since, *deprecated_since;
    const char *display; /* display_text; NULL: the name */
    int key_spec_index;  /* -1: not a key */
    unsigned flags;      /* ARGF_* */
    int is_container;    /* oneof or block: subs, no display_text */
    struct cmdarg *subs;
    int nsubs;
};
struct cmdhist {
    const char *version, *text;
};
struct cmddoc {
    const char *name;
    unsigned flags; /* DOC_* */
    const char *deprecated_since, *replaced_by;
    const char *history_src, *args_src; /* as written in cmddocs.def */
    /* Parsed from the two above. */
    struct cmdhist *history;
    int nhistory;
    struct cmdarg *args;
    int nargs;
};
/* Parse the docs rows and attach each to its command (commands_init
 * calls it once the commands are indexed); exits with a message when a
 * row does not parse or a command has no row. */
void cmddocs_init(struct cmddoc *docs, size_t ndocs);

typedef void (*cmd_proc)(struct cmd_ctx *c);
/* Custom key finder: from argv alone, fills keys[] with argv indexes,
 * returns the count (at most max), or -1 when the arguments are malformed. */
typedef int (*cmd_getkeys)(const hk_slice *argv, int argc, int *keys, int max);

struct command {
    const char *name;     /* lower case; "get", or "get" under "config" */
    cmd_proc proc;        /* NULL for a container of subcommands */
    int arity;            /* >0 exact, <0 at least -arity */
    uint64_t flags;
    int first, last, step; /* key positions; last -1 = to the end */
    /* "numkeys key..." spec: argv index of the key count, keys after it
     * (besides first..last); 0 when none. */
    int numkeys_at;
    cmd_getkeys getkeys;
    uint64_t acl;
    const char *summary, *since, *group, *complexity;
    /* Filled at start-up. */
    struct command *parent;
    struct command **subs;
    int nsubs;
    int id;               /* index into per-worker statistics */
    /* KEYS_NONE, KEYS_SINGLE (one key, at `first`), KEYS_SPEC or KEYS_ALL:
     * how exec_command locks. */
    unsigned char key_kind;
    char fullname[48];    /* "config|get" */
    /* Key specs: the rows of keyspecs.def naming this command, or one or
     * two derived from the key range and numkeys columns. */
    const struct keyspec *specs;
    int nspecs;
    const struct cmddoc *doc; /* never NULL once commands_init returns */
};

/* struct command.key_kind */
enum { KEYS_NONE = 0, KEYS_SINGLE, KEYS_SPEC, KEYS_ALL };

/* A subcommand row: the name of its container and the subcommand. */
struct subcommand {
    const char *parent;
    struct command cmd;
};

/* What the command table is built from: the rows of the .def files, which
 * the layer above the server and the handlers (src/app/cmdtable.c) turns
 * into these arrays. The table keeps pointers into them and fills the
 * start-up fields of the commands in place, so they must be writable and
 * live as long as the process. */
struct command_rows {
    struct command *top; /* commands and containers */
    size_t ntop;
    struct subcommand *subs;
    size_t nsubs;
    const struct keyspec *specs; /* the listed key specs (keyspecs.def) */
    size_t nspecs;
    struct cmddoc *docs; /* COMMAND DOCS (cmddocs.def) */
    size_t ndocs;
};

/* Build the table from rows: subcommands linked to their containers, ids,
 * full names, ACL categories, key specs, the name index and COMMAND DOCS.
 * Once, on the main thread, before any worker starts; read-only after.
 * Exits with a message when the rows disagree with each other. */
void commands_init(const struct command_rows *rows);
struct command *cmd_lookup(const char *name, size_t len);
struct command *cmd_lookup_sub(struct command *parent, const char *name, size_t len);
int commands_count(void); /* top-level commands */
int commands_total(void); /* commands plus subcommands: size of stats arrays */
struct command *command_by_id(int id);
/* The keys of argv for cmd with their key-spec flags (KS_*), Redis's way:
 * by the key specs, else by the row's key positions and finder (with the
 * flags of the spec that covers each key). pos and flags have room for
 * command_keys_flags_cap(cmd, argc) entries. Returns the count, or -1 when
 * the arguments are malformed. */
size_t command_keys_flags_cap(const struct command *cmd, int argc);
int command_keys_flags(const struct command *cmd, const hk_slice *argv, int argc, int *pos, uint64_t *flags);

/* ---- statistics ------------------------------------------------------- */

/* Single-writer counters: the owning worker stores with relaxed atomics,
 * readers on other threads load them and sum. */
typedef _Atomic unsigned long long stat_t;
static inline void stat_add(stat_t *s, unsigned long long n) {
    atomic_store_explicit(s, atomic_load_explicit(s, memory_order_relaxed) + n, memory_order_relaxed);
}
static inline unsigned long long stat_get(stat_t *s) { return atomic_load_explicit(s, memory_order_relaxed); }

struct cmdstat {
    stat_t calls, nsec, rejected, failed; /* nsec: time in the handler */
};

struct worker_stats {
    stat_t connections_received, commands_processed, rejected_conn;
    stat_t net_input_bytes, net_output_bytes;
    stat_t expired_keys, expired_stale_perc, keyspace_hits, keyspace_misses;
    stat_t dirty; /* writes since start, for rdb_changes_since_last_save */
    stat_t total_errors;
    stat_t evicted_clients, evicted_keys, client_qbuf_limit_disconnections, client_outbuf_limit_disconnections;
    stat_t io_reads, io_writes;
    stat_t unexpected_error_replies;
    stat_t total_reads_processed, total_writes_processed;
};

/* ---- workers ---------------------------------------------------------- */

typedef void (*mail_fn)(struct worker *w, void *arg);

struct mail {
    struct mail *next;
    mail_fn fn;
    void *arg;
};

/* Keys warmed by one prefetch pass (db_prefetch), and requests a pipeline
 * pass looks at. A few dozen keys keep every prefetched line in L1/L2
 * until its command runs. */
#define PREFETCH_MAX_KEYS 64
#define PREFETCH_MAX_REQS 32
/* Arguments of one request a pass looks at (MSET of 31 keys fits). */
#define PREFETCH_MAX_ARGS 64
/* Keys one pass over all the clients read in a loop turn may warm: enough
 * lines to stay in L2 until their commands run. */
#define PREFETCH_BATCH_KEYS 256
/* Query buffers: the size one read asks for, and how many spare ones a
 * worker keeps (one per connection read in a loop turn is the most a turn
 * lends at once). */
#define QBUF_CHUNK (16 * 1024)
#define QB_POOL_MAX 256

/* Client eviction (clientmem.c): a worker's part. The first fields are
 * its thread's own; the atomics publish some of them to the other workers
 * (single writer, relaxed). Buckets hold the connections eviction may
 * pick, by size: bucket 0 those under 32 KB, bucket b >= 1 those in
 * [2^(b+14), 2^(b+15)). */
#define CM_BUCKETS 64
struct cm_worker {
    size_t limit;      /* the loop turn's limit in bytes, 0: eviction off */
    size_t mine;       /* bytes of this worker's connections (published as `sum`) */
    size_t others;     /* the other workers' sums when this one last looked */
    /* The size of its biggest evictable connection when that is 32 KB or
     * more, 1 when all are smaller, 0 when none may be evicted (published
     * as `top`). */
    size_t top_mine;
    uint64_t nonempty; /* bit b: bucket[b] holds a connection */
    struct client *bucket[CM_BUCKETS];
    int warned;        /* "all evictable gone" logged since the total was last under */
    _Atomic size_t sum, top;
    /* With the limit off, its connections' bytes as of its last cron, for
     * INFO only (eviction reads `sum` and `top`, kept 0 while off). */
    _Atomic size_t off_sum;
    _Atomic long long beat_ms; /* its clock when it last took the limit (a stalled worker is passed over) */
    _Atomic int poked;         /* a wake-up to check is in its mailbox (one at a time) */
};

struct worker {
    int id;
    pthread_t thread;
    int epfd;
    int evfd;            /* mailbox wake-up */
    /* Its listeners: [0] the plain TCP port, [1] the TLS port. */
    int listen_fds[2][HK_MAX_BIND];
    int nlisten[2];
    /* The TLS context its next TLS connection is made from, and the
     * generation it was taken at (src/server/tlsconf.c). */
    struct tls_ctx *tls_ctx;
    unsigned tls_gen;
    /* Mailbox: any thread pushes under mbox_lock, the owner drains. Once
     * the worker has been joined it is closed: mail posted then is dropped. */
    pthread_mutex_t mbox_lock;
    struct mail *mbox_head, *mbox_tail;
    int mbox_closed;
    /* Owned by the worker thread. */
    struct client *clients;  /* doubly linked list of this worker's clients */
    struct htable by_id;     /* the same clients by id (worker_find_client) */
    struct client *pending_write; /* clients with output to flush this turn */
    struct client *paused;   /* clients waiting for CLIENT PAUSE to end */
    struct client *closing;  /* clients to free at the end of this loop turn */
    struct client *blocked;  /* clients blocked on keys (blocking.c), linked by next_blocked */
    /* Wake-ups the running command caused, posted when it ends (blocking.c). */
    struct {
        int worker;
        uint64_t cid;
    } *wakes;
    int nwakes, wakes_cap;
    stat_t nblocked;         /* clients on that list (INFO blocked_clients) */
    stat_t nblocked_timeout; /* those with a deadline (INFO clients_in_timeout_table) */
    stat_t npaused;          /* clients held by CLIENT PAUSE (counted as blocked, as in Redis) */
    stat_t nblocking_keys;   /* keys registered minus keys released by this thread; sums to the total */
    /* Scripts (script.c): the Lua state, created on the first script. The
     * atomics are read by SCRIPT KILL on other workers: a script here is
     * past busy-reply-threshold, it wrote, a kill is requested. */
    struct lua_env *lua;
    _Atomic int script_busy, script_wrote, script_kill;
    int busy_poll; /* inside worker_busy_poll: only a few commands may run */
    /* The connection whose command dispatch is running (NULL between
     * commands): the wake-ups it causes join its wake batch (blocking.h). */
    struct client *cmd_client;
    long long now_ms;        /* cached clock for the current loop turn */
    long long last_cron_ms;
    long long rbuf_peak_reset_ms; /* clients_cron: last reset of the clients' rbuf_peak */
    unsigned expire_cursor_shard;
    struct cmd_ctx sys_ctx; /* context of background work (active expiry) */
    _Atomic int nclients;
    struct worker_stats stats;
    struct cm_worker cm; /* client eviction (clientmem.h) */
    struct store_stats sstats; /* keyspace hits/misses/expired, written by this thread */
    struct cmdstat *cmdstats; /* commands_total() entries */
    /* Latency histograms, commands_total() slots, each allocated by this
     * thread on its command's first call (observe.h). */
    struct lat_hist *_Atomic *lathist;
    stat_t *errorstats;       /* per error prefix, see errstat_index() */
    /* Pub/sub (pubsub.c): this worker's subscribers by channel and
     * pattern, and the messages queued for other workers this turn. */
    struct ps_worker *ps;
    /* The connection whose running command has pub/sub frames waiting
     * for its reply to be complete (pubsub_command_end), or NULL. */
    struct client *ps_held_for;
    /* Query buffers of QBUF_CHUNK bytes, lent to connections for the turn
     * in which they read (worker.c): a connection with no partial request
     * left holds none, as with Redis's reusable query buffer. */
    char *qb_pool[QB_POOL_MAX];
    int qb_nfree;
    /* One-entry cache of command lookups (dispatch.c): the name as the
     * client spelled it, and the command it found. */
    struct command *last_cmd;
    char last_cmd_name[24];
    size_t last_cmd_len;
    /* The name before it: a script's EVALSHA and the command it calls,
     * or EXEC's inner commands, alternate. */
    struct command *prev_cmd;
    char prev_cmd_name[24];
    size_t prev_cmd_len;
    /* Keys of the prefetch passes (dispatch.c): the pass over all clients
     * read in a loop turn fills the first PREFETCH_BATCH_KEYS, a pass over
     * one client's pipeline the rest. */
    struct keyref warm_keys[PREFETCH_BATCH_KEYS + PREFETCH_MAX_KEYS];
};

/* ---- clients ---------------------------------------------------------- */

#define CLIENT_CLOSE_AFTER_REPLY (1u << 0)
#define CLIENT_CLOSE_ASAP (1u << 1)
#define CLIENT_AUTHENTICATED (1u << 2)
#define CLIENT_UNIX_SOCKET (1u << 3)
#define CLIENT_PENDING_WRITE (1u << 4) /* on the worker's pending_write list */
#define CLIENT_WANT_WRITE (1u << 5)    /* EPOLLOUT registered */
#define CLIENT_PAUSED (1u << 6)        /* waiting on CLIENT PAUSE */
#define CLIENT_NO_EVICT (1u << 7)
#define CLIENT_NO_TOUCH (1u << 8)
#define CLIENT_REPLY_OFF (1u << 9)
#define CLIENT_REPLY_SKIP_NEXT (1u << 10)
#define CLIENT_REPLY_SKIP (1u << 11)
#define CLIENT_READ_STOPPED (1u << 12) /* output backpressure */
#define CLIENT_WAIT_GATHER (1u << 13) /* reply waits on mail: a broadcast to all workers, or the lazy free thread */
#define CLIENT_CLOSING (1u << 14)     /* on the worker's closing list, freed at end of turn */
#define CLIENT_BLOCKED (1u << 15)     /* waiting on keys (BLPOP...), see blocking.h */
#define CLIENT_PUBSUB (1u << 16)      /* in pub/sub context (output limits of the pubsub class) */
#define CLIENT_REPLICA (1u << 17)     /* a replica connection (output limits of the replica class) */
#define CLIENT_REPLAY (1u << 18)      /* applies a journal: its commands run with CTX_REPLAY */
#define CLIENT_LOCAL (1u << 19)       /* loopback peer or unix socket (enable-debug-command local) */
#define CLIENT_MONITOR (1u << 20)     /* in MONITOR mode: receives the feed (monitor.c) */
#define CLIENT_IN_SCRIPT (1u << 21)   /* its command is running a script (worker_busy_poll leaves it alone) */
#define CLIENT_WAIT_CHAIN (1u << 22)  /* its write woke blocked clients: output and input wait for them (blocking.h) */
#define CLIENT_TRACKING (1u << 23)    /* CLIENT TRACKING ON (tracking.h) */
#define CLIENT_WAIT_AOF (1u << 24)    /* appendfsync always: output held until its writes are durable (worker.c) */

/* struct client.tls_state: where a TLS connection's I/O stands (0 for an
 * established one with nothing to retry, and always for plain ones). */
#define TLS_ST_HANDSHAKE 1u   /* handshake running */
#define TLS_ST_HS_WRITE 2u    /* ... and it waits for the socket to be writable */
#define TLS_ST_READ_WRITE 4u  /* a read must be retried once writable */
#define TLS_ST_WRITE_READ 8u  /* a write must be retried once readable */

struct client {
    struct hnode id_node; /* in its worker's by_id table */
    uint64_t id;
    int fd;
    struct worker *w;
    unsigned flags;
    /* TLS: the connection's OpenSSL state (NULL for a plain one), the
     * TLS_ST_* bits. */
    struct tls_conn *tls;
    unsigned tls_state;
    /* Input. */
    char *qbuf;
    size_t qlen, qcap; /* bytes in qbuf, capacity */
    size_t qpos;       /* start of the request being parsed */
    int qbuf_lent;     /* qbuf is the worker's, given back when nothing is left in it */
    struct resp_req req;
    int argc;
    hk_slice *argv;
    int argv_cap;
    /* Output. */
    struct outbuf out;
    long long obuf_soft_since_ms; /* when the soft limit was first passed */
    /* Identity and bookkeeping. */
    char *name, *lib_name, *lib_ver;
    char addr[128], laddr[128];
    long long ctime_ms, last_ms;
    const struct command *cmd, *lastcmd;
    /* The context its commands run on (exec.h); argv above is its argv. */
    struct cmd_ctx ctx;
    size_t warm_to; /* query buffer offset up to which keys were prefetched */
    /* Worker lists. */
    struct client *prev, *next;
    struct client *next_pending;
    struct client *next_paused;
    struct client *next_closing;
    struct bstate *bstate;   /* set while CLIENT_BLOCKED (blocking.c) */
    struct client *next_blocked, *prev_blocked;
    struct wbatch *chain;    /* set while CLIENT_WAIT_CHAIN: the wake batches it waits for (blocking.c) */
    struct wbatch *chain_own; /* the batch its running command's wake-ups joined, until the command ends */
    struct monitor *monitor; /* set while CLIENT_MONITOR (monitor.c) */
    struct txn *txn;         /* MULTI queue and WATCH list (txn.h), NULL until used */
    struct client_ps *ps;    /* its subscriptions (pubsub.c), NULL until the first */
    struct ctrack *track;    /* client-side caching state (tracking.c), NULL until used */
    /* ACL (acl.h): the user it is authenticated as (NULL: default), the
     * snapshot its commands are checked against (a counted reference,
     * NULL until its first command) and that user's generation then. */
    struct acl_ident *user;
    struct acl_user *acl;
    unsigned long acl_gen;
    long long tot_net_in, tot_net_out, tot_cmds;
    /* Most bytes the head output block held when a write began, since the
     * worker's last 5-second reset (CLIENT LIST rbp, Redis's buf_peak). */
    size_t rbuf_peak;
    /* Set while CLIENT_WAIT_AOF: its worker's journal record count its
     * output waits for (journal.h). */
    uint64_t aof_wait_rec;
    /* Client eviction (clientmem.c), while maxmemory-clients is set: the
     * bytes it is counted with in its worker's sum, and its place in the
     * worker's buckets (cm_bucket -1: in none, as NO-EVICT or closing). */
    size_t cm_mem;
    int cm_bucket;
    struct client *cm_prev, *cm_next;
};

/* ---- the server -------------------------------------------------------- */

struct server {
    int nworkers;
    struct worker *workers;
    long long start_ms;
    long long start_mono_us;
    char run_id[41];
    char *config_file;    /* absolute path or NULL */
    char *executable;
    _Atomic unsigned long long next_client_id;
    _Atomic int nclients;  /* all connections, for maxclients */
    _Atomic int shutdown_asap;
    _Atomic int shutdown_exit_code;
    /* CLIENT PAUSE: end time in ms and whether all commands or writes only. */
    _Atomic long long pause_end_ms;
    _Atomic int pause_all;
    _Atomic long long lastsave;
    _Atomic int active_expire_enabled; /* DEBUG SET-ACTIVE-EXPIRE */
    _Atomic long long stat_reset_ms;
    int unix_fd;
    int arch_bits;
};

extern struct server server;

/* Per-thread: the worker running on this thread, NULL elsewhere. */
extern _Thread_local struct worker *current_worker;

/* worker.c */
void workers_start(void);
void workers_join(void);
void worker_post(struct worker *w, mail_fn fn, void *arg);
void client_close(struct client *c);
void client_set_close_after_reply(struct client *c);
void client_queue_write(struct client *c);
long long server_uptime_s(void);

/* Broadcast fn to every worker (each runs it on its own thread), then run
 * done(arg) on the calling worker once all have finished. */
struct gather {
    _Atomic int left;
    struct worker *origin;
    mail_fn each;
    mail_fn done;
    void *arg;
};
void worker_broadcast(mail_fn each, mail_fn done, void *arg);
/* CONFIG SET bind/port, under CONFIG SET's lock (worker.c): open the TCP
 * listeners the settings now ask for next to those in force (0, with
 * Redis's error text in err, when they cannot be opened: nothing changed);
 * then hand them to the workers, which close the old ones and run
 * done(origin, arg) on the calling worker once all have (0: nothing was
 * prepared, done does not run). */
int listeners_prepare(char *err, size_t errsize);
int listeners_commit(mail_fn done, void *arg);

void workers_stop(void);
/* Called from a script past busy-reply-threshold, on its worker: serve
 * this worker's other connections once without blocking, so that they get
 * -BUSY (or run SCRIPT KILL, SHUTDOWN) instead of waiting for the script.
 * The connection running the script is left alone; no mail, timer or
 * accept is handled. */
void worker_busy_poll(struct worker *w);
void client_stop_reading(struct client *c);
/* Process buffered input again (after a pause or a broadcast reply) and
 * queue the output. Returns -1 when the client must be closed. */
int client_resume(struct client *c);
/* Output past this many bytes stops a client's input until it reads. */
#define CLIENT_BACKPRESSURE_BYTES (1024 * 1024)
/* The context flags a connection's state implies for its commands. */
#define CTX_FROM_CLIENT (CTX_MUTED | CTX_NO_TOUCH | CTX_REPLAY)
static inline unsigned client_ctx_flags(const struct client *c) {
    unsigned f = 0;
    if (c->flags & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)) f |= CTX_MUTED;
    if (c->flags & CLIENT_NO_TOUCH) f |= CTX_NO_TOUCH;
    if (c->flags & CLIENT_REPLAY) f |= CTX_REPLAY;
    return f;
}
/* A handler changed its connection's flags (CLIENT REPLY, RESET): the
 * running context follows at once. */
static inline void ctx_follow_client(struct cmd_ctx *x) {
    x->flags = (x->flags & ~CTX_FROM_CLIENT) | client_ctx_flags(x->cl);
}
static inline int client_is_waiting(const struct client *c) {
    return (c->flags & (CLIENT_PAUSED | CLIENT_WAIT_GATHER | CLIENT_BLOCKED | CLIENT_WAIT_CHAIN)) != 0;
}
/* Hold (on) or release c's output: while held nothing is written and
 * EPOLLOUT is not armed; releasing does not resume the client. */
void client_hold_output(struct client *c, int on);
/* Find a client of worker w by id (admin commands), NULL when gone. */
struct client *worker_find_client(struct worker *w, uint64_t id);

/* dispatch.c */
int dispatch_command(struct client *c);
/* Apply client-output-buffer-limit of c's class after a command: past the
 * hard limit the client is closed, past the soft one the clock starts.
 * The inline part skips the common case: a normal client, no normal-class
 * limits, no soft clock running. */
void client_check_output_limits_slow(struct client *c);
static inline void client_check_output_limits(struct client *c) {
    if (!(c->flags & (CLIENT_PUBSUB | CLIENT_REPLICA)) && !c->obuf_soft_since_ms && !CFG(obl[OBL_NORMAL][0]) &&
        !CFG(obl[OBL_NORMAL][1]))
        return;
    client_check_output_limits_slow(c);
}
/* The soft limit has been exceeded for longer than its seconds. */
int client_soft_limit_passed(const struct client *c, long long now_ms);
/* Count a finished command, from its one time measurement: calls, time
 * and failures for INFO commandstats, the connection's tot-cmds (CLIENT
 * LIST), its latency histogram (INFO latencystats, LATENCY HISTOGRAM),
 * and, past the one threshold that covers both, the slow log and the
 * latency monitor (observe.h). A blocked command counts once, when it
 * answers. The arguments logged are c->ctx.argv. */
static inline void client_count_call(struct client *c, const struct command *cmd, long long nsec) {
    struct cmdstat *st = &c->w->cmdstats[cmd->id];
    c->tot_cmds++;
    stat_add(&st->calls, 1);
    stat_add(&st->nsec, (unsigned long long)nsec);
    if (c->ctx.errors) stat_add(&st->failed, 1);
    if (CFG(latency_tracking)) lat_record(c->w->lathist, cmd->id, nsec);
    if (nsec >= atomic_load_explicit(&obs_slow_ns, memory_order_relaxed)) observe_slow(c, cmd, nsec);
}
int client_process_input(struct client *c);
/* Warm the keyspace lookups of the requests waiting in the query buffers
 * of these clients (the ones a loop turn just read), so that their cache
 * misses overlap; each client remembers how far it was covered. */
void dispatch_prefetch(struct client **cs, int ncs);
void pause_check_clients(struct worker *w);

/* stats.c: periodic statistics samples (instantaneous rates, peak
 * memory); worker_cron calls it, it acts on worker 0 only. */
void stats_cron(struct worker *w);

/* log.c */
enum { LL_DEBUG, LL_VERBOSE, LL_NOTICE, LL_WARNING };
void hk_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_reopen(void);

/* ---- admission, the common case (exec.h) ------------------------------- */

/* Workers running a script past busy-reply-threshold (script.c). */
extern _Atomic int scripts_busy;
/* Nonzero while admission has more to check than the fast path does:
 * ADMIT_GATE_* bits (the dataset loading, writes refused after a failed
 * save or AOF write). Set and cleared with admit_gate_set. */
#define ADMIT_GATE_LOADING 1
#define ADMIT_GATE_RDB_ERR 2
#define ADMIT_GATE_AOF_ERR 4
#define ADMIT_GATE_OOM 8 /* used memory over maxmemory (evict.h) */
extern _Atomic int admit_gate;
void admit_gate_set(int bit, int on);
/* An AOF write failed with this error (ADMIT_GATE_AOF_ERR and the text
 * of -MISCONF), or NULL: writes succeed again. */
void admit_aof_error(const char *err);

static inline int exec_admit(struct cmd_ctx *c, int policy, unsigned who, uint64_t queued_flags) {
    struct worker *w = c->w;
    if (__builtin_expect(
            policy == ADMIT_SOCKET && w != NULL && (who & (ADM_AUTHED | ADM_MONITOR | ADM_PUBSUB2 | ADM_ACL)) == ADM_AUTHED, 1)) {
        const hk_slice *a0 = &c->argv[0];
        struct command *cmd = w->last_cmd;
        if (cmd && a0->len == w->last_cmd_len && memcmp(a0->ptr, w->last_cmd_name, a0->len) == 0 && !cmd->nsubs &&
            !(cmd->flags & CMD_PROTECTED) &&
            ((cmd->arity > 0 && c->argc == cmd->arity) || (cmd->arity < 0 && c->argc >= -cmd->arity)) &&
            !atomic_load_explicit(&scripts_busy, memory_order_relaxed) &&
            !atomic_load_explicit(&admit_gate, memory_order_relaxed) &&
            !atomic_load_explicit(&server.pause_end_ms, memory_order_relaxed)) {
            c->cmd = cmd;
            return ADMIT_OK;
        }
    }
    return exec_admit_slow(c, policy, who, queued_flags);
}

#endif
