/* stream.h - the stream value: an append-only log of entries with 128-bit
 * ids, its consumer groups, their pending-entries lists and consumers, and
 * the type's lifecycle (stream_type_ops, types.h).
 *
 * Entries live in nodes of packed bytes (a master entry holding the first
 * entry's id and field names, then each entry as id deltas from the master,
 * a flags word and either its values alone, when it has the master's
 * fields, or its fields and values), at most `stream-node-max-bytes` bytes
 * and `stream-node-max-entries` entries a node (TLIM, types.h). The nodes
 * are reached through an index ordered by their master ids. Deleting an
 * entry marks it in its node; a node whose entries are all deleted goes.
 *
 * A node's image (stream_node_image; stream_node_validate checks one):
 *
 *   count u32, live u32, master ms u64, master seq u64    host order, 24 bytes
 *   nfields varint, then nfields elements                  the master fields
 *   entries, oldest first, each:
 *     byte 0     bit 0 deleted, bit 1 same fields as the master, bits 2-7
 *                the ms delta from the master when below 63, else 63 and
 *     varint     (ms delta - 63)
 *     varint     seq delta (seq - master seq, as a wrapping int64) zig-zagged
 *     varint     nfields, only without the same-fields bit
 *     elements   the values (same fields), else field, value, field, value...
 *     back-len   the entry's length up to here, in 7-bit groups laid out so
 *                they read from the end backwards (a walk towards the head)
 *   element: varint tag; tag bit 0 clear: a string of tag>>1 bytes follows;
 *   set: an integer, zig-zag tag>>1, for text that is the canonical decimal
 *   of a value in [-2^62, 2^62) (given back as that text).
 *
 * Varints are LEB128 in their shortest form. A same-field entry of five
 * short values costs 3-4 bytes beyond the values' own bytes plus one length
 * byte each; Redis's listpack spends 2 bytes on each of flags, ms delta, seq
 * delta and lp-count and 2 on each value's header and back-length. For 1M
 * XADD-like appends of five small fields (several ids a millisecond, the
 * default node limits) HotKV holds 26 bytes an entry of data, 30 with its
 * allocator's size classes, where redis-server 7.0 takes 39 (used_memory)
 * and reports 44 (MEMORY USAGE).
 *
 * The node index is a vector of node pointers, nodes[first..first+n),
 * ordered by master id: lookup is a binary search (O(log n)), an append
 * O(1) amortised, dropping head nodes (trimming) O(1) by moving `first`,
 * any other node O(n) pointer moves (the shorter side moves); 8 bytes a
 * node, where Redis's radix tree keyed by the 16-byte master id spends
 * some 1.9 tree nodes (tens of bytes each) per stream node.
 *
 * RDB: a node converts to and from one of Redis's stream listpacks one to
 * one, both ways in one pass over its elements: the rax key is the master
 * id (big endian); the master entry is [live, count - live, nfields,
 * fields..., 0]; each entry is [flags (1 deleted, 2 same fields), ms delta,
 * seq delta, nfields unless same fields, fields and values, lp-count]
 * with the same deltas and flags, integers as listpack integers. Redis
 * never compacts a listpack, so its first entry carries the master id, as
 * here (a converted node that is not so can be re-appended entry by entry
 * instead); the loader runs stream_node_validate over what it built.
 *
 * A consumer group keeps its last delivered id, its entries-read counter,
 * its consumers (ordered by name) and its pending-entries list (PEL): one
 * record per delivered and not yet acknowledged entry, found by id in the
 * group's id-ordered index, listed in the owning consumer's own id-ordered
 * index, and linked in a list ordered by delivery time (ties by id), so
 * the oldest deliveries (XREADGROUP ... CLAIM) are found without a scan.
 * Groups and consumers are arrays ordered by name; both id indexes are
 * treaps threaded through the records (stream_cg.c).
 *
 * Every function here works on a value whose shard the caller holds; none
 * knows a client, a reply or the keyspace: reporting writes (db_written)
 * and storing or deleting keys stay with the handlers (src/cmd/stream*.c).
 * Nothing here validates ids against the stream's rules (an XADD id must
 * exceed last_id): the handlers do, and call with valid arguments. */
