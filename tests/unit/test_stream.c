/* test_stream.c - unit tests of the stream value (src/types/stream.c and
 * stream_cg.c): id parsing, formatting and stepping; appends and
 * iteration both ways over many small nodes, with same-field,
 * different-field and integer-looking entries; deletes and the upkeep of
 * first_id and max_deleted_id; exact, approximate, limited and MINID
 * trims under KEEPREF, DELREF and ACKED; consumer groups, consumers and
 * the PEL (id order, per-consumer order, delivery-time order with
 * explicit times, ties by id, the greatest pending id); entries-read
 * and lag by Redis 8.4's rules; trims calling their pre_change once,
 * before the first removal, and never when nothing goes; the type-table
 * lifecycle (dup, usage, digest against values taken from
 * redis-server); a randomized
 * comparison with a plain array model; and the node validator fed every
 * truncation and many random byte flips of real nodes. The node limits
 * are changed through type_limits as CONFIG SET does and put back. */
#include "core/alloc.h"
#include "core/util.h"
#include "test.h"
#include "types/digest.h"
#include "types/kv.h"
#include "types/stream.h"
#include "types/types.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_limits(long long bytes, long long entries) {
    atomic_store(&type_limits.stream_node_max_bytes, bytes);
    atomic_store(&type_limits.stream_node_max_entries, entries);
}
static void default_limits(void) { set_limits(4096, 100); }

static uint64_t rng = 0x1234567887654321ULL;
static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static streamid sid(uint64_t ms, uint64_t seq) {
    streamid id = {ms, seq};
    return id;
}

/* Append an entry given as "f1", "v1", "f2", "v2", ..., NULL. */
static void add(struct stream *s, uint64_t ms, uint64_t seq, ...) {
    struct stream_field fv[16];
    size_t nf = 0;
    va_list ap;
    va_start(ap, seq);
    const char *f;
    while ((f = va_arg(ap, const char *))) {
        const char *v = va_arg(ap, const char *);
        fv[nf].f = f;
        fv[nf].flen = strlen(f);
        fv[nf].v = v;
        fv[nf].vlen = strlen(v);
        nf++;
    }
    va_end(ap);
    streamid id = sid(ms, seq);
    stream_append(s, &id, fv, nf);
}

/* The entries in [start, end] as text "ms-seq f v f v|ms-seq ...". */
static size_t dump(struct stream *s, const streamid *start, const streamid *end, int rev, char *out, size_t cap) {
    struct stream_iter it;
    streamid id;
    long long nf;
    size_t n = 0;
    out[0] = '\0';
    stream_iter_start(&it, s, start, end, rev);
    while (stream_iter_next(&it, &id, &nf)) {
        char b[STREAMID_STRLEN];
        streamid_fmt(&id, b);
        n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? "|" : "", b);
        for (long long i = 0; i < nf; i++) {
            const char *f, *v;
            size_t fl, vl;
            stream_iter_field(&it, &f, &fl, &v, &vl);
            n += (size_t)snprintf(out + n, cap - n, " %.*s %.*s", (int)fl, f, (int)vl, v);
        }
    }
    stream_iter_stop(&it);
    return n;
}

static int nodes_valid(const struct stream *s) {
    for (size_t i = 0; i < stream_node_count(s); i++) {
        size_t len;
        const unsigned char *p = stream_node_image(s, i, &len);
        if (!stream_node_validate(p, len)) return 0;
    }
    return 1;
}

/* Pending records over all groups of s. */
static uint64_t pel_total(const struct stream *s) {
    uint64_t n = 0;
    for (size_t i = 0; i < s->ngroups; i++) n += s->groups[i]->pel_count;
    return n;
}

/* A pre_change that notes what the stream held when it fired. */
struct trim_watch {
    struct pre_change pc;
    const struct stream *s;
    int calls;
    uint64_t length, pels, nodes;
};
static void watch_fire(struct pre_change *pc) {
    struct trim_watch *w = (struct trim_watch *)pc;
    w->calls++;
    w->length = w->s->length;
    w->pels = pel_total(w->s);
    w->nodes = stream_node_count(w->s);
}

/* stream_trim, holding it to its pre_change contract: called once when
 * something goes, before anything changed (length, references, nodes),
 * and never when nothing goes (then nothing changed at all). */
static long long trim(struct stream *s, const struct stream_trim *t) {
    struct trim_watch w = {.pc = {.fn = watch_fire}, .s = s};
    uint64_t len = s->length, pels = pel_total(s), nodes = stream_node_count(s);
    long long got = stream_trim(s, t, &w.pc);
    CHECK_EQ_LL(w.calls, got > 0 ? 1 : 0);
    if (w.calls) {
        CHECK_EQ_LL(w.length, len);
        CHECK_EQ_LL(w.pels, pels);
        CHECK_EQ_LL(w.nodes, nodes);
    } else {
        CHECK_EQ_LL(s->length, len);
        CHECK_EQ_LL(pel_total(s), pels);
        CHECK_EQ_LL(stream_node_count(s), nodes);
    }
    return got;
}

/* ---- ids -------------------------------------------------------------------- */

static int parse(const char *txt, streamid *id, uint64_t missing, int star, int *given) {
    return streamid_parse(txt, strlen(txt), id, missing, star, given);
}

static void test_ids(void) {
    streamid id;
    int given = 9;
    char buf[STREAMID_STRLEN];
    CHECK_EQ_LL(parse("1-2", &id, 0, 0, &given), 0);
    CHECK(id.ms == 1 && id.seq == 2 && given == 1);
    CHECK_EQ_LL(parse("7", &id, 55, 0, &given), 0);
    CHECK(id.ms == 7 && id.seq == 55 && given == 0);
    CHECK_EQ_LL(parse("7", &id, UINT64_MAX, 0, NULL), 0);
    CHECK(id.seq == UINT64_MAX);
    CHECK_EQ_LL(parse("18446744073709551615-18446744073709551615", &id, 0, 0, NULL), 0);
    CHECK(id.ms == UINT64_MAX && id.seq == UINT64_MAX);
    CHECK_EQ_LL(parse("18446744073709551616-0", &id, 0, 0, NULL), -1);
    CHECK_EQ_LL(parse("1-18446744073709551616", &id, 0, 0, NULL), -1);
    CHECK_EQ_LL(parse("5-*", &id, 0, 1, &given), 0);
    CHECK(id.ms == 5 && id.seq == 0 && given == -1);
    CHECK_EQ_LL(parse("5-*", &id, 0, 0, &given), -1);
    CHECK_EQ_LL(parse("*", &id, 0, 1, &given), -1);
    CHECK_EQ_LL(parse("", &id, 0, 0, NULL), -1);
    CHECK_EQ_LL(parse("-", &id, 0, 0, NULL), -1);
    CHECK_EQ_LL(parse("+", &id, 0, 0, NULL), -1);
    CHECK_EQ_LL(parse("1-", &id, 0, 0, NULL), -1);
    CHECK_EQ_LL(parse("-1", &id, 0, 0, NULL), -1);
    CHECK_EQ_LL(parse("1--1", &id, 0, 0, NULL), -1);
    CHECK_EQ_LL(parse("1-2-3", &id, 0, 0, NULL), -1);
    CHECK_EQ_LL(parse("abc", &id, 0, 0, NULL), -1);
    CHECK_EQ_LL(parse("1.5", &id, 0, 0, NULL), -1);
    CHECK_EQ_LL(parse("1 ", &id, 0, 0, NULL), -1);
    /* What Redis's string2ull lets through: leading zeros, a '+', leading
     * spaces. */
    CHECK_EQ_LL(parse("007-01", &id, 0, 0, NULL), 0);
    CHECK(id.ms == 7 && id.seq == 1);
    CHECK_EQ_LL(parse("+3", &id, 0, 0, NULL), 0);
    CHECK(id.ms == 3);
    CHECK_EQ_LL(parse(" 3-4", &id, 0, 0, NULL), 0);
    CHECK(id.ms == 3 && id.seq == 4);
    char longid[200];
    memset(longid, '1', sizeof(longid));
    CHECK_EQ_LL(streamid_parse(longid, sizeof(longid), &id, 0, 0, NULL), -1);

    id = sid(1, 2);
    CHECK_EQ_LL(streamid_incr(&id), 0);
    CHECK(id.ms == 1 && id.seq == 3);
    id = sid(1, UINT64_MAX);
    CHECK_EQ_LL(streamid_incr(&id), 0);
    CHECK(id.ms == 2 && id.seq == 0);
    id = sid(UINT64_MAX, UINT64_MAX);
    CHECK_EQ_LL(streamid_incr(&id), -1);
    CHECK(id.ms == UINT64_MAX && id.seq == UINT64_MAX);
    id = sid(2, 0);
    CHECK_EQ_LL(streamid_decr(&id), 0);
    CHECK(id.ms == 1 && id.seq == UINT64_MAX);
    id = sid(0, 0);
    CHECK_EQ_LL(streamid_decr(&id), -1);
    CHECK(streamid_is_zero(&id));
    id = sid(UINT64_MAX, UINT64_MAX);
    CHECK_MEM(buf, streamid_fmt(&id, buf), "18446744073709551615-18446744073709551615");
    id = sid(0, 0);
    CHECK_MEM(buf, streamid_fmt(&id, buf), "0-0");
    streamid a = sid(1, 5), b = sid(2, 0), c = sid(1, 6);
    CHECK(streamid_cmp(&a, &b) < 0 && streamid_cmp(&b, &a) > 0 && streamid_cmp(&a, &c) < 0);
    CHECK(streamid_cmp(&a, &a) == 0);
}

