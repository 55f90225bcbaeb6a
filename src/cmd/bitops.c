/* bitops.c - the bitmap command family: SETBIT, GETBIT, BITCOUNT, BITPOS,
 * BITOP (with Redis 8.2's DIFF, DIFF1, ANDOR and ONE) and
 * BITFIELD/BITFIELD_RO, with Redis's replies and errors.
 * Bitmaps are plain string values; bit 0 is the most significant bit of
 * the first byte. Writers turn the value into a growable raw string
 * (strval.h) and edit it in place, keeping the key's TTL; readers work on
 * the bytes of any encoding (an integer reads as its decimal digits). It
 * is not the string family (string.c) and holds no state of its own.
 * Handlers run with their keys' shards locked by dispatch. */
#include "../core/alloc.h"
#include "../core/util.h"
#include "cmds.h"
#include "cmdutil.h"
#include "strval.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* Bytes of string entry e (NULL: none, length 0); nb holds an integer's
 * digits. */
static const unsigned char *bytes_of(const struct kv *e, char *nb, size_t *len) {
    if (!e) {
        *len = 0;
        return NULL;
    }
    const char *p;
    kv_str(e, nb, &p, len);
    return (const unsigned char *)p;
}

/* Parse a bit offset. With `bits` > 0 a "#n" form means n * bits (the
 * BITFIELD addressing). Offsets whose byte is past the string size limit
 * are refused with Redis's error. */
static int parse_bit_offset(struct cmd_ctx *c, const hk_slice *a, int bits, uint64_t *out) {
    int hash = bits > 0 && a->len > 0 && a->ptr[0] == '#';
    long long v;
    if (!hk_str2ll(a->ptr + hash, a->len - (size_t)hash, &v)) {
        reply_status(c, HK_ERR_BIT_OFFSET);
        return 0;
    }
    if (hash) {
        if (v > LLONG_MAX / bits || v < LLONG_MIN / bits) {
            reply_status(c, HK_ERR_BIT_OFFSET);
            return 0;
        }
        v *= bits;
    }
    if (v < 0 || (v >> 3) >= strval_max_len()) {
        reply_status(c, HK_ERR_BIT_OFFSET);
        return 0;
    }
    *out = (uint64_t)v;
    return 1;
}

/* The value of key argv[1] as a raw string at least `minlen` bytes long
 * (zero padded), created when absent; for the bit writers. Returns NULL
 * after WRONGTYPE. *grown is set when the key was created or lengthened,
 * which is a write reported here as `ev` (SETBIT: "setbit"; BITFIELD
 * passes KEV_NONE, as Redis reports its write only once an operation
 * changed something, though a new key still says "new"); changing bits
 * of what was already there is the caller's to report (before it
 * changes them). */
static struct rawstr *bit_target(struct cmd_ctx *c, const struct keyref *k, size_t minlen, int ev, int *grown) {
    struct kv *e = lookup_write(c, k);
    if (e && !check_type(c, e, OBJ_STRING)) return NULL;
    struct rawstr *s;
    if (!e) {
        db_put(k, strval_new_zeroed(k, minlen, &s), ev);
        *grown = 1;
        return s;
    }
    /* Same bytes in a buffer of its own (a representation, not a write);
     * then the growth, reported first. */
    s = strval_unshare(k, &e, minlen);
    *grown = s->len < minlen;
    if (*grown) db_written(k, ev);
    rawstr_growzero(s, minlen);
    return s;
}

/* Number of set bits in n bytes at p. */
static long long popcount(const unsigned char *p, size_t n) {
    long long bits = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        bits += __builtin_popcountll(w);
    }
    for (; i < n; i++) bits += __builtin_popcount(p[i]);
    return bits;
}

/* ---- SETBIT / GETBIT --------------------------------------------------------- */

void cmd_setbit(struct cmd_ctx *c) {
    uint64_t off;
    if (!parse_bit_offset(c, &c->argv[2], 0, &off)) return;
    long long on;
    if (!hk_str2ll(c->argv[3].ptr, c->argv[3].len, &on) || (on & ~1LL)) {
        reply_status(c, HK_ERR_BIT_VALUE);
        return;
    }
    struct keyref k;
    key_of(c, 1, &k);
    int grown;
    struct rawstr *s = bit_target(c, &k, (size_t)(off >> 3) + 1, KEV_SETBIT, &grown);
    if (!s) return;
    unsigned char *byte = (unsigned char *)s->buf + (off >> 3);
    unsigned char mask = (unsigned char)(1u << (7 - (off & 7)));
    int old = (*byte & mask) != 0;
    if (grown || old != on) {
        if (!grown) db_written(&k, KEV_SETBIT);
        if (on) *byte |= mask;
        else *byte &= (unsigned char)~mask;
    }
    reply_int(c, old);
}

