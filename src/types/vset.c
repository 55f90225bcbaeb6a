/* vset.c - the vector set value: name table, writer turns, graph changes,
 * lifecycle and serialised form (see vset.h for the locking rules). */
#include "vset.h"

#include "../core/alloc.h"
#include "../core/buf.h"
#include "../core/hash.h"
#include "../core/util.h"
#include "digest.h"
#include "types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* REDUCE's projection: seed 0 is Redis 8's fixed matrix, a function of the
 * two dimensions alone, so a replay (or a Redis) builds the very same one. */
#define VSET_PROJ_SEED 0

static _Atomic uint64_t vset_next_uid;

/* ---- name table ----------------------------------------------------------- */

static uint64_t el_hash(const struct hnode *n, void *ctx) {
    const struct velem *el = (const struct velem *)n;
    return hk_hash(el->name, el->nlen);
}

struct name_key {
    const char *p;
    size_t len;
};

static int el_match(const struct hnode *n, const void *key) {
    const struct velem *el = (const struct velem *)n;
    const struct name_key *k = key;
    return el->nlen == k->len && memcmp(el->name, k->p, k->len) == 0;
}

struct velem *vset_find(struct vset *vs, const char *name, size_t len) {
    struct name_key k = {name, len};
    struct hnode **link = ht_find_link(&vs->names, hk_hash(name, len), el_match, &k);
    return link ? (struct velem *)*link : NULL;
}

/* What one element record and one attribute string cost the allocator. */
static size_t el_cost(size_t nlen) { return hk_good_size(sizeof(struct velem) + nlen); }
static size_t attr_cost(const char *attr, uint32_t alen) { return attr ? hk_good_size(alen ? alen : 1) : 0; }

/* Count attributes appearing (+1) or going (-1) in nattr and attr_bytes. */
static void attr_account(struct vset *vs, const char *attr, uint32_t alen, int sign) {
    if (!attr) return;
    if (sign > 0) {
        atomic_fetch_add_explicit(&vs->nattr, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&vs->attr_bytes, attr_cost(attr, alen), memory_order_relaxed);
    } else {
        atomic_fetch_sub_explicit(&vs->nattr, 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&vs->attr_bytes, attr_cost(attr, alen), memory_order_relaxed);
    }
}

struct velem *vset_add_name(struct vset *vs, const char *name, size_t len, char *attr, uint32_t alen) {
    struct velem *el = hk_malloc(sizeof(*el) + len);
    el->node.next = NULL;
    el->id = HNSW_NONE;
    el->nlen = (uint32_t)len;
    el->attr = attr;
    el->alen = attr ? alen : 0;
    attr_account(vs, attr, el->alen, 1);
    vs->elem_bytes += el_cost(len);
    atomic_init(&el->gone, 0);
    memcpy(el->name, name, len);
    ht_insert(&vs->names, &el->node, hk_hash(name, len), el_hash, NULL);
    return el;
}

void vset_remove_name(struct vset *vs, struct velem *el) {
    struct name_key k = {el->name, el->nlen};
    struct hnode **link = ht_find_link(&vs->names, hk_hash(el->name, el->nlen), el_match, &k);
    if (link) ht_unlink(&vs->names, link);
    ht_maybe_shrink(&vs->names, el_hash, NULL);
    vs->elem_bytes -= el_cost(el->nlen);
    atomic_store_explicit(&el->gone, 1, memory_order_release);
    atomic_fetch_add_explicit(&vs->removing, 1, memory_order_relaxed);
}

static void el_free(struct velem *el) {
    hk_free(el->attr);
    hk_free(el);
}

struct velem *vset_random(struct vset *vs) {
    struct ht_sampler s;
    ht_sampler_init(&s, &vs->names, 1);
    return (struct velem *)ht_sampler_next(&s);
}

