/* test_rdbstr.c - unit tests of RDB lengths and strings (src/core/rdbstr.c):
 * every length form at its boundaries, written and read back; plain
 * strings; the integer and LZF encodings as redis-server writes them
 * (bytes taken from its DUMP payloads); truncated input, unknown length
 * markers and encodings, and LZF headers that cannot be right, all of
 * which must fail without reading past the input. */
#include "core/alloc.h"
#include "core/rdbstr.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>

static void test_len_round_trip(void) {
    static const uint64_t cases[] = {0, 1, 63, 64, 255, 16383, 16384, 65535, 0xffffffffULL, 0x100000000ULL,
                                     UINT64_MAX};
    static const size_t sizes[] = {1, 1, 1, 2, 2, 2, 5, 5, 5, 9, 9};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct hk_buf b = {0};
        rdb_write_len(&b, cases[i]);
        CHECK_EQ_LL(b.len, sizes[i]);
        struct rdb_reader r;
        rdb_reader_init(&r, b.p, b.len);
        uint64_t n = 0;
        int enc = 1;
        CHECK(rdb_read_len(&r, &n, &enc) == 0);
        CHECK(n == cases[i]);
        CHECK(enc == 0);
        CHECK_EQ_LL(r.pos, b.len);
        /* Cut short by one byte: an error, not a read past the end. */
        if (b.len > 1) {
            rdb_reader_init(&r, b.p, b.len - 1);
            CHECK(rdb_read_len(&r, &n, &enc) < 0);
        }
        hk_free(b.p);
    }
}

static void test_len_bytes(void) {
    struct hk_buf b = {0};
    rdb_write_len(&b, 300);
    CHECK(b.len == 2 && (unsigned char)b.p[0] == 0x41 && (unsigned char)b.p[1] == 0x2c);
    b.len = 0;
    rdb_write_len(&b, 70000);
    CHECK(b.len == 5 && (unsigned char)b.p[0] == 0x80 && (unsigned char)b.p[1] == 0 && (unsigned char)b.p[2] == 1 &&
          (unsigned char)b.p[3] == 0x11 && (unsigned char)b.p[4] == 0x70);
    hk_free(b.p);
    /* 0x82..0xbf are not lengths. */
    static const unsigned char bad[] = {0x82, 0, 0, 0, 0};
    struct rdb_reader r;
    rdb_reader_init(&r, bad, sizeof(bad));
    uint64_t n;
    int enc;
    CHECK(rdb_read_len(&r, &n, &enc) < 0);
}

static void test_plain_strings(void) {
    static const size_t lens[] = {0, 1, 63, 64, 16383, 16384, 100000};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        char *s = hk_malloc(lens[i] + 1);
        for (size_t j = 0; j < lens[i]; j++) s[j] = (char)(j * 7 + i);
        struct hk_buf b = {0};
        rdb_write_string(&b, s, lens[i]);
        rdb_write_string(&b, "tail", 4);
        struct rdb_reader r;
        rdb_reader_init(&r, b.p, b.len);
        size_t n = 0;
        char *got = rdb_read_string(&r, &n);
        CHECK(got != NULL);
        if (got) {
            CHECK_EQ_LL(n, lens[i]);
            CHECK(memcmp(got, s, lens[i]) == 0);
            CHECK(got[n] == '\0');
            hk_free(got);
        }
        got = rdb_read_string(&r, &n);
        CHECK(got != NULL);
        if (got) CHECK_MEM(got, n, "tail");
        hk_free(got);
        CHECK_EQ_LL(r.pos, b.len);
        /* Every truncation fails. */
        for (size_t cut = 0; cut < b.len - 5 && cut < 80; cut++) {
            rdb_reader_init(&r, b.p, cut);
            CHECK(rdb_read_string(&r, &n) == NULL);
        }
        hk_free(b.p);
        hk_free(s);
    }
}

static void expect_string(const unsigned char *p, size_t len, const char *want) {
    struct rdb_reader r;
    rdb_reader_init(&r, p, len);
    size_t n = 0;
    char *got = rdb_read_string(&r, &n);
    CHECK(got != NULL);
    if (!got) return;
    CHECK_MEM(got, n, want);
    CHECK_EQ_LL(r.pos, len);
    hk_free(got);
}

static void expect_fail(const unsigned char *p, size_t len) {
    struct rdb_reader r;
    rdb_reader_init(&r, p, len);
    size_t n;
    char *got = rdb_read_string(&r, &n);
    CHECK(got == NULL);
    hk_free(got);
}

/* As redis-server 7.0 stores SET values "-5", "300" and "-1234567". */
static void test_integer_encodings(void) {
    static const unsigned char i8[] = {0xc0, 0xfb}, i16[] = {0xc1, 0x2c, 0x01}, i32[] = {0xc2, 0x79, 0x29, 0xed, 0xff};
    expect_string(i8, sizeof(i8), "-5");
    expect_string(i16, sizeof(i16), "300");
    expect_string(i32, sizeof(i32), "-1234567");
    static const unsigned char max16[] = {0xc1, 0xff, 0x7f}, min32[] = {0xc2, 0, 0, 0, 0x80};
    expect_string(max16, sizeof(max16), "32767");
    expect_string(min32, sizeof(min32), "-2147483648");
    expect_fail(i32, 4);
    expect_fail(i16, 2);
    expect_fail(i8, 1);
    static const unsigned char unknown[] = {0xc4, 0, 0, 0, 0};
    expect_fail(unknown, sizeof(unknown));
}

/* A 57-byte value redis-server 7.0 compressed with LZF. */
static const unsigned char redis_lzf[] = {0xc3, 0x15, 0x39, 0x03, 'a', 'b', 'c', 'a', 0xe0, 0x1a, 0x02, 0x05, '-',
                                          'h',  'e',  'l',  'l',  'o', 0xe0, 0x01, 0x05, 0x01, 'l',  'o'};

static void test_lzf_encoding(void) {
    expect_string(redis_lzf, sizeof(redis_lzf), "abcabcabcabcabcabcabcabcabcabcabcabcabc-hello-hello-hello");
    for (size_t cut = 0; cut < sizeof(redis_lzf); cut++) expect_fail(redis_lzf, cut);
    unsigned char bad[sizeof(redis_lzf)];
    /* A plain length that does not match the stream. */
    memcpy(bad, redis_lzf, sizeof(bad));
    bad[2] = 0x38;
    expect_fail(bad, sizeof(bad));
    /* Zero lengths. */
    memcpy(bad, redis_lzf, sizeof(bad));
    bad[2] = 0;
    expect_fail(bad, sizeof(bad));
    /* A plain length no LZF stream of that size could produce. */
    static const unsigned char huge[] = {0xc3, 0x02, 0x81, 0, 0, 0, 1, 0, 0, 0, 0, 0x00, 'a'};
    expect_fail(huge, sizeof(huge));
    /* A corrupt stream: a back reference before the start. */
    static const unsigned char back[] = {0xc3, 0x03, 0x08, 0x20, 0x10, 0x00};
    expect_fail(back, sizeof(back));
}

int main(void) {
    TEST_RUN(test_len_round_trip);
    TEST_RUN(test_len_bytes);
    TEST_RUN(test_plain_strings);
    TEST_RUN(test_integer_encodings);
    TEST_RUN(test_lzf_encoding);
    return TEST_REPORT();
}
