/* test_lockset.c - unit tests of shard lock sets (src/store/lockset.c):
 * ascending unique order, all-shards sets, coverage, the re-entrance rules
 * of ls_extend (wait only for a shard above every held one, only try
 * below), and many threads taking random overlapping sets at once without
 * deadlock and with mutual exclusion. */
#include "store/db.h"
#include "store/lockset.h"
#include "test.h"

#include <pthread.h>
#include <stdlib.h>

#define NSHARDS 64

/* Another thread trying a shard (lock sets belong to their thread). */
struct probe {
    unsigned shard;
    int got;
};

static void *probe_main(void *arg) {
    struct probe *p = arg;
    p->got = shard_trylock(p->shard);
    if (p->got) shard_unlock(p->shard);
    return NULL;
}

static int taken_elsewhere(unsigned s) {
    struct probe p = {s, 0};
    pthread_t t;
    pthread_create(&t, NULL, probe_main, &p);
    pthread_join(t, NULL);
    return !p.got;
}

static void test_order_and_unique(void) {
    struct lockset ls;
    ls_init(&ls);
    unsigned in[] = {9, 3, 40, 3, 0, 63, 9, 17, 40, 1};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) ls_add(&ls, in[i]);
    unsigned want[] = {0, 1, 3, 9, 17, 40, 63};
    CHECK_EQ_LL(ls_count(&ls), 7);
    for (unsigned i = 0; i < 7; i++) CHECK_EQ_LL(ls_at(&ls, i), want[i]);
    CHECK(ls_holds(&ls, 17));
    CHECK(!ls_holds(&ls, 18));
    /* Past the inline capacity the set moves to the heap and stays sorted. */
    for (unsigned s = NSHARDS; s-- > 0;) ls_add(&ls, s);
    CHECK_EQ_LL(ls_count(&ls), NSHARDS);
    for (unsigned i = 0; i < NSHARDS; i++) CHECK_EQ_LL(ls_at(&ls, i), i);
    ls_clear(&ls);
    CHECK_EQ_LL(ls_count(&ls), 0);
    ls_destroy(&ls);
}

static void test_all_shards(void) {
    struct lockset a, b;
    ls_init(&a);
    ls_init(&b);
    ls_add(&a, 2);
    ls_add(&a, 5);
    ls_add(&a, 9);
    ls_add(&b, 5);
    CHECK(ls_holds(&a, 5) && !ls_holds(&a, 6));
    ls_add(&b, 6);
    ls_add_all(&b);
    CHECK_EQ_LL(ls_count(&b), NSHARDS);
    CHECK(ls_holds(&b, 33) && ls_holds(&b, 6) && ls_holds(&b, 0));
    /* "all" absorbs further adds. */
    ls_add(&b, 7);
    CHECK_EQ_LL(ls_count(&b), NSHARDS);
    ls_acquire(&b);
    CHECK(taken_elsewhere(0));
    CHECK(taken_elsewhere(NSHARDS - 1));
    ls_release(&b);
    /* All released: every shard can be taken again. */
    for (unsigned s = 0; s < NSHARDS; s++) {
        CHECK(shard_trylock(s));
        shard_unlock(s);
    }
    ls_destroy(&a);
    ls_destroy(&b);
}

/* A thread that holds a shard until told to let go. */
struct holder {
    unsigned shard;
    pthread_mutex_t m;
    pthread_cond_t cv;
    int state; /* 0 start, 1 holding, 2 release */
};

static void *holder_main(void *arg) {
    struct holder *h = arg;
    shard_lock(h->shard);
    pthread_mutex_lock(&h->m);
    h->state = 1;
    pthread_cond_broadcast(&h->cv);
    while (h->state != 2) pthread_cond_wait(&h->cv, &h->m);
    pthread_mutex_unlock(&h->m);
    shard_unlock(h->shard);
    return NULL;
}

