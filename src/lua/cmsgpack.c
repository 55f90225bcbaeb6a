/* cmsgpack.c - the `cmsgpack` library of Redis scripts: MessagePack
 * encoding of Lua values (cmsgpack.pack(...), one object per argument,
 * concatenated) and decoding of a stream of objects (unpack, unpack_one,
 * unpack_limit). Encodings and errors are those of Redis's bundled
 * lua-cmsgpack 0.4.0: a number that is an integer in the int64 range takes
 * the smallest integer format, other numbers float32 when that is exact and
 * float64 otherwise; a table whose keys are exactly 1..n is an array, any
 * other table a map; strings use fixstr/str8/str16/str32; functions,
 * userdata and threads become nil; tables nested 16 deep are cut to nil,
 * which is how self-referencing tables survive. Decoding reads every format
 * that encoder writes; bin, ext and 0xc1 are "Bad data format in input.".
 * Not a general MessagePack library: no ext types, no bin output, no
 * settings. */
#include "lualibs.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>

#define MP_MAX_NESTING 16

/* ---- Encoding ---- */

/* A one-byte tag and then v in nbytes big-endian bytes. */
static void mp_put_tagged(hk_lbuf *b, unsigned char tag, uint64_t v, int nbytes) {
    unsigned char out[9];
    out[0] = tag;
    for (int i = 0; i < nbytes; i++) out[1 + i] = (unsigned char)(v >> (8 * (nbytes - 1 - i)));
    hk_lbuf_add(b, out, (size_t)nbytes + 1);
}

static void mp_put_int(hk_lbuf *b, int64_t n) {
    if (n >= 0) {
        if (n <= 0x7f)
            hk_lbuf_addc(b, (char)n);
        else if (n <= 0xff)
            mp_put_tagged(b, 0xcc, (uint64_t)n, 1);
        else if (n <= 0xffff)
            mp_put_tagged(b, 0xcd, (uint64_t)n, 2);
        else if (n <= 0xffffffffLL)
            mp_put_tagged(b, 0xce, (uint64_t)n, 4);
        else
            mp_put_tagged(b, 0xcf, (uint64_t)n, 8);
    } else {
        if (n >= -32)
            hk_lbuf_addc(b, (char)(0x100 + n));
        else if (n >= -128)
            mp_put_tagged(b, 0xd0, (uint64_t)n, 1);
        else if (n >= -32768)
            mp_put_tagged(b, 0xd1, (uint64_t)n, 2);
        else if (n >= -2147483648LL)
            mp_put_tagged(b, 0xd2, (uint64_t)n, 4);
        else
            mp_put_tagged(b, 0xd3, (uint64_t)n, 8);
    }
}

/* Integers of the int64 range as integers; float32 when converting back
 * gives the same double (infinities included), float64 otherwise (NaN
 * included). */
static void mp_put_number(hk_lbuf *b, lua_Number d) {
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && floor(d) == d) {
        mp_put_int(b, (int64_t)d);
    } else if (isinf(d) || (fabs(d) <= FLT_MAX && (double)(float)d == d)) {
        float f = (float)d;
        uint32_t bits;
        memcpy(&bits, &f, sizeof(bits));
        mp_put_tagged(b, 0xca, bits, 4);
    } else {
        uint64_t bits;
        memcpy(&bits, &d, sizeof(bits));
        mp_put_tagged(b, 0xcb, bits, 8);
    }
}

static void mp_put_str(hk_lbuf *b, const char *s, size_t len) {
    if (len < 32)
        hk_lbuf_addc(b, (char)(0xa0 | len));
    else if (len <= 0xff)
        mp_put_tagged(b, 0xd9, len, 1);
    else if (len <= 0xffff)
        mp_put_tagged(b, 0xda, len, 2);
    else
        mp_put_tagged(b, 0xdb, len, 4);
    hk_lbuf_add(b, s, len);
}

