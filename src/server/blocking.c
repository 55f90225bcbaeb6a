/* blocking.c - clients blocked on keys: blocking, wake-ups, re-runs,
 * timeouts and removal. See blocking.h for the model and docs/threads.md
 * for who owns what.
 *
 * Ownership: the waiters themselves live in the shards' watch tables
 * (store/watch.c) and are read or changed only under the shard's lock. A
 * waiter is created and freed only by its client's own worker (blocking,
 * a re-run, a timeout, CLIENT UNBLOCK, or the client going away); other
 * threads only read its client id and worker index and post a wake-up
 * there. struct bstate (the copied command, the deadline, the client's
 * waiters) belongs to the client and is touched only on its worker. The
 * command handlers are in src/cmd/blocking_cmd.c.
 *
 * Wake batches (blocking.h): a batch's count is atomic and any thread
 * takes or drops a reference; its clock value and home worker never
 * change; its `origin` is read and cleared only on the home worker, which
 * alone frees the batch (in the mail the last release posts). The batch
 * sets on waiters are read and changed only under the waiter's shard
 * lock; a run's adopted set belongs to the thread running it. */
#include "blocking.h"

#include "../core/alloc.h"
#include "../store/db.h"
#include "creply.h"
#include "pubsub.h"
#include "server.h"

#include <string.h>

/* A re-run refused by a busy script is tried again after this long. */
#define BLOCK_RETRY_MS 10

struct bstate {
    const struct command *cmd;
    long long deadline; /* ms, 0: forever */
    int stay;           /* set by block_client during a re-run */
    int settled;        /* set when a re-run ran (it was not refused) */
    long long retry_at; /* a re-run was refused (busy script): try again then (ms), 0: no */
    long long exec_ns;  /* time its runs took so far: it is counted once, with all of it */
    int argc;
    hk_slice *argv;     /* copies: the query buffer moves on */
    int nw;
    struct bwaiter **w;
    struct lockset shards; /* of the waiters */
};

static void wake_mail(struct worker *w, void *arg);

/* ---- wake batches ---------------------------------------------------------- */

struct wbatch {
    _Atomic long refs;
    uint64_t gen;           /* chain_clock when it began */
    struct worker *home;    /* the worker of the client it holds */
    /* Home worker only: the client it holds (NULL once it went away), and
     * the next batch holding the same client (client.chain). */
    struct client *origin;
    struct wbatch *next_held;
};

/* Batches, one reference each: on a waiter (bw->batches) or adopted by a run. */
struct bset {
    int n, cap;
    struct wbatch *b[];
};

_Thread_local struct chain_run *chain_cur;

/* Orders batches after the waiters that were blocked when they began: a
 * waiter counts only in batches younger than itself. Read when a client
 * blocks, bumped when a batch begins (only writes that wake anyone). */
static _Atomic uint64_t chain_clock;

static struct wbatch *batch_new(struct client *c) {
    struct wbatch *b = hk_malloc(sizeof(*b));
    atomic_init(&b->refs, 1);
    b->gen = atomic_fetch_add_explicit(&chain_clock, 1, memory_order_relaxed) + 1;
    b->home = c->w;
    b->origin = c;
    b->next_held = NULL;
    return b;
}

/* c's output waits for b too (c's worker). Usually its only batch; a
 * client held while blocked may get a second from its re-run. */
static void batch_hold_client(struct client *c, struct wbatch *b) {
    b->next_held = c->chain;
    c->chain = b;
    client_hold_output(c, 1);
}

/* b holds c no more; returns 1 when nothing holds c now. */
static int batch_unhold_client(struct client *c, struct wbatch *b) {
    struct wbatch **p = &c->chain;
    while (*p != b) p = &(*p)->next_held;
    *p = b->next_held;
    if (c->chain) return 0;
    client_hold_output(c, 0);
    return 1;
}

/* The batch's last reference went, on its home worker: the client it
 * held (if still there and held by nothing else) writes its replies and
 * goes on with its input. */
static void batch_done(struct worker *w, void *arg) {
    (void)w;
    struct wbatch *b = arg;
    struct client *c = b->origin;
    int free_now = c && batch_unhold_client(c, b);
    hk_free(b);
    if (!free_now || (c->flags & CLIENT_CLOSING)) return;
    if (client_resume(c) < 0) client_close(c);
}