/* ---- appends and iteration ------------------------------------------------------- */

static void test_append_iterate(void) {
    set_limits(4096, 3);
    struct stream *s = stream_new();
    char out[4096];
    add(s, 1, 0, "a", "1", "b", "x", NULL);
    add(s, 1, 1, "a", "2", "b", "y", NULL);
    add(s, 2, 0, "c", "-12", NULL);
    add(s, 5, 7, "a", "", "b", "18446744073709551615", NULL);
    add(s, 9, 0, "9", "007", "b", "-0", NULL);
    CHECK_EQ_LL(s->length, 5);
    CHECK_EQ_LL(s->entries_added, 5);
    CHECK_EQ_LL(stream_node_count(s), 2);
    CHECK(nodes_valid(s));
    CHECK(s->first_id.ms == 1 && s->first_id.seq == 0);
    CHECK(s->last_id.ms == 9);
    dump(s, NULL, NULL, 0, out, sizeof(out));
    CHECK_MEM(out, strlen(out),
              "1-0 a 1 b x|1-1 a 2 b y|2-0 c -12|5-7 a  b 18446744073709551615|9-0 9 007 b -0");
    dump(s, NULL, NULL, 1, out, sizeof(out));
    CHECK_MEM(out, strlen(out),
              "9-0 9 007 b -0|5-7 a  b 18446744073709551615|2-0 c -12|1-1 a 2 b y|1-0 a 1 b x");
    streamid lo = sid(1, 1), hi = sid(5, 7);
    dump(s, &lo, &hi, 0, out, sizeof(out));
    CHECK_MEM(out, strlen(out), "1-1 a 2 b y|2-0 c -12|5-7 a  b 18446744073709551615");
    dump(s, &lo, &hi, 1, out, sizeof(out));
    CHECK_MEM(out, strlen(out), "5-7 a  b 18446744073709551615|2-0 c -12|1-1 a 2 b y");
    lo = sid(1, 2), hi = sid(5, 6);
    dump(s, &lo, &hi, 0, out, sizeof(out));
    CHECK_MEM(out, strlen(out), "2-0 c -12");
    dump(s, &hi, &lo, 0, out, sizeof(out));
    CHECK_MEM(out, strlen(out), "");
    lo = sid(10, 0);
    dump(s, &lo, NULL, 0, out, sizeof(out));
    CHECK_MEM(out, strlen(out), "");
    hi = sid(0, 5);
    dump(s, NULL, &hi, 1, out, sizeof(out));
    CHECK_MEM(out, strlen(out), "");
    streamid id;
    CHECK(stream_first(s, &id) && id.ms == 1 && id.seq == 0);
    CHECK(stream_last(s, &id) && id.ms == 9 && id.seq == 0);
    id = sid(5, 7);
    CHECK(stream_has(s, &id));
    id = sid(5, 6);
    CHECK(!stream_has(s, &id));
    /* Reading fewer fields than the entry has, then going on. */
    struct stream_iter it;
    long long nf;
    stream_iter_start(&it, s, NULL, NULL, 0);
    CHECK(stream_iter_next(&it, &id, &nf) && nf == 2);
    CHECK(stream_iter_next(&it, &id, &nf) && id.seq == 1);
    const char *f, *v;
    size_t fl, vl;
    stream_iter_field(&it, &f, &fl, &v, &vl);
    CHECK_MEM(f, fl, "a");
    CHECK_MEM(v, vl, "2");
    CHECK(stream_iter_next(&it, &id, &nf) && id.ms == 2);
    stream_iter_stop(&it);
    stream_free(s);

    /* Big ids, huge deltas inside one node, extreme values. */
    set_limits(0, 0);
    s = stream_new();
    add(s, 0, 1, "f", "v", NULL);
    add(s, 0, UINT64_MAX, "f", "v", NULL);
    add(s, 62, 0, "f", "v", NULL);
    add(s, 63, 0, "f", "v", NULL);
    add(s, 64, 5, "f", "4611686018427387903", NULL);
    add(s, 1ULL << 40, 0, "f", "-4611686018427387904", NULL);
    add(s, UINT64_MAX, UINT64_MAX, "f", "9223372036854775807", NULL);
    CHECK_EQ_LL(stream_node_count(s), 1);
    CHECK(nodes_valid(s));
    dump(s, NULL, NULL, 0, out, sizeof(out));
    CHECK_MEM(out, strlen(out),
              "0-1 f v|0-18446744073709551615 f v|62-0 f v|63-0 f v|64-5 f 4611686018427387903|1099511627776-0 f "
              "-4611686018427387904|18446744073709551615-18446744073709551615 f 9223372036854775807");
    dump(s, NULL, NULL, 1, out, sizeof(out));
    CHECK(strncmp(out, "18446744073709551615-18446744073709551615", 41) == 0);
    stream_free(s);
    default_limits();
}

/* Node boundaries follow stream-node-max-entries and -max-bytes. */
static void test_node_limits(void) {
    set_limits(4096, 100);
    struct stream *s = stream_new();
    for (int i = 0; i < 1000; i++) add(s, 1000 + (uint64_t)i, 0, "f", "v", NULL);
    CHECK_EQ_LL(stream_node_count(s), 10);
    stream_free(s);
    set_limits(100, 0);
    s = stream_new();
    char big[60];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    for (int i = 0; i < 10; i++) add(s, 1 + (uint64_t)i, 0, "f", big, NULL);
    CHECK(stream_node_count(s) >= 5);
    CHECK(nodes_valid(s));
    stream_free(s);
    /* One entry bigger than the limit still goes in, alone. */
    set_limits(16, 0);
    s = stream_new();
    add(s, 1, 0, "f", big, NULL);
    add(s, 2, 0, "f", big, NULL);
    CHECK_EQ_LL(stream_node_count(s), 2);
    CHECK_EQ_LL(s->length, 2);
    stream_free(s);
    default_limits();
}

/* ---- deletes -------------------------------------------------------------------------- */

static void test_delete(void) {
    set_limits(4096, 3);
    struct stream *s = stream_new();
    char out[4096];
    for (int i = 1; i <= 9; i++) add(s, (uint64_t)i, 0, "f", "v", NULL);
    CHECK_EQ_LL(stream_node_count(s), 3);
    streamid id = sid(1, 0);
    CHECK_EQ_LL(stream_delete(s, &id), 1);
    CHECK_EQ_LL(stream_delete(s, &id), 0);
    CHECK(s->first_id.ms == 2);
    CHECK(s->max_deleted_id.ms == 1);
    id = sid(5, 0);
    CHECK_EQ_LL(stream_delete(s, &id), 1);
    CHECK(s->first_id.ms == 2);
    CHECK(s->max_deleted_id.ms == 5);
    id = sid(3, 0);
    CHECK_EQ_LL(stream_delete(s, &id), 1);
    CHECK(s->max_deleted_id.ms == 5);
    id = sid(2, 0);
    CHECK_EQ_LL(stream_delete(s, &id), 1);
    /* The first node is all deleted: gone. */
    CHECK_EQ_LL(stream_node_count(s), 2);
    CHECK(s->first_id.ms == 4);
    CHECK_EQ_LL(s->length, 5);
    id = sid(4, 0);
    stream_delete(s, &id);
    id = sid(6, 0);
    stream_delete(s, &id);
    CHECK_EQ_LL(stream_node_count(s), 1);
    dump(s, NULL, NULL, 1, out, sizeof(out));
    CHECK_MEM(out, strlen(out), "9-0 f v|8-0 f v|7-0 f v");
    CHECK(nodes_valid(s));
    /* Deleting the tail node: appends start a new one. */
    for (int i = 7; i <= 9; i++) {
        id = sid((uint64_t)i, 0);
        CHECK_EQ_LL(stream_delete(s, &id), 1);
    }
    CHECK_EQ_LL(s->length, 0);
    CHECK_EQ_LL(stream_node_count(s), 0);
    CHECK(streamid_is_zero(&s->first_id));
    CHECK(s->last_id.ms == 9);
    add(s, 10, 0, "g", "w", NULL);
    CHECK(s->first_id.ms == 10);
    CHECK_EQ_LL(s->entries_added, 10);
    stream_free(s);

    /* Deleting through an iterator, both ways, across node removals. */
    for (int rev = 0; rev < 2; rev++) {
        s = stream_new();
        for (int i = 1; i <= 30; i++) add(s, (uint64_t)i, 0, "f", "v", NULL);
        struct stream_iter it;
        long long nf;
        int k = 0;
        stream_iter_start(&it, s, NULL, NULL, rev);
        while (stream_iter_next(&it, &id, &nf)) {
            if (id.ms % 3 != 1 || id.ms > 20) stream_iter_delete(&it);
            k++;
        }
        stream_iter_stop(&it);
        CHECK_EQ_LL(k, 30);
        dump(s, NULL, NULL, 0, out, sizeof(out));
        CHECK_MEM(out, strlen(out), "1-0 f v|4-0 f v|7-0 f v|10-0 f v|13-0 f v|16-0 f v|19-0 f v");
        CHECK_EQ_LL(s->length, 7);
        CHECK(s->first_id.ms == 1);
        CHECK(s->max_deleted_id.ms == 30);
        CHECK(nodes_valid(s));
        /* Every node but 1-3, 4-6, ... keeps one live entry. */
        CHECK_EQ_LL(stream_node_count(s), 7);
        stream_iter_start(&it, s, NULL, NULL, rev);
        while (stream_iter_next(&it, &id, &nf)) stream_iter_delete(&it);
        stream_iter_stop(&it);
        CHECK_EQ_LL(s->length, 0);
        CHECK_EQ_LL(stream_node_count(s), 0);
        CHECK(streamid_is_zero(&s->first_id));
        stream_free(s);
    }
    default_limits();
}

