/* zset_ops.c - the multi-key sorted set commands: ZUNION, ZINTER, ZDIFF,
 * their STORE forms, ZINTERCARD, and ZMPOP, plus the numkeys key finders
 * dispatch uses to lock their keys.
 *
 * Inputs may be sorted sets or plain sets (members of a set score 1), as in
 * Redis. Results are built in a temporary skiplist and then replied or
 * stored (zs_store_result picks the encoding from the result's size). The
 * single-key commands and the encoding helpers are in zset.c. */
#include "../core/alloc.h"
#include "../core/util.h"
#include "cmds.h"
#include "cmdutil.h"
#include "setval.h"
#include "zset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- sources ---- */

/* One input: a zset (either encoding) or a plain set copied into a
 * temporary skiplist with scores of 1. */
struct zsrc {
    int enc; /* ENC_LISTPACK or ENC_SKIPLIST; -1 when the key is missing */
    void *ptr;
    unsigned long len;
    int owned;
    double weight;
};

static void set_member_to_zsl(const char *s, size_t len, void *ctx) { zsl_insert(ctx, 1.0, s, len); }

/* A plain set input as a temporary skiplist, every member scoring 1. */
static struct zsl *set_to_zsl(const struct kv *e) {
    struct zsl *z = zsl_new();
    set_value_foreach(e, set_member_to_zsl, z);
    return z;
}

static void src_release(struct zsrc *s, int n) {
    for (int i = 0; i < n; i++)
        if (s[i].owned) zsl_free(s[i].ptr);
}

static int src_score(const struct zsrc *s, const char *ele, size_t len, double *out) {
    if (s->enc == ENC_LISTPACK) {
        lpack *lp = s->ptr;
        size_t first = lp_first(lp);
        if (first == LP_NONE) return 0;
        size_t p = lp_find(lp, first, ele, len, 1);
        if (p == LP_NONE) return 0;
        *out = zlp_score_at(lp, lp_next(lp, p));
        return 1;
    }
    if (s->enc != ENC_SKIPLIST) return 0;
    struct zsl_node *n = zsl_find(s->ptr, ele, len);
    if (!n) return 0;
    *out = n->score;
    return 1;
}

static void src_iter(const struct zsrc *s, struct zit *it) {
    memset(it, 0, sizeof(*it));
    it->enc = s->enc;
    it->pos = LP_NONE;
    if (s->enc == ENC_LISTPACK) {
        it->lp = s->ptr;
        it->pos = lp_first(it->lp);
    } else if (s->enc == ENC_SKIPLIST) {
        it->z = s->ptr;
        it->n = it->z->header->level[0].forward;
    } else {
        it->enc = ENC_SKIPLIST; /* missing key: an empty walk */
    }
}

/* Read the numkeys inputs starting at argv[first]: WRONGTYPE (reply sent,
 * returns 0) unless every present key is a zset or a set. */
static int gather(struct cmd_ctx *c, int first, int n, struct zsrc *out) {
    for (int i = 0; i < n; i++) {
        struct keyref k;
        key_of(c, first + i, &k);
        struct kv *e = lookup_read(c, &k);
        out[i] = (struct zsrc){.enc = -1, .weight = 1.0};
        if (!e) continue;
        if (kv_type(e) == OBJ_ZSET) {
            out[i].enc = kv_enc(e);
            out[i].ptr = kv_ptr(e);
            out[i].len = zs_len(e);
        } else if (kv_type(e) == OBJ_SET) {
            struct zsl *z = set_to_zsl(e);
            out[i].enc = ENC_SKIPLIST;
            out[i].ptr = z;
            out[i].len = z->length;
            out[i].owned = 1;
        } else {
            src_release(out, i);
            reply_error(c, ERR_WRONGTYPE);
            return 0;
        }
    }
    return 1;
}

enum { AGG_SUM, AGG_MIN, AGG_MAX };
enum { OP_UNION, OP_INTER, OP_DIFF };

