/* blocking.c - the registry of clients blocked on keys, their wake-ups,
 * timeouts and removal. See blocking.h for the model and docs/threads.md
 * for who owns what.
 *
 * Ownership: struct bkey and struct bwaiter live in a shard's list and are
 * read or changed only under that shard's lock. A waiter is created and
 * freed only by its client's own worker (block_client, a re-run, a timeout,
 * CLIENT UNBLOCK, or the client going away); other threads only read its
 * client id and worker index and post a wake-up there. struct bstate (the
 * copied command, the deadline, the client's waiters) belongs to the
 * client and is touched only on its worker. This file is not the command
 * handlers (src/cmd/blocking_cmd.c). */
#include "blocking.h"

#include "../core/alloc.h"
#include "../store/db.h"
#include "creply.h"
#include "server.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct bwaiter {
    struct bwaiter *next, *prev; /* in the key's FIFO */
    struct bkey *bk;
    uint64_t cid;
    int worker;
    int kind;
    int signaled; /* a wake-up is on its way; cleared by the re-run */
};

struct bkey {
    struct bkey *next; /* in the shard's list */
    struct bwaiter *head, *tail;
    int nkind[BK_NKINDS];
    int db;
    size_t klen;
    char key[];
};

struct bstate {
    const struct command *cmd;
    long long deadline; /* ms, 0: forever */
    int stay;           /* set by block_client during a re-run */
    int argc;
    hk_slice *argv;     /* copies: the query buffer moves on */
    int nw;
    struct bwaiter **w;
    unsigned *shards;   /* sorted, unique shards of the waiters */
    int nshards;
};

/* ---- the per-shard registry (shard locked) ------------------------------ */

static struct bkey *bkey_find(unsigned shard, int db, const char *key, size_t klen) {
    for (struct bkey *bk = ks.shards[shard].bkeys; bk; bk = bk->next)
        if (bk->db == db && bk->klen == klen && memcmp(bk->key, key, klen) == 0) return bk;
    return NULL;
}

static struct bwaiter *first_of_kind(struct bkey *bk, int kind) {
    if (!bk->nkind[kind]) return NULL;
    for (struct bwaiter *bw = bk->head; bw; bw = bw->next)
        if (bw->kind == kind) return bw;
    return NULL;
}

static void wake_mail(struct worker *w, void *arg);

/* Ask the waiter's worker to re-run its command. The mailbox lock is a
 * leaf lock, so posting under shard locks cannot deadlock. */
static void signal_waiter(struct bwaiter *bw) {
    if (bw->signaled) return;
    bw->signaled = 1;
    worker_post(&server.workers[bw->worker], wake_mail, (void *)(uintptr_t)bw->cid);
}

static void signal_key(struct bkey *bk) {
    for (int kind = 0; kind < BK_NKINDS; kind++) {
        struct bwaiter *bw = first_of_kind(bk, kind);
        if (bw) signal_waiter(bw);
    }
}

/* db_ready_hook: a key (or, with key NULL, every key of db) of a shard that
 * has waiters was written. Only the first waiter of each kind is woken;
 * it passes the turn on when it leaves. */
static void ready_hook(unsigned shard, int db, const char *key, size_t klen) {
    if (key) {
        struct bkey *bk = bkey_find(shard, db, key, klen);
        if (bk) signal_key(bk);
        return;
    }
    for (struct bkey *bk = ks.shards[shard].bkeys; bk; bk = bk->next)
        if (bk->db == db) signal_key(bk);
}

void block_init(void) { db_ready_hook = ready_hook; }

/* Take c's waiters out of their FIFOs (their shards locked). The next
 * waiter of the same kind is woken where c was first: the key may hold
 * data c did not take (a spurious wake-up only costs a re-run). */
static void unlink_waiters(struct client *c) {
    struct bstate *bs = c->bstate;
    for (int i = 0; i < bs->nw; i++) {
        struct bwaiter *bw = bs->w[i];
        struct bkey *bk = bw->bk;
        int was_first = first_of_kind(bk, bw->kind) == bw;
        if (bw->prev) bw->prev->next = bw->next;
        else bk->head = bw->next;
        if (bw->next) bw->next->prev = bw->prev;
        else bk->tail = bw->prev;
        bk->nkind[bw->kind]--;
        if (was_first) {
            struct bwaiter *n = first_of_kind(bk, bw->kind);
            if (n) signal_waiter(n);
        }
        if (!bk->head) {
            unsigned s = ks_shard_of(bk->key, bk->klen);
            for (struct bkey **p = &ks.shards[s].bkeys; *p; p = &(*p)->next)
                if (*p == bk) {
                    *p = bk->next;
                    break;
                }
            hk_free(bk);
            stat_add(&c->w->nblocking_keys, (unsigned long long)-1);
        }
        hk_free(bw);
    }
    bs->nw = 0;
}

