/* struct.c - the `struct` library of Redis scripts: struct.pack(fmt, ...),
 * struct.unpack(fmt, data [, pos]) and struct.size(fmt), which turn Lua
 * values into C-like binary records and back. A format is a string of
 * options: '<' '>' byte order, '![n]' maximum alignment, 'x' a pad byte,
 * b/B h/H l/L T i[n]/I[n] signed/unsigned integers (i and I take 1 to 32
 * bytes), f d floats, c[n] n bytes (c0: the whole string when packing, the
 * previously read number as length when unpacking), s a zero-terminated
 * string, ' ' nothing. It answers exactly as Redis's bundled lua_struct.c
 * does on x86-64 (little endian, 8-byte long and size_t, alignment up to 8),
 * including what that build does with out-of-range numbers and integers
 * wider than 8 bytes, so packed records compare byte for byte. It is not a
 * general codec: numbers are Lua doubles, so 64-bit integers lose precision
 * the same way they do in Redis. */
#include "lualibs.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>

#define ST_MAX_INT_SIZE 32
#define ST_MAX_ALIGN (_Alignof(double) > sizeof(int) ? (int)_Alignof(double) : (int)sizeof(int))

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ST_NATIVE_LITTLE 0
#else
#define ST_NATIVE_LITTLE 1
#endif

/* Where a format is being read and the options in force there. */
typedef struct {
    const char *p; /* the character after the current option */
    int little;    /* byte order of what follows */
    int align;     /* maximum alignment, a power of two */
} st_fmt;

static void st_fmt_init(st_fmt *f, const char *s) {
    f->p = s;
    f->little = ST_NATIVE_LITTLE;
    f->align = 1;
}

/* The decimal count after an option, or dflt when none is written. Raises
 * "integral size overflow" rather than wrapping past INT_MAX. */
static int st_count(lua_State *L, st_fmt *f, int dflt) {
    if (!isdigit((unsigned char)*f->p)) return dflt;
    int n = 0;
    while (isdigit((unsigned char)*f->p)) {
        int d = *f->p++ - '0';
        if (n > INT_MAX / 10 || n * 10 > INT_MAX - d) luaL_error(L, "integral size overflow");
        n = n * 10 + d;
    }
    return n;
}

/* Bytes the option takes in the record, reading its count if it has one;
 * 0 for the options that are not values ('s' is sized by its data). */
static size_t st_opt_size(lua_State *L, st_fmt *f, int opt) {
    switch (opt) {
    case 'b':
    case 'B':
    case 'x':
        return 1;
    case 'h':
    case 'H':
        return sizeof(short);
    case 'l':
    case 'L':
        return sizeof(long);
    case 'T':
        return sizeof(size_t);
    case 'f':
        return sizeof(float);
    case 'd':
        return sizeof(double);
    case 'c':
        return (size_t)st_count(L, f, 1);
    case 'i':
    case 'I': {
        int n = st_count(L, f, (int)sizeof(int));
        if (n > ST_MAX_INT_SIZE) luaL_error(L, "integral size %d is larger than limit of %d", n, ST_MAX_INT_SIZE);
        return (size_t)n;
    }
    default:
        return 0;
    }
}

static int st_is_integer(int opt) { return opt > 0 && strchr("bBhHlLTiI", opt) != NULL; }

/* Padding before a value of the given size at offset pos. The arithmetic
 * is Redis's even for sizes that are not powers of two (i3, i5, ...). */
static size_t st_padding(size_t pos, const st_fmt *f, int opt, size_t size) {
    if (size == 0 || opt == 'c') return 0;
    if (size > (size_t)f->align) size = (size_t)f->align;
    return (size - (pos & (size - 1))) & (size - 1);
}

/* The options that change the state instead of producing a value. An
 * unknown letter is an argument error on the format. */
