/* test_vexpr.c - unit tests of the FILTER expression language in
 * src/core/vexpr.c: every operator and its precedence, the type rules,
 * string escapes, "in" over tuples, strings and JSON arrays, missing
 * fields, malformed and nested JSON, the exact syntax-error texts, nesting
 * limits, scratch reuse, and a randomized check that neither compiling
 * garbage nor evaluating against garbage JSON can crash.
 *
 * The table of (attributes, expression, result) and (expression, error)
 * cases is the one in tests/integration/vexpr_cases.py, which the
 * command-level tests replay through VSIM. */
#include "core/alloc.h"
#include "core/vexpr.h"
#include "test.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

struct mcase {
    const char *json;
    size_t jlen;
    const char *expr;
    size_t elen;
    int match;
};

struct ecase {
    const char *expr;
    size_t elen;
    const char *reply;
};

/* Generated from tests/integration/vexpr_cases.py. */
#define JA "{\"age\": 25, \"name\": \"Alice\", \"active\": true, \"scores\": [85, 90, 95], \"city\": \"New York\"}"
#define JB "{\"age\": 30, \"name\": \"Bob\", \"active\": false, \"scores\": [70, 75, 80], \"city\": \"Boston\"}"
#define J1 "{\"a\": 1}"
static const struct mcase mcases[] = {
    {NULL, 0, "1", 1, 0},
    {J1, sizeof(J1) - 1, "1", 1, 1},
    {J1, sizeof(J1) - 1, "0", 1, 0},
    {"invalid json", 12, "1", 1, 1},
    {"invalid json", 12, ".a", 2, 0},
    {"{}", 2, ".a", 2, 0},
    {"[]", 2, "1", 1, 1},
    {"[{\"a\": 1}]", 10, ".a", 2, 0},
    {JA, sizeof(JA) - 1, ".age == 25", 10, 1},
    {JA, sizeof(JA) - 1, ".age > 25", 9, 0},
    {JA, sizeof(JA) - 1, ".age + 10 == 35", 15, 1},
    {JA, sizeof(JA) - 1, ".age - 5 == 20", 14, 1},
    {JA, sizeof(JA) - 1, ".age * 2 == 50", 14, 1},
    {JA, sizeof(JA) - 1, ".age / 5 == 5", 13, 1},
    {JA, sizeof(JA) - 1, ".age % 7 == 4", 13, 1},
    {JA, sizeof(JA) - 1, ".age ** 2 == 625", 16, 1},
    {J1, sizeof(J1) - 1, "2 ** 3 ** 2 == 512", 18, 1},
    {J1, sizeof(J1) - 1, "(2 ** 3) ** 2 == 64", 19, 1},
    {J1, sizeof(J1) - 1, "2 + 3 * 4 == 14", 15, 1},
    {J1, sizeof(J1) - 1, "(2 + 3) * 4 == 20", 17, 1},
    {J1, sizeof(J1) - 1, "10 - 2 - 3 == 5", 15, 1},
    {J1, sizeof(J1) - 1, "100 / 10 / 5 == 2", 17, 1},
    {J1, sizeof(J1) - 1, "2 * 3 % 4 == 2", 14, 1},
    {J1, sizeof(J1) - 1, "-2 ** 2 == 4", 12, 1},
    {J1, sizeof(J1) - 1, "!2 ** 2 == 0", 12, 1},
    {J1, sizeof(J1) - 1, "1 - -1 == 2", 11, 1},
    {J1, sizeof(J1) - 1, "1 -1 == 0", 9, 1},
    {J1, sizeof(J1) - 1, "(1) -1 == 0", 11, 1},
    {J1, sizeof(J1) - 1, "1--1 == 2", 9, 1},
    {J1, sizeof(J1) - 1, "1 / 0 > 1000", 12, 1},
    {J1, sizeof(J1) - 1, "-1 / 0 < -1000", 14, 1},
    {J1, sizeof(J1) - 1, "0 / 0 == 0 / 0", 14, 0},
    {J1, sizeof(J1) - 1, "0 / 0", 5, 1},
    {J1, sizeof(J1) - 1, "5 % 0", 5, 1},
    {J1, sizeof(J1) - 1, "7 % 3 == 1", 10, 1},
    {J1, sizeof(J1) - 1, "-7 % 3 == -1", 12, 1},
    {J1, sizeof(J1) - 1, "5.5 % 2 == 1.5", 14, 1},
    {J1, sizeof(J1) - 1, "1e3 == 1000", 11, 1},
    {J1, sizeof(J1) - 1, "1E2 == 100", 10, 1},
    {J1, sizeof(J1) - 1, "5. == 5", 7, 1},
    {J1, sizeof(J1) - 1, "1e999 > 1e308", 13, 1},
    {J1, sizeof(J1) - 1, ".5 == 0.5", 9, 0},
    {"{\"5\": 0.5}", 10, ".5 == 0.5", 9, 1},
    {JA, sizeof(JA) - 1, ".age >= 25 and .age <= 25", 25, 1},
    {JA, sizeof(JA) - 1, ".age < 25 or .age > 25", 22, 0},
    {JA, sizeof(JA) - 1, ".age != 25", 10, 0},
    {JA, sizeof(JA) - 1, ".age > 20 && .name == \"Alice\"", 29, 1},
    {JA, sizeof(JA) - 1, ".age > 30 || .city == \"New York\"", 32, 1},
    {JA, sizeof(JA) - 1, "not .active", 11, 0},
    {JB, sizeof(JB) - 1, "not .active", 11, 1},
    {JB, sizeof(JB) - 1, "!.active", 8, 1},
    {JA, sizeof(JA) - 1, "!!.active", 9, 1},
    {JA, sizeof(JA) - 1, "!!!.active", 10, 0},
    {JA, sizeof(JA) - 1, "not not .active", 15, 1},
    {JA, sizeof(JA) - 1, "!.age == 0", 10, 1},
    {JA, sizeof(JA) - 1, "!(.age == 25)", 13, 0},
    {JA, sizeof(JA) - 1, "!.active or !!.active", 21, 1},
    {JA, sizeof(JA) - 1, ".age > 1 and not not .active", 28, 1},
    {"{\"active\": true, \"n\": 5}", 24, "!!.n == 1", 9, 1},
    {"{\"active\": false, \"n\": 0}", 25, "!!.n == 1", 9, 0},
    {J1, sizeof(J1) - 1, "1 or 0 and 0", 12, 1},
    {J1, sizeof(J1) - 1, "0 and 0 or 1", 12, 1},
    {J1, sizeof(J1) - 1, "1 == 1 == 1", 11, 1},
    {J1, sizeof(J1) - 1, "2 == 2 == 2", 11, 0},
    {J1, sizeof(J1) - 1, "3 > 2 > 1", 9, 0},
    {J1, sizeof(J1) - 1, "2 in [1, 2] == 1", 16, 1},
    {J1, sizeof(J1) - 1, "1 + 1 in [2]", 12, 1},
    {"{\"a\": 0, \"b\": 0}", 16, ".a || .b", 8, 0},
    {"{\"a\": 1, \"b\": 0}", 16, ".a andnot .b", 12, 1},
    {J1, sizeof(J1) - 1, ".a==1&&.a!=2", 12, 1},
    {J1, sizeof(J1) - 1, "\t.a\n==\r1 ", 9, 1},
    {J1, sizeof(J1) - 1, "1 not", 5, 0},
    {J1, sizeof(J1) - 1, "0 not", 5, 1},
    {J1, sizeof(J1) - 1, "1 (+ 2) == 3", 12, 1},
    {J1, sizeof(J1) - 1, "1 ()", 4, 1},
    {JA, sizeof(JA) - 1, ".name == \"Alice\"", 16, 1},
    {JA, sizeof(JA) - 1, ".name == 'Alice'", 16, 1},
    {JA, sizeof(JA) - 1, ".name == \"alice\"", 16, 0},
    {JA, sizeof(JA) - 1, ".name != \"Bob\"", 14, 1},
    {JA, sizeof(JA) - 1, ".name > \"A\"", 11, 0},
    {JA, sizeof(JA) - 1, ".name >= \"Zed\"", 14, 1},
    {"{\"n\": \"12\"}", 11, ".n == 12", 8, 1},
    {"{\"n\": \"12\"}", 11, ".n > 11", 7, 1},
    {"{\"n\": \"12\"}", 11, ".n == \"12\"", 10, 1},
    {"{\"n\": \"12.0\"}", 13, ".n == \"12\"", 10, 0},
    {"{\"n\": \"12.0\"}", 13, ".n == 12", 8, 1},
    {"{\"n\": \"abc\"}", 12, ".n == 0", 7, 1},
    {"{\"n\": \" 12\"}", 12, ".n == 12", 8, 1},
    {"{\"n\": \"12 \"}", 12, ".n == 12", 8, 0},
    {"{\"n\": \"0x10\"}", 13, ".n == 16", 8, 1},
    {"{\"n\": \"inf\"}", 12, ".n > 1e308", 10, 1},
    {"{\"n\": \"1e2\"}", 12, ".n == 100", 9, 1},
    {"{\"s\": \"\"}", 9, ".s", 2, 0},
    {"{\"s\": \"x\"}", 10, ".s", 2, 1},
    {"{\"s\": \"0\"}", 10, ".s", 2, 1},
    {"{\"s\": \"0\"}", 10, ".s == 0", 7, 1},
    {J1, sizeof(J1) - 1, "\"abc\"", 5, 1},
    {J1, sizeof(J1) - 1, "\"\"", 2, 0},
    {"{}", 2, "'x'", 3, 1},
    {J1, sizeof(J1) - 1, "\"abc\" + 1 == 1", 14, 1},
    {J1, sizeof(J1) - 1, "\"2\" * \"3\" == 6", 14, 1},
    {"{\"dq\": \"a\\\"b\"}", 14, ".dq == \"a\\\"b\"", 13, 1},
    {"{\"sq\": \"O'Brien\"}", 17, ".sq == 'O\\'Brien'", 17, 1},
    {"{\"bs\": \"x\\\\y\"}", 14, ".bs == \"x\\\\y\"", 13, 1},
    {"{\"nl\": \"l1\\nl2\"}", 16, ".nl == \"l1\\nl2\"", 15, 1},
    {"{\"dq\": \"a\\\"b\"}", 14, "\"\\\"b\" in .dq", 12, 1},
    {"{\"dq\": \"a\\\"b\"}", 14, ".dq in [\"zzz\", \"a\\\"b\"]", 22, 1},
    {"{\"dq\": \"a\\\"b\"}", 14, "'a\"b' == .dq", 12, 1},
    {"{\"sq\": \"O'Brien\"}", 17, ".sq == \"O'Brien\"", 16, 1},
    {"{\"dq\": \"a\\\"b\"}", 14, ".dq == \"a\\\\\\\"b\"", 15, 0},
    {"{\"u\": \"\\u0041\"}", 15, ".u == \"u0041\"", 13, 1},
    {"{\"u\": \"\\u0041\"}", 15, ".u == \"A\"", 9, 0},
    {"{\"s\": \"a\\/b\"}", 13, ".s == \"a/b\"", 11, 1},
    {"{\"a\": \"\\\"\"}", 11, ".a == \"\\\"\"", 10, 1},
    {JA, sizeof(JA) - 1, ".age in [25, 35]", 16, 1},
    {JB, sizeof(JB) - 1, ".age in [25, 35]", 16, 0},
    {JA, sizeof(JA) - 1, ".name in [\"Alice\", \"David\"]", 27, 1},
    {JA, sizeof(JA) - 1, "\"lic\" in .name", 14, 1},
    {JA, sizeof(JA) - 1, "\"xyz\" in .name", 14, 0},
    {JA, sizeof(JA) - 1, "\"\" in .name", 11, 1},
    {JA, sizeof(JA) - 1, ".name in \"\"", 11, 0},
    {JA, sizeof(JA) - 1, "\"\" in \"\"", 8, 1},
    {JA, sizeof(JA) - 1, "\"Alice\" in .name", 16, 1},
    {JA, sizeof(JA) - 1, "\"Alicee\" in .name", 17, 0},
    {JA, sizeof(JA) - 1, "\"ork\" in .city", 14, 1},
    {JA, sizeof(JA) - 1, "85 in .scores", 13, 1},
    {JA, sizeof(JA) - 1, "86 in .scores", 13, 0},
    {JA, sizeof(JA) - 1, "\"85\" in .scores", 15, 1},
    {JA, sizeof(JA) - 1, ".scores", 7, 1},
    {"{\"tags\": [\"a\", \"b\"]}", 20, "\"a\" in .tags", 12, 1},
    {"{\"tags\": [\"a\", \"b\"]}", 20, "\"c\" in .tags", 12, 0},
    {"{\"tags\": [\"a\", \"b\"]}", 20, "\"\" in .tags", 11, 0},
    {"{\"tags\": [\"a\", \"b\"]}", 20, ".tags in [\"a\"]", 14, 1},
    {"{\"tags\": [\"a\", \"b\"]}", 20, ".tags in [1]", 12, 0},
    {"{\"x\": 5}", 8, "5 in 5", 6, 0},
    {"{\"x\": \"5\"}", 10, "5 in .x", 7, 0},
    {"{\"x\": \"5\"}", 10, "\"5\" in .x", 9, 1},
    {"{\"x\": \"a\"}", 10, ".x in \"cat\"", 11, 1},
    {J1, sizeof(J1) - 1, "1 in []", 7, 0},
    {J1, sizeof(J1) - 1, "\"a\" in [\"a\",]", 13, 1},
    {J1, sizeof(J1) - 1, "-1 in [-1, 2]", 13, 1},
    {J1, sizeof(J1) - 1, "0 in [\"abc\"]", 12, 1},
    {J1, sizeof(J1) - 1, "null in [1]", 11, 0},
    {"{\"x\": [[1, 2], 3]}", 18, "3 in .x", 7, 1},
    {"{\"x\": [[1, 2], 3]}", 18, "1 in .x", 7, 0},
    {"{\"x\": [[1, 2], 3]}", 18, "0 in .x", 7, 1},
    {"{\"x\": [[], [[]]]}", 17, ".x", 2, 1},
    {"{\"x\": [1, {\"a\": 1}]}", 20, "1 in .x", 7, 0},
    {"{\"x\": [1, {\"a\": 1}]}", 20, "not (1 in .x)", 13, 0},
    {"{\"x\": [1, [2, {\"a\": 1}]]}", 25, "1 in .x", 7, 0},
    {"{\"x\": [1,]}", 11, "1 in .x", 7, 0},
    {"{\"x\": [1 2]}", 12, ".x", 2, 0},
    {"{\"x\": [1, 2}", 12, ".x", 2, 0},
    {"{\"x\": []}", 9, ".x", 2, 1},
    {"{\"x\": []}", 9, "1 in .x", 7, 0},
    {"{\"x\": [true, null]}", 19, "1 in .x", 7, 1},
    {"{\"x\": [true, null]}", 19, "null in .x", 10, 1},
    {"{\"x\": [1]}", 10, ".x == 0", 7, 1},
    {"{\"x\": [5]}", 10, ".x + 1 == 1", 11, 1},
    {"{\"x\": [1], \"y\": [2]}", 20, ".x == .y", 8, 1},
    {"{\"n\": null}", 11, ".n == null", 10, 1},
    {"{\"n\": null}", 11, ".n", 2, 0},
    {"{\"n\": null}", 11, "not .n", 6, 1},
    {"{\"n\": null}", 11, ".n == 0", 7, 0},
    {"{\"n\": null}", 11, ".n != 1", 7, 1},
    {"{\"n\": 0}", 8, ".n == null", 10, 0},
    {"{\"n\": null}", 11, "(.n == null )", 13, 1},
    {"{\"n\": null}", 11, ".n + 1 == 1", 11, 1},
    {J1, sizeof(J1) - 1, "null == null", 12, 1},
    {J1, sizeof(J1) - 1, "null", 4, 0},
    {J1, sizeof(J1) - 1, "null + 1 == 1", 13, 1},
    {"{\"b\": true}", 11, ".b == 1", 7, 1},
    {"{\"b\": false}", 12, ".b == 0", 7, 1},
    {"{\"b\": true}", 11, ".b + .b == 2", 12, 1},
    {"{\"b\": true}", 11, ".b == \"1\"", 9, 1},
    {"{\"b\": true}", 11, ".b", 2, 1},
    {"{\"b\": true }", 12, ".b", 2, 1},
    {"{\"b\": truex}", 12, ".b", 2, 0},
    {"{\"b\": tru}", 10, ".b", 2, 0},
    {"{\"b\": false}", 12, ".b", 2, 0},
    {JA, sizeof(JA) - 1, ".missing == \"x\"", 15, 0},
    {JA, sizeof(JA) - 1, ".missing or 1", 13, 0},
    {JA, sizeof(JA) - 1, "not .missing", 12, 0},
    {JA, sizeof(JA) - 1, ".age == 25 or .missing", 22, 0},
    {JA, sizeof(JA) - 1, ".Age == 25", 10, 0},
    {"  {\"a\": 1}", 10, ".a == 1", 7, 1},
    {"{\"a\": 1, \"a\": 2}", 16, ".a == 1", 7, 1},
    {"{\"a\": 1, bad", 12, ".a == 1", 7, 1},
    {"{\"b\": 1, bad, \"a\": 1}", 21, ".a == 1", 7, 0},
    {"{\"a\": 1 \"b\": 2}", 15, ".a == 1", 7, 1},
    {"{\"a\": 1 \"b\": 2}", 15, ".b == 2", 7, 0},
    {"{\"a\": 1,}", 9, ".b", 2, 0},
    {"{\"o\": {\"a\": 1}, \"a\": 2}", 23, ".a == 2", 7, 1},
    {"{\"o\": {\"a\": 1}}", 15, ".o", 2, 0},
    {"{\"o\": {\"a\": 1}}", 15, ".a", 2, 0},
    {"{\"o\": {\"x\": \"}\"}, \"a\": 2}", 25, ".a == 2", 7, 1},
    {"{\"o\": [1, {\"a\": [2]}], \"a\": 3}", 30, ".a == 3", 7, 1},
    {"{\"a\": 1e2}", 10, ".a == 100", 9, 1},
    {"{\"a\": -1.5}", 11, ".a == -1.5", 10, 1},
    {"{\"a\": +3}", 9, ".a == 3", 7, 1},
    {"{\"a\": 1.2.3}", 12, ".a", 2, 0},
    {"{\"a\": -}", 8, ".a", 2, 0},
    {"{\"a\": 01}", 9, ".a == 1", 7, 1},
    {"{\"a\": 1e+2}", 11, ".a == 100", 9, 1},
    {"{\"a\": 0x10}", 11, ".a == 0", 7, 1},
    {"{\"a\": \"x\"}", 10, ".a == \"x\"", 9, 1},
    {"{\"a\": \"x}", 9, ".a", 2, 0},
    {"{\"first-name\": \"x\", \"last_name\": \"y\"}", 37, ".first-name == \"x\" and .last_name == \"y\"", 40, 1},
    {"{\"a-1\": 5, \"a\": 10}", 19, ".a-1 == 5", 9, 1},
    {"{\"a\": 10}", 9, ".a - 1 == 9", 11, 1},
    {"{\"2\": 7}", 8, ".2 == 7", 7, 1},
    {"{\"a\" : 1}", 9, ".a == 1", 7, 1},
    {"{ \"a\" :\n 1 }", 12, ".a == 1", 7, 1},
    {"{\"x\": 1, \"y\": 2}", 16, ".x + .y == 3 and .x < .y", 24, 1},
    {"{\"x\": 3}", 8, ".x * .x == 9", 12, 1},
    {J1, sizeof(J1) - 1, ".a == 1\x00 garbage", 16, 1},
    {J1, sizeof(J1) - 1, ".", 1, 0},
    {J1, sizeof(J1) - 1, "1 or .", 6, 0},
    {"{\"\": 1}", 7, ".", 1, 0},
    {J1, sizeof(J1) - 1, ".a == 1 and .\x00", 14, 0},
};
static const struct ecase ecases[] = {
    {"", 0, "ERR syntax error in FILTER expression near: "},
    {"1 +", 3, "ERR syntax error in FILTER expression near: 1 +"},
    {"(1", 2, "ERR syntax error in FILTER expression near: (1"},
    {"1)", 2, "ERR syntax error in FILTER expression near: 1)"},
    {"()", 2, "ERR syntax error in FILTER expression near: ()"},
    {".a ==", 5, "ERR syntax error in FILTER expression near: .a =="},
    {"1 2", 3, "ERR syntax error in FILTER expression near: 1 2"},
    {"!!", 2, "ERR syntax error in FILTER expression near: !!"},
    {"not", 3, "ERR syntax error in FILTER expression near: not"},
    {"in", 2, "ERR syntax error in FILTER expression near: in"},
    {".a in", 5, "ERR syntax error in FILTER expression near: .a in"},
    {"-", 1, "ERR syntax error in FILTER expression near: -"},
    {"-.a", 3, "ERR syntax error in FILTER expression near: -.a"},
    {"--1", 3, "ERR syntax error in FILTER expression near: --1"},
    {"1 -- 1", 6, "ERR syntax error in FILTER expression near: 1 -- 1"},
    {".a <> 1", 7, "ERR syntax error in FILTER expression near: .a <> 1"},
    {"null1", 5, "ERR syntax error in FILTER expression near: null1"},
    {"\"abc", 4, "ERR syntax error in FILTER expression near: \"abc"},
    {".a == \"x", 8, "ERR syntax error in FILTER expression near: .a == \"x"},
    {".a == foo", 9, "ERR syntax error in FILTER expression near: .a == foo"},
    {".a == foo and 1", 15, "ERR syntax error in FILTER expression near:  and 1"},
    {".a @ 1", 6, "ERR syntax error in FILTER expression near: @ 1"},
    {"true", 4, "ERR syntax error in FILTER expression near: true"},
    {"true == .a", 10, "ERR syntax error in FILTER expression near:  == .a"},
    {".a == true", 10, "ERR syntax error in FILTER expression near: .a == true"},
    {"x == 1", 6, "ERR syntax error in FILTER expression near:  == 1"},
    {"a", 1, "ERR syntax error in FILTER expression near: a"},
    {".a == 1 x", 9, "ERR syntax error in FILTER expression near: .a == 1 x"},
    {".a == nulll", 11, "ERR syntax error in FILTER expression near: .a == nulll"},
    {"(.n == null)", 12, "ERR syntax error in FILTER expression near: (.n == null)"},
    {"2.5e-1 == 0.25", 14, "ERR syntax error in FILTER expression near: -1 == 0.25"},
    {"1e+5 > 0", 8, "ERR syntax error in FILTER expression near: +5 > 0"},
    {"1e", 2, "ERR syntax error in FILTER expression near: 1e"},
    {"1.2.3", 5, "ERR syntax error in FILTER expression near: 1.2.3"},
    {"1.2.3 > 0", 9, "ERR syntax error in FILTER expression near:  > 0"},
    {"0x10 == 16", 10, "ERR syntax error in FILTER expression near: 10 == 16"},
    {"[1, .a]", 7, "ERR syntax error in FILTER expression near: .a]"},
    {".a in [1 2]", 11, "ERR syntax error in FILTER expression near: 2]"},
    {".a in [1,", 9, "ERR syntax error in FILTER expression near: .a in [1,"},
    {".a in [[1]]", 11, "ERR syntax error in FILTER expression near: [1]]"},
    {".a in [-]", 9, "ERR syntax error in FILTER expression near: ]"},
    {". a", 3, "ERR syntax error in FILTER expression near: . a"},
    {".a == 1 .", 9, "ERR syntax error in FILTER expression near: .a == 1 ."},
    {".a == 'x' @", 11, "ERR syntax error in FILTER expression near: @"},
    {"[", 1, "ERR syntax error in FILTER expression near: ["},
    {"]", 1, "ERR syntax error in FILTER expression near: ]"},
    {"{", 1, "ERR syntax error in FILTER expression near: {"},
    {".a = 1", 6, "ERR syntax error in FILTER expression near:  1"},
    {".a => 1", 7, "ERR syntax error in FILTER expression near:  1"},
    {".a & 1", 6, "ERR syntax error in FILTER expression near:  1"},
    {".a | 1", 6, "ERR syntax error in FILTER expression near:  1"},
    {".a == 1\n+", 9, "ERR syntax error in FILTER expression near: .a == 1 +"},
    {"1 +\n", 4, "ERR syntax error in FILTER expression near: 1 +"},
    {".a == \"open\r\n", 13, "ERR syntax error in FILTER expression near: .a == \"open"},
    {"11111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111"
     "11111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111"
     "11111111111111111111111111111111111111111111111111111111111111111111111111",
     300, "ERR syntax error in FILTER expression near: 111111111111111111111111111111111111111111111"},
    {"1 +\x00 2", 6, "ERR syntax error in FILTER expression near: 1 +"},
    {"\"abc\x00\"", 6, "ERR syntax error in FILTER expression near: "},
    {".a == 1 AND .b == 2", 19, "ERR syntax error in FILTER expression near:  .b == 2"},
    {"NOT .a", 6, "ERR syntax error in FILTER expression near:  .a"},
    {".a == NULL", 10, "ERR syntax error in FILTER expression near: .a == NULL"},
};

