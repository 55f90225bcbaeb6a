/* kv.h - the compact key entry and the value encodings it holds.
 *
 * One allocation per key, from the slab (src/core/slab.h): the slab handle
 * of the next entry in its hash chain, 4 bytes of metadata (a 24-bit
 * LRU/LFU clock, the type and the encoding), a flags byte and the key
 * length, then an optional 8-byte expiry, the key bytes, and the value.
 * Short strings (up to 44 bytes, Redis's embstr limit) and integers live
 * inline in the entry, and so do longer strings while the entry stays
 * within SLAB_MAX (still the "raw" encoding, as Redis names it, with a
 * 4-byte length before the bytes); strings a command edits in place
 * (APPEND, SETRANGE, SETBIT, PFADD) and every aggregate live behind a
 * pointer. A key of 255 bytes or more lives behind a pointer too
 * (its length and the pointer take its place), so an entry never passes
 * SLAB_MAX. For a 10-byte key and a 16-byte value the entry is 36 bytes
 * (a 40-byte slab class), 44 with a TTL (48), plus a 4-byte bucket handle
 * in the table.
 *
 * An entry may move when its size changes (a new value, an expiry added or
 * removed): functions that can move it return the new address, and callers
 * must not keep the old one. Entries are protected by their shard's lock.
 *
 * The entry belongs to the types layer: the value types build and read
 * entries, and the keyspace above them (src/store/) links entries into its
 * tables and reaches their values only through this layer's functions. */
#ifndef HK_KV_H
#define HK_KV_H

#include "../core/slab.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Types, numbered as Redis numbers them. */
enum { OBJ_STRING = 0, OBJ_LIST = 1, OBJ_SET = 2, OBJ_ZSET = 3, OBJ_HASH = 4, OBJ_STREAM = 6, OBJ_VSET = 7 };
/* Encodings, numbered as Redis numbers them. */
enum {
    ENC_RAW = 0,
    ENC_INT = 1,
    ENC_HT = 2,
    ENC_INTSET = 6,
    ENC_SKIPLIST = 7,
    ENC_EMBSTR = 8,
    ENC_QUICKLIST = 9,
    ENC_STREAM = 10,
    ENC_LISTPACK = 11,
    /* A hash with at least one field TTL (hash.h): a listpack
     * (Redis's "listpackex") or a table ("hashtable"), with the TTLs in a
     * side table that plain hashes do not have. ENC_HT_EX is HotKV's. */
    ENC_LISTPACK_EX = 12,
    ENC_HT_EX = 13
};

#define KV_EMBSTR_MAX 44
#define KV_F_EXPIRE 1u
#define KV_F_BIGKEY 2u /* after the expiry: the key's length (uint32) and a pointer to it */
/* The upper six bits of flags hold an embstr's length (<= 44), so a short
 * string costs no length byte: a 10-byte key with a 16-byte value and a
 * TTL fits a 48-byte allocation. */
#define KV_EMBLEN_SHIFT 2
/* A raw string whose bytes are in the entry (ENC_RAW strings only, which
 * leave the embstr length bits free). */
#define KV_F_INLINE 4u

struct kv {
    slab_h next; /* the keyspace table's chain (src/store/ktable.h) */
    uint32_t meta; /* bits 0-23 clock, 24-26 type, 27 snapshot mark, 28-31 encoding */
    uint8_t flags;
    uint8_t klen; /* key length when < 255 */
    unsigned char data[];
};

/* A heap string for values that grow in place (APPEND, SETRANGE, SETBIT). */
struct rawstr {
    uint32_t len, cap;
    char buf[];
};

static inline int kv_type(const struct kv *e) { return (int)((e->meta >> 24) & 7); }
/* The snapshot mark (src/server/snapshot.h): an entry whose mark equals
 * the keyspace's current one is saved by the running snapshot, or was
 * linked after its cut; the keyspace sets it on every entry it links.
 * Copies of the metadata (kv_move) keep it. */
#define KV_SNAP_BIT (1u << 27)
static inline uint32_t kv_snap(const struct kv *e) { return e->meta & KV_SNAP_BIT; }
static inline void kv_set_snap(struct kv *e, uint32_t mark) { e->meta = (e->meta & ~KV_SNAP_BIT) | mark; }
static inline int kv_enc(const struct kv *e) { return (int)(e->meta >> 28); }
static inline uint32_t kv_clock(const struct kv *e) { return e->meta & 0xffffff; }
static inline void kv_set_clock(struct kv *e, uint32_t clk) { e->meta = (e->meta & 0xff000000u) | (clk & 0xffffff); }
static inline void kv_set_enc(struct kv *e, int enc) { e->meta = (e->meta & 0x0fffffffu) | ((uint32_t)enc << 28); }
static inline int kv_has_expire(const struct kv *e) { return e->flags & KV_F_EXPIRE; }
/* A hash whose fields carry TTLs (one compare: only hashes use 12-13). */
static inline int kv_hfe(const struct kv *e) { return (unsigned)kv_enc(e) - ENC_LISTPACK_EX < 2u; }
static inline long long kv_expire(const struct kv *e) {
    long long v = -1;
    if (e->flags & KV_F_EXPIRE) memcpy(&v, e->data, 8);
    return v;
}
static inline void kv_set_expire_field(struct kv *e, long long when) { memcpy(e->data, &when, 8); }
static inline size_t kv_keylen(const struct kv *e) {
    if (!(e->flags & KV_F_BIGKEY)) return e->klen;
    uint32_t l;
    memcpy(&l, e->data + ((e->flags & KV_F_EXPIRE) ? 8 : 0), 4);
    return l;
}
static inline const char *kv_key(const struct kv *e) {
    const unsigned char *p = e->data + ((e->flags & KV_F_EXPIRE) ? 8 : 0);
    if (__builtin_expect(e->flags & KV_F_BIGKEY, 0)) {
        const char *k;
        memcpy(&k, p + 4, sizeof(k));
        return k;
    }
    return (const char *)p;
}
static inline unsigned char *kv_val(const struct kv *e) {
    unsigned char *p = (unsigned char *)e->data + ((e->flags & KV_F_EXPIRE) ? 8 : 0);
    return p + ((e->flags & KV_F_BIGKEY) ? 4 + sizeof(char *) : e->klen);
}
static inline int kv_raw_inline(const struct kv *e) { return kv_enc(e) == ENC_RAW && (e->flags & KV_F_INLINE); }
/* Aggregates and raw strings not inline: the value pointer. */
static inline void *kv_ptr(const struct kv *e) {
    void *p;
    memcpy(&p, kv_val(e), sizeof(p));
    return p;
}
static inline void kv_set_ptr(struct kv *e, void *p) { memcpy(kv_val(e), &p, sizeof(p)); }

