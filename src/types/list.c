/* list.c - the list value: the quicklist of listpack nodes and their LZF
 * compression (list-compress-depth), the view that makes a listpack-encoded
 * list look like a one-node quicklist, the element cursor, and
 * list_type_ops (free, dup, usage, digest); see list.h for the encodings
 * and the contracts. It is not the list commands (src/cmd/list.c parses,
 * replies, reports writes and deletes emptied keys) and holds no policy of
 * its own beyond the node limits, Redis's compression thresholds and the
 * conversion thresholds.
 *
 * Compression bookkeeping: operations decompress (qn_raw) the nodes they
 * touch and never compress in the middle of their work, since a node they
 * still hold could be compressed under them; each public operation ends
 * with ql_settle around where it worked, which restores the rule. */
#include "list.h"

#include "../core/alloc.h"
#include "../core/lzf.h"
#include "digest.h"
#include "kv.h"
#include "rdb.h"
#include "types.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- quicklist ------------------------------------------------------------ */

/* Nodes below this many bytes are never "too big" for a positive fill, the
 * same safety limit Redis applies to count-limited nodes. */
#define QL_SIZE_SAFETY 8192
/* Per-element overhead assumed when checking whether a push still fits. */
#define QL_ELEM_OVERHEAD 8
#define QL_LP_HEADER 12

static const size_t ql_size_levels[] = {4096, 8192, 16384, 32768, 65536};

/* Redis's compression rules: smaller nodes are not worth it, and a result
 * must save at least this much to be kept. */
#define QL_MIN_COMPRESS_BYTES 48
#define QL_MIN_COMPRESS_IMPROVE 8
#define QL_COMPRESS_MAX 65535

/* The packed threshold's "not set" value: the fill decides what is large. */
#define QL_PACKED_DEFAULT ((size_t)1 << 30)
/* Process-wide, set by DEBUG QUICKLIST-PACKED-THRESHOLD from any worker and
 * read on every push (relaxed: a plain load). */
static _Atomic size_t ql_packed_threshold = QL_PACKED_DEFAULT;

int ql_set_packed_threshold(unsigned long long sz) {
    if (sz > (1ull << 32) - (1ull << 20)) return 0;
    if (sz == 0) sz = QL_PACKED_DEFAULT;
    atomic_store_explicit(&ql_packed_threshold, (size_t)sz, memory_order_relaxed);
    return 1;
}

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
static inline int ql_is_large(long long fill, size_t sz) {
    size_t lim;
    unsigned long cnt;
    size_t t = atomic_load_explicit(&ql_packed_threshold, memory_order_relaxed);
    if (__builtin_expect(t != QL_PACKED_DEFAULT, 0)) return sz >= t;
    if (fill >= 0) return sz > QL_SIZE_SAFETY;
    ql_limits(fill, &lim, &cnt);
    return sz > lim;
}

/* Whether node n (may be NULL) can take one more element of sz bytes. */
static int ql_allow_insert(const struct qnode *n, long long fill, size_t sz) {
    if (!n || n->plain || ql_is_large(fill, sz)) return 0;
    return !ql_exceeds(fill, ql_node_bytes(n) + sz + QL_ELEM_OVERHEAD, ql_node_count(n) + 1);
}

/* Whether neighbours a and b (either may be NULL) fit in one node. */
static int ql_allow_merge(const struct qnode *a, const struct qnode *b, long long fill) {
    if (!a || !b || a->plain || b->plain) return 0;
    return !ql_exceeds(fill, ql_node_bytes(a) + ql_node_bytes(b) - QL_LP_HEADER, ql_node_count(a) + ql_node_count(b));
}

/* A new unlinked node owning lp. */
static struct qnode *ql_node_new(lpack *lp, int plain) {
    struct qnode *n = hk_malloc(sizeof(*n));
    n->prev = n->next = NULL;
    n->lp = lp;
    n->lzf = NULL;
    n->plain = plain;
    return n;
}

/* ---- node compression ------------------------------------------------------ */

/* The compression paths stay out of line, so the uncompressed fast paths
 * that test for them keep their small register footprint. */
#define QL_COLD __attribute__((noinline, cold))

