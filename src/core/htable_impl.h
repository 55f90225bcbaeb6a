/* htable_impl.h - the definitions of the table htable_tmpl.h declares,
 * for the same HT_* definitions; see htable.c for how rehashing keeps
 * every bucket readable. Included once per instance, by a .c file that
 * includes "alloc.h" and <string.h> first. */

#ifndef HT_MIN_SIZE
#define HT_MIN_SIZE 4
/* Per step: move up to this many non-empty old buckets, or pass over up
 * to ten times as many empty ones, so a step is bounded either way. */
#define HT_STEP_BUCKETS 4
#endif

void HT_(init)(struct HT_TABLE *t) {
    memset(t, 0, sizeof(*t));
}

void HT_(release)(struct HT_TABLE *t) {
    hk_free(t->buckets);
    hk_free(t->old);
    HT_(init)(t);
}

/* Move old bucket i's chain into the new array, first initializing the
 * new buckets whose validity starts with this move. */
static void HT_(move_bucket)(struct HT_TABLE *t, uint64_t i) {
    for (uint64_t j = i; j <= t->mask; j += t->omask + 1) t->buckets[j] = HT_NIL;
    HT_LINK l = t->old[i];
    while (l != HT_NIL) {
        HT_NODE *e = HT_DEREF(l);
        HT_LINK next = e->next;
        uint64_t b = t->hash(e, t->hctx) & t->mask;
        e->next = t->buckets[b];
        t->buckets[b] = l;
        l = next;
    }
    t->old[i] = HT_NIL;
}

static void HT_(finish_if_done)(struct HT_TABLE *t) {
    if (t->rehash_idx <= t->omask) return;
    hk_free(t->old);
    t->old = NULL;
    t->omask = 0;
    t->rehash_idx = 0;
}

void HT_(rehash_step)(struct HT_TABLE *t) {
    if (!t->old) return;
    unsigned moved = 0, empty = 0;
    while (t->rehash_idx <= t->omask && moved < HT_STEP_BUCKETS && empty < HT_STEP_BUCKETS * 10) {
        /* An empty bucket still initializes its new buckets. */
        if (t->old[t->rehash_idx] != HT_NIL) moved++;
        else empty++;
        HT_(move_bucket)(t, t->rehash_idx);
        t->rehash_idx++;
    }
    HT_(finish_if_done)(t);
}

void HT_(rehash_all)(struct HT_TABLE *t) {
    if (!t->old) return;
    for (; t->rehash_idx <= t->omask; t->rehash_idx++) HT_(move_bucket)(t, t->rehash_idx);
    HT_(finish_if_done)(t);
}

/* Switch to an array of n buckets (a power of two); no rehash is in
 * progress. Small tables move everything now, big ones keep the old array
 * to drain step by step. */
static void HT_(start_resize)(struct HT_TABLE *t, uint64_t n) {
    if (!t->buckets) {
        t->buckets = hk_calloc(n, sizeof(*t->buckets)); /* all HT_NIL */
        t->mask = n - 1;
        return;
    }
    HT_LINK *nb = hk_malloc(n * sizeof(*nb)); /* initialized by move_bucket */
    t->old = t->buckets;
    t->omask = t->mask;
    t->rehash_idx = 0;
    t->buckets = nb;
    t->mask = n - 1;
    if (t->omask + 1 <= HT_SYNC_MAX || t->count == 0) HT_(rehash_all)(t);
}

void HT_(resize)(struct HT_TABLE *t, uint64_t size, HT_(hash_fn) hash, void *ctx) {
    uint64_t n = HT_MIN_SIZE;
    while (n < size) n <<= 1;
    t->hash = hash;
    t->hctx = ctx;
    HT_(rehash_all)(t);
    if (t->buckets && n == t->mask + 1) return;
    HT_(start_resize)(t, n);
}

HT_LINK *HT_(find_link_slow)(struct HT_TABLE *t, uint64_t h, HT_(match_fn) match, const void *key) {
    HT_(rehash_step)(t);
    for (HT_LINK *link = HT_(slot)(t, h); *link != HT_NIL; link = &HT_DEREF(*link)->next)
        if (match(HT_DEREF(*link), key)) return link;
    return NULL;
}

void HT_(insert)(struct HT_TABLE *t, HT_NODE *n, uint64_t h, HT_(hash_fn) hash, void *ctx) {
    t->hash = hash;
    t->hctx = ctx;
    if (t->old) HT_(rehash_step)(t);
    else if (!t->buckets) HT_(start_resize)(t, HT_MIN_SIZE);
    else if (t->count >= t->mask + 1) {
        HT_(start_resize)(t, (t->mask + 1) * 2);
        HT_(rehash_step)(t);
    }
    HT_LINK *b = HT_(slot)(t, h);
    n->next = *b;
    *b = HT_REF(n);
    t->count++;
}

void HT_(unlink)(struct HT_TABLE *t, HT_LINK *link) {
    HT_NODE *n = HT_DEREF(*link);
    *link = n->next;
    n->next = HT_NIL;
    t->count--;
}

void HT_(maybe_shrink)(struct HT_TABLE *t, HT_(hash_fn) hash, void *ctx) {
    if (!t->buckets) return;
    if (t->count == 0) {
        HT_(release)(t);
        return;
    }
    if (t->old) return; /* one resize at a time; it is progressing */
    uint64_t size = t->mask + 1;
    if (size > HT_MIN_SIZE && t->count * 8 < size) {
        t->hash = hash;
        t->hctx = ctx;
        uint64_t n = HT_MIN_SIZE;
        while (n < t->count * 2) n <<= 1;
        HT_(start_resize)(t, n);
    }
}

