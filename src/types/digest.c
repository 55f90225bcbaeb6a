/* digest.c - DEBUG DIGEST building blocks; see digest.h. */
#include "digest.h"

#include "../core/sha1.h"
#include "../core/util.h"

void dg_xor(unsigned char digest[20], const void *p, size_t len) {
    unsigned char h[20];
    sha1(p, len, h);
    for (int i = 0; i < 20; i++) digest[i] ^= h[i];
}

void dg_mix(unsigned char digest[20], const void *p, size_t len) {
    dg_xor(digest, p, len);
    sha1(digest, 20, digest);
}

void dg_mix_double(unsigned char digest[20], double d) {
    char buf[64];
    int n = hk_d2str(buf, sizeof(buf), d);
    dg_mix(digest, buf, (size_t)(n > 0 ? n : 0));
}

void dg_hex(const unsigned char digest[20], char out[41]) {
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 20; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[40] = '\0';
}
