/* test_hnsw.c - unit tests of the vector-set graph (core/hnsw.c) and its
 * distance kernels (core/vdist.c): kernels against the scalar versions,
 * encodings and their error bounds, exact results where the beam covers
 * the graph, recall, deletion with repair, the prepare/commit protocol,
 * the serialised form (round trip and corrupt input), projection, memory
 * accounting, and a threaded run for TSan. */
#include "core/alloc.h"
#include "core/buf.h"
#include "core/hnsw.h"
#include "core/vdist.h"
#include "test.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

/* ---- helpers ------------------------------------------------------------ */

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rnd64(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static float rndf(void) { return (float)((rnd64() >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f; }

/* n points of dimension dim around `clusters` centres (clustered, as
 * embeddings are). */
static float *clustered(uint32_t n, uint32_t dim, uint32_t clusters) {
    float *c = malloc((size_t)clusters * dim * sizeof(float));
    for (size_t i = 0; i < (size_t)clusters * dim; i++) c[i] = rndf();
    float *v = malloc((size_t)n * dim * sizeof(float));
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = (uint32_t)(rnd64() % clusters);
        for (uint32_t j = 0; j < dim; j++) v[(size_t)i * dim + j] = c[(size_t)k * dim + j] + 0.35f * rndf();
    }
    free(c);
    return v;
}

/* Insert rows [from, to) of v with ids recorded in ids[row]. */
static void insert_rows(struct hnsw *h, struct hnsw_searcher *s, const float *v, uint32_t from, uint32_t to,
                        uint32_t *ids) {
    struct hnsw_insert ins;
    hnsw_insert_init(&ins);
    for (uint32_t i = from; i < to; i++) {
        hnsw_insert_prepare(h, s, v + (size_t)i * hnsw_dim(h), 200, rnd64(), &ins);
        uint32_t id = hnsw_insert_commit(h, s, &ins, (void *)(uintptr_t)(i + 1), 200);
        if (ids) ids[i] = id;
    }
    hnsw_insert_release(&ins);
}

static void delete_id(struct hnsw *h, struct hnsw_searcher *s, uint32_t id) {
    struct hnsw_delete del = {0};
    hnsw_delete_prepare(h, s, id, &del);
    hnsw_delete_commit(h, &del);
}

/* Mean recall@k of the graph's search against the exact scan. */
static double recall(struct hnsw *h, struct hnsw_searcher *s, const float *q, uint32_t nq, uint32_t k, uint32_t ef) {
    struct hnsw_hit got[64], want[64];
    uint32_t dim = hnsw_dim(h);
    double sum = 0;
    for (uint32_t i = 0; i < nq; i++) {
        uint32_t n = hnsw_search(h, s, q + (size_t)i * dim, k, ef, NULL, NULL, 0, got);
        uint32_t m = hnsw_search_exact(h, s, q + (size_t)i * dim, k, NULL, NULL, want);
        uint32_t hit = 0;
        for (uint32_t a = 0; a < n; a++)
            for (uint32_t b = 0; b < m; b++)
                if (got[a].id == want[b].id) {
                    hit++;
                    break;
                }
        sum += m ? (double)hit / m : 1.0;
    }
    return sum / nq;
}

/* Every link of every live node points to a live node of the level. */
static int graph_sound(const struct hnsw *h) {
    uint32_t live = 0;
    for (uint32_t id = 0; id < hnsw_id_bound(h); id++) {
        if (!hnsw_live(h, id)) continue;
        live++;
        for (uint32_t l = 0; l <= hnsw_level(h, id); l++) {
            const uint32_t *lk;
            uint32_t n = hnsw_links(h, id, l, &lk);
            if (n > (l ? hnsw_m(h) : 2 * hnsw_m(h))) return 0;
            for (uint32_t j = 0; j < n; j++)
                if (lk[j] == id || !hnsw_live(h, lk[j]) || hnsw_level(h, lk[j]) < l) return 0;
        }
    }
    if (live != hnsw_count(h)) return 0;
    /* The in-degrees the graph keeps match a count of every list. */
    uint32_t *indeg = calloc(hnsw_id_bound(h) + 1, sizeof(uint32_t));
    for (uint32_t id = 0; id < hnsw_id_bound(h); id++) {
        if (!hnsw_live(h, id)) continue;
        for (uint32_t l = 0; l <= hnsw_level(h, id); l++) {
            const uint32_t *lk;
            uint32_t n = hnsw_links(h, id, l, &lk);
            for (uint32_t j = 0; j < n; j++) indeg[lk[j]]++;
        }
    }
    int ok = 1;
    for (uint32_t id = 0; id < hnsw_id_bound(h); id++)
        if (hnsw_live(h, id) && hnsw_in_degree(h, id) != indeg[id]) ok = 0;
    free(indeg);
    if (!ok) return 0;
    if (live && (!hnsw_live(h, hnsw_entry(h)) || hnsw_level(h, hnsw_entry(h)) != hnsw_max_level(h))) return 0;
    for (uint32_t id = 0; id < hnsw_id_bound(h); id++)
        if (hnsw_live(h, id) && hnsw_level(h, id) > hnsw_max_level(h)) return 0;
    return 1;
}

/* ---- kernels ------------------------------------------------------------- */

static void test_kernels(void) {
    static const uint32_t dims[] = {1, 3, 7, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 768, 1536};
    const struct vd_kernels *sc = vd_kernels_at(VD_SCALAR);
    CHECK(sc != NULL);
    CHECK(vd_kernels() != NULL);
    int tested = 0;
    for (int lv = VD_AVX2; lv < VD_LEVELS; lv++) {
        const struct vd_kernels *k = vd_kernels_at((enum vd_level)lv);
        if (!k) continue;
        tested++;
        for (size_t d = 0; d < sizeof(dims) / sizeof(dims[0]); d++) {
            uint32_t n = dims[d];
            float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
            int8_t *qa = malloc(n), *qb = malloc(n);
            uint32_t words = (n + 63) / 64;
            uint64_t *ba = malloc(words * 8), *bb = malloc(words * 8);
            for (int rep = 0; rep < 20; rep++) {
                double mag = 0;
                for (uint32_t i = 0; i < n; i++) {
                    a[i] = rndf();
                    b[i] = rndf();
                    mag += fabs((double)a[i] * b[i]);
                    qa[i] = (int8_t)(rnd64() % 255 - 127);
                    qb[i] = (int8_t)(rnd64() % 255 - 127);
                }
                for (uint32_t w = 0; w < words; w++) {
                    ba[w] = rnd64();
                    bb[w] = rnd64();
                }
                float x = sc->dot_f32(a, b, n), y = k->dot_f32(a, b, n);
                CHECK(fabs((double)x - y) <= 1e-5 * mag + 1e-6);
                CHECK_EQ_LL(k->dot_i8(qa, qb, n), sc->dot_i8(qa, qb, n));
                CHECK_EQ_LL(k->hamming(ba, bb, words), sc->hamming(ba, bb, words));
            }
            /* Extremes of the int8 range do not overflow. */
            memset(qa, 127, n);
            memset(qb, 0x81, n); /* -127 */
            CHECK_EQ_LL(k->dot_i8(qa, qb, n), -127LL * 127 * n);
            CHECK_EQ_LL(sc->dot_i8(qa, qb, n), -127LL * 127 * n);
            free(a), free(b), free(qa), free(qb), free(ba), free(bb);
        }
    }
    /* A scalar-only machine still passes; say what ran. */
    fprintf(stderr, "kernels: best %s, %d vector set(s) compared with scalar\n", vd_kernels()->name, tested);
    /* The scalar bit count on known words. */
    uint64_t x = 0xffffffffffffffffULL, z = 0, o = 0x8000000000000001ULL;
    CHECK_EQ_LL(sc->hamming(&x, &z, 1), 64);
    CHECK_EQ_LL(sc->hamming(&o, &z, 1), 2);
}

/* ---- encodings ----------------------------------------------------------- */

static void test_encoding_redis_bytes(void) {
    /* [1, 2, 3]: norm sqrt(14); Q8 of the normalised vector scales its
     * largest component to 127: round(127/3) = 42, round(254/3) = 85. */
    struct hnsw *h = hnsw_new(3, HNSW_QUANT_Q8, 16);
    struct hnsw_searcher *s = hnsw_searcher_new();
    float v[3] = {1, 2, 3};
    uint32_t id;
    insert_rows(h, s, v, 0, 1, &id);
    float norm, range;
    const int8_t *q = hnsw_raw(h, id, &norm, &range);
    CHECK_EQ_LL(q[0], 42);
    CHECK_EQ_LL(q[1], 85);
    CHECK_EQ_LL(q[2], 127);
    CHECK(fabsf(norm - sqrtf(14.0f)) < 1e-6f);
    CHECK(fabsf(range - 3.0f / sqrtf(14.0f)) < 1e-6f);
    CHECK_EQ_LL(hnsw_vec_bytes(h), 3);
    float back[3];
    hnsw_vector(h, id, back);
    for (int i = 0; i < 3; i++) CHECK(fabsf(back[i] - v[i]) < 0.03f);
    hnsw_free(h);

    /* NOQUANT keeps the normalised floats. */
    h = hnsw_new(3, HNSW_QUANT_NONE, 16);
    insert_rows(h, s, v, 0, 1, &id);
    const float *f = hnsw_raw(h, id, &norm, &range);
    float l2 = sqrtf(1 + 4 + 9);
    for (int i = 0; i < 3; i++) CHECK(f[i] == v[i] / l2);
    CHECK(range == 0);
    CHECK_EQ_LL(hnsw_vec_bytes(h), 12);
    hnsw_vector(h, id, back);
    for (int i = 0; i < 3; i++) CHECK(fabsf(back[i] - v[i]) < 1e-5f);
    hnsw_free(h);

    /* BIN: one bit per positive component, 64-bit words, signs back. */
    h = hnsw_new(70, HNSW_QUANT_BIN, 16);
    float w[70];
    for (int i = 0; i < 70; i++) w[i] = (i % 3 == 0) ? 1.5f : -0.5f;
    insert_rows(h, s, w, 0, 1, &id);
    const uint64_t *bits = hnsw_raw(h, id, &norm, &range);
    CHECK_EQ_LL(hnsw_vec_bytes(h), 16);
    for (int i = 0; i < 70; i++) CHECK((int)((bits[i / 64] >> (i % 64)) & 1) == (i % 3 == 0));
    CHECK_EQ_LL(bits[1] >> 6, 0);
    float wb[70];
    hnsw_vector(h, id, wb);
    for (int i = 0; i < 70; i++) CHECK(wb[i] == (i % 3 == 0 ? 1.0f : -1.0f));
    hnsw_free(h);
    hnsw_searcher_free(s);
}

static void test_quant_error_bounds(void) {
    const uint32_t dim = 64, n = 300;
    float *v = clustered(n, dim, 10);
    struct hnsw *hq = hnsw_new(dim, HNSW_QUANT_Q8, 16);
    struct hnsw *hf = hnsw_new(dim, HNSW_QUANT_NONE, 16);
    struct hnsw *hb = hnsw_new(dim, HNSW_QUANT_BIN, 16);
    struct hnsw_searcher *s = hnsw_searcher_new();
    uint32_t *iq = malloc(n * 4), *iff = malloc(n * 4), *ib = malloc(n * 4);
    insert_rows(hq, s, v, 0, n, iq);
    insert_rows(hf, s, v, 0, n, iff);
    insert_rows(hb, s, v, 0, n, ib);
    double worst_cos = 0;
    for (uint32_t i = 0; i < n; i++) {
        float norm, range;
        const int8_t *q = hnsw_raw(hq, iq[i], &norm, &range);
        const float *f = hnsw_raw(hf, iff[i], NULL, NULL);
        float mx = 0;
        for (uint32_t j = 0; j < dim; j++) mx = fmaxf(mx, fabsf(f[j]));
        CHECK(fabsf(range - mx) < 1e-7f);
        for (uint32_t j = 0; j < dim; j++) {
            /* Rounding to the nearest step: at most half a step off. */
            float deq = q[j] * range / 127;
            CHECK(fabsf(deq - f[j]) <= range / 127 * 0.5f + 1e-6f);
            CHECK(q[j] >= -127 && q[j] <= 127);
        }
        /* BIN: the distance is the share of differing signs, times 2. */
        uint32_t o = (i * 7 + 3) % n;
        const float *g = hnsw_raw(hf, iff[o], NULL, NULL);
        uint32_t diff = 0;
        for (uint32_t j = 0; j < dim; j++) diff += (f[j] > 0) != (g[j] > 0);
        CHECK(hnsw_node_distance(hb, ib[i], ib[o]) == (float)diff * 2.0f / dim);
        /* Q8 tracks the float cosine distance closely. */
        double df = hnsw_node_distance(hf, iff[i], iff[o]), dq = hnsw_node_distance(hq, iq[i], iq[o]);
        double exact = 0;
        for (uint32_t j = 0; j < dim; j++) exact += (double)f[j] * g[j];
        CHECK(fabs(df - (1 - exact)) < 1e-5);
        if (fabs(dq - df) > worst_cos) worst_cos = fabs(dq - df);
        CHECK(dq >= 0 && dq <= 2);
    }
    CHECK(worst_cos < 0.02);
    free(iq), free(iff), free(ib), free(v);
    hnsw_free(hq), hnsw_free(hf), hnsw_free(hb);
    hnsw_searcher_free(s);
}

/* ---- search ---------------------------------------------------------------- */

static int accept_even(void *arg, uint32_t id, void *value) {
    (*(uint32_t *)arg)++;
    return ((uintptr_t)value & 1) == 0;
}

static void test_exact_small(void) {
    static const enum hnsw_quant qs[] = {HNSW_QUANT_NONE, HNSW_QUANT_Q8, HNSW_QUANT_BIN};
    for (int qi = 0; qi < 3; qi++) {
        const uint32_t dim = 24, n = 250;
        float *v = clustered(n, dim, 5);
        float *q = clustered(20, dim, 5);
        struct hnsw *h = hnsw_new(dim, qs[qi], 8);
        struct hnsw_searcher *s = hnsw_searcher_new();
        insert_rows(h, s, v, 0, n, NULL);
        CHECK_EQ_LL(hnsw_count(h), n);
        CHECK(graph_sound(h));
        struct hnsw_hit a[20], b[20];
        for (uint32_t i = 0; i < 20; i++) {
            uint32_t na = hnsw_search(h, s, q + i * dim, 20, n, NULL, NULL, 0, a);
            uint32_t nb = hnsw_search_exact(h, s, q + i * dim, 20, NULL, NULL, b);
            CHECK_EQ_LL(na, 20);
            CHECK_EQ_LL(nb, 20);
            for (uint32_t j = 0; j < 20; j++) {
                CHECK_EQ_LL(a[j].id, b[j].id);
                CHECK(a[j].dist == b[j].dist);
                if (j) CHECK(a[j - 1].dist <= a[j].dist);
            }
            /* Filtered: only even values, unbounded effort, ef >= n. */
            uint32_t calls = 0;
            na = hnsw_search(h, s, q + i * dim, 10, n, accept_even, &calls, 0, a);
            nb = hnsw_search_exact(h, s, q + i * dim, 10, accept_even, &calls, b);
            CHECK_EQ_LL(na, 10);
            CHECK_EQ_LL(na, nb);
            for (uint32_t j = 0; j < na && j < nb; j++) {
                CHECK_EQ_LL(a[j].id, b[j].id);
                CHECK((((uintptr_t)hnsw_value(h, a[j].id)) & 1) == 0);
            }
            /* max_tests = 1: the entry point alone is looked at. */
            calls = 0;
            na = hnsw_search(h, s, q + i * dim, 10, 50, accept_even, &calls, 1, a);
            CHECK(na <= 1);
            CHECK_EQ_LL(calls, 1);
            /* A bound limits the work; none = more work. */
            uint32_t bounded = 0, unbounded = 0;
            hnsw_search(h, s, q + i * dim, 10, 10, accept_even, &bounded, 3, a);
            hnsw_search(h, s, q + i * dim, 10, 10, accept_even, &unbounded, 0, a);
            CHECK(bounded <= unbounded);
        }
        /* k larger than the graph. */
        struct hnsw_hit *all = malloc((n + 5) * sizeof(*all));
        CHECK_EQ_LL(hnsw_search(h, s, q, n + 5, 10, NULL, NULL, 0, all), n);
        CHECK_EQ_LL(hnsw_search_exact(h, s, q, n + 5, NULL, NULL, all), n);
        CHECK_EQ_LL(hnsw_search(h, s, q, 0, 10, NULL, NULL, 0, all), 0);
        free(all);
        hnsw_searcher_free(s);
        hnsw_free(h);
        free(v), free(q);
    }
    /* An empty graph finds nothing. */
    struct hnsw *h = hnsw_new(4, HNSW_QUANT_Q8, 16);
    struct hnsw_searcher *s = hnsw_searcher_new();
    float q[4] = {1, 0, 0, 0};
    struct hnsw_hit hit;
    CHECK_EQ_LL(hnsw_search(h, s, q, 1, 10, NULL, NULL, 0, &hit), 0);
    CHECK_EQ_LL(hnsw_search_exact(h, s, q, 1, NULL, NULL, &hit), 0);
    CHECK_EQ_LL(hnsw_entry(h), HNSW_NONE);
    CHECK(hnsw_new(0, HNSW_QUANT_Q8, 16) == NULL);
    CHECK(hnsw_new(4, HNSW_QUANT_Q8, 3) == NULL);
    CHECK(hnsw_new(4, HNSW_QUANT_Q8, HNSW_MAX_M + 1) == NULL);
    CHECK(hnsw_new(4, (enum hnsw_quant)7, 16) == NULL);
    hnsw_free(h);
    hnsw_searcher_free(s);
}

static void test_recall(void) {
    const uint32_t dim = 32, n = 4000;
    float *v = clustered(n, dim, 40);
    float *q = clustered(100, dim, 40);
    struct hnsw *h = hnsw_new(dim, HNSW_QUANT_NONE, 16);
    struct hnsw_searcher *s = hnsw_searcher_new();
    insert_rows(h, s, v, 0, n, NULL);
    CHECK(graph_sound(h));
    double r10 = recall(h, s, q, 100, 10, 10), r100 = recall(h, s, q, 100, 10, 100);
    fprintf(stderr, "recall@10 n=%u: ef10 %.3f ef100 %.3f\n", n, r10, r100);
    CHECK(r100 >= 0.97);
    CHECK(r10 <= r100 + 0.01);
    hnsw_searcher_free(s);
    hnsw_free(h);
    free(v), free(q);
}

/* ---- deletion --------------------------------------------------------------- */

/* The share of deletes (percent) that may scan the whole graph (measured:
 * 0.2%, the entry point deletes included). */
#define SCAN_RATE_MAX_PCT 1

static void test_delete_keeps_recall(void) {
    const uint32_t dim = 32, n = 4000;
    float *v = clustered(n, dim, 40);
    float *q = clustered(200, dim, 40);
    struct hnsw *h = hnsw_new(dim, HNSW_QUANT_NONE, 16);
    struct hnsw_searcher *s = hnsw_searcher_new();
    uint32_t *ids = malloc(n * 4);
    insert_rows(h, s, v, 0, n, ids);
    /* Delete the odd rows, in a shuffled order, the entry point among them
     * at some point. */
    uint32_t *order = malloc(n / 2 * 4);
    for (uint32_t i = 0; i < n / 2; i++) order[i] = 2 * i + 1;
    for (uint32_t i = n / 2 - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(rnd64() % (i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    uint32_t entry_row = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] == hnsw_entry(h)) entry_row = i;
    if (entry_row % 2 == 0) delete_id(h, s, ids[entry_row]), ids[entry_row] = HNSW_NONE;
    for (uint32_t i = 0; i < n / 2; i++) delete_id(h, s, ids[order[i]]);
    CHECK(graph_sound(h));
    CHECK_EQ_LL(hnsw_count(h), n / 2 - (entry_row % 2 == 0));
    /* A fresh graph of what is left. */
    struct hnsw *f = hnsw_new(dim, HNSW_QUANT_NONE, 16);
    for (uint32_t i = 0; i < n; i += 2)
        if (ids[i] != HNSW_NONE) insert_rows(f, s, v, i, i + 1, NULL);
    for (uint32_t ef = 10; ef <= 80; ef *= 2) {
        double rd = recall(h, s, q, 200, 10, ef), rf = recall(f, s, q, 200, 10, ef);
        fprintf(stderr, "after deleting half, ef %u: recall %.3f, fresh graph %.3f\n", ef, rd, rf);
        CHECK(rd >= rf - 0.02);
    }
    /* Freed ids come back. */
    uint32_t bound = hnsw_id_bound(h);
    insert_rows(h, s, v, 1, 2, NULL);
    CHECK_EQ_LL(hnsw_id_bound(h), bound);
    CHECK(graph_sound(h));
    hnsw_free(f);
    hnsw_free(h);
    hnsw_searcher_free(s);
    free(v), free(q), free(ids), free(order);
}

/* Deletes find the lists holding the deleted node near it: few scan the
 * whole graph. Deleting the entry point always scans (it needs the highest
 * remaining node), so the counter is seen to count. */
static void test_delete_scan_rate(void) {
    const uint32_t dim = 32, n = 6000, dels = 3000;
    float *v = clustered(n, dim, 40);
    struct hnsw *h = hnsw_new(dim, HNSW_QUANT_NONE, 16);
    struct hnsw_searcher *s = hnsw_searcher_new();
    uint32_t *ids = malloc(n * 4);
    insert_rows(h, s, v, 0, n, ids);
    CHECK_EQ_LL(hnsw_delete_scans(h), 0);
    uint64_t before = hnsw_delete_scans(h);
    uint32_t entry = hnsw_entry(h);
    delete_id(h, s, entry);
    CHECK_EQ_LL(hnsw_delete_scans(h), before + 1);
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] == entry) ids[i] = HNSW_NONE;
    uint64_t entry_scans = 0;
    before = hnsw_delete_scans(h);
    for (uint32_t k = 0; k < dels; k++) {
        uint32_t i = (uint32_t)(rnd64() % n);
        while (ids[i] == HNSW_NONE) i = (uint32_t)(rnd64() % n);
        entry_scans += ids[i] == hnsw_entry(h);
        delete_id(h, s, ids[i]);
        ids[i] = HNSW_NONE;
    }
    uint64_t scans = hnsw_delete_scans(h) - before;
    fprintf(stderr, "deletes that scanned the graph: %llu of %u (%.1f%%)\n", (unsigned long long)scans, dels,
            100.0 * (double)scans / dels);
    CHECK(scans >= entry_scans);
    CHECK(scans * 100 <= (uint64_t)dels * SCAN_RATE_MAX_PCT);
    CHECK(graph_sound(h));
    hnsw_free(h);
    hnsw_searcher_free(s);
    free(v), free(ids);
}

static void test_delete_all_and_again(void) {
    static const enum hnsw_quant qs[] = {HNSW_QUANT_NONE, HNSW_QUANT_Q8, HNSW_QUANT_BIN};
    for (int qi = 0; qi < 3; qi++) {
        const uint32_t dim = 16, n = 300;
        float *v = clustered(n, dim, 4);
        struct hnsw *h = hnsw_new(dim, qs[qi], 6);
        struct hnsw_searcher *s = hnsw_searcher_new();
        uint32_t *ids = malloc(n * 4);
        for (int round = 0; round < 2; round++) {
            insert_rows(h, s, v, 0, n, ids);
            CHECK(graph_sound(h));
            for (uint32_t i = 0; i < n; i++) {
                delete_id(h, s, ids[(i * 37) % n]);
                if (i % 50 == 0) CHECK(graph_sound(h));
            }
            CHECK_EQ_LL(hnsw_count(h), 0);
            CHECK_EQ_LL(hnsw_entry(h), HNSW_NONE);
            CHECK_EQ_LL(hnsw_max_level(h), 0);
            struct hnsw_hit hit;
            CHECK_EQ_LL(hnsw_search(h, s, v, 1, 10, NULL, NULL, 0, &hit), 0);
        }
        /* One node, deleted, then another. */
        insert_rows(h, s, v, 0, 1, ids);
        CHECK_EQ_LL(hnsw_entry(h), ids[0]);
        delete_id(h, s, ids[0]);
        insert_rows(h, s, v, 1, 3, ids);
        CHECK_EQ_LL(hnsw_count(h), 2);
        CHECK(graph_sound(h));
        hnsw_free(h);
        hnsw_searcher_free(s);
        free(v), free(ids);
    }
}

/* ---- prepare / commit ------------------------------------------------------ */

static void test_prepare_commit_races(void) {
    const uint32_t dim = 16, n = 600;
    float *v = clustered(n, dim, 6);
    struct hnsw *h = hnsw_new(dim, HNSW_QUANT_Q8, 8);
    struct hnsw_searcher *s = hnsw_searcher_new(), *s2 = hnsw_searcher_new();
    uint32_t *ids = malloc(n * 4);

    /* A prepare on the empty graph, committed after another insert. */
    struct hnsw_insert a, b;
    hnsw_insert_init(&a);
    hnsw_insert_init(&b);
    hnsw_insert_prepare(h, s, v, 100, 1, &a);
    hnsw_insert_prepare(h, s2, v + dim, 100, 2, &b);
    uint32_t ia = hnsw_insert_commit(h, s, &a, NULL, 100);
    uint32_t ib = hnsw_insert_commit(h, s2, &b, NULL, 100);
    const uint32_t *lk;
    CHECK_EQ_LL(hnsw_links(h, ib, 0, &lk), 1);
    CHECK_EQ_LL(lk[0], ia);
    CHECK_EQ_LL(hnsw_links(h, ia, 0, &lk), 1);
    CHECK(graph_sound(h));
    delete_id(h, s, ia);
    delete_id(h, s, ib);

    insert_rows(h, s, v, 0, n / 2, ids);
    /* Prepares, then deletes of their likely candidates (and reuse of the
     * freed ids), then the commits. */
    for (uint32_t round = 0; round < 30; round++) {
        const float *x = v + (size_t)(n / 2 + round) * dim;
        hnsw_insert_prepare(h, s, x, 100, rnd64(), &a);
        struct hnsw_hit near[8];
        uint32_t k = hnsw_search(h, s2, x, 8, 20, NULL, NULL, 0, near);
        for (uint32_t j = 0; j < k; j += 2) delete_id(h, s2, near[j].id);
        if (round % 3 == 0) insert_rows(h, s2, v, round, round + 2, NULL);
        uint32_t id = hnsw_insert_commit(h, s, &a, NULL, 100);
        CHECK(hnsw_live(h, id));
        CHECK(graph_sound(h));
        CHECK(hnsw_links(h, id, 0, &lk) > 0);
    }
    /* A delete prepared, then a write in between: the commit replans. */
    struct hnsw_delete del = {0};
    uint32_t victim = hnsw_entry(h);
    hnsw_delete_prepare(h, s, victim, &del);
    insert_rows(h, s2, v, n - 2, n, NULL);
    hnsw_delete_commit(h, &del);
    CHECK(!hnsw_live(h, victim) || hnsw_entry(h) != victim);
    CHECK(graph_sound(h));
    /* A prepared delete dropped: the graph is untouched, nothing leaks. */
    uint32_t count = hnsw_count(h);
    hnsw_delete_prepare(h, s, hnsw_entry(h), &del);
    hnsw_delete_release(&del);
    hnsw_delete_release(&del);
    CHECK_EQ_LL(hnsw_count(h), count);
    CHECK(graph_sound(h));
    hnsw_insert_release(&a);
    hnsw_insert_release(&b);
    hnsw_free(h);
    hnsw_searcher_free(s);
    hnsw_searcher_free(s2);
    free(v), free(ids);
}

/* ---- serialised form ----------------------------------------------------------- */

static void fix_sum(unsigned char *p, size_t len) {
    uint64_t x = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i + 8 < len + 0 && i < len - 8; i++) x = (x ^ p[i]) * 0x100000001b3ULL;
    for (int i = 0; i < 8; i++) p[len - 8 + i] = (unsigned char)(x >> (8 * i));
}

