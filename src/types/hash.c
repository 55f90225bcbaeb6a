/* hash.c - the HASH value's listpack and hashtable encodings, conversion
 * between them, field operations, random picks, scanning and the type's
 * lifecycle (hash_type_ops); see hash.h for the encodings and the rules
 * callers follow. Tables of big hashes resize incrementally like any
 * htable, so growing a huge hash never pays for one full rehash. This file
 * is not the H* commands (src/cmd/hash.c): it writes no replies, knows no
 * client and never touches the keyspace. */
#include "hash.h"

#include "../core/alloc.h"
#include "../core/hash.h"
#include "../core/htable.h"
#include "../core/status.h"
#include "../core/util.h"
#include "digest.h"
#include "types.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A listpack never grows past this many bytes; a write that would pass it
 * converts the hash first (Redis's lpSafeToAdd limit). */
#define HASH_LP_SAFE_BYTES (1ULL << 30)

/* One field of a hashtable-encoded hash: the field bytes, then the value. */
struct hent {
    struct hnode node;
    size_t flen, vlen;
    char data[];
};

static inline const char *hent_field(const struct hent *h) { return h->data; }
static inline const char *hent_value(const struct hent *h) { return h->data + h->flen; }

/* A new unlinked entry owning copies of f and v; freed with hk_free. */
static struct hent *hent_new(const char *f, size_t fl, const char *v, size_t vl) {
    struct hent *h = hk_malloc(sizeof(*h) + fl + vl);
    h->node.next = NULL;
    h->flen = fl;
    h->vlen = vl;
    if (fl) memcpy(h->data, f, fl);
    if (vl) memcpy(h->data + fl, v, vl);
    return h;
}

static uint64_t hent_hash(const struct hnode *n, void *ctx) {
    (void)ctx;
    const struct hent *h = (const struct hent *)n;
    return hk_hash(hent_field(h), h->flen);
}

struct hkey {
    const char *f;
    size_t fl;
};

static int hent_match(const struct hnode *n, const void *key) {
    const struct hent *h = (const struct hent *)n;
    const struct hkey *k = key;
    return h->flen == k->fl && (k->fl == 0 || memcmp(hent_field(h), k->f, k->fl) == 0);
}

/* The link that points at field f in t, or NULL when absent; valid until
 * the next lookup, insert or resize of t (ht_find_link). */
static struct hnode **hash_ht_find(struct htable *t, const char *f, size_t fl) {
    struct hkey k = {f, fl};
    return ht_find_link(t, hk_hash(f, fl), hent_match, &k);
}

static void hent_free(struct hnode *n, void *ctx) {
    (void)ctx;
    hk_free(n);
}

/* Listpack positions of the fields of lp, in order; the caller frees the
 * array. The positions die with the next change of lp. */
static size_t *hash_lp_fields(const lpack *lp, uint64_t n) {
    size_t *pos = hk_malloc((size_t)n * sizeof(*pos));
    size_t i = 0;
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, lp_next(lp, p))) pos[i++] = p;
    return pos;
}

/* ---- field TTLs: the side table ------------------------------------------------- */

/* The value of a hash with at least one field TTL (ENC_LISTPACK_EX,
 * ENC_HT_EX): the encoding's own value, unchanged, plus the deadlines by
 * field. A plain hash has none of this: its value pointer is the listpack
 * or table itself. */
struct hashx {
    void *data;        /* the lpack or struct htable */
    struct htable ttl; /* struct fttl by field, one per field that has a TTL */
    /* The same entries as a binary min-heap by deadline: the earliest is
     * heap[0], so finding what is due costs nothing per field that is
     * not, and setting or dropping a deadline is O(log n). */
    struct fttl **heap;
    size_t cap;
};

/* One field's deadline (unix ms) and its place in the heap; the field
 * bytes follow. */
struct fttl {
    struct hnode node;
    long long when;
    size_t pos;
    size_t flen;
    char f[];
};

