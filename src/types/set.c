/* set.c - the SET value's encodings (intset, listpack, hash table of
 * `snode`s), their operations and conversions, and the type's lifecycle
 * (free, dup, usage, digest); see set.h. It is not the set commands: those,
 * with their replies, keyspace writes and propagation, are in
 * src/cmd/set.c. */
#include "set.h"

#include "../core/alloc.h"
#include "../core/hash.h"
#include "../core/intset.h"
#include "../core/util.h"
#include "digest.h"
#include "rdb.h"
#include "types.h"

#include <string.h>

/* A member of the hash table encoding. */
struct snode {
    struct hnode node;
    size_t len;
    char s[];
};

/* Listpacks are capped well below their 4 GiB offset limit, as Redis caps
 * them at 1 GiB, so a huge member goes to the hash table instead. */
#define SET_LP_SAFE_BYTES (1ULL << 30)

/* set-max-intset-entries, capped where an intset's 32-bit length and its
 * reallocations stop being sensible. */
static size_t intset_cap(void) {
    long long m = TLIM(set_max_intset_entries);
    return m > (1LL << 30) ? (size_t)1 << 30 : (size_t)m;
}

static void val_int(struct lp_val *v, long long x) {
    v->is_int = 1;
    v->v = x;
    v->len = (size_t)hk_ll2str(v->buf, x);
    v->s = v->buf;
}

static void val_node(struct lp_val *v, const struct snode *e) {
    v->is_int = 0;
    v->s = e->s;
    v->len = e->len;
}

/* ---- the hash table encoding ------------------------------------------ */

static uint64_t snode_hash(const struct hnode *n, void *ctx) {
    (void)ctx;
    const struct snode *e = (const struct snode *)n;
    return hk_hash(e->s, e->len);
}

static struct htable *sht_new(void) {
    struct htable *t = hk_malloc(sizeof(*t));
    ht_init(t);
    return t;
}

struct skey {
    const char *s;
    size_t len;
};

static int snode_match(const struct hnode *n, const void *key) {
    const struct snode *e = (const struct snode *)n;
    const struct skey *k = key;
    return e->len == k->len && memcmp(e->s, k->s, k->len) == 0;
}

/* Link to the node holding s/len, NULL when absent. May move entries of a
 * table being rehashed. */
static struct hnode **sht_find(struct htable *t, const char *s, size_t len) {
    struct skey k = {s, len};
    return ht_find_link(t, hk_hash(s, len), snode_match, &k);
}

/* Insert s/len (copied) known to be absent. */
static void sht_insert(struct htable *t, const char *s, size_t len) {
    struct snode *e = hk_malloc(sizeof(*e) + len);
    e->node.next = NULL;
    e->len = len;
    memcpy(e->s, s, len);
    ht_insert(t, &e->node, hk_hash(s, len), snode_hash, NULL);
}

static int sht_add(struct htable *t, const char *s, size_t len, struct pre_change *pc) {
    if (sht_find(t, s, len)) return 0;
    pre_change(pc);
    sht_insert(t, s, len);
    return 1;
}

/* s may be the node's own bytes: it is not read once the node is freed. */
static int sht_remove(struct htable *t, const char *s, size_t len, struct pre_change *pc) {
    struct hnode **l = sht_find(t, s, len);
    if (!l) return 0;
    pre_change(pc);
    struct hnode *n = *l;
    ht_unlink(t, l);
    hk_free(n);
    ht_maybe_shrink(t, snode_hash, NULL);
    return 1;
}

static void snode_free(struct hnode *n, void *ctx) {
    (void)ctx;
    hk_free(n);
}

static void sht_free(struct htable *t) {
    ht_drain(t, snode_free, NULL);
    hk_free(t);
}

/* A deep copy, presized so that no insert rehashes. */
static struct htable *sht_dup(const struct htable *t) {
    struct htable *d = sht_new();
    if (t->count) ht_resize(d, ht_size(t), snode_hash, NULL);
    struct ht_iter it;
    ht_iter_init(&it, t);
    for (struct hnode *n; (n = ht_iter_next(&it));) {
        const struct snode *sn = (const struct snode *)n;
        sht_insert(d, sn->s, sn->len);
    }
    return d;
}

/* ---- creation and destruction ----------------------------------------- */

struct setv setv_new(int enc) {
    struct setv o = {enc, NULL};
    if (enc == ENC_LISTPACK) o.p = lp_new();
    else if (enc == ENC_HT) o.p = sht_new();
    else o.p = intset_new();
    return o;
}

