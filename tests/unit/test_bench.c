/* test_bench.c - the load generator's histogram, templates, random
 * distributions, reply scanner and set-on-miss helpers (bench/gen). */
#include "hist.h"
#include "miss.h"
#include "rscan.h"
#include "tmpl.h"

#include "test.h"

#include <math.h>
#include <stdlib.h>

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The sample at quantile q of a sorted array, by the same rank rule as
 * hist_quantile: the ceil(q * n)-th smallest. */
static uint64_t exact_quantile(const uint64_t *v, size_t n, double q) {
    size_t rank = (size_t)ceil(q * (double)n);
    if (rank == 0) rank = 1;
    return v[rank - 1];
}

/* Record vals, then compare every reported percentile with the exact one. */
static void check_distribution(uint64_t *vals, size_t n) {
    struct hist *h = malloc(sizeof(*h));
    hist_init(h);
    for (size_t i = 0; i < n; i++) hist_record(h, vals[i]);
    qsort(vals, n, sizeof(*vals), cmp_u64);
    CHECK_EQ_LL(h->count, n);
    static const double qs[] = {0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999};
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
        double got = hist_quantile(h, qs[i]);
        double want = (double)exact_quantile(vals, n, qs[i]);
        double rel = fabs(got - want) / want;
        if (rel > 0.01) fprintf(stderr, "q=%g got %.1f want %.1f\n", qs[i], got, want);
        CHECK(rel <= 0.01);
    }
    CHECK_EQ_LL(hist_quantile(h, 1.0), vals[n - 1]);
    free(h);
}

static void test_hist_uniform(void) {
    /* 1 us .. 1 s uniform, in ns. */
    size_t n = 200000;
    uint64_t *v = malloc(n * sizeof(*v));
    struct rng r;
    rng_seed(&r, 7);
    for (size_t i = 0; i < n; i++) v[i] = 1000 + rng_below(&r, 1000000000ULL);
    check_distribution(v, n);
    free(v);
}

static void test_hist_exponential_and_lognormal(void) {
    size_t n = 200000;
    uint64_t *v = malloc(n * sizeof(*v));
    struct rng r;
    rng_seed(&r, 11);
    /* Exponential, mean 50 us, floored at 1 us. */
    for (size_t i = 0; i < n; i++) v[i] = 1000 + (uint64_t)(-log(1 - rng_double(&r)) * 50000);
    check_distribution(v, n);
    /* Log-uniform over 1 us .. 60 s: every octave populated. */
    for (size_t i = 0; i < n; i++) v[i] = (uint64_t)exp(log(1000.0) + rng_double(&r) * (log(60e9) - log(1000.0)));
    check_distribution(v, n);
    free(v);
}

static void test_hist_buckets(void) {
    /* Buckets tile the range without gaps and are never wider than 1/128
     * of their lower bound above the exact region. */
    uint64_t prev_hi = 0;
    for (int i = 0; i < HIST_BUCKETS; i++) {
        uint64_t lo, hi;
        hist_bucket_bounds(i, &lo, &hi);
        CHECK_EQ_LL(lo, prev_hi);
        CHECK(hi > lo);
        if (i >= HIST_EXACT) CHECK((hi - lo) * 128 <= lo);
        prev_hi = hi;
    }
    CHECK_EQ_LL(prev_hi, 1ULL << HIST_MAX_EXP);
    struct hist *h = malloc(sizeof(*h)), *g = malloc(sizeof(*g));
    hist_init(h);
    hist_init(g);
    CHECK(hist_quantile(h, 0.99) == 0);
    hist_record(h, 5);
    hist_record(h, 1ULL << 40);          /* clamped */
    CHECK_EQ_LL(h->clamped, 1);
    CHECK_EQ_LL(hist_quantile(h, 0.5), 5);
    hist_record(g, 3);
    hist_merge(g, h);
    CHECK_EQ_LL(g->count, 3);
    CHECK_EQ_LL(g->min_ns, 3);
    CHECK_EQ_LL(hist_quantile(g, 0.5), 5);
    free(h);
    free(g);
}

