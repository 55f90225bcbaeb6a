// hnswlib_bench.cc - hnswlib in-process on the data engine_bench wrote:
// the same M (16), ef_construction (200), cosine as inner product on
// normalised vectors (what hnswlib's 'cosine' space does), one thread.
// Prints lines in engine_bench's format.
#include <hnswlib/hnswlib.h>
#include <time.h>

#include <cstring>
#include <string>

#include "engine_data.h"

static double now(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    std::string dir = argv[1];
    uint32_t n, dim, nq, qdim, gn, gk;
    float *base = (float *)ed_read_vecs((dir + "/base.fvecs").c_str(), &n, &dim);
    float *query = (float *)ed_read_vecs((dir + "/query.fvecs").c_str(), &nq, &qdim);
    int32_t *gt = (int32_t *)ed_read_vecs((dir + "/gt.ivecs").c_str(), &gn, &gk);
    if (!base || !query || !gt || qdim != dim || gk != 10) return 1;
    ed_normalise(base, n, dim);
    ed_normalise(query, nq, dim);
    hnswlib::InnerProductSpace space(dim);
    auto *g = new hnswlib::HierarchicalNSW<float>(&space, n, 16, 200, 100);
    double c0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
    for (uint32_t i = 0; i < n; i++) g->addPoint(base + (size_t)i * dim, i);
    double cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0, wall = now(CLOCK_MONOTONIC) - w0;
    // Bytes per vector: the level-0 record (links, vector, label) plus the
    // upper-level lists actually allocated; hnswlib also keeps a level, a
    // list pointer, a mutex and a label-map entry per element (printed
    // apart as extra_bytes_per_vec).
    size_t upper = 0;
    for (uint32_t i = 0; i < n; i++) upper += g->element_levels_[i] * g->size_links_per_element_;
    double rec = g->size_data_per_element_ + (double)upper / n;
    double extra = sizeof(int) + sizeof(char *) + sizeof(std::mutex) + 32;
    printf("hnswlib NOQUANT n=%u dim=%u insert_per_s=%.0f build_s=%.2f bytes_per_vec=%.1f extra_bytes_per_vec=%.0f\n", n,
           dim, n / cpu, wall, rec, extra);
    static const uint32_t efs[] = {10, 20, 40, 80, 150, 300, 500};
    for (uint32_t ef : efs) {
        g->setEf(ef);
        for (uint32_t i = 0; i < nq && i < 50; i++) g->searchKnn(query + (size_t)i * dim, 10);
        // The best of 3 timed passes, as engine_bench does.
        uint32_t found = 0;
        double t = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            found = 0;
            double t0 = now(CLOCK_THREAD_CPUTIME_ID);
            for (uint32_t i = 0; i < nq; i++) {
                auto r = g->searchKnn(query + (size_t)i * dim, 10);
                while (!r.empty()) {
                    for (int b = 0; b < 10; b++)
                        if ((int32_t)r.top().second == gt[(size_t)i * 10 + b]) {
                            found++;
                            break;
                        }
                    r.pop();
                }
            }
            double dt = now(CLOCK_THREAD_CPUTIME_ID) - t0;
            if (dt < t) t = dt;
        }
        printf("hnswlib NOQUANT ef=%u recall=%.4f us_per_query=%.2f\n", ef, (double)found / (nq * 10.0), t / nq * 1e6);
    }
    delete g;
    free(base);
    free(query);
    free(gt);
    return 0;
}
