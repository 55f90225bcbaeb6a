/* test_listpack.c - unit tests of the packed array (src/core/listpack.c):
 * integer and string encodings at every size boundary, forward and
 * backward walks, seek with negative indexes, insert/replace/delete in the
 * middle, range deletes, find with skip, dup, and a randomized comparison
 * against a plain array model. */
#include "core/alloc.h"
#include "core/listpack.h"
#include "core/util.h"
#include "test.h"

#include <stdlib.h>

static int val_is(const lpack *lp, size_t pos, const char *s) {
    struct lp_val v;
    if (pos == LP_NONE) return 0;
    lp_get(lp, pos, &v);
    return v.len == strlen(s) && memcmp(v.s, s, v.len) == 0;
}

/* Check that the forward and backward walks both see exactly `n` items. */
static void check_walks(const lpack *lp, const char **items, int n) {
    CHECK_EQ_LL(lp_count(lp), n);
    size_t p = lp_first(lp);
    for (int i = 0; i < n; i++) {
        CHECK(val_is(lp, p, items[i]));
        p = lp_next(lp, p);
    }
    CHECK(p == LP_NONE);
    p = lp_last(lp);
    for (int i = n - 1; i >= 0; i--) {
        CHECK(val_is(lp, p, items[i]));
        p = lp_prev(lp, p);
    }
    CHECK(p == LP_NONE);
}

static void test_empty(void) {
    lpack *lp = lp_new();
    CHECK_EQ_LL(lp_count(lp), 0);
    CHECK(lp_first(lp) == LP_NONE);
    CHECK(lp_last(lp) == LP_NONE);
    CHECK(lp_seek(lp, 0) == LP_NONE);
    CHECK(lp_seek(lp, -1) == LP_NONE);
    CHECK(lp_find(lp, lp_first(lp), "a", 1, 0) == LP_NONE);
    lp = lp_delete_range(lp, 0, 5);
    CHECK_EQ_LL(lp_count(lp), 0);
    lp_free(lp);
}

static void test_integers(void) {
    static const long long vals[] = {0,       1,        127,      128,       -1,         -2048,     2047,
                                     2048,    -2049,    32767,    -32768,    32768,      -32769,    8388607,
                                     -8388608, 8388608, -8388609, 2147483647, -2147483648LL, 2147483648LL,
                                     -2147483649LL, 9223372036854775807LL, -9223372036854775807LL - 1};
    int n = (int)(sizeof(vals) / sizeof(vals[0]));
    lpack *lp = lp_new();
    lpack *lp2 = lp_new();
    char buf[32];
    for (int i = 0; i < n; i++) {
        int len = hk_ll2str(buf, vals[i]);
        lp = lp_append(lp, buf, (size_t)len);
        lp2 = lp_append_int(lp2, vals[i]);
    }
    CHECK_EQ_LL(lp_count(lp), n);
    CHECK_EQ_LL(lp_bytes(lp), lp_bytes(lp2));
    CHECK(memcmp(lp, lp2, lp_bytes(lp)) == 0);
    size_t p = lp_first(lp);
    for (int i = 0; i < n; i++) {
        struct lp_val v;
        lp_get(lp, p, &v);
        CHECK(v.is_int);
        CHECK_EQ_LL(v.v, vals[i]);
        int len = hk_ll2str(buf, vals[i]);
        CHECK_MEM(v.s, v.len, buf);
        CHECK(lp_eq(lp, p, buf, (size_t)len));
        p = lp_next(lp, p);
    }
    CHECK(p == LP_NONE);
    /* Backward walk too. */
    p = lp_last(lp);
    for (int i = n - 1; i >= 0; i--) {
        struct lp_val v;
        lp_get(lp, p, &v);
        CHECK_EQ_LL(v.v, vals[i]);
        p = lp_prev(lp, p);
    }
    CHECK(p == LP_NONE);
    lp_free(lp);
    lp_free(lp2);
}

static void test_small_int_compact(void) {
    lpack *lp = lp_new();
    size_t base = lp_bytes(lp);
    lp = lp_append(lp, "5", 1);
    CHECK_EQ_LL(lp_bytes(lp) - base, 2); /* one byte value + one byte back length */
    lp = lp_append(lp, "-100", 4);
    CHECK_EQ_LL(lp_bytes(lp) - base, 5);
    lp = lp_append(lp, "ab", 2);
    CHECK_EQ_LL(lp_bytes(lp) - base, 9);
    lp_free(lp);
}

