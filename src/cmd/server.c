/* server.c - server administration commands: FLUSHALL, FLUSHDB, DBSIZE,
 * TIME, LASTSAVE, SAVE, BGSAVE, SHUTDOWN and MEMORY, plus the small helpers
 * the other administration files share (HELP replies, a text buffer).
 * INFO, CONFIG, COMMAND and DEBUG live in info.c, config_cmd.c, command.c
 * and debug.c; snapshots themselves in src/server/snapshot.c. */
#include "../core/alloc.h"
#include "../net/net.h"
#include "../server/config.h"
#include "../server/lazyfree.h"
#include "../server/memstats.h"
#include "../server/snapshot.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* Parse the optional ASYNC|SYNC argument: 1 for ASYNC, 0 for SYNC, the
 * lazyfree-lazy-user-flush setting without one; -1 after replying an
 * error. */
static int flush_mode(struct cmd_ctx *c) {
    if (c->argc == 1) return CFG(lazyfree_lazy_user_flush) != 0;
    if (c->argc == 2 && arg_is(&c->argv[1], "ASYNC")) return 1;
    if (c->argc == 2 && arg_is(&c->argv[1], "SYNC")) return 0;
    reply_error(c, ERR_SYNTAX);
    return -1;
}

static void free_sync(void *f) { ks_flushed_free(f); }
static void free_async(void *f) { lazyfree_flushed(f); }

/* A SYNC flush of a connection, run as a waited-for ASYNC one. */
struct flush_wait {
    struct flushed *f;
    struct worker *w;
    uint64_t client_id;
};

/* On the client's worker, once the lazy free thread freed the tables: the
 * reply, and the client's next requests. It may have gone meanwhile. */
static void flush_wait_done(struct worker *w, void *arg) {
    struct client *c = worker_find_client(w, (uint64_t)(uintptr_t)arg);
    if (!c || !(c->flags & CLIENT_WAIT_GATHER)) return;
    c->flags &= ~CLIENT_WAIT_GATHER;
    reply_ok(&c->ctx);
    if (client_resume(c) < 0) client_close(c);
}

static void free_async_then_answer(void *arg) {
    struct flush_wait *fw = arg;
    lazyfree_flushed(fw->f);
    lazyfree_notify(fw->w, flush_wait_done, (void *)(uintptr_t)fw->client_id);
    hk_free(fw);
}

/* FLUSHALL and FLUSHDB run with every shard locked (CMD_ALL_SHARDS): the
 * tables are detached at once and freed after the locks are released, by
 * the lazy free thread (lazyfree.h). ASYNC answers at once. SYNC from a
 * connection is Redis 7.4's blocking ASYNC flush: the connection waits for
 * the free to finish (its later requests too) while its worker goes on
 * serving everyone else, and the keys count in lazyfreed_objects. Inside
 * EXEC or a script, or replayed, SYNC frees here, after the unlock. */
static void flush_generic(struct cmd_ctx *c, int db) {
    int async = flush_mode(c);
    if (async < 0) return;
    struct flushed *f = ks_flush(db);
    if (async) {
        exec_after_unlock(c, free_async, f);
    } else if (c->cl && c == &c->cl->ctx && !(c->flags & (CTX_NESTED | CTX_REPLAY))) {
        struct flush_wait *fw = hk_malloc(sizeof(*fw));
        fw->f = f;
        fw->w = c->w;
        fw->client_id = c->cl->id;
        exec_after_unlock(c, free_async_then_answer, fw);
        c->cl->flags |= CLIENT_WAIT_GATHER;
        return;
    } else {
        exec_after_unlock(c, free_sync, f);
    }
    reply_ok(c);
}

/* FLUSHALL with save points stops a background save and saves the empty
 * dataset, as Redis's does; here once the shards are free (the cut needs
 * them), on this thread. */
