/* stream.c - the stream commands that do not involve consumer groups:
 * XADD, XRANGE, XREVRANGE, XLEN, XDEL, XDELEX, XTRIM, XREAD (with BLOCK)
 * and XSETID, with Redis 8.4's arguments, replies and errors.
 *
 * Handlers validate their arguments, look the key up, report the write
 * (db_written / db_put) before changing the value through the stream
 * type (src/types/stream.h), and choose what propagates where replaying
 * their argv would not reproduce the effect: a generated id, or an
 * approximate trim made exact. The consumer-group commands are in
 * stream_group.c; what both share is stream_util.c. */
#include "../core/alloc.h"
#include "../core/util.h"
#include "../server/blocking.h"
#include "../server/creply.h"
#include "cmds.h"
#include "cmdutil.h"
#include "stream_util.h"

#include <string.h>

/* ---- propagation ---------------------------------------------------------- */

/* Propagate this command's argv with the generated id at idpos (-1: none)
 * and, for an approximate trim, '~' turned into '=' and the threshold into
 * what the stream now holds (its length, or its first entry's id), as
 * Redis rewrites them, so a replay trims exactly what this run did. */
static void prop_stream_rewrite(struct cmd_ctx *c, int idpos, const streamid *id, const struct xtrim_args *o,
                                struct stream *s) {
    if (!prop_on(c)) return;
    int approx = o && o->t.strategy && o->t.approx;
    if (idpos < 0 && !approx) return;
    char idbuf[STREAMID_STRLEN], thbuf[STREAMID_STRLEN];
    size_t idlen = idpos >= 0 ? streamid_fmt(id, idbuf) : 0, thlen = 0;
    if (approx) {
        if (o->t.strategy == STREAM_TRIM_MAXLEN) {
            thlen = (size_t)hk_ull2str(thbuf, s->length);
        } else {
            streamid first = {UINT64_MAX, UINT64_MAX};
            if (s->length) stream_first(s, &first);
            thlen = streamid_fmt(&first, thbuf);
        }
    }
    prop_custom(c);
    prop_begin(c, c->argc);
    for (int i = 0; i < c->argc; i++) {
        if (i == idpos) prop_arg(c, idbuf, idlen);
        else if (approx && i == o->approx_arg) prop_arg(c, "=", 1);
        else if (approx && i == o->threshold_arg) prop_arg(c, thbuf, thlen);
        else prop_arg_slice(c, &c->argv[i]);
    }
}

/* Trim key k's stream s by t, reporting KEV_XTRIM immediately before the
 * first entry goes (not at all when none does). Returns the entries
 * removed; the report counted one change, the caller settles the rest. */
static long long trim_reported(const struct keyref *k, struct stream *s, const struct stream_trim *t) {
    struct key_write kw;
    key_write_init(&kw, k, KEV_XTRIM, 0);
    return stream_trim(s, t, &kw.pc);
}

/* ---- XADD ----------------------------------------------------------------- */

