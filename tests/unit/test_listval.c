/* test_listval.c - unit tests of the list value of a key entry
 * (src/types/list.c): the view's listpack -> quicklist conversion at the
 * count and byte limits, the shrink back at half the limit (and the cases
 * that must not shrink), the "now empty" report of a removal, index
 * resolution, and list_type_ops: dup equal and independent, usage, and the
 * digest (elements in order, integers in decimal; order-sensitive; the
 * same for either encoding). The quicklist itself is covered by
 * test_quicklist.c. */
#include "core/listpack.h"
#include "core/status.h"
#include "test.h"
#include "types/digest.h"
#include "types/kv.h"
#include "types/list.h"
#include "types/types.h"

#include <limits.h>
#include <stdatomic.h>

static void set_fill(long long fill) { atomic_store(&type_limits.list_max_listpack_size, fill); }

/* Push the strings of `items` (n of them) at the tail through a view,
 * growing first as the commands do. */
static void push_all(struct kv *e, const char **items, int n) {
    struct listv v;
    listv_open(&v, e);
    size_t add = 0;
    for (int i = 0; i < n; i++) add += strlen(items[i]);
    listv_grow(&v, add, (unsigned long)n);
    for (int i = 0; i < n; i++) listv_push(&v, items[i], strlen(items[i]), 0);
    listv_done(&v);
}

static void push_one(struct kv *e, const char *s, size_t len, int head) {
    struct listv v;
    listv_open(&v, e);
    listv_grow(&v, len, 1);
    listv_push(&v, s, len, head);
    listv_done(&v);
}

/* Pop one element from the head; returns listv_after_removal's answer. */
static int pop_head(struct kv *e) {
    struct listv v;
    listv_open(&v, e);
    listv_del_range(&v, 0, 1);
    return listv_after_removal(&v);
}

static int pop_tail(struct kv *e) {
    struct listv v;
    listv_open(&v, e);
    listv_del_range(&v, listv_len(&v) - 1, 1);
    return listv_after_removal(&v);
}

static int list_is(struct kv *e, const char **items, int n) {
    struct listv v;
    listv_open(&v, e);
    if (listv_len(&v) != (unsigned long)n) return 0;
    struct ql_cur cur;
    listv_seek(&v, 0, &cur);
    for (int i = 0; i < n; i++, ql_cur_next(&cur))
        if (!ql_cur_eq(&cur, items[i], strlen(items[i]))) return 0;
    return cur.pos == LP_NONE;
}

static void digest_of(const struct kv *e, unsigned char d[20]) {
    memset(d, 0, 20);
    list_type_ops.digest(e, d);
}

static const char *nums[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};

/* ---- tests -------------------------------------------------------------- */

static void test_new_entry(void) {
    struct kv *e = listv_new_entry("key", 3);
    CHECK_EQ_LL(kv_type(e), OBJ_LIST);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    CHECK_MEM(kv_key(e), kv_keylen(e), "key");
    CHECK_EQ_LL(listv_len_of(e), 0);
    CHECK(type_table[OBJ_LIST] == &list_type_ops);
    CHECK(strcmp(list_type_ops.name, "list") == 0);
    kv_free(e);
}

static void test_grow_at_count_limit(void) {
    set_fill(4);
    struct kv *e = listv_new_entry("l", 1);
    push_all(e, nums, 3);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    push_one(e, "3", 1, 0);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK); /* exactly at the limit */
    push_one(e, "4", 1, 0);
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    CHECK_EQ_LL(listv_len_of(e), 5);
    CHECK(list_is(e, nums, 5));
    const struct qlist *ql = kv_ptr(e);
    CHECK_EQ_LL(ql->len, 2);
    CHECK(!ql->single);
    /* A batch that would pass the limit converts before the first push. */
    struct kv *b = listv_new_entry("b", 1);
    push_all(b, nums, 5);
    CHECK_EQ_LL(kv_enc(b), ENC_QUICKLIST);
    CHECK(list_is(b, nums, 5));
    kv_free(b);
    kv_free(e);
    set_fill(-2);
}

