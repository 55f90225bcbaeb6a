/* zset.c - sorted set commands (ZADD, ZRANGE and friends, ZPOP, ZSCAN...).
 *
 * A sorted set is held in one of two encodings. Small sets are a listpack
 * of member,score pairs kept sorted by score then member (scores stored in
 * their shortest decimal form, so integers pack small). Past
 * zset-max-listpack-entries members, or when a member is longer than
 * zset-max-listpack-value bytes, the set converts to a skiplist with a
 * member hash table (core/skiplist.h). Store commands (ZRANGESTORE) build
 * their result and pick the encoding from its final size, so a set can also
 * come back to a listpack. Both encodings are read through a small iterator
 * here so each command is written once. Blocking variants are not here.
 * Handlers run with their keys' shards locked by dispatch. */
#include "zset.h"
#include "../core/alloc.h"
#include "../core/listpack.h"
#include "../core/skiplist.h"
#include "../core/util.h"
#include "../server/config.h"
#include "cmdutil.h"
#include "../types/digest.h"
#include "../types/types.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_MINMAX_FLOAT "ERR min or max is not a float"
#define ERR_MINMAX_LEX "ERR min or max not valid string range item"

/* ---- listpack encoding helpers ---- */

double zlp_score_at(const lpack *lp, size_t pos) {
    struct lp_val v;
    lp_peek(lp, pos, &v);
    if (v.is_int) return (double)v.v;
    double d = 0;
    hk_str2d(v.s, v.len, &d);
    return d;
}

/* Position of member ele (LP_NONE when absent). */
static size_t zlp_find(const lpack *lp, const char *ele, size_t len) {
    size_t first = lp_first(lp);
    if (first == LP_NONE) return LP_NONE;
    return lp_find(lp, first, ele, len, 1);
}

/* Insert member/score at its sorted place. */
static lpack *zlp_insert(lpack *lp, const char *ele, size_t len, double score) {
    size_t pos = lp_first(lp);
    struct lp_val v;
    while (pos != LP_NONE) {
        size_t sp = lp_next(lp, pos);
        double s = zlp_score_at(lp, sp);
        if (s > score) break;
        if (s == score) {
            lp_get(lp, pos, &v);
            if (zsl_cmp_ele(v.s, v.len, ele, len) > 0) break;
        }
        pos = lp_next(lp, sp);
    }
    char buf[64];
    /* A listpack keeps no negative zero (Redis stores it as 0). */
    int n = hk_d2str(buf, sizeof(buf), score == 0 ? 0.0 : score);
    size_t np;
    lp = lp_insert(lp, pos, ele, len, &np);
    size_t after = lp_next(lp, np);
    lp = lp_insert(lp, after, buf, (size_t)n, NULL);
    return lp;
}

static lpack *zlp_delete(lpack *lp, size_t pos) {
    size_t next;
    lp = lp_delete(lp, pos, &next);
    return lp_delete(lp, next, NULL);
}

/* ---- the value as a whole ---- */

unsigned long zs_len(const struct kv *e) {
    if (kv_enc(e) == ENC_LISTPACK) return lp_count(kv_ptr(e)) / 2;
    return ((struct zsl *)kv_ptr(e))->length;
}

static void zs_to_skiplist(struct kv *e) {
    lpack *lp = kv_ptr(e);
    struct zsl *z = zsl_new();
    struct lp_val v;
    for (size_t p = lp_first(lp); p != LP_NONE;) {
        size_t sp = lp_next(lp, p);
        lp_get(lp, p, &v);
        zsl_insert(z, zlp_score_at(lp, sp), v.s, v.len);
        p = lp_next(lp, sp);
    }
    lp_free(lp);
    kv_set_ptr(e, z);
    kv_set_enc(e, ENC_SKIPLIST);
}

int zs_score(struct kv *e, const char *ele, size_t len, double *out) {
    if (kv_enc(e) == ENC_LISTPACK) {
        lpack *lp = kv_ptr(e);
        size_t p = zlp_find(lp, ele, len);
        if (p == LP_NONE) return 0;
        *out = zlp_score_at(lp, lp_next(lp, p));
        return 1;
    }
    struct zsl_node *n = zsl_find(kv_ptr(e), ele, len);
    if (!n) return 0;
    *out = n->score;
    return 1;
}

/* ZADD's core. Returns 0 when the result would be NaN (nothing changed),
 * 1 otherwise with *out a ZADD_OUT_* mask and *newscore set when the
 * member was added or updated (or kept, with INCR). May convert e. */
int zs_add(struct kv *e, double score, const char *ele, size_t len, int flags, int *out, double *newscore) {
    int incr = flags & ZADD_INCR, nx = flags & ZADD_NX, xx = flags & ZADD_XX;
    int gt = flags & ZADD_GT, lt = flags & ZADD_LT;
    *out = 0;
    if (isnan(score)) return 0;
    double cur;
    if (zs_score(e, ele, len, &cur)) {
        if (nx) {
            *out = ZADD_NOP;
            return 1;
        }
        if (incr) {
            score += cur;
            if (isnan(score)) return 0;
        }
        if ((lt && score >= cur) || (gt && score <= cur)) {
            *out = ZADD_NOP;
            return 1;
        }
        if (newscore) *newscore = score;
        if (score != cur) {
            if (kv_enc(e) == ENC_LISTPACK) {
                lpack *lp = kv_ptr(e);
                lp = zlp_delete(lp, zlp_find(lp, ele, len));
                kv_set_ptr(e, zlp_insert(lp, ele, len, score));
            } else {
                struct zsl *z = kv_ptr(e);
                zsl_update_score(z, zsl_find(z, ele, len), score);
            }
            *out = ZADD_UPDATED;
        }
        return 1;
    }
    if (xx) {
        *out = ZADD_NOP;
        return 1;
    }
    if (kv_enc(e) == ENC_LISTPACK) {
        if (zs_len(e) + 1 > (unsigned long)TLIM(zset_max_listpack_entries) || len > (size_t)TLIM(zset_max_listpack_value))
            zs_to_skiplist(e);
        else
            kv_set_ptr(e, zlp_insert(kv_ptr(e), ele, len, score));
    }
    if (kv_enc(e) == ENC_SKIPLIST) zsl_insert(kv_ptr(e), score, ele, len);
    if (newscore) *newscore = score;
    *out = ZADD_ADDED;
    return 1;
}

