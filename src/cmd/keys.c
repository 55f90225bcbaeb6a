/* keys.c - the generic keyspace commands: DEL, UNLINK, EXISTS, TYPE, TOUCH,
 * RENAME, RENAMENX, COPY, MOVE, SWAPDB, KEYS, SCAN, RANDOMKEY, the EXPIRE
 * family, TTL and friends, PERSIST and OBJECT.
 *
 * These commands work on whole keys and never look inside a value, so they
 * serve every type. Most run with their keys' shards locked by the
 * execution core; a key in another database (COPY ... DB n, MOVE) lives in
 * the shard with the same index, so that lock covers it too. KEYS, SCAN
 * and RANDOMKEY are CMD_SHARDWISE (one shard at a time, through
 * exec_shard_enter), SWAPDB is CMD_ALL_SHARDS. Value-specific work
 * (duplication for COPY, freeing) goes through the type table. */
#include "../core/alloc.h"
#include "../server/evict.h"
#include "cmds.h"
#include "cmdutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Lookups that must not refresh the access clock (Redis's LOOKUP_NOTOUCH:
 * TYPE, TTL, OBJECT...), yet count a keyspace hit or miss like any read. */
static struct kv *lookup_read_notouch(struct cmd_ctx *c, const struct keyref *k) {
    int saved = store_touch;
    store_touch = 0;
    struct kv *e = db_find_read(k, c->now_ms);
    store_touch = saved;
    return e;
}

static int same_key(const struct keyref *a, const struct keyref *b) {
    return a->klen == b->klen && memcmp(a->key, b->key, a->klen) == 0;
}

/* A copy of entry e under another key name, carrying e's value, expiry and
 * access clock. e's value moves into the new entry and e's shell is freed,
 * so e must already be detached from its table. */
static struct kv *kv_rekey(struct kv *e, const char *key, size_t klen) { return kv_move(e, key, klen, kv_expire(e)); }

/* Parse a database index the way Redis's getIntFromObjectOrReply does:
 * a non-integer gets ERR_NOT_INT (or `msg`), a value outside int range the
 * range error (or `msg`). Returns 0 after replying. */
static int arg_int_or_reply(struct cmd_ctx *c, const hk_slice *a, int *out, const char *msg) {
    long long v;
    if (!hk_str2ll(a->ptr, a->len, &v)) {
        reply_error(c, msg ? msg : ERR_NOT_INT);
        return 0;
    }
    if (v < INT_MIN || v > INT_MAX) {
        if (msg) reply_error(c, msg);
        else reply_status(c, HK_ERR_INT_RANGE);
        return 0;
    }
    *out = (int)v;
    return 1;
}

/* ---- DEL, UNLINK, EXISTS, TOUCH, TYPE ---------------------------------- */

/* DEL and UNLINK: expired keys count as absent. Both unlink the key at
 * once; the value is freed in place unless it is big (more than
 * LAZYFREE_THRESHOLD allocations) and the command may free lazily, in
 * which case the lazy free thread gets it: UNLINK always, DEL when
 * lazyfree-lazy-user-del is on (src/server/lazyfree.h). */
static void del_generic(struct cmd_ctx *c, int why) {
    long long n = 0;
    for (int i = 1; i < c->argc; i++) {
        struct keyref k;
        key_of(c, i, &k);
        if (db_delete_as(&k, c->now_ms, KEV_DEL, why)) n++;
    }
    reply_int(c, n);
}

void cmd_del(struct cmd_ctx *c) { del_generic(c, DB_FREE_USER_DEL); }
void cmd_unlink(struct cmd_ctx *c) { del_generic(c, DB_FREE_UNLINK); }

/* EXISTS counts a key once per mention (EXISTS k k -> 2). */
void cmd_exists(struct cmd_ctx *c) {
    long long n = 0;
    for (int i = 1; i < c->argc; i++) {
        struct keyref k;
        key_of(c, i, &k);
        if (lookup_read_notouch(c, &k)) n++;
    }
    reply_int(c, n);
}

/* TOUCH updates the access clock even for CLIENT NO-TOUCH clients (its
 * row has CMD_TOUCH_ALWAYS). */
