/* rdb.c - the RDB writer and reader primitives (lengths, strings, numbers,
 * module type ids) and the dispatch of a value to its type's save and load
 * slots; see rdb.h. The types' own bodies live with the types (string.c,
 * list.c, set.c, zset.c, hash and stream codecs); the packed blobs they
 * share (Redis's listpack, ziplist and intset layouts) are in
 * rdb_ziplist.c. Not a file reader: no opcodes, no checksums, no keyspace. */
#include "rdb.h"

#include "../core/alloc.h"
#include "../core/crc64.h"
#include "../core/lzf.h"
#include "../core/util.h"
#include "kv.h"
#include "types.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* String encodings behind a length whose top bits are 11. */
#define STR_ENC_INT8 0
#define STR_ENC_INT16 1
#define STR_ENC_INT32 2
#define STR_ENC_LZF 3

/* An LZF item turns at most 3 input bytes into 264 output bytes, so a
 * plain length past this multiple of the compressed one is corrupt. */
#define LZF_MAX_RATIO 133

/* ---- writing ---- */

void rdb_put_raw(struct rdb_out *o, const void *p, size_t n) {
    if (!o->b)
        o->counted += n;
    else if (n)
        hk_buf_add(o->b, p, n, 256);
}

void rdb_put_byte(struct rdb_out *o, unsigned char c) { rdb_put_raw(o, &c, 1); }

void rdb_put_len(struct rdb_out *o, uint64_t n) {
    unsigned char buf[9];
    size_t k;
    if (n < 64) {
        buf[0] = (unsigned char)n;
        k = 1;
    } else if (n < 16384) {
        buf[0] = (unsigned char)(0x40 | (n >> 8));
        buf[1] = (unsigned char)n;
        k = 2;
    } else if (n <= UINT32_MAX) {
        buf[0] = 0x80;
        for (int i = 0; i < 4; i++) buf[1 + i] = (unsigned char)(n >> (24 - 8 * i));
        k = 5;
    } else {
        buf[0] = 0x81;
        for (int i = 0; i < 8; i++) buf[1 + i] = (unsigned char)(n >> (56 - 8 * i));
        k = 9;
    }
    rdb_put_raw(o, buf, k);
}

/* The integer encoding of v (1, 2 or 4 little-endian bytes after a 0xC0
 * + width marker) into buf; its size, or 0 when v does not fit 32 bits. */
static size_t int_encoding(long long v, unsigned char buf[5]) {
    size_t w;
    if (v >= -128 && v <= 127) {
        buf[0] = 0xC0 | STR_ENC_INT8;
        w = 1;
    } else if (v >= -32768 && v <= 32767) {
        buf[0] = 0xC0 | STR_ENC_INT16;
        w = 2;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        buf[0] = 0xC0 | STR_ENC_INT32;
        w = 4;
    } else {
        return 0;
    }
    uint32_t u = (uint32_t)(int32_t)v;
    for (size_t i = 0; i < w; i++) buf[1 + i] = (unsigned char)(u >> (8 * i));
    return w + 1;
}

/* Whether p/n is the canonical decimal form of an integer (what Redis
 * checks before integer-encoding a string: it must print back the same). */
static int canonical_ll(const char *p, size_t n, long long *v) {
    if (n == 0 || n > 20 || !hk_str2ll(p, n, v)) return 0;
    char buf[HK_LONG_STR_SIZE];
    return (size_t)hk_ll2str(buf, *v) == n && memcmp(buf, p, n) == 0;
}

/* LZF form of p/n when it is at least 4 bytes shorter, as Redis requires
 * before it writes a compressed string; 0 when it was not written. */