/* Generate one request from src and compare it with the expected RESP. */
static void gen_one(const char *src, struct rng *r, struct gbuf *out) {
    char err[256];
    struct tmpl *t = tmpl_parse(src, err, sizeof(err));
    CHECK(t != NULL);
    if (!t) return;
    out->len = 0;
    tmpl_gen(t, r, out);
    tmpl_free(t);
}

static void test_tmpl_literal_and_sequence(void) {
    struct rng r;
    rng_seed(&r, 1);
    struct gbuf b = {0};
    gen_one("PING", &r, &b);
    CHECK_MEM(b.p, b.len, "*1\r\n$4\r\nPING\r\n");
    gen_one("  SET  \"a b\"   x ", &r, &b);
    CHECK_MEM(b.p, b.len, "*3\r\n$3\r\nSET\r\n$3\r\na b\r\n$1\r\nx\r\n");

    char err[256];
    struct tmpl *t = tmpl_parse("GET {key sequence 3}", err, sizeof(err));
    CHECK(t && !strcmp(tmpl_command(t), "GET"));
    const char *want[] = {"key_0000000000", "key_0000000001", "key_0000000002", "key_0000000000"};
    for (int i = 0; i < 4; i++) {
        b.len = 0;
        tmpl_gen(t, &r, &b);
        char exp[64];
        snprintf(exp, sizeof(exp), "*2\r\n$3\r\nGET\r\n$14\r\n%s\r\n", want[i]);
        CHECK_MEM(b.p, b.len, exp);
    }
    tmpl_free(t);

    gen_one("SET user:{key sequence 10}:x v", &r, &b);
    CHECK_MEM(b.p, b.len, "*3\r\n$3\r\nSET\r\n$21\r\nuser:key_0000000000:x\r\n$1\r\nv\r\n");
    gbuf_free(&b);
}

static void test_tmpl_random_parts(void) {
    struct rng r;
    rng_seed(&r, 2);
    struct gbuf b = {0};
    char err[256];
    struct tmpl *t = tmpl_parse("ZRANGEBYSCORE k {range 100 10} {rand 5} {value 7}", err, sizeof(err));
    CHECK(t != NULL);
    int seen[5] = {0};
    for (int i = 0; i < 2000; i++) {
        b.len = 0;
        tmpl_gen(t, &r, &b);
        gbuf_reserve(&b, 1);
        b.p[b.len] = 0;
        int a, c, ra;
        char val[16];
        int m = sscanf(b.p, "*6\r\n$13\r\nZRANGEBYSCORE\r\n$1\r\nk\r\n$%*d\r\n%d\r\n$%*d\r\n%d\r\n$1\r\n%d\r\n$7\r\n%7s\r\n", &a,
                       &c, &ra, val);
        CHECK_EQ_LL(m, 4);
        if (m != 4) break;
        CHECK(a >= 0 && a <= 90 && c == a + 10);
        CHECK(ra >= 0 && ra < 5);
        if (ra >= 0 && ra < 5) seen[ra]++;
        CHECK_EQ_LL(strlen(val), 7);
    }
    for (int i = 0; i < 5; i++) CHECK(seen[i] > 300);
    tmpl_free(t);

    /* Uniform keys stay in range and cover it. */
    t = tmpl_parse("GET {key uniform 10}", err, sizeof(err));
    int hits[10] = {0};
    for (int i = 0; i < 1000; i++) {
        b.len = 0;
        tmpl_gen(t, &r, &b);
        int k = atoi(b.p + b.len - 2 - 10);
        CHECK(k >= 0 && k < 10);
        if (k >= 0 && k < 10) hits[k]++;
    }
    for (int i = 0; i < 10; i++) CHECK(hits[i] > 50);
    tmpl_free(t);
    gbuf_free(&b);
}

/* A ";" word separates the commands of one request; {key last} repeats
 * the key drawn last in that request. */