static void test_save_load(void) {
    static const enum hnsw_quant qs[] = {HNSW_QUANT_NONE, HNSW_QUANT_Q8, HNSW_QUANT_BIN};
    for (int qi = 0; qi < 3; qi++) {
        const uint32_t dim = 20, n = 400;
        float *v = clustered(n, dim, 5);
        struct hnsw *h = hnsw_new(dim, qs[qi], 6);
        struct hnsw_searcher *s = hnsw_searcher_new();
        uint32_t *ids = malloc(n * 4);
        insert_rows(h, s, v, 0, n, ids);
        for (uint32_t i = 0; i < n; i += 5) delete_id(h, s, ids[i]);
        struct hk_buf b = {0};
        hnsw_save(h, &b);
        char err[128] = "";
        struct hnsw *g = hnsw_load(b.p, b.len, err, sizeof(err));
        CHECK(g != NULL);
        if (!g) {
            fprintf(stderr, "load: %s\n", err);
            continue;
        }
        CHECK_EQ_LL(hnsw_count(g), hnsw_count(h));
        CHECK_EQ_LL(hnsw_entry(g), hnsw_entry(h));
        CHECK_EQ_LL(hnsw_max_level(g), hnsw_max_level(h));
        CHECK(graph_sound(g));
        for (uint32_t id = 0; id < hnsw_id_bound(h); id++) {
            CHECK_EQ_LL(hnsw_live(g, id), hnsw_live(h, id));
            if (!hnsw_live(h, id)) continue;
            CHECK_EQ_LL(hnsw_level(g, id), hnsw_level(h, id));
            float n1, r1, n2, r2;
            const void *a1 = hnsw_raw(h, id, &n1, &r1), *a2 = hnsw_raw(g, id, &n2, &r2);
            CHECK(memcmp(a1, a2, hnsw_vec_bytes(h)) == 0 && n1 == n2 && r1 == r2);
            for (uint32_t l = 0; l <= hnsw_level(h, id); l++) {
                const uint32_t *l1, *l2;
                uint32_t c1 = hnsw_links(h, id, l, &l1), c2 = hnsw_links(g, id, l, &l2);
                CHECK(c1 == c2 && memcmp(l1, l2, c1 * 4) == 0);
            }
        }
        struct hnsw_hit r1[10], r2[10];
        for (uint32_t i = 0; i < 20; i++) {
            uint32_t k1 = hnsw_search(h, s, v + i * dim, 10, 30, NULL, NULL, 0, r1);
            uint32_t k2 = hnsw_search(g, s, v + i * dim, 10, 30, NULL, NULL, 0, r2);
            CHECK(k1 == k2 && memcmp(r1, r2, k1 * sizeof(r1[0])) == 0);
        }
        /* Saving the loaded graph gives the same bytes. */
        struct hk_buf b2 = {0};
        hnsw_save(g, &b2);
        CHECK(b2.len == b.len && memcmp(b.p, b2.p, b.len) == 0);
        /* The loaded graph takes inserts (reusing free ids) and deletes. */
        uint32_t bound = hnsw_id_bound(g);
        insert_rows(g, s, v, 0, 3, NULL);
        CHECK(hnsw_id_bound(g) <= bound);
        delete_id(g, s, hnsw_entry(g));
        CHECK(graph_sound(g));
        hnsw_free(g);

        /* Every truncation is refused. */
        unsigned char *c = malloc(b.len);
        for (size_t len = 0; len < b.len; len += (len < 64 ? 1 : 37)) {
            CHECK(hnsw_load(b.p, len, err, sizeof(err)) == NULL);
        }
        /* Every flipped byte is refused. */
        for (size_t pos = 0; pos < b.len; pos += (pos < 64 ? 1 : 11)) {
            memcpy(c, b.p, b.len);
            c[pos] ^= (unsigned char)(1 + rnd64() % 255);
            CHECK(hnsw_load(c, b.len, err, sizeof(err)) == NULL);
        }
        /* Structural damage with a correct checksum: caught by validation. */
        size_t first_node = 36, link0 = first_node + 16 + hnsw_vec_bytes(h) + 4;
        struct {
            size_t off;
            uint32_t val;
        } cases[] = {
            {8, 0},                 /* dim 0 */
            {12, 9},                /* quant */
            {16, 2},                /* M below the minimum */
            {20, 1u << 30},         /* sparse id bound */
            {24, 100000},           /* count past the data */
            {28, 99999},            /* entry point */
            {32, 17},               /* max level */
            {first_node, 1u << 20}, /* node id out of range */
            {first_node + 4, 40},   /* node level */
            {link0 - 4, 1000},      /* link count */
            {link0, 1u << 24},      /* link to nothing */
            {link0, 0},             /* link to a deleted node (id 0 was deleted) */
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            memcpy(c, b.p, b.len);
            uint32_t w = cases[i].val;
            memcpy(c + cases[i].off, &w, 4);
            fix_sum(c, b.len);
            err[0] = 0;
            struct hnsw *bad = hnsw_load(c, b.len, err, sizeof(err));
            CHECK(bad == NULL);
            CHECK(err[0] != 0);
            hnsw_free(bad);
        }
        /* Random garbage with a valid checksum. */
        for (int t = 0; t < 200; t++) {
            size_t len = 44 + rnd64() % 300;
            unsigned char *gb = malloc(len);
            for (size_t i = 0; i < len; i++) gb[i] = (unsigned char)rnd64();
            uint32_t hdr_words[9] = {0x47564b48u, 1, 1 + (uint32_t)(rnd64() % 8), (uint32_t)(rnd64() % 3),
                                     4 + (uint32_t)(rnd64() % 4), (uint32_t)(rnd64() % 6), (uint32_t)(rnd64() % 6),
                                     (uint32_t)(rnd64() % 6), (uint32_t)(rnd64() % 2)};
            memcpy(gb, hdr_words, 36);
            fix_sum(gb, len);
            struct hnsw *x = hnsw_load(gb, len, err, sizeof(err));
            if (x) CHECK(graph_sound(x));
            hnsw_free(x);
            free(gb);
        }
        free(c);
        hk_free(b.p);
        hk_free(b2.p);
        hnsw_free(h);
        hnsw_searcher_free(s);
        free(v), free(ids);
    }
    /* An empty graph round-trips. */
    struct hnsw *e = hnsw_new(5, HNSW_QUANT_Q8, 16);
    struct hk_buf b = {0};
    hnsw_save(e, &b);
    struct hnsw *e2 = hnsw_load(b.p, b.len, NULL, 0);
    CHECK(e2 && hnsw_count(e2) == 0 && hnsw_dim(e2) == 5 && hnsw_m(e2) == 16);
    hnsw_free(e), hnsw_free(e2);
    hk_free(b.p);
}

