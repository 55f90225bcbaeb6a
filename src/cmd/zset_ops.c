/* zset_ops.c - the multi-key sorted set commands: ZUNION, ZINTER, ZDIFF,
 * their STORE forms, ZINTERCARD, and ZMPOP.
 *
 * Inputs may be sorted sets or plain sets (members of a set score 1), as in
 * Redis; a plain set is copied into a temporary skiplist here (read with
 * setv_foreach, src/types/set.h). The algebra itself is
 * zs_setop/zs_intercard (src/types/zset.h); the result is then replied or
 * stored (zs_store_result picks the encoding from the result's size). The
 * single-key commands are in zset.c. */
#include "../core/alloc.h"
#include "../core/util.h"
#include "../types/set.h"
#include "../types/zset.h"
#include "args.h"
#include "cmds.h"
#include "cmdutil.h"
#include "zset.h"

#include <limits.h>
#include <string.h>

/* ---- sources ---- */

/* The inputs of one command, in key order: what the algebra reads, and the
 * temporary skiplists made of plain sets, freed after it. */
struct zsrcs {
    struct zs_input *in;
    struct zsl **tmp;
    int n;
};

static void set_member_to_zsl(const char *s, size_t len, void *ctx) { zsl_insert(ctx, 1.0, s, len); }

/* A plain set input as a temporary skiplist, every member scoring 1. */
static struct zsl *set_to_zsl(const struct kv *e) {
    struct zsl *z = zsl_new();
    struct setv o = setv_of(e);
    setv_foreach(&o, set_member_to_zsl, z);
    return z;
}

static void src_release(struct zsrcs *s, int n) {
    for (int i = 0; i < n; i++)
        if (s->tmp[i]) zsl_free(s->tmp[i]);
}

/* Read the n inputs starting at argv[first]: WRONGTYPE (reply sent,
 * returns 0, nothing left to release) unless every present key is a zset
 * or a set. */
static int gather(struct cmd_ctx *c, int first, struct zsrcs *s) {
    for (int i = 0; i < s->n; i++) {
        struct keyref k;
        key_of(c, first + i, &k);
        struct kv *e = lookup_read(c, &k);
        s->tmp[i] = NULL;
        if (!e) {
            zs_input_none(&s->in[i]);
        } else if (kv_type(e) == OBJ_ZSET) {
            zs_input_entry(&s->in[i], e);
        } else if (kv_type(e) == OBJ_SET) {
            s->tmp[i] = set_to_zsl(e);
            zs_input_zsl(&s->in[i], s->tmp[i]);
        } else {
            src_release(s, i);
            reply_error(c, ERR_WRONGTYPE);
            return 0;
        }
    }
    return 1;
}

/* ZUNION/ZINTER/ZDIFF[STORE] and ZINTERCARD. ni: argv index of numkeys;
 * store: destination at argv[1]; card: ZINTERCARD. */