/* ---- trimming ------------------------------------------------------------------------------ */

static struct stream *numbered(int n, int per_node) {
    set_limits(0, per_node);
    struct stream *s = stream_new();
    for (int i = 1; i <= n; i++) add(s, (uint64_t)i, 0, "f", "v", NULL);
    return s;
}

static void test_trim(void) {
    struct stream_trim t = {0};
    /* Exact MAXLEN. */
    struct stream *s = numbered(100, 10);
    for (size_t i = 0; i < stream_node_count(s); i++) {
        streamid m = stream_node_master(s, i);
        CHECK(m.ms == 10 * i + 1 && m.seq == 0);
    }
    t.strategy = STREAM_TRIM_MAXLEN;
    t.maxlen = 35;
    CHECK_EQ_LL(trim(s, &t), 65);
    CHECK_EQ_LL(s->length, 35);
    CHECK(s->first_id.ms == 66);
    CHECK(streamid_is_zero(&s->max_deleted_id));
    CHECK_EQ_LL(stream_node_count(s), 4);
    /* A node's master id stays its first entry's, deleted or not. */
    CHECK(stream_node_master(s, 0).ms == 61 && stream_node_master(s, 3).ms == 91);
    CHECK(nodes_valid(s));
    CHECK_EQ_LL(trim(s, &t), 0);
    stream_free(s);
    /* Approximate: only whole nodes. */
    s = numbered(100, 10);
    t.approx = 1;
    CHECK_EQ_LL(trim(s, &t), 60);
    CHECK_EQ_LL(s->length, 40);
    CHECK(s->first_id.ms == 61);
    /* LIMIT caps what goes, by whole nodes. */
    t.maxlen = 0;
    t.limit = 25;
    CHECK_EQ_LL(trim(s, &t), 20);
    CHECK_EQ_LL(s->length, 20);
    t.limit = 5;
    CHECK_EQ_LL(trim(s, &t), 0);
    t.limit = 0;
    CHECK_EQ_LL(trim(s, &t), 20);
    CHECK_EQ_LL(s->length, 0);
    CHECK(streamid_is_zero(&s->first_id));
    CHECK_EQ_LL(stream_node_count(s), 0);
    stream_free(s);
    /* MINID, exact and approximate. */
    s = numbered(100, 10);
    t = (struct stream_trim){.strategy = STREAM_TRIM_MINID, .minid = sid(25, 0)};
    t.approx = 1;
    CHECK_EQ_LL(trim(s, &t), 20);
    CHECK(s->first_id.ms == 21);
    t.approx = 0;
    CHECK_EQ_LL(trim(s, &t), 4);
    CHECK(s->first_id.ms == 25);
    t.minid = sid(24, 5);
    CHECK_EQ_LL(trim(s, &t), 0);
    t.minid = sid(1000, 0);
    CHECK_EQ_LL(trim(s, &t), 76);
    CHECK_EQ_LL(s->length, 0);
    stream_free(s);
    /* MINID past a node whose last entry is a tombstone (the node empties
     * and goes). */
    s = numbered(2, 10);
    streamid id = sid(2, 0);
    stream_delete(s, &id);
    t = (struct stream_trim){.strategy = STREAM_TRIM_MINID, .minid = sid(2, 0)};
    CHECK_EQ_LL(trim(s, &t), 1);
    CHECK_EQ_LL(s->length, 0);
    CHECK_EQ_LL(stream_node_count(s), 0);
    stream_free(s);
    /* Trims count live entries only. */
    s = numbered(30, 10);
    for (int i = 1; i <= 10; i += 2) {
        id = sid((uint64_t)i, 0);
        stream_delete(s, &id);
    }
    t = (struct stream_trim){.strategy = STREAM_TRIM_MAXLEN, .maxlen = 20, .approx = 1};
    CHECK_EQ_LL(trim(s, &t), 5);
    CHECK_EQ_LL(s->length, 20);
    CHECK(s->first_id.ms == 11);
    stream_free(s);
    default_limits();
}

/* ---- groups, consumers, PEL --------------------------------------------------------------- */

static void test_groups(void) {
    struct stream *s = stream_new();
    streamid z = sid(0, 0);
    CHECK(stream_cg_find(s, "g", 1) == NULL);
    struct stream_cg *g2 = stream_cg_create(s, "g2", 2, &z, 0);
    struct stream_cg *g1 = stream_cg_create(s, "g1", 2, &z, STREAM_ENTRIES_READ_INVALID);
    struct stream_cg *ga = stream_cg_create(s, "g", 1, &z, 0);
    CHECK(g2 && g1 && ga);
    CHECK(stream_cg_create(s, "g1", 2, &z, 0) == NULL);
    CHECK_EQ_LL(s->ngroups, 3);
    CHECK(s->groups[0] == ga && s->groups[1] == g1 && s->groups[2] == g2);
    CHECK(stream_cg_find(s, "g1", 2) == g1);
    CHECK(stream_cg_find(s, "g3", 2) == NULL);
    CHECK_EQ_LL(g1->entries_read, STREAM_ENTRIES_READ_INVALID);

    struct stream_consumer *bob = stream_consumer_create(g1, "bob", 3, 100);
    struct stream_consumer *al = stream_consumer_create(g1, "al", 2, 200);
    CHECK(bob && al);
    CHECK(stream_consumer_create(g1, "bob", 3, 300) == NULL);
    CHECK(g1->consumers[0] == al && g1->consumers[1] == bob);
    CHECK_EQ_LL(bob->seen_time, 100);
    CHECK_EQ_LL(bob->active_time, -1);
    CHECK(stream_consumer_find(g1, "al", 2) == al);
    CHECK(stream_consumer_find(g1, "a", 1) == NULL);

    /* PEL: ids 1..20 delivered at increasing times, alternating owners. */
    for (int i = 20; i >= 1; i--) {
        streamid id = sid((uint64_t)i, 0);
        struct stream_nack *n = stream_pel_add(g1, i % 2 ? al : bob, &id, 1000 + i);
        CHECK(n->delivery_count == 1 && n->consumer == (i % 2 ? al : bob));
    }
    CHECK_EQ_LL(g1->pel_count, 20);
    CHECK_EQ_LL(al->pel_count, 10);
    CHECK_EQ_LL(bob->pel_count, 10);
    CHECK(stream_pel_last(g2) == NULL);
    CHECK_EQ_LL(stream_pel_last(g1)->id.ms, 20);
    /* Id order. */
    int k = 0;
    streamid start = sid(0, 0);
    for (struct stream_nack *n = stream_pel_seek(g1, &start); n; n = stream_pel_next(g1, n)) {
        k++;
        CHECK_EQ_LL(n->id.ms, k);
    }
    CHECK_EQ_LL(k, 20);
    start = sid(7, 1);
    CHECK_EQ_LL(stream_pel_seek(g1, &start)->id.ms, 8);
    start = sid(21, 0);
    CHECK(stream_pel_seek(g1, &start) == NULL);
    k = 0;
    start = sid(0, 0);
    for (struct stream_nack *n = stream_cons_seek(bob, &start); n; n = stream_cons_next(bob, n)) {
        k++;
        CHECK_EQ_LL(n->id.ms, 2 * k);
        CHECK(n->consumer == bob);
    }
    CHECK_EQ_LL(k, 10);
    /* Time order (inserted newest-first with older times: each walked
     * back to its place). */
    k = 0;
    for (struct stream_nack *n = g1->oldest; n; n = stream_pel_newer(n)) {
        k++;
        CHECK_EQ_LL(n->id.ms, k);
    }
    CHECK_EQ_LL(k, 20);
    CHECK(g1->newest->id.ms == 20);

    /* Claim 3 for bob now (tail), 15 for bob at an old time (walks back). */
    streamid id3 = sid(3, 0), id15 = sid(15, 0);
    struct stream_nack *n3 = stream_pel_find(g1, &id3), *n15 = stream_pel_find(g1, &id15);
    CHECK(n3 && n15);
    stream_pel_assign(g1, n3, bob, 5000, 1);
    CHECK(g1->newest == n3 && n3->consumer == bob && n3->delivery_count == 2);
    CHECK_EQ_LL(al->pel_count, 9);
    CHECK_EQ_LL(bob->pel_count, 11);
    stream_pel_assign(g1, n15, bob, 1004, 0);
    CHECK(n15->delivery_count == 1);
    CHECK_EQ_LL(al->pel_count, 8);
    CHECK_EQ_LL(bob->pel_count, 12);
    long long last = -1;
    k = 0;
    for (struct stream_nack *n = g1->oldest; n; n = stream_pel_newer(n)) {
        CHECK(n->delivery_time >= last);
        last = n->delivery_time;
        k++;
    }
    CHECK_EQ_LL(k, 20);
    /* 15 sits after 4 (time 1004, same time: after it). */
    streamid id4 = sid(4, 0);
    CHECK(stream_pel_newer(stream_pel_find(g1, &id4)) == n15);
    start = sid(0, 0);
    CHECK(stream_cons_seek(bob, &start)->id.ms == 2);
    CHECK(stream_cons_next(bob, stream_cons_seek(bob, &start))->id.ms == 3);

    /* Ack. */
    stream_pel_ack(g1, n3);
    CHECK(stream_pel_find(g1, &id3) == NULL);
    CHECK_EQ_LL(g1->pel_count, 19);
    CHECK_EQ_LL(bob->pel_count, 11);
    CHECK(g1->newest->id.ms == 20);

    /* Deleting a consumer drops its records from the group. */
    CHECK_EQ_LL(stream_consumer_delete(g1, al), 8);
    CHECK_EQ_LL(g1->pel_count, 11);
    CHECK_EQ_LL(g1->nconsumers, 1);
    k = 0;
    for (struct stream_nack *n = g1->oldest; n; n = stream_pel_newer(n)) {
        CHECK(n->consumer == bob);
        k++;
    }
    CHECK_EQ_LL(k, 11);
    start = sid(0, 0);
    k = 0;
    for (struct stream_nack *n = stream_pel_seek(g1, &start); n; n = stream_pel_next(g1, n)) k++;
    CHECK_EQ_LL(k, 11);

    /* Destroy. */
    stream_cg_destroy(s, g1);
    CHECK_EQ_LL(s->ngroups, 2);
    CHECK(stream_cg_find(s, "g1", 2) == NULL);
    stream_cg_destroy(s, ga);
    stream_cg_destroy(s, g2);
    CHECK_EQ_LL(s->ngroups, 0);
    stream_free(s);
}

