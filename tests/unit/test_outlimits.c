/* test_outlimits.c - client-output-buffer-limit applies the limits of the
 * client's class (src/server/dispatch.c): normal clients the normal ones,
 * pub/sub subscribers the pubsub ones, replicas the replica ones; a hard
 * limit closes at once, a soft one after its seconds. Also that a reply of
 * many deferred headers costs its bytes, not a block per header, so the
 * backpressure mark (which counts pending bytes) means reply bytes. */
#include "proto/outbuf.h"
#include "proto/reply.h"
#include "server/config.h"
#include "server/server.h"
#include "test.h"

#include <string.h>

static struct worker w;

static void set_class(int cls, long long hard, long long soft, long long secs) {
    atomic_store(&cfg.obl[cls][0], hard);
    atomic_store(&cfg.obl[cls][1], soft);
    atomic_store(&cfg.obl[cls][2], secs);
}

static void client_init(struct client *c, unsigned flags, size_t pending) {
    memset(c, 0, sizeof(*c));
    c->w = &w;
    c->flags = flags;
    strcpy(c->addr, "127.0.0.1:1");
    c->out.pending = pending;
}

static void test_class_limits(void) {
    set_class(OBL_NORMAL, 0, 0, 0);
    set_class(OBL_PUBSUB, 1000, 0, 0);
    set_class(OBL_REPLICA, 5000, 0, 0);
    struct client c;
    /* A normal client is not held to the pub/sub limit. */
    client_init(&c, 0, 2000);
    client_check_output_limits(&c);
    CHECK(!(c.flags & CLIENT_CLOSE_ASAP));
    /* A subscriber is. */
    client_init(&c, CLIENT_PUBSUB, 2000);
    client_check_output_limits(&c);
    CHECK(c.flags & CLIENT_CLOSE_ASAP);
    client_init(&c, CLIENT_PUBSUB, 900);
    client_check_output_limits(&c);
    CHECK(!(c.flags & CLIENT_CLOSE_ASAP));
    /* A replica has its own, larger limit. */
    client_init(&c, CLIENT_REPLICA, 2000);
    client_check_output_limits(&c);
    CHECK(!(c.flags & CLIENT_CLOSE_ASAP));
    client_init(&c, CLIENT_REPLICA, 6000);
    client_check_output_limits(&c);
    CHECK(c.flags & CLIENT_CLOSE_ASAP);
    CHECK_EQ_LL(stat_get(&w.stats.client_outbuf_limit_disconnections), 2);
}

static void test_soft_limit(void) {
    set_class(OBL_PUBSUB, 0, 100, 2);
    struct client c;
    client_init(&c, CLIENT_PUBSUB, 500);
    w.now_ms = 10000;
    client_check_output_limits(&c);
    CHECK(!(c.flags & CLIENT_CLOSE_ASAP));
    CHECK_EQ_LL(c.obuf_soft_since_ms, 10000);
    CHECK(!client_soft_limit_passed(&c, 11000));
    CHECK(client_soft_limit_passed(&c, 12500));
    /* Back under the soft limit: the clock stops. */
    c.out.pending = 50;
    client_check_output_limits(&c);
    CHECK_EQ_LL(c.obuf_soft_since_ms, 0);
    CHECK(!client_soft_limit_passed(&c, 20000));
    /* The normal class has no soft limit here. */
    client_init(&c, 0, 500);
    client_check_output_limits(&c);
    CHECK_EQ_LL(c.obuf_soft_since_ms, 0);
}

static void test_deferred_headers_cost_their_bytes(void) {
    struct outbuf ob;
    ob_init(&ob);
    /* 2000 small replies each with a deferred header: one block's worth of
     * bytes, not 2000 blocks. */
    size_t expect = 0;
    for (int i = 0; i < 2000; i++) {
        void *h = rw_defer(&ob);
        rw_int(&ob, 1);
        rw_fill_agg(&ob, h, '*', 1);
        expect += 4 + 4; /* "*1\r\n" ":1\r\n" */
    }
    CHECK_EQ_LL(ob.pending, expect);
    CHECK(ob.nblocks <= (int)(expect / OB_BLOCK_SIZE) + 2);
    CHECK(ob.alloc < expect + 2 * OB_BLOCK_SIZE);
    ob_free(&ob);
}

int main(void) {
    TEST_RUN(test_class_limits);
    TEST_RUN(test_soft_limit);
    TEST_RUN(test_deferred_headers_cost_their_bytes);
    return TEST_REPORT();
}
