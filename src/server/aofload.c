/* aofload.c - replaying one AOF file at start-up: an RDB (a base file, or
 * the preamble of a Redis 6 AOF) through rdb_load_stream, then commands in
 * RESP through the normal command path (exec_command) on a context with
 * no connection. It does not know the manifest (aof.c reads it and calls
 * aof_load_file per file, in order).
 *
 * Commands run as a replayed stream (CTX_REPLAY: nothing expires by time,
 * nothing is propagated) and never block. MULTI ... EXEC is gathered and
 * run when EXEC arrives, so a transaction cut short at the end of the file
 * is dropped whole, as Redis does. A file that ends inside a command is
 * truncated back to the last whole one when aof-load-truncated allows it;
 * anything else malformed fails the load with the file and the offset. */
#include "../core/alloc.h"
#include "../core/util.h"
#include "../types/rdb.h"
#include "aof.h"
#include "config.h"
#include "server.h"
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Redis reads lines with a buffer of this size (annotations included). */
#define AOF_LINE_MAX 1024
#define READ_CHUNK (256 * 1024)

struct lreader {
    int fd;
    char *buf;
    size_t cap, pos, len; /* the window: buf[pos..len) is unread */
    long long off;        /* file offset of buf[0] */
    int eof;
    int rerr; /* errno of a failed read */
};

/* Make `need` unread bytes available. 1, 0 at the end of the file first,
 * -1 on a read error. */
static int lr_fill(struct lreader *r, size_t need) {
    if (r->len - r->pos >= need) return 1;
    if (r->pos) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->off += (long long)r->pos;
        r->len -= r->pos;
        r->pos = 0;
    }
    if (need > r->cap) {
        size_t cap = r->cap;
        while (cap < need) cap *= 2;
        r->buf = hk_realloc(r->buf, cap);
        r->cap = cap;
    }
    while (r->len < need && !r->eof) {
        size_t want = r->cap - r->len;
        ssize_t n = read(r->fd, r->buf + r->len, want);
        if (n < 0) {
            if (errno == EINTR) continue;
            r->rerr = errno;
            return -1;
        }
        if (n == 0) {
            r->eof = 1;
            break;
        }
        r->len += (size_t)n;
        atomic_fetch_add_explicit(&load_progress.loaded_bytes, n, memory_order_relaxed);
    }
    return r->len - r->pos >= need ? 1 : 0;
}

static long long lr_tell(const struct lreader *r) { return r->off + (long long)r->pos; }

/* The next line without its CRLF (NUL-terminated in line). 1, 0 at the
 * end of the file (*partial says whether a line had begun), -1 read
 * error, -2 too long. */
static int lr_line(struct lreader *r, char *line, size_t size, int *partial) {
    *partial = 0;
    for (size_t scanned = 0;;) {
        char *nl = memchr(r->buf + r->pos + scanned, '\n', r->len - r->pos - scanned);
        if (nl) {
            size_t n = (size_t)(nl - (r->buf + r->pos));
            if (n >= size) return -2;
            memcpy(line, r->buf + r->pos, n);
            if (n && line[n - 1] == '\r') n--;
            line[n] = 0;
            r->pos += (size_t)(nl - (r->buf + r->pos)) + 1;
            return 1;
        }
        scanned = r->len - r->pos;
        if (scanned >= size) return -2;
        int f = lr_fill(r, scanned + 1);
        if (f < 0) return -1;
        if (f == 0) {
            *partial = r->len > r->pos;
            if (*partial) {
                size_t n = r->len - r->pos;
                memcpy(line, r->buf + r->pos, n);
                line[n] = 0;
            }
            return 0;
        }
    }
}

/* A command read from the file: its arguments in one arena. */
struct lcmd {
    char *arena;
    size_t alen, acap;
    size_t *off, *len;
    int argc, cap;
    hk_slice *argv;
    int argv_cap;
};

static void lcmd_free(struct lcmd *c) {
    hk_free(c->arena);
    hk_free(c->off);
    hk_free(c->len);
    hk_free(c->argv);
    memset(c, 0, sizeof(*c));
}