static inline struct hashx *h_x(const struct kv *e) { return kv_ptr(e); }
static inline int h_lp(const struct kv *e) {
    int enc = kv_enc(e);
    return enc == ENC_LISTPACK || enc == ENC_LISTPACK_EX;
}
/* The encoding's own value: a listpack or a table. */
static inline void *h_data(const struct kv *e) { return kv_hfe(e) ? h_x(e)->data : kv_ptr(e); }
static inline void h_set_data(struct kv *e, void *p) {
    if (kv_hfe(e)) h_x(e)->data = p;
    else kv_set_ptr(e, p);
}

static uint64_t fttl_hash(const struct hnode *n, void *ctx) {
    (void)ctx;
    const struct fttl *t = (const struct fttl *)n;
    return hk_hash(t->f, t->flen);
}

static int fttl_match(const struct hnode *n, const void *key) {
    const struct fttl *t = (const struct fttl *)n;
    const struct hkey *k = key;
    return t->flen == k->fl && (k->fl == 0 || memcmp(t->f, k->f, k->fl) == 0);
}

static struct fttl *fttl_new(const char *f, size_t fl, long long when) {
    struct fttl *t = hk_malloc(sizeof(*t) + fl);
    t->node.next = NULL;
    t->when = when;
    t->flen = fl;
    if (fl) memcpy(t->f, f, fl);
    return t;
}

/* ---- the deadline heap (x->ttl.count entries) ---- */

static inline void heap_place(struct hashx *x, struct fttl *t, size_t i) {
    x->heap[i] = t;
    t->pos = i;
}

static void heap_up(struct hashx *x, size_t i) {
    struct fttl *t = x->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (x->heap[p]->when <= t->when) break;
        heap_place(x, x->heap[p], i);
        i = p;
    }
    heap_place(x, t, i);
}

static void heap_down(struct hashx *x, size_t i, size_t n) {
    struct fttl *t = x->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        long long w = t->when;
        if (l < n && x->heap[l]->when < w) m = l, w = x->heap[l]->when;
        if (l + 1 < n && x->heap[l + 1]->when < w) m = l + 1;
        if (m == i) break;
        heap_place(x, x->heap[m], i);
        i = m;
    }
    heap_place(x, t, i);
}

/* Add t; n is the count before it. */
static void heap_push(struct hashx *x, struct fttl *t, size_t n) {
    if (n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 4;
        x->heap = hk_realloc(x->heap, x->cap * sizeof(*x->heap));
    }
    heap_place(x, t, n);
    heap_up(x, n);
}

/* Remove t; n is the count before. */
static void heap_remove(struct hashx *x, struct fttl *t, size_t n) {
    size_t i = t->pos, last = n - 1;
    if (i != last) {
        heap_place(x, x->heap[last], i);
        heap_down(x, i, last);
        heap_up(x, x->heap[i]->pos);
    }
    if (last < x->cap / 4 && x->cap > 4) {
        x->cap /= 2;
        x->heap = hk_realloc(x->heap, x->cap * sizeof(*x->heap));
    }
}

/* t's deadline changed. */
static void heap_update(struct hashx *x, struct fttl *t) {
    heap_up(x, t->pos);
    heap_down(x, t->pos, x->ttl.count);
}

/* The link to f's deadline, or NULL (also for a hash without TTLs). */
static struct hnode **fttl_find(const struct kv *e, const char *f, size_t fl) {
    if (!kv_hfe(e)) return NULL;
    struct hkey k = {f, fl};
    return ht_find_link(&h_x(e)->ttl, hk_hash(f, fl), fttl_match, &k);
}

/* Forget f's deadline, if any: 1 when it had one. */
static int fttl_drop(struct kv *e, const char *f, size_t fl) {
    struct hnode **link = fttl_find(e, f, fl);
    if (!link) return 0;
    struct hashx *x = h_x(e);
    struct fttl *t = (struct fttl *)*link;
    heap_remove(x, t, x->ttl.count);
    ht_unlink(&x->ttl, link);
    hk_free(t);
    return 1;
}

