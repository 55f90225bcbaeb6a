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

/* Tables with at most this many buckets resize at once. */
#define HT_SYNC_MAX 1024

/* The table of hnode pointers: struct htable, struct ht_iter and the ht_*
 * functions (htable_tmpl.h lists them). Contract, for every instance:
 *
 * ht_init/ht_release: an empty table; release frees the bucket arrays only
 * (entries are the caller's, see ht_drain). ht_size: the insert array's
 * size (0 when empty). ht_rehash_step moves a few old buckets while
 * rehashing (lookups' slow path calls it); ht_rehash_all finishes at once.
 * ht_slot: the chain an entry with hash h lives in (or is inserted into):
 * while rehashing, the old bucket until it has moved, then the new one.
 *
 * ht_find_link: the link naming the node with hash h that `match` accepts,
 * or NULL. The link stays valid until the next insert, lookup, scan,
 * random pick or resize of this table (each may move entries); ht_unlink
 * through it or replace *link with a node of the same key (keeping its
 * next). Inline so a constant match function inlines on the common,
 * not-rehashing path.
 *
 * ht_insert: insert n (not present) with hash h, growing first when the
 * load passes 1. ht_unlink: unlink the node at *link; moves nothing.
 * ht_maybe_shrink: shrink when mostly empty; call after deletions.
 * ht_resize: to the power of two >= size (finishing any rehash first); big
 * non-empty tables move their entries incrementally afterwards.
 *
 * ht_scan: visit one cursor position (a bucket, or while rehashing a
 * bucket of the smaller array and all its expansions in the larger);
 * returns the next cursor (0 when done); fn must not unlink. ht_scan_reap:
 * the same, but a node for which fn returns nonzero is unlinked (fn may
 * free it; the table no longer reads it).
 *
 * ht_sample_bucket: the head of a uniformly chosen bucket among all live
 * buckets of both arrays; may be NULL (an empty bucket); moves nothing.
 * ht_random_bucket: a non-empty bucket's head (random start, probing on),
 * or NULL when empty. ht_overhead: bytes of the bucket arrays. ht_next:
 * the node after n in its chain.
 *
 * The iterator walks every entry once. The returned node may be unlinked
 * or freed (the next one is read ahead), but nothing may be inserted,
 * looked up or resized in the table while an iteration is in progress.
 * ht_drain calls fn on every entry (it may free them), then releases the
 * arrays. */
#define HT_(x) ht_##x
#define HT_TABLE htable
#define HT_ITER ht_iter
#define HT_NODE struct hnode
#define HT_LINK struct hnode *
#define HT_NIL NULL
#define HT_DEREF(l) (l)
#define HT_REF(n) (n)
#include "htable_tmpl.h"
#ifndef HT_INSTANTIATE_PTR
#include "htable_undef.h"
#endif

/* The cursor after `cursor` for a table with this mask (0 when done). */
uint64_t ht_next_cursor(uint64_t mask, uint64_t cursor);

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

#endif
