/* test_quicklist.c - unit tests of the quicklist and its element cursor
 * (src/types/list.c): pushes at both ends, pops, insert before/after,
 * replace, range deletes across nodes, removal by value, node splits and
 * merges at count and byte fill limits (positive fill and the -1..-5 size
 * classes), plain nodes for oversized elements, dup, and a randomized
 * comparison against a plain array model that checks the node invariants
 * after every step. The list value view and the type table are covered by
 * test_listval.c. */
#include "core/alloc.h"
#include "core/listpack.h"
#include "core/lzf.h"
#include "core/status.h"
#include "test.h"
#include "types/kv.h"
#include "types/list.h"
#include "types/types.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- helpers ------------------------------------------------------------ */

/* The expected contents: owned copies of every element. */
struct model {
    char **s;
    size_t *len;
    unsigned long n, cap;
};

static void m_insert(struct model *m, unsigned long at, const char *s, size_t len) {
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->s = realloc(m->s, m->cap * sizeof(*m->s));
        m->len = realloc(m->len, m->cap * sizeof(*m->len));
    }
    memmove(m->s + at + 1, m->s + at, (m->n - at) * sizeof(*m->s));
    memmove(m->len + at + 1, m->len + at, (m->n - at) * sizeof(*m->len));
    m->s[at] = malloc(len ? len : 1);
    memcpy(m->s[at], s, len);
    m->len[at] = len;
    m->n++;
}

static void m_delete(struct model *m, unsigned long at, unsigned long cnt) {
    for (unsigned long i = at; i < at + cnt; i++) free(m->s[i]);
    memmove(m->s + at, m->s + at + cnt, (m->n - at - cnt) * sizeof(*m->s));
    memmove(m->len + at, m->len + at + cnt, (m->n - at - cnt) * sizeof(*m->len));
    m->n -= cnt;
}

static void m_set(struct model *m, unsigned long at, const char *s, size_t len) {
    m_delete(m, at, 1);
    m_insert(m, at, s, len);
}

static void m_free(struct model *m) {
    m_delete(m, 0, m->n);
    free(m->s);
    free(m->len);
    memset(m, 0, sizeof(*m));
}

static int elem_is(const struct ql_cur *cur, const char *s, size_t len) {
    struct lp_val v;
    if (cur->pos == LP_NONE) return 0;
    ql_cur_get(cur, &v);
    return v.len == len && memcmp(v.s, s, len) == 0;
}

/* Links, counts and node shapes: every node non-empty, plain nodes hold
 * exactly one element, prev/next agree, count and len add up. */
static int ql_sane(const struct qlist *ql) {
    unsigned long count = 0, len = 0;
    const struct qnode *prev = NULL;
    int ok = 1;
    for (const struct qnode *n = ql->head; n; prev = n, n = n->next) {
        if (n->prev != prev) ok = 0;
        if (!n->lp == !n->lzf) ok = 0;
        if (ql_node_count(n) == 0) ok = 0;
        if (n->plain && ql_node_count(n) != 1) ok = 0;
        count += ql_node_count(n);
        len++;
    }
    if (ql->tail != prev) ok = 0;
    if (count != ql->count || len != ql->len) ok = 0;
    if (!ok) fprintf(stderr, "quicklist not sane: count %lu/%lu len %lu/%lu\n", count, ql->count, len, ql->len);
    return ok;
}

/* Regular nodes within the fill limit (what push and insert guarantee). */
static int ql_within(const struct qlist *ql, long long fill) {
    size_t sz;
    unsigned long cnt;
    ql_limits(fill, &sz, &cnt);
    for (const struct qnode *n = ql->head; n; n = n->next) {
        if (n->plain) continue;
        if (ql_node_bytes(n) > sz || ql_node_count(n) > cnt) return 0;
        if (fill >= 0 && ql_node_count(n) > 1 && ql_node_bytes(n) > 8192 + 64) return 0;
    }
    return 1;
}

/* The list equals the model, walked forward and backward with a cursor. */
static int ql_matches(struct qlist *ql, const struct model *m) {
    if (ql->count != m->n) return 0;
    struct ql_cur cur;
    if (m->n == 0) return ql_cur_seek(&cur, ql, 0) == HK_ERR_INDEX_RANGE;
    ql_cur_seek(&cur, ql, 0);
    for (unsigned long i = 0; i < m->n; i++) {
        if (!elem_is(&cur, m->s[i], m->len[i])) return 0;
        ql_cur_next(&cur);
    }
    if (cur.pos != LP_NONE) return 0;
    ql_cur_seek(&cur, ql, m->n - 1);
    for (unsigned long i = m->n; i-- > 0;) {
        if (!elem_is(&cur, m->s[i], m->len[i])) return 0;
        ql_cur_prev(&cur);
    }
    return cur.pos == LP_NONE;
}

static void push_str(struct qlist *ql, struct model *m, long long fill, const char *s, int head) {
    ql_push(ql, fill, s, strlen(s), head);
    m_insert(m, head ? 0 : m->n, s, strlen(s));
}

static void push_num(struct qlist *ql, struct model *m, long long fill, long long v, int head) {
    char b[32];
    snprintf(b, sizeof(b), "%lld", v);
    push_str(ql, m, fill, b, head);
}

static unsigned long node_count(const struct qnode *n) { return n ? ql_node_count(n) : 0; }

/* Whether raw listpack lp would be kept compressed under Redis's rules
 * (at least 48 bytes, at least 8 saved). */
