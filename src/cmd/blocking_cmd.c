/* blocking_cmd.c - the blocking commands (BLPOP, BRPOP, BLMOVE,
 * BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP) and CLIENT UNBLOCK.
 *
 * Each handler validates its arguments as Redis does, then looks for a key
 * it may serve from (block_may_serve: first come, first served); when it
 * finds one it runs the non-blocking command (LPOP, LMOVE, LMPOP, ...) on
 * that key, otherwise it blocks (block_client). The same handler runs
 * again, in retry mode, when a watched key is written; then it skips keys
 * of the wrong type instead of failing. The registry and the wake-up
 * machinery are in src/server/blocking.c, not here. */
#include "../core/alloc.h"
#include "../server/blocking.h"
#include "../server/creply.h"
#include "cmds.h"
#include "cmdutil.h"
#include "../types/zset.h"
#include "zset.h"

#include <string.h>

/* Serve through the non-blocking command `name` with argv[0..argc)
 * (argv[0] is set to name it): it runs inside this command's locks and
 * its argv is what propagates, so a served BLPOP replays as the LPOP it
 * did. */
static void run_as(struct cmd_ctx *c, const char *name, hk_slice *argv, int argc) {
    argv[0].ptr = name;
    argv[0].len = strlen(name);
    exec_nested(c, cmd_lookup(name, argv[0].len), argv, argc);
}

static const hk_slice one_slice = {"1", 1};

/* Look up key argv[i] for a pop of `type`. Returns the entry when it can
 * be served now; NULL to go on with the next key; sets *err when a
 * WRONGTYPE error was replied (first run only: a re-run skips the key). */
static struct kv *servable(struct cmd_ctx *c, int i, int type, int kind, struct keyref *k, int *err) {
    key_of(c, i, k);
    struct kv *e = lookup_write(c, k);
    if (!e) return NULL;
    if (kv_type(e) != type) {
        if (!block_is_retry(c)) {
            reply_error(c, ERR_WRONGTYPE);
            *err = 1;
        }
        return NULL;
    }
    return block_may_serve(c, k, kind) ? e : NULL;
}

/* ---- lists --------------------------------------------------------------- */

static void bpop_generic(struct cmd_ctx *c, int head) {
    long long deadline;
    if (!parse_timeout(c, c->argc - 1, 0, c->now_ms, &deadline)) return;
    int err = 0;
    for (int i = 1; i < c->argc - 1; i++) {
        struct keyref k;
        if (!servable(c, i, OBJ_LIST, BK_LIST, &k, &err)) {
            if (err) return;
            continue;
        }
        /* The key is one of this command's, so its shard is held and the
         * nested pop cannot be refused after the header is written. */
        reply_array(c, 2);
        reply_bulk(c, k.key, k.klen);
        hk_slice argv[2] = {c->argv[0], c->argv[i]};
        run_as(c, head ? "lpop" : "rpop", argv, 2);
        return;
    }
    int stack[64], *idx = c->argc - 2 > 64 ? hk_malloc((size_t)(c->argc - 2) * sizeof(int)) : stack;
    for (int i = 1; i < c->argc - 1; i++) idx[i - 1] = i;
    block_client(c, idx, c->argc - 2, BK_LIST, deadline, 0);
    if (idx != stack) hk_free(idx);
}

void cmd_blpop(struct cmd_ctx *c) { bpop_generic(c, 1); }
void cmd_brpop(struct cmd_ctx *c) { bpop_generic(c, 0); }

static int side_ok(const hk_slice *a) { return arg_is(a, "left") || arg_is(a, "right"); }

/* BLMOVE src dst LEFT|RIGHT LEFT|RIGHT timeout and BRPOPLPUSH src dst
 * timeout: serve through LMOVE / RPOPLPUSH, which check the destination. */
static void bmove_generic(struct cmd_ctx *c, int lmove) {
    if (lmove && (!side_ok(&c->argv[3]) || !side_ok(&c->argv[4]))) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    long long deadline;
    if (!parse_timeout(c, c->argc - 1, 0, c->now_ms, &deadline)) return;
    struct keyref k;
    int err = 0;
    if (servable(c, 1, OBJ_LIST, BK_LIST, &k, &err)) {
        if (lmove) {
            hk_slice argv[5] = {c->argv[0], c->argv[1], c->argv[2], c->argv[3], c->argv[4]};
            run_as(c, "lmove", argv, 5);
        } else {
            hk_slice argv[3] = {c->argv[0], c->argv[1], c->argv[2]};
            run_as(c, "rpoplpush", argv, 3);
        }
        return;
    }
    if (err) return;
    int idx = 1;
    block_client(c, &idx, 1, BK_LIST, deadline, 1);
}

void cmd_blmove(struct cmd_ctx *c) { bmove_generic(c, 1); }
void cmd_brpoplpush(struct cmd_ctx *c) { bmove_generic(c, 0); }

static void block_on_range(struct cmd_ctx *c, int first, long long n, int kind, long long deadline) {
    int stack[64] = {0}, *idx = n > 64 ? hk_malloc((size_t)n * sizeof(int)) : stack;
    for (int i = 0; i < n; i++) idx[i] = first + i;
    block_client(c, idx, (int)n, kind, deadline, 0);
    if (idx != stack) hk_free(idx);
}

