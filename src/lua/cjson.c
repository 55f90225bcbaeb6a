/* cjson.c - the `cjson` library of Redis scripts: cjson.encode(value),
 * cjson.decode(text), the settings of Lua CJSON 2.1.0 as Redis 7 bundles it
 * (encode_sparse_array, encode_max_depth, decode_max_depth,
 * encode_number_precision, encode_keep_buffer, encode_invalid_numbers,
 * decode_invalid_numbers, new), cjson.null, and Redis's later
 * decode_array_with_array_mt with its cjson.array_mt marker. JSON null is
 * cjson.null, a NULL lightuserdata; a table is encoded as an array when its
 * keys are the integers 1..n within the sparse-array rules, otherwise as an
 * object; numbers print with "%.14g" (the precision setting); strings are
 * escaped as Redis does, '/' and DEL included. Results and error texts are
 * Redis's, byte for byte. Not a validator: invalid UTF-8 passes through and
 * number tokens are whatever strtod accepts, as in Redis. Every module table
 * (and each cjson.new()) carries its own settings in a userdata that its
 * functions hold as an upvalue: nothing is global, so one Lua state per
 * thread needs no lock. Object key order follows the Lua table traversal. */
#include "lualibs.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#define CJ_ARRAY_MARK "__is_cjson_array"

/* The address is the registry key of the array marker metatable, one per
 * Lua state, shared by every cjson table in it. */
static char cj_array_mt_key;

typedef struct {
    int sparse_convert; /* encode excessively sparse arrays as objects */
    int sparse_ratio;   /* 0: any sparseness is fine */
    int sparse_safe;    /* arrays up to this index are never too sparse */
    int encode_max_depth;
    int decode_max_depth;
    int encode_invalid; /* NaN/Inf: 0 refused, 1 printed, 2 printed as null */
    int decode_invalid; /* accept NaN, Inf, hex and leading '+' or zeros */
    int precision;      /* significant digits of numbers, 1..14 */
    int keep_buffer;    /* reported only: the scratch buffer is never kept */
    int array_mt;       /* decoded empty arrays get cjson.array_mt */
} cj_cfg;

static cj_cfg *cj_config(lua_State *L) { return lua_touserdata(L, lua_upvalueindex(1)); }

/* ---- Settings ---- */

/* At most n arguments, padded with nils to n. */
static cj_cfg *cj_args(lua_State *L, int n) {
    luaL_argcheck(L, lua_gettop(L) <= n, n + 1, "found too many arguments");
    lua_settop(L, n);
    return cj_config(L);
}

/* Set *setting from argument idx unless it is nil, and push the value in
 * force. A value out of range is reported as argument 1 whatever idx is,
 * as Redis does. */
static void cj_int_option(lua_State *L, int idx, int *setting, int min, int max) {
    if (!lua_isnil(L, idx)) {
        int v = (int)luaL_checkinteger(L, idx);
        char msg[64];
        snprintf(msg, sizeof(msg), "expected integer between %d and %d", min, max);
        luaL_argcheck(L, min <= v && v <= max, 1, msg);
        *setting = v;
    }
    lua_pushinteger(L, *setting);
}

/* Like cj_int_option for a choice among options (NULL: "off", "on"); a
 * boolean means option 0 or 1. Pushes a boolean for those two and the
 * option's name for the others. */
static void cj_enum_option(lua_State *L, int idx, int *setting, const char *const *options) {
    static const char *const off_on[] = {"off", "on", NULL};
    if (!options) options = off_on;
    if (!lua_isnil(L, idx)) {
        if (lua_isboolean(L, idx))
            *setting = lua_toboolean(L, idx);
        else
            *setting = luaL_checkoption(L, idx, NULL, options);
    }
    if (*setting <= 1)
        lua_pushboolean(L, *setting);
    else
        lua_pushstring(L, options[*setting]);
}

static int cj_encode_sparse_array(lua_State *L) {
    cj_cfg *cfg = cj_args(L, 3);
    cj_enum_option(L, 1, &cfg->sparse_convert, NULL);
    cj_int_option(L, 2, &cfg->sparse_ratio, 0, INT_MAX);
    cj_int_option(L, 3, &cfg->sparse_safe, 0, INT_MAX);
    return 3;
}

static int cj_encode_max_depth(lua_State *L) {
    cj_cfg *cfg = cj_args(L, 1);
    cj_int_option(L, 1, &cfg->encode_max_depth, 1, INT_MAX);
    return 1;
}