void cmd_getbit(struct cmd_ctx *c) {
    uint64_t off;
    if (!parse_bit_offset(c, &c->argv[2], 0, &off)) return;
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (e && !check_type(c, e, OBJ_STRING)) return;
    char nb[HK_LONG_STR_SIZE];
    size_t len;
    const unsigned char *p = bytes_of(e, nb, &len);
    int bit = 0;
    if ((off >> 3) < len) bit = (p[off >> 3] >> (7 - (off & 7))) & 1;
    reply_int(c, bit);
}

/* ---- BITCOUNT / BITPOS ---------------------------------------------------------- */

/* Parse "BIT" or "BYTE" into *isbit; syntax error otherwise. */
static int parse_unit(struct cmd_ctx *c, const hk_slice *a, int *isbit) {
    if (arg_is(a, "BIT")) *isbit = 1;
    else if (arg_is(a, "BYTE")) *isbit = 0;
    else {
        reply_error(c, ERR_SYNTAX);
        return 0;
    }
    return 1;
}

/* Resolve an inclusive [start, end] range over `total` units: negative
 * values count from the end, then both are clamped into the string. The
 * result may be empty (start > end). */
static void clamp_range(long long total, long long *start, long long *end) {
    if (*start < 0) *start += total;
    if (*end < 0) *end += total;
    if (*start < 0) *start = 0;
    if (*end < 0) *end = 0;
    if (*end >= total) *end = total - 1;
}

/* BITCOUNT key [start end [BYTE|BIT]]. As in Redis 8 the arguments are
 * checked before the key is looked up, so a missing key still gets the
 * syntax and integer errors; then the type, then an empty range (both ends
 * negative and start > end, or nothing left after clamping) answers 0. */
void cmd_bitcount(struct cmd_ctx *c) {
    long long start = 0, end = -1;
    int isbit = 0, ranged = c->argc > 2;
    if (c->argc == 3 || c->argc > 5) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (ranged) {
        if (!arg_ll_or_reply(c, &c->argv[2], &start, NULL)) return;
        if (!arg_ll_or_reply(c, &c->argv[3], &end, NULL)) return;
        if (c->argc == 5 && !parse_unit(c, &c->argv[4], &isbit)) return;
    }
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_int(c, 0);
        return;
    }
    if (!check_type(c, e, OBJ_STRING)) return;
    char nb[HK_LONG_STR_SIZE];
    size_t len;
    const unsigned char *p = bytes_of(e, nb, &len);
    if (!ranged) {
        reply_int(c, popcount(p, len));
        return;
    }
    if (start < 0 && end < 0 && start > end) {
        reply_int(c, 0);
        return;
    }
    clamp_range(isbit ? (long long)len * 8 : (long long)len, &start, &end);
    if (start > end) {
        reply_int(c, 0);
        return;
    }
    if (!isbit) {
        reply_int(c, popcount(p + start, (size_t)(end - start + 1)));
        return;
    }
    long long fb = start >> 3, lb = end >> 3;
    long long n = popcount(p + fb, (size_t)(lb - fb + 1));
    /* Take away the bits of the edge bytes that lie outside the range. */
    unsigned char before = (unsigned char)(0xff00u >> (start & 7));
    unsigned char after = (unsigned char)((1u << (7 - (end & 7))) - 1);
    n -= __builtin_popcount(p[fb] & before) + __builtin_popcount(p[lb] & after);
    reply_int(c, n);
}

/* Position of the first bit equal to `bit` between bit positions first
 * and last (inclusive) of p, or -1. */
