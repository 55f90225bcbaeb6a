/* aof.c - the append-only file; see aof.h for what it is and
 * docs/journal.md for the design. This file holds the journal thread (the
 * merge's continuous consumer: incremental files, fsync policy, group
 * commit, rewrites), the background fsync thread of appendfsync everysec,
 * and loading at start-up. Replaying one file is in aofload.c, the
 * manifest's format in aofman.c.
 *
 * Files. An incremental file being written is a struct afile. The merge
 * sink (called under the journal's reader lock, on whichever thread runs
 * the merge) appends a record's bytes to the `in` buffer of the file it
 * belongs to; the journal thread moves them to `pend` under the same lock
 * and writes them without it. During a rewrite two files take records:
 * `cur` those before the rewrite's cut, `nxt` those after; once every
 * record before the cut is merged, `nxt` becomes `cur` and the old file is
 * closed. A file with fd -1 drops what it gets: records before the first
 * cut of an AOF being turned on, which the new base holds anyway.
 *
 * Ownership. The journal thread alone opens, writes and closes files,
 * writes the manifest and changes `state`; `cur`/`nxt` and the buffers
 * `in` are under the reader lock; everything INFO reads is atomic.
 * Nobody waits for the journal thread while holding a shard lock. */
#include "aof.h"

#include "../core/alloc.h"
#include "../core/buf.h"
#include "../core/util.h"
#include "../store/db.h"
#include "../store/lockset.h"
#include "config.h"
#include "journal.h"
#include "server.h"
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Seconds between two logs of the same write error (Redis's rate). */
#define AOF_WRITE_LOG_ERROR_RATE 30
/* Consecutive failed rewrites after which automatic ones back off. */
#define AOF_REWRITE_LIMIT_THRESHOLD 3
#define AOF_REWRITE_LIMIT_MAX_MINUTES 60
/* The journal thread's tick (everysec fsync, cron, retries). */
#define AOF_TICK_MS 100
#define AOF_PATH_MAX (AOF_NAME_MAX * 2 + 64)

struct afile {
    int fd; /* -1: what comes here is dropped */
    char name[AOF_NAME_MAX];
    int temp;        /* the temporary incremental file of an AOF being turned on */
    int in_manifest; /* its bytes count in aof_current_size */
    /* Reader lock: what the sink appended, and the database the file's
     * last record left selected. */
    struct hk_buf in;
    int sel_db;
    /* Journal thread: merged bytes not yet written, bytes written, bytes
     * an fsync covers. */
    struct hk_buf pend;
    long long size, synced;
};

/* Immutable settings, read once. */
/* appendfilename is kept short enough that every name built from it fits
 * AOF_NAME_MAX. */
static char aof_dir[AOF_NAME_MAX], aof_fname[AOF_NAME_MAX / 2];

static _Atomic int state = AOF_OFF;
static struct aof_manifest man; /* journal thread (main thread before it starts) */
static int man_loaded;

/* Reader lock. */
static struct afile *cur, *nxt;
static struct journal_cut rw_cut;
static _Atomic int cut_active; /* rw_cut is taken and nxt takes what follows it */
static long long ts_last;      /* the last #TS annotation written */

/* Journal thread only. */
static struct afile *closing[4];
static int nclosing;
static int rw_snap_running; /* a rewrite's snapshot was started, its end not handled */
static int rw_killed;       /* it was aborted on purpose (not a failure) */
static char rw_base[AOF_NAME_MAX];
static long long last_fsync_sec, postponed_since, last_write_err_log, last_write_try_ms;
static uint64_t *recs_snap;

/* Published (atomics). */
static _Atomic int rw_in_progress, rw_scheduled, rw_now, rw_result;
static char rw_err[256]; /* written by the snapshot's done before rw_result */
static _Atomic long long rw_start_ms, rw_last_time_sec = -1;
static _Atomic int rw_last_ok = 1, last_write_ok = 1, write_errno, bio_ok = 1, bio_errno;
static _Atomic long long stat_rewrites, stat_rw_failures;
static _Atomic unsigned long long last_cow, delayed_fsync, buffer_len;

unsigned long long aof_buffer_bytes(void) {
    /* The records waiting in the journal are the AOF's buffer too (what
     * Redis holds in aof_buf until its write). */
    return atomic_load_explicit(&buffer_len, memory_order_relaxed) + journal_buffer_bytes();
}
static _Atomic long long cur_size, base_size, rewrite_base_size;
static _Atomic int gate_err; /* what admit_aof_error was last told */

/* The journal thread and its wake-up. */
static pthread_t jt_tid;
static int jt_started;
static _Atomic int jt_evfd = -1;
static _Atomic int jt_stop, shutting_down;
/* CONFIG SET appendonly yes scheduled the first rewrite (not BGREWRITEAOF). */
static _Atomic int on_requested;

/* The background fsync (appendfsync everysec). */
static pthread_t fs_tid;
static pthread_mutex_t fs_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fs_cv = PTHREAD_COND_INITIALIZER;
static int fs_fds[4], fs_n, fs_quit;
static _Atomic int fs_pending;

static void jt_wake(void) {
    int fd = atomic_load_explicit(&jt_evfd, memory_order_acquire);
    if (fd < 0) return;
    uint64_t one = 1;
    ssize_t r = write(fd, &one, sizeof(one));
    (void)r;
}

static void path_of(char *buf, size_t size, const char *name) { snprintf(buf, size, "%s/%s", aof_dir, name); }

/* A base file is an RDB (aof-use-rdb-preamble yes) or commands. */
static const char *base_ext(void) { return CFG(aof_use_rdb_preamble) ? "rdb" : "aof"; }

static void settings_read(void) {
    if (aof_fname[0]) return;
    char *d = cfg_get_string(&cfg.appenddirname), *f = cfg_get_string(&cfg.appendfilename);
    snprintf(aof_dir, sizeof(aof_dir), "%s", d);
    snprintf(aof_fname, sizeof(aof_fname), "%s", f);
    hk_free(d);
    hk_free(f);
}

static int dir_create(char *err, size_t errlen) {
    if (mkdir(aof_dir, 0755) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(aof_dir, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
        errno = ENOTDIR;
    }
    snprintf(err, errlen, "Can't open or create append-only dir %s: %s", aof_dir, strerror(errno));
    return -1;
}

static long long file_size(const char *name) {
    char p[AOF_PATH_MAX];
    path_of(p, sizeof(p), name);
    struct stat st;
    return stat(p, &st) == 0 ? (long long)st.st_size : 0;
}

/* ---- the manifest (aofman.c) --------------------------------------------- */

static void manifest_path(char *buf, size_t size) {
    char name[AOF_NAME_MAX + 16];
    snprintf(name, sizeof(name), "%s.manifest", aof_fname);
    path_of(buf, size, name);
}

/* ---- the merge's sink ---------------------------------------------------- */

/* Parse the command at p (an array of bulk strings) within n bytes: its
 * length, and its name. 0 when malformed (never, for what propagation
 * builds). */
static size_t cmd_span(const char *p, size_t n, const char **name, size_t *nlen) {
    size_t i = 0;
    if (n < 4 || p[0] != '*') return 0;
    long long argc = 0;
    for (i = 1; i < n && p[i] >= '0' && p[i] <= '9'; i++) argc = argc * 10 + (p[i] - '0');
    if (i + 2 > n || p[i] != '\r') return 0;
    i += 2;
    for (long long a = 0; a < argc; a++) {
        if (i >= n || p[i] != '$') return 0;
        long long len = 0;
        for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++) len = len * 10 + (p[i] - '0');
        if (i + 2 > n) return 0;
        i += 2;
        if (a == 0) {
            *name = p + i;
            *nlen = (size_t)len;
        }
        i += (size_t)len + 2;
        if (i > n) return 0;
    }
    return i;
}

static int is_publish(const char *name, size_t len) {
    return (len == 7 && !strncasecmp(name, "publish", 7)) || (len == 8 && !strncasecmp(name, "spublish", 8));
}

/* The record's commands without PUBLISH and SPUBLISH, which Redis sends
 * to replicas only; a MULTI ... EXEC left with nothing inside goes
 * entirely. Returns 0 when nothing was removed (use the record as is). */
static int strip_publish(const char *p, size_t n, struct hk_buf *out, int *empty) {
    size_t off = 0, clen;
    int found = 0;
    const char *nm;
    size_t nl;
    while (off < n && (clen = cmd_span(p + off, n - off, &nm, &nl))) {
        if (is_publish(nm, nl)) found = 1;
        off += clen;
    }
    if (!found) return 0;
    int kept = 0;
    off = 0;
    while (off < n && (clen = cmd_span(p + off, n - off, &nm, &nl))) {
        if (!is_publish(nm, nl)) {
            hk_buf_add(out, p + off, clen, 256);
            if (!((nl == 5 && !strncasecmp(nm, "multi", 5)) || (nl == 4 && !strncasecmp(nm, "exec", 4)))) kept++;
        }
        off += clen;
    }
    *empty = kept == 0;
    return 1;
}

static void aof_sink(void *arg, const struct journal_rec *r) {
    (void)arg;
    /* A record without a shard is a PUBLISH of its own: Redis's AOF does
     * not carry it. */
    if (!r->ntags) return;
    struct afile *f = cur;
    if (atomic_load_explicit(&cut_active, memory_order_acquire) && journal_after_cut(&rw_cut, r)) f = nxt;
    if (!f || f->fd < 0) return;
    const char *p = r->resp;
    size_t n = r->len;
    struct hk_buf stripped = {0};
    int empty = 0;
    if (strip_publish(p, n, &stripped, &empty)) {
        if (empty) {
            hk_free(stripped.p);
            return;
        }
        p = stripped.p;
        n = stripped.len;
    }
    if (CFG(aof_timestamp_enabled)) {
        long long now = (long long)time(NULL);
        if (now > ts_last) {
            char ts[64];
            int tl = snprintf(ts, sizeof(ts), "#TS:%lld\r\n", now);
            hk_buf_add(&f->in, ts, (size_t)tl, 4096);
            ts_last = now;
        }
    }
    if (r->start_db != f->sel_db) {
        char sel[JOURNAL_SELECT_MAX];
        hk_buf_add(&f->in, sel, journal_select_resp(sel, r->start_db), 4096);
    }
    hk_buf_add(&f->in, p, n, 4096);
    f->sel_db = r->end_db;
    hk_free(stripped.p);
}

static void at_cut(void *arg) {
    (void)arg;
    journal_cut_take(&rw_cut);
    atomic_store_explicit(&cut_active, 1, memory_order_release);
}

/* ---- files ---------------------------------------------------------------- */

static struct afile *afile_new(int fd, const char *name) {
    struct afile *f = hk_calloc(1, sizeof(*f));
    f->fd = fd;
    f->sel_db = -1;
    if (name) snprintf(f->name, sizeof(f->name), "%s", name);
    return f;
}

static void afile_free(struct afile *f) {
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    hk_free(f->in.p);
    hk_free(f->pend.p);
    hk_free(f);
}

/* Open dir/name for appending (trunc: empty it first). */
static int open_incr(const char *name, int trunc) {
    char p[AOF_PATH_MAX];
    path_of(p, sizeof(p), name);
    return open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | (trunc ? O_TRUNC : 0), 0644);
}

