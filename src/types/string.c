/* string.c - the string type's lifecycle: integer, embedded and raw
 * encodings (kv.h has their layout). Command-level string helpers
 * (growing a value in place for APPEND and SETRANGE) are in
 * src/cmd/strval.h, since they replace keyspace entries. */
#include "../core/alloc.h"
#include "../core/util.h"
#include "digest.h"
#include "kv.h"
#include "types.h"

static void str_free(struct kv *e) {
    if (kv_enc(e) == ENC_RAW) hk_free(kv_ptr(e));
}

static struct kv *str_dup(const struct kv *e, const char *key, size_t klen, long long expire) {
    if (kv_enc(e) == ENC_RAW) {
        const struct rawstr *s = kv_ptr(e);
        return kv_new_ptr(key, klen, OBJ_STRING, ENC_RAW, rawstr_new(s->buf, s->len, s->len), expire);
    }
    return kv_copy(e, key, klen, expire);
}

static size_t str_usage(const struct kv *e, size_t samples) {
    (void)samples;
    return kv_enc(e) == ENC_RAW ? hk_usable_size(kv_ptr(e)) : 0;
}

/* Integers are digested in their decimal form, as Redis decodes them. */
static void str_digest(const struct kv *e, unsigned char digest[20]) {
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    dg_mix(digest, p, len);
}

const struct type_ops string_type_ops = {
    .name = "string", .free = str_free, .dup = str_dup, .usage = str_usage, .digest = str_digest,
};
