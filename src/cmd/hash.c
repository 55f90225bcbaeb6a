/* hash.c - the H* commands, HSET through HSCAN: argument parsing, key
 * lookup, write reporting, propagation and replies.
 *
 * The value itself (its listpack and hashtable encodings, conversion,
 * random picks, scanning, lifecycle) is src/types/hash.h; this file only
 * calls that API and never walks an encoding. Entries are found and created
 * through cmdutil.h/db.h with the key's shard locked by the execution core,
 * and every change is reported with db_written() before the value is
 * edited. */
#include "cmdutil.h"
#include "../types/hash.h"

#include "../core/alloc.h"
#include "../core/util.h"
#include "../store/hfe.h"

#include <limits.h>
#include <math.h>

/* ---- field expiry shared by the handlers ------------------------------------------ */

/* After fields of hash *e (key k) went: delete the key once the hash is
 * empty (*e NULL, reporting `ev`), else give back table space and drop the
 * side table when no field has a TTL any more (leaving the shard's set). */
static void hash_settle(struct cmd_ctx *c, const struct keyref *k, struct kv **e, int ev) {
    if (hashv_len(*e) == 0) {
        db_delete(k, c->now_ms, ev);
        *e = NULL;
        return;
    }
    hashv_shrink(*e);
    if (hashv_ttl_trim(*e)) hfe_untrack(k);
}

/* Whether hash e (NULL: none) may have fields past their deadline that
 * lazy expiry should delete now; constant time. */
static inline int hash_due(const struct cmd_ctx *c, const struct kv *e) {
    return e && hashv_has_ttl(e) && !store_no_expire && hashv_next_expire(e) <= c->now_ms;
}

/* Field f of hash e, when past its deadline, deleted (propagated as HDEL;
 * with `report`, KEV_HEXPIRED reported, db_field_expired): 1 when it
 * went. The caller settles. */
static int hash_drop_expired(struct cmd_ctx *c, const struct keyref *k, struct kv *e, const char *f, size_t fl,
                             int report) {
    if (!hashv_field_expired(e, f, fl, c->now_ms)) return 0;
    db_field_expired(k, f, fl, report);
    hashv_del(e, f, fl, NULL);
    return 1;
}

/* Lazy expiry of the fields named by argv[first..last] (every `step`th):
 * each one past its deadline is reported and deleted, and a hash left
 * empty goes (*e NULL), as in Redis. A journal being applied expires
 * nothing by time: its HDELs follow. */
static void hash_expire_named(struct cmd_ctx *c, const struct keyref *k, struct kv **e, int first, int last, int step) {
    if (!hash_due(c, *e)) return;
    int gone = 0;
    /* One "hexpired" for the lot, as Redis reports a command's batch. */
    for (int i = first; i <= last; i += step)
        gone += hash_drop_expired(c, k, *e, c->argv[i].ptr, c->argv[i].len, gone == 0);
    if (gone) hash_settle(c, k, e, KEV_DEL_EMPTIED);
}

int hash_expire_field(struct cmd_ctx *c, const struct keyref *k, struct kv **e, const char *f, size_t fl) {
    if (!hash_due(c, *e) || !hash_drop_expired(c, k, *e, f, fl, 1)) return 0;
    hash_settle(c, k, e, KEV_DEL_EMPTIED);
    return 1;
}

/* Lazy expiry of every field of *e past its deadline, before a command
 * that reads the whole hash (HGETALL, HSCAN, HRANDFIELD...). */
static void hash_reclaim(struct cmd_ctx *c, const struct keyref *k, struct kv **e) {
    struct hfe_batch b = {k, 0};
    if (hash_due(c, *e) && hashv_expire_due(*e, c->now_ms, UINT_MAX, hfe_batch_field, &b))
        hash_settle(c, k, e, KEV_DEL_EMPTIED);
}

/* Give field f of e (key k) the deadline `when`; the hash's first TTL
 * joins the shard's set of hashes with field TTLs. */
static void hash_set_ttl(const struct keyref *k, struct kv *e, const hk_slice *f, long long when) {
    int had = hashv_has_ttl(e);
    hashv_set_ttl(e, f->ptr, f->len, when);
    if (!had) hfe_track(k);
}

/* After a write that may have removed the last TTL (HSET over a field). */
static void hash_trim(const struct keyref *k, struct kv *e) {
    if (hashv_ttl_trim(e)) hfe_untrack(k);
}

/* ---- lookups shared by the handlers ------------------------------------------------ */

/* The hash at argv[1] for a write, created empty (listpack) when absent,
 * which reports `ev` (*created set); a caller that then changes an
 * existing hash reports its event itself, before the change. NULL after
 * a WRONGTYPE reply. The fields argv[first..last] (every `step`th) that
 * are past their deadline expire first; a hash they leave empty is
 * created anew. A created key must not be left empty: the callers only
 * create when they are about to add a field. */
