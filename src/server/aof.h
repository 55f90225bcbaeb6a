/* aof.h - the append-only file: Redis 7's multi-part layout (a manifest,
 * a base file, incremental files) fed by the journal (journal.h), with
 * appendfsync always acknowledged by group commit, fork-less rewrites on
 * the snapshot machinery (snapshot.h), and replay at start-up through the
 * command path (aofload.c).
 *
 * The journal thread (started by aof_start, for the server's life) owns
 * the files, the manifest and the state below: it merges the worker
 * streams into the current incremental file, fsyncs by policy, publishes
 * what is durable, starts and finishes rewrites. Everything else only
 * asks it (an atomic flag and a wake-up) and reads what it publishes. */
#ifndef HK_AOF_H
#define HK_AOF_H

#include <stddef.h>

struct sbuf;

/* CONFIG SET appendonly changed while serving: turn the AOF on (a rewrite
 * writes the first base) or off. 1, or 0 with err. */
int aof_config_changed(char *err, size_t errlen);
/* At start-up, with appendonly yes, before clients are served: load the
 * AOF directory (or a Redis 6 single file). 0 loaded (or nothing there),
 * -1 with err (the server must not start). */
int aof_load_at_start(char *err, size_t errlen);
/* After loading, on the main thread, before clients may write (while
 * they still get -LOADING): with appendonly yes create the base when
 * there is none, open the incremental file and start recording; start the
 * journal thread. With appendonly no it may be skipped: the first CONFIG
 * SET appendonly yes or BGREWRITEAOF starts the thread. 0, or -1 with err
 * (the server must not start). */
int aof_start(char *err, size_t errlen);
/* Shutdown, once the workers have stopped: write and fsync everything
 * journaled (and, when the AOF was being turned on, write its first base
 * now), stop the journal thread. A no-op when it never started. */
void aof_shutdown(void);
/* The aof_* lines of INFO persistence, from aof_enabled to
 * module_fork_last_cow_size, and the six more Redis shows while the AOF
 * is on. Formatted by the command layer (src/cmd/aof_cmd.c, where
 * struct sbuf lives) from aof_stats_get. */
void aof_info(struct sbuf *b);
/* Nonzero (the errno of the failure) while writes must be refused because
 * the AOF cannot be written (Redis's -MISCONF for AOF write errors); the
 * journal thread also reports it through admit_aof_error (server.h). */
int aof_write_error(void);

/* BGREWRITEAOF. nested: called inside EXEC or a script (shards may be
 * held), where Redis schedules the rewrite instead. */
enum { AOF_RW_STARTED = 0, AOF_RW_SCHEDULED, AOF_RW_IN_PROGRESS, AOF_RW_FAILED };
int aof_bgrewrite(int nested);

/* What INFO reports (Redis's names). */
enum { AOF_OFF = 0, AOF_ON = 1, AOF_WAIT_REWRITE = 2 };
struct aof_stats {
    int state; /* AOF_* */
    int rewrite_in_progress, rewrite_scheduled;
    long long last_rewrite_time_sec, current_rewrite_time_sec;
    int last_bgrewrite_ok;
    long long rewrites, rewrites_consecutive_failures;
    int last_write_ok;
    unsigned long long last_cow_size;
    long long current_size, base_size;
    unsigned long long buffer_length, pending_bio_fsync, delayed_fsync;
};
void aof_stats_get(struct aof_stats *s);
/* CONFIG SET appendfsync: under `always`, replies are held from now on. */
void aof_fsync_policy_changed(void);
/* Bytes written to the AOF's buffers and not yet to its files, with the
 * journal's records not yet merged into them (journal_buffer_bytes). */
unsigned long long aof_buffer_bytes(void);
/* Nonzero while an AOF rewrite's snapshot runs (BGSAVE refuses, as Redis
 * does with an AOF child). */
int aof_rewrite_in_progress(void);

/* aofload.c: replay one AOF of commands (or a base file, which may be an
 * RDB, or an RDB preamble followed by commands) from dir/name. Returns
 * AOF_LOAD_OK, AOF_LOAD_TRUNCATED (a truncated tail dropped, allowed by
 * aof-load-truncated, only when last), AOF_LOAD_EMPTY or
 * AOF_LOAD_NOT_EXIST, or AOF_LOAD_FAILED with err. */
enum { AOF_LOAD_OK = 0, AOF_LOAD_NOT_EXIST, AOF_LOAD_EMPTY, AOF_LOAD_OPEN_ERR, AOF_LOAD_FAILED, AOF_LOAD_TRUNCATED };
int aof_load_file(const char *dir, const char *name, int last, char *err, size_t errlen);

/* The manifest (aof.c; the loader reads it at start-up). */
#define AOF_NAME_MAX 512
struct aof_minfo {
    char name[AOF_NAME_MAX];
    long long seq;
    char type; /* 'b' base, 'h' history, 'i' incremental */
};
struct aof_manifest {
    struct aof_minfo base; /* name[0] == 0: none */
    struct aof_minfo *incr;
    int nincr, incr_cap;
    struct aof_minfo *hist;
    int nhist, hist_cap;
    long long base_seq, incr_seq; /* the highest used */
};
/* aofman.c. Parse the manifest at path: 1 parsed, 0 when it does not
 * exist, -1 with err (Redis's messages, also logged). */
int aof_manifest_load(struct aof_manifest *m, const char *path, char *err, size_t errlen);
void aof_manifest_free(struct aof_manifest *m);
void aof_manifest_copy(struct aof_manifest *dst, const struct aof_manifest *src);
/* Append i to the incremental list, or to history when its type is 'h'
 * (the sequence counters are the caller's). */
void aof_manifest_add(struct aof_manifest *m, const struct aof_minfo *i);
/* Write m as dir/<fname>.manifest atomically: a temporary file, fsync,
 * rename, fsync of the directory (base first, then history, then the
 * incremental files). 0, or -1 (logged). */
int aof_manifest_persist(const char *dir, const char *fname, const struct aof_manifest *m);

#endif
