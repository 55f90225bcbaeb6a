/* test_lualibs.c - unit tests of the Lua libraries that Redis ships to
 * scripts, as src/lua builds them for LuaJIT: cjson, cmsgpack and struct.
 * A case is a Lua expression evaluated in a fresh state that has the three
 * modules as globals and a few helpers (hex, dump, all, err); its result,
 * passed through tostring, must equal the expected text byte for byte. The
 * expectations of the tables below are the answers of Redis 7.0.15 (the
 * Debian redis-server) to the same chunks sent through EVAL, error texts
 * and their "user_script:20:" positions included, so a difference here is a
 * difference a script would see. The hand-written tests cover what that
 * version lacks (decode_array_with_array_mt), round trips of generated
 * values, and what the C side promises (one table pushed, no leak). */
#include "lua/lualibs.h"
#include "test.h"

#include <lualib.h>
#include <stdlib.h>

typedef struct {
    const char *expr;
    const char *want;
} lua_case;

/* The helpers every case may use, exactly as sent to Redis: the line of
 * the expression in the chunk, 20, shows up in some error texts. dump()
 * prints tables with sorted keys, so results do not depend on the order of
 * a table traversal, which differs between LuaJIT and PUC Lua. */
static const char prelude[] =
    "local function hex(s) return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) "
    "end)) end\n"
    "local function q(s) return '\"' .. string.gsub(s, '[^%w%p ]', function(c) return '\\\\' .. string.byte(c) "
    "end) .. '\"' end\n"
    "local function dump(v)\n"
    "  if type(v) == 'table' then\n"
    "    local keys, parts = {}, {}\n"
    "    for k in pairs(v) do keys[#keys + 1] = k end\n"
    "    table.sort(keys, function(a, b) return type(a) .. tostring(a) < type(b) .. tostring(b) end)\n"
    "    for _, k in ipairs(keys) do parts[#parts + 1] = dump(k) .. '=' .. dump(v[k]) end\n"
    "    return '{' .. table.concat(parts, ',') .. '}'\n"
    "  elseif type(v) == 'string' then return q(v)\n"
    "  elseif v == cjson.null then return 'null'\n"
    "  elseif type(v) == 'number' and v ~= v then return 'nan'\n"
    "  else return tostring(v) end\n"
    "end\n"
    "local function all(...) local t = {} for i = 1, select('#', ...) do t[i] = dump((select(i, ...))) end return "
    "table.concat(t, ' ') end\n"
    "local function pk(...) return {n = select('#', ...), ...} end\n"
    "local function err(f, ...) local r = pk(pcall(f, ...)) if r[1] then return 'ok ' .. all(unpack(r, 2, r.n)) "
    "end return r[2] end\n";

static lua_State *new_state(void) {
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    CHECK_EQ_LL(hk_luaopen_cjson(L), 1);
    lua_setglobal(L, "cjson");
    CHECK_EQ_LL(hk_luaopen_cmsgpack(L), 1);
    lua_setglobal(L, "cmsgpack");
    CHECK_EQ_LL(hk_luaopen_struct(L), 1);
    lua_setglobal(L, "struct");
    CHECK_EQ_LL(lua_gettop(L), 0);
    return L;
}

/* Evaluate `return tostring(expr)` the way the expectations were made and
 * return the result or the error text, in a buffer the caller frees. */
static char *eval_in(lua_State *L, const char *expr, size_t *len) {
    const char *head = "\nreturn tostring((function()\nreturn ", *tail = "\nend)())";
    size_t n = strlen(prelude) + strlen(head) + strlen(expr) + strlen(tail);
    char *script = malloc(n + 1);
    snprintf(script, n + 1, "%s%s%s%s", prelude, head, expr, tail);
    int rc = luaL_loadbuffer(L, script, n, "@user_script");
    if (rc == 0) rc = lua_pcall(L, 0, 1, 0);
    free(script);
    size_t rlen;
    const char *r = lua_tolstring(L, -1, &rlen);
    if (!r) r = "(not a string)", rlen = strlen(r);
    char *out = malloc(rlen + 1);
    memcpy(out, r, rlen);
    out[rlen] = '\0';
    *len = rlen;
    lua_settop(L, 0);
    return out;
}

/* One case in a state of its own, so that settings changed by a case
 * cannot leak into the next. */
static void check_case(const lua_case *c) {
    lua_State *L = new_state();
    size_t len;
    char *got = eval_in(L, c->expr, &len);
    int failed_before = test_cur_failed;
    test_cur_failed = 0;
    CHECK_MEM(got, len, c->want);
    if (test_cur_failed) fprintf(stderr, "    in: %s\n", c->expr);
    test_cur_failed |= failed_before;
    free(got);
    lua_close(L);
}

#define CHECK_LUA(L, expr, want)                                                                                       \
    do {                                                                                                               \
        size_t len_;                                                                                                   \
        char *got_ = eval_in((L), (expr), &len_);                                                                      \
        CHECK_MEM(got_, len_, (want));                                                                                 \
        free(got_);                                                                                                    \
    } while (0)