static struct kv *hash_lookup_create(struct cmd_ctx *c, struct keyref *k, int ev, int *created, int first, int last,
                                     int step) {
    key_of(c, 1, k);
    struct kv *e = lookup_write(c, k);
    if (e) {
        if (!check_type(c, e, OBJ_HASH)) return NULL;
        hash_expire_named(c, k, &e, first, last, step);
    }
    *created = !e;
    if (e) return e;
    return db_put(k, hashv_new(k->key, k->klen, -1), ev);
}

/* The hash at argv[1] for reading (*k filled): *e NULL when absent.
 * Returns 0 after a WRONGTYPE reply. The fields argv[first..last] past
 * their deadline expire first (first 0: none named). */
static int hash_lookup_read(struct cmd_ctx *c, struct keyref *k, struct kv **e, int first, int last) {
    int bad;
    *e = lookup_typed(c, 1, k, OBJ_HASH, 0, &bad);
    if (bad) return 0;
    if (first) hash_expire_named(c, k, e, first, last, 1);
    return 1;
}

/* Before setting the field/value arguments argv[start..end] (pairs):
 * let the value convert when they cannot all stay in a listpack. */
static void hash_prepare_pairs(struct cmd_ctx *c, struct kv *e, int start, int end) {
    size_t longest = 0, total = 0;
    for (int i = start; i <= end; i++) {
        if (c->argv[i].len > longest) longest = c->argv[i].len;
        total += c->argv[i].len;
    }
    hashv_try_convert(e, (uint64_t)(end - start + 1) / 2, longest, total);
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
    unsigned long long mark = dirty_mark(c);
    struct kv *e = hash_lookup_create(c, &k, KEV_HSET, &created, 2, c->argc - 2, 2);
    if (!e) return;
    /* Redis reports "hset" whether or not a value changes, and counts a
     * change per field set. */
    if (!created) db_written(&k, KEV_HSET);
    hash_prepare_pairs(c, e, 2, c->argc - 1);
    long long added = 0;
    for (int i = 2; i < c->argc; i += 2)
        added += hashv_set(e, c->argv[i].ptr, c->argv[i].len, c->argv[i + 1].ptr, c->argv[i + 1].len);
    hash_trim(&k, e);
    dirty_settle(c, mark, (c->argc - 2) / 2);
    if (hmset) reply_ok(c);
    else reply_int(c, added);
}

void cmd_hset(struct cmd_ctx *c) { hset_generic(c, 0); }
void cmd_hmset(struct cmd_ctx *c) { hset_generic(c, 1); }

void cmd_hsetnx(struct cmd_ctx *c) {
    struct keyref k;
    int created;
    struct kv *e = hash_lookup_create(c, &k, KEV_HSET, &created, 2, 2, 1);
    if (!e) return;
    if (hashv_exists(e, c->argv[2].ptr, c->argv[2].len)) {
        reply_int(c, 0);
        return;
    }
    if (!created) db_written(&k, KEV_HSET);
    hash_prepare_pairs(c, e, 2, 3);
    hashv_set(e, c->argv[2].ptr, c->argv[2].len, c->argv[3].ptr, c->argv[3].len);
    reply_int(c, 1);
}

/* ---- reads ------------------------------------------------------------------------- */

void cmd_hget(struct cmd_ctx *c) {
    struct keyref k;
    struct kv *e;
    if (!hash_lookup_read(c, &k, &e, 2, 2)) return;
    struct hashv_val v;
    if (e && hashv_get(e, c->argv[2].ptr, c->argv[2].len, &v)) reply_bulk(c, v.s, v.len);
    else reply_null(c);
}

void cmd_hmget(struct cmd_ctx *c) {
    struct keyref k;
    struct kv *e;
    if (!hash_lookup_read(c, &k, &e, 2, c->argc - 1)) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        struct hashv_val v;
        if (e && hashv_get(e, c->argv[i].ptr, c->argv[i].len, &v)) reply_bulk(c, v.s, v.len);
        else reply_null(c);
    }
}

void cmd_hexists(struct cmd_ctx *c) {
    struct keyref k;
    struct kv *e;
    if (!hash_lookup_read(c, &k, &e, 2, 2)) return;
    reply_int(c, e && hashv_exists(e, c->argv[2].ptr, c->argv[2].len));
}

/* As in Redis, fields past their deadline that nothing deleted yet still
 * count. */
void cmd_hlen(struct cmd_ctx *c) {
    struct keyref k;
    struct kv *e;
    if (!hash_lookup_read(c, &k, &e, 0, 0)) return;
    reply_int(c, e ? (long long)hashv_len(e) : 0);
}

