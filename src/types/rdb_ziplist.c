/* rdb_ziplist.c - the packed blobs RDB values carry, in Redis's own
 * layouts: the listpack (written and read), the ziplist of Redis before
 * 7.0 and the intset (read; intsets written too). These are not HotKV's
 * in-memory listpack and intset (core/listpack.h, core/intset.h), whose
 * layouts differ: a value is converted element by element on the way out
 * and on the way in.
 *
 * Redis listpack: a 6-byte header (total bytes as a 32-bit and element
 * count as a 16-bit little-endian number, 65535 meaning "count it"), the
 * elements, and a 0xFF end byte. An element is an encoding byte with
 * optional length or integer bytes, a string payload, then a "back
 * length" holding the size of what precedes it in the element, in 7-bit
 * groups read from the right (a set high bit: more groups to the left).
 *
 * Ziplist: a 10-byte header (total bytes, offset of the last entry, both
 * 32-bit, and a 16-bit count), entries, 0xFF. An entry starts with the
 * size of the entry before it (one byte below 254, else 0xFE and 32 bits),
 * then an encoding: strings by length (6 bits, 14 bits big-endian, or
 * 0x80 and 32 bits big-endian), integers by a marker byte (16, 32, 64, 24
 * or 8 bits little-endian, or 0xF1..0xFD holding 0..12 itself).
 *
 * Intset: 32-bit element width in bytes (2, 4 or 8), 32-bit count, the
 * elements in ascending order, all little-endian.
 *
 * A blob is checked whole before anything is read from it (rdb_blob_open):
 * every entry's bounds, encodings, back lengths or previous-entry sizes,
 * the header's size, count and tail offset. Each blob is walked anyway to
 * be converted, so the check is always done, not only when the input asks
 * for deep validation. */
#include "../core/alloc.h"
#include "../core/intset.h"
#include "../core/util.h"
#include "rdb.h"

#include <stdlib.h>
#include <string.h>

#define LPR_HDR 6
#define LPR_END 0xFF
#define LPR_COUNT_UNKNOWN 65535
#define ZL_HDR 10
#define ZL_COUNT_UNKNOWN 65535

static uint64_t rd_le(const unsigned char *p, unsigned n) {
    uint64_t u = 0;
    for (unsigned i = n; i-- > 0;) u = (u << 8) | p[i];
    return u;
}

