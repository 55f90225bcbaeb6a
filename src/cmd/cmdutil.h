/* cmdutil.h - helpers shared by command handlers: key lookup with type
 * checks and the SCAN-family options. Handlers run on a command context
 * (server/exec.h) with their keys' shards locked; key_of() gives a key
 * argument already resolved to shard and hash. */
#ifndef HK_CMDUTIL_H
#define HK_CMDUTIL_H

#include "../server/creply.h"
#include "../server/server.h"
#include "../store/db.h"
#include "../types/types.h"
#include "args.h"

/* Look up for reading: counts hits/misses. Returns NULL when absent. */
static inline struct kv *lookup_read(struct cmd_ctx *c, const struct keyref *k) { return db_find_read(k, c->now_ms); }
static inline struct kv *lookup_write(struct cmd_ctx *c, const struct keyref *k) { return db_find(k, c->now_ms); }

/* 1 when e is of type t; otherwise replies WRONGTYPE and returns 0. */
static inline int check_type(struct cmd_ctx *c, const struct kv *e, int t) {
    if (kv_type(e) == t) return 1;
    reply_error(c, ERR_WRONGTYPE);
    return 0;
}

/* Lazy expiry of field f of hash *e (key k, its shard held) for a command
 * that reads one field of a hash it does not name (SORT's "key->field"
 * patterns), as HGET would: 1 when the field was past its deadline and
 * went (reported, propagated as HDEL; the key too once empty, *e NULL),
 * 0 otherwise. cmd/hash.c. */
int hash_expire_field(struct cmd_ctx *c, const struct keyref *k, struct kv **e, const char *f, size_t fl);

/* Arguments of SCAN, HSCAN, SSCAN and ZSCAN after the cursor. */
struct scan_args {
    long long count;  /* COUNT hint, 10 when absent */
    const char *pat;  /* MATCH pattern; NULL when absent or "*" */
    size_t plen;
    const char *type; /* TYPE filter (SCAN) */
    size_t tlen;
    int novalues;     /* NOVALUES (HSCAN) */
};
#define SCAN_ALLOW_TYPE 1u
#define SCAN_ALLOW_NOVALUES 2u

/* Parse a cursor as Redis 7.2 does (strtoul over the whole argument: no
 * leading space, nothing after the digits, a leading '-' wraps around).
 * Replies "ERR invalid cursor" and returns 0 when it is not one. */
int scan_cursor_or_reply(struct cmd_ctx *c, const hk_slice *a, uint64_t *out);
/* Clamp an index range [start, end] over len elements as LRANGE, LTRIM,
 * ZRANGE and ZREMRANGEBYRANK do (negative counts from the end); 0 when
 * the range is empty. */
static inline int clamp_index_range(long long *start, long long *end, long long len) {
    if (*start < 0) *start += len;
    if (*end < 0) *end += len;
    if (*start < 0) *start = 0;
    if (*start > *end || *start >= len) return 0;
    if (*end >= len) *end = len - 1;
    return 1;
}

/* The reply of a scan over a missing key: cursor 0, no elements. */
static inline void reply_empty_scan(struct cmd_ctx *c) {
    reply_array(c, 2);
    reply_bulk(c, "0", 1);
    reply_array(c, 0);
}
/* Parse the options from argv[first] on; `allow` adds TYPE/NOVALUES.
 * Replies the error and returns 0 on a bad option or COUNT. */
int scan_args_or_reply(struct cmd_ctx *c, int first, unsigned allow, struct scan_args *o);

/* Look up argv[argi] (fills *k) expecting a value of `type`, for writing
 * when `write` (no hit/miss counted) or reading. Returns the entry; NULL
 * with *bad = 0 when the key is absent, NULL with *bad = 1 after a
 * WRONGTYPE reply. */
static inline struct kv *lookup_typed(struct cmd_ctx *c, int argi, struct keyref *k, int type, int write, int *bad) {
    key_of(c, argi, k);
    struct kv *e = write ? lookup_write(c, k) : lookup_read(c, k);
    *bad = e && !check_type(c, e, type);
    return *bad ? NULL : e;
}

/* Changes as rdb_changes_since_last_save counts them (the save points act
 * on the count, and a command that counts none propagates nothing). The
 * write hook counts one per event; Redis counts what a command did: each
 * element a multi-element write added, removed or updated, nothing for
 * the deletion of a key that a removal emptied, nothing for a write that
 * changed nothing. A handler whose events do not add up to that takes
 * dirty_mark() before its writes and calls dirty_settle() after them with
 * the count Redis's command makes (db_dirty_add covers the difference). */
static inline unsigned long long dirty_mark(const struct cmd_ctx *c) { return c->sink.dirty; }
static inline void dirty_settle(struct cmd_ctx *c, unsigned long long mark, long long n) {
    long long have = (long long)(c->sink.dirty - mark);
    if (have != n) db_dirty_add(n - have);
}

/* A pre_change (types/types.h) that reports event ev on key k: handed to
 * a types mutator, the write is reported just before the value first
 * changes. A handler that created the key (db_put reported it) marks it
 * fired. */
struct key_write {
    struct pre_change pc;
    const struct keyref *k;
    int ev;
};
void key_write_fire(struct pre_change *pc);
static inline void key_write_init(struct key_write *w, const struct keyref *k, int ev, int reported) {
    w->pc.fn = key_write_fire;
    w->pc.fired = reported;
    w->k = k;
    w->ev = ev;
}

/* Give key k (its entry e) the absolute deadline `when` in ms, as EXPIRE
 * and GETEX do: one already past deletes the key (not while applying a
 * journal, whose own DEL follows). Propagates the effect in absolute time:
 * DEL, or PEXPIREAT key when. */
void set_deadline(struct cmd_ctx *c, const struct keyref *k, struct kv *e, long long when);

/* A timeout at argv[idx] as Redis's getTimeoutFromObjectOrReply reads
 * one: seconds (fractional) or, with in_ms, whole milliseconds; negative
 * refused; 0 means forever. *deadline_ms gets now_ms plus it (0 stays 0).
 * Replies the error and returns 0 when bad. */
int parse_timeout(struct cmd_ctx *c, int idx, int in_ms, long long now_ms, long long *deadline_ms);

/* Valid client name: printable ASCII without spaces. */
int client_name_valid(const char *p, size_t len);

#endif
