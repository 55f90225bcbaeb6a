/* string.c - the string command family: GET, SET and its variants (SETNX,
 * SETEX, PSETEX, GETSET, GETDEL, GETEX), MGET/MSET/MSETNX, APPEND, STRLEN,
 * the INCR/DECR family and INCRBYFLOAT, GETRANGE/SUBSTR, SETRANGE and LCS,
 * with Redis's replies and error texts. It also holds the string value
 * helpers declared in strval.h. Bit operations on strings live in
 * bitops.c. Every handler runs with its keys' shards locked by the
 * execution core; an entry may move when it is replaced (db_put) or its
 * TTL changes, so no kv pointer is used after such a call. Each write
 * reports its keyspace event before or as it happens, and commands whose
 * argv would not replay to the same value (relative TTLs, INCRBYFLOAT)
 * propagate an exact form instead. */
#include "../core/alloc.h"
#include "../core/util.h"
#include "../server/config.h"
#include "cmds.h"
#include "cmdutil.h"
#include "strval.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- value helpers (strval.h) -------------------------------------------- */

long long strval_max_len(void) {
    long long lim = CFG(proto_max_bulk_len);
    /* A rawstr keeps its length in 32 bits (and one byte for the NUL). */
    if (lim > (long long)UINT32_MAX - 1) lim = (long long)UINT32_MAX - 1;
    return lim;
}

struct rawstr *strval_unshare(const struct keyref *k, struct kv **ep, size_t reserve) {
    struct kv *e = *ep;
    if (kv_enc(e) == ENC_RAW) {
        struct rawstr *s = kv_ptr(e);
        if (reserve > s->cap) {
            s = rawstr_reserve(s, reserve);
            kv_set_ptr(e, s);
        }
        return s;
    }
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    /* Copy before db_put frees the entry that p may point into. The same
     * bytes in another representation: no event; the caller reports its
     * edit before it changes them. */
    struct rawstr *s = rawstr_new(p, len, reserve > len ? reserve : len);
    struct kv *n = kv_new_ptr(k->key, k->klen, OBJ_STRING, ENC_RAW, s, kv_expire(e));
    db_put(k, n, KEV_NONE);
    *ep = n;
    return s;
}

struct kv *strval_new_zeroed(const struct keyref *k, size_t len, struct rawstr **out) {
    struct rawstr *s = rawstr_new(NULL, 0, len);
    rawstr_growzero(s, len);
    *out = s;
    return kv_new_ptr(k->key, k->klen, OBJ_STRING, ENC_RAW, s, -1);
}

struct kv *strval_new_noint(const char *key, size_t klen, const char *p, size_t len, long long expire) {
    if (len > KV_EMBSTR_MAX) return kv_new_ptr(key, klen, OBJ_STRING, ENC_RAW, rawstr_new(p, len, len), expire);
    return kv_new_embstr(key, klen, p, len, expire);
}

/* Reply with the bytes of string entry e as a bulk string. */
static void reply_strval(struct cmd_ctx *c, const struct kv *e) {
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    reply_bulk(c, p, len);
}

/* Total length of an edit is within the string size limit; replies the
 * error otherwise. */
static int check_string_length(struct cmd_ctx *c, long long size, long long append) {
    long long lim = strval_max_len();
    if (size > lim || append > lim - size) {
        reply_status(c, HK_ERR_STRING_TOO_LONG);
        return 0;
    }
    return 1;
}

/* ---- GET, SET and variants ------------------------------------------------ */

/* GET's reply for key argv[1]. Returns 0 (after WRONGTYPE) when the key
 * holds another type; a missing key replies null and returns 1. */
static int get_generic(struct cmd_ctx *c, const struct keyref *k) {
    struct kv *e = lookup_read(c, k);
    if (!e) {
        reply_null(c);
        return 1;
    }
    if (!check_type(c, e, OBJ_STRING)) return 0;
    reply_strval(c, e);
    return 1;
}

void cmd_get(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    get_generic(c, &k);
}

#define SET_NX (1 << 0)
#define SET_XX (1 << 1)
#define SET_GET (1 << 2)
#define SET_EX (1 << 3)
#define SET_PX (1 << 4)
#define SET_EXAT (1 << 5)
#define SET_PXAT (1 << 6)
#define SET_KEEPTTL (1 << 7)
#define SET_PERSIST (1 << 8)

