/* htable_tmpl.h - the declarations of an intrusive chained hash table,
 * instantiated for one node and link type. No include guard: a header that
 * wants a table defines these and includes this file (and its .c includes
 * htable_impl.h with the same definitions):
 *
 *   HT_(name)   the function prefix (ht_name)
 *   HT_TABLE    the table's struct tag, HT_ITER the iterator's
 *   HT_NODE     the node type, with a member `next` of type HT_LINK
 *   HT_LINK     how one node names another (a pointer, or a slab handle)
 *   HT_NIL      the link to no node
 *   HT_DEREF(l) the node a non-nil link names, HT_REF(n) the link to n
 *
 * htable.h documents the contract; the keyspace's table (src/store/ktable.h)
 * is the same table with 4-byte handles for links. */

typedef uint64_t (*HT_(hash_fn))(const HT_NODE *n, void *ctx);
typedef void (*HT_(scan_fn))(HT_NODE *n, void *ctx);
typedef int (*HT_(match_fn))(const HT_NODE *n, const void *key);

struct HT_TABLE {
    HT_LINK *buckets;    /* the array inserts go to; NULL while empty */
    uint64_t mask;       /* its size - 1 */
    uint64_t count;      /* entries in both arrays */
    HT_LINK *old;        /* array being drained while rehashing, else NULL */
    uint64_t omask;      /* its size - 1 */
    uint64_t rehash_idx; /* old buckets below this are already moved */
    HT_(hash_fn) hash;   /* rehash callback, kept from insert/resize */
    void *hctx;
};

void HT_(init)(struct HT_TABLE *t);
void HT_(release)(struct HT_TABLE *t);
static inline uint64_t HT_(size)(const struct HT_TABLE *t) { return t->buckets ? t->mask + 1 : 0; }
static inline int HT_(rehashing)(const struct HT_TABLE *t) { return t->old != NULL; }
void HT_(rehash_step)(struct HT_TABLE *t);
void HT_(rehash_all)(struct HT_TABLE *t);
static inline HT_LINK *HT_(slot)(struct HT_TABLE *t, uint64_t h) {
    if (t->old && (h & t->omask) >= t->rehash_idx) return &t->old[h & t->omask];
    return &t->buckets[h & t->mask];
}
HT_LINK *HT_(find_link_slow)(struct HT_TABLE *t, uint64_t h, HT_(match_fn) match, const void *key);
static inline HT_LINK *HT_(find_link)(struct HT_TABLE *t, uint64_t h, HT_(match_fn) match, const void *key) {
    if (__builtin_expect(t->old != NULL, 0)) return HT_(find_link_slow)(t, h, match, key);
    if (!t->buckets) return NULL;
    for (HT_LINK *link = &t->buckets[h & t->mask]; *link != HT_NIL; link = &HT_DEREF(*link)->next)
        if (match(HT_DEREF(*link), key)) return link;
    return NULL;
}
void HT_(insert)(struct HT_TABLE *t, HT_NODE *n, uint64_t h, HT_(hash_fn) hash, void *ctx);
void HT_(unlink)(struct HT_TABLE *t, HT_LINK *link);
void HT_(maybe_shrink)(struct HT_TABLE *t, HT_(hash_fn) hash, void *ctx);
void HT_(resize)(struct HT_TABLE *t, uint64_t size, HT_(hash_fn) hash, void *ctx);
uint64_t HT_(scan)(struct HT_TABLE *t, uint64_t cursor, HT_(scan_fn) fn, void *ctx);
uint64_t HT_(scan_reap)(struct HT_TABLE *t, uint64_t cursor, int (*fn)(HT_NODE *n, void *ctx), void *ctx);
HT_NODE *HT_(sample_bucket)(const struct HT_TABLE *t, uint64_t rnd);
HT_NODE *HT_(random_bucket)(struct HT_TABLE *t, uint64_t rnd);
static inline size_t HT_(overhead)(const struct HT_TABLE *t) {
    return (HT_(size)(t) + (t->old ? t->omask + 1 : 0)) * sizeof(HT_LINK);
}
/* The node after n in its chain, or NULL. */
static inline HT_NODE *HT_(next)(const HT_NODE *n) { return n->next != HT_NIL ? HT_DEREF(n->next) : NULL; }

struct HT_ITER {
    const struct HT_TABLE *t;
    HT_LINK *tab;
    uint64_t mask, b;
    HT_LINK next;
    int in_main;
};
void HT_(iter_init)(struct HT_ITER *it, const struct HT_TABLE *t);
HT_NODE *HT_(iter_next)(struct HT_ITER *it);
void HT_(drain)(struct HT_TABLE *t, void (*fn)(HT_NODE *n, void *ctx), void *ctx);
