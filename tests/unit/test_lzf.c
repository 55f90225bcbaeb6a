/* test_lzf.c - unit tests of the LZF codec (src/core/lzf.c): round trips
 * of compressible, random and mixed data of many sizes, the worst-case
 * output bound, refusal when the output does not fit, streams written by
 * Redis's liblzf (taken from DUMP payloads of redis-server) decoding to
 * the original bytes, and corrupt or truncated streams that must fail
 * without writing past the output (buffers are exact-size heap blocks, so
 * the ASan build catches any overrun). */
#include "core/lzf.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* Fill p with n bytes of a kind: 0 random, 1 one repeated byte, 2 text
 * from a small vocabulary, 3 random bytes with repeated stretches. */
static void fill(unsigned char *p, size_t n, int kind) {
    static const char *const words[] = {"list", "node", "quick", "redis", "value", "compress", " ", "42", "\n"};
    size_t i = 0;
    while (i < n) {
        if (kind == 0) {
            p[i++] = (unsigned char)rnd();
        } else if (kind == 1) {
            p[i++] = 'x';
        } else if (kind == 2) {
            const char *w = words[rnd() % 9];
            for (; *w && i < n; w++) p[i++] = (unsigned char)*w;
        } else if (i > 16 && rnd() % 4 == 0) {
            size_t back = 1 + rnd() % (i < 9000 ? i : 9000), len = 3 + rnd() % 300;
            for (size_t j = 0; j < len && i < n; j++, i++) p[i] = p[i - back];
        } else {
            p[i++] = (unsigned char)rnd();
        }
    }
}

/* Compress into an exact LZF_BOUND block, decompress into an exact block
 * of n bytes; both must succeed and give back the input. */
static void round_trip(const unsigned char *in, size_t n) {
    size_t cap = LZF_BOUND(n);
    unsigned char *c = malloc(cap);
    size_t cl = lzf_compress(in, n, c, cap);
    CHECK(n == 0 || cl > 0);
    CHECK(cl <= cap);
    unsigned char *d = malloc(n ? n : 1);
    if (n) {
        CHECK_EQ_LL(lzf_decompress(c, cl, d, n), n);
        CHECK(memcmp(d, in, n) == 0);
        /* One byte short of room: refused, not overrun. */
        unsigned char *s = malloc(n - 1 ? n - 1 : 1);
        CHECK_EQ_LL(lzf_decompress(c, cl, s, n - 1), 0);
        free(s);
    }
    free(d);
    free(c);
}

static void test_round_trips(void) {
    static const size_t sizes[] = {1, 2, 3, 4, 31, 32, 33, 47, 48, 100, 263, 264, 265, 1000, 4096, 8191,
                                   8192, 8193, 20000, 70000, 300000};
    for (int kind = 0; kind < 4; kind++) {
        for (size_t s = 0; s < sizeof(sizes) / sizeof(*sizes); s++) {
            unsigned char *p = malloc(sizes[s]);
            fill(p, sizes[s], kind);
            round_trip(p, sizes[s]);
            free(p);
        }
    }
    for (int i = 0; i < 300; i++) {
        size_t n = 1 + rnd() % 5000;
        unsigned char *p = malloc(n);
        fill(p, n, (int)(rnd() % 4));
        round_trip(p, n);
        free(p);
    }
}

static void test_compressible_shrinks(void) {
    unsigned char in[10000], out[10000];
    fill(in, sizeof(in), 1);
    size_t cl = lzf_compress(in, sizeof(in), out, sizeof(in));
    /* Longest match 264 bytes in 3: well under 2%. */
    CHECK(cl > 0 && cl < 200);
    fill(in, sizeof(in), 2);
    cl = lzf_compress(in, sizeof(in), out, sizeof(in));
    CHECK(cl > 0 && cl < sizeof(in) / 2);
}

static void test_incompressible(void) {
    unsigned char in[4096], out[4096 + 4096 / 32 + 1];
    fill(in, sizeof(in), 0);
    /* Random bytes do not shrink: with room only for the input, refused. */
    CHECK_EQ_LL(lzf_compress(in, sizeof(in), out, sizeof(in)), 0);
    /* With the bound they always fit, as literal runs. */
    size_t cl = lzf_compress(in, sizeof(in), out, sizeof(out));
    CHECK(cl > sizeof(in) && cl <= LZF_BOUND(sizeof(in)));
    CHECK_EQ_LL(lzf_compress(in, 0, out, sizeof(out)), 0);
    CHECK_EQ_LL(lzf_compress(in, 10, out, 0), 0);
}

