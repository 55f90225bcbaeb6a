/* hnsw.c - the vector-set graph: a hierarchical navigable small world
 * (Malkov & Yashunin) under cosine distance, with float32, Q8 and BIN
 * encodings, real deletion with neighbour repair, a two-phase insert and
 * delete for a reader-writer caller, a validated serialised form, and
 * random projection. See hnsw.h for the contract; it is not a container of
 * keys: the caller maps its elements to node ids and values.
 *
 * Records. Every id has a fixed-size level-0 record in a chunk:
 *   meta (neighbour count | level << 16 | live bit), born (the delete epoch
 *   at its insert, to tell a reused id from the node a prepare saw), indeg
 *   (how many lists point to it, so a delete knows when it has found them
 *   all), value,
 *   upper (the lists of levels 1..level, NULL at level 0), links[2M], norm,
 *   range, the encoded vector (a distance reads one contiguous run: range
 *   and vector; an expansion another: count and links).
 * Full chunks hold as many records as fit in 1 MiB (past that the
 * allocator rounds to 512 KiB); only the last chunk
 * grows (by half, reallocated), so a small set stays small and a big one
 * never moves more than one chunk. Upper levels hold
 * (count, M ids) per level in one allocation per node.
 *
 * Encodings follow Redis 8's vector sets byte for byte: the vector is
 * L2-normalised (the norm kept), Q8 stores round(x * 127 / max|x|) with
 * max|x| as the range, BIN one bit per positive component in 64-bit words.
 * Distances are 1 - dot for float32, 1 - dot * (ra/127) * (rb/127) clamped
 * to [0, 2] for Q8, and 2 * differing bits / dim for BIN. */
#include "hnsw.h"

#include "alloc.h"
#include "buf.h"
#include "vdist.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HDR_BYTES 24u
#define META_COUNT 0xffffu
#define META_LEVEL_SHIFT 16
#define META_LIVE 0x80000000u
#define CHUNK_BYTES (1024u * 1024u)
#define EF_DEFAULT 200u
#define INDEG_MAX 0xffffu
/* How many of d's links a repair looks through (nearest to the repaired
 * node first). 16 keeps the recall after deleting half a graph of all 32
 * (M=16) and costs half as many distances; 8 costs a point or more. */
#define REPAIR_HOPS 16u
/* A repair's heuristic looks at the nearest REPAIR_POOL lists' worth of
 * candidates (the rest only top the list up): the heuristic's cost grows
 * with the candidates it rejects, and far ones are rarely kept. */
#define REPAIR_POOL 16u
/* The beams of a delete's searches for the lists holding the deleted node,
 * in lists' worth at the level: the first is 4 (128 at level 0 with M=16);
 * while lists are missing, the search runs again 4 times as wide, up to
 * DEL_EF_MAX, before the whole graph is scanned. */
#define DEL_EF_FIRST 4u
#define DEL_EF_GROW 4u
#define DEL_EF_MAX 64u

struct rec_hdr {
    uint32_t meta;
    uint16_t born;  /* low bits of the delete epoch at the insert */
    uint16_t indeg; /* lists (any level) holding this node; INDEG_MAX: unknown */
    void *value;
    uint32_t *upper;
};

struct hnsw {
    uint32_t dim, M, maxm0;
    enum hnsw_quant quant;
    uint32_t vbytes;   /* encoded vector bytes */
    uint32_t rec_size; /* bytes per level-0 record */
    uint32_t vec_off;  /* offset of the vector in a record */
    uint32_t per;      /* records per full chunk (<= 65536) */
    uint64_t magic;    /* ceil(2^48 / per): id / per as a multiply */
    char **chunks;
    uint32_t nchunks, chunks_cap;
    uint32_t last_cap; /* records the last chunk has room for (grows to per) */
    uint32_t bound, count, entry, max_level;
    uint32_t *freelist;
    uint32_t nfree, freecap;
    uint64_t del_epoch; /* bumped by every delete */
    uint64_t wseq;      /* bumped by every write that changes links */
    uint64_t del_scans; /* deletes whose plan scanned every list */
    size_t mem, nallocs;
    const struct vd_kernels *k;
};

struct hnsw_searcher {
    uint16_t *vis;
    uint32_t viscap;
    uint16_t tag;
    struct hnsw_hit *cand, *res, *sel, *tmp;
    uint32_t ccap, rcap, selcap, tmpcap;
    const char **batch; /* records of one expansion's unvisited neighbours */
    uint32_t *batch_id;
    uint32_t batchcap, batchidcap;
    uint32_t *pairs; /* a delete's (node, level) lists that hold it */
    uint32_t paircap;
    uint32_t nc, nr;
    float *qf; /* the normalised query */
    void *qv;  /* the query as encoded */
    size_t qfcap, qvcap;
};

/* The repair plan of a prepared delete: for each node that links to the
 * deleted one, at each shared level, its new list. `words` holds the
 * entries back to back: node, level, count, ids... */
struct del_plan {
    uint64_t wseq;
    uint32_t new_entry;
    uint32_t scanned; /* the plan needed the full scan */
    uint32_t nwords, capwords;
    uint32_t *words;
};

/* ---- accounted allocation ------------------------------------------------ */

static void *g_alloc(struct hnsw *h, size_t n) {
    void *p = hk_malloc(n);
    h->mem += hk_usable_size(p);
    h->nallocs++;
    return p;
}

static void g_free(struct hnsw *h, void *p) {
    if (!p) return;
    h->mem -= hk_usable_size(p);
    h->nallocs--;
    hk_free(p);
}

static void *g_realloc(struct hnsw *h, void *p, size_t n) {
    if (!p) return g_alloc(h, n);
    h->mem -= hk_usable_size(p);
    p = hk_realloc(p, n);
    h->mem += hk_usable_size(p);
    return p;
}

/* Grow an array owned by a searcher (not accounted: searchers are per
 * thread scratch, not part of any graph). */
static void *grow(void *p, uint32_t *cap, uint32_t need, size_t elem) {
    if (need <= *cap) return p;
    uint32_t c = *cap ? *cap : 64;
    while (c < need) c = c > UINT32_MAX / 2 ? need : c * 2;
    *cap = c;
    return hk_realloc(p, (size_t)c * elem);
}

/* ---- records ----------------------------------------------------------------- */

/* Chunk and slot of an id: q = id / per exactly, since per <= 2^16 keeps
 * the multiply's error below 1/per for every 32-bit id. */
static inline char *rec(const struct hnsw *h, uint32_t id) {
    uint32_t q = (uint32_t)(((unsigned __int128)id * h->magic) >> 48);
    return h->chunks[q] + (size_t)(id - q * h->per) * h->rec_size;
}

static inline struct rec_hdr *hdr(const struct hnsw *h, uint32_t id) { return (struct rec_hdr *)rec(h, id); }

static inline uint32_t *links0(char *r) { return (uint32_t *)(r + HDR_BYTES); }

static inline uint32_t rlevel(const struct rec_hdr *r) { return (r->meta >> META_LEVEL_SHIFT) & 0xff; }

/* Norm and Q8 range sit just before the vector, on its cache line. */
static inline float rnorm(const struct hnsw *h, const char *r) { return *(const float *)(r + h->vec_off - 8); }
static inline float rrange(const struct hnsw *h, const char *r) { return *(const float *)(r + h->vec_off - 4); }

/* The list of `id` at `level`: returns its ids; *cnt gets the count. */
static inline uint32_t *list_at(const struct hnsw *h, uint32_t id, uint32_t level, uint32_t *cnt) {
    char *r = rec(h, id);
    struct rec_hdr *rh = (struct rec_hdr *)r;
    if (level == 0) {
        *cnt = rh->meta & META_COUNT;
        return links0(r);
    }
    uint32_t *u = rh->upper + (size_t)(level - 1) * (h->M + 1);
    *cnt = u[0];
    return u + 1;
}

static inline void set_count(const struct hnsw *h, uint32_t id, uint32_t level, uint32_t n) {
    struct rec_hdr *rh = hdr(h, id);
    if (level == 0)
        rh->meta = (rh->meta & ~META_COUNT) | n;
    else
        rh->upper[(size_t)(level - 1) * (h->M + 1)] = n;
}

static inline uint32_t max_links(const struct hnsw *h, uint32_t level) { return level ? h->M : h->maxm0; }

