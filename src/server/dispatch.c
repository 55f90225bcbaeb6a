/* dispatch.c - from bytes in the query buffer to a command run.
 *
 * client_process_input parses every complete request in the buffer and
 * hands each to dispatch_command, which is the single place where the
 * command table is consulted: lookup, subcommands, arity, authentication,
 * CLIENT PAUSE, shard locking from the key spec, statistics and output
 * buffer limits. Handlers only see a checked argv with their shards locked. */
#include "../cmd/cmds.h"
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

int command_keys(const struct command *cmd, struct client *c, int *idx, int max) {
    if (cmd->getkeys) return cmd->getkeys(c, idx, max);
    if (cmd->first <= 0) return 0;
    int last = cmd->last < 0 ? c->argc + cmd->last : cmd->last;
    int n = 0;
    for (int i = cmd->first; i <= last && i < c->argc; i += cmd->step) {
        if (n == max) return -1;
        idx[n++] = i;
    }
    return n;
}

static void locks_reserve(struct client *c, int n) {
    if (n <= c->locks_cap) return;
    if (c->locks != c->locks_inline) hk_free(c->locks);
    c->locks = hk_malloc((size_t)n * sizeof(unsigned));
    c->locks_cap = n;
}


/* Resolve key a into r from the keys the last prefetch pass computed, when
 * it is the next of them (the same bytes of the same query buffer). */
static int take_warm_key(struct client *c, const hk_slice *a, struct keyref *r) {
    if (c->wk_i >= c->wk_n) return 0;
    const struct keyref *w = &c->wk[c->wk_i];
    if (w->key != a->ptr || w->klen != a->len) return 0;
    *r = *w;
    r->db = c->db;
    c->wk_i++;
    return 1;
}

/* Lock the shards of the command's keys in ascending order, keeping the
 * first keys' slot and hash for key_of. */
static void lock_keys(struct client *c, const struct command *cmd) {
    c->nlocks = 0;
    c->nkrefs = 0;
    if (cmd->flags & CMD_SELF_LOCK) return;
    int stack_idx[64];
    int *idx = stack_idx, max = 64;
    if (c->argc > 64) {
        idx = hk_malloc((size_t)c->argc * sizeof(int));
        max = c->argc;
    }
    int n = command_keys(cmd, c, idx, max);
    if (n > 0) {
        locks_reserve(c, n);
        for (int i = 0; i < n; i++) {
            const hk_slice *a = &c->argv[idx[i]];
            unsigned s;
            if (i < CLIENT_KEYREFS) {
                struct keyref *r = &c->krefs[i];
                if (!take_warm_key(c, a, r)) keyref_init(r, c->db, a->ptr, a->len);
                c->krefs_idx[i] = idx[i];
                c->nkrefs = i + 1;
                s = r->shard;
            } else {
                s = ks_shard_of(a->ptr, a->len);
            }
            /* Insertion keeps the list sorted and unique; key counts are
             * small on the common path. Large MSETs sort the same way. */
            int j = c->nlocks;
            while (j > 0 && c->locks[j - 1] > s) j--;
            if (j > 0 && c->locks[j - 1] == s) continue;
            memmove(c->locks + j + 1, c->locks + j, (size_t)(c->nlocks - j) * sizeof(unsigned));
            c->locks[j] = s;
            c->nlocks++;
        }
        for (int i = 0; i < c->nlocks; i++) shard_lock(c->locks[i]);
        /* A multi-key command (MGET, MSET, DEL k1 k2...) looks its keys
         * up one after the other: warm them all first, so their cache
         * misses overlap. Not when a pipeline pass already did. */
        if (n > 1 && !(c->flags & CLIENT_KEYS_WARM)) {
            struct keyref refs[PREFETCH_MAX_KEYS];
            int m = n < PREFETCH_MAX_KEYS ? n : PREFETCH_MAX_KEYS;
            for (int i = 0; i < m; i++) {
                if (i < c->nkrefs) refs[i] = c->krefs[i];
                else keyref_init(&refs[i], c->db, c->argv[idx[i]].ptr, c->argv[idx[i]].len);
            }
            db_prefetch(refs, m, 1);
        }
    }
    if (idx != stack_idx) hk_free(idx);
}

static void unlock_keys(struct client *c) {
    for (int i = c->nlocks; i-- > 0;) shard_unlock(c->locks[i]);
    c->nlocks = 0;
    c->nkrefs = 0;
}

static void check_output_limits(struct client *c) {
    size_t pending = c->out.pending;
    long long hard = CFG(obl[OBL_NORMAL][0]), soft = CFG(obl[OBL_NORMAL][1]);
    if (hard && (long long)pending > hard) {
        hk_log(LL_WARNING, "Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
               (unsigned long long)c->id, c->addr);
        stat_add(&c->w->stats.client_outbuf_limit_disconnections, 1);
        c->flags |= CLIENT_CLOSE_ASAP;
        return;
    }
    if (soft && (long long)pending > soft) {
        if (!c->obuf_soft_since_ms) c->obuf_soft_since_ms = c->w->now_ms;
    } else {
        c->obuf_soft_since_ms = 0;
    }
}