static void lock_shards(const unsigned *s, int n) {
    for (int i = 0; i < n; i++) shard_lock(s[i]);
}

static void unlock_shards(const unsigned *s, int n) {
    for (int i = n; i-- > 0;) shard_unlock(s[i]);
}

static int cmp_unsigned(const void *a, const void *b) {
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

/* Sort and dedupe n shard numbers in place; returns the new count. */
static int shards_unique(unsigned *s, int n) {
    qsort(s, (size_t)n, sizeof(unsigned), cmp_unsigned);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || s[m - 1] != s[i]) s[m++] = s[i];
    return m;
}

/* ---- blocking a client --------------------------------------------------- */

int block_parse_timeout(struct client *c, int idx, long long *deadline_ms) {
    long double t;
    if (!hk_str2ld(c->argv[idx].ptr, c->argv[idx].len, &t)) {
        reply_error(c, "ERR timeout is not a float or out of range");
        return 0;
    }
    t *= 1000.0L;
    if (t > (long double)LLONG_MAX) {
        reply_error(c, "ERR timeout is out of range");
        return 0;
    }
    long long ms = (long long)ceill(t);
    if (ms < 0) {
        reply_error(c, "ERR timeout is negative");
        return 0;
    }
    if (ms > 0) {
        if (ms > LLONG_MAX - c->now_ms) {
            reply_error(c, "ERR timeout is out of range");
            return 0;
        }
        ms += c->now_ms;
    }
    *deadline_ms = ms;
    return 1;
}

int block_may_serve(struct client *c, const struct keyref *k, int kind) {
    struct bkey *bk = bkey_find(k->shard, k->db, k->key, k->klen);
    if (!bk) return 1;
    struct bwaiter *first = first_of_kind(bk, kind);
    if (!first) return 1;
    return block_is_retry(c) && first->cid == c->id;
}

void block_client(struct client *c, const int *keyidx, int nkeys, int kind, long long deadline_ms, int null_bulk) {
    if (block_is_retry(c)) {
        c->bstate->stay = 1;
        return;
    }
    if (c->flags & CLIENT_DENY_BLOCKING) {
        if (null_bulk) reply_null(c);
        else reply_null_array(c);
        return;
    }
    struct bstate *bs = hk_calloc(1, sizeof(*bs));
    bs->cmd = c->cmd;
    bs->deadline = deadline_ms;
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
    bs->shards = hk_malloc((size_t)nkeys * sizeof(unsigned));
    for (int i = 0; i < nkeys; i++) {
        const hk_slice *a = &c->argv[keyidx[i]];
        unsigned s = ks_shard_of(a->ptr, a->len);
        struct bkey *bk = bkey_find(s, c->db, a->ptr, a->len);
        if (!bk) {
            bk = hk_calloc(1, sizeof(*bk) + a->len);
            memcpy(bk->key, a->ptr, a->len);
            bk->klen = a->len;
            bk->db = c->db;
            bk->next = ks.shards[s].bkeys;
            ks.shards[s].bkeys = bk;
            stat_add(&c->w->nblocking_keys, 1);
        } else if (bk->tail && bk->tail->cid == c->id) {
            continue; /* the same key named twice */
        }
        struct bwaiter *bw = hk_calloc(1, sizeof(*bw));
        bw->bk = bk;
        bw->cid = c->id;
        bw->worker = c->w->id;
        bw->kind = kind;
        bw->prev = bk->tail;
        if (bk->tail) bk->tail->next = bw;
        else bk->head = bw;
        bk->tail = bw;
        bk->nkind[kind]++;
        bs->w[bs->nw++] = bw;
        bs->shards[bs->nshards++] = s;
    }
    bs->nshards = shards_unique(bs->shards, bs->nshards);
    c->bstate = bs;
    c->flags |= CLIENT_BLOCKED;
    struct worker *w = c->w;
    c->prev_blocked = NULL;
    c->next_blocked = w->blocked;
    if (w->blocked) w->blocked->prev_blocked = c;
    w->blocked = c;
    stat_add(&w->nblocked, 1);
    if (deadline_ms) stat_add(&w->nblocked_timeout, 1);
}

