/* txn.c - a connection's MULTI queue and WATCH list; see txn.h. The
 * commands themselves (MULTI, EXEC, DISCARD, WATCH, UNWATCH) are in
 * src/cmd/multi.c; this file only keeps the state, for them and for the
 * connection's life cycle (RESET, close). */
#include "txn.h"

#include "../core/alloc.h"
#include "../store/watch.h"
#include "server.h"

#include <string.h>

static _Atomic long long nwatching;

unsigned long long txn_watching_clients(void) {
    long long n = atomic_load_explicit(&nwatching, memory_order_relaxed);
    return n < 0 ? 0 : (unsigned long long)n;
}

unsigned long long txn_watched_keys(void) {
    long long n = atomic_load_explicit(&wk_watched_keys, memory_order_relaxed);
    return n < 0 ? 0 : (unsigned long long)n;
}

/* Remove every watch record, taking each one's shard in turn (the caller
 * holds no shard). */
static void drop_records(struct txn *t) {
    for (int i = 0; i < t->nw; i++) {
        shard_lock(t->w[i].shard);
        wk_unwatch(t->w[i].shard, t->w[i].rec);
        shard_unlock(t->w[i].shard);
    }
    t->nw = 0;
}

/* On the owner's worker: the transaction is doomed, its watches serve no
 * purpose any more. */
static void drop_mail(struct worker *w, void *arg) {
    uint64_t *cid = arg;
    struct client *c = worker_find_client(w, *cid);
    hk_free(cid);
    if (!c || !c->txn) return;
    pthread_mutex_lock(&c->txn->mu);
    c->txn->drop_posted = 0;
    int dirty = atomic_load(&c->txn->dirty_cas);
    pthread_mutex_unlock(&c->txn->mu);
    if (!dirty) return; /* EXEC, UNWATCH or DISCARD got there first */
    /* The records go, the doom stays until EXEC, DISCARD or UNWATCH. */
    drop_records(c->txn);
}

/* The watch table's dirty hook: a writer's thread, the key's shard held. */
static void txn_dirty(void *owner) {
    struct txn *t = owner;
    pthread_mutex_lock(&t->mu);
    if (!atomic_load_explicit(&t->dirty_cas, memory_order_relaxed)) {
        atomic_store(&t->dirty_cas, 1);
        if (t->counted) {
            atomic_fetch_sub(&nwatching, 1);
            t->counted = 0;
        }
        if (!t->drop_posted && t->w_owner) {
            t->drop_posted = 1;
            uint64_t *cid = hk_malloc(sizeof(*cid));
            *cid = t->cid;
            worker_post(t->w_owner, drop_mail, cid);
        }
    }
    pthread_mutex_unlock(&t->mu);
}

void txn_init(void) { wk_dirty_hook = txn_dirty; }

struct txn *txn_of(struct client *c) {
    if (!c->txn) {
        struct txn *t = hk_calloc(1, sizeof(struct txn));
        pthread_mutex_init(&t->mu, NULL);
        t->cid = c->id;
        t->w_owner = c->w;
        c->txn = t;
    }
    return c->txn;
}

void txn_queue(struct client *c, const struct command *cmd) {
    struct txn *t = txn_of(c);
    /* A doomed transaction keeps nothing it is sent (Redis does not
     * either), though each command still answers QUEUED. */
    if (t->dirty_exec || atomic_load_explicit(&t->dirty_cas, memory_order_relaxed)) return;
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 8;
        t->cmds = hk_realloc(t->cmds, (size_t)t->cap * sizeof(*t->cmds));
    }
    size_t bytes = 0;
    for (int i = 0; i < c->argc; i++) bytes += c->argv[i].len;
    size_t sz = (size_t)c->argc * sizeof(hk_slice) + bytes;
    hk_slice *argv = hk_malloc(sz ? sz : 1);
    char *p = (char *)(argv + c->argc);
    for (int i = 0; i < c->argc; i++) {
        memcpy(p, c->argv[i].ptr, c->argv[i].len);
        argv[i].ptr = p;
        argv[i].len = c->argv[i].len;
        p += c->argv[i].len;
    }
    struct txn_cmd *q = &t->cmds[t->n++];
    q->cmd = cmd;
    q->argc = c->argc;
    q->argv = argv;
    t->flags |= cmd->flags;
    t->mem += sz;
}

void txn_clear_queue(struct client *c) {
    struct txn *t = c->txn;
    if (!t) return;
    for (int i = 0; i < t->n; i++) hk_free(t->cmds[i].argv);
    hk_free(t->cmds);
    t->cmds = NULL;
    t->n = t->cap = 0;
    t->flags = 0;
    t->mem = 0;
    t->active = 0;
    t->dirty_exec = 0;
}

void txn_watch_key(struct client *c, const struct keyref *k) {
    struct txn *t = txn_of(c);
    /* Doomed already: as in Redis, nothing more is watched. */
    if (atomic_load_explicit(&t->dirty_cas, memory_order_relaxed)) return;
    for (int i = 0; i < t->nw; i++) {
        struct wkey *wk = t->w[i].wk;
        if (t->w[i].db == k->db && wk->klen == k->klen && memcmp(wk->key, k->key, k->klen) == 0) return;
    }
    if (t->nw == t->wcap) {
        t->wcap = t->wcap ? t->wcap * 2 : 4;
        t->w = hk_realloc(t->w, (size_t)t->wcap * sizeof(*t->w));
    }
    struct txn_watch *w = &t->w[t->nw++];
    w->version = wk_watch(k, t, &w->rec);
    w->wk = w->rec->wk;
    w->shard = k->shard;
    w->db = k->db;
    pthread_mutex_lock(&t->mu);
    if (!t->counted && !atomic_load_explicit(&t->dirty_cas, memory_order_relaxed)) {
        t->counted = 1;
        atomic_fetch_add(&nwatching, 1);
    }
    pthread_mutex_unlock(&t->mu);
}

int txn_watch_dirty(struct client *c) {
    struct txn *t = c->txn;
    if (!t) return 0;
    if (atomic_load(&t->dirty_cas)) return 1;
    for (int i = 0; i < t->nw; i++)
        if (t->w[i].wk->version != t->w[i].version) return 1;
    return 0;
}

/* After the records are gone no writer can reach the state: the doom and
 * the count reset. */
static void unwatch_done(struct txn *t) {
    t->nw = 0;
    pthread_mutex_lock(&t->mu);
    if (t->counted) {
        atomic_fetch_sub(&nwatching, 1);
        t->counted = 0;
    }
    atomic_store(&t->dirty_cas, 0);
    pthread_mutex_unlock(&t->mu);
}

void txn_unwatch_locked(struct client *c) {
    struct txn *t = c->txn;
    if (!t) return;
    for (int i = 0; i < t->nw; i++) wk_unwatch(t->w[i].shard, t->w[i].rec);
    unwatch_done(t);
}

void txn_unwatch_all(struct client *c) {
    struct txn *t = c->txn;
    if (!t) return;
    drop_records(t);
    unwatch_done(t);
}

void txn_free(struct client *c) {
    struct txn *t = c->txn;
    if (!t) return;
    txn_unwatch_all(c);
    txn_clear_queue(c);
    hk_free(t->w);
    pthread_mutex_destroy(&t->mu);
    hk_free(t);
    c->txn = NULL;
}
