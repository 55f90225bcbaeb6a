/* listpack.c - the packed array behind small lists, hashes, sets and zsets.
 *
 * Layout: a 12-byte header (8-byte total size, 4-byte element count, both
 * native-endian since this never leaves the process) and then the elements.
 * An element is an encoding byte, optional length/integer bytes, the string
 * payload for strings, and finally a "back length": the size of everything
 * before it in the element, written as 7-bit groups whose last byte holds the
 * lowest bits and whose high bit says "another group precedes". Walking
 * forward decodes the encoding byte; walking backward decodes the back length.
 * Encodings:
 *   0xxxxxxx              integer 0..127
 *   10llllll              string of length 0..63
 *   110lllll llllllll     string of length 0..8191
 *   1110iiii iiiiiiii     signed 12-bit integer
 *   0xF0 + 4 bytes        string of length up to 4 GB
 *   0xF1/F2/F3/F4         signed 16/24/32/64-bit integer (little-endian)
 * This file knows nothing of the server and does no locking. It is not
 * Redis's listpack and is never written to disk. */
#include "listpack.h"

#include "alloc.h"
#include "util.h"

#include <string.h>

#define LP_HDR 12

#define LP_ENC_STR32 0xF0
#define LP_ENC_INT16 0xF1
#define LP_ENC_INT24 0xF2
#define LP_ENC_INT32 0xF3
#define LP_ENC_INT64 0xF4

/* Largest element head: encoding byte + 8 integer bytes. */
#define LP_MAX_HEAD 9
#define LP_MAX_BACKLEN 10

static uint64_t lp_get_total(const lpack *lp) {
    uint64_t v;
    memcpy(&v, lp, 8);
    return v;
}
static void lp_set_total(lpack *lp, uint64_t v) { memcpy(lp, &v, 8); }
static void lp_set_count(lpack *lp, uint32_t v) { memcpy(lp + 8, &v, 4); }

uint32_t lp_count(const lpack *lp) {
    uint32_t v;
    memcpy(&v, lp + 8, 4);
    return v;
}

size_t lp_bytes(const lpack *lp) { return (size_t)lp_get_total(lp); }

lpack *lp_new(void) {
    lpack *lp = hk_malloc(LP_HDR);
    lp_set_total(lp, LP_HDR);
    lp_set_count(lp, 0);
    return lp;
}

void lp_free(lpack *lp) { hk_free(lp); }

lpack *lp_dup(const lpack *lp) {
    size_t n = lp_bytes(lp);
    lpack *d = hk_malloc(n);
    memcpy(d, lp, n);
    return d;
}

/* Bytes needed for the back length of an element whose head+payload is n. */
static size_t lp_backlen_size(size_t n) {
    size_t k = 1;
    while (n >= 128) {
        n >>= 7;
        k++;
    }
    return k;
}

static void lp_write_backlen(unsigned char *p, size_t n) {
    size_t k = lp_backlen_size(n);
    for (size_t i = k; i-- > 0;) {
        unsigned char b = (unsigned char)(n & 127);
        if (i > 0) b |= 128; /* more groups precede this one */
        p[i] = b;
        n >>= 7;
    }
}

/* Read the back length whose last byte is at end-1. */
static size_t lp_read_backlen(const unsigned char *end) {
    size_t v = 0;
    unsigned shift = 0;
    const unsigned char *p = end - 1;
    for (;;) {
        v |= (size_t)(*p & 127) << shift;
        if (!(*p & 128)) break;
        shift += 7;
        p--;
    }
    return v;
}

/* Decode the element at p: the head size, payload size (0 for integers), and
 * the integer value or payload pointer. */
struct lp_dec {
    size_t head;
    size_t plen;
    int is_int;
    long long v;
    const unsigned char *payload;
};

static long long lp_sext(uint64_t u, unsigned bits) {
    uint64_t m = 1ULL << (bits - 1);
    u &= (bits == 64) ? ~0ULL : ((1ULL << bits) - 1);
    return (long long)((u ^ m) - m);
}