/* A large PEL keeps every order straight under random claims and acks. */
static void test_pel_random(void) {
    struct stream *s = stream_new();
    streamid z = sid(0, 0);
    struct stream_cg *g = stream_cg_create(s, "g", 1, &z, 0);
    struct stream_consumer *c[4];
    for (int i = 0; i < 4; i++) {
        char nm[2] = {(char)('a' + i), 0};
        c[i] = stream_consumer_create(g, nm, 1, 0);
    }
    enum { N = 5000 };
    static struct stream_nack *byid[N];
    static long long when[N];
    static int owner[N];
    for (int i = 0; i < N; i++) {
        streamid id = sid((uint64_t)(i / 3), (uint64_t)(i % 3));
        int o = (int)(rnd() % 4);
        when[i] = (long long)(rnd() % 1000);
        owner[i] = o;
        byid[i] = stream_pel_add(g, c[o], &id, when[i]);
    }
    for (int step = 0; step < 20000; step++) {
        int i = (int)(rnd() % N);
        if (!byid[i]) continue;
        int op = (int)(rnd() % 3);
        if (op == 0) {
            stream_pel_ack(g, byid[i]);
            byid[i] = NULL;
        } else {
            int o = (int)(rnd() % 4);
            when[i] = (long long)(rnd() % 2000);
            owner[i] = o;
            stream_pel_assign(g, byid[i], c[o], when[i], 1);
        }
    }
    uint64_t live = 0, per[4] = {0};
    for (int i = 0; i < N; i++)
        if (byid[i]) {
            live++;
            per[owner[i]]++;
            CHECK(stream_pel_find(g, &byid[i]->id) == byid[i]);
            CHECK(byid[i]->consumer == c[owner[i]]);
            CHECK_EQ_LL(byid[i]->delivery_time, when[i]);
        }
    CHECK_EQ_LL(g->pel_count, live);
    streamid start = sid(0, 0);
    int prev = -1;
    uint64_t k = 0;
    for (struct stream_nack *n = stream_pel_seek(g, &start); n; n = stream_pel_next(g, n)) {
        int i = (int)(n->id.ms * 3 + n->id.seq);
        CHECK(i > prev);
        CHECK(byid[i] == n);
        prev = i;
        k++;
    }
    CHECK_EQ_LL(k, live);
    CHECK(stream_pel_last(g) == (prev >= 0 ? byid[prev] : NULL));
    for (int o = 0; o < 4; o++) {
        CHECK_EQ_LL(c[o]->pel_count, per[o]);
        k = 0;
        prev = -1;
        for (struct stream_nack *n = stream_cons_seek(c[o], &start); n; n = stream_cons_next(c[o], n)) {
            int i = (int)(n->id.ms * 3 + n->id.seq);
            CHECK(i > prev && owner[i] == o);
            prev = i;
            k++;
        }
        CHECK_EQ_LL(k, per[o]);
    }
    /* (time, id) order; with times drawn from a small range most of them
     * are ties. */
    k = 0;
    for (struct stream_nack *n = g->oldest; n; n = n->next) {
        if (n->prev) {
            CHECK(n->prev->delivery_time <= n->delivery_time);
            if (n->prev->delivery_time == n->delivery_time) CHECK(streamid_cmp(&n->prev->id, &n->id) < 0);
        }
        k++;
    }
    CHECK_EQ_LL(k, live);
    /* Acknowledge them all from the greatest id down. */
    for (struct stream_nack *n; (n = stream_pel_last(g));) {
        int i = (int)(n->id.ms * 3 + n->id.seq);
        CHECK(byid[i] == n);
        for (int j = i + 1; j < N; j++) CHECK(byid[j] == NULL);
        stream_pel_ack(g, n);
        byid[i] = NULL;
    }
    CHECK_EQ_LL(g->pel_count, 0);
    CHECK(g->oldest == NULL && g->newest == NULL);
    stream_free(s);
}

/* A group's records in delivery-time order as "ms@time ms@time ...". */
static size_t time_order(const struct stream_cg *g, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (const struct stream_nack *x = g->oldest; x; x = stream_pel_newer(x))
        n += (size_t)snprintf(out + n, cap - n, "%s%llu@%lld", n ? " " : "", (unsigned long long)x->id.ms,
                              x->delivery_time);
    return n;
}

/* The delivery-time order breaks ties by id, whatever order the records
 * were given their times in, as Redis's pel_by_time (time, id) keys do;
 * a copy keeps it. */
static void test_pel_order(void) {
    struct kv *e = stream_new_entry("s", 1);
    struct stream *s = stream_of(e);
    streamid z = sid(0, 0);
    struct stream_cg *g = stream_cg_create(s, "g", 1, &z, 0);
    struct stream_consumer *a = stream_consumer_create(g, "a", 1, 0);
    struct stream_consumer *b = stream_consumer_create(g, "b", 1, 0);
    static const int at100[] = {5, 2, 9, 1, 7};
    for (size_t i = 0; i < sizeof(at100) / sizeof(at100[0]); i++) {
        streamid id = sid((uint64_t)at100[i], 0);
        stream_pel_add(g, i % 2 ? a : b, &id, 100);
    }
    streamid id8 = sid(8, 0), id3 = sid(3, 0), id4 = sid(4, 0);
    stream_pel_add(g, a, &id8, 50);
    stream_pel_add(g, a, &id3, 200);
    stream_pel_add(g, b, &id4, 100);
    char out[256];
    size_t n = time_order(g, out, sizeof(out));
    CHECK_MEM(out, n, "8@50 1@100 2@100 4@100 5@100 7@100 9@100 3@200");
    CHECK(g->newest->id.ms == 3);
    /* Records moved to an existing time land among its ties by id: the
     * newest time (walking back from the tail) and an older one. */
    streamid id9 = sid(9, 0), id1 = sid(1, 0), id5 = sid(5, 0);
    stream_pel_assign(g, stream_pel_find(g, &id9), b, 200, 1);
    stream_pel_assign(g, stream_pel_find(g, &id1), a, 200, 1);
    stream_pel_assign(g, stream_pel_find(g, &id5), a, 50, 0);
    n = time_order(g, out, sizeof(out));
    CHECK_MEM(out, n, "5@50 8@50 2@100 4@100 7@100 1@200 3@200 9@200");
    CHECK(g->oldest->id.ms == 5 && g->newest->id.ms == 9);
    /* A copy has the same order. */
    struct kv *d = type_table[OBJ_STREAM]->dup(e, "d", 1, -1);
    struct stream_cg *dg = stream_cg_find(stream_of(d), "g", 1);
    n = time_order(dg, out, sizeof(out));
    CHECK_MEM(out, n, "5@50 8@50 2@100 4@100 7@100 1@200 3@200 9@200");
    kv_free(d);
    kv_free(e);
}

/* ---- reference policies ------------------------------------------------------------------ */

/* 1..n, one group "g" with consumer "c" that has read up to `read` and
 * has `pending` of them (from 1) still pending. */
static struct stream *grouped(int n, int per_node, int read, int pending, struct stream_cg **gout) {
    struct stream *s = numbered(n, per_node);
    streamid z = sid(0, 0);
    struct stream_cg *g = stream_cg_create(s, "g", 1, &z, 0);
    struct stream_consumer *c = stream_consumer_create(g, "c", 1, 0);
    for (int i = 1; i <= read; i++) {
        streamid id = sid((uint64_t)i, 0);
        stream_cg_delivered(s, g, &id);
        if (i <= pending) stream_pel_add(g, c, &id, 0);
    }
    if (gout) *gout = g;
    return s;
}