#ifndef HK_TYPES_STREAM_H
#define HK_TYPES_STREAM_H

#include "kv.h"
#include "types.h"

#include <stddef.h>
#include <stdint.h>

/* ---- ids ---------------------------------------------------------------- */

typedef struct streamid {
    uint64_t ms, seq;
} streamid;

/* Longest "ms-seq" text, with its NUL. */
#define STREAMID_STRLEN 42

static inline int streamid_cmp(const streamid *a, const streamid *b) {
    if (a->ms != b->ms) return a->ms < b->ms ? -1 : 1;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return 0;
}
static inline int streamid_is_zero(const streamid *a) { return a->ms == 0 && a->seq == 0; }
/* The next / previous id; -1 (id unchanged) at UINT64_MAX-UINT64_MAX / 0-0. */
int streamid_incr(streamid *id);
int streamid_decr(streamid *id);
/* "ms-seq" into buf (STREAMID_STRLEN bytes); returns the length. */
size_t streamid_fmt(const streamid *id, char *buf);
/* Parse "ms" or "ms-seq", each part within uint64 and read as Redis's
 * string2ull reads it (so "007", "+7" and " 7" are 7, as in Redis; text
 * over 127 bytes is refused, and a NUL ends it, as Redis's C-string copy
 * does). A missing
 * seq becomes missing_seq and *seq_given (if not NULL) 0. With seq_star,
 * "ms-*" is accepted: *seq_given = -1 and seq is left 0. Returns 0, or -1
 * on anything else (the caller names the error: Redis's "Invalid stream
 * ID specified as stream command argument"). "-" and "+" are the caller's. */
int streamid_parse(const char *s, size_t len, streamid *out, uint64_t missing_seq, int seq_star, int *seq_given);

/* ---- the stream ----------------------------------------------------------- */

struct stream_node;
struct stream_cg;

struct stream {
    /* The node index: nodes[first..first+n) ordered by master id. */
    struct stream_node **nodes;
    size_t first, n, cap;
    uint64_t length;          /* live entries */
    streamid last_id;         /* the greatest id ever added (or XSETID) */
    streamid first_id;        /* the first live entry's id; 0-0 when empty */
    streamid max_deleted_id;  /* the greatest id deleted (XDEL and kin, or a
                                 hole an ACKED trim leaves behind a kept
                                 entry; a trimmed prefix does not move it,
                                 as in Redis) */
    uint64_t entries_added;   /* entries ever added (XADD), or XSETID's */
    /* Consumer groups ordered by name; NULL until the first. */
    struct stream_cg **groups;
    size_t ngroups, groups_cap;
};

static inline struct stream *stream_of(const struct kv *e) { return (struct stream *)kv_ptr(e); }
struct stream *stream_new(void);
void stream_free(struct stream *s);
/* A new unlinked entry for key holding an empty stream. */
struct kv *stream_new_entry(const char *key, size_t klen);

/* One field/value pair of an entry being added. */
struct stream_field {
    const char *f, *v;
    size_t flen, vlen;
};
/* Append an entry with id (greater than s->last_id, which the caller has
 * checked) and nf pairs (nf >= 1): updates length, last_id, first_id and
 * entries_added. */
void stream_append(struct stream *s, const streamid *id, const struct stream_field *fv, size_t nf);

/* ---- reading ------------------------------------------------------------- */

/* Walks live entries with ids in [start, end], ascending, or descending
 * with rev. Valid until the stream changes, except through
 * stream_iter_delete. The fields are private to stream.c. */
struct stream_iter {
    struct stream *s;
    streamid start, end;
    int rev, done, loaded, same_fields;
    size_t ni;                /* node index (absolute, in nodes[]) */
    size_t pos;               /* forward: the next entry; backward: its end */
    size_t master_fields_pos, entries_pos;
    size_t entry_start, entry_end;
    long long master_nfields, nfields, fi;
    size_t fpos, vpos;        /* the next field's name and value */
    char fbuf[21], vbuf[21];  /* integer elements' text */
    streamid cur;
};
void stream_iter_start(struct stream_iter *it, struct stream *s, const streamid *start, const streamid *end, int rev);
/* The next entry: 1 with its id and field count, 0 at the end. */
int stream_iter_next(struct stream_iter *it, streamid *id, long long *nfields);
/* The next field of the current entry (call nfields times). The bytes stay
 * valid until the next stream_iter_* call. */