/* In-degree bookkeeping; a count that ever saturates stays unknown. */
static inline void indeg_add(const struct hnsw *h, uint32_t id) {
    struct rec_hdr *r = hdr(h, id);
    if (r->indeg != INDEG_MAX) r->indeg++;
}

static inline void indeg_sub(const struct hnsw *h, uint32_t id) {
    struct rec_hdr *r = hdr(h, id);
    if (r->indeg != INDEG_MAX && r->indeg) r->indeg--;
}

/* ---- distances ------------------------------------------------------------------ */

/* qs is the query's range already divided by 127 (once per query, not
 * per distance); the product rounds exactly as (ra/127) * (rb/127). */
static inline float q8_dist(int32_t dot, float qs, float rb) {
    if (qs == 0 || rb == 0) return 1.0f;
    float d = 1.0f - (float)dot * (qs * (rb / 127));
    if (d < 0) d = 0;
    else if (d > 2) d = 2;
    return d;
}

/* Distance between an encoded query (qv, its Q8 range / 127 in qr) and
 * record r. */
static inline float dist_q(const struct hnsw *h, const void *qv, float qr, const char *r) {
    const void *v = r + h->vec_off;
    switch (h->quant) {
    case HNSW_QUANT_Q8:
        return q8_dist(h->k->dot_i8(qv, v, h->dim), qr, rrange(h, r));
    case HNSW_QUANT_BIN:
        return (float)h->k->hamming(qv, v, (h->dim + 63) / 64) * 2.0f / (float)h->dim;
    default:
        return 1.0f - h->k->dot_f32(qv, v, h->dim);
    }
}

static inline float dist_nodes(const struct hnsw *h, uint32_t a, uint32_t b) {
    const char *ra = rec(h, a);
    return dist_q(h, ra + h->vec_off, rrange(h, ra) / 127, rec(h, b));
}

/* ---- encoding --------------------------------------------------------------------- */

/* L2-normalise x in place (the summation order is Redis's, so the bytes
 * agree); returns the norm, 1 for an all-zero vector, which stays zero. */
static float normalise(float *x, uint32_t dim) {
    float l2 = 0;
    uint32_t i = 0;
    for (; i + 3 < dim; i += 4) l2 += x[i] * x[i] + x[i + 1] * x[i + 1] + x[i + 2] * x[i + 2] + x[i + 3] * x[i + 3];
    for (; i < dim; i++) l2 += x[i] * x[i];
    if (l2 == 0) return 1.0f;
    l2 = sqrtf(l2);
    for (i = 0; i < dim; i++) x[i] /= l2;
    return l2;
}

static float quant_q8(const float *x, int8_t *out, uint32_t dim) {
    float mx = 0;
    for (uint32_t i = 0; i < dim; i++) {
        if (x[i] > mx) mx = x[i];
        if (-x[i] > mx) mx = -x[i];
    }
    if (mx == 0) {
        memset(out, 0, dim);
        return 0;
    }
    float scale = 127.0f / mx;
    for (uint32_t i = 0; i < dim; i++) out[i] = (int8_t)roundf(x[i] * scale);
    return mx;
}

static void quant_bin(const float *x, uint64_t *out, uint32_t dim) {
    memset(out, 0, (size_t)(dim + 63) / 64 * 8);
    for (uint32_t i = 0; i < dim; i++)
        if (x[i] > 0) out[i / 64] |= 1ULL << (i & 63);
}

/* Encode v (dim floats) into out (vbytes); tmp has room for dim floats.
 * Returns the Q8 range (0 for other encodings); *norm gets the norm. */
static float encode(const struct hnsw *h, const float *v, float *tmp, void *out, float *norm) {
    memcpy(tmp, v, (size_t)h->dim * sizeof(float));
    *norm = normalise(tmp, h->dim);
    switch (h->quant) {
    case HNSW_QUANT_Q8:
        return quant_q8(tmp, out, h->dim);
    case HNSW_QUANT_BIN:
        quant_bin(tmp, out, h->dim);
        return 0;
    default:
        if (out != tmp) memcpy(out, tmp, (size_t)h->dim * sizeof(float));
        return 0;
    }
}

/* ---- lifecycle ------------------------------------------------------------------- */

static uint32_t vec_bytes_for(uint32_t dim, enum hnsw_quant q) {
    switch (q) {
    case HNSW_QUANT_Q8:
        return dim;
    case HNSW_QUANT_BIN:
        return (dim + 63) / 64 * 8;
    default:
        return dim * 4;
    }
}

struct hnsw *hnsw_new(uint32_t dim, enum hnsw_quant quant, uint32_t M) {
    if (dim < 1 || M < HNSW_MIN_M || M > HNSW_MAX_M) return NULL;
    if (quant != HNSW_QUANT_NONE && quant != HNSW_QUANT_Q8 && quant != HNSW_QUANT_BIN) return NULL;
    if (dim > (UINT32_MAX - HDR_BYTES - 8u * HNSW_MAX_M) / 4) return NULL;
    struct hnsw *h = hk_calloc(1, sizeof(*h));
    h->mem = hk_usable_size(h);
    h->nallocs = 1;
    h->dim = dim;
    h->M = M;
    h->maxm0 = 2 * M;
    h->quant = quant;
    h->vbytes = vec_bytes_for(dim, quant);
    h->vec_off = HDR_BYTES + 4 * h->maxm0 + 8;
    h->rec_size = (h->vec_off + h->vbytes + 7) & ~7u;
    /* Full chunks just under CHUNK_BYTES: the allocator's size classes
     * are coarse at that size, so a power of two wastes the least. */
    uint32_t per = CHUNK_BYTES / h->rec_size;
    if (per < 1) per = 1;
    if (per > 65536) per = 65536;
    h->per = per;
    h->magic = ((1ULL << 48) + per - 1) / per;
    h->entry = HNSW_NONE;
    h->k = vd_kernels();
    return h;
}

void hnsw_free(struct hnsw *h) {
    if (!h) return;
    for (uint32_t id = 0; id < h->bound; id++) {
        struct rec_hdr *r = hdr(h, id);
        if ((r->meta & META_LIVE) && r->upper) hk_free(r->upper);
    }
    for (uint32_t c = 0; c < h->nchunks; c++) hk_free(h->chunks[c]);
    hk_free(h->chunks);
    hk_free(h->freelist);
    hk_free(h);
}

/* ---- getters ------------------------------------------------------------------- */

uint32_t hnsw_dim(const struct hnsw *h) { return h->dim; }
enum hnsw_quant hnsw_quant(const struct hnsw *h) { return h->quant; }
uint32_t hnsw_m(const struct hnsw *h) { return h->M; }
uint32_t hnsw_count(const struct hnsw *h) { return h->count; }
uint32_t hnsw_id_bound(const struct hnsw *h) { return h->bound; }
uint32_t hnsw_max_level(const struct hnsw *h) { return h->count ? h->max_level : 0; }
uint32_t hnsw_entry(const struct hnsw *h) { return h->count ? h->entry : HNSW_NONE; }
size_t hnsw_memory(const struct hnsw *h) { return h->mem; }
size_t hnsw_free_effort(const struct hnsw *h) { return h->nallocs; }
size_t hnsw_vec_bytes(const struct hnsw *h) { return h->vbytes; }
uint64_t hnsw_delete_scans(const struct hnsw *h) { return h->del_scans; }

int hnsw_live(const struct hnsw *h, uint32_t id) { return id < h->bound && (hdr(h, id)->meta & META_LIVE) != 0; }

void *hnsw_value(const struct hnsw *h, uint32_t id) { return hdr(h, id)->value; }
void hnsw_set_value(struct hnsw *h, uint32_t id, void *value) { hdr(h, id)->value = value; }
uint32_t hnsw_level(const struct hnsw *h, uint32_t id) { return rlevel(hdr(h, id)); }

uint32_t hnsw_links(const struct hnsw *h, uint32_t id, uint32_t level, const uint32_t **ids) {
    uint32_t n;
    *ids = list_at(h, id, level, &n);
    return n;
}

float hnsw_node_distance(const struct hnsw *h, uint32_t a, uint32_t b) { return dist_nodes(h, a, b); }

uint32_t hnsw_in_degree(const struct hnsw *h, uint32_t id) {
    uint32_t d = hdr(h, id)->indeg;
    return d == INDEG_MAX ? HNSW_NONE : d;
}

