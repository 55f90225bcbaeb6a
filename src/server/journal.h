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
 * Consumers. In this release one consumer exists: DEBUG JOURNAL READ,
 * which hands a test the merged stream as RESP so it can be replayed into
 * a fresh server and compared with DEBUG DIGEST. docs/journal.md describes
 * how the AOF writer and replica streams attach to the same merge without
 * a global lock on the request path.
 *
 * Enabling and disabling happen with every shard held, so a command's
 * records are either all in the journal or none is. */
#ifndef HK_JOURNAL_H
#define HK_JOURNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct lockset;
struct sbuf;

/* Nonzero while a consumer is attached. Read under shard locks (the flag
 * only changes with every shard held). */
extern _Atomic int journal_on;
static inline int journal_enabled(void) { return atomic_load_explicit(&journal_on, memory_order_relaxed); }

/* Called once with the number of workers (each gets a stream). */
void journal_init(int nworkers);
/* Append a record to worker w's stream: the RESP bytes of its commands,
 * starting in start_db and ending in end_db, tagged with the shards of ls
 * (held by the caller), or with the single shard `one` when ls is NULL. */
void journal_append(int w, const struct lockset *ls, unsigned one, int start_db, int end_db, const char *resp,
                    size_t len);

/* Start recording; drops what an earlier session left. The caller holds
 * the reader lock, then every shard (in that order: a reader never takes
 * a shard lock, so it must not be waited for with the shards held).
 * `limit` bounds the unread bytes per stream; past it recording stops and
 * reads report the overflow. */
void journal_start(size_t limit);
void journal_reader_lock(void);
void journal_reader_unlock(void);
/* Stop recording (every shard held by the caller). */
void journal_stop(void);
/* Merge what all streams hold into out as RESP (SELECT inserted where the
 * database changes). Returns 0, or -1 when records were lost to the
 * limit. One reader at a time (serialised inside). */
int journal_read(char **out, size_t *outlen);

/* The RESP bytes of `SELECT db` (what a propagated stream says when it
 * moves to another database) into buf; returns their length. */
#define JOURNAL_SELECT_MAX 64
size_t journal_select_resp(char buf[JOURNAL_SELECT_MAX], int db);

#endif
