/* hash.c - a seeded multiply-mix hash and CRC16 for cluster slots.
 *
 * The 64-bit hash reads eight bytes at a time, folds each word through a
 * 128-bit multiply and finishes with an avalanche step. It is not a
 * cryptographic hash; the random seed keeps colliding key sets from being
 * prepared in advance. */
#include "hash.h"

#include <ctype.h>
#include <string.h>

static uint64_t hash_seed = 0x9e3779b97f4a7c15ULL;
/* crc_table[0] is the classic byte table; crc_table[k][x] is the CRC
 * contribution of byte x followed by k zero bytes, which lets hk_crc16 fold
 * eight bytes per step (every command computes a slot for each key). */
static uint16_t crc_table[8][256];

static void crc_table_init(void) {
    /* CRC16/XMODEM: polynomial 0x1021, initial value 0, no reflection. */
    for (unsigned i = 0; i < 256; i++) {
        uint16_t crc = (uint16_t)(i << 8);
        for (int b = 0; b < 8; b++) crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
        crc_table[0][i] = crc;
    }
    for (int k = 1; k < 8; k++)
        for (unsigned i = 0; i < 256; i++) {
            uint16_t prev = crc_table[k - 1][i];
            crc_table[k][i] = (uint16_t)((prev << 8) ^ crc_table[0][prev >> 8]);
        }
}

void hk_hash_init(uint64_t seed) {
    hash_seed = seed | 1;
    crc_table_init();
}

static inline uint64_t mix(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t read64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

uint64_t hk_hash(const void *key, size_t len) {
    const unsigned char *p = key;
    uint64_t h = hash_seed ^ (len * 0xa0761d6478bd642fULL);
    while (len >= 16) {
        h = mix(read64(p) ^ 0xe7037ed1a0b428dbULL, read64(p + 8) ^ h);
        p += 16;
        len -= 16;
    }
    uint64_t a = 0, b = 0;
    if (len >= 8) {
        a = read64(p);
        b = read64(p + len - 8);
    } else if (len >= 4) {
        uint32_t x, y;
        memcpy(&x, p, 4);
        memcpy(&y, p + len - 4, 4);
        a = x;
        b = y;
    } else if (len > 0) {
        a = ((uint64_t)p[0] << 16) | ((uint64_t)p[len >> 1] << 8) | p[len - 1];
    }
    h = mix(a ^ 0x8ebc6af09c88c6e3ULL, b ^ h);
    return mix(h ^ 0x589965cc75374cc3ULL, h ^ 0x1d8e4e27c47d124fULL);
}

uint64_t hk_hash_nocase(const void *key, size_t len) {
    unsigned char buf[256];
    const unsigned char *p = key;
    uint64_t h = 0;
    while (len) {
        size_t n = len < sizeof(buf) ? len : sizeof(buf);
        for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)tolower(p[i]);
        h ^= hk_hash(buf, n);
        p += n;
        len -= n;
    }
    return h;
}

uint16_t hk_crc16(const void *buf, size_t len) {
    const unsigned char *p = buf;
    uint16_t crc = 0;
    /* The CRC is linear: the 16-bit state only meets the first two bytes
     * of a block; each byte's effect is shifted through the zeros after it. */
    while (len >= 8) {
        crc = (uint16_t)(crc_table[7][(crc >> 8) ^ p[0]] ^ crc_table[6][(crc & 0xff) ^ p[1]] ^
                         crc_table[5][p[2]] ^ crc_table[4][p[3]] ^ crc_table[3][p[4]] ^ crc_table[2][p[5]] ^
                         crc_table[1][p[6]] ^ crc_table[0][p[7]]);
        p += 8;
        len -= 8;
    }
    for (size_t i = 0; i < len; i++) crc = (uint16_t)((crc << 8) ^ crc_table[0][((crc >> 8) ^ p[i]) & 0xff]);
    return crc;
}

unsigned hk_key_slot(const char *key, size_t len) {
    const char *open = len ? memchr(key, '{', len) : NULL;
    if (open) {
        size_t s = (size_t)(open - key);
        const char *close = memchr(open + 1, '}', len - s - 1);
        size_t e = close ? (size_t)(close - key) : len;
        if (e < len && e != s + 1) return hk_crc16(key + s + 1, e - s - 1) & (HK_SLOTS - 1);
    }
    return hk_crc16(key, len) & (HK_SLOTS - 1);
}