struct setv setv_create(const char *first, size_t len, uint64_t hint) {
    long long iv;
    struct setv o;
    if (hk_str2ll(first, len, &iv) && hint <= intset_cap()) {
        o = setv_new(ENC_INTSET);
    } else if ((long long)hint <= TLIM(set_max_listpack_entries)) {
        o = setv_new(ENC_LISTPACK);
    } else {
        o = setv_new(ENC_HT);
        ht_resize(o.p, hint, snode_hash, NULL);
    }
    return o;
}

struct kv *setv_entry(const char *key, size_t klen, const struct setv *o) {
    return kv_new_ptr(key, klen, OBJ_SET, o->enc, o->p, -1);
}

void setv_free(struct setv *o) {
    if (o->enc == ENC_INTSET) intset_free(o->p);
    else if (o->enc == ENC_LISTPACK) lp_free(o->p);
    else sht_free(o->p);
    o->p = NULL;
}

/* ---- reading ---------------------------------------------------------- */

uint64_t setv_size(const struct setv *o) {
    switch (o->enc) {
    case ENC_INTSET: return intset_len(o->p);
    case ENC_LISTPACK: return lp_count(o->p);
    default: return ((struct htable *)o->p)->count;
    }
}

int setv_has(const struct setv *o, const char *s, size_t len) {
    if (o->enc == ENC_INTSET) {
        long long iv;
        return hk_str2ll(s, len, &iv) && intset_find(o->p, iv, NULL);
    }
    if (o->enc == ENC_LISTPACK) {
        const lpack *lp = o->p;
        return lp_count(lp) && lp_find(lp, lp_first(lp), s, len, 0) != LP_NONE;
    }
    return sht_find(o->p, s, len) != NULL;
}

int setv_has_val(const struct setv *o, const struct lp_val *v) {
    if (o->enc == ENC_INTSET) {
        long long iv = v->v;
        if (!v->is_int && !hk_str2ll(v->s, v->len, &iv)) return 0;
        return intset_find(o->p, iv, NULL);
    }
    return setv_has(o, lp_val_ptr(v), v->len);
}

void setv_iter_init(struct setv_iter *it, const struct setv *o) {
    it->o = o;
    it->i = 0;
    it->pos = o->enc == ENC_LISTPACK ? lp_first(o->p) : LP_NONE;
    if (o->enc == ENC_HT) {
        /* Callers may look members up in this same set while iterating,
         * and a lookup during a rehash moves entries under the iterator;
         * finish the rehash first (a full iteration costs as much). */
        ht_rehash_all(o->p);
        ht_iter_init(&it->hi, o->p);
    }
}

int setv_iter_next(struct setv_iter *it, struct lp_val *v) {
    const struct setv *o = it->o;
    if (o->enc == ENC_INTSET) {
        if (it->i >= intset_len(o->p)) return 0;
        val_int(v, intset_get(o->p, it->i++));
        return 1;
    }
    if (o->enc == ENC_LISTPACK) {
        if (it->pos == LP_NONE) return 0;
        lp_get(o->p, it->pos, v);
        it->pos = lp_next(o->p, it->pos);
        return 1;
    }
    struct hnode *n = ht_iter_next(&it->hi);
    if (!n) return 0;
    val_node(v, (const struct snode *)n);
    return 1;
}

void setv_foreach(const struct setv *o, void (*fn)(const char *s, size_t len, void *ctx), void *ctx) {
    struct setv_iter it;
    struct lp_val v;
    setv_iter_init(&it, o);
    while (setv_iter_next(&it, &v)) fn(lp_val_ptr(&v), v.len, ctx);
}

struct scan_fwd {
    void (*fn)(const char *s, size_t len, void *ctx);
    void *ctx;
};

static void scan_visit(struct hnode *n, void *arg) {
    const struct scan_fwd *f = arg;
    const struct snode *e = (const struct snode *)n;
    f->fn(e->s, e->len, f->ctx);
}

uint64_t setv_scan(const struct setv *o, uint64_t cursor, void (*fn)(const char *s, size_t len, void *ctx),
                   void *ctx) {
    struct scan_fwd f = {fn, ctx};
    return ht_scan(o->p, cursor, scan_visit, &f);
}

void setv_rand_init(struct setv_rand *r, const struct setv *o, uint64_t picks) {
    r->o = o;
    r->picks = picks;
    r->ready = 0;
}

