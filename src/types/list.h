/* list.h - the list value: its two encodings, the view that hides the
 * difference, an element cursor, and the list lifecycle of the type table.
 *
 * A small list is one listpack (encoding "listpack"). Past the limit set by
 * list-max-listpack-size it becomes a quicklist: a doubly linked list of
 * listpack nodes, each bounded by the same setting (negative = a byte limit
 * of 4k..64k, positive = an entry count), with elements too large for any
 * node kept alone in a "plain" node. It converts back to a listpack when it
 * shrinks to one node of at most half the limit, as Redis 7.2 does, so a
 * list near the boundary does not flip on every push and pop. Every
 * operation is written once against the quicklist; a listpack-encoded list
 * is handled as a one-node quicklist on the stack whose node never splits
 * ("single" mode), which is what the view (struct listv) sets up. This
 * module knows no client, reply or keyspace: it never reports a write and
 * never deletes a key, so the caller announces every change before calling
 * in (db_written) and deletes a list the view reports empty. Callers hold
 * the lock of the key's shard.
 *
 * Node compression (list-compress-depth, read when a quicklist is created
 * and kept by it, as Redis does): with depth d > 0 the d nodes at each end
 * stay raw and every interior node is kept LZF-compressed (core/lzf.h)
 * when that is worth it: at least 48 bytes, and at least 8 bytes saved.
 * An operation decompresses the nodes it touches and puts the rule back
 * before it returns. A cursor that walks onto a compressed node
 * decompresses it for reading ("lent"); the node is compressed again when
 * the cursor walks off it, or by listv_done. */
#ifndef HK_TYPES_LIST_H
#define HK_TYPES_LIST_H

#include "../core/listpack.h"
#include "../core/status.h"

#include <stddef.h>

struct kv;

/* ---- quicklist ---------------------------------------------------------- */

/* A compressed node: its listpack's bytes LZF-compressed. */
struct qlzf {
    size_t csz;          /* bytes in data */
    size_t raw;          /* bytes of the listpack */
    unsigned long count; /* its elements */
    unsigned char data[];
};

/* Exactly one of lp and lzf is set: a raw node has its listpack, a
 * compressed one only the compressed bytes. */
struct qnode {
    struct qnode *prev, *next;
    lpack *lp;
    struct qlzf *lzf;
    int plain; /* holds one element too large to share a node */
};

struct qlist {
    struct qnode *head, *tail;
    unsigned long count; /* elements */
    unsigned long len;   /* nodes */
    int single;          /* a listpack-encoded list: one node, never split */
    unsigned compress;   /* raw nodes kept at each end; 0 = no compression */
    struct qnode *lent;  /* an interior node decompressed for a cursor */
};

/* Elements and listpack bytes of node n, compressed or not. */
static inline unsigned long ql_node_count(const struct qnode *n) { return n->lp ? lp_count(n->lp) : n->lzf->count; }
static inline size_t ql_node_bytes(const struct qnode *n) { return n->lp ? lp_bytes(n->lp) : n->lzf->raw; }

/* Limits of one node for a list-max-listpack-size value `fill`: *sz bytes
 * (SIZE_MAX when counted by elements) and *cnt elements (ULONG_MAX when
 * sized in bytes). Fill -1..-5 give 4k..64k, anything below -5 gives 64k,
 * 0 gives one element. */
void ql_limits(long long fill, size_t *sz, unsigned long *cnt);

/* A new empty quicklist (not single mode, no compression); the caller
 * owns it. */
struct qlist *ql_new(void);
/* Set the compression depth of a quicklist that has no node yet; clamped
 * to 0..65535 as Redis clamps it. */
void ql_set_compress(struct qlist *ql, long long depth);
/* Compress the node a cursor left decompressed (lent), if any. Every
 * operation that changes the list does this too. */
void ql_release(struct qlist *ql);
/* Elements at or above this size get a plain node of their own whatever
 * the fill (DEBUG QUICKLIST-PACKED-THRESHOLD); 0 restores the default, under
 * which the fill decides. Returns 0 (nothing changed) for a size above
 * 4GB minus 1MB, as Redis refuses it. */
