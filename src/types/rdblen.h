/* rdblen.h - the length of a value in Redis's RDB format, for DEBUG
 * OBJECT's serializedlength.
 *
 * The value is run through the RDB writer (rdb.h) in counting mode: what
 * is measured is exactly the body a snapshot or DUMP would write (the
 * type byte and key not included), in the newest encodings HotKV writes,
 * LZF-compressed strings counted compressed when `compress` is set (as
 * Redis does under rdbcompression). Nothing is stored, but compressing a
 * string needs a scratch buffer of its size. */
#ifndef HK_RDBLEN_H
#define HK_RDBLEN_H

#include <stddef.h>

struct kv;

/* Bytes of e's serialized value; the key's shard is held by the caller
 * (measuring a hash-table set may finish its rehash). 0 for a type with
 * no writer. */
size_t rdb_value_len_compress(struct kv *e, int compress);
/* The same without compression. DEBUG OBJECT should pass rdbcompression
 * to rdb_value_len_compress instead: Redis counts strings compressed
 * when it is on (its default). */
size_t rdb_value_len(struct kv *e);

#endif
