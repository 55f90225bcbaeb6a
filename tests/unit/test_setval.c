/* test_setval.c - unit tests of the SET value (src/types/set.c): add, has,
 * remove and size in each encoding (intset, listpack, hash table); the
 * intset -> listpack -> hash table conversions at set-max-intset-entries,
 * set-max-listpack-entries and set-max-listpack-value, and which members
 * leave an intset; creation by hint and the SINTERSTORE shrink back to an
 * intset; iteration, scanning and random picks; and the type-table
 * lifecycle (dup, usage, digest). The limits are changed through
 * type_limits as CONFIG SET does, and put back after each test. */
#include "core/util.h"
#include "test.h"
#include "types/digest.h"
#include "types/kv.h"
#include "types/set.h"
#include "types/types.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_limits(long long intset_entries, long long lp_entries, long long lp_value) {
    atomic_store(&type_limits.set_max_intset_entries, intset_entries);
    atomic_store(&type_limits.set_max_listpack_entries, lp_entries);
    atomic_store(&type_limits.set_max_listpack_value, lp_value);
}

static void default_limits(void) { set_limits(512, 128, 64); }

static int add_str(struct setv *o, const char *s) { return setv_add(o, s, strlen(s), NULL); }
static int has_str(const struct setv *o, const char *s) { return setv_has(o, s, strlen(s)); }
static int rem_str(struct setv *o, const char *s) { return setv_remove(o, s, strlen(s), NULL); }

static int rem_ll(struct setv *o, long long v) {
    char buf[HK_LONG_STR_SIZE];
    int n = hk_ll2str(buf, v);
    return setv_remove(o, buf, (size_t)n, NULL);
}

static int add_ll(struct setv *o, long long v) {
    char buf[HK_LONG_STR_SIZE];
    int n = hk_ll2str(buf, v);
    return setv_add(o, buf, (size_t)n, NULL);
}

static int has_ll(const struct setv *o, long long v) {
    char buf[HK_LONG_STR_SIZE];
    int n = hk_ll2str(buf, v);
    return setv_has(o, buf, (size_t)n);
}

/* Member i of the string test sets ("m0", "m1", ...), and its index back
 * from the bytes (-1 when the bytes are not one). */
static size_t member(char *buf, int i) { return (size_t)snprintf(buf, 32, "m%d", i); }

static int member_index(const char *s, size_t len) {
    if (len < 2 || s[0] != 'm') return -1;
    long long v;
    if (!hk_str2ll(s + 1, len - 1, &v) || v < 0) return -1;
    return (int)v;
}

/* A set of members m0..m(n-1) in encoding enc (the limits permitting). */
static struct setv build_str(int enc, int n) {
    struct setv o = setv_new(enc);
    char buf[32];
    for (int i = 0; i < n; i++) setv_add(&o, buf, member(buf, i), NULL);
    return o;
}

static void test_intset(void) {
    default_limits();
    struct setv o = setv_create("7", 1, 1);
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    CHECK_EQ_LL(setv_size(&o), 0);
    CHECK_EQ_LL(add_str(&o, "7"), 1);
    CHECK_EQ_LL(add_str(&o, "-3"), 1);
    CHECK_EQ_LL(add_ll(&o, 1LL << 40), 1);
    CHECK_EQ_LL(add_str(&o, "7"), 0);
    CHECK_EQ_LL(setv_size(&o), 3);
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    CHECK(has_str(&o, "7"));
    CHECK(has_str(&o, "-3"));
    CHECK(has_ll(&o, 1LL << 40));
    CHECK(!has_str(&o, "8"));
    /* Not the canonical form of a member: not a member. */
    CHECK(!has_str(&o, "07"));
    CHECK(!has_str(&o, "+7"));
    CHECK(!has_str(&o, "abc"));
    CHECK_EQ_LL(rem_str(&o, "abc"), 0);
    CHECK_EQ_LL(rem_str(&o, "07"), 0);
    CHECK_EQ_LL(rem_str(&o, "8"), 0);
    CHECK_EQ_LL(rem_str(&o, "7"), 1);
    CHECK_EQ_LL(rem_str(&o, "7"), 0);
    CHECK_EQ_LL(setv_size(&o), 2);
    CHECK(!has_str(&o, "7"));
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    /* Iteration is ascending. */
    struct setv_iter it;
    struct lp_val v;
    setv_iter_init(&it, &o);
    CHECK(setv_iter_next(&it, &v));
    CHECK(v.is_int);
    CHECK_MEM(lp_val_ptr(&v), v.len, "-3");
    CHECK(setv_iter_next(&it, &v));
    CHECK_MEM(lp_val_ptr(&v), v.len, "1099511627776");
    CHECK(!setv_iter_next(&it, &v));
    setv_free(&o);
    CHECK(o.p == NULL);
}

