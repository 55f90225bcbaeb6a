/* hash.h - the HASH value: its two encodings and every operation on them.
 *
 * A small hash is a listpack of field, value, field, value ... (the
 * "listpack" encoding); past hash-max-listpack-entries fields, or with a
 * field or value longer than hash-max-listpack-value bytes (TLIM), it
 * becomes a hash table of entries that carry field and value in one
 * allocation (the "hashtable" encoding). Like Redis, a hash never converts
 * back. The lifecycle (free, dup, usage, digest) is hash_type_ops in the
 * type table (types.h). This is not the H* commands: nothing here knows a
 * client, a reply or the keyspace; callers hold the key's shard lock and
 * report every change through db_written() before calling a function that
 * edits the value. Functions that change a hash may replace its value
 * pointer and encoding, never the entry itself, so a caller's struct kv
 * pointer stays valid.
 *
 * Field TTLs. A hash with at least one field deadline keeps its listpack
 * or table as it is and gains a side table of deadlines by field (the
 * encodings ENC_LISTPACK_EX, reported "listpackex" as Redis does, and
 * ENC_HT_EX, reported "hashtable"); a hash without deadlines has no such
 * table, so it costs nothing more than before. The side table goes when
 * its last deadline does (hashv_ttl_trim). Deadlines are unix ms. The
 * functions below keep fields whose deadline passed: deleting them
 * (lazily or actively) is the caller's, which reports each one first
 * (hfe.h). */
#ifndef HK_TYPES_HASH_H
#define HK_TYPES_HASH_H

#include "../core/listpack.h"
#include "kv.h"
#include "types.h"

#include <stddef.h>
#include <stdint.h>

/* Called once per field/value pair. The bytes are valid during the call
 * only, unless the function handing them out says otherwise. */
typedef void (*hashv_visit_fn)(void *ctx, const char *f, size_t fl, const char *v, size_t vl);

/* A string read out of a hash. s/len point into the hash (valid until it
 * changes) or, for an integer packed in a listpack, into tmp's digits, so
 * the struct must outlive every use of s. */
struct hashv_val {
    const char *s;
    size_t len;
    struct lp_val tmp;
};

/* hashv_set's answer, so callers can sum it into HSET's reply. */
enum { HASHV_UPDATED = 0, HASHV_CREATED = 1 };

/* A new unlinked entry for key holding an empty listpack hash; the caller
 * must add a field before the key becomes visible empty. */
struct kv *hashv_new(const char *key, size_t klen, long long expire);
/* Number of fields. */
uint64_t hashv_len(const struct kv *e);
/* 1 while the hash is listpack-encoded (HSCAN returns it whole). */
int hashv_packed(const struct kv *e);
/* The listpack of a listpack-encoded hash (with or without field TTLs);
 * NULL for a table. */
const lpack *hashv_listpack(const struct kv *e);

/* Re-encode a listpack hash as a hash table presized for `hint` fields (0:
 * its current size). Only for listpack hashes; the old listpack is freed,
 * so any hashv_val or position taken from it is invalid afterwards. */
void hashv_convert(struct kv *e, uint64_t hint);
/* Before adding `pairs` field/value pairs whose longest field or value has
 * `longest` bytes and whose bytes sum to `total`: convert when they could
 * not all stay in the listpack. Like Redis, pairs is compared with the
 * limit before duplicates are known. A hash table is left alone. */
void hashv_try_convert(struct kv *e, uint64_t pairs, size_t longest, size_t total);

/* Look field f up: 1 with *out filled when present, 0 when absent. A
 * lookup in a table that is resizing moves some of its entries between
 * buckets, which no caller can observe. */
int hashv_get(const struct kv *e, const char *f, size_t fl, struct hashv_val *out);
/* 1 when field f is present. */
int hashv_exists(const struct kv *e, const char *f, size_t fl);
/* Set field f to v: HASHV_CREATED for a new field, HASHV_UPDATED when an
 * existing value was replaced. Converts to a hash table first when f or v
 * is too long for the listpack, and after adding when the field count
 * passes the limit. Every hashv_val taken before is invalid afterwards.
 * The field loses its TTL, as with HSET. */
int hashv_set(struct kv *e, const char *f, size_t fl, const char *v, size_t vl);
/* The same keeping the field's TTL (HINCRBY, HSETEX KEEPTTL). */
int hashv_set_keepttl(struct kv *e, const char *f, size_t fl, const char *v, size_t vl);
/* Delete field f; 1 when it existed, calling pre_change(pc) first. The
 * caller deletes the key once the hash is empty and calls hashv_shrink
 * after a batch of deletions. */
