/* test_zsetval.c - unit tests of the sorted-set value (src/types/zset.c)
 * in both encodings: ZADD outcomes under every flag and the pre_change
 * call agreeing with them, NaN refusal, deletes, ranks both ways, rank-range
 * deletes, conversion at the entry-count and member-length limits, the
 * iterator (both directions, seek, score and lex starts), range parsing,
 * counts and spans, building results, the set algebra, the scan step, and
 * the lifecycle slots (dup, usage, digest). Each test runs on a listpack
 * and on a skiplist; the limits are set through type_limits. */
#include "core/skiplist.h"
#include "core/status.h"
#include "test.h"
#include "types/digest.h"
#include "types/kv.h"
#include "types/types.h"
#include "types/zset.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_limits(long long entries, long long value) {
    atomic_store(&type_limits.zset_max_listpack_entries, entries);
    atomic_store(&type_limits.zset_max_listpack_value, value);
}

/* An empty value in the listpack (skip = 0) or skiplist encoding. */
static struct kv *mk(int skip) { return zs_entry_new("k", 1, skip ? (unsigned long)-1 : 0, 0); }

static int add(struct kv *e, double score, const char *m, int flags, double *ns) {
    int out = -1;
    double dummy;
    int st = zs_add(e, score, m, strlen(m), flags, &out, ns ? ns : &dummy, NULL);
    return st == HK_OK ? out : -1;
}

static double score_of(const struct kv *e, const char *m) {
    double s = NAN;
    if (!zs_score(e, m, strlen(m), &s)) return NAN;
    return s;
}

/* The members in order as "m:score m:score ...". */
static void dump(const struct kv *e, char *buf, size_t size, int rev) {
    struct zit it;
    size_t used = 0;
    buf[0] = '\0';
    zit_init(&it, e);
    zit_seek(&it, rev ? zs_len(e) - 1 : 0);
    for (; zs_len(e) && zit_valid(&it); zit_move(&it, rev)) {
        const char *m;
        size_t l;
        double sc;
        zit_get(&it, &m, &l, &sc);
        used += (size_t)snprintf(buf + used, size - used, "%s%.*s:%g", used ? " " : "", (int)l, m, sc);
    }
}

#define CHECK_DUMP(e, rev, want)                                                                                    \
    do {                                                                                                            \
        char d_[512];                                                                                               \
        dump((e), d_, sizeof(d_), (rev));                                                                           \
        CHECK_MEM(d_, strlen(d_), want);                                                                            \
    } while (0)

static void digest_of(const struct kv *e, unsigned char d[20]) {
    memset(d, 0, 20);
    zset_type_ops.digest(e, d);
}

/* ---- adds ---- */

/* pre_change must be called exactly when zs_add then adds or updates,
 * once, and while the value is still as it was before the call. */
struct probe {
    struct pre_change pc;
    const struct kv *e;
    char before[4096];
    int calls, unchanged;
};

static void probe_fired(struct pre_change *pc) {
    struct probe *p = (struct probe *)pc;
    char now[4096];
    dump(p->e, now, sizeof(now), 0);
    p->calls++;
    p->unchanged = strcmp(now, p->before) == 0;
}

static void probe_init(struct probe *p, const struct kv *e) {
    memset(p, 0, sizeof(*p));
    p->pc.fn = probe_fired;
    p->e = e;
    dump(e, p->before, sizeof(p->before), 0);
}

static int add_checked(struct kv *e, double score, const char *m, int flags, double *ns) {
    struct probe p;
    probe_init(&p, e);
    int out = -1;
    double dummy;
    int st = zs_add(e, score, m, strlen(m), flags, &out, ns ? ns : &dummy, &p.pc);
    if (st != HK_OK) out = -1;
    int did = out > 0 && (out & (ZS_ADDED | ZS_UPDATED));
    if (p.calls != did || (did && !p.unchanged)) {
        fprintf(stderr, "pre_change(%g, %s, flags %d): %d call(s), value unchanged %d, but zs_add gave %d\n", score,
                m, flags, p.calls, p.unchanged, out);
        test_cur_failed = 1;
    }
    return out;
}

