/* string.c - the string type's lifecycle: integer, embedded and raw
 * encodings (kv.h has their layout). Command-level string helpers
 * (growing a value in place for APPEND and SETRANGE) are in
 * src/cmd/strval.h, since they replace keyspace entries. */
#include "../core/alloc.h"
#include "../core/util.h"
#include "digest.h"
#include "kv.h"
#include "rdb.h"
#include "types.h"

static void str_free(struct kv *e) {
    if (kv_enc(e) == ENC_RAW && !kv_raw_inline(e)) hk_free(kv_ptr(e));
}

static struct kv *str_dup(const struct kv *e, const char *key, size_t klen, long long expire) {
    if (kv_enc(e) == ENC_RAW && !kv_raw_inline(e)) {
        const struct rawstr *s = kv_ptr(e);
        return kv_new_ptr(key, klen, OBJ_STRING, ENC_RAW, rawstr_new(s->buf, s->len, s->len), expire);
    }
    return kv_copy(e, key, klen, expire);
}

static size_t str_usage(const struct kv *e, size_t samples) {
    (void)samples;
    return kv_enc(e) == ENC_RAW && !kv_raw_inline(e) ? hk_usable_size(kv_ptr(e)) : 0;
}

/* Integers are digested in their decimal form, as Redis decodes them. */
static void str_digest(const struct kv *e, unsigned char digest[20]) {
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    dg_mix(digest, p, len);
}

/* RDB_TYPE_STRING: an RDB string, integer-encoded when the value is the
 * decimal form of an int32 (an integer entry always is, if it fits). */
static int str_save(const struct kv *e, struct rdb_out *o) {
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    rdb_put_string(o, p, len);
    return 0;
}

/* The entry kv_new_str builds for the bytes read; a value too long for a
 * raw string's 32-bit length is refused. */
static struct kv *str_load(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire) {
    (void)rdb_type;
    size_t len;
    char *s = rdb_get_string(in, &len);
    if (!s) return NULL;
    if (len >= UINT32_MAX) {
        hk_free(s);
        rdb_fail(in, "String value of %zu bytes is too large", len);
        return NULL;
    }
    struct kv *e = kv_new_str(key, klen, s, len, expire);
    hk_free(s);
    return e;
}

const struct type_ops string_type_ops = {
    .name = "string",
    .free = str_free,
    .dup = str_dup,
    .usage = str_usage,
    .digest = str_digest,
    .save = str_save,
    .load = str_load,
};