/* ---- projection ------------------------------------------------------------------ */

static void test_projection(void) {
    struct hnsw_proj *a = hnsw_proj_new(300, 40, 42), *b = hnsw_proj_new(300, 40, 42), *c = hnsw_proj_new(300, 40, 7);
    /* Redis's REDUCE may keep the dimension (a square matrix), never grow it. */
    CHECK(hnsw_proj_new(40, 41, 1) == NULL);
    struct hnsw_proj *sq = hnsw_proj_new(40, 40, 1);
    CHECK(sq != NULL);
    hnsw_proj_free(sq);
    CHECK(hnsw_proj_new(0, 0, 1) == NULL);
    float in[300], oa[40], ob[40], oc[40];
    double s1 = 0, s2 = 0;
    for (int t = 0; t < 50; t++) {
        for (int i = 0; i < 300; i++) in[i] = rndf();
        hnsw_proj_apply(a, in, oa);
        hnsw_proj_apply(b, in, ob);
        hnsw_proj_apply(c, in, oc);
        CHECK(memcmp(oa, ob, sizeof(oa)) == 0);
        CHECK(memcmp(oa, oc, sizeof(oa)) != 0);
    }
    /* Entries: +-1/sqrt(in_dim). Probe them through unit vectors; seed 0
     * is Redis's Walsh-Hadamard pattern exactly, other seeds flip column
     * signs (mean near zero). */
    struct hnsw_proj *z = hnsw_proj_new(300, 40, 0);
    const float scale = (float)(1.0 / sqrt(300.0));
    for (int i = 0; i < 300; i++) {
        memset(in, 0, sizeof(in));
        in[i] = 1;
        hnsw_proj_apply(a, in, oa);
        hnsw_proj_apply(z, in, oc);
        for (int j = 0; j < 40; j++) {
            s1 += oa[j];
            s2 += (double)oa[j] * oa[j];
            CHECK(fabsf(oa[j]) == scale);
            CHECK(oc[j] == ((__builtin_popcount((unsigned)(i & j)) & 1) ? -scale : scale));
        }
    }
    double mean = s1 / 12000, var = s2 / 12000 - mean * mean;
    CHECK(fabs(mean) < 0.003);
    CHECK(fabs(var * 300 - 1) < 0.01);
    /* A row's sum in column order (what Redis computes). */
    for (int i = 0; i < 300; i++) in[i] = rndf();
    hnsw_proj_apply(z, in, oc);
    for (int j = 0; j < 40; j++) {
        float sum = 0;
        for (int i = 0; i < 300; i++) sum += ((__builtin_popcount((unsigned)(i & j)) & 1) ? -scale : scale) * in[i];
        CHECK(oc[j] == sum);
    }
    hnsw_proj_free(z);
    CHECK(hnsw_proj_memory(a) >= 300 * 40 * sizeof(float));
    hnsw_proj_free(a), hnsw_proj_free(b), hnsw_proj_free(c);
}

