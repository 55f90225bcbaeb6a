/* connection.c - PING, ECHO, QUIT, SELECT, AUTH, HELLO, RESET. The
 * connection state they change (database, protocol, authentication) lives
 * in the running context and its connection (c->cl). */
#include "../core/alloc.h"
#include "../server/acl.h"
#include "../server/config.h"
#include "../server/creply.h"
#include "../server/pubsub.h"
#include "../server/server.h"
#include "../server/tracking.h"
#include "../server/txn.h"
#include "cmds.h"
#include "cmdutil.h"

#include <string.h>

void cmd_ping(struct cmd_ctx *c) {
    if (c->argc > 2) {
        reply_arity(c);
        return;
    }
    if (c->cl && (c->cl->flags & CLIENT_PUBSUB) && c->resp == 2) {
        /* Subscribed RESP2 connections read replies as messages. */
        reply_array(c, 2);
        reply_bulk(c, "pong", 4);
        reply_bulk(c, c->argc == 2 ? c->argv[1].ptr : "", c->argc == 2 ? c->argv[1].len : 0);
        return;
    }
    if (c->argc == 2) reply_bulk(c, c->argv[1].ptr, c->argv[1].len);
    else reply_simple(c, "PONG");
}

void cmd_echo(struct cmd_ctx *c) { reply_bulk(c, c->argv[1].ptr, c->argv[1].len); }

void cmd_quit(struct cmd_ctx *c) {
    reply_ok(c);
    if (c->cl) client_set_close_after_reply(c->cl);
}

void cmd_select(struct cmd_ctx *c) {
    struct argcur a;
    ac_init(&a, c, 1);
    ac_db(&a, &c->db);
    if (ac_ok(&a)) reply_ok(c);
}

/* Check "default"/password; 1 when the client may proceed. Replies on error. */
/* Authenticate as user (the default user when NULL) with pass, through
 * the ACL users; 1 when the client may proceed. Replies on error. */
static int try_auth(struct cmd_ctx *c, const hk_slice *user, const hk_slice *pass) {
    if (!user && acl_default_nopass()) {
        reply_error(c, "ERR AUTH <password> called without any password configured for the default user. "
                       "Are you sure your configuration is correct?");
        return 0;
    }
    const char *un = user ? user->ptr : "default";
    size_t ul = user ? user->len : 7;
    if (!acl_authenticate(c->cl, un, ul, pass->ptr, pass->len)) {
        reply_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
        return 0;
    }
    return 1;
}

void cmd_auth(struct cmd_ctx *c) {
    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    const hk_slice *user = c->argc == 3 ? &c->argv[1] : NULL;
    const hk_slice *pass = &c->argv[c->argc - 1];
    if (try_auth(c, user, pass)) reply_ok(c);
}

int client_name_valid(const char *p, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (p[i] < '!' || p[i] > '~') return 0;
    return 1;
}

void cmd_hello(struct cmd_ctx *c) {
    long long ver = 0;
    int next = 1;
    if (c->argc >= 2) {
        if (!hk_str2ll(c->argv[1].ptr, c->argv[1].len, &ver)) {
            reply_error(c, "ERR Protocol version is not an integer or out of range");
            return;
        }
        next = 2;
        if (ver < 2 || ver > 3) {
            reply_error(c, "NOPROTO unsupported protocol version");
            return;
        }
    }
    const hk_slice *user = NULL, *pass = NULL, *name = NULL;
    for (int j = next; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(&c->argv[j], "AUTH") && more >= 2) {
            user = &c->argv[j + 1];
            pass = &c->argv[j + 2];
            j += 2;
        } else if (arg_is(&c->argv[j], "SETNAME") && more >= 1) {
            name = &c->argv[j + 1];
            if (!client_name_valid(name->ptr, name->len)) {
                reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
                return;
            }
            j += 1;
        } else {
            reply_errorf(c, "ERR Syntax error in HELLO option '%.*s'", (int)c->argv[j].len, c->argv[j].ptr);
            return;
        }
    }
    if (user && !try_auth(c, user, pass)) return;
    if (!(c->cl->flags & CLIENT_AUTHENTICATED)) {
        reply_error(c, "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
                       "<proto> AUTH <user> <pass> option can be used to authenticate the client and select the "
                       "RESP protocol version at the same time");
        return;
    }
    if (name) {
        hk_free(c->cl->name);
        c->cl->name = name->len ? hk_strndup(name->ptr, name->len) : NULL;
    }
    if (ver) c->resp = (int)ver;
    reply_map(c, 7);
    reply_bulk_cstr(c, "server");
    reply_bulk_cstr(c, "redis");
    reply_bulk_cstr(c, "version");
    reply_bulk_cstr(c, HK_REDIS_COMPAT_VERSION);
    reply_bulk_cstr(c, "proto");
    reply_int(c, c->resp);
    reply_bulk_cstr(c, "id");
    reply_int(c, (long long)c->cl->id);
    reply_bulk_cstr(c, "mode");
    reply_bulk_cstr(c, "standalone");
    reply_bulk_cstr(c, "role");
    reply_bulk_cstr(c, "master");
    reply_bulk_cstr(c, "modules");
    reply_array(c, 0);
}

void cmd_reset(struct cmd_ctx *c) {
    if (c->cl->flags & CLIENT_MONITOR) monitor_detach(c->cl);
    pubsub_client_reset(c->cl);
    if (c->cl->track) tracking_client_gone(c->cl);
    txn_clear_queue(c->cl);
    txn_unwatch_all(c->cl);
    c->resp = 2;
    c->db = 0;
    c->cl->flags &= ~(CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP | CLIENT_REPLY_SKIP_NEXT | CLIENT_NO_EVICT | CLIENT_NO_TOUCH);
    ctx_follow_client(c);
    hk_free(c->cl->name);
    c->cl->name = NULL;
    acl_client_reset(c->cl);
    reply_simple(c, "RESET");
}
