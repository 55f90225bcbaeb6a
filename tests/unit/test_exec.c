/* test_exec.c - unit tests of the execution core (src/server/exec.c)
 * without a connection: a command runs on a bare context whose reply sink
 * is a capture buffer (what EXEC's queued replies and a script's
 * redis.call will use), or a muted one (a replayed command whose reply is
 * thrown away); keys come from argv alone (range, numkeys column, the
 * GEORADIUS finder); a nested command runs under its parent's locks and
 * its argv replaces the parent's propagation. */
#include "app/cmdtable.h"
#include "core/alloc.h"
#include "proto/outbuf.h"
#include "server/exec.h"
#include "server/journal.h"
#include "server/server.h"
#include "store/db.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static hk_slice argv_buf[16];

/* Split a command line on spaces into argv_buf. */
static int split(char *line) {
    int n = 0;
    for (char *t = strtok(line, " "); t && n < 16; t = strtok(NULL, " ")) {
        argv_buf[n].ptr = t;
        argv_buf[n].len = strlen(t);
        n++;
    }
    return n;
}

static const struct command *lookup(const hk_slice *argv, int argc) {
    struct command *cmd = cmd_lookup(argv[0].ptr, argv[0].len);
    if (cmd && cmd->nsubs && argc > 1) cmd = cmd_lookup_sub(cmd, argv[1].ptr, argv[1].len);
    return cmd;
}

/* Everything the capture buffer holds, as a string (freed by the caller). */
static char *drain(struct outbuf *ob, size_t *len) {
    struct iovec iov[64];
    size_t total = 0;
    char *out = malloc(ob->pending + 1);
    while (ob->pending) {
        int n = ob_iov(ob, iov, 64);
        if (!n) break;
        size_t got = 0;
        for (int i = 0; i < n; i++) {
            memcpy(out + total + got, iov[i].iov_base, iov[i].iov_len);
            got += iov[i].iov_len;
        }
        ob_consume(ob, got);
        total += got;
    }
    out[total] = '\0';
    *len = total;
    return out;
}

/* Run a command line on context c (capturing into ob); returns the reply. */
static char *run(struct cmd_ctx *c, struct outbuf *ob, const char *text) {
    char line[256];
    snprintf(line, sizeof(line), "%s", text);
    c->argc = split(line);
    c->argv = argv_buf;
    c->cmd = lookup(c->argv, c->argc);
    c->now_ms = 1000000;
    if (!c->cmd) return strdup("(no such command)");
    exec_command(c);
    size_t len;
    return drain(ob, &len);
}

#define CHECK_REPLY(c, ob, cmdline, want)                                                                           \
    do {                                                                                                            \
        char *got_ = run((c), (ob), (cmdline));                                                                     \
        CHECK_MEM(got_, strlen(got_), (want));                                                                      \
        free(got_);                                                                                                 \
    } while (0)

