/* evict.c - maxmemory: the eviction pool, the policies and the memory
 * state admission reads (see evict.h). */
#include "evict.h"

#include "../core/alloc.h"
#include "../core/hash.h"
#include "../core/util.h"
#include "../store/db.h"
#include "../types/kv.h"
#include "config.h"
#include "aof.h"
#include "exec.h"
#include "server.h"
#include "snapshot.h"

#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* ---- the pool ----------------------------------------------------------- */

/* The best candidates met so far, in ascending score order (the last is
 * evicted first), as Redis keeps its EvictionPoolLRU. Each worker has its
 * own, so no lock guards it. Keys are copies: an entry may be gone or
 * moved by the time its turn comes, and is looked up again then. */
#define POOL_SIZE 16
#define POOL_KEY_INLINE 48

struct pool_ent {
    uint64_t score;
    int db;
    uint32_t klen;
    char *key; /* buf, or an allocation for a longer key */
    char buf[POOL_KEY_INLINE];
};

static _Thread_local struct pool_ent pool[POOL_SIZE];
static _Thread_local int pool_n;

static void ent_set(struct pool_ent *p, uint64_t score, int db, const char *key, size_t klen) {
    p->score = score;
    p->db = db;
    p->klen = (uint32_t)klen;
    p->key = klen <= POOL_KEY_INLINE ? p->buf : hk_malloc(klen);
    memcpy(p->key, key, klen);
}

static void ent_clear(struct pool_ent *p) {
    if (p->key && p->key != p->buf) hk_free(p->key);
    p->key = NULL;
}

/* Move a whole entry: its inline key moves with it. */
static void ent_move(struct pool_ent *to, struct pool_ent *from) {
    int inl = from->key == from->buf;
    *to = *from;
    if (inl) to->key = to->buf;
    from->key = NULL;
}

static void pool_insert(uint64_t score, int db, const char *key, size_t klen) {
    if (pool_n == POOL_SIZE && score <= pool[0].score) return;
    for (int i = 0; i < pool_n; i++)
        if (pool[i].db == db && pool[i].klen == klen && memcmp(pool[i].key, key, klen) == 0) return;
    int i = 0;
    while (i < pool_n && pool[i].score < score) i++;
    if (pool_n < POOL_SIZE) {
        for (int j = pool_n; j > i; j--) ent_move(&pool[j], &pool[j - 1]);
        pool_n++;
    } else {
        /* Full: the worst goes, the ones below the new place shift down. */
        ent_clear(&pool[0]);
        i--;
        for (int j = 0; j < i; j++) ent_move(&pool[j], &pool[j + 1]);
    }
    ent_set(&pool[i], score, db, key, klen);
}

/* ---- sampling ----------------------------------------------------------- */

struct sample_ctx {
    int policy, db;
    long long now_ms;
    /* The random policies: the one key drawn. */
    int picked;
    struct pool_ent pick;
};

static uint64_t score_of(const struct sample_ctx *sc, const struct kv *e) {
    switch (sc->policy) {
    case MAXMEM_ALLKEYS_LFU:
    case MAXMEM_VOLATILE_LFU: return 255 - kv_lfu_freq(e, sc->now_ms);
    case MAXMEM_VOLATILE_TTL: return UINT64_MAX - (uint64_t)kv_expire(e);
    default: return (uint64_t)kv_idle_ms(e, sc->now_ms);
    }
}

static void sample_cb(struct kv *e, void *arg) {
    struct sample_ctx *sc = arg;
    if (sc->policy == MAXMEM_ALLKEYS_RANDOM || sc->policy == MAXMEM_VOLATILE_RANDOM) {
        if (!sc->picked) ent_set(&sc->pick, 0, sc->db, kv_key(e), kv_keylen(e));
        sc->picked = 1;
        return;
    }
    pool_insert(score_of(sc, e), sc->db, kv_key(e), kv_keylen(e));
}

static int policy_volatile(int p) { return p >= MAXMEM_VOLATILE_LRU; }
static int policy_random(int p) { return p == MAXMEM_ALLKEYS_RANDOM || p == MAXMEM_VOLATILE_RANDOM; }

/* Sample shard s (every database with keys of the policy's kind) into the
 * pool, or, for a random policy, draw one key into sc->pick. Returns how
 * many entries were visited; 0 also when the shard was busy. */
static unsigned sample_shard(unsigned s, struct sample_ctx *sc) {
    if (!shard_trylock(s)) return 0;
    int vol = policy_volatile(sc->policy);
    unsigned n = policy_random(sc->policy) ? 1 : (unsigned)CFG(maxmemory_samples);
    unsigned seen = 0;
    int start = policy_random(sc->policy) ? (int)(hk_rand64() % (uint64_t)ks.ndb) : 0;
    for (int i = 0; i < ks.ndb; i++) {
        sc->db = (start + i) % ks.ndb;
        seen += shard_sample(s, sc->db, vol, n, sample_cb, sc);
        if (sc->picked) break;
    }
    shard_unlock(s);
    return seen;
}

/* ---- evicting ------------------------------------------------------------ */

/* Memory that eviction cannot give back and so does not count, as Redis's
 * freeMemoryGetNotCountedMemory: the AOF's unwritten buffer, and what
 * writers saved ahead of a running snapshot (evicting a key the snapshot
 * has not reached saves it first, which would make eviction chase its own
 * tail). INFO's mem_not_counted_for_evict. */
size_t evict_not_counted(void) {
    return (size_t)(aof_buffer_bytes() + atomic_load_explicit(&snap_status.side_bytes, memory_order_relaxed));
}

