/* stream_util.c - argument readers and reply writers shared by the stream
 * command handlers (stream.c, stream_group.c). It reads ids (through the
 * type's streamid_parse), the trim options and the IDS options with
 * Redis's exact error texts, and writes ids and entries in Redis's reply
 * shapes; it never changes a stream. */
#include "stream_util.h"

#include "../core/alloc.h"
#include "../core/util.h"
#include "../server/creply.h"
#include "cmdutil.h"

#include <string.h>

/* An id argument: strict refuses "-" and "+"; with seq_given non-NULL
 * "ms-*" is taken (*seq_given 0, else 1, a missing sequence included, as
 * Redis sets it). The numbers are streamid_parse's. 0 or -1, nothing
 * replied. */
static int id_parse(const char *p, size_t len, streamid *id, uint64_t missing_seq, int strict, int *seq_given) {
    /* Redis copies the argument into a 128-byte C string: an embedded NUL
     * ends it (streamid_parse applies both rules to the rest). */
    if (len > 127) return -1;
    const char *nul = memchr(p, '\0', len);
    size_t n = nul ? (size_t)(nul - p) : len;
    if (n == 1 && (p[0] == '-' || p[0] == '+')) {
        if (strict) return -1;
        id->ms = id->seq = p[0] == '-' ? 0 : UINT64_MAX;
        if (seq_given) *seq_given = 1;
        return 0;
    }
    int given;
    if (streamid_parse(p, len, id, missing_seq, seq_given != NULL, &given) < 0) return -1;
    if (seq_given) *seq_given = given != -1;
    return 0;
}

int xid_parse_or_reply(struct cmd_ctx *c, const hk_slice *a, streamid *id, uint64_t missing_seq, int allow_excl,
                       int *excl) {
    int ex = allow_excl && a->len > 1 && a->ptr[0] == '(';
    if (excl) *excl = ex;
    int r = ex ? id_parse(a->ptr + 1, a->len - 1, id, missing_seq, 1, NULL)
               : id_parse(a->ptr, a->len, id, missing_seq, 0, NULL);
    if (r < 0) {
        reply_error(c, XERR_INVALID_ID);
        return -1;
    }
    return 0;
}

int xid_parse_strict_or_reply(struct cmd_ctx *c, const hk_slice *a, streamid *id, uint64_t missing_seq, int seq_star,
                              int *seq_given) {
    int given = 1;
    if (id_parse(a->ptr, a->len, id, missing_seq, 1, seq_star ? &given : NULL) < 0) {
        reply_error(c, XERR_INVALID_ID);
        return -1;
    }
    if (seq_given) *seq_given = given;
    return 0;
}

int xid_parse_range_or_reply(struct cmd_ctx *c, const hk_slice *start_arg, const hk_slice *end_arg, streamid *start,
                             streamid *end) {
    int ex;
    if (xid_parse_or_reply(c, start_arg, start, 0, 1, &ex) < 0) return -1;
    if (ex && streamid_incr(start) < 0) {
        reply_error(c, XERR_START_EXCL);
        return -1;
    }
    if (xid_parse_or_reply(c, end_arg, end, UINT64_MAX, 1, &ex) < 0) return -1;
    if (ex && streamid_decr(end) < 0) {
        reply_error(c, XERR_END_EXCL);
        return -1;
    }
    return 0;
}

int xids_parse_or_reply(struct cmd_ctx *c, int from, long long n, struct xids *x) {
    x->v = n > (long long)(sizeof(x->inl) / sizeof(x->inl[0])) ? hk_malloc((size_t)n * sizeof(*x->v)) : x->inl;
    for (long long j = 0; j < n; j++)
        if (xid_parse_strict_or_reply(c, &c->argv[from + j], &x->v[j], 0, 0, NULL) < 0) {
            xids_free(x);
            return -1;
        }
    return 0;
}

void xids_free(struct xids *x) {
    if (x->v != x->inl) hk_free(x->v);
    x->v = x->inl;
}

void xreply_id(struct cmd_ctx *c, const streamid *id) {
    char buf[STREAMID_STRLEN];
    size_t n = streamid_fmt(id, buf);
    reply_bulk(c, buf, n);
}

void xreply_fields(struct cmd_ctx *c, struct stream_iter *it, long long nfields) {
    reply_array(c, nfields * 2);
    for (long long i = 0; i < nfields; i++) {
        const char *f, *v;
        size_t fl, vl;
        stream_iter_field(it, &f, &fl, &v, &vl);
        reply_bulk(c, f, fl);
        reply_bulk(c, v, vl);
    }
}

void xreply_entry(struct cmd_ctx *c, struct stream_iter *it, const streamid *id, long long nfields) {
    reply_array(c, 2);
    xreply_id(c, id);
    xreply_fields(c, it, nfields);
}

long long xreply_range(struct cmd_ctx *c, struct stream *s, const streamid *start, const streamid *end,
                       long long count, int rev) {
    void *h = reply_defer(c);
    long long n = 0;
    struct stream_iter it;
    stream_iter_start(&it, s, start, end, rev);
    streamid id;
    long long nf;
    while ((count <= 0 || n < count) && stream_iter_next(&it, &id, &nf)) {
        xreply_entry(c, &it, &id, nf);
        n++;
    }
    stream_iter_stop(&it);
    reply_fill_array(c, h, n);
    return n;
}