/* ---- memory ------------------------------------------------------------------------ */

static void test_memory(void) {
    const uint32_t dim = 64, n = 3000;
    float *v = clustered(n, dim, 10);
    struct hnsw_searcher *s = hnsw_searcher_new();
    struct hnsw *h = hnsw_new(dim, HNSW_QUANT_NONE, 16);
    size_t empty = hnsw_memory(h);
    CHECK(empty > 0);
    uint32_t *ids = malloc(n * 4);
    insert_rows(h, s, v, 0, n, ids);
    size_t full = hnsw_memory(h);
    /* Record: 32 bytes of header, 32 links, 64 floats. */
    double per = (double)(full - empty) / n;
    fprintf(stderr, "memory: %.1f bytes per vector (dim 64, M 16, float32)\n", per);
    CHECK(per >= 32 + 128 + 256);
    CHECK(per < (32 + 128 + 256) * 1.1);
    for (uint32_t i = 0; i < n; i += 2) delete_id(h, s, ids[i]);
    /* Exact: freeing the graph returns what hnsw_memory reported. */
    size_t before = hk_used_memory(), reported = hnsw_memory(h);
    CHECK(hnsw_free_effort(h) >= 2);
    hnsw_free(h);
    CHECK_EQ_LL(before - hk_used_memory(), reported);
    hnsw_searcher_free(s);
    free(v), free(ids);
}