static void test_non_canonical_strings(void) {
    /* None of these is a canonical integer: they stay strings, byte for byte. */
    const char *items[] = {"01", "-0", "+1", " 1", "1 ", "", "9223372036854775808", "abc", "1.5", "-"};
    int n = (int)(sizeof(items) / sizeof(items[0]));
    lpack *lp = lp_new();
    for (int i = 0; i < n; i++) lp = lp_append(lp, items[i], strlen(items[i]));
    check_walks(lp, items, n);
    size_t p = lp_first(lp);
    for (int i = 0; i < n; i++) {
        struct lp_val v;
        lp_get(lp, p, &v);
        CHECK(!v.is_int);
        p = lp_next(lp, p);
    }
    /* "01" must not equal 1 and vice versa. */
    lp = lp_append(lp, "1", 1);
    CHECK(!lp_eq(lp, lp_first(lp), "1", 1));
    CHECK(!lp_eq(lp, lp_last(lp), "01", 2));
    CHECK(lp_eq(lp, lp_last(lp), "1", 1));
    CHECK(lp_find(lp, lp_first(lp), "1", 1, 0) == lp_last(lp));
    lp_free(lp);
}

static void test_string_sizes(void) {
    static const size_t sizes[] = {0, 1, 63, 64, 127, 128, 8191, 8192, 16383, 16384, 70000, 2097152 + 3};
    int n = (int)(sizeof(sizes) / sizeof(sizes[0]));
    lpack *lp = lp_new();
    char *buf = malloc(sizes[n - 1] + 1);
    for (int i = 0; i < n; i++) {
        memset(buf, 'a' + i, sizes[i]);
        lp = lp_append(lp, buf, sizes[i]);
    }
    CHECK_EQ_LL(lp_count(lp), n);
    size_t p = lp_first(lp);
    for (int i = 0; i < n; i++) {
        struct lp_val v;
        lp_get(lp, p, &v);
        CHECK(!v.is_int);
        CHECK_EQ_LL(v.len, sizes[i]);
        int ok = 1;
        for (size_t j = 0; j < v.len; j++)
            if (v.s[j] != 'a' + i) ok = 0;
        CHECK(ok);
        p = lp_next(lp, p);
    }
    CHECK(p == LP_NONE);
    p = lp_last(lp);
    for (int i = n - 1; i >= 0; i--) {
        struct lp_val v;
        lp_get(lp, p, &v);
        CHECK_EQ_LL(v.len, sizes[i]);
        p = lp_prev(lp, p);
    }
    CHECK(p == LP_NONE);
    CHECK(lp_seek(lp, -1) == lp_last(lp));
    CHECK(lp_seek(lp, -n) == lp_first(lp));
    CHECK(lp_seek(lp, n) == LP_NONE);
    CHECK(lp_seek(lp, -n - 1) == LP_NONE);
    free(buf);
    lp_free(lp);
}

/* One 512 MB element: the largest value Redis accepts. */
static void test_huge_element(void) {
    size_t len = 512UL * 1024 * 1024;
    char *buf = malloc(len);
    if (!buf) return;
    memset(buf, 'z', len);
    buf[len - 1] = 'q';
    lpack *lp = lp_new();
    lp = lp_append(lp, "x", 1);
    lp = lp_append(lp, buf, len);
    lp = lp_append(lp, "7", 1);
    free(buf);
    CHECK_EQ_LL(lp_count(lp), 3);
    size_t p = lp_seek(lp, 1);
    struct lp_val v;
    lp_get(lp, p, &v);
    CHECK_EQ_LL(v.len, len);
    CHECK(v.s[0] == 'z' && v.s[len - 1] == 'q');
    CHECK(lp_prev(lp, lp_last(lp)) == p);
    CHECK(lp_next(lp, p) == lp_last(lp));
    CHECK(val_is(lp, lp_prev(lp, p), "x"));
    lp = lp_delete(lp, p, &p);
    CHECK(val_is(lp, p, "7"));
    CHECK_EQ_LL(lp_count(lp), 2);
    lp_free(lp);
}

