/* pubsub.c - the pub/sub registry and message delivery; see pubsub.h. */
#include "pubsub.h"

#include "../core/alloc.h"
#include "../core/hash.h"
#include "../core/htable.h"
#include "../core/util.h"
#include "../proto/respw.h"
#include "creply.h"
#include "server.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Client-side kinds: a client's channels, shard channels and patterns. */
enum { K_CHAN = PS_CHANNEL, K_SHARD = PS_SHARD, K_PAT = 2, K_COUNT = 3 };

#define PS_STRIPES 64

_Atomic long long pubsub_total_subs;
static _Atomic long long n_names[K_COUNT]; /* registry entries per kind */
static _Atomic long long n_clients;        /* clients with a subscription */
static int ps_nworkers;

/* ---- names in hash tables -------------------------------------------------- */

/* An entry keyed by a byte string: the registry's, a worker's and a
 * client's tables all start with one. */
struct nent {
    struct hnode node;
    uint64_t hash;
    size_t len;
    char *name;
};

struct nkey {
    const char *p;
    size_t len;
    uint64_t hash;
};

static int nent_match(const struct hnode *n, const void *key) {
    const struct nent *e = (const struct nent *)n;
    const struct nkey *k = key;
    return e->hash == k->hash && e->len == k->len && memcmp(e->name, k->p, k->len) == 0;
}

static uint64_t nent_hash(const struct hnode *n, void *ctx) {
    (void)ctx;
    return ((const struct nent *)n)->hash;
}

static struct nkey nkey_of(const char *p, size_t len) { return (struct nkey){p, len, hk_hash(p, len)}; }

static struct nent *nfind(struct htable *t, const struct nkey *k) {
    struct hnode **link = ht_find_link(t, k->hash, nent_match, k);
    return link ? (struct nent *)*link : NULL;
}

static void nremove_key(struct htable *t, const struct nkey *k) {
    struct hnode **link = ht_find_link(t, k->hash, nent_match, k);
    if (link) ht_unlink(t, link);
    ht_maybe_shrink(t, nent_hash, NULL);
}

static void nremove(struct htable *t, struct nent *e) {
    struct nkey k = {e->name, e->len, e->hash};
    nremove_key(t, &k);
}

/* A pattern against a channel, as Redis matches them: the empty channel
 * matches only the empty pattern (not even "*"). */
static int ps_match(const char *pat, size_t plen, const char *ch, size_t chlen) {
    if (!chlen) return plen == 0;
    return hk_globmatch(pat, plen, ch, chlen, 0);
}

/* ---- the registry ------------------------------------------------------------ */

/* A channel or pattern somebody subscribes to: subscriptions per worker. */
struct gent {
    struct nent n;
    long long total;
    uint32_t per_worker[];
};

struct stripe {
    pthread_rwlock_t lock;
    struct htable t;
    /* Publications on this stripe so far; a subscription remembers the
     * value when it was taken and receives only later messages. Bumped
     * under the read lock, read under the write lock. */
    _Atomic uint64_t seq;
} __attribute__((aligned(64)));

static struct stripe stripes[2][PS_STRIPES];
static struct stripe patterns; /* one table: a publication matches against all */

static struct stripe *stripe_of(int kind, uint64_t hash) {
    if (kind == K_PAT) return &patterns;
    return &stripes[kind][hash % PS_STRIPES];
}

void pubsub_init(int nworkers) {
    ps_nworkers = nworkers;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < PS_STRIPES; i++) {
            pthread_rwlock_init(&stripes[k][i].lock, NULL);
            ht_init(&stripes[k][i].t);
        }
    pthread_rwlock_init(&patterns.lock, NULL);
    ht_init(&patterns.t);
}

/* Count one more (delta 1) or one less (-1) subscription of worker w to
 * name; returns the stripe's sequence number at that moment. */