static void reject(struct client *c, struct command *cmd, const char *msg) {
    reply_error(c, msg);
    if (cmd) stat_add(&c->w->cmdstats[cmd->id].rejected, 1);
}

int dispatch_command(struct client *c) {
    struct worker *w = c->w;
    c->now_ms = w->now_ms;
    c->errors_in_cmd = 0;
    struct command *cmd = lookup_command(w, c->argv[0].ptr, c->argv[0].len);
    if (!cmd) {
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
        reply_error(c, msg);
        return DISPATCH_DONE;
    }
    /* A container with a handler of its own (COMMAND) runs it when called
     * without a subcommand. */
    if (cmd->nsubs && (c->argc >= 2 || !cmd->proc)) {
        if (c->argc < 2) {
            reply_errorf(c, "ERR wrong number of arguments for '%s' command", cmd->name);
            stat_add(&w->cmdstats[cmd->id].rejected, 1);
            return DISPATCH_DONE;
        }
        struct command *sub = cmd_lookup_sub(cmd, c->argv[1].ptr, c->argv[1].len);
        if (!sub) {
            char up[64];
            size_t i;
            for (i = 0; cmd->name[i] && i < sizeof(up) - 1; i++)
                up[i] = (char)(cmd->name[i] >= 'a' && cmd->name[i] <= 'z' ? cmd->name[i] - 32 : cmd->name[i]);
            up[i] = '\0';
            reply_errorf(c, "ERR unknown subcommand '%.*s'. Try %s HELP.",
                         (int)(c->argv[1].len > 128 ? 128 : c->argv[1].len), c->argv[1].ptr, up);
            stat_add(&w->cmdstats[cmd->id].rejected, 1);
            return DISPATCH_DONE;
        }
        cmd = sub;
    }
    if ((cmd->arity > 0 && c->argc != cmd->arity) || c->argc < -cmd->arity) {
        char msg[128];
        snprintf(msg, sizeof(msg), "ERR wrong number of arguments for '%s' command", cmd->fullname);
        reject(c, cmd, msg);
        return DISPATCH_DONE;
    }
    if (!(c->flags & CLIENT_AUTHENTICATED) && !(cmd->flags & CMD_NO_AUTH)) {
        reject(c, cmd, ERR_NOAUTH);
        return DISPATCH_DONE;
    }
    if (pause_blocks(cmd, c->now_ms)) return DISPATCH_PAUSED;

    lock_keys(c, cmd);
    c->cmd = cmd;
    store_now_ms = c->now_ms;
    store_touch = !(c->flags & CLIENT_NO_TOUCH) || cmd->proc == cmd_touch;
    long long t0 = hk_clock_ns();
    cmd->proc(c);
    long long dt = hk_clock_ns() - t0;
    unlock_keys(c);
    c->lastcmd = cmd;
    c->tot_cmds++;
    struct cmdstat *st = &w->cmdstats[cmd->id];
    /* A command that blocked is counted once, when it is served, times
     * out or is unblocked (blocking.c), as Redis does. */
    if (!(c->flags & CLIENT_BLOCKED)) {
        stat_add(&st->calls, 1);
        stat_add(&st->nsec, (unsigned long long)dt);
        if (c->errors_in_cmd) stat_add(&st->failed, 1);
    }
    stat_add(&w->stats.commands_processed, 1);
    check_output_limits(c);
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
        if (cmd && !cmd->nsubs && !cmd->getkeys && cmd->first > 0 && !(cmd->flags & CMD_SELF_LOCK)) {
            int last = cmd->last < 0 ? argc + cmd->last : cmd->last;
            if (last >= argc) last = argc - 1;
            int want = 0;
            for (int i = cmd->first; i <= last; i += cmd->step) want++;
            /* Left to lock_keys's own prefetch, so not covered. */
            if (*n + want > max || last >= PREFETCH_MAX_ARGS) break;
            for (int i = cmd->first; i <= last; i += cmd->step)
                keyref_init(&keys[(*n)++], c->db, base + off[i], len[i]);
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
    c->wk = keys;
    c->wk_n = n;
    c->wk_i = 0;
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
        c->wk = keys + first;
        c->wk_n = n - first;
        c->wk_i = 0;
    }
    if (n > 1) db_prefetch(keys, n, 0);
}

int client_process_input(struct client *c) {
    while (c->qpos < c->qlen) {
        if (client_is_waiting(c) ||
            (c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_READ_STOPPED)))
            break;
        /* Allocated bytes, not just unsent ones: every deferred header
         * starts a new block, so tiny replies can hold 16 KB each. */
        if (c->out.alloc > CLIENT_BACKPRESSURE_BYTES) {
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
            reply_error(c, msg);
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
            if (c->qpos < c->warm_to) c->flags |= CLIENT_KEYS_WARM;
            int st = dispatch_command(c);
            c->flags &= ~CLIENT_KEYS_WARM;
            if (st == DISPATCH_PAUSED) {
                if (!(c->flags & CLIENT_PAUSED)) {
                    c->flags |= CLIENT_PAUSED;
                    c->next_paused = c->w->paused;
                    c->w->paused = c;
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
    c->wk_n = c->wk_i = 0;
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
        c->w->now_ms = hk_mstime();
        if (client_resume(c) < 0) client_close(c);
    }
}
