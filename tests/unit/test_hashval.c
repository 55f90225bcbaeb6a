/* test_hashval.c - unit tests of the HASH value (src/types/hash.c) in both
 * encodings: set/get/exists/del, overwrite answering "updated", conversion
 * at the entries and value-length limits (type_limits set with atomic
 * stores, restored after each test), every pair visited once by hashv_each
 * and at least once by a full hashv_scan, random picks, the HINCRBY and
 * HINCRBYFLOAT arithmetic, and the lifecycle in hash_type_ops: dup is an
 * equal, independent copy, usage is non-zero and grows, and the digest
 * ignores field order and encoding while matching Redis's per-pair
 * construction. Field TTLs: the side table appears with the first
 * deadline (listpackex / hashtable encodings) and goes with the last, HSET
 * drops a field's TTL and the keep-TTL set does not, due fields are
 * deleted earliest first in bounded batches with a callback first (a
 * random run checks the deadline heap against a shadow copy), conversion, dup and
 * usage carry the deadlines, a hash without TTLs uses no more memory, and
 * the sampler view shares the data, and the digest marks fields with a
 * TTL as Redis 8's does. No server runs: entries are built and
 * freed directly. */
#include "core/alloc.h"
#include "core/hash.h"
#include "core/status.h"
#include "test.h"
#include "types/digest.h"
#include "types/hash.h"
#include "types/kv.h"
#include "types/types.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long long saved_entries, saved_value;

static void limits_set(long long entries, long long value) {
    saved_entries = atomic_load(&type_limits.hash_max_listpack_entries);
    saved_value = atomic_load(&type_limits.hash_max_listpack_value);
    atomic_store(&type_limits.hash_max_listpack_entries, entries);
    atomic_store(&type_limits.hash_max_listpack_value, value);
}

static void limits_restore(void) {
    atomic_store(&type_limits.hash_max_listpack_entries, saved_entries);
    atomic_store(&type_limits.hash_max_listpack_value, saved_value);
}

static struct kv *new_hash(void) { return hashv_new("h", 1, -1); }

/* A hash table hash: converted while still empty. */
static struct kv *new_ht(void) {
    struct kv *e = new_hash();
    hashv_convert(e, 0);
    return e;
}

static int set_s(struct kv *e, const char *f, const char *v) { return hashv_set(e, f, strlen(f), v, strlen(v)); }

/* 1 when field f holds exactly v. */
static int has(const struct kv *e, const char *f, const char *v) {
    struct hashv_val got;
    if (!hashv_get(e, f, strlen(f), &got)) return 0;
    return got.len == strlen(v) && memcmp(got.s, v, got.len) == 0;
}

static void fill(struct kv *e, int n, const char *fp, const char *vp) {
    char f[32], v[32];
    for (int i = 0; i < n; i++) {
        snprintf(f, sizeof(f), "%s%d", fp, i);
        snprintf(v, sizeof(v), "%s%d", vp, i);
        set_s(e, f, v);
    }
}

/* The same field operations on either encoding. */
static void check_field_ops(struct kv *e, int enc) {
    CHECK_EQ_LL(hashv_len(e), 0);
    CHECK(!hashv_exists(e, "a", 1));
    CHECK_EQ_LL(set_s(e, "a", "1"), HASHV_CREATED);
    CHECK_EQ_LL(set_s(e, "b", "hello"), HASHV_CREATED);
    CHECK_EQ_LL(hashv_set(e, "", 0, "empty", 5), HASHV_CREATED);
    CHECK_EQ_LL(hashv_set(e, "bin\0x", 5, "v\0w", 3), HASHV_CREATED);
    CHECK_EQ_LL(hashv_len(e), 4);
    CHECK(has(e, "a", "1"));
    CHECK(has(e, "b", "hello"));
    CHECK(hashv_exists(e, "", 0));
    CHECK(hashv_exists(e, "bin\0x", 5));
    CHECK(!hashv_exists(e, "bin", 3));
    struct hashv_val v;
    CHECK(hashv_get(e, "bin\0x", 5, &v));
    CHECK(v.len == 3 && memcmp(v.s, "v\0w", 3) == 0);
    CHECK(!hashv_get(e, "zz", 2, &v));
    /* Overwrite: "not created", the new value, no new field. */
    CHECK_EQ_LL(set_s(e, "a", "12345"), HASHV_UPDATED);
    CHECK_EQ_LL(set_s(e, "b", "x"), HASHV_UPDATED);
    CHECK_EQ_LL(hashv_len(e), 4);
    CHECK(has(e, "a", "12345"));
    CHECK(has(e, "b", "x"));
    CHECK_EQ_LL(hashv_del(e, "a", 1, NULL), 1);
    CHECK_EQ_LL(hashv_del(e, "a", 1, NULL), 0);
    CHECK_EQ_LL(hashv_del(e, "nope", 4, NULL), 0);
    CHECK(!hashv_exists(e, "a", 1));
    CHECK(has(e, "b", "x"));
    CHECK_EQ_LL(hashv_len(e), 3);
    CHECK_EQ_LL(hashv_del(e, "", 0, NULL), 1);
    CHECK_EQ_LL(hashv_del(e, "bin\0x", 5, NULL), 1);
    CHECK_EQ_LL(hashv_del(e, "b", 1, NULL), 1);
    CHECK_EQ_LL(hashv_len(e), 0);
    CHECK_EQ_LL(set_s(e, "a", "again"), HASHV_CREATED);
    CHECK(has(e, "a", "again"));
    /* Small operations never change the encoding on their own. */
    CHECK_EQ_LL(kv_enc(e), enc);
}

