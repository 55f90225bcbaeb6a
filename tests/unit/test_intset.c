/* test_intset.c - unit tests of the sorted packed integer set
 * (src/core/intset.c): ordering, duplicates, width upgrades at the 16/32/64
 * bit boundaries (from both ends), removal, and a randomized comparison with
 * a plain sorted array. */
#include "core/alloc.h"
#include "core/intset.h"
#include "test.h"

#include <stdlib.h>

static int sorted_ok(const struct intset *s) {
    for (uint32_t i = 1; i < intset_len(s); i++)
        if (intset_get(s, i - 1) >= intset_get(s, i)) return 0;
    return 1;
}

static void test_basic(void) {
    struct intset *s = intset_new();
    int added, removed;
    CHECK_EQ_LL(intset_len(s), 0);
    s = intset_add(s, 5, &added);
    CHECK(added);
    s = intset_add(s, -3, &added);
    s = intset_add(s, 10, &added);
    s = intset_add(s, 5, &added);
    CHECK(!added);
    CHECK_EQ_LL(intset_len(s), 3);
    CHECK_EQ_LL(intset_get(s, 0), -3);
    CHECK_EQ_LL(intset_get(s, 1), 5);
    CHECK_EQ_LL(intset_get(s, 2), 10);
    CHECK_EQ_LL(s->width, 2);
    CHECK_EQ_LL(intset_bytes(s), 8 + 6);
    uint32_t pos;
    CHECK(intset_find(s, 10, &pos));
    CHECK_EQ_LL(pos, 2);
    CHECK(!intset_find(s, 7, &pos));
    CHECK_EQ_LL(pos, 2);
    CHECK(!intset_find(s, 1LL << 40, NULL));
    s = intset_remove(s, 5, &removed);
    CHECK(removed);
    s = intset_remove(s, 5, &removed);
    CHECK(!removed);
    CHECK_EQ_LL(intset_len(s), 2);
    CHECK_EQ_LL(intset_min(s), -3);
    CHECK_EQ_LL(intset_max(s), 10);
    intset_free(s);
}

static void test_upgrades(void) {
    struct intset *s = intset_new();
    int added;
    s = intset_add(s, 1, &added);
    s = intset_add(s, INT16_MAX, &added);
    s = intset_add(s, INT16_MIN, &added);
    CHECK_EQ_LL(s->width, 2);
    s = intset_add(s, INT16_MAX + 1, &added);
    CHECK(added);
    CHECK_EQ_LL(s->width, 4);
    CHECK_EQ_LL(intset_get(s, 3), INT16_MAX + 1);
    s = intset_add(s, (int64_t)INT32_MIN - 1, &added);
    CHECK_EQ_LL(s->width, 8);
    CHECK_EQ_LL(intset_get(s, 0), (int64_t)INT32_MIN - 1);
    CHECK_EQ_LL(intset_get(s, 1), INT16_MIN);
    CHECK_EQ_LL(intset_get(s, 2), 1);
    CHECK_EQ_LL(intset_get(s, 3), INT16_MAX);
    CHECK_EQ_LL(intset_get(s, 4), INT16_MAX + 1);
    s = intset_add(s, INT64_MAX, &added);
    s = intset_add(s, INT64_MIN, &added);
    CHECK_EQ_LL(intset_len(s), 7);
    CHECK_EQ_LL(intset_min(s), INT64_MIN);
    CHECK_EQ_LL(intset_max(s), INT64_MAX);
    CHECK(sorted_ok(s));
    CHECK(intset_find(s, INT16_MIN, NULL));
    CHECK(intset_find(s, 1, NULL));
    struct intset *d = intset_dup(s);
    CHECK_EQ_LL(intset_len(d), 7);
    CHECK_EQ_LL(intset_get(d, 6), INT64_MAX);
    intset_free(d);
    /* Removing the wide members does not narrow the set. */
    int removed;
    s = intset_remove(s, INT64_MAX, &removed);
    s = intset_remove(s, INT64_MIN, &removed);
    CHECK_EQ_LL(s->width, 8);
    intset_free(s);

    /* Upgrade straight from 16 to 64 bits with a negative value. */
    s = intset_new();
    s = intset_add(s, 3, &added);
    s = intset_add(s, 2, &added);
    s = intset_add(s, -(1LL << 40), &added);
    CHECK_EQ_LL(s->width, 8);
    CHECK_EQ_LL(intset_get(s, 0), -(1LL << 40));
    CHECK_EQ_LL(intset_get(s, 1), 2);
    CHECK_EQ_LL(intset_get(s, 2), 3);
    intset_free(s);
}

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static void test_random(void) {
    struct intset *s = intset_new();
    long long ref[2000];
    size_t n = 0;
    srand(42);
    for (int i = 0; i < 6000; i++) {
        int shift = rand() % 3;
        long long v = (long long)(rand() % 1000) - 500;
        if (shift == 1) v *= 100000;
        if (shift == 2) v *= 10000000000LL;
        int present = 0;
        for (size_t j = 0; j < n; j++)
            if (ref[j] == v) present = 1;
        int flag;
        if (rand() % 3 == 0) {
            s = intset_remove(s, v, &flag);
            CHECK_EQ_LL(flag, present);
            if (present) {
                size_t j = 0;
                while (ref[j] != v) j++;
                ref[j] = ref[--n];
            }
        } else if (n < 2000) {
            s = intset_add(s, v, &flag);
            CHECK_EQ_LL(flag, !present);
            if (!present) ref[n++] = v;
        }
    }
    qsort(ref, n, sizeof(ref[0]), cmp_ll);
    CHECK_EQ_LL(intset_len(s), n);
    for (size_t j = 0; j < n && j < intset_len(s); j++) CHECK_EQ_LL(intset_get(s, (uint32_t)j), ref[j]);
    CHECK(sorted_ok(s));
    while (intset_len(s)) s = intset_remove_at(s, 0);
    intset_free(s);
}

int main(void) {
    TEST_RUN(test_basic);
    TEST_RUN(test_upgrades);
    TEST_RUN(test_random);
    return TEST_REPORT();
}
