/* set.h - the SET value: its three encodings and the operations on them.
 *
 * A set value is an intset (only integers, at most set-max-intset-entries),
 * a listpack (at most set-max-listpack-entries members of at most
 * set-max-listpack-value bytes) or a hash table of members. Conversions only
 * go towards the bigger encoding while a set lives, as in Redis 7.2; only a
 * freshly computed result (setv_maybe_intset) may start small again. A
 * value being worked on is a `struct setv` (encoding plus pointer) taken
 * from its key entry with setv_of(); operations may change both, and
 * setv_store() writes them back. Members come out as `struct lp_val`s:
 * lp_val_ptr() (core/listpack.h) gives their bytes whatever the encoding.
 * This module knows nothing of clients, replies or the keyspace: reporting
 * a change (through the pre_change a mutator takes), and putting or
 * deleting a key, are the caller's (src/cmd/set.c). The caller also holds
 * the lock of the shard the value lives in. */
#ifndef HK_TYPES_SET_H
#define HK_TYPES_SET_H

#include "../core/htable.h"
#include "../core/listpack.h"
#include "kv.h"
#include "types.h"

#include <stddef.h>
#include <stdint.h>

struct setv {
    int enc; /* ENC_INTSET, ENC_LISTPACK or ENC_HT */
    void *p;
};

/* The value of a set entry (no copy: it still belongs to the entry). */
static inline struct setv setv_of(const struct kv *e) {
    struct setv o = {kv_enc(e), kv_ptr(e)};
    return o;
}
/* Write a value that an operation may have moved or re-encoded back to its
 * entry (the entry itself does not move). */
static inline void setv_store(struct kv *e, const struct setv *o) {
    kv_set_ptr(e, o->p);
    kv_set_enc(e, o->enc);
}
/* An empty set in `enc` (ENC_INTSET, ENC_LISTPACK or ENC_HT), owned by the
 * caller (setv_free, or setv_entry to hand it to a key). */
struct setv setv_new(int enc);
/* An empty set able to hold `first` in the smallest encoding that fits
 * `hint` members (Redis's setTypeCreate); owned by the caller. */
struct setv setv_create(const char *first, size_t len, uint64_t hint);
/* A new, unlinked entry for key/klen without expiry that takes over o. */
struct kv *setv_entry(const char *key, size_t klen, const struct setv *o);
/* Free the value; o->p is NULL afterwards. */
void setv_free(struct setv *o);

uint64_t setv_size(const struct setv *o);
/* 1 when s/len is a member. May finish a pending rehash of the table. */
int setv_has(const struct setv *o, const char *s, size_t len);
/* Same for a member read from another set (no re-parse of integers). */
int setv_has_val(const struct setv *o, const struct lp_val *v);
/* Add s/len; returns 1 when it was not a member, calling pre_change(pc)
 * first. May convert o (intset -> listpack or hash table, listpack -> hash
 * table) and move o->p: members read from o before the call are invalid
 * after it. */
int setv_add(struct setv *o, const char *s, size_t len, struct pre_change *pc);
/* setv_add of a member read from another set (v must not point into o). */
int setv_add_val(struct setv *o, const struct lp_val *v);
/* Remove s/len; returns 1 when it was a member, calling pre_change(pc)
 * first. s may point into o itself (a member just read from it): it is not
 * read after the removal. May move o->p; never changes the encoding. */
int setv_remove(struct setv *o, const char *s, size_t len, struct pre_change *pc);
/* Re-encode o in `enc`: a bigger encoding, or ENC_INTSET when every member
 * is an integer. Moves o->p. */
void setv_convert(struct setv *o, int enc);
/* Before adding up to `hint` members to an existing set: go to the hash
 * table at once when they could not fit the small encoding, as Redis 7.2
 * does (even if most turn out to be members already). */
void setv_maybe_convert(struct setv *o, uint64_t hint);
/* A freshly built result whose members are all integers, and few enough,
 * becomes an intset (so OBJECT ENCODING matches Redis after SINTERSTORE). */
void setv_maybe_intset(struct setv *o);
/* A uniformly random member of a non-empty set into *v, valid until the
 * set changes. For a hash table v->s points at the member's stored bytes,
 * so the address names the member while the set does not change
 * (SRANDMEMBER skips repeats by it); an integer of the other encodings is
 * in v->buf (lp_val_ptr). The small encodings index a member directly; a
 * hash table uses the fair sampler of core/htable.h. */
void setv_random(const struct setv *o, struct lp_val *v);
/* The same for a series of about `picks` draws from one set (the sampler
 * of a hash table is set up once); the set may lose members between
 * draws (SPOP) but must not be empty at a draw. */
struct setv_rand {
    const struct setv *o;
    uint64_t picks;
    int ready;
    struct ht_sampler hs;
};
void setv_rand_init(struct setv_rand *r, const struct setv *o, uint64_t picks);
void setv_rand_next(struct setv_rand *r, struct lp_val *v);

/* Iteration in storage order (ascending for intsets). The set must not
 * change while an iterator is live; lookups in the same set are allowed
 * (init finishes any rehash so that they move nothing). */
struct setv_iter {
    const struct setv *o;
    uint32_t i;
    size_t pos;
    struct ht_iter hi;
};
void setv_iter_init(struct setv_iter *it, const struct setv *o);
/* The next member into *v (valid until the set changes); 0 at the end. */
int setv_iter_next(struct setv_iter *it, struct lp_val *v);
/* fn for every member (s valid only during the call), in storage order. */
void setv_foreach(const struct setv *o, void (*fn)(const char *s, size_t len, void *ctx), void *ctx);
/* One step of SSCAN's reverse-binary cursor over a hash-table set
 * (o->enc == ENC_HT): fn gets each member of one bucket, s pointing at its
 * stored bytes (valid while the set does not change). Returns the next
 * cursor, 0 when the scan is complete. */
uint64_t setv_scan(const struct setv *o, uint64_t cursor, void (*fn)(const char *s, size_t len, void *ctx),
                   void *ctx);

#endif
