/* xxh3.c - XXH3 64-bit with seed 0 and the default 192-byte secret,
 * written from the published algorithm description (see xxh3.h). Inputs
 * of up to 16 bytes are folded with a few secret words, 17..240 bytes in
 * 16-byte lanes, anything longer in 64-byte stripes over eight
 * accumulators that are scrambled after every block of 16 stripes. All
 * reads are little-endian byte loads, so the result depends neither on
 * the host's byte order nor on the alignment of the input. */
#include "xxh3.h"

#define P32_1 0x9E3779B1ULL
#define P32_2 0x85EBCA77ULL
#define P32_3 0xC2B2AE3DULL
#define P64_1 0x9E3779B185EBCA87ULL
#define P64_2 0xC2B2AE3D27D4EB4FULL
#define P64_3 0x165667B19E3779F9ULL
#define P64_4 0x85EBCA77C2B2AE63ULL
#define P64_5 0x27D4EB2F165667C5ULL
#define MIX_1 0x165667919E3779F9ULL
#define MIX_2 0x9FB21C651E98DF25ULL

#define SECRET_LEN 192
#define STRIPE_LEN 64
/* Each stripe of a block starts 8 bytes further into the secret. */
#define STRIPES_PER_BLOCK ((SECRET_LEN - STRIPE_LEN) / 8)
#define BLOCK_LEN (STRIPE_LEN * STRIPES_PER_BLOCK)

/* The default secret of the algorithm's specification. */
static const unsigned char secret[SECRET_LEN] = {
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
};

static inline uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t swap64(uint64_t x) {
    x = ((x & 0x00ff00ff00ff00ffULL) << 8) | ((x >> 8) & 0x00ff00ff00ff00ffULL);
    x = ((x & 0x0000ffff0000ffffULL) << 16) | ((x >> 16) & 0x0000ffff0000ffffULL);
    return (x << 32) | (x >> 32);
}

/* The 128-bit product of a and b, its two halves xored together. */
static inline uint64_t mul_fold(uint64_t a, uint64_t b) {
#ifdef __SIZEOF_INT128__
    unsigned __int128 r = (unsigned __int128)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
    uint64_t ll = (a & 0xffffffff) * (b & 0xffffffff), hl = (a >> 32) * (b & 0xffffffff);
    uint64_t lh = (a & 0xffffffff) * (b >> 32), hh = (a >> 32) * (b >> 32);
    uint64_t mid = (ll >> 32) + (hl & 0xffffffff) + lh;
    uint64_t hi = (hl >> 32) + (mid >> 32) + hh;
    uint64_t lo = (mid << 32) | (ll & 0xffffffff);
    return lo ^ hi;
#endif
}

/* XXH64's final mix, used for the tiniest inputs. */
static inline uint64_t finish64(uint64_t h) {
    h ^= h >> 33;
    h *= P64_2;
    h ^= h >> 29;
    h *= P64_3;
    return h ^ (h >> 32);
}

/* XXH3's own, lighter final mix. */
static inline uint64_t finish3(uint64_t h) {
    h ^= h >> 37;
    h *= MIX_1;
    return h ^ (h >> 32);
}

/* The stronger mix of the 4..8 byte case, which folds the length in. */
static inline uint64_t finish_short(uint64_t h, uint64_t len) {
    h ^= rotl64(h, 49) ^ rotl64(h, 24);
    h *= MIX_2;
    h ^= (h >> 35) + len;
    h *= MIX_2;
    return h ^ (h >> 28);
}

/* 16 input bytes against 16 secret bytes, folded to 64 bits. */
static inline uint64_t mix16(const unsigned char *in, const unsigned char *s) {
    return mul_fold(le64(in) ^ le64(s), le64(in + 8) ^ le64(s + 8));
}

static uint64_t hash_0to16(const unsigned char *p, size_t len) {
    if (len > 8) {
        uint64_t lo = le64(p) ^ (le64(secret + 24) ^ le64(secret + 32));
        uint64_t hi = le64(p + len - 8) ^ (le64(secret + 40) ^ le64(secret + 48));
        return finish3((uint64_t)len + swap64(lo) + hi + mul_fold(lo, hi));
    }
    if (len >= 4) {
        uint64_t v = (uint64_t)le32(p + len - 4) + ((uint64_t)le32(p) << 32);
        return finish_short(v ^ (le64(secret + 8) ^ le64(secret + 16)), len);
    }
    if (len > 0) {
        /* First, middle and last byte with the length between them. */
        uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[len >> 1] << 24 | (uint32_t)p[len - 1] | (uint32_t)len << 8;
        return finish64((uint64_t)v ^ (uint64_t)(le32(secret) ^ le32(secret + 4)));
    }
    return finish64(le64(secret + 56) ^ le64(secret + 64));
}