static void zsetop_generic(struct cmd_ctx *c, int ni, int store, int op, int card) {
    long long numkeys;
    if (!hk_str2ll(c->argv[ni].ptr, c->argv[ni].len, &numkeys)) {
        reply_error(c, ERR_NOT_INT);
        return;
    }
    if (numkeys < 1) {
        reply_errorf(c, "ERR at least 1 input key is needed for '%s' command", c->cmd->fullname);
        return;
    }
    if (numkeys > c->argc - ni - 1) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    int n = (int)numkeys, first = ni + 1;
    struct zs_input in_stack[8];
    struct zsl *tmp_stack[8];
    struct zsrcs src = {in_stack, tmp_stack, n};
    if (n > 8) {
        src.in = hk_malloc((size_t)n * sizeof(*src.in));
        src.tmp = hk_malloc((size_t)n * sizeof(*src.tmp));
    }
    /* Redis checks the inputs' types before it reads the options. */
    if (!gather(c, first, &src)) goto out;
    int agg = ZS_AGG_SUM, withscores = 0;
    long long limit = 0;
    struct argcur a;
    ac_init(&a, c, first + n);
    while (ac_more(&a)) {
        if (op != ZS_DIFF && !card && ac_is_with(&a, "WEIGHTS", n)) {
            for (int i = 0; i < n; i++) ac_double(&a, &src.in[i].weight, HK_ERR_WEIGHT_FLOAT);
        } else if (op != ZS_DIFF && !card && ac_is_with(&a, "AGGREGATE", 1)) {
            if (ac_is(&a, "SUM"))
                agg = ZS_AGG_SUM;
            else if (ac_is(&a, "MIN"))
                agg = ZS_AGG_MIN;
            else if (ac_is(&a, "MAX"))
                agg = ZS_AGG_MAX;
            else
                ac_fail(&a, HK_ERR_SYNTAX);
        } else if (!store && !card && ac_is(&a, "WITHSCORES")) {
            withscores = 1;
        } else if (card && ac_is_with(&a, "LIMIT", 1)) {
            ac_ll_in(&a, 0, LLONG_MAX, &limit, HK_ERR_LIMIT_NEGATIVE);
        } else {
            ac_fail(&a, HK_ERR_SYNTAX);
        }
    }
    if (!ac_ok(&a)) goto release;
    if (card) {
        reply_int(c, zs_intercard(src.in, n, limit));
        goto release;
    }
    struct zsl *res = zs_setop(src.in, n, op, agg);
    long long count = (long long)res->length;
    if (store) {
        struct keyref dk;
        key_of(c, 1, &dk);
        zs_store_result(c, &dk, res,
                        op == ZS_UNION ? KEV_ZUNIONSTORE : op == ZS_INTER ? KEV_ZINTERSTORE : KEV_ZDIFFSTORE);
        reply_int(c, count);
    } else {
        reply_array(c, withscores && c->resp < 3 ? count * 2 : count);
        for (struct zsl_node *node = res->header->level[0].forward; node; node = node->level[0].forward) {
            if (withscores && c->resp >= 3) reply_array(c, 2);
            reply_bulk(c, zsl_ele(node), node->elen);
            if (withscores) reply_double(c, node->score);
        }
        zsl_free(res);
    }
release:
    src_release(&src, n);
out:
    if (src.in != in_stack) {
        hk_free(src.in);
        hk_free(src.tmp);
    }
}

void cmd_zunion(struct cmd_ctx *c) { zsetop_generic(c, 1, 0, ZS_UNION, 0); }
void cmd_zinter(struct cmd_ctx *c) { zsetop_generic(c, 1, 0, ZS_INTER, 0); }
void cmd_zdiff(struct cmd_ctx *c) { zsetop_generic(c, 1, 0, ZS_DIFF, 0); }
void cmd_zunionstore(struct cmd_ctx *c) { zsetop_generic(c, 2, 1, ZS_UNION, 0); }
void cmd_zinterstore(struct cmd_ctx *c) { zsetop_generic(c, 2, 1, ZS_INTER, 0); }
void cmd_zdiffstore(struct cmd_ctx *c) { zsetop_generic(c, 2, 1, ZS_DIFF, 0); }
void cmd_zintercard(struct cmd_ctx *c) { zsetop_generic(c, 1, 0, ZS_INTER, 1); }

/* ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]: pops from the first
 * non-empty key; a missing everything replies a null array. */
void cmd_zmpop(struct cmd_ctx *c) {
    long long numkeys, count;
    int first, max;
    if (!parse_mpop(c, 1, "MIN", "MAX", &numkeys, &first, &max, &count)) return;
    for (int i = 0; i < numkeys; i++) {
        struct keyref k;
        key_of(c, first + i, &k);
        struct kv *e = lookup_write(c, &k);
        if (!e) continue;
        if (!check_type(c, e, OBJ_ZSET)) return;
        zpop_reply(c, &k, e, max, count, 1, 1);
        return;
    }
    reply_null_array(c);
}
