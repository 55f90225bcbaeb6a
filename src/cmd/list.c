/* list.c - the list type and its non-blocking commands: LPUSH, RPUSH,
 * LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LINDEX, LSET, LRANGE, LINSERT, LREM,
 * LTRIM, LPOS, LMOVE, RPOPLPUSH and LMPOP, with Redis 7.2's replies and
 * error texts.
 *
 * A small list is one listpack (encoding "listpack"). Past the limit set by
 * list-max-listpack-size it becomes a quicklist: a doubly linked list of
 * listpack nodes, each bounded by the same setting (negative = a byte limit
 * of 4k..64k, positive = an entry count), with elements too large for any
 * node kept alone in a "plain" node. It converts back to a listpack when it
 * shrinks to one node of at most half the limit, as Redis 7.2 does, so a
 * list near the boundary does not flip on every push and pop.
 *
 * Every operation is written once against the quicklist; a listpack-encoded
 * list is handled as a one-node quicklist on the stack whose node never
 * splits ("single" mode). Handlers run with their keys' shards locked by
 * dispatch. Blocking variants (BLPOP...) are not here. */
#include "../core/alloc.h"
#include "../core/listpack.h"
#include "../core/util.h"
#include "../server/config.h"
#include "cmds.h"
#include "cmdutil.h"
#include "../types/digest.h"
#include "../types/types.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* ---- quicklist ------------------------------------------------------------ */

struct qnode {
    struct qnode *prev, *next;
    lpack *lp;
    int plain; /* holds one element too large to share a node */
};

struct qlist {
    struct qnode *head, *tail;
    unsigned long count; /* elements */
    unsigned long len;   /* nodes */
    int single;          /* a listpack-encoded list: one node, never split */
};

/* Nodes below this many bytes are never "too big" for a positive fill, the
 * same safety limit Redis applies to count-limited nodes. */
#define QL_SIZE_SAFETY 8192
/* Per-element overhead assumed when checking whether a push still fits. */
#define QL_ELEM_OVERHEAD 8
#define QL_LP_HEADER 12

static const size_t ql_size_levels[] = {4096, 8192, 16384, 32768, 65536};

/* Limits of one node for a list-max-listpack-size value. */
static void ql_limits(long long fill, size_t *sz, unsigned long *cnt) {
    *sz = SIZE_MAX;
    *cnt = ULONG_MAX;
    if (fill >= 0) {
        *cnt = fill == 0 ? 1 : (unsigned long)fill;
    } else {
        unsigned long long off = (unsigned long long)(-(fill + 1));
        if (off > 4) off = 4;
        *sz = ql_size_levels[off];
    }
}

static int ql_exceeds(long long fill, size_t new_sz, unsigned long new_count) {
    size_t sz;
    unsigned long cnt;
    ql_limits(fill, &sz, &cnt);
    if (sz != SIZE_MAX) return new_sz > sz;
    if (new_sz > QL_SIZE_SAFETY) return 1;
    return new_count > cnt;
}

static int ql_is_large(long long fill, size_t sz) {
    size_t lim;
    unsigned long cnt;
    if (fill >= 0) return sz > QL_SIZE_SAFETY;
    ql_limits(fill, &lim, &cnt);
    return sz > lim;
}

static int ql_allow_insert(const struct qnode *n, long long fill, size_t sz) {
    if (!n || n->plain || ql_is_large(fill, sz)) return 0;
    return !ql_exceeds(fill, lp_bytes(n->lp) + sz + QL_ELEM_OVERHEAD, lp_count(n->lp) + 1);
}

static int ql_allow_merge(const struct qnode *a, const struct qnode *b, long long fill) {
    if (!a || !b || a->plain || b->plain) return 0;
    return !ql_exceeds(fill, lp_bytes(a->lp) + lp_bytes(b->lp) - QL_LP_HEADER, lp_count(a->lp) + lp_count(b->lp));
}

static struct qnode *ql_node_new(lpack *lp, int plain) {
    struct qnode *n = hk_malloc(sizeof(*n));
    n->prev = n->next = NULL;
    n->lp = lp;
    n->plain = plain;
    return n;
}

/* Link n after `at` (after=1) or before it; at NULL means the list is empty. */
static void ql_link(struct qlist *ql, struct qnode *at, struct qnode *n, int after) {
    if (!at) {
        ql->head = ql->tail = n;
    } else if (after) {
        n->prev = at;
        n->next = at->next;
        if (at->next) at->next->prev = n;
        else ql->tail = n;
        at->next = n;
    } else {
        n->next = at;
        n->prev = at->prev;
        if (at->prev) at->prev->next = n;
        else ql->head = n;
        at->prev = n;
    }
    ql->len++;
}

