/* set.c - every non-blocking set command: SADD, SREM, SISMEMBER, SMISMEMBER,
 * SMEMBERS, SCARD, SPOP, SRANDMEMBER, SMOVE, SINTER, SINTERCARD,
 * SINTERSTORE, SUNION, SUNIONSTORE, SDIFF, SDIFFSTORE, SSCAN. The handlers
 * parse their arguments, look their keys up, report every change through the
 * write hook before making it, and reply; the set value itself (its
 * encodings, conversions and lifecycle) is src/types/set.h. Handlers run
 * with the shards of all their keys locked by dispatch, so multi-key
 * commands are atomic. This file is not the blocking-command machinery and
 * knows nothing of persistence. */
#include "../core/alloc.h"
#include "../core/hash.h"
#include "../core/htable.h"
#include "../core/util.h"
#include "../types/set.h"
#include "cmds.h"
#include "cmdutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers for handlers --------------------------------------------- */

/* Replace key k with the set o (taking ownership, reporting ev), or
 * delete k when o is empty (freeing o). Returns the size stored. */
static uint64_t set_put_or_delete(struct cmd_ctx *c, const struct keyref *k, struct setv *o, int ev) {
    uint64_t n = setv_size(o);
    if (n) {
        db_put(k, setv_entry(k->key, k->klen, o), ev);
    } else {
        setv_free(o);
        db_delete(k, c->now_ms, KEV_DEL);
    }
    return n;
}

static void reply_val(struct cmd_ctx *c, const struct lp_val *v) { reply_bulk(c, lp_val_ptr(v), v->len); }

/* Reply every member of o as a RESP3 set (array in RESP2). */
static void reply_members(struct cmd_ctx *c, const struct setv *o) {
    struct setv_iter it;
    struct lp_val v;
    reply_set(c, (long long)setv_size(o));
    setv_iter_init(&it, o);
    while (setv_iter_next(&it, &v)) reply_val(c, &v);
}

/* ---- single-key commands ---------------------------------------------- */

/* SADD key member [member ...] */
void cmd_sadd(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (e && !check_type(c, e, OBJ_SET)) return;
    uint64_t hint = (uint64_t)c->argc - 2;
    struct setv o = e ? setv_of(e) : setv_create(c->argv[2].ptr, c->argv[2].len, hint);
    /* A re-encoding, not a change of members: nothing is reported for it
     * (Redis signals only when a member was added). */
    if (e) setv_maybe_convert(&o, hint);
    long long added = 0;
    /* An existing set reports before its first new member; a new key is
     * reported when it is stored. Each member added is a change. */
    unsigned long long mark = dirty_mark(c);
    struct key_write kw;
    key_write_init(&kw, &k, KEV_SADD, !e);
    for (int i = 2; i < c->argc; i++) added += setv_add(&o, c->argv[i].ptr, c->argv[i].len, &kw.pc);
    if (e) setv_store(e, &o);
    else db_put(&k, setv_entry(k.key, k.klen, &o), KEV_SADD);
    dirty_settle(c, mark, added);
    reply_int(c, added);
}

/* SREM key member [member ...]: the key goes when its last member does. */
void cmd_srem(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_SET)) return;
    struct setv o = setv_of(e);
    long long removed = 0;
    unsigned long long mark = dirty_mark(c);
    struct key_write kw;
    key_write_init(&kw, &k, KEV_SREM, 0);
    for (int i = 2; i < c->argc; i++) {
        removed += setv_remove(&o, c->argv[i].ptr, c->argv[i].len, &kw.pc);
        if (!setv_size(&o)) break;
    }
    setv_store(e, &o);
    if (!setv_size(&o)) db_delete(&k, c->now_ms, KEV_DEL);
    dirty_settle(c, mark, removed);
    reply_int(c, removed);
}

/* Read-only lookup of a set key: NULL with nothing replied when absent,
 * NULL after WRONGTYPE (*bad set) when of another type. */
static struct kv *set_lookup_read(struct cmd_ctx *c, int argi, int *bad) {
    struct keyref k;
    return lookup_typed(c, argi, &k, OBJ_SET, 0, bad);
}

void cmd_sismember(struct cmd_ctx *c) {
    int bad;
    struct kv *e = set_lookup_read(c, 1, &bad);
    if (bad) return;
    if (!e) {
        reply_int(c, 0);
        return;
    }
    struct setv o = setv_of(e);
    reply_int(c, setv_has(&o, c->argv[2].ptr, c->argv[2].len));
}

