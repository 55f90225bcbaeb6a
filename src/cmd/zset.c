/* zset.c - the single-key sorted set commands (ZADD, ZRANGE and its
 * forms, ZREM and the ZREMRANGEBY*, ZPOP, ZRANDMEMBER, ZSCAN...).
 *
 * Handlers parse their arguments, look their key up, report the write
 * before changing the value, and reply; the value's encodings and
 * operations are in src/types/zset.h, which knows nothing of this layer.
 * Also here, for the other command files: zs_store_result (a built result
 * stored under a key) and zpop_reply. The multi-key commands are in
 * zset_ops.c, the blocking ones in blocking_cmd.c. Handlers run with
 * their keys' shards locked by the execution core. */
#include "zset.h"
#include "../core/alloc.h"
#include "../core/skiplist.h"
#include "../core/util.h"
#include "../types/zset.h"
#include "args.h"
#include "cmdutil.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The score of a reply or argument, RESP2 bulk / RESP3 double. */
static void reply_score(struct cmd_ctx *c, double d) { reply_double(c, d); }

/* Look up a zset for reading; replies WRONGTYPE and sets *bad on a type
 * error. */
static struct kv *zlookup_read(struct cmd_ctx *c, int argi, struct keyref *k, int *bad) {
    return lookup_typed(c, argi, k, OBJ_ZSET, 0, bad);
}

static struct kv *zlookup_write(struct cmd_ctx *c, int argi, struct keyref *k, int *bad) {
    return lookup_typed(c, argi, k, OBJ_ZSET, 1, bad);
}

struct kv *zs_create(struct keyref *k, unsigned long size_hint, size_t maxlen_hint, int ev) {
    return db_put(k, zs_entry_new(k->key, k->klen, size_hint, maxlen_hint), ev);
}

/* Delete the key when its zset became empty ("del" after the command's
 * own event). */
static void zs_delete_if_empty(struct cmd_ctx *c, struct keyref *k, struct kv *e) {
    if (zs_len(e) == 0) db_delete(k, c->now_ms, KEV_DEL);
}

void zs_store_result(struct cmd_ctx *c, struct keyref *k, struct zsl *z, int ev) {
    if (z->length == 0) {
        zsl_free(z);
        db_delete(k, c->now_ms, KEV_DEL);
        return;
    }
    db_put(k, zs_entry_from_zsl(k->key, k->klen, z), ev);
}

/* Score range from argv[mini], argv[maxi]; replies the error and returns 0
 * when either end is bad. */
static int range_or_reply(struct cmd_ctx *c, int mini, int maxi, struct zrange *r) {
    int st = zs_parse_range(c->argv[mini].ptr, c->argv[mini].len, c->argv[maxi].ptr, c->argv[maxi].len, r);
    reply_status(c, st);
    return st == HK_OK;
}

/* Same for a lex range; r points into argv. */
static int lex_or_reply(struct cmd_ctx *c, int mini, int maxi, struct zlex *r) {
    int st = zs_parse_lex(c->argv[mini].ptr, c->argv[mini].len, c->argv[maxi].ptr, c->argv[maxi].len, r);
    reply_status(c, st);
    return st == HK_OK;
}

/* ---- ZADD / ZINCRBY ---- */