/* Drop c's blocked state (its waiters already unlinked). */
static void block_finish(struct client *c) {
    struct bstate *bs = c->bstate;
    struct worker *w = c->w;
    if (c->prev_blocked) c->prev_blocked->next_blocked = c->next_blocked;
    else w->blocked = c->next_blocked;
    if (c->next_blocked) c->next_blocked->prev_blocked = c->prev_blocked;
    c->next_blocked = c->prev_blocked = NULL;
    stat_add(&w->nblocked, (unsigned long long)-1);
    if (bs->deadline) stat_add(&w->nblocked_timeout, (unsigned long long)-1);
    hk_free(bs->argv);
    hk_free(bs->w);
    hk_free(bs->shards);
    hk_free(bs);
    c->bstate = NULL;
    c->flags &= ~CLIENT_BLOCKED;
}

void block_remove(struct client *c) {
    struct bstate *bs = c->bstate;
    lock_shards(bs->shards, bs->nshards);
    unlink_waiters(c);
    unlock_shards(bs->shards, bs->nshards);
    block_finish(c);
}

/* Count the blocked command once, now that it answered. */
static void count_call(struct client *c, const struct command *cmd, long long nsec) {
    struct cmdstat *st = &c->w->cmdstats[cmd->id];
    stat_add(&st->calls, 1);
    stat_add(&st->nsec, (unsigned long long)nsec);
    if (c->errors_in_cmd) stat_add(&st->failed, 1);
}

/* Unblock without serving: the timeout's null array, or CLIENT UNBLOCK
 * ERROR's error; then carry on with the client's pipelined input. */
void block_unblock(struct client *c, int error) {
    const struct command *cmd = c->bstate->cmd;
    block_remove(c);
    c->errors_in_cmd = 0;
    if (error) reply_error(c, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
    else reply_null_array(c);
    count_call(c, cmd, 0);
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

/* Re-run c's blocked command under its shard locks, in retry mode. */
static void block_retry(struct client *c) {
    struct worker *w = c->w;
    struct bstate *bs = c->bstate;
    hk_slice *saved_argv = c->argv;
    int saved_argc = c->argc;
    const struct command *saved_cmd = c->cmd;
    c->argv = bs->argv;
    c->argc = bs->argc;
    c->cmd = bs->cmd;
    c->now_ms = w->now_ms;
    c->errors_in_cmd = 0;
    bs->stay = 0;

    int idx_stack[64];
    int max = bs->argc > 64 ? bs->argc : 64;
    int *idx = max > 64 ? hk_malloc((size_t)max * sizeof(int)) : idx_stack;
    int n = command_keys(bs->cmd, c, idx, max);
    if (n < 0) n = 0;
    unsigned *locks = hk_malloc(((size_t)n + 1) * sizeof(unsigned));
    for (int i = 0; i < n; i++) locks[i] = ks_shard_of(c->argv[idx[i]].ptr, c->argv[idx[i]].len);
    int nl = shards_unique(locks, n);
    if (idx != idx_stack) hk_free(idx);
    lock_shards(locks, nl);
    for (int i = 0; i < bs->nw; i++) bs->w[i]->signaled = 0;
    store_now_ms = c->now_ms;
    store_touch = !(c->flags & CLIENT_NO_TOUCH);
    c->flags |= CLIENT_BLOCK_RETRY;
    long long t0 = hk_clock_ns();
    bs->cmd->proc(c);
    long long dt = hk_clock_ns() - t0;
    c->flags &= ~CLIENT_BLOCK_RETRY;
    int stay = bs->stay;
    if (!stay) unlink_waiters(c);
    unlock_shards(locks, nl);
    hk_free(locks);
    c->argv = saved_argv;
    c->argc = saved_argc;
    c->cmd = saved_cmd;
    if (stay) return;
    const struct command *cmd = bs->cmd;
    block_finish(c);
    c->lastcmd = cmd;
    count_call(c, cmd, dt);
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
