/* stream.c - the stream value's entries: ids, the packed nodes that hold
 * the entries, the node index, iteration in both directions, deletion,
 * trimming under the Redis 8.2 reference policies, the group bookkeeping
 * that depends on the entries (entries-read and lag, by Redis 8.4's
 * rules), and the type's
 * lifecycle (stream_type_ops). Consumer groups, consumers and pending
 * entries are stream_cg.c's. The node byte layout is described in
 * stream.h; nothing here knows a client, a reply or the keyspace. */
#include "stream.h"
#include "../core/alloc.h"
#include "../core/util.h"
#include "digest.h"
#include "stream_int.h"
#include "types.h"

#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

/* ---- ids ------------------------------------------------------------------- */

int streamid_incr(streamid *id) {
    if (id->seq != UINT64_MAX) {
        id->seq++;
        return 0;
    }
    if (id->ms == UINT64_MAX) return -1;
    id->ms++;
    id->seq = 0;
    return 0;
}

int streamid_decr(streamid *id) {
    if (id->seq != 0) {
        id->seq--;
        return 0;
    }
    if (id->ms == 0) return -1;
    id->ms--;
    id->seq = UINT64_MAX;
    return 0;
}

size_t streamid_fmt(const streamid *id, char *buf) {
    size_t n = (size_t)hk_ull2str(buf, id->ms);
    buf[n++] = '-';
    n += (size_t)hk_ull2str(buf + n, id->seq);
    buf[n] = '\0';
    return n;
}

/* One part of an id, read as Redis's string2ull reads it: a canonical
 * signed 64-bit decimal first (a negative one refused), otherwise what
 * strtoull(…, 10) accepts over the whole text (leading spaces, a sign,
 * leading zeros; a '-' wraps the value, out of range refused). */
static int id_part(const char *s, size_t len, uint64_t *out) {
    long long ll;
    if (len == 0) return -1;
    if (hk_str2ll(s, len, &ll)) {
        if (ll < 0) return -1;
        *out = (uint64_t)ll;
        return 0;
    }
    size_t i = 0;
    while (i < len && isspace((unsigned char)s[i])) i++;
    int neg = 0;
    if (i < len && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == len) return -1;
    uint64_t v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = neg ? 0 - v : v;
    return 0;
}

int streamid_parse(const char *s, size_t len, streamid *out, uint64_t missing_seq, int seq_star, int *seq_given) {
    /* Redis reads the argument as a C string of at most 127 bytes. */
    if (len > 127) return -1;
    const char *nul = memchr(s, '\0', len);
    if (nul) len = (size_t)(nul - s);
    const char *dash = memchr(s, '-', len);
    uint64_t ms, seq;
    if (!dash) {
        if (id_part(s, len, &ms)) return -1;
        out->ms = ms;
        out->seq = missing_seq;
        if (seq_given) *seq_given = 0;
        return 0;
    }
    size_t mlen = (size_t)(dash - s), rest = len - mlen - 1;
    if (id_part(s, mlen, &ms)) return -1;
    if (seq_star && rest == 1 && dash[1] == '*') {
        out->ms = ms;
        out->seq = 0;
        if (seq_given) *seq_given = -1;
        return 0;
    }
    if (id_part(dash + 1, rest, &seq)) return -1;
    out->ms = ms;
    out->seq = seq;
    if (seq_given) *seq_given = 1;
    return 0;
}

/* ---- varints ------------------------------------------------------------------ */

