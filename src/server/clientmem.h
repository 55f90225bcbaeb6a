/* clientmem.h - what a connection's memory is, and client eviction
 * (maxmemory-clients, Redis 7's feature).
 *
 * One formula (client_mem_usage) gives a connection's memory: CLIENT
 * LIST's tot-mem and the figure eviction acts on. While maxmemory-clients
 * is set, every worker keeps, for its own connections only, the bytes each
 * was last counted with, their sum, and the connections eviction may pick
 * in buckets by size (powers of two); it publishes the sum, the size of its
 * biggest evictable connection and a heartbeat as atomics. When the sum
 * over all workers reaches the limit, a worker closes its own biggest
 * connection, as long as no other live worker has a bigger one (that one
 * is woken to evict it instead), and goes on until the total is under the
 * limit. Nothing here takes a lock; no thread touches another's
 * connections. With maxmemory-clients 0 the cost is one relaxed load per
 * loop turn and a test of a worker-local field where a connection's
 * buffers change.
 *
 * Also here: the CLIENT LIST / CLIENT INFO line, which the eviction log
 * line repeats as Redis's does. */
#ifndef HK_CLIENTMEM_H
#define HK_CLIENTMEM_H

#include "../core/buf.h"
#include "server.h"

#include <stddef.h>

/* Below this, a limit is raised to it (Redis's floor: a server must stay
 * reachable whatever the setting says). */
#define CLIENTMEM_MIN_LIMIT (128 * 1024)

/* The limit maxmemory-clients sets now, in bytes: its value, or its
 * percentage of maxmemory; 0 when off (0, or a percentage while maxmemory
 * is 0). One relaxed load when off. Any thread. */
size_t clientmem_limit(void);

/* The bytes a connection uses: the structure, its query buffer, output
 * blocks (bytes held by reference counted whole), argv and parser arrays,
 * queued MULTI arguments, subscriptions and names. Its own worker only. */
size_t client_mem_usage(const struct client *c);

/* Start of a loop turn, on w's thread: take the limit for the turn; turning
 * the feature on counts every connection of w, turning it off forgets
 * them all. */
void clientmem_turn(struct worker *w);

/* Count c again after its buffers may have changed (c's worker only). */
void clientmem_update(struct client *c);
static inline void clientmem_touch(struct client *c) {
    if (__builtin_expect(c->w->cm.limit != 0, 0)) clientmem_update(c);
}
/* c goes away (client_free) or is closing: take it out of the sums. */
void clientmem_forget(struct client *c);

/* Between commands on w's thread: evict w's biggest connections while all
 * the workers' connections together use the limit or more (Redis's
 * evictClients). Does nothing inside a command (a script serving others,
 * a command's deferred work). */
void clientmem_check(struct worker *w);
/* The cheap form after a connection's commands: the full check only when
 * this worker's sum plus what it last read of the others' reaches it. */
static inline void clientmem_maybe_check(struct worker *w) {
    if (__builtin_expect(w->cm.limit != 0, 0) && w->cm.mine + w->cm.others >= w->cm.limit) clientmem_check(w);
}
/* Every connection of w counted afresh (the cron): catches changes no
 * update site saw. */
void clientmem_recount(struct worker *w);
/* The cron's part, inside its one walk of w's connections: for each
 * connection that stays, clientmem_cron_one (with the limit on, the
 * recount; with it off, adding to *sum), then clientmem_cron_done, which
 * publishes the sum apart (`cm.off_sum`, for INFO only) when off. */
void clientmem_cron_one(struct worker *w, struct client *c, size_t *sum);
void clientmem_cron_done(struct worker *w, size_t sum);
/* Every worker's published sum: the memory of the normal connections as
 * of each worker's last cron or count (INFO mem_clients_normal, MEMORY
 * STATS clients.normal). Any thread. */
size_t clientmem_total(void);
/* A mail (worker_post): take the limit and check now. Posted to every
 * worker by CONFIG SET maxmemory-clients, and to the worker holding the
 * biggest connection by another that finds the total over the limit. */
void clientmem_wake(struct worker *w, void *arg);

/* ---- the CLIENT LIST line ---------------------------------------------- */

/* The input fields of a connection while its command runs: the request is
 * still in its query buffer (qbuf counts the bytes read with it, as Redis's
 * buffer holds them until the pass is over), its arguments are parsed, and
 * the command is not counted yet. CLIENT LIST takes this view of the
 * connection asking when it asks, since its line is written later. */
struct client_run_view {
    size_t qbuf, qfree, argv_mem;
    long long tot_cmds;
};
void client_run_view_of(const struct client *c, struct client_run_view *v);

/* Append one CLIENT LIST line (no newline) describing c to b. On c's own
 * worker thread. cmd is the command to report: the running one for CLIENT
 * INFO, the last finished one otherwise. run: the view of c taken while its
 * command ran (CLIENT INFO, the caller of CLIENT LIST), or NULL for a
 * connection between commands: a partial request is what its buffer
 * holds, and one with nothing pending holds no buffer (worker.c). */
void client_info_cat(struct hk_buf *b, struct client *c, const struct command *cmd,
                     const struct client_run_view *run);

#endif
