/* events.h - the names of changes to keys, as the write hook reports them.
 *
 * Every change to a key passes db_written() (db.h) with one of these
 * events. Their names are Redis's keyspace-event names (the text a
 * __keyspace@0__:key subscriber receives) and each carries the class
 * letter of notify-keyspace-events that enables it, so the coming
 * notification consumer needs no table of its own. A few events are
 * internal (no name): a whole-database change (FLUSHDB, SWAPDB) or an
 * update that Redis does not notify (PFCOUNT refreshing its cached
 * cardinality). The last few are notices rather than changes (KEV_NEW,
 * KEV_KEYMISS, KEV_OVERWRITTEN, KEV_TYPE_CHANGED). This file is data
 * only. */
#ifndef HK_EVENTS_H
#define HK_EVENTS_H

#include <stddef.h>

/* Classes, as notify-keyspace-events letters name them. */
#define KEVC_GENERIC 'g'
#define KEVC_STRING '$'
#define KEVC_LIST 'l'
#define KEVC_SET 's'
#define KEVC_HASH 'h'
#define KEVC_ZSET 'z'
#define KEVC_EXPIRED 'x'
#define KEVC_EVICTED 'e'
#define KEVC_STREAM 't'
#define KEVC_NEW 'n'     /* not in 'A' */
#define KEVC_KEYMISS 'm' /* not in 'A' */
#define KEVC_OVERWRITTEN 'o'  /* not in 'A' */
#define KEVC_TYPE_CHANGED 'c' /* not in 'A' */
#define KEVC_NONE 0

/* X(id, name, class, ready): `ready` is 1 when the key may hold a value
 * after the change, so clients blocked on it are worth waking; 0 when it
 * may be gone (consumer-group readers are woken to fail, watch.h); 2 when
 * the value stays and nothing new can be read from it (a consumer group's
 * bookkeeping): nobody is woken; 3 for a notice (KEV_NEW and the others
 * below), which never passes db_written: it accompanies a write that
 * does, or (KEV_KEYMISS) reports a read.
 * KEV_EXPIRED through KEV_DEL_EMPTIED are not writes of the command that
 * meets them (db_written counts none of them dirty): a key or hash field
 * reaching its deadline, an eviction, and the "del" of a hash whose last
 * field expired; keep them adjacent. */