static void test_policies(void) {
    struct stream_cg *g;
    struct stream *s = grouped(10, 5, 6, 2, &g);
    streamid id;
    /* ACKED: entry_acked only when read by every group and not pending. */
    id = sid(1, 0);
    CHECK(!stream_entry_acked(s, &id));
    id = sid(3, 0);
    CHECK(stream_entry_acked(s, &id));
    id = sid(7, 0);
    CHECK(!stream_entry_acked(s, &id));
    streamid z = sid(0, 0);
    struct stream_cg *h = stream_cg_create(s, "h", 1, &z, 0);
    id = sid(3, 0);
    CHECK(!stream_entry_acked(s, &id));
    stream_cg_destroy(s, h);
    CHECK_EQ_LL(stream_delete_policy(s, &id, STREAM_ACKED), 1);
    CHECK_EQ_LL(stream_delete_policy(s, &id, STREAM_ACKED), -1);
    id = sid(1, 0);
    CHECK_EQ_LL(stream_delete_policy(s, &id, STREAM_ACKED), 2);
    id = sid(8, 0);
    CHECK_EQ_LL(stream_delete_policy(s, &id, STREAM_ACKED), 2);
    CHECK_EQ_LL(s->length, 9);
    /* KEEPREF keeps the PEL record. */
    id = sid(1, 0);
    CHECK_EQ_LL(stream_delete_policy(s, &id, STREAM_KEEPREF), 1);
    CHECK(stream_pel_find(g, &id) != NULL);
    /* DELREF drops it, even when the entry is gone already. */
    CHECK_EQ_LL(stream_delete_policy(s, &id, STREAM_DELREF), -1);
    CHECK(stream_pel_find(g, &id) == NULL);
    id = sid(2, 0);
    CHECK_EQ_LL(stream_delete_policy(s, &id, STREAM_DELREF), 1);
    CHECK(stream_pel_find(g, &id) == NULL);
    CHECK_EQ_LL(g->pel_count, 0);
    stream_free(s);

    /* Trims. KEEPREF: whole nodes, references stay. */
    s = grouped(20, 5, 12, 12, &g);
    struct stream_trim t = {.strategy = STREAM_TRIM_MAXLEN, .maxlen = 8, .approx = 1, .policy = STREAM_KEEPREF};
    CHECK_EQ_LL(trim(s, &t), 10);
    CHECK_EQ_LL(g->pel_count, 12);
    stream_free(s);
    /* DELREF, approx: whole nodes, their references dropped. */
    s = grouped(20, 5, 12, 12, &g);
    t.policy = STREAM_DELREF;
    CHECK_EQ_LL(trim(s, &t), 10);
    CHECK_EQ_LL(s->length, 10);
    CHECK_EQ_LL(g->pel_count, 2);
    CHECK_EQ_LL(stream_node_count(s), 2);
    stream_free(s);
    /* DELREF, exact. */
    s = grouped(20, 5, 12, 12, &g);
    t.approx = 0;
    CHECK_EQ_LL(trim(s, &t), 12);
    CHECK_EQ_LL(g->pel_count, 0);
    CHECK(s->first_id.ms == 13);
    stream_free(s);
    /* DELREF keeps a tombstone's reference (only what it removes loses
     * its references), even when the tombstone's node goes. */
    s = grouped(20, 5, 12, 12, &g);
    id = sid(3, 0);
    CHECK_EQ_LL(stream_delete_policy(s, &id, STREAM_KEEPREF), 1);
    t = (struct stream_trim){.strategy = STREAM_TRIM_MAXLEN, .maxlen = 10, .policy = STREAM_DELREF};
    CHECK_EQ_LL(trim(s, &t), 9);
    CHECK(s->first_id.ms == 11);
    CHECK_EQ_LL(stream_node_count(s), 2);
    CHECK_EQ_LL(g->pel_count, 3);
    CHECK(stream_pel_find(g, &id) != NULL);
    stream_free(s);
    /* A tombstone in a node that stays keeps its reference too; a trim
     * that finds nothing but tombstones in range changes nothing (and
     * does not call its pre_change). */
    s = grouped(20, 5, 12, 12, &g);
    id = sid(8, 0);
    CHECK_EQ_LL(stream_delete_policy(s, &id, STREAM_KEEPREF), 1);
    t = (struct stream_trim){.strategy = STREAM_TRIM_MINID, .minid = sid(9, 0), .policy = STREAM_DELREF};
    CHECK_EQ_LL(trim(s, &t), 7);
    CHECK(s->first_id.ms == 9);
    CHECK_EQ_LL(g->pel_count, 5);
    CHECK(stream_pel_find(g, &id) != NULL);
    CHECK_EQ_LL(trim(s, &t), 0);
    CHECK(stream_pel_find(g, &id) != NULL);
    CHECK(nodes_valid(s));
    stream_free(s);
    /* ACKED, approx: node 1-5 acked goes; node 6-10 has 7..10 unread and
     * stays whole, the walk stops at the first node not all in range. */
    s = grouped(20, 5, 6, 0, &g);
    t = (struct stream_trim){.strategy = STREAM_TRIM_MINID, .minid = sid(15, 0), .approx = 1, .policy = STREAM_ACKED};
    CHECK_EQ_LL(trim(s, &t), 6);
    CHECK_EQ_LL(s->length, 14);
    CHECK(s->first_id.ms == 7);
    CHECK_EQ_LL(stream_node_count(s), 3);
    CHECK(streamid_is_zero(&s->max_deleted_id));
    CHECK(nodes_valid(s));
    stream_free(s);
    /* ACKED, exact, with a pending entry in the middle: a hole behind it
     * counts as a tombstone. */
    s = grouped(20, 5, 12, 0, &g);
    struct stream_consumer *c = stream_consumer_find(g, "c", 1);
    id = sid(4, 0);
    stream_pel_add(g, c, &id, 0);
    t = (struct stream_trim){.strategy = STREAM_TRIM_MAXLEN, .maxlen = 0, .policy = STREAM_ACKED};
    CHECK_EQ_LL(trim(s, &t), 11);
    CHECK_EQ_LL(s->length, 9);
    CHECK(s->first_id.ms == 4);
    CHECK(s->max_deleted_id.ms == 12);
    char out[1024];
    streamid hi = sid(13, 0);
    dump(s, NULL, &hi, 0, out, sizeof(out));
    CHECK_MEM(out, strlen(out), "4-0 f v|13-0 f v");
    CHECK(nodes_valid(s));
    stream_free(s);
    default_limits();
}

/* ---- entries-read and lag ------------------------------------------------------------------ */

/* The lag as XINFO shows it: the number, or -1 for nil. */
static long long lag_of(const struct stream *s, const struct stream_cg *g) {
    int valid;
    long long lag = stream_cg_lag(s, g, &valid);
    return valid ? lag : -1;
}

/* stream_estimate_entries_read at ms-seq. */
static long long estimate(const struct stream *s, uint64_t ms, uint64_t seq) {
    streamid id = sid(ms, seq);
    return stream_estimate_entries_read(s, &id);
}

/* Delete entry ms-0; 1 when it was live. */
static int del(struct stream *s, uint64_t ms) {
    streamid id = sid(ms, 0);
    return stream_delete(s, &id);
}

/* The group delivered entry ms-0. */
static void deliver(struct stream *s, struct stream_cg *g, uint64_t ms) {
    streamid id = sid(ms, 0);
    stream_cg_delivered(s, g, &id);
}

/* Entries i-0 for i in 1..n (one node), group "g" at 0-0 that has been
 * delivered 1..read. */
static struct stream *lagged(int n, int read, struct stream_cg **gout) {
    struct stream *s = numbered(n, 100);
    streamid z = sid(0, 0);
    struct stream_cg *g = stream_cg_create(s, "g", 1, &z, 0);
    for (int i = 1; i <= read; i++) deliver(s, g, (uint64_t)i);
    *gout = g;
    return s;
}

