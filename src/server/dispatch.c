/* dispatch.c - from bytes in the query buffer to a command run.
 *
 * client_process_input parses every complete request in the buffer and
 * hands each to dispatch_command, which asks the execution core's
 * admission step (exec_admit: lookup, subcommands, arity, authentication,
 * CLIENT PAUSE, what MULTI may queue), queues the command inside MULTI or
 * runs it (exec_command: shard locking from the key spec), then keeps the
 * statistics and output buffer limits. Handlers only see a checked argv
 * with their shards locked. */
#include "../core/alloc.h"
#include "../store/db.h"
#include "acl.h"
#include "blocking.h"
#include "config.h"
#include "creply.h"
#include "script.h"
#include "server.h"
#include "pubsub.h"
#include "txn.h"

#include <stdio.h>
#include <string.h>

enum { DISPATCH_DONE = 0, DISPATCH_PAUSED = 1 };

/* The output-buffer class of a client, as client-output-buffer-limit
 * names them: pub/sub subscribers and replicas have limits of their own. */
static int output_class(const struct client *c) {
    if (c->flags & CLIENT_REPLICA) return OBL_REPLICA;
    if (c->flags & CLIENT_PUBSUB) return OBL_PUBSUB;
    return OBL_NORMAL;
}

void client_check_output_limits_slow(struct client *c) {
    size_t pending = c->out.pending;
    int cls = output_class(c);
    long long hard = CFG(obl[cls][0]), soft = CFG(obl[cls][1]);
    if (hard && (long long)pending >= hard) {
        hk_log(LL_WARNING, "Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
               (unsigned long long)c->id, c->addr);
        stat_add(&c->w->stats.client_outbuf_limit_disconnections, 1);
        c->flags |= CLIENT_CLOSE_ASAP;
        return;
    }
    if (soft && (long long)pending >= soft) {
        if (!c->obuf_soft_since_ms) c->obuf_soft_since_ms = c->w->now_ms;
    } else {
        c->obuf_soft_since_ms = 0;
    }
}

int client_soft_limit_passed(const struct client *c, long long now_ms) {
    int cls = output_class(c);
    long long soft = CFG(obl[cls][1]), secs = CFG(obl[cls][2]);
    return soft && c->obuf_soft_since_ms && (long long)c->out.pending >= soft &&
           now_ms - c->obuf_soft_since_ms > secs * 1000;
}

/* What a connection is, for the admission step. */
static unsigned client_admit_who(struct client *c) {
    unsigned who = 0;
    /* One load and compare while the user is unchanged (acl.h). */
    struct acl_user *u = acl_client_user(c, c->user ? c->user : &acl_default_ident, c->acl, c->acl_gen);
    if (!(u->flags & USER_ALLPERM)) who |= ADM_ACL;
    if (c->flags & CLIENT_AUTHENTICATED) who |= ADM_AUTHED;
    if (c->flags & CLIENT_LOCAL) who |= ADM_LOCAL;
    if (c->flags & CLIENT_MONITOR) who |= ADM_MONITOR;
    if ((c->flags & CLIENT_PUBSUB) && c->ctx.resp == 2) who |= ADM_PUBSUB2;
    return who;
}