static void test_tmpl_sequence(void) {
    struct rng r;
    rng_seed(&r, 4);
    struct gbuf b = {0};
    char err[256];
    struct tmpl *t = tmpl_parse("MULTI ; SET {key sequence 5} v ; GET {key last} ; EXEC", err, sizeof(err));
    CHECK(t != NULL);
    if (!t) return;
    CHECK_EQ_LL(tmpl_replies(t), 4);
    CHECK(!strcmp(tmpl_command(t), "MULTI"));
    for (int i = 0; i < 2; i++) {
        b.len = 0;
        tmpl_gen(t, &r, &b);
        char exp[256];
        snprintf(exp, sizeof(exp),
                 "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$14\r\nkey_000000000%d\r\n$1\r\nv\r\n"
                 "*2\r\n$3\r\nGET\r\n$14\r\nkey_000000000%d\r\n*1\r\n$4\r\nEXEC\r\n",
                 i, i);
        CHECK_MEM(b.p, b.len, exp);
    }
    tmpl_free(t);

    /* Uniform keys: the GET names the key the SET drew, in a mixed word too. */
    t = tmpl_parse("SET {key uniform 1000000} x;y ; GET p:{key last}", err, sizeof(err));
    CHECK(t != NULL);
    CHECK_EQ_LL(tmpl_replies(t), 2);
    int differ = 0;
    unsigned prev = 0;
    for (int i = 0; i < 100 && t; i++) {
        b.len = 0;
        tmpl_gen(t, &r, &b);
        gbuf_reserve(&b, 1);
        b.p[b.len] = 0;
        unsigned k1, k2;
        int m = sscanf(b.p,
                       "*3\r\n$3\r\nSET\r\n$14\r\nkey_%10u\r\n$3\r\nx;y\r\n"
                       "*2\r\n$3\r\nGET\r\n$16\r\np:key_%10u\r\n",
                       &k1, &k2);
        CHECK_EQ_LL(m, 2);
        CHECK_EQ_LL(k1, k2);
        differ += i > 0 && k1 != prev;
        prev = k1;
    }
    CHECK(differ > 90);
    tmpl_free(t);

    /* A quoted or attached ';' is text; a single command waits for one reply. */
    gen_one("SET \";\" a;", &r, &b);
    CHECK_MEM(b.p, b.len, "*3\r\n$3\r\nSET\r\n$1\r\n;\r\n$2\r\na;\r\n");
    t = tmpl_parse("GET {key uniform 10}", err, sizeof(err));
    CHECK(t && tmpl_replies(t) == 1);
    tmpl_free(t);
    gbuf_free(&b);
}

static void test_tmpl_errors(void) {
    char err[256];
    const char *bad[] = {"", "   ", "{key uniform 10}", "GET {key uniform}", "GET {key gaussian 10}",
                         "GET {key uniform 0}", "GET {key uniform -5}", "GET {value}", "GET {rand 0}",
                         "GET {range 10 10}", "GET x{range 10 2}", "GET {key uniform 10", "GET \"abc",
                         "GET {nope 1}", "GET {key uniform 10x}", "GET {key last}",
                         "GET {key last} ; SET {key uniform 10} x", "MULTI ;", "; GET a", "GET a ; ; GET b",
                         "GET a ; {key uniform 3}", ";"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = 0;
        struct tmpl *t = tmpl_parse(bad[i], err, sizeof(err));
        if (t) fprintf(stderr, "accepted: '%s'\n", bad[i]);
        CHECK(t == NULL);
        CHECK(err[0] != 0);
        tmpl_free(t);
    }
}

/* Rank frequencies of a Zipf sampler with exponent s follow k^-s. */
static void check_zipf_law(double s) {
    struct zipf z;
    zipf_init(&z, 1000, s);
    struct rng r;
    rng_seed(&r, 3);
    static uint64_t cnt[1001];
    memset(cnt, 0, sizeof(cnt));
    size_t n = 2000000;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = zipf_sample(&z, &r);
        CHECK(k >= 1 && k <= 1000);
        if (k >= 1 && k <= 1000) cnt[k]++;
    }
    /* P(k) is proportional to k^-s: compare ranks 1, 2, 10 and 100 with
     * the normalised law. */
    double norm = 0;
    for (int k = 1; k <= 1000; k++) norm += pow(k, -s);
    int ks[] = {1, 2, 10, 100};
    for (int i = 0; i < 4; i++) {
        double want = pow(ks[i], -s) / norm;
        double got = (double)cnt[ks[i]] / (double)n;
        if (fabs(got - want) / want > 0.05) fprintf(stderr, "rank %d: got %g want %g\n", ks[i], got, want);
        CHECK(fabs(got - want) / want <= 0.05);
    }
}