void cmd_touch(struct cmd_ctx *c) {
    long long n = 0;
    for (int i = 1; i < c->argc; i++) {
        struct keyref k;
        key_of(c, i, &k);
        if (lookup_read(c, &k)) n++;
    }
    reply_int(c, n);
}

void cmd_type(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read_notouch(c, &k);
    reply_simple(c, e ? obj_type_name(kv_type(e)) : "none");
}

/* ---- RENAME, RENAMENX, COPY, MOVE, SWAPDB ------------------------------ */

/* Both keys' shards are locked (key spec 1..2). The entry is re-created
 * under the new name because the key bytes live inside it; the value
 * itself moves without a copy. The TTL moves with the key. An existing
 * destination is replaced. Events as Redis gives them: "new" for the
 * destination, rename_from, rename_to, then "overwritten" (and
 * "type_changed") when a destination was replaced. */
static void rename_generic(struct cmd_ctx *c, int nx) {
    struct keyref src, dst;
    key_of(c, 1, &src);
    key_of(c, 2, &dst);
    if (!lookup_write(c, &src)) {
        reply_error(c, ERR_NO_KEY);
        return;
    }
    if (same_key(&src, &dst)) {
        if (nx) reply_int(c, 0);
        else reply_ok(c);
        return;
    }
    struct kv *old = lookup_write(c, &dst);
    if (nx && old) {
        reply_int(c, 0);
        return;
    }
    int old_type = old ? kv_type(old) : -1;
    db_notice(&dst, KEV_NEW);
    struct kv *e = db_take(&src, c->now_ms, KEV_RENAME_FROM);
    int type = kv_type(e);
    db_put_noticed(&dst, kv_rekey(e, dst.key, dst.klen), KEV_RENAME_TO);
    /* Both ends of the rename are one change. */
    db_dirty_add(-1);
    if (old_type >= 0) db_notice_replaced(&dst, old_type, type);
    if (nx) reply_int(c, 1);
    else reply_ok(c);
}

void cmd_rename(struct cmd_ctx *c) { rename_generic(c, 0); }
void cmd_renamenx(struct cmd_ctx *c) { rename_generic(c, 1); }

/* COPY source destination [DB destination-db] [REPLACE]. Options are
 * checked in order, then "same object", then the keys, as Redis does. */
void cmd_copy(struct cmd_ctx *c) {
    int dbid = c->db, replace = 0;
    struct argcur a;
    ac_init(&a, c, 3);
    while (ac_more(&a)) {
        if (ac_is(&a, "REPLACE")) replace = 1;
        else if (ac_is_with(&a, "DB", 1)) ac_db(&a, &dbid);
        else ac_fail(&a, HK_ERR_SYNTAX);
    }
    if (!ac_ok(&a)) return;
    struct keyref src, dst;
    key_of(c, 1, &src);
    /* Same shard index in any database, so dispatch's lock covers dst. */
    keyref_init(&dst, dbid, c->argv[2].ptr, c->argv[2].len);
    if (dbid == c->db && same_key(&src, &dst)) {
        reply_status(c, HK_ERR_SAME_OBJECT);
        return;
    }
    struct kv *e = lookup_read(c, &src);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    struct kv *old = lookup_write(c, &dst);
    if (old && !replace) {
        reply_int(c, 0);
        return;
    }
    /* An existing destination is replaced (and freed); it still reports
     * "new", as Redis deletes it and adds the copy, and "overwritten"
     * after copy_to. */
    int old_type = old ? kv_type(old) : -1;
    int type = kv_type(e);
    db_notice(&dst, KEV_NEW);
    db_put_noticed(&dst, kv_dup(e, dst.key, dst.klen, kv_expire(e)), KEV_COPY_TO);
    if (old_type >= 0) db_notice_replaced(&dst, old_type, type);
    reply_int(c, 1);
}

