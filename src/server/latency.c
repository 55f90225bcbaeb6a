/* latency.c - per-command latency histograms and the latency monitor.
 *
 * Histograms: every worker keeps one per command it ran (allocated on the
 * first call, written by that worker only with relaxed single-writer
 * stores), summed on read for INFO latencystats and LATENCY HISTOGRAM.
 * The bucket layout is HdrHistogram's with two significant digits over
 * 1 ns .. 1 s (observe.h), which is what Redis tracks, so percentiles and
 * the histogram's power-of-two rows read the same.
 *
 * The latency monitor keeps, per event name ("command", "fast-command",
 * "expire-cycle"), the worst latency of each of the last LAT_TS_LEN
 * seconds in which the event passed latency-monitor-threshold, plus the
 * all-time maximum. It is only touched past the threshold, under
 * lat_lock (a leaf lock). This file does not format replies. */
#include "observe.h"

#include "../core/alloc.h"
#include "../core/util.h"
#include "config.h"
#include "server.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

_Atomic long long obs_slow_ns = 10000 * 1000LL;

/* ---- histograms ------------------------------------------------------------- */

struct lat_hist *lat_hist_new(struct lat_hist *_Atomic *slots, int id) {
    struct lat_hist *h = hk_calloc(1, sizeof(*h));
    atomic_store_explicit(&slots[id], h, memory_order_release);
    return h;
}

_Atomic unsigned long long *lat_chunk_new(struct lat_hist *h, int c) {
    _Atomic unsigned long long *chunk = hk_calloc(LH_CHUNK, sizeof(*chunk));
    atomic_store_explicit(&h->chunk[c], chunk, memory_order_release);
    return chunk;
}

unsigned long long lat_hist_merge(int id, unsigned long long *counts) {
    memset(counts, 0, LH_COUNTS * sizeof(*counts));
    unsigned long long total = 0;
    for (int i = 0; i < server.nworkers; i++) {
        struct lat_hist *h = atomic_load_explicit(&server.workers[i].lathist[id], memory_order_acquire);
        if (!h) continue;
        for (int c = 0; c < LH_NCHUNKS; c++) {
            _Atomic unsigned long long *chunk = atomic_load_explicit(&h->chunk[c], memory_order_acquire);
            if (!chunk) continue;
            for (int j = 0; j < LH_CHUNK; j++) {
                unsigned long long n = atomic_load_explicit(&chunk[j], memory_order_relaxed);
                counts[c * LH_CHUNK + j] += n;
                total += n;
            }
        }
    }
    /* The sum of what was read: a reader racing a writer never reports
     * a total its buckets do not add up to. */
    return total;
}

long long lat_hist_percentile(const unsigned long long *counts, unsigned long long total, double p) {
    if (!total) return 0;
    if (p > 100.0) p = 100.0;
    unsigned long long want = (unsigned long long)(p / 100.0 * (double)total + 0.5);
    if (want < 1) want = 1;
    unsigned long long run = 0;
    for (int i = 0; i < LH_COUNTS; i++) {
        run += counts[i];
        if (run >= want) return p == 0.0 ? lh_lowest(i) : lh_highest(i);
    }
    return lh_highest(LH_COUNTS - 1);
}

void lat_hist_reset_worker(struct worker *w) {
    int total = commands_total();
    for (int id = 0; id < total; id++) {
        struct lat_hist *h = atomic_load_explicit(&w->lathist[id], memory_order_relaxed);
        if (!h) continue;
        for (int c = 0; c < LH_NCHUNKS; c++) {
            _Atomic unsigned long long *chunk = atomic_load_explicit(&h->chunk[c], memory_order_relaxed);
            if (chunk)
                for (int j = 0; j < LH_CHUNK; j++) atomic_store_explicit(&chunk[j], 0, memory_order_relaxed);
        }
    }
}

/* ---- latency-tracking-info-percentiles ------------------------------------- */

#define LAT_MAX_PCT 64
static pthread_mutex_t pct_lock = PTHREAD_MUTEX_INITIALIZER;
static double pct[LAT_MAX_PCT];
static int npct;

int lat_percentiles_set(const char *value, char *err, size_t errsize) {
    double v[LAT_MAX_PCT];
    int n = 0;
    const char *p = value;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        const char *end = p;
        while (*end && *end != ' ' && *end != '\t') end++;
        char tok[64];
        size_t len = (size_t)(end - p);
        char *stop = NULL;
        double d = 0;
        int range = 0;
        if (len < sizeof(tok)) {
            memcpy(tok, p, len);
            tok[len] = '\0';
            errno = 0;
            d = strtod(tok, &stop);
            /* Overflow and underflow to zero are not numbers (Redis's
             * string2d); a denormal result is. */
            range = errno == ERANGE && (isinf(d) || d == 0.0);
        }
        if (len >= sizeof(tok) || stop == tok || *stop || isnan(d) || range || n == LAT_MAX_PCT) {
            snprintf(err, errsize, "Invalid latency-tracking-info-percentiles parameters");
            return 0;
        }
        if (d < 0.0 || d > 100.0) {
            snprintf(err, errsize, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
            return 0;
        }
        v[n++] = d;
        p = end;
    }
    pthread_mutex_lock(&pct_lock);
    memcpy(pct, v, (size_t)n * sizeof(double));
    npct = n;
    pthread_mutex_unlock(&pct_lock);
    return 1;
}