static int cj_decode_max_depth(lua_State *L) {
    cj_cfg *cfg = cj_args(L, 1);
    cj_int_option(L, 1, &cfg->decode_max_depth, 1, INT_MAX);
    return 1;
}

static int cj_encode_number_precision(lua_State *L) {
    cj_cfg *cfg = cj_args(L, 1);
    cj_int_option(L, 1, &cfg->precision, 1, 14);
    return 1;
}

static int cj_encode_keep_buffer(lua_State *L) {
    cj_cfg *cfg = cj_args(L, 1);
    cj_enum_option(L, 1, &cfg->keep_buffer, NULL);
    return 1;
}

static int cj_encode_invalid_numbers(lua_State *L) {
    static const char *const options[] = {"off", "on", "null", NULL};
    cj_cfg *cfg = cj_args(L, 1);
    cj_enum_option(L, 1, &cfg->encode_invalid, options);
    return 1;
}

static int cj_decode_invalid_numbers(lua_State *L) {
    cj_cfg *cfg = cj_args(L, 1);
    cj_enum_option(L, 1, &cfg->decode_invalid, NULL);
    return 1;
}

static int cj_decode_array_with_array_mt(lua_State *L) {
    cj_cfg *cfg = cj_args(L, 1);
    cj_enum_option(L, 1, &cfg->array_mt, NULL);
    return 1;
}

/* ---- Encoding ---- */

typedef struct {
    lua_State *L;
    const cj_cfg *cfg;
    hk_lbuf buf;
} cj_enc;

/* Never returns. The value that cannot be encoded is at stack index idx. */
static void cj_encode_error(cj_enc *e, int idx, const char *reason) {
    luaL_error(e->L, "Cannot serialise %s: %s", luaL_typename(e->L, idx), reason);
}

/* Append s as a JSON string. Input is escaped a block at a time, so that
 * the worst case (every byte a \u00XX) is reserved for a block, not for
 * the whole string. */
static void cj_put_string(hk_lbuf *b, const char *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    /* The letter of the short escapes among the control characters. */
    static const char short_escape[32] = {['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r'};
    hk_lbuf_addc(b, '"');
    while (len > 0) {
        size_t n = len < 4096 ? len : 4096;
        char *out = hk_lbuf_reserve(b, n * 6), *o = out;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '"' || c == '\\' || c == '/') {
                *o++ = '\\';
                *o++ = (char)c;
            } else if (c < 0x20 && short_escape[c]) {
                *o++ = '\\';
                *o++ = short_escape[c];
            } else if (c < 0x20 || c == 0x7f) {
                memcpy(o, "\\u00", 4);
                o[4] = hex[c >> 4];
                o[5] = hex[c & 0xf];
                o += 6;
            } else {
                *o++ = (char)c;
            }
        }
        b->len += (size_t)(o - out);
        s += n;
        len -= n;
    }
    hk_lbuf_addc(b, '"');
}

/* The number at stack index idx (a value or a key). */
static void cj_put_number(cj_enc *e, int idx) {
    double d = lua_tonumber(e->L, idx);
    if (isinf(d) || isnan(d)) {
        if (e->cfg->encode_invalid == 0) cj_encode_error(e, idx, "must not be NaN or Inf");
        if (e->cfg->encode_invalid == 2) {
            hk_lbuf_add(&e->buf, "null", 4);
            return;
        }
        if (isnan(d)) { /* printf might say "-nan" */
            hk_lbuf_add(&e->buf, "nan", 3);
            return;
        }
    }
    /* %.14g of the longest double, "-1.7976931348623e+308", is 21 bytes. */
    char *out = hk_lbuf_reserve(&e->buf, 32);
    e->buf.len += (size_t)snprintf(out, 32, "%.*g", e->cfg->precision, d);
}

/* A double key as the int Redis's build stores it in: the x86-64
 * conversion gives INT_MIN for what does not fit. */
static int cj_trunc_int(double d) { return d < 2147483648.0 ? (int)d : INT_MIN; }

/* Classify the table on top: -1 for an object, else the array length (0
 * for an empty table). Keys must all be integers >= 1; an array whose
 * largest index exceeds both ratio * count and the safe bound is too
 * sparse: an object when sparse_convert is on, an error otherwise. */
