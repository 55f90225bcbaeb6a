/* exec.c - running a command on a context: keys, lock set, write sink,
 * propagation and the journal append; see exec.h. This file does not know
 * connections: dispatch.c turns a request into a context and calls
 * exec_command, blocking.c does the same for a woken client. */
#include "exec.h"
#include "acl.h"
#include "evict.h"

#include "../core/alloc.h"
#include "../core/util.h"
#include "../proto/respw.h"
#include "../store/hfe.h"
#include "blocking.h"
#include "creply.h"
#include "journal.h"
#include "notify.h"
#include "tracking.h"
#include "script.h"
#include "server.h"
#include "snapshot.h"

#include <stdio.h>
#include <string.h>

/* ---- admission -------------------------------------------------------- */

/* cmd_lookup behind a one-entry cache per worker: pipelines and busy
 * clients send the same command again and again, spelled the same way, and
 * comparing the bytes with the last name looked up is cheaper than
 * folding, hashing and probing the index (~6% of a pipelined PING's CPU). */
static struct command *lookup_cached(struct worker *w, const char *name, size_t len) {
    if (!w) return cmd_lookup(name, len);
    if (len == w->last_cmd_len && w->last_cmd && memcmp(name, w->last_cmd_name, len) == 0) return w->last_cmd;
    if (len == w->prev_cmd_len && w->prev_cmd && memcmp(name, w->prev_cmd_name, len) == 0) return w->prev_cmd;
    struct command *cmd = cmd_lookup(name, len);
    if (cmd && len <= sizeof(w->last_cmd_name)) {
        memcpy(w->prev_cmd_name, w->last_cmd_name, w->last_cmd_len);
        w->prev_cmd_len = w->last_cmd_len;
        w->prev_cmd = w->last_cmd;
        memcpy(w->last_cmd_name, name, len);
        w->last_cmd_len = len;
        w->last_cmd = cmd;
    }
    return cmd;
}

const struct command *exec_lookup(struct worker *w, const char *name, size_t len) {
    return lookup_cached(w, name, len);
}

static int pause_blocks(uint64_t flags, long long now_ms) {
    long long end = atomic_load_explicit(&server.pause_end_ms, memory_order_acquire);
    if (!end || now_ms >= end) return 0;
    if (atomic_load(&server.pause_all)) return 1;
    return (flags & (CMD_WRITE | CMD_MAY_REPLICATE)) != 0;
}

static void admit_count_rejected(struct cmd_ctx *c, const struct command *cmd) {
    if (c->w && cmd) stat_add(&c->w->cmdstats[cmd->id].rejected, 1);
}

/* A connection's refusal: the error itself, or for EXEC the abort of the
 * transaction that names it (Redis's execCommandAbort; the caller drops
 * the transaction). */
static void refuse(struct cmd_ctx *c, const char *msg) {
    if (c->cmd && (c->cmd->flags & CMD_TXN_EXEC)) {
        if (strncmp(msg, "ERR ", 4) == 0) msg += 4;
        reply_errorf(c, "EXECABORT Transaction discarded because of: %s", msg);
        return;
    }
    reply_error(c, msg);
}

static void refuse_status(struct cmd_ctx *c, int st) {
    char buf[256];
    if (hk_status_wants_name(st)) snprintf(buf, sizeof(buf), hk_status_text(st), c->cmd ? c->cmd->fullname : "");
    else snprintf(buf, sizeof(buf), "%s", hk_status_text(st));
    refuse(c, buf);
}

/* The refusal of an unknown command: a connection gets Redis's text with
 * the arguments quoted one after the other until their text reaches 128
 * bytes, each cut to what is left of those 128. */
static void refuse_unknown(struct cmd_ctx *c, int policy) {
    if (policy == ADMIT_SCRIPT) {
        reply_error(c, "ERR Unknown Redis command called from script");
        return;
    }
    char msg[1024];
    int off = snprintf(msg, sizeof(msg), "ERR unknown command '%.*s', with args beginning with: ",
                       (int)(c->argv[0].len > 128 ? 128 : c->argv[0].len), c->argv[0].ptr);
    int args0 = off;
    for (int i = 1; i < c->argc && off - args0 < 128; i++) {
        int room = 128 - (off - args0);
        off += snprintf(msg + off, sizeof(msg) - (size_t)off, "'%.*s' ",
                        (int)(c->argv[i].len > (size_t)room ? (size_t)room : c->argv[i].len), c->argv[i].ptr);
    }
    reply_error(c, msg);
}

_Atomic int admit_gate;

void admit_gate_set(int bit, int on) {
    if (on) atomic_fetch_or(&admit_gate, bit);
    else atomic_fetch_and(&admit_gate, ~bit);
}

static pthread_mutex_t aof_err_mu = PTHREAD_MUTEX_INITIALIZER;
static char aof_err_text[200];

