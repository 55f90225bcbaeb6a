/* hist.c - log-linear latency histogram; see hist.h. */
#include "hist.h"

#include <string.h>

void hist_init(struct hist *h) {
    memset(h, 0, sizeof(*h));
    h->min_ns = UINT64_MAX;
}

/* Bucket of v: exact below HIST_EXACT; above it, the exponent picks the
 * octave and the next HIST_SUB_BITS bits below the leading one the bucket. */
static int hist_index(uint64_t v) {
    if (v < HIST_EXACT) return (int)v;
    int e = 63 - __builtin_clzll(v);          /* 8 .. HIST_MAX_EXP-1 */
    int shift = e - HIST_SUB_BITS;
    int m = (int)(v >> shift) - (1 << HIST_SUB_BITS);
    return HIST_EXACT + (e - 8) * (1 << HIST_SUB_BITS) + m;
}

void hist_bucket_bounds(int i, uint64_t *lo, uint64_t *hi) {
    if (i < HIST_EXACT) {
        *lo = (uint64_t)i;
        *hi = (uint64_t)i + 1;
        return;
    }
    int k = i - HIST_EXACT;
    int e = 8 + k / (1 << HIST_SUB_BITS);
    uint64_t m = (uint64_t)(1 << HIST_SUB_BITS) + (uint64_t)(k % (1 << HIST_SUB_BITS));
    int shift = e - HIST_SUB_BITS;
    *lo = m << shift;
    *hi = (m + 1) << shift;
}

void hist_record(struct hist *h, uint64_t ns) {
    const uint64_t cap = (1ULL << HIST_MAX_EXP) - 1;
    if (ns > cap) {
        ns = cap;
        h->clamped++;
    }
    h->b[hist_index(ns)]++;
    h->count++;
    h->sum_ns += ns;
    if (ns < h->min_ns) h->min_ns = ns;
    if (ns > h->max_ns) h->max_ns = ns;
}

void hist_merge(struct hist *dst, const struct hist *src) {
    for (int i = 0; i < HIST_BUCKETS; i++) dst->b[i] += src->b[i];
    dst->count += src->count;
    dst->sum_ns += src->sum_ns;
    dst->clamped += src->clamped;
    if (src->min_ns < dst->min_ns) dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns) dst->max_ns = src->max_ns;
}

double hist_quantile(const struct hist *h, double q) {
    if (h->count == 0) return 0;
    if (q >= 1.0) return (double)h->max_ns;
    if (q < 0) q = 0;
    uint64_t rank = (uint64_t)(q * (double)h->count);
    if ((double)rank < q * (double)h->count) rank++;
    if (rank == 0) rank = 1;
    uint64_t seen = 0;
    for (int i = 0; i < HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen >= rank) {
            uint64_t lo, hi;
            hist_bucket_bounds(i, &lo, &hi);
            double mid = i < HIST_EXACT ? (double)lo : ((double)lo + (double)hi) / 2;
            /* Never report beyond what was seen. */
            if (mid > (double)h->max_ns) mid = (double)h->max_ns;
            if (mid < (double)h->min_ns) mid = (double)h->min_ns;
            return mid;
        }
    }
    return (double)h->max_ns;
}

double hist_mean(const struct hist *h) {
    return h->count ? (double)h->sum_ns / (double)h->count : 0;
}
