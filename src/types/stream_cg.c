/* stream_cg.c - a stream's consumer groups, their consumers and their
 * pending-entries lists (stream.h): creation, lookup by name, deletion,
 * the PEL's id order (per group and per consumer) and delivery-time
 * order, and the groups' part of the type's lifecycle (free, copy,
 * memory). Entries, nodes and trimming are stream.c's.
 *
 * Groups and consumers are kept in arrays ordered by name (bytes, the
 * shorter first on a tie, as Redis's radix tree orders them), found by
 * binary search. A pending record is one allocation linked three ways:
 * into the group's id index and the consumer's id index, both treaps
 * whose priorities are a keyed hash of the id (so no balance field is
 * stored beyond one word, and an attacker choosing ids cannot choose the
 * shape), and into the group's list ordered by delivery time and then
 * id. */
#include "../core/alloc.h"
#include "../core/util.h"
#include "stream.h"
#include "stream_int.h"

#include <stdint.h>
#include <string.h>

/* ---- treaps of pending records ------------------------------------------------------ */

enum { T_GROUP = 0, T_CONS = 1 };

/* The priority: the id mixed with a per-process key (the address of a
 * static object, so it differs from run to run under ASLR and needs no
 * initialisation or lock). */
static uint64_t nack_prio(const streamid *id) {
    uint64_t x = id->ms * 0x9e3779b97f4a7c15ULL ^ (id->seq + 0x632be59bd9b4e019ULL) ^
                 (uint64_t)(uintptr_t)&stream_type_ops;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 32;
    return x;
}

static void tr_insert(struct stream_nack **root, struct stream_nack *x, int w) {
    struct stream_nack **link = root;
    while (*link && (*link)->prio >= x->prio) link = &(*link)->t[w][streamid_cmp(&x->id, &(*link)->id) > 0];
    /* Split what hangs at link around x's id. */
    struct stream_nack *cur = *link, **l = &x->t[w][0], **r = &x->t[w][1];
    while (cur) {
        if (streamid_cmp(&cur->id, &x->id) < 0) {
            *l = cur;
            l = &cur->t[w][1];
            cur = cur->t[w][1];
        } else {
            *r = cur;
            r = &cur->t[w][0];
            cur = cur->t[w][0];
        }
    }
    *l = *r = NULL;
    *link = x;
}

static void tr_remove(struct stream_nack **root, struct stream_nack *x, int w) {
    struct stream_nack **link = root;
    while (*link && *link != x) link = &(*link)->t[w][streamid_cmp(&x->id, &(*link)->id) > 0];
    if (!*link) return;
    /* Merge x's subtrees in its place. */
    struct stream_nack *a = x->t[w][0], *b = x->t[w][1];
    while (a && b) {
        if (a->prio >= b->prio) {
            *link = a;
            link = &a->t[w][1];
            a = a->t[w][1];
        } else {
            *link = b;
            link = &b->t[w][0];
            b = b->t[w][0];
        }
    }
    *link = a ? a : b;
    x->t[w][0] = x->t[w][1] = NULL;
}

static struct stream_nack *tr_find(struct stream_nack *n, const streamid *id, int w) {
    while (n) {
        int c = streamid_cmp(id, &n->id);
        if (!c) return n;
        n = n->t[w][c > 0];
    }
    return NULL;
}

/* The record with the greatest id. */
static struct stream_nack *tr_last(struct stream_nack *n, int w) {
    if (!n) return NULL;
    while (n->t[w][1]) n = n->t[w][1];
    return n;
}

/* The first record with id >= start (strict: > start). */
static struct stream_nack *tr_seek(struct stream_nack *n, const streamid *start, int strict, int w) {
    struct stream_nack *best = NULL;
    while (n) {
        int c = streamid_cmp(&n->id, start);
        if (c > 0 || (c == 0 && !strict)) {
            best = n;
            if (c == 0) break;
            n = n->t[w][0];
        } else {
            n = n->t[w][1];
        }
    }
    return best;
}

/* ---- the delivery-time list ------------------------------------------------------------ */

static void tl_unlink(struct stream_cg *cg, struct stream_nack *n) {
    if (n->prev) n->prev->next = n->next;
    else cg->oldest = n->next;
    if (n->next) n->next->prev = n->prev;
    else cg->newest = n->prev;
    n->prev = n->next = NULL;
}

