/* test_review.c - regression tests for bugs found by the foundation review
 * (one test per bug, named after what broke). Covers the pieces that can be
 * driven without a running server: the RESP parser and the keyspace.
 * Connection-level bugs (backpressure, CLIENT PAUSE, start-up) are covered
 * by tests/integration/test_review.py. */
#include "proto/outbuf.h"
#include "proto/resp.h"
#include "store/db.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>

static const struct resp_limits authed = {512LL * 1024 * 1024, 1};

static int arg_is(const struct resp_req *r, const char *buf, int i, const char *s) {
    return i < r->argc && r->len[i] == strlen(s) && memcmp(buf + r->off[i], s, r->len[i]) == 0;
}

/* CLIENT PAUSE leaves a parsed request in the buffer and parses it again
 * when the pause ends. Inline requests are unescaped in place, so a second
 * split used to see the already-unescaped bytes: quoted arguments turned
 * into "unbalanced quotes" or different arguments. */
static void test_inline_reparse_after_pause(void) {
    char buf[] = "SET k \"hello world\" \"a\\\\x41\"\r\nGET k\r\n";
    struct resp_req r;
    resp_req_init(&r);
    CHECK_EQ_LL(resp_parse(&r, buf, sizeof(buf) - 1, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 4);
    size_t pos = r.pos;
    /* The caller did not consume the request: parse it again. */
    CHECK_EQ_LL(resp_parse(&r, buf, sizeof(buf) - 1, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 4);
    CHECK(arg_is(&r, buf, 0, "SET"));
    CHECK(arg_is(&r, buf, 1, "k"));
    CHECK(arg_is(&r, buf, 2, "hello world"));
    CHECK(arg_is(&r, buf, 3, "a\\x41"));
    CHECK_EQ_LL(r.pos, pos);
    resp_req_free(&r);
}

/* The same for a multibulk request (which never had the bug): parsing a
 * completed request again gives the same arguments and position. */
static void test_multibulk_reparse_after_pause(void) {
    char buf[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nvv\r\n";
    struct resp_req r;
    resp_req_init(&r);
    CHECK_EQ_LL(resp_parse(&r, buf, sizeof(buf) - 1, &authed), RESP_DONE);
    CHECK_EQ_LL(resp_parse(&r, buf, sizeof(buf) - 1, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 3);
    CHECK(arg_is(&r, buf, 2, "vv"));
    CHECK_EQ_LL(r.pos, sizeof(buf) - 1);
    resp_req_free(&r);
}

/* Active expiry shrank the table of the database it stopped in, not the one
 * it had emptied: after expiring every key of db 0 and running out of
 * budget in db 1, db 0 kept its whole bucket array for good (no expiring
 * keys left there, so the cycle never came back to it). */
static void test_active_expire_shrinks_the_emptied_table(void) {
    ks_init(4, 1);
    shard_lock(0);
    char key[32];
    for (int i = 0; i < 1000; i++) {
        struct keyref k;
        int n = snprintf(key, sizeof(key), "gone:%d", i);
        keyref_init(&k, 0, key, (size_t)n);
        db_put(&k, kv_new_str(key, (size_t)n, "v", 1, 5), KEV_SET);
        n = snprintf(key, sizeof(key), "stay:%d", i);
        keyref_init(&k, 1, key, (size_t)n);
        db_put(&k, kv_new_str(key, (size_t)n, "v", 1, 1LL << 50), KEV_SET);
    }
    CHECK(ks.shards[0].tables[0].buckets != NULL);
    CHECK_EQ_LL(shard_active_expire(0, 1000, 1500), 1000);
    CHECK_EQ_LL(ks.shards[0].tables[0].count, 0);
    CHECK(ks.shards[0].tables[0].buckets == NULL);
    CHECK_EQ_LL(ks.shards[0].tables[1].count, 1000);
    shard_unlock(0);
}

int main(void) {
    TEST_RUN(test_inline_reparse_after_pause);
    TEST_RUN(test_multibulk_reparse_after_pause);
    TEST_RUN(test_active_expire_shrinks_the_emptied_table);
    return TEST_REPORT();
}