static void hashx_free(struct hashx *x) {
    ht_drain(&x->ttl, hent_free, NULL);
    hk_free(x->heap);
    hk_free(x);
}

/* Give e the side table (no deadline yet). */
static void hashx_attach(struct kv *e) {
    struct hashx *x = hk_malloc(sizeof(*x));
    x->data = kv_ptr(e);
    ht_init(&x->ttl);
    x->heap = NULL;
    x->cap = 0;
    kv_set_ptr(e, x);
    kv_set_enc(e, kv_enc(e) == ENC_LISTPACK ? ENC_LISTPACK_EX : ENC_HT_EX);
}

/* ---- value lifecycle (hash_type_ops) ---------------------------------------------- */

static void hash_free(struct kv *e) {
    if (h_lp(e)) {
        lp_free(h_data(e));
    } else {
        struct htable *t = h_data(e);
        ht_drain(t, hent_free, NULL);
        hk_free(t);
    }
    if (kv_hfe(e)) hashx_free(h_x(e));
}

/* One allocation per field of a table-encoded hash (a listpack is one),
 * plus one deadline per field with a TTL. */
static size_t hash_free_effort(const struct kv *e) {
    size_t n = kv_enc(e) == ENC_HT || kv_enc(e) == ENC_HT_EX ? (size_t)hashv_len(e) : 1;
    return n + (size_t)hashv_ttl_count(e);
}

/* Bytes of the side table of a hash with TTLs (0 for a plain one). */
static size_t hashx_usage(const struct kv *e) {
    if (!kv_hfe(e)) return 0;
    const struct hashx *x = h_x(e);
    size_t n = hk_usable_size((void *)x) + ht_overhead(&x->ttl) + (x->heap ? hk_usable_size(x->heap) : 0);
    struct ht_iter it;
    ht_iter_init(&it, &x->ttl);
    for (struct hnode *t; (t = ht_iter_next(&it));) n += hk_usable_size(t);
    return n;
}

/* Bytes used by the value. For a hash table, `samples` entries (0 = all)
 * are measured and the average is scaled to the whole table, as MEMORY
 * USAGE SAMPLES does in Redis. */
static size_t hash_usage(const struct kv *e, size_t samples) {
    if (h_lp(e)) return hk_usable_size(h_data(e)) + hashx_usage(e);
    const struct htable *t = h_data(e);
    size_t n = hk_usable_size((void *)t) + ht_overhead(t) + hashx_usage(e);
    if (!t->count) return n;
    size_t seen = 0, bytes = 0;
    struct ht_iter it;
    ht_iter_init(&it, t);
    for (struct hnode *h; (samples == 0 || seen < samples) && (h = ht_iter_next(&it));) {
        bytes += hk_usable_size(h);
        seen++;
    }
    return n + (size_t)((double)bytes / (double)seen * (double)t->count);
}

/* A new unlinked entry under key with a deep copy of e's fields, in the
 * same encoding; e is not changed. */
static struct kv *hash_dup_data(const struct kv *e, const char *key, size_t klen, long long expire) {
    if (h_lp(e)) return kv_new_ptr(key, klen, OBJ_HASH, ENC_LISTPACK, lp_dup(h_data(e)), expire);
    const struct htable *src = h_data(e);
    struct htable *t = hk_malloc(sizeof(*t));
    ht_init(t);
    if (src->count) ht_resize(t, src->count, hent_hash, NULL);
    struct ht_iter it;
    ht_iter_init(&it, src);
    for (struct hnode *n; (n = ht_iter_next(&it));) {
        const struct hent *h = (const struct hent *)n;
        struct hent *cp = hent_new(hent_field(h), h->flen, hent_value(h), h->vlen);
        ht_insert(t, &cp->node, hk_hash(hent_field(cp), cp->flen), hent_hash, NULL);
    }
    return kv_new_ptr(key, klen, OBJ_HASH, ENC_HT, t, expire);
}

