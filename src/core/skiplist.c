/* skiplist.c - sorted-set skiplist with spans and a member hash table.
 *
 * Ordering is by score, then by member bytes (memcmp, shorter first on a
 * common prefix), which is the order Redis replies in. Levels are drawn
 * with p = 1/4 up to ZSL_MAXLEVEL. Spans count how many rank positions a
 * forward link skips, so rank lookups and rank-to-node are O(log N). The
 * member table chains the skiplist nodes themselves (see skiplist.h). */
#include "skiplist.h"

#include "alloc.h"
#include "hash.h"
#include "util.h"

#include <string.h>

uint64_t zsl_hash(const char *ele, size_t len) { return hk_hash(ele, len); }

static uint64_t node_rehash(const struct hnode *h, void *ctx) {
    const struct zsl_node *n = (const struct zsl_node *)h;
    return zsl_hash(zsl_ele(n), n->elen);
}

/* Order of node n against (score, ele): <0 when n sorts before. */
static int node_before(const struct zsl_node *n, double score, const char *ele, size_t len) {
    if (n->score < score) return 1;
    if (n->score > score) return 0;
    return hk_bytes_cmp(zsl_ele(n), n->elen, ele, len) < 0;
}

static struct zsl_node *node_alloc(int level, double score, const char *ele, size_t len) {
    struct zsl_node *n = hk_malloc(sizeof(*n) + (size_t)level * sizeof(struct zsl_level) + len);
    n->hn.next = NULL;
    n->score = score;
    n->backward = NULL;
    n->elen = (uint32_t)len;
    n->nlevel = (uint32_t)level;
    if (len) memcpy((char *)zsl_ele(n), ele, len);
    return n;
}

static int random_level(void) {
    int level = 1;
    uint64_t r = hk_rand64();
    /* Two random bits per level: continue with probability 1/4. */
    while (level < ZSL_MAXLEVEL && (r & 3) == 0) {
        level++;
        r >>= 2;
        if (!r) r = hk_rand64();
    }
    return level;
}

struct zsl *zsl_new(void) {
    struct zsl *z = hk_malloc(sizeof(*z));
    z->header = node_alloc(ZSL_MAXLEVEL, 0, NULL, 0);
    for (int i = 0; i < ZSL_MAXLEVEL; i++) {
        z->header->level[i].forward = NULL;
        z->header->level[i].span = 0;
    }
    z->tail = NULL;
    z->length = 0;
    z->level = 1;
    ht_init(&z->ht);
    return z;
}

void zsl_free(struct zsl *z) {
    if (!z) return;
    struct zsl_node *n = z->header->level[0].forward;
    while (n) {
        struct zsl_node *next = n->level[0].forward;
        hk_free(n);
        n = next;
    }
    hk_free(z->header);
    ht_release(&z->ht);
    hk_free(z);
}

struct zsl *zsl_dup(const struct zsl *z) {
    struct zsl *d = zsl_new();
    for (struct zsl_node *n = z->header->level[0].forward; n; n = n->level[0].forward)
        zsl_insert(d, n->score, zsl_ele(n), n->elen);
    return d;
}

size_t zsl_usage(const struct zsl *z) {
    size_t bytes = sizeof(*z) + sizeof(struct zsl_node) + ZSL_MAXLEVEL * sizeof(struct zsl_level) + ht_overhead(&z->ht);
    for (struct zsl_node *n = z->header->level[0].forward; n; n = n->level[0].forward)
        bytes += sizeof(*n) + n->nlevel * sizeof(struct zsl_level) + n->elen;
    return bytes;
}

struct zsl_key {
    const char *ele;
    size_t len;
};

static int node_match(const struct hnode *h, const void *key) {
    const struct zsl_node *n = (const struct zsl_node *)h;
    const struct zsl_key *k = key;
    return n->elen == k->len && memcmp(zsl_ele(n), k->ele, k->len) == 0;
}

static int node_is(const struct hnode *h, const void *key) { return h == key; }

struct zsl_node *zsl_find(struct zsl *z, const char *ele, size_t len) {
    struct zsl_key k = {ele, len};
    struct hnode **link = ht_find_link(&z->ht, zsl_hash(ele, len), node_match, &k);
    return link ? (struct zsl_node *)*link : NULL;
}

