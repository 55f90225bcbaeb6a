/* engine_data.h - the data of the engine benchmark, shared by its C side
 * (HotKV's graph) and its C++ side (hnswlib): a deterministic clustered
 * set, queries from the same distribution, and the .fvecs/.ivecs files
 * they are exchanged through. Header-only, C and C++. */
#ifndef HK_ENGINE_DATA_H
#define HK_ENGINE_DATA_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline uint64_t ed_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline float ed_uniform(uint64_t *s) { return (float)((ed_next(s) >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f; }

static inline float ed_gauss(uint64_t *s) {
    double u1 = ((ed_next(s) >> 11) + 1) * (1.0 / 9007199254740992.0);
    double u2 = (ed_next(s) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* n points in `clusters` Gaussian clusters around uniform centres; the
 * centres come from `seed`, the points from `seed2`, so base and queries
 * share the centres. */
static inline float *ed_clustered(uint32_t n, uint32_t dim, uint32_t clusters, float spread, uint64_t seed,
                                  uint64_t seed2) {
    float *c = (float *)malloc((size_t)clusters * dim * sizeof(float));
    uint64_t s = seed;
    for (size_t i = 0; i < (size_t)clusters * dim; i++) c[i] = ed_uniform(&s);
    float *v = (float *)malloc((size_t)n * dim * sizeof(float));
    s = seed2;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = (uint32_t)(ed_next(&s) % clusters);
        for (uint32_t j = 0; j < dim; j++) v[(size_t)i * dim + j] = c[(size_t)k * dim + j] + spread * ed_gauss(&s);
    }
    free(c);
    return v;
}

static inline void ed_normalise(float *v, uint32_t n, uint32_t dim) {
    for (uint32_t i = 0; i < n; i++) {
        double s = 0;
        for (uint32_t j = 0; j < dim; j++) s += (double)v[(size_t)i * dim + j] * v[(size_t)i * dim + j];
        float inv = s > 0 ? (float)(1.0 / sqrt(s)) : 0.0f;
        for (uint32_t j = 0; j < dim; j++) v[(size_t)i * dim + j] *= inv;
    }
}

static inline int ed_write_vecs(const char *path, const void *data, uint32_t n, uint32_t dim) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    for (uint32_t i = 0; i < n; i++) {
        fwrite(&dim, 4, 1, f);
        fwrite((const char *)data + (size_t)i * dim * 4, 4, dim, f);
    }
    return fclose(f);
}

/* Read a .fvecs/.ivecs file: returns the rows, *n and *dim set. */
static inline void *ed_read_vecs(const char *path, uint32_t *n, uint32_t *dim) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint32_t d;
    if (fread(&d, 4, 1, f) != 1) {
        fclose(f);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint32_t rows = (uint32_t)(sz / (4 + 4 * (long)d));
    char *out = (char *)malloc((size_t)rows * d * 4);
    for (uint32_t i = 0; i < rows; i++) {
        uint32_t dd;
        if (fread(&dd, 4, 1, f) != 1 || dd != d || fread(out + (size_t)i * d * 4, 4, d, f) != d) {
            free(out);
            fclose(f);
            return NULL;
        }
    }
    fclose(f);
    *n = rows;
    *dim = d;
    return out;
}

#endif
