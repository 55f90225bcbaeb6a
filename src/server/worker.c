/* worker.c - worker threads: the event loop, connections, the mailbox and
 * the periodic tasks.
 *
 * Each worker owns an epoll instance, its own SO_REUSEPORT listeners, the
 * connections it accepted (for their whole life) and a mailbox through
 * which other threads ask it to run a function on its own thread. Replies
 * produced while handling one loop turn are written just before the next
 * epoll_wait, so a pipeline's replies leave in one writev. */
#include "../core/alloc.h"
#include "../net/net.h"
#include "../net/tls.h"
#include "../store/db.h"
#include "config.h"
#include "blocking.h"
#include "clientmem.h"
#include "creply.h"
#include "journal.h"
#include "evict.h"
#include "server.h"
#include "acl.h"
#include "pubsub.h"
#include "snapshot.h"
#include "tracking.h"
#include "txn.h"
#include "stats.h"
#include "tlsconf.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

struct server server;
_Thread_local struct worker *current_worker;

/* Event sources are told apart by the first field of what data.ptr points
 * at: listeners and the mailbox use these markers, clients point at
 * themselves (struct client has no marker; markers live in a static table). */
enum { SRC_LISTEN = 1, SRC_MAILBOX = 2, SRC_UNIX = 3, SRC_LISTEN_TLS = 4 };
/* How accept_one sets a new connection up. */
enum { ACC_TCP = 0, ACC_UNIX = 1, ACC_TLS = 2 };
struct evsrc {
    int kind;
    int fd;
};

#define READ_CHUNK QBUF_CHUNK

