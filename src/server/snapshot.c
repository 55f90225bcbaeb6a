/* snapshot.c - fork-less RDB snapshots and RDB loading; see snapshot.h.
 *
 * The saver thread owns the file and its buffer. Each pending shard's
 * side buffer (struct snap_shard) is owned by that shard's lock: writers
 * append to it from the write hook, the saver takes its bytes under the
 * same lock. The job's state (running, cut taken, abort) is under snap_mu;
 * the completion fields that INFO reads are atomics. Lock order: snap_mu
 * is never held while taking a shard lock. */
#include "snapshot.h"

#include "../core/alloc.h"
#include "../core/buf.h"
#include "../core/crc64.h"
#include "../core/rdbstr.h"
#include "../core/util.h"
#include "../proto/respw.h"
#include "../store/db.h"
#include "../store/hfe.h"
#include "../store/lockset.h"
#include "../types/kv.h"
#include "../types/rdb.h"
#include "../types/types.h"
#include "config.h"
#include "evict.h"
#include "function.h"
#include "replid.h"
#include "server.h"
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The saver writes after this many bytes gathered under one lock hold. */
#define SNAP_CHUNK (8 * 1024)
/* rdb-save-incremental-fsync: flush to disk every this many bytes. */
#define SNAP_FSYNC_EVERY (4u * 1024 * 1024)

struct snap_shard {
    struct hk_buf side; /* entries writers saved ahead of the saver */
    int db;             /* database of the side buffer's last record, -1 none */
};

struct snap_job {
    struct snap_opts o;
    char path[1024], tmp[1100];
    int fd;
    int version, compress, checksum;
    uint64_t crc;
    unsigned long long written, synced;
    long long now_ms; /* the cut's clock: keys past their deadline are left out */
    unsigned long long dirty_at_cut;
    struct snap_shard *shards;
    struct hk_buf fnrec; /* function library records at the cut */
    unsigned long long keys;
    _Atomic int failed;
    int fg; /* SAVE, not BGSAVE: a failure does not stop writes */
    char err[256];
    /* Pacing of a background walk (saver_pace): the current window's
     * start, in wall and thread CPU nanoseconds, and whether the saver
     * runs at normal priority in it. */
    long long win_wall, win_cpu;
    int boosted;
    /* What the entry clocks are saved as: 0 nothing, 1 IDLE (an LRU
     * policy at the cut), 2 FREQ (an LFU one). */
    int clock_kind;
};

static pthread_mutex_t snap_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t snap_cv = PTHREAD_COND_INITIALIZER;
static struct snap_job *job;  /* the running one (snap_mu) */
static int cut_done;          /* the running job has taken its cut (snap_mu) */
static _Atomic int abort_req; /* ask the saver to stop */
static pthread_t saver_tid;
static int saver_joinable; /* snap_mu */

struct snap_status snap_status = {.last_ok = 1, .last_time_sec = -1};
struct load_progress load_progress;

/* ---- pacing ----------------------------------------------------------- */

/* A background walk runs under SCHED_IDLE: a worker that wakes on the
 * saver's CPU preempts it at once instead of waiting out a time slice, and
 * the saver still takes every idle cycle. So that saturated workers cannot
 * starve it, each SNAP_PACE_WINDOW the saver looks at the CPU share it
 * got; below SNAP_PACE_MIN_SHARE percent it spends the next window at
 * normal priority, competing fairly, and then goes back to idle. Under
 * full load a save thus gets at least about a quarter of a CPU. */
#define SNAP_PACE_WINDOW_NS (100LL * 1000 * 1000)
#define SNAP_PACE_MIN_SHARE 25

