/* observe.c - SLOWLOG, LATENCY and MONITOR, and INFO's latencystats
 * section: the replies over what src/server/slowlog.c, latency.c and
 * monitor.c record (src/server/observe.h). Nothing here records. */
#include "../core/alloc.h"
#include "../server/config.h"
#include "../server/observe.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- SLOWLOG --------------------------------------------------------------- */

static void slowlog_entry_reply(void *arg, const struct slowlog_entry *e, long long n) {
    struct cmd_ctx *c = arg;
    if (!e) {
        reply_array(c, n);
        return;
    }
    reply_array(c, 6);
    reply_int(c, e->id);
    reply_int(c, e->time);
    reply_int(c, e->duration_us);
    reply_array(c, e->argc);
    for (int i = 0; i < e->argc; i++) reply_bulk(c, e->argv[i].ptr, e->argv[i].len);
    reply_bulk_cstr(c, e->peer);
    reply_bulk_cstr(c, e->name);
}

/* SLOWLOG GET [count]: newest first; -1 is everything. */
void cmd_slowlog_get(struct cmd_ctx *c) {
    if (c->argc > 3) {
        reply_subcommand_error(c);
        return;
    }
    long long count = 10;
    if (c->argc == 3 && (!hk_str2ll(c->argv[2].ptr, c->argv[2].len, &count) || count < -1)) {
        reply_error(c, "ERR count should be greater than or equal to -1");
        return;
    }
    slowlog_visit(count, slowlog_entry_reply, c);
}

void cmd_slowlog_len(struct cmd_ctx *c) { reply_int(c, slowlog_len()); }

void cmd_slowlog_reset(struct cmd_ctx *c) {
    slowlog_reset();
    reply_ok(c);
}

void cmd_slowlog_help(struct cmd_ctx *c) {
    static const char *const lines[] = {
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        NULL,
    };
    reply_help(c, "SLOWLOG", lines);
}

/* ---- LATENCY: events ----------------------------------------------------------- */

static struct lat_event *events_copy(int *n) {
    struct lat_event *ev = hk_malloc(LAT_MAX_EVENTS * sizeof(*ev));
    *n = latency_events_copy(ev, LAT_MAX_EVENTS);
    return ev;
}

static struct lat_event *event_find(struct lat_event *ev, int n, const hk_slice *name) {
    for (int i = 0; i < n; i++)
        if (strlen(ev[i].name) == name->len && !memcmp(ev[i].name, name->ptr, name->len)) return &ev[i];
    return NULL;
}

/* LATENCY LATEST: per event its latest sample and the all-time high. */
void cmd_latency_latest(struct cmd_ctx *c) {
    int n;
    struct lat_event *ev = events_copy(&n);
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        const struct lat_sample *last = &ev[i].s[(ev[i].idx + LAT_TS_LEN - 1) % LAT_TS_LEN];
        reply_array(c, 4);
        reply_bulk_cstr(c, ev[i].name);
        reply_int(c, last->time);
        reply_int(c, last->ms);
        reply_int(c, ev[i].max);
    }
    hk_free(ev);
}

/* LATENCY HISTORY event: its samples, oldest first. */
void cmd_latency_history(struct cmd_ctx *c) {
    int n;
    struct lat_event *ev = events_copy(&n);
    struct lat_event *e = event_find(ev, n, &c->argv[2]);
    if (!e) {
        reply_array(c, 0);
        hk_free(ev);
        return;
    }
    int k = 0;
    for (int j = 0; j < LAT_TS_LEN; j++)
        if (e->s[j].time) k++;
    reply_array(c, k);
    for (int j = 0; j < LAT_TS_LEN; j++) {
        const struct lat_sample *s = &e->s[(e->idx + j) % LAT_TS_LEN];
        if (!s->time) continue;
        reply_array(c, 2);
        reply_int(c, s->time);
        reply_int(c, s->ms);
    }
    hk_free(ev);
}

/* LATENCY RESET [event ...]: how many events were forgotten. */
void cmd_latency_reset(struct cmd_ctx *c) {
    if (c->argc == 2) {
        reply_int(c, latency_reset(NULL, 0));
        return;
    }
    int n = 0;
    for (int i = 2; i < c->argc; i++) n += latency_reset(c->argv[i].ptr, c->argv[i].len);
    reply_int(c, n);
}

/* ---- LATENCY GRAPH ------------------------------------------------------------------ */

#define GRAPH_COLS 80
#define GRAPH_ROWS 4

struct spark {
    double v[LAT_TS_LEN];
    char label[LAT_TS_LEN][24];
    int n;
    double min, max;
};

/* Rows of one range of columns: the value's height in GRAPH_ROWS rows of
 * three steps each ('_', 'o', '#', with '|' filling under the top), then
 * each column's label written downwards under a blank line, as Redis's
 * sparkline draws it. */