int zs_add_changes(struct kv *e, double score, const char *ele, size_t len, int flags) {
    if (isnan(score)) return 0;
    double cur;
    if (!zs_score(e, ele, len, &cur)) return !(flags & ZADD_XX);
    if (flags & ZADD_NX) return 0;
    if (flags & ZADD_INCR) {
        score += cur;
        if (isnan(score)) return 0;
    }
    if (((flags & ZADD_LT) && score >= cur) || ((flags & ZADD_GT) && score <= cur)) return 0;
    return score != cur;
}

int zs_del(struct kv *e, const char *ele, size_t len) {
    if (kv_enc(e) == ENC_LISTPACK) {
        lpack *lp = kv_ptr(e);
        size_t p = zlp_find(lp, ele, len);
        if (p == LP_NONE) return 0;
        kv_set_ptr(e, zlp_delete(lp, p));
        return 1;
    }
    struct zsl *z = kv_ptr(e);
    struct zsl_node *n = zsl_find(z, ele, len);
    if (!n) return 0;
    zsl_delete_node(z, n);
    return 1;
}

/* 0-based rank of a member (from the top when rev), -1 when absent. */
static long zs_rank(struct kv *e, const char *ele, size_t len, int rev, double *score) {
    unsigned long n = zs_len(e);
    if (kv_enc(e) == ENC_LISTPACK) {
        lpack *lp = kv_ptr(e);
        long r = 0;
        for (size_t p = lp_first(lp); p != LP_NONE; r++) {
            size_t sp = lp_next(lp, p);
            if (lp_eq(lp, p, ele, len)) {
                if (score) *score = zlp_score_at(lp, sp);
                return rev ? (long)n - 1 - r : r;
            }
            p = lp_next(lp, sp);
        }
        return -1;
    }
    struct zsl *z = kv_ptr(e);
    struct zsl_node *node = zsl_find(z, ele, len);
    if (!node) return -1;
    if (score) *score = node->score;
    long r = (long)zsl_rank(z, node) - 1;
    return rev ? (long)n - 1 - r : r;
}

/* Delete count members from 0-based rank start on. */
void zs_delete_ranks(struct kv *e, unsigned long start, unsigned long count) {
    if (!count) return;
    if (kv_enc(e) == ENC_LISTPACK) {
        kv_set_ptr(e, lp_delete_range(kv_ptr(e), (long long)start * 2, count * 2));
        return;
    }
    struct zsl *z = kv_ptr(e);
    struct zsl_node *n = zsl_by_rank(z, start + 1);
    while (n && count--) {
        struct zsl_node *next = n->level[0].forward;
        zsl_delete_node(z, n);
        n = next;
    }
}

static struct kv *zs_dup(const struct kv *e, const char *key, size_t klen, long long expire) {
    void *v = kv_enc(e) == ENC_LISTPACK ? (void *)lp_dup(kv_ptr(e)) : (void *)zsl_dup(kv_ptr(e));
    return kv_new_ptr(key, klen, OBJ_ZSET, kv_enc(e), v, expire);
}

static void zs_free_value(struct kv *e) {
    if (kv_enc(e) == ENC_LISTPACK) lp_free(kv_ptr(e));
    else zsl_free(kv_ptr(e));
}

static size_t zs_usage(const struct kv *e, size_t samples) {
    (void)samples;
    if (kv_enc(e) == ENC_LISTPACK) return lp_bytes(kv_ptr(e));
    return zsl_usage(kv_ptr(e));
}

/* Each member digested with its score (printed as Redis prints it), the
 * pairs folded by xor. */
static void zs_digest(const struct kv *e, unsigned char digest[20]) {
    if (zs_len(e) == 0) return;
    struct zit it;
    zit_init(&it, (struct kv *)e);
    zit_seek(&it, 0);
    for (; zit_valid(&it); zit_next(&it)) {
        const char *m;
        size_t l;
        double sc;
        zit_get(&it, &m, &l, &sc);
        unsigned char pair[20] = {0};
        dg_mix(pair, m, l);
        dg_mix_double(pair, sc);
        dg_xor(digest, pair, 20);
    }
}

const struct type_ops zset_type_ops = {
    .name = "zset", .free = zs_free_value, .dup = zs_dup, .usage = zs_usage, .digest = zs_digest,
};

/* ---- iterator over either encoding ---- */

void zit_init(struct zit *it, struct kv *e) {
    memset(it, 0, sizeof(*it));
    it->enc = kv_enc(e);
    if (it->enc == ENC_LISTPACK)
        it->lp = kv_ptr(e);
    else
        it->z = kv_ptr(e);
    it->pos = LP_NONE;
}

int zit_valid(const struct zit *it) { return it->enc == ENC_LISTPACK ? it->pos != LP_NONE : it->n != NULL; }

/* Current member and score; the member stays valid until the next move. */
void zit_get(struct zit *it, const char **ele, size_t *len, double *score) {
    if (it->enc == ENC_LISTPACK) {
        lp_get(it->lp, it->pos, &it->v);
        *ele = it->v.s;
        *len = it->v.len;
        if (score) *score = zlp_score_at(it->lp, lp_next(it->lp, it->pos));
    } else {
        *ele = zsl_ele(it->n);
        *len = it->n->elen;
        if (score) *score = it->n->score;
    }
}

void zit_next(struct zit *it) {
    if (it->enc == ENC_LISTPACK)
        it->pos = lp_next(it->lp, lp_next(it->lp, it->pos));
    else
        it->n = it->n->level[0].forward;
}

void zit_prev(struct zit *it) {
    if (it->enc == ENC_LISTPACK) {
        size_t p = lp_prev(it->lp, it->pos);
        it->pos = p == LP_NONE ? LP_NONE : lp_prev(it->lp, p);
    } else {
        it->n = it->n->backward;
    }
}

void zit_move(struct zit *it, int rev) {
    if (rev)
        zit_prev(it);
    else
        zit_next(it);
}

/* Position at 0-based rank (from the bottom). */
void zit_seek(struct zit *it, unsigned long rank) {
    if (it->enc == ENC_LISTPACK)
        it->pos = lp_seek(it->lp, (long long)rank * 2);
    else
        it->n = zsl_by_rank(it->z, rank + 1);
}