static void aggregate(double *target, double v, int agg) {
    if (agg == AGG_SUM) {
        *target += v;
        if (isnan(*target)) *target = 0.0; /* inf + -inf */
    } else if (agg == AGG_MIN) {
        if (v < *target) *target = v;
    } else if (v > *target) {
        *target = v;
    }
}

static int cmp_src_len(const void *a, const void *b) {
    const struct zsrc *x = a, *y = b;
    return x->len < y->len ? -1 : x->len > y->len;
}

static double weighted(double score, double w) {
    double v = score * w;
    return isnan(v) ? 0.0 : v;
}

/* The result of op over srcs (n of them) as a new skiplist; for
 * ZINTERCARD (card) only counts, stopping at limit (0 = no limit). */
static struct zsl *compute(struct zsrc *src, int n, int op, int agg, int card, long long limit, long long *count) {
    struct zsl *dst = card ? NULL : zsl_new();
    struct zit it;
    const char *m;
    size_t l;
    double sc;
    *count = 0;
    if (op == OP_UNION) {
        /* Smallest first, as Redis: the visiting order decides which of
         * 0 and -0 MIN/MAX keeps when weights produce both. */
        qsort(src, (size_t)n, sizeof(*src), cmp_src_len);
        for (int i = 0; i < n; i++) {
            for (src_iter(&src[i], &it); zit_valid(&it); zit_next(&it)) {
                zit_get(&it, &m, &l, &sc);
                double v = weighted(sc, src[i].weight);
                struct zsl_node *node = zsl_find(dst, m, l);
                if (!node) {
                    zsl_insert(dst, v, m, l);
                    continue;
                }
                double t = node->score;
                aggregate(&t, v, agg);
                /* -0 + 0 is 0: a sign change alone must be stored too. */
                if (t != node->score || signbit(t) != signbit(node->score))
                    zsl_update_score(dst, node, t);
            }
        }
    } else if (op == OP_INTER) {
        for (int i = 0; i < n; i++)
            if (src[i].enc < 0 || src[i].len == 0) goto done;
        /* Smallest first: fewer probes into the others. */
        qsort(src, (size_t)n, sizeof(*src), cmp_src_len);
        for (src_iter(&src[0], &it); zit_valid(&it); zit_next(&it)) {
            zit_get(&it, &m, &l, &sc);
            double t = weighted(sc, src[0].weight);
            int j;
            for (j = 1; j < n; j++) {
                double o;
                if (!src_score(&src[j], m, l, &o)) break;
                /* Only the first input's product is NaN-normalised (as in
                 * Redis): a later inf*0 NaN makes SUM 0 and is ignored by
                 * MIN/MAX, so it is passed on unchanged. */
                aggregate(&t, o * src[j].weight, agg);
            }
            if (j < n) continue;
            (*count)++;
            if (card) {
                if (limit && *count >= limit) break;
                continue;
            }
            zsl_insert(dst, t, m, l);
        }
    } else {
        if (src[0].enc < 0) goto done;
        for (src_iter(&src[0], &it); zit_valid(&it); zit_next(&it)) {
            zit_get(&it, &m, &l, &sc);
            int j;
            double o;
            for (j = 1; j < n; j++)
                if (src_score(&src[j], m, l, &o)) break;
            if (j == n) zsl_insert(dst, sc, m, l);
        }
    }
done:
    if (dst) *count = (long long)dst->length;
    return dst;
}

