/* lockset.h - a set of keyspace shards locked together.
 *
 * Every command runs with a lock set: the shards of its keys, or all of
 * them (FLUSHALL, SWAPDB). A set is built (ls_add / ls_add_all), acquired
 * in ascending shard order (so two sets can never deadlock), and released
 * together. A caller that already holds a set (EXEC, a script) runs inner
 * commands under it: ls_covers tells whether the inner command's shards are
 * held, and ls_extend adds a shard to a held set without risking deadlock
 * (it blocks only for a shard above every held one; below, it only tries).
 *
 * Re-entrance: a thread never locks a shard twice. A set is acquired only
 * when the thread holds no other set (the outermost command); nested
 * commands consult the outer set instead of acquiring their own.
 *
 * A set belongs to the thread that built it; nothing here is shared. */
#ifndef HK_LOCKSET_H
#define HK_LOCKSET_H

#include <stdint.h>

#define LS_INLINE 16

struct lockset {
    unsigned *s;    /* sorted, unique shard indexes (unused when `all`) */
    unsigned n, cap;
    unsigned char all;  /* every shard */
    unsigned char held; /* acquired */
    unsigned inl[LS_INLINE];
};

void ls_init(struct lockset *ls);
/* Free a grown array (the set must not be held). */
void ls_destroy(struct lockset *ls);
/* Empty the set (not held), keeping its storage. */
static inline void ls_clear(struct lockset *ls) {
    ls->n = 0;
    ls->all = 0;
}
/* Add shard s (a no-op when present or when the set is `all`). Sets with
 * few shards stay sorted by insertion; big ones too (memmove). */
void ls_add(struct lockset *ls, unsigned s);
/* Every shard of the keyspace. */
static inline void ls_add_all(struct lockset *ls) { ls->all = 1; }
/* Lock every shard of the set in ascending order. The calling thread must
 * hold no shard lock. */
void ls_acquire(struct lockset *ls);
/* Unlock them (descending order). */
void ls_release(struct lockset *ls);
/* Is shard s in the set? */
int ls_holds(const struct lockset *ls, unsigned s);
/* Is every shard of `want` in `ls`? */
int ls_covers(const struct lockset *ls, const struct lockset *want);
/* Add shard s to the held set ls and lock it. Safe against deadlock: a
 * shard above every held one is waited for; a lower one is only tried.
 * Returns 1 when s is held afterwards, 0 when it could not be taken. */
int ls_extend(struct lockset *ls, unsigned s);
/* Highest shard of a non-empty set (nshards - 1 for `all`). */
unsigned ls_max(const struct lockset *ls);
/* Number of shards in the set. */
unsigned ls_count(const struct lockset *ls);
/* The i-th shard in ascending order (i < ls_count). */
static inline unsigned ls_at(const struct lockset *ls, unsigned i) { return ls->all ? i : ls->s[i]; }

#endif