/* Visit one chain: plain visit when reap is NULL, else unlink the nodes
 * reap accepts. */
static void HT_(visit_chain)(struct HT_TABLE *t, HT_LINK *link, HT_(scan_fn) fn, int (*reap)(HT_NODE *, void *),
                            void *ctx) {
    while (*link != HT_NIL) {
        HT_NODE *e = HT_DEREF(*link);
        HT_LINK next = e->next;
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
static inline int HT_(new_valid)(const struct HT_TABLE *t, HT_LINK const *tab, uint64_t j) {
    return tab != t->buckets || !t->old || (j & t->omask) < t->rehash_idx;
}

/* One cursor position. Not rehashing: bucket cursor & mask. Rehashing:
 * bucket cursor & small in the smaller array and every bucket of the larger
 * whose low bits equal it, so everything that hashes to that small bucket
 * is seen whichever array holds it; the cursor then advances over the
 * smaller mask, exactly as a scan of a table of that size would. */
static uint64_t HT_(scan_step)(struct HT_TABLE *t, uint64_t cursor, HT_(scan_fn) fn,
                               int (*reap)(HT_NODE *, void *), void *ctx) {
    if (!t->buckets) return 0;
    HT_(rehash_step)(t);
    if (!t->old) {
        HT_(visit_chain)(t, &t->buckets[cursor & t->mask], fn, reap, ctx);
        return ht_next_cursor(t->mask, cursor);
    }
    HT_LINK *small = t->buckets;
    HT_LINK *large = t->old;
    uint64_t sm = t->mask, lm = t->omask;
    if (sm > lm) {
        small = t->old;
        large = t->buckets;
        sm = t->omask;
        lm = t->mask;
    }
    uint64_t base = cursor & sm;
    if (HT_(new_valid)(t, small, base)) HT_(visit_chain)(t, &small[base], fn, reap, ctx);
    /* All of base's expansions: the bits of lm above sm take every value. */
    uint64_t step = sm + 1;
    for (uint64_t v = base; v <= lm; v += step)
        if (HT_(new_valid)(t, large, v)) HT_(visit_chain)(t, &large[v], fn, reap, ctx);
    return ht_next_cursor(sm, cursor);
}

uint64_t HT_(scan)(struct HT_TABLE *t, uint64_t cursor, HT_(scan_fn) fn, void *ctx) {
    return HT_(scan_step)(t, cursor, fn, NULL, ctx);
}

uint64_t HT_(scan_reap)(struct HT_TABLE *t, uint64_t cursor, int (*fn)(HT_NODE *n, void *ctx), void *ctx) {
    return HT_(scan_step)(t, cursor, NULL, fn, ctx);
}

/* The node a bucket's link names, or NULL. */
static inline HT_NODE *HT_(head)(HT_LINK l) { return l != HT_NIL ? HT_DEREF(l) : NULL; }

HT_NODE *HT_(sample_bucket)(const struct HT_TABLE *t, uint64_t rnd) {
    if (!t->buckets) return NULL;
    uint64_t main = t->mask + 1;
    if (!t->old) return HT_(head)(t->buckets[rnd & t->mask]);
    uint64_t live_old = t->omask + 1 - t->rehash_idx;
    uint64_t i = rnd % (main + live_old);
    if (i >= main) return HT_(head)(t->old[t->rehash_idx + (i - main)]);
    return HT_(new_valid)(t, t->buckets, i) ? HT_(head)(t->buckets[i]) : NULL;
}

HT_NODE *HT_(random_bucket)(struct HT_TABLE *t, uint64_t rnd) {
    if (!t->count) return NULL;
    HT_(rehash_step)(t);
    uint64_t main = t->mask + 1;
    uint64_t live_old = t->old ? t->omask + 1 - t->rehash_idx : 0;
    uint64_t total = main + live_old;
    uint64_t i = (t->old ? rnd % total : rnd & t->mask);
    for (uint64_t k = 0; k < total; k++) {
        uint64_t j = i + k < total ? i + k : i + k - total;
        HT_LINK l = HT_NIL;
        if (j >= main) l = t->old[t->rehash_idx + (j - main)];
        else if (HT_(new_valid)(t, t->buckets, j)) l = t->buckets[j];
        if (l != HT_NIL) return HT_DEREF(l);
    }
    return NULL;
}

void HT_(iter_init)(struct HT_ITER *it, const struct HT_TABLE *t) {
    it->t = t;
    it->next = HT_NIL;
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

HT_NODE *HT_(iter_next)(struct HT_ITER *it) {
    while (it->next == HT_NIL) {
        if (!it->tab || it->b > it->mask) {
            if (it->in_main) return NULL;
            it->in_main = 1;
            it->tab = it->t->buckets;
            it->mask = it->t->mask;
            it->b = 0;
            continue;
        }
        if (HT_(new_valid)(it->t, it->tab, it->b)) it->next = it->tab[it->b];
        it->b++;
    }
    HT_NODE *n = HT_DEREF(it->next);
    it->next = n->next;
    return n;
}

void HT_(drain)(struct HT_TABLE *t, void (*fn)(HT_NODE *n, void *ctx), void *ctx) {
    struct HT_ITER it;
    HT_(iter_init)(&it, t);
    for (HT_NODE *n; (n = HT_(iter_next)(&it));) fn(n, ctx);
    HT_(release)(t);
}
