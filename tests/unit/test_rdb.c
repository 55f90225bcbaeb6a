/* test_rdb.c - unit tests of the RDB value codec (src/types/rdb.c,
 * rdb_ziplist.c and the save/load slots of strings, lists, sets and
 * sorted sets): lengths and strings in every encoding (integers, LZF),
 * reading through a refilled window, module type ids, byte-exact bodies
 * for small values as redis-server writes them, round trips of every
 * encoding (big values, compressed quicklist nodes, plain nodes), the
 * legacy encodings from hand-built blobs (linked lists, ziplists,
 * quicklists of ziplists, text scores, intsets), the encoding a loaded
 * value takes under the thresholds, and corrupt input: every truncation
 * and thousands of random byte changes of several payloads must fail
 * cleanly or load something that saves and loads again. */
#include "core/alloc.h"
#include "core/intset.h"
#include "core/listpack.h"
#include "test.h"
#include "types/digest.h"
#include "types/kv.h"
#include "types/list.h"
#include "types/rdb.h"
#include "types/rdblen.h"
#include "types/set.h"
#include "types/types.h"
#include "types/zset.h"

#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- helpers ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void digest_of(const struct kv *e, unsigned char d[20]) {
    memset(d, 0, 20);
    kv_digest_value(e, d);
}

static int same_value(const struct kv *a, const struct kv *b) {
    unsigned char da[20], db[20];
    if (kv_type(a) != kv_type(b)) return 0;
    digest_of(a, da);
    digest_of(b, db);
    return memcmp(da, db, 20) == 0;
}

/* The body of e at `version`, its type byte into *type. */
static struct hk_buf save_body(const struct kv *e, int version, int compress, int *type) {
    struct hk_buf b = {0};
    struct rdb_out o = {&b, version, compress};
    *type = rdb_value_type(e, &o);
    CHECK(rdb_save_value(e, &o) == 0);
    return b;
}

/* Load a body held in memory; checks it is consumed whole on success. */
static struct kv *load_body(const void *p, size_t len, int type, char *err, size_t errlen) {
    struct rdb_in in;
    rdb_in_mem(&in, p, len, RDB_VERSION_MAX);
    struct kv *e = rdb_load_value(&in, type, "k", 1, -1);
    if (e)
        CHECK_EQ_LL(in.pos, len);
    else
        CHECK(in.err[0] != '\0');
    if (err) snprintf(err, errlen, "%s", in.err);
    return e;
}

/* Save, load back, and check the value is the same; returns the loaded
 * entry (the caller frees it). */
static struct kv *round_trip(const struct kv *e, int version, int compress, int *type) {
    struct hk_buf b = save_body(e, version, compress, type);
    char err[160];
    struct kv *l = load_body(b.p, b.len, *type, err, sizeof(err));
    if (!l) fprintf(stderr, "load failed: %s\n", err);
    CHECK(l != NULL);
    if (l) CHECK(same_value(e, l));
    hk_free(b.p);
    return l;
}

static struct kv *make_list(const char **items, int n) {
    struct kv *e = listv_new_entry("k", 1);
    struct listv v;
    listv_open(&v, e);
    for (int i = 0; i < n; i++) {
        listv_grow(&v, strlen(items[i]), 1);
        listv_push(&v, items[i], strlen(items[i]), 0);
    }
    listv_done(&v);
    return e;
}

static void list_push(struct kv *e, const char *s, size_t len) {
    struct listv v;
    listv_open(&v, e);
    listv_grow(&v, len, 1);
    listv_push(&v, s, len, 0);
    listv_done(&v);
}

static struct kv *make_set(const char **items, int n) {
    struct setv o = setv_new(ENC_INTSET);
    for (int i = 0; i < n; i++) setv_add(&o, items[i], strlen(items[i]), NULL);
    return setv_entry("k", 1, &o);
}

static void zadd(struct kv *e, double score, const char *m, size_t len) {
    int out;
    CHECK(zs_add(e, score, m, len, 0, &out, NULL, NULL) == 0);
}

static void put_bytes(struct hk_buf *b, const void *p, size_t n) { hk_buf_add(b, p, n, 64); }
static void put_u8(struct hk_buf *b, unsigned v) {
    unsigned char c = (unsigned char)v;
    put_bytes(b, &c, 1);
}
static void put_le(struct hk_buf *b, uint64_t v, int n) {
    for (int i = 0; i < n; i++) put_u8(b, (unsigned)(v >> (8 * i)) & 0xff);
}
static void put_rdb_string(struct hk_buf *b, const void *p, size_t n) {
    struct rdb_out o = {b, RDB_VERSION_BASE, 0};
    rdb_put_len(&o, n);
    rdb_put_raw(&o, p, n);
}

/* ---- a ziplist builder (Redis before 7.0) ---- */

struct zlb {
    struct hk_buf b;
    size_t prev, last;
    unsigned count;
};

static void zl_init(struct zlb *z) {
    memset(z, 0, sizeof(*z));
    unsigned char hdr[10] = {0};
    put_bytes(&z->b, hdr, 10);
    z->last = 10;
}

static void zl_prevlen(struct zlb *z) {
    z->last = z->b.len;
    if (z->prev < 254) {
        put_u8(&z->b, (unsigned)z->prev);
    } else {
        put_u8(&z->b, 254);
        put_le(&z->b, z->prev, 4);
    }
}

static void zl_str(struct zlb *z, const char *s, size_t len) {
    size_t start = z->b.len;
    zl_prevlen(z);
    if (len < 64) {
        put_u8(&z->b, (unsigned)len);
    } else if (len < 16384) {
        put_u8(&z->b, 0x40 | (unsigned)(len >> 8));
        put_u8(&z->b, (unsigned)(len & 0xff));
    } else {
        put_u8(&z->b, 0x80);
        for (int i = 3; i >= 0; i--) put_u8(&z->b, (unsigned)(len >> (8 * i)) & 0xff);
    }
    put_bytes(&z->b, s, len);
    z->prev = z->b.len - start;
    z->count++;
}

static void zl_int(struct zlb *z, long long v) {
    size_t start = z->b.len;
    zl_prevlen(z);
    if (v >= 0 && v <= 12) {
        put_u8(&z->b, 0xF1 + (unsigned)v);
    } else if (v >= -128 && v <= 127) {
        put_u8(&z->b, 0xFE);
        put_le(&z->b, (uint64_t)v, 1);
    } else if (v >= -32768 && v <= 32767) {
        put_u8(&z->b, 0xC0);
        put_le(&z->b, (uint64_t)v, 2);
    } else if (v >= -8388608 && v <= 8388607) {
        put_u8(&z->b, 0xF0);
        put_le(&z->b, (uint64_t)v, 3);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        put_u8(&z->b, 0xD0);
        put_le(&z->b, (uint64_t)v, 4);
    } else {
        put_u8(&z->b, 0xE0);
        put_le(&z->b, (uint64_t)v, 8);
    }
    z->prev = z->b.len - start;
    z->count++;
}