static struct vexpr_scratch *scratch;

/* Compile and evaluate; -1 when the expression does not compile. */
static int run_len(const char *json, size_t jlen, const char *expr, size_t elen) {
    char err[256];
    struct vexpr *e = vexpr_compile(expr, elen, err, sizeof(err));
    if (!e) return -1;
    int r = vexpr_eval(e, json, jlen, scratch);
    vexpr_free(e);
    return r;
}

static int run(const char *json, const char *expr) {
    return run_len(json, json ? strlen(json) : 0, expr, strlen(expr));
}

/* The error text of a malformed expression, or "" when it compiles. */
static const char *error_of_len(const char *expr, size_t elen) {
    static char err[4096];
    struct vexpr *e = vexpr_compile(expr, elen, err, sizeof(err));
    if (e) {
        vexpr_free(e);
        return "";
    }
    return err;
}

static const char *error_of(const char *expr) { return error_of_len(expr, strlen(expr)); }

#define P "ERR syntax error in FILTER expression near: "

static void test_case_table(void) {
    for (size_t i = 0; i < sizeof(mcases) / sizeof(mcases[0]); i++) {
        const struct mcase *c = &mcases[i];
        int got = run_len(c->json, c->jlen, c->expr, c->elen);
        if (got != c->match) {
            fprintf(stderr, "case %zu: %s against %s: got %d, expected %d\n", i, c->expr,
                    c->json ? c->json : "(no attributes)", got, c->match);
            test_cur_failed = 1;
        }
    }
}

