/* vset.c - the vector set commands: VADD, VREM, VSIM, VCARD, VDIM, VEMB,
 * VINFO, VLINKS, VSETATTR, VGETATTR, VRANDMEMBER, VISMEMBER.
 *
 * Replies, errors and their order follow Redis 8's vector-set module. The
 * value (name table, graph, locks) is src/types/vset.h; read it for the
 * locks. What this file adds is where each command does its work:
 *
 *   - under the key's shard lock, every command parses, checks the type,
 *     and decides membership (VADD's 1 or 0, VREM's answer, the key's
 *     deletion when it empties), so those follow keyspace order;
 *   - a graph change takes a writer ticket there and is finished by
 *     exec_after_unlock, off the shard: the insert's candidate search runs
 *     with the set shared, only its linking with the set exclusive;
 *   - VSIM takes a reference to the set, leaves the shard, and searches
 *     with the set shared, so searches of one set run in parallel on every
 *     worker and never hold the shard of unrelated keys.
 * Nested (EXEC, scripts) or with NOTHREAD, the same work runs before the
 * locks are released, as Redis runs it on its main thread there.
 *
 * Every change is announced through db_written before it is made, and
 * propagates as its own argv: replaying VADD, VREM and VSETATTR in journal
 * order rebuilds the same elements, vectors and attributes (the graph's
 * links depend on the level draws: an equivalent graph; see
 * docs/vectorset.md). */
#include "../core/alloc.h"
#include "../core/hnsw.h"
#include "../core/util.h"
#include "../core/vexpr.h"
#include "../server/server.h"
#include "../types/vset.h"
#include "cmds.h"
#include "cmdutil.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define VSET_DEFAULT_EF_CONSTRUCTION 200
#define VSET_DEFAULT_COUNT 10
#define VSET_DEFAULT_SEARCH_EF 100
#define VSET_REPLY_CEILING ((size_t)64 << 20)

static int word_is(const hk_slice *a, const char *w) {
    size_t n = strlen(w);
    return a->len == n && strncasecmp(a->ptr, w, n) == 0;
}

static int slice_ll(const hk_slice *a, long long *v) { return hk_str2ll(a->ptr, a->len, v); }

static int slice_d(const hk_slice *a, double *v) { return hk_str2d(a->ptr, a->len, v); }

/* ---- vector arguments --------------------------------------------------- */

/* A vector given as "[REDUCE dim] FP32 blob" or "[REDUCE dim] VALUES n
 * v1..vn" at argv[at]. */
struct vec_arg {
    float *v;        /* heap, `dim` components */
    uint32_t dim;
    uint32_t reduce; /* REDUCE's dimension, 0 without */
    int consumed;    /* arguments taken, REDUCE included */
};

/* Parse it as Redis's parseVector does: 0 on any malformation (the
 * caller replies "invalid vector specification"). Components must be
 * finite: a NaN would make every distance to the vector NaN. */
static int parse_vector(struct cmd_ctx *c, int at, int allow_reduce, struct vec_arg *va) {
    memset(va, 0, sizeof(*va));
    int argc = c->argc;
    if (allow_reduce && argc > at + 2 && word_is(&c->argv[at], "REDUCE")) {
        long long r;
        if (!slice_ll(&c->argv[at + 1], &r) || r <= 0 || r > VSET_MAX_DIM) return 0;
        va->reduce = (uint32_t)r;
        at += 2;
        va->consumed = 2;
    }
    if (at >= argc) return 0;
    if (word_is(&c->argv[at], "FP32")) {
        if (argc < at + 2) return 0;
        const hk_slice *b = &c->argv[at + 1];
        if (b->len % 4 || b->len < 4 || b->len / 4 > VSET_MAX_DIM) return 0;
        va->dim = (uint32_t)(b->len / 4);
        va->v = hk_malloc(b->len);
        memcpy(va->v, b->ptr, b->len);
        va->consumed += 2;
    } else if (word_is(&c->argv[at], "VALUES")) {
        long long n;
        if (argc < at + 2 || !slice_ll(&c->argv[at + 1], &n) || n < 1 || n > VSET_MAX_DIM) return 0;
        if (argc - (at + 2) < n) return 0;
        va->dim = (uint32_t)n;
        va->v = hk_malloc((size_t)n * sizeof(float));
        for (long long j = 0; j < n; j++) {
            double d;
            if (!slice_d(&c->argv[at + 2 + j], &d)) {
                hk_free(va->v);
                va->v = NULL;
                return 0;
            }
            va->v[j] = (float)d;
        }
        va->consumed += (int)n + 2;
    } else {
        return 0;
    }
    int bad = va->reduce > va->dim;
    for (uint32_t i = 0; i < va->dim && !bad; i++) bad = !isfinite(va->v[i]);
    if (bad) {
        hk_free(va->v);
        va->v = NULL;
        return 0;
    }
    return 1;
}