void hnsw_vector(const struct hnsw *h, uint32_t id, float *out) {
    const char *r = rec(h, id);
    const void *v = r + h->vec_off;
    float norm = rnorm(h, r), range = rrange(h, r);
    switch (h->quant) {
    case HNSW_QUANT_Q8:
        for (uint32_t i = 0; i < h->dim; i++) out[i] = ((const int8_t *)v)[i] * range / 127 * norm;
        break;
    case HNSW_QUANT_BIN:
        /* Signs only: the magnitude is gone, as in Redis. */
        for (uint32_t i = 0; i < h->dim; i++)
            out[i] = (((const uint64_t *)v)[i / 64] >> (i & 63)) & 1 ? 1.0f : -1.0f;
        break;
    default:
        for (uint32_t i = 0; i < h->dim; i++) out[i] = ((const float *)v)[i] * norm;
        break;
    }
}

const void *hnsw_raw(const struct hnsw *h, uint32_t id, float *norm, float *range) {
    const char *r = rec(h, id);
    if (norm) *norm = rnorm(h, r);
    if (range) *range = rrange(h, r);
    return r + h->vec_off;
}

/* ---- searcher ------------------------------------------------------------------ */

struct hnsw_searcher *hnsw_searcher_new(void) { return hk_calloc(1, sizeof(struct hnsw_searcher)); }

void hnsw_searcher_free(struct hnsw_searcher *s) {
    if (!s) return;
    hk_free(s->vis);
    hk_free(s->cand);
    hk_free(s->res);
    hk_free(s->sel);
    hk_free(s->tmp);
    hk_free(s->qf);
    hk_free(s->qv);
    hk_free(s->batch);
    hk_free(s->batch_id);
    hk_free(s->pairs);
    hk_free(s);
}

/* Start a new visited generation covering ids below `bound`. */
static void vis_begin(struct hnsw_searcher *s, uint32_t bound) {
    if (bound > s->viscap) {
        uint32_t old = s->viscap;
        s->vis = grow(s->vis, &s->viscap, bound, sizeof(uint16_t));
        memset(s->vis + old, 0, (size_t)(s->viscap - old) * sizeof(uint16_t));
    }
    if (++s->tag == 0) {
        memset(s->vis, 0, (size_t)s->viscap * sizeof(uint16_t));
        s->tag = 1;
    }
}

/* Room for the encoded query (and the float scratch) of graph h. */
static void query_room(struct hnsw_searcher *s, const struct hnsw *h) {
    size_t fb = (size_t)h->dim * sizeof(float);
    if (s->qfcap < fb) {
        s->qf = hk_realloc(s->qf, fb);
        s->qfcap = fb;
    }
    if (s->qvcap < fb) {
        s->qv = hk_realloc(s->qv, fb);
        s->qvcap = fb;
    }
}

/* Candidates: a min-heap on distance. Results: a max-heap. */
static inline void cand_push(struct hnsw_searcher *s, uint32_t id, float d) {
    if (s->nc == s->ccap) s->cand = grow(s->cand, &s->ccap, s->nc + 1, sizeof(struct hnsw_hit));
    struct hnsw_hit *a = s->cand;
    uint32_t i = s->nc++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (a[p].dist <= d) break;
        a[i] = a[p];
        i = p;
    }
    a[i].id = id;
    a[i].dist = d;
}

static inline void cand_pop(struct hnsw_searcher *s) {
    struct hnsw_hit *a = s->cand;
    struct hnsw_hit last = a[--s->nc];
    uint32_t n = s->nc, i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && a[c + 1].dist < a[c].dist) c++;
        if (last.dist <= a[c].dist) break;
        a[i] = a[c];
        i = c;
    }
    if (n) a[i] = last;
}

/* The result order: by distance, then by id, so that ties resolve the
 * same way in every search (the exact scan included). */
static inline int hit_after(const struct hnsw_hit *a, float d, uint32_t id) {
    return a->dist > d || (a->dist == d && a->id > id);
}

static inline void res_push(struct hnsw_searcher *s, uint32_t id, float d) {
    if (s->nr == s->rcap) s->res = grow(s->res, &s->rcap, s->nr + 1, sizeof(struct hnsw_hit));
    struct hnsw_hit *a = s->res;
    uint32_t i = s->nr++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (hit_after(&a[p], d, id)) break;
        a[i] = a[p];
        i = p;
    }
    a[i].id = id;
    a[i].dist = d;
}

static inline void res_pop(struct hnsw_searcher *s) {
    struct hnsw_hit *a = s->res;
    struct hnsw_hit last = a[--s->nr];
    uint32_t n = s->nr, i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && hit_after(&a[c + 1], a[c].dist, a[c].id)) c++;
        if (hit_after(&last, a[c].dist, a[c].id)) break;
        a[i] = a[c];
        i = c;
    }
    if (n) a[i] = last;
}

/* Sort hits ascending (ties by id) in place: a heap sort, because libc's
 * qsort may allocate and a warm query must not. */
static void sift_down(struct hnsw_hit *a, uint32_t i, uint32_t n) {
    struct hnsw_hit x = a[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && hit_after(&a[c + 1], a[c].dist, a[c].id)) c++;
        if (!hit_after(&a[c], x.dist, x.id)) break;
        a[i] = a[c];
        i = c;
    }
    a[i] = x;
}

static void hits_sort(struct hnsw_hit *a, uint32_t n) {
    if (n < 2) return;
    for (uint32_t i = n / 2; i-- > 0;) sift_down(a, i, n);
    for (uint32_t end = n - 1; end > 0; end--) {
        struct hnsw_hit t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down(a, 0, end);
    }
}

/* Move the k nearest of a[0..n) (ties by id) to a[0..k), ascending; the
 * order of the rest is unspecified. A max-heap of the k best so far: most
 * of the others cost one comparison. */
static void hits_nearest(struct hnsw_hit *a, uint32_t n, uint32_t k) {
    if (k >= n) {
        hits_sort(a, n);
        return;
    }
    if (k == 0) return;
    for (uint32_t i = k / 2; i-- > 0;) sift_down(a, i, k);
    for (uint32_t j = k; j < n; j++) {
        if (!hit_after(&a[0], a[j].dist, a[j].id)) continue;
        struct hnsw_hit t = a[0];
        a[0] = a[j];
        a[j] = t;
        sift_down(a, 0, k);
    }
    for (uint32_t end = k - 1; end > 0; end--) {
        struct hnsw_hit t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down(a, 0, end);
    }
}

/* Empty the result heap into out, ascending (ties by id); returns the
 * number of hits written (at most `max`). */
static uint32_t res_drain(struct hnsw_searcher *s, struct hnsw_hit *out, uint32_t max) {
    uint32_t n = s->nr;
    /* The array is already a max-heap: finish the heap sort in place. */
    for (uint32_t end = n; end-- > 1;) {
        struct hnsw_hit t = s->res[0];
        s->res[0] = s->res[end];
        s->res[end] = t;
        sift_down(s->res, 0, end);
    }
    if (n > max) n = max;
    if (n) memcpy(out, s->res, (size_t)n * sizeof(struct hnsw_hit));
    s->nr = 0;
    return n;
}

/* ---- search ----------------------------------------------------------------------- */

/* Greedy descent from (cur, *curd) through levels from..to+1; returns the
 * node closest to the query found at level to+1. */
static uint32_t descend(const struct hnsw *h, const void *qv, float qr, uint32_t cur, float *curd, uint32_t from,
                        uint32_t to) {
    for (uint32_t l = from; l > to; l--) {
        int changed = 1;
        while (changed) {
            changed = 0;
            uint32_t n;
            const uint32_t *lk = list_at(h, cur, l, &n);
            for (uint32_t j = 0; j < n; j++) {
                float d = dist_q(h, qv, qr, rec(h, lk[j]));
                if (d < *curd) {
                    *curd = d;
                    cur = lk[j];
                    changed = 1;
                }
            }
        }
    }
    return cur;
}

/* Beam search of one level from ep: leaves the ef nearest found in the
 * result heap. Each expansion first gathers the unvisited neighbours and
 * prefetches all their vectors, then computes the distances, so the
 * memory loads overlap instead of arriving one at a time. */
