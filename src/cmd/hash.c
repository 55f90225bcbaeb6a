/* hash.c - the HASH type: its two encodings and the H* commands.
 *
 * A small hash is a listpack holding field, value, field, value ... (the
 * "listpack" encoding); once it holds more than hash-max-listpack-entries
 * fields, or a field or value longer than hash-max-listpack-value bytes, it
 * becomes an intrusive hash table of entries that carry the field and the
 * value in one allocation (the "hashtable" encoding). Like Redis, a hash
 * never converts back. The table resizes all at once (htable.h), so a
 * command that grows a very large hash may pay for one full rehash; the
 * keyspace-level incremental resizing does not apply to values yet.
 *
 * This file is not the keyspace: entries are found and created through
 * cmdutil.h/db.h with the key's shard locked by dispatch, and every
 * function here runs under that lock. */
#include "cmdutil.h"
#include "../types/digest.h"
#include "../types/types.h"

#include "../core/alloc.h"
#include "../core/hash.h"
#include "../core/htable.h"
#include "../core/listpack.h"
#include "../core/util.h"
#include "../server/config.h"

#include <errno.h>
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

/* The link that points at field f in t, or NULL when absent. */
struct hkey {
    const char *f;
    size_t fl;
};

static int hent_match(const struct hnode *n, const void *key) {
    const struct hent *h = (const struct hent *)n;
    const struct hkey *k = key;
    return h->flen == k->fl && (k->fl == 0 || memcmp(hent_field(h), k->f, k->fl) == 0);
}

static struct hnode **hash_ht_find(struct htable *t, const char *f, size_t fl) {
    struct hkey k = {f, fl};
    return ht_find_link(t, hk_hash(f, fl), hent_match, &k);
}

/* ---- value lifecycle (obj_ops) --------------------------------------------------- */

static void hent_free(struct hnode *n, void *ctx) {
    (void)ctx;
    hk_free(n);
}

static void hash_ht_free(struct htable *t) {
    ht_drain(t, hent_free, NULL);
    hk_free(t);
}

