/* journal.c - per-worker record streams and their ordered merge; see
 * journal.h for the ordering argument and docs/journal.md for how the
 * AOF (aof.c) and, later, replication consume it.
 *
 * A stream is a linked list of chunks. The producer (the worker) writes a
 * record into its tail chunk and then publishes it by storing the chunk's
 * length with release order; when the record does not fit it links a new
 * chunk (release) and never writes the old one again. The consumer reads
 * lengths with acquire order and frees a chunk once it has read all of it
 * and a successor exists. Nothing else is shared between the two but the
 * byte counters that bound a stream, and the durable count the consumer
 * publishes back.
 *
 * Everything the merge touches (the consumer half of each stream, the
 * expected seqs, the DEBUG session's output, the sink) is under the reader
 * lock. */
#include "journal.h"

#include "../core/alloc.h"
#include "../core/buf.h"
#include "../core/util.h"
#include "../store/db.h"
#include "../store/lockset.h"
#include "server.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Atomic int journal_on;
_Atomic int journal_hold;

struct jchunk {
    _Atomic(struct jchunk *) next;
    _Atomic size_t len; /* published bytes */
    size_t cap;
    char data[];
};

/* A record: this header, ntags tags, then the RESP bytes; padded to 8. */
struct jrec {
    uint32_t size;
    uint32_t ntags;
    int32_t start_db, end_db;
    uint64_t resp_len;
};

struct jtag {
    uint64_t shard;
    uint64_t seq;
};

struct jstream {
    /* Producer (the worker thread). */
    struct jchunk *tail;
    _Atomic unsigned long long produced; /* bytes appended */
    uint64_t nrec;                       /* records appended */
    uint64_t nrec_woken;                 /* nrec when the journal thread was last woken */
    /* Consumer (under read_lock), on a line of its own. */
    struct jchunk *head __attribute__((aligned(64)));
    size_t rpos;
    _Atomic unsigned long long consumed; /* bytes consumed (read by the producer's limit check) */
    uint64_t nrec_consumed;
    /* Published by the consumer, read by the worker. */
    _Atomic uint64_t durable;
} __attribute__((aligned(64)));

static struct jstream *streams;
static int nstreams;
static _Atomic size_t limit_bytes;
static _Atomic int overflowed;
static pthread_mutex_t read_lock = PTHREAD_MUTEX_INITIALIZER;
/* Consumer state: next expected seq per shard. */
static uint64_t *expect;

/* The continuous consumer (read_lock; sink_on mirrors it for workers). */
static journal_sink_fn sink_fn;
static void *sink_arg;
static _Atomic int sink_on;
static _Atomic int wake_fd = -1;

/* The DEBUG JOURNAL session. dbg_on is atomic because STOP clears it with
 * the shards held but without the reader lock; the rest is read_lock's. */
static _Atomic int dbg_on;
static struct hk_buf dbg_out;
static int dbg_db = -1;
static size_t dbg_limit; /* per stream, as DEBUG JOURNAL START gave it */
static int dbg_lost;     /* the session's own cap was passed (AOF attached) */
static struct journal_cut dbg_cut;
static int dbg_cut_set;

#define CHUNK_MIN 4096
/* Small enough that an idle stream's last chunk holds little, and that
 * eviction is not left to make room for a big step at once. */
#define CHUNK_MAX (64 * 1024)

/* Bytes of the chunks allocated after each stream's first (the records
 * waiting for the merge, and the chunk they are written into): the AOF's
 * buffer, which eviction does not count, as Redis does not count its
 * aof_buf. The first chunks are freed uncounted, hence the floor. */
static _Atomic long long grown_bytes;

unsigned long long journal_buffer_bytes(void) {
    long long v = atomic_load_explicit(&grown_bytes, memory_order_relaxed);
    return v > 0 ? (unsigned long long)v : 0;
}

static struct jchunk *chunk_new(size_t cap) {
    struct jchunk *c = hk_malloc(sizeof(*c) + cap);
    atomic_fetch_add_explicit(&grown_bytes, (long long)hk_usable_size(c), memory_order_relaxed);
    atomic_init(&c->next, NULL);
    atomic_init(&c->len, 0);
    c->cap = cap;
    return c;
}