static hk_slice *lcmd_argv(struct lcmd *c) {
    if (c->argc > c->argv_cap) {
        c->argv_cap = c->argc;
        c->argv = hk_realloc(c->argv, (size_t)c->argv_cap * sizeof(hk_slice));
    }
    for (int i = 0; i < c->argc; i++) {
        c->argv[i].ptr = c->arena + c->off[i];
        c->argv[i].len = c->len[i];
    }
    return c->argv;
}

/* A queued MULTI command: a private copy. */
struct qcmd {
    hk_slice *argv;
    int argc;
    char *mem;
};

enum { P_OK, P_EOF, P_TRUNC, P_FMT, P_RERR, P_SKIP };

static int parse_command(struct lreader *r, struct lcmd *c) {
    char line[AOF_LINE_MAX + 1];
    int partial;
    int l = lr_line(r, line, sizeof(line), &partial);
    if (l == -1) return P_RERR;
    if (l == -2) return P_FMT;
    if (l == 0) return partial && line[0] != '#' ? P_TRUNC : P_EOF;
    if (line[0] == '#') return P_SKIP;
    if (line[0] != '*') return P_FMT;
    if (line[1] == 0) return P_TRUNC;
    char *end;
    long long argc = strtoll(line + 1, &end, 10);
    if (argc < 1 || argc > 1024 * 1024 * 1024LL) return P_FMT;
    c->argc = 0;
    c->alen = 0;
    if (argc > c->cap) {
        c->cap = (int)argc;
        c->off = hk_realloc(c->off, (size_t)c->cap * sizeof(size_t));
        c->len = hk_realloc(c->len, (size_t)c->cap * sizeof(size_t));
    }
    for (long long j = 0; j < argc; j++) {
        l = lr_line(r, line, sizeof(line), &partial);
        if (l == -1) return P_RERR;
        if (l == -2) return P_FMT;
        if (l == 0) return P_TRUNC;
        if (line[0] != '$') return P_FMT;
        long long len = strtoll(line + 1, &end, 10);
        if (end == line + 1 || len < 0) return P_FMT;
        int f = lr_fill(r, (size_t)len + 2);
        if (f < 0) return P_RERR;
        if (f == 0) return P_TRUNC;
        const char *p = r->buf + r->pos;
        if (p[len] != '\r' || p[len + 1] != '\n') return P_FMT;
        if (c->alen + (size_t)len + 1 > c->acap) {
            size_t cap = c->acap ? c->acap : 4096;
            while (cap < c->alen + (size_t)len + 1) cap *= 2;
            c->arena = hk_realloc(c->arena, cap);
            c->acap = cap;
        }
        memcpy(c->arena + c->alen, p, (size_t)len);
        c->off[j] = c->alen;
        c->len[j] = (size_t)len;
        c->alen += (size_t)len;
        c->arena[c->alen++] = 0;
        r->pos += (size_t)len + 2;
        c->argc = (int)j + 1;
    }
    return P_OK;
}

static int name_is(const hk_slice *a, const char *s) {
    size_t n = strlen(s);
    return a->len == n && strncasecmp(a->ptr, s, n) == 0;
}

/* Run one command on the loading context; its reply is discarded. 0, or
 * -1 when it is unknown, -2 when its arity is wrong. */
static int run_one(struct cmd_ctx *c, struct outbuf *ob, hk_slice *argv, int argc) {
    c->argv = argv;
    c->argc = argc;
    c->now_ms = hk_mstime();
    c->errors = 0;
    c->flags = CTX_REPLAY | CTX_DENY_BLOCKING;
    int adm = exec_admit(c, ADMIT_REPLAY, ADM_AUTHED | ADM_LOCAL, 0);
    int rc = 0;
    if (adm != ADMIT_OK) rc = c->cmd ? -2 : -1;
    else exec_command(c);
    if (ob->pending) ob_consume(ob, ob->pending);
    return rc;
}

static void queue_free(struct qcmd *q, int n) {
    for (int i = 0; i < n; i++) {
        hk_free(q[i].argv);
        hk_free(q[i].mem);
    }
}