int ql_set_packed_threshold(unsigned long long sz);
/* Free ql, every node and every listpack. */
void ql_free(struct qlist *ql);
/* A deep copy sharing nothing with src; the caller owns it. */
struct qlist *ql_dup(const struct qlist *src);

/* Add s/len at the head or the tail: into the end node when it has room
 * under `fill`, else into a new node (a plain one when s/len is too large
 * for any node). Node listpacks may move: positions and cursors taken
 * before are invalid after. */
void ql_push(struct qlist *ql, long long fill, const char *s, size_t len, int head);

/* The node holding element idx (0-based, below ql->count) and the offset
 * of the element in it; walks from the nearer end. */
struct qnode *ql_locate(const struct qlist *ql, unsigned long idx, unsigned long *off);

/* Delete n elements from absolute index start; a range running past the
 * end is cut at the end, one starting past it deletes nothing. Nodes that
 * empty are freed (except a single-mode list's node, which stays, empty).
 * Invalidates every cursor and position. */
void ql_del_range(struct qlist *ql, unsigned long start, unsigned long n);

/* Replace element idx with s/len, moving it to a node of its own (plain
 * when large) when its node would pass `fill`; a plain node given a small
 * value is folded into a regular node. Returns HK_OK, or
 * HK_ERR_INDEX_RANGE (nothing changed) when idx is not below ql->count.
 * Invalidates every cursor and position. */
int ql_replace(struct qlist *ql, long long fill, unsigned long idx, const char *s, size_t len);

/* ---- element cursor ------------------------------------------------------ */

/* One element of a quicklist: its node, its position in the node's
 * listpack and its offset there. pos is LP_NONE once the cursor has
 * walked off either end. Any change to the list invalidates the cursor,
 * except through the calls below that take it. */
struct ql_cur {
    struct qlist *ql;
    struct qnode *n;
    size_t pos;
    unsigned long off;
};

/* Place cur on element idx. Returns HK_OK, or HK_ERR_INDEX_RANGE (and a
 * cursor off the end: pos LP_NONE) when idx is not below ql->count. The
 * node under a cursor is raw: seeking or stepping onto a compressed node
 * decompresses it (and compresses the one the cursor left), so the list's
 * bytes change though its elements do not. */
int ql_cur_seek(struct ql_cur *cur, struct qlist *ql, unsigned long idx);
/* Step to the next / previous element, across nodes; pos becomes LP_NONE
 * past the end. A cursor already off the end stays there. */
void ql_cur_next(struct ql_cur *cur);
void ql_cur_prev(struct ql_cur *cur);
/* The element under cur (pos not LP_NONE); out->s points into the node or
 * into out->buf, valid until the list changes, the cursor moves to
 * another node or out is reused. */
void ql_cur_get(const struct ql_cur *cur, struct lp_val *out);
/* 1 when the element under cur equals s/len (integers by their decimal
 * form); 0 off the end. */
int ql_cur_eq(const struct ql_cur *cur, const char *s, size_t len);
/* Move cur forward (fwd) or backward to the first element, starting with
 * the one under it, that equals s/len. Returns 1 with cur on it, or 0 with
 * cur off the end. */
int ql_cur_find(struct ql_cur *cur, const char *s, size_t len, int fwd);

/* Insert s/len before or after (after=1) the element under `at`, splitting
 * a full node and merging the pieces with their neighbours where they fit
 * under `fill`. `at` and every other cursor are invalid afterwards. */
void ql_insert(struct qlist *ql, long long fill, const struct ql_cur *at, int after, const char *s, size_t len);

/* Remove elements equal to s/len, starting with the one under `from` and
 * walking forward (fwd) or backward, at most `max` of them (0 = all). Nodes
 * that empty are freed as in ql_del_range. Returns the number removed;
 * every cursor is invalid afterwards. */
unsigned long ql_remove(struct qlist *ql, const struct ql_cur *from, int fwd, const char *s, size_t len,
                        unsigned long max);

/* ---- the list value of a key entry -------------------------------------- */