/* MOVE key db: fails (0) when the key is absent here or present there. */
void cmd_move(struct cmd_ctx *c) {
    int dbid;
    struct argcur a;
    ac_init(&a, c, 2);
    ac_db(&a, &dbid);
    if (!ac_ok(&a)) return;
    if (dbid == c->db) {
        reply_status(c, HK_ERR_SAME_OBJECT);
        return;
    }
    struct keyref src, dst;
    key_of(c, 1, &src);
    keyref_init(&dst, dbid, c->argv[1].ptr, c->argv[1].len);
    if (!lookup_write(c, &src) || lookup_write(c, &dst)) {
        reply_int(c, 0);
        return;
    }
    db_notice(&dst, KEV_NEW); /* ahead of move_from, as in Redis */
    struct kv *e = db_take(&src, c->now_ms, KEV_MOVE_FROM);
    db_put_noticed(&dst, e, KEV_MOVE_TO);
    /* Both ends of the move are one change. */
    db_dirty_add(-1);
    reply_int(c, 1);
}

/* SWAPDB runs with every shard locked (CMD_ALL_SHARDS) so no command sees
 * one database half swapped. Clients keep their selected index and see
 * the other data. */
void cmd_swapdb(struct cmd_ctx *c) {
    int a, b;
    if (!arg_int_or_reply(c, &c->argv[1], &a, "ERR invalid first DB index")) return;
    if (!arg_int_or_reply(c, &c->argv[2], &b, "ERR invalid second DB index")) return;
    if (a < 0 || a >= ks.ndb || b < 0 || b >= ks.ndb) {
        reply_error(c, ERR_DB_INDEX);
        return;
    }
    ks_swapdb(a, b);
    reply_ok(c);
}

/* ---- KEYS, SCAN, RANDOMKEY --------------------------------------------- */

struct keys_ctx {
    struct cmd_ctx *c;
    const char *pat;
    size_t plen;
    int allkeys;
    long long n;
};

static void keys_visit(struct kv *e, void *arg) {
    struct keys_ctx *x = arg;
    if (kv_has_expire(e) && kv_expire(e) <= x->c->now_ms) return;
    const char *k = kv_key(e);
    size_t kl = kv_keylen(e);
    if (!x->allkeys && !hk_globmatch(x->pat, x->plen, k, kl, 0)) return;
    reply_bulk(x->c, k, kl);
    x->n++;
}

/* KEYS pattern: one shard locked at a time (unless the context holds them
 * all, inside a transaction), so the reply is not a snapshot of the whole
 * database (Redis's is); every key present for the whole command is in
 * it, which is all a client can rely on anyway. Expired keys are skipped,
 * not deleted. */
void cmd_keys(struct cmd_ctx *c) {
    struct keys_ctx x = {c, c->argv[1].ptr, c->argv[1].len, 0, 0};
    x.allkeys = x.plen == 1 && x.pat[0] == '*';
    void *h = reply_defer(c);
    for (unsigned s = 0; s < ks.nshards; s++) {
        exec_shard_enter(c, s);
        uint64_t cur = 0;
        do cur = shard_scan(s, c->db, cur, keys_visit, &x);
        while (cur);
        exec_shard_leave(c, s);
    }
    reply_fill_array(c, h, x.n);
}

/* Keys gathered by a SCAN call: copied out under the shard lock, replied
 * after the cursor is known. Each key is a size_t length then its bytes. */
struct scan_ctx {
    long long now_ms;
    const char *pat, *type;
    size_t plen, tlen;
    char *buf;
    size_t len, cap;
    long long n;
    struct kv **expired; /* expired entries seen, deleted after the bucket walk */
    size_t nexp, expcap;
};

static void scan_push(struct scan_ctx *x, const char *k, size_t kl) {
    size_t need = x->len + sizeof(size_t) + kl;
    if (need > x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 1024;
        while (cap < need) cap *= 2;
        x->buf = hk_realloc(x->buf, cap);
        x->cap = cap;
    }
    memcpy(x->buf + x->len, &kl, sizeof(size_t));
    memcpy(x->buf + x->len + sizeof(size_t), k, kl);
    x->len = need;
    x->n++;
}

