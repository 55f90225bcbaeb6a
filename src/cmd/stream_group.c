/* stream_group.c - the consumer-group commands of streams: XGROUP (CREATE,
 * SETID, DESTROY, CREATECONSUMER, DELCONSUMER, HELP), XREADGROUP (COUNT,
 * BLOCK, NOACK, CLAIM), XACK, XACKDEL, XPENDING, XCLAIM, XAUTOCLAIM and
 * XINFO (STREAM, GROUPS, CONSUMERS, HELP), with Redis 8.4's syntax,
 * replies and error texts in RESP2 and RESP3.
 *
 * What a group command changes propagates as Redis propagates it: a
 * delivered or claimed entry as an XCLAIM that recreates its pending
 * record exactly (consumer, delivery time and count, the group's last id),
 * a group that only moved on as XGROUP SETID ... ENTRIESREAD, a consumer
 * an XREADGROUP NOACK created as XGROUP CREATECONSUMER. Two changes Redis
 * leaves out are propagated in the same forms, so that a replay ends with
 * exactly the same groups: the delivery counts a history read raises, and
 * a consumer a read or claim created without handing it anything. The
 * stream value, its groups and pending entries
 * are src/types/stream.h; the commands without groups (XADD, XREAD, ...)
 * are stream.c, and what both use is stream_util.h. Blocked group readers
 * queue on their keys with a tag naming their group (store/watch.h): new
 * entries go to them in the order they blocked. */
#include "../core/alloc.h"
#include "../core/hash.h"
#include "../core/util.h"
#include "../server/blocking.h"
#include "../server/creply.h"
#include "../store/watch.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"
#include "stream_util.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

static const streamid ID_MIN = {0, 0};
static const streamid ID_MAX = {UINT64_MAX, UINT64_MAX};

/* ---- small helpers
 * ----------------------------------------------------------- */

static struct stream_cg *group_of(struct stream *s, const hk_slice *name) {
    return stream_cg_find(s, name->ptr, name->len);
}

/* argv[1] as a stream (fills *k; *sp too when not NULL) and argv[2] as
 * one of its groups, as XACK, XACKDEL, XPENDING, XCLAIM and XAUTOCLAIM
 * find them: the group, or NULL with *bad 0 when the key or the group is
 * missing (each command answers that its own way), or NULL with *bad 1
 * after replying WRONGTYPE. */
static struct stream_cg *key_group(struct cmd_ctx *c, struct keyref *k, struct stream **sp, int *bad) {
    struct kv *e = xlookup(c, 1, k, 0, bad);
    struct stream *s = e ? stream_of(e) : NULL;
    if (sp) *sp = s;
    return s ? group_of(s, &c->argv[2]) : NULL;
}

/* Room for one more element in an array of *cap elements of `size`
 * bytes that starts as the caller's inline buffer: it doubles, leaving
 * the buffer the first time. Returns the array (it may move). */
static void *grow_inline(void *arr, const void *inl, size_t *cap, size_t size) {
    size_t old = *cap;
    *cap *= 2;
    if (arr != inl) return hk_realloc(arr, *cap * size);
    void *a = hk_malloc(*cap * size);
    memcpy(a, inl, old * size);
    return a;
}

/* An error reply made of n pieces (key and group names may be long: no
 * fixed buffer). */
static void reply_error_parts(struct cmd_ctx *c, const hk_slice *parts, int n) {
    size_t len = 0;
    for (int i = 0; i < n; i++) len += parts[i].len;
    char stack[256], *buf = len <= sizeof(stack) ? stack : hk_malloc(len);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        memcpy(buf + at, parts[i].ptr, parts[i].len);
        at += parts[i].len;
    }
    reply_error_len(c, buf, len);
    if (buf != stack) hk_free(buf);
}

#define LIT(s) ((hk_slice){s, sizeof(s) - 1})

/* "NOGROUP No such key 'k' or consumer group 'g'" and its variants. */
static void reply_nogroup_key(struct cmd_ctx *c, const hk_slice *key, const hk_slice *group, const char *tail) {
    hk_slice p[] = {LIT("NOGROUP No such key '"), *key, LIT("' or consumer group '"), *group, LIT("'"),
                    {tail, strlen(tail)}};
    reply_error_parts(c, p, 6);
}

/* "NOGROUP No such consumer group 'g' for key name 'k'" (XGROUP, XINFO). */
static void reply_nogroup_name(struct cmd_ctx *c, const hk_slice *key, const hk_slice *group) {
    hk_slice p[] = {LIT("NOGROUP No such consumer group '"), *group, LIT("' for key name '"), *key, LIT("'")};
    reply_error_parts(c, p, 5);
}

/* Position `it` on the live entry `id` of s: 1 with its field count, 0
 * when the entry is not (or no longer) in the stream. */
static int entry_at(struct stream_iter *it, struct stream *s, const streamid *id, long long *nf) {
    stream_iter_start(it, s, id, id, 0);
    if (stream_iter_next(it, NULL, nf)) return 1;
    stream_iter_stop(it);
    return 0;
}

/* [id, [field, value...]] of entry id, or nothing and 0 when it is gone. */
static int reply_entry_id(struct cmd_ctx *c, struct stream *s, const streamid *id) {
    struct stream_iter it;
    long long nf;
    if (!entry_at(&it, s, id, &nf)) return 0;
    xreply_entry(c, &it, id, nf);
    stream_iter_stop(&it);
    return 1;
}

/* A growing list of ids, each marked (XAUTOCLAIM's claimed and dropped
 * ids, in the order met). */
struct idvec {
    streamid *ids;
    unsigned char *gone;
    size_t n, cap;
};
static void idvec_push(struct idvec *v, const streamid *id, int gone) {
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 16;
        v->ids = hk_realloc(v->ids, v->cap * sizeof(*v->ids));
        v->gone = hk_realloc(v->gone, v->cap);
    }
    v->ids[v->n] = *id;
    v->gone[v->n++] = (unsigned char)gone;
}
static void idvec_free(struct idvec *v) {
    hk_free(v->ids);
    hk_free(v->gone);
}

/* A group name as a blocked reader's tag (never 0). */
static uint64_t group_tag(const hk_slice *name) {
    uint64_t h = hk_hash(name->ptr, name->len);
    return h ? h : 1;
}

/* ---- propagation
 * ------------------------------------------------------------- */

/* XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID LASTID
 * last: recreates one pending record exactly on a replica (or removes it,
 * when the entry is gone from the stream), and moves the group's last id
 * on when it is behind `last`. */