static void search_level(const struct hnsw *h, struct hnsw_searcher *s, const void *qv, float qr, uint32_t ep,
                         float epd, uint32_t ef, uint32_t level) {
    vis_begin(s, h->bound);
    uint32_t mx = max_links(h, level);
    if (s->batchcap < mx) {
        s->batch = grow(s->batch, &s->batchcap, mx, sizeof(*s->batch));
        s->batch_id = grow(s->batch_id, &s->batchidcap, mx, sizeof(*s->batch_id));
    }
    const char **batch = s->batch;
    uint32_t *bid = s->batch_id;
    uint16_t *vis = s->vis, tag = s->tag;
    /* Lines of each vector worth prefetching by hand (the hardware
     * prefetcher streams the rest of a long one). */
    uint32_t lines = (h->vbytes + 8 + 63) / 64;
    if (lines > 4) lines = 4;
    const uint32_t voff = h->vec_off - 8;
    s->nc = s->nr = 0;
    vis[ep] = tag;
    cand_push(s, ep, epd);
    res_push(s, ep, epd);
    while (s->nc) {
        struct hnsw_hit c = s->cand[0];
        if (c.dist > s->res[0].dist && s->nr >= ef) break;
        cand_pop(s);
        if (s->nc) __builtin_prefetch(rec(h, s->cand[0].id));
        uint32_t n;
        const uint32_t *lk = list_at(h, c.id, level, &n);
        uint32_t m = 0;
        for (uint32_t j = 0; j < n; j++) {
            uint32_t nb = lk[j];
            if (vis[nb] == tag) continue;
            vis[nb] = tag;
            const char *r = rec(h, nb);
            for (uint32_t k = 0; k < lines; k++) __builtin_prefetch(r + voff + 64 * k);
            batch[m] = r;
            bid[m++] = nb;
        }
        for (uint32_t j = 0; j < m; j++) {
            float d = dist_q(h, qv, qr, batch[j]);
            if (s->nr < ef || d < s->res[0].dist) {
                cand_push(s, bid[j], d);
                res_push(s, bid[j], d);
                if (s->nr > ef) res_pop(s);
            }
        }
    }
}

/* Level-0 beam search with a filter, stopping as Redis's vector sets do:
 * a count of expanded candidates (the entry point counts as one) bounded
 * by max_tests, rejected nodes still explored. The filter is asked only
 * about nodes close enough to enter the results. */
static void search_filtered(const struct hnsw *h, struct hnsw_searcher *s, const void *qv, float qr, uint32_t ep,
                            float epd, uint32_t ef, hnsw_filter_fn filter, void *farg, uint32_t max_tests) {
    vis_begin(s, h->bound);
    uint16_t *vis = s->vis, tag = s->tag;
    s->nc = s->nr = 0;
    uint32_t evaluated = 1;
    vis[ep] = tag;
    cand_push(s, ep, epd);
    if (filter(farg, ep, hdr(h, ep)->value)) res_push(s, ep, epd);
    while (s->nc) {
        if (max_tests && evaluated >= max_tests) break;
        struct hnsw_hit c = s->cand[0];
        cand_pop(s);
        evaluated++;
        if (s->nr >= ef && c.dist > s->res[0].dist) break;
        uint32_t n;
        const uint32_t *lk = list_at(h, c.id, 0, &n);
        for (uint32_t j = 0; j < n; j++) __builtin_prefetch(&vis[lk[j]]);
        for (uint32_t j = 0; j < n; j++) {
            uint32_t nb = lk[j];
            if (j + 1 < n) __builtin_prefetch(rec(h, lk[j + 1]) + h->vec_off - 8);
            if (vis[nb] == tag) continue;
            vis[nb] = tag;
            const char *r = rec(h, nb);
            float d = dist_q(h, qv, qr, r);
            float far = s->nr ? s->res[0].dist : INFINITY;
            if (d < far || s->nc < ef) cand_push(s, nb, d);
            if ((d < far || s->nr < ef) && filter(farg, nb, ((const struct rec_hdr *)r)->value)) {
                res_push(s, nb, d);
                if (s->nr > ef) res_pop(s);
            }
        }
    }
}

/* Encode a query into the searcher; returns its Q8 range / 127. */
static float encode_query(const struct hnsw *h, struct hnsw_searcher *s, const float *q, const void **qv) {
    query_room(s, h);
    float norm;
    void *out = h->quant == HNSW_QUANT_NONE ? (void *)s->qf : s->qv;
    float r = encode(h, q, s->qf, out, &norm);
    *qv = out;
    return r / 127;
}

uint32_t hnsw_search(const struct hnsw *h, struct hnsw_searcher *s, const float *q, uint32_t k, uint32_t ef,
                     hnsw_filter_fn filter, void *farg, uint32_t max_tests, struct hnsw_hit *out) {
    if (h->count == 0 || k == 0) return 0;
    if (ef < k) ef = k;
    const void *qv;
    float qr = encode_query(h, s, q, &qv);
    uint32_t ep = h->entry;
    float epd = dist_q(h, qv, qr, rec(h, ep));
    ep = descend(h, qv, qr, ep, &epd, h->max_level, 0);
    if (filter)
        search_filtered(h, s, qv, qr, ep, epd, ef, filter, farg, max_tests);
    else
        search_level(h, s, qv, qr, ep, epd, ef, 0);
    return res_drain(s, out, k);
}

uint32_t hnsw_search_exact(const struct hnsw *h, struct hnsw_searcher *s, const float *q, uint32_t k,
                           hnsw_filter_fn filter, void *farg, struct hnsw_hit *out) {
    if (h->count == 0 || k == 0) return 0;
    const void *qv;
    float qr = encode_query(h, s, q, &qv);
    s->nr = 0;
    for (uint32_t id = 0; id < h->bound; id++) {
        const char *r = rec(h, id);
        const struct rec_hdr *rh = (const struct rec_hdr *)r;
        if (!(rh->meta & META_LIVE)) continue;
        float d = dist_q(h, qv, qr, r);
        if (s->nr >= k) {
            struct hnsw_hit w = s->res[0];
            if (d > w.dist || (d == w.dist && id > w.id)) continue;
        }
        if (filter && !filter(farg, id, rh->value)) continue;
        res_push(s, id, d);
        if (s->nr > k) res_pop(s);
    }
    return res_drain(s, out, k);
}

/* ---- neighbour selection ------------------------------------------------------ */

/* The heuristic of the paper (algorithm 4, as hnswlib runs it): walk the
 * candidates nearest first and keep one only if it is closer to the base
 * node than to every node kept so far; at most m. Fewer than m candidates
 * are all kept. `c` is sorted ascending; the kept ones go to out. */
static uint32_t select_heuristic(const struct hnsw *h, const struct hnsw_hit *c, uint32_t n, uint32_t m,
                                 struct hnsw_hit *out) {
    if (n <= m) {
        if (n) memcpy(out, c, (size_t)n * sizeof(*c));
        return n;
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n && kept < m; i++) {
        int good = 1;
        const char *ci = rec(h, c[i].id);
        const void *cv = ci + h->vec_off;
        float cr = rrange(h, ci) / 127;
        for (uint32_t j = 0; j < kept; j++) {
            if (dist_q(h, cv, cr, rec(h, out[j].id)) < c[i].dist) {
                good = 0;
                break;
            }
        }
        if (good) out[kept++] = c[i];
    }
    return kept;
}

/* Add a link nb -> id at `level` (d = their distance): appended when nb has
 * room, else nb's list is re-selected by the heuristic over its links and
 * id. Uses s->tmp. */
static void add_backlink(struct hnsw *h, struct hnsw_searcher *s, uint32_t nb, uint32_t id, float d,
                         uint32_t level) {
    uint32_t n, mx = max_links(h, level);
    uint32_t *lk = list_at(h, nb, level, &n);
    for (uint32_t j = 0; j < n; j++)
        if (lk[j] == id) return;
    if (n < mx) {
        lk[n] = id;
        set_count(h, nb, level, n + 1);
        indeg_add(h, id);
        return;
    }
    s->tmp = grow(s->tmp, &s->tmpcap, 2 * (n + 1), sizeof(struct hnsw_hit));
    struct hnsw_hit *c = s->tmp, *out = s->tmp + n + 1;
    const char *rb = rec(h, nb);
    const void *bv = rb + h->vec_off;
    float br = rrange(h, rb) / 127;
    for (uint32_t j = 0; j < n; j++) {
        c[j].id = lk[j];
        c[j].dist = dist_q(h, bv, br, rec(h, lk[j]));
    }
    c[n].id = id;
    c[n].dist = d;
    hits_sort(c, n + 1);
    uint32_t k = select_heuristic(h, c, n + 1, mx, out);
    for (uint32_t j = 0; j <= n; j++) {
        uint32_t kept = 0;
        for (uint32_t t = 0; t < k && !kept; t++) kept = out[t].id == c[j].id;
        if (c[j].id == id) {
            if (kept) indeg_add(h, id);
        } else if (!kept) {
            indeg_sub(h, c[j].id);
        }
    }
    for (uint32_t j = 0; j < k; j++) lk[j] = out[j].id;
    set_count(h, nb, level, k);
}