static void test_listpack_ops(void) {
    struct kv *e = new_hash();
    CHECK_EQ_LL(kv_type(e), OBJ_HASH);
    CHECK(hashv_packed(e));
    check_field_ops(e, ENC_LISTPACK);
    /* Integer-looking values are packed as integers and read back as digits. */
    set_s(e, "n", "-42");
    struct hashv_val v;
    CHECK(hashv_get(e, "n", 1, &v));
    CHECK_MEM(v.s, v.len, "-42");
    CHECK(v.tmp.is_int);
    kv_free(e);
}

static void test_hashtable_ops(void) {
    struct kv *e = new_ht();
    CHECK_EQ_LL(kv_enc(e), ENC_HT);
    CHECK(!hashv_packed(e));
    check_field_ops(e, ENC_HT);
    /* Many fields: growth keeps every field reachable. */
    fill(e, 5000, "f", "v");
    CHECK_EQ_LL(hashv_len(e), 5001);
    CHECK(has(e, "f0", "v0"));
    CHECK(has(e, "f4999", "v4999"));
    CHECK(has(e, "a", "again"));
    char f[32];
    for (int i = 0; i < 4900; i++) {
        snprintf(f, sizeof(f), "f%d", i);
        CHECK_EQ_LL(hashv_del(e, f, strlen(f), NULL), 1);
    }
    hashv_shrink(e);
    CHECK_EQ_LL(hashv_len(e), 101);
    CHECK(has(e, "f4950", "v4950"));
    CHECK(!hashv_exists(e, "f10", 3));
    kv_free(e);
}

static void test_convert_entries(void) {
    limits_set(4, 64);
    struct kv *e = new_hash();
    fill(e, 4, "f", "v");
    CHECK(hashv_packed(e));
    /* Overwriting at the limit adds no field, so nothing converts. */
    CHECK_EQ_LL(set_s(e, "f0", "w"), HASHV_UPDATED);
    CHECK(hashv_packed(e));
    CHECK_EQ_LL(set_s(e, "f4", "v4"), HASHV_CREATED);
    CHECK_EQ_LL(kv_enc(e), ENC_HT);
    CHECK_EQ_LL(hashv_len(e), 5);
    CHECK(has(e, "f0", "w"));
    for (int i = 1; i < 5; i++) {
        char f[8], v[8];
        snprintf(f, sizeof(f), "f%d", i);
        snprintf(v, sizeof(v), "v%d", i);
        CHECK(has(e, f, v));
    }
    /* Never back: deleting below the limit keeps the table. */
    hashv_del(e, "f4", 2, NULL);
    hashv_del(e, "f3", 2, NULL);
    hashv_shrink(e);
    CHECK_EQ_LL(kv_enc(e), ENC_HT);
    kv_free(e);
    limits_restore();
}

static void test_convert_value_len(void) {
    limits_set(128, 8);
    struct kv *e = new_hash();
    CHECK_EQ_LL(set_s(e, "12345678", "abcdefgh"), HASHV_CREATED);
    CHECK(hashv_packed(e));
    CHECK_EQ_LL(set_s(e, "k", "abcdefghi"), HASHV_CREATED);
    CHECK_EQ_LL(kv_enc(e), ENC_HT);
    CHECK(has(e, "12345678", "abcdefgh"));
    CHECK(has(e, "k", "abcdefghi"));
    kv_free(e);

    e = new_hash();
    set_s(e, "a", "1");
    CHECK_EQ_LL(set_s(e, "123456789", "v"), HASHV_CREATED);
    CHECK_EQ_LL(kv_enc(e), ENC_HT);
    CHECK(has(e, "a", "1"));
    CHECK(has(e, "123456789", "v"));
    kv_free(e);

    /* An overwrite with a long value converts too. */
    e = new_hash();
    set_s(e, "a", "1");
    CHECK_EQ_LL(set_s(e, "a", "123456789"), HASHV_UPDATED);
    CHECK_EQ_LL(kv_enc(e), ENC_HT);
    CHECK(has(e, "a", "123456789"));
    kv_free(e);
    limits_restore();
}