void admit_aof_error(const char *err) {
    pthread_mutex_lock(&aof_err_mu);
    snprintf(aof_err_text, sizeof(aof_err_text), "%s", err ? err : "");
    pthread_mutex_unlock(&aof_err_mu);
    admit_gate_set(ADMIT_GATE_AOF_ERR, err != NULL);
}

/* Writes refused because the dataset cannot be persisted (Redis's
 * writeCommandsDeniedByDiskError): a failed BGSAVE with save points and
 * stop-writes-on-bgsave-error, or a failed AOF write. NULL: allowed. A
 * script that may write meets the same text before it starts, since its
 * flags make EVAL and FCALL write commands, as Redis's admission does. */
static const char *disk_error(void) {
    int g = atomic_load_explicit(&admit_gate, memory_order_relaxed);
    if ((g & ADMIT_GATE_RDB_ERR) && CFG(stop_writes_on_bgsave_error) && snapshot_save_points_set())
        return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "
               "Commands that may modify the data set are disabled, because this instance is configured to report "
               "errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check "
               "the Redis logs for details about the RDB error.";
    if ((g & ADMIT_GATE_AOF_ERR) && CFG(appendonly)) {
        static _Thread_local char msg[512];
        char why[200];
        pthread_mutex_lock(&aof_err_mu);
        snprintf(why, sizeof(why), "%s", aof_err_text);
        pthread_mutex_unlock(&aof_err_mu);
        snprintf(msg, sizeof(msg), "MISCONF Errors writing to the AOF file: %s", why);
        return msg;
    }
    return NULL;
}

const char *exec_script_disk_error(void) {
    if (!atomic_load_explicit(&admit_gate, memory_order_relaxed)) return NULL;
    return disk_error();
}

