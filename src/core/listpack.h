/* listpack.h - a compact packed array of strings and integers.
 *
 * One contiguous allocation holding a small header (total bytes, element
 * count) followed by the elements back to back. Each element stores either
 * a small integer in as few bytes as it needs or a length-prefixed string,
 * followed by its own encoded length so the array can be walked backwards.
 * This is the packed encoding that small lists, hashes, sets and sorted sets
 * use before they convert to real structures past the thresholds set by the
 * *-max-listpack-* settings. It is not Redis's on-disk listpack format.
 *
 * Positions are byte offsets into the buffer (LP_NONE when there is none);
 * any call that modifies the listpack may move it, so it returns the new
 * pointer, and positions taken before a modification are invalid after it,
 * except the ones a call returns. Not thread-safe; the owner locks. */
#ifndef HK_LISTPACK_H
#define HK_LISTPACK_H

#include <stddef.h>
#include <stdint.h>

typedef unsigned char lpack;

#define LP_NONE ((size_t)-1)

/* A value read from a listpack. For integers, s points into `buf` with the
 * decimal form, so callers can always use s/len; is_int and v tell them it
 * is an integer without parsing. */
struct lp_val {
    const char *s;
    size_t len;
    int is_int;
    long long v;
    char buf[21];
};
/* The bytes of v. An integer's decimal form lives in v's own buf, so an
 * lp_val copied by value has s pointing at the original's: this looks in
 * the copy. */
static inline const char *lp_val_ptr(const struct lp_val *v) { return v->is_int ? v->buf : v->s; }

lpack *lp_new(void);
void lp_free(lpack *lp);
uint32_t lp_count(const lpack *lp);
size_t lp_bytes(const lpack *lp);

size_t lp_first(const lpack *lp);
size_t lp_last(const lpack *lp);
size_t lp_next(const lpack *lp, size_t pos);
size_t lp_prev(const lpack *lp, size_t pos);
/* Position of element `index` (negative counts from the end), LP_NONE if out of range. */
size_t lp_seek(const lpack *lp, long long index);
void lp_get(const lpack *lp, size_t pos, struct lp_val *out);
/* As lp_get, without writing an integer's decimal form: for an integer
 * element only is_int and v are set (s is NULL). */
void lp_peek(const lpack *lp, size_t pos, struct lp_val *out);
/* 1 when the element at pos equals the bytes s/len (integers compare by their decimal form). */
int lp_eq(const lpack *lp, size_t pos, const char *s, size_t len);

/* Insert s/len before pos (LP_NONE appends). Strings that are canonical
 * integers are stored as integers. *newpos (if not NULL) gets the inserted
 * element's position. */
lpack *lp_insert(lpack *lp, size_t pos, const char *s, size_t len, size_t *newpos);
lpack *lp_append(lpack *lp, const char *s, size_t len);
lpack *lp_prepend(lpack *lp, const char *s, size_t len);
lpack *lp_append_int(lpack *lp, long long v);
/* Replace the element at pos; *newpos gets its (possibly same) position. */
lpack *lp_replace(lpack *lp, size_t pos, const char *s, size_t len, size_t *newpos);
/* Delete the element at pos; *next gets the following element (or LP_NONE). */
lpack *lp_delete(lpack *lp, size_t pos, size_t *next);
/* Delete count elements starting at index (negative from the end). */
lpack *lp_delete_range(lpack *lp, long long index, unsigned long count);
/* First element at or after start equal to s/len, looking at every
 * (skip+1)-th element (skip = 1 visits only keys of key/value pairs). */
size_t lp_find(const lpack *lp, size_t start, const char *s, size_t len, unsigned skip);
lpack *lp_dup(const lpack *lp);

#endif
