/* watch.c - per-key WATCH versions and waiter FIFOs; see watch.h. */
#include "watch.h"

#include "../core/alloc.h"
#include "db.h"

#include <string.h>

void (*wk_signal_hook)(struct bwaiter *w, int again);
void (*wk_dirty_hook)(void *owner);
_Atomic long long wk_watched_keys;

/* Pops take what they are woken for, so one waiter at a time; readers
 * of a stream all see the same entries, so all of them. */
static const unsigned char wakes_all[WK_NKINDS] = {[WK_LIST] = 0, [WK_ZSET] = 0, [WK_STREAM] = 1};

static uint64_t wk_rehash(const struct hnode *n, void *ctx) {
    (void)ctx;
    return ((const struct wkey *)n)->hash;
}

static int wk_match(const struct hnode *n, const void *key) {
    const struct wkey *wk = (const struct wkey *)n;
    const struct keyref *k = key;
    return wk->db == k->db && wk->klen == k->klen && memcmp(wk->key, k->key, k->klen) == 0;
}

struct wkey *wk_find(const struct keyref *k) {
    struct shard *s = &ks.shards[k->shard];
    if (!s->wkeys) return NULL;
    struct hnode **link = ht_find_link(s->wkeys, k->hash, wk_match, k);
    return link ? (struct wkey *)*link : NULL;
}

struct wkey *wk_get(const struct keyref *k) {
    struct wkey *wk = wk_find(k);
    if (wk) return wk;
    struct shard *s = &ks.shards[k->shard];
    if (!s->wkeys) {
        s->wkeys = hk_malloc(sizeof(struct htable));
        ht_init(s->wkeys);
    }
    wk = hk_calloc(1, sizeof(*wk) + k->klen);
    wk->hash = k->hash;
    wk->db = k->db;
    wk->klen = k->klen;
    memcpy(wk->key, k->key, k->klen);
    ht_insert(s->wkeys, &wk->node, wk->hash, wk_rehash, NULL);
    return wk;
}

void wk_release(unsigned shard, struct wkey *wk) {
    if (wk->watchers || wk->head) return;
    struct shard *s = &ks.shards[shard];
    struct keyref k = {.db = wk->db, .shard = shard, .key = wk->key, .klen = wk->klen, .hash = wk->hash};
    struct hnode **link = ht_find_link(s->wkeys, wk->hash, wk_match, &k);
    if (link) ht_unlink(s->wkeys, link);
    hk_free(wk);
    if (s->wkeys->count == 0) {
        ht_release(s->wkeys);
        hk_free(s->wkeys);
        s->wkeys = NULL;
    } else {
        ht_maybe_shrink(s->wkeys, wk_rehash, NULL);
    }
}

uint64_t wk_watch(const struct keyref *k, void *owner, struct wwatcher **out) {
    struct wkey *wk = wk_get(k);
    struct wwatcher *w = hk_malloc(sizeof(*w));
    w->wk = wk;
    w->owner = owner;
    w->prev = NULL;
    w->next = wk->whead;
    if (wk->whead) wk->whead->prev = w;
    wk->whead = w;
    if (wk->watchers++ == 0) atomic_fetch_add_explicit(&wk_watched_keys, 1, memory_order_relaxed);
    *out = w;
    return wk->version;
}

void wk_unwatch(unsigned shard, struct wwatcher *w) {
    struct wkey *wk = w->wk;
    if (w->prev) w->prev->next = w->next;
    else wk->whead = w->next;
    if (w->next) w->next->prev = w->prev;
    hk_free(w);
    if (wk->watchers && --wk->watchers == 0) atomic_fetch_sub_explicit(&wk_watched_keys, 1, memory_order_relaxed);
    wk_release(shard, wk);
}

/* Tell every transaction watching wk that it changed. */
static void dirty_watchers(struct wkey *wk) {
    if (!wk_dirty_hook) return;
    for (struct wwatcher *w = wk->whead; w; w = w->next) wk_dirty_hook(w->owner);
}

struct bwaiter *wk_first(const struct wkey *wk, int kind) {
    if (!wk->nkind[kind]) return NULL;
    for (struct bwaiter *w = wk->head; w; w = w->next)
        if (w->kind == kind) return w;
    return NULL;
}

struct bwaiter *wk_wait(const struct keyref *k, uint64_t cid, int worker, int kind) {
    struct wkey *wk = wk_get(k);
    struct bwaiter *w = hk_calloc(1, sizeof(*w));
    w->wk = wk;
    w->cid = cid;
    w->worker = worker;
    w->kind = kind;
    w->prev = wk->tail;
    if (wk->tail) wk->tail->next = w;
    else wk->head = w;
    wk->tail = w;
    wk->nkind[kind]++;
    return w;
}