int exec_admit_slow(struct cmd_ctx *c, int policy, unsigned who, uint64_t queued_flags) {
    struct command *cmd = lookup_cached(c->w, c->argv[0].ptr, c->argv[0].len);
    c->cmd = NULL;
    if (!cmd) {
        refuse_unknown(c, policy);
        return ADMIT_REFUSED;
    }
    /* A container with a handler of its own (COMMAND) runs it when called
     * without a subcommand. */
    if (cmd->nsubs && (c->argc >= 2 || !cmd->proc)) {
        c->cmd = cmd;
        if (c->argc < 2) {
            if (policy == ADMIT_SCRIPT) reply_error(c, "ERR Wrong number of args calling Redis command from script");
            else reply_status(c, HK_ERR_ARITY);
            admit_count_rejected(c, cmd);
            return ADMIT_REFUSED;
        }
        struct command *sub = cmd_lookup_sub(cmd, c->argv[1].ptr, c->argv[1].len);
        if (!sub) {
            if (policy == ADMIT_SCRIPT) reply_error(c, "ERR Unknown Redis command called from script");
            else reply_unknown_subcommand(c);
            admit_count_rejected(c, cmd);
            c->cmd = NULL;
            return ADMIT_REFUSED;
        }
        cmd = sub;
    }
    c->cmd = cmd;
    if ((cmd->arity > 0 && c->argc != cmd->arity) || c->argc < -cmd->arity) {
        if (policy == ADMIT_SCRIPT) reply_error(c, "ERR Wrong number of args calling Redis command from script");
        else refuse_status(c, HK_ERR_ARITY);
        admit_count_rejected(c, cmd);
        return ADMIT_REFUSED;
    }
    if (policy == ADMIT_REPLAY) return ADMIT_OK;
    if (policy == ADMIT_SCRIPT) {
        if (cmd->flags & CMD_NOSCRIPT) {
            reply_error(c, "ERR This Redis command is not allowed from script");
            return ADMIT_REFUSED;
        }
        if ((who & ADM_ACL) && !acl_admit(c, policy)) return ADMIT_REFUSED;
        if ((who & ADM_NO_WRITES) && (cmd->flags & CMD_WRITE)) {
            reply_error(c, "ERR Write commands are not allowed from read-only scripts.");
            return ADMIT_REFUSED;
        }
        if ((who & ADM_OOM) && (cmd->flags & CMD_DENYOOM)) {
            reply_error(c, OOM_ERROR);
            return ADMIT_REFUSED;
        }
        const char *derr;
        if ((cmd->flags & CMD_WRITE) && atomic_load_explicit(&admit_gate, memory_order_relaxed) &&
            (derr = disk_error())) {
            reply_error(c, derr);
            return ADMIT_REFUSED;
        }
        return ADMIT_OK;
    }
    /* Protected commands (DEBUG) are refused before authentication, in
     * Redis's order: enable-debug-command yes, or local for loopback and
     * unix socket clients. */
    if ((cmd->flags & CMD_PROTECTED) && CFG(enable_debug_command) != CFG_DEBUG_YES &&
        !(CFG(enable_debug_command) == CFG_DEBUG_LOCAL && (who & ADM_LOCAL))) {
        refuse(c, "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you "
                       "can run it from a local connection, otherwise you need to set this option in the "
                       "configuration file, and then restart the server.");
        admit_count_rejected(c, cmd);
        return ADMIT_REFUSED;
    }
    if (!(who & ADM_AUTHED) && !(cmd->flags & CMD_NO_AUTH)) {
        refuse_status(c, HK_ERR_NOAUTH);
        admit_count_rejected(c, cmd);
        return ADMIT_REFUSED;
    }
    /* ACL, right after authentication as in Redis (acl.h). */
    if ((who & ADM_ACL) && !acl_admit(c, policy)) {
        admit_count_rejected(c, cmd);
        return ADMIT_REFUSED;
    }
    /* Over maxmemory: evict first, as Redis does before any command; when
     * nothing more may go, refuse what could grow the dataset. In MULTI
     * every command but EXEC and DISCARD is refused (EXEC answers
     * EXECABORT), since queueing takes memory without bound. */
    if (atomic_load_explicit(&admit_gate, memory_order_relaxed) & ADMIT_GATE_OOM) {
        /* A worker polling its clients while its script runs holds that
         * script's shards: it takes the state as it stands. */
        int r = c->w && !c->w->busy_poll ? evict_perform(c->w) : evict_oom_state() ? EVICT_FAIL : EVICT_RUNNING;
        uint64_t of = cmd->flags;
        if (cmd->flags & CMD_TXN_EXEC) of |= queued_flags;
        int queued = policy == ADMIT_QUEUE && !(cmd->flags & CMD_TXN_EXEC) && strcmp(cmd->fullname, "discard") != 0 &&
                     strcmp(cmd->fullname, "quit") != 0 && strcmp(cmd->fullname, "reset") != 0;
        if (r == EVICT_FAIL && ((of & CMD_DENYOOM) || queued)) {
            refuse(c, OOM_ERROR);
            admit_count_rejected(c, cmd);
            return ADMIT_REFUSED;
        }
    }
    if (policy == ADMIT_QUEUE && (cmd->flags & (CMD_NO_MULTI | CMD_GATHER))) {
        refuse(c, "ERR Command not allowed inside a transaction");
        admit_count_rejected(c, cmd);
        return ADMIT_REFUSED;
    }
    int gate = atomic_load_explicit(&admit_gate, memory_order_relaxed);
    if (gate & (ADMIT_GATE_RDB_ERR | ADMIT_GATE_AOF_ERR)) {
        uint64_t wf = cmd->flags;
        if (cmd->flags & CMD_TXN_EXEC) wf |= queued_flags;
        const char *derr;
        if (((wf & CMD_WRITE) || !strcmp(cmd->fullname, "ping")) && (derr = disk_error())) {
            refuse(c, derr);
            admit_count_rejected(c, cmd);
            return ADMIT_REFUSED;
        }
    }
    /* A RESP2 connection with subscriptions reads pushed messages as
     * replies, so only what answers in that shape may run (RESP3 pushes
     * are told apart, so it may run anything). */
    if ((who & ADM_PUBSUB2) && !(cmd->flags & CMD_PUBSUB_CTX)) {
        char msg[200];
        snprintf(msg, sizeof(msg),
                 "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
                 "this context",
                 cmd->fullname);
        refuse(c, msg);
        admit_count_rejected(c, cmd);
        return ADMIT_REFUSED;
    }
    /* A monitor is a replica to Redis: it may not touch the keyspace. */
    if ((who & ADM_MONITOR) && (cmd->flags & (CMD_READONLY | CMD_WRITE | CMD_MAY_REPLICATE))) {
        refuse(c, "ERR Replica can't interact with the keyspace");
        admit_count_rejected(c, cmd);
        return ADMIT_REFUSED;
    }
    if ((gate & ADMIT_GATE_LOADING) && !(cmd->flags & CMD_LOADING)) {
        refuse(c, "LOADING Redis is loading the dataset in memory");
        admit_count_rejected(c, cmd);
        return ADMIT_REFUSED;
    }
    if (atomic_load_explicit(&scripts_busy, memory_order_relaxed) && !(cmd->flags & CMD_ALLOW_BUSY)) {
        refuse(c, script_busy_error());
        admit_count_rejected(c, cmd);
        return ADMIT_REFUSED;
    }
    uint64_t pf = cmd->flags;
    if (cmd->flags & CMD_TXN_EXEC) pf |= queued_flags;
    if (pause_blocks(pf, c->now_ms)) return ADMIT_PAUSED;
    return ADMIT_OK;
}

/* ---- contexts ------------------------------------------------------- */

static void ctx_on_write(struct db_sink *sink, const struct keyref *k, int ev);
static void ctx_on_field_expired(struct db_sink *sink, const struct keyref *k, const char *f, size_t fl);

