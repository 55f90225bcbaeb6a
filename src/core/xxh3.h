/* xxh3.h - the 64-bit XXH3 hash with seed 0 and the default secret, the
 * digest Redis 8.4's DIGEST command and the IFDEQ/IFDNE conditions of SET
 * and DELEX compute over a string value. One-shot over a contiguous
 * buffer; no streaming state, no seeds, no 128-bit variant.
 * hk_xxh3_64("", 0) is 0x2d06800538d394c2. */
#ifndef HK_XXH3_H
#define HK_XXH3_H

#include <stddef.h>
#include <stdint.h>

/* XXH3_64bits of len bytes at p (p may be NULL when len is 0). */
uint64_t hk_xxh3_64(const void *p, size_t len);

/* Width of a digest as Redis prints it: 16 lowercase hex digits, leading
 * zeros kept. */
#define HK_XXH3_HEX_LEN 16

/* Write h as HK_XXH3_HEX_LEN lowercase hex digits into out (no NUL). */
void hk_xxh3_hex(uint64_t h, char out[HK_XXH3_HEX_LEN]);

#endif
