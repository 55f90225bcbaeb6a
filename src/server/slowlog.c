/* slowlog.c - the slow log: the last slowlog-max-len commands that took
 * at least slowlog-log-slower-than microseconds, newest first.
 *
 * Commands under the threshold never get here (client_count_call compares
 * their time with obs_slow_ns, one relaxed load). A slow one builds its
 * entry (trimmed argument copies, peer address, client name) on its own
 * thread without a lock, then takes slowlog_lock only to take the next id
 * and link the entry at the head, so ids are unique and increase in the
 * order entries are listed. slowlog_lock is a leaf: nothing else is taken
 * while it is held. This file does not format replies. */
#include "observe.h"

#include "../core/alloc.h"
#include "config.h"
#include "server.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t slowlog_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slowlog_entry *head, *tail;
static long long nentries, next_id;

static const char redacted[] = "(redacted)";

static void set_arg(hk_slice *dst, const char *p, size_t len) {
    dst->ptr = hk_strndup(p, len);
    dst->len = len;
}

static void entry_free(struct slowlog_entry *e) {
    for (int i = 0; i < e->argc; i++) hk_free((void *)e->argv[i].ptr);
    hk_free(e->argv);
    hk_free(e->peer);
    hk_free(e->name);
    hk_free(e);
}

/* Redis keeps at most 32 arguments (the last says how many more there
 * were) and 128 bytes of each (plus how many more there were). */
static struct slowlog_entry *entry_new(struct client *c, const struct command *cmd, long long us) {
    const hk_slice *argv = c->ctx.argv;
    int argc = c->ctx.argc;
    struct slowlog_entry *e = hk_calloc(1, sizeof(*e));
    int n = argc > SLOWLOG_MAX_ARGC ? SLOWLOG_MAX_ARGC : argc;
    e->argc = n;
    e->argv = hk_malloc((size_t)(n ? n : 1) * sizeof(hk_slice));
    for (int j = 0; j < n; j++) {
        char buf[64];
        if (n != argc && j == n - 1) {
            int l = snprintf(buf, sizeof(buf), "... (%d more arguments)", argc - n + 1);
            set_arg(&e->argv[j], buf, (size_t)l);
        } else if (observe_redacted(cmd, argv, argc, j)) {
            set_arg(&e->argv[j], redacted, sizeof(redacted) - 1);
        } else if (argv[j].len > SLOWLOG_MAX_STRING) {
            int l = snprintf(buf, sizeof(buf), "... (%zu more bytes)", argv[j].len - SLOWLOG_MAX_STRING);
            char *s = hk_malloc(SLOWLOG_MAX_STRING + (size_t)l + 1);
            memcpy(s, argv[j].ptr, SLOWLOG_MAX_STRING);
            memcpy(s + SLOWLOG_MAX_STRING, buf, (size_t)l + 1);
            e->argv[j].ptr = s;
            e->argv[j].len = SLOWLOG_MAX_STRING + (size_t)l;
        } else {
            set_arg(&e->argv[j], argv[j].ptr, argv[j].len);
        }
    }
    e->time = (long long)time(NULL);
    e->duration_us = us;
    e->peer = hk_strdup(c->addr);
    e->name = hk_strdup(c->name ? c->name : "");
    return e;
}

/* Unlink the entries past max; returns the chain of unlinked ones (the
 * caller frees them after unlocking). Under slowlog_lock. */
static struct slowlog_entry *cut_tail(long long max) {
    struct slowlog_entry *cut = NULL;
    while (nentries > max && tail) {
        struct slowlog_entry *e = tail;
        tail = e->prev;
        if (tail) tail->next = NULL;
        else head = NULL;
        e->next = cut;
        cut = e;
        nentries--;
    }
    return cut;
}

static void free_chain(struct slowlog_entry *e) {
    while (e) {
        struct slowlog_entry *next = e->next;
        entry_free(e);
        e = next;
    }
}

void slowlog_push(struct client *c, const struct command *cmd, long long us) {
    struct slowlog_entry *e = entry_new(c, cmd, us);
    pthread_mutex_lock(&slowlog_lock);
    e->id = next_id++;
    e->next = head;
    e->prev = NULL;
    if (head) head->prev = e;
    else tail = e;
    head = e;
    nentries++;
    struct slowlog_entry *cut = cut_tail(CFG(slowlog_max_len));
    pthread_mutex_unlock(&slowlog_lock);
    free_chain(cut);
}

void slowlog_trim(void) {
    pthread_mutex_lock(&slowlog_lock);
    struct slowlog_entry *cut = cut_tail(CFG(slowlog_max_len));
    pthread_mutex_unlock(&slowlog_lock);
    free_chain(cut);
}

void slowlog_reset(void) {
    pthread_mutex_lock(&slowlog_lock);
    struct slowlog_entry *cut = cut_tail(0);
    pthread_mutex_unlock(&slowlog_lock);
    free_chain(cut);
}

long long slowlog_len(void) {
    pthread_mutex_lock(&slowlog_lock);
    long long n = nentries;
    pthread_mutex_unlock(&slowlog_lock);
    return n;
}

void slowlog_visit(long long count, slowlog_visit_fn fn, void *arg) {
    pthread_mutex_lock(&slowlog_lock);
    long long n = count < 0 || count > nentries ? nentries : count;
    fn(arg, NULL, n);
    long long i = 0;
    for (struct slowlog_entry *e = head; e && i < n; e = e->next, i++) fn(arg, e, n);
    pthread_mutex_unlock(&slowlog_lock);
}