/* Answers of Redis 7.0.15 to the same expressions. */
static const lua_case cjson_cases[] = {
    {"cjson.encode({1, 2, 3, 'x'})", "[1,2,3,\"x\"]"},
    {"cjson.encode({a = 1})", "{\"a\":1}"},
    {"cjson.encode({})", "{}"},
    {"cjson.encode({{}, {{}}})", "[{},[{}]]"},
    {"cjson.encode('a\"b\\\\c/d\\b\\f\\n\\r\\t' .. string.char(0, 1, 31, 127, 128, 255))",
     "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0000\\u0001\\u001f\\u007f\200\377\""},
    {"cjson.encode(true) .. cjson.encode(false) .. cjson.encode(cjson.null) .. cjson.encode(nil)", "truefalsenullnull"},
    {"cjson.encode({1, nil, 3})", "[1,null,3]"},
    {"cjson.encode({[1] = 1, [2] = 2, [4] = 4})", "[1,2,null,4]"},
    {"cjson.encode({[1] = 'a', [3] = 'c'})", "[\"a\",null,\"c\"]"},
    {"cjson.encode({[10] = 1})", "[null,null,null,null,null,null,null,null,null,1]"},
    {"err(cjson.encode, {[11] = 1})", "Cannot serialise table: excessively sparse array"},
    {"err(cjson.encode, {[12] = 1, [1] = 1})", "Cannot serialise table: excessively sparse array"},
    {"err(cjson.encode, {[20] = 1, [1] = 1, [2] = 2, [3] = 3, [4] = 4, [5] = 5, [6] = 6, [7] = 7, [8] = 8, [9] = 9, "
     "[10] = 10})",
     "ok \"[1,2,3,4,5,6,7,8,9,10,null,null,null,null,null,null,null,null,null,1]\""},
    {"cjson.encode({[1.5] = 'x'})", "{\"1.5\":\"x\"}"},
    {"cjson.encode({[0] = 'x'})", "{\"0\":\"x\"}"},
    {"cjson.encode({[-1] = 'x'})", "{\"-1\":\"x\"}"},
    {"cjson.encode({[2^40] = 'x'})", "{\"1099511627776\":\"x\"}"},
    {"cjson.encode({[2^31] = 'x'})", "{\"2147483648\":\"x\"}"},
    {"err(cjson.encode, {[2^31 - 1] = 'x'})", "Cannot serialise table: excessively sparse array"},
    {"err(cjson.encode, {[1/0] = 'x'})", "Cannot serialise number: must not be NaN or Inf"},
    {"err(cjson.encode, {[true] = 1})", "Cannot serialise boolean: table key must be a number or string"},
    {"err(cjson.encode, {[{}] = 1})", "Cannot serialise table: table key must be a number or string"},
    {"err(cjson.encode, function() end)", "Cannot serialise function: type not supported"},
    {"err(cjson.encode, {f = tostring})", "Cannot serialise function: type not supported"},
    {"err(cjson.encode, coroutine.create(function() end))", "Cannot serialise thread: type not supported"},
    {"err(cjson.encode)", "bad argument #1 to '?' (expected 1 argument)"},
    {"err(cjson.encode, 1, 2)", "bad argument #1 to '?' (expected 1 argument)"},
    {"(function() local z = 0 return cjson.encode(0) .. ' ' .. cjson.encode(-z) end)() .. ' ' .. cjson.encode(0.1) .. "
     "' ' .. cjson.encode(1/3) .. ' ' .. cjson.encode(-1.5e-7)",
     "0 -0 0.1 0.33333333333333 -1.5e-07"},
    {"cjson.encode(1e15) .. ' ' .. cjson.encode(123456789012345) .. ' ' .. cjson.encode(2^53) .. ' ' .. "
     "cjson.encode(-1.7976931348623157e308) .. ' ' .. cjson.encode(5e-324)",
     "1e+15 1.2345678901234e+14 9.007199254741e+15 -1.7976931348623e+308 4.9406564584125e-324"},
    {"cjson.encode(100) .. ' ' .. cjson.encode(1e14) .. ' ' .. cjson.encode(99999999999999) .. ' ' .. "
     "cjson.encode(3.14159265358979)",
     "100 1e+14 99999999999999 3.1415926535898"},
    {"err(cjson.encode, 1/0)", "Cannot serialise number: must not be NaN or Inf"},
    {"err(cjson.encode, -1/0)", "Cannot serialise number: must not be NaN or Inf"},
    {"err(cjson.encode, 0/0)", "Cannot serialise number: must not be NaN or Inf"},
    {"err(cjson.encode, {1, 2, 0/0})", "Cannot serialise number: must not be NaN or Inf"},
    {"err(cjson.encode, {[1/0] = 1})", "Cannot serialise number: must not be NaN or Inf"},
    {"cjson.encode({[3] = 'three'})", "[null,null,\"three\"]"},
    {"cjson.encode({1, {2, {3, {4}}}})", "[1,[2,[3,[4]]]]"},
    {"cjson.encode({['a\\0b'] = 'c'})", "{\"a\\u0000b\":\"c\"}"},
    {"cjson.encode({[5] = 1, [1] = 1})", "[1,null,null,null,1]"},
    {"cjson.encode(cjson.decode('[[],{}]'))", "[{},{}]"},
    {"cjson.encode(cjson.decode('{\"a\":[]}'))", "{\"a\":{}}"},
    {"all(cjson.encode_invalid_numbers())", "false"},
    {"all(cjson.encode_invalid_numbers(true), cjson.encode(1/0), cjson.encode(-1/0), cjson.encode(0/0), "
     "cjson.encode(-(0/0)))",
     "true \"inf\" \"-inf\" \"nan\" \"nan\""},
    {"all(cjson.encode_invalid_numbers('null'), cjson.encode({1/0, 0/0, 1}), cjson.encode({[1/0] = 1}))",
     "\"null\" \"[null,null,1]\" \"{\"null\":1}\""},
    {"all(cjson.encode_invalid_numbers('on'), cjson.encode_invalid_numbers('off'), "
     "cjson.encode_invalid_numbers(false), cjson.encode_invalid_numbers())",
     "true false false false"},
    {"err(cjson.encode_invalid_numbers, 'maybe')", "bad argument #1 to '?' (invalid option 'maybe')"},
    {"err(cjson.encode_invalid_numbers, {})", "bad argument #1 to '?' (string expected, got table)"},
    {"err(cjson.encode_invalid_numbers, 1)", "bad argument #1 to '?' (invalid option '1')"},
    {"err(cjson.encode_invalid_numbers, true, true)", "bad argument #2 to '?' (found too many arguments)"},
    {"all(cjson.encode_number_precision())", "14"},
    {"all(cjson.encode_number_precision(3), cjson.encode(math.pi), cjson.encode(1234567), cjson.encode({[0.12345] = "
     "1}), cjson.encode_number_precision(14))",
     "3 \"3.14\" \"1.23e+06\" \"{\"0.123\":1}\" 14"},
    {"all(cjson.encode_number_precision(1), cjson.encode(2.5), cjson.encode(15), cjson.encode_number_precision(14))",
     "1 \"2\" \"2e+01\" 14"},
    {"err(cjson.encode_number_precision, 15)", "bad argument #1 to '?' (expected integer between 1 and 14)"},
    {"err(cjson.encode_number_precision, 0)", "bad argument #1 to '?' (expected integer between 1 and 14)"},
    {"err(cjson.encode_number_precision, 'x')", "bad argument #1 to '?' (number expected, got string)"},
    {"err(cjson.encode_number_precision, '7')", "ok 7"},
    {"all(cjson.encode_number_precision('7'), cjson.encode(math.pi), cjson.encode_number_precision(14))",
     "7 \"3.141593\" 14"},
    {"all(cjson.encode_sparse_array())", "false 2 10"},
    {"all(cjson.encode_sparse_array(true), cjson.encode({[20] = 'x', [1] = 'y'}), cjson.encode_sparse_array(false))",
     "true \"{\"20\":\"x\",\"1\":\"y\"}\" false 2 10"},
    {"all(cjson.encode_sparse_array(false, 0), cjson.encode({[5] = 'x'}), cjson.encode_sparse_array(false, 2))",
     "false \"[null,null,null,null,\"x\"]\" false 2 10"},
    {"all(cjson.encode_sparse_array(false, 1, 0), err(cjson.encode, {[2] = 'x'}), cjson.encode({'a', 'b'}), "
     "cjson.encode_sparse_array(false, 2, 10))",
     "false \"Cannot serialise table: excessively sparse array\" \"[\"a\",\"b\"]\" false 2 10"},
    {"all(cjson.encode_sparse_array(nil, nil, 3), err(cjson.encode, {[4] = 1}), cjson.encode_sparse_array(nil, nil, "
     "10))",
     "false \"Cannot serialise table: excessively sparse array\" false 2 10"},
    {"all(cjson.encode_sparse_array(false, 2147483647, 10), err(cjson.encode, {1, 2, [11] = 3}), "
     "cjson.encode_sparse_array(false, 2, 10))",
     "false \"ok \"[1,2,null,null,null,null,null,null,null,null,3]\"\" false 2 10"},
    {"all(cjson.encode_sparse_array('on'), cjson.encode_sparse_array('off'))", "true false 2 10"},
    {"err(cjson.encode_sparse_array, false, -1)", "bad argument #1 to '?' (expected integer between 0 and 2147483647)"},
    {"err(cjson.encode_sparse_array, false, 1, -1)",
     "bad argument #1 to '?' (expected integer between 0 and 2147483647)"},
    {"err(cjson.encode_sparse_array, 1)", "bad argument #1 to '?' (invalid option '1')"},
    {"err(cjson.encode_sparse_array, false, 1, 2, 3)", "bad argument #4 to '?' (found too many arguments)"},
    {"all(cjson.encode_max_depth())", "1000"},
    {"all(cjson.encode_max_depth(2), cjson.encode({{1}}), err(cjson.encode, {{{1}}}), err(cjson.encode, {{{}}}), "
     "cjson.encode_max_depth(1000))",
     "2 \"[[1]]\" \"Cannot serialise, excessive nesting (3)\" \"Cannot serialise, excessive nesting (3)\" 1000"},
    {"err(cjson.encode_max_depth, 0)", "bad argument #1 to '?' (expected integer between 1 and 2147483647)"},
    {"err(cjson.encode_max_depth, 1.5)", "ok 1"},
    {"all(cjson.encode_max_depth(2.9), cjson.encode_max_depth(1000))", "2 1000"},
    {"all(cjson.decode_max_depth())", "1000"},
    {"all(cjson.decode_max_depth(2), dump(cjson.decode('[[1]]')), err(cjson.decode, '[[[1]]]'), err(cjson.decode, "
     "'{\"a\":{\"b\":{}}}'), cjson.decode_max_depth(1000))",
     "2 \"{1={1=1}}\" \"Found too many nested data structures (3) at character 3\" \"Found too many nested data "
     "structures (3) at character 11\" 1000"},
    {"err(cjson.decode_max_depth, -5)", "bad argument #1 to '?' (expected integer between 1 and 2147483647)"},
    {"all(cjson.encode_keep_buffer(), cjson.encode_keep_buffer(false), cjson.encode({1}), "
     "cjson.encode_keep_buffer('on'), cjson.encode({2}))",
     "true false \"[1]\" true \"[2]\""},
    {"err(cjson.encode_keep_buffer, 'yes')", "bad argument #1 to '?' (invalid option 'yes')"},
    {"all(cjson.decode_invalid_numbers())", "true"},
    {"all(cjson.decode_invalid_numbers(false), err(cjson.decode, '1'), err(cjson.decode, 'NaN'), err(cjson.decode, "
     "'0x10'), err(cjson.decode, '012'), err(cjson.decode, '+1'), err(cjson.decode, '-Infinity'), err(cjson.decode, "
     "'inf'), err(cjson.decode, '-0'), err(cjson.decode, '-'), err(cjson.decode, '1.5e3'), "
     "cjson.decode_invalid_numbers(true))",
     "false \"ok 1\" \"Expected value but found invalid token at character 1\" \"Expected value but found invalid "
     "number at character 1\" \"Expected value but found invalid number at character 1\" \"Expected value but found "
     "invalid token at character 1\" \"Expected value but found invalid number at character 1\" \"Expected value but "
     "found invalid token at character 1\" \"ok -0\" \"Expected value but found invalid number at character 1\" \"ok "
     "1500\" true"},
    {"all(cjson.decode('0x10'), cjson.decode('012'), cjson.decode('+1'), cjson.decode('-Infinity'), "
     "cjson.decode('Infinity'), cjson.decode('inf'), cjson.decode('nan'), cjson.decode('NaN'), cjson.decode('1e999'), "
     "cjson.decode('-1e999'))",
     "16 12 1 -inf inf inf nan nan inf -inf"},
    {"all(err(cjson.decode, '+'), err(cjson.decode, '-'), err(cjson.decode, '--1'), err(cjson.decode, 'infinite'), "
     "err(cjson.decode, 'Nope'), err(cjson.decode, 'nul'), err(cjson.decode, 'truex'), err(cjson.decode, 'fals'), "
     "err(cjson.decode, 'True'))",
     "\"Expected value but found invalid number at character 1\" \"Expected value but found invalid number at "
     "character 1\" \"Expected value but found invalid number at character 1\" \"Expected the end but found invalid "
     "token at character 4\" \"Expected value but found invalid token at character 1\" \"Expected value but found "
     "invalid token at character 1\" \"Expected the end but found invalid token at character 5\" \"Expected value but "
     "found invalid token at character 1\" \"Expected value but found invalid token at character 1\""},
    {"all(cjson.decode('[0.0, -5e3, -1, 0.3e-3, 1023.2, 0e10]'))", "{1=0,2=-5000,3=-1,4=0.0003,5=1023.2,6=0}"},
    {"table.concat(cjson.decode('[0.0, -5e3, -1, 0.3e-3, 1023.2, 0e10]'), ' ')", "0 -5000 -1 0.0003 1023.2 0"},
    {"all(cjson.decode('{\"keya\": \"a\", \"keyb\": \"b\"}'))", "{\"keya\"=\"a\",\"keyb\"=\"b\"}"},
    {"all(cjson.decode(' \\t\\r\\n{ \"a\" : [ 1 , true , false , null , \"x\" , { } , [ ] ] } \\n'))",
     "{\"a\"={1=1,2=true,3=false,4=null,5=\"x\",6={},7={}}}"},
    {"all(cjson.decode('\"\\\\\"\\\\\\\\\\\\/\\\\b\\\\f\\\\n\\\\r\\\\t\"'))", "\"\"\\/\\8\\12\\10\\13\\9\""},
    {"all(cjson.decode('\"\\\\u0041\\\\u00e9\\\\u20ac\\\\ud83d\\\\ude00\\\\u0000z\"'))",
     "\"A\\195\\169\\226\\130\\172\\240\\159\\152\\128\\0z\""},
    {"hex(cjson.decode('\"\\\\u00e9\\\\u20AC\\\\uD834\\\\uDD1E\"'))", "c3a9e282acf09d849e"},
    {"all(err(cjson.decode, '\"\\\\ud83d\"'), err(cjson.decode, '\"\\\\ude00\"'), err(cjson.decode, "
     "'\"\\\\ud83d\\\\u0041\"'), err(cjson.decode, '\"\\\\u12\"'), err(cjson.decode, '\"\\\\u12g4\"'), "
     "err(cjson.decode, '\"ab\\\\x\"'), err(cjson.decode, '\"abc'), err(cjson.decode, '\"ab\\\\'))",
     "\"Expected value but found invalid unicode escape code at character 2\" \"Expected value but found invalid "
     "unicode escape code at character 2\" \"Expected value but found invalid unicode escape code at character 2\" "
     "\"Expected value but found invalid unicode escape code at character 2\" \"Expected value but found invalid "
     "unicode escape code at character 2\" \"Expected value but found invalid escape code at character 4\" \"Expected "
     "value but found unexpected end of string at character 5\" \"Expected value but found invalid escape code at "
     "character 4\""},
    {"all(err(cjson.decode, ''), err(cjson.decode, ' '), err(cjson.decode, '['), err(cjson.decode, ']'), "
     "err(cjson.decode, '[1,]'), err(cjson.decode, '[1 2]'), err(cjson.decode, '{1:2}'), err(cjson.decode, '{\"a\" "
     "1}'), err(cjson.decode, '{\"a\":1,}'), err(cjson.decode, '{\"a\":1 \"b\"}'), err(cjson.decode, '{\"a\"'))",
     "\"Expected value but found T_END at character 1\" \"Expected value but found T_END at character 2\" \"Expected "
     "value but found T_END at character 2\" \"Expected value but found T_ARR_END at character 1\" \"Expected value "
     "but found T_ARR_END at character 4\" \"Expected comma or array end but found T_NUMBER at character 4\" "
     "\"Expected object key string but found T_NUMBER at character 2\" \"Expected colon but found T_NUMBER at "
     "character 6\" \"Expected object key string but found T_OBJ_END at character 8\" \"Expected comma or object end "
     "but found T_STRING at character 8\" \"Expected colon but found T_END at character 5\""},
    {"all(err(cjson.decode, '[1,2'), err(cjson.decode, '1 2'), err(cjson.decode, 'x'), err(cjson.decode, '[1] x'), "
     "err(cjson.decode, '@'), err(cjson.decode, '.5'), err(cjson.decode, \"'a'\"), err(cjson.decode, '[1,,2]'), "
     "err(cjson.decode, '{\"a\":}'))",
     "\"Expected comma or array end but found T_END at character 5\" \"Expected the end but found T_NUMBER at "
     "character 3\" \"Expected value but found invalid token at character 1\" \"Expected the end but found invalid "
     "token at character 5\" \"Expected value but found invalid token at character 1\" \"Expected value but found "
     "invalid token at character 1\" \"Expected value but found invalid token at character 1\" \"Expected value but "
     "found T_COMMA at character 4\" \"Expected value but found T_OBJ_END at character 6\""},
    {"all(cjson.decode('[1]\\0garbage'), err(cjson.decode, '\\0['), err(cjson.decode, '[\\0'), err(cjson.decode, "
     "'\"a\\0b\"'), cjson.decode('7'))",
     "{1=1} \"JSON parser does not support UTF-16 or UTF-32\" \"JSON parser does not support UTF-16 or UTF-32\" "
     "\"Expected value but found unexpected end of string at character 3\" 7"},
    {"all(err(cjson.decode), err(cjson.decode, 1, 2), err(cjson.decode, {}), err(cjson.decode, nil), cjson.decode(42), "
     "cjson.decode(' 1.5 '))",
     "\"bad argument #1 to '?' (expected 1 argument)\" \"bad argument #1 to '?' (expected 1 argument)\" \"bad argument "
     "#1 to '?' (string expected, got table)\" \"bad argument #1 to '?' (string expected, got nil)\" 42 1.5"},
    {"all(cjson.decode('true'), cjson.decode('false'), cjson.decode('null') == cjson.null, cjson.decode('\"x\"'), "
     "cjson.decode('[]'), cjson.decode('{}'))",
     "true false true \"x\" {} {}"},
    {"all(cjson.decode('{\"a\":1,\"a\":2}'), cjson.decode('{\"1\":\"x\",\"2\":\"y\"}'), cjson.decode('[null,null,3]'))",
     "{\"a\"=2} {\"1\"=\"x\",\"2\"=\"y\"} {1=null,2=null,3=3}"},
    {"err(cjson.decode, string.rep('[', 1001) .. string.rep(']', 1001))",
     "Found too many nested data structures (1001) at character 1001"},
    {"#cjson.encode(cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000)))", "2000"},
    {"all(pcall(function() return #cjson.encode(cjson.decode('{\"a\":' .. string.rep('[', 999) .. string.rep(']', 999) "
     ".. '}')) end))",
     "true 2004"},
    {"err(cjson.decode, ' ' .. string.rep('[', 1005))",
     "Found too many nested data structures (1001) at character 1002"},
    {"err(function() local t = {} t[1] = t local s = cjson.encode(t) return s end)",
     "user_script:20: Cannot serialise, excessive nesting (1001)"},
    {"err(function() local t = {} for i = 1, 1000 do t = {t} end local s = cjson.encode(t) return s end)",
     "user_script:20: Cannot serialise, excessive nesting (1001)"},
    {"#(function() local t = {} for i = 1, 999 do t = {t} end return cjson.encode(t) end)()", "2000"},
    {"err(function() local t = {} for i = 1, 1000 do t = {a = t} end local s = cjson.encode(t) return s end)",
     "user_script:20: Cannot serialise, excessive nesting (1001)"},
    {"all(cjson.null == cjson.decode('null'), type(cjson.null), cjson._NAME, cjson._VERSION)",
     "true \"userdata\" \"cjson\" \"2.1.0\""},
    {"all(type(cjson.new), type(cjson.new().encode), cjson.new()._VERSION)", "\"function\" \"function\" \"2.1.0\""},
    {"all((function() local c = cjson.new() c.encode_max_depth(1) return err(c.encode, {{}}), err(cjson.encode, {{}}) "
     "end)())",
     "\"Cannot serialise, excessive nesting (2)\" \"ok \"[{}]\"\""},
    {"cjson.encode({[1] = 'a', [2] = 'b', n = 2}) == '{\"1\":\"a\",\"2\":\"b\",\"n\":2}' or cjson.encode({[1] = 'a', "
     "[2] = 'b', n = 2}):len()",
     "true"},
    {"cjson.encode({'\\226\\130\\172', '\\195'})", "[\"\342\202\254\",\"\303\"]"},
    {"cjson.encode(string.rep('x', 40000)):len()", "40002"},
    {"cjson.encode(string.rep('\\1', 5000)):len()", "30002"},
    {"all(cjson.decode(cjson.encode({s = string.rep('\\1\\2\\3\\n\"\\\\/', 1000)})).s == "
     "string.rep('\\1\\2\\3\\n\"\\\\/', 1000))",
     "true"},
    {"cjson.encode({{1, 2}, {a = {b = {c = 'd'}}}})", "[[1,2],{\"a\":{\"b\":{\"c\":\"d\"}}}]"},
    {"all(err(cjson.encode_max_depth, 2^31), err(cjson.encode_max_depth, 2^32 + 5), cjson.encode_max_depth(1000))",
     "\"bad argument #1 to '?' (expected integer between 1 and 2147483647)\" \"ok 5\" 1000"},
};