static const char *quant_name(enum hnsw_quant q) {
    switch (q) {
    case HNSW_QUANT_NONE: return "f32";
    case HNSW_QUANT_Q8: return "int8";
    case HNSW_QUANT_BIN: return "bin";
    }
    return "unknown";
}

/* Look argv[1] up as a vector set: NULL when absent (*bad 0) or after a
 * WRONGTYPE reply (*bad 1). */
static struct vset *lookup_vset(struct cmd_ctx *c, struct keyref *k, int write, int *bad) {
    struct kv *e = lookup_typed(c, 1, k, OBJ_VSET, write, bad);
    return e ? vset_of(e) : NULL;
}

/* argv[1]'s set and its element argv[2], for the commands that answer
 * the same thing for a missing key and a missing element: NULL after
 * that answer (nil, or false for the writers) or after WRONGTYPE. */
static struct velem *lookup_elem(struct cmd_ctx *c, int write, struct keyref *k, struct vset **vsp) {
    int bad;
    struct vset *vs = lookup_vset(c, k, write, &bad);
    if (bad) return NULL;
    struct velem *el = vs ? vset_find(vs, c->argv[2].ptr, c->argv[2].len) : NULL;
    if (!el) {
        if (write) reply_bool(c, 0);
        else reply_null(c);
    }
    *vsp = vs;
    return el;
}

/* Wait for a new element's insert to commit (rare: only a command that
 * names an element whose VADD is still in flight). Shard lock held. */
static void el_settle(struct vset *vs, struct velem *el) {
    vset_short_read(vs);
    int pending = el->id == HNSW_NONE;
    vset_short_done(vs);
    if (pending) vset_quiesce(vs);
}

/* Run fn(job) after the command's locks are released, or now when the
 * command is nested (its reply must come in its place in EXEC's). */
static void run_off_shard(struct cmd_ctx *c, int inline_now, void (*fn)(void *), void *job) {
    if (inline_now || (c->flags & CTX_NESTED)) fn(job);
    else exec_after_unlock(c, fn, job);
}

/* ---- graph writers ------------------------------------------------------- */

/* What a writer finishes off the shard, with the ticket it took there:
 * VADD's insert, VREM's unlink, VSETATTR's new attributes. */
enum vop { VOP_ADD, VOP_REM, VOP_SETATTR };

struct vwrite_job {
    struct cmd_ctx *c;
    struct vset *vs;
    struct velem *el;
    uint64_t ticket;
    enum vop op;
    int existed, set_attr;
    uint32_t ef, alen;
    char *attr; /* owned until handed to the set */
    float *v;   /* VADD's input vector (in_dim, projected here) */
};

/* A copy of an attributes argument; NULL for "" (no attributes). */
static char *attr_copy(const hk_slice *a) {
    if (!a || !a->len) return NULL;
    char *p = hk_malloc(a->len);
    memcpy(p, a->ptr, a->len);
    return p;
}

/* Take the ticket and a reference (shard lock held); `attr`, when given,
 * is copied ("" means none). */
static struct vwrite_job *vwrite_job(struct cmd_ctx *c, struct vset *vs, struct velem *el, enum vop op,
                                     const hk_slice *attr) {
    struct vwrite_job *j = hk_calloc(1, sizeof(*j));
    j->c = c;
    j->vs = vs;
    j->el = el;
    j->op = op;
    j->ticket = vset_ticket(vs);
    j->set_attr = attr != NULL;
    j->attr = attr_copy(attr);
    j->alen = j->attr ? (uint32_t)attr->len : 0;
    vset_ref(vs);
    return j;
}