static void st_control(lua_State *L, st_fmt *f, int opt) {
    switch (opt) {
    case ' ':
        return;
    case '>':
        f->little = 0;
        return;
    case '<':
        f->little = 1;
        return;
    case '!': {
        int a = st_count(L, f, ST_MAX_ALIGN);
        if (a <= 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
        f->align = a;
        return;
    }
    default:
        luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
    }
}

/* Double to integer the way the x86-64 conversion instructions of Redis's
 * build do it: NaN and out-of-range values give INT64_MIN's bit pattern,
 * and the unsigned conversion of values from 2^63 up subtracts 2^63 first.
 * Plain C casts would be undefined there. */
static int64_t st_trunc_i64(double d) {
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return (int64_t)d;
    return INT64_MIN;
}

static uint64_t st_trunc_u64(double d) {
    if (d >= 9223372036854775808.0) return (uint64_t)st_trunc_i64(d - 9223372036854775808.0) ^ (UINT64_C(1) << 63);
    return (uint64_t)st_trunc_i64(d);
}

static void st_reverse(char *p, size_t n) {
    for (size_t i = 0; i < n / 2; i++) {
        char t = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = t;
    }
}

/* Bytes of an integer option. Wider than 8 bytes, the value is padded with
 * zero bytes, negative or not, as Redis does. */
static void st_put_integer(luaL_Buffer *b, lua_Number n, int little, size_t size) {
    uint64_t v = n < 0 ? (uint64_t)st_trunc_i64(n) : st_trunc_u64(n);
    char out[ST_MAX_INT_SIZE];
    for (size_t i = 0; i < size; i++) {
        out[little ? i : size - 1 - i] = (char)(v & 0xff);
        v >>= 8;
    }
    luaL_addlstring(b, out, size);
}

static int st_pack(lua_State *L) {
    st_fmt f;
    st_fmt_init(&f, luaL_checkstring(L, 1));
    int arg = 2;
    size_t total = 0;
    /* A nil right after the arguments: the buffer below may park pieces on
     * the stack, and a missing argument must read as nil, not as those. */
    lua_pushnil(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    while (*f.p) {
        int opt = *f.p++;
        size_t size = st_opt_size(L, &f, opt);
        size_t pad = st_padding(total, &f, opt, size);
        total += pad;
        while (pad-- > 0) luaL_addchar(&b, '\0');
        switch (opt) {
        case 'x':
            luaL_addchar(&b, '\0');
            break;
        case 'f': {
            float v = (float)luaL_checknumber(L, arg++);
            if (f.little != ST_NATIVE_LITTLE) st_reverse((char *)&v, sizeof(v));
            luaL_addlstring(&b, (const char *)&v, sizeof(v));
            break;
        }
        case 'd': {
            double v = luaL_checknumber(L, arg++);
            if (f.little != ST_NATIVE_LITTLE) st_reverse((char *)&v, sizeof(v));
            luaL_addlstring(&b, (const char *)&v, sizeof(v));
            break;
        }
        case 'c':
        case 's': {
            size_t len;
            const char *s = luaL_checklstring(L, arg++, &len);
            if (size == 0) size = len;
            /* Redis names the argument after this one in the message. */
            luaL_argcheck(L, len >= size, arg, "string too short");
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default:
            if (st_is_integer(opt))
                st_put_integer(&b, luaL_checknumber(L, arg++), f.little, size);
            else
                st_control(L, &f, opt);
        }
        total += size;
    }
    luaL_pushresult(&b);
    return 1;
}

/* An integer option read back. Only the last 8 bytes in order of
 * significance survive, and the sign mask is shifted by (bits - 1) mod 64,
 * which is what Redis's 64-bit arithmetic yields for the wide sizes. */
static lua_Number st_get_integer(const char *p, int little, int is_signed, size_t size) {
    uint64_t v = 0;
    for (size_t i = 0; i < size; i++) v = v << 8 | (unsigned char)p[little ? size - 1 - i : i];
    if (!is_signed) return (lua_Number)v;
    uint64_t mask = ~UINT64_C(0) << ((size * 8 - 1) & 63);
    if (v & mask) v |= mask;
    return (lua_Number)(int64_t)v;
}

static int st_unpack(lua_State *L) {
    st_fmt f;
    st_fmt_init(&f, luaL_checkstring(L, 1));
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);
    /* A negative position wraps to a huge one, as in Redis, and fails the
     * length check of the first option. */
    size_t pos = (size_t)luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
    pos--;
    int n = 0;
    while (*f.p) {
        int opt = *f.p++;
        size_t size = st_opt_size(L, &f, opt);
        pos += st_padding(pos, &f, opt, size);
        luaL_argcheck(L, size <= len && pos <= len - size, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
        case 'x':
            break;
        case 'f': {
            float v;
            memcpy(&v, data + pos, sizeof(v));
            if (f.little != ST_NATIVE_LITTLE) st_reverse((char *)&v, sizeof(v));
            lua_pushnumber(L, v);
            n++;
            break;
        }
        case 'd': {
            double v;
            memcpy(&v, data + pos, sizeof(v));
            if (f.little != ST_NATIVE_LITTLE) st_reverse((char *)&v, sizeof(v));
            lua_pushnumber(L, v);
            n++;
            break;
        }
        case 'c':
            if (size == 0) {
                /* The previous result, a number or a numeric string, is
                 * the length; it is consumed. */
                if (n == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
                size = (size_t)st_trunc_u64(lua_tonumber(L, -1));
                lua_pop(L, 1);
                n--;
                luaL_argcheck(L, size <= len && pos <= len - size, 2, "data string too short");
            }
            lua_pushlstring(L, data + pos, size);
            n++;
            break;
        case 's': {
            const char *end = memchr(data + pos, '\0', len - pos);
            if (!end) luaL_error(L, "unfinished string in data");
            size = (size_t)(end - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            n++;
            break;
        }
        default:
            if (st_is_integer(opt)) {
                lua_pushnumber(L, st_get_integer(data + pos, f.little, islower(opt), size));
                n++;
            } else {
                st_control(L, &f, opt);
            }
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)(pos + 1));
    return n + 1;
}

/* Letters that are not options count for nothing here, where pack and
 * unpack reject them: Redis only validates non-alphanumerics in size. */
static int st_size(lua_State *L) {
    st_fmt f;
    st_fmt_init(&f, luaL_checkstring(L, 1));
    size_t pos = 0;
    while (*f.p) {
        int opt = *f.p++;
        size_t size = st_opt_size(L, &f, opt);
        pos += st_padding(pos, &f, opt, size);
        if (opt == 's')
            luaL_argerror(L, 1, "option 's' has no fixed size");
        else if (opt == 'c' && size == 0)
            luaL_argerror(L, 1, "option 'c0' has no fixed size");
        if (!isalnum((unsigned char)opt)) st_control(L, &f, opt);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

int hk_luaopen_struct(lua_State *L) {
    static const luaL_Reg funcs[] = {{"pack", st_pack}, {"unpack", st_unpack}, {"size", st_size}, {NULL, NULL}};
    luaL_newlib(L, funcs);
    return 1;
}