static void test_insert_replace_delete(void) {
    lpack *lp = lp_new();
    size_t np;
    lp = lp_append(lp, "b", 1);
    lp = lp_prepend(lp, "a", 1);
    lp = lp_append(lp, "d", 1);
    lp = lp_insert(lp, lp_seek(lp, 2), "c", 1, &np);
    CHECK(np == lp_seek(lp, 2));
    const char *w1[] = {"a", "b", "c", "d"};
    check_walks(lp, w1, 4);

    lp = lp_replace(lp, lp_seek(lp, 1), "a much longer string than before", 32, &np);
    CHECK(np == lp_seek(lp, 1));
    lp = lp_replace(lp, lp_seek(lp, 2), "12345", 5, &np);
    struct lp_val v;
    lp_get(lp, np, &v);
    CHECK(v.is_int && v.v == 12345);
    const char *w2[] = {"a", "a much longer string than before", "12345", "d"};
    check_walks(lp, w2, 4);
    lp = lp_replace(lp, lp_seek(lp, 1), "", 0, &np);
    const char *w3[] = {"a", "", "12345", "d"};
    check_walks(lp, w3, 4);

    size_t next;
    lp = lp_delete(lp, lp_seek(lp, 1), &next);
    CHECK(val_is(lp, next, "12345"));
    lp = lp_delete(lp, lp_last(lp), &next);
    CHECK(next == LP_NONE);
    const char *w4[] = {"a", "12345"};
    check_walks(lp, w4, 2);
    lp = lp_delete(lp, lp_first(lp), &next);
    lp = lp_delete(lp, next, &next);
    CHECK(next == LP_NONE);
    CHECK_EQ_LL(lp_count(lp), 0);
    lpack *fresh = lp_new();
    CHECK_EQ_LL(lp_bytes(lp), lp_bytes(fresh)); /* header only */
    lp_free(fresh);
    lp_free(lp);
}

static void test_delete_range(void) {
    lpack *lp = lp_new();
    char buf[32];
    for (int i = 0; i < 10; i++) lp = lp_append(lp, buf, (size_t)hk_ll2str(buf, i * 1000));
    lp = lp_delete_range(lp, 2, 3); /* removes 2000 3000 4000 */
    const char *w1[] = {"0", "1000", "5000", "6000", "7000", "8000", "9000"};
    check_walks(lp, w1, 7);
    lp = lp_delete_range(lp, -2, 100); /* removes the last two */
    const char *w2[] = {"0", "1000", "5000", "6000", "7000"};
    check_walks(lp, w2, 5);
    lp = lp_delete_range(lp, 7, 1); /* out of range: nothing */
    check_walks(lp, w2, 5);
    lp = lp_delete_range(lp, 0, 5);
    CHECK_EQ_LL(lp_count(lp), 0);
    CHECK(lp_first(lp) == LP_NONE);
    lp_free(lp);
}

static void test_find_skip(void) {
    lpack *lp = lp_new();
    const char *kv[] = {"k1", "v1", "v1", "k1", "10", "x", "010", "y"};
    for (int i = 0; i < 8; i++) lp = lp_append(lp, kv[i], strlen(kv[i]));
    CHECK(lp_find(lp, lp_first(lp), "v1", 2, 0) == lp_seek(lp, 1));
    CHECK(lp_find(lp, lp_first(lp), "v1", 2, 1) == lp_seek(lp, 2));
    CHECK(lp_find(lp, lp_first(lp), "k1", 2, 1) == lp_seek(lp, 0));
    CHECK(lp_find(lp, lp_seek(lp, 1), "k1", 2, 1) == lp_seek(lp, 3));
    CHECK(lp_find(lp, lp_first(lp), "x", 1, 1) == LP_NONE);
    CHECK(lp_find(lp, lp_first(lp), "10", 2, 1) == lp_seek(lp, 4));
    CHECK(lp_find(lp, lp_first(lp), "010", 3, 1) == lp_seek(lp, 6));
    CHECK(lp_find(lp, lp_first(lp), "nope", 4, 0) == LP_NONE);
    CHECK(lp_find(lp, LP_NONE, "k1", 2, 0) == LP_NONE);
    lpack *d = lp_dup(lp);
    CHECK(d != lp && lp_bytes(d) == lp_bytes(lp) && memcmp(d, lp, lp_bytes(lp)) == 0);
    lp_free(d);
    lp_free(lp);
}