void setv_rand_next(struct setv_rand *r, struct lp_val *v) {
    const struct setv *o = r->o;
    uint64_t n = setv_size(o);
    if (o->enc == ENC_INTSET) {
        val_int(v, intset_get(o->p, (uint32_t)(hk_rand64() % n)));
        return;
    }
    if (o->enc == ENC_LISTPACK) {
        lp_get(o->p, lp_seek(o->p, (long long)(hk_rand64() % n)), v);
        return;
    }
    if (!r->ready || r->hs.t != o->p) {
        ht_sampler_init(&r->hs, o->p, r->picks);
        r->ready = 1;
    }
    val_node(v, (const struct snode *)ht_sampler_next(&r->hs));
}

void setv_random(const struct setv *o, struct lp_val *v) {
    struct setv_rand r;
    setv_rand_init(&r, o, 1);
    setv_rand_next(&r, v);
}

/* ---- writing ---------------------------------------------------------- */

void setv_convert(struct setv *o, int enc) {
    struct setv n = setv_new(enc);
    struct setv_iter it;
    struct lp_val v;
    setv_iter_init(&it, o);
    while (setv_iter_next(&it, &v)) {
        if (enc == ENC_LISTPACK) {
            n.p = v.is_int ? lp_append_int(n.p, v.v) : lp_append(n.p, v.s, v.len);
        } else if (enc == ENC_HT) {
            sht_insert(n.p, lp_val_ptr(&v), v.len);
        } else {
            long long x = v.v;
            int added;
            if (!v.is_int) hk_str2ll(v.s, v.len, &x);
            n.p = intset_add(n.p, x, &added);
        }
    }
    setv_free(o);
    *o = n;
}

void setv_maybe_convert(struct setv *o, uint64_t hint) {
    if ((o->enc == ENC_LISTPACK && (long long)hint > TLIM(set_max_listpack_entries)) ||
        (o->enc == ENC_INTSET && hint > intset_cap()))
        setv_convert(o, ENC_HT);
}

void setv_maybe_intset(struct setv *o) {
    if (o->enc == ENC_INTSET || setv_size(o) > intset_cap()) return;
    struct setv_iter it;
    struct lp_val v;
    long long iv;
    setv_iter_init(&it, o);
    while (setv_iter_next(&it, &v))
        if (!v.is_int && !hk_str2ll(v.s, v.len, &iv)) return;
    setv_convert(o, ENC_INTSET);
}

static size_t digits10(long long v) {
    char buf[HK_LONG_STR_SIZE];
    return (size_t)hk_ll2str(buf, v);
}

/* Add s/len (isint/iv: its integer value when it is a canonical integer).
 * Converts as Redis 7.2 does: an intset past set-max-intset-entries becomes
 * a hash table; an intset receiving a string becomes a listpack if the
 * result fits the listpack limits, else a hash table; a listpack past its
 * limits becomes a hash table. */
static int add_parsed(struct setv *o, const char *s, size_t len, int isint, long long iv, struct pre_change *pc) {
    if (o->enc == ENC_INTSET) {
        struct intset *is = o->p;
        if (isint) {
            uint32_t at;
            if (pre_change_pending(pc)) {
                if (intset_find(is, iv, &at)) return 0;
                pre_change(pc);
            }
            int added;
            o->p = intset_add(is, iv, &added);
            if (added && intset_len(o->p) > intset_cap()) setv_convert(o, ENC_HT);
            return added;
        }
        uint32_t n = intset_len(is);
        size_t maxlen = 0;
        if (n) {
            size_t a = digits10(intset_min(is)), b = digits10(intset_max(is));
            maxlen = a > b ? a : b;
        }
        unsigned long long vmax = (unsigned long long)TLIM(set_max_listpack_value);
        pre_change(pc);
        if ((long long)n < TLIM(set_max_listpack_entries) && len <= vmax && maxlen <= vmax &&
            (unsigned long long)n * 12 + len < SET_LP_SAFE_BYTES) {
            setv_convert(o, ENC_LISTPACK);
            o->p = lp_append(o->p, s, len);
        } else {
            setv_convert(o, ENC_HT);
            sht_insert(o->p, s, len);
        }
        return 1;
    }
    if (o->enc == ENC_LISTPACK) {
        lpack *lp = o->p;
        if (lp_count(lp) && lp_find(lp, lp_first(lp), s, len, 0) != LP_NONE) return 0;
        pre_change(pc);
        if ((long long)lp_count(lp) < TLIM(set_max_listpack_entries) &&
            len <= (unsigned long long)TLIM(set_max_listpack_value) && lp_bytes(lp) + len + 16 < SET_LP_SAFE_BYTES) {
            o->p = isint ? lp_append_int(lp, iv) : lp_append(lp, s, len);
        } else {
            setv_convert(o, ENC_HT);
            sht_insert(o->p, s, len);
        }
        return 1;
    }
    return sht_add(o->p, s, len, pc);
}