static void batch_release(struct wbatch *b) {
    /* What the woken command published goes out first, whether this is
     * the last reference or the writer's end will find it gone: whoever
     * reads the writer's reply must find those messages on their way. */
    if (current_worker) pubsub_flush(current_worker);
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) worker_post(b->home, batch_done, b);
}

static int bset_has(const struct bset *s, const struct wbatch *b) {
    for (int i = 0; s && i < s->n; i++)
        if (s->b[i] == b) return 1;
    return 0;
}

/* Append b to *sp, taking over one reference the caller owns. */
static void bset_push(struct bset **sp, struct wbatch *b) {
    struct bset *s = *sp;
    if (!s || s->n == s->cap) {
        int cap = s ? s->cap * 2 : 2;
        s = hk_realloc(s, sizeof(*s) + (size_t)cap * sizeof(s->b[0]));
        if (!*sp) s->n = 0;
        s->cap = cap;
        *sp = s;
    }
    s->b[s->n++] = b;
}

/* Count waiter bw's pending re-run in batch b (bw's shard locked), once,
 * and only when bw blocked before b began: otherwise clients served and
 * blocked again could keep one batch open forever. */
static void bset_hold(struct bwaiter *bw, struct wbatch *b) {
    if (bw->gen >= b->gen || bset_has(bw->batches, b)) return;
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    bset_push((struct bset **)&bw->batches, b);
}

/* Move the batches on r's blocked client's waiters into r (their shards
 * locked: a re-run holds its command's shards, a removal its waiters'). */
static void chain_adopt(struct chain_run *r) {
    HK_ASSERT(r && r->waiter && r->waiter->bstate);
    struct bstate *bs = r->waiter->bstate;
    for (int i = 0; i < bs->nw; i++) {
        struct bset *s = bs->w[i]->batches;
        if (!s) continue;
        bs->w[i]->batches = NULL;
        if (!r->set) {
            r->set = s;
            continue;
        }
        for (int j = 0; j < s->n; j++) {
            if (bset_has(r->set, s->b[j])) batch_release(s->b[j]);
            else bset_push(&r->set, s->b[j]);
        }
        hk_free(s);
    }
}

/* wk_signal_hook: count the waiter's re-run in the batches of whoever
 * signals it (its client's own batch, created now, and those a re-run or
 * removal adopted), then ask the waiter's worker to re-run its command
 * unless a wake-up is already on its way. Shard locked; the mailbox lock
 * is a leaf, so posting under shard locks cannot deadlock. Outside a
 * chain_run the signaler is the connection whose command the worker
 * runs (worker.cmd_client): its own command, EXEC or a script with
 * everything they run. Background work (active expiry) has none. */
static void post_wakeup(struct bwaiter *bw, int again) {
    struct chain_run *r = chain_cur;
    struct client *cl;
    if (r) {
        if (r->waiter) chain_adopt(r);
        cl = r->cl;
    } else {
        cl = current_worker ? current_worker->cmd_client : NULL;
    }
    if (cl) {
        if (!cl->chain_own) cl->chain_own = batch_new(cl);
        bset_hold(bw, cl->chain_own);
    }
    for (int i = 0; r && r->set && i < r->set->n; i++) bset_hold(bw, r->set->b[i]);
    if (again) return;
    struct worker *w = current_worker;
    if (!w) {
        worker_post(&server.workers[bw->worker], wake_mail, (void *)(uintptr_t)bw->cid);
        return;
    }
    /* Posted when the command ends (block_flush_wakes), after what it
     * published: a waiter's own notifications must not overtake those of
     * the write that woke it. */
    if (w->nwakes == w->wakes_cap) {
        w->wakes_cap = w->wakes_cap ? w->wakes_cap * 2 : 16;
        w->wakes = hk_realloc(w->wakes, (size_t)w->wakes_cap * sizeof(w->wakes[0]));
    }
    w->wakes[w->nwakes].worker = bw->worker;
    w->wakes[w->nwakes].cid = bw->cid;
    w->nwakes++;
}