static const char denied_msg[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for "
    "the default user. In this mode connections are only accepted from the loopback interface. If you want to "
    "connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable "
    "protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by "
    "connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly "
    "accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) "
    "Alternatively you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you started the server "
    "manually just for testing, restart it with the '--protected-mode no' option. 4) Set up an authentication "
    "password for the default user. NOTE: You only need to do one of the above things in order for the server "
    "to start accepting connections from the outside.\r\n";

long long server_uptime_s(void) { return (hk_monotonic_us() - server.start_mono_us) / 1000000; }

/* ---- mailbox ------------------------------------------------------------ */

void worker_post(struct worker *w, mail_fn fn, void *arg) {
    struct mail *m = hk_malloc(sizeof(*m));
    m->next = NULL;
    m->fn = fn;
    m->arg = arg;
    pthread_mutex_lock(&w->mbox_lock);
    if (w->mbox_closed) {
        pthread_mutex_unlock(&w->mbox_lock);
        hk_free(m);
        return;
    }
    int was_empty = w->mbox_head == NULL;
    if (w->mbox_tail) w->mbox_tail->next = m;
    else w->mbox_head = m;
    w->mbox_tail = m;
    pthread_mutex_unlock(&w->mbox_lock);
    if (was_empty) {
        uint64_t one = 1;
        ssize_t r = write(w->evfd, &one, sizeof(one));
        (void)r;
    }
}

static void mailbox_drain(struct worker *w) {
    uint64_t v;
    ssize_t r = read(w->evfd, &v, sizeof(v));
    (void)r;
    pthread_mutex_lock(&w->mbox_lock);
    struct mail *m = w->mbox_head;
    w->mbox_head = w->mbox_tail = NULL;
    pthread_mutex_unlock(&w->mbox_lock);
    while (m) {
        struct mail *next = m->next;
        m->fn(w, m->arg);
        hk_free(m);
        m = next;
    }
}

static void gather_step(struct worker *w, void *arg) {
    struct gather *g = arg;
    g->each(w, g->arg);
    if (atomic_fetch_sub(&g->left, 1) == 1) worker_post(g->origin, g->done, g);
}

void worker_broadcast(mail_fn each, mail_fn done, void *arg) {
    struct gather *g = hk_malloc(sizeof(*g));
    atomic_init(&g->left, server.nworkers);
    g->origin = current_worker;
    g->each = each;
    g->done = done;
    g->arg = arg;
    for (int i = 0; i < server.nworkers; i++) worker_post(&server.workers[i], gather_step, g);
}

/* ---- query buffers -------------------------------------------------------- */

/* A connection reads into a buffer the worker lends it when it has none;
 * once its requests are parsed and run and nothing is left over, the buffer
 * goes back (qbuf_settle). One holding a partial request keeps it as its
 * own until it has been idle a while (clients_cron). So an idle connection
 * costs no query buffer, and CLIENT LIST shows it qbuf=0 qbuf-free=0, as
 * Redis 8 does with its reusable query buffer. */
static char *qbuf_take(struct worker *w) {
    if (w->qb_nfree) return w->qb_pool[--w->qb_nfree];
    return hk_malloc(QBUF_CHUNK);
}

/* Give back (or free) the buffer of c, which holds no request bytes. */
static void qbuf_drop(struct client *c) {
    struct worker *w = c->w;
    if (c->qcap == QBUF_CHUNK && w->qb_nfree < QB_POOL_MAX) w->qb_pool[w->qb_nfree++] = c->qbuf;
    else hk_free(c->qbuf);
    c->qbuf = NULL;
    c->qlen = c->qpos = c->qcap = 0;
    c->qbuf_lent = 0;
}

/* After a pass over c's input: a lent buffer that was emptied goes back;
 * one with a partial request (or requests held back: a blocked or paused
 * client) stays with the connection as its own. */
static void qbuf_settle(struct client *c) {
    if (!c->qbuf_lent) return;
    if (c->qpos == c->qlen) qbuf_drop(c);
    else c->qbuf_lent = 0;
}

/* ---- clients ------------------------------------------------------------ */

static uint64_t id_hash(uint64_t id);
static uint64_t id_node_hash(const struct hnode *n, void *ctx);
static int id_node_match(const struct hnode *n, const void *key);

static struct client *client_new(struct worker *w, int fd, const char *addr, int unix_sock) {
    struct client *c = hk_calloc(1, sizeof(*c));
    c->id = atomic_fetch_add(&server.next_client_id, 1);
    c->fd = fd;
    c->w = w;
    ctx_init(&c->ctx);
    c->ctx.cl = c;
    c->ctx.w = w;
    c->ctx.out = &c->out;
    resp_req_init(&c->req);
    ob_init(&c->out);
    snprintf(c->addr, sizeof(c->addr), "%s", addr);
    if (unix_sock) {
        c->flags |= CLIENT_UNIX_SOCKET;
        char *path = cfg_get_string(&cfg.unixsocket);
        snprintf(c->laddr, sizeof(c->laddr), "%s:0", path);
        /* Redis shows the socket path as the peer address too. */
        snprintf(c->addr, sizeof(c->addr), "%s:0", path);
        hk_free(path);
    } else {
        net_local_addr(fd, c->laddr, sizeof(c->laddr));
    }
    c->ctime_ms = c->last_ms = w->now_ms;
    c->cm_bucket = -1;
    if (!atomic_load(&cfg.requirepass_set)) c->flags |= CLIENT_AUTHENTICATED;
    c->next = w->clients;
    if (w->clients) w->clients->prev = c;
    w->clients = c;
    ht_insert(&w->by_id, &c->id_node, id_hash(c->id), id_node_hash, NULL);
    atomic_store_explicit(&w->nclients, atomic_load_explicit(&w->nclients, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    return c;
}

static void aof_unhold(struct client *c);

static void client_free(struct client *c) {
    struct worker *w = c->w;
    if (c->flags & CLIENT_BLOCKED) block_remove(c);
    if (c->chain || c->chain_own) chain_forget(c);
    if (c->flags & CLIENT_MONITOR) monitor_detach(c);
    if (c->flags & CLIENT_WAIT_AOF) aof_unhold(c);
    if (c->ps || w->ps_held_for == c) pubsub_client_reset(c);
    if (c->track) tracking_client_gone(c);
    clientmem_forget(c);
    txn_free(c);
    if (c->flags & CLIENT_PAUSED) {
        for (struct client **p = &w->paused; *p; p = &(*p)->next_paused)
            if (*p == c) {
                *p = c->next_paused;
                break;
            }
        stat_add(&w->npaused, (unsigned long long)-1);
    }
    ev_del(w->epfd, c->fd);
    if (c->tls) tls_conn_free(c->tls);
    close(c->fd);
    struct hnode **idl = ht_find_link(&w->by_id, id_hash(c->id), id_node_match, &c->id);
    if (idl) ht_unlink(&w->by_id, idl);
    ht_maybe_shrink(&w->by_id, id_node_hash, NULL);
    if (c->prev) c->prev->next = c->next;
    else w->clients = c->next;
    if (c->next) c->next->prev = c->prev;
    atomic_store_explicit(&w->nclients, atomic_load_explicit(&w->nclients, memory_order_relaxed) - 1,
                          memory_order_relaxed);
    atomic_fetch_sub(&server.nclients, 1);
    if (c->qbuf) qbuf_drop(c);
    hk_free(c->argv);
    ctx_destroy(&c->ctx);
    resp_req_free(&c->req);
    ob_free(&c->out);
    acl_client_free(c);
    hk_free(c->name);
    hk_free(c->lib_name);
    hk_free(c->lib_ver);
    hk_free(c);
}

void client_close(struct client *c) {
    /* Freed at the end of the loop turn: the epoll batch being handled and
     * the pending-write list may still point at this client. */
    if (c->flags & CLIENT_CLOSING) return;
    c->flags |= CLIENT_CLOSING | CLIENT_CLOSE_ASAP;
    c->next_closing = c->w->closing;
    c->w->closing = c;
}

static void free_closed(struct worker *w) {
    while (w->closing) {
        struct client *c = w->closing;
        w->closing = c->next_closing;
        client_free(c);
    }
}

void client_set_close_after_reply(struct client *c) { c->flags |= CLIENT_CLOSE_AFTER_REPLY; }

void client_queue_write(struct client *c) {
    if (c->flags & CLIENT_PENDING_WRITE) return;
    c->flags |= CLIENT_PENDING_WRITE;
    c->next_pending = c->w->pending_write;
    c->w->pending_write = c;
}

static void update_events(struct client *c) {
    uint32_t ev = 0;
    if (!(c->flags & CLIENT_READ_STOPPED)) ev |= EPOLLIN;
    /* Held output is not written: a writable socket must not wake the
     * loop for it over and over. */
    if ((c->flags & (CLIENT_WANT_WRITE | CLIENT_WAIT_CHAIN | CLIENT_WAIT_AOF)) == CLIENT_WANT_WRITE) ev |= EPOLLOUT;
    if (__builtin_expect(c->tls_state != 0, 0)) {
        /* What OpenSSL waits for decides: a handshake waits for one
         * direction only, a retried read or write for the other one. */
        if (c->tls_state & TLS_ST_HANDSHAKE) ev = (c->tls_state & TLS_ST_HS_WRITE) ? EPOLLOUT : EPOLLIN;
        if (c->tls_state & TLS_ST_READ_WRITE) ev |= EPOLLOUT;
        if (c->tls_state & TLS_ST_WRITE_READ) ev = (ev & ~(uint32_t)EPOLLOUT) | EPOLLIN;
    }
    ev_mod(c->w->epfd, c->fd, ev, c);
}

/* ---- TLS connections -------------------------------------------------------

 * A connection accepted on the TLS port runs its handshake on its worker's
 * loop, one step per readiness event: OpenSSL says whether it waits to
 * read or to write, and update_events waits for that alone, so a slow or
 * silent peer costs the loop nothing. Past TLS_HANDSHAKE_TIMEOUT_MS the
 * cron closes it. Then reads and writes go through tls_read/tls_write;
 * the plain path only tests c->tls. */
#define TLS_HANDSHAKE_TIMEOUT_MS 10000

/* One handshake step. Returns -1 when the connection must be closed. */
static int tls_step(struct client *c) {
    int r = tls_handshake(c->tls);
    unsigned old = c->tls_state;
    if (r == TLS_DONE) {
        /* Read-ahead may have taken the first request with the handshake's
         * last record: no event would report it, so read once the socket
         * is writable (at once, the next loop turn; handle_writable). */
        c->tls_state = tls_pending(c->tls) ? TLS_ST_READ_WRITE : 0;
        c->last_ms = c->w->now_ms;
    } else if (r == TLS_WANT_READ) {
        c->tls_state = TLS_ST_HANDSHAKE;
    } else if (r == TLS_WANT_WRITE) {
        c->tls_state = TLS_ST_HANDSHAKE | TLS_ST_HS_WRITE;
    } else {
        char why[256];
        hk_log(LL_VERBOSE, "Error accepting a client connection: %s (addr=%s)", tls_last_error(c->tls, why, sizeof(why)),
               c->addr);
        return -1;
    }
    if (old != c->tls_state) update_events(c);
    return 0;
}

/* Read from a TLS connection into the query buffer (room bytes free),
 * then whatever OpenSSL still holds, growing the buffer: nothing may stay
 * inside OpenSSL, where no readiness event would report it. A read yields
 * one record (16 KB at most): while a big bulk string is still short of
 * `target` bytes, more records are read at once.
 * Returns as read(2) does, with errno EAGAIN for "nothing now". */
static ssize_t tls_read_all(struct client *c, size_t room, size_t target) {
    ssize_t n = tls_read(c->tls, c->qbuf + c->qlen, room);
    if (n == TLS_CLOSED) return 0;
    if (n < 0) {
        unsigned old = c->tls_state;
        if (n == TLS_WANT_WRITE) c->tls_state |= TLS_ST_READ_WRITE;
        if (old != c->tls_state) update_events(c);
        errno = n == TLS_ERROR ? EPROTO : EAGAIN;
        return -1;
    }
    size_t got = (size_t)n, more;
    while ((more = tls_pending(c->tls)) > 0) {
        if (c->qcap - c->qlen - got < more) {
            c->qcap = c->qlen + got + more;
            c->qbuf = hk_realloc(c->qbuf, c->qcap);
        }
        ssize_t m = tls_read(c->tls, c->qbuf + c->qlen + got, c->qcap - c->qlen - got);
        if (m <= 0) break;
        got += (size_t)m;
    }
    while (got < target && c->qcap - c->qlen > got) {
        ssize_t m = tls_read(c->tls, c->qbuf + c->qlen + got, c->qcap - c->qlen - got);
        if (m <= 0) {
            if (m == TLS_WANT_WRITE) {
                c->tls_state |= TLS_ST_READ_WRITE;
                update_events(c);
            }
            break; /* an error or the end shows on the next read */
        }
        got += (size_t)m;
    }
    return (ssize_t)got;
}

/* Write one block to a TLS connection; as write(2), errno EAGAIN when the
 * socket (or, for TLS_ST_WRITE_READ, a pending read) must come first. */
static ssize_t tls_write_block(struct client *c, const void *p, size_t n) {
    ssize_t w = tls_write(c->tls, p, n);
    if (w > 0) return w;
    if (w == TLS_WANT_READ) {
        c->tls_state |= TLS_ST_WRITE_READ;
        errno = EAGAIN;
    } else {
        errno = w == TLS_WANT_WRITE ? EAGAIN : EPIPE;
    }
    return -1;
}

void client_hold_output(struct client *c, int on) {
    unsigned old = c->flags;
    if (on) c->flags |= CLIENT_WAIT_CHAIN;
    else c->flags &= ~CLIENT_WAIT_CHAIN;
    if (old != c->flags && (c->flags & CLIENT_WANT_WRITE)) update_events(c);
}

/* Write the start of iov to a TLS connection. Small blocks (a reply's
 * header and its value) are gathered into one record, as writev gathers
 * them into one segment on the plain path; a retry gathers from the same
 * first byte again (blocks only grow), so OpenSSL is offered at least the
 * bytes it waits for. */
static ssize_t tls_write_iov(struct client *c, const struct iovec *iov, int n) {
    static _Thread_local char gather[16384];
    if (n == 1 || iov[0].iov_len >= sizeof(gather)) return tls_write_block(c, iov[0].iov_base, iov[0].iov_len);
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof(gather); i++) {
        size_t take = iov[i].iov_len < sizeof(gather) - len ? iov[i].iov_len : sizeof(gather) - len;
        memcpy(gather + len, iov[i].iov_base, take);
        len += take;
    }
    return tls_write_block(c, gather, len);
}

/* Write what is pending. Returns -1 when the client must be closed. */
static int client_write(struct client *c) {
    struct iovec iov[64];
    /* Its write's wake batch has not drained (blocking.h): the reply
     * waits, and so does what was pipelined before it. */
    if (__builtin_expect(c->flags & (CLIENT_WAIT_CHAIN | CLIENT_WAIT_AOF), 0)) return 0;
    unsigned old_tls = c->tls_state;
    if (__builtin_expect(c->tls != NULL, 0)) {
        if (c->tls_state & TLS_ST_HANDSHAKE) return tls_step(c);
        c->tls_state &= ~TLS_ST_WRITE_READ;
    }
    if (c->out.head && c->out.head->len > c->rbuf_peak) c->rbuf_peak = c->out.head->len;
    while (c->out.pending) {
        int n = ob_iov(&c->out, iov, 64);
        if (n == 0) break;
        /* One block (the usual case) goes out with write(): writev would
         * copy and check an iovec array in the kernel for nothing. */
        ssize_t w = __builtin_expect(c->tls != NULL, 0) ? tls_write_iov(c, iov, n)
                    : n == 1                           ? write(c->fd, iov[0].iov_base, iov[0].iov_len)
                                                       : writev(c->fd, iov, n);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EINTR) continue;
            return -1;
        }
        ob_consume(&c->out, (size_t)w);
        /* Sending counts as interaction (as in Redis): a client draining a
         * long reply is not idle, whatever `timeout` says. */
        c->last_ms = c->w->now_ms;
        c->tot_net_out += w;
        stat_add(&c->w->stats.net_output_bytes, (unsigned long long)w);
        stat_add(&c->w->stats.total_writes_processed, 1);
    }
    unsigned old = c->flags;
    if (c->out.pending) {
        c->flags |= CLIENT_WANT_WRITE;
    } else {
        if (c->flags & CLIENT_CLOSE_AFTER_REPLY) return -1;
        /* A client stopped for backpressure is resumed by handle_writable
         * only: keep EPOLLOUT armed, or a client whose output all fit in
         * the socket would never be read again. */
        if (!(c->flags & CLIENT_READ_STOPPED)) c->flags &= ~CLIENT_WANT_WRITE;
    }
    if (old != c->flags || old_tls != c->tls_state) update_events(c);
    return 0;
}