static void test_capture_sink(void) {
    struct outbuf ob;
    ob_init(&ob);
    struct cmd_ctx c;
    ctx_init(&c);
    c.out = &ob;
    CHECK_REPLY(&c, &ob, "SET k v", "+OK\r\n");
    CHECK_REPLY(&c, &ob, "GET k", "$1\r\nv\r\n");
    CHECK_REPLY(&c, &ob, "RPUSH l a b c", ":3\r\n");
    CHECK_REPLY(&c, &ob, "LRANGE l 0 -1", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
    CHECK_REPLY(&c, &ob, "GET l", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    CHECK_EQ_LL(c.errors, 1);
    /* The protocol is the context's. */
    c.resp = 3;
    CHECK_REPLY(&c, &ob, "GET nokey", "_\r\n");
    c.resp = 2;
    CHECK_REPLY(&c, &ob, "GET nokey", "$-1\r\n");
    /* Deferred headers in a capture buffer too (ZRANGEBYSCORE). */
    CHECK_REPLY(&c, &ob, "ZADD z 1 a 2 b", ":2\r\n");
    CHECK_REPLY(&c, &ob, "ZRANGEBYSCORE z 0 5", "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    /* A muted context writes nothing but still runs. */
    c.flags |= CTX_MUTED;
    CHECK_REPLY(&c, &ob, "SET m 1", "");
    c.flags &= ~CTX_MUTED;
    CHECK_REPLY(&c, &ob, "GET m", "$1\r\n1\r\n");
    /* The database is the context's. */
    c.db = 3;
    CHECK_REPLY(&c, &ob, "GET k", "$-1\r\n");
    c.db = 0;
    CHECK_REPLY(&c, &ob, "DEL k l z m", ":4\r\n");
    ctx_destroy(&c);
    ob_free(&ob);
}

static void test_keys_from_argv(void) {
    int idx[16];
    char line[256];
    snprintf(line, sizeof(line), "MSET a 1 b 2 c 3");
    int n = split(line);
    CHECK_EQ_LL(command_keys(lookup(argv_buf, n), argv_buf, n, idx), 3);
    CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 5);
    /* The numkeys column: destination plus counted keys. */
    snprintf(line, sizeof(line), "ZUNIONSTORE d 2 x y WEIGHTS 1 2");
    n = split(line);
    CHECK_EQ_LL(command_keys(lookup(argv_buf, n), argv_buf, n, idx), 3);
    CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 4);
    snprintf(line, sizeof(line), "LMPOP 2 p q LEFT");
    n = split(line);
    CHECK_EQ_LL(command_keys(lookup(argv_buf, n), argv_buf, n, idx), 2);
    CHECK(idx[0] == 2 && idx[1] == 3);
    snprintf(line, sizeof(line), "BLMPOP 0 1 p RIGHT COUNT 2");
    n = split(line);
    CHECK_EQ_LL(command_keys(lookup(argv_buf, n), argv_buf, n, idx), 1);
    CHECK_EQ_LL(idx[0], 3);
    /* A count past the arguments is malformed (the handler says so). */
    snprintf(line, sizeof(line), "ZUNION 5 x y");
    n = split(line);
    CHECK_EQ_LL(command_keys(lookup(argv_buf, n), argv_buf, n, idx), -1);
    snprintf(line, sizeof(line), "SINTERCARD abc x");
    n = split(line);
    CHECK_EQ_LL(command_keys(lookup(argv_buf, n), argv_buf, n, idx), -1);
    /* The one custom finder left. */
    snprintf(line, sizeof(line), "GEORADIUS src 0 0 10 km STORE dst");
    n = split(line);
    CHECK_EQ_LL(command_keys(lookup(argv_buf, n), argv_buf, n, idx), 2);
    CHECK(idx[0] == 1 && idx[1] == 7);
}

static void test_nested_and_propagation(void) {
    struct outbuf ob;
    ob_init(&ob);
    struct cmd_ctx c;
    ctx_init(&c);
    c.out = &ob;
    CHECK_REPLY(&c, &ob, "RPUSH q a b", ":2\r\n");
    /* A worker identity gives the context a journal stream. */
    static struct worker fw;
    c.w = &fw;
    /* BLPOP served at once runs LPOP nested; LPOP's argv is what the
     * context propagates, not BLPOP's. */
    char line[64];
    snprintf(line, sizeof(line), "BLPOP q 0");
    c.argc = split(line);
    c.argv = argv_buf;
    c.cmd = lookup(c.argv, c.argc);
    struct lockset all;
    ls_init(&all);
    ls_add_all(&all);
    journal_reader_lock();
    ls_acquire(&all);
    journal_start(1 << 20);
    ls_release(&all);
    journal_reader_unlock();
    exec_command(&c);
    size_t len;
    char *rep = drain(&ob, &len);
    CHECK_MEM(rep, len, "*2\r\n$1\r\nq\r\n$1\r\na\r\n");
    free(rep);
    CHECK(c.flags & CTX_PROP_CUSTOM);
    CHECK_EQ_LL(c.sink.dirty, 1);
    /* A no-op write propagates nothing; a plain one its argv. */
    c.w = &fw;
    CHECK_REPLY(&c, &ob, "SADD s m", ":1\r\n");
    CHECK_REPLY(&c, &ob, "SADD s m", ":0\r\n");
    char *j;
    CHECK_EQ_LL(journal_read(&j, &len), 0);
    CHECK_MEM(j, len,
              "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*2\r\n$4\r\nlpop\r\n$1\r\nq\r\n"
              "*3\r\n$4\r\nSADD\r\n$1\r\ns\r\n$1\r\nm\r\n");
    hk_free(j);
    CHECK_REPLY(&c, &ob, "DEL q s", ":2\r\n");
    ls_acquire(&all);
    journal_stop();
    ls_release(&all);
    ls_destroy(&all);
    ctx_destroy(&c);
    ob_free(&ob);
}

/* Commands run nested inside a context that already holds every shard
 * (what EXEC with a whole-keyspace command, or a script, will do): KEYS,
 * SCAN, DBSIZE, RANDOMKEY, FLUSHDB and SWAPDB must not lock again (a
 * second lock of a held mutex would hang this test). */
struct nested_run {
    struct outbuf *ob;
    int st[8];
};

static void run_nested_all(struct cmd_ctx *c, void *arg) {
    struct nested_run *r = arg;
    const char *lines[] = {"SET a 1", "KEYS *", "SCAN 0", "DBSIZE", "RANDOMKEY", "SWAPDB 0 1", "FLUSHDB", "DBSIZE"};
    for (int i = 0; i < 8; i++) {
        char line[64];
        snprintf(line, sizeof(line), "%s", lines[i]);
        int argc = split(line);
        r->st[i] = exec_nested(c, lookup(argv_buf, argc), argv_buf, argc);
    }
}

static void test_whole_keyspace_nested(void) {
    struct outbuf ob;
    ob_init(&ob);
    struct cmd_ctx c;
    ctx_init(&c);
    c.out = &ob;
    struct nested_run r = {&ob, {0}};
    CHECK_EQ_LL(exec_with_all_shards(&c, run_nested_all, &r), HK_OK);
    for (int i = 0; i < 8; i++) CHECK_EQ_LL(r.st[i], HK_OK);
    size_t len;
    char *rep = drain(&ob, &len);
    CHECK_MEM(rep, len, "+OK\r\n*1\r\n$1\r\na\r\n*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n:1\r\n$1\r\na\r\n+OK\r\n+OK\r\n:0\r\n");
    free(rep);
    /* The SWAPDB moved a to database 1; FLUSHDB emptied database 0 only. */
    c.db = 1;
    CHECK_REPLY(&c, &ob, "GET a", "$1\r\n1\r\n");
    CHECK_REPLY(&c, &ob, "FLUSHALL", "+OK\r\n");
    c.db = 0;
    /* Under a partial lock set a whole-keyspace command is refused. */
    struct lockset part;
    ls_init(&part);
    ls_add(&part, 3);
    ls_acquire(&part);
    c.ls = &part;
    c.flags |= CTX_NESTED;
    char line[32];
    snprintf(line, sizeof(line), "KEYS *");
    int argc = split(line);
    CHECK_EQ_LL(exec_nested(&c, lookup(argv_buf, argc), argv_buf, argc), HK_ERR_LOCK_CONFLICT);
    /* A key in a shard above the held one is taken on (never a deadlock). */
    snprintf(line, sizeof(line), "SET zz 1");
    argc = split(line);
    CHECK_EQ_LL(exec_nested(&c, lookup(argv_buf, argc), argv_buf, argc), HK_OK);
    c.flags &= ~CTX_NESTED;
    ls_release(&part);
    ls_destroy(&part);
    c.ls = &c.own_ls;
    free(drain(&ob, &len));
    CHECK_REPLY(&c, &ob, "DEL zz", ":1\r\n");
    ctx_destroy(&c);
    ob_free(&ob);
}

int main(void) {
    cmdtable_init();
    ks_init(16, 64);
    journal_init(1);
    TEST_RUN(test_capture_sink);
    TEST_RUN(test_keys_from_argv);
    TEST_RUN(test_nested_and_propagation);
    TEST_RUN(test_whole_keyspace_nested);
    return TEST_REPORT();
}
