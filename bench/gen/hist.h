/* hist.h - latency histogram of the load generator.
 *
 * Log-linear buckets over nanoseconds, in the manner of HdrHistogram:
 * values below 256 ns are counted exactly, and above that every power of
 * two is split into 128 equal buckets, so a bucket is never wider than
 * 1/128 of its lower bound. A percentile is reported as the middle of its
 * bucket, which keeps the relative error under 0.4% (the issue asks for 1%)
 * from 1 us up to the 2^37 ns (about 137 s) cap. Recording is a few shifts
 * and one increment; a histogram is 31 KiB and owned by one thread, and
 * threads' histograms are merged once at the end. */
#ifndef HB_HIST_H
#define HB_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_EXACT 256                 /* 2 << HIST_SUB_BITS values kept exactly */
#define HIST_MAX_EXP 37                /* values are clamped below 2^37 ns */
#define HIST_BUCKETS (HIST_EXACT + (HIST_MAX_EXP - 8) * (1 << HIST_SUB_BITS))

struct hist {
    uint64_t count;
    uint64_t sum_ns;
    uint64_t min_ns, max_ns;
    uint64_t clamped;                  /* values recorded at the cap */
    uint64_t b[HIST_BUCKETS];
};

void hist_init(struct hist *h);
void hist_record(struct hist *h, uint64_t ns);
/* Add every count of src into dst. */
void hist_merge(struct hist *dst, const struct hist *src);
/* Value at quantile q in [0,1], in nanoseconds: the middle of the bucket that
 * holds the ceil(q * count)-th smallest value (exact max for q == 1). 0 when
 * empty. */
double hist_quantile(const struct hist *h, double q);
double hist_mean(const struct hist *h);
/* Bounds of bucket i in nanoseconds: [lo, hi). */
void hist_bucket_bounds(int i, uint64_t *lo, uint64_t *hi);

#endif