/* Run what is in the query buffer, then flush. Returns -1 to close. */
int client_resume(struct client *c) {
    int r = client_process_input(c);
    qbuf_settle(c);
    /* Its commands are done: its memory is counted again, and when the
     * clients' total reached maxmemory-clients the biggest go now, before
     * the next connection's commands run (Redis checks before each). */
    clientmem_touch(c);
    clientmem_maybe_check(c->w);
    if (r < 0) return -1;
    if (c->flags & CLIENT_CLOSE_ASAP) return -1;
    if (c->out.pending || (c->flags & CLIENT_CLOSE_AFTER_REPLY)) client_queue_write(c);
    return 0;
}

/* Read what the socket has into the query buffer (no command runs).
 * Returns -1 when the client must be closed, 1 when bytes came in, 0 when
 * none did. */
static int client_read(struct client *c) {
    struct worker *w = c->w;
    if (__builtin_expect(c->tls_state != 0, 0)) {
        if (c->tls_state & TLS_ST_HANDSHAKE) return tls_step(c) < 0 ? -1 : 0;
        if (c->tls_state & TLS_ST_WRITE_READ) {
            /* The write that waited for this can go on: flush_pending. */
            c->tls_state &= ~TLS_ST_WRITE_READ;
            update_events(c);
            client_queue_write(c);
        }
    }
    size_t want = READ_CHUNK, big = 0;
    if (!c->qbuf) {
        c->qbuf = qbuf_take(w);
        c->qcap = QBUF_CHUNK;
        c->qlen = c->qpos = 0;
        c->qbuf_lent = 1;
    }
    if (c->req.need > c->qlen - c->qpos) {
        /* A big bulk string is coming: read straight into a buffer sized
         * for it, instead of growing it chunk by chunk. */
        size_t missing = c->req.need - (c->qlen - c->qpos);
        if (missing > want) want = missing;
        big = missing;
    }
    if (c->qcap - c->qlen < want) {
        if (c->qpos) {
            c->warm_to = 0;
            c->ctx.warm_n = c->ctx.warm_i = 0;
            memmove(c->qbuf, c->qbuf + c->qpos, c->qlen - c->qpos);
            c->qlen -= c->qpos;
            c->qpos = 0;
        }
        if (c->qcap - c->qlen < want) {
            size_t ncap = c->qlen + want;
            if ((long long)ncap > CFG(client_query_buffer_limit) + READ_CHUNK) {
                hk_log(LL_WARNING, "Closing client that reached max query buffer length (id=%llu addr=%s)",
                       (unsigned long long)c->id, c->addr);
                stat_add(&w->stats.client_qbuf_limit_disconnections, 1);
                return -1;
            }
            c->qbuf = hk_realloc(c->qbuf, ncap);
            c->qcap = ncap;
        }
    }
    ssize_t n = __builtin_expect(c->tls != NULL, 0) ? tls_read_all(c, c->qcap - c->qlen, big)
                                                    : read(c->fd, c->qbuf + c->qlen, c->qcap - c->qlen);
    if (n == 0) return -1;
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            qbuf_settle(c); /* nothing came: a buffer just lent goes back */
            return 0;
        }
        return -1;
    }
    c->qlen += (size_t)n;
    clientmem_touch(c); /* a big bulk string may just have sized the buffer */
    c->tot_net_in += n;
    c->last_ms = w->now_ms;
    stat_add(&w->stats.net_input_bytes, (unsigned long long)n);
    stat_add(&w->stats.total_reads_processed, 1);
    if ((long long)(c->qlen - c->qpos) > CFG(client_query_buffer_limit)) {
        hk_log(LL_WARNING, "Closing client that reached max query buffer length (id=%llu addr=%s)",
               (unsigned long long)c->id, c->addr);
        stat_add(&w->stats.client_qbuf_limit_disconnections, 1);
        return -1;
    }
    return 1;
}