static void spark_range(struct sbuf *b, const struct spark *sp, int off, int len) {
    static const char fill[] = "_o#";
    const int steps_per_row = 3, steps = steps_per_row * GRAPH_ROWS;
    double range = sp->max - sp->min;
    if (range == 0) range = 1;
    char row_buf[GRAPH_COLS];
    for (int row = 0;; row++) {
        int any = 0;
        memset(row_buf, ' ', sizeof(row_buf));
        for (int j = 0; j < len; j++) {
            double rel = sp->v[off + j] - sp->min;
            int step = (int)((int)(rel * steps) / range);
            if (step < 0) step = 0;
            if (step >= steps) step = steps - 1;
            if (row < GRAPH_ROWS) {
                int ci = step - (GRAPH_ROWS - row - 1) * steps_per_row;
                any = 1;
                if (ci >= 0 && ci < steps_per_row) row_buf[j] = fill[ci];
                else if (ci >= steps_per_row) row_buf[j] = '|';
            } else if (row == GRAPH_ROWS) {
                any = 1; /* the blank line above the labels */
                break;
            } else {
                const char *l = sp->label[off + j];
                int at = row - GRAPH_ROWS - 1;
                if ((int)strlen(l) > at) {
                    any = 1;
                    row_buf[j] = l[at];
                }
            }
        }
        if (!any) break;
        sb_cat(b, row_buf, (size_t)len);
        sb_cat(b, "\n", 1);
    }
}

void cmd_latency_graph(struct cmd_ctx *c) {
    int n;
    struct lat_event *ev = events_copy(&n);
    struct lat_event *e = event_find(ev, n, &c->argv[2]);
    if (!e) {
        reply_errorf(c, "ERR No samples available for event '%.*s'", (int)c->argv[2].len, c->argv[2].ptr);
        hk_free(ev);
        return;
    }
    struct spark *sp = hk_calloc(1, sizeof(*sp));
    long long now = (long long)time(NULL);
    for (int j = 0; j < LAT_TS_LEN; j++) {
        const struct lat_sample *s = &e->s[(e->idx + j) % LAT_TS_LEN];
        if (!s->time) continue;
        if (sp->n == 0) sp->min = sp->max = s->ms;
        if (s->ms > sp->max) sp->max = s->ms;
        if (s->ms < sp->min) sp->min = s->ms;
        long long ago = now - s->time;
        if (ago < 60) snprintf(sp->label[sp->n], sizeof(sp->label[0]), "%llds", ago);
        else if (ago < 3600) snprintf(sp->label[sp->n], sizeof(sp->label[0]), "%lldm", ago / 60);
        else if (ago < 86400) snprintf(sp->label[sp->n], sizeof(sp->label[0]), "%lldh", ago / 3600);
        else snprintf(sp->label[sp->n], sizeof(sp->label[0]), "%lldd", ago / 86400);
        sp->v[sp->n++] = s->ms;
    }
    struct sbuf b = {0};
    sb_catf(&b, "%s - high %lu ms, low %lu ms (all time high %lu ms)\n", e->name, (unsigned long)sp->max,
            (unsigned long)sp->min, (unsigned long)e->max);
    for (int j = 0; j < GRAPH_COLS; j++) sb_cat(&b, "-", 1);
    sb_cat(&b, "\n", 1);
    for (int j = 0; j < sp->n; j += GRAPH_COLS) {
        if (j) sb_cat(&b, "\n", 1);
        spark_range(&b, sp, j, sp->n - j < GRAPH_COLS ? sp->n - j : GRAPH_COLS);
    }
    reply_verbatim(c, b.p ? b.p : "", b.len, "txt");
    sb_free(&b);
    hk_free(sp);
    hk_free(ev);
}

/* ---- LATENCY DOCTOR ------------------------------------------------------------------ */

/* Whether transparent huge pages back any of this process's memory. */
static int anon_huge_pages(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return 0;
    char line[256];
    long long kb = 0;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "AnonHugePages:", 14)) kb += atoll(line + 14);
    fclose(f);
    return kb > 0;
}

