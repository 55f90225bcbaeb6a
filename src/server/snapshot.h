/* snapshot.h - point-in-time RDB snapshots without fork, and RDB loading.
 *
 * A snapshot is cut at one instant: with every shard held, each shard is
 * marked pending and the parity bit that tells saved entries from unsaved
 * ones flips (kv.h). A saver thread then walks the shards a few buckets at
 * a time, serialising the entries it finds unsaved under the shard's lock
 * and writing the bytes to the file after releasing it. A writer that is
 * about to change or remove an unsaved entry of a pending shard (the write
 * hook, db_written) serialises it first into the shard's side buffer, and
 * entries linked after the cut are born saved, so the file holds every
 * key exactly as it was at the cut. The extra memory is what writers
 * saved ahead of the saver, not a copy of the dataset; no writer waits for
 * more than one entry's serialisation. FLUSH and SWAPDB during a snapshot
 * first save what is left of the databases they change.
 *
 * One snapshot runs at a time (BGSAVE, SAVE, DEBUG RELOAD, SHUTDOWN, an
 * AOF rewrite's base). */
#ifndef HK_SNAPSHOT_H
#define HK_SNAPSHOT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct rdb_in;

struct snap_opts {
    const char *path;  /* the file to write (a temp file is renamed onto it) */
    int aof_base;      /* aux aof-base 1: an AOF base file */
    /* An AOF base without the RDB preamble (aof-use-rdb-preamble no): the
     * keys as RESTORE commands of their DUMP payloads, the function
     * libraries as FUNCTION LOAD, SELECT between databases. */
    int aof_cmds;
    /* Called once at the cut, every shard held (and nothing else may be
     * locked by the caller): an AOF rewrite records where its new
     * incremental file starts. NULL: nothing. */
    void (*at_cut)(void *arg);
    /* Called from the saver thread when the file is complete (ok 1) or
     * failed (ok 0, errno-style message in err). NULL: nothing. */
    void (*done)(int ok, const char *err, void *arg);
    void *arg;
};

/* What INFO persistence reports. */
struct snap_status {
    _Atomic int in_progress, last_ok, scheduled;
    _Atomic long long start_ms, last_time_sec, last_try_ms;
    _Atomic unsigned long long saves, dirty_at_save;
    /* Bytes writers saved ahead of the saver (the fork's copy-on-write
     * counterpart): during the running snapshot, and in the last one. */
    _Atomic unsigned long long side_bytes, last_side_bytes;
    /* The same for the last snapshot of any kind (an AOF rewrite's too),
     * set before its done callback runs. */
    _Atomic unsigned long long job_side_bytes;
};
/* The load in progress (INFO's loading_* fields) and the last one's counts. */
struct load_progress {
    _Atomic long long start_ms, total_bytes, loaded_bytes;
    _Atomic unsigned long long keys_loaded, keys_expired;
};
extern struct load_progress load_progress;
extern struct snap_status snap_status;

/* Nonzero while the dataset is being loaded (clients get -LOADING). */
extern _Atomic int server_loading;

/* Start the save-point thread; stop it. */
void snapshot_init(void);
void snapshot_shutdown(void);
/* Nonzero when `save` has at least one save point. */
int snapshot_save_points_set(void);
/* Changes since the last successful save (rdb_changes_since_last_save). */
unsigned long long snapshot_dirty(void);
/* The RDB file's path (dbfilename, relative to dir). */
int snapshot_path(char *buf, size_t size);
/* BGSAVE to the RDB file: waits for the cut when wait_cut (a caller that
 * holds shard locks must not). 0, or -1 with err. */
int snapshot_bgsave(int wait_cut, char *err, size_t errlen);
/* snapshot_start without waiting for the cut (the caller may hold shard
 * locks: the cut is taken once they are free). */
int snapshot_start_nowait(const struct snap_opts *o, char *err, size_t errlen);

/* What the running snapshot is for. */
enum { SNAP_KIND_NONE = 0, SNAP_KIND_RDB = 1, SNAP_KIND_AOF = 2 };
int snapshot_kind(void);

/* Before exiting: abort a background save, then save when asked (SAVE)
 * or when save points are configured (DEFAULT), unless NOSAVE. 0, or -1
 * when the save failed and force is not set (the server keeps running). */
enum { SHUTDOWN_DEFAULT = 0, SHUTDOWN_SAVE = 1, SHUTDOWN_NOSAVE = 2 };
int shutdown_prepare(int mode, int force);

/* Start a snapshot in the background. 0, or -1 when one is already
 * running (or the file cannot be created: err says which). */
int snapshot_start(const struct snap_opts *o, char *err, size_t errlen);
/* The same, waiting for it to finish: 0 or -1 with err. The caller must
 * hold no shard lock. */
int snapshot_run(const struct snap_opts *o, char *err, size_t errlen);
/* Nonzero while a snapshot is being written. */
int snapshot_active(void);
/* Wait for the running snapshot, if any (shutdown). */
void snapshot_wait(void);
/* Ask the running snapshot to stop (its file is removed); waits for it. */
void snapshot_abort(void);

/* The `save` setting: pairs of "seconds changes" ("" for none). Returns
 * the number of points parsed into secs/changes (up to max; with max 0
 * only validates), or -1 with err. */
int savepoints_parse(const char *value, long long *secs, long long *changes, int max, char *err, size_t errlen);
/* The save setting changed (CONFIG SET save). */
void snapshot_config_changed(void);

/* What a load did. */
struct rdb_load_result {
    unsigned long long keys_loaded, keys_expired;
    int version;
    /* Aux fields of interest (0 / empty when absent). */
    int aof_base;
    char repl_id[41];
    long long repl_offset;
};

/* Load an RDB stream (header to EOF and checksum) into the keyspace, each
 * key under its shard's lock; keys already present are replaced. 0, or -1
 * with in->err set (the keyspace then holds what loaded before the error). */
int rdb_load_stream(struct rdb_in *in, struct rdb_load_result *res);
/* The same, when the caller holds every shard already (DEBUG RELOAD). */
int rdb_load_stream_ex(struct rdb_in *in, struct rdb_load_result *res, int locked);
/* An rdb_in reading the file fd from its current offset (rdb_in_fd_close
 * frees its buffer; the fd stays the caller's), and the CRC64 of every
 * byte consumed so far. */
int rdb_in_fd(struct rdb_in *in, int fd);
uint64_t rdb_in_fd_crc(struct rdb_in *in);
void rdb_in_fd_close(struct rdb_in *in);
/* Open and load a file. 0, 1 when the file does not exist, -1 with err. */
int rdb_load_file(const char *path, struct rdb_load_result *res, char *err, size_t errlen);
int rdb_load_file_ex(const char *path, struct rdb_load_result *res, int locked, char *err, size_t errlen);

#endif
