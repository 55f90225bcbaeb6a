/* tracking.h - client-side caching (CLIENT TRACKING): which clients may
 * hold which keys, and the invalidation messages a write sends them.
 *
 * Fed by the write hook (db_written, db.h) through the running context's
 * sink: every written key invalidates the clients that read it (default
 * mode) or whose prefixes match it (BCAST), on whatever worker they are,
 * as RESP3 push frames or, for a client redirecting to a subscribed RESP2
 * connection, as messages on __redis__:invalidate.
 *
 * Not here: the CLIENT TRACKING / CACHING / TRACKINGINFO / GETREDIR
 * commands (src/cmd/client.c parse and answer; they change a client's
 * state only through the functions below, on the client's own worker). */
#ifndef HK_TRACKING_H
#define HK_TRACKING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct keyref;
struct worker;
struct client;
struct cmd_ctx;

/* Clients with tracking on: nothing is looked at while it is 0. */
extern _Atomic int tracking_clients;

/* Event ev (events.h) of the write hook on key k, from the running
 * command (c: its context; c->cl may be
 * NULL for background work such as active expiry). Events that change
 * nothing a client may cache (a new-key or key-miss notice) are ignored. */
void tracking_key_written(struct cmd_ctx *c, const struct keyref *k, int ev);
/* FLUSHALL, FLUSHDB, SWAPDB: every tracking client gets the null
 * invalidation. */
void tracking_flush_all(struct cmd_ctx *c);
/* After a read-only command of a tracking client ran (its keys are
 * c->keys): remember that the client may cache them. */
void tracking_remember_keys(struct cmd_ctx *c);
/* The client closes or RESETs: forget it. */
void tracking_client_gone(struct client *c);
/* INFO: tracking_total_keys, tracking_total_items, tracking_total_prefixes. */
void tracking_info(long long *keys, long long *items, long long *prefixes);

/* ---- a client's own state (its worker's thread only) ------------------- */

/* Mode bits of CLIENT TRACKING ON, and the broken-redirect mark. */
#define TRACK_BCAST (1u << 0)
#define TRACK_OPTIN (1u << 1)
#define TRACK_OPTOUT (1u << 2)
#define TRACK_NOLOOP (1u << 3)
#define TRACK_BROKEN_REDIR (1u << 4)

/* The mode bits of c (0 with tracking off or plain default mode; test
 * CLIENT_TRACKING for on/off). */
unsigned tracking_mode(const struct client *c);
/* The client id c's messages are redirected to, 0 for none. */
uint64_t tracking_redirect(const struct client *c);
/* c's BCAST prefixes, in byte order: how many, and the i-th. */
int tracking_nprefixes(const struct client *c);
const char *tracking_prefix(const struct client *c, int i, size_t *len);
/* Whether one of the n new prefixes p[]/plen[] overlaps (one is a prefix
 * of the other) a prefix c already has (*which_old >= 0: its index) or
 * another new one (*which_old = -1, *other: its index). Returns the index
 * of the offending new prefix, -1 when none does. */
int tracking_prefix_overlap(const struct client *c, const char *const *p, const size_t *plen, int n, int *which_old,
                            int *other);
/* CLIENT TRACKING ON: (re)enable with these mode bits, redirecting to
 * redir (0: none) which lives on worker redir_worker (-1: not known; it is
 * searched for on delivery), adding the BCAST prefixes (BCAST with no
 * prefix at all means the empty prefix). */
void tracking_enable(struct client *c, uint64_t redir, int redir_worker, unsigned mode, const char *const *p,
                     const size_t *plen, int n);
/* CLIENT TRACKING OFF. */
void tracking_disable(struct client *c);
/* CLIENT CACHING YES/NO: the next command's keys are (OPTIN) or are not
 * (OPTOUT) remembered; inside EXEC, the rest of the transaction's. */
void tracking_set_caching(struct cmd_ctx *x);
/* Whether a CACHING given earlier still applies to the running command. */
int tracking_caching(const struct client *c);
/* Any CLIENT subcommand: as in Redis, it does not use up a CACHING. */
void tracking_client_command(struct cmd_ctx *x);

/* A mail of this file's that a stopped worker will never run: free it.
 * Returns 1 when it was one. */
int tracking_drop_mail(void (*fn)(struct worker *w, void *arg), void *arg);

#endif