static int worth_compressing(const lpack *lp) {
    size_t sz = lp_bytes(lp);
    if (sz < 48) return 0;
    unsigned char *out = malloc(sz);
    size_t c = lzf_compress(lp, sz, out, sz);
    free(out);
    return c != 0 && c + 8 < sz;
}

/* The compression rule: the `compress` nodes at each end raw; every other
 * node compressed, or raw only when compressing it would not pay (or it is
 * the node lent to a cursor, when lent_ok). A compressed node decodes to
 * a listpack of the recorded size and count. */
static int ql_compress_ok(const struct qlist *ql, int lent_ok) {
    unsigned long i = 0;
    int ok = 1;
    if (!lent_ok && ql->lent) ok = 0;
    for (const struct qnode *n = ql->head; n; n = n->next, i++) {
        int edge = ql->compress == 0 || i < ql->compress || i + ql->compress >= ql->len;
        if (edge || (lent_ok && n == ql->lent)) {
            if (!n->lp && ql->compress) {
                fprintf(stderr, "node %lu of %lu compressed within depth %u\n", i, ql->len, ql->compress);
                ok = 0;
            }
            if (!n->lp && !ql->compress) ok = 0;
        } else if (n->lp) {
            if (worth_compressing(n->lp)) {
                fprintf(stderr, "interior node %lu of %lu (%zu bytes) left raw\n", i, ql->len, lp_bytes(n->lp));
                ok = 0;
            }
        } else {
            lpack *lp = malloc(n->lzf->raw);
            if (lzf_decompress(n->lzf->data, n->lzf->csz, lp, n->lzf->raw) != n->lzf->raw ||
                lp_bytes(lp) != n->lzf->raw || lp_count(lp) != n->lzf->count || n->lzf->csz + 8 >= n->lzf->raw)
                ok = 0;
            free(lp);
        }
    }
    return ok;
}

static unsigned long compressed_nodes(const struct qlist *ql) {
    unsigned long c = 0;
    for (const struct qnode *n = ql->head; n; n = n->next) c += n->lp == NULL;
    return c;
}

/* ---- tests -------------------------------------------------------------- */

static void test_limits(void) {
    static const size_t classes[] = {4096, 8192, 16384, 32768, 65536};
    size_t sz;
    unsigned long cnt;
    for (int i = 0; i < 5; i++) {
        ql_limits(-1 - i, &sz, &cnt);
        CHECK_EQ_LL(sz, classes[i]);
        CHECK(cnt == ULONG_MAX);
    }
    ql_limits(-6, &sz, &cnt);
    CHECK_EQ_LL(sz, 65536);
    ql_limits(LLONG_MIN, &sz, &cnt);
    CHECK_EQ_LL(sz, 65536);
    ql_limits(0, &sz, &cnt);
    CHECK(sz == SIZE_MAX);
    CHECK_EQ_LL(cnt, 1);
    ql_limits(128, &sz, &cnt);
    CHECK(sz == SIZE_MAX);
    CHECK_EQ_LL(cnt, 128);
}

static void test_push_pop_both_ends(void) {
    struct qlist *ql = ql_new();
    struct model m = {0};
    CHECK(ql_sane(ql));
    for (int i = 0; i < 10; i++) push_num(ql, &m, 3, i, 0);
    for (int i = 0; i < 10; i++) push_num(ql, &m, 3, 100 + i, 1);
    CHECK(ql_sane(ql));
    CHECK(ql_within(ql, 3));
    CHECK(ql_matches(ql, &m));
    CHECK_EQ_LL(ql->count, 20);
    /* Ten per side, three per node, the newest node at each end holding
     * the odd one: 1+3+3+3 | 3+3+3+1. */
    CHECK_EQ_LL(ql->len, 8);
    CHECK_EQ_LL(node_count(ql->head), 1);
    CHECK_EQ_LL(node_count(ql->head->next), 3);
    CHECK_EQ_LL(node_count(ql->tail), 1);
    /* Pop from each end, one at a time, through the nodes' edges. */
    for (int i = 0; i < 7; i++) {
        ql_del_range(ql, 0, 1);
        m_delete(&m, 0, 1);
        ql_del_range(ql, ql->count - 1, 1);
        m_delete(&m, m.n - 1, 1);
        CHECK(ql_sane(ql));
        CHECK(ql_matches(ql, &m));
    }
    CHECK_EQ_LL(ql->count, 6);
    while (ql->count) {
        ql_del_range(ql, 0, 1);
        m_delete(&m, 0, 1);
    }
    CHECK(ql_sane(ql));
    CHECK(ql->head == NULL && ql->tail == NULL && ql->len == 0);
    /* Usable again once empty. */
    push_str(ql, &m, 3, "again", 1);
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    ql_free(ql);
    m_free(&m);
}

static void test_count_fill(void) {
    for (long long fill = 1; fill <= 6; fill++) {
        struct qlist *ql = ql_new();
        struct model m = {0};
        for (int i = 0; i < 40; i++) push_num(ql, &m, fill, i, 0);
        CHECK(ql_sane(ql));
        CHECK(ql_within(ql, fill));
        CHECK(ql_matches(ql, &m));
        /* Tail pushes fill every node but the last completely. */
        CHECK_EQ_LL(ql->len, (40 + fill - 1) / fill);
        for (const struct qnode *n = ql->head; n != ql->tail; n = n->next) CHECK_EQ_LL(lp_count(n->lp), fill);
        ql_free(ql);
        m_free(&m);
    }
    /* fill 0 means one element per node. */
    struct qlist *ql = ql_new();
    struct model m = {0};
    for (int i = 0; i < 5; i++) push_num(ql, &m, 0, i, i & 1);
    CHECK_EQ_LL(ql->len, 5);
    CHECK(ql_matches(ql, &m));
    ql_free(ql);
    m_free(&m);
}

