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
 * command handlers are in src/cmd/blocking_cmd.c. */
#include "blocking.h"

#include "../core/alloc.h"
#include "../store/db.h"
#include "creply.h"
#include "server.h"

#include <string.h>

struct bstate {
    const struct command *cmd;
    long long deadline; /* ms, 0: forever */
    int stay;           /* set by block_client during a re-run */
    long long exec_ns;  /* time its runs took so far: it is counted once, with all of it */
    int argc;
    hk_slice *argv;     /* copies: the query buffer moves on */
    int nw;
    struct bwaiter **w;
    struct lockset shards; /* of the waiters */
};

static void wake_mail(struct worker *w, void *arg);

/* wk_signal_hook: ask the waiter's worker to re-run its command. The
 * mailbox lock is a leaf lock, so posting under shard locks cannot
 * deadlock. */
static void post_wakeup(const struct bwaiter *bw) {
    worker_post(&server.workers[bw->worker], wake_mail, (void *)(uintptr_t)bw->cid);
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
    for (int i = 0; i < nkeys; i++) {
        struct keyref k;
        key_of(c, keyidx[i], &k);
        struct wkey *wk = wk_find(&k);
        /* The same key named twice waits once. */
        if (wk && wk->tail && wk->tail->cid == cl->id) continue;
        if (!wk || !wk->head) stat_add(&cl->w->nblocking_keys, 1);
        bs->w[bs->nw++] = wk_wait(&k, cl->id, cl->w->id, kind);
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

/* Take c's waiters out of their FIFOs (their shards locked). Where c was
 * first of its kind the next waiter is woken (watch.c): the key may hold
 * data c did not take; a spurious wake-up only costs a re-run. */
static void leave_fifos(struct client *c) {
    struct bstate *bs = c->bstate;
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
    ls_acquire(&bs->shards);
    leave_fifos(c);
    ls_release(&bs->shards);
    block_finish(c);
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
    if (bs->stay) {
        for (int i = 0; i < bs->nw; i++) bs->w[i]->signaled = 0;
    } else {
        leave_fifos(c);
    }
}

/* Re-run c's blocked command under its shard locks, in retry mode. */
static void block_retry(struct client *c) {
    struct bstate *bs = c->bstate;
    struct cmd_ctx *x = &c->ctx;
    x->argv = bs->argv;
    x->argc = bs->argc;
    x->cmd = bs->cmd;
    x->now_ms = c->w->now_ms;
    x->flags = CTX_RETRY | client_ctx_flags(c);
    x->warm_n = x->warm_i = 0;
    x->errors = 0;
    x->before_unlock = retry_settle;
    bs->stay = 0;
    long long dt = exec_command(x);
    x->before_unlock = NULL;
    x->flags &= ~CTX_RETRY;
    bs->exec_ns += dt;
    if (bs->stay) {
        x->argv = c->argv;
        x->argc = c->argc;
        return;
    }
    const struct command *cmd = bs->cmd;
    /* Counted while x->argv is still the copy it ran with (slow log). */
    client_count_call(c, cmd, bs->exec_ns);
    x->argv = c->argv;
    x->argc = c->argc;
    block_finish(c);
    c->lastcmd = cmd;
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

void block_timeouts(struct worker *w) {
    long long now = w->now_ms;
    struct client *c = w->blocked;
    while (c) {
        struct client *next = c->next_blocked;
        long long d = c->bstate->deadline;
        if (d && now >= d && !(c->flags & CLIENT_CLOSING)) block_unblock(c, 0);
        c = next;
    }
}

long long block_wait_ms(struct worker *w, long long wait) {
    long long now = hk_mstime();
    for (struct client *c = w->blocked; c; c = c->next_blocked) {
        long long d = c->bstate->deadline;
        if (!d) continue;
        long long left = d > now ? d - now : 0;
        if (left < wait) wait = left;
    }
    return wait;
}
