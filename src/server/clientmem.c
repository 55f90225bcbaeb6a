/* clientmem.c - a connection's memory, client eviction (maxmemory-clients)
 * and the CLIENT LIST line; see clientmem.h.
 *
 * Not here: key eviction (evict.c), output buffer limits (dispatch.c),
 * the query buffer limit (worker.c). */
#include "clientmem.h"
#include "acl.h"

#include "../core/alloc.h"
#include "config.h"
#include "pubsub.h"
#include "tracking.h"
#include "txn.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A subscription's share of its connection's name tables: an entry and its
 * bucket slot (the name itself aside), roughly what Redis counts. */
#define CM_SUB_BYTES 64

size_t clientmem_limit(void) {
    long long mc = CFG(maxmemory_clients);
    if (__builtin_expect(mc == 0, 1)) return 0;
    unsigned long long lim;
    if (mc < 0) {
        /* A percentage of maxmemory; none while maxmemory is unlimited. */
        long long mm = CFG(maxmemory);
        if (mm <= 0) return 0;
        lim = (unsigned long long)((double)mm * (double)-mc / 100);
    } else {
        lim = (unsigned long long)mc;
    }
    if (lim < CLIENTMEM_MIN_LIMIT) lim = CLIENTMEM_MIN_LIMIT;
    return lim > SIZE_MAX ? SIZE_MAX : (size_t)lim;
}

size_t client_mem_usage(const struct client *c) {
    /* A block that holds a shared pub/sub frame allocates only its header:
     * what it keeps alive counts through `pending` then. */
    size_t out = c->out.alloc > c->out.pending ? c->out.alloc : c->out.pending;
    size_t m = sizeof(*c) + c->qcap + out + (size_t)c->argv_cap * sizeof(hk_slice) +
               (size_t)c->req.cap * 2 * sizeof(size_t);
    if (c->name) m += strlen(c->name) + 1;
    if (c->lib_name) m += strlen(c->lib_name) + 1;
    if (c->lib_ver) m += strlen(c->lib_ver) + 1;
    if (c->txn) m += sizeof(*c->txn) + c->txn->mem;
    if (c->ps) {
        long long sub, psub, ssub;
        pubsub_client_counts(c, &sub, &psub, &ssub);
        m += (size_t)(sub + psub + ssub) * CM_SUB_BYTES;
    }
    return m;
}

/* ---- a worker's buckets ------------------------------------------------- */

static int bucket_of(size_t m) {
    if (m < 32 * 1024) return 0;
    return (64 - __builtin_clzll((unsigned long long)m)) - 15; /* 32 KB -> 1 */
}

static int top_bucket(const struct worker *w) {
    return w->cm.nonempty ? 63 - __builtin_clzll(w->cm.nonempty) : -1;
}

/* The most a bucket is searched for its biggest connection: a bucket
 * spans a factor of two, and the ones of big connections are short. */
#define CM_SCAN 64

static struct client *biggest_in(struct worker *w, int b) {
    struct client *best = NULL;
    int n = 0;
    for (struct client *c = w->cm.bucket[b]; c && n < CM_SCAN; c = c->cm_next, n++)
        if (!best || c->cm_mem > best->cm_mem) best = c;
    return best;
}

static void set_top(struct worker *w, size_t t) {
    if (t == w->cm.top_mine) return;
    w->cm.top_mine = t;
    atomic_store_explicit(&w->cm.top, t, memory_order_relaxed);
}

/* Keep top_mine exact after c moved from (old_b, old_mem) while the top
 * bucket was old_top. Bucket 0 is not searched: its connections are all
 * small, and it holds most of them. */
static void top_after(struct worker *w, const struct client *c, int old_b, size_t old_mem, int old_top) {
    int top = top_bucket(w);
    if (top <= 0) {
        set_top(w, top == 0 ? 1 : 0);
        return;
    }
    int in = c->cm_bucket == top, was = old_b == top && old_top == top;
    if (top != old_top) {
        set_top(w, biggest_in(w, top)->cm_mem);
    } else if (in && c->cm_mem >= w->cm.top_mine) {
        set_top(w, c->cm_mem);
    } else if (was && old_mem == w->cm.top_mine) {
        set_top(w, biggest_in(w, top)->cm_mem); /* the biggest shrank or left */
    }
}