static void test_shrink_at_half_count(void) {
    set_fill(4);
    struct kv *e = listv_new_entry("l", 1);
    push_all(e, nums, 4);
    push_one(e, "4", 1, 0); /* [0 1 2 3] [4] */
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    CHECK_EQ_LL(((const struct qlist *)kv_ptr(e))->len, 2);
    CHECK_EQ_LL(pop_head(e), 0); /* [1 2 3] [4]: two nodes */
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    CHECK_EQ_LL(pop_head(e), 0);
    CHECK_EQ_LL(pop_head(e), 0); /* [3] [4] */
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    CHECK_EQ_LL(pop_head(e), 0); /* [4]: one node, 1 <= 4/2 */
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    CHECK(list_is(e, nums + 4, 1));
    kv_free(e);

    /* One node above half of 4 stays a quicklist; at 2 it converts back. */
    e = listv_new_entry("m", 1);
    push_all(e, nums, 4);
    push_one(e, "4", 1, 0);
    CHECK_EQ_LL(pop_tail(e), 0); /* [0 1 2 3] */
    CHECK_EQ_LL(((const struct qlist *)kv_ptr(e))->len, 1);
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    CHECK_EQ_LL(pop_tail(e), 0); /* [0 1 2] */
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    CHECK_EQ_LL(pop_tail(e), 0); /* [0 1] */
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    CHECK(list_is(e, nums, 2));
    kv_free(e);
    set_fill(-2);
}

static void test_grow_and_shrink_bytes(void) {
    set_fill(-1); /* 4 KB nodes: back to a listpack at 2 KB */
    char buf[101];
    memset(buf, 'x', 100);
    buf[100] = 0;
    struct kv *e = listv_new_entry("l", 1);
    int pushed = 0;
    while (kv_enc(e) == ENC_LISTPACK) {
        size_t before = lp_bytes(kv_ptr(e));
        push_one(e, buf, 100, 0);
        pushed++;
        if (kv_enc(e) == ENC_LISTPACK) CHECK(lp_bytes(kv_ptr(e)) <= 4096);
        else CHECK(before + 100 > 4096);
    }
    CHECK(pushed > 30 && pushed <= 41);
    /* Pop until one node of at most 2 KB: only then a listpack again. */
    for (;;) {
        const struct qlist *ql = kv_ptr(e);
        int one_small = ql->len == 1 && lp_bytes(ql->head->lp) <= 2048;
        CHECK(!one_small);
        CHECK_EQ_LL(pop_tail(e), 0);
        if (kv_enc(e) == ENC_LISTPACK) break;
    }
    CHECK(lp_bytes(kv_ptr(e)) <= 2048);
    CHECK(lp_bytes(kv_ptr(e)) + 110 > 2048);
    kv_free(e);
    set_fill(-2);
}

static void test_no_shrink_plain(void) {
    set_fill(-2);
    static char big[9000];
    memset(big, 'P', sizeof(big));
    struct kv *e = listv_new_entry("l", 1);
    /* An element too big for a node converts an empty new list at once. */
    push_one(e, big, sizeof(big), 0);
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    const struct qlist *ql = kv_ptr(e);
    CHECK_EQ_LL(ql->len, 1);
    CHECK(ql->head->plain);
    push_one(e, "a", 1, 1);
    CHECK_EQ_LL(ql->len, 2);
    /* Down to the plain node alone: it never becomes a listpack. */
    CHECK_EQ_LL(pop_head(e), 0);
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    /* Removing the last element reports "now empty" and leaves the key
     * to the caller. */
    CHECK_EQ_LL(pop_head(e), 1);
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    CHECK_EQ_LL(listv_len_of(e), 0);
    kv_free(e);
}

static void test_after_removal_listpack(void) {
    set_fill(-2);
    struct kv *e = listv_new_entry("l", 1);
    push_all(e, nums, 2);
    CHECK_EQ_LL(pop_head(e), 0);
    CHECK_EQ_LL(pop_head(e), 1);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    CHECK_EQ_LL(listv_len_of(e), 0);
    kv_free(e);
}

