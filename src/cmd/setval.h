/* setval.h - read-only access to SET values for other command families
 * (ZUNION/ZINTER/ZDIFF accept plain sets as inputs, with score 1).
 *
 * The entry must be of type OBJ_SET and its shard locked by the caller;
 * members are passed as bytes (integers of an intset in decimal form,
 * valid only during the callback). Nothing here modifies a set. */
#ifndef HK_SETVAL_H
#define HK_SETVAL_H

#include "../store/kv.h"

#include <stddef.h>
#include <stdint.h>

/* Number of members. */
uint64_t set_value_size(const struct kv *e);
/* 1 when s/len is a member. */
int set_value_has(const struct kv *e, const char *s, size_t len);
/* Call fn for every member, in storage order (ascending for intsets). */
void set_value_foreach(const struct kv *e, void (*fn)(const char *s, size_t len, void *ctx), void *ctx);

#endif