void journal_init(int nworkers) {
    nstreams = nworkers;
    /* Each stream on its own cache lines, as its type says (a plain
     * allocation is only 16-byte aligned). Kept for the server's life,
     * like the shards. */
    streams = aligned_alloc(64, (size_t)nworkers * sizeof(*streams));
    memset(streams, 0, (size_t)nworkers * sizeof(*streams));
    for (int i = 0; i < nworkers; i++) {
        struct jchunk *c = chunk_new(CHUNK_MIN);
        streams[i].tail = streams[i].head = c;
    }
    atomic_store_explicit(&grown_bytes, 0, memory_order_relaxed);
    expect = hk_calloc(ks.nshards, sizeof(uint64_t));
}

int journal_nworkers(void) { return nstreams; }

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

void journal_append(int w, const struct lockset *ls, unsigned one, int start_db, int end_db, const char *resp,
                    size_t len) {
    if (atomic_load_explicit(&overflowed, memory_order_relaxed)) return;
    struct jstream *js = &streams[w];
    unsigned ntags = ls ? ls_count(ls) : 1;
    size_t need = align8(sizeof(struct jrec) + ntags * sizeof(struct jtag) + len);
    if (need > UINT32_MAX) {
        /* A record's size is 32 bits: a bigger one is lost, not cut. */
        atomic_store(&overflowed, 1);
        return;
    }
    unsigned long long produced = atomic_load_explicit(&js->produced, memory_order_relaxed);
    unsigned long long consumed = atomic_load_explicit(&js->consumed, memory_order_relaxed);
    if (produced - consumed + need > atomic_load_explicit(&limit_bytes, memory_order_relaxed)) {
        /* A gap would stall the merge for good: stop recording instead,
         * and let the reader report it. */
        atomic_store(&overflowed, 1);
        return;
    }
    struct jchunk *c = js->tail;
    size_t pos = atomic_load_explicit(&c->len, memory_order_relaxed);
    if (pos + need > c->cap) {
        size_t cap = c->cap * 2 > CHUNK_MAX ? CHUNK_MAX : c->cap * 2;
        if (cap < need) cap = need;
        struct jchunk *n = chunk_new(cap);
        atomic_store_explicit(&c->next, n, memory_order_release);
        js->tail = c = n;
        pos = 0;
    }
    char *p = c->data + pos;
    struct jrec h = {(uint32_t)need, ntags, start_db, end_db, len};
    memcpy(p, &h, sizeof(h));
    struct jtag *tags = (struct jtag *)(p + sizeof(h));
    for (unsigned i = 0; i < ntags; i++) {
        unsigned s = ls ? ls_at(ls, i) : one;
        tags[i].shard = s;
        tags[i].seq = ++ks.shards[s].jseq;
    }
    memcpy(p + sizeof(h) + ntags * sizeof(struct jtag), resp, len);
    atomic_store_explicit(&c->len, pos + need, memory_order_release);
    atomic_store_explicit(&js->produced, produced + need, memory_order_relaxed);
    js->nrec++;
}

/* The record at the head of js, or NULL when none is published. */
static const struct jrec *peek(struct jstream *js) {
    for (;;) {
        struct jchunk *c = js->head;
        if (js->rpos < atomic_load_explicit(&c->len, memory_order_acquire)) return (const struct jrec *)(c->data + js->rpos);
        struct jchunk *n = atomic_load_explicit(&c->next, memory_order_acquire);
        if (!n) return NULL;
        /* The producer may have published one last record before linking. */
        if (js->rpos < atomic_load_explicit(&c->len, memory_order_acquire)) return (const struct jrec *)(c->data + js->rpos);
        js->head = n;
        js->rpos = 0;
        atomic_fetch_sub_explicit(&grown_bytes, (long long)hk_usable_size(c), memory_order_relaxed);
        hk_free(c);
    }
}

static void advance(struct jstream *js, const struct jrec *r) {
    js->rpos += r->size;
    js->nrec_consumed++;
    atomic_store_explicit(&js->consumed, atomic_load_explicit(&js->consumed, memory_order_relaxed) + r->size,
                          memory_order_relaxed);
}

/* Drop every record the stream has published (read_lock held). Only the
 * chunk links are followed, never the producer's tail: a record without
 * tags (PUBLISH) may be appended meanwhile, and is then merely kept. */
static void stream_skip_all(struct jstream *js) {
    const struct jrec *r;
    while ((r = peek(js))) advance(js, r);
}

void journal_reader_lock(void) { pthread_mutex_lock(&read_lock); }
void journal_reader_unlock(void) { pthread_mutex_unlock(&read_lock); }