size_t vset_sample(struct vset *vs, size_t n, struct velem **out) {
    size_t card = (size_t)vset_card(vs), got = 0;
    if (n >= card) {
        struct ht_iter it;
        ht_iter_init(&it, &vs->names);
        for (struct hnode *nd; (nd = ht_iter_next(&it));) out[got++] = (struct velem *)nd;
        return got;
    }
    if (n * 3 > card) {
        /* A large share of the set: one pass, reservoir-style selection. */
        struct ht_iter it;
        size_t seen = 0;
        ht_iter_init(&it, &vs->names);
        for (struct hnode *nd; (nd = ht_iter_next(&it)); seen++) {
            if (got < n) out[got++] = (struct velem *)nd;
            else {
                uint64_t j = hk_rand64() % (seen + 1);
                if (j < n) out[j] = (struct velem *)nd;
            }
        }
        return got;
    }
    /* A small share: random picks, duplicates refused through a small
     * open-addressing table of the pointers already taken. */
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    struct velem **seen = hk_calloc(cap, sizeof(*seen));
    struct ht_sampler s;
    ht_sampler_init(&s, &vs->names, n * 4 + 16);
    while (got < n) {
        struct velem *el = (struct velem *)ht_sampler_next(&s);
        if (!el) {
            ht_sampler_init(&s, &vs->names, n * 4 + 16);
            continue;
        }
        size_t h = (size_t)(((uintptr_t)el >> 4) * 0x9e3779b97f4a7c15ULL) & (cap - 1);
        while (seen[h] && seen[h] != el) h = (h + 1) & (cap - 1);
        if (seen[h]) continue;
        seen[h] = el;
        out[got++] = el;
    }
    hk_free(seen);
    return got;
}

/* ---- lifecycle -------------------------------------------------------------- */

static void vset_init_locks(struct vset *vs) {
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    /* A waiting writer holds new readers back: a commit is short, and
     * constant searches must not starve it. */
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&vs->rw, &ra);
    pthread_rwlockattr_destroy(&ra);
    pthread_mutex_init(&vs->cmu, NULL);
    pthread_mutex_init(&vs->tmu, NULL);
    pthread_cond_init(&vs->tcv, NULL);
}

/* A commit: rw exclusive (no search runs), then cmu (no short reader). */
static void commit_begin(struct vset *vs) {
    pthread_rwlock_wrlock(&vs->rw);
    pthread_mutex_lock(&vs->cmu);
}

static void commit_end(struct vset *vs) {
    pthread_mutex_unlock(&vs->cmu);
    pthread_rwlock_unlock(&vs->rw);
}

static struct vset *vset_alloc(uint32_t in_dim, uint32_t dim, enum hnsw_quant quant, uint32_t M) {
    struct vset *vs = hk_calloc(1, sizeof(*vs));
    atomic_init(&vs->refs, 1);
    vs->in_dim = in_dim;
    vs->dim = dim;
    vs->M = M;
    vs->quant = quant;
    vs->uid = atomic_fetch_add_explicit(&vset_next_uid, 1, memory_order_relaxed);
    ht_init(&vs->names);
    vset_init_locks(vs);
    return vs;
}

struct vset *vset_new(uint32_t in_dim, uint32_t reduce_dim, enum hnsw_quant quant, uint32_t M) {
    uint32_t dim = reduce_dim ? reduce_dim : in_dim;
    if (reduce_dim && (reduce_dim > in_dim || (uint64_t)in_dim * reduce_dim > VSET_MAX_PROJ)) return NULL;
    struct vset *vs = vset_alloc(in_dim, dim, quant, M);
    vs->g = hnsw_new(dim, quant, M);
    if (reduce_dim) vs->proj = hnsw_proj_new(in_dim, reduce_dim, VSET_PROJ_SEED);
    return vs;
}

static void drain_el(struct hnode *n, void *ctx) { el_free((struct velem *)n); }

void vset_unref(struct vset *vs) {
    if (atomic_fetch_sub_explicit(&vs->refs, 1, memory_order_acq_rel) != 1) return;
    ht_drain(&vs->names, drain_el, NULL);
    ht_release(&vs->names);
    hnsw_free(vs->g);
    if (vs->proj) hnsw_proj_free(vs->proj);
    pthread_rwlock_destroy(&vs->rw);
    pthread_mutex_destroy(&vs->cmu);
    pthread_mutex_destroy(&vs->tmu);
    pthread_cond_destroy(&vs->tcv);
    hk_free(vs);
}

struct kv *vset_entry(const char *key, size_t klen, struct vset *vs) {
    return kv_new_ptr(key, klen, OBJ_VSET, ENC_RAW, vs, -1);
}

/* ---- writer turns ----------------------------------------------------------- */

void vset_turn_wait(struct vset *vs, uint64_t ticket) {
    pthread_mutex_lock(&vs->tmu);
    while (vs->tserve != ticket) pthread_cond_wait(&vs->tcv, &vs->tmu);
    pthread_mutex_unlock(&vs->tmu);
}

void vset_turn_done(struct vset *vs) {
    pthread_mutex_lock(&vs->tmu);
    vs->tserve++;
    pthread_cond_broadcast(&vs->tcv);
    pthread_mutex_unlock(&vs->tmu);
}