static void test_try_convert(void) {
    limits_set(4, 8);
    struct kv *e = new_hash();
    hashv_try_convert(e, 4, 8, 64);
    CHECK(hashv_packed(e));
    hashv_try_convert(e, 5, 1, 10);
    CHECK_EQ_LL(kv_enc(e), ENC_HT);
    /* A table is left alone. */
    hashv_try_convert(e, 1, 1, 2);
    CHECK_EQ_LL(kv_enc(e), ENC_HT);
    kv_free(e);

    e = new_hash();
    set_s(e, "a", "1");
    hashv_try_convert(e, 1, 9, 10);
    CHECK_EQ_LL(kv_enc(e), ENC_HT);
    CHECK(has(e, "a", "1"));
    kv_free(e);

    limits_restore();

    /* Converting keeps every pair, integers included. */
    e = new_hash();
    fill(e, 50, "f", "");
    set_s(e, "big", "123456789012");
    hashv_convert(e, 1000);
    CHECK_EQ_LL(kv_enc(e), ENC_HT);
    CHECK_EQ_LL(hashv_len(e), 51);
    CHECK(has(e, "f49", "49"));
    CHECK(has(e, "big", "123456789012"));
    kv_free(e);
}

struct seen {
    int n;
    int *count;
    int bad;
    int total;
};

/* Fields are "f<i>" with value "v<i>". */
static void seen_visit(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    struct seen *s = ctx;
    char fb[32], vb[32];
    if (fl < 2 || fl >= sizeof(fb) || f[0] != 'f') {
        s->bad++;
        return;
    }
    memcpy(fb, f + 1, fl - 1);
    fb[fl - 1] = '\0';
    int i = atoi(fb);
    snprintf(vb, sizeof(vb), "v%d", i);
    if (i < 0 || i >= s->n || vl != strlen(vb) || memcmp(v, vb, vl) != 0) {
        s->bad++;
        return;
    }
    s->count[i]++;
    s->total++;
}

static struct seen seen_new(int n) { return (struct seen){n, calloc((size_t)n, sizeof(int)), 0, 0}; }

static void check_each_once(struct kv *e, int n) {
    struct seen s = seen_new(n);
    hashv_each(e, seen_visit, &s);
    CHECK_EQ_LL(s.bad, 0);
    CHECK_EQ_LL(s.total, n);
    for (int i = 0; i < n; i++)
        if (s.count[i] != 1) CHECK_EQ_LL(s.count[i], 1);
    free(s.count);
}

static void test_each(void) {
    struct kv *e = new_hash();
    fill(e, 60, "f", "v");
    CHECK(hashv_packed(e));
    check_each_once(e, 60);
    hashv_convert(e, 0);
    check_each_once(e, 60);
    fill(e, 3000, "f", "v");
    check_each_once(e, 3000);
    kv_free(e);
}

static void test_scan(void) {
    struct kv *e = new_hash();
    fill(e, 30, "f", "v");
    struct seen s = seen_new(30);
    CHECK_EQ_LL(hashv_scan(e, 12345, seen_visit, &s), 0);
    CHECK_EQ_LL(s.total, 30);
    free(s.count);
    kv_free(e);

    e = new_ht();
    fill(e, 2000, "f", "v");
    s = seen_new(2000);
    uint64_t cursor = 0;
    int steps = 0;
    do {
        cursor = hashv_scan(e, cursor, seen_visit, &s);
        steps++;
    } while (cursor && steps < 1000000);
    CHECK_EQ_LL(cursor, 0);
    CHECK_EQ_LL(s.bad, 0);
    for (int i = 0; i < 2000; i++)
        if (s.count[i] < 1) CHECK(s.count[i] >= 1);
    free(s.count);
    kv_free(e);
}

static void check_random(struct kv *e, int n) {
    for (int i = 0; i < 50; i++) {
        struct hashv_val f;
        hashv_random_field(e, &f);
        CHECK(f.len >= 2 && f.s[0] == 'f');
        CHECK(hashv_exists(e, f.s, f.len));
    }
    /* Distinct picks: below a third of the size, below the size, all. */
    uint64_t counts[] = {1, (uint64_t)n / 4, (uint64_t)n / 2, (uint64_t)n - 1, (uint64_t)n};
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        struct seen s = seen_new(n);
        hashv_random_pairs(e, counts[k], 1, seen_visit, &s);
        CHECK_EQ_LL(s.bad, 0);
        CHECK_EQ_LL(s.total, counts[k]);
        for (int i = 0; i < n; i++)
            if (s.count[i] > 1) CHECK(s.count[i] <= 1);
        free(s.count);
    }
    /* With repeats: any count, every pick a real pair. */
    struct seen s = seen_new(n);
    hashv_random_pairs(e, (uint64_t)n * 3, 0, seen_visit, &s);
    CHECK_EQ_LL(s.bad, 0);
    CHECK_EQ_LL(s.total, n * 3);
    free(s.count);
}

