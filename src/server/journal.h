/* journal.h - the ordered record of what every write propagates.
 *
 * Producers. Each worker appends the records of the commands it runs to a
 * stream of its own (single producer: no lock, no shared cache line on the
 * request path). A record holds the RESP commands a context propagated
 * (exec.h), the databases they start and end in, and a tag per shard the
 * command held: (shard, seq), where seq is the shard's journal counter,
 * incremented under that shard's lock. Appending happens while the locks
 * are held, before the command's reply can reach its client.
 *
 * Order. Two commands that touch the same key hold the same shard, so the
 * later one's tag for that shard carries the larger seq: per shard, seqs
 * number records in execution order. The consumer merges the worker
 * streams by taking, from the head of any stream, a record whose every tag
 * is the next expected seq of its shard. Such a record always exists among
 * the heads (the one that acquired its locks first), so the merge never
 * stalls, and its output orders every pair of commands that share a shard
 * as they ran. Commands on disjoint shards commute, so any interleaving
 * the merge picks replays to the same dataset.
 *
 * Consumers. Two may be attached at once, fed by one merge:
 *   - the continuous consumer (the AOF, aof.c): a sink called for every
 *     merged record while it is attached; the journal thread runs the
 *     merge whenever a worker wakes it (journal_turn_end: one eventfd
 *     write per loop turn in which the worker appended);
 *   - DEBUG JOURNAL READ, which hands a test the merged stream as RESP so
 *     it can be replayed into a fresh server and compared with DEBUG
 *     DIGEST. With the AOF attached it starts at a cut (below) instead of
 *     dropping what the streams hold.
 * The merge runs under the reader lock, on whichever thread asks (the
 * journal thread, or DEBUG JOURNAL READ); a sink is only ever called
 * under it.
 *
 * Cuts. With every shard held, journal_cut_take copies every shard's seq
 * (and every stream's length, for records without tags): a record is
 * after the cut iff its tags' seqs exceed the copy. An AOF rewrite cuts
 * where its snapshot is cut and sends what follows to its new file.
 *
 * Group commit. Each worker counts the records it appends; the merge
 * counts, per worker, the records it consumed. The consumer publishes per
 * worker the count it has made durable (journal_publish_durable, after the
 * fsync that covers them) and wakes the workers whose count moved, which
 * then write the replies they held (docs/journal.md).
 *
 * Enabling and disabling happen with every shard held, so a command's
 * records are either all in the journal or none is. */
#ifndef HK_JOURNAL_H
#define HK_JOURNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct lockset;

/* Nonzero while a consumer is attached. Read under shard locks (the flag
 * only changes with every shard held). */
extern _Atomic int journal_on;
static inline int journal_enabled(void) { return atomic_load_explicit(&journal_on, memory_order_relaxed); }

/* Nonzero while replies must wait until the records before them are
 * durable (appendfsync always): workers hold their pending output until
 * journal_durable() reaches journal_recs() (worker.c). */
extern _Atomic int journal_hold;

/* Called once with the number of workers (each gets a stream). */
void journal_init(int nworkers);
/* Append a record to worker w's stream: the RESP bytes of its commands,
 * starting in start_db and ending in end_db, tagged with the shards of ls
 * (held by the caller), or with the single shard `one` when ls is NULL. */
void journal_append(int w, const struct lockset *ls, unsigned one, int start_db, int end_db, const char *resp,
                    size_t len);

/* ---- DEBUG JOURNAL ------------------------------------------------------ */

/* Start recording for DEBUG JOURNAL READ. The caller holds the reader
 * lock, then every shard (in that order: a reader never takes a shard
 * lock, so it must not be waited for with the shards held). Without the
 * AOF attached it drops what an earlier session left in the streams, and
 * `limit` bounds the unread bytes per stream (past it recording stops and
 * reads report the overflow); with it, the session starts at a cut and
 * `limit` per worker bounds what waits to be read. */
void journal_start(size_t limit);
void journal_reader_lock(void);
void journal_reader_unlock(void);
/* Stop recording (every shard held by the caller). */
void journal_stop(void);
/* Merge what all streams hold and return what the DEBUG session gathered
 * as RESP (SELECT inserted where the database changes). Returns 0, or -1
 * when records were lost to the limit. */
int journal_read(char **out, size_t *outlen);

/* The RESP bytes of `SELECT db` (what a propagated stream says when it
 * moves to another database) into buf; returns their length. */
#define JOURNAL_SELECT_MAX 64
size_t journal_select_resp(char buf[JOURNAL_SELECT_MAX], int db);

/* ---- the continuous consumer ------------------------------------------- */

/* A merged record, as a sink sees it (valid during the call). */
struct journal_rec {
    int worker;    /* whose stream */
    uint64_t pos;  /* its byte offset in that stream */
    uint32_t ntags;
    unsigned shard0; /* the first tag, when ntags */
    uint64_t seq0;
    int start_db, end_db;
    const char *resp;
    size_t len;
};
typedef void (*journal_sink_fn)(void *arg, const struct journal_rec *r);

/* Attach (or, with fn NULL, detach) the continuous consumer. The caller
 * holds the reader lock, then every shard. Attaching to a journal nobody
 * records drops what the streams still hold: the sink sees exactly the
 * records of commands that run after this call. While it is attached the
 * streams are not bounded (the consumer drains them). */
void journal_attach(journal_sink_fn fn, void *arg);
/* Merge every record that can be merged now into the sinks, under the
 * reader lock (taken here). Returns the number of records merged. */
size_t journal_merge(void);
/* Bytes the streams hold beyond their first chunks: records written and
 * not yet merged, with the chunks that hold them. Any thread. */
unsigned long long journal_buffer_bytes(void);
/* Reader lock held: the number of records each worker's stream has had
 * consumed by the merge (out: one per worker). */
void journal_consumed(uint64_t *out);
int journal_nworkers(void);

/* The eventfd the journal thread waits on (-1: none); workers write it at
 * the end of a loop turn in which they appended while the continuous
 * consumer is attached. */
void journal_set_wake_fd(int fd);
/* End of worker w's loop turn (its own thread). */
void journal_turn_end(int w);
/* Worker w's own count of records appended (its thread). */
uint64_t journal_recs(int w);
/* The count of worker w's records known durable. */
uint64_t journal_durable(int w);
/* Publish per-worker durable counts (recs: one per worker, never lower
 * than before) and wake the workers whose count moved while replies are
 * held. */
void journal_publish_durable(const uint64_t *recs);
/* Mark everything consumed so far durable at once and wake every worker
 * (the consumer went away, or replies stop being held). */
void journal_release_all(void);

/* A cut: per shard, the last seq at the instant it was taken; per stream,
 * its length. */
struct journal_cut {
    uint64_t *seq;
    uint64_t *pos;
};
/* Take a cut (every shard held). Allocates the arrays on first use. */
void journal_cut_take(struct journal_cut *c);
void journal_cut_free(struct journal_cut *c);
/* Whether r came after the cut: its tags' seqs exceed it, or, without
 * tags, it lies past the stream's length at the cut. */
int journal_after_cut(const struct journal_cut *c, const struct journal_rec *r);
/* Reader lock held: every record with tags up to the cut has been merged
 * (what is still to come is all after it). */
int journal_cut_passed(const struct journal_cut *c);

#endif
