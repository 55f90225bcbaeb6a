/* hyperloglog.c - PFADD, PFCOUNT and PFMERGE: HyperLogLog cardinality
 * sketches kept in ordinary string values, in exactly the byte layout Redis
 * uses, so a value written here can be read by Redis and the other way
 * round, and GET/SET/DUMP-style copies of a sketch stay interchangeable.
 *
 * Layout of a sketch (all of it is the string's bytes):
 *   0..3   "HYLL"
 *   4      encoding: 0 dense, 1 sparse
 *   5..7   unused (kept as found)
 *   8..15  cached cardinality, little endian; bit 7 of byte 15 set means
 *          the cache is stale and must be recomputed
 *   16..   registers: 16384 six-bit registers packed LSB first (dense,
 *          12288 bytes), or a run-length opcode stream (sparse):
 *            00llllll            ZERO  : 1..64 zero registers
 *            01llllll llllllll   XZERO : 1..16384 zero registers
 *            1vvvvvll            VAL   : 1..4 registers holding 1..32
 * A sparse sketch turns dense when a register needs a value above 32 or
 * when growing it would pass hll-sparse-max-bytes. Sparse edits reproduce
 * Redis's split-then-merge steps exactly, because the sparse form is not
 * canonical and byte identity with Redis depends on the same history giving
 * the same bytes. Elements are hashed with MurmurHash64A (seed 0xadc83b19):
 * the low 14 bits pick the register, the position of the first set bit in
 * the rest is the value. Estimates use Ertl's improved estimator ("New
 * cardinality estimation algorithms for HyperLogLog sketches", 2017) on the
 * register histogram.
 *
 * This file is not a general sketch library: handlers run with their keys'
 * shards locked by dispatch, and values are edited in place as rawstr
 * strings (strval.h). PFDEBUG and PFSELFTEST are not provided. */
#include "../core/alloc.h"
#include "../server/config.h"
#include "cmds.h"
#include "cmdutil.h"
#include "strval.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define HLL_P 14
#define HLL_Q (64 - HLL_P)
#define HLL_REGS (1 << HLL_P)
#define HLL_BITS 6
#define HLL_HDR 16
#define HLL_DENSE_BYTES (HLL_HDR + (HLL_REGS * HLL_BITS + 7) / 8)
#define HLL_ENC_DENSE 0
#define HLL_ENC_SPARSE 1
#define HLL_VAL_MAX 32
#define HLL_VAL_RUN_MAX 4
#define HLL_ZERO_RUN_MAX 64
#define HLL_XZERO_RUN_MAX 16384
#define HLL_SEED 0xadc83b19ULL

#define ERR_HLL_TYPE "WRONGTYPE Key is not a valid HyperLogLog string value."
#define ERR_HLL_CORRUPT "INVALIDOBJ Corrupted HLL object detected"

/* ---- hashing --------------------------------------------------------------- */

/* MurmurHash64A (Austin Appleby's 64-bit MurmurHash2) with blocks read as
 * little endian, which is what Redis computes on every platform. */
static uint64_t hll_murmur64a(const unsigned char *p, size_t len, uint64_t seed) {
    const uint64_t mul = 0xc6a4a7935bd1e995ULL;
    uint64_t h = seed ^ ((uint64_t)len * mul);
    size_t blocks = len / 8;
    for (size_t i = 0; i < blocks; i++) {
        uint64_t k = 0;
        for (int b = 7; b >= 0; b--) k = (k << 8) | p[i * 8 + (size_t)b];
        k *= mul;
        k ^= k >> 47;
        k *= mul;
        h ^= k;
        h *= mul;
    }
    const unsigned char *tail = p + blocks * 8;
    size_t rest = len & 7;
    if (rest) {
        for (size_t b = rest; b-- > 0;) h ^= (uint64_t)tail[b] << (8 * b);
        h *= mul;
    }
    h ^= h >> 47;
    h *= mul;
    h ^= h >> 47;
    return h;
}

/* Register index and value for an element: the value is 1 + the number of
 * zero bits above the index bits before the first one (at most Q+1). */