static void test_lag(void) {
    set_limits(0, 100);
    struct stream *s = stream_new();
    streamid z = sid(0, 0);
    struct stream_cg *g = stream_cg_create(s, "g", 1, &z, 0);
    CHECK_EQ_LL(lag_of(s, g), 0);
    for (int i = 1; i <= 10; i++) add(s, (uint64_t)i, 0, "f", "v", NULL);
    CHECK_EQ_LL(lag_of(s, g), 10);
    for (int i = 1; i <= 4; i++) deliver(s, g, (uint64_t)i);
    CHECK_EQ_LL(g->entries_read, 4);
    CHECK_EQ_LL(lag_of(s, g), 6);
    /* Delivering an older id changes nothing. */
    deliver(s, g, 2);
    CHECK_EQ_LL(g->entries_read, 4);
    CHECK(g->last_id.ms == 4);
    /* A tombstone behind the group leaves its counter exact. */
    CHECK(del(s, 3));
    CHECK(!stream_range_has_tombstones(s, &g->last_id, NULL));
    CHECK_EQ_LL(lag_of(s, g), 6);
    /* One ahead of it: the lag is unknown until it is passed. */
    CHECK(del(s, 7));
    CHECK(stream_range_has_tombstones(s, &g->last_id, NULL));
    CHECK_EQ_LL(lag_of(s, g), -1);
    deliver(s, g, 5);
    CHECK_EQ_LL(g->entries_read, STREAM_ENTRIES_READ_INVALID);
    deliver(s, g, 6);
    CHECK_EQ_LL(g->entries_read, STREAM_ENTRIES_READ_INVALID);
    CHECK_EQ_LL(lag_of(s, g), -1);
    deliver(s, g, 10);
    CHECK_EQ_LL(g->entries_read, 10);
    CHECK_EQ_LL(lag_of(s, g), 0);

    /* Estimates. */
    CHECK_EQ_LL(estimate(s, 10, 0), 10);
    CHECK_EQ_LL(estimate(s, 11, 0), STREAM_ENTRIES_READ_INVALID);
    CHECK_EQ_LL(estimate(s, 3, 0), STREAM_ENTRIES_READ_INVALID);
    /* Between the first and the last entry: unknown, tombstone or not. */
    CHECK_EQ_LL(estimate(s, 8, 0), STREAM_ENTRIES_READ_INVALID);
    struct stream_trim t = {.strategy = STREAM_TRIM_MINID, .minid = sid(8, 0)};
    trim(s, &t);
    CHECK(s->first_id.ms == 8);
    /* The range test sees the greatest tombstone (7-0), even before the
     * first entry, as Redis 8 does. */
    CHECK(stream_range_has_tombstones(s, NULL, NULL));
    CHECK(!stream_range_has_tombstones(s, &s->first_id, NULL));
    CHECK_EQ_LL(estimate(s, 8, 0), 8);
    CHECK_EQ_LL(estimate(s, 7, 5), 7);
    CHECK_EQ_LL(estimate(s, 9, 0), STREAM_ENTRIES_READ_INVALID);
    t.minid = sid(100, 0);
    trim(s, &t);
    CHECK_EQ_LL(s->length, 0);
    CHECK_EQ_LL(estimate(s, 3, 0), 10);
    CHECK_EQ_LL(estimate(s, 11, 0), STREAM_ENTRIES_READ_INVALID);
    /* An empty stream has nothing left to read, wherever the group is. */
    g->last_id = sid(3, 0);
    g->entries_read = 3;
    CHECK_EQ_LL(lag_of(s, g), 0);
    g->entries_read = STREAM_ENTRIES_READ_INVALID;
    CHECK_EQ_LL(lag_of(s, g), 0);
    struct stream *e = stream_new();
    CHECK_EQ_LL(estimate(e, 3, 0), 0);
    stream_free(e);
    stream_free(s);

    /* XTRIM MAXLEN 0 with one entry unread: lag 0, not 1. */
    s = lagged(10, 9, &g);
    CHECK_EQ_LL(lag_of(s, g), 1);
    t = (struct stream_trim){.strategy = STREAM_TRIM_MAXLEN, .maxlen = 0};
    CHECK_EQ_LL(trim(s, &t), 10);
    CHECK_EQ_LL(lag_of(s, g), 0);
    /* A new entry is all there is to read; delivering it re-places the
     * counter (the group sits behind the first entry). */
    add(s, 11, 0, "f", "v", NULL);
    CHECK_EQ_LL(lag_of(s, g), 1);
    deliver(s, g, 11);
    CHECK_EQ_LL(g->entries_read, 11);
    CHECK_EQ_LL(lag_of(s, g), 0);
    stream_free(s);

    /* A trim past the group: what is left is the lag, and the next
     * delivery counts from the first entry, not from the stale counter. */
    s = lagged(10, 2, &g);
    t = (struct stream_trim){.strategy = STREAM_TRIM_MINID, .minid = sid(6, 0)};
    CHECK_EQ_LL(trim(s, &t), 5);
    CHECK_EQ_LL(lag_of(s, g), 5);
    deliver(s, g, 6);
    CHECK_EQ_LL(g->entries_read, 6);
    CHECK_EQ_LL(lag_of(s, g), 4);
    stream_free(s);

    /* A deletion ahead of the group that a trim then passes: the
     * tombstone lies before the first entry and behind nothing the group
     * has to read (lag 6, where counting from the counter gives 8). */
    s = lagged(10, 2, &g);
    CHECK(del(s, 3));
    CHECK_EQ_LL(lag_of(s, g), -1);
    t = (struct stream_trim){.strategy = STREAM_TRIM_MINID, .minid = sid(5, 0)};
    CHECK_EQ_LL(trim(s, &t), 3);
    CHECK(s->first_id.ms == 5 && s->max_deleted_id.ms == 3);
    CHECK_EQ_LL(lag_of(s, g), 6);
    deliver(s, g, 5);
    CHECK_EQ_LL(g->entries_read, 5);
    CHECK_EQ_LL(lag_of(s, g), 5);
    stream_free(s);

    /* Deleting the first entry while the group is before it. */
    s = lagged(10, 0, &g);
    CHECK(del(s, 1));
    CHECK_EQ_LL(lag_of(s, g), 9);
    CHECK_EQ_LL(stream_estimate_entries_read(s, &z), 1);
    /* A tombstone after the first entry: even 0-0 is not placed. */
    CHECK(del(s, 5));
    CHECK_EQ_LL(stream_estimate_entries_read(s, &z), STREAM_ENTRIES_READ_INVALID);
    CHECK_EQ_LL(lag_of(s, g), -1);
    stream_free(s);

    /* An unknown counter (a group created or set without ENTRIESREAD). */
    s = lagged(10, 0, &g);
    g->last_id = sid(5, 0);
    g->entries_read = STREAM_ENTRIES_READ_INVALID;
    CHECK_EQ_LL(lag_of(s, g), -1);
    deliver(s, g, 6);
    CHECK_EQ_LL(g->entries_read, STREAM_ENTRIES_READ_INVALID);
    deliver(s, g, 10);
    CHECK_EQ_LL(g->entries_read, 10);
    add(s, 11, 0, "f", "v", NULL);
    CHECK_EQ_LL(lag_of(s, g), 1);
    deliver(s, g, 11);
    CHECK_EQ_LL(g->entries_read, 11);
    /* At 0-0 with no tombstone: placed before the first entry. */
    g->last_id = z;
    g->entries_read = STREAM_ENTRIES_READ_INVALID;
    CHECK_EQ_LL(lag_of(s, g), 11);
    deliver(s, g, 1);
    CHECK_EQ_LL(g->entries_read, 1);
    /* Past the last id: unknown. */
    g->last_id = sid(20, 0);
    g->entries_read = STREAM_ENTRIES_READ_INVALID;
    CHECK_EQ_LL(lag_of(s, g), -1);
    stream_free(s);
    default_limits();
}

/* ---- lifecycle -------------------------------------------------------------------------------- */

static void digest_hex(const struct kv *e, char hex[41]) {
    unsigned char d[20] = {0};
    kv_digest_value(e, d);
    dg_hex(d, hex);
}

static void test_lifecycle(void) {
    default_limits();
    CHECK(type_table[OBJ_STREAM] == &stream_type_ops);
    CHECK(strcmp(stream_type_ops.name, "stream") == 0);
    char hex[41];
    /* Digests as redis-server's DEBUG DIGEST-VALUE gives them. */
    struct kv *e = stream_new_entry("s", 1);
    struct stream *s = stream_of(e);
    add(s, 1, 1, "a", "1", "b", "hello", NULL);
    add(s, 1, 2, "a", "2", "b", "world", NULL);
    add(s, 5, 0, "x", "-7", NULL);
    add(s, UINT64_MAX, UINT64_MAX, "f", "", NULL);
    digest_hex(e, hex);
    CHECK_MEM(hex, 40, "5f12f80a8b2a45a7805a79c4cbe83598e44920da");
    struct kv *t = stream_new_entry("t", 1);
    add(stream_of(t), 1, 0, "f", "v", NULL);
    digest_hex(t, hex);
    CHECK_MEM(hex, 40, "d69a6f3ebce4d5081bba8472d51dcf0e548c82ca");
    struct kv *u = stream_new_entry("u", 1);
    add(stream_of(u), 3, 0, "f", "v", NULL);
    add(stream_of(u), 4, 0, "g", "w", NULL);
    streamid id = sid(3, 0);
    stream_delete(stream_of(u), &id);
    digest_hex(u, hex);
    CHECK_MEM(hex, 40, "7705a31dc93e3ec124118ffc1e8ea633b279fb54");
    /* The digest does not see node boundaries or groups. */
    set_limits(0, 1);
    struct kv *e2 = stream_new_entry("s", 1);
    add(stream_of(e2), 1, 1, "a", "1", "b", "hello", NULL);
    add(stream_of(e2), 1, 2, "a", "2", "b", "world", NULL);
    add(stream_of(e2), 5, 0, "x", "-7", NULL);
    add(stream_of(e2), UINT64_MAX, UINT64_MAX, "f", "", NULL);
    streamid z = sid(0, 0);
    stream_cg_create(stream_of(e2), "g", 1, &z, 0);
    CHECK_EQ_LL(stream_node_count(stream_of(e2)), 4);
    digest_hex(e2, hex);
    CHECK_MEM(hex, 40, "5f12f80a8b2a45a7805a79c4cbe83598e44920da");
    default_limits();

    /* Dup: entries, counters, groups, consumers, PEL in both orders. */
    struct stream_cg *g = stream_cg_create(s, "grp", 3, &s->last_id, 4);
    struct stream_consumer *c1 = stream_consumer_create(g, "c1", 2, 10), *c2 = stream_consumer_create(g, "c2", 2, 20);
    c2->active_time = 25;
    streamid a = sid(1, 1), b = sid(1, 2), c = sid(5, 0);
    stream_pel_add(g, c1, &c, 300);
    stream_pel_add(g, c2, &a, 100);
    stream_pel_assign(g, stream_pel_add(g, c1, &b, 200), c1, 200, 1);
    stream_delete(s, &c);
    struct kv *d = type_table[OBJ_STREAM]->dup(e, "d", 1, 1234);
    CHECK_EQ_LL(kv_type(d), OBJ_STREAM);
    CHECK_EQ_LL(kv_enc(d), ENC_STREAM);
    CHECK_EQ_LL(kv_expire(d), 1234);
    struct stream *ds = stream_of(d);
    CHECK(ds != s);
    char o1[1024], o2[1024];
    dump(s, NULL, NULL, 0, o1, sizeof(o1));
    dump(ds, NULL, NULL, 0, o2, sizeof(o2));
    CHECK(strcmp(o1, o2) == 0);
    CHECK_EQ_LL(ds->length, s->length);
    CHECK(streamid_cmp(&ds->last_id, &s->last_id) == 0);
    CHECK(streamid_cmp(&ds->first_id, &s->first_id) == 0);
    CHECK(streamid_cmp(&ds->max_deleted_id, &s->max_deleted_id) == 0);
    CHECK_EQ_LL(ds->entries_added, s->entries_added);
    CHECK(nodes_valid(ds));
    struct stream_cg *dg = stream_cg_find(ds, "grp", 3);
    CHECK(dg && dg != g);
    CHECK_EQ_LL(dg->entries_read, 4);
    CHECK_EQ_LL(dg->pel_count, 3);
    CHECK_EQ_LL(dg->nconsumers, 2);
    struct stream_consumer *d2 = stream_consumer_find(dg, "c2", 2);
    CHECK(d2 && d2 != c2 && d2->seen_time == 20 && d2->active_time == 25 && d2->pel_count == 1);
    struct stream_nack *n = dg->oldest;
    CHECK(n && n->id.ms == 1 && n->id.seq == 1 && n->consumer == d2 && n->delivery_time == 100);
    n = n->next;
    CHECK(n && n->id.seq == 2 && n->delivery_count == 2 && n->delivery_time == 200);
    n = n->next;
    CHECK(n && n->id.ms == 5 && n->delivery_time == 300 && !n->next);
    CHECK(stream_pel_find(dg, &c) == n);
    unsigned char g1[20] = {0}, g2[20] = {0};
    type_table[OBJ_STREAM]->digest(e, g1);
    type_table[OBJ_STREAM]->digest(d, g2);
    CHECK(memcmp(g1, g2, 20) == 0);
    /* The copy is independent. */
    stream_pel_ack(g, stream_pel_find(g, &a));
    CHECK_EQ_LL(dg->pel_count, 3);

    /* Usage and free effort. */
    size_t us = type_table[OBJ_STREAM]->usage(e, 0);
    CHECK(us > sizeof(struct stream));
    CHECK(type_table[OBJ_STREAM]->free_effort(e) >= 1);
    set_limits(0, 10);
    struct kv *big = stream_new_entry("b", 1);
    for (int i = 1; i <= 1000; i++) add(stream_of(big), (uint64_t)i, 0, "field", "value", NULL);
    size_t all = type_table[OBJ_STREAM]->usage(big, 0), sampled = type_table[OBJ_STREAM]->usage(big, 5);
    CHECK(all > 1000 * 7);
    CHECK(sampled > all / 2 && sampled < all * 2);
    CHECK_EQ_LL(type_table[OBJ_STREAM]->free_effort(big), 100);
    default_limits();

    kv_free(e);
    kv_free(e2);
    kv_free(t);
    kv_free(u);
    kv_free(d);
    kv_free(big);
}