static void ql_unlink_free(struct qlist *ql, struct qnode *n) {
    if (n->prev) n->prev->next = n->next;
    else ql->head = n->next;
    if (n->next) n->next->prev = n->prev;
    else ql->tail = n->prev;
    ql->len--;
    lp_free(n->lp);
    hk_free(n);
}

/* Drop a node that became empty (never the node of a single-mode list). */
static void ql_drop_if_empty(struct qlist *ql, struct qnode *n) {
    if (!ql->single && lp_count(n->lp) == 0) ql_unlink_free(ql, n);
}

static void ql_free(struct qlist *ql) {
    struct qnode *n = ql->head;
    while (n) {
        struct qnode *next = n->next;
        lp_free(n->lp);
        hk_free(n);
        n = next;
    }
    hk_free(ql);
}

static struct qnode *ql_new_node_with(const char *s, size_t len, int plain) {
    return ql_node_new(lp_append(lp_new(), s, len), plain);
}

static void ql_push(struct qlist *ql, long long fill, const char *s, size_t len, int head) {
    struct qnode *n = head ? ql->head : ql->tail;
    if (ql->single) {
        n->lp = head ? lp_prepend(n->lp, s, len) : lp_append(n->lp, s, len);
    } else if (ql_allow_insert(n, fill, len)) {
        n->lp = head ? lp_prepend(n->lp, s, len) : lp_append(n->lp, s, len);
    } else {
        ql_link(ql, n, ql_new_node_with(s, len, ql_is_large(fill, len)), !head);
    }
    ql->count++;
}

/* Node holding element idx (0-based, in range) and its offset in the node. */
static struct qnode *ql_locate(const struct qlist *ql, unsigned long idx, unsigned long *off) {
    if (idx < ql->count / 2) {
        struct qnode *n = ql->head;
        while (idx >= lp_count(n->lp)) {
            idx -= lp_count(n->lp);
            n = n->next;
        }
        *off = idx;
        return n;
    }
    unsigned long back = ql->count - 1 - idx; /* distance from the tail */
    struct qnode *n = ql->tail;
    while (back >= lp_count(n->lp)) {
        back -= lp_count(n->lp);
        n = n->prev;
    }
    *off = lp_count(n->lp) - 1 - back;
    return n;
}

/* Delete n elements starting at absolute index start (both in range). */
static void ql_del_range(struct qlist *ql, unsigned long start, unsigned long n) {
    if (n == 0 || start >= ql->count) return;
    if (n > ql->count - start) n = ql->count - start;
    unsigned long off;
    struct qnode *node = ql_locate(ql, start, &off);
    while (n > 0 && node) {
        unsigned long avail = lp_count(node->lp) - off;
        unsigned long del = n < avail ? n : avail;
        struct qnode *next = node->next;
        if (off == 0 && del == lp_count(node->lp) && !ql->single) {
            ql_unlink_free(ql, node);
        } else {
            node->lp = lp_delete_range(node->lp, (long long)off, del);
        }
        ql->count -= del;
        n -= del;
        off = 0;
        node = next;
    }
}

/* Append b's elements to a and free b (a and b are neighbours, a first). */
static struct qnode *ql_merge(struct qlist *ql, struct qnode *a, struct qnode *b) {
    struct lp_val v;
    for (size_t p = lp_first(b->lp); p != LP_NONE; p = lp_next(b->lp, p)) {
        lp_get(b->lp, p, &v);
        a->lp = lp_append(a->lp, v.s, v.len);
    }
    ql_unlink_free(ql, b);
    return a;
}

/* After a split, merge neighbours around center that fit in one node. */
static void ql_merge_around(struct qlist *ql, long long fill, struct qnode *center) {
    struct qnode *prev = center->prev, *prev_prev = prev ? prev->prev : NULL;
    struct qnode *next = center->next, *next_next = next ? next->next : NULL;
    if (ql_allow_merge(prev_prev, prev, fill)) ql_merge(ql, prev_prev, prev);
    if (ql_allow_merge(next, next_next, fill)) ql_merge(ql, next, next_next);
    struct qnode *target = center;
    if (ql_allow_merge(center->prev, center, fill)) target = ql_merge(ql, center->prev, center);
    if (ql_allow_merge(target, target->next, fill)) ql_merge(ql, target, target->next);
}

