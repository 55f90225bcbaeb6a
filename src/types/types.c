/* types.c - the static type table and the encoding limits; see types.h. */
#include "types.h"

#include "kv.h"

const struct type_ops *const type_table[OBJ_TYPE_MAX] = {
    [OBJ_STRING] = &string_type_ops, [OBJ_LIST] = &list_type_ops, [OBJ_SET] = &set_type_ops,
    [OBJ_ZSET] = &zset_type_ops,     [OBJ_HASH] = &hash_type_ops, [OBJ_STREAM] = &stream_type_ops,
    [OBJ_VSET] = &vset_type_ops,
};

/* Redis's defaults; the configuration table sets them at start-up. */
struct type_limits type_limits = {
    .hash_max_listpack_entries = 128,
    .hash_max_listpack_value = 64,
    .zset_max_listpack_entries = 128,
    .zset_max_listpack_value = 64,
    .list_max_listpack_size = -2,
    .list_compress_depth = 0,
    .set_max_intset_entries = 512,
    .set_max_listpack_entries = 128,
    .set_max_listpack_value = 64,
    .stream_node_max_bytes = 4096,
    .stream_node_max_entries = 100,
};