static void test_set_through_view(void) {
    set_fill(3);
    struct kv *e = listv_new_entry("l", 1);
    push_all(e, nums, 3);
    struct listv v;
    listv_open(&v, e);
    listv_grow(&v, 1, 1); /* LSET grows first, as if adding */
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    unsigned long at = 99;
    CHECK_EQ_LL(listv_index(&v, -1, &at), HK_OK);
    CHECK_EQ_LL(listv_set(&v, at, "z", 1), HK_OK);
    CHECK_EQ_LL(listv_set(&v, 3, "z", 1), HK_ERR_INDEX_RANGE);
    listv_shrink(&v); /* 3 elements in one node, above half of 3 */
    listv_done(&v);
    CHECK_EQ_LL(kv_enc(e), ENC_QUICKLIST);
    const char *want[] = {"0", "1", "z"};
    CHECK(list_is(e, want, 3));
    kv_free(e);
    set_fill(-2);
}

static void test_index(void) {
    struct kv *e = listv_new_entry("l", 1);
    push_all(e, nums, 5);
    struct listv v;
    listv_open(&v, e);
    unsigned long at = 0;
    CHECK_EQ_LL(listv_index(&v, 0, &at), HK_OK);
    CHECK_EQ_LL(at, 0);
    CHECK_EQ_LL(listv_index(&v, 4, &at), HK_OK);
    CHECK_EQ_LL(at, 4);
    CHECK_EQ_LL(listv_index(&v, -1, &at), HK_OK);
    CHECK_EQ_LL(at, 4);
    CHECK_EQ_LL(listv_index(&v, -5, &at), HK_OK);
    CHECK_EQ_LL(at, 0);
    CHECK_EQ_LL(listv_index(&v, 5, &at), HK_ERR_INDEX_RANGE);
    CHECK_EQ_LL(listv_index(&v, -6, &at), HK_ERR_INDEX_RANGE);
    CHECK_EQ_LL(listv_index(&v, LLONG_MAX, &at), HK_ERR_INDEX_RANGE);
    CHECK_EQ_LL(listv_index(&v, LLONG_MIN, &at), HK_ERR_INDEX_RANGE);
    listv_done(&v);
    kv_free(e);
}

/* The digest as it must stay: dg_mix of each element's bytes, in order,
 * integers in their decimal form (Redis's DEBUG DIGEST). */
static void test_digest_definition(void) {
    const char *items[] = {"a", "1", "-20", "hello", "9223372036854775807", "01", ""};
    int n = (int)(sizeof(items) / sizeof(items[0]));
    unsigned char want[20] = {0}, got[20];
    for (int i = 0; i < n; i++) dg_mix(want, items[i], strlen(items[i]));
    struct kv *e = listv_new_entry("l", 1);
    push_all(e, items, n);
    CHECK_EQ_LL(kv_enc(e), ENC_LISTPACK);
    digest_of(e, got);
    CHECK(memcmp(got, want, 20) == 0);
    /* Integers pushed through lp_append_int digest as their decimal text. */
    lpack *lp = lp_append_int(lp_append_int(lp_new(), -7), 1234567);
    struct kv *ie = kv_new_ptr("i", 1, OBJ_LIST, ENC_LISTPACK, lp, -1);
    unsigned char iw[20] = {0};
    dg_mix(iw, "-7", 2);
    dg_mix(iw, "1234567", 7);
    digest_of(ie, got);
    CHECK(memcmp(got, iw, 20) == 0);
    kv_free(ie);
    kv_free(e);
}

static void test_digest_encodings_and_order(void) {
    const char *items[] = {"x", "42", "y", "-1", "zz", "7", "a-longer-element", "0"};
    const char *rev[] = {"0", "a-longer-element", "7", "zz", "-1", "y", "42", "x"};
    int n = 8;
    set_fill(-2);
    struct kv *lpk = listv_new_entry("a", 1);
    push_all(lpk, items, n);
    struct kv *same = listv_new_entry("b", 1);
    for (int i = 0; i < n; i++) push_one(same, items[i], strlen(items[i]), 0);
    set_fill(2); /* four nodes of two */
    struct kv *qlk = listv_new_entry("c", 1);
    for (int i = n; i-- > 0;) push_one(qlk, items[i], strlen(items[i]), 1);
    set_fill(-2);
    struct kv *r = listv_new_entry("d", 1);
    push_all(r, rev, n);
    CHECK_EQ_LL(kv_enc(lpk), ENC_LISTPACK);
    CHECK_EQ_LL(kv_enc(qlk), ENC_QUICKLIST);
    CHECK(((const struct qlist *)kv_ptr(qlk))->len >= 4);
    CHECK(list_is(qlk, items, n));
    unsigned char d1[20], d2[20], d3[20], d4[20];
    digest_of(lpk, d1);
    digest_of(same, d2);
    digest_of(qlk, d3);
    digest_of(r, d4);
    CHECK(memcmp(d1, d2, 20) == 0);
    CHECK(memcmp(d1, d3, 20) == 0);
    CHECK(memcmp(d1, d4, 20) != 0);
    /* Two elements swapped differ too. */
    const char *swapped[] = {"42", "x", "y", "-1", "zz", "7", "a-longer-element", "0"};
    struct kv *s = listv_new_entry("e", 1);
    push_all(s, swapped, n);
    digest_of(s, d4);
    CHECK(memcmp(d1, d4, 20) != 0);
    kv_free(s);
    kv_free(r);
    kv_free(qlk);
    kv_free(same);
    kv_free(lpk);
}