static void wr_le(unsigned char *p, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Sign-extend the low `bits` bits of u. */
static long long sext(uint64_t u, unsigned bits) {
    if (bits >= 64) return (long long)u;
    uint64_t m = 1ULL << (bits - 1);
    u &= (1ULL << bits) - 1;
    return (long long)((u ^ m) - m);
}

static void val_int(struct lp_val *v, long long x) {
    v->is_int = 1;
    v->v = x;
    v->len = (size_t)hk_ll2str(v->buf, x);
    v->s = v->buf;
}

static void val_str(struct lp_val *v, const unsigned char *s, size_t len) {
    v->is_int = 0;
    v->v = 0;
    v->s = (const char *)s;
    v->len = len;
}

/* ---- listpack writer ---- */

void rdb_lpw_init(struct rdb_lpw *w) {
    static const unsigned char hdr[LPR_HDR] = {0};
    w->b = (struct hk_buf){0};
    w->count = 0;
    hk_buf_add(&w->b, hdr, LPR_HDR, 256);
}

/* The back length of an element whose encoding and payload take n bytes. */
static size_t backlen_put(unsigned char *out, uint64_t n) {
    unsigned char tmp[10];
    size_t k = 0;
    do {
        tmp[k++] = (unsigned char)(n & 127);
        n >>= 7;
    } while (n);
    /* tmp holds the groups lowest first; they are stored highest first,
     * every group but the highest flagged as continued. */
    for (size_t i = 0; i < k; i++) out[i] = tmp[k - 1 - i] | (i == 0 ? 0 : 128);
    return k;
}

static void lpw_element(struct rdb_lpw *w, const unsigned char *head, size_t hl, const void *payload, size_t pl) {
    unsigned char bl[10];
    size_t k = backlen_put(bl, hl + pl);
    hk_buf_add(&w->b, head, hl, 256);
    if (pl) hk_buf_add(&w->b, payload, pl, 256);
    hk_buf_add(&w->b, bl, k, 256);
    w->count++;
}

void rdb_lpw_add_int(struct rdb_lpw *w, long long v) {
    unsigned char h[9];
    size_t hl;
    if (v >= 0 && v <= 127) {
        h[0] = (unsigned char)v;
        hl = 1;
    } else if (v >= -4096 && v <= 4095) {
        uint64_t u = (uint64_t)v & 0x1fff;
        h[0] = (unsigned char)(0xC0 | (u >> 8));
        h[1] = (unsigned char)u;
        hl = 2;
    } else {
        unsigned n;
        if (v >= -32768 && v <= 32767) {
            h[0] = 0xF1;
            n = 2;
        } else if (v >= -8388608 && v <= 8388607) {
            h[0] = 0xF2;
            n = 3;
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            h[0] = 0xF3;
            n = 4;
        } else {
            h[0] = 0xF4;
            n = 8;
        }
        wr_le(h + 1, (uint64_t)v, n);
        hl = 1 + n;
    }
    lpw_element(w, h, hl, NULL, 0);
}

void rdb_lpw_add(struct rdb_lpw *w, const char *s, size_t len) {
    long long v;
    /* Canonical integers are stored as integers, as Redis's lpAppend does. */
    if (len && len <= 20 && hk_str2ll(s, len, &v)) {
        char buf[HK_LONG_STR_SIZE];
        if ((size_t)hk_ll2str(buf, v) == len && memcmp(buf, s, len) == 0) {
            rdb_lpw_add_int(w, v);
            return;
        }
    }
    unsigned char h[5];
    size_t hl;
    if (len < 64) {
        h[0] = (unsigned char)(0x80 | len);
        hl = 1;
    } else if (len < 4096) {
        h[0] = (unsigned char)(0xE0 | (len >> 8));
        h[1] = (unsigned char)len;
        hl = 2;
    } else {
        h[0] = 0xF0;
        wr_le(h + 1, (uint64_t)len, 4);
        hl = 5;
    }
    lpw_element(w, h, hl, s, len);
}

void rdb_lpw_add_val(struct rdb_lpw *w, const struct lp_val *v) {
    if (v->is_int)
        rdb_lpw_add_int(w, v->v);
    else
        rdb_lpw_add(w, v->s, v->len);
}

int rdb_put_lpack(struct rdb_out *o, const lpack *lp) {
    struct rdb_lpw w;
    struct lp_val v;
    rdb_lpw_init(&w);
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p)) {
        lp_peek(lp, p, &v);
        rdb_lpw_add_val(&w, &v);
    }
    return rdb_put_lpw(o, &w);
}

int rdb_lpw_finish(struct rdb_lpw *w) {
    unsigned char end = LPR_END;
    hk_buf_add(&w->b, &end, 1, 256);
    if (w->b.len > UINT32_MAX) return -1;
    wr_le((unsigned char *)w->b.p, w->b.len, 4);
    wr_le((unsigned char *)w->b.p + 4, w->count < LPR_COUNT_UNKNOWN ? w->count : LPR_COUNT_UNKNOWN, 2);
    return 0;
}

int rdb_put_lpw(struct rdb_out *o, struct rdb_lpw *w) {
    int r = rdb_lpw_finish(w);
    if (r == 0) rdb_put_string(o, w->b.p, w->b.len);
    hk_free(w->b.p);
    w->b = (struct hk_buf){0};
    return r;
}

/* ---- listpack reader ---- */

