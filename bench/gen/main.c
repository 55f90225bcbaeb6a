/* main.c - hotkv-bench, the load generator of HotKV's benchmarks.
 *
 * Speaks RESP to any Redis-compatible server over TCP or a unix socket from
 * --threads threads, each running its own epoll loop over its connections.
 * Three ways to send:
 *   closed loop  every connection sends -P requests and the next -P when
 *                all their replies are back: the maximum throughput;
 *   open loop    (--rate) every connection sends on a fixed schedule whether
 *                or not replies come back, and a request's latency runs from
 *                the time it was *scheduled*, so a server that stalls is
 *                charged for the whole queue behind the stall (no
 *                coordinated omission);
 *   pub/sub      (--pubsub) publishers at a fixed total rate, subscribers
 *                measuring delivery latency from the publish time carried in
 *                the payload.
 * With --miss, a cache workload: a reply to the first template that is a
 * nil (a GET of a missing key) is followed on the same connection by the
 * --miss request for the same key ("SET {key last} {value 100}"), sent at
 * once in the open loop and at the head of the next batch in the closed
 * loop; hits, misses and the miss requests' latency are reported apart.
 * A template with {reply id} closes a loop through the server: the first
 * stream entry id of each reply on a connection is queued on that
 * connection, and each request it sends next takes the oldest one (0-0
 * when none is queued), so with "XACK s g {reply id} ; XREADGROUP GROUP g
 * c{conn} COUNT 1 STREAMS s >" every entry read is acknowledged once, by
 * the connection that read it, in its next request.
 * The main thread connects everything first (so a refused connection is an
 * error before any load), starts the workers at one instant, prints
 * progress, decides when the run is over and prints the report (text, and
 * JSON with the histogram on --json).
 *
 * Threads share nothing mutable but relaxed atomic counters that each worker
 * writes and the main thread reads, the stop flag the main thread writes,
 * and the sequence counters of templates. This is not a client library:
 * replies are counted and timed, never decoded beyond what a report needs. */
#include "hist.h"
#include "miss.h"
#include "rscan.h"
#include "tmpl.h"
#include "tlsio.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_TEMPLATES 2
#define MISS_TIX MAX_TEMPLATES          /* template slot of the --miss request */
#define NSLOTS (MAX_TEMPLATES + 1)
#define OUT_HIGH_WATER (4u << 20)       /* unsent bytes per connection before we stop generating */
#define IN_CHUNK 65536
#define DRAIN_MIN_NS 2000000000ULL      /* replies are awaited at least this long after the end */

enum mode { MODE_CLOSED, MODE_OPEN, MODE_LOAD, MODE_PUBSUB };
enum role { ROLE_CMD, ROLE_PUB, ROLE_SUB };

static const char *mode_name[] = {"closed", "open", "load", "pubsub"};

struct opts {
    const char *host, *sock, *auth;
    int port;
    int tls;                          /* --tls: connections over TLS */
    const char *cacert, *cert, *key, *sni;
    int threads, conns, pipeline;
    uint64_t requests;                /* -n; 0 = run for the duration */
    double duration, warmup, rate;
    int ratio[MAX_TEMPLATES];
    int ntmpl;
    struct tmpl *tmpl[NSLOTS];        /* the templates, then the --miss one */
    int nrep[NSLOTS];                 /* replies per request: commands in the template */
    int miss;                         /* --miss given: tmpl[MISS_TIX] follows a nil reply to tmpl[0] */
    int reply_ids;                    /* a template has {reply id}: collect ids from replies */
    enum mode mode;
    int publishers, subscribers, channels, payload;
    const char *json;
    int quiet;
    uint64_t seed;
};

static struct opts O = {
    .host = "127.0.0.1", .port = 6379, .threads = 1, .conns = 8, .pipeline = 0,
    .duration = 10, .ratio = {1, 1}, .nrep = {1, 1, 1}, .publishers = 1, .subscribers = 1, .channels = 1, .payload = 64,
    .seed = 1,
};

/* Stream ids from replies on a connection, oldest first, waiting for a
 * request with {reply id} to take them. */
#define IDQ_MAX 65536                 /* beyond this the oldest id is dropped */
struct idslot {
    uint8_t len;
    char s[RSCAN_ID_MAX];
};

struct idq {
    struct idslot *v;
    size_t head, count, cap;
};

/* Requests sent and not yet answered, oldest first: when each was scheduled
 * (or sent, in closed loop), which template made it (MISS_TIX: the --miss
 * one) and the key number it drew last (for --miss). */
struct inflight {
    uint64_t *ts;
    uint8_t *tix;
    uint64_t *key;
    size_t head, count, cap;
};

struct conn {
    int fd;
    enum role role;
    struct worker *w;
    struct gbuf out;
    size_t out_sent;
    char *in;
    size_t in_len, in_cap;
    struct inflight q;
    uint64_t quota;                   /* requests left to issue (-n); UINT64_MAX = unbounded */
    uint64_t sched_base, sched_k;     /* open loop: next send at base + k * interval */
    double interval_ns;
    uint64_t next_ns;
    int epollout;
    int channel;                      /* publisher's next channel / subscriber's channel */
    int seq_got, seq_err;             /* replies in so far to the oldest request of a ";" sequence, any an error */
    uint64_t index;                   /* {conn}: 0 .. connections-1 over all threads */
    struct idq ids;                   /* {reply id}: ids from replies not yet used */
    struct keyq pend;                 /* --miss, closed loop: keys that missed, their request not yet sent */
};

struct worker {
    int id;
    pthread_t th;
    int epfd;
    struct conn *conns;
    int nconns;
    struct rng rng;
    uint64_t mix;
    struct hist hist[NSLOTS];         /* request latency (publishers: PUBLISH round trip); [MISS_TIX]: --miss requests */
    struct hist deliver;              /* subscribers: delivery latency */
    struct hist lag;                  /* open loop: send time minus scheduled time */
    uint64_t recorded[NSLOTS], rec_errors[NSLOTS];
    uint64_t sent, completed, errors, published, delivered, expected;
    uint64_t hits, misses;            /* --miss: replies to the first template, measured window */
    uint64_t hits_total, misses_total, miss_sent, miss_dropped;  /* the whole run */
    uint64_t delivered_rec, expected_rec;  /* of messages published in the measured window */
    uint64_t last_done_ns;            /* completion time of the last recorded request */
    uint64_t ids_used, ids_none;      /* {reply id}: requests that took an id / found none (0-0) */
    char first_error[256];
    /* Read by the main thread for progress and the end of the run. */
    _Atomic uint64_t a_completed, a_outstanding, a_delivered, a_expected, a_hits, a_misses;
    _Atomic int a_idle;               /* nothing left to issue */
};

static struct worker *workers;
static atomic_int stop_flag;
static atomic_int lost_flag;
static char lost_msg[256];
static pthread_mutex_t lost_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t t_start, t_measure, t_end;   /* ns; t_end = UINT64_MAX with -n */
static int subs_per_channel_max;

