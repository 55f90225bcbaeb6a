/* set.c - the SET type: its three encodings and every non-blocking set
 * command (SADD, SREM, SISMEMBER, SMISMEMBER, SMEMBERS, SCARD, SPOP,
 * SRANDMEMBER, SMOVE, SINTER, SINTERCARD, SINTERSTORE, SUNION,
 * SUNIONSTORE, SDIFF, SDIFFSTORE, SSCAN).
 *
 * A set value is an intset (only integers, at most set-max-intset-entries),
 * a listpack (at most set-max-listpack-entries members of at most
 * set-max-listpack-value bytes) or a hash table of `snode`s. Conversions
 * only go towards the bigger encoding while a set lives, as in Redis 7.2;
 * only a freshly computed SINTERSTORE result may start small again. The
 * hash table resizes all at once (htable.h); that is accepted for now.
 *
 * Handlers run with the shards of all their keys locked by dispatch, so
 * multi-key commands are atomic. This file is not the blocking-command
 * machinery and knows nothing of persistence. */
#include "../core/alloc.h"
#include "../core/hash.h"
#include "../core/intset.h"
#include "../core/listpack.h"
#include "../core/util.h"
#include "../server/config.h"
#include "cmds.h"
#include "cmdutil.h"
#include "../types/digest.h"
#include "../types/types.h"
#include "setval.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the value: encodings and their operations ------------------------ */

/* A set value being worked on: encoding plus pointer. Operations may
 * change both; set_store() writes them back to the key entry. */
struct sobj {
    int enc;
    void *p;
};

/* A member of the hash table encoding. */
struct snode {
    struct hnode node;
    size_t len;
    char s[];
};

/* Listpacks are capped well below their 4 GiB offset limit, as Redis caps
 * them at 1 GiB, so a huge member goes to the hash table instead. */
#define SET_LP_SAFE_BYTES (1ULL << 30)
/* Chain depth sampled by sobj_random. */
#define SET_RAND_DEPTH 4

static size_t intset_cap(void) {
    long long m = TLIM(set_max_intset_entries);
    return m > (1LL << 30) ? (size_t)1 << 30 : (size_t)m;
}

/* Text of an element whatever it came from (an lp_val copied by value
 * keeps integers in its own buf). */
static inline const char *ev_ptr(const struct lp_val *v) { return v->is_int ? v->buf : v->s; }

static void ev_int(struct lp_val *v, long long x) {
    v->is_int = 1;
    v->v = x;
    v->len = (size_t)hk_ll2str(v->buf, x);
    v->s = v->buf;
}

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

/* Link to the node holding s/len, NULL when absent. */
struct skey {
    const char *s;
    size_t len;
};

static int snode_match(const struct hnode *n, const void *key) {
    const struct snode *e = (const struct snode *)n;
    const struct skey *k = key;
    return e->len == k->len && memcmp(e->s, k->s, k->len) == 0;
}

static struct hnode **sht_find(struct htable *t, const char *s, size_t len) {
    struct skey k = {s, len};
    return ht_find_link(t, hk_hash(s, len), snode_match, &k);
}

/* Insert s/len known to be absent. */
static void sht_insert(struct htable *t, const char *s, size_t len) {
    struct snode *e = hk_malloc(sizeof(*e) + len);
    e->node.next = NULL;
    e->len = len;
    memcpy(e->s, s, len);
    ht_insert(t, &e->node, hk_hash(s, len), snode_hash, NULL);
}

static int sht_add(struct htable *t, const char *s, size_t len) {
    if (sht_find(t, s, len)) return 0;
    sht_insert(t, s, len);
    return 1;
}