static long long find_bit(const unsigned char *p, uint64_t first, uint64_t last, int bit) {
    uint64_t fb = first >> 3, lb = last >> 3;
    unsigned char skip = bit ? 0x00 : 0xff;
    for (uint64_t i = fb; i <= lb; i++) {
        unsigned char b = p[i];
        /* Bits of this byte that are in the range. */
        unsigned char in = 0xff;
        if (i == fb) in &= (unsigned char)(0xffu >> (first & 7));
        if (i == lb) in &= (unsigned char)(0xff00u >> ((last & 7) + 1));
        if (in == 0xff && b == skip) {
            /* Skip whole words of non-matching bytes. */
            while (i + 8 < lb) {
                uint64_t w;
                memcpy(&w, p + i + 1, 8);
                if (w != (bit ? 0 : UINT64_MAX)) break;
                i += 8;
            }
            continue;
        }
        unsigned char m = bit ? (unsigned char)(b & in) : (unsigned char)(~b & in);
        if (m) return (long long)(i * 8) + __builtin_clz((unsigned)m) - 24;
    }
    return -1;
}

/* BITPOS key bit [start [end [BYTE|BIT]]]. A missing key is an endless
 * run of zeros, answered after the arguments are checked (Redis 8).
 * When no end is given a search for 0 that finds none answers the first
 * bit after the string (zero padding on the right); with an explicit end
 * it answers -1. */
void cmd_bitpos(struct cmd_ctx *c) {
    long long bit;
    if (!arg_ll_or_reply(c, &c->argv[2], &bit, NULL)) return;
    if (bit != 0 && bit != 1) {
        reply_error(c, "ERR The bit argument must be 1 or 0.");
        return;
    }
    long long start = 0, end = -1;
    int isbit = 0, end_given = 0;
    if (c->argc >= 4 && c->argc <= 6) {
        if (!arg_ll_or_reply(c, &c->argv[3], &start, NULL)) return;
        if (c->argc == 6 && !parse_unit(c, &c->argv[5], &isbit)) return;
        if (c->argc >= 5) {
            if (!arg_ll_or_reply(c, &c->argv[4], &end, NULL)) return;
            end_given = 1;
        }
    } else if (c->argc != 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_int(c, bit ? -1 : 0);
        return;
    }
    if (!check_type(c, e, OBJ_STRING)) return;
    char nb[HK_LONG_STR_SIZE];
    size_t len;
    const unsigned char *p = bytes_of(e, nb, &len);
    long long total = isbit ? (long long)len * 8 : (long long)len;
    if (!end_given) end = total - 1;
    clamp_range(total, &start, &end);
    if (start > end) {
        reply_int(c, -1);
        return;
    }
    uint64_t first = isbit ? (uint64_t)start : (uint64_t)start * 8;
    uint64_t last = isbit ? (uint64_t)end : (uint64_t)end * 8 + 7;
    long long pos = find_bit(p, first, last, (int)bit);
    if (pos < 0 && bit == 0 && !end_given) pos = (long long)last + 1;
    reply_int(c, pos);
}

/* ---- BITOP ------------------------------------------------------------------------ */

enum { BITOP_AND, BITOP_OR, BITOP_XOR, BITOP_NOT, BITOP_DIFF, BITOP_DIFF1, BITOP_ANDOR, BITOP_ONE };

static const char *const bitop_names[] = {"AND", "OR", "XOR", "NOT", "DIFF", "DIFF1", "ANDOR", "ONE"};

struct bitop_src {
    const unsigned char *p;
    size_t len;
    char nb[HK_LONG_STR_SIZE];
};

/* Byte i of source s, zero past its end. */
static inline unsigned char src_byte(const struct bitop_src *s, size_t i) { return i < s->len ? s->p[i] : 0; }

/* BITOP op destkey key [key ...]: missing keys and the bytes past a
 * shorter string count as zeros. AND, OR and XOR fold every source, NOT
 * takes exactly one. With X the first source and Y the OR of the others
 * (at least one other), DIFF is X AND NOT Y, DIFF1 NOT X AND Y and ANDOR
 * X AND Y; ONE keeps the bits set in exactly one source. The result (as
 * long as the longest input) replaces destkey as a raw string without
 * TTL ("set"); an all-empty input deletes destkey ("del"). Replies the
 * result's length. */