/* Allocate an entry; the value area (vsize bytes) is left for the caller. */
struct kv *kv_new(const char *key, size_t klen, int type, int enc, long long expire, size_t vsize);
/* Entry holding a string value, choosing int/embstr/raw as Redis does. */
struct kv *kv_new_str(const char *key, size_t klen, const char *val, size_t vlen, long long expire);
struct kv *kv_new_int(const char *key, size_t klen, long long v, long long expire);
/* Entry holding a string longer than KV_EMBSTR_MAX as "raw": in the entry
 * when it fits, else in a rawstr. */
struct kv *kv_new_raw(const char *key, size_t klen, const char *val, size_t vlen, long long expire);
/* Entry holding a short string inline (vlen <= KV_EMBSTR_MAX). */
struct kv *kv_new_embstr(const char *key, size_t klen, const char *val, size_t vlen, long long expire);
/* Entry holding an object pointer (aggregates, raw strings). */
struct kv *kv_new_ptr(const char *key, size_t klen, int type, int enc, void *ptr, long long expire);
/* A new entry for key/klen with expiry `expire` (-1 none) holding e's
 * value bytes as they are (an inline value is copied; an object pointer
 * is shared, so this is a deep copy only of inline values). */
struct kv *kv_copy(const struct kv *e, const char *key, size_t klen, long long expire);
/* A new entry for key/klen with expiry `expire` (-1 none) that takes over
 * e's value and access clock; e is freed without its value, so it must be
 * detached from its table (or be replaced by the caller). */
struct kv *kv_move(struct kv *e, const char *key, size_t klen, long long expire);
/* kv_move under the same key: a copy of e with a new expiry. */
struct kv *kv_with_expire(struct kv *e, long long expire);
/* Free the entry and its value. */
void kv_free(struct kv *e);
/* What freeing e's value costs, in allocations as Redis counts them
 * (lazyfreeGetFreeEffort): the nodes of a quicklist, the members of a
 * hash-table set or hash and of a skiplist sorted set; 1 for everything
 * that is one allocation (strings, listpacks, intsets). Constant time;
 * answered by the type's free_effort slot (types.h). */
size_t kv_free_effort(const struct kv *e);
/* Free the entry only (its value was moved elsewhere). */
void kv_free_shell(struct kv *e);
/* Size in bytes of the value area for e. */
size_t kv_val_size(const struct kv *e);

/* String values: pointer and length; integers are formatted into numbuf
 * (at least 21 bytes). */
void kv_str(const struct kv *e, char *numbuf, const char **p, size_t *len);
/* Store a string value into e in place when the result is exactly the
 * entry kv_new_str(key, val, vlen, expire) would build (same encoding, same
 * allocation sizes, a TTL present in both or neither): a SET that
 * overwrites a value of the same shape then costs no allocation. In two
 * halves, so the caller reports the write in between: whether the value
 * fits e's shape (changes nothing; *iv gets the integer of an
 * integer-encoded value), then the write itself. e's clock is left to the
 * caller. */
int kv_same_shape_str(const struct kv *e, const char *val, size_t vlen, long long expire, long long *iv);
void kv_write_str(struct kv *e, const char *val, size_t vlen, long long expire, long long iv);
/* Integer value of a string entry if it holds a canonical integer. */
int kv_str_ll(const struct kv *e, long long *v);
/* Make a string entry's value a raw heap string (for in-place updates);
 * returns the (possibly moved) entry. The rawstr has room for at least
 * `want` bytes. */
struct rawstr *rawstr_new(const char *p, size_t len, size_t cap);
struct rawstr *rawstr_reserve(struct rawstr *s, size_t want);

/* Value lifecycle by type, through the static table of types.h. */
/* Deep copy of e under another key (COPY): a new, unlinked entry. */
struct kv *kv_dup(const struct kv *e, const char *key, size_t klen, long long expire);
/* The share of the keyspace table's bucket arrays MEMORY USAGE counts with
 * each key (one bucket handle); INFO counts what the arrays hold beyond
 * it as the table's overhead. */
#define KV_BUCKET_SHARE sizeof(slab_h)
/* Bytes of the entry, its table slot and its value (MEMORY USAGE). */
size_t kv_usage(const struct kv *e, size_t samples);
/* TYPE's name of a type ("string", "list", ...). */
const char *obj_type_name(int type);
const char *obj_enc_name(int enc);
/* Mix entry e (its key, type, value and whether it has a TTL) into a
 * fresh 20-byte digest, as Redis's DEBUG DIGEST does for one key. */
void kv_digest(const struct kv *e, unsigned char digest[20]);
/* The value part of kv_digest only (DEBUG DIGEST-VALUE). */
void kv_digest_value(const struct kv *e, unsigned char digest[20]);

#endif