/* 17..128 bytes: pairs of lanes from both ends towards the middle. */
static uint64_t hash_17to128(const unsigned char *p, size_t len) {
    uint64_t acc = len * P64_1;
    if (len > 32) {
        if (len > 64) {
            if (len > 96) {
                acc += mix16(p + 48, secret + 96);
                acc += mix16(p + len - 64, secret + 112);
            }
            acc += mix16(p + 32, secret + 64);
            acc += mix16(p + len - 48, secret + 80);
        }
        acc += mix16(p + 16, secret + 32);
        acc += mix16(p + len - 32, secret + 48);
    }
    acc += mix16(p, secret);
    acc += mix16(p + len - 16, secret + 16);
    return finish3(acc);
}

/* 129..240 bytes: eight lanes, a mix, then the remaining lanes against
 * the secret read from offset 3, and the last 16 bytes from offset 119. */
static uint64_t hash_129to240(const unsigned char *p, size_t len) {
    uint64_t acc = len * P64_1;
    size_t lanes = len / 16;
    for (size_t i = 0; i < 8; i++) acc += mix16(p + 16 * i, secret + 16 * i);
    acc = finish3(acc);
    for (size_t i = 8; i < lanes; i++) acc += mix16(p + 16 * i, secret + 16 * (i - 8) + 3);
    acc += mix16(p + len - 16, secret + 136 - 17);
    return finish3(acc);
}

/* One 64-byte stripe into the eight accumulators: each lane adds itself
 * to its neighbour and the product of its keyed halves to itself. */
static inline void stripe(uint64_t acc[8], const unsigned char *in, const unsigned char *s) {
    for (int i = 0; i < 8; i++) {
        uint64_t v = le64(in + 8 * i), k = v ^ le64(s + 8 * i);
        acc[i ^ 1] += v;
        acc[i] += (k & 0xffffffff) * (k >> 32);
    }
}

static inline void scramble(uint64_t acc[8], const unsigned char *s) {
    for (int i = 0; i < 8; i++) {
        uint64_t a = acc[i];
        a ^= a >> 47;
        a ^= le64(s + 8 * i);
        acc[i] = a * P32_1;
    }
}

static uint64_t hash_long(const unsigned char *p, size_t len) {
    uint64_t acc[8] = {P32_3, P64_1, P64_2, P64_3, P64_4, P32_2, P64_5, P32_1};
    /* Whole blocks, each followed by a scramble; the last byte always
     * belongs to the tail, which may be a full block's worth. */
    size_t blocks = (len - 1) / BLOCK_LEN;
    for (size_t b = 0; b < blocks; b++) {
        const unsigned char *in = p + b * BLOCK_LEN;
        for (size_t n = 0; n < STRIPES_PER_BLOCK; n++) stripe(acc, in + n * STRIPE_LEN, secret + n * 8);
        scramble(acc, secret + SECRET_LEN - STRIPE_LEN);
    }
    size_t stripes = ((len - 1) - blocks * BLOCK_LEN) / STRIPE_LEN;
    const unsigned char *tail = p + blocks * BLOCK_LEN;
    for (size_t n = 0; n < stripes; n++) stripe(acc, tail + n * STRIPE_LEN, secret + n * 8);
    /* The last 64 bytes, overlapping what came before when need be. */
    stripe(acc, p + len - STRIPE_LEN, secret + SECRET_LEN - STRIPE_LEN - 7);
    uint64_t h = len * P64_1;
    for (int i = 0; i < 4; i++)
        h += mul_fold(acc[2 * i] ^ le64(secret + 11 + 16 * i), acc[2 * i + 1] ^ le64(secret + 11 + 16 * i + 8));
    return finish3(h);
}

uint64_t hk_xxh3_64(const void *data, size_t len) {
    const unsigned char *p = data;
    if (len <= 16) return hash_0to16(p, len);
    if (len <= 128) return hash_17to128(p, len);
    if (len <= 240) return hash_129to240(p, len);
    return hash_long(p, len);
}

void hk_xxh3_hex(uint64_t h, char out[HK_XXH3_HEX_LEN]) {
    static const char digits[] = "0123456789abcdef";
    for (int i = HK_XXH3_HEX_LEN - 1; i >= 0; i--) {
        out[i] = digits[h & 15];
        h >>= 4;
    }
}
