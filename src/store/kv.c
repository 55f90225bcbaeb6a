/* kv.c - key entries and value encodings; see kv.h for the layout. */
#include "kv.h"

#include "../core/alloc.h"
#include "../core/util.h"

static const struct obj_ops *ops_by_type[8];

void obj_register(int type, const struct obj_ops *ops) { ops_by_type[type] = ops; }

static size_t header_size(size_t klen, long long expire) {
    return offsetof(struct kv, data) + (expire >= 0 ? 8 : 0) + (klen >= 255 ? 4 : 0) + klen;
}

struct kv *kv_new(const char *key, size_t klen, int type, int enc, long long expire, size_t vsize) {
    size_t hs = header_size(klen, expire);
    struct kv *e = hk_malloc(hs + vsize);
    e->node.next = NULL;
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
        e->flags |= KV_F_BIGKEY;
        e->klen = 255;
        memcpy(p, &l, 4);
        p += 4;
    } else {
        e->klen = (uint8_t)klen;
    }
    memcpy(p, key, klen);
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

int kv_overwrite_str(struct kv *e, const char *val, size_t vlen, long long expire) {
    if (kv_type(e) != OBJ_STRING || (expire >= 0) != (kv_has_expire(e) != 0)) return 0;
    long long v = 0;
    int enc = vlen <= 20 && hk_str2ll(val, vlen, &v) ? ENC_INT : vlen <= KV_EMBSTR_MAX ? ENC_EMBSTR : ENC_RAW;
    if (kv_enc(e) != enc) return 0;
    if (enc == ENC_INT) {
        memcpy(kv_val(e), &v, 8);
    } else if (enc == ENC_EMBSTR) {
        /* Another length would be another allocation size. */
        if ((size_t)(e->flags >> KV_EMBLEN_SHIFT) != vlen) return 0;
        memcpy(kv_val(e), val, vlen);
    } else {
        struct rawstr *s = kv_ptr(e);
        /* Only a buffer of the size class rawstr_new would pick: one grown
         * by APPEND keeps its slack otherwise (MEMORY USAGE would show it). */
        if (hk_usable_size(s) != hk_good_size(sizeof(*s) + vlen + 1)) return 0;
        memcpy(s->buf, val, vlen);
        s->buf[vlen] = '\0';
        s->len = (uint32_t)vlen;
    }
    if (expire >= 0) kv_set_expire_field(e, expire);
    return 1;
}

struct kv *kv_new_str(const char *key, size_t klen, const char *val, size_t vlen, long long expire) {
    long long v;
    /* Integers that print back to the same bytes are stored as integers. */
    if (vlen <= 20 && hk_str2ll(val, vlen, &v)) return kv_new_int(key, klen, v, expire);
    if (vlen <= KV_EMBSTR_MAX) return kv_new_embstr(key, klen, val, vlen, expire);
    return kv_new_ptr(key, klen, OBJ_STRING, ENC_RAW, rawstr_new(val, vlen, vlen), expire);
}

size_t kv_val_size(const struct kv *e) {
    if (kv_type(e) == OBJ_STRING) {
        if (kv_enc(e) == ENC_INT) return 8;
        if (kv_enc(e) == ENC_EMBSTR) return e->flags >> KV_EMBLEN_SHIFT;
    }
    return sizeof(void *);
}

struct kv *kv_move(struct kv *e, const char *key, size_t klen, long long expire) {
    size_t vs = kv_val_size(e);
    struct kv *n = kv_new(key, klen, kv_type(e), kv_enc(e), expire, vs);
    n->meta = e->meta;
    n->flags |= e->flags & ~(uint8_t)(KV_F_EXPIRE | KV_F_BIGKEY);
    memcpy(kv_val(n), kv_val(e), vs);
    kv_free_shell(e);
    return n;
}

struct kv *kv_with_expire(struct kv *e, long long expire) { return kv_move(e, kv_key(e), kv_keylen(e), expire); }

void kv_free_shell(struct kv *e) { hk_free(e); }

void kv_free(struct kv *e) {
    int t = kv_type(e), enc = kv_enc(e);
    if (t == OBJ_STRING) {
        if (enc == ENC_RAW) hk_free(kv_ptr(e));
    } else if (ops_by_type[t] && ops_by_type[t]->free) {
        ops_by_type[t]->free(kv_ptr(e), enc);
    }
    hk_free(e);
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
    int t = kv_type(e), enc = kv_enc(e);
    if (t == OBJ_STRING) {
        if (enc == ENC_RAW) {
            const struct rawstr *s = kv_ptr(e);
            return kv_new_ptr(key, klen, t, enc, rawstr_new(s->buf, s->len, s->len), expire);
        }
        size_t vs = kv_val_size(e);
        struct kv *n = kv_new(key, klen, t, enc, expire, vs);
        n->flags |= e->flags & ~(uint8_t)(KV_F_EXPIRE | KV_F_BIGKEY);
        memcpy(kv_val(n), kv_val(e), vs);
        return n;
    }
    void *copy = ops_by_type[t]->dup(kv_ptr(e), enc);
    return kv_new_ptr(key, klen, t, enc, copy, expire);
}

size_t kv_usage(const struct kv *e, size_t samples) {
    size_t n = hk_usable_size((void *)e) + sizeof(struct hnode *);
    int t = kv_type(e), enc = kv_enc(e);
    if (t == OBJ_STRING) {
        if (enc == ENC_RAW) n += hk_usable_size(kv_ptr(e));
    } else if (ops_by_type[t] && ops_by_type[t]->usage) {
        n += ops_by_type[t]->usage(kv_ptr(e), enc, samples);
    }
    return n;
}

const char *obj_type_name(int type) {
    switch (type) {
    case OBJ_STRING: return "string";
    case OBJ_LIST: return "list";
    case OBJ_SET: return "set";
    case OBJ_ZSET: return "zset";
    case OBJ_HASH: return "hash";
    case OBJ_STREAM: return "stream";
    case OBJ_VSET: return "vectorset";
    default: return "unknown";
    }
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
    default: return "unknown";
    }
}