void cmd_hstrlen(struct cmd_ctx *c) {
    struct keyref k;
    struct kv *e;
    if (!hash_lookup_read(c, &k, &e, 2, 2)) return;
    struct hashv_val v;
    if (e && hashv_get(e, c->argv[2].ptr, c->argv[2].len, &v)) reply_int(c, (long long)v.len);
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
    struct keyref k;
    struct kv *e;
    if (!hash_lookup_read(c, &k, &e, 0, 0)) return;
    hash_reclaim(c, &k, &e);
    long long n = e ? (long long)hashv_len(e) : 0;
    if (what == (HG_FIELDS | HG_VALUES)) reply_map(c, n);
    else reply_array(c, n);
    if (!e) return;
    struct hgetall_ctx x = {c, what};
    hashv_each(e, hgetall_visit, &x);
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
    /* A field past its deadline is not there to delete. */
    hash_expire_named(c, &k, &e, 2, c->argc - 1, 1);
    long long deleted = 0;
    unsigned long long mark = dirty_mark(c);
    struct key_write kw;
    key_write_init(&kw, &k, KEV_HDEL, 0);
    for (int i = 2; e && i < c->argc; i++) {
        deleted += hashv_del(e, c->argv[i].ptr, c->argv[i].len, &kw.pc);
        if (hashv_len(e) == 0) break;
    }
    if (deleted) hash_settle(c, &k, &e, KEV_DEL);
    dirty_settle(c, mark, deleted);
    reply_int(c, deleted);
}

/* ---- HINCRBY HINCRBYFLOAT ---------------------------------------------------------- */

void cmd_hincrby(struct cmd_ctx *c) {
    long long incr, value;
    if (!hk_str2ll(c->argv[3].ptr, c->argv[3].len, &incr)) {
        reply_error(c, ERR_NOT_INT);
        return;
    }
    struct keyref k;
    int created;
    struct kv *e = hash_lookup_create(c, &k, KEV_HINCRBY, &created, 2, 2, 1);
    if (!e) return;
    int st = hashv_incrby_result(e, c->argv[2].ptr, c->argv[2].len, incr, &value);
    if (st != HK_OK) {
        reply_status(c, st);
        return;
    }
    char buf[HK_LONG_STR_SIZE];
    int n = hk_ll2str(buf, value);
    if (!created) db_written(&k, KEV_HINCRBY);
    /* The field keeps its TTL, as in Redis. */
    hashv_set_keepttl(e, c->argv[2].ptr, c->argv[2].len, buf, (size_t)n);
    reply_int(c, value);
}

void cmd_hincrbyfloat(struct cmd_ctx *c) {
    long double incr, value;
    if (!hk_str2ld(c->argv[3].ptr, c->argv[3].len, &incr)) {
        reply_error(c, ERR_NOT_FLOAT);
        return;
    }
    if (isinf(incr)) {
        reply_error(c, "ERR value is NaN or Infinity");
        return;
    }
    struct keyref k;
    int created;
    struct kv *e = hash_lookup_create(c, &k, KEV_HINCRBYFLOAT, &created, 2, 2, 1);
    if (!e) return;
    int st = hashv_incrbyfloat_result(e, c->argv[2].ptr, c->argv[2].len, incr, &value);
    if (st != HK_OK) {
        reply_status(c, st);
        return;
    }
    char buf[5200];
    int n = hk_ld2str(buf, sizeof(buf), value);
    if (n < 0) n = 0;
    if (!created) db_written(&k, KEV_HINCRBYFLOAT);
    hashv_set_keepttl(e, c->argv[2].ptr, c->argv[2].len, buf, (size_t)n);
    /* The printed result: HSET key field value, or, for a field with a
     * TTL, HSETEX key KEEPTTL FIELDS 1 field value as Redis 8 sends it
     * (HSET would drop the TTL). */
    if (hashv_ttl(e, c->argv[2].ptr, c->argv[2].len) >= 0) {
        prop_begin(c, 7);
        prop_arg_cstr(c, "HSETEX");
        prop_arg(c, k.key, k.klen);
        prop_arg_cstr(c, "KEEPTTL");
        prop_arg_cstr(c, "FIELDS");
        prop_arg_cstr(c, "1");
    } else {
        prop_begin(c, 4);
        prop_arg_cstr(c, "HSET");
        prop_arg(c, k.key, k.klen);
    }
    prop_arg_slice(c, &c->argv[2]);
    prop_arg(c, buf, (size_t)n);
    reply_bulk(c, buf, (size_t)n);
}

/* ---- HRANDFIELD -------------------------------------------------------------------- */

struct hrand_ctx {
    struct cmd_ctx *c;
    int withvalues;
};

/* One field (and value) of an HRANDFIELD-with-count reply. */
static void hrand_visit(void *arg, const char *f, size_t fl, const char *v, size_t vl) {
    struct hrand_ctx *x = arg;
    if (x->withvalues && x->c->resp >= 3) reply_array(x->c, 2);
    reply_bulk(x->c, f, fl);
    if (x->withvalues) reply_bulk(x->c, v, vl);
}

/* HRANDFIELD key count [WITHVALUES] once the count is parsed. A negative
 * count allows repeats; a positive one returns distinct fields, the whole
 * hash when it is at least the size. */