/* Split node n at off: after=1 keeps [0..off] in n and returns a new node
 * (not yet linked) with the rest; after=0 keeps [off..] in n and returns the
 * elements before off. */
static struct qnode *ql_split(struct qnode *n, unsigned long off, int after) {
    struct qnode *nn = ql_node_new(lp_dup(n->lp), 0);
    unsigned long cnt = lp_count(n->lp);
    if (after) {
        n->lp = lp_delete_range(n->lp, (long long)off + 1, cnt);
        nn->lp = lp_delete_range(nn->lp, 0, off + 1);
    } else {
        n->lp = lp_delete_range(n->lp, 0, off);
        nn->lp = lp_delete_range(nn->lp, (long long)off, cnt);
    }
    return nn;
}

/* Insert s/len next to the element at pos (offset off) of node n. */
static void ql_insert_at(struct qlist *ql, long long fill, struct qnode *n, size_t pos, unsigned long off,
                         int after, const char *s, size_t len) {
    ql->count++;
    if (ql->single) {
        n->lp = lp_insert(n->lp, after ? lp_next(n->lp, pos) : pos, s, len, NULL);
        return;
    }
    unsigned long cnt = lp_count(n->lp);
    int full = !ql_allow_insert(n, fill, len);
    int at_tail = after && off == cnt - 1;
    int at_head = !after && off == 0;
    int avail_next = at_tail && ql_allow_insert(n->next, fill, len);
    int avail_prev = at_head && ql_allow_insert(n->prev, fill, len);
    if (ql_is_large(fill, len)) {
        struct qnode *big = ql_new_node_with(s, len, 1);
        if (n->plain || at_tail || at_head) {
            ql_link(ql, n, big, after);
        } else {
            struct qnode *rest = ql_split(n, off, after);
            ql_link(ql, n, big, after);
            ql_link(ql, big, rest, after);
        }
        return;
    }
    if (!full) {
        n->lp = lp_insert(n->lp, after ? lp_next(n->lp, pos) : pos, s, len, NULL);
    } else if (at_tail && avail_next) {
        n->next->lp = lp_prepend(n->next->lp, s, len);
    } else if (at_head && avail_prev) {
        n->prev->lp = lp_append(n->prev->lp, s, len);
    } else if (at_tail || at_head) {
        ql_link(ql, n, ql_new_node_with(s, len, 0), after);
    } else {
        struct qnode *nn = ql_split(n, off, after);
        nn->lp = after ? lp_prepend(nn->lp, s, len) : lp_append(nn->lp, s, len);
        ql_link(ql, n, nn, after);
        ql_merge_around(ql, fill, n);
    }
}

/* Replace element idx (in range) with s/len. */
static void ql_replace(struct qlist *ql, long long fill, unsigned long idx, const char *s, size_t len) {
    unsigned long off;
    struct qnode *n = ql_locate(ql, idx, &off);
    size_t pos = lp_seek(n->lp, (long long)off);
    if (ql->single) {
        n->lp = lp_replace(n->lp, pos, s, len, NULL);
        return;
    }
    struct lp_val old;
    lp_get(n->lp, pos, &old);
    int large = ql_is_large(fill, len);
    if (!n->plain && !large &&
        !ql_exceeds(fill, lp_bytes(n->lp) - old.len + len, lp_count(n->lp))) {
        n->lp = lp_replace(n->lp, pos, s, len, NULL);
        return;
    }
    if (n->plain) {
        if (large) {
            n->lp = lp_replace(n->lp, pos, s, len, NULL);
        } else {
            ql_insert_at(ql, fill, n, pos, 0, 1, s, len);
            ql->count--;
            ql_unlink_free(ql, n);
        }
        return;
    }
    /* The node would overflow: the new value goes into a node of its own
     * right after the old element, which is then removed. */
    unsigned long cnt = lp_count(n->lp);
    struct qnode *rest = off != cnt - 1 ? ql_split(n, off, 1) : NULL;
    struct qnode *nn = ql_new_node_with(s, len, large);
    ql_link(ql, n, nn, 1);
    if (rest) ql_link(ql, nn, rest, 1);
    if (lp_count(n->lp) == 1) ql_unlink_free(ql, n);
    else n->lp = lp_delete(n->lp, lp_last(n->lp), NULL);
}