/* A count limit still caps a node's bytes (8 KB), as Redis does. */
static void test_count_fill_size_safety(void) {
    struct qlist *ql = ql_new();
    struct model m = {0};
    char buf[1001];
    memset(buf, 'q', 1000);
    buf[1000] = 0;
    for (int i = 0; i < 30; i++) push_str(ql, &m, 1000, buf, 0);
    CHECK(ql_sane(ql));
    CHECK(ql_within(ql, 1000));
    CHECK(ql->len >= 4);
    for (const struct qnode *n = ql->head; n; n = n->next) {
        CHECK(!n->plain);
        CHECK(lp_bytes(n->lp) <= 8192);
    }
    CHECK(ql_matches(ql, &m));
    ql_free(ql);
    m_free(&m);
}

static void test_byte_fill_classes(void) {
    char buf[101];
    memset(buf, 'b', 100);
    buf[100] = 0;
    for (int cls = 0; cls < 5; cls++) {
        long long fill = -1 - cls;
        size_t limit;
        unsigned long cnt;
        ql_limits(fill, &limit, &cnt);
        struct qlist *ql = ql_new();
        struct model m = {0};
        unsigned long want = (unsigned long)(3 * limit / 100);
        for (unsigned long i = 0; i < want; i++) push_str(ql, &m, fill, buf, i & 1);
        CHECK(ql_sane(ql));
        CHECK(ql_within(ql, fill));
        CHECK(ql_matches(ql, &m));
        CHECK(ql->len >= 3 && ql->len <= 5);
        /* Every node was closed because the next element would not fit. */
        for (const struct qnode *n = ql->head->next; n && n != ql->tail; n = n->next)
            CHECK(lp_bytes(n->lp) + 100 + 8 > limit);
        ql_free(ql);
        m_free(&m);
    }
}

static void test_plain_nodes(void) {
    size_t big = 10000;
    char *large = malloc(big + 1);
    memset(large, 'L', big);
    large[big] = 0;
    long long fills[] = {-2, 16};
    for (int f = 0; f < 2; f++) {
        long long fill = fills[f];
        struct qlist *ql = ql_new();
        struct model m = {0};
        push_str(ql, &m, fill, "a", 0);
        push_str(ql, &m, fill, large, 0);
        push_str(ql, &m, fill, "b", 0);
        CHECK(ql_sane(ql));
        CHECK(ql_matches(ql, &m));
        CHECK_EQ_LL(ql->len, 3);
        CHECK(ql->head->next->plain);
        CHECK(!ql->head->plain && !ql->tail->plain);
        /* A big element at the head gets its own node too. */
        push_str(ql, &m, fill, large, 1);
        CHECK(ql->head->plain);
        CHECK_EQ_LL(ql->len, 4);
        /* Inserting next to a plain element never puts anything into its node. */
        struct ql_cur cur;
        ql_cur_seek(&cur, ql, 2);
        CHECK(cur.n->plain);
        ql_insert(ql, fill, &cur, 1, "after", 5);
        m_insert(&m, 3, "after", 5);
        ql_cur_seek(&cur, ql, 2);
        ql_insert(ql, fill, &cur, 0, "before", 6);
        m_insert(&m, 2, "before", 6);
        CHECK(ql_sane(ql));
        CHECK(ql_matches(ql, &m));
        for (const struct qnode *n = ql->head; n; n = n->next)
            if (n->plain) CHECK(lp_bytes(n->lp) > big);
        /* A big element inserted in the middle of a regular node splits it. */
        struct qlist *q2 = ql_new();
        struct model m2 = {0};
        for (int i = 0; i < 6; i++) push_num(q2, &m2, fill, i, 0);
        CHECK_EQ_LL(q2->len, 1);
        ql_cur_seek(&cur, q2, 2);
        ql_insert(q2, fill, &cur, 1, large, big);
        m_insert(&m2, 3, large, big);
        CHECK(ql_sane(q2));
        CHECK(ql_matches(q2, &m2));
        CHECK_EQ_LL(q2->len, 3);
        CHECK(q2->head->next->plain);
        /* Replacing a plain element with a small one folds it into a
         * regular node; a small one replaced by a big one goes plain. */
        ql_replace(q2, fill, 3, "small", 5);
        m_set(&m2, 3, "small", 5);
        CHECK(ql_sane(q2));
        CHECK(ql_matches(q2, &m2));
        for (const struct qnode *n = q2->head; n; n = n->next) CHECK(!n->plain);
        ql_replace(q2, fill, 0, large, big);
        m_set(&m2, 0, large, big);
        CHECK(ql_sane(q2));
        CHECK(ql_matches(q2, &m2));
        CHECK(q2->head->plain);
        /* Plain replaced by another big value stays plain. */
        large[0] = 'M';
        ql_replace(q2, fill, 0, large, big);
        m_set(&m2, 0, large, big);
        large[0] = 'L';
        CHECK(q2->head->plain);
        CHECK(ql_matches(q2, &m2));
        ql_free(q2);
        m_free(&m2);
        ql_free(ql);
        m_free(&m);
    }
    free(large);
}

/* [1 2 3 4] [5] with fill 4: inserting after "2" splits the first node,
 * and the right half merges with its neighbour. */
