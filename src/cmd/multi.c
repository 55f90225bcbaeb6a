/* multi.c - MULTI, EXEC, DISCARD, WATCH and UNWATCH.
 *
 * Queuing happens in dispatch (the admission step decides what MULTI may
 * queue, and a refusal dooms the transaction); this file runs what was
 * queued. EXEC builds one lock set from every queued command's keys and
 * every watched key, acquires it in ascending shard order before running
 * anything, checks the watched versions, then runs each command nested
 * under that set: no other client on any thread can observe a
 * half-applied transaction, and no command inside can meet a conflict
 * after others already ran. Inner commands propagate as one unit
 * (MULTI ... EXEC in the journal when there are two or more). The
 * connection state lives in src/server/txn.c. */
#include "../core/alloc.h"
#include "../server/acl.h"
#include "../server/creply.h"
#include "../server/txn.h"
#include "../store/db.h"
#include "../store/watch.h"
#include "cmdutil.h"

void cmd_multi(struct cmd_ctx *c) {
    struct txn *t = txn_of(c->cl);
    if (t->active) {
        reply_error(c, "ERR MULTI calls can not be nested");
        return;
    }
    t->active = 1;
    reply_ok(c);
}

void cmd_discard(struct cmd_ctx *c) {
    struct txn *t = c->cl->txn;
    if (!t || !t->active) {
        reply_error(c, "ERR DISCARD without MULTI");
        return;
    }
    txn_clear_queue(c->cl);
    txn_unwatch_all(c->cl);
    reply_ok(c);
}

/* WATCH runs with its keys' shards locked (key spec 1..-1). A key already
 * past its deadline is expired now, as a read would, so that its removal
 * is not mistaken later for a write between WATCH and EXEC. */
