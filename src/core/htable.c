/* htable.c - intrusive chained hash table; see htable.h for the contract. */
#include "htable.h"

#include "alloc.h"

#include <string.h>

#define HT_MIN_SIZE 4

void ht_init(struct htable *t) {
    t->buckets = NULL;
    t->mask = 0;
    t->count = 0;
}

void ht_release(struct htable *t) {
    hk_free(t->buckets);
    ht_init(t);
}

void ht_resize(struct htable *t, uint64_t size, ht_hash_fn hash, void *ctx) {
    uint64_t n = HT_MIN_SIZE;
    while (n < size) n <<= 1;
    if (t->buckets && n == t->mask + 1) return;
    struct hnode **nb = hk_calloc(n, sizeof(*nb));
    if (t->buckets) {
        for (uint64_t i = 0; i <= t->mask; i++) {
            struct hnode *e = t->buckets[i];
            while (e) {
                struct hnode *next = e->next;
                uint64_t b = hash(e, ctx) & (n - 1);
                e->next = nb[b];
                nb[b] = e;
                e = next;
            }
        }
        hk_free(t->buckets);
    }
    t->buckets = nb;
    t->mask = n - 1;
}

void ht_insert(struct htable *t, struct hnode *n, uint64_t h, ht_hash_fn hash, void *ctx) {
    if (!t->buckets) ht_resize(t, HT_MIN_SIZE, hash, ctx);
    else if (t->count >= t->mask + 1) ht_resize(t, (t->mask + 1) * 2, hash, ctx);
    struct hnode **b = &t->buckets[h & t->mask];
    n->next = *b;
    *b = n;
    t->count++;
}

void ht_unlink(struct htable *t, struct hnode **link) {
    struct hnode *n = *link;
    *link = n->next;
    n->next = NULL;
    t->count--;
}

void ht_maybe_shrink(struct htable *t, ht_hash_fn hash, void *ctx) {
    if (!t->buckets) return;
    if (t->count == 0) {
        ht_release(t);
        return;
    }
    uint64_t size = t->mask + 1;
    if (size > HT_MIN_SIZE && t->count * 8 < size) ht_resize(t, t->count * 2, hash, ctx);
}

static inline uint64_t rev64(uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
    return __builtin_bswap64(v);
}

uint64_t ht_scan(struct htable *t, uint64_t cursor, ht_scan_fn fn, void *ctx) {
    if (!t->buckets) return 0;
    uint64_t m = t->mask;
    struct hnode *e = t->buckets[cursor & m];
    while (e) {
        struct hnode *next = e->next; /* fn may not unlink, but be safe */
        fn(e, ctx);
        e = next;
    }
    return ht_next_cursor(m, cursor);
}

uint64_t ht_next_cursor(uint64_t mask, uint64_t cursor) {
    /* Increment the reversed cursor within the bits of the mask. */
    cursor |= ~mask;
    cursor = rev64(cursor);
    cursor++;
    return rev64(cursor);
}

struct hnode *ht_random_bucket(struct htable *t, uint64_t rnd) {
    if (!t->count) return NULL;
    uint64_t i = rnd & t->mask;
    for (uint64_t k = 0; k <= t->mask; k++) {
        struct hnode *e = t->buckets[(i + k) & t->mask];
        if (e) return e;
    }
    return NULL;
}