/* Header of an array (fix_tag 0x90, then 0xdc/0xdd) or a map (0x80, then
 * 0xde/0xdf): the two differ only in their tags. */
static void mp_put_container(hk_lbuf *b, unsigned char fix_tag, unsigned char tag16, size_t n) {
    if (n <= 15)
        hk_lbuf_addc(b, (char)(fix_tag | n));
    else if (n <= 0xffff)
        mp_put_tagged(b, tag16, n, 2);
    else
        mp_put_tagged(b, tag16 + 1, n, 4);
}

/* Whether the table on top has exactly the keys 1..n (n may be 0): every
 * key a number that is a positive int, and the largest equal to the count
 * of keys. Leaves the stack as it found it. */
static int mp_is_array(lua_State *L) {
    luaL_checkstack(L, 2, "in function table_is_an_array");
    int count = 0, max = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        lua_Number k = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
        if (!(k > 0 && k <= INT_MAX && floor(k) == k)) {
            lua_pop(L, 1);
            return 0;
        }
        if (k > max) max = (int)k;
        count++;
    }
    return max == count;
}

static void mp_encode(lua_State *L, hk_lbuf *b, int level);

static void mp_encode_table(lua_State *L, hk_lbuf *b, int level) {
    if (mp_is_array(L)) {
        size_t n = lua_objlen(L, -1);
        mp_put_container(b, 0x90, 0xdc, n);
        luaL_checkstack(L, 1, "in function mp_encode_lua_table_as_array");
        for (size_t i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, (int)i);
            mp_encode(L, b, level + 1);
        }
        return;
    }
    luaL_checkstack(L, 3, "in function mp_encode_lua_table_as_map");
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        n++;
    }
    mp_put_container(b, 0x80, 0xde, n);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);
        mp_encode(L, b, level + 1); /* the key's copy */
        mp_encode(L, b, level + 1); /* the value */
    }
}

/* Append the value on top of the stack, nested `level` tables deep, and
 * pop it. */
static void mp_encode(lua_State *L, hk_lbuf *b, int level) {
    int type = lua_type(L, -1);
    if (type == LUA_TTABLE && level == MP_MAX_NESTING) type = LUA_TNIL;
    switch (type) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        mp_put_str(b, s, len);
        break;
    }
    case LUA_TBOOLEAN:
        hk_lbuf_addc(b, (char)(lua_toboolean(L, -1) ? 0xc3 : 0xc2));
        break;
    case LUA_TNUMBER:
        mp_put_number(b, lua_tonumber(L, -1));
        break;
    case LUA_TTABLE:
        mp_encode_table(L, b, level);
        break;
    default:
        hk_lbuf_addc(b, (char)0xc0);
    }
    lua_pop(L, 1);
}

static int mp_pack(lua_State *L) {
    int nargs = lua_gettop(L);
    if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
    if (!lua_checkstack(L, nargs)) return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
    hk_lbuf b;
    hk_lbuf_init(&b, L, 64);
    for (int i = 1; i <= nargs; i++) {
        luaL_checkstack(L, 1, "in function mp_check");
        lua_pushvalue(L, i);
        mp_encode(L, &b, 0);
    }
    lua_pushlstring(L, b.p, b.len);
    return 1;
}

/* ---- Decoding ---- */

enum { MP_OK, MP_EOF, MP_BADFMT };

/* The unread input. A decoder that finds it short or malformed sets err
 * and returns; the caller raises the error. */
typedef struct {
    const unsigned char *p;
    size_t left;
    int err;
} mp_cur;

static int mp_need(mp_cur *c, size_t n) {
    if (c->left >= n) return 1;
    c->err = MP_EOF;
    return 0;
}

static void mp_skip(mp_cur *c, size_t n) {
    c->p += n;
    c->left -= n;
}

static uint64_t mp_be(const unsigned char *p, int nbytes) {
    uint64_t v = 0;
    for (int i = 0; i < nbytes; i++) v = v << 8 | p[i];
    return v;
}

