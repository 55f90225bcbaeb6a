/* test_util.c - unit tests of the helpers in src/core/util.c and the slot
 * function in src/core/hash.c: strict integer parsing (Redis's string2ll
 * rules), shortest round-trip double formatting, glob matching as KEYS and
 * SCAN MATCH use it, and CRC16 / hash slots against values published for
 * Redis Cluster. */
#include "core/crc64.h"
#include "core/hash.h"
#include "core/util.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

static int ll_ok(const char *s, long long want) {
    long long v = 12345;
    return hk_str2ll(s, strlen(s), &v) == 1 && v == want;
}
static int ll_bad(const char *s) {
    long long v;
    return hk_str2ll(s, strlen(s), &v) == 0;
}

static void test_str2ll(void) {
    CHECK(ll_ok("0", 0));
    CHECK(ll_ok("1", 1));
    CHECK(ll_ok("-1", -1));
    CHECK(ll_ok("1234567890", 1234567890));
    CHECK(ll_ok("9223372036854775807", 9223372036854775807LL));
    CHECK(ll_ok("-9223372036854775808", -9223372036854775807LL - 1));
    CHECK(ll_bad("9223372036854775808"));
    CHECK(ll_bad("-9223372036854775809"));
    CHECK(ll_bad("18446744073709551616"));
    CHECK(ll_bad("99999999999999999999999"));
    CHECK(ll_bad(""));
    CHECK(ll_bad("-"));
    CHECK(ll_bad("-0"));
    CHECK(ll_bad("01"));
    CHECK(ll_bad("-01"));
    CHECK(ll_bad("00"));
    CHECK(ll_bad(" 1"));
    CHECK(ll_bad("1 "));
    CHECK(ll_bad("+1"));
    CHECK(ll_bad("1a"));
    CHECK(ll_bad("0x10"));
    CHECK(ll_bad("1.0"));
    /* Length is honoured: bytes past len are not read. */
    long long v;
    CHECK(hk_str2ll("123abc", 3, &v) && v == 123);
    CHECK(!hk_str2ll("1\0" "2", 3, &v));
    unsigned long long u;
    CHECK(hk_str2ull("18446744073709551615", 20, &u) && u == 18446744073709551615ULL);
    CHECK(!hk_str2ull("18446744073709551616", 20, &u));
    CHECK(!hk_str2ull("-1", 2, &u));
}

static void test_ll2str(void) {
    char buf[HK_LONG_STR_SIZE + 4];
    CHECK_MEM(buf, hk_ll2str(buf, 0), "0");
    CHECK_MEM(buf, hk_ll2str(buf, -9223372036854775807LL - 1), "-9223372036854775808");
    CHECK_MEM(buf, hk_ll2str(buf, 9223372036854775807LL), "9223372036854775807");
    CHECK_MEM(buf, hk_ull2str(buf, 18446744073709551615ULL), "18446744073709551615");
    CHECK_EQ_LL(hk_digits10(0), 1);
    CHECK_EQ_LL(hk_digits10(9), 1);
    CHECK_EQ_LL(hk_digits10(10), 2);
    CHECK_EQ_LL(hk_digits10(18446744073709551615ULL), 20);
}

/* Redis's string2ld: whole buffer, no leading space, no overflow, no NaN,
 * infinities accepted. */
static void test_str2ld(void) {
    long double d;
    CHECK(hk_str2ld("3.25", 4, &d) && d == 3.25L);
    CHECK(hk_str2ld("inf", 3, &d) && isinf(d) && d > 0);
    CHECK(hk_str2ld("-inf", 4, &d) && isinf(d) && d < 0);
    CHECK(!hk_str2ld("nan", 3, &d));
    CHECK(!hk_str2ld(" 1", 2, &d));
    CHECK(!hk_str2ld("\t1", 2, &d));
    CHECK(!hk_str2ld("1 ", 2, &d));
    CHECK(!hk_str2ld("", 0, &d));
    CHECK(!hk_str2ld("1e99999", 7, &d));
    CHECK(!hk_str2ld("1e-99999", 8, &d));
}