static void unlink_in_dir(const char *name) {
    char p[AOF_PATH_MAX];
    path_of(p, sizeof(p), name);
    unlink(p);
}

/* Tell admission about the error state when it changed. */
static void gate_sync(void) {
    int err = !atomic_load(&last_write_ok) || !atomic_load(&bio_ok);
    if (err == atomic_load(&gate_err)) return;
    atomic_store(&gate_err, err);
    if (err) {
        int e = !atomic_load(&last_write_ok) ? atomic_load(&write_errno) : atomic_load(&bio_errno);
        admit_aof_error(strerror(e));
    } else {
        admit_aof_error(NULL);
    }
}

/* Write what f has pending. 1 when all of it went, 0 on a failure (kept
 * for the next try; with appendfsync always the process exits, as Redis
 * does: the replies may already have been produced). */
static int afile_write(struct afile *f) {
    if (!f->pend.len) return 1;
    if (f->fd < 0) {
        f->pend.len = 0;
        return 1;
    }
    size_t done = 0;
    int err = 0;
    while (done < f->pend.len) {
        ssize_t n = write(f->fd, f->pend.p + done, f->pend.len - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            err = errno;
            break;
        }
        if (n == 0) {
            err = ENOSPC;
            break;
        }
        done += (size_t)n;
    }
    long long now = hk_mstime();
    if (done < f->pend.len) {
        int can_log = now / 1000 - last_write_err_log > AOF_WRITE_LOG_ERROR_RATE;
        if (can_log) last_write_err_log = now / 1000;
        if (done == 0) {
            if (can_log) hk_log(LL_WARNING, "Error writing to the AOF file: %s", strerror(err));
        } else {
            if (can_log)
                hk_log(LL_WARNING, "Short write while writing to the AOF file: (nwritten=%lld, expected=%lld)",
                       (long long)done, (long long)f->pend.len);
            /* Take the partial record back out, so the file never holds
             * half a command. */
            if (ftruncate(f->fd, f->size) == -1) {
                if (can_log)
                    hk_log(LL_WARNING,
                           "Could not remove short write from the append-only file.  Redis may refuse to load the AOF "
                           "the next time it starts.  ftruncate: %s",
                           strerror(errno));
                f->size += (long long)done;
                if (f->in_manifest) atomic_fetch_add(&cur_size, (long long)done);
                memmove(f->pend.p, f->pend.p + done, f->pend.len - done);
                f->pend.len -= done;
            }
            err = ENOSPC;
        }
        if (CFG(appendfsync) == AOF_FSYNC_ALWAYS) {
            hk_log(LL_WARNING,
                   "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...");
            exit(1);
        }
        atomic_store(&write_errno, err);
        atomic_store(&last_write_ok, 0);
        last_write_try_ms = now;
        gate_sync();
        return 0;
    }
    f->size += (long long)f->pend.len;
    if (f->in_manifest) atomic_fetch_add(&cur_size, (long long)f->pend.len);
    f->pend.len = 0;
    if (f->pend.cap > 4 * 1024 * 1024) {
        hk_free(f->pend.p);
        f->pend = (struct hk_buf){0};
    }
    if (!atomic_load(&last_write_ok)) {
        hk_log(LL_WARNING, "AOF write error looks solved, Redis can write again.");
        atomic_store(&last_write_ok, 1);
        gate_sync();
    }
    return 1;
}