void cmd_xadd(struct cmd_ctx *c) {
    struct xtrim_args o;
    xtrim_args_init(&o);
    int nomkstream = 0, id_given = 0, seq_given = 1;
    streamid id = {0, 0};
    int i = 2;
    while (i < c->argc) {
        const hk_slice *a = &c->argv[i];
        if (a->len == 1 && a->ptr[0] == '*') break;
        int r = xtrim_parse_one(c, &i, &o);
        if (r < 0) return;
        if (r > 0) continue;
        if (arg_is(a, "NOMKSTREAM")) {
            nomkstream = 1;
            i++;
            continue;
        }
        if (xid_parse_strict_or_reply(c, a, &id, 0, 1, &seq_given) < 0) return;
        id_given = 1;
        break;
    }
    if (xtrim_args_check(c, &o, 0) < 0) return;
    int idpos = i, fpos = i + 1;
    if (c->argc - fpos < 2 || (c->argc - fpos) % 2) {
        reply_arity(c);
        return;
    }
    if (id_given && seq_given && streamid_is_zero(&id)) {
        reply_error(c, XERR_ID_ZERO);
        return;
    }

    struct keyref k;
    int bad;
    struct kv *e = xlookup(c, 1, &k, 1, &bad);
    if (bad) return;
    if (!e && nomkstream) {
        reply_null(c);
        return;
    }
    struct stream *s = e ? stream_of(e) : NULL;
    streamid last = s ? s->last_id : (streamid){0, 0};
    if (last.ms == UINT64_MAX && last.seq == UINT64_MAX) {
        reply_error(c, XERR_ID_EXHAUSTED);
        return;
    }
    /* The id this entry gets, checked before anything changes. */
    streamid nid;
    if (!id_given) {
        if ((uint64_t)c->now_ms > last.ms) {
            nid.ms = (uint64_t)c->now_ms;
            nid.seq = 0;
        } else {
            /* last is not the greatest id (checked above). */
            nid = last;
            streamid_incr(&nid);
        }
    } else if (!seq_given && id.ms == last.ms) {
        if (last.seq == UINT64_MAX) {
            reply_error(c, XERR_ID_SMALL);
            return;
        }
        nid = last;
        nid.seq++;
    } else {
        nid = id;
    }
    if (streamid_cmp(&nid, &last) <= 0) {
        reply_error(c, XERR_ID_SMALL);
        return;
    }

    size_t nf = (size_t)(c->argc - fpos) / 2;
    struct stream_field stackf[16], *fv = nf > 16 ? hk_malloc(nf * sizeof(*fv)) : stackf;
    for (size_t j = 0; j < nf; j++) {
        const hk_slice *f = &c->argv[fpos + 2 * (int)j], *v = f + 1;
        fv[j] = (struct stream_field){f->ptr, v->ptr, f->len, v->len};
    }
    if (!e) {
        e = db_put(&k, stream_new_entry(k.key, k.klen), KEV_XADD);
        s = stream_of(e);
    } else {
        db_written(&k, KEV_XADD);
    }
    stream_append(s, &nid, fv, nf);
    if (fv != stackf) hk_free(fv);
    xreply_id(c, &nid);

    /* One change, whatever the trimming removed (as Redis counts it). */
    if (o.t.strategy && trim_reported(&k, s, &o.t)) db_dirty_add(-1);
    int rewrite_id = !id_given || !seq_given;
    if (rewrite_id || (o.t.strategy && o.t.approx)) prop_stream_rewrite(c, rewrite_id ? idpos : -1, &nid, &o, s);
}

/* ---- XRANGE / XREVRANGE --------------------------------------------------- */

static void xrange_generic(struct cmd_ctx *c, int rev) {
    streamid start, end;
    if (xid_parse_range_or_reply(c, &c->argv[rev ? 3 : 2], &c->argv[rev ? 2 : 3], &start, &end) < 0) return;
    long long count = -1;
    for (int j = 4; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "COUNT") && j + 1 < c->argc) {
            if (!arg_ll_or_reply(c, &c->argv[j + 1], &count, NULL)) return;
            if (count < 0) count = 0;
            j++;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    struct keyref k;
    int bad;
    struct kv *e = xlookup(c, 1, &k, 0, &bad);
    if (bad) return;
    if (!e) {
        reply_array(c, 0);
        return;
    }
    if (count == 0) {
        reply_null_array(c);
        return;
    }
    xreply_range(c, stream_of(e), &start, &end, count, rev);
}

void cmd_xrange(struct cmd_ctx *c) { xrange_generic(c, 0); }
void cmd_xrevrange(struct cmd_ctx *c) { xrange_generic(c, 1); }

/* ---- XLEN ----------------------------------------------------------------- */

void cmd_xlen(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct kv *e = xlookup(c, 1, &k, 0, &bad);
    if (bad) return;
    reply_int(c, e ? (long long)stream_of(e)->length : 0);
}

/* ---- XDEL / XDELEX -------------------------------------------------------- */

