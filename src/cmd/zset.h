/* zset.h - internals shared by the sorted set command files (zset.c,
 * zset_ops.c): the encoding-independent value helpers and iterator. Not a
 * public API; other families use the commands, not these. */
#ifndef HK_ZSET_H
#define HK_ZSET_H

#include "../core/listpack.h"
#include "../core/skiplist.h"
#include "../server/server.h"
#include "../store/db.h"
#include "../store/kv.h"

/* zs_add flags in and out. */
#define ZADD_INCR 1
#define ZADD_NX 2
#define ZADD_XX 4
#define ZADD_GT 8
#define ZADD_LT 16
#define ZADD_ADDED 1
#define ZADD_UPDATED 2
#define ZADD_NOP 4

/* Cursor over either encoding; positions become invalid when the set changes.
 */
struct zit {
    int enc;
    lpack *lp;
    size_t pos;
    struct zsl *z;
    struct zsl_node *n;
    struct lp_val v;
};

double zlp_score_at(const lpack *lp, size_t pos);
unsigned long zs_len(const struct kv *e);
int zs_score(struct kv *e, const char *ele, size_t len, double *out);
int zs_add(struct kv *e, double score, const char *ele, size_t len, int flags, int *out, double *newscore);
int zs_del(struct kv *e, const char *ele, size_t len);
void zs_delete_ranks(struct kv *e, unsigned long start, unsigned long count);
void zs_store_result(struct cmd_ctx *c, struct keyref *k, struct zsl *z, int ev);
/* Whether zs_add(e, score, ele, len, flags, ...) would add or change a
 * member (changes nothing): writers report before the first change. */
int zs_add_changes(struct kv *e, double score, const char *ele, size_t len, int flags);
/* Pop up to count members (from the top when max) and reply: flat pairs,
 * nested pairs, or with emitkey ZMPOP's [key, [[m, s]...]]. Deletes the key
 * when it empties. */
void zpop_reply(struct cmd_ctx *c, struct keyref *k, struct kv *e, int max, long long count, int nested, int emitkey);

void zit_init(struct zit *it, struct kv *e);
int zit_valid(const struct zit *it);
void zit_get(struct zit *it, const char **ele, size_t *len, double *score);
void zit_next(struct zit *it);
void zit_prev(struct zit *it);
void zit_move(struct zit *it, int rev);
void zit_seek(struct zit *it, unsigned long rank);

int zparse_range(const hk_slice *min, const hk_slice *max, struct zrange *r);
int zparse_lex(const hk_slice *min, const hk_slice *max, struct zlex *r);

#endif
