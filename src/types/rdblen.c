/* rdblen.c - the RDB length of a value; see rdblen.h. */
#include "rdblen.h"

#include "rdb.h"

size_t rdb_value_len_compress(struct kv *e, int compress) {
    struct rdb_out o = {NULL, RDB_VERSION_MAX, compress};
    return rdb_save_value(e, &o) == 0 ? o.counted : 0;
}

size_t rdb_value_len(struct kv *e) { return rdb_value_len_compress(e, 0); }
