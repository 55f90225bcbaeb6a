/* exec.h - the one way a command runs: its context, its locks, what it
 * wrote and what it propagates.
 *
 * Whoever runs a command (a connection, a blocked client being retried,
 * and later EXEC, a script's redis.call, AOF loading, a replica applying
 * its stream) fills a struct cmd_ctx and calls exec_command(). Handlers
 * see only the context: its argv, database, protocol, clock, the keys of
 * the command already resolved to shard and hash, and a reply sink (the
 * connection's output buffer, or a capture buffer). exec_command:
 *
 *   1. resolves the command's keys from argv with the table's key spec
 *      (command_keys: no client needed, so EXEC and the prefetch pass use
 *      it too);
 *   2. builds the lock set and acquires it in ascending shard order, or,
 *      for a nested command (EXEC, scripts, a served blocking pop), checks
 *      that the outer context's set covers it (extending it only where
 *      that cannot deadlock);
 *   3. runs the handler with the context as the store's write sink, so
 *      every db_written() event lands here;
 *   4. appends what the command propagates to the journal while the locks
 *      are still held (journal.h), then releases them.
 *
 * Propagation. A command that wrote (reported at least one event other
 * than an expiry) propagates its argv unless the handler chose otherwise:
 * prop_* below replace the default with commands that reproduce the
 * effect exactly (SPOP -> SREM, relative TTLs -> absolute, INCRBYFLOAT ->
 * SET KEEPTTL, blocking pops -> their plain form). A command that wrote
 * nothing propagates nothing; keys found expired on the way propagate as
 * DEL before the command. All of it costs nothing while no journal
 * consumer is attached (CTX_JOURNAL clear).
 *
 * Whole-keyspace commands. CMD_ALL_SHARDS commands (FLUSHALL, FLUSHDB,
 * SWAPDB) run with every shard locked. CMD_SHARDWISE commands (KEYS, SCAN,
 * DBSIZE, RANDOMKEY) lock nothing up front and visit shards with
 * exec_shard_enter/leave, which lock a shard only when the context does
 * not hold it already: inside a transaction holding everything they lock
 * nothing.
 *
 * A context is owned by the thread that runs it. */
#ifndef HK_EXEC_H
#define HK_EXEC_H

#include "../core/buf.h"
#include "../core/status.h"
#include "../proto/outbuf.h"
#include "../store/db.h"
#include "../store/lockset.h"

#include <stddef.h>
#include <stdint.h>

struct client;
struct worker;
struct command;

typedef struct hk_slice {
    const char *ptr;
    size_t len;
} hk_slice;

/* Context flags. */
#define CTX_RETRY (1u << 0)          /* wake-up re-run of a blocked command */
#define CTX_DENY_BLOCKING (1u << 1)  /* blocking commands answer as their non-blocking form */
#define CTX_NO_TOUCH (1u << 2)       /* lookups leave access clocks alone (CLIENT NO-TOUCH) */
#define CTX_MUTED (1u << 3)          /* replies are discarded (CLIENT REPLY OFF/SKIP) */
#define CTX_KEYS_WARM (1u << 4)      /* a pipeline pass prefetched these keys */
#define CTX_NESTED (1u << 5)         /* runs under an outer context's locks */
#define CTX_JOURNAL (1u << 6)        /* a journal consumer is attached: record propagation */
#define CTX_PROP_CUSTOM (1u << 7)    /* the handler chose what to propagate */
/* Applying a journal or AOF: nothing expires by time (the stream carries
 * its DELs), deadlines already past are stored rather than applied, and
 * nothing propagates. */
#define CTX_REPLAY (1u << 8)

/* Keys resolved without allocating; more go to the heap. */
#define CTX_KEYS_INLINE 16

/* What a context propagates: RESP-encoded commands, in execution order.
 * start_db is the database of the first one; a command for another
 * database is preceded by a SELECT. */
struct prop {
    struct hk_buf out;
    int start_db, cur_db;
    int ncmds;
};