static void zl_finish(struct zlb *z) {
    put_u8(&z->b, 0xFF);
    unsigned char *p = (unsigned char *)z->b.p;
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(z->b.len >> (8 * i));
    for (int i = 0; i < 4; i++) p[4 + i] = (unsigned char)(z->last >> (8 * i));
    p[8] = (unsigned char)(z->count & 0xff);
    p[9] = (unsigned char)(z->count >> 8);
}

/* ---- a window refilled in small pieces ---- */

struct feed {
    const unsigned char *src;
    size_t len, off, step, max_need;
    unsigned char *win;
    size_t cap;
};

static int feed_refill(struct rdb_in *in, size_t need) {
    struct feed *f = in->ctx;
    if (need > f->max_need) f->max_need = need;
    size_t unread = in->len - in->pos;
    if (need > f->cap) return rdb_fail(in, "refill of %zu bytes asked", need);
    memmove(f->win, in->p + in->pos, unread);
    size_t want = need > f->step ? need : f->step;
    if (want > f->cap) want = f->cap;
    size_t k = want > unread ? want - unread : 0;
    if (k > f->len - f->off) k = f->len - f->off;
    memcpy(f->win + unread, f->src + f->off, k);
    f->off += k;
    in->total += in->pos;
    in->p = f->win;
    in->pos = 0;
    in->len = unread + k;
    return in->len >= need ? 0 : rdb_fail(in, "end of file");
}

static void feed_init(struct rdb_in *in, struct feed *f, const void *p, size_t len, size_t step) {
    memset(f, 0, sizeof(*f));
    f->src = p;
    f->len = len;
    f->step = step;
    f->cap = RDB_IN_CHUNK + 16;
    f->win = hk_malloc(f->cap);
    memset(in, 0, sizeof(*in));
    in->p = f->win;
    in->refill = feed_refill;
    in->ctx = f;
    in->version = RDB_VERSION_MAX;
}

/* ---- primitives ---- */

static void test_string_encodings(void) {
    static const struct {
        const char *s;
        const char *bytes;
        size_t n;
    } cases[] = {
        {"12", "\xc0\x0c", 2},
        {"-1", "\xc0\xff", 2},
        {"-128", "\xc0\x80", 2},
        {"128", "\xc1\x80\x00", 3},
        {"-32768", "\xc1\x00\x80", 3},
        {"65536", "\xc2\x00\x00\x01\x00", 5},
        {"-2147483648", "\xc2\x00\x00\x00\x80", 5},
        {"2147483648",
         "\x0a"
         "2147483648",
         11},
        {"007",
         "\x03"
         "007",
         4},
        {"-0", "\x02-0", 3},
        {"+1", "\x02+1", 3},
        {"", "\x00", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct hk_buf b = {0};
        struct rdb_out o = {&b, RDB_VERSION_BASE, 1};
        rdb_put_string(&o, cases[i].s, strlen(cases[i].s));
        CHECK_EQ_LL(b.len, cases[i].n);
        CHECK(b.len == cases[i].n && memcmp(b.p, cases[i].bytes, b.len) == 0);
        struct rdb_in in;
        rdb_in_mem(&in, b.p, b.len, RDB_VERSION_BASE);
        size_t len;
        char *s = rdb_get_string(&in, &len);
        CHECK(s != NULL);
        if (s) CHECK_MEM(s, len, cases[i].s);
        CHECK_EQ_LL(in.pos, b.len);
        hk_free(s);
        hk_free(b.p);
    }
    /* rdb_put_ll and rdb_get_ll, past 32 bits too. */
    static const long long lls[] = {0, -1, 127, -129, 40000, INT32_MIN, (long long)INT32_MAX + 1, LLONG_MIN, LLONG_MAX};
    for (size_t i = 0; i < sizeof(lls) / sizeof(lls[0]); i++) {
        struct hk_buf b = {0};
        struct rdb_out o = {&b, RDB_VERSION_BASE, 0};
        rdb_put_ll(&o, lls[i]);
        struct rdb_in in;
        rdb_in_mem(&in, b.p, b.len, RDB_VERSION_BASE);
        long long v = 1;
        CHECK(rdb_get_ll(&in, &v) == 0);
        CHECK(v == lls[i]);
        hk_free(b.p);
    }
    /* A string that is no integer is refused by rdb_get_ll. */
    struct rdb_in in;
    rdb_in_mem(&in,
               "\x03"
               "abc",
               4, RDB_VERSION_BASE);
    long long v;
    CHECK(rdb_get_ll(&in, &v) < 0 && in.err[0]);
}

static void test_lzf_strings(void) {
    size_t n = 5000;
    char *s = hk_malloc(n);
    for (size_t i = 0; i < n; i++) s[i] = (char)('a' + (i % 7));
    struct hk_buf b = {0};
    struct rdb_out o = {&b, RDB_VERSION_BASE, 1};
    rdb_put_string(&o, s, n);
    CHECK((unsigned char)b.p[0] == 0xC3);
    CHECK(b.len < n / 4);
    struct rdb_in in;
    rdb_in_mem(&in, b.p, b.len, RDB_VERSION_BASE);
    size_t len;
    char *r = rdb_get_string(&in, &len);
    CHECK(r && len == n && memcmp(r, s, n) == 0);
    CHECK_EQ_LL(in.pos, b.len);
    hk_free(r);
    /* Every truncation fails. */
    for (size_t cut = 0; cut < b.len; cut++) {
        rdb_in_mem(&in, b.p, cut, RDB_VERSION_BASE);
        CHECK(rdb_get_string(&in, &len) == NULL);
    }
    /* A plain length far past what the compressed bytes can give. */
    static const unsigned char lie[] = {0xC3, 0x02, 0x81, 0, 0, 0, 0x10, 0, 0, 0, 0, 0x01, 'a'};
    rdb_in_mem(&in, lie, sizeof(lie), RDB_VERSION_BASE);
    CHECK(rdb_get_string(&in, &len) == NULL);
    /* Without compression, or when it does not pay, the string is plain. */
    b.len = 0;
    o.compress = 0;
    rdb_put_string(&o, s, n);
    CHECK_EQ_LL(b.len, 2 + n);
    b.len = 0;
    o.compress = 1;
    for (size_t i = 0; i < n; i++) s[i] = (char)rnd();
    rdb_put_string(&o, s, n);
    CHECK_EQ_LL(b.len, 2 + n);
    /* 20 bytes are never compressed, 21 may be. */
    b.len = 0;
    rdb_put_string(&o, "aaaaaaaaaaaaaaaaaaaa", 20);
    CHECK_EQ_LL(b.len, 21);
    b.len = 0;
    rdb_put_string(&o, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 48);
    CHECK((unsigned char)b.p[0] == 0xC3);
    hk_free(b.p);
    hk_free(s);
}

static void test_lengths_and_numbers(void) {
    static const uint64_t lens[] = {0, 63, 64, 16383, 16384, UINT32_MAX, (uint64_t)UINT32_MAX + 1, UINT64_MAX};
    struct hk_buf b = {0};
    struct rdb_out o = {&b, RDB_VERSION_BASE, 0};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) rdb_put_len(&o, lens[i]);
    rdb_put_double_bin(&o, 3.25);
    rdb_put_double_bin(&o, -INFINITY);
    rdb_put_u64le(&o, 0x0102030405060708ULL);
    CHECK((unsigned char)b.p[b.len - 8] == 0x08 && (unsigned char)b.p[b.len - 1] == 0x01);
    struct rdb_in in;
    rdb_in_mem(&in, b.p, b.len, RDB_VERSION_BASE);
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        uint64_t n;
        CHECK(rdb_get_len(&in, &n, NULL) == 0 && n == lens[i]);
    }
    double d;
    uint64_t u;
    CHECK(rdb_get_double_bin(&in, &d) == 0 && d == 3.25);
    CHECK(rdb_get_double_bin(&in, &d) == 0 && isinf(d) && d < 0);
    CHECK(rdb_get_u64le(&in, &u) == 0 && u == 0x0102030405060708ULL);
    CHECK(rdb_get_byte(&in, (unsigned char *)&d) < 0 && strstr(in.err, "end of input"));
    hk_free(b.p);
    /* An encoded length where a plain one is expected reads as its low
     * six bits, as Redis reads it; then an unknown form. */
    rdb_in_mem(&in, "\xc5\x01", 2, RDB_VERSION_BASE);
    uint64_t n;
    int enc;
    CHECK(rdb_get_len(&in, &n, NULL) == 0 && n == 5);
    rdb_in_mem(&in, "\xc0\x01", 2, RDB_VERSION_BASE);
    CHECK(rdb_get_len(&in, &n, &enc) == 0 && enc == 1 && n == 0);
    rdb_in_mem(&in, "\x82\x00\x00\x00\x00", 5, RDB_VERSION_BASE);
    CHECK(rdb_get_len(&in, &n, NULL) < 0);
    rdb_in_mem(&in, "\xc4", 1, RDB_VERSION_BASE);
    size_t len;
    CHECK(rdb_get_string(&in, &len) == NULL && in.err[0]);
    /* Text doubles: the three special lengths, then text. */
    static const unsigned char txt[] = {253, 254, 255, 4, '1', '.', '5', '0', 3, '1', 'x', '2'};
    rdb_in_mem(&in, txt, sizeof(txt), RDB_VERSION_BASE);
    CHECK(rdb_get_double_text(&in, &d) == 0 && isnan(d));
    CHECK(rdb_get_double_text(&in, &d) == 0 && isinf(d) && d > 0);
    CHECK(rdb_get_double_text(&in, &d) == 0 && isinf(d) && d < 0);
    CHECK(rdb_get_double_text(&in, &d) == 0 && d == 1.5);
    CHECK(rdb_get_double_text(&in, &d) < 0);
    /* skip, and the first error is the one kept. */
    rdb_in_mem(&in, "abcdef", 6, RDB_VERSION_BASE);
    CHECK(rdb_skip(&in, 4) == 0 && in.pos == 4);
    CHECK(rdb_skip(&in, 3) < 0);
    char first[160];
    snprintf(first, sizeof(first), "%s", in.err);
    CHECK(rdb_fail(&in, "second") < 0);
    CHECK(strcmp(in.err, first) == 0);
}

