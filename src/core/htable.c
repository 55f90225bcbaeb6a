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
#include "htable.h"

#include "alloc.h"
#include "util.h"

#include <string.h>

#define HT_MIN_SIZE 4
/* Per step: move up to this many non-empty old buckets, or pass over up
 * to ten times as many empty ones, so a step is bounded either way. */
#define HT_STEP_BUCKETS 4

void ht_init(struct htable *t) {
    memset(t, 0, sizeof(*t));
}

void ht_release(struct htable *t) {
    hk_free(t->buckets);
    hk_free(t->old);
    ht_init(t);
}

/* Move old bucket i's chain into the new array, first initializing the
 * new buckets whose validity starts with this move. */
static void move_bucket(struct htable *t, uint64_t i) {
    for (uint64_t j = i; j <= t->mask; j += t->omask + 1) t->buckets[j] = NULL;
    struct hnode *e = t->old[i];
    while (e) {
        struct hnode *next = e->next;
        uint64_t b = t->hash(e, t->hctx) & t->mask;
        e->next = t->buckets[b];
        t->buckets[b] = e;
        e = next;
    }
    t->old[i] = NULL;
}

static void finish_if_done(struct htable *t) {
    if (t->rehash_idx <= t->omask) return;
    hk_free(t->old);
    t->old = NULL;
    t->omask = 0;
    t->rehash_idx = 0;
}

void ht_rehash_step(struct htable *t) {
    if (!t->old) return;
    unsigned moved = 0, empty = 0;
    while (t->rehash_idx <= t->omask && moved < HT_STEP_BUCKETS && empty < HT_STEP_BUCKETS * 10) {
        /* An empty bucket still initializes its new buckets. */
        if (t->old[t->rehash_idx]) moved++;
        else empty++;
        move_bucket(t, t->rehash_idx);
        t->rehash_idx++;
    }
    finish_if_done(t);
}

void ht_rehash_all(struct htable *t) {
    if (!t->old) return;
    for (; t->rehash_idx <= t->omask; t->rehash_idx++) move_bucket(t, t->rehash_idx);
    finish_if_done(t);
}

/* Switch to an array of n buckets (a power of two); no rehash is in
 * progress. Small tables move everything now, big ones keep the old array
 * to drain step by step. */
static void start_resize(struct htable *t, uint64_t n) {
    if (!t->buckets) {
        t->buckets = hk_calloc(n, sizeof(*t->buckets));
        t->mask = n - 1;
        return;
    }
    struct hnode **nb = hk_malloc(n * sizeof(*nb)); /* initialized by move_bucket */
    t->old = t->buckets;
    t->omask = t->mask;
    t->rehash_idx = 0;
    t->buckets = nb;
    t->mask = n - 1;
    if (t->omask + 1 <= HT_SYNC_MAX || t->count == 0) ht_rehash_all(t);
}

void ht_resize(struct htable *t, uint64_t size, ht_hash_fn hash, void *ctx) {
    uint64_t n = HT_MIN_SIZE;
    while (n < size) n <<= 1;
    t->hash = hash;
    t->hctx = ctx;
    ht_rehash_all(t);
    if (t->buckets && n == t->mask + 1) return;
    start_resize(t, n);
}

struct hnode **ht_find_link_slow(struct htable *t, uint64_t h, ht_match_fn match, const void *key) {
    ht_rehash_step(t);
    for (struct hnode **link = ht_slot(t, h); *link; link = &(*link)->next)
        if (match(*link, key)) return link;
    return NULL;
}

void ht_insert(struct htable *t, struct hnode *n, uint64_t h, ht_hash_fn hash, void *ctx) {
    t->hash = hash;
    t->hctx = ctx;
    if (t->old) ht_rehash_step(t);
    else if (!t->buckets) start_resize(t, HT_MIN_SIZE);
    else if (t->count >= t->mask + 1) {
        start_resize(t, (t->mask + 1) * 2);
        ht_rehash_step(t);
    }
    struct hnode **b = ht_slot(t, h);
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
    if (t->old) return; /* one resize at a time; it is progressing */
    uint64_t size = t->mask + 1;
    if (size > HT_MIN_SIZE && t->count * 8 < size) {
        t->hash = hash;
        t->hctx = ctx;
        uint64_t n = HT_MIN_SIZE;
        while (n < t->count * 2) n <<= 1;
        start_resize(t, n);
    }
}

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

/* Visit one chain: plain visit when reap is NULL, else unlink the nodes
 * reap accepts. */
static void visit_chain(struct htable *t, struct hnode **link, ht_scan_fn fn, int (*reap)(struct hnode *, void *),
                        void *ctx) {
    while (*link) {
        struct hnode *e = *link, *next = e->next;
        if (reap) {
            if (reap(e, ctx)) {
                *link = next;
                t->count--;
            } else {
                link = &e->next;
            }
        } else {
            fn(e, ctx);
            link = &e->next;
        }
    }
}

