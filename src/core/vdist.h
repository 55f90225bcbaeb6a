/* vdist.h - distance kernels for the vector-set graph (hnsw.c).
 *
 * Three primitives over fixed-length arrays: the dot product of float32
 * vectors, the dot product of int8 vectors (as an exact int32), and the
 * number of differing bits of two bit strings. Each exists as a portable
 * scalar version and, on x86-64, as AVX2+FMA and AVX-512 versions compiled
 * with target attributes (the build itself has no -march); vd_kernels()
 * picks the best one the CPU has, once. This file knows nothing of graphs
 * or of the server. */
#ifndef HK_VDIST_H
#define HK_VDIST_H

#include <stddef.h>
#include <stdint.h>

struct vd_kernels {
    const char *name;
    float (*dot_f32)(const float *a, const float *b, uint32_t n);
    int32_t (*dot_i8)(const int8_t *a, const int8_t *b, uint32_t n);
    uint32_t (*hamming)(const uint64_t *a, const uint64_t *b, uint32_t words);
};

enum vd_level { VD_SCALAR = 0, VD_AVX2 = 1, VD_AVX512 = 2, VD_LEVELS = 3 };

/* The best kernel set this CPU runs (chosen on first call, thread-safe). */
const struct vd_kernels *vd_kernels(void);
/* The kernel set of one level, or NULL when the CPU (or the compiler)
 * lacks it: lets tests compare every available set with the scalar one. */
const struct vd_kernels *vd_kernels_at(enum vd_level level);

#endif