static void vwrite_finish(void *arg) {
    struct vwrite_job *j = arg;
    struct vset *vs = j->vs;
    int reply = 1;
    if (j->op == VOP_ADD) {
        float *stored = j->v;
        if (vs->proj) {
            stored = hk_malloc((size_t)vs->dim * sizeof(float));
            vset_project(vs, j->v, stored);
        }
        vset_apply_add(vs, j->ticket, j->el, j->existed, stored, j->ef, j->set_attr, j->attr, j->alen);
        if (stored != j->v) hk_free(stored);
        hk_free(j->v);
        reply = !j->existed;
    } else if (j->op == VOP_REM) {
        vset_apply_remove(vs, j->ticket, j->el);
    } else {
        vset_apply_setattr(vs, j->ticket, j->el, j->attr, j->alen);
    }
    reply_bool(j->c, reply);
    vset_unref(vs);
    hk_free(j);
}

/* Finish j after the command's locks are released, or now when nested. */
static void vwrite_run(struct vwrite_job *j) { run_off_shard(j->c, 0, vwrite_finish, j); }

/* ---- VADD, VREM, VSETATTR ----------------------------------------------- */

/* VADD key [REDUCE dim] (FP32 blob | VALUES n v...) element [CAS]
 *      [NOQUANT | Q8 | BIN] [EF n] [SETATTR json] [M n] */
void cmd_vadd(struct cmd_ctx *c) {
    struct vec_arg va;
    if (!parse_vector(c, 2, 1, &va)) {
        reply_error(c, "ERR invalid vector specification");
        return;
    }
    if (c->argc - 2 - va.consumed < 1) {
        hk_free(va.v);
        reply_arity(c);
        return;
    }
    int elem_at = 2 + va.consumed;
    long long ef = VSET_DEFAULT_EF_CONSTRUCTION, m = HNSW_DEFAULT_M;
    enum hnsw_quant quant = HNSW_QUANT_Q8;
    const hk_slice *attr = NULL;
    const char *err = NULL;
    for (int j = elem_at + 1; j < c->argc && !err; j++) {
        const hk_slice *o = &c->argv[j];
        if (word_is(o, "CAS")) {
            /* Redis's check-and-set insert prepares off its main thread;
             * every HotKV insert prepares off the shard lock already. */
        } else if (word_is(o, "EF") && j + 1 < c->argc) {
            if (!slice_ll(&c->argv[j + 1], &ef) || ef <= 0 || ef > VSET_MAX_EF) err = "ERR invalid EF";
            j++;
        } else if (word_is(o, "M") && j + 1 < c->argc) {
            if (!slice_ll(&c->argv[j + 1], &m) || m < HNSW_MIN_M || m > HNSW_MAX_M) err = "ERR invalid M";
            j++;
        } else if (word_is(o, "SETATTR") && j + 1 < c->argc) {
            attr = &c->argv[j + 1];
            j++;
        } else if (word_is(o, "NOQUANT")) {
            quant = HNSW_QUANT_NONE;
        } else if (word_is(o, "BIN")) {
            quant = HNSW_QUANT_BIN;
        } else if (word_is(o, "Q8")) {
            quant = HNSW_QUANT_Q8;
        } else {
            err = "ERR invalid option after element";
        }
    }
    /* Names and attributes are stored with 32-bit lengths. */
    if (!err && (c->argv[elem_at].len >= UINT32_MAX || (attr && attr->len >= UINT32_MAX)))
        err = "ERR string exceeds maximum allowed size";
    if (err) {
        hk_free(va.v);
        reply_error(c, err);
        return;
    }
    struct keyref k;
    int bad;
    struct vset *vs = lookup_vset(c, &k, 1, &bad);
    if (bad) {
        hk_free(va.v);
        return;
    }
    const hk_slice *name = &c->argv[elem_at];
    if (!vs) {
        /* A new key: its first element goes in now, so the key is never
         * seen empty (an insert into an empty graph searches nothing). */
        if (va.reduce && (uint64_t)va.dim * va.reduce > VSET_MAX_PROJ) {
            hk_free(va.v);
            reply_errorf(c, "ERR REDUCE projection too large: %u x %u exceeds %llu matrix entries", va.reduce, va.dim,
                         (unsigned long long)VSET_MAX_PROJ);
            return;
        }
        vs = vset_new(va.dim, va.reduce, quant, (uint32_t)m);
        struct velem *el = vset_add_name(vs, name->ptr, name->len, attr_copy(attr), attr ? (uint32_t)attr->len : 0);
        db_put(&k, vset_entry(k.key, k.klen, vs), KEV_VSET);
        struct vwrite_job *j = vwrite_job(c, vs, el, VOP_ADD, NULL);
        j->ef = (uint32_t)ef;
        j->v = va.v;
        vwrite_finish(j);
        return;
    }
    if (vs->quant != quant) err = "ERR asked quantization mismatch with existing vector set";
    else if (vs->M != (uint32_t)m) err = "ERR asked M value mismatch with existing vector set";
    if (err) {
        hk_free(va.v);
        reply_error(c, err);
        return;
    }
    if ((!vs->proj && vs->dim != va.dim) || (vs->proj && vs->dim != va.reduce)) {
        hk_free(va.v);
        reply_errorf(c, "ERR Vector dimension mismatch - got %u but set has %u", va.dim, vs->dim);
        return;
    }
    if (va.reduce && !vs->proj) {
        hk_free(va.v);
        reply_error(c, "ERR cannot add projection to existing set without projection");
        return;
    }
    if (vs->proj && va.dim != vs->in_dim) {
        hk_free(va.v);
        reply_errorf(c, "ERR Input dimension mismatch for projection - got %u but projection expects %u", va.dim,
                     vs->in_dim);
        return;
    }
    /* Decided here, in keyspace order: new (1) or an update (0). */
    struct velem *el = vset_find(vs, name->ptr, name->len);
    int existed = el != NULL;
    db_written(&k, KEV_VSET);
    /* A new element has its attributes as soon as it is a member; an
     * update's replace the old ones when it commits. */
    if (!el) el = vset_add_name(vs, name->ptr, name->len, attr_copy(attr), attr ? (uint32_t)attr->len : 0);
    struct vwrite_job *j = vwrite_job(c, vs, el, VOP_ADD, existed ? attr : NULL);
    j->existed = existed;
    j->ef = (uint32_t)ef;
    j->v = va.v;
    vwrite_run(j);
}