/* Whether zs_add with these arguments calls pre_change (the value is
 * changed by it or not; for arguments that change nothing). */
static int add_fires(struct kv *e, double score, const char *m, int flags) {
    struct probe p;
    probe_init(&p, e);
    int out;
    zs_add(e, score, m, strlen(m), flags, &out, NULL, &p.pc);
    return p.calls;
}

static void test_add_outcomes(void) {
    for (int skip = 0; skip < 2; skip++) {
        struct kv *e = mk(skip);
        CHECK_EQ_LL(kv_enc(e), skip ? ENC_SKIPLIST : ENC_LISTPACK);
        double ns = 0;
        CHECK_EQ_LL(add_checked(e, 1, "a", 0, &ns), ZS_ADDED);
        CHECK(ns == 1);
        CHECK_EQ_LL(add_checked(e, 2, "b", 0, NULL), ZS_ADDED);
        CHECK_EQ_LL(add_checked(e, 3, "c", 0, NULL), ZS_ADDED);
        /* Same score: nothing changes, but the score is reported. */
        ns = 0;
        CHECK_EQ_LL(add_checked(e, 1, "a", 0, &ns), 0);
        CHECK(ns == 1);
        CHECK_EQ_LL(add_checked(e, 5, "a", 0, &ns), ZS_UPDATED);
        CHECK(ns == 5);
        CHECK_DUMP(e, 0, "b:2 c:3 a:5");
        /* NX: only new members. */
        CHECK_EQ_LL(add_checked(e, 9, "a", ZS_NX, NULL), ZS_NOP);
        CHECK_EQ_LL(add_checked(e, 0, "d", ZS_NX, NULL), ZS_ADDED);
        /* XX: only existing members. */
        CHECK_EQ_LL(add_checked(e, 7, "zz", ZS_XX, NULL), ZS_NOP);
        CHECK(isnan(score_of(e, "zz")));
        CHECK_EQ_LL(add_checked(e, 4, "d", ZS_XX, NULL), ZS_UPDATED);
        /* GT / LT: move one way only; new members are still added. */
        CHECK_EQ_LL(add_checked(e, 1, "a", ZS_GT, NULL), ZS_NOP);
        CHECK_EQ_LL(add_checked(e, 5, "a", ZS_GT, NULL), ZS_NOP);
        CHECK_EQ_LL(add_checked(e, 6, "a", ZS_GT, NULL), ZS_UPDATED);
        CHECK_EQ_LL(add_checked(e, 8, "b", ZS_LT, NULL), ZS_NOP);
        CHECK_EQ_LL(add_checked(e, 1, "b", ZS_LT, NULL), ZS_UPDATED);
        CHECK_EQ_LL(add_checked(e, -1, "e", ZS_GT, NULL), ZS_ADDED);
        CHECK_DUMP(e, 0, "e:-1 b:1 c:3 d:4 a:6");
        /* INCR: the sum, for new members the increment itself. */
        CHECK_EQ_LL(add_checked(e, 2.5, "c", ZS_INCR, &ns), ZS_UPDATED);
        CHECK(ns == 5.5);
        CHECK_EQ_LL(add_checked(e, 0, "c", ZS_INCR, &ns), 0);
        CHECK(ns == 5.5);
        CHECK_EQ_LL(add_checked(e, 3, "f", ZS_INCR, &ns), ZS_ADDED);
        CHECK(ns == 3);
        CHECK_EQ_LL(add_checked(e, -10, "a", ZS_INCR | ZS_GT, NULL), ZS_NOP);
        CHECK(score_of(e, "a") == 6);
        CHECK_EQ_LL(add_checked(e, 1, "a", ZS_INCR | ZS_NX, NULL), ZS_NOP);
        CHECK_EQ_LL(add_checked(e, 1, "g", ZS_INCR | ZS_XX, NULL), ZS_NOP);
        CHECK_DUMP(e, 0, "e:-1 b:1 f:3 d:4 c:5.5 a:6");
        CHECK_EQ_LL(zs_len(e), 6);
        CHECK_EQ_LL(kv_enc(e), skip ? ENC_SKIPLIST : ENC_LISTPACK);
        kv_free(e);
    }
}