/* A journal nobody records starts over: what the streams hold is
 * dropped and every shard's next seq is expected (read_lock and every
 * shard held). */
static void restart_streams(void) {
    for (int i = 0; i < nstreams; i++) stream_skip_all(&streams[i]);
    for (unsigned s = 0; s < ks.nshards; s++) expect[s] = ks.shards[s].jseq + 1;
}

static size_t merge_locked(void);

void journal_start(size_t limit) {
    if (!atomic_load(&sink_on)) {
        restart_streams();
        atomic_store(&limit_bytes, limit);
        atomic_store(&overflowed, 0);
        dbg_cut_set = 0;
    } else {
        /* The AOF keeps what the streams hold: the session begins at a
         * cut instead. What was merged before it reaches nobody new. */
        merge_locked();
        journal_cut_take(&dbg_cut);
        dbg_cut_set = 1;
    }
    dbg_out.len = 0;
    dbg_db = -1;
    dbg_lost = 0;
    dbg_limit = limit;
    atomic_store(&dbg_on, 1);
    atomic_store(&journal_on, 1);
}

void journal_stop(void) {
    if (atomic_load(&sink_on)) {
        /* The AOF still records: only the session ends. */
        atomic_store(&dbg_on, 0);
        return;
    }
    /* Nothing more is recorded; what the streams hold can still be read. */
    atomic_store(&journal_on, 0);
}

static int ready(const struct jrec *r) {
    const struct jtag *t = (const struct jtag *)(r + 1);
    for (uint32_t i = 0; i < r->ntags; i++)
        if (expect[t[i].shard] != t[i].seq) return 0;
    return 1;
}

static void out_add(struct hk_buf *o, const void *p, size_t n) { hk_buf_add(o, p, n, 4096); }

size_t journal_select_resp(char buf[JOURNAL_SELECT_MAX], int db) {
    char num[HK_LONG_STR_SIZE];
    int nl = hk_ll2str(num, db);
    return (size_t)snprintf(buf, JOURNAL_SELECT_MAX, "*2\r\n$6\r\nSELECT\r\n$%d\r\n%s\r\n", nl, num);
}

/* The DEBUG session's copy of a merged record. */
static void dbg_add(const struct journal_rec *v) {
    if (dbg_cut_set && !journal_after_cut(&dbg_cut, v)) return;
    if (dbg_lost) return;
    char sel[JOURNAL_SELECT_MAX];
    size_t sl = v->start_db != dbg_db ? journal_select_resp(sel, v->start_db) : 0;
    /* With the AOF attached the streams are unbounded: the session's
     * output is bounded instead, by the same amount per worker. */
    if (atomic_load_explicit(&sink_on, memory_order_relaxed) &&
        dbg_out.len + sl + v->len > dbg_limit * (size_t)nstreams) {
        dbg_lost = 1;
        return;
    }
    if (sl) out_add(&dbg_out, sel, sl);
    out_add(&dbg_out, v->resp, v->len);
    dbg_db = v->end_db;
}

static void consume(int w, const struct jrec *r) {
    struct jstream *js = &streams[w];
    const struct jtag *t = (const struct jtag *)(r + 1);
    for (uint32_t i = 0; i < r->ntags; i++) expect[t[i].shard]++;
    if (r->resp_len) {
        struct journal_rec v = {w,
                                atomic_load_explicit(&js->consumed, memory_order_relaxed),
                                r->ntags,
                                r->ntags ? (unsigned)t[0].shard : 0,
                                r->ntags ? t[0].seq : 0,
                                r->start_db,
                                r->end_db,
                                (const char *)(t + r->ntags),
                                r->resp_len};
        if (atomic_load_explicit(&dbg_on, memory_order_relaxed)) dbg_add(&v);
        if (sink_fn) sink_fn(sink_arg, &v);
    }
    advance(js, r);
}

static size_t merge_locked(void) {
    size_t n = 0;
    for (;;) {
        int progress = 0;
        for (int i = 0; i < nstreams; i++) {
            const struct jrec *r;
            while ((r = peek(&streams[i])) && ready(r)) {
                consume(i, r);
                progress = 1;
                n++;
            }
        }
        if (!progress) break;
    }
    return n;
}

size_t journal_merge(void) {
    pthread_mutex_lock(&read_lock);
    size_t n = merge_locked();
    pthread_mutex_unlock(&read_lock);
    return n;
}

