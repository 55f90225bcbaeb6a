/* test.h - the tiny assertion kit of the C unit tests.
 *
 * Each test file defines test functions, calls them from main through
 * TEST_RUN, and ends with TEST_REPORT(), which prints "N passed, M failed"
 * and returns non-zero when anything failed. A failed CHECK prints where and
 * what, marks the current test failed and carries on, so one run reports
 * every broken case. This is not a framework: no registration, no fixtures. */
#ifndef HK_TEST_H
#define HK_TEST_H

#include <stdio.h>
#include <string.h>

static int test_passed, test_failed, test_cur_failed;
static const char *test_cur_name;

#define CHECK(cond)                                                                                                 \
    do {                                                                                                            \
        if (!(cond)) {                                                                                              \
            fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, test_cur_name, #cond);            \
            test_cur_failed = 1;                                                                                    \
        }                                                                                                           \
    } while (0)

#define CHECK_EQ_LL(a, b)                                                                                           \
    do {                                                                                                            \
        long long a_ = (long long)(a), b_ = (long long)(b);                                                         \
        if (a_ != b_) {                                                                                             \
            fprintf(stderr, "%s:%d: %s: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, test_cur_name, #a,  \
                    a_, #b, b_);                                                                                    \
            test_cur_failed = 1;                                                                                    \
        }                                                                                                           \
    } while (0)

/* Compare a buffer of known length with a C string, printing both. */
#define CHECK_MEM(p, len, s)                                                                                        \
    do {                                                                                                            \
        size_t l_ = (size_t)(len), sl_ = strlen(s);                                                                 \
        if (l_ != sl_ || memcmp((p), (s), sl_) != 0) {                                                              \
            fprintf(stderr, "%s:%d: %s: got \"%.*s\" (%zu bytes), expected \"%s\" (%zu bytes)\n", __FILE__,          \
                    __LINE__, test_cur_name, (int)(l_ > 200 ? 200 : l_), (const char *)(p), l_, s, sl_);           \
            test_cur_failed = 1;                                                                                    \
        }                                                                                                           \
    } while (0)

#define TEST_RUN(fn)                                                                                                \
    do {                                                                                                            \
        test_cur_name = #fn;                                                                                        \
        test_cur_failed = 0;                                                                                        \
        fn();                                                                                                       \
        if (test_cur_failed) {                                                                                      \
            test_failed++;                                                                                          \
            fprintf(stderr, "FAIL %s\n", #fn);                                                                      \
        } else {                                                                                                    \
            test_passed++;                                                                                          \
        }                                                                                                           \
    } while (0)

#define TEST_REPORT()                                                                                               \
    (printf("%d passed, %d failed\n", test_passed, test_failed), test_failed ? 1 : 0)

#endif