void cmd_bitop(struct cmd_ctx *c) {
    const hk_slice *opname = &c->argv[1];
    int op = -1;
    for (int i = 0; i < (int)(sizeof(bitop_names) / sizeof(bitop_names[0])); i++)
        if (arg_is(opname, bitop_names[i])) op = i;
    if (op < 0) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (op == BITOP_NOT && c->argc != 4) {
        reply_error(c, "ERR BITOP NOT must be called with a single source key.");
        return;
    }
    if ((op == BITOP_DIFF || op == BITOP_DIFF1 || op == BITOP_ANDOR) && c->argc < 5) {
        reply_errorf(c, "ERR BITOP %s must be called with at least two source keys.", bitop_names[op]);
        return;
    }
    int n = c->argc - 3;
    struct bitop_src stack[8];
    struct bitop_src *src = n <= 8 ? stack : hk_malloc((size_t)n * sizeof(*src));
    size_t maxlen = 0;
    for (int j = 0; j < n; j++) {
        struct keyref k;
        key_of(c, 3 + j, &k);
        struct kv *e = lookup_read(c, &k);
        if (e && !check_type(c, e, OBJ_STRING)) {
            if (src != stack) hk_free(src);
            return;
        }
        src[j].p = bytes_of(e, src[j].nb, &src[j].len);
        if (src[j].len > maxlen) maxlen = src[j].len;
    }
    struct keyref dk;
    key_of(c, 2, &dk);
    if (maxlen == 0) {
        db_delete(&dk, c->now_ms, KEV_DEL);
        if (src != stack) hk_free(src);
        reply_int(c, 0);
        return;
    }
    /* Build the result apart: destkey may be one of the sources. */
    struct rawstr *s = rawstr_new(NULL, 0, maxlen);
    unsigned char *r = (unsigned char *)s->buf;
    memset(r, 0, maxlen);
    if (src[0].len) memcpy(r, src[0].p, src[0].len);
    if (op == BITOP_NOT) {
        for (size_t i = 0; i < maxlen; i++) r[i] = (unsigned char)~r[i];
    } else if (op == BITOP_DIFF || op == BITOP_DIFF1 || op == BITOP_ANDOR) {
        for (size_t i = 0; i < maxlen; i++) {
            unsigned char y = 0;
            for (int j = 1; j < n && y != 0xff; j++) y |= src_byte(&src[j], i);
            unsigned char x = r[i];
            r[i] = (unsigned char)(op == BITOP_DIFF ? x & ~y : op == BITOP_DIFF1 ? ~x & y : x & y);
        }
    } else if (op == BITOP_ONE) {
        /* r is the XOR so far; a bit seen twice is cleared for good. */
        for (size_t i = 0; i < maxlen; i++) {
            unsigned char seen_twice = 0, x = r[i];
            for (int j = 1; j < n && seen_twice != 0xff; j++) {
                unsigned char b = src_byte(&src[j], i);
                seen_twice |= x & b;
                x ^= b;
            }
            r[i] = x & (unsigned char)~seen_twice;
        }
    } else {
        for (int j = 1; j < n; j++) {
            const unsigned char *q = src[j].p;
            size_t l = src[j].len;
            if (op == BITOP_AND) {
                for (size_t i = 0; i < l; i++) r[i] &= q[i];
                memset(r + l, 0, maxlen - l);
            } else if (op == BITOP_OR) {
                for (size_t i = 0; i < l; i++) r[i] |= q[i];
            } else {
                for (size_t i = 0; i < l; i++) r[i] ^= q[i];
            }
        }
    }
    s->len = (uint32_t)maxlen;
    s->buf[maxlen] = '\0';
    if (src != stack) hk_free(src);
    db_put(&dk, kv_new_ptr(dk.key, dk.klen, OBJ_STRING, ENC_RAW, s, -1), KEV_SET);
    reply_int(c, (long long)maxlen);
}

/* ---- BITFIELD ------------------------------------------------------------------------ */

enum { BF_GET, BF_SET, BF_INCRBY };
enum { BF_WRAP, BF_SAT, BF_FAIL };

struct bf_op {
    uint64_t offset;
    int64_t value; /* SET's value or INCRBY's increment */
    int opcode, overflow, bits, sign;
};

/* Unsigned integer of `bits` bits at bit offset off of p (len bytes);
 * bytes past the end read as zero. */
static uint64_t bf_get(const unsigned char *p, size_t len, uint64_t off, int bits) {
    uint64_t v = 0;
    for (int i = 0; i < bits; i++, off++) {
        uint64_t byte = off >> 3;
        unsigned bitv = byte < len ? (p[byte] >> (7 - (off & 7))) & 1u : 0;
        v = (v << 1) | bitv;
    }
    return v;
}