static uint64_t registry_update(int kind, const struct nkey *k, int w, int delta) {
    struct stripe *s = stripe_of(kind, k->hash);
    pthread_rwlock_wrlock(&s->lock);
    struct gent *g = (struct gent *)nfind(&s->t, k);
    if (!g && delta > 0) {
        g = hk_calloc(1, sizeof(*g) + (size_t)ps_nworkers * sizeof(uint32_t));
        g->n.hash = k->hash;
        g->n.len = k->len;
        g->n.name = hk_malloc(k->len + 1);
        memcpy(g->n.name, k->p, k->len);
        g->n.name[k->len] = 0;
        ht_insert(&s->t, &g->n.node, k->hash, nent_hash, NULL);
        atomic_fetch_add(&n_names[kind], 1);
    }
    uint64_t seq = atomic_load(&s->seq);
    if (g) {
        g->per_worker[w] += (uint32_t)delta;
        g->total += delta;
        if (g->total == 0) {
            nremove(&s->t, &g->n);
            hk_free(g->n.name);
            hk_free(g);
            atomic_fetch_sub(&n_names[kind], 1);
        }
    }
    pthread_rwlock_unlock(&s->lock);
    atomic_fetch_add(&pubsub_total_subs, delta);
    return seq;
}

/* ---- messages ------------------------------------------------------------------ */

/* One publication, shared by every worker that delivers it. */
struct psmsg {
    _Atomic int refs;
    int ns;
    uint64_t seq_chan, seq_pat; /* stripe sequence numbers at publication */
    /* The patterns that matched, for the receivers' own matching: only
     * whether any did (they match again against their local patterns). */
    int any_pat;
    size_t chlen, mlen;
    char *ch, *msg;
};

static struct psmsg *msg_new(int ns, const char *ch, size_t chlen, const char *msg, size_t mlen) {
    struct psmsg *m = hk_malloc(sizeof(*m) + chlen + mlen + 2);
    atomic_init(&m->refs, 0);
    m->ns = ns;
    m->seq_chan = m->seq_pat = 0;
    m->any_pat = 0;
    m->chlen = chlen;
    m->mlen = mlen;
    m->ch = (char *)(m + 1);
    m->msg = m->ch + chlen + 1;
    memcpy(m->ch, ch, chlen);
    m->ch[chlen] = 0;
    memcpy(m->msg, msg, mlen);
    m->msg[mlen] = 0;
    return m;
}

static void msg_unref(struct psmsg *m) {
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) == 1) hk_free(m);
}

/* ---- a worker's subscribers ---------------------------------------------------- */

struct member {
    struct client *c;
    uint64_t since; /* stripe sequence when it subscribed */
};

/* This worker's subscribers of one name. */
struct lent {
    struct nent n;
    struct member *m;
    int count, cap;
};

/* Messages waiting for the end of the loop turn, per target worker. */
struct outq {
    struct psmsg **v;
    int n, cap;
    int listed; /* in targets[] */
};

struct ps_worker {
    struct htable local[K_COUNT];
    /* Targets with queued messages, in the order they got their first. */
    struct outq *out;
    int *targets;
    int ntargets;
    /* Frames for the connection whose command is running, held until its
     * reply is complete (an open aggregate, EXEC's reply): for
     * worker->ps_held_for. */
    struct hk_buf held;
};

void pubsub_worker_init(struct worker *w) {
    struct ps_worker *p = hk_calloc(1, sizeof(*p));
    for (int k = 0; k < K_COUNT; k++) ht_init(&p->local[k]);
    p->out = hk_calloc((size_t)ps_nworkers, sizeof(*p->out));
    p->targets = hk_calloc((size_t)ps_nworkers, sizeof(int));
    w->ps = p;
}

void pubsub_worker_free(struct worker *w) {
    struct ps_worker *p = w->ps;
    if (!p) return;
    for (int k = 0; k < K_COUNT; k++) ht_release(&p->local[k]);
    for (int i = 0; i < ps_nworkers; i++) {
        for (int j = 0; j < p->out[i].n; j++) msg_unref(p->out[i].v[j]);
        hk_free(p->out[i].v);
    }
    hk_free(p->out);
    hk_free(p->targets);
    hk_free(p->held.p);
    hk_free(p);
    w->ps = NULL;
}