/* Streams produced by redis-server 7.0 (liblzf) inside DUMP payloads. */
static void test_liblzf_streams(void) {
    static const unsigned char a[] = "\x01\x61\x61\xe0\x57\x00\x01\x61\x61";
    unsigned char out[200];
    CHECK_EQ_LL(lzf_decompress(a, sizeof(a) - 1, out, 100), 100);
    int all_a = 1;
    for (int i = 0; i < 100; i++) all_a &= out[i] == 'a';
    CHECK(all_a);
    static const unsigned char b[] = "\x0d\x68\x65\x6c\x6c\x6f\x20\x77\x6f\x72\x6c\x64\x2c\x20\x68\xe0\x0e\x0c\x04"
                                     "\x21\x20\x61\x62\x63\xe0\x00\x02\xe0\x0f\x25\xe0\x04\x3f\xe0\x36\x32\x01\x62\x63";
    const char *unit = "hello world, hello world, hello world! abcabcabcabc";
    char want[200];
    for (int i = 0; i < 3; i++) memcpy(want + i * 51, unit, 51);
    CHECK_EQ_LL(lzf_decompress(b, sizeof(b) - 1, out, sizeof(out)), 153);
    CHECK(memcmp(out, want, 153) == 0);
    /* And what we write for the same input decodes to the same bytes. */
    unsigned char c[200];
    size_t cl = lzf_compress(want, 153, c, 153);
    CHECK(cl > 0 && cl < 153);
    CHECK_EQ_LL(lzf_decompress(c, cl, out, 153), 153);
    CHECK(memcmp(out, want, 153) == 0);
}

/* Decompress into an exact-size heap block; returns the result. */
static size_t dec(const void *in, size_t in_len, size_t out_len) {
    unsigned char *o = malloc(out_len ? out_len : 1);
    size_t r = lzf_decompress(in, in_len, o, out_len);
    free(o);
    return r;
}

static void test_corrupt(void) {
    /* A literal run longer than the input left. */
    CHECK_EQ_LL(dec("\x05\x61\x62", 3, 100), 0);
    /* A match before anything was written. */
    CHECK_EQ_LL(dec("\x20\x00", 2, 100), 0);
    /* A match reaching further back than the output so far. */
    CHECK_EQ_LL(dec("\x00\x61\x20\x01", 4, 100), 0);
    /* A match missing its distance byte, and its extra length byte. */
    CHECK_EQ_LL(dec("\x00\x61\x20", 3, 100), 0);
    CHECK_EQ_LL(dec("\x00\x61\xe0", 3, 100), 0);
    CHECK_EQ_LL(dec("\x00\x61\xe0\x05", 4, 100), 0);
    /* A valid match that would pass the output. */
    CHECK_EQ_LL(dec("\x00\x61\xe0\xff\x00", 5, 100), 0);
    CHECK_EQ_LL(dec("\x00\x61\xe0\xff\x00", 5, 265), 265);
    /* Every truncation of a valid stream either fails or decodes a prefix. */
    unsigned char in[3000], c[3000 + 100], out[3000];
    fill(in, sizeof(in), 3);
    size_t cl = lzf_compress(in, sizeof(in), c, sizeof(c));
    CHECK(cl > 0);
    for (size_t t = 0; t < cl; t++) {
        unsigned char *o = malloc(sizeof(in));
        size_t r = lzf_decompress(c, t, o, sizeof(in));
        CHECK(r < sizeof(in));
        CHECK(r == 0 || memcmp(o, in, r) == 0);
        free(o);
    }
    /* Random garbage and bit flips: never more than the room given. */
    for (int i = 0; i < 20000; i++) {
        size_t n = 1 + rnd() % 64, room = rnd() % 300;
        unsigned char g[64];
        for (size_t j = 0; j < n; j++) g[j] = (unsigned char)rnd();
        CHECK(dec(g, n, room) <= room);
    }
    for (int i = 0; i < 2000; i++) {
        unsigned char *m = malloc(cl);
        memcpy(m, c, cl);
        m[rnd() % cl] ^= (unsigned char)(1u << (rnd() % 8));
        CHECK(dec(m, cl, sizeof(in)) <= sizeof(in));
        free(m);
    }
    (void)out;
}

int main(void) {
    TEST_RUN(test_round_trips);
    TEST_RUN(test_compressible_shrinks);
    TEST_RUN(test_incompressible);
    TEST_RUN(test_liblzf_streams);
    TEST_RUN(test_corrupt);
    return TEST_REPORT();
}