static void hash_free(struct kv *e) {
    if (kv_enc(e) == ENC_LISTPACK) lp_free(kv_ptr(e));
    else hash_ht_free(kv_ptr(e));
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

static void hash_each(const struct kv *e, void (*fn)(void *ctx, const char *f, size_t fl, const char *v, size_t vl),
                      void *ctx);

static void digest_pair(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    unsigned char pair[20] = {0};
    dg_mix(pair, f, fl);
    dg_mix(pair, v, vl);
    dg_xor(ctx, pair, 20);
}

/* Each field/value pair digested on its own, the pairs folded by xor:
 * the order of the fields does not matter. */
static void hash_digest(const struct kv *e, unsigned char digest[20]) { hash_each(e, digest_pair, digest); }

const struct type_ops hash_type_ops = {
    .name = "hash", .free = hash_free, .dup = hash_dup, .usage = hash_usage, .digest = hash_digest,
};

/* ---- encoding-independent operations ---------------------------------------------- */

static uint64_t hash_len(const struct kv *e) {
    if (kv_enc(e) == ENC_LISTPACK) return lp_count(kv_ptr(e)) / 2;
    return ((const struct htable *)kv_ptr(e))->count;
}

/* Convert a listpack hash to a hash table presized for `hint` fields
 * (0: its current size). Only ever called on listpack hashes. */
static void hash_convert(struct kv *e, uint64_t hint) {
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

/* Before setting the field/value arguments argv[start..end] (pairs):
 * convert when they cannot all stay in a listpack. Like Redis, the number
 * of pairs is compared with the limit before duplicates are known. */
static void hash_try_convert(struct kv *e, const hk_slice *argv, int start, int end) {
    if (kv_enc(e) != ENC_LISTPACK) return;
    uint64_t pairs = (uint64_t)(end - start + 1) / 2;
    if (pairs > (uint64_t)TLIM(hash_max_listpack_entries)) {
        hash_convert(e, pairs);
        return;
    }
    size_t maxv = (size_t)TLIM(hash_max_listpack_value), sum = 0;
    for (int i = start; i <= end; i++) {
        if (argv[i].len > maxv) {
            hash_convert(e, 0);
            return;
        }
        sum += argv[i].len;
    }
    if ((unsigned long long)lp_bytes(kv_ptr(e)) + sum > HASH_LP_SAFE_BYTES) hash_convert(e, 0);
}

/* Value of field f: 1 and *v, *vl (valid until the hash changes; `tmp`
 * holds an integer's digits) when present, 0 when absent. */
static int hash_get(const struct kv *e, const char *f, size_t fl, struct lp_val *tmp, const char **v, size_t *vl) {
    if (kv_enc(e) == ENC_LISTPACK) {
        const lpack *lp = kv_ptr(e);
        size_t pos = lp_find(lp, lp_first(lp), f, fl, 1);
        if (pos == LP_NONE) return 0;
        lp_get(lp, lp_next(lp, pos), tmp);
        *v = tmp->s;
        *vl = tmp->len;
        return 1;
    }
    struct hnode **link = hash_ht_find(kv_ptr(e), f, fl);
    if (!link) return 0;
    const struct hent *h = (const struct hent *)*link;
    *v = hent_value(h);
    *vl = h->vlen;
    return 1;
}

static int hash_exists(const struct kv *e, const char *f, size_t fl) {
    if (kv_enc(e) == ENC_LISTPACK) {
        const lpack *lp = kv_ptr(e);
        return lp_find(lp, lp_first(lp), f, fl, 1) != LP_NONE;
    }
    return hash_ht_find(kv_ptr(e), f, fl) != NULL;
}

/* Set field f to v; returns 1 when the field is new, 0 when it was
 * updated. Converts to a hash table when the field or value is too long
 * for a listpack or the field count passes the limit. The entry itself
 * stays where it is; only its value pointer changes. */
static int hash_set(struct kv *e, const char *f, size_t fl, const char *v, size_t vl) {
    if (kv_enc(e) == ENC_LISTPACK) {
        size_t maxv = (size_t)TLIM(hash_max_listpack_value);
        if (fl > maxv || vl > maxv ||
            (unsigned long long)lp_bytes(kv_ptr(e)) + fl + vl > HASH_LP_SAFE_BYTES)
            hash_convert(e, 0);
    }
    if (kv_enc(e) == ENC_LISTPACK) {
        lpack *lp = kv_ptr(e);
        size_t pos = lp_find(lp, lp_first(lp), f, fl, 1);
        if (pos != LP_NONE) {
            kv_set_ptr(e, lp_replace(lp, lp_next(lp, pos), v, vl, NULL));
            return 0;
        }
        lp = lp_append(lp, f, fl);
        lp = lp_append(lp, v, vl);
        kv_set_ptr(e, lp);
        if ((unsigned long long)lp_count(lp) / 2 > (unsigned long long)TLIM(hash_max_listpack_entries))
            hash_convert(e, 0);
        return 1;
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
        return 0;
    }
    ht_insert(t, &h->node, hk_hash(f, fl), hent_hash, NULL);
    return 1;
}

/* Delete field f; returns 1 when it existed. The caller deletes the key
 * when the hash becomes empty. */
static int hash_del(struct kv *e, const char *f, size_t fl) {
    if (kv_enc(e) == ENC_LISTPACK) {
        lpack *lp = kv_ptr(e);
        size_t pos = lp_find(lp, lp_first(lp), f, fl, 1);
        if (pos == LP_NONE) return 0;
        size_t next;
        lp = lp_delete(lp, pos, &next);
        lp = lp_delete(lp, next, NULL);
        kv_set_ptr(e, lp);
        return 1;
    }
    struct htable *t = kv_ptr(e);
    struct hnode **link = hash_ht_find(t, f, fl);
    if (!link) return 0;
    struct hnode *n = *link;
    ht_unlink(t, link);
    hk_free(n);
    return 1;
}

/* Visit every field in storage order. */
typedef void (*hash_visit_fn)(void *ctx, const char *f, size_t fl, const char *v, size_t vl);

static void hash_each(const struct kv *e, hash_visit_fn fn, void *ctx) {
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

/* ---- lookups shared by the handlers ------------------------------------------------ */

/* The hash at argv[1] for a write, created empty (listpack) when absent,
 * which reports `ev` (*created set); a caller that then changes an
 * existing hash reports its event itself, before the change. NULL after
 * a WRONGTYPE reply. A created key must not be left empty: the callers
 * only create when they are about to add a field. */
static struct kv *hash_lookup_create(struct cmd_ctx *c, struct keyref *k, int ev, int *created) {
    key_of(c, 1, k);
    struct kv *e = lookup_write(c, k);
    *created = !e;
    if (e) return check_type(c, e, OBJ_HASH) ? e : NULL;
    return db_put(k, kv_new_ptr(k->key, k->klen, OBJ_HASH, ENC_LISTPACK, lp_new(), -1), ev);
}

/* The hash at argv[1] for reading: *e NULL when absent. Returns 0 after a
 * WRONGTYPE reply. */
static int hash_lookup_read(struct cmd_ctx *c, struct kv **e) {
    struct keyref k;
    int bad;
    *e = lookup_typed(c, 1, &k, OBJ_HASH, 0, &bad);
    return !bad;
}

/* ---- HSET HMSET HSETNX ------------------------------------------------------------- */

/* HSET/HMSET key field value [field value ...]; the reply is the number of
 * new fields (HSET) or OK (HMSET). */
static void hset_generic(struct cmd_ctx *c, int hmset) {
    if (c->argc % 2 == 1) {
        reply_arity(c);
        return;
    }
    struct keyref k;
    int created;
    struct kv *e = hash_lookup_create(c, &k, KEV_HSET, &created);
    if (!e) return;
    /* Redis reports "hset" whether or not a value changes. */
    if (!created) db_written(&k, KEV_HSET);
    hash_try_convert(e, c->argv, 2, c->argc - 1);
    long long added = 0;
    for (int i = 2; i < c->argc; i += 2)
        added += hash_set(e, c->argv[i].ptr, c->argv[i].len, c->argv[i + 1].ptr, c->argv[i + 1].len);
    if (hmset) reply_ok(c);
    else reply_int(c, added);
}

void cmd_hset(struct cmd_ctx *c) { hset_generic(c, 0); }
void cmd_hmset(struct cmd_ctx *c) { hset_generic(c, 1); }

void cmd_hsetnx(struct cmd_ctx *c) {
    struct keyref k;
    int created;
    struct kv *e = hash_lookup_create(c, &k, KEV_HSET, &created);
    if (!e) return;
    if (hash_exists(e, c->argv[2].ptr, c->argv[2].len)) {
        reply_int(c, 0);
        return;
    }
    if (!created) db_written(&k, KEV_HSET);
    hash_try_convert(e, c->argv, 2, 3);
    hash_set(e, c->argv[2].ptr, c->argv[2].len, c->argv[3].ptr, c->argv[3].len);
    reply_int(c, 1);
}

/* ---- reads ------------------------------------------------------------------------- */

void cmd_hget(struct cmd_ctx *c) {
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
    struct lp_val tmp;
    const char *v;
    size_t vl;
    if (e && hash_get(e, c->argv[2].ptr, c->argv[2].len, &tmp, &v, &vl)) reply_bulk(c, v, vl);
    else reply_null(c);
}

void cmd_hmget(struct cmd_ctx *c) {
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        struct lp_val tmp;
        const char *v;
        size_t vl;
        if (e && hash_get(e, c->argv[i].ptr, c->argv[i].len, &tmp, &v, &vl)) reply_bulk(c, v, vl);
        else reply_null(c);
    }
}

void cmd_hexists(struct cmd_ctx *c) {
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
    reply_int(c, e && hash_exists(e, c->argv[2].ptr, c->argv[2].len));
}

void cmd_hlen(struct cmd_ctx *c) {
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
    reply_int(c, e ? (long long)hash_len(e) : 0);
}

void cmd_hstrlen(struct cmd_ctx *c) {
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
    struct lp_val tmp;
    const char *v;
    size_t vl;
    if (e && hash_get(e, c->argv[2].ptr, c->argv[2].len, &tmp, &v, &vl)) reply_int(c, (long long)vl);
    else reply_int(c, 0);
}

enum { HG_FIELDS = 1, HG_VALUES = 2 };

struct hgetall_ctx {
    struct cmd_ctx *c;
    int what;
};

static void hgetall_visit(void *arg, const char *f, size_t fl, const char *v, size_t vl) {
    struct hgetall_ctx *x = arg;
    if (x->what & HG_FIELDS) reply_bulk(x->c, f, fl);
    if (x->what & HG_VALUES) reply_bulk(x->c, v, vl);
}

/* HGETALL (a map in RESP3), HKEYS, HVALS. */
static void hgetall_generic(struct cmd_ctx *c, int what) {
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
    long long n = e ? (long long)hash_len(e) : 0;
    if (what == (HG_FIELDS | HG_VALUES)) reply_map(c, n);
    else reply_array(c, n);
    if (!e) return;
    struct hgetall_ctx x = {c, what};
    hash_each(e, hgetall_visit, &x);
}

void cmd_hgetall(struct cmd_ctx *c) { hgetall_generic(c, HG_FIELDS | HG_VALUES); }
void cmd_hkeys(struct cmd_ctx *c) { hgetall_generic(c, HG_FIELDS); }
void cmd_hvals(struct cmd_ctx *c) { hgetall_generic(c, HG_VALUES); }

/* ---- HDEL -------------------------------------------------------------------------- */

void cmd_hdel(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_HASH)) return;
    long long deleted = 0;
    for (int i = 2; i < c->argc; i++) {
        if (!deleted && hash_exists(e, c->argv[i].ptr, c->argv[i].len)) db_written(&k, KEV_HDEL);
        deleted += hash_del(e, c->argv[i].ptr, c->argv[i].len);
        if (hash_len(e) == 0) break;
    }
    if (deleted) {
        if (hash_len(e) == 0) db_delete(&k, c->now_ms, KEV_DEL);
        else if (kv_enc(e) == ENC_HT) ht_maybe_shrink(kv_ptr(e), hent_hash, NULL);
    }
    reply_int(c, deleted);
}