static int afile_fsync(struct afile *f) {
    if (f->fd < 0 || f->synced == f->size) return 0;
    if (fdatasync(f->fd) < 0) return -1;
    f->synced = f->size;
    return 0;
}

/* Every file the journal thread writes: the ones closing, cur, nxt. */
static int files_list(struct afile **out) {
    int n = 0;
    for (int i = 0; i < nclosing; i++) out[n++] = closing[i];
    if (cur) out[n++] = cur;
    if (nxt) out[n++] = nxt;
    return n;
}

/* Hand the background fsync the files written since their last fsync. */
static void bg_fsync(void) {
    struct afile *fs[8];
    int n = files_list(fs);
    pthread_mutex_lock(&fs_mu);
    for (int i = 0; i < n && fs_n < 4; i++) {
        struct afile *f = fs[i];
        if (f->fd < 0 || f->synced == f->size) continue;
        int d = dup(f->fd);
        if (d < 0) continue;
        fs_fds[fs_n++] = d;
        f->synced = f->size;
    }
    if (fs_n) {
        atomic_store(&fs_pending, 1);
        pthread_cond_signal(&fs_cv);
    }
    pthread_mutex_unlock(&fs_mu);
}

static void *fs_main(void *arg) {
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_setname_np(pthread_self(), "hk-aof-fsync");
    pthread_mutex_lock(&fs_mu);
    for (;;) {
        while (!fs_n && !fs_quit) pthread_cond_wait(&fs_cv, &fs_mu);
        if (!fs_n && fs_quit) break;
        int fds[4], n = fs_n;
        memcpy(fds, fs_fds, sizeof(fds));
        fs_n = 0;
        pthread_mutex_unlock(&fs_mu);
        for (int i = 0; i < n; i++) {
            if (fdatasync(fds[i]) < 0 && errno != EBADF && errno != EINVAL) {
                atomic_store(&bio_errno, errno);
                if (atomic_exchange(&bio_ok, 0)) hk_log(LL_WARNING, "Fail to fsync the AOF file: %s", strerror(errno));
            } else {
                atomic_store(&bio_ok, 1);
            }
            close(fds[i]);
        }
        pthread_mutex_lock(&fs_mu);
        if (!fs_n) atomic_store(&fs_pending, 0);
    }
    pthread_mutex_unlock(&fs_mu);
    return NULL;
}

/* Move what the merge produced to the files and write it; fsync by
 * policy; publish what is durable. force: write whatever the state of the
 * background fsync (turning off, shutdown). */
static void flush_files(int force) {
    int nw = journal_nworkers();
    if (!recs_snap) recs_snap = hk_calloc((size_t)(nw ? nw : 1), sizeof(uint64_t));
    struct afile *old = NULL;
    journal_reader_lock();
    struct afile *fs[8];
    int n = files_list(fs);
    for (int i = 0; i < n; i++) {
        struct afile *f = fs[i];
        if (f->in.len) {
            hk_buf_add(&f->pend, f->in.p, f->in.len, 4096);
            f->in.len = 0;
            if (f->in.cap > 4 * 1024 * 1024) {
                hk_free(f->in.p);
                f->in = (struct hk_buf){0};
            }
        }
    }
    journal_consumed(recs_snap);
    /* Every record before the rewrite's cut is merged: the file after it
     * takes everything from now on. */
    if (nxt && atomic_load(&cut_active) && nclosing < 4 && journal_cut_passed(&rw_cut)) {
        old = cur;
        cur = nxt;
        nxt = NULL;
        atomic_store(&cut_active, 0);
    }
    journal_reader_unlock();
    if (old) closing[nclosing++] = old;

    long long now = hk_mstime();
    int policy = (int)CFG(appendfsync);
    int pending = 0;
    n = files_list(fs);
    for (int i = 0; i < n; i++) pending += fs[i]->pend.len != 0;
    int do_write = pending != 0;
    if (do_write && !force && !atomic_load(&last_write_ok) && now - last_write_try_ms < 1000) do_write = 0;
    if (do_write && !force && policy == AOF_FSYNC_EVERYSEC && atomic_load(&fs_pending)) {
        /* A background fsync is running: a write now would wait for it.
         * Wait up to two seconds, as Redis does, then write anyway. */
        if (!postponed_since) {
            postponed_since = now;
            do_write = 0;
        } else if (now - postponed_since < 2000) {
            do_write = 0;
        } else {
            atomic_fetch_add(&delayed_fsync, 1);
            hk_log(LL_NOTICE, "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer "
                              "without waiting for fsync to complete, this may slow down Redis.");
        }
    }
    int all_written = !pending;
    if (do_write) {
        postponed_since = 0;
        all_written = 1;
        for (int i = 0; i < n; i++) all_written &= afile_write(fs[i]);
    }
    unsigned long long blen = 0;
    for (int i = 0; i < n; i++) blen += fs[i]->pend.len;
    atomic_store(&buffer_len, blen);
    if (all_written) {
        int skip = CFG(no_appendfsync_on_rewrite) && snapshot_active();
        if (policy == AOF_FSYNC_ALWAYS && !skip) {
            for (int i = 0; i < n; i++)
                if (afile_fsync(fs[i]) < 0) {
                    hk_log(LL_WARNING,
                           "Can't persist AOF for fsync error when the AOF fsync policy is 'always': %s. Exiting...",
                           strerror(errno));
                    exit(1);
                }
            last_fsync_sec = now / 1000;
        }
        journal_publish_durable(recs_snap);
    }
    /* A file no record can reach any more closes once written. */
    for (int i = 0; i < nclosing;) {
        struct afile *f = closing[i];
        if (f->pend.len) {
            i++;
            continue;
        }
        if (policy != AOF_FSYNC_NO || force) afile_fsync(f);
        afile_free(f);
        closing[i] = closing[--nclosing];
    }
}

/* ---- state changes ---------------------------------------------------------- */

static void attach_journal(int on) {
    struct lockset all;
    ls_init(&all);
    ls_add_all(&all);
    journal_reader_lock();
    ls_acquire(&all);
    journal_attach(on ? aof_sink : NULL, NULL);
    ls_release(&all);
    journal_reader_unlock();
    ls_destroy(&all);
}

static int hold_wanted(void) { return atomic_load(&state) != AOF_OFF && CFG(appendfsync) == AOF_FSYNC_ALWAYS; }