/* Whether a sorts after b in delivery-time order: by time, then by id, as
 * Redis keys its pel_by_time tree, so which of two records delivered in
 * the same millisecond is older does not depend on the order of the
 * calls. */
static int tl_after(const struct stream_nack *a, const struct stream_nack *b) {
    if (a->delivery_time != b->delivery_time) return a->delivery_time > b->delivery_time;
    return streamid_cmp(&a->id, &b->id) > 0;
}

/* Place n by (delivery time, id). The common case (now, a new id) is the
 * tail; an older time, or a smaller id of the newest time, walks back
 * from there. */
static void tl_insert(struct stream_cg *cg, struct stream_nack *n) {
    struct stream_nack *after = cg->newest;
    while (after && tl_after(after, n)) after = after->prev;
    n->prev = after;
    n->next = after ? after->next : cg->oldest;
    if (n->next) n->next->prev = n;
    else cg->newest = n;
    if (after) after->next = n;
    else cg->oldest = n;
}

/* ---- groups ------------------------------------------------------------------------------ */

/* The slot of name in an array of n names (found: *hit = 1). */
#define NAME_SEARCH(ARR_, N_, NM_, NL_, HIT_)                                                                          \
    ({                                                                                                                 \
        size_t lo_ = 0, hi_ = (N_);                                                                                    \
        *(HIT_) = 0;                                                                                                   \
        while (lo_ < hi_) {                                                                                            \
            size_t mid_ = lo_ + (hi_ - lo_) / 2;                                                                       \
            int c_ = hk_bytes_cmp((ARR_)[mid_]->name, (ARR_)[mid_]->nlen, (NM_), (NL_));                              \
            if (c_ == 0) {                                                                                             \
                *(HIT_) = 1;                                                                                           \
                lo_ = mid_;                                                                                            \
                break;                                                                                                 \
            }                                                                                                          \
            if (c_ < 0) lo_ = mid_ + 1;                                                                                \
            else hi_ = mid_;                                                                                           \
        }                                                                                                              \
        lo_;                                                                                                           \
    })

/* Take ITEM_ out of the array ARR_ (N_ used), keeping the order. */
#define NAMED_REMOVE(ARR_, N_, ITEM_)                                                                                  \
    do {                                                                                                               \
        for (size_t i_ = 0; i_ < (N_); i_++) {                                                                         \
            if ((ARR_)[i_] != (ITEM_)) continue;                                                                       \
            memmove(&(ARR_)[i_], &(ARR_)[i_ + 1], ((N_) - i_ - 1) * sizeof(*(ARR_)));                                  \
            (N_)--;                                                                                                    \
            break;                                                                                                     \
        }                                                                                                              \
    } while (0)

/* A zeroed record of `size` bytes followed, in the same allocation, by a
 * NUL-terminated copy of name (*copy points at it). */
static void *named_new(size_t size, const char *name, size_t nlen, char **copy) {
    char *r = hk_calloc(1, size + nlen + 1);
    *copy = r + size;
    memcpy(*copy, name, nlen);
    return r;
}

/* A new record of type T_ named NM_ (NL_ bytes), zeroed but for its name
 * and put in its place in the name-ordered array ARR_ (N_ used, CAP_
 * allocated, doubling when full); NULL when one of that name is there. */
#define NAMED_CREATE(T_, ARR_, N_, CAP_, NM_, NL_)                                                                     \
    ({                                                                                                                 \
        int hit_;                                                                                                      \
        size_t at_ = NAME_SEARCH(ARR_, N_, NM_, NL_, &hit_);                                                           \
        T_ *r_ = NULL;                                                                                                 \
        if (!hit_) {                                                                                                   \
            char *copy_;                                                                                               \
            r_ = named_new(sizeof(T_), (NM_), (NL_), &copy_);                                                          \
            r_->name = copy_;                                                                                          \
            r_->nlen = (NL_);                                                                                          \
            if ((N_) == (CAP_)) {                                                                                      \
                (CAP_) = (CAP_) ? (CAP_) * 2 : 2;                                                                      \
                (ARR_) = hk_realloc((ARR_), (CAP_) * sizeof(*(ARR_)));                                                 \
            }                                                                                                          \
            memmove(&(ARR_)[at_ + 1], &(ARR_)[at_], ((N_) - at_) * sizeof(*(ARR_)));                                   \
            (ARR_)[at_] = r_;                                                                                          \
            (N_)++;                                                                                                    \
        }                                                                                                              \
        r_;                                                                                                            \
    })