static int put_lzf(struct rdb_out *o, const void *p, size_t n) {
    if (n <= 4) return 0;
    size_t room = n - 4;
    unsigned char small[512];
    unsigned char *out = room <= sizeof(small) ? small : hk_malloc(room);
    size_t c = lzf_compress(p, n, out, room);
    if (c) {
        rdb_put_byte(o, 0xC0 | STR_ENC_LZF);
        rdb_put_len(o, c);
        rdb_put_len(o, n);
        rdb_put_raw(o, out, c);
    }
    if (out != small) hk_free(out);
    return c != 0;
}

void rdb_put_string(struct rdb_out *o, const void *p, size_t n) {
    long long v;
    unsigned char buf[5];
    size_t k;
    if (n <= 11 && canonical_ll(p, n, &v) && (k = int_encoding(v, buf)) != 0) {
        rdb_put_raw(o, buf, k);
        return;
    }
    if (o->compress && n > 20 && put_lzf(o, p, n)) return;
    rdb_put_len(o, n);
    rdb_put_raw(o, p, n);
}

void rdb_put_ll(struct rdb_out *o, long long v) {
    unsigned char buf[5];
    size_t k = int_encoding(v, buf);
    if (k) {
        rdb_put_raw(o, buf, k);
        return;
    }
    char s[HK_LONG_STR_SIZE];
    int n = hk_ll2str(s, v);
    rdb_put_len(o, (uint64_t)n);
    rdb_put_raw(o, s, (size_t)n);
}

void rdb_put_u64le(struct rdb_out *o, uint64_t v) {
    unsigned char buf[8];
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(v >> (8 * i));
    rdb_put_raw(o, buf, 8);
}

void rdb_put_double_bin(struct rdb_out *o, double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    rdb_put_u64le(o, u);
}

int rdb_value_type(const struct kv *e, const struct rdb_out *o) {
    int enc = kv_enc(e);
    switch (kv_type(e)) {
    case OBJ_STRING: return RDB_TYPE_STRING;
    case OBJ_LIST: return RDB_TYPE_LIST_QUICKLIST_2;
    case OBJ_SET:
        if (enc == ENC_INTSET) return RDB_TYPE_SET_INTSET;
        if (enc == ENC_LISTPACK && o->version >= 11) return RDB_TYPE_SET_LISTPACK;
        return RDB_TYPE_SET;
    case OBJ_ZSET: return enc == ENC_LISTPACK ? RDB_TYPE_ZSET_LISTPACK : RDB_TYPE_ZSET_2;
    case OBJ_HASH:
        if (enc == ENC_LISTPACK) return RDB_TYPE_HASH_LISTPACK;
        /* Field TTLs have only RDB 12's types: a writer seeing one of
         * these writes the file or payload as version 12. */
        if (enc == ENC_LISTPACK_EX) return RDB_TYPE_HASH_LISTPACK_EX;
        if (enc == ENC_HT_EX) return RDB_TYPE_HASH_METADATA;
        return RDB_TYPE_HASH;
    case OBJ_STREAM: return o->version >= 11 ? RDB_TYPE_STREAM_LISTPACKS_3 : RDB_TYPE_STREAM_LISTPACKS_2;
    case OBJ_VSET: return RDB_TYPE_MODULE_2;
    default: return -1;
    }
}

int rdb_save_value(const struct kv *e, struct rdb_out *o) {
    int t = kv_type(e);
    const struct type_ops *ops = t < OBJ_TYPE_MAX ? type_table[t] : NULL;
    if (!ops || !ops->save) return -1;
    return ops->save(e, o);
}

int rdb_dump_payload(const struct kv *e, int compress, struct hk_buf *b) {
    struct rdb_out o = {.b = b, .version = RDB_VERSION_BASE, .compress = compress};
    int t = rdb_value_type(e, &o);
    if (t == RDB_TYPE_HASH_METADATA || t == RDB_TYPE_HASH_LISTPACK_EX) {
        o.version = RDB_VERSION_HFE;
        t = rdb_value_type(e, &o);
    }
    if (t < 0) return -1;
    size_t start = b->len;
    rdb_put_byte(&o, (unsigned char)t);
    if (rdb_save_value(e, &o) < 0) return -1;
    rdb_put_byte(&o, (unsigned char)(o.version & 0xff));
    rdb_put_byte(&o, (unsigned char)((o.version >> 8) & 0xff));
    rdb_put_u64le(&o, crc64(0, b->p + start, b->len - start));
    return 0;
}

