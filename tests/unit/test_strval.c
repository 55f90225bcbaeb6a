/* test_strval.c - unit tests of the string type (src/types/string.c and
 * the string parts of src/types/kv.c): Redis's choice of encoding (integer,
 * embedded up to 44 bytes, raw beyond), overwriting a value in place only
 * when it keeps the entry's shape, dup, usage, and the digest (integers in
 * decimal, so the two encodings of the same digits digest alike), all
 * through the static type table. */
#include "core/alloc.h"
#include "core/util.h"
#include "test.h"
#include "types/digest.h"
#include "types/kv.h"
#include "types/types.h"

#include <string.h>

static struct kv *str(const char *v, long long expire) { return kv_new_str("k", 1, v, strlen(v), expire); }

static void check_value(const struct kv *e, const char *want) {
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    CHECK_MEM(p, len, want);
}

static void test_encodings(void) {
    struct kv *e = str("12345", -1);
    CHECK_EQ_LL(kv_enc(e), ENC_INT);
    check_value(e, "12345");
    kv_free(e);
    /* Not canonical integers stay strings. */
    const char *texts[] = {"012", "+1", " 1", "1 ", "-0", "9223372036854775808", "1.5", ""};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        e = str(texts[i], -1);
        CHECK_EQ_LL(kv_enc(e), ENC_EMBSTR);
        check_value(e, texts[i]);
        kv_free(e);
    }
    e = str("-9223372036854775808", -1);
    CHECK_EQ_LL(kv_enc(e), ENC_INT);
    kv_free(e);
    char v44[45], v45[46];
    memset(v44, 'a', 44);
    v44[44] = 0;
    memset(v45, 'b', 45);
    v45[45] = 0;
    e = str(v44, -1);
    CHECK_EQ_LL(kv_enc(e), ENC_EMBSTR);
    kv_free(e);
    e = str(v45, 1000);
    CHECK_EQ_LL(kv_enc(e), ENC_RAW);
    CHECK_EQ_LL(kv_expire(e), 1000);
    check_value(e, v45);
    kv_free(e);
    CHECK(type_table[OBJ_STRING] == &string_type_ops);
    CHECK(strcmp(obj_type_name(OBJ_STRING), "string") == 0);
    /* Every type's name comes from the table; past it there is none. */
    CHECK(strcmp(obj_type_name(OBJ_VSET), "vectorset") == 0);
    CHECK(strcmp(obj_type_name(OBJ_TYPE_MAX), "unknown") == 0);
    /* A string is one allocation at most: freeing it costs 1. */
    e = str(v45, -1);
    CHECK_EQ_LL(kv_free_effort(e), 1);
    kv_free(e);
}

/* e's string value has length len and byte c at offset at. */
static void check_len_byte(const struct kv *e, size_t len, size_t at, char c) {
    char nb[32];
    const char *p;
    size_t l;
    kv_str(e, nb, &p, &l);
    CHECK_EQ_LL(l, len);
    CHECK(at < l && p[at] == c);
}