/* Called by dispatch when output grew past the backpressure mark: stop
 * reading and executing until the peer has taken the replies. */
void client_stop_reading(struct client *c) {
    if (c->flags & CLIENT_READ_STOPPED) return;
    c->flags |= CLIENT_READ_STOPPED | CLIENT_WANT_WRITE;
    update_events(c);
}

static void handle_writable(struct client *c);

/* ---- replies held for the AOF (appendfsync always) ---------------------------

 * A reply must not reach its client before the writes it acknowledges are
 * on disk. When a worker's pending output is to be written while some of
 * its journal records are not durable yet, every client with output is
 * held (CLIENT_WAIT_AOF) with the worker's record count, as Redis writes
 * no reply of an event-loop turn before that turn's fsync; the journal
 * thread wakes the worker once the count is durable, and the next turn
 * writes them first. Held clients live in a per-worker array (this
 * worker's thread only). */
struct aof_held {
    struct client **c;
    int n, cap;
};
static struct aof_held aof_held[HK_MAX_THREADS];

static void aof_hold(struct worker *w, struct client *c, uint64_t recs) {
    struct aof_held *h = &aof_held[w->id];
    c->aof_wait_rec = recs;
    if (c->flags & CLIENT_WAIT_AOF) return;
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 16;
        h->c = hk_realloc(h->c, (size_t)h->cap * sizeof(*h->c));
    }
    h->c[h->n++] = c;
    c->flags |= CLIENT_WAIT_AOF;
    if (c->flags & CLIENT_WANT_WRITE) update_events(c);
}

static void aof_unhold(struct client *c) {
    struct aof_held *h = &aof_held[c->w->id];
    for (int i = 0; i < h->n; i++)
        if (h->c[i] == c) {
            h->c[i] = h->c[--h->n];
            break;
        }
    c->flags &= ~CLIENT_WAIT_AOF;
}

/* Write the held clients whose records are durable now (or all of them,
 * once replies are no longer held). Called at the start of a loop turn:
 * what they hold was produced before this turn's commands ran. */
static void aof_release(struct worker *w) {
    struct aof_held *h = &aof_held[w->id];
    if (!h->n) return;
    int hold = atomic_load_explicit(&journal_hold, memory_order_relaxed);
    uint64_t durable = journal_durable(w->id);
    struct client **all = h->c;
    int n = h->n;
    *h = (struct aof_held){0};
    for (int i = 0; i < n; i++) {
        struct client *c = all[i];
        if (hold && c->aof_wait_rec > durable) {
            /* Still waiting: back into the (fresh) array, flag kept. */
            if (h->n == h->cap) {
                h->cap = h->cap ? h->cap * 2 : 16;
                h->c = hk_realloc(h->c, (size_t)h->cap * sizeof(*h->c));
            }
            h->c[h->n++] = c;
            continue;
        }
        c->flags &= ~CLIENT_WAIT_AOF;
        if (c->flags & CLIENT_CLOSING) continue;
        /* Output added since it was held (a blocked command re-run by
         * mail this turn) may wait for newer records: flush_pending
         * decides for all of it at the end of the turn. */
        if (c->flags & CLIENT_PENDING_WRITE) continue;
        if (c->flags & CLIENT_CLOSE_ASAP) client_close(c);
        else handle_writable(c);
    }
    hk_free(all);
}

/* A writable socket must not take replies produced this turn while they
 * may have to wait for the AOF: flush_pending writes or holds them at the
 * end of the turn. */
static inline int output_waits(const struct client *c) {
    return (c->flags & CLIENT_PENDING_WRITE) && atomic_load_explicit(&journal_hold, memory_order_relaxed);
}

static void flush_pending(struct worker *w) {
    if (__builtin_expect(atomic_load_explicit(&journal_hold, memory_order_relaxed), 0) && w->pending_write) {
        uint64_t recs = journal_recs(w->id);
        if (recs > journal_durable(w->id)) {
            while (w->pending_write) {
                struct client *c = w->pending_write;
                w->pending_write = c->next_pending;
                c->flags &= ~CLIENT_PENDING_WRITE;
                if (c->flags & CLIENT_CLOSE_ASAP) client_close(c);
                else aof_hold(w, c, recs);
                clientmem_touch(c);
            }
            return;
        }
    }
    while (w->pending_write) {
        struct client *c = w->pending_write;
        w->pending_write = c->next_pending;
        c->flags &= ~CLIENT_PENDING_WRITE;
        /* Through handle_writable, not client_write alone: a client whose
         * input was stopped for backpressure must resume when this write
         * drains its output, since no EPOLLOUT will come to do it. */
        if (c->flags & CLIENT_CLOSE_ASAP) client_close(c);
        else handle_writable(c);
    }
}

static void handle_writable(struct client *c) {
    if (__builtin_expect(c->tls_state & TLS_ST_READ_WRITE, 0)) {
        /* A TLS read waited for the socket to be writable: retry it. */
        c->tls_state &= ~TLS_ST_READ_WRITE;
        update_events(c);
        int rr = client_read(c);
        if (rr < 0 || (rr > 0 && client_resume(c) < 0)) {
            client_close(c);
            return;
        }
    }
    int r = client_write(c);
    if (r < 0) client_close(c);
    /* Every output change reaches here (appends queue a write): what is
     * left unsent is what the connection holds. */
    clientmem_touch(c);
    if (r < 0) return;
    if ((c->flags & CLIENT_READ_STOPPED) && c->out.alloc < CLIENT_BACKPRESSURE_BYTES / 2) {
        c->flags &= ~CLIENT_READ_STOPPED;
        update_events(c);
        if (client_resume(c) < 0) client_close(c);
    }
}

