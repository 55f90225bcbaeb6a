/* crc64.h - the CRC-64 of Redis's RDB files and DUMP payloads (the
 * "Jones" polynomial 0xad93d23594c935a9, reflected, initial value 0, no
 * final xor): crc64(0, "123456789") is 0xe9c6d914c4b8d9ca. */
#ifndef HK_CRC64_H
#define HK_CRC64_H

#include <stddef.h>
#include <stdint.h>

/* Continue crc over len bytes of p (start with 0). */
uint64_t crc64(uint64_t crc, const void *p, size_t len);

#endif
