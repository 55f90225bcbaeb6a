/* rdblen.c - plain RDB length of a value; see rdblen.h. */
#include "rdblen.h"

#include "../core/listpack.h"
#include "../core/status.h"
#include "../core/util.h"
#include "hash.h"
#include "kv.h"
#include "list.h"
#include "set.h"
#include "zset.h"

#include <stdint.h>
#include <string.h>

/* RDB length prefix: 1, 2, 5 or 9 bytes. */
static size_t len_len(uint64_t n) {
    if (n < 64) return 1;
    if (n < 16384) return 2;
    if (n <= UINT32_MAX) return 5;
    return 9;
}

/* A string as rdbSaveRawString writes it uncompressed: strings of up to
 * 11 bytes that are the canonical form of an integer fitting in 32 bits
 * take the integer encodings (1+1, 1+2 or 1+4 bytes). */
static size_t str_len(const char *s, size_t len) {
    long long v;
    if (len <= 11 && hk_str2ll(s, len, &v)) {
        char buf[HK_LONG_STR_SIZE];
        int n = hk_ll2str(buf, v);
        if ((size_t)n == len && memcmp(buf, s, len) == 0) {
            if (v >= -128 && v <= 127) return 2;
            if (v >= -32768 && v <= 32767) return 3;
            if (v >= INT32_MIN && v <= INT32_MAX) return 5;
        }
    }
    return len_len(len) + len;
}

static void add_member(const char *s, size_t len, void *ctx) { *(size_t *)ctx += str_len(s, len); }

static void add_pair(void *ctx, const char *f, size_t fl, const char *v, size_t vl) {
    *(size_t *)ctx += str_len(f, fl) + str_len(v, vl);
}

size_t rdb_value_len(struct kv *e) {
    size_t n = 0;
    switch (kv_type(e)) {
    case OBJ_STRING: {
        char num[HK_LONG_STR_SIZE];
        const char *p;
        size_t len;
        kv_str(e, num, &p, &len);
        return str_len(p, len);
    }
    case OBJ_LIST: {
        struct listv v;
        listv_open(&v, e);
        n = len_len(listv_len(&v));
        struct ql_cur cur;
        struct lp_val val;
        for (int st = ql_cur_seek(&cur, v.ql, 0); st == HK_OK && cur.pos != LP_NONE; ql_cur_next(&cur)) {
            ql_cur_get(&cur, &val);
            n += str_len(val.s, val.len);
        }
        /* Compresses again a node the walk decompressed. */
        listv_done(&v);
        return n;
    }
    case OBJ_SET: {
        struct setv o = setv_of(e);
        n = len_len(setv_size(&o));
        setv_foreach(&o, add_member, &n);
        return n;
    }
    case OBJ_ZSET: {
        n = len_len(zs_len(e));
        struct zit it;
        zit_init(&it, e);
        for (zit_seek(&it, 0); zit_valid(&it); zit_next(&it)) {
            const char *m;
            size_t l;
            zit_get(&it, &m, &l, NULL);
            n += str_len(m, l) + 8; /* the score as a binary double */
        }
        return n;
    }
    case OBJ_HASH:
        n = len_len(hashv_len(e));
        hashv_each(e, add_pair, &n);
        return n;
    }
    return 0;
}