static void test_error_table(void) {
    for (size_t i = 0; i < sizeof(ecases) / sizeof(ecases[0]); i++) {
        const struct ecase *c = &ecases[i];
        const char *got = error_of_len(c->expr, c->elen);
        if (strcmp(got, c->reply) != 0) {
            fprintf(stderr, "error case %zu: got \"%s\", expected \"%s\"\n", i, got, c->reply);
            test_cur_failed = 1;
        }
    }
}

/* Every binary operator on two numbers, and each with its operands the
 * other way round where that changes the result. */
static void test_operators(void) {
    const char *j = "{\"a\": 6, \"b\": 4}";
    CHECK_EQ_LL(run(j, ".a + .b == 10"), 1);
    CHECK_EQ_LL(run(j, ".a - .b == 2"), 1);
    CHECK_EQ_LL(run(j, ".b - .a == -2"), 1);
    CHECK_EQ_LL(run(j, ".a * .b == 24"), 1);
    CHECK_EQ_LL(run(j, ".a / .b == 1.5"), 1);
    CHECK_EQ_LL(run(j, ".a % .b == 2"), 1);
    CHECK_EQ_LL(run(j, ".a ** .b == 1296"), 1);
    CHECK_EQ_LL(run(j, ".a > .b"), 1);
    CHECK_EQ_LL(run(j, ".b > .a"), 0);
    CHECK_EQ_LL(run(j, ".a >= 6"), 1);
    CHECK_EQ_LL(run(j, ".a >= 7"), 0);
    CHECK_EQ_LL(run(j, ".a < .b"), 0);
    CHECK_EQ_LL(run(j, ".b < .a"), 1);
    CHECK_EQ_LL(run(j, ".b <= 4"), 1);
    CHECK_EQ_LL(run(j, ".b <= 3"), 0);
    CHECK_EQ_LL(run(j, ".a == 6"), 1);
    CHECK_EQ_LL(run(j, ".a != 6"), 0);
    CHECK_EQ_LL(run(j, ".a != 5"), 1);
    CHECK_EQ_LL(run(j, ".a in [1, 6]"), 1);
    CHECK_EQ_LL(run(j, ".a and .b"), 1);
    CHECK_EQ_LL(run(j, ".a and 0"), 0);
    CHECK_EQ_LL(run(j, ".a && 0"), 0);
    CHECK_EQ_LL(run(j, "0 or .b"), 1);
    CHECK_EQ_LL(run(j, "0 || 0"), 0);
    CHECK_EQ_LL(run(j, "not .a"), 0);
    CHECK_EQ_LL(run(j, "!0"), 1);
    /* Results of comparisons are the numbers 1 and 0. */
    CHECK_EQ_LL(run(j, "(.a > .b) + (.a > 0) == 2"), 1);
    CHECK_EQ_LL(run(j, "(.a < .b) == 0"), 1);
}