void ctx_init(struct cmd_ctx *c) {
    /* The inline key arrays need no zeroing (nkeys says what is in
     * them): a nested command's context (EXEC, every redis.call) is set
     * up without clearing most of a kilobyte. */
    memset(c, 0, offsetof(struct cmd_ctx, keys_inl));
    memset(&c->warm, 0, sizeof(*c) - offsetof(struct cmd_ctx, warm));
    c->sink.on_event = ctx_on_write;
    c->sink.on_field_expired = ctx_on_field_expired;
    c->keys = c->keys_inl;
    c->kpos = c->kpos_inl;
    c->kcap = CTX_KEYS_INLINE;
    ls_init(&c->own_ls);
    c->ls = &c->own_ls;
    c->prop = &c->own_prop;
    c->resp = 2;
}

static void keys_shrink(struct cmd_ctx *c) {
    if (c->keys == c->keys_inl) return;
    hk_free(c->keys);
    hk_free(c->kpos);
    c->keys = c->keys_inl;
    c->kpos = c->kpos_inl;
    c->kcap = CTX_KEYS_INLINE;
}

void ctx_destroy(struct cmd_ctx *c) {
    keys_shrink(c);
    ls_destroy(&c->own_ls);
    hk_free(c->own_prop.out.p);
    c->own_prop.out.p = NULL;
}

/* ---- keys ------------------------------------------------------------- */

int command_keys(const struct command *cmd, const hk_slice *argv, int argc, int *idx) {
    if (cmd->getkeys) return cmd->getkeys(argv, argc, idx, argc);
    int n = 0;
    if (cmd->first > 0) {
        int last = cmd->last < 0 ? argc + cmd->last : cmd->last;
        for (int i = cmd->first; i <= last && i < argc; i += cmd->step) idx[n++] = i;
    }
    if (cmd->numkeys_at > 0) {
        /* "numkeys key [key ...]": the count at numkeys_at, keys after it. */
        long long nk;
        int at = cmd->numkeys_at;
        if (at >= argc || !hk_str2ll(argv[at].ptr, argv[at].len, &nk)) return -1;
        if (nk < 0 || nk > argc - at - 1) return -1;
        for (int i = 0; i < nk; i++) idx[n++] = at + 1 + i;
    }
    return n;
}

static void keys_reserve(struct cmd_ctx *c, int n) {
    if (n <= c->kcap) return;
    if (c->keys != c->keys_inl) {
        hk_free(c->keys);
        hk_free(c->kpos);
    }
    c->keys = hk_malloc((size_t)n * sizeof(struct keyref));
    c->kpos = hk_malloc((size_t)n * sizeof(int));
    c->kcap = n;
}

/* Resolve argv[i] into r: from the prefetch pass when it is its next key
 * (the very bytes of this argument), else hash it now. */
static inline void resolve_one(struct cmd_ctx *c, int i, struct keyref *r) {
    const hk_slice *a = &c->argv[i];
    if (c->warm_i < c->warm_n) {
        const struct keyref *w = &c->warm[c->warm_i];
        if (w->key == a->ptr && w->klen == a->len) {
            *r = *w;
            r->db = c->db;
            c->warm_i++;
            return;
        }
    }
    keyref_init(r, c->db, a->ptr, a->len);
}

/* Fill c->keys from the key spec and add their shards to ls. */
static void resolve_keys(struct cmd_ctx *c, struct lockset *ls) {
    c->nkeys = 0;
    c->khint = 0;
    const struct command *cmd = c->cmd;
    if (cmd->flags & (CMD_ALL_SHARDS | CMD_SHARDWISE)) return;
    if (!cmd->getkeys && !cmd->numkeys_at) {
        /* A plain key range, no index array needed. */
        if (cmd->first <= 0) return;
        int last = cmd->last < 0 ? c->argc + cmd->last : cmd->last;
        if (last >= c->argc) last = c->argc - 1;
        int n = last >= cmd->first ? (last - cmd->first) / cmd->step + 1 : 0;
        keys_reserve(c, n);
        for (int i = cmd->first, j = 0; j < n; i += cmd->step, j++) {
            c->kpos[j] = i;
            resolve_one(c, i, &c->keys[j]);
            ls_add(ls, c->keys[j].shard);
        }
        c->nkeys = n;
        return;
    }
    keys_reserve(c, c->argc);
    int n = command_keys(cmd, c->argv, c->argc, c->kpos);
    if (n <= 0) return;
    for (int j = 0; j < n; j++) {
        resolve_one(c, c->kpos[j], &c->keys[j]);
        ls_add(ls, c->keys[j].shard);
    }
    c->nkeys = n;
}

/* ---- propagation ------------------------------------------------------ */

static void prop_reset(struct prop *p, int db) {
    p->out.len = 0;
    p->ncmds = 0;
    p->start_db = p->cur_db = db;
}

static void prop_raw(struct prop *p, const void *data, size_t n) { hk_buf_add(&p->out, data, n, 256); }