void block_flush_wakes_slow(struct worker *w) {
    pubsub_flush(w);
    for (int i = 0; i < w->nwakes; i++)
        worker_post(&server.workers[w->wakes[i].worker], wake_mail, (void *)(uintptr_t)w->wakes[i].cid);
    w->nwakes = 0;
    if (w->wakes_cap > 1024) {
        hk_free(w->wakes);
        w->wakes = NULL;
        w->wakes_cap = 0;
    }
}

void chain_end(struct chain_run *r) {
    chain_cur = r->prev;
    if (r->set) {
        for (int i = 0; i < r->set->n; i++) batch_release(r->set->b[i]);
        hk_free(r->set);
        r->set = NULL;
    }
    if (r->cl) chain_command_end(r->cl);
}

void chain_hold_slow(struct client *c) {
    struct wbatch *b = c->chain_own;
    c->chain_own = NULL;
    /* Nobody else counted in it: every re-run it caused already ended
     * (no one can take a reference from a batch nobody holds). */
    if (atomic_load_explicit(&b->refs, memory_order_acquire) == 1) {
        hk_free(b);
        return;
    }
    batch_hold_client(c, b);
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) {
        /* They ended meanwhile: no mail comes, let go at once (the
         * caller goes on with the client's input). */
        batch_unhold_client(c, b);
        hk_free(b);
    }
}

void chain_forget(struct client *c) {
    for (struct wbatch *b = c->chain; b; b = b->next_held) b->origin = NULL;
    c->chain = NULL;
    if (c->chain_own) {
        c->chain_own->origin = NULL;
        batch_release(c->chain_own);
        c->chain_own = NULL;
    }
}

int block_drop_mail(mail_fn fn, void *arg) {
    if (fn != batch_done) return 0;
    hk_free(arg);
    return 1;
}

void block_init(void) { wk_signal_hook = post_wakeup; }

int block_may_serve(struct cmd_ctx *c, const struct keyref *k, int kind) {
    struct wkey *wk = wk_find(k);
    if (!wk) return 1;
    struct bwaiter *first = wk_first(wk, kind);
    if (!first) return 1;
    return block_is_retry(c) && c->cl && first->cid == c->cl->id;
}

void block_client(struct cmd_ctx *c, const int *keyidx, int nkeys, int kind, long long deadline_ms, int null_bulk) {
    struct client *cl = c->cl;
    if (block_is_retry(c)) {
        cl->bstate->stay = 1;
        return;
    }
    if (!cl || (c->flags & CTX_DENY_BLOCKING)) {
        if (null_bulk) reply_null(c);
        else reply_null_array(c);
        return;
    }
    struct bstate *bs = hk_calloc(1, sizeof(*bs));
    bs->cmd = c->cmd;
    bs->deadline = deadline_ms;
    ls_init(&bs->shards);
    /* One block: the slices, then the argument bytes. */
    size_t bytes = 0;
    for (int i = 0; i < c->argc; i++) bytes += c->argv[i].len;
    bs->argv = hk_malloc((size_t)c->argc * sizeof(hk_slice) + bytes + 1);
    char *p = (char *)(bs->argv + c->argc);
    for (int i = 0; i < c->argc; i++) {
        memcpy(p, c->argv[i].ptr, c->argv[i].len);
        bs->argv[i].ptr = p;
        bs->argv[i].len = c->argv[i].len;
        p += c->argv[i].len;
    }
    bs->argc = c->argc;
    bs->w = hk_malloc((size_t)nkeys * sizeof(*bs->w));
    uint64_t gen = atomic_load_explicit(&chain_clock, memory_order_relaxed);
    for (int i = 0; i < nkeys; i++) {
        struct keyref k;
        key_of(c, keyidx[i], &k);
        struct wkey *wk = wk_find(&k);
        /* The same key named twice waits once. */
        if (wk && wk->tail && wk->tail->cid == cl->id) continue;
        if (!wk || !wk->head) stat_add(&cl->w->nblocking_keys, 1);
        struct bwaiter *bw = wk_wait(&k, cl->id, cl->w->id, kind);
        bw->gen = gen;
        bs->w[bs->nw++] = bw;
        ls_add(&bs->shards, k.shard);
    }
    cl->bstate = bs;
    cl->flags |= CLIENT_BLOCKED;
    struct worker *w = cl->w;
    cl->prev_blocked = NULL;
    cl->next_blocked = w->blocked;
    if (w->blocked) w->blocked->prev_blocked = cl;
    w->blocked = cl;
    stat_add(&w->nblocked, 1);
    if (deadline_ms) stat_add(&w->nblocked_timeout, 1);
}