static void test_listpack(void) {
    default_limits();
    struct setv o = setv_create("a", 1, 1);
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    CHECK_EQ_LL(add_str(&o, "a"), 1);
    CHECK_EQ_LL(add_str(&o, "b"), 1);
    CHECK_EQ_LL(add_str(&o, "12"), 1);
    CHECK_EQ_LL(add_str(&o, ""), 1);
    CHECK_EQ_LL(add_str(&o, "a"), 0);
    CHECK_EQ_LL(add_str(&o, "12"), 0);
    CHECK_EQ_LL(setv_size(&o), 4);
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    CHECK(has_str(&o, "a"));
    CHECK(has_str(&o, "12"));
    CHECK(has_str(&o, ""));
    CHECK(!has_str(&o, "012"));
    CHECK(!has_str(&o, "c"));
    CHECK_EQ_LL(rem_str(&o, "c"), 0);
    CHECK_EQ_LL(rem_str(&o, "12"), 1);
    CHECK_EQ_LL(rem_str(&o, ""), 1);
    CHECK_EQ_LL(rem_str(&o, "12"), 0);
    CHECK_EQ_LL(setv_size(&o), 2);
    CHECK(!has_str(&o, "12"));
    CHECK_EQ_LL(rem_str(&o, "a"), 1);
    CHECK_EQ_LL(rem_str(&o, "b"), 1);
    CHECK_EQ_LL(setv_size(&o), 0);
    CHECK(!has_str(&o, "a"));
    CHECK_EQ_LL(rem_str(&o, "a"), 0);
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    setv_free(&o);
}

static void test_hashtable(void) {
    default_limits();
    struct setv o = setv_new(ENC_HT);
    char buf[32];
    for (int i = 0; i < 3000; i++) CHECK_EQ_LL(setv_add(&o, buf, member(buf, i), NULL), 1);
    CHECK_EQ_LL(add_str(&o, "m5"), 0);
    CHECK_EQ_LL(add_str(&o, "42"), 1);
    CHECK_EQ_LL(setv_size(&o), 3001);
    for (int i = 0; i < 3000; i++) CHECK(setv_has(&o, buf, member(buf, i)));
    CHECK(has_str(&o, "42"));
    CHECK(!has_str(&o, "m3000"));
    CHECK(!has_str(&o, "042"));
    for (int i = 0; i < 3000; i += 2) CHECK_EQ_LL(setv_remove(&o, buf, member(buf, i), NULL), 1);
    CHECK_EQ_LL(rem_str(&o, "m0"), 0);
    CHECK_EQ_LL(setv_size(&o), 1501);
    for (int i = 0; i < 3000; i++) CHECK_EQ_LL(setv_has(&o, buf, member(buf, i)), i % 2);
    /* Shrinking down to nothing keeps the encoding. */
    for (int i = 1; i < 3000; i += 2) CHECK_EQ_LL(setv_remove(&o, buf, member(buf, i), NULL), 1);
    CHECK_EQ_LL(rem_str(&o, "42"), 1);
    CHECK_EQ_LL(setv_size(&o), 0);
    CHECK_EQ_LL(o.enc, ENC_HT);
    CHECK_EQ_LL(add_str(&o, "x"), 1);
    CHECK(has_str(&o, "x"));
    setv_free(&o);
}

static void test_intset_entries_limit(void) {
    set_limits(8, 128, 64);
    struct setv o = setv_create("1", 1, 1);
    for (int i = 0; i < 8; i++) add_ll(&o, i * 1000);
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    CHECK_EQ_LL(setv_size(&o), 8);
    /* A repeat does not count towards the limit. */
    CHECK_EQ_LL(add_ll(&o, 0), 0);
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    /* One integer past the limit goes straight to the hash table. */
    CHECK_EQ_LL(add_ll(&o, 99), 1);
    CHECK_EQ_LL(o.enc, ENC_HT);
    CHECK_EQ_LL(setv_size(&o), 9);
    for (int i = 0; i < 8; i++) CHECK(has_ll(&o, i * 1000));
    CHECK(has_ll(&o, 99));
    setv_free(&o);
    default_limits();
}