/* Whether bucket j of array tab may be read: always for the old array,
 * for the new one once its source old bucket has moved. */
static inline int new_valid(const struct htable *t, struct hnode *const *tab, uint64_t j) {
    return tab != t->buckets || !t->old || (j & t->omask) < t->rehash_idx;
}

/* One cursor position. Not rehashing: bucket cursor & mask. Rehashing:
 * bucket cursor & small in the smaller array and every bucket of the larger
 * whose low bits equal it, so everything that hashes to that small bucket
 * is seen whichever array holds it; the cursor then advances over the
 * smaller mask, exactly as a scan of a table of that size would. */
static uint64_t scan_step(struct htable *t, uint64_t cursor, ht_scan_fn fn, int (*reap)(struct hnode *, void *),
                          void *ctx) {
    if (!t->buckets) return 0;
    ht_rehash_step(t);
    if (!t->old) {
        visit_chain(t, &t->buckets[cursor & t->mask], fn, reap, ctx);
        return ht_next_cursor(t->mask, cursor);
    }
    struct hnode **small = t->buckets, **large = t->old;
    uint64_t sm = t->mask, lm = t->omask;
    if (sm > lm) {
        small = t->old;
        large = t->buckets;
        sm = t->omask;
        lm = t->mask;
    }
    uint64_t base = cursor & sm;
    if (new_valid(t, small, base)) visit_chain(t, &small[base], fn, reap, ctx);
    /* All of base's expansions: the bits of lm above sm take every value. */
    uint64_t step = sm + 1;
    for (uint64_t v = base; v <= lm; v += step)
        if (new_valid(t, large, v)) visit_chain(t, &large[v], fn, reap, ctx);
    return ht_next_cursor(sm, cursor);
}

uint64_t ht_scan(struct htable *t, uint64_t cursor, ht_scan_fn fn, void *ctx) {
    return scan_step(t, cursor, fn, NULL, ctx);
}

uint64_t ht_scan_reap(struct htable *t, uint64_t cursor, int (*fn)(struct hnode *n, void *ctx), void *ctx) {
    return scan_step(t, cursor, NULL, fn, ctx);
}

struct hnode *ht_sample_bucket(const struct htable *t, uint64_t rnd) {
    if (!t->buckets) return NULL;
    uint64_t main = t->mask + 1;
    if (!t->old) return t->buckets[rnd & t->mask];
    uint64_t live_old = t->omask + 1 - t->rehash_idx;
    uint64_t i = rnd % (main + live_old);
    if (i >= main) return t->old[t->rehash_idx + (i - main)];
    return new_valid(t, t->buckets, i) ? t->buckets[i] : NULL;
}

struct hnode *ht_random_bucket(struct htable *t, uint64_t rnd) {
    if (!t->count) return NULL;
    ht_rehash_step(t);
    uint64_t main = t->mask + 1;
    uint64_t live_old = t->old ? t->omask + 1 - t->rehash_idx : 0;
    uint64_t total = main + live_old;
    uint64_t i = (t->old ? rnd % total : rnd & t->mask);
    for (uint64_t k = 0; k < total; k++) {
        uint64_t j = i + k < total ? i + k : i + k - total;
        struct hnode *e = NULL;
        if (j >= main) e = t->old[t->rehash_idx + (j - main)];
        else if (new_valid(t, t->buckets, j)) e = t->buckets[j];
        if (e) return e;
    }
    return NULL;
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

void ht_iter_init(struct ht_iter *it, const struct htable *t) {
    it->t = t;
    it->next = NULL;
    if (t->old) {
        it->tab = t->old;
        it->mask = t->omask;
        it->b = t->rehash_idx;
        it->in_main = 0;
    } else {
        it->tab = t->buckets;
        it->mask = t->mask;
        it->b = 0;
        it->in_main = 1;
    }
}

struct hnode *ht_iter_next(struct ht_iter *it) {
    while (!it->next) {
        if (!it->tab || it->b > it->mask) {
            if (it->in_main) return NULL;
            it->in_main = 1;
            it->tab = it->t->buckets;
            it->mask = it->t->mask;
            it->b = 0;
            continue;
        }
        if (new_valid(it->t, it->tab, it->b)) it->next = it->tab[it->b];
        it->b++;
    }
    struct hnode *n = it->next;
    it->next = n->next;
    return n;
}

void ht_drain(struct htable *t, void (*fn)(struct hnode *n, void *ctx), void *ctx) {
    struct ht_iter it;
    ht_iter_init(&it, t);
    for (struct hnode *n; (n = ht_iter_next(&it));) fn(n, ctx);
    ht_release(t);
}