static void hold_update(void) {
    int want = hold_wanted();
    if (atomic_exchange(&journal_hold, want) && !want) {
        /* A CONFIG SET appendfsync always may have set it between the
         * read and the exchange (aof_fsync_policy_changed): keep it. */
        if (hold_wanted()) atomic_store(&journal_hold, 1);
        else journal_release_all();
    }
}

void aof_fsync_policy_changed(void) {
    /* Replies wait for their fsync from the first write after CONFIG SET
     * answers, as Redis applies the policy from the next command; letting
     * go (another policy) is the journal thread's, at its next turn. */
    if (hold_wanted()) atomic_store(&journal_hold, 1);
    jt_wake();
}

static void sizes_from_manifest(void) {
    long long b = man.base.name[0] ? file_size(man.base.name) : 0, total = b;
    for (int i = 0; i < man.nincr; i++) total += file_size(man.incr[i].name);
    atomic_store(&base_size, b);
    atomic_store(&cur_size, total);
    atomic_store(&rewrite_base_size, b);
}

static void rewrite_abort_running(void);

/* CONFIG SET appendonly yes while serving: records are dropped until a
 * rewrite's cut, whose base holds them, then go to a temporary
 * incremental file that the rewrite's end names and lists. */
static void turn_on(void) {
    char err[256];
    if (dir_create(err, sizeof(err)) < 0) {
        hk_log(LL_WARNING, "%s", err);
        return;
    }
    if (rw_snap_running) {
        hk_log(LL_WARNING, "AOF was enabled but there is already an AOF rewriting in background. Stopping background "
                           "AOF and starting a rewrite now.");
        rewrite_abort_running();
    }
    journal_reader_lock();
    cur = afile_new(-1, NULL);
    nxt = NULL;
    atomic_store(&cut_active, 0);
    journal_reader_unlock();
    attach_journal(1);
    atomic_store(&state, AOF_WAIT_REWRITE);
    atomic_store(&on_requested, 0);
    hold_update();
    if (!atomic_load(&last_write_ok) || !atomic_load(&bio_ok)) {
        hk_log(LL_WARNING, "AOF reopen, just ignore the last error.");
        atomic_store(&last_write_ok, 1);
        atomic_store(&bio_ok, 1);
        gate_sync();
    }
    atomic_store(&rw_scheduled, 1);
    if (snapshot_active())
        hk_log(LL_WARNING, "AOF was enabled but there is already another background operation. An AOF background was "
                           "scheduled to start when possible.");
}

/* CONFIG SET appendonly no: the rest of the journal is written and
 * fsynced, the files closed. */
static void turn_off(void) {
    if (rw_snap_running) rewrite_abort_running();
    atomic_store(&rw_scheduled, 0);
    attach_journal(0);
    atomic_store(&state, AOF_OFF);
    hold_update();
    journal_release_all();
    flush_files(1);
    struct afile *fs[8];
    int n = files_list(fs);
    for (int i = 0; i < n; i++) {
        if (!afile_write(fs[i])) hk_log(LL_WARNING, "Fail to write the AOF file %s before closing it", fs[i]->name);
        if (afile_fsync(fs[i]) < 0) hk_log(LL_WARNING, "Fail to fsync the AOF file: %s", strerror(errno));
        if (fs[i]->temp) unlink_in_dir(fs[i]->name);
    }
    journal_reader_lock();
    struct afile *a = cur, *b = nxt;
    cur = nxt = NULL;
    atomic_store(&cut_active, 0);
    journal_reader_unlock();
    afile_free(a);
    afile_free(b);
    for (int i = 0; i < nclosing; i++) afile_free(closing[i]);
    nclosing = 0;
    atomic_store(&buffer_len, 0);
    if (!atomic_load(&last_write_ok)) {
        atomic_store(&last_write_ok, 1);
        gate_sync();
    }
}

/* ---- rewrites --------------------------------------------------------------- */

static void rw_done(int ok, const char *err, void *arg) {
    (void)arg;
    snprintf(rw_err, sizeof(rw_err), "%s", err ? err : "");
    atomic_store(&last_cow, atomic_load(&snap_status.job_side_bytes));
    atomic_store_explicit(&rw_result, ok ? 1 : 2, memory_order_release);
    jt_wake();
}

static void rewrite_finish(int ok);

static void rewrite_abort_running(void) {
    if (snapshot_kind() == SNAP_KIND_AOF) snapshot_abort();
    else snapshot_wait();
    rw_killed = 1;
    int res = atomic_exchange(&rw_result, 0);
    rewrite_finish(res == 1);
}

/* Redis's back-off for automatic rewrites that keep failing: 1, 2, 4 ...
 * 60 minutes after the third failure in a row. */
static int rewrite_limited(void) {
    static int next_delay_min;
    static long long next_time;
    if (atomic_load(&stat_rw_failures) < AOF_REWRITE_LIMIT_THRESHOLD) {
        next_delay_min = 0;
        next_time = 0;
        return 0;
    }
    long long now = hk_mstime() / 1000;
    if (next_time) {
        if (now < next_time) return 1;
        next_time = 0;
        return 0;
    }
    next_delay_min = next_delay_min ? next_delay_min * 2 : 1;
    if (next_delay_min > AOF_REWRITE_LIMIT_MAX_MINUTES) next_delay_min = AOF_REWRITE_LIMIT_MAX_MINUTES;
    next_time = now + next_delay_min * 60;
    hk_log(LL_WARNING, "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in %d minutes",
           next_delay_min);
    return 1;
}

static void rewrite_failed_start(const char *why) {
    hk_log(LL_WARNING, "Can't rewrite append only file in background: %s", why);
    atomic_store(&rw_last_ok, 0);
    atomic_fetch_add(&stat_rw_failures, 1);
    atomic_store(&rw_in_progress, 0);
}

/* Start a rewrite (rw_in_progress already set by whoever asked): a new
 * incremental file listed in the manifest (or, while the AOF is being
 * turned on, a temporary one), and a snapshot whose cut sends what
 * follows it there. */