struct cmd_ctx {
    /* First: the store's write hook reaches the context through it; its
     * `dirty` counts the events the handler reported (expiries excluded). */
    struct db_sink sink;
    const struct command *cmd;
    int argc;
    hk_slice *argv;
    int db;
    int resp;
    unsigned flags;
    long long now_ms;
    /* TIME's answer while a script runs (microseconds), 0 outside one:
     * time is frozen for the whole script, as in Redis 7.2+. */
    long long frozen_us;
    /* The command's keys: keys[i] is argv[kpos[i]], in key-spec order. */
    struct keyref *keys;
    int *kpos;
    int nkeys, kcap, khint;
    struct keyref keys_inl[CTX_KEYS_INLINE];
    int kpos_inl[CTX_KEYS_INLINE];
    /* Keys a prefetch pass already hashed, in request order (dispatch):
     * resolution takes them one by one while they are the very argument
     * bytes. */
    const struct keyref *warm;
    int warm_n, warm_i;
    /* The lock set in force: own, or an outer context's when nested. */
    struct lockset own_ls;
    struct lockset *ls;
    /* Reply sink and the error replies written into it. */
    struct outbuf *out;
    int errors;
    /* Who runs it: the connection (NULL for replay) and the worker (NULL
     * off the worker threads), for statistics and connection commands. */
    struct client *cl;
    struct worker *w;
    /* Propagation: own buffer, or the outer context's when nested. */
    struct prop own_prop;
    struct prop *prop;
    /* Run by exec_command after the handler, locks still held (the
     * blocking retry leaves its FIFOs here). */
    void (*before_unlock)(struct cmd_ctx *c);
    void *udata; /* for before_unlock */
    /* Work deferred until the locks are released (exec_after_unlock). */
    struct deferred *deferred;
    /* Whose ACL user a context without a connection runs for: a script's
     * connection, for its redis.call checks (NULL: no check). */
    struct client *acl_of;
};

/* ---- admission -------------------------------------------------------- */

/* Whether a command may run is decided here, once, for every caller; the
 * policy says who asks, which checks apply and how a refusal reads:
 *
 *   ADMIT_SOCKET  a connection's command: lookup, subcommand, arity, the
 *                 DEBUG gate, authentication, what a subscribed RESP2
 *                 connection may run, MONITOR's refusal of keyspace
 *                 commands, CLIENT PAUSE.
 *   ADMIT_QUEUE   the same for a connection in MULTI, plus what MULTI may
 *                 not queue (no-multi commands, and those whose reply is
 *                 gathered from every worker, which cannot answer inside
 *                 EXEC's reply).
 *   ADMIT_SCRIPT  redis.call / redis.pcall: Redis's script texts, noscript
 *                 commands refused, writes refused to a read-only script
 *                 (EVAL_RO, no-writes); no authentication or pause (the
 *                 script's caller passed them).
 *   ADMIT_REPLAY  a journal, AOF or replica stream: lookup and arity only.
 *
 * The ACL check (acl.h) applies to the first three when `who` has ADM_ACL. */
enum { ADMIT_SOCKET = 0, ADMIT_QUEUE, ADMIT_SCRIPT, ADMIT_REPLAY };
enum { ADMIT_OK = 0, ADMIT_REFUSED = 1, ADMIT_PAUSED = 2 };

/* What the caller is, for the checks that depend on it. */
#define ADM_AUTHED (1u << 0)    /* authenticated (or no password is set) */
#define ADM_LOCAL (1u << 1)     /* loopback or unix socket peer (enable-debug-command local) */
#define ADM_MONITOR (1u << 2)   /* in MONITOR mode */
#define ADM_NO_WRITES (1u << 3) /* a script that may not write (EVAL_RO, FCALL_RO, no-writes) */
#define ADM_PUBSUB2 (1u << 4)   /* a RESP2 connection with subscriptions */
#define ADM_ACL (1u << 6)       /* its user is not allowed everything: the ACL check applies */
#define ADM_OOM (1u << 5)       /* a script that met maxmemory at its start, has not written yet and may not
                                 * pass it (no allow-oom): its denyoom calls are refused */