static int cj_array_length(cj_enc *e) {
    lua_State *L = e->L;
    int max = 0, items = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_Number k = lua_type(L, -2) == LUA_TNUMBER ? lua_tonumber(L, -2) : 0;
        if (!(k >= 1 && floor(k) == k)) {
            lua_pop(L, 2);
            return -1;
        }
        if (k > max) max = cj_trunc_int(k);
        items++;
        lua_pop(L, 1);
    }
    /* The product wraps as the int arithmetic of Redis's build does. */
    int scaled = (int)((unsigned)items * (unsigned)e->cfg->sparse_ratio);
    if (e->cfg->sparse_ratio > 0 && max > scaled && max > e->cfg->sparse_safe) {
        if (!e->cfg->sparse_convert) cj_encode_error(e, -1, "excessively sparse array");
        return -1;
    }
    return max;
}

/* Whether the table on top carries the array marker in its metatable. */
static int cj_marked_array(lua_State *L) {
    if (!lua_getmetatable(L, -1)) return 0;
    lua_pushliteral(L, CJ_ARRAY_MARK);
    lua_rawget(L, -2);
    int marked = lua_toboolean(L, -1);
    lua_pop(L, 2);
    return marked;
}

static void cj_encode_value(cj_enc *e, int depth);

/* The table on top, `depth` tables deep (1 for the outermost). */
static void cj_encode_table(cj_enc *e, int depth) {
    lua_State *L = e->L;
    /* Three slots: key, value, and one for an error message. */
    if (depth > e->cfg->encode_max_depth || !lua_checkstack(L, 3))
        luaL_error(L, "Cannot serialise, excessive nesting (%d)", depth);
    int len = cj_array_length(e);
    if (len > 0 || (len == 0 && cj_marked_array(L))) {
        hk_lbuf_addc(&e->buf, '[');
        for (int i = 1; i <= len; i++) {
            if (i > 1) hk_lbuf_addc(&e->buf, ',');
            lua_rawgeti(L, -1, i);
            cj_encode_value(e, depth);
            lua_pop(L, 1);
        }
        hk_lbuf_addc(&e->buf, ']');
        return;
    }
    hk_lbuf_addc(&e->buf, '{');
    int first = 1;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (!first) hk_lbuf_addc(&e->buf, ',');
        first = 0;
        int key_type = lua_type(L, -2);
        if (key_type == LUA_TNUMBER) {
            hk_lbuf_addc(&e->buf, '"');
            cj_put_number(e, -2);
            hk_lbuf_add(&e->buf, "\":", 2);
        } else if (key_type == LUA_TSTRING) {
            size_t klen;
            const char *k = lua_tolstring(L, -2, &klen);
            cj_put_string(&e->buf, k, klen);
            hk_lbuf_addc(&e->buf, ':');
        } else {
            cj_encode_error(e, -2, "table key must be a number or string");
        }
        cj_encode_value(e, depth);
        lua_pop(L, 1);
    }
    hk_lbuf_addc(&e->buf, '}');
}

/* Append the value on top, inside `depth` tables; it stays on the stack. */
static void cj_encode_value(cj_enc *e, int depth) {
    lua_State *L = e->L;
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        cj_put_string(&e->buf, s, len);
        break;
    }
    case LUA_TNUMBER:
        cj_put_number(e, -1);
        break;
    case LUA_TBOOLEAN:
        if (lua_toboolean(L, -1))
            hk_lbuf_add(&e->buf, "true", 4);
        else
            hk_lbuf_add(&e->buf, "false", 5);
        break;
    case LUA_TTABLE:
        cj_encode_table(e, depth + 1);
        break;
    case LUA_TNIL:
        hk_lbuf_add(&e->buf, "null", 4);
        break;
    case LUA_TLIGHTUSERDATA: /* only cjson.null, the NULL one, is JSON */
        if (lua_touserdata(L, -1)) cj_encode_error(e, -1, "type not supported");
        hk_lbuf_add(&e->buf, "null", 4);
        break;
    default:
        cj_encode_error(e, -1, "type not supported");
    }
}

static int cj_encode(lua_State *L) {
    luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
    cj_enc e = {.L = L, .cfg = cj_config(L)};
    /* The storage goes under the value, which must be on top. */
    hk_lbuf_init(&e.buf, L, 256);
    lua_insert(L, 1);
    e.buf.slot = 1;
    cj_encode_value(&e, 0);
    lua_pushlstring(L, e.buf.p, e.buf.len);
    return 1;
}

/* ---- Decoding ---- */