static void test_random(void) {
    struct kv *e = new_hash();
    fill(e, 40, "f", "v");
    CHECK(hashv_packed(e));
    check_random(e, 40);
    hashv_convert(e, 0);
    check_random(e, 40);
    fill(e, 900, "f", "v");
    check_random(e, 900);
    kv_free(e);
}

static void test_incr(void) {
    struct kv *e = new_hash();
    long long r = 0;
    CHECK_EQ_LL(hashv_incrby_result(e, "x", 1, 5, &r), HK_OK);
    CHECK_EQ_LL(r, 5);
    set_s(e, "n", "10");
    set_s(e, "s", "abc");
    set_s(e, "max", "9223372036854775807");
    CHECK_EQ_LL(hashv_incrby_result(e, "n", 1, -3, &r), HK_OK);
    CHECK_EQ_LL(r, 7);
    CHECK_EQ_LL(hashv_incrby_result(e, "s", 1, 1, &r), HK_ERR_HASH_NOT_INT);
    CHECK_EQ_LL(hashv_incrby_result(e, "max", 3, 1, &r), HK_ERR_OVERFLOW);
    /* Arithmetic only: the stored values are unchanged. */
    CHECK(has(e, "n", "10"));
    CHECK(!hashv_exists(e, "x", 1));
    long double d = 0;
    set_s(e, "f", "1.5");
    set_s(e, "inf", "inf");
    CHECK_EQ_LL(hashv_incrbyfloat_result(e, "f", 1, 1.0L, &d), HK_OK);
    CHECK(d == 2.5L);
    CHECK_EQ_LL(hashv_incrbyfloat_result(e, "n", 1, 0.5L, &d), HK_OK);
    CHECK(d == 10.5L);
    CHECK_EQ_LL(hashv_incrbyfloat_result(e, "s", 1, 1.0L, &d), HK_ERR_HASH_NOT_FLOAT);
    CHECK_EQ_LL(hashv_incrbyfloat_result(e, "inf", 3, 1.0L, &d), HK_ERR_NAN_INF);
    CHECK(has(e, "f", "1.5"));
    hashv_convert(e, 0);
    CHECK_EQ_LL(hashv_incrby_result(e, "n", 1, 1, &r), HK_OK);
    CHECK_EQ_LL(r, 11);
    CHECK_EQ_LL(hashv_incrby_result(e, "s", 1, 1, &r), HK_ERR_HASH_NOT_INT);
    CHECK_EQ_LL(hashv_incrbyfloat_result(e, "f", 1, -0.5L, &d), HK_OK);
    CHECK(d == 1.0L);
    kv_free(e);
}

/* Field-by-field equality of two hashes. */
struct eq_ctx {
    const struct kv *other;
    int diff;
};

static void eq_visit(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    struct eq_ctx *x = ctx;
    struct hashv_val got;
    if (!hashv_get(x->other, f, fl, &got) || got.len != vl || memcmp(got.s, v, vl) != 0) x->diff++;
}

static int same_content(const struct kv *a, const struct kv *b) {
    if (hashv_len(a) != hashv_len(b)) return 0;
    struct eq_ctx x = {b, 0};
    hashv_each(a, eq_visit, &x);
    return x.diff == 0;
}

static void check_dup(struct kv *e) {
    struct kv *d = kv_dup(e, "copy", 4, 1234);
    CHECK_EQ_LL(kv_type(d), OBJ_HASH);
    CHECK_EQ_LL(kv_enc(d), kv_enc(e));
    CHECK_MEM(kv_key(d), kv_keylen(d), "copy");
    CHECK_EQ_LL(kv_expire(d), 1234);
    CHECK(same_content(e, d));
    CHECK(same_content(d, e));
    /* Independent: changing the copy leaves the original alone, and the
     * copy survives the original. */
    set_s(d, "f0", "changed");
    set_s(d, "newfield", "x");
    CHECK(has(e, "f0", "v0"));
    CHECK(!hashv_exists(e, "newfield", 8));
    kv_free(e);
    CHECK(has(d, "f0", "changed"));
    CHECK(has(d, "f1", "v1"));
    kv_free(d);
}

