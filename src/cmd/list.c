/* list.c - the non-blocking list commands: LPUSH, RPUSH, LPUSHX, RPUSHX,
 * LPOP, RPOP, LLEN, LINDEX, LSET, LRANGE, LINSERT, LREM, LTRIM, LPOS,
 * LMOVE, RPOPLPUSH and LMPOP, with Redis 7.2's replies and error texts.
 *
 * Handlers parse their arguments, look the key up, report each write
 * (db_written) before changing the value, change it through the list view
 * of src/types/list.h, reply, and delete a key whose list emptied. The
 * encodings, their conversions and the element operations are not here but
 * in src/types/list.c; the blocking forms (BLPOP...) are in blocking_cmd.c
 * and run these by name. Handlers run with their keys' shards locked by
 * the execution core. */
#include "../core/alloc.h"
#include "../types/list.h"
#include "../types/types.h"
#include "cmds.h"
#include "cmdutil.h"

#include <limits.h>
#include <string.h>

/* ---- shared pieces ------------------------------------------------------ */

/* LEFT -> 1 (head), RIGHT -> 0 (tail); a syntax error otherwise. */
static void parse_side(struct argcur *a, int *head) {
    if (ac_is(a, "LEFT")) *head = 1;
    else if (ac_is(a, "RIGHT")) *head = 0;
    else ac_fail(a, HK_ERR_SYNTAX);
}

/* Finish view v of key k after elements went: a list that emptied takes
 * its key with it, reported after the removal's own event (the callers
 * settle the change count, which that deletion does not add to). k's
 * entry is gone when it did. */
static void finish_removal(struct cmd_ctx *c, const struct keyref *k, struct listv *v) {
    if (listv_after_removal(v)) db_delete(k, c->now_ms, KEV_DEL);
}

static void reply_elem(struct cmd_ctx *c, const struct ql_cur *cur) {
    struct lp_val v;
    ql_cur_get(cur, &v);
    reply_bulk(c, v.s, v.len);
}

/* Reply elements [start..end] (valid, start <= end) as an array, walking
 * backwards from end when reverse. */
static void reply_range(struct cmd_ctx *c, struct listv *v, unsigned long start, unsigned long end,
                        int reverse) {
    unsigned long n = end - start + 1;
    reply_array(c, (long long)n);
    struct ql_cur cur;
    listv_seek(v, reverse ? end : start, &cur);
    while (n--) {
        reply_elem(c, &cur);
        if (n) {
            if (reverse) ql_cur_prev(&cur);
            else ql_cur_next(&cur);
        }
    }
}

/* ---- push --------------------------------------------------------------- */

static void push_generic(struct cmd_ctx *c, int head, int xx) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (e && !check_type(c, e, OBJ_LIST)) return;
    if (!e) {
        if (xx) {
            reply_int(c, 0);
            return;
        }
        e = db_put(&k, listv_new_entry(k.key, k.klen), head ? KEV_LPUSH : KEV_RPUSH);
    } else {
        db_written(&k, head ? KEV_LPUSH : KEV_RPUSH);
    }
    struct listv v;
    listv_open(&v, e);
    size_t add = 0;
    for (int i = 2; i < c->argc; i++) add += c->argv[i].len;
    listv_grow(&v, add, (unsigned long)(c->argc - 2));
    for (int i = 2; i < c->argc; i++) listv_push(&v, c->argv[i].ptr, c->argv[i].len, head);
    /* One change per element pushed (the event counted the first). */
    db_dirty_add(c->argc - 3);
    unsigned long len = listv_len(&v);
    listv_done(&v);
    reply_int(c, (long long)len);
}

void cmd_lpush(struct cmd_ctx *c) { push_generic(c, 1, 0); }
void cmd_rpush(struct cmd_ctx *c) { push_generic(c, 0, 0); }
void cmd_lpushx(struct cmd_ctx *c) { push_generic(c, 1, 1); }
void cmd_rpushx(struct cmd_ctx *c) { push_generic(c, 0, 1); }

/* ---- pop ---------------------------------------------------------------- */

/* Reply up to count elements from one end of the list of e (key k) and
 * remove them, one change each; with_key nests the reply as [key,
 * [elements]] (LMPOP), and then propagates as the LPOP/RPOP of that key.
 * Deletes the key when the list empties (e is gone then). */