static void hrandfield_count(struct cmd_ctx *c, long long l, int withvalues) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (e && !check_type(c, e, OBJ_HASH)) return;
    /* Fields past their deadline go first, so the sampler never sees them. */
    hash_reclaim(c, &k, &e);
    if (!e) {
        reply_array(c, 0);
        return;
    }
    int distinct = l >= 0;
    uint64_t count = l >= 0 ? (uint64_t)l : (uint64_t)(-l);
    if (count == 0) {
        reply_array(c, 0);
        return;
    }
    if (distinct && count > hashv_len(e)) count = hashv_len(e);
    reply_array(c, (long long)(withvalues && c->resp == 2 ? count * 2 : count));
    struct hrand_ctx x = {c, withvalues};
    hashv_random_pairs(e, count, distinct, hrand_visit, &x);
}

void cmd_hrandfield(struct cmd_ctx *c) {
    if (c->argc >= 3) {
        struct argcur a;
        ac_init(&a, c, 2);
        long long l = 0;
        int withvalues;
        ac_rand_count(&a, "WITHVALUES", &l, &withvalues);
        if (!ac_ok(&a)) return;
        hrandfield_count(c, l, withvalues);
        return;
    }
    struct keyref k;
    struct kv *e;
    if (!hash_lookup_read(c, &k, &e, 0, 0)) return;
    hash_reclaim(c, &k, &e);
    if (!e) {
        reply_null(c);
        return;
    }
    struct hashv_val f;
    hashv_random_field(e, &f);
    reply_bulk(c, f.s, f.len);
}

/* ---- HSCAN ------------------------------------------------------------------------- */

/* A matching pair of a hash table, held until the reply is written (its
 * bytes stay valid: nothing changes the hash meanwhile). */
struct hscan_pair {
    const char *f, *v;
    size_t fl, vl;
};

struct hscan_ctx {
    const char *pat;
    size_t plen;
    struct hscan_pair *found;
    size_t n, cap;
};

static void hscan_visit(void *arg, const char *f, size_t fl, const char *v, size_t vl) {
    struct hscan_ctx *x = arg;
    if (x->pat && !hk_globmatch(x->pat, x->plen, f, fl, 0)) return;
    if (x->n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 32;
        x->found = hk_realloc(x->found, x->cap * sizeof(*x->found));
    }
    x->found[x->n++] = (struct hscan_pair){f, v, fl, vl};
}

/* Writes the matching pairs of a listpack hash into the reply as they come
 * (their bytes do not outlive the visit), counting them for the header
 * written afterwards. */
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
 * is walked with the reverse-binary cursor, stopping after `count` fields
 * or count*10 buckets (COUNT is a hint, as in Redis). */
void cmd_hscan(struct cmd_ctx *c) {
    uint64_t cursor;
    if (!scan_cursor_or_reply(c, &c->argv[2], &cursor)) return;
    struct keyref k;
    struct kv *e;
    if (!hash_lookup_read(c, &k, &e, 0, 0)) return;
    hash_reclaim(c, &k, &e);
    if (!e) {
        reply_empty_scan(c);
        return;
    }
    struct scan_args sa;
    if (!scan_args_or_reply(c, 3, SCAN_ALLOW_NOVALUES, &sa)) return;
    long long count = sa.count;
    int novalues = sa.novalues;
    const char *pat = sa.pat;
    size_t plen = sa.plen;

    reply_array(c, 2);
    if (hashv_packed(e)) {
        reply_bulk(c, "0", 1);
        struct hscan_lp_ctx x = {c, pat, plen, novalues, 0};
        void *h = reply_defer(c);
        hashv_each(e, hscan_lp_visit, &x);
        reply_fill_array(c, h, x.n);
        return;
    }
    struct hscan_ctx x = {pat, plen, NULL, 0, 0};
    long long maxvisits = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    do {
        cursor = hashv_scan(e, cursor, hscan_visit, &x);
    } while (cursor && --maxvisits > 0 && (long long)x.n < count);
    char nb[HK_LONG_STR_SIZE];
    int nl = hk_ull2str(nb, (unsigned long long)cursor);
    reply_bulk(c, nb, (size_t)nl);
    reply_array(c, (long long)x.n * (novalues ? 1 : 2));
    for (size_t i = 0; i < x.n; i++) {
        reply_bulk(c, x.found[i].f, x.found[i].fl);
        if (!novalues) reply_bulk(c, x.found[i].v, x.found[i].vl);
    }
    hk_free(x.found);
}

/* ---- field TTL commands ------------------------------------------------------------ */

/* Redis's HFE_MAX_ABS_TIME_MSEC: the latest deadline a field may have,
 * (2^48 - 1) / 4 milliseconds. */
#define HFE_MAX_MS (((1LL << 48) - 1) >> 2)

/* An expire time at a as Redis's parseExpireTime reads it: an integer, not
 * negative, in seconds (`seconds`) or ms, plus base (now for relative
 * forms, 0 for the *AT ones), no later than HFE_MAX_MS. Replies the error
 * and returns 0 when bad. */