void vset_wait_through(struct vset *vs, uint64_t ticket) {
    pthread_mutex_lock(&vs->tmu);
    while (vs->tserve < ticket) pthread_cond_wait(&vs->tcv, &vs->tmu);
    pthread_mutex_unlock(&vs->tmu);
}

void vset_quiesce(struct vset *vs) { vset_wait_through(vs, vs->tnext); }

/* ---- per-thread searcher -------------------------------------------------- */

static pthread_key_t searcher_key;
static pthread_once_t searcher_once = PTHREAD_ONCE_INIT;

static void searcher_destroy(void *p) { hnsw_searcher_free(p); }
static void searcher_key_init(void) { pthread_key_create(&searcher_key, searcher_destroy); }

struct hnsw_searcher *vset_searcher(void) {
    pthread_once(&searcher_once, searcher_key_init);
    struct hnsw_searcher *s = pthread_getspecific(searcher_key);
    if (!s) {
        s = hnsw_searcher_new();
        pthread_setspecific(searcher_key, s);
    }
    return s;
}

/* ---- graph changes ---------------------------------------------------------- */

void vset_project(const struct vset *vs, const float *in, float *out) {
    if (vs->proj) hnsw_proj_apply(vs->proj, in, out);
    else memcpy(out, in, (size_t)vs->dim * sizeof(float));
}

/* Swap el's attributes under the exclusive lock; returns the old ones. */
static char *swap_attr(struct vset *vs, struct velem *el, char *attr, uint32_t alen) {
    char *old = el->attr;
    attr_account(vs, old, el->alen, -1);
    attr_account(vs, attr, alen, 1);
    el->attr = attr;
    el->alen = attr ? alen : 0;
    return old;
}

void vset_apply_add(struct vset *vs, uint64_t ticket, struct velem *el, int existed, const float *v, uint32_t ef,
                    int set_attr, char *attr, uint32_t alen) {
    struct hnsw_searcher *s = vset_searcher();
    struct hnsw_insert ins;
    struct hnsw_delete del = {0};
    hnsw_insert_init(&ins);
    uint64_t rnd = hk_rand64();
    if (!existed) {
        /* A fresh element (the common case) prepares before its turn, in
         * parallel with searches and with other writers' prepares. */
        pthread_rwlock_rdlock(&vs->rw);
        hnsw_insert_prepare(vs->g, s, v, ef, rnd, &ins);
        pthread_rwlock_unlock(&vs->rw);
    }
    vset_turn_wait(vs, ticket);
    if (existed) {
        /* A new vector for an existing element (every earlier writer is
         * done, so it has a node). Both halves are prepared first, reading
         * only (no other writer runs in our turn, searches only read);
         * then one exclusive step swaps the old node for the new one, so
         * no reader ever sees the element without a node. The insert's
         * commit drops the old node from its candidates. */
        hnsw_delete_prepare(vs->g, s, el->id, &del);
        hnsw_insert_prepare(vs->g, s, v, ef, rnd, &ins);
    }
    commit_begin(vs);
    if (existed) hnsw_delete_commit(vs->g, &del);
    el->id = hnsw_insert_commit(vs->g, s, &ins, el, ef);
    char *old = set_attr ? swap_attr(vs, el, attr, alen) : NULL;
    commit_end(vs);
    vset_turn_done(vs);
    hk_free(old);
    hnsw_insert_release(&ins);
}

void vset_apply_remove(struct vset *vs, uint64_t ticket, struct velem *el) {
    struct hnsw_delete del = {0};
    vset_turn_wait(vs, ticket);
    /* Our turn: no other writer runs, so planning the repair reads the
     * graph without a lock (searches only read it too). Every earlier
     * writer is done, so el has its node. */
    hnsw_delete_prepare(vs->g, vset_searcher(), el->id, &del);
    commit_begin(vs);
    hnsw_delete_commit(vs->g, &del);
    el->id = HNSW_NONE;
    char *old = swap_attr(vs, el, NULL, 0);
    atomic_fetch_sub_explicit(&vs->removing, 1, memory_order_relaxed);
    commit_end(vs);
    vset_turn_done(vs);
    hk_free(old);
    hk_free(el);
}

void vset_apply_setattr(struct vset *vs, uint64_t ticket, struct velem *el, char *attr, uint32_t alen) {
    vset_turn_wait(vs, ticket);
    commit_begin(vs);
    char *old = swap_attr(vs, el, attr, alen);
    commit_end(vs);
    vset_turn_done(vs);
    hk_free(old);
}

/* ---- serialised form -------------------------------------------------------- */