/* Accept what lfd has queued, 64 connections at most. Returns 1 when the
 * queue was emptied (or accept failed), 0 when more may be waiting. */
static int accept_one(struct worker *w, int lfd, int kind) {
    if (lfd < 0) return 1; /* a listener slot closed by a swap earlier in this turn */
    int unix_sock = kind == ACC_UNIX;
    for (int i = 0; i < 64; i++) {
        char addr[96];
        int local = 0;
        int fd = net_accept(lfd, addr, sizeof(addr), &local);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                hk_log(LL_WARNING, "Accepting client connection: %s", strerror(errno));
            return 1;
        }
        stat_add(&w->stats.connections_received, 1);
        int n = atomic_fetch_add(&server.nclients, 1) + 1;
        if (n > CFG(maxclients)) {
            static const char msg[] = "-ERR max number of clients reached\r\n";
            /* A TLS peer could not read it before a handshake: it is only closed. */
            ssize_t r = kind == ACC_TLS ? 0 : write(fd, msg, sizeof(msg) - 1);
            (void)r;
            close(fd);
            atomic_fetch_sub(&server.nclients, 1);
            stat_add(&w->stats.rejected_conn, 1);
            continue;
        }
        if (!local && CFG(protected_mode) && !atomic_load(&cfg.requirepass_set)) {
            ssize_t r = kind == ACC_TLS ? 0 : write(fd, denied_msg, sizeof(denied_msg) - 1);
            (void)r;
            close(fd);
            atomic_fetch_sub(&server.nclients, 1);
            stat_add(&w->stats.rejected_conn, 1);
            continue;
        }
        struct tls_conn *tls = NULL;
        if (kind == ACC_TLS) {
            struct tls_ctx *ctx = tlsconf_worker_ctx(w);
            if (!ctx || !(tls = tls_conn_new(ctx, fd))) {
                hk_log(LL_WARNING, "Error creating a TLS connection for %s", addr);
                close(fd);
                atomic_fetch_sub(&server.nclients, 1);
                continue;
            }
        }
        if (!unix_sock) net_tcp_options(fd, (int)CFG(tcp_keepalive));
        struct client *c = client_new(w, fd, addr, unix_sock);
        if (local || unix_sock) c->flags |= CLIENT_LOCAL;
        if (tls) {
            c->tls = tls;
            c->tls_state = TLS_ST_HANDSHAKE;
        }
        if (ev_add(w->epfd, fd, EPOLLIN, c) < 0) {
            client_free(c);
            continue;
        }
        hk_log(LL_VERBOSE, "Accepted %s", addr);
        /* The client's hello is often there already. */
        if (tls && tls_step(c) < 0) client_close(c);
    }
    return 0;
}

static inline struct client *client_of_id_node(const struct hnode *n) {
    return (struct client *)((const char *)n - offsetof(struct client, id_node));
}

static uint64_t id_hash(uint64_t id) { return id * 0x9E3779B97F4A7C15ull; }

static uint64_t id_node_hash(const struct hnode *n, void *ctx) {
    (void)ctx;
    return id_hash(client_of_id_node(n)->id);
}

static int id_node_match(const struct hnode *n, const void *key) {
    return client_of_id_node(n)->id == *(const uint64_t *)key;
}

struct client *worker_find_client(struct worker *w, uint64_t id) {
    struct hnode **link = ht_find_link(&w->by_id, id_hash(id), id_node_match, &id);
    return link ? client_of_id_node(*link) : NULL;
}

/* ---- periodic work ------------------------------------------------------ */

static void clients_cron(struct worker *w) {
    long long timeout_ms = CFG(timeout) * 1000;
    /* The reply-buffer peak covers the last 5 seconds, as Redis's does. */
    int reset_peak = w->now_ms - w->rbuf_peak_reset_ms >= 5000;
    if (reset_peak) w->rbuf_peak_reset_ms = w->now_ms;
    struct client *c = w->clients;
    size_t cm_sum = 0;
    while (c) {
        struct client *next = c->next;
        int kill = 0;
        if (reset_peak) c->rbuf_peak = c->out.head ? c->out.head->len : 0;
        if (__builtin_expect(c->tls_state & TLS_ST_HANDSHAKE, 0) &&
            w->now_ms - c->ctime_ms > TLS_HANDSHAKE_TIMEOUT_MS) {
            hk_log(LL_VERBOSE, "Closing client whose TLS handshake timed out (addr=%s)", c->addr);
            kill = 1;
        }
        if (timeout_ms && !client_is_waiting(c) && w->now_ms - c->last_ms > timeout_ms) {
            hk_log(LL_VERBOSE, "Closing idle client");
            kill = 1;
        }
        if (client_soft_limit_passed(c, w->now_ms)) {
            stat_add(&w->stats.client_outbuf_limit_disconnections, 1);
            kill = 1;
        }
        /* Give back the query buffer of a connection that went quiet. */
        if (!kill && c->qbuf && c->qpos == c->qlen && w->now_ms - c->last_ms > 2000) qbuf_drop(c);
        if (kill) client_close(c);
        else clientmem_cron_one(w, c, &cm_sum);
        c = next;
    }
    clientmem_cron_done(w, cm_sum);
}

static void expire_cron(struct worker *w) {
    if (!atomic_load_explicit(&server.active_expire_enabled, memory_order_relaxed)) return;
    /* Nothing expires while the dataset loads, as in Redis: an AOF may
     * hold a key past its deadline that a later command of the file
     * still needs (PERSIST, a new TTL). */
    if (atomic_load_explicit(&server_loading, memory_order_relaxed)) return;
    long long effort = CFG(active_expire_effort);
    unsigned budget = (unsigned)(64 * effort);
    long long start = hk_monotonic_us();
    long long deadline = start + 25000 / (CFG(hz) ? CFG(hz) : 10) * 10 / 10;
    for (unsigned s = (unsigned)w->id; s < ks.nshards; s += (unsigned)server.nworkers) {
        unsigned n = exec_active_expire(w, s, w->now_ms, budget);
        /* A shard with many expired keys gets more passes while time allows. */
        while (n > budget / 4 && hk_monotonic_us() < deadline) n = exec_active_expire(w, s, w->now_ms, budget);
    }
    latency_sample_if_needed("expire-cycle", (hk_monotonic_us() - start) / 1000);
}

static void worker_cron(struct worker *w) {
    stats_cron(w);
    clients_cron(w);
    expire_cron(w);
    pause_check_clients(w);
}

/* ---- the loop ----------------------------------------------------------- */

/* [0]: the plain TCP port's listeners, [1]: the TLS port's. */
static struct evsrc listen_src[2][HK_MAX_THREADS][HK_MAX_BIND];

static inline int is_listen_src(const void *p) {
    return p >= (const void *)&listen_src[0][0][0] && p < (const void *)(&listen_src[0][0][0] + 2 * HK_MAX_THREADS * HK_MAX_BIND);
}

