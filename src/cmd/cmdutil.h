/* cmdutil.h - helpers shared by command handlers: key lookup with type
 * checks, expiry option parsing, and the reset hook list. Handlers run
 * with their keys' shards locked by dispatch. */
#ifndef HK_CMDUTIL_H
#define HK_CMDUTIL_H

#include "../server/creply.h"
#include "../server/server.h"
#include "../store/db.h"

/* Resolve argv[i] as a key of the client's database. */
static inline void key_of(struct client *c, int i, struct keyref *k) {
    keyref_init(k, c->db, c->argv[i].ptr, c->argv[i].len);
}

/* Look up for reading: counts hits/misses. Returns NULL when absent. */
static inline struct kv *lookup_read(struct client *c, const struct keyref *k) { return db_find_read(k, c->now_ms); }
static inline struct kv *lookup_write(struct client *c, const struct keyref *k) { return db_find(k, c->now_ms); }

/* 1 when e is of type t; otherwise replies WRONGTYPE and returns 0. */
static inline int check_type(struct client *c, const struct kv *e, int t) {
    if (kv_type(e) == t) return 1;
    reply_error(c, ERR_WRONGTYPE);
    return 0;
}

/* Valid client name: printable ASCII without spaces. */
int client_name_valid(const char *p, size_t len);

#endif