static size_t counted_used(void) {
    size_t used = hk_used_memory(), skip = evict_not_counted();
    return used > skip ? used - skip : 0;
}

/* Evict the best candidate there is: from the pool (refilled from random
 * shards, then from every shard in turn when those had nothing), or a
 * random key. Returns 1 when a key went, 0 when nothing could. */
static int evict_one(struct worker *w, int policy) {
    struct sample_ctx sc = {.policy = policy, .now_ms = hk_mstime()};
    unsigned mask = ks.nshards - 1;
    for (int round = 0; round < 2; round++) {
        /* Round 0: a few random shards. Round 1: all of them, so that an
         * answer of "nothing to evict" is true of the whole keyspace. */
        unsigned tries = round == 0 ? 16 : ks.nshards, start = (unsigned)hk_rand64();
        unsigned want = (unsigned)CFG(maxmemory_samples), got = 0;
        for (unsigned t = 0; t < tries; t++) {
            unsigned s = round == 0 ? (unsigned)hk_rand64() & mask : (start + t) & mask;
            got += sample_shard(s, &sc);
            /* A pool policy gathers maxmemory-samples fresh entries from
             * as many shards as it takes (a shard may hold only a few
             * keys) before it picks, as Redis samples the whole keyspace. */
            if (!policy_random(policy) && got < want && t + 1 < tries && round == 0) continue;
            if (policy_random(policy)) {
                if (!sc.picked) continue;
                struct keyref k;
                keyref_init(&k, sc.pick.db, sc.pick.key, sc.pick.klen);
                int gone = exec_evict_key(w, &k, sc.now_ms);
                ent_clear(&sc.pick);
                sc.picked = 0;
                if (gone) return 1;
                continue;
            }
            /* The best first; a candidate already gone is dropped. */
            while (pool_n > 0) {
                struct pool_ent *p = &pool[pool_n - 1];
                struct keyref k;
                keyref_init(&k, p->db, p->key, p->klen);
                int gone = exec_evict_key(w, &k, sc.now_ms);
                ent_clear(p);
                pool_n--;
                if (gone) return 1;
            }
        }
    }
    return 0;
}

/* How long one call may evict: maxmemory-eviction-tenacity 0..10 gives
 * 0..500 us in steps of 50, each step above adds 15%, 100 has no limit. */
static long long time_limit_us(void) {
    long long t = CFG(maxmemory_eviction_tenacity);
    if (t <= 10) return 50 * t;
    if (t < 100) return (long long)(500.0 * pow(1.15, (double)(t - 10)));
    return LLONG_MAX;
}

static _Atomic int oom_state;
static _Atomic long long exceeded_since_us, exceeded_total_us;

int evict_oom_state(void) { return atomic_load_explicit(&oom_state, memory_order_relaxed); }

static void set_state(int r) {
    int fail = r == EVICT_FAIL;
    if (atomic_load_explicit(&oom_state, memory_order_relaxed) != fail) atomic_store(&oom_state, fail);
}

int evict_perform(struct worker *w) {
    long long maxmem = CFG(maxmemory);
    if (maxmem <= 0) return EVICT_OK;
    size_t used = counted_used();
    if (used <= (size_t)maxmem) {
        set_state(EVICT_OK);
        return EVICT_OK;
    }
    int policy = (int)CFG(maxmemory_policy);
    if (policy == MAXMEM_NOEVICTION) {
        set_state(EVICT_FAIL);
        return EVICT_FAIL;
    }
    long long tofree = (long long)(used - (size_t)maxmem), freed = 0;
    long long limit = time_limit_us(), start = hk_monotonic_us();
    unsigned keys = 0;
    int r = EVICT_OK;
    while (freed < tofree) {
        /* What the deletion freed shows in this thread's own count (a
         * value handed to the lazy-free thread shows later). */
        long long before = hk_thread_allocated();
        if (!evict_one(w, policy)) {
            r = EVICT_FAIL;
            break;
        }
        freed += before - hk_thread_allocated();
        if ((++keys & 15) == 0) {
            /* Other workers evict and allocate too. */
            if (counted_used() <= (size_t)maxmem) break;
            if (hk_monotonic_us() - start > limit) {
                r = EVICT_RUNNING;
                break;
            }
        }
    }
    if (r == EVICT_OK && counted_used() > (size_t)maxmem) r = EVICT_RUNNING;
    set_state(r);
    return r;
}

static void gate(int over) {
    int on = (atomic_load_explicit(&admit_gate, memory_order_relaxed) & ADMIT_GATE_OOM) != 0;
    if (on == over) return;
    long long now = hk_monotonic_us();
    if (over) {
        atomic_store(&exceeded_since_us, now);
    } else {
        long long since = atomic_exchange(&exceeded_since_us, 0);
        if (since) atomic_fetch_add(&exceeded_total_us, now - since);
    }
    admit_gate_set(ADMIT_GATE_OOM, over);
}

void evict_turn(struct worker *w) {
    long long maxmem = CFG(maxmemory);
    /* Nothing is evicted while the dataset loads, as in Redis. */
    if (maxmem > 0 && atomic_load_explicit(&server_loading, memory_order_relaxed)) return;
    if (maxmem <= 0 || counted_used() <= (size_t)maxmem) {
        set_state(EVICT_OK);
        gate(0);
        return;
    }
    gate(evict_perform(w) != EVICT_OK);
}

void evict_exceeded_ms(long long *total, long long *current) {
    long long since = atomic_load(&exceeded_since_us), now = hk_monotonic_us();
    long long cur = since ? now - since : 0;
    *current = cur / 1000;
    *total = (atomic_load(&exceeded_total_us) + cur) / 1000;
}