static struct qlist *ql_dup(const struct qlist *src) {
    struct qlist *ql = hk_malloc(sizeof(*ql));
    *ql = (struct qlist){0};
    for (struct qnode *n = src->head; n; n = n->next) ql_link(ql, ql->tail, ql_node_new(lp_dup(n->lp), n->plain), 1);
    ql->count = src->count;
    return ql;
}

/* ---- value lifecycle (type table) ------------------------------------------ */

static void list_free(struct kv *e) {
    if (kv_enc(e) == ENC_LISTPACK) lp_free(kv_ptr(e));
    else ql_free(kv_ptr(e));
}

static size_t list_usage(const struct kv *e, size_t samples) {
    if (kv_enc(e) == ENC_LISTPACK) return lp_bytes(kv_ptr(e));
    const struct qlist *ql = kv_ptr(e);
    size_t total = sizeof(*ql), seen = 0, elems = 0;
    const struct qnode *n = ql->head;
    for (; n && (samples == 0 || seen < samples); n = n->next, seen++) {
        total += sizeof(*n) + lp_bytes(n->lp);
        elems += lp_count(n->lp);
    }
    /* Extrapolate the unsampled nodes from the average per element. */
    if (n && elems) total += (size_t)((double)(total - sizeof(*ql)) / (double)elems * (double)(ql->count - elems));
    return total;
}

static struct kv *list_dup(const struct kv *e, const char *key, size_t klen, long long expire) {
    void *v = kv_enc(e) == ENC_LISTPACK ? (void *)lp_dup(kv_ptr(e)) : (void *)ql_dup(kv_ptr(e));
    return kv_new_ptr(key, klen, OBJ_LIST, kv_enc(e), v, expire);
}

static void lp_digest_all(const lpack *lp, unsigned char digest[20]) {
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p)) {
        struct lp_val v;
        lp_get(lp, p, &v);
        dg_mix(digest, v.s, v.len);
    }
}

/* Elements in order, each mixed in (integers in decimal). */
static void list_digest(const struct kv *e, unsigned char digest[20]) {
    if (kv_enc(e) == ENC_LISTPACK) {
        lp_digest_all(kv_ptr(e), digest);
        return;
    }
    const struct qlist *ql = kv_ptr(e);
    for (const struct qnode *n = ql->head; n; n = n->next) lp_digest_all(n->lp, digest);
}

const struct type_ops list_type_ops = {
    .name = "list", .free = list_free, .dup = list_dup, .usage = list_usage, .digest = list_digest,
};

/* ---- a list value seen as a quicklist ------------------------------------ */

/* A handle on the list of entry e: ql is the real quicklist, or a stack
 * one-node quicklist over the listpack. lv_done stores a moved listpack
 * back into the entry. */
struct lview {
    struct kv *e;
    struct qlist *ql;
    struct qlist tmp;
    struct qnode tmpn;
    long long fill;
};

static void lv_open(struct lview *v, struct kv *e) {
    v->e = e;
    v->fill = TLIM(list_max_listpack_size);
    if (kv_enc(e) == ENC_QUICKLIST) {
        v->ql = kv_ptr(e);
        return;
    }
    v->tmpn = (struct qnode){NULL, NULL, kv_ptr(e), 0};
    v->tmp = (struct qlist){&v->tmpn, &v->tmpn, lp_count(v->tmpn.lp), 1, 1};
    v->ql = &v->tmp;
}

static void lv_done(struct lview *v) {
    if (v->ql == &v->tmp) kv_set_ptr(v->e, v->tmpn.lp);
}

/* Before adding add_count elements of add_bytes in total: a listpack that
 * would pass the limit becomes a quicklist. */
static void lv_grow(struct lview *v, size_t add_bytes, unsigned long add_count) {
    if (v->ql != &v->tmp) return;
    lpack *lp = v->tmpn.lp;
    if (!ql_exceeds(v->fill, lp_bytes(lp) + add_bytes, lp_count(lp) + add_count)) return;
    struct qlist *ql = hk_malloc(sizeof(*ql));
    *ql = (struct qlist){0};
    ql->count = lp_count(lp);
    if (ql->count) ql_link(ql, NULL, ql_node_new(lp, 0), 1);
    else lp_free(lp);
    kv_set_ptr(v->e, ql);
    kv_set_enc(v->e, ENC_QUICKLIST);
    v->ql = ql;
}

/* After removing elements: a quicklist down to one packed node of at most
 * half the limit becomes a listpack again. */