static void rewrite_begin(void) {
    char err[AOF_PATH_MAX];
    int st = atomic_load(&state);
    if (dir_create(err, sizeof(err)) < 0) {
        rewrite_failed_start(err);
        return;
    }
    struct afile *f = NULL;
    struct aof_manifest added = {0};
    int manifest_changed = 0;
    if (st == AOF_ON) {
        char name[AOF_NAME_MAX];
        snprintf(name, sizeof(name), "%s.%lld.incr.aof", aof_fname, man.incr_seq + 1);
        int fd = open_incr(name, 1);
        if (fd < 0) {
            snprintf(err, sizeof(err), "Can't open the append-only file %s: %s", name, strerror(errno));
            rewrite_failed_start(err);
            return;
        }
        aof_manifest_copy(&added, &man);
        struct aof_minfo ai = {{0}, man.incr_seq + 1, 'i'};
        snprintf(ai.name, sizeof(ai.name), "%s", name);
        aof_manifest_add(&added, &ai);
        added.incr_seq = ai.seq;
        if (aof_manifest_persist(aof_dir, aof_fname, &added) < 0) {
            close(fd);
            unlink_in_dir(name);
            aof_manifest_free(&added);
            rewrite_failed_start("can't persist the AOF manifest");
            return;
        }
        aof_manifest_free(&man);
        man = added;
        manifest_changed = 1;
        f = afile_new(fd, name);
        f->in_manifest = 1;
        hk_log(LL_NOTICE, "Creating AOF incr file %s on background rewrite", name);
    } else if (st == AOF_WAIT_REWRITE) {
        char name[AOF_NAME_MAX];
        snprintf(name, sizeof(name), "temp-%s.incr", aof_fname);
        int fd = open_incr(name, 1);
        if (fd < 0) {
            snprintf(err, sizeof(err), "Can't open the append-only file %s: %s", name, strerror(errno));
            rewrite_failed_start(err);
            return;
        }
        f = afile_new(fd, name);
        f->temp = 1;
        hk_log(LL_NOTICE, "Creating AOF incr file %s on background rewrite", name);
    }
    if (f) {
        journal_reader_lock();
        nxt = f;
        journal_reader_unlock();
    }
    snprintf(rw_base, sizeof(rw_base), "%s.%lld.base.%s", aof_fname, man.base_seq + 1, base_ext());
    char path[AOF_PATH_MAX];
    path_of(path, sizeof(path), rw_base);
    struct snap_opts o = {.path = path,
                          .aof_base = 1,
                          .aof_cmds = !CFG(aof_use_rdb_preamble),
                          .at_cut = f ? at_cut : NULL,
                          .done = rw_done,
                          .arg = NULL};
    atomic_store(&rw_start_ms, hk_mstime());
    atomic_fetch_add(&stat_rewrites, 1);
    atomic_store(&rw_result, 0);
    rw_killed = 0;
    rw_snap_running = 1;
    if (snapshot_start(&o, err, sizeof(err)) < 0) {
        rw_snap_running = 0;
        journal_reader_lock();
        nxt = NULL;
        atomic_store(&cut_active, 0);
        journal_reader_unlock();
        if (f) {
            char name[AOF_NAME_MAX];
            snprintf(name, sizeof(name), "%s", f->name);
            afile_free(f);
            unlink_in_dir(name);
        }
        if (manifest_changed) {
            man.nincr--;
            man.incr_seq--;
            aof_manifest_persist(aof_dir, aof_fname, &man);
        }
        if (snapshot_active()) {
            /* A BGSAVE took the saver first: try again once it ends. */
            atomic_store(&rw_scheduled, 1);
            atomic_store(&rw_in_progress, 0);
            atomic_fetch_sub(&stat_rewrites, 1);
            return;
        }
        rewrite_failed_start(err);
        return;
    }
    atomic_store(&rw_scheduled, 0);
    hk_log(LL_NOTICE, "Background append only file rewriting started");
}

/* The rewrite's snapshot ended. On success the manifest names the new
 * base and the incremental file that began at its cut; what they replace
 * is deleted. */
static void rewrite_finish(int ok) {
    rw_snap_running = 0;
    long long start = atomic_load(&rw_start_ms);
    atomic_store(&rw_last_time_sec, (hk_mstime() - start) / 1000);
    int st = atomic_load(&state);
    int killed = rw_killed || (!ok && atomic_load(&shutting_down));
    rw_killed = 0;
    if (ok && !killed) {
        hk_log(LL_NOTICE, "Background AOF rewrite terminated with success");
        struct aof_manifest nm;
        aof_manifest_copy(&nm, &man);
        if (nm.base.name[0]) {
            nm.base.type = 'h';
            aof_manifest_add(&nm, &nm.base);
        }
        nm.base_seq++;
        memset(&nm.base, 0, sizeof(nm.base));
        snprintf(nm.base.name, sizeof(nm.base.name), "%s", rw_base);
        nm.base.seq = nm.base_seq;
        nm.base.type = 'b';
        struct afile *tf = NULL;
        char newincr[AOF_NAME_MAX] = "";
        /* What the manifest lists from now on: the base and the file that
         * began at the cut (the last one); earlier ones become history. */
        int keep_last = st == AOF_ON;
        if (st == AOF_WAIT_REWRITE) {
            journal_reader_lock();
            tf = nxt && nxt->temp ? nxt : cur && cur->temp ? cur : NULL;
            journal_reader_unlock();
        }
        for (int i = 0; i < nm.nincr - (keep_last ? 1 : 0); i++) {
            nm.incr[i].type = 'h';
            aof_manifest_add(&nm, &nm.incr[i]);
        }
        if (keep_last && nm.nincr) {
            nm.incr[0] = nm.incr[nm.nincr - 1];
            nm.nincr = 1;
        } else {
            nm.nincr = 0;
        }
        int failed = 0;
        if (tf) {
            snprintf(newincr, sizeof(newincr), "%s.%lld.incr.aof", aof_fname, nm.incr_seq + 1);
            char from[AOF_PATH_MAX], to[AOF_PATH_MAX];
            path_of(from, sizeof(from), tf->name);
            path_of(to, sizeof(to), newincr);
            if (rename(from, to) == -1) {
                hk_log(LL_WARNING, "Error trying to rename the temporary AOF incr file %s into %s: %s", tf->name,
                       newincr, strerror(errno));
                failed = 1;
            } else {
                hk_log(LL_NOTICE, "Successfully renamed the temporary AOF incr file %s into %s", tf->name, newincr);
                struct aof_minfo ai = {{0}, ++nm.incr_seq, 'i'};
                snprintf(ai.name, sizeof(ai.name), "%s", newincr);
                aof_manifest_add(&nm, &ai);
            }
        }
        /* The manifest on disk never names history: those files are
         * deleted right after it is written. */
        struct aof_manifest ondisk;
        aof_manifest_copy(&ondisk, &nm);
        ondisk.nhist = 0;
        if (!failed && aof_manifest_persist(aof_dir, aof_fname, &ondisk) < 0) {
            failed = 1;
            if (tf) {
                char from[AOF_PATH_MAX], to[AOF_PATH_MAX];
                path_of(from, sizeof(from), newincr);
                path_of(to, sizeof(to), tf->name);
                if (rename(from, to) == -1) unlink(from);
            }
        }
        aof_manifest_free(&ondisk);
        if (failed) {
            unlink_in_dir(rw_base);
            aof_manifest_free(&nm);
            ok = 0;
        } else {
            if (tf) {
                journal_reader_lock();
                snprintf(tf->name, sizeof(tf->name), "%s", newincr);
                tf->temp = 0;
                tf->in_manifest = 1;
                journal_reader_unlock();
            }
            for (int i = 0; i < nm.nhist; i++) {
                hk_log(LL_NOTICE, "Removing the history file %s in the background", nm.hist[i].name);
                unlink_in_dir(nm.hist[i].name);
            }
            nm.nhist = 0;
            aof_manifest_free(&man);
            man = nm;
            long long b = file_size(rw_base), incr = 0;
            for (int i = 0; i < man.nincr; i++) incr += file_size(man.incr[i].name);
            atomic_store(&base_size, b);
            atomic_store(&cur_size, b + incr);
            atomic_store(&rewrite_base_size, b + incr);
            atomic_store(&rw_last_ok, 1);
            atomic_store(&stat_rw_failures, 0);
            hk_log(LL_NOTICE, "Background AOF rewrite finished successfully");
            if (st == AOF_WAIT_REWRITE) {
                atomic_store(&state, AOF_ON);
                hold_update();
            }
        }
    }
    if (!ok || killed) {
        if (!killed) {
            atomic_store(&rw_last_ok, 0);
            atomic_fetch_add(&stat_rw_failures, 1);
            if (rw_err[0]) hk_log(LL_WARNING, "Background AOF rewrite terminated with error: %s", rw_err);
            else hk_log(LL_WARNING, "Background AOF rewrite terminated with error");
        } else {
            hk_log(LL_WARNING, "Background AOF rewrite terminated by the server");
        }
        if (st == AOF_WAIT_REWRITE) {
            /* The temporary file goes; records are dropped again until
             * the next attempt's cut. */
            struct afile *drop = NULL;
            journal_reader_lock();
            if (nxt && nxt->temp) {
                drop = nxt;
                nxt = NULL;
                atomic_store(&cut_active, 0);
            } else if (cur && cur->temp) {
                drop = cur;
                cur = afile_new(-1, NULL);
            }
            journal_reader_unlock();
            if (drop) {
                char name[AOF_NAME_MAX];
                snprintf(name, sizeof(name), "%s", drop->name);
                afile_free(drop);
                unlink_in_dir(name);
            }
            if (!killed) atomic_store(&rw_scheduled, 1);
        }
    }
    atomic_store(&rw_in_progress, 0);
}

