/* hash.h - key hashing: the seeded 64-bit hash used by hash tables and the
 * Redis Cluster slot function (CRC16/XMODEM of the key or its {hash tag},
 * modulo 16384) used to pick a shard. */
#ifndef HK_HASH_H
#define HK_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HK_SLOTS 16384

void hk_hash_init(uint64_t seed);
uint64_t hk_hash(const void *key, size_t len);
uint64_t hk_hash_nocase(const void *key, size_t len);
uint16_t hk_crc16(const void *buf, size_t len);
/* Cluster slot of a key, honouring the first non-empty {tag}. */
unsigned hk_key_slot(const char *key, size_t len);

#endif