/* The fields, and their deadlines when e has any. */
static struct kv *hash_dup(const struct kv *e, const char *key, size_t klen, long long expire) {
    struct kv *n = hash_dup_data(e, key, klen, expire);
    if (!kv_hfe(e)) return n;
    const struct hashx *x = h_x(e);
    hashx_attach(n);
    struct hashx *nx = h_x(n);
    if (x->ttl.count) ht_resize(&nx->ttl, x->ttl.count, fttl_hash, NULL);
    /* The heap in the same order, so it stays a heap. */
    nx->cap = x->ttl.count;
    nx->heap = nx->cap ? hk_malloc(nx->cap * sizeof(*nx->heap)) : NULL;
    for (size_t i = 0; i < x->ttl.count; i++) {
        const struct fttl *t = x->heap[i];
        struct fttl *cp = fttl_new(t->f, t->flen, t->when);
        heap_place(nx, cp, i);
        ht_insert(&nx->ttl, &cp->node, hk_hash(cp->f, cp->flen), fttl_hash, NULL);
    }
    return n;
}

static void digest_pair(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    unsigned char pair[20] = {0};
    dg_mix(pair, f, fl);
    dg_mix(pair, v, vl);
    dg_xor(ctx, pair, 20);
}

struct digest_ttl_ctx {
    const struct kv *e;
    unsigned char *digest;
};

/* As digest_pair, with Redis 8's marker mixed into the pair of a field
 * that has a TTL (whatever the deadline). */
static void digest_pair_ttl(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    struct digest_ttl_ctx *x = ctx;
    unsigned char pair[20] = {0};
    dg_mix(pair, f, fl);
    dg_mix(pair, v, vl);
    if (hashv_ttl(x->e, f, fl) >= 0) dg_xor(pair, "!!hexpire!!", 11);
    dg_xor(x->digest, pair, 20);
}

/* Each field/value pair digested on its own, the pairs folded by xor, as
 * Redis does: the encoding and the order of the fields do not matter.
 * Fields past their deadline that nothing deleted yet are included. */
static void hash_digest(const struct kv *e, unsigned char digest[20]) {
    if (!kv_hfe(e)) {
        hashv_each(e, digest_pair, digest);
        return;
    }
    struct digest_ttl_ctx x = {e, digest};
    hashv_each(e, digest_pair_ttl, &x);
}

const struct type_ops hash_type_ops = {
    .name = "hash",
    .free = hash_free,
    .free_effort = hash_free_effort,
    .dup = hash_dup,
    .usage = hash_usage,
    .digest = hash_digest,
    .save = hash_rdb_save,
    .load = hash_rdb_load,
};

/* ---- encodings -------------------------------------------------------------------- */

struct kv *hashv_new(const char *key, size_t klen, long long expire) {
    return kv_new_ptr(key, klen, OBJ_HASH, ENC_LISTPACK, lp_new(), expire);
}

uint64_t hashv_len(const struct kv *e) {
    if (h_lp(e)) return lp_count(h_data(e)) / 2;
    return ((const struct htable *)h_data(e))->count;
}

int hashv_packed(const struct kv *e) { return h_lp(e); }

const lpack *hashv_listpack(const struct kv *e) { return h_lp(e) ? h_data(e) : NULL; }