#define VSET_SER_MAGIC "HKVS"
#define VSET_SER_VERSION 1
#define VSET_NO_ATTR UINT32_MAX

static void put_u32(struct hk_buf *b, uint32_t v) {
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    hk_buf_add(b, x, 4, 64);
}

static void put_u64(struct hk_buf *b, uint64_t v) {
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}

void vset_save(struct vset *vs, struct hk_buf *out) {
    hk_buf_add(out, VSET_SER_MAGIC, 4, 64);
    unsigned char ver = VSET_SER_VERSION, q = (unsigned char)vs->quant, hp = vs->proj != NULL;
    hk_buf_add(out, &ver, 1, 64);
    hk_buf_add(out, &q, 1, 64);
    hk_buf_add(out, &hp, 1, 64);
    put_u32(out, vs->in_dim);
    put_u32(out, vs->dim);
    put_u32(out, vs->M);
    put_u64(out, VSET_PROJ_SEED);
    put_u64(out, vset_card(vs));
    /* The graph: length-prefixed, patched after it is written. */
    size_t at = out->len;
    put_u64(out, 0);
    hnsw_save(vs->g, out);
    uint64_t glen = out->len - at - 8;
    for (int i = 0; i < 8; i++) out->p[at + i] = (char)(glen >> (8 * i));
    struct ht_iter it;
    ht_iter_init(&it, &vs->names);
    for (struct hnode *n; (n = ht_iter_next(&it));) {
        const struct velem *el = (const struct velem *)n;
        put_u32(out, el->id);
        put_u32(out, el->nlen);
        hk_buf_add(out, el->name, el->nlen, 64);
        put_u32(out, el->attr ? el->alen : VSET_NO_ATTR);
        if (el->attr) hk_buf_add(out, el->attr, el->alen, 64);
    }
}

struct rd {
    const unsigned char *p;
    size_t left;
    int bad;
};

static const unsigned char *rd_take(struct rd *r, size_t n) {
    if (r->bad || r->left < n) {
        r->bad = 1;
        return NULL;
    }
    const unsigned char *p = r->p;
    r->p += n;
    r->left -= n;
    return p;
}

static uint32_t rd_u32(struct rd *r) {
    const unsigned char *p = rd_take(r, 4);
    return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24 : 0;
}

static uint64_t rd_u64(struct rd *r) {
    uint64_t lo = rd_u32(r);
    return lo | (uint64_t)rd_u32(r) << 32;
}

struct vset *vset_load(const void *p, size_t len, char *err, size_t errsize) {
    struct rd r = {p, len, 0};
    const unsigned char *magic = rd_take(&r, 4), *hdr = rd_take(&r, 3);
    if (!magic || !hdr || memcmp(magic, VSET_SER_MAGIC, 4) != 0 || hdr[0] != VSET_SER_VERSION) {
        snprintf(err, errsize, "not a vector set of a known version");
        return NULL;
    }
    unsigned quant = hdr[1], has_proj = hdr[2];
    uint32_t in_dim = rd_u32(&r), dim = rd_u32(&r), M = rd_u32(&r);
    uint64_t seed = rd_u64(&r), count = rd_u64(&r), glen = rd_u64(&r);
    if (r.bad || quant > HNSW_QUANT_BIN || has_proj > 1 || !dim || dim > VSET_MAX_DIM || !in_dim ||
        in_dim > VSET_MAX_DIM || (has_proj ? dim > in_dim || (uint64_t)dim * in_dim > VSET_MAX_PROJ : dim != in_dim) || M < HNSW_MIN_M || M > HNSW_MAX_M ||
        glen > r.left) {
        snprintf(err, errsize, "bad vector set header");
        return NULL;
    }
    struct hnsw *g = hnsw_load(r.p, (size_t)glen, err, errsize);
    if (!g) return NULL;
    rd_take(&r, (size_t)glen);
    if (hnsw_dim(g) != dim || hnsw_quant(g) != quant || hnsw_m(g) != M || hnsw_count(g) != count) {
        hnsw_free(g);
        snprintf(err, errsize, "graph does not match the vector set header");
        return NULL;
    }
    struct vset *vs = vset_alloc(in_dim, dim, (enum hnsw_quant)quant, M);
    vs->g = g;
    if (has_proj && !(vs->proj = hnsw_proj_new(in_dim, dim, seed))) {
        snprintf(err, errsize, "bad vector set projection");
        vset_unref(vs);
        return NULL;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint32_t id = rd_u32(&r), nlen = rd_u32(&r);
        const unsigned char *name = rd_take(&r, nlen);
        uint32_t alen = rd_u32(&r);
        const unsigned char *attr = alen == VSET_NO_ATTR ? NULL : rd_take(&r, alen);
        if (r.bad || !hnsw_live(g, id) || hnsw_value(g, id) || vset_find(vs, (const char *)name, nlen)) {
            snprintf(err, errsize, "bad vector set element");
            vset_unref(vs);
            return NULL;
        }
        char *a = NULL;
        if (attr) {
            a = hk_malloc(alen ? alen : 1);
            memcpy(a, attr, alen);
        }
        struct velem *el = vset_add_name(vs, (const char *)name, nlen, a, alen);
        el->id = id;
        hnsw_set_value(g, id, el);
    }
    if (r.left) {
        snprintf(err, errsize, "trailing bytes after the vector set");
        vset_unref(vs);
        return NULL;
    }
    return vs;
}