static void prop_xclaim(struct cmd_ctx *c, const hk_slice *key, const hk_slice *group, const char *cons, size_t clen,
                        const hk_slice *idtext, const streamid *id, long long time_ms, uint64_t count,
                        const streamid *last) {
    if (!prop_on(c)) return;
    char ib[STREAMID_STRLEN], lb[STREAMID_STRLEN];
    prop_begin(c, 14);
    prop_arg(c, "XCLAIM", 6);
    prop_arg_slice(c, key);
    prop_arg_slice(c, group);
    prop_arg(c, cons, clen);
    prop_arg(c, "0", 1);
    if (idtext) prop_arg_slice(c, idtext);
    else prop_arg(c, ib, streamid_fmt(id, ib));
    prop_arg(c, "TIME", 4);
    prop_arg_ll(c, time_ms);
    prop_arg(c, "RETRYCOUNT", 10);
    prop_arg_ll(c, (long long)count);
    prop_arg(c, "FORCE", 5);
    prop_arg(c, "JUSTID", 6);
    prop_arg(c, "LASTID", 6);
    prop_arg(c, lb, streamid_fmt(last, lb));
}

/* XGROUP SETID key group last ENTRIESREAD n: the group moved on without a
 * pending record to carry it (NOACK, or XCLAIM ... LASTID alone). */
static void prop_setid(struct cmd_ctx *c, const hk_slice *key, const hk_slice *group, const struct stream_cg *cg) {
    if (!prop_on(c)) return;
    char lb[STREAMID_STRLEN];
    prop_begin(c, 7);
    prop_arg(c, "XGROUP", 6);
    prop_arg(c, "SETID", 5);
    prop_arg_slice(c, key);
    prop_arg_slice(c, group);
    prop_arg(c, lb, streamid_fmt(&cg->last_id, lb));
    prop_arg(c, "ENTRIESREAD", 11);
    prop_arg_ll(c, cg->entries_read);
}

/* XGROUP CREATECONSUMER key group consumer: a consumer XREADGROUP NOACK
 * created, which no XCLAIM will create on a replica. */
static void prop_createconsumer(struct cmd_ctx *c, const hk_slice *key, const hk_slice *group, const hk_slice *cons) {
    if (!prop_on(c)) return;
    prop_begin(c, 5);
    prop_arg(c, "XGROUP", 6);
    prop_arg(c, "CREATECONSUMER", 14);
    prop_arg_slice(c, key);
    prop_arg_slice(c, group);
    prop_arg_slice(c, cons);
}

/* ---- XGROUP
 * ---------------------------------------------------------------------- */

/* What every XGROUP subcommand but HELP checks first, in Redis's order:
 * the options of CREATE and SETID, the key (a stream; absent only for
 * CREATE ... MKSTREAM), and the group when the subcommand needs one.
 * Returns 0, or -1 after replying the error. */
struct xgroup_args {
    struct keyref k;
    struct kv *e;
    struct stream *s;
    struct stream_cg *cg;
    int mkstream;
    long long entries_read;
};

enum { XG_CREATE, XG_SETID, XG_OTHER_NEEDS_GROUP, XG_DESTROY };

static int xgroup_prepare(struct cmd_ctx *c, struct xgroup_args *a, int sub) {
    a->mkstream = 0;
    a->entries_read = STREAM_ENTRIES_READ_INVALID;
    a->cg = NULL;
    a->s = NULL;
    for (int i = 5; i < c->argc;) {
        if (sub == XG_CREATE && arg_is(&c->argv[i], "MKSTREAM")) {
            a->mkstream = 1;
            i++;
        } else if ((sub == XG_CREATE || sub == XG_SETID) && arg_is(&c->argv[i], "ENTRIESREAD") && i + 1 < c->argc) {
            if (!arg_ll_or_reply(c, &c->argv[i + 1], &a->entries_read, NULL)) return -1;
            if (a->entries_read < 0 && a->entries_read != STREAM_ENTRIES_READ_INVALID) {
                reply_error(c, "ERR value for ENTRIESREAD must be positive or -1");
                return -1;
            }
            i += 2;
        } else {
            reply_subcommand_error(c);
            return -1;
        }
    }
    int bad;
    a->e = xlookup(c, 2, &a->k, 1, &bad);
    if (bad) return -1;
    if (a->e) a->s = stream_of(a->e);
    if (!a->mkstream) {
        if (!a->s) {
            reply_error(c, "ERR The XGROUP subcommand requires the key to exist. "
                           "Note that for CREATE you may want "
                           "to use the MKSTREAM option to create an empty stream "
                           "automatically.");
            return -1;
        }
        a->cg = group_of(a->s, &c->argv[3]);
        if (!a->cg && (sub == XG_SETID || sub == XG_OTHER_NEEDS_GROUP)) {
            reply_nogroup_name(c, &c->argv[2], &c->argv[3]);
            return -1;
        }
    }
    return 0;
}

/* ENTRIESREAD beyond what the stream ever had is capped to it. */
static long long cap_entries_read(const struct stream *s, long long er) {
    if (er != STREAM_ENTRIES_READ_INVALID && (uint64_t)er > s->entries_added) return (long long)s->entries_added;
    return er;
}

/* XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n] */
void cmd_xgroup_create(struct cmd_ctx *c) {
    struct xgroup_args a;
    if (xgroup_prepare(c, &a, XG_CREATE) < 0) return;
    if (c->argc > 8) {
        reply_subcommand_error(c);
        return;
    }
    streamid id;
    if (c->argv[4].len == 1 && c->argv[4].ptr[0] == '$') id = a.s ? a.s->last_id : ID_MIN;
    else if (xid_parse_strict_or_reply(c, &c->argv[4], &id, 0, 0, NULL) < 0) return;
    const hk_slice *g = &c->argv[3];
    int reported = 0;
    if (!a.s) {
        /* MKSTREAM: the new key is the group's event (Redis notifies only
         * xgroup-create). */
        a.e = db_put(&a.k, stream_new_entry(a.k.key, a.k.klen), KEV_XGROUP_CREATE);
        a.s = stream_of(a.e);
        reported = 1;
    } else if (group_of(a.s, g)) {
        reply_error(c, "BUSYGROUP Consumer Group name already exists");
        return;
    }
    long long er = cap_entries_read(a.s, a.entries_read);
    if (!reported) db_written(&a.k, KEV_XGROUP_CREATE);
    stream_cg_create(a.s, g->ptr, g->len, &id, er);
    reply_ok(c);
}

/* XGROUP SETID key group id|$ [ENTRIESREAD n] */
void cmd_xgroup_setid(struct cmd_ctx *c) {
    struct xgroup_args a;
    if (xgroup_prepare(c, &a, XG_SETID) < 0) return;
    if (c->argc != 5 && c->argc != 7) {
        reply_subcommand_error(c);
        return;
    }
    streamid id;
    /* Not the strict form: "-" and "+" are taken here, as Redis does. */
    if (c->argv[4].len == 1 && c->argv[4].ptr[0] == '$') id = a.s->last_id;
    else if (xid_parse_or_reply(c, &c->argv[4], &id, 0, 0, NULL) < 0) return;
    long long er = cap_entries_read(a.s, a.entries_read);
    db_written(&a.k, KEV_XGROUP_SETID);
    a.cg->last_id = id;
    a.cg->entries_read = er;
    reply_ok(c);
}