static void test_split_then_merge_right(void) {
    struct qlist *ql = ql_new();
    struct model m = {0};
    for (int i = 1; i <= 5; i++) push_num(ql, &m, 4, i, 0);
    CHECK_EQ_LL(ql->len, 2);
    struct ql_cur cur;
    CHECK_EQ_LL(ql_cur_seek(&cur, ql, 1), HK_OK);
    CHECK_EQ_LL(cur.off, 1);
    ql_insert(ql, 4, &cur, 1, "x", 1);
    m_insert(&m, 2, "x", 1);
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    CHECK_EQ_LL(ql->len, 2);
    CHECK_EQ_LL(node_count(ql->head), 2);
    CHECK_EQ_LL(node_count(ql->tail), 4);
    ql_free(ql);
    m_free(&m);
}

/* [p] [1 2 3 4] with fill 4: inserting before "3" splits the second node,
 * and the left half merges into [p]. */
static void test_split_then_merge_left(void) {
    struct qlist *ql = ql_new();
    struct model m = {0};
    push_str(ql, &m, 0, "p", 0); /* fill 0: a node of its own */
    for (int i = 1; i <= 4; i++) push_num(ql, &m, 4, i, 0);
    CHECK_EQ_LL(ql->len, 2);
    struct ql_cur cur;
    ql_cur_seek(&cur, ql, 3);
    CHECK(elem_is(&cur, "3", 1));
    ql_insert(ql, 4, &cur, 0, "x", 1);
    m_insert(&m, 3, "x", 1);
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    CHECK_EQ_LL(ql->len, 2);
    CHECK_EQ_LL(node_count(ql->head), 4);
    CHECK_EQ_LL(node_count(ql->tail), 2);
    ql_free(ql);
    m_free(&m);
}

/* [p] [1 2 3 4] with fill 4: inserting after "1" leaves [1] after the
 * split, which merges into its left neighbour. */
static void test_split_center_merges(void) {
    struct qlist *ql = ql_new();
    struct model m = {0};
    push_str(ql, &m, 0, "p", 0);
    for (int i = 1; i <= 4; i++) push_num(ql, &m, 4, i, 0);
    struct ql_cur cur;
    ql_cur_seek(&cur, ql, 1);
    ql_insert(ql, 4, &cur, 1, "x", 1);
    m_insert(&m, 2, "x", 1);
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    CHECK_EQ_LL(ql->len, 2);
    CHECK_EQ_LL(node_count(ql->head), 2);
    CHECK_EQ_LL(node_count(ql->tail), 4);
    ql_free(ql);
    m_free(&m);
}

static void test_insert_edges(void) {
    struct qlist *ql = ql_new();
    struct model m = {0};
    for (int i = 0; i < 6; i++) push_num(ql, &m, 3, i, 0); /* [0 1 2] [3 4 5] */
    struct ql_cur cur;
    /* After the last of a full node, with a full next node: a new node. */
    ql_cur_seek(&cur, ql, 2);
    ql_insert(ql, 3, &cur, 1, "a", 1);
    m_insert(&m, 3, "a", 1);
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    CHECK_EQ_LL(ql->len, 3);
    /* Before the first of the [a] node: room there. */
    ql_cur_seek(&cur, ql, 3);
    CHECK(cur.off == 0);
    ql_insert(ql, 3, &cur, 0, "b", 1);
    m_insert(&m, 3, "b", 1);
    CHECK(ql_matches(ql, &m));
    CHECK_EQ_LL(ql->len, 3);
    /* Before the head of a full node whose prev has room. */
    ql_cur_seek(&cur, ql, 5);
    CHECK(elem_is(&cur, "3", 1));
    ql_insert(ql, 3, &cur, 0, "c", 1);
    m_insert(&m, 5, "c", 1);
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    CHECK_EQ_LL(ql->len, 3);
    /* Insert before the list's head and after its tail. */
    ql_cur_seek(&cur, ql, 0);
    ql_insert(ql, 3, &cur, 0, "H", 1);
    m_insert(&m, 0, "H", 1);
    ql_cur_seek(&cur, ql, ql->count - 1);
    ql_insert(ql, 3, &cur, 1, "T", 1);
    m_insert(&m, m.n, "T", 1);
    CHECK(ql_sane(ql));
    CHECK(ql_within(ql, 3));
    CHECK(ql_matches(ql, &m));
    ql_free(ql);
    m_free(&m);
}

static void test_single_mode(void) {
    /* The view's one-node form: never splits, keeps its node when empty. */
    struct qnode n = {NULL, NULL, lp_new(), 0};
    struct qlist ql = {&n, &n, 0, 1, 1};
    struct model m = {0};
    for (int i = 0; i < 20; i++) push_num(&ql, &m, 2, i, i & 1);
    CHECK_EQ_LL(ql.len, 1);
    CHECK(ql_matches(&ql, &m));
    struct ql_cur cur;
    ql_cur_seek(&cur, &ql, 10);
    ql_insert(&ql, 2, &cur, 1, "in", 2);
    m_insert(&m, 11, "in", 2);
    ql_replace(&ql, 2, 0, "r", 1);
    m_set(&m, 0, "r", 1);
    CHECK_EQ_LL(ql.len, 1);
    CHECK(ql_matches(&ql, &m));
    ql_del_range(&ql, 0, ql.count);
    CHECK_EQ_LL(ql.count, 0);
    CHECK(ql.head == &n);
    CHECK_EQ_LL(lp_count(n.lp), 0);
    lp_free(n.lp);
    m_free(&m);
}