static int hfe_parse_time(struct cmd_ctx *c, const hk_slice *a, int seconds, long long base, long long *out) {
    long long v;
    if (!hk_str2ll(a->ptr, a->len, &v)) {
        reply_error(c, ERR_NOT_INT);
        return 0;
    }
    if (v < 0) {
        reply_status(c, HK_ERR_EXPIRE_NEGATIVE);
        return 0;
    }
    if (seconds) {
        if (v > HFE_MAX_MS / 1000) {
            reply_status(c, HK_ERR_INVALID_EXPIRE);
            return 0;
        }
        v *= 1000;
    }
    if (v > HFE_MAX_MS - base) {
        reply_status(c, HK_ERR_INVALID_EXPIRE);
        return 0;
    }
    *out = v + base;
    return 1;
}

/* Whether a is EX, PX, EXAT or PXAT (any case): 1 with *seconds set for
 * EX and EXAT, *relative for EX and PX. */
static int hfe_time_opt(const hk_slice *a, int *seconds, int *relative) {
    int ex = arg_is(a, "EX"), px = arg_is(a, "PX");
    if (!ex && !px && !arg_is(a, "EXAT") && !arg_is(a, "PXAT")) return 0;
    *seconds = ex || arg_is(a, "EXAT");
    *relative = ex || px;
    return 1;
}

/* "FIELDS numfields field..." with FIELDS at argv[at] and the fields
 * running to the end: the index of the first field, or 0 after replying
 * Redis's error (`bad_count` for a count that is not a positive integer). */
static int hfe_parse_fields(struct cmd_ctx *c, int at, int bad_count) {
    if (at >= c->argc || !arg_is(&c->argv[at], "FIELDS")) {
        reply_status(c, HK_ERR_FIELDS_MISSING);
        return 0;
    }
    if (at + 1 >= c->argc) {
        reply_status(c, HK_ERR_NUMFIELDS_ARGS);
        return 0;
    }
    long long n;
    if (!hk_str2ll(c->argv[at + 1].ptr, c->argv[at + 1].len, &n) || n < 1) {
        reply_status(c, bad_count);
        return 0;
    }
    if (n != c->argc - at - 2) {
        reply_status(c, HK_ERR_NUMFIELDS_ARGS);
        return 0;
    }
    return at + 2;
}

/* A deadline at or before the command's clock deletes the field instead,
 * except while a journal is applied (its HDEL follows). */
static inline int hfe_past(const struct cmd_ctx *c, long long when) {
    return when <= c->now_ms && !(c->flags & CTX_REPLAY);
}

/* Delete field f of e because its new deadline is past: reported as
 * "hdel" (once, through kw), propagated as HDEL key f. */
static void hfe_delete_now(struct cmd_ctx *c, const struct keyref *k, struct kv *e, const hk_slice *f,
                           struct key_write *kw) {
    hashv_del(e, f->ptr, f->len, &kw->pc);
    if (!prop_on(c)) return;
    prop_begin(c, 3);
    prop_arg_cstr(c, "HDEL");
    prop_arg(c, k->key, k->klen);
    prop_arg_slice(c, f);
}

/* Per-field answers of the HEXPIRE family, as Redis numbers them. */
enum { HFE_NO_FIELD = -2, HFE_NO_TTL = -1, HFE_NOT_MET = 0, HFE_SET = 1, HFE_DELETED = 2 };
enum { HFE_COND_NONE, HFE_COND_NX, HFE_COND_XX, HFE_COND_GT, HFE_COND_LT };
#define HFE_REPLY_NULL INT_MIN

/* The shared head of the commands whose arguments end in FIELDS numfields
 * field... at `at`: checks the count (bad_count: the error for a bad
 * one), reclaims the named fields already past their deadline, and opens
 * the reply array. With no hash (or none left) every field is answered
 * `missing`, an integer or HFE_REPLY_NULL. Returns the first field's
 * index, or 0 when the reply is complete. */
static int hfe_fields_begin(struct cmd_ctx *c, const struct keyref *k, struct kv **e, int at, int bad_count,
                            int missing) {
    int first = hfe_parse_fields(c, at, bad_count);
    if (!first) return 0;
    int n = c->argc - first;
    prop_custom(c);
    hash_expire_named(c, k, e, first, c->argc - 1, 1);
    reply_array(c, n);
    if (*e) return first;
    for (int i = 0; i < n; i++) {
        if (missing == HFE_REPLY_NULL) reply_null(c);
        else reply_int(c, missing);
    }
    return 0;
}

/* HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT key time [NX|XX|GT|LT] FIELDS
 * numfields field...: one code per field. Propagates HPEXPIREAT with the
 * absolute deadline and only the fields it set, and HDEL for fields a
 * past deadline deleted. */