static void local_add(struct ps_worker *p, int kind, const struct nkey *k, struct client *c, uint64_t since) {
    struct lent *e = (struct lent *)nfind(&p->local[kind], k);
    if (!e) {
        e = hk_calloc(1, sizeof(*e));
        e->n.hash = k->hash;
        e->n.len = k->len;
        e->n.name = hk_malloc(k->len + 1);
        memcpy(e->n.name, k->p, k->len);
        e->n.name[k->len] = 0;
        ht_insert(&p->local[kind], &e->n.node, k->hash, nent_hash, NULL);
    }
    if (e->count == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 4;
        e->m = hk_realloc(e->m, (size_t)e->cap * sizeof(*e->m));
    }
    e->m[e->count++] = (struct member){c, since};
}

static void local_remove(struct ps_worker *p, int kind, const struct nkey *k, struct client *c) {
    struct lent *e = (struct lent *)nfind(&p->local[kind], k);
    if (!e) return;
    for (int i = 0; i < e->count; i++)
        if (e->m[i].c == c) {
            /* Order among a channel's subscribers carries no meaning. */
            e->m[i] = e->m[--e->count];
            break;
        }
    if (e->count) return;
    nremove(&p->local[kind], &e->n);
    hk_free(e->m);
    hk_free(e->n.name);
    hk_free(e);
}

/* ---- a client's subscriptions ------------------------------------------------- */

struct client_ps {
    struct htable names[K_COUNT]; /* struct nent */
};

static struct client_ps *client_ps(struct client *c) {
    if (!c->ps) {
        c->ps = hk_calloc(1, sizeof(*c->ps));
        for (int k = 0; k < K_COUNT; k++) ht_init(&c->ps->names[k]);
    }
    return c->ps;
}

static long long kind_count(const struct client *c, int kind) {
    return c->ps ? (long long)c->ps->names[kind].count : 0;
}

void pubsub_client_each(struct client *c, void (*fn)(int kind, const char *name, size_t len, void *arg), void *arg) {
    if (!c->ps) return;
    for (int k = 0; k < K_COUNT; k++) {
        struct ht_iter it;
        ht_iter_init(&it, &c->ps->names[k]);
        for (struct hnode *n; (n = ht_iter_next(&it));) {
            struct nent *e = (struct nent *)n;
            fn(k == K_PAT ? PS_PATTERN_KIND : k, e->name, e->len, arg);
        }
    }
}

int pubsub_client_count(const struct client *c) { return (int)(kind_count(c, K_CHAN) + kind_count(c, K_PAT)); }

void pubsub_client_counts(const struct client *c, long long *sub, long long *psub, long long *ssub) {
    *sub = kind_count(c, K_CHAN);
    *psub = kind_count(c, K_PAT);
    *ssub = kind_count(c, K_SHARD);
}

static long long client_total(const struct client *c) {
    return kind_count(c, K_CHAN) + kind_count(c, K_PAT) + kind_count(c, K_SHARD);
}

/* Keep CLIENT_PUBSUB (output limits of the pubsub class, the RESP2
 * command restriction) and the client count in step with the counts. */
static void client_flag_update(struct client *c) {
    int on = client_total(c) > 0;
    if (on && !(c->flags & CLIENT_PUBSUB)) {
        c->flags |= CLIENT_PUBSUB;
        atomic_fetch_add(&n_clients, 1);
    } else if (!on && (c->flags & CLIENT_PUBSUB)) {
        c->flags &= ~CLIENT_PUBSUB;
        atomic_fetch_sub(&n_clients, 1);
    }
}

/* 1 when the client was not subscribed to it yet. */
static int client_add(struct client *c, int kind, const struct nkey *k) {
    struct client_ps *cp = client_ps(c);
    if (nfind(&cp->names[kind], k)) return 0;
    struct nent *e = hk_malloc(sizeof(*e));
    e->hash = k->hash;
    e->len = k->len;
    e->name = hk_malloc(k->len + 1);
    memcpy(e->name, k->p, k->len);
    e->name[k->len] = 0;
    ht_insert(&cp->names[kind], &e->node, k->hash, nent_hash, NULL);
    uint64_t since = registry_update(kind, k, c->w->id, 1);
    local_add(c->w->ps, kind, k, c, since);
    client_flag_update(c);
    return 1;
}