static int busy_poll_allowed(const struct command *cmd) {
    static const char *ok[] = {"script|kill", "function|kill", "function|stats", "shutdown", "auth", "hello", "quit"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (strcmp(cmd->fullname, ok[i]) == 0) return 1;
    return 0;
}

int dispatch_command(struct client *c) {
    struct worker *w = c->w;
    struct cmd_ctx *x = &c->ctx;
    x->now_ms = w->now_ms;
    x->errors = 0;
    x->flags = client_ctx_flags(c) | (x->flags & CTX_KEYS_WARM);
    x->argv = c->argv;
    x->argc = c->argc;
    struct txn *t = c->txn;
    int queuing = t && t->active;
    int adm = exec_admit(x, queuing ? ADMIT_QUEUE : ADMIT_SOCKET, client_admit_who(c), t ? t->flags : 0);
    const struct command *cmd = x->cmd;
    if (adm == ADMIT_PAUSED) return DISPATCH_PAUSED;
    if (adm == ADMIT_REFUSED) {
        /* As Redis: CLIENT LIST names a refused command too, and an error
         * while queuing dooms the transaction. */
        c->lastcmd = cmd;
        if (queuing) t->dirty_exec = 1;
        /* A refused EXEC aborts the transaction (EXECABORT). */
        if (cmd && (cmd->flags & CMD_TXN_EXEC) && t) {
            txn_clear_queue(c);
            txn_unwatch_all(c);
        }
        return DISPATCH_DONE;
    }
    /* Served while this worker's own script is busy: only what needs no
     * shard and no other connection's state may run. */
    if (__builtin_expect(w->busy_poll, 0) && !busy_poll_allowed(cmd)) {
        reply_error(x, script_busy_error());
        c->lastcmd = cmd;
        return DISPATCH_DONE;
    }
    if (queuing && !(cmd->flags & CMD_TXN_CONTROL)) {
        txn_queue(c, cmd);
        reply_simple(x, "QUEUED");
        c->lastcmd = cmd;
        return DISPATCH_DONE;
    }
    c->cmd = cmd;
    /* Scripts (skip-monitor, as in Redis) are shown before they run, so
     * that the commands they call follow them in the feed. */
    if ((cmd->flags & CMD_RUNS_SCRIPT) && atomic_load_explicit(&monitor_count, memory_order_relaxed))
        monitor_feed(c, cmd, x->argv, x->argc, x->db);
    /* A write that wakes blocked clients holds this connection's output
     * and input until every re-run it caused has ended (blocking.h). The
     * outer one is kept for a command served while a script is busy. */
    struct client *outer = w->cmd_client;
    w->cmd_client = c;
    long long dt = exec_command(x);
    w->cmd_client = outer;
    chain_command_end(c);
    if (__builtin_expect(w->ps_held_for == c, 0)) pubsub_command_end(c);
    /* Shown once, as it ran (a blocked command when it blocked, not when
     * it is served); admin commands are not shown, as in Redis. */
    if (atomic_load_explicit(&monitor_count, memory_order_relaxed) && !(cmd->flags & (CMD_SKIP_MONITOR | CMD_ADMIN)))
        monitor_feed(c, cmd, x->argv, x->argc, x->db);
    c->lastcmd = cmd;
    /* A command that blocked is counted once, when it is served, times
     * out or is unblocked (blocking.c), as Redis does. */
    if (!(c->flags & CLIENT_BLOCKED)) client_count_call(c, cmd, dt);
    else block_add_time(c, dt);
    stat_add(&w->stats.commands_processed, 1);
    client_check_output_limits(c);
    return DISPATCH_DONE;
}

static void build_argv(struct client *c) {
    if (c->req.argc > c->argv_cap) {
        int cap = c->req.argc < 16 ? 16 : c->req.argc;
        hk_free(c->argv);
        c->argv = hk_malloc((size_t)cap * sizeof(hk_slice));
        c->argv_cap = cap;
    }
    const char *base = c->qbuf + c->qpos;
    for (int i = 0; i < c->req.argc; i++) {
        c->argv[i].ptr = base + c->req.off[i];
        c->argv[i].len = c->req.len[i];
    }
    c->argc = c->req.argc;
}

/* Pipeline prefetch: peek at the complete requests in c's query buffer from
 * qpos on (the first may already be parsed into c->req but not yet run)
 * with resp_skim, which leaves the parser alone, and collect into keys[]
 * (room for max, *n used) the keys their key specs name, in database c->db.
 * Only a hint: a request that changes what later ones see (SELECT, a
 * write) makes some prefetches useless, never wrong, and lock_keys uses a
 * collected key only if it is the very bytes of its argument. Stops at a
 * request resp_skim does not take (inline, incomplete, unusual), and at
 * one whose keys do not all fit. Returns the end offset of the requests
 * covered: the commands before it run with CLIENT_KEYS_WARM once keys[] is
 * prefetched. */
static size_t collect_keys(struct client *c, struct keyref *keys, int *n, int max) {
    size_t off[PREFETCH_MAX_ARGS], len[PREFETCH_MAX_ARGS];
    size_t pos = c->qpos;
    for (int nreq = 0; nreq < PREFETCH_MAX_REQS && pos < c->qlen && *n < max; nreq++) {
        int argc;
        size_t reqlen;
        if (!resp_skim(c->qbuf + pos, c->qlen - pos, off, len, PREFETCH_MAX_ARGS, &argc, &reqlen)) break;
        const char *base = c->qbuf + pos;
        const struct command *cmd = exec_lookup(c->w, base + off[0], len[0]);
        if (cmd && !cmd->nsubs && !cmd->getkeys && !cmd->numkeys_at && cmd->first > 0 &&
            !(cmd->flags & (CMD_SHARDWISE | CMD_ALL_SHARDS))) {
            int last = cmd->last < 0 ? argc + cmd->last : cmd->last;
            if (last >= argc) last = argc - 1;
            int want = 0;
            for (int i = cmd->first; i <= last; i += cmd->step) want++;
            /* Left to lock_keys's own prefetch, so not covered. */
            if (*n + want > max || last >= PREFETCH_MAX_ARGS) break;
            for (int i = cmd->first; i <= last; i += cmd->step)
                keyref_init(&keys[(*n)++], c->ctx.db, base + off[i], len[i]);
        }
        pos += reqlen;
    }
    return pos;
}

/* Prefetch for the requests of one client's pipeline (when the worker's
 * pass over all clients read in a loop turn did not cover them). */
static size_t prefetch_pipeline(struct client *c) {
    struct keyref *keys = c->w->warm_keys + PREFETCH_BATCH_KEYS;
    int n = 0;
    size_t end = collect_keys(c, keys, &n, PREFETCH_MAX_KEYS);
    c->ctx.warm = keys;
    c->ctx.warm_n = n;
    c->ctx.warm_i = 0;
    if (n > 1) db_prefetch(keys, n, 0);
    return end;
}

void dispatch_prefetch(struct client **cs, int ncs) {
    struct keyref *keys = cs[0]->w->warm_keys;
    int n = 0;
    for (int i = 0; i < ncs && n < PREFETCH_BATCH_KEYS; i++) {
        struct client *c = cs[i];
        if (c->flags & CLIENT_CLOSING) continue;
        int first = n;
        c->warm_to = collect_keys(c, keys, &n, PREFETCH_BATCH_KEYS);
        c->ctx.warm = keys + first;
        c->ctx.warm_n = n - first;
        c->ctx.warm_i = 0;
    }
    if (n > 1) db_prefetch(keys, n, 0);
}

int client_process_input(struct client *c) {
    while (c->qpos < c->qlen) {
        if (client_is_waiting(c) ||
            (c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_READ_STOPPED)))
            break;
        if (c->out.pending > CLIENT_BACKPRESSURE_BYTES) {
            client_stop_reading(c);
            break;
        }
        struct resp_limits lim = {CFG(proto_max_bulk_len), (c->flags & CLIENT_AUTHENTICATED) != 0};
        enum resp_status st = resp_parse(&c->req, c->qbuf + c->qpos, c->qlen - c->qpos, &lim);
        if (st == RESP_MORE) break;
        if (st == RESP_ERR) {
            char msg[160];
            snprintf(msg, sizeof(msg), "ERR %s", c->req.err);
            hk_log(LL_VERBOSE, "Protocol error (%s) from client: id=%llu addr=%s", c->req.err,
                   (unsigned long long)c->id, c->addr);
            c->ctx.flags &= ~CTX_MUTED;
            reply_error(&c->ctx, msg);
            c->flags |= CLIENT_CLOSE_AFTER_REPLY;
            c->qpos = c->qlen;
            resp_req_reset(&c->req);
            break;
        }
        if (c->req.argc > 0) {
            build_argv(c);
            /* More requests behind this one: a pipeline. Warm the keys of
             * the next batch of requests before running them. */
            if (c->qpos >= c->warm_to && c->qpos + c->req.pos < c->qlen) c->warm_to = prefetch_pipeline(c);
            if (c->qpos < c->warm_to) c->ctx.flags |= CTX_KEYS_WARM;
            int st = dispatch_command(c);
            c->ctx.flags &= ~CTX_KEYS_WARM;
            if (st == DISPATCH_PAUSED) {
                if (!(c->flags & CLIENT_PAUSED)) {
                    c->flags |= CLIENT_PAUSED;
                    c->next_paused = c->w->paused;
                    c->w->paused = c;
                    stat_add(&c->w->npaused, 1);
                }
                break;
            }
            /* CLIENT REPLY SKIP mutes exactly the next command's reply,
             * whether that command ran or was rejected (as in Redis). */
            if (c->flags & CLIENT_REPLY_SKIP) c->flags &= ~CLIENT_REPLY_SKIP;
            if (c->flags & CLIENT_REPLY_SKIP_NEXT) {
                c->flags &= ~CLIENT_REPLY_SKIP_NEXT;
                c->flags |= CLIENT_REPLY_SKIP;
            }
            c->argc = 0;
        }
        c->qpos += c->req.pos;
        resp_req_reset(&c->req);
    }
    /* Offsets into the buffer do not survive its compaction, and the
     * worker's key arrays are reused by the next pass. */
    c->warm_to = 0;
    c->ctx.warm_n = c->ctx.warm_i = 0;
    if (c->qpos == c->qlen) {
        c->qpos = c->qlen = 0;
        /* Large buffers from a big request are returned at once. */
        if (c->qcap > 64 * 1024 && !c->req.need) {
            hk_free(c->qbuf);
            c->qbuf = NULL;
            c->qcap = 0;
        }
    }
    return (c->flags & CLIENT_CLOSE_ASAP) ? -1 : 0;
}

void pause_check_clients(struct worker *w) {
    if (!w->paused) return;
    long long end = atomic_load(&server.pause_end_ms);
    if (end && hk_mstime() < end) return;
    struct client *list = w->paused;
    w->paused = NULL;
    while (list) {
        struct client *c = list;
        list = c->next_paused;
        c->flags &= ~CLIENT_PAUSED;
        stat_add(&c->w->npaused, (unsigned long long)-1);
        c->w->now_ms = hk_mstime();
        if (client_resume(c) < 0) client_close(c);
    }
}