static int hll_pattern(const unsigned char *p, size_t len, int *index) {
    uint64_t h = hll_murmur64a(p, len, HLL_SEED);
    *index = (int)(h & (HLL_REGS - 1));
    h >>= HLL_P;
    h |= 1ULL << HLL_Q; /* bounds the count at Q+1 */
    return __builtin_ctzll(h) + 1;
}

/* ---- dense registers ------------------------------------------------------- */

static int dense_get(const unsigned char *r, int i) {
    unsigned bit = (unsigned)i * HLL_BITS, byte = bit >> 3, sh = bit & 7;
    unsigned v = r[byte] >> sh;
    /* The last register never spills into a next byte. */
    if (sh > 8 - HLL_BITS) v |= (unsigned)r[byte + 1] << (8 - sh);
    return (int)(v & 63);
}

static void dense_put(unsigned char *r, int i, int val) {
    unsigned bit = (unsigned)i * HLL_BITS, byte = bit >> 3, sh = bit & 7;
    r[byte] = (unsigned char)((r[byte] & ~(63u << sh)) | ((unsigned)val << sh));
    if (sh > 8 - HLL_BITS) {
        unsigned hi = 8 - sh;
        r[byte + 1] = (unsigned char)((r[byte + 1] & ~(63u >> hi)) | ((unsigned)val >> hi));
    }
}

/* Raise register i to val if it is lower; 1 when it changed. */
static int dense_raise(unsigned char *r, int i, int val, struct pre_change *pc) {
    if (dense_get(r, i) >= val) return 0;
    pre_change(pc);
    dense_put(r, i, val);
    return 1;
}

/* Unpack all registers: four registers live in every three bytes. */
static void dense_unpack(const unsigned char *r, uint8_t *out) {
    for (int g = 0; g < HLL_REGS / 4; g++, r += 3, out += 4) {
        out[0] = r[0] & 63;
        out[1] = (uint8_t)(((r[0] >> 6) | (r[1] << 2)) & 63);
        out[2] = (uint8_t)(((r[1] >> 4) | (r[2] << 4)) & 63);
        out[3] = r[2] >> 2;
    }
}

/* ---- sparse opcodes -------------------------------------------------------- */

static int op_is_zero(const unsigned char *p) { return (*p & 0xc0) == 0; }
static int op_is_xzero(const unsigned char *p) { return (*p & 0xc0) == 0x40; }
static int op_is_val(const unsigned char *p) { return (*p & 0x80) != 0; }
static int op_zero_len(const unsigned char *p) { return (*p & 63) + 1; }
/* A stream that ends in the middle of an XZERO reads its second byte as 0,
 * as Redis does (it reads the string's terminator), so corrupt values give
 * the same answers here as there. */
static int op_xzero_len(const unsigned char *p, const unsigned char *end) {
    return (((*p & 63) << 8) | (p + 1 < end ? p[1] : 0)) + 1;
}
static int op_val_value(const unsigned char *p) { return ((*p >> 2) & 31) + 1; }
static int op_val_len(const unsigned char *p) { return (*p & 3) + 1; }
static void op_set_val(unsigned char *p, int val, int len) {
    *p = (unsigned char)(0x80 | ((val - 1) << 2) | (len - 1));
}
/* Writes a ZERO or XZERO for a zero run (the shortest form); returns its size. */
static int op_put_zeros(unsigned char *p, int len) {
    if (len <= HLL_ZERO_RUN_MAX) {
        *p = (unsigned char)(len - 1);
        return 1;
    }
    p[0] = (unsigned char)(0x40 | ((len - 1) >> 8));
    p[1] = (unsigned char)((len - 1) & 0xff);
    return 2;
}

/* Walk a sparse stream [p, end): calls back per run. Returns 0 when the
 * stream is malformed (truncated XZERO, runs not covering exactly all
 * registers). fn receives the first register, run length and value. */
typedef void (*hll_run_fn)(void *arg, int first, int len, int val);
static int sparse_walk(const unsigned char *p, const unsigned char *end, hll_run_fn fn, void *arg) {
    int idx = 0;
    while (p < end) {
        int len, val = 0;
        if (op_is_zero(p)) {
            len = op_zero_len(p);
            p++;
        } else if (op_is_xzero(p)) {
            len = op_xzero_len(p, end);
            p += 2;
        } else {
            len = op_val_len(p);
            val = op_val_value(p);
            p++;
        }
        if (len > HLL_REGS - idx) return 0;
        fn(arg, idx, len, val);
        idx += len;
    }
    return idx == HLL_REGS;
}