/* VREM key element: the key goes when its last element does. */
void cmd_vrem(struct cmd_ctx *c) {
    struct keyref k;
    struct vset *vs;
    struct velem *el = lookup_elem(c, 1, &k, &vs);
    if (!el) return;
    db_written(&k, KEV_VSET);
    vset_remove_name(vs, el);
    struct vwrite_job *j = vwrite_job(c, vs, el, VOP_REM, NULL);
    /* Redis's module deletes the emptied key without a "del" event, and
     * counts the command as one change (its replication), with or without
     * the key. */
    if (!vset_card(vs) && db_delete(&k, c->now_ms, KEV_VSET)) db_dirty_add(-1);
    vwrite_run(j);
}

/* VSETATTR key element json: "" removes the attributes. */
void cmd_vsetattr(struct cmd_ctx *c) {
    if (c->argv[3].len >= UINT32_MAX) {
        reply_error(c, "ERR string exceeds maximum allowed size");
        return;
    }
    struct keyref k;
    struct vset *vs;
    struct velem *el = lookup_elem(c, 1, &k, &vs);
    if (!el) return;
    db_written(&k, KEV_VSET);
    vwrite_run(vwrite_job(c, vs, el, VOP_SETATTR, &c->argv[3]));
}

/* ---- VSIM ---------------------------------------------------------------- */

/* Per-thread buffers of VSIM: hits and the filter's evaluation stack. */
struct vsim_tls {
    struct hnsw_hit *hits;
    size_t cap;
    struct vexpr_scratch *scratch;
};

static pthread_key_t vsim_key;
static pthread_once_t vsim_once = PTHREAD_ONCE_INIT;

static void vsim_tls_free(void *p) {
    struct vsim_tls *t = p;
    hk_free(t->hits);
    if (t->scratch) vexpr_scratch_free(t->scratch);
    hk_free(t);
}

static void vsim_key_init(void) { pthread_key_create(&vsim_key, vsim_tls_free); }

static struct vsim_tls *vsim_tls(size_t hits) {
    pthread_once(&vsim_once, vsim_key_init);
    struct vsim_tls *t = pthread_getspecific(vsim_key);
    if (!t) {
        t = hk_calloc(1, sizeof(*t));
        t->scratch = vexpr_scratch_new();
        pthread_setspecific(vsim_key, t);
    }
    if (t->cap < hits) {
        hk_free(t->hits);
        t->cap = hits < 64 ? 64 : hits;
        t->hits = hk_malloc(t->cap * sizeof(*t->hits));
    }
    return t;
}

