/* db.h - the keyspace: databases split into slot-based shards.
 *
 * A key's shard is its Redis Cluster slot (CRC16 of the key or its {tag},
 * modulo 16384) modulo the shard count. A shard holds one mutex and, for
 * every database, a small hash table of key entries; the lock of a shard
 * covers that shard's table in every database. All db_* functions that take
 * a struct keyref expect the key's shard to be locked by the caller
 * (dispatch does it from the command table's key spec). Commands that touch
 * every key (KEYS, SCAN, FLUSHDB, DBSIZE, SWAPDB) use the ks_* iteration
 * helpers, which lock shards themselves in ascending order.
 *
 * Expiry is lazy (a lookup of an expired key deletes it) plus an active
 * cycle that each worker runs over its share of the shards. */
#ifndef HK_DB_H
#define HK_DB_H

#include "../core/htable.h"
#include "kv.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct shard {
    pthread_mutex_t lock;
    struct htable *tables;   /* one per database */
    uint64_t *nexpires;      /* keys with a TTL, per database */
    uint64_t expire_cursor;  /* active expire progress in expire_db */
    int expire_db;
    /* Bumped on every write to a key in this shard (any database). */
    uint64_t version;
    /* Clients blocked on keys of this shard (BLPOP...): the registry of
     * src/server/blocking.c, NULL when nobody waits here. */
    struct bkey *bkeys;
} __attribute__((aligned(64)));

struct keyspace {
    int ndb;
    unsigned nshards, shard_bits;
    struct shard *shards;
    /* Statistics the store updates under shard locks; summed on read. */
};

extern struct keyspace ks;

/* A key resolved to its shard and hash, ready for the db_* calls. */
struct keyref {
    int db;
    unsigned shard;
    const char *key;
    size_t klen;
    uint64_t hash;
};

void ks_init(int ndb, unsigned nshards);
static inline unsigned ks_shard_of(const char *key, size_t klen);
void keyref_init(struct keyref *k, int db, const char *key, size_t klen);

void shard_lock(unsigned s);
void shard_unlock(unsigned s);
void ks_lock_all(void);
void ks_unlock_all(void);

/* Counters for INFO stats, updated under shard locks by the thread that
 * holds them; per worker in the server, so the store takes a sink. */
struct store_stats {
    _Atomic unsigned long long expired, hits, misses, dirty, expired_active;
};
/* The calling thread's sink (set by workers); NULL means none. */
extern _Thread_local struct store_stats *store_stats_sink;

/* LRU clock: seconds, 24 bits, as stored in each entry's metadata. */
#define LRU_CLOCK_MAX 0xffffffu
static inline uint32_t lru_clock(long long now_ms) { return (uint32_t)((now_ms / 1000) & LRU_CLOCK_MAX); }
/* Idle time of an entry in milliseconds. */
long long kv_idle_ms(const struct kv *e, long long now_ms);
/* When 0, lookups by this thread do not update entries' access clocks
 * (CLIENT NO-TOUCH); dispatch sets it per command. */
extern _Thread_local int store_touch;
/* Clock of the running command, for stamping new entries; set by dispatch. */
extern _Thread_local long long store_now_ms;

/* Find a live key; deletes it first if expired (lazy expiry). */
struct kv *db_find(const struct keyref *k, long long now_ms);
/* Same, counting a keyspace hit or miss. */
struct kv *db_find_read(const struct keyref *k, long long now_ms);
/* Insert or replace the entry for k->key (e must carry that key). Frees
 * the old entry and value. Returns e. */
struct kv *db_put(const struct keyref *k, struct kv *e);
/* Set the string value of k (expiry `expire`, -1 none), as
 * db_put(k, kv_new_str(...)) would, but overwriting the old entry in place
 * when it has the same shape (kv_overwrite_str). Returns the entry. */
struct kv *db_put_str(const struct keyref *k, const char *val, size_t vlen, long long expire);
/* Replace entry old (found for k) with e; old's value is NOT freed (it
 * moved into e or the caller owns it). */
void db_swap_entry(const struct keyref *k, struct kv *old, struct kv *e);
/* Delete the key; returns 1 if it existed (expired keys count as absent). */
int db_delete(const struct keyref *k, long long now_ms);
/* Detach the entry without freeing it (RENAME, MOVE, GETDEL). */
struct kv *db_take(const struct keyref *k, long long now_ms);
/* Set or clear (-1) the expiry of entry e of key k; returns the entry. */
struct kv *db_set_expire(const struct keyref *k, struct kv *e, long long when_ms);
/* Record a write to k (version bump, dirty counter). */
void db_touch_write(const struct keyref *k);
/* Called (shard locked) when a key of a shard with blocked clients was
 * written; key NULL means every key of db in that shard (SWAPDB). Set by
 * src/server/blocking.c; NULL when no blocking support is linked. */
extern void (*db_ready_hook)(unsigned shard, int db, const char *key, size_t klen);

/* Warm the CPU caches for the lookups of n keys about to run (a pipeline's
 * keys, or a multi-key command's). A lookup of a random key walks a chain
 * of dependent loads (shard, table, bucket, entry, value) that each miss
 * the cache when the keyspace is large; done for one key after another the
 * misses come one at a time. This walks the chains of all n keys in
 * stages, issuing every key's prefetch of one level before reading any
 * key's next level, so the misses of different keys overlap. It changes
 * nothing (no clock update, no lazy expiry). With `locked` the caller holds
 * every key's shard; otherwise each step locks and unlocks the key's shard
 * itself (the caller must then hold no shard lock). Only a hint: a key
 * whose table changes between the steps is simply not prefetched. */
void db_prefetch(const struct keyref *k, int n, int locked);

/* Whole-keyspace helpers. Each locks what it needs. */
unsigned long long ks_dbsize(int db);
unsigned long long ks_expires(int db);
/* Flush one database (db >= 0) or all (db < 0); returns the detached
 * tables for the caller to free (sync or in the background). */
struct flushed;
struct flushed *ks_flush(int db);
void ks_flushed_free(struct flushed *f);
int ks_swapdb(int a, int b);

/* Called with shard s locked: visit every live key of db in bucket order
 * from cursor; see ht_scan for the guarantee. */
uint64_t shard_scan(unsigned s, int db, uint64_t cursor, void (*fn)(struct kv *e, void *ctx), void *ctx);
/* Active expiry on shard s: examine up to `budget` entries; returns the
 * number of keys expired. Locks the shard itself. */
unsigned ks_active_expire(unsigned s, long long now_ms, unsigned budget);

static inline unsigned ks_shard_of(const char *key, size_t klen) {
    extern unsigned hk_key_slot(const char *, size_t);
    return hk_key_slot(key, klen) & (ks.nshards - 1);
}

#endif