/* BLMPOP timeout numkeys key... LEFT|RIGHT [COUNT count] */
void cmd_blmpop(struct cmd_ctx *c) {
    long long deadline, numkeys, count;
    int right, first;
    if (!parse_timeout(c, 1, 0, c->now_ms, &deadline)) return;
    if (!parse_mpop(c, 2, "left", "right", &numkeys, &first, &right, &count)) return;
    int err = 0;
    for (int i = 0; i < numkeys; i++) {
        struct keyref k;
        if (!servable(c, first + i, OBJ_LIST, BK_LIST, &k, &err)) {
            if (err) return;
            continue;
        }
        char nb[HK_LONG_STR_SIZE];
        hk_slice argv[6] = {{NULL, 0}, one_slice, c->argv[first + i], c->argv[first + numkeys], {"count", 5}, {nb, 0}};
        argv[5].len = (size_t)hk_ll2str(nb, count);
        run_as(c, "lmpop", argv, 6);
        return;
    }
    block_on_range(c, first, numkeys, BK_LIST, deadline);
}

/* ---- sorted sets ------------------------------------------------------- */

/* BZPOPMIN/BZPOPMAX key... timeout: reply [key, member, score]. */
static void bzpop_generic(struct cmd_ctx *c, int max) {
    long long deadline;
    if (!parse_timeout(c, c->argc - 1, 0, c->now_ms, &deadline)) return;
    int err = 0;
    for (int i = 1; i < c->argc - 1; i++) {
        struct keyref k;
        struct kv *e = servable(c, i, OBJ_ZSET, BK_ZSET, &k, &err);
        if (!e) {
            if (err) return;
            continue;
        }
        unsigned long len = zs_len(e);
        struct zit it;
        zit_init(&it, e);
        zit_seek(&it, max ? len - 1 : 0);
        const char *m;
        size_t l;
        double score;
        zit_get(&it, &m, &l, &score);
        reply_array(c, 3);
        reply_bulk(c, k.key, k.klen);
        reply_bulk(c, m, l);
        reply_double(c, score);
        /* One change, whether or not the key went with the member. */
        unsigned long long mark = dirty_mark(c);
        db_written(&k, max ? KEV_ZPOPMAX : KEV_ZPOPMIN);
        zs_delete_ranks(e, max ? len - 1 : 0, 1);
        if (zs_len(e) == 0) db_delete(&k, c->now_ms, KEV_DEL);
        dirty_settle(c, mark, 1);
        prop_cmd(c, max ? "ZPOPMAX" : "ZPOPMIN", 1, &c->argv[i]);
        return;
    }
    int stack[64], *idx = c->argc - 2 > 64 ? hk_malloc((size_t)(c->argc - 2) * sizeof(int)) : stack;
    for (int i = 1; i < c->argc - 1; i++) idx[i - 1] = i;
    block_client(c, idx, c->argc - 2, BK_ZSET, deadline, 0);
    if (idx != stack) hk_free(idx);
}

void cmd_bzpopmin(struct cmd_ctx *c) { bzpop_generic(c, 0); }
void cmd_bzpopmax(struct cmd_ctx *c) { bzpop_generic(c, 1); }

/* BZMPOP timeout numkeys key... MIN|MAX [COUNT count] */
void cmd_bzmpop(struct cmd_ctx *c) {
    long long deadline, numkeys, count;
    int max, first;
    if (!parse_timeout(c, 1, 0, c->now_ms, &deadline)) return;
    if (!parse_mpop(c, 2, "min", "max", &numkeys, &first, &max, &count)) return;
    int err = 0;
    for (int i = 0; i < numkeys; i++) {
        struct keyref k;
        struct kv *e = servable(c, first + i, OBJ_ZSET, BK_ZSET, &k, &err);
        if (!e) {
            if (err) return;
            continue;
        }
        zpop_reply(c, &k, e, max, count, 1, 1);
        return;
    }
    block_on_range(c, first, numkeys, BK_ZSET, deadline);
}

/* ---- CLIENT UNBLOCK ------------------------------------------------------ */

struct unblock_req {
    uint64_t origin, target;
    int error, muted;
    _Atomic int found;
};

static void unblock_each(struct worker *w, void *arg) {
    struct unblock_req *r = arg;
    if (block_unblock_id(w, r->target, r->error)) atomic_store(&r->found, 1);
}

static void unblock_done(struct worker *w, void *arg) {
    struct gather *g = arg;
    struct unblock_req *r = g->arg;
    struct client *c = worker_find_client(w, r->origin);
    if (c) {
        if (!r->muted) reply_int(&c->ctx, atomic_load(&r->found));
        c->flags &= ~CLIENT_WAIT_GATHER;
        if (client_resume(c) < 0) client_close(c);
    }
    hk_free(r);
    hk_free(g);
}

/* CLIENT UNBLOCK id [TIMEOUT|ERROR]: the target may live on any worker, so
 * every worker is asked (like CLIENT KILL) and the caller waits. */
void cmd_client_unblock(struct cmd_ctx *c) {
    if (c->argc > 4) {
        reply_subcommand_error(c);
        return;
    }
    /* The reason is checked before the id, as Redis checks them. */
    int error = 0;
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "error")) error = 1;
        else if (!arg_is(&c->argv[3], "timeout")) {
            reply_error(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    }
    long long id;
    if (!hk_str2ll(c->argv[2].ptr, c->argv[2].len, &id)) {
        reply_error(c, ERR_NOT_INT);
        return;
    }
    struct unblock_req *r = hk_calloc(1, sizeof(*r));
    r->origin = c->cl->id;
    r->target = (uint64_t)id;
    r->error = error;
    r->muted = reply_muted(c);
    c->cl->flags |= CLIENT_WAIT_GATHER;
    worker_broadcast(unblock_each, unblock_done, r);
}
