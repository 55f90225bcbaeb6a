/* test_reply.c - unit tests of the reply writer (src/proto/reply.c) and
 * the output buffer under it (src/proto/outbuf.c): the exact bytes of every
 * encoder in RESP2 and RESP3, deferred headers, appends larger than a block
 * and partial consumption as a short writev would do. */
#include "core/alloc.h"
#include "proto/reply.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* Copy everything that ob_iov would hand to writev into one string. */
static char *collect(struct outbuf *ob, size_t *len) {
    struct iovec iov[1024];
    int n = ob_iov(ob, iov, 1024);
    size_t total = 0;
    for (int i = 0; i < n; i++) total += iov[i].iov_len;
    char *s = malloc(total + 1);
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        memcpy(s + o, iov[i].iov_base, iov[i].iov_len);
        o += iov[i].iov_len;
    }
    s[o] = 0;
    *len = o;
    return s;
}

/* What writev would see now, and the pending count (which includes bytes
 * queued behind an unfilled deferred header). */
#define CHECK_OBP(ob, want, pend)                                                                                   \
    do {                                                                                                            \
        size_t l__;                                                                                                 \
        char *s__ = collect((ob), &l__);                                                                            \
        CHECK_MEM(s__, l__, want);                                                                                  \
        CHECK_EQ_LL((ob)->pending, (pend));                                                                         \
        free(s__);                                                                                                  \
    } while (0)
#define CHECK_OB(ob, want) CHECK_OBP(ob, want, strlen(want))

/* Run one writer in a fresh buffer for protocol `resp` and compare. */
#define ONE(resp_, call, want)                                                                                      \
    do {                                                                                                            \
        struct outbuf ob_;                                                                                          \
        ob_init(&ob_);                                                                                              \
        int resp = (resp_);                                                                                         \
        (void)resp;                                                                                                 \
        call;                                                                                                       \
        CHECK_OB(&ob_, want);                                                                                       \
        ob_free(&ob_);                                                                                              \
    } while (0)

static void test_scalars(void) {
    ONE(2, rw_simple(&ob_, "OK", 2), "+OK\r\n");
    ONE(2, rw_error(&ob_, "ERR bad\r\nthing", 14), "-ERR bad  thing\r\n");
    ONE(2, rw_bulk(&ob_, "hello", 5), "$5\r\nhello\r\n");
    ONE(2, rw_bulk(&ob_, "", 0), "$0\r\n\r\n");
    ONE(2, rw_int(&ob_, 0), ":0\r\n");
    ONE(2, rw_int(&ob_, -9223372036854775807LL - 1), ":-9223372036854775808\r\n");
    ONE(2, rw_int(&ob_, 9223372036854775807LL), ":9223372036854775807\r\n");
}

static void test_resp2_vs_resp3(void) {
    ONE(2, rw_null(&ob_, resp), "$-1\r\n");
    ONE(3, rw_null(&ob_, resp), "_\r\n");
    ONE(2, rw_null_array(&ob_, resp), "*-1\r\n");
    ONE(3, rw_null_array(&ob_, resp), "_\r\n");
    ONE(2, rw_map(&ob_, resp, 2), "*4\r\n");
    ONE(3, rw_map(&ob_, resp, 2), "%2\r\n");
    ONE(2, rw_set(&ob_, resp, 3), "*3\r\n");
    ONE(3, rw_set(&ob_, resp, 3), "~3\r\n");
    ONE(2, rw_push(&ob_, resp, 3), "*3\r\n");
    ONE(3, rw_push(&ob_, resp, 3), ">3\r\n");
    ONE(2, rw_bool(&ob_, resp, 1), ":1\r\n");
    ONE(3, rw_bool(&ob_, resp, 0), "#f\r\n");
    ONE(3, rw_bool(&ob_, resp, 1), "#t\r\n");
    ONE(2, rw_double(&ob_, resp, 1.5), "$3\r\n1.5\r\n");
    ONE(3, rw_double(&ob_, resp, 1.5), ",1.5\r\n");
    ONE(2, rw_double(&ob_, resp, INFINITY), "$3\r\ninf\r\n");
    ONE(3, rw_double(&ob_, resp, -INFINITY), ",-inf\r\n");
    ONE(3, rw_double(&ob_, resp, 0.1), ",0.1\r\n");
    ONE(2, rw_verbatim(&ob_, resp, "txt", "hi", 2), "$2\r\nhi\r\n");
    ONE(3, rw_verbatim(&ob_, resp, "txt", "hi", 2), "=6\r\ntxt:hi\r\n");
    ONE(2, rw_bignum(&ob_, resp, "123", 3), "$3\r\n123\r\n");
    ONE(3, rw_bignum(&ob_, resp, "123", 3), "(123\r\n");
    ONE(2, rw_agg(&ob_, '*', 0), "*0\r\n");
    ONE(2, rw_array(&ob_, 12), "*12\r\n");
}