void cmd_smismember(struct cmd_ctx *c) {
    int bad;
    struct kv *e = set_lookup_read(c, 1, &bad);
    if (bad) return;
    struct setv o = e ? setv_of(e) : (struct setv){0, NULL};
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) reply_int(c, e && setv_has(&o, c->argv[i].ptr, c->argv[i].len));
}

void cmd_scard(struct cmd_ctx *c) {
    int bad;
    struct kv *e = set_lookup_read(c, 1, &bad);
    if (bad) return;
    if (!e) {
        reply_int(c, 0);
        return;
    }
    struct setv o = setv_of(e);
    reply_int(c, (long long)setv_size(&o));
}

void cmd_smembers(struct cmd_ctx *c) {
    int bad;
    struct kv *e = set_lookup_read(c, 1, &bad);
    if (bad) return;
    if (!e) {
        reply_set(c, 0);
        return;
    }
    struct setv o = setv_of(e);
    reply_members(c, &o);
}

/* What SPOP propagates: SREM key member..., at most SREM_BATCH members a
 * command (as Redis batches them). `left` members are still to come. */
#define SREM_BATCH 1024
struct srem_batch {
    struct cmd_ctx *c;
    const struct keyref *k;
    uint64_t left, in_cmd;
};

static void srem_batch_add(struct srem_batch *b, const struct lp_val *v) {
    if (!prop_on(b->c)) return;
    if (b->in_cmd == 0) {
        uint64_t n = b->left < SREM_BATCH ? b->left : SREM_BATCH;
        prop_begin(b->c, (int)n + 2);
        prop_arg_cstr(b->c, "SREM");
        prop_arg(b->c, b->k->key, b->k->klen);
        b->in_cmd = n;
    }
    prop_arg(b->c, lp_val_ptr(v), v->len);
    b->in_cmd--;
    b->left--;
}

/* SPOP key [count]. Without count: one member or nil. With count: a set
 * (RESP3) of up to count distinct members, all of them (and the key
 * deleted) when count reaches the size. One change per member taken. */
void cmd_spop(struct cmd_ctx *c) {
    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    long long count = -1;
    struct argcur a;
    ac_init(&a, c, 2);
    if (ac_more(&a)) ac_ll_in(&a, 0, LLONG_MAX, &count, HK_ERR_NOT_POSITIVE);
    if (!ac_ok(&a)) return;
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        if (count < 0) reply_null(c);
        else reply_set(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_SET)) return;
    if (count == 0) {
        reply_set(c, 0);
        return;
    }
    struct setv o = setv_of(e);
    uint64_t size = setv_size(&o);
    /* Random draws do not replay: SPOP propagates as DEL (all of it) or
     * as SREM of the members it took. */
    unsigned long long mark = dirty_mark(c);
    db_written(&k, KEV_SPOP);
    if (count > 0 && (uint64_t)count >= size) {
        reply_members(c, &o);
        db_delete(&k, c->now_ms, KEV_DEL);
        dirty_settle(c, mark, (long long)size);
        prop_cmd(c, "DEL", 1, &c->argv[1]);
        return;
    }
    struct srem_batch b = {c, &k, 0};
    if (count > 0 && (size - (uint64_t)count) * 5 <= (uint64_t)count) {
        /* Most members go: draw the few that stay into a new set (which
         * starts small again, as in Redis), reply what is left of the old
         * one and free it. */
        uint64_t remaining = size - (uint64_t)count;
        struct setv ns = setv_new(o.enc == ENC_INTSET ? ENC_INTSET : ENC_LISTPACK);
        struct setv_rand rs;
        setv_rand_init(&rs, &o, remaining);
        while (remaining--) {
            struct lp_val v;
            setv_rand_next(&rs, &v);
            setv_add_val(&ns, &v);
            setv_remove(&o, lp_val_ptr(&v), v.len, NULL);
        }
        reply_members(c, &o);
        if (prop_on(c)) {
            struct setv_iter it;
            struct lp_val v;
            setv_iter_init(&it, &o);
            b.left = setv_size(&o);
            while (setv_iter_next(&it, &v)) srem_batch_add(&b, &v);
        }
        setv_free(&o);
        setv_store(e, &ns);
        dirty_settle(c, mark, count);
        return;
    }
    long long n = count < 0 ? 1 : count;
    if (count > 0) reply_set(c, n);
    b.left = (uint64_t)n;
    struct setv_rand rs;
    setv_rand_init(&rs, &o, (uint64_t)n);
    for (long long i = 0; i < n; i++) {
        struct lp_val v;
        setv_rand_next(&rs, &v);
        /* Reply before removing: the member's bytes live in the set. */
        reply_val(c, &v);
        srem_batch_add(&b, &v);
        setv_remove(&o, lp_val_ptr(&v), v.len, NULL);
    }
    setv_store(e, &o);
    if (!setv_size(&o)) db_delete(&k, c->now_ms, KEV_DEL);
    dirty_settle(c, mark, n);
}

