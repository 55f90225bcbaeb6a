/* test_rdb_types.c - unit tests of the RDB codecs of hashes, streams and
 * vector sets (src/types/rdb_hash.c, rdb_stream.c, rdb_vset.c): exact
 * bytes for small values laid out by hand from Redis's formats; round
 * trips of every encoding written (plain and field-TTL hashes, streams
 * over many nodes with deletions, groups, consumers and pending entries,
 * at RDB versions 10 and 12, vector sets of each quantization with
 * attributes and with REDUCE); payloads built by hand in the legacy
 * layouts (zipmap, ziplist hash, pre-GA field-TTL hashes, version 1
 * streams) and real Redis payloads (its corrupt-dump and vector set test
 * suites, with their injected fault undone); what Redis refuses refused
 * here; and robustness: every truncation and thousands of random byte
 * flips of saved values load or fail cleanly, and whatever loads is a
 * value the rest of HotKV can use. */
#include "core/alloc.h"
#include "core/buf.h"
#include "core/hnsw.h"
#include "core/util.h"
#include "test.h"
#include "types/hash.h"
#include "types/kv.h"
#include "types/rdb.h"
#include "types/stream.h"
#include "types/types.h"
#include "types/vset.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- saving and loading one value ---- */

/* e's body as written at `version` into b (reset first); its type byte
 * in *type. */
static void save_body(const struct kv *e, int version, int compress, struct hk_buf *b, int *type) {
    b->len = 0;
    struct rdb_out o = {b, version, compress};
    *type = rdb_value_type(e, &o);
    CHECK(rdb_save_value(e, &o) == 0);
}

/* A value read back from p/len; NULL with the reason in err (when given).
 * With `whole`, a value that leaves bytes unread is refused too. */
static struct kv *load_body(const void *p, size_t len, int type, int version, int deep, int whole, char *err,
                            size_t errsz) {
    struct rdb_in in;
    rdb_in_mem(&in, p, len, version);
    in.deep = deep;
    struct kv *e = rdb_load_value(&in, type, "key", 3, -1);
    if (e && whole && in.pos != len) {
        kv_free(e);
        e = NULL;
        snprintf(in.err, sizeof(in.err), "%zu bytes left unread", len - in.pos);
    }
    if (!e && err) snprintf(err, errsz, "%s", in.err);
    return e;
}

static struct kv *must_load(const struct hk_buf *b, int type, int version) {
    char err[200];
    struct kv *e = load_body(b->p, b->len, type, version, 1, 1, err, sizeof(err));
    if (!e) fprintf(stderr, "load failed: %s\n", err);
    CHECK(e != NULL);
    return e;
}

static int refused(const void *p, size_t len, int type, int version) {
    char err[200];
    struct kv *e = load_body(p, len, type, version, 1, 0, err, sizeof(err));
    if (e) {
        kv_free(e);
        return 0;
    }
    CHECK(err[0] != '\0');
    return 1;
}

/* Bytes from a "\x.." string literal of known length. */
#define BYTES(s) (const unsigned char *)(s), sizeof(s) - 1

/* A Redis DUMP payload: the type byte, the body, 2 version bytes and an
 * 8-byte checksum; the body is what the loaders read. */
static struct kv *load_dump(const unsigned char *p, size_t len, char *err, size_t errsz) {
    return load_body(p + 1, len - 11, p[0], 12, 1, 1, err, errsz);
}

/* ---- using what was loaded ---- */

struct walk_ctx {
    size_t n, bytes;
};

static void walk_pair(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    struct walk_ctx *w = ctx;
    w->n++;
    w->bytes += fl + vl + (size_t)(f && v);
}

/* Use a loaded value the way commands would: walk it, digest it, copy
 * it, save it again. Anything a loader let through that breaks the
 * value's invariants shows up here (under ASan, as a crash). */
static void exercise(struct kv *e) {
    unsigned char dg[20] = {0};
    kv_digest_value(e, dg);
    struct kv *d = kv_dup(e, "copy", 4, -1);
    kv_free(d);
    if (kv_type(e) == OBJ_HASH) {
        struct walk_ctx w = {0, 0};
        hashv_each(e, walk_pair, &w);
        CHECK_EQ_LL(w.n, hashv_len(e));
    } else if (kv_type(e) == OBJ_STREAM) {
        struct stream *s = stream_of(e);
        for (size_t i = 0; i < stream_node_count(s); i++) {
            size_t len;
            const unsigned char *img = stream_node_image(s, i, &len);
            CHECK(stream_node_validate(img, len));
        }
        struct stream_iter it;
        streamid id;
        long long nf;
        uint64_t n = 0;
        stream_iter_start(&it, s, NULL, NULL, 0);
        while (stream_iter_next(&it, &id, &nf)) {
            for (long long i = 0; i < nf; i++) {
                const char *f, *v;
                size_t fl, vl;
                stream_iter_field(&it, &f, &fl, &v, &vl);
            }
            n++;
        }
        stream_iter_stop(&it);
        CHECK_EQ_LL(n, s->length);
    } else if (kv_type(e) == OBJ_VSET) {
        struct vset *vs = vset_of(e);
        float *q = hk_calloc(vs->in_dim, sizeof(float));
        float *pq = hk_calloc(vs->dim, sizeof(float));
        q[0] = 1;
        vset_project(vs, q, pq);
        struct hnsw_hit hits[5];
        hnsw_search(vs->g, vset_searcher(), pq, 5, 50, NULL, NULL, 0, hits);
        hk_free(q);
        hk_free(pq);
    }
    struct hk_buf b = {0};
    int type;
    save_body(e, 12, 1, &b, &type);
    hk_free(b.p);
}

/* Every truncation of a saved body is refused; random byte flips load
 * or fail, and what loads is usable. */
static void hammer(const struct hk_buf *b, int type, int version, int flips) {
    for (size_t n = 0; n < b->len; n++) {
        char *t = hk_malloc(n + 1);
        memcpy(t, b->p, n);
        struct kv *e = load_body(t, n, type, version, 1, 0, NULL, 0);
        if (e) {
            fprintf(stderr, "a %zu-byte truncation of %zu loaded (type %d)\n", n, b->len, type);
            CHECK(e == NULL);
            kv_free(e);
        }
        hk_free(t);
    }
    unsigned char *m = hk_malloc(b->len);
    for (int i = 0; i < flips; i++) {
        memcpy(m, b->p, b->len);
        int k = 1 + (int)(rnd() % 3);
        for (int j = 0; j < k; j++) {
            size_t at = rnd() % b->len;
            if (rnd() & 1) m[at] ^= (unsigned char)(1u << (rnd() % 8));
            else m[at] = (unsigned char)rnd();
        }
        struct kv *e = load_body(m, b->len, type, version, (int)(rnd() & 1), 0, NULL, 0);
        if (e) {
            exercise(e);
            kv_free(e);
        }
    }
    hk_free(m);
}

/* ---- hashes ---- */

static void set_hash_limits(long long entries, long long value) {
    atomic_store(&type_limits.hash_max_listpack_entries, entries);
    atomic_store(&type_limits.hash_max_listpack_value, value);
}

static void hset(struct kv *e, const char *f, const char *v) { hashv_set(e, f, strlen(f), v, strlen(v)); }

/* A hash of n fields "f<i>" with values of vlen bytes (digits when 0). */
static struct kv *mkhash(int n, size_t vlen) {
    struct kv *e = hashv_new("key", 3, -1);
    char f[32], v[512];
    for (int i = 0; i < n; i++) {
        snprintf(f, sizeof(f), "f%d", i);
        if (vlen) {
            memset(v, 'a' + i % 26, vlen);
            v[vlen] = '\0';
        } else {
            snprintf(v, sizeof(v), "%d", i * 7 - 50);
        }
        hset(e, f, v);
    }
    return e;
}

struct lines {
    char **a;
    size_t n, cap;
    const struct kv *e;
};

static void add_line(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    struct lines *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->a = hk_realloc(l->a, l->cap * sizeof(char *));
    }
    char *s = hk_malloc(fl + vl + 32);
    long long t = hashv_ttl(l->e, f, fl);
    snprintf(s, fl + vl + 32, "%.*s=%.*s@%lld", (int)fl, f, (int)vl, v, t);
    l->a[l->n++] = s;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Fields, values and deadlines as sorted text, for comparing hashes. */
static char *hash_text(const struct kv *e) {
    struct lines l = {NULL, 0, 0, e};
    hashv_each(e, add_line, &l);
    qsort(l.a, l.n, sizeof(char *), cmp_str);
    struct hk_buf b = {0};
    for (size_t i = 0; i < l.n; i++) {
        hk_buf_add(&b, l.a[i], strlen(l.a[i]), 64);
        hk_buf_add(&b, ";", 1, 64);
        hk_free(l.a[i]);
    }
    hk_buf_add(&b, "", 1, 64);
    hk_free(l.a);
    return b.p;
}

static void test_hash_bytes(void) {
    /* HSET h a 1 b hello: a listpack of 22 bytes, integers as integers. */
    struct kv *e = hashv_new("key", 3, -1);
    hset(e, "a", "1");
    hset(e, "b", "hello");
    struct hk_buf b = {0};
    int type;
    save_body(e, 10, 0, &b, &type);
    CHECK_EQ_LL(type, RDB_TYPE_HASH_LISTPACK);
    static const unsigned char want[] = {22,   22,   0, 0, 0, 4, 0, 0x81, 'a', 2,   1,   1,   0x81, 'b', 2, 0x85,
                                         'h', 'e', 'l', 'l', 'o', 6, 0xff};
    CHECK(b.len == sizeof(want) && memcmp(b.p, want, sizeof(want)) == 0);
    /* Above the entry limit: HASH, a length then strings (integers
     * integer-encoded). */
    set_hash_limits(1, 64);
    struct kv *t = hashv_new("key", 3, -1);
    hset(t, "x", "12");
    hset(t, "y", "z");
    save_body(t, 10, 0, &b, &type);
    CHECK_EQ_LL(type, RDB_TYPE_HASH);
    CHECK(b.len == 1 + 2 + 2 + 2 + 2 && (unsigned char)b.p[0] == 2);
    CHECK(memmem(b.p, b.len, "\x01x\xc0\x0c", 4) != NULL);
    CHECK(memmem(b.p, b.len, "\x01y\x01z", 4) != NULL);
    set_hash_limits(128, 64);
    kv_free(t);
    kv_free(e);
    hk_free(b.p);
}