int hashv_del(struct kv *e, const char *f, size_t fl, struct pre_change *pc);
/* Give back hash table buckets once deletions left the table mostly empty;
 * nothing for a listpack. */
void hashv_shrink(struct kv *e);

/* Visit every pair once, in storage order. fn must not change the hash. */
void hashv_each(const struct kv *e, hashv_visit_fn fn, void *ctx);
/* One step of a reverse-binary cursor scan (htable.h's guarantee): visit
 * the pairs at `cursor` and return the next cursor, 0 when done. For a hash
 * table the bytes passed to fn stay valid until the hash changes, so a
 * caller may collect them across steps; a listpack hash is visited whole
 * (bytes valid during the call only) and 0 returned. fn must not change
 * the hash. */
uint64_t hashv_scan(struct kv *e, uint64_t cursor, hashv_visit_fn fn, void *ctx);

/* A random field of a non-empty hash into *f (its value is not read). */
void hashv_random_field(struct kv *e, struct hashv_val *f);
/* Visit `count` random pairs of a non-empty hash (HRANDFIELD with a count).
 * With `distinct`, count must not pass hashv_len(e) and no pair is visited
 * twice (count equal to the length visits the whole hash in storage
 * order); otherwise every pick is independent and repeats happen. fn must
 * not change the hash. */
void hashv_random_pairs(struct kv *e, uint64_t count, int distinct, hashv_visit_fn fn, void *ctx);

/* HINCRBY's arithmetic, changing nothing: the value of field f (0 when
 * absent) plus incr into *out. Returns HK_OK, HK_ERR_HASH_NOT_INT when the
 * stored value is not an integer, HK_ERR_OVERFLOW when the sum does not fit.
 * The caller reports its event, then stores the result with hashv_set. */
int hashv_incrby_result(const struct kv *e, const char *f, size_t fl, long long incr, long long *out);
/* HINCRBYFLOAT's arithmetic, changing nothing: HK_OK with *out, or
 * HK_ERR_HASH_NOT_FLOAT when the stored value is not a number,
 * HK_ERR_NAN_INF when the sum is not finite. */
int hashv_incrbyfloat_result(const struct kv *e, const char *f, size_t fl, long double incr, long double *out);

/* ---- field TTLs ---- */

/* Called with a field's bytes, valid during the call only. */
typedef void (*hashv_field_fn)(void *ctx, const char *f, size_t fl);

/* 1 when some field has a deadline (the encoding is one of the _EX). */
int hashv_has_ttl(const struct kv *e);
/* Number of fields with a deadline. */
uint64_t hashv_ttl_count(const struct kv *e);
/* Field f's deadline, -1 when it has none (or is absent). */
long long hashv_ttl(const struct kv *e, const char *f, size_t fl);
/* 1 when f has a deadline at or before now_ms. */
int hashv_field_expired(const struct kv *e, const char *f, size_t fl, long long now_ms);
/* Give existing field f the deadline `when`, attaching the side table
 * when it is the hash's first. */
void hashv_set_ttl(struct kv *e, const char *f, size_t fl, long long when);
/* Remove f's deadline: 1 when it had one. The side table stays until
 * hashv_ttl_trim. */
int hashv_persist(struct kv *e, const char *f, size_t fl);
/* The earliest deadline of e (LLONG_MAX: none), in constant time. */
long long hashv_next_expire(const struct kv *e);
/* Delete up to `max` fields whose deadline is at or before now_ms, the
 * earliest first, calling fn (when not NULL) with each just before it
 * goes; returns how many. O(log n) per field, nothing for fields not due.
 * The caller deletes the key once the hash is empty. */
unsigned hashv_expire_due(struct kv *e, long long now_ms, unsigned max, hashv_field_fn fn, void *ctx);
/* Drop the side table once no field has a deadline (the encoding goes
 * back to plain listpack or hashtable): 1 when it did. */
int hashv_ttl_trim(struct kv *e);

/* ---- RDB (rdb_hash.c) ---- */

struct rdb_out;
struct rdb_in;
/* The type's slots: the body of the type rdb_value_type picks (HASH,
 * HASH_LISTPACK, HASH_LISTPACK_EX, HASH_METADATA), and a hash read from
 * any hash type Redis 2.x to 8 wrote. */
int hash_rdb_save(const struct kv *e, struct rdb_out *o);
struct kv *hash_rdb_load(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire);
/* The load with its clock: fields whose deadline is before now_ms are
 * dropped (-1 keeps them), unless every field is due. */
struct kv *hash_rdb_load_at(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire,
                            long long now_ms);

#endif
