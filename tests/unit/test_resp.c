/* test_resp.c - unit tests of the incremental RESP request parser
 * (src/proto/resp.c): whole and split requests, the `need` hint for big
 * bulk strings, inline splitting with quotes and escapes, and every
 * protocol error text. Not a test of dispatch or of the server's reaction
 * to an error (the integration tests cover that). */
#include "proto/resp.h"
#include "test.h"

#include <stdlib.h>

static const struct resp_limits authed = {512LL * 1024 * 1024, 1};
static const struct resp_limits anon = {512LL * 1024 * 1024, 0};

/* Parse one complete request from s; returns the status and leaves r filled. */
static enum resp_status parse_all(struct resp_req *r, char *buf, size_t len, const struct resp_limits *lim) {
    resp_req_init(r);
    return resp_parse(r, buf, len, lim);
}

static int arg_is(const struct resp_req *r, const char *buf, int i, const char *s) {
    return i < r->argc && r->len[i] == strlen(s) && memcmp(buf + r->off[i], s, r->len[i]) == 0;
}

static void test_multibulk_whole(void) {
    char buf[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n";
    struct resp_req r;
    CHECK_EQ_LL(parse_all(&r, buf, sizeof(buf) - 1, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 3);
    CHECK(arg_is(&r, buf, 0, "SET"));
    CHECK(arg_is(&r, buf, 1, "k"));
    CHECK(arg_is(&r, buf, 2, "value"));
    CHECK_EQ_LL(r.pos, sizeof(buf) - 1);
    resp_req_free(&r);
}

static void test_multibulk_pipeline(void) {
    /* Two requests back to back: the first stops exactly at its end. */
    char buf[] = "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n";
    struct resp_req r;
    CHECK_EQ_LL(parse_all(&r, buf, sizeof(buf) - 1, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 1);
    CHECK_EQ_LL(r.pos, 14);
    size_t p = r.pos;
    resp_req_reset(&r);
    CHECK_EQ_LL(resp_parse(&r, buf + p, sizeof(buf) - 1 - p, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 2);
    CHECK(arg_is(&r, buf + p, 0, "ECHO"));
    CHECK(arg_is(&r, buf + p, 1, ""));
    CHECK_EQ_LL(p + r.pos, sizeof(buf) - 1);
    resp_req_free(&r);
}

/* Feed a request one byte more at a time: every prefix is RESP_MORE and
 * the full request gives the same arguments as a whole parse. */
static void feed_bytewise(const char *req, int argc, const char **want, const struct resp_limits *lim) {
    size_t n = strlen(req);
    char *buf = malloc(n + 1);
    memcpy(buf, req, n + 1);
    struct resp_req r;
    resp_req_init(&r);
    for (size_t i = 0; i < n; i++) {
        enum resp_status st = resp_parse(&r, buf, i, lim);
        if (st != RESP_MORE) {
            fprintf(stderr, "prefix %zu of %s: status %d\n", i, req, st);
            CHECK(st == RESP_MORE);
            break;
        }
    }
    CHECK_EQ_LL(resp_parse(&r, buf, n, lim), RESP_DONE);
    CHECK_EQ_LL(r.argc, argc);
    for (int i = 0; i < argc && i < r.argc; i++) CHECK(arg_is(&r, buf, i, want[i]));
    CHECK_EQ_LL(r.pos, n);
    resp_req_free(&r);
    free(buf);
}

static void test_bytewise(void) {
    const char *a[] = {"SET", "key", "hello world"};
    feed_bytewise("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$11\r\nhello world\r\n", 3, a, &authed);
    const char *b[] = {"SET", "key", "hello world"};
    feed_bytewise("SET key \"hello world\"\r\n", 3, b, &authed);
    const char *c[] = {"PING"};
    feed_bytewise("PING\n", 1, c, &authed);
    const char *d[] = {"", "x"};
    feed_bytewise("*2\r\n$0\r\n\r\n$1\r\nx\r\n", 2, d, &authed);
}

static void test_binary_bulk(void) {
    /* Bulk payloads may hold CR, LF and NUL bytes. */
    char buf[] = "*2\r\n$4\r\nECHO\r\n$5\r\na\r\n\0b\r\n";
    struct resp_req r;
    CHECK_EQ_LL(parse_all(&r, buf, sizeof(buf) - 1, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 2);
    CHECK_EQ_LL(r.len[1], 5);
    CHECK(memcmp(buf + r.off[1], "a\r\n\0b", 5) == 0);
    resp_req_free(&r);
}

static void test_big_bulk_need(void) {
    /* Once a bulk header is read, `need` is the full size of the request up
     * to the end of that bulk's CRLF, so the caller can size its buffer. */
    char hdr[] = "*2\r\n$3\r\nSET\r\n$1000000\r\n";
    size_t hl = sizeof(hdr) - 1;
    char *buf = malloc(hl + 1000000 + 2);
    memcpy(buf, hdr, hl);
    memset(buf + hl, 'v', 1000000);
    memcpy(buf + hl + 1000000, "\r\n", 2);
    struct resp_req r;
    resp_req_init(&r);
    CHECK_EQ_LL(resp_parse(&r, buf, hl, &authed), RESP_MORE);
    CHECK_EQ_LL(r.need, hl + 1000000 + 2);
    CHECK_EQ_LL(resp_parse(&r, buf, hl + 500000, &authed), RESP_MORE);
    CHECK_EQ_LL(r.need, hl + 1000000 + 2);
    /* Payload present but not its CRLF: still more. */
    CHECK_EQ_LL(resp_parse(&r, buf, hl + 1000000 + 1, &authed), RESP_MORE);
    CHECK_EQ_LL(resp_parse(&r, buf, hl + 1000000 + 2, &authed), RESP_DONE);
    CHECK_EQ_LL(r.need, 0);
    CHECK_EQ_LL(r.argc, 2);
    CHECK_EQ_LL(r.len[1], 1000000);
    CHECK_EQ_LL(r.off[1], hl);
    resp_req_free(&r);
    free(buf);
    /* Before any header is complete `need` is unknown. */
    char part[] = "*2\r\n$3\r\nSE";
    resp_req_init(&r);
    CHECK_EQ_LL(resp_parse(&r, part, 4, &authed), RESP_MORE);
    CHECK_EQ_LL(r.need, 0);
    resp_req_free(&r);
}

static void test_empty_multibulk(void) {
    char z[] = "*0\r\n*-1\r\n";
    struct resp_req r;
    CHECK_EQ_LL(parse_all(&r, z, sizeof(z) - 1, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 0);
    CHECK_EQ_LL(r.pos, 4);
    resp_req_reset(&r);
    CHECK_EQ_LL(resp_parse(&r, z + 4, sizeof(z) - 5, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 0);
    CHECK_EQ_LL(r.pos, 5);
    resp_req_free(&r);
}

static void test_reset_keeps_working(void) {
    /* Many requests through one resp_req, including a huge argument count
     * that makes reset drop its arrays. */
    struct resp_req r;
    resp_req_init(&r);
    size_t n = 3000;
    size_t cap = 32 + n * 8;
    char *buf = malloc(cap);
    size_t l = (size_t)snprintf(buf, cap, "*%zu\r\n", n);
    for (size_t i = 0; i < n; i++) l += (size_t)snprintf(buf + l, cap - l, "$1\r\n%c\r\n", 'a' + (int)(i % 26));
    CHECK_EQ_LL(resp_parse(&r, buf, l, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, (long long)n);
    CHECK(arg_is(&r, buf, 2999, "j"));
    resp_req_reset(&r);
    char p[] = "*1\r\n$4\r\nPING\r\n";
    CHECK_EQ_LL(resp_parse(&r, p, sizeof(p) - 1, &authed), RESP_DONE);
    CHECK(arg_is(&r, p, 0, "PING"));
    resp_req_free(&r);
    free(buf);
}

static void test_inline(void) {
    struct resp_req r;
    char a[] = "  SET   k  v \r\n";
    CHECK_EQ_LL(parse_all(&r, a, sizeof(a) - 1, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 3);
    CHECK(arg_is(&r, a, 0, "SET") && arg_is(&r, a, 1, "k") && arg_is(&r, a, 2, "v"));
    CHECK_EQ_LL(r.pos, sizeof(a) - 1);
    resp_req_free(&r);

    char b[] = "\r\n"; /* an empty line is an empty request */
    CHECK_EQ_LL(parse_all(&r, b, 2, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 0);
    CHECK_EQ_LL(r.pos, 2);
    resp_req_free(&r);

    char c[] = "ECHO \"a\\x41\\n\\t\\\"q\" 'it\\'s' \"\"\n";
    CHECK_EQ_LL(parse_all(&r, c, sizeof(c) - 1, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 4);
    CHECK(arg_is(&r, c, 1, "aA\n\t\"q"));
    CHECK(arg_is(&r, c, 2, "it's"));
    CHECK(arg_is(&r, c, 3, ""));
    resp_req_free(&r);

    /* Escapes other than \' are literal inside single quotes; \xZZ is not
     * a hex escape, so it stays "xZZ" after the backslash is dropped. */
    char d[] = "ECHO 'a\\nb' \"\\xZZ\" \"\\\\\"\r\n";
    CHECK_EQ_LL(parse_all(&r, d, sizeof(d) - 1, &authed), RESP_DONE);
    CHECK_EQ_LL(r.argc, 4);
    CHECK(arg_is(&r, d, 1, "a\\nb"));
    CHECK(arg_is(&r, d, 2, "xZZ"));
    CHECK(arg_is(&r, d, 3, "\\"));
    resp_req_free(&r);

    /* Incomplete line: more, with no size hint. */
    char e[] = "GET k";
    CHECK_EQ_LL(parse_all(&r, e, sizeof(e) - 1, &authed), RESP_MORE);
    CHECK_EQ_LL(r.need, 0);
    resp_req_free(&r);
}

static void check_err(const char *in, size_t len, const struct resp_limits *lim, const char *want) {
    char *buf = malloc(len + 1);
    memcpy(buf, in, len + 1);
    struct resp_req r;
    enum resp_status st = parse_all(&r, buf, len, lim);
    CHECK_EQ_LL(st, RESP_ERR);
    if (st == RESP_ERR) CHECK_MEM(r.err, strlen(r.err), want);
    resp_req_free(&r);
    free(buf);
}

static void test_errors(void) {
    check_err("SET \"k v\r\n", 10, &authed, "Protocol error: unbalanced quotes in request");
    check_err("SET \"k\"v\r\n", 10, &authed, "Protocol error: unbalanced quotes in request");
    check_err("SET 'k\r\n", 8, &authed, "Protocol error: unbalanced quotes in request");
    check_err("SET 'k'v\r\n", 10, &authed, "Protocol error: unbalanced quotes in request");
    check_err("*x\r\n", 4, &authed, "Protocol error: invalid multibulk length");
    check_err("*\r\n", 3, &authed, "Protocol error: invalid multibulk length");
    check_err("*01\r\n", 5, &authed, "Protocol error: invalid multibulk length");
    check_err("*2147483648\r\n", 13, &authed, "Protocol error: invalid multibulk length");
    check_err("*11\r\n", 5, &anon, "Protocol error: unauthenticated multibulk length");
    check_err("*1\r\n+PING\r\n", 11, &authed, "Protocol error: expected '$', got '+'");
    check_err("*1\r\n$x\r\n", 8, &authed, "Protocol error: invalid bulk length");
    check_err("*1\r\n$-1\r\n", 9, &authed, "Protocol error: invalid bulk length");
    check_err("*1\r\n$4294967296\r\n", 17, &authed, "Protocol error: invalid bulk length");
    check_err("*1\r\n$16385\r\n", 12, &anon, "Protocol error: unauthenticated bulk length");
    struct resp_limits small = {100, 1};
    check_err("*1\r\n$101\r\n", 10, &small, "Protocol error: invalid bulk length");

    /* Long lines without CRLF. */
    size_t n = RESP_INLINE_MAX + 10;
    char *big = malloc(n + 1);
    memset(big, 'a', n);
    big[n] = 0;
    check_err(big, n, &authed, "Protocol error: too big inline request");
    big[0] = '*';
    memset(big + 1, '1', n - 1);
    check_err(big, n, &authed, "Protocol error: too big mbulk count string");
    memcpy(big, "*1\r\n$", 5);
    check_err(big, n, &authed, "Protocol error: too big bulk count string");
    free(big);
}

static void test_limits_ok(void) {
    /* Exactly at the limits is accepted. */
    struct resp_req r;
    char a[] = "*10\r\n";
    CHECK_EQ_LL(parse_all(&r, a, sizeof(a) - 1, &anon), RESP_MORE);
    resp_req_free(&r);
    char b[] = "*1\r\n$16384\r\n";
    CHECK_EQ_LL(parse_all(&r, b, sizeof(b) - 1, &anon), RESP_MORE);
    CHECK_EQ_LL(r.need, sizeof(b) - 1 + 16384 + 2);
    resp_req_free(&r);
    struct resp_limits small = {100, 1};
    char c[] = "*1\r\n$100\r\n";
    CHECK_EQ_LL(parse_all(&r, c, sizeof(c) - 1, &small), RESP_MORE);
    resp_req_free(&r);
}

struct split_ctx {
    int n;
    size_t off[8], len[8];
};

static void split_push(void *ctx, size_t off, size_t len) {
    struct split_ctx *s = ctx;
    if (s->n < 8) {
        s->off[s->n] = off;
        s->len[s->n] = len;
    }
    s->n++;
}

static void test_split_line_range(void) {
    /* Only [s, e) is split, offsets are from the buffer start. */
    char buf[] = "xxx a \"b c\" yyy";
    struct split_ctx s = {0};
    CHECK(resp_split_line(buf, 3, 11, split_push, &s));
    CHECK_EQ_LL(s.n, 2);
    CHECK_MEM(buf + s.off[0], s.len[0], "a");
    CHECK_MEM(buf + s.off[1], s.len[1], "b c");
    struct split_ctx t = {0};
    char q[] = "\"abc";
    CHECK(!resp_split_line(q, 0, 4, split_push, &t));
}

/* resp_skim agrees with resp_parse on every request it takes. */
static void skim_matches_parse(const char *req, size_t n) {
    char *buf = malloc(n + 1);
    memcpy(buf, req, n);
    size_t off[8], lens[8], reqlen = 0;
    int argc = 0;
    CHECK(resp_skim(buf, n, off, lens, 8, &argc, &reqlen));
    struct resp_req r;
    CHECK_EQ_LL(parse_all(&r, buf, n, &authed), RESP_DONE);
    CHECK_EQ_LL(argc, r.argc);
    CHECK_EQ_LL(reqlen, r.pos);
    for (int i = 0; i < argc && i < 8; i++) {
        CHECK_EQ_LL(off[i], r.off[i]);
        CHECK_EQ_LL(lens[i], r.len[i]);
    }
    /* Every strict prefix is incomplete. */
    for (size_t k = 0; k < reqlen; k++) CHECK(!resp_skim(buf, k, off, lens, 8, &argc, &reqlen));
    resp_req_free(&r);
    free(buf);
}

static void test_skim(void) {
    const char set[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n";
    skim_matches_parse(set, sizeof(set) - 1);
    const char empty_arg[] = "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n";
    skim_matches_parse(empty_arg, sizeof(empty_arg) - 1);
    const char binary[] = "*2\r\n$3\r\nGET\r\n$4\r\n\r\n\0*\r\n";
    skim_matches_parse(binary, sizeof(binary) - 1);
    const char ten[] = "*10\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"
                       "$1\r\nf\r\n$1\r\ng\r\n$1\r\nh\r\n$1\r\ni\r\n$10\r\n0123456789\r\n";
    skim_matches_parse(ten, sizeof(ten) - 1);

    /* Pipelined: stops at the end of the first request; only `max`
     * arguments are reported but the count and length are whole. */
    char pipe[] = "*3\r\n$4\r\nMGET\r\n$1\r\na\r\n$2\r\nbc\r\n*1\r\n$4\r\nPING\r\n";
    size_t off[2], lens[2], reqlen = 0;
    int argc = 0;
    CHECK(resp_skim(pipe, sizeof(pipe) - 1, off, lens, 2, &argc, &reqlen));
    CHECK_EQ_LL(argc, 3);
    CHECK_EQ_LL(reqlen, 29);
    CHECK_MEM(pipe + off[1], lens[1], "a");
    CHECK(resp_skim(pipe + 29, sizeof(pipe) - 1 - 29, off, lens, 2, &argc, &reqlen));
    CHECK_EQ_LL(argc, 1);
    CHECK_EQ_LL(reqlen, 14);
    CHECK_MEM(pipe + 29 + off[0], lens[0], "PING");

    /* Everything else is left to resp_parse. */
    const char *refused[] = {
        "PING\r\n",                     /* inline */
        "*0\r\n",                       /* empty array */
        "*-1\r\n",                      /* null array */
        "*01\r\n$4\r\nPING\r\n",        /* leading zero */
        "*1\r\n$04\r\nPING\r\n",        /* leading zero in a bulk length */
        "*1\r\n+4\r\nPING\r\n",         /* not a bulk */
        "*1\r\n$-1\r\n",                /* null bulk */
        "*1\n$4\r\nPING\r\n",           /* bare LF */
        "*2\r\n$4\r\nPING\r\n",         /* missing argument */
        "",
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        CHECK(!resp_skim(refused[i], strlen(refused[i]), off, lens, 2, &argc, &reqlen));
}

int main(void) {
    TEST_RUN(test_multibulk_whole);
    TEST_RUN(test_multibulk_pipeline);
    TEST_RUN(test_bytewise);
    TEST_RUN(test_binary_bulk);
    TEST_RUN(test_big_bulk_need);
    TEST_RUN(test_empty_multibulk);
    TEST_RUN(test_reset_keeps_working);
    TEST_RUN(test_inline);
    TEST_RUN(test_errors);
    TEST_RUN(test_limits_ok);
    TEST_RUN(test_split_line_range);
    TEST_RUN(test_skim);
    return TEST_REPORT();
}