/* ---- insert ---------------------------------------------------------------------- */

void hnsw_insert_init(struct hnsw_insert *ins) { memset(ins, 0, sizeof(*ins)); }

void hnsw_insert_release(struct hnsw_insert *ins) {
    hk_free(ins->vec);
    for (int l = 0; l <= HNSW_MAX_LEVEL; l++) hk_free(ins->cand[l]);
    memset(ins, 0, sizeof(*ins));
}

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The level of a new node: floor(-ln(u) / ln(M)) for u uniform in (0, 1]
 * (the paper's mL = 1/ln(M): a node reaches level l with chance M^-l). */
static uint32_t draw_level(uint64_t rnd, uint32_t M) {
    uint64_t x = rnd;
    double u = (double)((splitmix64(&x) >> 11) + 1) * (1.0 / 9007199254740992.0);
    double l = -log(u) / log((double)M);
    if (l >= HNSW_MAX_LEVEL) return HNSW_MAX_LEVEL;
    return (uint32_t)l;
}

/* Fill ins->cand for every level up to min(ins->level, max_level): the
 * ef_construction nearest found at each, ascending. Read-only on h. */
static void find_candidates(const struct hnsw *h, struct hnsw_searcher *s, struct hnsw_insert *ins, uint32_t efc) {
    for (int l = 0; l <= HNSW_MAX_LEVEL; l++) ins->ncand[l] = 0;
    ins->epoch = h->del_epoch;
    if (h->count == 0) return;
    uint32_t top = h->max_level;
    uint32_t ep = h->entry;
    float qs = ins->range / 127;
    float epd = dist_q(h, ins->vec, qs, rec(h, ep));
    if (ins->level < top) {
        ep = descend(h, ins->vec, qs, ep, &epd, top, ins->level);
        top = ins->level;
    }
    for (uint32_t l = top + 1; l-- > 0;) {
        search_level(h, s, ins->vec, qs, ep, epd, efc, l);
        if (ins->ccap[l] < s->nr) ins->cand[l] = grow(ins->cand[l], &ins->ccap[l], s->nr, sizeof(struct hnsw_hit));
        uint32_t n = res_drain(s, ins->cand[l], UINT32_MAX);
        ins->ncand[l] = n;
        ep = ins->cand[l][0].id;
        epd = ins->cand[l][0].dist;
    }
}

void hnsw_insert_prepare(const struct hnsw *h, struct hnsw_searcher *s, const float *v, uint32_t ef_construction,
                         uint64_t rnd, struct hnsw_insert *ins) {
    if (ef_construction == 0) ef_construction = EF_DEFAULT;
    query_room(s, h);
    if (ins->veccap < h->vbytes) {
        ins->vec = hk_realloc(ins->vec, h->vbytes);
        ins->veccap = h->vbytes;
    }
    ins->range = encode(h, v, s->qf, ins->vec, &ins->norm);
    ins->level = draw_level(rnd, h->M);
    find_candidates(h, s, ins, ef_construction);
}

/* A fresh or recycled id with a record behind it. */
static uint32_t alloc_id(struct hnsw *h) {
    if (h->nfree) return h->freelist[--h->nfree];
    uint32_t per = h->per, id = h->bound;
    if (h->nchunks == 0 || id == (h->nchunks - 1) * per + h->last_cap) {
        if (h->nchunks && h->last_cap < per) {
            /* The last chunk grows by an eighth (at most CHUNK_BYTES are
             * copied), and uses whatever slack the allocator's size class
             * gives, so little is allocated and unused. */
            uint32_t cap = h->last_cap + (h->last_cap / 8 > 8 ? h->last_cap / 8 : 8);
            if (cap > per) cap = per;
            char *c = g_realloc(h, h->chunks[h->nchunks - 1], (size_t)cap * h->rec_size);
            size_t fit = hk_usable_size(c) / h->rec_size;
            h->chunks[h->nchunks - 1] = c;
            h->last_cap = fit < per ? (uint32_t)fit : per;
        } else {
            if (h->nchunks == h->chunks_cap) {
                h->chunks_cap = h->chunks_cap ? h->chunks_cap * 2 : 4;
                h->chunks = g_realloc(h, h->chunks, h->chunks_cap * sizeof(char *));
            }
            uint32_t cap = h->nchunks ? per / 4 : 8;
            if (cap < 8) cap = 8;
            if (cap > per) cap = per;
            char *c = g_alloc(h, (size_t)cap * h->rec_size);
            size_t fit = hk_usable_size(c) / h->rec_size;
            h->chunks[h->nchunks++] = c;
            h->last_cap = fit < per ? (uint32_t)fit : per;
        }
    }
    h->bound++;
    return id;
}

/* Lay a node into record id (links empty). */
static void init_node(struct hnsw *h, uint32_t id, uint32_t level, const void *vec, float norm, float range,
                      void *value) {
    char *r = rec(h, id);
    struct rec_hdr *rh = (struct rec_hdr *)r;
    rh->meta = META_LIVE | (level << META_LEVEL_SHIFT);
    rh->born = (uint16_t)h->del_epoch;
    rh->indeg = 0;
    float *nr = (float *)(r + h->vec_off - 8);
    nr[0] = norm;
    nr[1] = range;
    rh->value = value;
    rh->upper = NULL;
    if (level) {
        size_t words = (size_t)level * (h->M + 1);
        rh->upper = g_alloc(h, words * sizeof(uint32_t));
        for (uint32_t l = 0; l < level; l++) rh->upper[(size_t)l * (h->M + 1)] = 0;
    }
    memcpy(r + h->vec_off, vec, h->vbytes);
}

/* Drop candidates a delete since the prepare made stale: dead ids, ids
 * reused by a later insert (born after the prepare's epoch), nodes below
 * the level. */
static void revalidate(const struct hnsw *h, struct hnsw_insert *ins, uint32_t top) {
    uint16_t seen = (uint16_t)ins->epoch;
    for (uint32_t l = 0; l <= top; l++) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < ins->ncand[l]; i++) {
            uint32_t c = ins->cand[l][i].id;
            if (c >= h->bound) continue;
            const struct rec_hdr *rh = hdr(h, c);
            if (!(rh->meta & META_LIVE) || (int16_t)(uint16_t)(rh->born - seen) > 0 || rlevel(rh) < l) continue;
            ins->cand[l][k++] = ins->cand[l][i];
        }
        ins->ncand[l] = k;
    }
}

uint32_t hnsw_insert_commit(struct hnsw *h, struct hnsw_searcher *s, struct hnsw_insert *ins, void *value,
                            uint32_t ef_construction) {
    if (ef_construction == 0) ef_construction = EF_DEFAULT;
    uint32_t top = 0;
    if (h->count) {
        top = ins->level < h->max_level ? ins->level : h->max_level;
        if (ins->epoch != h->del_epoch) revalidate(h, ins, top);
        int redo = 0;
        for (uint32_t l = 0; l <= top; l++)
            if (ins->ncand[l] == 0) redo = 1;
        if (redo) find_candidates(h, s, ins, ef_construction);
    }
    uint32_t id = alloc_id(h);
    init_node(h, id, ins->level, ins->vec, ins->norm, ins->range, value);
    h->wseq++;
    if (h->count == 0) {
        h->entry = id;
        h->max_level = ins->level;
        h->count = 1;
        return id;
    }
    s->sel = grow(s->sel, &s->selcap, h->maxm0, sizeof(struct hnsw_hit));
    for (uint32_t l = top + 1; l-- > 0;) {
        uint32_t m = select_heuristic(h, ins->cand[l], ins->ncand[l], h->M, s->sel);
        uint32_t *lk;
        uint32_t n;
        lk = list_at(h, id, l, &n);
        for (uint32_t j = 0; j < m; j++) {
            lk[j] = s->sel[j].id;
            indeg_add(h, lk[j]);
        }
        set_count(h, id, l, m);
        for (uint32_t j = 0; j < m; j++) add_backlink(h, s, lk[j], id, s->sel[j].dist, l);
    }
    if (ins->level > h->max_level) {
        h->entry = id;
        h->max_level = ins->level;
    }
    h->count++;
    return id;
}