/* ---- threads ------------------------------------------------------------------------ */

struct mt {
    pthread_rwlock_t lock;
    struct hnsw *h;
    const float *v;
    uint32_t dim, n;
    int stop;
    int failures;
};

static void *mt_reader(void *arg) {
    struct mt *m = arg;
    struct hnsw_searcher *s = hnsw_searcher_new();
    struct hnsw_hit hits[10];
    uint64_t x = (uint64_t)(uintptr_t)&s;
    for (int i = 0; i < 400; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const float *q = m->v + (size_t)((x >> 33) % m->n) * m->dim;
        pthread_rwlock_rdlock(&m->lock);
        uint32_t k = hnsw_search(m->h, s, q, 10, 40, NULL, NULL, 0, hits);
        for (uint32_t j = 0; j < k; j++)
            if (!hnsw_live(m->h, hits[j].id) || (j && hits[j - 1].dist > hits[j].dist)) m->failures++;
        pthread_rwlock_unlock(&m->lock);
    }
    hnsw_searcher_free(s);
    return NULL;
}

static void *mt_writer(void *arg) {
    struct mt *m = arg;
    struct hnsw_searcher *s = hnsw_searcher_new();
    struct hnsw_insert ins;
    hnsw_insert_init(&ins);
    uint32_t *ids = malloc(m->n * 4);
    uint32_t have = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        /* Prepare under the read lock (beside the searches), commit under
         * the write lock, as the command layer does. */
        pthread_rwlock_rdlock(&m->lock);
        hnsw_insert_prepare(m->h, s, m->v + (size_t)i * m->dim, 100, i * 2654435761u, &ins);
        pthread_rwlock_unlock(&m->lock);
        pthread_rwlock_wrlock(&m->lock);
        ids[have++] = hnsw_insert_commit(m->h, s, &ins, NULL, 100);
        pthread_rwlock_unlock(&m->lock);
        if (i % 4 == 3) {
            struct hnsw_delete del = {0};
            uint32_t victim = ids[(i * 7) % have];
            /* The single writer: nothing else writes between the two. */
            pthread_rwlock_rdlock(&m->lock);
            int live = hnsw_live(m->h, victim);
            if (live) hnsw_delete_prepare(m->h, s, victim, &del);
            pthread_rwlock_unlock(&m->lock);
            if (live) {
                pthread_rwlock_wrlock(&m->lock);
                hnsw_delete_commit(m->h, &del);
                pthread_rwlock_unlock(&m->lock);
            }
        }
    }
    hnsw_insert_release(&ins);
    hnsw_searcher_free(s);
    free(ids);
    return NULL;
}

