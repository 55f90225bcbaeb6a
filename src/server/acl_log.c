/* acl_log.c - ACL LOG: the refusals and failed authentications the ACL
 * check records (acl.h), with Redis 7.2's fields, and INFO's
 * acl_access_denied_* counters.
 *
 * What it is not: the check itself (acl.c) or the ACL LOG reply
 * (src/cmd/acl_cmd.c). The entries are under log_lock, a leaf: a refusal
 * builds its client-info line before taking it. */
#include "acl.h"

#include "../core/alloc.h"
#include "../core/buf.h"
#include "../core/util.h"
#include "clientmem.h"
#include "config.h"
#include "server.h"

#include <pthread.h>
#include <string.h>

struct log_entry {
    long long count;
    int reason, context;
    char *object, *username, *client_info;
    long long entry_id, created_ms, updated_ms;
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct log_entry *logv; /* newest first */
static int nlog, caplog;
static long long next_entry_id;

static const char *reason_name(int r) {
    switch (r) {
    case ACL_DENIED_CMD: return "command";
    case ACL_DENIED_KEY: return "key";
    case ACL_DENIED_CHANNEL: return "channel";
    default: return "auth";
    }
}
static const char *context_name(int c) { return c == ACL_CTX_MULTI ? "multi" : c == ACL_CTX_LUA ? "lua" : "toplevel"; }

static void entry_free(struct log_entry *e) {
    hk_free(e->object);
    hk_free(e->username);
    hk_free(e->client_info);
}

/* INFO stats' acl_access_denied_*: auth, cmd, key, channel. */
static _Atomic unsigned long long denied_count[4];

void acl_denied_counts(unsigned long long out[4]) {
    for (int i = 0; i < 4; i++) out[i] = atomic_load_explicit(&denied_count[i], memory_order_relaxed);
}

void acl_log_add(struct client *cl, int reason, int context, const char *object, size_t olen, const char *user) {
    int slot = reason == ACL_DENIED_AUTH ? 0 : reason == ACL_DENIED_CMD ? 1 : reason == ACL_DENIED_KEY ? 2 : 3;
    atomic_fetch_add_explicit(&denied_count[slot], 1, memory_order_relaxed);
    long long max = CFG(acllog_max_len);
    char *info = NULL;
    if (cl) {
        struct hk_buf b = {0};
        struct client_run_view v;
        client_run_view_of(cl, &v);
        client_info_cat(&b, cl, cl->ctx.cmd ? cl->ctx.cmd : cl->lastcmd, &v);
        hk_buf_add(&b, "", 1, 64);
        info = b.p;
    } else {
        info = hk_strdup("");
    }
    long long now = hk_mstime();
    pthread_mutex_lock(&log_lock);
    /* Like Redis: a recent entry with the same reason, context, object
     * and user is counted again instead of added. */
    for (int i = 0; i < nlog && i < 10; i++) {
        struct log_entry *e = &logv[i];
        if (e->reason == reason && e->context == context && strlen(e->object) == olen &&
            !memcmp(e->object, object, olen) && !strcmp(e->username, user) && now - e->updated_ms <= 60000) {
            e->count++;
            e->updated_ms = now;
            hk_free(e->client_info);
            e->client_info = info;
            struct log_entry t = *e;
            memmove(&logv[1], &logv[0], (size_t)i * sizeof(*logv));
            logv[0] = t;
            pthread_mutex_unlock(&log_lock);
            return;
        }
    }
    if (max <= 0) {
        pthread_mutex_unlock(&log_lock);
        hk_free(info);
        return;
    }
    if (nlog == caplog) {
        caplog = caplog ? caplog * 2 : 16;
        logv = hk_realloc(logv, (size_t)caplog * sizeof(*logv));
    }
    memmove(&logv[1], &logv[0], (size_t)nlog * sizeof(*logv));
    logv[0] = (struct log_entry){1, reason, context, hk_strndup(object, olen), hk_strdup(user), info,
                                 next_entry_id++, now, now};
    nlog++;
    while (nlog > max) entry_free(&logv[--nlog]);
    pthread_mutex_unlock(&log_lock);
}

int acl_log_get(long n, struct acl_log_view **out) {
    pthread_mutex_lock(&log_lock);
    /* A smaller acllog-max-len applies from the next read too. */
    long long max = CFG(acllog_max_len);
    while (nlog > max && nlog > 0) entry_free(&logv[--nlog]);
    int m = n < 0 || n > nlog ? nlog : (int)n;
    struct acl_log_view *v = hk_calloc((size_t)(m ? m : 1), sizeof(*v));
    for (int i = 0; i < m; i++) {
        struct log_entry *e = &logv[i];
        v[i] = (struct acl_log_view){e->count,         reason_name(e->reason), context_name(e->context),
                                     hk_strdup(e->object), hk_strdup(e->username), hk_strdup(e->client_info),
                                     e->entry_id,      e->created_ms,          e->updated_ms};
    }
    pthread_mutex_unlock(&log_lock);
    *out = v;
    return m;
}

void acl_log_free(struct acl_log_view *v, int n) {
    for (int i = 0; i < n; i++) {
        hk_free(v[i].object);
        hk_free(v[i].username);
        hk_free(v[i].client_info);
    }
    hk_free(v);
}

void acl_log_reset(void) {
    pthread_mutex_lock(&log_lock);
    for (int i = 0; i < nlog; i++) entry_free(&logv[i]);
    nlog = 0;
    pthread_mutex_unlock(&log_lock);
}