static void test_acquire_release_and_extend(void) {
    struct lockset ls;
    ls_init(&ls);
    ls_add(&ls, 10);
    ls_add(&ls, 20);
    ls_acquire(&ls);
    CHECK(taken_elsewhere(10));
    CHECK(taken_elsewhere(20));
    CHECK(!taken_elsewhere(15));
    /* Already held: nothing is locked twice. */
    CHECK(ls_extend(&ls, 10));
    CHECK_EQ_LL(ls_count(&ls), 2);
    /* Above every held shard: waited for, cannot deadlock. */
    CHECK(ls_extend(&ls, 30));
    CHECK(taken_elsewhere(30));
    /* Below, and free: taken by a try. */
    CHECK(ls_extend(&ls, 15));
    CHECK(taken_elsewhere(15));
    /* Below, and held by another thread: refused instead of waiting (the
     * other thread could be waiting for one of ours). */
    struct holder h = {5, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    pthread_t t;
    pthread_create(&t, NULL, holder_main, &h);
    pthread_mutex_lock(&h.m);
    while (h.state != 1) pthread_cond_wait(&h.cv, &h.m);
    pthread_mutex_unlock(&h.m);
    CHECK(!ls_extend(&ls, 5));
    CHECK(!ls_holds(&ls, 5));
    pthread_mutex_lock(&h.m);
    h.state = 2;
    pthread_cond_broadcast(&h.cv);
    pthread_mutex_unlock(&h.m);
    pthread_join(t, NULL);
    CHECK_EQ_LL(ls_count(&ls), 4);
    ls_release(&ls);
    for (unsigned s = 0; s < NSHARDS; s++) CHECK(!taken_elsewhere(s));
    ls_destroy(&ls);
}

#ifdef HK_DEBUG
/* Debug builds know which shards the calling thread holds. */
static void test_held_tracking(void) {
    struct lockset ls;
    ls_init(&ls);
    ls_add(&ls, 7);
    ls_add(&ls, 8);
    CHECK(!shard_held(7));
    ls_acquire(&ls);
    CHECK(shard_held(7) && shard_held(8) && !shard_held(9));
    ls_release(&ls);
    CHECK(!shard_held(7) && !shard_held(8));
    ls_destroy(&ls);
}
#endif

/* Many threads, random overlapping sets (sometimes every shard), each
 * incrementing a plain counter per held shard. Ascending acquisition means
 * this finishes; exclusion means no increment is lost. */
#define THREADS 6
#define ROUNDS 4000
static unsigned long counters[NSHARDS];

static void *stress_main(void *arg) {
    unsigned seed = (unsigned)(uintptr_t)arg;
    struct lockset ls;
    ls_init(&ls);
    for (int r = 0; r < ROUNDS; r++) {
        ls_clear(&ls);
        if (rand_r(&seed) % 50 == 0) {
            ls_add_all(&ls);
        } else {
            int n = 1 + rand_r(&seed) % 6;
            for (int i = 0; i < n; i++) ls_add(&ls, (unsigned)rand_r(&seed) % NSHARDS);
        }
        ls_acquire(&ls);
        for (unsigned i = 0; i < ls_count(&ls); i++) counters[ls_at(&ls, i)]++;
        ls_release(&ls);
    }
    ls_destroy(&ls);
    return NULL;
}

static void test_concurrent_sets(void) {
    /* Count what each thread will add, replaying its random choices. */
    unsigned long want[NSHARDS] = {0};
    for (int t = 0; t < THREADS; t++) {
        unsigned seed = (unsigned)t + 1;
        struct lockset ls;
        ls_init(&ls);
        for (int r = 0; r < ROUNDS; r++) {
            ls_clear(&ls);
            if (rand_r(&seed) % 50 == 0) {
                ls_add_all(&ls);
            } else {
                int n = 1 + rand_r(&seed) % 6;
                for (int i = 0; i < n; i++) ls_add(&ls, (unsigned)rand_r(&seed) % NSHARDS);
            }
            for (unsigned i = 0; i < ls_count(&ls); i++) want[ls_at(&ls, i)]++;
        }
        ls_destroy(&ls);
    }
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, stress_main, (void *)(uintptr_t)(t + 1));
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (unsigned s = 0; s < NSHARDS; s++) CHECK_EQ_LL(counters[s], want[s]);
}

int main(void) {
    ks_init(1, NSHARDS);
    TEST_RUN(test_order_and_unique);
    TEST_RUN(test_all_shards);
    TEST_RUN(test_acquire_release_and_extend);
#ifdef HK_DEBUG
    TEST_RUN(test_held_tracking);
#endif
    TEST_RUN(test_concurrent_sets);
    return TEST_REPORT();
}