/* XGROUP DESTROY key group: 1, or 0 when there is no such group. Group
 * readers blocked on the key are woken and fail with NOGROUP. */
void cmd_xgroup_destroy(struct cmd_ctx *c) {
    struct xgroup_args a;
    if (xgroup_prepare(c, &a, XG_DESTROY) < 0) return;
    if (!a.cg) {
        reply_int(c, 0);
        return;
    }
    db_written(&a.k, KEV_XGROUP_DESTROY);
    stream_cg_destroy(a.s, a.cg);
    reply_int(c, 1);
}

/* XGROUP CREATECONSUMER key group consumer: 1 created, 0 it existed. */
void cmd_xgroup_createconsumer(struct cmd_ctx *c) {
    struct xgroup_args a;
    if (xgroup_prepare(c, &a, XG_OTHER_NEEDS_GROUP) < 0) return;
    const hk_slice *n = &c->argv[4];
    if (stream_consumer_find(a.cg, n->ptr, n->len)) {
        reply_int(c, 0);
        return;
    }
    db_written(&a.k, KEV_XGROUP_CREATECONSUMER);
    stream_consumer_create(a.cg, n->ptr, n->len, c->now_ms);
    reply_int(c, 1);
}

/* XGROUP DELCONSUMER key group consumer: the entries it had pending (they
 * leave the group's PEL with it). */
void cmd_xgroup_delconsumer(struct cmd_ctx *c) {
    struct xgroup_args a;
    if (xgroup_prepare(c, &a, XG_OTHER_NEEDS_GROUP) < 0) return;
    const hk_slice *n = &c->argv[4];
    struct stream_consumer *cons = stream_consumer_find(a.cg, n->ptr, n->len);
    long long pending = 0;
    if (cons) {
        pending = (long long)cons->pel_count;
        db_written(&a.k, KEV_XGROUP_DELCONSUMER);
        stream_consumer_delete(a.cg, cons);
    }
    reply_int(c, pending);
}

void cmd_xgroup_help(struct cmd_ctx *c) {
    static const char *const lines[] = {
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        NULL,
    };
    reply_help(c, "XGROUP", lines);
}

/* ---- XREADGROUP
 * ------------------------------------------------------------------ */

/* One XREADGROUP run: its options and what it has replied so far. */
struct xrg {
    struct cmd_ctx *c;
    const hk_slice *group, *consumer;
    long long count;    /* 0: no limit */
    long long min_idle; /* CLAIM; -1 without it */
    int noack;
    uint64_t tag;
};

/* One stream's '>' delivery: with CLAIM, first the group's pending
 * entries idle for at least min_idle (oldest delivery first; an entry no
 * longer in the stream is passed over, though it takes a place in COUNT,
 * as in Redis), handed to this consumer and replied as [id, fields, idle,
 * deliveries]; then, unless claimed_only, the entries after `start`,
 * which become pending for this consumer (not with NOACK) and move the
 * group on. One COUNT for both. The pending records propagate as XCLAIMs
 * carrying the group's last id from before the read, then XGROUP SETID
 * carries where it moved. Returns whether a record went to cons. */
static int xrg_deliver(struct xrg *r, const struct keyref *k, const hk_slice *key, struct stream *s,
                       struct stream_cg *cg, struct stream_consumer *cons, const streamid *start, int claimed_only) {
    struct cmd_ctx *c = r->c;
    long long now = c->now_ms, out = 0;
    const streamid last_before = cg->last_id;
    int reported = 0, moved = 0, recorded = 0;
    void *arr = reply_defer(c);
    if (r->min_idle >= 0 && cg->oldest) {
        /* Collected first: claiming moves each record to the newest end
         * of the delivery-time order being walked. */
        struct stream_nack *stack[64], **pick = stack;
        size_t npick = 0, cap = 64;
        for (struct stream_nack *n = cg->oldest; n; n = stream_pel_newer(n)) {
            uint64_t idle = (uint64_t)now - (uint64_t)n->delivery_time;
            if (idle < (uint64_t)r->min_idle) break;
            if (npick == cap) pick = grow_inline(pick, stack, &cap, sizeof(*pick));
            pick[npick++] = n;
            if (r->count && (long long)npick >= r->count) break;
        }
        for (size_t i = 0; i < npick; i++) {
            struct stream_nack *n = pick[i];
            struct stream_iter it;
            long long nf;
            if (!entry_at(&it, s, &n->id, &nf)) continue;
            long long idle = (long long)((uint64_t)now - (uint64_t)n->delivery_time);
            reply_array(c, 4);
            xreply_id(c, &n->id);
            xreply_fields(c, &it, nf);
            stream_iter_stop(&it);
            reply_int(c, idle);
            reply_int(c, (long long)n->delivery_count);
            if (!reported) {
                db_written(k, KEV_XGROUP_STATE);
                reported = 1;
            }
            stream_pel_assign(cg, n, cons, now, 1);
            cons->active_time = now;
            prop_xclaim(c, key, r->group, cons->name, cons->nlen, NULL, &n->id, now, n->delivery_count, &last_before);
            recorded = 1;
            out++;
        }
        if (pick != stack) hk_free(pick);
    }
    if (claimed_only || (r->count && out == r->count)) {
        reply_fill_array(c, arr, out);
        return out > 0;
    }
    struct stream_iter it;
    streamid id;
    long long nf;
    stream_iter_start(&it, s, start, &ID_MAX, 0);
    while (stream_iter_next(&it, &id, &nf)) {
        if (!reported) {
            db_written(k, KEV_XGROUP_STATE);
            reported = 1;
        }
        if (streamid_cmp(&id, &cg->last_id) > 0) {
            stream_cg_delivered(s, cg, &id);
            moved = 1;
        }
        reply_array(c, r->min_idle >= 0 ? 4 : 2);
        xreply_id(c, &id);
        xreply_fields(c, &it, nf);
        if (r->min_idle >= 0) {
            reply_int(c, 0);
            reply_int(c, 0);
        }
        if (!r->noack) {
            /* XGROUP SETID may have moved the group back over entries
             * still pending: such a record changes hands, as new. */
            struct stream_nack *n = stream_pel_find(cg, &id);
            if (!n) {
                n = stream_pel_add(cg, cons, &id, now);
            } else {
                stream_pel_assign(cg, n, cons, now, 0);
                n->delivery_count = 1;
            }
            cons->active_time = now;
            prop_xclaim(c, key, r->group, cons->name, cons->nlen, NULL, &id, n->delivery_time, n->delivery_count,
                        &last_before);
            recorded = 1;
        }
        out++;
        if (r->count && out == r->count) break;
    }
    stream_iter_stop(&it);
    if (moved) prop_setid(c, key, r->group, cg);
    reply_fill_array(c, arr, out);
    return recorded;
}

/* One stream's history (an id other than '>'): the consumer's own pending
 * entries after `start`, each delivered again ([id, nil] for an entry no
 * longer in the stream). Redis counts these redeliveries as no write (no
 * dirty, no notification) and does not propagate them, so its replicas'
 * delivery counts drift; here they propagate as the XCLAIM that records
 * them, so a replay keeps the same counts. Returns whether one did. */
