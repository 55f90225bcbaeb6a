/* sha1.h - SHA-1 (FIPS 180-4), for DEBUG DIGEST and, later, script ids.
 *
 * Not for security: Redis uses SHA-1 as a fingerprint (DEBUG DIGEST, the
 * sha of a Lua script), and HotKV must produce the same fingerprints. */
#ifndef HK_SHA1_H
#define HK_SHA1_H

#include <stddef.h>
#include <stdint.h>

struct sha1 {
    uint32_t h[5];
    uint64_t bytes;        /* message length so far */
    unsigned char blk[64]; /* partial block */
    size_t fill;
};

void sha1_init(struct sha1 *s);
void sha1_update(struct sha1 *s, const void *data, size_t len);
void sha1_final(struct sha1 *s, unsigned char out[20]);
/* One-shot helper. */
void sha1(const void *data, size_t len, unsigned char out[20]);

#endif
