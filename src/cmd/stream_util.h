/* stream_util.h - what the stream command handlers share (src/cmd/stream.c
 * and src/cmd/stream_group.c): reading stream ids from arguments with
 * Redis's error texts, writing ids and entries as Redis replies them,
 * looking a stream key up with its type check, the trim options that
 * XADD and XTRIM read, and the IDS and reference-policy options of
 * XDELEX and XACKDEL. The value itself is src/types/stream.h (which also
 * parses and formats ids: one reader for every command); nothing here
 * changes a stream. */
#ifndef HK_CMD_STREAM_UTIL_H
#define HK_CMD_STREAM_UTIL_H

#include "../server/exec.h"
#include "../types/stream.h"
#include "args.h"

#include <stdint.h>

struct keyref;

/* Redis's texts (without the leading '-'). */
#define XERR_INVALID_ID "ERR Invalid stream ID specified as stream command argument"
#define XERR_START_EXCL "ERR invalid start ID for the interval"
#define XERR_END_EXCL "ERR invalid end ID for the interval"
#define XERR_ID_SMALL "ERR The ID specified in XADD is equal or smaller than the target stream top item"
#define XERR_ID_ZERO "ERR The ID specified in XADD must be greater than 0-0"
#define XERR_ID_EXHAUSTED "ERR The stream has exhausted the last possible ID, unable to add more items"

/* Parse a stream id from *a as Redis does for range and lookup
 * arguments: "-" is 0-0, "+" is the greatest id, "ms" takes missing_seq
 * as its sequence (0 for a range's start, UINT64_MAX for its end), and
 * "ms-seq" is itself. Numbers are read as Redis reads them (strtoull
 * after a failed strict parse, so a leading space or '+' passes, a '-'
 * does not). With allow_excl, a leading '(' (with something after it)
 * makes the id exclusive: *excl is set and the rest must be a plain id
 * (not "-" or "+"); without allow_excl, excl may be NULL and '(' is just
 * invalid. The exclusive bound is NOT moved here: the caller knows which
 * side it is and applies streamid_incr (start) or streamid_decr (end),
 * replying XERR_START_EXCL / XERR_END_EXCL when that fails; or it uses
 * xid_parse_range_or_reply, which does both sides. Returns 0, or -1 after
 * replying XERR_INVALID_ID. */
int xid_parse_or_reply(struct cmd_ctx *c, const hk_slice *a, streamid *id, uint64_t missing_seq, int allow_excl,
                       int *excl);

/* An id where "-" and "+" are refused (Redis's strict form: XADD's
 * explicit ids, XSETID, XCLAIM's ids, XACK...). With seq_star, "ms-*" is
 * accepted and *seq_given is 0 for it (1 otherwise); seq_given may be
 * NULL without seq_star. A missing sequence becomes missing_seq. Returns
 * 0, or -1 after replying XERR_INVALID_ID. */
int xid_parse_strict_or_reply(struct cmd_ctx *c, const hk_slice *a, streamid *id, uint64_t missing_seq, int seq_star,
                              int *seq_given);

/* Both bounds of a range, as XRANGE/XREVRANGE/XPENDING read them: start
 * with missing sequence 0, end with UINT64_MAX, each may be exclusive
 * ("(" moves it by one, with Redis's interval errors when it cannot).
 * Errors are replied in Redis's order (start parsed and moved first).
 * Returns 0, or -1 after the reply. */
int xid_parse_range_or_reply(struct cmd_ctx *c, const hk_slice *start_arg, const hk_slice *end_arg, streamid *start,
                             streamid *end);

/* Strict ids argv[from..from+n) (Redis checks them all before a command
 * changes anything), in x->v: x->inl when they fit, else allocated. */
struct xids {
    streamid *v;
    streamid inl[8];
};
/* 0, or -1 after replying XERR_INVALID_ID (nothing to free then). On 0
 * the caller frees with xids_free; x must not move in between. */
int xids_parse_or_reply(struct cmd_ctx *c, int from, long long n, struct xids *x);
void xids_free(struct xids *x);