static void mp_decode(lua_State *L, mp_cur *c);

/* Bytes after the tag before the payload, for the tags 0xc0..0xdf; -1 for
 * the ones this decoder rejects (0xc1, bin and ext). */
static const signed char mp_tag_extra[32] = {
    0,  -1, 0, 0, -1, -1, -1, -1, /* c0 nil, c1, c2 false, c3 true, c4-c6 bin, c7 ext8 */
    -1, -1, 4, 8, 1,  2,  4,  8,  /* c8-c9 ext16/32, ca float, cb double, cc-cf uint8..64 */
    1,  2,  4, 8, -1, -1, -1, -1, /* d0-d3 int8..64, d4-d7 fixext */
    -1, 1,  2, 4, 2,  4,  2,  4,  /* d8 fixext16, d9-db str8..32, dc-dd array16/32, de-df map16/32 */
};

/* Element counts come from the input: a table is only presized for what
 * the remaining bytes could hold (every element takes one at least), so a
 * forged count ends in "Missing bytes", not in a huge allocation. */
static int mp_size_hint(size_t n, size_t left) {
    size_t hint = n < left ? n : left;
    return hint < 65536 ? (int)hint : 65536;
}

static void mp_decode_array(lua_State *L, mp_cur *c, size_t n) {
    lua_createtable(L, mp_size_hint(n, c->left), 0);
    luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
    for (size_t i = 1; i <= n; i++) {
        lua_pushnumber(L, (lua_Number)i);
        mp_decode(L, c);
        if (c->err) return;
        lua_rawset(L, -3);
    }
}

static void mp_decode_map(lua_State *L, mp_cur *c, size_t n) {
    lua_createtable(L, 0, mp_size_hint(n, c->left / 2));
    for (size_t i = 0; i < n; i++) {
        mp_decode(L, c);
        if (c->err) return;
        mp_decode(L, c);
        if (c->err) return;
        lua_rawset(L, -3); /* a nil or NaN key raises Lua's own error */
    }
}

/* A string of len bytes after a header of hdr bytes. */
static void mp_decode_str(lua_State *L, mp_cur *c, size_t hdr, size_t len) {
    mp_skip(c, hdr);
    if (!mp_need(c, len)) return;
    lua_pushlstring(L, (const char *)c->p, len);
    mp_skip(c, len);
}

/* Push the object at the cursor and move past it. Integers come back as
 * Lua numbers; uint64 values from 2^63 up wrap to negative ones, as they
 * do in Redis. */
static void mp_decode(lua_State *L, mp_cur *c) {
    if (!mp_need(c, 1)) return;
    luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
    unsigned char tag = c->p[0];
    if (tag <= 0x7f || tag >= 0xe0) { /* positive and negative fixint */
        lua_pushinteger(L, tag <= 0x7f ? tag : (int)tag - 0x100);
        mp_skip(c, 1);
        return;
    }
    if (tag >= 0xa0 && tag < 0xc0) { /* fixstr */
        mp_decode_str(L, c, 1, tag & 0x1f);
        return;
    }
    if (tag < 0xa0) { /* fixarray, fixmap */
        mp_skip(c, 1);
        if (tag >= 0x90)
            mp_decode_array(L, c, tag & 0xf);
        else
            mp_decode_map(L, c, tag & 0xf);
        return;
    }
    int nbytes = mp_tag_extra[tag - 0xc0];
    if (nbytes < 0) {
        c->err = MP_BADFMT;
        return;
    }
    if (!mp_need(c, 1 + (size_t)nbytes)) return;
    uint64_t v = mp_be(c->p + 1, nbytes);
    if (tag >= 0xd9) { /* str, array and map with an explicit length */
        if (tag <= 0xdb) {
            mp_decode_str(L, c, 1 + (size_t)nbytes, (size_t)v);
        } else {
            mp_skip(c, 1 + (size_t)nbytes);
            if (tag <= 0xdd)
                mp_decode_array(L, c, (size_t)v);
            else
                mp_decode_map(L, c, (size_t)v);
        }
        return;
    }
    switch (tag) {
    case 0xc0:
        lua_pushnil(L);
        break;
    case 0xc2:
    case 0xc3:
        lua_pushboolean(L, tag == 0xc3);
        break;
    case 0xca: {
        uint32_t bits = (uint32_t)v;
        float f;
        memcpy(&f, &bits, sizeof(f));
        lua_pushnumber(L, f);
        break;
    }
    case 0xcb: {
        double d;
        memcpy(&d, &v, sizeof(d));
        lua_pushnumber(L, d);
        break;
    }
    case 0xd0:
        lua_pushinteger(L, (int8_t)v);
        break;
    case 0xd1:
        lua_pushinteger(L, (int16_t)v);
        break;
    case 0xd2:
        lua_pushinteger(L, (int32_t)v);
        break;
    case 0xd3:
        lua_pushnumber(L, (lua_Number)(int64_t)v);
        break;
    default: /* 0xcc..0xcf */
        lua_pushinteger(L, (lua_Integer)(int64_t)v);
    }
    mp_skip(c, 1 + (size_t)nbytes);
}