static void bucket_unlink(struct worker *w, struct client *c) {
    int b = c->cm_bucket;
    if (b < 0) return;
    if (c->cm_prev) c->cm_prev->cm_next = c->cm_next;
    else w->cm.bucket[b] = c->cm_next;
    if (c->cm_next) c->cm_next->cm_prev = c->cm_prev;
    c->cm_prev = c->cm_next = NULL;
    c->cm_bucket = -1;
    if (!w->cm.bucket[b]) w->cm.nonempty &= ~(1ULL << b);
}

static void bucket_link(struct worker *w, struct client *c, int b) {
    c->cm_bucket = b;
    c->cm_prev = NULL;
    c->cm_next = w->cm.bucket[b];
    if (c->cm_next) c->cm_next->cm_prev = c;
    w->cm.bucket[b] = c;
    w->cm.nonempty |= 1ULL << b;
}

/* Count c with m bytes, in bucket b (-1: not evictable). */
static void place(struct worker *w, struct client *c, size_t m, int b) {
    size_t old_mem = c->cm_mem;
    int old_b = c->cm_bucket, old_top = top_bucket(w);
    if (m != old_mem) {
        w->cm.mine = w->cm.mine - old_mem + m;
        c->cm_mem = m;
        atomic_store_explicit(&w->cm.sum, w->cm.mine, memory_order_relaxed);
    }
    if (b != old_b) {
        bucket_unlink(w, c);
        if (b >= 0) bucket_link(w, c, b);
    }
    if (b >= 0 || old_b >= 0) top_after(w, c, old_b, old_mem, old_top);
}

void clientmem_update(struct client *c) {
    /* A connection on its way out (closed, killed, past its output limit)
     * neither counts nor is picked: it is about to free what it holds.
     * Replica links are not normal clients (Redis leaves them out too). */
    if (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_ASAP | CLIENT_REPLICA)) {
        clientmem_forget(c);
        return;
    }
    size_t m = client_mem_usage(c);
    place(c->w, c, m, (c->flags & CLIENT_NO_EVICT) ? -1 : bucket_of(m));
}

void clientmem_forget(struct client *c) {
    if (c->cm_mem || c->cm_bucket >= 0) place(c->w, c, 0, -1);
}

void clientmem_recount(struct worker *w) {
    for (struct client *c = w->clients; c; c = c->next) clientmem_update(c);
}

void clientmem_cron_one(struct worker *w, struct client *c, size_t *sum) {
    if (w->cm.limit) clientmem_update(c);
    else *sum += client_mem_usage(c);
}

void clientmem_cron_done(struct worker *w, size_t sum) {
    /* Off: the sum is still published, from here (INFO's
     * mem_clients_normal), as Redis tracks it in its cron. */
    if (!w->cm.limit) atomic_store_explicit(&w->cm.off_sum, sum, memory_order_relaxed);
}

size_t clientmem_total(void) {
    size_t n = 0;
    for (int i = 0; i < server.nworkers; i++) {
        size_t s = atomic_load_explicit(&server.workers[i].cm.sum, memory_order_relaxed);
        n += s ? s : atomic_load_explicit(&server.workers[i].cm.off_sum, memory_order_relaxed);
    }
    return n;
}

void clientmem_turn(struct worker *w) {
    size_t lim = clientmem_limit();
    if (__builtin_expect(lim != w->cm.limit, 0)) {
        size_t was = w->cm.limit;
        w->cm.limit = lim;
        w->cm.warned = 0;
        if (!lim) {
            /* Off: nothing is counted until it comes back on. */
            for (struct client *c = w->clients; c; c = c->next) {
                c->cm_mem = 0;
                c->cm_bucket = -1;
                c->cm_prev = c->cm_next = NULL;
            }
            memset(w->cm.bucket, 0, sizeof(w->cm.bucket));
            w->cm.nonempty = 0;
            w->cm.mine = w->cm.others = 0;
            atomic_store_explicit(&w->cm.sum, 0, memory_order_relaxed);
            set_top(w, 0);
        } else if (!was) {
            atomic_store_explicit(&w->cm.off_sum, 0, memory_order_relaxed);
            clientmem_recount(w);
        }
    }
    if (lim) atomic_store_explicit(&w->cm.beat_ms, w->now_ms, memory_order_relaxed);
}