static void test_dup(void) {
    struct kv *e = new_hash();
    fill(e, 20, "f", "v");
    check_dup(e);
    e = new_ht();
    fill(e, 500, "f", "v");
    check_dup(e);
    /* An empty table copies to an empty table. */
    e = new_ht();
    struct kv *d = kv_dup(e, "c", 1, -1);
    CHECK_EQ_LL(kv_enc(d), ENC_HT);
    CHECK_EQ_LL(hashv_len(d), 0);
    kv_free(d);
    kv_free(e);
}

static void test_usage(void) {
    const struct type_ops *ops = type_table[OBJ_HASH];
    CHECK(ops == &hash_type_ops);
    CHECK(strcmp(ops->name, "hash") == 0);
    struct kv *e = new_hash();
    size_t u0 = ops->usage(e, 0);
    CHECK(u0 > 0);
    fill(e, 50, "field", "value-value-value");
    size_t u1 = ops->usage(e, 0);
    CHECK(u1 > u0);
    CHECK(kv_usage(e, 0) > u1);
    /* Freeing costs one allocation per field of a table, a listpack one. */
    CHECK_EQ_LL(kv_free_effort(e), 1);
    hashv_convert(e, 0);
    size_t u2 = ops->usage(e, 0);
    CHECK(u2 > 0);
    fill(e, 2000, "more", "value-value-value");
    size_t u3 = ops->usage(e, 0);
    CHECK(u3 > u2);
    CHECK_EQ_LL(kv_free_effort(e), (long long)hashv_len(e));
    /* Sampled: scaled from a few entries, so of the same order. */
    size_t us = ops->usage(e, 5);
    CHECK(us > u3 / 2 && us < u3 * 2);
    kv_free(e);
}

static void digest_of(const struct kv *e, unsigned char d[20]) {
    memset(d, 0, 20);
    hash_type_ops.digest(e, d);
}

static void test_digest(void) {
    static const char *f[] = {"a", "b", "c", "12", "long-field-name"};
    static const char *v[] = {"1", "two", "", "x", "-5"};
    enum { N = 5 };
    struct kv *fwd = new_hash(), *rev = new_hash(), *ht = new_ht();
    for (int i = 0; i < N; i++) set_s(fwd, f[i], v[i]);
    for (int i = N - 1; i >= 0; i--) set_s(rev, f[i], v[i]);
    for (int i = 0; i < N; i++) set_s(ht, f[(i + 2) % N], v[(i + 2) % N]);
    CHECK(hashv_packed(fwd) && hashv_packed(rev) && !hashv_packed(ht));
    unsigned char d1[20], d2[20], d3[20], want[20] = {0};
    digest_of(fwd, d1);
    digest_of(rev, d2);
    digest_of(ht, d3);
    CHECK(memcmp(d1, d2, 20) == 0);
    CHECK(memcmp(d1, d3, 20) == 0);
    /* Redis's construction: each pair mixed into its own digest, the pairs
     * folded by xor. */
    for (int i = 0; i < N; i++) {
        unsigned char pair[20] = {0};
        dg_mix(pair, f[i], strlen(f[i]));
        dg_mix(pair, v[i], strlen(v[i]));
        dg_xor(want, pair, 20);
    }
    CHECK(memcmp(d1, want, 20) == 0);
    /* A different value, or a field and value swapped, changes it. */
    set_s(rev, "b", "three");
    digest_of(rev, d2);
    CHECK(memcmp(d1, d2, 20) != 0);
    struct kv *x = new_hash(), *y = new_hash();
    set_s(x, "p", "q");
    set_s(y, "q", "p");
    digest_of(x, d1);
    digest_of(y, d2);
    CHECK(memcmp(d1, d2, 20) != 0);
    /* A big table against its listpack-built twin. */
    struct kv *big_ht = new_ht(), *big_lp = new_hash();
    limits_set(100000, 64);
    fill(big_lp, 1000, "f", "v");
    fill(big_ht, 1000, "f", "v");
    limits_restore();
    CHECK(hashv_packed(big_lp));
    digest_of(big_lp, d1);
    digest_of(big_ht, d2);
    CHECK(memcmp(d1, d2, 20) == 0);
    kv_free(fwd);
    kv_free(rev);
    kv_free(ht);
    kv_free(x);
    kv_free(y);
    kv_free(big_ht);
    kv_free(big_lp);
}

/* hashv_del calls pre_change once, before the field goes, and only when
 * it exists. */
struct del_probe {
    struct pre_change pc;
    const struct kv *e;
    const char *f;
    int calls, present;
};

static void del_probe_fired(struct pre_change *pc) {
    struct del_probe *p = (struct del_probe *)pc;
    p->calls++;
    p->present = hashv_exists(p->e, p->f, strlen(p->f));
}

