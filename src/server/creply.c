/* creply.c - error replies with accounting, and argument parse helpers. */
#include "creply.h"

#include "../core/alloc.h"

#include <stdarg.h>
#include <stdio.h>

/* Registry of error codes seen so far. Append-only: a name, once given an
 * index, never changes, so readers need the lock only to add. */
static pthread_mutex_t errstat_lock = PTHREAD_MUTEX_INITIALIZER;
static char *errstat_names[HK_MAX_ERRSTATS];
static _Atomic int errstat_n;

int errstat_index(const char *code, size_t len) {
    int n = atomic_load_explicit(&errstat_n, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (strlen(errstat_names[i]) == len && memcmp(errstat_names[i], code, len) == 0) return i;
    pthread_mutex_lock(&errstat_lock);
    n = atomic_load_explicit(&errstat_n, memory_order_relaxed);
    int idx = -1;
    for (int i = 0; i < n; i++)
        if (strlen(errstat_names[i]) == len && memcmp(errstat_names[i], code, len) == 0) idx = i;
    if (idx < 0 && n < HK_MAX_ERRSTATS) {
        errstat_names[n] = hk_strndup(code, len);
        idx = n;
        atomic_store_explicit(&errstat_n, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&errstat_lock);
    return idx;
}

const char *errstat_name(int idx) { return errstat_names[idx]; }
int errstat_count(void) { return atomic_load_explicit(&errstat_n, memory_order_acquire); }

void reply_error_len(struct cmd_ctx *c, const char *msg, size_t len) {
    c->errors++;
    struct worker *w = c->w;
    if (w) {
        stat_add(&w->stats.total_errors, 1);
        /* The code is the text before the first space within 32 bytes;
         * without one it counts as ERR, as in Redis. */
        size_t cl = 0, lim = len < 32 ? len : 32;
        while (cl < lim && msg[cl] != ' ') cl++;
        int idx = cl < lim ? errstat_index(msg, cl) : errstat_index("ERR", 3);
        if (idx >= 0) stat_add(&w->errorstats[idx], 1);
    }
    if (!reply_muted(c)) rw_error(c->out, msg, len);
}

void reply_errorf(struct cmd_ctx *c, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof(buf)) n = sizeof(buf) - 1;
    reply_error_len(c, buf, (size_t)n);
}

int arg_ll_or_reply(struct cmd_ctx *c, const hk_slice *a, long long *out, const char *err) {
    if (hk_str2ll(a->ptr, a->len, out)) return 1;
    reply_error(c, err ? err : ERR_NOT_INT);
    return 0;
}

int arg_double_or_reply(struct cmd_ctx *c, const hk_slice *a, double *out, const char *err) {
    if (hk_str2d(a->ptr, a->len, out)) return 1;
    reply_error(c, err ? err : ERR_NOT_FLOAT);
    return 0;
}

/* "ERR <what> '<subcommand>'. Try <CONTAINER> HELP.", the subcommand cut
 * to 128 bytes as Redis does. */
static void reply_sub_error(struct cmd_ctx *c, const char *what) {
    const struct command *cmd = c->cmd;
    const char *top = cmd ? (cmd->parent ? cmd->parent->name : cmd->name) : "";
    char up[64];
    size_t i;
    for (i = 0; top[i] && i < sizeof(up) - 1; i++) up[i] = (char)(top[i] >= 'a' && top[i] <= 'z' ? top[i] - 32 : top[i]);
    up[i] = '\0';
    const hk_slice *sub = c->argc > 1 ? &c->argv[1] : &c->argv[0];
    reply_errorf(c, "ERR %s '%.*s'. Try %s HELP.", what, (int)(sub->len > 128 ? 128 : sub->len), sub->ptr, up);
}

void reply_subcommand_error(struct cmd_ctx *c) {
    reply_sub_error(c, "unknown subcommand or wrong number of arguments for");
}

void reply_unknown_subcommand(struct cmd_ctx *c) { reply_sub_error(c, "unknown subcommand"); }

void reply_status(struct cmd_ctx *c, int st) {
    if (st == HK_OK) return;
    if (hk_status_wants_name(st)) reply_errorf(c, hk_status_text(st), c->cmd ? c->cmd->fullname : "");
    else reply_error(c, hk_status_text(st));
}