/* ---- delete ----------------------------------------------------------------------- */

static void plan_push(struct del_plan *p, uint32_t w) {
    if (p->nwords == p->capwords) {
        p->capwords = p->capwords ? p->capwords * 2 : 256;
        p->words = hk_realloc(p->words, (size_t)p->capwords * sizeof(uint32_t));
    }
    p->words[p->nwords++] = w;
}

/* The new list of x at level l once d is gone, chosen among x's other
 * links, d's links and their links (two hops through d, so that x can
 * reach what d connected it to): first the insertion heuristic, then the
 * nearest of the rest up to the level's maximum. The top-up matters:
 * with the heuristic alone, deleting half of a graph costs several points
 * of recall against a fresh graph of the other half; with it, none. */
static void plan_repair(const struct hnsw *h, struct hnsw_searcher *s, struct del_plan *p, uint32_t x, uint32_t d,
                        uint32_t l) {
    uint32_t nx, nd, mx = max_links(h, l);
    const uint32_t *lx = list_at(h, x, l, &nx);
    const uint32_t *ld = list_at(h, d, l, &nd);
    vis_begin(s, h->bound);
    struct hnsw_hit *c = s->tmp;
    uint32_t n = 0;
    const char *rx = rec(h, x);
    const void *xv = rx + h->vec_off;
    float xr = rrange(h, rx) / 127;
    s->vis[x] = s->vis[d] = s->tag;
    /* x's links, d's links, then the links of the few of d's links nearest
     * to x (after the second pass, c[nx'..n) holds d's links by distance). */
    uint32_t hop_from = 0, hops = 0;
    for (uint32_t pass = 0; pass < 2 + hops; pass++) {
        uint32_t cnt;
        const uint32_t *lk;
        if (pass < 2) {
            lk = pass ? ld : lx;
            cnt = pass ? nd : nx;
            if (pass) hop_from = n;
        } else {
            if (pass == 2) hits_sort(c + hop_from, n - hop_from);
            lk = list_at(h, c[hop_from + pass - 2].id, l, &cnt);
        }
        s->tmp = grow(s->tmp, &s->tmpcap, 2 * (n + cnt), sizeof(struct hnsw_hit));
        c = s->tmp;
        for (uint32_t j = 0; j < cnt; j++) {
            uint32_t y = lk[j];
            if (s->vis[y] == s->tag) continue;
            s->vis[y] = s->tag;
            c[n].id = y;
            c[n].dist = dist_q(h, xv, xr, rec(h, y));
            n++;
        }
        if (pass == 1) {
            hops = n - hop_from;
            if (hops > REPAIR_HOPS) hops = REPAIR_HOPS;
        }
    }
    /* Only the nearest `pool` need an order: the heuristic looks at no
     * others, and the top-up (fewer than mx) finds enough among them. */
    struct hnsw_hit *out = s->tmp + n;
    uint32_t pool = REPAIR_POOL * mx < n ? REPAIR_POOL * mx : n;
    hits_nearest(c, n, pool);
    uint32_t k = select_heuristic(h, c, pool, mx, out);
    if (k < mx) {
        /* Top up from the nearest candidates the heuristic passed over. */
        vis_begin(s, h->bound);
        for (uint32_t j = 0; j < k; j++) s->vis[out[j].id] = s->tag;
        for (uint32_t j = 0; j < pool && k < mx; j++)
            if (s->vis[c[j].id] != s->tag) out[k++] = c[j];
    }
    plan_push(p, x);
    plan_push(p, l);
    plan_push(p, k);
    for (uint32_t j = 0; j < k; j++) plan_push(p, out[j].id);
}

/* Record that x's list at level l holds d (s->pairs, *found). */
static inline void pair_add(struct hnsw_searcher *s, uint32_t *found, uint32_t x, uint32_t l) {
    s->pairs = grow(s->pairs, &s->paircap, 2 * (*found + 1), sizeof(uint32_t));
    s->pairs[2 * *found] = x;
    s->pairs[2 * *found + 1] = l;
    (*found)++;
}

static inline int list_holds(const struct hnsw *h, uint32_t x, uint32_t l, uint32_t d) {
    uint32_t n;
    const uint32_t *lk = list_at(h, x, l, &n);
    for (uint32_t j = 0; j < n; j++)
        if (lk[j] == d) return 1;
    return 0;
}

/* The lists holding d, looked for where they must be: a node that chose d
 * as a neighbour is near d, so a beam search for d's own vector (from d, at
 * each of its levels, a beam of `mult` lists' worth) visits it. Every node
 * the search visits has its list at that level checked; d's out-links come
 * first (d is its own nearest). Returns how many lists were found, listed
 * in s->pairs. Read-only on h. */
static uint32_t find_near(const struct hnsw *h, struct hnsw_searcher *s, uint32_t d, uint32_t mult) {
    uint32_t ld = rlevel(hdr(h, d)), found = 0;
    const char *rd = rec(h, d);
    const void *qv = rd + h->vec_off;
    float qr = rrange(h, rd) / 127;
    for (uint32_t l = ld + 1; l-- > 0;) {
        uint32_t ef = mult * max_links(h, l);
        vis_begin(s, h->bound);
        uint16_t *vis = s->vis, tag = s->tag;
        s->nc = s->nr = 0;
        vis[d] = tag;
        cand_push(s, d, 0);
        res_push(s, d, 0);
        while (s->nc) {
            struct hnsw_hit c = s->cand[0];
            if (c.dist > s->res[0].dist && s->nr >= ef) break;
            cand_pop(s);
            uint32_t n;
            const uint32_t *lk = list_at(h, c.id, l, &n);
            for (uint32_t j = 0; j < n; j++) {
                uint32_t nb = lk[j];
                if (vis[nb] == tag) continue;
                vis[nb] = tag;
                if (list_holds(h, nb, l, d)) pair_add(s, &found, nb, l);
                float dist = dist_q(h, qv, qr, rec(h, nb));
                if (s->nr < ef || dist < s->res[0].dist) {
                    cand_push(s, nb, dist);
                    res_push(s, nb, dist);
                    if (s->nr > ef) res_pop(s);
                }
            }
        }
        s->nr = s->nc = 0;
    }
    return found;
}

/* Repairs for the lists holding d when searches near d find them all (the
 * beam widens while some are missing); returns 0, with nothing planned,
 * when even the widest search left some out. Repairs start only once the
 * lists are all accounted for, so a miss wastes no repair work. */
static int plan_near(const struct hnsw *h, struct hnsw_searcher *s, uint32_t d, struct del_plan *p) {
    uint32_t indeg = hdr(h, d)->indeg;
    for (uint32_t mult = DEL_EF_FIRST; mult <= DEL_EF_MAX; mult *= DEL_EF_GROW) {
        uint32_t found = find_near(h, s, d, mult);
        if (found == indeg) {
            for (uint32_t i = 0; i < found; i++) plan_repair(h, s, p, s->pairs[2 * i], d, s->pairs[2 * i + 1]);
            return 1;
        }
    }
    return 0;
}

static void plan_build(const struct hnsw *h, struct hnsw_searcher *s, uint32_t d, struct del_plan *p) {
    p->nwords = 0;
    p->wseq = h->wseq;
    p->new_entry = HNSW_NONE;
    p->scanned = 0;
    uint32_t ld = rlevel(hdr(h, d)), best = 0;
    uint32_t indeg = hdr(h, d)->indeg;
    /* The neighbourhood first; a scan of the whole graph only when that
     * did not account for every list holding d (or the entry point goes,
     * which needs the highest node). */
    if (h->entry != d && indeg != INDEG_MAX) {
        if (plan_near(h, s, d, p)) return;
    }
    /* Links are directed, so the nodes that point to d are found by a scan
     * of the lists up to d's level: to the end when the entry point goes,
     * else until they account for d's in-degree. */
    p->scanned = 1;
    uint32_t found = 0, want = h->entry == d || indeg == INDEG_MAX ? UINT32_MAX : indeg;
    for (uint32_t x = 0; x < h->bound && found < want; x++) {
        if (x == d) continue;
        const struct rec_hdr *rh = hdr(h, x);
        if (!(rh->meta & META_LIVE)) continue;
        uint32_t lx = rlevel(rh);
        if (h->entry == d && (p->new_entry == HNSW_NONE || lx > best)) {
            p->new_entry = x;
            best = lx;
        }
        uint32_t top = lx < ld ? lx : ld;
        for (uint32_t l = 0; l <= top; l++)
            if (list_holds(h, x, l, d)) pair_add(s, &found, x, l);
    }
    for (uint32_t i = 0; i < found; i++) plan_repair(h, s, p, s->pairs[2 * i], d, s->pairs[2 * i + 1]);
}

