/* lockset.c - shard lock sets; see lockset.h. */
#include "lockset.h"

#include "../core/alloc.h"
#include "db.h"

#include <string.h>

void ls_init(struct lockset *ls) {
    ls->s = ls->inl;
    ls->n = 0;
    ls->cap = LS_INLINE;
    ls->all = 0;
    ls->held = 0;
}

void ls_destroy(struct lockset *ls) {
    if (ls->s != ls->inl) hk_free(ls->s);
    ls_init(ls);
}

void ls_grow(struct lockset *ls) {
    unsigned cap = ls->cap * 2;
    unsigned *s = hk_malloc(cap * sizeof(unsigned));
    memcpy(s, ls->s, ls->n * sizeof(unsigned));
    if (ls->s != ls->inl) hk_free(ls->s);
    ls->s = s;
    ls->cap = cap;
}

unsigned ls_nshards;


void ls_acquire_slow(struct lockset *ls) {
    unsigned n = ls_count(ls);
    for (unsigned i = 0; i < n; i++) shard_lock(ls_at(ls, i));
    ls->held = 1;
}

int ls_acquire_abortable_slow(struct lockset *ls) {
    unsigned n = ls_count(ls);
    for (unsigned i = 0; i < n; i++)
        if (!shard_lock_abortable(ls_at(ls, i))) {
            while (i-- > 0) shard_unlock(ls_at(ls, i));
            return 0;
        }
    ls->held = 1;
    return 1;
}

void ls_release_slow(struct lockset *ls) {
    if (!ls->held) return;
    for (unsigned i = ls_count(ls); i-- > 0;) shard_unlock(ls_at(ls, i));
    ls->held = 0;
}

int ls_holds(const struct lockset *ls, unsigned s) {
    if (ls->all) return 1;
    unsigned lo = 0, hi = ls->n;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (ls->s[mid] < s) lo = mid + 1;
        else hi = mid;
    }
    return lo < ls->n && ls->s[lo] == s;
}

int ls_extend(struct lockset *ls, unsigned s) {
    if (ls_holds(ls, s)) return 1;
    /* Every thread takes shards in ascending order, so waiting for one
     * above all we hold cannot close a cycle; below, another thread may
     * hold it while waiting for one of ours. */
    if (ls->n == 0 || s > ls->s[ls->n - 1]) shard_lock(s);
    else if (!shard_trylock(s)) return 0;
    ls_add(ls, s);
    /* A set that held nothing holds this shard now: release must free it. */
    ls->held = 1;
    return 1;
}
