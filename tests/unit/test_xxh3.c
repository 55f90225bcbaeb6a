/* test_xxh3.c - unit tests of XXH3-64 (src/core/xxh3.c): the published
 * empty-input value, the digests Redis 8.4's documentation and tests show
 * for DIGEST (one with leading zeros), and known values of a generated
 * byte stream at every length class boundary of the algorithm (0..16,
 * 17..128, 129..240, and the long path around its 64-byte stripes and
 * 1 KiB blocks), taken from the reference implementation. Also: the
 * result does not depend on the input's alignment, and the hex form keeps
 * leading zeros and is lowercase. */
#include "core/xxh3.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>

#define STREAM_LEN 100000

static unsigned char stream[STREAM_LEN + 8];

/* The bytes the expected values were computed over: bits 16..23 of a
 * 32-bit LCG (a = 1103515245, c = 12345) seeded with 0x12345678. */
static void fill_stream(unsigned char *p, size_t n) {
    uint32_t x = 0x12345678;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)(x >> 16);
    }
}

static const struct {
    size_t len;
    uint64_t h;
} known[] = {
    {0, 0x2d06800538d394c2ULL},     {1, 0xf2386670cff0b396ULL},      {2, 0x399a410da9d059acULL},
    {3, 0xc61b62d548445f86ULL},     {4, 0xf19ab173417737bfULL},      {5, 0xc91f278bd51d906aULL},
    {7, 0xbfce666f074d62e4ULL},     {8, 0xeafc1d751e6b1584ULL},      {9, 0x8ec6f032117277a9ULL},
    {15, 0xeb3efcac70f31752ULL},    {16, 0x2d856f37dc756502ULL},     {17, 0xa3115a16d3fce177ULL},
    {31, 0xad0a1fb551fea8e2ULL},    {32, 0x8882e301cfcf5029ULL},     {33, 0x97121f11e29cf776ULL},
    {63, 0xfb43a867812c5f4dULL},    {64, 0x3426c018d730966eULL},     {65, 0x9dbb45ca093e3543ULL},
    {96, 0x1e114072d0c855f0ULL},    {97, 0x649b3141d5045b89ULL},     {127, 0xb21fac217dce0a21ULL},
    {128, 0x634e84aafc9d9c38ULL},   {129, 0x8717c9d0bc8f3428ULL},    {200, 0x2284ab05b3355b37ULL},
    {239, 0xc739c28655cf1e68ULL},   {240, 0x4e24ea1bdad4256eULL},    {241, 0xfff5cb6173c21db3ULL},
    {255, 0x59ddcae2845187e1ULL},   {256, 0x7c38202cccb15295ULL},    {511, 0x8a4a5ccc9e596b36ULL},
    {1023, 0x1110e85dff9b3c63ULL},  {1024, 0xe665714672b7cd0bULL},   {1025, 0x92ec889150e4180cULL},
    {1088, 0xf75e3b027532b8bcULL},  {2047, 0xdc367aa47391e8feULL},   {2048, 0xa77da7db9394a0fbULL},
    {2049, 0x75e310d52ed05292ULL},  {4096, 0x5fe8fb4c8a5e291cULL},   {10000, 0x27eac1e42e7c7248ULL},
    {100000, 0x1e53fdec9de24059ULL},
};

static void test_empty(void) {
    CHECK(hk_xxh3_64(NULL, 0) == 0x2D06800538D394C2ULL);
    CHECK(hk_xxh3_64("", 0) == 0x2D06800538D394C2ULL);
}

/* DIGEST replies documented or tested for Redis 8.4. */
static void test_redis_digests(void) {
    static const struct {
        const char *s;
        const char *hex;
    } v[] = {
        {"Hello world", "b6acb9d84a38ff74"},
        {"hello", "9555e8555c62dcfd"},
        {"test", "9ec9f7918d7dfc40"},
        {"123", "404a763b3f4c8c9a"},
        {"v8", "0cc76dbb41381419"},
        {"", "2d06800538d394c2"},
        {"v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzkjytls2kwlj7626sd",
         "00006c38adf31777"},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        char hex[HK_XXH3_HEX_LEN];
        hk_xxh3_hex(hk_xxh3_64(v[i].s, strlen(v[i].s)), hex);
        CHECK_MEM(hex, sizeof(hex), v[i].hex);
    }
}

static void test_known_lengths(void) {
    fill_stream(stream, STREAM_LEN);
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        uint64_t h = hk_xxh3_64(stream, known[i].len);
        if (h != known[i].h)
            fprintf(stderr, "len %zu: got %016llx, expected %016llx\n", known[i].len, (unsigned long long)h,
                    (unsigned long long)known[i].h);
        CHECK(h == known[i].h);
    }
}

/* The same bytes at every offset of an 8-byte word hash the same. */
static void test_alignment(void) {
    static const size_t lens[] = {3, 8, 16, 100, 200, 1500};
    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
        size_t n = lens[l];
        unsigned char *buf = malloc(n + 8);
        fill_stream(stream, STREAM_LEN);
        uint64_t want = hk_xxh3_64(stream, n);
        for (size_t off = 0; off < 8; off++) {
            memcpy(buf + off, stream, n);
            CHECK(hk_xxh3_64(buf + off, n) == want);
        }
        free(buf);
    }
}

static void test_hex(void) {
    char hex[HK_XXH3_HEX_LEN];
    hk_xxh3_hex(0, hex);
    CHECK_MEM(hex, sizeof(hex), "0000000000000000");
    hk_xxh3_hex(0xABCDEF0123456789ULL, hex);
    CHECK_MEM(hex, sizeof(hex), "abcdef0123456789");
    hk_xxh3_hex(UINT64_MAX, hex);
    CHECK_MEM(hex, sizeof(hex), "ffffffffffffffff");
    hk_xxh3_hex(0x6c38adf31777ULL, hex);
    CHECK_MEM(hex, sizeof(hex), "00006c38adf31777");
}

int main(void) {
    TEST_RUN(test_empty);
    TEST_RUN(test_redis_digests);
    TEST_RUN(test_known_lengths);
    TEST_RUN(test_alignment);
    TEST_RUN(test_hex);
    return TEST_REPORT();
}