void hashv_convert(struct kv *e, uint64_t hint) {
    lpack *lp = h_data(e);
    struct htable *t = hk_malloc(sizeof(*t));
    ht_init(t);
    uint64_t n = lp_count(lp) / 2;
    if (hint < n) hint = n;
    if (hint) ht_resize(t, hint, hent_hash, NULL);
    struct lp_val f, v;
    for (size_t pos = lp_first(lp); pos != LP_NONE;) {
        size_t vpos = lp_next(lp, pos);
        lp_get(lp, pos, &f);
        lp_get(lp, vpos, &v);
        struct hent *h = hent_new(f.s, f.len, v.s, v.len);
        ht_insert(t, &h->node, hk_hash(f.s, f.len), hent_hash, NULL);
        pos = lp_next(lp, vpos);
    }
    lp_free(lp);
    h_set_data(e, t);
    kv_set_enc(e, kv_hfe(e) ? ENC_HT_EX : ENC_HT);
}

void hashv_try_convert(struct kv *e, uint64_t pairs, size_t longest, size_t total) {
    if (!h_lp(e)) return;
    if (pairs > (uint64_t)TLIM(hash_max_listpack_entries)) {
        /* Presized: the pairs about to come would otherwise grow the new
         * table step by step. */
        hashv_convert(e, pairs);
        return;
    }
    if (longest > (size_t)TLIM(hash_max_listpack_value) ||
        (unsigned long long)lp_bytes(h_data(e)) + total > HASH_LP_SAFE_BYTES)
        hashv_convert(e, 0);
}

/* ---- fields ----------------------------------------------------------------------- */

int hashv_get(const struct kv *e, const char *f, size_t fl, struct hashv_val *out) {
    if (h_lp(e)) {
        const lpack *lp = h_data(e);
        size_t pos = lp_find(lp, lp_first(lp), f, fl, 1);
        if (pos == LP_NONE) return 0;
        lp_get(lp, lp_next(lp, pos), &out->tmp);
        out->s = out->tmp.s;
        out->len = out->tmp.len;
        return 1;
    }
    struct hnode **link = hash_ht_find(h_data(e), f, fl);
    if (!link) return 0;
    const struct hent *h = (const struct hent *)*link;
    out->tmp.is_int = 0;
    out->s = hent_value(h);
    out->len = h->vlen;
    return 1;
}

int hashv_exists(const struct kv *e, const char *f, size_t fl) {
    if (h_lp(e)) {
        const lpack *lp = h_data(e);
        return lp_find(lp, lp_first(lp), f, fl, 1) != LP_NONE;
    }
    return hash_ht_find(h_data(e), f, fl) != NULL;
}

/* hashv_set and hashv_set_keepttl: with keep 0 the field loses its TTL. */
static int hash_set(struct kv *e, const char *f, size_t fl, const char *v, size_t vl, int keep) {
    if (!keep) fttl_drop(e, f, fl);
    if (h_lp(e)) {
        size_t maxv = (size_t)TLIM(hash_max_listpack_value);
        if (fl > maxv || vl > maxv || (unsigned long long)lp_bytes(h_data(e)) + fl + vl > HASH_LP_SAFE_BYTES)
            hashv_convert(e, 0);
    }
    if (h_lp(e)) {
        lpack *lp = h_data(e);
        size_t pos = lp_find(lp, lp_first(lp), f, fl, 1);
        if (pos != LP_NONE) {
            h_set_data(e, lp_replace(lp, lp_next(lp, pos), v, vl, NULL));
            return HASHV_UPDATED;
        }
        lp = lp_append(lp, f, fl);
        lp = lp_append(lp, v, vl);
        h_set_data(e, lp);
        if ((unsigned long long)lp_count(lp) / 2 > (unsigned long long)TLIM(hash_max_listpack_entries))
            hashv_convert(e, 0);
        return HASHV_CREATED;
    }
    struct htable *t = h_data(e);
    struct hnode **link = hash_ht_find(t, f, fl);
    struct hent *h = hent_new(f, fl, v, vl);
    if (link) {
        /* Same chain position, so a scan in progress is not disturbed. */
        struct hnode *old = *link;
        h->node.next = old->next;
        *link = &h->node;
        hk_free(old);
        return HASHV_UPDATED;
    }
    ht_insert(t, &h->node, hk_hash(f, fl), hent_hash, NULL);
    return HASHV_CREATED;
}

