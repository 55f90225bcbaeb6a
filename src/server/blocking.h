/* blocking.h - clients blocked on keys (BLPOP, BLMOVE, BZPOPMIN, ...).
 *
 * The registry lives in the keyspace shards (struct shard.bkeys, under the
 * shard lock): per key, a FIFO of waiters naming a client id and its
 * worker, never a client pointer. A write to a watched key (db_touch_write,
 * SWAPDB) posts a wake-up to the worker of the first waiter of each kind;
 * that worker re-runs the blocked command under the shard locks in retry
 * mode, where the command may only pop from keys on which its client is the
 * first waiter of its kind (first come, first served). A served client
 * leaves every FIFO and passes the wake-up on to the next waiter. This
 * module does not know the commands: handlers in src/cmd/blocking_cmd.c
 * call block_may_serve and block_client. */
#ifndef HK_BLOCKING_H
#define HK_BLOCKING_H

#include "server.h"

/* Kinds of waiters: a key holding a list only serves BK_LIST waiters. */
#define BK_LIST 0
#define BK_ZSET 1
#define BK_NKINDS 2

void block_init(void);
/* Parse a timeout in seconds (fractional) at argv[idx] into an absolute
 * deadline in ms (0: forever). Replies the error and returns 0 if bad. */
int block_parse_timeout(struct client *c, int idx, long long *deadline_ms);
/* 1 while the running command is a wake-up re-run of a blocked command. */
static inline int block_is_retry(const struct client *c) { return (c->flags & CLIENT_BLOCK_RETRY) != 0; }
/* Key k (its shard locked) has a value of `kind`: may c pop from it now?
 * A new command may not when waiters of that kind queue on k; a re-run
 * may only when its client is the first of them. */
int block_may_serve(struct client *c, const struct keyref *k, int kind);
/* Nothing could be served: block c on the keys at argv[keyidx[i]] (their
 * shards locked by dispatch) until deadline_ms (0: forever). In a re-run,
 * keep waiting. Where blocking is denied (MULTI, scripts:
 * CLIENT_DENY_BLOCKING) reply the non-blocking form's null instead
 * (null_bulk: a null bulk string, else a null array). */
void block_client(struct client *c, const int *keyidx, int nkeys, int kind, long long deadline_ms, int null_bulk);
/* Forget a blocked client that goes away (no reply). Own worker only. */
void block_remove(struct client *c);
/* Worker loop: time out blocked clients whose deadline passed, and cap
 * the epoll wait so deadlines are met within a few milliseconds. */
void block_timeouts(struct worker *w);
long long block_wait_ms(struct worker *w, long long wait);
/* CLIENT UNBLOCK on worker w: unblock its client `id` with a null reply
 * (error 0) or the UNBLOCKED error. Returns 1 if such a client was blocked. */
int block_unblock_id(struct worker *w, uint64_t id, int error);

#endif