/* Link node x (levels already sized) at its ordered position. */
static void link_node(struct zsl *z, struct zsl_node *x) {
    struct zsl_node *update[ZSL_MAXLEVEL];
    unsigned long rank[ZSL_MAXLEVEL];
    struct zsl_node *p = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        rank[i] = i == z->level - 1 ? 0 : rank[i + 1];
        while (p->level[i].forward && node_before(p->level[i].forward, x->score, zsl_ele(x), x->elen)) {
            rank[i] += p->level[i].span;
            p = p->level[i].forward;
        }
        update[i] = p;
    }
    int level = (int)x->nlevel;
    if (level > z->level) {
        for (int i = z->level; i < level; i++) {
            rank[i] = 0;
            update[i] = z->header;
            update[i]->level[i].span = z->length;
        }
        z->level = level;
    }
    for (int i = 0; i < level; i++) {
        x->level[i].forward = update[i]->level[i].forward;
        update[i]->level[i].forward = x;
        x->level[i].span = update[i]->level[i].span - (rank[0] - rank[i]);
        update[i]->level[i].span = (rank[0] - rank[i]) + 1;
    }
    for (int i = level; i < z->level; i++)
        update[i]->level[i].span++;
    x->backward = update[0] == z->header ? NULL : update[0];
    if (x->level[0].forward)
        x->level[0].forward->backward = x;
    else
        z->tail = x;
    z->length++;
}

/* Remove node x from the skiplist links (not from the hash table). */
static void unlink_node(struct zsl *z, struct zsl_node *x) {
    struct zsl_node *update[ZSL_MAXLEVEL];
    struct zsl_node *p = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        while (p->level[i].forward && p->level[i].forward != x &&
               node_before(p->level[i].forward, x->score, zsl_ele(x), x->elen))
            p = p->level[i].forward;
        update[i] = p;
    }
    for (int i = 0; i < z->level; i++) {
        if (update[i]->level[i].forward == x) {
            update[i]->level[i].span += x->level[i].span - 1;
            update[i]->level[i].forward = x->level[i].forward;
        } else {
            update[i]->level[i].span--;
        }
    }
    if (x->level[0].forward)
        x->level[0].forward->backward = x->backward;
    else
        z->tail = x->backward;
    while (z->level > 1 && z->header->level[z->level - 1].forward == NULL)
        z->level--;
    z->length--;
}

struct zsl_node *zsl_insert(struct zsl *z, double score, const char *ele, size_t len) {
    struct zsl_node *x = node_alloc(random_level(), score, ele, len);
    link_node(z, x);
    ht_insert(&z->ht, &x->hn, zsl_hash(ele, len), node_rehash, NULL);
    return x;
}

void zsl_delete_node(struct zsl *z, struct zsl_node *n) {
    unlink_node(z, n);
    struct hnode **link = ht_find_link(&z->ht, zsl_hash(zsl_ele(n), n->elen), node_is, &n->hn);
    ht_unlink(&z->ht, link);
    ht_maybe_shrink(&z->ht, node_rehash, NULL);
    hk_free(n);
}

void zsl_update_score(struct zsl *z, struct zsl_node *n, double score) {
    /* Still in order with its neighbours: update in place. */
    if ((!n->backward || n->backward->score < score ||
         (n->backward->score == score &&
          hk_bytes_cmp(zsl_ele(n->backward), n->backward->elen, zsl_ele(n), n->elen) < 0)) &&
        (!n->level[0].forward || n->level[0].forward->score > score ||
         (n->level[0].forward->score == score &&
          hk_bytes_cmp(zsl_ele(n->level[0].forward), n->level[0].forward->elen, zsl_ele(n), n->elen) > 0))) {
        n->score = score;
        return;
    }
    unlink_node(z, n);
    n->score = score;
    link_node(z, n);
}

unsigned long zsl_rank(const struct zsl *z, const struct zsl_node *n) {
    unsigned long rank = 0;
    const struct zsl_node *p = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        while (p->level[i].forward &&
               (p->level[i].forward == n || node_before(p->level[i].forward, n->score, zsl_ele(n), n->elen))) {
            rank += p->level[i].span;
            p = p->level[i].forward;
            if (p == n) return rank;
        }
    }
    return 0;
}