void cmd_xdel(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct kv *e = xlookup(c, 1, &k, 1, &bad);
    if (bad) return;
    if (!e) {
        reply_int(c, 0);
        return;
    }
    int n = c->argc - 2;
    struct xids ids;
    if (xids_parse_or_reply(c, 2, n, &ids) < 0) return;
    struct stream *s = stream_of(e);
    long long deleted = 0;
    for (int j = 0; j < n; j++) {
        if (!stream_has(s, &ids.v[j])) continue;
        if (!deleted) db_written(&k, KEV_XDEL);
        deleted += stream_delete(s, &ids.v[j]);
    }
    /* A change per entry deleted; the report counted the first. */
    if (deleted > 1) db_dirty_add(deleted - 1);
    xids_free(&ids);
    reply_int(c, deleted);
}

/* Whether some group of s holds id pending (what DELREF would clean up
 * for an entry that is gone). */
static int pel_references(const struct stream *s, const streamid *id) {
    for (size_t g = 0; g < s->ngroups; g++)
        if (stream_pel_find(s->groups[g], id)) return 1;
    return 0;
}

void cmd_xdelex(struct cmd_ctx *c) {
    struct xdel_args o;
    if (xdel_args_parse_or_reply(c, 2, &o) < 0) return;
    int n = (int)o.numids, policy = o.policy;
    struct xids ids;
    if (xids_parse_or_reply(c, o.ids_at, n, &ids) < 0) return;

    struct keyref k;
    int bad;
    struct kv *e = xlookup(c, 1, &k, 1, &bad);
    if (bad) {
        xids_free(&ids);
        return;
    }
    reply_array(c, n);
    if (!e) {
        for (int j = 0; j < n; j++) reply_int(c, -1);
        xids_free(&ids);
        return;
    }
    struct stream *s = stream_of(e);
    int reported = 0, state_reported = 0;
    long long deleted = 0;
    for (int j = 0; j < n; j++) {
        const streamid *id = &ids.v[j];
        int live = stream_has(s, id);
        if (live && !reported && (policy != STREAM_ACKED || stream_entry_acked(s, id))) {
            db_written(&k, KEV_XDEL);
            reported = 1;
        } else if (!live && policy == STREAM_DELREF && !reported && !state_reported && pel_references(s, id)) {
            /* Only group bookkeeping changes: a write without an event. */
            db_written(&k, KEV_XGROUP_STATE);
            state_reported = 1;
        }
        int r = stream_delete_policy(s, id, policy);
        deleted += live && r == 1;
        reply_int(c, r);
    }
    /* As XDEL: a change per entry deleted (the report counted one). */
    if (deleted > 1) db_dirty_add(deleted - 1);
    xids_free(&ids);
}

/* ---- XTRIM ---------------------------------------------------------------- */