static void test_hash_round_trips(void) {
    struct hk_buf b = {0};
    int sizes[] = {1, 5, 128, 129, 600};
    size_t vlens[] = {0, 10, 64, 65, 300};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(*sizes); si++)
        for (size_t vi = 0; vi < sizeof(vlens) / sizeof(*vlens); vi++)
            for (int version = 10; version <= 12; version += 2)
                for (int compress = 0; compress < 2; compress++) {
                    struct kv *e = mkhash(sizes[si], vlens[vi]);
                    int type;
                    save_body(e, version, compress, &b, &type);
                    CHECK(type == (hashv_packed(e) ? RDB_TYPE_HASH_LISTPACK : RDB_TYPE_HASH));
                    struct kv *l = must_load(&b, type, version);
                    if (l) {
                        char *x = hash_text(e), *y = hash_text(l);
                        CHECK(strcmp(x, y) == 0);
                        CHECK_EQ_LL(kv_enc(l), kv_enc(e));
                        hk_free(x);
                        hk_free(y);
                        kv_free(l);
                    }
                    kv_free(e);
                }
    hk_free(b.p);
}

/* A listpack blob as the elements of rdb_lpw, read back. */
static void blob_vals(const char *p, size_t len, char out[][64], size_t max, size_t *n) {
    struct rdb_in in;
    rdb_in_mem(&in, p, len, 12);
    struct rdb_blob bl;
    char *owned;
    *n = 0;
    if (rdb_get_blob(&in, &bl, RDB_BLOB_LISTPACK, &owned) < 0) return;
    struct lp_val v;
    while (*n < max && rdb_blob_next(&bl, &v)) snprintf(out[(*n)++], 64, "%.*s", (int)v.len, v.s);
    hk_free(owned);
}

static void test_hash_ttl_round_trips(void) {
    struct hk_buf b = {0};
    int type;
    /* A listpack with deadlines: HASH_LISTPACK_EX, the earliest deadline,
     * then the triplets ordered by deadline, the others last. */
    struct kv *e = hashv_new("key", 3, -1);
    hset(e, "x", "1");
    hset(e, "y", "two");
    hset(e, "z", "3");
    hset(e, "w", "4");
    hashv_set_ttl(e, "x", 1, 5000000000000LL);
    hashv_set_ttl(e, "z", 1, 3000000000000LL);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK_EX);
    save_body(e, 12, 0, &b, &type);
    CHECK_EQ_LL(type, RDB_TYPE_HASH_LISTPACK_EX);
    uint64_t min = 0;
    for (int i = 7; i >= 0; i--) min = min << 8 | (unsigned char)b.p[i];
    CHECK_EQ_LL(min, 3000000000000LL);
    char vals[16][64];
    size_t n;
    blob_vals(b.p + 8, b.len - 8, vals, 16, &n);
    CHECK_EQ_LL(n, 12);
    if (n == 12) {
        CHECK(!strcmp(vals[0], "z") && !strcmp(vals[2], "3000000000000"));
        CHECK(!strcmp(vals[3], "x") && !strcmp(vals[5], "5000000000000"));
        CHECK(!strcmp(vals[6], "y") && !strcmp(vals[8], "0"));
        CHECK(!strcmp(vals[9], "w") && !strcmp(vals[11], "0"));
    }
    struct kv *l = must_load(&b, type, 12);
    if (l) {
        char *x = hash_text(e), *y = hash_text(l);
        CHECK(strcmp(x, y) == 0);
        CHECK_EQ_LL(kv_enc(l), ENC_LISTPACK_EX);
        CHECK_EQ_LL(hashv_next_expire(l), 3000000000000LL);
        hk_free(x);
        hk_free(y);
        kv_free(l);
    }
    kv_free(e);

    /* A table with deadlines: HASH_METADATA, deadlines relative to the
     * earliest, plus one (0: none). */
    e = mkhash(300, 3);
    for (int i = 0; i < 300; i += 7) {
        char f[16];
        snprintf(f, sizeof(f), "f%d", i);
        hashv_set_ttl(e, f, strlen(f), 4000000000000LL + i * 1000);
    }
    CHECK_EQ_LL(kv_enc(e), ENC_HT_EX);
    save_body(e, 12, 1, &b, &type);
    CHECK_EQ_LL(type, RDB_TYPE_HASH_METADATA);
    {
        struct rdb_in in;
        rdb_in_mem(&in, b.p, b.len, 12);
        uint64_t m, cnt, ttl;
        CHECK(rdb_get_u64le(&in, &m) == 0 && m == 4000000000000ULL);
        CHECK(rdb_get_len(&in, &cnt, NULL) == 0 && cnt == 300);
        int timed = 0, first = 0;
        for (uint64_t i = 0; i < cnt; i++) {
            size_t fl, vl;
            CHECK(rdb_get_len(&in, &ttl, NULL) == 0);
            char *f = rdb_get_string(&in, &fl);
            char *v = rdb_get_string(&in, &vl);
            if (ttl) timed++;
            if (f && !strcmp(f, "f0")) first = ttl == 1;
            if (f && !strcmp(f, "f7")) CHECK_EQ_LL(ttl, 7001);
            hk_free(f);
            hk_free(v);
        }
        CHECK_EQ_LL(timed, 43);
        CHECK(first);
        CHECK_EQ_LL(in.pos, b.len);
    }
    l = must_load(&b, type, 12);
    if (l) {
        char *x = hash_text(e), *y = hash_text(l);
        CHECK(strcmp(x, y) == 0);
        CHECK_EQ_LL(kv_enc(l), ENC_HT_EX);
        CHECK_EQ_LL(hashv_ttl_count(l), 43);
        hk_free(x);
        hk_free(y);
        kv_free(l);
    }
    kv_free(e);
    hk_free(b.p);
}

/* A body read through hash_rdb_load_at with a clock. */
static struct kv *load_at(const struct hk_buf *b, int type, long long now) {
    struct rdb_in in;
    rdb_in_mem(&in, b->p, b->len, 12);
    struct kv *e = hash_rdb_load_at(&in, type, "key", 3, -1, now);
    if (!e) fprintf(stderr, "load failed: %s\n", in.err);
    return e;
}

static void test_hash_expired_fields(void) {
    struct hk_buf b = {0};
    int type;
    for (int big = 0; big < 2; big++) {
        struct kv *e = mkhash(big ? 200 : 6, 4);
        hashv_set_ttl(e, "f0", 2, 1000);
        hashv_set_ttl(e, "f1", 2, 2000);
        hashv_set_ttl(e, "f2", 2, 3000);
        save_body(e, 12, 0, &b, &type);
        CHECK_EQ_LL(type, big ? RDB_TYPE_HASH_METADATA : RDB_TYPE_HASH_LISTPACK_EX);
        /* Fields due before now go; one due exactly now stays. */
        struct kv *l = load_at(&b, type, 2000);
        CHECK(l != NULL);
        if (l) {
            CHECK_EQ_LL(hashv_len(l), hashv_len(e) - 1);
            CHECK(!hashv_exists(l, "f0", 2) && hashv_exists(l, "f1", 2));
            CHECK_EQ_LL(hashv_ttl(l, "f1", 2), 2000);
            CHECK(kv_hfe(l));
            kv_free(l);
        }
        /* All deadlines gone: the side table goes too. */
        l = load_at(&b, type, 5000);
        CHECK(l != NULL);
        if (l) {
            CHECK_EQ_LL(hashv_len(l), hashv_len(e) - 3);
            CHECK(!kv_hfe(l));
            kv_free(l);
        }
        /* -1 keeps everything. */
        l = load_at(&b, type, -1);
        CHECK(l && hashv_len(l) == hashv_len(e) && hashv_ttl_count(l) == 3);
        if (l) kv_free(l);
        kv_free(e);
    }
    /* Every field due: they stay, for the field expiry to delete. */
    struct kv *e = hashv_new("key", 3, -1);
    hset(e, "a", "1");
    hashv_set_ttl(e, "a", 1, 10);
    save_body(e, 12, 0, &b, &type);
    struct kv *l = load_at(&b, type, 1000);
    CHECK(l && hashv_len(l) == 1 && hashv_ttl(l, "a", 1) == 10);
    if (l) kv_free(l);
    kv_free(e);
    hk_free(b.p);
}

/* A ziplist of strings (below 64 bytes) and small integers ("#5": the
 * immediate form for 0..12, "#-100": an 8-bit integer). */
static void ziplist(struct hk_buf *out, const char *const *items, size_t n) {
    struct hk_buf z = {0};
    unsigned char hdr[10] = {0};
    hk_buf_add(&z, hdr, 10, 64);
    size_t prev = 0, tail = 10;
    for (size_t i = 0; i < n; i++) {
        unsigned char e[80];
        size_t k = 0;
        e[k++] = (unsigned char)prev;
        const char *s = items[i];
        if (s[0] == '#') {
            int v = atoi(s + 1);
            if (v >= 0 && v <= 12) {
                e[k++] = (unsigned char)(0xF1 + v);
            } else {
                e[k++] = 0xFE;
                e[k++] = (unsigned char)(int8_t)v;
            }
        } else {
            size_t len = strlen(s);
            e[k++] = (unsigned char)len;
            memcpy(e + k, s, len);
            k += len;
        }
        tail = z.len;
        hk_buf_add(&z, e, k, 64);
        prev = k;
    }
    unsigned char end = 0xFF;
    hk_buf_add(&z, &end, 1, 64);
    unsigned char *p = (unsigned char *)z.p;
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(z.len >> (8 * i)), p[4 + i] = (unsigned char)(tail >> (8 * i));
    p[8] = (unsigned char)n;
    p[9] = (unsigned char)(n >> 8);
    struct rdb_out o = {out, 12, 0};
    out->len = 0;
    rdb_put_string(&o, z.p, z.len);
    hk_free(z.p);
}