static void test_del_range(void) {
    struct qlist *ql = ql_new();
    struct model m = {0};
    for (int i = 0; i < 30; i++) push_num(ql, &m, 4, i, 0);
    CHECK_EQ_LL(ql->len, 8);
    /* Middle of one node to the middle of another, whole nodes between. */
    ql_del_range(ql, 2, 11);
    m_delete(&m, 2, 11);
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    /* Exactly one node. */
    unsigned long off;
    struct qnode *n = ql_locate(ql, 6, &off);
    unsigned long start = 6 - off, cnt = lp_count(n->lp);
    unsigned long len_before = ql->len;
    ql_del_range(ql, start, cnt);
    m_delete(&m, start, cnt);
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    CHECK_EQ_LL(ql->len, len_before - 1);
    /* Past the end: cut at the end; starting past it: nothing. */
    ql_del_range(ql, ql->count - 3, 100);
    m_delete(&m, m.n - 3, 3);
    CHECK(ql_matches(ql, &m));
    ql_del_range(ql, ql->count, 5);
    ql_del_range(ql, 0, 0);
    CHECK(ql_matches(ql, &m));
    /* Everything. */
    ql_del_range(ql, 0, ql->count);
    m_delete(&m, 0, m.n);
    CHECK(ql_sane(ql));
    CHECK(ql->len == 0 && ql->head == NULL);
    ql_free(ql);
    m_free(&m);
}

static void test_replace(void) {
    struct qlist *ql = ql_new();
    struct model m = {0};
    char buf[3001];
    memset(buf, 'r', 3000);
    buf[3000] = 0;
    for (int i = 0; i < 60; i++) push_str(ql, &m, -1, i % 3 ? "short" : "another-short", 0);
    CHECK_EQ_LL(ql->len, 1);
    /* Fits in place. */
    ql_replace(ql, -1, 5, "12345", 5);
    m_set(&m, 5, "12345", 5);
    CHECK(ql_matches(ql, &m));
    CHECK_EQ_LL(ql->len, 1);
    /* Would pass 4 KB with its node: moves to a node of its own, in the
     * middle (split) and at the node's end. */
    for (int i = 0; i < 50; i++) push_str(ql, &m, -1, "filler-element-of-some-length", 0);
    ql_replace(ql, -1, 20, buf, 3000);
    m_set(&m, 20, buf, 3000);
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    ql_replace(ql, -1, ql->count - 1, buf, 3000);
    m_set(&m, m.n - 1, buf, 3000);
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    ql_replace(ql, -1, 0, buf, 3000);
    m_set(&m, 0, buf, 3000);
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    /* Out of range: refused, nothing changes. */
    CHECK_EQ_LL(ql_replace(ql, -1, ql->count, "x", 1), HK_ERR_INDEX_RANGE);
    CHECK(ql_matches(ql, &m));
    ql_free(ql);
    m_free(&m);
}

static void test_remove(void) {
    struct qlist *ql = ql_new();
    struct model m = {0};
    const char *seq[] = {"x", "a", "x", "x", "b", "x", "c", "x", "x", "x", "d", "x"};
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 12; i++) push_str(ql, &m, 2, seq[i], 0);
    struct ql_cur cur;
    /* Forward, at most 4, from the first match. */
    ql_cur_seek(&cur, ql, 0);
    CHECK(ql_cur_find(&cur, "x", 1, 1));
    CHECK_EQ_LL(ql_remove(ql, &cur, 1, "x", 1, 4), 4);
    for (int k = 0; k < 4; k++)
        for (unsigned long i = 0; i < m.n; i++)
            if (m.len[i] == 1 && m.s[i][0] == 'x') {
                m_delete(&m, i, 1);
                break;
            }
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    /* Backward, at most 3, from the last match. */
    ql_cur_seek(&cur, ql, ql->count - 1);
    CHECK(ql_cur_find(&cur, "x", 1, 0));
    CHECK_EQ_LL(ql_remove(ql, &cur, 0, "x", 1, 3), 3);
    for (int k = 0; k < 3; k++)
        for (unsigned long i = m.n; i-- > 0;)
            if (m.len[i] == 1 && m.s[i][0] == 'x') {
                m_delete(&m, i, 1);
                break;
            }
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    /* All the rest. */
    ql_cur_seek(&cur, ql, 0);
    CHECK(ql_cur_find(&cur, "x", 1, 1));
    unsigned long left = 0;
    for (unsigned long i = 0; i < m.n; i++) left += m.len[i] == 1 && m.s[i][0] == 'x';
    CHECK_EQ_LL(ql_remove(ql, &cur, 1, "x", 1, 0), left);
    for (unsigned long i = m.n; i-- > 0;)
        if (m.len[i] == 1 && m.s[i][0] == 'x') m_delete(&m, i, 1);
    CHECK(ql_sane(ql));
    CHECK(ql_matches(ql, &m));
    ql_cur_seek(&cur, ql, 0);
    CHECK(!ql_cur_find(&cur, "x", 1, 1));
    CHECK(cur.pos == LP_NONE);
    ql_free(ql);
    m_free(&m);
}

