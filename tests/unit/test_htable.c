/* test_htable.c - unit tests of the intrusive hash table
 * (src/core/htable.c): insert, find by walking a bucket, unlink, growth,
 * shrinking, and the SCAN guarantee (every entry present for the whole scan
 * is visited at least once) while the table grows or shrinks mid-scan. */
#include "core/alloc.h"
#include "core/hash.h"
#include "core/htable.h"
#include "core/util.h"
#include "test.h"

#include <math.h>
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

static int item_match(const struct hnode *n, const void *key) {
    return ((const struct item *)n)->key == *(const uint64_t *)key;
}

static struct item *find(struct htable *t, uint64_t key, struct hnode ***linkp) {
    struct hnode **link = ht_find_link(t, key_hash(key), item_match, &key);
    if (!link) return NULL;
    if (linkp) *linkp = link;
    return (struct item *)*link;
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
    CHECK(find(&t, 1, NULL) == NULL);
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
    CHECK_EQ_LL(ht_overhead(&t), (ht_size(&t) + (t.old ? t.omask + 1 : 0)) * sizeof(struct hnode *));
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

/* ---- incremental rehashing ------------------------------------------------------- */

/* Walks every entry of t with the iterator; returns how many. */
static uint64_t iter_count(struct htable *t) {
    struct ht_iter it;
    ht_iter_init(&it, t);
    uint64_t n = 0;
    while (ht_iter_next(&it)) n++;
    return n;
}

/* Growth from 0 to 200k: every insert moves a bounded number of buckets,
 * big tables do rehash incrementally, and every key stays findable at
 * every step (the newest and a sample each insert, all of them at every
 * rehash start and end and every 2000 inserts). */
static void test_incremental_growth(void) {
    struct htable t;
    ht_init(&t);
    enum { N = 200000 };
    struct item *items = calloc(N, sizeof(*items));
    int rehashes = 0, full_checks = 0, bad = 0;
    uint64_t max_advance = 0;
    for (int i = 0; i < N; i++) {
        items[i].key = (uint64_t)i * 0x9E3779B97F4A7C15ULL + 1;
        int was = ht_rehashing(&t);
        uint64_t idx = t.rehash_idx;
        add(&t, &items[i]);
        if (was && ht_rehashing(&t) && t.rehash_idx - idx > max_advance) max_advance = t.rehash_idx - idx;
        int now = ht_rehashing(&t);
        if (!was && now) {
            rehashes++;
            /* The resize just began: most old buckets are still unmoved. */
            CHECK(t.rehash_idx < 64);
            CHECK(t.omask + 1 > HT_SYNC_MAX);
        }
        if (find(&t, items[i].key, NULL) != &items[i]) bad++;
        for (int k = 0; k < 8; k++) {
            int j = (int)(hk_rand64() % (uint64_t)(i + 1));
            if (find(&t, items[j].key, NULL) != &items[j]) bad++;
        }
        if (was != now || i % 2000 == 0) {
            full_checks++;
            for (int j = 0; j <= i; j++)
                if (find(&t, items[j].key, NULL) != &items[j]) bad++;
            CHECK_EQ_LL(iter_count(&t), (uint64_t)i + 1);
        }
        if (t.count != (uint64_t)i + 1) bad++;
    }
    CHECK_EQ_LL(bad, 0);
    CHECK(rehashes >= 7); /* 2048 .. 262144 buckets */
    CHECK(full_checks > 100);
    /* One step passes at most 40 empty or 4 non-empty buckets. */
    CHECK(max_advance <= 40);
    CHECK(find(&t, 12345, NULL) == NULL);
    while (ht_rehashing(&t)) find(&t, 0, NULL);
    CHECK(ht_size(&t) >= N && ht_size(&t) <= 2 * (uint64_t)N * 2);
    ht_release(&t);
    free(items);
}

/* Deletes (and re-inserts) while a grow, then a shrink, is in progress. */
static void test_delete_during_rehash(void) {
    struct htable t;
    ht_init(&t);
    enum { N = 4096 * 4 };
    struct item *items = calloc(N + 1, sizeof(*items));
    for (int i = 0; i <= N; i++) items[i].key = (uint64_t)i * 7 + 3;
    for (int i = 0; i < N; i++) add(&t, &items[i]);
    while (ht_rehashing(&t)) find(&t, 0, NULL);
    add(&t, &items[N]); /* count reached the size: grow starts */
    CHECK(ht_rehashing(&t));
    int deleted_while = 0;
    for (int i = 0; i <= N; i += 2) {
        if (ht_rehashing(&t)) deleted_while++;
        CHECK(del(&t, items[i].key));
    }
    CHECK(deleted_while > 100);
    CHECK_EQ_LL(t.count, N / 2);
    CHECK_EQ_LL(iter_count(&t), N / 2);
    for (int i = 0; i <= N; i++) CHECK((find(&t, items[i].key, NULL) != NULL) == (i % 2 == 1));
    /* Shrink: leave few entries so a big old array drains step by step. */
    while (ht_rehashing(&t)) find(&t, 0, NULL);
    for (int i = 1; i < N; i += 2)
        if (i % 64 != 1) del(&t, items[i].key);
    uint64_t left = t.count;
    ht_maybe_shrink(&t, item_hash, NULL);
    CHECK(ht_rehashing(&t));
    CHECK(ht_size(&t) < t.omask + 1);
    int ops_while = 0, bad = 0;
    for (int i = 1; i < N; i += 64) {
        if (!ht_rehashing(&t)) break;
        ops_while++;
        /* Delete, check gone, re-insert, check back. */
        if (!del(&t, items[i].key)) bad++;
        if (find(&t, items[i].key, NULL)) bad++;
        add(&t, &items[i]);
        if (find(&t, items[i].key, NULL) != &items[i]) bad++;
        ht_maybe_shrink(&t, item_hash, NULL); /* ignored while rehashing */
    }
    CHECK(ops_while > 10);
    CHECK_EQ_LL(bad, 0);
    CHECK_EQ_LL(t.count, left);
    CHECK_EQ_LL(iter_count(&t), left);
    for (int i = 1; i < N; i += 64) CHECK(find(&t, items[i].key, NULL) == &items[i]);
    /* Emptying the table releases both arrays. */
    for (int i = 1; i < N; i += 64) del(&t, items[i].key);
    ht_maybe_shrink(&t, item_hash, NULL);
    CHECK(t.buckets == NULL && t.old == NULL);
    CHECK_EQ_LL(ht_overhead(&t), 0);
    ht_release(&t);
    free(items);
}

/* Full scan that starts, and keeps going, while rehashes are in progress:
 * extras are added (grow) or removed (shrink) a few per scan step, so the
 * table passes through several incremental resizes mid-scan. Every
 * original must be seen; with nothing changing, never more than twice. */
static void scan_during_rehash(int grow) {
    struct htable t;
    ht_init(&t);
    const int ORIG = grow ? 3000 : 500, EXTRA = 60000;
    struct item *items = calloc(ORIG + EXTRA, sizeof(*items));
    for (int i = 0; i < ORIG + EXTRA; i++) items[i].key = (uint64_t)i * 2654435761u + 17;
    for (int i = 0; i < ORIG; i++) {
        items[i].original = 1;
        add(&t, &items[i]);
    }
    int next = ORIG;
    if (grow) {
        /* Start the scan in the middle of a rehash. */
        while (!ht_rehashing(&t) || t.rehash_idx < 100) add(&t, &items[next++]);
    } else {
        for (; next < ORIG + EXTRA; next++) add(&t, &items[next]);
        while (ht_rehashing(&t)) find(&t, 0, NULL);
        next = ORIG;
    }
    uint64_t cursor = 0;
    int steps = 0, saw_rehash = 0, resizes = 0;
    uint64_t last_mask = t.mask;
    do {
        if (ht_rehashing(&t)) saw_rehash++;
        cursor = ht_scan(&t, cursor, mark_seen, NULL);
        steps++;
        for (int k = 0; k < 20; k++) {
            if (grow && next < ORIG + EXTRA) add(&t, &items[next++]);
            if (!grow && next < ORIG + EXTRA) {
                del(&t, items[next++].key);
                ht_maybe_shrink(&t, item_hash, NULL);
            }
        }
        if (t.mask != last_mask) {
            resizes++;
            last_mask = t.mask;
        }
    } while (cursor != 0 && steps < 10000000);
    CHECK(saw_rehash > 10);
    CHECK(resizes >= 2);
    int missing = 0;
    for (int i = 0; i < ORIG; i++)
        if (!items[i].seen) missing++;
    CHECK_EQ_LL(missing, 0);
    ht_release(&t);
    free(items);
}

static void test_scan_during_grow(void) { scan_during_rehash(1); }
static void test_scan_during_shrink(void) { scan_during_rehash(0); }

/* A scan with no changes, started mid-rehash and stepping it on: each
 * entry seen at least once and, like Redis, at most a bounded number. */
static void test_scan_static_rehash(void) {
    struct htable t;
    ht_init(&t);
    enum { N = 8193 };
    struct item *items = calloc(N, sizeof(*items));
    for (int i = 0; i < N; i++) {
        items[i].key = (uint64_t)i * 31 + 5;
        add(&t, &items[i]);
    }
    CHECK(ht_rehashing(&t));
    uint64_t cursor = 0;
    do cursor = ht_scan(&t, cursor, mark_seen, NULL);
    while (cursor);
    int missing = 0, many = 0;
    for (int i = 0; i < N; i++) {
        if (!items[i].seen) missing++;
        if (items[i].seen > 2) many++;
    }
    CHECK_EQ_LL(missing, 0);
    CHECK_EQ_LL(many, 0);
    ht_release(&t);
    free(items);
}

/* Random selection during a rehash: draws land in both arrays, only on
 * live entries, and ht_random_bucket finds one even when nearly all are
 * still in the old array. */
static void test_random_during_rehash(void) {
    struct htable t;
    ht_init(&t);
    enum { N = 8192 };
    struct item *items = calloc(N + 1, sizeof(*items));
    for (int i = 0; i <= N; i++) items[i].key = (uint64_t)i * 1000003 + 11;
    for (int i = 0; i < N; i++) add(&t, &items[i]);
    while (ht_rehashing(&t)) find(&t, 0, NULL);
    add(&t, &items[N]);
    CHECK(ht_rehashing(&t));
    /* Almost everything is still in the old array. */
    struct hnode *h = ht_random_bucket(&t, 99);
    CHECK(h != NULL);
    for (int i = 0; i < 500 && ht_rehashing(&t); i++) find(&t, 0, NULL);
    CHECK(ht_rehashing(&t));
    if (!ht_rehashing(&t)) return;
    int in_old = 0, in_new = 0, bad = 0;
    for (int r = 0; r < 100000; r++) {
        struct hnode *x = ht_sample_bucket(&t, hk_rand64());
        if (!x) continue;
        struct item *it = (struct item *)x;
        if (it < items || it > items + N) {
            bad++;
            continue;
        }
        it->seen++;
        uint64_t hv = key_hash(it->key);
        int old = 0;
        for (struct hnode *y = t.old[hv & t.omask]; y; y = y->next)
            if (y == x) old = 1;
        if (old) in_old++;
        else in_new++;
    }
    CHECK_EQ_LL(bad, 0);
    CHECK(in_old > 1000);
    CHECK(in_new > 1000);
    /* ht_random_bucket: non-empty heads of live entries. */
    for (int r = 0; r < 20000; r++) {
        struct hnode *x = ht_random_bucket(&t, hk_rand64());
        CHECK(x != NULL);
        if (!x) break;
        CHECK(find(&t, ((struct item *)x)->key, NULL) == (struct item *)x);
    }
    CHECK(!ht_rehashing(&t));
    ht_release(&t);
    free(items);
}

/* Upper 1e-4 point of chi-square with k degrees of freedom (Wilson-Hilferty). */
static double chi2_crit(double k) {
    double a = 2.0 / (9.0 * k), z = 3.719;
    double b = 1.0 - a + z * sqrt(a);
    return k * b * b * b;
}

static double chi2_of(const int *counts, int n, int total) {
    double e = (double)total / n, x = 0;
    for (int i = 0; i < n; i++) x += (counts[i] - e) * (counts[i] - e) / e;
    return x;
}

static uint64_t clumped_hash(const struct hnode *n, void *ctx) {
    (void)ctx;
    return ((const struct item *)n)->key % 3; /* three long chains */
}

/* The fair sampler picks every entry with the same chance, whatever the
 * chain lengths (here three chains of 20 in a table of 64 buckets), and
 * in a table caught in the middle of an incremental rehash. */
static void test_fair_sampler(void) {
    struct htable t;
    ht_init(&t);
    enum { M = 60, DRAWS = 60000 };
    struct item *items = calloc(M, sizeof(*items));
    for (int i = 0; i < M; i++) {
        items[i].key = (uint64_t)i;
        ht_insert(&t, &items[i].node, clumped_hash(&items[i].node, NULL), clumped_hash, NULL);
    }
    struct ht_sampler sm;
    ht_sampler_init(&sm, &t, DRAWS);
    CHECK(sm.bound == 20);
    int counts[M] = {0};
    for (int r = 0; r < DRAWS; r++) counts[((struct item *)ht_sampler_next(&sm))->key]++;
    CHECK(chi2_of(counts, M, DRAWS) < chi2_crit(M - 1));
    /* A bound that starts too low is raised by the first longer chain. */
    ht_sampler_init(&sm, &t, 1);
    sm.bound = 2;
    for (int r = 0; r < 200; r++) ht_sampler_next(&sm);
    CHECK(sm.bound == 20);
    ht_release(&t);
    free(items);

    enum { N = 8192, BINS = 64, BIG = 256000 };
    items = calloc(N + 1, sizeof(*items));
    ht_init(&t);
    for (int i = 0; i <= N; i++) items[i].key = (uint64_t)i * 1000003 + 11;
    for (int i = 0; i < N; i++) add(&t, &items[i]);
    while (ht_rehashing(&t)) find(&t, 0, NULL);
    add(&t, &items[N]);
    for (int i = 0; i < 1000 && ht_rehashing(&t); i++) find(&t, 0, NULL);
    CHECK(ht_rehashing(&t));
    int bins[BINS] = {0};
    ht_sampler_init(&sm, &t, BIG);
    for (int r = 0; r < BIG; r++) {
        struct item *it = (struct item *)ht_sampler_next(&sm);
        bins[(it - items) % BINS]++;
    }
    CHECK(ht_rehashing(&t)); /* sampling moves nothing */
    CHECK(chi2_of(bins, BINS, BIG) < chi2_crit(BINS - 1));
    ht_release(&t);
    free(items);
}

/* ht_drain visits every entry once, in either array, then releases. */
static void drain_mark(struct hnode *n, void *ctx) {
    (*(int *)ctx)++;
    ((struct item *)n)->seen++;
}

static void test_drain_during_rehash(void) {
    struct htable t;
    ht_init(&t);
    enum { N = 4097 };
    struct item *items = calloc(N, sizeof(*items));
    for (int i = 0; i < N; i++) {
        items[i].key = (uint64_t)i;
        add(&t, &items[i]);
    }
    CHECK(ht_rehashing(&t));
    int n = 0;
    ht_drain(&t, drain_mark, &n);
    CHECK_EQ_LL(n, N);
    for (int i = 0; i < N; i++) CHECK_EQ_LL(items[i].seen, 1);
    CHECK(t.buckets == NULL && t.old == NULL && t.count == 0);
    free(items);
}

int main(void) {
    hk_hash_init(12345);
    TEST_RUN(test_insert_find_unlink);
    TEST_RUN(test_shrink);
    TEST_RUN(test_scan_plain);
    TEST_RUN(test_scan_grow);
    TEST_RUN(test_scan_shrink);
    TEST_RUN(test_next_cursor);
    TEST_RUN(test_incremental_growth);
    TEST_RUN(test_delete_during_rehash);
    TEST_RUN(test_scan_during_grow);
    TEST_RUN(test_scan_during_shrink);
    TEST_RUN(test_scan_static_rehash);
    TEST_RUN(test_random_during_rehash);
    TEST_RUN(test_fair_sampler);
    TEST_RUN(test_drain_during_rehash);
    return TEST_REPORT();
}