/* Look c->argv[0] (and argv[1] of a container) up and apply the policy's
 * checks. On ADMIT_OK c->cmd is the command to run. On ADMIT_REFUSED the
 * refusal was replied into c's sink and counted (INFO commandstats
 * rejected_calls, errorstats); c->cmd is the refused command, or NULL when
 * none was found. ADMIT_PAUSED (socket policies only): CLIENT PAUSE holds
 * the command back, nothing replied. queued_flags are the command flags of
 * what a CMD_TXN_EXEC command would run (EXEC's queue), for the pause rule. */
static inline int exec_admit(struct cmd_ctx *c, int policy, unsigned who, uint64_t queued_flags);
/* The whole step; exec_admit (server.h, inline) answers the common case
 * (a connection's plain command: cached lookup, no subcommand, right
 * arity, authenticated, nothing busy or paused) without a call. */
int exec_admit_slow(struct cmd_ctx *c, int policy, unsigned who, uint64_t queued_flags);
/* A script whose flags let it write may not start while writes are
 * refused for a disk error: Redis's script text of -MISCONF, or NULL. */
const char *exec_script_disk_error(void);
/* The command table lookup behind the worker's one-entry cache (w may be
 * NULL). */
const struct command *exec_lookup(struct worker *w, const char *name, size_t len);

/* Set a context up for repeated use (a connection keeps one). */
void ctx_init(struct cmd_ctx *c);
void ctx_destroy(struct cmd_ctx *c);

/* Run c->cmd on c->argv/argc (validated by the caller: lookup, arity,
 * auth). Locks, runs, journals, unlocks. Returns the handler's time in ns. */
long long exec_command(struct cmd_ctx *c);

/* Run `cmd` with `argv` inside parent (locks held): a blocking command
 * served through its plain form, and later EXEC and scripts. Replies go to
 * the parent's sink; propagation defaults to this argv (argv[0] should
 * name cmd) and replaces the parent's own. Returns HK_OK, or
 * HK_ERR_LOCK_CONFLICT, replied into the parent's sink, when its shards
 * cannot be held (a caller that already wrote part of an aggregate reply
 * must only nest commands whose shards it holds). */
int exec_nested(struct cmd_ctx *parent, const struct command *cmd, hk_slice *argv, int argc);

/* Key positions of argv for cmd (key spec, numkeys column or custom
 * finder): fills idx (room for argc entries), returns the count, or -1
 * when the arguments are malformed (the handler reports it). */
int command_keys(const struct command *cmd, const hk_slice *argv, int argc, int *idx);

/* argv[i] as a key of the context's database: the resolved key when i is
 * one of the command's keys, else computed now (it must then live in a
 * held shard: same tag, or an index whose shard the command locked). */
static inline void key_of(struct cmd_ctx *c, int i, struct keyref *k) {
    if (c->khint < c->nkeys && c->kpos[c->khint] == i) {
        *k = c->keys[c->khint++];
        return;
    }
    for (int j = 0; j < c->nkeys; j++)
        if (c->kpos[j] == i) {
            *k = c->keys[j];
            c->khint = j + 1;
            return;
        }
    keyref_init(k, c->db, c->argv[i].ptr, c->argv[i].len);
}

/* Whether the context's lock set is in force: acquired by it, or the
 * outer context's that a nested command runs under. */
static inline int ctx_locked(const struct cmd_ctx *c) { return c->ls->held || (c->flags & CTX_NESTED); }
/* Shard-by-shard access for CMD_SHARDWISE commands: lock shard s unless
 * the context holds it. Nested, a CMD_SHARDWISE command runs only under a
 * set holding every shard (exec_nested refuses it otherwise), so this
 * never has to lock under an outer set. */
void exec_shard_enter(struct cmd_ctx *c, unsigned s);
/* Journal what was propagated under shard s, and unlock it if entered did. */
void exec_shard_leave(struct cmd_ctx *c, unsigned s);
/* Run fn(arg) once the command's locks are released (on this thread):
 * freeing a flushed database must not stall every other worker. */
void exec_after_unlock(struct cmd_ctx *c, void (*fn)(void *arg), void *arg);

/* Whether the context holds every shard (the `locked` argument of the
 * store's whole-keyspace helpers, ks_counts and friends). */