/* Compress raw node n when that pays (Redis's thresholds); otherwise, or
 * when it is compressed already, leave it. */
static QL_COLD void qn_compress(struct qnode *n) {
    if (!n->lp) return;
    size_t sz = lp_bytes(n->lp);
    if (sz < QL_MIN_COMPRESS_BYTES) return;
    struct qlzf *z = hk_malloc(sizeof(*z) + sz);
    size_t c = lzf_compress(n->lp, sz, z->data, sz);
    if (c == 0 || c + QL_MIN_COMPRESS_IMPROVE >= sz) {
        hk_free(z);
        return;
    }
    z = hk_realloc(z, sizeof(*z) + c);
    z->csz = c;
    z->raw = sz;
    z->count = lp_count(n->lp);
    lp_free(n->lp);
    n->lp = NULL;
    n->lzf = z;
}

/* The listpack of compressed bytes z, in a new allocation. The bytes are
 * our own, so failing to decompress them means memory is corrupt. */
static lpack *qlzf_unpack(const struct qlzf *z) {
    lpack *lp = hk_malloc(z->raw);
    if (lzf_decompress(z->data, z->csz, lp, z->raw) != z->raw) {
        fprintf(stderr, "quicklist: a compressed node does not decompress\n");
        abort();
    }
    return lp;
}

static QL_COLD void qn_unpack(struct qnode *n) {
    n->lp = qlzf_unpack(n->lzf);
    hk_free(n->lzf);
    n->lzf = NULL;
}

/* Make n raw (nothing to do when it is). */
static inline void qn_raw(struct qnode *n) {
    if (__builtin_expect(!n->lp, 0)) qn_unpack(n);
}

static void qn_free(struct qnode *n) {
    if (n->lp) lp_free(n->lp);
    else hk_free(n->lzf);
    hk_free(n);
}

static QL_COLD void ql_lend_slow(struct qlist *ql, struct qnode *n) {
    if (ql->lent && ql->lent != n) {
        qn_compress(ql->lent);
        ql->lent = NULL;
    }
    if (n->lp) return;
    qn_unpack(n);
    ql->lent = n;
}

/* A cursor steps onto n: the node lent before is compressed again, and n
 * decompressed (lent) when it is compressed. */
static inline void ql_lend(struct qlist *ql, struct qnode *n) {
    if (__builtin_expect(ql->lent != NULL || !n->lp, 0)) ql_lend_slow(ql, n);
}

void ql_release(struct qlist *ql) {
    /* A lent node was interior when it was lent, and only a change of the
     * list's shape (which settles, clearing lent) can move it. */
    if (ql->lent) qn_compress(ql->lent);
    ql->lent = NULL;
}

#define QL_SETTLE_NODES 8

/* Whether n is within `compress` nodes of either end of ql. */
static int ql_in_depth(const struct qlist *ql, const struct qnode *n) {
    if (ql->len <= 2 * (unsigned long)ql->compress) return 1;
    const struct qnode *a = n, *b = n;
    for (unsigned d = 0; d < ql->compress; d++) {
        a = a->prev;
        b = b->next;
        if (!a || !b) return 1;
    }
    return 0;
}

/* Put the compression rule back after a change: every node within
 * `compress` of either end raw, and compressed where it pays: the nodes
 * just past those (two of them each side, as one operation adds at most
 * two nodes), the lent node, and the nodes within `radius` (at most 3) of
 * anchor (may be NULL), which is where the change happened. Nothing else
 * can be raw in the interior: every operation settles. */
