/* hfe.h - hash field expiration in the keyspace: which hashes of a shard
 * have field TTLs, and the active cycle that deletes their fields.
 *
 * A hash with at least one field TTL has the encoding ENC_LISTPACK_EX or
 * ENC_HT_EX (kv_hfe); its deadlines live in the value (src/types/hash.h).
 * Each shard keeps, per database, the set of the names of such hashes,
 * allocated with the shard's first one (struct shard's `hfe`, NULL until
 * then), so a keyspace without field TTLs pays one pointer per shard. The
 * set follows the entries exactly: db_put adds a key whose new value has
 * field TTLs, unlinking an entry (DEL, expiry, RENAME, MOVE) removes it,
 * FLUSH empties it, SWAPDB swaps it, and a command that gives a hash its
 * first TTL or takes its last one away calls hfe_track/hfe_untrack. Its
 * size per database is INFO keyspace's `subexpiry`.
 *
 * Everything here is owned by the shard's lock: the caller holds it, as
 * for every db_* call. The active cycle runs on the worker that owns the
 * shard's expiry (exec_active_expire), so no lock or counter is shared
 * between workers. */
#ifndef HK_HFE_H
#define HK_HFE_H

#include "db.h"

#include <stddef.h>
#include <stdint.h>

/* Key k's value (in its locked shard) now has field TTLs / no longer has
 * any, or the key is gone. Both are idempotent. */
void hfe_track(const struct keyref *k);
void hfe_untrack(const struct keyref *k);
/* The database's set is emptied (FLUSHDB/FLUSHALL) or swapped (SWAPDB),
 * every shard held. */
void hfe_flush_db(struct shard *s, int db);
void hfe_swapdb(struct shard *s, int a, int b);

/* Hashes with field TTLs in database db, every shard visited (locking
 * each unless `locked`): INFO keyspace's subexpiry. */
unsigned long long ks_hfe_count(int db, int locked);

/* A field of hash k reached its deadline and is about to be deleted by
 * the caller: hands the field to the sink (propagation as HDEL) and, with
 * `report`, reports KEV_HEXPIRED (WATCH, not a write of the command).
 * Redis raises one "hexpired" per hash for the fields one step expires
 * together (an active pass over the hash, a command's lazy expiry of the
 * fields it names), so callers report the first field of such a batch
 * only. */
void db_field_expired(const struct keyref *k, const char *f, size_t fl, int report);
/* hashv_expire_due's callback for one such batch: db_field_expired for
 * each field, reporting the first only. ctx is a struct hfe_batch
 * {key, 0}. */
struct hfe_batch {
    const struct keyref *k;
    int reported;
};
void hfe_batch_field(void *ctx, const char *f, size_t fl);

/* Active field expiry on shard s (locked by the caller): visits tracked
 * hashes from where the last call stopped and deletes fields whose
 * deadline passed, up to `budget` hashes looked at plus fields deleted. A
 * hash left empty is deleted (KEV_DEL_EMPTIED); one left without TTLs
 * loses its side table and leaves the set. Returns the fields deleted. */
unsigned shard_active_expire_fields(unsigned s, long long now_ms, unsigned budget);

#endif
