/* acl_cmd.c - the ACL command's subcommands: SETUSER, GETUSER, DELUSER,
 * USERS, LIST, WHOAMI, CAT, GENPASS, LOG, DRYRUN, SAVE, LOAD, HELP.
 *
 * Only replies live here: the users, their rules, the check and ACL LOG
 * are src/server/acl.c's. */
#include "../core/alloc.h"
#include "../server/acl.h"
#include "../server/creply.h"
#include "../server/server.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"

#include <stdio.h>
#include <string.h>

void cmd_acl_setuser(struct cmd_ctx *c) {
    char err[1024];
    if (!acl_setuser(c->argv + 3, c->argc - 3, c->argv[2].ptr, c->argv[2].len, err, sizeof(err))) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    reply_ok(c);
}

void cmd_acl_getuser(struct cmd_ctx *c) {
    struct acl_user *u = acl_user_get(c->argv[2].ptr, c->argv[2].len);
    if (!u) {
        reply_null(c);
        return;
    }
    reply_map(c, 6);
    reply_bulk_cstr(c, "flags");
    const char *fl[4];
    int nf = acl_user_flag_names(u, fl, 4);
    reply_set(c, nf);
    for (int i = 0; i < nf; i++) reply_bulk_cstr(c, fl[i]);
    reply_bulk_cstr(c, "passwords");
    reply_array(c, u->npw);
    for (int i = 0; i < u->npw; i++) reply_bulk(c, u->pw[i], 64);
    char *s;
    reply_bulk_cstr(c, "commands");
    reply_bulk_cstr(c, s = acl_sel_commands(u, 0));
    hk_free(s);
    reply_bulk_cstr(c, "keys");
    reply_bulk_cstr(c, s = acl_sel_keys(u, 0));
    hk_free(s);
    reply_bulk_cstr(c, "channels");
    reply_bulk_cstr(c, s = acl_sel_channels(u, 0));
    hk_free(s);
    reply_bulk_cstr(c, "selectors");
    reply_array(c, u->nsels - 1);
    for (int i = 1; i < u->nsels; i++) {
        reply_map(c, 3);
        reply_bulk_cstr(c, "commands");
        reply_bulk_cstr(c, s = acl_sel_commands(u, i));
        hk_free(s);
        reply_bulk_cstr(c, "keys");
        reply_bulk_cstr(c, s = acl_sel_keys(u, i));
        hk_free(s);
        reply_bulk_cstr(c, "channels");
        reply_bulk_cstr(c, s = acl_sel_channels(u, i));
        hk_free(s);
    }
    acl_user_release(u);
}

void cmd_acl_deluser(struct cmd_ctx *c) {
    int n = acl_deluser(c->argv + 2, c->argc - 2);
    if (n < 0) reply_error(c, "ERR The 'default' user cannot be removed");
    else reply_int(c, n);
}

void cmd_acl_users(struct cmd_ctx *c) {
    int n;
    struct acl_user **v = acl_users_all(&n);
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        reply_bulk_cstr(c, v[i]->name);
        acl_user_release(v[i]);
    }
    hk_free(v);
}

void cmd_acl_list(struct cmd_ctx *c) {
    int n;
    struct acl_user **v = acl_users_all(&n);
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        char *d = acl_describe_user(v[i]);
        reply_bulk_cstr(c, d);
        hk_free(d);
        acl_user_release(v[i]);
    }
    hk_free(v);
}

void cmd_acl_whoami(struct cmd_ctx *c) {
    if (!c->cl) {
        reply_bulk_cstr(c, "default");
        return;
    }
    reply_bulk_cstr(c, acl_client_name(c->cl));
}

void cmd_acl_cat(struct cmd_ctx *c) {
    if (c->argc > 3) {
        reply_subcommand_error(c);
        return;
    }
    if (c->argc == 2) {
        int n = acl_category_count();
        reply_array(c, n);
        for (int i = 0; i < n; i++) reply_bulk_cstr(c, acl_category_name(i));
        return;
    }
    uint64_t bit;
    if (!acl_category_by_name(c->argv[2].ptr, c->argv[2].len, &bit)) {
        reply_errorf(c, "ERR Unknown category '%.*s'", (int)(c->argv[2].len > 128 ? 128 : c->argv[2].len),
                     c->argv[2].ptr);
        return;
    }
    int total = commands_total(), n = 0;
    for (int id = 0; id < total; id++) {
        const struct command *cmd = command_by_id(id);
        if (cmd && (cmd->acl & bit)) n++;
    }
    reply_array(c, n);
    for (int id = 0; id < total; id++) {
        const struct command *cmd = command_by_id(id);
        if (cmd && (cmd->acl & bit)) reply_bulk_cstr(c, cmd->fullname);
    }
}