static inline int listen_kind(const struct evsrc *src) { return src->kind == SRC_LISTEN_TLS ? ACC_TLS : ACC_TCP; }
static struct evsrc mailbox_src[HK_MAX_THREADS];
static struct evsrc unix_src = {SRC_UNIX, -1};

/* Whether an event's data.ptr is a client (not a listener or mailbox). */
static int is_client_src(const struct worker *w, const void *p) {
    if (is_listen_src(p)) return 0;
    return p != &unix_src && p != &mailbox_src[w->id];
}

void worker_busy_poll(struct worker *w) {
    if (w->busy_poll) return;
    struct epoll_event evs[64];
    int n = epoll_wait(w->epfd, evs, 64, 0);
    if (n < 0) n = 0;
    w->busy_poll = 1;
    w->now_ms = hk_mstime();
    for (int i = 0; i < n; i++) {
        void *p = evs[i].data.ptr;
        if (is_listen_src(p)) {
            accept_one(w, ((struct evsrc *)p)->fd, listen_kind(p));
            continue;
        }
        if (p == &unix_src) {
            accept_one(w, unix_src.fd, ACC_UNIX);
            continue;
        }
        if (!is_client_src(w, p)) continue;
        struct client *c = p;
        if (c->flags & (CLIENT_CLOSING | CLIENT_IN_SCRIPT)) continue;
        if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
            int r = client_read(c);
            if (r < 0 || (r > 0 && client_resume(c) < 0)) {
                client_close(c);
                continue;
            }
        }
        if ((evs[i].events & EPOLLOUT) && !(c->flags & CLIENT_CLOSE_ASAP) && !output_waits(c)) handle_writable(c);
    }
    /* Requests read in the same loop turn as the script's, before it ran,
     * wait in their query buffers where no event will report them. */
    for (struct client *c = w->clients; c; c = c->next)
        if (c->qpos < c->qlen && !(c->flags & (CLIENT_CLOSING | CLIENT_IN_SCRIPT)) && !client_is_waiting(c) &&
            client_resume(c) < 0)
            client_close(c);
    flush_pending(w);
    w->busy_poll = 0;
}

static void close_all_clients(struct worker *w) {
    free_closed(w);
    while (w->clients) {
        struct client *c = w->clients;
        c->flags &= ~CLIENT_PENDING_WRITE;
        client_write(c); /* best effort: a final reply such as SHUTDOWN's error */
        client_free(c);
    }
    w->pending_write = NULL;
}

static void *worker_main(void *arg) {
    struct worker *w = arg;
    current_worker = w;
    hk_alloc_thread_init();
    store_stats_sink = &w->sstats;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    struct epoll_event evs[256];
    w->now_ms = hk_mstime();
    w->last_cron_ms = w->now_ms;
    while (!atomic_load(&server.shutdown_asap)) {
        long long period = 1000 / (CFG(hz) ? CFG(hz) : 10);
        long long wait = w->last_cron_ms + period - hk_mstime();
        if (w->paused && wait > 5) wait = 5;
        if (w->blocked) wait = block_wait_ms(w, wait);
        if (wait < 0) wait = 0;
        int n = epoll_wait(w->epfd, evs, 256, (int)wait);
        w->now_ms = hk_mstime();
        /* maxmemory-clients for this turn (one relaxed load while off). */
        clientmem_turn(w);
        /* maxmemory: evict before this turn's commands run. */
        if (CFG(maxmemory) > 0 || (atomic_load_explicit(&admit_gate, memory_order_relaxed) & ADMIT_GATE_OOM))
            evict_turn(w);
        /* First read every readable client, then warm the keys of all
         * the requests that came in (dispatch_prefetch), then run them:
         * the cache misses of many clients' lookups overlap instead of
         * stalling one command after another. */
        /* Mail first: what other workers posted before this turn's
         * requests were sent (pub/sub messages a woken command published,
         * a wake batch's end) is delivered before those requests run, so
         * a message caused by another never overtakes it here. */
        for (int i = 0; i < n; i++)
            if (evs[i].data.ptr == &mailbox_src[w->id]) mailbox_drain(w);
        /* Replies held for the AOF whose writes are durable now go out
         * before this turn's commands add to them. */
        aof_release(w);
        struct client *readers[256];
        int nreaders = 0;
        for (int i = 0; i < n; i++) {
            if (!is_client_src(w, evs[i].data.ptr) || !(evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))) continue;
            struct client *c = evs[i].data.ptr;
            if (c->flags & CLIENT_CLOSING) continue;
            int r = client_read(c);
            if (r < 0) client_close(c);
            else if (r > 0) readers[nreaders++] = c;
        }
        if (nreaders) dispatch_prefetch(readers, nreaders);
        int ri = 0;
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            uint32_t e = evs[i].events;
            if (is_listen_src(p)) {
                accept_one(w, ((struct evsrc *)p)->fd, listen_kind(p));
            } else if (p == &unix_src) {
                accept_one(w, unix_src.fd, ACC_UNIX);
            } else if (p == &mailbox_src[w->id]) {
                /* drained above */
            } else {
                struct client *c = p;
                /* The readers are in event order, so each is met here once. */
                int was_read = ri < nreaders && readers[ri] == c;
                if (was_read) ri++;
                if (c->flags & CLIENT_CLOSING) continue;
                if (was_read && client_resume(c) < 0) {
                    client_close(c);
                    continue;
                }
                if ((e & EPOLLOUT) && !(c->flags & CLIENT_CLOSE_ASAP) && !output_waits(c)) handle_writable(c);
            }
        }
        if (w->blocked) block_timeouts(w);
        block_flush_wakes(w);
        pubsub_flush(w);
        /* This turn's records go to the journal thread now, before the
         * replies that may wait for them. */
        journal_turn_end(w->id);
        flush_pending(w);
        if (w->now_ms - w->last_cron_ms >= period || w->paused) {
            if (w->now_ms - w->last_cron_ms >= period) {
                w->last_cron_ms = w->now_ms;
                worker_cron(w);
            } else {
                pause_check_clients(w);
            }
            block_flush_wakes(w);
            pubsub_flush(w);
            journal_turn_end(w->id);
            flush_pending(w);
        }
        /* Client eviction after the turn's commands and writes (Redis's
         * beforeSleep), the cron's recount included. */
        if (w->cm.limit) clientmem_check(w);
        free_closed(w);
    }
    close_all_clients(w);
    block_flush_wakes(w);
    hk_free(w->wakes);
    w->wakes = NULL;
    pubsub_worker_free(w);
    ht_release(&w->by_id);
    tlsconf_worker_release(w);
    while (w->qb_nfree) hk_free(w->qb_pool[--w->qb_nfree]);
    return NULL;
}

/* ---- TCP listeners --------------------------------------------------------- */

/* The TCP listeners for one bind list and port: every worker's own
 * SO_REUSEPORT socket per address (fd[i][0..n[i]-1], the address each is
 * for in tok[i][]). `fresh` marks the sockets opened for this set, as
 * opposed to those it keeps from the set in force. */