static void zadd_generic(struct cmd_ctx *c, int flags) {
    int ch = 0;
    struct argcur a;
    ac_init(&a, c, 2);
    /* Flags run up to the first word that is none: the first score. */
    for (;;) {
        if (ac_is(&a, "NX"))
            flags |= ZS_NX;
        else if (ac_is(&a, "XX"))
            flags |= ZS_XX;
        else if (ac_is(&a, "CH"))
            ch = 1;
        else if (ac_is(&a, "INCR"))
            flags |= ZS_INCR;
        else if (ac_is(&a, "GT"))
            flags |= ZS_GT;
        else if (ac_is(&a, "LT"))
            flags |= ZS_LT;
        else
            break;
    }
    int incr = (flags & ZS_INCR) != 0;
    int nargs = ac_left(&a);
    if (nargs == 0 || nargs % 2) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    int pairs = nargs / 2;
    if ((flags & ZS_NX) && (flags & ZS_XX)) {
        reply_error(c, "ERR XX and NX options at the same time are not compatible");
        return;
    }
    if (((flags & ZS_GT) && (flags & ZS_NX)) || ((flags & ZS_LT) && (flags & ZS_NX)) ||
        ((flags & ZS_GT) && (flags & ZS_LT))) {
        reply_error(c, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if (incr && pairs > 1) {
        reply_error(c, "ERR INCR option supports a single increment-element pair");
        return;
    }
    int si = a.i;
    double stack_scores[16];
    double *scores = pairs <= 16 ? stack_scores : hk_malloc((size_t)pairs * sizeof(double));
    size_t maxlen = 0;
    /* Every score is checked before the key is looked at. */
    for (int j = 0; j < pairs; j++) {
        ac_double(&a, &scores[j], HK_ERR_NOT_FLOAT);
        const hk_slice *m = ac_next(&a);
        if (m && m->len > maxlen) maxlen = m->len;
    }
    if (!ac_ok(&a)) goto done;
    struct keyref k;
    int bad;
    struct kv *e = zlookup_write(c, 1, &k, &bad);
    if (bad) goto done;
    long long added = 0, updated = 0, processed = 0;
    double score = 0;
    int ev = incr ? KEV_ZINCR : KEV_ZADD;
    /* A change per member added or whose score changed. */
    unsigned long long mark = dirty_mark(c);
    struct key_write kw;
    key_write_init(&kw, &k, ev, !e);
    if (!e) {
        if (flags & ZS_XX) goto reply;
        e = zs_create(&k, (unsigned long)pairs, maxlen, ev);
    }
    for (int j = 0; j < pairs; j++) {
        int out;
        double ns = scores[j];
        const hk_slice *m = &c->argv[si + 2 * j + 1];
        /* Reported before the first member that changes. */
        int st = zs_add(e, scores[j], m->ptr, m->len, flags, &out, &ns, &kw.pc);
        if (st != HK_OK) {
            zs_delete_if_empty(c, &k, e);
            dirty_settle(c, mark, added + updated);
            reply_status(c, st);
            goto done;
        }
        if (out & ZS_ADDED) added++;
        if (out & ZS_UPDATED) updated++;
        if (!(out & ZS_NOP)) processed++;
        score = ns;
    }
    /* A key created for members that were all skipped would be empty. */
    zs_delete_if_empty(c, &k, e);
    dirty_settle(c, mark, added + updated);
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
void cmd_zincrby(struct cmd_ctx *c) { zadd_generic(c, ZS_INCR); }

/* ---- simple reads and deletes ---- */

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
        unsigned long long mark = dirty_mark(c);
        struct key_write kw;
        key_write_init(&kw, &k, KEV_ZREM, 0);
        for (int i = 2; i < c->argc; i++) {
            if (zs_del(e, c->argv[i].ptr, c->argv[i].len, &kw.pc)) deleted++;
            if (zs_len(e) == 0) break;
        }
        if (deleted) zs_delete_if_empty(c, &k, e);
        dirty_settle(c, mark, deleted);
    }
    reply_int(c, deleted);
}

void cmd_zcount(struct cmd_ctx *c) {
    struct zrange r;
    if (!range_or_reply(c, 2, 3, &r)) return;
    struct keyref k;
    int bad;
    struct kv *e = zlookup_read(c, 1, &k, &bad);
    if (bad) return;
    reply_int(c, e ? (long long)zs_count_range(e, &r) : 0);
}

void cmd_zlexcount(struct cmd_ctx *c) {
    struct zlex r;
    if (!lex_or_reply(c, 2, 3, &r)) return;
    struct keyref k;
    int bad;
    struct kv *e = zlookup_read(c, 1, &k, &bad);
    if (bad) return;
    reply_int(c, e ? (long long)zs_count_lex(e, &r) : 0);
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

/* Where range results go: the client (with or without scores) or, for
 * ZRANGESTORE, a result being built (with Redis's scores, zs_build). */
struct zsink {
    struct cmd_ctx *c;
    int withscores;
    int store;
    struct zs_build b;
    void *hdr;
    long long n;
};

static void sink_begin(struct zsink *s) {
    if (s->store)
        zs_build_init(&s->b);
    else
        s->hdr = reply_defer(s->c);
}

static void sink_emit(struct zsink *s, const char *m, size_t l, double score) {
    s->n++;
    if (s->store) {
        zs_build_add(&s->b, score, m, l);
        return;
    }
    if (s->withscores && s->c->resp >= 3) reply_array(s->c, 2);
    reply_bulk(s->c, m, l);
    if (s->withscores) reply_score(s->c, score);
}

static void sink_end(struct zsink *s) {
    if (!s->store) reply_fill_array(s->c, s->hdr, s->withscores && s->c->resp < 3 ? s->n * 2 : s->n);
}

static void emit_rank_range(struct zsink *s, struct kv *e, long long start, long long end, int rev) {
    long long llen = (long long)zs_len(e);
    if (!clamp_index_range(&start, &end, llen)) return;
    if (s->store) zs_build_expect(&s->b, (unsigned long)(end - start + 1));
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
    struct argcur a;
    ac_init(&a, c, src + 3);
    while (ac_more(&a)) {
        if (!store && ac_is(&a, "WITHSCORES")) {
            withscores = 1;
        } else if (ac_is_with(&a, "LIMIT", 2)) {
            ac_ll(&a, &offset);
            ac_ll(&a, &limit);
        } else if (rev < 0 && ac_is(&a, "REV")) {
            rev = 1;
        } else if (type == ZR_AUTO && ac_is(&a, "BYLEX")) {
            type = ZR_LEX;
        } else if (type == ZR_AUTO && ac_is(&a, "BYSCORE")) {
            type = ZR_SCORE;
        } else {
            ac_fail(&a, HK_ERR_SYNTAX);
        }
    }
    if (!ac_ok(&a)) return;
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
        if (!range_or_reply(c, mini, maxi, &r)) return;
    } else if (!lex_or_reply(c, mini, maxi, &lex)) {
        return;
    }
    struct keyref k;
    int bad;
    struct kv *e = store ? zlookup_write(c, src, &k, &bad) : zlookup_read(c, src, &k, &bad);
    if (bad) return;
    struct zsink s = {.c = c, .withscores = withscores, .store = store};
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
        zs_store_result(c, &dk, s.b.z, KEV_ZRANGESTORE);
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
        if (!range_or_reply(c, 2, 3, &r)) return;
    } else if (!lex_or_reply(c, 2, 3, &lex)) {
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
        if (clamp_index_range(&start, &end, (long long)zs_len(e))) {
            first = (unsigned long)start;
            count = (unsigned long)(end - start + 1);
        }
    } else {
        count = type == ZR_SCORE ? zs_span_range(e, &r, &first) : zs_span_lex(e, &lex, &first);
    }
    if (count) {
        unsigned long long mark = dirty_mark(c);
        db_written(&k, type == ZR_RANK    ? KEV_ZREMRANGEBYRANK
                       : type == ZR_SCORE ? KEV_ZREMRANGEBYSCORE
                                          : KEV_ZREMRANGEBYLEX);
        zs_delete_ranks(e, first, count);
        zs_delete_if_empty(c, &k, e);
        dirty_settle(c, mark, (long long)count);
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
    /* A change per member popped. */
    unsigned long long mark = dirty_mark(c);
    db_written(k, max ? KEV_ZPOPMAX : KEV_ZPOPMIN);
    zs_delete_ranks(e, max ? (unsigned long)(llen - n) : 0, (unsigned long)n);
    zs_delete_if_empty(c, k, e);
    dirty_settle(c, mark, n);
}

static void zpop_generic(struct cmd_ctx *c, int max) {
    long long count = -1;
    struct argcur a;
    ac_init(&a, c, 2);
    if (c->argc > 3)
        ac_fail(&a, HK_ERR_SYNTAX);
    else if (ac_more(&a))
        ac_ll_in(&a, 0, LLONG_MAX, &count, HK_ERR_NOT_POSITIVE);
    if (!ac_ok(&a)) return;
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

/* The reply array of n picks: a member and a score each in RESP2 with
 * WITHSCORES, one element (member or pair) each otherwise. */
static void rand_header(struct cmd_ctx *c, int withscores, long long n) {
    reply_array(c, withscores && c->resp < 3 ? n * 2 : n);
}

/* The slot of rank t in the open-addressing set (cap a power of two,
 * ULONG_MAX marks a free slot): where t is, else the free slot it would
 * take. */
static size_t rank_slot(const unsigned long *set, size_t cap, unsigned long t) {
    size_t h = (size_t)((t * 0x9E3779B97F4A7C15ULL) >> 7) & (cap - 1);
    while (set[h] != ULONG_MAX && set[h] != t) h = (h + 1) & (cap - 1);
    return h;
}

void cmd_zrandmember(struct cmd_ctx *c) {
    long long l = 0;
    int withscores = 0, hascount = c->argc >= 3;
    struct argcur a;
    ac_init(&a, c, 2);
    /* Checked before the key is looked up, as Redis does. */
    if (hascount) ac_rand_count(&a, "WITHSCORES", &l, &withscores);
    if (!ac_ok(&a)) return;
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
    if (uniq && count >= size) {
        rand_header(c, withscores, (long long)size);
        zit_init(&it, e);
        for (zit_seek(&it, 0); zit_valid(&it); zit_next(&it))
            rand_emit(c, &it, withscores);
        return;
    }
    /* Every pick is a uniform rank; a listpack's positions are indexed
     * once so a pick costs no walk. */
    struct zrank_index x;
    zrank_index(&x, e);
    if (!uniq || count == 1) {
        rand_header(c, withscores, (long long)count);
        while (count--) {
            zrank_seek(&x, (unsigned long)(hk_rand64() % size));
            rand_emit(c, &x.it, withscores);
        }
        zrank_free(&x);
        return;
    }
    unsigned long need = (unsigned long)count;
    unsigned long *ranks = hk_malloc((size_t)need * sizeof(unsigned long));
    if ((unsigned long long)need * 3 <= size) {
        /* Few out of many: Floyd's sampling, O(count), a uniform subset
         * (distinct ranks kept in a small open-addressing set). */
        size_t cap = 16;
        while (cap < (size_t)need * 2) cap <<= 1;
        unsigned long *set = hk_malloc(cap * sizeof(unsigned long));
        for (size_t i = 0; i < cap; i++) set[i] = ULONG_MAX;
        unsigned long got = 0;
        for (unsigned long j = size - need; j < size; j++) {
            unsigned long t = (unsigned long)(hk_rand64() % ((uint64_t)j + 1));
            size_t h = rank_slot(set, cap, t);
            if (set[h] == t) {
                /* t was taken: j (new this round, so absent) goes in instead. */
                t = j;
                h = rank_slot(set, cap, t);
            }
            set[h] = t;
            ranks[got++] = t;
        }
        hk_free(set);
    } else {
        /* A large share: selection sampling over the ranks, O(size). */
        unsigned long got = 0;
        for (unsigned long i = 0; i < size && got < need; i++)
            if (hk_rand64() % (size - i) < need - got) ranks[got++] = i;
    }
    /* Neither gives a random order: shuffle, so the reply order is too. */
    for (unsigned long i = need; i > 1; i--) {
        unsigned long j = (unsigned long)(hk_rand64() % i);
        unsigned long t = ranks[i - 1];
        ranks[i - 1] = ranks[j];
        ranks[j] = t;
    }
    rand_header(c, withscores, (long long)need);
    for (unsigned long i = 0; i < need; i++) {
        zrank_seek(&x, ranks[i]);
        rand_emit(c, &x.it, withscores);
    }
    hk_free(ranks);
    zrank_free(&x);
}

/* ---- ZSCAN ---- */

/* The reply of one ZSCAN step, written as zs_scan hands the members out:
 * the cursor first (known by the first member), then the MATCHing pairs,
 * scores as bulk strings in RESP3 too, as Redis. */
struct zscan_reply {
    struct cmd_ctx *c;
    const struct scan_args *sa;
    uint64_t next;
    void *hdr;
    int started;
    long long n;
};

static void zscan_begin(struct zscan_reply *r) {
    if (r->started) return;
    char buf[HK_LONG_STR_SIZE];
    r->started = 1;
    reply_array(r->c, 2);
    reply_bulk(r->c, buf, (size_t)hk_ull2str(buf, r->next));
    r->hdr = reply_defer(r->c);
}

static void zscan_member(const char *m, size_t l, double score, void *ctx) {
    struct zscan_reply *r = ctx;
    zscan_begin(r);
    if (r->sa->pat && !hk_globmatch(r->sa->pat, r->sa->plen, m, l, 0)) return;
    char buf[64];
    reply_bulk(r->c, m, l);
    reply_bulk(r->c, buf, (size_t)hk_d2str(buf, sizeof(buf), score));
    r->n += 2;
}

void cmd_zscan(struct cmd_ctx *c) {
    uint64_t cursor;
    if (!scan_cursor_or_reply(c, &c->argv[2], &cursor)) return;
    struct keyref k;
    int bad;
    struct kv *e = zlookup_read(c, 1, &k, &bad);
    if (bad) return;
    /* A missing key answers before the options are checked, as Redis. */
    if (!e) {
        reply_empty_scan(c);
        return;
    }
    struct scan_args sa;
    if (!scan_args_or_reply(c, 3, 0, &sa)) return;
    struct zscan_reply r = {.c = c, .sa = &sa};
    zs_scan(e, cursor, sa.count, &r.next, zscan_member, &r);
    zscan_begin(&r);
    reply_fill_array(c, r.hdr, r.n);
}