static inline size_t vlen(uint64_t v) {
    size_t n = 1;
    while (v >= 128) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline size_t vput(unsigned char *p, uint64_t v) {
    size_t n = 0;
    while (v >= 128) {
        p[n++] = (unsigned char)(v | 128);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

/* A varint from [p, end): its size, or 0 when it runs past end, past 64
 * bits, or is not in its shortest form. */
static inline size_t vget(const unsigned char *p, const unsigned char *end, uint64_t *out) {
    uint64_t v = 0;
    unsigned shift = 0;
    for (size_t i = 0; p + i < end; i++) {
        unsigned b = p[i];
        if (shift == 63 && b > 1) return 0;
        v |= (uint64_t)(b & 127) << shift;
        if (!(b & 128)) {
            if (b == 0 && i > 0) return 0;
            *out = v;
            return i + 1;
        }
        shift += 7;
    }
    return 0;
}

/* The back-length: the same 7-bit groups written so that they read from
 * the end backwards (the last byte holds the low bits and says whether
 * more precede it). Occupies vlen(v) bytes. */
static inline size_t bput(unsigned char *p, uint64_t v) {
    size_t k = vlen(v);
    for (size_t i = k; i-- > 0;) {
        p[i] = (unsigned char)((v & 127) | (i > 0 ? 128 : 0));
        v >>= 7;
    }
    return k;
}

/* The back-length that ends just before end, reading no lower than lo:
 * its size, or 0 when malformed. */
static inline size_t bget(const unsigned char *end, const unsigned char *lo, uint64_t *out) {
    uint64_t v = 0;
    unsigned shift = 0;
    for (size_t i = 1; i <= 10; i++) {
        if (end - i < lo) return 0;
        unsigned b = end[-(ptrdiff_t)i];
        if (shift == 63 && (b & 127) > 1) return 0;
        v |= (uint64_t)(b & 127) << shift;
        if (!(b & 128)) {
            *out = v;
            return i;
        }
        shift += 7;
    }
    return 0;
}

static inline uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t unzz(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

/* ---- elements -------------------------------------------------------------------- */

/* Field names and values are elements: a varint tag, then for a string
 * (tag bit 0 clear) tag>>1 bytes; an integer (tag bit 0 set) is the
 * zig-zag form tag>>1, for text that is the canonical decimal of a value
 * in [-2^62, 2^62). */
#define ELEM_INT_LIM (1LL << 62)

static int elem_as_int(const char *s, size_t len, int64_t *v) {
    if (len == 0 || len > 20) return 0;
    if (!((s[0] >= '0' && s[0] <= '9') || s[0] == '-')) return 0;
    long long x;
    if (!hk_str2ll(s, len, &x) || x < -ELEM_INT_LIM || x >= ELEM_INT_LIM) return 0;
    char buf[HK_LONG_STR_SIZE];
    int n = hk_ll2str(buf, x);
    if ((size_t)n != len || memcmp(buf, s, len) != 0) return 0;
    *v = x;
    return 1;
}

static size_t elem_put(unsigned char *p, const char *s, size_t len) {
    int64_t v;
    if (elem_as_int(s, len, &v)) return vput(p, zz(v) << 1 | 1);
    size_t k = vput(p, (uint64_t)len << 1);
    memcpy(p + k, s, len);
    return k + len;
}

/* The element at p of a valid node: its text (an integer's in buf) and
 * its size. */
static inline size_t elem_get(const unsigned char *p, const unsigned char *end, const char **s, size_t *len,
                              char *buf) {
    uint64_t tag = 0;
    size_t k = vget(p, end, &tag);
    if (tag & 1) {
        *len = (size_t)hk_ll2str(buf, (long long)unzz(tag >> 1));
        *s = buf;
        return k;
    }
    *s = (const char *)p + k;
    *len = (size_t)(tag >> 1);
    return k + (size_t)(tag >> 1);
}

static inline size_t elem_skip(const unsigned char *p, const unsigned char *end) {
    uint64_t tag = 0;
    size_t k = vget(p, end, &tag);
    return (tag & 1) ? k : k + (size_t)(tag >> 1);
}

/* Whether the element at p holds exactly s/len. */
static int elem_eq(const unsigned char *p, const unsigned char *end, const char *s, size_t len, size_t *adv) {
    const char *e;
    size_t elen;
    char buf[HK_LONG_STR_SIZE];
    *adv = elem_get(p, end, &e, &elen, buf);
    return elen == len && memcmp(e, s, len) == 0;
}

/* ---- nodes ----------------------------------------------------------------------- */

/* A node: its allocation size and used length, then the image (stream.h
 * describes it) starting at `count`. */
struct stream_node {
    uint32_t cap; /* image bytes allocated */
    uint32_t len; /* image bytes used */
    uint32_t count, live;
    uint64_t ms, seq;
    unsigned char data[];
};
#define NODE_HDR 24
#define NODE_OFF offsetof(struct stream_node, count)
_Static_assert(offsetof(struct stream_node, data) - NODE_OFF == NODE_HDR, "node header");

#define F_DELETED 1u
#define F_SAME 2u
#define MSD_ESC 63u
#define NODE_MAX_BYTES (1u << 30)

static inline unsigned char *nimg(const struct stream_node *n) { return (unsigned char *)n + NODE_OFF; }

static struct stream_node *node_alloc(size_t cap) {
    struct stream_node *n = hk_malloc(NODE_OFF + cap);
    size_t got = hk_usable_size(n) - NODE_OFF;
    n->cap = (uint32_t)(got > UINT32_MAX ? UINT32_MAX : got);
    return n;
}

/* Room for `more` bytes past len; the node may move. */
static struct stream_node *node_reserve(struct stream_node *n, size_t more) {
    size_t need = (size_t)n->len + more;
    if (need <= n->cap) return n;
    size_t cap = (size_t)n->cap * 2;
    if (cap < need) cap = need;
    if (cap < 64) cap = 64;
    n = hk_realloc(n, NODE_OFF + cap);
    size_t got = hk_usable_size(n) - NODE_OFF;
    n->cap = (uint32_t)(got > UINT32_MAX ? UINT32_MAX : got);
    return n;
}

/* Give back a sealed node's slack when a smaller allocation would do.
 * A fresh block and a copy, not realloc: allocators keep a block in place
 * when the new size is not much smaller. */
static struct stream_node *node_shrink(struct stream_node *n) {
    if (hk_good_size(NODE_OFF + n->len) >= hk_usable_size(n)) return n;
    struct stream_node *c = hk_malloc(NODE_OFF + n->len);
    memcpy(c, n, NODE_OFF + n->len);
    hk_free(n);
    size_t got = hk_usable_size(c) - NODE_OFF;
    c->cap = (uint32_t)(got > UINT32_MAX ? UINT32_MAX : got);
    return c;
}

/* The master fields of a node: how many, where the first is, and where
 * the entries start (image offsets). */
struct master {
    long long nf;
    size_t fields, entries;
};

static void node_master(const struct stream_node *n, struct master *m) {
    const unsigned char *b = nimg(n), *end = b + n->len, *p = b + NODE_HDR;
    uint64_t nf = 0;
    p += vget(p, end, &nf);
    m->nf = (long long)nf;
    m->fields = (size_t)(p - b);
    for (uint64_t i = 0; i < nf; i++) p += elem_skip(p, end);
    m->entries = (size_t)(p - b);
}

/* One entry as parsed from its node. */
struct ent {
    size_t start, end; /* image offsets, the back-length included */
    unsigned flags;
    streamid id;
    long long nfields;
    size_t elems; /* offset of the first element */
};

static void ent_parse(const struct stream_node *n, size_t off, long long master_nf, struct ent *e) {
    const unsigned char *b = nimg(n), *end = b + n->len, *p = b + off;
    unsigned b0 = *p++;
    uint64_t msd = b0 >> 2, x = 0;
    if (msd == MSD_ESC) {
        p += vget(p, end, &x);
        msd += x;
    }
    p += vget(p, end, &x);
    e->flags = b0 & 3;
    e->id.ms = n->ms + msd;
    e->id.seq = n->seq + (uint64_t)unzz(x);
    if (b0 & F_SAME) {
        e->nfields = master_nf;
    } else {
        p += vget(p, end, &x);
        e->nfields = (long long)x;
    }
    e->elems = (size_t)(p - b);
    long long ne = (b0 & F_SAME) ? e->nfields : 2 * e->nfields;
    for (long long i = 0; i < ne; i++) p += elem_skip(p, end);
    size_t body = (size_t)(p - (b + off));
    e->start = off;
    e->end = (size_t)(p - b) + vlen(body);
}

/* The entry ending at image offset pos (its back-length included). */
static void ent_parse_back(const struct stream_node *n, size_t pos, long long master_nf, struct ent *e) {
    const unsigned char *b = nimg(n);
    uint64_t body = 0;
    size_t k = bget(b + pos, b, &body);
    ent_parse(n, pos - k - (size_t)body, master_nf, e);
}

/* The id of the node's last entry, deleted or not. */
static void node_last_id(const struct stream_node *n, streamid *id) {
    struct master m;
    struct ent e;
    node_master(n, &m);
    ent_parse_back(n, n->len, m.nf, &e);
    *id = e.id;
}

static inline streamid node_master_id(const struct stream_node *n) {
    streamid id = {n->ms, n->seq};
    return id;
}

/* ---- the node index ---------------------------------------------------------------- */

/* The number of nodes whose master id is <= id (the node that may hold id
 * is nodes[first + k - 1] when k > 0). */
static size_t idx_upper(const struct stream *s, const streamid *id) {
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        streamid m = node_master_id(s->nodes[s->first + mid]);
        if (streamid_cmp(&m, id) <= 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void idx_push(struct stream *s, struct stream_node *n) {
    if (s->first + s->n == s->cap) {
        if (s->first > 0 && s->first >= s->n) {
            memmove(s->nodes, s->nodes + s->first, s->n * sizeof(*s->nodes));
            s->first = 0;
        } else {
            s->cap = s->cap ? s->cap * 2 : 4;
            s->nodes = hk_realloc(s->nodes, s->cap * sizeof(*s->nodes));
        }
    }
    s->nodes[s->first + s->n++] = n;
}

/* Take node ni (absolute) out of the index and free it. The shorter side
 * moves: returns 1 when the nodes before ni moved up one slot (first
 * grew), 0 when the nodes after it moved down one. */
static int idx_remove(struct stream *s, size_t ni) {
    size_t lo = s->first, hi = s->first + s->n;
    hk_free(s->nodes[ni]);
    int head;
    if (ni - lo < hi - 1 - ni) {
        memmove(&s->nodes[lo + 1], &s->nodes[lo], (ni - lo) * sizeof(*s->nodes));
        s->first++;
        head = 1;
    } else {
        memmove(&s->nodes[ni], &s->nodes[ni + 1], (hi - 1 - ni) * sizeof(*s->nodes));
        head = 0;
    }
    s->n--;
    if (s->n == 0) s->first = 0;
    return head;
}

/* After removals: give back an index that is mostly empty. Moves the
 * slots, so never while an iterator is open. */
static void idx_compact(struct stream *s) {
    if (s->cap <= 16 || s->n * 4 >= s->cap) return;
    memmove(s->nodes, s->nodes + s->first, s->n * sizeof(*s->nodes));
    s->first = 0;
    s->cap = s->n * 2 > 8 ? s->n * 2 : 8;
    s->nodes = hk_realloc(s->nodes, s->cap * sizeof(*s->nodes));
}

/* ---- the stream -------------------------------------------------------------------- */

struct stream *stream_new(void) { return hk_calloc(1, sizeof(struct stream)); }

void stream_free(struct stream *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) hk_free(s->nodes[s->first + i]);
    hk_free(s->nodes);
    stream_groups_free(s);
    hk_free(s);
}

struct kv *stream_new_entry(const char *key, size_t klen) {
    return kv_new_ptr(key, klen, OBJ_STREAM, ENC_STREAM, stream_new(), -1);
}

static size_t node_max_bytes(void) {
    long long mb = TLIM(stream_node_max_bytes);
    return mb <= 0 || mb > (long long)NODE_MAX_BYTES ? NODE_MAX_BYTES : (size_t)mb;
}

/* Whether the entry's fields are the node's master fields, in order. */
static int same_fields(const struct stream_node *n, const struct stream_field *fv, size_t nf) {
    struct master m;
    node_master(n, &m);
    if ((size_t)m.nf != nf) return 0;
    const unsigned char *b = nimg(n), *end = b + n->len, *p = b + m.fields;
    for (size_t i = 0; i < nf; i++) {
        size_t adv;
        if (!elem_eq(p, end, fv[i].f, fv[i].flen, &adv)) return 0;
        p += adv;
    }
    return 1;
}

void stream_append(struct stream *s, const streamid *id, const struct stream_field *fv, size_t nf) {
    struct stream_node *n = s->n ? s->nodes[s->first + s->n - 1] : NULL;
    size_t raw = 0;
    for (size_t i = 0; i < nf; i++) raw += fv[i].flen + fv[i].vlen;
    if (n) {
        long long me = TLIM(stream_node_max_entries);
        if ((size_t)n->len + raw >= node_max_bytes() || (me > 0 && (long long)n->count >= me) ||
            n->count == UINT32_MAX || (size_t)n->len + raw + 64 + nf * 40 > UINT32_MAX) {
            n = node_shrink(n);
            s->nodes[s->first + s->n - 1] = n;
            n = NULL;
        }
    }
    int same = 1;
    if (!n) {
        /* A new node: the master id is this entry's, the master fields
         * its field names. */
        size_t need = NODE_HDR + 10 + 2 * raw + 64 + nf * 40;
        n = node_alloc(need < 64 ? 64 : need);
        n->len = NODE_HDR;
        n->count = n->live = 0;
        n->ms = id->ms;
        n->seq = id->seq;
        unsigned char *p = nimg(n) + n->len;
        p += vput(p, nf);
        for (size_t i = 0; i < nf; i++) p += elem_put(p, fv[i].f, fv[i].flen);
        n->len = (uint32_t)(p - nimg(n));
        idx_push(s, n);
    } else {
        same = same_fields(n, fv, nf);
    }
    /* The worst case of the entry's encoding, then the entry itself. */
    size_t bound = 1 + 10 + 10 + 10 + 10 + raw + nf * 2 * 10;
    struct stream_node *grown = node_reserve(n, bound);
    if (grown != n) s->nodes[s->first + s->n - 1] = n = grown;
    unsigned char *b = nimg(n), *start = b + n->len, *p = start;
    uint64_t msd = id->ms - n->ms;
    if (msd < MSD_ESC) {
        *p++ = (unsigned char)(msd << 2 | (same ? F_SAME : 0));
    } else {
        *p++ = (unsigned char)(MSD_ESC << 2 | (same ? F_SAME : 0));
        p += vput(p, msd - MSD_ESC);
    }
    p += vput(p, zz((int64_t)(id->seq - n->seq)));
    if (!same) p += vput(p, nf);
    for (size_t i = 0; i < nf; i++) {
        if (!same) p += elem_put(p, fv[i].f, fv[i].flen);
        p += elem_put(p, fv[i].v, fv[i].vlen);
    }
    p += bput(p, (uint64_t)(p - start));
    n->len = (uint32_t)(p - b);
    n->count++;
    n->live++;
    s->length++;
    s->entries_added++;
    s->last_id = *id;
    if (s->length == 1) s->first_id = *id;
}

/* ---- iteration ------------------------------------------------------------------------ */

/* The iterator keeps: ni, the node it is on (absolute index; `loaded`
 * says whether pos is valid there), pos (forward: the next entry's
 * offset; backward: the end of the next entry), and the current entry. */
#define IT_NODE_NONE SIZE_MAX

static void it_load(struct stream_iter *it) {
    const struct stream *s = it->s;
    if (it->ni == IT_NODE_NONE || it->ni < s->first || it->ni >= s->first + s->n) {
        it->done = 1;
        return;
    }
    const struct stream_node *n = s->nodes[it->ni];
    struct master m;
    node_master(n, &m);
    it->master_nfields = m.nf;
    it->master_fields_pos = m.fields;
    it->entries_pos = m.entries;
    it->pos = it->rev ? n->len : m.entries;
    it->loaded = 1;
}

void stream_iter_start(struct stream_iter *it, struct stream *s, const streamid *start, const streamid *end, int rev) {
    memset(it, 0, sizeof(*it));
    it->s = s;
    it->rev = rev;
    if (start) it->start = *start;
    if (end) {
        it->end = *end;
    } else {
        it->end.ms = it->end.seq = UINT64_MAX;
    }
    if (!s->n || streamid_cmp(&it->start, &it->end) > 0) {
        it->done = 1;
        return;
    }
    size_t k = idx_upper(s, rev ? &it->end : &it->start);
    if (rev) {
        if (k == 0) {
            it->done = 1;
            return;
        }
        it->ni = s->first + k - 1;
    } else {
        it->ni = s->first + (k ? k - 1 : 0);
    }
    it->loaded = 0;
}

/* Step to the next node in the iterator's direction. */
static void it_next_node(struct stream_iter *it) {
    it->loaded = 0;
    if (it->rev) it->ni = it->ni > it->s->first ? it->ni - 1 : IT_NODE_NONE;
    else it->ni++;
}

int stream_iter_next(struct stream_iter *it, streamid *id, long long *nfields) {
    while (!it->done) {
        if (!it->loaded) {
            it_load(it);
            if (it->done) break;
        }
        const struct stream_node *n = it->s->nodes[it->ni];
        struct ent e;
        if (!it->rev) {
            if (it->pos >= n->len) {
                it_next_node(it);
                continue;
            }
            ent_parse(n, it->pos, it->master_nfields, &e);
            it->pos = e.end;
            if (e.flags & F_DELETED) continue;
            if (streamid_cmp(&e.id, &it->start) < 0) continue;
            if (streamid_cmp(&e.id, &it->end) > 0) {
                it->done = 1;
                break;
            }
        } else {
            if (it->pos <= it->entries_pos) {
                it_next_node(it);
                continue;
            }
            ent_parse_back(n, it->pos, it->master_nfields, &e);
            it->pos = e.start;
            if (e.flags & F_DELETED) continue;
            if (streamid_cmp(&e.id, &it->end) > 0) continue;
            if (streamid_cmp(&e.id, &it->start) < 0) {
                it->done = 1;
                break;
            }
        }
        it->cur = e.id;
        it->entry_start = e.start;
        it->entry_end = e.end;
        it->same_fields = (e.flags & F_SAME) != 0;
        it->nfields = e.nfields;
        it->fi = 0;
        it->fpos = it->same_fields ? it->master_fields_pos : e.elems;
        it->vpos = e.elems;
        if (id) *id = e.id;
        if (nfields) *nfields = e.nfields;
        return 1;
    }
    return 0;
}

void stream_iter_field(struct stream_iter *it, const char **f, size_t *flen, const char **v, size_t *vlen_) {
    if (it->done || !it->loaded || it->fi >= it->nfields) {
        *f = *v = "";
        *flen = *vlen_ = 0;
        return;
    }
    const struct stream_node *n = it->s->nodes[it->ni];
    const unsigned char *b = nimg(n), *end = b + n->len;
    if (it->same_fields) {
        it->fpos += elem_get(b + it->fpos, end, f, flen, it->fbuf);
    } else {
        it->vpos += elem_get(b + it->vpos, end, f, flen, it->fbuf);
    }
    it->vpos += elem_get(b + it->vpos, end, v, vlen_, it->vbuf);
    it->fi++;
}

/* The first live entry's id after the one at first_id went. */
static void refresh_first_id(struct stream *s) {
    if (!s->length) {
        s->first_id.ms = s->first_id.seq = 0;
        return;
    }
    stream_first(s, &s->first_id);
}

/* Mark the current entry deleted; the node goes when nothing in it is
 * live. Leaves first_id to the caller. */
static void it_delete_raw(struct stream_iter *it) {
    struct stream *s = it->s;
    struct stream_node *n = s->nodes[it->ni];
    nimg(n)[it->entry_start] |= F_DELETED;
    n->live--;
    s->length--;
    if (streamid_cmp(&it->cur, &s->max_deleted_id) > 0) s->max_deleted_id = it->cur;
    if (n->live == 0) {
        int head = idx_remove(s, it->ni);
        it->loaded = 0;
        /* Where the neighbour in the walk's direction now sits. */
        if (!it->rev) {
            it->ni = head ? it->ni + 1 : it->ni;
        } else if (head) {
            /* The earlier nodes moved up one: the previous is at ni,
             * unless ni was the first. */
            if (it->ni < s->first) it->ni = IT_NODE_NONE;
        } else {
            it->ni = it->ni > s->first ? it->ni - 1 : IT_NODE_NONE;
        }
        if (!s->n) it->done = 1;
    }
}

void stream_iter_delete(struct stream_iter *it) {
    struct stream *s = it->s;
    int was_first = streamid_cmp(&it->cur, &s->first_id) == 0;
    it_delete_raw(it);
    if (was_first) refresh_first_id(s);
}

void stream_iter_stop(struct stream_iter *it) { it->done = 1; }

int stream_has(struct stream *s, const streamid *id) {
    struct stream_iter it;
    stream_iter_start(&it, s, id, id, 0);
    int r = stream_iter_next(&it, NULL, NULL);
    stream_iter_stop(&it);
    return r;
}

int stream_delete(struct stream *s, const streamid *id) {
    struct stream_iter it;
    stream_iter_start(&it, s, id, id, 0);
    int r = stream_iter_next(&it, NULL, NULL);
    if (r) stream_iter_delete(&it);
    stream_iter_stop(&it);
    if (r) idx_compact(s);
    return r;
}

/* The first (rev: last) live entry's id, or 0-0 and 0. */
static int edge_id(struct stream *s, streamid *id, int rev) {
    struct stream_iter it;
    stream_iter_start(&it, s, NULL, NULL, rev);
    int r = stream_iter_next(&it, id, NULL);
    stream_iter_stop(&it);
    if (!r) id->ms = id->seq = 0;
    return r;
}

int stream_first(struct stream *s, streamid *id) { return edge_id(s, id, 0); }

int stream_last(struct stream *s, streamid *id) { return edge_id(s, id, 1); }

/* ---- reference policies and trimming ---------------------------------------------- */

int stream_entry_acked(const struct stream *s, const streamid *id) {
    for (size_t i = 0; i < s->ngroups; i++) {
        const struct stream_cg *cg = s->groups[i];
        if (streamid_cmp(id, &cg->last_id) > 0) return 0;
        if (cg->pel_count && stream_pel_find(cg, id)) return 0;
    }
    return 1;
}

int stream_delete_policy(struct stream *s, const streamid *id, int policy) {
    if (policy == STREAM_ACKED) {
        if (!stream_entry_acked(s, id)) return 2;
    } else if (policy == STREAM_DELREF) {
        stream_groups_unref(s, id);
    }
    return stream_delete(s, id) ? 1 : -1;
}

long long stream_trim(struct stream *s, const struct stream_trim *t, struct pre_change *pc) {
    long long deleted = 0;
    int policy = s->ngroups ? t->policy : STREAM_KEEPREF, kept = 0;
    size_t ni = s->first;
    while (ni < s->first + s->n) {
        if (t->strategy == STREAM_TRIM_MAXLEN && (long long)s->length <= t->maxlen) break;
        struct stream_node *n = s->nodes[ni];
        long long entries = n->live;
        if (t->approx && t->limit > 0 && deleted + entries > t->limit) break;
        int whole;
        if (t->strategy == STREAM_TRIM_MAXLEN) {
            whole = (long long)s->length - entries >= t->maxlen;
        } else {
            streamid last;
            node_last_id(n, &last);
            whole = streamid_cmp(&last, &t->minid) < 0;
        }
        if (whole && policy == STREAM_KEEPREF) {
            pre_change(pc);
            s->length -= (uint64_t)entries;
            deleted += entries;
            /* The next node sits at ni + 1 when the earlier ones moved up. */
            if (idx_remove(s, ni)) ni++;
            continue;
        }
        /* A node only partly in range is left alone by '~'; under DELREF
         * and ACKED a node in range is walked entry by entry, since the
         * groups decide what may go (and what references to drop). */
        if (t->approx && !whole) break;
        struct master m;
        node_master(n, &m);
        size_t pos = m.entries;
        long long from_node = 0;
        while (pos < n->len) {
            struct ent e;
            ent_parse(n, pos, m.nf, &e);
            pos = e.end;
            int stop = t->strategy == STREAM_TRIM_MAXLEN ? (long long)s->length <= t->maxlen
                                                          : streamid_cmp(&e.id, &t->minid) >= 0;
            if (stop) break;
            if (e.flags & F_DELETED) continue;
            if (policy == STREAM_ACKED && !stream_entry_acked(s, &e.id)) {
                kept = 1;
                continue;
            }
            /* DELREF drops the references of what it removes (a
             * tombstone's stay, as in Redis), as part of the removal. */
            pre_change(pc);
            if (policy == STREAM_DELREF) stream_groups_unref(s, &e.id);
            nimg(n)[e.start] |= F_DELETED;
            n->live--;
            s->length--;
            from_node++;
            /* Trimming a prefix leaves no tombstone ahead of the first
             * entry, so Redis does not move max_deleted_id; a hole behind
             * an entry ACKED kept is a tombstone the lag computations
             * must see. */
            if (kept && streamid_cmp(&e.id, &s->max_deleted_id) > 0) s->max_deleted_id = e.id;
        }
        deleted += from_node;
        if (n->live == 0) {
            /* Emptied: the node goes (the next one is at ni + 1 when the
             * earlier nodes moved up, at ni when the later moved down). */
            if (idx_remove(s, ni)) ni++;
            if (whole) continue;
            break;
        }
        /* The walk goes past a node only when all of it was in range. */
        if (!whole) break;
        ni++;
    }
    if (deleted) refresh_first_id(s);
    idx_compact(s);
    return deleted;
}

/* ---- entries-read and lag --------------------------------------------------------- */

/* Redis 8.4's rules. A group's read counter stays exact while no
 * tombstone lies at or after its last delivered id; otherwise it is
 * estimated from the stream's counters where the id sits at a known place
 * (at or before the first entry with every tombstone behind that entry,
 * or at the last id), and unknown elsewhere. In particular a trim that
 * empties the stream leaves nothing to read: the lag is 0, not the
 * entries the group had not reached. */

int stream_range_has_tombstones(const struct stream *s, const streamid *start, const streamid *end) {
    if (!s->length || streamid_is_zero(&s->max_deleted_id)) return 0;
    streamid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    if (start) lo = *start;
    if (end) hi = *end;
    return streamid_cmp(&lo, &s->max_deleted_id) <= 0 && streamid_cmp(&s->max_deleted_id, &hi) <= 0;
}

/* Whether every tombstone lies before the first live entry (or there is
 * none): then an id up to the first entry has a known distance. */
static int tombstones_behind_first(const struct stream *s) {
    return streamid_is_zero(&s->max_deleted_id) || streamid_cmp(&s->max_deleted_id, &s->first_id) < 0;
}

long long stream_estimate_entries_read(const struct stream *s, const streamid *id) {
    if (!s->entries_added) return 0;
    if (!s->length && streamid_cmp(id, &s->last_id) <= 0) return (long long)s->entries_added;
    /* A tombstone after id: how many entries lie between is unknown. */
    if (!streamid_is_zero(id) && streamid_cmp(id, &s->max_deleted_id) < 0) return STREAM_ENTRIES_READ_INVALID;
    int cmp_last = streamid_cmp(id, &s->last_id);
    if (cmp_last == 0) return (long long)s->entries_added;
    if (cmp_last > 0) return STREAM_ENTRIES_READ_INVALID;
    if (tombstones_behind_first(s)) {
        int cmp_first = streamid_cmp(id, &s->first_id);
        if (cmp_first < 0) return (long long)(s->entries_added - s->length);
        if (cmp_first == 0) return (long long)(s->entries_added - s->length + 1);
    }
    return STREAM_ENTRIES_READ_INVALID;
}

void stream_cg_delivered(struct stream *s, struct stream_cg *cg, const streamid *id) {
    if (streamid_cmp(id, &cg->last_id) <= 0) return;
    /* Counting on is exact only from a position inside the stream with
     * no tombstone ahead; a group behind the first entry (a trim passed
     * it) is placed again by estimate. */
    if (cg->entries_read != STREAM_ENTRIES_READ_INVALID && streamid_cmp(&cg->last_id, &s->first_id) >= 0 &&
        !stream_range_has_tombstones(s, &cg->last_id, NULL))
        cg->entries_read++;
    else if (s->entries_added)
        cg->entries_read = stream_estimate_entries_read(s, id);
    cg->last_id = *id;
}

long long stream_cg_lag(const struct stream *s, const struct stream_cg *cg, int *valid) {
    *valid = 1;
    if (!s->entries_added || !s->length) return 0;
    /* Behind the first entry with every tombstone behind it too: all that
     * is left is still to be read. */
    if (streamid_cmp(&cg->last_id, &s->first_id) < 0 && streamid_cmp(&s->max_deleted_id, &s->first_id) < 0)
        return (long long)s->length;
    if (cg->entries_read != STREAM_ENTRIES_READ_INVALID && !stream_range_has_tombstones(s, &cg->last_id, NULL))
        return (long long)s->entries_added - cg->entries_read;
    long long er = stream_estimate_entries_read(s, &cg->last_id);
    if (er != STREAM_ENTRIES_READ_INVALID) return (long long)s->entries_added - er;
    *valid = 0;
    return 0;
}

/* ---- node images -------------------------------------------------------------------- */

size_t stream_node_count(const struct stream *s) { return s->n; }

streamid stream_node_master(const struct stream *s, size_t i) { return node_master_id(s->nodes[s->first + i]); }

const unsigned char *stream_node_image(const struct stream *s, size_t i, size_t *len) {
    const struct stream_node *n = s->nodes[s->first + i];
    *len = n->len;
    return nimg(n);
}

static inline uint32_t rd32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t rd64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* A checked element: 0 when malformed. */
static size_t elem_check(const unsigned char *p, const unsigned char *end) {
    uint64_t tag;
    size_t k = vget(p, end, &tag);
    if (!k) return 0;
    if (tag & 1) {
        int64_t v = unzz(tag >> 1);
        if (v < -ELEM_INT_LIM || v >= ELEM_INT_LIM) return 0;
        return k;
    }
    if ((tag >> 1) > (uint64_t)(end - p - (ptrdiff_t)k)) return 0;
    return k + (size_t)(tag >> 1);
}

int stream_node_validate(const unsigned char *p, size_t len) {
    if (!p || len < NODE_HDR + 1 || len > UINT32_MAX) return 0;
    const unsigned char *end = p + len, *q = p + NODE_HDR;
    uint32_t count = rd32(p), live = rd32(p + 4);
    streamid master = {rd64(p + 8), rd64(p + 16)};
    if (count == 0 || live == 0 || live > count) return 0;
    uint64_t mnf, x;
    size_t k = vget(q, end, &mnf);
    if (!k || mnf == 0 || mnf > len) return 0;
    q += k;
    for (uint64_t i = 0; i < mnf; i++) {
        if (!(k = elem_check(q, end))) return 0;
        q += k;
    }
    uint64_t seen = 0, seen_live = 0;
    streamid prev = {0, 0};
    while (q < end) {
        const unsigned char *start = q;
        unsigned b0 = *q++;
        uint64_t msd = b0 >> 2;
        if (msd == MSD_ESC) {
            if (!(k = vget(q, end, &x)) || x > UINT64_MAX - MSD_ESC) return 0;
            q += k;
            msd += x;
        }
        if (!(k = vget(q, end, &x))) return 0;
        q += k;
        streamid id;
        if (msd > UINT64_MAX - master.ms) return 0;
        id.ms = master.ms + msd;
        id.seq = master.seq + (uint64_t)unzz(x);
        uint64_t ne;
        if (b0 & F_SAME) {
            ne = mnf;
        } else {
            uint64_t nf;
            if (!(k = vget(q, end, &nf)) || nf == 0 || nf > len) return 0;
            q += k;
            ne = 2 * nf;
        }
        for (uint64_t i = 0; i < ne; i++) {
            if (!(k = elem_check(q, end))) return 0;
            q += k;
        }
        uint64_t body = (uint64_t)(q - start), bl = 0;
        if ((size_t)(end - q) < vlen(body)) return 0;
        q += vlen(body);
        if (bget(q, start, &bl) != vlen(body) || bl != body) return 0;
        if (seen == 0) {
            if (streamid_cmp(&id, &master) != 0) return 0;
        } else if (streamid_cmp(&id, &prev) <= 0) {
            return 0;
        }
        prev = id;
        seen++;
        if (!(b0 & F_DELETED)) seen_live++;
        if (seen > count) return 0;
    }
    return seen == count && seen_live == live;
}

streamid stream_node_last(const struct stream *s, size_t i) {
    streamid id;
    node_last_id(s->nodes[s->first + i], &id);
    return id;
}

/* ---- walking and building node images (persistence) --------------------------------- */

void stream_node_walk_init(struct stream_node_walk *w, const unsigned char *img, size_t len) {
    memset(w, 0, sizeof(*w));
    w->img = img;
    w->end = img + len;
    w->count = rd32(img);
    w->live = rd32(img + 4);
    w->master.ms = rd64(img + 8);
    w->master.seq = rd64(img + 16);
    uint64_t nf = 0;
    const unsigned char *p = img + NODE_HDR;
    p += vget(p, w->end, &nf);
    w->master_nf = (long long)nf;
    w->mfields = w->mpos = p;
    for (uint64_t i = 0; i < nf; i++) p += elem_skip(p, w->end);
    w->pos = p;
}

void stream_node_walk_master(struct stream_node_walk *w, const char **f, size_t *flen) {
    w->mpos += elem_get(w->mpos, w->end, f, flen, w->fbuf);
}

int stream_node_walk_next(struct stream_node_walk *w) {
    if (w->next) w->pos = w->next;
    if (w->pos >= w->end) return 0;
    const unsigned char *p = w->pos;
    unsigned b0 = *p++;
    uint64_t msd = b0 >> 2, x = 0;
    if (msd == MSD_ESC) {
        p += vget(p, w->end, &x);
        msd += x;
    }
    p += vget(p, w->end, &x);
    w->id.ms = w->master.ms + msd;
    w->id.seq = w->master.seq + (uint64_t)unzz(x);
    w->deleted = (b0 & F_DELETED) != 0;
    w->same = (b0 & F_SAME) != 0;
    if (w->same) {
        w->nfields = w->master_nf;
    } else {
        p += vget(p, w->end, &x);
        w->nfields = (long long)x;
    }
    const unsigned char *q = p;
    long long ne = w->same ? w->nfields : 2 * w->nfields;
    for (long long i = 0; i < ne; i++) q += elem_skip(q, w->end);
    w->next = q + vlen((uint64_t)(q - w->pos));
    /* Values (and fields, interleaved) at vpos; the same fields are read
     * from the master entry again. */
    w->vpos = p;
    w->fpos = w->mfields;
    return 1;
}

void stream_node_walk_field(struct stream_node_walk *w, const char **f, size_t *flen, const char **v, size_t *vlen_) {
    if (w->same) {
        w->fpos += elem_get(w->fpos, w->end, f, flen, w->fbuf);
    } else {
        w->vpos += elem_get(w->vpos, w->end, f, flen, w->fbuf);
    }
    w->vpos += elem_get(w->vpos, w->end, v, vlen_, w->vbuf);
}

/* Room for `more` bytes in the builder. */
static void nb_room(struct stream_node_build *b, size_t more) {
    if (b->len + more <= b->cap) return;
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->len + more) cap *= 2;
    b->p = hk_realloc(b->p, cap);
    b->cap = cap;
}

static void nb_close_entry(struct stream_node_build *b) {
    if (!b->open) return;
    nb_room(b, 10);
    b->len += bput(b->p + b->len, (uint64_t)(b->len - b->entry));
    b->open = 0;
}

void stream_node_build_init(struct stream_node_build *b, const streamid *master, uint64_t master_nf) {
    memset(b, 0, sizeof(*b));
    b->master = *master;
    nb_room(b, NODE_HDR + 10);
    memset(b->p, 0, NODE_HDR);
    b->len = NODE_HDR;
    b->len += vput(b->p + b->len, master_nf);
}

void stream_node_build_field(struct stream_node_build *b, const char *s, size_t len) {
    nb_room(b, len + 10);
    b->len += elem_put(b->p + b->len, s, len);
}

void stream_node_build_entry(struct stream_node_build *b, const streamid *id, int deleted, int same,
                             uint64_t nfields) {
    nb_close_entry(b);
    nb_room(b, 40);
    b->entry = b->len;
    b->open = 1;
    unsigned flags = (deleted ? F_DELETED : 0) | (same ? F_SAME : 0);
    unsigned char *p = b->p + b->len;
    uint64_t msd = id->ms - b->master.ms;
    if (msd < MSD_ESC) {
        *p++ = (unsigned char)(msd << 2 | flags);
    } else {
        *p++ = (unsigned char)(MSD_ESC << 2 | flags);
        p += vput(p, msd - MSD_ESC);
    }
    p += vput(p, zz((int64_t)(id->seq - b->master.seq)));
    if (!same) p += vput(p, nfields);
    b->len = (size_t)(p - b->p);
    b->count++;
    if (!deleted) b->live++;
}

void stream_node_build_elem(struct stream_node_build *b, const char *s, size_t len) {
    nb_room(b, len + 10);
    b->len += elem_put(b->p + b->len, s, len);
}

void stream_node_build_free(struct stream_node_build *b) {
    hk_free(b->p);
    memset(b, 0, sizeof(*b));
}

int stream_node_adopt(struct stream *s, struct stream_node_build *b) {
    nb_close_entry(b);
    int ok = b->len <= NODE_MAX_BYTES;
    if (ok) {
        unsigned char *h = b->p;
        memcpy(h, &b->count, 4);
        memcpy(h + 4, &b->live, 4);
        memcpy(h + 8, &b->master.ms, 8);
        memcpy(h + 16, &b->master.seq, 8);
        ok = stream_node_validate(b->p, b->len);
    }
    if (ok && s->n) {
        streamid last = stream_node_last(s, s->n - 1);
        ok = streamid_cmp(&b->master, &last) > 0;
    }
    if (ok) {
        struct stream_node *n = node_alloc(b->len);
        memcpy(nimg(n), b->p, b->len);
        n->len = (uint32_t)b->len;
        idx_push(s, node_shrink(n));
    }
    stream_node_build_free(b);
    return ok ? 0 : -1;
}

/* ---- the type's lifecycle (stream_type_ops) ------------------------------------------ */

static void stream_ops_free(struct kv *e) { stream_free(stream_of(e)); }

/* One allocation per node, and per group its record and pending entries
 * (the first group's PEL standing for every group's), as Redis counts. */
static size_t stream_ops_free_effort(const struct kv *e) {
    const struct stream *s = stream_of(e);
    size_t effort = s->n;
    if (s->ngroups) effort += s->ngroups * (1 + (size_t)s->groups[0]->pel_count);
    return effort ? effort : 1;
}

static struct kv *stream_ops_dup(const struct kv *e, const char *key, size_t klen, long long expire) {
    const struct stream *s = stream_of(e);
    struct stream *d = stream_new();
    d->length = s->length;
    d->last_id = s->last_id;
    d->first_id = s->first_id;
    d->max_deleted_id = s->max_deleted_id;
    d->entries_added = s->entries_added;
    if (s->n) {
        d->cap = s->n;
        d->nodes = hk_malloc(d->cap * sizeof(*d->nodes));
        for (size_t i = 0; i < s->n; i++) {
            const struct stream_node *n = s->nodes[s->first + i];
            struct stream_node *c = hk_malloc(NODE_OFF + n->len);
            memcpy(c, n, NODE_OFF + n->len);
            size_t got = hk_usable_size(c) - NODE_OFF;
            c->cap = (uint32_t)(got > UINT32_MAX ? UINT32_MAX : got);
            d->nodes[i] = c;
        }
        d->n = s->n;
    }
    stream_groups_dup(d, s);
    return kv_new_ptr(key, klen, OBJ_STREAM, ENC_STREAM, d, expire);
}

/* As MEMORY USAGE measures a stream in Redis: the first `samples` nodes
 * (0 = all) are measured, the others counted at their average, the last
 * (usually partly filled) at its own size; groups, consumers and pending
 * entries are counted in full. */
static size_t stream_ops_usage(const struct kv *e, size_t samples) {
    const struct stream *s = stream_of(e);
    size_t total = hk_usable_size((void *)s);
    if (s->nodes) total += hk_usable_size(s->nodes);
    size_t seen = 0, bytes = 0;
    for (; seen < s->n && (samples == 0 || seen < samples); seen++) bytes += hk_usable_size(s->nodes[s->first + seen]);
    if (seen == s->n) {
        total += bytes;
    } else {
        total += bytes / seen * (s->n - 1);
        total += hk_usable_size(s->nodes[s->first + s->n - 1]);
    }
    return total + stream_groups_usage(s);
}

/* Redis's DEBUG DIGEST of a stream: each entry in order mixes in its id
 * written "ms.seq", then each field and value; groups do not take part. */
static void stream_ops_digest(const struct kv *e, unsigned char digest[20]) {
    struct stream_iter it;
    streamid id;
    long long nf;
    stream_iter_start(&it, stream_of(e), NULL, NULL, 0);
    while (stream_iter_next(&it, &id, &nf)) {
        char buf[STREAMID_STRLEN];
        size_t n = (size_t)hk_ull2str(buf, id.ms);
        buf[n++] = '.';
        n += (size_t)hk_ull2str(buf + n, id.seq);
        dg_mix(digest, buf, n);
        for (long long i = 0; i < nf; i++) {
            const char *f, *v;
            size_t fl, vl;
            stream_iter_field(&it, &f, &fl, &v, &vl);
            dg_mix(digest, f, fl);
            dg_mix(digest, v, vl);
        }
    }
    stream_iter_stop(&it);
}

const struct type_ops stream_type_ops = {
    .name = "stream",
    .free = stream_ops_free,
    .free_effort = stream_ops_free_effort,
    .dup = stream_ops_dup,
    .usage = stream_ops_usage,
    .digest = stream_ops_digest,
    .save = stream_rdb_save,
    .load = stream_rdb_load,
};