static void run_to_max(void *arg, int first, int len, int val) {
    uint8_t *max = arg;
    for (int i = first; i < first + len; i++)
        if (val > max[i]) max[i] = (uint8_t)val;
}

static void run_to_histo(void *arg, int first, int len, int val) {
    (void)first;
    ((int *)arg)[val] += len;
}

/* ---- sketch values --------------------------------------------------------- */

/* New empty sparse sketch: the header and XZERO opcodes covering every
 * register, exactly sized as Redis sizes it. */
static struct rawstr *hll_new_sparse(void) {
    int nops = (HLL_REGS + HLL_XZERO_RUN_MAX - 1) / HLL_XZERO_RUN_MAX;
    size_t len = HLL_HDR + (size_t)nops * 2;
    struct rawstr *s = rawstr_new(NULL, 0, len);
    rawstr_growzero(s, len);
    unsigned char *b = (unsigned char *)s->buf;
    memcpy(b, "HYLL", 4);
    b[4] = HLL_ENC_SPARSE;
    unsigned char *p = b + HLL_HDR;
    for (int left = HLL_REGS; left > 0;) {
        int run = left < HLL_XZERO_RUN_MAX ? left : HLL_XZERO_RUN_MAX;
        p += op_put_zeros(p, run);
        left -= run;
    }
    return s;
}

static void hll_invalidate(struct rawstr *s) { ((unsigned char *)s->buf)[15] |= 0x80; }

/* 1 when the bytes form a sketch Redis would accept as a HyperLogLog (the
 * header checks only; the opcode stream is checked when used). */
static int hll_bytes_ok(const char *p, size_t len) {
    if (len < HLL_HDR || memcmp(p, "HYLL", 4) != 0) return 0;
    unsigned char enc = (unsigned char)p[4];
    if (enc > HLL_ENC_SPARSE) return 0;
    if (enc == HLL_ENC_DENSE && len != HLL_DENSE_BYTES) return 0;
    return 1;
}

/* Type check for a found key: replies WRONGTYPE (the generic one for other
 * types, the HyperLogLog one for strings that are not sketches) and returns
 * 0 when e cannot be used. */
static int hll_check(struct cmd_ctx *c, const struct kv *e) {
    if (!check_type(c, e, OBJ_STRING)) return 0;
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    /* An integer-encoded value is never a sketch (too short anyway). */
    if (kv_enc(e) == ENC_INT || !hll_bytes_ok(p, len)) {
        reply_error(c, ERR_HLL_TYPE);
        return 0;
    }
    return 1;
}

/* Rewrite sparse sketch *sp as dense (header kept, encoding byte changed).
 * Returns 0, leaving *sp untouched, when the opcode stream is corrupt. A
 * dense sketch is left as it is. */
static int hll_to_dense(struct rawstr **sp) {
    struct rawstr *s = *sp;
    if ((unsigned char)s->buf[4] == HLL_ENC_DENSE) return 1;
    uint8_t *regs = hk_malloc(HLL_REGS);
    memset(regs, 0, HLL_REGS);
    const unsigned char *b = (const unsigned char *)s->buf;
    if (!sparse_walk(b + HLL_HDR, b + s->len, run_to_max, regs)) {
        hk_free(regs);
        return 0;
    }
    struct rawstr *d = rawstr_new(NULL, 0, HLL_DENSE_BYTES);
    rawstr_growzero(d, HLL_DENSE_BYTES);
    unsigned char *db = (unsigned char *)d->buf;
    memcpy(db, b, HLL_HDR);
    db[4] = HLL_ENC_DENSE;
    for (int i = 0; i < HLL_REGS; i++)
        if (regs[i]) dense_put(db + HLL_HDR, i, regs[i]);
    hk_free(regs);
    hk_free(s);
    *sp = d;
    return 1;
}