static void test_del_pre_change(void) {
    for (int ht = 0; ht < 2; ht++) {
        struct kv *e = ht ? new_ht() : new_hash();
        fill(e, 4, "f", "v");
        struct del_probe p = {{del_probe_fired, 0}, e, "f2", 0, 0};
        CHECK_EQ_LL(hashv_del(e, "f2", 2, &p.pc), 1);
        CHECK_EQ_LL(p.calls, 1);
        CHECK(p.present);
        struct del_probe q = {{del_probe_fired, 0}, e, "f2", 0, 0};
        CHECK_EQ_LL(hashv_del(e, "f2", 2, &q.pc), 0);
        CHECK_EQ_LL(hashv_del(e, "nope", 4, &q.pc), 0);
        CHECK_EQ_LL(q.calls, 0);
        /* Fired once, then silent for the next deletions. */
        CHECK_EQ_LL(hashv_del(e, "f0", 2, &p.pc) + hashv_del(e, "f1", 2, &p.pc), 2);
        CHECK_EQ_LL(p.calls, 1);
        CHECK_EQ_LL(hashv_len(e), 1);
        kv_free(e);
    }
}


/* Field TTLs on one encoding (enc_plain / enc_ex: before and after). */
static void count_field(void *ctx, const char *f, size_t fl);

static void check_ttl_ops(struct kv *e, int enc_plain, int enc_ex) {
    fill(e, 10, "f", "v");
    CHECK(!hashv_has_ttl(e));
    CHECK_EQ_LL(hashv_ttl(e, "f1", 2), -1);
    CHECK_EQ_LL(hashv_next_expire(e), LLONG_MAX);
    CHECK_EQ_LL(hashv_ttl_trim(e), 0);
    hashv_set_ttl(e, "f1", 2, 1000);
    CHECK(hashv_has_ttl(e));
    CHECK_EQ_LL(kv_enc(e), enc_ex);
    CHECK_EQ_LL(hashv_ttl(e, "f1", 2), 1000);
    CHECK_EQ_LL(hashv_ttl(e, "f2", 2), -1);
    CHECK_EQ_LL(hashv_ttl_count(e), 1);
    /* The value is unchanged and every field still reads back. */
    CHECK(has(e, "f1", "v1"));
    CHECK(has(e, "f9", "v9"));
    CHECK_EQ_LL(hashv_len(e), 10);
    hashv_set_ttl(e, "f2", 2, 500);
    hashv_set_ttl(e, "f3", 2, 2000);
    hashv_set_ttl(e, "f1", 2, 1500);
    CHECK_EQ_LL(hashv_ttl(e, "f1", 2), 1500);
    CHECK_EQ_LL(hashv_ttl_count(e), 3);
    CHECK(hashv_next_expire(e) <= 500);
    CHECK(hashv_field_expired(e, "f2", 2, 500));
    CHECK(!hashv_field_expired(e, "f2", 2, 499));
    CHECK(!hashv_field_expired(e, "f4", 2, 1 << 30));
    /* HSET over a field drops its TTL; the keep-TTL set does not. */
    CHECK_EQ_LL(set_s(e, "f3", "new"), HASHV_UPDATED);
    CHECK_EQ_LL(hashv_ttl(e, "f3", 2), -1);
    CHECK_EQ_LL(hashv_set_keepttl(e, "f1", 2, "kept", 4), HASHV_UPDATED);
    CHECK_EQ_LL(hashv_ttl(e, "f1", 2), 1500);
    CHECK(has(e, "f1", "kept"));
    /* Persist and delete drop deadlines. */
    CHECK_EQ_LL(hashv_persist(e, "f4", 2), 0);
    hashv_set_ttl(e, "f4", 2, 700);
    CHECK_EQ_LL(hashv_persist(e, "f4", 2), 1);
    CHECK_EQ_LL(hashv_ttl(e, "f4", 2), -1);
    hashv_set_ttl(e, "f5", 2, 800);
    CHECK_EQ_LL(hashv_del(e, "f5", 2, NULL), 1);
    CHECK_EQ_LL(hashv_ttl(e, "f5", 2), -1);
    CHECK_EQ_LL(hashv_ttl_count(e), 2);
    /* Nothing due before 500; at 1500 both f2 and f1 are, one per call
     * with a limit of 1, the callback seeing each before it goes. */
    CHECK_EQ_LL(hashv_expire_due(e, 499, 100, NULL, NULL), 0);
    CHECK_EQ_LL(hashv_next_expire(e), 500);
    int seen = 0;
    CHECK_EQ_LL(hashv_expire_due(e, 1500, 1, count_field, &seen), 1);
    CHECK_EQ_LL(seen, 1);
    CHECK_EQ_LL(hashv_len(e), 8);
    CHECK(hashv_next_expire(e) <= 1500);
    CHECK_EQ_LL(hashv_expire_due(e, 1500, 1, count_field, &seen), 1);
    CHECK_EQ_LL(seen, 2);
    CHECK(!hashv_exists(e, "f1", 2) && !hashv_exists(e, "f2", 2));
    CHECK_EQ_LL(hashv_len(e), 7);
    CHECK_EQ_LL(hashv_ttl_count(e), 0);
    CHECK_EQ_LL(hashv_next_expire(e), LLONG_MAX);
    /* No deadline left: the side table goes, the encoding is plain again. */
    CHECK(hashv_has_ttl(e));
    CHECK_EQ_LL(hashv_ttl_trim(e), 1);
    CHECK(!hashv_has_ttl(e));
    CHECK_EQ_LL(kv_enc(e), enc_plain);
    CHECK(has(e, "f9", "v9"));
    kv_free(e);
}

