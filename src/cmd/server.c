/* server.c - server administration commands: FLUSHALL, FLUSHDB, DBSIZE,
 * TIME, LASTSAVE, SHUTDOWN, MEMORY and DEBUG, plus the small helpers the other
 * administration files share (HELP replies, a text buffer). INFO, CONFIG
 * and COMMAND live in info.c, config_cmd.c and command.c. Nothing here
 * persists data: there is no RDB/AOF yet, and SHUTDOWN SAVE says so. */
#include "../core/alloc.h"
#include "../net/net.h"
#include "../server/config.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void *lazyfree_main(void *arg) {
    ks_flushed_free(arg);
    return NULL;
}

/* Free detached tables now, or on a background thread for ASYNC. */
static void free_flushed(struct flushed *f, int async) {
    if (async) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &a, lazyfree_main, f);
        pthread_attr_destroy(&a);
        if (rc == 0) return;
    }
    ks_flushed_free(f);
}

/* Parse the optional ASYNC|SYNC argument; -1 after replying an error. */
static int flush_mode(struct client *c) {
    if (c->argc == 1) return 0;
    if (c->argc == 2 && arg_is(&c->argv[1], "ASYNC")) return 1;
    if (c->argc == 2 && arg_is(&c->argv[1], "SYNC")) return 0;
    reply_error(c, ERR_SYNTAX);
    return -1;
}

void cmd_flushall(struct client *c) {
    int async = flush_mode(c);
    if (async < 0) return;
    free_flushed(ks_flush(-1), async);
    stat_add(&c->w->sstats.dirty, 1);
    reply_ok(c);
}

void cmd_flushdb(struct client *c) {
    int async = flush_mode(c);
    if (async < 0) return;
    free_flushed(ks_flush(c->db), async);
    stat_add(&c->w->sstats.dirty, 1);
    reply_ok(c);
}

void cmd_dbsize(struct client *c) { reply_int(c, (long long)ks_dbsize(c->db)); }

/* ---- shared helpers ------------------------------------------------------ */

void reply_help(struct client *c, const char *cmd, const char *const *lines) {
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

void cmd_time(struct client *c) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    reply_array(c, 2);
    reply_bulk_ll(c, (long long)tv.tv_sec);
    reply_bulk_ll(c, (long long)tv.tv_usec);
}

void cmd_lastsave(struct client *c) { reply_int(c, atomic_load(&server.lastsave)); }

/* ---- SHUTDOWN ------------------------------------------------------------ */

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] | SHUTDOWN ABORT. With no
 * persistence there is nothing to save by default and no replica to wait
 * for, so a shutdown is immediate and ABORT never finds one in progress.
 * An explicit SAVE cannot be honoured: it fails as a failed save does in
 * Redis, unless FORCE says to exit anyway. On success nothing is replied:
 * the main thread is woken with a process-directed SIGTERM (raise() would
 * target this worker thread, which blocks every signal) and the workers
 * close every connection on their way out. */
void cmd_shutdown(struct client *c) {
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
    if (save && !force) {
        hk_log(LL_WARNING, "SHUTDOWN SAVE: this server has no persistence yet, can't save the DB; not exiting.");
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
void cmd_memory_usage(struct client *c) {
    long long samples = 5;
    for (int i = 3; i < c->argc; i++) {
        if (arg_is(&c->argv[i], "samples") && i + 1 < c->argc) {
            if (!arg_ll_or_reply(c, &c->argv[i + 1], &samples, NULL)) return;
            if (samples < 0) {
                reply_error(c, ERR_SYNTAX);
                return;
            }
            if (samples == 0) samples = LLONG_MAX;
            i++;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    struct keyref k;
    key_of(c, 2, &k);
    struct kv *e = lookup_write(c, &k); /* no keyspace hit/miss, as in Redis */
    if (!e) {
        reply_null(c);
        return;
    }
    reply_int(c, (long long)kv_usage(e, (size_t)samples));
}

void cmd_memory_help(struct client *c) {
    static const char *const lines[] = {
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        NULL,
    };
    reply_help(c, "MEMORY", lines);
}

/* ---- DEBUG ----------------------------------------------------------------- */

/* DEBUG is protected as in Redis: enable-debug-command no (the default)
 * refuses it, local allows loopback and unix socket clients, yes allows all. */
static int debug_allowed(struct client *c) {
    long long mode = CFG(enable_debug_command);
    if (mode == CFG_DEBUG_YES) return 1;
    if (mode != CFG_DEBUG_LOCAL) return 0;
    if (c->flags & CLIENT_UNIX_SOCKET) return 1;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    return getpeername(c->fd, (struct sockaddr *)&ss, &sl) == 0 && net_is_loopback_sockaddr(&ss);
}

/* DEBUG SLEEP seconds | DEBUG HELP. SLEEP stalls the calling worker (and
 * so its clients) without holding any shard lock; like Redis it reads the
 * number leniently (what does not parse is 0). */
void cmd_debug(struct client *c) {
    if (!debug_allowed(c)) {
        reply_error(c, "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you "
                       "can run it from a local connection, otherwise you need to set this option in the "
                       "configuration file, and then restart the server.");
        return;
    }
    if (c->argc == 2 && arg_is(&c->argv[1], "help")) {
        static const char *const lines[] = {
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
            NULL,
        };
        reply_help(c, "DEBUG", lines);
        return;
    }
    if (c->argc == 3 && arg_is(&c->argv[1], "sleep")) {
        char buf[64];
        size_t n = c->argv[2].len < sizeof(buf) - 1 ? c->argv[2].len : sizeof(buf) - 1;
        memcpy(buf, c->argv[2].ptr, n);
        buf[n] = '\0';
        double secs = strtod(buf, NULL);
        if (secs > 1e9) secs = 1e9; /* keeps the conversion to time_t defined */
        if (secs > 0) {
            struct timespec ts;
            ts.tv_sec = (time_t)secs;
            ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
            while (nanosleep(&ts, &ts) != 0) {
            }
        }
        reply_ok(c);
        return;
    }
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try DEBUG HELP.",
                 (int)(c->argv[1].len > 128 ? 128 : c->argv[1].len), c->argv[1].ptr);
}