int hashv_set(struct kv *e, const char *f, size_t fl, const char *v, size_t vl) { return hash_set(e, f, fl, v, vl, 0); }

int hashv_set_keepttl(struct kv *e, const char *f, size_t fl, const char *v, size_t vl) {
    return hash_set(e, f, fl, v, vl, 1);
}

int hashv_del(struct kv *e, const char *f, size_t fl, struct pre_change *pc) {
    if (h_lp(e)) {
        lpack *lp = h_data(e);
        size_t pos = lp_find(lp, lp_first(lp), f, fl, 1);
        if (pos == LP_NONE) return 0;
        pre_change(pc);
        fttl_drop(e, f, fl);
        size_t next;
        lp = lp_delete(lp, pos, &next);
        lp = lp_delete(lp, next, NULL);
        h_set_data(e, lp);
        return 1;
    }
    struct htable *t = h_data(e);
    struct hnode **link = hash_ht_find(t, f, fl);
    if (!link) return 0;
    pre_change(pc);
    fttl_drop(e, f, fl);
    struct hnode *n = *link;
    ht_unlink(t, link);
    hk_free(n);
    return 1;
}

void hashv_shrink(struct kv *e) {
    if (!h_lp(e)) ht_maybe_shrink(h_data(e), hent_hash, NULL);
}

/* ---- walking ---------------------------------------------------------------------- */

void hashv_each(const struct kv *e, hashv_visit_fn fn, void *ctx) {
    if (h_lp(e)) {
        const lpack *lp = h_data(e);
        struct lp_val f, v;
        for (size_t pos = lp_first(lp); pos != LP_NONE;) {
            size_t vpos = lp_next(lp, pos);
            lp_get(lp, pos, &f);
            lp_get(lp, vpos, &v);
            fn(ctx, f.s, f.len, v.s, v.len);
            pos = lp_next(lp, vpos);
        }
        return;
    }
    struct ht_iter it;
    ht_iter_init(&it, h_data(e));
    for (struct hnode *n; (n = ht_iter_next(&it));) {
        const struct hent *h = (const struct hent *)n;
        fn(ctx, hent_field(h), h->flen, hent_value(h), h->vlen);
    }
}

struct hscan_step {
    hashv_visit_fn fn;
    void *ctx;
};

static void hscan_step_visit(struct hnode *n, void *arg) {
    struct hscan_step *s = arg;
    const struct hent *h = (const struct hent *)n;
    s->fn(s->ctx, hent_field(h), h->flen, hent_value(h), h->vlen);
}

uint64_t hashv_scan(struct kv *e, uint64_t cursor, hashv_visit_fn fn, void *ctx) {
    if (h_lp(e)) {
        hashv_each(e, fn, ctx);
        return 0;
    }
    struct hscan_step s = {fn, ctx};
    return ht_scan(h_data(e), cursor, hscan_step_visit, &s);
}

/* ---- random picks ----------------------------------------------------------------- */

/* A uniformly random field of a non-empty hash table (htable.h's fair
 * sampler). */
static const struct hent *hash_ht_random(struct ht_sampler *sm) { return (const struct hent *)ht_sampler_next(sm); }

static void visit_lp_pair(const lpack *lp, size_t pos, hashv_visit_fn fn, void *ctx) {
    struct lp_val f, v;
    lp_get(lp, pos, &f);
    lp_get(lp, lp_next(lp, pos), &v);
    fn(ctx, f.s, f.len, v.s, v.len);
}

static void visit_hent(const struct hent *h, hashv_visit_fn fn, void *ctx) {
    fn(ctx, hent_field(h), h->flen, hent_value(h), h->vlen);
}

