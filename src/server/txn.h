/* txn.h - a connection's transaction state: the commands MULTI queued and
 * the keys WATCH recorded.
 *
 * The state hangs off the connection (client->txn), allocated on its first
 * MULTI or WATCH and owned by the connection's worker like the rest of the
 * connection. A queued command keeps a private copy of its arguments (the
 * query buffer moves on). A watched key keeps a reference on the key's
 * entry in its shard's watch table (watch.h) and the version it had: EXEC
 * compares the two with the shard held, so a write from any thread between
 * WATCH and EXEC, including expiry, FLUSH*, SWAPDB, RENAME and MOVE, is
 * seen. Releasing a watch reference needs the shard's lock: txn_unwatch_all
 * takes it for each key, txn_unwatch_locked expects the caller (EXEC) to
 * hold them all.
 *
 * A write to a watched key also tells the transaction at once (the watch
 * table's dirty hook, run by the writer's thread under the key's shard
 * lock): as in Redis, the transaction is then doomed, shows flag `d` and
 * watch=0 in CLIENT LIST, stops counting in INFO watching_clients, queues
 * nothing more and adds no watch; its worker is sent a mail to drop its
 * watch records. `mu` (a leaf lock) orders the writer's marking against
 * the owner's own changes to that state. */
#ifndef HK_TXN_H
#define HK_TXN_H

#include "exec.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct client;
struct command;
struct wkey;

struct txn_cmd {
    const struct command *cmd;
    int argc;
    hk_slice *argv; /* one allocation: the slices, then the bytes */
};

struct wwatcher;

struct txn_watch {
    struct wkey *wk;
    struct wwatcher *rec;
    uint64_t version;
    unsigned shard;
    int db;
};

struct txn {
    int active;     /* between MULTI and EXEC/DISCARD */
    int dirty_exec; /* a command was refused while queuing: EXEC aborts */
    struct txn_cmd *cmds;
    int n, cap;
    uint64_t flags; /* union of the queued commands' flags */
    size_t mem;     /* bytes of queued arguments (CLIENT LIST multi-mem) */
    struct txn_watch *w;
    int nw, wcap;
    /* Under mu (the owner reads dirty_cas without it). */
    pthread_mutex_t mu;
    _Atomic int dirty_cas; /* a watched key changed: EXEC will fail */
    int counted;           /* counted in INFO watching_clients */
    int drop_posted;       /* the mail to drop the watches is on its way */
    /* The connection's identity, for that mail. */
    uint64_t cid;
    struct worker *w_owner;
};

/* Clients watching at least one key whose transaction is not doomed yet,
 * and distinct keys watched (INFO watching_clients, total_watched_keys). */
unsigned long long txn_watching_clients(void);
unsigned long long txn_watched_keys(void);

/* The connection's state, created when missing. */
struct txn *txn_of(struct client *c);
/* Queue cmd with the connection's current argv (copied). */
void txn_queue(struct client *c, const struct command *cmd);
/* Drop the queue and leave MULTI (watches are kept). */
void txn_clear_queue(struct client *c);
/* Add a watch on k (its shard held by the caller); a key already watched
 * in the same database is not added twice. */
void txn_watch_key(struct client *c, const struct keyref *k);
/* Whether any watched key changed since it was watched (every watched
 * key's shard held by the caller). */
int txn_watch_dirty(struct client *c);
/* Release every watch: with the shards held by the caller (EXEC), or
 * locking each shard in turn (UNWATCH, DISCARD, RESET, close). */
void txn_unwatch_locked(struct client *c);
void txn_unwatch_all(struct client *c);
/* Everything: queue and watches (the connection is closing or RESET). */
void txn_free(struct client *c);
/* Install the watch table's dirty hook (start-up). */
void txn_init(void);

#endif