enum { OPTS_SET, OPTS_GET };

/* Parse the options of SET (from argv[3]) or GETEX (from argv[2]) as
 * Redis does: an expiry option excludes the other kinds but may repeat
 * itself (the last value wins), NX/XX exclude each other, KEEPTTL is SET's
 * and PERSIST GETEX's. Sets *exp_arg to the argv index of the expiry
 * value, or -1. Replies "syntax error" and returns 0 on anything else. */
static int parse_string_opts(struct cmd_ctx *c, int kind, int *flags, int *exp_arg) {
    *flags = 0;
    *exp_arg = -1;
    for (int j = kind == OPTS_GET ? 2 : 3; j < c->argc; j++) {
        const hk_slice *a = &c->argv[j];
        int f = *flags, next = j + 1 < c->argc;
        if (kind == OPTS_SET && arg_is(a, "NX") && !(f & SET_XX)) {
            *flags |= SET_NX;
        } else if (kind == OPTS_SET && arg_is(a, "XX") && !(f & SET_NX)) {
            *flags |= SET_XX;
        } else if (kind == OPTS_SET && arg_is(a, "GET")) {
            *flags |= SET_GET;
        } else if (kind == OPTS_SET && arg_is(a, "KEEPTTL") &&
                   !(f & (SET_PERSIST | SET_EX | SET_EXAT | SET_PX | SET_PXAT))) {
            *flags |= SET_KEEPTTL;
        } else if (kind == OPTS_GET && arg_is(a, "PERSIST") &&
                   !(f & (SET_EX | SET_EXAT | SET_PX | SET_PXAT | SET_KEEPTTL))) {
            *flags |= SET_PERSIST;
        } else if (arg_is(a, "EX") && next && !(f & (SET_KEEPTTL | SET_PERSIST | SET_EXAT | SET_PX | SET_PXAT))) {
            *flags |= SET_EX;
            *exp_arg = ++j;
        } else if (arg_is(a, "PX") && next && !(f & (SET_KEEPTTL | SET_PERSIST | SET_EX | SET_EXAT | SET_PXAT))) {
            *flags |= SET_PX;
            *exp_arg = ++j;
        } else if (arg_is(a, "EXAT") && next && !(f & (SET_KEEPTTL | SET_PERSIST | SET_EX | SET_PX | SET_PXAT))) {
            *flags |= SET_EXAT;
            *exp_arg = ++j;
        } else if (arg_is(a, "PXAT") && next && !(f & (SET_KEEPTTL | SET_PERSIST | SET_EX | SET_EXAT | SET_PX))) {
            *flags |= SET_PXAT;
            *exp_arg = ++j;
        } else {
            reply_error(c, ERR_SYNTAX);
            return 0;
        }
    }
    return 1;
}

/* Turn the expiry argument of an EX/PX/EXAT/PXAT option (flags says
 * which) into an absolute time in ms. Values <= 0, and those that
 * overflow, get "invalid expire time in '<cmd>' command". */
static int parse_expire(struct cmd_ctx *c, const hk_slice *a, int flags, long long *when_ms) {
    int seconds = (flags & (SET_EX | SET_EXAT)) != 0, relative = (flags & (SET_EX | SET_PX)) != 0;
    long long v;
    if (!hk_str2ll(a->ptr, a->len, &v)) {
        reply_error(c, ERR_NOT_INT);
        return 0;
    }
    if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) {
        reply_status(c, HK_ERR_INVALID_EXPIRE);
        return 0;
    }
    if (seconds) v *= 1000;
    if (relative) {
        if (v > LLONG_MAX - c->now_ms) {
            reply_status(c, HK_ERR_INVALID_EXPIRE);
            return 0;
        }
        v += c->now_ms;
    }
    *when_ms = v;
    return 1;
}

/* Store value argv[vi] at k with absolute expiry `when` (-1: none), as
 * SET does ("set", and "expire" when it has one). An expiry already in
 * the past deletes the key instead. `given_ttl` says the command set the
 * expiry itself (Redis then also reports "expire"; a TTL kept by KEEPTTL
 * is not reported); such a SET propagates in absolute time, so a replay
 * at another time (AOF, a replica) gives the key the same deadline: SET
 * key value PXAT ms, or DEL when the deadline had already passed. */