/* Random adds under random flags on both encodings side by side: the
 * outcomes, the pre_change calls and the contents must all agree. */
static void test_add_random(void) {
    struct kv *e[2] = {mk(0), mk(1)};
    srand(11);
    static const int flagset[] = {0, ZS_NX, ZS_XX, ZS_GT, ZS_LT, ZS_INCR, ZS_INCR | ZS_GT, ZS_INCR | ZS_LT,
                                  ZS_INCR | ZS_XX, ZS_XX | ZS_GT, ZS_XX | ZS_LT};
    char m[8];
    for (int step = 0; step < 3000; step++) {
        snprintf(m, sizeof(m), "m%d", rand() % 40);
        double score = (double)(rand() % 11 - 5) / 2;
        int flags = flagset[rand() % (int)(sizeof(flagset) / sizeof(flagset[0]))];
        double ns0 = -99, ns1 = -99;
        int o0 = add_checked(e[0], score, m, flags, &ns0);
        int o1 = add_checked(e[1], score, m, flags, &ns1);
        CHECK_EQ_LL(o0, o1);
        CHECK(ns0 == ns1);
        if (rand() % 5 == 0) {
            CHECK_EQ_LL(zs_del(e[0], m, strlen(m), NULL), zs_del(e[1], m, strlen(m), NULL));
        }
    }
    char d0[4096], d1[4096];
    dump(e[0], d0, sizeof(d0), 0);
    dump(e[1], d1, sizeof(d1), 0);
    CHECK(strcmp(d0, d1) == 0);
    kv_free(e[0]);
    kv_free(e[1]);
}

static void test_nan_refused(void) {
    for (int skip = 0; skip < 2; skip++) {
        struct kv *e = mk(skip);
        int out = -1;
        CHECK_EQ_LL(zs_add(e, NAN, "a", 1, 0, &out, NULL, NULL), HK_ERR_NAN_SCORE);
        CHECK_EQ_LL(zs_len(e), 0);
        CHECK(!add_fires(e, NAN, "a", 0));
        CHECK_EQ_LL(add(e, INFINITY, "a", 0, NULL), ZS_ADDED);
        /* inf + -inf */
        CHECK(!add_fires(e, -INFINITY, "a", ZS_INCR));
        CHECK_EQ_LL(zs_add(e, -INFINITY, "a", 1, ZS_INCR, &out, NULL, NULL), HK_ERR_NAN_SCORE);
        CHECK(score_of(e, "a") == INFINITY);
        CHECK_EQ_LL(zs_len(e), 1);
        kv_free(e);
    }
}

/* ---- deletes and ranks ---- */

static struct kv *abcde(int skip) {
    struct kv *e = mk(skip);
    add(e, 1, "a", 0, NULL);
    add(e, 2, "b", 0, NULL);
    add(e, 2, "c", 0, NULL);
    add(e, 3, "d", 0, NULL);
    add(e, 4, "e", 0, NULL);
    return e;
}

static void test_delete(void) {
    for (int skip = 0; skip < 2; skip++) {
        struct kv *e = abcde(skip);
        /* pre_change: once, before the member goes, only for a member. */
        struct probe p;
        probe_init(&p, e);
        CHECK_EQ_LL(zs_del(e, "c", 1, &p.pc), 1);
        CHECK(p.calls == 1 && p.unchanged);
        probe_init(&p, e);
        CHECK_EQ_LL(zs_del(e, "c", 1, &p.pc), 0);
        CHECK_EQ_LL(zs_del(e, "zz", 2, &p.pc), 0);
        CHECK_EQ_LL(p.calls, 0);
        CHECK_EQ_LL(zs_len(e), 4);
        CHECK_DUMP(e, 0, "a:1 b:2 d:3 e:4");
        CHECK(zs_del(e, "a", 1, NULL) && zs_del(e, "b", 1, NULL) && zs_del(e, "d", 1, NULL) && zs_del(e, "e", 1, NULL));
        CHECK_EQ_LL(zs_len(e), 0);
        kv_free(e);
    }
}