static void count_field(void *ctx, const char *f, size_t fl) {
    (void)f;
    CHECK(fl > 0);
    (*(int *)ctx)++;
}

static void test_ttl_listpack(void) { check_ttl_ops(new_hash(), ENC_LISTPACK, ENC_LISTPACK_EX); }
static void test_ttl_hashtable(void) { check_ttl_ops(new_ht(), ENC_HT, ENC_HT_EX); }

static void test_ttl_convert_dup_usage(void) {
    limits_set(16, 64);
    struct kv *e = new_hash();
    fill(e, 8, "f", "v");
    hashv_set_ttl(e, "f0", 2, 100);
    hashv_set_ttl(e, "f7", 2, 200);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK_EX);
    CHECK(strcmp(obj_enc_name(kv_enc(e)), "listpackex") == 0);
    /* Growing past the listpack limit keeps the deadlines. */
    fill(e, 40, "g", "w");
    CHECK_EQ_LL(kv_enc(e), ENC_HT_EX);
    CHECK(strcmp(obj_enc_name(kv_enc(e)), "hashtable") == 0);
    CHECK_EQ_LL(hashv_ttl(e, "f0", 2), 100);
    CHECK_EQ_LL(hashv_ttl(e, "f7", 2), 200);
    CHECK(has(e, "g39", "w39"));
    /* A copy has the same fields and deadlines, independently. */
    struct kv *d = kv_dup(e, "c", 1, -1);
    CHECK_EQ_LL(kv_enc(d), ENC_HT_EX);
    CHECK_EQ_LL(hashv_ttl(d, "f7", 2), 200);
    CHECK_EQ_LL(hashv_len(d), hashv_len(e));
    hashv_persist(d, "f7", 2);
    CHECK_EQ_LL(hashv_ttl(e, "f7", 2), 200);
    kv_free(d);
    /* The side table counts in the usage, and each deadline in what
     * freeing costs. */
    const struct type_ops *ops = type_table[OBJ_HASH];
    size_t with = ops->usage(e, 0);
    CHECK_EQ_LL(kv_free_effort(e), (long long)hashv_len(e) + 2);
    hashv_persist(e, "f0", 2);
    hashv_persist(e, "f7", 2);
    CHECK_EQ_LL(hashv_ttl_trim(e), 1);
    CHECK_EQ_LL(kv_enc(e), ENC_HT);
    CHECK(ops->usage(e, 0) < with);
    kv_free(e);
    limits_restore();
}

/* A hash that never had a TTL costs exactly what it did before the
 * feature: its value is the bare listpack (no side table, no per-field
 * bytes), and one that lost its last TTL is back to that size. */
static void test_ttl_no_overhead(void) {
    const struct type_ops *ops = type_table[OBJ_HASH];
    struct kv *plain = new_hash(), *was = new_hash();
    fill(plain, 5, "f", "v");
    fill(was, 5, "f", "v");
    size_t base = ops->usage(plain, 0);
    CHECK_EQ_LL(base, hk_usable_size(kv_ptr(plain)));
    hashv_set_ttl(was, "f1", 2, 5);
    CHECK(ops->usage(was, 0) > base);
    hashv_persist(was, "f1", 2);
    hashv_ttl_trim(was);
    CHECK_EQ_LL(ops->usage(was, 0), base);
    kv_free(plain);
    kv_free(was);
}

/* Deadlines kept in a heap: after random sets, updates, persists and
 * deletes the earliest is always the minimum of a shadow copy, and due
 * fields go earliest first. */
struct due_order {
    long long *shadow;
    long long last;
    int bad;
};

static void check_order(void *ctx, const char *f, size_t fl) {
    struct due_order *o = ctx;
    char buf[16];
    memcpy(buf, f, fl);
    buf[fl] = 0;
    long long when = o->shadow[atoi(buf + 1)];
    if (when < o->last) o->bad = 1;
    o->last = when;
    o->shadow[atoi(buf + 1)] = -1;
}

