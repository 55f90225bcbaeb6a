/* ktable.h - the keyspace's hash table: the table of htable.h with key
 * entries (struct kv, src/types/kv.h) for nodes and 4-byte slab handles
 * (src/core/slab.h) for links, so a key costs 4 bytes of chain link in its
 * entry and 4 per bucket, where pointers would take 8 each. The functions
 * are htable.h's with the kt_ prefix and the same contract. */
#ifndef HK_KTABLE_H
#define HK_KTABLE_H

#include "../core/htable.h"
#include "../core/slab.h"
#include "../types/kv.h"

#include <stddef.h>
#include <stdint.h>

#define HT_(x) kt_##x
#define HT_TABLE ktable
#define HT_ITER kt_iter
#define HT_NODE struct kv
#define HT_LINK slab_h
#define HT_NIL 0
#define HT_DEREF(l) ((struct kv *)slab_ptr(l))
#define HT_REF(n) slab_handle(n)
#include "../core/htable_tmpl.h"
#ifndef KT_INSTANTIATE
#include "../core/htable_undef.h"
#endif

#endif