static void scan_visit(struct kv *e, void *arg) {
    struct scan_ctx *x = arg;
    if (kv_has_expire(e) && kv_expire(e) <= x->now_ms) {
        if (x->nexp == x->expcap) {
            x->expcap = x->expcap ? x->expcap * 2 : 16;
            x->expired = hk_realloc(x->expired, x->expcap * sizeof(*x->expired));
        }
        x->expired[x->nexp++] = e;
        return;
    }
    const char *k = kv_key(e);
    size_t kl = kv_keylen(e);
    if (x->pat && !hk_globmatch(x->pat, x->plen, k, kl, 0)) return;
    /* Redis 7.2 compares the name case-insensitively; an unknown name
     * matches nothing (the error for it only comes in Redis 8). */
    if (x->type && !hk_eqi(x->type, x->tlen, obj_type_name(kv_type(e)))) return;
    scan_push(x, k, kl);
}

/* SCAN cursor [MATCH pattern] [COUNT count] [TYPE type].
 *
 * Cursor layout: the low ks.shard_bits bits name a shard, the rest is that
 * shard's reverse-binary bucket cursor (ht_scan). Shards are visited in
 * ascending order and each one's table with the reverse-binary cursor, so
 * every key present for the whole iteration is returned even if tables
 * grow or shrink between calls; a key may come back more than once. COUNT
 * is a hint, as in Redis: a call stops once it has `count` keys or has
 * visited count*10 buckets. Empty shards cost nothing but a lock. */
void cmd_scan(struct cmd_ctx *c) {
    uint64_t cursor;
    if (!scan_cursor_or_reply(c, &c->argv[1], &cursor)) return;
    struct scan_args sa;
    if (!scan_args_or_reply(c, 2, SCAN_ALLOW_TYPE, &sa)) return;
    long long count = sa.count;
    struct scan_ctx x = {.now_ms = c->now_ms, .pat = sa.pat, .plen = sa.plen, .type = sa.type, .tlen = sa.tlen};

    long long maxvisits = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10, visits = 0;
    unsigned shard = (unsigned)(cursor & (ks.nshards - 1));
    uint64_t bc = ks.shard_bits >= 64 ? 0 : cursor >> ks.shard_bits;
    int done = 0;
    for (;;) {
        exec_shard_enter(c, shard);
        struct ktable *t = &ks.shards[shard].tables[c->db];
        if (t->count) {
            do {
                bc = shard_scan(shard, c->db, bc, scan_visit, &x);
                visits++;
            } while (bc != 0 && x.n < count && visits < maxvisits);
        } else {
            bc = 0;
        }
        /* Lazy expiry of what the walk found expired; no walk is running
         * now, and db_find deletes without resizing the table. */
        for (size_t i = 0; i < x.nexp; i++) {
            struct kv *e = x.expired[i];
            struct keyref k;
            keyref_init(&k, c->db, kv_key(e), kv_keylen(e));
            db_find(&k, c->now_ms);
        }
        x.nexp = 0;
        exec_shard_leave(c, shard);
        if (bc != 0) break;
        if (++shard == ks.nshards) {
            done = 1;
            break;
        }
        if (x.n >= count || visits >= maxvisits) break;
    }
    uint64_t next = done ? 0 : (bc << ks.shard_bits) | shard;

    reply_array(c, 2);
    char nb[24];
    int nl = hk_ull2str(nb, (unsigned long long)next);
    reply_bulk(c, nb, (size_t)nl);
    reply_array(c, x.n);
    for (size_t off = 0; off < x.len;) {
        size_t kl;
        memcpy(&kl, x.buf + off, sizeof(size_t));
        reply_bulk(c, x.buf + off + sizeof(size_t), kl);
        off += sizeof(size_t) + kl;
    }
    hk_free(x.buf);
    hk_free(x.expired);
}

/* With shard s locked: reply a random live key of db and return 1, or
 * return 0 when the shard has none. */