static void pop_range(struct cmd_ctx *c, const struct keyref *k, struct kv *e, int head, unsigned long count,
                      int with_key) {
    unsigned long long mark = dirty_mark(c);
    struct listv v;
    listv_open(&v, e);
    unsigned long llen = listv_len(&v);
    unsigned long n = count > llen ? llen : count;
    if (with_key) {
        reply_array(c, 2);
        reply_bulk(c, k->key, k->klen);
        prop_begin(c, 3);
        prop_arg_cstr(c, head ? "LPOP" : "RPOP");
        prop_arg(c, k->key, k->klen);
        prop_arg_ll(c, (long long)n);
    }
    db_written(k, head ? KEV_LPOP : KEV_RPOP);
    if (head) {
        reply_range(c, &v, 0, n - 1, 0);
        listv_del_range(&v, 0, n);
    } else {
        reply_range(c, &v, llen - n, llen - 1, 1);
        listv_del_range(&v, llen - n, n);
    }
    finish_removal(c, k, &v);
    dirty_settle(c, mark, (long long)n);
}

static void pop_generic(struct cmd_ctx *c, int head) {
    int hascount = c->argc == 3;
    long long count = 0;
    if (c->argc > 3) {
        reply_arity(c);
        return;
    }
    if (hascount) {
        /* One text for "not a number" and "negative", as Redis sends. */
        struct argcur a;
        ac_init(&a, c, 2);
        ac_ll_in(&a, 0, LLONG_MAX, &count, HK_ERR_NOT_POSITIVE);
        if (!ac_ok(&a)) return;
    }
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        if (hascount) reply_null_array(c);
        else reply_null(c);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    if (hascount && count == 0) {
        reply_array(c, 0);
        return;
    }
    if (!hascount) {
        struct listv v;
        listv_open(&v, e);
        unsigned long at = head ? 0 : listv_len(&v) - 1;
        struct ql_cur cur;
        listv_seek(&v, at, &cur);
        reply_elem(c, &cur);
        unsigned long long mark = dirty_mark(c);
        db_written(&k, head ? KEV_LPOP : KEV_RPOP);
        listv_del_range(&v, at, 1);
        finish_removal(c, &k, &v);
        dirty_settle(c, mark, 1);
        return;
    }
    pop_range(c, &k, e, head, (unsigned long)count, 0);
}

void cmd_lpop(struct cmd_ctx *c) { pop_generic(c, 1); }
void cmd_rpop(struct cmd_ctx *c) { pop_generic(c, 0); }

/* ---- reads -------------------------------------------------------------- */

void cmd_llen(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    reply_int(c, (long long)listv_len_of(e));
}

void cmd_lindex(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_null(c);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    long long idx;
    struct argcur a;
    ac_init(&a, c, 2);
    ac_ll(&a, &idx);
    if (!ac_ok(&a)) return;
    struct listv v;
    listv_open(&v, e);
    unsigned long at;
    if (listv_index(&v, idx, &at) != HK_OK) {
        reply_null(c);
        return;
    }
    struct ql_cur cur;
    listv_seek(&v, at, &cur);
    reply_elem(c, &cur);
    listv_done(&v);
}

/* LRANGE and LTRIM: "key start end", both integers, parsed before the
 * lookup. Replies the first error and returns 0 on bad input. */
static int parse_start_end(struct cmd_ctx *c, long long *start, long long *end) {
    struct argcur a;
    ac_init(&a, c, 2);
    ac_ll(&a, start);
    ac_ll(&a, end);
    return ac_ok(&a);
}