static void test_rank(void) {
    for (int skip = 0; skip < 2; skip++) {
        struct kv *e = abcde(skip);
        double s = 0;
        CHECK_EQ_LL(zs_rank(e, "a", 1, 0, &s), 0);
        CHECK(s == 1);
        CHECK_EQ_LL(zs_rank(e, "c", 1, 0, &s), 2);
        CHECK(s == 2);
        CHECK_EQ_LL(zs_rank(e, "e", 1, 0, NULL), 4);
        CHECK_EQ_LL(zs_rank(e, "e", 1, 1, NULL), 0);
        CHECK_EQ_LL(zs_rank(e, "a", 1, 1, NULL), 4);
        CHECK_EQ_LL(zs_rank(e, "b", 1, 1, NULL), 3);
        CHECK_EQ_LL(zs_rank(e, "x", 1, 0, NULL), -1);
        CHECK_EQ_LL(zs_rank(e, "x", 1, 1, NULL), -1);
        kv_free(e);
    }
}

static void test_delete_ranks(void) {
    for (int skip = 0; skip < 2; skip++) {
        struct kv *e = abcde(skip);
        zs_delete_ranks(e, 1, 0);
        CHECK_EQ_LL(zs_len(e), 5);
        zs_delete_ranks(e, 1, 2);
        CHECK_DUMP(e, 0, "a:1 d:3 e:4");
        zs_delete_ranks(e, 2, 1);
        CHECK_DUMP(e, 0, "a:1 d:3");
        zs_delete_ranks(e, 0, 2);
        CHECK_EQ_LL(zs_len(e), 0);
        kv_free(e);
    }
}

/* ---- encodings ---- */

static void test_convert_entries(void) {
    set_limits(4, 64);
    struct kv *e = mk(0);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    add(e, 4, "d", 0, NULL);
    add(e, 1, "a", 0, NULL);
    add(e, 3, "c", 0, NULL);
    add(e, 2, "b", 0, NULL);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    /* Updates and refused adds never convert. */
    add(e, 9, "a", 0, NULL);
    add(e, 5, "x", ZS_XX, NULL);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    CHECK_EQ_LL(add(e, 0, "e", 0, NULL), ZS_ADDED);
    CHECK_EQ_LL(kv_enc(e), ENC_SKIPLIST);
    CHECK_DUMP(e, 0, "e:0 b:2 c:3 d:4 a:9");
    kv_free(e);
    /* Sized up front. */
    e = zs_entry_new("k", 1, 5, 1);
    CHECK_EQ_LL(kv_enc(e), ENC_SKIPLIST);
    kv_free(e);
    e = zs_entry_new("k", 1, 4, 64);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    kv_free(e);
    set_limits(128, 64);
}

static void test_convert_value_len(void) {
    set_limits(128, 8);
    struct kv *e = mk(0);
    add(e, 1, "12345678", 0, NULL);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    add(e, 2, "123456789", 0, NULL);
    CHECK_EQ_LL(kv_enc(e), ENC_SKIPLIST);
    CHECK_DUMP(e, 0, "12345678:1 123456789:2");
    kv_free(e);
    e = zs_entry_new("k", 1, 1, 9);
    CHECK_EQ_LL(kv_enc(e), ENC_SKIPLIST);
    kv_free(e);
    set_limits(128, 64);
}

static void test_entry_from_zsl(void) {
    set_limits(3, 4);
    struct zsl *z = zsl_new();
    zsl_insert(z, 2, "b", 1);
    zsl_insert(z, -0.0, "a", 1);
    struct kv *e = zs_entry_from_zsl("k", 1, z);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    CHECK_DUMP(e, 0, "a:0 b:2");
    double s = 1;
    /* A listpack keeps no negative zero. */
    CHECK(zs_score(e, "a", 1, &s) && s == 0 && !signbit(s));
    kv_free(e);
    z = zsl_new();
    for (int i = 0; i < 4; i++) {
        char m[2] = {(char)('a' + i), 0};
        zsl_insert(z, i, m, 1);
    }
    e = zs_entry_from_zsl("k", 1, z);
    CHECK_EQ_LL(kv_enc(e), ENC_SKIPLIST);
    kv_free(e);
    z = zsl_new();
    zsl_insert(z, 1, "abcde", 5);
    e = zs_entry_from_zsl("k", 1, z);
    CHECK_EQ_LL(kv_enc(e), ENC_SKIPLIST);
    kv_free(e);
    set_limits(128, 64);
}