/* ---- the journal thread ------------------------------------------------------- */

static void control(void) {
    int want = CFG(appendonly) != 0;
    int st = atomic_load(&state);
    if (st == AOF_OFF && want) turn_on();
    else if (st != AOF_OFF && !want) turn_off();
    int res = atomic_exchange_explicit(&rw_result, 0, memory_order_acquire);
    if (res) rewrite_finish(res == 1);
    hold_update();
    /* A new rewrite waits for the last one's switch of files to end. */
    if (rw_snap_running || atomic_load(&cut_active)) return;
    if (atomic_exchange(&rw_now, 0)) {
        if (snapshot_active()) {
            atomic_store(&rw_scheduled, 1);
            atomic_store(&rw_in_progress, 0);
        } else {
            rewrite_begin();
        }
        return;
    }
    if (snapshot_active()) return;
    if (atomic_load(&rw_scheduled) && !atomic_load(&rw_in_progress) && !rewrite_limited()) {
        int z = 0;
        if (atomic_compare_exchange_strong(&rw_in_progress, &z, 1)) rewrite_begin();
        return;
    }
    long long perc = CFG(auto_aof_rewrite_percentage);
    long long size = atomic_load(&cur_size);
    if (atomic_load(&state) == AOF_ON && perc && size > CFG(auto_aof_rewrite_min_size) &&
        !atomic_load(&rw_in_progress)) {
        long long base = atomic_load(&rewrite_base_size);
        if (!base) base = 1;
        long long growth = size * 100 / base - 100;
        if (growth >= perc && !rewrite_limited()) {
            int z = 0;
            if (atomic_compare_exchange_strong(&rw_in_progress, &z, 1)) {
                hk_log(LL_NOTICE, "Starting automatic rewriting of AOF on %lld%% growth", growth);
                rewrite_begin();
            }
        }
    }
}

static void cron(void) {
    long long now = hk_mstime();
    gate_sync();
    if (atomic_load(&state) == AOF_OFF) return;
    /* everysec: one background fsync per second at most, for what was
     * written since the last one. */
    if (CFG(appendfsync) == AOF_FSYNC_EVERYSEC && now / 1000 > last_fsync_sec && !atomic_load(&fs_pending) &&
        !(CFG(no_appendfsync_on_rewrite) && snapshot_active())) {
        bg_fsync();
        last_fsync_sec = now / 1000;
    }
}

/* Shutdown while the AOF is being turned on and its first rewrite has not
 * ended (Redis refuses to exit then, "Writing initial AOF, can't exit."):
 * nothing else runs any more, so the base is written now, followed by an
 * empty incremental file, and the temporary file goes. */
static void write_initial_aof(void) {
    hk_log(LL_WARNING, "Writing initial AOF before exiting.");
    journal_reader_lock();
    struct afile *a = cur, *b = nxt;
    cur = nxt = NULL;
    atomic_store(&cut_active, 0);
    journal_reader_unlock();
    for (int i = 0; i < 2; i++) {
        struct afile *f = i ? b : a;
        if (f && f->temp) unlink_in_dir(f->name);
        afile_free(f);
    }
    char err[AOF_PATH_MAX], path[AOF_PATH_MAX], why[256];
    if (dir_create(err, sizeof(err)) < 0) {
        hk_log(LL_WARNING, "%s", err);
        return;
    }
    struct aof_manifest nm = {0};
    nm.base_seq = man.base_seq + 1;
    nm.incr_seq = man.incr_seq + 1;
    snprintf(nm.base.name, sizeof(nm.base.name), "%s.%lld.base.%s", aof_fname, nm.base_seq, base_ext());
    nm.base.seq = nm.base_seq;
    nm.base.type = 'b';
    path_of(path, sizeof(path), nm.base.name);
    struct snap_opts o = {.path = path, .aof_base = 1, .aof_cmds = !CFG(aof_use_rdb_preamble)};
    if (snapshot_run(&o, why, sizeof(why)) < 0) {
        hk_log(LL_WARNING, "Writing initial AOF failed: %s", why);
        return;
    }
    struct aof_minfo ai = {{0}, nm.incr_seq, 'i'};
    snprintf(ai.name, sizeof(ai.name), "%s.%lld.incr.aof", aof_fname, ai.seq);
    int fd = open_incr(ai.name, 1);
    if (fd < 0 || fsync(fd) < 0) {
        hk_log(LL_WARNING, "Can't open the append-only file %s: %s", ai.name, strerror(errno));
        if (fd >= 0) close(fd);
        unlink_in_dir(nm.base.name);
        return;
    }
    close(fd);
    aof_manifest_add(&nm, &ai);
    if (aof_manifest_persist(aof_dir, aof_fname, &nm) < 0) {
        unlink_in_dir(nm.base.name);
        unlink_in_dir(ai.name);
        aof_manifest_free(&nm);
        return;
    }
    if (man.base.name[0]) unlink_in_dir(man.base.name);
    for (int i = 0; i < man.nincr; i++) unlink_in_dir(man.incr[i].name);
    aof_manifest_free(&man);
    man = nm;
    atomic_store(&state, AOF_ON);
}