void hnsw_delete_prepare(const struct hnsw *h, struct hnsw_searcher *s, uint32_t id, struct hnsw_delete *del) {
    struct del_plan *p = del->priv;
    if (!p) p = del->priv = hk_calloc(1, sizeof(*p));
    del->id = id;
    plan_build(h, s, id, p);
}

void hnsw_delete_release(struct hnsw_delete *del) {
    struct del_plan *p = del->priv;
    if (p) hk_free(p->words);
    hk_free(p);
    del->priv = NULL;
}

void hnsw_delete_commit(struct hnsw *h, struct hnsw_delete *del) {
    struct del_plan *p = del->priv;
    uint32_t d = del->id;
    if (!hnsw_live(h, d)) {
        /* Not a node (a caller error): nothing to unlink. */
        hnsw_delete_release(del);
        return;
    }
    if (!p || p->wseq != h->wseq) {
        /* Written to since the prepare: plan again, now exclusively. */
        struct hnsw_searcher *s = hnsw_searcher_new();
        if (!p) p = del->priv = hk_calloc(1, sizeof(*p));
        plan_build(h, s, d, p);
        hnsw_searcher_free(s);
    }
    for (uint32_t w = 0; w < p->nwords;) {
        uint32_t x = p->words[w], l = p->words[w + 1], n = p->words[w + 2];
        uint32_t cnt;
        uint32_t *lk = list_at(h, x, l, &cnt);
        for (uint32_t j = 0; j < cnt; j++)
            if (lk[j] != d) indeg_sub(h, lk[j]);
        memcpy(lk, p->words + w + 3, (size_t)n * sizeof(uint32_t));
        for (uint32_t j = 0; j < n; j++) indeg_add(h, lk[j]);
        set_count(h, x, l, n);
        w += 3 + n;
    }
    struct rec_hdr *rh = hdr(h, d);
    for (uint32_t l = 0; l <= rlevel(rh); l++) {
        uint32_t cnt;
        const uint32_t *lk = list_at(h, d, l, &cnt);
        for (uint32_t j = 0; j < cnt; j++) indeg_sub(h, lk[j]);
    }
    g_free(h, rh->upper);
    rh->upper = NULL;
    rh->meta = 0;
    rh->value = NULL;
    h->count--;
    h->del_epoch++;
    h->del_scans += p->scanned;
    h->wseq++;
    if (h->count == 0) {
        /* Start over: ids from 0 again, the records stay allocated. */
        h->bound = 0;
        h->nfree = 0;
        h->entry = HNSW_NONE;
        h->max_level = 0;
    } else {
        if (h->nfree == h->freecap) {
            h->freecap = h->freecap ? h->freecap * 2 : 64;
            h->freelist = g_realloc(h, h->freelist, (size_t)h->freecap * sizeof(uint32_t));
        }
        h->freelist[h->nfree++] = d;
        if (h->entry == d) {
            h->entry = p->new_entry;
            h->max_level = rlevel(hdr(h, h->entry));
        }
    }
    hk_free(p->words);
    hk_free(p);
    del->priv = NULL;
}

/* ---- serialised form ---------------------------------------------------------------- */

#define SAVE_MAGIC 0x47564b48u /* "HKVG" little-endian */
#define SAVE_VERSION 1u
#define SAVE_HEADER 36u

static uint64_t fnv1a(const unsigned char *p, size_t n) {
    uint64_t x = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) x = (x ^ p[i]) * 0x100000001b3ULL;
    return x;
}

static void put32(struct hk_buf *b, uint32_t v) {
    unsigned char w[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    hk_buf_add(b, w, 4, 4096);
}

static void putf(struct hk_buf *b, float f) {
    uint32_t v;
    memcpy(&v, &f, 4);
    put32(b, v);
}

void hnsw_save(const struct hnsw *h, struct hk_buf *out) {
    size_t start = out->len;
    uint32_t bound = 0;
    for (uint32_t id = 0; id < h->bound; id++)
        if (hdr(h, id)->meta & META_LIVE) bound = id + 1;
    put32(out, SAVE_MAGIC);
    put32(out, SAVE_VERSION);
    put32(out, h->dim);
    put32(out, (uint32_t)h->quant);
    put32(out, h->M);
    put32(out, bound);
    put32(out, h->count);
    put32(out, hnsw_entry(h));
    put32(out, hnsw_max_level(h));
    for (uint32_t id = 0; id < bound; id++) {
        const char *r = rec(h, id);
        const struct rec_hdr *rh = (const struct rec_hdr *)r;
        if (!(rh->meta & META_LIVE)) continue;
        uint32_t lv = rlevel(rh);
        put32(out, id);
        put32(out, lv);
        putf(out, rnorm(h, r));
        putf(out, rrange(h, r));
        hk_buf_add(out, r + h->vec_off, h->vbytes, 4096);
        for (uint32_t l = 0; l <= lv; l++) {
            uint32_t n;
            const uint32_t *lk = list_at(h, id, l, &n);
            put32(out, n);
            for (uint32_t j = 0; j < n; j++) put32(out, lk[j]);
        }
    }
    uint64_t sum = fnv1a((const unsigned char *)out->p + start, out->len - start);
    put32(out, (uint32_t)sum);
    put32(out, (uint32_t)(sum >> 32));
}

struct reader {
    const unsigned char *p;
    size_t len, pos;
    int bad;
};

static uint32_t get32(struct reader *r) {
    if (r->bad || r->len - r->pos < 4) {
        r->bad = 1;
        return 0;
    }
    const unsigned char *q = r->p + r->pos;
    r->pos += 4;
    return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
}

static float getf(struct reader *r) {
    uint32_t v = get32(r);
    float f;
    memcpy(&f, &v, 4);
    return f;
}

static struct hnsw *load_fail(struct hnsw *h, char *err, size_t errsize, const char *fmt, ...) {
    if (err && errsize) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errsize, fmt, ap);
        va_end(ap);
    }
    hnsw_free(h);
    return NULL;
}

