/* vdist.c - the scalar, AVX2 and AVX-512 distance kernels and their run
 * time choice. The vector paths are compiled per function with target
 * attributes, so the rest of the build keeps its plain -O2; a function is
 * only called after __builtin_cpu_supports said the CPU has its features.
 * All versions give the same integer results; float sums differ only in
 * rounding (another summation order). */
#include "vdist.h"

#include <pthread.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VD_X86 1
#include <immintrin.h>
#endif

/* ---- scalar ------------------------------------------------------------- */

static float dot_f32_scalar(const float *a, const float *b, uint32_t n) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

static int32_t dot_i8_scalar(const int8_t *a, const int8_t *b, uint32_t n) {
    int32_t s0 = 0, s1 = 0;
    uint32_t i = 0;
    for (; i + 2 <= n; i += 2) {
        s0 += (int32_t)a[i] * b[i];
        s1 += (int32_t)a[i + 1] * b[i + 1];
    }
    if (i < n) s0 += (int32_t)a[i] * b[i];
    return s0 + s1;
}

/* Bit count without the popcnt instruction (SWAR). */
static uint32_t popcount_swar(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (uint32_t)((x * 0x0101010101010101ULL) >> 56);
}

static uint32_t hamming_scalar(const uint64_t *a, const uint64_t *b, uint32_t words) {
    uint32_t c = 0;
    for (uint32_t i = 0; i < words; i++) c += popcount_swar(a[i] ^ b[i]);
    return c;
}

static const struct vd_kernels k_scalar = {"scalar", dot_f32_scalar, dot_i8_scalar, hamming_scalar};

#ifdef VD_X86
/* ---- AVX2 + FMA ---------------------------------------------------------- */

__attribute__((target("avx2,fma"))) static float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) static float dot_f32_avx2(const float *a, const float *b, uint32_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    float s = hsum256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

__attribute__((target("avx2"))) static int32_t hsum256_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

__attribute__((target("avx2"))) static int32_t dot_i8_avx2(const int8_t *a, const int8_t *b, uint32_t n) {
    __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256i y0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i)));
        __m256i x1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i + 16)));
        __m256i y1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i + 16)));
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(x0, y0));
        s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(x1, y1));
    }
    for (; i + 16 <= n; i += 16) {
        __m256i x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256i y0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i)));
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(x0, y0));
    }
    int32_t s = hsum256_epi32(_mm256_add_epi32(s0, s1));
    for (; i < n; i++) s += (int32_t)a[i] * b[i];
    return s;
}

__attribute__((target("popcnt"))) static uint32_t hamming_popcnt(const uint64_t *a, const uint64_t *b,
                                                                  uint32_t words) {
    uint64_t c0 = 0, c1 = 0;
    uint32_t i = 0;
    for (; i + 2 <= words; i += 2) {
        c0 += (uint64_t)__builtin_popcountll(a[i] ^ b[i]);
        c1 += (uint64_t)__builtin_popcountll(a[i + 1] ^ b[i + 1]);
    }
    if (i < words) c0 += (uint64_t)__builtin_popcountll(a[i] ^ b[i]);
    return (uint32_t)(c0 + c1);
}

static const struct vd_kernels k_avx2 = {"avx2", dot_f32_avx2, dot_i8_avx2, hamming_popcnt};

/* ---- AVX-512 (F + BW) ---------------------------------------------------- */

__attribute__((target("avx512f,avx512bw"))) static float dot_f32_avx512(const float *a, const float *b,
                                                                         uint32_t n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    if (i < n) {
        /* The tail through a masked load: no read past the end. */
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

__attribute__((target("avx512f,avx512bw"))) static int32_t dot_i8_avx512(const int8_t *a, const int8_t *b,
                                                                          uint32_t n) {
    __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
    uint32_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512i x0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(a + i)));
        __m512i y0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(b + i)));
        __m512i x1 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(a + i + 32)));
        __m512i y1 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(b + i + 32)));
        s0 = _mm512_add_epi32(s0, _mm512_madd_epi16(x0, y0));
        s1 = _mm512_add_epi32(s1, _mm512_madd_epi16(x1, y1));
    }
    if (i + 32 <= n) {
        __m512i x = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(a + i)));
        __m512i y = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(b + i)));
        s0 = _mm512_add_epi32(s0, _mm512_madd_epi16(x, y));
        i += 32;
    }
    int32_t s = _mm512_reduce_add_epi32(_mm512_add_epi32(s0, s1));
    for (; i < n; i++) s += (int32_t)a[i] * b[i];
    return s;
}

static const struct vd_kernels k_avx512 = {"avx512", dot_f32_avx512, dot_i8_avx512, hamming_popcnt};
#endif

/* ---- choice --------------------------------------------------------------- */

static int cpu_has(enum vd_level level) {
#ifdef VD_X86
    __builtin_cpu_init();
    if (level == VD_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("popcnt");
    if (level == VD_AVX2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("popcnt");
#endif
    return level == VD_SCALAR;
}

const struct vd_kernels *vd_kernels_at(enum vd_level level) {
    if (!cpu_has(level)) return NULL;
#ifdef VD_X86
    if (level == VD_AVX512) return &k_avx512;
    if (level == VD_AVX2) return &k_avx2;
#endif
    return &k_scalar;
}

static const struct vd_kernels *chosen;
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;

static void choose(void) {
    for (int l = VD_LEVELS - 1; l >= 0; l--) {
        const struct vd_kernels *k = vd_kernels_at((enum vd_level)l);
        if (k) {
            chosen = k;
            return;
        }
    }
}

const struct vd_kernels *vd_kernels(void) {
    pthread_once(&chosen_once, choose);
    return chosen;
}