/* A handle on the list of entry e, either encoding seen as a quicklist: ql
 * is the entry's quicklist, or `tmp`, a one-node single-mode quicklist on
 * the stack over the entry's listpack. fill is list-max-listpack-size as
 * read at open. Operations through ql may move the listpack; listv_done
 * stores it back into the entry, so a view that changed the list must be
 * finished (done, or after_removal) before anything else looks at the
 * entry; one that only read needs no finishing. A view must not be copied
 * (ql may point into it). */
struct listv {
    struct kv *e;
    struct qlist *ql;
    struct qlist tmp;
    struct qnode tmpn;
    long long fill;
};

/* A new, unlinked list entry for key/klen holding an empty listpack, for
 * the caller to store (the keyspace) and fill at once: an empty list must
 * not stay in the keyspace. */
struct kv *listv_new_entry(const char *key, size_t klen);
/* Elements in the list of entry e (either encoding). */
unsigned long listv_len_of(const struct kv *e);

/* Open a view on list entry e, reading the fill limit now. */
void listv_open(struct listv *v, struct kv *e);
/* Finish: a listpack that moved is stored back into the entry, and a node
 * a cursor decompressed is compressed again (ql_release), so readers that
 * walked the list call it too. The view may be used again afterwards only
 * after another listv_open. */
void listv_done(struct listv *v);
/* Before adding add_count elements of add_bytes in total: a listpack that
 * would pass the fill limit becomes a quicklist of one node (the entry's
 * encoding changes; no element changes). Nothing happens to a quicklist. */
void listv_grow(struct listv *v, size_t add_bytes, unsigned long add_count);
/* After removing or replacing elements: a quicklist down to one non-plain
 * node of at most half the limit (bytes and count) becomes a listpack
 * again (the entry's encoding changes). Nothing happens to a listpack. */
void listv_shrink(struct listv *v);
/* After building a new list in one go (SORT ... STORE): a quicklist of one
 * non-plain node within the full limit becomes a listpack. */
void listv_settle(struct listv *v);
/* Finish the view after a removal. Returns 1 when the list is now empty:
 * the entry then holds an empty value and the caller must delete the key
 * (nothing here does). Otherwise tries listv_shrink, finishes the view and
 * returns 0. */
int listv_after_removal(struct listv *v);

static inline unsigned long listv_len(const struct listv *v) { return v->ql->count; }

/* idx as an absolute index (negative counts from the tail) into *at.
 * Returns HK_OK, or HK_ERR_INDEX_RANGE when it is outside the list. */
int listv_index(const struct listv *v, long long idx, unsigned long *at);

/* The quicklist operations on the view's list with its fill limit; the
 * same contracts. Call listv_grow first for anything that adds, and
 * listv_shrink or listv_after_removal after anything that removes. */
static inline void listv_push(struct listv *v, const char *s, size_t len, int head) {
    ql_push(v->ql, v->fill, s, len, head);
}
static inline int listv_set(struct listv *v, unsigned long idx, const char *s, size_t len) {
    return ql_replace(v->ql, v->fill, idx, s, len);
}
static inline void listv_insert(struct listv *v, const struct ql_cur *at, int after, const char *s, size_t len) {
    ql_insert(v->ql, v->fill, at, after, s, len);
}
static inline void listv_del_range(struct listv *v, unsigned long start, unsigned long n) {
    ql_del_range(v->ql, start, n);
}
static inline unsigned long listv_remove(struct listv *v, const struct ql_cur *from, int fwd, const char *s,
                                         size_t len, unsigned long max) {
    return ql_remove(v->ql, from, fwd, s, len, max);
}
static inline int listv_seek(struct listv *v, unsigned long idx, struct ql_cur *cur) {
    return ql_cur_seek(cur, v->ql, idx);
}

/* DEBUG OBJECT's list fields for entry e, Redis's layout: for a quicklist
 * " ql_nodes:N ql_avg_node:X.XX ql_listpack_max:F ql_compressed:0|1
 * ql_uncompressed_size:N" (each field after a space; the size counts a
 * plain node by its element), nothing for a listpack. Writes at most cap
 * bytes NUL-terminated into buf and returns the length (snprintf's). */
size_t listv_debug_info(const struct kv *e, char *buf, size_t cap);

#endif