void cmd_acl_genpass(struct cmd_ctx *c) {
    long long bits = 256;
    if (c->argc > 3) {
        reply_subcommand_error(c);
        return;
    }
    if (c->argc == 3 && !hk_str2ll(c->argv[2].ptr, c->argv[2].len, &bits)) {
        reply_status(c, HK_ERR_NOT_INT);
        return;
    }
    if (bits <= 0 || bits > 4096) {
        reply_error(c, "ERR ACL GENPASS argument must be the number of bits for the output password, a positive "
                       "number up to 4096");
        return;
    }
    size_t chars = (size_t)(bits + 3) / 4;
    unsigned char raw[512];
    if (!acl_random_bytes(raw, (chars + 1) / 2)) {
        reply_error(c, "ERR Failed to read random bytes");
        return;
    }
    static const char hex[] = "0123456789abcdef";
    char out[1025];
    for (size_t i = 0; i < chars; i++) out[i] = hex[(raw[i / 2] >> ((i & 1) ? 0 : 4)) & 15];
    reply_bulk(c, out, chars);
}

void cmd_acl_log(struct cmd_ctx *c) {
    long long n = 10;
    if (c->argc > 3) {
        reply_subcommand_error(c);
        return;
    }
    if (c->argc == 3) {
        if (arg_is(&c->argv[2], "reset")) {
            acl_log_reset();
            reply_ok(c);
            return;
        }
        if (!hk_str2ll(c->argv[2].ptr, c->argv[2].len, &n)) {
            reply_status(c, HK_ERR_NOT_INT);
            return;
        }
        if (n < 0) n = 0;
    }
    struct acl_log_view *v;
    int m = acl_log_get((long)n, &v);
    long long now = hk_mstime();
    reply_array(c, m);
    for (int i = 0; i < m; i++) {
        reply_map(c, 10);
        reply_bulk_cstr(c, "count");
        reply_int(c, v[i].count);
        reply_bulk_cstr(c, "reason");
        reply_bulk_cstr(c, v[i].reason);
        reply_bulk_cstr(c, "context");
        reply_bulk_cstr(c, v[i].context);
        reply_bulk_cstr(c, "object");
        reply_bulk_cstr(c, v[i].object);
        reply_bulk_cstr(c, "username");
        reply_bulk_cstr(c, v[i].username);
        reply_bulk_cstr(c, "age-seconds");
        reply_double(c, (double)(now - v[i].updated_ms) / 1000.0);
        reply_bulk_cstr(c, "client-info");
        reply_bulk_cstr(c, v[i].client_info);
        reply_bulk_cstr(c, "entry-id");
        reply_int(c, v[i].entry_id);
        reply_bulk_cstr(c, "timestamp-created");
        reply_int(c, v[i].created_ms);
        reply_bulk_cstr(c, "timestamp-last-updated");
        reply_int(c, v[i].updated_ms);
    }
    acl_log_free(v, m);
}

void cmd_acl_dryrun(struct cmd_ctx *c) {
    struct acl_user *u = acl_user_get(c->argv[2].ptr, c->argv[2].len);
    if (!u) {
        reply_errorf(c, "ERR User '%.*s' not found", (int)c->argv[2].len, c->argv[2].ptr);
        return;
    }
    const hk_slice *argv = c->argv + 3;
    int argc = c->argc - 3;
    struct command *cmd = cmd_lookup(argv[0].ptr, argv[0].len);
    if (cmd && cmd->nsubs && argc >= 2) cmd = cmd_lookup_sub(cmd, argv[1].ptr, argv[1].len);
    if (!cmd) {
        reply_errorf(c, "ERR Command '%.*s' not found", (int)argv[0].len, argv[0].ptr);
        acl_user_release(u);
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        reply_errorf(c, "ERR wrong number of arguments for '%s' command", cmd->fullname);
        acl_user_release(u);
        return;
    }
    int pos;
    int r = acl_check(u, cmd, argv, argc, &pos);
    if (r == ACL_OK) {
        reply_ok(c);
    } else {
        char msg[512];
        acl_denied_text(msg, sizeof(msg), r, u->name, cmd, &argv[pos], 1);
        reply_bulk_cstr(c, msg);
    }
    acl_user_release(u);
}

void cmd_acl_save(struct cmd_ctx *c) {
    char err[512];
    if (!acl_save(err, sizeof(err))) reply_errorf(c, "ERR %s", err);
    else reply_ok(c);
}

void cmd_acl_load(struct cmd_ctx *c) {
    char *err = NULL;
    if (!acl_load(&err)) {
        reply_errorf(c, "ERR %s", err);
        hk_free(err);
        return;
    }
    reply_ok(c);
}

void cmd_acl_help(struct cmd_ctx *c) {
    static const char *const lines[] = {
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        NULL,
    };
    reply_help(c, "ACL", lines);
}