static QL_COLD void ql_settle_compressed(struct qlist *ql, struct qnode *anchor, int radius) {
    struct qnode *cand[QL_SETTLE_NODES];
    int in_depth[QL_SETTLE_NODES] = {0};
    int nc = 0;
    if (ql->lent) cand[nc++] = ql->lent;
    ql->lent = NULL;
    if (!ql->head) return;
    if (anchor) {
        cand[nc++] = anchor;
        struct qnode *p = anchor->prev, *x = anchor->next;
        for (int i = 0; i < radius; i++) {
            if (p) cand[nc++] = p, p = p->prev;
            if (x) cand[nc++] = x, x = x->next;
        }
    }
    struct qnode *f = ql->head, *r = ql->tail;
    for (unsigned d = 0; d < ql->compress; d++) {
        qn_raw(f);
        qn_raw(r);
        for (int i = 0; i < nc; i++)
            if (cand[i] == f || cand[i] == r) in_depth[i] = 1;
        /* The two ends met: every node is within the depth. */
        if (f == r || f->next == r) return;
        f = f->next;
        r = r->prev;
    }
    qn_compress(f);
    qn_compress(r);
    if (f != r) {
        qn_compress(f->next);
        qn_compress(r->prev);
    }
    for (int i = 0; i < nc; i++)
        if (!in_depth[i]) qn_compress(cand[i]);
}

/* Uncompressed lists (the default) pay one test. */
static inline void ql_settle(struct qlist *ql, struct qnode *anchor, int radius) {
    if (__builtin_expect(ql->compress != 0, 0)) ql_settle_compressed(ql, anchor, radius);
}

void ql_set_compress(struct qlist *ql, long long depth) {
    if (depth < 0) depth = 0;
    if (depth > QL_COMPRESS_MAX) depth = QL_COMPRESS_MAX;
    ql->compress = (unsigned)depth;
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
    if (ql->lent == n) ql->lent = NULL;
    qn_free(n);
}

/* Drop a node that became empty; a single-mode list keeps its one node,
 * since the entry still points at that listpack. Returns 1 when dropped. */
static int ql_drop_if_empty(struct qlist *ql, struct qnode *n) {
    if (ql->single || ql_node_count(n) != 0) return 0;
    ql_unlink_free(ql, n);
    return 1;
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
        qn_free(n);
        n = next;
    }
    hk_free(ql);
}

struct qlist *ql_dup(const struct qlist *src) {
    struct qlist *ql = ql_new();
    ql->compress = src->compress;
    for (struct qnode *n = src->head; n; n = n->next) {
        struct qnode *d = ql_node_new(n->lp ? lp_dup(n->lp) : NULL, n->plain);
        if (!n->lp) {
            size_t zs = sizeof(*n->lzf) + n->lzf->csz;
            d->lzf = hk_malloc(zs);
            memcpy(d->lzf, n->lzf, zs);
        }
        ql_link(ql, ql->tail, d, 1);
        /* The copy of a node lent for reading is compressed again. */
        if (n == src->lent) ql->lent = d;
    }
    ql->count = src->count;
    ql_release(ql);
    return ql;
}

void ql_push(struct qlist *ql, long long fill, const char *s, size_t len, int head) {
    struct qnode *n = head ? ql->head : ql->tail;
    if (ql->single || ql_allow_insert(n, fill, len)) {
        qn_raw(n);
        n->lp = head ? lp_prepend(n->lp, s, len) : lp_append(n->lp, s, len);
        /* The shape did not change, so a lent node is still interior; the
         * view's listv_done (or the next change of shape) compresses it. */
        ql->count++;
        return;
    }
    ql_link(ql, n, ql_new_node_with(s, len, ql_is_large(fill, len)), !head);
    ql->count++;
    ql_settle(ql, NULL, 0);
}

struct qnode *ql_locate(const struct qlist *ql, unsigned long idx, unsigned long *off) {
    if (idx < ql->count / 2) {
        struct qnode *n = ql->head;
        while (idx >= ql_node_count(n)) {
            idx -= ql_node_count(n);
            n = n->next;
        }
        *off = idx;
        return n;
    }
    unsigned long back = ql->count - 1 - idx; /* distance from the tail */
    struct qnode *n = ql->tail;
    while (back >= ql_node_count(n)) {
        back -= ql_node_count(n);
        n = n->prev;
    }
    *off = ql_node_count(n) - 1 - back;
    return n;
}