void stream_iter_field(struct stream_iter *it, const char **f, size_t *flen, const char **v, size_t *vlen);
/* Delete the current entry (after stream_iter_next) and go on with the
 * next; updates length, first_id and max_deleted_id. */
void stream_iter_delete(struct stream_iter *it);
void stream_iter_stop(struct stream_iter *it);

/* Whether an entry with this id is live. */
int stream_has(struct stream *s, const streamid *id);
/* Delete one entry; 1 if it was live. */
int stream_delete(struct stream *s, const streamid *id);
/* The first / last live entry's id; 0 when the stream is empty. */
int stream_first(struct stream *s, streamid *id);
int stream_last(struct stream *s, streamid *id);

/* ---- trimming and reference policies (Redis 8.2) ------------------------- */

/* What deleting an entry does to the groups' PELs: keep their references
 * (KEEPREF, the default), drop them from every group (DELREF), or delete
 * only entries that every group has read and acknowledged (ACKED). */
enum { STREAM_KEEPREF = 0, STREAM_DELREF = 1, STREAM_ACKED = 2 };
/* Whether every group has delivered the entry and none holds it pending
 * (ACKED's condition); 1 when there are no groups. */
int stream_entry_acked(const struct stream *s, const streamid *id);
/* Delete one entry under a policy: 1 deleted, -1 no such entry, 2 kept
 * because some group still references it (ACKED): XDELEX's codes. As in
 * Redis, ACKED answers 2 for an id some group has not yet delivered or
 * still holds pending even when the entry is not in the stream, and DELREF
 * drops the references of an id that is no longer in it. */
int stream_delete_policy(struct stream *s, const streamid *id, int policy);

enum { STREAM_TRIM_MAXLEN = 1, STREAM_TRIM_MINID = 2 };
struct stream_trim {
    int strategy;       /* STREAM_TRIM_MAXLEN or _MINID */
    long long maxlen;   /* MAXLEN: keep at most this many entries */
    streamid minid;     /* MINID: drop entries below it */
    int approx;         /* '~': only whole nodes go */
    long long limit;    /* with approx: at most this many entries removed; 0 = no limit */
    int policy;         /* STREAM_KEEPREF / DELREF / ACKED */
};
/* Trim as XADD/XTRIM do; returns the entries removed. With approx, a node
 * is removed only whole (so fewer may go than asked), as in Redis. Under
 * DELREF and ACKED (with groups) a node in range is walked entry by
 * entry, since the groups decide what goes (Redis 8.4's fixed behaviour):
 * a node emptied goes, and the walk continues past a node only when all
 * of it was in range; DELREF drops the references of the entries it
 * removes (not of tombstones in the range, as in Redis). limit counts
 * whole nodes' live entries, approx only (the handler passes
 * 100 * node-max-entries when LIMIT is not given). Calls pre_change(pc)
 * once, immediately before the first removal, and not at all when
 * nothing goes: nothing changes before the first removal. */
long long stream_trim(struct stream *s, const struct stream_trim *t, struct pre_change *pc);

/* ---- group bookkeeping ----------------------------------------------------- */

/* entries_read when it cannot be known (Redis's SCG_INVALID_ENTRIES_READ). */
#define STREAM_ENTRIES_READ_INVALID (-1LL)

struct stream_nack;

struct stream_consumer {
    char *name;
    size_t nlen;
    long long seen_time;    /* ms: last attempted interaction */
    long long active_time;  /* ms: last successful interaction; -1 never */
    struct stream_cg *cg;
    void *pel;              /* this consumer's pending entries by id (private) */
    uint64_t pel_count;
};

