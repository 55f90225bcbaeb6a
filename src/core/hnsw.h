/* hnsw.h - a hierarchical navigable small-world graph for approximate
 * nearest-neighbour search under cosine distance (vector sets).
 *
 * Vectors are normalised on the way in (their L2 norm is kept, so the
 * original can be given back) and stored as float32, as int8 with one
 * scale per vector (Q8), or as one sign bit per component (BIN). The
 * distance is 1 - cosine similarity, in [0, 2]; for BIN it is the share
 * of differing bits, scaled to the same range.
 *
 * Layout. Nodes have dense 32-bit ids (a deleted node's id is reused).
 * Level 0 is one record per id in fixed-size chunks: the neighbour count,
 * 2*M neighbour ids, the encoded vector and its norm/scale, and the
 * caller's value pointer, so a search step touches one contiguous record
 * per candidate. Upper levels (few nodes) have their lists in a separate
 * allocation per node. Distance kernels are chosen once at run time
 * (AVX-512, AVX2+FMA, scalar).
 *
 * Concurrency. The graph itself has no lock; the caller provides one
 * reader-writer discipline:
 *   - "read" functions (search, prepare, getters) may run in any number
 *     of threads at once, as long as no "write" function runs;
 *   - "write" functions (commit, delete commit) need exclusive access.
 * A prepare is read-only: several can run in parallel with searches, and
 * each commit revalidates what its prepare found (nodes deleted since are
 * dropped from its candidates, and an emptied or re-entered graph makes
 * the commit search again itself).
 *
 * Each thread that searches owns a struct hnsw_searcher: its visited set
 * and heaps grow with the largest graph it has searched and are reused,
 * so a query allocates nothing once warm. */
#ifndef HK_HNSW_H
#define HK_HNSW_H

#include <stddef.h>
#include <stdint.h>

struct hk_buf;

enum hnsw_quant { HNSW_QUANT_NONE = 0, HNSW_QUANT_Q8 = 1, HNSW_QUANT_BIN = 2 };

#define HNSW_DEFAULT_M 16
#define HNSW_MIN_M 4
#define HNSW_MAX_M 4096
#define HNSW_MAX_LEVEL 16
#define HNSW_NONE UINT32_MAX

struct hnsw;
struct hnsw_searcher;

/* One result: a node and its distance to the query. */
struct hnsw_hit {
    uint32_t id;
    float dist;
};

/* A prepared insert: the encoded vector, its level, and the neighbour
 * candidates found at each of its levels. Owned by the caller and
 * reusable; hnsw_insert_release frees its buffers. */
struct hnsw_insert {
    uint32_t level;
    uint64_t epoch;            /* the graph's delete epoch seen by the prepare */
    void *vec;                 /* encoded vector (quantised or float32) */
    float norm, range;         /* L2 norm before normalising; Q8 scale */
    uint32_t ncand[HNSW_MAX_LEVEL + 1];
    struct hnsw_hit *cand[HNSW_MAX_LEVEL + 1];
    uint32_t ccap[HNSW_MAX_LEVEL + 1];
    size_t veccap;
};

/* A prepared delete: the new neighbour lists of the nodes that linked to
 * the deleted one. Same ownership rules as hnsw_insert. */
struct hnsw_delete {
    uint32_t id;
    void *priv; /* the engine's repair plan */
};

/* ---- lifecycle -------------------------------------------------------- */

/* A new empty graph. dim >= 1, M in [HNSW_MIN_M, HNSW_MAX_M]. */
struct hnsw *hnsw_new(uint32_t dim, enum hnsw_quant quant, uint32_t M);
void hnsw_free(struct hnsw *h);

/* ---- read functions ----------------------------------------------------- */

uint32_t hnsw_dim(const struct hnsw *h);
enum hnsw_quant hnsw_quant(const struct hnsw *h);
uint32_t hnsw_m(const struct hnsw *h);
uint32_t hnsw_count(const struct hnsw *h);     /* live nodes */
uint32_t hnsw_id_bound(const struct hnsw *h);  /* every live id is below it */
int hnsw_live(const struct hnsw *h, uint32_t id);
uint32_t hnsw_max_level(const struct hnsw *h); /* 0 when empty */
uint32_t hnsw_entry(const struct hnsw *h);     /* HNSW_NONE when empty */
/* Bytes the graph uses (chunks, upper-level lists, free lists), exactly as
 * allocated. */
size_t hnsw_memory(const struct hnsw *h);
/* Allocations freeing the graph costs (lazy free's effort rule). */
size_t hnsw_free_effort(const struct hnsw *h);
/* Bytes of one encoded vector (VEMB RAW). */
size_t hnsw_vec_bytes(const struct hnsw *h);
/* Committed deletes that had to scan every neighbour list to find the
 * lists holding the deleted node (the rest found them all near it). */
uint64_t hnsw_delete_scans(const struct hnsw *h);