static void test_str2d(void) {
    double d;
    CHECK(hk_str2d("1.5", 3, &d) && d == 1.5);
    CHECK(hk_str2d("-inf", 4, &d) && isinf(d) && d < 0);
    CHECK(hk_str2d("1e3", 3, &d) && d == 1000);
    CHECK(!hk_str2d("nan", 3, &d));
    CHECK(!hk_str2d(" 1", 2, &d));
    CHECK(!hk_str2d("1 ", 2, &d));
    CHECK(!hk_str2d("", 0, &d));
    CHECK(!hk_str2d("1e999", 5, &d));
    CHECK(!hk_str2d("abc", 3, &d));
}

static void d2s(double d, const char *want) {
    char buf[64];
    int n = hk_d2str(buf, sizeof(buf), d);
    CHECK_MEM(buf, n, want);
}

static void test_d2str(void) {
    d2s(0.0, "0");
    d2s(-0.0, "-0");
    d2s(1.0, "1");
    d2s(3.0, "3");
    d2s(100.0, "100");
    d2s(1.5, "1.5");
    d2s(0.1, "0.1");
    d2s(-2.25, "-2.25");
    d2s(1.0 / 3.0, "0.3333333333333333");
    d2s(0.1 + 0.2, "0.30000000000000004");
    d2s(1e21, "1e+21");
    d2s(1e-7, "1e-7");
    d2s(1.5e-7, "1.5e-7");
    d2s(1e-6, "0.000001");
    d2s(0.0001, "0.0001");
    d2s(0.00012345, "1.2345e-4");
    d2s(1e7, "10000000");
    d2s(1e8, "1e+8");
    d2s(12300000000.0, "1.23e+10");
    d2s(123.456, "123.456");
    /* Integers: plain digits up to 7 trailing zeros, exponent form beyond. */
    d2s(-120000000.0, "-120000000");
    d2s(-1200000000.0, "-1.2e+9");
    d2s(999999999999999.0, "999999999999999");
    d2s(1e15, "1e+15");
    d2s(1234567890123456.0, "1234567890123456");
    d2s(-70000.0, "-70000");
    d2s(-1e300, "-1e+300");
    d2s(4503599627370495.5, "4503599627370495.5");
    d2s(INFINITY, "inf");
    d2s(-INFINITY, "-inf");
    d2s(NAN, "nan");
    d2s(1.7976931348623157e308, "1.7976931348623157e+308");
    d2s(5e-324, "5e-324");
    /* Round trip on pseudo-random doubles of every magnitude. */
    uint64_t x = 88172645463325252ULL;
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        memcpy(&d, &x, sizeof(d));
        if (isnan(d) || isinf(d)) continue;
        char buf[64];
        int n = hk_d2str(buf, sizeof(buf), d);
        if (n <= 0 || n >= (int)sizeof(buf) || strtod(buf, NULL) != d) bad++;
        /* Shortest: one significant digit less must not read back the same. */
        char shorter[64], sig[32];
        int digits = 0;
        for (int k = 0; k < n && buf[k] != 'e'; k++)
            if (buf[k] >= '0' && buf[k] <= '9' && (digits || buf[k] != '0') && digits < 31) sig[digits++] = buf[k];
        while (digits > 1 && sig[digits - 1] == '0') digits--;
        if (digits > 1 && digits <= 17) {
            snprintf(shorter, sizeof(shorter), "%.*g", digits - 1, d);
            if (strtod(shorter, NULL) == d) bad++;
        }
    }
    CHECK_EQ_LL(bad, 0);
}

static void test_ld2str(void) {
    char buf[128];
    CHECK_MEM(buf, hk_ld2str(buf, sizeof(buf), 10.5L), "10.5");
    CHECK_MEM(buf, hk_ld2str(buf, sizeof(buf), 3.0L), "3");
    CHECK_MEM(buf, hk_ld2str(buf, sizeof(buf), -0.0L), "0");
    CHECK_MEM(buf, hk_ld2str(buf, sizeof(buf), 5.0e3L), "5000");
}

static int gm(const char *p, const char *s) { return hk_globmatch(p, strlen(p), s, strlen(s), 0); }