struct zsl_node *zsl_by_rank(const struct zsl *z, unsigned long rank) {
    if (rank == 0 || rank > z->length) return NULL;
    unsigned long traversed = 0;
    struct zsl_node *p = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        while (p->level[i].forward && traversed + p->level[i].span <= rank) {
            traversed += p->level[i].span;
            p = p->level[i].forward;
        }
        if (traversed == rank) return p;
    }
    return NULL;
}

int zrange_gte_min(double v, const struct zrange *r) { return r->minex ? v > r->min : v >= r->min; }
int zrange_lte_max(double v, const struct zrange *r) { return r->maxex ? v < r->max : v <= r->max; }
int zrange_empty(const struct zrange *r) { return r->min > r->max || (r->min == r->max && (r->minex || r->maxex)); }

int zlex_gte_min(const char *s, size_t len, const struct zlex *r) {
    if (r->mininf < 0) return 1;
    if (r->mininf > 0) return 0;
    int c = hk_bytes_cmp(s, len, r->min, r->minlen);
    return r->minex ? c > 0 : c >= 0;
}

int zlex_lte_max(const char *s, size_t len, const struct zlex *r) {
    if (r->maxinf > 0) return 1;
    if (r->maxinf < 0) return 0;
    int c = hk_bytes_cmp(s, len, r->max, r->maxlen);
    return r->maxex ? c < 0 : c <= 0;
}

int zlex_empty(const struct zlex *r) {
    if (r->mininf > 0 || r->maxinf < 0) return 1;
    if (r->mininf < 0 || r->maxinf > 0) return 0;
    int c = hk_bytes_cmp(r->min, r->minlen, r->max, r->maxlen);
    return c > 0 || (c == 0 && (r->minex || r->maxex));
}

/* The range can hold something: the tail reaches min and the head is not
 * past max. Lex ranges need both ends checked, since members are only in
 * lex order where scores are equal; Redis checks both, and so do we. */
static int in_range(const struct zsl *z, const struct zrange *r) {
    const struct zsl_node *head = z->header->level[0].forward;
    return !zrange_empty(r) && head && zrange_gte_min(z->tail->score, r) && zrange_lte_max(head->score, r);
}

static int in_lex(const struct zsl *z, const struct zlex *r) {
    const struct zsl_node *head = z->header->level[0].forward;
    return !zlex_empty(r) && head && zlex_gte_min(zsl_ele(z->tail), z->tail->elen, r) &&
           zlex_lte_max(zsl_ele(head), head->elen, r);
}

struct zsl_node *zsl_first_in_range(const struct zsl *z, const struct zrange *r) {
    if (!in_range(z, r)) return NULL;
    const struct zsl_node *p = z->header;
    for (int i = z->level - 1; i >= 0; i--)
        while (p->level[i].forward && !zrange_gte_min(p->level[i].forward->score, r))
            p = p->level[i].forward;
    struct zsl_node *n = p->level[0].forward;
    return n && zrange_lte_max(n->score, r) ? n : NULL;
}

struct zsl_node *zsl_last_in_range(const struct zsl *z, const struct zrange *r) {
    if (!in_range(z, r)) return NULL;
    struct zsl_node *p = z->header;
    for (int i = z->level - 1; i >= 0; i--)
        while (p->level[i].forward && zrange_lte_max(p->level[i].forward->score, r))
            p = p->level[i].forward;
    return p != z->header && zrange_gte_min(p->score, r) ? p : NULL;
}

struct zsl_node *zsl_first_in_lex(const struct zsl *z, const struct zlex *r) {
    if (!in_lex(z, r)) return NULL;
    const struct zsl_node *p = z->header;
    for (int i = z->level - 1; i >= 0; i--)
        while (p->level[i].forward && !zlex_gte_min(zsl_ele(p->level[i].forward), p->level[i].forward->elen, r))
            p = p->level[i].forward;
    struct zsl_node *n = p->level[0].forward;
    return n && zlex_lte_max(zsl_ele(n), n->elen, r) ? n : NULL;
}

struct zsl_node *zsl_last_in_lex(const struct zsl *z, const struct zlex *r) {
    if (!in_lex(z, r)) return NULL;
    struct zsl_node *p = z->header;
    for (int i = z->level - 1; i >= 0; i--)
        while (p->level[i].forward && zlex_lte_max(zsl_ele(p->level[i].forward), p->level[i].forward->elen, r))
            p = p->level[i].forward;
    return p != z->header && zlex_gte_min(zsl_ele(p), p->elen, r) ? p : NULL;
}