static int xrg_history(struct xrg *r, const hk_slice *key, struct stream *s, struct stream_cg *cg,
                       struct stream_consumer *cons, const streamid *start) {
    struct cmd_ctx *c = r->c;
    long long out = 0;
    int recorded = 0;
    void *arr = reply_defer(c);
    for (struct stream_nack *n = stream_cons_seek(cons, start); n && (!r->count || out < r->count);
         n = stream_cons_next(cons, n)) {
        if (reply_entry_id(c, s, &n->id)) {
            stream_pel_assign(cg, n, cons, c->now_ms, 1);
            prop_xclaim(c, key, r->group, cons->name, cons->nlen, NULL, &n->id, n->delivery_time, n->delivery_count,
                        &cg->last_id);
            recorded = 1;
        } else {
            reply_array(c, 2);
            xreply_id(c, &n->id);
            reply_null_array(c);
        }
        out++;
    }
    reply_fill_array(c, arr, out);
    return recorded;
}

/* Whether new entries of key k are another group reader's to take first:
 * one of this group blocked on k before us and a wake-up for them is on
 * its way. A replayed stream never waits on readers. */
static int xrg_deferred(struct xrg *r, const struct keyref *k) {
    struct cmd_ctx *c = r->c;
    if (c->flags & CTX_REPLAY) return 0;
    return wk_tag_busy(k, r->tag, c->cl ? c->cl->id : 0);
}

/* XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [CLAIM min-idle]
 *            [NOACK] STREAMS key... id... */
