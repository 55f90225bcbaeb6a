/* debug.c - the DEBUG command: SLEEP, DIGEST, DIGEST-VALUE, and JOURNAL,
 * HotKV's window on the propagation journal for tests.
 *
 * DEBUG is protected as in Redis: `enable-debug-command no` (the default)
 * refuses it, `local` allows loopback and unix socket clients, `yes`
 * allows all. DIGEST is Redis's dataset fingerprint (types/digest.h), so
 * a server and its replay, or HotKV and Redis holding the same data, can
 * be compared. JOURNAL START/READ/STOP records what every write
 * propagates (server/journal.h) and hands it out as RESP, ready to be
 * replayed into another server. */
#include "../core/alloc.h"
#include "../net/net.h"
#include "../server/config.h"
#include "../server/journal.h"
#include "../types/digest.h"
#include "../types/list.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static int debug_allowed(struct cmd_ctx *c) {
    long long mode = CFG(enable_debug_command);
    if (mode == CFG_DEBUG_YES) return 1;
    if (mode != CFG_DEBUG_LOCAL || !c->cl) return 0;
    if (c->cl->flags & CLIENT_UNIX_SOCKET) return 1;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    return getpeername(c->cl->fd, (struct sockaddr *)&ss, &sl) == 0 && net_is_loopback_sockaddr(&ss);
}

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
            struct ht_iter it;
            ht_iter_init(&it, &ks.shards[s].tables[db]);
            for (struct hnode *h; (h = ht_iter_next(&it));) {
                unsigned char d[20];
                kv_digest((const struct kv *)h, d);
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

/* ---- SLEEP and the command ---------------------------------------------- */

/* SLEEP stalls the calling worker (and so its clients) without holding any
 * shard lock; like Redis it reads the number leniently (what does not
 * parse is 0). */
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

void cmd_debug(struct cmd_ctx *c) {
    if (!debug_allowed(c)) {
        reply_error(c, "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you "
                       "can run it from a local connection, otherwise you need to set this option in the "
                       "configuration file, and then restart the server.");
        return;
    }
    const hk_slice *sub = &c->argv[1];
    if (c->argc == 2 && arg_is(sub, "help")) {
        static const char *const lines[] = {
            "DIGEST",
            "    Output a hex signature representing the current DB content.",
            "DIGEST-VALUE <key> [<key> ...]",
            "    Output a hex signature of the values of all the specified keys.",
            "JOURNAL START [<max-bytes>] | READ | STOP",
            "    Record what writes propagate; READ returns the merged record as RESP commands.",
            "JOURNAL APPLY ON|OFF",
            "    Run this connection's commands as a replayed journal (no expiry by time).",
            "QUICKLIST-PACKED-THRESHOLD <size>",
            "    Sets the threshold for elements to be inserted as plain vs packed nodes",
            "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
            "SET-ACTIVE-EXPIRE <0|1>",
            "    Setting it to 0 disables expiring keys in background when they are not",
            "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
            "    default.",
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
            NULL,
        };
        reply_help(c, "DEBUG", lines);
    } else if (c->argc == 3 && arg_is(sub, "sleep")) {
        debug_sleep(c);
    } else if (c->argc == 3 && arg_is(sub, "set-active-expire")) {
        /* Read as Redis reads it: atoi. */
        char buf[32];
        size_t n = c->argv[2].len < sizeof(buf) - 1 ? c->argv[2].len : sizeof(buf) - 1;
        memcpy(buf, c->argv[2].ptr, n);
        buf[n] = '\0';
        atomic_store(&server.active_expire_enabled, atoi(buf) != 0);
        reply_ok(c);
    } else if (c->argc == 2 && arg_is(sub, "digest")) {
        debug_digest(c);
    } else if (arg_is(sub, "digest-value")) {
        debug_digest_value(c);
    } else if (c->argc >= 3 && arg_is(sub, "journal")) {
        debug_journal(c);
    } else if (c->argc == 3 && arg_is(sub, "quicklist-packed-threshold")) {
        debug_packed_threshold(c);
    } else {
        reply_subcommand_error(c);
    }
}