static void test_hash_legacy(void) {
    struct hk_buf b = {0};
    struct rdb_out o = {&b, 12, 0};
    /* Zipmap: 2 pairs, the second value with 2 unused bytes after it. */
    static const unsigned char zm[] = {2, 1, 'a', 1, 0, '1', 2, 'b', 'b', 5, 2, 'h', 'e', 'l', 'l', 'o', 0, 0, 0xFF};
    rdb_put_string(&o, zm, sizeof(zm));
    struct kv *e = must_load(&b, RDB_TYPE_HASH_ZIPMAP, 3);
    if (e) {
        char *t = hash_text(e);
        CHECK(!strcmp(t, "a=1@-1;bb=hello@-1;"));
        CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
        hk_free(t);
        kv_free(e);
    }
    /* A 300-byte value (a 5-byte length), the count left to be counted:
     * converted to a table by its length. */
    struct hk_buf z = {0};
    unsigned char c = 254, f[] = {1, 'k', 254, 0x2c, 1, 0, 0, 0};
    hk_buf_add(&z, &c, 1, 64);
    hk_buf_add(&z, f, sizeof(f), 64);
    for (int i = 0; i < 300; i++) hk_buf_add(&z, "v", 1, 64);
    c = 0xFF;
    hk_buf_add(&z, &c, 1, 64);
    b.len = 0;
    rdb_put_string(&o, z.p, z.len);
    e = must_load(&b, RDB_TYPE_HASH_ZIPMAP, 3);
    if (e) {
        CHECK_EQ_LL(hashv_len(e), 1);
        CHECK_EQ_LL(kv_enc(e), ENC_HT);
        kv_free(e);
    }
    /* Corrupt zipmaps: empty, a wrong count, a value past the end, a
     * repeated field. */
    static const unsigned char bad1[] = {0, 0xFF}, bad2[] = {3, 1, 'a', 1, 0, '1', 0xFF},
                               bad3[] = {1, 1, 'a', 9, 0, '1', 0xFF},
                               bad4[] = {2, 1, 'a', 1, 0, '1', 1, 'a', 1, 0, '2', 0xFF};
    const unsigned char *bads[] = {bad1, bad2, bad3, bad4};
    size_t blens[] = {sizeof(bad1), sizeof(bad2), sizeof(bad3), sizeof(bad4)};
    for (int i = 0; i < 4; i++) {
        b.len = 0;
        rdb_put_string(&o, bads[i], blens[i]);
        CHECK(refused(b.p, b.len, RDB_TYPE_HASH_ZIPMAP, 3));
    }
    /* Redis's own empty zipmap payload. */
    CHECK(refused(BYTES("\x02\x00\xFF"), RDB_TYPE_HASH_ZIPMAP, 9));
    hk_free(z.p);

    /* A ziplist hash, with integer entries in both small forms. */
    const char *items[] = {"name", "redis", "#5", "#-100", "x", "#12"};
    ziplist(&b, items, 6);
    e = must_load(&b, RDB_TYPE_HASH_ZIPLIST, 6);
    if (e) {
        char *t = hash_text(e);
        CHECK(!strcmp(t, "5=-100@-1;name=redis@-1;x=12@-1;"));
        hk_free(t);
        kv_free(e);
    }
    const char *dup[] = {"a", "1", "a", "2"};
    ziplist(&b, dup, 4);
    CHECK(refused(b.p, b.len, RDB_TYPE_HASH_ZIPLIST, 6));
    const char *odd[] = {"a", "1", "b"};
    ziplist(&b, odd, 3);
    CHECK(refused(b.p, b.len, RDB_TYPE_HASH_ZIPLIST, 6));
    /* Redis's corrupt-dump payloads: a valid header with a bad entry
     * length, a wrong size header, duplicate records. */
    char err[200];
    CHECK(!load_dump(BYTES("\x0D\x1B\x1B\x00\x00\x00\x16\x00\x00\x00\x04\x00\x00\x02\x61\x00\x04\x02\x62\x00\x04\x14"
                           "\x63\x00\x04\x02\x64\x00\xFF\x09\x00\xD9\x10\x54\x92\x15\xF5\x5F\x52"),
                     err, sizeof(err)));
    CHECK(!load_dump(BYTES("\x0D\x1B\x25\x00\x00\x00\x16\x00\x00\x00\x04\x00\x00\x02\x61\x00\x04\x02\x62\x00\x04\x02"
                           "\x63\x00\x04\x02\x64\x00\xFF\x09\x00\xB7\xF7\x6E\x9F\x43\x43\x14\xC6"),
                     err, sizeof(err)));
    CHECK(!load_dump(BYTES("\x0D\x1B\x1B\x00\x00\x00\x16\x00\x00\x00\x04\x00\x00\x02\x61\x00\x04\x02\x62\x00\x04\x02"
                           "\x61\x00\x04\x02\x64\x00\xFF\x09\x00\xA1\x98\x36\x78\xCC\x8E\x93\x2E"),
                     err, sizeof(err)));
    /* The same payload with the duplicate field renamed loads. */
    struct kv *ok = load_dump(BYTES("\x0D\x1B\x1B\x00\x00\x00\x16\x00\x00\x00\x04\x00\x00\x02\x61\x00\x04\x02\x62"
                                    "\x00\x04\x02\x63\x00\x04\x02\x64\x00\xFF\x09\x00\xA1\x98\x36\x78\xCC\x8E\x93\x2E"),
                              err, sizeof(err));
    CHECK(ok != NULL);
    if (ok) {
        char *t = hash_text(ok);
        CHECK(!strcmp(t, "a=b@-1;c=d@-1;"));
        hk_free(t);
        kv_free(ok);
    }

    /* Pre-GA field TTLs: absolute deadlines per field (22), and a
     * listpack of triplets without the earliest deadline in front (23). */
    b.len = 0;
    rdb_put_len(&o, 2);
    rdb_put_len(&o, 7000000000000ULL);
    rdb_put_string(&o, "f", 1);
    rdb_put_string(&o, "v", 1);
    rdb_put_len(&o, 0);
    rdb_put_string(&o, "g", 1);
    rdb_put_string(&o, "w", 1);
    e = must_load(&b, RDB_TYPE_HASH_METADATA_PRE_GA, 12);
    if (e) {
        char *t = hash_text(e);
        CHECK(!strcmp(t, "f=v@7000000000000;g=w@-1;"));
        hk_free(t);
        kv_free(e);
    }
    struct rdb_lpw lp;
    rdb_lpw_init(&lp);
    rdb_lpw_add(&lp, "a", 1);
    rdb_lpw_add(&lp, "1", 1);
    rdb_lpw_add_int(&lp, 1717000000000LL);
    rdb_lpw_add(&lp, "b", 1);
    rdb_lpw_add(&lp, "2", 1);
    rdb_lpw_add_int(&lp, 0);
    b.len = 0;
    CHECK(rdb_put_lpw(&o, &lp) == 0);
    e = must_load(&b, RDB_TYPE_HASH_LISTPACK_EX_PRE_GA, 12);
    if (e) {
        char *t = hash_text(e);
        CHECK(!strcmp(t, "a=1@1717000000000;b=2@-1;"));
        CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK_EX);
        hk_free(t);
        kv_free(e);
    }
    hk_free(b.p);
}

static void test_hash_refused(void) {
    struct hk_buf b = {0};
    struct rdb_out o = {&b, 12, 0};
    /* HASH with a repeated field (Redis's payload) and with no field. */
    CHECK(refused(BYTES("\x02\x01" "a\x01" "b\x01" "a\x01" "d"), RDB_TYPE_HASH, 9));
    CHECK(refused(BYTES("\x00"), RDB_TYPE_HASH, 9));
    CHECK(refused(BYTES("\xC0\x21"), RDB_TYPE_HASH, 9));
    /* Listpacks: a repeated field, a count that is not a multiple. */
    char err[200];
    CHECK(!load_dump(BYTES("\x10\x17\x17\x00\x00\x00\x04\x00\x82\x61\x00\x03\x82\x62\x00\x03\x82\x61\x00\x03\x82\x64"
                           "\x00\x03\xff\x0a\x00\xc0\xcf\xa6\x87\xe5\xa7\xc5\xbe"),
                     err, sizeof(err)));
    CHECK(!load_dump(BYTES("\x10\x15\x15\x00\x00\x00\x06\x00\xF0\x01\x00\x01\x01\x01\x82\x5F\x31\x03\x02\x01\x02\x01"
                           "\xFF\x0A\x00\x94\x21\x0A\xFA\x06\x52\x9F\x44"),
                     err, sizeof(err)));
    /* Redis's field-TTL corruptions: a deadline that is a string, one past
     * 2^48, fields out of deadline order (LZF-compressed), a field with a
     * deadline after one without. */
    CHECK(!load_dump(BYTES("\x17\x2d\x2d\x00\x00\x00\x09\x00\x81\x61\x02\x01\x01\xf4\xa6\x96\x18\xb8\x8f\x01\x00\x00"
                           "\x09\x82\x66\x31\x03\x82\x76\x31\x03\x83\x66\x6f\x6f\x04\x82\x66\x32\x03\x82\x76\x32\x03"
                           "\x00\x01\xff\x0c\x00\xde\x40\xe5\x37\x51\x1c\x12\x56"),
                     err, sizeof(err)));
    CHECK(!load_dump(BYTES("\x17\x33\x33\x00\x00\x00\x09\x00\x00\x01\x00\x01\xf4\x01\xc5\x89\x95\x8f\x01\x00\x00\x09"
                           "\x01\x01\x82\x5f\x31\x03\xf4\x29\x94\x97\x95\x8f\x01\x00\x00\x09\x02\x01\x02\x01\xf4\x01"
                           "\x5e\xaf\x95\x8f\x01\x33\x00\x09\xff\x0c\x00\x7e\x4f\xf4\x33\xe9\xc5\x3e\x56"),
                     err, sizeof(err)));
    CHECK(!load_dump(BYTES("\x17\xc3\x30\x35\x14\x35\x00\x00\x00\t\x00\x82\x66\x32\x03\x82\x76\x32\x03\xf4\x80\x73\x16"
                           "\xd1\x8f\x01\x20\x12\x02\x82\x66\x31\x20\x11\x03\x31\x03\xf4\x7f\xe0\x01\x11\x00\x33\x20"
                           "\x11\x04\x33\x03\x00\x01\xff\x0c\x00\xf6\x70\x29\x57\x11\x68\x9d\xe5"),
                     err, sizeof(err)));
    CHECK(strstr(err, "order") != NULL);
    CHECK(!load_dump(BYTES("\x17\x2d\x2d\x00\x00\x00\x09\x00\x82\x66\x31\x03\x82\x76\x31\x03\x00\x01\x82\x66\x32\x03"
                           "\x82\x76\x32\x03\xf4\xe0\x59\x7a\x96\x00\x00\x00\x00\x09\x82\x66\x33\x03\x82\x76\x33\x03"
                           "\x00\x01\xff\x0c\x00\x42\x66\xd4\xbe\x17\xc3\x96\x72"),
                     err, sizeof(err)));
    CHECK(!load_dump(BYTES("\x16\x02\x81\x00\x01\x00\x00\x00\x00\x00\x00\x02\x66\x31\x02\x76\x31\x81\x00\x01\x00\x00"
                           "\x00\x00\x00\x00\x02\x66\x32\x02\x76\x32\x0c\x00\xb9\x3c\x65\x28\x40\x94\x58\x36"),
                     err, sizeof(err)));
    /* HASH_METADATA: an earliest deadline past the marker, a relative one
     * that lands past 2^48. */
    b.len = 0;
    rdb_put_u64le(&o, (1ULL << 48) + 1);
    rdb_put_len(&o, 1);
    rdb_put_len(&o, 0);
    rdb_put_string(&o, "f", 1);
    rdb_put_string(&o, "v", 1);
    CHECK(refused(b.p, b.len, RDB_TYPE_HASH_METADATA, 12));
    b.len = 0;
    rdb_put_u64le(&o, 1000);
    rdb_put_len(&o, 1);
    rdb_put_len(&o, (1ULL << 48));
    rdb_put_string(&o, "f", 1);
    rdb_put_string(&o, "v", 1);
    CHECK(refused(b.p, b.len, RDB_TYPE_HASH_METADATA, 12));
    hk_free(b.p);
}

