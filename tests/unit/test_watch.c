/* test_watch.c - unit tests of the write hook's per-key signals
 * (src/store/watch.c through db_written): a WATCHed key's version moves on
 * every change to that very key and never on a write to another key of the
 * same shard; expiry (lazy and active), deletion, FLUSHDB and SWAPDB all
 * count; waiters are woken by their kind's rule (first list or sorted-set
 * waiter, every stream reader) and pass the turn on when they leave. */
#include "store/db.h"
#include "store/watch.h"
#include "test.h"

#include <stdio.h>
#include <string.h>

#define NSHARDS 4

/* Two distinct keys that land in the same shard. */
static void same_shard_keys(char *a, char *b, size_t size) {
    snprintf(a, size, "key:0");
    unsigned want = ks_shard_of(a, strlen(a));
    for (int i = 1;; i++) {
        snprintf(b, size, "key:%d", i);
        if (ks_shard_of(b, strlen(b)) == want) return;
    }
}

static void put(const struct keyref *k, const char *v, long long expire) {
    db_put(k, kv_new_str(k->key, k->klen, v, strlen(v), expire), KEV_SET);
}

static void count_dirty(void *owner) { ++*(int *)owner; }

static void test_version_is_per_key(void) {
    char a[32], b[32];
    same_shard_keys(a, b, sizeof(a));
    struct keyref ka, kb;
    keyref_init(&ka, 0, a, strlen(a));
    keyref_init(&kb, 0, b, strlen(b));
    CHECK_EQ_LL(ka.shard, kb.shard);
    shard_lock(ka.shard);
    struct wwatcher *ww;
    int dirtied = 0;
    wk_dirty_hook = count_dirty;
    uint64_t v0 = wk_watch(&ka, &dirtied, &ww);
    struct wkey *wk = ww->wk;
    /* Writes to another key of the same shard do not count. */
    put(&kb, "x", -1);
    db_written(&kb, KEV_APPEND);
    db_delete(&kb, 0, KEV_DEL);
    CHECK_EQ_LL(wk->version, v0);
    /* Nor does a change the caller reported already (KEV_NONE). */
    db_written(&ka, KEV_NONE);
    CHECK_EQ_LL(wk->version, v0);
    /* Every change to the key itself does. */
    put(&ka, "1", -1);
    CHECK(wk->version > v0);
    uint64_t v1 = wk->version;
    db_set_expire(&ka, db_find(&ka, 0), 1000000, KEV_EXPIRE);
    CHECK(wk->version > v1);
    uint64_t v2 = wk->version;
    db_delete(&ka, 0, KEV_DEL);
    CHECK(wk->version > v2);
    /* A delete of a key that is not there changes nothing. */
    uint64_t v3 = wk->version;
    CHECK(!db_delete(&ka, 0, KEV_DEL));
    CHECK_EQ_LL(wk->version, v3);
    /* The watcher heard of each of the three changes. */
    CHECK_EQ_LL(dirtied, 3);
    CHECK_EQ_LL(wk_watched_keys, 1);
    wk_unwatch(ka.shard, ww);
    CHECK_EQ_LL(wk_watched_keys, 0);
    wk_dirty_hook = NULL;
    CHECK(ks.shards[ka.shard].wkeys == NULL);
    shard_unlock(ka.shard);
}

static void test_expiry_counts(void) {
    struct keyref k;
    keyref_init(&k, 0, "exp", 3);
    shard_lock(k.shard);
    put(&k, "v", 100);
    struct wwatcher *ww;
    uint64_t v0 = wk_watch(&k, NULL, &ww);
    struct wkey *wk = ww->wk;
    /* Lazy: a lookup after the deadline deletes and reports it. */
    CHECK(db_find(&k, 99) != NULL);
    CHECK_EQ_LL(wk->version, v0);
    CHECK(db_find(&k, 100) == NULL);
    CHECK(wk->version > v0);
    /* Active: the expire cycle reports each key it reaps. */
    put(&k, "v", 100);
    uint64_t v1 = wk->version;
    CHECK_EQ_LL(shard_active_expire(k.shard, 200, 1000), 1);
    CHECK(wk->version > v1);
    wk_unwatch(k.shard, ww);
    shard_unlock(k.shard);
}

static void lock_all(void) {
    for (unsigned s = 0; s < ks.nshards; s++) shard_lock(s);
}
static void unlock_all(void) {
    for (unsigned s = ks.nshards; s-- > 0;) shard_unlock(s);
}

static void test_flush_and_swapdb(void) {
    struct keyref here, absent, other;
    keyref_init(&here, 0, "here", 4);
    keyref_init(&absent, 0, "absent", 6);
    keyref_init(&other, 1, "moved", 5);
    lock_all();
    put(&here, "v", -1);
    put(&other, "v", -1);
    struct wwatcher *wwh, *wwa, *wwo;
    uint64_t vh = wk_watch(&here, NULL, &wwh), va = wk_watch(&absent, NULL, &wwa);
    struct wkey *wh = wwh->wk, *wa = wwa->wk;
    /* FLUSHDB touches watched keys that held a value, not the others. */
    ks_flushed_free(ks_flush(0));
    CHECK(wh->version > vh);
    CHECK_EQ_LL(wa->version, va);
    /* SWAPDB touches a watched key present in either database. */
    struct keyref moved0;
    keyref_init(&moved0, 0, "moved", 5);
    uint64_t vo = wk_watch(&moved0, NULL, &wwo);
    struct wkey *wo = wwo->wk;
    va = wa->version;
    ks_swapdb(0, 1);
    CHECK(wo->version > vo);
    CHECK_EQ_LL(wa->version, va);
    CHECK(db_find(&moved0, 0) != NULL);
    wk_unwatch(here.shard, wwh);
    wk_unwatch(absent.shard, wwa);
    wk_unwatch(moved0.shard, wwo);
    ks_flushed_free(ks_flush(-1));
    unlock_all();
}