static int sht_remove(struct htable *t, const char *s, size_t len) {
    struct hnode **l = sht_find(t, s, len);
    if (!l) return 0;
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

static uint64_t sobj_size(const struct sobj *o) {
    switch (o->enc) {
    case ENC_INTSET: return intset_len(o->p);
    case ENC_LISTPACK: return lp_count(o->p);
    default: return ((struct htable *)o->p)->count;
    }
}

/* Iteration in storage order (ascending for intsets). The set must not
 * change while an iterator is live. */
struct siter {
    const struct sobj *o;
    uint32_t i;
    size_t pos;
    struct ht_iter hi;
};

static void sit_init(struct siter *it, const struct sobj *o) {
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

static int sit_next(struct siter *it, struct lp_val *v) {
    const struct sobj *o = it->o;
    if (o->enc == ENC_INTSET) {
        if (it->i >= intset_len(o->p)) return 0;
        ev_int(v, intset_get(o->p, it->i++));
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
    struct snode *e = (struct snode *)n;
    v->is_int = 0;
    v->s = e->s;
    v->len = e->len;
    return 1;
}

/* Rebuild o in encoding `enc` (a bigger one, or intset when every member
 * is an integer). */
static void sobj_convert(struct sobj *o, int enc) {
    struct sobj n = {enc, NULL};
    if (enc == ENC_LISTPACK) n.p = lp_new();
    else if (enc == ENC_HT) n.p = sht_new();
    else n.p = intset_new();
    struct siter it;
    struct lp_val v;
    sit_init(&it, o);
    while (sit_next(&it, &v)) {
        if (enc == ENC_LISTPACK) {
            n.p = v.is_int ? lp_append_int(n.p, v.v) : lp_append(n.p, v.s, v.len);
        } else if (enc == ENC_HT) {
            sht_insert(n.p, ev_ptr(&v), v.len);
        } else {
            long long x = v.v;
            int added;
            if (!v.is_int) hk_str2ll(v.s, v.len, &x);
            n.p = intset_add(n.p, x, &added);
        }
    }
    if (o->enc == ENC_INTSET) intset_free(o->p);
    else if (o->enc == ENC_LISTPACK) lp_free(o->p);
    else sht_free(o->p);
    *o = n;
}

static size_t digits10(long long v) {
    char buf[HK_LONG_STR_SIZE];
    return (size_t)hk_ll2str(buf, v);
}

/* Add s/len (isint/iv: its integer value when it is a canonical integer).
 * Returns 1 when it was not a member. Converts as Redis 7.2 does: an
 * intset past set-max-intset-entries becomes a hash table; an intset
 * receiving a string becomes a listpack if the result fits the listpack
 * limits, else a hash table; a listpack past its limits becomes a hash
 * table. */
static int sobj_add_parsed(struct sobj *o, const char *s, size_t len, int isint, long long iv) {
    if (o->enc == ENC_INTSET) {
        struct intset *is = o->p;
        if (isint) {
            int added;
            o->p = intset_add(is, iv, &added);
            if (added && intset_len(o->p) > intset_cap()) sobj_convert(o, ENC_HT);
            return added;
        }
        uint32_t n = intset_len(is);
        size_t maxlen = 0;
        if (n) {
            size_t a = digits10(intset_min(is)), b = digits10(intset_max(is));
            maxlen = a > b ? a : b;
        }
        unsigned long long vmax = (unsigned long long)TLIM(set_max_listpack_value);
        if ((long long)n < TLIM(set_max_listpack_entries) && len <= vmax && maxlen <= vmax &&
            (unsigned long long)n * 12 + len < SET_LP_SAFE_BYTES) {
            sobj_convert(o, ENC_LISTPACK);
            o->p = lp_append(o->p, s, len);
        } else {
            sobj_convert(o, ENC_HT);
            sht_insert(o->p, s, len);
        }
        return 1;
    }
    if (o->enc == ENC_LISTPACK) {
        lpack *lp = o->p;
        if (lp_count(lp) && lp_find(lp, lp_first(lp), s, len, 0) != LP_NONE) return 0;
        if ((long long)lp_count(lp) < TLIM(set_max_listpack_entries) &&
            len <= (unsigned long long)TLIM(set_max_listpack_value) && lp_bytes(lp) + len + 16 < SET_LP_SAFE_BYTES) {
            o->p = isint ? lp_append_int(lp, iv) : lp_append(lp, s, len);
        } else {
            sobj_convert(o, ENC_HT);
            sht_insert(o->p, s, len);
        }
        return 1;
    }
    return sht_add(o->p, s, len);
}

static int sobj_add(struct sobj *o, const char *s, size_t len) {
    long long iv = 0;
    int isint = hk_str2ll(s, len, &iv);
    return sobj_add_parsed(o, s, len, isint, iv);
}

static int sobj_add_val(struct sobj *o, const struct lp_val *v) {
    if (v->is_int) return sobj_add_parsed(o, ev_ptr(v), v->len, 1, v->v);
    return sobj_add(o, v->s, v->len);
}

static int sobj_has(const struct sobj *o, const char *s, size_t len) {
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

static int sobj_has_val(const struct sobj *o, const struct lp_val *v) {
    if (o->enc == ENC_INTSET) {
        long long iv = v->v;
        if (!v->is_int && !hk_str2ll(v->s, v->len, &iv)) return 0;
        return intset_find(o->p, iv, NULL);
    }
    return sobj_has(o, ev_ptr(v), v->len);
}

static int sobj_remove(struct sobj *o, const char *s, size_t len) {
    if (o->enc == ENC_INTSET) {
        long long iv;
        int removed = 0;
        if (hk_str2ll(s, len, &iv)) o->p = intset_remove(o->p, iv, &removed);
        return removed;
    }
    if (o->enc == ENC_LISTPACK) {
        lpack *lp = o->p;
        if (!lp_count(lp)) return 0;
        size_t pos = lp_find(lp, lp_first(lp), s, len, 0);
        if (pos == LP_NONE) return 0;
        o->p = lp_delete(lp, pos, NULL);
        return 1;
    }
    return sht_remove(o->p, s, len);
}

/* A uniformly random member of a non-empty small set; for the hash table a
 * random non-empty bucket, then a random node of its chain (buckets hold
 * about one entry each, so this is close to uniform, as Redis's is). */
static void sobj_random(const struct sobj *o, struct lp_val *v) {
    uint64_t n = sobj_size(o);
    if (o->enc == ENC_INTSET) {
        ev_int(v, intset_get(o->p, (uint32_t)(hk_rand64() % n)));
        return;
    }
    if (o->enc == ENC_LISTPACK) {
        lp_get(o->p, lp_seek(o->p, (long long)(hk_rand64() % n)), v);
        return;
    }
    /* Draw (bucket, depth) pairs until one names a node: uniform over the
     * members whose chain depth is below SET_RAND_DEPTH, which is all of
     * them in a table kept near load 1. A chain deeper than that is walked
     * whole; after many misses the first non-empty bucket is taken. */
    struct htable *t = o->p;
    struct hnode *h = NULL;
    for (int tries = 0; tries < 1000 && !h; tries++) {
        uint64_t r = hk_rand64();
        struct hnode *x = ht_sample_bucket(t, r);
        if (!x) continue;
        unsigned chain = 0;
        for (struct hnode *y = x; y; y = y->next) chain++;
        unsigned k = (unsigned)((r >> 58) % SET_RAND_DEPTH);
        if (chain > SET_RAND_DEPTH) k = (unsigned)(hk_rand64() % chain);
        else if (k >= chain) continue;
        while (k--) x = x->next;
        h = x;
    }
    if (!h) h = ht_random_bucket(t, hk_rand64());
    struct snode *e = (struct snode *)h;
    v->is_int = 0;
    v->s = e->s;
    v->len = e->len;
}

static void sobj_free(struct sobj *o) {
    if (o->enc == ENC_INTSET) intset_free(o->p);
    else if (o->enc == ENC_LISTPACK) lp_free(o->p);
    else sht_free(o->p);
    o->p = NULL;
}

/* A new empty set able to hold `first`, sized for `hint` members
 * (Redis's setTypeCreate). */
static struct sobj sobj_create(const char *first, size_t len, uint64_t hint) {
    long long iv;
    struct sobj o;
    if (hk_str2ll(first, len, &iv) && hint <= intset_cap()) {
        o.enc = ENC_INTSET;
        o.p = intset_new();
    } else if ((long long)hint <= TLIM(set_max_listpack_entries)) {
        o.enc = ENC_LISTPACK;
        o.p = lp_new();
    } else {
        o.enc = ENC_HT;
        o.p = sht_new();
        uint64_t size = 4;
        while (size < hint && size < (1ULL << 40)) size <<= 1;
        ht_resize(o.p, size, snode_hash, NULL);
    }
    return o;
}

/* After building an SINTERSTORE result: a listpack or hash table whose
 * members are all integers and few enough becomes an intset (Redis 7.2
 * does the same, so OBJECT ENCODING matches). */
static void sobj_maybe_intset(struct sobj *o) {
    if (o->enc == ENC_INTSET || sobj_size(o) > intset_cap()) return;
    struct siter it;
    struct lp_val v;
    long long iv;
    sit_init(&it, o);
    while (sit_next(&it, &v))
        if (!v.is_int && !hk_str2ll(v.s, v.len, &iv)) return;
    sobj_convert(o, ENC_INTSET);
}

/* ---- value lifecycle (obj_ops) ---------------------------------------- */

static void set_ops_free(struct kv *e) {
    struct sobj o = {kv_enc(e), kv_ptr(e)};
    sobj_free(&o);
}

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
    if (enc == ENC_INTSET) {
        v = intset_dup(ptr);
    } else if (enc == ENC_LISTPACK) {
        v = lp_dup(ptr);
    } else {
        const struct htable *t = ptr;
        struct htable *d = sht_new();
        if (t->count) ht_resize(d, ht_size(t), snode_hash, NULL);
        struct ht_iter it;
        ht_iter_init(&it, t);
        for (struct hnode *n; (n = ht_iter_next(&it));) {
            const struct snode *sn = (const struct snode *)n;
            sht_insert(d, sn->s, sn->len);
        }
        v = d;
    }
    return kv_new_ptr(key, klen, OBJ_SET, enc, v, expire);
}

/* Members are folded by xor: their order does not matter. */
static void set_ops_digest(const struct kv *e, unsigned char digest[20]) {
    struct sobj o = {kv_enc(e), kv_ptr(e)};
    struct siter it;
    struct lp_val v;
    sit_init(&it, &o);
    while (sit_next(&it, &v)) dg_xor(digest, ev_ptr(&v), v.len);
}

const struct type_ops set_type_ops = {
    .name = "set", .free = set_ops_free, .dup = set_ops_dup, .usage = set_ops_usage, .digest = set_ops_digest,
};

/* ---- helpers for handlers --------------------------------------------- */

static struct sobj sobj_of(const struct kv *e) {
    struct sobj o = {kv_enc(e), kv_ptr(e)};
    return o;
}

/* Write a modified value back to its entry (the entry itself never moves
 * for this). */
static void set_store(struct kv *e, const struct sobj *o) {
    kv_set_ptr(e, o->p);
    kv_set_enc(e, o->enc);
}

/* Replace key k with the set o (taking ownership, reporting ev), or
 * delete k when o is empty. Returns the size stored. */
static uint64_t set_put_or_delete(struct cmd_ctx *c, const struct keyref *k, struct sobj *o, int ev) {
    uint64_t n = sobj_size(o);
    if (n) {
        db_put(k, kv_new_ptr(k->key, k->klen, OBJ_SET, o->enc, o->p, -1), ev);
    } else {
        sobj_free(o);
        db_delete(k, c->now_ms, KEV_DEL);
    }
    return n;
}

static void reply_val(struct cmd_ctx *c, const struct lp_val *v) { reply_bulk(c, ev_ptr(v), v->len); }

/* Reply every member of o as a RESP3 set (array in RESP2). */
static void reply_members(struct cmd_ctx *c, const struct sobj *o) {
    struct siter it;
    struct lp_val v;
    reply_set(c, (long long)sobj_size(o));
    sit_init(&it, o);
    while (sit_next(&it, &v)) reply_val(c, &v);
}

/* Parse a count as Redis's getLongFromObjectOrReply/getRange...: replies
 * and returns 0 on failure. */
static int parse_count(struct cmd_ctx *c, const hk_slice *a, long long min, long long max, long long *out,
                       const char *msg) {
    long long v;
    if (!hk_str2ll(a->ptr, a->len, &v)) {
        reply_error(c, msg ? msg : ERR_NOT_INT);
        return 0;
    }
    if (v < min || v > max) {
        if (msg) reply_error(c, msg);
        else if (min == 0 && max == LLONG_MAX) reply_error(c, "ERR value is out of range, must be positive");
        else reply_errorf(c, "ERR value is out of range, value must between %lld and %lld", min, max);
        return 0;
    }
    *out = v;
    return 1;
}

/* ---- single-key commands ---------------------------------------------- */

/* SADD key member [member ...] */
void cmd_sadd(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (e && !check_type(c, e, OBJ_SET)) return;
    uint64_t hint = (uint64_t)c->argc - 2;
    struct sobj o = e ? sobj_of(e) : sobj_create(c->argv[2].ptr, c->argv[2].len, hint);
    /* As Redis 7.2: more arguments than the small encoding may hold send
     * an existing set to the hash table before adding (even if most of
     * them turn out to be members already). */
    if (e && ((o.enc == ENC_LISTPACK && (long long)hint > TLIM(set_max_listpack_entries)) ||
              (o.enc == ENC_INTSET && (long long)hint > TLIM(set_max_intset_entries))))
        sobj_convert(&o, ENC_HT);
    long long added = 0;
    for (int i = 2; i < c->argc; i++) {
        /* An existing set reports before its first new member. */
        if (e && !added && !sobj_has(&o, c->argv[i].ptr, c->argv[i].len)) db_written(&k, KEV_SADD);
        added += sobj_add(&o, c->argv[i].ptr, c->argv[i].len);
    }
    if (e) set_store(e, &o);
    else db_put(&k, kv_new_ptr(k.key, k.klen, OBJ_SET, o.enc, o.p, -1), KEV_SADD);
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
    struct sobj o = sobj_of(e);
    long long removed = 0;
    for (int i = 2; i < c->argc; i++) {
        if (!removed && sobj_has(&o, c->argv[i].ptr, c->argv[i].len)) db_written(&k, KEV_SREM);
        removed += sobj_remove(&o, c->argv[i].ptr, c->argv[i].len);
        if (!sobj_size(&o)) break;
    }
    set_store(e, &o);
    if (!sobj_size(&o)) db_delete(&k, c->now_ms, KEV_DEL);
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
    struct sobj o = sobj_of(e);
    reply_int(c, sobj_has(&o, c->argv[2].ptr, c->argv[2].len));
}

void cmd_smismember(struct cmd_ctx *c) {
    int bad;
    struct kv *e = set_lookup_read(c, 1, &bad);
    if (bad) return;
    struct sobj o = e ? sobj_of(e) : (struct sobj){0, NULL};
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) reply_int(c, e && sobj_has(&o, c->argv[i].ptr, c->argv[i].len));
}

void cmd_scard(struct cmd_ctx *c) {
    int bad;
    struct kv *e = set_lookup_read(c, 1, &bad);
    if (bad) return;
    if (!e) {
        reply_int(c, 0);
        return;
    }
    struct sobj o = sobj_of(e);
    reply_int(c, (long long)sobj_size(&o));
}

void cmd_smembers(struct cmd_ctx *c) {
    int bad;
    struct kv *e = set_lookup_read(c, 1, &bad);
    if (bad) return;
    if (!e) {
        reply_set(c, 0);
        return;
    }
    struct sobj o = sobj_of(e);
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
    prop_arg(b->c, ev_ptr(v), v->len);
    b->in_cmd--;
    b->left--;
}

/* SPOP key [count]. Without count: one member or nil. With count: a set
 * (RESP3) of up to count distinct members, all of them (and the key
 * deleted) when count reaches the size. */
void cmd_spop(struct cmd_ctx *c) {
    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    long long count = -1;
    if (c->argc == 3 &&
        !parse_count(c, &c->argv[2], 0, LLONG_MAX, &count, "ERR value is out of range, must be positive"))
        return;
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
    struct sobj o = sobj_of(e);
    uint64_t size = sobj_size(&o);
    /* Random draws do not replay: SPOP propagates as DEL (all of it) or
     * as SREM of the members it took. */
    db_written(&k, KEV_SPOP);
    if (count > 0 && (uint64_t)count >= size) {
        reply_members(c, &o);
        db_delete(&k, c->now_ms, KEV_DEL);
        prop_cmd(c, "DEL", 1, &c->argv[1]);
        return;
    }
    struct srem_batch b = {c, &k, 0};
    if (count > 0 && (size - (uint64_t)count) * 5 <= (uint64_t)count) {
        /* Most members go: draw the few that stay into a new set (which
         * starts small again, as in Redis), reply what is left of the old
         * one and free it. */
        uint64_t remaining = size - (uint64_t)count;
        struct sobj ns;
        ns.enc = o.enc == ENC_INTSET ? ENC_INTSET : ENC_LISTPACK;
        ns.p = ns.enc == ENC_INTSET ? (void *)intset_new() : (void *)lp_new();
        while (remaining--) {
            struct lp_val v, copy;
            sobj_random(&o, &v);
            copy = v;
            sobj_add_val(&ns, &copy);
            sobj_remove(&o, ev_ptr(&copy), copy.len);
        }
        reply_members(c, &o);
        if (prop_on(c)) {
            struct siter it;
            struct lp_val v;
            sit_init(&it, &o);
            b.left = sobj_size(&o);
            while (sit_next(&it, &v)) srem_batch_add(&b, &v);
        }
        sobj_free(&o);
        set_store(e, &ns);
        return;
    }
    long long n = count < 0 ? 1 : count;
    if (count > 0) reply_set(c, n);
    b.left = (uint64_t)n;
    for (long long i = 0; i < n; i++) {
        struct lp_val v, copy;
        sobj_random(&o, &v);
        /* Reply before removing: the member's bytes live in the set. */
        reply_val(c, &v);
        srem_batch_add(&b, &v);
        copy = v;
        if (o.enc == ENC_HT) {
            sht_remove(o.p, copy.s, copy.len);
        } else {
            sobj_remove(&o, ev_ptr(&copy), copy.len);
        }
    }
    set_store(e, &o);
    if (!sobj_size(&o)) db_delete(&k, c->now_ms, KEV_DEL);
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

/* SRANDMEMBER key [count]. A negative count allows repeats and returns
 * exactly |count| members; a positive one returns distinct members. */
void cmd_srandmember(struct cmd_ctx *c) {
    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    long long l = 0;
    int with_count = c->argc == 3;
    if (with_count && !parse_count(c, &c->argv[2], -LLONG_MAX, LLONG_MAX, &l, NULL)) return;
    int bad;
    struct kv *e = set_lookup_read(c, 1, &bad);
    if (bad) return;
    if (!e) {
        if (with_count) reply_array(c, 0);
        else reply_null(c);
        return;
    }
    struct sobj o = sobj_of(e);
    struct lp_val v;
    if (!with_count) {
        sobj_random(&o, &v);
        reply_val(c, &v);
        return;
    }
    uint64_t size = sobj_size(&o);
    if (l == 0) {
        reply_array(c, 0);
        return;
    }
    if (l < 0) {
        unsigned long long count = (unsigned long long)-l;
        reply_array(c, (long long)count);
        if (o.enc == ENC_HT) {
            for (unsigned long long i = 0; i < count; i++) {
                sobj_random(&o, &v);
                reply_val(c, &v);
            }
            return;
        }
        /* Small encodings: index a copy of the members once. */
        struct lp_val *all = hk_malloc(size * sizeof(*all));
        struct siter it;
        sit_init(&it, &o);
        for (uint64_t i = 0; i < size; i++) sit_next(&it, &all[i]);
        for (unsigned long long i = 0; i < count; i++) reply_val(c, &all[hk_rand64() % size]);
        hk_free(all);
        return;
    }
    unsigned long long count = (unsigned long long)l;
    if (count >= size) {
        reply_array(c, (long long)size);
        struct siter it;
        sit_init(&it, &o);
        while (sit_next(&it, &v)) reply_val(c, &v);
        return;
    }
    reply_array(c, (long long)count);
    if (o.enc != ENC_HT || count * 3 > size) {
        /* Copy every member and draw count of them without repeats
         * (a partial Fisher-Yates shuffle). */
        struct lp_val *all = hk_malloc(size * sizeof(*all));
        struct siter it;
        sit_init(&it, &o);
        for (uint64_t i = 0; i < size; i++) sit_next(&it, &all[i]);
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
    unsigned long long got = 0;
    while (got < count) {
        sobj_random(&o, &v);
        uint64_t h = hk_hash(&v.s, sizeof(v.s));
        if (ht_find_link(&seen, h, pick_match, v.s)) continue;
        struct pick *p = hk_malloc(sizeof(*p));
        p->s = v.s;
        p->node.next = NULL;
        ht_insert(&seen, &p->node, h, pick_hash, NULL);
        reply_val(c, &v);
        got++;
    }
    ht_drain(&seen, snode_free, NULL);
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
    struct sobj so = sobj_of(src);
    if (src == dst) {
        reply_int(c, sobj_has(&so, m->ptr, m->len));
        return;
    }
    if (!sobj_has(&so, m->ptr, m->len)) {
        reply_int(c, 0);
        return;
    }
    db_written(&ks_, KEV_SREM);
    sobj_remove(&so, m->ptr, m->len);
    set_store(src, &so);
    if (!sobj_size(&so)) db_delete(&ks_, c->now_ms, KEV_DEL);
    if (dst) {
        struct sobj d = sobj_of(dst);
        if (!sobj_has(&d, m->ptr, m->len)) {
            db_written(&kd, KEV_SADD);
            sobj_add(&d, m->ptr, m->len);
            set_store(dst, &d);
        }
    } else {
        struct sobj d = sobj_create(m->ptr, m->len, 1);
        sobj_add(&d, m->ptr, m->len);
        db_put(&kd, kv_new_ptr(kd.key, kd.klen, OBJ_SET, d.enc, d.p, -1), KEV_SADD);
    }
    reply_int(c, 1);
}

/* ---- multi-key algebra ------------------------------------------------ */

/* Look up n set keys from argv[first]; missing keys give NULL slots.
 * Every key is type-checked (a missing one does not stop the checks, as
 * in Redis). Returns 0 after replying WRONGTYPE. */
static int gather_sets(struct cmd_ctx *c, int first, int n, struct sobj *out, int *missing) {
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
        out[j] = sobj_of(e);
    }
    return 1;
}

static int cmp_by_size(const void *a, const void *b) {
    uint64_t x = sobj_size(a), y = sobj_size(b);
    return x < y ? -1 : x > y;
}

/* SINTER / SINTERSTORE / SINTERCARD. dst: argv index of the destination
 * or 0; card: reply only the count, stopping at limit (0 = none). */
static void set_inter(struct cmd_ctx *c, int first, int n, int dst, int card, long long limit) {
    struct sobj stack[16];
    struct sobj *sets = n <= 16 ? stack : hk_malloc((size_t)n * sizeof(*sets));
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
    struct sobj res = {0, NULL};
    void *hdr = NULL;
    long long cnt = 0;
    if (dst) {
        /* As Redis: an intset smallest set gives an intset result; else
         * start from a listpack and settle the encoding at the end. */
        res.enc = sets[0].enc == ENC_INTSET ? ENC_INTSET : ENC_LISTPACK;
        res.p = res.enc == ENC_INTSET ? (void *)intset_new() : (void *)lp_new();
    } else if (!card) {
        hdr = reply_defer(c);
    }
    struct siter it;
    struct lp_val v;
    sit_init(&it, &sets[0]);
    while (sit_next(&it, &v)) {
        int j;
        for (j = 1; j < n; j++) {
            if (sets[j].p == sets[0].p) continue;
            if (!sobj_has_val(&sets[j], &v)) break;
        }
        if (j < n) continue;
        cnt++;
        if (card) {
            if (limit && cnt >= limit) break;
        } else if (dst) {
            sobj_add_val(&res, &v);
        } else {
            reply_val(c, &v);
        }
    }
    if (dst) {
        struct keyref kd;
        key_of(c, dst, &kd);
        sobj_maybe_intset(&res);
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
    struct sobj stack[16];
    struct sobj *sets = n <= 16 ? stack : hk_malloc((size_t)n * sizeof(*sets));
    int missing;
    if (!gather_sets(c, first, n, sets, &missing)) goto out;
    struct sobj res = {ENC_INTSET, intset_new()};
    struct siter it;
    struct lp_val v;
    if (op == SET_UNION) {
        for (int j = 0; j < n; j++) {
            if (!sets[j].p) continue;
            sit_init(&it, &sets[j]);
            while (sit_next(&it, &v)) sobj_add_val(&res, &v);
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
            work1 += sobj_size(&sets[0]);
            work2 += sobj_size(&sets[j]);
        }
        if (same) {
            /* empty */
        } else if (work1 / 2 <= work2) {
            sit_init(&it, &sets[0]);
            while (sit_next(&it, &v)) {
                int j;
                for (j = 1; j < n; j++)
                    if (sets[j].p && sobj_has_val(&sets[j], &v)) break;
                if (j == n) sobj_add_val(&res, &v);
            }
        } else {
            for (int j = 0; j < n && (j == 0 || sobj_size(&res)); j++) {
                if (!sets[j].p) continue;
                sit_init(&it, &sets[j]);
                while (sit_next(&it, &v)) {
                    if (j == 0) sobj_add_val(&res, &v);
                    else sobj_remove(&res, ev_ptr(&v), v.len);
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
        sobj_free(&res);
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
    long long n;
    if (!hk_str2ll(c->argv[1].ptr, c->argv[1].len, &n) || n < 1) {
        reply_error(c, "ERR numkeys should be greater than 0");
        return;
    }
    if (n > c->argc - 2) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    long long limit = 0;
    for (int j = 2 + (int)n; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "LIMIT") && j + 1 < c->argc) {
            j++;
            if (!hk_str2ll(c->argv[j].ptr, c->argv[j].len, &limit) || limit < 0) {
                reply_error(c, "ERR LIMIT can't be negative");
                return;
            }
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    set_inter(c, 2, (int)n, 0, 1, limit);
}

/* ---- SSCAN ------------------------------------------------------------ */

struct sscan_ctx {
    struct snode **nodes;
    size_t n, cap;
};

static void sscan_visit(struct hnode *n, void *arg) {
    struct sscan_ctx *x = arg;
    if (x->n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 32;
        x->nodes = hk_realloc(x->nodes, x->cap * sizeof(*x->nodes));
    }
    x->nodes[x->n++] = (struct snode *)n;
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
        reply_array(c, 2);
        reply_bulk(c, "0", 1);
        reply_array(c, 0);
        return;
    }
    struct scan_args sa;
    if (!scan_args_or_reply(c, 3, 0, &sa)) return;
    long long count = sa.count;
    const char *pat = sa.pat;
    size_t plen = sa.plen;
    struct sobj o = sobj_of(e);
    struct siter it;
    struct lp_val v;
    if (o.enc != ENC_HT) {
        reply_array(c, 2);
        reply_bulk(c, "0", 1);
        void *h = reply_defer(c);
        long long n = 0;
        sit_init(&it, &o);
        while (sit_next(&it, &v)) {
            if (pat && !hk_globmatch(pat, plen, ev_ptr(&v), v.len, 0)) continue;
            reply_val(c, &v);
            n++;
        }
        reply_fill_array(c, h, n);
        return;
    }
    struct htable *t = o.p;
    struct sscan_ctx x = {0};
    long long maxvisits = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10, visits = 0;
    do {
        cursor = ht_scan(t, cursor, sscan_visit, &x);
        visits++;
    } while (cursor && (long long)x.n < count && visits < maxvisits);
    char cbuf[24];
    int cl = snprintf(cbuf, sizeof(cbuf), "%llu", (unsigned long long)cursor);
    size_t keep = 0;
    for (size_t i = 0; i < x.n; i++)
        if (!pat || hk_globmatch(pat, plen, x.nodes[i]->s, x.nodes[i]->len, 0)) x.nodes[keep++] = x.nodes[i];
    reply_array(c, 2);
    reply_bulk(c, cbuf, (size_t)cl);
    reply_array(c, (long long)keep);
    for (size_t i = 0; i < keep; i++) reply_bulk(c, x.nodes[i]->s, x.nodes[i]->len);
    hk_free(x.nodes);
}

/* ---- read-only access for other families (setval.h) -------------------- */

uint64_t set_value_size(const struct kv *e) {
    struct sobj o = sobj_of(e);
    return sobj_size(&o);
}

int set_value_has(const struct kv *e, const char *s, size_t len) {
    struct sobj o = sobj_of(e);
    return sobj_has(&o, s, len);
}

void set_value_foreach(const struct kv *e, void (*fn)(const char *s, size_t len, void *ctx), void *ctx) {
    struct sobj o = sobj_of(e);
    struct siter it;
    struct lp_val v;
    sit_init(&it, &o);
    while (sit_next(&it, &v)) fn(ev_ptr(&v), v.len, ctx);
}