static void set_value(struct cmd_ctx *c, const struct keyref *k, int vi, long long when, int given_ttl) {
    const hk_slice *v = &c->argv[vi];
    hk_slice key = {k->key, k->klen};
    if (when >= 0 && when <= c->now_ms && !(c->flags & CTX_REPLAY)) {
        if (db_delete(k, c->now_ms, KEV_DEL) && given_ttl) prop_cmd(c, "DEL", 1, &key);
        return;
    }
    db_put_str(k, v->ptr, v->len, when, KEV_SET);
    if (!given_ttl) return;
    db_written(k, KEV_EXPIRE);
    prop_begin(c, 5);
    prop_arg_cstr(c, "SET");
    prop_arg_slice(c, &key);
    prop_arg_slice(c, v);
    prop_arg_cstr(c, "PXAT");
    prop_arg_ll(c, when);
}

/* The shared body of SET, SETNX, SETEX and PSETEX: the value is argv[vi],
 * the expiry argv[exp_arg] (-1: none). Replies +OK, or null when NX/XX
 * stops the write; with int_replies (SETNX) 1 and 0 instead. */
static void set_generic(struct cmd_ctx *c, int flags, int vi, int exp_arg, int int_replies) {
    long long when = -1;
    if (exp_arg > 0 && !parse_expire(c, &c->argv[exp_arg], flags, &when)) return;
    struct keyref k;
    key_of(c, 1, &k);
    if ((flags & SET_GET) && !get_generic(c, &k)) return;
    /* A plain SET needs nothing from the old entry: db_put replaces it. */
    struct kv *old = (flags & (SET_NX | SET_XX | SET_KEEPTTL)) ? lookup_write(c, &k) : NULL;
    if (((flags & SET_NX) && old) || ((flags & SET_XX) && !old)) {
        if (flags & SET_GET) return;
        if (int_replies) reply_int(c, 0);
        else reply_null(c);
        return;
    }
    if ((flags & SET_KEEPTTL) && old) when = kv_expire(old);
    set_value(c, &k, vi, when, exp_arg > 0);
    if (flags & SET_GET) return;
    if (int_replies) reply_int(c, 1);
    else reply_ok(c);
}

void cmd_set(struct cmd_ctx *c) {
    int flags, exp_arg;
    if (!parse_string_opts(c, OPTS_SET, &flags, &exp_arg)) return;
    set_generic(c, flags, 2, exp_arg, 0);
}

void cmd_setnx(struct cmd_ctx *c) { set_generic(c, SET_NX, 2, -1, 1); }
void cmd_setex(struct cmd_ctx *c) { set_generic(c, SET_EX, 3, 2, 0); }
void cmd_psetex(struct cmd_ctx *c) { set_generic(c, SET_PX, 3, 2, 0); }

void cmd_getset(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    if (!get_generic(c, &k)) return;
    set_value(c, &k, 2, -1, 0);
}

void cmd_getdel(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_null(c);
        return;
    }
    if (!check_type(c, e, OBJ_STRING)) return;
    reply_strval(c, e);
    db_delete(&k, c->now_ms, KEV_DEL);
    prop_cmd(c, "DEL", 1, &c->argv[1]);
}

void cmd_getex(struct cmd_ctx *c) {
    int flags, exp_arg;
    if (!parse_string_opts(c, OPTS_GET, &flags, &exp_arg)) return;
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_null(c);
        return;
    }
    if (!check_type(c, e, OBJ_STRING)) return;
    /* The expiry is validated only once the key is known to exist, as
     * Redis does. */
    long long when = -1;
    if (exp_arg > 0 && !parse_expire(c, &c->argv[exp_arg], flags, &when)) return;
    reply_strval(c, e);
    /* Propagated as what it did: DEL, PEXPIREAT (absolute) or PERSIST. */
    if (exp_arg > 0) {
        set_deadline(c, &k, e, when);
    } else if ((flags & SET_PERSIST) && kv_has_expire(e)) {
        db_set_expire(&k, e, -1, KEV_PERSIST);
        prop_cmd(c, "PERSIST", 1, &c->argv[1]);
    }
}

/* ---- multi-key ------------------------------------------------------------ */