void cmd_latency_doctor(struct cmd_ctx *c) {
    int n;
    struct lat_event *ev = events_copy(&n);
    struct sbuf b = {0};
    long long thr = CFG(latency_monitor_threshold), sl = CFG(slowlog_log_slower_than);
    if (n == 0 && thr == 0) {
        sb_catf(&b, "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may "
                    "use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't "
                    "in a deep space mission I'd suggest to take a look at "
                    "https://redis.io/topics/latency-monitor.\n");
        goto out;
    }
    int slow_enable = 0, slow_tune = 0, slow_inspect = 0, scheduler = 0, hz = 0, large = 0, thp = 0, advices = 0;
    long long now = (long long)time(NULL);
    for (int i = 0; i < n; i++) {
        const struct lat_event *e = &ev[i];
        if (i == 0)
            sb_catf(&b, "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about "
                        "it, do you Dave?\n\n");
        unsigned long long sum = 0, samples = 0, mn = 0, mx = 0;
        long long oldest = 0;
        for (int j = 0; j < LAT_TS_LEN; j++) {
            const struct lat_sample *s = &e->s[j];
            if (!s->time) continue;
            if (!samples++) mn = mx = s->ms;
            if (s->ms < mn) mn = s->ms;
            if (s->ms > mx) mx = s->ms;
            sum += s->ms;
            if (!oldest || s->time < oldest) oldest = s->time;
        }
        unsigned long long avg = samples ? sum / samples : 0, mad = 0;
        long long period = samples ? now - oldest : 0;
        if (samples && period == 0) period = 1;
        for (int j = 0; j < LAT_TS_LEN; j++) {
            const struct lat_sample *s = &e->s[j];
            if (!s->time) continue;
            long long d = (long long)avg - (long long)s->ms;
            mad += (unsigned long long)(d < 0 ? -d : d);
        }
        if (samples) mad /= samples;
        sb_catf(&b,
                "%d. %s: %llu latency spikes (average %llums, mean deviation %llums, period %.2f sec). Worst all "
                "time event %lums.",
                i + 1, e->name, samples, avg, mad, samples ? (double)period / (double)samples : 0.0,
                (unsigned long)e->max);
        if (!strcasecmp(e->name, "command")) {
            if (sl < 0) {
                slow_enable = 1;
                advices++;
            } else if (sl / 1000 > thr) {
                slow_tune = 1;
                advices++;
            }
            slow_inspect = large = 1;
            advices += 2;
        }
        if (!strcasecmp(e->name, "fast-command")) {
            scheduler = 1;
            advices++;
        }
        if (!strcasecmp(e->name, "expire-cycle")) {
            hz = large = 1;
            advices += 2;
        }
        sb_cat(&b, "\n", 1);
    }
    if (anon_huge_pages()) {
        thp = 1;
        advices++;
    }
    if (n == 0 && advices == 0) {
        sb_catf(&b, "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the "
                    "slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think "
                    "things over.\n");
    } else if (n > 0 && advices == 0) {
        sb_catf(&b, "\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the "
                    "Redis community to get some help, providing this report in your help request.\n");
    } else {
        sb_catf(&b, "\nI have a few advices for you:\n\n");
        if (slow_enable)
            sb_catf(&b,
                    "- There are latency issues with potentially slow commands you are using. Try to enable the "
                    "Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %llu'. If the "
                    "Slow log is disabled Redis is not able to log slow commands execution for you.\n",
                    (unsigned long long)thr * 1000);
        if (slow_tune)
            sb_catf(&b,
                    "- Your current Slow Log configuration only logs events that are slower than your configured "
                    "latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %llu'.\n",
                    (unsigned long long)thr * 1000);
        if (slow_inspect)
            sb_catf(&b, "- Check your Slow Log to understand what are the commands you are running which are too "
                        "slow to execute. Please check https://redis.io/commands/slowlog for more information.\n");
        if (scheduler)
            sb_catf(&b, "- The system is slow to execute Redis code paths not containing system calls. This usually "
                        "means the system does not provide Redis CPU time to run for long periods. You should try "
                        "to:\n"
                        "  1) Lower the system load.\n"
                        "  2) Use a computer / VM just for Redis if you are running other software in the same "
                        "system.\n"
                        "  3) Check if you have a \"noisy neighbour\" problem.\n"
                        "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your "
                        "system.\n"
                        "  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if "
                        "you are using Jemalloc. However this may create fragmentation problems.\n");
        if (hz && CFG(hz) < 100)
            sb_catf(&b, "- In order to make the Redis keys expiring process more incremental, try to set the 'hz' "
                        "configuration parameter to 100 using 'CONFIG SET hz 100'.\n");
        if (large)
            sb_catf(&b, "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking "
                        "operation. If you have very large objects that are often deleted, expired, or evicted, "
                        "try to fragment those objects into multiple smaller objects.\n");
        if (thp)
            sb_catf(&b, "- I detected a non zero amount of anonymous huge pages used by your process. This creates "
                        "very serious latency events in different conditions, especially when Redis is persisting "
                        "on disk. To disable THP support use the command 'echo never > "
                        "/sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local "
                        "so that the command will be executed again after a reboot. Note that even if you have "
                        "already disabled THP, you still need to restart the Redis process to get rid of the huge "
                        "pages already created.\n");
    }
out:
    reply_verbatim(c, b.p ? b.p : "", b.len, "txt");
    sb_free(&b);
    hk_free(ev);
}

/* ---- LATENCY HISTOGRAM ------------------------------------------------------------- */