struct lset {
    char *bind;
    int port;
    int *n;
    int (*fd)[HK_MAX_BIND];
    int (*tok)[HK_MAX_BIND];
    unsigned char (*fresh)[HK_MAX_BIND];
};

/* Per kind ([0] the plain port, [1] the TLS port, both on `bind`): the
 * set in force and one opened by CONFIG SET to replace it. Main sets the
 * first up before the workers start; after that only CONFIG SET touches
 * them, under its config_set_lock. The sockets of the set in force belong
 * to the workers, which alone close them (lset_install). */
static struct lset *live[2], *pending[2];

static struct lset *lset_new(const char *bind, int port) {
    struct lset *s = hk_calloc(1, sizeof(*s));
    s->bind = hk_strdup(bind);
    s->port = port;
    size_t n = (size_t)server.nworkers;
    s->n = hk_calloc(n, sizeof(*s->n));
    s->fd = hk_calloc(n, sizeof(*s->fd));
    s->tok = hk_calloc(n, sizeof(*s->tok));
    s->fresh = hk_calloc(n, sizeof(*s->fresh));
    return s;
}

/* Free s; with close_fresh, close the sockets it opened itself. */
static void lset_free(struct lset *s, int close_fresh) {
    if (!s) return;
    for (int i = 0; close_fresh && i < server.nworkers; i++)
        for (int k = 0; k < s->n[i]; k++)
            if (s->fresh[i][k]) close(s->fd[i][k]);
    hk_free(s->bind);
    hk_free(s->n);
    hk_free(s->fd);
    hk_free(s->tok);
    hk_free(s->fresh);
    hk_free(s);
}

/* Split a bind list into at most HK_MAX_BIND addresses (pointers into
 * copy, which the caller frees). */
static int bind_split(char *copy, char **addrs) {
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t && n < HK_MAX_BIND; t = strtok_r(NULL, " ", &save)) addrs[n++] = t;
    return n;
}

/* The listeners for bind/port: for each worker and address, the socket of
 * `keep` (the set in force) when it has one for the same address and port,
 * else a new one. An address written with a leading '-' may fail to bind.
 * Returns NULL, with what failed in err, when another does (the sockets
 * opened meanwhile are closed). */
static struct lset *lset_open(const char *bind, int port, const struct lset *keep, char *err, size_t errsize) {
    struct lset *s = lset_new(bind, port);
    if (!port) return s;
    char *copy = hk_strdup(bind), *kcopy = keep ? hk_strdup(keep->bind) : NULL;
    char *addrs[HK_MAX_BIND], *kaddrs[HK_MAX_BIND];
    int naddr = bind_split(copy, addrs), nk = kcopy && keep->port == port ? bind_split(kcopy, kaddrs) : 0;
    int backlog = (int)CFG(tcp_backlog);
    unsigned char skip[HK_MAX_BIND] = {0}; /* optional addresses another process holds */
    for (int i = 0; i < server.nworkers; i++) {
        for (int a = 0; a < naddr; a++) {
            int fd = -1;
            for (int k = 0; k < (nk ? keep->n[i] : 0) && fd < 0; k++)
                if (!strcmp(kaddrs[keep->tok[i][k]], addrs[a])) fd = keep->fd[i][k];
            int fresh = fd < 0;
            if (fresh) {
                int optional = addrs[a][0] == '-';
                const char *addr = addrs[a] + optional;
                char why[200];
                if (skip[a]) continue;
                if (i == 0 && (!keep || keep->port != port)) {
                    /* SO_REUSEPORT would let this bind share a port another
                     * process listens on (of the same user), splitting its
                     * connections with it: a plain bind first must succeed.
                     * (On a port this server listens on already the plain
                     * bind would fail against its own sockets.) The probe
                     * is bound, never listening: a client connecting in
                     * that moment cannot queue on it and be reset when it
                     * closes. */
                    if (net_bind_probe(addr, port, why, sizeof(why)) < 0) {
                        if (optional) {
                            skip[a] = 1;
                            continue;
                        }
                        snprintf(err, errsize, "%s:%d: %s", addr, port, why);
                        lset_free(s, 1);
                        s = NULL;
                        goto out;
                    }
                }
                fd = net_listen_tcp(addr, port, backlog, 1, why, sizeof(why));
                if (fd < 0 && optional) continue;
                if (fd < 0) {
                    snprintf(err, errsize, "%s:%d: %s", addr, port, why);
                    lset_free(s, 1);
                    s = NULL;
                    goto out;
                }
            }
            int k = s->n[i]++;
            s->fd[i][k] = fd;
            s->tok[i][k] = a;
            s->fresh[i][k] = (unsigned char)fresh;
        }
    }
out:
    hk_free(copy);
    hk_free(kcopy);
    return s;
}

/* On worker w's own thread: make its listeners those of s. A socket it
 * had and s keeps stays registered; one s drops is closed after what it
 * had queued is accepted (a connection arriving after that, in the moment
 * before the close, is refused); a new one is registered. */
static void lset_install(struct worker *w, const struct lset *s, int tls) {
    int i = w->id, n = s->n[i];
    int *fds = w->listen_fds[tls];
    int src_kind = tls ? SRC_LISTEN_TLS : SRC_LISTEN;
    struct evsrc *src = listen_src[tls][i];
    for (int k = 0; k < w->nlisten[tls]; k++) {
        int fd = fds[k], kept = 0;
        for (int j = 0; j < n; j++) kept |= s->fd[i][j] == fd;
        if (kept) continue;
        while (!accept_one(w, fd, tls ? ACC_TLS : ACC_TCP)) {
        }
        ev_del(w->epfd, fd);
        close(fd);
    }
    for (int k = 0; k < HK_MAX_BIND; k++) src[k] = (struct evsrc){src_kind, -1};
    for (int j = 0; j < n; j++) {
        int fd = s->fd[i][j], had = 0;
        for (int k = 0; k < w->nlisten[tls]; k++) had |= fds[k] == fd;
        fds[j] = fd;
        src[j] = (struct evsrc){src_kind, fd};
        if (had) ev_mod(w->epfd, fd, EPOLLIN, &src[j]);
        else ev_add(w->epfd, fd, EPOLLIN, &src[j]);
    }
    w->nlisten[tls] = n;
}

/* CONFIG SET bind/port/tls-port (config_set_lock held). The listeners for
 * the bind and ports now configured are opened next to those in force;
 * nothing changes for the workers until listeners_commit. Setting what is
 * in force drops a set opened earlier in the same CONFIG SET (its
 * rollback); a set already opened for what is configured is kept. */