static long long clock_ns(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void saver_policy(int normal) {
    struct sched_param sp = {0};
    pthread_setschedparam(pthread_self(), normal ? SCHED_OTHER : SCHED_IDLE, &sp);
}

static void saver_pace_start(struct snap_job *j) {
    if (j->fg) return;
    saver_policy(0);
    j->win_wall = clock_ns(CLOCK_MONOTONIC);
    j->win_cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void saver_pace(struct snap_job *j) {
    if (j->fg) return;
    long long wall = clock_ns(CLOCK_MONOTONIC);
    if (wall - j->win_wall < SNAP_PACE_WINDOW_NS) return;
    long long cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    int starved = (cpu - j->win_cpu) * 100 < (wall - j->win_wall) * SNAP_PACE_MIN_SHARE;
    int boost = starved && !j->boosted;
    if (boost != j->boosted) saver_policy(boost);
    j->boosted = boost;
    j->win_wall = wall;
    j->win_cpu = cpu;
}

/* ---- writing ---------------------------------------------------------- */

/* The first failure wins; the saver reads err once every writer that
 * could fail is gone (the hook is removed with every shard held). */
static void job_fail(struct snap_job *j, const char *fmt, const char *arg) {
    int zero = 0;
    if (atomic_compare_exchange_strong(&j->failed, &zero, 1)) snprintf(j->err, sizeof(j->err), fmt, arg);
}

static int job_write(struct snap_job *j, const void *p, size_t n) {
    if (j->failed || !n) return j->failed ? -1 : 0;
    if (j->checksum) j->crc = crc64(j->crc, p, n);
    const char *q = p;
    while (n) {
        ssize_t w = write(j->fd, q, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            job_fail(j, "%s", strerror(errno));
            return -1;
        }
        q += w;
        n -= (size_t)w;
        j->written += (size_t)w;
    }
    if ((j->o.aof_base ? CFG(aof_rewrite_incremental_fsync) : CFG(rdb_save_incremental_fsync)) &&
        j->written - j->synced >= SNAP_FSYNC_EVERY) {
        fdatasync(j->fd);
        j->synced = j->written;
    }
    return 0;
}

/* An AOF base without the RDB preamble is Redis protocol: one command a
 * record, as an AOF replays it. */
static void resp_cmd(struct hk_buf *b, int argc, const char *const *argv, const size_t *len) {
    respw_cmd(b, argc, argv, len, 4096);
}

static void put_select(const struct snap_job *j, struct rdb_out *o, int db) {
    if (j->o.aof_cmds) {
        char num[16];
        const char *argv[2] = {"SELECT", num};
        size_t len[2] = {6, (size_t)snprintf(num, sizeof(num), "%d", db)};
        resp_cmd(o->b, 2, argv, len);
        return;
    }
    rdb_put_byte(o, RDB_OPCODE_SELECTDB);
    rdb_put_len(o, (uint64_t)db);
}

/* The key as a RESTORE of its DUMP payload (with its deadline, ABSTTL):
 * any Redis replays it, whatever the type. 0, or -1 when the value
 * cannot be written. */
static int put_restore(struct rdb_out *o, const struct kv *e) {
    struct hk_buf pl = {0};
    if (rdb_dump_payload(e, o->compress, &pl) < 0) {
        hk_free(pl.p);
        return -1;
    }
    char ttl[24];
    long long when = kv_expire(e);
    const char *argv[5] = {"RESTORE", kv_key(e), ttl, pl.p, "ABSTTL"};
    size_t len[5] = {7, kv_keylen(e), (size_t)snprintf(ttl, sizeof(ttl), "%lld", when >= 0 ? when : 0), pl.len, 6};
    resp_cmd(o->b, when >= 0 ? 5 : 4, argv, len);
    hk_free(pl.p);
    return 0;
}

/* One key record: its expiry, type, name and value. */
static void put_entry(struct snap_job *j, struct rdb_out *o, const struct kv *e) {
    if (j->o.aof_cmds) {
        if (put_restore(o, e) < 0)
            job_fail(j, "can't save a value of type %s", type_table[kv_type(e)] ? type_table[kv_type(e)]->name : "?");
        return;
    }
    size_t mark = o->b->len;
    long long when = kv_expire(e);
    if (when >= 0) {
        rdb_put_byte(o, RDB_OPCODE_EXPIRETIME_MS);
        rdb_put_u64le(o, (uint64_t)when);
    }
    /* The access clock, as Redis saves it under an LRU or LFU policy. */
    if (j->clock_kind == 1) {
        rdb_put_byte(o, RDB_OPCODE_IDLE);
        rdb_put_len(o, (uint64_t)(kv_idle_ms(e, j->now_ms) / 1000));
    } else if (j->clock_kind == 2) {
        rdb_put_byte(o, RDB_OPCODE_FREQ);
        rdb_put_byte(o, (unsigned char)kv_lfu_freq(e, j->now_ms));
    }
    rdb_put_byte(o, (unsigned char)rdb_value_type(e, o));
    rdb_put_string(o, kv_key(e), kv_keylen(e));
    if (rdb_save_value(e, o) < 0) {
        o->b->len = mark;
        job_fail(j, "can't save a value of type %s", type_table[kv_type(e)] ? type_table[kv_type(e)]->name : "?");
    }
}

static struct snap_job *hook_job; /* the job whose hook is installed (set with every shard held) */

/* The write hook's part (db.h): k's entry is about to change and the
 * saver has not reached it; save it as it is into the shard's side
 * buffer. Runs on the writer's thread with the shard held. */
static void snap_hook(const struct keyref *k, struct kv *e) {
    struct snap_job *j = hook_job;
    struct shard *s = &ks.shards[k->shard];
    struct snap_shard *ss = s->snap;
    kv_set_snap(e, db_snap_mark);
    if (j->failed || atomic_load_explicit(&abort_req, memory_order_relaxed)) return;
    if (kv_has_expire(e) && kv_expire(e) <= j->now_ms) return;
    struct rdb_out o = {&ss->side, j->version, j->compress};
    size_t before = ss->side.len;
    if (ss->db != k->db) {
        put_select(j, &o, k->db);
        ss->db = k->db;
    }
    put_entry(j, &o, e);
    atomic_fetch_add_explicit(&snap_status.side_bytes, ss->side.len - before, memory_order_relaxed);
}

struct visit_ctx {
    struct snap_job *j;
    struct rdb_out *o;
    int db, selected;
};

static void visit(struct kv *e, void *arg) {
    struct visit_ctx *v = arg;
    if (kv_snap(e) == db_snap_mark) return;
    kv_set_snap(e, db_snap_mark);
    struct snap_job *j = v->j;
    if (j->failed || atomic_load_explicit(&abort_req, memory_order_relaxed)) return;
    if (kv_has_expire(e) && kv_expire(e) <= j->now_ms) return;
    if (!v->selected) {
        put_select(j, v->o, v->db);
        v->selected = 1;
    }
    put_entry(j, v->o, e);
    j->keys++;
}

/* Save what is left of every pending shard (FLUSH or SWAPDB is about to
 * change whole databases): every shard is held by the caller. */
static void snap_drain(void) {
    struct snap_job *j = hook_job;
    if (!j) return;
    for (unsigned s = 0; s < ks.nshards; s++) {
        struct snap_shard *ss = ks.shards[s].snap;
        if (!ss) continue;
        for (int d = 0; d < ks.ndb; d++) {
            struct hk_buf tmp = {0};
            struct rdb_out o = {&tmp, j->version, j->compress};
            struct visit_ctx v = {j, &o, d, 0};
            struct kt_iter it;
            kt_iter_init(&it, &ks.shards[s].tables[d]);
            for (struct kv *e; (e = kt_iter_next(&it));) visit(e, &v);
            if (tmp.len) {
                ss->db = -1;
                atomic_fetch_add_explicit(&snap_status.side_bytes, tmp.len, memory_order_relaxed);
                hk_buf_add(&ss->side, tmp.p, tmp.len, 4096);
            }
            hk_free(tmp.p);
        }
    }
}

static void put_aux(struct rdb_out *o, const char *k, const char *v) {
    rdb_put_byte(o, RDB_OPCODE_AUX);
    rdb_put_string(o, k, strlen(k));
    rdb_put_string(o, v, strlen(v));
}

static void put_aux_ll(struct rdb_out *o, const char *k, long long v) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", v);
    put_aux(o, k, buf);
}

/* The function libraries as FUNCTION LOAD commands (an AOF base without
 * the RDB preamble), from their RDB records. */
static void put_functions_as_commands(struct hk_buf *out) {
    struct hk_buf rec = {0};
    fn_rdb_records(&rec);
    struct rdb_reader r;
    rdb_reader_init(&r, rec.p, rec.len);
    unsigned char op;
    while (rdb_read_byte(&r, &op) == 0) {
        size_t cl;
        char *code = rdb_read_string(&r, &cl);
        if (!code) break;
        const char *argv[3] = {"FUNCTION", "LOAD", code};
        size_t len[3] = {8, 4, cl};
        resp_cmd(out, 3, argv, len);
        hk_free(code);
    }
    hk_free(rec.p);
}

/* Whether any entry needs RDB 12 (a hash with field TTLs). Every shard
 * held. */
static int needs_hfe_version(void) {
    for (int d = 0; d < ks.ndb; d++)
        if (ks_hfe_count(d, 1)) return 1;
    return 0;
}

/* The cut: with every shard held, flip the mark, mark every shard
 * pending, and note what the header needs. */
static void take_cut(struct snap_job *j, struct hk_buf *head) {
    struct lockset all;
    ls_init(&all);
    ls_add_all(&all);
    ls_acquire(&all);
    j->now_ms = hk_mstime();
    j->version = needs_hfe_version() ? RDB_VERSION_HFE : RDB_VERSION_BASE;
    int pol = (int)CFG(maxmemory_policy);
    j->clock_kind = maxmem_policy_lfu(pol) ? 2 : (pol == MAXMEM_ALLKEYS_LRU || pol == MAXMEM_VOLATILE_LRU) ? 1 : 0;
    struct stats_totals t;
    stats_totals(&t);
    j->dirty_at_cut = t.dirty;
    hook_job = j;
    db_snap_hook = snap_hook;
    db_snap_drain = snap_drain;
    db_snap_mark ^= KV_SNAP_BIT;
    for (unsigned s = 0; s < ks.nshards; s++) {
        j->shards[s].db = -1;
        ks.shards[s].snap = &j->shards[s];
    }
    /* The header, database sizes and functions, as of the cut. */
    if (j->o.aof_cmds) {
        put_functions_as_commands(head);
    } else {
        struct rdb_out o = {head, j->version, j->compress};
        char magic[16];
        snprintf(magic, sizeof(magic), "REDIS%04d", j->version);
        rdb_put_raw(&o, magic, 9);
        put_aux(&o, "redis-ver", HK_REDIS_COMPAT_VERSION);
        put_aux_ll(&o, "redis-bits", (long long)(sizeof(void *) * 8));
        put_aux_ll(&o, "ctime", j->now_ms / 1000);
        put_aux_ll(&o, "used-mem", (long long)hk_used_memory());
        char rid[REPLID_LEN + 1];
        replid_get(rid);
        put_aux(&o, "repl-id", rid);
        put_aux_ll(&o, "repl-offset", 0);
        put_aux_ll(&o, "aof-base", j->o.aof_base ? 1 : 0);
        fn_rdb_records(head);
        for (int d = 0; d < ks.ndb; d++) {
            unsigned long long keys, expires;
            ks_counts(d, 1, &keys, &expires);
            if (!keys) continue;
            put_select(j, &o, d);
            rdb_put_byte(&o, RDB_OPCODE_RESIZEDB);
            rdb_put_len(&o, keys);
            rdb_put_len(&o, expires);
        }
    }
    if (j->o.at_cut) j->o.at_cut(j->o.arg);
    ls_release(&all);
}

/* After a failure or an abort the walk goes on without writing, so that
 * every entry carries the mark when the next snapshot flips it. */
static void walk_shard(struct snap_job *j, unsigned s, struct hk_buf *out) {
    struct rdb_out o = {out, j->version, j->compress};
    for (int d = 0; d < ks.ndb; d++) {
        uint64_t cur = 0;
        struct visit_ctx v = {j, &o, d, 0};
        do {
            shard_lock(s);
            struct shard *sh = &ks.shards[s];
            do {
                cur = shard_scan(s, d, cur, (void (*)(struct kv *, void *))visit, &v);
            } while (cur && out->len < SNAP_CHUNK);
            struct hk_buf side = sh->snap->side;
            int last = !cur && d == ks.ndb - 1;
            sh->snap->side = (struct hk_buf){0};
            sh->snap->db = -1;
            if (last) sh->snap = NULL;
            shard_unlock(s);
            job_write(j, out->p, out->len);
            out->len = 0;
            v.selected = 0;
            if (side.len) job_write(j, side.p, side.len);
            hk_free(side.p);
            saver_pace(j);
        } while (cur);
    }
}

static void finish_file(struct snap_job *j) {
    /* An RDB ends with EOF and the checksum; commands (an AOF base
     * without the preamble) end where they end. */
    if (!j->o.aof_cmds) {
        unsigned char foot[9];
        foot[0] = RDB_OPCODE_EOF;
        job_write(j, foot, 1);
        uint64_t crc = j->checksum ? j->crc : 0;
        for (int i = 0; i < 8; i++) foot[1 + i] = (unsigned char)(crc >> (8 * i));
        /* The checksum itself is not part of what it covers. */
        int ck = j->checksum;
        j->checksum = 0;
        job_write(j, foot + 1, 8);
        j->checksum = ck;
    }
    if (!j->failed && fsync(j->fd) < 0) job_fail(j, "%s", strerror(errno));
    if (close(j->fd) < 0) job_fail(j, "%s", strerror(errno));
    j->fd = -1;
    if (atomic_load(&abort_req)) job_fail(j, "%s", "aborted");
    if (!j->failed && rename(j->tmp, j->path) < 0) job_fail(j, "%s", strerror(errno));
    if (j->failed) unlink(j->tmp);
}

static void *saver_main(void *arg) {
    struct snap_job *j = arg;
    pthread_setname_np(pthread_self(), "hk-snapshot");
    long long t0 = hk_mstime();
    struct hk_buf head = {0};
    take_cut(j, &head);
    pthread_mutex_lock(&snap_mu);
    cut_done = 1;
    pthread_cond_broadcast(&snap_cv);
    pthread_mutex_unlock(&snap_mu);
    saver_pace_start(j);
    job_write(j, head.p, head.len);
    hk_free(head.p);
    struct hk_buf out = {0};
    for (unsigned s = 0; s < ks.nshards; s++) walk_shard(j, s, &out);
    hk_free(out.p);
    finish_file(j);
    /* Every shard is done: the hook is gone before the job is. */
    struct lockset all;
    ls_init(&all);
    ls_add_all(&all);
    ls_acquire(&all);
    hook_job = NULL;
    db_snap_hook = NULL;
    db_snap_drain = NULL;
    ls_release(&all);
    long long secs = (hk_mstime() - t0 + 500) / 1000;
    unsigned long long side = atomic_exchange(&snap_status.side_bytes, 0);
    atomic_store(&snap_status.job_side_bytes, side);
    if (!j->o.aof_base) atomic_store(&snap_status.last_side_bytes, side);
    if (j->o.aof_base) {
        /* An AOF base: the rewrite reports it (aof.c), not the RDB status. */
    } else if (!j->failed) {
        atomic_store(&server.lastsave, j->now_ms / 1000);
        atomic_store(&snap_status.dirty_at_save, j->dirty_at_cut);
        atomic_fetch_add(&snap_status.saves, 1);
        hk_log(LL_NOTICE, "DB saved on disk");
    } else {
        hk_log(LL_WARNING, "Failed saving the DB: %s", j->err);
    }
    if (!j->o.aof_base && (!j->failed || !j->fg)) {
        atomic_store(&snap_status.last_ok, !j->failed);
        admit_gate_set(ADMIT_GATE_RDB_ERR, j->failed);
    }
    if (!j->fg && !j->o.aof_base) atomic_store(&snap_status.last_time_sec, secs);
    atomic_store(&snap_status.last_try_ms, hk_mstime());
    pthread_mutex_lock(&snap_mu);
    job = NULL;
    atomic_store(&snap_status.in_progress, 0);
    pthread_cond_broadcast(&snap_cv);
    pthread_mutex_unlock(&snap_mu);
    /* After the job is gone: whoever waits for it may start the next. */
    if (j->o.done) j->o.done(!j->failed, j->err, j->o.arg);
    hk_free(j->shards);
    hk_free(j);
    return NULL;
}

static int start(const struct snap_opts *o, int wait_cut, int fg, char *err, size_t errlen) {
    pthread_mutex_lock(&snap_mu);
    if (job) {
        pthread_mutex_unlock(&snap_mu);
        snprintf(err, errlen, "Background save already in progress");
        return -1;
    }
    if (saver_joinable) {
        pthread_join(saver_tid, NULL);
        saver_joinable = 0;
    }
    struct snap_job *j = hk_calloc(1, sizeof(*j));
    j->o = *o;
    j->fg = fg;
    snprintf(j->path, sizeof(j->path), "%s", o->path);
    snprintf(j->tmp, sizeof(j->tmp), "%s.temp-%d-%lld", o->path, (int)getpid(), hk_mstime());
    j->fd = open(j->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (j->fd < 0) {
        char cwd[512];
        if (!getcwd(cwd, sizeof(cwd))) cwd[0] = '\0';
        snprintf(err, errlen, "Failed opening the temp RDB file %s (in server root dir %s) for saving: %s", j->tmp,
                 cwd, strerror(errno));
        atomic_store(&snap_status.last_try_ms, hk_mstime());
        hk_free(j);
        pthread_mutex_unlock(&snap_mu);
        if (!fg && !o->aof_base) {
            /* A BGSAVE has started for its client, as Redis's fork has,
             * and fails as its child would. */
            hk_log(LL_WARNING, "%s", err);
            hk_log(LL_WARNING, "Background saving error");
            atomic_store(&snap_status.last_ok, 0);
            atomic_store(&snap_status.last_time_sec, 0);
            admit_gate_set(ADMIT_GATE_RDB_ERR, 1);
            if (o->done) o->done(0, err, o->arg);
            return 0;
        }
        return -1;
    }
    j->compress = CFG(rdbcompression) != 0;
    j->checksum = CFG(rdbchecksum) != 0;
    j->shards = hk_calloc(ks.nshards, sizeof(*j->shards));
    job = j;
    cut_done = 0;
    atomic_store(&abort_req, 0);
    atomic_store(&snap_status.in_progress, 1);
    atomic_store(&snap_status.start_ms, hk_mstime());
    if (pthread_create(&saver_tid, NULL, saver_main, j) != 0) {
        job = NULL;
        atomic_store(&snap_status.in_progress, 0);
        close(j->fd);
        unlink(j->tmp);
        hk_free(j->shards);
        hk_free(j);
        pthread_mutex_unlock(&snap_mu);
        snprintf(err, errlen, "can't start the saver thread");
        return -1;
    }
    saver_joinable = 1;
    while (wait_cut && job == j && !cut_done) pthread_cond_wait(&snap_cv, &snap_mu);
    pthread_mutex_unlock(&snap_mu);
    return 0;
}

int snapshot_start(const struct snap_opts *o, char *err, size_t errlen) { return start(o, 1, 0, err, errlen); }

int snapshot_start_nowait(const struct snap_opts *o, char *err, size_t errlen) { return start(o, 0, 0, err, errlen); }

struct run_wait {
    int done, ok;
    char err[256];
    void (*user_done)(int ok, const char *err, void *arg);
    void *user_arg;
};

static void run_done(int ok, const char *err, void *arg) {
    struct run_wait *rw = arg;
    if (rw->user_done) rw->user_done(ok, err, rw->user_arg);
    pthread_mutex_lock(&snap_mu);
    rw->ok = ok;
    snprintf(rw->err, sizeof(rw->err), "%s", err ? err : "");
    rw->done = 1;
    pthread_cond_broadcast(&snap_cv);
    pthread_mutex_unlock(&snap_mu);
}

int snapshot_run(const struct snap_opts *o, char *err, size_t errlen) {
    struct run_wait rw = {0, 0, "", o->done, o->arg};
    struct snap_opts mine = *o;
    mine.done = run_done;
    mine.arg = &rw;
    if (start(&mine, 1, 1, err, errlen) < 0) return -1;
    pthread_mutex_lock(&snap_mu);
    while (!rw.done) pthread_cond_wait(&snap_cv, &snap_mu);
    pthread_mutex_unlock(&snap_mu);
    if (!rw.ok) snprintf(err, errlen, "%s", rw.err);
    return rw.ok ? 0 : -1;
}

int snapshot_active(void) { return atomic_load(&snap_status.in_progress); }

int snapshot_kind(void) {
    pthread_mutex_lock(&snap_mu);
    int k = !job ? SNAP_KIND_NONE : job->o.aof_base ? SNAP_KIND_AOF : SNAP_KIND_RDB;
    pthread_mutex_unlock(&snap_mu);
    return k;
}

int shutdown_prepare(int mode, int force) {
    if (snapshot_kind() == SNAP_KIND_RDB) {
        hk_log(LL_WARNING, "There is a child saving an .rdb. Killing it!");
        snapshot_abort();
    } else {
        snapshot_wait();
    }
    if (mode == SHUTDOWN_NOSAVE || (mode == SHUTDOWN_DEFAULT && !snapshot_save_points_set())) return 0;
    hk_log(LL_NOTICE, "Saving the final RDB snapshot before exiting.");
    char path[1024], err[512];
    snapshot_path(path, sizeof(path));
    struct snap_opts o = {.path = path};
    if (snapshot_run(&o, err, sizeof(err)) < 0) {
        if (force) {
            hk_log(LL_WARNING, "Error trying to save the DB. Exit anyway.");
            return 0;
        }
        hk_log(LL_WARNING, "Error trying to save the DB, can't exit.");
        return -1;
    }
    return 0;
}

void snapshot_wait(void) {
    pthread_mutex_lock(&snap_mu);
    while (job) pthread_cond_wait(&snap_cv, &snap_mu);
    if (saver_joinable) {
        pthread_join(saver_tid, NULL);
        saver_joinable = 0;
    }
    pthread_mutex_unlock(&snap_mu);
}

void snapshot_abort(void) {
    atomic_store(&abort_req, 1);
    snapshot_wait();
}

/* ---- save points ------------------------------------------------------------ */

int savepoints_parse(const char *value, long long *secs, long long *changes, int max, char *err, size_t errlen) {
    /* Words separated by single spaces, as Redis splits them: an empty
     * word (a leading, trailing or doubled space) is invalid. */
    int n = 0, words = 0;
    long long pair[2];
    if (!value[0]) return 0;
    const char *p = value;
    for (;;) {
        const char *sp = strchr(p, ' ');
        size_t len = sp ? (size_t)(sp - p) : strlen(p);
        long long v;
        if (!len || !hk_str2ll(p, len, &v)) goto bad;
        pair[words & 1] = v;
        if (words & 1) {
            if (pair[0] < 1 || pair[1] < 0) goto bad;
            if (n < max) {
                secs[n] = pair[0];
                changes[n] = pair[1];
            }
            n++;
        }
        words++;
        if (!sp) break;
        p = sp + 1;
    }
    if (words & 1) goto bad;
    return n;
bad:
    snprintf(err, errlen, "Invalid save parameters");
    return -1;
}

void snapshot_config_changed(void) {
    pthread_mutex_lock(&snap_mu);
    pthread_cond_broadcast(&snap_cv);
    pthread_mutex_unlock(&snap_mu);
}

unsigned long long snapshot_dirty(void) {
    struct stats_totals t;
    stats_totals(&t);
    unsigned long long at = atomic_load(&snap_status.dirty_at_save);
    return t.dirty > at ? t.dirty - at : 0;
}

int snapshot_path(char *buf, size_t size) {
    char *f = cfg_get_string(&cfg.dbfilename);
    int n = snprintf(buf, size, "%s", f);
    hk_free(f);
    return n < (int)size ? 0 : -1;
}

int snapshot_bgsave(int wait_cut, char *err, size_t errlen) {
    char path[1024];
    snapshot_path(path, sizeof(path));
    struct snap_opts o = {.path = path};
    hk_log(LL_NOTICE, "Background saving started");
    return start(&o, wait_cut, 0, err, errlen);
}

/* The cron: every 100 ms, a save point that is due starts a BGSAVE (after
 * a failed one, only once 5 s have passed, as Redis retries). */
static pthread_t cron_tid;
static _Atomic int cron_stop;

static void *cron_main(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "hk-savecron");
    while (!atomic_load(&cron_stop)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&snap_mu);
        pthread_cond_timedwait(&snap_cv, &snap_mu, &ts);
        int busy = job != NULL;
        pthread_mutex_unlock(&snap_mu);
        if (atomic_load(&cron_stop) || busy || atomic_load(&server_loading)) continue;
        long long now = hk_mstime();
        if (atomic_load(&snap_status.scheduled)) {
            atomic_store(&snap_status.scheduled, 0);
            char err[256];
            if (snapshot_bgsave(0, err, sizeof(err)) < 0) hk_log(LL_WARNING, "%s", err);
            continue;
        }
        char *sv = cfg_get_string(&cfg.save);
        long long secs[32], changes[32];
        char err[64];
        int n = savepoints_parse(sv, secs, changes, 32, err, sizeof(err));
        hk_free(sv);
        if (n <= 0) continue;
        unsigned long long dirty = snapshot_dirty();
        long long last = atomic_load(&server.lastsave);
        int ok = atomic_load(&snap_status.last_ok);
        long long last_try = atomic_load(&snap_status.last_try_ms);
        for (int i = 0; i < n && i < 32; i++) {
            if (dirty >= (unsigned long long)changes[i] && now / 1000 - last > secs[i] &&
                (ok || now - last_try > 5000)) {
                hk_log(LL_NOTICE, "%lld changes in %lld seconds. Saving...", (long long)dirty, secs[i]);
                if (snapshot_bgsave(0, err, sizeof(err)) < 0) hk_log(LL_WARNING, "%s", err);
                break;
            }
        }
    }
    return NULL;
}

