/* script.h - Lua scripts and functions: the shared script cache, one Lua
 * state per worker, and running a script or a function on a command's
 * context.
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
 * it wrote.
 *
 * Functions (FCALL) run the same way, on the same per-worker state: the
 * registry of libraries is function.c's; each worker runs a library's
 * code when it first calls one of its functions, and learns per function
 * whether it stays within its keys. FUNCTION KILL stops a busy function
 * as SCRIPT KILL stops a busy EVAL script. */
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

/* The -BUSY texts while an EVAL script or a function is busy. */
#define BUSY_EVAL_TEXT "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
#define BUSY_FUNCTION_TEXT "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."

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
/* SCRIPT KILL (functions 0) and FUNCTION KILL (1): replies OK, NOTBUSY,
 * UNKILLABLE, or the BUSY text naming the other command when what is busy
 * is of the other kind (a function for SCRIPT KILL, an EVAL script for
 * FUNCTION KILL), as Redis does. */
void script_kill(struct cmd_ctx *c, int functions);
/* The -BUSY text for a command refused while scripts are busy: Redis's
 * names FUNCTION KILL when what is busy is a function, SCRIPT KILL
 * otherwise. */
const char *script_busy_error(void);
/* Whether an EVAL script (not a function) is busy. */
int script_eval_busy(void);
/* FUNCTION STATS' running_script: nil, or the busy function's name, the
 * command that called it and how long it has run. */
void script_reply_running(struct cmd_ctx *c);

/* FCALL / FCALL_RO (ro) on context c, argv as the command's. */
void script_fcall(struct cmd_ctx *c, int ro);

struct fn_def;
/* Run a library's code (body: what follows its first line, that line's
 * newline included, so line numbers are the library's) in the load
 * context of worker w's Lua state, as FUNCTION LOAD does: only
 * redis.register_function, redis.log and the constants are there, and a
 * run past timeout_ms (0: no limit) is stopped. Returns 0 with the
 * functions it registered (*fns, hk_malloc'd, freed with fn_defs_free),
 * or -1 with Redis's error text ("Error compiling function: ...", "Error
 * registering functions: ...") without the ERR code. What it registered
 * is not kept: FCALL loads the library again when it needs it. */
int script_lib_check(struct worker *w, const char *body, size_t len, long long timeout_ms, struct fn_def **fns,
                     int *nfn, char *err, size_t errlen);
/* The i-th script flag's name and bit, in Redis's order; NULL past the
 * last. */
const char *script_flag_name(int i, unsigned *bit);
/* Number of cached scripts and their bytes (INFO memory). */
void script_cache_stats(unsigned long long *n, unsigned long long *bytes);
/* Bytes of the workers' Lua heaps (one per worker, serving EVAL and
 * functions alike), each as of its last script. */
size_t script_vm_memory(void);
/* Free worker w's Lua state (at worker exit). */
void script_worker_free(struct worker *w);

#endif
