/* test_htable.c - unit tests of the intrusive hash table
 * (src/core/htable.c): insert, find by walking a bucket, unlink, growth,
 * shrinking, and the SCAN guarantee (every entry present for the whole scan
 * is visited at least once) while the table grows or shrinks mid-scan. */
#include "core/alloc.h"
#include "core/hash.h"
#include "core/htable.h"
#include "test.h"

#include <stdlib.h>

struct item {
    struct hnode node; /* first member: the table links through it */
    uint64_t key;
    int seen;
    int original;
};

static uint64_t key_hash(uint64_t k) { return hk_hash(&k, sizeof(k)); }
static uint64_t item_hash(const struct hnode *n, void *ctx) {
    (void)ctx;
    return key_hash(((const struct item *)n)->key);
}

static struct item *find(struct htable *t, uint64_t key, struct hnode ***linkp) {
    struct hnode **link = ht_bucket(t, key_hash(key));
    if (!link) return NULL;
    for (; *link; link = &(*link)->next) {
        struct item *it = (struct item *)*link;
        if (it->key == key) {
            if (linkp) *linkp = link;
            return it;
        }
    }
    return NULL;
}

static void add(struct htable *t, struct item *it) { ht_insert(t, &it->node, key_hash(it->key), item_hash, NULL); }

static int del(struct htable *t, uint64_t key) {
    struct hnode **link;
    if (!find(t, key, &link)) return 0;
    ht_unlink(t, link);
    return 1;
}

static void test_insert_find_unlink(void) {
    struct htable t;
    ht_init(&t);
    CHECK_EQ_LL(ht_size(&t), 0);
    CHECK(ht_bucket(&t, 1) == NULL);
    CHECK(ht_random_bucket(&t, 5) == NULL);
    enum { N = 10000 };
    struct item *items = calloc(N, sizeof(*items));
    for (int i = 0; i < N; i++) {
        items[i].key = (uint64_t)i * 7919;
        add(&t, &items[i]);
        /* Load factor stays at most 1 after each insert. */
        if (t.count > ht_size(&t)) CHECK(t.count <= ht_size(&t));
    }
    CHECK_EQ_LL(t.count, N);
    CHECK(ht_size(&t) >= N && ht_size(&t) < 4 * N);
    CHECK((ht_size(&t) & (ht_size(&t) - 1)) == 0);
    CHECK_EQ_LL(ht_overhead(&t), ht_size(&t) * sizeof(struct hnode *));
    for (int i = 0; i < N; i++) CHECK(find(&t, (uint64_t)i * 7919, NULL) == &items[i]);
    CHECK(find(&t, 3, NULL) == NULL);
    for (int i = 0; i < N; i += 2) CHECK(del(&t, (uint64_t)i * 7919));
    CHECK_EQ_LL(t.count, N / 2);
    CHECK(!del(&t, 0));
    for (int i = 0; i < N; i++) CHECK((find(&t, (uint64_t)i * 7919, NULL) != NULL) == (i % 2 == 1));
    CHECK(ht_random_bucket(&t, 12345) != NULL);
    ht_release(&t);
    CHECK_EQ_LL(ht_size(&t), 0);
    free(items);
}

static void test_shrink(void) {
    struct htable t;
    ht_init(&t);
    enum { N = 4096 };
    struct item *items = calloc(N, sizeof(*items));
    for (int i = 0; i < N; i++) {
        items[i].key = (uint64_t)i;
        add(&t, &items[i]);
    }
    uint64_t big = ht_size(&t);
    ht_maybe_shrink(&t, item_hash, NULL); /* full: no change */
    CHECK_EQ_LL(ht_size(&t), big);
    for (int i = 10; i < N; i++) del(&t, (uint64_t)i);
    ht_maybe_shrink(&t, item_hash, NULL);
    CHECK(ht_size(&t) < big);
    CHECK(ht_size(&t) >= t.count);
    for (int i = 0; i < 10; i++) CHECK(find(&t, (uint64_t)i, NULL) == &items[i]);
    for (int i = 0; i < 10; i++) del(&t, (uint64_t)i);
    ht_maybe_shrink(&t, item_hash, NULL); /* empty: buckets released */
    CHECK_EQ_LL(ht_size(&t), 0);
    CHECK(t.buckets == NULL);
    /* And it works again after being released. */
    add(&t, &items[0]);
    CHECK(find(&t, 0, NULL) == &items[0]);
    ht_release(&t);
    free(items);
}

