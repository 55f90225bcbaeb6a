/* list.c - the list value: the quicklist of listpack nodes, the view that
 * makes a listpack-encoded list look like a one-node quicklist, the element
 * cursor, and list_type_ops (free, dup, usage, digest); see list.h for the
 * encodings and the contracts. It is not the list commands (src/cmd/list.c
 * parses, replies, reports writes and deletes emptied keys) and holds no
 * policy of its own beyond the node limits and the conversion thresholds. */
#include "list.h"

#include "../core/alloc.h"
#include "../store/kv.h"
#include "digest.h"
#include "types.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* ---- quicklist ------------------------------------------------------------ */

/* Nodes below this many bytes are never "too big" for a positive fill, the
 * same safety limit Redis applies to count-limited nodes. */
#define QL_SIZE_SAFETY 8192
/* Per-element overhead assumed when checking whether a push still fits. */
#define QL_ELEM_OVERHEAD 8
#define QL_LP_HEADER 12

static const size_t ql_size_levels[] = {4096, 8192, 16384, 32768, 65536};

void ql_limits(long long fill, size_t *sz, unsigned long *cnt) {
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

/* Whether a node of new_sz bytes and new_count elements would pass fill. */
static int ql_exceeds(long long fill, size_t new_sz, unsigned long new_count) {
    size_t sz;
    unsigned long cnt;
    ql_limits(fill, &sz, &cnt);
    if (sz != SIZE_MAX) return new_sz > sz;
    if (new_sz > QL_SIZE_SAFETY) return 1;
    return new_count > cnt;
}

/* Whether an element of sz bytes is too large to share a node. */
static int ql_is_large(long long fill, size_t sz) {
    size_t lim;
    unsigned long cnt;
    if (fill >= 0) return sz > QL_SIZE_SAFETY;
    ql_limits(fill, &lim, &cnt);
    return sz > lim;
}

/* Whether node n (may be NULL) can take one more element of sz bytes. */
static int ql_allow_insert(const struct qnode *n, long long fill, size_t sz) {
    if (!n || n->plain || ql_is_large(fill, sz)) return 0;
    return !ql_exceeds(fill, lp_bytes(n->lp) + sz + QL_ELEM_OVERHEAD, lp_count(n->lp) + 1);
}

/* Whether neighbours a and b (either may be NULL) fit in one node. */
static int ql_allow_merge(const struct qnode *a, const struct qnode *b, long long fill) {
    if (!a || !b || a->plain || b->plain) return 0;
    return !ql_exceeds(fill, lp_bytes(a->lp) + lp_bytes(b->lp) - QL_LP_HEADER, lp_count(a->lp) + lp_count(b->lp));
}

/* A new unlinked node owning lp. */
static struct qnode *ql_node_new(lpack *lp, int plain) {
    struct qnode *n = hk_malloc(sizeof(*n));
    n->prev = n->next = NULL;
    n->lp = lp;
    n->plain = plain;
    return n;
}

static struct qnode *ql_new_node_with(const char *s, size_t len, int plain) {
    return ql_node_new(lp_append(lp_new(), s, len), plain);
}

/* Link n after `at` (after=1) or before it; at NULL means the list is
 * empty. Element counts are the caller's to keep. */
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

/* Unlink n and free it with its listpack; its elements must already be
 * out of ql->count (or be uncounted by the caller). */
static void ql_unlink_free(struct qlist *ql, struct qnode *n) {
    if (n->prev) n->prev->next = n->next;
    else ql->head = n->next;
    if (n->next) n->next->prev = n->prev;
    else ql->tail = n->prev;
    ql->len--;
    lp_free(n->lp);
    hk_free(n);
}

/* Drop a node that became empty; a single-mode list keeps its one node,
 * since the entry still points at that listpack. */
static void ql_drop_if_empty(struct qlist *ql, struct qnode *n) {
    if (!ql->single && lp_count(n->lp) == 0) ql_unlink_free(ql, n);
}

struct qlist *ql_new(void) {
    struct qlist *ql = hk_malloc(sizeof(*ql));
    *ql = (struct qlist){0};
    return ql;
}

void ql_free(struct qlist *ql) {
    struct qnode *n = ql->head;
    while (n) {
        struct qnode *next = n->next;
        lp_free(n->lp);
        hk_free(n);
        n = next;
    }
    hk_free(ql);
}

struct qlist *ql_dup(const struct qlist *src) {
    struct qlist *ql = ql_new();
    for (struct qnode *n = src->head; n; n = n->next) ql_link(ql, ql->tail, ql_node_new(lp_dup(n->lp), n->plain), 1);
    ql->count = src->count;
    return ql;
}

void ql_push(struct qlist *ql, long long fill, const char *s, size_t len, int head) {
    struct qnode *n = head ? ql->head : ql->tail;
    if (ql->single || ql_allow_insert(n, fill, len)) {
        n->lp = head ? lp_prepend(n->lp, s, len) : lp_append(n->lp, s, len);
    } else {
        ql_link(ql, n, ql_new_node_with(s, len, ql_is_large(fill, len)), !head);
    }
    ql->count++;
}

struct qnode *ql_locate(const struct qlist *ql, unsigned long idx, unsigned long *off) {
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

void ql_del_range(struct qlist *ql, unsigned long start, unsigned long n) {
    if (n == 0 || start >= ql->count) return;
    if (n > ql->count - start) n = ql->count - start;
    unsigned long off;
    struct qnode *node = ql_locate(ql, start, &off);
    while (n > 0 && node) {
        unsigned long avail = lp_count(node->lp) - off;
        unsigned long del = n < avail ? n : avail;
        struct qnode *next = node->next;
        /* A whole node goes without rewriting its listpack. */
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

/* Append b's elements to a and free b (a and b are neighbours, a first,
 * both regular nodes). Returns a. */
static struct qnode *ql_merge(struct qlist *ql, struct qnode *a, struct qnode *b) {
    struct lp_val v;
    for (size_t p = lp_first(b->lp); p != LP_NONE; p = lp_next(b->lp, p)) {
        lp_get(b->lp, p, &v);
        a->lp = lp_append(a->lp, v.s, v.len);
    }
    ql_unlink_free(ql, b);
    return a;
}

/* After a split, merge the neighbours around center that fit in one node,
 * so repeated middle inserts do not leave a trail of small nodes. center
 * survives (it may absorb its neighbours); other nodes may be freed. */
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
 * (not yet linked) with the rest; after=0 keeps [off..] in n and returns
 * the elements before off. n's listpack moves. */
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

/* Insert s/len next to the element at pos (offset off) of node n: into n
 * when it has room, else into the neighbour on that side when the element
 * is at n's edge, else into a new node (splitting n when the element is in
 * its middle). Counts the element in ql->count. */
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

void ql_insert(struct qlist *ql, long long fill, const struct ql_cur *at, int after, const char *s, size_t len) {
    ql_insert_at(ql, fill, at->n, at->pos, at->off, after, s, len);
}

int ql_replace(struct qlist *ql, long long fill, unsigned long idx, const char *s, size_t len) {
    if (idx >= ql->count) return HK_ERR_INDEX_RANGE;
    unsigned long off;
    struct qnode *n = ql_locate(ql, idx, &off);
    size_t pos = lp_seek(n->lp, (long long)off);
    if (ql->single) {
        n->lp = lp_replace(n->lp, pos, s, len, NULL);
        return HK_OK;
    }
    struct lp_val old;
    lp_get(n->lp, pos, &old);
    int large = ql_is_large(fill, len);
    if (!n->plain && !large && !ql_exceeds(fill, lp_bytes(n->lp) - old.len + len, lp_count(n->lp))) {
        n->lp = lp_replace(n->lp, pos, s, len, NULL);
        return HK_OK;
    }
    if (n->plain) {
        if (large) {
            n->lp = lp_replace(n->lp, pos, s, len, NULL);
        } else {
            /* A small value does not deserve a node of its own: insert it
             * as a regular element after the plain node, then drop that. */
            ql_insert_at(ql, fill, n, pos, 0, 1, s, len);
            ql->count--;
            ql_unlink_free(ql, n);
        }
        return HK_OK;
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
    return HK_OK;
}

unsigned long ql_remove(struct qlist *ql, const struct ql_cur *from, int fwd, const char *s, size_t len,
                        unsigned long max) {
    unsigned long removed = 0;
    struct qnode *n = from->n;
    size_t p = from->pos;
    while (n) {
        /* Taken before n may be freed. */
        struct qnode *other = fwd ? n->next : n->prev;
        int done = 0;
        while (p != LP_NONE) {
            if (!lp_eq(n->lp, p, s, len)) {
                p = fwd ? lp_next(n->lp, p) : lp_prev(n->lp, p);
                continue;
            }
            size_t next;
            n->lp = lp_delete(n->lp, p, &next);
            ql->count--;
            removed++;
            if (max && removed == max) {
                done = 1;
                break;
            }
            /* `next` is the element that followed the deleted one, now at
             * its place; walking backward continues before it. */
            if (fwd) p = next;
            else p = next == LP_NONE ? lp_last(n->lp) : lp_prev(n->lp, next);
        }
        ql_drop_if_empty(ql, n);
        if (done) break;
        n = other;
        if (n) p = fwd ? lp_first(n->lp) : lp_last(n->lp);
    }
    return removed;
}

/* ---- element cursor ------------------------------------------------------- */

int ql_cur_seek(struct ql_cur *cur, const struct qlist *ql, unsigned long idx) {
    if (idx >= ql->count) {
        cur->n = NULL;
        cur->pos = LP_NONE;
        cur->off = 0;
        return HK_ERR_INDEX_RANGE;
    }
    cur->n = ql_locate(ql, idx, &cur->off);
    cur->pos = lp_seek(cur->n->lp, (long long)cur->off);
    return HK_OK;
}

void ql_cur_next(struct ql_cur *cur) {
    if (cur->pos == LP_NONE) return;
    cur->pos = lp_next(cur->n->lp, cur->pos);
    cur->off++;
    while (cur->pos == LP_NONE && cur->n->next) {
        cur->n = cur->n->next;
        cur->pos = lp_first(cur->n->lp);
        cur->off = 0;
    }
}

void ql_cur_prev(struct ql_cur *cur) {
    if (cur->pos == LP_NONE) return;
    cur->pos = lp_prev(cur->n->lp, cur->pos);
    while (cur->pos == LP_NONE && cur->n->prev) {
        cur->n = cur->n->prev;
        cur->pos = lp_last(cur->n->lp);
        cur->off = lp_count(cur->n->lp);
    }
    /* Off the head the offset means nothing; keep it from wrapping. */
    if (cur->off) cur->off--;
}

void ql_cur_get(const struct ql_cur *cur, struct lp_val *out) { lp_get(cur->n->lp, cur->pos, out); }

int ql_cur_eq(const struct ql_cur *cur, const char *s, size_t len) {
    return cur->pos != LP_NONE && lp_eq(cur->n->lp, cur->pos, s, len);
}

int ql_cur_find(struct ql_cur *cur, const char *s, size_t len, int fwd) {
    while (cur->pos != LP_NONE) {
        if (lp_eq(cur->n->lp, cur->pos, s, len)) return 1;
        if (fwd) ql_cur_next(cur);
        else ql_cur_prev(cur);
    }
    return 0;
}

/* ---- the list value of a key entry ---------------------------------------- */

struct kv *listv_new_entry(const char *key, size_t klen) {
    return kv_new_ptr(key, klen, OBJ_LIST, ENC_LISTPACK, lp_new(), -1);
}

unsigned long listv_len_of(const struct kv *e) {
    if (kv_enc(e) == ENC_LISTPACK) return lp_count(kv_ptr(e));
    return ((const struct qlist *)kv_ptr(e))->count;
}

/* Point the view at listpack lp through its stack one-node quicklist. */
static void listv_set_single(struct listv *v, lpack *lp) {
    v->tmpn = (struct qnode){NULL, NULL, lp, 0};
    v->tmp = (struct qlist){&v->tmpn, &v->tmpn, lp_count(lp), 1, 1};
    v->ql = &v->tmp;
}

void listv_open(struct listv *v, struct kv *e) {
    v->e = e;
    v->fill = TLIM(list_max_listpack_size);
    if (kv_enc(e) == ENC_QUICKLIST) v->ql = kv_ptr(e);
    else listv_set_single(v, kv_ptr(e));
}

void listv_done(struct listv *v) {
    if (v->ql == &v->tmp) kv_set_ptr(v->e, v->tmpn.lp);
}

void listv_grow(struct listv *v, size_t add_bytes, unsigned long add_count) {
    if (v->ql != &v->tmp) return;
    lpack *lp = v->tmpn.lp;
    if (!ql_exceeds(v->fill, lp_bytes(lp) + add_bytes, lp_count(lp) + add_count)) return;
    struct qlist *ql = ql_new();
    ql->count = lp_count(lp);
    /* The listpack becomes the first node as it is; an empty one (a key
     * being created) is not worth a node. */
    if (ql->count) ql_link(ql, NULL, ql_node_new(lp, 0), 1);
    else lp_free(lp);
    kv_set_ptr(v->e, ql);
    kv_set_enc(v->e, ENC_QUICKLIST);
    v->ql = ql;
}

void listv_shrink(struct listv *v) {
    struct qlist *ql = v->ql;
    if (ql == &v->tmp) return;
    if (ql->len != 1 || ql->head->plain) return;
    size_t sz;
    unsigned long cnt;
    ql_limits(v->fill, &sz, &cnt);
    /* Half the limit, so a list at the boundary does not convert back and
     * forth on every push and pop. */
    sz /= 2;
    cnt /= 2;
    if (lp_bytes(ql->head->lp) > sz || ql->count > cnt) return;
    lpack *lp = ql->head->lp;
    hk_free(ql->head);
    hk_free(ql);
    kv_set_ptr(v->e, lp);
    kv_set_enc(v->e, ENC_LISTPACK);
    listv_set_single(v, lp);
}

int listv_after_removal(struct listv *v) {
    if (v->ql->count == 0) {
        listv_done(v);
        return 1;
    }
    listv_shrink(v);
    listv_done(v);
    return 0;
}

int listv_index(const struct listv *v, long long idx, unsigned long *at) {
    long long len = (long long)v->ql->count;
    if (idx < 0) idx += len;
    if (idx < 0 || idx >= len) return HK_ERR_INDEX_RANGE;
    *at = (unsigned long)idx;
    return HK_OK;
}

/* ---- value lifecycle (type table) ------------------------------------------ */

static void list_free(struct kv *e) {
    if (kv_enc(e) == ENC_LISTPACK) lp_free(kv_ptr(e));
    else ql_free(kv_ptr(e));
}

/* MEMORY USAGE: listpack and node bytes; with `samples`, only that many
 * nodes are measured and the rest estimated from them. */
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

/* Elements in order, each mixed in (integers in decimal), as Redis's
 * DEBUG DIGEST does: the encoding and the node boundaries do not show. */
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