static const lua_case cmsgpack_cases[] = {
    {"hex(cmsgpack.pack(0.1))", "cb3fb999999999999a"},
    {"hex(cmsgpack.pack(-1099511627776))", "d3ffffff0000000000"},
    {"hex(cmsgpack.pack(0, 1, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, 2^53))",
     "00017fcc80ccffcd0100cdffffce00010000ceffffffffcf0000000100000000cf0020000000000000"},
    {"hex(cmsgpack.pack(-1, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649, -2^53, -2^63))",
     "ffe0d0dfd080d1ff7fd18000d2ffff7fffd280000000d3ffffffff7fffffffd3ffe0000000000000d38000000000000000"},
    {"hex(cmsgpack.pack(0.5, -0.5, 1.5, 1e300, -1e-300, 1/3, 2^63, 2^64, -2^64, 1/0, -1/0, -0))",
     "ca3f000000cabf000000ca3fc00000cb7e37e43c8800759ccb81a56e1fc2f8f359cb3fd5555555555555ca5f000000ca5f800000cadf80000"
     "0ca7f800000caff80000000"},
    {"hex(cmsgpack.pack(3.4028234663852886e38, 3.4028235677973366e38, 1.401298464324817e-45, 1e-46))",
     "ca7f7fffffcb47effffff0000000ca00000001cb366244ce242c5561"},
    {"hex(cmsgpack.pack(true, false, nil, tostring))", "c3c2c0c0"},
    {"hex(cmsgpack.pack(''))", "a0"},
    {"hex(cmsgpack.pack(string.rep('a', 31))):sub(1, 6)", "bf6161"},
    {"hex(cmsgpack.pack(string.rep('a', 32))):sub(1, 8)", "d9206161"},
    {"hex(cmsgpack.pack(string.rep('a', 255))):sub(1, 8)", "d9ff6161"},
    {"hex(cmsgpack.pack(string.rep('a', 256))):sub(1, 10)", "da01006161"},
    {"hex(cmsgpack.pack(string.rep('a', 65535))):sub(1, 10)", "daffff6161"},
    {"hex(cmsgpack.pack(string.rep('a', 65536))):sub(1, 14)", "db000100006161"},
    {"#cmsgpack.pack(string.rep('a', 65536))", "65541"},
    {"hex(cmsgpack.pack({}))", "90"},
    {"hex(cmsgpack.pack({1, 2, 3}))", "93010203"},
    {"hex(cmsgpack.pack({a = 1}))", "81a16101"},
    {"hex(cmsgpack.pack({[1] = 'x', [3] = 'y'})):sub(1, 2) .. ' ' .. all(cmsgpack.unpack(cmsgpack.pack({[1] = 'x', [3] "
     "= 'y'})))",
     "82 {1=\"x\",3=\"y\"}"},
    {"hex(cmsgpack.pack({[2] = 'x'}))", "8102a178"},
    {"hex(cmsgpack.pack({[1.5] = 'x'}))", "81ca3fc00000a178"},
    {"hex(cmsgpack.pack({[0] = 'x'}))", "8100a178"},
    {"hex(cmsgpack.pack({[2^31] = 'x'}))", "81ce80000000a178"},
    {"hex(cmsgpack.pack({[-1] = 'x'}))", "81ffa178"},
    {"hex(cmsgpack.pack({[true] = false}))", "81c3c2"},
    {"hex(cmsgpack.pack({{}, {{}}}))", "92909190"},
    {"hex(cmsgpack.pack({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})):sub(1, 10)", "dc00100102"},
    {"hex(cmsgpack.pack((function() local t = {} for i = 1, 70000 do t[i] = 0 end return t end)())):sub(1, 14)",
     "dd000111700000"},
    {"hex(cmsgpack.pack((function() local t = {} for i = 1, 16 do t['k' .. i] = 0 end return t end)())):sub(1, 6)",
     "de0010"},
    {"hex(cmsgpack.pack((function() local t = {} for i = 1, 70000 do t['k' .. i] = 0 end return t end)())):sub(1, 10)",
     "df00011170"},
    {"(function() local a = {x = nil, y = 5} local b = {x = a} a['x'] = b local e = cmsgpack.pack(a) local r = "
     "cmsgpack.unpack(e) return all(#e, r.x.x.x.x.x.x.x.x.x.x.x.x.x.x.y, r.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x == nil) "
     "end)()",
     "73 5 true"},
    {"(function() local t = {} local cur = t for i = 1, 20 do cur[1] = {} cur = cur[1] end return "
     "hex(cmsgpack.pack(t)) end)()",
     "91919191919191919191919191919191c0"},
    {"hex(cmsgpack.pack(1, 'a', {2}))", "01a1619102"},
    {"err(cmsgpack.pack)", "bad argument #0 to '?' (MessagePack pack needs input.)"},
    {"all(cmsgpack.unpack(cmsgpack.pack(1, -1, 0.25, 'str', true, false)))", "1 -1 0.25 \"str\" true false"},
    {"all(cmsgpack.unpack(cmsgpack.pack({1, 2, {a = 'b'}}, {x = {y = {}}})))",
     "{1=1,2=2,3={\"a\"=\"b\"}} {\"x\"={\"y\"={}}}"},
    {"all(cmsgpack.unpack(''))", ""},
    {"all(cmsgpack.unpack('\\192\\192\\1'))", "nil nil 1"},
    {"all(cmsgpack.unpack('"
     "\\204\\255\\205\\255\\255\\206\\255\\255\\255\\255\\207\\255\\255\\255\\255\\255\\255\\255\\255\\207\\127\\255\\2"
     "55\\255\\255\\255\\255\\255'))",
     "255 65535 4294967295 -1 9.2233720368548e+18"},
    {"all(cmsgpack.unpack('"
     "\\208\\128\\209\\128\\0\\210\\128\\0\\0\\0\\211\\128\\0\\0\\0\\0\\0\\0\\0\\211\\255\\255\\255\\255\\255\\255\\255"
     "\\255'))",
     "-128 -32768 -2147483648 -9.2233720368548e+18 -1"},
    {"all(cmsgpack.unpack('\\209\\255\\52\\209\\0\\128\\209\\128\\255\\210\\255\\255\\255\\254'))",
     "-204 128 -32513 -2"},
    {"all(cmsgpack.unpack('\\202\\63\\192\\0\\0\\203\\64\\9\\33\\251\\84\\68\\45\\24\\202\\127\\128\\0\\0'))",
     "1.5 3.1415926535898 inf"},
    {"all(cmsgpack.unpack('\\127\\224\\255\\240'))", "127 -32 -1 -16"},
    {"all(cmsgpack.unpack('\\217\\3abc\\218\\0\\2xy\\219\\0\\0\\0\\1z\\160'))", "\"abc\" \"xy\" \"z\" \"\""},
    {"all(cmsgpack.unpack('\\220\\0\\2\\1\\2\\221\\0\\0\\0\\1\\3\\222\\0\\1\\1\\2\\223\\0\\0\\0\\1\\161a\\161b'))",
     "{1=1,2=2} {1=3} {1=2} {\"a\"=\"b\"}"},
    {"all(cmsgpack.unpack('\\146\\192\\1'))", "{2=1}"},
    {"all(cmsgpack.unpack('\\129\\1\\192'))", "{}"},
    {"err(cmsgpack.unpack, '\\193')", "Bad data format in input."},
    {"err(cmsgpack.unpack, '\\196\\1a')", "Bad data format in input."},
    {"err(cmsgpack.unpack, '\\199\\1\\1a')", "Bad data format in input."},
    {"err(cmsgpack.unpack, '\\212\\1\\1')", "Bad data format in input."},
    {"err(cmsgpack.unpack, '\\216\\1' .. string.rep('a', 16))", "Bad data format in input."},
    {"err(cmsgpack.unpack, '\\204')", "Missing bytes in input."},
    {"err(cmsgpack.unpack, '\\207\\1\\2\\3')", "Missing bytes in input."},
    {"err(cmsgpack.unpack, '\\217\\5abc')", "Missing bytes in input."},
    {"err(cmsgpack.unpack, '\\219\\0\\0\\0\\5abc')", "Missing bytes in input."},
    {"err(cmsgpack.unpack, '\\162a')", "Missing bytes in input."},
    {"err(cmsgpack.unpack, '\\147\\1\\2')", "Missing bytes in input."},
    {"err(cmsgpack.unpack, '\\221\\255\\255\\255\\255\\1')", "Missing bytes in input."},
    {"err(cmsgpack.unpack, '\\223\\255\\255\\255\\255\\1\\2')", "Missing bytes in input."},
    {"err(cmsgpack.unpack, '\\129\\192\\1')", "table index is nil"},
    {"err(cmsgpack.unpack, '\\129\\203\\255\\248\\0\\0\\0\\0\\0\\0\\1')", "table index is NaN"},
    {"err(cmsgpack.unpack, '\\1\\193')", "Bad data format in input."},
    {"err(cmsgpack.unpack, '\\145\\193')", "Bad data format in input."},
    {"err(cmsgpack.unpack, {})", "bad argument #1 to '?' (string expected, got table)"},
    {"err(cmsgpack.unpack)", "bad argument #1 to '?' (string expected, got no value)"},
    {"all(cmsgpack.unpack(123))", "49 50 51"},
    {"all(cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3)))", "1 1"},
    {"all(cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 1))", "2 2"},
    {"all(cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2))", "-1 3"},
    {"all(cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 3))", "-1"},
    {"all(cmsgpack.unpack_one(''))", "-1"},
    {"all(cmsgpack.unpack_one('\\1', 0))", "-1 1"},
    {"err(cmsgpack.unpack_one, '\\1\\2', -1)", "Invalid request to unpack with offset of -1 and limit of 2."},
    {"err(cmsgpack.unpack_one, '\\1\\2', 3)", "Start offset 3 greater than input length 2."},
    {"err(cmsgpack.unpack_one, '\\1\\2', 'x')", "bad argument #2 to '?' (number expected, got string)"},
    {"err(cmsgpack.unpack_one)", "bad argument #1 to '?' (string expected, got no value)"},
    {"err(cmsgpack.unpack_one, nil, 1)", "bad argument #1 to '?' (string expected, got nil)"},
    {"all(cmsgpack.unpack_one('\\1\\2', 0, 'ignored'))", "1 1"},
    {"all(cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 2))", "2 1 2"},
    {"all(cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 2, 2))", "-1 3 4"},
    {"all(cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 10))", "-1 1 2 3 4"},
    {"all(cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 0))", "1 2 3 4"},
    {"all(cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 0, 1))", "1"},
    {"all(cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 1, 4))", "-1"},
    {"err(cmsgpack.unpack_limit, '\\1', -1)", "Invalid request to unpack with offset of 0 and limit of 1."},
    {"err(cmsgpack.unpack_limit, '\\1\\2\\3', 1, -2)", "Invalid request to unpack with offset of -2 and limit of 3."},
    {"err(cmsgpack.unpack_limit, '\\1')", "bad argument #2 to '?' (number expected, got no value)"},
    {"err(cmsgpack.unpack_limit, '\\1', 1, 5)", "Start offset 5 greater than input length 1."},
    {"err(cmsgpack.unpack_limit, '\\1', 1, 2^32 + 3)", "Start offset 3 greater than input length 1."},
    {"err(cmsgpack.unpack_limit, '\\1\\1', 2^32 + 1)", "ok -1 1 1"},
    {"all(cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION)",
     "\"cmsgpack\" \"lua-cmsgpack 0.4.0\" \"Copyright (C) 2012, Salvatore Sanfilippo\" \"MessagePack C implementation "
     "for Lua\""},
    {"all(cmsgpack.unpack(cmsgpack.pack(2^53 + 2, -2^53 - 2, 0.1, -0.0, 1e308)))",
     "9.007199254741e+15 -9.007199254741e+15 0.1 0 1e+308"},
    {"(function() local s = string.rep('\\145', 5000) .. '\\1' return err(cmsgpack.unpack, s) end)()",
     "stack overflow (in function mp_decode_to_lua_array)"},
    {"(function() local s = string.rep('\\129\\1', 5000) .. '\\1' return err(cmsgpack.unpack, s) end)()",
     "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"},
    {"(function() local s = string.rep('\\1', 9000) return err(function() return select('#', cmsgpack.unpack(s)) end) "
     "end)()",
     "user_script:20: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"},
    {"(function() local t = {} for i = 1, 3000 do t[i] = i end return all(select('#', "
     "cmsgpack.unpack(cmsgpack.pack(unpack(t))))) end)()",
     "3000"},
    {"all(err(cmsgpack.pack, unpack((function() local t = {} for i = 1, 4500 do t[i] = i end return t end)())))",
     "\"bad argument #0 to '?' (Too many arguments for MessagePack pack.)\""},
    {"all(cmsgpack.unpack(cmsgpack.pack({[1] = 1, [2] = 2, [3] = 3, n = 3})))", "{1=1,2=2,3=3,\"n\"=3}"},
};

