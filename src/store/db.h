/* db.h - the keyspace: databases split into slot-based shards.
 *
 * A key's shard is its Redis Cluster slot (CRC16 of the key or its {tag},
 * modulo 16384) modulo the shard count. A shard holds one mutex and, for
 * every database, a small hash table of key entries; the lock of a shard
 * covers that shard's table in every database. Every db_* function that
 * takes a struct keyref expects the key's shard to be locked by the caller
 * (the execution core locks a command's lock set, lockset.h); debug builds
 * (HK_DEBUG) check it on every call.
 *
 * Writes. Every change to a key passes db_written() exactly once per
 * event, before the value changes or as it changes: the mutators below
 * (db_put, db_delete, db_take, db_set_expire) take the event and call it
 * themselves; a caller that edits a value in place calls db_written()
 * first. The hook bumps the key's WATCH version, wakes clients blocked on
 * it (watch.h), counts the write and hands it to the calling thread's sink
 * (the running command's context: propagation, later notifications and
 * client-side caching).
 *
 * Expiry is lazy (a lookup of an expired key deletes it, reporting
 * KEV_EXPIRED) plus an active cycle that each worker runs over its share
 * of the shards. */
#ifndef HK_DB_H
#define HK_DB_H

#include "../core/htable.h"
#include "../types/kv.h"
#include "ktable.h"
#include "events.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct shard {
    pthread_mutex_t lock;
    struct ktable *tables;   /* one per database */
    uint64_t *nexpires;      /* keys with a TTL, per database */
    uint64_t expire_cursor;  /* active expire progress in expire_db */
    int expire_db;
    /* Journal sequence: bumped once per journal record that touches this
     * shard, under its lock (src/server/journal.c). */
    uint64_t jseq;
    /* Keys watched or waited on in this shard (watch.h); NULL when none. */
    struct htable *wkeys;
    /* Hashes with field TTLs in this shard, per database, and the active
     * field-expiry progress (hfe.h); NULL until the first such hash. */
    struct hfe_shard *hfe;
    /* The running snapshot's part for this shard while it has entries
     * left to save (src/server/snapshot.c), else NULL. */
    struct snap_shard *snap;
} __attribute__((aligned(64)));

