/* setval.h - read-only access to SET values for other command families
 * (ZUNION/ZINTER/ZDIFF accept plain sets as inputs, with score 1).
 *
 * The entry must be of type OBJ_SET and its shard locked by the caller;
 * members are passed as bytes (integers of an intset in decimal form,
 * valid only during the callback). Nothing here modifies a set. These are
 * thin entry-level wrappers over the value API in src/types/set.h. */
#ifndef HK_SETVAL_H
#define HK_SETVAL_H

#include "../store/kv.h"
#include "../types/set.h"

#include <stddef.h>
#include <stdint.h>

/* Number of members. */
static inline uint64_t set_value_size(const struct kv *e) {
    struct setv o = setv_of(e);
    return setv_size(&o);
}
/* 1 when s/len is a member. */
static inline int set_value_has(const struct kv *e, const char *s, size_t len) {
    struct setv o = setv_of(e);
    return setv_has(&o, s, len);
}
/* Call fn for every member, in storage order (ascending for intsets). */
static inline void set_value_foreach(const struct kv *e, void (*fn)(const char *s, size_t len, void *ctx),
                                     void *ctx) {
    struct setv o = setv_of(e);
    setv_foreach(&o, fn, ctx);
}

#endif