void cmd_xtrim(struct cmd_ctx *c) {
    struct xtrim_args o;
    xtrim_args_init(&o);
    for (int i = 2; i < c->argc;) {
        int r = xtrim_parse_one(c, &i, &o);
        if (r < 0) return;
        if (r == 0) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (xtrim_args_check(c, &o, 1) < 0) return;
    struct keyref k;
    int bad;
    struct kv *e = xlookup(c, 1, &k, 1, &bad);
    if (bad) return;
    if (!e) {
        reply_int(c, 0);
        return;
    }
    struct stream *s = stream_of(e);
    long long removed = trim_reported(&k, s, &o.t);
    /* A change per entry removed. */
    if (removed > 1) db_dirty_add(removed - 1);
    if (removed && o.t.approx) prop_stream_rewrite(c, -1, NULL, &o, s);
    reply_int(c, removed);
}

/* ---- XSETID --------------------------------------------------------------- */

void cmd_xsetid(struct cmd_ctx *c) {
    streamid id, maxdel = {0, 0};
    long long added = -1;
    int maxdel_given = 0;
    if (xid_parse_strict_or_reply(c, &c->argv[2], &id, 0, 0, NULL) < 0) return;
    for (int i = 3; i < c->argc; i += 2) {
        const hk_slice *a = &c->argv[i];
        int more = c->argc - 1 - i;
        if (more && arg_is(a, "ENTRIESADDED")) {
            if (!arg_ll_or_reply(c, &c->argv[i + 1], &added, NULL)) return;
            if (added < 0) {
                reply_error(c, "ERR entries_added must be positive");
                return;
            }
        } else if (more && arg_is(a, "MAXDELETEDID")) {
            if (xid_parse_strict_or_reply(c, &c->argv[i + 1], &maxdel, 0, 0, NULL) < 0) return;
            maxdel_given = 1;
            if (streamid_cmp(&id, &maxdel) < 0) {
                reply_error(c, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return;
            }
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    struct keyref k;
    int bad;
    struct kv *e = xlookup(c, 1, &k, 1, &bad);
    if (bad) return;
    if (!e) {
        reply_error(c, ERR_NO_KEY);
        return;
    }
    struct stream *s = stream_of(e);
    /* A MAXDELETEDID given replaces the current one, checked above. */
    if (!maxdel_given && streamid_cmp(&id, &s->max_deleted_id) < 0) {
        reply_error(c, "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id");
        return;
    }
    if (s->length > 0) {
        streamid top;
        stream_last(s, &top);
        if (streamid_cmp(&id, &top) < 0) {
            reply_error(c, "ERR The ID specified in XSETID is smaller than the target stream top item");
            return;
        }
        if (added != -1 && s->length > (uint64_t)added) {
            reply_error(c, "ERR The entries_added specified in XSETID is smaller than the target stream length");
            return;
        }
    }
    db_written(&k, KEV_XSETID);
    s->last_id = id;
    if (added != -1) s->entries_added = (uint64_t)added;
    if (maxdel_given && !streamid_is_zero(&maxdel)) s->max_deleted_id = maxdel;
    reply_ok(c);
}

/* ---- XREAD ---------------------------------------------------------------- */

int xread_getkeys(const hk_slice *argv, int argc, int *keys, int max) {
    int pos = -1;
    for (int i = 1; i < argc; i++) {
        const hk_slice *a = &argv[i];
        if (arg_is(a, "BLOCK") || arg_is(a, "COUNT") || arg_is(a, "CLAIM")) {
            i++;
        } else if (arg_is(a, "GROUP")) {
            i += 2;
        } else if (arg_is(a, "NOACK")) {
            continue;
        } else if (arg_is(a, "STREAMS")) {
            pos = i;
            break;
        } else {
            break;
        }
    }
    if (pos < 0) return 0;
    int num = argc - pos - 1;
    if (num == 0 || num % 2) return 0;
    num /= 2;
    if (num > max) num = max;
    for (int j = 0; j < num; j++) keys[j] = pos + 1 + j;
    return num;
}

/* Block on the streams at argv[first..first+n) with '$' replaced by the
 * ids it stood for now (ids[]), since the re-run reads the copy of argv
 * taken here and must wait for entries after those, not after whatever
 * is last when it runs. */
static void xread_block(struct cmd_ctx *c, int first, int n, const streamid *ids, long long deadline) {
    hk_slice *saved = c->argv;
    hk_slice stackv[32], *argv = c->argc > 32 ? hk_malloc((size_t)c->argc * sizeof(*argv)) : stackv;
    char stackb[8][STREAMID_STRLEN], (*bufs)[STREAMID_STRLEN] = n > 8 ? hk_malloc((size_t)n * STREAMID_STRLEN) : stackb;
    int stacki[32], *idx = n > 32 ? hk_malloc((size_t)n * sizeof(int)) : stacki;
    memcpy(argv, saved, (size_t)c->argc * sizeof(*argv));
    for (int j = 0; j < n; j++) {
        idx[j] = first + j;
        hk_slice *a = &argv[first + n + j];
        if (a->len == 1 && a->ptr[0] == '$') {
            a->len = streamid_fmt(&ids[j], bufs[j]);
            a->ptr = bufs[j];
        }
    }
    c->argv = argv;
    block_client(c, idx, n, WK_STREAM, deadline, 0);
    c->argv = saved;
    if (argv != stackv) hk_free(argv);
    if (bufs != stackb) hk_free(bufs);
    if (idx != stacki) hk_free(idx);
}

#define XERR_GROUP_ONLY "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
#define XERR_NOACK_ONLY "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
#define XERR_GT_ONLY                                                                                                  \
    "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."

void cmd_xread(struct cmd_ctx *c) {
    long long count = 0, deadline = 0;
    int block = 0, first = 0, n = 0;
    for (int i = 1; i < c->argc; i++) {
        const hk_slice *a = &c->argv[i];
        int more = c->argc - 1 - i;
        if (more && arg_is(a, "BLOCK")) {
            if (c->frozen_us) {
                reply_errorf(c, "ERR %.*s command is not allowed with BLOCK option from scripts",
                             (int)c->argv[0].len, c->argv[0].ptr);
                return;
            }
            i++;
            if (!parse_timeout(c, i, 1, c->now_ms, &deadline)) return;
            block = 1;
        } else if (more && arg_is(a, "COUNT")) {
            i++;
            if (!arg_ll_or_reply(c, &c->argv[i], &count, NULL)) return;
            if (count < 0) count = 0;
        } else if (more && arg_is(a, "STREAMS")) {
            first = i + 1;
            n = c->argc - first;
            if (n % 2) {
                reply_error(c, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
                               "specified.");
                return;
            }
            n /= 2;
            break;
        } else if (more >= 2 && arg_is(a, "GROUP")) {
            reply_error(c, XERR_GROUP_ONLY);
            return;
        } else if (arg_is(a, "NOACK")) {
            reply_error(c, XERR_NOACK_ONLY);
            return;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (!first) {
        reply_error(c, ERR_SYNTAX);
        return;
    }

    streamid stackid[16], *ids = n > 16 ? hk_malloc((size_t)n * sizeof(*ids)) : stackid;
    struct stream *stacks[16], **ss = n > 16 ? hk_malloc((size_t)n * sizeof(*ss)) : stacks;
    int retry = block_is_retry(c);
    for (int j = 0; j < n; j++) {
        struct keyref k;
        key_of(c, first + j, &k);
        struct kv *e = lookup_read(c, &k);
        if (e && kv_type(e) != OBJ_STREAM) {
            /* A re-run waits on: the key may turn into a stream again. */
            if (!retry) {
                reply_error(c, ERR_WRONGTYPE);
                goto done;
            }
            e = NULL;
        }
        struct stream *s = ss[j] = e ? stream_of(e) : NULL;
        const hk_slice *a = &c->argv[first + n + j];
        if (a->len == 1 && a->ptr[0] == '$') {
            ids[j] = s ? s->last_id : (streamid){0, 0};
        } else if (a->len == 1 && a->ptr[0] == '+') {
            /* The last entry: everything after the id just before it. */
            ids[j] = (streamid){0, 0};
            if (s) {
                if (stream_last(s, &ids[j])) streamid_decr(&ids[j]);
                else ids[j] = s->last_id;
            }
        } else if (a->len == 1 && a->ptr[0] == '>') {
            reply_error(c, XERR_GT_ONLY);
            goto done;
        } else if (xid_parse_strict_or_reply(c, a, &ids[j], 0, 0, NULL) < 0) {
            goto done;
        }
    }

    void *h = NULL;
    long long served = 0;
    for (int j = 0; j < n; j++) {
        struct stream *s = ss[j];
        streamid top;
        if (!s || !s->length || !stream_last(s, &top) || streamid_cmp(&top, &ids[j]) <= 0) continue;
        if (!served++) h = reply_defer(c);
        streamid start = ids[j], end = {UINT64_MAX, UINT64_MAX};
        streamid_incr(&start);
        if (c->resp < 3) reply_array(c, 2);
        reply_bulk(c, c->argv[first + j].ptr, c->argv[first + j].len);
        xreply_range(c, s, &start, &end, count, 0);
    }
    if (served) {
        if (c->resp >= 3) reply_fill_map(c, h, served);
        else reply_fill_array(c, h, served);
    } else if (block) {
        xread_block(c, first, n, ids, deadline);
    } else {
        reply_null_array(c);
    }
done:
    if (ids != stackid) hk_free(ids);
    if (ss != stacks) hk_free(ss);
}