/* Ctrl-C ends the run early; what was measured so far is still reported. */
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("hotkv-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* A connection broke mid-run: remember the first reason, stop everyone. */
static void lost(const char *fmt, ...) {
    pthread_mutex_lock(&lost_lock);
    if (!atomic_load(&lost_flag)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(lost_msg, sizeof(lost_msg), fmt, ap);
        va_end(ap);
        atomic_store(&lost_flag, 1);
    }
    pthread_mutex_unlock(&lost_lock);
    atomic_store(&stop_flag, 1);
}

/* ---- in-flight queue ---- */

static void q_push(struct inflight *q, uint64_t ts, int tix, uint64_t key) {
    if (q->count == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        uint64_t *nts = malloc(cap * sizeof(*nts));
        uint8_t *ntix = malloc(cap);
        uint64_t *nkey = malloc(cap * sizeof(*nkey));
        if (!nts || !ntix || !nkey) die("out of memory");
        for (size_t i = 0; i < q->count; i++) {
            nts[i] = q->ts[(q->head + i) % q->cap];
            ntix[i] = q->tix[(q->head + i) % q->cap];
            nkey[i] = q->key[(q->head + i) % q->cap];
        }
        free(q->ts);
        free(q->tix);
        free(q->key);
        q->ts = nts;
        q->tix = ntix;
        q->key = nkey;
        q->head = 0;
        q->cap = cap;
    }
    size_t at = (q->head + q->count) % q->cap;
    q->ts[at] = ts;
    q->tix[at] = (uint8_t)tix;
    q->key[at] = key;
    q->count++;
}

static void q_pop(struct inflight *q, uint64_t *ts, int *tix, uint64_t *key) {
    *ts = q->ts[q->head];
    *tix = q->tix[q->head];
    *key = q->key[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
}

static void idq_push(struct idq *q, const char *s, size_t len) {
    if (q->count == q->cap) {
        if (q->cap >= IDQ_MAX) {
            q->head = (q->head + 1) % q->cap;
            q->count--;
        } else {
            size_t cap = q->cap ? q->cap * 2 : 16;
            struct idslot *v = malloc(cap * sizeof(*v));
            if (!v) die("out of memory");
            for (size_t i = 0; i < q->count; i++) v[i] = q->v[(q->head + i) % q->cap];
            free(q->v);
            q->v = v;
            q->head = 0;
            q->cap = cap;
        }
    }
    struct idslot *e = &q->v[(q->head + q->count) % q->cap];
    e->len = (uint8_t)len;
    memcpy(e->s, s, len);
    q->count++;
}

/* ---- blocking setup I/O (before the run) ---- */

static int connect_one(void) {
    int fd;
    if (O.sock) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(O.sock) >= sizeof(sa.sun_path)) die("unix socket path too long: %s", O.sock);
        strcpy(sa.sun_path, O.sock);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) die("socket: %s", strerror(errno));
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
            die("cannot connect to %s: %s", O.sock, strerror(errno));
        return fd;
    }
    char port[16];
    snprintf(port, sizeof(port), "%d", O.port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    int rc = getaddrinfo(O.host, port, &hints, &res);
    if (rc) die("cannot resolve %s: %s", O.host, gai_strerror(rc));
    int err = 0;
    fd = -1;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) die("cannot connect to %s:%d: %s", O.host, O.port, strerror(err ? err : ECONNREFUSED));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (O.tls) {
        char why[256];
        if (tlsio_connect(fd, O.sni ? O.sni : O.host, why, sizeof(why)) < 0)
            die("TLS handshake with %s:%d failed: %s", O.host, O.port, why);
    }
    return fd;
}

/* Send argv as one request and read `nreplies` replies; the first reply's
 * type and text go to *type and msg. Blocking; used before the run. */
static void sync_command(int fd, int argc, const char **argv, int nreplies, char *type, char *msg, size_t msglen) {
    struct gbuf b = {0};
    char hdr[32];
    gbuf_append(&b, hdr, (size_t)snprintf(hdr, sizeof(hdr), "*%d\r\n", argc));
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(argv[i]);
        gbuf_append(&b, hdr, (size_t)snprintf(hdr, sizeof(hdr), "$%zu\r\n", l));
        gbuf_append(&b, argv[i], l);
        gbuf_append(&b, "\r\n", 2);
    }
    for (size_t off = 0; off < b.len;) {
        ssize_t n = tlsio_write(fd, b.p + off, b.len - off);
        if (n <= 0) die("write: %s", n < 0 ? strerror(errno) : "connection closed");
        off += (size_t)n;
    }
    b.len = 0;
    int got = 0;
    *type = 0;
    while (got < nreplies) {
        gbuf_reserve(&b, 4096);
        ssize_t n = tlsio_read(fd, b.p + b.len, b.cap - b.len);
        if (n <= 0) die("connection closed during setup (%s)", argv[0]);
        b.len += (size_t)n;
        size_t off = 0;
        for (;;) {
            struct rscan_item it;
            long r = rscan_reply(b.p + off, b.len - off, &it);
            if (r < 0) die("protocol error from the server during setup");
            if (r == 0) break;
            if (got == 0) {
                *type = it.type;
                size_t l = it.payload && it.payload_len < msglen ? it.payload_len : 0;
                memcpy(msg, it.payload ? it.payload : "", l);
                msg[l] = 0;
            }
            off += (size_t)r;
            if (++got == nreplies) break;
        }
        memmove(b.p, b.p + off, b.len - off);
        b.len -= off;
    }
    gbuf_free(&b);
}

static void set_nonblocking(int fd) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* ---- the worker loop ---- */

static void conn_want_out(struct conn *c, int on) {
    if (c->epollout == on) return;
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(c->w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->epollout = on;
}

static void conn_flush(struct conn *c) {
    while (c->out_sent < c->out.len) {
        ssize_t n = tlsio_write(c->fd, c->out.p + c->out_sent, c->out.len - c->out_sent);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                conn_want_out(c, 1);
                return;
            }
            lost("write failed: %s", strerror(errno));
            return;
        }
        c->out_sent += (size_t)n;
    }
    c->out.len = c->out_sent = 0;
    conn_want_out(c, 0);
}

static int pick_template(struct worker *w) {
    if (O.ntmpl == 1) return 0;
    uint64_t k = w->mix++ % (uint64_t)(O.ratio[0] + O.ratio[1]);
    return k < (uint64_t)O.ratio[0] ? 0 : 1;
}

/* Append PUBLISH <channel> <payload>; the payload starts with the scheduled
 * time in microseconds (CLOCK_MONOTONIC, same host) and is padded to the
 * requested size. */
static void gen_publish(struct conn *c, uint64_t sched_ns) {
    char chan[32], hdr[64], stamp[32];
    int cl = snprintf(chan, sizeof(chan), "chan_%d", c->channel);
    c->channel = (c->channel + 1) % O.channels;
    int sl = snprintf(stamp, sizeof(stamp), "%llu:", (unsigned long long)(sched_ns / 1000));
    size_t plen = (size_t)O.payload > (size_t)sl ? (size_t)O.payload : (size_t)sl;
    int hl = snprintf(hdr, sizeof(hdr), "*3\r\n$7\r\nPUBLISH\r\n$%d\r\n", cl);
    gbuf_reserve(&c->out, (size_t)hl + (size_t)cl + plen + 40);
    gbuf_append(&c->out, hdr, (size_t)hl);
    gbuf_append(&c->out, chan, (size_t)cl);
    hl = snprintf(hdr, sizeof(hdr), "\r\n$%zu\r\n", plen);
    gbuf_append(&c->out, hdr, (size_t)hl);
    gbuf_append(&c->out, stamp, (size_t)sl);
    memset(c->out.p + c->out.len, 'x', plen - (size_t)sl);
    c->out.len += plen - (size_t)sl;
    gbuf_append(&c->out, "\r\n", 2);
}

