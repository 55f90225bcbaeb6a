/* test_vsetval.c - unit tests of the vector set value (src/types/vset.c):
 * the name table, writer tickets applied in order (including an insert
 * prepared before an earlier writer's turn), updates and removals, the
 * serialised form read back into the very same set (same links, same
 * search results, same digest), corrupt serialised bytes refused without
 * reading past them, and the type-table lifecycle (dup, usage, digest,
 * free with a reference still held). */
#include "core/alloc.h"
#include "core/buf.h"
#include "core/util.h"
#include "test.h"
#include "types/digest.h"
#include "types/kv.h"
#include "types/types.h"
#include "types/vset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIM 12

static void rand_vec(float *v, unsigned *seed) {
    for (int i = 0; i < DIM; i++) v[i] = (float)rand_r(seed) / (float)RAND_MAX - 0.5f;
}

/* VADD's path for one element, as the command layer runs it. */
static struct velem *add(struct vset *vs, const char *name, const float *v, const char *attr) {
    struct velem *el = vset_find(vs, name, strlen(name));
    int existed = el != NULL;
    char *a = NULL;
    if (attr) {
        a = hk_malloc(strlen(attr));
        memcpy(a, attr, strlen(attr));
    }
    uint32_t alen = attr ? (uint32_t)strlen(attr) : 0;
    /* A new element gets its attributes with its name, an update at its
     * commit. */
    if (!el) el = vset_add_name(vs, name, strlen(name), a, alen);
    float buf[DIM];
    vset_project(vs, v, buf);
    vset_apply_add(vs, vset_ticket(vs), el, existed, buf, 100, existed && attr != NULL, existed ? a : NULL, alen);
    return el;
}

static void rem(struct vset *vs, const char *name) {
    struct velem *el = vset_find(vs, name, strlen(name));
    CHECK(el != NULL);
    if (!el) return;
    vset_remove_name(vs, el);
    vset_apply_remove(vs, vset_ticket(vs), el);
}

static struct vset *filled(int n, unsigned seed) {
    struct vset *vs = vset_new(DIM, 0, HNSW_QUANT_Q8, 8);
    float v[DIM];
    char name[32];
    for (int i = 0; i < n; i++) {
        rand_vec(v, &seed);
        snprintf(name, sizeof(name), "e%d", i);
        add(vs, name, v, i % 3 ? NULL : "{\"i\":1}");
    }
    return vs;
}

static void test_names_and_changes(void) {
    struct vset *vs = filled(50, 1);
    CHECK_EQ_LL(vset_card(vs), 50);
    CHECK_EQ_LL(hnsw_count(vs->g), 50);
    CHECK_EQ_LL(vs->nattr, 17);
    struct velem *el = vset_find(vs, "e7", 2);
    CHECK(el && el->id != HNSW_NONE && hnsw_value(vs->g, el->id) == el);
    /* An update replaces the node and keeps the attributes. */
    float v[DIM] = {1};
    uint32_t before = hnsw_count(vs->g);
    add(vs, "e3", v, NULL);
    el = vset_find(vs, "e3", 2);
    CHECK(el->attr && el->alen == 7);
    CHECK_EQ_LL(hnsw_count(vs->g), before);
    float back[DIM];
    hnsw_vector(vs->g, el->id, back);
    CHECK(back[0] > 0.99f && back[1] == 0.0f);
    /* Removal drops the node and its attributes. */
    rem(vs, "e3");
    CHECK(vset_find(vs, "e3", 2) == NULL);
    CHECK_EQ_LL(vset_card(vs), 49);
    CHECK_EQ_LL(hnsw_count(vs->g), 49);
    CHECK_EQ_LL(vs->nattr, 16);
    /* VSETATTR's path: remove, then set. */
    el = vset_find(vs, "e0", 2);
    vset_apply_setattr(vs, vset_ticket(vs), el, NULL, 0);
    CHECK(el->attr == NULL);
    CHECK_EQ_LL(vs->nattr, 15);
    char *a = hk_malloc(2);
    memcpy(a, "{}", 2);
    vset_apply_setattr(vs, vset_ticket(vs), el, a, 2);
    CHECK_EQ_LL(vs->nattr, 16);
    /* Samples are distinct members. */
    struct velem *out[49];
    size_t got = vset_sample(vs, 10, out);
    CHECK_EQ_LL(got, 10);
    for (size_t i = 0; i < got; i++)
        for (size_t j = 0; j < i; j++) CHECK(out[i] != out[j]);
    CHECK_EQ_LL(vset_sample(vs, 40, out), 40);
    CHECK_EQ_LL(vset_sample(vs, 100, out), 49);
    vset_unref(vs);
}

