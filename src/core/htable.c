/* htable.c - intrusive chained hash table with incremental resizing; see
 * htable.h for the contract. While rehashing, `old` holds the array being
 * drained from bucket rehash_idx upwards and `buckets` the new array.
 *
 * The new array is allocated uninitialized (zeroing, and page-faulting in,
 * megabytes at once would be the very pause incremental rehashing avoids)
 * and a bucket j of it is initialized when old bucket j & omask is moved:
 * growing, old bucket i feeds exactly the new buckets i + k * oldsize;
 * shrinking, new bucket j is first fed by old bucket j. So new bucket j is
 * valid iff (j & omask) < rehash_idx, and an entry with hash h lives in old
 * bucket h & omask while that is not yet moved, else in new bucket
 * h & mask (ht_slot in htable.h). Every reader skips invalid buckets. */
#define HT_INSTANTIATE_PTR
#include "htable.h"

#include "alloc.h"
#include "util.h"

#include <string.h>

#include "htable_impl.h"

static inline uint64_t rev64(uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
    return __builtin_bswap64(v);
}

uint64_t ht_next_cursor(uint64_t mask, uint64_t cursor) {
    /* Increment the reversed cursor within the bits of the mask. */
    cursor |= ~mask;
    cursor = rev64(cursor);
    cursor++;
    return rev64(cursor);
}

/* Live bucket positions: the insert array, plus the old array's buckets
 * not yet moved while rehashing. */
static uint64_t live_positions(const struct htable *t) {
    if (!t->buckets) return 0;
    return t->mask + 1 + (t->old ? t->omask + 1 - t->rehash_idx : 0);
}

static unsigned chain_bound(const struct htable *t, uint64_t picks) {
    uint64_t n = live_positions(t);
    if (n > HT_SYNC_MAX && n / 16 > picks) return HT_FAIR_BOUND;
    unsigned longest = 1;
    for (uint64_t i = 0; i < n; i++) {
        unsigned len = 0;
        for (struct hnode *x = ht_sample_bucket(t, i); x; x = x->next) len++;
        if (len > longest) longest = len;
    }
    return longest;
}

void ht_sampler_init(struct ht_sampler *s, const struct htable *t, uint64_t picks) {
    s->t = t;
    s->mask = t->mask;
    s->old = t->old;
    s->picks = picks ? picks : 1;
    s->bound = chain_bound(t, s->picks);
}

struct hnode *ht_sampler_next(struct ht_sampler *s) {
    const struct htable *t = s->t;
    if (t->mask != s->mask || t->old != s->old) {
        s->mask = t->mask;
        s->old = t->old;
        s->bound = chain_bound(t, s->picks);
    }
    if (s->picks > 1) s->picks--;
    for (;;) {
        struct hnode *x = ht_sample_bucket(t, hk_rand64());
        if (!x) continue;
        unsigned len = 0;
        for (struct hnode *y = x; y; y = y->next) len++;
        if (len > s->bound) s->bound = len;
        uint64_t k = hk_rand64() % s->bound;
        if (k >= len) continue;
        while (k--) x = x->next;
        return x;
    }
}