void ql_del_range(struct qlist *ql, unsigned long start, unsigned long n) {
    if (n == 0 || start >= ql->count) return;
    if (n > ql->count - start) n = ql->count - start;
    unsigned long off;
    struct qnode *node = ql_locate(ql, start, &off), *touched = NULL, *after = NULL;
    int shape = 0;
    while (n > 0 && node) {
        unsigned long cnt = ql_node_count(node);
        unsigned long avail = cnt - off;
        unsigned long del = n < avail ? n : avail;
        struct qnode *next = node->next;
        /* A whole node goes without rewriting (or decompressing) it. */
        if (off == 0 && del == cnt && !ql->single) {
            ql_unlink_free(ql, node);
            shape = 1;
        } else {
            qn_raw(node);
            node->lp = lp_delete_range(node->lp, (long long)off, del);
            touched = node;
        }
        ql->count -= del;
        n -= del;
        off = 0;
        node = next;
        after = next;
    }
    /* At most two nodes were cut, the first and the last, neighbours now. */
    if (__builtin_expect(ql->compress != 0, 0) && (shape || touched || ql->lent))
        ql_settle_compressed(ql, touched ? touched : after, 1);
}

/* Append b's elements to a and free b (a and b are neighbours, a first,
 * both regular nodes). Returns a. */
static struct qnode *ql_merge(struct qlist *ql, struct qnode *a, struct qnode *b) {
    struct lp_val v;
    qn_raw(a);
    qn_raw(b);
    for (size_t p = lp_first(b->lp); p != LP_NONE; p = lp_next(b->lp, p)) {
        lp_get(b->lp, p, &v);
        a->lp = lp_append(a->lp, v.s, v.len);
    }
    ql_unlink_free(ql, b);
    return a;
}

/* After a split, merge the neighbours around center that fit in one node,
 * so repeated middle inserts do not leave a trail of small nodes. Returns
 * the node that holds center's elements afterwards (center, or its
 * previous node when center merged into it); other nodes may be freed. */
static struct qnode *ql_merge_around(struct qlist *ql, long long fill, struct qnode *center) {
    struct qnode *prev = center->prev, *prev_prev = prev ? prev->prev : NULL;
    struct qnode *next = center->next, *next_next = next ? next->next : NULL;
    if (ql_allow_merge(prev_prev, prev, fill)) ql_merge(ql, prev_prev, prev);
    if (ql_allow_merge(next, next_next, fill)) ql_merge(ql, next, next_next);
    struct qnode *target = center;
    if (ql_allow_merge(center->prev, center, fill)) target = ql_merge(ql, center->prev, center);
    if (ql_allow_merge(target, target->next, fill)) ql_merge(ql, target, target->next);
    return target;
}

/* Split node n at off: after=1 keeps [0..off] in n and returns a new node
 * (not yet linked) with the rest; after=0 keeps [off..] in n and returns
 * the elements before off. n's listpack moves. */
static struct qnode *ql_split(struct qnode *n, unsigned long off, int after) {
    qn_raw(n);
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
 * its middle). Counts the element in ql->count. Compresses nothing: it
 * returns a node within 3 of every node it changed or added, for the
 * caller to settle around. */
static struct qnode *ql_insert_at(struct qlist *ql, long long fill, struct qnode *n, size_t pos, unsigned long off,
                                  int after, const char *s, size_t len) {
    ql->count++;
    /* A compressed node decompresses to the same bytes: pos stays valid. */
    qn_raw(n);
    if (ql->single) {
        n->lp = lp_insert(n->lp, after ? lp_next(n->lp, pos) : pos, s, len, NULL);
        return n;
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
        return big;
    }
    if (!full) {
        n->lp = lp_insert(n->lp, after ? lp_next(n->lp, pos) : pos, s, len, NULL);
    } else if (at_tail && avail_next) {
        qn_raw(n->next);
        n->next->lp = lp_prepend(n->next->lp, s, len);
    } else if (at_head && avail_prev) {
        qn_raw(n->prev);
        n->prev->lp = lp_append(n->prev->lp, s, len);
    } else if (at_tail || at_head) {
        ql_link(ql, n, ql_new_node_with(s, len, 0), after);
    } else {
        struct qnode *nn = ql_split(n, off, after);
        nn->lp = after ? lp_prepend(nn->lp, s, len) : lp_append(nn->lp, s, len);
        ql_link(ql, n, nn, after);
        return ql_merge_around(ql, fill, n);
    }
    return n;
}