static const lua_case struct_cases[] = {
    {"hex(struct.pack('b', -1) .. struct.pack('B', 255) .. struct.pack('h', -2) .. struct.pack('H', 65535))",
     "fffffeffffff"},
    {"hex(struct.pack('>h', 258) .. struct.pack('<h', 258) .. struct.pack('>i', 1) .. struct.pack('<I', 1))",
     "010202010000000101000000"},
    {"hex(struct.pack('l', -1) .. struct.pack('L', 2^53) .. struct.pack('T', 7))",
     "ffffffffffffffff00000000000020000700000000000000"},
    {"hex(struct.pack('>i3', 0x010203) .. struct.pack('<i3', 0x010203) .. struct.pack('>I1', 300) .. struct.pack('i0', "
     "5))",
     "0102030302012c"},
    {"hex(struct.pack('>i16', -2) .. struct.pack('<I12', 1))",
     "0000000000000000fffffffffffffffe010000000000000000000000"},
    {"hex(struct.pack('<L', 0/0) .. struct.pack('<L', 2^64) .. struct.pack('<L', 2^63 + 4096) .. struct.pack('<l', "
     "-2^70) .. struct.pack('<L', 1e300) .. struct.pack('<l', 2.9) .. struct.pack('<l', -2.9))",
     "000000000000008000000000000000000010000000000080000000000000008000000000000000000200000000000000fefffffffffffff"
     "f"},
    {"hex(struct.pack('f', 1.5) .. struct.pack('>f', 1.5) .. struct.pack('d', -2.25) .. struct.pack('>d', -2.25))",
     "0000c03f3fc0000000000000000002c0c002000000000000"},
    {"hex(struct.pack('>f', 1e300) .. struct.pack('>f', 0/0 * 0))", "7f800000ffc00000"},
    {"hex(struct.pack('c3', 'abcdef') .. struct.pack('c0', 'xyz') .. struct.pack('c', 'pq') .. struct.pack('s', 'hi') "
     ".. struct.pack('s', ''))",
     "61626378797a7068690000"},
    {"hex(struct.pack('x') .. struct.pack('bxb', 1, 2) .. struct.pack(' b b ', 3, 4))", "000100020304"},
    {"hex(struct.pack('!4bi', 1, 2) .. struct.pack('!bi', 1, 2) .. struct.pack('!2bhbi', 1, 2, 3, 4))",
     "0100000002000000010000000200000001000200030004000000"},
    {"hex(struct.pack('!8bd', 1, 1) .. struct.pack('!bI3', 1, 2) .. struct.pack('!4bI3', 1, 2) .. struct.pack('!4bc3', "
     "1, 'abc') .. struct.pack('!4bs', 1, 'a'))",
     "0100000000000000000000000000f03f01000002000001000002000001616263016100"},
    {"hex(struct.pack('>!4 bibhd', 1, 2, 3, 4, 5))", "0100000000000002030000044014000000000000"},
    {"err(struct.pack, 'i99', 1)", "integral size 99 is larger than limit of 32"},
    {"err(struct.pack, 'i33', 1)", "integral size 33 is larger than limit of 32"},
    {"hex(struct.pack('i32', 1))", "0100000000000000000000000000000000000000000000000000000000000000"},
    {"err(struct.pack, 'c99999999999', 'a')", "integral size overflow"},
    {"err(struct.pack, '!99999999999')", "integral size overflow"},
    {"err(struct.pack, '!3')", "alignment 3 is not a power of 2"},
    {"err(struct.pack, '!0')", "alignment 0 is not a power of 2"},
    {"err(struct.pack, 'y', 1)", "bad argument #1 to '?' (invalid format option 'y')"},
    {"err(struct.pack, 'b?')", "bad argument #2 to '?' (number expected, got nil)"},
    {"err(struct.pack, 's5', 'abc')", "bad argument #1 to '?' (invalid format option '5')"},
    {"err(struct.pack, 'b\\200')", "bad argument #2 to '?' (number expected, got nil)"},
    {"err(struct.pack, 'bb', 1)", "bad argument #3 to '?' (number expected, got nil)"},
    {"err(struct.pack, 'bbb', 1)", "bad argument #3 to '?' (number expected, got nil)"},
    {"err(struct.pack, 'b', 'x')", "bad argument #2 to '?' (number expected, got string)"},
    {"err(struct.pack, 'b', '12')", "ok \"\\12\""},
    {"err(struct.pack, 'c3', 'ab')", "bad argument #3 to '?' (string too short)"},
    {"err(struct.pack, 'bc3', 1, 'ab')", "bad argument #4 to '?' (string too short)"},
    {"err(struct.pack, 'c', 5)", "ok \"5\""},
    {"err(struct.pack, 'd', {})", "bad argument #2 to '?' (number expected, got table)"},
    {"err(struct.pack)", "bad argument #1 to '?' (string expected, got no value)"},
    {"err(struct.pack, {})", "bad argument #1 to '?' (string expected, got table)"},
    {"hex(struct.pack(''))", ""},
    {"hex(struct.pack('b\\0b', 1, 2))", "01"},
    {"all(struct.unpack('b', '\\255'))", "-1 2"},
    {"all(struct.unpack('bBhHiIlL', "
     "'\\255\\255\\254\\255\\254\\255\\1\\0\\0\\0\\2\\0\\0\\0\\3\\0\\0\\0\\0\\0\\0\\0\\4\\0\\0\\0\\0\\0\\0\\0'))",
     "-1 255 -2 65534 1 2 3 4 31"},
    {"all(struct.unpack('>hH<hH', '\\255\\254\\255\\254\\255\\254\\255\\254'))", "-2 65534 -257 65279 9"},
    {"all(struct.unpack('>i3<i3>I3', '\\255\\255\\254\\254\\255\\255\\1\\2\\3'))", "-2 -2 66051 10"},
    {"all(struct.unpack('<i9', string.rep('\\255', 9)), struct.unpack('<i9', '\\128' .. string.rep('\\0', 8)), "
     "struct.unpack('<i16', string.rep('\\1', 16)), struct.unpack('>I10', '\\1\\2\\3\\4\\5\\6\\7\\8\\9\\10'), "
     "struct.unpack('<i10', '\\1\\0\\0\\0\\0\\0\\0\\0\\0\\255'))",
     "-1 -128 7.2340172838077e+16 2.1730420546654e+17 1 11"},
    {"all(struct.unpack('<i0', 'abc'), struct.unpack('<I0', ''))", "0 0 1"},
    {"all(struct.unpack('<L', '\\255\\255\\255\\255\\255\\255\\255\\255'), struct.unpack('<l', "
     "'\\255\\255\\255\\255\\255\\255\\255\\127'), struct.unpack('T', '\\1\\0\\0\\0\\0\\0\\0\\0'))",
     "1.844674407371e+19 9.2233720368548e+18 1 9"},
    {"all(struct.unpack('f', struct.pack('f', 0.1)), struct.unpack('>d', struct.pack('>d', 0.1)), struct.unpack('<f', "
     "'\\0\\0\\192\\127'))",
     "0.10000000149012 0.1 nan 5"},
    {"err(struct.unpack, 'c3c0c', 'abcdefg')", "format 'c0' needs a previous size"},
    {"all(struct.unpack('bc0', '\\3abcdef'))", "\"abc\" 5"},
    {"all(struct.unpack('c1c0', '5hello'))", "\"hello\" 7"},
    {"all(struct.unpack('bc0b', '\\0\\9'))", "\"\" 9 3"},
    {"err(struct.unpack, 'bc0', '\\255abc')", "bad argument #2 to '?' (data string too short)"},
    {"err(struct.unpack, 'c0', 'abcdef', 1)", "format 'c0' needs a previous size"},
    {"err(struct.unpack, 'sc0', 'ab\\0cd')", "format 'c0' needs a previous size"},
    {"err(struct.unpack, 'bc0', '\\9abc')", "bad argument #2 to '?' (data string too short)"},
    {"all(struct.unpack('ss', 'ab\\0\\0xyz'))", "\"ab\" \"\" 5"},
    {"err(struct.unpack, 's', 'hi')", "unfinished string in data"},
    {"all(struct.unpack('xb', '\\1\\2'))", "2 3"},
    {"all(struct.unpack('b', 'abc', 2))", "98 3"},
    {"all(struct.unpack('bb', 'abc', 2))", "98 99 4"},
    {"err(struct.unpack, 'bb', 'abc', 3)", "bad argument #2 to '?' (data string too short)"},
    {"err(struct.unpack, 'b', 'abc', 0)", "bad argument #3 to '?' (offset must be 1 or greater)"},
    {"err(struct.unpack, 'b', 'abc', -1)", "bad argument #2 to '?' (data string too short)"},
    {"all(struct.unpack('', 'abc', -5))", "-5"},
    {"all(struct.unpack('', 'abc', 10))", "10"},
    {"err(struct.unpack, 'b', 'abc', 10)", "bad argument #2 to '?' (data string too short)"},
    {"all(struct.unpack('', ''))", "1"},
    {"err(struct.unpack, '>I4', 'ab')", "bad argument #2 to '?' (data string too short)"},
    {"err(struct.unpack, 'i', '')", "bad argument #2 to '?' (data string too short)"},
    {"all(struct.unpack('!4bi', '\\1\\0\\0\\0\\2\\0\\0\\0'))", "1 2 9"},
    {"all(struct.unpack('!4bi', '\\1\\0\\0\\0\\2\\0\\0\\0', 1))", "1 2 9"},
    {"all(struct.unpack('!bh', '\\1\\0\\2\\0'))", "1 2 5"},
    {"err(struct.unpack, 'q', 'abc')", "bad argument #1 to '?' (invalid format option 'q')"},
    {"err(struct.unpack, 'b')", "bad argument #2 to '?' (string expected, got no value)"},
    {"err(struct.unpack, 'b', 'a', 'x')", "bad argument #3 to '?' (number expected, got string)"},
    {"all(struct.unpack('b', 'a', '1'))", "97 2"},
    {"all(struct.unpack('b', 'ab', 1.9))", "97 2"},
    {"err(struct.unpack, string.rep('b', 9000), string.rep('a', 9000))", "stack overflow (too many results)"},
    {"all(struct.size('bBhHlLTiIfdx'), struct.size('i3'), struct.size('!4bi'), struct.size('!bi'), "
     "struct.size('!4bd'), struct.size('c10'), struct.size(''), struct.size('>< '))",
     "51 3 8 8 12 10 0 0"},
    {"all(struct.size('z'), struct.size('q5'), struct.size('b5'), struct.size('i7i'))", "0 0 1 11"},
    {"err(struct.size, 's')", "bad argument #1 to '?' (option 's' has no fixed size)"},
    {"err(struct.size, 'c0')", "bad argument #1 to '?' (option 'c0' has no fixed size)"},
    {"err(struct.size, 'b?')", "bad argument #1 to '?' (invalid format option '?')"},
    {"err(struct.size, '!3')", "alignment 3 is not a power of 2"},
    {"err(struct.size, 'i40')", "integral size 40 is larger than limit of 32"},
    {"err(struct.size)", "bad argument #1 to '?' (string expected, got no value)"},
    {"all(struct.size('!8bd'), struct.size('!2bd'), struct.size('!16bd'))", "16 10 16"},
    {"all(struct.unpack('>!4 bibhd', struct.pack('>!4 bibhd', 1, 2, 3, 4, 5)))", "1 2 3 4 5 21"},
    {"all(type(struct.pack), type(struct.unpack), type(struct.size))", "\"function\" \"function\" \"function\""},
};