/* 1 when the client was subscribed to it. */
static int client_del(struct client *c, int kind, const struct nkey *k) {
    if (!c->ps) return 0;
    struct nent *e = nfind(&c->ps->names[kind], k);
    if (!e) return 0;
    local_remove(c->w->ps, kind, k, c);
    registry_update(kind, k, c->w->id, -1);
    nremove(&c->ps->names[kind], e);
    hk_free(e->name);
    hk_free(e);
    client_flag_update(c);
    return 1;
}

/* The entries of a client's table of one kind, copied out: deleting
 * them one by one must not walk a table that shrinks under it. */
static struct nent **client_names(struct client *c, int kind, size_t *n) {
    struct htable *t = &c->ps->names[kind];
    struct nent **v = hk_malloc((t->count ? t->count : 1) * sizeof(*v));
    size_t i = 0;
    struct ht_iter it;
    ht_iter_init(&it, t);
    for (struct hnode *h; (h = ht_iter_next(&it));) v[i++] = (struct nent *)h;
    *n = i;
    return v;
}

void pubsub_client_reset(struct client *c) {
    if (c->w->ps_held_for == c) {
        c->w->ps_held_for = NULL;
        c->w->ps->held.len = 0;
    }
    if (!c->ps) return;
    for (int kind = 0; kind < K_COUNT; kind++) {
        size_t n;
        struct nent **v = client_names(c, kind, &n);
        for (size_t i = 0; i < n; i++) {
            struct nkey k = {v[i]->name, v[i]->len, v[i]->hash};
            client_del(c, kind, &k);
        }
        hk_free(v);
        ht_release(&c->ps->names[kind]);
    }
    hk_free(c->ps);
    c->ps = NULL;
}

/* ---- subscribe replies ---------------------------------------------------------- */

static const char *const sub_word[K_COUNT][2] = {
    {"subscribe", "unsubscribe"},
    {"ssubscribe", "sunsubscribe"},
    {"psubscribe", "punsubscribe"},
};

/* "subscribe" name count: a push frame in RESP3, an array in RESP2. The
 * count is the client's channels and patterns, or its shard channels. */
static void reply_sub(struct cmd_ctx *c, int kind, int unsub, const char *name, size_t len) {
    struct client *cl = c->cl;
    reply_push(c, 3);
    reply_bulk_cstr(c, sub_word[kind][unsub]);
    if (name) reply_bulk(c, name, len);
    else reply_null(c);
    reply_int(c, kind == K_SHARD ? kind_count(cl, K_SHARD) : pubsub_client_count(cl));
}

void pubsub_subscribe(struct cmd_ctx *c, int ns, int pattern) {
    int kind = pattern ? K_PAT : ns;
    for (int j = 1; j < c->argc; j++) {
        struct nkey k = nkey_of(c->argv[j].ptr, c->argv[j].len);
        client_add(c->cl, kind, &k);
        reply_sub(c, kind, 0, k.p, k.len);
    }
}

void pubsub_unsubscribe(struct cmd_ctx *c, int ns, int pattern) {
    int kind = pattern ? K_PAT : ns;
    struct client *cl = c->cl;
    if (c->argc > 1) {
        for (int j = 1; j < c->argc; j++) {
            struct nkey k = nkey_of(c->argv[j].ptr, c->argv[j].len);
            client_del(cl, kind, &k);
            reply_sub(c, kind, 1, k.p, k.len);
        }
        return;
    }
    /* Every one of that kind, or one reply naming none. */
    if (!kind_count(cl, kind)) {
        reply_sub(c, kind, 1, NULL, 0);
        return;
    }
    size_t n;
    struct nent **v = client_names(cl, kind, &n);
    for (size_t i = 0; i < n; i++) {
        /* The entry goes with the subscription; its name is needed after. */
        size_t len = v[i]->len;
        char *name = hk_malloc(len + 1);
        memcpy(name, v[i]->name, len);
        struct nkey k = {name, len, v[i]->hash};
        client_del(cl, kind, &k);
        reply_sub(c, kind, 1, name, len);
        hk_free(name);
    }
    hk_free(v);
}