void hashv_random_field(struct kv *e, struct hashv_val *f) {
    if (h_lp(e)) {
        const lpack *lp = h_data(e);
        lp_get(lp, lp_seek(lp, (long long)(hk_rand64() % hashv_len(e)) * 2), &f->tmp);
        f->s = f->tmp.s;
        f->len = f->tmp.len;
        return;
    }
    struct ht_sampler sm;
    ht_sampler_init(&sm, h_data(e), 1);
    const struct hent *h = hash_ht_random(&sm);
    f->tmp.is_int = 0;
    f->s = hent_field(h);
    f->len = h->flen;
}

/* Distinct random entries of a large table (count well below its size):
 * random picks, duplicates rejected through a small open-addressing set
 * of pointers, so no array of the whole table is built. */
static void hash_ht_sparse(struct htable *t, uint64_t count, hashv_visit_fn fn, void *ctx) {
    size_t cap = 16;
    while (cap < count * 2) cap <<= 1;
    const struct hent **set = hk_calloc(cap, sizeof(*set));
    struct ht_sampler sm;
    ht_sampler_init(&sm, t, count);
    uint64_t got = 0;
    while (got < count) {
        const struct hent *h = hash_ht_random(&sm);
        size_t i = (size_t)(((uintptr_t)h >> 4) * 0x9E3779B97F4A7C15ULL) & (cap - 1);
        while (set[i] && set[i] != h) i = (i + 1) & (cap - 1);
        if (set[i]) continue;
        set[i] = h;
        got++;
        visit_hent(h, fn, ctx);
    }
    hk_free(set);
}

void hashv_random_pairs(struct kv *e, uint64_t count, int distinct, hashv_visit_fn fn, void *ctx) {
    uint64_t size = hashv_len(e);
    if (!distinct || count == 1) {
        if (h_lp(e)) {
            /* Positions once, so each pick costs no walk of the listpack. */
            const lpack *lp = h_data(e);
            size_t *pos = hash_lp_fields(lp, size);
            for (uint64_t i = 0; i < count; i++) visit_lp_pair(lp, pos[hk_rand64() % size], fn, ctx);
            hk_free(pos);
        } else {
            struct ht_sampler sm;
            ht_sampler_init(&sm, h_data(e), count);
            for (uint64_t i = 0; i < count; i++) visit_hent(hash_ht_random(&sm), fn, ctx);
        }
        return;
    }
    if (count >= size) {
        hashv_each(e, fn, ctx);
        return;
    }
    /* A partial Fisher-Yates shuffle: the first count slots end up a
     * uniform random subset in random order. */
    if (h_lp(e)) {
        const lpack *lp = h_data(e);
        size_t *pos = hash_lp_fields(lp, size);
        for (uint64_t i = 0; i < count; i++) {
            size_t j = (size_t)(i + hk_rand64() % (size - i));
            size_t tmp = pos[i];
            pos[i] = pos[j];
            pos[j] = tmp;
            visit_lp_pair(lp, pos[i], fn, ctx);
        }
        hk_free(pos);
        return;
    }
    struct htable *t = h_data(e);
    if (count * 3 <= size) {
        hash_ht_sparse(t, count, fn, ctx);
        return;
    }
    const struct hent **a = hk_malloc((size_t)size * sizeof(*a));
    size_t n = 0;
    struct ht_iter it;
    ht_iter_init(&it, t);
    for (struct hnode *h; (h = ht_iter_next(&it));) a[n++] = (const struct hent *)h;
    for (uint64_t i = 0; i < count; i++) {
        size_t j = (size_t)(i + hk_rand64() % (size - i));
        const struct hent *tmp = a[i];
        a[i] = a[j];
        a[j] = tmp;
        visit_hent(a[i], fn, ctx);
    }
    hk_free(a);
}

/* ---- arithmetic ------------------------------------------------------------------- */