typedef enum {
    CJ_OBJ_BEGIN,
    CJ_OBJ_END,
    CJ_ARR_BEGIN,
    CJ_ARR_END,
    CJ_STRING,
    CJ_NUMBER,
    CJ_BOOLEAN,
    CJ_NULL,
    CJ_COLON,
    CJ_COMMA,
    CJ_END,
    CJ_ERROR
} cj_tok_type;

/* The names parse errors print for what was found. */
static const char *const cj_tok_names[] = {"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END",
                                           "T_STRING",    "T_NUMBER",  "T_BOOLEAN",   "T_NULL",
                                           "T_COLON",     "T_COMMA",   "T_END",       "T_ERROR"};

typedef struct {
    cj_tok_type type;
    size_t index;    /* offset in the text, reported 1-based */
    const char *str; /* CJ_STRING: in the text, or in the scratch */
    size_t len;
    double num;
    int boolean;
    const char *err; /* CJ_ERROR: what was found instead of a token */
} cj_token;

typedef struct {
    lua_State *L;
    const cj_cfg *cfg;
    const char *text; /* NUL-terminated, as Lua strings are; a NUL ends it */
    const char *p;
    char *scratch; /* unescaped strings; present when the text has a '\' */
    int depth;
} cj_dec;

static void cj_token_error(const cj_dec *d, cj_token *t, const char *what) {
    t->type = CJ_ERROR;
    t->index = (size_t)(d->p - d->text);
    t->err = what;
}

static int cj_hex4(const char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = (unsigned char)p[i], digit;
        if (c >= '0' && c <= '9')
            digit = c - '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            digit = (c | 0x20) - 'a' + 10;
        else
            return -1; /* also stops at the terminating NUL */
        v = v << 4 | digit;
    }
    return v;
}

/* The \uXXXX escape at p, or the surrogate pair starting there, written as
 * UTF-8 at out. Returns the bytes written and sets *used to the text
 * consumed (6 or 12), or returns -1 when malformed. */
