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

#include <limits.h>
#include <math.h>

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
    return db_put(k, hashv_new(k->key, k->klen, -1), ev);
}

/* The hash at argv[1] for reading: *e NULL when absent. Returns 0 after a
 * WRONGTYPE reply. */
static int hash_lookup_read(struct cmd_ctx *c, struct kv **e) {
    struct keyref k;
    int bad;
    *e = lookup_typed(c, 1, &k, OBJ_HASH, 0, &bad);
    return !bad;
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
    struct kv *e = hash_lookup_create(c, &k, KEV_HSET, &created);
    if (!e) return;
    /* Redis reports "hset" whether or not a value changes. */
    if (!created) db_written(&k, KEV_HSET);
    hash_prepare_pairs(c, e, 2, c->argc - 1);
    long long added = 0;
    for (int i = 2; i < c->argc; i += 2)
        added += hashv_set(e, c->argv[i].ptr, c->argv[i].len, c->argv[i + 1].ptr, c->argv[i + 1].len);
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
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
    struct hashv_val v;
    if (e && hashv_get(e, c->argv[2].ptr, c->argv[2].len, &v)) reply_bulk(c, v.s, v.len);
    else reply_null(c);
}

void cmd_hmget(struct cmd_ctx *c) {
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        struct hashv_val v;
        if (e && hashv_get(e, c->argv[i].ptr, c->argv[i].len, &v)) reply_bulk(c, v.s, v.len);
        else reply_null(c);
    }
}

void cmd_hexists(struct cmd_ctx *c) {
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
    reply_int(c, e && hashv_exists(e, c->argv[2].ptr, c->argv[2].len));
}

void cmd_hlen(struct cmd_ctx *c) {
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
    reply_int(c, e ? (long long)hashv_len(e) : 0);
}

void cmd_hstrlen(struct cmd_ctx *c) {
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
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
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
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
    long long deleted = 0;
    struct key_write kw;
    key_write_init(&kw, &k, KEV_HDEL, 0);
    for (int i = 2; i < c->argc; i++) {
        deleted += hashv_del(e, c->argv[i].ptr, c->argv[i].len, &kw.pc);
        if (hashv_len(e) == 0) break;
    }
    if (deleted) {
        if (hashv_len(e) == 0) db_delete(&k, c->now_ms, KEV_DEL);
        else hashv_shrink(e);
    }
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
    struct kv *e = hash_lookup_create(c, &k, KEV_HINCRBY, &created);
    if (!e) return;
    int st = hashv_incrby_result(e, c->argv[2].ptr, c->argv[2].len, incr, &value);
    if (st != HK_OK) {
        reply_status(c, st);
        return;
    }
    char buf[HK_LONG_STR_SIZE];
    int n = hk_ll2str(buf, value);
    if (!created) db_written(&k, KEV_HINCRBY);
    hashv_set(e, c->argv[2].ptr, c->argv[2].len, buf, (size_t)n);
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
    struct kv *e = hash_lookup_create(c, &k, KEV_HINCRBYFLOAT, &created);
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
    hashv_set(e, c->argv[2].ptr, c->argv[2].len, buf, (size_t)n);
    /* The printed result, as Redis propagates it: HSET key field value. */
    prop_begin(c, 4);
    prop_arg_cstr(c, "HSET");
    prop_arg(c, k.key, k.klen);
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
    if (!e) {
        reply_array(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_HASH)) return;
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
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
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
    struct kv *e;
    if (!hash_lookup_read(c, &e)) return;
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