static void prop_header(struct prop *p, char type, long long n) { respw_header(&p->out, type, n, 256); }
static void prop_bulk(struct prop *p, const void *s, size_t n) { respw_bulk(&p->out, s, n, 256); }

/* Start a command of argc arguments in database db. */
static void prop_start(struct prop *p, int db, int argc) {
    if (p->ncmds == 0 && p->out.len == 0) {
        p->start_db = p->cur_db = db;
    } else if (db != p->cur_db) {
        char buf[JOURNAL_SELECT_MAX];
        prop_raw(p, buf, journal_select_resp(buf, db));
        p->cur_db = db;
    }
    prop_header(p, '*', argc);
    p->ncmds++;
}

void prop_begin(struct cmd_ctx *c, int argc) {
    c->flags |= CTX_PROP_CUSTOM;
    if (!(c->flags & CTX_JOURNAL)) return;
    prop_start(c->prop, c->db, argc);
}

void prop_arg(struct cmd_ctx *c, const void *p, size_t len) {
    if (!(c->flags & CTX_JOURNAL)) return;
    prop_bulk(c->prop, p, len);
}

void prop_arg_ll(struct cmd_ctx *c, long long v) {
    if (!(c->flags & CTX_JOURNAL)) return;
    char buf[HK_LONG_STR_SIZE];
    int n = hk_ll2str(buf, v);
    prop_bulk(c->prop, buf, (size_t)n);
}

void prop_cmd(struct cmd_ctx *c, const char *name, int n, const hk_slice *args) {
    prop_begin(c, n + 1);
    prop_arg_cstr(c, name);
    for (int i = 0; i < n; i++) prop_arg_slice(c, &args[i]);
}

void prop_argv(struct cmd_ctx *c) {
    prop_begin(c, c->argc);
    for (int i = 0; i < c->argc; i++) prop_arg_slice(c, &c->argv[i]);
}

void prop_keyless(struct cmd_ctx *c) {
    if (c->flags & CTX_REPLAY) return;
    c->flags |= CTX_PROP_CUSTOM;
    if (c->flags & CTX_JOURNAL) {
        /* Nested in a unit that journals (EXEC, a script): part of it. */
        prop_argv(c);
        return;
    }
    if (!journal_enabled() || !c->w) return;
    /* A record of its own, tagged with no shard: the merge takes it
     * whenever it reaches the head of this worker's stream. */
    struct prop p = {0};
    prop_start(&p, c->db, c->argc);
    for (int i = 0; i < c->argc; i++) prop_bulk(&p, c->argv[i].ptr, c->argv[i].len);
    struct lockset none;
    ls_init(&none);
    journal_append(c->w->id, &none, 0, p.start_db, p.cur_db, p.out.p, p.out.len);
    hk_free(p.out.p);
}

/* The write hook's consumer for what it does not just count (db.h): keys
 * found expired (or, later, evicted) on the way propagate as DEL of their
 * own, ahead of the command, whatever the command propagates itself. */
static void ctx_on_write(struct db_sink *sink, const struct keyref *k, int ev) {
    struct cmd_ctx *c = (struct cmd_ctx *)sink;
    if ((ev == KEV_EXPIRED || ev == KEV_EVICTED) && (c->flags & (CTX_JOURNAL | CTX_REPLAY)) == CTX_JOURNAL) {
        prop_start(c->prop, k->db, 2);
        prop_bulk(c->prop, "DEL", 3);
        prop_bulk(c->prop, k->key, k->klen);
    }
    /* The listeners `each` stands for (sink_listeners below). */
    if (atomic_load_explicit(&notify_flags, memory_order_relaxed)) notify_event(k, ev);
    if (atomic_load_explicit(&tracking_clients, memory_order_relaxed)) {
        if (!k) tracking_flush_all(c);
        else tracking_key_written(c, k, ev);
    }
}

/* Whether anyone wants every event of the write hook, not only expiries
 * (db_sink.each): keyspace notifications or client-side caching. */
static inline int sink_listeners(void) {
    return atomic_load_explicit(&notify_flags, memory_order_relaxed) != 0 ||
           atomic_load_explicit(&tracking_clients, memory_order_relaxed) != 0;
}

/* A hash field that reached its deadline propagates as HDEL of its own,
 * ahead of the command that met it (or alone, from the active cycle). */
static void ctx_on_field_expired(struct db_sink *sink, const struct keyref *k, const char *f, size_t fl) {
    struct cmd_ctx *c = (struct cmd_ctx *)sink;
    if ((c->flags & (CTX_JOURNAL | CTX_REPLAY)) != CTX_JOURNAL) return;
    prop_start(c->prop, k->db, 3);
    prop_bulk(c->prop, "HDEL", 4);
    prop_bulk(c->prop, k->key, k->klen);
    prop_bulk(c->prop, f, fl);
}

/* After the handler: the default propagation, then the journal append
 * (outermost context only; a nested one's output is its parent's). */