/* ---- reading ---- */

void rdb_in_mem(struct rdb_in *in, const void *p, size_t len, int version) {
    memset(in, 0, sizeof(*in));
    in->p = p;
    in->len = len;
    in->version = version;
    in->now_ms = -1;
}

int rdb_fail(struct rdb_in *in, const char *fmt, ...) {
    if (in->err[0]) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(in->err, sizeof(in->err), fmt, ap);
    va_end(ap);
    if (!in->err[0]) snprintf(in->err, sizeof(in->err), "malformed RDB input");
    return -1;
}

int rdb_fail_empty(struct rdb_in *in, const char *what) {
    if (!in->err[0]) in->empty = 1;
    return rdb_fail(in, "Empty %s", what);
}

/* Offset of the cursor from the start of the input, for messages. */
static unsigned long long in_offset(const struct rdb_in *in) { return (unsigned long long)(in->total + in->pos); }

/* Make n unread bytes available in the window (n <= RDB_IN_CHUNK when the
 * input is refilled); 0, or -1 with in->err set. */
static int in_need(struct rdb_in *in, size_t n) {
    if (in->len - in->pos >= n) return 0;
    if (!in->refill) return rdb_fail(in, "Unexpected end of input at offset %llu", in_offset(in));
    if (in->refill(in, n) < 0 || in->len - in->pos < n)
        return rdb_fail(in, "Unexpected end of input at offset %llu", in_offset(in));
    return 0;
}

int rdb_get_byte(struct rdb_in *in, unsigned char *c) {
    if (in_need(in, 1) < 0) return -1;
    *c = in->p[in->pos++];
    return 0;
}

int rdb_get_raw(struct rdb_in *in, void *dst, size_t n) {
    unsigned char *d = dst;
    while (n) {
        size_t avail = in->len - in->pos;
        if (!avail) {
            if (in_need(in, n < RDB_IN_CHUNK ? n : RDB_IN_CHUNK) < 0) return -1;
            avail = in->len - in->pos;
        }
        size_t k = avail < n ? avail : n;
        memcpy(d, in->p + in->pos, k);
        in->pos += k;
        d += k;
        n -= k;
    }
    return 0;
}

int rdb_skip(struct rdb_in *in, size_t n) {
    while (n) {
        size_t avail = in->len - in->pos;
        if (!avail) {
            if (in_need(in, n < RDB_IN_CHUNK ? n : RDB_IN_CHUNK) < 0) return -1;
            avail = in->len - in->pos;
        }
        size_t k = avail < n ? avail : n;
        in->pos += k;
        n -= k;
    }
    return 0;
}

int rdb_get_len(struct rdb_in *in, uint64_t *n, int *encoded) {
    unsigned char b0, q[8];
    if (encoded) *encoded = 0;
    if (rdb_get_byte(in, &b0) < 0) return -1;
    switch (b0 >> 6) {
    case 0: *n = b0 & 0x3f; return 0;
    case 1:
        if (rdb_get_byte(in, q) < 0) return -1;
        *n = ((uint64_t)(b0 & 0x3f) << 8) | q[0];
        return 0;
    case 3:
        /* Where no encoding is expected Redis reads the low six bits as
         * the length; so does this, so that the same bytes get the same
         * verdict from both servers. */
        if (encoded) *encoded = 1;
        *n = b0 & 0x3f;
        return 0;
    default: break;
    }
    int width = b0 == 0x80 ? 4 : b0 == 0x81 ? 8 : 0;
    if (!width) return rdb_fail(in, "Unknown length encoding 0x%02x at offset %llu", b0, in_offset(in) - 1);
    if (rdb_get_raw(in, q, (size_t)width) < 0) return -1;
    uint64_t v = 0;
    for (int i = 0; i < width; i++) v = (v << 8) | q[i];
    *n = v;
    return 0;
}