int setv_add(struct setv *o, const char *s, size_t len, struct pre_change *pc) {
    long long iv = 0;
    int isint = hk_str2ll(s, len, &iv);
    return add_parsed(o, s, len, isint, iv, pc);
}

int setv_add_val(struct setv *o, const struct lp_val *v) {
    if (v->is_int) return add_parsed(o, lp_val_ptr(v), v->len, 1, v->v, NULL);
    return setv_add(o, v->s, v->len, NULL);
}

int setv_remove(struct setv *o, const char *s, size_t len, struct pre_change *pc) {
    if (o->enc == ENC_INTSET) {
        long long iv;
        uint32_t at;
        if (!hk_str2ll(s, len, &iv) || !intset_find(o->p, iv, &at)) return 0;
        pre_change(pc);
        o->p = intset_remove_at(o->p, at);
        return 1;
    }
    if (o->enc == ENC_LISTPACK) {
        lpack *lp = o->p;
        if (!lp_count(lp)) return 0;
        size_t pos = lp_find(lp, lp_first(lp), s, len, 0);
        if (pos == LP_NONE) return 0;
        pre_change(pc);
        o->p = lp_delete(lp, pos, NULL);
        return 1;
    }
    return sht_remove(o->p, s, len, pc);
}

/* ---- value lifecycle (type table) ------------------------------------- */

static void set_ops_free(struct kv *e) {
    struct setv o = setv_of(e);
    setv_free(&o);
}

/* One allocation per member of a hash-table set; intsets and listpacks
 * are one. */
static size_t set_ops_free_effort(const struct kv *e) {
    struct setv o = setv_of(e);
    return o.enc == ENC_HT ? (size_t)setv_size(&o) : 1;
}

/* The hash table is sampled: `samples` members (0 = all) are measured and
 * the average scaled to the member count, as MEMORY USAGE does. */
static size_t set_ops_usage(const struct kv *e, size_t samples) {
    int enc = kv_enc(e);
    const void *ptr = kv_ptr(e);
    if (enc == ENC_INTSET) return intset_bytes(ptr);
    if (enc == ENC_LISTPACK) return lp_bytes(ptr);
    const struct htable *t = ptr;
    size_t base = sizeof(*t) + ht_overhead(t), seen = 0, bytes = 0;
    struct ht_iter it;
    ht_iter_init(&it, t);
    for (struct hnode *n; (!samples || seen < samples) && (n = ht_iter_next(&it));) {
        bytes += sizeof(struct snode) + ((const struct snode *)n)->len;
        seen++;
    }
    if (!seen) return base;
    return base + (size_t)((double)bytes / (double)seen * (double)t->count);
}

static struct kv *set_ops_dup(const struct kv *e, const char *key, size_t klen, long long expire) {
    int enc = kv_enc(e);
    const void *ptr = kv_ptr(e);
    void *v;
    if (enc == ENC_INTSET) v = intset_dup(ptr);
    else if (enc == ENC_LISTPACK) v = lp_dup(ptr);
    else v = sht_dup(ptr);
    return kv_new_ptr(key, klen, OBJ_SET, enc, v, expire);
}

/* Members are folded by xor: their order does not matter, and an integer
 * digests as its decimal form whatever the encoding, as in Redis. */
static void set_ops_digest(const struct kv *e, unsigned char digest[20]) {
    struct setv o = setv_of(e);
    struct setv_iter it;
    struct lp_val v;
    setv_iter_init(&it, &o);
    while (setv_iter_next(&it, &v)) dg_xor(digest, lp_val_ptr(&v), v.len);
}

/* ---- RDB (rdb.h) -------------------------------------------------------- */

/* An intset as an intset blob (RDB_TYPE_SET_INTSET); a listpack as a
 * listpack blob (RDB_TYPE_SET_LISTPACK) where the version has it, else,
 * like a hash table, as RDB_TYPE_SET: the count and each member. */
