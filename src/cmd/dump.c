/* dump.c - DUMP, RESTORE and MIGRATE: a key's value as Redis's DUMP
 * payload, a key rebuilt from one, and keys moved to another server with
 * them. This is not the RDB codec (src/types/rdb.h writes and reads the
 * value bodies) nor snapshot files (src/server/snapshot.c).
 *
 * A payload is the value's RDB type byte and body, then the RDB version it
 * was written with (2 bytes, little-endian) and a CRC-64 of everything
 * before (8 bytes, little-endian). DUMP writes version 10, what Redis 7.0
 * reads, unless the value needs a newer encoding (a hash with field TTLs:
 * version 12, as Redis 7.4+ writes it). RESTORE reads any version up to
 * RDB_VERSION_MAX, so payloads of Redis 7.0 to 8.x restore here and ours
 * restore into any Redis that knows the encodings used.
 *
 * MIGRATE talks to the target as a client: AUTH, SELECT when the cached
 * connection is on another database, one RESTORE per key, all written
 * before any reply is read, each wait bounded by the command's timeout.
 * The command's shards stay locked for the whole exchange, so the moved
 * keys are never seen on both servers or changed half-way, as with Redis,
 * whose whole server waits; here the worker running MIGRATE and clients
 * of those shards wait, others go on. A target that is this very server
 * (or one waiting on us) makes the exchange time out, as it does in Redis.
 * Connections are cached per worker thread and host:port, reused while
 * idle for at most 10 seconds (closed at the worker's next MIGRATE past
 * that: there is no timer here) and 64 at most per worker. */
#include "../core/alloc.h"
#include "../core/crc64.h"
#include "../proto/respw.h"
#include "../server/config.h"
#include "../types/rdb.h"
#include "cmds.h"
#include "cmdutil.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- payloads ------------------------------------------------------------ */

#define DUMP_FOOTER 10 /* 2 bytes of version, 8 of CRC-64 */

/* The footer of a payload: its RDB version (returned), or -1 when the
 * payload is too short, newer than we read, or its checksum is wrong. */
static int payload_version(const unsigned char *p, size_t len) {
    if (len < DUMP_FOOTER) return -1;
    const unsigned char *foot = p + len - DUMP_FOOTER;
    int ver = foot[0] | (foot[1] << 8);
    if (ver > RDB_VERSION_MAX) return -1;
    uint64_t want = 0;
    for (int i = 0; i < 8; i++) want |= (uint64_t)foot[2 + i] << (8 * i);
    return crc64(0, p, len - 8) == want ? ver : -1;
}

/* The entry a payload describes, for key/klen with expiry `expire` (-1
 * none); NULL when the body is malformed or of a type we do not have.
 * `deep` validates packed encodings entry by entry. The reader sees the
 * footer too, as Redis's does: a body cut short may end in its bytes and
 * still load (and bytes left over are not an error), exactly as there. */
static struct kv *payload_load(const unsigned char *p, size_t len, int ver, int deep, const char *key,
                               size_t klen, long long expire) {
    struct rdb_in in;
    rdb_in_mem(&in, p, len, ver);
    in.deep = deep;
    unsigned char type;
    if (rdb_get_byte(&in, &type) < 0 || !rdb_is_value_type(type)) return NULL;
    return rdb_load_value(&in, type, key, klen, expire);
}

/* ---- DUMP ------------------------------------------------------------------ */

/* DUMP key: a read like GET (a hit or a miss, the access clock touched). */
void cmd_dump(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_null(c);
        return;
    }
    struct hk_buf b = {0};
    if (rdb_dump_payload(e, CFG(rdbcompression) != 0, &b) < 0) reply_error(c, "ERR the value of this key cannot be serialized");
    else reply_bulk(c, b.p, b.len);
    hk_free(b.p);
}

/* ---- RESTORE ----------------------------------------------------------------- */

/* Whether RESTORE validates packed encodings entry by entry
 * (sanitize-dump-payload): "clients" spares what is applied from a journal,
 * AOF or replication stream, as Redis spares its master and its loading. */
static int restore_deep(const struct cmd_ctx *c) {
    long long mode = CFG(sanitize_dump_payload);
    return mode == SANITIZE_YES || (mode == SANITIZE_CLIENTS && !(c->flags & CTX_REPLAY));
}

/* RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f].
 *
 * Checks in Redis's order: options, an existing key (without REPLACE),
 * the TTL, the footer, the body. A deadline already past stores nothing;
 * a key REPLACE removed for it goes as a DEL (UNLINK under
 * lazyfree-lazy-server-del), as Redis propagates it. Otherwise the key
 * reports "new" then "restore", and a relative TTL propagates as its
 * absolute time with ABSTTL appended. Under an LFU maxmemory-policy FREQ
 * sets the access counter, under any other IDLETIME sets the access time;
 * the other option is checked and ignored, as in Redis. */
void cmd_restore(struct cmd_ctx *c) {
    int replace = 0, absttl = 0;
    long long idle = -1, freq = -1;
    struct argcur a;
    ac_init(&a, c, 4);
    while (ac_more(&a)) {
        if (ac_is(&a, "REPLACE")) {
            replace = 1;
        } else if (ac_is(&a, "ABSTTL")) {
            absttl = 1;
        } else if (freq < 0 && ac_is_with(&a, "IDLETIME", 1)) {
            if (ac_ll(&a, &idle) && idle < 0) {
                reply_error(c, "ERR Invalid IDLETIME value, must be >= 0");
                return;
            }
        } else if (idle < 0 && ac_is_with(&a, "FREQ", 1)) {
            if (ac_ll(&a, &freq) && (freq < 0 || freq > 255)) {
                reply_error(c, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return;
            }
        } else {
            ac_fail(&a, HK_ERR_SYNTAX);
        }
    }
    if (!ac_ok(&a)) return;

    struct keyref k;
    key_of(c, 1, &k);
    if (!replace && lookup_write(c, &k)) {
        reply_error(c, "BUSYKEY Target key name already exists.");
        return;
    }
    long long ttl;
    if (!arg_ll_or_reply(c, &c->argv[2], &ttl, NULL)) return;
    if (ttl < 0) {
        reply_error(c, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    const unsigned char *p = (const unsigned char *)c->argv[3].ptr;
    size_t len = c->argv[3].len;
    int ver = payload_version(p, len);
    if (ver < 0) {
        reply_error(c, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    /* Redis adds the clock without a check: a sum that wraps is a time
     * in the past. */
    long long when = -1;
    if (ttl) when = absttl ? ttl : (long long)((unsigned long long)ttl + (unsigned long long)c->now_ms);
    int gone = ttl && when <= c->now_ms && !(c->flags & CTX_REPLAY);
    struct kv *e = payload_load(p, len, ver, restore_deep(c), k.key, k.klen, gone ? -1 : when);
    if (!e) {
        reply_error(c, "ERR Bad data format");
        return;
    }
    if (gone) {
        kv_free(e);
        if (replace && db_delete(&k, c->now_ms, KEV_DEL)) {
            hk_slice key = {k.key, k.klen};
            prop_cmd(c, CFG(lazyfree_lazy_server_del) ? "UNLINK" : "DEL", 1, &key);
        }
        reply_ok(c);
        return;
    }
    /* Redis deletes the old key and adds the new one: "new" either way,
     * never "overwritten". */
    db_notice(&k, KEV_NEW);
    e = db_put_noticed(&k, e, KEV_RESTORE);
    kv_clock_restore(e, c->now_ms, idle, freq);
    if (ttl && !absttl) {
        prop_begin(c, c->argc + 1);
        for (int i = 0; i < c->argc; i++) {
            if (i == 2) prop_arg_ll(c, when);
            else prop_arg_slice(c, &c->argv[i]);
        }
        prop_arg_cstr(c, "ABSTTL");
    }
    reply_ok(c);
}

/* ---- MIGRATE: connections ------------------------------------------------------ */

#define MIG_CACHE_MAX 64
#define MIG_IDLE_MS 10000
#define MIG_CHUNK (64 * 1024)
#define MIG_LINE_MAX 1024
#define MIG_TIMEOUT_MAX (1LL << 40) /* ms, some 34 years */

/* A connection to a target, cached by "host:port" as given. `db` is the
 * database its last successful MIGRATE selected (-1: unknown, SELECT
 * next time). Replies are read through a small buffer. */
struct mig_conn {
    char *name;
    size_t nlen;
    int fd;
    long long db;
    long long last_use_ms;
    size_t rpos, rlen;
    char rbuf[4096];
};

/* One worker thread's connections. Every cache is linked in a global list
 * so the connections stay reachable (and leak checkers quiet) after the
 * thread is gone; only the owning thread touches its cache. */
struct mig_cache {
    struct mig_cache *next;
    int n;
    struct mig_conn *conns[MIG_CACHE_MAX];
};

static pthread_mutex_t mig_caches_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mig_cache *mig_caches;
static _Thread_local struct mig_cache *mig_mine;

static struct mig_cache *mig_cache_get(void) {
    if (!mig_mine) {
        mig_mine = hk_calloc(1, sizeof(*mig_mine));
        pthread_mutex_lock(&mig_caches_lock);
        mig_mine->next = mig_caches;
        mig_caches = mig_mine;
        pthread_mutex_unlock(&mig_caches_lock);
    }
    return mig_mine;
}

static void mig_conn_free(struct mig_conn *m) {
    close(m->fd);
    hk_free(m->name);
    hk_free(m);
}

static void mig_cache_drop(struct mig_cache *mc, int i) {
    mig_conn_free(mc->conns[i]);
    mc->conns[i] = mc->conns[--mc->n];
}

/* Close what has been idle too long, as Redis's cron does. */
static void mig_cache_sweep(struct mig_cache *mc, long long now_ms) {
    for (int i = 0; i < mc->n;) {
        if (now_ms - mc->conns[i]->last_use_ms > MIG_IDLE_MS) mig_cache_drop(mc, i);
        else i++;
    }
}

static int mig_cache_find(struct mig_cache *mc, const char *name, size_t nlen) {
    for (int i = 0; i < mc->n; i++)
        if (mc->conns[i]->nlen == nlen && memcmp(mc->conns[i]->name, name, nlen) == 0) return i;
    return -1;
}

/* Milliseconds from now on the monotonic clock. */
static long long mono_ms(void) { return hk_clock_ns() / 1000000; }

/* Wait up to ms for fd to be ready for `events`; 1 when it is. */
static int wait_fd(int fd, short events, long long ms) {
    if (ms < 0) ms = 0;
    struct pollfd pfd = {.fd = fd, .events = events};
    for (;;) {
        long long t0 = mono_ms();
        int r = poll(&pfd, 1, ms > INT_MAX ? INT_MAX : (int)ms);
        if (r > 0) return 1;
        if (r == 0) return 0;
        if (errno != EINTR) return 1; /* let the read or write report it */
        ms -= mono_ms() - t0;
        if (ms < 0) ms = 0;
    }
}

/* The port the way Redis reads it (atoi: leading digits, 0 when none). */
static long parse_port(const hk_slice *s) {
    char buf[32];
    size_t n = s->len < sizeof(buf) - 1 ? s->len : sizeof(buf) - 1;
    memcpy(buf, s->ptr, n);
    buf[n] = '\0';
    return strtol(buf, NULL, 10);
}

/* A new connection: every address of host in turn until one starts
 * connecting, then a wait of timeout_ms for it to become writable. Like
 * Redis, a connection that fails after starting (refused) is only found
 * out by the first write. -1 on failure. */
static int mig_dial(const hk_slice *host, const hk_slice *port, long long timeout_ms) {
    char *h = hk_malloc(host->len + 1);
    memcpy(h, host->ptr, host->len);
    h[host->len] = '\0';
    char portstr[24];
    snprintf(portstr, sizeof(portstr), "%d", (int)parse_port(port));
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int fd = -1;
    if (getaddrinfo(h, portstr, &hints, &res) == 0) {
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
            int s = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
            if (s < 0) continue;
            if (connect(s, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
                fd = s;
                break;
            }
            close(s);
        }
        freeaddrinfo(res);
    }
    hk_free(h);
    if (fd < 0) return -1;
    if (!wait_fd(fd, POLLOUT, timeout_ms)) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* The cached connection to host:port, or a new one (evicting the least
 * recently used when the cache is full). NULL when it cannot connect. */
static struct mig_conn *mig_get(struct mig_cache *mc, const hk_slice *host, const hk_slice *port,
                                long long timeout_ms, long long now_ms) {
    size_t nlen = host->len + 1 + port->len;
    char *name = hk_malloc(nlen);
    memcpy(name, host->ptr, host->len);
    name[host->len] = ':';
    memcpy(name + host->len + 1, port->ptr, port->len);
    int i = mig_cache_find(mc, name, nlen);
    if (i >= 0) {
        hk_free(name);
        mc->conns[i]->last_use_ms = now_ms;
        return mc->conns[i];
    }
    if (mc->n == MIG_CACHE_MAX) {
        int old = 0;
        for (int j = 1; j < mc->n; j++)
            if (mc->conns[j]->last_use_ms < mc->conns[old]->last_use_ms) old = j;
        mig_cache_drop(mc, old);
    }
    int fd = mig_dial(host, port, timeout_ms);
    if (fd < 0) {
        hk_free(name);
        return NULL;
    }
    struct mig_conn *m = hk_malloc(sizeof(*m));
    m->name = name;
    m->nlen = nlen;
    m->fd = fd;
    m->db = -1;
    m->last_use_ms = now_ms;
    m->rpos = m->rlen = 0;
    mc->conns[mc->n++] = m;
    return m;
}

static void mig_close(struct mig_cache *mc, struct mig_conn *m) {
    for (int i = 0; i < mc->n; i++)
        if (mc->conns[i] == m) {
            mig_cache_drop(mc, i);
            return;
        }
}

/* Outcome of one exchange step. */
enum { MIO_OK = 0, MIO_ERR = 1, MIO_TIMEOUT = 2 };

/* Write n bytes within timeout_ms (in all, as Redis's syncWrite). */
static int mig_write(struct mig_conn *m, const char *p, size_t n, long long timeout_ms) {
    long long deadline = mono_ms() + timeout_ms;
    for (;;) {
        ssize_t w = send(m->fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return MIO_ERR;
        } else {
            p += w;
            n -= (size_t)w;
            if (n == 0) return MIO_OK;
        }
        long long left = deadline - mono_ms();
        if (left <= 0 || !wait_fd(m->fd, POLLOUT, left)) return MIO_TIMEOUT;
    }
}

/* One reply line into line (NUL-terminated, without CR LF), each wait for
 * data bounded by timeout_ms as Redis's syncReadLine bounds each byte. An
 * empty line counts as a failure, as it does for Redis's callers. */
static int mig_read_line(struct mig_conn *m, char *line, size_t size, long long timeout_ms) {
    size_t n = 0;
    for (;;) {
        while (m->rpos < m->rlen) {
            char ch = m->rbuf[m->rpos++];
            if (ch == '\n') {
                if (n && line[n - 1] == '\r') n--;
                line[n] = '\0';
                return n ? MIO_OK : MIO_ERR;
            }
            if (n + 1 < size) line[n++] = ch;
        }
        ssize_t r = recv(m->fd, m->rbuf, sizeof(m->rbuf), 0);
        if (r > 0) {
            m->rpos = 0;
            m->rlen = (size_t)r;
            continue;
        }
        if (r == 0) return MIO_ERR;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return MIO_ERR;
        if (!wait_fd(m->fd, POLLIN, timeout_ms)) return MIO_TIMEOUT;
    }
}

/* ---- MIGRATE ------------------------------------------------------------------ */

static void resp_header(struct hk_buf *b, char type, long long n) { respw_header(b, type, n, 4096); }
static void resp_bulk(struct hk_buf *b, const void *p, size_t n) { respw_bulk(b, p, n, 4096); }
static void resp_bulk_ll(struct hk_buf *b, long long v) { respw_bulk_ll(b, v, 4096); }

/* MIGRATE's keys, as Redis's migrateGetKeys finds them: argv[3], or, when
 * a KEYS option follows the fixed arguments (skipping AUTH's password and
 * AUTH2's pair) and argv[3] is empty, every argument after it. */
int migrate_getkeys(const hk_slice *argv, int argc, int *keys, int max) {
    int first = 3, num = 1;
    for (int i = 6; i < argc; i++) {
        const hk_slice *a = &argv[i];
        if (hk_eqi(a->ptr, a->len, "keys")) {
            if (argv[3].len == 0) {
                first = i + 1;
                num = argc - first;
            }
            break;
        }
        if (hk_eqi(a->ptr, a->len, "auth")) i += 1;
        else if (hk_eqi(a->ptr, a->len, "auth2")) i += 2;
    }
    if (argc <= 3) return 0;
    if (num > max) num = max;
    for (int j = 0; j < num; j++) keys[j] = first + j;
    return num;
}

/* "Target instance replied with error: <its line>", with any stray CR
 * made a space so the reply stays one line. */
static void reply_target_error(struct cmd_ctx *c, const char *msg) {
    char buf[MIG_LINE_MAX + 64];
    int n = snprintf(buf, sizeof(buf), "ERR Target instance replied with error: %s", msg);
    if (n < 0) return;
    size_t len = (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\r' || buf[i] == '\n') buf[i] = ' ';
    reply_error_len(c, buf, len);
}

/* A key being moved: its argument, and its remaining TTL (0: none). */
struct mig_key {
    int argi;
    long long ttl;
};

/* MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
 * [AUTH password | AUTH2 username password] [KEYS key ...].
 *
 * As Redis: the options, then the timeout and the database (integers),
 * then the keys (none present: +NOKEY). The RESTOREs go out in one
 * stream; a key the target took is deleted here unless COPY, and those
 * deletions propagate as one DEL. A failure of the cached connection
 * before any reply (a target that closed it while idle) is retried once
 * on a new connection, unless it was a timeout. An error reply from the
 * target is passed on ("Target instance replied with error: ..."), and
 * the next MIGRATE selects the database again. */
void cmd_migrate(struct cmd_ctx *c) {
    int copy = 0, replace = 0, first = 3, nkeys = 1;
    const hk_slice *user = NULL, *pass = NULL;
    for (int j = 6; j < c->argc; j++) {
        const hk_slice *a = &c->argv[j];
        int more = c->argc - 1 - j;
        if (arg_is(a, "copy")) {
            copy = 1;
        } else if (arg_is(a, "replace")) {
            replace = 1;
        } else if (arg_is(a, "auth")) {
            if (more < 1) {
                reply_status(c, HK_ERR_SYNTAX);
                return;
            }
            pass = &c->argv[++j];
        } else if (arg_is(a, "auth2")) {
            if (more < 2) {
                reply_status(c, HK_ERR_SYNTAX);
                return;
            }
            user = &c->argv[++j];
            pass = &c->argv[++j];
        } else if (arg_is(a, "keys")) {
            if (c->argv[3].len != 0) {
                reply_error(c, "ERR When using MIGRATE KEYS option, the key argument must be set to the empty "
                               "string");
                return;
            }
            first = j + 1;
            nkeys = c->argc - j - 1;
            break;
        } else {
            reply_status(c, HK_ERR_SYNTAX);
            return;
        }
    }
    long long timeout, dbid;
    if (!arg_ll_or_reply(c, &c->argv[5], &timeout, NULL) || !arg_ll_or_reply(c, &c->argv[4], &dbid, NULL)) return;
    if (timeout <= 0) timeout = 1000;
    if (timeout > MIG_TIMEOUT_MAX) timeout = MIG_TIMEOUT_MAX; /* deadlines stay far from overflow */

    struct mig_key *mk = hk_malloc(sizeof(*mk) * (size_t)(nkeys ? nkeys : 1));
    struct kv **vals = hk_malloc(sizeof(*vals) * (size_t)(nkeys ? nkeys : 1));
    int n = 0;
    for (int j = 0; j < nkeys; j++) {
        struct keyref k;
        key_of(c, first + j, &k);
        struct kv *e = lookup_read(c, &k);
        if (!e) continue;
        mk[n].argi = first + j;
        vals[n++] = e;
    }
    if (n == 0) {
        hk_free(mk);
        hk_free(vals);
        reply_simple(c, "NOKEY");
        return;
    }

    struct mig_cache *mc = mig_cache_get();
    mig_cache_sweep(mc, c->now_ms);
    int may_retry = 1;
    struct hk_buf out = {0};
    hk_slice *dels = NULL;
    int ndel = 0;
    int write_failed = 0, timed_out = 0;

try_again:
    write_failed = timed_out = 0;
    struct mig_conn *m = mig_get(mc, &c->argv[1], &c->argv[2], timeout, c->now_ms);
    if (!m) {
        reply_error(c, "IOERR error or timeout connecting to the client");
        goto done;
    }
    out.len = 0;
    if (pass) {
        resp_header(&out, '*', user ? 3 : 2);
        resp_bulk(&out, "AUTH", 4);
        if (user) resp_bulk(&out, user->ptr, user->len);
        resp_bulk(&out, pass->ptr, pass->len);
    }
    int select = m->db != dbid;
    if (select) {
        resp_header(&out, '*', 2);
        resp_bulk(&out, "SELECT", 6);
        resp_bulk_ll(&out, dbid);
    }
    /* Keys whose deadline passed since the lookup are left out; none can
     * here (the command's clock does not move), but the check keeps a TTL
     * of at least 1 ms on the wire, as Redis sends it. */
    int live = 0;
    for (int j = 0; j < n; j++) {
        long long ttl = 0, at = kv_expire(vals[j]);
        if (at != -1) {
            ttl = at - c->now_ms;
            if (ttl < 0) continue;
            if (ttl < 1) ttl = 1;
        }
        int argi = mk[j].argi;
        struct kv *e = vals[j];
        mk[live] = (struct mig_key){argi, ttl};
        vals[live++] = e;
        const hk_slice *key = &c->argv[argi];
        resp_header(&out, '*', replace ? 5 : 4);
        resp_bulk(&out, "RESTORE", 7);
        resp_bulk(&out, key->ptr, key->len);
        resp_bulk_ll(&out, ttl);
        struct hk_buf pl = {0};
        if (rdb_dump_payload(e, CFG(rdbcompression) != 0, &pl) < 0) pl.len = 0; /* the target answers Bad data format */
        resp_bulk(&out, pl.p, pl.len);
        hk_free(pl.p);
        if (replace) resp_bulk(&out, "REPLACE", 7);
    }
    n = live;

    for (size_t pos = 0; pos < out.len;) {
        size_t chunk = out.len - pos < MIG_CHUNK ? out.len - pos : MIG_CHUNK;
        int st = mig_write(m, out.p + pos, chunk, timeout);
        if (st != MIO_OK) {
            write_failed = 1;
            timed_out = st == MIO_TIMEOUT;
            goto socket_err;
        }
        pos += chunk;
    }

    char auth_line[MIG_LINE_MAX], select_line[MIG_LINE_MAX], line[MIG_LINE_MAX];
    int st;
    if (pass && (st = mig_read_line(m, auth_line, sizeof(auth_line), timeout)) != MIO_OK) {
        timed_out = st == MIO_TIMEOUT;
        goto socket_err;
    }
    if (select && (st = mig_read_line(m, select_line, sizeof(select_line), timeout)) != MIO_OK) {
        timed_out = st == MIO_TIMEOUT;
        goto socket_err;
    }
    int target_error = 0, socket_error = 0, j;
    if (!copy && !dels) dels = hk_malloc(sizeof(*dels) * (size_t)(n ? n : 1));
    for (j = 0; j < n; j++) {
        if ((st = mig_read_line(m, line, sizeof(line), timeout)) != MIO_OK) {
            socket_error = 1;
            timed_out = st == MIO_TIMEOUT;
            break;
        }
        const char *err = pass && auth_line[0] == '-' ? auth_line : select && select_line[0] == '-' ? select_line
                          : line[0] == '-'                          ? line
                                                                    : NULL;
        if (err) {
            if (!target_error) {
                m->db = -1;
                target_error = 1;
                reply_target_error(c, err + 1);
            }
        } else if (!copy) {
            struct keyref k;
            key_of(c, mk[j].argi, &k);
            db_delete(&k, c->now_ms, KEV_DEL);
            dels[ndel++] = c->argv[mk[j].argi];
        }
    }
    /* Nothing was read back: the cached connection may have gone stale
     * while idle; one more try on a new one. */
    if (!target_error && socket_error && j == 0 && may_retry && !timed_out) goto socket_err;
    if (socket_error) mig_close(mc, m);
    if (ndel) prop_cmd(c, "DEL", ndel, dels);
    if (!target_error && socket_error) {
        may_retry = 0;
        m = NULL;
        goto socket_err;
    }
    if (!target_error) {
        m->db = dbid;
        reply_ok(c);
    }
    goto done;

socket_err:
    if (m) mig_close(mc, m);
    if (!timed_out && may_retry) {
        may_retry = 0;
        goto try_again;
    }
    reply_errorf(c, "IOERR error or timeout %s to target instance", write_failed ? "writing" : "reading");

done:
    hk_free(out.p);
    hk_free(dels);
    hk_free(mk);
    hk_free(vals);
}