void cmd_mget(struct cmd_ctx *c) {
    reply_array(c, c->argc - 1);
    for (int j = 1; j < c->argc; j++) {
        struct keyref k;
        key_of(c, j, &k);
        struct kv *e = lookup_read(c, &k);
        if (!e || kv_type(e) != OBJ_STRING) reply_null(c);
        else reply_strval(c, e);
    }
}

/* MSET and MSETNX: dispatch holds every key's shard, so the whole set of
 * writes is seen at once or not at all. */
static void mset_generic(struct cmd_ctx *c, int nx) {
    if (c->argc % 2 == 0) {
        reply_arity(c);
        return;
    }
    struct keyref k;
    if (nx) {
        for (int j = 1; j < c->argc; j += 2) {
            key_of(c, j, &k);
            if (lookup_write(c, &k)) {
                reply_int(c, 0);
                return;
            }
        }
    }
    for (int j = 1; j < c->argc; j += 2) {
        key_of(c, j, &k);
        set_value(c, &k, j + 1, -1, 0);
    }
    if (nx) reply_int(c, 1);
    else reply_ok(c);
}

void cmd_mset(struct cmd_ctx *c) { mset_generic(c, 0); }
void cmd_msetnx(struct cmd_ctx *c) { mset_generic(c, 1); }

/* ---- in-place edits --------------------------------------------------------- */

void cmd_append(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    const hk_slice *v = &c->argv[2];
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        db_put(&k, kv_new_str(k.key, k.klen, v->ptr, v->len, -1), KEV_APPEND);
        reply_int(c, (long long)v->len);
        return;
    }
    if (!check_type(c, e, OBJ_STRING)) return;
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    if (!check_string_length(c, (long long)len, (long long)v->len)) return;
    db_written(&k, KEV_APPEND);
    struct rawstr *s = strval_unshare(&k, &e, len + v->len);
    memcpy(s->buf + s->len, v->ptr, v->len);
    s->len += (uint32_t)v->len;
    s->buf[s->len] = '\0';
    reply_int(c, (long long)s->len);
}

void cmd_strlen(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_STRING)) return;
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    reply_int(c, (long long)len);
}

void cmd_setrange(struct cmd_ctx *c) {
    long long offset;
    if (!arg_ll_or_reply(c, &c->argv[2], &offset, NULL)) return;
    if (offset < 0) {
        reply_error(c, "ERR offset is out of range");
        return;
    }
    const hk_slice *v = &c->argv[3];
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    struct rawstr *s;
    if (!e) {
        if (v->len == 0) {
            reply_int(c, 0);
            return;
        }
        if (!check_string_length(c, offset, (long long)v->len)) return;
        db_put(&k, strval_new_zeroed(&k, (size_t)offset + v->len, &s), KEV_SETRANGE);
    } else {
        if (!check_type(c, e, OBJ_STRING)) return;
        char nb[HK_LONG_STR_SIZE];
        const char *p;
        size_t len;
        kv_str(e, nb, &p, &len);
        /* Setting nothing leaves the value (and its encoding) alone. */
        if (v->len == 0) {
            reply_int(c, (long long)len);
            return;
        }
        if (!check_string_length(c, offset, (long long)v->len)) return;
        size_t need = (size_t)offset + v->len;
        db_written(&k, KEV_SETRANGE);
        s = strval_unshare(&k, &e, need);
        rawstr_growzero(s, need);
    }
    memcpy(s->buf + offset, v->ptr, v->len);
    reply_int(c, (long long)s->len);
}

/* GETRANGE and SUBSTR: inclusive range with negative indexes counted from
 * the end, clamped to the string (Redis 7.2 semantics, including that an
 * end before the start of the string clamps to byte 0). */
void cmd_getrange(struct cmd_ctx *c) {
    long long start, end;
    if (!arg_ll_or_reply(c, &c->argv[2], &start, NULL)) return;
    if (!arg_ll_or_reply(c, &c->argv[3], &end, NULL)) return;
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_bulk(c, "", 0);
        return;
    }
    if (!check_type(c, e, OBJ_STRING)) return;
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    long long n = (long long)len;
    if (start < 0 && end < 0 && start > end) {
        reply_bulk(c, "", 0);
        return;
    }
    if (start < 0) start += n;
    if (end < 0) end += n;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= n) end = n - 1;
    if (n == 0 || start > end) reply_bulk(c, "", 0);
    else reply_bulk(c, p + start, (size_t)(end - start + 1));
}