/* ---- HINCRBY HINCRBYFLOAT ---------------------------------------------------------- */

void cmd_hincrby(struct cmd_ctx *c) {
    long long incr, value = 0;
    if (!hk_str2ll(c->argv[3].ptr, c->argv[3].len, &incr)) {
        reply_error(c, ERR_NOT_INT);
        return;
    }
    struct keyref k;
    int created;
    struct kv *e = hash_lookup_create(c, &k, KEV_HINCRBY, &created);
    if (!e) return;
    struct lp_val tmp;
    const char *v;
    size_t vl;
    if (hash_get(e, c->argv[2].ptr, c->argv[2].len, &tmp, &v, &vl)) {
        if (kv_enc(e) == ENC_LISTPACK && tmp.is_int) value = tmp.v;
        else if (!hk_str2ll(v, vl, &value)) {
            reply_status(c, HK_ERR_HASH_NOT_INT);
            return;
        }
    }
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) || (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
        reply_error(c, ERR_OVERFLOW);
        return;
    }
    value += incr;
    char buf[HK_LONG_STR_SIZE];
    int n = hk_ll2str(buf, value);
    if (!created) db_written(&k, KEV_HINCRBY);
    hash_set(e, c->argv[2].ptr, c->argv[2].len, buf, (size_t)n);
    reply_int(c, value);
}