/* n bytes of input into a new buffer with room for a NUL. The length is
 * not trusted: in memory it is checked against what is left; from a file
 * the buffer grows as the bytes arrive, so a huge claimed length in a
 * short file fails at its end without the allocation it claimed. */
static char *get_bytes(struct rdb_in *in, uint64_t n) {
    if (n >= SIZE_MAX / 2) {
        rdb_fail(in, "String length %llu is too large at offset %llu", (unsigned long long)n, in_offset(in));
        return NULL;
    }
    if (!in->refill) {
        if (n > in->len - in->pos) {
            rdb_fail(in, "String of %llu bytes runs past the end of input at offset %llu", (unsigned long long)n,
                     in_offset(in));
            return NULL;
        }
        char *s = hk_malloc((size_t)n + 1);
        memcpy(s, in->p + in->pos, (size_t)n);
        in->pos += (size_t)n;
        s[n] = '\0';
        return s;
    }
    size_t want = (size_t)n, have = 0;
    size_t cap = want < RDB_IN_CHUNK ? want : RDB_IN_CHUNK;
    char *s = hk_malloc(cap + 1);
    while (have < want) {
        size_t avail = in->len - in->pos;
        if (!avail) {
            size_t ask = want - have < RDB_IN_CHUNK ? want - have : RDB_IN_CHUNK;
            if (in_need(in, ask) < 0) {
                hk_free(s);
                return NULL;
            }
            avail = in->len - in->pos;
        }
        size_t k = avail < want - have ? avail : want - have;
        if (have + k > cap) {
            cap = cap * 2 > want ? want : cap * 2;
            if (cap < have + k) cap = have + k;
            s = hk_realloc(s, cap + 1);
        }
        memcpy(s + have, in->p + in->pos, k);
        in->pos += k;
        have += k;
    }
    s[want] = '\0';
    return s;
}

static char *get_int_string(struct rdb_in *in, int width, size_t *len, long long *iv) {
    unsigned char q[4];
    if (rdb_get_raw(in, q, (size_t)width) < 0) return NULL;
    long long v;
    if (width == 1)
        v = (int8_t)q[0];
    else if (width == 2)
        v = (int16_t)(uint16_t)(q[0] | (q[1] << 8));
    else
        v = (int32_t)((uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16) | ((uint32_t)q[3] << 24));
    if (iv) *iv = v;
    char *s = hk_malloc(HK_LONG_STR_SIZE);
    *len = (size_t)hk_ll2str(s, v);
    return s;
}

static char *get_lzf_string(struct rdb_in *in, size_t *len) {
    uint64_t clen, ulen;
    if (rdb_get_len(in, &clen, NULL) < 0 || rdb_get_len(in, &ulen, NULL) < 0) return NULL;
    if (clen == 0 || ulen == 0 || ulen / LZF_MAX_RATIO > clen || ulen >= SIZE_MAX / 2) {
        rdb_fail(in, "Invalid LZF string lengths (%llu compressed, %llu plain) at offset %llu",
                 (unsigned long long)clen, (unsigned long long)ulen, in_offset(in));
        return NULL;
    }
    /* The compressed bytes are read first: they back the plain length. */
    char *c = get_bytes(in, clen);
    if (!c) return NULL;
    char *s = hk_malloc((size_t)ulen + 1);
    size_t got = lzf_decompress(c, (size_t)clen, s, (size_t)ulen);
    hk_free(c);
    if (got != ulen) {
        hk_free(s);
        rdb_fail(in, "Invalid LZF compressed string at offset %llu", in_offset(in));
        return NULL;
    }
    s[ulen] = '\0';
    *len = (size_t)ulen;
    return s;
}