static void test_zipf(void) {
    check_zipf_law(1.03);
    /* The exponent a template can give: {key zipfian N S}. */
    check_zipf_law(0.99);
    check_zipf_law(1.0);
    char err[256];
    struct tmpl *t = tmpl_parse("GET {key zipfian 1000 0.99}", err, sizeof(err));
    CHECK(t != NULL);
    tmpl_free(t);
    CHECK(tmpl_parse("GET {key zipfian 1000 0}", err, sizeof(err)) == NULL);
    CHECK(tmpl_parse("GET {key uniform 1000 0.99}", err, sizeof(err)) == NULL);
}

static void test_rscan(void) {
    struct rscan_item it;
    CHECK_EQ_LL(rscan_reply("+OK\r\n", 5, &it), 5);
    CHECK(it.type == '+' && it.payload_len == 2);
    CHECK_EQ_LL(rscan_reply("+OK\r", 4, &it), 0);
    CHECK_EQ_LL(rscan_reply("-ERR x\r\n", 8, &it), 8);
    CHECK(it.type == '-' && it.payload_len == 5 && !memcmp(it.payload, "ERR x", 5));
    CHECK_EQ_LL(rscan_reply("$3\r\nabc\r\n", 9, &it), 9);
    CHECK_EQ_LL(rscan_reply("$3\r\nabc\r", 8, &it), 0);
    CHECK_EQ_LL(rscan_reply("$-1\r\n", 5, &it), 5);
    CHECK_EQ_LL(rscan_reply("*2\r\n:1\r\n$1\r\nx\r\n+", 16, &it), 15);
    CHECK_EQ_LL(rscan_reply("*2\r\n:1\r\n", 8, &it), 0);
    CHECK_EQ_LL(rscan_reply("%1\r\n+a\r\n*0\r\n", 12, &it), 12);
    CHECK_EQ_LL(rscan_reply("_\r\n", 3, &it), 3);
    CHECK_EQ_LL(rscan_reply("|1\r\n+k\r\n+v\r\n:5\r\n", 16, &it), 16);
    CHECK(it.type == ':');
    CHECK_EQ_LL(rscan_reply("?\r\n", 3, &it), -1);
    CHECK_EQ_LL(rscan_reply("$abc\r\n", 6, &it), -1);
    CHECK_EQ_LL(rscan_reply("*-5\r\n", 5, &it), -1);
    const char *msg = "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\n123:x\r\n";
    long len = rscan_reply(msg, strlen(msg), &it);
    CHECK_EQ_LL(len, (long)strlen(msg));
    struct rscan_item e;
    CHECK(rscan_element(msg, (size_t)len, 0, &e) && e.payload_len == 7);
    CHECK(rscan_element(msg, (size_t)len, 2, &e) && e.payload_len == 5 && !memcmp(e.payload, "123:x", 5));
    CHECK(!rscan_element(msg, (size_t)len, 3, &e));
    /* EXEC's reply: an error among the elements is found by type. */
    const char *exec = "*3\r\n+OK\r\n-ERR not an integer\r\n$1\r\nv\r\n";
    len = rscan_reply(exec, strlen(exec), &it);
    CHECK_EQ_LL(len, (long)strlen(exec));
    CHECK(it.type == '*');
    CHECK(rscan_element(exec, (size_t)len, 1, &e) && e.type == '-' && e.payload_len == 18);
    /* Deep nesting is refused, not recursed into without bound. */
    char deep[512];
    size_t dl = 0;
    for (int i = 0; i < 100; i++) dl += (size_t)sprintf(deep + dl, "*1\r\n");
    CHECK_EQ_LL(rscan_reply(deep, dl, &it), -1);
}