void snapshot_init(void) {
    atomic_store(&snap_status.last_ok, 1);
    pthread_create(&cron_tid, NULL, cron_main, NULL);
}

void snapshot_shutdown(void) {
    atomic_store(&cron_stop, 1);
    snapshot_config_changed();
    pthread_join(cron_tid, NULL);
}

int snapshot_save_points_set(void) {
    char *sv = cfg_get_string(&cfg.save);
    char err[64];
    int n = savepoints_parse(sv, NULL, NULL, 0, err, sizeof(err));
    hk_free(sv);
    return n > 0;
}

/* ---- loading ---------------------------------------------------------------- */

_Atomic int server_loading;

struct file_in {
    int fd;
    unsigned char *buf;
    size_t cap;
    uint64_t crc;     /* of every byte consumed before the window's start */
    off_t size, done; /* file size, bytes read so far */
};

static int file_refill(struct rdb_in *in, size_t need) {
    struct file_in *f = in->ctx;
    /* The consumed part goes into the checksum before it leaves. */
    f->crc = crc64(f->crc, in->p, in->pos);
    size_t left = in->len - in->pos;
    if (need > (size_t)(f->size - f->done) + left) return rdb_fail(in, "Unexpected EOF reading RDB file");
    size_t want = need > 1024 * 1024 ? need : 1024 * 1024;
    if (want + left > f->cap) {
        unsigned char *nb = hk_malloc(want + left);
        memcpy(nb, in->p + in->pos, left);
        hk_free(f->buf);
        f->buf = nb;
        f->cap = want + left;
    } else {
        memmove(f->buf, in->p + in->pos, left);
    }
    in->total += in->pos;
    in->p = f->buf;
    in->pos = 0;
    in->len = left;
    while (in->len < need || (in->len < f->cap && f->done < f->size)) {
        ssize_t r = read(f->fd, f->buf + in->len, f->cap - in->len);
        if (r < 0) {
            if (errno == EINTR) continue;
            return rdb_fail(in, "Error reading the RDB file: %s", strerror(errno));
        }
        if (r == 0) break;
        in->len += (size_t)r;
        f->done += r;
        atomic_fetch_add_explicit(&load_progress.loaded_bytes, r, memory_order_relaxed);
    }
    if (in->len < need) return rdb_fail(in, "Unexpected EOF reading RDB file");
    return 0;
}