static void test_precedence(void) {
    const char *j = "{\"a\": 1}";
    CHECK_EQ_LL(run(j, "1 + 2 * 3 == 7"), 1);
    CHECK_EQ_LL(run(j, "2 * 3 ** 2 == 18"), 1);
    CHECK_EQ_LL(run(j, "-2 ** 3 == -8"), 1);
    CHECK_EQ_LL(run(j, "2 ** -1 == 0.5"), 1);
    CHECK_EQ_LL(run(j, "2 ** 2 ** 3 == 256"), 1);
    CHECK_EQ_LL(run(j, "8 / 2 * 2 == 8"), 1);
    CHECK_EQ_LL(run(j, "8 % 5 * 2 == 6"), 1);
    CHECK_EQ_LL(run(j, "8 - 2 + 1 == 7"), 1);
    CHECK_EQ_LL(run(j, "1 < 2 == 1"), 1);
    CHECK_EQ_LL(run(j, "0 and 1 or 1"), 1);
    CHECK_EQ_LL(run(j, "1 or 1 and 0"), 1);
    CHECK_EQ_LL(run(j, "(1 or 1) and 0"), 0);
    CHECK_EQ_LL(run(j, "not 1 == 0"), 1);
    CHECK_EQ_LL(run(j, "not (1 == 0)"), 1);
    CHECK_EQ_LL(run(j, "! 1 + 1 == 1"), 1);
    CHECK_EQ_LL(run(j, "((((1))))"), 1);
    CHECK_EQ_LL(run(j, "((2 + 3) * (4 - 1)) == 15"), 1);
}