struct vsim_job {
    struct cmd_ctx *c;
    struct vset *vs;
    struct vexpr *filter;
    uint32_t count, ef, filter_ef;
    double epsilon;
    int withscores, withattribs, truth, project;
    /* Removals decided before this search and not committed yet: their
     * elements are skipped (they are no longer members). */
    int skip_gone;
    uint64_t through; /* TRUTH: every writer below this ticket is done first */
    float q[]; /* the query: in_dim components when project, else dim */
};

struct vsim_filter_arg {
    const struct vexpr *e;
    struct vexpr_scratch *s;
};

static int vsim_accept(void *arg, uint32_t id, void *value) {
    const struct vsim_filter_arg *f = arg;
    struct velem *el = value;
    if (atomic_load_explicit(&el->gone, memory_order_acquire)) return 0;
    if (!f->e) return 1;
    if (!el->attr) return 0;
    return vexpr_eval(f->e, el->attr, el->alen, f->s);
}

static void vsim_run(void *arg) {
    struct vsim_job *j = arg;
    struct vset *vs = j->vs;
    struct cmd_ctx *c = j->c;
    const float *q = j->q;
    float *proj = NULL;
    if (j->project) {
        proj = hk_malloc((size_t)vs->dim * sizeof(float));
        vset_project(vs, j->q, proj);
        q = proj;
    }
    /* An exact search answers for every write decided before it. */
    if (j->truth) vset_wait_through(vs, j->through);
    pthread_rwlock_rdlock(&vs->rw);
    uint32_t live = hnsw_count(vs->g);
    uint32_t k = j->count < live ? j->count : live;
    uint32_t ef = j->ef < live ? j->ef : live;
    struct vsim_tls *t = vsim_tls(k ? k : 1);
    struct vsim_filter_arg fa = {j->filter, t->scratch};
    struct hnsw_searcher *s = vset_searcher();
    uint32_t n = 0;
    hnsw_filter_fn accept = j->filter || j->skip_gone ? vsim_accept : NULL;
    if (k) {
        if (j->truth)
            n = hnsw_search_exact(vs->g, s, q, k, accept, &fa, t->hits);
        else
            n = hnsw_search(vs->g, s, q, k, ef, accept, &fa, j->filter ? j->filter_ef : 0, t->hits);
    }
    /* EPSILON: the results closer than it (in score terms, 1 - score). */
    uint32_t keep = 0;
    while (keep < n && t->hits[keep].dist / 2 <= j->epsilon) keep++;
    int map = c->resp >= 3 && (j->withscores || j->withattribs);
    if (map) reply_map(c, keep);
    else reply_array(c, (long long)keep * (1 + j->withscores + j->withattribs));
    for (uint32_t i = 0; i < keep; i++) {
        const struct velem *el = hnsw_value(vs->g, t->hits[i].id);
        reply_bulk(c, el->name, el->nlen);
        if (map && j->withscores && j->withattribs) reply_array(c, 2);
        if (j->withscores) reply_double(c, 1.0 - (double)t->hits[i].dist / 2.0);
        if (j->withattribs) {
            if (el->attr) reply_bulk(c, el->attr, el->alen);
            else reply_null(c);
        }
    }
    pthread_rwlock_unlock(&vs->rw);
    hk_free(proj);
    if (j->filter) vexpr_free(j->filter);
    vset_unref(vs);
    hk_free(j);
}

/* VSIM key (ELE e | FP32 blob | VALUES n v...) [WITHSCORES] [WITHATTRIBS]
 *      [COUNT n] [EPSILON d] [EF n] [FILTER expr] [FILTER-EF n] [TRUTH]
 *      [NOTHREAD] */
