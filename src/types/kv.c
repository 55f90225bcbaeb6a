/* kv.c - key entries and value encodings; see kv.h for the layout. */
#include "kv.h"

#include "../core/alloc.h"
#include "../core/util.h"
#include "digest.h"
#include "types.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

/* The table entry of e's type. Entries are only ever created for types
 * the table has, so a missing one is a corrupted entry. */
static const struct type_ops *ops_of(const struct kv *e) {
    const struct type_ops *t = type_table[kv_type(e)];
    if (!t) {
        fprintf(stderr, "kv: entry of unknown type %d\n", kv_type(e));
        abort();
    }
    return t;
}

static size_t header_size(size_t klen, long long expire) {
    return offsetof(struct kv, data) + (expire >= 0 ? 8 : 0) + (klen >= 255 ? 4 + sizeof(char *) : klen);
}

struct kv *kv_new(const char *key, size_t klen, int type, int enc, long long expire, size_t vsize) {
    size_t hs = header_size(klen, expire);
    struct kv *e = slab_alloc(hs + vsize);
    if (!e) {
        fprintf(stderr, "hotkv: the keyspace's address range is exhausted\n");
        abort();
    }
    e->next = 0;
    e->meta = ((uint32_t)enc << 28) | ((uint32_t)type << 24);
    e->flags = 0;
    unsigned char *p = e->data;
    if (expire >= 0) {
        e->flags |= KV_F_EXPIRE;
        memcpy(p, &expire, 8);
        p += 8;
    }
    if (klen >= 255) {
        uint32_t l = (uint32_t)klen;
        char *k = hk_malloc(klen);
        memcpy(k, key, klen);
        e->flags |= KV_F_BIGKEY;
        e->klen = 255;
        memcpy(p, &l, 4);
        memcpy(p + 4, &k, sizeof(k));
    } else {
        e->klen = (uint8_t)klen;
        memcpy(p, key, klen);
    }
    return e;
}

struct rawstr *rawstr_new(const char *p, size_t len, size_t cap) {
    if (cap < len) cap = len;
    struct rawstr *s = hk_malloc(sizeof(*s) + cap + 1);
    /* Use whatever the allocator's size class gives us. */
    size_t usable = hk_usable_size(s) - sizeof(*s) - 1;
    if (usable > UINT32_MAX) usable = UINT32_MAX;
    s->cap = (uint32_t)usable;
    s->len = (uint32_t)len;
    if (len) memcpy(s->buf, p, len);
    s->buf[len] = '\0';
    return s;
}

struct rawstr *rawstr_reserve(struct rawstr *s, size_t want) {
    if (want <= s->cap) return s;
    size_t ncap = want < 1024 * 1024 ? want * 2 : want + 1024 * 1024;
    s = hk_realloc(s, sizeof(*s) + ncap + 1);
    size_t usable = hk_usable_size(s) - sizeof(*s) - 1;
    if (usable > UINT32_MAX) usable = UINT32_MAX;
    s->cap = (uint32_t)usable;
    return s;
}

struct kv *kv_new_int(const char *key, size_t klen, long long v, long long expire) {
    struct kv *e = kv_new(key, klen, OBJ_STRING, ENC_INT, expire, 8);
    memcpy(kv_val(e), &v, 8);
    return e;
}

struct kv *kv_new_ptr(const char *key, size_t klen, int type, int enc, void *ptr, long long expire) {
    struct kv *e = kv_new(key, klen, type, enc, expire, sizeof(void *));
    kv_set_ptr(e, ptr);
    return e;
}

struct kv *kv_new_embstr(const char *key, size_t klen, const char *val, size_t vlen, long long expire) {
    struct kv *e = kv_new(key, klen, OBJ_STRING, ENC_EMBSTR, expire, vlen);
    e->flags |= (uint8_t)(vlen << KV_EMBLEN_SHIFT);
    memcpy(kv_val(e), val, vlen);
    return e;
}

/* Whether a raw string of vlen bytes for this key fits in the entry. */
static int raw_fits(size_t klen, size_t vlen, long long expire) {
    return header_size(klen, expire) + 4 + vlen <= SLAB_MAX;
}