struct hnsw *hnsw_load(const void *p, size_t len, char *err, size_t errsize) {
    struct reader r = {p, len, 0, 0};
    if (len < SAVE_HEADER + 8) return load_fail(NULL, err, errsize, "truncated header");
    uint64_t sum = fnv1a(p, len - 8);
    struct reader tail = {p, len, len - 8, 0};
    uint64_t want = get32(&tail);
    want |= (uint64_t)get32(&tail) << 32;
    if (sum != want) return load_fail(NULL, err, errsize, "checksum mismatch");
    r.len = len - 8;
    if (get32(&r) != SAVE_MAGIC) return load_fail(NULL, err, errsize, "bad magic");
    uint32_t ver = get32(&r);
    if (ver != SAVE_VERSION) return load_fail(NULL, err, errsize, "unknown version %u", ver);
    uint32_t dim = get32(&r), quant = get32(&r), M = get32(&r);
    uint32_t bound = get32(&r), count = get32(&r), entry = get32(&r), maxl = get32(&r);
    struct hnsw *h = hnsw_new(dim, (enum hnsw_quant)quant, M);
    if (!h) return load_fail(NULL, err, errsize, "bad parameters (dim %u, quant %u, M %u)", dim, quant, M);
    /* Each node takes at least its fixed part plus one count word. */
    size_t node_min = 16 + (size_t)h->vbytes + 4;
    if (count > (len - SAVE_HEADER) / node_min) return load_fail(h, err, errsize, "count %u past the data", count);
    if (count > bound || (count == 0) != (bound == 0)) return load_fail(h, err, errsize, "bad count/bound");
    /* Free ids cost memory (records, free list, searchers' visited sets):
     * at most 15 per live node plus a little slack. */
    if ((uint64_t)bound > (uint64_t)count * 16 + 1024) return load_fail(h, err, errsize, "id bound %u too sparse", bound);
    if (maxl > HNSW_MAX_LEVEL) return load_fail(h, err, errsize, "max level %u", maxl);
    for (uint32_t i = 0; i < bound; i++) alloc_id(h);
    for (uint32_t i = 0; i < bound; i++) hdr(h, i)->meta = 0;
    uint32_t prev = 0, seen = 0, top = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = get32(&r), lv = get32(&r);
        float norm = getf(&r), range = getf(&r);
        if (r.bad) return load_fail(h, err, errsize, "truncated node %u", i);
        if (id >= bound || (seen && id <= prev)) return load_fail(h, err, errsize, "node id %u out of order", id);
        if (lv > HNSW_MAX_LEVEL) return load_fail(h, err, errsize, "node %u level %u", id, lv);
        if (!isfinite(norm) || !isfinite(range) || range < 0 || (quant != HNSW_QUANT_Q8 && range != 0))
            return load_fail(h, err, errsize, "node %u bad norm/range", id);
        if (r.len - r.pos < h->vbytes) return load_fail(h, err, errsize, "truncated vector of node %u", id);
        if (quant == HNSW_QUANT_BIN && dim % 64) {
            uint64_t last;
            memcpy(&last, r.p + r.pos + h->vbytes - 8, 8);
            if (last >> (dim % 64)) return load_fail(h, err, errsize, "node %u sets bits past dim", id);
        }
        init_node(h, id, lv, r.p + r.pos, norm, range, NULL);
        r.pos += h->vbytes;
        seen = 1;
        prev = id;
        if (lv > top) top = lv;
        for (uint32_t l = 0; l <= lv; l++) {
            uint32_t n = get32(&r);
            if (r.bad) return load_fail(h, err, errsize, "truncated links of node %u", id);
            if (n > max_links(h, l)) return load_fail(h, err, errsize, "node %u level %u: %u links", id, l, n);
            uint32_t cnt;
            uint32_t *lk = list_at(h, id, l, &cnt);
            for (uint32_t j = 0; j < n; j++) lk[j] = get32(&r);
            if (r.bad) return load_fail(h, err, errsize, "truncated links of node %u", id);
            set_count(h, id, l, n);
        }
    }
    if (r.pos != r.len) return load_fail(h, err, errsize, "trailing bytes");
    h->count = count;
    if (count) {
        if (entry >= bound || !(hdr(h, entry)->meta & META_LIVE))
            return load_fail(h, err, errsize, "entry point %u is not a node", entry);
        if (rlevel(hdr(h, entry)) != top || maxl != top)
            return load_fail(h, err, errsize, "entry point level does not match");
        h->entry = entry;
        h->max_level = top;
    }
    /* Every link points to another node that has the level; no repeats. */
    struct hnsw_searcher *s = hnsw_searcher_new();
    for (uint32_t id = 0; id < bound; id++) {
        struct rec_hdr *rh = hdr(h, id);
        if (!(rh->meta & META_LIVE)) continue;
        for (uint32_t l = 0; l <= rlevel(rh); l++) {
            uint32_t n;
            const uint32_t *lk = list_at(h, id, l, &n);
            vis_begin(s, bound);
            for (uint32_t j = 0; j < n; j++) {
                uint32_t y = lk[j];
                if (y >= bound || y == id || !(hdr(h, y)->meta & META_LIVE) || rlevel(hdr(h, y)) < l ||
                    s->vis[y] == s->tag) {
                    hnsw_searcher_free(s);
                    return load_fail(h, err, errsize, "node %u level %u: bad link %u", id, l, y);
                }
                s->vis[y] = s->tag;
            }
        }
    }
    hnsw_searcher_free(s);
    for (uint32_t id = 0; id < bound; id++) {
        struct rec_hdr *rh = hdr(h, id);
        if (!(rh->meta & META_LIVE)) continue;
        for (uint32_t l = 0; l <= rlevel(rh); l++) {
            uint32_t n;
            const uint32_t *lk = list_at(h, id, l, &n);
            for (uint32_t j = 0; j < n; j++) indeg_add(h, lk[j]);
        }
    }
    /* The free ids, highest first so that reuse starts from the lowest. */
    for (uint32_t id = bound; id-- > 0;) {
        if (hdr(h, id)->meta & META_LIVE) continue;
        if (h->nfree == h->freecap) {
            h->freecap = h->freecap ? h->freecap * 2 : 64;
            h->freelist = g_realloc(h, h->freelist, (size_t)h->freecap * sizeof(uint32_t));
        }
        h->freelist[h->nfree++] = id;
    }
    return h;
}

/* ---- random projection ------------------------------------------------------------ */

struct hnsw_proj {
    uint32_t in, out;
    float *m; /* out rows of in columns */
};

/* Redis 8's REDUCE matrix: row i, column j of the Walsh-Hadamard pattern,
 * +1 when i & j has an even number of bits and -1 otherwise, scaled by
 * 1/sqrt(in_dim) (rounded to float as Redis does). Seed 0 gives exactly
 * that matrix, so a reduced vector is bit for bit Redis's; another seed
 * flips the sign of each input column from a splitmix64 stream, the same
 * distribution (entries +-1/sqrt(in_dim)) in another orientation. */
struct hnsw_proj *hnsw_proj_new(uint32_t in_dim, uint32_t out_dim, uint64_t seed) {
    if (in_dim == 0 || out_dim == 0 || out_dim > in_dim) return NULL;
    if ((uint64_t)in_dim * out_dim > (1ULL << 31)) return NULL;
    struct hnsw_proj *p = hk_malloc(sizeof(*p));
    p->in = in_dim;
    p->out = out_dim;
    p->m = hk_malloc((size_t)in_dim * out_dim * sizeof(float));
    const float scale = (float)(1.0 / sqrt((double)in_dim));
    uint64_t x = seed, bits = 0;
    float *sign = hk_malloc(in_dim * sizeof(float));
    for (uint32_t j = 0; j < in_dim; j++) {
        if (seed && j % 64 == 0) bits = splitmix64(&x);
        sign[j] = seed && ((bits >> (j % 64)) & 1) ? -1.0f : 1.0f;
    }
    for (uint32_t i = 0; i < out_dim; i++)
        for (uint32_t j = 0; j < in_dim; j++) {
            float v = (__builtin_popcount(i & j) & 1) ? -1.0f : 1.0f;
            p->m[(size_t)i * in_dim + j] = v * sign[j] * scale;
        }
    hk_free(sign);
    return p;
}

void hnsw_proj_free(struct hnsw_proj *p) {
    if (!p) return;
    hk_free(p->m);
    hk_free(p);
}

/* Each output is one row's sum taken in column order, as Redis sums it,
 * so the result is the same to the bit; eight rows at a time keep the
 * adds of different rows in flight together. */
void hnsw_proj_apply(const struct hnsw_proj *p, const float *in, float *out) {
    uint32_t i = 0, n = p->in;
    for (; i + 8 <= p->out; i += 8) {
        const float *r = p->m + (size_t)i * n;
        float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
        for (uint32_t j = 0; j < n; j++) {
            float x = in[j];
            s0 += r[j] * x;
            s1 += r[n + j] * x;
            s2 += r[2 * (size_t)n + j] * x;
            s3 += r[3 * (size_t)n + j] * x;
            s4 += r[4 * (size_t)n + j] * x;
            s5 += r[5 * (size_t)n + j] * x;
            s6 += r[6 * (size_t)n + j] * x;
            s7 += r[7 * (size_t)n + j] * x;
        }
        out[i] = s0, out[i + 1] = s1, out[i + 2] = s2, out[i + 3] = s3;
        out[i + 4] = s4, out[i + 5] = s5, out[i + 6] = s6, out[i + 7] = s7;
    }
    for (; i < p->out; i++) {
        const float *r = p->m + (size_t)i * n;
        float s0 = 0;
        for (uint32_t j = 0; j < n; j++) s0 += r[j] * in[j];
        out[i] = s0;
    }
}

size_t hnsw_proj_memory(const struct hnsw_proj *p) { return hk_usable_size((void *)p) + hk_usable_size(p->m); }