int rdb_in_fd(struct rdb_in *in, int fd) {
    struct stat st;
    if (fstat(fd, &st) < 0) return -1;
    struct file_in *f = hk_calloc(1, sizeof(*f));
    f->fd = fd;
    off_t here = lseek(fd, 0, SEEK_CUR);
    f->size = st.st_size - (here > 0 ? here : 0);
    memset(in, 0, sizeof(*in));
    in->refill = file_refill;
    in->ctx = f;
    in->p = (const unsigned char *)"";
    return 0;
}

uint64_t rdb_in_fd_crc(struct rdb_in *in) {
    struct file_in *f = in->ctx;
    return crc64(f->crc, in->p, in->pos);
}

void rdb_in_fd_close(struct rdb_in *in) {
    struct file_in *f = in->ctx;
    if (!f) return;
    hk_free(f->buf);
    hk_free(f);
    in->ctx = NULL;
}

/* Link a loaded entry, replacing what the key held. Its access clock
 * comes from the file's IDLE or FREQ record when the policy of the moment
 * keeps that kind (-1: none), as Redis's objectSetLRUOrLFU does. */
static void link_loaded(int db, struct kv *e, int locked, long long idle_s, int freq, long long now_ms) {
    struct keyref k;
    keyref_init(&k, db, kv_key(e), kv_keylen(e));
    if (!locked) shard_lock(k.shard);
    e = db_put(&k, e, KEV_RESTORE);
    kv_clock_restore(e, now_ms, idle_s, freq);
    if (!locked) shard_unlock(k.shard);
}

