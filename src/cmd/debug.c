/* debug.c - the DEBUG command: OBJECT, LISTPACK, DIGEST, DIGEST-VALUE,
 * PROTOCOL, SLEEP, SET-ACTIVE-EXPIRE, CHANGE-REPL-ID, STRINGMATCH-LEN,
 * ERROR, LOG, and JOURNAL, HotKV's window on the propagation journal for
 * tests.
 *
 * DEBUG is protected as in Redis: `enable-debug-command no` (the default)
 * refuses it, `local` allows loopback and unix socket clients, `yes`
 * allows all; dispatch applies that before authentication (dispatch.c).
 * DIGEST is Redis's dataset fingerprint (types/digest.h), so a server and
 * its replay, or HotKV and Redis holding the same data, can be compared.
 * JOURNAL START/READ/STOP records what every write propagates
 * (server/journal.h) and hands it out as RESP, ready to be replayed into
 * another server. Subcommands Redis only has in some builds (MALLCTL and
 * MALLCTL-STR need jemalloc; HotKV uses mimalloc) or that need machinery
 * HotKV lacks (RELOAD, LOADAOF, POPULATE's unpropagated writes, crash
 * helpers) answer Redis's unknown-subcommand error, as a Redis built
 * without them does. */
#include "../core/alloc.h"
#include "../core/listpack.h"
#include "../server/config.h"
#include "../server/journal.h"
#include "../server/replid.h"
#include "../types/digest.h"
#include "../types/hash.h"
#include "../types/list.h"
#include "../types/rdblen.h"
#include "../types/types.h"
#include "../server/snapshot.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- DIGEST ------------------------------------------------------------ */

/* Redis's computeDatasetDigest: per non-empty database (in order) mix in
 * its index, then fold in every key's digest by xor. Logically expired
 * keys not yet deleted count, as in Redis. Every shard is held. */
static void digest_dataset(struct cmd_ctx *c, void *arg) {
    (void)c;
    unsigned char *final = arg;
    memset(final, 0, 20);
    for (int db = 0; db < ks.ndb; db++) {
        unsigned long long n = 0;
        for (unsigned s = 0; s < ks.nshards; s++) n += ks.shards[s].tables[db].count;
        if (!n) continue;
        uint32_t id = htonl((uint32_t)db);
        dg_mix(final, &id, sizeof(id));
        for (unsigned s = 0; s < ks.nshards; s++) {
            struct kt_iter it;
            kt_iter_init(&it, &ks.shards[s].tables[db]);
            for (struct kv *e; (e = kt_iter_next(&it));) {
                unsigned char d[20];
                kv_digest(e, d);
                dg_xor(final, d, 20);
            }
        }
    }
}

struct digest_values {
    int first;
    char (*hex)[41];
};

/* One digest per key argument (20 zero bytes for a missing key). */
static void digest_keys(struct cmd_ctx *c, void *arg) {
    struct digest_values *v = arg;
    for (int j = v->first; j < c->argc; j++) {
        unsigned char d[20] = {0};
        struct keyref k;
        keyref_init(&k, c->db, c->argv[j].ptr, c->argv[j].len);
        const struct kv *e = db_peek(&k);
        if (e) kv_digest_value(e, d);
        dg_hex(d, v->hex[j - v->first]);
    }
}

static void debug_digest(struct cmd_ctx *c) {
    unsigned char d[20];
    if (exec_with_all_shards(c, digest_dataset, d) != HK_OK) {
        reply_status(c, HK_ERR_LOCK_CONFLICT);
        return;
    }
    char hex[41];
    dg_hex(d, hex);
    reply_simple(c, hex);
}

static void debug_digest_value(struct cmd_ctx *c) {
    int n = c->argc - 2;
    struct digest_values v = {2, hk_malloc((size_t)(n ? n : 1) * sizeof(*v.hex))};
    if (exec_with_all_shards(c, digest_keys, &v) != HK_OK) {
        reply_status(c, HK_ERR_LOCK_CONFLICT);
    } else {
        reply_array(c, n);
        for (int i = 0; i < n; i++) reply_simple(c, v.hex[i]);
    }
    hk_free(v.hex);
}

