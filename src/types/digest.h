/* digest.h - the building blocks of Redis's DEBUG DIGEST.
 *
 * A digest is 20 bytes. dg_xor folds SHA1(data) into it by xor, so the
 * order of the pieces does not matter (set members, hash fields, the keys
 * of a database); dg_mix makes the result depend on what came before
 * (digest = SHA1(digest xor SHA1(data))), for ordered things (list
 * elements, a key followed by its value). These match Redis's xorDigest
 * and mixDigest, so equal datasets give equal digests on both servers. */
#ifndef HK_DIGEST_H
#define HK_DIGEST_H

#include <stddef.h>

void dg_xor(unsigned char digest[20], const void *p, size_t len);
void dg_mix(unsigned char digest[20], const void *p, size_t len);
/* dg_mix of a score as Redis prints it. */
void dg_mix_double(unsigned char digest[20], double d);
/* Lower-case hex of a digest into out (41 bytes with the NUL). */
void dg_hex(const unsigned char digest[20], char out[41]);

#endif