/* Raise register `index` of sparse sketch *sp to `count`, following Redis's
 * steps so the resulting bytes match: find the opcode covering the register,
 * replace it by up to five opcodes (left part, the new VAL, right part),
 * then merge equal adjacent VALs in a window of five opcodes from the one
 * before. Turns the sketch dense when count exceeds 32 or the edit would
 * grow it past hll-sparse-max-bytes. *sp may move. Returns 1 when the
 * register changed, calling pre_change(pc) before, 0 when it already held
 * count or more, -1 when the sketch is corrupt. */
static int sparse_raise(struct rawstr **sp, int index, int count, struct pre_change *pc) {
    if (count > HLL_VAL_MAX) goto promote;
    /* Room for the worst split (+3), plus one byte for a split of a
     * truncated XZERO at the very end, whose sequence is written in full. */
    struct rawstr *s = rawstr_reserve(*sp, (size_t)(*sp)->len + 4);
    *sp = s;
    unsigned char *base = (unsigned char *)s->buf + HLL_HDR;
    unsigned char *end = (unsigned char *)s->buf + s->len;
    unsigned char *p = base, *prev = NULL;
    int first = 0, span = 0, oplen = 1;
    while (p < end) {
        oplen = 1;
        if (op_is_zero(p)) {
            span = op_zero_len(p);
        } else if (op_is_val(p)) {
            span = op_val_len(p);
        } else {
            span = op_xzero_len(p, end);
            oplen = 2;
        }
        if (index <= first + span - 1) break;
        prev = p;
        p += oplen;
        first += span;
    }
    if (p >= end) return -1;
    unsigned char *next = p + oplen < end ? p + oplen : NULL;
    int is_xzero = op_is_xzero(p), is_zero = op_is_zero(p), is_val = op_is_val(p);

    if (is_val && op_val_value(p) >= count) return 0;
    pre_change(pc);
    if ((is_val || is_zero) && span == 1) {
        op_set_val(p, count, 1);
        goto merge;
    }

    /* Split the run into [left][count][right]. */
    unsigned char seq[5];
    int n = 0, last = first + span - 1;
    int curval = is_val ? op_val_value(p) : 0;
    if (index != first) {
        if (is_val) op_set_val(seq + n++, curval, index - first);
        else n += op_put_zeros(seq + n, index - first);
    }
    op_set_val(seq + n++, count, 1);
    if (index != last) {
        if (is_val) op_set_val(seq + n++, curval, last - index);
        else n += op_put_zeros(seq + n, last - index);
    }
    int delta = n - (is_xzero ? 2 : 1);
    if (delta > 0 && (long long)s->len + delta > CFG(hll_sparse_max_bytes)) goto promote;
    if (delta && next) memmove(next + delta, next, (size_t)(end - next));
    memcpy(p, seq, (size_t)n);
    s->len = (uint32_t)((long long)s->len + delta);
    end += delta;

merge:
    p = prev ? prev : base;
    for (int scan = 5; p < end && scan > 0; scan--) {
        if (op_is_xzero(p)) {
            p += 2;
            continue;
        }
        if (op_is_zero(p)) {
            p++;
            continue;
        }
        if (p + 1 < end && op_is_val(p + 1) && op_val_value(p) == op_val_value(p + 1)) {
            int len = op_val_len(p) + op_val_len(p + 1);
            if (len <= HLL_VAL_RUN_MAX) {
                op_set_val(p + 1, op_val_value(p), len);
                memmove(p, p + 1, (size_t)(end - p - 1));
                end--;
                s->len--;
                continue; /* the merged run may merge again to its right */
            }
        }
        p++;
    }
    s->buf[s->len] = '\0';
    hll_invalidate(s);
    return 1;

promote:
    if (!hll_to_dense(sp)) return -1;
    return dense_raise((unsigned char *)(*sp)->buf + HLL_HDR, index, count, pc);
}

/* Raise a register of a sketch of either encoding (see sparse_raise). */
static int hll_raise(struct rawstr **sp, int index, int count, struct pre_change *pc) {
    if ((unsigned char)(*sp)->buf[4] == HLL_ENC_DENSE)
        return dense_raise((unsigned char *)(*sp)->buf + HLL_HDR, index, count, pc);
    return sparse_raise(sp, index, count, pc);
}

/* Fold a validated sketch into max[] (register-wise maximum). Returns 0
 * for a corrupt sparse stream. */
