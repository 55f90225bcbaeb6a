/* rdb_vset.c - the vector set value in Redis's RDB encoding: a module value
 * (RDB_TYPE_MODULE_2) of Redis 8's "vectorset" module, encoding version 0,
 * written as the module writes it and read from what any Redis 8 wrote.
 * Not the set itself (vset.c) nor the graph (core/hnsw.c): this file only
 * converts between them and the bytes.
 *
 * The body, after the module type id, is a run of module values, each an
 * opcode (a length: 2 unsigned, 5 string) and its value, then opcode 0:
 *
 *   uint dim            stored dimension (REDUCE's, when reduced)
 *   uint count          elements (a set is never empty)
 *   uint config         quantization (0 f32, 1 int8, 2 bin) | M << 8
 *   uint flags          1: a projection matrix follows, 2: attributes
 *   [uint in_dim, string matrix]   dim rows of in_dim little-endian floats
 *   count times:
 *     string name, [string attributes, "" for none], string vector
 *     uint nparams, then nparams uints:
 *       node id (from 1), level | serialization version << 24,
 *       for each level 0..level: link count, link capacity, the linked
 *         node ids, and (version 1) the farthest link's index with its
 *         distance's float bits in the upper half,
 *       the norm's float bits | the Q8 range's float bits << 32
 *
 * Redis refuses a graph whose links are not reciprocal, so the writer
 * emits a reciprocal one: HotKV's lists (which keep a link one way when a
 * full neighbour re-selects its own) are reduced to their mutual links,
 * plus each one-way link with its reverse added where both lists have
 * room; the entry point is written first, since a loader (Redis's and
 * this one) takes the first node read at the top level as its entry.
 * The reader rebuilds the graph from the saved links without
 * searching: node ids are renumbered densely, links are checked (known
 * node, level, no repeat, not to itself) and a list past HotKV's capacity
 * keeps its nearest links. */
#include "rdb.h"

#include "../core/alloc.h"
#include "../core/buf.h"
#include "../core/hnsw.h"
#include "kv.h"
#include "types.h"
#include "vset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VSET_ENCVER 0
#define VSET_FLAG_PROJ 1u
#define VSET_FLAG_ATTRS 2u
#define VSET_SER_V0 0
#define VSET_SER_V1 1
/* Redis's link capacity may pass its usual one in rare re-selections;
 * it loads lists up to these multiples of M (level 0, upper levels). */
#define VSET_CAP0_MULT 3u
#define VSET_CAPN_MULT 2u

/* ---- module values ---- */

static void put_uint(struct rdb_out *o, uint64_t v) {
    rdb_put_len(o, RDB_MODULE_OPCODE_UINT);
    rdb_put_len(o, v);
}

static void put_str(struct rdb_out *o, const void *p, size_t n) {
    rdb_put_len(o, RDB_MODULE_OPCODE_STRING);
    rdb_put_string(o, p, n);
}

static int get_opcode(struct rdb_in *in, uint64_t want, const char *what) {
    uint64_t op;
    if (rdb_get_len(in, &op, NULL) < 0) return -1;
    if (op != want)
        return rdb_fail(in, "Vector set: expected module opcode %llu for %s, got %llu", (unsigned long long)want,
                        what, (unsigned long long)op);
    return 0;
}

static int get_uint(struct rdb_in *in, uint64_t *v, const char *what) {
    if (get_opcode(in, RDB_MODULE_OPCODE_UINT, what) < 0) return -1;
    return rdb_get_len(in, v, NULL);
}

static char *get_str(struct rdb_in *in, size_t *len, const char *what) {
    if (get_opcode(in, RDB_MODULE_OPCODE_STRING, what) < 0) return NULL;
    return rdb_get_string(in, len);
}

static inline uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* REDUCE's matrix entry (row i, column j) as Redis computes it: the
 * Walsh-Hadamard sign scaled by 1/sqrt(in_dim), rounded to float. */
