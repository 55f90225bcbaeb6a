/* crc64.c - table-driven CRC-64 (Jones polynomial, reflected); see
 * crc64.h. The table is built on first use; building it twice from two
 * threads writes the same values, and every payload it checks is small
 * next to the 2 KiB table. */
#include "crc64.h"

#include <pthread.h>

/* The polynomial with its bits reversed, for the reflected form. */
#define CRC64_RPOLY 0x95ac9329ac4bc9b5ULL

static uint64_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void) {
    for (unsigned i = 0; i < 256; i++) {
        uint64_t c = i;
        for (int b = 0; b < 8; b++) c = (c & 1) ? (c >> 1) ^ CRC64_RPOLY : c >> 1;
        table[i] = c;
    }
}

uint64_t crc64(uint64_t crc, const void *p, size_t len) {
    pthread_once(&table_once, build_table);
    const unsigned char *s = p;
    for (size_t i = 0; i < len; i++) crc = table[(crc ^ s[i]) & 0xff] ^ (crc >> 8);
    return crc;
}