static void lv_shrink(struct lview *v) {
    struct qlist *ql = v->ql;
    if (ql == &v->tmp) return;
    if (ql->len != 1 || ql->head->plain) return;
    size_t sz;
    unsigned long cnt;
    ql_limits(v->fill, &sz, &cnt);
    sz /= 2;
    cnt /= 2;
    if (lp_bytes(ql->head->lp) > sz || ql->count > cnt) return;
    lpack *lp = ql->head->lp;
    hk_free(ql->head);
    hk_free(ql);
    kv_set_ptr(v->e, lp);
    kv_set_enc(v->e, ENC_LISTPACK);
    v->tmpn = (struct qnode){NULL, NULL, lp, 0};
    v->tmp = (struct qlist){&v->tmpn, &v->tmpn, lp_count(lp), 1, 1};
    v->ql = &v->tmp;
}

/* Finish a removal: delete the key when the list emptied (the entry is
 * gone after that), else store the listpack and try converting back. */
static void lv_removed(struct lview *v, const struct keyref *k, struct cmd_ctx *c) {
    if (v->ql->count == 0) {
        lv_done(v);
        db_delete(k, c->now_ms, KEV_DEL);
        return;
    }
    lv_shrink(v);
    lv_done(v);
}

/* Element cursor over the quicklist in either direction. */
struct lcur {
    struct qnode *n;
    size_t pos;
};

static void lc_seek(struct lcur *cur, const struct qlist *ql, unsigned long idx) {
    unsigned long off;
    cur->n = ql_locate(ql, idx, &off);
    cur->pos = lp_seek(cur->n->lp, (long long)off);
}

static void lc_next(struct lcur *cur) {
    cur->pos = lp_next(cur->n->lp, cur->pos);
    while (cur->pos == LP_NONE && cur->n->next) {
        cur->n = cur->n->next;
        cur->pos = lp_first(cur->n->lp);
    }
}

static void lc_prev(struct lcur *cur) {
    cur->pos = lp_prev(cur->n->lp, cur->pos);
    while (cur->pos == LP_NONE && cur->n->prev) {
        cur->n = cur->n->prev;
        cur->pos = lp_last(cur->n->lp);
    }
}

/* ---- argument parsing -------------------------------------------------- */

/* Redis's getLongFromObjectOrReply: msg (or the generic text) on failure. */
static int arg_long(struct cmd_ctx *c, int i, long long *out, const char *msg) {
    if (hk_str2ll(c->argv[i].ptr, c->argv[i].len, out)) return 1;
    reply_error(c, msg ? msg : ERR_NOT_INT);
    return 0;
}

/* getRangeLongFromObjectOrReply. */
static int arg_long_range(struct cmd_ctx *c, int i, long long min, long long max, long long *out, const char *msg) {
    if (!arg_long(c, i, out, msg)) return 0;
    if (*out < min || *out > max) {
        if (msg) reply_error(c, msg);
        else reply_errorf(c, "ERR value is out of range, value must between %lld and %lld", min, max);
        return 0;
    }
    return 1;
}

/* getPositiveLongFromObjectOrReply: one message for "not a number" and
 * "negative" alike, as Redis sends. */
static int arg_positive(struct cmd_ctx *c, int i, long long *out, const char *msg) {
    if (!hk_str2ll(c->argv[i].ptr, c->argv[i].len, out) || *out < 0) {
        reply_error(c, msg ? msg : "ERR value is out of range, must be positive");
        return 0;
    }
    return 1;
}

/* LEFT -> 1 (head), RIGHT -> 0 (tail); syntax error otherwise. */
static int arg_side(struct cmd_ctx *c, int i, int *head) {
    if (arg_is(&c->argv[i], "left")) *head = 1;
    else if (arg_is(&c->argv[i], "right")) *head = 0;
    else {
        reply_error(c, ERR_SYNTAX);
        return 0;
    }
    return 1;
}

/* ---- replies ----------------------------------------------------------- */

static void reply_lval(struct cmd_ctx *c, const lpack *lp, size_t pos) {
    struct lp_val v;
    lp_get(lp, pos, &v);
    reply_bulk(c, v.s, v.len);
}

/* Reply elements [start..end] (valid, start <= end) as an array, walking
 * backwards from end when reverse. */