/* A member already returned by SRANDMEMBER, keyed by its address. */
struct pick {
    struct hnode node;
    const char *s;
};

static uint64_t pick_hash(const struct hnode *n, void *ctx) {
    (void)ctx;
    const char *s = ((const struct pick *)n)->s;
    return hk_hash(&s, sizeof(s));
}

static int pick_match(const struct hnode *n, const void *key) { return ((const struct pick *)n)->s == key; }

static void pick_free(struct hnode *n, void *ctx) {
    (void)ctx;
    hk_free(n);
}

/* A copy of every member of o (size of them), in iteration order; the
 * caller frees it. */
static struct lp_val *members_copy(const struct setv *o, uint64_t size) {
    struct lp_val *all = hk_malloc(size * sizeof(*all));
    struct setv_iter it;
    setv_iter_init(&it, o);
    for (uint64_t i = 0; i < size; i++) setv_iter_next(&it, &all[i]);
    return all;
}

/* SRANDMEMBER key [count]. A negative count allows repeats and returns
 * exactly |count| members; a positive one returns distinct members. */
void cmd_srandmember(struct cmd_ctx *c) {
    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    long long l = 0;
    int with_count = c->argc == 3;
    struct argcur a;
    ac_init(&a, c, 2);
    if (with_count) ac_ll_range(&a, -LLONG_MAX, LLONG_MAX, &l, HK_ERR_LONG_RANGE);
    if (!ac_ok(&a)) return;
    int bad;
    struct kv *e = set_lookup_read(c, 1, &bad);
    if (bad) return;
    if (!e) {
        if (with_count) reply_array(c, 0);
        else reply_null(c);
        return;
    }
    struct setv o = setv_of(e);
    struct lp_val v;
    if (!with_count) {
        setv_random(&o, &v);
        reply_val(c, &v);
        return;
    }
    uint64_t size = setv_size(&o);
    if (l == 0) {
        reply_array(c, 0);
        return;
    }
    if (l < 0) {
        unsigned long long count = (unsigned long long)-l;
        reply_array(c, (long long)count);
        if (o.enc == ENC_HT) {
            struct setv_rand rs;
            setv_rand_init(&rs, &o, count);
            for (unsigned long long i = 0; i < count; i++) {
                setv_rand_next(&rs, &v);
                reply_val(c, &v);
            }
            return;
        }
        /* Small encodings: index a copy of the members once. */
        struct lp_val *all = members_copy(&o, size);
        for (unsigned long long i = 0; i < count; i++) reply_val(c, &all[hk_rand64() % size]);
        hk_free(all);
        return;
    }
    unsigned long long count = (unsigned long long)l;
    if (count >= size) {
        reply_array(c, (long long)size);
        struct setv_iter it;
        setv_iter_init(&it, &o);
        while (setv_iter_next(&it, &v)) reply_val(c, &v);
        return;
    }
    reply_array(c, (long long)count);
    if (o.enc != ENC_HT || count * 3 > size) {
        /* Copy every member and draw count of them without repeats
         * (a partial Fisher-Yates shuffle). */
        struct lp_val *all = members_copy(&o, size);
        for (unsigned long long i = 0; i < count; i++) {
            uint64_t j = i + hk_rand64() % (size - i);
            struct lp_val t = all[i];
            all[i] = all[j];
            all[j] = t;
            reply_val(c, &all[i]);
        }
        hk_free(all);
        return;
    }
    /* Few members out of a big table: draw at random, skipping repeats,
     * remembered by node address in a small table of their own. */
    struct htable seen;
    ht_init(&seen);
    struct setv_rand rs;
    setv_rand_init(&rs, &o, count);
    unsigned long long got = 0;
    while (got < count) {
        setv_rand_next(&rs, &v);
        uint64_t h = hk_hash(&v.s, sizeof(v.s));
        if (ht_find_link(&seen, h, pick_match, v.s)) continue;
        struct pick *p = hk_malloc(sizeof(*p));
        p->s = v.s;
        p->node.next = NULL;
        ht_insert(&seen, &p->node, h, pick_hash, NULL);
        reply_val(c, &v);
        got++;
    }
    ht_drain(&seen, pick_free, NULL);
}

