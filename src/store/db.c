/* db.c - databases, shards, lookups and expiry; see db.h. */
#include "db.h"

#include "../core/alloc.h"
#include "hfe.h"
#include "lockset.h"
#include "watch.h"
#include "../core/hash.h"
#include "../core/util.h"

#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct keyspace ks;
_Thread_local struct store_stats *store_stats_sink;
_Thread_local struct db_sink *db_sink;
_Thread_local int store_touch = 1;
_Thread_local int store_no_expire;
_Thread_local long long store_now_ms;

int (*db_free_hook)(struct kv *e, int why);

void db_free_entry(struct kv *e, int why) {
    if (why != DB_FREE_SYNC && db_free_hook && db_free_hook(e, why)) return;
    kv_free(e);
}

long long kv_idle_ms(const struct kv *e, long long now_ms) {
    uint32_t now = lru_clock(now_ms), then = kv_clock(e);
    uint32_t d = now >= then ? now - then : (LRU_CLOCK_MAX - then) + now;
    return (long long)d * 1000;
}

_Atomic int store_lfu;
_Atomic long long store_lfu_log_factor = 10, store_lfu_decay_time = 1;

static inline uint32_t lfu_minutes(long long now_ms) { return (uint32_t)((now_ms / 60000) & 0xffff); }

uint32_t lfu_clock_with(long long now_ms, unsigned freq) {
    return (lfu_minutes(now_ms) << 8) | (freq > 255 ? 255 : freq);
}

unsigned kv_lfu_freq(const struct kv *e, long long now_ms) {
    uint32_t clk = kv_clock(e);
    uint32_t then = clk >> 8, counter = clk & 0xff, now = lfu_minutes(now_ms);
    uint32_t elapsed = now >= then ? now - then : 65535 - then + now;
    long long decay = atomic_load_explicit(&store_lfu_decay_time, memory_order_relaxed);
    uint32_t periods = decay > 0 ? (uint32_t)(elapsed / (unsigned long long)decay) : 0;
    return periods >= counter ? 0 : counter - periods;
}

void kv_clock_restore(struct kv *e, long long now_ms, long long idle_s, long long freq) {
    if (atomic_load_explicit(&store_lfu, memory_order_relaxed)) {
        if (freq >= 0) kv_set_clock(e, lfu_clock_with(now_ms, (unsigned)freq));
    } else if (idle_s >= 0) {
        long long at = (long long)lru_clock(now_ms) - idle_s;
        if (at < 0) at += LRU_CLOCK_MAX;
        kv_set_clock(e, (uint32_t)((unsigned long long)at & LRU_CLOCK_MAX));
    }
}

uint32_t kv_clock_new(long long now_ms) {
    if (atomic_load_explicit(&store_lfu, memory_order_relaxed)) return lfu_clock_with(now_ms, LFU_INIT_VAL);
    return lru_clock(now_ms);
}

void kv_clock_touch(struct kv *e, long long now_ms) {
    if (!atomic_load_explicit(&store_lfu, memory_order_relaxed)) {
        kv_set_clock(e, lru_clock(now_ms));
        return;
    }
    unsigned counter = kv_lfu_freq(e, now_ms);
    if (counter < 255) {
        long long factor = atomic_load_explicit(&store_lfu_log_factor, memory_order_relaxed);
        double base = counter > LFU_INIT_VAL ? (double)(counter - LFU_INIT_VAL) : 0.0;
        double p = 1.0 / (base * (double)factor + 1.0);
        double r = (double)(hk_rand64() >> 11) * (1.0 / 9007199254740992.0);
        if (r < p) counter++;
    }
    kv_set_clock(e, lfu_clock_with(now_ms, counter));
}