/* ZUNION/ZINTER/ZDIFF[STORE] and ZINTERCARD. ni: argv index of numkeys;
 * store: destination at argv[1]. */
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
    struct zsrc stack[8];
    struct zsrc *src = n <= 8 ? stack : hk_malloc((size_t)n * sizeof(*src));
    if (!gather(c, first, n, src)) goto out;
    int agg = AGG_SUM, withscores = 0;
    long long limit = 0;
    for (int j = first + n; j < c->argc;) {
        int left = c->argc - j;
        const hk_slice *a = &c->argv[j];
        if (op != OP_DIFF && !card && left >= n + 1 && arg_is(a, "weights")) {
            for (int i = 0; i < n; i++) {
                const hk_slice *w = &c->argv[j + 1 + i];
                if (!hk_str2d(w->ptr, w->len, &src[i].weight) || isnan(src[i].weight)) {
                    reply_error(c, "ERR weight value is not a float");
                    goto release;
                }
            }
            j += n + 1;
        } else if (op != OP_DIFF && !card && left >= 2 && arg_is(a, "aggregate")) {
            const hk_slice *v = &c->argv[j + 1];
            if (arg_is(v, "sum"))
                agg = AGG_SUM;
            else if (arg_is(v, "min"))
                agg = AGG_MIN;
            else if (arg_is(v, "max"))
                agg = AGG_MAX;
            else {
                reply_error(c, ERR_SYNTAX);
                goto release;
            }
            j += 2;
        } else if (!store && !card && arg_is(a, "withscores")) {
            withscores = 1;
            j++;
        } else if (card && left >= 2 && arg_is(a, "limit")) {
            if (!hk_str2ll(c->argv[j + 1].ptr, c->argv[j + 1].len, &limit) || limit < 0) {
                reply_error(c, "ERR LIMIT can't be negative");
                goto release;
            }
            j += 2;
        } else {
            reply_error(c, ERR_SYNTAX);
            goto release;
        }
    }
    long long count;
    struct zsl *res = compute(src, n, op, agg, card, limit, &count);
    if (card) {
        reply_int(c, count);
    } else if (store) {
        struct keyref dk;
        key_of(c, 1, &dk);
        zs_store_result(c, &dk, res,
                        op == OP_UNION ? KEV_ZUNIONSTORE : op == OP_INTER ? KEV_ZINTERSTORE : KEV_ZDIFFSTORE);
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
    src_release(src, n);
out:
    if (src != stack) hk_free(src);
}

void cmd_zunion(struct cmd_ctx *c) { zsetop_generic(c, 1, 0, OP_UNION, 0); }
void cmd_zinter(struct cmd_ctx *c) { zsetop_generic(c, 1, 0, OP_INTER, 0); }
void cmd_zdiff(struct cmd_ctx *c) { zsetop_generic(c, 1, 0, OP_DIFF, 0); }
void cmd_zunionstore(struct cmd_ctx *c) { zsetop_generic(c, 2, 1, OP_UNION, 0); }
void cmd_zinterstore(struct cmd_ctx *c) { zsetop_generic(c, 2, 1, OP_INTER, 0); }
void cmd_zdiffstore(struct cmd_ctx *c) { zsetop_generic(c, 2, 1, OP_DIFF, 0); }
void cmd_zintercard(struct cmd_ctx *c) { zsetop_generic(c, 1, 0, OP_INTER, 1); }

/* ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]: pops from the first
 * non-empty key; a missing everything replies a null array. */
void cmd_zmpop(struct cmd_ctx *c) {
    long long numkeys;
    if (!hk_str2ll(c->argv[1].ptr, c->argv[1].len, &numkeys) || numkeys < 1) {
        reply_error(c, "ERR numkeys should be greater than 0");
        return;
    }
    if (numkeys > c->argc - 2 - 1) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    int wi = 2 + (int)numkeys, max;
    if (arg_is(&c->argv[wi], "min"))
        max = 0;
    else if (arg_is(&c->argv[wi], "max"))
        max = 1;
    else {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    long long count = -1;
    for (int j = wi + 1; j < c->argc; j++) {
        if (count == -1 && arg_is(&c->argv[j], "count") && j + 1 < c->argc) {
            j++;
            if (!hk_str2ll(c->argv[j].ptr, c->argv[j].len, &count) || count < 1) {
                reply_error(c, "ERR count should be greater than 0");
                return;
            }
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (count == -1) count = 1;
    for (int i = 0; i < numkeys; i++) {
        struct keyref k;
        key_of(c, 2 + i, &k);
        struct kv *e = lookup_write(c, &k);
        if (!e) continue;
        if (!check_type(c, e, OBJ_ZSET)) return;
        zpop_reply(c, &k, e, max, count, 1, 1);
        return;
    }
    reply_null_array(c);
}