/* Random operations checked against an array of strings. */
static void test_random_model(void) {
    enum { MAXN = 400 };
    static char model[MAXN][300];
    static size_t mlen[MAXN];
    int n = 0;
    lpack *lp = lp_new();
    srand(12345);
    for (int step = 0; step < 20000; step++) {
        int op = rand() % 10;
        char s[300];
        size_t len;
        int kind = rand() % 4;
        if (kind == 0)
            len = (size_t)hk_ll2str(s, (long long)rand() - RAND_MAX / 2);
        else if (kind == 1)
            len = (size_t)hk_ll2str(s, rand() % 300 - 150);
        else if (kind == 2)
            len = (size_t)hk_ll2str(s, (long long)(((unsigned long long)rand() << 33) ^ (unsigned long long)rand()));
        else {
            len = (size_t)(rand() % 300);
            for (size_t i = 0; i < len; i++) s[i] = (char)('a' + rand() % 26);
        }
        if ((op < 5 && n < MAXN) || n == 0) {
            int at = rand() % (n + 1);
            size_t pos = at == n ? LP_NONE : lp_seek(lp, at);
            lp = lp_insert(lp, pos, s, len, NULL);
            memmove(&model[at + 1], &model[at], (size_t)(n - at) * sizeof(model[0]));
            memmove(&mlen[at + 1], &mlen[at], (size_t)(n - at) * sizeof(mlen[0]));
            memcpy(model[at], s, len);
            mlen[at] = len;
            n++;
        } else if (op < 7) {
            int at = rand() % n;
            lp = lp_replace(lp, lp_seek(lp, at - (rand() % 2 ? n : 0)), s, len, NULL);
            memcpy(model[at], s, len);
            mlen[at] = len;
        } else if (op < 9) {
            int at = rand() % n;
            lp = lp_delete(lp, lp_seek(lp, at), NULL);
            memmove(&model[at], &model[at + 1], (size_t)(n - at - 1) * sizeof(model[0]));
            memmove(&mlen[at], &mlen[at + 1], (size_t)(n - at - 1) * sizeof(mlen[0]));
            n--;
        } else {
            int at = rand() % n;
            int cnt = rand() % 4;
            lp = lp_delete_range(lp, at, (unsigned long)cnt);
            if (cnt > n - at) cnt = n - at;
            memmove(&model[at], &model[at + cnt], (size_t)(n - at - cnt) * sizeof(model[0]));
            memmove(&mlen[at], &mlen[at + cnt], (size_t)(n - at - cnt) * sizeof(mlen[0]));
            n -= cnt;
        }
        if (step % 97 == 0 || step == 19999) {
            CHECK_EQ_LL(lp_count(lp), n);
            size_t p = lp_first(lp);
            int bad = 0;
            for (int i = 0; i < n; i++) {
                struct lp_val v;
                lp_get(lp, p, &v);
                if (v.len != mlen[i] || memcmp(v.s, model[i], v.len) != 0) bad = 1;
                if (!lp_eq(lp, p, model[i], mlen[i])) bad = 1;
                p = lp_next(lp, p);
            }
            if (p != LP_NONE) bad = 1;
            p = lp_last(lp);
            for (int i = n - 1; i >= 0; i--) {
                if (!lp_eq(lp, p, model[i], mlen[i])) bad = 1;
                p = lp_prev(lp, p);
            }
            if (p != LP_NONE) bad = 1;
            CHECK(!bad);
            if (bad) break;
        }
    }
    lp_free(lp);
}

int main(void) {
    TEST_RUN(test_empty);
    TEST_RUN(test_integers);
    TEST_RUN(test_small_int_compact);
    TEST_RUN(test_non_canonical_strings);
    TEST_RUN(test_string_sizes);
    TEST_RUN(test_huge_element);
    TEST_RUN(test_insert_replace_delete);
    TEST_RUN(test_delete_range);
    TEST_RUN(test_find_skip);
    TEST_RUN(test_random_model);
    return TEST_REPORT();
}
