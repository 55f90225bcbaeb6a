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

/* ---- value lifecycle (hash_type_ops) ---------------------------------------------- */

static void hash_free(struct kv *e) {
    if (kv_enc(e) == ENC_LISTPACK) {
        lp_free(kv_ptr(e));
        return;
    }
    struct htable *t = kv_ptr(e);
    ht_drain(t, hent_free, NULL);
    hk_free(t);
}

/* Bytes used by the value. For a hash table, `samples` entries (0 = all)
 * are measured and the average is scaled to the whole table, as MEMORY
 * USAGE SAMPLES does in Redis. */
static size_t hash_usage(const struct kv *e, size_t samples) {
    if (kv_enc(e) == ENC_LISTPACK) return hk_usable_size(kv_ptr(e));
    const struct htable *t = kv_ptr(e);
    size_t n = hk_usable_size((void *)t) + ht_overhead(t);
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
static struct kv *hash_dup(const struct kv *e, const char *key, size_t klen, long long expire) {
    if (kv_enc(e) == ENC_LISTPACK) return kv_new_ptr(key, klen, OBJ_HASH, ENC_LISTPACK, lp_dup(kv_ptr(e)), expire);
    const struct htable *src = kv_ptr(e);
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

static void digest_pair(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    unsigned char pair[20] = {0};
    dg_mix(pair, f, fl);
    dg_mix(pair, v, vl);
    dg_xor(ctx, pair, 20);
}

/* Each field/value pair digested on its own, the pairs folded by xor, as
 * Redis does: the encoding and the order of the fields do not matter. */
static void hash_digest(const struct kv *e, unsigned char digest[20]) { hashv_each(e, digest_pair, digest); }

const struct type_ops hash_type_ops = {
    .name = "hash", .free = hash_free, .dup = hash_dup, .usage = hash_usage, .digest = hash_digest,
};

/* ---- encodings -------------------------------------------------------------------- */

struct kv *hashv_new(const char *key, size_t klen, long long expire) {
    return kv_new_ptr(key, klen, OBJ_HASH, ENC_LISTPACK, lp_new(), expire);
}

uint64_t hashv_len(const struct kv *e) {
    if (kv_enc(e) == ENC_LISTPACK) return lp_count(kv_ptr(e)) / 2;
    return ((const struct htable *)kv_ptr(e))->count;
}

int hashv_packed(const struct kv *e) { return kv_enc(e) == ENC_LISTPACK; }

void hashv_convert(struct kv *e, uint64_t hint) {
    lpack *lp = kv_ptr(e);
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
    kv_set_ptr(e, t);
    kv_set_enc(e, ENC_HT);
}

void hashv_try_convert(struct kv *e, uint64_t pairs, size_t longest, size_t total) {
    if (kv_enc(e) != ENC_LISTPACK) return;
    if (pairs > (uint64_t)TLIM(hash_max_listpack_entries)) {
        /* Presized: the pairs about to come would otherwise grow the new
         * table step by step. */
        hashv_convert(e, pairs);
        return;
    }
    if (longest > (size_t)TLIM(hash_max_listpack_value) ||
        (unsigned long long)lp_bytes(kv_ptr(e)) + total > HASH_LP_SAFE_BYTES)
        hashv_convert(e, 0);
}

/* ---- fields ----------------------------------------------------------------------- */

int hashv_get(const struct kv *e, const char *f, size_t fl, struct hashv_val *out) {
    if (kv_enc(e) == ENC_LISTPACK) {
        const lpack *lp = kv_ptr(e);
        size_t pos = lp_find(lp, lp_first(lp), f, fl, 1);
        if (pos == LP_NONE) return 0;
        lp_get(lp, lp_next(lp, pos), &out->tmp);
        out->s = out->tmp.s;
        out->len = out->tmp.len;
        return 1;
    }
    struct hnode **link = hash_ht_find(kv_ptr(e), f, fl);
    if (!link) return 0;
    const struct hent *h = (const struct hent *)*link;
    out->tmp.is_int = 0;
    out->s = hent_value(h);
    out->len = h->vlen;
    return 1;
}

int hashv_exists(const struct kv *e, const char *f, size_t fl) {
    if (kv_enc(e) == ENC_LISTPACK) {
        const lpack *lp = kv_ptr(e);
        return lp_find(lp, lp_first(lp), f, fl, 1) != LP_NONE;
    }
    return hash_ht_find(kv_ptr(e), f, fl) != NULL;
}

int hashv_set(struct kv *e, const char *f, size_t fl, const char *v, size_t vl) {
    if (kv_enc(e) == ENC_LISTPACK) {
        size_t maxv = (size_t)TLIM(hash_max_listpack_value);
        if (fl > maxv || vl > maxv || (unsigned long long)lp_bytes(kv_ptr(e)) + fl + vl > HASH_LP_SAFE_BYTES)
            hashv_convert(e, 0);
    }
    if (kv_enc(e) == ENC_LISTPACK) {
        lpack *lp = kv_ptr(e);
        size_t pos = lp_find(lp, lp_first(lp), f, fl, 1);
        if (pos != LP_NONE) {
            kv_set_ptr(e, lp_replace(lp, lp_next(lp, pos), v, vl, NULL));
            return HASHV_UPDATED;
        }
        lp = lp_append(lp, f, fl);
        lp = lp_append(lp, v, vl);
        kv_set_ptr(e, lp);
        if ((unsigned long long)lp_count(lp) / 2 > (unsigned long long)TLIM(hash_max_listpack_entries))
            hashv_convert(e, 0);
        return HASHV_CREATED;
    }
    struct htable *t = kv_ptr(e);
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

int hashv_del(struct kv *e, const char *f, size_t fl, struct pre_change *pc) {
    if (kv_enc(e) == ENC_LISTPACK) {
        lpack *lp = kv_ptr(e);
        size_t pos = lp_find(lp, lp_first(lp), f, fl, 1);
        if (pos == LP_NONE) return 0;
        pre_change(pc);
        size_t next;
        lp = lp_delete(lp, pos, &next);
        lp = lp_delete(lp, next, NULL);
        kv_set_ptr(e, lp);
        return 1;
    }
    struct htable *t = kv_ptr(e);
    struct hnode **link = hash_ht_find(t, f, fl);
    if (!link) return 0;
    pre_change(pc);
    struct hnode *n = *link;
    ht_unlink(t, link);
    hk_free(n);
    return 1;
}

void hashv_shrink(struct kv *e) {
    if (kv_enc(e) == ENC_HT) ht_maybe_shrink(kv_ptr(e), hent_hash, NULL);
}

/* ---- walking ---------------------------------------------------------------------- */

void hashv_each(const struct kv *e, hashv_visit_fn fn, void *ctx) {
    if (kv_enc(e) == ENC_LISTPACK) {
        const lpack *lp = kv_ptr(e);
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
    ht_iter_init(&it, kv_ptr(e));
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
    if (kv_enc(e) == ENC_LISTPACK) {
        hashv_each(e, fn, ctx);
        return 0;
    }
    struct hscan_step s = {fn, ctx};
    return ht_scan(kv_ptr(e), cursor, hscan_step_visit, &s);
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
    if (kv_enc(e) == ENC_LISTPACK) {
        const lpack *lp = kv_ptr(e);
        lp_get(lp, lp_seek(lp, (long long)(hk_rand64() % hashv_len(e)) * 2), &f->tmp);
        f->s = f->tmp.s;
        f->len = f->tmp.len;
        return;
    }
    struct ht_sampler sm;
    ht_sampler_init(&sm, kv_ptr(e), 1);
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
        if (kv_enc(e) == ENC_LISTPACK) {
            /* Positions once, so each pick costs no walk of the listpack. */
            const lpack *lp = kv_ptr(e);
            size_t *pos = hash_lp_fields(lp, size);
            for (uint64_t i = 0; i < count; i++) visit_lp_pair(lp, pos[hk_rand64() % size], fn, ctx);
            hk_free(pos);
        } else {
            struct ht_sampler sm;
            ht_sampler_init(&sm, kv_ptr(e), count);
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
    if (kv_enc(e) == ENC_LISTPACK) {
        const lpack *lp = kv_ptr(e);
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
    struct htable *t = kv_ptr(e);
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