struct stream_cg *stream_cg_find(const struct stream *s, const char *name, size_t nlen) {
    int hit;
    size_t i = NAME_SEARCH(s->groups, s->ngroups, name, nlen, &hit);
    return hit ? s->groups[i] : NULL;
}

struct stream_cg *stream_cg_create(struct stream *s, const char *name, size_t nlen, const streamid *last_id,
                                   long long entries_read) {
    struct stream_cg *cg = NAMED_CREATE(struct stream_cg, s->groups, s->ngroups, s->groups_cap, name, nlen);
    if (!cg) return NULL;
    cg->last_id = *last_id;
    cg->entries_read = entries_read;
    return cg;
}

static void cg_free(struct stream_cg *cg) {
    for (struct stream_nack *n = cg->oldest, *next; n; n = next) {
        next = n->next;
        hk_free(n);
    }
    for (size_t i = 0; i < cg->nconsumers; i++) hk_free(cg->consumers[i]);
    hk_free(cg->consumers);
    hk_free(cg);
}

void stream_cg_destroy(struct stream *s, struct stream_cg *cg) {
    NAMED_REMOVE(s->groups, s->ngroups, cg);
    cg_free(cg);
    if (!s->ngroups) {
        hk_free(s->groups);
        s->groups = NULL;
        s->groups_cap = 0;
    }
}

/* ---- consumers ---------------------------------------------------------------------------- */

struct stream_consumer *stream_consumer_find(const struct stream_cg *cg, const char *name, size_t nlen) {
    int hit;
    size_t i = NAME_SEARCH(cg->consumers, cg->nconsumers, name, nlen, &hit);
    return hit ? cg->consumers[i] : NULL;
}

struct stream_consumer *stream_consumer_create(struct stream_cg *cg, const char *name, size_t nlen, long long now_ms) {
    struct stream_consumer *c =
        NAMED_CREATE(struct stream_consumer, cg->consumers, cg->nconsumers, cg->consumers_cap, name, nlen);
    if (!c) return NULL;
    c->seen_time = now_ms;
    c->active_time = -1;
    c->cg = cg;
    return c;
}

/* Take every record of c's subtree out of the group's index and time
 * list and free it (the consumer's own index goes with c). */
static void cons_drop_all(struct stream_cg *cg, struct stream_nack *n) {
    while (n) {
        cons_drop_all(cg, n->t[T_CONS][0]);
        struct stream_nack *right = n->t[T_CONS][1];
        tr_remove((struct stream_nack **)&cg->pel, n, T_GROUP);
        tl_unlink(cg, n);
        cg->pel_count--;
        hk_free(n);
        n = right;
    }
}

uint64_t stream_consumer_delete(struct stream_cg *cg, struct stream_consumer *c) {
    uint64_t pending = c->pel_count;
    cons_drop_all(cg, c->pel);
    NAMED_REMOVE(cg->consumers, cg->nconsumers, c);
    hk_free(c);
    return pending;
}

/* ---- the pending-entries list ---------------------------------------------------------- */

struct stream_nack *stream_pel_find(const struct stream_cg *cg, const streamid *id) {
    return tr_find(cg->pel, id, T_GROUP);
}

struct stream_nack *stream_pel_add(struct stream_cg *cg, struct stream_consumer *c, const streamid *id,
                                   long long now_ms) {
    struct stream_nack *n = hk_calloc(1, sizeof(*n));
    n->id = *id;
    n->delivery_time = now_ms;
    n->delivery_count = 1;
    n->consumer = c;
    n->prio = nack_prio(id);
    tr_insert((struct stream_nack **)&cg->pel, n, T_GROUP);
    tr_insert((struct stream_nack **)&c->pel, n, T_CONS);
    tl_insert(cg, n);
    cg->pel_count++;
    c->pel_count++;
    return n;
}

void stream_pel_assign(struct stream_cg *cg, struct stream_nack *n, struct stream_consumer *c, long long delivery_time,
                       int bump) {
    if (n->consumer != c) {
        tr_remove((struct stream_nack **)&n->consumer->pel, n, T_CONS);
        n->consumer->pel_count--;
        n->consumer = c;
        tr_insert((struct stream_nack **)&c->pel, n, T_CONS);
        c->pel_count++;
    }
    if (n->delivery_time != delivery_time) {
        tl_unlink(cg, n);
        n->delivery_time = delivery_time;
        tl_insert(cg, n);
    }
    if (bump) n->delivery_count++;
}