static void run_cases(const lua_case *cases, size_t n) {
    for (size_t i = 0; i < n; i++) check_case(&cases[i]);
}

static void test_cjson_as_redis(void) { run_cases(cjson_cases, sizeof(cjson_cases) / sizeof(cjson_cases[0])); }

static void test_cmsgpack_as_redis(void) {
    run_cases(cmsgpack_cases, sizeof(cmsgpack_cases) / sizeof(cmsgpack_cases[0]));
}

static void test_struct_as_redis(void) { run_cases(struct_cases, sizeof(struct_cases) / sizeof(struct_cases[0])); }

/* decode_array_with_array_mt (Redis 8): off by default; on, a decoded empty
 * array carries cjson.array_mt and encodes back as [] instead of {}. Any
 * empty table whose metatable has a true __is_cjson_array field (read raw)
 * encodes as [], whatever the setting; non-empty tables are classified as
 * always. The setting belongs to one module table. */
static void test_cjson_array_mt(void) {
    lua_State *L = new_state();
    CHECK_LUA(L, "all(cjson.decode_array_with_array_mt())", "false");
    CHECK_LUA(L, "cjson.encode(cjson.decode('[]'))", "{}");
    CHECK_LUA(L, "getmetatable(cjson.decode('[]'))", "nil");
    CHECK_LUA(L, "all(cjson.decode_array_with_array_mt(true))", "true");
    CHECK_LUA(L, "cjson.encode(cjson.decode('[]'))", "[]");
    CHECK_LUA(L, "cjson.encode(cjson.decode('{\"a\" : [ [ ], { }, [1], [[]] ]}'))", "{\"a\":[[],{},[1],[[]]]}");
    CHECK_LUA(L, "getmetatable(cjson.decode('[]')) == cjson.array_mt", "true");
    CHECK_LUA(L, "getmetatable(cjson.decode('[1]'))", "nil");
    CHECK_LUA(L, "getmetatable(cjson.decode('{}'))", "nil");
    CHECK_LUA(L, "all(cjson.decode_array_with_array_mt('off'))", "false");
    CHECK_LUA(L, "cjson.encode(cjson.decode('[[]]'))", "[{}]");
    CHECK_LUA(L, "all(cjson.decode_array_with_array_mt('on'))", "true");
    CHECK_LUA(L, "cjson.new().encode(cjson.new().decode('[]'))", "{}");
    CHECK_LUA(L, "cjson.encode(setmetatable({}, cjson.array_mt))", "[]");
    CHECK_LUA(L, "cjson.encode({setmetatable({}, {__is_cjson_array = 1})})", "[[]]");
    CHECK_LUA(L, "cjson.encode(setmetatable({}, {__is_cjson_array = false}))", "{}");
    CHECK_LUA(L, "cjson.encode(setmetatable({}, {__index = {__is_cjson_array = true}}))", "{}");
    CHECK_LUA(L, "cjson.encode(setmetatable({a = 1}, cjson.array_mt))", "{\"a\":1}");
    CHECK_LUA(L, "cjson.encode(setmetatable({1, 2}, cjson.array_mt))", "[1,2]");
    CHECK_LUA(L, "all(cjson.array_mt)", "{\"__is_cjson_array\"=true}");
    CHECK_LUA(L, "cjson.new().array_mt == cjson.array_mt", "true");
    CHECK_LUA(L, "err(cjson.decode_array_with_array_mt, 'yes')", "bad argument #1 to '?' (invalid option 'yes')");
    CHECK_LUA(L, "err(cjson.decode_array_with_array_mt, true, 1)", "bad argument #2 to '?' (found too many arguments)");
    lua_close(L);
}