static void hexpire_generic(struct cmd_ctx *c, int relative, int seconds) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (e && !check_type(c, e, OBJ_HASH)) return;
    long long when;
    if (!hfe_parse_time(c, &c->argv[2], seconds, relative ? c->now_ms : 0, &when)) return;
    int cond = HFE_COND_NONE, at = 3;
    const hk_slice *o = &c->argv[3];
    if (arg_is(o, "NX")) cond = HFE_COND_NX;
    else if (arg_is(o, "XX")) cond = HFE_COND_XX;
    else if (arg_is(o, "GT")) cond = HFE_COND_GT;
    else if (arg_is(o, "LT")) cond = HFE_COND_LT;
    if (cond) at++;
    int first = hfe_fields_begin(c, &k, &e, at, HK_ERR_NUMFIELDS_HFE, HFE_NO_FIELD);
    if (!first) return;
    int n = c->argc - first;
    int past = hfe_past(c, when);
    int *set = hk_malloc((size_t)n * sizeof(*set));
    int nset = 0, deleted = 0;
    /* A change per field given a deadline or deleted by a past one. */
    unsigned long long mark = dirty_mark(c);
    struct key_write kw;
    key_write_init(&kw, &k, past ? KEV_HDEL : KEV_HEXPIRE, 0);
    for (int i = first; i < c->argc; i++) {
        const hk_slice *f = &c->argv[i];
        if (!hashv_exists(e, f->ptr, f->len)) {
            reply_int(c, HFE_NO_FIELD);
            continue;
        }
        /* No TTL counts as an infinite one for GT and LT. */
        long long prev = hashv_ttl(e, f->ptr, f->len);
        int met = cond == HFE_COND_NONE || (cond == HFE_COND_NX && prev < 0) || (cond == HFE_COND_XX && prev >= 0) ||
                  (cond == HFE_COND_GT && prev >= 0 && when > prev) || (cond == HFE_COND_LT && (prev < 0 || when < prev));
        if (!met) {
            reply_int(c, HFE_NOT_MET);
            continue;
        }
        if (past) {
            hfe_delete_now(c, &k, e, f, &kw);
            deleted++;
            reply_int(c, HFE_DELETED);
            continue;
        }
        pre_change(&kw.pc);
        hash_set_ttl(&k, e, f, when);
        set[nset++] = i;
        reply_int(c, HFE_SET);
    }
    if (deleted) hash_settle(c, &k, &e, KEV_DEL);
    dirty_settle(c, mark, nset + deleted);
    if (nset && prop_on(c)) {
        prop_begin(c, 5 + (cond ? 1 : 0) + nset);
        prop_arg_cstr(c, "HPEXPIREAT");
        prop_arg(c, k.key, k.klen);
        prop_arg_ll(c, when);
        if (cond) prop_arg_slice(c, o);
        prop_arg_cstr(c, "FIELDS");
        prop_arg_ll(c, nset);
        for (int j = 0; j < nset; j++) prop_arg_slice(c, &c->argv[set[j]]);
    }
    hk_free(set);
}

void cmd_hexpire(struct cmd_ctx *c) { hexpire_generic(c, 1, 1); }
void cmd_hpexpire(struct cmd_ctx *c) { hexpire_generic(c, 1, 0); }
void cmd_hexpireat(struct cmd_ctx *c) { hexpire_generic(c, 0, 1); }
void cmd_hpexpireat(struct cmd_ctx *c) { hexpire_generic(c, 0, 0); }

/* HTTL HPTTL HEXPIRETIME HPEXPIRETIME key FIELDS numfields field...: per
 * field the time left (relative) or the deadline, in seconds (rounded up)
 * or ms; -1 without a TTL, -2 for a field that is absent or past its
 * deadline. Reads only: nothing is deleted. */
static void httl_generic(struct cmd_ctx *c, int relative, int seconds) {
    struct keyref k;
    int bad;
    struct kv *e = lookup_typed(c, 1, &k, OBJ_HASH, 0, &bad);
    if (bad) return;
    int first = hfe_parse_fields(c, 2, HK_ERR_NUMFIELDS);
    if (!first) return;
    long long base = relative ? c->now_ms : 0;
    reply_array(c, c->argc - first);
    for (int i = first; i < c->argc; i++) {
        const hk_slice *f = &c->argv[i];
        if (!e || !hashv_exists(e, f->ptr, f->len)) {
            reply_int(c, HFE_NO_FIELD);
            continue;
        }
        long long when = hashv_ttl(e, f->ptr, f->len);
        if (when < 0) reply_int(c, HFE_NO_TTL);
        else if (when <= c->now_ms && !store_no_expire) reply_int(c, HFE_NO_FIELD);
        else reply_int(c, seconds ? (when + 999 - base) / 1000 : when - base);
    }
}

void cmd_httl(struct cmd_ctx *c) { httl_generic(c, 1, 1); }
void cmd_hpttl(struct cmd_ctx *c) { httl_generic(c, 1, 0); }
void cmd_hexpiretime(struct cmd_ctx *c) { httl_generic(c, 0, 1); }
void cmd_hpexpiretime(struct cmd_ctx *c) { httl_generic(c, 0, 0); }

/* HPERSIST key FIELDS numfields field...: 1 per field whose TTL went, -1
 * for one without a TTL, -2 for an absent field or one past its deadline
 * (left for expiry to delete, as Redis does). */