static void *jt_main(void *arg) {
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_setname_np(pthread_self(), "hk-journal");
    long long last_cron = 0;
    for (;;) {
        int efd = atomic_load(&jt_evfd);
        struct pollfd p = {efd, POLLIN, 0};
        int idle = atomic_load(&state) == AOF_OFF && !atomic_load(&rw_in_progress) && !atomic_load(&rw_scheduled);
        poll(&p, 1, idle ? 1000 : AOF_TICK_MS);
        uint64_t v;
        ssize_t r = read(efd, &v, sizeof(v));
        (void)r;
        if (atomic_load(&jt_stop)) break;
        control();
        if (atomic_load(&state) != AOF_OFF) {
            journal_merge();
            flush_files(0);
        }
        long long now = hk_mstime();
        if (now - last_cron >= AOF_TICK_MS) {
            last_cron = now;
            cron();
        }
    }
    /* Shutdown: the workers have stopped; whatever they journaled goes to
     * disk. A rewrite that ended meanwhile is recorded first. */
    int res = atomic_exchange(&rw_result, 0);
    if (res) rewrite_finish(res == 1);
    if (atomic_load(&state) != AOF_OFF) {
        attach_journal(0);
        flush_files(1);
        struct afile *fs[8];
        int n = files_list(fs);
        for (int i = 0; i < n; i++) {
            afile_write(fs[i]);
            afile_fsync(fs[i]);
        }
        if (atomic_load(&state) == AOF_WAIT_REWRITE) write_initial_aof();
    }
    return NULL;
}

/* ---- the contract ------------------------------------------------------------- */

static int init_once(char *err, size_t errlen);

int aof_config_changed(char *err, size_t errlen) {
    if (init_once(err, errlen) < 0) return 0;
    if (CFG(appendonly) && dir_create(err, errlen) < 0) return 0;
    /* As Redis shows it at once: turning on schedules the first rewrite,
     * turning off drops a scheduled one (the journal thread does both). */
    int st = atomic_load(&state);
    if (CFG(appendonly) && st == AOF_OFF) {
        atomic_store(&on_requested, 1);
        atomic_store(&rw_scheduled, 1);
    } else if (!CFG(appendonly) && (st != AOF_OFF || atomic_exchange(&on_requested, 0))) {
        atomic_store(&rw_scheduled, 0);
    }
    jt_wake();
    return 1;
}

/* The manifest read and the journal thread running, once: at start-up
 * (aof_start), or on the first use of the AOF while serving when the
 * start-up left it off. */
static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;

static int init_once(char *err, size_t errlen) {
    pthread_mutex_lock(&init_mu);
    int rc = 0;
    settings_read();
    if (!man_loaded) {
        char mp[AOF_PATH_MAX];
        manifest_path(mp, sizeof(mp));
        if (aof_manifest_load(&man, mp, err, errlen) < 0) {
            rc = -1;
            goto out;
        }
        man_loaded = 1;
    }
    if (jt_started) goto out;
    last_fsync_sec = hk_mstime() / 1000;
    int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (efd < 0) {
        snprintf(err, errlen, "Can't create the journal thread's eventfd: %s", strerror(errno));
        rc = -1;
        goto out;
    }
    atomic_store_explicit(&jt_evfd, efd, memory_order_release);
    journal_set_wake_fd(efd);
    if (pthread_create(&fs_tid, NULL, fs_main, NULL) != 0 || pthread_create(&jt_tid, NULL, jt_main, NULL) != 0) {
        snprintf(err, errlen, "Can't create the journal thread");
        rc = -1;
        goto out;
    }
    jt_started = 1;
out:
    pthread_mutex_unlock(&init_mu);
    return rc;
}

int aof_start(char *err, size_t errlen) {
    settings_read();
    if (!man_loaded) {
        char mp[AOF_PATH_MAX];
        manifest_path(mp, sizeof(mp));
        if (aof_manifest_load(&man, mp, err, errlen) < 0) return -1;
        man_loaded = 1;
    }
    if (CFG(appendonly) && atomic_load(&state) == AOF_OFF) {
        if (dir_create(err, errlen) < 0) return -1;
        int need_base = !man.base.name[0] && !man.nincr;
        int created = 0;
        if (!man.nincr) {
            struct aof_minfo ai = {{0}, man.incr_seq + 1, 'i'};
            snprintf(ai.name, sizeof(ai.name), "%s.%lld.incr.aof", aof_fname, ai.seq);
            aof_manifest_add(&man, &ai);
            man.incr_seq = ai.seq;
            created = 1;
        }
        const char *name = man.incr[man.nincr - 1].name;
        int fd = open_incr(name, 0);
        if (fd < 0) {
            snprintf(err, errlen, "Can't open the append-only file %s: %s", name, strerror(errno));
            return -1;
        }
        struct afile *f = afile_new(fd, name);
        f->in_manifest = 1;
        f->size = f->synced = file_size(name);
        if (need_base) {
            /* An empty start: the base is written now, as Redis does. The
             * journal records from its cut on, so a write that slips in
             * while it is written is in exactly one of the two files. */
            journal_reader_lock();
            cur = afile_new(-1, NULL);
            nxt = f;
            journal_reader_unlock();
            attach_journal(1);
            char bname[AOF_NAME_MAX], path[AOF_PATH_MAX], why[256];
            snprintf(bname, sizeof(bname), "%s.%lld.base.%s", aof_fname, man.base_seq + 1, base_ext());
            path_of(path, sizeof(path), bname);
            struct snap_opts o = {
                .path = path, .aof_base = 1, .aof_cmds = !CFG(aof_use_rdb_preamble), .at_cut = at_cut};
            if (snapshot_run(&o, why, sizeof(why)) < 0) {
                attach_journal(0);
                snprintf(err, errlen, "Can't write the AOF base file %s: %s", bname, why);
                return -1;
            }
            man.base_seq++;
            memset(&man.base, 0, sizeof(man.base));
            snprintf(man.base.name, sizeof(man.base.name), "%s", bname);
            man.base.seq = man.base_seq;
            man.base.type = 'b';
            hk_log(LL_NOTICE, "Creating AOF base file %s on server start", bname);
        } else {
            journal_reader_lock();
            cur = f;
            journal_reader_unlock();
            attach_journal(1);
        }
        if (need_base || created || man.nhist) {
            /* History left by an interrupted rewrite goes too. */
            for (int i = 0; i < man.nhist; i++) unlink_in_dir(man.hist[i].name);
            man.nhist = 0;
            if (aof_manifest_persist(aof_dir, aof_fname, &man) < 0) {
                snprintf(err, errlen, "Can't persist the AOF manifest");
                return -1;
            }
        }
        sizes_from_manifest();
        atomic_store(&state, AOF_ON);
        hold_update();
        hk_log(LL_NOTICE, "%s AOF incr file %s on server start", created ? "Creating" : "Opening", name);
    }
    return init_once(err, errlen);
}

void aof_shutdown(void) {
    if (!jt_started) return;
    /* A rewrite still running is of no use to the next start, unless it
     * writes the first base of an AOF being turned on. */
    atomic_store(&shutting_down, 1);
    if (snapshot_kind() == SNAP_KIND_AOF) {
        if (atomic_load(&state) == AOF_ON) snapshot_abort();
        else snapshot_wait();
    }
    atomic_store(&jt_stop, 1);
    jt_wake();
    pthread_join(jt_tid, NULL);
    pthread_mutex_lock(&fs_mu);
    fs_quit = 1;
    pthread_cond_signal(&fs_cv);
    pthread_mutex_unlock(&fs_mu);
    pthread_join(fs_tid, NULL);
    journal_set_wake_fd(-1);
    jt_started = 0;
}

