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
 * src/cmd/blocking_cmd.c call block_may_serve and block_client.
 *
 * Wake batches. A write that wakes blocked clients answers only once
 * every re-run it caused has finished, transitively and on any worker
 * (a BLMOVE chain, a BRPOPLPUSH circle, readers of a stream), as Redis
 * serves the whole chain before it replies: nobody can see an element
 * in transit. The first wake-up a command (or a re-run) causes creates
 * its client's batch (`struct wbatch`, reference counted), which holds
 * the client's output and input (CLIENT_WAIT_CHAIN) until it drains. A signaled waiter holds one reference on each batch whose
 * writes woke it (bwaiter.batches), also when its wake-up was already on
 * its way; its re-run (or its removal: timeout, CLIENT UNBLOCK,
 * disconnect) adopts them, counts every wake-up it causes in them too,
 * and releases them when done. The last release posts to the batch's home
 * worker, which lets the held client go on. A waiter counts only in
 * batches that began after it blocked, so every batch drains: a circle
 * stops when its clients have been served once, as in Redis. */
#ifndef HK_BLOCKING_H
#define HK_BLOCKING_H

#include "../store/watch.h"
#include "server.h"

/* Kinds of waiters: a key holding a list only serves list waiters. */
#define BK_LIST WK_LIST
#define BK_ZSET WK_ZSET

void block_init(void);

/* A connection's command (dispatch) only names its client in
 * worker.cmd_client: its first wake-up creates the client's batch
 * (client.chain_own). A blocked client's re-run or
 * removal runs as a chain_run (chain_cur, on the caller's stack between
 * chain_begin and chain_end), which adopts the batches its waiters hold. */
struct bset;
struct chain_run {
    struct chain_run *prev;
    struct client *cl;     /* whose output the run's own batch holds (NULL: none) */
    struct client *waiter; /* the blocked client whose batches it adopts */
    struct bset *set;      /* adopted batches, one reference each */
};
extern _Thread_local struct chain_run *chain_cur;

static inline void chain_begin(struct chain_run *r, struct client *cl, struct client *waiter) {
    r->prev = chain_cur;
    r->cl = cl;
    r->waiter = waiter;
    r->set = NULL;
    chain_cur = r;
}
/* End the run (after its locks are released): release what it adopted,
 * and hold its client as chain_command_end does. */
void chain_end(struct chain_run *r);
void chain_hold_slow(struct client *c);
/* After c's command (its locks released): when it woke someone, hold c's
 * output and input (CLIENT_WAIT_CHAIN) until its batch drains. Nothing
 * runs here; the batch's end resumes the client later. A command that
 * woke nobody pays a load and a test here. */
static inline void chain_command_end(struct client *c) {
    if (__builtin_expect(c->chain_own != NULL, 0)) chain_hold_slow(c);
}
/* c, holding its output for a wake batch, goes away (its worker): the
 * batches, which may outlive it, forget it. */
void chain_forget(struct client *c);
/* Free the argument of a blocking mail the worker never handled
 * (shutdown); returns 0 for other mail. */
int block_drop_mail(mail_fn fn, void *arg);
/* Post the wake-ups the running command (or background task) caused on
 * worker w, after the pub/sub messages it published so far: called when
 * it ends, still holding its shards. */
void block_flush_wakes_slow(struct worker *w);
static inline void block_flush_wakes(struct worker *w) {
    if (__builtin_expect(w->nwakes != 0, 0)) block_flush_wakes_slow(w);
}
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
/* A blocked command that may become servable by time alone (XREADGROUP
 * ... CLAIM: a pending entry grows idle enough) re-runs at when_ms unless
 * a write wakes it first. Call after block_client, in the first run or a
 * re-run that keeps waiting; nothing when the client did not block. */
void block_rerun_at(struct cmd_ctx *c, long long when_ms);
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