/* Hand template tix the oldest reply id of c, when it takes one. */
static void take_id(struct conn *c, int tix, struct tmpl_ctx *ctx, struct idslot *id) {
    struct worker *w = c->w;
    if (!O.reply_ids || !tmpl_uses_reply_id(O.tmpl[tix])) return;
    if (c->ids.count) {
        *id = c->ids.v[c->ids.head];
        c->ids.head = (c->ids.head + 1) % c->ids.cap;
        c->ids.count--;
        ctx->id = id->s;
        ctx->idlen = id->len;
        w->ids_used++;
    } else {
        w->ids_none++;
    }
}

static void issue(struct conn *c, uint64_t ts, uint64_t now) {
    struct worker *w = c->w;
    /* How late the generator itself sends: when this grows, the latency
     * measured is the generator's queue, not the server's. */
    if (ts >= t_measure && ts < t_end && now >= ts) hist_record(&w->lag, now - ts);
    int tix = 0;
    uint64_t key = 0;
    if (c->role == ROLE_PUB) {
        gen_publish(c, ts);
    } else {
        tix = pick_template(w);
        struct tmpl_ctx ctx = {.conn = c->index};
        struct idslot id;
        take_id(c, tix, &ctx, &id);
        key = tmpl_gen_ctx(O.tmpl[tix], &w->rng, &c->out, &ctx);
    }
    q_push(&c->q, ts, tix, key);
    if (c->quota != UINT64_MAX) c->quota--;
    w->sent++;
}

/* The --miss request for key (a GET of it found nothing), sent now: its
 * latency runs from now, it is outside the schedule and the -n quota. */
static void issue_miss(struct conn *c, uint64_t key, uint64_t now) {
    struct worker *w = c->w;
    struct tmpl_ctx ctx = {.conn = c->index, .has_key = 1, .key = key};
    struct idslot id;
    take_id(c, MISS_TIX, &ctx, &id);
    tmpl_gen_ctx(O.tmpl[MISS_TIX], &w->rng, &c->out, &ctx);
    q_push(&c->q, now, MISS_TIX, key);
    w->sent++;
    w->miss_sent++;
}

/* Generate what is due on c. Returns the time it next wants to send
 * (UINT64_MAX: not on a timer). */
static uint64_t conn_fill(struct conn *c, uint64_t now) {
    if (c->role == ROLE_SUB || atomic_load_explicit(&stop_flag, memory_order_relaxed)) return UINT64_MAX;
    if (O.mode == MODE_CLOSED || O.mode == MODE_LOAD) {
        /* Pipelining in batches, as redis-benchmark does: the next P
         * requests go out when all P replies of the last batch are in.
         * (Topping up a sliding window instead splits the server's reads
         * into smaller ones and measures a different, costlier pattern.) */
        /* With --miss the SETs of the last batch's misses lead the batch
         * and new requests fill it up to -P (miss_batch). */
        if (c->q.count || now >= t_end) return UINT64_MAX;
        size_t nmiss, nnew;
        miss_batch(c->pend.count, (size_t)O.pipeline, c->quota, &nmiss, &nnew);
        for (size_t i = 0; i < nmiss; i++) issue_miss(c, keyq_pop(&c->pend), now);
        for (size_t i = 0; i < nnew; i++) issue(c, now, now);
        return UINT64_MAX;
    }
    /* Open loop: everything scheduled up to now, unless the socket is
     * backed up; then the schedule falls behind and those requests, sent
     * late, are charged from their scheduled time. */
    while (c->quota && c->next_ns <= now && c->next_ns < t_end) {
        if (c->out.len - c->out_sent > OUT_HIGH_WATER) return UINT64_MAX;
        issue(c, c->next_ns, now);
        c->sched_k++;
        c->next_ns = c->sched_base + (uint64_t)((double)c->sched_k * c->interval_ns);
    }
    return c->quota && c->next_ns < t_end ? c->next_ns : UINT64_MAX;
}

/* Keep the text of the worker's first error reply. */
static void note_error(struct worker *w, const struct rscan_item *it) {
    if (!w->first_error[0]) {
        size_t l = it->payload_len < sizeof(w->first_error) - 1 ? it->payload_len : sizeof(w->first_error) - 1;
        if (it->payload) memcpy(w->first_error, it->payload, l);
        w->first_error[l] = 0;
        if (!l) strcpy(w->first_error, "(error)");
    }
}

static void record_error(struct worker *w, const struct rscan_item *it) {
    w->errors++;
    note_error(w, it);
}

/* Whether the reply at p (len bytes, top-level item *it) is an error; with
 * `nested`, an array reply whose elements include an error counts too (the
 * reply of EXEC to a command that failed inside the transaction). The error
 * item goes to *e. */
static int reply_error(const char *p, long len, const struct rscan_item *it, int nested, struct rscan_item *e) {
    *e = *it;
    if (it->type == '-' || it->type == '!') return 1;
    if (!nested || it->type != '*') return 0;
    for (int i = 0; i < 64 && rscan_element(p, (size_t)len, i, e); i++)
        if (e->type == '-' || e->type == '!') return 1;
    return 0;
}

/* One complete reply at p (len bytes) arrived on c at time now. */
static void on_reply(struct conn *c, const char *p, long len, const struct rscan_item *it, uint64_t now) {
    struct worker *w = c->w;
    if (c->role == ROLE_SUB) {
        struct rscan_item kind, payload;
        if ((it->type == '*' || it->type == '>') && rscan_element(p, (size_t)len, 0, &kind) &&
            kind.payload_len == 7 && !memcmp(kind.payload, "message", 7) &&
            rscan_element(p, (size_t)len, 2, &payload) && payload.payload) {
            uint64_t us = 0;
            for (size_t i = 0; i < payload.payload_len && payload.payload[i] >= '0' && payload.payload[i] <= '9'; i++)
                us = us * 10 + (uint64_t)(payload.payload[i] - '0');
            uint64_t ts = us * 1000;
            w->delivered++;
            /* t_measure and t_end are whole microseconds, so this window
             * test agrees exactly with the publisher's. */
            if (ts >= t_measure && ts < t_end) {
                hist_record(&w->deliver, now > ts ? now - ts : 0);
                w->delivered_rec++;
            }
        } else if (it->type == '-') {
            record_error(w, it);
        }
        return;
    }
    if (c->q.count == 0) {
        lost("reply without a request (the server sent %c...)", it->type);
        return;
    }
    uint64_t ts, key;
    int tix = c->q.tix[c->q.head];
    struct rscan_item eit;
    int err = reply_error(p, len, it, O.nrep[tix] > 1, &eit);
    if (O.reply_ids && !err) {
        struct rscan_item id;
        if (rscan_find_id(p, (size_t)len, &id)) idq_push(&c->ids, id.payload, id.payload_len);
    }
    if (O.nrep[tix] > 1) {
        /* A ";" sequence completes with its last reply, and is an error
         * when any of its replies was one. */
        if (err) note_error(w, &eit);
        c->seq_err |= err;
        if (++c->seq_got < O.nrep[tix]) return;
        err = c->seq_err;
        c->seq_got = c->seq_err = 0;
        if (err) w->errors++;
    } else if (err) {
        record_error(w, &eit);
    }
    q_pop(&c->q, &ts, &tix, &key);
    w->completed++;
    int in_window = ts >= t_measure && ts < t_end;
    if (O.miss && tix == 0) {
        /* A GET that found its key, or not: then the --miss request for
         * the same key goes next on this connection, at once in the open
         * loop (outside the schedule), in the closed loop at the head of
         * the next batch. After the end it is not sent. */
        enum miss_kind k = miss_classify(p, (size_t)len, it->type);
        if (k == MISS_HIT) {
            w->hits_total++;
            w->hits += in_window;
        } else if (k == MISS_NIL) {
            w->misses_total++;
            w->misses += in_window;
            if (O.mode != MODE_OPEN) keyq_push(&c->pend, key);
            else if (now < t_end && !atomic_load_explicit(&stop_flag, memory_order_relaxed)) issue_miss(c, key, now);
            else w->miss_dropped++;
        }
    }
    long long receivers = 0;
    if (c->role == ROLE_PUB && it->type == ':') {
        for (const char *s = p + 1; *s >= '0' && *s <= '9'; s++) receivers = receivers * 10 + (*s - '0');
        w->expected += (uint64_t)receivers;
    }
    if (in_window) {
        w->expected_rec += (uint64_t)receivers;
        hist_record(&w->hist[tix], now > ts ? now - ts : 0);
        w->recorded[tix]++;
        if (err) w->rec_errors[tix]++;
        if (c->role == ROLE_PUB) w->published++;
        w->last_done_ns = now;
    }
}