static int hll_fold(uint8_t *max, const char *p, size_t len) {
    const unsigned char *b = (const unsigned char *)p;
    if (b[4] == HLL_ENC_DENSE) {
        uint8_t regs[HLL_REGS];
        dense_unpack(b + HLL_HDR, regs);
        for (int i = 0; i < HLL_REGS; i++)
            if (regs[i] > max[i]) max[i] = regs[i];
        return 1;
    }
    /* Redis updates max[] run by run and stops at the first bad opcode;
     * the caller discards max[] on failure, so order does not matter. */
    return sparse_walk(b + HLL_HDR, b + len, run_to_max, max);
}

/* ---- estimator ------------------------------------------------------------- */

/* Ertl's sigma(x) = x + sum_{k>=1} x^(2^k) 2^(k-1), summed until the
 * double stops changing. */
static double hll_sigma(double x) {
    if (x == 1.0) return INFINITY;
    double w = 1.0, z = x, before;
    do {
        x *= x;
        before = z;
        z += x * w;
        w += w;
    } while (before != z);
    return z;
}

/* Ertl's tau(x) = (1 - x - sum_{k>=1} (1 - x^(2^-k))^2 2^-k) / 3. */
static double hll_tau(double x) {
    if (x == 0.0 || x == 1.0) return 0.0;
    double w = 1.0, z = 1.0 - x, before;
    do {
        x = sqrt(x);
        before = z;
        w *= 0.5;
        double d = 1.0 - x;
        z -= d * d * w;
    } while (before != z);
    return z / 3.0;
}

/* Cardinality estimate from the histogram of register values (index 0..63;
 * values above Q+1 cannot come from hashing and are ignored, as in Redis). */
static uint64_t hll_estimate(const int *histo) {
    const double m = HLL_REGS;
    double z = m * hll_tau((m - histo[HLL_Q + 1]) / m);
    for (int k = HLL_Q; k >= 1; k--) {
        z += histo[k];
        z *= 0.5;
    }
    z += m * hll_sigma(histo[0] / m);
    /* alpha_inf = 1 / (2 ln 2) */
    const double alpha_inf = 0.721347520444481703680;
    return (uint64_t)llroundl(alpha_inf * m * m / z);
}

/* Estimate for a validated sketch's bytes; 0 in *ok for a corrupt one. */
static uint64_t hll_count_bytes(const char *p, size_t len, int *ok) {
    int histo[64] = {0};
    const unsigned char *b = (const unsigned char *)p;
    *ok = 1;
    if (b[4] == HLL_ENC_DENSE) {
        uint8_t regs[HLL_REGS];
        dense_unpack(b + HLL_HDR, regs);
        for (int i = 0; i < HLL_REGS; i++) histo[regs[i]]++;
    } else if (!sparse_walk(b + HLL_HDR, b + len, run_to_histo, histo)) {
        *ok = 0;
        return 0;
    }
    return hll_estimate(histo);
}

/* ---- commands -------------------------------------------------------------- */

/* The sketch of key k, as a mutable rawstr owned by the entry returned in
 * *ep, created empty when absent (*created set). Returns NULL after an
 * error reply. */
static struct rawstr *hll_target(struct cmd_ctx *c, const struct keyref *k, struct kv **ep, int *created) {
    struct kv *e = lookup_write(c, k);
    *created = 0;
    if (!e) {
        struct rawstr *s = hll_new_sparse();
        e = kv_new_ptr(k->key, k->klen, OBJ_STRING, ENC_RAW, s, -1);
        db_put(k, e, KEV_PFADD);
        *ep = e;
        *created = 1;
        return s;
    }
    if (!hll_check(c, e)) return NULL;
    struct rawstr *s = strval_unshare(k, &e, 0);
    *ep = e;
    return s;
}

