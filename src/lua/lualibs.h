/* lualibs.h - the C libraries Redis hands to Lua scripts, rebuilt for LuaJIT:
 * cjson (JSON), cmsgpack (MessagePack) and struct (binary records); `bit`
 * is LuaJIT's own. Each opener pushes a fresh module table and returns 1,
 * setting no global: the caller names the tables and makes them read-only.
 * Results and error texts are those of Redis's bundled copies, quirks
 * included, because scripts written for Redis match on them. Also here: the
 * scratch buffer the two encoders share, and the rewrite of a script's
 * returns (retwrap.c). Nothing in this folder knows the server. */
#ifndef HK_LUALIBS_H
#define HK_LUALIBS_H

#include <lauxlib.h>
#include <lua.h>

#include <stddef.h>
#include <string.h>

int hk_luaopen_cjson(lua_State *L);
int hk_luaopen_cmsgpack(lua_State *L);
int hk_luaopen_struct(lua_State *L);

/* The script source src between `prefix` and `suffix`, each `return E`
 * that retwrap.c selects turned into `return fn(E)`, on the same lines.
 * Returns an hk_malloc'd copy (*outlen bytes), or NULL when there is nothing
 * to rewrite or the source does not scan as Lua. */
char *hk_lua_wrap_returns(const char *src, size_t len, const char *prefix, const char *suffix, const char *fn,
                          size_t *outlen);

/* A growable byte buffer whose storage is a userdata held in one stack
 * slot, so that a Lua error raised half-way through an encoding (a bad
 * value, a stack or memory limit) leaves nothing to free: the collector
 * takes the storage. Growing replaces the userdata in its slot; the slot
 * must stay on the stack, untouched, until the result has been pushed. */
typedef struct {
    lua_State *L;
    char *p;
    size_t len, cap;
    int slot; /* absolute stack index of the storage */
} hk_lbuf;

/* Push the storage (cap bytes at least) and start empty. Needs one free
 * stack slot; raises a Lua memory error like any allocation. */
static inline void hk_lbuf_init(hk_lbuf *b, lua_State *L, size_t cap) {
    b->L = L;
    b->len = 0;
    b->cap = cap < 64 ? 64 : cap;
    b->p = lua_newuserdata(L, b->cap);
    b->slot = lua_gettop(L);
}

/* Room for n more bytes at b->p + b->len. Raises a Lua error when the
 * size would overflow or the stack has no slot left for the new storage. */
static inline char *hk_lbuf_reserve(hk_lbuf *b, size_t n) {
    if (b->cap - b->len >= n) return b->p + b->len;
    if (n > ((size_t)-1 >> 2) - b->len) luaL_error(b->L, "not enough memory");
    size_t cap = b->cap * 2;
    if (cap < b->len + n) cap = b->len + n;
    luaL_checkstack(b->L, 1, "buffer growth");
    char *p = lua_newuserdata(b->L, cap);
    memcpy(p, b->p, b->len);
    lua_replace(b->L, b->slot);
    b->p = p;
    b->cap = cap;
    return p + b->len;
}

static inline void hk_lbuf_add(hk_lbuf *b, const void *s, size_t n) {
    memcpy(hk_lbuf_reserve(b, n), s, n);
    b->len += n;
}

static inline void hk_lbuf_addc(hk_lbuf *b, char c) {
    *hk_lbuf_reserve(b, 1) = c;
    b->len++;
}

#endif