/* Decode the listpack element at p (end: the first byte past the entries,
 * the 0xFF's position). Returns its size including the back length, or 0
 * when it does not fit or is malformed; fills v when not NULL. */
static size_t lpr_element(const unsigned char *p, const unsigned char *end, struct lp_val *v) {
    size_t room = (size_t)(end - p), hl, pl = 0;
    unsigned char b = p[0];
    long long x = 0;
    int is_int = 1;
    if (b < 0x80) {
        hl = 1;
        x = b;
    } else if (b < 0xC0) {
        hl = 1;
        pl = b & 0x3f;
        is_int = 0;
    } else if (b < 0xE0) {
        hl = 2;
        if (room < 2) return 0;
        x = sext(((uint64_t)(b & 0x1f) << 8) | p[1], 13);
    } else if (b < 0xF0) {
        hl = 2;
        if (room < 2) return 0;
        pl = ((size_t)(b & 0x0f) << 8) | p[1];
        is_int = 0;
    } else if (b == 0xF0) {
        hl = 5;
        if (room < 5) return 0;
        pl = (size_t)rd_le(p + 1, 4);
        is_int = 0;
    } else if (b >= 0xF1 && b <= 0xF4) {
        unsigned n = b == 0xF1 ? 2 : b == 0xF2 ? 3 : b == 0xF3 ? 4 : 8;
        hl = 1 + n;
        if (room < hl) return 0;
        x = sext(rd_le(p + 1, n), n * 8);
    } else {
        return 0; /* 0xF5..0xFE are no encoding; 0xFF is the end */
    }
    if (hl > room || pl > room - hl) return 0;
    size_t body = hl + pl;
    /* The back length: as many 7-bit groups as body needs, the first of
     * them (at the highest address read last when walking back) holding
     * the lowest bits. */
    size_t k = 1;
    for (uint64_t t = body >> 7; t; t >>= 7) k++;
    if (k > room - body) return 0;
    const unsigned char *bl = p + body;
    uint64_t got = 0;
    for (size_t i = 0; i < k; i++) {
        if (((bl[i] & 128) != 0) != (i != 0)) return 0;
        got = (got << 7) | (bl[i] & 127);
    }
    if (got != body) return 0;
    if (v) {
        if (is_int)
            val_int(v, x);
        else
            val_str(v, p + hl, pl);
    }
    return body + k;
}

static int lpr_open(struct rdb_in *in, struct rdb_blob *b) {
    const unsigned char *p = b->p;
    size_t len = b->len;
    if (len < LPR_HDR + 1 || rd_le(p, 4) != len || p[len - 1] != LPR_END)
        return rdb_fail(in, "Listpack integrity check failed (header)");
    const unsigned char *end = p + len - 1;
    uint64_t n = 0;
    for (size_t pos = LPR_HDR; pos < len - 1; n++) {
        size_t k = lpr_element(p + pos, end, NULL);
        if (!k) return rdb_fail(in, "Listpack integrity check failed (entry %llu)", (unsigned long long)n);
        pos += k;
    }
    uint64_t hc = rd_le(p + 4, 2);
    if (hc != LPR_COUNT_UNKNOWN ? hc != n : n < LPR_COUNT_UNKNOWN)
        return rdb_fail(in, "Listpack integrity check failed (count)");
    if (n > UINT32_MAX) return rdb_fail(in, "Listpack integrity check failed (count)");
    b->count = (uint32_t)n;
    b->pos = LPR_HDR;
    return 0;
}

/* ---- ziplist reader ---- */

/* Decode the ziplist entry at p (end: the 0xFF's position), given the size
 * of the entry before it (0 for the first). Returns the entry's size, or 0
 * when it does not fit or is malformed; fills v when not NULL. */
