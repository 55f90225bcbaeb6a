/* rdb_hash.c - the hash value in Redis's RDB encoding: written as Redis
 * writes it (HASH_LISTPACK or HASH; with field TTLs HASH_LISTPACK_EX or
 * HASH_METADATA, as Redis 7.4 and 8 do), read in every layout Redis 2.x
 * to 8 wrote. Not the hash itself (hash.c): this file converts it to and
 * from the bytes.
 *
 *   HASH (4)              len pairs, then field, value strings
 *   HASH_ZIPMAP (9)       a zipmap blob (Redis 2.4 and older)
 *   HASH_ZIPLIST (13)     a ziplist blob of field, value, ...
 *   HASH_LISTPACK (16)    a listpack blob of field, value, ...
 *   HASH_METADATA_PRE_GA (22)  len, then per field its deadline (len, 0
 *                         none), field, value
 *   HASH_LISTPACK_EX_PRE_GA (23)  a listpack of field, value, deadline
 *                         (an integer, 0 none)
 *   HASH_METADATA (24)    the earliest deadline (8 bytes little endian),
 *                         len, then per field its deadline relative to
 *                         the earliest plus one (0 none), field, value
 *   HASH_LISTPACK_EX (25) the earliest deadline (8 bytes, 0 none), then
 *                         a 23 listpack, ordered as Redis keeps it: the
 *                         fields with a deadline first, earliest first,
 *                         then the others
 *
 * Deadlines are unix ms up to 2^48 - 1. Which type a hash is written as
 * is rdb_value_type's choice; the body follows it. Loading builds the
 * encoding the hash-max-listpack-* limits give, as Redis does: blobs
 * convert to a table on their field count alone, field-by-field layouts
 * on each field's length too. Fields whose deadline passed before
 * `now_ms` are dropped, as a Redis master drops them, unless that would
 * leave the hash empty: then they stay, and the keyspace's field expiry
 * deletes them (and the key) as it deletes any due field. Duplicate
 * fields, malformed blobs, deadlines out of range and triplets out of
 * Redis's order are refused. */
#include "rdb.h"

#include "../core/alloc.h"
#include "../core/listpack.h"
#include "hash.h"
#include "kv.h"
#include "types.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Redis's bounds on a field deadline (ebuckets): the largest valid one,
 * and the "none" marker an earliest deadline may carry. */
#define HFE_MAX ((1ULL << 48) - 1)
#define HFE_INVALID (1ULL << 48)
/* The clock expired fields are judged by when a slot loads a hash: the
 * input's, once struct rdb_in carries one; -1 keeps every field. */
#define RDB_HASH_NOW(in) ((in)->now_ms)
/* A listpack hash is never built past this many bytes (Redis's
 * lpSafeToAdd bound); a bigger one loads as a table. */
#define HASH_LP_SAFE ((size_t)1 << 30)

/* ---- writing ---- */

struct pair {
    char *f, *v;
    size_t fl, vl;
    long long when; /* LLONG_MAX: no deadline */
    size_t ord;
};

struct pairs {
    const struct kv *e;
    struct pair *a;
    size_t n, cap;
};

static void collect_pair(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    struct pairs *ps = ctx;
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? ps->cap * 2 : 16;
        ps->a = hk_realloc(ps->a, ps->cap * sizeof(*ps->a));
    }
    struct pair *p = &ps->a[ps->n];
    p->f = hk_malloc(fl + 1);
    p->v = hk_malloc(vl + 1);
    memcpy(p->f, f, fl);
    memcpy(p->v, v, vl);
    p->fl = fl;
    p->vl = vl;
    long long w = hashv_ttl(ps->e, f, fl);
    p->when = w < 0 ? LLONG_MAX : w;
    p->ord = ps->n++;
}