struct keyspace {
    int ndb;
    unsigned nshards, shard_bits;
    struct shard *shards;
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
/* 1 when the lock was taken. */
int shard_trylock(unsigned s);

/* Debug builds track the shards each thread holds, and every keyspace
 * access asserts its shard is among them. */
#ifdef HK_DEBUG
int shard_held(unsigned s);
void hk_assert_fail(const char *what, const char *file, int line) __attribute__((noreturn));
#define HK_ASSERT_HELD(s)                                                                                        \
    do {                                                                                                         \
        if (!shard_held(s)) hk_assert_fail("key accessed without its shard lock", __FILE__, __LINE__);         \
    } while (0)
#define HK_ASSERT(cond)                                                                                          \
    do {                                                                                                         \
        if (!(cond)) hk_assert_fail(#cond, __FILE__, __LINE__);                                                  \
    } while (0)
#else
#define HK_ASSERT_HELD(s) ((void)0)
#define HK_ASSERT(cond) ((void)0)
#endif

/* Counters for INFO stats, updated under shard locks by the thread that
 * holds them; per worker in the server, so the store takes a sink. */
struct store_stats {
    _Atomic unsigned long long expired, hits, misses, dirty, expired_active;
    /* Built with HK_LOCK_STATS only: contended shard_lock calls and the
     * time spent waiting in them. */
    _Atomic unsigned long long lock_contended, lock_wait_ns;
};
/* The calling thread's sink (set by workers); NULL means none. */
extern _Thread_local struct store_stats *store_stats_sink;

/* Snapshots (src/server/snapshot.h). `db_snap_mark` is the mark (kv.h,
 * KV_SNAP_BIT or 0) of entries the running snapshot must not save (saved
 * already, or linked after its cut); it changes only with every shard
 * held, and every entry linked gets it. While a shard's `snap` is set,
 * db_written hands each entry about to change that does not carry the mark
 * to db_snap_hook first (the shard held; the hook must leave the table
 * alone), and ks_flush/ks_swapdb call db_snap_drain (every shard held) so
 * the databases they change are saved first. */
extern uint32_t db_snap_mark;
extern void (*db_snap_hook)(const struct keyref *k, struct kv *e);
extern void (*db_snap_drain)(void);
/* k's entry, looked up without moving anything in a rehashing table. */
struct kv *db_peek_still(const struct keyref *k);

/* Count n more changes (rdb_changes_since_last_save, which the save
 * points act on) beyond the one each db_written event counts: a write of
 * several elements counts each of them, as Redis does. */
void db_dirty_add(long long n);

/* The write hook's consumer above the store: the context of the command
 * (or background task) running on this thread. NULL: nobody listens. The
 * common case costs no call: a write is counted in `dirty`; on_event is
 * called for keys that expire (or are evicted), and for every event while
 * `each` is set (keyspace notifications, client-side caching), with k
 * NULL for a change to whole databases (KEV_FLUSH, KEV_SWAPDB). */
struct db_sink {
    unsigned long long dirty;
    void (*on_event)(struct db_sink *sink, const struct keyref *k, int ev);
    int each;
    /* A field of hash k reached its deadline and is about to be deleted
     * (lazily or by the active cycle; hfe.h): propagation makes it an
     * HDEL. NULL: nobody listens. */
    void (*on_field_expired)(struct db_sink *sink, const struct keyref *k, const char *f, size_t fl);
};
extern _Thread_local struct db_sink *db_sink;

/* The write hook; see the file comment. Call it before an in-place edit of
 * k's value (the mutators below call it themselves). */
void db_written(const struct keyref *k, int ev);

/* LRU clock: seconds, 24 bits, as stored in each entry's metadata. */
#define LRU_CLOCK_MAX 0xffffffu
static inline uint32_t lru_clock(long long now_ms) { return (uint32_t)((now_ms / 1000) & LRU_CLOCK_MAX); }
/* Idle time of an entry in milliseconds. */
long long kv_idle_ms(const struct kv *e, long long now_ms);

/* The entry clock under an LFU maxmemory policy, as Redis keeps it: the
 * upper 16 bits are the minute of the last decrement, the lower 8 a
 * logarithmic access counter that starts at LFU_INIT_VAL, grows with
 * probability 1 / ((counter - LFU_INIT_VAL) * lfu-log-factor + 1) per
 * access and loses one per lfu-decay-time minutes without access. Which
 * meaning the clock has follows the policy of the moment (store_lfu);
 * switching policies leaves existing clocks to adjust as they are touched,
 * as in Redis. The settings are written by CONFIG and read relaxed. */
#define LFU_INIT_VAL 5
extern _Atomic int store_lfu;
extern _Atomic long long store_lfu_log_factor, store_lfu_decay_time;
/* The clock a new entry starts with. */
uint32_t kv_clock_new(long long now_ms);
/* An access: LRU time, or the LFU decrement and increment. */
void kv_clock_touch(struct kv *e, long long now_ms);
/* The LFU counter after the decay due by now (OBJECT FREQ). */
unsigned kv_lfu_freq(const struct kv *e, long long now_ms);
/* An LFU clock holding counter `freq` as of now. */
uint32_t lfu_clock_with(long long now_ms, unsigned freq);
/* The clock RESTORE's IDLETIME/FREQ or an RDB file's IDLE/FREQ record
 * gives e (-1: not given): the one of the kind the policy keeps, as
 * Redis's objectSetLRUOrLFU; an idle time is seconds before now on the
 * wrapping 24-bit clock, as Redis computes it. */
void kv_clock_restore(struct kv *e, long long now_ms, long long idle_s, long long freq);

/* Eviction's view of a shard (the shard held): visit up to n entries of
 * database db drawn at random, a whole chain of a random bucket at a time
 * (as Redis's dictGetSomeKeys), only those with a TTL when volatile_only.
 * Returns how many were visited. */
unsigned shard_sample(unsigned s, int db, int volatile_only, unsigned n, void (*fn)(struct kv *e, void *ctx),
                      void *ctx);
/* When 0, lookups by this thread do not update entries' access clocks
 * (CLIENT NO-TOUCH); the execution core sets it per command. */
extern _Thread_local int store_touch;
/* When set, lookups by this thread never expire a key (a journal or AOF
 * being applied: deletions come from the stream itself, as on a replica). */
extern _Thread_local int store_no_expire;
/* Clock of the running command, for stamping new entries. */
extern _Thread_local long long store_now_ms;

/* Freeing. Every entry the store removes is freed through db_free_entry
 * with the reason it goes; the server's lazy-free policy
 * (src/server/lazyfree.h) installs db_free_hook once before any worker
 * runs, and decides from the reason's lazyfree-lazy-* setting and the
 * value's kv_free_effort whether a background thread frees it. The entry
 * must already be unreachable (unlinked from its table). */
enum {
    DB_FREE_SYNC = 0,   /* always here and now */
    DB_FREE_UNLINK,     /* UNLINK: in the background when big */
    DB_FREE_USER_DEL,   /* DEL: lazyfree-lazy-user-del */
    DB_FREE_SERVER_DEL, /* a delete or overwrite as a command's side effect: lazyfree-lazy-server-del */
    DB_FREE_EXPIRE,     /* lazy and active expiry: lazyfree-lazy-expire */
    DB_FREE_EVICT,      /* eviction (none yet): lazyfree-lazy-eviction */
};
/* Returns 1 when it took e (to free it later), 0 to have the caller free
 * it now. NULL: everything is freed in place. */
extern int (*db_free_hook)(struct kv *e, int why);
void db_free_entry(struct kv *e, int why);

/* Find a live key; deletes it first if expired (lazy expiry, KEV_EXPIRED). */
struct kv *db_find(const struct keyref *k, long long now_ms);
/* Same, counting a keyspace hit or miss; a miss is also a KEV_KEYMISS
 * notice to a sink that wants every event (Redis's read lookups). */
struct kv *db_find_read(const struct keyref *k, long long now_ms);
/* db_find_read without the KEV_KEYMISS notice (Redis's LOOKUP_NONOTIFY:
 * OBJECT). */
struct kv *db_find_read_quiet(const struct keyref *k, long long now_ms);
/* The entry of k even when logically expired, without side effects
 * (DEBUG DIGEST-VALUE, OBJECT-like introspection). */
struct kv *db_peek(const struct keyref *k);
/* Insert or replace the entry for k->key (e must carry that key),
 * reporting `ev`, preceded, when the sink wants every event, by a KEV_NEW
 * notice for an absent key, or by KEV_OVERWRITTEN (and KEV_TYPE_CHANGED)
 * when ev is a write Redis makes through setKey (SET, the *STORE
 * commands). Frees the old entry and value. Returns e. */
struct kv *db_put(const struct keyref *k, struct kv *e, int ev);
/* db_put for a caller that gave the KEV_NEW notice itself (db_notice),
 * earlier than db_put would: RENAME, MOVE and COPY announce the
 * destination ahead of the source's event, replaced or not, as Redis's
 * delete-then-add does. */
struct kv *db_put_noticed(const struct keyref *k, struct kv *e, int ev);
/* Hand notice ev (KEV_NEW, KEV_KEYMISS...) for k to the sink, when it
 * wants every event. Not a write: no WATCH version, no dirty count. */
void db_notice(const struct keyref *k, int ev);
/* KEV_OVERWRITTEN, and KEV_TYPE_CHANGED when the types (OBJ_*) differ:
 * for a replacement the caller reports itself (RENAME, COPY). */
void db_notice_replaced(const struct keyref *k, int old_type, int new_type);
/* Set the string value of k (expiry `expire`, -1 none), as
 * db_put(k, kv_new_str(...), ev) would, but overwriting the old entry in
 * place when it has the same shape (kv_same_shape_str). Returns the entry. */
struct kv *db_put_str(const struct keyref *k, const char *val, size_t vlen, long long expire, int ev);
/* Delete the key, reporting `ev` (KEV_DEL for DEL; an emptied aggregate
 * reports KEV_DEL after its own event). Returns 1 if it existed (expired
 * keys count as absent). */
int db_delete(const struct keyref *k, long long now_ms, int ev);
/* db_delete freeing the value for reason `why` (DB_FREE_*): DEL and
 * UNLINK; db_delete itself frees as a server-side delete. */
int db_delete_as(const struct keyref *k, long long now_ms, int ev, int why);
/* Detach the entry without freeing it (RENAME, MOVE), reporting `ev`. */
struct kv *db_take(const struct keyref *k, long long now_ms, int ev);
/* Set or clear (-1) the expiry of entry e of key k, reporting `ev`
 * (KEV_EXPIRE, KEV_PERSIST, or KEV_NONE when the caller reported the
 * change already); returns the (possibly moved) entry. */
struct kv *db_set_expire(const struct keyref *k, struct kv *e, long long when_ms, int ev);

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

/* Whole-keyspace helpers. With `locked` the caller holds every shard;
 * otherwise they lock one shard at a time (the caller holding none). */
/* Keys of database db and, when expires is not NULL, those with a TTL. */
void ks_counts(int db, int locked, unsigned long long *keys, unsigned long long *expires);
/* Per database (arrays of ks.ndb): the keys, and the bytes of the bucket
 * arrays (the keyspace's own overhead besides the entries), over every
 * shard, each shard taken once unless `locked` (the caller holds them all). */
void ks_table_usage(int locked, unsigned long long *keys, size_t *table_bytes);
/* Flush one database (db >= 0) or all (db < 0), every shard locked by the
 * caller: one write (KEV_FLUSH); watched keys that existed are signaled. Returns the detached
 * tables for the caller to free (sync or in the background, after
 * unlocking). */
struct flushed;
struct flushed *ks_flush(int db);
void ks_flushed_free(struct flushed *f);
/* Keys held by the detached tables (lazyfree counts them). */
unsigned long long ks_flushed_keys(const struct flushed *f);
/* Swap databases a and b, every shard locked by the caller: one write
 * (KEV_SWAPDB, also when a == b, which changes nothing else); watched keys
 * present in either are signaled, blocked clients of both are woken. */
void ks_swapdb(int a, int b);

/* Called with shard s locked: visit every live key of db in bucket order
 * from cursor; see ht_scan for the guarantee. */
uint64_t shard_scan(unsigned s, int db, uint64_t cursor, void (*fn)(struct kv *e, void *ctx), void *ctx);
/* Active expiry on shard s (locked by the caller): examine up to `budget`
 * entries, deleting expired ones (KEV_EXPIRED each); returns the number
 * of keys expired. */
unsigned shard_active_expire(unsigned s, long long now_ms, unsigned budget);

static inline unsigned ks_shard_of(const char *key, size_t klen) {
    extern unsigned hk_key_slot(const char *, size_t);
    return hk_key_slot(key, klen) & (ks.nshards - 1);
}

#endif
