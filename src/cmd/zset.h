/* zset.h - what the command files that serve sorted sets share (zset.c,
 * zset_ops.c, geo.c, blocking_cmd.c): storing a built result under a key
 * and the pop-and-reply core of ZPOP/ZMPOP/BZMPOP. The value itself (its
 * encodings, operations and iterator) is src/types/zset.h; this is only
 * the part that touches the keyspace and the reply. */
#ifndef HK_CMD_ZSET_H
#define HK_CMD_ZSET_H

#include "../core/skiplist.h"
#include "../server/exec.h"
#include "../store/db.h"
#include "../types/kv.h"
#include "../types/zset.h"

/* A new, empty zset stored as key k (reporting ev), encoded for the
 * members about to be added: size_hint of them, the longest maxlen_hint
 * bytes. Returns the entry. */
struct kv *zs_create(struct keyref *k, unsigned long size_hint, size_t maxlen_hint, int ev);
/* Store z as key k, replacing any value and reporting ev, encoded for its
 * size; an empty z deletes the key instead (reporting KEV_DEL when it
 * existed). Takes z. */
void zs_store_result(struct cmd_ctx *c, struct keyref *k, struct zsl *z, int ev);
/* Pop up to count members of e (key k, a zset) from the top when max and
 * reply them: flat pairs, nested pairs, or with emitkey ZMPOP's
 * [key, [[m, s]...]], which also propagates as ZPOPMIN/ZPOPMAX key n.
 * Reports the pop before changing e and deletes the key when it empties
 * (a change per member popped, none for the deletion); e must not be
 * used afterwards. */
void zpop_reply(struct cmd_ctx *c, struct keyref *k, struct kv *e, int max, long long count, int nested, int emitkey);

#endif