static int randomkey_in_shard(struct cmd_ctx *c, unsigned s) {
    struct ktable *t = &ks.shards[s].tables[c->db];
    while (t->count) {
        struct kv *head = kt_random_bucket(t, hk_rand64());
        if (!head) return 0;
        unsigned len = 0;
        for (struct kv *n = head; n; n = kt_next(n)) len++;
        unsigned pick = (unsigned)(hk_rand64() % len);
        struct kv *e = head;
        while (pick--) e = kt_next(e);
        /* An expired key met on the way is deleted (the loop then ends:
         * each round answers or shrinks the table), unless expiry is off
         * (a journal being applied): then it is answered, as a Redis
         * replica answers keys its master has not deleted yet. */
        if (kv_has_expire(e) && kv_expire(e) <= c->now_ms && !store_no_expire) {
            struct keyref k;
            keyref_init(&k, c->db, kv_key(e), kv_keylen(e));
            db_find(&k, c->now_ms); /* deletes it */
            continue;
        }
        reply_bulk(c, kv_key(e), kv_keylen(e));
        return 1;
    }
    return 0;
}

/* RANDOMKEY: a few random shards first (cheap when the database is well
 * filled), then a sweep from a random start so a sparse database still
 * finds its keys and an empty one answers null after one pass. */
void cmd_randomkey(struct cmd_ctx *c) {
    unsigned mask = ks.nshards - 1;
    for (int i = 0; i < 8; i++) {
        unsigned s = (unsigned)(hk_rand64() & mask);
        exec_shard_enter(c, s);
        int found = randomkey_in_shard(c, s);
        exec_shard_leave(c, s);
        if (found) return;
    }
    unsigned start = (unsigned)(hk_rand64() & mask);
    for (unsigned i = 0; i < ks.nshards; i++) {
        unsigned s = (start + i) & mask;
        exec_shard_enter(c, s);
        int found = randomkey_in_shard(c, s);
        exec_shard_leave(c, s);
        if (found) return;
    }
    reply_null(c);
}

/* ---- expiry ------------------------------------------------------------- */

#define EXPIRE_NX (1 << 0)
#define EXPIRE_XX (1 << 1)
#define EXPIRE_GT (1 << 2)
#define EXPIRE_LT (1 << 3)

/* EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT: the time is relative to `base`
 * (now, or 0 for the AT forms) in seconds or milliseconds. Options are
 * checked before the number, the number before the key, as in Redis. A
 * time at or before now deletes the key (and still answers 1). Negative
 * times are accepted; only overflow of the conversion is an error. */
static void expire_generic(struct cmd_ctx *c, long long base, int seconds) {
    int flags = 0;
    for (int j = 3; j < c->argc; j++) {
        const hk_slice *a = &c->argv[j];
        if (arg_is(a, "NX")) flags |= EXPIRE_NX;
        else if (arg_is(a, "XX")) flags |= EXPIRE_XX;
        else if (arg_is(a, "GT")) flags |= EXPIRE_GT;
        else if (arg_is(a, "LT")) flags |= EXPIRE_LT;
        else {
            reply_errorf(c, "ERR Unsupported option %.*s", (int)a->len, a->ptr);
            return;
        }
    }
    if ((flags & EXPIRE_NX) && (flags & (EXPIRE_XX | EXPIRE_GT | EXPIRE_LT))) {
        reply_error(c, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if ((flags & EXPIRE_GT) && (flags & EXPIRE_LT)) {
        reply_error(c, "ERR GT and LT options at the same time are not compatible");
        return;
    }
    long long when;
    if (!hk_str2ll(c->argv[2].ptr, c->argv[2].len, &when)) {
        reply_error(c, ERR_NOT_INT);
        return;
    }
    if (seconds) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) {
            reply_status(c, HK_ERR_INVALID_EXPIRE);
            return;
        }
        when *= 1000;
    }
    if (when > LLONG_MAX - base) {
        reply_status(c, HK_ERR_INVALID_EXPIRE);
        return;
    }
    when += base;

    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    long long cur = kv_expire(e); /* -1: no TTL, which counts as infinite */
    if (((flags & EXPIRE_NX) && cur != -1) || ((flags & EXPIRE_XX) && cur == -1) ||
        ((flags & EXPIRE_GT) && (cur == -1 || when <= cur)) || ((flags & EXPIRE_LT) && cur != -1 && when >= cur)) {
        reply_int(c, 0);
        return;
    }
    set_deadline(c, &k, e, when);
    reply_int(c, 1);
}

