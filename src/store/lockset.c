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

/* How long an escalating script tries for a shard before reporting the
 * conflict (two scripts that need each other's shards). */
#define LS_ESCALATE_MS 1000


/* Take the set in ascending order. The first shard is waited for plainly
 * (nothing is held yet, so nobody can be waiting on this thread); the
 * others in slices, backing off while a script escalates (lockset.h).
 * Returns 1 held, 0 gave up on ls_wait_abort (abortable only). */
static int acquire_set(struct lockset *ls, int abortable) {
    unsigned n = ls_count(ls);
    for (;;) {
        unsigned i = 0;
        int r = 1;
        if (abortable) {
            if (!shard_lock_abortable(ls_at(ls, 0))) return 0;
        } else {
            shard_lock(ls_at(ls, 0));
        }
        for (i = 1; i < n; i++) {
            unsigned s = ls_at(ls, i);
            if (shard_trylock(s)) continue;
            r = shard_lock_yielding(s, abortable);
            if (r != 1) break;
        }
        if (i == n) {
            ls->held = 1;
            return 1;
        }
        while (i-- > 0) shard_unlock(ls_at(ls, i));
        if (r == 0) return 0;
        shard_escalation_wait();
    }
}

void ls_acquire_slow(struct lockset *ls) {
    if (ls_count(ls) == 0) {
        ls->held = 1;
        return;
    }
    acquire_set(ls, 0);
}

int ls_acquire_abortable_slow(struct lockset *ls) {
    if (ls_count(ls) == 0) {
        ls->held = 1;
        return 1;
    }
    return acquire_set(ls, 1);
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
    else if (!shard_lock_escalate(s, LS_ESCALATE_MS)) return 0;
    ls_add(ls, s);
    /* A set that held nothing holds this shard now: release must free it. */
    ls->held = 1;
    return 1;
}