/* A long double as Redis's string2ld reads it: the whole buffer, no
 * leading space, no NaN, overflow rejected; infinities are accepted so the
 * caller can name them in its error. */
static int hash_parse_ld(const char *s, size_t len, long double *out) {
    char buf[5120];
    if (len == 0 || len >= sizeof(buf)) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (buf[0] == ' ' || (buf[0] >= '\t' && buf[0] <= '\r')) return 0;
    char *end;
    errno = 0;
    long double v = strtold(buf, &end);
    if ((size_t)(end - buf) != len) return 0;
    if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO)) return 0;
    if (errno == EINVAL || isnan(v)) return 0;
    *out = v;
    return 1;
}

void cmd_hincrbyfloat(struct cmd_ctx *c) {
    long double incr, value = 0;
    if (!hash_parse_ld(c->argv[3].ptr, c->argv[3].len, &incr)) {
        reply_error(c, ERR_NOT_FLOAT);
        return;
    }
    if (isinf(incr)) {
        reply_error(c, "ERR value is NaN or Infinity");
        return;
    }
    struct keyref k;
    int created;
    struct kv *e = hash_lookup_create(c, &k, KEV_HINCRBYFLOAT, &created);
    if (!e) return;
    struct lp_val tmp;
    const char *v;
    size_t vl;
    if (hash_get(e, c->argv[2].ptr, c->argv[2].len, &tmp, &v, &vl) && !hash_parse_ld(v, vl, &value)) {
        reply_status(c, HK_ERR_HASH_NOT_FLOAT);
        return;
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        reply_status(c, HK_ERR_NAN_INF);
        return;
    }
    char buf[5200];
    int n = hk_ld2str(buf, sizeof(buf), value);
    if (n < 0) n = 0;
    if (!created) db_written(&k, KEV_HINCRBYFLOAT);
    hash_set(e, c->argv[2].ptr, c->argv[2].len, buf, (size_t)n);
    /* The printed result, as Redis propagates it: HSET key field value. */
    prop_begin(c, 4);
    prop_arg_cstr(c, "HSET");
    prop_arg(c, k.key, k.klen);
    prop_arg_slice(c, &c->argv[2]);
    prop_arg(c, buf, (size_t)n);
    reply_bulk(c, buf, (size_t)n);
}