static void prop_finish(struct cmd_ctx *c) {
    if (!(c->flags & CTX_JOURNAL)) return;
    if (c->flags & CTX_REPLAY) {
        c->prop->out.len = 0;
        return;
    }
    if (c->sink.dirty && !(c->flags & CTX_PROP_CUSTOM)) prop_argv(c);
}

/* Under freshly taken locks: record propagation when a journal consumer is
 * attached (the flag only flips with every shard held, so it is read
 * under locks), starting an empty buffer. */
static void journal_arm(struct cmd_ctx *c) {
    if (journal_enabled()) {
        c->flags |= CTX_JOURNAL;
        prop_reset(c->prop, c->db);
    } else {
        c->flags &= ~CTX_JOURNAL;
    }
}

static void journal_flush(struct cmd_ctx *c, const struct lockset *ls, unsigned one) {
    struct prop *p = c->prop;
    if (p->out.len && c->w) journal_append(c->w->id, ls, one, p->start_db, p->cur_db, p->out.p, p->out.len);
    prop_reset(p, c->db);
}

/* ---- deferred work ---------------------------------------------------- */

struct deferred {
    struct deferred *next;
    void (*fn)(void *arg);
    void *arg;
};

void exec_after_unlock(struct cmd_ctx *c, void (*fn)(void *arg), void *arg) {
    struct deferred *d = hk_malloc(sizeof(*d));
    d->fn = fn;
    d->arg = arg;
    d->next = c->deferred;
    c->deferred = d;
}

static void run_deferred(struct cmd_ctx *c) {
    while (c->deferred) {
        struct deferred *d = c->deferred;
        c->deferred = d->next;
        d->fn(d->arg);
        hk_free(d);
    }
}

/* ---- running ------------------------------------------------------------ */

static inline void run_handler(struct cmd_ctx *c) {
    store_now_ms = c->now_ms;
    store_touch = !(c->flags & CTX_NO_TOUCH) || (c->cmd->flags & CMD_TOUCH_ALWAYS);
    store_no_expire = (c->flags & CTX_REPLAY) != 0;
    struct db_sink *saved = db_sink;
    db_sink = &c->sink;
    c->cmd->proc(c);
    db_sink = saved;
}

/* run_handler for a nested command: the parent's store settings come back
 * afterwards (a TOUCH inside a NO-TOUCH transaction must not leave
 * touching on for the rest of it). */
static void run_nested_handler(struct cmd_ctx *c) {
    long long now = store_now_ms;
    int touch = store_touch, no_expire = store_no_expire;
    run_handler(c);
    store_now_ms = now;
    store_touch = touch;
    store_no_expire = no_expire;
}

/* What follows the handler while the locks are held, when there is
 * anything: the journal record, the caller's before_unlock. */
static void __attribute__((noinline)) exec_locked_tail(struct cmd_ctx *c) {
    if (c->flags & CTX_JOURNAL) {
        prop_finish(c);
        journal_flush(c, &c->own_ls, 0);
    }
    if (c->before_unlock) c->before_unlock(c);
}

/* And after the unlock: deferred work, giving back a big key array.
 * Returns the deferred work's time, which is the command's too (a vector
 * search runs there, off the shard lock). */
static long long __attribute__((noinline)) exec_unlocked_tail(struct cmd_ctx *c) {
    long long dt = 0;
    if (c->deferred) {
        long long t0 = hk_clock_ns();
        run_deferred(c);
        dt = hk_clock_ns() - t0;
    }
    if (c->kcap > 1024) keys_shrink(c);
    return dt;
}

long long exec_command(struct cmd_ctx *c) {
    const struct command *cmd = c->cmd;
    struct lockset *ls = &c->own_ls;
    c->sink.dirty = 0;
    c->sink.each = sink_listeners();
    c->flags &= ~(CTX_PROP_CUSTOM | CTX_JOURNAL | CTX_NESTED);
    ls_clear(ls);
    c->nkeys = 0;
    c->khint = 0;
    switch (cmd->key_kind) {
    case KEYS_SINGLE: {
        /* The most common shape: one key at a fixed position (GET, SET,
         * INCR, HSET, LPUSH...), resolved without the general loop. */
        int i = cmd->first;
        if (i < c->argc) {
            c->kpos[0] = i;
            resolve_one(c, i, &c->keys[0]);
            ls->s[0] = c->keys[0].shard;
            ls->n = 1;
            c->nkeys = 1;
        }
        break;
    }
    case KEYS_SPEC: resolve_keys(c, ls); break;
    case KEYS_ALL: ls->all = 1; break;
    default: break;
    }
    if (ls->n || ls->all) {
        if (__builtin_expect(!ls_acquire_abortable(ls), 0)) {
            /* A script past busy-reply-threshold holds what it needs. A
             * blocked command's re-run answers nothing: it waits on and
             * is tried again (blocking.c). */
            if (c->flags & CTX_RETRY) return 0;
            reply_error(c, script_busy_error());
            if (c->w) stat_add(&c->w->cmdstats[cmd->id].rejected, 1);
            return 0;
        }
        journal_arm(c);
        /* A multi-key command (MGET, MSET, DEL k1 k2...) looks its keys up
         * one after the other: warm them all first so their cache misses
         * overlap, unless a pipeline pass already did. */
        if (c->nkeys > 1 && !(c->flags & CTX_KEYS_WARM))
            db_prefetch(c->keys, c->nkeys < PREFETCH_MAX_KEYS ? c->nkeys : PREFETCH_MAX_KEYS, 1);
    }
    long long t0 = hk_clock_ns();
    run_handler(c);
    long long dt = hk_clock_ns() - t0;
    /* Remembered under the locks, so a write on another thread cannot
     * slip between the read and the record of it. */
    if (__builtin_expect(c->cl && (c->cl->flags & CLIENT_TRACKING) != 0, 0) && (cmd->flags & CMD_READONLY))
        tracking_remember_keys(c);
    if ((c->flags & CTX_JOURNAL) || c->before_unlock) exec_locked_tail(c);
    if (c->w) block_flush_wakes(c->w);
    if (ls->held) ls_release(ls);
    if (c->deferred || c->kcap > 1024) dt += exec_unlocked_tail(c);
    return dt;
}