static void conn_read_once(struct conn *c) {
    if (c->in_cap - c->in_len < IN_CHUNK / 2) {
        c->in_cap = c->in_cap ? c->in_cap * 2 : IN_CHUNK;
        c->in = realloc(c->in, c->in_cap);
        if (!c->in) die("out of memory");
    }
    ssize_t n = tlsio_read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
    if (n == 0) {
        lost("the server closed a connection");
        return;
    }
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) lost("read failed: %s", strerror(errno));
        return;
    }
    c->in_len += (size_t)n;
    uint64_t now = now_ns();
    size_t off = 0;
    for (;;) {
        struct rscan_item it;
        long r = rscan_reply(c->in + off, c->in_len - off, &it);
        if (r < 0) {
            lost("protocol error in a reply");
            return;
        }
        if (r == 0) break;
        on_reply(c, c->in + off, r, &it, now);
        off += (size_t)r;
    }
    if (off) {
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
    }
    /* Shrink a buffer a huge reply once grew. */
    if (c->in_cap > 4 * IN_CHUNK && c->in_len < IN_CHUNK) {
        c->in_cap = IN_CHUNK;
        c->in = realloc(c->in, c->in_cap);
    }
}

/* Read what the connection has; a TLS session may hold decrypted bytes
 * past what one read took, which no event would report: read on. */
static void conn_read(struct conn *c) {
    do conn_read_once(c);
    while (tlsio_pending(c->fd) && !atomic_load(&lost_flag));
}

static void publish_progress(struct worker *w) {
    uint64_t out = 0, now = now_ns();
    int idle = 1, closed = O.mode == MODE_CLOSED || O.mode == MODE_LOAD;
    for (int i = 0; i < w->nconns; i++) {
        struct conn *c = &w->conns[i];
        out += c->q.count;
        if (c->role != ROLE_SUB && c->quota && (closed ? now < t_end : c->next_ns < t_end)) idle = 0;
        if (c->pend.count && now < t_end) idle = 0;
    }
    atomic_store_explicit(&w->a_hits, w->hits_total, memory_order_relaxed);
    atomic_store_explicit(&w->a_misses, w->misses_total, memory_order_relaxed);
    atomic_store_explicit(&w->a_completed, w->completed, memory_order_relaxed);
    atomic_store_explicit(&w->a_outstanding, out, memory_order_relaxed);
    atomic_store_explicit(&w->a_delivered, w->delivered, memory_order_relaxed);
    atomic_store_explicit(&w->a_expected, w->expected, memory_order_relaxed);
    atomic_store_explicit(&w->a_idle, idle, memory_order_relaxed);
}

static void *worker_main(void *arg) {
    struct worker *w = arg;
    struct epoll_event evs[256];
    int open = O.mode == MODE_OPEN || O.mode == MODE_PUBSUB;
    /* The kernel may wake a sleeping thread up to its timer slack (50 us by
     * default) late; in the open loop that lateness would be charged to the
     * server as latency. 1 us keeps the schedule. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    while (now_ns() < t_start) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    uint64_t last_pub = 0;
    int have_pwait2 = 1;
    while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
        uint64_t now = now_ns();
        uint64_t due = UINT64_MAX;
        /* Closed loop refills a connection as its replies arrive (below);
         * the full pass is for timers, and for the closed-loop start. */
        if (open || w->sent == 0) {
            for (int i = 0; i < w->nconns; i++) {
                struct conn *c = &w->conns[i];
                uint64_t d = conn_fill(c, now);
                if (d < due) due = d;
                if (c->out.len > c->out_sent) conn_flush(c);
            }
        }
        if (now - last_pub > 5000000) {
            publish_progress(w);
            last_pub = now;
        }
        /* Sleep until the next send is due, at most 5 ms so the stop flag
         * and progress counters stay fresh. */
        uint64_t wait = 5000000;
        now = now_ns();
        if (due != UINT64_MAX) wait = due > now ? (due - now < wait ? due - now : wait) : 0;
        /* A sleep shorter than a wake-up costs is not worth taking. */
        if (wait < 5000) wait = 0;
        struct timespec to = {(time_t)(wait / 1000000000ULL), (long)(wait % 1000000000ULL)};
        int n = have_pwait2 ? epoll_pwait2(w->epfd, evs, 256, &to, NULL) : -1;
        if (n < 0 && (!have_pwait2 || errno == ENOSYS)) {
            /* Kernels before 5.11 (and valgrind) lack epoll_pwait2: whole
             * milliseconds, rounded down, so never late; the loop spins
             * through the last millisecond before a send. */
            have_pwait2 = 0;
            n = epoll_wait(w->epfd, evs, 256, (int)(wait / 1000000));
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            lost("epoll_pwait2: %s", strerror(errno));
            break;
        }
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) conn_read(c);
            if (!open && c->role == ROLE_CMD) conn_fill(c, now_ns());
            if (c->out.len > c->out_sent) conn_flush(c);
        }
    }
    publish_progress(w);
    return NULL;
}

/* ---- reporting ---- */

static void lat_fields(FILE *f, const struct hist *h, int json) {
    double v[6] = {hist_quantile(h, 0.5) / 1e3,  hist_quantile(h, 0.9) / 1e3, hist_quantile(h, 0.99) / 1e3,
                   hist_quantile(h, 0.999) / 1e3, (double)(h->count ? h->max_ns : 0) / 1e3, hist_mean(h) / 1e3};
    if (json)
        fprintf(f, "{\"p50\": %.3f, \"p90\": %.3f, \"p99\": %.3f, \"p999\": %.3f, \"max\": %.3f, \"mean\": %.3f}", v[0],
                v[1], v[2], v[3], v[4], v[5]);
    else
        fprintf(f, "p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f mean %.1f", v[0], v[1], v[2], v[3], v[4], v[5]);
}

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch > 0x7e) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