static void flushall_save(void *arg) {
    (void)arg;
    if (snapshot_kind() == SNAP_KIND_RDB) snapshot_abort();
    char path[1024], err[512];
    snapshot_path(path, sizeof(path));
    struct snap_opts o = {.path = path};
    if (snapshot_run(&o, err, sizeof(err)) < 0) hk_log(LL_WARNING, "Failed saving the DB: %s", err);
}

void cmd_flushall(struct cmd_ctx *c) {
    flush_generic(c, -1);
    if (!(c->flags & CTX_REPLAY) && snapshot_save_points_set()) exec_after_unlock(c, flushall_save, NULL);
}
void cmd_flushdb(struct cmd_ctx *c) { flush_generic(c, c->db); }

void cmd_dbsize(struct cmd_ctx *c) {
    unsigned long long n;
    ks_counts(c->db, exec_holds_all(c), &n, NULL);
    reply_int(c, (long long)n);
}

/* ---- shared helpers ------------------------------------------------------ */

void reply_help(struct cmd_ctx *c, const char *cmd, const char *const *lines) {
    int n = 0;
    while (lines[n]) n++;
    reply_array(c, n + 3);
    char head[128];
    snprintf(head, sizeof(head), "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", cmd);
    reply_simple(c, head);
    for (int i = 0; i < n; i++) reply_simple(c, lines[i]);
    reply_simple(c, "HELP");
    reply_simple(c, "    Prints this help.");
}

void sb_cat(struct sbuf *b, const char *s, size_t len) {
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + len + 1) cap *= 2;
        b->p = hk_realloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, len);
    b->len += len;
    b->p[b->len] = '\0';
}

void sb_catf(struct sbuf *b, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof(tmp)) {
        sb_cat(b, tmp, (size_t)n);
        return;
    }
    char *big = hk_malloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_cat(b, big, (size_t)n);
    hk_free(big);
}