static void test_globmatch(void) {
    CHECK(gm("*", ""));
    CHECK(gm("*", "anything"));
    CHECK(gm("", ""));
    CHECK(!gm("", "a"));
    CHECK(gm("h?llo", "hello"));
    CHECK(!gm("h?llo", "hllo"));
    CHECK(gm("h*llo", "hllo"));
    CHECK(gm("h*llo", "heeeello"));
    CHECK(gm("h[ae]llo", "hallo"));
    CHECK(!gm("h[ae]llo", "hillo"));
    CHECK(gm("h[^e]llo", "hallo"));
    CHECK(!gm("h[^e]llo", "hello"));
    CHECK(gm("h[a-b]llo", "hbllo"));
    CHECK(!gm("h[a-b]llo", "hcllo"));
    CHECK(gm("h[b-a]llo", "hallo")); /* reversed ranges work */
    CHECK(gm("h\\*llo", "h*llo"));
    CHECK(!gm("h\\*llo", "hello"));
    CHECK(gm("h[\\]]llo", "h]llo"));
    CHECK(gm("a*b*c", "aXXbYYc"));
    CHECK(!gm("a*b*c", "aXXbYY"));
    CHECK(gm("user:*:name", "user:1000:name"));
    CHECK(!gm("user:*:name", "user:1000:age"));
    CHECK(gm("*a", "ba"));
    CHECK(!gm("*a", "ab"));
    CHECK(gm("a*", "a"));
    CHECK(gm("**a**", "xxa"));
    CHECK(gm("*?", "x"));
    CHECK(!gm("*?", ""));
    CHECK(gm("*b*b*", "abbba"));
    CHECK(gm("a*aa", "aaaaa"));
    CHECK(!gm("a*aa", "aa"));
    CHECK(gm("[abc", "a"));   /* an open set ends the pattern */
    CHECK(!gm("[abc", "ab"));
    CHECK(gm("x\\", "x\\")); /* a trailing backslash is literal */
    CHECK(gm("*[0-9]", "key9"));
    CHECK(!gm("*[0-9]", "key9x"));
    CHECK(!gm("abc", "ABC"));
    CHECK(hk_globmatch("abc", 3, "ABC", 3, 1));
    CHECK(hk_globmatch("[A-C]x", 6, "bX", 2, 1));
    /* Pathological patterns terminate. */
    char s[200], p[200];
    memset(s, 'a', sizeof(s) - 1);
    s[sizeof(s) - 1] = 0;
    for (int i = 0; i < 60; i++) {
        p[2 * i] = 'a';
        p[2 * i + 1] = '*';
    }
    p[120] = 'b';
    p[121] = 0;
    CHECK(!gm(p, s));
}

/* A pattern of n runs "*?" (then `tail`) against n bytes of 'x'. */
static int star_runs(size_t n, const char *tail, size_t slen) {
    size_t tl = strlen(tail), pl = 2 * n + tl;
    char *p = malloc(pl + 1), *str = malloc(slen + 1);
    for (size_t i = 0; i < n; i++) {
        p[2 * i] = '*';
        p[2 * i + 1] = '?';
    }
    memcpy(p + 2 * n, tail, tl + 1);
    memset(str, 'x', slen);
    str[slen] = 0;
    int r = hk_globmatch(p, pl, str, slen, 0);
    free(p);
    free(str);
    return r;
}

/* Redis's matcher stops after 1000 nested runs of '*': a pattern that
 * needs more than that never matches, except that a final run still
 * matches what is left. */
static void test_globmatch_star_limit(void) {
    CHECK(star_runs(1000, "", 1000));
    CHECK(star_runs(1000, "", 5000));
    CHECK(!star_runs(1001, "", 1001));
    CHECK(!star_runs(1001, "", 5000));
    CHECK(star_runs(1000, "*", 1000));     /* the 1001st run ends the pattern */
    CHECK(star_runs(1000, "*", 3000));
    CHECK(!star_runs(1000, "*?", 3000));   /* 1001 runs, the last one followed by '?' */
    CHECK(!star_runs(1001, "*", 3000));
    CHECK(!star_runs(999, "", 998));       /* too short: a plain mismatch */
    /* Consecutive stars are one run; escaped and bracketed ones are no run. */
    char p[4000];
    size_t n = 0;
    for (int i = 0; i < 1000; i++) {
        p[n++] = '*';
        p[n++] = '*';
        p[n++] = 'a';
    }
    p[n] = 0;
    CHECK(gm(p, "aaaaaaaaaa") == 0); /* needs 1000 'a' */
    char s[1100];
    memset(s, 'a', 1000);
    s[1000] = 0;
    CHECK(gm(p, s));
    n = 0;
    for (int i = 0; i < 1200; i++) {
        p[n++] = '\\';
        p[n++] = '*';
    }
    p[n++] = '*';
    p[n] = 0;
    char t[1300];
    memset(t, '*', 1200);
    t[1200] = 0;
    CHECK(gm(p, t));
    /* The example of the limit that matters: 50,000 runs against a 50,000
     * byte string answers at once, as no match. */
    CHECK(!star_runs(50000, "", 50000));
    CHECK(!star_runs(50000, "", 10));
}