/* ---- JOURNAL -------------------------------------------------------------- */

#define JOURNAL_DEFAULT_LIMIT (64LL * 1024 * 1024)

static void journal_start_all(struct cmd_ctx *c, void *arg) {
    (void)c;
    journal_start(*(size_t *)arg);
}

static void journal_stop_all(struct cmd_ctx *c, void *arg) {
    (void)c;
    (void)arg;
    journal_stop();
}

/* DEBUG JOURNAL START [max-unread-bytes-per-worker] | READ | STOP |
 * APPLY ON|OFF. APPLY marks this connection as one that applies a
 * journal: its commands run as an AOF load or a replica's stream will
 * (CTX_REPLAY: nothing expires by time, deadlines in the past are kept,
 * nothing propagates), so a replay ends in exactly the dataset recorded,
 * keys the source had not yet reaped included. */
static void debug_journal(struct cmd_ctx *c) {
    const hk_slice *op = &c->argv[2];
    if (arg_is(op, "start") && c->argc <= 4) {
        long long limit = JOURNAL_DEFAULT_LIMIT;
        if (c->argc == 4 && (!hk_str2ll(c->argv[3].ptr, c->argv[3].len, &limit) || limit < 1)) {
            reply_status(c, HK_ERR_NOT_POSITIVE);
            return;
        }
        if (limit > (long long)UINT32_MAX) limit = UINT32_MAX;
        size_t l = (size_t)limit;
        journal_reader_lock();
        int st = exec_with_all_shards(c, journal_start_all, &l);
        journal_reader_unlock();
        if (st != HK_OK) reply_status(c, st);
        else reply_ok(c);
    } else if (arg_is(op, "stop") && c->argc == 3) {
        if (exec_with_all_shards(c, journal_stop_all, NULL) != HK_OK) reply_status(c, HK_ERR_LOCK_CONFLICT);
        else reply_ok(c);
    } else if (arg_is(op, "apply") && c->argc == 4 && c->cl &&
               (arg_is(&c->argv[3], "on") || arg_is(&c->argv[3], "off"))) {
        if (arg_is(&c->argv[3], "on")) c->cl->flags |= CLIENT_REPLAY;
        else c->cl->flags &= ~CLIENT_REPLAY;
        reply_ok(c);
    } else if (arg_is(op, "read") && c->argc == 3) {
        char *buf;
        size_t len;
        int lost = journal_read(&buf, &len);
        if (lost < 0) reply_error(c, "ERR journal overflowed its limit: records were lost; DEBUG JOURNAL START again");
        else reply_bulk(c, buf ? buf : "", len);
        hk_free(buf);
    } else {
        reply_error(c, ERR_SYNTAX);
    }
}

/* ---- QUICKLIST-PACKED-THRESHOLD ------------------------------------------ */

/* The size as Redis's memtoull reads it: digits, then an optional unit
 * (b, k, kb, m, mb, g, gb; any case); a sign or anything else is an error.
 * An overflowing value saturates, which the caller then refuses. */