void cmd_xreadgroup(struct cmd_ctx *c) {
    struct xrg r = {.c = c, .min_idle = -1};
    long long deadline = 0;
    int block = 0, streams_at = 0, n = 0;
    prop_custom(c);
    for (int i = 1; i < c->argc; i++) {
        int more = c->argc - i - 1;
        const hk_slice *o = &c->argv[i];
        if (arg_is(o, "CLAIM") && more) {
            i++;
            if (!arg_ll_or_reply(c, &c->argv[i], &r.min_idle, "ERR min-idle-time is not an integer or out of range"))
                return;
            if (r.min_idle < 0) {
                reply_error(c, "ERR min-idle-time must be a positive integer");
                return;
            }
        } else if (arg_is(o, "BLOCK") && more) {
            i++;
            if (!parse_timeout(c, i, 1, c->now_ms, &deadline)) return;
            block = 1;
        } else if (arg_is(o, "COUNT") && more) {
            i++;
            if (!arg_ll_or_reply(c, &c->argv[i], &r.count, NULL)) return;
            if (r.count < 0) r.count = 0;
        } else if (arg_is(o, "STREAMS") && more) {
            streams_at = i + 1;
            n = c->argc - streams_at;
            if (n % 2) {
                reply_errorf(c,
                             "ERR Unbalanced '%s' list of streams: for each stream key "
                             "an ID or '>' must be "
                             "specified.",
                             c->cmd->fullname);
                return;
            }
            n /= 2;
            break;
        } else if (arg_is(o, "GROUP") && more >= 2) {
            r.group = &c->argv[i + 1];
            r.consumer = &c->argv[i + 2];
            i += 2;
        } else if (arg_is(o, "NOACK")) {
            r.noack = 1;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (!streams_at) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (!r.group) {
        reply_error(c, "ERR Missing GROUP option for XREADGROUP");
        return;
    }
    r.tag = group_tag(r.group);

    /* Every stream's key, group and id first: an error replies before
     * anything is read or changed. '>' is the greatest id. */
    streamid ids_inl[8], *ids = n > 8 ? hk_malloc((size_t)n * sizeof(*ids)) : ids_inl;
    int keys_inl[8], *kidx = n > 8 ? hk_malloc((size_t)n * sizeof(*kidx)) : keys_inl;
    for (int j = 0; j < n; j++) {
        int ka = streams_at + j;
        const hk_slice *key = &c->argv[ka], *a = &c->argv[ka + n];
        kidx[j] = ka;
        struct keyref k;
        int bad;
        struct kv *e = xlookup(c, ka, &k, 0, &bad);
        if (bad) goto done;
        if (!e || !group_of(stream_of(e), r.group)) {
            reply_nogroup_key(c, key, r.group, " in XREADGROUP with GROUP option");
            goto done;
        }
        if (a->len == 1 && (a->ptr[0] == '$' || a->ptr[0] == '+')) {
            reply_errorf(c,
                         "ERR The %c ID is meaningless in the context of XREADGROUP: you want to read the history of "
                         "this consumer by specifying a proper ID, or use the > ID to get new messages. The %c ID "
                         "would just return an empty result set.",
                         a->ptr[0], a->ptr[0]);
            goto done;
        }
        if (a->len == 1 && a->ptr[0] == '>') ids[j] = ID_MAX;
        else if (xid_parse_strict_or_reply(c, a, &ids[j], 0, 0, NULL) < 0) goto done;
    }

    long long served = 0, oldest_time = LLONG_MAX;
    void *top = NULL;
    for (int j = 0; j < n; j++) {
        const hk_slice *key = &c->argv[streams_at + j];
        struct keyref k;
        int bad;
        struct kv *e = xlookup(c, streams_at + j, &k, 0, &bad);
        if (!e) continue;
        struct stream *s = stream_of(e);
        struct stream_cg *cg = group_of(s, r.group);
        streamid gt = ids[j];
        int serve = 0, history = 0, claimable = 0;
        if (r.min_idle >= 0) {
            /* Is the oldest delivery still in the stream idle enough? */
            for (struct stream_nack *p = cg->oldest; p; p = stream_pel_newer(p)) {
                if (!stream_has(s, &p->id)) continue;
                claimable = (uint64_t)c->now_ms - (uint64_t)p->delivery_time >= (uint64_t)r.min_idle;
                if (p->delivery_time < oldest_time) oldest_time = p->delivery_time;
                break;
            }
        }
        if (streamid_cmp(&gt, &ID_MAX) != 0) {
            serve = history = 1;
        } else if (s->length && streamid_cmp(&s->last_id, &cg->last_id) > 0) {
            /* Something was added after the group's position: is it still
             * there (the last live entry, not a deleted one)? */
            streamid top_id;
            stream_last(s, &top_id);
            if (streamid_cmp(&top_id, &cg->last_id) > 0 && !xrg_deferred(&r, &k)) {
                serve = 1;
                gt = cg->last_id;
            }
        }
        struct stream_consumer *cons = stream_consumer_find(cg, r.consumer->ptr, r.consumer->len);
        int created = 0;
        if (!cons) {
            db_written(&k, KEV_XGROUP_CREATECONSUMER);
            cons = stream_consumer_create(cg, r.consumer->ptr, r.consumer->len, c->now_ms);
            /* Redis propagates the creation with NOACK only, and leaves it
             * to the XCLAIMs otherwise; a consumer that got none is
             * propagated below, so a replay knows it too. */
            if (r.noack) prop_createconsumer(c, key, r.group, r.consumer);
            else created = 1;
        }
        cons->seen_time = c->now_ms;
        int claimed_only = 0;
        if (history) {
            /* As in Redis, a history read drops CLAIM for the streams
             * after it too. */
            r.min_idle = -1;
        } else if (!serve && claimable) {
            serve = claimed_only = 1;
        }
        if (!serve) {
            if (created) prop_createconsumer(c, key, r.group, r.consumer);
            continue;
        }
        if (served++ == 0) top = reply_defer(c);
        if (c->resp == 2) reply_array(c, 2);
        reply_bulk(c, key->ptr, key->len);
        streamid start = gt;
        if (streamid_incr(&start) < 0) start = ID_MIN;
        int recorded = history ? xrg_history(&r, key, s, cg, cons, &start)
                               : xrg_deliver(&r, &k, key, s, cg, cons, &start, claimed_only);
        if (created && !recorded) prop_createconsumer(c, key, r.group, r.consumer);
    }
    if (served) {
        if (c->resp == 2) reply_fill_array(c, top, served);
        else reply_fill_map(c, top, served);
        goto done;
    }
    if (block) {
        block_client(c, kidx, n, WK_STREAM, deadline, 0);
        if (!block_is_retry(c) && c->cl && (c->cl->flags & CLIENT_BLOCKED)) {
            for (int j = 0; j < n; j++) {
                struct keyref k;
                key_of(c, kidx[j], &k);
                wk_set_tag(&k, c->cl->id, r.tag);
            }
        }
        /* With CLAIM, time alone may serve it: look again when the oldest
         * delivery (or, with nothing pending, one delivered now) has been
         * idle for min-idle-time. */
        if (r.min_idle >= 0) {
            long long base = oldest_time != LLONG_MAX ? oldest_time : c->now_ms, when;
            if (__builtin_add_overflow(base, r.min_idle, &when)) when = LLONG_MAX;
            block_rerun_at(c, when > c->now_ms ? when : c->now_ms + 1);
        }
        goto done;
    }
    reply_null_array(c);
done:
    if (ids != ids_inl) hk_free(ids);
    if (kidx != keys_inl) hk_free(kidx);
}

/* ---- XACK, XACKDEL
 * ------------------------------------------------------------ */

/* XACK key group id...: how many of the ids were pending in the group. */
void cmd_xack(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct stream_cg *cg = key_group(c, &k, NULL, &bad);
    if (bad) return;
    if (!cg) {
        reply_int(c, 0);
        return;
    }
    long long n = c->argc - 3;
    struct xids ids;
    if (xids_parse_or_reply(c, 3, n, &ids) < 0) return;
    long long acked = 0;
    for (long long j = 0; j < n; j++) {
        struct stream_nack *p = stream_pel_find(cg, &ids.v[j]);
        if (!p) continue;
        /* One write each, as Redis counts them. */
        db_written(&k, KEV_XGROUP_STATE);
        stream_pel_ack(cg, p);
        acked++;
    }
    xids_free(&ids);
    reply_int(c, acked);
}

/* XACKDEL key group [KEEPREF|DELREF|ACKED] IDS numids id...: per id, 1
 * acknowledged and deleted (or already gone from the stream), 2
 * acknowledged but kept because another group still references it
 * (ACKED), -1 not pending in the group. */
void cmd_xackdel(struct cmd_ctx *c) {
    struct keyref k;
    struct stream *s;
    int bad;
    struct stream_cg *cg = key_group(c, &k, &s, &bad);
    if (bad) return;
    struct xdel_args o;
    if (xdel_args_parse_or_reply(c, 3, &o) < 0) return;
    if (!cg) {
        reply_array(c, o.numids);
        for (long long j = 0; j < o.numids; j++) reply_int(c, -1);
        return;
    }
    struct xids ids;
    if (xids_parse_or_reply(c, o.ids_at, o.numids, &ids) < 0) return;
    int deleting = 0;
    reply_array(c, o.numids);
    for (long long j = 0; j < o.numids; j++) {
        const streamid *id = &ids.v[j];
        struct stream_nack *p = stream_pel_find(cg, id);
        if (!p) {
            reply_int(c, -1);
            continue;
        }
        db_written(&k, KEV_XGROUP_STATE);
        stream_pel_ack(cg, p);
        if (o.policy == STREAM_ACKED && !stream_entry_acked(s, id)) {
            reply_int(c, 2);
            continue;
        }
        if (stream_has(s, id)) {
            /* The acknowledgment and the deletion, as XACK and XDEL count
             * them (the deletion's report is raised once). */
            if (!deleting) db_written(&k, KEV_XDEL);
            else db_dirty_add(1);
            deleting = 1;
        }
        /* Acknowledged by every group (ACKED) or not asked: delete as
         * KEEPREF; DELREF drops every group's reference, also to an entry
         * already gone (which counts as deleted: 1 either way). */
        stream_delete_policy(s, id, o.policy == STREAM_DELREF ? STREAM_DELREF : STREAM_KEEPREF);
        reply_int(c, 1);
    }
    xids_free(&ids);
}

/* ---- XPENDING
 * ------------------------------------------------------------------- */

/* XPENDING key group [[IDLE min-idle] start end count [consumer]] */
void cmd_xpending(struct cmd_ctx *c) {
    int summary = c->argc == 3;
    long long count = 0, minidle = 0;
    streamid start = ID_MIN, end = ID_MAX;
    const hk_slice *consname = NULL;
    if (c->argc != 3 && (c->argc < 6 || c->argc > 9)) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (c->argc >= 6) {
        int at = 3;
        if (arg_is(&c->argv[3], "IDLE")) {
            if (!arg_ll_or_reply(c, &c->argv[4], &minidle, NULL)) return;
            if (c->argc < 8) {
                reply_error(c, ERR_SYNTAX);
                return;
            }
            at += 2;
        }
        if (!arg_ll_or_reply(c, &c->argv[at + 2], &count, NULL)) return;
        if (count < 0) count = 0;
        if (xid_parse_range_or_reply(c, &c->argv[at], &c->argv[at + 1], &start, &end) < 0) return;
        if (at + 3 < c->argc) consname = &c->argv[at + 3];
    }
    struct keyref k;
    int bad;
    struct stream_cg *cg = key_group(c, &k, NULL, &bad);
    if (bad) return;
    if (!cg) {
        reply_nogroup_key(c, &c->argv[1], &c->argv[2], "");
        return;
    }
    if (summary) {
        reply_array(c, 4);
        reply_int(c, (long long)cg->pel_count);
        if (!cg->pel_count) {
            reply_null(c);
            reply_null(c);
            reply_null_array(c);
            return;
        }
        struct stream_nack *first = stream_pel_seek(cg, &ID_MIN), *last = stream_pel_last(cg);
        xreply_id(c, &first->id);
        xreply_id(c, &last->id);
        void *h = reply_defer(c);
        long long nc = 0;
        for (size_t i = 0; i < cg->nconsumers; i++) {
            const struct stream_consumer *sc = cg->consumers[i];
            if (!sc->pel_count) continue;
            reply_array(c, 2);
            reply_bulk(c, sc->name, sc->nlen);
            reply_bulk_ll(c, (long long)sc->pel_count);
            nc++;
        }
        reply_fill_array(c, h, nc);
        return;
    }
    struct stream_consumer *cons = NULL;
    if (consname) {
        cons = stream_consumer_find(cg, consname->ptr, consname->len);
        if (!cons) {
            reply_array(c, 0);
            return;
        }
    }
    long long now = c->now_ms, out = 0;
    void *h = reply_defer(c);
    struct stream_nack *p = cons ? stream_cons_seek(cons, &start) : stream_pel_seek(cg, &start);
    for (; count && p && streamid_cmp(&p->id, &end) <= 0;
         p = cons ? stream_cons_next(cons, p) : stream_pel_next(cg, p)) {
        long long idle = now - p->delivery_time;
        if (minidle && idle < minidle) continue;
        out++;
        count--;
        reply_array(c, 4);
        xreply_id(c, &p->id);
        reply_bulk(c, p->consumer->name, p->consumer->nlen);
        reply_int(c, idle < 0 ? 0 : idle);
        reply_int(c, (long long)p->delivery_count);
    }
    reply_fill_array(c, h, out);
}

/* ---- XCLAIM, XAUTOCLAIM
 * ------------------------------------------------------- */

/* The consumer a claim hands entries to, created when missing (*created
 * set): a write Redis notifies as xgroup-createconsumer and leaves to the
 * XCLAIMs to propagate; one that claims nothing is propagated by the
 * caller, so a replay knows it too. */
static struct stream_consumer *claimer(struct cmd_ctx *c, const struct keyref *k, struct stream_cg *cg,
                                       const hk_slice *name, int *created) {
    struct stream_consumer *cons = stream_consumer_find(cg, name->ptr, name->len);
    *created = !cons;
    if (!cons) {
        db_written(k, KEV_XGROUP_CREATECONSUMER);
        cons = stream_consumer_create(cg, name->ptr, name->len, c->now_ms);
    }
    cons->seen_time = c->now_ms;
    return cons;
}

/* XCLAIM key group consumer min-idle-time id... [IDLE ms] [TIME ms]
 *        [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id] */
void cmd_xclaim(struct cmd_ctx *c) {
    struct keyref k;
    struct stream *s;
    int bad;
    struct stream_cg *cg = key_group(c, &k, &s, &bad);
    if (bad) return;
    if (!cg) {
        reply_nogroup_key(c, &c->argv[1], &c->argv[2], "");
        return;
    }
    long long minidle;
    if (!arg_ll_or_reply(c, &c->argv[4], &minidle, "ERR Invalid min-idle-time argument for XCLAIM")) return;
    if (minidle < 0) minidle = 0;
    prop_custom(c);
    /* The ids run up to the first argument that is not one; options
     * follow. */
    int first = 5, j = 5;
    streamid inl[8], *ids = inl;
    size_t cap = 8;
    for (; j < c->argc; j++) {
        streamid id;
        if (streamid_parse(c->argv[j].ptr, c->argv[j].len, &id, 0, 0, NULL) < 0) break;
        size_t at = (size_t)(j - first);
        if (at == cap) ids = grow_inline(ids, inl, &cap, sizeof(*ids));
        ids[at] = id;
    }
    int nids = j - first;
    long long now = c->now_ms, deliverytime = -1, retrycount = -1;
    int force = 0, justid = 0;
    streamid lastid = ID_MIN;
    for (; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        const hk_slice *o = &c->argv[j];
        if (arg_is(o, "FORCE")) {
            force = 1;
        } else if (arg_is(o, "JUSTID")) {
            justid = 1;
        } else if (arg_is(o, "IDLE") && more) {
            long long idle;
            if (!arg_ll_or_reply(c, &c->argv[++j], &idle, "ERR Invalid IDLE option argument for XCLAIM")) goto out;
            if (__builtin_sub_overflow(now, idle, &deliverytime)) deliverytime = now;
        } else if (arg_is(o, "TIME") && more) {
            if (!arg_ll_or_reply(c, &c->argv[++j], &deliverytime, "ERR Invalid TIME option argument for XCLAIM"))
                goto out;
        } else if (arg_is(o, "RETRYCOUNT") && more) {
            if (!arg_ll_or_reply(c, &c->argv[++j], &retrycount, "ERR Invalid RETRYCOUNT option argument for XCLAIM"))
                goto out;
        } else if (arg_is(o, "LASTID") && more) {
            if (xid_parse_strict_or_reply(c, &c->argv[++j], &lastid, 0, 0, NULL) < 0) goto out;
        } else {
            reply_errorf(c, "ERR Unrecognized XCLAIM option '%.*s'", (int)o->len, o->ptr);
            goto out;
        }
    }
    int setid = 0;
    if (streamid_cmp(&lastid, &cg->last_id) > 0) {
        db_written(&k, KEV_XGROUP_STATE);
        cg->last_id = lastid;
        setid = 1;
    }
    /* A bogus time (negative, or ahead of ours) means now: refusing it
     * would punish a client whose clock is a little ahead. */
    if (deliverytime < 0 || deliverytime > now) deliverytime = now;
    int created;
    struct stream_consumer *cons = claimer(c, &k, cg, &c->argv[3], &created);
    void *h = reply_defer(c);
    long long out = 0;
    for (int i = 0; i < nids; i++) {
        const streamid *id = &ids[i];
        const hk_slice *idtext = &c->argv[first + i];
        struct stream_nack *p = stream_pel_find(cg, id);
        if (!stream_has(s, id)) {
            /* Gone from the stream: its pending record goes too, on the
             * replicas as well (an XCLAIM of a missing entry drops it). */
            if (p) {
                prop_xclaim(c, &c->argv[1], &c->argv[2], p->consumer->name, p->consumer->nlen, idtext, id,
                            p->delivery_time, p->delivery_count, &cg->last_id);
                setid = 0;
                db_written(&k, KEV_XGROUP_STATE);
                stream_pel_ack(cg, p);
            }
            continue;
        }
        if (!p) {
            if (!force) continue;
            /* FORCE: a record for an entry nobody has pending; the idle
             * test does not apply to it. */
            db_written(&k, KEV_XGROUP_STATE);
            p = stream_pel_add(cg, cons, id, now);
        } else {
            if (minidle && now - p->delivery_time < minidle) continue;
            db_written(&k, KEV_XGROUP_STATE);
        }
        stream_pel_assign(cg, p, cons, deliverytime, 0);
        if (retrycount >= 0) p->delivery_count = (uint64_t)retrycount;
        else if (!justid) p->delivery_count++;
        if (justid) xreply_id(c, id);
        else reply_entry_id(c, s, id);
        out++;
        cons->active_time = now;
        prop_xclaim(c, &c->argv[1], &c->argv[2], cons->name, cons->nlen, idtext, id, p->delivery_time,
                    p->delivery_count, &cg->last_id);
        setid = 0;
    }
    if (setid) prop_setid(c, &c->argv[1], &c->argv[2], cg);
    if (created && !out) prop_createconsumer(c, &c->argv[1], &c->argv[2], &c->argv[3]);
    reply_fill_array(c, h, out);
out:
    if (ids != inl) hk_free(ids);
}

/* XAUTOCLAIM key group consumer min-idle-time start [COUNT n] [JUSTID]:
 * [next start (0-0 at the end), claimed entries (or ids), ids no longer
 * in the stream whose pending records were dropped]. The group's PEL is
 * walked in id order from start, at most COUNT*10 records: the cursor
 * contract is in id order, and the walk is bounded by COUNT already. */
void cmd_xautoclaim(struct cmd_ctx *c) {
    long long minidle, count = 100;
    int justid = 0;
    streamid start, end;
    if (!arg_ll_or_reply(c, &c->argv[4], &minidle, "ERR Invalid min-idle-time argument for XAUTOCLAIM")) return;
    if (minidle < 0) minidle = 0;
    if (xid_parse_range_or_reply(c, &c->argv[5], &c->argv[5], &start, &end) < 0) return;
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(&c->argv[j], "COUNT") && more) {
            /* Redis's bound: COUNT * 10 attempts and COUNT ids must fit. */
            const long long max_count = LLONG_MAX / 16;
            if (!hk_str2ll(c->argv[j + 1].ptr, c->argv[j + 1].len, &count) || count < 1 || count > max_count) {
                reply_error(c, "ERR COUNT must be > 0");
                return;
            }
            j++;
        } else if (arg_is(&c->argv[j], "JUSTID")) {
            justid = 1;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    struct keyref k;
    struct stream *s;
    int bad;
    struct stream_cg *cg = key_group(c, &k, &s, &bad);
    if (bad) return;
    if (!cg) {
        reply_nogroup_key(c, &c->argv[1], &c->argv[2], "");
        return;
    }
    prop_custom(c);
    int created;
    struct stream_consumer *cons = claimer(c, &k, cg, &c->argv[3], &created);
    long long now = c->now_ms, attempts = count * 10;
    /* Claimed ids (first), dropped ids (from the end): at most COUNT in
     * all. The reply starts with the cursor, known only after the walk. */
    struct idvec v = {0};
    size_t nclaimed = 0;
    struct stream_nack *p = stream_pel_seek(cg, &start);
    while (attempts-- && count && p) {
        struct stream_nack *next = stream_pel_next(cg, p);
        streamid id = p->id;
        if (!stream_has(s, &id)) {
            prop_xclaim(c, &c->argv[1], &c->argv[2], p->consumer->name, p->consumer->nlen, NULL, &id, p->delivery_time,
                        p->delivery_count, &cg->last_id);
            db_written(&k, KEV_XGROUP_STATE);
            stream_pel_ack(cg, p);
            idvec_push(&v, &id, 1);
            count--;
            p = next;
            continue;
        }
        if (minidle && now - p->delivery_time < minidle) {
            p = next;
            continue;
        }
        db_written(&k, KEV_XGROUP_STATE);
        stream_pel_assign(cg, p, cons, now, !justid);
        idvec_push(&v, &id, 0);
        nclaimed++;
        count--;
        cons->active_time = now;
        prop_xclaim(c, &c->argv[1], &c->argv[2], cons->name, cons->nlen, NULL, &id, p->delivery_time, p->delivery_count,
                    &cg->last_id);
        p = next;
    }
    if (created && !nclaimed) prop_createconsumer(c, &c->argv[1], &c->argv[2], &c->argv[3]);
    reply_array(c, 3);
    xreply_id(c, p ? &p->id : &ID_MIN);
    reply_array(c, (long long)nclaimed);
    for (size_t i = 0; i < v.n; i++) {
        if (v.gone[i]) continue;
        /* Every claimed entry is in the stream: claiming changes no entry. */
        if (justid) xreply_id(c, &v.ids[i]);
        else reply_entry_id(c, s, &v.ids[i]);
    }
    reply_array(c, (long long)(v.n - nclaimed));
    for (size_t i = 0; i < v.n; i++)
        if (v.gone[i]) xreply_id(c, &v.ids[i]);
    idvec_free(&v);
}

/* ---- XINFO
 * ------------------------------------------------------------------------ */

/* The master id of node i as Redis keys its radix tree: 16 bytes, ms then
 * seq, big-endian. */
static void node_key(const struct stream *s, size_t i, unsigned char key[16]) {
    streamid m = stream_node_master(s, i);
    for (int b = 0; b < 8; b++) {
        key[b] = (unsigned char)(m.ms >> (56 - 8 * b));
        key[8 + b] = (unsigned char)(m.seq >> (56 - 8 * b));
    }
}

/* Nodes of the radix tree Redis would hold for keys[lo..hi) (sorted,
 * distinct, 16 bytes, all sharing their first d bytes), the subtree at
 * depth d: one node here, then a compressed run to where the keys part,
 * a branch with a subtree per next byte, or a leaf. */
static long long rax_nodes(const unsigned char (*keys)[16], size_t lo, size_t hi, int d) {
    if (hi - lo <= 1 && d == 16) return 1;
    if (hi == lo) return 1;
    if (hi - lo == 1) return d == 16 ? 1 : 2;
    /* Shared bytes of the first and last key: shared by all of them. */
    int l = d;
    while (l < 16 && keys[lo][l] == keys[hi - 1][l]) l++;
    if (l > d) return 1 + rax_nodes(keys, lo, hi, l);
    long long n = 1;
    for (size_t i = lo; i < hi;) {
        size_t j = i + 1;
        while (j < hi && keys[j][d] == keys[i][d]) j++;
        n += rax_nodes(keys, i, j, d + 1);
        i = j;
    }
    return n;
}

/* XINFO STREAM's radix-tree-nodes: the node count of the radix tree Redis
 * keys its listpacks by, computed from the nodes' master ids. */
static long long xinfo_rax_nodes(const struct stream *s) {
    size_t n = stream_node_count(s);
    if (!n) return 1;
    unsigned char(*keys)[16] = hk_malloc(n * 16);
    for (size_t i = 0; i < n; i++) node_key(s, i, keys[i]);
    long long r = rax_nodes((const unsigned char(*)[16])keys, 0, n, 0);
    hk_free(keys);
    return r;
}

/* The stream at argv[2] for an XINFO subcommand: "ERR no such key" when
 * it is missing. */
static struct stream *xinfo_stream_or_reply(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct kv *e = xlookup(c, 2, &k, 0, &bad);
    if (bad) return NULL;
    if (!e) {
        reply_error(c, ERR_NO_KEY);
        return NULL;
    }
    return stream_of(e);
}

/* A group's position as both XINFO STREAM FULL and XINFO GROUPS show it:
 * last-delivered-id, entries-read and lag (nil where unknown). */
static void reply_group_progress(struct cmd_ctx *c, const struct stream *s, const struct stream_cg *cg) {
    reply_bulk_cstr(c, "last-delivered-id");
    xreply_id(c, &cg->last_id);
    reply_bulk_cstr(c, "entries-read");
    if (cg->entries_read != STREAM_ENTRIES_READ_INVALID) reply_int(c, cg->entries_read);
    else reply_null(c);
    reply_bulk_cstr(c, "lag");
    int valid;
    long long lag = stream_cg_lag(s, cg, &valid);
    if (valid) reply_int(c, lag);
    else reply_null(c);
}

/* XINFO STREAM key [FULL [COUNT n]] */
void cmd_xinfo_stream(struct cmd_ctx *c) {
    struct stream *s = xinfo_stream_or_reply(c);
    if (!s) return;
    int full = 0, optc = c->argc - 3;
    long long count = 10;
    if (optc) {
        if ((optc != 1 && optc != 3) || !arg_is(&c->argv[3], "FULL") || (optc == 3 && !arg_is(&c->argv[4], "COUNT"))) {
            reply_subcommand_error(c);
            return;
        }
        if (optc == 3) {
            if (!arg_ll_or_reply(c, &c->argv[5], &count, NULL)) return;
            if (count < 0) count = 10;
        }
        full = 1;
    }
    reply_map(c, full ? 9 : 10);
    reply_bulk_cstr(c, "length");
    reply_int(c, (long long)s->length);
    reply_bulk_cstr(c, "radix-tree-keys");
    reply_int(c, (long long)stream_node_count(s));
    reply_bulk_cstr(c, "radix-tree-nodes");
    reply_int(c, xinfo_rax_nodes(s));
    reply_bulk_cstr(c, "last-generated-id");
    xreply_id(c, &s->last_id);
    reply_bulk_cstr(c, "max-deleted-entry-id");
    xreply_id(c, &s->max_deleted_id);
    reply_bulk_cstr(c, "entries-added");
    reply_int(c, (long long)s->entries_added);
    reply_bulk_cstr(c, "recorded-first-entry-id");
    xreply_id(c, &s->first_id);
    if (!full) {
        reply_bulk_cstr(c, "groups");
        reply_int(c, (long long)s->ngroups);
        streamid id;
        reply_bulk_cstr(c, "first-entry");
        if (!stream_first(s, &id) || !reply_entry_id(c, s, &id)) reply_null(c);
        reply_bulk_cstr(c, "last-entry");
        if (!stream_last(s, &id) || !reply_entry_id(c, s, &id)) reply_null(c);
        return;
    }
    reply_bulk_cstr(c, "entries");
    xreply_range(c, s, &ID_MIN, &ID_MAX, count, 0);
    reply_bulk_cstr(c, "groups");
    reply_array(c, (long long)s->ngroups);
    for (size_t g = 0; g < s->ngroups; g++) {
        const struct stream_cg *cg = s->groups[g];
        reply_map(c, 7);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, cg->name, cg->nlen);
        reply_group_progress(c, s, cg);
        reply_bulk_cstr(c, "pel-count");
        reply_int(c, (long long)cg->pel_count);
        reply_bulk_cstr(c, "pending");
        void *h = reply_defer(c);
        long long np = 0;
        for (struct stream_nack *p = stream_pel_seek(cg, &ID_MIN); p && (!count || np < count);
             p = stream_pel_next(cg, p), np++) {
            reply_array(c, 4);
            xreply_id(c, &p->id);
            reply_bulk(c, p->consumer->name, p->consumer->nlen);
            reply_int(c, p->delivery_time);
            reply_int(c, (long long)p->delivery_count);
        }
        reply_fill_array(c, h, np);
        reply_bulk_cstr(c, "consumers");
        reply_array(c, (long long)cg->nconsumers);
        for (size_t i = 0; i < cg->nconsumers; i++) {
            const struct stream_consumer *sc = cg->consumers[i];
            reply_map(c, 5);
            reply_bulk_cstr(c, "name");
            reply_bulk(c, sc->name, sc->nlen);
            reply_bulk_cstr(c, "seen-time");
            reply_int(c, sc->seen_time);
            reply_bulk_cstr(c, "active-time");
            reply_int(c, sc->active_time);
            reply_bulk_cstr(c, "pel-count");
            reply_int(c, (long long)sc->pel_count);
            reply_bulk_cstr(c, "pending");
            void *ch = reply_defer(c);
            long long cp = 0;
            for (struct stream_nack *p = stream_cons_seek(sc, &ID_MIN); p && (!count || cp < count);
                 p = stream_cons_next(sc, p), cp++) {
                reply_array(c, 3);
                xreply_id(c, &p->id);
                reply_int(c, p->delivery_time);
                reply_int(c, (long long)p->delivery_count);
            }
            reply_fill_array(c, ch, cp);
        }
    }
}

/* XINFO GROUPS key */
void cmd_xinfo_groups(struct cmd_ctx *c) {
    struct stream *s = xinfo_stream_or_reply(c);
    if (!s) return;
    reply_array(c, (long long)s->ngroups);
    for (size_t g = 0; g < s->ngroups; g++) {
        const struct stream_cg *cg = s->groups[g];
        reply_map(c, 6);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, cg->name, cg->nlen);
        reply_bulk_cstr(c, "consumers");
        reply_int(c, (long long)cg->nconsumers);
        reply_bulk_cstr(c, "pending");
        reply_int(c, (long long)cg->pel_count);
        reply_group_progress(c, s, cg);
    }
}