void sb_free(struct sbuf *b) {
    hk_free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ---- TIME, LASTSAVE ------------------------------------------------------ */

void cmd_time(struct cmd_ctx *c) {
    struct timeval tv;
    if (c->frozen_us) {
        tv.tv_sec = c->frozen_us / 1000000;
        tv.tv_usec = c->frozen_us % 1000000;
    } else {
        gettimeofday(&tv, NULL);
    }
    reply_array(c, 2);
    reply_bulk_ll(c, (long long)tv.tv_sec);
    reply_bulk_ll(c, (long long)tv.tv_usec);
}

void cmd_lastsave(struct cmd_ctx *c) { reply_int(c, atomic_load(&server.lastsave)); }

/* ---- SAVE, BGSAVE ------------------------------------------------------- */

/* SAVE: a snapshot written while this client waits; the other clients
 * keep being served (no fork, no stop: snapshot.h). NO_MULTI and NOSCRIPT,
 * so no shard is held here. A rewrite's snapshot in progress is waited
 * for, as Redis's SAVE runs beside an AOF child. */
void cmd_save(struct cmd_ctx *c) {
    if (snapshot_kind() == SNAP_KIND_RDB) {
        reply_error(c, "ERR Background save already in progress");
        return;
    }
    char path[1024], err[512];
    snapshot_path(path, sizeof(path));
    struct snap_opts o = {.path = path};
    int rc;
    while ((rc = snapshot_run(&o, err, sizeof(err))) < 0 && snapshot_kind() == SNAP_KIND_AOF) snapshot_wait();
    if (rc < 0) {
        hk_log(LL_WARNING, "Failed saving the DB: %s", err);
        reply_error(c, "ERR");
        return;
    }
    reply_ok(c);
}

/* BGSAVE [SCHEDULE]. The reply follows the cut, so a write acknowledged
 * after it is not in the file; inside EXEC (shards held) the cut is taken
 * once the transaction lets go of them. */
void cmd_bgsave(struct cmd_ctx *c) {
    int schedule = 0;
    if (c->argc > 1) {
        if (c->argc == 2 && arg_is(&c->argv[1], "schedule")) {
            schedule = 1;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    int kind = snapshot_kind();
    if (kind == SNAP_KIND_RDB) {
        reply_error(c, "ERR Background save already in progress");
        return;
    }
    if (kind != SNAP_KIND_NONE) {
        if (schedule) {
            atomic_store(&snap_status.scheduled, 1);
            reply_simple(c, "Background saving scheduled");
        } else {
            reply_error(c, "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE "
                           "in order to schedule a BGSAVE whenever possible.");
        }
        return;
    }
    /* Inside EXEC (or a script) the save waits for the end of it, as
     * Redis schedules it. */
    if (c->flags & CTX_NESTED) {
        atomic_store(&snap_status.scheduled, 1);
        reply_simple(c, "Background saving scheduled");
        return;
    }
    char err[512];
    if (snapshot_bgsave(1, err, sizeof(err)) < 0) {
        if (snapshot_kind() == SNAP_KIND_RDB) {
            reply_error(c, "ERR Background save already in progress");
            return;
        }
        hk_log(LL_WARNING, "Can't save in background: %s", err);
        reply_error(c, "ERR");
        return;
    }
    reply_simple(c, "Background saving started");
}

/* ---- SHUTDOWN ------------------------------------------------------------ */

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] | SHUTDOWN ABORT. With save points
 * configured (or SAVE), the dataset is saved first; a failed save keeps
 * the server running unless FORCE says to exit anyway. No replica to wait
 * for, so a shutdown is immediate and ABORT never finds one in progress.
 * On success nothing is replied: the main thread is woken with a
 * process-directed SIGTERM (raise() would target this worker thread, which
 * blocks every signal) and the workers close every connection on their
 * way out. */
void cmd_shutdown(struct cmd_ctx *c) {
    int nosave = 0, save = 0, now = 0, force = 0, abort_ = 0;
    for (int i = 1; i < c->argc; i++) {
        if (arg_is(&c->argv[i], "nosave")) nosave = 1;
        else if (arg_is(&c->argv[i], "save")) save = 1;
        else if (arg_is(&c->argv[i], "now")) now = 1;
        else if (arg_is(&c->argv[i], "force")) force = 1;
        else if (arg_is(&c->argv[i], "abort")) abort_ = 1;
        else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if ((nosave && save) || (abort_ && (nosave || save || now || force))) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (abort_) {
        reply_error(c, "ERR No shutdown in progress.");
        return;
    }
    (void)now;
    if (shutdown_prepare(save ? SHUTDOWN_SAVE : nosave ? SHUTDOWN_NOSAVE : SHUTDOWN_DEFAULT, force) < 0) {
        reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    atomic_store(&server.shutdown_asap, 1);
    kill(getpid(), SIGTERM);
}

/* ---- MEMORY -------------------------------------------------------------- */

/* MEMORY USAGE key [SAMPLES count]: bytes used by the entry and its value,
 * sampling up to count elements of aggregates (default 5, 0 = all). The
 * key's shard is locked by dispatch (key spec 2,2,1). */
void cmd_memory_usage(struct cmd_ctx *c) {
    long long samples = 5;
    struct argcur a;
    ac_init(&a, c, 3);
    while (ac_more(&a)) {
        if (ac_is_with(&a, "SAMPLES", 1) && ac_ll_min(&a, 0, &samples, HK_ERR_SYNTAX)) {
            if (samples == 0) samples = LLONG_MAX;
        } else {
            ac_fail(&a, HK_ERR_SYNTAX);
        }
    }
    if (!ac_ok(&a)) return;
    struct keyref k;
    key_of(c, 2, &k);
    struct kv *e = lookup_write(c, &k); /* no keyspace hit/miss, as in Redis */
    if (!e) {
        reply_null(c);
        return;
    }
    reply_int(c, (long long)kv_usage(e, (size_t)samples));
}

/* MEMORY STATS: Redis's map, in its order (src/server/memstats.h). */
struct stat_field {
    const char *name;
    int dbl;
    long long i;
    double d;
};

static void reply_fields(struct cmd_ctx *c, const struct stat_field *f, int n) {
    for (int i = 0; i < n; i++) {
        reply_bulk_cstr(c, f[i].name);
        if (f[i].dbl) reply_double(c, f[i].d);
        else reply_int(c, f[i].i);
    }
}

#define SF_INT(n, v) {n, 0, (long long)(v), 0}
#define SF_DBL(n, v) {n, 1, 0, (v)}

void cmd_memory_stats(struct cmd_ctx *c) {
    struct mem_overhead m;
    memstats_get(&m, exec_holds_all(c));
    const struct stat_field head[] = {
        SF_INT("peak.allocated", m.peak),         SF_INT("total.allocated", m.total),
        SF_INT("startup.allocated", m.startup),   SF_INT("replication.backlog", 0),
        SF_INT("clients.slaves", 0),              SF_INT("clients.normal", m.clients_normal),
        SF_INT("cluster.links", 0),               SF_INT("aof.buffer", m.aof_buffer),
        SF_INT("lua.caches", m.lua_caches),       SF_INT("functions.caches", m.functions_caches),
    };
    const struct stat_field tail[] = {
        SF_INT("overhead.total", m.overhead_total),
        SF_INT("keys.count", m.keys),
        SF_INT("keys.bytes-per-key", m.bytes_per_key),
        SF_INT("dataset.bytes", m.dataset),
        SF_DBL("dataset.percentage", m.dataset_perc),
        SF_DBL("peak.percentage", m.peak_perc),
        SF_INT("allocator.allocated", m.alloc_allocated),
        SF_INT("allocator.active", m.alloc_active),
        SF_INT("allocator.resident", m.alloc_resident),
        SF_DBL("allocator-fragmentation.ratio", m.alloc_frag),
        SF_INT("allocator-fragmentation.bytes", m.alloc_frag_bytes),
        SF_DBL("allocator-rss.ratio", m.alloc_rss),
        SF_INT("allocator-rss.bytes", m.alloc_rss_bytes),
        SF_DBL("rss-overhead.ratio", m.rss_extra),
        SF_INT("rss-overhead.bytes", m.rss_extra_bytes),
        SF_DBL("fragmentation", m.total_frag),
        SF_INT("fragmentation.bytes", m.total_frag_bytes),
    };
    int nhead = (int)(sizeof(head) / sizeof(head[0])), ntail = (int)(sizeof(tail) / sizeof(tail[0]));
    reply_map(c, nhead + m.ndbs + ntail);
    reply_fields(c, head, nhead);
    for (int i = 0; i < m.ndbs; i++) {
        char name[32];
        snprintf(name, sizeof(name), "db.%d", m.dbs[i].db);
        reply_bulk_cstr(c, name);
        reply_map(c, 2);
        const struct stat_field db[] = {SF_INT("overhead.hashtable.main", m.dbs[i].ht_main),
                                        SF_INT("overhead.hashtable.expires", m.dbs[i].ht_expires)};
        reply_fields(c, db, 2);
    }
    reply_fields(c, tail, ntail);
}

void cmd_memory_doctor(struct cmd_ctx *c) {
    char *s = memstats_doctor(exec_holds_all(c));
    reply_verbatim(c, s, strlen(s), "txt");
    hk_free(s);
}

static void malloc_line(const char *line, void *arg) { hk_buf_add(arg, line, strlen(line), 4096); }

void cmd_memory_malloc_stats(struct cmd_ctx *c) {
    struct hk_buf b = {0};
    if (!hk_allocator_report(malloc_line, &b)) {
        reply_bulk_cstr(c, "Stats not supported for the current allocator");
        return;
    }
    reply_verbatim(c, b.p ? b.p : "", b.len, "txt");
    hk_free(b.p);
}

void cmd_memory_purge(struct cmd_ctx *c) {
    hk_allocator_purge();
    reply_ok(c);
}

void cmd_memory_help(struct cmd_ctx *c) {
    static const char *const lines[] = {
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        NULL,
    };
    reply_help(c, "MEMORY", lines);
}