static void test_dup_and_usage(void) {
    static char big[10000];
    memset(big, 'D', sizeof(big));
    long long fills[] = {-2, 3};
    for (int f = 0; f < 2; f++) {
        set_fill(fills[f]);
        struct kv *e = listv_new_entry("src", 3);
        push_all(e, nums, 10);
        if (f == 1) push_one(e, big, sizeof(big), 0);
        int enc = kv_enc(e);
        CHECK_EQ_LL(enc, f == 0 ? ENC_LISTPACK : ENC_QUICKLIST);
        unsigned char d0[20], d1[20];
        digest_of(e, d0);
        struct kv *c = list_type_ops.dup(e, "copy", 4, 12345);
        CHECK_EQ_LL(kv_type(c), OBJ_LIST);
        CHECK_EQ_LL(kv_enc(c), enc);
        CHECK_MEM(kv_key(c), kv_keylen(c), "copy");
        CHECK_EQ_LL(kv_expire(c), 12345);
        CHECK(kv_ptr(c) != kv_ptr(e));
        CHECK_EQ_LL(listv_len_of(c), listv_len_of(e));
        digest_of(c, d1);
        CHECK(memcmp(d0, d1, 20) == 0);
        /* Independent: changing the copy leaves the source as it was. */
        push_one(c, "more", 4, 1);
        CHECK_EQ_LL(pop_head(c), 0);
        CHECK_EQ_LL(pop_head(c), 0);
        digest_of(e, d1);
        CHECK(memcmp(d0, d1, 20) == 0);
        digest_of(c, d1);
        CHECK(memcmp(d0, d1, 20) != 0);
        if (enc == ENC_LISTPACK) CHECK(list_is(e, nums, 10));
        /* Usage: something for either encoding; sampling one node of a
         * quicklist still estimates the whole. */
        size_t all = list_type_ops.usage(e, 0);
        CHECK(all > 0);
        if (enc == ENC_LISTPACK) {
            CHECK_EQ_LL(all, lp_bytes(kv_ptr(e)));
            CHECK_EQ_LL(kv_free_effort(e), 1);
        } else {
            CHECK(all > sizeof(big));
            size_t sampled = list_type_ops.usage(e, 1);
            CHECK(sampled > 0);
            /* Freeing a quicklist costs one allocation per node. */
            const struct qlist *ql = kv_ptr(e);
            CHECK(ql->len > 1);
            CHECK_EQ_LL(kv_free_effort(e), (long long)ql->len);
        }
        CHECK(list_type_ops.usage(c, 0) > 0);
        kv_free(c);
        kv_free(e);
    }
    set_fill(-2);
}

int main(void) {
    TEST_RUN(test_new_entry);
    TEST_RUN(test_grow_at_count_limit);
    TEST_RUN(test_shrink_at_half_count);
    TEST_RUN(test_grow_and_shrink_bytes);
    TEST_RUN(test_no_shrink_plain);
    TEST_RUN(test_after_removal_listpack);
    TEST_RUN(test_set_through_view);
    TEST_RUN(test_index);
    TEST_RUN(test_digest_definition);
    TEST_RUN(test_digest_encodings_and_order);
    TEST_RUN(test_dup_and_usage);
    return TEST_REPORT();
}