static size_t zl_entry(const unsigned char *p, const unsigned char *end, size_t prev, struct lp_val *v) {
    size_t room = (size_t)(end - p), pl, hl;
    if (p[0] == 0xFF) return 0;
    if (p[0] < 254) {
        pl = 1;
        if (p[0] != prev) return 0;
    } else {
        if (p[0] != 254 || room < 5) return 0;
        pl = 5;
        if (rd_le(p + 1, 4) != prev) return 0;
    }
    if (room <= pl) return 0;
    const unsigned char *q = p + pl;
    unsigned char b = q[0];
    room -= pl;
    size_t slen = 0;
    long long x = 0;
    int is_int = 1;
    switch (b >> 6) {
    case 0:
        hl = 1;
        slen = b & 0x3f;
        is_int = 0;
        break;
    case 1:
        hl = 2;
        if (room < 2) return 0;
        slen = ((size_t)(b & 0x3f) << 8) | q[1];
        is_int = 0;
        break;
    case 2:
        hl = 5;
        if (room < 5) return 0;
        slen = ((size_t)q[1] << 24) | ((size_t)q[2] << 16) | ((size_t)q[3] << 8) | q[4];
        is_int = 0;
        break;
    default: {
        unsigned n;
        if (b == 0xC0)
            n = 2;
        else if (b == 0xD0)
            n = 4;
        else if (b == 0xE0)
            n = 8;
        else if (b == 0xF0)
            n = 3;
        else if (b == 0xFE)
            n = 1;
        else if (b >= 0xF1 && b <= 0xFD)
            n = 0;
        else
            return 0;
        hl = 1 + n;
        if (room < hl) return 0;
        x = n ? sext(rd_le(q + 1, n), n * 8) : (long long)(b & 0x0f) - 1;
    }
    }
    if (hl > room || slen > room - hl) return 0;
    if (v) {
        if (is_int)
            val_int(v, x);
        else
            val_str(v, q + hl, slen);
    }
    return pl + hl + slen;
}

static int zl_open(struct rdb_in *in, struct rdb_blob *b) {
    const unsigned char *p = b->p;
    size_t len = b->len;
    if (len < ZL_HDR + 1 || rd_le(p, 4) != len || p[len - 1] != 0xFF)
        return rdb_fail(in, "Ziplist integrity check failed (header)");
    const unsigned char *end = p + len - 1;
    uint64_t n = 0;
    size_t pos = ZL_HDR, prev = 0, last = ZL_HDR;
    while (pos < len - 1) {
        size_t k = zl_entry(p + pos, end, prev, NULL);
        if (!k) return rdb_fail(in, "Ziplist integrity check failed (entry %llu)", (unsigned long long)n);
        last = pos;
        prev = k;
        pos += k;
        n++;
    }
    if (rd_le(p + 4, 4) != last) return rdb_fail(in, "Ziplist integrity check failed (tail offset)");
    uint64_t hc = rd_le(p + 8, 2);
    if (hc != ZL_COUNT_UNKNOWN && hc != n) return rdb_fail(in, "Ziplist integrity check failed (count)");
    if (n > UINT32_MAX) return rdb_fail(in, "Ziplist integrity check failed (count)");
    b->count = (uint32_t)n;
    b->pos = ZL_HDR;
    b->prev = 0;
    return 0;
}

/* ---- both ---- */

int rdb_blob_open(struct rdb_in *in, struct rdb_blob *b, int kind, const void *p, size_t len) {
    b->p = p;
    b->len = len;
    b->kind = kind;
    b->pos = 0;
    b->prev = 0;
    b->count = 0;
    return kind == RDB_BLOB_ZIPLIST ? zl_open(in, b) : lpr_open(in, b);
}

int rdb_blob_next(struct rdb_blob *b, struct lp_val *v) {
    if (b->pos >= b->len - 1) return 0;
    const unsigned char *end = b->p + b->len - 1;
    size_t k;
    if (b->kind == RDB_BLOB_ZIPLIST) {
        k = zl_entry(b->p + b->pos, end, b->prev, v);
        b->prev = k;
    } else {
        k = lpr_element(b->p + b->pos, end, v);
    }
    /* rdb_blob_open walked the same entries: k is never 0 here. */
    if (!k) {
        b->pos = b->len;
        return 0;
    }
    b->pos += k;
    return 1;
}