static inline int exec_holds_all(const struct cmd_ctx *c) { return c->ls->all && ctx_locked(c); }
/* Run fn with every shard held (DEBUG DIGEST, DEBUG JOURNAL START), for a
 * command without keys: locks them all when the context holds none.
 * Returns HK_OK, or HK_ERR_LOCK_CONFLICT (nothing run, nothing replied)
 * under an outer set that is not every shard. */
int exec_with_all_shards(struct cmd_ctx *c, void (*fn)(struct cmd_ctx *c, void *arg), void *arg);

/* Widen the running command's lock set to every shard, for a handler
 * that finds from its arguments that it will read keys outside its key
 * spec (SORT with BY/GET patterns). Call it before the handler has read
 * or written anything: the command's own shards are released and every
 * shard is then taken in ascending order, so no deadlock is possible and
 * what the handler does next is atomic. Returns HK_OK (also when every
 * shard is held already), or HK_ERR_LOCK_CONFLICT, nothing changed, when
 * nested under an outer set that is not every shard. */
int exec_lock_all_shards(struct cmd_ctx *c);

/* For a handler that finds its keys itself (EXEC: the union of its
 * queued commands' keys and its watched keys): it fills c->own_ls with
 * ls_add / ls_add_all, then this acquires the set in ascending order and
 * arms the journal, as exec_command does for a key-spec command. Not
 * nested, and only from a command that held nothing so far. */
void exec_lock_own(struct cmd_ctx *c);

/* Move from's deferred work to `to` (a script's view of its command's
 * context hands its nested calls' work to the command). */
void exec_adopt_deferred(struct cmd_ctx *to, struct cmd_ctx *from);

/* Propagating several commands as one unit (EXEC, scripts): mark where
 * the unit starts, run the commands nested, then wrap: when the unit
 * propagated two commands or more, they become MULTI ... EXEC, as Redis
 * propagates them. */
struct prop_mark {
    size_t off;
    int ncmds;
};
void exec_prop_mark(struct cmd_ctx *c, struct prop_mark *m);
void exec_prop_wrap(struct cmd_ctx *c, const struct prop_mark *m);

/* Active expiry of shard s on worker w's cron: locks the shard, expires
 * up to `budget` entries' worth of keys and as many hash fields, journals
 * their DELs and HDELs, unlocks. Returns the number of keys and fields
 * expired. */
unsigned exec_active_expire(struct worker *w, unsigned s, long long now_ms, unsigned budget);
/* Evict key k (maxmemory): deleted with KEV_EVICTED, so it propagates as
 * DEL, notifies `evicted` and invalidates tracking; counted in
 * evicted_keys. Holding no shard lock; skips a shard another thread holds.
 * Returns 1 when the key was there. */
int exec_evict_key(struct worker *w, const struct keyref *k, long long now_ms);

/* ---- propagation ---------------------------------------------------- */

/* The handler decides what propagates; with nothing added, nothing does. */
static inline void prop_custom(struct cmd_ctx *c) { c->flags |= CTX_PROP_CUSTOM; }
/* Append one command of argc arguments (then argc prop_arg calls). */
void prop_begin(struct cmd_ctx *c, int argc);
void prop_arg(struct cmd_ctx *c, const void *p, size_t len);
void prop_arg_ll(struct cmd_ctx *c, long long v);
static inline void prop_arg_cstr(struct cmd_ctx *c, const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    prop_arg(c, s, n);
}
static inline void prop_arg_slice(struct cmd_ctx *c, const hk_slice *a) { prop_arg(c, a->ptr, a->len); }
/* A whole command: name then args[0..n). */
void prop_cmd(struct cmd_ctx *c, const char *name, int n, const hk_slice *args);
/* The default: this command's argv as given. */
void prop_argv(struct cmd_ctx *c);
/* Propagate this command's argv although it holds no shard and wrote no
 * key (PUBLISH): inside a unit that journals it joins the unit, otherwise
 * it is journaled at once as a record tagged with no shard, ordered only
 * after what this worker journaled before it. */
void prop_keyless(struct cmd_ctx *c);
/* Whether propagation is being recorded (skip building what would be
 * thrown away). */
static inline int prop_on(const struct cmd_ctx *c) { return (c->flags & CTX_JOURNAL) != 0; }

#endif