int exec_nested(struct cmd_ctx *p, const struct command *cmd, hk_slice *argv, int argc) {
    struct cmd_ctx n;
    ctx_init(&n);
    n.cmd = cmd;
    n.argv = argv;
    n.argc = argc;
    n.db = p->db;
    n.resp = p->resp;
    n.now_ms = p->now_ms;
    n.frozen_us = p->frozen_us;
    n.flags = (p->flags & (CTX_DENY_BLOCKING | CTX_NO_TOUCH | CTX_MUTED | CTX_JOURNAL | CTX_REPLAY)) | CTX_NESTED;
    n.sink.each = sink_listeners();
    n.ls = p->ls;
    n.prop = p->prop;
    n.out = p->out;
    n.cl = p->cl;
    n.w = p->w;
    int st = HK_OK;
    int held_before = p->ls->held || p->ls->all || (p->flags & CTX_NESTED);
    if (cmd->flags & (CMD_ALL_SHARDS | CMD_SHARDWISE)) {
        if (!p->ls->all) st = HK_ERR_LOCK_CONFLICT;
    } else {
        struct lockset want;
        ls_init(&want);
        resolve_keys(&n, &want);
        for (unsigned i = 0; i < want.n && st == HK_OK; i++)
            if (!ls_extend(p->ls, want.s[i])) st = HK_ERR_LOCK_CONFLICT;
        ls_destroy(&want);
    }
    /* A parent that held nothing (a keyless EXEC or script so far) just
     * took its first shards: from now on it journals like any writer. */
    if (!held_before && p->ls->held && !(p->flags & CTX_JOURNAL)) {
        journal_arm(p);
        n.flags |= p->flags & CTX_JOURNAL;
    }
    if (st != HK_OK) {
        reply_status(p, st);
        ctx_destroy(&n);
        return st;
    }
    int before = p->prop->ncmds;
    run_nested_handler(&n);
    /* A script's calls run without a connection; what they read is the
     * calling connection's (tracking_remember_keys finds it). */
    if (cmd->flags & CMD_READONLY) {
        const struct client *tc = n.cl ? n.cl : n.w ? n.w->cmd_client : NULL;
        if (tc && (tc->flags & CLIENT_TRACKING)) tracking_remember_keys(&n);
    }
    if (n.flags & CTX_JOURNAL) prop_finish(&n);
    p->sink.dirty += n.sink.dirty;
    p->errors += n.errors;
    p->db = n.db;     /* SELECT inside a transaction sticks */
    p->resp = n.resp; /* and so does HELLO's protocol */
    /* The inner command described the effect: the outer one's own argv
     * (BLPOP, EXEC...) must not propagate on top of it. */
    if (n.sink.dirty || p->prop->ncmds != before) p->flags |= CTX_PROP_CUSTOM;
    /* Deferred work waits for the outermost context's unlock. */
    while (n.deferred) {
        struct deferred *d = n.deferred;
        n.deferred = d->next;
        d->next = p->deferred;
        p->deferred = d;
    }
    n.prop = &n.own_prop;
    ctx_destroy(&n);
    return HK_OK;
}

void exec_lock_own(struct cmd_ctx *c) {
    HK_ASSERT(!(c->flags & CTX_NESTED) && !c->own_ls.held);
    c->ls = &c->own_ls;
    if (!c->own_ls.n && !c->own_ls.all) return;
    ls_acquire(&c->own_ls);
    journal_arm(c);
}

void exec_prop_mark(struct cmd_ctx *c, struct prop_mark *m) {
    m->off = c->prop->out.len;
    m->ncmds = c->prop->ncmds;
}