static void wk_signal(struct bwaiter *w) {
    int again = w->signaled;
    w->signaled = 1;
    if (wk_signal_hook) wk_signal_hook(w, again);
}

/* The first waiter with tag on wk, or NULL. */
static struct bwaiter *first_tagged(const struct wkey *wk, uint64_t tag) {
    for (struct bwaiter *w = wk->head; w; w = w->next)
        if (w->tag == tag) return w;
    return NULL;
}

void wk_set_tag(const struct keyref *k, uint64_t cid, uint64_t tag) {
    struct wkey *wk = wk_find(k);
    if (!wk) return;
    for (struct bwaiter *w = wk->tail; w; w = w->prev)
        if (w->cid == cid) {
            w->tag = tag;
            return;
        }
}

int wk_tag_busy(const struct keyref *k, uint64_t tag, uint64_t cid) {
    struct wkey *wk = wk_find(k);
    if (!wk || !wk->nkind[WK_STREAM]) return 0;
    int busy = 0;
    for (struct bwaiter *w = wk->head; w; w = w->next) {
        if (w->cid == cid) return busy;
        if (w->tag == tag && w->signaled) busy = 1;
    }
    return busy;
}

void wk_leave(unsigned shard, struct bwaiter *w) {
    struct wkey *wk = w->wk;
    int was_first = !wakes_all[w->kind] && wk_first(wk, w->kind) == w;
    /* A group reader that was woken and goes (served, timed out, gone)
     * hands what it left to the next reader of its group. */
    int pass_tag = w->tag && w->signaled && first_tagged(wk, w->tag) == w;
    if (w->prev) w->prev->next = w->next;
    else wk->head = w->next;
    if (w->next) w->next->prev = w->prev;
    else wk->tail = w->prev;
    wk->nkind[w->kind]--;
    if (was_first) {
        /* Only a key that still holds something has anything to pass on;
         * a write that fills it later signals the next waiter itself. */
        struct keyref k = {.db = wk->db, .shard = shard, .key = wk->key, .klen = wk->klen, .hash = wk->hash};
        struct bwaiter *n = wk_first(wk, w->kind);
        if (n && db_peek(&k)) wk_signal(n);
    }
    if (pass_tag) {
        struct bwaiter *n = first_tagged(wk, w->tag);
        if (n) wk_signal(n);
    }
    hk_free(w);
    wk_release(shard, wk);
}

/* Wake by each kind's rule: the first waiter of a one-at-a-time kind (it
 * passes the turn on when it leaves), every waiter of the others. */
static void wake(struct wkey *wk) {
    int first_done[WK_NKINDS] = {0};
    for (struct bwaiter *w = wk->head; w; w = w->next) {
        if (wakes_all[w->kind]) {
            wk_signal(w);
        } else if (!first_done[w->kind]) {
            first_done[w->kind] = 1;
            wk_signal(w);
        }
    }
}

/* The key may be gone: a group reader fails then (NOGROUP, WRONGTYPE),
 * so it is woken; every other waiter would only wait again. */
static void wake_group_readers(struct wkey *wk) {
    if (!wk->nkind[WK_STREAM]) return;
    for (struct bwaiter *w = wk->head; w; w = w->next)
        if (w->tag) wk_signal(w);
}

void wk_touch(struct shard *s, const struct keyref *k, int ready) {
    struct hnode **link = ht_find_link(s->wkeys, k->hash, wk_match, k);
    if (!link) return;
    struct wkey *wk = (struct wkey *)*link;
    wk->version++;
    if (wk->whead) dirty_watchers(wk);
    if (!wk->head) return;
    if (ready == 1) wake(wk);
    else if (ready == 0) wake_group_readers(wk);
}

void wk_touch_db(struct shard *s, int db, int ready, int (*exists)(const struct wkey *wk, void *arg), void *arg) {
    if (!s->wkeys) return;
    struct ht_iter it;
    ht_iter_init(&it, s->wkeys);
    struct hnode *n;
    while ((n = ht_iter_next(&it))) {
        struct wkey *wk = (struct wkey *)n;
        if (wk->db != db) continue;
        if (exists(wk, arg)) {
            wk->version++;
            if (wk->whead) dirty_watchers(wk);
            if (!ready && wk->head) wake_group_readers(wk);
        }
        if (ready && wk->head) wake(wk);
    }
}