/* --miss templates: {key last} first names the key the caller gives. */
static void test_tmpl_key_given(void) {
    char err[256];
    struct rng r;
    rng_seed(&r, 5);
    struct gbuf b = {0};
    /* Without the flag a leading {key last} is still an error. */
    err[0] = 0;
    CHECK(tmpl_parse("SET {key last} {value 5}", err, sizeof(err)) == NULL);
    CHECK(err[0] != 0);
    struct tmpl *t = tmpl_parse_flags("SET {key last} v", TMPL_KEY_GIVEN, err, sizeof(err));
    CHECK(t != NULL);
    if (!t) return;
    CHECK(!tmpl_draws_key(t));
    struct tmpl_ctx ctx = {.has_key = 1, .key = 42};
    CHECK_EQ_LL(tmpl_gen_ctx(t, &r, &b, &ctx), 42);
    CHECK_MEM(b.p, b.len, "*3\r\n$3\r\nSET\r\n$14\r\nkey_0000000042\r\n$1\r\nv\r\n");
    tmpl_free(t);

    /* In a mixed word, with a value, and in a sequence: the given key until
     * the request draws one of its own. */
    t = tmpl_parse_flags("SET p:{key last} {value 3} ; GET {key sequence 5} ; DEL {key last}", TMPL_KEY_GIVEN, err,
                         sizeof(err));
    CHECK(t != NULL);
    if (!t) return;
    CHECK(tmpl_draws_key(t));
    CHECK_EQ_LL(tmpl_replies(t), 3);
    b.len = 0;
    ctx.key = 7;
    CHECK_EQ_LL(tmpl_gen_ctx(t, &r, &b, &ctx), 0);
    gbuf_reserve(&b, 1);
    b.p[b.len] = 0;
    char val[8];
    int m = sscanf(b.p, "*3\r\n$3\r\nSET\r\n$16\r\np:key_0000000007\r\n$3\r\n%3s\r\n", val);
    CHECK_EQ_LL(m, 1);
    const char *tail = "*2\r\n$3\r\nGET\r\n$14\r\nkey_0000000000\r\n*2\r\n$3\r\nDEL\r\n$14\r\nkey_0000000000\r\n";
    CHECK(b.len > strlen(tail) && !strcmp(b.p + b.len - strlen(tail), tail));
    tmpl_free(t);

    /* The flag changes nothing for an ordinary template; tmpl_gen_ctx
     * returns the key number a request drew (what --miss repeats). */
    t = tmpl_parse_flags("GET {key uniform 1000}", TMPL_KEY_GIVEN, err, sizeof(err));
    CHECK(t != NULL && tmpl_draws_key(t));
    for (int i = 0; i < 50 && t; i++) {
        b.len = 0;
        struct tmpl_ctx c0 = {.conn = 3};
        uint64_t k = tmpl_gen_ctx(t, &r, &b, &c0);
        char exp[64];
        snprintf(exp, sizeof(exp), "*2\r\n$3\r\nGET\r\n$14\r\nkey_%010llu\r\n", (unsigned long long)k);
        CHECK_MEM(b.p, b.len, exp);
        CHECK(k < 1000);
    }
    tmpl_free(t);
    t = tmpl_parse("PING", err, sizeof(err));
    CHECK(t && !tmpl_draws_key(t));
    tmpl_free(t);
    /* Errors stay errors with the flag. */
    CHECK(tmpl_parse_flags("{key last}", TMPL_KEY_GIVEN, err, sizeof(err)) == NULL);
    CHECK(tmpl_parse_flags("SET {key last", TMPL_KEY_GIVEN, err, sizeof(err)) == NULL);
    gbuf_free(&b);
}

/* {key zipfian N 0.99} in a template: key 0 is the hottest, drawn with the
 * probability of rank 1 of the 0.99 law (and {key zipfian N} keeps 1.03). */
static void test_tmpl_zipfian_exponent(void) {
    const char *srcs[] = {"GET {key zipfian 1000 0.99}", "GET {key zipfian 1000}"};
    const double exps[] = {0.99, 1.03};
    for (int v = 0; v < 2; v++) {
        char err[256];
        struct tmpl *t = tmpl_parse(srcs[v], err, sizeof(err));
        CHECK(t != NULL);
        if (!t) return;
        struct rng r;
        rng_seed(&r, 9);
        struct gbuf b = {0};
        size_t n = 400000, k0 = 0, k9 = 0;
        for (size_t i = 0; i < n; i++) {
            b.len = 0;
            uint64_t k = tmpl_gen_ctx(t, &r, &b, NULL);
            CHECK(k < 1000);
            k0 += k == 0;
            k9 += k == 9;
        }
        double norm = 0;
        for (int k = 1; k <= 1000; k++) norm += pow(k, -exps[v]);
        double want0 = 1 / norm, want9 = pow(10, -exps[v]) / norm;
        CHECK(fabs((double)k0 / (double)n - want0) / want0 < 0.03);
        CHECK(fabs((double)k9 / (double)n - want9) / want9 < 0.06);
        tmpl_free(t);
        gbuf_free(&b);
    }
}