static void test_intset_to_listpack(void) {
    default_limits();
    struct setv o = setv_create("1", 1, 1);
    for (int i = 1; i <= 5; i++) add_ll(&o, i);
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    CHECK_EQ_LL(add_str(&o, "abc"), 1);
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    CHECK_EQ_LL(setv_size(&o), 6);
    for (int i = 1; i <= 5; i++) CHECK(has_ll(&o, i));
    CHECK(has_str(&o, "abc"));
    /* Integers added later stay in the listpack. */
    CHECK_EQ_LL(add_ll(&o, 6), 1);
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    CHECK(has_ll(&o, 6));
    setv_free(&o);
}

/* Members that are not canonical integers take a set out of the intset. */
static void test_non_integer_leaves_intset(void) {
    default_limits();
    const char *odd[] = {"abc", "1.5", "01", "-0", " 1", "1 ", "+1", "", "99999999999999999999", "0x10"};
    for (size_t j = 0; j < sizeof(odd) / sizeof(odd[0]); j++) {
        struct setv o = setv_create("1", 1, 1);
        add_str(&o, "1");
        add_str(&o, "2");
        CHECK_EQ_LL(o.enc, ENC_INTSET);
        CHECK_EQ_LL(add_str(&o, odd[j]), 1);
        if (o.enc != ENC_LISTPACK) fprintf(stderr, "member \"%s\" left encoding %d\n", odd[j], o.enc);
        CHECK_EQ_LL(o.enc, ENC_LISTPACK);
        CHECK(has_str(&o, odd[j]));
        CHECK(has_str(&o, "1"));
        CHECK_EQ_LL(setv_size(&o), 3);
        setv_free(&o);
    }
    /* The integer extremes are integers. */
    struct setv o = setv_create("1", 1, 1);
    add_str(&o, "9223372036854775807");
    add_str(&o, "-9223372036854775808");
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    setv_free(&o);
}

/* An intset receiving a string goes past the listpack when the result
 * would not fit it: too many members, the string too long, or an integer
 * member whose decimal form is too long. */
static void test_intset_to_hashtable_on_string(void) {
    set_limits(512, 4, 8);
    struct setv o = setv_create("1", 1, 1);
    for (int i = 0; i < 4; i++) add_ll(&o, i);
    CHECK_EQ_LL(add_str(&o, "x"), 1);
    CHECK_EQ_LL(o.enc, ENC_HT);
    CHECK_EQ_LL(setv_size(&o), 5);
    for (int i = 0; i < 4; i++) CHECK(has_ll(&o, i));
    setv_free(&o);

    o = setv_create("1", 1, 1);
    for (int i = 0; i < 3; i++) add_ll(&o, i);
    CHECK_EQ_LL(add_str(&o, "abcdefghi"), 1); /* 9 bytes > 8 */
    CHECK_EQ_LL(o.enc, ENC_HT);
    setv_free(&o);

    o = setv_create("1", 1, 1);
    add_ll(&o, 1);
    add_ll(&o, -123456789); /* 10 bytes in decimal */
    CHECK_EQ_LL(add_str(&o, "x"), 1);
    CHECK_EQ_LL(o.enc, ENC_HT);
    CHECK(has_ll(&o, -123456789));
    setv_free(&o);

    /* At the limits exactly, the listpack still takes it. */
    o = setv_create("1", 1, 1);
    for (int i = 0; i < 3; i++) add_ll(&o, i);
    add_ll(&o, 12345678); /* 8 bytes */
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    CHECK_EQ_LL(setv_size(&o), 4);
    set_limits(512, 5, 8);
    CHECK_EQ_LL(add_str(&o, "abcdefgh"), 1);
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    CHECK_EQ_LL(setv_size(&o), 5);
    setv_free(&o);
    default_limits();
}

