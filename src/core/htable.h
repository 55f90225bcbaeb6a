/* htable.h - an intrusive chained hash table with power-of-two buckets.
 *
 * Entries embed a `struct hnode` as their first member; the table stores
 * only bucket heads, so the per-entry overhead is one pointer plus the
 * bucket slot. The table never hashes keys itself: callers pass the hash on
 * insert and walk a bucket to find their key, and give a rehash callback
 * when the table resizes. Resizing rehashes the whole table at once, which
 * is why the keyspace keeps one small table per shard.
 *
 * ht_scan implements the reverse-binary cursor: every entry present for the
 * whole of a scan is returned at least once even if the table grows or
 * shrinks between calls. Not thread-safe; the owner locks. */
#ifndef HK_HTABLE_H
#define HK_HTABLE_H

#include <stddef.h>
#include <stdint.h>

struct hnode {
    struct hnode *next;
};

struct htable {
    struct hnode **buckets; /* NULL while empty */
    uint64_t mask;          /* size - 1 */
    uint64_t count;
};

typedef uint64_t (*ht_hash_fn)(const struct hnode *n, void *ctx);
typedef void (*ht_scan_fn)(struct hnode *n, void *ctx);

void ht_init(struct htable *t);
/* Free the bucket array; entries are the caller's (walk them first). */
void ht_release(struct htable *t);
static inline uint64_t ht_size(const struct htable *t) { return t->buckets ? t->mask + 1 : 0; }
/* Head link of the bucket for hash h; NULL when the table has no buckets. */
static inline struct hnode **ht_bucket(struct htable *t, uint64_t h) {
    return t->buckets ? &t->buckets[h & t->mask] : NULL;
}
/* Insert n (not present) with hash h, growing first when the load passes 1. */
void ht_insert(struct htable *t, struct hnode *n, uint64_t h, ht_hash_fn hash, void *ctx);
/* Unlink the node at *link (a link obtained from walking a bucket). */
void ht_unlink(struct htable *t, struct hnode **link);
/* Shrink when mostly empty; call after deletions. */
void ht_maybe_shrink(struct htable *t, ht_hash_fn hash, void *ctx);
void ht_resize(struct htable *t, uint64_t size, ht_hash_fn hash, void *ctx);
/* Visit one bucket at cursor; returns the next cursor (0 when done). */
uint64_t ht_scan(struct htable *t, uint64_t cursor, ht_scan_fn fn, void *ctx);
/* The cursor after `cursor` for a table with this mask (0 when done). */
uint64_t ht_next_cursor(uint64_t mask, uint64_t cursor);
/* A uniformly chosen non-empty bucket's head, or NULL when empty. */
struct hnode *ht_random_bucket(struct htable *t, uint64_t rnd);
/* Bytes used by the bucket array. */
static inline size_t ht_overhead(const struct htable *t) { return ht_size(t) * sizeof(struct hnode *); }

#endif