void cmd_substr(struct cmd_ctx *c) { cmd_getrange(c); }

/* ---- counters --------------------------------------------------------------- */

/* Add incr to the integer at argv[1] (absent = 0). The TTL is kept; an
 * integer-encoded value is updated in place. */
static void incr_generic(struct cmd_ctx *c, long long incr) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (e && !check_type(c, e, OBJ_STRING)) return;
    long long v = 0;
    if (e && !kv_str_ll(e, &v)) {
        reply_error(c, ERR_NOT_INT);
        return;
    }
    if ((incr < 0 && v < 0 && incr < LLONG_MIN - v) || (incr > 0 && v > 0 && incr > LLONG_MAX - v)) {
        reply_error(c, ERR_OVERFLOW);
        return;
    }
    v += incr;
    if (e && kv_enc(e) == ENC_INT) {
        db_written(&k, KEV_INCRBY);
        memcpy(kv_val(e), &v, sizeof(v));
    } else {
        db_put(&k, kv_new_int(k.key, k.klen, v, e ? kv_expire(e) : -1), KEV_INCRBY);
    }
    reply_int(c, v);
}

void cmd_incr(struct cmd_ctx *c) { incr_generic(c, 1); }
void cmd_decr(struct cmd_ctx *c) { incr_generic(c, -1); }

void cmd_incrby(struct cmd_ctx *c) {
    long long incr;
    if (!arg_ll_or_reply(c, &c->argv[2], &incr, NULL)) return;
    incr_generic(c, incr);
}

void cmd_decrby(struct cmd_ctx *c) {
    long long incr;
    if (!arg_ll_or_reply(c, &c->argv[2], &incr, NULL)) return;
    if (incr == LLONG_MIN) {
        reply_error(c, "ERR decrement would overflow");
        return;
    }
    incr_generic(c, -incr);
}

void cmd_incrbyfloat(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (e && !check_type(c, e, OBJ_STRING)) return;
    long double v = 0, incr;
    if (e) {
        long long iv;
        if (kv_enc(e) == ENC_INT) {
            memcpy(&iv, kv_val(e), sizeof(iv));
            v = (long double)iv;
        } else {
            char nb[HK_LONG_STR_SIZE];
            const char *p;
            size_t len;
            kv_str(e, nb, &p, &len);
            if (!hk_str2ld(p, len, &v)) {
                reply_error(c, ERR_NOT_FLOAT);
                return;
            }
        }
    }
    if (!hk_str2ld(c->argv[2].ptr, c->argv[2].len, &incr)) {
        reply_error(c, ERR_NOT_FLOAT);
        return;
    }
    v += incr;
    if (isnan(v) || isinf(v)) {
        reply_status(c, HK_ERR_NAN_INF);
        return;
    }
    char buf[5200];
    int n = hk_ld2str(buf, sizeof(buf), v);
    if (n < 0) n = 0;
    db_put(&k, strval_new_noint(k.key, k.klen, buf, (size_t)n, e ? kv_expire(e) : -1), KEV_INCRBYFLOAT);
    /* The printed result, not the increment: replaying the sum of long
     * doubles elsewhere could round differently. */
    prop_begin(c, 4);
    prop_arg_cstr(c, "SET");
    prop_arg(c, k.key, k.klen);
    prop_arg(c, buf, (size_t)n);
    prop_arg_cstr(c, "KEEPTTL");
    reply_bulk(c, buf, (size_t)n);
}

/* ---- LCS ------------------------------------------------------------------------ */

/* Bytes of the string at argv[i] for LCS: "" when absent. Returns 0 when
 * the key holds another type. nb keeps an integer's digits. */
static int lcs_operand(struct cmd_ctx *c, int i, char *nb, const char **p, size_t *len) {
    struct keyref k;
    key_of(c, i, &k);
    struct kv *e = lookup_read(c, &k);
    *p = "";
    *len = 0;
    if (!e) return 1;
    if (kv_type(e) != OBJ_STRING) return 0;
    kv_str(e, nb, p, len);
    return 1;
}

/* LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]. The classic
 * dynamic programming table (uint32 cells, bounded by proto-max-bulk-len)
 * is walked back from the end; matching ranges are reported from the end
 * of the strings towards the start, as Redis reports them. */
