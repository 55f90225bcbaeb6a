/* function.h - Redis 7 functions: the library registry every worker shares,
 * and the FUNCTION subcommands that read and change it.
 *
 * A library is the code given to FUNCTION LOAD (a "#!lua name=<lib>"
 * first line, then Lua that calls redis.register_function), kept with the
 * functions it registered: their names, flags and descriptions. The
 * registry holds that metadata and the code, never Lua objects: each
 * worker runs a library's code in its own Lua state the first time it
 * calls one of its functions (script.c), and every change to the registry
 * bumps a generation that makes the workers forget what they loaded
 * before their next FCALL. The registry is one list behind a read-write
 * lock; FCALL reads it only when its worker's copy is missing.
 *
 * Libraries are listed and dumped in the order they were created (Redis
 * lists them in its hash order, which no client can rely on). Function
 * names are found case-insensitively, library names case-sensitively, as
 * in Redis. Commands that change the registry take every shard while they
 * do (so EXEC and the journal order them with everything else) and
 * propagate themselves. */
#ifndef HK_FUNCTION_H
#define HK_FUNCTION_H

#include "exec.h"

#include <stddef.h>
#include <stdint.h>

/* A function as redis.register_function registered it. desc is NULL when
 * none was given. */
struct fn_def {
    char *name;
    char *desc;
    size_t desc_len;
    unsigned flags; /* SCRIPT_FLAG_* */
};

void fn_defs_free(struct fn_def *fns, int n);
/* Letters, digits and underscores, at least one: library and function
 * names. */
int fn_valid_name(const char *s, size_t n);

/* What FCALL needs of a function, copied out of the registry: its
 * library's id (new for each load of a library) and code, the name it was
 * registered under, its flags. fn_found_free releases the copies. */
struct fn_found {
    uint64_t lib_id;
    char *name;
    unsigned flags;
    char *code;
    size_t code_len, body; /* body: offset of the code after the first line */
};

/* The function called `name` (any case): 0 with *f filled, or -1. */
int fn_find(const char *name, size_t len, struct fn_found *f);
void fn_found_free(struct fn_found *f);
/* Bumped by every change to the registry. */
unsigned long long fn_generation(void);

/* The FUNCTION subcommands, arguments already checked for shape by
 * src/cmd/function_cmd.c. Each replies into c. */
void fn_load(struct cmd_ctx *c, const hk_slice *code, int replace);
void fn_delete(struct cmd_ctx *c, const hk_slice *name);
void fn_flush(struct cmd_ctx *c);
void fn_list(struct cmd_ctx *c, const hk_slice *pattern, int withcode);
void fn_dump(struct cmd_ctx *c);
/* Append a function-library record (RDB_OPCODE_FUNCTION2 and the code)
 * per library, as an RDB file holds them. */
struct hk_buf;
void fn_rdb_records(struct hk_buf *b);
/* Load one library's code from an RDB file, replacing one of the same
 * name. 0, or -1 with err. */
int fn_load_rdb(const char *code, size_t len, char *err, size_t errlen);
#define FN_RESTORE_APPEND 0
#define FN_RESTORE_REPLACE 1
#define FN_RESTORE_FLUSH 2
void fn_restore(struct cmd_ctx *c, const hk_slice *payload, int policy);
void fn_stats(struct cmd_ctx *c);

/* Libraries and functions (INFO-style counts). */
void fn_counts(unsigned long long *libraries, unsigned long long *functions);
/* Bytes the registry holds for the libraries (their code, names, tables). */
size_t fn_memory(void);

#endif