struct kv *kv_new_raw(const char *key, size_t klen, const char *val, size_t vlen, long long expire) {
    if (!raw_fits(klen, vlen, expire)) return kv_new_ptr(key, klen, OBJ_STRING, ENC_RAW, rawstr_new(val, vlen, vlen), expire);
    struct kv *e = kv_new(key, klen, OBJ_STRING, ENC_RAW, expire, 4 + vlen);
    e->flags |= KV_F_INLINE;
    uint32_t l = (uint32_t)vlen;
    memcpy(kv_val(e), &l, 4);
    memcpy(kv_val(e) + 4, val, vlen);
    return e;
}

/* The encoding kv_new_str would pick for val, and its integer. */
static int str_encoding(const char *val, size_t vlen, long long *v) {
    if (vlen <= 20 && hk_str2ll(val, vlen, v)) return ENC_INT;
    return vlen <= KV_EMBSTR_MAX ? ENC_EMBSTR : ENC_RAW;
}

int kv_same_shape_str(const struct kv *e, const char *val, size_t vlen, long long expire, long long *iv) {
    if (kv_type(e) != OBJ_STRING || (expire >= 0) != (kv_has_expire(e) != 0)) return 0;
    *iv = 0;
    int enc = str_encoding(val, vlen, iv);
    if (kv_enc(e) != enc) return 0;
    /* Another length would be another allocation size. */
    if (enc == ENC_EMBSTR) return (size_t)(e->flags >> KV_EMBLEN_SHIFT) == vlen;
    if (enc != ENC_RAW) return 1;
    /* In the entry: the same length. */
    if (raw_fits(kv_keylen(e), vlen, expire)) {
        uint32_t l;
        if (!kv_raw_inline(e)) return 0;
        memcpy(&l, kv_val(e), 4);
        return l == vlen;
    }
    if (kv_raw_inline(e)) return 0;
    /* Only a buffer of the size class rawstr_new would pick: one grown by
     * APPEND keeps its slack otherwise (MEMORY USAGE would show it). */
    return hk_usable_size(kv_ptr(e)) == hk_good_size(sizeof(struct rawstr) + vlen + 1);
}

void kv_write_str(struct kv *e, const char *val, size_t vlen, long long expire, long long iv) {
    switch (kv_enc(e)) {
    case ENC_INT: memcpy(kv_val(e), &iv, 8); break;
    case ENC_EMBSTR: memcpy(kv_val(e), val, vlen); break;
    default: {
        if (kv_raw_inline(e)) {
            memcpy(kv_val(e) + 4, val, vlen);
            break;
        }
        struct rawstr *s = kv_ptr(e);
        memcpy(s->buf, val, vlen);
        s->buf[vlen] = '\0';
        s->len = (uint32_t)vlen;
    }
    }
    if (expire >= 0) kv_set_expire_field(e, expire);
}

struct kv *kv_new_str(const char *key, size_t klen, const char *val, size_t vlen, long long expire) {
    long long v;
    /* Integers that print back to the same bytes are stored as integers. */
    if (vlen <= 20 && hk_str2ll(val, vlen, &v)) return kv_new_int(key, klen, v, expire);
    if (vlen <= KV_EMBSTR_MAX) return kv_new_embstr(key, klen, val, vlen, expire);
    return kv_new_raw(key, klen, val, vlen, expire);
}

size_t kv_val_size(const struct kv *e) {
    if (kv_type(e) == OBJ_STRING) {
        if (kv_enc(e) == ENC_INT) return 8;
        if (kv_enc(e) == ENC_EMBSTR) return e->flags >> KV_EMBLEN_SHIFT;
        if (kv_raw_inline(e)) {
            uint32_t l;
            memcpy(&l, kv_val(e), 4);
            return 4 + (size_t)l;
        }
    }
    return sizeof(void *);
}