void cmd_lcs(struct cmd_ctx *c) {
    char nba[HK_LONG_STR_SIZE], nbb[HK_LONG_STR_SIZE];
    const char *a, *b;
    size_t alen, blen;
    int oka = lcs_operand(c, 1, nba, &a, &alen);
    int okb = lcs_operand(c, 2, nbb, &b, &blen);
    if (!oka || !okb) {
        reply_error(c, "ERR The specified keys must contain string values");
        return;
    }
    int getlen = 0, getidx = 0, withmatchlen = 0;
    long long minmatchlen = 0;
    for (int j = 3; j < c->argc; j++) {
        const hk_slice *o = &c->argv[j];
        if (arg_is(o, "IDX")) {
            getidx = 1;
        } else if (arg_is(o, "LEN")) {
            getlen = 1;
        } else if (arg_is(o, "WITHMATCHLEN")) {
            withmatchlen = 1;
        } else if (arg_is(o, "MINMATCHLEN") && j + 1 < c->argc) {
            if (!arg_ll_or_reply(c, &c->argv[j + 1], &minmatchlen, NULL)) return;
            if (minmatchlen < 0) minmatchlen = 0;
            j++;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (getlen && getidx) {
        reply_error(c, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    if (alen >= UINT32_MAX - 1 || blen >= UINT32_MAX - 1) {
        reply_error(c, "ERR String too long for LCS");
        return;
    }
    unsigned long long cells = (unsigned long long)(alen + 1) * (blen + 1);
    if (cells > (unsigned long long)CFG(proto_max_bulk_len) / sizeof(uint32_t)) {
        reply_error(c, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
        return;
    }
    uint32_t *t = hk_malloc((size_t)cells * sizeof(uint32_t));
    size_t w = blen + 1;
#define LCS_AT(i, j) t[(size_t)(i) * w + (j)]
    for (size_t i = 0; i <= alen; i++) {
        for (size_t j = 0; j <= blen; j++) {
            if (i == 0 || j == 0) LCS_AT(i, j) = 0;
            else if (a[i - 1] == b[j - 1]) LCS_AT(i, j) = LCS_AT(i - 1, j - 1) + 1;
            else LCS_AT(i, j) = LCS_AT(i - 1, j) > LCS_AT(i, j - 1) ? LCS_AT(i - 1, j) : LCS_AT(i, j - 1);
        }
    }
    uint32_t total = LCS_AT(alen, blen);
    if (getlen) {
        hk_free(t);
        reply_int(c, total);
        return;
    }
    char *res = hk_malloc(total + 1);
    void *h = NULL;
    long long nranges = 0;
    if (getidx) {
        reply_map(c, 2);
        reply_bulk_cstr(c, "matches");
        h = reply_defer(c);
    }
    /* Walk back from the end. A range is open while matches follow each
     * other on the diagonal; it is closed by a mismatch step or by
     * reaching the first byte of either string. */
    size_t i = alen, j = blen, pos = total;
    int open = 0;
    size_t as = 0, ae = 0, bs = 0, be = 0;
    while (i > 0 && j > 0) {
        int emit = 0;
        if (a[i - 1] == b[j - 1]) {
            res[--pos] = a[i - 1];
            if (open && as == i && bs == j) {
                as--;
                bs--;
            } else {
                open = 1;
                as = ae = i - 1;
                bs = be = j - 1;
            }
            if (as == 0 || bs == 0) emit = 1;
            i--;
            j--;
        } else {
            if (LCS_AT(i - 1, j) > LCS_AT(i, j - 1)) i--;
            else j--;
            if (open) emit = 1;
        }
        if (emit) {
            long long mlen = (long long)(ae - as + 1);
            if (getidx && (minmatchlen == 0 || mlen >= minmatchlen)) {
                reply_array(c, 2 + withmatchlen);
                reply_array(c, 2);
                reply_int(c, (long long)as);
                reply_int(c, (long long)ae);
                reply_array(c, 2);
                reply_int(c, (long long)bs);
                reply_int(c, (long long)be);
                if (withmatchlen) reply_int(c, mlen);
                nranges++;
            }
            open = 0;
        }
    }
#undef LCS_AT
    if (getidx) {
        reply_fill_array(c, h, nranges);
        reply_bulk_cstr(c, "len");
        reply_int(c, total);
    } else {
        reply_bulk(c, res, total);
    }
    hk_free(res);
    hk_free(t);
}
