/* tracking.c - client-side caching (tracking.h): the table of keys that
 * clients may hold, the BCAST prefixes, and the delivery of invalidation
 * messages to clients on any worker. It does not parse or answer the
 * CLIENT subcommands (src/cmd/client.c does).
 *
 * The key table maps a key name (any database: Redis tracks names only)
 * to the clients that read it, each as (client id, worker). It is split
 * into stripes by the key's hash, each a chained hash table behind its own
 * mutex. A read of a tracking client adds its id under the stripe lock,
 * while its command still holds the key's shard lock; a write to the key,
 * also under the shard lock, takes the key's entry out of the table and
 * mails each worker concerned one message naming the key and its clients
 * there. So a read and a write of one key are ordered by the shard lock,
 * and a client is told about every write that follows a read it was
 * answered. Entries name clients by id only: a client that stopped
 * tracking or went away is dropped when a message finds it gone, as Redis
 * drops its ids lazily.
 *
 * BCAST prefixes live in one small table behind a reader-writer lock,
 * read by every write while any prefix exists. The keys a command writes
 * under a client's prefixes are gathered on the writer's thread and sent
 * as one message per client once the command's locks are released (Redis
 * gathers a whole loop turn's keys per prefix; a command is the unit
 * here, and background expiry sends each key alone).
 *
 * Delivery. The message goes to the tracking client's worker, which looks
 * the client up, applies what only it knows (still tracking, NOLOOP,
 * BCAST or not, its redirect) and appends the frame: a RESP3 push to
 * itself, or, with REDIRECT, a frame for the redirect target, posted to
 * the target's worker (a RESP3 push, or a message on
 * __redis__:invalidate when the target speaks RESP2 and is subscribed).
 * A target that is gone answers back, and the tracking client is marked
 * broken (and told, in RESP3), as Redis does. A message for the writing
 * connection itself is mailed too, so it follows the command's reply.
 *
 * Lock order: shard locks -> a stripe mutex or the prefix lock (never two
 * of them at once) -> mbox_lock. Nothing here takes a shard lock. */
#include "tracking.h"

#include "../core/alloc.h"
#include "../core/buf.h"
#include "../proto/respw.h"
#include "../store/db.h"
#include "../store/events.h"
#include "config.h"
#include "exec.h"
#include "pubsub.h"
#include "server.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Atomic int tracking_clients;

/* ---- state ---------------------------------------------------------------- */

/* One client that may hold a key, or that listens to a prefix. */
struct tref {
    uint64_t id;
    int worker;
};

struct tkey {
    struct tkey *next;
    uint64_t hash;
    struct tref *refs;
    int n, cap;
    size_t klen;
    char key[];
};

#define TR_STRIPES 64

struct tstripe {
    pthread_mutex_t mu;
    struct tkey **b; /* buckets, a power of two of them */
    size_t nb, n;
    size_t evict_at; /* bucket where eviction looks next */
} __attribute__((aligned(64)));

static struct tstripe stripes[TR_STRIPES] = {[0 ... TR_STRIPES - 1] = {.mu = PTHREAD_MUTEX_INITIALIZER}};
static _Atomic long long total_keys, total_items;
static _Atomic unsigned evict_stripe;

struct tpfx {
    char *p;
    size_t len;
    struct tref *refs;
    int n, cap;
};

static pthread_rwlock_t pfx_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct tpfx *pfx; /* guarded by pfx_lock */
static int npfx, pfxcap;
static _Atomic int pfx_count; /* npfx, for the writers' quick test */

/* A client's own state, on its worker only. */
struct ctrack {
    unsigned mode;    /* TRACK_* */
    uint64_t redir;   /* 0: none */
    int redir_worker; /* -1: not known */
    int caching;      /* CLIENT CACHING given ... */
    long long caching_at; /* ... for the command that runs when tot_cmds is this */
    char **pfx;       /* BCAST prefixes, sorted */
    size_t *plen;
    int npfx;
};

static inline struct tstripe *stripe_of(uint64_t h) { return &stripes[h >> 58]; }

