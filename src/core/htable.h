/* htable.h - an intrusive chained hash table with power-of-two buckets.
 *
 * Entries embed a `struct hnode` as their first member; the table stores
 * only bucket heads, so the per-entry overhead is one pointer plus the
 * bucket slot. The table never hashes keys itself: callers pass the hash on
 * insert and a match function on lookup, and give a rehash callback that
 * the table keeps for moving entries when it resizes.
 *
 * Resizing a big table is incremental: the old bucket array stays beside
 * the new one and every insert, lookup and scan step moves a few of its
 * buckets, so no single command pays for rehashing millions of entries.
 * Tables of at most HT_SYNC_MAX buckets still resize at once. Callers never
 * touch the bucket arrays: ht_find_link, the iterator, ht_scan and the
 * random helpers see both arrays while a rehash is in progress.
 *
 * ht_scan implements the reverse-binary cursor: every entry present for the
 * whole of a scan is returned at least once even if the table grows or
 * shrinks between calls, or is in the middle of a rehash. Not thread-safe;
 * the owner locks. */
#ifndef HK_HTABLE_H
#define HK_HTABLE_H

#include <stddef.h>
#include <stdint.h>

struct hnode {
    struct hnode *next;
};

typedef uint64_t (*ht_hash_fn)(const struct hnode *n, void *ctx);
typedef void (*ht_scan_fn)(struct hnode *n, void *ctx);
/* Nonzero when node n holds the key the caller looks for. */
typedef int (*ht_match_fn)(const struct hnode *n, const void *key);

/* Tables with at most this many buckets resize at once. */
#define HT_SYNC_MAX 1024

struct htable {
    struct hnode **buckets; /* the array inserts go to; NULL while empty */
    uint64_t mask;          /* its size - 1 */
    uint64_t count;         /* entries in both arrays */
    struct hnode **old;     /* array being drained while rehashing, else NULL */
    uint64_t omask;         /* its size - 1 */
    uint64_t rehash_idx;    /* old buckets below this are already moved */
    ht_hash_fn hash;        /* rehash callback, kept from insert/resize */
    void *hctx;
};

void ht_init(struct htable *t);
/* Free the bucket arrays; entries are the caller's (see ht_drain). */
void ht_release(struct htable *t);
/* Size of the array inserts go to (0 when empty). */
static inline uint64_t ht_size(const struct htable *t) { return t->buckets ? t->mask + 1 : 0; }
static inline int ht_rehashing(const struct htable *t) { return t->old != NULL; }
/* Move a few old buckets while rehashing; the lookup slow path calls it. */
void ht_rehash_step(struct htable *t);
/* Finish any rehash in progress at once. */
void ht_rehash_all(struct htable *t);
/* The chain an entry with hash h lives in (or is inserted into): while
 * rehashing, the old bucket until it has moved, then the new one. */
static inline struct hnode **ht_slot(struct htable *t, uint64_t h) {
    if (t->old && (h & t->omask) >= t->rehash_idx) return &t->old[h & t->omask];
    return &t->buckets[h & t->mask];
}
struct hnode **ht_find_link_slow(struct htable *t, uint64_t h, ht_match_fn match, const void *key);

/* The link pointing at the node with hash h that `match` accepts, or NULL.
 * The link stays valid until the next insert, lookup, scan, random pick or
 * resize of this table (each may move entries); ht_unlink through it or
 * replace *link with a node of the same key (keeping ->next). Inline so a
 * constant match function inlines on the common, not-rehashing path. */
static inline struct hnode **ht_find_link(struct htable *t, uint64_t h, ht_match_fn match, const void *key) {
    if (__builtin_expect(t->old != NULL, 0)) return ht_find_link_slow(t, h, match, key);
    if (!t->buckets) return NULL;
    for (struct hnode **link = &t->buckets[h & t->mask]; *link; link = &(*link)->next)
        if (match(*link, key)) return link;
    return NULL;
}

/* Insert n (not present) with hash h, growing first when the load passes 1. */
void ht_insert(struct htable *t, struct hnode *n, uint64_t h, ht_hash_fn hash, void *ctx);
/* Unlink the node at *link (a link from ht_find_link); moves nothing. */
void ht_unlink(struct htable *t, struct hnode **link);
/* Shrink when mostly empty; call after deletions. */
void ht_maybe_shrink(struct htable *t, ht_hash_fn hash, void *ctx);
/* Resize to the power of two >= size (finishing any rehash first); big
 * non-empty tables move their entries incrementally afterwards. */
void ht_resize(struct htable *t, uint64_t size, ht_hash_fn hash, void *ctx);
/* Visit one cursor position (a bucket, or while rehashing a bucket of the
 * smaller array and all its expansions in the larger); returns the next
 * cursor (0 when done). fn must not unlink. */
uint64_t ht_scan(struct htable *t, uint64_t cursor, ht_scan_fn fn, void *ctx);
/* Like ht_scan, but a node for which fn returns nonzero is unlinked; fn
 * may free it (the table no longer reads it). */
uint64_t ht_scan_reap(struct htable *t, uint64_t cursor, int (*fn)(struct hnode *n, void *ctx), void *ctx);
/* The cursor after `cursor` for a table with this mask (0 when done). */
uint64_t ht_next_cursor(uint64_t mask, uint64_t cursor);
/* The head of a uniformly chosen bucket among all live buckets of both
 * arrays; may be NULL (an empty bucket). Moves nothing. */
struct hnode *ht_sample_bucket(const struct htable *t, uint64_t rnd);
/* A non-empty bucket's head (random start, probing on), or NULL when empty. */
struct hnode *ht_random_bucket(struct htable *t, uint64_t rnd);
/* Uniform random picks. A live bucket position of either array is drawn
 * uniformly and then a depth below `bound`; a depth past the end of that
 * chain (or an empty bucket) is a miss and the draw is repeated. Every
 * entry then has the same chance, 1 / (positions * bound), as long as no
 * chain is longer than bound. The bound is the exact longest chain when
 * scanning the buckets costs no more than the planned picks (or the table
 * is small), otherwise HT_FAIR_BOUND, which no chain of a table kept near
 * load 1 by a keyed hash reaches except with negligible probability; a
 * longer chain met on the way raises it for the draws that follow. The
 * bound is worked out again when the table resizes between picks (the
 * caller may remove entries in between: SPOP). Expected draws per pick:
 * positions * bound / count. Moves nothing; the table must not be empty
 * when a pick is asked for. */
#define HT_FAIR_BOUND 16
struct ht_sampler {
    const struct htable *t;
    uint64_t mask;
    struct hnode *const *old;
    uint64_t picks;
    unsigned bound;
};
void ht_sampler_init(struct ht_sampler *s, const struct htable *t, uint64_t picks);
struct hnode *ht_sampler_next(struct ht_sampler *s);
/* Bytes used by the bucket arrays. */
static inline size_t ht_overhead(const struct htable *t) {
    return (ht_size(t) + (t->old ? t->omask + 1 : 0)) * sizeof(struct hnode *);
}

/* Walks every entry once. The returned node may be unlinked or freed
 * (the next one is read ahead), but nothing may be inserted, looked up or
 * resized in the table while an iteration is in progress. */
struct ht_iter {
    const struct htable *t;
    struct hnode **tab;
    uint64_t mask, b;
    struct hnode *next;
    int in_main;
};
void ht_iter_init(struct ht_iter *it, const struct htable *t);
struct hnode *ht_iter_next(struct ht_iter *it);
/* Call fn on every entry (it may free them), then release the arrays. */
void ht_drain(struct htable *t, void (*fn)(struct hnode *n, void *ctx), void *ctx);

#endif