/* ---- the randomized model ----------------------------------------------------------------- */

struct ment {
    streamid id;
    int nf;
    char f[4][8], v[4][24];
};

static struct ment *model;
static size_t mlen, mcap;

static void model_check(struct stream *s, const char *where) {
    CHECK_EQ_LL(s->length, mlen);
    if (s->length != mlen) fprintf(stderr, "  at %s\n", where);
    if (mlen) {
        CHECK(streamid_cmp(&s->first_id, &model[0].id) == 0);
    } else {
        CHECK(streamid_is_zero(&s->first_id));
    }
    CHECK(nodes_valid(s));
}

/* Compare [lo, hi] (model indexes from a random id range) both ways. */
static void model_range(struct stream *s) {
    streamid a = sid(rnd() % 3000, rnd() % 4), b = sid(rnd() % 3000, rnd() % 4);
    if (rnd() % 4 == 0) a = sid(0, 0);
    if (rnd() % 4 == 0) b = sid(UINT64_MAX, UINT64_MAX);
    for (int rev = 0; rev < 2; rev++) {
        size_t expect = 0;
        for (size_t i = 0; i < mlen; i++)
            if (streamid_cmp(&model[i].id, &a) >= 0 && streamid_cmp(&model[i].id, &b) <= 0) expect++;
        struct stream_iter it;
        streamid id;
        long long nf;
        size_t k = 0, mi = 0;
        int ok = 1;
        stream_iter_start(&it, s, &a, &b, rev);
        while (stream_iter_next(&it, &id, &nf)) {
            /* Find the model entry. */
            while (mi < mlen && streamid_cmp(&model[rev ? mlen - 1 - mi : mi].id, &id) != 0) mi++;
            if (mi == mlen) {
                ok = 0;
                break;
            }
            const struct ment *m = &model[rev ? mlen - 1 - mi : mi];
            if (nf != m->nf) ok = 0;
            for (long long j = 0; j < nf && ok; j++) {
                const char *f, *v;
                size_t fl, vl;
                stream_iter_field(&it, &f, &fl, &v, &vl);
                if (fl != strlen(m->f[j]) || memcmp(f, m->f[j], fl) || vl != strlen(m->v[j]) || memcmp(v, m->v[j], vl))
                    ok = 0;
            }
            k++;
        }
        stream_iter_stop(&it);
        CHECK(ok);
        CHECK_EQ_LL(k, expect);
    }
}

static void model_drop(size_t i) {
    memmove(&model[i], &model[i + 1], (mlen - i - 1) * sizeof(*model));
    mlen--;
}

static void test_model(void) {
    mcap = 4096;
    model = malloc(mcap * sizeof(*model));
    mlen = 0;
    static const char *words[] = {"a", "bb", "name", "x", "12", "-5", "0", "", "007", "9223372036854775807"};
    for (int round = 0; round < 4; round++) {
        set_limits(round == 3 ? 0 : (long long)(rnd() % 300 + 1), (long long)(rnd() % 12));
        struct stream *s = stream_new();
        mlen = 0;
        streamid last = sid(1, 0);
        for (int step = 0; step < 6000; step++) {
            int op = (int)(rnd() % 100);
            if (op < 55 && mlen < mcap) {
                struct ment m;
                if (rnd() % 3 == 0) last.ms += rnd() % 5 + 1, last.seq = rnd() % 3;
                else last.seq++;
                m.id = last;
                m.nf = (int)(rnd() % 4) + 1;
                int same = rnd() % 2;
                for (int j = 0; j < m.nf; j++) {
                    snprintf(m.f[j], sizeof(m.f[j]), "%s", same ? (j == 0 ? "k" : words[j]) : words[rnd() % 10]);
                    if (rnd() % 3 == 0) snprintf(m.v[j], sizeof(m.v[j]), "%lld", (long long)(rnd() % 2000) - 1000);
                    else snprintf(m.v[j], sizeof(m.v[j]), "%s", words[rnd() % 10]);
                }
                struct stream_field fv[4];
                for (int j = 0; j < m.nf; j++)
                    fv[j] = (struct stream_field){m.f[j], m.v[j], strlen(m.f[j]), strlen(m.v[j])};
                stream_append(s, &m.id, fv, (size_t)m.nf);
                model[mlen++] = m;
            } else if (op < 75) {
                /* Delete an existing or a missing id. */
                if (mlen && rnd() % 4) {
                    size_t i = rnd() % mlen;
                    streamid id = model[i].id;
                    CHECK_EQ_LL(stream_delete(s, &id), 1);
                    model_drop(i);
                    CHECK(streamid_cmp(&s->max_deleted_id, &id) >= 0);
                } else {
                    streamid id = sid(last.ms + 1, 0);
                    CHECK_EQ_LL(stream_delete(s, &id), 0);
                }
            } else if (op < 85) {
                model_range(s);
            } else if (op < 95) {
                struct stream_trim t = {0};
                t.approx = (int)(rnd() % 2);
                t.limit = t.approx && rnd() % 2 ? (long long)(rnd() % 50) : 0;
                long long got;
                size_t before = mlen;
                if (rnd() % 2) {
                    t.strategy = STREAM_TRIM_MAXLEN;
                    t.maxlen = (long long)(rnd() % (mlen + 10));
                    got = trim(s, &t);
                    if (!t.approx) CHECK_EQ_LL(mlen - (size_t)got, (size_t)t.maxlen < mlen ? (size_t)t.maxlen : mlen);
                    else
                        CHECK((long long)(mlen - (size_t)got) >=
                              (t.maxlen < (long long)mlen ? t.maxlen : (long long)mlen));
                } else {
                    t.strategy = STREAM_TRIM_MINID;
                    t.minid = mlen ? model[rnd() % mlen].id : sid(0, 0);
                    if (rnd() % 2) t.minid.seq++;
                    got = trim(s, &t);
                    if (!t.approx) {
                        size_t below = 0;
                        while (below < mlen && streamid_cmp(&model[below].id, &t.minid) < 0) below++;
                        CHECK_EQ_LL(got, below);
                    }
                }
                if (t.limit) CHECK(got <= t.limit);
                CHECK(got >= 0 && (size_t)got <= before);
                memmove(model, model + got, (mlen - (size_t)got) * sizeof(*model));
                mlen -= (size_t)got;
            } else {
                struct kv *e = kv_new_ptr("k", 1, OBJ_STREAM, ENC_STREAM, s, -1);
                struct kv *d = type_table[OBJ_STREAM]->dup(e, "d", 1, -1);
                unsigned char d1[20] = {0}, d2[20] = {0};
                type_table[OBJ_STREAM]->digest(e, d1);
                type_table[OBJ_STREAM]->digest(d, d2);
                CHECK(memcmp(d1, d2, 20) == 0);
                kv_free(d);
                /* Detach s from e before freeing the entry alone. */
                kv_set_ptr(e, stream_new());
                kv_free(e);
            }
            if (step % 97 == 0) model_check(s, "step");
        }
        model_check(s, "end");
        model_range(s);
        stream_free(s);
    }
    free(model);
    default_limits();
}

/* ---- a randomized run of groups and policies -------------------------------------------- */

/* Entries i-0 for i in 1..PN; two groups with two consumers each; random
 * deliveries, acks, deletes and trims under random policies, checked
 * against what the groups must hold: ACKED never removes an entry some
 * group still references, DELREF leaves no reference to what it removed
 * and every other one (a tombstone's too), KEEPREF leaves every
 * reference, and every index agrees with the model. */