/* Escapes in expression strings: \n \r \t, anything else stands for
 * itself; in JSON strings the same, plus \" and \\. */
static void test_escapes(void) {
    CHECK_EQ_LL(run("{\"t\": \"a\\tb\"}", ".t == \"a\\tb\""), 1);
    CHECK_EQ_LL(run("{\"t\": \"a\\tb\"}", ".t == 'a\tb'"), 1);
    CHECK_EQ_LL(run("{\"r\": \"a\\rb\"}", ".r == \"a\\rb\""), 1);
    CHECK_EQ_LL(run("{\"a\": 1}", "\"\\q\" == \"q\""), 1);
    CHECK_EQ_LL(run("{\"a\": 1}", "'\\'' == \"'\""), 1);
    CHECK_EQ_LL(run("{\"a\": 1}", "'a\\\\' == \"a\\\\\""), 1);
    CHECK_EQ_LL(run("{\"a\": 1}", "'ab' == 'a\\b'"), 1);
    /* A backslash before the closing quote escapes it. */
    CHECK(strcmp(error_of("'abc\\'"), P "'abc\\'") == 0);
    /* Several escaped strings in one attribute string and one expression. */
    const char *j = "{\"a\": \"x\\\"y\", \"b\": [\"p\\\\q\", \"r\\ns\"], \"c\": \"\\t\"}";
    CHECK_EQ_LL(run(j, ".a == 'x\"y' and \"p\\\\q\" in .b and 'r\\ns' in .b and .c == '\\t'"), 1);
    CHECK_EQ_LL(run(j, "'y' in .a and .c != ' '"), 1);
}