static void test_hash_robustness(void) {
    struct hk_buf b = {0};
    int type;
    struct kv *hs[4];
    hs[0] = mkhash(6, 0);
    hs[1] = mkhash(140, 5);
    hs[2] = mkhash(5, 3);
    hashv_set_ttl(hs[2], "f1", 2, 1000);
    hashv_set_ttl(hs[2], "f3", 2, 900);
    hs[3] = mkhash(150, 2);
    hashv_set_ttl(hs[3], "f9", 2, 2000);
    for (int i = 0; i < 4; i++) {
        save_body(hs[i], 12, i & 1, &b, &type);
        hammer(&b, type, 12, 2000);
        kv_free(hs[i]);
    }
    /* The legacy layouts too. */
    const char *items[] = {"name", "redis", "#5", "#-100", "x", "#12"};
    ziplist(&b, items, 6);
    hammer(&b, RDB_TYPE_HASH_ZIPLIST, 6, 1000);
    struct rdb_out o = {&b, 12, 0};
    static const unsigned char zm[] = {2, 1, 'a', 1, 0, '1', 2, 'b', 'b', 5, 2, 'h', 'e', 'l', 'l', 'o', 0, 0, 0xFF};
    b.len = 0;
    rdb_put_string(&o, zm, sizeof(zm));
    hammer(&b, RDB_TYPE_HASH_ZIPMAP, 3, 1000);
    hk_free(b.p);
}

/* ---- streams ---- */

static void set_stream_limits(long long bytes, long long entries) {
    atomic_store(&type_limits.stream_node_max_bytes, bytes);
    atomic_store(&type_limits.stream_node_max_entries, entries);
}

static void xadd(struct stream *s, uint64_t ms, uint64_t seq, int nf, const char *const *fv) {
    struct stream_field f[8];
    for (int i = 0; i < nf; i++) {
        f[i].f = fv[2 * i];
        f[i].flen = strlen(fv[2 * i]);
        f[i].v = fv[2 * i + 1];
        f[i].vlen = strlen(fv[2 * i + 1]);
    }
    streamid id = {ms, seq};
    stream_append(s, &id, f, (size_t)nf);
}

static void test_stream_bytes(void) {
    /* XADD s 1-1 f v, as Redis 7.0 dumps it: one node under key 1-1, the
     * listpack [1, 0, 1, "f", 0 | 2, 0, 0, "v", 4], then the counters. */
    struct kv *e = stream_new_entry("key", 3);
    const char *fv[] = {"f", "v"};
    xadd(stream_of(e), 1, 1, 1, fv);
    struct hk_buf b = {0};
    int type;
    save_body(e, 10, 0, &b, &type);
    CHECK_EQ_LL(type, RDB_TYPE_STREAM_LISTPACKS_2);
    static const unsigned char want[] = {
        1,    16,   0,    0,    0,    0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 29,   29, 0, 0, 0, 10, 0, 1, 1, 0, 1,
        1,    1,    0x81, 'f',  2,    0, 1, 2, 1, 0, 1, 0, 1, 0x81, 'v', 2, 4, 1, 0xff, 1, 1, 1, 1, 1, 0, 0, 1, 0};
    CHECK(b.len == sizeof(want) && memcmp(b.p, want, sizeof(want)) == 0);
    /* From version 11: STREAM_LISTPACKS_3, the same body (no consumer). */
    save_body(e, 12, 0, &b, &type);
    CHECK_EQ_LL(type, RDB_TYPE_STREAM_LISTPACKS_3);
    CHECK(b.len == sizeof(want) && memcmp(b.p, want, sizeof(want)) == 0);
    kv_free(e);
    hk_free(b.p);
}

/* A stream with several field layouts over many nodes, deletions (a
 * node emptied), a last id past the entries, two groups with consumers
 * and pending entries. */
static struct kv *mkstream(int n) {
    set_stream_limits(4096, 7);
    struct kv *e = stream_new_entry("key", 3);
    struct stream *s = stream_of(e);
    const char *a[] = {"name", "x", "n", "12"};
    const char *b[] = {"other", "-5", "z", "", "q", "a longer value here"};
    for (int i = 0; i < n; i++) {
        char v[32];
        snprintf(v, sizeof(v), "%d", i * 3);
        const char *c[] = {"name", v, "n", "7"};
        if (i % 5 == 3) xadd(s, 1000 + i * 100, (uint64_t)i, 3, b);
        else xadd(s, 1000 + i * 100, 0, 2, i % 2 ? a : c);
    }
    for (int i = 7; i < 14; i++) {
        streamid id = {1000 + (uint64_t)i * 100, i % 5 == 3 ? (uint64_t)i : 0};
        stream_delete(s, &id);
    }
    streamid d = {1000 + 20 * 100, 0};
    stream_delete(s, &d);
    s->last_id.ms += 50;
    s->entries_added += 3;
    streamid zero = {0, 0};
    struct stream_cg *g1 = stream_cg_create(s, "grp", 3, &zero, 0);
    struct stream_cg *g2 = stream_cg_create(s, "another", 7, &s->last_id, STREAM_ENTRIES_READ_INVALID);
    struct stream_consumer *c1 = stream_consumer_create(g1, "alice", 5, 111);
    struct stream_consumer *c2 = stream_consumer_create(g1, "bob", 3, 222);
    stream_consumer_create(g2, "idle", 4, 333);
    c1->active_time = 444;
    struct stream_iter it;
    streamid id;
    int k = 0;
    stream_iter_start(&it, s, NULL, NULL, 0);
    while (stream_iter_next(&it, &id, NULL) && k < 12) {
        stream_cg_delivered(s, g1, &id);
        struct stream_nack *nk = stream_pel_add(g1, k % 3 ? c1 : c2, &id, 5000 + (k * 37) % 11);
        nk->delivery_count = (uint64_t)k + 1;
        k++;
    }
    stream_iter_stop(&it);
    set_stream_limits(4096, 100);
    return e;
}

static void check_same_stream(const struct kv *x, const struct kv *y, int v3) {
    const struct stream *a = stream_of(x), *b = stream_of(y);
    CHECK_EQ_LL(stream_node_count(a), stream_node_count(b));
    for (size_t i = 0; i < stream_node_count(a) && i < stream_node_count(b); i++) {
        size_t la, lb;
        const unsigned char *pa = stream_node_image(a, i, &la), *pb = stream_node_image(b, i, &lb);
        CHECK(la == lb && memcmp(pa, pb, la) == 0);
    }
    CHECK_EQ_LL(a->length, b->length);
    CHECK(streamid_cmp(&a->last_id, &b->last_id) == 0);
    CHECK(streamid_cmp(&a->first_id, &b->first_id) == 0);
    CHECK(streamid_cmp(&a->max_deleted_id, &b->max_deleted_id) == 0);
    CHECK_EQ_LL(a->entries_added, b->entries_added);
    CHECK_EQ_LL(a->ngroups, b->ngroups);
    static const streamid zero = {0, 0};
    for (size_t g = 0; g < a->ngroups && g < b->ngroups; g++) {
        const struct stream_cg *ga = a->groups[g], *gb = b->groups[g];
        CHECK(ga->nlen == gb->nlen && memcmp(ga->name, gb->name, ga->nlen) == 0);
        CHECK(streamid_cmp(&ga->last_id, &gb->last_id) == 0);
        CHECK_EQ_LL(ga->entries_read, gb->entries_read);
        CHECK_EQ_LL(ga->pel_count, gb->pel_count);
        const struct stream_nack *na = stream_pel_seek(ga, &zero), *nb = stream_pel_seek(gb, &zero);
        for (; na && nb; na = stream_pel_next(ga, na), nb = stream_pel_next(gb, nb)) {
            CHECK(streamid_cmp(&na->id, &nb->id) == 0);
            CHECK_EQ_LL(na->delivery_time, nb->delivery_time);
            CHECK_EQ_LL(na->delivery_count, nb->delivery_count);
            CHECK(na->consumer->nlen == nb->consumer->nlen &&
                  memcmp(na->consumer->name, nb->consumer->name, na->consumer->nlen) == 0);
        }
        CHECK(!na && !nb);
        /* The delivery-time order is rebuilt too. */
        for (na = ga->oldest, nb = gb->oldest; na && nb; na = stream_pel_newer(na), nb = stream_pel_newer(nb))
            CHECK(streamid_cmp(&na->id, &nb->id) == 0);
        CHECK(!na && !nb);
        CHECK_EQ_LL(ga->nconsumers, gb->nconsumers);
        for (size_t c = 0; c < ga->nconsumers && c < gb->nconsumers; c++) {
            const struct stream_consumer *ca = ga->consumers[c], *cb = gb->consumers[c];
            CHECK(ca->nlen == cb->nlen && memcmp(ca->name, cb->name, ca->nlen) == 0);
            CHECK_EQ_LL(ca->seen_time, cb->seen_time);
            CHECK_EQ_LL(cb->active_time, v3 ? ca->active_time : ca->seen_time);
            CHECK_EQ_LL(ca->pel_count, cb->pel_count);
            const struct stream_nack *ka = stream_cons_seek(ca, &zero), *kb = stream_cons_seek(cb, &zero);
            for (; ka && kb; ka = stream_cons_next(ca, ka), kb = stream_cons_next(cb, kb))
                CHECK(streamid_cmp(&ka->id, &kb->id) == 0);
            CHECK(!ka && !kb);
        }
    }
}