/* ---- eviction ------------------------------------------------------------- */

/* How old another worker's heartbeat may be before its connections stop
 * holding this worker's back: three cron periods (an idle worker wakes at
 * least once a period), so a worker stuck in a long script does not stop
 * the others from evicting. */
static long long stale_ms(void) {
    long long hz = CFG(hz);
    long long period = 1000 / (hz > 0 ? hz : 10);
    return period * 3 > 300 ? period * 3 : 300;
}

static void evict(struct worker *w, struct client *c) {
    struct hk_buf line = {0};
    client_info_cat(&line, c, c->lastcmd, NULL);
    hk_log(LL_NOTICE, "Evicting client: %.*s", (int)line.len, line.p ? line.p : "");
    hk_free(line.p);
    stat_add(&w->stats.evicted_clients, 1);
    /* Freed at the end of the loop turn, like any closed connection; its
     * bytes leave the sums now. */
    client_close(c);
    clientmem_forget(c);
}

void clientmem_check(struct worker *w) {
    if (!w->cm.limit || w->busy_poll || w->cmd_client) return;
    long long stale = stale_ms();
    for (;;) {
        size_t others = 0, otop = 0, oany = 0;
        int owho = -1;
        for (int i = 0; i < server.nworkers; i++) {
            struct worker *o = &server.workers[i];
            if (o == w) continue;
            others += atomic_load_explicit(&o->cm.sum, memory_order_relaxed);
            size_t t = atomic_load_explicit(&o->cm.top, memory_order_relaxed);
            if (t > oany) oany = t;
            if (t > otop && w->now_ms - atomic_load_explicit(&o->cm.beat_ms, memory_order_relaxed) <= stale) {
                otop = t;
                owho = i;
            }
        }
        w->cm.others = others;
        /* Redis evicts while the total is at the limit or over it. */
        if (w->cm.mine + others < w->cm.limit) {
            w->cm.warned = 0;
            return;
        }
        if (!w->cm.top_mine) {
            if (!oany && !w->cm.warned) {
                hk_log(LL_WARNING, "Over client maxmemory after evicting all evictable clients");
                w->cm.warned = 1;
            }
            return;
        }
        /* A bigger connection lives on another worker: it goes first, from
         * its own thread (the lower worker first among equals, so two do
         * not both evict for one excess). That worker is woken to check
         * now rather than at its next cron; one wake-up at a time. */
        if (otop > w->cm.top_mine || (otop == w->cm.top_mine && owho < w->id)) {
            struct worker *o = &server.workers[owho];
            if (!atomic_exchange_explicit(&o->cm.poked, 1, memory_order_relaxed)) worker_post(o, clientmem_wake, NULL);
            return;
        }
        evict(w, biggest_in(w, top_bucket(w)));
    }
}

void clientmem_wake(struct worker *w, void *arg) {
    (void)arg;
    atomic_store_explicit(&w->cm.poked, 0, memory_order_relaxed);
    clientmem_turn(w);
    clientmem_check(w);
}

/* ---- the CLIENT LIST line ------------------------------------------------ */