struct kv *kv_copy(const struct kv *e, const char *key, size_t klen, long long expire) {
    size_t vs = kv_val_size(e);
    struct kv *n = kv_new(key, klen, kv_type(e), kv_enc(e), expire, vs);
    n->flags |= e->flags & ~(uint8_t)(KV_F_EXPIRE | KV_F_BIGKEY);
    memcpy(kv_val(n), kv_val(e), vs);
    return n;
}

struct kv *kv_move(struct kv *e, const char *key, size_t klen, long long expire) {
    struct kv *n = kv_copy(e, key, klen, expire);
    n->meta = e->meta;
    kv_free_shell(e);
    return n;
}

struct kv *kv_with_expire(struct kv *e, long long expire) { return kv_move(e, kv_key(e), kv_keylen(e), expire); }

void kv_free_shell(struct kv *e) {
    if (e->flags & KV_F_BIGKEY) hk_free((char *)kv_key(e));
    slab_free(e);
}

void kv_free(struct kv *e) {
    ops_of(e)->free(e);
    kv_free_shell(e);
}

size_t kv_free_effort(const struct kv *e) {
    const struct type_ops *t = ops_of(e);
    return t->free_effort ? t->free_effort(e) : 1;
}

void kv_str(const struct kv *e, char *numbuf, const char **p, size_t *len) {
    switch (kv_enc(e)) {
    case ENC_INT: {
        long long v;
        memcpy(&v, kv_val(e), 8);
        *len = (size_t)hk_ll2str(numbuf, v);
        *p = numbuf;
        return;
    }
    case ENC_EMBSTR:
        *len = e->flags >> KV_EMBLEN_SHIFT;
        *p = (const char *)kv_val(e);
        return;
    default: {
        if (kv_raw_inline(e)) {
            uint32_t l;
            memcpy(&l, kv_val(e), 4);
            *len = l;
            *p = (const char *)kv_val(e) + 4;
            return;
        }
        const struct rawstr *s = kv_ptr(e);
        *len = s->len;
        *p = s->buf;
        return;
    }
    }
}

int kv_str_ll(const struct kv *e, long long *v) {
    if (kv_enc(e) == ENC_INT) {
        memcpy(v, kv_val(e), 8);
        return 1;
    }
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    return hk_str2ll(p, len, v);
}

struct kv *kv_dup(const struct kv *e, const char *key, size_t klen, long long expire) {
    return ops_of(e)->dup(e, key, klen, expire);
}

size_t kv_usage(const struct kv *e, size_t samples) {
    size_t key = (e->flags & KV_F_BIGKEY) ? hk_usable_size((char *)kv_key(e)) : 0;
    return slab_usable(e) + KV_BUCKET_SHARE + key + ops_of(e)->usage(e, samples);
}

const char *obj_type_name(int type) {
    return type >= 0 && type < OBJ_TYPE_MAX && type_table[type] ? type_table[type]->name : "unknown";
}

const char *obj_enc_name(int enc) {
    switch (enc) {
    case ENC_RAW: return "raw";
    case ENC_INT: return "int";
    case ENC_HT: return "hashtable";
    case ENC_INTSET: return "intset";
    case ENC_SKIPLIST: return "skiplist";
    case ENC_EMBSTR: return "embstr";
    case ENC_QUICKLIST: return "quicklist";
    case ENC_STREAM: return "stream";
    case ENC_LISTPACK: return "listpack";
    case ENC_LISTPACK_EX: return "listpackex";
    case ENC_HT_EX: return "hashtable";
    default: return "unknown";
    }
}

void kv_digest_value(const struct kv *e, unsigned char digest[20]) {
    /* As Redis: the type (network order), the value, and a marker when
     * the key has a TTL (not its time, so a replica or a replay whose
     * clock differs still matches). */
    uint32_t t = htonl((uint32_t)kv_type(e));
    dg_mix(digest, &t, sizeof(t));
    ops_of(e)->digest(e, digest);
    if (kv_has_expire(e)) dg_xor(digest, "!!expire!!", 10);
}

void kv_digest(const struct kv *e, unsigned char digest[20]) {
    memset(digest, 0, 20);
    dg_mix(digest, kv_key(e), kv_keylen(e));
    kv_digest_value(e, digest);
}
