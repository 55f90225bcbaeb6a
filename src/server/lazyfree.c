/* lazyfree.c - the background freeing thread and the lazy-free policy;
 * see lazyfree.h. */
#include "lazyfree.h"

#include "../core/alloc.h"
#include "../store/db.h"
#include "config.h"
#include "server.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

/* Tables detached by one FLUSHALL/FLUSHDB, with their key count (what
 * they count for in the INFO counters); or, with f NULL, a notification
 * to post to worker w once the jobs before it are done. */
struct flush_job {
    struct flush_job *next;
    struct flushed *f;
    unsigned long long keys;
    struct worker *w;
    mail_fn fn;
    void *arg;
};

/* The queue: entries linked through node.next (they are unlinked from
 * every table, so the pointer is free), flush jobs through their own
 * link. Guarded by `lock`; `stop` is set once, by lazyfree_stop. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    slab_h head, *tail; /* entries, chained through their table link */
    struct flush_job *fhead, **ftail;
    int stop;
    pthread_t thread;
} lf = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

/* Set before the workers start and cleared after they are joined. */
static int running;
static _Atomic unsigned long long pending_objects, freed_objects;

static void count_freed(unsigned long long n) {
    atomic_fetch_sub_explicit(&pending_objects, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&freed_objects, n, memory_order_relaxed);
}

static void *lazyfree_main(void *arg) {
    (void)arg;
    /* Signals are the main thread's (sigwait). */
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    hk_alloc_thread_init();
    pthread_mutex_lock(&lf.lock);
    for (;;) {
        while (!lf.head && !lf.fhead && !lf.stop) pthread_cond_wait(&lf.cond, &lf.lock);
        if (!lf.head && !lf.fhead) break; /* stopping, and nothing left */
        slab_h n = lf.head;
        struct flush_job *j = lf.fhead;
        lf.head = 0;
        lf.tail = &lf.head;
        lf.fhead = NULL;
        lf.ftail = &lf.fhead;
        pthread_mutex_unlock(&lf.lock);
        while (n) {
            struct kv *e = slab_ptr(n);
            n = e->next;
            kv_free(e);
            count_freed(1);
        }
        while (j) {
            struct flush_job *next = j->next;
            if (j->f) {
                ks_flushed_free(j->f);
                count_freed(j->keys);
            } else {
                worker_post(j->w, j->fn, j->arg);
            }
            hk_free(j);
            j = next;
        }
        pthread_mutex_lock(&lf.lock);
    }
    pthread_mutex_unlock(&lf.lock);
    return NULL;
}

/* The lazyfree-lazy-* setting that governs a reason. */
static int lazy_for(int why) {
    switch (why) {
    case DB_FREE_UNLINK: return 1;
    case DB_FREE_USER_DEL: return CFG(lazyfree_lazy_user_del) != 0;
    case DB_FREE_SERVER_DEL: return CFG(lazyfree_lazy_server_del) != 0;
    case DB_FREE_EXPIRE: return CFG(lazyfree_lazy_expire) != 0;
    case DB_FREE_EVICT: return CFG(lazyfree_lazy_eviction) != 0;
    default: return 0;
    }
}

/* db_free_hook: runs on a worker, usually with shard locks held; the
 * queue lock is a leaf and held for two pointer writes. */
static int free_hook(struct kv *e, int why) {
    if (!lazy_for(why) || kv_free_effort(e) <= LAZYFREE_THRESHOLD) return 0;
    atomic_fetch_add_explicit(&pending_objects, 1, memory_order_relaxed);
    e->next = 0;
    pthread_mutex_lock(&lf.lock);
    *lf.tail = slab_handle(e);
    lf.tail = &e->next;
    pthread_cond_signal(&lf.cond);
    pthread_mutex_unlock(&lf.lock);
    return 1;
}

void lazyfree_start(void) {
    lf.tail = &lf.head;
    lf.ftail = &lf.fhead;
    if (pthread_create(&lf.thread, NULL, lazyfree_main, NULL) != 0) {
        /* Everything is then freed in place, as with every setting off. */
        hk_log(LL_WARNING, "Can't create the lazy free thread: values are freed synchronously");
        return;
    }
    running = 1;
    db_free_hook = free_hook;
}

void lazyfree_stop(void) {
    if (!running) return;
    db_free_hook = NULL;
    pthread_mutex_lock(&lf.lock);
    lf.stop = 1;
    pthread_cond_signal(&lf.cond);
    pthread_mutex_unlock(&lf.lock);
    pthread_join(lf.thread, NULL);
    running = 0;
}

static void queue_job(struct flush_job *j) {
    j->next = NULL;
    pthread_mutex_lock(&lf.lock);
    *lf.ftail = j;
    lf.ftail = &j->next;
    pthread_cond_signal(&lf.cond);
    pthread_mutex_unlock(&lf.lock);
}

void lazyfree_flushed(struct flushed *f) {
    unsigned long long keys = ks_flushed_keys(f);
    if (!running) {
        ks_flushed_free(f);
        return;
    }
    struct flush_job *j = hk_calloc(1, sizeof(*j));
    j->f = f;
    j->keys = keys;
    atomic_fetch_add_explicit(&pending_objects, keys, memory_order_relaxed);
    queue_job(j);
}

void lazyfree_notify(struct worker *w, mail_fn fn, void *arg) {
    if (!running) {
        worker_post(w, fn, arg);
        return;
    }
    struct flush_job *j = hk_calloc(1, sizeof(*j));
    j->w = w;
    j->fn = fn;
    j->arg = arg;
    queue_job(j);
}

unsigned long long lazyfree_pending(void) { return atomic_load_explicit(&pending_objects, memory_order_relaxed); }
unsigned long long lazyfree_freed(void) { return atomic_load_explicit(&freed_objects, memory_order_relaxed); }
void lazyfree_reset_stats(void) { atomic_store_explicit(&freed_objects, 0, memory_order_relaxed); }
