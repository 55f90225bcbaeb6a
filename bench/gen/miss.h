/* miss.h - the cache workload of hotkv-bench --miss: a GET that finds
 * nothing (a nil reply) is followed, on the same connection, by a request
 * that fills the key in (SET {key last} ...).
 *
 * This holds the parts of it that need no sockets: the per-connection
 * queue of keys that missed and wait for their SET, the classification of
 * a reply as hit, miss or error, and how the closed loop composes its next
 * batch from waiting SETs and new requests. main.c does the I/O. */
#ifndef HB_MISS_H
#define HB_MISS_H

#include <stddef.h>
#include <stdint.h>

/* Key numbers, oldest first; grows as needed. */
struct keyq {
    uint64_t *v;
    size_t head, count, cap;
};

void keyq_push(struct keyq *q, uint64_t key);
/* The oldest key; q must not be empty. */
uint64_t keyq_pop(struct keyq *q);
void keyq_free(struct keyq *q);

enum miss_kind { MISS_HIT, MISS_NIL, MISS_ERR };

/* What the complete reply at p (len bytes, top-level type `type`) says
 * about the key a GET asked for: an error reply is neither hit nor miss,
 * a nil ("$-1", "*-1", RESP3 "_") is a miss, anything else a hit. */
enum miss_kind miss_classify(const char *p, size_t len, char type);

/* Hits over hits plus misses; -1 when there were none. */
double miss_hit_ratio(uint64_t hits, uint64_t misses);

/* The closed loop's next batch on a connection with `pending` keys waiting
 * for their SET, pipeline depth `pipeline` and `quota` requests left to
 * issue (UINT64_MAX: unbounded): the waiting SETs go first, oldest first,
 * and new requests fill the batch up to `pipeline`, so a batch never holds
 * more than `pipeline` requests and a SET leaves in the batch right after
 * the one whose GET missed. SETs do not count against the quota. Stores
 * the number of SETs in *nmiss and of new requests in *nnew. */
void miss_batch(size_t pending, size_t pipeline, uint64_t quota, size_t *nmiss, size_t *nnew);

#endif