static int cj_unicode_escape(const char *p, char *out, int *used) {
    int cp = cj_hex4(p + 2);
    if (cp < 0) return -1;
    *used = 6;
    if ((cp & 0xf800) == 0xd800) {
        if (cp & 0x400) return -1; /* a low surrogate cannot come first */
        if (p[6] != '\\' || p[7] != 'u') return -1;
        int low = cj_hex4(p + 8);
        if (low < 0 || (low & 0xfc00) != 0xdc00) return -1;
        cp = 0x10000 + ((cp & 0x3ff) << 10 | (low & 0x3ff));
        *used = 12;
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The string token at d->p (on its opening quote). A string without
 * escapes is returned in place; one with escapes is unescaped into the
 * scratch, which the text's own length bounds. Errors point at the NUL or
 * at the backslash of the bad escape. */
static void cj_string_token(cj_dec *d, cj_token *t) {
    const char *start = d->p + 1, *p = start;
    while (*p != '"' && *p != '\\' && *p != '\0') p++;
    if (*p == '"') {
        t->type = CJ_STRING;
        t->str = start;
        t->len = (size_t)(p - start);
        d->p = p + 1;
        return;
    }
    char *o = d->scratch;
    if (*p == '\\') {
        memcpy(o, start, (size_t)(p - start));
        o += p - start;
    }
    while (*p != '"') {
        if (*p == '\0') {
            d->p = p;
            cj_token_error(d, t, "unexpected end of string");
            return;
        }
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        char c = p[1];
        switch (c) {
        case '"':
        case '\\':
        case '/':
            break;
        case 'b':
            c = '\b';
            break;
        case 'f':
            c = '\f';
            break;
        case 'n':
            c = '\n';
            break;
        case 'r':
            c = '\r';
            break;
        case 't':
            c = '\t';
            break;
        case 'u': {
            int used, n = cj_unicode_escape(p, o, &used);
            if (n < 0) {
                d->p = p;
                cj_token_error(d, t, "invalid unicode escape code");
                return;
            }
            o += n;
            p += used;
            continue;
        }
        default:
            d->p = p;
            cj_token_error(d, t, "invalid escape code");
            return;
        }
        *o++ = c;
        p += 2;
    }
    t->type = CJ_STRING;
    t->str = d->scratch;
    t->len = (size_t)(o - d->scratch);
    d->p = p + 1;
}

/* Whether the number at p is one strict JSON forbids but strtod takes: a
 * leading '+', a hex or zero-padded number, Inf or NaN. Other bad numbers
 * are left to strtod to refuse. */
static int cj_nonstandard_number(const char *p) {
    if (*p == '+') return 1;
    if (*p == '-') p++;
    if (*p == '0') return (p[1] | 0x20) == 'x' || (p[1] >= '0' && p[1] <= '9');
    if ((unsigned char)*p <= '9') return 0;
    return strncasecmp(p, "inf", 3) == 0 || strncasecmp(p, "nan", 3) == 0;
}

static void cj_number_token(cj_dec *d, cj_token *t) {
    char *end;
    double v = strtod(d->p, &end);
    if (end == d->p) {
        cj_token_error(d, t, "invalid number");
        return;
    }
    t->type = CJ_NUMBER;
    t->num = v;
    d->p = end;
}

static int cj_literal(cj_dec *d, const char *word, size_t len) {
    if (strncmp(d->p, word, len) != 0) return 0;
    d->p += len;
    return 1;
}

/* Read the next token into t. An error token stays at the offending
 * position; the end of the text does not advance. */
static void cj_next_token(cj_dec *d, cj_token *t) {
    static const char single[] = "{}[]:,";
    static const cj_tok_type single_type[] = {CJ_OBJ_BEGIN, CJ_OBJ_END, CJ_ARR_BEGIN, CJ_ARR_END, CJ_COLON, CJ_COMMA};
    while (*d->p == ' ' || *d->p == '\t' || *d->p == '\n' || *d->p == '\r') d->p++;
    t->index = (size_t)(d->p - d->text);
    char c = *d->p;
    if (c == '\0') {
        t->type = CJ_END;
        return;
    }
    const char *s = strchr(single, c);
    if (s) {
        t->type = single_type[s - single];
        d->p++;
        return;
    }
    if (c == '"') {
        cj_string_token(d, t);
        return;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        if (!d->cfg->decode_invalid && cj_nonstandard_number(d->p))
            cj_token_error(d, t, "invalid number");
        else
            cj_number_token(d, t);
        return;
    }
    /* Only these may start a word: true, false and null in lowercase, and
     * with decode_invalid_numbers on, strtod's Inf and NaN spellings and a
     * leading '+'. */
    if (!strchr("tfniIN+", c)) {
        cj_token_error(d, t, "invalid token");
        return;
    }
    if (cj_literal(d, "true", 4) || cj_literal(d, "false", 5)) {
        t->type = CJ_BOOLEAN;
        t->boolean = c == 't';
    } else if (cj_literal(d, "null", 4)) {
        t->type = CJ_NULL;
    } else if (d->cfg->decode_invalid && cj_nonstandard_number(d->p)) {
        cj_number_token(d, t);
    } else {
        cj_token_error(d, t, "invalid token");
    }
}

/* Never returns. */
static void cj_parse_error(cj_dec *d, const char *expected, const cj_token *t) {
    const char *found = t->type == CJ_ERROR ? t->err : cj_tok_names[t->type];
    luaL_error(d->L, "Expected %s but found %s at character %d", expected, found, (int)t->index + 1);
}

/* Enter an object or array that needs `slots` stack slots. */
static void cj_descend(cj_dec *d, int slots) {
    d->depth++;
    if (d->depth > d->cfg->decode_max_depth || !lua_checkstack(d->L, slots))
        luaL_error(d->L, "Found too many nested data structures (%d) at character %d", d->depth, (int)(d->p - d->text));
}

static void cj_parse_value(cj_dec *d, const cj_token *t);

static void cj_parse_object(cj_dec *d) {
    lua_State *L = d->L;
    cj_token t;
    cj_descend(d, 3); /* table, key, value */
    lua_newtable(L);
    cj_next_token(d, &t);
    if (t.type != CJ_OBJ_END) {
        for (;;) {
            if (t.type != CJ_STRING) cj_parse_error(d, "object key string", &t);
            lua_pushlstring(L, t.str, t.len);
            cj_next_token(d, &t);
            if (t.type != CJ_COLON) cj_parse_error(d, "colon", &t);
            cj_next_token(d, &t);
            cj_parse_value(d, &t);
            lua_rawset(L, -3);
            cj_next_token(d, &t);
            if (t.type == CJ_OBJ_END) break;
            if (t.type != CJ_COMMA) cj_parse_error(d, "comma or object end", &t);
            cj_next_token(d, &t);
        }
    }
    d->depth--;
}

static void cj_parse_array(cj_dec *d) {
    lua_State *L = d->L;
    cj_token t;
    cj_descend(d, 2); /* table, value */
    lua_newtable(L);
    cj_next_token(d, &t);
    if (t.type == CJ_ARR_END) {
        if (d->cfg->array_mt) {
            lua_pushvalue(L, lua_upvalueindex(2));
            lua_setmetatable(L, -2);
        }
    } else {
        for (int i = 1;; i++) {
            cj_parse_value(d, &t);
            lua_rawseti(L, -2, i);
            cj_next_token(d, &t);
            if (t.type == CJ_ARR_END) break;
            if (t.type != CJ_COMMA) cj_parse_error(d, "comma or array end", &t);
            cj_next_token(d, &t);
        }
    }
    d->depth--;
}

/* Push the value that starts with token t. */
static void cj_parse_value(cj_dec *d, const cj_token *t) {
    switch (t->type) {
    case CJ_STRING:
        lua_pushlstring(d->L, t->str, t->len);
        break;
    case CJ_NUMBER:
        lua_pushnumber(d->L, t->num);
        break;
    case CJ_BOOLEAN:
        lua_pushboolean(d->L, t->boolean);
        break;
    case CJ_OBJ_BEGIN:
        cj_parse_object(d);
        break;
    case CJ_ARR_BEGIN:
        cj_parse_array(d);
        break;
    case CJ_NULL:
        lua_pushlightuserdata(d->L, NULL);
        break;
    default:
        cj_parse_error(d, "value", t);
    }
}

static int cj_decode(lua_State *L) {
    luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
    cj_dec d = {.L = L, .cfg = cj_config(L)};
    size_t len;
    d.text = d.p = luaL_checklstring(L, 1, &len);
    /* JSON text starts with an ASCII character: a NUL among the first two
     * bytes means a 16- or 32-bit encoding. */
    if (len >= 2 && (!d.text[0] || !d.text[1])) luaL_error(L, "JSON parser does not support UTF-16 or UTF-32");
    if (memchr(d.text, '\\', len)) d.scratch = lua_newuserdata(L, len);
    cj_token t;
    cj_next_token(&d, &t);
    cj_parse_value(&d, &t);
    cj_next_token(&d, &t);
    if (t.type != CJ_END) cj_parse_error(&d, "the end", &t);
    return 1;
}

/* ---- Module ---- */

static void cj_push_array_mt(lua_State *L) {
    lua_pushlightuserdata(L, (void *)&cj_array_mt_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_isnil(L, -1)) return;
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, CJ_ARRAY_MARK);
    lua_pushlightuserdata(L, (void *)&cj_array_mt_key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

/* Push a new cjson table with default settings; also cjson.new(). Its
 * functions hold the settings (upvalue 1) and the array marker (2). */
static int cj_new(lua_State *L) {
    static const luaL_Reg funcs[] = {{"encode", cj_encode},
                                     {"decode", cj_decode},
                                     {"encode_sparse_array", cj_encode_sparse_array},
                                     {"encode_max_depth", cj_encode_max_depth},
                                     {"decode_max_depth", cj_decode_max_depth},
                                     {"encode_number_precision", cj_encode_number_precision},
                                     {"encode_keep_buffer", cj_encode_keep_buffer},
                                     {"encode_invalid_numbers", cj_encode_invalid_numbers},
                                     {"decode_invalid_numbers", cj_decode_invalid_numbers},
                                     {"decode_array_with_array_mt", cj_decode_array_with_array_mt},
                                     {"new", cj_new},
                                     {NULL, NULL}};
    lua_createtable(L, 0, 16);
    cj_cfg *cfg = lua_newuserdata(L, sizeof(*cfg));
    *cfg = (cj_cfg){.sparse_ratio = 2,
                    .sparse_safe = 10,
                    .encode_max_depth = 1000,
                    .decode_max_depth = 1000,
                    .decode_invalid = 1,
                    .precision = 14,
                    .keep_buffer = 1};
    cj_push_array_mt(L);
    luaL_setfuncs(L, funcs, 2);
    cj_push_array_mt(L);
    lua_setfield(L, -2, "array_mt");
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    lua_pushliteral(L, "cjson");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "2.1.0");
    lua_setfield(L, -2, "_VERSION");
    return 1;
}

int hk_luaopen_cjson(lua_State *L) { return cj_new(L); }