static int debug_parse_size(const hk_slice *a, unsigned long long *out) {
    size_t i = 0;
    unsigned long long v = 0;
    int over = 0;
    for (; i < a->len && isdigit((unsigned char)a->ptr[i]); i++) {
        unsigned d = (unsigned)(a->ptr[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) over = 1;
        else v = v * 10 + d;
    }
    static const struct {
        const char *u;
        unsigned long long mul;
    } units[] = {{"", 1}, {"b", 1}, {"k", 1000}, {"kb", 1024}, {"m", 1000000}, {"mb", 1024 * 1024},
                 {"g", 1000000000}, {"gb", 1024ULL * 1024 * 1024}};
    hk_slice u = {a->ptr + i, a->len - i};
    for (size_t k = 0; k < sizeof(units) / sizeof(*units); k++) {
        if (!arg_is(&u, units[k].u)) continue;
        if (over || (v && v > ULLONG_MAX / units[k].mul)) *out = ULLONG_MAX;
        else *out = v * units[k].mul;
        return 1;
    }
    return 0;
}

/* DEBUG QUICKLIST-PACKED-THRESHOLD <size>: elements of at least that many
 * bytes get a plain node of their own (0 restores the default, 1GB). */
static void debug_packed_threshold(struct cmd_ctx *c) {
    unsigned long long sz;
    if (!debug_parse_size(&c->argv[2], &sz) || !ql_set_packed_threshold(sz)) {
        reply_error(c, "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
        return;
    }
    reply_ok(c);
}

/* ---- OBJECT and LISTPACK ------------------------------------------------ */

/* The entry of argv[2] as Redis's dictFind sees it: logically expired
 * keys included, no clock touched. Every shard is held. */
static struct kv *peek_arg(struct cmd_ctx *c) {
    struct keyref k;
    keyref_init(&k, c->db, c->argv[2].ptr, c->argv[2].len);
    return db_peek(&k);
}

struct object_info {
    int found;
    char line[512];
};

static void object_line(struct cmd_ctx *c, void *arg) {
    struct object_info *o = arg;
    struct kv *e = peek_arg(c);
    if (!e) return;
    o->found = 1;
    /* Encoding-specific fields (the quicklist's ql_*), from the type. */
    char extra[160] = "";
    const struct type_ops *ops = type_table[kv_type(e)];
    if (ops && ops->debug_fields) ops->debug_fields(e, extra, sizeof(extra));
    /* Redis's refcount is INT_MAX only for its shared small integers;
     * HotKV shares no value, so every value has one owner. */
    snprintf(o->line, sizeof(o->line),
             "Value at:%p refcount:1 encoding:%s serializedlength:%zu lru:%u lru_seconds_idle:%lld%s", (void *)e,
             obj_enc_name(kv_enc(e)), rdb_value_len_compress(e, CFG(rdbcompression) != 0), kv_clock(e), kv_idle_ms(e, c->now_ms) / 1000, extra);
}

static void debug_object(struct cmd_ctx *c) {
    struct object_info o = {0};
    if (exec_with_all_shards(c, object_line, &o) != HK_OK) reply_status(c, HK_ERR_LOCK_CONFLICT);
    else if (!o.found) reply_error(c, ERR_NO_KEY);
    else reply_simple(c, o.line);
}

/* The packed array of a listpack-encoded value, element by element. Not
 * Redis's byte layout (core/listpack.h says how HotKV's differs), so the
 * dump names what HotKV stores: sizes, each element's offset and value. */
static void lp_repr(const lpack *lp, struct sbuf *b) {
    size_t n = 0;
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p)) n++;
    sb_catf(b, "{total bytes %zu} {num entries %zu}\n", lp_bytes(lp), n);
    size_t i = 0;
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p), i++) {
        struct lp_val v;
        lp_get(lp, p, &v);
        sb_catf(b, "{\n\tindex: %5zu,\n\toffset: %5zu,\n\t%s", i, p, v.is_int ? "[int]" : "[str]");
        if (v.len > 40) sb_catf(b, "%.40s...\n}\n", v.s);
        else sb_catf(b, "%.*s\n}\n", (int)v.len, v.s);
    }
    sb_catf(b, "{end}\n\n");
}

struct listpack_dump {
    int found, packed;
    struct sbuf text;
};

static void listpack_repr(struct cmd_ctx *c, void *arg) {
    struct listpack_dump *d = arg;
    struct kv *e = peek_arg(c);
    /* Looked up as OBJECT looks keys up: an expired key is not there. */
    if (!e || (kv_has_expire(e) && kv_expire(e) <= c->now_ms)) return;
    d->found = 1;
    /* A hash with field TTLs ("listpackex") is still a listpack. */
    const lpack *lp = kv_enc(e) == ENC_LISTPACK ? kv_ptr(e)
                      : kv_type(e) == OBJ_HASH && kv_enc(e) == ENC_LISTPACK_EX ? hashv_listpack(e)
                                                                               : NULL;
    if (!lp) return;
    d->packed = 1;
    lp_repr(lp, &d->text);
}

