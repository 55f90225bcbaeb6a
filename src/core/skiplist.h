/* skiplist.h - the sorted-set index: a skiplist ordered by (score, member)
 * with span counts for rank queries, plus a member -> node hash table.
 *
 * Each node is one allocation holding its hash chain link, score, backward
 * pointer, level array and the member bytes; the hash table (core/htable.h)
 * chains the very same nodes, so a member costs one allocation and a score
 * lookup is one hash probe. Ranks are 1-based inside this module (the
 * header is rank 0), as the span arithmetic wants; callers convert. This is
 * the "skiplist" encoding of sorted sets past the listpack thresholds; the
 * command layer lives in src/cmd/zset.c. Not thread-safe; the owner locks. */
#ifndef HK_SKIPLIST_H
#define HK_SKIPLIST_H

#include "htable.h"

#include <stddef.h>
#include <stdint.h>

#define ZSL_MAXLEVEL 32

struct zsl_node {
    struct hnode hn; /* member hash chain; must stay first */
    double score;
    struct zsl_node *backward;
    uint32_t elen;
    uint32_t nlevel;
    struct zsl_level {
        struct zsl_node *forward;
        unsigned long span;
    } level[];
    /* member bytes follow level[nlevel] */
};

static inline const char *zsl_ele(const struct zsl_node *n) { return (const char *)&n->level[n->nlevel]; }

struct zsl {
    struct zsl_node *header, *tail;
    unsigned long length;
    int level;
    struct htable ht;
};

/* Score interval; minex/maxex make an end exclusive. */
struct zrange {
    double min, max;
    int minex, maxex;
};

/* Lex interval over members. An end with inf != 0 is unbounded: -1 is "-",
 * +1 is "+"; otherwise s/len with ex for "(" (exclusive) versus "[". */
struct zlex {
    const char *min, *max;
    size_t minlen, maxlen;
    int minex, maxex;
    int mininf, maxinf;
};

struct zsl *zsl_new(void);
void zsl_free(struct zsl *z);
/* Deep copy. */
struct zsl *zsl_dup(const struct zsl *z);
/* Bytes used by the structure (approximate for allocator rounding). */
size_t zsl_usage(const struct zsl *z);

/* Member lookup; NULL when absent. */
struct zsl_node *zsl_find(struct zsl *z, const char *ele, size_t len);
/* Insert a member that is not present. Returns its node. */
struct zsl_node *zsl_insert(struct zsl *z, double score, const char *ele, size_t len);
/* Unlink and free a node. */
void zsl_delete_node(struct zsl *z, struct zsl_node *n);
/* Change a node's score, moving it if the order changes; the node keeps
 * its address (the hash table is untouched). */
void zsl_update_score(struct zsl *z, struct zsl_node *n, double score);
/* 1-based rank of a node. */
unsigned long zsl_rank(const struct zsl *z, const struct zsl_node *n);
/* Node at 1-based rank, NULL when out of range. */
struct zsl_node *zsl_by_rank(const struct zsl *z, unsigned long rank);

/* Range helpers shared with the listpack encoding. */
int zrange_gte_min(double v, const struct zrange *r);
int zrange_lte_max(double v, const struct zrange *r);
int zrange_empty(const struct zrange *r);
int zlex_gte_min(const char *s, size_t len, const struct zlex *r);
int zlex_lte_max(const char *s, size_t len, const struct zlex *r);
int zlex_empty(const struct zlex *r);

/* First / last node inside the range, NULL when none. */
struct zsl_node *zsl_first_in_range(const struct zsl *z, const struct zrange *r);
struct zsl_node *zsl_last_in_range(const struct zsl *z, const struct zrange *r);
struct zsl_node *zsl_first_in_lex(const struct zsl *z, const struct zlex *r);
struct zsl_node *zsl_last_in_lex(const struct zsl *z, const struct zlex *r);

/* Hash of member bytes as the member table uses it. */
uint64_t zsl_hash(const char *ele, size_t len);

#endif