void stream_pel_ack(struct stream_cg *cg, struct stream_nack *n) {
    tr_remove((struct stream_nack **)&cg->pel, n, T_GROUP);
    tr_remove((struct stream_nack **)&n->consumer->pel, n, T_CONS);
    tl_unlink(cg, n);
    cg->pel_count--;
    n->consumer->pel_count--;
    hk_free(n);
}

struct stream_nack *stream_pel_seek(const struct stream_cg *cg, const streamid *start) {
    return tr_seek(cg->pel, start, 0, T_GROUP);
}

struct stream_nack *stream_pel_next(const struct stream_cg *cg, const struct stream_nack *n) {
    return tr_seek(cg->pel, &n->id, 1, T_GROUP);
}

struct stream_nack *stream_cons_seek(const struct stream_consumer *c, const streamid *start) {
    return tr_seek(c->pel, start, 0, T_CONS);
}

struct stream_nack *stream_cons_next(const struct stream_consumer *c, const struct stream_nack *n) {
    return tr_seek(c->pel, &n->id, 1, T_CONS);
}

struct stream_nack *stream_pel_last(const struct stream_cg *cg) { return tr_last(cg->pel, T_GROUP); }

struct stream_nack *stream_pel_newer(const struct stream_nack *n) { return n->next; }

/* ---- the groups' part of the lifecycle ------------------------------------------------- */

void stream_groups_free(struct stream *s) {
    for (size_t i = 0; i < s->ngroups; i++) cg_free(s->groups[i]);
    hk_free(s->groups);
    s->groups = NULL;
    s->ngroups = s->groups_cap = 0;
}

size_t stream_groups_unref(struct stream *s, const streamid *id) {
    size_t n = 0;
    for (size_t i = 0; i < s->ngroups; i++) {
        struct stream_nack *na = stream_pel_find(s->groups[i], id);
        if (na) {
            stream_pel_ack(s->groups[i], na);
            n++;
        }
    }
    return n;
}

void stream_groups_dup(struct stream *dst, const struct stream *src) {
    for (size_t g = 0; g < src->ngroups; g++) {
        const struct stream_cg *cg = src->groups[g];
        struct stream_cg *ng = stream_cg_create(dst, cg->name, cg->nlen, &cg->last_id, cg->entries_read);
        for (size_t i = 0; i < cg->nconsumers; i++) {
            const struct stream_consumer *c = cg->consumers[i];
            struct stream_consumer *nc = stream_consumer_create(ng, c->name, c->nlen, c->seen_time);
            nc->active_time = c->active_time;
        }
        /* Oldest first, each appended at the tail: the time order and
         * the order among equal times are kept. */
        for (const struct stream_nack *n = cg->oldest; n; n = n->next) {
            int hit;
            size_t ci = NAME_SEARCH(cg->consumers, cg->nconsumers, n->consumer->name, n->consumer->nlen, &hit);
            struct stream_consumer *nc = ng->consumers[ci];
            struct stream_nack *m = hk_calloc(1, sizeof(*m));
            m->id = n->id;
            m->delivery_time = n->delivery_time;
            m->delivery_count = n->delivery_count;
            m->consumer = nc;
            m->prio = n->prio;
            tr_insert((struct stream_nack **)&ng->pel, m, T_GROUP);
            tr_insert((struct stream_nack **)&nc->pel, m, T_CONS);
            m->prev = ng->newest;
            if (ng->newest) ng->newest->next = m;
            else ng->oldest = m;
            ng->newest = m;
            ng->pel_count++;
            nc->pel_count++;
        }
    }
}

size_t stream_groups_usage(const struct stream *s) {
    if (!s->groups) return 0;
    size_t total = hk_usable_size(s->groups), nack = hk_good_size(sizeof(struct stream_nack));
    for (size_t i = 0; i < s->ngroups; i++) {
        const struct stream_cg *cg = s->groups[i];
        total += hk_usable_size((void *)cg) + (size_t)cg->pel_count * nack;
        if (cg->consumers) total += hk_usable_size(cg->consumers);
        for (size_t j = 0; j < cg->nconsumers; j++) total += hk_usable_size(cg->consumers[j]);
    }
    return total;
}