void cmd_lrange(struct cmd_ctx *c) {
    long long start, end;
    if (!parse_start_end(c, &start, &end)) return;
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_array(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    struct listv v;
    listv_open(&v, e);
    if (!clamp_index_range(&start, &end, (long long)listv_len(&v))) {
        reply_array(c, 0);
        return;
    }
    reply_range(c, &v, (unsigned long)start, (unsigned long)end, 0);
    listv_done(&v);
}

/* LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len] */
void cmd_lpos(struct cmd_ctx *c) {
    long long rank = 1, count = -1, maxlen = 0;
    struct argcur a;
    ac_init(&a, c, 3);
    while (ac_more(&a)) {
        if (ac_is_with(&a, "RANK", 1)) {
            /* -LLONG_MAX at the bottom, so that negating it cannot overflow. */
            if (ac_ll_range(&a, -LLONG_MAX, LLONG_MAX, &rank, HK_ERR_LONG_RANGE) && rank == 0)
                ac_fail(&a, HK_ERR_RANK_ZERO);
        } else if (ac_is_with(&a, "COUNT", 1)) {
            ac_ll_in(&a, 0, LLONG_MAX, &count, HK_ERR_COUNT_NEGATIVE);
        } else if (ac_is_with(&a, "MAXLEN", 1)) {
            ac_ll_in(&a, 0, LLONG_MAX, &maxlen, HK_ERR_MAXLEN_NEGATIVE);
        } else {
            ac_fail(&a, HK_ERR_SYNTAX);
        }
    }
    if (!ac_ok(&a)) return;
    int fwd = 1;
    if (rank < 0) {
        rank = -rank;
        fwd = 0;
    }
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        if (count != -1) reply_array(c, 0);
        else reply_null(c);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    struct listv v;
    listv_open(&v, e);
    const char *ele = c->argv[2].ptr;
    size_t elen = c->argv[2].len;
    void *hdr = count != -1 ? reply_defer(c) : NULL;
    unsigned long llen = listv_len(&v);
    long long index = 0, matches = 0, found = -1, emitted = 0;
    struct ql_cur cur;
    listv_seek(&v, fwd ? 0 : llen - 1, &cur);
    while (cur.pos != LP_NONE && (maxlen == 0 || index < maxlen)) {
        if (ql_cur_eq(&cur, ele, elen)) {
            matches++;
            long long at = fwd ? index : (long long)llen - index - 1;
            if (matches >= rank) {
                if (count != -1) {
                    emitted++;
                    reply_int(c, at);
                    if (count && matches - rank + 1 >= count) break;
                } else {
                    found = at;
                    break;
                }
            }
        }
        index++;
        if (fwd) ql_cur_next(&cur);
        else ql_cur_prev(&cur);
    }
    listv_done(&v);
    if (count != -1) reply_fill_array(c, hdr, emitted);
    else if (found >= 0) reply_int(c, found);
    else reply_null(c);
}

/* ---- in-place writes ------------------------------------------------------ */

void cmd_lset(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        reply_error(c, ERR_NO_KEY);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    long long idx;
    struct argcur a;
    ac_init(&a, c, 2);
    ac_ll(&a, &idx);
    if (!ac_ok(&a)) return;
    struct listv v;
    listv_open(&v, e);
    listv_grow(&v, c->argv[3].len, 1);
    unsigned long at;
    int st = listv_index(&v, idx, &at);
    if (st != HK_OK) {
        listv_done(&v);
        reply_status(c, st);
        return;
    }
    db_written(&k, KEV_LSET);
    listv_set(&v, at, c->argv[3].ptr, c->argv[3].len);
    listv_shrink(&v);
    listv_done(&v);
    reply_ok(c);
}

void cmd_linsert(struct cmd_ctx *c) {
    int after = 0;
    struct argcur a;
    ac_init(&a, c, 2);
    if (ac_is(&a, "AFTER")) after = 1;
    else if (!ac_is(&a, "BEFORE")) ac_fail(&a, HK_ERR_SYNTAX);
    if (!ac_ok(&a)) return;
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    struct listv v;
    listv_open(&v, e);
    /* As in Redis, convert first as if the insert will happen. */
    listv_grow(&v, c->argv[4].len, 1);
    struct ql_cur cur;
    listv_seek(&v, 0, &cur);
    if (!ql_cur_find(&cur, c->argv[3].ptr, c->argv[3].len, 1)) {
        listv_done(&v);
        reply_int(c, -1);
        return;
    }
    db_written(&k, KEV_LINSERT);
    listv_insert(&v, &cur, after, c->argv[4].ptr, c->argv[4].len);
    unsigned long len = listv_len(&v);
    listv_done(&v);
    reply_int(c, (long long)len);
}

void cmd_lrem(struct cmd_ctx *c) {
    long long toremove;
    struct argcur a;
    ac_init(&a, c, 2);
    ac_ll_range(&a, -LLONG_MAX, LLONG_MAX, &toremove, HK_ERR_LONG_RANGE);
    if (!ac_ok(&a)) return;
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    struct listv v;
    listv_open(&v, e);
    const char *ele = c->argv[3].ptr;
    size_t elen = c->argv[3].len;
    int fwd = toremove >= 0;
    unsigned long max = (unsigned long)(fwd ? toremove : -toremove);
    struct ql_cur cur;
    listv_seek(&v, fwd ? 0 : listv_len(&v) - 1, &cur);
    /* Find the first match before reporting: a miss writes nothing. */
    if (!ql_cur_find(&cur, ele, elen, fwd)) {
        listv_done(&v);
        reply_int(c, 0);
        return;
    }
    unsigned long long mark = dirty_mark(c);
    db_written(&k, KEV_LREM);
    unsigned long removed = listv_remove(&v, &cur, fwd, ele, elen, max);
    finish_removal(c, &k, &v);
    dirty_settle(c, mark, (long long)removed);
    reply_int(c, (long long)removed);
}

void cmd_ltrim(struct cmd_ctx *c) {
    long long start, end;
    if (!parse_start_end(c, &start, &end)) return;
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        reply_ok(c);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    struct listv v;
    listv_open(&v, e);
    unsigned long llen = listv_len(&v), ltrim, rtrim;
    if (!clamp_index_range(&start, &end, (long long)llen)) {
        ltrim = llen;
        rtrim = 0;
    } else {
        ltrim = (unsigned long)start;
        rtrim = llen - (unsigned long)end - 1;
    }
    /* Reported even when nothing goes, as Redis notifies "ltrim"; it counts
     * one change per element trimmed, so when none was, nothing
     * propagates. */
    unsigned long long mark = dirty_mark(c);
    db_written(&k, KEV_LTRIM);
    listv_del_range(&v, 0, ltrim);
    if (rtrim) listv_del_range(&v, listv_len(&v) - rtrim, rtrim);
    finish_removal(c, &k, &v);
    dirty_settle(c, mark, (long long)(ltrim + rtrim));
    reply_ok(c);
}

/* ---- moves ------------------------------------------------------------- */

static void move_generic(struct cmd_ctx *c, int from_head, int to_head) {
    struct keyref sk, dk;
    key_of(c, 1, &sk);
    key_of(c, 2, &dk);
    struct kv *se = lookup_write(c, &sk);
    if (!se) {
        reply_null(c);
        return;
    }
    if (!check_type(c, se, OBJ_LIST)) return;
    int same = sk.db == dk.db && sk.klen == dk.klen && memcmp(sk.key, dk.key, sk.klen) == 0;
    struct kv *de = same ? se : lookup_write(c, &dk);
    if (de && !check_type(c, de, OBJ_LIST)) return;

    /* Copy the value out: it lives in the source listpack. */
    struct listv sv;
    listv_open(&sv, se);
    unsigned long at = from_head ? 0 : listv_len(&sv) - 1;
    struct ql_cur cur;
    listv_seek(&sv, at, &cur);
    struct lp_val val;
    ql_cur_get(&cur, &val);
    char *copy = hk_malloc(val.len ? val.len : 1);
    memcpy(copy, val.s, val.len);
    size_t vlen = val.len;
    int pop_ev = from_head ? KEV_LPOP : KEV_RPOP;
    int push_ev = to_head ? KEV_LPUSH : KEV_RPUSH;

    /* Events in Redis's order: the push onto the destination (its "new"
     * first when created), then the pop from the source, then the
     * source's "del" when it emptied; all of it one change. */
    unsigned long long mark = dirty_mark(c);
    if (same) {
        /* Pushing back onto the same list: it cannot have emptied. */
        db_written(&dk, push_ev);
        db_written(&sk, pop_ev);
        listv_del_range(&sv, at, 1);
        listv_grow(&sv, vlen, 1);
        listv_push(&sv, copy, vlen, to_head);
        listv_shrink(&sv);
        listv_done(&sv);
    } else {
        listv_done(&sv);
        if (!de) de = db_put(&dk, listv_new_entry(dk.key, dk.klen), push_ev);
        else db_written(&dk, push_ev);
        struct listv dv;
        listv_open(&dv, de);
        listv_grow(&dv, vlen, 1);
        listv_push(&dv, copy, vlen, to_head);
        listv_done(&dv);
        listv_open(&sv, se);
        db_written(&sk, pop_ev);
        listv_del_range(&sv, at, 1);
        finish_removal(c, &sk, &sv);
    }
    dirty_settle(c, mark, 1);
    reply_bulk(c, copy, vlen);
    hk_free(copy);
}

void cmd_lmove(struct cmd_ctx *c) {
    int from_head = 0, to_head = 0;
    struct argcur a;
    ac_init(&a, c, 3);
    parse_side(&a, &from_head);
    parse_side(&a, &to_head);
    if (!ac_ok(&a)) return;
    move_generic(c, from_head, to_head);
}

void cmd_rpoplpush(struct cmd_ctx *c) { move_generic(c, 0, 1); }

/* ---- LMPOP ------------------------------------------------------------- */

/* LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]: the first key
 * holding a non-empty list is popped from. */
void cmd_lmpop(struct cmd_ctx *c) {
    long long numkeys, count;
    int first, right;
    if (!parse_mpop(c, 1, "left", "right", &numkeys, &first, &right, &count)) return;
    for (int i = 0; i < numkeys; i++) {
        struct keyref k;
        key_of(c, first + i, &k);
        struct kv *e = lookup_write(c, &k);
        if (!e) continue;
        if (!check_type(c, e, OBJ_LIST)) return;
        if (listv_len_of(e) == 0) continue;
        pop_range(c, &k, e, !right, (unsigned long)count, 1);
        return;
    }
    reply_null_array(c);
}