static void test_listpack_limits(void) {
    set_limits(512, 4, 8);
    struct setv o = setv_create("a", 1, 1);
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    add_str(&o, "a");
    add_str(&o, "b");
    add_str(&o, "c");
    add_str(&o, "d");
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    CHECK_EQ_LL(add_str(&o, "d"), 0);
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    CHECK_EQ_LL(add_str(&o, "e"), 1);
    CHECK_EQ_LL(o.enc, ENC_HT);
    CHECK_EQ_LL(setv_size(&o), 5);
    CHECK(has_str(&o, "a") && has_str(&o, "e"));
    setv_free(&o);

    o = setv_create("a", 1, 1);
    CHECK_EQ_LL(add_str(&o, "abcdefgh"), 1); /* 8 bytes: fits */
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    CHECK_EQ_LL(add_str(&o, "abcdefghi"), 1); /* 9 bytes: does not */
    CHECK_EQ_LL(o.enc, ENC_HT);
    CHECK(has_str(&o, "abcdefgh") && has_str(&o, "abcdefghi"));
    setv_free(&o);

    /* Conversions never go back while a set lives. */
    o = setv_create("a", 1, 1);
    for (int i = 0; i < 5; i++) add_ll(&o, i);
    CHECK_EQ_LL(o.enc, ENC_HT);
    for (int i = 0; i < 4; i++) CHECK_EQ_LL(rem_ll(&o, i), 1);
    CHECK_EQ_LL(setv_size(&o), 1);
    CHECK_EQ_LL(o.enc, ENC_HT);
    setv_free(&o);
    default_limits();
}

static void test_create_and_hints(void) {
    set_limits(16, 8, 64);
    struct setv o = setv_create("5", 1, 16);
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    setv_free(&o);
    o = setv_create("5", 1, 17);
    CHECK_EQ_LL(o.enc, ENC_HT);
    setv_free(&o);
    o = setv_create("5", 1, 8);
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    setv_free(&o);
    o = setv_create("x", 1, 8);
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    setv_free(&o);
    o = setv_create("x", 1, 9);
    CHECK_EQ_LL(o.enc, ENC_HT);
    CHECK_EQ_LL(add_str(&o, "x"), 1);
    CHECK(has_str(&o, "x"));
    setv_free(&o);

    /* An existing set about to receive more members than its encoding
     * holds goes to the hash table first. */
    o = setv_create("1", 1, 1);
    add_str(&o, "1");
    setv_maybe_convert(&o, 16);
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    setv_maybe_convert(&o, 17);
    CHECK_EQ_LL(o.enc, ENC_HT);
    CHECK(has_str(&o, "1"));
    setv_free(&o);
    o = setv_create("a", 1, 1);
    add_str(&o, "a");
    setv_maybe_convert(&o, 8);
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    setv_maybe_convert(&o, 9);
    CHECK_EQ_LL(o.enc, ENC_HT);
    CHECK(has_str(&o, "a"));
    setv_free(&o);
    default_limits();
}

static void test_maybe_intset(void) {
    set_limits(4, 128, 64);
    struct setv o = setv_new(ENC_LISTPACK);
    add_str(&o, "3");
    add_str(&o, "-1");
    add_str(&o, "2");
    setv_maybe_intset(&o);
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    CHECK_EQ_LL(setv_size(&o), 3);
    CHECK(has_str(&o, "-1") && has_str(&o, "2") && has_str(&o, "3"));
    setv_free(&o);

    o = setv_new(ENC_HT);
    for (int i = 0; i < 4; i++) add_ll(&o, i);
    setv_maybe_intset(&o);
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    CHECK_EQ_LL(setv_size(&o), 4);
    setv_free(&o);

    /* Too many for an intset, or a string among them: unchanged. */
    o = setv_new(ENC_LISTPACK);
    for (int i = 0; i < 5; i++) add_ll(&o, i);
    setv_maybe_intset(&o);
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    setv_free(&o);
    o = setv_new(ENC_HT);
    add_str(&o, "1");
    add_str(&o, "y");
    setv_maybe_intset(&o);
    CHECK_EQ_LL(o.enc, ENC_HT);
    setv_free(&o);
    default_limits();
}