static int set_save(const struct kv *e, struct rdb_out *o) {
    struct setv v = setv_of(e);
    struct setv_iter it;
    struct lp_val m;
    if (v.enc == ENC_INTSET) {
        rdb_put_intset(o, v.p);
        return 0;
    }
    setv_iter_init(&it, &v);
    if (v.enc == ENC_LISTPACK && o->version >= 11) {
        struct rdb_lpw w;
        rdb_lpw_init(&w);
        while (setv_iter_next(&it, &m)) rdb_lpw_add_val(&w, &m);
        return rdb_put_lpw(o, &w);
    }
    rdb_put_len(o, setv_size(&v));
    while (setv_iter_next(&it, &m)) rdb_put_string(o, lp_val_ptr(&m), m.len);
    return 0;
}

/* RDB_TYPE_SET: members added one by one as Redis 7.2 loads them: an
 * intset first (a hash table when the count already passes
 * set-max-intset-entries), converting to a listpack or a hash table as a
 * string member or the thresholds require. */
static int set_load_plain(struct rdb_in *in, struct setv *o) {
    uint64_t n;
    if (rdb_get_len(in, &n, NULL) < 0) return -1;
    if (n == 0) return rdb_fail_empty(in, "set");
    *o = setv_new(n > intset_cap() ? ENC_HT : ENC_INTSET);
    for (uint64_t i = 0; i < n; i++) {
        size_t len;
        char *m = rdb_get_string(in, &len);
        if (!m) return -1;
        int added = setv_add(o, m, len, NULL);
        hk_free(m);
        if (!added) return rdb_fail(in, "Duplicate set members detected");
    }
    return 0;
}

/* RDB_TYPE_SET_INTSET: kept an intset unless it has more members than
 * set-max-intset-entries allows (then a hash table). */
static int set_load_intset(struct rdb_in *in, struct setv *o) {
    size_t len;
    uint32_t w, n;
    char *blob = rdb_get_string(in, &len);
    if (!blob) return -1;
    int r = rdb_intset_open(in, blob, len, &w, &n);
    if (r == 0 && n == 0) r = rdb_fail_empty(in, "set");
    if (r < 0) {
        hk_free(blob);
        return -1;
    }
    int ht = n > intset_cap();
    *o = setv_new(ht ? ENC_HT : ENC_INTSET);
    for (uint32_t i = 0; i < n; i++) {
        int64_t x = rdb_intset_at(blob, w, i);
        if (ht) {
            char buf[HK_LONG_STR_SIZE];
            sht_insert(o->p, buf, (size_t)hk_ll2str(buf, x));
        } else {
            int added;
            o->p = intset_add(o->p, x, &added);
        }
    }
    hk_free(blob);
    return 0;
}

/* RDB_TYPE_SET_LISTPACK: kept a listpack unless it has more members than
 * set-max-listpack-entries allows. Duplicates are refused either way. */
static int set_load_listpack(struct rdb_in *in, struct setv *o) {
    struct rdb_blob b;
    struct lp_val v;
    char *owned;
    if (rdb_get_blob(in, &b, RDB_BLOB_LISTPACK, &owned) < 0) return -1;
    int r = b.count ? rdb_blob_check_unique(in, &b, 1, "Set listpack") : rdb_fail_empty(in, "set");
    if (r < 0) {
        hk_free(owned);
        return -1;
    }
    int ht = (long long)b.count > TLIM(set_max_listpack_entries);
    *o = setv_new(ht ? ENC_HT : ENC_LISTPACK);
    while (rdb_blob_next(&b, &v)) {
        if (ht) sht_insert(o->p, lp_val_ptr(&v), v.len);
        else o->p = v.is_int ? lp_append_int(o->p, v.v) : lp_append(o->p, v.s, v.len);
    }
    hk_free(owned);
    return 0;
}

static struct kv *set_load(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire) {
    struct setv o = {ENC_INTSET, NULL};
    int r;
    switch (rdb_type) {
    case RDB_TYPE_SET: r = set_load_plain(in, &o); break;
    case RDB_TYPE_SET_INTSET: r = set_load_intset(in, &o); break;
    case RDB_TYPE_SET_LISTPACK: r = set_load_listpack(in, &o); break;
    default: r = rdb_fail(in, "RDB type %d is not a set", rdb_type);
    }
    if (r < 0) {
        if (o.p) setv_free(&o);
        return NULL;
    }
    return kv_new_ptr(key, klen, OBJ_SET, o.enc, o.p, expire);
}

const struct type_ops set_type_ops = {
    .name = "set",
    .free = set_ops_free,
    .free_effort = set_ops_free_effort,
    .dup = set_ops_dup,
    .usage = set_ops_usage,
    .digest = set_ops_digest,
    .save = set_save,
    .load = set_load,
};