/* SMOVE source destination member */
void cmd_smove(struct cmd_ctx *c) {
    struct keyref ks_, kd;
    key_of(c, 1, &ks_);
    key_of(c, 2, &kd);
    struct kv *src = lookup_write(c, &ks_);
    struct kv *dst = lookup_write(c, &kd);
    const hk_slice *m = &c->argv[3];
    if (!src) {
        reply_int(c, 0);
        return;
    }
    if (!check_type(c, src, OBJ_SET)) return;
    if (dst && !check_type(c, dst, OBJ_SET)) return;
    struct setv so = setv_of(src);
    if (src == dst) {
        reply_int(c, setv_has(&so, m->ptr, m->len));
        return;
    }
    /* One change for the removal, one more when the destination gained
     * the member; none for a source it emptied. */
    unsigned long long mark = dirty_mark(c);
    struct key_write kw;
    key_write_init(&kw, &ks_, KEV_SREM, 0);
    if (!setv_remove(&so, m->ptr, m->len, &kw.pc)) {
        reply_int(c, 0);
        return;
    }
    setv_store(src, &so);
    if (!setv_size(&so)) db_delete(&ks_, c->now_ms, KEV_DEL);
    int added = 1;
    if (dst) {
        struct setv d = setv_of(dst);
        key_write_init(&kw, &kd, KEV_SADD, 0);
        added = setv_add(&d, m->ptr, m->len, &kw.pc);
        if (added) setv_store(dst, &d);
    } else {
        struct setv d = setv_create(m->ptr, m->len, 1);
        setv_add(&d, m->ptr, m->len, NULL);
        db_put(&kd, setv_entry(kd.key, kd.klen, &d), KEV_SADD);
    }
    dirty_settle(c, mark, 1 + added);
    reply_int(c, 1);
}

/* ---- multi-key algebra ------------------------------------------------ */

/* Look up n set keys from argv[first]; missing keys give NULL slots.
 * Every key is type-checked (a missing one does not stop the checks, as
 * in Redis). Returns 0 after replying WRONGTYPE. */
static int gather_sets(struct cmd_ctx *c, int first, int n, struct setv *out, int *missing) {
    *missing = 0;
    for (int j = 0; j < n; j++) {
        struct keyref k;
        key_of(c, first + j, &k);
        struct kv *e = lookup_read(c, &k); /* sources count as reads, STORE forms too */
        if (!e) {
            out[j].p = NULL;
            out[j].enc = 0;
            (*missing)++;
            continue;
        }
        if (!check_type(c, e, OBJ_SET)) return 0;
        out[j] = setv_of(e);
    }
    return 1;
}

static int cmp_by_size(const void *a, const void *b) {
    uint64_t x = setv_size(a), y = setv_size(b);
    return x < y ? -1 : x > y;
}

/* SINTER / SINTERSTORE / SINTERCARD. dst: argv index of the destination
 * or 0; card: reply only the count, stopping at limit (0 = none). */