static void test_convert_keeps_members(void) {
    default_limits();
    struct setv o = setv_new(ENC_INTSET);
    for (int i = -50; i < 50; i++) add_ll(&o, i * 7);
    setv_convert(&o, ENC_LISTPACK);
    CHECK_EQ_LL(o.enc, ENC_LISTPACK);
    CHECK_EQ_LL(setv_size(&o), 100);
    for (int i = -50; i < 50; i++) CHECK(has_ll(&o, i * 7));
    setv_convert(&o, ENC_HT);
    CHECK_EQ_LL(o.enc, ENC_HT);
    CHECK_EQ_LL(setv_size(&o), 100);
    for (int i = -50; i < 50; i++) CHECK(has_ll(&o, i * 7));
    setv_convert(&o, ENC_INTSET);
    CHECK_EQ_LL(o.enc, ENC_INTSET);
    CHECK_EQ_LL(setv_size(&o), 100);
    for (int i = -50; i < 50; i++) CHECK(has_ll(&o, i * 7));
    setv_free(&o);
}

/* Every member exactly once, through the iterator, setv_foreach, and for
 * the hash table a full SSCAN-style cursor walk. */
struct seen {
    unsigned char *cnt;
    int n, bad;
};

static void seen_visit(const char *s, size_t len, void *ctx) {
    struct seen *x = ctx;
    int i = member_index(s, len);
    if (i < 0 || i >= x->n) x->bad++;
    else x->cnt[i]++;
}

static int seen_all_once(const struct seen *x) {
    if (x->bad) return 0;
    for (int i = 0; i < x->n; i++)
        if (x->cnt[i] != 1) return 0;
    return 1;
}

static void check_iteration(int enc, int n) {
    struct setv o = build_str(enc, n);
    CHECK_EQ_LL(o.enc, enc);
    CHECK_EQ_LL(setv_size(&o), n);
    struct seen x = {calloc((size_t)n, 1), n, 0};
    struct setv_iter it;
    struct lp_val v;
    setv_iter_init(&it, &o);
    while (setv_iter_next(&it, &v)) seen_visit(lp_val_ptr(&v), v.len, &x);
    CHECK(seen_all_once(&x));
    memset(x.cnt, 0, (size_t)n);
    setv_foreach(&o, seen_visit, &x);
    CHECK(seen_all_once(&x));
    if (enc == ENC_HT) {
        memset(x.cnt, 0, (size_t)n);
        uint64_t cursor = 0;
        do cursor = setv_scan(&o, cursor, seen_visit, &x);
        while (cursor);
        CHECK(seen_all_once(&x));
    }
    free(x.cnt);
    setv_free(&o);
}

static void test_iteration(void) {
    default_limits();
    check_iteration(ENC_LISTPACK, 100);
    check_iteration(ENC_HT, 1);
    check_iteration(ENC_HT, 777);
    check_iteration(ENC_HT, 20000);

    /* Intsets, which have no "m" members: ascending and complete. */
    struct setv o = setv_new(ENC_INTSET);
    for (int i = 0; i < 300; i++) add_ll(&o, (i * 7919) % 300 - 150);
    CHECK_EQ_LL(setv_size(&o), 300);
    struct setv_iter it;
    struct lp_val v;
    long long prev = -1000, n = 0;
    int ordered = 1;
    setv_iter_init(&it, &o);
    while (setv_iter_next(&it, &v)) {
        CHECK(v.is_int);
        if (v.v <= prev) ordered = 0;
        prev = v.v;
        n++;
    }
    CHECK(ordered);
    CHECK_EQ_LL(n, 300);
    setv_free(&o);

    /* Through an entry, as other families read a set (setv_of). */
    struct setv h = build_str(ENC_HT, 50);
    struct kv *e = setv_entry("k", 1, &h);
    struct setv r = setv_of(e);
    CHECK_EQ_LL(setv_size(&r), 50);
    CHECK(has_str(&r, "m49"));
    CHECK(!has_str(&r, "m50"));
    struct seen x = {calloc(50, 1), 50, 0};
    setv_foreach(&r, seen_visit, &x);
    CHECK(seen_all_once(&x));
    free(x.cnt);
    kv_free(e);
}