int aof_load_file(const char *dir, const char *name, int last, char *err, size_t errlen) {
    (void)last;
    char path[AOF_NAME_MAX * 2];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int en = errno;
        struct stat st;
        if (stat(path, &st) == 0 || errno != ENOENT) {
            hk_log(LL_WARNING, "Fatal error: can't open the append log file %s for reading: %s", name, strerror(en));
            snprintf(err, errlen, "can't open the append log file %s for reading: %s", name, strerror(en));
            return AOF_LOAD_OPEN_ERR;
        }
        hk_log(LL_WARNING, "The append log file %s doesn't exist: %s", name, strerror(en));
        snprintf(err, errlen, "the append log file %s doesn't exist", name);
        return AOF_LOAD_NOT_EXIST;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size == 0) {
        close(fd);
        return AOF_LOAD_EMPTY;
    }
    char *fname = cfg_get_string(&cfg.appendfilename);
    int old_style = strcmp(name, fname) == 0;
    hk_free(fname);

    int ret = AOF_LOAD_OK;
    long long valid_up_to = 0, valid_before_multi = 0;
    char sig[5];
    ssize_t sn = pread(fd, sig, 5, 0);
    if (sn == 5 && memcmp(sig, "REDIS", 5) == 0) {
        hk_log(LL_NOTICE, old_style ? "Reading RDB preamble from AOF file..." : "Reading RDB base file on AOF loading...");
        struct rdb_in in;
        rdb_in_fd(&in, fd);
        struct rdb_load_result res;
        int rc = rdb_load_stream(&in, &res);
        long long used = (long long)(in.total + in.pos);
        if (rc < 0) {
            if (old_style)
                hk_log(LL_WARNING, "Error reading the RDB preamble of the AOF file %s, AOF loading aborted", name);
            else
                hk_log(LL_WARNING, "Error reading the RDB base file %s, AOF loading aborted", name);
            hk_log(LL_WARNING, "%s (at offset %lld)", in.err, used);
            snprintf(err, errlen, "%s reading %s at offset %lld", in.err, name, used);
            rdb_in_fd_close(&in);
            close(fd);
            return AOF_LOAD_FAILED;
        }
        rdb_in_fd_close(&in);
        atomic_store(&load_progress.keys_loaded, res.keys_loaded);
        atomic_store(&load_progress.keys_expired, res.keys_expired);
        if (lseek(fd, used, SEEK_SET) < 0) {
            snprintf(err, errlen, "can't seek in %s: %s", name, strerror(errno));
            close(fd);
            return AOF_LOAD_FAILED;
        }
        valid_up_to = used;
        if (old_style) hk_log(LL_NOTICE, "Reading the remaining AOF tail...");
    }

    struct lreader r = {fd, hk_malloc(READ_CHUNK), READ_CHUNK, 0, 0, valid_up_to, 0, 0};
    struct lcmd lc = {0};
    struct outbuf ob;
    ob_init(&ob);
    struct cmd_ctx c;
    ctx_init(&c);
    c.out = &ob;
    c.db = 0;
    struct qcmd *queue = NULL;
    int nq = 0, qcap = 0, in_multi = 0;
    int p;
    const char *why = NULL;
    for (;;) {
        p = parse_command(&r, &lc);
        if (p == P_SKIP) continue;
        if (p != P_OK) break;
        hk_slice *argv = lcmd_argv(&lc);
        if (name_is(&argv[0], "multi")) {
            if (!in_multi) {
                in_multi = 1;
                valid_before_multi = valid_up_to;
            }
        } else if (in_multi && name_is(&argv[0], "exec")) {
            for (int i = 0; i < nq && !why; i++) {
                int rc = run_one(&c, &ob, queue[i].argv, queue[i].argc);
                if (rc == -1) why = "unknown";
                else if (rc == -2) why = "arity";
                if (why) snprintf(err, errlen, "%.*s", (int)queue[i].argv[0].len, queue[i].argv[0].ptr);
            }
            queue_free(queue, nq);
            nq = 0;
            in_multi = 0;
        } else if (in_multi && name_is(&argv[0], "discard")) {
            queue_free(queue, nq);
            nq = 0;
            in_multi = 0;
        } else if (in_multi) {
            if (!exec_lookup(NULL, argv[0].ptr, argv[0].len)) {
                why = "unknown";
                snprintf(err, errlen, "%.*s", (int)argv[0].len, argv[0].ptr);
            } else {
                if (nq == qcap) {
                    qcap = qcap ? qcap * 2 : 16;
                    queue = hk_realloc(queue, (size_t)qcap * sizeof(*queue));
                }
                struct qcmd *q = &queue[nq++];
                q->argc = lc.argc;
                q->mem = hk_malloc(lc.alen ? lc.alen : 1);
                memcpy(q->mem, lc.arena, lc.alen);
                q->argv = hk_malloc((size_t)lc.argc * sizeof(hk_slice));
                for (int i = 0; i < lc.argc; i++) {
                    q->argv[i].ptr = q->mem + lc.off[i];
                    q->argv[i].len = lc.len[i];
                }
            }
        } else {
            int rc = run_one(&c, &ob, argv, lc.argc);
            if (rc == -1) why = "unknown";
            else if (rc == -2) why = "arity";
            if (why) snprintf(err, errlen, "%.*s", (int)argv[0].len, argv[0].ptr);
        }
        if (why) break;
        valid_up_to = lr_tell(&r);
    }
    if (why) {
        char cmdname[128];
        snprintf(cmdname, sizeof(cmdname), "%s", err);
        if (!strcmp(why, "unknown")) {
            hk_log(LL_WARNING, "Unknown command '%s' reading the append only file %s", cmdname, name);
            snprintf(err, errlen, "unknown command '%s' in the append only file %s at offset %lld", cmdname, name,
                     valid_up_to);
        } else {
            hk_log(LL_WARNING, "Wrong number of arguments for '%s' reading the append only file %s", cmdname, name);
            snprintf(err, errlen, "wrong number of arguments for '%s' in the append only file %s at offset %lld",
                     cmdname, name, valid_up_to);
        }
        ret = AOF_LOAD_FAILED;
        goto done;
    }
    if (p == P_RERR) {
        hk_log(LL_WARNING, "Unrecoverable error reading the append only file %s: %s", name, strerror(r.rerr));
        snprintf(err, errlen, "error reading the append only file %s at offset %lld: %s", name, lr_tell(&r),
                 strerror(r.rerr));
        ret = AOF_LOAD_FAILED;
        goto done;
    }
    if (p == P_FMT) {
        hk_log(LL_WARNING,
               "Bad file format reading the append only file %s: make a backup of your AOF file, then use "
               "./redis-check-aof --fix <filename.manifest>",
               name);
        hk_log(LL_WARNING, "The last well-formed command of %s ends at offset %lld", name, valid_up_to);
        snprintf(err, errlen, "bad file format reading the append only file %s after offset %lld", name, valid_up_to);
        ret = AOF_LOAD_FAILED;
        goto done;
    }
    if (p == P_EOF && in_multi) {
        hk_log(LL_WARNING, "Revert incomplete MULTI/EXEC transaction in AOF file %s", name);
        valid_up_to = valid_before_multi;
        p = P_TRUNC;
    }
    if (p == P_TRUNC) {
        if (CFG(aof_load_truncated)) {
            hk_log(LL_WARNING, "!!! Warning: short read while loading the AOF file %s!!!", name);
            hk_log(LL_WARNING, "!!! Truncating the AOF %s at offset %llu !!!", name, (unsigned long long)valid_up_to);
            if (truncate(path, valid_up_to) == -1) {
                hk_log(LL_WARNING, "Error truncating the AOF file %s: %s", name, strerror(errno));
            } else {
                hk_log(LL_WARNING, "AOF %s loaded anyway because aof-load-truncated is enabled", name);
                ret = AOF_LOAD_TRUNCATED;
                goto done;
            }
        }
        hk_log(LL_WARNING,
               "Unexpected end of file reading the append only file %s. You can: 1) Make a backup of your AOF file, "
               "then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the "
               "'aof-load-truncated' configuration option to yes and restart the server.",
               name);
        snprintf(err, errlen, "unexpected end of file reading the append only file %s after offset %lld", name,
                 valid_up_to);
        ret = AOF_LOAD_FAILED;
    }
done:
    queue_free(queue, nq);
    hk_free(queue);
    lcmd_free(&lc);
    hk_free(r.buf);
    ob_free(&ob);
    ctx_destroy(&c);
    close(fd);
    return ret;
}