/* A huge claimed length in a short input fails without allocating it. */
static void test_huge_lengths(void) {
    static const unsigned char huge64[] = {0x81, 0, 0, 0, 0x10, 0, 0, 0, 0, 'a', 'b'};
    static const unsigned char huge32[] = {0x80, 0x7f, 0xff, 0xff, 0xff, 'a', 'b'};
    size_t before = hk_used_memory(), len;
    struct rdb_in in;
    rdb_in_mem(&in, huge64, sizeof(huge64), RDB_VERSION_BASE);
    CHECK(rdb_get_string(&in, &len) == NULL && in.err[0]);
    rdb_in_mem(&in, huge32, sizeof(huge32), RDB_VERSION_BASE);
    CHECK(rdb_get_string(&in, &len) == NULL && in.err[0]);
    struct feed f;
    feed_init(&in, &f, huge32, sizeof(huge32), 3);
    CHECK(rdb_get_string(&in, &len) == NULL && in.err[0]);
    CHECK(f.max_need <= RDB_IN_CHUNK);
    hk_free(f.win);
    CHECK(hk_used_memory() < before + 4096);
    /* A list claiming 2^60 elements, and its type loaders. */
    static const unsigned char biglist[] = {0x81, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x01, 'a'};
    char err[160];
    CHECK(load_body(biglist, sizeof(biglist), RDB_TYPE_LIST, err, sizeof(err)) == NULL);
    CHECK(load_body(biglist, sizeof(biglist), RDB_TYPE_SET, err, sizeof(err)) == NULL);
    CHECK(load_body(biglist, sizeof(biglist), RDB_TYPE_ZSET_2, err, sizeof(err)) == NULL);
    CHECK(load_body(biglist, sizeof(biglist), RDB_TYPE_LIST_QUICKLIST_2, err, sizeof(err)) == NULL);
}

static void test_refill_window(void) {
    /* A 300000-byte string (read in pieces), then every kind of value,
     * through a window refilled 5 bytes at a time. */
    size_t n = 300000;
    char *s = hk_malloc(n);
    for (size_t i = 0; i < n; i++) s[i] = (char)rnd();
    struct hk_buf b = {0};
    struct rdb_out o = {&b, RDB_VERSION_BASE, 0};
    rdb_put_string(&o, s, n);
    rdb_put_string(&o, "12345", 5);
    rdb_put_len(&o, 70000);
    size_t strings_end = b.len;
    const char *items[] = {"a", "bb", "123", "-5"};
    struct kv *l = make_list(items, 4);
    int lt;
    struct hk_buf lb = save_body(l, RDB_VERSION_BASE, 1, &lt);
    put_bytes(&b, lb.p, lb.len);
    for (size_t step = 1; step <= 4096; step *= 8) {
        struct rdb_in in;
        struct feed f;
        feed_init(&in, &f, b.p, b.len, step);
        size_t len;
        char *r = rdb_get_string(&in, &len);
        CHECK(r && len == n && memcmp(r, s, n) == 0);
        hk_free(r);
        long long v;
        CHECK(rdb_get_ll(&in, &v) == 0 && v == 12345);
        uint64_t u;
        CHECK(rdb_get_len(&in, &u, NULL) == 0 && u == 70000);
        CHECK_EQ_LL(in.total + in.pos, strings_end);
        struct kv *e = rdb_load_value(&in, lt, "k", 1, -1);
        CHECK(e && same_value(e, l));
        if (e) kv_free(e);
        CHECK_EQ_LL(in.total + in.pos, b.len);
        CHECK(f.max_need <= RDB_IN_CHUNK);
        hk_free(f.win);
        /* Cut anywhere: an error, never more. */
        feed_init(&in, &f, b.p, b.len - 1 - (size_t)(rnd() % 50), step);
        r = rdb_get_string(&in, &len);
        hk_free(r);
        if (r) {
            rdb_get_ll(&in, &v);
            rdb_get_len(&in, &u, NULL);
            e = rdb_load_value(&in, lt, "k", 1, -1);
            CHECK(e == NULL && in.err[0]);
        }
        hk_free(f.win);
    }
    kv_free(l);
    hk_free(lb.p);
    hk_free(b.p);
    hk_free(s);
}