unsigned shard_sample(unsigned si, int db, int volatile_only, unsigned n, void (*fn)(struct kv *e, void *ctx),
                      void *ctx) {
    HK_ASSERT_HELD(si);
    struct shard *s = &ks.shards[si];
    struct ktable *t = &s->tables[db];
    if (!t->count || !n || (volatile_only && !s->nexpires[db])) return 0;
    /* Never more than the database holds (draws repeat entries). */
    uint64_t have = volatile_only ? s->nexpires[db] : t->count;
    if (n > have) n = (unsigned)have;
    unsigned seen = 0;
    /* Empty draws and chains of keys without a TTL cost tries, so a
     * database of few volatile keys cannot hold the caller long. */
    for (unsigned long long tries = (unsigned long long)n * (volatile_only ? 10 : 2); seen < n && tries; tries--) {
        struct kv *e = kt_random_bucket(t, hk_rand64());
        for (; e && seen < n; e = kt_next(e)) {
            if (volatile_only && !kv_has_expire(e)) continue;
            fn(e, ctx);
            seen++;
        }
    }
    return seen;
}


static uint64_t kv_rehash(const struct kv *e, void *ctx) {
    (void)ctx;
    return hk_hash(kv_key(e), kv_keylen(e));
}

void ks_init(int ndb, unsigned nshards) {
    ks.ndb = ndb;
    ks.nshards = nshards;
    ls_nshards = nshards;
    ks.shard_bits = 0;
    while ((1u << ks.shard_bits) < nshards) ks.shard_bits++;
    ks.shards = aligned_alloc(64, sizeof(struct shard) * nshards);
    for (unsigned i = 0; i < nshards; i++) {
        struct shard *s = &ks.shards[i];
        memset(s, 0, sizeof(*s));
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
        pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
        pthread_mutex_init(&s->lock, &a);
        pthread_mutexattr_destroy(&a);
        s->tables = hk_calloc((size_t)ndb, sizeof(struct ktable));
        s->nexpires = hk_calloc((size_t)ndb, sizeof(uint64_t));
    }
}

void keyref_init(struct keyref *k, int db, const char *key, size_t klen) {
    k->db = db;
    k->key = key;
    k->klen = klen;
    k->shard = ks_shard_of(key, klen);
    k->hash = hk_hash(key, klen);
}

static inline void sink_add(_Atomic unsigned long long *field, unsigned long long n) {
    atomic_store_explicit(field, atomic_load_explicit(field, memory_order_relaxed) + n, memory_order_relaxed);
}
#define SINK(f, n)                                                                                               \
    do {                                                                                                         \
        if (store_stats_sink) sink_add(&store_stats_sink->f, (n));                                              \
    } while (0)

#ifdef HK_DEBUG
/* The shards this thread holds, one bit each (shards <= 65536). */
static _Thread_local uint64_t held_bits[65536 / 64];

int shard_held(unsigned s) { return (held_bits[s / 64] >> (s % 64)) & 1; }
static inline void mark_held(unsigned s, int on) {
    if (on) held_bits[s / 64] |= 1ULL << (s % 64);
    else held_bits[s / 64] &= ~(1ULL << (s % 64));
}

void hk_assert_fail(const char *what, const char *file, int line) {
    fprintf(stderr, "assertion failed: %s (%s:%d)\n", what, file, line);
    abort();
}
#else
static inline void mark_held(unsigned s, int on) {
    (void)s;
    (void)on;
}
#endif

#ifdef HK_LOCK_STATS
static long long lock_clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
#endif

void shard_lock(unsigned s) {
#ifdef HK_LOCK_STATS
    /* Contention accounting, in instrumented builds only: an uncontended
     * lock costs one extra trylock, a contended one two clock reads. */
    if (pthread_mutex_trylock(&ks.shards[s].lock) != 0) {
        long long t0 = lock_clock_ns();
        pthread_mutex_lock(&ks.shards[s].lock);
        SINK(lock_contended, 1);
        SINK(lock_wait_ns, (unsigned long long)(lock_clock_ns() - t0));
    }
#else
    pthread_mutex_lock(&ks.shards[s].lock);
#endif
    mark_held(s, 1);
}