struct vset *vset_from_graph(struct hnsw *g, uint32_t in_dim, int reduce) {
    uint32_t dim = hnsw_dim(g);
    int fits = in_dim && in_dim <= VSET_MAX_DIM && dim <= VSET_MAX_DIM &&
               (reduce ? dim <= in_dim && (uint64_t)in_dim * dim <= VSET_MAX_PROJ : dim == in_dim);
    if (!fits) {
        hnsw_free(g);
        return NULL;
    }
    struct vset *vs = vset_alloc(in_dim, dim, hnsw_quant(g), hnsw_m(g));
    vs->g = g;
    if (reduce) vs->proj = hnsw_proj_new(in_dim, dim, VSET_PROJ_SEED);
    return vs;
}

/* ---- type table entry --------------------------------------------------------- */

size_t vset_memory(struct vset *vs) {
    size_t bytes = sizeof(*vs) + ht_overhead(&vs->names) + (size_t)vs->elem_bytes +
                   (size_t)atomic_load_explicit(&vs->attr_bytes, memory_order_relaxed);
    vset_short_read(vs);
    bytes += hnsw_memory(vs->g);
    vset_short_done(vs);
    if (vs->proj) bytes += hnsw_proj_memory(vs->proj);
    return bytes;
}

static void vset_ops_free(struct kv *e) { vset_unref(vset_of(e)); }

/* One allocation per element, plus the graph. */
static size_t vset_ops_free_effort(const struct kv *e) { return (size_t)vset_card(vset_of(e)) + 1; }

static size_t vset_ops_usage(const struct kv *e, size_t samples) { return vset_memory(vset_of(e)); }

/* COPY: the serialised form read back, so the copy has the very same
 * graph and nothing is searched again. */
static struct kv *vset_ops_dup(const struct kv *e, const char *key, size_t klen, long long expire) {
    struct vset *vs = vset_of(e);
    vset_quiesce(vs);
    struct hk_buf b = {0};
    vset_save(vs, &b);
    char err[128];
    struct vset *copy = vset_load(b.p, b.len, err, sizeof(err));
    if (!copy) {
        /* Our own bytes of a quiet set: failing to read them is a bug. */
        fprintf(stderr, "vector set copy: %s\n", err);
        abort();
    }
    hk_free(b.p);
    return kv_new_ptr(key, klen, OBJ_VSET, ENC_RAW, copy, expire);
}

/* Elements fold by xor (order-free); each mixes its name, its stored
 * vector and its attributes. */
static void vset_ops_digest(const struct kv *e, unsigned char digest[20]) {
    struct vset *vs = vset_of(e);
    vset_quiesce(vs);
    size_t vb = hnsw_vec_bytes(vs->g);
    struct ht_iter it;
    ht_iter_init(&it, &vs->names);
    for (struct hnode *n; (n = ht_iter_next(&it));) {
        const struct velem *el = (const struct velem *)n;
        unsigned char d[20] = {0};
        float norm, range;
        const void *raw = hnsw_raw(vs->g, el->id, &norm, &range);
        dg_mix(d, el->name, el->nlen);
        dg_mix(d, raw, vb);
        dg_mix(d, &norm, sizeof(norm));
        if (el->attr) dg_mix(d, el->attr, el->alen);
        dg_xor(digest, d, 20);
    }
}

const struct type_ops vset_type_ops = {
    .name = "vectorset",
    .free = vset_ops_free,
    .free_effort = vset_ops_free_effort,
    .dup = vset_ops_dup,
    .usage = vset_ops_usage,
    .digest = vset_ops_digest,
    .save = vset_rdb_save,
    .load = vset_rdb_load,
};
