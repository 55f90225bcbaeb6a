/* test_slab.c - unit tests of the handle-addressed block allocator
 * (src/core/slab.c): size classes, handles, reuse, accounting, and blocks
 * allocated on one thread and freed on others, with the caches of ended
 * threads given back. */
#include "core/alloc.h"
#include "core/slab.h"
#include "test.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

static void test_classes_and_handles(void) {
    for (size_t sz = 1; sz <= SLAB_MAX; sz += 7) {
        unsigned char *p = slab_alloc(sz);
        CHECK(p != NULL);
        CHECK(((uintptr_t)p & 7) == 0);
        CHECK_EQ_LL(slab_usable(p), slab_good_size(sz));
        CHECK(slab_usable(p) >= sz && slab_usable(p) < sz + SLAB_GRAIN);
        slab_h h = slab_handle(p);
        CHECK(h != 0);
        CHECK(slab_ptr(h) == (void *)p);
        memset(p, 0xab, sz); /* the whole block is writable */
        slab_free(p);
    }
    CHECK_EQ_LL(slab_good_size(36), 40);
    CHECK_EQ_LL(slab_good_size(40), 40);
    CHECK_EQ_LL(slab_good_size(276), 280);
}

static void test_accounting_and_reuse(void) {
    long long before = hk_thread_allocated();
    void *a = slab_alloc(40), *b = slab_alloc(44);
    CHECK_EQ_LL(hk_thread_allocated() - before, 40 + 48);
    slab_free(a);
    /* A freed block is the next one of its class this thread gets. */
    void *c = slab_alloc(33);
    CHECK(c == a);
    slab_free(b);
    slab_free(c);
    CHECK_EQ_LL(hk_thread_allocated(), before);
}

static void test_distinct_blocks(void) {
    enum { N = 20000 };
    unsigned char **v = malloc(N * sizeof(*v));
    for (int i = 0; i < N; i++) {
        v[i] = slab_alloc(24);
        memset(v[i], i & 0xff, 24);
    }
    int bad = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 24; j++) bad += v[i][j] != (unsigned char)(i & 0xff);
    CHECK_EQ_LL(bad, 0);
    for (int i = 0; i < N; i++) slab_free(v[i]);
    free(v);
}

#define XN 50000
static void *xfree_main(void *arg) {
    void **v = arg;
    hk_alloc_thread_init();
    for (int i = 0; i < XN; i++) slab_free(v[i]);
    return NULL;
}

static void *xalloc_main(void *arg) {
    void **v = arg;
    hk_alloc_thread_init();
    for (int i = 0; i < XN; i++) {
        v[i] = slab_alloc(56);
        memset(v[i], 0x5a, 56);
    }
    return NULL;
}

/* Blocks move between threads: allocated on two, freed on two others
 * (whose caches go back to the shared lists when they end); then every
 * block is allocated again without the range growing. */
static void test_cross_thread(void) {
    void **a = malloc(XN * sizeof(*a)), **b = malloc(XN * sizeof(*b));
    size_t before = hk_used_memory();
    pthread_t t1, t2;
    pthread_create(&t1, NULL, xalloc_main, a);
    pthread_create(&t2, NULL, xalloc_main, b);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    size_t committed = slab_committed_bytes();
    CHECK_EQ_LL(hk_used_memory() - before, 2LL * XN * 56);
    pthread_create(&t1, NULL, xfree_main, b);
    pthread_create(&t2, NULL, xfree_main, a);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK_EQ_LL(hk_used_memory(), before);
    pthread_create(&t1, NULL, xalloc_main, a);
    pthread_create(&t2, NULL, xalloc_main, b);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK_EQ_LL(slab_committed_bytes(), committed);
    for (int i = 0; i < XN; i++) {
        slab_free(a[i]);
        slab_free(b[i]);
    }
    slab_thread_flush();
    free(a);
    free(b);
}

int main(void) {
    hk_alloc_thread_init();
    TEST_RUN(test_classes_and_handles);
    TEST_RUN(test_accounting_and_reuse);
    TEST_RUN(test_distinct_blocks);
    TEST_RUN(test_cross_thread);
    return TEST_REPORT();
}