static void test_rscan_nil(void) {
    CHECK(rscan_is_nil("$-1\r\n", 5));
    CHECK(rscan_is_nil("*-1\r\n", 5));
    CHECK(rscan_is_nil("_\r\n", 3));
    CHECK(!rscan_is_nil("$0\r\n\r\n", 6));
    CHECK(!rscan_is_nil("$1\r\n_\r\n", 7));
    CHECK(!rscan_is_nil(":-1\r\n", 5));
    CHECK(!rscan_is_nil("+OK\r\n", 5));
    CHECK(!rscan_is_nil("*0\r\n", 4));
    CHECK(!rscan_is_nil("", 0));
}

static void test_miss_helpers(void) {
    /* Classification of a GET's reply. */
    CHECK(miss_classify("$-1\r\n", 5, '$') == MISS_NIL);
    CHECK(miss_classify("_\r\n", 3, '_') == MISS_NIL);
    CHECK(miss_classify("$3\r\nabc\r\n", 9, '$') == MISS_HIT);
    CHECK(miss_classify("$0\r\n\r\n", 6, '$') == MISS_HIT);
    CHECK(miss_classify("-WRONGTYPE x\r\n", 14, '-') == MISS_ERR);
    CHECK(miss_classify("!3\r\nerr\r\n", 9, '!') == MISS_ERR);
    CHECK(miss_hit_ratio(0, 0) < 0);
    CHECK(fabs(miss_hit_ratio(3, 1) - 0.75) < 1e-12);
    CHECK(miss_hit_ratio(0, 5) == 0);

    /* The closed loop's batches: waiting SETs first, new requests fill
     * the batch to -P, the quota bounds new requests only. */
    size_t nm, nn;
    miss_batch(0, 1, UINT64_MAX, &nm, &nn);
    CHECK(nm == 0 && nn == 1);
    miss_batch(1, 1, UINT64_MAX, &nm, &nn);
    CHECK(nm == 1 && nn == 0);
    miss_batch(3, 16, UINT64_MAX, &nm, &nn);
    CHECK(nm == 3 && nn == 13);
    miss_batch(20, 16, UINT64_MAX, &nm, &nn);
    CHECK(nm == 16 && nn == 0);
    miss_batch(2, 16, 5, &nm, &nn);
    CHECK(nm == 2 && nn == 5);
    miss_batch(1, 1, 0, &nm, &nn);
    CHECK(nm == 1 && nn == 0);
    miss_batch(0, 4, 0, &nm, &nn);
    CHECK(nm == 0 && nn == 0);

    /* The queue of keys waiting for their SET keeps their order across
     * growth and wrap-around. */
    struct keyq q = {0};
    uint64_t next_in = 0, next_out = 0;
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 7; i++) keyq_push(&q, next_in++);
        for (int i = 0; i < 5; i++) {
            uint64_t k = keyq_pop(&q);
            CHECK_EQ_LL(k, next_out);
            next_out++;
        }
    }
    CHECK_EQ_LL(q.count, next_in - next_out);
    while (q.count) {
        uint64_t k = keyq_pop(&q);
        CHECK_EQ_LL(k, next_out);
        next_out++;
    }
    CHECK_EQ_LL(next_out, 350);
    keyq_free(&q);
    CHECK(q.v == NULL && q.count == 0);
}

int main(void) {
    TEST_RUN(test_hist_uniform);
    TEST_RUN(test_hist_exponential_and_lognormal);
    TEST_RUN(test_hist_buckets);
    TEST_RUN(test_tmpl_literal_and_sequence);
    TEST_RUN(test_tmpl_random_parts);
    TEST_RUN(test_tmpl_sequence);
    TEST_RUN(test_tmpl_errors);
    TEST_RUN(test_zipf);
    TEST_RUN(test_rscan);
    TEST_RUN(test_tmpl_key_given);
    TEST_RUN(test_tmpl_zipfian_exponent);
    TEST_RUN(test_rscan_nil);
    TEST_RUN(test_miss_helpers);
    return TEST_REPORT();
}
