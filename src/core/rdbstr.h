/* rdbstr.h - lengths and strings in Redis's RDB encoding, the pieces a
 * DUMP-style payload is built from (FUNCTION DUMP / RESTORE today).
 *
 * A length is one byte for 0..63 (top bits 00), two for up to 16383 (01,
 * big-endian), or a marker byte 0x80 / 0x81 followed by a 32- or 64-bit
 * big-endian value. Top bits 11 mark a string stored in a special
 * encoding, the low six bits naming it: an 8-, 16- or 32-bit
 * little-endian integer (the string is its decimal form), or LZF (a
 * compressed length, the plain length, then the compressed bytes). The
 * writer here emits plain strings only; the reader accepts every form
 * Redis writes. Every read is checked against the end of the input, so a
 * corrupt payload yields an error, never an overrun. Not an RDB file
 * reader: no types, no opcodes, no checksums. */
#ifndef HK_RDBSTR_H
#define HK_RDBSTR_H

#include "buf.h"

#include <stddef.h>
#include <stdint.h>

/* A cursor over bytes being read. */
struct rdb_reader {
    const unsigned char *p;
    size_t len, pos;
};

static inline void rdb_reader_init(struct rdb_reader *r, const void *p, size_t len) {
    r->p = (const unsigned char *)p;
    r->len = len;
    r->pos = 0;
}

/* Append the length n (shortest form). */
void rdb_write_len(struct hk_buf *b, uint64_t n);
/* Append a plain (length-prefixed, uncompressed) string. */
void rdb_write_string(struct hk_buf *b, const void *p, size_t n);

/* Read one byte: 0, or -1 at the end. */
int rdb_read_byte(struct rdb_reader *r, unsigned char *out);
/* Read a length: 0 with *n (and *encoded set when the top bits were 11:
 * *n is then the encoding number), or -1 when truncated or the marker is
 * unknown. */
int rdb_read_len(struct rdb_reader *r, uint64_t *n, int *encoded);
/* Read a string in any encoding: an hk_malloc'd copy, NUL-terminated
 * (not counted in *outlen), or NULL when malformed or truncated. */
char *rdb_read_string(struct rdb_reader *r, size_t *outlen);

#endif