static uint64_t lp_rd_le(const unsigned char *p, unsigned n) {
    uint64_t u = 0;
    for (unsigned i = 0; i < n; i++) u |= (uint64_t)p[i] << (8 * i);
    return u;
}

/* Head size and payload size of the element at p, without decoding an
 * integer's value; returns 1 for an integer element. */
static inline int lp_head(const unsigned char *p, size_t *head, size_t *plen) {
    unsigned char b = p[0];
    *plen = 0;
    if (b < 0x80) {
        *head = 1;
        return 1;
    }
    if (b < 0xC0) {
        *head = 1;
        *plen = b & 0x3F;
        return 0;
    }
    if (b < 0xE0) {
        *head = 2;
        *plen = ((size_t)(b & 0x1F) << 8) | p[1];
        return 0;
    }
    if (b < 0xF0) {
        *head = 2;
        return 1;
    }
    if (b == LP_ENC_STR32) {
        *head = 5;
        *plen = (size_t)lp_rd_le(p + 1, 4);
        return 0;
    }
    *head = 1 + (b == LP_ENC_INT16 ? 2 : b == LP_ENC_INT24 ? 3 : b == LP_ENC_INT32 ? 4 : 8);
    return 1;
}

static void lp_decode(const unsigned char *p, struct lp_dec *d) {
    d->is_int = lp_head(p, &d->head, &d->plen);
    d->v = 0;
    if (d->is_int) {
        unsigned char b = p[0];
        if (b < 0x80)
            d->v = b;
        else if (b < 0xF0)
            d->v = lp_sext(((uint64_t)(b & 0x0F) << 8) | p[1], 12);
        else
            d->v = lp_sext(lp_rd_le(p + 1, (unsigned)d->head - 1), (unsigned)(d->head - 1) * 8);
    }
    d->payload = p + d->head;
}

/* Encode the head of a new element into hdr (LP_MAX_HEAD bytes). For
 * strings that are canonical integers, the integer form is chosen and
 * *is_int set; *plen gets the payload bytes to copy after the head. */
static size_t lp_encode_int(unsigned char *hdr, long long v) {
    if (v >= 0 && v <= 127) {
        hdr[0] = (unsigned char)v;
        return 1;
    }
    if (v >= -2048 && v <= 2047) {
        uint64_t u = (uint64_t)v & 0xFFF;
        hdr[0] = (unsigned char)(0xE0 | (u >> 8));
        hdr[1] = (unsigned char)(u & 0xFF);
        return 2;
    }
    unsigned n;
    if (v >= -32768 && v <= 32767) {
        hdr[0] = LP_ENC_INT16;
        n = 2;
    } else if (v >= -8388608 && v <= 8388607) {
        hdr[0] = LP_ENC_INT24;
        n = 3;
    } else if (v >= -2147483648LL && v <= 2147483647LL) {
        hdr[0] = LP_ENC_INT32;
        n = 4;
    } else {
        hdr[0] = LP_ENC_INT64;
        n = 8;
    }
    uint64_t u = (uint64_t)v;
    for (unsigned i = 0; i < n; i++) hdr[1 + i] = (unsigned char)(u >> (8 * i));
    return 1 + n;
}

static size_t lp_encode_str(unsigned char *hdr, size_t len) {
    if (len < 64) {
        hdr[0] = (unsigned char)(0x80 | len);
        return 1;
    }
    if (len < 8192) {
        hdr[0] = (unsigned char)(0xC0 | (len >> 8));
        hdr[1] = (unsigned char)(len & 0xFF);
        return 2;
    }
    hdr[0] = LP_ENC_STR32;
    for (unsigned i = 0; i < 4; i++) hdr[1 + i] = (unsigned char)((uint64_t)len >> (8 * i));
    return 5;
}

/* Total bytes of the element starting at p. */
static size_t lp_elem_size(const unsigned char *p) {
    size_t head, plen;
    lp_head(p, &head, &plen);
    size_t n = head + plen;
    return n + lp_backlen_size(n);
}

size_t lp_first(const lpack *lp) { return lp_count(lp) ? LP_HDR : LP_NONE; }

size_t lp_last(const lpack *lp) {
    if (!lp_count(lp)) return LP_NONE;
    return lp_prev(lp, lp_bytes(lp));
}