void exec_prop_wrap(struct cmd_ctx *c, const struct prop_mark *m) {
    struct prop *p = c->prop;
    /* Nested (a script inside EXEC): the outer unit wraps it. */
    if (!(c->flags & CTX_JOURNAL) || (c->flags & (CTX_REPLAY | CTX_NESTED)) || p->ncmds - m->ncmds < 2) return;
    static const char multi[] = "*1\r\n$5\r\nMULTI\r\n";
    size_t ml = sizeof(multi) - 1;
    prop_raw(p, multi, ml); /* room */
    memmove(p->out.p + m->off + ml, p->out.p + m->off, p->out.len - ml - m->off);
    memcpy(p->out.p + m->off, multi, ml);
    prop_raw(p, "*1\r\n$4\r\nEXEC\r\n", 14);
    p->ncmds += 2;
}

void exec_adopt_deferred(struct cmd_ctx *to, struct cmd_ctx *from) {
    while (from->deferred) {
        struct deferred *d = from->deferred;
        from->deferred = d->next;
        d->next = to->deferred;
        to->deferred = d;
    }
}

void exec_shard_enter(struct cmd_ctx *c, unsigned s) {
    if (ctx_locked(c) && ls_holds(c->ls, s)) return;
    HK_ASSERT(!(c->flags & CTX_NESTED));
    shard_lock(s);
    journal_arm(c);
}

void exec_shard_leave(struct cmd_ctx *c, unsigned s) {
    if (ctx_locked(c) && ls_holds(c->ls, s)) return;
    if (c->flags & CTX_JOURNAL) journal_flush(c, NULL, s);
    shard_unlock(s);
}

int exec_with_all_shards(struct cmd_ctx *c, void (*fn)(struct cmd_ctx *c, void *arg), void *arg) {
    if (exec_holds_all(c)) {
        fn(c, arg);
        return HK_OK;
    }
    if ((c->flags & CTX_NESTED) || c->ls->held) return HK_ERR_LOCK_CONFLICT;
    struct lockset all;
    ls_init(&all);
    ls_add_all(&all);
    ls_acquire(&all);
    struct lockset *saved = c->ls;
    c->ls = &all;
    fn(c, arg);
    c->ls = saved;
    ls_release(&all);
    return HK_OK;
}

int exec_lock_all_shards(struct cmd_ctx *c) {
    if (exec_holds_all(c)) return HK_OK;
    if (c->flags & CTX_NESTED) return HK_ERR_LOCK_CONFLICT;
    /* Not nested: c->ls is the context's own set. Nothing was read under
     * it yet, so letting it go before taking everything loses nothing;
     * the journal record is then tagged with every shard. */
    struct lockset *ls = &c->own_ls;
    /* What was propagated under the shards held so far (a script's
     * expired keys) is journaled before they are let go. */
    if ((c->flags & CTX_JOURNAL) && ls->held) journal_flush(c, ls, 0);
    if (ls->held) ls_release(ls);
    ls_clear(ls);
    ls_add_all(ls);
    ls_acquire(ls);
    journal_arm(c);
    return HK_OK;
}

/* Background work on shard s in w's own context (active expiry,
 * eviction): its writes reach the journal and the listeners as a
 * command's do. It never waits for the shard: a busy one (a long script
 * holds it) is left for later, and sys_enter answers 0. */
static int sys_enter(struct worker *w, unsigned s, long long now_ms, struct db_sink **saved) {
    struct cmd_ctx *c = &w->sys_ctx;
    c->flags = 0;
    c->now_ms = now_ms;
    c->sink.each = sink_listeners();
    if (!shard_trylock(s)) return 0;
    journal_arm(c);
    *saved = db_sink;
    db_sink = &c->sink;
    return 1;
}

static void sys_leave(struct worker *w, unsigned s, struct db_sink *saved) {
    struct cmd_ctx *c = &w->sys_ctx;
    db_sink = saved;
    if (c->flags & CTX_JOURNAL) journal_flush(c, NULL, s);
    block_flush_wakes(w);
    shard_unlock(s);
}

int exec_evict_key(struct worker *w, const struct keyref *k, long long now_ms) {
    struct db_sink *saved;
    if (!sys_enter(w, k->shard, now_ms, &saved)) return 0;
    int gone = db_delete_as(k, now_ms, KEV_EVICTED, DB_FREE_EVICT);
    sys_leave(w, k->shard, saved);
    if (gone) stat_add(&w->stats.evicted_keys, 1);
    return gone;
}

unsigned exec_active_expire(struct worker *w, unsigned s, long long now_ms, unsigned budget) {
    struct db_sink *saved;
    if (!sys_enter(w, s, now_ms, &saved)) return 0;
    unsigned n = shard_active_expire(s, now_ms, budget);
    n += shard_active_expire_fields(s, now_ms, budget);
    sys_leave(w, s, saved);
    return n;
}