void cmd_vsim(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct vset *vs = lookup_vset(c, &k, 0, &bad);
    if (bad) return;
    if (!vs) {
        reply_array(c, 0);
        return;
    }
    const hk_slice *kind = &c->argv[2];
    struct vsim_job *j = NULL;
    int vargs;
    uint32_t qdim;
    if (word_is(kind, "ELE")) {
        struct velem *el = vset_find(vs, c->argv[3].ptr, c->argv[3].len);
        if (!el) {
            reply_error(c, "ERR element not found in set");
            return;
        }
        el_settle(vs, el);
        j = hk_malloc(sizeof(*j) + (size_t)vs->dim * sizeof(float));
        vset_short_read(vs);
        hnsw_vector(vs->g, el->id, j->q);
        vset_short_done(vs);
        j->project = 0;
        qdim = vs->dim;
        vargs = 2;
    } else {
        struct vec_arg va;
        if (!parse_vector(c, 2, 0, &va)) {
            reply_error(c, "ERR invalid vector specification");
            return;
        }
        int project = vs->proj && va.dim != vs->dim;
        if (project && va.dim != vs->in_dim) {
            reply_errorf(c, "ERR Input dimension mismatch for projection - got %u but projection expects %u", va.dim,
                         vs->in_dim);
            hk_free(va.v);
            return;
        }
        if (!word_is(kind, "FP32") && !word_is(kind, "VALUES")) {
            hk_free(va.v);
            reply_error(c, "ERR vector type must be ELE, FP32 or VALUES");
            return;
        }
        qdim = project ? vs->dim : va.dim;
        j = hk_malloc(sizeof(*j) + (size_t)va.dim * sizeof(float));
        memcpy(j->q, va.v, (size_t)va.dim * sizeof(float));
        hk_free(va.v);
        j->project = project;
        vargs = va.consumed;
    }
    if (qdim != vs->dim) {
        reply_errorf(c, "ERR Vector dimension mismatch - got %u but set has %u", qdim, vs->dim);
        hk_free(j);
        return;
    }
    long long count = VSET_DEFAULT_COUNT, ef = 0, filter_ef = 0;
    double epsilon = 2.0;
    int withscores = 0, withattribs = 0, truth = 0, nothread = 0;
    struct vexpr *filter = NULL;
    const char *err = NULL;
    char *ebuf = NULL;
    for (int i = 2 + vargs; i < c->argc && !err;) {
        const hk_slice *o = &c->argv[i];
        int has = i + 1 < c->argc;
        if (word_is(o, "WITHSCORES")) withscores = 1, i++;
        else if (word_is(o, "WITHATTRIBS")) withattribs = 1, i++;
        else if (word_is(o, "TRUTH")) truth = 1, i++;
        else if (word_is(o, "NOTHREAD")) nothread = 1, i++;
        else if (word_is(o, "COUNT") && has) {
            if (!slice_ll(&c->argv[i + 1], &count) || count <= 0) err = "ERR invalid COUNT";
            i += 2;
        } else if (word_is(o, "EPSILON") && has) {
            if (!slice_d(&c->argv[i + 1], &epsilon) || epsilon <= 0) err = "ERR invalid EPSILON";
            i += 2;
        } else if (word_is(o, "EF") && has) {
            if (!slice_ll(&c->argv[i + 1], &ef) || ef <= 0 || ef > VSET_MAX_EF) err = "ERR invalid EF";
            i += 2;
        } else if (word_is(o, "FILTER-EF") && has) {
            if (!slice_ll(&c->argv[i + 1], &filter_ef) || filter_ef <= 0) err = "ERR invalid FILTER-EF";
            i += 2;
        } else if (word_is(o, "FILTER") && has) {
            const hk_slice *x = &c->argv[i + 1];
            if (filter) vexpr_free(filter);
            size_t esz = VEXPR_ERR_PREFIX_LEN + x->len + 1;
            char *msg = hk_malloc(esz);
            filter = vexpr_compile(x->ptr, x->len, msg, esz);
            if (filter) {
                hk_free(msg);
            } else {
                ebuf = msg;
                err = msg;
            }
            i += 2;
        } else {
            err = "ERR syntax error in VSIM command";
        }
    }
    if (err) {
        if (filter) vexpr_free(filter);
        hk_free(j);
        reply_error(c, err);
        hk_free(ebuf);
        return;
    }
    if (ef == 0) ef = VSET_DEFAULT_SEARCH_EF;
    if (count > ef) ef = count;
    if (filter_ef == 0) filter_ef = count > LLONG_MAX / 100 ? LLONG_MAX : count * 100;
    j->c = c;
    j->vs = vs;
    j->filter = filter;
    j->count = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
    j->ef = ef > UINT32_MAX ? UINT32_MAX : (uint32_t)ef;
    j->filter_ef = filter_ef > UINT32_MAX ? UINT32_MAX : (uint32_t)filter_ef;
    j->epsilon = epsilon;
    j->withscores = withscores;
    j->withattribs = withattribs;
    j->truth = truth;
    j->skip_gone = atomic_load_explicit(&vs->removing, memory_order_relaxed) != 0;
    j->through = vs->tnext;
    vset_ref(vs);
    run_off_shard(c, nothread, vsim_run, j);
}