static void test_stream_round_trips(void) {
    struct hk_buf b = {0};
    int type;
    for (int n = 0; n <= 60; n += 20) {
        struct kv *e = mkstream(n ? n : 1);
        for (int version = 10; version <= 12; version += 2)
            for (int compress = 0; compress < 2; compress++) {
                save_body(e, version, compress, &b, &type);
                struct kv *l = must_load(&b, type, version);
                if (!l) continue;
                check_same_stream(e, l, version >= 11);
                /* And written again, the very same bytes (v3). */
                if (version >= 11) {
                    struct hk_buf b2 = {0};
                    int t2;
                    save_body(l, version, compress, &b2, &t2);
                    CHECK(b2.len == b.len && memcmp(b2.p, b.p, b.len) == 0);
                    hk_free(b2.p);
                }
                kv_free(l);
            }
        kv_free(e);
    }
    /* An empty stream with a group (XGROUP CREATE ... MKSTREAM). */
    struct kv *e = stream_new_entry("key", 3);
    streamid zero = {0, 0};
    stream_cg_create(stream_of(e), "g", 1, &zero, 0);
    save_body(e, 12, 0, &b, &type);
    struct kv *l = must_load(&b, type, 12);
    if (l) {
        check_same_stream(e, l, 1);
        kv_free(l);
    }
    kv_free(e);
    hk_free(b.p);
}

/* Redis's payloads (its corrupt-dump suite), with the injected fault
 * undone: a version 1 stream (type 15) of 3 entries with a group, and a
 * type 19 stream with a deleted entry. */
static const unsigned char redis_v1_stream[] =
    "\x0F\x01\x10\x00\x00\x01\x73\xDE\xDF\x7D\x9B\x00\x00\x00\x00\x00\x00\x00\x00\x40\x42\x42\x00\x00\x00\x18\x00\x03"
    "\x01\x00\x01\x02\x01\x84\x69\x74\x65\x6D\x05\x85\x76\x61\x6C\x75\x65\x06\x00\x01\x02\x01\x00\x01\x00\x01\x01\x01"
    "\x00\x01\x05\x01\x02\x01\x22\x01\x00\x01\x01\x01\x82\x5F\x31\x03\x05\x01\x02\x01\x2C\x01\x00\x01\x01\x01\x02\x01"
    "\x05\x01\xFF\x03\x81\x00\x00\x01\x73\xDE\xDF\x7D\xC7\x00\x01\x07\x6D\x79\x67\x72\x6F\x75\x70\x81\x00\x00\x01\x73"
    "\xDE\xDF\x7D\x9B\x00\x01\x00\x00\x01\x73\xDE\xDF\x7D\x9B\x00\x00\x00\x00\x00\x00\x00\x00\xF9\x7D\xDF\xDE\x73\x01"
    "\x00\x00\x01\x01\x05\x41\x6C\x69\x63\x65\xEB\x7D\xDF\xDE\x73\x01\x00\x00\x01\x00\x00\x01\x73\xDE\xDF\x7D\x9B\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x09\x00\xB2\xA8\xA7\x5F\x1B\x61\x72\xD5";
static const unsigned char redis_v2_stream[] =
    "\x13\x01\x10\x00\x00\x01\x81\xCC\x07\xDC\xF2\x00\x00\x00\x00\x00\x00\x00\x00\x40\x42\x42\x00\x00\x00\x18\x00\x02"
    "\x01\x01\x01\x02\x01\x84\x69\x74\x65\x6D\x05\x85\x76\x61\x6C\x75\x65\x06\x00\x01\x02\x01\x00\x01\x00\x01\x01\x01"
    "\x00\x01\x05\x01\x03\x01\x2C\x01\x00\x01\x01\x01\x82\x5F\x31\x03\x05\x01\x02\x01\x3C\x01\x00\x01\x01\x01\x02\x01"
    "\x05\x01\xFF\x02\x81\x00\x00\x01\x81\xCC\x07\xDD\x2E\x00\x81\x00\x00\x01\x81\xCC\x07\xDC\xF2\x00\x81\x00\x00\x01"
    "\x81\xCC\x07\xDD\x1E\x00\x03\x01\x07\x6D\x79\x67\x72\x6F\x75\x70\x81\x00\x00\x01\x81\xCC\x07\xDD\x1E\x00\x02\x01"
    "\x00\x00\x01\x81\xCC\x07\xDD\x1E\x00\x00\x00\x00\x00\x00\x00\x00\x71\xDD\x07\xCC\x81\x01\x00\x00\x01\x01\x05\x41"
    "\x6C\x69\x63\x65\x58\xDD\x07\xCC\x81\x01\x00\x00\x01\x00\x00\x01\x81\xCC\x07\xDD\x1E\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x0A\x00\x2F\xB0\xD1\x15\x0A\x97\x87\x6B";

static void test_stream_redis_payloads(void) {
    char err[200];
    struct kv *e = load_dump(redis_v1_stream, sizeof(redis_v1_stream) - 1, err, sizeof(err));
    CHECK(e != NULL);
    if (!e) fprintf(stderr, "v1 stream: %s\n", err);
    if (e) {
        struct stream *s = stream_of(e);
        CHECK_EQ_LL(s->length, 3);
        CHECK_EQ_LL(s->entries_added, 3);
        CHECK(s->first_id.ms == 0x173DEDF7D9BULL && s->first_id.seq == 0);
        CHECK(s->last_id.ms == 0x173DEDF7DC7ULL && s->last_id.seq == 0);
        CHECK(streamid_is_zero(&s->max_deleted_id));
        CHECK_EQ_LL(s->ngroups, 1);
        if (s->ngroups) {
            const struct stream_cg *g = s->groups[0];
            CHECK(g->nlen == 7 && !memcmp(g->name, "mygroup", 7));
            /* Estimated: the group sits at the first entry. */
            CHECK_EQ_LL(g->entries_read, 1);
            CHECK_EQ_LL(g->pel_count, 1);
            CHECK(g->nconsumers == 1 && g->consumers[0]->pel_count == 1);
            CHECK_EQ_LL(g->consumers[0]->active_time, g->consumers[0]->seen_time);
            CHECK(g->oldest && g->oldest->delivery_time == 0x173DEDF7DF9LL && g->oldest->delivery_count == 1);
        }
        struct stream_iter it;
        streamid id;
        long long nf;
        stream_iter_start(&it, s, NULL, NULL, 0);
        int k = 0;
        while (stream_iter_next(&it, &id, &nf)) {
            const char *f, *v, *f2, *v2;
            size_t fl, vl, fl2, vl2;
            stream_iter_field(&it, &f, &fl, &v, &vl);
            CHECK(nf == 2 && fl == 4 && !memcmp(f, "item", 4));
            stream_iter_field(&it, &f2, &fl2, &v2, &vl2);
            if (k == 1) CHECK(vl2 == 2 && !memcmp(v2, "_1", 2));
            k++;
        }
        stream_iter_stop(&it);
        CHECK_EQ_LL(k, 3);
        /* Written back as Redis 7 does, it reads the same. */
        struct hk_buf b = {0};
        int type;
        save_body(e, 12, 0, &b, &type);
        struct kv *l = must_load(&b, type, 12);
        if (l) {
            check_same_stream(e, l, 1);
            kv_free(l);
        }
        hk_free(b.p);
        kv_free(e);
    }
    e = load_dump(redis_v2_stream, sizeof(redis_v2_stream) - 1, err, sizeof(err));
    CHECK(e != NULL);
    if (!e) fprintf(stderr, "v2 stream: %s\n", err);
    if (e) {
        struct stream *s = stream_of(e);
        CHECK_EQ_LL(s->length, 2);
        CHECK_EQ_LL(s->entries_added, 3);
        CHECK(s->max_deleted_id.ms == 0x181CC07DD1EULL);
        CHECK(s->ngroups == 1 && s->groups[0]->entries_read == 2);
        CHECK(!stream_has(s, &s->max_deleted_id));
        /* Written at version 10 it is the very same body. */
        struct hk_buf b = {0};
        int type;
        save_body(e, 10, 0, &b, &type);
        CHECK_EQ_LL(type, RDB_TYPE_STREAM_LISTPACKS_2);
        CHECK(b.len == sizeof(redis_v2_stream) - 12 && memcmp(b.p, redis_v2_stream + 1, b.len) == 0);
        hk_free(b.p);
        kv_free(e);
    }
    /* The same payloads with their faults: a bad element count, and a
     * last id written as an encoded length. */
    unsigned char bad[sizeof(redis_v1_stream)];
    memcpy(bad, redis_v1_stream, sizeof(bad));
    unsigned char *at = memmem(bad, sizeof(bad), "\x00\x01\x05\x01\x02\x01\x22", 7);
    CHECK(at != NULL);
    if (at) at[2] = 0x56;
    CHECK(!load_dump(bad, sizeof(bad) - 1, err, sizeof(err)));
    unsigned char bad2[sizeof(redis_v2_stream)];
    memcpy(bad2, redis_v2_stream, sizeof(bad2));
    at = memmem(bad2, sizeof(bad2), "\xFF\x02\x81", 3);
    CHECK(at != NULL);
    if (at) at[2] = 0xD0;
    CHECK(!load_dump(bad2, sizeof(bad2) - 1, err, sizeof(err)));
    /* Redis's payload with two consumers of the same name. */
    CHECK(!load_dump(BYTES("\x0F\x00\x00\x00\x00\x01\x07\x6D\x79\x67\x72\x6F\x75\x70\x00\x00\x00\x02\x04\x6E\x61\x6D"
                           "\x65\x2A\x4C\xAA\x9A\x7D\x01\x00\x00\x00\x04\x6E\x61\x6D\x65\x2B\x4C\xAA\x9A\x7D\x01\x00"
                           "\x00\x00\x0A\x00\xCC\xED\x8C\xA7\x62\xEE\xC7\xC8"),
                     err, sizeof(err)));
    CHECK(strstr(err, "consumer") != NULL);
}