static void reply_range(struct cmd_ctx *c, const struct qlist *ql, unsigned long start, unsigned long end,
                        int reverse) {
    unsigned long n = end - start + 1;
    reply_array(c, (long long)n);
    struct lcur cur;
    lc_seek(&cur, ql, reverse ? end : start);
    while (n--) {
        reply_lval(c, cur.n->lp, cur.pos);
        if (n) {
            if (reverse) lc_prev(&cur);
            else lc_next(&cur);
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
        e = db_put(&k, kv_new_ptr(k.key, k.klen, OBJ_LIST, ENC_LISTPACK, lp_new(), -1), head ? KEV_LPUSH : KEV_RPUSH);
    } else {
        db_written(&k, head ? KEV_LPUSH : KEV_RPUSH);
    }
    struct lview v;
    lv_open(&v, e);
    size_t add = 0;
    for (int i = 2; i < c->argc; i++) add += c->argv[i].len;
    lv_grow(&v, add, (unsigned long)(c->argc - 2));
    for (int i = 2; i < c->argc; i++) ql_push(v.ql, v.fill, c->argv[i].ptr, c->argv[i].len, head);
    unsigned long len = v.ql->count;
    lv_done(&v);
    reply_int(c, (long long)len);
}

void cmd_lpush(struct cmd_ctx *c) { push_generic(c, 1, 0); }
void cmd_rpush(struct cmd_ctx *c) { push_generic(c, 0, 0); }
void cmd_lpushx(struct cmd_ctx *c) { push_generic(c, 1, 1); }
void cmd_rpushx(struct cmd_ctx *c) { push_generic(c, 0, 1); }

/* ---- pop ---------------------------------------------------------------- */

/* Reply up to count elements from one end of the list of e (key k) and
 * remove them; with_key nests the reply as [key, [elements]] (LMPOP), and
 * then propagates as the LPOP/RPOP of that key. Deletes the key when the
 * list empties. */
static void pop_range(struct cmd_ctx *c, const struct keyref *k, struct kv *e, int head, unsigned long count,
                      int with_key) {
    struct lview v;
    lv_open(&v, e);
    unsigned long llen = v.ql->count;
    unsigned long n = count > llen ? llen : count;
    if (with_key) {
        reply_array(c, 2);
        reply_bulk(c, k->key, k->klen);
    }
    if (with_key) {
        prop_begin(c, 3);
        prop_arg_cstr(c, head ? "LPOP" : "RPOP");
        prop_arg(c, k->key, k->klen);
        prop_arg_ll(c, (long long)n);
    }
    db_written(k, head ? KEV_LPOP : KEV_RPOP);
    if (head) {
        reply_range(c, v.ql, 0, n - 1, 0);
        ql_del_range(v.ql, 0, n);
    } else {
        reply_range(c, v.ql, llen - n, llen - 1, 1);
        ql_del_range(v.ql, llen - n, n);
    }
    lv_removed(&v, k, c);
}

static void pop_generic(struct cmd_ctx *c, int head) {
    int hascount = c->argc == 3;
    long long count = 0;
    if (c->argc > 3) {
        reply_arity(c);
        return;
    }
    if (hascount && !arg_positive(c, 2, &count, NULL)) return;
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
        struct lview v;
        lv_open(&v, e);
        struct qnode *n = head ? v.ql->head : v.ql->tail;
        reply_lval(c, n->lp, head ? lp_first(n->lp) : lp_last(n->lp));
        db_written(&k, head ? KEV_LPOP : KEV_RPOP);
        ql_del_range(v.ql, head ? 0 : v.ql->count - 1, 1);
        lv_removed(&v, &k, c);
        return;
    }
    pop_range(c, &k, e, head, (unsigned long)count, 0);
}

void cmd_lpop(struct cmd_ctx *c) { pop_generic(c, 1); }
void cmd_rpop(struct cmd_ctx *c) { pop_generic(c, 0); }

/* ---- reads -------------------------------------------------------------- */

static unsigned long list_len(struct kv *e) {
    if (kv_enc(e) == ENC_LISTPACK) return lp_count(kv_ptr(e));
    return ((struct qlist *)kv_ptr(e))->count;
}

void cmd_llen(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    reply_int(c, (long long)list_len(e));
}

/* Absolute index for a possibly negative one; -1 when out of range. */
static long long abs_index(long long idx, unsigned long len) {
    if (idx < 0) idx += (long long)len;
    if (idx < 0 || idx >= (long long)len) return -1;
    return idx;
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
    if (!arg_long(c, 2, &idx, NULL)) return;
    struct lview v;
    lv_open(&v, e);
    idx = abs_index(idx, v.ql->count);
    if (idx < 0) {
        reply_null(c);
        return;
    }
    struct lcur cur;
    lc_seek(&cur, v.ql, (unsigned long)idx);
    reply_lval(c, cur.n->lp, cur.pos);
}