void cmd_hpersist(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct kv *e = lookup_typed(c, 1, &k, OBJ_HASH, 1, &bad);
    if (bad) return;
    int first = hfe_parse_fields(c, 2, HK_ERR_NUMFIELDS);
    if (!first) return;
    reply_array(c, c->argc - first);
    struct key_write kw;
    key_write_init(&kw, &k, KEV_HPERSIST, 0);
    for (int i = first; i < c->argc; i++) {
        const hk_slice *f = &c->argv[i];
        if (!e || !hashv_exists(e, f->ptr, f->len) ||
            (!store_no_expire && hashv_field_expired(e, f->ptr, f->len, c->now_ms))) {
            reply_int(c, HFE_NO_FIELD);
            continue;
        }
        if (hashv_ttl(e, f->ptr, f->len) < 0) {
            reply_int(c, HFE_NO_TTL);
            continue;
        }
        pre_change(&kw.pc);
        hashv_persist(e, f->ptr, f->len);
        reply_int(c, 1);
    }
    if (e && kw.pc.fired) hash_trim(&k, e);
}

/* HGETDEL key FIELDS numfields field...: the values (nil for absent
 * fields), deleting them; the hash goes with its last field. Propagates
 * HDEL key field... */
void cmd_hgetdel(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct kv *e = lookup_typed(c, 1, &k, OBJ_HASH, 1, &bad);
    if (bad) return;
    int first = hfe_fields_begin(c, &k, &e, 2, HK_ERR_NUMFIELDS, HFE_REPLY_NULL);
    if (!first) return;
    unsigned long long mark = dirty_mark(c);
    struct key_write kw;
    key_write_init(&kw, &k, KEV_HDEL, 0);
    int deleted = 0;
    for (int i = first; i < c->argc; i++) {
        const hk_slice *f = &c->argv[i];
        struct hashv_val v;
        if (!hashv_get(e, f->ptr, f->len, &v)) {
            reply_null(c);
            continue;
        }
        reply_bulk(c, v.s, v.len);
        hashv_del(e, f->ptr, f->len, &kw.pc);
        deleted++;
    }
    if (!deleted) return;
    hash_settle(c, &k, &e, KEV_DEL);
    dirty_settle(c, mark, deleted);
    if (!prop_on(c)) return;
    prop_begin(c, 2 + c->argc - first);
    prop_arg_cstr(c, "HDEL");
    prop_arg(c, k.key, k.klen);
    for (int i = first; i < c->argc; i++) prop_arg_slice(c, &c->argv[i]);
}

/* HGETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST] FIELDS numfields
 * field...: the values, giving the fields found the new deadline (or
 * none). Propagates HPEXPIREAT key ms FIELDS ... or HPERSIST key FIELDS
 * ..., or the HDELs of fields a past deadline deleted. */
void cmd_hgetex(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct kv *e = lookup_typed(c, 1, &k, OBJ_HASH, 1, &bad);
    if (bad) return;
    const hk_slice *o = &c->argv[2];
    int persist = 0, expiry = 0, at = 2, seconds, relative;
    long long when = 0;
    if (hfe_time_opt(o, &seconds, &relative)) {
        if (!hfe_parse_time(c, &c->argv[3], seconds, relative ? c->now_ms : 0, &when)) return;
        expiry = 1;
        at = 4;
    } else if (arg_is(o, "PERSIST")) {
        persist = 1;
        at = 3;
    }
    int first = hfe_fields_begin(c, &k, &e, at, HK_ERR_NUMFIELDS, HFE_REPLY_NULL);
    if (!first) return;
    int past = expiry && hfe_past(c, when);
    unsigned long long mark = dirty_mark(c);
    struct key_write kw;
    key_write_init(&kw, &k, past ? KEV_HDEL : persist ? KEV_HPERSIST : KEV_HEXPIRE, 0);
    int updated = 0, deleted = 0;
    for (int i = first; i < c->argc; i++) {
        const hk_slice *f = &c->argv[i];
        struct hashv_val v;
        if (!hashv_get(e, f->ptr, f->len, &v)) {
            reply_null(c);
            continue;
        }
        reply_bulk(c, v.s, v.len);
        if (past) {
            hfe_delete_now(c, &k, e, f, &kw);
            deleted++;
        } else if (expiry) {
            pre_change(&kw.pc);
            hash_set_ttl(&k, e, f, when);
            updated++;
        } else if (persist && hashv_ttl(e, f->ptr, f->len) >= 0) {
            pre_change(&kw.pc);
            hashv_persist(e, f->ptr, f->len);
            updated++;
        }
    }
    if (deleted) hash_settle(c, &k, &e, KEV_DEL);
    else if (persist && updated) hash_trim(&k, e);
    dirty_settle(c, mark, updated + deleted);
    if (!updated || !prop_on(c)) return;
    /* HPERSIST key or HPEXPIREAT key ms, then FIELDS numfields field... */
    prop_begin(c, (persist ? 2 : 3) + (c->argc - at));
    prop_arg_cstr(c, persist ? "HPERSIST" : "HPEXPIREAT");
    prop_arg(c, k.key, k.klen);
    if (!persist) prop_arg_ll(c, when);
    for (int i = at; i < c->argc; i++) prop_arg_slice(c, &c->argv[i]);
}