/* A stream body written by hand: one node of entries 10-0 and 11-0,
 * then the rest as given. */
static void hand_stream(struct hk_buf *b, uint64_t key_ms, const char *tail, size_t tail_len) {
    struct rdb_out o = {b, 12, 0};
    b->len = 0;
    rdb_put_len(&o, 1);
    unsigned char key[16] = {0};
    for (int i = 0; i < 8; i++) key[i] = (unsigned char)(key_ms >> (56 - 8 * i));
    rdb_put_string(&o, key, 16);
    struct rdb_lpw lp;
    rdb_lpw_init(&lp);
    long long m[] = {2, 0, 1};
    for (int i = 0; i < 3; i++) rdb_lpw_add_int(&lp, m[i]);
    rdb_lpw_add(&lp, "f", 1);
    rdb_lpw_add_int(&lp, 0);
    for (int k = 0; k < 2; k++) {
        rdb_lpw_add_int(&lp, 2);
        rdb_lpw_add_int(&lp, (long long)(10 + k - key_ms));
        rdb_lpw_add_int(&lp, 0);
        rdb_lpw_add(&lp, "v", 1);
        rdb_lpw_add_int(&lp, 4);
    }
    rdb_put_lpw(&o, &lp);
    rdb_put_raw(&o, tail, tail_len);
}

static void test_stream_refused(void) {
    struct hk_buf b = {0};
    /* A node whose key is not its first entry's id still loads (its
     * entries' ids are what counts). */
    static const char ok_tail[] = "\x02\x0b\x00\x0a\x00\x00\x00\x02\x00";
    hand_stream(&b, 5, ok_tail, sizeof(ok_tail) - 1);
    struct kv *e = must_load(&b, RDB_TYPE_STREAM_LISTPACKS_2, 12);
    if (e) {
        CHECK(stream_of(e)->first_id.ms == 10 && stream_node_master(stream_of(e), 0).ms == 10);
        kv_free(e);
    }
    /* The length does not match the entries. */
    static const char t1[] = "\x03\x0b\x00\x0a\x00\x00\x00\x03\x00";
    hand_stream(&b, 10, t1, sizeof(t1) - 1);
    CHECK(refused(b.p, b.len, RDB_TYPE_STREAM_LISTPACKS_2, 12));
    /* The last id is behind the entries. */
    static const char t2[] = "\x02\x0a\x00\x0a\x00\x00\x00\x02\x00";
    hand_stream(&b, 10, t2, sizeof(t2) - 1);
    CHECK(refused(b.p, b.len, RDB_TYPE_STREAM_LISTPACKS_2, 12));
    /* Entries added below the length. */
    static const char t3[] = "\x02\x0b\x00\x0a\x00\x00\x00\x01\x00";
    hand_stream(&b, 10, t3, sizeof(t3) - 1);
    CHECK(refused(b.p, b.len, RDB_TYPE_STREAM_LISTPACKS_2, 12));
    /* A consumer's pending entry the group does not have. */
    static const char t4[] = "\x02\x0b\x00\x0a\x00\x00\x00\x02\x01\x01g\x0b\x00\x02"
                             "\x01\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x00" /* pending 10-0 */
                             "\x00\x00\x00\x00\x00\x00\x00\x00\x01"
                             "\x01\x01" "c\x00\x00\x00\x00\x00\x00\x00\x00\x01"
                             "\x00\x00\x00\x00\x00\x00\x00\x0b\x00\x00\x00\x00\x00\x00\x00\x00"; /* 11-0 */
    hand_stream(&b, 10, t4, sizeof(t4) - 1);
    CHECK(refused(b.p, b.len, RDB_TYPE_STREAM_LISTPACKS_2, 12));
    /* Fixed to 10-0, it loads; owned twice, or not at all, it does not. */
    char t5[sizeof(t4)];
    memcpy(t5, t4, sizeof(t4));
    t5[sizeof(t4) - 10] = 0x0a;
    hand_stream(&b, 10, t5, sizeof(t5) - 1);
    e = must_load(&b, RDB_TYPE_STREAM_LISTPACKS_2, 12);
    if (e) {
        CHECK(stream_of(e)->groups[0]->pel_count == 1);
        kv_free(e);
    }
    static const char t6[] = "\x02\x0b\x00\x0a\x00\x00\x00\x02\x01\x01g\x0b\x00\x02"
                             "\x01\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x00"
                             "\x00\x00\x00\x00\x00\x00\x00\x00\x01"
                             "\x02\x01" "c\x00\x00\x00\x00\x00\x00\x00\x00\x01"
                             "\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x00"
                             "\x01" "d\x00\x00\x00\x00\x00\x00\x00\x00\x01"
                             "\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x00";
    hand_stream(&b, 10, t6, sizeof(t6) - 1);
    CHECK(refused(b.p, b.len, RDB_TYPE_STREAM_LISTPACKS_2, 12));
    static const char t7[] = "\x02\x0b\x00\x0a\x00\x00\x00\x02\x01\x01g\x0b\x00\x02"
                             "\x01\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x00"
                             "\x00\x00\x00\x00\x00\x00\x00\x00\x01"
                             "\x00";
    hand_stream(&b, 10, t7, sizeof(t7) - 1);
    CHECK(refused(b.p, b.len, RDB_TYPE_STREAM_LISTPACKS_2, 12));
    /* Two groups of one name. */
    static const char t8[] = "\x02\x0b\x00\x0a\x00\x00\x00\x02\x02\x01g\x0b\x00\x02\x00\x00\x01g\x0b\x00\x02\x00\x00";
    hand_stream(&b, 10, t8, sizeof(t8) - 1);
    CHECK(refused(b.p, b.len, RDB_TYPE_STREAM_LISTPACKS_2, 12));
    static const char t9[] = "\x02\x0b\x00\x0a\x00\x00\x00\x02\x02\x01g\x0b\x00\x02\x00\x00\x01h\x0b\x00\x02\x00\x00";
    hand_stream(&b, 10, t9, sizeof(t9) - 1);
    e = must_load(&b, RDB_TYPE_STREAM_LISTPACKS_2, 12);
    if (e) kv_free(e);
    /* A node key of the wrong size. */
    struct rdb_out o = {&b, 12, 0};
    b.len = 0;
    rdb_put_len(&o, 1);
    rdb_put_string(&o, "short", 5);
    CHECK(refused(b.p, b.len, RDB_TYPE_STREAM_LISTPACKS_2, 12));
    hk_free(b.p);
}

static void test_stream_robustness(void) {
    struct hk_buf b = {0};
    int type;
    struct kv *e = mkstream(30);
    for (int version = 10; version <= 12; version += 2) {
        save_body(e, version, version == 12, &b, &type);
        hammer(&b, type, version, 3000);
    }
    kv_free(e);
    b.len = 0;
    hk_buf_add(&b, redis_v1_stream + 1, sizeof(redis_v1_stream) - 12, 64);
    hammer(&b, RDB_TYPE_STREAM_LISTPACKS, 9, 2000);
    hk_free(b.p);
}

/* ---- vector sets ---- */

static void rand_vec(float *v, uint32_t dim) {
    for (uint32_t i = 0; i < dim; i++) v[i] = (float)(rnd() % 20001) / 10000.0f - 1.0f;
}

/* VADD's path for one new element. */
static void vadd(struct vset *vs, const char *name, const float *v, const char *attr) {
    char *a = NULL;
    uint32_t alen = attr ? (uint32_t)strlen(attr) : 0;
    if (attr) {
        a = hk_malloc(alen ? alen : 1);
        memcpy(a, attr, alen);
    }
    struct velem *el = vset_add_name(vs, name, strlen(name), a, alen);
    float *p = hk_malloc(vs->dim * sizeof(float));
    vset_project(vs, v, p);
    vset_apply_add(vs, vset_ticket(vs), el, 0, p, 100, 0, NULL, 0);
    hk_free(p);
}

static struct kv *mkvset(uint32_t in_dim, uint32_t reduce, enum hnsw_quant q, uint32_t M, int n, int attrs) {
    struct vset *vs = vset_new(in_dim, reduce, q, M);
    float *v = hk_malloc(in_dim * sizeof(float));
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "el:%d", i);
        rand_vec(v, in_dim);
        vadd(vs, name, v, attrs && i % 3 == 0 ? "{\"i\":7}" : NULL);
    }
    /* Some removals, so ids have gaps. */
    for (int i = 5; i < n; i += 11) {
        char name[32];
        snprintf(name, sizeof(name), "el:%d", i);
        struct velem *el = vset_find(vs, name, strlen(name));
        vset_remove_name(vs, el);
        vset_apply_remove(vs, vset_ticket(vs), el);
    }
    hk_free(v);
    return vset_entry("key", 3, vs);
}