struct stream_nack {
    streamid id;
    long long delivery_time; /* ms */
    uint64_t delivery_count;
    struct stream_consumer *consumer;
    /* Private to stream_cg.c: the treap links of the group's id index
     * (t[0]) and of the consumer's (t[1]), the treap priority, and the
     * delivery-time list. */
    struct stream_nack *t[2][2];
    uint64_t prio;
    struct stream_nack *prev, *next;
};

struct stream_cg {
    char *name;
    size_t nlen;
    streamid last_id;
    long long entries_read;  /* or STREAM_ENTRIES_READ_INVALID */
    void *pel;               /* pending entries by id (private) */
    uint64_t pel_count;
    struct stream_nack *oldest, *newest; /* by delivery time, then id (private links) */
    struct stream_consumer **consumers;  /* ordered by name */
    size_t nconsumers, consumers_cap;
};

struct stream_cg *stream_cg_find(const struct stream *s, const char *name, size_t nlen);
/* NULL when a group of that name exists. */
struct stream_cg *stream_cg_create(struct stream *s, const char *name, size_t nlen, const streamid *last_id,
                                   long long entries_read);
/* Remove the group with its consumers and PEL. */
void stream_cg_destroy(struct stream *s, struct stream_cg *cg);

struct stream_consumer *stream_consumer_find(const struct stream_cg *cg, const char *name, size_t nlen);
/* NULL when one of that name exists; seen_time now, active_time -1. */
struct stream_consumer *stream_consumer_create(struct stream_cg *cg, const char *name, size_t nlen, long long now_ms);
/* Remove the consumer and its pending entries from the group; returns how
 * many were pending. */
uint64_t stream_consumer_delete(struct stream_cg *cg, struct stream_consumer *c);

/* ---- the pending-entries list -------------------------------------------- */

struct stream_nack *stream_pel_find(const struct stream_cg *cg, const streamid *id);
/* A new record of id owned by c, delivered at now_ms, count 1. The id must
 * not be pending in cg. */
struct stream_nack *stream_pel_add(struct stream_cg *cg, struct stream_consumer *c, const streamid *id,
                                   long long now_ms);
/* Hand nack to consumer c (it may be its owner already), set its delivery
 * time (keeping the time list ordered) and, with bump, add one to its
 * delivery count. */
void stream_pel_assign(struct stream_cg *cg, struct stream_nack *n, struct stream_consumer *c, long long delivery_time,
                       int bump);
/* Acknowledge: remove the record from the group and its consumer, free it. */
void stream_pel_ack(struct stream_cg *cg, struct stream_nack *n);
/* Id order over the group: the first record with id >= start, and the next. */
struct stream_nack *stream_pel_seek(const struct stream_cg *cg, const streamid *start);
struct stream_nack *stream_pel_next(const struct stream_cg *cg, const struct stream_nack *n);
/* The same over one consumer's records. */
struct stream_nack *stream_cons_seek(const struct stream_consumer *c, const streamid *start);
struct stream_nack *stream_cons_next(const struct stream_consumer *c, const struct stream_nack *n);
/* The record with the greatest id in the group (NULL when none): O(log n)
 * expected, as the rest of the id index. */
struct stream_nack *stream_pel_last(const struct stream_cg *cg);
/* Delivery-time order, ties by id (Redis's pel_by_time order): cg->oldest,
 * then each one's successor (NULL after cg->newest). */
struct stream_nack *stream_pel_newer(const struct stream_nack *n);

/* ---- entries-read and lag, as Redis 8.4 computes them --------------------- */

/* Whether [start, end] (NULL start: from 0-0, NULL end: to the greatest
 * id) holds the greatest deleted id of a non-empty stream
 * (streamRangeHasTombstones). */
int stream_range_has_tombstones(const struct stream *s, const streamid *start, const streamid *end);
/* entries_read a group at last delivered id `id` can be given, or
 * STREAM_ENTRIES_READ_INVALID (streamEstimateDistanceFromFirstEverEntry). */
long long stream_estimate_entries_read(const struct stream *s, const streamid *id);
/* The group delivered the entry with id (XREADGROUP '>'): advance
 * last_id (when id is past it) and entries_read: one more while the
 * group's position is at or after the first entry with no tombstone from
 * it on, else the estimate for id. */