static void test_module_ids(void) {
    char name[10];
    int ver = -1;
    uint64_t id = rdb_module_id("ReJSON-RL", 3);
    rdb_module_name(id, name, &ver);
    CHECK(strcmp(name, "ReJSON-RL") == 0 && ver == 3);
    id = rdb_module_id(RDB_VSET_MODULE_NAME, 0);
    rdb_module_name(id, name, &ver);
    CHECK(strcmp(name, "vectorset") == 0 && ver == 0);
    /* The charset order: 'A' is 0, '_' is 63. */
    CHECK(rdb_module_id("AAAAAAAAA", 0) == 0);
    CHECK(rdb_module_id("AAAAAAAAB", 1) == ((1ULL << 10) | 1));
    CHECK(rdb_module_id("_AAAAAAAA", 0) == (63ULL << (10 + 48)));
    /* Loading an unknown module value names it. */
    struct hk_buf b = {0};
    struct rdb_out o = {&b, RDB_VERSION_BASE, 0};
    rdb_put_len(&o, rdb_module_id("ReJSON-RL", 3));
    rdb_put_len(&o, RDB_MODULE_OPCODE_EOF);
    char err[160];
    CHECK(load_body(b.p, b.len, RDB_TYPE_MODULE_2, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "Unknown module type 'ReJSON-RL'") != NULL);
    CHECK(load_body(b.p, b.len, RDB_TYPE_MODULE_PRE_GA, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "RDB value type 6") != NULL);
    CHECK(load_body(b.p, b.len, 8, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "RDB value type 8 is not supported") != NULL);
    hk_free(b.p);
}

static void test_value_types(void) {
    for (int t = 0; t < 256; t++) {
        int want = (t <= 7) || (t >= 9 && t <= 25);
        CHECK(!!rdb_is_value_type(t) == want);
    }
    struct hk_buf b = {0};
    struct rdb_out v10 = {&b, 10, 0}, v11 = {&b, 11, 0}, v12 = {&b, 12, 0};
    struct kv *s = kv_new_str("k", 1, "x", 1, -1);
    CHECK(rdb_value_type(s, &v10) == RDB_TYPE_STRING);
    const char *ints[] = {"1", "2"}, *strs[] = {"a", "b"};
    struct kv *is = make_set(ints, 2), *ls = make_set(strs, 2);
    CHECK(rdb_value_type(is, &v10) == RDB_TYPE_SET_INTSET);
    CHECK(rdb_value_type(ls, &v10) == RDB_TYPE_SET);
    CHECK(rdb_value_type(ls, &v11) == RDB_TYPE_SET_LISTPACK);
    CHECK(rdb_value_type(ls, &v12) == RDB_TYPE_SET_LISTPACK);
    struct kv *l = make_list(strs, 2);
    CHECK(rdb_value_type(l, &v10) == RDB_TYPE_LIST_QUICKLIST_2);
    struct kv *z = zs_entry_new("k", 1, 1, 1);
    zadd(z, 1, "a", 1);
    CHECK(rdb_value_type(z, &v10) == RDB_TYPE_ZSET_LISTPACK);
    /* DEBUG OBJECT's serializedlength is the body at the newest version,
     * as redis-server reports it (13 for ZADD z 1 a). */
    struct kv *all[] = {s, is, ls, l, z};
    for (int i = 0; i < 5; i++) {
        for (int comp = 0; comp < 2; comp++) {
            int t;
            struct hk_buf body = save_body(all[i], RDB_VERSION_MAX, comp, &t);
            CHECK_EQ_LL(rdb_value_len_compress(all[i], comp), body.len);
            hk_free(body.p);
        }
    }
    CHECK_EQ_LL(rdb_value_len(l), 16);
    CHECK_EQ_LL(rdb_value_len(z), 13);
    CHECK_EQ_LL(rdb_value_len(ls), 14);
    kv_free(s);
    kv_free(is);
    kv_free(ls);
    kv_free(l);
    kv_free(z);
}

/* ---- bodies as redis-server writes them ---- */

static void check_body(const struct kv *e, int version, int want_type, const char *bytes, size_t n) {
    int t;
    struct hk_buf b = save_body(e, version, 1, &t);
    CHECK_EQ_LL(t, want_type);
    CHECK_EQ_LL(b.len, n);
    if (b.len == n && memcmp(b.p, bytes, n) != 0) {
        fprintf(stderr, "%s: body differs:", test_cur_name);
        for (size_t i = 0; i < b.len; i++) fprintf(stderr, " %02x", (unsigned char)b.p[i]);
        fprintf(stderr, "\n");
        test_cur_failed = 1;
    }
    hk_free(b.p);
}

static void test_exact_bodies(void) {
    const char *abc[] = {"a", "b", "c"};
    struct kv *l = make_list(abc, 3);
    /* One packed node: a 16-byte listpack of three 1-byte strings. */
    check_body(l, 10, 18,
               "\x01\x02\x10"
               "\x10\x00\x00\x00\x03\x00\x81\x61\x02\x81\x62\x02\x81\x63\x02\xff",
               19);
    kv_free(l);
    const char *nums[] = {"1", "-1000", "100000"};
    l = make_list(nums, 3);
    /* 7-bit, 13-bit and 24-bit integers. */
    check_body(l, 10, 18,
               "\x01\x02\x11"
               "\x11\x00\x00\x00\x03\x00\x01\x01\xdc\x18\x02\xf2\xa0\x86\x01\x04\xff",
               20);
    kv_free(l);
    const char *i123[] = {"1", "2", "3"};
    struct kv *s = make_set(i123, 3);
    check_body(s, 10, 11, "\x0e\x02\x00\x00\x00\x03\x00\x00\x00\x01\x00\x02\x00\x03\x00", 15);
    kv_free(s);
    const char *ab[] = {"a", "b"};
    s = make_set(ab, 2);
    check_body(s, 10, 2, "\x02\x01\x61\x01\x62", 5);
    check_body(s, 11, 20, "\x0d\x0d\x00\x00\x00\x02\x00\x81\x61\x02\x81\x62\x02\xff", 14);
    kv_free(s);
    struct kv *z = zs_entry_new("k", 1, 2, 1);
    zadd(z, 1, "a", 1);
    zadd(z, 1.5, "b", 1);
    check_body(z, 10, 17, "\x14\x14\x00\x00\x00\x04\x00\x81\x61\x02\x01\x01\x81\x62\x02\x83\x31\x2e\x35\x04\xff", 21);
    kv_free(z);
    struct kv *str = kv_new_str("k", 1, "hello", 5, -1);
    check_body(str, 10, 0, "\x05hello", 6);
    kv_free(str);
    str = kv_new_str("k", 1, "-7", 2, -1);
    check_body(str, 10, 0, "\xc0\xf9", 2);
    kv_free(str);
}