enum { PN = 3000 };

static void test_policy_model(void) {
    set_limits(0, 7);
    struct stream *s = stream_new();
    static char live[PN + 1], pend[2][PN + 1];
    static uint64_t last[2];
    memset(pend, 0, sizeof(pend));
    for (int i = 1; i <= PN; i++) {
        add(s, (uint64_t)i, 0, "f", "v", NULL);
        live[i] = 1;
    }
    streamid z = sid(0, 0);
    struct stream_cg *g[2];
    struct stream_consumer *c[2][2];
    for (int k = 0; k < 2; k++) {
        char nm[2] = {(char)('a' + k), 0};
        g[k] = stream_cg_create(s, nm, 1, &z, 0);
        c[k][0] = stream_consumer_create(g[k], "x", 1, 0);
        c[k][1] = stream_consumer_create(g[k], "y", 1, 0);
        last[k] = 0;
    }
#define REFD(i) ((i) > (int)last[0] || (i) > (int)last[1] || pend[0][i] || pend[1][i])
    int bad_acked = 0, bad_delref = 0, bad_keep = 0;
    for (int step = 0; step < 4000; step++) {
        int op = (int)(rnd() % 10);
        if (op < 4) {
            int k = (int)(rnd() % 2), n = (int)(rnd() % 20) + 1, noack = rnd() % 4 == 0;
            for (int i = (int)last[k] + 1; i <= PN && n; i++) {
                if (!live[i]) continue;
                streamid id = sid((uint64_t)i, 0);
                stream_cg_delivered(s, g[k], &id);
                last[k] = (uint64_t)i;
                if (!noack && !pend[k][i]) {
                    stream_pel_add(g[k], c[k][rnd() % 2], &id, step);
                    pend[k][i] = 1;
                }
                n--;
            }
        } else if (op < 6) {
            int k = (int)(rnd() % 2);
            streamid st = sid(rnd() % PN, 0);
            struct stream_nack *na = stream_pel_seek(g[k], &st);
            if (na) {
                pend[k][na->id.ms] = 0;
                stream_pel_ack(g[k], na);
            }
        } else if (op < 8) {
            int i = (int)(rnd() % PN) + 1, pol = (int)(rnd() % 3);
            streamid id = sid((uint64_t)i, 0);
            int refd = REFD(i), r = stream_delete_policy(s, &id, pol);
            if (pol == STREAM_ACKED && refd) {
                CHECK_EQ_LL(r, 2);
            } else {
                CHECK_EQ_LL(r, live[i] ? 1 : -1);
                live[i] = 0;
            }
            if (pol == STREAM_DELREF) pend[0][i] = pend[1][i] = 0;
        } else {
            struct stream_trim t = {0};
            t.policy = (int)(rnd() % 3);
            t.approx = (int)(rnd() % 2);
            if (rnd() % 2) {
                t.strategy = STREAM_TRIM_MAXLEN;
                t.maxlen = (long long)(s->length - rnd() % 60 > 0 ? s->length - rnd() % 60 : 0);
                if (t.maxlen < 0) t.maxlen = 0;
            } else {
                t.strategy = STREAM_TRIM_MINID;
                t.minid = sid(s->first_id.ms + rnd() % 60, 0);
            }
            static char was[PN + 1];
            int refd_before[PN + 1];
            memcpy(was, live, sizeof(live));
            for (int i = 1; i <= PN; i++) refd_before[i] = REFD(i);
            long long got = trim(s, &t), gone = 0;
            /* Which entries went: read back. */
            memset(live, 0, sizeof(live));
            struct stream_iter it;
            streamid id;
            long long nf;
            stream_iter_start(&it, s, NULL, NULL, 0);
            while (stream_iter_next(&it, &id, &nf)) live[id.ms] = 1;
            stream_iter_stop(&it);
            for (int i = 1; i <= PN; i++) {
                if (was[i] && !live[i]) {
                    gone++;
                    if (t.policy == STREAM_ACKED && refd_before[i]) bad_acked++;
                    if (t.policy == STREAM_DELREF) {
                        streamid di = sid((uint64_t)i, 0);
                        if (stream_pel_find(g[0], &di) || stream_pel_find(g[1], &di)) bad_delref++;
                        pend[0][i] = pend[1][i] = 0;
                    }
                }
                if (!was[i] && live[i]) bad_keep++;
            }
            /* Every other reference stays, a tombstone's in the trimmed
             * range included (the check below sees any that went). */
            CHECK_EQ_LL(got, gone);
        }
        /* The PELs agree with the model. */
        if (step % 50 == 0) {
            for (int k = 0; k < 2; k++) {
                uint64_t n = 0;
                for (int i = 1; i <= PN; i++) {
                    streamid di = sid((uint64_t)i, 0);
                    int has = stream_pel_find(g[k], &di) != NULL;
                    if (has != pend[k][i]) bad_keep++;
                    n += pend[k][i];
                }
                CHECK_EQ_LL(g[k]->pel_count, n);
                CHECK_EQ_LL(c[k][0]->pel_count + c[k][1]->pel_count, n);
            }
            CHECK(nodes_valid(s));
        }
    }
#undef REFD
    CHECK_EQ_LL(bad_acked, 0);
    CHECK_EQ_LL(bad_delref, 0);
    CHECK_EQ_LL(bad_keep, 0);
    stream_free(s);
    default_limits();
}

/* ---- the validator ----------------------------------------------------------------------------- */

static void test_validate(void) {
    set_limits(0, 20);
    struct stream *s = stream_new();
    for (int i = 1; i <= 200; i++) {
        char v[24];
        snprintf(v, sizeof(v), "%d", i * 37 - 3000);
        if (i % 7 == 0) add(s, (uint64_t)i * 100, 0, "other", v, "z", "long value text", NULL);
        else add(s, (uint64_t)i * 100, (uint64_t)i % 3, "f", v, "g", "word", NULL);
    }
    for (int i = 3; i <= 200; i += 5) {
        streamid id = sid((uint64_t)i * 100, (uint64_t)i % 3);
        stream_delete(s, &id);
    }
    CHECK(nodes_valid(s));
    CHECK(!stream_node_validate(NULL, 0));
    long long accepted = 0, tried = 0;
    for (size_t ni = 0; ni < stream_node_count(s); ni++) {
        size_t len;
        const unsigned char *p = stream_node_image(s, ni, &len);
        CHECK(stream_node_validate(p, len));
        /* Every truncation, in an exactly sized heap copy so ASan sees any
         * read past the end. */
        for (size_t l = 0; l < len; l++) {
            unsigned char *c = malloc(l ? l : 1);
            memcpy(c, p, l);
            CHECK(!stream_node_validate(c, l));
            free(c);
        }
        /* Random flips of one to three bytes. */
        unsigned char *c = malloc(len);
        for (int k = 0; k < 3000; k++) {
            memcpy(c, p, len);
            int flips = (int)(rnd() % 3) + 1;
            for (int j = 0; j < flips; j++) c[rnd() % len] ^= (unsigned char)(rnd() % 255 + 1);
            accepted += stream_node_validate(c, len);
            tried++;
        }
        free(c);
    }
    /* Most flips are caught (a flipped value byte is legitimately fine). */
    CHECK(accepted < tried / 2);
    stream_free(s);
    default_limits();
}

/* ---- memory per entry ---------------------------------------------------------------------------- */

/* 1M appends of a 5-field entry with auto-style ids (several per ms), at
 * the default node limits: prints bytes per entry. Redis 7.0 measured
 * the same workload (XADD s * with the same fields) at the number given in
 * stream.h. */
static void test_memory(void) {
    default_limits();
    size_t before = hk_used_memory();
    struct stream *s = stream_new();
    enum { N = 1000000 };
    static const char *fields[5] = {"name", "age", "city", "score", "tag"};
    char vals[5][16];
    struct stream_field fv[5];
    streamid id = sid(1700000000000ULL, 0);
    for (int i = 0; i < N; i++) {
        if (i % 7 == 0) id.ms++, id.seq = 0;
        else id.seq++;
        snprintf(vals[0], 16, "user%d", i % 1000);
        snprintf(vals[1], 16, "%d", 18 + i % 60);
        snprintf(vals[2], 16, "city%d", i % 50);
        snprintf(vals[3], 16, "%d", i % 100000);
        snprintf(vals[4], 16, "t%d", i % 10);
        for (int j = 0; j < 5; j++)
            fv[j] = (struct stream_field){fields[j], vals[j], strlen(fields[j]), strlen(vals[j])};
        stream_append(s, &id, fv, 5);
    }
    size_t used = hk_used_memory() - before;
    printf("stream memory: %zu entries, %zu nodes, %.1f bytes/entry\n", (size_t)N, stream_node_count(s),
           (double)used / N);
    CHECK(used / N < 36);
    stream_free(s);
}

int main(void) {
    hk_alloc_thread_init();
    TEST_RUN(test_ids);
    TEST_RUN(test_append_iterate);
    TEST_RUN(test_node_limits);
    TEST_RUN(test_delete);
    TEST_RUN(test_trim);
    TEST_RUN(test_groups);
    TEST_RUN(test_pel_random);
    TEST_RUN(test_pel_order);
    TEST_RUN(test_policies);
    TEST_RUN(test_lag);
    TEST_RUN(test_lifecycle);
    TEST_RUN(test_model);
    TEST_RUN(test_policy_model);
    TEST_RUN(test_validate);
    TEST_RUN(test_memory);
    return TEST_REPORT();
}