static void test_ttl_heap_random(void) {
    enum { N = 300 };
    long long shadow[N];
    limits_set(1000, 64);
    for (int round = 0; round < 2; round++) {
        struct kv *e = round ? new_ht() : new_hash();
        fill(e, N, "f", "v");
        CHECK_EQ_LL(hashv_packed(e), !round);
        srand(7 + round);
        for (int i = 0; i < N; i++) shadow[i] = -1;
        char f[16];
        for (int step = 0; step < 5000; step++) {
            int i = rand() % N, op = rand() % 10;
            int fl = snprintf(f, sizeof(f), "f%d", i);
            if (!hashv_exists(e, f, (size_t)fl)) {
                set_s(e, f, "again");
                shadow[i] = -1;
            } else if (op < 6) {
                shadow[i] = 1000 + rand() % 100000;
                hashv_set_ttl(e, f, (size_t)fl, shadow[i]);
            } else if (op < 8) {
                CHECK_EQ_LL(hashv_persist(e, f, (size_t)fl), shadow[i] >= 0);
                shadow[i] = -1;
            } else {
                CHECK_EQ_LL(hashv_del(e, f, (size_t)fl, NULL), 1);
                shadow[i] = -1;
            }
            long long min = LLONG_MAX;
            for (int j = 0; j < N; j++)
                if (shadow[j] >= 0 && shadow[j] < min) min = shadow[j];
            if (hashv_next_expire(e) != min) {
                CHECK_EQ_LL(hashv_next_expire(e), min);
                break;
            }
        }
        struct due_order o = {shadow, 0, 0};
        uint64_t ttls = hashv_ttl_count(e);
        CHECK_EQ_LL(hashv_expire_due(e, 50000, 1u << 30, check_order, &o) + hashv_ttl_count(e), ttls);
        CHECK(!o.bad);
        for (int j = 0; j < N; j++) {
            int fl = snprintf(f, sizeof(f), "f%d", j);
            if (shadow[j] >= 0) CHECK(shadow[j] > 50000 && hashv_ttl(e, f, (size_t)fl) == shadow[j]);
        }
        CHECK(hashv_next_expire(e) > 50000);
        kv_free(e);
    }
    limits_restore();
}

/* The samplers read a hash with TTLs (listpackex) as they read a plain
 * one. */
static void test_ttl_view(void) {
    struct kv *e = new_hash();
    fill(e, 6, "f", "v");
    hashv_set_ttl(e, "f2", 2, 99);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK_EX);
    CHECK_EQ_LL(hashv_len(e), 6);
    struct hashv_val f;
    for (int i = 0; i < 50; i++) {
        hashv_random_field(e, &f);
        CHECK(f.len == 2 && f.s[0] == 'f');
    }
    /* Digest, as Redis 8's: a field with a TTL has "!!hexpire!!" mixed
     * into its pair, whatever the deadline. */
    unsigned char d1[20], d2[20], d3[20];
    digest_of(e, d1);
    hashv_set_ttl(e, "f2", 2, 12345);
    digest_of(e, d3);
    CHECK(memcmp(d1, d3, 20) == 0);
    hashv_persist(e, "f2", 2);
    hashv_ttl_trim(e);
    digest_of(e, d2);
    CHECK(memcmp(d1, d2, 20) != 0);
    unsigned char want[20], pair[20] = {0}, plain[20] = {0};
    memcpy(want, d2, 20);
    dg_mix(plain, "f2", 2);
    dg_mix(plain, "v2", 2);
    memcpy(pair, plain, 20);
    dg_xor(pair, "!!hexpire!!", 11);
    dg_xor(want, plain, 20);
    dg_xor(want, pair, 20);
    CHECK(memcmp(want, d1, 20) == 0);
    kv_free(e);
}

int main(void) {
    hk_hash_init(12345);
    TEST_RUN(test_del_pre_change);
    TEST_RUN(test_listpack_ops);
    TEST_RUN(test_hashtable_ops);
    TEST_RUN(test_convert_entries);
    TEST_RUN(test_convert_value_len);
    TEST_RUN(test_try_convert);
    TEST_RUN(test_each);
    TEST_RUN(test_scan);
    TEST_RUN(test_random);
    TEST_RUN(test_incr);
    TEST_RUN(test_dup);
    TEST_RUN(test_usage);
    TEST_RUN(test_digest);
    TEST_RUN(test_ttl_listpack);
    TEST_RUN(test_ttl_hashtable);
    TEST_RUN(test_ttl_convert_dup_usage);
    TEST_RUN(test_ttl_no_overhead);
    TEST_RUN(test_ttl_view);
    TEST_RUN(test_ttl_heap_random);
    return TEST_REPORT();
}