/* rdb_get_string, telling an integer-encoded string apart (*is_int, *iv). */
static char *get_string(struct rdb_in *in, size_t *len, int *is_int, long long *iv) {
    uint64_t n;
    int enc;
    if (is_int) *is_int = 0;
    if (rdb_get_len(in, &n, &enc) < 0) return NULL;
    if (enc) {
        switch (n) {
        case STR_ENC_INT8:
        case STR_ENC_INT16:
        case STR_ENC_INT32:
            if (is_int) *is_int = 1;
            return get_int_string(in, n == STR_ENC_INT8 ? 1 : n == STR_ENC_INT16 ? 2 : 4, len, iv);
        case STR_ENC_LZF: return get_lzf_string(in, len);
        default:
            rdb_fail(in, "Unknown string encoding %llu at offset %llu", (unsigned long long)n, in_offset(in) - 1);
            return NULL;
        }
    }
    char *s = get_bytes(in, n);
    if (s) *len = (size_t)n;
    return s;
}

char *rdb_get_string(struct rdb_in *in, size_t *len) { return get_string(in, len, NULL, NULL); }

int rdb_get_ll(struct rdb_in *in, long long *v) {
    size_t len;
    int is_int;
    char *s = get_string(in, &len, &is_int, v);
    if (!s) return -1;
    int ok = is_int || hk_str2ll(s, len, v);
    hk_free(s);
    if (!ok) return rdb_fail(in, "Expected an integer at offset %llu", in_offset(in));
    return 0;
}

int rdb_get_u64le(struct rdb_in *in, uint64_t *v) {
    unsigned char q[8];
    if (rdb_get_raw(in, q, 8) < 0) return -1;
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--) u = (u << 8) | q[i];
    *v = u;
    return 0;
}

int rdb_get_double_bin(struct rdb_in *in, double *d) {
    uint64_t u;
    if (rdb_get_u64le(in, &u) < 0) return -1;
    memcpy(d, &u, 8);
    return 0;
}

int rdb_get_double_text(struct rdb_in *in, double *d) {
    unsigned char n;
    char buf[256];
    if (rdb_get_byte(in, &n) < 0) return -1;
    switch (n) {
    case 253: *d = NAN; return 0;
    case 254: *d = INFINITY; return 0;
    case 255: *d = -INFINITY; return 0;
    default: break;
    }
    if (rdb_get_raw(in, buf, n) < 0) return -1;
    buf[n] = '\0';
    char *end;
    *d = strtod(buf, &end);
    if (n == 0 || end != buf + n) return rdb_fail(in, "Invalid double value at offset %llu", in_offset(in));
    return 0;
}

/* ---- module type ids ---- */