/* The module body read the way Redis's loader reads it, with its checks:
 * unique ids from 1, links that resolve at their level, no repeats, no
 * self links, counts within capacities within Redis's bounds, a farthest
 * index inside its list, and every link reciprocal. */
struct rnode {
    uint64_t id;
    uint32_t level;
    uint32_t nl[HNSW_MAX_LEVEL + 1];
    uint64_t *links[HNSW_MAX_LEVEL + 1];
};

static int redis_accepts(const struct hk_buf *b) {
    struct rdb_in in;
    rdb_in_mem(&in, b->p, b->len, 12);
    uint64_t mid, op, v, dim, count, config, flags;
    int ok = 1;
#define U(x) (rdb_get_len(&in, &op, NULL) == 0 && op == 2 && rdb_get_len(&in, &(x), NULL) == 0)
#define S(p, l) (rdb_get_len(&in, &op, NULL) == 0 && op == 5 && ((p) = rdb_get_string(&in, &(l))) != NULL)
    if (rdb_get_len(&in, &mid, NULL) < 0 || mid != rdb_module_id("vectorset", 0)) return 0;
    if (!U(dim) || !U(count) || !U(config) || !U(flags)) return 0;
    uint64_t M = config >> 8 & 0xffff;
    char *s;
    size_t l;
    if (flags & 1) {
        if (!U(v) || !S(s, l)) return 0;
        hk_free(s);
    }
    struct rnode *nodes = hk_calloc(count, sizeof(*nodes));
    for (uint64_t i = 0; i < count && ok; i++) {
        uint64_t np;
        if (!S(s, l)) return 0;
        hk_free(s);
        if (flags & 2) {
            if (!S(s, l)) return 0;
            hk_free(s);
        }
        if (!S(s, l)) return 0;
        hk_free(s);
        if (!U(np)) return 0;
        uint64_t *p = hk_malloc(np * sizeof(uint64_t));
        for (uint64_t j = 0; j < np; j++)
            if (!U(p[j])) return 0;
        struct rnode *nd = &nodes[i];
        nd->id = p[0];
        nd->level = (uint32_t)(p[1] & 0xff);
        ok = nd->id != 0 && (p[1] >> 24) == 1 && nd->level <= HNSW_MAX_LEVEL;
        uint64_t k = 2;
        for (uint32_t lv = 0; ok && lv <= nd->level; lv++) {
            uint64_t n = p[k++], max = p[k++];
            ok = n <= max && max == (lv ? M : 2 * M);
            nd->nl[lv] = (uint32_t)n;
            nd->links[lv] = hk_malloc((n + 1) * sizeof(uint64_t));
            for (uint64_t j = 0; j < n; j++) nd->links[lv][j] = p[k++];
            uint64_t worst = p[k++];
            if (n && (worst & 0xffffffff) >= n) ok = 0;
        }
        ok = ok && k + 1 == np;
        hk_free(p);
    }
    for (uint64_t i = 0; i < count && ok; i++)
        for (uint64_t j = 0; j < i; j++)
            if (nodes[i].id == nodes[j].id) ok = 0;
    for (uint64_t i = 0; i < count && ok; i++) {
        struct rnode *a = &nodes[i];
        for (uint32_t lv = 0; lv <= a->level && ok; lv++)
            for (uint32_t j = 0; j < a->nl[lv] && ok; j++) {
                uint64_t to = a->links[lv][j];
                struct rnode *bn = NULL;
                for (uint64_t k = 0; k < count; k++)
                    if (nodes[k].id == to) bn = &nodes[k];
                if (!bn || bn == a || bn->level < lv) {
                    ok = 0;
                    break;
                }
                int back = 0, seen = 0;
                for (uint32_t t = 0; t < bn->nl[lv]; t++) back |= bn->links[lv][t] == a->id;
                for (uint32_t t = 0; t < a->nl[lv]; t++) seen += a->links[lv][t] == to;
                ok = back && seen == 1;
            }
    }
    ok = ok && rdb_get_len(&in, &op, NULL) == 0 && op == 0 && in.pos == b->len;
    for (uint64_t i = 0; i < count; i++)
        for (uint32_t lv = 0; lv <= nodes[i].level && lv <= HNSW_MAX_LEVEL; lv++) hk_free(nodes[i].links[lv]);
    hk_free(nodes);
#undef U
#undef S
    return ok;
}

static void check_same_vset(const struct kv *x, const struct kv *y) {
    struct vset *a = vset_of(x), *b = vset_of(y);
    CHECK_EQ_LL(vset_card(a), vset_card(b));
    CHECK(a->dim == b->dim && a->in_dim == b->in_dim && a->M == b->M && a->quant == b->quant);
    CHECK((a->proj == NULL) == (b->proj == NULL));
    CHECK_EQ_LL(a->nattr, b->nattr);
    size_t vb = hnsw_vec_bytes(a->g);
    struct ht_iter it;
    ht_iter_init(&it, &a->names);
    for (struct hnode *n; (n = ht_iter_next(&it));) {
        const struct velem *ea = (const struct velem *)n;
        const struct velem *eb = vset_find(b, ea->name, ea->nlen);
        CHECK(eb != NULL);
        if (!eb) continue;
        CHECK((ea->attr == NULL) == (eb->attr == NULL));
        if (ea->attr && eb->attr) CHECK(ea->alen == eb->alen && !memcmp(ea->attr, eb->attr, ea->alen));
        float na, ra, nb, rb;
        const void *va = hnsw_raw(a->g, ea->id, &na, &ra), *vbp = hnsw_raw(b->g, eb->id, &nb, &rb);
        CHECK(!memcmp(va, vbp, vb) && na == nb && ra == rb);
        CHECK_EQ_LL(hnsw_level(a->g, ea->id), hnsw_level(b->g, eb->id));
    }
    CHECK_EQ_LL(hnsw_max_level(a->g), hnsw_max_level(b->g));
    /* The entry point is kept (written first). */
    if (hnsw_count(a->g) && hnsw_count(b->g)) {
        const struct velem *ea = hnsw_value(a->g, hnsw_entry(a->g)), *eb = hnsw_value(b->g, hnsw_entry(b->g));
        CHECK(ea->nlen == eb->nlen && !memcmp(ea->name, eb->name, ea->nlen));
    }
}

static void test_vset_round_trips(void) {
    struct hk_buf b = {0}, b2 = {0};
    int type;
    struct {
        uint32_t in, reduce;
        enum hnsw_quant q;
        uint32_t M;
        int n, attrs;
    } cases[] = {
        {16, 0, HNSW_QUANT_NONE, 4, 150, 1}, {16, 0, HNSW_QUANT_Q8, 8, 120, 0}, {70, 0, HNSW_QUANT_BIN, 5, 150, 1},
        {64, 12, HNSW_QUANT_Q8, 4, 80, 1},   {3, 0, HNSW_QUANT_NONE, 16, 1, 0},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
        struct kv *e = mkvset(cases[c].in, cases[c].reduce, cases[c].q, cases[c].M, cases[c].n, cases[c].attrs);
        save_body(e, 12, c & 1, &b, &type);
        CHECK_EQ_LL(type, RDB_TYPE_MODULE_2);
        CHECK(redis_accepts(&b));
        struct kv *l = must_load(&b, type, 12);
        if (!l) {
            kv_free(e);
            continue;
        }
        check_same_vset(e, l);
        /* The graph read back is the reciprocal one written: saved
         * again, the bytes do not change. */
        save_body(l, 12, c & 1, &b2, &type);
        struct kv *l2 = must_load(&b2, type, 12);
        if (l2) {
            struct hk_buf b3 = {0};
            save_body(l2, 12, c & 1, &b3, &type);
            CHECK(b3.len == b2.len && memcmp(b3.p, b2.p, b2.len) == 0);
            hk_free(b3.p);
            kv_free(l2);
        }
        /* Searches on the copy find what the original finds for its own
         * members. */
        struct vset *vs = vset_of(l);
        float *q = hk_malloc(vs->dim * sizeof(float));
        struct ht_iter it;
        ht_iter_init(&it, &vs->names);
        int found = 0, tried = 0;
        for (struct hnode *n; (n = ht_iter_next(&it)) && tried < 20; tried++) {
            const struct velem *el = (const struct velem *)n;
            hnsw_vector(vs->g, el->id, q);
            struct hnsw_hit hit;
            if (hnsw_search(vs->g, vset_searcher(), q, 1, 100, NULL, NULL, 0, &hit) == 1 &&
                (hit.id == el->id || hit.dist < 1e-6f))
                found++;
        }
        CHECK(found >= tried - 1);
        hk_free(q);
        kv_free(l);
        kv_free(e);
    }
    hk_free(b.p);
    hk_free(b2.p);
}

/* A payload in Redis's form, as its vector set tests build them: dim 2,
 * FP32, M 16, no flags; nodes (name, id, level-0 links). */
struct hnode_spec {
    const char *name;
    uint64_t id;
    int nlinks;
    uint64_t links[64];
    float v[2];
    uint32_t level;
};

static void redis_vset(struct hk_buf *b, const struct hnode_spec *ns, int n, int version, uint64_t config) {
    struct rdb_out o = {b, 12, 0};
    b->len = 0;
    rdb_put_len(&o, rdb_module_id("vectorset", 0));
#define PU(x) (rdb_put_len(&o, 2), rdb_put_len(&o, (x)))
#define PS(p, l) (rdb_put_len(&o, 5), rdb_put_string(&o, (p), (l)))
    PU(2);
    PU((uint64_t)n);
    PU(config);
    PU(0);
    for (int i = 0; i < n; i++) {
        PS(ns[i].name, strlen(ns[i].name));
        PS(ns[i].v, 8);
        uint64_t np = 2 + 1 + (uint64_t)(ns[i].level + 1) * (version ? 3 : 2) + (uint64_t)ns[i].nlinks;
        PU(np);
        PU(ns[i].id);
        PU((uint64_t)version << 24 | ns[i].level);
        for (uint32_t l = 0; l <= ns[i].level; l++) {
            int nl = l ? 0 : ns[i].nlinks;
            PU((uint64_t)nl);
            PU(l ? 16 : 32 + (nl > 32 ? 16 : 0));
            for (int j = 0; j < nl; j++) PU(ns[i].links[j]);
            if (version) PU(0);
        }
        PU(0x3F800000);
    }
    rdb_put_len(&o, 0);
#undef PU
#undef PS
}

