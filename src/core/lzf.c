/* lzf.c - LZF compression and bounds-checked decompression; see lzf.h for
 * the stream format. The compressor finds earlier occurrences of each
 * 3-byte prefix through a small hash table of last positions (sized to the
 * input, at most 2^14 slots, on the stack) and emits the longest match it
 * can extend there, literals otherwise. */
#include "lzf.h"

#include <stdint.h>
#include <string.h>

#define LZF_MAX_LIT 32           /* bytes in one literal run */
#define LZF_MAX_OFF 8192         /* a match reaches at most this far back */
#define LZF_MAX_REF (7 + 255 + 2) /* longest match: 7 + extra byte, plus 2 */
#define LZF_MIN_REF 3
#define LZF_HLOG_MAX 14
#define LZF_HLOG_MIN 8

static inline uint32_t lzf_hash(const uint8_t *p, unsigned hlog) {
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - hlog);
}

/* Emit the literals [lit, end) as runs of at most 32. Returns the new
 * output position, or NULL when they do not fit before oend. */
static uint8_t *lzf_put_literals(uint8_t *op, uint8_t *oend, const uint8_t *lit, const uint8_t *end) {
    while (lit < end) {
        size_t n = (size_t)(end - lit);
        if (n > LZF_MAX_LIT) n = LZF_MAX_LIT;
        if ((size_t)(oend - op) < n + 1) return NULL;
        *op++ = (uint8_t)(n - 1);
        memcpy(op, lit, n);
        op += n;
        lit += n;
    }
    return op;
}

size_t lzf_compress(const void *in, size_t in_len, void *out, size_t out_len) {
    const uint8_t *ip = in, *base = in, *iend = base + in_len, *lit = base;
    uint8_t *op = out, *oend = op + out_len;
    if (in_len == 0) return 0;
    unsigned hlog = LZF_HLOG_MIN;
    while (hlog < LZF_HLOG_MAX && ((size_t)1 << hlog) < in_len) hlog++;
    /* Positions plus one; 0 marks an empty slot. */
    uint32_t htab[1u << LZF_HLOG_MAX];
    memset(htab, 0, sizeof(uint32_t) << hlog);
    while (iend - ip >= LZF_MIN_REF) {
        uint32_t h = lzf_hash(ip, hlog);
        uint32_t slot = htab[h];
        htab[h] = (uint32_t)(ip - base) + 1;
        const uint8_t *ref = slot ? base + slot - 1 : NULL;
        size_t off = ref ? (size_t)(ip - ref) - 1 : 0;
        if (!ref || off >= LZF_MAX_OFF || ref[0] != ip[0] || ref[1] != ip[1] || ref[2] != ip[2]) {
            ip++;
            continue;
        }
        size_t max = (size_t)(iend - ip);
        if (max > LZF_MAX_REF) max = LZF_MAX_REF;
        size_t len = LZF_MIN_REF;
        while (len < max && ref[len] == ip[len]) len++;
        op = lzf_put_literals(op, oend, lit, ip);
        if (!op) return 0;
        size_t l = len - 2;
        if ((size_t)(oend - op) < (l >= 7 ? 3u : 2u)) return 0;
        if (l < 7) {
            *op++ = (uint8_t)(l << 5 | off >> 8);
        } else {
            *op++ = (uint8_t)(7 << 5 | off >> 8);
            *op++ = (uint8_t)(l - 7);
        }
        *op++ = (uint8_t)(off & 0xff);
        /* Index the positions inside the match too, for later matches. */
        const uint8_t *stop = ip + len;
        for (ip++; ip < stop && iend - ip >= LZF_MIN_REF; ip++) htab[lzf_hash(ip, hlog)] = (uint32_t)(ip - base) + 1;
        ip = stop;
        lit = ip;
    }
    op = lzf_put_literals(op, oend, lit, iend);
    if (!op) return 0;
    return (size_t)(op - (uint8_t *)out);
}

size_t lzf_decompress(const void *in, size_t in_len, void *out, size_t out_len) {
    const uint8_t *ip = in, *iend = ip + in_len;
    uint8_t *op = out, *ostart = op, *oend = op + out_len;
    while (ip < iend) {
        unsigned ctrl = *ip++;
        if (ctrl < 32) {
            size_t n = ctrl + 1;
            if ((size_t)(iend - ip) < n || (size_t)(oend - op) < n) return 0;
            memcpy(op, ip, n);
            op += n;
            ip += n;
            continue;
        }
        size_t len = ctrl >> 5;
        size_t back = (size_t)(ctrl & 0x1f) << 8;
        if (len == 7) {
            if (ip >= iend) return 0;
            len += *ip++;
        }
        if (ip >= iend) return 0;
        back += (size_t)*ip++ + 1;
        len += 2;
        if (back > (size_t)(op - ostart) || (size_t)(oend - op) < len) return 0;
        /* Byte by byte: the source may overlap what is being written. */
        const uint8_t *ref = op - back;
        while (len--) *op++ = *ref++;
    }
    return (size_t)(op - ostart);
}