_Atomic int ls_wait_abort;
_Atomic int ls_escalating;

/* A deadline `ms` milliseconds from now, for pthread_mutex_timedlock. */
static void deadline_in(struct timespec *ts, long ms) {
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_nsec += ms * 1000 * 1000;
    while (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* Take shard s, waiting in slices of slice_ms and looking between them:
 * 0 when `abortable` and a script turned busy (ls_wait_abort), -1 when
 * `yields` and a script escalates (lockset.h), 1 once s is held. */
static int lock_sliced(unsigned s, long slice_ms, int abortable, int yields) {
    pthread_mutex_t *m = &ks.shards[s].lock;
    if (pthread_mutex_trylock(m) != 0) {
#ifdef HK_LOCK_STATS
        long long t0 = lock_clock_ns();
#endif
        for (;;) {
            if (abortable && atomic_load_explicit(&ls_wait_abort, memory_order_relaxed)) return 0;
            if (yields && atomic_load_explicit(&ls_escalating, memory_order_acquire)) return -1;
            struct timespec ts;
            deadline_in(&ts, slice_ms);
            if (pthread_mutex_timedlock(m, &ts) == 0) break;
        }
#ifdef HK_LOCK_STATS
        SINK(lock_contended, 1);
        SINK(lock_wait_ns, (unsigned long long)(lock_clock_ns() - t0));
#endif
    }
    mark_held(s, 1);
    return 1;
}

int shard_lock_abortable(unsigned s) { return lock_sliced(s, 20, 1, 0); }

int shard_lock_yielding(unsigned s, int abortable) { return lock_sliced(s, 2, abortable, 1); }

void shard_escalation_wait(void) {
    while (atomic_load_explicit(&ls_escalating, memory_order_acquire)) {
        struct timespec ts = {0, 100 * 1000};
        nanosleep(&ts, NULL);
    }
}

int shard_lock_escalate(unsigned s, long max_ms) {
    if (shard_trylock(s)) return 1;
    atomic_fetch_add_explicit(&ls_escalating, 1, memory_order_acq_rel);
    long long until = hk_mstime() + max_ms;
    int got = 0;
    for (;;) {
        if (pthread_mutex_trylock(&ks.shards[s].lock) == 0) {
            got = 1;
            break;
        }
        if (hk_mstime() >= until) break;
        struct timespec ts = {0, 50 * 1000};
        nanosleep(&ts, NULL);
    }
    atomic_fetch_sub_explicit(&ls_escalating, 1, memory_order_acq_rel);
    if (got) mark_held(s, 1);
    return got;
}

int shard_trylock(unsigned s) {
    if (pthread_mutex_trylock(&ks.shards[s].lock) != 0) return 0;
    mark_held(s, 1);
    return 1;
}

void shard_unlock(unsigned s) {
    mark_held(s, 0);
    pthread_mutex_unlock(&ks.shards[s].lock);
}

static inline struct ktable *table_of(const struct keyref *k) { return &ks.shards[k->shard].tables[k->db]; }

static inline int key_match(const struct kv *e, const void *key) {
    const struct keyref *k = key;
    return kv_keylen(e) == k->klen && memcmp(kv_key(e), k->key, k->klen) == 0;
}

/* Link pointing at the entry for k, or NULL. */
static inline slab_h *find_link(const struct keyref *k) {
    HK_ASSERT_HELD(k->shard);
    return kt_find_link(table_of(k), k->hash, key_match, k);
}

static void unlink_entry(const struct keyref *k, slab_h *link) {
    struct kv *e = slab_ptr(*link);
    struct shard *s = &ks.shards[k->shard];
    if (kv_has_expire(e)) s->nexpires[k->db]--;
    if (kv_hfe(e)) hfe_untrack(k);
    kt_unlink(&s->tables[k->db], link);
}

uint32_t db_snap_mark;
void (*db_snap_hook)(const struct keyref *k, struct kv *e);
void (*db_snap_drain)(void);

/* k's entry in its chain of t (not empty), read without moving anything. */
static struct kv *chain_find(struct ktable *t, const struct keyref *k) {
    slab_h l = *kt_slot(t, k->hash);
    for (struct kv *e = l ? slab_ptr(l) : NULL; e; e = kt_next(e))
        if (key_match(e, k)) return e;
    return NULL;
}

struct kv *db_peek_still(const struct keyref *k) {
    struct ktable *t = table_of(k);
    return t->buckets ? chain_find(t, k) : NULL;
}

/* A snapshot still has entries of this shard to save: an entry about to
 * change is saved first, as it was. */
static void __attribute__((noinline)) snap_before_write(const struct keyref *k) {
    struct kv *e = db_peek_still(k);
    if (e && kv_snap(e) != db_snap_mark) db_snap_hook(k, e);
}

void db_written(const struct keyref *k, int ev) {
    HK_ASSERT_HELD(k->shard);
    if (ev == KEV_NONE) return;
    struct shard *s = &ks.shards[k->shard];
    if (__builtin_expect(s->snap != NULL, 0) && ev < KEV_NEW) snap_before_write(k);
    if (s->wkeys) wk_touch(s, k, kev_info[ev].ready);
    struct db_sink *sink = db_sink;
    if (ev < KEV_EXPIRED || ev > KEV_DEL_EMPTIED) {
        SINK(dirty, 1);
        if (!sink) return;
        sink->dirty++;
        if (!sink->each) return;
    } else if (!sink) {
        return;
    }
    sink->on_event(sink, k, ev);
}

void db_dirty_add(long long n) {
    SINK(dirty, (unsigned long long)n);
    if (db_sink) db_sink->dirty += (unsigned long long)n;
}

void db_notice(const struct keyref *k, int ev) {
    struct db_sink *sink = db_sink;
    if (__builtin_expect(sink != NULL && sink->each, 0)) sink->on_event(sink, k, ev);
}

/* The write hook for a change to whole databases (FLUSH*, SWAPDB): one
 * write, no key (on_event gets k NULL). Watched keys are signaled by the
 * caller, which knows which of them the change reaches. */
static void db_written_all(int ev) {
    SINK(dirty, 1);
    struct db_sink *sink = db_sink;
    if (!sink) return;
    sink->dirty++;
    if (sink->each) sink->on_event(sink, NULL, ev);
}

struct kv *db_find(const struct keyref *k, long long now_ms) {
    slab_h *link = find_link(k);
    if (!link) return NULL;
    struct kv *e = slab_ptr(*link);
    if (kv_has_expire(e) && kv_expire(e) <= now_ms && !store_no_expire) {
        /* Reported before it goes: a consumer may still read the entry. */
        db_written(k, KEV_EXPIRED);
        link = find_link(k);
        unlink_entry(k, link);
        db_free_entry(e, DB_FREE_EXPIRE);
        SINK(expired, 1);
        return NULL;
    }
    if (store_touch) kv_clock_touch(e, now_ms);
    return e;
}

struct kv *db_peek(const struct keyref *k) {
    slab_h *link = find_link(k);
    return link ? slab_ptr(*link) : NULL;
}

/* The entry of k in its (locked) table if the table is not rehashing,
 * without side effects; db_prefetch's last step. */
static const struct kv *peek_entry(const struct keyref *k) {
    struct ktable *t = table_of(k);
    return t->old || !t->buckets ? NULL : chain_find(t, k);
}

void db_prefetch(const struct keyref *k, int n, int locked) {
    /* Step 1: the shard (its lock and table pointer share a line). */
    for (int i = 0; i < n; i++) __builtin_prefetch(&ks.shards[k[i].shard], 1);
    /* Step 2: the database's table header. `tables` never changes after
     * ks_init, so reading it needs no lock. */
    for (int i = 0; i < n; i++) __builtin_prefetch(table_of(&k[i]), 0);
    /* Step 3: the bucket slot. A rehashing table is left alone (its
     * lookups take the slow path anyway). */
    for (int i = 0; i < n; i++) {
        if (!locked && !shard_trylock(k[i].shard)) continue; /* a hint: never wait for it */
        struct ktable *t = table_of(&k[i]);
        if (!t->old && t->buckets) __builtin_prefetch(&t->buckets[k[i].hash & t->mask], 0);
        if (!locked) shard_unlock(k[i].shard);
    }
    /* Step 4: the first entry of the chain, two lines of it: the header
     * and key come first, a short value right after. Entries are written
     * by the lookup (access clock), hence the write hint. */
    for (int i = 0; i < n; i++) {
        if (!locked && !shard_trylock(k[i].shard)) continue; /* a hint: never wait for it */
        struct ktable *t = table_of(&k[i]);
        if (!t->old && t->buckets) {
            slab_h l = t->buckets[k[i].hash & t->mask];
            if (l) {
                const void *h = slab_ptr(l);
                __builtin_prefetch(h, 1);
                __builtin_prefetch((const char *)h + 64, 1);
            }
        }
        if (!locked) shard_unlock(k[i].shard);
    }
    /* Step 5: a value that lives behind the entry's pointer (a long
     * string, an aggregate). */
    for (int i = 0; i < n; i++) {
        if (!locked && !shard_trylock(k[i].shard)) continue; /* a hint: never wait for it */
        const struct kv *e = peek_entry(&k[i]);
        if (e && kv_enc(e) != ENC_INT && kv_enc(e) != ENC_EMBSTR && !kv_raw_inline(e)) __builtin_prefetch(kv_ptr(e), 1);
        if (!locked) shard_unlock(k[i].shard);
    }
}

struct kv *db_find_read_quiet(const struct keyref *k, long long now_ms) {
    struct kv *e = db_find(k, now_ms);
    if (e) SINK(hits, 1);
    else SINK(misses, 1);
    return e;
}

struct kv *db_find_read(const struct keyref *k, long long now_ms) {
    struct kv *e = db_find_read_quiet(k, now_ms);
    if (!e) db_notice(k, KEV_KEYMISS);
    return e;
}

/* Events of writes that replace a key's whole value through Redis's
 * setKey, the ones that report an overwritten key: the SET family (and
 * MSET, BITOP), and the *STORE commands. */
static int sets_whole_value(int ev) {
    switch (ev) {
    case KEV_SET:
    case KEV_SORTSTORE:
    case KEV_SINTERSTORE:
    case KEV_SUNIONSTORE:
    case KEV_SDIFFSTORE:
    case KEV_ZINTERSTORE:
    case KEV_ZUNIONSTORE:
    case KEV_ZDIFFSTORE:
    case KEV_ZRANGESTORE:
    case KEV_GEORADIUSSTORE:
    case KEV_GEOSEARCHSTORE: return 1;
    default: return 0;
    }
}

void db_notice_replaced(const struct keyref *k, int old_type, int new_type) {
    db_notice(k, KEV_OVERWRITTEN);
    if (old_type != new_type) db_notice(k, KEV_TYPE_CHANGED);
}

/* Ahead of write `ev` storing e at k (old: the entry it replaces, or
 * NULL), for a sink that wants every event: a key that enters the
 * keyspace says "new", as Redis's dbAdd does; one whose value a
 * setKey-style write replaces says "overwritten" (and "type_changed"), as
 * Redis's setKey does. */
static void put_notices(const struct keyref *k, const struct kv *old, const struct kv *e, int ev, int noticed) {
    if (!old) {
        if (!noticed) db_notice(k, KEV_NEW);
    } else if (sets_whole_value(ev)) {
        db_notice_replaced(k, kv_type(old), kv_type(e));
    }
}

/* An entry of k past its deadline, met by a write about to replace it, is
 * expired first (reported and counted, as Redis's lookup ahead of the
 * write would), so that the write adds a new key. 1 when it went. */
static int expire_stale(const struct keyref *k, const struct kv *old) {
    if (!kv_has_expire(old) || kv_expire(old) > store_now_ms || store_no_expire) return 0;
    db_find(k, store_now_ms);
    return 1;
}

static struct kv *put_entry(const struct keyref *k, struct kv *e, int ev, int noticed) {
    struct shard *s = &ks.shards[k->shard];
    struct ktable *t = &s->tables[k->db];
    slab_h *link = find_link(k);
    if (link && expire_stale(k, slab_ptr(*link))) link = NULL;
    if (__builtin_expect(db_sink != NULL && db_sink->each, 0))
        put_notices(k, link ? slab_ptr(*link) : NULL, e, ev, noticed);
    /* The hook leaves the table alone: the link stays good. */
    db_written(k, ev);
    HK_ASSERT(find_link(k) == link);
    kv_set_clock(e, kv_clock_new(store_now_ms));
    kv_set_snap(e, db_snap_mark);
    if (link) {
        struct kv *old = slab_ptr(*link);
        /* An overwrite keeps the access counter under LFU, as Redis's
         * does: the key is the same key, used as often as before. */
        if (atomic_load_explicit(&store_lfu, memory_order_relaxed)) kv_set_clock(e, kv_clock(old));
        if (kv_has_expire(old)) s->nexpires[k->db]--;
        if (kv_hfe(old) && !kv_hfe(e)) hfe_untrack(k);
        e->next = old->next;
        *link = slab_handle(e);
        db_free_entry(old, DB_FREE_SERVER_DEL);
    } else {
        kt_insert(t, e, k->hash, kv_rehash, NULL);
    }
    if (kv_has_expire(e)) s->nexpires[k->db]++;
    if (kv_hfe(e)) hfe_track(k);
    return e;
}

struct kv *db_put(const struct keyref *k, struct kv *e, int ev) { return put_entry(k, e, ev, 0); }

struct kv *db_put_noticed(const struct keyref *k, struct kv *e, int ev) { return put_entry(k, e, ev, 1); }

struct kv *db_put_str(const struct keyref *k, const char *val, size_t vlen, long long expire, int ev) {
    slab_h *link = find_link(k);
    if (link && !expire_stale(k, slab_ptr(*link))) {
        struct kv *e = slab_ptr(*link);
        long long iv;
        if (kv_same_shape_str(e, val, vlen, expire, &iv)) {
            if (__builtin_expect(db_sink != NULL && db_sink->each, 0) && sets_whole_value(ev))
                db_notice_replaced(k, OBJ_STRING, OBJ_STRING);
            db_written(k, ev);
            kv_write_str(e, val, vlen, expire, iv);
            kv_clock_touch(e, store_now_ms);
            return e;
        }
    }
    return db_put(k, kv_new_str(k->key, k->klen, val, vlen, expire), ev);
}

struct kv *db_take(const struct keyref *k, long long now_ms, int ev) {
    if (!db_find(k, now_ms)) return NULL;
    db_written(k, ev);
    slab_h *link = find_link(k);
    struct kv *e = slab_ptr(*link);
    unlink_entry(k, link);
    kt_maybe_shrink(table_of(k), kv_rehash, NULL);
    return e;
}

int db_delete_as(const struct keyref *k, long long now_ms, int ev, int why) {
    struct kv *e = db_take(k, now_ms, ev);
    if (!e) return 0;
    db_free_entry(e, why);
    return 1;
}

int db_delete(const struct keyref *k, long long now_ms, int ev) {
    return db_delete_as(k, now_ms, ev, DB_FREE_SERVER_DEL);
}

struct kv *db_set_expire(const struct keyref *k, struct kv *e, long long when_ms, int ev) {
    struct shard *s = &ks.shards[k->shard];
    if (when_ms < 0 && !kv_has_expire(e)) return e;
    db_written(k, ev);
    if (when_ms >= 0 && kv_has_expire(e)) {
        kv_set_expire_field(e, when_ms);
        return e;
    }
    slab_h *link = find_link(k);
    while (*link != slab_handle(e)) link = &((struct kv *)slab_ptr(*link))->next;
    slab_h next = e->next;
    int had = kv_has_expire(e);
    struct kv *n = kv_with_expire(e, when_ms);
    n->next = next;
    *link = slab_handle(n);
    if (had) s->nexpires[k->db]--;
    if (kv_has_expire(n)) s->nexpires[k->db]++;
    return n;
}

void ks_counts(int db, int locked, unsigned long long *keys, unsigned long long *expires) {
    unsigned long long n = 0, x = 0;
    for (unsigned i = 0; i < ks.nshards; i++) {
        if (!locked) shard_lock(i);
        HK_ASSERT_HELD(i);
        n += ks.shards[i].tables[db].count;
        x += ks.shards[i].nexpires[db];
        if (!locked) shard_unlock(i);
    }
    *keys = n;
    if (expires) *expires = x;
}

void ks_table_usage(int locked, unsigned long long *keys, size_t *table_bytes) {
    memset(keys, 0, sizeof(*keys) * (size_t)ks.ndb);
    memset(table_bytes, 0, sizeof(*table_bytes) * (size_t)ks.ndb);
    for (unsigned i = 0; i < ks.nshards; i++) {
        if (!locked) shard_lock(i);
        HK_ASSERT_HELD(i);
        for (int d = 0; d < ks.ndb; d++) {
            keys[d] += ks.shards[i].tables[d].count;
            table_bytes[d] += kt_overhead(&ks.shards[i].tables[d]);
        }
        if (!locked) shard_unlock(i);
    }
}

struct flushed {
    size_t n;
    struct ktable tables[];
};

/* wk_touch_db callback: does the watched key hold a value in the table
 * about to be flushed (or in either table of a swap)? */
struct exists_ctx {
    struct ktable *t1, *t2;
};

static int key_in(struct ktable *t, const struct wkey *wk) {
    struct keyref k = {.db = wk->db, .key = wk->key, .klen = wk->klen, .hash = wk->hash};
    return kt_find_link(t, wk->hash, key_match, &k) != NULL;
}

static int wkey_exists(const struct wkey *wk, void *arg) {
    struct exists_ctx *x = arg;
    return key_in(x->t1, wk) || (x->t2 && key_in(x->t2, wk));
}

struct flushed *ks_flush(int db) {
    int first = db < 0 ? 0 : db, last = db < 0 ? ks.ndb - 1 : db;
    size_t per = (size_t)(last - first + 1);
    struct flushed *f = hk_malloc(sizeof(*f) + per * ks.nshards * sizeof(struct ktable));
    f->n = 0;
    if (db_snap_drain) db_snap_drain();
    db_written_all(KEV_FLUSH);
    /* The caller holds every shard: no client sees a half-flushed database. */
    for (unsigned i = 0; i < ks.nshards; i++) {
        HK_ASSERT_HELD(i);
        struct shard *s = &ks.shards[i];
        for (int d = first; d <= last; d++) {
            struct exists_ctx x = {&s->tables[d], NULL};
            wk_touch_db(s, d, 0, wkey_exists, &x);
            if (s->tables[d].count || s->tables[d].buckets) f->tables[f->n++] = s->tables[d];
            kt_init(&s->tables[d]);
            s->nexpires[d] = 0;
            hfe_flush_db(s, d);
        }
    }
    /* A command's flush counts the keys it removed, as Redis counts it,
     * none for an empty database; db_written_all counted one, and its
     * write stays (a flush propagates even when it removed nothing). */
    if (db_sink) SINK(dirty, ks_flushed_keys(f) - 1);
    return f;
}

static void free_entry(struct kv *e, void *ctx) {
    (void)ctx;
    kv_free(e);
}

unsigned long long ks_flushed_keys(const struct flushed *f) {
    unsigned long long n = 0;
    for (size_t i = 0; i < f->n; i++) n += f->tables[i].count;
    return n;
}

void ks_flushed_free(struct flushed *f) {
    for (size_t i = 0; i < f->n; i++) {
        struct ktable *t = &f->tables[i];
        kt_drain(t, free_entry, NULL);
    }
    hk_free(f);
}

void ks_swapdb(int a, int b) {
    /* A write even when a == b, as in Redis. */
    db_written_all(KEV_SWAPDB);
    if (a == b) return;
    if (db_snap_drain) db_snap_drain();
    for (unsigned i = 0; i < ks.nshards; i++) {
        HK_ASSERT_HELD(i);
        struct shard *s = &ks.shards[i];
        /* Watched keys are signaled when either database holds them (the
         * value a watcher sees changes), and clients blocked on keys of
         * either may now find values. */
        struct exists_ctx x = {&s->tables[a], &s->tables[b]};
        wk_touch_db(s, a, 1, wkey_exists, &x);
        wk_touch_db(s, b, 1, wkey_exists, &x);
        struct ktable t = s->tables[a];
        s->tables[a] = s->tables[b];
        s->tables[b] = t;
        uint64_t n = s->nexpires[a];
        s->nexpires[a] = s->nexpires[b];
        s->nexpires[b] = n;
        hfe_swapdb(s, a, b);
    }
}

uint64_t shard_scan(unsigned s, int db, uint64_t cursor, void (*fn)(struct kv *e, void *ctx), void *ctx) {
    return kt_scan(&ks.shards[s].tables[db], cursor, fn, ctx);
}

struct reap_ctx {
    unsigned shard;
    int db;
    long long now_ms;
    unsigned budget;
    unsigned expired;
};

/* kt_scan_reap callback of active expiry: count the visit against the
 * budget; report, free and unlink an expired entry. */
static int reap_expired(struct kv *e, void *ctx) {
    struct reap_ctx *rc = ctx;
    rc->budget = rc->budget ? rc->budget - 1 : 0;
    if (!kv_has_expire(e) || kv_expire(e) > rc->now_ms) return 0;
    struct keyref k = {.db = rc->db, .shard = rc->shard, .key = kv_key(e), .klen = kv_keylen(e)};
    k.hash = hk_hash(k.key, k.klen);
    db_written(&k, KEV_EXPIRED);
    if (kv_hfe(e)) hfe_untrack(&k);
    db_free_entry(e, DB_FREE_EXPIRE);
    rc->expired++;
    return 1;
}

unsigned shard_active_expire(unsigned si, long long now_ms, unsigned budget) {
    HK_ASSERT_HELD(si);
    struct shard *s = &ks.shards[si];
    unsigned expired = 0;
    for (int tries = 0; tries < ks.ndb && budget; tries++) {
        int d = s->expire_db;
        struct ktable *t = &s->tables[d];
        if (!s->nexpires[d] || !t->buckets) {
            s->expire_db = (d + 1) % ks.ndb;
            s->expire_cursor = 0;
            continue;
        }
        uint64_t cur = s->expire_cursor;
        struct reap_ctx rc = {si, d, now_ms, budget, 0};
        do {
            /* A scan cursor, so a resize or rehash in between loses nothing. */
            cur = kt_scan_reap(t, cur, reap_expired, &rc);
        } while (cur != 0 && rc.budget);
        budget = rc.budget;
        unsigned expired_here = rc.expired;
        s->nexpires[d] -= expired_here;
        s->expire_cursor = cur;
        if (cur == 0) s->expire_db = (d + 1) % ks.ndb;
        /* Shrink the table the keys left (expire_db may have moved on);
         * the cursor stays valid across a resize. */
        if (expired_here) kt_maybe_shrink(t, kv_rehash, NULL);
        expired += expired_here;
    }
    if (expired) {
        SINK(expired, expired);
        SINK(expired_active, expired);
    }
    return expired;
}
