/* notify.h - keyspace notifications: the write hook's events published
 * on __keyspace@<db>__:<key> and __keyevent@<db>__:<event>, as Redis
 * publishes them, filtered by notify-keyspace-events.
 *
 * The events come from the one write hook (db_written, db.h): the running
 * context's sink hands each event to notify_event, so a command run alone,
 * inside EXEC, from a script or as a served blocking pop raises the same
 * events, and so do expiry and eviction. Publishing goes through
 * pubsub_publish (pubsub.h), which takes no shard lock, so it may run
 * under the command's locks. */
#ifndef HK_NOTIFY_H
#define HK_NOTIFY_H

#include <stdatomic.h>
#include <stddef.h>

struct keyref;

/* notify-keyspace-events flags, Redis's letters. */
#define NOTIFY_KEYSPACE (1 << 0) /* K */
#define NOTIFY_KEYEVENT (1 << 1) /* E */
#define NOTIFY_GENERIC (1 << 2)  /* g */
#define NOTIFY_STRING (1 << 3)   /* $ */
#define NOTIFY_LIST (1 << 4)     /* l */
#define NOTIFY_SET (1 << 5)      /* s */
#define NOTIFY_HASH (1 << 6)     /* h */
#define NOTIFY_ZSET (1 << 7)     /* z */
#define NOTIFY_EXPIRED (1 << 8)  /* x */
#define NOTIFY_EVICTED (1 << 9)  /* e */
#define NOTIFY_STREAM (1 << 10)  /* t */
#define NOTIFY_KEY_MISS (1 << 11) /* m (not in A) */
#define NOTIFY_LOADED (1 << 12)  /* module only */
#define NOTIFY_MODULE (1 << 13)  /* d */
#define NOTIFY_NEW (1 << 14)     /* n (not in A) */
#define NOTIFY_OVERWRITTEN (1 << 15)  /* o (not in A) */
#define NOTIFY_TYPE_CHANGED (1 << 16) /* c (not in A) */

/* The flags in force (0: off). Read on the request path. */
extern _Atomic int notify_flags;

/* Flags of a notify-keyspace-events string (-1: a character that names
 * no class), and the string CONFIG GET shows for flags, both as Redis. */
int notify_parse(const char *s);
void notify_format(int flags, char *buf, size_t size);

/* CONFIG SET/GET notify-keyspace-events. */
int notify_config_set(const char *value, char *err, size_t errsize);
void notify_config_get(char *buf, size_t size);

/* One event of the write hook (k NULL: a whole-database change, which
 * Redis does not notify), in database k->db, from the calling thread
 * (under the key's shard lock). Publishes on __keyspace@<db>__:<key> the
 * event's name, then on __keyevent@<db>__:<name> the key, each when its
 * kind and the event's class are enabled; nothing when nobody is
 * subscribed to anything. */
void notify_event(const struct keyref *k, int ev);

#endif