/* Take c's waiters out of their FIFOs (their shards locked), inside the
 * run that re-runs or removes c (chain_cur). Where c was first of its
 * kind and the key still holds a value the next waiter is woken
 * (watch.c): the key may hold data c did not take; a spurious wake-up
 * only costs a re-run. The batches c's waiters were counted in are
 * adopted first, so the next waiter counts in them: it serves the writes
 * c was woken for. */
static void leave_fifos(struct client *c) {
    struct bstate *bs = c->bstate;
    /* Adopted once, before any waiter goes: the turns passed on below
     * signal other clients' waiters, never c's. */
    chain_adopt(chain_cur);
    chain_cur->waiter = NULL;
    for (int i = 0; i < bs->nw; i++) {
        struct bwaiter *bw = bs->w[i];
        struct wkey *wk = bw->wk;
        unsigned shard = ks_shard_of(wk->key, wk->klen);
        /* The key's last waiter: its entry goes (unless WATCHed). */
        if (wk->head == bw && wk->tail == bw) stat_add(&c->w->nblocking_keys, (unsigned long long)-1);
        wk_leave(shard, bw);
    }
    bs->nw = 0;
}

/* Drop c's blocked state (its waiters already gone). */
static void block_finish(struct client *c) {
    struct bstate *bs = c->bstate;
    struct worker *w = c->w;
    if (c->prev_blocked) c->prev_blocked->next_blocked = c->next_blocked;
    else w->blocked = c->next_blocked;
    if (c->next_blocked) c->next_blocked->prev_blocked = c->prev_blocked;
    c->next_blocked = c->prev_blocked = NULL;
    stat_add(&w->nblocked, (unsigned long long)-1);
    if (bs->deadline) stat_add(&w->nblocked_timeout, (unsigned long long)-1);
    ls_destroy(&bs->shards);
    hk_free(bs->argv);
    hk_free(bs->w);
    hk_free(bs);
    c->bstate = NULL;
    c->flags &= ~CLIENT_BLOCKED;
}

void block_add_time(struct client *c, long long ns) { c->bstate->exec_ns += ns; }

void block_remove(struct client *c) {
    struct bstate *bs = c->bstate;
    struct chain_run run;
    chain_begin(&run, NULL, c);
    ls_acquire(&bs->shards);
    leave_fifos(c);
    ls_release(&bs->shards);
    block_finish(c);
    chain_end(&run);
}

/* Unblock without serving: the timeout's null array, or CLIENT UNBLOCK
 * ERROR's error; then carry on with the client's pipelined input. */
static void block_unblock(struct client *c, int error) {
    const struct command *cmd = c->bstate->cmd;
    struct cmd_ctx *x = &c->ctx;
    x->cmd = cmd;
    x->errors = 0;
    x->flags = client_ctx_flags(c);
    if (error) reply_status(x, HK_ERR_UNBLOCKED);
    else reply_null_array(x);
    /* Counted (and slow-logged) with the arguments it blocked with. */
    x->argv = c->bstate->argv;
    x->argc = c->bstate->argc;
    client_count_call(c, cmd, c->bstate->exec_ns);
    x->argv = c->argv;
    x->argc = c->argc;
    block_remove(c);
    if (client_resume(c) < 0) client_close(c);
}

/* ---- wake-ups ------------------------------------------------------------ */

static struct client *blocked_find(struct worker *w, uint64_t id) {
    for (struct client *c = w->blocked; c; c = c->next_blocked)
        if (c->id == id) return c;
    return NULL;
}

int block_unblock_id(struct worker *w, uint64_t id, int error) {
    struct client *c = blocked_find(w, id);
    if (!c || (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_ASAP))) return 0;
    block_unblock(c, error);
    return 1;
}

