/* lockset.h - a set of keyspace shards locked together.
 *
 * Every command runs with a lock set: the shards of its keys, or all of
 * them (FLUSHALL, SWAPDB). A set is built (ls_add / ls_add_all), acquired
 * in ascending shard order (so two sets can never deadlock), and released
 * together. A caller that already holds a set (EXEC, a script) runs inner
 * commands under it: ls_holds tells whether an inner command's shard is
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
 * few shards stay sorted by insertion; big ones too (memmove). The first
 * shard of an empty set (every single-key command) is stored inline. */
void ls_grow(struct lockset *ls);
static inline void ls_add(struct lockset *ls, unsigned s) {
    if (ls->all) return;
    /* Keys usually arrive in no particular order but few per command: an
     * insertion from the end is cheapest for those. */
    unsigned j = ls->n;
    while (j > 0 && ls->s[j - 1] > s) j--;
    if (j > 0 && ls->s[j - 1] == s) return;
    if (ls->n == ls->cap) ls_grow(ls);
    for (unsigned i = ls->n; i > j; i--) ls->s[i] = ls->s[i - 1];
    ls->s[j] = s;
    ls->n++;
}
/* Every shard of the keyspace. */
static inline void ls_add_all(struct lockset *ls) { ls->all = 1; }
/* Lock every shard of the set in ascending order. The calling thread must
 * hold no shard lock. */
void ls_acquire_slow(struct lockset *ls);
void shard_lock(unsigned s);
void shard_unlock(unsigned s);
static inline void ls_acquire(struct lockset *ls) {
    if (ls->n == 1 && !ls->all) {
        shard_lock(ls->s[0]);
        ls->held = 1;
        return;
    }
    ls_acquire_slow(ls);
}
/* Set while a script runs past busy-reply-threshold (script.c): a wait
 * for a contended shard then gives up instead of waiting for the script,
 * and the command answers -BUSY. */
#include <stdatomic.h>
extern _Atomic int ls_wait_abort;
/* shard_lock that gives up (returning 0) while ls_wait_abort is set and
 * the shard is taken. */
int shard_lock_abortable(unsigned s);
/* ls_acquire, giving up like shard_lock_abortable: returns 1 with the set
 * held, or 0 with nothing held. */
int ls_acquire_abortable_slow(struct lockset *ls);
static inline int ls_acquire_abortable(struct lockset *ls) {
    if (ls->n == 1 && !ls->all) {
        if (!shard_lock_abortable(ls->s[0])) return 0;
        ls->held = 1;
        return 1;
    }
    return ls_acquire_abortable_slow(ls);
}
/* Escalation. A script that has already written and then needs a shard
 * below one it holds cannot wait for it plainly: the holder may be a
 * command taking its set in ascending order that waits for one of the
 * script's shards. So the script announces itself (ls_escalating) and
 * polls the shard for a bounded time, and every acquisition that holds
 * shards while it waits for another (the multi-shard paths of ls_acquire*)
 * waits in short slices and, seeing an escalation, releases what it holds,
 * waits for the escalation to end and starts over: it has run nothing yet.
 * Two escalating scripts that need each other's shards both give up after
 * the bound and report the conflict. */
extern _Atomic int ls_escalating;
/* Lock s in slices: 1 taken; 0 gave up on ls_wait_abort (when abortable);
 * -1 an escalation is under way (nothing taken). */
int shard_lock_yielding(unsigned s, int abortable);
/* Wait until no escalation is under way. */
void shard_escalation_wait(void);
/* Take s, announced as an escalation, trying for at most max_ms; 1 taken. */
int shard_lock_escalate(unsigned s, long max_ms);

/* Unlock them (descending order). */
void ls_release_slow(struct lockset *ls);
static inline void ls_release(struct lockset *ls) {
    if (ls->held && ls->n == 1 && !ls->all) {
        shard_unlock(ls->s[0]);
        ls->held = 0;
        return;
    }
    ls_release_slow(ls);
}
/* Is shard s in the set? */
int ls_holds(const struct lockset *ls, unsigned s);
/* Add shard s to the held set ls and lock it (an empty set counts as
 * held afterwards). Safe against deadlock: a shard above every held one is
 * waited for; a lower one is only tried. Returns 1 when s is held
 * afterwards, 0 when it could not be taken. */
int ls_extend(struct lockset *ls, unsigned s);
/* Number of shards in the set. */
extern unsigned ls_nshards; /* the keyspace's shard count (set by ks_init) */
static inline unsigned ls_count(const struct lockset *ls) { return ls->all ? ls_nshards : ls->n; }
/* The i-th shard in ascending order (i < ls_count). */
static inline unsigned ls_at(const struct lockset *ls, unsigned i) { return ls->all ? i : ls->s[i]; }

#endif