/* ---- HRANDFIELD -------------------------------------------------------------------- */

/* A random field of a non-empty hash table: a random non-empty bucket,
 * then a random entry of its chain. */
static const struct hent *hash_ht_random(struct htable *t) {
    struct hnode *head = ht_random_bucket(t, hk_rand64());
    unsigned len = 0;
    for (struct hnode *n = head; n; n = n->next) len++;
    unsigned pick = (unsigned)(hk_rand64() % len);
    while (pick--) head = head->next;
    return (const struct hent *)head;
}

/* One field (and value) of an HRANDFIELD-with-count reply. */
static void hrand_emit(struct cmd_ctx *c, int withvalues, const char *f, size_t fl, const char *v, size_t vl) {
    if (withvalues && c->resp >= 3) reply_array(c, 2);
    reply_bulk(c, f, fl);
    if (withvalues) reply_bulk(c, v, vl);
}

static void hrand_emit_lp(struct cmd_ctx *c, int withvalues, const lpack *lp, size_t pos) {
    struct lp_val f, v;
    lp_get(lp, pos, &f);
    if (withvalues) lp_get(lp, lp_next(lp, pos), &v);
    hrand_emit(c, withvalues, f.s, f.len, withvalues ? v.s : NULL, withvalues ? v.len : 0);
}

static void hrand_emit_ht(struct cmd_ctx *c, int withvalues, const struct hent *h) {
    hrand_emit(c, withvalues, hent_field(h), h->flen, hent_value(h), h->vlen);
}

struct hrand_all_ctx {
    struct cmd_ctx *c;
    int withvalues;
};

static void hrand_all_visit(void *arg, const char *f, size_t fl, const char *v, size_t vl) {
    struct hrand_all_ctx *x = arg;
    hrand_emit(x->c, x->withvalues, f, fl, v, vl);
}

/* Every entry pointer of a hash table, in bucket order. */
static const struct hent **hash_ht_array(const struct htable *t) {
    const struct hent **a = hk_malloc((size_t)t->count * sizeof(*a));
    size_t n = 0;
    struct ht_iter it;
    ht_iter_init(&it, t);
    for (struct hnode *e; (e = ht_iter_next(&it));) a[n++] = (const struct hent *)e;
    return a;
}

/* Distinct random entries of a large table (count well below its size):
 * random picks, duplicates rejected through a small open-addressing set
 * of pointers. */