/* Decode objects from byte `offset` of argument 1, at most `limit` of them;
 * limit and offset both 0 means all of them and no next offset in the
 * results. Otherwise the results are the next offset (-1 once the input is
 * used up) and then the objects. */
static int mp_unpack_full(lua_State *L, lua_Integer limit, lua_Integer offset) {
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    /* Redis prints the input length where the limit belongs. */
    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", (int)offset, (int)len);
    if ((size_t)offset > len)
        return luaL_error(L, "Start offset %d greater than input length %d.", (int)offset, (int)len);
    int all = limit == 0 && offset == 0;
    if (all) limit = INT_MAX;
    mp_cur c = {(const unsigned char *)s + offset, len - (size_t)offset, MP_OK};
    int count = 0;
    for (; c.left > 0 && count < limit; count++) {
        mp_decode(L, &c);
        if (c.err == MP_EOF) return luaL_error(L, "Missing bytes in input.");
        if (c.err == MP_BADFMT) return luaL_error(L, "Bad data format in input.");
    }
    if (all) return count;
    luaL_checkstack(L, 1, "in function mp_unpack_full");
    lua_pushinteger(L, c.left == 0 ? -1 : (lua_Integer)(len - c.left));
    lua_insert(L, 2);
    return count + 1;
}

static int mp_unpack(lua_State *L) { return mp_unpack_full(L, 0, 0); }

static int mp_unpack_one(lua_State *L) {
    lua_Integer offset = luaL_optinteger(L, 2, 0);
    if (lua_gettop(L) > 1) lua_settop(L, 1);
    return mp_unpack_full(L, 1, offset);
}

static int mp_unpack_limit(lua_State *L) {
    lua_Integer limit = luaL_checkinteger(L, 2);
    lua_Integer offset = luaL_optinteger(L, 3, 0);
    lua_settop(L, 1);
    return mp_unpack_full(L, limit, offset);
}

int hk_luaopen_cmsgpack(lua_State *L) {
    static const luaL_Reg funcs[] = {{"pack", mp_pack},
                                     {"unpack", mp_unpack},
                                     {"unpack_one", mp_unpack_one},
                                     {"unpack_limit", mp_unpack_limit},
                                     {NULL, NULL}};
    luaL_newlib(L, funcs);
    lua_pushliteral(L, "cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "lua-cmsgpack 0.4.0");
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
    lua_setfield(L, -2, "_COPYRIGHT");
    lua_pushliteral(L, "MessagePack C implementation for Lua");
    lua_setfield(L, -2, "_DESCRIPTION");
    return 1;
}