#define HSETEX_FNX 1
#define HSETEX_FXX 2
#define HSETEX_KEEPTTL 4

/* HSETEX key [FNX|FXX] [EX s|PX ms|EXAT ts|PXAT ms-ts|KEEPTTL] FIELDS
 * numfields field value...: 1 when the fields were set, 0 when FNX/FXX
 * was not met. Without an expiry option or KEEPTTL the fields lose their
 * TTLs, as with HSET. A relative or second expiry propagates as PXAT. */
void cmd_hsetex(struct cmd_ctx *c) {
    int flags = 0, first = 0, tpos = 0, seconds = 0, relative = 0;
    long long when = 0;
    for (int i = 2; i < c->argc && !first; i++) {
        const hk_slice *a = &c->argv[i];
        if (arg_is(a, "FIELDS")) {
            if (i >= c->argc - 3) {
                reply_arity(c);
                return;
            }
            long long n;
            if (!hk_str2ll(c->argv[i + 1].ptr, c->argv[i + 1].len, &n) || n < 1 || n > INT_MAX) {
                reply_error(c, "ERR invalid number of fields");
                return;
            }
            int rest = c->argc - i - 2;
            if (rest % 2 || n != rest / 2) {
                reply_arity(c);
                return;
            }
            first = i + 2;
        } else if (hfe_time_opt(a, &seconds, &relative) || arg_is(a, "KEEPTTL")) {
            if (tpos || (flags & HSETEX_KEEPTTL)) {
                reply_error(c, "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified");
                return;
            }
            if (arg_is(a, "KEEPTTL")) {
                flags |= HSETEX_KEEPTTL;
                continue;
            }
            if (i >= c->argc - 1) {
                reply_error(c, "ERR missing expire time");
                return;
            }
            tpos = ++i;
            if (!hfe_parse_time(c, &c->argv[tpos], seconds, relative ? c->now_ms : 0, &when)) return;
        } else if (arg_is(a, "FNX") || arg_is(a, "FXX")) {
            if (flags & (HSETEX_FNX | HSETEX_FXX)) {
                reply_error(c, "ERR Only one of FXX or FNX arguments can be specified");
                return;
            }
            flags |= arg_is(a, "FNX") ? HSETEX_FNX : HSETEX_FXX;
        } else {
            reply_errorf(c, "ERR unknown argument: %.*s", (int)a->len, a->ptr);
            return;
        }
    }
    if (!first) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    struct keyref k;
    int bad;
    struct kv *e = lookup_typed(c, 1, &k, OBJ_HASH, 1, &bad);
    if (bad) return;
    prop_custom(c);
    hash_expire_named(c, &k, &e, first, c->argc - 2, 2);
    if (flags & (HSETEX_FNX | HSETEX_FXX)) {
        int found = 0, n = (c->argc - first) / 2;
        for (int i = first; e && i < c->argc; i += 2) found += hashv_exists(e, c->argv[i].ptr, c->argv[i].len);
        if (((flags & HSETEX_FNX) && found) || ((flags & HSETEX_FXX) && found != n)) {
            reply_int(c, 0);
            return;
        }
    }
    /* A change per field set, whatever its deadline does. */
    unsigned long long mark = dirty_mark(c);
    if (e) db_written(&k, KEV_HSET);
    else e = db_put(&k, hashv_new(k.key, k.klen, -1), KEV_HSET);
    hash_prepare_pairs(c, e, first, c->argc - 1);
    int past = tpos && hfe_past(c, when);
    struct key_write kw;
    key_write_init(&kw, &k, past ? KEV_HDEL : KEV_HEXPIRE, 0);
    int keep = tpos || (flags & HSETEX_KEEPTTL);
    for (int i = first; i < c->argc; i += 2) {
        const hk_slice *f = &c->argv[i], *v = &c->argv[i + 1];
        if (keep) hashv_set_keepttl(e, f->ptr, f->len, v->ptr, v->len);
        else hashv_set(e, f->ptr, f->len, v->ptr, v->len);
        if (!tpos) continue;
        if (past) {
            hfe_delete_now(c, &k, e, f, &kw);
        } else {
            pre_change(&kw.pc);
            hash_set_ttl(&k, e, f, when);
        }
    }
    if (past) hash_settle(c, &k, &e, KEV_DEL);
    else hash_trim(&k, e);
    dirty_settle(c, mark, (c->argc - first) / 2);
    reply_int(c, 1);
    if (past || !prop_on(c)) return;
    /* The command as given, with a relative or second expiry as PXAT. */
    prop_begin(c, c->argc);
    for (int i = 0; i < c->argc; i++) {
        if (tpos && i == tpos - 1) prop_arg_cstr(c, "PXAT");
        else if (tpos && i == tpos) prop_arg_ll(c, when);
        else prop_arg_slice(c, &c->argv[i]);
    }
}