/* Nesting past the Lua stack, with the depth limits raised out of the
 * way: an error, never a crash. Redis reports 7999, 4000 and 7998 here;
 * the encoder keeps its scratch buffer in one more stack slot than Redis
 * does, so it stops one level earlier. */
static void test_stack_limits(void) {
    lua_State *L = new_state();
    CHECK_LUA(L, "all(cjson.decode_max_depth(100000), cjson.encode_max_depth(100000))", "100000 100000");
    CHECK_LUA(L, "err(cjson.decode, string.rep('[', 20000))",
              "Found too many nested data structures (7999) at character 7999");
    CHECK_LUA(L, "err(cjson.decode, string.rep('{\"a\":', 20000))",
              "Found too many nested data structures (4000) at character 19996");
    CHECK_LUA(L, "err(function() local t = {} t[1] = t local s = cjson.encode(t) return s end)",
              "user_script:20: Cannot serialise, excessive nesting (7997)");
    CHECK_LUA(L, "err(function() local t = {} for i = 1, 10000 do t = {t} end local s = cjson.encode(t) return s end)",
              "user_script:20: Cannot serialise, excessive nesting (7997)");
    lua_close(L);
}

/* Generated values through each codec and back: MessagePack keeps every
 * value it can represent (no NaN, no holes), JSON every value whose numbers
 * print exactly in 14 digits and whose objects have string keys; struct
 * returns what it packed, in either byte order. Deterministic seed. */
