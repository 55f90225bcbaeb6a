/* vset.h - the vector set value: named elements, each a vector in an HNSW
 * graph (core/hnsw.h) with optional JSON attributes.
 *
 * Three locks guard a set, so that a search never holds the key's shard
 * and an insert never stalls searches for its whole length:
 *
 *   - the key's shard lock (like every value) guards the name table: which
 *     elements exist, so VCARD, VISMEMBER, VREM's answer and the key's
 *     deletion when it empties are decided under it, in keyspace order;
 *   - the set's reader-writer lock `rw` guards the graph and everything
 *     a search reads (each element's node id and attributes). Searches
 *     hold it shared; a writer holds it exclusive only to link or unlink
 *     its prepared change, never for its search;
 *   - `cmu`, which a writer takes only while holding `rw` exclusive, for
 *     its commit. The short reads done under the shard lock take `cmu`
 *     alone: they wait for a commit at most, never behind a writer that
 *     waits for a search (which would hold the whole shard meanwhile).
 *
 * Writers are ordered by tickets. A command that changes the graph takes
 * a ticket under the shard lock (vset_ticket), so tickets follow keyspace
 * order (and the journal's), then does its expensive part after the shard
 * is released: an insert prepares its neighbour candidates with `rw`
 * shared (several inserts prepare in parallel), waits for its turn
 * (vset_turn_wait), commits, and passes the turn on (vset_turn_done).
 * Until its insert commits, a new element is in the name table with id
 * HNSW_NONE (and already its attributes); a reader that needs its vector
 * waits for the writers in flight (vset_quiesce), which take no shard
 * lock, so it cannot deadlock. A removed element is marked `gone` with
 * its name-table removal, and searches skip it until its node is gone.
 *
 * The set is reference counted: the key holds one reference, and every
 * command still working on it after the shard is released holds another,
 * so a DEL, FLUSHALL or overwrite in the meantime frees it only when the
 * last one is done. Lock order: shard lock, then cmu; rw (exclusive),
 * then cmu; the ticket mutex is a leaf. */
#ifndef HK_VSET_H
#define HK_VSET_H

#include "../core/hnsw.h"
#include "../core/htable.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct kv;
struct hk_buf;

/* The limits Redis's VADD enforces. */
#define VSET_MAX_DIM 65536u
#define VSET_MAX_EF 1000000u
/* REDUCE's matrix holds in_dim x dim floats: at most 256 MiB of them. */
#define VSET_MAX_PROJ ((uint64_t)1 << 26)

struct velem {
    struct hnode node;
    uint32_t id;   /* graph node (rw); HNSW_NONE until its insert commits */
    uint32_t nlen;
    char *attr;    /* JSON attributes or NULL (rw) */
    uint32_t alen;
    /* Set under the shard lock when VREM takes the element out of the name
     * table; its node stays in the graph until the remove commits, and a
     * search meanwhile must not return it. */
    _Atomic uint8_t gone;
    char name[];
};

struct vset {
    _Atomic uint32_t refs;
    /* Fixed at creation. */
    uint32_t in_dim;  /* dimension of the vectors given to VADD / VSIM */
    uint32_t dim;     /* stored dimension: in_dim, or REDUCE's */
    uint32_t M;
    enum hnsw_quant quant;
    uint64_t uid;
    struct hnsw_proj *proj; /* REDUCE's projection, or NULL */
    /* The shard lock. */
    struct htable names;
    uint64_t tnext; /* next ticket */
    /* Bytes of the members' element records (names), so MEMORY USAGE and
     * VINFO need no pass over the set. */
    uint64_t elem_bytes;
    /* Removals decided (elements marked gone) but not committed yet:
     * raised under the shard lock, lowered by the remove's commit. */
    _Atomic uint32_t removing;
    /* rw. */
    struct hnsw *g;
    /* Elements with attributes: a new element's are set under the shard
     * lock (no search can reach it yet), later changes with rw exclusive. */
    _Atomic uint64_t nattr;
    _Atomic uint64_t attr_bytes; /* their allocations, counted with nattr */
    pthread_rwlock_t rw;
    /* Taken by a writer only while it holds rw exclusively, for its
     * commit: a short reader under the shard lock takes it instead of rw,
     * so it waits for a commit at most, never behind a waiting writer for
     * a whole search (vset_short_read). */
    pthread_mutex_t cmu;
    /* Leaf lock of the writer turns. */
    pthread_mutex_t tmu;
    pthread_cond_t tcv;
    uint64_t tserve; /* the ticket whose turn it is */
};

extern const struct type_ops vset_type_ops;

/* A new empty set for vectors of in_dim components, stored with
 * reduce_dim (0: no projection) components. One reference. NULL for a
 * projection past VSET_MAX_PROJ or to more dimensions than in_dim (VADD
 * refuses those first). */
