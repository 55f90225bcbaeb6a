/* server.c - server administration commands: FLUSHALL, FLUSHDB, DBSIZE... */
#include "../core/alloc.h"
#include "cmds.h"
#include "cmdutil.h"

#include <pthread.h>

static void *lazyfree_main(void *arg) {
    ks_flushed_free(arg);
    return NULL;
}

/* Free detached tables now, or on a background thread for ASYNC. */
static void free_flushed(struct flushed *f, int async) {
    if (async) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &a, lazyfree_main, f);
        pthread_attr_destroy(&a);
        if (rc == 0) return;
    }
    ks_flushed_free(f);
}

/* Parse the optional ASYNC|SYNC argument; -1 after replying an error. */
static int flush_mode(struct client *c) {
    if (c->argc == 1) return 0;
    if (c->argc == 2 && arg_is(&c->argv[1], "ASYNC")) return 1;
    if (c->argc == 2 && arg_is(&c->argv[1], "SYNC")) return 0;
    reply_error(c, ERR_SYNTAX);
    return -1;
}

void cmd_flushall(struct client *c) {
    int async = flush_mode(c);
    if (async < 0) return;
    free_flushed(ks_flush(-1), async);
    stat_add(&c->w->sstats.dirty, 1);
    reply_ok(c);
}

void cmd_flushdb(struct client *c) {
    int async = flush_mode(c);
    if (async < 0) return;
    free_flushed(ks_flush(c->db), async);
    stat_add(&c->w->sstats.dirty, 1);
    reply_ok(c);
}

void cmd_dbsize(struct client *c) { reply_int(c, (long long)ks_dbsize(c->db)); }