static void test_eqi(void) {
    CHECK(hk_eqi("GeT", 3, "get"));
    CHECK(!hk_eqi("GeT", 2, "get"));
    CHECK(!hk_eqi("GETX", 4, "get"));
}

static unsigned slot(const char *k) { return hk_key_slot(k, strlen(k)); }

static void test_crc16_slots(void) {
    /* CRC16/XMODEM check value. */
    CHECK_EQ_LL(hk_crc16("123456789", 9), 0x31C3);
    CHECK_EQ_LL(hk_crc16("", 0), 0);
    /* Slots as Redis Cluster computes them (CLUSTER KEYSLOT). */
    CHECK_EQ_LL(slot("foo"), 12182);
    CHECK_EQ_LL(slot("bar"), 5061);
    CHECK_EQ_LL(slot("hello"), 866);
    CHECK_EQ_LL(slot("somekey"), 11058);
    CHECK_EQ_LL(slot("123456789"), 0x31C3 % 16384);
    CHECK_EQ_LL(slot(""), 0);
    CHECK_EQ_LL(slot("{user1000}.following"), slot("{user1000}.followers"));
    CHECK_EQ_LL(slot("{user1000}.following"), slot("user1000"));
    /* The first '{' with a later '}' decides; an empty tag means the whole
     * key is hashed. */
    CHECK_EQ_LL(slot("foo{}{bar}"), hk_crc16("foo{}{bar}", 10) % 16384);
    CHECK_EQ_LL(slot("{}"), hk_crc16("{}", 2) % 16384);
    CHECK_EQ_LL(slot("foo{{bar}}zap"), slot("{bar"));
    CHECK_EQ_LL(slot("foo{bar}{zap}"), slot("bar"));
    CHECK_EQ_LL(slot("foo{bar"), hk_crc16("foo{bar", 7) % 16384);
    CHECK_EQ_LL(slot("foo}bar{"), hk_crc16("foo}bar{", 8) % 16384);
    /* Every slot is in range. */
    char k[16];
    int bad = 0;
    for (int i = 0; i < 10000; i++) {
        int n = snprintf(k, sizeof(k), "key:%d", i);
        if (hk_key_slot(k, (size_t)n) >= HK_SLOTS) bad++;
    }
    CHECK_EQ_LL(bad, 0);
}

static void test_hash(void) {
    /* Same bytes, same hash; length matters; nocase folds case only. */
    CHECK(hk_hash("abc", 3) == hk_hash("abc", 3));
    CHECK(hk_hash("abc", 3) != hk_hash("abc", 2));
    CHECK(hk_hash("abcdefghijklmnopq", 17) != hk_hash("abcdefghijklmnopr", 17));
    CHECK(hk_hash_nocase("HeLLo", 5) == hk_hash_nocase("hello", 5));
    CHECK(hk_hash_nocase("hello", 5) != hk_hash_nocase("hellp", 5));
}

/* Redis's test vectors (crc64.c's self-test), and piecewise updates. */
static void test_crc64(void) {
    CHECK_EQ_LL(crc64(0, "123456789", 9), (long long)0xe9c6d914c4b8d9caULL);
    const char *li = "This is a test of the emergency broadcast system.";
    uint64_t whole = crc64(0, li, strlen(li));
    CHECK_EQ_LL(crc64(crc64(0, li, 10), li + 10, strlen(li) - 10), (long long)whole);
    CHECK_EQ_LL(crc64(0, "", 0), 0);
}

int main(void) {
    hk_hash_init(99);
    TEST_RUN(test_str2ll);
    TEST_RUN(test_ll2str);
    TEST_RUN(test_str2d);
    TEST_RUN(test_str2ld);
    TEST_RUN(test_d2str);
    TEST_RUN(test_ld2str);
    TEST_RUN(test_globmatch);
    TEST_RUN(test_globmatch_star_limit);
    TEST_RUN(test_eqi);
    TEST_RUN(test_crc16_slots);
    TEST_RUN(test_hash);
    TEST_RUN(test_crc64);
    return TEST_REPORT();
}