/* ---- reads ------------------------------------------------------------------ */

void cmd_vcard(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct vset *vs = lookup_vset(c, &k, 0, &bad);
    if (bad) return;
    reply_int(c, vs ? (long long)vset_card(vs) : 0);
}

void cmd_vdim(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct vset *vs = lookup_vset(c, &k, 0, &bad);
    if (bad) return;
    if (!vs) reply_error(c, "ERR key does not exist");
    else reply_int(c, vs->dim);
}

void cmd_vismember(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct vset *vs = lookup_vset(c, &k, 0, &bad);
    if (bad) return;
    reply_bool(c, vs && vset_find(vs, c->argv[2].ptr, c->argv[2].len) != NULL);
}

/* VEMB key element [RAW] */
void cmd_vemb(struct cmd_ctx *c) {
    int raw = 0;
    for (int i = 3; i < c->argc; i++) {
        if (!word_is(&c->argv[i], "RAW")) {
            reply_error(c, "ERR invalid option");
            return;
        }
        raw = 1;
    }
    struct keyref k;
    struct vset *vs;
    struct velem *el = lookup_elem(c, 0, &k, &vs);
    if (!el) return;
    el_settle(vs, el);
    vset_short_read(vs);
    if (raw) {
        float norm, range;
        const void *p = hnsw_raw(vs->g, el->id, &norm, &range);
        int q8 = vs->quant == HNSW_QUANT_Q8;
        reply_array(c, 3 + q8);
        reply_simple(c, quant_name(vs->quant));
        reply_bulk(c, p, hnsw_vec_bytes(vs->g));
        reply_double(c, norm);
        if (q8) reply_double(c, range);
    } else {
        float *v = hk_malloc((size_t)vs->dim * sizeof(float));
        hnsw_vector(vs->g, el->id, v);
        reply_array(c, vs->dim);
        for (uint32_t i = 0; i < vs->dim; i++) reply_double(c, v[i]);
        hk_free(v);
    }
    vset_short_done(vs);
}

void cmd_vgetattr(struct cmd_ctx *c) {
    struct keyref k;
    struct vset *vs;
    struct velem *el = lookup_elem(c, 0, &k, &vs);
    if (!el) return;
    vset_short_read(vs);
    if (el->attr) reply_bulk(c, el->attr, el->alen);
    else reply_null(c);
    vset_short_done(vs);
}

/* VLINKS key element [WITHSCORES]: neighbours per level, top level first. */
void cmd_vlinks(struct cmd_ctx *c) {
    int withscores = 0;
    if (c->argc > 4) {
        reply_arity(c);
        return;
    }
    if (c->argc == 4) {
        if (!word_is(&c->argv[3], "WITHSCORES")) {
            reply_arity(c);
            return;
        }
        withscores = 1;
    }
    struct keyref k;
    struct vset *vs;
    struct velem *el = lookup_elem(c, 0, &k, &vs);
    if (!el) return;
    el_settle(vs, el);
    vset_short_read(vs);
    uint32_t level = hnsw_level(vs->g, el->id);
    reply_array(c, (long long)level + 1);
    for (int l = (int)level; l >= 0; l--) {
        const uint32_t *ids;
        uint32_t n = hnsw_links(vs->g, el->id, (uint32_t)l, &ids), shown = 0;
        /* Neighbours whose removal is decided are no longer members. */
        for (uint32_t i = 0; i < n; i++) shown += !atomic_load(&((struct velem *)hnsw_value(vs->g, ids[i]))->gone);
        if (withscores) reply_map(c, shown);
        else reply_array(c, shown);
        for (uint32_t i = 0; i < n; i++) {
            struct velem *nb = hnsw_value(vs->g, ids[i]);
            if (atomic_load(&nb->gone)) continue;
            reply_bulk(c, nb->name, nb->nlen);
            if (withscores) reply_double(c, 1.0 - (double)hnsw_node_distance(vs->g, el->id, ids[i]) / 2.0);
        }
    }
    vset_short_done(vs);
}

