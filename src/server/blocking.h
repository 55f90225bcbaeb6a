/* blocking.h - clients blocked on keys (BLPOP, BLMOVE, BZPOPMIN, ...).
 *
 * The waiter FIFOs live in the keyspace shards (store/watch.h, under the
 * shard lock): per key, waiters naming a client id and its worker, never a
 * client pointer. A write to a key with waiters (db_written) signals them
 * by their kind's rule, which posts a wake-up to the waiter's worker; that
 * worker re-runs the blocked command through exec_command in retry mode
 * (CTX_RETRY), where the command may only pop from keys on which its
 * client is the first waiter of its kind (first come, first served). A
 * served client leaves every FIFO and passes the turn on to the next
 * waiter. This module does not know the commands: handlers in
 * src/cmd/blocking_cmd.c call block_may_serve and block_client. */
#ifndef HK_BLOCKING_H
#define HK_BLOCKING_H

#include "../store/watch.h"
#include "server.h"

/* Kinds of waiters: a key holding a list only serves list waiters. */
#define BK_LIST WK_LIST
#define BK_ZSET WK_ZSET

void block_init(void);
/* 1 while the running command is a wake-up re-run of a blocked command. */
static inline int block_is_retry(const struct cmd_ctx *c) { return (c->flags & CTX_RETRY) != 0; }
/* Key k (its shard locked) has a value of `kind`: may the command pop
 * from it now? A new command may not when waiters of that kind queue on
 * k; a re-run may only when its client is the first of them. */
int block_may_serve(struct cmd_ctx *c, const struct keyref *k, int kind);
/* Nothing could be served: block the connection on the keys at
 * argv[keyidx[i]] (their shards locked) until deadline_ms (0: forever).
 * In a re-run, keep waiting. Where blocking is denied (no connection, or
 * CTX_DENY_BLOCKING inside MULTI/scripts) reply the non-blocking form's
 * null instead (null_bulk: a null bulk string, else a null array). */
void block_client(struct cmd_ctx *c, const int *keyidx, int nkeys, int kind, long long deadline_ms, int null_bulk);
/* Forget a blocked client that goes away (no reply). Own worker only. */
void block_remove(struct client *c);
/* A run of c's blocked command took ns (the first one, from dispatch): its
 * statistics, counted when it finishes, cover every run, not the wait. */
void block_add_time(struct client *c, long long ns);
/* Worker loop: time out blocked clients whose deadline passed, and cap
 * the epoll wait so deadlines are met within a few milliseconds. */
void block_timeouts(struct worker *w);
long long block_wait_ms(struct worker *w, long long wait);
/* CLIENT UNBLOCK on worker w: unblock its client `id` with a null reply
 * (error 0) or the UNBLOCKED error. Returns 1 if such a client was blocked. */
int block_unblock_id(struct worker *w, uint64_t id, int error);

#endif