static void set_inter(struct cmd_ctx *c, int first, int n, int dst, int card, long long limit) {
    struct setv stack[16];
    struct setv *sets = n <= 16 ? stack : hk_malloc((size_t)n * sizeof(*sets));
    int missing;
    if (!gather_sets(c, first, n, sets, &missing)) goto out;
    if (missing) {
        if (dst) {
            struct keyref kd;
            key_of(c, dst, &kd);
            db_delete(&kd, c->now_ms, KEV_DEL);
            reply_int(c, 0);
        } else if (card) {
            reply_int(c, 0);
        } else {
            reply_set(c, 0);
        }
        goto out;
    }
    qsort(sets, (size_t)n, sizeof(*sets), cmp_by_size);
    struct setv res = {0, NULL};
    void *hdr = NULL;
    long long cnt = 0;
    if (dst) {
        /* As Redis: an intset smallest set gives an intset result; else
         * start from a listpack and settle the encoding at the end. */
        res = setv_new(sets[0].enc == ENC_INTSET ? ENC_INTSET : ENC_LISTPACK);
    } else if (!card) {
        hdr = reply_defer(c);
    }
    struct setv_iter it;
    struct lp_val v;
    setv_iter_init(&it, &sets[0]);
    while (setv_iter_next(&it, &v)) {
        int j;
        for (j = 1; j < n; j++) {
            if (sets[j].p == sets[0].p) continue;
            if (!setv_has_val(&sets[j], &v)) break;
        }
        if (j < n) continue;
        cnt++;
        if (card) {
            if (limit && cnt >= limit) break;
        } else if (dst) {
            setv_add_val(&res, &v);
        } else {
            reply_val(c, &v);
        }
    }
    if (dst) {
        struct keyref kd;
        key_of(c, dst, &kd);
        setv_maybe_intset(&res);
        reply_int(c, (long long)set_put_or_delete(c, &kd, &res, KEV_SINTERSTORE));
    } else if (card) {
        reply_int(c, cnt);
    } else {
        reply_fill_set(c, hdr, cnt);
    }
out:
    if (sets != stack) hk_free(sets);
}

enum { SET_UNION, SET_DIFF };

/* SUNION / SDIFF and their STORE forms: the result is built as a new set
 * (from an intset up, by the normal conversion rules), replied or stored. */
static void set_union_diff(struct cmd_ctx *c, int first, int n, int dst, int op) {
    struct setv stack[16];
    struct setv *sets = n <= 16 ? stack : hk_malloc((size_t)n * sizeof(*sets));
    int missing;
    if (!gather_sets(c, first, n, sets, &missing)) goto out;
    struct setv res = setv_new(ENC_INTSET);
    struct setv_iter it;
    struct lp_val v;
    if (op == SET_UNION) {
        for (int j = 0; j < n; j++) {
            if (!sets[j].p) continue;
            setv_iter_init(&it, &sets[j]);
            while (setv_iter_next(&it, &v)) setv_add_val(&res, &v);
        }
    } else if (sets[0].p) {
        /* Redis 7.2 picks one of two algorithms by estimated work, and the
         * choice shows in the result's encoding: checking each member of
         * the first set against the others (1) builds the result up from
         * an intset, while copying the first set and removing the others'
         * members (2) may leave a big encoding behind. A key repeated as
         * the first one makes the result empty either way. */
        int same = 0;
        uint64_t work1 = 0, work2 = 0;
        for (int j = 1; j < n; j++)
            if (sets[j].p == sets[0].p) same = 1;
        for (int j = 0; j < n; j++) {
            if (!sets[j].p) continue;
            work1 += setv_size(&sets[0]);
            work2 += setv_size(&sets[j]);
        }
        if (same) {
            /* empty */
        } else if (work1 / 2 <= work2) {
            setv_iter_init(&it, &sets[0]);
            while (setv_iter_next(&it, &v)) {
                int j;
                for (j = 1; j < n; j++)
                    if (sets[j].p && setv_has_val(&sets[j], &v)) break;
                if (j == n) setv_add_val(&res, &v);
            }
        } else {
            for (int j = 0; j < n && (j == 0 || setv_size(&res)); j++) {
                if (!sets[j].p) continue;
                setv_iter_init(&it, &sets[j]);
                while (setv_iter_next(&it, &v)) {
                    if (j == 0) setv_add_val(&res, &v);
                    else setv_remove(&res, lp_val_ptr(&v), v.len, NULL);
                }
            }
        }
    }
    if (dst) {
        struct keyref kd;
        key_of(c, dst, &kd);
        reply_int(c, (long long)set_put_or_delete(c, &kd, &res, op == SET_UNION ? KEV_SUNIONSTORE : KEV_SDIFFSTORE));
    } else {
        reply_members(c, &res);
        setv_free(&res);
    }
out:
    if (sets != stack) hk_free(sets);
}