static int64_t bf_get_signed(const unsigned char *p, size_t len, uint64_t off, int bits) {
    uint64_t v = bf_get(p, len, off, bits);
    if (bits < 64 && (v >> (bits - 1)) & 1) v |= UINT64_MAX << bits;
    return (int64_t)v;
}

/* Store the low `bits` bits of v at bit offset off (the string is long
 * enough: bit_target sized it). */
static void bf_set(unsigned char *p, uint64_t off, int bits, uint64_t v) {
    for (int i = bits - 1; i >= 0; i--, off++) {
        unsigned char m = (unsigned char)(1u << (7 - (off & 7)));
        if ((v >> i) & 1) p[off >> 3] |= m;
        else p[off >> 3] &= (unsigned char)~m;
    }
}

/* v + incr for a signed field of `bits` bits under an overflow policy.
 * Returns 0, or 1/-1 on overflow/underflow; *res is the value to store
 * (saturated or wrapped; meaningless under FAIL). */
static int bf_add_signed(int64_t v, int64_t incr, int bits, int policy, int64_t *res) {
    __int128 r = (__int128)v + incr;
    int64_t max = bits == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
    int64_t min = -max - 1;
    if (r >= min && r <= max) {
        *res = (int64_t)r;
        return 0;
    }
    int dir = r > max ? 1 : -1;
    if (policy == BF_SAT) {
        *res = dir > 0 ? max : min;
    } else {
        uint64_t u = (uint64_t)v + (uint64_t)incr;
        if (bits < 64) {
            if ((u >> (bits - 1)) & 1) u |= UINT64_MAX << bits;
            else u &= ~(UINT64_MAX << bits);
        }
        *res = (int64_t)u;
    }
    return dir;
}

/* Same for an unsigned field (bits <= 63). v may exceed the field (a SET
 * value, negative ones taken as their two's complement, as Redis does). */
static int bf_add_unsigned(uint64_t v, int64_t incr, int bits, int policy, uint64_t *res) {
    __int128 r = (__int128)v + incr;
    uint64_t max = ((uint64_t)1 << bits) - 1;
    if (r >= 0 && r <= (__int128)max) {
        *res = (uint64_t)r;
        return 0;
    }
    int dir = r > (__int128)max ? 1 : -1;
    if (policy == BF_SAT) *res = dir > 0 ? max : 0;
    else *res = (v + (uint64_t)incr) & max;
    return dir;
}

/* Parse a field type: i1..i64 or u1..u63. */
static int parse_bf_type(struct cmd_ctx *c, const hk_slice *a, int *sign, int *bits) {
    long long n;
    if (a->len < 2 || (a->ptr[0] != 'i' && a->ptr[0] != 'u') || !hk_str2ll(a->ptr + 1, a->len - 1, &n) || n < 1 ||
        n > (a->ptr[0] == 'i' ? 64 : 63)) {
        reply_error(c, "ERR Invalid bitfield type. Use something like i16 u8. "
                       "Note that u64 is not supported but i64 is.");
        return 0;
    }
    *sign = a->ptr[0] == 'i';
    *bits = (int)n;
    return 1;
}

/* BITFIELD and BITFIELD_RO. Every operation is parsed (and any error
 * reported) before the key is touched; then a GET-only request reads the
 * value as it is, and one with writes first sizes the string for the
 * furthest field written. */