int hashv_incrby_result(const struct kv *e, const char *f, size_t fl, long long incr, long long *out) {
    long long value = 0;
    struct hashv_val v;
    if (hashv_get(e, f, fl, &v)) {
        /* A packed integer is already decoded: no need to parse its digits. */
        if (v.tmp.is_int) value = v.tmp.v;
        else if (!hk_str2ll(v.s, v.len, &value)) return HK_ERR_HASH_NOT_INT;
    }
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) || (incr > 0 && value > 0 && incr > LLONG_MAX - value))
        return HK_ERR_OVERFLOW;
    *out = value + incr;
    return HK_OK;
}

int hashv_incrbyfloat_result(const struct kv *e, const char *f, size_t fl, long double incr, long double *out) {
    long double value = 0;
    struct hashv_val v;
    if (hashv_get(e, f, fl, &v) && !hk_str2ld(v.s, v.len, &value)) return HK_ERR_HASH_NOT_FLOAT;
    value += incr;
    if (isnan(value) || isinf(value)) return HK_ERR_NAN_INF;
    *out = value;
    return HK_OK;
}


/* ---- field TTLs ------------------------------------------------------------------- */

int hashv_has_ttl(const struct kv *e) { return kv_hfe(e); }

uint64_t hashv_ttl_count(const struct kv *e) { return kv_hfe(e) ? h_x(e)->ttl.count : 0; }

long long hashv_ttl(const struct kv *e, const char *f, size_t fl) {
    struct hnode **link = fttl_find(e, f, fl);
    return link ? ((const struct fttl *)*link)->when : -1;
}

int hashv_field_expired(const struct kv *e, const char *f, size_t fl, long long now_ms) {
    if (hashv_next_expire(e) > now_ms) return 0;
    long long when = hashv_ttl(e, f, fl);
    return when >= 0 && when <= now_ms;
}

void hashv_set_ttl(struct kv *e, const char *f, size_t fl, long long when) {
    if (!kv_hfe(e)) hashx_attach(e);
    struct hashx *x = h_x(e);
    struct hnode **link = fttl_find(e, f, fl);
    if (link) {
        struct fttl *t = (struct fttl *)*link;
        t->when = when;
        heap_update(x, t);
        return;
    }
    struct fttl *t = fttl_new(f, fl, when);
    heap_push(x, t, x->ttl.count);
    ht_insert(&x->ttl, &t->node, hk_hash(f, fl), fttl_hash, NULL);
}

int hashv_persist(struct kv *e, const char *f, size_t fl) { return fttl_drop(e, f, fl); }

long long hashv_next_expire(const struct kv *e) {
    if (!kv_hfe(e)) return LLONG_MAX;
    const struct hashx *x = h_x(e);
    return x->ttl.count ? x->heap[0]->when : LLONG_MAX;
}

unsigned hashv_expire_due(struct kv *e, long long now_ms, unsigned max, hashv_field_fn fn, void *ctx) {
    unsigned n = 0;
    char small[64];
    while (n < max && hashv_next_expire(e) <= now_ms) {
        struct fttl *t = h_x(e)->heap[0];
        if (fn) fn(ctx, t->f, t->flen);
        /* Deleting the field drops its deadline (t) too: a copy of the
         * name outlives it. */
        size_t fl = t->flen;
        char *f = fl <= sizeof(small) ? small : hk_malloc(fl);
        memcpy(f, t->f, fl);
        if (!hashv_del(e, f, fl, NULL)) fttl_drop(e, f, fl);
        if (f != small) hk_free(f);
        n++;
    }
    return n;
}

int hashv_ttl_trim(struct kv *e) {
    if (!kv_hfe(e)) return 0;
    struct hashx *x = h_x(e);
    if (x->ttl.count) return 0;
    void *data = x->data;
    ht_release(&x->ttl);
    hk_free(x->heap);
    hk_free(x);
    kv_set_ptr(e, data);
    kv_set_enc(e, kv_enc(e) == ENC_LISTPACK_EX ? ENC_LISTPACK : ENC_HT);
    return 1;
}

