/* client.c - the CLIENT command family: ID, SETNAME, GETNAME, INFO, LIST,
 * KILL, SETINFO, NO-EVICT, NO-TOUCH, PAUSE, UNPAUSE, REPLY, CACHING,
 * GETREDIR, TRACKING, TRACKINGINFO, HELP.
 *
 * Commands about the calling connection only touch its own struct client.
 * Commands about other connections (LIST, KILL) never read another
 * worker's clients: they broadcast a request to every worker, each worker
 * formats or closes its own clients on its own thread, and the answer is
 * assembled on the calling worker, which holds the caller back meanwhile
 * (CLIENT_WAIT_GATHER) so its pipelined commands keep their order. The
 * per-client line of CLIENT LIST / CLIENT INFO is built by clientmem.c
 * (the eviction log repeats it). NO-EVICT only sets the flag: the
 * connection's worker takes it out of eviction's buckets after the
 * command (clientmem.h). The client-side caching subcommands (TRACKING,
 * CACHING, TRACKINGINFO, GETREDIR) parse and answer here; the state they
 * change is tracking.c's.
 * Not here: CLIENT UNBLOCK (blocking commands). */
#include "../core/alloc.h"
#include "../server/clientmem.h"
#include "../server/acl.h"
#include "../server/config.h"
#include "../server/creply.h"
#include "../server/pubsub.h"
#include "../server/tracking.h"
#include "../server/txn.h"
#include "../server/server.h"
#include "cmds.h"
#include "cmdutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a growable text buffer ---------------------------------------------- */

static void tb_reserve(struct hk_buf *b, size_t more) {
    if (b->cap - b->len > more) return;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap - b->len <= more) ncap *= 2;
    b->p = hk_realloc(b->p, ncap);
    b->cap = ncap;
}

