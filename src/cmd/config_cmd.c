/* config_cmd.c - the CONFIG command: GET, SET, RESETSTAT, REWRITE, HELP.
 *
 * Everything goes through the one configuration table in
 * src/server/config.c (cfg_find, cfg_get, cfg_set, config_rewrite); this
 * file only parses arguments, reports Redis's error texts and makes a
 * multi-pair CONFIG SET all-or-nothing. It holds no settings of its own. */
#include "../core/alloc.h"
#include "../server/config.h"
#include "../server/configtab.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CFG_VALUE_MAX 4096

static int is_glob(const hk_slice *p) {
    for (size_t i = 0; i < p->len; i++)
        if (p->ptr[i] == '*' || p->ptr[i] == '?' || p->ptr[i] == '[') return 1;
    return 0;
}

/* CONFIG GET pattern [pattern ...]: every setting whose name matches one
 * of the glob patterns (case-insensitive), once, as a map. As in Redis, a
 * plain name (no glob characters) is looked up directly and answered under
 * the spelling it was asked with ("PORT"), and a hidden setting (HotKV's
 * own: threads, shards) only that way. */
void cmd_config_get(struct cmd_ctx *c) {
    int ntab = 0;
    while (cfg_table[ntab].name) ntab++;
    /* Per table row: the argv slice it was named by, or the row's own name. */
    const hk_slice **asked = hk_calloc((size_t)ntab, sizeof(*asked));
    char *seen = hk_calloc((size_t)ntab, 1);
    int *order = hk_malloc((size_t)ntab * sizeof(int));
    int n = 0;
    for (int i = 2; i < c->argc; i++) {
        const hk_slice *p = &c->argv[i];
        if (!is_glob(p)) {
            const struct cfg_entry *e = cfg_find(p->ptr, p->len);
            if (!e || seen[e - cfg_table]) continue;
            seen[e - cfg_table] = 1;
            asked[e - cfg_table] = p;
            order[n++] = (int)(e - cfg_table);
            continue;
        }
        for (int t = 0; t < ntab; t++) {
            if (seen[t] || (cfg_table[t].flags & CFG_HIDDEN) ||
                !hk_globmatch(p->ptr, p->len, cfg_table[t].name, strlen(cfg_table[t].name), 1))
                continue;
            seen[t] = 1;
            order[n++] = t;
        }
    }
    reply_map(c, n);
    char val[CFG_VALUE_MAX];
    for (int i = 0; i < n; i++) {
        const struct cfg_entry *e = &cfg_table[order[i]];
        if (asked[order[i]]) reply_bulk(c, asked[order[i]]->ptr, asked[order[i]]->len);
        else reply_bulk_cstr(c, e->name);
        cfg_get(e, val, sizeof(val));
        reply_bulk_cstr(c, val);
    }
    hk_free(asked);
    hk_free(seen);
    hk_free(order);
}

static char *slice_dup(const hk_slice *s) { return hk_strndup(s->ptr, s->len); }

/* Serialises CONFIG SET commands, so that one command's rollback never
 * undoes another's values. Taken with no shard lock held; cfg_lock is
 * taken inside it (threads.md). */
static pthread_mutex_t config_set_lock = PTHREAD_MUTEX_INITIALIZER;

/* One name=value pair of a CONFIG SET. As in Redis, an alias is a setting
 * of its own for duplicate detection and error texts: "hash-max-ziplist-
 * entries 1 hash-max-listpack-entries 2" is not a duplicate, and a bad
 * value is reported under the spelling of the table (or of the alias). */
struct set_item {
    const struct cfg_entry *e;
    int via_alias;
    char *old, *val;
};

static const char *item_name(const struct set_item *it) { return it->via_alias ? it->e->alias : it->e->name; }

/* Whether item i has an apply callback that no earlier item shares: each
 * distinct callback runs once per command. */
static int first_apply(const struct set_item *items, int i) {
    if (!items[i].e->apply) return 0;
    for (int j = 0; j < i; j++)
        if (items[j].e->apply == items[i].e->apply) return 0;
    return 1;
}