static void test_cursor(void) {
    struct qlist *ql = ql_new();
    struct model m = {0};
    for (int i = 0; i < 10; i++) push_num(ql, &m, 3, i, 0);
    struct ql_cur cur;
    for (unsigned long i = 0; i < 10; i++) {
        CHECK_EQ_LL(ql_cur_seek(&cur, ql, i), HK_OK);
        CHECK_EQ_LL(cur.off, i % 3);
        CHECK(ql_cur_eq(&cur, m.s[i], m.len[i]));
    }
    /* Offsets follow the walk across nodes both ways. */
    ql_cur_seek(&cur, ql, 0);
    for (unsigned long i = 0; i < 10; i++, ql_cur_next(&cur)) CHECK_EQ_LL(cur.off, i % 3);
    CHECK(cur.pos == LP_NONE);
    CHECK(!ql_cur_eq(&cur, "9", 1));
    ql_cur_next(&cur); /* stays off the end */
    CHECK(cur.pos == LP_NONE);
    ql_cur_seek(&cur, ql, 9);
    for (unsigned long i = 10; i-- > 0; ql_cur_prev(&cur)) CHECK_EQ_LL(cur.off, i % 3);
    CHECK(cur.pos == LP_NONE);
    ql_cur_prev(&cur);
    CHECK(cur.pos == LP_NONE);
    CHECK_EQ_LL(ql_cur_seek(&cur, ql, 10), HK_ERR_INDEX_RANGE);
    CHECK(cur.pos == LP_NONE);
    /* find starts with the element under the cursor; integers match by
     * their decimal form. */
    ql_cur_seek(&cur, ql, 4);
    CHECK(ql_cur_find(&cur, "4", 1, 1));
    CHECK_EQ_LL(cur.off, 1);
    ql_cur_seek(&cur, ql, 4);
    CHECK(ql_cur_find(&cur, "2", 1, 0));
    ql_cur_seek(&cur, ql, 4);
    CHECK(!ql_cur_find(&cur, "2", 1, 1));
    ql_cur_seek(&cur, ql, 0);
    CHECK(!ql_cur_find(&cur, "04", 2, 1));
    ql_free(ql);
    m_free(&m);
}

static void test_dup(void) {
    struct qlist *ql = ql_new();
    struct model m = {0};
    char big[9000];
    memset(big, 'B', sizeof(big));
    for (int i = 0; i < 25; i++) push_num(ql, &m, 4, i * 1000, i & 1);
    ql_push(ql, 4, big, sizeof(big), 0);
    m_insert(&m, m.n, big, sizeof(big));
    struct qlist *cp = ql_dup(ql);
    CHECK(ql_sane(cp));
    CHECK(ql_matches(cp, &m));
    CHECK_EQ_LL(cp->len, ql->len);
    CHECK(cp->tail->plain);
    for (const struct qnode *a = ql->head, *b = cp->head; a && b; a = a->next, b = b->next) {
        CHECK(a != b && a->lp != b->lp);
        CHECK_EQ_LL(lp_bytes(a->lp), lp_bytes(b->lp));
        CHECK(memcmp(a->lp, b->lp, lp_bytes(a->lp)) == 0);
    }
    /* Changing the copy leaves the original alone. */
    ql_replace(cp, 4, 3, "changed", 7);
    ql_del_range(cp, 0, 2);
    ql_push(cp, 4, "new", 3, 0);
    CHECK(ql_matches(ql, &m));
    ql_free(ql);
    CHECK(ql_sane(cp));
    ql_free(cp);
    m_free(&m);
}

/* Random operations against the model with several fills, checking the
 * invariants and the contents after every one. */
/* The randomized model run at compression depth `depth`: after every step
 * the list is sane, obeys the compression rule, matches the model (walking
 * it lends nodes), and obeys the rule again once released. */
static unsigned long seen_compressed;

static void random_model(int depth, const long long *fills, int nfills, int steps, int prefill) {
    static char big[20000];
    memset(big, 'Z', sizeof(big));
    srand(12345 + depth);
    for (int f = 0; f < nfills; f++) {
        long long fill = fills[f];
        struct qlist *ql = ql_new();
        ql_set_compress(ql, depth);
        struct model m = {0};
        /* Start from a longer list, so there are nodes past the depth. */
        for (int i = 0; i < prefill; i++) push_num(ql, &m, fill, i % 7, i & 1);
        for (int step = 0; step < steps; step++) {
            char b[64];
            const char *s = b;
            size_t len;
            int kind = rand() % 20;
            if (kind == 0) {
                s = big;
                len = 8000 + (size_t)(rand() % 12000);
            } else if (kind < 4) {
                len = (size_t)snprintf(b, sizeof(b), "%d", rand() % 100 - 50);
            } else if (kind < 6) {
                memset(b, 'm', 60);
                len = 20 + (size_t)(rand() % 40);
            } else {
                len = (size_t)snprintf(b, sizeof(b), "e%d", rand() % 30);
            }
            int op = rand() % 10;
            if (op < 3 || m.n == 0) {
                int head = rand() & 1;
                ql_push(ql, fill, s, len, head);
                m_insert(&m, head ? 0 : m.n, s, len);
            } else if (op < 5) {
                unsigned long at = (unsigned long)rand() % m.n;
                int after = rand() & 1;
                struct ql_cur cur;
                ql_cur_seek(&cur, ql, at);
                ql_insert(ql, fill, &cur, after, s, len);
                m_insert(&m, at + (unsigned long)after, s, len);
            } else if (op < 6) {
                unsigned long at = (unsigned long)rand() % m.n;
                CHECK_EQ_LL(ql_replace(ql, fill, at, s, len), HK_OK);
                m_set(&m, at, s, len);
            } else if (op < 8) {
                unsigned long at = (unsigned long)rand() % m.n, cnt = 1 + (unsigned long)rand() % 8;
                ql_del_range(ql, at, cnt);
                m_delete(&m, at, cnt > m.n - at ? m.n - at : cnt);
            } else if (op < 9) {
                int fwd = rand() & 1;
                unsigned long max = (unsigned long)rand() % 3;
                struct ql_cur cur;
                ql_cur_seek(&cur, ql, fwd ? 0 : m.n - 1);
                unsigned long want = 0;
                for (unsigned long i = 0; i < m.n; i++) want += m.len[i] == len && memcmp(m.s[i], s, len) == 0;
                if (max && want > max) want = max;
                unsigned long got = 0;
                if (ql_cur_find(&cur, s, len, fwd)) got = ql_remove(ql, &cur, fwd, s, len, max);
                else ql_release(ql);
                CHECK_EQ_LL(got, want);
                for (unsigned long done = 0, i = fwd ? 0 : m.n; done < want;) {
                    if (fwd) {
                        if (m.len[i] == len && memcmp(m.s[i], s, len) == 0) {
                            m_delete(&m, i, 1);
                            done++;
                        } else {
                            i++;
                        }
                    } else {
                        i--;
                        if (m.len[i] == len && memcmp(m.s[i], s, len) == 0) {
                            m_delete(&m, i, 1);
                            done++;
                        }
                    }
                }
            } else {
                int head = rand() & 1;
                ql_del_range(ql, head ? 0 : m.n - 1, 1);
                m_delete(&m, head ? 0 : m.n - 1, 1);
            }
            seen_compressed += compressed_nodes(ql);
            int ok = ql_sane(ql) && ql_compress_ok(ql, 0) && ql_matches(ql, &m) && ql_compress_ok(ql, 1);
            ql_release(ql);
            if (!ok || !ql_compress_ok(ql, 0)) {
                fprintf(stderr, "depth %d fill %lld: diverged at step %d (op %d)\n", depth, fill, step, op);
                CHECK(0);
                break;
            }
        }
        /* A copy keeps the compression, and its contents. */
        struct qlist *d = ql_dup(ql);
        CHECK(d->compress == ql->compress);
        CHECK_EQ_LL(compressed_nodes(d), compressed_nodes(ql));
        CHECK(ql_sane(d) && ql_matches(d, &m));
        ql_release(d);
        CHECK(ql_compress_ok(d, 0));
        ql_free(d);
        ql_free(ql);
        m_free(&m);
    }
}