struct totals {
    struct hist hist[NSLOTS], all, deliver, lag;
    uint64_t recorded[NSLOTS], rec_errors[NSLOTS];
    uint64_t hits, misses, hits_total, misses_total, miss_sent, miss_unsent;
    uint64_t sent, completed, errors, published, delivered, expected, last_done_ns;
    uint64_t delivered_rec, expected_rec;
    uint64_t ids_used, ids_none;
    const char *first_error;
    double window_s, achieved;
};

static void report(struct totals *T) {
    int json_stdout = O.json && !strcmp(O.json, "-");
    FILE *tf = json_stdout ? stderr : stdout;
    uint64_t rec = T->recorded[0] + T->recorded[1];
    uint64_t unanswered = T->sent - T->completed;
    if (O.mode == MODE_PUBSUB) fprintf(tf, "mode: pubsub, %d threads", O.threads);
    else fprintf(tf, "mode: %s, %d threads x %d connections", mode_name[O.mode], O.threads, O.conns);
    if (O.mode == MODE_CLOSED || O.mode == MODE_LOAD) fprintf(tf, ", pipeline %d", O.pipeline);
    fputc('\n', tf);
    if (O.mode == MODE_PUBSUB) {
        fprintf(tf, "pubsub: %d publishers, %d subscribers, %d channels, %d-byte payloads\n", O.publishers,
                O.subscribers, O.channels, O.payload);
        fprintf(tf, "messages: %llu published, %llu delivered of %llu expected, %.1f deliveries/s\n",
                (unsigned long long)T->published, (unsigned long long)T->delivered_rec,
                (unsigned long long)T->expected_rec, (double)T->delivered_rec / T->window_s);
    } else {
        for (int i = 0; i < O.ntmpl; i++) fprintf(tf, "template: %s\n", tmpl_source(O.tmpl[i]));
    }
    fprintf(tf, "requests: %llu completed, %llu errors, %llu unanswered\n", (unsigned long long)rec,
            (unsigned long long)(T->rec_errors[0] + T->rec_errors[1]), (unsigned long long)unanswered);
    if (T->first_error) fprintf(tf, "first error: %s\n", T->first_error);
    fprintf(tf, "throughput: %.1f req/s", T->achieved);
    if (O.rate > 0) fprintf(tf, " (requested %.1f, achieved %.2f%%)", O.rate, 100.0 * T->achieved / O.rate);
    fputc('\n', tf);
    fprintf(tf, "latency (usec): ");
    lat_fields(tf, O.mode == MODE_PUBSUB ? &T->deliver : &T->all, 0);
    fputc('\n', tf);
    if (O.mode == MODE_OPEN || O.mode == MODE_PUBSUB) {
        fprintf(tf, "send lag (usec): ");
        lat_fields(tf, &T->lag, 0);
        fputc('\n', tf);
    }
    if (O.ntmpl > 1 || O.miss)
        for (int i = 0; i < O.ntmpl; i++) {
            fprintf(tf, "  %s: %llu, ", tmpl_command(O.tmpl[i]), (unsigned long long)T->recorded[i]);
            lat_fields(tf, &T->hist[i], 0);
            fputc('\n', tf);
        }
    if (O.miss) {
        double hr = miss_hit_ratio(T->hits, T->misses);
        fprintf(tf, "hits: %llu, misses: %llu, hit ratio ", (unsigned long long)T->hits,
                (unsigned long long)T->misses);
        if (hr < 0) fputs("n/a", tf);
        else fprintf(tf, "%.4f", hr);
        fprintf(tf, " (%s, the first template)\n", tmpl_command(O.tmpl[0]));
        fprintf(tf, "on miss: %s\n", tmpl_source(O.tmpl[MISS_TIX]));
        fprintf(tf, "  %s: %llu, %llu errors, %.1f req/s, ", tmpl_command(O.tmpl[MISS_TIX]),
                (unsigned long long)T->recorded[MISS_TIX], (unsigned long long)T->rec_errors[MISS_TIX],
                (double)T->recorded[MISS_TIX] / T->window_s);
        lat_fields(tf, &T->hist[MISS_TIX], 0);
        fputc('\n', tf);
    }
    if (O.reply_ids)
        fprintf(tf, "reply ids: %llu requests took an id from an earlier reply, %llu found none (0-0)\n",
                (unsigned long long)T->ids_used, (unsigned long long)T->ids_none);

    if (!O.json) return;
    FILE *f = json_stdout ? stdout : fopen(O.json, "w");
    if (!f) die("cannot write %s: %s", O.json, strerror(errno));
    fprintf(f, "{\"mode\": \"%s\", \"threads\": %d, \"connections\": %d, \"pipeline\": %d,\n", mode_name[O.mode],
            O.threads, O.conns, O.pipeline);
    fprintf(f, " \"templates\": [");
    for (int i = 0; i < O.ntmpl; i++) {
        if (i) fputs(", ", f);
        json_str(f, tmpl_source(O.tmpl[i]));
    }
    fprintf(f, "], \"ratio\": [");
    for (int i = 0; i < O.ntmpl; i++) fprintf(f, "%s%d", i ? ", " : "", O.ratio[i]);
    fprintf(f, "],\n \"duration_s\": %.6f, \"requested_rate\": ", T->window_s);
    if (O.rate > 0) fprintf(f, "%.3f", O.rate);
    else fputs("null", f);
    fprintf(f, ", \"achieved_rate\": %.3f,\n", T->achieved);
    fprintf(f, " \"requests\": %llu, \"errors\": %llu, \"unanswered\": %llu, \"sent\": %llu, \"completed_total\": %llu,"
               " \"errors_total\": %llu,\n \"first_error\": ",
            (unsigned long long)rec, (unsigned long long)(T->rec_errors[0] + T->rec_errors[1]),
            (unsigned long long)unanswered, (unsigned long long)T->sent, (unsigned long long)T->completed,
            (unsigned long long)T->errors);
    if (T->first_error) json_str(f, T->first_error);
    else fputs("null", f);
    const struct hist *main_h = O.mode == MODE_PUBSUB ? &T->deliver : &T->all;
    fprintf(f, ",\n \"latency_us\": ");
    lat_fields(f, main_h, 1);
    fprintf(f, ",\n \"send_lag_us\": ");
    if (O.mode == MODE_OPEN || O.mode == MODE_PUBSUB) lat_fields(f, &T->lag, 1);
    else fputs("null", f);
    fprintf(f, ",\n \"per_template\": [");
    for (int i = 0; i < O.ntmpl; i++) {
        fprintf(f, "%s{\"template\": ", i ? ", " : "");
        json_str(f, tmpl_source(O.tmpl[i]));
        fprintf(f, ", \"commands\": %d, \"requests\": %llu, \"errors\": %llu, \"latency_us\": ", O.nrep[i],
                (unsigned long long)T->recorded[i], (unsigned long long)T->rec_errors[i]);
        lat_fields(f, &T->hist[i], 1);
        fputc('}', f);
    }
    fprintf(f, "],\n \"histogram\": [");
    int first = 1;
    for (int i = 0; i < HIST_BUCKETS; i++) {
        if (!main_h->b[i]) continue;
        uint64_t lo, hi;
        hist_bucket_bounds(i, &lo, &hi);
        fprintf(f, "%s[%.3f, %llu]", first ? "" : ", ", (double)hi / 1e3, (unsigned long long)main_h->b[i]);
        first = 0;
    }
    fprintf(f, "],\n \"miss\": ");
    if (O.miss) {
        double hr = miss_hit_ratio(T->hits, T->misses);
        fputs("{\"template\": ", f);
        json_str(f, tmpl_source(O.tmpl[MISS_TIX]));
        fprintf(f, ", \"commands\": %d, \"hits\": %llu, \"misses\": %llu, \"hit_ratio\": ", O.nrep[MISS_TIX],
                (unsigned long long)T->hits, (unsigned long long)T->misses);
        if (hr < 0) fputs("null", f);
        else fprintf(f, "%.6f", hr);
        fprintf(f, ", \"hits_total\": %llu, \"misses_total\": %llu, \"requests\": %llu, \"errors\": %llu,"
                   " \"rate\": %.3f, \"sent_total\": %llu, \"unsent\": %llu, \"latency_us\": ",
                (unsigned long long)T->hits_total, (unsigned long long)T->misses_total,
                (unsigned long long)T->recorded[MISS_TIX], (unsigned long long)T->rec_errors[MISS_TIX],
                (double)T->recorded[MISS_TIX] / T->window_s, (unsigned long long)T->miss_sent,
                (unsigned long long)T->miss_unsent);
        lat_fields(f, &T->hist[MISS_TIX], 1);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fprintf(f, ",\n \"reply_ids\": ");
    if (O.reply_ids)
        fprintf(f, "{\"used\": %llu, \"none\": %llu}", (unsigned long long)T->ids_used,
                (unsigned long long)T->ids_none);
    else
        fputs("null", f);
    fprintf(f, ",\n \"pubsub\": ");
    if (O.mode == MODE_PUBSUB) {
        fprintf(f,
                "{\"publishers\": %d, \"subscribers\": %d, \"channels\": %d, \"payload\": %d, \"published\": %llu, "
                "\"delivered\": %llu, \"expected\": %llu, \"delivered_total\": %llu, \"expected_total\": %llu, "
                "\"deliveries_per_s\": %.3f, \"publish_latency_us\": ",
                O.publishers, O.subscribers, O.channels, O.payload, (unsigned long long)T->published,
                (unsigned long long)T->delivered_rec, (unsigned long long)T->expected_rec,
                (unsigned long long)T->delivered, (unsigned long long)T->expected,
                (double)T->delivered_rec / T->window_s);
        lat_fields(f, &T->all, 1);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs("}\n", f);
    if (f != stdout) fclose(f);
}

/* ---- command line ---- */

static void usage(FILE *f) {
    fputs("usage: hotkv-bench [options] TEMPLATE [TEMPLATE2]\n"
          "       hotkv-bench --pubsub --rate R [options]\n"
          "\n"
          "  -h HOST             server host (127.0.0.1)\n"
          "  -p PORT             server port (6379)\n"
          "  -s SOCKET           unix socket instead of TCP\n"
          "  -a PASSWORD         AUTH on every connection\n"
          "  --tls               connect over TLS (--cacert FILE to verify the server, --cert FILE --key FILE\n"
          "                      for a client certificate, --sni NAME: the server name sent, default the host)\n"
          "  -t, --threads N     generator threads (1)\n"
          "  -c, --connections N connections per thread (8)\n"
          "  -P N                pipeline: requests per batch on a connection, closed loop (1; 32 with --load)\n"
          "  -n N                total requests; without it the run lasts --duration\n"
          "  -d, --duration SEC  measured run time (10)\n"
          "      --warmup SEC    send but do not record for SEC first (0)\n"
          "      --rate R        open loop: R requests/s over all connections, latency from the schedule\n"
          "      --ratio A:B     with two templates, A of the first for B of the second (1:1)\n"
          "      --miss TEMPLATE when a reply to the first template is nil ($-1, RESP3 _), send TEMPLATE\n"
          "                      next on that connection, {key last} being the key that missed:\n"
          "                      --miss \"SET {key last} {value 100}\" \"GET {key zipfian 1000000 0.99}\"\n"
          "      --load          preload: closed loop, pipelined, needs -n\n"
          "      --pubsub        pub/sub delivery latency (needs --rate)\n"
          "      --publishers N  --subscribers M  --channels K  --payload BYTES (1, 1, 1, 64)\n"
          "      --json FILE     write the JSON report ('-': stdout, text to stderr)\n"
          "  -q, --quiet         no progress lines\n"
          "      --seed N        random seed (1)\n"
          "      --help\n"
          "\n"
          "Templates: words with placeholders {key uniform|sequence|zipfian N} {key zipfian N S} {key last}\n"
          "{value N} {rand N}"
          "{range N W} {conn} {reply id}, e.g. \"SET {key uniform 100000} {value 64}\". A \";\" word separates\n"
          "the commands of one request: \"MULTI ; SET {key uniform 100000} {value 64} ; GET {key last} ; EXEC\".\n"
          "{conn} is the connection's number; {reply id} the oldest stream id not yet used from the replies\n"
          "on that connection (0-0 if none): \"XACK s g {reply id} ; XREADGROUP GROUP g c{conn} COUNT 1 STREAMS s >\".\n",
          f);
}

static double parse_num(const char *s, const char *what, double lo, double hi) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) die("bad %s: '%s'", what, s);
    return v;
}

