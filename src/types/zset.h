/* zset.h - the sorted-set value: its two encodings, the operations on one
 * value, an iterator over either encoding, score and lex range parsing,
 * the set algebra of ZUNION/ZINTER/ZDIFF, and the type's lifecycle
 * (zset_type_ops, types.h).
 *
 * Small sets are a listpack of member,score pairs kept sorted by score then
 * member, the score stored in its shortest decimal form (integers pack
 * small; a negative zero is stored as 0, as Redis does). A value converts to
 * a skiplist with a member table (core/skiplist.h) when an add would take
 * it past zset-max-listpack-entries members or brings a member longer than
 * zset-max-listpack-value bytes (TLIM, types.h); it never converts back in
 * place, but a value built from a result (zs_entry_from_zsl) takes the
 * encoding its final size calls for. Every function here works on an entry
 * of type OBJ_ZSET whose shard the caller holds. This is not the command
 * layer: nothing here knows a client, a reply or the keyspace, so reporting
 * a write (db_written) before calling a mutator, and storing or deleting
 * keys, stay with the handlers (src/cmd/zset.c). */
#ifndef HK_TYPES_ZSET_H
#define HK_TYPES_ZSET_H

#include "../core/listpack.h"
#include "../core/skiplist.h"
#include "kv.h"
#include "types.h"

#include <stddef.h>
#include <stdint.h>

/* zs_add flags. */
#define ZS_INCR 1
#define ZS_NX 2
#define ZS_XX 4
#define ZS_GT 8
#define ZS_LT 16
/* zs_add outcomes. */
#define ZS_ADDED 1
#define ZS_UPDATED 2
#define ZS_NOP 4

/* ---- entries ---- */

/* A new, unlinked zset entry for key/klen (no expiry) that is about to
 * receive size_hint members, the longest maxlen_hint bytes: a listpack when
 * both fit the limits, else a skiplist, so a big ZADD converts nothing. */
struct kv *zs_entry_new(const char *key, size_t klen, unsigned long size_hint, size_t maxlen_hint);
/* A new, unlinked entry holding the members of z, encoded for its final
 * size (a listpack only when every member fits the limits). Takes z: it is
 * either kept as the value or freed. An empty z gives an empty value;
 * callers delete the key instead of storing one. */
struct kv *zs_entry_from_zsl(const char *key, size_t klen, struct zsl *z);

/* ---- reads ---- */

unsigned long zs_len(const struct kv *e);
/* 1 with *out set when ele is a member, else 0. */
int zs_score(const struct kv *e, const char *ele, size_t len, double *out);
/* 0-based rank of ele counted from the lowest score, or from the highest
 * when rev; -1 when absent. *score (when not NULL) gets its score. */
long zs_rank(const struct kv *e, const char *ele, size_t len, int rev, double *score);
/* ZCOUNT and ZLEXCOUNT: members inside the range. A skiplist counts by
 * ranks (first and last member in range), a listpack by walking from the
 * first one while the end holds, as Redis does; the two agree except for a
 * lex range over members of different scores, where Redis's answers are
 * kept. */
unsigned long zs_count_range(const struct kv *e, const struct zrange *r);
unsigned long zs_count_lex(const struct kv *e, const struct zlex *r);
/* ZREMRANGEBYSCORE and ZREMRANGEBYLEX: the members from the first one in
 * the range on, while the range's end holds; returns how many, with *first
 * the 0-based rank of the first (untouched when none). */
unsigned long zs_span_range(const struct kv *e, const struct zrange *r, unsigned long *first);
unsigned long zs_span_lex(const struct kv *e, const struct zlex *r, unsigned long *first);

/* One ZSCAN step from cursor. A listpack gives every member at once and
 * cursor 0, as Redis; a skiplist walks its member table (ht_scan: a member
 * present for the whole scan comes back at least once) until count members
 * are gathered, 10 * count buckets were visited or the table ends. *next
 * gets the cursor to go on from (0: done) before fn is first called; fn
 * then sees each gathered member with its score, and must not change e.
 * The walk may advance the table's incremental rehash (no logical change,
 * nothing to report). */
void zs_scan(struct kv *e, uint64_t cursor, long long count, uint64_t *next,
             void (*fn)(const char *ele, size_t len, double score, void *ctx), void *ctx);

/* ---- writes ----
 * The caller reports the write (db_written) before calling these; they may
 * convert the value (a new pointer in e, same entry), which invalidates
 * iterators and listpack positions taken before. */

/* ZADD's core for one member under ZS_* flags. Returns HK_OK with *out one
 * of ZS_ADDED, ZS_UPDATED, ZS_NOP, or 0 when the member exists and keeps
 * its score; *newscore (when not NULL) gets the member's score unless the
 * outcome is ZS_NOP. HK_ERR_NAN_SCORE (nothing changed) when the score,
 * or the sum with INCR, is NaN. Calls pre_change(pc) before it adds or
 * updates. May convert e to a skiplist. */
int zs_add(struct kv *e, double score, const char *ele, size_t len, int flags, int *out, double *newscore,
           struct pre_change *pc);