int lat_info_percentiles(double *out, int max) {
    pthread_mutex_lock(&pct_lock);
    int n = npct < max ? npct : max;
    memcpy(out, pct, (size_t)n * sizeof(double));
    pthread_mutex_unlock(&pct_lock);
    return n;
}

/* "%f" without its trailing zeros (and point), as Redis prints these. */
void lat_fmt_percentile(char *buf, size_t size, double v) {
    int n = snprintf(buf, size, "%f", v);
    if (n <= 0 || (size_t)n >= size || !strchr(buf, '.')) return;
    while (n > 0 && buf[n - 1] == '0') buf[--n] = '\0';
    if (n > 0 && buf[n - 1] == '.') buf[--n] = '\0';
}

void lat_percentiles_get(char *buf, size_t size) {
    double v[LAT_MAX_PCT];
    int n = lat_info_percentiles(v, LAT_MAX_PCT);
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && off < size; i++) {
        char num[64];
        lat_fmt_percentile(num, sizeof(num), v[i]);
        off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? " " : "", num);
    }
}

/* ---- the latency monitor ---------------------------------------------------- */

static pthread_mutex_t lat_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lat_event events[LAT_MAX_EVENTS];
static int nevents;

static void latency_add(const char *event, long long ms) {
    if (ms > UINT32_MAX) ms = UINT32_MAX;
    int64_t now = (int64_t)time(NULL);
    pthread_mutex_lock(&lat_lock);
    struct lat_event *ev = NULL;
    for (int i = 0; i < nevents; i++)
        if (!strcmp(events[i].name, event)) {
            ev = &events[i];
            break;
        }
    if (!ev && nevents < LAT_MAX_EVENTS) {
        ev = &events[nevents++];
        memset(ev, 0, sizeof(*ev));
        snprintf(ev->name, sizeof(ev->name), "%s", event);
    }
    if (ev) {
        if ((uint32_t)ms > ev->max) ev->max = (uint32_t)ms;
        /* One sample per second: a second spike in the same second only
         * raises that second's sample. */
        struct lat_sample *prev = &ev->s[(ev->idx + LAT_TS_LEN - 1) % LAT_TS_LEN];
        if (prev->time == now) {
            if ((uint32_t)ms > prev->ms) prev->ms = (uint32_t)ms;
        } else {
            ev->s[ev->idx].time = now;
            ev->s[ev->idx].ms = (uint32_t)ms;
            ev->idx = (ev->idx + 1) % LAT_TS_LEN;
        }
    }
    pthread_mutex_unlock(&lat_lock);
}

void latency_sample_if_needed(const char *event, long long ms) {
    long long thr = CFG(latency_monitor_threshold);
    if (thr && ms >= thr) latency_add(event, ms);
}

int latency_events_copy(struct lat_event *out, int max) {
    pthread_mutex_lock(&lat_lock);
    int n = nevents < max ? nevents : max;
    memcpy(out, events, (size_t)n * sizeof(*out));
    pthread_mutex_unlock(&lat_lock);
    return n;
}

int latency_reset(const char *name, size_t len) {
    int resets = 0;
    pthread_mutex_lock(&lat_lock);
    for (int i = 0; i < nevents;) {
        if (!name || (strlen(events[i].name) == len && !strncasecmp(events[i].name, name, len))) {
            memmove(&events[i], &events[i + 1], (size_t)(nevents - i - 1) * sizeof(events[0]));
            nevents--;
            resets++;
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&lat_lock);
    return resets;
}

/* ---- the shared threshold ----------------------------------------------------- */

int observe_config_changed(char *err, size_t errsize) {
    long long sl = CFG(slowlog_log_slower_than), lt = CFG(latency_monitor_threshold);
    long long ns = LLONG_MAX;
    if (sl >= 0) ns = sl > LLONG_MAX / 1000 ? LLONG_MAX : sl * 1000;
    if (lt > 0) {
        long long lns = lt > LLONG_MAX / 1000000 ? LLONG_MAX : lt * 1000000;
        if (lns < ns) ns = lns;
    }
    atomic_store_explicit(&obs_slow_ns, ns, memory_order_relaxed);
    slowlog_trim();
    return 1;
}

void observe_slow(struct client *c, const struct command *cmd, long long nsec) {
    long long us = nsec / 1000;
    long long sl = CFG(slowlog_log_slower_than);
    if (sl >= 0 && us >= sl && !(cmd->flags & CMD_SKIP_SLOWLOG)) slowlog_push(c, cmd, us);
    latency_sample_if_needed((cmd->flags & CMD_FAST) ? "fast-command" : "command", us / 1000);
}