/* Strings in JSON keys are compared raw, as Redis does. */
static void test_keys(void) {
    CHECK_EQ_LL(run("{\"a\\\"b\": 1, \"ab\": 2}", ".ab == 2"), 1);
    CHECK_EQ_LL(run("{\"A\": 1}", ".a"), 0);
    CHECK_EQ_LL(run("{\"a\": 1, \"b\": 2, \"c\": 3}", ".c + .a == 4"), 1);
    CHECK_EQ_LL(run("{\"a\":1,\"b\":{\"c\":[1,{\"d\":\"]}\"}]},\"e\":5}", ".e == 5"), 1);
    CHECK_EQ_LL(run("{\"a\": \"\\\\\", \"b\": 7}", ".b == 7"), 1);
    /* A string that never ends hides the rest. */
    CHECK_EQ_LL(run("{\"a\": \"abc, \"b\": 7}", ".b == 7"), 0);
    CHECK_EQ_LL(run("{\"a\": \"abc\\", ".a"), 0);
    CHECK_EQ_LL(run("{\"a", ".a"), 0);
    CHECK_EQ_LL(run("{\"a\"", ".a"), 0);
    CHECK_EQ_LL(run("{\"a\":", ".a"), 0);
    CHECK_EQ_LL(run("{\"a\": ", ".a"), 0);
    CHECK_EQ_LL(run("{", ".a"), 0);
    CHECK_EQ_LL(run("{\"a\": 1 ", ".a"), 1);
    CHECK_EQ_LL(run("{\"b\": 1 ", ".a"), 0);
    CHECK_EQ_LL(run("{\"a\": [1, 2", ".a"), 0);
    CHECK_EQ_LL(run("{\"a\": tru", ".a"), 0);
    CHECK_EQ_LL(run("{\"a\": true", ".a"), 1);
    CHECK_EQ_LL(run("{\"a\": null", ".a == null"), 1);
}

/* Attribute strings and expressions with NUL bytes. */
static void test_nul_bytes(void) {
    const char j[] = "{\"a\": \"1\0x\", \"b\": 2}";
    size_t jl = sizeof(j) - 1;
    CHECK_EQ_LL(run_len(j, jl, ".b == 2", 7), 1);
    /* A string holding a NUL reads as the number before it, as strtod does. */
    CHECK_EQ_LL(run_len(j, jl, ".a == 1", 7), 1);
    CHECK_EQ_LL(run_len(j, jl, ".a == '1'", 9), 0);
    const char k[] = "{\"a\0\": 1, \"b\": 3}";
    CHECK_EQ_LL(run_len(k, sizeof(k) - 1, ".b == 3", 7), 1);
    CHECK_EQ_LL(run_len(k, sizeof(k) - 1, ".a", 2), 0);
}

static void test_no_attributes(void) {
    CHECK_EQ_LL(run(NULL, "1"), 0);
    CHECK_EQ_LL(run("", "1"), 0);
    CHECK_EQ_LL(run_len("{}", 0, "1", 1), 0);
    CHECK_EQ_LL(run(NULL, ".a"), 0);
    CHECK_EQ_LL(run(" ", "1"), 1);
}

/* Deep nesting: expressions are refused past VEXPR_MAX_NESTING pending
 * operators; JSON arrays of any depth are read without recursion. */
static void test_nesting(void) {
    size_t n = 5000;
    char *buf = malloc(2 * n + 64);
    /* Parentheses just within the limit compile and run. */
    size_t d = VEXPR_MAX_NESTING, w = 0;
    for (size_t i = 0; i < d; i++) buf[w++] = '(';
    buf[w++] = '1';
    for (size_t i = 0; i < d; i++) buf[w++] = ')';
    CHECK_EQ_LL(run_len("{}", 2, buf, w), 1);
    /* One more is refused with the syntax error, the whole text echoed. */
    w = 0;
    for (size_t i = 0; i <= d; i++) buf[w++] = '(';
    buf[w++] = '1';
    for (size_t i = 0; i <= d; i++) buf[w++] = ')';
    buf[w] = 0;
    char *err = malloc(w + VEXPR_ERR_PREFIX_LEN + 1);
    CHECK(vexpr_compile(buf, w, err, w + VEXPR_ERR_PREFIX_LEN + 1) == NULL);
    CHECK(strncmp(err, P, VEXPR_ERR_PREFIX_LEN) == 0 && strcmp(err + VEXPR_ERR_PREFIX_LEN, buf) == 0);
    free(err);
    /* Chains of prefix operators count too. */
    w = 0;
    for (size_t i = 0; i < d - 1; i++) buf[w++] = '!';
    buf[w++] = '1';
    CHECK_EQ_LL(run_len("{}", 2, buf, w), (d - 1) % 2 == 0);
    w = 0;
    for (size_t i = 0; i < d + 1; i++) buf[w++] = '!';
    buf[w++] = '1';
    CHECK_EQ_LL(run_len("{}", 2, buf, w), -1);
    /* A long flat expression is not nesting. */
    w = 0;
    for (size_t i = 0; i < n; i++) {
        buf[w++] = '1';
        buf[w++] = '+';
    }
    buf[w++] = '1';
    buf[w] = 0;
    struct vexpr *e = vexpr_compile(buf, w, NULL, 0);
    CHECK(e != NULL);
    if (e) {
        CHECK_EQ_LL(vexpr_eval(e, "{}", 2, scratch), 1);
        CHECK(vexpr_memory(e) > n);
        vexpr_free(e);
    }
    free(buf);

    /* JSON: a million levels of arrays, as the value and skipped past. */
    size_t depth = 1000000;
    char *j = malloc(4 * depth + 64);
    w = 0;
    w += (size_t)sprintf(j, "{\"y\": ");
    for (size_t i = 0; i < depth; i++) j[w++] = '[';
    for (size_t i = 0; i < depth; i++) j[w++] = ']';
    w += (size_t)sprintf(j + w, ", \"x\": ");
    for (size_t i = 0; i < depth; i++) j[w++] = '[';
    for (size_t i = 0; i < depth; i++) j[w++] = ']';
    j[w++] = '}';
    CHECK_EQ_LL(run_len(j, w, ".x", 2), 1);
    CHECK_EQ_LL(run_len(j, w, "0 in .x and 0 in .y", 19), 1);
    CHECK_EQ_LL(run_len(j, w, "1 in .x", 7), 0);
    /* Unbalanced: one closer short. */
    j[w - 2] = ' ';
    CHECK_EQ_LL(run_len(j, w, ".x", 2), 0);
    CHECK_EQ_LL(run_len(j, w, ".y", 2), 1);
    /* A deep object is skipped as well. */
    w = 0;
    w += (size_t)sprintf(j, "{\"o\": ");
    for (size_t i = 0; i < depth; i++) j[w++] = '{';
    for (size_t i = 0; i < depth; i++) j[w++] = '}';
    w += (size_t)sprintf(j + w, ", \"x\": 3}");
    CHECK_EQ_LL(run_len(j, w, ".x == 3", 7), 1);
    CHECK_EQ_LL(run_len(j, w, ".o", 2), 0);
    free(j);
}