int aof_write_error(void) {
    if (atomic_load(&state) == AOF_OFF) return 0;
    if (!atomic_load(&last_write_ok)) return atomic_load(&write_errno) ? atomic_load(&write_errno) : EIO;
    if (!atomic_load(&bio_ok)) return atomic_load(&bio_errno) ? atomic_load(&bio_errno) : EIO;
    return 0;
}

int aof_rewrite_in_progress(void) { return atomic_load(&rw_in_progress); }

int aof_bgrewrite(int nested) {
    char err[256];
    if (init_once(err, sizeof(err)) < 0) {
        hk_log(LL_WARNING, "%s", err);
        return AOF_RW_FAILED;
    }
    if (atomic_load(&rw_in_progress)) return AOF_RW_IN_PROGRESS;
    if (nested || snapshot_active()) {
        /* Manually asked for: the back-off of failed automatic rewrites
         * does not apply. */
        atomic_store(&stat_rw_failures, 0);
        atomic_store(&rw_scheduled, 1);
        jt_wake();
        return AOF_RW_SCHEDULED;
    }
    int z = 0;
    if (!atomic_compare_exchange_strong(&rw_in_progress, &z, 1)) return AOF_RW_IN_PROGRESS;
    atomic_store(&rw_now, 1);
    jt_wake();
    return AOF_RW_STARTED;
}

void aof_stats_get(struct aof_stats *s) {
    memset(s, 0, sizeof(*s));
    s->state = atomic_load(&state);
    s->rewrite_in_progress = atomic_load(&rw_in_progress);
    s->rewrite_scheduled = atomic_load(&rw_scheduled);
    s->last_rewrite_time_sec = atomic_load(&rw_last_time_sec);
    s->current_rewrite_time_sec = s->rewrite_in_progress ? (hk_mstime() - atomic_load(&rw_start_ms)) / 1000 : -1;
    s->last_bgrewrite_ok = atomic_load(&rw_last_ok);
    s->rewrites = atomic_load(&stat_rewrites);
    s->rewrites_consecutive_failures = atomic_load(&stat_rw_failures);
    s->last_write_ok = atomic_load(&last_write_ok) && atomic_load(&bio_ok);
    s->last_cow_size = atomic_load(&last_cow);
    s->current_size = atomic_load(&cur_size);
    s->base_size = atomic_load(&rewrite_base_size);
    s->buffer_length = atomic_load(&buffer_len);
    s->pending_bio_fsync = (unsigned long long)atomic_load(&fs_pending);
    s->delayed_fsync = atomic_load(&delayed_fsync);
}

/* ---- loading at start-up --------------------------------------------------------- */

/* Redis 7's upgrade of a Redis 6 AOF (one file in `dir`): it becomes the
 * base of a new manifest and moves into the directory. */
static int upgrade_old_file(char *err, size_t errlen) {
    struct stat st;
    if (stat(aof_fname, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    struct stat ds;
    int dir_exists = stat(aof_dir, &ds) == 0 && S_ISDIR(ds.st_mode);
    char inside[AOF_PATH_MAX];
    path_of(inside, sizeof(inside), aof_fname);
    int upgrade = !dir_exists || (!man.base.name[0] && !man.nincr) ||
                  (man.base.name[0] && !man.nincr && !strcmp(man.base.name, aof_fname) && access(inside, F_OK) != 0);
    if (!upgrade) return 0;
    if (dir_create(err, errlen) < 0) return -1;
    aof_manifest_free(&man);
    snprintf(man.base.name, sizeof(man.base.name), "%s", aof_fname);
    man.base.seq = 1;
    man.base.type = 'b';
    man.base_seq = 1;
    if (aof_manifest_persist(aof_dir, aof_fname, &man) < 0) {
        snprintf(err, errlen, "Can't persist the AOF manifest");
        return -1;
    }
    if (rename(aof_fname, inside) == -1) {
        snprintf(err, errlen, "Error trying to move the old AOF file %s into dir %s: %s", aof_fname, aof_dir,
                 strerror(errno));
        return -1;
    }
    hk_log(LL_NOTICE, "Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).", aof_fname,
           aof_dir);
    return 0;
}

int aof_load_at_start(char *err, size_t errlen) {
    settings_read();
    char mp[AOF_PATH_MAX];
    manifest_path(mp, sizeof(mp));
    if (!man_loaded) {
        if (aof_manifest_load(&man, mp, err, errlen) < 0) return -1;
        man_loaded = 1;
    }
    if (upgrade_old_file(err, errlen) < 0) return -1;
    if (!man.base.name[0] && !man.nincr) return 0;
    long long total = 0;
    int nfiles = (man.base.name[0] ? 1 : 0) + man.nincr;
    for (int i = -1; i < man.nincr; i++) {
        const char *name = i < 0 ? man.base.name : man.incr[i].name;
        if (!name[0]) continue;
        char p[AOF_PATH_MAX];
        path_of(p, sizeof(p), name);
        struct stat st;
        if (stat(p, &st) == -1) {
            hk_log(LL_WARNING, "Unable to obtain the AOF file %s length. stat: %s", name, strerror(errno));
            snprintf(err, errlen, "Unable to obtain the AOF file %s length. stat: %s", name, strerror(errno));
            return -1;
        }
        total += st.st_size;
    }
    if (total == 0) return 0;
    long long t0 = hk_monotonic_us();
    atomic_store(&load_progress.start_ms, hk_mstime());
    atomic_store(&load_progress.total_bytes, total);
    atomic_store(&load_progress.loaded_bytes, 0);
    int n = 0;
    for (int i = -1; i < man.nincr; i++) {
        const char *name = i < 0 ? man.base.name : man.incr[i].name;
        if (!name[0]) continue;
        int last = ++n == nfiles;
        long long s = hk_monotonic_us();
        int r = aof_load_file(aof_dir, name, last, err, errlen);
        if (r == AOF_LOAD_OK || (r == AOF_LOAD_TRUNCATED && last))
            hk_log(LL_NOTICE, "DB loaded from %s file %s: %.3f seconds", i < 0 ? "base" : "incr", name,
                   (double)(hk_monotonic_us() - s) / 1e6);
        if (r == AOF_LOAD_TRUNCATED && !last) {
            hk_log(LL_WARNING, "Fatal error: the truncated file is not the last file");
            snprintf(err, errlen, "the truncated AOF file %s is not the last file", name);
            return -1;
        }
        if (r == AOF_LOAD_NOT_EXIST || r == AOF_LOAD_OPEN_ERR || r == AOF_LOAD_FAILED) return -1;
    }
    hk_log(LL_NOTICE, "DB loaded from append only file: %.3f seconds", (double)(hk_monotonic_us() - t0) / 1e6);
    return 0;
}