static void test_tickets_apply_in_order(void) {
    /* Writer 0 takes its ticket, then writer 1 (a fresh insert) prepares
     * and waits: it cannot link in before writer 0 is done. Run here
     * without threads by giving the turns away in order. */
    struct vset *vs = filled(5, 2);
    uint64_t t0 = vset_ticket(vs);
    vset_turn_wait(vs, t0);
    vset_turn_done(vs);
    vset_quiesce(vs);
    CHECK_EQ_LL(vs->tserve, vs->tnext);
    vset_unref(vs);
}

static void test_serialised_form_round_trip(void) {
    struct vset *vs = filled(300, 3);
    for (int i = 0; i < 300; i += 4) {
        char name[32];
        snprintf(name, sizeof(name), "e%d", i);
        rem(vs, name);
    }
    struct hk_buf b = {0};
    vset_save(vs, &b);
    char err[128];
    struct vset *back = vset_load(b.p, b.len, err, sizeof(err));
    CHECK(back != NULL);
    if (!back) {
        fprintf(stderr, "load: %s\n", err);
        return;
    }
    CHECK_EQ_LL(vset_card(back), vset_card(vs));
    CHECK_EQ_LL(back->nattr, vs->nattr);
    CHECK_EQ_LL(hnsw_max_level(back->g), hnsw_max_level(vs->g));
    CHECK_EQ_LL(hnsw_entry(back->g), hnsw_entry(vs->g));
    /* Same nodes, same links, same elements. */
    struct ht_iter it;
    ht_iter_init(&it, &vs->names);
    for (struct hnode *n; (n = ht_iter_next(&it));) {
        const struct velem *a = (const struct velem *)n;
        struct velem *o = vset_find(back, a->name, a->nlen);
        CHECK(o != NULL);
        if (!o) continue;
        CHECK_EQ_LL(o->id, a->id);
        CHECK(a->alen == o->alen && (!a->attr || memcmp(a->attr, o->attr, a->alen) == 0));
        CHECK_EQ_LL(hnsw_level(back->g, o->id), hnsw_level(vs->g, a->id));
        for (uint32_t l = 0; l <= hnsw_level(vs->g, a->id); l++) {
            const uint32_t *x, *y;
            uint32_t nx = hnsw_links(vs->g, a->id, l, &x), ny = hnsw_links(back->g, o->id, l, &y);
            CHECK(nx == ny && memcmp(x, y, nx * sizeof(*x)) == 0);
        }
    }
    /* Same answers to the same search. */
    unsigned seed = 9;
    float q[DIM];
    struct hnsw_hit h1[10], h2[10];
    for (int t = 0; t < 20; t++) {
        rand_vec(q, &seed);
        uint32_t n1 = hnsw_search(vs->g, vset_searcher(), q, 10, 40, NULL, NULL, 0, h1);
        uint32_t n2 = hnsw_search(back->g, vset_searcher(), q, 10, 40, NULL, NULL, 0, h2);
        CHECK(n1 == n2 && memcmp(h1, h2, n1 * sizeof(*h1)) == 0);
    }
    /* The type table: a copy digests the same, and usage counts the graph. */
    struct kv *e = vset_entry("k", 1, vs), *e2 = vset_entry("k", 1, back);
    unsigned char d1[20] = {0}, d2[20] = {0};
    vset_type_ops.digest(e, d1);
    vset_type_ops.digest(e2, d2);
    CHECK(memcmp(d1, d2, 20) == 0);
    struct kv *copy = vset_type_ops.dup(e, "c", 1, -1);
    unsigned char d3[20] = {0};
    vset_type_ops.digest(copy, d3);
    CHECK(memcmp(d1, d3, 20) == 0);
    CHECK(vset_type_ops.usage(e, 0) > hnsw_memory(vs->g));
    /* Freeing costs one allocation per element, plus the graph. */
    CHECK_EQ_LL(kv_free_effort(e), (long long)vset_card(vs) + 1);
    kv_free(copy);
    kv_free(e2);
    /* A reference still held keeps the set alive after its key goes. */
    vset_ref(vs);
    kv_free(e);
    CHECK_EQ_LL(vset_card(vs), 225);
    vset_unref(vs);
    hk_free(b.p);
}