/* Many distinct fields: found by hash, each at its first occurrence. */
static void test_many_fields(void) {
    size_t nf = 3000;
    char *ex = malloc(nf * 32), *js = malloc(nf * 32 + 64);
    size_t w = 0, jw = 0;
    for (size_t i = 0; i < nf; i++) w += (size_t)sprintf(ex + w, "%s.f%zu == %zu", i ? " and " : "", i, i);
    w += (size_t)sprintf(ex + w, " and .f7 == 7");
    js[jw++] = '{';
    for (size_t i = nf; i-- > 0;) jw += (size_t)sprintf(js + jw, "\"f%zu\": %zu, ", i, i);
    jw += (size_t)sprintf(js + jw, "\"f7\": 8}");
    struct vexpr *e = vexpr_compile(ex, w, NULL, 0);
    CHECK(e != NULL);
    if (e) {
        CHECK_EQ_LL(vexpr_eval(e, js, jw, scratch), 1);
        /* Drop one field: the element no longer matches. */
        char *miss = strstr(js, "\"f1234\"");
        miss[1] = 'g';
        CHECK_EQ_LL(vexpr_eval(e, js, jw, scratch), 0);
        miss[1] = 'f';
        CHECK_EQ_LL(vexpr_eval(e, js, jw, scratch), 1);
        vexpr_free(e);
    }
    free(ex);
    free(js);
}

/* The error buffer: cut to its size, always terminated, optional. */
static void test_error_buffer(void) {
    char small[10];
    memset(small, 'x', sizeof(small));
    CHECK(vexpr_compile("1 +", 3, small, sizeof(small)) == NULL);
    CHECK(strcmp(small, "ERR synta") == 0);
    char one[1] = {'x'};
    CHECK(vexpr_compile("1 +", 3, one, 1) == NULL);
    CHECK(one[0] == 0);
    CHECK(vexpr_compile("1 +", 3, NULL, 0) == NULL);
    CHECK(vexpr_compile("1 +", 3, one, 0) == NULL);
    /* Compiling reads only len bytes. */
    struct vexpr *e = vexpr_compile("1 + 1 == 2 garbage", 10, NULL, 0);
    CHECK(e != NULL);
    if (e) {
        CHECK_EQ_LL(vexpr_eval(e, "{}", 2, scratch), 1);
        vexpr_free(e);
    }
}

/* One compiled expression, many evaluations, against attribute strings of
 * growing size; one scratch serving different expressions. */
static void test_reuse(void) {
    struct vexpr *e1 = vexpr_compile(".s == 'a\"b' and 2 in .t", 23, NULL, 0);
    struct vexpr *e2 = vexpr_compile(".n > 10", 7, NULL, 0);
    CHECK(e1 && e2);
    if (!e1 || !e2) return;
    char buf[8192];
    for (int i = 0; i < 500; i++) {
        int w =
            snprintf(buf, sizeof(buf), "{\"pad\": \"%*s\", \"n\": %d, \"t\": [1, %d, \"x\\\"\"], \"s\": \"a\\\"b\"}",
                     i * 10, "", i, i % 3);
        CHECK_EQ_LL(vexpr_eval(e1, buf, (size_t)w, scratch), i % 3 == 2);
        CHECK_EQ_LL(vexpr_eval(e2, buf, (size_t)w, scratch), i > 10);
    }
    vexpr_free(e1);
    vexpr_free(e2);
    /* Two scratches give the same answers. */
    struct vexpr_scratch *other = vexpr_scratch_new();
    struct vexpr *e = vexpr_compile(".a in ['x', 'y']", 16, NULL, 0);
    CHECK(e && vexpr_eval(e, "{\"a\": \"y\"}", 10, other) == 1 && vexpr_eval(e, "{\"a\": \"z\"}", 10, scratch) == 0);
    vexpr_free(e);
    vexpr_scratch_free(other);
    vexpr_scratch_free(NULL);
    vexpr_free(NULL);
    CHECK_EQ_LL(vexpr_memory(NULL), 0);
}

/* Memory accounting: the compiled form is seen by the allocator. */
static void test_memory(void) {
    size_t before = hk_used_memory();
    struct vexpr *e = vexpr_compile(".a == 'hello' and .b in [1, 2, 3]", 34, NULL, 0);
    CHECK(e != NULL);
    size_t m = vexpr_memory(e);
    CHECK(m > 0);
    CHECK(hk_used_memory() - before >= m);
    vexpr_free(e);
    CHECK_EQ_LL(hk_used_memory(), before);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint32_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)rng_state;
}

/* Random texts built from the language's own pieces and from raw bytes:
 * compiling must never crash, an error is always Redis's text, and a
 * compiled expression evaluates against random attribute strings. */
