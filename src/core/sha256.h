/* sha256.h - SHA-256 (FIPS 180-4), for ACL password hashes.
 *
 * ACL users keep only the SHA-256 of their passwords, as Redis does, and
 * ACL LIST / GETUSER show them in lowercase hex. Not a general crypto
 * library: one-shot hashing of short strings. */
#ifndef HK_SHA256_H
#define HK_SHA256_H

#include <stddef.h>

/* The digest of data in lowercase hex, NUL-terminated (65 bytes). */
void sha256_hex(const void *data, size_t len, char out[65]);

#endif