/* Rank of the current element (for range deletions). */
static unsigned long zit_rank(struct zit *it) {
    if (it->enc == ENC_SKIPLIST) return zsl_rank(it->z, it->n) - 1;
    unsigned long r = 0;
    for (size_t p = lp_first(it->lp); p != it->pos; p = lp_next(it->lp, lp_next(it->lp, p)))
        r++;
    return r;
}

/* Position at the first element in the score range walking forward, or
 * the last one when rev. */
static void zit_score_start(struct zit *it, const struct zrange *r, int rev) {
    if (it->enc == ENC_SKIPLIST) {
        it->n = rev ? zsl_last_in_range(it->z, r) : zsl_first_in_range(it->z, r);
        return;
    }
    it->pos = LP_NONE;
    size_t head = lp_first(it->lp), tail = lp_last(it->lp);
    /* As Redis: nothing unless the last score reaches min and the first is
     * not past max. */
    if (zrange_empty(r) || head == LP_NONE || !zrange_gte_min(zlp_score_at(it->lp, tail), r) ||
        !zrange_lte_max(zlp_score_at(it->lp, lp_next(it->lp, head)), r))
        return;
    if (!rev) {
        for (size_t p = lp_first(it->lp); p != LP_NONE; p = lp_next(it->lp, lp_next(it->lp, p))) {
            double s = zlp_score_at(it->lp, lp_next(it->lp, p));
            if (!zrange_gte_min(s, r)) continue;
            if (zrange_lte_max(s, r)) it->pos = p;
            return;
        }
    } else {
        size_t sp = lp_last(it->lp);
        while (sp != LP_NONE) {
            size_t p = lp_prev(it->lp, sp);
            double s = zlp_score_at(it->lp, sp);
            if (zrange_lte_max(s, r)) {
                if (zrange_gte_min(s, r)) it->pos = p;
                return;
            }
            sp = lp_prev(it->lp, p);
        }
    }
}

static void zit_lex_start(struct zit *it, const struct zlex *r, int rev) {
    if (it->enc == ENC_SKIPLIST) {
        it->n = rev ? zsl_last_in_lex(it->z, r) : zsl_first_in_lex(it->z, r);
        return;
    }
    it->pos = LP_NONE;
    struct lp_val v;
    size_t head = lp_first(it->lp), tail = lp_last(it->lp);
    /* Members are in lex order only among equal scores, so Redis checks
     * both ends before walking; the results follow from that. */
    if (zlex_empty(r) || head == LP_NONE) return;
    lp_get(it->lp, lp_prev(it->lp, tail), &v);
    if (!zlex_gte_min(v.s, v.len, r)) return;
    lp_get(it->lp, head, &v);
    if (!zlex_lte_max(v.s, v.len, r)) return;
    if (!rev) {
        for (size_t p = lp_first(it->lp); p != LP_NONE; p = lp_next(it->lp, lp_next(it->lp, p))) {
            lp_get(it->lp, p, &v);
            if (!zlex_gte_min(v.s, v.len, r)) continue;
            if (zlex_lte_max(v.s, v.len, r)) it->pos = p;
            return;
        }
    } else {
        size_t sp = lp_last(it->lp);
        while (sp != LP_NONE) {
            size_t p = lp_prev(it->lp, sp);
            lp_get(it->lp, p, &v);
            if (zlex_lte_max(v.s, v.len, r)) {
                if (zlex_gte_min(v.s, v.len, r)) it->pos = p;
                return;
            }
            sp = lp_prev(it->lp, p);
        }
    }
}

/* ---- argument parsing ---- */

/* Range ends parse as Redis's zslParseRange does: plain strtod over the
 * whole argument (so leading spaces, hex, and even an empty string meaning
 * 0 are accepted), NaN rejected. */
static int parse_score_bound(const hk_slice *a, double *v, int *ex) {
    const char *p = a->ptr;
    size_t len = a->len;
    *ex = 0;
    if (len && p[0] == '(') {
        *ex = 1;
        p++;
        len--;
    }
    if (memchr(p, '\0', len)) return 0;
    char stack[128];
    char *tmp = len < sizeof(stack) ? stack : hk_malloc(len + 1);
    memcpy(tmp, p, len);
    tmp[len] = '\0';
    char *end;
    *v = strtod(tmp, &end);
    int ok = *end == '\0' && !isnan(*v);
    if (tmp != stack) hk_free(tmp);
    return ok;
}

int zparse_range(const hk_slice *min, const hk_slice *max, struct zrange *r) {
    return parse_score_bound(min, &r->min, &r->minex) && parse_score_bound(max, &r->max, &r->maxex);
}

static int parse_lex_bound(const hk_slice *a, const char **s, size_t *len, int *ex, int *inf) {
    *ex = 0;
    *inf = 0;
    *s = NULL;
    *len = 0;
    if (a->len == 0) return 0;
    switch (a->ptr[0]) {
    case '+':
        if (a->len != 1) return 0;
        *inf = 1;
        return 1;
    case '-':
        if (a->len != 1) return 0;
        *inf = -1;
        return 1;
    case '(': *ex = 1; /* fall through */
    case '[':
        *s = a->ptr + 1;
        *len = a->len - 1;
        return 1;
    default: return 0;
    }
}

int zparse_lex(const hk_slice *min, const hk_slice *max, struct zlex *r) {
    return parse_lex_bound(min, &r->min, &r->minlen, &r->minex, &r->mininf) &&
           parse_lex_bound(max, &r->max, &r->maxlen, &r->maxex, &r->maxinf);
}

/* The score of a reply or argument, RESP2 bulk / RESP3 double. */
static void reply_score(struct cmd_ctx *c, double d) { reply_double(c, d); }

/* Look up a zset for reading; replies WRONGTYPE and sets *bad on a type error.
 */
static struct kv *zlookup_read(struct cmd_ctx *c, int argi, struct keyref *k, int *bad) {
    return lookup_typed(c, argi, k, OBJ_ZSET, 0, bad);
}

static struct kv *zlookup_write(struct cmd_ctx *c, int argi, struct keyref *k, int *bad) {
    return lookup_typed(c, argi, k, OBJ_ZSET, 1, bad);
}

/* A new zset entry for key k, encoding chosen for an expected size,
 * stored with event ev. */