/* Put back every old value (store, then each distinct apply callback
 * once, as the new values were applied). Failures are only logged: the
 * old values were valid when they were set. */
static void restore_items(struct set_item *items, int n, int run_apply) {
    char err[256];
    for (int i = 0; i < n; i++)
        if (!cfg_store(items[i].e, items[i].old, err, sizeof(err)))
            hk_log(LL_WARNING, "CONFIG SET: failed restoring '%s': %s", items[i].e->name, err);
    if (!run_apply) return;
    for (int i = 0; i < n; i++) {
        if (!first_apply(items, i)) continue;
        if (!items[i].e->apply(err, sizeof(err)))
            hk_log(LL_WARNING, "CONFIG SET: failed re-applying '%s' after a rollback: %s", items[i].e->name, err);
    }
}

/* On the worker of a CONFIG SET that changed the listeners, once every
 * worker has installed them: its reply. */
static void config_set_done(struct worker *w, void *arg) {
    struct client *c = worker_find_client(w, (uint64_t)(uintptr_t)arg);
    if (!c || !(c->flags & CLIENT_WAIT_GATHER)) return;
    c->flags &= ~CLIENT_WAIT_GATHER;
    reply_ok(&c->ctx);
    if (client_resume(c) < 0) client_close(c);
}

/* CONFIG SET name value [name value ...], all or nothing, in Redis 8's
 * order: every name is checked first (the first unknown, immutable or
 * duplicate one in argument order decides the error), the old values are
 * saved, the new ones stored in order (a value that does not parse
 * restores what was stored before it), then each distinct apply callback
 * runs once; if one fails every setting gets its old value back. */
void cmd_config_set(struct cmd_ctx *c) {
    if (c->argc % 2) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    int n = (c->argc - 2) / 2;
    struct set_item *items = hk_calloc((size_t)n, sizeof(*items));
    const hk_slice *unknown = NULL, *bad = NULL;
    const char *why = NULL;
    for (int i = 0; i < n && !unknown && !bad; i++) {
        const hk_slice *name = &c->argv[2 + 2 * i];
        const struct cfg_entry *e = cfg_find(name->ptr, name->len);
        if (!e) {
            unknown = name;
            break;
        }
        int via_alias = !hk_eqi(name->ptr, name->len, e->name);
        if (e->flags & CFG_IMMUTABLE) {
            bad = name;
            why = "can't set immutable config";
            break;
        }
        if ((e->flags & CFG_PROTECTED) && CFG(enable_protected_configs) != CFG_DEBUG_YES &&
            !(CFG(enable_protected_configs) == CFG_DEBUG_LOCAL && c->cl && (c->cl->flags & CLIENT_LOCAL))) {
            bad = name;
            why = "can't set protected config";
            break;
        }
        for (int j = 0; j < i; j++)
            if (items[j].e == e && items[j].via_alias == via_alias) {
                bad = name;
                why = "duplicate parameter";
            }
        items[i].e = e;
        items[i].via_alias = via_alias;
    }
    if (unknown) {
        reply_errorf(c, "ERR Unknown option or number of arguments for CONFIG SET - '%.*s'", (int)unknown->len,
                     unknown->ptr);
        goto done;
    }
    if (bad) {
        reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%.*s') - %s", (int)bad->len, bad->ptr,
                     why);
        goto done;
    }
    pthread_mutex_lock(&config_set_lock);
    char val[CFG_VALUE_MAX], err[256];
    for (int i = 0; i < n; i++) {
        cfg_get(items[i].e, val, sizeof(val));
        items[i].old = hk_strdup(val);
        items[i].val = slice_dup(&c->argv[3 + 2 * i]);
    }
    for (int i = 0; i < n; i++) {
        if (cfg_store(items[i].e, items[i].val, err, sizeof(err))) continue;
        restore_items(items, i, 0);
        pthread_mutex_unlock(&config_set_lock);
        reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", item_name(&items[i]), err);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (!first_apply(items, i)) continue;
        err[0] = '\0';
        if (items[i].e->apply(err, sizeof(err))) continue;
        hk_log(LL_WARNING,
               "Failed applying new configuration. Possibly related to new %s setting. Restoring previous settings.",
               item_name(&items[i]));
        restore_items(items, n, 1);
        pthread_mutex_unlock(&config_set_lock);
        if (err[0])
            reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", item_name(&items[i]),
                         err);
        else reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s')", item_name(&items[i]));
        goto done;
    }
    /* New listeners (bind, port) are handed to the workers now. A
     * connection's reply waits until every worker has closed its old ones,
     * as Redis's CONFIG SET returns with the old port closed; inside EXEC
     * it cannot wait and answers at once. */
    int waits = c->cl && c == &c->cl->ctx && !(c->flags & CTX_NESTED);
    if (listeners_commit(waits ? config_set_done : NULL, (void *)(uintptr_t)(c->cl ? c->cl->id : 0)) && waits) {
        c->cl->flags |= CLIENT_WAIT_GATHER;
        pthread_mutex_unlock(&config_set_lock);
        goto done;
    }
    pthread_mutex_unlock(&config_set_lock);
    reply_ok(c);