static void test_threads(void) {
    struct mt m = {.dim = 16, .n = 1500};
    pthread_rwlock_init(&m.lock, NULL);
    float *v = clustered(m.n, m.dim, 8);
    m.v = v;
    m.h = hnsw_new(m.dim, HNSW_QUANT_Q8, 8);
    /* Some nodes first, so the readers have something to find. */
    struct hnsw_searcher *s = hnsw_searcher_new();
    insert_rows(m.h, s, v, 0, 100, NULL);
    hnsw_searcher_free(s);
    pthread_t r[3], w;
    pthread_create(&w, NULL, mt_writer, &m);
    for (int i = 0; i < 3; i++) pthread_create(&r[i], NULL, mt_reader, &m);
    for (int i = 0; i < 3; i++) pthread_join(r[i], NULL);
    pthread_join(w, NULL);
    CHECK_EQ_LL(m.failures, 0);
    CHECK(graph_sound(m.h));
    hnsw_free(m.h);
    pthread_rwlock_destroy(&m.lock);
    free(v);
}

int main(void) {
    TEST_RUN(test_kernels);
    TEST_RUN(test_encoding_redis_bytes);
    TEST_RUN(test_quant_error_bounds);
    TEST_RUN(test_exact_small);
    TEST_RUN(test_recall);
    TEST_RUN(test_delete_keeps_recall);
    TEST_RUN(test_delete_scan_rate);
    TEST_RUN(test_delete_all_and_again);
    TEST_RUN(test_prepare_commit_races);
    TEST_RUN(test_save_load);
    TEST_RUN(test_projection);
    TEST_RUN(test_memory);
    TEST_RUN(test_threads);
    return TEST_REPORT();
}