static void mark_seen(struct hnode *n, void *ctx) {
    (void)ctx;
    ((struct item *)n)->seen++;
}

/* Scan with a resize every `every` steps, applying `mutate` once at step
 * `at`; then check every original item was seen. */
static void scan_with_resize(int grow) {
    struct htable t;
    ht_init(&t);
    enum { ORIG = 500, EXTRA = 20000 };
    struct item *items = calloc(ORIG + EXTRA, sizeof(*items));
    for (int i = 0; i < ORIG + EXTRA; i++) items[i].key = (uint64_t)i * 2654435761u;
    for (int i = 0; i < ORIG; i++) {
        items[i].original = 1;
        add(&t, &items[i]);
    }
    if (!grow)
        for (int i = ORIG; i < ORIG + EXTRA; i++) add(&t, &items[i]);
    uint64_t cursor = 0;
    int steps = 0, changed = 0;
    do {
        cursor = ht_scan(&t, cursor, mark_seen, NULL);
        steps++;
        if (steps == 50 && !changed) {
            changed = 1;
            if (grow) {
                for (int i = ORIG; i < ORIG + EXTRA; i++) add(&t, &items[i]);
            } else {
                for (int i = ORIG; i < ORIG + EXTRA; i++) del(&t, items[i].key);
                ht_maybe_shrink(&t, item_hash, NULL);
            }
        }
    } while (cursor != 0 && steps < 10000000);
    CHECK(changed);
    int missing = 0;
    for (int i = 0; i < ORIG; i++)
        if (!items[i].seen) missing++;
    CHECK_EQ_LL(missing, 0);
    ht_release(&t);
    free(items);
}

static void test_scan_plain(void) {
    struct htable t;
    ht_init(&t);
    CHECK_EQ_LL(ht_scan(&t, 0, mark_seen, NULL), 0);
    enum { N = 1000 };
    struct item *items = calloc(N, sizeof(*items));
    for (int i = 0; i < N; i++) {
        items[i].key = (uint64_t)i;
        add(&t, &items[i]);
    }
    uint64_t cursor = 0;
    int steps = 0;
    do {
        cursor = ht_scan(&t, cursor, mark_seen, NULL);
        steps++;
    } while (cursor);
    /* Without resizing: every bucket once, every entry exactly once. */
    CHECK_EQ_LL(steps, ht_size(&t));
    for (int i = 0; i < N; i++) CHECK_EQ_LL(items[i].seen, 1);
    ht_release(&t);
    free(items);
}

static void test_scan_grow(void) { scan_with_resize(1); }
static void test_scan_shrink(void) { scan_with_resize(0); }

static void test_next_cursor(void) {
    /* Reverse-binary increment over a 3-bit mask: 0 4 2 6 1 5 3 7 0. */
    uint64_t want[] = {4, 2, 6, 1, 5, 3, 7, 0};
    uint64_t c = 0;
    for (int i = 0; i < 8; i++) {
        c = ht_next_cursor(7, c);
        CHECK_EQ_LL(c, want[i]);
    }
}

int main(void) {
    hk_hash_init(12345);
    TEST_RUN(test_insert_find_unlink);
    TEST_RUN(test_shrink);
    TEST_RUN(test_scan_plain);
    TEST_RUN(test_scan_grow);
    TEST_RUN(test_scan_shrink);
    TEST_RUN(test_next_cursor);
    return TEST_REPORT();
}