/* A result keeps -0 only once it stopped being a listpack, as Redis's. */
static void test_build(void) {
    set_limits(2, 64);
    struct zs_build b;
    zs_build_init(&b);
    zs_build_add(&b, -0.0, "a", 1);
    zs_build_add(&b, 1, "b", 1);
    zs_build_add(&b, -0.0, "c", 1);
    CHECK_EQ_LL(b.z->length, 3);
    CHECK(!signbit(zsl_find(b.z, "a", 1)->score));
    CHECK(signbit(zsl_find(b.z, "c", 1)->score));
    zsl_free(b.z);
    zs_build_init(&b);
    zs_build_expect(&b, 3);
    zs_build_add(&b, -0.0, "a", 1);
    CHECK(signbit(zsl_find(b.z, "a", 1)->score));
    zsl_free(b.z);
    zs_build_init(&b);
    zs_build_add(&b, -0.0, "a-long-member-past-the-limit-of-64-bytes-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 72);
    CHECK(signbit(b.z->header->level[0].forward->score));
    zsl_free(b.z);
    set_limits(128, 64);
}

/* ---- iterator and ranges ---- */

static void test_iterator(void) {
    for (int skip = 0; skip < 2; skip++) {
        struct kv *e = abcde(skip);
        CHECK_DUMP(e, 0, "a:1 b:2 c:2 d:3 e:4");
        CHECK_DUMP(e, 1, "e:4 d:3 c:2 b:2 a:1");
        struct zit it;
        zit_init(&it, e);
        zit_seek(&it, 3);
        const char *m;
        size_t l;
        double sc;
        CHECK(zit_valid(&it));
        zit_get(&it, &m, &l, &sc);
        CHECK_MEM(m, l, "d");
        CHECK(sc == 3);
        CHECK_EQ_LL(zit_rank(&it), 3);
        zit_prev(&it);
        zit_get(&it, &m, &l, NULL);
        CHECK_MEM(m, l, "c");
        zit_move(&it, 0);
        zit_move(&it, 0);
        zit_get(&it, &m, &l, NULL);
        CHECK_MEM(m, l, "e");
        zit_next(&it);
        CHECK(!zit_valid(&it));
        zit_seek(&it, 0);
        zit_prev(&it);
        CHECK(!zit_valid(&it));
        zit_seek(&it, 5);
        CHECK(!zit_valid(&it));
        kv_free(e);
    }
}

static int parse_range(const char *min, const char *max, struct zrange *r) {
    return zs_parse_range(min, strlen(min), max, strlen(max), r);
}

static int parse_lex(const char *min, const char *max, struct zlex *r) {
    return zs_parse_lex(min, strlen(min), max, strlen(max), r);
}

static void test_parse(void) {
    struct zrange r;
    CHECK_EQ_LL(parse_range("(1", "+inf", &r), HK_OK);
    CHECK(r.min == 1 && r.minex && r.max == INFINITY && !r.maxex);
    CHECK_EQ_LL(parse_range("-inf", "(2.5", &r), HK_OK);
    CHECK(r.min == -INFINITY && !r.minex && r.max == 2.5 && r.maxex);
    /* strtod's rules, as Redis: an empty end is 0. */
    CHECK_EQ_LL(parse_range("", "0x10", &r), HK_OK);
    CHECK(r.min == 0 && r.max == 16);
    CHECK_EQ_LL(parse_range("nan", "1", &r), HK_ERR_MINMAX_FLOAT);
    CHECK_EQ_LL(parse_range("1", "(", &r), HK_OK); /* "(" then "" */
    CHECK_EQ_LL(parse_range("1", "abc", &r), HK_ERR_MINMAX_FLOAT);
    CHECK_EQ_LL(parse_range("1 ", "2", &r), HK_ERR_MINMAX_FLOAT);
    CHECK_EQ_LL(zs_parse_range("1\0", 2, "2", 1, &r), HK_ERR_MINMAX_FLOAT);
    struct zlex x;
    CHECK_EQ_LL(parse_lex("-", "+", &x), HK_OK);
    CHECK(x.mininf == -1 && x.maxinf == 1);
    CHECK_EQ_LL(parse_lex("[b", "(d", &x), HK_OK);
    CHECK(!x.minex && x.maxex && x.minlen == 1 && x.maxlen == 1 && x.min[0] == 'b' && x.max[0] == 'd');
    CHECK_EQ_LL(parse_lex("b", "+", &x), HK_ERR_MINMAX_LEX);
    CHECK_EQ_LL(parse_lex("-", "", &x), HK_ERR_MINMAX_LEX);
    CHECK_EQ_LL(parse_lex("--", "+", &x), HK_ERR_MINMAX_LEX);
    CHECK_EQ_LL(parse_lex("[", "+", &x), HK_OK);
}

static void first_member(struct zit *it, char *out) {
    out[0] = '\0';
    if (!zit_valid(it)) return;
    const char *m;
    size_t l;
    zit_get(it, &m, &l, NULL);
    memcpy(out, m, l);
    out[l] = '\0';
}

static void test_score_ranges(void) {
    for (int skip = 0; skip < 2; skip++) {
        struct kv *e = abcde(skip);
        struct zrange r;
        struct zit it;
        char m[16];
        unsigned long first = 99;
        parse_range("2", "3", &r);
        zit_init(&it, e);
        zit_score_start(&it, &r, 0);
        first_member(&it, m);
        CHECK(strcmp(m, "b") == 0);
        zit_score_start(&it, &r, 1);
        first_member(&it, m);
        CHECK(strcmp(m, "d") == 0);
        CHECK_EQ_LL(zs_count_range(e, &r), 3);
        CHECK_EQ_LL(zs_span_range(e, &r, &first), 3);
        CHECK_EQ_LL(first, 1);
        parse_range("(2", "(4", &r);
        zit_score_start(&it, &r, 0);
        first_member(&it, m);
        CHECK(strcmp(m, "d") == 0);
        zit_score_start(&it, &r, 1);
        first_member(&it, m);
        CHECK(strcmp(m, "d") == 0);
        CHECK_EQ_LL(zs_count_range(e, &r), 1);
        parse_range("5", "+inf", &r);
        zit_score_start(&it, &r, 0);
        CHECK(!zit_valid(&it));
        CHECK_EQ_LL(zs_count_range(e, &r), 0);
        first = 99;
        CHECK_EQ_LL(zs_span_range(e, &r, &first), 0);
        CHECK_EQ_LL(first, 99);
        parse_range("(3", "3", &r); /* empty */
        zit_score_start(&it, &r, 1);
        CHECK(!zit_valid(&it));
        parse_range("-inf", "+inf", &r);
        CHECK_EQ_LL(zs_count_range(e, &r), 5);
        kv_free(e);
    }
}

static void test_lex_ranges(void) {
    for (int skip = 0; skip < 2; skip++) {
        /* Equal scores: lex order is member order. */
        struct kv *e = mk(skip);
        const char *ms[] = {"a", "b", "c", "d", "e"};
        for (int i = 0; i < 5; i++) add(e, 0, ms[i], 0, NULL);
        struct zlex x;
        struct zit it;
        char m[16];
        unsigned long first = 99;
        parse_lex("(a", "[d", &x);
        zit_init(&it, e);
        zit_lex_start(&it, &x, 0);
        first_member(&it, m);
        CHECK(strcmp(m, "b") == 0);
        zit_lex_start(&it, &x, 1);
        first_member(&it, m);
        CHECK(strcmp(m, "d") == 0);
        CHECK_EQ_LL(zs_count_lex(e, &x), 3);
        CHECK_EQ_LL(zs_span_lex(e, &x, &first), 3);
        CHECK_EQ_LL(first, 1);
        parse_lex("-", "(b", &x);
        CHECK_EQ_LL(zs_count_lex(e, &x), 1);
        parse_lex("[f", "+", &x);
        zit_lex_start(&it, &x, 0);
        CHECK(!zit_valid(&it));
        CHECK_EQ_LL(zs_count_lex(e, &x), 0);
        parse_lex("+", "-", &x);
        zit_lex_start(&it, &x, 1);
        CHECK(!zit_valid(&it));
        kv_free(e);
    }
}

/* ---- algebra and scan ---- */

static void test_setop(void) {
    struct kv *x = mk(0), *y = mk(1);
    add(x, 1, "a", 0, NULL);
    add(x, 2, "b", 0, NULL);
    add(x, 3, "c", 0, NULL);
    add(y, 10, "b", 0, NULL);
    add(y, 20, "c", 0, NULL);
    add(y, 30, "d", 0, NULL);
    struct zs_input in[3];
    zs_input_entry(&in[0], x);
    zs_input_entry(&in[1], y);
    in[1].weight = 2;
    struct zsl *r = zs_setop(in, 2, ZS_UNION, ZS_AGG_SUM);
    CHECK_EQ_LL(r->length, 4);
    CHECK(zsl_find(r, "a", 1)->score == 1 && zsl_find(r, "b", 1)->score == 22 && zsl_find(r, "d", 1)->score == 60);
    zsl_free(r);
    zs_input_entry(&in[0], x);
    zs_input_entry(&in[1], y);
    r = zs_setop(in, 2, ZS_INTER, ZS_AGG_MAX);
    CHECK_EQ_LL(r->length, 2);
    CHECK(zsl_find(r, "b", 1)->score == 10 && zsl_find(r, "c", 1)->score == 20);
    zsl_free(r);
    zs_input_entry(&in[0], x);
    zs_input_entry(&in[1], y);
    r = zs_setop(in, 2, ZS_DIFF, ZS_AGG_SUM);
    CHECK_EQ_LL(r->length, 1);
    CHECK(zsl_find(r, "a", 1)->score == 1);
    zsl_free(r);
    /* A temporary skiplist input and a missing one. */
    struct zsl *plain = zsl_new();
    zsl_insert(plain, 1, "c", 1);
    zs_input_entry(&in[0], x);
    zs_input_zsl(&in[1], plain);
    zs_input_none(&in[2]);
    r = zs_setop(in, 3, ZS_UNION, ZS_AGG_MIN);
    CHECK_EQ_LL(r->length, 3);
    CHECK(zsl_find(r, "c", 1)->score == 1);
    zsl_free(r);
    zs_input_entry(&in[0], x);
    zs_input_zsl(&in[1], plain);
    zs_input_none(&in[2]);
    r = zs_setop(in, 3, ZS_INTER, ZS_AGG_SUM);
    CHECK_EQ_LL(r->length, 0);
    zsl_free(r);
    zs_input_entry(&in[0], x);
    zs_input_entry(&in[1], y);
    CHECK_EQ_LL(zs_intercard(in, 2, 0), 2);
    CHECK_EQ_LL(zs_intercard(in, 2, 1), 1);
    zs_input_none(&in[0]);
    r = zs_setop(in, 2, ZS_DIFF, ZS_AGG_SUM);
    CHECK_EQ_LL(r->length, 0);
    zsl_free(r);
    zsl_free(plain);
    kv_free(x);
    kv_free(y);
}

struct scan_seen {
    int seen[64];
};

static void scan_cb(const char *m, size_t l, double score, void *ctx) {
    struct scan_seen *s = ctx;
    char buf[16];
    if (l < 2 || l >= sizeof(buf)) return;
    memcpy(buf, m, l);
    buf[l] = '\0';
    int i = atoi(buf + 1);
    if (i >= 0 && i < 64 && score == i) s->seen[i]++;
}

static void test_scan(void) {
    for (int skip = 0; skip < 2; skip++) {
        struct kv *e = mk(skip);
        char m[8];
        for (int i = 0; i < 50; i++) {
            snprintf(m, sizeof(m), "m%d", i);
            add(e, i, m, 0, NULL);
        }
        struct scan_seen s = {0};
        uint64_t cur = 0, next = 0;
        int steps = 0;
        do {
            zs_scan(e, cur, 10, &next, scan_cb, &s);
            cur = next;
            steps++;
        } while (cur != 0 && steps < 1000);
        CHECK_EQ_LL(cur, 0);
        if (!skip) CHECK_EQ_LL(steps, 1); /* a listpack comes back whole */
        for (int i = 0; i < 50; i++) CHECK(s.seen[i] >= 1);
        kv_free(e);
    }
}

/* ---- lifecycle ---- */

static void test_dup(void) {
    for (int skip = 0; skip < 2; skip++) {
        struct kv *e = abcde(skip);
        struct kv *d = zset_type_ops.dup(e, "copy", 4, -1);
        CHECK_EQ_LL(kv_type(d), OBJ_ZSET);
        CHECK_EQ_LL(kv_enc(d), kv_enc(e));
        CHECK_MEM(kv_key(d), kv_keylen(d), "copy");
        CHECK_DUMP(d, 0, "a:1 b:2 c:2 d:3 e:4");
        add(e, 10, "a", 0, NULL);
        zs_del(e, "b", 1, NULL);
        add(d, 0, "z", 0, NULL);
        CHECK_DUMP(e, 0, "c:2 d:3 e:4 a:10");
        CHECK_DUMP(d, 0, "z:0 a:1 b:2 c:2 d:3 e:4");
        kv_free(e);
        kv_free(d);
    }
}

static void test_usage(void) {
    for (int skip = 0; skip < 2; skip++) {
        struct kv *e = abcde(skip);
        CHECK(zset_type_ops.usage(e, 0) > 0);
        /* Freeing costs one allocation per skiplist node, a listpack one. */
        CHECK_EQ_LL(kv_free_effort(e), skip ? 5 : 1);
        kv_free(e);
    }
}

static void test_digest(void) {
    unsigned char d1[20], d2[20], d3[20], want[20] = {0};
    /* The same content in both encodings, built in different orders. */
    struct kv *lp = abcde(0), *sk = mk(1);
    const char *ms[] = {"e", "c", "a", "d", "b"};
    const double sc[] = {4, 2, 1, 3, 2};
    for (int i = 0; i < 5; i++) add(sk, sc[i], ms[i], 0, NULL);
    digest_of(lp, d1);
    digest_of(sk, d2);
    CHECK(memcmp(d1, d2, 20) == 0);
    /* Redis's recipe: per member a fresh digest mixing the member then its
     * score as printed, the pairs folded by xor. */
    for (int i = 0; i < 5; i++) {
        unsigned char pair[20] = {0};
        dg_mix(pair, ms[i], 1);
        dg_mix_double(pair, sc[i]);
        dg_xor(want, pair, 20);
    }
    CHECK(memcmp(d1, want, 20) == 0);
    /* A different score changes it. */
    add(sk, 2.5, "b", 0, NULL);
    digest_of(sk, d3);
    CHECK(memcmp(d1, d3, 20) != 0);
    /* An empty value leaves the digest alone. */
    struct kv *empty = mk(1);
    digest_of(empty, d3);
    static const unsigned char zero[20];
    CHECK(memcmp(d3, zero, 20) == 0);
    kv_free(lp);
    kv_free(sk);
    kv_free(empty);
}

int main(void) {
    TEST_RUN(test_add_outcomes);
    TEST_RUN(test_add_random);
    TEST_RUN(test_nan_refused);
    TEST_RUN(test_delete);
    TEST_RUN(test_rank);
    TEST_RUN(test_delete_ranks);
    TEST_RUN(test_convert_entries);
    TEST_RUN(test_convert_value_len);
    TEST_RUN(test_entry_from_zsl);
    TEST_RUN(test_build);
    TEST_RUN(test_iterator);
    TEST_RUN(test_parse);
    TEST_RUN(test_score_ranges);
    TEST_RUN(test_lex_ranges);
    TEST_RUN(test_setop);
    TEST_RUN(test_scan);
    TEST_RUN(test_dup);
    TEST_RUN(test_usage);
    TEST_RUN(test_digest);
    return TEST_REPORT();
}