static void bitfield_generic(struct cmd_ctx *c, int readonly_cmd) {
    struct bf_op stack[16];
    struct bf_op *ops = stack;
    int cap = 16, nops = 0, policy = BF_WRAP, writes = 0;
    uint64_t highest = 0;
    for (int j = 2; j < c->argc; j++) {
        const hk_slice *a = &c->argv[j];
        int rem = c->argc - j - 1, opcode;
        if (arg_is(a, "GET") && rem >= 2) opcode = BF_GET;
        else if (arg_is(a, "SET") && rem >= 3) opcode = BF_SET;
        else if (arg_is(a, "INCRBY") && rem >= 3) opcode = BF_INCRBY;
        else if (arg_is(a, "OVERFLOW") && rem >= 1) {
            const hk_slice *t = &c->argv[++j];
            if (arg_is(t, "WRAP")) policy = BF_WRAP;
            else if (arg_is(t, "SAT")) policy = BF_SAT;
            else if (arg_is(t, "FAIL")) policy = BF_FAIL;
            else {
                reply_error(c, "ERR Invalid OVERFLOW type specified");
                goto done;
            }
            continue;
        } else {
            reply_error(c, ERR_SYNTAX);
            goto done;
        }
        struct bf_op op = {0};
        op.opcode = opcode;
        op.overflow = policy;
        if (!parse_bf_type(c, &c->argv[j + 1], &op.sign, &op.bits)) goto done;
        if (!parse_bit_offset(c, &c->argv[j + 2], op.bits, &op.offset)) goto done;
        if (opcode != BF_GET) {
            long long v;
            if (!arg_ll_or_reply(c, &c->argv[j + 3], &v, NULL)) goto done;
            op.value = v;
            writes = 1;
            if (op.offset + (uint64_t)op.bits - 1 > highest) highest = op.offset + (uint64_t)op.bits - 1;
        }
        if (nops == cap) {
            cap *= 2;
            if (ops == stack) {
                ops = hk_malloc((size_t)cap * sizeof(*ops));
                memcpy(ops, stack, sizeof(stack));
            } else {
                ops = hk_realloc(ops, (size_t)cap * sizeof(*ops));
            }
        }
        ops[nops++] = op;
        j += opcode == BF_GET ? 2 : 3;
    }

    struct keyref k;
    key_of(c, 1, &k);
    char nb[HK_LONG_STR_SIZE];
    const unsigned char *rp;
    unsigned char *wp = NULL;
    size_t len;
    int grown = 0;
    long long changes = 0; /* the write is reported before the first */
    if (!writes) {
        struct kv *e = lookup_read(c, &k);
        if (e && !check_type(c, e, OBJ_STRING)) goto done;
        rp = bytes_of(e, nb, &len);
    } else {
        if (readonly_cmd) {
            reply_error(c, "ERR BITFIELD_RO only supports the GET subcommand");
            goto done;
        }
        struct rawstr *s = bit_target(c, &k, (size_t)(highest >> 3) + 1, KEV_NONE, &grown);
        if (!s) goto done;
        wp = (unsigned char *)s->buf;
        rp = wp;
        len = s->len;
    }

    reply_array(c, nops);
    for (int i = 0; i < nops; i++) {
        struct bf_op *op = &ops[i];
        if (op->opcode == BF_GET) {
            if (op->sign) reply_int(c, bf_get_signed(rp, len, op->offset, op->bits));
            else reply_int(c, (long long)bf_get(rp, len, op->offset, op->bits));
            continue;
        }
        int over, same;
        uint64_t store;
        long long reply;
        if (op->sign) {
            int64_t old = bf_get_signed(wp, len, op->offset, op->bits), nv;
            if (op->opcode == BF_INCRBY) {
                over = bf_add_signed(old, op->value, op->bits, op->overflow, &nv);
                reply = nv;
            } else {
                over = bf_add_signed(op->value, 0, op->bits, op->overflow, &nv);
                reply = old;
            }
            store = (uint64_t)nv;
            same = nv == old;
        } else {
            uint64_t old = bf_get(wp, len, op->offset, op->bits), nv;
            if (op->opcode == BF_INCRBY) {
                over = bf_add_unsigned(old, op->value, op->bits, op->overflow, &nv);
                reply = (long long)nv;
            } else {
                over = bf_add_unsigned((uint64_t)op->value, 0, op->bits, op->overflow, &nv);
                reply = (long long)old;
            }
            store = nv;
            same = nv == old;
        }
        if (over && op->overflow == BF_FAIL) {
            reply_null(c);
            continue;
        }
        reply_int(c, reply);
        /* As in Redis, an executed SET/INCRBY is a change when it changed
         * its bits or the string was created or grown for the command;
         * the write is reported once, before the first, and one that
         * changed nothing writes nothing. */
        if (same && !grown) continue;
        if (!changes++) db_written(&k, KEV_SETBIT);
        bf_set(wp, op->offset, op->bits, store);
    }
    if (changes > 1) db_dirty_add(changes - 1);
done:
    if (ops != stack) hk_free(ops);
}

void cmd_bitfield(struct cmd_ctx *c) { bitfield_generic(c, 0); }
void cmd_bitfield_ro(struct cmd_ctx *c) { bitfield_generic(c, 1); }