/* ---- frames -------------------------------------------------------------------- */

/* A frame shared by the subscribers of one worker (pubsub.h: big ones are
 * referenced by their output buffers instead of copied). Released on this
 * worker only, so its count needs no atomics. */
struct frame {
    int refs;
    struct ob_shared sh;
    char data[];
};

static void frame_release(void *ref) {
    struct frame *f = ref;
    if (--f->refs == 0) hk_free(f);
}

static void buf_bulk(struct hk_buf *b, const char *p, size_t len) { respw_bulk(b, p, len, 256); }

/* message/smessage channel payload, or pmessage pattern channel payload. */
static void build_frame(struct hk_buf *b, int resp, const struct psmsg *m, const struct nent *pat) {
    b->len = 0;
    hk_buf_add(b, resp == 3 ? (pat ? ">4\r\n" : ">3\r\n") : (pat ? "*4\r\n" : "*3\r\n"), 4, 256);
    if (pat) buf_bulk(b, "pmessage", 8);
    else if (m->ns == PS_SHARD) buf_bulk(b, "smessage", 8);
    else buf_bulk(b, "message", 7);
    if (pat) buf_bulk(b, pat->name, pat->len);
    buf_bulk(b, m->ch, m->chlen);
    buf_bulk(b, m->msg, m->mlen);
}

/* One frame per protocol for one delivery round. */
struct fset {
    struct hk_buf b[2];
    struct frame *f[2]; /* shared copies, made for big frames */
    int built[2];
};

static void fset_reset(struct fset *fs) {
    for (int i = 0; i < 2; i++) {
        if (fs->f[i]) frame_release(fs->f[i]);
        fs->f[i] = NULL;
        fs->built[i] = 0;
    }
}

/* A frame for the connection whose own command is running (a RESP3
 * client publishing to a channel it listens to, a notification of its own
 * write) follows that command's reply, as in Redis 7.2 and later: pushed
 * now, it could land inside an aggregate reply. */
static int client_is_mid_reply(struct client *c) { return c == c->w->cmd_client; }

/* After a frame went into c's output: its output limits, then writing. */
static void push_done(struct client *c) {
    client_check_output_limits(c);
    if (c->flags & CLIENT_CLOSE_ASAP) client_close(c);
    else client_queue_write(c);
}

/* Hold a frame for the connection whose command is running, until its
 * reply is complete. One connection's command runs at a time, so frames
 * still held for another (its reply ended on a path that does not call
 * pubsub_command_end) go out first. */
static void hold_frame(struct client *c, const char *p, size_t len) {
    struct worker *w = c->w;
    if (w->ps_held_for && w->ps_held_for != c) pubsub_command_end(w->ps_held_for);
    w->ps_held_for = c;
    hk_buf_add(&w->ps->held, p, len, 1024);
}

void pubsub_push(struct client *c, const char *p, size_t len) {
    if (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_ASAP)) return;
    if (client_is_mid_reply(c)) {
        hold_frame(c, p, len);
        return;
    }
    ob_append(&c->out, p, len);
    push_done(c);
}

static void deliver_to(struct client *c, struct fset *fs, const struct psmsg *m, const struct nent *pat) {
    if (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_ASAP)) return;
    int r = c->ctx.resp == 3 ? 1 : 0;
    if (!fs->built[r]) {
        build_frame(&fs->b[r], r ? 3 : 2, m, pat);
        fs->built[r] = 1;
        if (fs->b[r].len >= PS_SHARE_MIN) {
            struct frame *f = hk_malloc(sizeof(*f) + fs->b[r].len);
            memcpy(f->data, fs->b[r].p, fs->b[r].len);
            f->refs = 1; /* the set's own reference */
            f->sh = (struct ob_shared){f->data, fs->b[r].len, frame_release, f};
            fs->f[r] = f;
        }
    }
    struct frame *f = fs->f[r];
    if (!f || client_is_mid_reply(c)) {
        pubsub_push(c, fs->b[r].p, fs->b[r].len);
        return;
    }
    f->refs++;
    ob_append_shared(&c->out, &f->sh);
    push_done(c);
}