static struct kv *zs_create(struct keyref *k, unsigned long size_hint, size_t maxlen_hint, int ev) {
    struct kv *e;
    if (size_hint <= (unsigned long)TLIM(zset_max_listpack_entries) &&
        maxlen_hint <= (size_t)TLIM(zset_max_listpack_value))
        e = kv_new_ptr(k->key, k->klen, OBJ_ZSET, ENC_LISTPACK, lp_new(), -1);
    else
        e = kv_new_ptr(k->key, k->klen, OBJ_ZSET, ENC_SKIPLIST, zsl_new(), -1);
    return db_put(k, e, ev);
}

/* Delete the key when its zset became empty ("del" after the command's
 * own event). */
static void zs_delete_if_empty(struct cmd_ctx *c, struct keyref *k, struct kv *e) {
    if (zs_len(e) == 0) db_delete(k, c->now_ms, KEV_DEL);
}

/* Store a built skiplist as key k (replacing any value, reporting ev),
 * choosing the encoding from its size; an empty result deletes the key.
 * Takes z. */
void zs_store_result(struct cmd_ctx *c, struct keyref *k, struct zsl *z, int ev) {
    if (z->length == 0) {
        zsl_free(z);
        db_delete(k, c->now_ms, KEV_DEL);
        return;
    }
    int small = z->length <= (unsigned long)TLIM(zset_max_listpack_entries);
    for (struct zsl_node *n = z->header->level[0].forward; small && n; n = n->level[0].forward)
        if (n->elen > (size_t)TLIM(zset_max_listpack_value)) small = 0;
    struct kv *e;
    if (small) {
        lpack *lp = lp_new();
        char buf[64];
        for (struct zsl_node *n = z->header->level[0].forward; n; n = n->level[0].forward) {
            lp = lp_append(lp, zsl_ele(n), n->elen);
            int len = hk_d2str(buf, sizeof(buf), n->score == 0 ? 0.0 : n->score);
            lp = lp_append(lp, buf, (size_t)len);
        }
        zsl_free(z);
        e = kv_new_ptr(k->key, k->klen, OBJ_ZSET, ENC_LISTPACK, lp, -1);
    } else {
        e = kv_new_ptr(k->key, k->klen, OBJ_ZSET, ENC_SKIPLIST, z, -1);
    }
    db_put(k, e, ev);
}

/* ---- ZADD / ZINCRBY ---- */