static void tb_append(struct hk_buf *b, const char *s, size_t n) {
    tb_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void tb_free(struct hk_buf *b) {
    hk_free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ---- client classes ---------------------------------------------------------- */

enum { CTYPE_NORMAL = 0, CTYPE_REPLICA = 1, CTYPE_PUBSUB = 2, CTYPE_MASTER = 3 };

/* Class of a client for LIST TYPE / KILL TYPE. HotKV has no replication
 * links, so a connection is a subscriber (in any protocol, as Redis
 * classifies it) or a normal one. */
static int client_type(const struct client *c) {
    if (c->flags & CLIENT_PUBSUB) return CTYPE_PUBSUB;
    return CTYPE_NORMAL;
}

/* Redis's class names, case-insensitive; -1 when unknown. */
static int client_type_by_name(const hk_slice *a) {
    if (arg_is(a, "normal")) return CTYPE_NORMAL;
    if (arg_is(a, "slave") || arg_is(a, "replica")) return CTYPE_REPLICA;
    if (arg_is(a, "pubsub")) return CTYPE_PUBSUB;
    if (arg_is(a, "master")) return CTYPE_MASTER;
    return -1;
}

/* ---- commands about the calling connection -------------------------------- */

void cmd_client_id(struct cmd_ctx *c) {
    tracking_client_command(c);
    reply_int(c, (long long)c->cl->id);
}

void cmd_client_getname(struct cmd_ctx *c) {
    tracking_client_command(c);
    if (c->cl->name) reply_bulk_cstr(c, c->cl->name);
    else reply_null(c);
}

void cmd_client_setname(struct cmd_ctx *c) {
    tracking_client_command(c);
    const hk_slice *n = &c->argv[2];
    if (n->len && !client_name_valid(n->ptr, n->len)) {
        reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
        return;
    }
    hk_free(c->cl->name);
    c->cl->name = n->len ? hk_strndup(n->ptr, n->len) : NULL;
    reply_ok(c);
}

void cmd_client_setinfo(struct cmd_ctx *c) {
    tracking_client_command(c);
    const hk_slice *attr = &c->argv[2], *val = &c->argv[3];
    char **dest;
    if (arg_is(attr, "lib-name")) dest = &c->cl->lib_name;
    else if (arg_is(attr, "lib-ver")) dest = &c->cl->lib_ver;
    else {
        reply_errorf(c, "ERR Unrecognized option '%.*s'", (int)attr->len, attr->ptr);
        return;
    }
    if (!client_name_valid(val->ptr, val->len)) {
        reply_errorf(c, "ERR %.*s cannot contain spaces, newlines or special characters.", (int)attr->len,
                     attr->ptr);
        return;
    }
    hk_free(*dest);
    *dest = val->len ? hk_strndup(val->ptr, val->len) : NULL;
    reply_ok(c);
}

void cmd_client_info(struct cmd_ctx *c) {
    tracking_client_command(c);
    struct hk_buf b = {0};
    struct client_run_view v;
    client_run_view_of(c->cl, &v);
    client_info_cat(&b, c->cl, c->cmd, &v);
    tb_append(&b, "\n", 1);
    reply_verbatim(c, b.p, b.len, "txt");
    tb_free(&b);
}

/* ON/OFF argument of NO-EVICT and NO-TOUCH: 1, 0, or -1 after replying. */
static int on_off_or_reply(struct cmd_ctx *c, const hk_slice *a) {
    if (arg_is(a, "on")) return 1;
    if (arg_is(a, "off")) return 0;
    reply_error(c, ERR_SYNTAX);
    return -1;
}

void cmd_client_no_evict(struct cmd_ctx *c) {
    tracking_client_command(c);
    int on = on_off_or_reply(c, &c->argv[2]);
    if (on < 0) return;
    if (on) c->cl->flags |= CLIENT_NO_EVICT;
    else c->cl->flags &= ~CLIENT_NO_EVICT;
    reply_ok(c);
}

void cmd_client_no_touch(struct cmd_ctx *c) {
    tracking_client_command(c);
    int on = on_off_or_reply(c, &c->argv[2]);
    if (on < 0) return;
    if (on) c->cl->flags |= CLIENT_NO_TOUCH;
    else c->cl->flags &= ~CLIENT_NO_TOUCH;
    reply_ok(c);
}

/* REPLY OFF and SKIP answer nothing: the muting starts with their own
 * reply. Dispatch turns SKIP_NEXT into SKIP for the following command. */
void cmd_client_reply(struct cmd_ctx *c) {
    tracking_client_command(c);
    const hk_slice *a = &c->argv[2];
    if (arg_is(a, "on")) {
        c->cl->flags &= ~(CLIENT_REPLY_SKIP | CLIENT_REPLY_OFF);
        ctx_follow_client(c);
        reply_ok(c);
    } else if (arg_is(a, "off")) {
        c->cl->flags |= CLIENT_REPLY_OFF;
        ctx_follow_client(c);
    } else if (arg_is(a, "skip")) {
        if (!(c->cl->flags & CLIENT_REPLY_OFF)) c->cl->flags |= CLIENT_REPLY_SKIP_NEXT;
    } else {
        reply_error(c, ERR_SYNTAX);
    }
}

void cmd_client_help(struct cmd_ctx *c) {
    tracking_client_command(c);
    static const char *help[] = {
        "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CACHING (YES|NO)",
        "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
        "GETREDIR",
        "    Return the client ID we are redirecting to when tracking is enabled.",
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are:",
        "    * ADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made from the specified address",
        "    * LADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made to specified local address",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Kill connections by type.",
        "    * USER <username>",
        "      Kill connections authenticated by <username>.",
        "    * SKIPME (YES|NO)",
        "      Skip killing current connection (default: yes).",
        "    * ID <client-id>",
        "      Kill connections by client id.",
        "    * MAXAGE <maxage>",
        "      Kill connections older than the specified age.",
        "LIST [options ...]",
        "    Return information about client connections. Options:",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Return clients of specified type.",
        "UNPAUSE",
        "    Stop the current client pause, resuming traffic.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "SETINFO <option> <value>",
        "    Set client meta attr. Options are:",
        "    * LIB-NAME: the client lib name.",
        "    * LIB-VER: the client lib version.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
        "         [OPTIN] [OPTOUT] [NOLOOP]",
        "    Control server assisted client side caching.",
        "TRACKINGINFO",
        "    Report tracking status for the current connection.",
        "NO-EVICT (ON|OFF)",
        "    Protect current client connection from eviction.",
        "NO-TOUCH (ON|OFF)",
        "    Will not touch LRU/LFU stats when this mode is on.",
        "HELP",
        "    Prints this help.",
    };
    size_t n = sizeof(help) / sizeof(help[0]);
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) reply_simple(c, help[i]);
}

/* ---- client-side caching ---------------------------------------------------- */

void cmd_client_getredir(struct cmd_ctx *c) {
    tracking_client_command(c);
    if (c->cl->flags & CLIENT_TRACKING) reply_int(c, (long long)tracking_redirect(c->cl));
    else reply_int(c, -1);
}

void cmd_client_trackinginfo(struct cmd_ctx *c) {
    struct client *cl = c->cl;
    unsigned mode = tracking_mode(cl);
    int on = (cl->flags & CLIENT_TRACKING) != 0, caching = on && tracking_caching(cl);
    const char *flags[8];
    int n = 0;
    flags[n++] = on ? "on" : "off";
    if (mode & TRACK_BCAST) flags[n++] = "bcast";
    if (mode & TRACK_OPTIN) {
        flags[n++] = "optin";
        if (caching) flags[n++] = "caching-yes";
    }
    if (mode & TRACK_OPTOUT) {
        flags[n++] = "optout";
        if (caching) flags[n++] = "caching-no";
    }
    if (mode & TRACK_NOLOOP) flags[n++] = "noloop";
    if (mode & TRACK_BROKEN_REDIR) flags[n++] = "broken_redirect";
    reply_map(c, 3);
    reply_bulk_cstr(c, "flags");
    reply_set(c, n);
    for (int i = 0; i < n; i++) reply_bulk_cstr(c, flags[i]);
    reply_bulk_cstr(c, "redirect");
    reply_int(c, on ? (long long)tracking_redirect(cl) : -1);
    reply_bulk_cstr(c, "prefixes");
    int np = on ? tracking_nprefixes(cl) : 0;
    reply_array(c, np);
    for (int i = 0; i < np; i++) {
        size_t len;
        const char *p = tracking_prefix(cl, i, &len);
        reply_bulk(c, p, len);
    }
    tracking_client_command(c); /* after reading CACHING: it reports what applies to itself */
}

/* CLIENT CACHING YES|NO: Redis refuses it outside OPTIN/OPTOUT tracking
 * before it reads the argument. */
void cmd_client_caching(struct cmd_ctx *c) {
    tracking_client_command(c);
    unsigned mode = tracking_mode(c->cl);
    if (!(c->cl->flags & CLIENT_TRACKING)) {
        reply_error(c, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
                       "OPTOUT mode enabled");
        return;
    }
    const hk_slice *a = &c->argv[2];
    if (arg_is(a, "yes")) {
        if (!(mode & TRACK_OPTIN)) {
            reply_error(c, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
            return;
        }
    } else if (arg_is(a, "no")) {
        if (!(mode & TRACK_OPTOUT)) {
            reply_error(c, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
            return;
        }
    } else {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    tracking_set_caching(c);
    reply_ok(c);
}

/* CLIENT TRACKING's arguments, copied: with REDIRECT the command finishes
 * after every worker was asked whether the target exists. */
struct trk_args {
    int on;             /* argv[2]: 1 ON, 0 OFF, -1 neither */
    unsigned mode;      /* TRACK_* */
    long long redir;    /* 0: none */
    const char *err;    /* the first parse error, NULL for none ... */
    int err_after;      /* ... and whether it comes after REDIRECT's id (so only counts if the id exists) */
    int np;
    char **p;
    size_t *plen;
};

static void trk_args_free(struct trk_args *t) {
    for (int i = 0; i < t->np; i++) hk_free(t->p[i]);
    hk_free(t->p);
    hk_free(t->plen);
}

/* Parse as Redis does, left to right: the first error wins, and REDIRECT
 * checks its id (integer, then existence) where it stands. */
static void trk_parse(struct cmd_ctx *c, struct trk_args *t) {
    memset(t, 0, sizeof(*t));
    for (int j = 3; j < c->argc && !t->err; j++) {
        const hk_slice *a = &c->argv[j];
        int more = c->argc - 1 - j;
        if (arg_is(a, "redirect") && more) {
            j++;
            if (t->redir != 0) {
                t->err = "ERR A client can only redirect to a single other client";
                t->err_after = 1;
            } else if (!hk_str2ll(c->argv[j].ptr, c->argv[j].len, &t->redir)) {
                t->err = "ERR value is not an integer or out of range";
            } else if (t->redir == 0) {
                /* No client has id 0: the lookup fails at once. */
                t->err = "ERR The client ID you want redirect to does not exist";
            }
        } else if (arg_is(a, "bcast")) {
            t->mode |= TRACK_BCAST;
        } else if (arg_is(a, "optin")) {
            t->mode |= TRACK_OPTIN;
        } else if (arg_is(a, "optout")) {
            t->mode |= TRACK_OPTOUT;
        } else if (arg_is(a, "noloop")) {
            t->mode |= TRACK_NOLOOP;
        } else if (arg_is(a, "prefix") && more) {
            j++;
            t->p = hk_realloc(t->p, (size_t)(t->np + 1) * sizeof(char *));
            t->plen = hk_realloc(t->plen, (size_t)(t->np + 1) * sizeof(size_t));
            t->p[t->np] = hk_strndup(c->argv[j].ptr, c->argv[j].len);
            t->plen[t->np] = c->argv[j].len;
            t->np++;
        } else {
            t->err = ERR_SYNTAX;
            t->err_after = t->redir != 0;
        }
    }
    if (arg_is(&c->argv[2], "on")) t->on = 1;
    else if (arg_is(&c->argv[2], "off")) t->on = 0;
    else t->on = -1;
}

/* The rest of the command, once the redirect target is known to exist on
 * worker redir_worker (-1: exists, worker unknown) or not (exists 0). */
static void trk_finish(struct cmd_ctx *c, struct trk_args *t, int exists, int redir_worker) {
    struct client *cl = c->cl;
    if (t->redir && !exists) {
        reply_error(c, "ERR The client ID you want redirect to does not exist");
        return;
    }
    if (t->err) {
        reply_error(c, t->err);
        return;
    }
    if (t->on == 0) {
        tracking_disable(cl);
        reply_ok(c);
        return;
    }
    if (t->on < 0) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    unsigned cur = tracking_mode(cl);
    int tracking = (cl->flags & CLIENT_TRACKING) != 0;
    if (!(t->mode & TRACK_BCAST) && t->np) {
        reply_error(c, "ERR PREFIX option requires BCAST mode to be enabled");
        return;
    }
    if (tracking && !(cur & TRACK_BCAST) != !(t->mode & TRACK_BCAST)) {
        reply_error(c, "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then "
                       "re-enabling it with a different mode.");
        return;
    }
    if ((t->mode & TRACK_BCAST) && (t->mode & (TRACK_OPTIN | TRACK_OPTOUT))) {
        reply_error(c, "ERR OPTIN and OPTOUT are not compatible with BCAST");
        return;
    }
    if ((t->mode & TRACK_OPTIN) && (t->mode & TRACK_OPTOUT)) {
        reply_error(c, "ERR You can't specify both OPTIN mode and OPTOUT mode");
        return;
    }
    if (((t->mode & TRACK_OPTIN) && (cur & TRACK_OPTOUT)) || ((t->mode & TRACK_OPTOUT) && (cur & TRACK_OPTIN))) {
        reply_error(c, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then "
                       "re-enabling it with a different mode.");
        return;
    }
    if (t->mode & TRACK_BCAST) {
        int old = -1, other = -1;
        int i = tracking_prefix_overlap(cl, (const char *const *)t->p, t->plen, t->np, &old, &other);
        if (i >= 0) {
            /* Redis formats the prefixes as C strings. */
            if (old >= 0) {
                size_t len;
                const char *op = tracking_prefix(cl, old, &len);
                reply_errorf(c,
                             "ERR Prefix '%s' overlaps with an existing prefix '%.*s'. Prefixes for a single client "
                             "must not overlap.",
                             t->p[i], (int)len, op);
            } else {
                reply_errorf(c,
                             "ERR Prefix '%s' overlaps with another provided prefix '%s'. Prefixes for a single "
                             "client must not overlap.",
                             t->p[i], t->p[other]);
            }
            return;
        }
    }
    tracking_enable(cl, (uint64_t)t->redir, redir_worker, t->mode, (const char *const *)t->p, t->plen, t->np);
    reply_ok(c);
}

struct trk_req {
    uint64_t origin;
    int muted;
    _Atomic int found; /* worker of the redirect target, -1 while not found */
    struct trk_args t;
};

static void trk_each(struct worker *w, void *arg) {
    struct trk_req *r = arg;
    if (worker_find_client(w, (uint64_t)r->t.redir)) atomic_store(&r->found, w->id);
}

static void trk_done(struct worker *w, void *arg) {
    struct gather *g = arg;
    struct trk_req *r = g->arg;
    struct client *cl = worker_find_client(w, r->origin);
    if (cl) {
        struct cmd_ctx *x = &cl->ctx;
        unsigned saved = x->flags;
        if (r->muted) x->flags |= CTX_MUTED;
        int found = atomic_load(&r->found);
        trk_finish(x, &r->t, found >= 0, found);
        x->flags = saved;
        cl->flags &= ~CLIENT_WAIT_GATHER;
        if (client_resume(cl) < 0) client_close(cl);
    }
    trk_args_free(&r->t);
    hk_free(r);
    hk_free(g);
}

/* CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p]... [OPTIN]
 * [OPTOUT] [NOLOOP]. A REDIRECT target other than the caller is looked for
 * on every worker (the caller waits, CLIENT_WAIT_GATHER); inside EXEC,
 * where the reply cannot wait, an id on another worker is taken on trust
 * if it was ever handed out, and found when a message is first sent. */
void cmd_client_tracking(struct cmd_ctx *c) {
    tracking_client_command(c);
    struct trk_args t;
    trk_parse(c, &t);
    if (!t.redir || (t.err && !t.err_after)) {
        trk_finish(c, &t, 1, -1);
        trk_args_free(&t);
        return;
    }
    struct client *cl = c->cl;
    if (t.redir < 0) {
        trk_finish(c, &t, 0, -1);
    } else if ((uint64_t)t.redir == cl->id || worker_find_client(cl->w, (uint64_t)t.redir)) {
        trk_finish(c, &t, 1, cl->w->id);
    } else if (c->flags & CTX_NESTED) {
        trk_finish(c, &t, (unsigned long long)t.redir < atomic_load(&server.next_client_id), -1);
    } else {
        struct trk_req *r = hk_calloc(1, sizeof(*r));
        r->origin = cl->id;
        r->muted = reply_muted(c);
        atomic_store(&r->found, -1);
        r->t = t;
        cl->flags |= CLIENT_WAIT_GATHER;
        worker_broadcast(trk_each, trk_done, r);
        return;
    }
    trk_args_free(&t);
}

/* ---- PAUSE / UNPAUSE ---------------------------------------------------- */

/* Serialises writers of server.pause_end_ms/pause_all; dispatch only reads. */
static pthread_mutex_t pause_lock = PTHREAD_MUTEX_INITIALIZER;

static void pause_wake(struct worker *w, void *arg) {
    (void)arg;
    pause_check_clients(w);
}

void cmd_client_pause(struct cmd_ctx *c) {
    tracking_client_command(c);
    if (c->argc > 4) {
        reply_subcommand_error(c);
        return;
    }
    int all = 1;
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "write")) all = 0;
        else if (!arg_is(&c->argv[3], "all")) {
            reply_error(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    }
    long long now = hk_mstime(), end;
    if (!parse_timeout(c, 2, 1, now, &end)) return;
    /* A pause already running keeps its later end and its stricter mode. */
    pthread_mutex_lock(&pause_lock);
    long long cur = atomic_load(&server.pause_end_ms);
    if (cur > now) {
        if (cur > end) end = cur;
        if (atomic_load(&server.pause_all)) all = 1;
    }
    atomic_store(&server.pause_all, all);
    atomic_store_explicit(&server.pause_end_ms, end, memory_order_release);
    pthread_mutex_unlock(&pause_lock);
    reply_ok(c);
}

void cmd_client_unpause(struct cmd_ctx *c) {
    tracking_client_command(c);
    pthread_mutex_lock(&pause_lock);
    atomic_store_explicit(&server.pause_end_ms, 0, memory_order_release);
    atomic_store(&server.pause_all, 0);
    pthread_mutex_unlock(&pause_lock);
    /* Paused clients otherwise wait for their worker's next poll. */
    for (int i = 0; i < server.nworkers; i++) worker_post(&server.workers[i], pause_wake, NULL);
    reply_ok(c);
}

/* ---- LIST / KILL: broadcast to every worker, answer on the caller's ----- */

struct entry {
    uint64_t id;
    size_t off, len; /* line in the worker's text, newline included */
};

/* What one worker found; written only by that worker's thread. */
struct wresult {
    struct hk_buf text;
    struct entry *ents;
    int n, cap;
    int killed;
};

struct admin_req {
    int kill;             /* KILL rather than LIST */
    uint64_t origin_id;   /* the caller */
    struct client_run_view origin_view; /* the caller as its command ran (LIST) */
    int muted;            /* caller had replies muted when it asked */
    /* LIST filters. */
    int type;             /* -1: any */
    long long *ids;       /* LIST ID ...: in request order, NULL for all */
    long long *sorted;    /* the same ids sorted, for lookups */
    int nids;
    /* KILL filters. */
    int old_form, skipme;
    char *addr, *laddr;
    char *user; /* USER filter, or NULL */
    uint64_t id;          /* 0: any */
    long long maxage;     /* seconds, 0: any */
    int close_self;       /* written by the caller's worker only */
    struct wresult *res;  /* one per worker */
};

static void admin_req_free(struct admin_req *r) {
    for (int i = 0; i < server.nworkers; i++) {
        tb_free(&r->res[i].text);
        hk_free(r->res[i].ents);
    }
    hk_free(r->res);
    hk_free(r->ids);
    hk_free(r->sorted);
    hk_free(r->addr);
    hk_free(r->laddr);
    hk_free(r->user);
    hk_free(r);
}

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static int id_wanted(const struct admin_req *r, uint64_t id) {
    if (!r->ids) return 1;
    long long key = (long long)id;
    return bsearch(&key, r->sorted, (size_t)r->nids, sizeof(long long), cmp_ll) != NULL;
}

/* Runs on every worker's own thread: format or close its own clients. */
static void admin_each(struct worker *w, void *arg) {
    struct admin_req *r = arg;
    struct wresult *res = &r->res[w->id];
    long long now = w->now_ms;
    for (struct client *c = w->clients; c; c = c->next) {
        if (!r->kill) {
            if (r->type >= 0 && client_type(c) != r->type) continue;
            if (!id_wanted(r, c->id)) continue;
            if (res->n == res->cap) {
                res->cap = res->cap ? res->cap * 2 : 16;
                res->ents = hk_realloc(res->ents, (size_t)res->cap * sizeof(struct entry));
            }
            struct entry *e = &res->ents[res->n++];
            e->id = c->id;
            e->off = res->text.len;
            client_info_cat(&res->text, c, c->lastcmd, c->id == r->origin_id ? &r->origin_view : NULL);
            tb_append(&res->text, "\n", 1);
            e->len = res->text.len - e->off;
            continue;
        }
        /* Already being closed (by an earlier KILL in this same turn, or
         * for its output limit): not counted again. */
        if (c->flags & CLIENT_CLOSE_ASAP) continue;
        if (r->addr && strcmp(c->addr, r->addr) != 0) continue;
        if (r->laddr && strcmp(c->laddr, r->laddr) != 0) continue;
        if (r->user && strcmp(acl_client_name(c), r->user) != 0) continue;
        if (r->type >= 0 && client_type(c) != r->type) continue;
        if (r->id && c->id != r->id) continue;
        int self = c->id == r->origin_id;
        if (self && r->skipme) continue;
        if (r->maxage && (now - c->ctime_ms) / 1000 < r->maxage) continue;
        res->killed++;
        if (self) {
            r->close_self = 1; /* after its reply, in admin_done */
        } else {
            /* Freed by this worker's flush at the end of the loop turn, so
             * no event still queued in this turn points at freed memory. */
            c->flags |= CLIENT_CLOSE_ASAP;
            client_queue_write(c);
        }
    }
}

struct line {
    uint64_t id;
    const char *p;
    size_t len;
};

static int cmp_line(const void *a, const void *b) {
    uint64_t x = ((const struct line *)a)->id, y = ((const struct line *)b)->id;
    return (x > y) - (x < y);
}

/* Merge the workers' lines: by id (the order Redis lists clients in, oldest
 * first), or in the order of the requested ids, repeats included. */
static void reply_list(struct cmd_ctx *c, struct admin_req *r) {
    int total = 0;
    for (int i = 0; i < server.nworkers; i++) total += r->res[i].n;
    struct line *all = hk_malloc((size_t)(total ? total : 1) * sizeof(struct line));
    int k = 0;
    for (int i = 0; i < server.nworkers; i++)
        for (int j = 0; j < r->res[i].n; j++) {
            const struct entry *e = &r->res[i].ents[j];
            all[k++] = (struct line){e->id, r->res[i].text.p + e->off, e->len};
        }
    qsort(all, (size_t)total, sizeof(struct line), cmp_line);
    struct hk_buf out = {0};
    tb_reserve(&out, 0);
    if (!r->ids) {
        for (int i = 0; i < total; i++) tb_append(&out, all[i].p, all[i].len);
    } else {
        for (int i = 0; i < r->nids; i++) {
            if (r->ids[i] <= 0) continue;
            struct line key = {.id = (uint64_t)r->ids[i]};
            struct line *e = bsearch(&key, all, (size_t)total, sizeof(struct line), cmp_line);
            if (e) tb_append(&out, e->p, e->len);
        }
    }
    reply_verbatim(c, out.p, out.len, "txt");
    tb_free(&out);
    hk_free(all);
}

/* Runs on the caller's worker once every worker has answered. */
static void admin_done(struct worker *w, void *arg) {
    struct gather *g = arg;
    struct admin_req *r = g->arg;
    struct client *cl = worker_find_client(w, r->origin_id);
    if (cl) {
        struct client *c = cl;
        struct cmd_ctx *x = &cl->ctx;
        if (!r->muted) {
            if (!r->kill) {
                reply_list(x, r);
            } else {
                int killed = 0;
                for (int i = 0; i < server.nworkers; i++) killed += r->res[i].killed;
                if (!r->old_form) reply_int(x, killed);
                else if (killed) reply_ok(x);
                else reply_error(x, "ERR No such client");
            }
        }
        if (r->close_self) client_set_close_after_reply(c);
        c->flags &= ~CLIENT_WAIT_GATHER;
        if (client_resume(c) < 0) client_close(c);
    }
    admin_req_free(r);
    hk_free(g);
}

static struct admin_req *admin_req_new(struct cmd_ctx *c, int kill) {
    struct admin_req *r = hk_calloc(1, sizeof(*r));
    r->kill = kill;
    r->origin_id = c->cl->id;
    client_run_view_of(c->cl, &r->origin_view);
    r->type = -1;
    r->res = hk_calloc((size_t)server.nworkers, sizeof(struct wresult));
    return r;
}

/* Hold the caller's later commands back and ask every worker. */
static void admin_start(struct cmd_ctx *c, struct admin_req *r) {
    r->muted = reply_muted(c);
    c->cl->flags |= CLIENT_WAIT_GATHER;
    worker_broadcast(admin_each, admin_done, r);
}

void cmd_client_list(struct cmd_ctx *c) {
    tracking_client_command(c);
    int type = -1;
    long long *ids = NULL;
    int nids = 0;
    if (c->argc == 4 && arg_is(&c->argv[2], "type")) {
        type = client_type_by_name(&c->argv[3]);
        if (type < 0) {
            reply_errorf(c, "ERR Unknown client type '%.*s'", (int)c->argv[3].len, c->argv[3].ptr);
            return;
        }
    } else if (c->argc > 3 && arg_is(&c->argv[2], "id")) {
        nids = c->argc - 3;
        ids = hk_malloc((size_t)nids * sizeof(long long));
        for (int j = 0; j < nids; j++) {
            if (!hk_str2ll(c->argv[3 + j].ptr, c->argv[3 + j].len, &ids[j])) {
                hk_free(ids);
                reply_error(c, "ERR Invalid client ID");
                return;
            }
        }
    } else if (c->argc != 2) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    struct admin_req *r = admin_req_new(c, 0);
    r->type = type;
    if (ids) {
        r->ids = ids;
        r->nids = nids;
        r->sorted = hk_malloc((size_t)nids * sizeof(long long));
        memcpy(r->sorted, ids, (size_t)nids * sizeof(long long));
        qsort(r->sorted, (size_t)nids, sizeof(long long), cmp_ll);
    }
    admin_start(c, r);
}

void cmd_client_kill(struct cmd_ctx *c) {
    tracking_client_command(c);
    struct admin_req *r = admin_req_new(c, 1);
    r->skipme = 1;
    if (c->argc == 3) {
        /* Old form: an address, and the caller may kill itself. */
        r->old_form = 1;
        r->skipme = 0;
        r->addr = hk_strndup(c->argv[2].ptr, c->argv[2].len);
    } else {
        for (int i = 2; i < c->argc; i += 2) {
            const hk_slice *opt = &c->argv[i];
            int more = c->argc > i + 1;
            const hk_slice *v = more ? &c->argv[i + 1] : NULL;
            if (more && arg_is(opt, "id")) {
                long long id;
                if (!hk_str2ll(v->ptr, v->len, &id) || id < 1) {
                    reply_error(c, "ERR client-id should be greater than 0");
                    goto fail;
                }
                r->id = (uint64_t)id;
            } else if (more && arg_is(opt, "maxage")) {
                long long age;
                if (!hk_str2ll(v->ptr, v->len, &age)) {
                    reply_error(c, "ERR maxage is not an integer or out of range");
                    goto fail;
                }
                if (age <= 0) {
                    reply_error(c, "ERR maxage should be greater than 0");
                    goto fail;
                }
                r->maxage = age;
            } else if (more && arg_is(opt, "type")) {
                r->type = client_type_by_name(v);
                if (r->type < 0) {
                    reply_errorf(c, "ERR Unknown client type '%.*s'", (int)v->len, v->ptr);
                    goto fail;
                }
            } else if (more && arg_is(opt, "addr")) {
                hk_free(r->addr);
                r->addr = hk_strndup(v->ptr, v->len);
            } else if (more && arg_is(opt, "laddr")) {
                hk_free(r->laddr);
                r->laddr = hk_strndup(v->ptr, v->len);
            } else if (more && arg_is(opt, "user")) {
                if (!acl_user_exists(v->ptr, v->len)) {
                    reply_errorf(c, "ERR No such user '%.*s'", (int)v->len, v->ptr);
                    goto fail;
                }
                hk_free(r->user);
                r->user = hk_strndup(v->ptr, v->len);
            } else if (more && arg_is(opt, "skipme")) {
                if (arg_is(v, "yes")) r->skipme = 1;
                else if (arg_is(v, "no")) r->skipme = 0;
                else {
                    reply_error(c, ERR_SYNTAX);
                    goto fail;
                }
            } else {
                reply_error(c, ERR_SYNTAX);
                goto fail;
            }
        }
    }
    admin_start(c, r);
    return;
fail:
    admin_req_free(r);
}
