/* lazyfree.h - freeing big values and flushed databases off the request
 * path.
 *
 * One background thread frees what the workers hand it: key entries whose
 * value costs more than LAZYFREE_THRESHOLD allocations to free
 * (kv_free_effort: quicklist nodes, hash-table members, skiplist nodes;
 * Redis's rule), and the tables FLUSHALL/FLUSHDB detach from the keyspace.
 * Which deletions may go there is Redis's configuration: UNLINK always,
 * DEL with lazyfree-lazy-user-del, expiry with lazyfree-lazy-expire, a
 * command's implicit delete or overwrite with lazyfree-lazy-server-del,
 * eviction with lazyfree-lazy-eviction, FLUSH* without an argument with
 * lazyfree-lazy-user-flush. Small values are always freed in place: a
 * hand-off costs more than the free.
 *
 * The queue is a mutex-protected FIFO (a leaf lock: workers append while
 * holding shard locks; nothing is taken under it). Entries are linked
 * through their own hash-chain pointer, so a hand-off allocates nothing.
 * What is queued is unreachable from the keyspace, so the thread touches
 * no shard. This file is not the policy of when a key is deleted; it only
 * decides where the memory is released. */
#ifndef HK_LAZYFREE_H
#define HK_LAZYFREE_H

#include <stddef.h>

/* Values whose free effort is above this go to the background. */
#define LAZYFREE_THRESHOLD 64

struct flushed;

/* Install the store's free hook and start the thread; before the workers
 * start. */
void lazyfree_start(void);
/* Free everything still queued, then stop the thread; after the workers
 * have been joined. */
void lazyfree_stop(void);
/* Hand tables detached by ks_flush to the thread (FLUSH* ASYNC); their
 * keys count as pending until freed. Called after the shards are
 * unlocked. */
void lazyfree_flushed(struct flushed *f);
/* Once everything queued before this call has been freed, run fn(w, arg)
 * on worker w's thread (posted to its mailbox): FLUSH* SYNC answers its
 * client this way, after the tables it detached are gone. Without the
 * thread, fn is posted at once. */
struct worker;
void lazyfree_notify(struct worker *w, void (*fn)(struct worker *w, void *arg), void *arg);
/* INFO: objects queued and not yet freed (lazyfree_pending_objects), and
 * objects freed by the thread since start or CONFIG RESETSTAT
 * (lazyfreed_objects). */
unsigned long long lazyfree_pending(void);
unsigned long long lazyfree_freed(void);
void lazyfree_reset_stats(void);

#endif