#define KEV_LIST(X)                                                                                              \
    X(KEV_NONE, NULL, KEVC_NONE, 0)                                                                              \
    X(KEV_SET, "set", KEVC_STRING, 1)                                                                            \
    X(KEV_SETRANGE, "setrange", KEVC_STRING, 1)                                                                  \
    X(KEV_INCRBY, "incrby", KEVC_STRING, 1)                                                                      \
    X(KEV_INCRBYFLOAT, "incrbyfloat", KEVC_STRING, 1)                                                            \
    X(KEV_APPEND, "append", KEVC_STRING, 1)                                                                      \
    X(KEV_SETBIT, "setbit", KEVC_STRING, 1)                                                                      \
    X(KEV_PFADD, "pfadd", KEVC_STRING, 1)                                                                        \
    X(KEV_CACHE, NULL, KEVC_NONE, 1)                                                                             \
    X(KEV_DEL, "del", KEVC_GENERIC, 0)                                                                           \
    X(KEV_EXPIRE, "expire", KEVC_GENERIC, 1)                                                                     \
    X(KEV_PERSIST, "persist", KEVC_GENERIC, 1)                                                                   \
    X(KEV_EXPIRED, "expired", KEVC_EXPIRED, 0)                                                                   \
    X(KEV_EVICTED, "evicted", KEVC_EVICTED, 0)                                                                   \
    X(KEV_HEXPIRED, "hexpired", KEVC_HASH, 0)                                                                    \
    X(KEV_DEL_EMPTIED, "del", KEVC_GENERIC, 0)                                                                   \
    X(KEV_RENAME_FROM, "rename_from", KEVC_GENERIC, 0)                                                           \
    X(KEV_RENAME_TO, "rename_to", KEVC_GENERIC, 1)                                                               \
    X(KEV_MOVE_FROM, "move_from", KEVC_GENERIC, 0)                                                               \
    X(KEV_MOVE_TO, "move_to", KEVC_GENERIC, 1)                                                                   \
    X(KEV_COPY_TO, "copy_to", KEVC_GENERIC, 1)                                                                   \
    X(KEV_RESTORE, "restore", KEVC_GENERIC, 1)                                                                   \
    X(KEV_LPUSH, "lpush", KEVC_LIST, 1)                                                                          \
    X(KEV_RPUSH, "rpush", KEVC_LIST, 1)                                                                          \
    X(KEV_LPOP, "lpop", KEVC_LIST, 1)                                                                            \
    X(KEV_RPOP, "rpop", KEVC_LIST, 1)                                                                            \
    X(KEV_LINSERT, "linsert", KEVC_LIST, 1)                                                                      \
    X(KEV_LSET, "lset", KEVC_LIST, 1)                                                                            \
    X(KEV_LREM, "lrem", KEVC_LIST, 1)                                                                            \
    X(KEV_LTRIM, "ltrim", KEVC_LIST, 1)                                                                          \
    X(KEV_HSET, "hset", KEVC_HASH, 1)                                                                            \
    X(KEV_HINCRBY, "hincrby", KEVC_HASH, 1)                                                                      \
    X(KEV_HINCRBYFLOAT, "hincrbyfloat", KEVC_HASH, 1)                                                            \
    X(KEV_HDEL, "hdel", KEVC_HASH, 1)                                                                            \
    X(KEV_HEXPIRE, "hexpire", KEVC_HASH, 1)                                                                      \
    X(KEV_HPERSIST, "hpersist", KEVC_HASH, 1)                                                                    \
    X(KEV_SADD, "sadd", KEVC_SET, 1)                                                                             \
    X(KEV_SREM, "srem", KEVC_SET, 1)                                                                             \
    X(KEV_SPOP, "spop", KEVC_SET, 1)                                                                             \
    X(KEV_SINTERSTORE, "sinterstore", KEVC_SET, 1)                                                               \
    X(KEV_SUNIONSTORE, "sunionstore", KEVC_SET, 1)                                                               \
    X(KEV_SDIFFSTORE, "sdiffstore", KEVC_SET, 1)                                                                 \
    /* Vector sets: Redis's module raises no keyspace event. */                                              \
    X(KEV_VSET, NULL, KEVC_NONE, 1)                                                                              \
    X(KEV_ZADD, "zadd", KEVC_ZSET, 1)                                                                            \
    X(KEV_ZINCR, "zincr", KEVC_ZSET, 1)                                                                          \
    X(KEV_ZREM, "zrem", KEVC_ZSET, 1)                                                                            \
    X(KEV_ZREMRANGEBYRANK, "zremrangebyrank", KEVC_ZSET, 1)                                                      \
    X(KEV_ZREMRANGEBYSCORE, "zremrangebyscore", KEVC_ZSET, 1)                                                    \
    X(KEV_ZREMRANGEBYLEX, "zremrangebylex", KEVC_ZSET, 1)                                                        \
    X(KEV_ZPOPMIN, "zpopmin", KEVC_ZSET, 1)                                                                      \
    X(KEV_ZPOPMAX, "zpopmax", KEVC_ZSET, 1)                                                                      \
    X(KEV_ZINTERSTORE, "zinterstore", KEVC_ZSET, 1)                                                              \
    X(KEV_ZUNIONSTORE, "zunionstore", KEVC_ZSET, 1)                                                              \
    X(KEV_ZDIFFSTORE, "zdiffstore", KEVC_ZSET, 1)                                                                \
    X(KEV_ZRANGESTORE, "zrangestore", KEVC_ZSET, 1)                                                              \
    X(KEV_GEORADIUSSTORE, "georadiusstore", KEVC_ZSET, 1)                                                        \
    X(KEV_GEOSEARCHSTORE, "geosearchstore", KEVC_ZSET, 1)                                                        \
    X(KEV_SORTSTORE, "sortstore", KEVC_LIST, 1)                                                                  \
    /* Streams; KEV_XGROUP_STATE: a group's bookkeeping (no event). */                                           \
    X(KEV_XADD, "xadd", KEVC_STREAM, 1)                                                                          \
    X(KEV_XDEL, "xdel", KEVC_STREAM, 1)                                                                          \
    X(KEV_XTRIM, "xtrim", KEVC_STREAM, 1)                                                                        \
    X(KEV_XSETID, "xsetid", KEVC_STREAM, 1)                                                                      \
    X(KEV_XGROUP_CREATE, "xgroup-create", KEVC_STREAM, 2)                                                        \
    X(KEV_XGROUP_CREATECONSUMER, "xgroup-createconsumer", KEVC_STREAM, 2)                                        \
    X(KEV_XGROUP_DELCONSUMER, "xgroup-delconsumer", KEVC_STREAM, 2)                                              \
    X(KEV_XGROUP_DESTROY, "xgroup-destroy", KEVC_STREAM, 0)                                                      \
    X(KEV_XGROUP_SETID, "xgroup-setid", KEVC_STREAM, 1)                                                          \
    X(KEV_XGROUP_STATE, NULL, KEVC_NONE, 2)                                                                      \
    X(KEV_FLUSH, NULL, KEVC_NONE, 0)                                                                             \
    X(KEV_SWAPDB, NULL, KEVC_NONE, 1)                                                                            \
    /* Notices (db_notice, db.c), handed to the sink only while `each` is                                    \
     * set: a key enters the keyspace (ahead of the write that created it),                                  \
     * a read lookup found no key, a write replaced a key's whole value                                      \
     * (Redis 8.2's overwritten, and type_changed when the type differs).                                    \
     * None is a write of its own: no WATCH, no dirty. */                                                    \
    X(KEV_NEW, "new", KEVC_NEW, 3)                                                                               \
    X(KEV_KEYMISS, "keymiss", KEVC_KEYMISS, 3)                                                                   \
    X(KEV_OVERWRITTEN, "overwritten", KEVC_OVERWRITTEN, 3)                                                       \
    X(KEV_TYPE_CHANGED, "type_changed", KEVC_TYPE_CHANGED, 3)

enum kev {
#define KEV_ENUM(id, name, cls, ready) id,
    KEV_LIST(KEV_ENUM)
#undef KEV_ENUM
        KEV_COUNT
};

struct kev_info {
    const char *name; /* keyspace-event name; NULL for internal events */
    char cls;         /* notify-keyspace-events class letter */
    char ready;       /* 1 may hold data afterwards, 0 may be gone, 2 unchanged (above) */
};

extern const struct kev_info kev_info[KEV_COUNT];

#endif