/* ---- round trips ---- */

static void test_strings_round_trip(void) {
    static const char *vals[] = {"",
                                 "0",
                                 "-1",
                                 "12345678901234567890",
                                 "hello world",
                                 "a string longer than the forty-four bytes an embstr holds"};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        struct kv *e = kv_new_str("k", 1, vals[i], strlen(vals[i]), -1);
        int t;
        struct kv *l = round_trip(e, RDB_VERSION_BASE, 1, &t);
        CHECK_EQ_LL(t, RDB_TYPE_STRING);
        if (l) {
            CHECK_EQ_LL(kv_enc(l), kv_enc(e));
            kv_free(l);
        }
        kv_free(e);
    }
    /* A megabyte, compressible and not. */
    size_t n = 1 << 20;
    char *s = hk_malloc(n);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++) s[i] = pass ? (char)rnd() : (char)('a' + (i / 100) % 26);
        struct kv *e = kv_new_str("k", 1, s, n, -1);
        int t;
        struct hk_buf b = save_body(e, RDB_VERSION_BASE, 1, &t);
        if (!pass) CHECK(b.len < n / 10);
        hk_free(b.p);
        struct kv *l = round_trip(e, RDB_VERSION_BASE, 1, &t);
        if (l) kv_free(l);
        kv_free(e);
    }
    hk_free(s);
    /* The expiry given to the loader is the entry's. */
    struct rdb_in in;
    rdb_in_mem(&in, "\x02hi", 3, RDB_VERSION_BASE);
    struct kv *e = rdb_load_value(&in, RDB_TYPE_STRING, "key", 3, 123456789);
    CHECK(e && kv_expire(e) == 123456789 && kv_keylen(e) == 3 && memcmp(kv_key(e), "key", 3) == 0);
    if (e) kv_free(e);
}

static void test_lists_round_trip(void) {
    atomic_store(&type_limits.list_max_listpack_size, -2);
    atomic_store(&type_limits.list_compress_depth, 0);
    const char *small[] = {"a", "1", "-200", "70000", "5000000000", "x y z", ""};
    struct kv *e = make_list(small, 7);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    int t;
    struct kv *l = round_trip(e, RDB_VERSION_BASE, 1, &t);
    if (l) {
        CHECK_EQ_LL(kv_enc(l), ENC_LISTPACK);
        kv_free(l);
    }
    kv_free(e);
    /* A big quicklist with compressed interior nodes and plain nodes. */
    atomic_store(&type_limits.list_compress_depth, 1);
    e = listv_new_entry("k", 1);
    char buf[64];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(buf, sizeof(buf), i % 3 ? "element-%d" : "%d", i);
        list_push(e, buf, (size_t)n);
    }
    size_t bign = 20000;
    char *big = hk_malloc(bign);
    memset(big, 'q', bign);
    list_push(e, big, bign);
    list_push(e, "tail", 4);
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    for (int comp = 0; comp < 2; comp++) {
        l = round_trip(e, RDB_VERSION_BASE, comp, &t);
        if (l) {
            CHECK_EQ_LL(kv_enc(l), ENC_QUICKLIST);
            CHECK_EQ_LL(listv_len_of(l), 20002);
            kv_free(l);
        }
    }
    kv_free(e);
    hk_free(big);
    atomic_store(&type_limits.list_compress_depth, 0);
    /* A list saved as a quicklist loads as a listpack once the limit
     * allows one node, and the other way round. */
    atomic_store(&type_limits.list_max_listpack_size, 4);
    const char *six[] = {"1", "2", "3", "4", "5", "6"};
    e = make_list(six, 6);
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    struct hk_buf b = save_body(e, RDB_VERSION_BASE, 0, &t);
    atomic_store(&type_limits.list_max_listpack_size, -2);
    l = load_body(b.p, b.len, t, NULL, 0);
    CHECK(l && kv_enc(l) == ENC_LISTPACK && same_value(l, e));
    if (l) kv_free(l);
    hk_free(b.p);
    kv_free(e);
    e = make_list(six, 6);
    b = save_body(e, RDB_VERSION_BASE, 0, &t);
    atomic_store(&type_limits.list_max_listpack_size, 2);
    l = load_body(b.p, b.len, t, NULL, 0);
    CHECK(l && kv_enc(l) == ENC_QUICKLIST && same_value(l, e));
    if (l) kv_free(l);
    hk_free(b.p);
    kv_free(e);
    atomic_store(&type_limits.list_max_listpack_size, -2);
}

static void test_sets_round_trip(void) {
    char buf[64];
    for (int version = RDB_VERSION_BASE; version <= RDB_VERSION_MAX; version++) {
        /* intset, listpack, hash table; integers and strings. */
        for (int kind = 0; kind < 4; kind++) {
            int count = kind == 0 ? 100 : kind == 1 ? 50 : kind == 2 ? 5000 : 1000;
            struct setv o = setv_new(ENC_INTSET);
            for (int i = 0; i < count; i++) {
                int n = kind == 0 || kind == 3 ? snprintf(buf, sizeof(buf), "%d", i * 7919 - 300000)
                                               : snprintf(buf, sizeof(buf), "m%d", i);
                setv_add(&o, buf, (size_t)n, NULL);
            }
            struct kv *e = setv_entry("k", 1, &o);
            int want = kind == 0 ? ENC_INTSET : kind == 1 ? ENC_LISTPACK : ENC_HT;
            CHECK_EQ_LL(kv_enc(e), want);
            int t;
            struct kv *l = round_trip(e, version, 1, &t);
            if (l) {
                CHECK_EQ_LL(kv_enc(l), want);
                kv_free(l);
            }
            kv_free(e);
        }
    }
}