void cmd_watch(struct cmd_ctx *c) {
    struct txn *t = c->cl->txn;
    if (t && t->active) {
        reply_error(c, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    for (int i = 1; i < c->argc; i++) {
        struct keyref k;
        key_of(c, i, &k);
        db_find(&k, c->now_ms);
        txn_watch_key(c->cl, &k);
    }
    reply_ok(c);
}

void cmd_unwatch(struct cmd_ctx *c) {
    txn_unwatch_all(c->cl);
    reply_ok(c);
}

/* The lock set of a transaction: every queued command's shards (all of
 * them for a whole-keyspace command or one that may widen to all), and
 * the shards of the watched keys. */
static void txn_lockset(struct cmd_ctx *c, struct txn *t, struct lockset *ls) {
    for (int i = 0; i < t->nw; i++) ls_add(ls, t->w[i].shard);
    int cap = 0;
    int *idx = NULL;
    for (int i = 0; i < t->n && !ls->all; i++) {
        const struct txn_cmd *q = &t->cmds[i];
        const struct command *cmd = q->cmd;
        if (cmd->flags & (CMD_ALL_SHARDS | CMD_SHARDWISE | CMD_MAY_LOCK_ALL)) {
            ls_add_all(ls);
            break;
        }
        if (cmd->key_kind == KEYS_NONE) continue;
        if (q->argc > cap) {
            cap = q->argc;
            hk_free(idx);
            idx = hk_malloc((size_t)cap * sizeof(int));
        }
        int n = command_keys(cmd, q->argv, q->argc, idx);
        /* SELECT inside the transaction moves later keys to another
         * database, but shards are shared by every database: the shard of
         * a key does not depend on it. */
        for (int j = 0; j < n; j++) ls_add(ls, ks_shard_of(q->argv[idx[j]].ptr, q->argv[idx[j]].len));
    }
    hk_free(idx);
    (void)c;
}

/* Check the watched keys under the held set: one past its deadline is
 * expired first (as any access would), which bumps its version. */
static int txn_watched_changed(struct cmd_ctx *c, struct txn *t) {
    for (int i = 0; i < t->nw; i++) {
        struct wkey *wk = t->w[i].wk;
        struct keyref k;
        keyref_init(&k, wk->db, wk->key, wk->klen);
        db_find(&k, c->now_ms);
    }
    return txn_watch_dirty(c->cl);
}

/* The ACL check of a queued command at EXEC time: 1 to run it, 0 when
 * refused (the error is its reply, and ACL LOG has it). */
static int exec_acl_recheck(struct cmd_ctx *c, struct client *cl, const struct command *cmd, hk_slice *argv,
                            int argc) {
    struct acl_user *u = acl_client_user(cl, cl->user ? cl->user : &acl_default_ident, cl->acl, cl->acl_gen);
    if (u->flags & USER_ALLPERM) return 1;
    int pos;
    int r = acl_check(u, cmd, argv, argc, &pos);
    if (r == ACL_OK) return 1;
    if (r == ACL_DENIED_CMD) acl_log_add(cl, r, ACL_CTX_MULTI, cmd->fullname, strlen(cmd->fullname), u->name);
    else acl_log_add(cl, r, ACL_CTX_MULTI, argv[pos].ptr, argv[pos].len, u->name);
    char msg[512];
    acl_denied_text(msg, sizeof(msg), r, u->name, cmd, &argv[pos], 0);
    reply_errorf(c,
                 "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. "
                 "This command is no longer allowed for the following reason: %s",
                 msg);
    return 0;
}

void cmd_exec(struct cmd_ctx *c) {
    struct client *cl = c->cl;
    struct txn *t = cl->txn;
    if (!t || !t->active) {
        reply_error(c, "ERR EXEC without MULTI");
        return;
    }
    if (t->dirty_exec) {
        reply_error(c, "EXECABORT Transaction discarded because of previous errors.");
        txn_clear_queue(cl);
        txn_unwatch_all(cl);
        return;
    }
    txn_lockset(c, t, &c->own_ls);
    exec_lock_own(c);
    if (txn_watched_changed(c, t)) {
        txn_unwatch_locked(cl);
        txn_clear_queue(cl);
        reply_null_array(c);
        return;
    }
    txn_unwatch_locked(cl);
    /* The queue leaves the connection before it runs: a command inside
     * (RESET is not queued, but MULTI's state must read as closed to
     * anything that asks) sees no transaction in progress. */
    struct txn_cmd *cmds = t->cmds;
    int n = t->n;
    t->cmds = NULL;
    t->n = t->cap = 0;
    t->flags = 0;
    t->mem = 0;
    t->active = 0;

    reply_array(c, n);
    unsigned saved = c->flags;
    c->flags |= CTX_DENY_BLOCKING;
    struct prop_mark mark;
    exec_prop_mark(c, &mark);
    for (int i = 0; i < n; i++) {
        const struct command *cmd = cmds[i].cmd;
        int errs = c->errors;
        long long t0 = hk_clock_ns();
        /* A script is shown before the commands it runs (skip-monitor,
         * fed ahead as dispatch does). */
        if ((cmd->flags & CMD_RUNS_SCRIPT) && atomic_load_explicit(&monitor_count, memory_order_relaxed))
            monitor_feed(cl, cmd, cmds[i].argv, cmds[i].argc, c->db);
        /* The user's rules may have changed since the command was queued
         * (checked then too): Redis checks again here. */
        if (!exec_acl_recheck(c, cl, cmd, cmds[i].argv, cmds[i].argc)) continue;
        exec_nested(c, cmd, cmds[i].argv, cmds[i].argc);
        long long dt = hk_clock_ns() - t0;
        if (c->w) {
            struct cmdstat *st = &c->w->cmdstats[cmd->id];
            stat_add(&st->calls, 1);
            stat_add(&st->nsec, (unsigned long long)dt);
            if (c->errors != errs) stat_add(&st->failed, 1);
            stat_add(&c->w->stats.commands_processed, 1);
        }
        if (atomic_load_explicit(&monitor_count, memory_order_relaxed) &&
            !(cmd->flags & (CMD_SKIP_MONITOR | CMD_ADMIN)))
            monitor_feed(cl, cmd, cmds[i].argv, cmds[i].argc, c->db);
    }
    exec_prop_wrap(c, &mark);
    c->flags = (c->flags & ~CTX_DENY_BLOCKING) | (saved & CTX_DENY_BLOCKING);
    /* EXEC's own errors are its inner commands' (counted above). */
    c->errors = 0;
    for (int i = 0; i < n; i++) hk_free(cmds[i].argv);
    hk_free(cmds);
}