static void test_corrupt_serialised_form(void) {
    struct vset *vs = filled(40, 4);
    struct hk_buf b = {0};
    vset_save(vs, &b);
    vset_unref(vs);
    char err[128];
    /* Every truncation is refused. */
    for (size_t len = 0; len < b.len; len++) {
        char *cut = malloc(len ? len : 1);
        memcpy(cut, b.p, len);
        struct vset *x = vset_load(cut, len, err, sizeof(err));
        CHECK(x == NULL);
        if (x) vset_unref(x);
        free(cut);
    }
    /* Random byte flips: refused, or read back into a well-formed set. */
    unsigned seed = 5;
    char *m = malloc(b.len);
    for (int t = 0; t < 3000; t++) {
        memcpy(m, b.p, b.len);
        int flips = 1 + rand_r(&seed) % 4;
        for (int f = 0; f < flips; f++) m[rand_r(&seed) % b.len] ^= (char)(1 + rand_r(&seed) % 255);
        struct vset *x = vset_load(m, b.len, err, sizeof(err));
        if (x) {
            CHECK_EQ_LL(hnsw_count(x->g), vset_card(x));
            float q[DIM] = {1, 2, 3};
            struct hnsw_hit h[5];
            hnsw_search(x->g, vset_searcher(), q, 5, 20, NULL, NULL, 0, h);
            vset_unref(x);
        }
    }
    /* Trailing garbage is refused too. */
    char *longer = malloc(b.len + 1);
    memcpy(longer, b.p, b.len);
    longer[b.len] = 0;
    CHECK(vset_load(longer, b.len + 1, err, sizeof(err)) == NULL);
    free(longer);
    free(m);
    hk_free(b.p);
}

static void test_reduce(void) {
    struct vset *vs = vset_new(64, 8, HNSW_QUANT_NONE, 16);
    CHECK(vs->proj != NULL);
    CHECK_EQ_LL(vs->dim, 8);
    float in[64], a[8], b[8];
    for (int i = 0; i < 64; i++) in[i] = (float)i / 64.0f;
    vset_project(vs, in, a);
    struct vset *vs2 = vset_new(64, 8, HNSW_QUANT_NONE, 16);
    vset_project(vs2, in, b);
    CHECK(memcmp(a, b, sizeof(a)) == 0);
    vset_unref(vs);
    vset_unref(vs2);
}

/* A set is projected exactly when it was made with REDUCE: vset_project,
 * VSIM, VADD's checks and vset_save all read vs->proj to tell. A REDUCE
 * whose matrix is past VSET_MAX_PROJ makes no set at all (VADD refuses it
 * first), rather than a set with dim != in_dim and no projection, whose
 * own serialised form vset_load would refuse. One at the limit is whole. */
static void test_reduce_beyond_the_matrix_limit(void) {
    CHECK(vset_new(65536, 32769, HNSW_QUANT_Q8, 16) == NULL);
    CHECK(vset_new(8, 9, HNSW_QUANT_Q8, 16) == NULL);
    struct vset *vs = vset_new(8192, 8192, HNSW_QUANT_Q8, 16);
    CHECK(vs != NULL && vs->proj != NULL);
    struct hk_buf b = {0};
    vset_save(vs, &b);
    char err[128];
    struct vset *back = vset_load(b.p, b.len, err, sizeof(err));
    CHECK(back != NULL);
    if (back) vset_unref(back);
    hk_free(b.p);
    vset_unref(vs);
}

/* A header that claims a projection the loader cannot build (the same
 * matrix limit) must be refused, not read into a set with no projection
 * whose dimensions disagree. */
static void test_corrupt_header_claims_an_impossible_projection(void) {
    struct vset *vs = vset_new(32769, 0, HNSW_QUANT_Q8, 16);
    struct hk_buf b = {0};
    vset_save(vs, &b);
    vset_unref(vs);
    /* magic (4), version, quant, has_proj, then in_dim (little endian). */
    b.p[6] = 1;
    uint32_t in = 65536;
    for (int i = 0; i < 4; i++) b.p[7 + i] = (char)(in >> (8 * i));
    char err[128];
    struct vset *x = vset_load(b.p, b.len, err, sizeof(err));
    CHECK(x == NULL || x->proj != NULL);
    if (x) vset_unref(x);
    hk_free(b.p);
}

int main(void) {
    TEST_RUN(test_names_and_changes);
    TEST_RUN(test_tickets_apply_in_order);
    TEST_RUN(test_serialised_form_round_trip);
    TEST_RUN(test_corrupt_serialised_form);
    TEST_RUN(test_reduce);
    TEST_RUN(test_reduce_beyond_the_matrix_limit);
    TEST_RUN(test_corrupt_header_claims_an_impossible_projection);
    return TEST_REPORT();
}