int listeners_prepare(char *err, size_t errsize) {
    char *bind = cfg_get_string(&cfg.bind);
    int ok = 1;
    for (int k = 0; k < 2 && ok; k++) {
        int port = (int)(k ? CFG(tls_port) : CFG(port));
        if (pending[k] && pending[k]->port == port && !strcmp(pending[k]->bind, bind)) continue;
        lset_free(pending[k], 1);
        pending[k] = NULL;
        if (port == live[k]->port && !strcmp(bind, live[k]->bind)) continue;
        char why[256];
        pending[k] = lset_open(bind, port, live[k], why, sizeof(why));
        if (!pending[k]) {
            hk_log(LL_WARNING, "Failed to bind (%s): the listeners in force are kept", why);
            /* Redis's texts: a new port, or new addresses on the same one. */
            snprintf(err, errsize, "%s",
                     port != live[k]->port ? "Unable to listen on this port" : "Failed to bind to specified addresses.");
            ok = 0;
        }
    }
    if (!ok)
        for (int k = 0; k < 2; k++) {
            lset_free(pending[k], 1);
            pending[k] = NULL;
        }
    hk_free(bind);
    return ok;
}

struct lswap {
    struct lset *s[2]; /* NULL: that kind's set stays */
    mail_fn done;
    void *arg;
};

static void lswap_each(struct worker *w, void *arg) {
    struct lswap *j = arg;
    for (int k = 0; k < 2; k++)
        if (j->s[k]) lset_install(w, j->s[k], k);
}

static void lswap_done(struct worker *w, void *arg) {
    struct gather *g = arg;
    struct lswap *j = g->arg;
    if (j->done) j->done(w, j->arg);
    for (int k = 0; k < 2; k++) lset_free(j->s[k], 0);
    hk_free(j);
    hk_free(g);
}

int listeners_commit(mail_fn done, void *arg) {
    if (!pending[0] && !pending[1]) return 0;
    /* The workers install a copy of each set: `live` must already describe
     * it for the next CONFIG SET while they catch up (they take their
     * mail in order). */
    struct lswap *j = hk_calloc(1, sizeof(*j));
    for (int k = 0; k < 2; k++) {
        if (!pending[k]) continue;
        j->s[k] = lset_new(pending[k]->bind, pending[k]->port);
        for (int i = 0; i < server.nworkers; i++) {
            j->s[k]->n[i] = pending[k]->n[i];
            memcpy(j->s[k]->fd[i], pending[k]->fd[i], sizeof(pending[k]->fd[i]));
        }
        for (int i = 0; i < server.nworkers; i++) memset(pending[k]->fresh[i], 0, sizeof(pending[k]->fresh[i]));
        lset_free(live[k], 0);
        live[k] = pending[k];
        pending[k] = NULL;
        hk_log(LL_NOTICE, "Listening on %sport %d, bind '%s'", k ? "TLS " : "", live[k]->port, live[k]->bind);
    }
    j->done = done;
    j->arg = arg;
    worker_broadcast(lswap_each, lswap_done, j);
    return 1;
}

static void open_listeners(void) {
    char *bind = cfg_get_string(&cfg.bind);
    char err[256];
    if (CFG(tls_port) && !tlsconf_reload(err, sizeof(err))) {
        hk_log(LL_WARNING, "Failed to configure TLS. Check logs for more info.");
        exit(1);
    }
    for (int k = 0; k < 2; k++) {
        live[k] = lset_open(bind, (int)(k ? CFG(tls_port) : CFG(port)), NULL, err, sizeof(err));
        if (!live[k]) {
            hk_log(LL_WARNING, "Warning: Could not create server %sTCP listening socket %s", k ? "TLS " : "", err);
            exit(1);
        }
        for (int i = 0; i < server.nworkers; i++) lset_install(&server.workers[i], live[k], k);
        for (int i = 0; i < server.nworkers; i++) memset(live[k]->fresh[i], 0, sizeof(live[k]->fresh[i]));
    }
    hk_free(bind);
    char *us = cfg_get_string(&cfg.unixsocket);
    if (us[0]) {
        int fd = net_listen_unix(us, (unsigned)CFG(unixsocketperm), (int)CFG(tcp_backlog), err, sizeof(err));
        if (fd < 0) {
            hk_log(LL_WARNING, "Failed opening Unix socket %s: %s", us, err);
            exit(1);
        }
        unix_src.fd = fd;
        server.unix_fd = fd;
        for (int i = 0; i < server.nworkers; i++) ev_add(server.workers[i].epfd, fd, EPOLLIN | EPOLLEXCLUSIVE, &unix_src);
    }
    int listening = live[0]->n[0] > 0 || live[1]->n[0] > 0 || us[0];
    hk_free(us);
    if (!listening) {
        hk_log(LL_WARNING, "Configured to not listen anywhere, exiting.");
        exit(1);
    }
}

void workers_start(void) {
    server.workers = hk_calloc((size_t)server.nworkers, sizeof(struct worker));
    for (int i = 0; i < server.nworkers; i++) {
        struct worker *w = &server.workers[i];
        w->id = i;
        w->epfd = epoll_create1(EPOLL_CLOEXEC);
        w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        pthread_mutex_init(&w->mbox_lock, NULL);
        w->cmdstats = hk_calloc((size_t)commands_total(), sizeof(struct cmdstat));
        w->lathist = hk_calloc((size_t)commands_total(), sizeof(*w->lathist));
        w->errorstats = hk_calloc(HK_MAX_ERRSTATS, sizeof(stat_t));
        ctx_init(&w->sys_ctx);
        ht_init(&w->by_id);
        pubsub_worker_init(w);
        w->sys_ctx.w = w;
        mailbox_src[i].kind = SRC_MAILBOX;
        mailbox_src[i].fd = w->evfd;
        ev_add(w->epfd, w->evfd, EPOLLIN, &mailbox_src[i]);
    }
    open_listeners();
    for (int i = 0; i < server.nworkers; i++) {
        if (pthread_create(&server.workers[i].thread, NULL, worker_main, &server.workers[i]) != 0) {
            hk_log(LL_WARNING, "Can't create worker thread: %s", strerror(errno));
            exit(1);
        }
    }
}

static void wake(struct worker *w, void *arg) {
    (void)w;
    (void)arg;
}

void workers_stop(void) {
    atomic_store(&server.shutdown_asap, 1);
    for (int i = 0; i < server.nworkers; i++) worker_post(&server.workers[i], wake, NULL);
}

void workers_join(void) {
    for (int i = 0; i < server.nworkers; i++) pthread_join(server.workers[i].thread, NULL);
    for (int i = 0; i < server.nworkers; i++) {
        struct worker *w = &server.workers[i];
        for (int k = 0; k < 2; k++)
            for (int l = 0; l < w->nlisten[k]; l++) close(w->listen_fds[k][l]);
        /* Mail posted after the loop ended (a late broadcast, a lazy free
         * notification) is dropped, and so is any posted from now on. */
        pthread_mutex_lock(&w->mbox_lock);
        w->mbox_closed = 1;
        struct mail *m = w->mbox_head;
        w->mbox_head = w->mbox_tail = NULL;
        pthread_mutex_unlock(&w->mbox_lock);
        while (m) {
            struct mail *next = m->next;
            if (!pubsub_drop_mail(m->fn, m->arg) && !tracking_drop_mail(m->fn, m->arg)) block_drop_mail(m->fn, m->arg);
            hk_free(m);
            m = next;
        }
    }
}