static void test_zsets_round_trip(void) {
    char buf[64];
    for (int kind = 0; kind < 2; kind++) {
        int count = kind ? 3000 : 100;
        struct kv *e = zs_entry_new("k", 1, (unsigned long)count, 10);
        for (int i = 0; i < count; i++) {
            int n = snprintf(buf, sizeof(buf), "m%d", i);
            double sc = i % 5 == 0 ? i : i % 5 == 1 ? -i / 3.0 : i % 5 == 2 ? 1e300 * i : (i % 5 == 3 ? 0.1 * i : -0.0);
            if (i == 7) sc = INFINITY;
            if (i == 8) sc = -INFINITY;
            zadd(e, sc, buf, (size_t)n);
        }
        CHECK_EQ_LL(kv_enc(e), kind ? ENC_SKIPLIST : ENC_LISTPACK);
        int t;
        struct kv *l = round_trip(e, RDB_VERSION_BASE, 1, &t);
        CHECK_EQ_LL(t, kind ? RDB_TYPE_ZSET_2 : RDB_TYPE_ZSET_LISTPACK);
        if (l) {
            CHECK_EQ_LL(kv_enc(l), kind ? ENC_SKIPLIST : ENC_LISTPACK);
            CHECK_EQ_LL(zs_len(l), count);
            kv_free(l);
        }
        kv_free(e);
    }
    /* A skiplist small enough for a listpack loads as one. */
    struct kv *e = zs_entry_new("k", 1, 1000, 1000);
    zadd(e, 2, "b", 1);
    zadd(e, 1, "a", 1);
    CHECK_EQ_LL(kv_enc(e), ENC_SKIPLIST);
    int t;
    struct kv *l = round_trip(e, RDB_VERSION_BASE, 0, &t);
    CHECK(l && kv_enc(l) == ENC_LISTPACK);
    if (l) kv_free(l);
    kv_free(e);
}

/* ---- legacy encodings ---- */

static void test_legacy_lists(void) {
    char err[160];
    /* RDB_TYPE_LIST: count and strings. */
    struct hk_buf b = {0};
    put_u8(&b, 3);
    put_rdb_string(&b, "a", 1);
    put_bytes(&b, "\xc0\x05", 2);
    put_rdb_string(&b, "ccc", 3);
    struct kv *e = load_body(b.p, b.len, RDB_TYPE_LIST, err, sizeof(err));
    const char *want[] = {"a", "5", "ccc"};
    struct kv *ref = make_list(want, 3);
    CHECK(e && same_value(e, ref) && kv_enc(e) == ENC_LISTPACK);
    if (e) kv_free(e);
    hk_free(b.p);
    /* RDB_TYPE_LIST_ZIPLIST, with every integer width and a string long
     * enough for the next entry's 5-byte previous length. */
    struct zlb z;
    zl_init(&z);
    char big[300];
    memset(big, 'z', sizeof(big));
    zl_str(&z, "a", 1);
    zl_int(&z, 5);
    zl_int(&z, -100);
    zl_int(&z, 1000);
    zl_int(&z, 100000);
    zl_int(&z, 10000000);
    zl_int(&z, 5000000000LL);
    zl_str(&z, big, sizeof(big));
    zl_str(&z, big, 100);
    zl_int(&z, 12);
    zl_finish(&z);
    b = (struct hk_buf){0};
    put_rdb_string(&b, z.b.p, z.b.len);
    e = load_body(b.p, b.len, RDB_TYPE_LIST_ZIPLIST, err, sizeof(err));
    CHECK(e != NULL);
    struct kv *ref2 = listv_new_entry("k", 1);
    list_push(ref2, "a", 1);
    list_push(ref2, "5", 1);
    list_push(ref2, "-100", 4);
    list_push(ref2, "1000", 4);
    list_push(ref2, "100000", 6);
    list_push(ref2, "10000000", 8);
    list_push(ref2, "5000000000", 10);
    list_push(ref2, big, sizeof(big));
    list_push(ref2, big, 100);
    list_push(ref2, "12", 2);
    if (e) {
        CHECK(same_value(e, ref2));
        kv_free(e);
    }
    /* RDB_TYPE_LIST_QUICKLIST: nodes that are ziplists (an empty one is
     * skipped). */
    struct zlb empty;
    zl_init(&empty);
    zl_finish(&empty);
    struct hk_buf q = {0};
    put_u8(&q, 3);
    put_rdb_string(&q, z.b.p, z.b.len);
    put_rdb_string(&q, empty.b.p, empty.b.len);
    put_rdb_string(&q, z.b.p, z.b.len);
    e = load_body(q.p, q.len, RDB_TYPE_LIST_QUICKLIST, err, sizeof(err));
    CHECK(e && listv_len_of(e) == 20);
    if (e) kv_free(e);
    /* A quicklist of only empty nodes is an empty list: an error. */
    q.len = 0;
    put_u8(&q, 1);
    put_rdb_string(&q, empty.b.p, empty.b.len);
    CHECK(load_body(q.p, q.len, RDB_TYPE_LIST_QUICKLIST, err, sizeof(err)) == NULL);
    /* Empty values are told apart (a file skips them), the cursor past them. */
    static const struct {
        const char *body;
        size_t n;
        int type, empty;
    } empties[] = {
        {"\x00", 1, RDB_TYPE_LIST, 1},
        {"\x00", 1, RDB_TYPE_SET, 1},
        {"\x00", 1, RDB_TYPE_ZSET_2, 1},
        {"\x08\x02\x00\x00\x00\x00\x00\x00\x00", 9, RDB_TYPE_SET_INTSET, 1},
        {"\x07\x07\x00\x00\x00\x00\x00\xff", 8, RDB_TYPE_ZSET_LISTPACK, 1},
        {"\x01\x01x", 3, RDB_TYPE_ZSET_2, 0},
    };
    for (size_t i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
        struct rdb_in in;
        rdb_in_mem(&in, empties[i].body, empties[i].n, RDB_VERSION_MAX);
        CHECK(rdb_load_value(&in, empties[i].type, "k", 1, -1) == NULL);
        CHECK_EQ_LL(in.empty, empties[i].empty);
        if (empties[i].empty) CHECK_EQ_LL(in.pos, empties[i].n);
    }
    /* QUICKLIST_2 with a plain node and an unknown container. */
    q.len = 0;
    put_bytes(&q,
              "\x02\x01\x05hello\x01\x03"
              "abc",
              13);
    e = load_body(q.p, q.len, RDB_TYPE_LIST_QUICKLIST_2, err, sizeof(err));
    const char *hw[] = {"hello", "abc"};
    struct kv *ref3 = make_list(hw, 2);
    CHECK(e && same_value(e, ref3));
    if (e) kv_free(e);
    q.len = 0;
    put_bytes(&q, "\x01\x03\x05hello", 8);
    CHECK(load_body(q.p, q.len, RDB_TYPE_LIST_QUICKLIST_2, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "container") != NULL);
    /* A ziplist whose tail offset or count is wrong. */
    for (int which = 0; which < 3; which++) {
        struct hk_buf c = {0};
        put_bytes(&c, z.b.p, z.b.len);
        if (which == 0)
            c.p[4]++;
        else if (which == 1)
            c.p[8]++;
        else
            c.p[0]++;
        b.len = 0;
        put_rdb_string(&b, c.p, c.len);
        CHECK(load_body(b.p, b.len, RDB_TYPE_LIST_ZIPLIST, err, sizeof(err)) == NULL);
        hk_free(c.p);
    }
    hk_free(b.p);
    hk_free(q.p);
    hk_free(z.b.p);
    hk_free(empty.b.p);
    kv_free(ref);
    kv_free(ref2);
    kv_free(ref3);
}

