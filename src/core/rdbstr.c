/* rdbstr.c - RDB lengths and strings; see rdbstr.h. */
#include "rdbstr.h"

#include "alloc.h"
#include "lzf.h"

#include <stdio.h>
#include <string.h>

#define LEN_6BIT 0
#define LEN_14BIT 1
#define LEN_32BIT 0x80
#define LEN_64BIT 0x81
#define LEN_ENCODED 3

#define ENC_INT8 0
#define ENC_INT16 1
#define ENC_INT32 2
#define ENC_LZF 3

/* An LZF item expands at most to 264 bytes from 2 or 3 input bytes, so a
 * plain length past this bound for its compressed length is corrupt
 * (and would otherwise ask for an absurd allocation). */
#define LZF_MAX_RATIO 133

void rdb_write_len(struct hk_buf *b, uint64_t n) {
    unsigned char buf[9];
    size_t k;
    if (n < 64) {
        buf[0] = (unsigned char)((LEN_6BIT << 6) | n);
        k = 1;
    } else if (n < 16384) {
        buf[0] = (unsigned char)((LEN_14BIT << 6) | (n >> 8));
        buf[1] = (unsigned char)(n & 0xff);
        k = 2;
    } else if (n <= 0xffffffffULL) {
        buf[0] = LEN_32BIT;
        for (int i = 0; i < 4; i++) buf[1 + i] = (unsigned char)(n >> (24 - 8 * i));
        k = 5;
    } else {
        buf[0] = LEN_64BIT;
        for (int i = 0; i < 8; i++) buf[1 + i] = (unsigned char)(n >> (56 - 8 * i));
        k = 9;
    }
    hk_buf_add(b, buf, k, 64);
}

void rdb_write_string(struct hk_buf *b, const void *p, size_t n) {
    rdb_write_len(b, n);
    hk_buf_add(b, p, n, 64);
}

int rdb_read_byte(struct rdb_reader *r, unsigned char *out) {
    if (r->pos >= r->len) return -1;
    *out = r->p[r->pos++];
    return 0;
}

/* n bytes at the cursor, consumed; NULL when fewer are left. */
static const unsigned char *take(struct rdb_reader *r, uint64_t n) {
    if (n > r->len - r->pos) return NULL;
    const unsigned char *q = r->p + r->pos;
    r->pos += (size_t)n;
    return q;
}

int rdb_read_len(struct rdb_reader *r, uint64_t *n, int *encoded) {
    unsigned char b0;
    const unsigned char *q;
    *encoded = 0;
    if (rdb_read_byte(r, &b0) < 0) return -1;
    switch (b0 >> 6) {
    case LEN_6BIT: *n = b0 & 0x3f; return 0;
    case LEN_14BIT:
        if (!(q = take(r, 1))) return -1;
        *n = ((uint64_t)(b0 & 0x3f) << 8) | q[0];
        return 0;
    case LEN_ENCODED:
        *encoded = 1;
        *n = b0 & 0x3f;
        return 0;
    default: break;
    }
    int width = b0 == LEN_32BIT ? 4 : b0 == LEN_64BIT ? 8 : 0;
    if (!width || !(q = take(r, (uint64_t)width))) return -1;
    uint64_t v = 0;
    for (int i = 0; i < width; i++) v = (v << 8) | q[i];
    *n = v;
    return 0;
}

/* The decimal form of an integer-encoded string of `width` bytes. */
static char *read_int_string(struct rdb_reader *r, int width, size_t *outlen) {
    const unsigned char *q = take(r, (uint64_t)width);
    if (!q) return NULL;
    long long v;
    if (width == 1) v = (int8_t)q[0];
    else if (width == 2) v = (int16_t)(uint16_t)(q[0] | (q[1] << 8));
    else v = (int32_t)((uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16) | ((uint32_t)q[3] << 24));
    char *s = hk_malloc(24);
    int n = snprintf(s, 24, "%lld", v);
    *outlen = (size_t)n;
    return s;
}

static char *read_lzf_string(struct rdb_reader *r, size_t *outlen) {
    uint64_t clen, ulen;
    int enc;
    if (rdb_read_len(r, &clen, &enc) < 0 || enc) return NULL;
    if (rdb_read_len(r, &ulen, &enc) < 0 || enc) return NULL;
    if (ulen == 0 || clen == 0 || ulen / LZF_MAX_RATIO > clen) return NULL;
    const unsigned char *q = take(r, clen);
    if (!q) return NULL;
    char *s = hk_malloc((size_t)ulen + 1);
    if (lzf_decompress(q, (size_t)clen, s, (size_t)ulen) != ulen) {
        hk_free(s);
        return NULL;
    }
    s[ulen] = '\0';
    *outlen = (size_t)ulen;
    return s;
}

char *rdb_read_string(struct rdb_reader *r, size_t *outlen) {
    uint64_t n;
    int enc;
    if (rdb_read_len(r, &n, &enc) < 0) return NULL;
    if (enc) {
        switch (n) {
        case ENC_INT8: return read_int_string(r, 1, outlen);
        case ENC_INT16: return read_int_string(r, 2, outlen);
        case ENC_INT32: return read_int_string(r, 4, outlen);
        case ENC_LZF: return read_lzf_string(r, outlen);
        default: return NULL;
        }
    }
    const unsigned char *q = take(r, n);
    if (!q) return NULL;
    char *s = hk_malloc((size_t)n + 1);
    memcpy(s, q, (size_t)n);
    s[n] = '\0';
    *outlen = (size_t)n;
    return s;
}