static void check_random(struct setv *o, int n, int draws, int need_all) {
    unsigned char *hit = calloc((size_t)n, 1);
    int bad = 0;
    for (int d = 0; d < draws; d++) {
        struct lp_val v;
        setv_random(o, &v);
        if (!setv_has(o, lp_val_ptr(&v), v.len)) bad++;
        long long iv;
        int i = o->enc == ENC_INTSET ? (hk_str2ll(lp_val_ptr(&v), v.len, &iv) ? (int)iv : -1)
                                     : member_index(lp_val_ptr(&v), v.len);
        if (i >= 0 && i < n) hit[i] = 1;
        else bad++;
    }
    CHECK_EQ_LL(bad, 0);
    if (need_all) {
        int missed = 0;
        for (int i = 0; i < n; i++) missed += !hit[i];
        CHECK_EQ_LL(missed, 0);
    }
    free(hit);
}

static void test_random(void) {
    default_limits();
    struct setv o = setv_new(ENC_INTSET);
    for (int i = 0; i < 10; i++) add_ll(&o, i);
    check_random(&o, 10, 2000, 1);
    setv_free(&o);
    o = build_str(ENC_LISTPACK, 10);
    check_random(&o, 10, 2000, 1);
    setv_free(&o);
    o = build_str(ENC_HT, 10);
    check_random(&o, 10, 2000, 1);
    setv_free(&o);
    o = build_str(ENC_HT, 5000);
    check_random(&o, 5000, 5000, 0);
    /* Emptying by random picks, removing through the picked bytes
     * themselves (a hash-table member's own storage). */
    int removed = 0;
    while (setv_size(&o)) {
        struct lp_val v;
        setv_random(&o, &v);
        removed += setv_remove(&o, v.s, v.len, NULL);
    }
    CHECK_EQ_LL(removed, 5000);
    setv_free(&o);
}

static void test_has_add_val_across_encodings(void) {
    default_limits();
    struct setv a = setv_new(ENC_INTSET), b = setv_new(ENC_LISTPACK), h = setv_new(ENC_HT);
    for (int i = 0; i < 20; i++) add_ll(&a, i);
    for (int i = 10; i < 30; i++) add_ll(&b, i);
    add_str(&b, "str");
    struct setv_iter it;
    struct lp_val v;
    int common = 0;
    setv_iter_init(&it, &a);
    while (setv_iter_next(&it, &v)) {
        common += setv_has_val(&b, &v);
        setv_add_val(&h, &v);
    }
    CHECK_EQ_LL(common, 10);
    setv_iter_init(&it, &b);
    while (setv_iter_next(&it, &v)) setv_add_val(&h, &v);
    CHECK_EQ_LL(setv_size(&h), 31);
    CHECK(has_str(&h, "str") && has_ll(&h, 0) && has_ll(&h, 29));
    /* A string member probed against an intset. */
    v.is_int = 0;
    v.s = "5";
    v.len = 1;
    CHECK(setv_has_val(&a, &v));
    v.s = "05";
    v.len = 2;
    CHECK(!setv_has_val(&a, &v));
    setv_free(&a);
    setv_free(&b);
    setv_free(&h);
}

/* ---- lifecycle through the type table ---- */

static struct kv *entry_of(struct setv *o) { return setv_entry("key", 3, o); }

static void check_dup(struct setv src, int n_expected) {
    struct kv *e = entry_of(&src);
    struct kv *d = type_table[OBJ_SET]->dup(e, "copy", 4, -1);
    CHECK(d != e);
    CHECK_EQ_LL(kv_type(d), OBJ_SET);
    CHECK_EQ_LL(kv_enc(d), kv_enc(e));
    CHECK(kv_ptr(d) != kv_ptr(e));
    CHECK_MEM(kv_key(d), kv_keylen(d), "copy");
    struct setv a = setv_of(e), b = setv_of(d);
    CHECK_EQ_LL(setv_size(&b), n_expected);
    struct setv_iter it;
    struct lp_val v;
    int missing = 0;
    setv_iter_init(&it, &a);
    while (setv_iter_next(&it, &v)) missing += !setv_has_val(&b, &v);
    CHECK_EQ_LL(missing, 0);
    unsigned char da[20] = {0}, db[20] = {0};
    set_type_ops.digest(e, da);
    set_type_ops.digest(d, db);
    CHECK(memcmp(da, db, 20) == 0);
    if (n_expected == 0) {
        kv_free(d);
        kv_free(e);
        return;
    }
    /* Independent: changing the copy leaves the original alone. */
    CHECK_EQ_LL(add_str(&b, "zz-new"), 1);
    setv_iter_init(&it, &a);
    CHECK(setv_iter_next(&it, &v));
    char first[64];
    size_t flen = v.len < sizeof(first) ? v.len : sizeof(first);
    memcpy(first, lp_val_ptr(&v), flen);
    CHECK_EQ_LL(setv_remove(&b, first, flen, NULL), 1);
    setv_store(d, &b);
    a = setv_of(e);
    CHECK_EQ_LL(setv_size(&a), n_expected);
    CHECK(!has_str(&a, "zz-new"));
    CHECK(setv_has(&a, first, flen));
    kv_free(d);
    kv_free(e);
}