struct kv *xlookup(struct cmd_ctx *c, int argi, struct keyref *k, int write, int *bad) {
    return lookup_typed(c, argi, k, OBJ_STREAM, write, bad);
}

/* ---- trim options ------------------------------------------------------- */

int xref_policy_of(const hk_slice *a) {
    if (arg_is(a, "KEEPREF")) return STREAM_KEEPREF;
    if (arg_is(a, "DELREF")) return STREAM_DELREF;
    if (arg_is(a, "ACKED")) return STREAM_ACKED;
    return -1;
}

void xtrim_args_init(struct xtrim_args *o) {
    memset(o, 0, sizeof(*o));
    o->t.maxlen = -1;
    o->t.policy = STREAM_KEEPREF;
    o->threshold_arg = -1;
    o->approx_arg = -1;
}

#define XERR_BOTH_STRATEGIES "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"

/* The '~' or '=' after MAXLEN/MINID, when a threshold still follows. */
static void trim_operator(struct cmd_ctx *c, int *i, struct xtrim_args *o, int more) {
    const hk_slice *n = &c->argv[*i + 1];
    o->t.approx = 0;
    o->approx_arg = -1;
    if (more >= 2 && n->len == 1 && (n->ptr[0] == '~' || n->ptr[0] == '=')) {
        o->t.approx = n->ptr[0] == '~';
        o->approx_arg = *i + 1;
        (*i)++;
    }
}

int xtrim_parse_one(struct cmd_ctx *c, int *i, struct xtrim_args *o) {
    const hk_slice *a = &c->argv[*i];
    int more = c->argc - 1 - *i;
    int pol;
    if (more && arg_is(a, "MAXLEN")) {
        if (o->t.strategy) {
            reply_error(c, XERR_BOTH_STRATEGIES);
            return -1;
        }
        trim_operator(c, i, o, more);
        long long v;
        if (!arg_ll_or_reply(c, &c->argv[*i + 1], &v, NULL)) return -1;
        if (v < 0) {
            reply_error(c, "ERR The MAXLEN argument must be >= 0.");
            return -1;
        }
        (*i)++;
        o->t.maxlen = v;
        o->t.strategy = STREAM_TRIM_MAXLEN;
        o->threshold_arg = *i;
    } else if (more && arg_is(a, "MINID")) {
        if (o->t.strategy) {
            reply_error(c, XERR_BOTH_STRATEGIES);
            return -1;
        }
        trim_operator(c, i, o, more);
        if (xid_parse_strict_or_reply(c, &c->argv[*i + 1], &o->t.minid, 0, 0, NULL) < 0) return -1;
        (*i)++;
        o->t.strategy = STREAM_TRIM_MINID;
        o->threshold_arg = *i;
    } else if (more && arg_is(a, "LIMIT")) {
        long long v;
        if (!arg_ll_or_reply(c, &c->argv[*i + 1], &v, NULL)) return -1;
        if (v < 0) {
            reply_error(c, "ERR The LIMIT argument must be >= 0.");
            return -1;
        }
        o->t.limit = v;
        o->limit_given = 1;
        (*i)++;
    } else if ((pol = xref_policy_of(a)) >= 0) {
        if (o->policy_given) {
            reply_error(c, ERR_SYNTAX);
            return -1;
        }
        o->t.policy = pol;
        o->policy_given = 1;
    } else {
        return 0;
    }
    (*i)++;
    return 1;
}

int xtrim_args_check(struct cmd_ctx *c, struct xtrim_args *o, int need_strategy) {
    if (o->t.limit && !o->t.strategy) {
        reply_error(c, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return -1;
    }
    if (need_strategy && !o->t.strategy) {
        reply_error(c, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (c->flags & CTX_REPLAY) {
        /* A recorded trim was made exact before it was recorded: apply it
         * whole, whatever limit it names. */
        o->t.limit = 0;
        return 0;
    }
    if (o->limit_given) {
        if (!o->t.approx) {
            reply_error(c, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else if (o->t.approx) {
        long long lim = 100LL * TLIM(stream_node_max_entries);
        if (lim <= 0 || lim > 10000) lim = 10000;
        o->t.limit = lim;
    } else {
        o->t.limit = 0;
    }
    return 0;
}

int xdel_args_parse_or_reply(struct cmd_ctx *c, int first, struct xdel_args *o) {
    o->policy = -1;
    o->ids_at = -1;
    o->numids = 0;
    for (int j = first; j < c->argc;) {
        const hk_slice *a = &c->argv[j];
        int p = xref_policy_of(a);
        if (p >= 0 && o->policy < 0) {
            o->policy = p;
            j++;
        } else if (arg_is(a, "IDS") && j + 1 < c->argc) {
            const hk_slice *n = &c->argv[j + 1];
            if (!hk_str2ll(n->ptr, n->len, &o->numids) || o->numids < 1) {
                reply_error(c, "ERR Number of IDs must be a positive integer");
                return -1;
            }
            if (o->numids > c->argc - j - 2) {
                reply_error(c, "ERR The `numids` parameter must match the number of arguments");
                return -1;
            }
            o->ids_at = j + 2;
            j = o->ids_at + (int)o->numids;
        } else {
            reply_error(c, ERR_SYNTAX);
            return -1;
        }
    }
    if (o->ids_at < 0) {
        reply_error(c, "ERR IDS option is required");
        return -1;
    }
    if (o->policy < 0) o->policy = STREAM_KEEPREF;
    return 0;
}