static void test_overwrite_shape(void) {
    long long iv;
    struct kv *e = str("100", -1);
    /* Same shape: another integer, no TTL on either side. */
    CHECK(kv_same_shape_str(e, "200", 3, -1, &iv));
    CHECK_EQ_LL(iv, 200);
    kv_write_str(e, "200", 3, -1, iv);
    check_value(e, "200");
    /* Another encoding, or a TTL on one side only: not in place. */
    CHECK(!kv_same_shape_str(e, "abc", 3, -1, &iv));
    CHECK(!kv_same_shape_str(e, "300", 3, 5000, &iv));
    kv_free(e);
    e = str("hello", 10);
    CHECK(kv_same_shape_str(e, "world", 5, 20, &iv));
    CHECK(!kv_same_shape_str(e, "worlds", 6, 20, &iv)); /* another allocation size */
    CHECK(kv_same_shape_str(e, "world", 5, 20, &iv));
    kv_write_str(e, "world", 5, 20, iv);
    check_value(e, "world");
    CHECK_EQ_LL(kv_expire(e), 20);
    kv_free(e);
    char big[2000];
    memset(big, 'x', sizeof(big));
    /* A raw string in the entry: in place at the same length only. */
    e = kv_new_str("k", 1, big, 100, -1);
    CHECK(kv_raw_inline(e));
    memset(big, 'y', sizeof(big));
    CHECK(kv_same_shape_str(e, big, 100, -1, &iv));
    CHECK(!kv_same_shape_str(e, big, 101, -1, &iv));
    CHECK(!kv_same_shape_str(e, big, 1500, -1, &iv));
    kv_write_str(e, big, 100, -1, iv);
    CHECK_EQ_LL(kv_enc(e), ENC_RAW);
    check_len_byte(e, 100, 50, 'y');
    kv_free(e);
    /* Too big for the entry: a rawstr of the same size class. */
    memset(big, 'x', sizeof(big));
    e = kv_new_str("k", 1, big, 1500, -1);
    CHECK(!kv_raw_inline(e));
    CHECK_EQ_LL(kv_enc(e), ENC_RAW);
    memset(big, 'y', sizeof(big));
    CHECK(kv_same_shape_str(e, big, 1500, -1, &iv));
    CHECK(!kv_same_shape_str(e, big, 100, -1, &iv));
    kv_write_str(e, big, 1500, -1, iv);
    CHECK(((const struct rawstr *)kv_ptr(e))->buf[50] == 'y');
    check_len_byte(e, 1500, 1499, 'y');
    kv_free(e);
}

static void test_dup_usage_digest(void) {
    char big[200];
    memset(big, 'z', sizeof(big));
    const char *vals[] = {"42", "short", NULL};
    for (int i = 0; i < 3; i++) {
        struct kv *e = vals[i] ? str(vals[i], -1) : kv_new_str("k", 1, big, sizeof(big), -1);
        struct kv *d = kv_dup(e, "other", 5, 77);
        CHECK_EQ_LL(kv_enc(d), kv_enc(e));
        CHECK_EQ_LL(kv_expire(d), 77);
        CHECK(kv_keylen(d) == 5 && memcmp(kv_key(d), "other", 5) == 0);
        unsigned char a[20] = {0}, b[20] = {0};
        kv_digest_value(e, a);
        kv_digest_value(d, b);
        /* The TTL marker differs, the value does not. */
        CHECK(memcmp(a, b, 20) != 0);
        struct kv *d2 = kv_dup(e, "k", 1, -1);
        memset(b, 0, 20);
        kv_digest_value(d2, b);
        CHECK(memcmp(a, b, 20) == 0);
        CHECK(kv_usage(e, 0) >= sizeof(struct kv));
        if (kv_enc(e) == ENC_RAW) {
            /* Independent copies. */
            char nb[32];
            const char *p;
            size_t l;
            kv_str(d2, nb, &p, &l);
            ((char *)p)[0] = 'Q';
            check_len_byte(e, 200, 0, 'z');
            struct kv *small = str("s", -1);
            CHECK(kv_usage(e, 0) > kv_usage(small, 0));
            kv_free(small);
        }
        kv_free(e);
        kv_free(d);
        kv_free(d2);
    }
    /* The integer 7 and the text "7" in raw form are the same value. */
    struct kv *i7 = str("7", -1);
    struct kv *t7 = kv_new_ptr("k", 1, OBJ_STRING, ENC_RAW, rawstr_new("7", 1, 1), -1);
    unsigned char a[20] = {0}, b[20] = {0}, want[20] = {0};
    kv_digest_value(i7, a);
    kv_digest_value(t7, b);
    CHECK(memcmp(a, b, 20) == 0);
    /* As Redis builds it: the type (network order), then the bytes. */
    unsigned char type[4] = {0, 0, 0, 0};
    dg_mix(want, type, 4);
    dg_mix(want, "7", 1);
    CHECK(memcmp(a, want, 20) == 0);
    kv_free(i7);
    kv_free(t7);
}

int main(void) {
    TEST_RUN(test_encodings);
    TEST_RUN(test_overwrite_shape);
    TEST_RUN(test_dup_usage_digest);
    return TEST_REPORT();
}