int rdb_load_stream_ex(struct rdb_in *in, struct rdb_load_result *res, int locked) {
    memset(res, 0, sizeof(*res));
    unsigned char magic[9];
    if (rdb_get_raw(in, magic, 9) < 0) return rdb_fail(in, "Short read or OOM loading DB. Unrecoverable error");
    if (memcmp(magic, "REDIS", 5) != 0) return rdb_fail(in, "Wrong signature trying to load DB from file");
    int ver = 0;
    for (int i = 5; i < 9; i++) {
        if (magic[i] < '0' || magic[i] > '9') return rdb_fail(in, "Wrong signature trying to load DB from file");
        ver = ver * 10 + (magic[i] - '0');
    }
    if (ver < 1 || ver > RDB_VERSION_MAX) return rdb_fail(in, "Can't handle RDB format version %d", ver);
    in->version = ver;
    res->version = ver;
    int db = 0;
    long long expire = -1, idle_s = -1;
    int freq = -1;
    long long now = hk_mstime();
    in->now_ms = now;
    struct db_sink *saved_sink = db_sink;
    db_sink = NULL;
    int rc = -1;
    for (;;) {
        unsigned char t;
        if (rdb_get_byte(in, &t) < 0) goto out;
        if (t == RDB_OPCODE_EXPIRETIME) {
            unsigned char b[4];
            if (rdb_get_raw(in, b, 4) < 0) goto out;
            int32_t v = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
            expire = (long long)v * 1000;
            continue;
        }
        if (t == RDB_OPCODE_EXPIRETIME_MS) {
            uint64_t v;
            if (rdb_get_u64le(in, &v) < 0) goto out;
            expire = (long long)v;
            continue;
        }
        if (t == RDB_OPCODE_FREQ) {
            unsigned char f;
            if (rdb_get_byte(in, &f) < 0) goto out;
            freq = f;
            continue;
        }
        if (t == RDB_OPCODE_IDLE) {
            uint64_t v;
            if (rdb_get_len(in, &v, NULL) < 0) goto out;
            idle_s = v > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)v;
            continue;
        }
        if (t == RDB_OPCODE_EOF) break;
        if (t == RDB_OPCODE_SELECTDB) {
            uint64_t v;
            if (rdb_get_len(in, &v, NULL) < 0) goto out;
            if (v >= (uint64_t)ks.ndb) {
                rdb_fail(in, "FATAL: Data file was created with a Redis server configured to handle more than %d "
                             "databases. Exiting\n",
                         ks.ndb);
                goto out;
            }
            db = (int)v;
            continue;
        }
        if (t == RDB_OPCODE_RESIZEDB) {
            uint64_t a, b;
            if (rdb_get_len(in, &a, NULL) < 0 || rdb_get_len(in, &b, NULL) < 0) goto out;
            continue;
        }
        if (t == RDB_OPCODE_SLOT_INFO) {
            uint64_t a;
            for (int i = 0; i < 3; i++)
                if (rdb_get_len(in, &a, NULL) < 0) goto out;
            continue;
        }
        if (t == RDB_OPCODE_AUX) {
            size_t kl, vl;
            char *k = rdb_get_string(in, &kl);
            if (!k) goto out;
            char *v = rdb_get_string(in, &vl);
            if (!v) {
                hk_free(k);
                goto out;
            }
            if (!strcmp(k, "aof-base")) res->aof_base = atoi(v) != 0;
            else if (!strcmp(k, "repl-id") && vl == 40) memcpy(res->repl_id, v, 41);
            else if (!strcmp(k, "repl-offset")) res->repl_offset = strtoll(v, NULL, 10);
            else if (!strcmp(k, "redis-ver")) hk_log(LL_NOTICE, "Loading RDB produced by version %s", v);
            hk_free(k);
            hk_free(v);
            continue;
        }
        if (t == RDB_OPCODE_MODULE_AUX) {
            uint64_t id;
            if (rdb_get_len(in, &id, NULL) < 0) goto out;
            char name[10];
            int encver;
            rdb_module_name(id, name, &encver);
            rdb_fail(in, "The RDB file contains AUX module data I can't load: no matching module '%s'", name);
            goto out;
        }
        if (t == RDB_OPCODE_FUNCTION_PRE_GA) {
            rdb_fail(in, "Pre-release function format not supported.");
            goto out;
        }
        if (t == RDB_OPCODE_FUNCTION2) {
            size_t cl;
            char *code = rdb_get_string(in, &cl);
            if (!code) goto out;
            char err[512];
            int frc = fn_load_rdb(code, cl, err, sizeof(err));
            hk_free(code);
            if (frc < 0) {
                rdb_fail(in, "Failed loading library: %s", err);
                goto out;
            }
            continue;
        }
        if (!rdb_is_value_type(t)) {
            rdb_fail(in, "Unknown RDB value type %d", t);
            goto out;
        }
        size_t kl;
        char *key = rdb_get_string(in, &kl);
        if (!key) goto out;
        struct kv *e = rdb_load_value(in, t, key, kl, expire);
        if (!e && in->empty) {
            /* Redis skips an empty aggregate in a file, with a warning. */
            hk_log(LL_WARNING, "rdbLoadObject skipping empty key: %.*s", (int)kl, key);
            in->empty = 0;
            in->err[0] = '\0';
            hk_free(key);
            expire = idle_s = -1;
            freq = -1;
            continue;
        }
        hk_free(key);
        if (!e) goto out;
        if (expire >= 0 && expire <= now) {
            kv_free(e);
            res->keys_expired++;
        } else {
            link_loaded(db, e, locked, idle_s, freq, now);
            res->keys_loaded++;
        }
        expire = idle_s = -1;
        freq = -1;
    }
    /* The checksum: version 5 on; zero means the writer did not compute one. */
    if (ver >= 5) {
        uint64_t want = in->refill == file_refill ? rdb_in_fd_crc(in) : crc64(0, in->p, in->pos);
        uint64_t got;
        if (rdb_get_u64le(in, &got) < 0) goto out;
        if (got != 0 && got != want && CFG(rdbchecksum)) {
            rdb_fail(in, "Wrong RDB checksum expected: (%llx) got: (%llx). Aborting now.", (unsigned long long)got,
                     (unsigned long long)want);
            goto out;
        }
    }
    rc = 0;
out:
    db_sink = saved_sink;
    return rc;
}

int rdb_load_stream(struct rdb_in *in, struct rdb_load_result *res) { return rdb_load_stream_ex(in, res, 0); }

int rdb_load_file_ex(const char *path, struct rdb_load_result *res, int locked, char *err, size_t errlen) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 1;
        snprintf(err, errlen, "Fatal error loading the DB, check server logs. Exiting. (%s)", strerror(errno));
        return -1;
    }
    struct rdb_in in;
    rdb_in_fd(&in, fd);
    int rc = rdb_load_stream_ex(&in, res, locked);
    if (rc < 0) {
        snprintf(err, errlen, "%s (at offset %llu)", in.err, (unsigned long long)(in.total + in.pos));
    }
    rdb_in_fd_close(&in);
    close(fd);
    return rc;
}

int rdb_load_file(const char *path, struct rdb_load_result *res, char *err, size_t errlen) {
    return rdb_load_file_ex(path, res, 0, err, errlen);
}