void cmd_expire(struct cmd_ctx *c) { expire_generic(c, c->now_ms, 1); }
void cmd_pexpire(struct cmd_ctx *c) { expire_generic(c, c->now_ms, 0); }
void cmd_expireat(struct cmd_ctx *c) { expire_generic(c, 0, 1); }
void cmd_pexpireat(struct cmd_ctx *c) { expire_generic(c, 0, 0); }

/* TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 when the key is absent, -1 when it
 * has no TTL; seconds are rounded to the nearest, as Redis does. */
static void ttl_generic(struct cmd_ctx *c, int ms, int absolute) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read_notouch(c, &k);
    if (!e) {
        reply_int(c, -2);
        return;
    }
    long long when = kv_expire(e);
    if (when == -1) {
        reply_int(c, -1);
        return;
    }
    long long v = absolute ? when : when - c->now_ms;
    if (v < 0) v = 0;
    /* Rounded without computing v + 500, which overflows near LLONG_MAX. */
    reply_int(c, ms ? v : v / 1000 + (v % 1000 >= 500));
}

void cmd_ttl(struct cmd_ctx *c) { ttl_generic(c, 0, 0); }
void cmd_pttl(struct cmd_ctx *c) { ttl_generic(c, 1, 0); }
void cmd_expiretime(struct cmd_ctx *c) { ttl_generic(c, 0, 1); }
void cmd_pexpiretime(struct cmd_ctx *c) { ttl_generic(c, 1, 1); }

void cmd_persist(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (!e || !kv_has_expire(e)) {
        reply_int(c, 0);
        return;
    }
    db_set_expire(&k, e, -1, KEV_PERSIST);
    reply_int(c, 1);
}

/* ---- OBJECT ------------------------------------------------------------- */

/* The key of an OBJECT subcommand (argv[2]) without touching its clock;
 * replies null and returns NULL when absent. A miss counts, but raises
 * no keymiss event, as in Redis. */
static struct kv *object_lookup(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 2, &k);
    int saved = store_touch;
    store_touch = 0;
    struct kv *e = db_find_read_quiet(&k, c->now_ms);
    store_touch = saved;
    if (!e) reply_null(c);
    return e;
}

void cmd_object_encoding(struct cmd_ctx *c) {
    struct kv *e = object_lookup(c);
    if (e) reply_bulk_cstr(c, obj_enc_name(kv_enc(e)));
}

/* The entry clock holds an LRU time or an LFU counter, as the policy of
 * the moment says (db.h): each subcommand answers only for its own kind,
 * with Redis's error for the other (after the key lookup, as Redis orders
 * it). */
void cmd_object_freq(struct cmd_ctx *c) {
    struct kv *e = object_lookup(c);
    if (!e) return;
    if (!maxmem_policy_lfu((int)CFG(maxmemory_policy))) {
        reply_error(c, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
                       "that when switching between policies at runtime LRU and LFU data will take some time to "
                       "adjust.");
        return;
    }
    reply_int(c, kv_lfu_freq(e, c->now_ms));
}

void cmd_object_idletime(struct cmd_ctx *c) {
    struct kv *e = object_lookup(c);
    if (!e) return;
    if (maxmem_policy_lfu((int)CFG(maxmemory_policy))) {
        reply_error(c, "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
                       "switching between policies at runtime LRU and LFU data will take some time to adjust.");
        return;
    }
    reply_int(c, kv_idle_ms(e, c->now_ms) / 1000);
}

/* Redis answers INT_MAX for its shared small-integer objects and the real
 * count otherwise. HotKV shares no value between keys: small integers are
 * stored inline in each key's entry and every other value has exactly one
 * owner (COPY duplicates), so 1 is the true count for every key. */
void cmd_object_refcount(struct cmd_ctx *c) {
    if (object_lookup(c)) reply_int(c, 1);
}

void cmd_object_help(struct cmd_ctx *c) {
    static const char *help[] = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    };
    size_t n = sizeof(help) / sizeof(help[0]);
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) reply_simple(c, help[i]);
}