/* XINFO CONSUMERS key group: idle is the time since the consumer's last
 * attempt, inactive since its last successful one (-1: never). */
void cmd_xinfo_consumers(struct cmd_ctx *c) {
    struct stream *s = xinfo_stream_or_reply(c);
    if (!s) return;
    struct stream_cg *cg = group_of(s, &c->argv[3]);
    if (!cg) {
        reply_nogroup_name(c, &c->argv[2], &c->argv[3]);
        return;
    }
    long long now = c->now_ms;
    reply_array(c, (long long)cg->nconsumers);
    for (size_t i = 0; i < cg->nconsumers; i++) {
        const struct stream_consumer *sc = cg->consumers[i];
        long long idle = now - sc->seen_time;
        if (idle < 0) idle = 0;
        long long inactive = sc->active_time != -1 ? now - sc->active_time : -1;
        reply_map(c, 4);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, sc->name, sc->nlen);
        reply_bulk_cstr(c, "pending");
        reply_int(c, (long long)sc->pel_count);
        reply_bulk_cstr(c, "idle");
        reply_int(c, idle);
        reply_bulk_cstr(c, "inactive");
        reply_int(c, inactive);
    }
}

void cmd_xinfo_help(struct cmd_ctx *c) {
    static const char *const lines[] = {
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        NULL,
    };
    reply_help(c, "XINFO", lines);
}