static void test_random_model(void) {
    static const long long fills[] = {-1, -2, -5, 1, 2, 3, 7, 128};
    random_model(0, fills, 8, 3000, 0);
}

static void test_random_model_compressed(void) {
    static const long long fills[] = {-1, -2, 3, 7, 128};
    for (int depth = 1; depth <= 3; depth++) {
        seen_compressed = 0;
        random_model(depth, fills, 5, 1000, 300);
        /* The run did meet compressed nodes, many of them. */
        CHECK(seen_compressed > 1000);
    }
}

/* Compressible elements in many nodes: interior nodes compressed, the
 * ends raw, reading a middle element lends its node and release puts it
 * back; popping down to the depth leaves every node raw. */
static void test_compress_layout(void) {
    for (unsigned depth = 1; depth <= 3; depth++) {
        struct qlist *ql = ql_new();
        ql_set_compress(ql, depth);
        struct model m = {0};
        for (int i = 0; i < 2000; i++) {
            char b[32];
            snprintf(b, sizeof(b), "element-number-%d", i % 10);
            push_str(ql, &m, 16, b, 0);
        }
        CHECK_EQ_LL(ql->len, 125);
        CHECK(ql_compress_ok(ql, 0));
        CHECK_EQ_LL(compressed_nodes(ql), 125 - 2 * depth);
        struct ql_cur cur;
        CHECK_EQ_LL(ql_cur_seek(&cur, ql, 1000), HK_OK);
        CHECK(ql->lent == cur.n && cur.n->lp);
        CHECK_EQ_LL(compressed_nodes(ql), 125 - 2 * depth - 1);
        /* Walking on lends the next node and gives the last one back. */
        for (int i = 0; i < 16; i++) ql_cur_next(&cur);
        CHECK(ql->lent == cur.n);
        CHECK_EQ_LL(compressed_nodes(ql), 125 - 2 * depth - 1);
        ql_release(ql);
        CHECK(!ql->lent);
        CHECK_EQ_LL(compressed_nodes(ql), 125 - 2 * depth);
        /* Ends stay raw through pops from both sides. */
        while (ql->len > 2 * depth) {
            ql_del_range(ql, 0, 16);
            ql_del_range(ql, ql->count - 16, 16);
            CHECK(ql_compress_ok(ql, 0));
        }
        CHECK_EQ_LL(compressed_nodes(ql), 0);
        ql_free(ql);
        m_free(&m);
    }
}

/* Small nodes (under 48 bytes) and incompressible ones stay raw; a plain
 * node of repetitive bytes is compressed like any other. */
/* An entry takes the depth in force when it becomes a quicklist, keeps it
 * when the setting changes, and takes the new one after it went back to a
 * listpack; DEBUG OBJECT's fields, the digest (as an uncompressed copy's)
 * and MEMORY USAGE (compressed sizes) of compressed entries. */
static void fill_entry(struct kv *e, int n) {
    for (int i = 0; i < n; i++) {
        char b[64];
        int len = snprintf(b, sizeof(b), "entry-payload-%d-aaaaaaaaaaaaaaaa", i % 13);
        struct listv v;
        listv_open(&v, e);
        listv_grow(&v, (size_t)len, 1);
        listv_push(&v, b, (size_t)len, 0);
        listv_done(&v);
    }
}