static void hrand_ht_sparse(struct cmd_ctx *c, struct htable *t, unsigned long count, int withvalues) {
    size_t cap = 16;
    while (cap < count * 2) cap <<= 1;
    const struct hent **set = hk_calloc(cap, sizeof(*set));
    unsigned long got = 0;
    while (got < count) {
        const struct hent *h = hash_ht_random(t);
        size_t i = (size_t)(((uintptr_t)h >> 4) * 0x9E3779B97F4A7C15ULL) & (cap - 1);
        while (set[i] && set[i] != h) i = (i + 1) & (cap - 1);
        if (set[i]) continue;
        set[i] = h;
        got++;
        hrand_emit_ht(c, withvalues, h);
    }
    hk_free(set);
}

/* HRANDFIELD key count [WITHVALUES] once the count is parsed. A negative
 * count allows repeats; a positive one returns distinct fields, the whole
 * hash when it is at least the size. */
static void hrandfield_count(struct cmd_ctx *c, long long l, int withvalues) {
    struct kv *e;
    struct keyref k;
    key_of(c, 1, &k);
    e = lookup_read(c, &k);
    if (!e) {
        reply_array(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_HASH)) return;
    unsigned long long size = hash_len(e);
    int uniq = l >= 0;
    unsigned long long count = l >= 0 ? (unsigned long long)l : (unsigned long long)(-l);
    if (count == 0) {
        reply_array(c, 0);
        return;
    }
    if (!uniq || count == 1) {
        reply_array(c, (long long)(withvalues && c->resp == 2 ? count * 2 : count));
        if (kv_enc(e) == ENC_LISTPACK) {
            const lpack *lp = kv_ptr(e);
            size_t *pos = hk_malloc((size_t)size * sizeof(*pos));
            size_t n = 0;
            for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, lp_next(lp, p))) pos[n++] = p;
            for (unsigned long long i = 0; i < count; i++)
                hrand_emit_lp(c, withvalues, lp, pos[hk_rand64() % size]);
            hk_free(pos);
        } else {
            for (unsigned long long i = 0; i < count; i++) hrand_emit_ht(c, withvalues, hash_ht_random(kv_ptr(e)));
        }
        return;
    }
    if (count >= size) count = size;
    reply_array(c, (long long)(withvalues && c->resp == 2 ? count * 2 : count));
    if (count == size) {
        struct hrand_all_ctx x = {c, withvalues};
        hash_each(e, hrand_all_visit, &x);
        return;
    }
    if (kv_enc(e) == ENC_LISTPACK) {
        const lpack *lp = kv_ptr(e);
        size_t *pos = hk_malloc((size_t)size * sizeof(*pos));
        size_t n = 0;
        for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, lp_next(lp, p))) pos[n++] = p;
        /* A partial Fisher-Yates shuffle: the first count slots end up a
         * uniform random subset in random order. */
        for (unsigned long long i = 0; i < count; i++) {
            size_t j = (size_t)(i + hk_rand64() % (size - i));
            size_t tmp = pos[i];
            pos[i] = pos[j];
            pos[j] = tmp;
            hrand_emit_lp(c, withvalues, lp, pos[i]);
        }
        hk_free(pos);
        return;
    }
    struct htable *t = kv_ptr(e);
    if (count * 3 <= size) {
        hrand_ht_sparse(c, t, (unsigned long)count, withvalues);
        return;
    }
    const struct hent **a = hash_ht_array(t);
    for (unsigned long long i = 0; i < count; i++) {
        size_t j = (size_t)(i + hk_rand64() % (size - i));
        const struct hent *tmp = a[i];
        a[i] = a[j];
        a[j] = tmp;
        hrand_emit_ht(c, withvalues, a[i]);
    }
    hk_free(a);
}