void cmd_sinter(struct cmd_ctx *c) { set_inter(c, 1, c->argc - 1, 0, 0, 0); }
void cmd_sinterstore(struct cmd_ctx *c) { set_inter(c, 2, c->argc - 2, 1, 0, 0); }
void cmd_sunion(struct cmd_ctx *c) { set_union_diff(c, 1, c->argc - 1, 0, SET_UNION); }
void cmd_sunionstore(struct cmd_ctx *c) { set_union_diff(c, 2, c->argc - 2, 1, SET_UNION); }
void cmd_sdiff(struct cmd_ctx *c) { set_union_diff(c, 1, c->argc - 1, 0, SET_DIFF); }
void cmd_sdiffstore(struct cmd_ctx *c) { set_union_diff(c, 2, c->argc - 2, 1, SET_DIFF); }

/* SINTERCARD numkeys key [key ...] [LIMIT limit] */
void cmd_sintercard(struct cmd_ctx *c) {
    long long n, limit = 0;
    struct argcur a;
    ac_init(&a, c, 1);
    ac_ll_in(&a, 1, LLONG_MAX, &n, HK_ERR_NUMKEYS);
    if (!ac_ok(&a)) return;
    if (n > c->argc - 2) {
        reply_status(c, HK_ERR_NUMKEYS_ARGS);
        return;
    }
    /* LIMIT may repeat (the last one counts); a LIMIT with nothing after it
     * is not the option but a stray word. */
    ac_init(&a, c, 2 + (int)n);
    while (ac_more(&a)) {
        if (ac_is_with(&a, "LIMIT", 1)) ac_ll_in(&a, 0, LLONG_MAX, &limit, HK_ERR_LIMIT_NEGATIVE);
        else ac_fail(&a, HK_ERR_SYNTAX);
    }
    if (!ac_ok(&a)) return;
    set_inter(c, 2, (int)n, 0, 1, limit);
}

/* ---- SSCAN ------------------------------------------------------------ */

/* Members a hash-table scan visited: their stored bytes, which stay put
 * until the reply is written (the set does not change meanwhile). */
struct sscan_ctx {
    hk_slice *m;
    size_t n, cap;
};

static void sscan_visit(const char *s, size_t len, void *arg) {
    struct sscan_ctx *x = arg;
    if (x->n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 32;
        x->m = hk_realloc(x->m, x->cap * sizeof(*x->m));
    }
    x->m[x->n].ptr = s;
    x->m[x->n++].len = len;
}

/* SSCAN key cursor [MATCH pattern] [COUNT count]. Intsets and listpacks
 * are returned whole with cursor 0; hash tables walk the reverse-binary
 * bucket cursor, COUNT being a hint (count*10 buckets at most). */
void cmd_sscan(struct cmd_ctx *c) {
    uint64_t cursor;
    if (!scan_cursor_or_reply(c, &c->argv[2], &cursor)) return;
    int bad;
    struct kv *e = set_lookup_read(c, 1, &bad);
    if (bad) return;
    if (!e) {
        reply_empty_scan(c);
        return;
    }
    struct scan_args sa;
    if (!scan_args_or_reply(c, 3, 0, &sa)) return;
    long long count = sa.count;
    const char *pat = sa.pat;
    size_t plen = sa.plen;
    struct setv o = setv_of(e);
    struct setv_iter it;
    struct lp_val v;
    if (o.enc != ENC_HT) {
        reply_array(c, 2);
        reply_bulk(c, "0", 1);
        void *h = reply_defer(c);
        long long n = 0;
        setv_iter_init(&it, &o);
        while (setv_iter_next(&it, &v)) {
            if (pat && !hk_globmatch(pat, plen, lp_val_ptr(&v), v.len, 0)) continue;
            reply_val(c, &v);
            n++;
        }
        reply_fill_array(c, h, n);
        return;
    }
    struct sscan_ctx x = {0};
    long long maxvisits = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10, visits = 0;
    do {
        cursor = setv_scan(&o, cursor, sscan_visit, &x);
        visits++;
    } while (cursor && (long long)x.n < count && visits < maxvisits);
    char cbuf[24];
    int cl = snprintf(cbuf, sizeof(cbuf), "%llu", (unsigned long long)cursor);
    size_t keep = 0;
    for (size_t i = 0; i < x.n; i++)
        if (!pat || hk_globmatch(pat, plen, x.m[i].ptr, x.m[i].len, 0)) x.m[keep++] = x.m[i];
    reply_array(c, 2);
    reply_bulk(c, cbuf, (size_t)cl);
    reply_array(c, (long long)keep);
    for (size_t i = 0; i < keep; i++) reply_bulk(c, x.m[i].ptr, x.m[i].len);
    hk_free(x.m);
}