/* The wake-up hook records who was signaled, in order; a waiter already
 * signaled is reported again (`again`: its pending re-run counts for the
 * new write too) but not recorded twice. */
static uint64_t woken[32];
static int nwoken, nagain;
static void record(struct bwaiter *w, int again) {
    if (again) nagain++;
    else woken[nwoken++] = w->cid;
}

static int was_woken(uint64_t cid) {
    for (int i = 0; i < nwoken; i++)
        if (woken[i] == cid) return 1;
    return 0;
}

static void test_wake_rules(void) {
    wk_signal_hook = record;
    nwoken = 0;
    struct keyref k;
    keyref_init(&k, 0, "q", 1);
    shard_lock(k.shard);
    struct bwaiter *l1 = wk_wait(&k, 1, 0, WK_LIST);
    struct bwaiter *l2 = wk_wait(&k, 2, 0, WK_LIST);
    struct bwaiter *z3 = wk_wait(&k, 3, 0, WK_ZSET);
    wk_wait(&k, 4, 0, WK_STREAM);
    wk_wait(&k, 5, 0, WK_STREAM);
    /* A deletion leaves nothing to serve: nobody is woken. */
    db_written(&k, KEV_DEL);
    CHECK_EQ_LL(nwoken, 0);
    /* A push: the first list waiter, the first sorted-set waiter, and
     * every stream reader. (The key holds a value from here on, so a
     * waiter that leaves has something to pass on.) */
    put(&k, "v", -1);
    CHECK_EQ_LL(nwoken, 4);
    CHECK(was_woken(1) && !was_woken(2) && was_woken(3) && was_woken(4) && was_woken(5));
    /* Already signaled waiters are not signaled again, only told. */
    nagain = 0;
    db_written(&k, KEV_RPUSH);
    CHECK_EQ_LL(nwoken, 4);
    CHECK_EQ_LL(nagain, 4);
    /* The first list waiter leaves (served): the turn passes to the next. */
    wk_leave(k.shard, l1);
    CHECK_EQ_LL(nwoken, 5);
    CHECK_EQ_LL(woken[4], 2);
    CHECK(l2->signaled);
    /* A re-run that must keep waiting clears its flag and can be woken again. */
    z3->signaled = 0;
    db_written(&k, KEV_ZADD);
    CHECK_EQ_LL(woken[nwoken - 1], 3);
    /* Everyone leaves: the key's entry goes. */
    db_delete(&k, 0, KEV_DEL);
    struct wkey *wk = wk_find(&k);
    while (wk && wk->head) {
        wk_leave(k.shard, wk->head);
        wk = wk_find(&k);
    }
    CHECK(wk_find(&k) == NULL);
    CHECK(ks.shards[k.shard].wkeys == NULL);
    shard_unlock(k.shard);
    wk_signal_hook = NULL;
}

static void test_fifo_order(void) {
    wk_signal_hook = record;
    nwoken = 0;
    struct keyref k;
    keyref_init(&k, 0, "fifo", 4);
    shard_lock(k.shard);
    struct bwaiter *w[5];
    for (int i = 0; i < 5; i++) w[i] = wk_wait(&k, (uint64_t)(10 + i), 0, WK_LIST);
    /* Each served waiter hands over to the next, in arrival order, while
     * the key holds something to serve. */
    put(&k, "v", -1);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_LL(woken[i], 10 + i);
        wk_leave(k.shard, w[i]);
    }
    CHECK_EQ_LL(nwoken, 5);
    CHECK(wk_find(&k) == NULL);
    db_delete(&k, 0, KEV_DEL);
    /* An empty key has nothing to pass on: a leaving first waiter wakes
     * nobody (the write that fills the key will). */
    nwoken = 0;
    struct bwaiter *a = wk_wait(&k, 20, 0, WK_LIST);
    wk_wait(&k, 21, 0, WK_LIST);
    wk_leave(k.shard, a);
    CHECK_EQ_LL(nwoken, 0);
    put(&k, "v", -1);
    CHECK_EQ_LL(nwoken, 1);
    CHECK_EQ_LL(woken[0], 21);
    wk_leave(k.shard, wk_find(&k)->head);
    CHECK(wk_find(&k) == NULL);
    db_delete(&k, 0, KEV_DEL);
    shard_unlock(k.shard);
    wk_signal_hook = NULL;
}

int main(void) {
    ks_init(2, NSHARDS);
    TEST_RUN(test_version_is_per_key);
    TEST_RUN(test_expiry_counts);
    TEST_RUN(test_flush_and_swapdb);
    TEST_RUN(test_wake_rules);
    TEST_RUN(test_fifo_order);
    return TEST_REPORT();
}