/* Run by exec_command after the re-run, its locks (a superset of the
 * waiters' shards: the waiters are on the command's own keys) still held:
 * a served client leaves its FIFOs; one that keeps waiting may be
 * signaled again. */
static void retry_settle(struct cmd_ctx *x) {
    struct client *c = x->cl;
    struct bstate *bs = c->bstate;
    bs->settled = 1;
    if (bs->stay) {
        /* What woke it has been looked at: its batches stop waiting. */
        chain_adopt(chain_cur);
        for (int i = 0; i < bs->nw; i++) bs->w[i]->signaled = 0;
    } else {
        leave_fifos(c);
    }
}

/* Re-run c's blocked command under its shard locks, in retry mode, as a
 * run that adopts the batches c's waiters are counted in: what it wakes
 * counts in them, and they are released once it has settled. Served, c's
 * own reply waits for what its own writes woke. */
static void block_retry(struct client *c) {
    struct bstate *bs = c->bstate;
    struct cmd_ctx *x = &c->ctx;
    struct chain_run run;
    chain_begin(&run, c, c);
    x->argv = bs->argv;
    x->argc = bs->argc;
    x->cmd = bs->cmd;
    x->now_ms = c->w->now_ms;
    x->flags = CTX_RETRY | client_ctx_flags(c);
    x->warm_n = x->warm_i = 0;
    x->errors = 0;
    x->before_unlock = retry_settle;
    bs->stay = 0;
    bs->settled = 0;
    bs->retry_at = 0;
    long long dt = exec_command(x);
    x->before_unlock = NULL;
    x->flags &= ~CTX_RETRY;
    bs->exec_ns += dt;
    if (!bs->settled) {
        /* Refused before it ran (a script past busy-reply-threshold holds
         * a shard): nothing was looked at, its waiters are still signaled
         * and count in their batches. Try again shortly (block_timeouts). */
        bs->retry_at = c->w->now_ms + BLOCK_RETRY_MS;
        bs->stay = 1;
    }
    if (bs->stay) {
        x->argv = c->argv;
        x->argc = c->argc;
        chain_end(&run);
        return;
    }
    const struct command *cmd = bs->cmd;
    /* Counted while x->argv is still the copy it ran with (slow log). */
    client_count_call(c, cmd, bs->exec_ns);
    x->argv = c->argv;
    x->argc = c->argc;
    block_finish(c);
    c->lastcmd = cmd;
    /* Released once c is no longer counted as blocked: a writer whose
     * batch ends here sees it served (INFO, CLIENT LIST). */
    chain_end(&run);
    client_check_output_limits(c);
    if (client_resume(c) < 0) client_close(c);
}

static void wake_mail(struct worker *w, void *arg) {
    struct client *c = blocked_find(w, (uint64_t)(uintptr_t)arg);
    /* Gone, or going: its removal already passed the turn on. */
    if (!c || (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_ASAP))) return;
    block_retry(c);
}

/* ---- timeouts ------------------------------------------------------------ */

void block_rerun_at(struct cmd_ctx *c, long long when_ms) {
    struct bstate *bs = c->cl ? c->cl->bstate : NULL;
    if (!bs) return;
    if (!bs->retry_at || when_ms < bs->retry_at) bs->retry_at = when_ms;
}

void block_timeouts(struct worker *w) {
    long long now = w->now_ms;
    struct client *c = w->blocked;
    while (c) {
        struct client *next = c->next_blocked;
        struct bstate *bs = c->bstate;
        if (!(c->flags & CLIENT_CLOSING)) {
            if (bs->deadline && now >= bs->deadline) block_unblock(c, 0);
            else if (bs->retry_at && now >= bs->retry_at) block_retry(c);
        }
        c = next;
    }
}

long long block_wait_ms(struct worker *w, long long wait) {
    long long now = hk_mstime();
    for (struct client *c = w->blocked; c; c = c->next_blocked) {
        long long d = c->bstate->deadline, r = c->bstate->retry_at;
        if (r && (!d || r < d)) d = r;
        if (!d) continue;
        long long left = d > now ? d - now : 0;
        if (left < wait) wait = left;
    }
    return wait;
}