static void test_dup(void) {
    default_limits();
    struct setv o = setv_new(ENC_INTSET);
    for (int i = 0; i < 40; i++) add_ll(&o, i * 3);
    check_dup(o, 40);
    check_dup(build_str(ENC_LISTPACK, 40), 40);
    check_dup(build_str(ENC_HT, 4000), 4000);
    check_dup(setv_new(ENC_HT), 0);
}

static void test_usage(void) {
    default_limits();
    struct setv o = setv_new(ENC_INTSET);
    add_ll(&o, 1);
    struct kv *e = entry_of(&o);
    CHECK(set_type_ops.usage(e, 0) > 0);
    /* Freeing costs one allocation per member of a table, else one. */
    CHECK_EQ_LL(kv_free_effort(e), 1);
    kv_free(e);
    o = build_str(ENC_LISTPACK, 10);
    e = entry_of(&o);
    CHECK(set_type_ops.usage(e, 0) > 0);
    CHECK_EQ_LL(kv_free_effort(e), 1);
    kv_free(e);
    o = build_str(ENC_HT, 1000);
    e = entry_of(&o);
    size_t all = set_type_ops.usage(e, 0), sampled = set_type_ops.usage(e, 5);
    CHECK(all > 1000);
    CHECK(sampled > 1000);
    CHECK_EQ_LL(kv_free_effort(e), 1000);
    kv_free(e);
    o = setv_new(ENC_HT);
    e = entry_of(&o);
    CHECK(set_type_ops.usage(e, 0) > 0);
    CHECK_EQ_LL(kv_free_effort(e), 0);
    kv_free(e);
}

/* The digest of o through a temporary entry; o stays the caller's. */
static void digest_of(struct setv *o, unsigned char out[20]) {
    struct kv *e = entry_of(o);
    memset(out, 0, 20);
    set_type_ops.digest(e, out);
    kv_free_shell(e);
}

static void test_digest(void) {
    default_limits();
    /* Exactly the xor of SHA1 of every member's bytes, integers in decimal. */
    unsigned char want[20] = {0}, got[20];
    const char *ints[] = {"-5", "0", "17", "100000"};
    for (int i = 0; i < 4; i++) dg_xor(want, ints[i], strlen(ints[i]));
    struct setv is = setv_new(ENC_INTSET);
    for (int i = 3; i >= 0; i--) add_str(&is, ints[i]);
    digest_of(&is, got);
    CHECK(memcmp(want, got, 20) == 0);
    /* The same members in the other encodings. */
    struct setv lp = setv_new(ENC_LISTPACK), ht = setv_new(ENC_HT);
    for (int i = 0; i < 4; i++) {
        add_str(&lp, ints[i]);
        add_str(&ht, ints[3 - i]);
    }
    CHECK_EQ_LL(lp.enc, ENC_LISTPACK);
    digest_of(&lp, got);
    CHECK(memcmp(want, got, 20) == 0);
    digest_of(&ht, got);
    CHECK(memcmp(want, got, 20) == 0);
    setv_convert(&is, ENC_HT);
    digest_of(&is, got);
    CHECK(memcmp(want, got, 20) == 0);
    setv_free(&is);
    setv_free(&lp);
    setv_free(&ht);

    /* Strings: order of insertion and encoding do not matter. */
    struct setv a = build_str(ENC_LISTPACK, 60), b = setv_new(ENC_LISTPACK);
    char buf[32];
    for (int i = 59; i >= 0; i--) setv_add(&b, buf, member(buf, i), NULL);
    unsigned char da[20], db[20], dc[20];
    digest_of(&a, da);
    digest_of(&b, db);
    CHECK(memcmp(da, db, 20) == 0);
    setv_convert(&b, ENC_HT);
    digest_of(&b, dc);
    CHECK(memcmp(da, dc, 20) == 0);
    /* A different set digests differently; the empty set is all zeros. */
    rem_str(&b, "m7");
    digest_of(&b, dc);
    CHECK(memcmp(da, dc, 20) != 0);
    struct setv empty = setv_new(ENC_HT);
    unsigned char zero[20] = {0};
    digest_of(&empty, dc);
    CHECK(memcmp(zero, dc, 20) == 0);
    setv_free(&a);
    setv_free(&b);
    setv_free(&empty);
}