/* A bulk string "ms-seq". */
void xreply_id(struct cmd_ctx *c, const streamid *id);

/* The flat array of fields and values of the entry `it` is on
 * (stream_iter_next just returned it with nfields). */
void xreply_fields(struct cmd_ctx *c, struct stream_iter *it, long long nfields);

/* One entry as Redis replies it: a two-element array of its id and a flat
 * array of fields and values (an array in RESP3 too, not a map). `it` is
 * positioned on the entry (stream_iter_next just returned it with nfields). */
void xreply_entry(struct cmd_ctx *c, struct stream_iter *it, const streamid *id, long long nfields);

/* The array of entries of s with ids in [start, end], ascending, or
 * descending with rev, at most count of them (count <= 0: all). Returns
 * how many were replied. The header is deferred, so s may be read once. */
long long xreply_range(struct cmd_ctx *c, struct stream *s, const streamid *start, const streamid *end,
                       long long count, int rev);

/* Look up argv[argi] as a stream (fills *k): for writing when `write`
 * (no hit/miss counted), else for reading. Returns the entry; NULL with
 * *bad 0 when the key is absent; NULL with *bad 1 after replying
 * WRONGTYPE. */
struct kv *xlookup(struct cmd_ctx *c, int argi, struct keyref *k, int write, int *bad);

/* The trim options of XADD and XTRIM, and the reference policy of XADD,
 * XTRIM, XDELEX and XACKDEL:
 *   MAXLEN|MINID [=|~] threshold [LIMIT count]  KEEPREF|DELREF|ACKED
 * xtrim_args_init sets the defaults; xtrim_parse_one consumes the option
 * at argv[*i] if it is one of these (advancing *i past it and returning
 * 1), returns 0 when argv[*i] is something else, and -1 after replying
 * an error (Redis's texts: syntax, integers, "ERR The MAXLEN argument
 * must be >= 0.", "ERR The LIMIT argument must be >= 0.", an invalid
 * MINID, MAXLEN with MINID, a second reference policy). NOMKSTREAM and
 * XADD's id are the caller's. Checks that need every option (LIMIT
 * without '~' or without a strategy, XTRIM without one) are
 * xtrim_args_check's. */
struct xtrim_args {
    struct stream_trim t;   /* strategy 0: no trim asked */
    int limit_given;        /* LIMIT appeared */
    int threshold_arg;      /* argv index of the MAXLEN/MINID threshold, -1 none */
    int approx_arg;         /* argv index of '~' or '=', -1 none */
    int policy_given;       /* KEEPREF/DELREF/ACKED appeared */
};
void xtrim_args_init(struct xtrim_args *o);
int xtrim_parse_one(struct cmd_ctx *c, int *i, struct xtrim_args *o);
/* After all options: replies Redis's errors for combinations (with
 * need_strategy, XTRIM's: MAXLEN or MINID must be given), returns -1
 * then, else 0 (and fills the default LIMIT of an approximate trim; a
 * replayed trim is applied whole). */
int xtrim_args_check(struct cmd_ctx *c, struct xtrim_args *o, int need_strategy);

/* KEEPREF / DELREF / ACKED at *a: STREAM_KEEPREF.. or -1 when it is none. */
int xref_policy_of(const hk_slice *a);

/* The options of XDELEX (from argv[2]) and XACKDEL (from argv[3]), as
 * Redis reads them for both: [KEEPREF|DELREF|ACKED] (once) and
 * IDS numids id... (a later IDS replaces an earlier one), in any order.
 * Fills *o (policy KEEPREF when none is given) and returns 0, or -1
 * after replying Redis's error (syntax, "Number of IDs must be a
 * positive integer", a numids beyond the arguments, "IDS option is
 * required"). The ids themselves are not read here. */
struct xdel_args {
    int policy;         /* STREAM_KEEPREF / DELREF / ACKED */
    int ids_at;         /* argv index of the first id */
    long long numids;
};
int xdel_args_parse_or_reply(struct cmd_ctx *c, int first, struct xdel_args *o);

#endif