static inline float hadamard(uint32_t i, uint32_t j, float scale) {
    return (__builtin_popcount(i & j) & 1) ? -scale : scale;
}

static inline float proj_scale(uint32_t in_dim) { return (float)(1.0 / sqrt((double)in_dim)); }

/* ---- writing ---- */

/* The reciprocal lists the writer emits. Slots are (node, level) pairs,
 * numbered per node from base[id]. A link of HotKV's graph is kept as it
 * is when the other node links back; a one-way link is kept, with its
 * reverse added, when both lists still have room under the capacity
 * Redis gives them (2M at level 0, M above); otherwise it is dropped. */
struct recip {
    const struct hnsw *g;
    uint32_t *base;  /* by id: the node's first slot */
    uint32_t *cnt;   /* by slot: links the list will hold */
    uint32_t *xoff;  /* by slot: its first added link in xid (CSR) */
    uint32_t *xid;   /* added links, grouped by slot */
    uint32_t nslots;
};

static int holds(const struct hnsw *g, uint32_t x, uint32_t l, uint32_t y) {
    const uint32_t *lk;
    uint32_t n = hnsw_links(g, x, l, &lk);
    for (uint32_t j = 0; j < n; j++)
        if (lk[j] == y) return 1;
    return 0;
}

static void recip_build(struct recip *r, const struct hnsw *g) {
    uint32_t bound = hnsw_id_bound(g), M = hnsw_m(g);
    r->g = g;
    r->base = hk_malloc(((size_t)bound + 1) * sizeof(uint32_t));
    uint32_t slots = 0;
    for (uint32_t id = 0; id < bound; id++) {
        r->base[id] = slots;
        if (hnsw_live(g, id)) slots += hnsw_level(g, id) + 1;
    }
    r->base[bound] = slots;
    r->nslots = slots;
    r->cnt = hk_calloc((size_t)slots + 1, sizeof(uint32_t));
    /* Mutual links first: they are kept whatever happens. */
    for (uint32_t id = 0; id < bound; id++) {
        if (!hnsw_live(g, id)) continue;
        for (uint32_t l = 0; l <= hnsw_level(g, id); l++) {
            const uint32_t *lk;
            uint32_t n = hnsw_links(g, id, l, &lk);
            for (uint32_t j = 0; j < n; j++)
                if (holds(g, lk[j], l, id)) r->cnt[r->base[id] + l]++;
        }
    }
    /* One-way links, in id order: each kept (both directions) while both
     * lists have room. The pairs are collected, then grouped by slot. */
    uint32_t *pairs = NULL;
    size_t np = 0, cap = 0;
    for (uint32_t id = 0; id < bound; id++) {
        if (!hnsw_live(g, id)) continue;
        for (uint32_t l = 0; l <= hnsw_level(g, id); l++) {
            uint32_t lim = l ? M : 2 * M;
            const uint32_t *lk;
            uint32_t n = hnsw_links(g, id, l, &lk);
            for (uint32_t j = 0; j < n; j++) {
                uint32_t y = lk[j];
                if (holds(g, y, l, id)) continue;
                uint32_t sa = r->base[id] + l, sb = r->base[y] + l;
                if (r->cnt[sa] >= lim || r->cnt[sb] >= lim) continue;
                r->cnt[sa]++;
                r->cnt[sb]++;
                if (np + 4 > cap) {
                    cap = cap ? cap * 2 : 256;
                    pairs = hk_realloc(pairs, cap * sizeof(uint32_t));
                }
                pairs[np++] = sa;
                pairs[np++] = y;
                pairs[np++] = sb;
                pairs[np++] = id;
            }
        }
    }
    r->xoff = hk_calloc((size_t)slots + 1, sizeof(uint32_t));
    for (size_t i = 0; i < np; i += 2) r->xoff[pairs[i] + 1]++;
    for (uint32_t s = 0; s < slots; s++) r->xoff[s + 1] += r->xoff[s];
    r->xid = hk_malloc((np / 2 + 1) * sizeof(uint32_t));
    uint32_t *fill = hk_malloc(((size_t)slots + 1) * sizeof(uint32_t));
    memcpy(fill, r->xoff, ((size_t)slots + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < np; i += 2) r->xid[fill[pairs[i]]++] = pairs[i + 1];
    hk_free(fill);
    hk_free(pairs);
}

static void recip_free(struct recip *r) {
    hk_free(r->base);
    hk_free(r->cnt);
    hk_free(r->xoff);
    hk_free(r->xid);
}

/* The list node id emits at level l into out (room for its count). */
static uint32_t recip_list(const struct recip *r, uint32_t id, uint32_t l, uint32_t *out) {
    const uint32_t *lk;
    uint32_t n = hnsw_links(r->g, id, l, &lk), k = 0, s = r->base[id] + l;
    for (uint32_t j = 0; j < n; j++)
        if (holds(r->g, lk[j], l, id)) out[k++] = lk[j];
    for (uint32_t x = r->xoff[s]; x < r->xoff[s + 1]; x++) out[k++] = r->xid[x];
    return k;
}

/* Node id as the module writes it: name, attributes, vector, then its
 * parameters (ids shifted by one: Redis numbers nodes from 1). */
static void put_node(struct rdb_out *o, const struct vset *vs, const struct recip *r, uint32_t id, int attrs,
                     uint32_t *list) {
    const struct hnsw *g = vs->g;
    uint32_t M = vs->M;
    const struct velem *el = hnsw_value(g, id);
    put_str(o, el->name, el->nlen);
    if (attrs) put_str(o, el->attr ? el->attr : "", el->attr ? el->alen : 0);
    float norm, range;
    const void *vec = hnsw_raw(g, id, &norm, &range);
    put_str(o, vec, hnsw_vec_bytes(g));
    uint32_t lv = hnsw_level(g, id);
    uint64_t np = 2 + 1;
    for (uint32_t l = 0; l <= lv; l++) np += 3 + r->cnt[r->base[id] + l];
    put_uint(o, np);
    put_uint(o, (uint64_t)id + 1);
    put_uint(o, (uint64_t)lv | (uint64_t)VSET_SER_V1 << 24);
    for (uint32_t l = 0; l <= lv; l++) {
        uint32_t k = recip_list(r, id, l, list);
        put_uint(o, k);
        put_uint(o, l ? M : 2 * M);
        uint32_t worst = 0;
        float wd = 0;
        for (uint32_t j = 0; j < k; j++) {
            put_uint(o, (uint64_t)list[j] + 1);
            float d = hnsw_node_distance(g, id, list[j]);
            if (j == 0 || d > wd) worst = j, wd = d;
        }
        put_uint(o, (uint64_t)f32_bits(wd) << 32 | worst);
    }
    put_uint(o, (uint64_t)f32_bits(range) << 32 | f32_bits(norm));
}

int vset_rdb_save(const struct kv *e, struct rdb_out *o) {
    struct vset *vs = vset_of(e);
    vset_quiesce(vs);
    const struct hnsw *g = vs->g;
    uint32_t dim = vs->dim, M = vs->M, bound = hnsw_id_bound(g);
    int attrs = atomic_load_explicit(&vs->nattr, memory_order_relaxed) != 0;

    rdb_put_len(o, rdb_module_id(RDB_VSET_MODULE_NAME, VSET_ENCVER));
    put_uint(o, dim);
    put_uint(o, vset_card(vs));
    put_uint(o, (uint64_t)(vs->quant & 0xff) | (uint64_t)(M & 0xffff) << 8);
    put_uint(o, (vs->proj ? VSET_FLAG_PROJ : 0) | (attrs ? VSET_FLAG_ATTRS : 0));
    if (vs->proj) {
        uint32_t in = vs->in_dim;
        size_t n = (size_t)in * dim;
        unsigned char *m = hk_malloc(n * 4);
        float scale = proj_scale(in);
        for (uint32_t i = 0; i < dim; i++)
            for (uint32_t j = 0; j < in; j++) {
                uint32_t u = f32_bits(hadamard(i, j, scale));
                unsigned char *q = m + ((size_t)i * in + j) * 4;
                q[0] = (unsigned char)u, q[1] = (unsigned char)(u >> 8);
                q[2] = (unsigned char)(u >> 16), q[3] = (unsigned char)(u >> 24);
            }
        put_uint(o, in);
        put_str(o, m, n * 4);
        hk_free(m);
    }

    struct recip r;
    recip_build(&r, g);
    uint32_t *list = hk_malloc((size_t)(2 * M + 1) * sizeof(uint32_t));
    /* The entry point first: a loader takes the first node it reads at
     * the top level as its entry, Redis's as ours. */
    uint32_t entry = hnsw_entry(g);
    if (entry != HNSW_NONE) put_node(o, vs, &r, entry, attrs, list);
    for (uint32_t id = 0; id < bound; id++)
        if (id != entry && hnsw_live(g, id)) put_node(o, vs, &r, id, attrs, list);
    hk_free(list);
    recip_free(&r);
    rdb_put_len(o, RDB_MODULE_OPCODE_EOF);
    return 0;
}

/* ---- reading ---- */

/* One node as read: its Redis id, level, vector, norm and range, where
 * its per-level link counts start in cnts and its links in links, and its
 * element's name and attributes (owned). */
struct lnode {
    uint64_t rid;
    uint32_t level, dense;
    float norm, range;
    size_t coff, loff;
    unsigned char *vec;
    char *name, *attr;
    size_t nlen, alen;
};

struct loader {
    struct rdb_in *in;
    uint32_t dim, M, vbytes;
    enum hnsw_quant quant;
    struct lnode *nodes;
    size_t n, ncap;
    uint64_t *links; /* Redis ids, then rewritten to dense ids */
    size_t nlinks, lcap;
    uint32_t *cnts;
    size_t ncnts, ccap;
};

static void loader_free(struct loader *ld) {
    for (size_t i = 0; i < ld->n; i++) {
        hk_free(ld->nodes[i].vec);
        hk_free(ld->nodes[i].name);
        hk_free(ld->nodes[i].attr);
    }
    hk_free(ld->nodes);
    hk_free(ld->links);
    hk_free(ld->cnts);
}

static void push_link(struct loader *ld, uint64_t v) {
    if (ld->nlinks == ld->lcap) {
        ld->lcap = ld->lcap ? ld->lcap * 2 : 64;
        ld->links = hk_realloc(ld->links, ld->lcap * sizeof(*ld->links));
    }
    ld->links[ld->nlinks++] = v;
}

static void push_cnt(struct loader *ld, uint32_t v) {
    if (ld->ncnts == ld->ccap) {
        ld->ccap = ld->ccap ? ld->ccap * 2 : 64;
        ld->cnts = hk_realloc(ld->cnts, ld->ccap * sizeof(*ld->cnts));
    }
    ld->cnts[ld->ncnts++] = v;
}

/* The parameters of one node (the uint that counts them is read): links
 * into ld->links, counts into ld->cnts. */
static int read_params(struct loader *ld, struct lnode *nd) {
    struct rdb_in *in = ld->in;
    uint64_t np, v, used = 0;
    if (get_uint(in, &np, "the node parameter count") < 0) return -1;
#define NEXT_PARAM(what)                                                                                               \
    do {                                                                                                               \
        if (used++ >= np) return rdb_fail(in, "Vector set: node parameters end early (%s)", what);                    \
        if (get_uint(in, &v, what) < 0) return -1;                                                                     \
    } while (0)
    NEXT_PARAM("node id");
    nd->rid = v;
    if (v == 0) return rdb_fail(in, "Vector set: node id 0");
    NEXT_PARAM("node level");
    uint32_t version = (uint32_t)((v >> 24) & 0xff);
    nd->level = (uint32_t)(v & 0xff);
    if (version > VSET_SER_V1) return rdb_fail(in, "Vector set: unknown node serialization version %u", version);
    if (nd->level > HNSW_MAX_LEVEL) return rdb_fail(in, "Vector set: node level %u", nd->level);
    nd->coff = ld->ncnts;
    nd->loff = ld->nlinks;
    for (uint32_t l = 0; l <= nd->level; l++) {
        NEXT_PARAM("link count");
        uint64_t nl = v;
        NEXT_PARAM("link capacity");
        uint64_t lim = (uint64_t)ld->M * (l ? VSET_CAPN_MULT : VSET_CAP0_MULT);
        if (nl > v || v > lim)
            return rdb_fail(in, "Vector set: %llu links of capacity %llu at level %u", (unsigned long long)nl,
                            (unsigned long long)v, l);
        push_cnt(ld, (uint32_t)nl);
        for (uint64_t j = 0; j < nl; j++) {
            NEXT_PARAM("link");
            push_link(ld, v);
        }
        if (version >= VSET_SER_V1) {
            NEXT_PARAM("farthest link");
            if (nl && (v & 0xffffffffu) >= nl) return rdb_fail(in, "Vector set: farthest link out of its list");
        }
    }
    NEXT_PARAM("norm and range");
#undef NEXT_PARAM
    nd->norm = bits_f32((uint32_t)v);
    nd->range = bits_f32((uint32_t)(v >> 32));
    if (used != np) return rdb_fail(in, "Vector set: %llu node parameters, %llu used", (unsigned long long)np,
                                    (unsigned long long)used);
    if (!isfinite(nd->norm) || !isfinite(nd->range) || nd->range < 0)
        return rdb_fail(in, "Vector set: bad norm or range");
    if (ld->quant != HNSW_QUANT_Q8) nd->range = 0;
    return 0;
}

static int read_node(struct loader *ld, int attrs) {
    struct rdb_in *in = ld->in;
    if (ld->n == ld->ncap) {
        ld->ncap = ld->ncap ? ld->ncap * 2 : 16;
        ld->nodes = hk_realloc(ld->nodes, ld->ncap * sizeof(*ld->nodes));
    }
    struct lnode *nd = &ld->nodes[ld->n++];
    memset(nd, 0, sizeof(*nd));
    if (!(nd->name = get_str(in, &nd->nlen, "an element name"))) return -1;
    if (nd->nlen > UINT32_MAX) return rdb_fail(in, "Vector set: element name too long");
    if (attrs) {
        if (!(nd->attr = get_str(in, &nd->alen, "attributes"))) return -1;
        if (nd->alen > UINT32_MAX - 1) return rdb_fail(in, "Vector set: attributes too long");
        if (nd->alen == 0) {
            hk_free(nd->attr);
            nd->attr = NULL;
        }
    }
    size_t vl;
    if (!(nd->vec = (unsigned char *)get_str(in, &vl, "a vector"))) return -1;
    if (vl != ld->vbytes)
        return rdb_fail(in, "Vector set: vector of %zu bytes, expected %u", vl, (unsigned)ld->vbytes);
    return read_params(ld, nd);
}

/* Distance between two nodes' stored vectors, for choosing which links a
 * list too long for HotKV keeps (the nearest). */
static float raw_dist(const struct loader *ld, const struct lnode *a, const struct lnode *b) {
    uint32_t d = ld->dim;
    switch (ld->quant) {
    case HNSW_QUANT_Q8: {
        const int8_t *x = (const int8_t *)a->vec, *y = (const int8_t *)b->vec;
        long long dot = 0;
        for (uint32_t i = 0; i < d; i++) dot += (long long)x[i] * y[i];
        return 1.0f - (float)dot * (a->range / 127) * (b->range / 127);
    }
    case HNSW_QUANT_BIN: {
        uint32_t diff = 0;
        for (uint32_t w = 0; w < ld->vbytes / 8; w++) {
            uint64_t x, y;
            memcpy(&x, a->vec + 8 * w, 8);
            memcpy(&y, b->vec + 8 * w, 8);
            diff += (uint32_t)__builtin_popcountll(x ^ y);
        }
        return 2.0f * (float)diff / (float)d;
    }
    default: {
        float dot = 0;
        for (uint32_t i = 0; i < d; i++) {
            float x, y;
            memcpy(&x, a->vec + 4 * i, 4);
            memcpy(&y, b->vec + 4 * i, 4);
            dot += x * y;
        }
        return 1.0f - dot;
    }
    }
}

struct by_rid {
    uint64_t rid;
    uint32_t idx;
};

static int cmp_rid(const void *a, const void *b) {
    const struct by_rid *x = a, *y = b;
    return x->rid < y->rid ? -1 : x->rid > y->rid;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A link of a list being laid out: the node it reaches (its index in
 * the loader's nodes, then its dense id) and, when the list is cut, its
 * distance. */
struct cand {
    float d;
    uint32_t id;
};

static int cmp_cand(const void *a, const void *b) {
    const struct cand *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static void put32(struct hk_buf *b, uint32_t v) {
    unsigned char w[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    hk_buf_add(b, w, 4, 4096);
}

/* The graph in hnsw_save's form, for hnsw_load: a header (magic "HKVG",
 * version 1, dim, quantization, M, id bound, node count, entry point,
 * top level), each node in id order (id, level, norm, range, vector, per
 * level a count and the ids), then an FNV-1a 64 sum of all of it. */
#define HKVG_MAGIC 0x47564b48u
#define HKVG_VERSION 1u

/* Resolve every node's links to dense ids (ld->links rewritten), check
 * them, cut lists past HotKV's capacity to their nearest, and lay the
 * graph out for hnsw_load into b. dense[i] is node i's id. */
static int build_graph(struct loader *ld, const struct by_rid *sorted, struct hk_buf *b) {
    struct rdb_in *in = ld->in;
    size_t n = ld->n;
    /* Nodes by dense id, and the entry point: the first node read at the
     * top level, as Redis picks it. */
    uint32_t *order = hk_malloc(n * sizeof(uint32_t));
    uint32_t top = 0, entry = 0;
    for (size_t i = 0; i < n; i++) {
        order[ld->nodes[i].dense] = (uint32_t)i;
        if (i == 0 || ld->nodes[i].level > top) top = ld->nodes[i].level, entry = ld->nodes[i].dense;
    }
    uint32_t h[9] = {HKVG_MAGIC, HKVG_VERSION, ld->dim, (uint32_t)ld->quant, ld->M,
                     (uint32_t)n, (uint32_t)n, entry, top};
    for (int i = 0; i < 9; i++) put32(b, h[i]);
    uint64_t *tmp = hk_malloc((size_t)(VSET_CAP0_MULT * ld->M + 1) * sizeof(uint64_t));
    struct cand *cands = hk_malloc((size_t)(VSET_CAP0_MULT * ld->M + 1) * sizeof(struct cand));
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        struct lnode *nd = &ld->nodes[order[k]];
        put32(b, nd->dense);
        put32(b, nd->level);
        put32(b, f32_bits(nd->norm));
        put32(b, f32_bits(nd->range));
        hk_buf_add(b, nd->vec, ld->vbytes, 4096);
        size_t lo = nd->loff;
        for (uint32_t l = 0; l <= nd->level && rc == 0; l++) {
            uint32_t cnt = ld->cnts[nd->coff + l];
            const uint64_t *lk = cnt ? ld->links + lo : NULL;
            lo += cnt;
            if (cnt) {
                memcpy(tmp, lk, cnt * sizeof(uint64_t));
                qsort(tmp, cnt, sizeof(uint64_t), cmp_u64);
            }
            for (uint32_t j = 0; j < cnt; j++) {
                if (j && tmp[j] == tmp[j - 1]) {
                    rc = rdb_fail(in, "Vector set: repeated link at level %u", l);
                    break;
                }
                struct by_rid key = {lk[j], 0};
                const struct by_rid *hit = bsearch(&key, sorted, n, sizeof(*sorted), cmp_rid);
                if (!hit || hit->idx == order[k] || ld->nodes[hit->idx].level < l) {
                    rc = rdb_fail(in, "Vector set: unresolved link at level %u", l);
                    break;
                }
                cands[j].id = hit->idx;
            }
            if (rc) break;
            uint32_t lim = l ? ld->M : 2 * ld->M;
            if (cnt > lim) {
                for (uint32_t j = 0; j < cnt; j++) cands[j].d = raw_dist(ld, nd, &ld->nodes[cands[j].id]);
                qsort(cands, cnt, sizeof(*cands), cmp_cand);
                cnt = lim;
            }
            for (uint32_t j = 0; j < cnt; j++) cands[j].id = ld->nodes[cands[j].id].dense;
            put32(b, cnt);
            for (uint32_t j = 0; j < cnt; j++) put32(b, cands[j].id);
        }
    }
    hk_free(tmp);
    hk_free(cands);
    hk_free(order);
    if (rc) return rc;
    uint64_t sum = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < b->len; i++) sum = (sum ^ (unsigned char)b->p[i]) * 0x100000001b3ULL;
    put32(b, (uint32_t)sum);
    put32(b, (uint32_t)(sum >> 32));
    return 0;
}

struct kv *vset_rdb_load(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire) {
    (void)rdb_type;
    uint64_t mid, dim, count, config, flags, in_dim = 0;
    if (rdb_get_len(in, &mid, NULL) < 0) return NULL;
    char name[10];
    int encver;
    rdb_module_name(mid, name, &encver);
    if (strcmp(name, RDB_VSET_MODULE_NAME) != 0) {
        rdb_fail(in, "Unknown module type '%s'", name);
        return NULL;
    }
    if (encver != VSET_ENCVER) {
        rdb_fail(in, "Vector set encoding version %d is not supported", encver);
        return NULL;
    }
    if (get_uint(in, &dim, "the dimension") < 0 || get_uint(in, &count, "the element count") < 0 ||
        get_uint(in, &config, "the graph parameters") < 0 || get_uint(in, &flags, "the flags") < 0)
        return NULL;
    uint64_t quant = config & 0xff, M = (config >> 8) & 0xffff;
    if (M == 0) M = HNSW_DEFAULT_M; /* written before M could be chosen */
    if (dim == 0 || dim > VSET_MAX_DIM || quant > HNSW_QUANT_BIN || M < HNSW_MIN_M || M > HNSW_MAX_M ||
        (flags & ~(uint64_t)(VSET_FLAG_PROJ | VSET_FLAG_ATTRS))) {
        rdb_fail(in, "Vector set: bad header (dim %llu, quantization %llu, M %llu, flags %llu)",
                 (unsigned long long)dim, (unsigned long long)quant, (unsigned long long)M,
                 (unsigned long long)flags);
        return NULL;
    }
    if (count == 0 || count >= UINT32_MAX) {
        rdb_fail(in, "Vector set: %llu elements", (unsigned long long)count);
        return NULL;
    }
    if (flags & VSET_FLAG_PROJ) {
        if (get_uint(in, &in_dim, "the input dimension") < 0) return NULL;
        if (in_dim < dim || in_dim > VSET_MAX_DIM || in_dim * dim > VSET_MAX_PROJ) {
            rdb_fail(in, "Vector set: projection from %llu to %llu dimensions", (unsigned long long)in_dim,
                     (unsigned long long)dim);
            return NULL;
        }
        size_t ml;
        unsigned char *m = (unsigned char *)get_str(in, &ml, "the projection matrix");
        if (!m) return NULL;
        int same = ml == (size_t)(in_dim * dim * 4);
        float scale = proj_scale((uint32_t)in_dim);
        for (uint32_t i = 0; same && i < dim; i++)
            for (uint32_t j = 0; same && j < in_dim; j++) {
                const unsigned char *q = m + ((size_t)i * in_dim + j) * 4;
                uint32_t u = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
                same = u == f32_bits(hadamard(i, j, scale));
            }
        hk_free(m);
        if (!same) {
            rdb_fail(in, "Vector set: projection matrix is not REDUCE's Hadamard matrix");
            return NULL;
        }
    } else {
        in_dim = dim;
    }

    struct loader ld = {0};
    ld.in = in;
    ld.dim = (uint32_t)dim;
    ld.M = (uint32_t)M;
    ld.quant = (enum hnsw_quant)quant;
    ld.vbytes = quant == HNSW_QUANT_Q8 ? (uint32_t)dim
                : quant == HNSW_QUANT_BIN ? (uint32_t)((dim + 63) / 64 * 8)
                                          : (uint32_t)dim * 4;
    struct kv *e = NULL;
    struct by_rid *sorted = NULL;
    struct hk_buf gb = {0};
    for (uint64_t i = 0; i < count; i++)
        if (read_node(&ld, (flags & VSET_FLAG_ATTRS) != 0) < 0) goto out;
    /* Dense ids in Redis id order; repeated ids are refused. */
    sorted = hk_malloc(ld.n * sizeof(*sorted));
    for (size_t i = 0; i < ld.n; i++) sorted[i] = (struct by_rid){ld.nodes[i].rid, (uint32_t)i};
    qsort(sorted, ld.n, sizeof(*sorted), cmp_rid);
    for (size_t i = 0; i < ld.n; i++) {
        if (i && sorted[i].rid == sorted[i - 1].rid) {
            rdb_fail(in, "Vector set: repeated node id %llu", (unsigned long long)sorted[i].rid);
            goto out;
        }
        ld.nodes[sorted[i].idx].dense = (uint32_t)i;
    }
    if (build_graph(&ld, sorted, &gb) < 0) goto out;
    char err[128];
    struct hnsw *g = hnsw_load(gb.p, gb.len, err, sizeof(err));
    if (!g) {
        rdb_fail(in, "Vector set: %s", err);
        goto out;
    }
    struct vset *vs = vset_from_graph(g, (uint32_t)in_dim, (flags & VSET_FLAG_PROJ) != 0);
    if (!vs) {
        rdb_fail(in, "Vector set: dimensions do not fit");
        goto out;
    }
    for (size_t i = 0; i < ld.n; i++) {
        struct lnode *nd = &ld.nodes[i];
        if (vset_find(vs, nd->name, nd->nlen)) {
            rdb_fail(in, "Vector set: repeated element");
            vset_unref(vs);
            goto out;
        }
        struct velem *el = vset_add_name(vs, nd->name, nd->nlen, nd->attr, (uint32_t)nd->alen);
        nd->attr = NULL; /* the set owns it now */
        el->id = nd->dense;
        hnsw_set_value(vs->g, nd->dense, el);
    }
    e = kv_new_ptr(key, klen, OBJ_VSET, ENC_RAW, vs, expire);
    {
        uint64_t eof;
        if (rdb_get_len(in, &eof, NULL) < 0 || eof != RDB_MODULE_OPCODE_EOF) {
            rdb_fail(in, "Vector set: module value does not end where expected");
            kv_free(e);
            e = NULL;
        }
    }
out:
    hk_free(gb.p);
    hk_free(sorted);
    loader_free(&ld);
    return e;
}