static void test_vset_redis_payloads(void) {
    struct hk_buf b = {0};
    /* Redis's valid payload (its restore test): loads, with the links. */
    struct hnode_spec good[] = {
        {"a", 1, 1, {2}, {1, 0}, 0}, {"b", 2, 2, {1, 3}, {0, 1}, 0}, {"c", 3, 1, {2}, {1, 1}, 0}};
    redis_vset(&b, good, 3, 1, 16 << 8);
    struct kv *e = must_load(&b, RDB_TYPE_MODULE_2, 12);
    if (e) {
        struct vset *vs = vset_of(e);
        CHECK_EQ_LL(vset_card(vs), 3);
        CHECK(vs->M == 16 && vs->dim == 2 && vs->quant == HNSW_QUANT_NONE);
        struct velem *el = vset_find(vs, "b", 1);
        const uint32_t *lk;
        CHECK(el && hnsw_links(vs->g, el->id, 0, &lk) == 2);
        kv_free(e);
    }
    /* The first serialization version (no farthest link), M 0 meaning 16,
     * ids far apart. */
    struct hnode_spec v0[] = {{"x", 1000000007ULL, 1, {77}, {1, 0}, 1}, {"y", 77, 1, {1000000007ULL}, {0, 1}, 1}};
    redis_vset(&b, v0, 2, 0, 0);
    e = must_load(&b, RDB_TYPE_MODULE_2, 12);
    if (e) {
        CHECK(vset_of(e)->M == 16 && hnsw_max_level(vset_of(e)->g) == 1);
        kv_free(e);
    }
    /* What Redis refuses: a repeated id, id 0, a level past 16, a repeated
     * name, a link to nowhere, a repeated link, a link to itself, an
     * empty set, a serialization version from the future. */
    struct hnode_spec dupid[] = {{"a", 1, 1, {2}, {1, 0}, 0}, {"b", 1, 0, {0}, {0, 1}, 0}, {"c", 2, 1, {1}, {1, 1}, 0}};
    redis_vset(&b, dupid, 3, 1, 16 << 8);
    CHECK(refused(b.p, b.len, RDB_TYPE_MODULE_2, 12));
    struct hnode_spec id0[] = {{"a", 0, 1, {2}, {1, 0}, 0}, {"b", 2, 1, {0}, {0, 1}, 0}};
    redis_vset(&b, id0, 2, 1, 16 << 8);
    CHECK(refused(b.p, b.len, RDB_TYPE_MODULE_2, 12));
    struct hnode_spec high[] = {{"a", 1, 1, {2}, {1, 0}, 32}, {"b", 2, 1, {1}, {0, 1}, 0}};
    redis_vset(&b, high, 2, 1, 16 << 8);
    CHECK(refused(b.p, b.len, RDB_TYPE_MODULE_2, 12));
    struct hnode_spec dupname[] = {{"same", 1, 1, {2}, {1, 0}, 0}, {"same", 2, 1, {1}, {0, 1}, 0}};
    redis_vset(&b, dupname, 2, 1, 16 << 8);
    CHECK(refused(b.p, b.len, RDB_TYPE_MODULE_2, 12));
    struct hnode_spec nowhere[] = {{"a", 1, 1, {9}, {1, 0}, 0}, {"b", 2, 0, {0}, {0, 1}, 0}};
    redis_vset(&b, nowhere, 2, 1, 16 << 8);
    CHECK(refused(b.p, b.len, RDB_TYPE_MODULE_2, 12));
    struct hnode_spec twice[] = {{"a", 1, 2, {2, 2}, {1, 0}, 0}, {"b", 2, 1, {1}, {0, 1}, 0}};
    redis_vset(&b, twice, 2, 1, 16 << 8);
    CHECK(refused(b.p, b.len, RDB_TYPE_MODULE_2, 12));
    struct hnode_spec self[] = {{"a", 1, 1, {1}, {1, 0}, 0}};
    redis_vset(&b, self, 1, 1, 16 << 8);
    CHECK(refused(b.p, b.len, RDB_TYPE_MODULE_2, 12));
    redis_vset(&b, good, 0, 1, 16 << 8);
    CHECK(refused(b.p, b.len, RDB_TYPE_MODULE_2, 12));
    redis_vset(&b, good, 3, 2, 16 << 8);
    CHECK(refused(b.p, b.len, RDB_TYPE_MODULE_2, 12));
    CHECK(rdb_module_id("vectorset", 0) == 0xbde72da2bb1eb400ULL);
    /* Redis's empty set payload (dim 2, no elements). */
    CHECK(refused(BYTES("\x81\xbd\xe7\x2d\xa2\xbb\x1e\xb4\x00\x02\x02\x02\x00\x02\x50\x00\x02\x00\x00"),
                  RDB_TYPE_MODULE_2, 12));
    /* Another module's value is named. */
    struct rdb_out o = {&b, 12, 0};
    b.len = 0;
    rdb_put_len(&o, rdb_module_id("othermodu", 0));
    char err[200];
    CHECK(!load_body(b.p, b.len, RDB_TYPE_MODULE_2, 12, 1, 0, err, sizeof(err)));
    CHECK(strstr(err, "othermodu") != NULL);

    /* A level-0 list over Redis's usual capacity (it loads up to 3M):
     * kept at HotKV's 2M, the nearest. */
    struct hnode_spec wide[41];
    memset(wide, 0, sizeof(wide));
    static char names[41][8];
    for (int i = 0; i < 41; i++) {
        snprintf(names[i], sizeof(names[i]), "n%d", i);
        wide[i].name = names[i];
        wide[i].id = (uint64_t)i + 1;
        wide[i].v[0] = 1;
        wide[i].v[1] = (float)i / 40;
        if (i == 0) {
            wide[i].nlinks = 40;
            for (int j = 0; j < 40; j++) wide[i].links[j] = (uint64_t)j + 2;
        } else {
            wide[i].nlinks = 1;
            wide[i].links[0] = 1;
        }
    }
    redis_vset(&b, wide, 41, 1, 16 << 8);
    e = must_load(&b, RDB_TYPE_MODULE_2, 12);
    if (e) {
        struct vset *vs = vset_of(e);
        struct velem *el = vset_find(vs, "n0", 2);
        const uint32_t *lk;
        CHECK(el && hnsw_links(vs->g, el->id, 0, &lk) == 32);
        /* The nearest (n1 .. n32) were kept. */
        struct velem *far = vset_find(vs, "n40", 3);
        int has_far = 0;
        for (int j = 0; j < 32 && el && far; j++) has_far |= lk[j] == far->id;
        CHECK(!has_far);
        kv_free(e);
    }
    hk_free(b.p);
}

static void test_vset_projection(void) {
    struct hk_buf b = {0};
    int type;
    struct kv *e = mkvset(32, 8, HNSW_QUANT_NONE, 4, 20, 0);
    save_body(e, 12, 0, &b, &type);
    /* The matrix is REDUCE's: row 1, column 1 is -1/sqrt(32). */
    struct rdb_in in;
    rdb_in_mem(&in, b.p, b.len, 12);
    uint64_t x;
    for (int i = 0; i < 1 + 2 * 4 + 2; i++) rdb_get_len(&in, &x, NULL);
    CHECK_EQ_LL(x, 32);
    size_t ml;
    rdb_get_len(&in, &x, NULL);
    char *m = rdb_get_string(&in, &ml);
    CHECK(m && ml == 32 * 8 * 4);
    if (m && ml == 32 * 8 * 4) {
        float f;
        memcpy(&f, m + (32 + 1) * 4, 4);
        CHECK(f == -(float)(1.0 / sqrt(32.0)));
        memcpy(&f, m, 4);
        CHECK(f == (float)(1.0 / sqrt(32.0)));
        /* Another matrix is refused: HotKV applies only REDUCE's. */
        size_t at = in.pos - ml + 7;
        b.p[at] ^= 0x01;
        CHECK(refused(b.p, b.len, type, 12));
        b.p[at] ^= 0x01;
    }
    hk_free(m);
    struct kv *l = must_load(&b, type, 12);
    if (l) {
        check_same_vset(e, l);
        /* The projection applied is the same. */
        float in_v[32], pa[8], pb[8];
        rand_vec(in_v, 32);
        vset_project(vset_of(e), in_v, pa);
        vset_project(vset_of(l), in_v, pb);
        CHECK(!memcmp(pa, pb, sizeof(pa)));
        kv_free(l);
    }
    kv_free(e);
    hk_free(b.p);
}

static void test_vset_robustness(void) {
    struct hk_buf b = {0};
    int type;
    struct kv *e = mkvset(4, 0, HNSW_QUANT_Q8, 4, 12, 1);
    save_body(e, 12, 0, &b, &type);
    hammer(&b, type, 12, 3000);
    kv_free(e);
    e = mkvset(16, 4, HNSW_QUANT_BIN, 4, 6, 0);
    save_body(e, 12, 0, &b, &type);
    hammer(&b, type, 12, 1000);
    kv_free(e);
    hk_free(b.p);
}

int main(void) {
    TEST_RUN(test_hash_bytes);
    TEST_RUN(test_hash_round_trips);
    TEST_RUN(test_hash_ttl_round_trips);
    TEST_RUN(test_hash_expired_fields);
    TEST_RUN(test_hash_legacy);
    TEST_RUN(test_hash_refused);
    TEST_RUN(test_hash_robustness);
    TEST_RUN(test_stream_bytes);
    TEST_RUN(test_stream_round_trips);
    TEST_RUN(test_stream_redis_payloads);
    TEST_RUN(test_stream_refused);
    TEST_RUN(test_stream_robustness);
    TEST_RUN(test_vset_round_trips);
    TEST_RUN(test_vset_redis_payloads);
    TEST_RUN(test_vset_projection);
    TEST_RUN(test_vset_robustness);
    return TEST_REPORT();
}
