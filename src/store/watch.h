/* watch.h - keys that someone is waiting on: WATCH signals and the FIFOs of
 * clients blocked on a key.
 *
 * Each shard keeps, only while anyone cares, a small table of `struct
 * wkey` entries, one per (database, key) that is watched (WATCH) or has
 * blocked clients (BLPOP, BZPOPMIN, ...). The write hook (db_written)
 * looks the written key up there, so a write to a key nobody watches costs
 * one pointer test. An entry carries:
 *   - a modification counter (`version`), bumped by every write to that
 *     very key: WATCH records it and EXEC compares. It is per key, so a
 *     write to another key of the same shard does not count;
 *   - a FIFO of waiters, each naming a client id, its worker and a kind.
 *     On a write that may leave data in the key, each kind is woken by its
 *     own rule: the first waiter only (list and sorted-set pops, which
 *     consume what they get: first come, first served), or every waiter
 *     (XREAD-style readers, which all see the same data).
 *
 * Everything here runs under the shard's lock. Waking a waiter is a
 * callback (wk_signal_hook) that the server sets to post a message to the
 * waiter's worker; this layer knows no clients or threads. Entries are
 * freed when their last watcher and waiter leave. */
#ifndef HK_WATCH_H
#define HK_WATCH_H

#include "../core/htable.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct keyref;
struct shard;

/* Waiter kinds and their wake rules (see wk_kind_wakes_all). */
enum { WK_LIST = 0, WK_ZSET = 1, WK_STREAM = 2, WK_NKINDS = 3 };

struct bwaiter {
    struct bwaiter *next, *prev; /* in the key's FIFO */
    struct wkey *wk;
    uint64_t cid;  /* client id */
    int worker;    /* the client's worker */
    int kind;
    int signaled;  /* a wake-up is on its way; the waiter clears it when it re-runs */
    /* The server's, under the shard lock like the rest: when the waiter
     * blocked, on the server's wake-batch clock, and the wake batches its
     * pending re-run is counted in (see wk_signal_hook). */
    uint64_t gen;
    void *batches;
    /* 0, or a reader's group (a hash of its name, never 0): waiters of one
     * group on one key take new entries in FIFO order (wk_tag_busy), and
     * pass the turn to the next of their group when they leave. */
    uint64_t tag;
};

/* One WATCH of a key by one transaction (owner: the server's state of
 * that connection's transaction). */
struct wwatcher {
    struct wwatcher *next, *prev;
    struct wkey *wk;
    void *owner;
};

struct wkey {
    struct hnode node;
    uint64_t hash;
    uint64_t version;   /* writes to this key since the entry was created */
    unsigned watchers;  /* WATCH references */
    struct wwatcher *whead;
    struct bwaiter *head, *tail;
    int nkind[WK_NKINDS];
    int db;
    size_t klen;
    char key[];
};

/* Set by the server: post a wake-up for waiter w (shard locked; must not
 * block or take a shard lock). Called for every signal: `again` says a
 * wake-up is already on its way (w->signaled was set), so none is to be
 * posted, but the writer may still want to count on the pending re-run. */
extern void (*wk_signal_hook)(struct bwaiter *w, int again);
/* Set by the server: a key `owner` watches was written (shard locked;
 * may take only leaf locks). */
extern void (*wk_dirty_hook)(void *owner);
/* Keys watched by at least one transaction, over every shard (INFO
 * total_watched_keys). */
extern _Atomic long long wk_watched_keys;

/* The entry of k in its (locked) shard, or NULL. */
struct wkey *wk_find(const struct keyref *k);
/* The entry of k, created (version 0, nobody attached) when missing. */
struct wkey *wk_get(const struct keyref *k);
/* Free wk if nobody watches or waits on it any more. */
void wk_release(unsigned shard, struct wkey *wk);

/* WATCH: add owner's watch of k (its record in *out) and return the
 * key's version to compare later. */
uint64_t wk_watch(const struct keyref *k, void *owner, struct wwatcher **out);
/* UNWATCH of a watch taken by wk_watch (shard locked). */
void wk_unwatch(unsigned shard, struct wwatcher *w);

/* Append a waiter (allocated here) at the tail of k's FIFO. */
struct bwaiter *wk_wait(const struct keyref *k, uint64_t cid, int worker, int kind);
/* Take w out of its FIFO and free it; where it was the first of its kind
 * and that kind wakes one at a time, the next waiter of the kind is
 * signaled if the key still holds a value (the data it did not take may
 * serve someone else); likewise a
 * signaled tagged waiter that was the first of its tag signals the next
 * one of that tag. Frees the entry when it empties. */
void wk_leave(unsigned shard, struct bwaiter *w);
/* First waiter of `kind` on k, or NULL. */
struct bwaiter *wk_first(const struct wkey *wk, int kind);

/* Group readers (XREADGROUP). wk_set_tag tags client cid's waiter on k
 * (right after it blocked). wk_tag_busy: is a waiter with `tag` that was
 * signaled (new entries are on their way to it) queued on k ahead of
 * client cid's own waiter, or anywhere when cid has none there? Then new
 * entries are that waiter's to take first. */
void wk_set_tag(const struct keyref *k, uint64_t cid, uint64_t tag);
int wk_tag_busy(const struct keyref *k, uint64_t tag, uint64_t cid);

/* The write hook's part here (db_written): bump k's version and wake its
 * waiters by the event's `ready` (events.h): 1, by their kinds' rules; 0
 * (the key may be gone), the tagged stream waiters, whose command fails
 * then (NOGROUP); 2, nobody. */
void wk_touch(struct shard *s, const struct keyref *k, int ready);
/* Same for every entry of database db in shard s (FLUSHDB, SWAPDB):
 * `exists(wk, arg)` tells whether the key held a value that the change
 * affects; only those are bumped (a WATCH of a key that was absent and
 * stays absent is not disturbed), and with `ready` all waiters are woken
 * (without it, the tagged stream waiters of those keys). */
void wk_touch_db(struct shard *s, int db, int ready, int (*exists)(const struct wkey *wk, void *arg), void *arg);

#endif