static void refs_add(struct tref **refs, int *n, int *cap, uint64_t id, int worker) {
    for (int i = 0; i < *n; i++)
        if ((*refs)[i].id == id) {
            (*refs)[i].worker = worker;
            return;
        }
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 2;
        *refs = hk_realloc(*refs, (size_t)*cap * sizeof(struct tref));
    }
    (*refs)[(*n)++] = (struct tref){id, worker};
}

/* ---- the key table (stripe locks) ------------------------------------------ */

static struct tkey **stripe_find(struct tstripe *s, uint64_t h, const char *key, size_t klen) {
    if (!s->nb) return NULL;
    for (struct tkey **p = &s->b[h & (s->nb - 1)]; *p; p = &(*p)->next)
        if ((*p)->hash == h && (*p)->klen == klen && memcmp((*p)->key, key, klen) == 0) return p;
    return NULL;
}

static void stripe_grow(struct tstripe *s) {
    size_t nb = s->nb ? s->nb * 2 : 16;
    struct tkey **b = hk_calloc(nb, sizeof(*b));
    for (size_t i = 0; i < s->nb; i++) {
        struct tkey *e = s->b[i];
        while (e) {
            struct tkey *next = e->next;
            size_t j = e->hash & (nb - 1);
            e->next = b[j];
            b[j] = e;
            e = next;
        }
    }
    hk_free(s->b);
    s->b = b;
    s->nb = nb;
}

static void tkey_free(struct tkey *e) {
    hk_free(e->refs);
    hk_free(e);
}

/* Record that client id (of worker) may cache the key. */
static void table_add(const char *key, size_t klen, uint64_t h, uint64_t id, int worker) {
    struct tstripe *s = stripe_of(h);
    pthread_mutex_lock(&s->mu);
    struct tkey **p = stripe_find(s, h, key, klen);
    struct tkey *e;
    if (p) {
        e = *p;
    } else {
        if (s->n >= s->nb) stripe_grow(s);
        e = hk_malloc(sizeof(*e) + klen);
        e->hash = h;
        e->refs = NULL;
        e->n = e->cap = 0;
        e->klen = klen;
        memcpy(e->key, key, klen);
        size_t j = h & (s->nb - 1);
        e->next = s->b[j];
        s->b[j] = e;
        s->n++;
        atomic_fetch_add_explicit(&total_keys, 1, memory_order_relaxed);
    }
    int before = e->n;
    refs_add(&e->refs, &e->n, &e->cap, id, worker);
    if (e->n != before) atomic_fetch_add_explicit(&total_items, 1, memory_order_relaxed);
    pthread_mutex_unlock(&s->mu);
}

static void uncount(struct tkey *e) {
    atomic_fetch_sub_explicit(&total_keys, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&total_items, e->n, memory_order_relaxed);
}

/* Take the key's entry out of the table; NULL when nobody tracks it. */
static struct tkey *table_take(const char *key, size_t klen, uint64_t h) {
    struct tstripe *s = stripe_of(h);
    pthread_mutex_lock(&s->mu);
    struct tkey **p = stripe_find(s, h, key, klen), *e = NULL;
    if (p) {
        e = *p;
        *p = e->next;
        s->n--;
        uncount(e);
    }
    pthread_mutex_unlock(&s->mu);
    return e;
}