static void test_legacy_sets(void) {
    char err[160];
    /* Plain sets: integers become an intset, small strings a listpack,
     * a long member a hash table; a duplicate is refused. */
    static const struct {
        const char *body;
        size_t n;
        int enc;
    } cases[] = {
        {"\x03\xc0\x01\xc1\x00\x01\x02-5", 9, ENC_INTSET},
        {"\x03\xc0\x01\x01x\x02yy", 8, ENC_LISTPACK},
        {"\x02\x01x\x01x", 5, -1},
        {"\x02\xc0\x07\x01\x38", 5, ENC_INTSET},
        {"\x02\xc0\x07\xc0\x07", 5, -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct kv *e = load_body(cases[i].body, cases[i].n, RDB_TYPE_SET, err, sizeof(err));
        if (cases[i].enc < 0) {
            CHECK(e == NULL && strstr(err, "Duplicate"));
        } else {
            CHECK(e && kv_enc(e) == cases[i].enc);
        }
        if (e) kv_free(e);
    }
    /* "7" and 7 are the same member. */
    CHECK(load_body("\x02\x01\x37\xc0\x07", 5, RDB_TYPE_SET, err, sizeof(err)) == NULL);
    struct hk_buf b = {0};
    put_u8(&b, 2);
    put_u8(&b, 0x41);
    put_u8(&b, 0x00);
    for (int i = 0; i < 256; i++) put_u8(&b, 'v');
    put_rdb_string(&b, "w", 1);
    struct kv *e = load_body(b.p, b.len, RDB_TYPE_SET, err, sizeof(err));
    CHECK(e && kv_enc(e) == ENC_HT);
    if (e) kv_free(e);
    /* Intset blobs of every width; one past set-max-intset-entries is a
     * hash table. */
    for (int w = 2; w <= 8; w *= 2) {
        b.len = 0;
        struct hk_buf blob = {0};
        put_le(&blob, (uint64_t)w, 4);
        put_le(&blob, 3, 4);
        long long v[3] = {-3, 0, w == 2 ? 300 : w == 4 ? 100000 : 10000000000LL};
        for (int i = 0; i < 3; i++) put_le(&blob, (uint64_t)v[i], w);
        put_rdb_string(&b, blob.p, blob.len);
        e = load_body(b.p, b.len, RDB_TYPE_SET_INTSET, err, sizeof(err));
        CHECK(e && kv_enc(e) == ENC_INTSET);
        if (e) {
            struct setv o = setv_of(e);
            CHECK(setv_size(&o) == 3 && setv_has(&o, "-3", 2) && setv_has(&o, "0", 1));
            kv_free(e);
        }
        atomic_store(&type_limits.set_max_intset_entries, 2);
        e = load_body(b.p, b.len, RDB_TYPE_SET_INTSET, err, sizeof(err));
        CHECK(e && kv_enc(e) == ENC_HT);
        if (e) kv_free(e);
        atomic_store(&type_limits.set_max_intset_entries, 512);
        /* Out of order, a bad width, a size that does not match. */
        for (int bad = 0; bad < 3; bad++) {
            struct hk_buf c = {0};
            put_bytes(&c, blob.p, blob.len);
            if (bad == 0)
                memcpy(c.p + 8, blob.p + 8 + w, (size_t)w);
            else if (bad == 1)
                c.p[0] = 3;
            else
                c.p[4] = 4;
            b.len = 0;
            put_rdb_string(&b, c.p, c.len);
            CHECK(load_body(b.p, b.len, RDB_TYPE_SET_INTSET, err, sizeof(err)) == NULL);
            hk_free(c.p);
        }
        hk_free(blob.p);
    }
    /* A set listpack with a duplicate member. */
    struct rdb_lpw w;
    rdb_lpw_init(&w);
    rdb_lpw_add(&w, "a", 1);
    rdb_lpw_add(&w, "1", 1);
    rdb_lpw_add_int(&w, 1);
    rdb_lpw_finish(&w);
    b.len = 0;
    put_rdb_string(&b, w.b.p, w.b.len);
    CHECK(load_body(b.p, b.len, RDB_TYPE_SET_LISTPACK, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "duplicate") != NULL);
    hk_free(w.b.p);
    hk_free(b.p);
}

static void test_legacy_zsets(void) {
    char err[160];
    /* RDB_TYPE_ZSET: text scores, including the special lengths. */
    struct hk_buf b = {0};
    put_u8(&b, 3);
    put_rdb_string(&b, "a", 1);
    put_bytes(&b,
              "\x03"
              "2.5",
              4);
    put_rdb_string(&b, "b", 1);
    put_u8(&b, 254);
    put_rdb_string(&b, "c", 1);
    put_u8(&b, 255);
    struct kv *e = load_body(b.p, b.len, RDB_TYPE_ZSET, err, sizeof(err));
    CHECK(e && kv_enc(e) == ENC_LISTPACK && zs_len(e) == 3);
    double sc;
    if (e) {
        CHECK(zs_score(e, "a", 1, &sc) && sc == 2.5);
        CHECK(zs_score(e, "b", 1, &sc) && isinf(sc) && sc > 0);
        CHECK(zs_rank(e, "c", 1, 0, NULL) == 0);
        kv_free(e);
    }
    /* A NaN score and a duplicate member are refused. */
    b.len = 0;
    put_bytes(&b, "\x01\x01x\xfd", 4);
    CHECK(load_body(b.p, b.len, RDB_TYPE_ZSET, err, sizeof(err)) == NULL && strstr(err, "NAN"));
    b.len = 0;
    put_bytes(&b,
              "\x02\x01x\x01"
              "1\x01x\x01"
              "2",
              9);
    CHECK(load_body(b.p, b.len, RDB_TYPE_ZSET, err, sizeof(err)) == NULL && strstr(err, "Duplicate"));
    /* RDB_TYPE_ZSET_ZIPLIST: pairs out of order are sorted. */
    struct zlb z;
    zl_init(&z);
    zl_str(&z, "late", 4);
    zl_int(&z, 10);
    zl_str(&z, "early", 5);
    zl_str(&z, "-1.25", 5);
    zl_str(&z, "mid", 3);
    zl_int(&z, 3);
    zl_finish(&z);
    b.len = 0;
    put_rdb_string(&b, z.b.p, z.b.len);
    e = load_body(b.p, b.len, RDB_TYPE_ZSET_ZIPLIST, err, sizeof(err));
    CHECK(e && zs_len(e) == 3);
    if (e) {
        CHECK(zs_rank(e, "early", 5, 0, &sc) == 0 && sc == -1.25);
        CHECK(zs_rank(e, "late", 4, 0, &sc) == 2 && sc == 10);
        kv_free(e);
    }
    /* More pairs than zset-max-listpack-entries: a skiplist. */
    atomic_store(&type_limits.zset_max_listpack_entries, 2);
    e = load_body(b.p, b.len, RDB_TYPE_ZSET_ZIPLIST, err, sizeof(err));
    CHECK(e && kv_enc(e) == ENC_SKIPLIST);
    if (e) kv_free(e);
    atomic_store(&type_limits.zset_max_listpack_entries, 128);
    /* Odd element count, duplicates, a score that is no number. */
    struct zlb bad;
    for (int which = 0; which < 3; which++) {
        zl_init(&bad);
        zl_str(&bad, "a", 1);
        if (which == 0) {
            zl_int(&bad, 1);
            zl_str(&bad, "b", 1);
        } else if (which == 1) {
            zl_int(&bad, 1);
            zl_str(&bad, "a", 1);
            zl_int(&bad, 2);
        } else {
            zl_str(&bad, "x1", 2);
        }
        zl_finish(&bad);
        b.len = 0;
        put_rdb_string(&b, bad.b.p, bad.b.len);
        CHECK(load_body(b.p, b.len, RDB_TYPE_ZSET_ZIPLIST, err, sizeof(err)) == NULL);
        hk_free(bad.b.p);
    }
    hk_free(z.b.p);
    hk_free(b.p);
}

/* ---- corrupt input ---- */

/* Load body (type t) cut and changed in every way listed; whatever loads
 * must save and load again to the same value. */
static void fuzz_body(const char *body, size_t n, int t, int flips) {
    char err[160];
    for (size_t cut = 0; cut < n; cut++) {
        struct rdb_in in;
        rdb_in_mem(&in, body, cut, RDB_VERSION_MAX);
        struct kv *e = rdb_load_value(&in, t, "k", 1, -1);
        CHECK(e == NULL && in.err[0]);
        if (e) kv_free(e);
    }
    char *c = hk_malloc(n);
    int loaded = 0;
    for (int i = 0; i < flips; i++) {
        memcpy(c, body, n);
        int k = 1 + (int)(rnd() % 3);
        for (int j = 0; j < k; j++) {
            size_t at = (size_t)(rnd() % n);
            c[at] = rnd() % 4 == 0 ? (char)(c[at] ^ (1 << (rnd() % 8))) : (char)rnd();
        }
        struct rdb_in in;
        rdb_in_mem(&in, c, n, RDB_VERSION_MAX);
        in.deep = (int)(i & 1);
        struct kv *e = rdb_load_value(&in, t, "k", 1, -1);
        if (!e) {
            CHECK(in.err[0] != '\0');
            continue;
        }
        loaded++;
        int t2;
        struct hk_buf b = save_body(e, RDB_VERSION_MAX, 1, &t2);
        struct kv *again = load_body(b.p, b.len, t2, err, sizeof(err));
        CHECK(again && same_value(e, again));
        if (again) kv_free(again);
        hk_free(b.p);
        kv_free(e);
    }
    (void)loaded;
    hk_free(c);
}

static void test_corrupt_payloads(void) {
    atomic_store(&type_limits.list_max_listpack_size, -2);
    char buf[64];
    struct kv *vals[10];
    int nv = 0;
    const char *items[] = {"alpha", "1", "-300", "123456", "9999999999", "beta", "", "gamma"};
    vals[nv++] = make_list(items, 8);
    vals[nv++] = make_set(items, 8);
    const char *ints[] = {"1", "-300", "123456", "9999999999"};
    vals[nv++] = make_set(ints, 4);
    struct kv *z = zs_entry_new("k", 1, 8, 10);
    for (int i = 0; i < 8; i++) zadd(z, i * 1.5 - 3, items[i], strlen(items[i]));
    vals[nv++] = z;
    z = zs_entry_new("k", 1, 1000, 1000);
    for (int i = 0; i < 6; i++) zadd(z, i % 2 ? i : -i / 7.0, items[i], strlen(items[i]));
    vals[nv++] = z;
    struct setv o = setv_new(ENC_HT);
    for (int i = 0; i < 6; i++) {
        int n = snprintf(buf, sizeof(buf), "member:%d", i);
        setv_add(&o, buf, (size_t)n, NULL);
    }
    vals[nv++] = setv_entry("k", 1, &o);
    vals[nv++] = kv_new_str("k", 1, "some string value that is long enough to compress compress compress", 68, -1);
    for (int i = 0; i < nv; i++) {
        for (int version = 10; version <= 12; version += 2) {
            int t;
            struct hk_buf b = save_body(vals[i], version, 1, &t);
            fuzz_body(b.p, b.len, t, 1500);
            hk_free(b.p);
        }
    }
    /* Legacy payloads too. */
    struct zlb zl;
    zl_init(&zl);
    for (int i = 0; i < 6; i++) {
        zl_str(&zl, items[i], strlen(items[i]));
        zl_int(&zl, i * 1000 - 2);
    }
    zl_finish(&zl);
    struct hk_buf b = {0};
    put_rdb_string(&b, zl.b.p, zl.b.len);
    fuzz_body(b.p, b.len, RDB_TYPE_LIST_ZIPLIST, 2000);
    fuzz_body(b.p, b.len, RDB_TYPE_ZSET_ZIPLIST, 2000);
    b.len = 0;
    put_u8(&b, 2);
    put_rdb_string(&b, zl.b.p, zl.b.len);
    put_rdb_string(&b, zl.b.p, zl.b.len);
    fuzz_body(b.p, b.len, RDB_TYPE_LIST_QUICKLIST, 2000);
    hk_free(b.p);
    hk_free(zl.b.p);
    for (int i = 0; i < nv; i++) kv_free(vals[i]);
}

int main(void) {
    TEST_RUN(test_string_encodings);
    TEST_RUN(test_lzf_strings);
    TEST_RUN(test_lengths_and_numbers);
    TEST_RUN(test_huge_lengths);
    TEST_RUN(test_refill_window);
    TEST_RUN(test_module_ids);
    TEST_RUN(test_value_types);
    TEST_RUN(test_exact_bodies);
    TEST_RUN(test_strings_round_trip);
    TEST_RUN(test_lists_round_trip);
    TEST_RUN(test_sets_round_trip);
    TEST_RUN(test_zsets_round_trip);
    TEST_RUN(test_legacy_lists);
    TEST_RUN(test_legacy_sets);
    TEST_RUN(test_legacy_zsets);
    TEST_RUN(test_corrupt_payloads);
    return TEST_REPORT();
}