static void parse_args(int argc, char **argv) {
    enum {
        O_WARMUP = 256, O_RATE, O_RATIO, O_LOAD, O_PUBSUB, O_PUBS, O_SUBS, O_CHANS, O_PAYLOAD, O_JSON, O_SEED, O_HELP,
        O_MISS, O_TLS, O_CACERT, O_CERT, O_KEY, O_SNI
    };
    static const struct option lo[] = {
        {"threads", 1, 0, 't'},     {"connections", 1, 0, 'c'},  {"duration", 1, 0, 'd'}, {"quiet", 0, 0, 'q'},
        {"warmup", 1, 0, O_WARMUP}, {"rate", 1, 0, O_RATE},      {"ratio", 1, 0, O_RATIO}, {"load", 0, 0, O_LOAD},
        {"pubsub", 0, 0, O_PUBSUB}, {"publishers", 1, 0, O_PUBS}, {"subscribers", 1, 0, O_SUBS},
        {"channels", 1, 0, O_CHANS}, {"payload", 1, 0, O_PAYLOAD}, {"json", 1, 0, O_JSON}, {"seed", 1, 0, O_SEED},
        {"help", 0, 0, O_HELP},      {"miss", 1, 0, O_MISS},      {"tls", 0, 0, O_TLS},
        {"cacert", 1, 0, O_CACERT},  {"cert", 1, 0, O_CERT},      {"key", 1, 0, O_KEY},     {"sni", 1, 0, O_SNI},
        {0, 0, 0, 0}};
    int load = 0, pubsub = 0, ch;
    const char *miss_src = NULL;
    while ((ch = getopt_long(argc, argv, "h:p:s:a:t:c:P:n:d:q", lo, NULL)) != -1) {
        switch (ch) {
        case 'h': O.host = optarg; break;
        case 'p': O.port = (int)parse_num(optarg, "port", 1, 65535); break;
        case 's': O.sock = optarg; break;
        case 'a': O.auth = optarg; break;
        case 't': O.threads = (int)parse_num(optarg, "thread count", 1, 1024); break;
        case 'c': O.conns = (int)parse_num(optarg, "connection count", 1, 100000); break;
        case 'P': O.pipeline = (int)parse_num(optarg, "pipeline depth", 1, 100000); break;
        case 'n': O.requests = (uint64_t)parse_num(optarg, "request count", 1, 1e15); break;
        case 'd': O.duration = parse_num(optarg, "duration", 0.001, 1e7); break;
        case 'q': O.quiet = 1; break;
        case O_WARMUP: O.warmup = parse_num(optarg, "warmup", 0, 1e7); break;
        case O_RATE: O.rate = parse_num(optarg, "rate", 0.001, 1e10); break;
        case O_RATIO:
            if (sscanf(optarg, "%d:%d", &O.ratio[0], &O.ratio[1]) != 2 || O.ratio[0] < 0 || O.ratio[1] < 0 ||
                O.ratio[0] + O.ratio[1] == 0 || O.ratio[0] > 1000000 || O.ratio[1] > 1000000)
                die("bad ratio '%s' (A:B)", optarg);
            break;
        case O_LOAD: load = 1; break;
        case O_PUBSUB: pubsub = 1; break;
        case O_PUBS: O.publishers = (int)parse_num(optarg, "publisher count", 1, 100000); break;
        case O_SUBS: O.subscribers = (int)parse_num(optarg, "subscriber count", 0, 100000); break;
        case O_CHANS: O.channels = (int)parse_num(optarg, "channel count", 1, 1000000); break;
        case O_PAYLOAD: O.payload = (int)parse_num(optarg, "payload size", 1, 64 << 20); break;
        case O_JSON: O.json = optarg; break;
        case O_SEED: O.seed = (uint64_t)parse_num(optarg, "seed", 0, 1e18); break;
        case O_MISS: miss_src = optarg; break;
        case O_TLS: O.tls = 1; break;
        case O_CACERT: O.cacert = optarg; break;
        case O_CERT: O.cert = optarg; break;
        case O_KEY: O.key = optarg; break;
        case O_SNI: O.sni = optarg; break;
        case O_HELP: usage(stdout); exit(0);
        default: usage(stderr); exit(1);
        }
    }
    int ntmpl = argc - optind;
    if (pubsub) {
        if (ntmpl) die("--pubsub takes no template");
        if (O.rate <= 0) die("--pubsub needs --rate");
        if (load) die("--pubsub and --load do not mix");
        if (miss_src) die("--pubsub and --miss do not mix");
        O.mode = MODE_PUBSUB;
        return;
    }
    if (ntmpl < 1 || ntmpl > MAX_TEMPLATES) {
        usage(stderr);
        exit(1);
    }
    for (int i = 0; i < ntmpl; i++) {
        char err[256];
        O.tmpl[i] = tmpl_parse(argv[optind + i], err, sizeof(err));
        if (!O.tmpl[i]) die("template '%s': %s", argv[optind + i], err);
    }
    O.ntmpl = ntmpl;
    for (int i = 0; i < ntmpl; i++) {
        O.nrep[i] = tmpl_replies(O.tmpl[i]);
        O.reply_ids |= tmpl_uses_reply_id(O.tmpl[i]);
    }
    if (ntmpl == 1) O.ratio[0] = 1;
    if (miss_src) {
        char err[256];
        if (load) die("--miss is for a cache workload; --load only writes");
        if (O.nrep[0] != 1) die("--miss needs a first template of one command (its reply tells hit from miss)");
        if (!tmpl_draws_key(O.tmpl[0])) die("--miss needs a first template that draws a {key ...}");
        O.tmpl[MISS_TIX] = tmpl_parse_flags(miss_src, TMPL_KEY_GIVEN, err, sizeof(err));
        if (!O.tmpl[MISS_TIX]) die("--miss template '%s': %s", miss_src, err);
        O.nrep[MISS_TIX] = tmpl_replies(O.tmpl[MISS_TIX]);
        O.reply_ids |= tmpl_uses_reply_id(O.tmpl[MISS_TIX]);
        O.miss = 1;
    }
    if (load) {
        if (O.rate > 0) die("--load is closed loop; drop --rate");
        if (!O.requests) die("--load needs -n");
        O.mode = MODE_LOAD;
        if (!O.pipeline) O.pipeline = 32;
    } else {
        O.mode = O.rate > 0 ? MODE_OPEN : MODE_CLOSED;
        if (O.rate > 0 && O.pipeline) die("-P is for the closed loop; --rate sends on a schedule");
        if (!O.pipeline) O.pipeline = 1;
    }
}