void rdb_blob_rewind(struct rdb_blob *b) {
    b->pos = b->kind == RDB_BLOB_ZIPLIST ? ZL_HDR : LPR_HDR;
    b->prev = 0;
}

static int cmp_val(const void *a, const void *b) {
    const struct lp_val *x = a, *y = b;
    return hk_bytes_cmp(lp_val_ptr(x), x->len, lp_val_ptr(y), y->len);
}

int rdb_blob_check_unique(struct rdb_in *in, struct rdb_blob *b, unsigned stride, const char *what) {
    if (stride > 1 && b->count % stride) return rdb_fail(in, "%s has an odd number of elements", what);
    size_t n = b->count / (stride ? stride : 1);
    if (n < 2) return 0;
    struct lp_val *vals = hk_malloc(n * sizeof(*vals));
    struct lp_val v;
    size_t i = 0, j = 0;
    rdb_blob_rewind(b);
    while (rdb_blob_next(b, &v)) {
        if (j++ % stride == 0 && i < n) vals[i++] = v;
    }
    rdb_blob_rewind(b);
    qsort(vals, i, sizeof(*vals), cmp_val);
    int dup = 0;
    for (size_t k = 1; k < i && !dup; k++) dup = cmp_val(&vals[k - 1], &vals[k]) == 0;
    hk_free(vals);
    return dup ? rdb_fail(in, "%s has duplicate members", what) : 0;
}

int rdb_get_blob(struct rdb_in *in, struct rdb_blob *b, int kind, char **owned) {
    size_t len;
    *owned = rdb_get_string(in, &len);
    if (!*owned) return -1;
    if (rdb_blob_open(in, b, kind, *owned, len) < 0) {
        hk_free(*owned);
        *owned = NULL;
        return -1;
    }
    return 0;
}

/* ---- intsets ---- */

int rdb_intset_open(struct rdb_in *in, const void *p, size_t len, uint32_t *width, uint32_t *count) {
    const unsigned char *q = p;
    if (len < 8) return rdb_fail(in, "Intset integrity check failed (header)");
    uint64_t w = rd_le(q, 4), n = rd_le(q + 4, 4);
    if (w != 2 && w != 4 && w != 8)
        return rdb_fail(in, "Intset integrity check failed (encoding %llu)", (unsigned long long)w);
    if (n > (len - 8) / w || 8 + n * w != len) return rdb_fail(in, "Intset integrity check failed (size)");
    for (uint64_t i = 1; i < n; i++)
        if (rdb_intset_at(p, (uint32_t)w, (uint32_t)(i - 1)) >= rdb_intset_at(p, (uint32_t)w, (uint32_t)i))
            return rdb_fail(in, "Intset integrity check failed (order)");
    *width = (uint32_t)w;
    *count = (uint32_t)n;
    return 0;
}

int64_t rdb_intset_at(const void *p, uint32_t width, uint32_t i) {
    const unsigned char *q = (const unsigned char *)p + 8 + (size_t)i * width;
    return (int64_t)sext(rd_le(q, width), width * 8);
}

void rdb_put_intset(struct rdb_out *o, const struct intset *s) {
    uint32_t w = s->width, n = intset_len(s);
    size_t len = 8 + (size_t)w * n;
    unsigned char small[256];
    unsigned char *buf = len <= sizeof(small) ? small : hk_malloc(len);
    wr_le(buf, w, 4);
    wr_le(buf + 4, n, 4);
    for (uint32_t i = 0; i < n; i++) wr_le(buf + 8 + (size_t)i * w, (uint64_t)intset_get(s, i), w);
    rdb_put_string(o, buf, len);
    if (buf != small) hk_free(buf);
}