/* Clamp [start, end] as LRANGE/LTRIM do; 0 when the range is empty. */
static int clamp_range(long long *start, long long *end, unsigned long llen) {
    long long len = (long long)llen;
    if (*start < 0) *start += len;
    if (*end < 0) *end += len;
    if (*start < 0) *start = 0;
    if (*start > *end || *start >= len) return 0;
    if (*end >= len) *end = len - 1;
    return 1;
}

void cmd_lrange(struct cmd_ctx *c) {
    long long start, end;
    if (!arg_long(c, 2, &start, NULL) || !arg_long(c, 3, &end, NULL)) return;
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_array(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    struct lview v;
    lv_open(&v, e);
    if (!clamp_range(&start, &end, v.ql->count)) {
        reply_array(c, 0);
        return;
    }
    reply_range(c, v.ql, (unsigned long)start, (unsigned long)end, 0);
}

#define ERR_RANK_ZERO                                                                                              \
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start " \
    "from the end of the list"

void cmd_lpos(struct cmd_ctx *c) {
    long long rank = 1, count = -1, maxlen = 0;
    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(&c->argv[j], "rank") && more) {
            j++;
            if (!arg_long_range(c, j, -LLONG_MAX, LLONG_MAX, &rank, NULL)) return;
            if (rank == 0) {
                reply_error(c, ERR_RANK_ZERO);
                return;
            }
        } else if (arg_is(&c->argv[j], "count") && more) {
            j++;
            if (!arg_positive(c, j, &count, "ERR COUNT can't be negative")) return;
        } else if (arg_is(&c->argv[j], "maxlen") && more) {
            j++;
            if (!arg_positive(c, j, &maxlen, "ERR MAXLEN can't be negative")) return;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
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
    struct lview v;
    lv_open(&v, e);
    const char *ele = c->argv[2].ptr;
    size_t elen = c->argv[2].len;
    void *hdr = count != -1 ? reply_defer(c) : NULL;
    unsigned long llen = v.ql->count;
    long long index = 0, matches = 0, found = -1, emitted = 0;
    struct lcur cur;
    lc_seek(&cur, v.ql, fwd ? 0 : llen - 1);
    while (cur.pos != LP_NONE && (maxlen == 0 || index < maxlen)) {
        if (lp_eq(cur.n->lp, cur.pos, ele, elen)) {
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
        if (fwd) lc_next(&cur);
        else lc_prev(&cur);
    }
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
    if (!arg_long(c, 2, &idx, NULL)) return;
    struct lview v;
    lv_open(&v, e);
    lv_grow(&v, c->argv[3].len, 1);
    long long at = abs_index(idx, v.ql->count);
    if (at < 0) {
        lv_done(&v);
        reply_status(c, HK_ERR_INDEX_RANGE);
        return;
    }
    db_written(&k, KEV_LSET);
    ql_replace(v.ql, v.fill, (unsigned long)at, c->argv[3].ptr, c->argv[3].len);
    lv_shrink(&v);
    lv_done(&v);
    reply_ok(c);
}

void cmd_linsert(struct cmd_ctx *c) {
    int after;
    if (arg_is(&c->argv[2], "after")) after = 1;
    else if (arg_is(&c->argv[2], "before")) after = 0;
    else {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    struct lview v;
    lv_open(&v, e);
    /* As in Redis, convert first as if the insert will happen. */
    lv_grow(&v, c->argv[4].len, 1);
    const char *piv = c->argv[3].ptr;
    size_t plen = c->argv[3].len;
    for (struct qnode *n = v.ql->head; n; n = n->next) {
        unsigned long off = 0;
        for (size_t p = lp_first(n->lp); p != LP_NONE; p = lp_next(n->lp, p), off++) {
            if (lp_eq(n->lp, p, piv, plen)) {
                db_written(&k, KEV_LINSERT);
                ql_insert_at(v.ql, v.fill, n, p, off, after, c->argv[4].ptr, c->argv[4].len);
                unsigned long len = v.ql->count;
                lv_done(&v);
                reply_int(c, (long long)len);
                return;
            }
        }
    }
    lv_done(&v);
    reply_int(c, -1);
}

void cmd_lrem(struct cmd_ctx *c) {
    long long toremove;
    if (!arg_long_range(c, 2, -LLONG_MAX, LLONG_MAX, &toremove, NULL)) return;
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    struct lview v;
    lv_open(&v, e);
    struct qlist *ql = v.ql;
    const char *ele = c->argv[3].ptr;
    size_t elen = c->argv[3].len;
    long long removed = 0;
    int fwd = toremove >= 0;
    if (!fwd) toremove = -toremove;
    struct qnode *n = fwd ? ql->head : ql->tail;
    while (n) {
        struct qnode *other = fwd ? n->next : n->prev;
        int done = 0;
        size_t p = fwd ? lp_first(n->lp) : lp_last(n->lp);
        while (p != LP_NONE) {
            if (!lp_eq(n->lp, p, ele, elen)) {
                p = fwd ? lp_next(n->lp, p) : lp_prev(n->lp, p);
                continue;
            }
            size_t next;
            if (!removed) db_written(&k, KEV_LREM);
            n->lp = lp_delete(n->lp, p, &next);
            ql->count--;
            removed++;
            if (toremove && removed == toremove) {
                done = 1;
                break;
            }
            if (fwd) p = next;
            else p = next == LP_NONE ? lp_last(n->lp) : lp_prev(n->lp, next);
        }
        ql_drop_if_empty(ql, n);
        if (done) break;
        n = other;
    }
    if (removed) {
        lv_removed(&v, &k, c);
    } else {
        lv_done(&v);
    }
    reply_int(c, removed);
}

void cmd_ltrim(struct cmd_ctx *c) {
    long long start, end;
    if (!arg_long(c, 2, &start, NULL) || !arg_long(c, 3, &end, NULL)) return;
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        reply_ok(c);
        return;
    }
    if (!check_type(c, e, OBJ_LIST)) return;
    struct lview v;
    lv_open(&v, e);
    unsigned long llen = v.ql->count, ltrim, rtrim;
    if (!clamp_range(&start, &end, llen)) {
        ltrim = llen;
        rtrim = 0;
    } else {
        ltrim = (unsigned long)start;
        rtrim = llen - (unsigned long)end - 1;
    }
    /* Reported even when nothing goes, as Redis notifies "ltrim". */
    db_written(&k, KEV_LTRIM);
    ql_del_range(v.ql, 0, ltrim);
    if (rtrim) ql_del_range(v.ql, v.ql->count - rtrim, rtrim);
    lv_removed(&v, &k, c);
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
    struct lview sv;
    lv_open(&sv, se);
    struct qnode *n = from_head ? sv.ql->head : sv.ql->tail;
    struct lp_val val;
    lp_get(n->lp, from_head ? lp_first(n->lp) : lp_last(n->lp), &val);
    char *copy = hk_malloc(val.len ? val.len : 1);
    memcpy(copy, val.s, val.len);
    size_t vlen = val.len;
    db_written(&sk, from_head ? KEV_LPOP : KEV_RPOP);
    ql_del_range(sv.ql, from_head ? 0 : sv.ql->count - 1, 1);
    int push_ev = to_head ? KEV_LPUSH : KEV_RPUSH;

    if (same) {
        /* Pushing back onto the same list: it cannot have emptied. */
        db_written(&dk, push_ev);
        lv_grow(&sv, vlen, 1);
        ql_push(sv.ql, sv.fill, copy, vlen, to_head);
        lv_shrink(&sv);
        lv_done(&sv);
    } else {
        lv_done(&sv);
        if (!de) de = db_put(&dk, kv_new_ptr(dk.key, dk.klen, OBJ_LIST, ENC_LISTPACK, lp_new(), -1), push_ev);
        else db_written(&dk, push_ev);
        struct lview dv;
        lv_open(&dv, de);
        lv_grow(&dv, vlen, 1);
        ql_push(dv.ql, dv.fill, copy, vlen, to_head);
        lv_done(&dv);
        lv_open(&sv, se);
        lv_removed(&sv, &sk, c);
    }
    reply_bulk(c, copy, vlen);
    hk_free(copy);
}

void cmd_lmove(struct cmd_ctx *c) {
    int from_head, to_head;
    if (!arg_side(c, 3, &from_head) || !arg_side(c, 4, &to_head)) return;
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
        if (list_len(e) == 0) continue;
        pop_range(c, &k, e, !right, (unsigned long)count, 1);
        return;
    }
    reply_null_array(c);
}
