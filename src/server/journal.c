/* journal.c - per-worker record streams and their ordered merge; see
 * journal.h for the ordering argument and docs/journal.md for the design
 * the AOF and replication will build on.
 *
 * A stream is a linked list of chunks. The producer (the worker) writes a
 * record into its tail chunk and then publishes it by storing the chunk's
 * length with release order; when the record does not fit it links a new
 * chunk (release) and never writes the old one again. The consumer reads
 * lengths with acquire order and frees a chunk once it has read all of it
 * and a successor exists. Nothing else is shared between the two. */
#include "journal.h"

#include "../core/alloc.h"
#include "../core/buf.h"
#include "../core/util.h"
#include "../store/db.h"
#include "../store/lockset.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Atomic int journal_on;

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
    _Atomic unsigned long long produced;
    /* Consumer (under read_lock). */
    struct jchunk *head;
    size_t rpos;
    _Atomic unsigned long long consumed;
} __attribute__((aligned(64)));

static struct jstream *streams;
static int nstreams;
static _Atomic size_t limit_bytes;
static _Atomic int overflowed;
static pthread_mutex_t read_lock = PTHREAD_MUTEX_INITIALIZER;
/* Consumer state: next expected seq per shard, the database the merged
 * output is in. */
static uint64_t *expect;
static int out_db = -1;

#define CHUNK_MIN 4096
#define CHUNK_MAX (1024 * 1024)

static struct jchunk *chunk_new(size_t cap) {
    struct jchunk *c = hk_malloc(sizeof(*c) + cap);
    atomic_init(&c->next, NULL);
    atomic_init(&c->len, 0);
    c->cap = cap;
    return c;
}

void journal_init(int nworkers) {
    nstreams = nworkers;
    /* Each stream on its own cache line, as its type says (a plain
     * allocation of one 64-byte stream is only 16-byte aligned). Kept
     * for the server's life, like the shards. */
    streams = aligned_alloc(64, (size_t)nworkers * sizeof(*streams));
    memset(streams, 0, (size_t)nworkers * sizeof(*streams));
    for (int i = 0; i < nworkers; i++) {
        struct jchunk *c = chunk_new(CHUNK_MIN);
        streams[i].tail = streams[i].head = c;
    }
    expect = hk_calloc(ks.nshards, sizeof(uint64_t));
}

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
}

/* Drop everything a stream holds (every shard held: its producer is not
 * appending). */
static void stream_skip_all(struct jstream *js) {
    while (js->head != js->tail) {
        struct jchunk *n = atomic_load_explicit(&js->head->next, memory_order_acquire);
        hk_free(js->head);
        js->head = n;
    }
    js->rpos = atomic_load_explicit(&js->head->len, memory_order_acquire);
    atomic_store(&js->consumed, atomic_load(&js->produced));
}

void journal_reader_lock(void) { pthread_mutex_lock(&read_lock); }
void journal_reader_unlock(void) { pthread_mutex_unlock(&read_lock); }

void journal_start(size_t limit) {
    for (int i = 0; i < nstreams; i++) stream_skip_all(&streams[i]);
    for (unsigned s = 0; s < ks.nshards; s++) expect[s] = ks.shards[s].jseq + 1;
    out_db = -1;
    atomic_store(&limit_bytes, limit);
    atomic_store(&overflowed, 0);
    atomic_store(&journal_on, 1);
}

void journal_stop(void) { atomic_store(&journal_on, 0); }

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
        hk_free(c);
    }
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

static void out_select(struct hk_buf *o, int db) {
    char buf[JOURNAL_SELECT_MAX];
    out_add(o, buf, journal_select_resp(buf, db));
}

static void consume(struct jstream *js, const struct jrec *r, struct hk_buf *o) {
    const struct jtag *t = (const struct jtag *)(r + 1);
    for (uint32_t i = 0; i < r->ntags; i++) expect[t[i].shard]++;
    if (r->resp_len) {
        if (r->start_db != out_db) out_select(o, r->start_db);
        out_add(o, (const char *)(t + r->ntags), r->resp_len);
        out_db = r->end_db;
    }
    js->rpos += r->size;
    atomic_store_explicit(&js->consumed, atomic_load_explicit(&js->consumed, memory_order_relaxed) + r->size,
                          memory_order_relaxed);
}

int journal_read(char **out, size_t *outlen) {
    struct hk_buf o = {0};
    pthread_mutex_lock(&read_lock);
    for (;;) {
        int progress = 0;
        for (int i = 0; i < nstreams; i++) {
            const struct jrec *r;
            while ((r = peek(&streams[i])) && ready(r)) {
                consume(&streams[i], r, &o);
                progress = 1;
            }
        }
        if (!progress) break;
    }
    int lost = atomic_load(&overflowed);
    pthread_mutex_unlock(&read_lock);
    *out = o.p;
    *outlen = o.len;
    return lost ? -1 : 0;
}