size_t lp_next(const lpack *lp, size_t pos) {
    if (pos == LP_NONE) return LP_NONE;
    size_t n = pos + lp_elem_size(lp + pos);
    return n >= lp_bytes(lp) ? LP_NONE : n;
}

/* pos may also be lp_bytes(lp) (the end), which yields the last element. */
size_t lp_prev(const lpack *lp, size_t pos) {
    if (pos == LP_NONE || pos <= LP_HDR) return LP_NONE;
    size_t n = lp_read_backlen(lp + pos);
    return pos - lp_backlen_size(n) - n;
}

size_t lp_seek(const lpack *lp, long long index) {
    long long cnt = lp_count(lp);
    if (index < 0) index += cnt;
    if (index < 0 || index >= cnt) return LP_NONE;
    size_t pos;
    if (index <= cnt / 2) {
        pos = lp_first(lp);
        while (index-- > 0) pos = lp_next(lp, pos);
    } else {
        pos = lp_last(lp);
        for (long long i = cnt - 1; i > index; i--) pos = lp_prev(lp, pos);
    }
    return pos;
}

void lp_get(const lpack *lp, size_t pos, struct lp_val *out) {
    struct lp_dec d;
    lp_decode(lp + pos, &d);
    out->is_int = d.is_int;
    if (d.is_int) {
        out->v = d.v;
        out->len = (size_t)hk_ll2str(out->buf, d.v);
        out->s = out->buf;
    } else {
        out->v = 0;
        out->s = (const char *)d.payload;
        out->len = d.plen;
    }
}

void lp_peek(const lpack *lp, size_t pos, struct lp_val *out) {
    struct lp_dec d;
    lp_decode(lp + pos, &d);
    out->is_int = d.is_int;
    out->v = d.v;
    out->s = d.is_int ? NULL : (const char *)d.payload;
    out->len = d.is_int ? 0 : d.plen;
}

/* Compare against a pre-parsed needle (is_num/num tell whether s is a
 * canonical integer, the only form an integer element can equal). */
static int lp_eq_parsed(const lpack *lp, size_t pos, const char *s, size_t len, int is_num, long long num) {
    struct lp_dec d;
    lp_decode(lp + pos, &d);
    if (d.is_int) return is_num && d.v == num;
    return d.plen == len && (len == 0 || memcmp(d.payload, s, len) == 0);
}

static int lp_parse_needle(const char *s, size_t len, long long *num) {
    return len > 0 && len <= 20 && hk_str2ll(s, len, num);
}

int lp_eq(const lpack *lp, size_t pos, const char *s, size_t len) {
    long long num = 0;
    int is_num = lp_parse_needle(s, len, &num);
    return lp_eq_parsed(lp, pos, s, len, is_num, num);
}

/* The scan behind HGET, SISMEMBER, ZSCORE and friends on small values:
 * each element's head is read once, for both the comparison and the step
 * to the next one, and an integer's value is decoded only when the needle
 * is a number. */
size_t lp_find(const lpack *lp, size_t start, const char *s, size_t len, unsigned skip) {
    long long num = 0;
    int is_num = lp_parse_needle(s, len, &num);
    size_t end = lp_bytes(lp);
    size_t pos = start;
    while (pos < end) {
        const unsigned char *p = lp + pos;
        size_t head, plen;
        int is_int = lp_head(p, &head, &plen);
        if (is_int ? is_num && lp_eq_parsed(lp, pos, s, len, is_num, num)
                   : plen == len && (len == 0 || memcmp(p + head, s, len) == 0))
            return pos;
        size_t n = head + plen;
        pos += n + lp_backlen_size(n);
        for (unsigned i = 0; i < skip && pos < end; i++) pos += lp_elem_size(lp + pos);
    }
    return LP_NONE;
}

/* Replace the `oldlen` bytes at off with room for `newlen` bytes, moving the
 * tail and resizing the allocation. Returns the (possibly moved) listpack. */