void cmd_hrandfield(struct cmd_ctx *c) {
    if (c->argc >= 3) {
        long long l;
        if (!hk_str2ll(c->argv[2].ptr, c->argv[2].len, &l)) {
            reply_error(c, ERR_NOT_INT);
            return;
        }
        if (l < -LLONG_MAX) {
            reply_error(c, "ERR value is out of range, value must between -9223372036854775807 and "
                           "9223372036854775807");
            return;
        }
        int withvalues = 0;
        if (c->argc > 4 || (c->argc == 4 && !arg_is(&c->argv[3], "withvalues"))) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        if (c->argc == 4) {
            withvalues = 1;
            if (l < -LLONG_MAX / 2 || l > LLONG_MAX / 2) {
                reply_error(c, "ERR value is out of range");
                return;
            }
        }
        hrandfield_count(c, l, withvalues);
        return;
    }
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
    if (!e) {
        reply_null(c);
        return;
    }
    if (kv_enc(e) == ENC_LISTPACK) {
        const lpack *lp = kv_ptr(e);
        struct lp_val f;
        lp_get(lp, lp_seek(lp, (long long)(hk_rand64() % hash_len(e)) * 2), &f);
        reply_bulk(c, f.s, f.len);
    } else {
        const struct hent *h = hash_ht_random(kv_ptr(e));
        reply_bulk(c, hent_field(h), h->flen);
    }
}

/* ---- HSCAN ------------------------------------------------------------------------- */

struct hscan_ctx {
    const char *pat;
    size_t plen;
    const struct hent **found;
    size_t n, cap;
};

static void hscan_visit(struct hnode *node, void *arg) {
    struct hscan_ctx *x = arg;
    const struct hent *h = (const struct hent *)node;
    if (x->pat && !hk_globmatch(x->pat, x->plen, hent_field(h), h->flen, 0)) return;
    if (x->n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 32;
        x->found = hk_realloc(x->found, x->cap * sizeof(*x->found));
    }
    x->found[x->n++] = h;
}

/* Collects matching pairs of a listpack hash into the reply buffer while
 * counting them; the header is written afterwards. */
struct hscan_lp_ctx {
    struct cmd_ctx *c;
    const char *pat;
    size_t plen;
    int novalues;
    long long n;
};

static void hscan_lp_visit(void *arg, const char *f, size_t fl, const char *v, size_t vl) {
    struct hscan_lp_ctx *x = arg;
    if (x->pat && !hk_globmatch(x->pat, x->plen, f, fl, 0)) return;
    reply_bulk(x->c, f, fl);
    if (!x->novalues) reply_bulk(x->c, v, vl);
    x->n += x->novalues ? 1 : 2;
}

/* HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]. A listpack
 * hash is returned whole with cursor 0 whatever the cursor; a hash table
 * is walked with ht_scan's reverse-binary cursor, stopping after `count`
 * fields or count*10 buckets (COUNT is a hint, as in Redis). */
void cmd_hscan(struct cmd_ctx *c) {
    uint64_t cursor;
    if (!scan_cursor_or_reply(c, &c->argv[2], &cursor)) return;
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
    if (!e) {
        reply_array(c, 2);
        reply_bulk(c, "0", 1);
        reply_array(c, 0);
        return;
    }
    struct scan_args sa;
    if (!scan_args_or_reply(c, 3, SCAN_ALLOW_NOVALUES, &sa)) return;
    long long count = sa.count;
    int novalues = sa.novalues;
    const char *pat = sa.pat;
    size_t plen = sa.plen;

    reply_array(c, 2);
    if (kv_enc(e) == ENC_LISTPACK) {
        reply_bulk(c, "0", 1);
        struct hscan_lp_ctx x = {c, pat, plen, novalues, 0};
        void *h = reply_defer(c);
        hash_each(e, hscan_lp_visit, &x);
        reply_fill_array(c, h, x.n);
        return;
    }
    struct htable *t = kv_ptr(e);
    struct hscan_ctx x = {pat, plen, NULL, 0, 0};
    long long maxvisits = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    do {
        cursor = ht_scan(t, cursor, hscan_visit, &x);
    } while (cursor && --maxvisits > 0 && (long long)x.n < count);
    char nb[HK_LONG_STR_SIZE];
    int nl = hk_ull2str(nb, (unsigned long long)cursor);
    reply_bulk(c, nb, (size_t)nl);
    reply_array(c, (long long)x.n * (novalues ? 1 : 2));
    for (size_t i = 0; i < x.n; i++) {
        reply_bulk(c, hent_field(x.found[i]), x.found[i]->flen);
        if (!novalues) reply_bulk(c, hent_value(x.found[i]), x.found[i]->vlen);
    }
    hk_free(x.found);
}
