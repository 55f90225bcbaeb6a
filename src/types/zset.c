/* zset.c - the sorted-set value in its listpack and skiplist encodings:
 * adds, deletes, ranks, range lookups, the iterator, range parsing, the
 * set algebra of ZUNION/ZINTER/ZDIFF and the lifecycle table entry; see
 * zset.h. It is not the command layer: no client, no reply, no keyspace
 * access (the handlers in src/cmd/zset.c and zset_ops.c do that). */
#include "zset.h"

#include "../core/alloc.h"
#include "../core/status.h"
#include "../core/util.h"
#include "digest.h"
#include "rdb.h"
#include "types.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- listpack encoding helpers ---- */

/* Score of the pair whose score element is at pos. */
static double zlp_score_at(const lpack *lp, size_t pos) {
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

/* Insert a member that is not present at its sorted place. Returns the
 * (possibly moved) listpack. */
static lpack *zlp_insert(lpack *lp, const char *ele, size_t len, double score) {
    size_t pos = lp_first(lp);
    struct lp_val v;
    while (pos != LP_NONE) {
        size_t sp = lp_next(lp, pos);
        double s = zlp_score_at(lp, sp);
        if (s > score) break;
        if (s == score) {
            lp_get(lp, pos, &v);
            if (hk_bytes_cmp(v.s, v.len, ele, len) > 0) break;
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

/* Delete the pair whose member is at pos. Returns the (possibly moved)
 * listpack. */
static lpack *zlp_delete(lpack *lp, size_t pos) {
    size_t next;
    lp = lp_delete(lp, pos, &next);
    return lp_delete(lp, next, NULL);
}

/* ---- entries ---- */

struct kv *zs_entry_new(const char *key, size_t klen, unsigned long size_hint, size_t maxlen_hint) {
    if (size_hint <= (unsigned long)TLIM(zset_max_listpack_entries) &&
        maxlen_hint <= (size_t)TLIM(zset_max_listpack_value))
        return kv_new_ptr(key, klen, OBJ_ZSET, ENC_LISTPACK, lp_new(), -1);
    return kv_new_ptr(key, klen, OBJ_ZSET, ENC_SKIPLIST, zsl_new(), -1);
}

struct kv *zs_entry_from_zsl(const char *key, size_t klen, struct zsl *z) {
    int small = z->length <= (unsigned long)TLIM(zset_max_listpack_entries);
    for (struct zsl_node *n = z->header->level[0].forward; small && n; n = n->level[0].forward)
        if (n->elen > (size_t)TLIM(zset_max_listpack_value)) small = 0;
    if (!small) return kv_new_ptr(key, klen, OBJ_ZSET, ENC_SKIPLIST, z, -1);
    /* The skiplist is in listpack order already: append, no search. */
    lpack *lp = lp_new();
    char buf[64];
    for (struct zsl_node *n = z->header->level[0].forward; n; n = n->level[0].forward) {
        lp = lp_append(lp, zsl_ele(n), n->elen);
        int len = hk_d2str(buf, sizeof(buf), n->score == 0 ? 0.0 : n->score);
        lp = lp_append(lp, buf, (size_t)len);
    }
    zsl_free(z);
    return kv_new_ptr(key, klen, OBJ_ZSET, ENC_LISTPACK, lp, -1);
}

/* ---- reads ---- */

unsigned long zs_len(const struct kv *e) {
    if (kv_enc(e) == ENC_LISTPACK) return lp_count(kv_ptr(e)) / 2;
    return ((const struct zsl *)kv_ptr(e))->length;
}

/* Score lookup on a value given by encoding (entries and algebra inputs
 * alike). */
static int score_of(int enc, const void *val, const char *ele, size_t len, double *out) {
    if (enc == ENC_LISTPACK) {
        const lpack *lp = val;
        size_t p = zlp_find(lp, ele, len);
        if (p == LP_NONE) return 0;
        *out = zlp_score_at(lp, lp_next(lp, p));
        return 1;
    }
    if (enc != ENC_SKIPLIST) return 0;
    /* zsl_find only reads; its prototype predates const. */
    struct zsl_node *n = zsl_find((struct zsl *)val, ele, len);
    if (!n) return 0;
    *out = n->score;
    return 1;
}

int zs_score(const struct kv *e, const char *ele, size_t len, double *out) {
    return score_of(kv_enc(e), kv_ptr(e), ele, len, out);
}

long zs_rank(const struct kv *e, const char *ele, size_t len, int rev, double *score) {
    unsigned long n = zs_len(e);
    if (kv_enc(e) == ENC_LISTPACK) {
        const lpack *lp = kv_ptr(e);
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

/* Members from first to last by rank, computed as Redis does (the length
 * less what lies before first and after last), so a lex range over mixed
 * scores counts the same way. */
static unsigned long zsl_count_between(const struct zsl *z, const struct zsl_node *first,
                                       const struct zsl_node *last) {
    long long len = (long long)z->length;
    long long n = len - ((long long)zsl_rank(z, first) - 1);
    if (last) n -= len - (long long)zsl_rank(z, last);
    return (unsigned long)n;
}

unsigned long zs_count_range(const struct kv *e, const struct zrange *r) {
    struct zit it;
    zit_init(&it, e);
    zit_score_start(&it, r, 0);
    if (zit_valid(&it) && it.enc == ENC_SKIPLIST) return zsl_count_between(it.z, it.n, zsl_last_in_range(it.z, r));
    unsigned long n = 0;
    for (; zit_valid(&it); zit_next(&it)) {
        const char *m;
        size_t l;
        double s;
        zit_get(&it, &m, &l, &s);
        if (!zrange_lte_max(s, r)) break;
        n++;
    }
    return n;
}

unsigned long zs_count_lex(const struct kv *e, const struct zlex *r) {
    struct zit it;
    zit_init(&it, e);
    zit_lex_start(&it, r, 0);
    if (zit_valid(&it) && it.enc == ENC_SKIPLIST) return zsl_count_between(it.z, it.n, zsl_last_in_lex(it.z, r));
    unsigned long n = 0;
    for (; zit_valid(&it); zit_next(&it)) {
        const char *m;
        size_t l;
        zit_get(&it, &m, &l, NULL);
        if (!zlex_lte_max(m, l, r)) break;
        n++;
    }
    return n;
}

/* Shared walk of zs_span_range and zs_span_lex: r is a zrange when !lex,
 * else a zlex. */
static unsigned long span(const struct kv *e, const void *r, int lex, unsigned long *first) {
    struct zit it;
    zit_init(&it, e);
    if (lex)
        zit_lex_start(&it, r, 0);
    else
        zit_score_start(&it, r, 0);
    if (!zit_valid(&it)) return 0;
    *first = zit_rank(&it);
    unsigned long count = 0;
    for (; zit_valid(&it); zit_next(&it)) {
        const char *m;
        size_t l;
        double sc;
        zit_get(&it, &m, &l, &sc);
        if (lex ? !zlex_lte_max(m, l, r) : !zrange_lte_max(sc, r)) break;
        count++;
    }
    return count;
}

unsigned long zs_span_range(const struct kv *e, const struct zrange *r, unsigned long *first) {
    return span(e, r, 0, first);
}

unsigned long zs_span_lex(const struct kv *e, const struct zlex *r, unsigned long *first) {
    return span(e, r, 1, first);
}

struct scan_acc {
    struct zsl_node **v;
    size_t n, cap;
};

static void scan_collect(struct hnode *h, void *ctx) {
    struct scan_acc *a = ctx;
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->v = hk_realloc(a->v, a->cap * sizeof(*a->v));
    }
    a->v[a->n++] = (struct zsl_node *)h;
}

void zs_scan(struct kv *e, uint64_t cursor, long long count, uint64_t *next,
             void (*fn)(const char *ele, size_t len, double score, void *ctx), void *ctx) {
    if (kv_enc(e) == ENC_LISTPACK) {
        *next = 0;
        struct zit it;
        zit_init(&it, e);
        for (zit_seek(&it, 0); zit_valid(&it); zit_next(&it)) {
            const char *m;
            size_t l;
            double sc;
            zit_get(&it, &m, &l, &sc);
            fn(m, l, sc, ctx);
        }
        return;
    }
    struct zsl *z = kv_ptr(e);
    struct scan_acc acc = {0};
    long long maxvisits = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10, visits = 0;
    uint64_t cur = cursor;
    /* Gathered first, then handed out: the caller wants the cursor before
     * the members. */
    do {
        cur = ht_scan(&z->ht, cur, scan_collect, &acc);
        visits++;
    } while (cur != 0 && (long long)acc.n < count && visits < maxvisits);
    *next = cur;
    for (size_t i = 0; i < acc.n; i++) fn(zsl_ele(acc.v[i]), acc.v[i]->elen, acc.v[i]->score, ctx);
    hk_free(acc.v);
}

/* ---- writes ---- */

/* Past the listpack limits: the same members in a skiplist, in place of
 * the listpack (same entry). */
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

int zs_add(struct kv *e, double score, const char *ele, size_t len, int flags, int *out, double *newscore,
           struct pre_change *pc) {
    int incr = flags & ZS_INCR, nx = flags & ZS_NX, xx = flags & ZS_XX;
    int gt = flags & ZS_GT, lt = flags & ZS_LT;
    *out = 0;
    if (isnan(score)) return HK_ERR_NAN_SCORE;
    /* One lookup: the member's place serves the update too. */
    int lp = kv_enc(e) == ENC_LISTPACK;
    size_t pos = LP_NONE;
    struct zsl_node *node = NULL;
    if (lp) pos = zlp_find(kv_ptr(e), ele, len);
    else node = zsl_find(kv_ptr(e), ele, len);
    if (pos != LP_NONE || node) {
        double cur = lp ? zlp_score_at(kv_ptr(e), lp_next(kv_ptr(e), pos)) : node->score;
        if (nx) {
            *out = ZS_NOP;
            return HK_OK;
        }
        if (incr) {
            score += cur;
            if (isnan(score)) return HK_ERR_NAN_SCORE;
        }
        if ((lt && score >= cur) || (gt && score <= cur)) {
            *out = ZS_NOP;
            return HK_OK;
        }
        if (newscore) *newscore = score;
        if (score != cur) {
            pre_change(pc);
            if (lp) kv_set_ptr(e, zlp_insert(zlp_delete(kv_ptr(e), pos), ele, len, score));
            else zsl_update_score(kv_ptr(e), node, score);
            *out = ZS_UPDATED;
        }
        return HK_OK;
    }
    if (xx) {
        *out = ZS_NOP;
        return HK_OK;
    }
    pre_change(pc);
    if (lp) {
        if (zs_len(e) + 1 > (unsigned long)TLIM(zset_max_listpack_entries) ||
            len > (size_t)TLIM(zset_max_listpack_value))
            zs_to_skiplist(e);
        else
            kv_set_ptr(e, zlp_insert(kv_ptr(e), ele, len, score));
    }
    if (kv_enc(e) == ENC_SKIPLIST) zsl_insert(kv_ptr(e), score, ele, len);
    if (newscore) *newscore = score;
    *out = ZS_ADDED;
    return HK_OK;
}

int zs_del(struct kv *e, const char *ele, size_t len, struct pre_change *pc) {
    if (kv_enc(e) == ENC_LISTPACK) {
        lpack *lp = kv_ptr(e);
        size_t p = zlp_find(lp, ele, len);
        if (p == LP_NONE) return 0;
        pre_change(pc);
        kv_set_ptr(e, zlp_delete(lp, p));
        return 1;
    }
    struct zsl *z = kv_ptr(e);
    struct zsl_node *n = zsl_find(z, ele, len);
    if (!n) return 0;
    pre_change(pc);
    zsl_delete_node(z, n);
    return 1;
}

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

/* ---- ranges ---- */

/* strtod needs a terminated string, and Redis refuses what a NUL would cut
 * short. */
static int parse_score_bound(const char *p, size_t len, double *v, int *ex) {
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

int zs_parse_range(const char *min, size_t minlen, const char *max, size_t maxlen, struct zrange *r) {
    if (parse_score_bound(min, minlen, &r->min, &r->minex) && parse_score_bound(max, maxlen, &r->max, &r->maxex))
        return HK_OK;
    return HK_ERR_MINMAX_FLOAT;
}

static int parse_lex_bound(const char *p, size_t plen, const char **s, size_t *len, int *ex, int *inf) {
    *ex = 0;
    *inf = 0;
    *s = NULL;
    *len = 0;
    if (plen == 0) return 0;
    switch (p[0]) {
    case '+':
        if (plen != 1) return 0;
        *inf = 1;
        return 1;
    case '-':
        if (plen != 1) return 0;
        *inf = -1;
        return 1;
    case '(': *ex = 1; /* fall through */
    case '[':
        *s = p + 1;
        *len = plen - 1;
        return 1;
    default: return 0;
    }
}

int zs_parse_lex(const char *min, size_t minlen, const char *max, size_t maxlen, struct zlex *r) {
    if (parse_lex_bound(min, minlen, &r->min, &r->minlen, &r->minex, &r->mininf) &&
        parse_lex_bound(max, maxlen, &r->max, &r->maxlen, &r->maxex, &r->maxinf))
        return HK_OK;
    return HK_ERR_MINMAX_LEX;
}

/* ---- iterator over either encoding ---- */

static void zit_init_val(struct zit *it, int enc, const void *val) {
    memset(it, 0, sizeof(*it));
    it->enc = enc;
    if (enc == ENC_LISTPACK)
        it->lp = val;
    else
        it->z = val;
    it->pos = LP_NONE;
}

void zit_init(struct zit *it, const struct kv *e) { zit_init_val(it, kv_enc(e), kv_ptr(e)); }

int zit_valid(const struct zit *it) { return it->enc == ENC_LISTPACK ? it->pos != LP_NONE : it->n != NULL; }

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

void zit_seek(struct zit *it, unsigned long rank) {
    if (it->enc == ENC_LISTPACK)
        it->pos = lp_seek(it->lp, (long long)rank * 2);
    else
        it->n = zsl_by_rank(it->z, rank + 1);
}

void zrank_index(struct zrank_index *x, const struct kv *e) {
    zit_init(&x->it, e);
    x->pos = NULL;
    if (x->it.enc != ENC_LISTPACK) return;
    unsigned long n = zs_len(e), i = 0;
    x->pos = hk_malloc((n ? n : 1) * sizeof(size_t));
    for (size_t p = lp_first(x->it.lp); p != LP_NONE && i < n; p = lp_next(x->it.lp, lp_next(x->it.lp, p)))
        x->pos[i++] = p;
}

void zrank_seek(struct zrank_index *x, unsigned long rank) {
    if (x->pos) x->it.pos = x->pos[rank];
    else zit_seek(&x->it, rank);
}

void zrank_free(struct zrank_index *x) {
    hk_free(x->pos);
    x->pos = NULL;
}

unsigned long zit_rank(const struct zit *it) {
    if (it->enc == ENC_SKIPLIST) return zsl_rank(it->z, it->n) - 1;
    unsigned long r = 0;
    for (size_t p = lp_first(it->lp); p != it->pos; p = lp_next(it->lp, lp_next(it->lp, p)))
        r++;
    return r;
}

void zit_score_start(struct zit *it, const struct zrange *r, int rev) {
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

void zit_lex_start(struct zit *it, const struct zlex *r, int rev) {
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

/* ---- building a result ---- */

void zs_build_init(struct zs_build *b) {
    b->z = zsl_new();
    b->n = 0;
    b->packed = 1;
}

void zs_build_expect(struct zs_build *b, unsigned long n) {
    if ((long long)n > TLIM(zset_max_listpack_entries)) b->packed = 0;
}

void zs_build_add(struct zs_build *b, double score, const char *ele, size_t len) {
    b->n++;
    if (b->packed &&
        ((long long)b->n > TLIM(zset_max_listpack_entries) || (long long)len > TLIM(zset_max_listpack_value)))
        b->packed = 0;
    /* Zeros that went in while Redis's result was a listpack lost their
     * sign there, and keep 0 after its conversion. */
    if (b->packed && score == 0) score = 0.0;
    zsl_insert(b->z, score, ele, len);
}

/* ---- ZUNION, ZINTER, ZDIFF, ZINTERCARD ---- */

void zs_input_entry(struct zs_input *in, const struct kv *e) {
    *in = (struct zs_input){.enc = kv_enc(e), .val = kv_ptr(e), .len = zs_len(e), .weight = 1.0};
}

void zs_input_zsl(struct zs_input *in, const struct zsl *z) {
    *in = (struct zs_input){.enc = ENC_SKIPLIST, .val = z, .len = z->length, .weight = 1.0};
}

void zs_input_none(struct zs_input *in) { *in = (struct zs_input){.enc = -1, .weight = 1.0}; }

/* An iterator at the first member of an input; a missing one walks
 * nothing. */
static void input_iter(const struct zs_input *in, struct zit *it) {
    if (in->enc < 0) {
        zit_init_val(it, ENC_SKIPLIST, NULL);
        return;
    }
    zit_init_val(it, in->enc, in->val);
    if (in->enc == ENC_LISTPACK)
        it->pos = lp_first(it->lp);
    else
        it->n = it->z->header->level[0].forward;
}

static void aggregate(double *target, double v, int agg) {
    if (agg == ZS_AGG_SUM) {
        *target += v;
        if (isnan(*target)) *target = 0.0; /* inf + -inf */
    } else if (agg == ZS_AGG_MIN) {
        if (v < *target) *target = v;
    } else if (v > *target) {
        *target = v;
    }
}

static int cmp_input_len(const void *a, const void *b) {
    const struct zs_input *x = a, *y = b;
    return x->len < y->len ? -1 : x->len > y->len;
}

static double weighted(double score, double w) {
    double v = score * w;
    return isnan(v) ? 0.0 : v;
}

/* The intersection walk shared by zs_setop (dst set) and zs_intercard
 * (dst NULL: count only, stopping at limit when it is not 0). */
static long long intersect(struct zs_input *in, int n, int agg, struct zsl *dst, long long limit) {
    long long count = 0;
    for (int i = 0; i < n; i++)
        if (in[i].enc < 0 || in[i].len == 0) return 0;
    /* Smallest first: fewer probes into the others. */
    qsort(in, (size_t)n, sizeof(*in), cmp_input_len);
    struct zit it;
    const char *m;
    size_t l;
    double sc;
    for (input_iter(&in[0], &it); zit_valid(&it); zit_next(&it)) {
        zit_get(&it, &m, &l, &sc);
        double t = weighted(sc, in[0].weight);
        int j;
        for (j = 1; j < n; j++) {
            double o;
            if (!score_of(in[j].enc, in[j].val, m, l, &o)) break;
            /* Only the first input's product is NaN-normalised (as in
             * Redis): a later inf*0 NaN makes SUM 0 and is ignored by
             * MIN/MAX, so it is passed on unchanged. */
            aggregate(&t, o * in[j].weight, agg);
        }
        if (j < n) continue;
        count++;
        if (!dst) {
            if (limit && count >= limit) break;
            continue;
        }
        zsl_insert(dst, t, m, l);
    }
    return count;
}

struct zsl *zs_setop(struct zs_input *in, int n, int op, int agg) {
    struct zsl *dst = zsl_new();
    struct zit it;
    const char *m;
    size_t l;
    double sc;
    if (op == ZS_UNION) {
        /* Smallest first, as Redis: the visiting order decides which of
         * 0 and -0 MIN/MAX keeps when weights produce both. */
        qsort(in, (size_t)n, sizeof(*in), cmp_input_len);
        for (int i = 0; i < n; i++) {
            for (input_iter(&in[i], &it); zit_valid(&it); zit_next(&it)) {
                zit_get(&it, &m, &l, &sc);
                double v = weighted(sc, in[i].weight);
                struct zsl_node *node = zsl_find(dst, m, l);
                if (!node) {
                    zsl_insert(dst, v, m, l);
                    continue;
                }
                double t = node->score;
                aggregate(&t, v, agg);
                /* -0 + 0 is 0: a sign change alone must be stored too. */
                if (t != node->score || signbit(t) != signbit(node->score)) zsl_update_score(dst, node, t);
            }
        }
    } else if (op == ZS_INTER) {
        intersect(in, n, agg, dst, 0);
    } else if (in[0].enc >= 0) {
        for (input_iter(&in[0], &it); zit_valid(&it); zit_next(&it)) {
            zit_get(&it, &m, &l, &sc);
            int j;
            double o;
            for (j = 1; j < n; j++)
                if (score_of(in[j].enc, in[j].val, m, l, &o)) break;
            if (j == n) zsl_insert(dst, sc, m, l);
        }
    }
    return dst;
}

long long zs_intercard(struct zs_input *in, int n, long long limit) {
    return intersect(in, n, ZS_AGG_SUM, NULL, limit);
}

/* ---- lifecycle ---- */

static struct kv *zs_dup(const struct kv *e, const char *key, size_t klen, long long expire) {
    void *v = kv_enc(e) == ENC_LISTPACK ? (void *)lp_dup(kv_ptr(e)) : (void *)zsl_dup(kv_ptr(e));
    return kv_new_ptr(key, klen, OBJ_ZSET, kv_enc(e), v, expire);
}

static void zs_free_value(struct kv *e) {
    if (kv_enc(e) == ENC_LISTPACK)
        lp_free(kv_ptr(e));
    else
        zsl_free(kv_ptr(e));
}

/* One allocation per skiplist node; a listpack is one. */
static size_t zs_free_effort(const struct kv *e) { return kv_enc(e) == ENC_SKIPLIST ? (size_t)zs_len(e) : 1; }

static size_t zs_usage(const struct kv *e, size_t samples) {
    (void)samples;
    if (kv_enc(e) == ENC_LISTPACK) return lp_bytes(kv_ptr(e));
    return zsl_usage(kv_ptr(e));
}

/* Each member digested with its score (printed as Redis prints it), the
 * pairs folded by xor: equal for equal content whatever the encoding or
 * the order. */
static void zs_digest(const struct kv *e, unsigned char digest[20]) {
    if (zs_len(e) == 0) return;
    struct zit it;
    zit_init(&it, e);
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

/* ---- RDB (rdb.h) ---- */

/* A listpack as RDB_TYPE_ZSET_LISTPACK (member, score pairs in a listpack
 * blob, scores as their shortest decimal text or integers); a skiplist as
 * RDB_TYPE_ZSET_2 (the count, then member and binary score pairs from the
 * highest score down, as Redis writes them so that loading inserts at the
 * head). */
static int zs_save(const struct kv *e, struct rdb_out *o) {
    if (kv_enc(e) == ENC_LISTPACK) return rdb_put_lpack(o, kv_ptr(e));
    const struct zsl *z = kv_ptr(e);
    rdb_put_len(o, z->length);
    for (const struct zsl_node *n = z->tail; n; n = n->backward) {
        rdb_put_string(o, zsl_ele(n), n->elen);
        rdb_put_double_bin(o, n->score);
    }
    return 0;
}

/* Add a loaded member to z, refusing what Redis refuses. */
static int zs_load_add(struct rdb_in *in, struct zsl *z, const char *m, size_t len, double score) {
    if (isnan(score)) return rdb_fail(in, "Zset with NAN score detected");
    if (len >= UINT32_MAX) return rdb_fail(in, "Zset member of %zu bytes is too large", len);
    if (zsl_find(z, m, len)) return rdb_fail(in, "Duplicate zset fields detected");
    zsl_insert(z, score, m, len);
    return 0;
}

/* RDB_TYPE_ZSET and RDB_TYPE_ZSET_2: count, then member and score pairs
 * (text or binary scores). *maxlen gets the longest member. */
static int zs_load_pairs(struct rdb_in *in, int rdb_type, struct zsl *z, size_t *maxlen) {
    uint64_t n;
    if (rdb_get_len(in, &n, NULL) < 0) return -1;
    if (n == 0) return rdb_fail_empty(in, "zset");
    for (uint64_t i = 0; i < n; i++) {
        size_t len;
        double score;
        char *m = rdb_get_string(in, &len);
        if (!m) return -1;
        int r = rdb_type == RDB_TYPE_ZSET_2 ? rdb_get_double_bin(in, &score) : rdb_get_double_text(in, &score);
        if (r == 0) r = zs_load_add(in, z, m, len, score);
        hk_free(m);
        if (r < 0) return -1;
        if (len > *maxlen) *maxlen = len;
    }
    return 0;
}

/* RDB_TYPE_ZSET_ZIPLIST and RDB_TYPE_ZSET_LISTPACK: a blob of member,
 * score pairs. The pairs are sorted again rather than trusted to be in
 * order, and a duplicate member is refused. */
static int zs_load_blob(struct rdb_in *in, int kind, struct zsl *z) {
    struct rdb_blob b;
    struct lp_val m, sc;
    char *owned;
    if (rdb_get_blob(in, &b, kind, &owned) < 0) return -1;
    int r = 0;
    if (b.count == 0) r = rdb_fail_empty(in, "zset");
    else if (b.count % 2) r = rdb_fail(in, "Zset blob has an odd number of elements");
    while (r == 0 && rdb_blob_next(&b, &m) && rdb_blob_next(&b, &sc)) {
        double d = (double)sc.v;
        if (!sc.is_int && !hk_str2d(sc.s, sc.len, &d)) {
            r = rdb_fail(in, "Zset blob has an invalid score");
            break;
        }
        r = zs_load_add(in, z, lp_val_ptr(&m), m.len, d);
    }
    hk_free(owned);
    return r;
}

/* Sorted sets load into a skiplist, which orders them and finds
 * duplicates, then become a listpack when small enough: by count and
 * member length for the plain types, by count alone for the packed
 * ones, as Redis decides. */
static struct kv *zs_load(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire) {
    struct zsl *z = zsl_new();
    size_t maxlen = 0;
    int r;
    switch (rdb_type) {
    case RDB_TYPE_ZSET:
    case RDB_TYPE_ZSET_2: r = zs_load_pairs(in, rdb_type, z, &maxlen); break;
    case RDB_TYPE_ZSET_ZIPLIST: r = zs_load_blob(in, RDB_BLOB_ZIPLIST, z); break;
    case RDB_TYPE_ZSET_LISTPACK: r = zs_load_blob(in, RDB_BLOB_LISTPACK, z); break;
    default: r = rdb_fail(in, "RDB type %d is not a sorted set", rdb_type);
    }
    if (r < 0) {
        zsl_free(z);
        return NULL;
    }
    if (z->length > (unsigned long)TLIM(zset_max_listpack_entries) || maxlen > (size_t)TLIM(zset_max_listpack_value))
        return kv_new_ptr(key, klen, OBJ_ZSET, ENC_SKIPLIST, z, expire);
    lpack *lp = lp_new();
    char buf[64];
    for (struct zsl_node *n = z->header->level[0].forward; n; n = n->level[0].forward) {
        lp = lp_append(lp, zsl_ele(n), n->elen);
        int len = hk_d2str(buf, sizeof(buf), n->score == 0 ? 0.0 : n->score);
        lp = lp_append(lp, buf, (size_t)len);
    }
    zsl_free(z);
    return kv_new_ptr(key, klen, OBJ_ZSET, ENC_LISTPACK, lp, expire);
}

const struct type_ops zset_type_ops = {
    .name = "zset",
    .free = zs_free_value,
    .free_effort = zs_free_effort,
    .dup = zs_dup,
    .usage = zs_usage,
    .digest = zs_digest,
    .save = zs_save,
    .load = zs_load,
};