static int cmp_pair(const void *a, const void *b) {
    const struct pair *x = a, *y = b;
    if (x->when != y->when) return x->when < y->when ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static void pairs_free(struct pairs *ps) {
    for (size_t i = 0; i < ps->n; i++) {
        hk_free(ps->a[i].f);
        hk_free(ps->a[i].v);
    }
    hk_free(ps->a);
}

struct put_ctx {
    struct rdb_out *o;
    struct rdb_lpw *lp;
};

static void put_pair_lp(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    struct put_ctx *c = ctx;
    rdb_lpw_add(c->lp, f, fl);
    rdb_lpw_add(c->lp, v, vl);
}

static void put_pair_str(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    struct put_ctx *c = ctx;
    rdb_put_string(c->o, f, fl);
    rdb_put_string(c->o, v, vl);
}

struct meta_ctx {
    struct rdb_out *o;
    const struct kv *e;
    long long min;
};

static void put_pair_meta(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    struct meta_ctx *c = ctx;
    long long w = hashv_ttl(c->e, f, fl);
    rdb_put_len(c->o, w < 0 ? 0 : (uint64_t)(w - c->min) + 1);
    rdb_put_string(c->o, f, fl);
    rdb_put_string(c->o, v, vl);
}

int hash_rdb_save(const struct kv *e, struct rdb_out *o) {
    int t = rdb_value_type(e, o);
    struct rdb_lpw lp;
    struct put_ctx c = {o, &lp};
    long long min = hashv_next_expire(e);
    switch (t) {
    case RDB_TYPE_HASH_LISTPACK:
        rdb_lpw_init(&lp);
        hashv_each(e, put_pair_lp, &c);
        return rdb_put_lpw(o, &lp);
    case RDB_TYPE_HASH:
        rdb_put_len(o, hashv_len(e));
        hashv_each(e, put_pair_str, &c);
        return 0;
    case RDB_TYPE_HASH_LISTPACK_EX: {
        rdb_put_u64le(o, min == LLONG_MAX ? 0 : (uint64_t)min);
        struct pairs ps = {e, NULL, 0, 0};
        hashv_each(e, collect_pair, &ps);
        if (ps.n) qsort(ps.a, ps.n, sizeof(*ps.a), cmp_pair);
        rdb_lpw_init(&lp);
        for (size_t i = 0; i < ps.n; i++) {
            rdb_lpw_add(&lp, ps.a[i].f, ps.a[i].fl);
            rdb_lpw_add(&lp, ps.a[i].v, ps.a[i].vl);
            rdb_lpw_add_int(&lp, ps.a[i].when == LLONG_MAX ? 0 : ps.a[i].when);
        }
        pairs_free(&ps);
        return rdb_put_lpw(o, &lp);
    }
    case RDB_TYPE_HASH_METADATA: {
        struct meta_ctx m = {o, e, min == LLONG_MAX ? (long long)HFE_INVALID : min};
        rdb_put_u64le(o, (uint64_t)m.min);
        rdb_put_len(o, hashv_len(e));
        hashv_each(e, put_pair_meta, &m);
        return 0;
    }
    default:
        return -1;
    }
}

/* ---- reading ---- */

/* What a load accumulates besides the hash: fields past their deadline
 * (dropped at the end unless they are all there is). */
struct hload {
    struct rdb_in *in;
    long long now_ms;
    uint64_t expired;
};

/* Give field f its deadline when it has one; count it when it is due. */
static void hload_ttl(struct hload *h, struct kv *e, const char *f, size_t fl, uint64_t when) {
    if (!when) return;
    hashv_set_ttl(e, f, fl, (long long)when);
    if (h->now_ms >= 0 && (long long)when < h->now_ms) h->expired++;
}

/* The end of a load: drop what was due (unless it is every field),
 * and the side table when no deadline is left. */
static struct kv *hload_finish(struct hload *h, struct kv *e) {
    if (h->expired && h->expired < hashv_len(e)) {
        hashv_expire_due(e, h->now_ms - 1, UINT_MAX, NULL, NULL);
        hashv_shrink(e);
    }
    hashv_ttl_trim(e);
    return e;
}

/* HASH, HASH_METADATA and its pre-GA form: field by field. */
static struct kv *load_fields(struct hload *h, int type, const char *key, size_t klen, long long expire) {
    struct rdb_in *in = h->in;
    uint64_t min = 0, n;
    int meta = type == RDB_TYPE_HASH_METADATA || type == RDB_TYPE_HASH_METADATA_PRE_GA;
    if (type == RDB_TYPE_HASH_METADATA) {
        if (rdb_get_u64le(in, &min) < 0) return NULL;
        if (min > HFE_INVALID) {
            rdb_fail(in, "Hash read invalid minExpire value");
            return NULL;
        }
    }
    if (rdb_get_len(in, &n, NULL) < 0) return NULL;
    if (n == 0) {
        rdb_fail(in, "Empty hash");
        return NULL;
    }
    struct kv *e = hashv_new(key, klen, expire);
    if (n > (uint64_t)TLIM(hash_max_listpack_entries)) {
        /* Presized, but only as far as the input has shown it can back:
         * a corrupt count costs no allocation. */
        hashv_convert(e, n < 4096 ? n : 4096);
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t when = 0;
        if (meta) {
            uint64_t ttl;
            if (rdb_get_len(in, &ttl, NULL) < 0) goto fail;
            if (type == RDB_TYPE_HASH_METADATA && ttl) {
                if (ttl - 1 > HFE_MAX || min + (ttl - 1) > HFE_MAX) {
                    rdb_fail(in, "invalid expireAt time");
                    goto fail;
                }
                when = min + ttl - 1;
            } else {
                when = ttl;
            }
            if (when > HFE_MAX) {
                rdb_fail(in, "invalid expireAt time: %llu", (unsigned long long)when);
                goto fail;
            }
        }
        size_t fl, vl;
        char *f = rdb_get_string(in, &fl);
        if (!f) goto fail;
        char *v = rdb_get_string(in, &vl);
        if (!v) {
            hk_free(f);
            goto fail;
        }
        int dup = hashv_exists(e, f, fl);
        if (!dup) {
            hashv_set(e, f, fl, v, vl);
            hload_ttl(h, e, f, fl, when);
        }
        hk_free(f);
        hk_free(v);
        if (dup) {
            rdb_fail(in, "Duplicate hash fields detected");
            goto fail;
        }
    }
    return hload_finish(h, e);
fail:
    kv_free(e);
    return NULL;
}

/* The listpack (or ziplist) layouts: pairs, or triplets with a deadline. */
static struct kv *load_blob(struct hload *h, int type, const char *key, size_t klen, long long expire) {
    struct rdb_in *in = h->in;
    int triplets = type == RDB_TYPE_HASH_LISTPACK_EX || type == RDB_TYPE_HASH_LISTPACK_EX_PRE_GA;
    const char *what = type == RDB_TYPE_HASH_ZIPLIST ? "Hash ziplist" : "Hash listpack";
    if (type == RDB_TYPE_HASH_LISTPACK_EX) {
        uint64_t min; /* the earliest deadline: informational */
        if (rdb_get_u64le(in, &min) < 0) return NULL;
    }
    struct rdb_blob b;
    char *owned;
    if (rdb_get_blob(in, &b, type == RDB_TYPE_HASH_ZIPLIST ? RDB_BLOB_ZIPLIST : RDB_BLOB_LISTPACK, &owned) < 0)
        return NULL;
    struct kv *e = NULL;
    unsigned stride = triplets ? 3 : 2;
    if (rdb_blob_check_unique(in, &b, stride, what) < 0) goto out;
    if (b.count == 0) {
        rdb_fail(in, "Empty hash");
        goto out;
    }
    /* The deadlines are integers in range; the pairs' bytes decide the
     * encoding before anything is built. */
    struct lp_val f, v, t;
    size_t bytes = 0;
    long long prev = 0;
    int untimed = 0;
    while (rdb_blob_next(&b, &f) && rdb_blob_next(&b, &v)) {
        bytes += f.len + v.len;
        if (!triplets) continue;
        rdb_blob_next(&b, &t);
        if (!t.is_int || t.v < 0 || (uint64_t)t.v > HFE_MAX) {
            rdb_fail(in, "%s integrity check failed (field deadline)", what);
            goto out;
        }
        /* Redis keeps the fields with a deadline first, in deadline order,
         * and relies on it: anything else is corrupt. */
        if (t.v && (untimed || t.v < prev)) {
            rdb_fail(in, "%s integrity check failed (fields out of deadline order)", what);
            goto out;
        }
        if (t.v) prev = t.v;
        else untimed = 1;
    }
    rdb_blob_rewind(&b);
    uint64_t pairs = b.count / stride;
    int table = pairs > (uint64_t)TLIM(hash_max_listpack_entries) || bytes > HASH_LP_SAFE;
    if (table) {
        e = hashv_new(key, klen, expire);
        hashv_convert(e, pairs);
        while (rdb_blob_next(&b, &f) && rdb_blob_next(&b, &v)) {
            hashv_set(e, f.s, f.len, v.s, v.len);
            if (triplets && rdb_blob_next(&b, &t)) hload_ttl(h, e, f.s, f.len, (uint64_t)t.v);
        }
    } else {
        lpack *lp = lp_new();
        while (rdb_blob_next(&b, &f) && rdb_blob_next(&b, &v)) {
            lp = lp_append(lp, f.s, f.len);
            lp = lp_append(lp, v.s, v.len);
            if (triplets) rdb_blob_next(&b, &t);
        }
        e = kv_new_ptr(key, klen, OBJ_HASH, ENC_LISTPACK, lp, expire);
        if (triplets) {
            rdb_blob_rewind(&b);
            while (rdb_blob_next(&b, &f) && rdb_blob_next(&b, &v) && rdb_blob_next(&b, &t))
                hload_ttl(h, e, f.s, f.len, (uint64_t)t.v);
        }
    }
    e = hload_finish(h, e);
out:
    hk_free(owned);
    return e;
}

/* ---- zipmap (Redis 2.4 and older) ----
 * A count byte (254: count it), then per pair: the field's length, the
 * field, the value's length, a byte of unused bytes after the value, the
 * value and those unused bytes; then 0xFF. A length is one byte below
 * 254, else 254 and 4 bytes little endian. */

#define ZM_BIGLEN 254
#define ZM_END 255

/* A zipmap length at p: its size in bytes, 0 when it runs past end or is
 * the end marker. */
static size_t zm_len(const unsigned char *p, const unsigned char *end, uint64_t *len) {
    if (p >= end || *p == ZM_END) return 0;
    if (*p < ZM_BIGLEN) {
        *len = *p;
        return 1;
    }
    if (end - p < 5) return 0;
    *len = (uint64_t)p[1] | (uint64_t)p[2] << 8 | (uint64_t)p[3] << 16 | (uint64_t)p[4] << 24;
    return 5;
}

struct zm_ent {
    const unsigned char *f, *v;
    size_t fl, vl;
};

/* The next pair at *pp, checked against end: 1 with it, 0 at the end
 * marker, -1 when malformed. */
static int zm_next(const unsigned char **pp, const unsigned char *end, struct zm_ent *z) {
    const unsigned char *p = *pp;
    if (p >= end) return -1;
    if (*p == ZM_END) return 0;
    uint64_t fl, vl;
    size_t k = zm_len(p, end, &fl);
    if (!k || fl > (uint64_t)(end - p - (ptrdiff_t)k)) return -1;
    p += k;
    z->f = p;
    z->fl = (size_t)fl;
    p += fl;
    k = zm_len(p, end, &vl);
    if (!k) return -1;
    p += k;
    if (p >= end) return -1;
    unsigned free_bytes = *p++;
    if (vl > (uint64_t)(end - p) || free_bytes > (uint64_t)(end - p) - vl) return -1;
    z->v = p;
    z->vl = (size_t)vl;
    *pp = p + vl + free_bytes;
    return 1;
}

static struct kv *load_zipmap(struct hload *h, const char *key, size_t klen, long long expire) {
    struct rdb_in *in = h->in;
    size_t len;
    char *zm = rdb_get_string(in, &len);
    if (!zm) return NULL;
    const unsigned char *p = (const unsigned char *)zm, *end = p + len;
    struct kv *e = NULL;
    /* The whole blob first: bounds, the end marker last, the count. */
    if (len < 2 || end[-1] != ZM_END) goto corrupt;
    unsigned hdr = p[0];
    const unsigned char *q = p + 1;
    struct zm_ent z;
    uint64_t n = 0;
    size_t maxlen = 0;
    int r;
    while ((r = zm_next(&q, end, &z)) == 1) {
        n++;
        if (z.fl > maxlen) maxlen = z.fl;
        if (z.vl > maxlen) maxlen = z.vl;
    }
    if (r < 0 || q != end - 1 || (hdr < ZM_BIGLEN && hdr != n) || n == 0) goto corrupt;
    e = hashv_new(key, klen, expire);
    q = p + 1;
    while (zm_next(&q, end, &z) == 1) {
        if (hashv_exists(e, (const char *)z.f, z.fl)) {
            rdb_fail(in, "Hash zipmap with dup elements, or big length (%zu)", z.fl);
            kv_free(e);
            e = NULL;
            goto out;
        }
        hashv_set(e, (const char *)z.f, z.fl, (const char *)z.v, z.vl);
    }
    /* Converted on the count or the longest string, as Redis does. */
    if (hashv_packed(e) &&
        (n > (uint64_t)TLIM(hash_max_listpack_entries) || maxlen > (size_t)TLIM(hash_max_listpack_value)))
        hashv_convert(e, 0);
    goto out;
corrupt:
    rdb_fail(in, "Zipmap integrity check failed.");
out:
    hk_free(zm);
    return e;
}

struct kv *hash_rdb_load_at(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire,
                            long long now_ms) {
    struct hload h = {in, now_ms, 0};
    switch (rdb_type) {
    case RDB_TYPE_HASH:
    case RDB_TYPE_HASH_METADATA:
    case RDB_TYPE_HASH_METADATA_PRE_GA:
        return load_fields(&h, rdb_type, key, klen, expire);
    case RDB_TYPE_HASH_ZIPLIST:
    case RDB_TYPE_HASH_LISTPACK:
    case RDB_TYPE_HASH_LISTPACK_EX:
    case RDB_TYPE_HASH_LISTPACK_EX_PRE_GA:
        return load_blob(&h, rdb_type, key, klen, expire);
    case RDB_TYPE_HASH_ZIPMAP:
        return load_zipmap(&h, key, klen, expire);
    default:
        rdb_fail(in, "RDB type %d is not a hash", rdb_type);
        return NULL;
    }
}

struct kv *hash_rdb_load(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire) {
    return hash_rdb_load_at(in, rdb_type, key, klen, expire, RDB_HASH_NOW(in));
}