static void zadd_generic(struct cmd_ctx *c, int flags) {
    int ch = 0, si = 2;
    while (si < c->argc) {
        const hk_slice *a = &c->argv[si];
        if (arg_is(a, "nx"))
            flags |= ZADD_NX;
        else if (arg_is(a, "xx"))
            flags |= ZADD_XX;
        else if (arg_is(a, "ch"))
            ch = 1;
        else if (arg_is(a, "incr"))
            flags |= ZADD_INCR;
        else if (arg_is(a, "gt"))
            flags |= ZADD_GT;
        else if (arg_is(a, "lt"))
            flags |= ZADD_LT;
        else
            break;
        si++;
    }
    int incr = (flags & ZADD_INCR) != 0;
    int nargs = c->argc - si;
    if (nargs == 0 || nargs % 2) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    int pairs = nargs / 2;
    if ((flags & ZADD_NX) && (flags & ZADD_XX)) {
        reply_error(c, "ERR XX and NX options at the same time are not compatible");
        return;
    }
    if (((flags & ZADD_GT) && (flags & ZADD_NX)) || ((flags & ZADD_LT) && (flags & ZADD_NX)) ||
        ((flags & ZADD_GT) && (flags & ZADD_LT))) {
        reply_error(c, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if (incr && pairs > 1) {
        reply_error(c, "ERR INCR option supports a single increment-element pair");
        return;
    }
    double stack_scores[16];
    double *scores = pairs <= 16 ? stack_scores : hk_malloc((size_t)pairs * sizeof(double));
    size_t maxlen = 0;
    for (int j = 0; j < pairs; j++) {
        const hk_slice *s = &c->argv[si + 2 * j];
        if (!hk_str2d(s->ptr, s->len, &scores[j]) || isnan(scores[j])) {
            reply_error(c, ERR_NOT_FLOAT);
            goto done;
        }
        if (c->argv[si + 2 * j + 1].len > maxlen) maxlen = c->argv[si + 2 * j + 1].len;
    }
    struct keyref k;
    int bad;
    struct kv *e = zlookup_write(c, 1, &k, &bad);
    if (bad) goto done;
    long long added = 0, updated = 0, processed = 0;
    double score = 0;
    int ev = incr ? KEV_ZINCR : KEV_ZADD, reported = 0;
    if (!e) {
        if (flags & ZADD_XX) goto reply;
        e = zs_create(&k, (unsigned long)pairs, maxlen, ev);
        reported = 1;
    }
    for (int j = 0; j < pairs; j++) {
        int out;
        double ns = scores[j];
        const hk_slice *m = &c->argv[si + 2 * j + 1];
        /* Reported before the first member that changes. */
        if (!reported && zs_add_changes(e, scores[j], m->ptr, m->len, flags)) {
            db_written(&k, ev);
            reported = 1;
        }
        if (!zs_add(e, scores[j], m->ptr, m->len, flags, &out, &ns)) {
            zs_delete_if_empty(c, &k, e);
            reply_status(c, HK_ERR_NAN_SCORE);
            goto done;
        }
        if (out & ZADD_ADDED) added++;
        if (out & ZADD_UPDATED) updated++;
        if (!(out & ZADD_NOP)) processed++;
        score = ns;
    }
    /* A key created for members that were all skipped would be empty. */
    zs_delete_if_empty(c, &k, e);
reply:
    if (incr) {
        if (processed)
            reply_score(c, score);
        else
            reply_null(c);
    } else {
        reply_int(c, ch ? added + updated : added);
    }
done:
    if (scores != stack_scores) hk_free(scores);
}

void cmd_zadd(struct cmd_ctx *c) { zadd_generic(c, 0); }
void cmd_zincrby(struct cmd_ctx *c) { zadd_generic(c, ZADD_INCR); }

/* ---- simple reads and deletes ---- */

/* Members from first to last by rank, computed as Redis does (the length
 * less what lies before first and after last), so a lex range over mixed
 * scores counts the same way. */
static long long zsl_count_between(const struct zsl *z, const struct zsl_node *first, const struct zsl_node *last) {
    long long len = (long long)z->length;
    long long n = len - ((long long)zsl_rank(z, first) - 1);
    if (last) n -= len - (long long)zsl_rank(z, last);
    return n;
}

void cmd_zscore(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct kv *e = zlookup_read(c, 1, &k, &bad);
    if (bad) return;
    double s;
    if (e && zs_score(e, c->argv[2].ptr, c->argv[2].len, &s))
        reply_score(c, s);
    else
        reply_null(c);
}

void cmd_zmscore(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct kv *e = zlookup_read(c, 1, &k, &bad);
    if (bad) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        double s;
        if (e && zs_score(e, c->argv[i].ptr, c->argv[i].len, &s))
            reply_score(c, s);
        else
            reply_null(c);
    }
}

void cmd_zcard(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct kv *e = zlookup_read(c, 1, &k, &bad);
    if (bad) return;
    reply_int(c, e ? (long long)zs_len(e) : 0);
}

void cmd_zrem(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct kv *e = zlookup_write(c, 1, &k, &bad);
    if (bad) return;
    long long deleted = 0;
    if (e) {
        for (int i = 2; i < c->argc; i++) {
            double sc;
            if (!deleted && zs_score(e, c->argv[i].ptr, c->argv[i].len, &sc)) db_written(&k, KEV_ZREM);
            if (zs_del(e, c->argv[i].ptr, c->argv[i].len)) deleted++;
            if (zs_len(e) == 0) break;
        }
        if (deleted) zs_delete_if_empty(c, &k, e);
    }
    reply_int(c, deleted);
}

void cmd_zcount(struct cmd_ctx *c) {
    struct zrange r;
    if (!zparse_range(&c->argv[2], &c->argv[3], &r)) {
        reply_error(c, ERR_MINMAX_FLOAT);
        return;
    }
    struct keyref k;
    int bad;
    struct kv *e = zlookup_read(c, 1, &k, &bad);
    if (bad) return;
    long long n = 0;
    if (e) {
        struct zit it;
        zit_init(&it, e);
        zit_score_start(&it, &r, 0);
        if (zit_valid(&it) && it.enc == ENC_SKIPLIST) {
            /* Ranks make the count O(log N). */
            n = zsl_count_between(it.z, it.n, zsl_last_in_range(it.z, &r));
        } else {
            for (; zit_valid(&it); zit_next(&it)) {
                const char *m;
                size_t l;
                double s;
                zit_get(&it, &m, &l, &s);
                if (!zrange_lte_max(s, &r)) break;
                n++;
            }
        }
    }
    reply_int(c, n);
}

void cmd_zlexcount(struct cmd_ctx *c) {
    struct zlex r;
    if (!zparse_lex(&c->argv[2], &c->argv[3], &r)) {
        reply_error(c, ERR_MINMAX_LEX);
        return;
    }
    struct keyref k;
    int bad;
    struct kv *e = zlookup_read(c, 1, &k, &bad);
    if (bad) return;
    long long n = 0;
    if (e) {
        struct zit it;
        zit_init(&it, e);
        zit_lex_start(&it, &r, 0);
        if (zit_valid(&it) && it.enc == ENC_SKIPLIST) {
            n = zsl_count_between(it.z, it.n, zsl_last_in_lex(it.z, &r));
        } else {
            for (; zit_valid(&it); zit_next(&it)) {
                const char *m;
                size_t l;
                zit_get(&it, &m, &l, NULL);
                if (!zlex_lte_max(m, l, &r)) break;
                n++;
            }
        }
    }
    reply_int(c, n);
}

static void zrank_generic(struct cmd_ctx *c, int rev) {
    int withscore = 0;
    if (c->argc > 4) {
        reply_arity(c);
        return;
    }
    if (c->argc == 4) {
        if (!arg_is(&c->argv[3], "withscore")) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        withscore = 1;
    }
    struct keyref k;
    int bad;
    struct kv *e = zlookup_read(c, 1, &k, &bad);
    if (bad) return;
    double s = 0;
    long r = e ? zs_rank(e, c->argv[2].ptr, c->argv[2].len, rev, &s) : -1;
    if (r < 0) {
        if (withscore)
            reply_null_array(c);
        else
            reply_null(c);
        return;
    }
    if (withscore) reply_array(c, 2);
    reply_int(c, r);
    if (withscore) reply_score(c, s);
}

void cmd_zrank(struct cmd_ctx *c) { zrank_generic(c, 0); }
void cmd_zrevrank(struct cmd_ctx *c) { zrank_generic(c, 1); }

/* ---- ZRANGE and its older forms ---- */

enum { ZR_AUTO, ZR_RANK, ZR_SCORE, ZR_LEX };

/* Where range results go: the client (with or without scores) or a
 * skiplist being built for ZRANGESTORE. */
struct zsink {
    struct cmd_ctx *c;
    int withscores;
    struct zsl *store;
    void *hdr;
    long long n;
    /* ZRANGESTORE: Redis fills the destination as a listpack (which keeps
     * no -0) until an entry or member exceeds the listpack limits, then
     * converts; scores emitted before that lose the sign of a zero. */
    int lp;
};

static void sink_begin(struct zsink *s) {
    if (!s->store) s->hdr = reply_defer(s->c);
}

static void sink_emit(struct zsink *s, const char *m, size_t l, double score) {
    s->n++;
    if (s->store) {
        if (s->lp && (s->n > TLIM(zset_max_listpack_entries) || (long long)l > TLIM(zset_max_listpack_value)))
            s->lp = 0;
        if (s->lp && score == 0) score = 0.0;
        zsl_insert(s->store, score, m, l);
        return;
    }
    if (s->withscores && s->c->resp >= 3) reply_array(s->c, 2);
    reply_bulk(s->c, m, l);
    if (s->withscores) reply_score(s->c, score);
}

static void sink_end(struct zsink *s) {
    if (!s->store) reply_fill_array(s->c, s->hdr, s->withscores && s->c->resp < 3 ? s->n * 2 : s->n);
}

/* Clamp a rank range as Redis does; 0 when empty. */
static int clamp_ranks(long long *start, long long *end, long long llen) {
    if (*start < 0) *start += llen;
    if (*end < 0) *end += llen;
    if (*start < 0) *start = 0;
    if (*start > *end || *start >= llen) return 0;
    if (*end >= llen) *end = llen - 1;
    return 1;
}

static void emit_rank_range(struct zsink *s, struct kv *e, long long start, long long end, int rev) {
    long long llen = (long long)zs_len(e);
    if (!clamp_ranks(&start, &end, llen)) return;
    if (end - start + 1 > TLIM(zset_max_listpack_entries)) s->lp = 0; /* sized up front */
    struct zit it;
    zit_init(&it, e);
    zit_seek(&it, (unsigned long)(rev ? llen - 1 - start : start));
    for (long long n = end - start + 1; n > 0 && zit_valid(&it); n--) {
        const char *m;
        size_t l;
        double sc;
        zit_get(&it, &m, &l, &sc);
        sink_emit(s, m, l, sc);
        zit_move(&it, rev);
    }
}

static void emit_score_range(struct zsink *s, struct kv *e, const struct zrange *r, int rev, long long offset,
                             long long limit) {
    if (offset < 0 || (offset > 0 && (unsigned long long)offset >= zs_len(e))) return;
    struct zit it;
    zit_init(&it, e);
    zit_score_start(&it, r, rev);
    while (zit_valid(&it) && offset > 0) {
        zit_move(&it, rev);
        offset--;
    }
    /* A negative limit means "all": never count it down (LLONG_MIN - 1
     * would overflow). */
    for (; zit_valid(&it) && limit != 0; limit -= limit > 0) {
        const char *m;
        size_t l;
        double sc;
        zit_get(&it, &m, &l, &sc);
        if (rev ? !zrange_gte_min(sc, r) : !zrange_lte_max(sc, r)) break;
        sink_emit(s, m, l, sc);
        zit_move(&it, rev);
    }
}

static void emit_lex_range(struct zsink *s, struct kv *e, const struct zlex *r, int rev, long long offset,
                           long long limit) {
    if (offset < 0 || (offset > 0 && (unsigned long long)offset >= zs_len(e))) return;
    struct zit it;
    zit_init(&it, e);
    zit_lex_start(&it, r, rev);
    while (zit_valid(&it) && offset > 0) {
        zit_move(&it, rev);
        offset--;
    }
    /* A negative limit means "all": never count it down (LLONG_MIN - 1
     * would overflow). */
    for (; zit_valid(&it) && limit != 0; limit -= limit > 0) {
        const char *m;
        size_t l;
        double sc;
        zit_get(&it, &m, &l, &sc);
        if (rev ? !zlex_gte_min(m, l, r) : !zlex_lte_max(m, l, r)) break;
        sink_emit(s, m, l, sc);
        zit_move(&it, rev);
    }
}

/* All ZRANGE forms. `src` is the source key's argv index (min and max
 * follow it); `store` is set for ZRANGESTORE (destination argv[1]);
 * type and rev are preset by the older commands, ZR_AUTO/-1 for ZRANGE. */
static void zrange_generic(struct cmd_ctx *c, int src, int store, int type, int rev) {
    int withscores = 0;
    long long offset = 0, limit = -1;
    for (int j = src + 3; j < c->argc; j++) {
        const hk_slice *a = &c->argv[j];
        int left = c->argc - j - 1;
        if (!store && arg_is(a, "withscores")) {
            withscores = 1;
        } else if (arg_is(a, "limit") && left >= 2) {
            if (!hk_str2ll(c->argv[j + 1].ptr, c->argv[j + 1].len, &offset) ||
                !hk_str2ll(c->argv[j + 2].ptr, c->argv[j + 2].len, &limit)) {
                reply_error(c, ERR_NOT_INT);
                return;
            }
            j += 2;
        } else if (rev < 0 && arg_is(a, "rev")) {
            rev = 1;
        } else if (type == ZR_AUTO && arg_is(a, "bylex")) {
            type = ZR_LEX;
        } else if (type == ZR_AUTO && arg_is(a, "byscore")) {
            type = ZR_SCORE;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (rev < 0) rev = 0;
    if (type == ZR_AUTO) type = ZR_RANK;
    if (limit != -1 && type == ZR_RANK) {
        reply_error(c, "ERR syntax error, LIMIT is only supported in combination "
                       "with either BYSCORE or BYLEX");
        return;
    }
    if (withscores && type == ZR_LEX) {
        reply_error(c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    int mini = src + 1, maxi = src + 2;
    if (rev && type != ZR_RANK) {
        mini = src + 2;
        maxi = src + 1;
    }
    long long start = 0, end = 0;
    struct zrange r;
    struct zlex lex;
    if (type == ZR_RANK) {
        if (!hk_str2ll(c->argv[mini].ptr, c->argv[mini].len, &start) ||
            !hk_str2ll(c->argv[maxi].ptr, c->argv[maxi].len, &end)) {
            reply_error(c, ERR_NOT_INT);
            return;
        }
    } else if (type == ZR_SCORE) {
        if (!zparse_range(&c->argv[mini], &c->argv[maxi], &r)) {
            reply_error(c, ERR_MINMAX_FLOAT);
            return;
        }
    } else if (!zparse_lex(&c->argv[mini], &c->argv[maxi], &lex)) {
        reply_error(c, ERR_MINMAX_LEX);
        return;
    }
    struct keyref k;
    int bad;
    struct kv *e = store ? zlookup_write(c, src, &k, &bad) : zlookup_read(c, src, &k, &bad);
    if (bad) return;
    struct zsink s = {.c = c, .withscores = withscores, .store = store ? zsl_new() : NULL, .lp = store};
    sink_begin(&s);
    if (e) {
        if (type == ZR_RANK)
            emit_rank_range(&s, e, start, end, rev);
        else if (type == ZR_SCORE)
            emit_score_range(&s, e, &r, rev, offset, limit);
        else
            emit_lex_range(&s, e, &lex, rev, offset, limit);
    }
    sink_end(&s);
    if (store) {
        struct keyref dk;
        key_of(c, 1, &dk);
        zs_store_result(c, &dk, s.store, KEV_ZRANGESTORE);
        reply_int(c, s.n);
    }
}

void cmd_zrange(struct cmd_ctx *c) { zrange_generic(c, 1, 0, ZR_AUTO, -1); }
void cmd_zrangestore(struct cmd_ctx *c) { zrange_generic(c, 2, 1, ZR_AUTO, -1); }
void cmd_zrevrange(struct cmd_ctx *c) { zrange_generic(c, 1, 0, ZR_RANK, 1); }
void cmd_zrangebyscore(struct cmd_ctx *c) { zrange_generic(c, 1, 0, ZR_SCORE, 0); }
void cmd_zrevrangebyscore(struct cmd_ctx *c) { zrange_generic(c, 1, 0, ZR_SCORE, 1); }
void cmd_zrangebylex(struct cmd_ctx *c) { zrange_generic(c, 1, 0, ZR_LEX, 0); }
void cmd_zrevrangebylex(struct cmd_ctx *c) { zrange_generic(c, 1, 0, ZR_LEX, 1); }

/* ---- ZREMRANGEBY* ---- */

static void zremrange_generic(struct cmd_ctx *c, int type) {
    long long start = 0, end = 0;
    struct zrange r;
    struct zlex lex;
    if (type == ZR_RANK) {
        if (!hk_str2ll(c->argv[2].ptr, c->argv[2].len, &start) || !hk_str2ll(c->argv[3].ptr, c->argv[3].len, &end)) {
            reply_error(c, ERR_NOT_INT);
            return;
        }
    } else if (type == ZR_SCORE) {
        if (!zparse_range(&c->argv[2], &c->argv[3], &r)) {
            reply_error(c, ERR_MINMAX_FLOAT);
            return;
        }
    } else if (!zparse_lex(&c->argv[2], &c->argv[3], &lex)) {
        reply_error(c, ERR_MINMAX_LEX);
        return;
    }
    struct keyref k;
    int bad;
    struct kv *e = zlookup_write(c, 1, &k, &bad);
    if (bad) return;
    if (!e) {
        reply_int(c, 0);
        return;
    }
    unsigned long first = 0, count = 0;
    if (type == ZR_RANK) {
        if (clamp_ranks(&start, &end, (long long)zs_len(e))) {
            first = (unsigned long)start;
            count = (unsigned long)(end - start + 1);
        }
    } else {
        struct zit it;
        zit_init(&it, e);
        if (type == ZR_SCORE)
            zit_score_start(&it, &r, 0);
        else
            zit_lex_start(&it, &lex, 0);
        if (zit_valid(&it)) first = zit_rank(&it);
        for (; zit_valid(&it); zit_next(&it)) {
            const char *m;
            size_t l;
            double sc;
            zit_get(&it, &m, &l, &sc);
            if (type == ZR_SCORE ? !zrange_lte_max(sc, &r) : !zlex_lte_max(m, l, &lex)) break;
            count++;
        }
    }
    if (count) {
        db_written(&k, type == ZR_RANK ? KEV_ZREMRANGEBYRANK : type == ZR_SCORE ? KEV_ZREMRANGEBYSCORE : KEV_ZREMRANGEBYLEX);
        zs_delete_ranks(e, first, count);
        zs_delete_if_empty(c, &k, e);
    }
    reply_int(c, (long long)count);
}

void cmd_zremrangebyrank(struct cmd_ctx *c) { zremrange_generic(c, ZR_RANK); }
void cmd_zremrangebyscore(struct cmd_ctx *c) { zremrange_generic(c, ZR_SCORE); }
void cmd_zremrangebylex(struct cmd_ctx *c) { zremrange_generic(c, ZR_LEX); }

/* ---- ZPOPMIN / ZPOPMAX (and ZMPOP's core) ---- */

/* Pop up to count members from the key at argv[ki] (already checked to be
 * a zset). Reply shapes: flat pairs (nested = 0), nested pairs, and with
 * emitkey the [key, [...]] form of ZMPOP, which (like BZMPOP) propagates
 * as the ZPOPMIN/ZPOPMAX of the key it popped from. */
void zpop_reply(struct cmd_ctx *c, struct keyref *k, struct kv *e, int max, long long count, int nested, int emitkey) {
    long long llen = (long long)zs_len(e);
    long long n = count > llen ? llen : count;
    if (emitkey) {
        reply_array(c, 2);
        reply_bulk(c, k->key, k->klen);
        reply_array(c, n);
    } else {
        reply_array(c, nested ? n : n * 2);
    }
    struct zit it;
    zit_init(&it, e);
    zit_seek(&it, max ? (unsigned long)(llen - 1) : 0);
    for (long long i = 0; i < n; i++) {
        const char *m;
        size_t l;
        double sc;
        zit_get(&it, &m, &l, &sc);
        if (nested) reply_array(c, 2);
        reply_bulk(c, m, l);
        reply_score(c, sc);
        zit_move(&it, max);
    }
    if (emitkey) {
        prop_begin(c, 3);
        prop_arg_cstr(c, max ? "ZPOPMAX" : "ZPOPMIN");
        prop_arg(c, k->key, k->klen);
        prop_arg_ll(c, n);
    }
    if (n == 0) return;
    db_written(k, max ? KEV_ZPOPMAX : KEV_ZPOPMIN);
    zs_delete_ranks(e, max ? (unsigned long)(llen - n) : 0, (unsigned long)n);
    zs_delete_if_empty(c, k, e);
}

static void zpop_generic(struct cmd_ctx *c, int max) {
    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    long long count = -1;
    if (c->argc == 3) {
        if (!hk_str2ll(c->argv[2].ptr, c->argv[2].len, &count) || count < 0) {
            reply_error(c, "ERR value is out of range, must be positive");
            return;
        }
    }
    struct keyref k;
    int bad;
    struct kv *e = zlookup_write(c, 1, &k, &bad);
    if (bad) return;
    if (!e || count == 0) {
        reply_array(c, 0);
        return;
    }
    int nested = c->resp >= 3 && count != -1;
    zpop_reply(c, &k, e, max, count == -1 ? 1 : count, nested, 0);
}

void cmd_zpopmin(struct cmd_ctx *c) { zpop_generic(c, 0); }
void cmd_zpopmax(struct cmd_ctx *c) { zpop_generic(c, 1); }

/* ---- ZRANDMEMBER ---- */

static void rand_emit(struct cmd_ctx *c, struct zit *it, int withscores) {
    const char *m;
    size_t l;
    double sc;
    zit_get(it, &m, &l, &sc);
    if (withscores && c->resp >= 3) reply_array(c, 2);
    reply_bulk(c, m, l);
    if (withscores) reply_score(c, sc);
}

void cmd_zrandmember(struct cmd_ctx *c) {
    long long l = 0;
    int withscores = 0, hascount = c->argc >= 3;
    if (hascount) {
        if (!hk_str2ll(c->argv[2].ptr, c->argv[2].len, &l)) {
            reply_error(c, ERR_NOT_INT);
            return;
        }
        /* LLONG_MIN cannot be negated: refused before the key is looked
         * up, with the range text, as HRANDFIELD/SRANDMEMBER do. */
        if (l == LLONG_MIN) {
            reply_error(c, "ERR value is out of range, value must between "
                           "-9223372036854775807 and 9223372036854775807");
            return;
        }
        if (c->argc > 4 || (c->argc == 4 && !arg_is(&c->argv[3], "withscores"))) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        if (c->argc == 4) {
            withscores = 1;
            if (l < -(LLONG_MAX / 2) || l > LLONG_MAX / 2) {
                reply_error(c, "ERR value is out of range");
                return;
            }
        }
    }
    struct keyref k;
    int bad;
    struct kv *e = zlookup_read(c, 1, &k, &bad);
    if (bad) return;
    struct zit it;
    if (!hascount) {
        if (!e) {
            reply_null(c);
            return;
        }
        zit_init(&it, e);
        zit_seek(&it, (unsigned long)(hk_rand64() % zs_len(e)));
        rand_emit(c, &it, 0);
        return;
    }
    if (!e || l == 0) {
        reply_array(c, 0);
        return;
    }
    unsigned long size = zs_len(e);
    int uniq = l > 0;
    unsigned long long count = l > 0 ? (unsigned long long)l : (unsigned long long)(-(l + 1)) + 1;
    zit_init(&it, e);
    if (!uniq || count == 1) {
        reply_array(c, withscores && c->resp < 3 ? (long long)count * 2 : (long long)count);
        while (count--) {
            zit_seek(&it, (unsigned long)(hk_rand64() % size));
            rand_emit(c, &it, withscores);
        }
        return;
    }
    if (count >= size) {
        reply_array(c, withscores && c->resp < 3 ? (long long)size * 2 : (long long)size);
        for (zit_seek(&it, 0); zit_valid(&it); zit_next(&it))
            rand_emit(c, &it, withscores);
        return;
    }
    /* Distinct ranks: selection sampling over the set, then a shuffle so
     * the reply order is random too. */
    unsigned long *ranks = hk_malloc((size_t)count * sizeof(unsigned long));
    unsigned long need = (unsigned long)count, got = 0;
    for (unsigned long i = 0; i < size && got < need; i++)
        if (hk_rand64() % (size - i) < need - got) ranks[got++] = i;
    for (unsigned long i = got; i > 1; i--) {
        unsigned long j = (unsigned long)(hk_rand64() % i);
        unsigned long t = ranks[i - 1];
        ranks[i - 1] = ranks[j];
        ranks[j] = t;
    }
    reply_array(c, withscores && c->resp < 3 ? (long long)got * 2 : (long long)got);
    for (unsigned long i = 0; i < got; i++) {
        zit_seek(&it, ranks[i]);
        rand_emit(c, &it, withscores);
    }
    hk_free(ranks);
}

/* ---- ZSCAN ---- */

struct zscan_acc {
    struct zsl_node **v;
    size_t n, cap;
};

static void zscan_collect(struct hnode *h, void *ctx) {
    struct zscan_acc *a = ctx;
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->v = hk_realloc(a->v, a->cap * sizeof(*a->v));
    }
    a->v[a->n++] = (struct zsl_node *)h;
}

void cmd_zscan(struct cmd_ctx *c) {
    uint64_t cursor;
    if (!scan_cursor_or_reply(c, &c->argv[2], &cursor)) return;
    struct keyref k;
    int bad;
    struct kv *e = zlookup_read(c, 1, &k, &bad);
    if (bad) return;
    struct scan_args sa;
    if (!scan_args_or_reply(c, 3, 0, &sa)) return;
    long long count = sa.count;
    const char *pat = sa.pat;
    size_t plen = sa.plen;
    char buf[64];
    if (!e) {
        reply_array(c, 2);
        reply_bulk(c, "0", 1);
        reply_array(c, 0);
        return;
    }
    if (kv_enc(e) == ENC_LISTPACK) {
        /* Small sets come back whole in one call, cursor 0, as in Redis. */
        void *h;
        reply_array(c, 2);
        reply_bulk(c, "0", 1);
        h = reply_defer(c);
        long long n = 0;
        struct zit it;
        zit_init(&it, e);
        for (zit_seek(&it, 0); zit_valid(&it); zit_next(&it)) {
            const char *m;
            size_t l;
            double sc;
            zit_get(&it, &m, &l, &sc);
            if (pat && !hk_globmatch(pat, plen, m, l, 0)) continue;
            reply_bulk(c, m, l);
            int bl = hk_d2str(buf, sizeof(buf), sc);
            reply_bulk(c, buf, (size_t)bl);
            n += 2;
        }
        reply_fill_array(c, h, n);
        return;
    }
    struct zsl *z = kv_ptr(e);
    struct zscan_acc acc = {0};
    long long maxvisits = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10, visits = 0;
    uint64_t cur = cursor;
    do {
        cur = ht_scan(&z->ht, cur, zscan_collect, &acc);
        visits++;
    } while (cur != 0 && (long long)acc.n < count && visits < maxvisits);
    reply_array(c, 2);
    int cl = hk_ull2str(buf, cur);
    reply_bulk(c, buf, (size_t)cl);
    void *h = reply_defer(c);
    long long n = 0;
    for (size_t i = 0; i < acc.n; i++) {
        struct zsl_node *node = acc.v[i];
        if (pat && !hk_globmatch(pat, plen, zsl_ele(node), node->elen, 0)) continue;
        reply_bulk(c, zsl_ele(node), node->elen);
        int bl = hk_d2str(buf, sizeof(buf), node->score);
        reply_bulk(c, buf, (size_t)bl);
        n += 2;
    }
    reply_fill_array(c, h, n);
    hk_free(acc.v);
}