/* Take some entry of stripe s out, NULL when it has none. */
static struct tkey *table_take_any(struct tstripe *s) {
    pthread_mutex_lock(&s->mu);
    struct tkey *e = NULL;
    for (size_t j = 0; s->n && j < s->nb; j++) {
        size_t b = (s->evict_at + j) & (s->nb - 1);
        if (s->b[b]) {
            e = s->b[b];
            s->b[b] = e->next;
            s->evict_at = b + 1;
            s->n--;
            uncount(e);
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return e;
}

/* ---- messages --------------------------------------------------------------- */

/* One client a message is for, and whether it is for it as a BCAST
 * listener or as a reader of the key. */
struct itgt {
    uint64_t id;
    int worker;
    int bcast;
};

struct tvec {
    struct itgt *v;
    int n, cap;
    struct itgt inl[16];
};

static void tvec_push(struct tvec *t, uint64_t id, int worker, int bcast) {
    if (t->n == t->cap) {
        int cap = t->cap * 2;
        struct itgt *v = hk_malloc((size_t)cap * sizeof(*v));
        memcpy(v, t->v, (size_t)t->n * sizeof(*v));
        if (t->v != t->inl) hk_free(t->v);
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (struct itgt){id, worker, bcast};
}

static void tvec_init(struct tvec *t) {
    t->v = t->inl;
    t->n = 0;
    t->cap = (int)(sizeof(t->inl) / sizeof(t->inl[0]));
}

static void tvec_free(struct tvec *t) {
    if (t->v != t->inl) hk_free(t->v);
}

/* A key's invalidation for the tracking clients of one worker, or (flush)
 * the null invalidation for all of them. */
struct inv_mail {
    uint64_t writer; /* the writing connection, 0: none (NOLOOP) */
    int flush;
    int n;
    size_t klen;
    struct {
        uint64_t id;
        int bcast;
    } t[]; /* n of them, then the key's bytes */
};

static inline char *inv_key(struct inv_mail *m) { return (char *)(m->t + m->n); }

/* The value part of an invalidation (what follows "invalidate" or the
 * channel name): an array of key names, or the null of a flush. */
static void value_of_key(struct hk_buf *v, const char *key, size_t klen) {
    char num[48];
    int n = snprintf(num, sizeof(num), "*1\r\n$%zu\r\n", klen);
    hk_buf_add(v, num, (size_t)n, 32 + klen);
    hk_buf_add(v, key, klen, 0);
    hk_buf_add(v, "\r\n", 2, 0);
}

/* The null is written in the tracking client's protocol, whoever receives
 * it (Redis does so). */
static const char *flush_value(const struct client *c) { return c->ctx.resp >= 3 ? "_\r\n" : "$-1\r\n"; }

/* A frame for a redirect target: built where the target lives, since it
 * depends on the target's protocol and subscriptions. */
struct redir_mail {
    uint64_t redir;  /* the target */
    uint64_t origin; /* the tracking client */
    int origin_worker;
    int search; /* the target's worker is not known: try each in turn */
    size_t vlen;
    char val[];
};

/* Write one invalidation with value val into r's output: a push in RESP3;
 * in RESP2 a __redis__:invalidate message, only to a redirect target that
 * is subscribed (RESP2 has no other way to carry it). */
static void deliver(struct client *r, int redirected, const char *val, size_t vlen) {
    static const char push[] = ">2\r\n$10\r\ninvalidate\r\n";
    static const char msg[] = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";
    const char *head;
    size_t hlen;
    if (r->ctx.resp >= 3) {
        head = push;
        hlen = sizeof(push) - 1;
    } else if (redirected && (r->flags & CLIENT_PUBSUB)) {
        head = msg;
        hlen = sizeof(msg) - 1;
    } else {
        return;
    }
    struct hk_buf b = {0};
    hk_buf_add(&b, head, hlen, hlen + vlen);
    hk_buf_add(&b, val, vlen, 0);
    pubsub_push(r, b.p, b.len);
    hk_free(b.p);
}

/* c's redirect target is gone: mark it, and tell c in RESP3. */
static void redir_broken(struct client *c) {
    c->track->mode |= TRACK_BROKEN_REDIR;
    if (c->ctx.resp < 3) return;
    char buf[96];
    int n = snprintf(buf, sizeof(buf), ">2\r\n$21\r\ntracking-redir-broken\r\n:%llu\r\n",
                     (unsigned long long)c->track->redir);
    pubsub_push(c, buf, (size_t)n);
}

static void broken_mail(struct worker *w, void *arg) {
    struct redir_mail *m = arg;
    struct client *c = worker_find_client(w, m->origin);
    if (c && (c->flags & CLIENT_TRACKING) && c->track && c->track->redir == m->redir) redir_broken(c);
    hk_free(m);
}

static void redir_deliver_mail(struct worker *w, void *arg) {
    struct redir_mail *m = arg;
    struct client *r = worker_find_client(w, m->redir);
    if (r) {
        deliver(r, 1, m->val, m->vlen);
    } else if (m->search && w->id + 1 < server.nworkers) {
        worker_post(&server.workers[w->id + 1], redir_deliver_mail, m);
        return;
    } else {
        worker_post(&server.workers[m->origin_worker], broken_mail, m);
        return;
    }
    hk_free(m);
}

/* Send tracking client c (on worker w, its thread) an invalidation. */
static void track_send(struct worker *w, struct client *c, const char *val, size_t vlen) {
    struct ctrack *ct = c->track;
    if (!ct->redir) {
        deliver(c, 0, val, vlen);
        return;
    }
    if (ct->redir_worker == w->id) {
        struct client *r = worker_find_client(w, ct->redir);
        if (r) deliver(r, 1, val, vlen);
        else redir_broken(c);
        return;
    }
    struct redir_mail *m = hk_malloc(sizeof(*m) + vlen);
    m->redir = ct->redir;
    m->origin = c->id;
    m->origin_worker = w->id;
    m->search = ct->redir_worker < 0;
    m->vlen = vlen;
    memcpy(m->val, val, vlen);
    worker_post(&server.workers[m->search ? 0 : ct->redir_worker], redir_deliver_mail, m);
}

/* On a tracking client's worker: the clients a key's message names. */
static void inv_mail_run(struct worker *w, void *arg) {
    struct inv_mail *m = arg;
    if (m->flush) {
        for (struct client *c = w->clients; c; c = c->next)
            if ((c->flags & CLIENT_TRACKING) && c->track) {
                const char *v = flush_value(c);
                track_send(w, c, v, strlen(v));
            }
        hk_free(m);
        return;
    }
    struct hk_buf v = {0};
    value_of_key(&v, inv_key(m), m->klen);
    for (int i = 0; i < m->n; i++) {
        struct client *c = worker_find_client(w, m->t[i].id);
        if (!c || !(c->flags & CLIENT_TRACKING) || !c->track) continue;
        struct ctrack *ct = c->track;
        /* A read remembered before the client switched to BCAST, or a
         * prefix message that crossed its switch back: not for it. */
        if (!(ct->mode & TRACK_BCAST) != !m->t[i].bcast) continue;
        if ((ct->mode & TRACK_NOLOOP) && m->writer == c->id) continue;
        track_send(w, c, v.p, v.len);
    }
    hk_free(v.p);
    hk_free(m);
}

/* Mail each worker its part of targets t for key (flush: none). */
static void post_targets(uint64_t writer, const char *key, size_t klen, struct tvec *t) {
    for (int wi = 0; wi < server.nworkers; wi++) {
        int n = 0;
        for (int i = 0; i < t->n; i++)
            if (t->v[i].worker == wi) n++;
        if (!n) continue;
        struct inv_mail *m = hk_malloc(sizeof(*m) + (size_t)n * sizeof(m->t[0]) + klen);
        m->writer = writer;
        m->flush = 0;
        m->n = n;
        m->klen = klen;
        int k = 0;
        for (int i = 0; i < t->n; i++)
            if (t->v[i].worker == wi) {
                m->t[k].id = t->v[i].id;
                m->t[k].bcast = t->v[i].bcast;
                k++;
            }
        memcpy(inv_key(m), key, klen);
        worker_post(&server.workers[wi], inv_mail_run, m);
    }
}

static void invalidate_entry(struct tkey *e, struct tvec *t) {
    for (int i = 0; i < e->n; i++) tvec_push(t, e->refs[i].id, e->refs[i].worker, 0);
}

/* ---- BCAST batches -------------------------------------------------------------- */

/* The BCAST invalidations of the running command, sent once its locks are
 * released (exec_after_unlock): each listening client gets one message
 * with every key the command wrote under its prefixes, in byte order and
 * once each, as Redis's per-prefix key sets give them (Redis gathers a
 * whole loop turn; a command is the unit here). Background work (active
 * expiry) sends each key at once. Per thread. */
struct bitem {
    uint64_t id;
    int worker;
    size_t koff, klen;
};

static _Thread_local struct {
    struct bitem *v;
    int n, cap;
    struct hk_buf keys;
    uint64_t writer;
    int registered;        /* a flush waits in the command's deferred work */
    uint64_t cmd_client;   /* the command the batch belongs to: its connection ... */
    long long cmd_no;      /* ... and that connection's command count */
} bb;

struct bmail {
    uint64_t id, writer;
    size_t vlen;
    char val[];
};

static void bmail_run(struct worker *w, void *arg) {
    struct bmail *m = arg;
    struct client *c = worker_find_client(w, m->id);
    if (c && (c->flags & CLIENT_TRACKING) && c->track && (c->track->mode & TRACK_BCAST) &&
        !((c->track->mode & TRACK_NOLOOP) && m->writer == c->id))
        track_send(w, c, m->val, m->vlen);
    hk_free(m);
}

static int cmp_bitem(const void *pa, const void *pb) {
    const struct bitem *a = pa, *b = pb;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    size_t m = a->klen < b->klen ? a->klen : b->klen;
    int r = memcmp(bb.keys.p + a->koff, bb.keys.p + b->koff, m);
    if (r) return r;
    return (a->klen > b->klen) - (a->klen < b->klen);
}

static void bcast_flush(void *arg) {
    (void)arg;
    bb.registered = 0;
    if (!bb.n) return;
    qsort(bb.v, (size_t)bb.n, sizeof(bb.v[0]), cmp_bitem);
    struct hk_buf v = {0};
    for (int i = 0; i < bb.n;) {
        int j = i, nk = 0;
        v.len = 0;
        for (; j < bb.n && bb.v[j].id == bb.v[i].id; j++)
            if (j == i || cmp_bitem(&bb.v[j - 1], &bb.v[j]) != 0) nk++;
        respw_header(&v, '*', nk, 64);
        for (int k = i; k < j; k++) {
            if (k > i && cmp_bitem(&bb.v[k - 1], &bb.v[k]) == 0) continue;
            respw_bulk(&v, bb.keys.p + bb.v[k].koff, bb.v[k].klen, 0);
        }
        struct bmail *m = hk_malloc(sizeof(*m) + v.len);
        m->id = bb.v[i].id;
        m->writer = bb.writer;
        m->vlen = v.len;
        memcpy(m->val, v.p, v.len);
        worker_post(&server.workers[bb.v[i].worker], bmail_run, m);
        i = j;
    }
    hk_free(v.p);
    /* Nothing is kept between batches: a worker thread has no exit hook
     * here to free it. */
    hk_free(bb.v);
    hk_free(bb.keys.p);
    bb.v = NULL;
    bb.n = bb.cap = 0;
    bb.keys = (struct hk_buf){0};
}

static void bcast_add(uint64_t id, int worker, size_t klen, size_t koff) {
    if (bb.n == bb.cap) {
        bb.cap = bb.cap ? bb.cap * 2 : 16;
        bb.v = hk_realloc(bb.v, (size_t)bb.cap * sizeof(bb.v[0]));
    }
    bb.v[bb.n++] = (struct bitem){id, worker, koff, klen};
}

/* ---- the write hook ---------------------------------------------------------- */

/* The connection a context runs for: its own, or, for a script's context
 * (which has none), the connection whose command runs on this worker. */
static inline struct client *ctx_client(const struct cmd_ctx *c) {
    if (!c) return NULL;
    if (c->cl) return c->cl;
    return (c->flags & CTX_NESTED) && c->w ? c->w->cmd_client : NULL;
}

void tracking_key_written(struct cmd_ctx *c, const struct keyref *k, int ev) {
    /* Notices, not changes: nothing a client holds is stale. */
    if (ev == KEV_NONE || kev_info[ev].ready == 3) return;
    struct client *wcl = ctx_client(c);
    uint64_t writer = wcl ? wcl->id : 0;
    struct tvec t;
    tvec_init(&t);
    if (atomic_load_explicit(&pfx_count, memory_order_relaxed)) {
        /* A connection's command on this worker: its deferred work sends
         * the batch. A batch left by a command whose deferred work did not
         * run goes now. */
        int defer = wcl && c->w && c->w == current_worker;
        if (bb.n && (!defer || bb.cmd_client != wcl->id || bb.cmd_no != wcl->tot_cmds)) bcast_flush(NULL);
        int before = bb.n;
        size_t koff = bb.keys.len;
        pthread_rwlock_rdlock(&pfx_lock);
        for (int i = 0; i < npfx; i++) {
            struct tpfx *p = &pfx[i];
            if (p->len > k->klen || memcmp(p->p, k->key, p->len) != 0) continue;
            for (int j = 0; j < p->n; j++) bcast_add(p->refs[j].id, p->refs[j].worker, k->klen, koff);
        }
        pthread_rwlock_unlock(&pfx_lock);
        if (bb.n > before) {
            hk_buf_add(&bb.keys, k->key, k->klen, 256);
            if (!before) bb.writer = writer;
            if (!defer) {
                bcast_flush(NULL);
            } else if (!bb.registered) {
                bb.registered = 1;
                bb.cmd_client = wcl->id;
                bb.cmd_no = wcl->tot_cmds;
                exec_after_unlock(c, bcast_flush, NULL);
            }
        }
    }
    struct tkey *e = table_take(k->key, k->klen, k->hash);
    if (e) {
        invalidate_entry(e, &t);
        tkey_free(e);
    }
    if (t.n) post_targets(writer, k->key, k->klen, &t);
    tvec_free(&t);
}

void tracking_flush_all(struct cmd_ctx *c) {
    /* SWAPDB sends nothing in Redis (only FLUSHALL and FLUSHDB do), though
     * tracking is by key name and the names now stand for other values. */
    if (c && c->cmd && strcmp(c->cmd->fullname, "swapdb") == 0) return;
    for (int wi = 0; wi < server.nworkers; wi++) {
        struct inv_mail *m = hk_malloc(sizeof(*m));
        m->writer = 0;
        m->flush = 1;
        m->n = 0;
        m->klen = 0;
        worker_post(&server.workers[wi], inv_mail_run, m);
    }
    /* Every key is invalid now: the table starts over. */
    for (int i = 0; i < TR_STRIPES; i++) {
        struct tstripe *s = &stripes[i];
        pthread_mutex_lock(&s->mu);
        struct tkey **b = s->b;
        size_t nb = s->nb;
        s->b = NULL;
        s->nb = s->n = s->evict_at = 0;
        for (size_t j = 0; j < nb; j++)
            for (struct tkey *e = b[j]; e; e = e->next) uncount(e);
        pthread_mutex_unlock(&s->mu);
        for (size_t j = 0; j < nb; j++) {
            struct tkey *e = b[j];
            while (e) {
                struct tkey *next = e->next;
                tkey_free(e);
                e = next;
            }
        }
        hk_free(b);
    }
}

/* Over tracking-table-max-keys: forget keys, telling their clients as if
 * the keys had changed (Redis evicts random keys; here the stripes are
 * visited in turn). Each call does a bounded amount of work; the next read
 * continues. */
static void table_limit(long long max) {
    for (int effort = 0; effort < 4 * TR_STRIPES && atomic_load_explicit(&total_keys, memory_order_relaxed) > max;
         effort++) {
        unsigned si = atomic_fetch_add_explicit(&evict_stripe, 1, memory_order_relaxed) % TR_STRIPES;
        struct tkey *e = table_take_any(&stripes[si]);
        if (!e) continue;
        struct tvec t;
        tvec_init(&t);
        invalidate_entry(e, &t);
        post_targets(0, e->key, e->klen, &t);
        tvec_free(&t);
        tkey_free(e);
    }
}

void tracking_remember_keys(struct cmd_ctx *c) {
    struct client *cl = ctx_client(c);
    if (!cl) return;
    struct ctrack *ct = cl->track;
    if (!ct || (ct->mode & TRACK_BCAST) || !c->nkeys) return;
    /* Shard channels are keys of the key specs only. */
    if (c->cmd->flags & CMD_PUBSUB) return;
    if (ct->mode & (TRACK_OPTIN | TRACK_OPTOUT)) {
        int given = tracking_caching(cl);
        if ((ct->mode & TRACK_OPTIN) && !given) return;
        if ((ct->mode & TRACK_OPTOUT) && given) return;
    }
    int wid = cl->w ? cl->w->id : 0;
    for (int i = 0; i < c->nkeys; i++) table_add(c->keys[i].key, c->keys[i].klen, c->keys[i].hash, cl->id, wid);
    long long max = CFG(tracking_table_max_keys);
    if (max > 0 && atomic_load_explicit(&total_keys, memory_order_relaxed) > max) table_limit(max);
}

/* ---- prefixes (pfx_lock) ----------------------------------------------------- */

static void pfx_add(const char *p, size_t len, uint64_t id, int worker) {
    pthread_rwlock_wrlock(&pfx_lock);
    struct tpfx *x = NULL;
    for (int i = 0; i < npfx; i++)
        if (pfx[i].len == len && memcmp(pfx[i].p, p, len) == 0) {
            x = &pfx[i];
            break;
        }
    if (!x) {
        if (npfx == pfxcap) {
            pfxcap = pfxcap ? pfxcap * 2 : 8;
            pfx = hk_realloc(pfx, (size_t)pfxcap * sizeof(*pfx));
        }
        x = &pfx[npfx++];
        x->p = hk_malloc(len ? len : 1);
        memcpy(x->p, p, len);
        x->len = len;
        x->refs = NULL;
        x->n = x->cap = 0;
        atomic_store_explicit(&pfx_count, npfx, memory_order_relaxed);
    }
    refs_add(&x->refs, &x->n, &x->cap, id, worker);
    pthread_rwlock_unlock(&pfx_lock);
}

static void pfx_remove(const char *p, size_t len, uint64_t id) {
    pthread_rwlock_wrlock(&pfx_lock);
    for (int i = 0; i < npfx; i++) {
        struct tpfx *x = &pfx[i];
        if (x->len != len || memcmp(x->p, p, len) != 0) continue;
        for (int j = 0; j < x->n; j++)
            if (x->refs[j].id == id) {
                x->refs[j] = x->refs[--x->n];
                break;
            }
        if (!x->n) {
            hk_free(x->p);
            hk_free(x->refs);
            pfx[i] = pfx[--npfx];
            atomic_store_explicit(&pfx_count, npfx, memory_order_relaxed);
        }
        break;
    }
    pthread_rwlock_unlock(&pfx_lock);
}

/* ---- a client's state --------------------------------------------------------- */

unsigned tracking_mode(const struct client *c) { return c->track && (c->flags & CLIENT_TRACKING) ? c->track->mode : 0; }

uint64_t tracking_redirect(const struct client *c) {
    return c->track && (c->flags & CLIENT_TRACKING) ? c->track->redir : 0;
}

int tracking_nprefixes(const struct client *c) { return c->track ? c->track->npfx : 0; }

const char *tracking_prefix(const struct client *c, int i, size_t *len) {
    *len = c->track->plen[i];
    return c->track->pfx[i];
}

static int overlaps(const char *a, size_t alen, const char *b, size_t blen) {
    return memcmp(a, b, alen < blen ? alen : blen) == 0;
}

int tracking_prefix_overlap(const struct client *c, const char *const *p, const size_t *plen, int n, int *which_old,
                            int *other) {
    const struct ctrack *ct = c->track;
    for (int i = 0; i < n; i++) {
        if (ct && (c->flags & CLIENT_TRACKING))
            for (int j = 0; j < ct->npfx; j++)
                if (overlaps(ct->pfx[j], ct->plen[j], p[i], plen[i])) {
                    *which_old = j;
                    return i;
                }
        for (int j = i + 1; j < n; j++)
            if (overlaps(p[i], plen[i], p[j], plen[j])) {
                *which_old = -1;
                *other = j;
                return i;
            }
    }
    return -1;
}

/* Add prefix p to c's own sorted list and to the table, unless c has it. */
static void client_add_prefix(struct client *c, const char *p, size_t len) {
    struct ctrack *ct = c->track;
    int at = 0;
    for (; at < ct->npfx; at++) {
        size_t m = ct->plen[at] < len ? ct->plen[at] : len;
        int r = memcmp(ct->pfx[at], p, m);
        if (r == 0 && ct->plen[at] == len) return;
        if (r > 0 || (r == 0 && ct->plen[at] > len)) break;
    }
    ct->pfx = hk_realloc(ct->pfx, (size_t)(ct->npfx + 1) * sizeof(char *));
    ct->plen = hk_realloc(ct->plen, (size_t)(ct->npfx + 1) * sizeof(size_t));
    memmove(ct->pfx + at + 1, ct->pfx + at, (size_t)(ct->npfx - at) * sizeof(char *));
    memmove(ct->plen + at + 1, ct->plen + at, (size_t)(ct->npfx - at) * sizeof(size_t));
    ct->pfx[at] = hk_malloc(len ? len : 1);
    memcpy(ct->pfx[at], p, len);
    ct->plen[at] = len;
    ct->npfx++;
    pfx_add(p, len, c->id, c->w ? c->w->id : 0);
}

void tracking_enable(struct client *c, uint64_t redir, int redir_worker, unsigned mode, const char *const *p,
                     const size_t *plen, int n) {
    if (!c->track) c->track = hk_calloc(1, sizeof(struct ctrack));
    struct ctrack *ct = c->track;
    if (!(c->flags & CLIENT_TRACKING)) {
        c->flags |= CLIENT_TRACKING;
        atomic_fetch_add(&tracking_clients, 1);
    }
    ct->mode = mode & (TRACK_BCAST | TRACK_OPTIN | TRACK_OPTOUT | TRACK_NOLOOP);
    ct->redir = redir;
    ct->redir_worker = redir_worker;
    if (mode & TRACK_BCAST) {
        if (!n) client_add_prefix(c, "", 0);
        for (int i = 0; i < n; i++) client_add_prefix(c, p[i], plen[i]);
    }
}

void tracking_disable(struct client *c) {
    struct ctrack *ct = c->track;
    if (!(c->flags & CLIENT_TRACKING) || !ct) return;
    for (int i = 0; i < ct->npfx; i++) {
        pfx_remove(ct->pfx[i], ct->plen[i], c->id);
        hk_free(ct->pfx[i]);
    }
    hk_free(ct->pfx);
    hk_free(ct->plen);
    memset(ct, 0, sizeof(*ct));
    c->flags &= ~CLIENT_TRACKING;
    atomic_fetch_sub(&tracking_clients, 1);
}

void tracking_client_gone(struct client *c) {
    if (!c->track) return;
    tracking_disable(c);
    hk_free(c->track);
    c->track = NULL;
}

/* CACHING lasts for the next command, or, given inside EXEC or followed by
 * MULTI, for the transaction (Redis keeps it while the client is in MULTI
 * and after CLIENT subcommands). It is kept as the value tot_cmds has
 * while the command it applies to runs: commands queued in MULTI are not
 * counted there, so EXEC runs one past a CACHING given before MULTI. */
void tracking_set_caching(struct cmd_ctx *x) {
    struct client *cl = x->cl;
    struct ctrack *ct = cl->track;
    ct->caching = 1;
    ct->caching_at = (x->flags & CTX_NESTED) ? cl->tot_cmds : cl->tot_cmds + 1;
}

int tracking_caching(const struct client *c) {
    const struct ctrack *ct = c->track;
    if (!ct || !ct->caching) return 0;
    if (c->tot_cmds == ct->caching_at) return 1;
    return c->cmd && (c->cmd->flags & CMD_TXN_EXEC) && c->tot_cmds == ct->caching_at + 1;
}

void tracking_client_command(struct cmd_ctx *x) {
    struct client *cl = x->cl;
    if (!cl || !cl->track || (x->flags & CTX_NESTED)) return;
    if (cl->track->caching && cl->tot_cmds == cl->track->caching_at) cl->track->caching_at++;
}

void tracking_info(long long *keys, long long *items, long long *prefixes) {
    *keys = atomic_load_explicit(&total_keys, memory_order_relaxed);
    *items = atomic_load_explicit(&total_items, memory_order_relaxed);
    *prefixes = atomic_load_explicit(&pfx_count, memory_order_relaxed);
}

int tracking_drop_mail(mail_fn fn, void *arg) {
    if (fn != broken_mail && fn != redir_deliver_mail && fn != inv_mail_run && fn != bmail_run) return 0;
    /* Each of them is one allocation. */
    hk_free(arg);
    return 1;
}