void stream_cg_delivered(struct stream *s, struct stream_cg *cg, const streamid *id);
/* XINFO's lag (entries not yet delivered to the group): 0 for an empty
 * stream; *valid 0 where Redis answers nil. */
long long stream_cg_lag(const struct stream *s, const struct stream_cg *cg, int *valid);

/* ---- node images (persistence, tests) ------------------------------------ */

/* The nodes in id order, each as its image (the bytes stream.h's layout
 * describes): valid until the stream changes. */
size_t stream_node_count(const struct stream *s);
const unsigned char *stream_node_image(const struct stream *s, size_t i, size_t *len);
/* Node i's master id (its first entry's id, deleted or not): the key of
 * the node in Redis's radix tree. */
streamid stream_node_master(const struct stream *s, size_t i);
/* Whether len bytes at p are a well-formed node image: every varint,
 * element and back-length in bounds, ids strictly ascending from the
 * master id, counts matching the entries. 1 yes, 0 no; never reads
 * outside [p, p+len). A loader calls it before trusting a node. */
int stream_node_validate(const unsigned char *p, size_t len);

/* Walking a valid node image element by element, deleted entries
 * included (the RDB writer converts each node to Redis's listpack this
 * way). The fields are private to stream.c. */
struct stream_node_walk {
    const unsigned char *img, *end;
    uint32_t count, live;    /* entries, and those not deleted */
    streamid master;         /* the master id */
    long long master_nf;     /* the master entry's field count */
    /* the current entry (after stream_node_walk_next) */
    streamid id;
    int deleted, same;       /* flags: deleted; has the master's fields */
    long long nfields;
    const unsigned char *mfields, *mpos, *pos, *fpos, *vpos, *next;
    char fbuf[21], vbuf[21]; /* integer elements' text */
};
void stream_node_walk_init(struct stream_node_walk *w, const unsigned char *img, size_t len);
/* The next master field (call master_nf times, before or between
 * entries); the bytes stay valid until the next call that yields one. */
void stream_node_walk_master(struct stream_node_walk *w, const char **f, size_t *flen);
/* The next entry: 1 with id, flags and nfields set, 0 at the end. */
int stream_node_walk_next(struct stream_node_walk *w);
/* The entry's next field and value (call nfields times). */
void stream_node_walk_field(struct stream_node_walk *w, const char **f, size_t *flen, const char **v, size_t *vlen);

/* Building a node image entry by entry (the RDB reader's way in): init
 * with the master id (the first entry's) and the master fields, then per
 * entry stream_node_build_entry and its elements (the values alone when
 * `same`, else field, value, field, value ...), then stream_node_adopt.
 * Nothing is trusted: adopt validates the image (stream_node_validate)
 * and checks that it follows the stream's last node. */
struct stream_node_build {
    unsigned char *p;
    size_t len, cap;
    uint32_t count, live;
    streamid master;
    size_t entry;     /* where the current entry starts */
    int open;         /* an entry is being built */
};
void stream_node_build_init(struct stream_node_build *b, const streamid *master, uint64_t master_nf);
void stream_node_build_field(struct stream_node_build *b, const char *s, size_t len);
void stream_node_build_entry(struct stream_node_build *b, const streamid *id, int deleted, int same,
                             uint64_t nfields);
void stream_node_build_elem(struct stream_node_build *b, const char *s, size_t len);
/* Append the built node to s's index, after its last node (the caller
 * keeps length and the ids): 0, or -1 when the image is malformed, too
 * big for a node, or does not come after the last node. The builder is
 * released either way. */
int stream_node_adopt(struct stream *s, struct stream_node_build *b);
void stream_node_build_free(struct stream_node_build *b);
/* The id of node i's last entry, deleted or not. */
streamid stream_node_last(const struct stream *s, size_t i);

/* The type's RDB slots (rdb_stream.c): STREAM_LISTPACKS_2 at version 10,
 * _3 from 11 on; any of the three stream types read. */
struct rdb_out;
struct rdb_in;
int stream_rdb_save(const struct kv *e, struct rdb_out *o);
struct kv *stream_rdb_load(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire);

extern const struct type_ops stream_type_ops;

#endif