void ql_insert(struct qlist *ql, long long fill, const struct ql_cur *at, int after, const char *s, size_t len) {
    struct qnode *near = ql_insert_at(ql, fill, at->n, at->pos, at->off, after, s, len);
    ql_settle(ql, near, 3);
}

int ql_replace(struct qlist *ql, long long fill, unsigned long idx, const char *s, size_t len) {
    if (idx >= ql->count) return HK_ERR_INDEX_RANGE;
    unsigned long off;
    struct qnode *n = ql_locate(ql, idx, &off);
    qn_raw(n);
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
        ql_settle(ql, n, 0);
        return HK_OK;
    }
    if (n->plain) {
        if (large) {
            n->lp = lp_replace(n->lp, pos, s, len, NULL);
            ql_settle(ql, n, 0);
        } else {
            /* A small value does not deserve a node of its own: insert it
             * as a regular element after the plain node, then drop that.
             * What the insert touched is within 3 of n's neighbours. */
            struct qnode *near = ql_insert_at(ql, fill, n, pos, 0, 1, s, len);
            if (near == n) near = n->next ? n->next : n->prev;
            ql->count--;
            ql_unlink_free(ql, n);
            ql_settle(ql, near, 3);
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
    ql_settle(ql, nn, 1);
    return HK_OK;
}

unsigned long ql_remove(struct qlist *ql, const struct ql_cur *from, int fwd, const char *s, size_t len,
                        unsigned long max) {
    unsigned long removed = 0;
    struct qnode *n = from->n, *last = NULL;
    size_t p = from->pos;
    /* The node under the cursor is raw: lent (then compressed again once
     * walked, as it was before) or within the depth. */
    int was_packed = ql->lent == n;
    if (was_packed) ql->lent = NULL;
    qn_raw(n);
    while (n) {
        /* Taken before n may be freed. */
        struct qnode *other = fwd ? n->next : n->prev;
        int done = 0, changed = 0;
        while (p != LP_NONE) {
            if (!lp_eq(n->lp, p, s, len)) {
                p = fwd ? lp_next(n->lp, p) : lp_prev(n->lp, p);
                continue;
            }
            size_t next;
            n->lp = lp_delete(n->lp, p, &next);
            ql->count--;
            removed++;
            changed = 1;
            if (max && removed == max) {
                done = 1;
                break;
            }
            /* `next` is the element that followed the deleted one, now at
             * its place; walking backward continues before it. */
            if (fwd) p = next;
            else p = next == LP_NONE ? lp_last(n->lp) : lp_prev(n->lp, next);
        }
        if (!ql_drop_if_empty(ql, n) && ql->compress) {
            last = n;
            /* Compressed again once walked, so the whole list is never
             * decompressed at once (settle below decompresses what the
             * removals brought within the depth); a raw interior node that
             * lost elements may have become worth compressing. */
            if (was_packed || (changed && !ql_in_depth(ql, n))) qn_compress(n);
        }
        if (done) break;
        n = other;
        if (n) {
            was_packed = !n->lp;
            qn_raw(n);
            p = fwd ? lp_first(n->lp) : lp_last(n->lp);
        }
    }
    ql_settle(ql, last ? last : (fwd ? ql->tail : ql->head), 1);
    return removed;
}

/* ---- element cursor ------------------------------------------------------- */

int ql_cur_seek(struct ql_cur *cur, struct qlist *ql, unsigned long idx) {
    cur->ql = ql;
    if (idx >= ql->count) {
        cur->n = NULL;
        cur->pos = LP_NONE;
        cur->off = 0;
        return HK_ERR_INDEX_RANGE;
    }
    cur->n = ql_locate(ql, idx, &cur->off);
    ql_lend(ql, cur->n);
    cur->pos = lp_seek(cur->n->lp, (long long)cur->off);
    return HK_OK;
}

/* Past the end of the cursor's node: on to the first element of the next
 * non-empty node, if any. Out of line: once per node, not per element. */
static __attribute__((noinline)) void ql_cur_next_node(struct ql_cur *cur) {
    while (cur->pos == LP_NONE && cur->n->next) {
        cur->n = cur->n->next;
        ql_lend(cur->ql, cur->n);
        cur->pos = lp_first(cur->n->lp);
        cur->off = 0;
    }
}

static __attribute__((noinline)) void ql_cur_prev_node(struct ql_cur *cur) {
    while (cur->pos == LP_NONE && cur->n->prev) {
        cur->n = cur->n->prev;
        ql_lend(cur->ql, cur->n);
        cur->pos = lp_last(cur->n->lp);
        cur->off = lp_count(cur->n->lp);
    }
}

void ql_cur_next(struct ql_cur *cur) {
    if (cur->pos == LP_NONE) return;
    cur->pos = lp_next(cur->n->lp, cur->pos);
    cur->off++;
    if (cur->pos == LP_NONE) ql_cur_next_node(cur);
}

void ql_cur_prev(struct ql_cur *cur) {
    if (cur->pos == LP_NONE) return;
    cur->pos = lp_prev(cur->n->lp, cur->pos);
    if (cur->pos == LP_NONE) ql_cur_prev_node(cur);
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
    v->tmpn = (struct qnode){.lp = lp};
    v->tmp = (struct qlist){.head = &v->tmpn, .tail = &v->tmpn, .count = lp_count(lp), .len = 1, .single = 1};
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
    else if (v->ql->lent) ql_release(v->ql);
}

void listv_grow(struct listv *v, size_t add_bytes, unsigned long add_count) {
    if (v->ql != &v->tmp) return;
    lpack *lp = v->tmpn.lp;
    if (!ql_exceeds(v->fill, lp_bytes(lp) + add_bytes, lp_count(lp) + add_count)) return;
    struct qlist *ql = ql_new();
    /* The depth is the one in force when the list becomes a quicklist. */
    ql_set_compress(ql, TLIM(list_compress_depth));
    ql->count = lp_count(lp);
    /* The listpack becomes the first node as it is; an empty one (a key
     * being created) is not worth a node. */
    if (ql->count) ql_link(ql, NULL, ql_node_new(lp, 0), 1);
    else lp_free(lp);
    kv_set_ptr(v->e, ql);
    kv_set_enc(v->e, ENC_QUICKLIST);
    v->ql = ql;
}

/* A quicklist of one packed node within the fill limit divided by `div`
 * becomes the entry's listpack. */
static void listv_to_listpack(struct listv *v, unsigned div) {
    struct qlist *ql = v->ql;
    if (ql == &v->tmp) return;
    if (ql->len != 1 || ql->head->plain) return;
    size_t sz;
    unsigned long cnt;
    ql_limits(v->fill, &sz, &cnt);
    sz /= div;
    cnt /= div;
    if (ql_node_bytes(ql->head) > sz || ql->count > cnt) return;
    qn_raw(ql->head);
    lpack *lp = ql->head->lp;
    hk_free(ql->head);
    hk_free(ql);
    kv_set_ptr(v->e, lp);
    kv_set_enc(v->e, ENC_LISTPACK);
    listv_set_single(v, lp);
}

/* Half the limit, so a list at the boundary does not convert back and forth
 * on every push and pop. */
void listv_shrink(struct listv *v) { listv_to_listpack(v, 2); }

void listv_settle(struct listv *v) { listv_to_listpack(v, 1); }

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

/* One allocation per quicklist node; a listpack is one. */
static size_t list_free_effort(const struct kv *e) {
    return kv_enc(e) == ENC_QUICKLIST ? ((const struct qlist *)kv_ptr(e))->len : 1;
}

/* MEMORY USAGE: listpack and node bytes (a compressed node by its
 * compressed size); with `samples`, only that many nodes are measured and
 * the rest estimated from them. */
static size_t list_usage(const struct kv *e, size_t samples) {
    if (kv_enc(e) == ENC_LISTPACK) return lp_bytes(kv_ptr(e));
    const struct qlist *ql = kv_ptr(e);
    size_t total = sizeof(*ql), seen = 0, elems = 0;
    const struct qnode *n = ql->head;
    for (; n && (samples == 0 || seen < samples); n = n->next, seen++) {
        total += sizeof(*n) + (n->lp ? lp_bytes(n->lp) : sizeof(*n->lzf) + n->lzf->csz);
        elems += ql_node_count(n);
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
 * DEBUG DIGEST does: the encoding, the node boundaries and compression do
 * not show (a compressed node is read from a decompressed copy). */
static void list_digest(const struct kv *e, unsigned char digest[20]) {
    if (kv_enc(e) == ENC_LISTPACK) {
        lp_digest_all(kv_ptr(e), digest);
        return;
    }
    const struct qlist *ql = kv_ptr(e);
    for (const struct qnode *n = ql->head; n; n = n->next) {
        if (n->lp) {
            lp_digest_all(n->lp, digest);
        } else {
            lpack *lp = qlzf_unpack(n->lzf);
            lp_digest_all(lp, digest);
            lp_free(lp);
        }
    }
}

/* Redis's node size: a packed node's listpack bytes, a plain node's
 * element length. */
static size_t ql_node_size(const struct qnode *n) {
    if (!n->plain) return ql_node_bytes(n);
    lpack *tmp = n->lp ? NULL : qlzf_unpack(n->lzf);
    const lpack *lp = n->lp ? n->lp : tmp;
    struct lp_val v;
    lp_get(lp, lp_first(lp), &v);
    if (tmp) lp_free(tmp);
    return v.len;
}

size_t listv_debug_info(const struct kv *e, char *buf, size_t cap) {
    if (kv_enc(e) != ENC_QUICKLIST) {
        if (cap) buf[0] = '\0';
        return 0;
    }
    const struct qlist *ql = kv_ptr(e);
    unsigned long sz = 0;
    for (const struct qnode *n = ql->head; n; n = n->next) sz += ql_node_size(n);
    /* The fill as Redis stores it in a quicklist: clamped to -5..32767. */
    long long fill = TLIM(list_max_listpack_size);
    if (fill < -5) fill = -5;
    if (fill > 32767) fill = 32767;
    int n = snprintf(buf, cap, " ql_nodes:%lu ql_avg_node:%.2f ql_listpack_max:%lld ql_compressed:%d ql_uncompressed_size:%lu",
                     ql->len, ql->len ? (double)ql->count / (double)ql->len : 0.0, fill, ql->compress != 0, sz);
    return n < 0 ? 0 : (size_t)n;
}

static void list_debug_fields(const struct kv *e, char *buf, size_t size) { listv_debug_info(e, buf, size); }

/* ---- RDB (rdb.h) ------------------------------------------------------------ */

/* Node containers of RDB_TYPE_LIST_QUICKLIST_2. */
#define RDB_QL_PLAIN 1
#define RDB_QL_PACKED 2


/* RDB_TYPE_LIST_QUICKLIST_2: the node count, then per node its container
 * and either a listpack blob or, for a plain node, the element itself. A
 * listpack-encoded list is one packed node, as Redis writes it. Node
 * boundaries are kept; a compressed node is written from a decompressed
 * copy (the string writer compresses it again under rdbcompression). */
static int list_save(const struct kv *e, struct rdb_out *o) {
    if (kv_enc(e) == ENC_LISTPACK) {
        rdb_put_len(o, 1);
        rdb_put_len(o, RDB_QL_PACKED);
        return rdb_put_lpack(o, kv_ptr(e));
    }
    const struct qlist *ql = kv_ptr(e);
    rdb_put_len(o, ql->len);
    for (const struct qnode *n = ql->head; n; n = n->next) {
        lpack *tmp = n->lp ? NULL : qlzf_unpack(n->lzf);
        const lpack *lp = n->lp ? n->lp : tmp;
        int r = 0;
        if (n->plain && lp_count(lp) == 1) {
            struct lp_val v;
            lp_get(lp, lp_first(lp), &v);
            rdb_put_len(o, RDB_QL_PLAIN);
            rdb_put_string(o, v.s, v.len);
        } else {
            rdb_put_len(o, RDB_QL_PACKED);
            r = rdb_put_lpack(o, lp);
        }
        if (tmp) lp_free(tmp);
        if (r < 0) return -1;
    }
    return 0;
}

/* Elements past this size cannot be held by a node (32-bit lengths). */
#define LIST_ELEM_MAX ((size_t)UINT32_MAX - 64)

static int list_load_push(struct rdb_in *in, struct qlist *ql, long long fill, const char *s, size_t len) {
    if (len > LIST_ELEM_MAX) return rdb_fail(in, "List element of %zu bytes is too large", len);
    ql_push(ql, fill, s, len, 0);
    return 0;
}

/* Every element of a packed blob (a ziplist or a listpack) pushed. */
static int list_load_blob(struct rdb_in *in, struct qlist *ql, long long fill, int kind) {
    struct rdb_blob b;
    char *owned;
    struct lp_val v;
    if (rdb_get_blob(in, &b, kind, &owned) < 0) return -1;
    while (rdb_blob_next(&b, &v)) ql_push(ql, fill, v.s, v.len, 0);
    hk_free(owned);
    return 0;
}

/* The list is rebuilt element by element under the current
 * list-max-listpack-size and list-compress-depth, whatever node layout
 * the input had (linked list, ziplist, quicklist of ziplists or of
 * listpacks), then becomes a listpack when one node holds it all, as
 * Redis 7.2 converts a loaded list. Empty nodes are skipped; an empty
 * list is an error. */
static struct kv *list_load(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire) {
    long long fill = TLIM(list_max_listpack_size);
    struct qlist *ql = ql_new();
    ql_set_compress(ql, TLIM(list_compress_depth));
    uint64_t n;
    int r = 0;
    if (rdb_type == RDB_TYPE_LIST_ZIPLIST) {
        r = list_load_blob(in, ql, fill, RDB_BLOB_ZIPLIST);
    } else if (rdb_get_len(in, &n, NULL) < 0) {
        r = -1;
    } else if (rdb_type == RDB_TYPE_LIST) {
        for (uint64_t i = 0; i < n && r == 0; i++) {
            size_t len;
            char *s = rdb_get_string(in, &len);
            if (!s) {
                r = -1;
                break;
            }
            r = list_load_push(in, ql, fill, s, len);
            hk_free(s);
        }
    } else if (rdb_type == RDB_TYPE_LIST_QUICKLIST || rdb_type == RDB_TYPE_LIST_QUICKLIST_2) {
        for (uint64_t i = 0; i < n && r == 0; i++) {
            uint64_t container = RDB_QL_PACKED;
            if (rdb_type == RDB_TYPE_LIST_QUICKLIST_2) {
                if (rdb_get_len(in, &container, NULL) < 0) {
                    r = -1;
                    break;
                }
                if (container != RDB_QL_PLAIN && container != RDB_QL_PACKED) {
                    r = rdb_fail(in, "Quicklist integrity check failed (node container %llu)",
                                 (unsigned long long)container);
                    break;
                }
            }
            if (container == RDB_QL_PACKED) {
                r = list_load_blob(in, ql, fill,
                                   rdb_type == RDB_TYPE_LIST_QUICKLIST ? RDB_BLOB_ZIPLIST : RDB_BLOB_LISTPACK);
                continue;
            }
            size_t len;
            char *s = rdb_get_string(in, &len);
            if (!s) {
                r = -1;
                break;
            }
            if (len) r = list_load_push(in, ql, fill, s, len);
            else r = rdb_fail(in, "Quicklist integrity check failed (empty plain node)");
            hk_free(s);
        }
    } else {
        r = rdb_fail(in, "RDB type %d is not a list", rdb_type);
    }
    if (r == 0 && ql->count == 0) r = rdb_fail_empty(in, "list");
    if (r < 0) {
        ql_free(ql);
        return NULL;
    }
    struct kv *e = kv_new_ptr(key, klen, OBJ_LIST, ENC_QUICKLIST, ql, expire);
    struct listv v;
    listv_open(&v, e);
    listv_settle(&v);
    listv_done(&v);
    return e;
}

const struct type_ops list_type_ops = {
    .name = "list",
    .free = list_free,
    .free_effort = list_free_effort,
    .dup = list_dup,
    .usage = list_usage,
    .digest = list_digest,
    .debug_fields = list_debug_fields,
    .save = list_save,
    .load = list_load,
};