static void test_random(void) {
    static const char *pieces[] = {
        ".a", ".b",   ".tags", "1", "-2", "3.5", "1e3", "'x'", "\"y\"", "'a\\'b'", "[1, 'x']",
        "[]", "null", "(",     ")", "!",  "not", "**",  "*",   "/",     "%",       "+",
        "-",  ">",    ">=",    "<", "<=", "==",  "!=",  "in",  "and",   "&&",      "or",
        "||", " ",    "[",     "]", ",",  "'",   "\"",  "\\",  ".",     "e",       "true"};
    static const char *jpieces[] = {"{",        "}",  "[",    "]",    ",",     ":",    "\"a\"", "\"b\"",
                                    "\"tags\"", "1",  "-2.5", "true", "false", "null", "\"x\"", "\"\\\"\"",
                                    " ",        "\\", "\"",   "1e5",  "+",     "tru",  "{}"};
    size_t np = sizeof(pieces) / sizeof(pieces[0]), nj = sizeof(jpieces) / sizeof(jpieces[0]);
    char expr[512], json[512], err[1024];
    int compiled = 0;
    for (int iter = 0; iter < 20000; iter++) {
        size_t w = 0;
        int n = 1 + (int)(rnd() % 12);
        for (int k = 0; k < n; k++) {
            if (rnd() % 8 == 0) {
                expr[w++] = (char)(rnd() & 0xff);
            } else {
                const char *p = pieces[rnd() % np];
                size_t l = strlen(p);
                memcpy(expr + w, p, l);
                w += l;
            }
        }
        struct vexpr *e = vexpr_compile(expr, w, err, sizeof(err));
        if (!e) {
            CHECK(strncmp(err, P, VEXPR_ERR_PREFIX_LEN) == 0);
            continue;
        }
        compiled++;
        for (int t = 0; t < 4; t++) {
            size_t jw = 0;
            int m = (int)(rnd() % 16);
            if (rnd() % 2) json[jw++] = '{';
            for (int k = 0; k < m; k++) {
                if (rnd() % 10 == 0) {
                    json[jw++] = (char)(rnd() & 0xff);
                } else {
                    const char *p = jpieces[rnd() % nj];
                    size_t l = strlen(p);
                    memcpy(json + jw, p, l);
                    jw += l;
                }
            }
            int r = vexpr_eval(e, json, jw, scratch);
            CHECK(r == 0 || r == 1);
        }
        /* And against a well-formed object holding every field. */
        int r = vexpr_eval(e, "{\"a\": 1, \"b\": \"x\", \"tags\": [\"x\", 1]}", 37, scratch);
        CHECK(r == 0 || r == 1);
        vexpr_free(e);
    }
    CHECK(compiled > 100);
}

/* JSON numbers take a quicker path than strtod for plain decimals; both
 * must give the same double: compare against expression literals, which
 * always go through strtod. */
static void test_number_paths(void) {
    char json[128], expr[128];
    for (int i = 0; i < 20000; i++) {
        int digits = 1 + (int)(rnd() % 17);
        char num[40];
        int w = 0;
        if (rnd() % 2) num[w++] = '-';
        int dot = (int)(rnd() % (unsigned)(digits + 1));
        for (int d = 0; d < digits; d++) {
            if (d == dot && d > 0) num[w++] = '.';
            num[w++] = (char)('0' + rnd() % 10);
        }
        num[w] = 0;
        int jl = snprintf(json, sizeof(json), "{\"a\": %s}", num);
        int el = snprintf(expr, sizeof(expr), ".a == %s and .a - %s == 0", num, num);
        if (run_len(json, (size_t)jl, expr, (size_t)el) != 1) {
            fprintf(stderr, "number %s reads differently in JSON and in expressions\n", num);
            test_cur_failed = 1;
            break;
        }
    }
    CHECK_EQ_LL(run("{\"a\": 0.1}", ".a * 3 == 0.30000000000000004"), 1);
    CHECK_EQ_LL(run("{\"a\": 123456789012345678}", ".a == 123456789012345678"), 1);
    CHECK_EQ_LL(run("{\"a\": -0}", "1 / .a < 0"), 1);
    CHECK_EQ_LL(run("{\"a\": 1.}", ".a == 1"), 1);
    CHECK_EQ_LL(run("{\"a\": 1..2}", ".a"), 0);
    CHECK_EQ_LL(run("{\"a\": 1-2}", ".a"), 0);
    CHECK_EQ_LL(run("{\"a\": [1-2]}", ".a"), 0);
}

/* One compiled expression shared by several threads, each with its own
 * scratch (what the worker threads do during a graph search). */
struct shared_run {
    const struct vexpr *e;
    long matches;
};

static void *shared_worker(void *arg) {
    struct shared_run *r = arg;
    struct vexpr_scratch *s = vexpr_scratch_new();
    char json[128];
    for (int i = 0; i < 20000; i++) {
        int w = snprintf(json, sizeof(json), "{\"n\": %d, \"tag\": \"t\\\"%d\", \"l\": [%d, 7]}", i, i % 5, i % 3);
        r->matches += vexpr_eval(r->e, json, (size_t)w, s);
    }
    vexpr_scratch_free(s);
    return NULL;
}

static void test_shared_between_threads(void) {
    const char *src = ".n % 2 == 0 and ('\\\"1' in .tag or 2 in .l)";
    struct vexpr *e = vexpr_compile(src, strlen(src), NULL, 0);
    CHECK(e != NULL);
    if (!e) return;
    long want = 0;
    for (int i = 0; i < 20000; i++) want += i % 2 == 0 && (i % 5 == 1 || i % 3 == 2);
    pthread_t th[4];
    struct shared_run runs[4];
    for (int t = 0; t < 4; t++) {
        runs[t].e = e;
        runs[t].matches = 0;
        pthread_create(&th[t], NULL, shared_worker, &runs[t]);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        CHECK_EQ_LL(runs[t].matches, want);
    }
    vexpr_free(e);
}

int main(void) {
    scratch = vexpr_scratch_new();
    TEST_RUN(test_case_table);
    TEST_RUN(test_error_table);
    TEST_RUN(test_operators);
    TEST_RUN(test_precedence);
    TEST_RUN(test_escapes);
    TEST_RUN(test_keys);
    TEST_RUN(test_nul_bytes);
    TEST_RUN(test_no_attributes);
    TEST_RUN(test_nesting);
    TEST_RUN(test_many_fields);
    TEST_RUN(test_error_buffer);
    TEST_RUN(test_reuse);
    TEST_RUN(test_memory);
    TEST_RUN(test_random);
    TEST_RUN(test_number_paths);
    TEST_RUN(test_shared_between_threads);
    vexpr_scratch_free(scratch);
    return TEST_REPORT();
}