void *hnsw_value(const struct hnsw *h, uint32_t id);
void hnsw_set_value(struct hnsw *h, uint32_t id, void *value); /* a write */
uint32_t hnsw_level(const struct hnsw *h, uint32_t id);
/* Neighbours of id at `level` (<= its level): count, and *ids set. */
uint32_t hnsw_links(const struct hnsw *h, uint32_t id, uint32_t level, const uint32_t **ids);
/* How many neighbour lists (any level) hold id; HNSW_NONE once the count
 * has saturated (a delete of such a node scans the whole graph). */
uint32_t hnsw_in_degree(const struct hnsw *h, uint32_t id);
/* Distance between two nodes, as searches compute it. */
float hnsw_node_distance(const struct hnsw *h, uint32_t a, uint32_t b);
/* The stored vector, de-quantised and scaled back by its norm (VEMB). */
void hnsw_vector(const struct hnsw *h, uint32_t id, float *out);
/* The encoded vector as stored (VEMB RAW): bytes, norm, Q8 range. */
const void *hnsw_raw(const struct hnsw *h, uint32_t id, float *norm, float *range);

struct hnsw_searcher *hnsw_searcher_new(void);
void hnsw_searcher_free(struct hnsw_searcher *s);

/* Called once per candidate that would enter the results; nonzero keeps
 * it. The graph is walked through rejected nodes too. */
typedef int (*hnsw_filter_fn)(void *arg, uint32_t id, void *value);

/* The k nearest nodes to q (dim floats, any norm) found with a beam of
 * max(ef, k), ascending distance (ties by id), into out (room for k). With
 * a filter, only accepted nodes are results; the filter is asked only about
 * nodes near enough to enter the results, and the walk stops, as Redis's
 * FILTER-EF does, once `max_tests` candidates (the entry point counting as
 * one) have been taken from the queue (0: no bound). Returns the number of
 * hits. */
uint32_t hnsw_search(const struct hnsw *h, struct hnsw_searcher *s, const float *q, uint32_t k, uint32_t ef,
                     hnsw_filter_fn filter, void *farg, uint32_t max_tests, struct hnsw_hit *out);
/* The exact k nearest by a scan of every node (VSIM TRUTH), same filter
 * rules without a bound. */
uint32_t hnsw_search_exact(const struct hnsw *h, struct hnsw_searcher *s, const float *q, uint32_t k,
                           hnsw_filter_fn filter, void *farg, struct hnsw_hit *out);

/* Prepare inserting vector v (dim floats, not all zero: the caller
 * refuses zero vectors). `rnd` draws the node's level. Read-only. */
void hnsw_insert_init(struct hnsw_insert *ins);
void hnsw_insert_release(struct hnsw_insert *ins);
void hnsw_insert_prepare(const struct hnsw *h, struct hnsw_searcher *s, const float *v, uint32_t ef_construction,
                         uint64_t rnd, struct hnsw_insert *ins);

/* Prepare deleting live node id: computes the repaired neighbour lists.
 * Read-only; no other write may run between it and its commit. */
void hnsw_delete_prepare(const struct hnsw *h, struct hnsw_searcher *s, uint32_t id, struct hnsw_delete *del);
/* Drop a prepared delete that will not be committed (frees its plan). A
 * zero-initialised or committed struct hnsw_delete needs no release. */
void hnsw_delete_release(struct hnsw_delete *del);

/* ---- write functions ---------------------------------------------------- */

/* Link a prepared insert in; returns the new node's id. */
uint32_t hnsw_insert_commit(struct hnsw *h, struct hnsw_searcher *s, struct hnsw_insert *ins, void *value,
                            uint32_t ef_construction);
/* Unlink and free the node, install the repaired lists, pick a new entry
 * point if needed; frees del's plan. */
void hnsw_delete_commit(struct hnsw *h, struct hnsw_delete *del);

/* ---- serialised form ---------------------------------------------------- */

/* Append the whole graph (parameters, every node's id, level, encoded
 * vector, norm, range and links) to out, in a versioned little-endian
 * form that hnsw_load turns back into the same graph without searching.
 * Node values are not written: the caller saves its own per-id data. */
void hnsw_save(const struct hnsw *h, struct hk_buf *out);
/* Rebuild a graph from p/len; NULL (with a reason in err) when the bytes
 * are malformed: bad lengths, ids out of range or duplicated, links to
 * missing nodes, levels past the limit. Never reads past len. */
struct hnsw *hnsw_load(const void *p, size_t len, char *err, size_t errsize);

/* ---- random projection (REDUCE) ----------------------------------------- */
/* Seed 0 is Redis 8's matrix (a truncated Walsh-Hadamard pattern scaled by
 * 1/sqrt(in_dim)); other seeds flip column signs deterministically. */

struct hnsw_proj;
/* A fixed random projection from in_dim to out_dim dimensions (out_dim <=
 * in_dim): the same (in_dim, out_dim, seed) always gives the same matrix. */
struct hnsw_proj *hnsw_proj_new(uint32_t in_dim, uint32_t out_dim, uint64_t seed);
void hnsw_proj_free(struct hnsw_proj *p);
void hnsw_proj_apply(const struct hnsw_proj *p, const float *in, float *out);
size_t hnsw_proj_memory(const struct hnsw_proj *p);

#endif