/* One command's entry: {calls, histogram_usec: {bucket: cumulative}},
 * with a row per power of two from 1024 ns on, as long as the count
 * grows, up to the row that holds every call (Redis's log iteration). */
static void histogram_reply(struct cmd_ctx *c, const struct command *cmd, const unsigned long long *counts,
                            unsigned long long total) {
    reply_bulk_cstr(c, cmd->fullname);
    reply_map(c, 2);
    reply_bulk_cstr(c, "calls");
    reply_int(c, (long long)total);
    reply_bulk_cstr(c, "histogram_usec");
    long long lv[64];
    unsigned long long cv[64];
    int rows = 0;
    unsigned long long cum = 0, prev = 0;
    int i = 0;
    for (long long level = 1024; rows < 64; level *= 2) {
        int li = lh_index(level);
        while (i <= li && i < LH_COUNTS) cum += counts[i++];
        if (cum > prev) {
            lv[rows] = lh_highest(li) / 1000;
            cv[rows] = cum;
            rows++;
        }
        prev = cum;
        if (cum >= total || i >= LH_COUNTS) break;
    }
    reply_map(c, rows);
    for (int r = 0; r < rows; r++) {
        reply_int(c, lv[r]);
        reply_int(c, (long long)cv[r]);
    }
}

/* Reply cmd's histogram when it has data; returns 1 when it did. */
static int histogram_one(struct cmd_ctx *c, const struct command *cmd, unsigned long long *counts) {
    unsigned long long total = lat_hist_merge(cmd->id, counts);
    if (!total) return 0;
    histogram_reply(c, cmd, counts, total);
    return 1;
}

/* LATENCY HISTOGRAM [command ...]: every command with data, or the named
 * ones (a container names itself and its subcommands; "parent|sub" one
 * subcommand; unknown names are skipped). */
void cmd_latency_histogram(struct cmd_ctx *c) {
    unsigned long long *counts = hk_malloc(LH_COUNTS * sizeof(*counts));
    void *h = reply_defer(c);
    long long n = 0;
    if (c->argc == 2) {
        int total = commands_total();
        for (int id = 0; id < total; id++) n += histogram_one(c, command_by_id(id), counts);
    } else {
        for (int i = 2; i < c->argc; i++) {
            const hk_slice *a = &c->argv[i];
            const char *bar = memchr(a->ptr, '|', a->len);
            struct command *cmd = cmd_lookup(a->ptr, bar ? (size_t)(bar - a->ptr) : a->len);
            if (cmd && bar) {
                size_t off = (size_t)(bar - a->ptr) + 1;
                cmd = cmd->nsubs ? cmd_lookup_sub(cmd, a->ptr + off, a->len - off) : NULL;
                if (cmd) n += histogram_one(c, cmd, counts);
                continue;
            }
            if (!cmd) continue;
            n += histogram_one(c, cmd, counts);
            for (int s = 0; s < cmd->nsubs; s++) n += histogram_one(c, cmd->subs[s], counts);
        }
    }
    reply_fill_map(c, h, n);
    hk_free(counts);
}

void cmd_latency_help(struct cmd_ctx *c) {
    static const char *const lines[] = {
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "GRAPH <event>",
        "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
        "    If no commands are specified then all histograms are replied.",
        NULL,
    };
    reply_help(c, "LATENCY", lines);
}

/* ---- INFO latencystats -------------------------------------------------------------- */

void info_latencystats(struct sbuf *b) {
    sb_catf(b, "# Latencystats\r\n");
    double pct[64];
    int np = lat_info_percentiles(pct, 64);
    unsigned long long *counts = hk_malloc(LH_COUNTS * sizeof(*counts));
    int total = commands_total();
    for (int id = 0; id < total; id++) {
        unsigned long long calls = lat_hist_merge(id, counts);
        if (!calls) continue;
        sb_catf(b, "latency_percentiles_usec_%s:", command_by_id(id)->fullname);
        for (int j = 0; j < np; j++) {
            char name[64];
            lat_fmt_percentile(name, sizeof(name), pct[j]);
            sb_catf(b, "%sp%s=%.3f", j ? "," : "", name,
                    (double)lat_hist_percentile(counts, calls, pct[j]) / 1000.0);
        }
        sb_cat(b, "\r\n", 2);
    }
    hk_free(counts);
}

/* ---- MONITOR ------------------------------------------------------------------------ */

/* MONITOR: from now on the connection receives every command run, and
 * may run only what does not touch the keyspace (dispatch); RESET or
 * closing ends it. A second MONITOR answers nothing. */
void cmd_monitor(struct cmd_ctx *c) {
    struct client *cl = c->cl;
    if (c->flags & CTX_DENY_BLOCKING) {
        reply_error(c, "ERR MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if (!cl || (cl->flags & CLIENT_MONITOR)) return;
    monitor_attach(cl);
    reply_ok(c);
}