done:
    for (int i = 0; i < n; i++) {
        hk_free(items[i].old);
        hk_free(items[i].val);
    }
    hk_free(items);
}

/* ---- RESETSTAT: every worker zeroes its own counters ----------------------- */

struct resetstat_job {
    uint64_t client_id;
    const struct command *cmd; /* CONFIG RESETSTAT itself, counted after the reset */
    long long start_ns;
};

static void resetstat_each(struct worker *w, void *arg) {
    (void)arg;
    stats_reset_worker(w);
}

/* Runs on the worker that owns the client once all workers are done. The
 * client may have disconnected meanwhile: it is looked up by id. */
static void resetstat_done(struct worker *w, void *arg) {
    struct gather *g = arg;
    struct resetstat_job *job = g->arg;
    struct client *c = worker_find_client(w, job->client_id);
    if (c && (c->flags & CLIENT_WAIT_GATHER)) {
        c->flags &= ~CLIENT_WAIT_GATHER;
        /* As in Redis, the reset is itself the first command counted after
         * it (commandstats, the latency histogram, total_commands_processed).
         * Dispatch counted it already, before this worker's reset zeroed
         * that: only the per-server counters are added again here, not the
         * connection's own tot-cmds, which a reset leaves alone. */
        long long dt = hk_clock_ns() - job->start_ns;
        struct cmdstat *st = &w->cmdstats[job->cmd->id];
        stat_add(&st->calls, 1);
        stat_add(&st->nsec, (unsigned long long)dt);
        if (CFG(latency_tracking)) lat_record(w->lathist, job->cmd->id, dt);
        stat_add(&w->stats.commands_processed, 1);
        reply_ok(&c->ctx);
        if (client_resume(c) < 0) client_close(c);
    }
    hk_free(job);
    hk_free(g);
}

void cmd_config_resetstat(struct cmd_ctx *c) {
    struct resetstat_job *job = hk_malloc(sizeof(*job));
    job->client_id = c->cl->id;
    job->cmd = c->cmd;
    job->start_ns = hk_clock_ns();
    c->cl->flags |= CLIENT_WAIT_GATHER;
    stats_reset_global();
    worker_broadcast(resetstat_each, resetstat_done, job);
}

void cmd_config_rewrite(struct cmd_ctx *c) {
    char err[512];
    if (!config_rewrite(err, sizeof(err))) {
        hk_log(LL_WARNING, "CONFIG REWRITE failed: %s", err);
        reply_error(c, err);
        return;
    }
    hk_log(LL_NOTICE, "CONFIG REWRITE executed with success.");
    reply_ok(c);
}

void cmd_config_help(struct cmd_ctx *c) {
    static const char *const lines[] = {
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        NULL,
    };
    reply_help(c, "CONFIG", lines);
}