static void test_entry_depth_and_debug_info(void) {
    atomic_store(&type_limits.list_max_listpack_size, 8);
    atomic_store(&type_limits.list_compress_depth, 2);
    struct kv *c = listv_new_entry("c", 1);
    fill_entry(c, 400);
    atomic_store(&type_limits.list_compress_depth, 0);
    struct kv *u = listv_new_entry("u", 1);
    fill_entry(u, 400);
    /* c keeps depth 2 as it grows under the new setting. */
    fill_entry(c, 400);
    fill_entry(u, 400);
    const struct qlist *cq = kv_ptr(c), *uq = kv_ptr(u);
    CHECK_EQ_LL(kv_enc(c), ENC_QUICKLIST);
    CHECK_EQ_LL(cq->compress, 2);
    CHECK_EQ_LL(uq->compress, 0);
    CHECK_EQ_LL(cq->len, 100);
    CHECK_EQ_LL(compressed_nodes(cq), 96);
    CHECK_EQ_LL(compressed_nodes(uq), 0);
    CHECK(ql_compress_ok(cq, 0));
    char buf[256];
    size_t n = listv_debug_info(c, buf, sizeof(buf));
    unsigned long raw = 0;
    for (const struct qnode *x = cq->head; x; x = x->next) raw += ql_node_bytes(x);
    char want[256];
    snprintf(want, sizeof(want),
             " ql_nodes:100 ql_avg_node:8.00 ql_listpack_max:8 ql_compressed:1 ql_uncompressed_size:%lu", raw);
    CHECK_MEM(buf, n, want);
    n = listv_debug_info(u, buf, sizeof(buf));
    snprintf(want, sizeof(want),
             " ql_nodes:100 ql_avg_node:8.00 ql_listpack_max:8 ql_compressed:0 ql_uncompressed_size:%lu", raw);
    CHECK_MEM(buf, n, want);
    /* Truncated output stays NUL-terminated and reports the full length. */
    char small[10];
    CHECK_EQ_LL(listv_debug_info(c, small, sizeof(small)), strlen(want));
    CHECK(strlen(small) == sizeof(small) - 1);
    unsigned char dc[20] = {0}, du[20] = {0};
    kv_digest_value(c, dc);
    kv_digest_value(u, du);
    CHECK(memcmp(dc, du, 20) == 0);
    CHECK(kv_usage(c, 0) * 2 < kv_usage(u, 0));
    /* A copy keeps the compression. */
    struct kv *d = kv_dup(c, "d", 1, -1);
    CHECK_EQ_LL(compressed_nodes(kv_ptr(d)), 96);
    unsigned char dd[20] = {0};
    kv_digest_value(d, dd);
    CHECK(memcmp(dd, du, 20) == 0);
    kv_free(d);
    /* Down to a listpack and up again: the depth now in force (0). */
    struct listv v;
    listv_open(&v, c);
    listv_del_range(&v, 2, listv_len(&v) - 2);
    CHECK_EQ_LL(listv_after_removal(&v), 0);
    CHECK_EQ_LL(kv_enc(c), ENC_LISTPACK);
    n = listv_debug_info(c, buf, sizeof(buf));
    CHECK_EQ_LL(n, 0);
    CHECK_MEM(buf, n, "");
    fill_entry(c, 400);
    CHECK_EQ_LL(((const struct qlist *)kv_ptr(c))->compress, 0);
    CHECK_EQ_LL(compressed_nodes(kv_ptr(c)), 0);
    kv_free(c);
    kv_free(u);
    atomic_store(&type_limits.list_max_listpack_size, -2);
}

static void test_compress_thresholds(void) {
    struct qlist *ql = ql_new();
    ql_set_compress(ql, 1);
    struct model m = {0};
    for (int i = 0; i < 10; i++) push_str(ql, &m, 1, "abc", 0);
    CHECK_EQ_LL(ql->len, 10);
    CHECK_EQ_LL(compressed_nodes(ql), 0);
    ql_free(ql);
    m_free(&m);

    ql = ql_new();
    ql_set_compress(ql, 1);
    char rnd[200];
    srand(7);
    for (int i = 0; i < 6; i++) {
        for (size_t j = 0; j < sizeof(rnd); j++) rnd[j] = (char)('!' + rand() % 90);
        ql_push(ql, 1, rnd, sizeof(rnd), 0);
    }
    CHECK_EQ_LL(compressed_nodes(ql), 0);
    CHECK(ql_compress_ok(ql, 0));
    static char big[30000];
    memset(big, 'q', sizeof(big));
    ql_push(ql, 1, big, sizeof(big), 0);
    ql_push(ql, 1, "tail", 4, 0);
    CHECK(ql->tail->prev->plain && !ql->tail->prev->lp);
    CHECK(ql->tail->prev->lzf->csz < 1000);
    struct ql_cur cur;
    ql_cur_seek(&cur, ql, 6);
    struct lp_val v;
    ql_cur_get(&cur, &v);
    CHECK(v.len == sizeof(big) && memcmp(v.s, big, sizeof(big)) == 0);
    ql_release(ql);
    CHECK(ql_compress_ok(ql, 0));
    ql_free(ql);
}

int main(void) {
    TEST_RUN(test_limits);
    TEST_RUN(test_push_pop_both_ends);
    TEST_RUN(test_count_fill);
    TEST_RUN(test_count_fill_size_safety);
    TEST_RUN(test_byte_fill_classes);
    TEST_RUN(test_plain_nodes);
    TEST_RUN(test_split_then_merge_right);
    TEST_RUN(test_split_then_merge_left);
    TEST_RUN(test_split_center_merges);
    TEST_RUN(test_insert_edges);
    TEST_RUN(test_single_mode);
    TEST_RUN(test_del_range);
    TEST_RUN(test_replace);
    TEST_RUN(test_remove);
    TEST_RUN(test_cursor);
    TEST_RUN(test_dup);
    TEST_RUN(test_random_model);
    TEST_RUN(test_random_model_compressed);
    TEST_RUN(test_compress_layout);
    TEST_RUN(test_compress_thresholds);
    TEST_RUN(test_entry_depth_and_debug_info);
    return TEST_REPORT();
}