static void debug_listpack(struct cmd_ctx *c) {
    struct listpack_dump d = {0};
    if (exec_with_all_shards(c, listpack_repr, &d) != HK_OK) {
        reply_status(c, HK_ERR_LOCK_CONFLICT);
    } else if (!d.found) {
        reply_error(c, ERR_NO_KEY);
    } else if (!d.packed) {
        reply_error(c, "ERR Not a listpack encoded object.");
    } else {
        /* One write, after the locks are gone, so lines from other
         * threads do not interleave with the dump. */
        ssize_t w = write(STDOUT_FILENO, d.text.p, d.text.len);
        (void)w;
        reply_simple(c, "Listpack structure printed on stdout");
    }
    sb_free(&d.text);
}

/* ---- PROTOCOL ------------------------------------------------------------ */

/* One test value of each RESP3 type, with the RESP2 fallback the reply
 * layer gives each, as Redis's DEBUG PROTOCOL does. */
static void debug_protocol(struct cmd_ctx *c) {
    const hk_slice *t = &c->argv[2];
    if (arg_is(t, "string")) {
        reply_bulk_cstr(c, "Hello World");
    } else if (arg_is(t, "integer")) {
        reply_int(c, 12345);
    } else if (arg_is(t, "double")) {
        reply_double(c, 3.141);
    } else if (arg_is(t, "bignum")) {
        if (!reply_muted(c)) rw_bignum(c->out, c->resp, "1234567999999999999999999999999999999", 37);
    } else if (arg_is(t, "null")) {
        reply_null(c);
    } else if (arg_is(t, "array") || arg_is(t, "set")) {
        if (arg_is(t, "array")) reply_array(c, 3);
        else reply_set(c, 3);
        for (int j = 0; j < 3; j++) reply_int(c, j);
    } else if (arg_is(t, "map")) {
        reply_map(c, 3);
        for (int j = 0; j < 3; j++) {
            reply_int(c, j);
            reply_bool(c, j == 1);
        }
    } else if (arg_is(t, "attrib")) {
        /* An attribute precedes a real reply; RESP2 has no attributes. */
        if (c->resp >= 3 && !reply_muted(c)) {
            rw_agg(c->out, '|', 1);
            reply_bulk_cstr(c, "key-popularity");
            reply_array(c, 2);
            reply_bulk_cstr(c, "key:123");
            reply_int(c, 90);
        }
        reply_bulk_cstr(c, "Some real reply following the attribute");
    } else if (arg_is(t, "push")) {
        if (c->resp < 3) {
            reply_error(c, "ERR RESP2 is not supported by this command");
            return;
        }
        reply_push(c, 2);
        reply_bulk_cstr(c, "server-cpu-usage");
        reply_int(c, 42);
        /* A push is not the command's reply: one follows it. */
        reply_bulk_cstr(c, "Some real reply following the push reply");
    } else if (arg_is(t, "true") || arg_is(t, "false")) {
        reply_bool(c, arg_is(t, "true"));
    } else if (arg_is(t, "verbatim")) {
        reply_verbatim(c, "This is a verbatim\nstring", 25, "txt");
    } else {
        reply_error(c, "ERR Wrong protocol type name. Please use one of the following: "
                       "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
    }
}

/* ---- STRINGMATCH-LEN ------------------------------------------------------- */

/* Redis's fuzz test of its glob matcher: ten million random patterns and
 * strings of up to 31 bytes each (any of the 128 ASCII codes, so broken
 * classes and escapes too) through hk_globmatch, which must neither crash
 * nor run away. Blocks the calling worker while it runs, as Redis blocks. */
static void debug_stringmatch_test(struct cmd_ctx *c) {
    uint64_t x = (uint64_t)hk_mstime() * 2654435761u + 1;
    char str[32], pat[32];
    long long matches = 0;
    for (int cycle = 0; cycle < 10000000; cycle++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t sl = (size_t)(x % sizeof(str)), pl = (size_t)((x >> 8) % sizeof(pat));
        uint64_t y = x;
        for (size_t j = 0; j < sl; j++) {
            y = y * 6364136223846793005ULL + 1442695040888963407ULL;
            str[j] = (char)((y >> 33) % 128);
        }
        for (size_t j = 0; j < pl; j++) {
            y = y * 6364136223846793005ULL + 1442695040888963407ULL;
            pat[j] = (char)((y >> 33) % 128);
        }
        matches += hk_globmatch(pat, pl, str, sl, 0);
    }
    hk_log(LL_VERBOSE, "DEBUG STRINGMATCH-LEN: %lld matches", matches);
    reply_simple(c, "Apparently Redis did not crash: test passed");
}

/* ---- SLEEP and the command ---------------------------------------------- */

/* SLEEP stalls the calling worker (and so its clients) without holding any
 * shard lock; like Redis it reads the number leniently (what does not
 * parse is 0) and sleeps once. */
static void debug_sleep(struct cmd_ctx *c) {
    char buf[64];
    size_t n = c->argv[2].len < sizeof(buf) - 1 ? c->argv[2].len : sizeof(buf) - 1;
    memcpy(buf, c->argv[2].ptr, n);
    buf[n] = '\0';
    double secs = strtod(buf, NULL);
    if (secs > 1e9) secs = 1e9; /* keeps the conversion to time_t defined */
    if (secs > 0) {
        struct timespec ts;
        ts.tv_sec = (time_t)secs;
        ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
        while (nanosleep(&ts, &ts) != 0) {
        }
    }
    reply_ok(c);
}

/* Redis reads these flags with atoi. */
static int arg_atoi(const hk_slice *a) {
    char buf[32];
    size_t n = a->len < sizeof(buf) - 1 ? a->len : sizeof(buf) - 1;
    memcpy(buf, a->ptr, n);
    buf[n] = '\0';
    return atoi(buf);
}

struct reload_arg {
    const char *path;
    int flush, rc;
    char err[512];
};

/* Every shard held: nothing else runs between the flush and the load. */
static void reload_all(struct cmd_ctx *c, void *arg) {
    (void)c;
    struct reload_arg *r = arg;
    /* Not a write of this command: nothing propagates or counts. */
    struct db_sink *saved = db_sink;
    db_sink = NULL;
    if (r->flush) {
        struct flushed *f = ks_flush(-1);
        ks_flushed_free(f);
    }
    db_sink = saved;
    struct rdb_load_result res;
    r->rc = rdb_load_file_ex(r->path, &res, 1, r->err, sizeof(r->err));
}

/* DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save, flush, load back. A
 * loaded key replaces one of the same name (MERGE's behaviour; without
 * it Redis stops on a duplicate). */
static void debug_reload(struct cmd_ctx *c) {
    int flush = 1, save = 1;
    for (int i = 2; i < c->argc; i++) {
        if (arg_is(&c->argv[i], "merge")) {
        } else if (arg_is(&c->argv[i], "noflush")) {
            flush = 0;
        } else if (arg_is(&c->argv[i], "nosave")) {
            save = 0;
        } else {
            reply_error(c, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
            return;
        }
    }
    char path[1024];
    snapshot_path(path, sizeof(path));
    if (save) {
        char err[512];
        struct snap_opts o = {.path = path};
        if (snapshot_run(&o, err, sizeof(err)) < 0) {
            hk_log(LL_WARNING, "Failed saving the DB: %s", err);
            reply_error(c, "ERR");
            return;
        }
    }
    struct reload_arg r = {path, flush, 0, ""};
    if (exec_with_all_shards(c, reload_all, &r) != HK_OK) {
        reply_error(c, "ERR DEBUG RELOAD can't run here");
        return;
    }
    if (r.rc != 0) {
        hk_log(LL_WARNING, "Error trying to load the RDB dump: %s", r.rc > 0 ? "no such file" : r.err);
        reply_error(c, "ERR Error trying to load the RDB dump, check server logs.");
        return;
    }
    hk_log(LL_NOTICE, "DB reloaded by DEBUG RELOAD");
    reply_ok(c);
}

void cmd_debug(struct cmd_ctx *c) {
    const hk_slice *sub = &c->argv[1];
    if (c->argc == 2 && arg_is(sub, "help")) {
        static const char *const lines[] = {
            "CHANGE-REPL-ID",
            "    Change the replication IDs of the instance.",
            "    Dangerous: should be used only for testing the replication subsystem.",
            "DIGEST",
            "    Output a hex signature representing the current DB content.",
            "DIGEST-VALUE <key> [<key> ...]",
            "    Output a hex signature of the values of all the specified keys.",
            "ERROR <string>",
            "    Return a Redis protocol error with <string> as message. Useful for clients",
            "    unit tests to simulate Redis errors.",
            "JOURNAL START [<max-bytes>] | READ | STOP",
            "    Record what writes propagate; READ returns the merged record as RESP commands.",
            "JOURNAL APPLY ON|OFF",
            "    Run this connection's commands as a replayed journal (no expiry by time).",
            "LOG <message>",
            "    Write <message> to the server log.",
            "OBJECT <key>",
            "    Show low level info about `key` and associated value.",
            "RELOAD [option ...]",
            "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
            "    * MERGE: conflicting keys will be loaded from RDB.",
            "    * NOFLUSH: the existing database will not be removed before load, but",
            "      conflicting keys will generate an exception and kill the server.",
            "    * NOSAVE: the database will be loaded from an existing RDB file.",
            "    Examples:",
            "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
            "      the database.",
            "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
            "      existing RDB file.",
            "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
            "      file to the database.",
            "PROTOCOL <type>",
            "    Reply with a test value of the specified type. <type> can be: string,",
            "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
            "    true, false.",
            "QUICKLIST-PACKED-THRESHOLD <size>",
            "    Sets the threshold for elements to be inserted as plain vs packed nodes",
            "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
            "SET-ACTIVE-EXPIRE <0|1>",
            "    Setting it to 0 disables expiring keys in background when they are not",
            "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
            "    default.",
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
            "STRINGMATCH-LEN",
            "    Run a fuzz tester against the stringmatchlen() function.",
            "LISTPACK <key>",
            "    Show low level info about the listpack encoding of <key>.",
            NULL,
        };
        reply_help(c, "DEBUG", lines);
    } else if (c->argc == 3 && arg_is(sub, "object")) {
        debug_object(c);
    } else if (c->argc == 3 && arg_is(sub, "listpack")) {
        debug_listpack(c);
    } else if (c->argc == 3 && arg_is(sub, "protocol")) {
        debug_protocol(c);
    } else if (c->argc == 3 && arg_is(sub, "sleep")) {
        debug_sleep(c);
    } else if (c->argc == 3 && arg_is(sub, "set-active-expire")) {
        atomic_store(&server.active_expire_enabled, arg_atoi(&c->argv[2]) != 0);
        reply_ok(c);
    } else if (c->argc == 2 && arg_is(sub, "change-repl-id")) {
        hk_log(LL_NOTICE, "Changing replication IDs after receiving DEBUG change-repl-id");
        replid_change();
        reply_ok(c);
    } else if (c->argc == 2 && (arg_is(sub, "stringmatch-len") || arg_is(sub, "stringmatch-test"))) {
        /* STRINGMATCH-LEN is Redis 8's name, STRINGMATCH-TEST Redis 7.0's. */
        debug_stringmatch_test(c);
    } else if (c->argc == 3 && arg_is(sub, "error")) {
        /* The argument is the whole error line; no newline may end it early. */
        char *msg = hk_strndup(c->argv[2].ptr, c->argv[2].len);
        for (size_t i = 0; i < c->argv[2].len; i++)
            if (msg[i] == '\r' || msg[i] == '\n') msg[i] = ' ';
        reply_error_len(c, msg, c->argv[2].len);
        hk_free(msg);
    } else if (c->argc == 3 && arg_is(sub, "log")) {
        hk_log(LL_WARNING, "DEBUG LOG: %.*s", (int)c->argv[2].len, c->argv[2].ptr);
        reply_ok(c);
    } else if (c->argc == 2 && arg_is(sub, "digest")) {
        debug_digest(c);
    } else if (arg_is(sub, "digest-value")) {
        debug_digest_value(c);
    } else if (c->argc >= 3 && arg_is(sub, "journal")) {
        debug_journal(c);
    } else if (arg_is(sub, "reload")) {
        debug_reload(c);
    } else if (c->argc == 3 && arg_is(sub, "quicklist-packed-threshold")) {
        debug_packed_threshold(c);
    } else {
        reply_subcommand_error(c);
    }
}