void pubsub_command_end(struct client *c) {
    struct ps_worker *p = c->w->ps;
    if (c->w->ps_held_for != c) return;
    c->w->ps_held_for = NULL;
    if (!(c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_ASAP))) {
        ob_append(&c->out, p->held.p, p->held.len);
        push_done(c);
    }
    p->held.len = 0;
    if (p->held.cap > 64 * 1024) {
        hk_free(p->held.p);
        p->held = (struct hk_buf){0};
    }
}

/* Deliver m to this worker's subscribers of its channel and patterns. */
static void deliver_local(struct worker *w, const struct psmsg *m) {
    struct ps_worker *p = w->ps;
    struct fset fs;
    memset(&fs, 0, sizeof(fs));
    struct nkey k = nkey_of(m->ch, m->chlen);
    struct lent *e = (struct lent *)nfind(&p->local[m->ns], &k);
    if (e)
        for (int i = 0; i < e->count; i++)
            if (e->m[i].since < m->seq_chan) deliver_to(e->m[i].c, &fs, m, NULL);
    if (m->ns == PS_CHANNEL && m->any_pat && p->local[K_PAT].count) {
        struct ht_iter it;
        ht_iter_init(&it, &p->local[K_PAT]);
        for (struct lent *pe; (pe = (struct lent *)ht_iter_next(&it));) {
            if (!ps_match(pe->n.name, pe->n.len, m->ch, m->chlen)) continue;
            fset_reset(&fs);
            for (int i = 0; i < pe->count; i++)
                if (pe->m[i].since < m->seq_pat) deliver_to(pe->m[i].c, &fs, m, &pe->n);
        }
    }
    fset_reset(&fs);
    hk_free(fs.b[0].p);
    hk_free(fs.b[1].p);
}

/* ---- publishing ------------------------------------------------------------------ */

struct batch {
    int n;
    struct psmsg *v[];
};

static void batch_mail(struct worker *w, void *arg) {
    struct batch *b = arg;
    for (int i = 0; i < b->n; i++) {
        deliver_local(w, b->v[i]);
        msg_unref(b->v[i]);
    }
    hk_free(b);
}

static void post_batch(struct worker *target, struct psmsg **v, int n) {
    struct batch *b = hk_malloc(sizeof(*b) + (size_t)n * sizeof(b->v[0]));
    b->n = n;
    memcpy(b->v, v, (size_t)n * sizeof(v[0]));
    worker_post(target, batch_mail, b);
}

/* A turn's queue past this many messages for one worker goes out at once. */
#define OUTQ_MAX 512

static void queue_for(struct worker *from, int target, struct psmsg *m) {
    struct ps_worker *p = from->ps;
    struct outq *q = &p->out[target];
    if (!q->listed) {
        q->listed = 1;
        p->targets[p->ntargets++] = target;
    }
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 16;
        q->v = hk_realloc(q->v, (size_t)q->cap * sizeof(q->v[0]));
    }
    q->v[q->n++] = m;
    if (q->n >= OUTQ_MAX) {
        post_batch(&server.workers[target], q->v, q->n);
        q->n = 0;
    }
}

void pubsub_flush(struct worker *w) {
    struct ps_worker *p = w->ps;
    /* Frames held for a reply that a path other than dispatch finished
     * (a blocked command served later). */
    if (w->ps_held_for && !client_is_mid_reply(w->ps_held_for)) pubsub_command_end(w->ps_held_for);
    if (!p || !p->ntargets) return;
    for (int i = 0; i < p->ntargets; i++) {
        int t = p->targets[i];
        struct outq *q = &p->out[t];
        if (q->n) post_batch(&server.workers[t], q->v, q->n);
        q->n = 0;
        q->listed = 0;
        if (q->cap > 4096) {
            hk_free(q->v);
            q->v = NULL;
            q->cap = 0;
        }
    }
    p->ntargets = 0;
}