static void test_long_simple_and_bulk(void) {
    /* Past the writers' stack buffers. */
    char big[300];
    memset(big, 'x', sizeof(big));
    char want[400];
    snprintf(want, sizeof(want), "+%.300s\r\n", big);
    ONE(2, rw_simple(&ob_, big, 300), want);
    snprintf(want, sizeof(want), "$300\r\n%.300s\r\n", big);
    ONE(2, rw_bulk(&ob_, big, 300), want);
    snprintf(want, sizeof(want), "$65\r\n%.65s\r\n", big);
    ONE(2, rw_bulk(&ob_, big, 65), want);
    snprintf(want, sizeof(want), "$64\r\n%.64s\r\n", big);
    ONE(2, rw_bulk(&ob_, big, 64), want);
    /* An error longer than the 512-byte chunk keeps newlines replaced. */
    char e[1200], we[1300];
    for (int i = 0; i < 1200; i++) e[i] = (i % 100 == 99) ? '\n' : 'e';
    we[0] = '-';
    for (int i = 0; i < 1200; i++) we[i + 1] = e[i] == '\n' ? ' ' : e[i];
    memcpy(we + 1201, "\r\n", 3);
    ONE(2, rw_error(&ob_, e, 1200), we);
}

static void test_deferred(void) {
    struct outbuf ob;
    ob_init(&ob);
    rw_simple(&ob, "A", 1);
    void *h = rw_defer(&ob);
    rw_bulk(&ob, "x", 1);
    rw_bulk(&ob, "y", 1);
    /* Until filled, nothing after the hole is offered to writev. */
    CHECK_OBP(&ob, "+A\r\n", 4 + 14);
    rw_fill_agg(&ob, h, '*', 2);
    CHECK_OB(&ob, "+A\r\n*2\r\n$1\r\nx\r\n$1\r\ny\r\n");
    ob_free(&ob);

    /* A deferred header with nothing before it, and two nested. */
    ob_init(&ob);
    void *outer = rw_defer(&ob);
    void *inner = rw_defer(&ob);
    rw_int(&ob, 7);
    rw_fill_agg(&ob, inner, '%', 1);
    rw_int(&ob, 8);
    CHECK_OBP(&ob, "", 4 + 4 + 4);
    rw_fill_agg(&ob, outer, '*', 2);
    CHECK_OB(&ob, "*2\r\n%1\r\n:7\r\n:8\r\n");
    ob_free(&ob);

    /* Consuming up to an unfilled hole stops there and resumes after fill. */
    ob_init(&ob);
    rw_simple(&ob, "OK", 2);
    h = rw_defer(&ob);
    rw_int(&ob, 1);
    ob_consume(&ob, 5);
    CHECK_OBP(&ob, "", 4);
    rw_fill_agg(&ob, h, '*', 1);
    CHECK_OB(&ob, "*1\r\n:1\r\n");
    ob_consume(&ob, 8);
    CHECK_EQ_LL(ob.pending, 0);
    CHECK(ob.head == NULL && ob.tail == NULL);
    CHECK_EQ_LL(ob.nblocks, 0);
    CHECK_EQ_LL(ob.alloc, 0);
    ob_free(&ob);
}

