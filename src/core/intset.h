/* intset.h - a sorted array of distinct 64-bit integers, packed at the
 * narrowest width (16, 32 or 64 bits) that holds every member.
 *
 * One allocation: an 8-byte header (element width, count) and the elements
 * in ascending order, so lookup is a binary search and iteration yields
 * sorted values. Adding a value that does not fit the current width widens
 * every element once (an "upgrade"); removing never narrows. This is the
 * encoding of small all-integer sets (set-max-intset-entries); it is not
 * Redis's on-disk intset format (values are stored in native byte order).
 * Calls that modify the set may move it and return the new pointer. Not
 * thread-safe; the owner locks. */
#ifndef HK_INTSET_H
#define HK_INTSET_H

#include <stddef.h>
#include <stdint.h>

struct intset {
    uint32_t width; /* bytes per element: 2, 4 or 8 */
    uint32_t len;
    unsigned char data[];
};

struct intset *intset_new(void);
void intset_free(struct intset *s);
static inline uint32_t intset_len(const struct intset *s) { return s->len; }
/* Bytes of the allocation (header plus elements). */
size_t intset_bytes(const struct intset *s);
/* Element at pos (0 <= pos < len), in ascending order. */
int64_t intset_get(const struct intset *s, uint32_t pos);
/* 1 when v is a member; *pos (if not NULL) gets its index, or the index
 * where it would be inserted when absent. */
int intset_find(const struct intset *s, int64_t v, uint32_t *pos);
/* Add v; *added gets 1 when it was not a member. Returns the set. */
struct intset *intset_add(struct intset *s, int64_t v, int *added);
/* Remove v; *removed gets 1 when it was a member. Returns the set. */
struct intset *intset_remove(struct intset *s, int64_t v, int *removed);
/* Remove the element at index pos (< len). Returns the set. */
struct intset *intset_remove_at(struct intset *s, uint32_t pos);
struct intset *intset_dup(const struct intset *s);
/* Smallest and largest members; the set must not be empty. */
static inline int64_t intset_min(const struct intset *s) { return intset_get(s, 0); }
static inline int64_t intset_max(const struct intset *s) { return intset_get(s, s->len - 1); }

#endif
