/* string.c - the string command family: GET, SET and its variants (SETNX,
 * SETEX, PSETEX, GETSET, GETDEL, GETEX), SET's compare-and-set conditions
 * (IFEQ/IFNE/IFDEQ/IFDNE), DELEX and DIGEST, MGET/MSET/MSETNX/MSETEX,
 * APPEND, STRLEN, the INCR/DECR family and INCRBYFLOAT, GETRANGE/SUBSTR
 * and SETRANGE, with Redis's replies and error texts. LCS lives in
 * string_lcs.c, bit operations on strings in bitops.c. It also holds the
 * string value helpers declared in strval.h. Every handler runs with its
 * keys' shards locked by the execution core; an entry may move when it is
 * replaced (db_put) or its TTL changes, so no kv pointer is used after
 * such a call. Each write reports its keyspace event before or as it
 * happens, and commands whose argv would not replay to the same value
 * (relative TTLs, INCRBYFLOAT, a condition already settled) propagate an
 * exact form instead. */
#include "../core/util.h"
#include "../core/xxh3.h"
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
    if (kv_enc(e) == ENC_RAW && !kv_raw_inline(e)) {
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
    if (len > KV_EMBSTR_MAX) return kv_new_raw(key, klen, p, len, expire);
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
#define SET_IFEQ (1 << 9)
#define SET_IFNE (1 << 10)
#define SET_IFDEQ (1 << 11)
#define SET_IFDNE (1 << 12)
#define SET_EXPIRY (SET_EX | SET_PX | SET_EXAT | SET_PXAT)
#define SET_IF (SET_IFEQ | SET_IFNE | SET_IFDEQ | SET_IFDNE)
/* A command takes one condition at most. */
#define SET_CONDITION (SET_NX | SET_XX | SET_IF)

enum { OPTS_SET, OPTS_GET, OPTS_MSETEX };

/* What the options of SET, GETEX or MSETEX asked for: SET_* flags and the
 * argv indexes of the expiry value and of an IF* condition's value (-1
 * when absent). */
struct string_opts {
    int flags;
    int exp_arg;
    int cond_arg;
};

/* Parse the options of SET (from argv[3]), GETEX (argv[2]) or MSETEX
 * (after its key/value pairs) from argv[first] on, as Redis does: an
 * expiry option excludes the other kinds but may repeat itself (the last
 * value wins), and so may a condition; NX, XX and SET's IFEQ, IFNE, IFDEQ
 * and IFDNE exclude each other in either order (Redis 8.4 still let NX or
 * XX follow an IF* condition; the documentation and later releases refuse
 * it). GET is SET's, KEEPTTL SET's and MSETEX's, PERSIST GETEX's. Replies
 * "syntax error" and returns 0 on anything else. */
static int parse_string_opts(struct cmd_ctx *c, int kind, int first, struct string_opts *o) {
    o->flags = 0;
    o->exp_arg = -1;
    o->cond_arg = -1;
    int set = kind == OPTS_SET, sets = kind != OPTS_GET;
    for (int j = first; j < c->argc; j++) {
        const hk_slice *a = &c->argv[j];
        int f = o->flags, next = j + 1 < c->argc, cond = 0, ok = 1;
        if (sets && arg_is(a, "NX")) cond = SET_NX;
        else if (sets && arg_is(a, "XX")) cond = SET_XX;
        else if (set && next && arg_is(a, "IFEQ")) cond = SET_IFEQ;
        else if (set && next && arg_is(a, "IFNE")) cond = SET_IFNE;
        else if (set && next && arg_is(a, "IFDEQ")) cond = SET_IFDEQ;
        else if (set && next && arg_is(a, "IFDNE")) cond = SET_IFDNE;
        if (cond) {
            ok = !(f & SET_CONDITION & ~cond);
            o->flags |= cond;
            if (cond & SET_IF) o->cond_arg = ++j;
        } else if (set && arg_is(a, "GET")) {
            o->flags |= SET_GET;
        } else if (sets && arg_is(a, "KEEPTTL") && !(f & (SET_PERSIST | SET_EXPIRY))) {
            o->flags |= SET_KEEPTTL;
        } else if (kind == OPTS_GET && arg_is(a, "PERSIST") && !(f & (SET_EXPIRY | SET_KEEPTTL))) {
            o->flags |= SET_PERSIST;
        } else if (arg_is(a, "EX") && next && !(f & (SET_KEEPTTL | SET_PERSIST | SET_EXAT | SET_PX | SET_PXAT))) {
            o->flags |= SET_EX;
            o->exp_arg = ++j;
        } else if (arg_is(a, "PX") && next && !(f & (SET_KEEPTTL | SET_PERSIST | SET_EX | SET_EXAT | SET_PXAT))) {
            o->flags |= SET_PX;
            o->exp_arg = ++j;
        } else if (arg_is(a, "EXAT") && next && !(f & (SET_KEEPTTL | SET_PERSIST | SET_EX | SET_PX | SET_PXAT))) {
            o->flags |= SET_EXAT;
            o->exp_arg = ++j;
        } else if (arg_is(a, "PXAT") && next && !(f & (SET_KEEPTTL | SET_PERSIST | SET_EX | SET_EXAT | SET_PX))) {
            o->flags |= SET_PXAT;
            o->exp_arg = ++j;
        } else {
            ok = 0;
        }
        if (!ok) {
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
    /* "set" and "expire" are one change. */
    db_written(k, KEV_EXPIRE);
    db_dirty_add(-1);
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

/* ---- conditions and digests ------------------------------------------------ */

#define ERR_DIGEST_LEN "ERR must be exactly 16 hexadecimal characters"

/* The digest of string entry e as DIGEST replies it: XXH3-64 of its bytes
 * (an integer's decimal digits), as 16 lowercase hex digits. */
static void strval_digest(const struct kv *e, char hex[HK_XXH3_HEX_LEN]) {
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    hk_xxh3_hex(hk_xxh3_64(p, len), hex);
}

/* Whether string entry e passes condition cond (one SET_IF bit) against
 * argument m: equal bytes (IFEQ) or not (IFNE), equal digests (IFDEQ) or
 * not (IFDNE). A digest is compared as text, case-insensitively, and only
 * its length is checked, as Redis does: a 16-character argument that is
 * not hex never matches. Returns -1 after replying the error for one of
 * another length. */
static int strval_cond(struct cmd_ctx *c, const struct kv *e, int cond, const hk_slice *m) {
    int eq = 1;
    if (cond & (SET_IFEQ | SET_IFNE)) {
        char nb[HK_LONG_STR_SIZE];
        const char *p;
        size_t len;
        kv_str(e, nb, &p, &len);
        eq = len == m->len && memcmp(p, m->ptr, len) == 0;
    } else {
        if (m->len != HK_XXH3_HEX_LEN) {
            reply_error(c, ERR_DIGEST_LEN);
            return -1;
        }
        char hex[HK_XXH3_HEX_LEN];
        strval_digest(e, hex);
        for (size_t i = 0; i < HK_XXH3_HEX_LEN && eq; i++) {
            char ch = m->ptr[i];
            eq = hex[i] == (ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
        }
    }
    return (cond & (SET_IFEQ | SET_IFDEQ)) ? eq : !eq;
}

/* SET with IFEQ, IFNE, IFDEQ or IFDNE (Redis 8.4's compare-and-set). A
 * missing key fails IFEQ/IFDEQ and passes IFNE/IFDNE, so only those
 * create it; an existing key must hold a string (WRONGTYPE, with or
 * without GET) and is compared by its bytes or its digest. Every error
 * (expiry, type, digest length) comes before any reply. With GET the
 * reply is the old value, null when there was none, whether the write
 * happened or not; without, +OK or null. The write propagates as the
 * unconditional SET it amounts to (set_value's absolute form, or SET key
 * value [KEEPTTL]): the condition was settled here, against this state. */
static void set_if(struct cmd_ctx *c, const struct string_opts *o) {
    long long when = -1;
    if (o->exp_arg > 0 && !parse_expire(c, &c->argv[o->exp_arg], o->flags, &when)) return;
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = (o->flags & SET_GET) ? lookup_read(c, &k) : lookup_write(c, &k);
    int cond = o->flags & SET_IF, pass = (cond & (SET_IFNE | SET_IFDNE)) != 0;
    if (e) {
        if (!check_type(c, e, OBJ_STRING)) return;
        pass = strval_cond(c, e, cond, &c->argv[o->cond_arg]);
        if (pass < 0) return;
    }
    if (o->flags & SET_GET) {
        if (e) reply_strval(c, e);
        else reply_null(c);
    }
    if (!pass) {
        if (!(o->flags & SET_GET)) reply_null(c);
        return;
    }
    int keep = (o->flags & SET_KEEPTTL) != 0;
    if (keep && e) when = kv_expire(e);
    set_value(c, &k, 2, when, o->exp_arg > 0);
    if (o->exp_arg < 0) {
        prop_begin(c, 3 + keep);
        prop_arg_cstr(c, "SET");
        prop_arg(c, k.key, k.klen);
        prop_arg_slice(c, &c->argv[2]);
        if (keep) prop_arg_cstr(c, "KEEPTTL");
    }
    if (!(o->flags & SET_GET)) reply_ok(c);
}

void cmd_set(struct cmd_ctx *c) {
    struct string_opts o;
    if (!parse_string_opts(c, OPTS_SET, 3, &o)) return;
    if (o.flags & SET_IF) set_if(c, &o);
    else set_generic(c, o.flags, 2, o.exp_arg, 0);
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

/* DELEX key [IFEQ value | IFNE value | IFDEQ digest | IFDNE digest]
 * (Redis 8.4). Without a condition it is DEL of one key of any type.
 * With one: 0 for a missing key (whatever the condition word), an error
 * for a key that is not a string, then the condition word and SET's
 * comparison; 1 when the key went. Either way it propagates as DEL. */
void cmd_delex(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    if (c->argc == 2) {
        int n = db_delete_as(&k, c->now_ms, KEV_DEL, DB_FREE_USER_DEL);
        if (n) prop_cmd(c, "DEL", 1, &c->argv[1]);
        reply_int(c, n);
        return;
    }
    if (c->argc != 4) {
        reply_arity(c);
        return;
    }
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    if (kv_type(e) != OBJ_STRING) {
        reply_error(c, "ERR Key should be of string type if conditions are specified");
        return;
    }
    const hk_slice *w = &c->argv[2];
    int cond = arg_is(w, "IFEQ")    ? SET_IFEQ
               : arg_is(w, "IFNE")  ? SET_IFNE
               : arg_is(w, "IFDEQ") ? SET_IFDEQ
               : arg_is(w, "IFDNE") ? SET_IFDNE
                                    : 0;
    if (!cond) {
        reply_error(c, "ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE");
        return;
    }
    int pass = strval_cond(c, e, cond, &c->argv[3]);
    if (pass < 0) return;
    int n = pass && db_delete_as(&k, c->now_ms, KEV_DEL, DB_FREE_USER_DEL);
    if (n) prop_cmd(c, "DEL", 1, &c->argv[1]);
    reply_int(c, n);
}

/* DIGEST key (Redis 8.4): the value's XXH3-64 as 16 lowercase hex digits,
 * null for a missing key. */
void cmd_digest(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_null(c);
        return;
    }
    if (!check_type(c, e, OBJ_STRING)) return;
    char hex[HK_XXH3_HEX_LEN];
    strval_digest(e, hex);
    reply_bulk(c, hex, sizeof(hex));
}

void cmd_getex(struct cmd_ctx *c) {
    struct string_opts o;
    if (!parse_string_opts(c, OPTS_GET, 2, &o)) return;
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
    if (o.exp_arg > 0 && !parse_expire(c, &c->argv[o.exp_arg], o.flags, &when)) return;
    reply_strval(c, e);
    /* Propagated as what it did: DEL, PEXPIREAT (absolute) or PERSIST. */
    if (o.exp_arg > 0) {
        set_deadline(c, &k, e, when);
    } else if ((o.flags & SET_PERSIST) && kv_has_expire(e)) {
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

/* The key count of MSETEX at argv[1] when it is one Redis accepts (1 to
 * INT_MAX, with that many pairs present); 0 otherwise. *bad gets the
 * error text for it. */
static long long msetex_numkeys(const hk_slice *argv, int argc, const char **bad) {
    long long n;
    if (!hk_str2ll(argv[1].ptr, argv[1].len, &n) || n < 1 || n > INT_MAX) {
        *bad = "ERR invalid numkeys value";
        return 0;
    }
    if (n > (argc - 2) / 2) {
        *bad = "ERR wrong number of key-value pairs";
        return 0;
    }
    return n;
}

int msetex_getkeys(const hk_slice *argv, int argc, int *keys, int max) {
    const char *bad;
    long long n = argc > 1 ? msetex_numkeys(argv, argc, &bad) : 0;
    if (n <= 0 || n > max) return -1;
    for (long long i = 0; i < n; i++) keys[i] = 2 + 2 * (int)i;
    return (int)n;
}

/* MSETEX numkeys key value [key value ...] [NX | XX] [EX s | PX ms | EXAT
 * ts | PXAT ms-ts | KEEPTTL] (Redis 8.4): every pair is written, with one
 * expiry, or none is. NX needs every key absent, XX every key present
 * (of any type, as for SET); otherwise the reply is 0 and nothing
 * changes. Each key reports "set", and "expire" when the command gave a
 * TTL; KEEPTTL keeps each key's own. Propagates as its argv with a
 * relative EX/PX turned into PXAT ms, as Redis does; a deadline already
 * past deletes the keys instead and propagates as DEL of them all. */
void cmd_msetex(struct cmd_ctx *c) {
    const char *bad;
    long long n = msetex_numkeys(c->argv, c->argc, &bad);
    if (!n) {
        reply_error(c, bad);
        return;
    }
    int end = 2 + 2 * (int)n;
    struct string_opts o;
    if (!parse_string_opts(c, OPTS_MSETEX, end, &o)) return;
    long long when = -1;
    if (o.exp_arg > 0 && !parse_expire(c, &c->argv[o.exp_arg], o.flags, &when)) return;
    struct keyref k;
    if (o.flags & (SET_NX | SET_XX)) {
        for (int j = 2; j < end; j += 2) {
            key_of(c, j, &k);
            /* A write lookup, as MSETNX's: no keyspace miss, no keymiss. */
            int found = lookup_write(c, &k) != NULL;
            if (found == ((o.flags & SET_NX) != 0)) {
                reply_int(c, 0);
                return;
            }
        }
    }
    if (when >= 0 && when <= c->now_ms && !(c->flags & CTX_REPLAY)) {
        int gone = 0;
        for (int j = 2; j < end; j += 2) {
            key_of(c, j, &k);
            gone |= db_delete(&k, c->now_ms, KEV_DEL);
        }
        prop_custom(c);
        if (gone) {
            prop_begin(c, 1 + (int)n);
            prop_arg_cstr(c, "DEL");
            for (int j = 2; j < end; j += 2) prop_arg_slice(c, &c->argv[j]);
        }
        reply_int(c, 1);
        return;
    }
    for (int j = 2; j < end; j += 2) {
        const hk_slice *v = &c->argv[j + 1];
        key_of(c, j, &k);
        long long deadline = when;
        if (o.flags & SET_KEEPTTL) {
            struct kv *e = lookup_write(c, &k);
            deadline = e ? kv_expire(e) : -1;
        }
        db_put_str(&k, v->ptr, v->len, deadline, KEV_SET);
        /* A change per key, with or without its "expire". */
        if (o.exp_arg > 0) {
            db_written(&k, KEV_EXPIRE);
            db_dirty_add(-1);
        }
    }
    if (o.flags & (SET_EX | SET_PX)) {
        prop_begin(c, c->argc);
        for (int i = 0; i < c->argc; i++) {
            if (i == o.exp_arg - 1) prop_arg_cstr(c, "PXAT");
            else if (i == o.exp_arg) prop_arg_ll(c, when);
            else prop_arg_slice(c, &c->argv[i]);
        }
    }
    reply_int(c, 1);
}

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