void cmd_pfadd(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e;
    int updated;
    /* A change for a created key and one per register raised, as Redis
     * counts them; none when nothing rose. */
    unsigned long long mark = dirty_mark(c);
    struct rawstr *s = hll_target(c, &k, &e, &updated);
    if (!s) return;
    /* Reported before the first register that rises (a new key was
     * reported when it was stored). */
    struct key_write kw;
    key_write_init(&kw, &k, KEV_PFADD, updated);
    for (int j = 2; j < c->argc; j++) {
        int idx, cnt = hll_pattern((const unsigned char *)c->argv[j].ptr, c->argv[j].len, &idx);
        int r = hll_raise(&s, idx, cnt, &kw.pc);
        if (r < 0) {
            kv_set_ptr(e, s);
            dirty_settle(c, mark, 0);
            reply_error(c, ERR_HLL_CORRUPT);
            return;
        }
        updated += r;
    }
    kv_set_ptr(e, s);
    if (updated) hll_invalidate(s);
    dirty_settle(c, mark, updated);
    reply_int(c, updated ? 1 : 0);
}

void cmd_pfcount(struct cmd_ctx *c) {
    if (c->argc > 2) {
        /* Union of several sketches, none of them modified. */
        uint8_t *max = hk_malloc(HLL_REGS);
        memset(max, 0, HLL_REGS);
        for (int j = 1; j < c->argc; j++) {
            struct keyref k;
            key_of(c, j, &k);
            struct kv *e = lookup_read(c, &k);
            if (!e) continue;
            if (!hll_check(c, e)) {
                hk_free(max);
                return;
            }
            char nb[HK_LONG_STR_SIZE];
            const char *p;
            size_t len;
            kv_str(e, nb, &p, &len);
            if (!hll_fold(max, p, len)) {
                hk_free(max);
                reply_error(c, ERR_HLL_CORRUPT);
                return;
            }
        }
        int histo[64] = {0};
        for (int i = 0; i < HLL_REGS; i++) histo[max[i]]++;
        hk_free(max);
        reply_int(c, (long long)hll_estimate(histo));
        return;
    }
    struct keyref k;
    key_of(c, 1, &k);
    /* A read lookup, as Redis's (a miss counts, and says keymiss). */
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    if (!hll_check(c, e)) return;
    /* Redis unshares the value even when the cache is valid. */
    struct rawstr *s = strval_unshare(&k, &e, 0);
    unsigned char *b = (unsigned char *)s->buf;
    uint64_t card;
    if (!(b[15] & 0x80)) {
        card = 0;
        for (int i = 7; i >= 0; i--) card = (card << 8) | b[8 + i];
    } else {
        int ok;
        card = hll_count_bytes(s->buf, s->len, &ok);
        if (!ok) {
            reply_error(c, ERR_HLL_CORRUPT);
            return;
        }
        /* Cache it: a read that writes, propagated like a write (Redis
         * sends no keyspace event for it). */
        db_written(&k, KEV_CACHE);
        for (int i = 0; i < 8; i++) b[8 + i] = (unsigned char)(card >> (8 * i));
    }
    reply_int(c, (long long)card);
}

void cmd_pfmerge(struct cmd_ctx *c) {
    uint8_t *max = hk_malloc(HLL_REGS);
    memset(max, 0, HLL_REGS);
    int dense = 0;
    /* The destination takes part in the union (and so must be a sketch). */
    for (int j = 1; j < c->argc; j++) {
        struct keyref k;
        key_of(c, j, &k);
        struct kv *e = lookup_read(c, &k);
        if (!e) continue;
        if (!hll_check(c, e)) goto out;
        char nb[HK_LONG_STR_SIZE];
        const char *p;
        size_t len;
        kv_str(e, nb, &p, &len);
        if (p[4] == HLL_ENC_DENSE) dense = 1;
        if (!hll_fold(max, p, len)) {
            reply_error(c, ERR_HLL_CORRUPT);
            goto out;
        }
    }
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e;
    int created;
    struct rawstr *s = hll_target(c, &k, &e, &created);
    if (!s) goto out;
    /* PFMERGE always writes (Redis notifies "pfadd" whatever changed). */
    if (!created) db_written(&k, KEV_PFADD);
    if (dense && !hll_to_dense(&s)) {
        kv_set_ptr(e, s);
        reply_error(c, ERR_HLL_CORRUPT);
        goto out;
    }
    /* Registers are raised one by one in index order, as Redis does, so a
     * sparse destination ends with the same bytes. */
    for (int i = 0; i < HLL_REGS; i++)
        if (max[i]) hll_raise(&s, i, max[i], NULL);
    kv_set_ptr(e, s);
    hll_invalidate(s);
    reply_ok(c);
out:
    hk_free(max);
}
