/* test_skiplist.c - unit tests of the sorted-set skiplist
 * (src/core/skiplist.c): ordering by score then member, ranks and
 * rank-to-node through the spans, score updates that move or keep a node,
 * deletion, score and lex ranges with exclusive ends, and a randomized run
 * checked against a plain sorted array (spans verified at every level). */
#include "core/alloc.h"
#include "core/hash.h"
#include "core/skiplist.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Every level's spans must add up to the ranks of the nodes they reach. */
static int spans_ok(const struct zsl *z) {
    for (int i = 0; i < z->level; i++) {
        unsigned long rank = 0;
        for (const struct zsl_node *p = z->header; p->level[i].forward; p = p->level[i].forward) {
            rank += p->level[i].span;
            if (zsl_rank(z, p->level[i].forward) != rank) return 0;
        }
    }
    return 1;
}

static void test_order_and_rank(void) {
    struct zsl *z = zsl_new();
    zsl_insert(z, 2, "b", 1);
    zsl_insert(z, 1, "z", 1);
    zsl_insert(z, 2, "a", 1);
    zsl_insert(z, 2, "ab", 2);
    zsl_insert(z, -INFINITY, "m", 1);
    CHECK_EQ_LL(z->length, 5);
    const char *want[] = {"m", "z", "a", "ab", "b"};
    int i = 0;
    for (struct zsl_node *n = z->header->level[0].forward; n; n = n->level[0].forward, i++) {
        CHECK_MEM(zsl_ele(n), n->elen, want[i]);
        CHECK_EQ_LL(zsl_rank(z, n), i + 1);
        CHECK(zsl_by_rank(z, (unsigned long)i + 1) == n);
    }
    CHECK(zsl_by_rank(z, 0) == NULL);
    CHECK(zsl_by_rank(z, 6) == NULL);
    CHECK_MEM(zsl_ele(z->tail), z->tail->elen, "b");
    CHECK(zsl_find(z, "ab", 2) != NULL);
    CHECK(zsl_find(z, "abc", 3) == NULL);
    CHECK(spans_ok(z));
    zsl_free(z);
}

static void test_update_and_delete(void) {
    struct zsl *z = zsl_new();
    zsl_insert(z, 1, "a", 1);
    zsl_insert(z, 2, "b", 1);
    zsl_insert(z, 3, "c", 1);
    struct zsl_node *b = zsl_find(z, "b", 1);
    zsl_update_score(z, b, 2.5); /* stays in place */
    CHECK(zsl_find(z, "b", 1) == b);
    CHECK_EQ_LL(zsl_rank(z, b), 2);
    zsl_update_score(z, b, 10); /* moves to the end */
    CHECK(zsl_find(z, "b", 1) == b);
    CHECK_EQ_LL(zsl_rank(z, b), 3);
    CHECK(z->tail == b);
    CHECK(b->backward == zsl_find(z, "c", 1));
    CHECK(spans_ok(z));
    zsl_delete_node(z, zsl_find(z, "a", 1));
    CHECK_EQ_LL(z->length, 2);
    CHECK(zsl_find(z, "a", 1) == NULL);
    CHECK(z->header->level[0].forward == zsl_find(z, "c", 1));
    CHECK(zsl_find(z, "c", 1)->backward == NULL);
    zsl_delete_node(z, b);
    CHECK(z->tail == zsl_find(z, "c", 1));
    zsl_free(z);
}

static void test_ranges(void) {
    struct zsl *z = zsl_new();
    char buf[8];
    for (int i = 0; i < 10; i++) {
        int n = snprintf(buf, sizeof(buf), "%c", 'a' + i);
        zsl_insert(z, i, buf, (size_t)n);
    }
    struct zrange r = {2, 5, 0, 0};
    CHECK(zsl_first_in_range(z, &r)->score == 2);
    CHECK(zsl_last_in_range(z, &r)->score == 5);
    r.minex = r.maxex = 1;
    CHECK(zsl_first_in_range(z, &r)->score == 3);
    CHECK(zsl_last_in_range(z, &r)->score == 4);
    struct zrange none = {5, 5, 1, 0};
    CHECK(zrange_empty(&none));
    CHECK(zsl_first_in_range(z, &none) == NULL);
    struct zrange out = {20, INFINITY, 0, 0};
    CHECK(zsl_first_in_range(z, &out) == NULL);
    CHECK(zsl_last_in_range(z, &out) == NULL);
    struct zlex lx = {.min = "c", .minlen = 1, .max = "f", .maxlen = 1, .minex = 1};
    CHECK_MEM(zsl_ele(zsl_first_in_lex(z, &lx)), 1, "d");
    CHECK_MEM(zsl_ele(zsl_last_in_lex(z, &lx)), 1, "f");
    struct zlex all = {.mininf = -1, .maxinf = 1};
    CHECK_MEM(zsl_ele(zsl_first_in_lex(z, &all)), 1, "a");
    CHECK_MEM(zsl_ele(zsl_last_in_lex(z, &all)), 1, "j");
    struct zlex bad = {.mininf = 1, .maxinf = -1};
    CHECK(zlex_empty(&bad));
    CHECK(zsl_first_in_lex(z, &bad) == NULL);
    zsl_free(z);
}

static int cmp_pair(const void *a, const void *b) {
    const int *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Random inserts, updates and deletes against a sorted array model. */
static void test_random(void) {
    enum { N = 2000 };
    static int score[N], present[N];
    struct zsl *z = zsl_new();
    srand(7);
    char buf[16];
    for (int step = 0; step < 20000; step++) {
        int m = rand() % N, s = rand() % 100;
        int len = snprintf(buf, sizeof(buf), "m%06d", m);
        struct zsl_node *n = zsl_find(z, buf, (size_t)len);
        CHECK((n != NULL) == (present[m] != 0));
        int op = rand() % 3;
        if (!n) {
            zsl_insert(z, s, buf, (size_t)len);
            present[m] = 1;
            score[m] = s;
        } else if (op == 0) {
            zsl_delete_node(z, n);
            present[m] = 0;
        } else {
            zsl_update_score(z, n, s);
            score[m] = s;
        }
    }
    static int model[N][2];
    int cnt = 0;
    for (int m = 0; m < N; m++)
        if (present[m]) {
            model[cnt][0] = score[m];
            model[cnt][1] = m;
            cnt++;
        }
    qsort(model, (size_t)cnt, sizeof(model[0]), cmp_pair);
    CHECK_EQ_LL(z->length, cnt);
    CHECK_EQ_LL(z->ht.count, cnt);
    int i = 0, bad = 0;
    for (struct zsl_node *n = z->header->level[0].forward; n; n = n->level[0].forward, i++) {
        int len = snprintf(buf, sizeof(buf), "m%06d", model[i][1]);
        if (n->score != model[i][0] || n->elen != (uint32_t)len || memcmp(zsl_ele(n), buf, (size_t)len)) bad++;
        if (zsl_by_rank(z, (unsigned long)i + 1) != n) bad++;
    }
    CHECK_EQ_LL(bad, 0);
    CHECK(spans_ok(z));
    struct zsl *d = zsl_dup(z);
    CHECK_EQ_LL(d->length, z->length);
    CHECK(spans_ok(d));
    zsl_free(d);
    zsl_free(z);
}

int main(void) {
    hk_hash_init(12345);
    TEST_RUN(test_order_and_rank);
    TEST_RUN(test_update_and_delete);
    TEST_RUN(test_ranges);
    TEST_RUN(test_random);
    return TEST_REPORT();
}