static lpack *lp_splice(lpack *lp, size_t off, size_t oldlen, size_t newlen) {
    size_t total = lp_bytes(lp);
    size_t tail = total - off - oldlen;
    size_t ntotal = total - oldlen + newlen;
    if (newlen > oldlen) {
        lp = hk_realloc(lp, ntotal);
        memmove(lp + off + newlen, lp + off + oldlen, tail);
    } else if (newlen < oldlen) {
        memmove(lp + off + newlen, lp + off + oldlen, tail);
        lp = hk_realloc(lp, ntotal);
    }
    lp_set_total(lp, ntotal);
    return lp;
}

/* Build the head of the element for s/len (or integer v when s is NULL). */
static size_t lp_make_head(unsigned char *hdr, const char *s, size_t len, long long v, size_t *plen) {
    long long num;
    if (!s) {
        *plen = 0;
        return lp_encode_int(hdr, v);
    }
    if (lp_parse_needle(s, len, &num)) {
        *plen = 0;
        return lp_encode_int(hdr, num);
    }
    *plen = len;
    return lp_encode_str(hdr, len);
}

/* Write the element (head, payload, back length) at off; space is there. */
static void lp_write_elem(lpack *lp, size_t off, const unsigned char *hdr, size_t hlen, const char *s,
                          size_t plen) {
    memcpy(lp + off, hdr, hlen);
    if (plen) memcpy(lp + off + hlen, s, plen);
    lp_write_backlen(lp + off + hlen + plen, hlen + plen);
}

static lpack *lp_insert_any(lpack *lp, size_t pos, const char *s, size_t len, long long v, size_t *newpos) {
    unsigned char hdr[LP_MAX_HEAD];
    size_t plen;
    size_t hlen = lp_make_head(hdr, s, len, v, &plen);
    size_t esize = hlen + plen + lp_backlen_size(hlen + plen);
    size_t off = pos == LP_NONE ? lp_bytes(lp) : pos;
    lp = lp_splice(lp, off, 0, esize);
    lp_write_elem(lp, off, hdr, hlen, s, plen);
    lp_set_count(lp, lp_count(lp) + 1);
    if (newpos) *newpos = off;
    return lp;
}

lpack *lp_insert(lpack *lp, size_t pos, const char *s, size_t len, size_t *newpos) {
    return lp_insert_any(lp, pos, s, len, 0, newpos);
}

lpack *lp_append(lpack *lp, const char *s, size_t len) { return lp_insert_any(lp, LP_NONE, s, len, 0, NULL); }

lpack *lp_prepend(lpack *lp, const char *s, size_t len) {
    return lp_insert_any(lp, lp_first(lp), s, len, 0, NULL);
}

lpack *lp_append_int(lpack *lp, long long v) { return lp_insert_any(lp, LP_NONE, NULL, 0, v, NULL); }

lpack *lp_replace(lpack *lp, size_t pos, const char *s, size_t len, size_t *newpos) {
    unsigned char hdr[LP_MAX_HEAD];
    size_t plen;
    size_t hlen = lp_make_head(hdr, s, len, 0, &plen);
    size_t esize = hlen + plen + lp_backlen_size(hlen + plen);
    lp = lp_splice(lp, pos, lp_elem_size(lp + pos), esize);
    lp_write_elem(lp, pos, hdr, hlen, s, plen);
    if (newpos) *newpos = pos;
    return lp;
}

lpack *lp_delete(lpack *lp, size_t pos, size_t *next) {
    lp = lp_splice(lp, pos, lp_elem_size(lp + pos), 0);
    lp_set_count(lp, lp_count(lp) - 1);
    if (next) *next = pos >= lp_bytes(lp) ? LP_NONE : pos;
    return lp;
}

lpack *lp_delete_range(lpack *lp, long long index, unsigned long count) {
    size_t start = lp_seek(lp, index);
    if (start == LP_NONE || count == 0) return lp;
    size_t end = start;
    unsigned long n = 0;
    while (n < count && end != LP_NONE) {
        end = lp_next(lp, end);
        n++;
    }
    if (end == LP_NONE) end = lp_bytes(lp);
    lp = lp_splice(lp, start, end - start, 0);
    lp_set_count(lp, lp_count(lp) - (uint32_t)n);
    return lp;
}