static void test_large_appends(void) {
    /* Values of several blocks, small appends around them; bytes arrive in
     * order and pending/alloc add up. */
    struct outbuf ob;
    ob_init(&ob);
    size_t total = 0;
    size_t sizes[] = {10, OB_BLOCK_SIZE - 3, 5, 3 * OB_BLOCK_SIZE + 17, 1, OB_BLOCK_SIZE, 70000};
    char *want = malloc(1 << 20);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char *p = malloc(sizes[i]);
        for (size_t j = 0; j < sizes[i]; j++) p[j] = (char)('a' + (i + j) % 26);
        ob_append(&ob, p, sizes[i]);
        memcpy(want + total, p, sizes[i]);
        total += sizes[i];
        free(p);
    }
    CHECK_EQ_LL(ob.pending, total);
    CHECK(ob.nblocks >= 3);
    size_t blocks_bytes = 0;
    int nb = 0;
    for (struct ob_block *b = ob.head; b; b = b->next) {
        blocks_bytes += b->bytes;
        nb++;
    }
    CHECK_EQ_LL(nb, ob.nblocks);
    CHECK_EQ_LL(blocks_bytes, ob.alloc);
    size_t l;
    char *got = collect(&ob, &l);
    CHECK_EQ_LL(l, total);
    CHECK(memcmp(got, want, total) == 0);
    free(got);

    /* Consume in odd steps, checking the remainder each time. */
    size_t done = 0;
    size_t steps[] = {1, 9, OB_BLOCK_SIZE, 7, 3 * OB_BLOCK_SIZE, 12345};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        ob_consume(&ob, steps[i]);
        done += steps[i];
        got = collect(&ob, &l);
        CHECK_EQ_LL(l, total - done);
        CHECK_EQ_LL(ob.pending, total - done);
        CHECK(memcmp(got, want + done, total - done) == 0);
        free(got);
    }
    ob_consume(&ob, total - done);
    CHECK_EQ_LL(ob.pending, 0);
    CHECK_EQ_LL(ob.nblocks, 0);
    CHECK_EQ_LL(ob.alloc, 0);
    /* The buffer is reusable after draining. */
    rw_int(&ob, 42);
    CHECK_OB(&ob, ":42\r\n");
    ob_free(&ob);
    free(want);
}

static void test_iov_max(void) {
    /* ob_iov honours its max and offers the head first. */
    struct outbuf ob;
    ob_init(&ob);
    char blk[OB_BLOCK_SIZE];
    memset(blk, 'z', sizeof(blk));
    for (int i = 0; i < 5; i++) ob_append(&ob, blk, sizeof(blk));
    struct iovec iov[2];
    CHECK_EQ_LL(ob_iov(&ob, iov, 2), 2);
    CHECK(iov[0].iov_base == ob.head->data);
    ob_free(&ob);
    CHECK_EQ_LL(ob.pending, 0);
}

/* Shared strings: queued by reference between copied bytes, written in
 * place, and released exactly once whether sent or freed unsent. */
static int released;
static void release_one(void *ref) {
    (void)ref;
    released++;
}

static void test_shared(void) {
    static const char big[] = "$5\r\nhello\r\n";
    struct ob_shared sh = {big, sizeof(big) - 1, release_one, NULL};
    struct outbuf ob;
    ob_init(&ob);
    released = 0;
    ob_append(&ob, "+A\r\n", 4);
    ob_append_shared(&ob, &sh);
    ob_append(&ob, "+B\r\n", 4);
    ob_append_shared(&ob, &sh);
    void *h = ob_defer(&ob);
    ob_append(&ob, ":1\r\n", 4);
    ob_fill_deferred(&ob, h, "*1\r\n", 4);
    size_t len;
    char *all = collect(&ob, &len);
    CHECK(strcmp(all, "+A\r\n$5\r\nhello\r\n+B\r\n$5\r\nhello\r\n*1\r\n:1\r\n") == 0);
    CHECK_EQ_LL(ob.pending, len);
    free(all);
    /* Consume into the middle of the first shared block, then past it. */
    ob_consume(&ob, 4 + 3);
    CHECK_EQ_LL(released, 0);
    all = collect(&ob, &len);
    CHECK(strncmp(all, "\nhello\r\n+B", 10) == 0);
    free(all);
    ob_consume(&ob, 8);
    CHECK_EQ_LL(released, 1);
    ob_free(&ob);
    CHECK_EQ_LL(released, 2);
}

int main(void) {
    TEST_RUN(test_scalars);
    TEST_RUN(test_resp2_vs_resp3);
    TEST_RUN(test_long_simple_and_bulk);
    TEST_RUN(test_deferred);
    TEST_RUN(test_large_appends);
    TEST_RUN(test_iov_max);
    TEST_RUN(test_shared);
    return TEST_REPORT();
}