int journal_read(char **out, size_t *outlen) {
    pthread_mutex_lock(&read_lock);
    merge_locked();
    *out = dbg_out.p;
    *outlen = dbg_out.len;
    dbg_out = (struct hk_buf){0};
    int lost = atomic_load(&overflowed) || dbg_lost;
    pthread_mutex_unlock(&read_lock);
    return lost ? -1 : 0;
}

/* ---- the continuous consumer ------------------------------------------- */

void journal_attach(journal_sink_fn fn, void *arg) {
    if (fn) {
        if (!atomic_load(&journal_on)) {
            restart_streams();
            atomic_store(&dbg_on, 0);
        } else {
            /* A DEBUG session is recording: what it has so far is not
             * the sink's. */
            merge_locked();
        }
        /* Records a DEBUG session lost to its limit stay lost to it. */
        if (atomic_exchange(&overflowed, 0)) dbg_lost = 1;
        sink_fn = fn;
        sink_arg = arg;
        atomic_store(&limit_bytes, SIZE_MAX);
        atomic_store(&sink_on, 1);
        atomic_store(&journal_on, 1);
        return;
    }
    /* Every shard is held: every record with tags is complete, so the
     * sink gets all of them before it goes. */
    merge_locked();
    sink_fn = NULL;
    sink_arg = NULL;
    atomic_store(&sink_on, 0);
    int dbg = atomic_load(&dbg_on);
    if (dbg) {
        atomic_store(&limit_bytes, dbg_limit);
        dbg_cut_set = 0;
    }
    atomic_store(&journal_on, dbg);
}

void journal_consumed(uint64_t *out) {
    for (int i = 0; i < nstreams; i++) out[i] = streams[i].nrec_consumed;
}

void journal_set_wake_fd(int fd) { atomic_store_explicit(&wake_fd, fd, memory_order_release); }

void journal_turn_end(int w) {
    struct jstream *js = &streams[w];
    if (js->nrec == js->nrec_woken) return;
    js->nrec_woken = js->nrec;
    if (!atomic_load_explicit(&sink_on, memory_order_relaxed)) return;
    /* Acquire: the eventfd was created before its number was published. */
    int fd = atomic_load_explicit(&wake_fd, memory_order_acquire);
    if (fd >= 0) {
        uint64_t one = 1;
        ssize_t r = write(fd, &one, sizeof(one));
        (void)r;
    }
}

uint64_t journal_recs(int w) { return streams[w].nrec; }

uint64_t journal_durable(int w) { return atomic_load_explicit(&streams[w].durable, memory_order_acquire); }

static void wake_worker(int w) {
    if (!server.workers || w >= server.nworkers) return;
    uint64_t one = 1;
    ssize_t r = write(server.workers[w].evfd, &one, sizeof(one));
    (void)r;
}

void journal_publish_durable(const uint64_t *recs) {
    int hold = atomic_load(&journal_hold);
    for (int i = 0; i < nstreams; i++) {
        if (recs[i] <= atomic_load_explicit(&streams[i].durable, memory_order_relaxed)) continue;
        atomic_store_explicit(&streams[i].durable, recs[i], memory_order_release);
        if (hold) wake_worker(i);
    }
}

void journal_release_all(void) {
    for (int i = 0; i < nstreams; i++) wake_worker(i);
}

/* ---- cuts --------------------------------------------------------------- */

void journal_cut_take(struct journal_cut *c) {
    if (!c->seq) c->seq = hk_malloc(ks.nshards * sizeof(uint64_t));
    if (!c->pos) c->pos = hk_malloc((size_t)(nstreams ? nstreams : 1) * sizeof(uint64_t));
    for (unsigned s = 0; s < ks.nshards; s++) c->seq[s] = ks.shards[s].jseq;
    for (int i = 0; i < nstreams; i++) c->pos[i] = atomic_load_explicit(&streams[i].produced, memory_order_relaxed);
}

void journal_cut_free(struct journal_cut *c) {
    hk_free(c->seq);
    hk_free(c->pos);
    c->seq = NULL;
    c->pos = NULL;
}

int journal_after_cut(const struct journal_cut *c, const struct journal_rec *r) {
    if (r->ntags) return r->seq0 > c->seq[r->shard0];
    return r->pos >= c->pos[r->worker];
}

int journal_cut_passed(const struct journal_cut *c) {
    for (unsigned s = 0; s < ks.nshards; s++)
        if (expect[s] <= c->seq[s]) return 0;
    return 1;
}