static void buf_printf(struct hk_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(struct hk_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0) return;
    /* Room for the text and vsnprintf's terminator, which is not kept. */
    if (b->cap - b->len < (size_t)n + 1) {
        size_t ncap = b->cap ? b->cap : 256;
        while (ncap - b->len < (size_t)n + 1) ncap *= 2;
        b->p = hk_realloc(b->p, ncap);
        b->cap = ncap;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void client_run_view_of(const struct client *c, struct client_run_view *v) {
    v->qbuf = c->qlen;
    v->qfree = c->qcap - c->qlen;
    v->argv_mem = 0;
    for (int i = 0; i < c->argc; i++) v->argv_mem += c->argv[i].len;
    v->tot_cmds = c->tot_cmds;
}

void client_info_cat(struct hk_buf *b, struct client *c, const struct command *cmd,
                     const struct client_run_view *run) {
    char flags[16], *f = flags;
    if (c->flags & CLIENT_MONITOR) *f++ = 'O'; /* first, where Redis puts it */
    if (c->flags & CLIENT_PUBSUB) *f++ = 'P';
    if (c->txn && c->txn->active) *f++ = 'x';
    if (c->flags & (CLIENT_PAUSED | CLIENT_BLOCKED)) *f++ = 'b'; /* blocked, or postponed by CLIENT PAUSE */
    unsigned tmode = tracking_mode(c);
    if (c->flags & CLIENT_TRACKING) *f++ = 't';
    if (tmode & TRACK_BROKEN_REDIR) *f++ = 'R';
    if (tmode & TRACK_BCAST) *f++ = 'B';
    int doomed = c->txn && atomic_load(&c->txn->dirty_cas);
    if (doomed) *f++ = 'd';
    if (c->flags & CLIENT_CLOSE_AFTER_REPLY) *f++ = 'c';
    if (c->flags & CLIENT_CLOSE_ASAP) *f++ = 'A';
    if (c->flags & CLIENT_UNIX_SOCKET) *f++ = 'U';
    if (c->flags & CLIENT_NO_EVICT) *f++ = 'e';
    if (c->flags & CLIENT_NO_TOUCH) *f++ = 'T';
    if (f == flags) *f++ = 'N';
    *f = '\0';
    char events[3], *e = events;
    if (!(c->flags & CLIENT_READ_STOPPED)) *e++ = 'r';
    if (c->flags & CLIENT_WANT_WRITE) *e++ = 'w';
    *e = '\0';

    long long now = c->w ? c->w->now_ms : hk_mstime();
    long long age = (now - c->ctime_ms) / 1000, idle = (now - c->last_ms) / 1000;
    if (age < 0) age = 0;
    if (idle < 0) idle = 0;
    struct client_run_view between;
    if (!run) {
        between.qbuf = c->qlen - c->qpos;
        between.qfree = c->qbuf ? c->qcap - between.qbuf : 0;
        between.argv_mem = 0;
        for (int i = 0; i < c->argc; i++) between.argv_mem += c->argv[i].len;
        between.tot_cmds = c->tot_cmds;
        run = &between;
    }
    /* The head block plays the part of Redis's fixed reply buffer, the
     * blocks after it the part of its reply list. */
    const struct ob_block *head = c->out.head;
    size_t rbs = head ? head->cap : 0, rbp = head ? head->len : 0;
    if (c->rbuf_peak > rbp) rbp = c->rbuf_peak;
    size_t obl = head ? head->len - head->sent : 0;
    size_t oll = c->out.nblocks > 1 ? (size_t)c->out.nblocks - 1 : 0;
    size_t omem = c->out.pending > obl ? c->out.pending - obl : 0;
    size_t tot = client_mem_usage(c);

    /* Redis 8.0's fields in its order. redir is the tracking redirect
     * (0 for none) while tracking, -1 otherwise.
     * multi is the number of queued commands (-1 outside MULTI), watch the
     * keys watched. io-thread is the worker that owns
     * the connection; tot-cmds counts its finished commands (a blocked one
     * when it answers). */
    long long sub, psub, ssub;
    pubsub_client_counts(c, &sub, &psub, &ssub);
    long long redir = (c->flags & CLIENT_TRACKING) ? (long long)tracking_redirect(c) : -1;
    buf_printf(b,
               "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%lld psub=%lld "
               "ssub=%lld multi=%d watch=%d qbuf=%zu qbuf-free=%zu argv-mem=%zu multi-mem=%zu rbs=%zu rbp=%zu "
               "obl=%zu oll=%zu omem=%zu tot-mem=%zu events=%s cmd=%s user=%s redir=%lld resp=%d "
               "lib-name=%s lib-ver=%s io-thread=%d tot-net-in=%lld tot-net-out=%lld tot-cmds=%lld",
               (unsigned long long)c->id, c->addr, c->laddr, c->fd, c->name ? c->name : "", age, idle, flags,
               c->ctx.db, sub, psub, ssub, c->txn && c->txn->active ? c->txn->n : -1,
               c->txn && !doomed ? c->txn->nw : 0, run->qbuf, run->qfree, run->argv_mem, c->txn ? c->txn->mem : 0,
               rbs, rbp, obl, oll, omem, tot, events, cmd ? cmd->fullname : "NULL", acl_client_name(c), redir, c->ctx.resp,
               c->lib_name ? c->lib_name : "", c->lib_ver ? c->lib_ver : "", c->w ? c->w->id : 0, c->tot_net_in,
               c->tot_net_out, run->tot_cmds);
}