static void test_round_trips(void) {
    static const char code[] =
        "(function()\n"
        "local seed = 12345\n"
        "local function rnd(n) seed = seed * 16807 % 2147483647 return seed % n end\n"
        "local function rstr() local t = {} for i = 1, rnd(40) do t[i] = string.char(rnd(256)) end return "
        "table.concat(t) end\n"
        "local function rnum(json)\n"
        "  local k = rnd(4)\n"
        "  if k == 0 then return rnd(2000) - 1000 end\n"
        "  if k == 1 then return (rnd(2 ^ 30) - 2 ^ 29) * (json and 1 or 4096) end\n"
        "  if k == 2 then return (rnd(100000) - 50000) / 8 end\n"
        "  return json and rnd(1000) / 4 or (rnd(2 ^ 30) + 0.5) / 3\n"
        "end\n"
        "local function gen(depth, json)\n"
        "  local k = rnd(depth < 4 and 7 or 4)\n"
        "  if k == 0 then return rnum(json) end\n"
        "  if k == 1 then return rstr() end\n"
        "  if k == 2 then return rnd(2) == 1 end\n"
        "  if k == 3 then return json and cjson.null or rnum(json) end\n"
        "  local t = {}\n"
        "  if k == 4 then for i = 1, rnd(6) do t[i] = gen(depth + 1, json) end\n"
        "  else for i = 1, rnd(6) do t[json and rstr() or (rnd(2) == 1 and rstr() or rnd(50) - 10)] = gen(depth + 1, "
        "json) end end\n"
        "  return t\n"
        "end\n"
        "local function same(a, b)\n"
        "  if type(a) ~= type(b) then return false end\n"
        "  if type(a) ~= 'table' then return a == b end\n"
        "  for k, v in pairs(a) do if not same(v, b[k]) then return false end end\n"
        "  for k in pairs(b) do if a[k] == nil then return false end end\n"
        "  return true\n"
        "end\n"
        "for i = 1, 400 do\n"
        "  local v = gen(0, false)\n"
        "  if not same(v, cmsgpack.unpack(cmsgpack.pack(v))) then return 'msgpack ' .. i end\n"
        "  local n, rest = select('#', cmsgpack.unpack(cmsgpack.pack(v, 'x', v))), nil\n"
        "  if n ~= 3 then return 'msgpack stream ' .. i end\n"
        "  local j = gen(0, true)\n"
        "  if not same(j, cjson.decode(cjson.encode(j))) then return 'json ' .. i .. ' ' .. cjson.encode(j) end\n"
        "end\n"
        "local formats = {'b', 'B', 'h', 'H', 'i', 'I', 'l', 'i3', 'I5', 'i7', 'f', 'd'}\n"
        "for i = 1, 2000 do\n"
        "  local f = formats[rnd(#formats) + 1]\n"
        "  local order = rnd(2) == 1 and '<' or '>'\n"
        "  local size = struct.size(f)\n"
        "  local v\n"
        "  if f == 'f' then v = (rnd(2000) - 1000) / 16\n"
        "  elseif f == 'd' then v = rnum(false)\n"
        "  elseif f:match('%u') then v = rnd(2 ^ math.min(size * 8, 31))\n"
        "  else v = rnd(2 ^ math.min(size * 8, 31)) - 2 ^ (math.min(size * 8, 31) - 1) end\n"
        "  local packed = struct.pack(order .. f, v)\n"
        "  local back, nextpos = struct.unpack(order .. f, packed)\n"
        "  if #packed ~= size or back ~= v or nextpos ~= size + 1 then return 'struct ' .. order .. f .. ' ' .. v end\n"
        "end\n"
        "return 'ok'\n"
        "end)()";
    lua_State *L = new_state();
    CHECK_LUA(L, code, "ok");
    lua_close(L);
}