/* Remove ele; 1 when it was a member, calling pre_change(pc) first. The
 * value may end empty: the caller deletes the key. */
int zs_del(struct kv *e, const char *ele, size_t len, struct pre_change *pc);
/* Remove count members from 0-based rank start on (start + count must not
 * pass the length). */
void zs_delete_ranks(struct kv *e, unsigned long start, unsigned long count);

/* ---- ranges ---- */

/* Score range ends as Redis's zslParseRange reads them: an optional "("
 * for an exclusive end, then strtod over the rest (so "inf", hex, leading
 * spaces and even "" are accepted), NaN refused. HK_OK or
 * HK_ERR_MINMAX_FLOAT. */
int zs_parse_range(const char *min, size_t minlen, const char *max, size_t maxlen, struct zrange *r);
/* Lex range ends: "-", "+", "[member" or "(member". The range points into
 * the argument bytes, which must outlive it. HK_OK or HK_ERR_MINMAX_LEX. */
int zs_parse_lex(const char *min, size_t minlen, const char *max, size_t maxlen, struct zlex *r);

/* ---- iterator over either encoding ----
 * Read-only; any write to the value invalidates it. A fresh iterator is
 * positioned nowhere: seek it first. */
struct zit {
    int enc;
    const lpack *lp;
    size_t pos;
    const struct zsl *z;
    const struct zsl_node *n;
    struct lp_val v; /* the current member of a listpack, decoded */
};

void zit_init(struct zit *it, const struct kv *e);
int zit_valid(const struct zit *it);
/* Current member and score (score may be NULL); the member bytes stay
 * valid until the iterator moves. */
void zit_get(struct zit *it, const char **ele, size_t *len, double *score);
void zit_next(struct zit *it);
void zit_prev(struct zit *it);
/* zit_prev when rev, else zit_next. */
void zit_move(struct zit *it, int rev);
/* Position at a 0-based rank from the lowest score; invalid past the end. */
void zit_seek(struct zit *it, unsigned long rank);
/* 0-based rank of the current member (a listpack walks to it). */
unsigned long zit_rank(const struct zit *it);
/* Position at the first member inside the range walking up, or the last
 * one when rev; invalid when none. */
void zit_score_start(struct zit *it, const struct zrange *r, int rev);
void zit_lex_start(struct zit *it, const struct zlex *r, int rev);

/* Rank addressing for many random picks: zit_seek walks a listpack from
 * its head, so zrank_index records a listpack's member positions once
 * (O(size)) and each zrank_seek is then O(1); a skiplist seeks through
 * its spans (O(log size)) and needs no index. The value must not change
 * while the index is used; zrank_free releases it. */
struct zrank_index {
    struct zit it;
    size_t *pos; /* listpack member positions by rank; NULL for a skiplist */
};
void zrank_index(struct zrank_index *x, const struct kv *e);
void zrank_seek(struct zrank_index *x, unsigned long rank);
void zrank_free(struct zrank_index *x);

/* ---- building a result ---- */

/* A result collected into a skiplist the way Redis fills a new destination
 * key: as a listpack, which keeps no negative zero, until it outgrows the
 * limits, then as a skiplist. So the scores match Redis's, and once done,
 * zs_entry_from_zsl gives the encoding. Members must be distinct. */
struct zs_build {
    struct zsl *z; /* the result; the caller takes it when done */
    unsigned long n;
    int packed;
};

void zs_build_init(struct zs_build *b);
/* The result will hold n members (known up front): too many for a
 * listpack means a skiplist from the start. */
void zs_build_expect(struct zs_build *b, unsigned long n);
void zs_build_add(struct zs_build *b, double score, const char *ele, size_t len);

/* ---- ZUNION, ZINTER, ZDIFF, ZINTERCARD ---- */

/* One input of the set algebra: a zset value, a temporary skiplist (a
 * plain set's members with score 1, built by the caller), or nothing (a
 * missing key). Borrowed: it must outlive the call. */
struct zs_input {
    int enc; /* ENC_LISTPACK or ENC_SKIPLIST; -1 for a missing key */
    const void *val;
    unsigned long len;
    double weight;
};

enum { ZS_UNION, ZS_INTER, ZS_DIFF };
enum { ZS_AGG_SUM, ZS_AGG_MIN, ZS_AGG_MAX };

/* Inputs with weight 1. */
void zs_input_entry(struct zs_input *in, const struct kv *e);
void zs_input_zsl(struct zs_input *in, const struct zsl *z);
void zs_input_none(struct zs_input *in);
/* The result of op over in[0..n) as a new skiplist the caller owns:
 * weighted scores (a NaN product counts as 0), combined by agg for union
 * and intersection; a difference keeps in[0]'s scores. Reorders in[] (the
 * smallest inputs first, as Redis visits them: the order decides which of
 * 0 and -0 MIN and MAX keep). */
struct zsl *zs_setop(struct zs_input *in, int n, int op, int agg);
/* Members of the intersection of in[0..n), counting up to limit (0: no
 * limit). Reorders in[]. */
long long zs_intercard(struct zs_input *in, int n, long long limit);

#endif