long long pubsub_publish(struct worker *w, int ns, const char *ch, size_t chlen, const char *msg, size_t mlen) {
    if (!atomic_load_explicit(&pubsub_total_subs, memory_order_relaxed)) return 0;
    int nw = ps_nworkers;
    unsigned char want[HK_MAX_THREADS];
    memset(want, 0, (size_t)nw);
    long long receivers = 0;
    uint64_t seq_chan, seq_pat = 0;
    int any_pat = 0;
    struct nkey k = nkey_of(ch, chlen);
    struct stripe *s = stripe_of(ns, k.hash);
    pthread_rwlock_rdlock(&s->lock);
    struct gent *g = (struct gent *)nfind(&s->t, &k);
    if (g) {
        receivers += g->total;
        for (int i = 0; i < nw; i++)
            if (g->per_worker[i]) want[i] = 1;
    }
    seq_chan = atomic_fetch_add(&s->seq, 1) + 1;
    pthread_rwlock_unlock(&s->lock);
    if (ns == PS_CHANNEL && atomic_load_explicit(&n_names[K_PAT], memory_order_relaxed)) {
        pthread_rwlock_rdlock(&patterns.lock);
        struct ht_iter it;
        ht_iter_init(&it, &patterns.t);
        for (struct gent *pg; (pg = (struct gent *)ht_iter_next(&it));) {
            if (!ps_match(pg->n.name, pg->n.len, ch, chlen)) continue;
            any_pat = 1;
            receivers += pg->total;
            for (int i = 0; i < nw; i++)
                if (pg->per_worker[i]) want[i] = 1;
        }
        seq_pat = atomic_fetch_add(&patterns.seq, 1) + 1;
        pthread_rwlock_unlock(&patterns.lock);
    }
    if (!receivers) return 0;
    int ntarget = 0;
    for (int i = 0; i < nw; i++) ntarget += want[i];
    struct psmsg *m = msg_new(ns, ch, chlen, msg, mlen);
    m->seq_chan = seq_chan;
    m->seq_pat = seq_pat;
    m->any_pat = any_pat;
    atomic_init(&m->refs, ntarget);
    for (int i = 0; i < nw; i++) {
        if (!want[i]) continue;
        if (w && i == w->id) {
            deliver_local(w, m);
            msg_unref(m);
        } else if (w) {
            queue_for(w, i, m);
        } else {
            post_batch(&server.workers[i], &m, 1);
        }
    }
    return receivers;
}

int pubsub_drop_mail(mail_fn fn, void *arg) {
    if (fn == batch_mail) {
        struct batch *b = arg;
        for (int i = 0; i < b->n; i++) msg_unref(b->v[i]);
        hk_free(b);
        return 1;
    }
    return 0;
}

/* ---- queries ----------------------------------------------------------------------- */

void pubsub_each_channel(int ns, const char *pat, size_t patlen, void (*fn)(const char *ch, size_t len, void *arg),
                         void *arg) {
    for (int i = 0; i < PS_STRIPES; i++) {
        struct stripe *s = &stripes[ns][i];
        pthread_rwlock_rdlock(&s->lock);
        struct ht_iter it;
        ht_iter_init(&it, &s->t);
        for (struct gent *g; (g = (struct gent *)ht_iter_next(&it));)
            if (!pat || ps_match(pat, patlen, g->n.name, g->n.len)) fn(g->n.name, g->n.len, arg);
        pthread_rwlock_unlock(&s->lock);
    }
}

long long pubsub_numsub(int ns, const char *ch, size_t len) {
    struct nkey k = nkey_of(ch, len);
    struct stripe *s = stripe_of(ns, k.hash);
    pthread_rwlock_rdlock(&s->lock);
    struct gent *g = (struct gent *)nfind(&s->t, &k);
    long long n = g ? g->total : 0;
    pthread_rwlock_unlock(&s->lock);
    return n;
}

long long pubsub_numpat(void) { return atomic_load(&n_names[K_PAT]); }

void pubsub_info(long long *channels, long long *pats, long long *shard_channels, long long *clients) {
    *channels = atomic_load(&n_names[K_CHAN]);
    *pats = atomic_load(&n_names[K_PAT]);
    *shard_channels = atomic_load(&n_names[K_SHARD]);
    *clients = atomic_load(&n_clients);
}