/* The openers push one table and leave the rest of the stack alone. The
 * encoders' scratch storage belongs to the collector, so neither success
 * nor an error half-way leaves memory behind. */
static void test_open_and_memory(void) {
    lua_State *L = luaL_newstate();
    lua_pushinteger(L, 42);
    CHECK_EQ_LL(hk_luaopen_cjson(L), 1);
    CHECK_EQ_LL(hk_luaopen_cmsgpack(L), 1);
    CHECK_EQ_LL(hk_luaopen_struct(L), 1);
    CHECK_EQ_LL(lua_gettop(L), 4);
    CHECK(lua_istable(L, 2) && lua_istable(L, 3) && lua_istable(L, 4));
    CHECK_EQ_LL(lua_tointeger(L, 1), 42);
    lua_close(L);

    L = new_state();
    CHECK_LUA(L,
              "(function()\n"
              "  local big = {string.rep('x', 20000), string.rep('\\1', 3000)}\n"
              "  local bad = {string.rep('x', 20000), tostring}\n"
              "  local esc = '[\"\\\\n' .. string.rep('x', 20000) .. '\", 1'\n"
              "  collectgarbage('collect')\n"
              "  local before = collectgarbage('count')\n"
              "  for i = 1, 500 do\n"
              "    cjson.encode(big); pcall(cjson.encode, bad); pcall(cjson.decode, esc)\n"
              "    cmsgpack.pack(big, big); pcall(cmsgpack.unpack, cmsgpack.pack(big):sub(1, -2))\n"
              "    pcall(struct.pack, 'c30000', big[1]); struct.pack('c0c0', big[1], big[2])\n"
              "  end\n"
              "  collectgarbage('collect')\n"
              "  return collectgarbage('count') - before < 64\n"
              "end)()",
              "true");
    lua_close(L);
}

int main(void) {
    TEST_RUN(test_cjson_as_redis);
    TEST_RUN(test_cmsgpack_as_redis);
    TEST_RUN(test_struct_as_redis);
    TEST_RUN(test_cjson_array_mt);
    TEST_RUN(test_stack_limits);
    TEST_RUN(test_round_trips);
    TEST_RUN(test_open_and_memory);
    return TEST_REPORT();
}
