/* evict.h - maxmemory: eviction by Redis's policies, and the memory state
 * admission acts on.
 *
 * Each worker checks the memory once per loop turn (evict_turn). Over
 * maxmemory it evicts, taking one shard lock at a time, and while memory
 * stays over the limit it sets ADMIT_GATE_OOM: every command then takes
 * admission's slow path, which evicts again before the command runs and
 * refuses a denyoom one when nothing more may go (EVICT_FAIL), as Redis's
 * processCommand does. The candidates come from a pool per worker of the
 * best keys sampled so far (maxmemory-samples a shard and database at a
 * time), scored by the entry clock: idle time (LRU), 255 minus the access
 * counter (LFU) or the nearness of the deadline (volatile-ttl). */
#ifndef HK_EVICT_H
#define HK_EVICT_H

#include <stddef.h>

struct worker;

/* maxmemory-policy values (config.c's enum). */
enum {
    MAXMEM_NOEVICTION = 0,
    MAXMEM_ALLKEYS_LRU,
    MAXMEM_ALLKEYS_LFU,
    MAXMEM_ALLKEYS_RANDOM,
    MAXMEM_VOLATILE_LRU,
    MAXMEM_VOLATILE_LFU,
    MAXMEM_VOLATILE_RANDOM,
    MAXMEM_VOLATILE_TTL
};
static inline int maxmem_policy_lfu(int p) { return p == MAXMEM_ALLKEYS_LFU || p == MAXMEM_VOLATILE_LFU; }

/* EVICT_OK: under the limit (or none). EVICT_RUNNING: still over when the
 * time maxmemory-eviction-tenacity allows ran out, having freed some.
 * EVICT_FAIL: over, and nothing the policy may evict is left. */
enum { EVICT_OK = 0, EVICT_RUNNING, EVICT_FAIL };

#define OOM_ERROR "OOM command not allowed when used memory > 'maxmemory'."

/* Evict until used memory is under maxmemory, within the time limit. The
 * caller holds no shard lock. */
int evict_perform(struct worker *w);
/* A worker's check at the start of each loop turn (no lock held). */
void evict_turn(struct worker *w);
/* Whether memory is over the limit with nothing left to evict: the state
 * a script meets its denyoom calls with (Redis's pre_command_oom_state). */
int evict_oom_state(void);
/* Bytes that eviction leaves out of used memory (mem_not_counted_for_evict). */
size_t evict_not_counted(void);
/* INFO stats: total_eviction_exceeded_time and
 * current_eviction_exceeded_time, in milliseconds. */
void evict_exceeded_ms(long long *total, long long *current);

#endif