/* pre_change is called exactly when setv_add adds or setv_remove
 * removes, once per call, while the set still has its old size and
 * membership. */
struct set_probe {
    struct pre_change pc;
    const struct setv *o;
    const char *m;
    uint64_t size;
    int had, calls, unchanged;
};

static void set_probe_fired(struct pre_change *pc) {
    struct set_probe *p = (struct set_probe *)pc;
    p->calls++;
    p->unchanged = setv_size(p->o) == p->size && has_str(p->o, p->m) == p->had;
}

static int probed(struct setv *o, const char *m, int add, int *calls) {
    struct set_probe p = {{set_probe_fired, 0}, o, m, setv_size(o), has_str(o, m), 0, 0};
    int r = add ? setv_add(o, m, strlen(m), &p.pc) : setv_remove(o, m, strlen(m), &p.pc);
    *calls = p.calls;
    return r && p.unchanged;
}

static void test_pre_change(void) {
    default_limits();
    /* Each encoding, and the conversions an add can cause. */
    static const struct {
        int enc;
        const char *seed[3], *add_new, *add_old;
    } cases[] = {
        {ENC_INTSET, {"1", "2", "3"}, "4", "2"},
        {ENC_INTSET, {"1", "2", "3"}, "abc", "3"}, /* intset -> listpack */
        {ENC_LISTPACK, {"a", "b", "c"}, "d", "b"},
        {ENC_HT, {"a", "b", "c"}, "d", "c"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct setv o = setv_new(cases[i].enc);
        for (int j = 0; j < 3; j++) add_str(&o, cases[i].seed[j]);
        int calls;
        CHECK(probed(&o, cases[i].add_new, 1, &calls));
        CHECK_EQ_LL(calls, 1);
        CHECK(!probed(&o, cases[i].add_old, 1, &calls));
        CHECK_EQ_LL(calls, 0);
        CHECK(probed(&o, cases[i].add_old, 0, &calls));
        CHECK_EQ_LL(calls, 1);
        CHECK(!probed(&o, cases[i].add_old, 0, &calls));
        CHECK_EQ_LL(calls, 0);
        CHECK(!probed(&o, "999999", 0, &calls));
        CHECK_EQ_LL(calls, 0);
        CHECK_EQ_LL(setv_size(&o), 3);
        setv_free(&o);
    }
    /* One report for many changes: a fired pre_change is not called again. */
    struct setv o = setv_new(ENC_LISTPACK);
    struct set_probe p = {{set_probe_fired, 0}, &o, "x", 0, 0, 0, 0};
    CHECK_EQ_LL(setv_add(&o, "x", 1, &p.pc) + setv_add(&o, "y", 1, &p.pc) + setv_remove(&o, "x", 1, &p.pc), 3);
    CHECK_EQ_LL(p.calls, 1);
    setv_free(&o);
}

int main(void) {
    TEST_RUN(test_pre_change);
    TEST_RUN(test_intset);
    TEST_RUN(test_listpack);
    TEST_RUN(test_hashtable);
    TEST_RUN(test_intset_entries_limit);
    TEST_RUN(test_intset_to_listpack);
    TEST_RUN(test_non_integer_leaves_intset);
    TEST_RUN(test_intset_to_hashtable_on_string);
    TEST_RUN(test_listpack_limits);
    TEST_RUN(test_create_and_hints);
    TEST_RUN(test_maybe_intset);
    TEST_RUN(test_convert_keeps_members);
    TEST_RUN(test_iteration);
    TEST_RUN(test_random);
    TEST_RUN(test_has_add_val_across_encodings);
    TEST_RUN(test_dup);
    TEST_RUN(test_usage);
    TEST_RUN(test_digest);
    return TEST_REPORT();
}