/* ---- main ---- */

/* Thousands of subscribers need more descriptors than the usual soft
 * limit of 1024: raise it as far as the hard limit allows, and say so
 * before connecting when that is still too few. */
static void raise_fd_limit(int conns) {
    struct rlimit rl;
    rlim_t want = (rlim_t)conns + (rlim_t)O.threads + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want) return;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < want)
        die("%d connections need %llu file descriptors; the hard limit is %llu (ulimit -Hn)", conns,
            (unsigned long long)want, (unsigned long long)rl.rlim_max);
}

int main(int argc, char **argv) {
    parse_args(argc, argv);
    if (O.tls) {
        char why[256];
        if (O.sock) die("--tls needs a TCP connection, not a unix socket");
        if ((O.cert != NULL) != (O.key != NULL)) die("--cert and --key go together");
        if (tlsio_init(O.cacert, O.cert, O.key, why, sizeof(why)) < 0) die("TLS setup failed: %s", why);
    }
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_sigint};
    sigaction(SIGINT, &sa, NULL);

    int ncmd = O.mode == MODE_PUBSUB ? 0 : O.threads * O.conns;
    int total = O.mode == MODE_PUBSUB ? O.publishers + O.subscribers : ncmd;
    raise_fd_limit(total);
    workers = calloc((size_t)O.threads, sizeof(*workers));
    for (int t = 0; t < O.threads; t++) {
        workers[t].id = t;
        workers[t].conns = calloc((size_t)total, sizeof(struct conn));
        rng_seed(&workers[t].rng, O.seed * 1000003 + (uint64_t)t);
        for (int i = 0; i < NSLOTS; i++) hist_init(&workers[t].hist[i]);
        hist_init(&workers[t].deliver);
        hist_init(&workers[t].lag);
        workers[t].epfd = epoll_create1(EPOLL_CLOEXEC);
    }

    /* Connect everything (and subscribe) before any load starts. */
    int npub = 0;
    for (int i = 0; i < total; i++) {
        struct worker *w = &workers[i % O.threads];
        struct conn *c = &w->conns[w->nconns++];
        c->w = w;
        c->index = (uint64_t)i;
        c->fd = connect_one();
        c->quota = UINT64_MAX;
        char type, msg[256];
        if (O.auth) {
            const char *av[] = {"AUTH", O.auth};
            sync_command(c->fd, 2, av, 1, &type, msg, sizeof(msg));
            if (type != '+') die("AUTH failed: %s", msg);
        }
        if (O.mode == MODE_PUBSUB) {
            if (i < O.publishers) {
                c->role = ROLE_PUB;
                c->channel = npub++ % O.channels;
            } else {
                c->role = ROLE_SUB;
                int s = i - O.publishers;
                char chan[32];
                snprintf(chan, sizeof(chan), "chan_%d", s % O.channels);
                /* Subscriber s listens on channel s mod K. */
                const char *av[] = {"SUBSCRIBE", chan};
                sync_command(c->fd, 2, av, 1, &type, msg, sizeof(msg));
                if (type != '*' && type != '>') die("SUBSCRIBE failed: %s", msg);
                c->channel = s % O.channels;
                if (s / O.channels + 1 > subs_per_channel_max) subs_per_channel_max = s / O.channels + 1;
            }
        } else {
            c->role = ROLE_CMD;
        }
        set_nonblocking(c->fd);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev);
    }

    /* Split -n over the sending connections. */
    int nsend = O.mode == MODE_PUBSUB ? O.publishers : ncmd;
    if (O.requests) {
        int k = 0;
        for (int t = 0; t < O.threads; t++)
            for (int i = 0; i < workers[t].nconns; i++) {
                struct conn *c = &workers[t].conns[i];
                if (c->role == ROLE_SUB) continue;
                c->quota = O.requests / (uint64_t)nsend + ((uint64_t)k < O.requests % (uint64_t)nsend);
                k++;
            }
    }

    /* Whole microseconds: pub/sub payloads carry times in microseconds. */
    t_start = (now_ns() + 20000000ULL) / 1000 * 1000;
    t_measure = t_start + (uint64_t)(O.warmup * 1e6) * 1000;
    t_end = O.requests ? UINT64_MAX : t_measure + (uint64_t)(O.duration * 1e6) * 1000;
    if (O.mode == MODE_OPEN || O.mode == MODE_PUBSUB) {
        /* Each sender runs its own fixed schedule at rate/nsend, phases
         * spread so the senders do not fire together. */
        double interval = (double)nsend * 1e9 / O.rate;
        int k = 0;
        for (int t = 0; t < O.threads; t++)
            for (int i = 0; i < workers[t].nconns; i++) {
                struct conn *c = &workers[t].conns[i];
                if (c->role == ROLE_SUB) continue;
                c->interval_ns = interval;
                c->sched_base = t_start + (uint64_t)(interval * k / nsend);
                c->next_ns = c->sched_base;
                k++;
            }
    }
    for (int t = 0; t < O.threads; t++)
        if (pthread_create(&workers[t].th, NULL, worker_main, &workers[t])) die("pthread_create failed");

    /* Watch the run: progress once a second; stop when everything is sent
     * and answered (and delivered), or when the drain period runs out. */
    uint64_t last_print = t_start, last_done = 0, last_hits = 0, last_misses = 0;
    uint64_t drain_ns = (uint64_t)(O.duration * 1e9 / 2);
    if (drain_ns < DRAIN_MIN_NS) drain_ns = DRAIN_MIN_NS;
    int progress = !O.quiet;
    for (;;) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        if (atomic_load(&stop_flag)) break;
        if (interrupted) {
            fprintf(stderr, "hotkv-bench: interrupted, reporting what was measured\n");
            break;
        }
        uint64_t now = now_ns();
        uint64_t done = 0, out = 0, deliv = 0, exp = 0, hits = 0, misses = 0;
        int idle = 1;
        for (int t = 0; t < O.threads; t++) {
            done += atomic_load_explicit(&workers[t].a_completed, memory_order_relaxed);
            out += atomic_load_explicit(&workers[t].a_outstanding, memory_order_relaxed);
            deliv += atomic_load_explicit(&workers[t].a_delivered, memory_order_relaxed);
            exp += atomic_load_explicit(&workers[t].a_expected, memory_order_relaxed);
            idle &= atomic_load_explicit(&workers[t].a_idle, memory_order_relaxed);
            hits += atomic_load_explicit(&workers[t].a_hits, memory_order_relaxed);
            misses += atomic_load_explicit(&workers[t].a_misses, memory_order_relaxed);
        }
        if (progress && now >= t_start && now - last_print >= 1000000000ULL) {
            fprintf(stderr, "[%5.1fs] %llu requests, %.0f req/s", (double)(now - t_start) / 1e9,
                    (unsigned long long)done, (double)(done - last_done) * 1e9 / (double)(now - last_print));
            if (O.miss && hits + misses > last_hits + last_misses)
                fprintf(stderr, ", hit ratio %.4f", miss_hit_ratio(hits - last_hits, misses - last_misses));
            fputc('\n', stderr);
            last_print = now;
            last_done = done;
            last_hits = hits;
            last_misses = misses;
        }
        int past_end = O.requests ? idle : now >= t_end;
        if (past_end && idle && out == 0 && deliv >= exp) break;
        if (!O.requests && now >= t_end + drain_ns) break;
    }
    atomic_store(&stop_flag, 1);
    for (int t = 0; t < O.threads; t++) pthread_join(workers[t].th, NULL);
    uint64_t t_stop = now_ns();

    struct totals T;
    memset(&T, 0, sizeof(T));
    for (int i = 0; i < NSLOTS; i++) hist_init(&T.hist[i]);
    hist_init(&T.all);
    hist_init(&T.deliver);
    hist_init(&T.lag);
    for (int t = 0; t < O.threads; t++) {
        struct worker *w = &workers[t];
        for (int i = 0; i < NSLOTS; i++) {
            hist_merge(&T.hist[i], &w->hist[i]);
            /* The --miss requests have figures of their own. */
            if (i < MAX_TEMPLATES) hist_merge(&T.all, &w->hist[i]);
            T.recorded[i] += w->recorded[i];
            T.rec_errors[i] += w->rec_errors[i];
        }
        T.hits += w->hits;
        T.misses += w->misses;
        T.hits_total += w->hits_total;
        T.misses_total += w->misses_total;
        T.miss_sent += w->miss_sent;
        T.miss_unsent += w->miss_dropped;
        for (int i = 0; i < w->nconns; i++) T.miss_unsent += w->conns[i].pend.count;
        hist_merge(&T.deliver, &w->deliver);
        hist_merge(&T.lag, &w->lag);
        T.sent += w->sent;
        T.completed += w->completed;
        T.errors += w->errors;
        T.published += w->published;
        T.delivered += w->delivered;
        T.expected += w->expected;
        T.delivered_rec += w->delivered_rec;
        T.ids_used += w->ids_used;
        T.ids_none += w->ids_none;
        T.expected_rec += w->expected_rec;
        if (w->last_done_ns > T.last_done_ns) T.last_done_ns = w->last_done_ns;
        if (!T.first_error && w->first_error[0]) T.first_error = w->first_error;
    }
    /* The measured window: the requested duration, or longer when replies
     * kept coming after it (a server that fell behind); with -n, until the
     * last reply. */
    double window = O.requests || interrupted ? 0 : O.duration;
    if (T.last_done_ns > t_measure) {
        double busy = (double)(T.last_done_ns - t_measure) / 1e9;
        if (busy > window) window = busy;
    }
    if (window <= 0) window = (double)(t_stop - t_measure) / 1e9;
    T.window_s = window;
    T.achieved = (double)(T.recorded[0] + T.recorded[1]) / window;
    report(&T);
    if (atomic_load(&lost_flag)) {
        fprintf(stderr, "hotkv-bench: %s\n", lost_msg);
        return 2;
    }
    return 0;
}