void cmd_vinfo(struct cmd_ctx *c) {
    struct keyref k;
    int bad;
    struct vset *vs = lookup_vset(c, &k, 0, &bad);
    if (bad) return;
    if (!vs) {
        reply_null_array(c);
        return;
    }
    /* Redis's nine fields, then what the set costs: its bytes (as MEMORY
     * USAGE counts them) and the bytes per element. */
    size_t mem = vset_memory(vs);
    uint64_t card = vset_card(vs);
    vset_short_read(vs);
    reply_map(c, 11);
    reply_simple(c, "quant-type");
    reply_simple(c, quant_name(vs->quant));
    reply_simple(c, "hnsw-m");
    reply_int(c, vs->M);
    reply_simple(c, "vector-dim");
    reply_int(c, vs->dim);
    reply_simple(c, "projection-input-dim");
    reply_int(c, vs->proj ? vs->in_dim : 0);
    reply_simple(c, "size");
    reply_int(c, (long long)vset_card(vs));
    reply_simple(c, "max-level");
    reply_int(c, hnsw_max_level(vs->g));
    reply_simple(c, "attributes-count");
    reply_int(c, (long long)atomic_load_explicit(&vs->nattr, memory_order_relaxed));
    reply_simple(c, "vset-uid");
    reply_int(c, (long long)vs->uid);
    reply_simple(c, "hnsw-max-node-uid");
    reply_int(c, hnsw_id_bound(vs->g));
    reply_simple(c, "memory-usage");
    reply_int(c, (long long)mem);
    reply_simple(c, "memory-per-element");
    reply_int(c, (long long)(card ? mem / card : 0));
    vset_short_done(vs);
}

/* VRANDMEMBER key [count] */
void cmd_vrandmember(struct cmd_ctx *c) {
    long long count = 1;
    if (c->argc > 3) {
        reply_arity(c);
        return;
    }
    int with_count = c->argc == 3;
    if (with_count) {
        if (!slice_ll(&c->argv[2], &count)) {
            reply_error(c, "ERR COUNT value is not an integer");
            return;
        }
        if (count == 0) {
            reply_array(c, 0);
            return;
        }
        /* |LLONG_MIN| is no array length: refused, as Redis now does. */
        if (count == LLONG_MIN) {
            reply_error(c, "ERR COUNT value is out of range");
            return;
        }
    }
    struct keyref k;
    int bad;
    struct vset *vs = lookup_vset(c, &k, 0, &bad);
    if (bad) return;
    if (!vs || !vset_card(vs)) {
        if (with_count) reply_array(c, 0);
        else reply_null(c);
        return;
    }
    if (!with_count) {
        struct velem *el = vset_random(vs);
        reply_bulk(c, el->name, el->nlen);
        return;
    }
    uint64_t card = vset_card(vs);
    if (count < 0) {
        /* With repetitions the reply can be far bigger than the set (Redis
         * would build all of it, however big): past VSET_REPLY_CEILING
         * pending bytes it stops, and the client is closed once what was
         * built is sent, as an output-buffer limit would close it. Inside
         * EXEC or a script the reply is part of another one and cannot be
         * cut short, so a count that could pass the ceiling is refused
         * before anything is written. */
        unsigned long long n = (unsigned long long)-count;
        if ((c->flags & CTX_NESTED) || !c->cl) {
            if (n > VSET_REPLY_CEILING / 16) {
                reply_error(c, "ERR VRANDMEMBER count is too large for a reply inside a transaction or script");
                return;
            }
            reply_array(c, (long long)n);
            for (unsigned long long i = 0; i < n; i++) {
                struct velem *el = vset_random(vs);
                reply_bulk(c, el->name, el->nlen);
            }
            return;
        }
        reply_array(c, (long long)n);
        for (unsigned long long i = 0; i < n; i++) {
            struct velem *el = vset_random(vs);
            reply_bulk(c, el->name, el->nlen);
            if ((i & 4095) == 4095 && c->out->pending > VSET_REPLY_CEILING) {
                if (c->cl) c->cl->flags |= CLIENT_CLOSE_AFTER_REPLY;
                break;
            }
        }
        return;
    }
    size_t n = (uint64_t)count > card ? (size_t)card : (size_t)count;
    struct velem **out = hk_malloc(n * sizeof(*out));
    size_t got = vset_sample(vs, n, out);
    reply_array(c, (long long)got);
    for (size_t i = 0; i < got; i++) reply_bulk(c, out[i]->name, out[i]->nlen);
    hk_free(out);
}
