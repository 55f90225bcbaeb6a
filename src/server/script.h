/* script.h - Lua scripts: the shared script cache, one Lua state per
 * worker, and running a script on a command's context.
 *
 * Scripts loaded anywhere (EVAL, SCRIPT LOAD) go into one cache, sha1 ->
 * body, behind a read-write lock; each worker compiles a body into its own
 * Lua state (LuaJIT, interpreter only so that the instruction hook that
 * enforces busy-reply-threshold and SCRIPT KILL always runs) the first
 * time it runs it, and SCRIPT FLUSH bumps a generation that makes every
 * worker drop what it compiled.
 *
 * Locking. A script runs on its command's context with the shards of its
 * declared keys held (exec_command locked them). A key it did not declare
 * is reached through the execution core (exec_nested, which extends the
 * held set: it waits only for a shard above every held one and otherwise
 * only tries). When a shard cannot be had and the script has not written
 * yet, the run is abandoned, every shard is taken, and the script runs
 * again from the start; the cache remembers that this script needs every
 * shard, so its later runs take them up front. Every lock is held until
 * the script ends: its writes become visible to other clients together,
 * and two scripts never wait on each other in a cycle. A script that
 * already wrote and then meets a shard it cannot take gets a clear error
 * from redis.call (HotKV's only departure from Redis here, and one that a
 * script reaching only its declared keys, or one run before, never meets).
 *
 * Busy scripts. Past busy-reply-threshold a running script marks itself
 * busy: other clients' commands answer -BUSY (admission), waits for its
 * shards give up with the same error, and SCRIPT KILL can stop it unless
 * it wrote. */
#ifndef HK_SCRIPT_H
#define HK_SCRIPT_H

#include "exec.h"

#include <stdatomic.h>

/* Script flags (the #!lua flags=... shebang). */
#define SCRIPT_FLAG_NO_WRITES (1u << 0)
#define SCRIPT_FLAG_ALLOW_OOM (1u << 1)
#define SCRIPT_FLAG_ALLOW_STALE (1u << 2)
#define SCRIPT_FLAG_NO_CLUSTER (1u << 3)
#define SCRIPT_FLAG_ALLOW_CROSS_SLOT (1u << 4)
#define SCRIPT_FLAG_EVAL_COMPAT (1u << 5) /* no shebang: Redis 6 semantics */

/* Workers running a script past busy-reply-threshold. */
extern _Atomic int scripts_busy;

/* EVAL / EVALSHA / EVAL_RO / EVALSHA_RO on context c (argv as the
 * command's): by_sha selects EVALSHA, ro the _RO forms. Replies into c. */
void script_eval(struct cmd_ctx *c, int by_sha, int ro);

/* SCRIPT LOAD body: caches it and replies its sha, or the compile error. */
void script_load(struct cmd_ctx *c, const hk_slice *body);
/* SCRIPT EXISTS: 1 or 0 for each sha. */
int script_exists(const char *sha, size_t len);
/* SCRIPT FLUSH: forget every script (workers drop their compiled copies
 * before their next script). */
void script_flush(void);
/* SCRIPT KILL: replies OK, NOTBUSY or UNKILLABLE. */
void script_kill(struct cmd_ctx *c);
/* Number of cached scripts and their bytes (INFO memory). */
void script_cache_stats(unsigned long long *n, unsigned long long *bytes);
/* Free worker w's Lua state (at worker exit). */
void script_worker_free(struct worker *w);

#endif