static const char module_charset[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void rdb_module_name(uint64_t id, char out[10], int *encver) {
    if (encver) *encver = (int)(id & 1023);
    id >>= 10;
    for (int i = 8; i >= 0; i--) {
        out[i] = module_charset[id & 63];
        id >>= 6;
    }
    out[9] = '\0';
}

uint64_t rdb_module_id(const char *name, int encver) {
    uint64_t id = 0;
    int ended = 0;
    for (int i = 0; i < 9; i++) {
        char ch = ended ? '\0' : name[i];
        if (!ch) ended = 1; /* a short name pads with 'A' */
        const char *c = ch ? strchr(module_charset, ch) : NULL;
        id = (id << 6) | (c ? (uint64_t)(c - module_charset) : 0);
    }
    return (id << 10) | (uint64_t)(encver & 1023);
}

/* ---- dispatch ---- */

int rdb_is_value_type(int t) {
    return (t >= RDB_TYPE_STRING && t <= RDB_TYPE_MODULE_2) || (t >= RDB_TYPE_HASH_ZIPMAP && t <= RDB_TYPE_LAST);
}

/* The OBJ_* type an RDB value type loads as; -1 for modules and unknowns. */
static int obj_type_of(int t) {
    switch (t) {
    case RDB_TYPE_STRING: return OBJ_STRING;
    case RDB_TYPE_LIST:
    case RDB_TYPE_LIST_ZIPLIST:
    case RDB_TYPE_LIST_QUICKLIST:
    case RDB_TYPE_LIST_QUICKLIST_2: return OBJ_LIST;
    case RDB_TYPE_SET:
    case RDB_TYPE_SET_INTSET:
    case RDB_TYPE_SET_LISTPACK: return OBJ_SET;
    case RDB_TYPE_ZSET:
    case RDB_TYPE_ZSET_2:
    case RDB_TYPE_ZSET_ZIPLIST:
    case RDB_TYPE_ZSET_LISTPACK: return OBJ_ZSET;
    case RDB_TYPE_HASH:
    case RDB_TYPE_HASH_ZIPMAP:
    case RDB_TYPE_HASH_ZIPLIST:
    case RDB_TYPE_HASH_LISTPACK:
    case RDB_TYPE_HASH_METADATA_PRE_GA:
    case RDB_TYPE_HASH_LISTPACK_EX_PRE_GA:
    case RDB_TYPE_HASH_METADATA:
    case RDB_TYPE_HASH_LISTPACK_EX: return OBJ_HASH;
    case RDB_TYPE_STREAM_LISTPACKS:
    case RDB_TYPE_STREAM_LISTPACKS_2:
    case RDB_TYPE_STREAM_LISTPACKS_3: return OBJ_STREAM;
    default: return -1;
    }
}

/* The module id at the cursor, left unread: the module's load slot reads
 * the body from its id on, as its save slot wrote it. */
static int peek_module_id(struct rdb_in *in, uint64_t *id) {
    if (in_need(in, 1) < 0) return -1;
    unsigned char b0 = in->p[in->pos];
    size_t k = b0 == 0x81 ? 9 : b0 == 0x80 ? 5 : (b0 >> 6) == 1 ? 2 : (b0 >> 6) == 0 ? 1 : 0;
    if (!k) return rdb_fail(in, "Invalid module type id at offset %llu", in_offset(in));
    if (in_need(in, k) < 0) return -1;
    const unsigned char *q = in->p + in->pos;
    uint64_t v = 0;
    if (k == 1)
        v = b0 & 0x3f;
    else if (k == 2)
        v = ((uint64_t)(b0 & 0x3f) << 8) | q[1];
    else
        for (size_t i = 1; i < k; i++) v = (v << 8) | q[i];
    *id = v;
    return 0;
}

struct kv *rdb_load_value(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire) {
    int t = obj_type_of(rdb_type);
    if (rdb_type == RDB_TYPE_MODULE_2) {
        uint64_t id = 0;
        char name[10];
        if (peek_module_id(in, &id) < 0) return NULL;
        rdb_module_name(id, name, NULL);
        if (strcmp(name, RDB_VSET_MODULE_NAME) != 0) {
            rdb_fail(in, "Unknown module type '%s'", name);
            return NULL;
        }
        t = OBJ_VSET;
    }
    const struct type_ops *ops = t >= 0 && t < OBJ_TYPE_MAX ? type_table[t] : NULL;
    if (!ops || !ops->load) {
        if (rdb_type == RDB_TYPE_MODULE_PRE_GA)
            rdb_fail(in, "RDB value type 6 (a module value of Redis 4.0 release candidates) is not supported");
        else
            rdb_fail(in, "RDB value type %d is not supported", rdb_type);
        return NULL;
    }
    struct kv *e = ops->load(in, rdb_type, key, klen, expire);
    if (!e && !in->err[0]) rdb_fail(in, "Malformed %s value (RDB type %d)", ops->name, rdb_type);
    return e;
}
