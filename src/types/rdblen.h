/* rdblen.h - the length of a value in Redis's RDB format, for DEBUG
 * OBJECT's serializedlength.
 *
 * HotKV has no RDB writer yet. This measures the value as the plain RDB
 * encoding of its type would store it (RDB_TYPE_STRING, RDB_TYPE_LIST,
 * RDB_TYPE_SET, RDB_TYPE_ZSET_2, RDB_TYPE_HASH: a length, then each
 * element as an RDB string, integer-encoded where Redis would), without
 * LZF compression and without Redis's packed (listpack) blobs, so for
 * small aggregates and compressible strings it is longer than what Redis
 * reports. It is not the writer either: nothing is produced. */
#ifndef HK_RDBLEN_H
#define HK_RDBLEN_H

#include <stddef.h>

struct kv;

/* Bytes of e's value (the type byte and key not included); the key's
 * shard is held by the caller. */
size_t rdb_value_len(struct kv *e);

#endif