struct vset *vset_new(uint32_t in_dim, uint32_t reduce_dim, enum hnsw_quant quant, uint32_t M);
static inline void vset_ref(struct vset *vs) { atomic_fetch_add_explicit(&vs->refs, 1, memory_order_relaxed); }
/* Drop a reference; the last one frees the set and its elements. */
void vset_unref(struct vset *vs);
static inline struct vset *vset_of(const struct kv *e);
/* An entry for key holding vs (takes the caller's reference). */
struct kv *vset_entry(const char *key, size_t klen, struct vset *vs);

/* ---- the name table (shard lock) ------------------------------------- */

static inline uint64_t vset_card(const struct vset *vs) { return vs->names.count; }
struct velem *vset_find(struct vset *vs, const char *name, size_t len);
/* Add a new element with no node yet (its insert is to commit), and its
 * attributes (NULL: none; ownership passes to the set): a member has its
 * attributes from the moment it is one. */
struct velem *vset_add_name(struct vset *vs, const char *name, size_t len, char *attr, uint32_t alen);
/* Take el out of the name table and mark it gone; it is freed by its
 * remove commit. */
void vset_remove_name(struct vset *vs, struct velem *el);
/* A uniformly random element (the set is not empty). */
struct velem *vset_random(struct vset *vs);
/* Up to n distinct random elements into out; returns how many. */
size_t vset_sample(struct vset *vs, size_t n, struct velem **out);

/* ---- writer turns ------------------------------------------------------ */

/* Under the shard lock: the ticket of a writer that is about to change the
 * graph, in keyspace order. */
static inline uint64_t vset_ticket(struct vset *vs) { return vs->tnext++; }
void vset_turn_wait(struct vset *vs, uint64_t ticket);
void vset_turn_done(struct vset *vs);
/* Under the shard lock: wait until every writer that took a ticket is
 * done (their work holds no shard lock, so they all finish). */
void vset_quiesce(struct vset *vs);
/* Without any lock: wait until every ticket below `ticket` is done (a
 * search that must see every write decided before it, VSIM TRUTH). */
void vset_wait_through(struct vset *vs, uint64_t ticket);

/* ---- graph changes (each run with the caller's ticket) ---------------- */

/* Project a vector given to the set (in_dim) into the stored space (dim);
 * out has room for dim floats. Without REDUCE it is a copy. */
void vset_project(const struct vset *vs, const float *in, float *out);

/* The insert of a new element, or of a new vector for an existing one
 * (its old node is unlinked first), with its attributes when set_attr
 * (attr NULL: none; ownership passes to the set). v has dim components
 * (already projected). `existed`: el was in the name table before this
 * command (its old node is replaced); otherwise the insert is prepared
 * before the turn is waited for. */
void vset_apply_add(struct vset *vs, uint64_t ticket, struct velem *el, int existed, const float *v, uint32_t ef,
                    int set_attr, char *attr, uint32_t alen);
/* Unlink el's node, repair its neighbours, free el. */
void vset_apply_remove(struct vset *vs, uint64_t ticket, struct velem *el);
/* Replace el's attributes (attr NULL: remove them). */
void vset_apply_setattr(struct vset *vs, uint64_t ticket, struct velem *el, char *attr, uint32_t alen);

/* A short read under the key's shard lock (VEMB, VLINKS, VINFO,
 * VGETATTR, MEMORY USAGE): excludes commits only. */
static inline void vset_short_read(struct vset *vs) { pthread_mutex_lock(&vs->cmu); }
static inline void vset_short_done(struct vset *vs) { pthread_mutex_unlock(&vs->cmu); }

/* The calling thread's searcher (made on first use, freed at thread exit). */
struct hnsw_searcher *vset_searcher(void);

/* ---- serialised form -------------------------------------------------- */

/* Append the whole set, graph included, so vset_load rebuilds it without
 * searching: parameters, projection seed, the graph (hnsw_save), then each
 * node's element name and attributes. Needs a quiet set: shard lock held
 * and vset_quiesce done. */
void vset_save(struct vset *vs, struct hk_buf *out);
/* NULL, with a reason in err, for malformed bytes. */
struct vset *vset_load(const void *p, size_t len, char *err, size_t errsize);

/* A set around g, a graph built elsewhere (a loader's; ownership passes),
 * for vectors of in_dim components, with REDUCE's projection from in_dim
 * to g's dimension when `reduce`. The caller then adds each element
 * (vset_add_name) and binds it to its node (el->id, hnsw_set_value).
 * NULL, with g freed, when the dimensions do not fit a set. */
struct vset *vset_from_graph(struct hnsw *g, uint32_t in_dim, int reduce);

/* The type's RDB slots (rdb_vset.c): the value as Redis 8's "vectorset"
 * module writes it (RDB_TYPE_MODULE_2, its module id first), and back. */
struct rdb_out;
struct rdb_in;
int vset_rdb_save(const struct kv *e, struct rdb_out *o);
struct kv *vset_rdb_load(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire);

/* Bytes used: the graph, the projection, the name table and elements
 * (running counts: constant time, as VINFO is). */
size_t vset_memory(struct vset *vs);

#include "kv.h"
static inline struct vset *vset_of(const struct kv *e) { return (struct vset *)kv_ptr(e); }

#endif
