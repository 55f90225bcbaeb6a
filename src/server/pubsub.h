/* pubsub.h - channels, patterns and shard channels across workers.
 *
 * Who knows what:
 *   - The registry (pubsub.c, global): per channel (and shard channel, a
 *     namespace of its own) and per pattern, how many subscribers each
 *     worker has. Split into stripes by the channel's hash, each behind a
 *     reader-writer lock; patterns behind one more. PUBLISH reads it to
 *     count receivers and to learn which workers to reach; SUBSCRIBE and
 *     UNSUBSCRIBE write it.
 *   - Each worker (its thread only): the table of its own clients per
 *     channel, shard channel and pattern, through which it delivers.
 *   - Each client (its worker only): the names it is subscribed to.
 *
 * Delivery. A message is one reference-counted object (channel and
 * payload copied once, by the publisher). The publisher delivers to its
 * own worker's subscribers at once and queues the message for each other
 * worker that has subscribers; the queues go out as one mail per worker
 * at the end of the publisher's loop turn (pubsub_flush), so a busy
 * publisher wakes each worker at most once a turn, and one publisher's
 * messages reach every subscriber in publish order. The receiving worker
 * serialises the frame once per protocol version and appends it to each
 * subscriber's output (frames of PS_SHARE_MIN bytes or more are shared by
 * reference, not copied). A subscription taken after a message was
 * published does not receive it (stripe sequence numbers).
 *
 * Lock order: shard locks -> a stripe or the pattern lock -> mbox_lock.
 * Nothing here takes a shard lock, so keyspace notifications may publish
 * from under the write hook. */
#ifndef HK_PUBSUB_H
#define HK_PUBSUB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct worker;
struct client;
struct cmd_ctx;

/* Namespaces. */
enum { PS_CHANNEL = 0, PS_SHARD = 1 };

/* Frames this big or bigger are shared between subscribers' output
 * buffers by reference instead of copied. */
#define PS_SHARE_MIN 1024

/* Subscriptions of every client, all namespaces: nonzero when anyone is
 * subscribed to anything (publishers skip all work otherwise). */
extern _Atomic long long pubsub_total_subs;

void pubsub_init(int nworkers);
/* Worker w's part, on its thread: at start and at exit. */
void pubsub_worker_init(struct worker *w);
void pubsub_worker_free(struct worker *w);

/* Publish msg on channel ch of namespace ns from worker w's thread (w
 * NULL: a thread that is no worker; the message is posted at once).
 * Returns the number of receivers: subscribers of the channel plus, for
 * PS_CHANNEL, pattern subscriptions that match (a client subscribed to the
 * channel and to two matching patterns counts three times, as in Redis). */
long long pubsub_publish(struct worker *w, int ns, const char *ch, size_t chlen, const char *msg, size_t mlen);

/* A mail of this file's that a worker which has stopped will never run:
 * free what it carries. Returns 1 when it was one. */
int pubsub_drop_mail(void (*fn)(struct worker *w, void *arg), void *arg);

/* End of a loop turn: post the messages queued for other workers. */
void pubsub_flush(struct worker *w);
/* The command of connection c has finished its reply: frames that came
 * for it while the reply was being written (an open aggregate, EXEC's
 * array) follow now. */
void pubsub_command_end(struct client *c);

/* A client leaves (closing, RESET): drop every subscription it has, with
 * no reply. */
void pubsub_client_reset(struct client *c);
/* Its subscriptions: channels + patterns (Redis's count in SUBSCRIBE
 * replies), and each kind alone (CLIENT LIST sub=, psub=, ssub=). */
int pubsub_client_count(const struct client *c);
/* Each subscription of c (on its own worker): kind is PS_CHANNEL,
 * PS_SHARD or PS_PATTERN_KIND (a PSUBSCRIBE pattern). */
#define PS_PATTERN_KIND 2
void pubsub_client_each(struct client *c, void (*fn)(int kind, const char *name, size_t len, void *arg), void *arg);
void pubsub_client_counts(const struct client *c, long long *sub, long long *psub, long long *ssub);

/* INFO stats: channels and shard channels with a subscriber, patterns
 * with a subscriber, clients with a subscription. */
void pubsub_info(long long *channels, long long *patterns, long long *shard_channels, long long *clients);

/* Append a pushed frame (a message, an invalidation) to c's output, on
 * c's worker: after the reply of c's running command when it has one,
 * then c's output limits apply. */
void pubsub_push(struct client *c, const char *p, size_t len);

/* Pub/sub commands (src/cmd/pubsub.c) call these on their context. */
void pubsub_subscribe(struct cmd_ctx *c, int ns, int pattern);
void pubsub_unsubscribe(struct cmd_ctx *c, int ns, int pattern);

/* Registry queries for PUBSUB. fn is called for each channel of ns with a
 * subscriber (pattern NULL: all; else those matching the glob). */
void pubsub_each_channel(int ns, const char *pat, size_t patlen, void (*fn)(const char *ch, size_t len, void *arg),
                         void *arg);
long long pubsub_numsub(int ns, const char *ch, size_t len);
long long pubsub_numpat(void);

#endif
