/* dispatch.c - from bytes in the query buffer to a command run.
 *
 * client_process_input parses every complete request in the buffer and
 * hands each to dispatch_command, which is the single place where the
 * command table is consulted: lookup, subcommands, arity, authentication,
 * CLIENT PAUSE, shard locking from the key spec, statistics and output
 * buffer limits. Handlers only see a checked argv with their shards locked. */
#include "../core/alloc.h"
#include "../store/db.h"
#include "config.h"
#include "creply.h"
#include "server.h"

#include <stdio.h>
#include <string.h>

enum { DISPATCH_DONE = 0, DISPATCH_PAUSED = 1 };

/* cmd_lookup behind a one-entry cache per worker: pipelines and busy
 * clients send the same command again and again, spelled the same way, and
 * comparing the bytes with the last name looked up is cheaper than
 * folding, hashing and probing the index (~6% of a pipelined PING's CPU). */
static struct command *lookup_command(struct worker *w, const char *name, size_t len) {
    if (len == w->last_cmd_len && w->last_cmd && memcmp(name, w->last_cmd_name, len) == 0) return w->last_cmd;
    struct command *cmd = cmd_lookup(name, len);
    if (cmd && len <= sizeof(w->last_cmd_name)) {
        memcpy(w->last_cmd_name, name, len);
        w->last_cmd_len = len;
        w->last_cmd = cmd;
    }
    return cmd;
}

static int pause_blocks(const struct command *cmd, long long now_ms) {
    long long end = atomic_load_explicit(&server.pause_end_ms, memory_order_acquire);
    if (!end || now_ms >= end) return 0;
    if (atomic_load(&server.pause_all)) return 1;
    return (cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)) != 0;
}

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

/* Refuse cmd before it runs with the error of status st. */
static void reject(struct client *c, struct command *cmd, int st) {
    struct cmd_ctx *x = &c->ctx;
    x->cmd = cmd;
    c->lastcmd = cmd; /* as Redis: CLIENT LIST names a refused command too */
    reply_status(x, st);
    stat_add(&c->w->cmdstats[cmd->id].rejected, 1);
}

int dispatch_command(struct client *c) {
    struct worker *w = c->w;
    struct cmd_ctx *x = &c->ctx;
    x->now_ms = w->now_ms;
    x->errors = 0;
    x->flags = client_ctx_flags(c) | (x->flags & CTX_KEYS_WARM);
    x->argv = c->argv;
    x->argc = c->argc;
    struct command *cmd = lookup_command(w, c->argv[0].ptr, c->argv[0].len);
    if (!cmd) {
        c->lastcmd = NULL;
        char msg[1024];
        int off = snprintf(msg, sizeof(msg), "ERR unknown command '%.*s', with args beginning with: ",
                           (int)(c->argv[0].len > 128 ? 128 : c->argv[0].len), c->argv[0].ptr);
        /* As Redis: arguments are quoted one after the other until their
         * text reaches 128 bytes, each cut to what is left of those 128. */
        int args0 = off;
        for (int i = 1; i < c->argc && off - args0 < 128; i++) {
            int room = 128 - (off - args0);
            off += snprintf(msg + off, sizeof(msg) - (size_t)off, "'%.*s' ",
                            (int)(c->argv[i].len > (size_t)room ? (size_t)room : c->argv[i].len), c->argv[i].ptr);
        }
        reply_error(x, msg);
        return DISPATCH_DONE;
    }
    /* A container with a handler of its own (COMMAND) runs it when called
     * without a subcommand. */
    if (cmd->nsubs && (c->argc >= 2 || !cmd->proc)) {
        if (c->argc < 2) {
            reject(c, cmd, HK_ERR_ARITY);
            return DISPATCH_DONE;
        }
        struct command *sub = cmd_lookup_sub(cmd, c->argv[1].ptr, c->argv[1].len);
        if (!sub) {
            x->cmd = cmd;
            c->lastcmd = NULL;
            reply_unknown_subcommand(x);
            stat_add(&w->cmdstats[cmd->id].rejected, 1);
            return DISPATCH_DONE;
        }
        cmd = sub;
    }
    if ((cmd->arity > 0 && c->argc != cmd->arity) || c->argc < -cmd->arity) {
        reject(c, cmd, HK_ERR_ARITY);
        return DISPATCH_DONE;
    }
    /* Protected commands (DEBUG) are refused before authentication, in
     * Redis's order: enable-debug-command yes, or local for loopback and
     * unix socket clients. */
    if ((cmd->flags & CMD_PROTECTED) && CFG(enable_debug_command) != CFG_DEBUG_YES &&
        !(CFG(enable_debug_command) == CFG_DEBUG_LOCAL && (c->flags & CLIENT_LOCAL))) {
        x->cmd = cmd;
        c->lastcmd = cmd;
        reply_error(x, "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you "
                       "can run it from a local connection, otherwise you need to set this option in the "
                       "configuration file, and then restart the server.");
        stat_add(&w->cmdstats[cmd->id].rejected, 1);
        return DISPATCH_DONE;
    }
    if (!(c->flags & CLIENT_AUTHENTICATED) && !(cmd->flags & CMD_NO_AUTH)) {
        reject(c, cmd, HK_ERR_NOAUTH);
        return DISPATCH_DONE;
    }
    if (pause_blocks(cmd, x->now_ms)) return DISPATCH_PAUSED;

    x->cmd = cmd;
    c->cmd = cmd;
    long long dt = exec_command(x);
    c->lastcmd = cmd;
    /* A command that blocked is counted once, when it is served, times
     * out or is unblocked (blocking.c), as Redis does. */
    if (!(c->flags & CLIENT_BLOCKED)) client_count_call(c, cmd, dt);
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
        const struct command *cmd = lookup_command(c->w, base + off[0], len[0]);
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
