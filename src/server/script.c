/* script.c - Lua scripting: the script cache, the per-worker Lua states,
 * the `redis` library scripts call, the conversions between Lua values and
 * RESP, running a script or a function under its command's locks, and
 * the load context a function library's code runs in; see script.h.
 *
 * This file is not the EVAL/SCRIPT/FCALL command syntax (src/cmd/ parses
 * that and calls in here), nor the registry of function libraries
 * (function.c), and keeps no connection state: a script runs on the
 * context of its command, and what it calls runs nested on that context
 * through the admission step (ADMIT_SCRIPT) and exec_nested, with a
 * capture buffer as the reply sink. */
#include "script.h"
#include "acl.h"

#include "../core/alloc.h"
#include "../core/sha1.h"
#include "../core/util.h"
#include "../lua/lualibs.h"
#include "../store/lockset.h"
#include "config.h"
#include "creply.h"
#include "function.h"
#include "evict.h"
#include "server.h"

#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <lualib.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Atomic int scripts_busy;


/* ---- the script cache ------------------------------------------------- */

struct script_entry {
    struct script_entry *next;
    char sha[41];
    unsigned flags;
    /* Added by EVAL and never by SCRIPT LOAD: such scripts are kept only
     * while among the EVAL_CACHE_MAX most recently used, as in Redis 8. */
    int from_eval;
    _Atomic unsigned long long last_used;
    size_t len;
    char body[];
};

#define EVAL_CACHE_MAX 500

static pthread_rwlock_t cache_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct script_entry **cache_tab;
static size_t cache_cap, cache_n, cache_n_eval;
static _Atomic unsigned long long cache_tick;
/* Bumped when an EVAL script is evicted: workers drop compiled scripts the
 * cache no longer holds. */
static _Atomic unsigned long long cache_evict_gen;
static unsigned long long cache_bytes;
/* Bumped by SCRIPT FLUSH: workers drop what they compiled. */
static _Atomic unsigned long long cache_gen;

static size_t sha_slot(const char *sha, size_t cap) {
    uint64_t h = 0;
    for (int i = 0; i < 16; i++) h = h * 16 + (uint64_t)(sha[i] <= '9' ? sha[i] - '0' : sha[i] - 'a' + 10);
    return (size_t)(h & (cap - 1));
}

/* Under the lock. */
static struct script_entry *cache_find(const char *sha) {
    if (!cache_cap) return NULL;
    for (struct script_entry *e = cache_tab[sha_slot(sha, cache_cap)]; e; e = e->next)
        if (memcmp(e->sha, sha, 40) == 0) return e;
    return NULL;
}

/* Under the write lock: forget the least recently used EVAL script. */
static void cache_evict_one(void) {
    struct script_entry **victim = NULL;
    unsigned long long oldest = ~0ULL;
    for (size_t i = 0; i < cache_cap; i++)
        for (struct script_entry **pp = &cache_tab[i]; *pp; pp = &(*pp)->next)
            if ((*pp)->from_eval && atomic_load_explicit(&(*pp)->last_used, memory_order_relaxed) < oldest) {
                oldest = atomic_load_explicit(&(*pp)->last_used, memory_order_relaxed);
                victim = pp;
            }
    if (!victim) return;
    struct script_entry *e = *victim;
    *victim = e->next;
    cache_n--;
    cache_n_eval--;
    cache_bytes -= sizeof(*e) + e->len + 1;
    hk_free(e);
    atomic_fetch_add(&cache_evict_gen, 1);
}

/* Under the write lock: add a body. A script already there is refreshed
 * (EVAL) or pinned for good (SCRIPT LOAD). */
static void cache_add(const char *sha, const char *body, size_t len, unsigned flags, int from_eval) {
    struct script_entry *old = cache_find(sha);
    if (old) {
        atomic_store_explicit(&old->last_used, atomic_fetch_add(&cache_tick, 1), memory_order_relaxed);
        if (!from_eval && old->from_eval) {
            old->from_eval = 0;
            cache_n_eval--;
        }
        return;
    }
    if (cache_n >= cache_cap * 2 || !cache_cap) {
        size_t ncap = cache_cap ? cache_cap * 4 : 64;
        struct script_entry **nt = hk_calloc(ncap, sizeof(*nt));
        for (size_t i = 0; i < cache_cap; i++)
            for (struct script_entry *e = cache_tab[i], *nx; e; e = nx) {
                nx = e->next;
                size_t s = sha_slot(e->sha, ncap);
                e->next = nt[s];
                nt[s] = e;
            }
        hk_free(cache_tab);
        cache_tab = nt;
        cache_cap = ncap;
    }
    struct script_entry *e = hk_malloc(sizeof(*e) + len + 1);
    memcpy(e->sha, sha, 41);
    e->flags = flags;
    e->from_eval = from_eval;
    atomic_store_explicit(&e->last_used, atomic_fetch_add(&cache_tick, 1), memory_order_relaxed);
    e->len = len;
    memcpy(e->body, body, len);
    e->body[len] = '\0';
    size_t s = sha_slot(sha, cache_cap);
    e->next = cache_tab[s];
    cache_tab[s] = e;
    cache_n++;
    cache_bytes += sizeof(*e) + len + 1;
    if (from_eval && ++cache_n_eval > EVAL_CACHE_MAX) cache_evict_one();
}

int script_exists(const char *sha, size_t len) {
    if (len != 40) return 0;
    char low[41];
    for (int i = 0; i < 40; i++) low[i] = (char)(sha[i] >= 'A' && sha[i] <= 'Z' ? sha[i] + 32 : sha[i]);
    low[40] = '\0';
    pthread_rwlock_rdlock(&cache_lock);
    int found = cache_find(low) != NULL;
    pthread_rwlock_unlock(&cache_lock);
    return found;
}

void script_flush(void) {
    pthread_rwlock_wrlock(&cache_lock);
    for (size_t i = 0; i < cache_cap; i++)
        for (struct script_entry *e = cache_tab[i], *nx; e; e = nx) {
            nx = e->next;
            hk_free(e);
        }
    hk_free(cache_tab);
    cache_tab = NULL;
    cache_cap = cache_n = cache_n_eval = 0;
    cache_bytes = 0;
    atomic_fetch_add(&cache_gen, 1);
    pthread_rwlock_unlock(&cache_lock);
}

void script_cache_stats(unsigned long long *n, unsigned long long *bytes) {
    pthread_rwlock_rdlock(&cache_lock);
    *n = cache_n;
    *bytes = cache_bytes;
    pthread_rwlock_unlock(&cache_lock);
}

static void sha1_hex(const char *p, size_t len, char out[41]) {
    unsigned char d[20];
    sha1(p, len, d);
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 20; i++) {
        out[2 * i] = hx[d[i] >> 4];
        out[2 * i + 1] = hx[d[i] & 15];
    }
    out[40] = '\0';
}

/* ---- shebang -------------------------------------------------------------- */

static const struct {
    const char *name;
    unsigned flag;
} flag_names[] = {
    {"no-writes", SCRIPT_FLAG_NO_WRITES},   {"allow-oom", SCRIPT_FLAG_ALLOW_OOM},
    {"allow-stale", SCRIPT_FLAG_ALLOW_STALE}, {"no-cluster", SCRIPT_FLAG_NO_CLUSTER},
    {"allow-cross-slot-keys", SCRIPT_FLAG_ALLOW_CROSS_SLOT},
};

const char *script_flag_name(int i, unsigned *bit) {
    if (i < 0 || (size_t)i >= sizeof(flag_names) / sizeof(flag_names[0])) return NULL;
    *bit = flag_names[i].flag;
    return flag_names[i].name;
}

/* Read the "#!lua flags=a,b" first line of body. Returns 0 with *flags and
 * *skip (the bytes of the line, its newline excluded, so that line
 * numbers stay right) or -1 with err. */
static int parse_shebang(const char *body, size_t len, unsigned *flags, size_t *skip, char *err, size_t errlen) {
    *flags = SCRIPT_FLAG_EVAL_COMPAT;
    *skip = 0;
    if (len < 2 || body[0] != '#' || body[1] != '!') return 0;
    const char *nl = memchr(body, '\n', len);
    if (!nl) {
        snprintf(err, errlen, "ERR Invalid script shebang");
        return -1;
    }
    size_t end = (size_t)(nl - body);
    *skip = end;
    size_t i = 0;
    int word = 0;
    *flags = 0;
    while (i < end) {
        while (i < end && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r')) i++;
        if (i >= end) break;
        size_t s = i;
        while (i < end && body[i] != ' ' && body[i] != '\t' && body[i] != '\r') i++;
        size_t wl = i - s;
        const char *w = body + s;
        if (word++ == 0) {
            if (wl != 5 || memcmp(w, "#!lua", 5) != 0) {
                snprintf(err, errlen, "ERR Unexpected engine in script shebang: %.*s", (int)wl, w);
                return -1;
            }
            continue;
        }
        if (wl < 6 || memcmp(w, "flags=", 6) != 0) {
            snprintf(err, errlen, "ERR Unknown lua shebang option: %.*s", (int)wl, w);
            return -1;
        }
        const char *f = w + 6, *fe = w + wl;
        while (f < fe) {
            const char *c = f;
            while (f < fe && *f != ',') f++;
            size_t cl = (size_t)(f - c);
            unsigned got = 0;
            for (size_t k = 0; k < sizeof(flag_names) / sizeof(flag_names[0]); k++)
                if (strlen(flag_names[k].name) == cl && memcmp(flag_names[k].name, c, cl) == 0) got = flag_names[k].flag;
            if (!got && cl) {
                snprintf(err, errlen, "ERR Unexpected flag in script shebang: %.*s", (int)cl, c);
                return -1;
            }
            *flags |= got;
            if (f < fe) f++;
        }
    }
    return 0;
}

/* ---- per-worker Lua state ------------------------------------------------- */

/* A script past busy-reply-threshold, for SCRIPT KILL, FUNCTION KILL,
 * FUNCTION STATS and the -BUSY text of other workers: what it is and the
 * command that runs it (copied: other threads read it). */
struct busy_rec {
    struct busy_rec *next;
    struct worker *w;
    int is_function;
    long long start_ns;
    char *name;
    int argc;
    hk_slice *argv;
};

/* Busy scripts, newest first; busy_mu also orders a kill request with
 * the end of the script it is for (a late request must not kill the
 * worker's next script). */
static pthread_mutex_t busy_mu = PTHREAD_MUTEX_INITIALIZER;
static struct busy_rec *busy_list;
/* How many of scripts_busy are functions: raised before scripts_busy and
 * lowered after it, so that a busy function is never taken for a busy
 * EVAL script (script_eval_busy). */
static _Atomic int functions_busy;

/* What one running script needs from the C functions it calls. */
struct script_run {
    struct cmd_ctx *caller; /* EVAL's context: its lock set is the script's */
    struct cmd_ctx sctx;    /* the script's own view: database, protocol, capture sink */
    const char *name;       /* the sha of an EVAL script, or the function's name */
    int is_function;
    unsigned flags;
    int ro;                 /* EVAL_RO or no-writes */
    int resp;               /* redis.setresp */
    int repl;               /* redis.set_repl */
    int wrote;              /* called a write command */
    int restart;            /* abandoned for every shard: unwind */
    int learning;           /* first run here, under every shard: watch for undeclared keys */
    int undeclared;         /* it reached a shard its KEYS do not name */
    const hk_slice *keys;   /* KEYS */
    int nkeys;
    int killed;
    long long start_ns;
    int oom;                /* met maxmemory with nothing to evict when it started */
    int busy;               /* counted in scripts_busy */
    struct busy_rec *rec;   /* while busy */
};

/* Over maxmemory with nothing left to evict: Redis's pre-command OOM
 * state, which a script's denyoom calls and a writing script's start meet. */
static int script_oom(void) {
    return (atomic_load_explicit(&admit_gate, memory_order_relaxed) & ADMIT_GATE_OOM) && evict_oom_state();
}

/* A library's code being run to learn its functions (FUNCTION LOAD, or a
 * worker loading a library for FCALL). */
struct load_ctx {
    long long start_ns;
    long long timeout_ms; /* 0: no limit */
    int quiet;            /* redis.log writes nothing: the library ran before */
};

/* Each worker's Lua heap, as of its last script (LuaJIT allocates on its
 * own, outside used_memory): written by its worker, summed by INFO. */
static _Atomic size_t vm_bytes[HK_MAX_THREADS];

static void vm_account(lua_State *L) {
    if (!current_worker) return;
    size_t n = (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB, 0);
    atomic_store_explicit(&vm_bytes[current_worker->id], n, memory_order_relaxed);
}

size_t script_vm_memory(void) {
    size_t n = 0;
    for (int i = 0; i < HK_MAX_THREADS; i++) n += atomic_load_explicit(&vm_bytes[i], memory_order_relaxed);
    return n;
}

struct lua_env {
    lua_State *L;
    unsigned runs; /* scripts run here, for the occasional GC step */
    int ref_globals, ref_handler; /* registry refs: the real globals, the error handler */
    unsigned long long gen, evict_gen;
    unsigned long long fn_gen; /* the function registry's, when its tables were filled */
    struct outbuf cap;         /* reply sink of redis.call */
    struct script_run *run;
    struct load_ctx *load;
    uint64_t rand_state;
};

#define REPL_NONE 0
#define REPL_AOF 1
#define REPL_REPLICA 2
#define REPL_ALL 3

/* Registry keys. */
#define REG_FUNCS "hk_scripts"
#define REG_FLAGS "hk_script_flags"
#define REG_HANDLER "hk_err_handler"
#define REG_ENV "hk_script_env"
#define REG_GLOBALS "hk_globals"
/* Functions: the environment of library code, the switch between its
 * load context and its run context, the functions this worker loaded
 * (lower-cased name -> {cb, flags, name, learn}) and the libraries they
 * came from (library id -> {name -> callback}), and what a load being
 * run registered so far (a list, and the names, to refuse a name twice). */
#define REG_FENV "hk_fenv"
#define REG_SET_LOADING "hk_set_loading"
#define REG_FN_NAMES "hk_fn_names"
#define REG_FN_LIBS "hk_fn_libs"
#define REG_LOAD_LIST "hk_load_list"
#define REG_LOAD_NAMES "hk_load_names"

/* The upvalue that compile() gives a script body whose returns it
 * rewrote: the function they pass their values through (see retwrap.c). */
#define RET_PASS "__hk_ret"

/* The Lua state of this thread's worker: one per worker, so the thread
 * names it (a registry lookup per redis.call showed in profiles). */
static _Thread_local struct lua_env *tl_env;

static struct lua_env *env_of(lua_State *L) {
    (void)L;
    return tl_env;
}

/* Raise a Redis-style error table {err=msg} (the message keeps its code),
 * with the script line that called us: level 1 is the Lua function that
 * called the C function raising, level 0 the function a hook runs in. */
static int raise_table_at(lua_State *L, int level);
static int raise_err_at(lua_State *L, const char *msg, size_t len, int level) {
    lua_newtable(L);
    lua_pushlstring(L, msg, len);
    lua_setfield(L, -2, "err");
    return raise_table_at(L, level);
}

/* Raise the error table at the top of the stack, naming where: the
 * first frame from `level` up that is the script's own code (a hook may
 * fire inside one of the sandbox's helper functions, chunks named "=..."). */
static int raise_table_at(lua_State *L, int level) {
    lua_Debug ar;
    for (int l = level; lua_getstack(L, l, &ar); l++) {
        if (!lua_getinfo(L, "Sl", &ar)) break;
        if (ar.currentline < 0 || ar.source[0] == '=') {
            if (l == level && level > 0) break; /* a C caller: name the script line only for hooks */
            continue;
        }
        lua_pushstring(L, ar.source);
        lua_setfield(L, -2, "source");
        lua_pushnumber(L, ar.currentline);
        lua_setfield(L, -2, "line");
        break;
    }
    return lua_error(L);
}

static int raise_err(lua_State *L, const char *msg, size_t len) { return raise_err_at(L, msg, len, 1); }

static int raise_errc(lua_State *L, const char *msg) { return raise_err(L, msg, strlen(msg)); }

/* t[name] without metamethods: converting a script's result runs outside
 * the protected call, where a metamethod's error could not be caught. */
static void raw_field(lua_State *L, int idx, const char *name) {
    if (idx < 0) idx = lua_gettop(L) + idx + 1;
    lua_pushstring(L, name);
    lua_rawget(L, idx);
}

/* ---- RESP -> Lua ------------------------------------------------------------ */

struct rparse {
    const char *p, *end;
};

static int rp_line(struct rparse *r, const char **s, size_t *n) {
    const char *q = r->p;
    while (q + 1 < r->end && !(q[0] == '\r' && q[1] == '\n')) q++;
    if (q + 1 >= r->end) return 0;
    *s = r->p;
    *n = (size_t)(q - r->p);
    r->p = q + 2;
    return 1;
}

static long long rp_ll(const char *s, size_t n) {
    long long v = 0;
    hk_str2ll(s, n, &v);
    return v;
}

/* Push the reply at r as a Lua value, by Redis's rules; returns 0 on a
 * malformed reply (never from our own writer). */
static int resp_to_lua(lua_State *L, struct rparse *r, int depth) {
    if (r->p >= r->end) return 0;
    if (!lua_checkstack(L, 8) || depth > 1000) return 0;
    char t = *r->p++;
    const char *s;
    size_t n;
    if (!rp_line(r, &s, &n)) return 0;
    switch (t) {
    case '+':
        lua_newtable(L);
        lua_pushlstring(L, s, n);
        lua_setfield(L, -2, "ok");
        return 1;
    case '-':
        lua_newtable(L);
        lua_pushlstring(L, s, n);
        lua_setfield(L, -2, "err");
        /* The command counted this error already (see error_reply_of). */
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "ignore_error_stats_update");
        return 1;
    case ':': lua_pushnumber(L, (lua_Number)rp_ll(s, n)); return 1;
    case '$':
    case '=': {
        long long len = rp_ll(s, n);
        if (len < 0) {
            lua_pushboolean(L, 0);
            return 1;
        }
        if (r->end - r->p < len + 2) return 0;
        if (t == '=') {
            /* verbatim: "fmt:text" */
            lua_newtable(L);
            lua_newtable(L);
            lua_pushlstring(L, r->p, len >= 3 ? 3 : (size_t)len);
            lua_setfield(L, -2, "format");
            lua_pushlstring(L, len >= 4 ? r->p + 4 : r->p, len >= 4 ? (size_t)len - 4 : 0);
            lua_setfield(L, -2, "string");
            lua_setfield(L, -2, "verbatim_string");
        } else {
            lua_pushlstring(L, r->p, (size_t)len);
        }
        r->p += len + 2;
        return 1;
    }
    case '*':
    case '~':
    case '%': {
        long long cnt = rp_ll(s, n);
        if (cnt < 0) {
            lua_pushboolean(L, 0);
            return 1;
        }
        if (t == '*') {
            lua_createtable(L, cnt > 1024 ? 1024 : (int)cnt, 0);
            for (long long i = 0; i < cnt; i++) {
                if (!resp_to_lua(L, r, depth + 1)) return 0;
                lua_rawseti(L, -2, (int)(i + 1));
            }
            return 1;
        }
        lua_newtable(L);
        lua_newtable(L);
        for (long long i = 0; i < cnt; i++) {
            if (!resp_to_lua(L, r, depth + 1)) return 0;
            if (t == '%') {
                if (!resp_to_lua(L, r, depth + 1)) return 0;
            } else {
                lua_pushboolean(L, 1);
            }
            lua_settable(L, -3);
        }
        lua_setfield(L, -2, t == '%' ? "map" : "set");
        return 1;
    }
    case '_': lua_pushnil(L); return 1;
    case '#': lua_pushboolean(L, n && s[0] == 't'); return 1;
    case ',': {
        char buf[64];
        size_t m = n < sizeof(buf) - 1 ? n : sizeof(buf) - 1;
        memcpy(buf, s, m);
        buf[m] = '\0';
        lua_newtable(L);
        lua_pushnumber(L, strtod(buf, NULL));
        lua_setfield(L, -2, "double");
        return 1;
    }
    case '(':
        lua_newtable(L);
        lua_pushlstring(L, s, n);
        lua_setfield(L, -2, "big_number");
        return 1;
    default: return 0;
    }
}

/* A copy of s[0, n) on one line (CR and LF become spaces), for the
 * replies that cannot span lines; the caller frees it. */
static char *one_line(const char *s, size_t n) {
    char *m = hk_malloc(n + 1);
    for (size_t i = 0; i < n; i++) m[i] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
    m[n] = '\0';
    return m;
}

/* ---- Lua -> RESP ------------------------------------------------------------ */

/* Reply error text m as the script's error. One that repeats the error of
 * a command the script called (the table says ignore_error_stats_update,
 * as Redis's does) makes the script's call fail but is not counted again
 * in the error statistics. */
static void error_reply_of(lua_State *L, int table, struct cmd_ctx *c, const char *m, size_t n) {
    raw_field(L, table, "ignore_error_stats_update");
    int repeat = lua_type(L, -1) == LUA_TBOOLEAN && lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (!repeat) {
        reply_error_len(c, m, n);
        return;
    }
    c->errors++;
    if (!reply_muted(c)) rw_error(c->out, m, n);
}

/* Number of array elements of the table at idx, counted as Redis does:
 * 1, 2, ... up to the first nil. */
static long long array_len(lua_State *L, int idx) {
    long long n = 0;
    for (;;) {
        lua_rawgeti(L, idx, (int)(n + 1));
        int nil = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (nil) return n;
        n++;
    }
}

/* Write the Lua value at the top of the stack into c's sink, by Redis's
 * rules; pops nothing. script_resp is what redis.setresp chose. */
static void lua_to_resp(lua_State *L, struct cmd_ctx *c, int script_resp, int depth) {
    int top = lua_gettop(L);
    if (depth > 1000 || !lua_checkstack(L, 8)) {
        reply_error(c, "ERR reached lua stack limit");
        return;
    }
    switch (lua_type(L, top)) {
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, top, &n);
        reply_bulk(c, s, n);
        return;
    }
    case LUA_TBOOLEAN:
        if (script_resp == 2) {
            if (lua_toboolean(L, top)) reply_int(c, 1);
            else reply_null(c);
        } else {
            reply_bool(c, lua_toboolean(L, top));
        }
        return;
    case LUA_TNUMBER: reply_int(c, (long long)lua_tonumber(L, top)); return;
    case LUA_TTABLE: break;
    default: reply_null(c); return;
    }
    /* {err=...}: an error reply. */
    raw_field(L, top, "err");
    if (lua_type(L, -1) == LUA_TSTRING) {
        size_t n;
        const char *s = lua_tolstring(L, -1, &n);
        /* One line: as Redis, CR/LF at the end go, others become spaces. */
        while (n && (s[n - 1] == '\r' || s[n - 1] == '\n')) n--;
        char *m = one_line(s, n);
        error_reply_of(L, top, c, m, n);
        hk_free(m);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    raw_field(L, top, "ok");
    if (lua_type(L, -1) == LUA_TSTRING) {
        size_t n;
        const char *s = lua_tolstring(L, -1, &n);
        char *m = one_line(s, n);
        if (!reply_muted(c)) rw_simple(c->out, m, n);
        hk_free(m);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    raw_field(L, top, "double");
    if (lua_type(L, -1) == LUA_TNUMBER) {
        reply_double(c, lua_tonumber(L, -1));
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    raw_field(L, top, "big_number");
    if (lua_type(L, -1) == LUA_TSTRING) {
        size_t n;
        const char *s = lua_tolstring(L, -1, &n);
        char *m = one_line(s, n);
        if (!reply_muted(c)) rw_bignum(c->out, c->resp, m, n);
        hk_free(m);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    raw_field(L, top, "map");
    if (lua_type(L, -1) == LUA_TTABLE) {
        int m = lua_gettop(L);
        long long pairs = 0;
        void *h = reply_defer(c);
        lua_pushnil(L);
        while (lua_next(L, m)) {
            lua_pushvalue(L, -2);
            lua_to_resp(L, c, script_resp, depth + 1);
            lua_pop(L, 1);
            lua_to_resp(L, c, script_resp, depth + 1);
            lua_pop(L, 1);
            pairs++;
        }
        reply_fill_map(c, h, pairs);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    raw_field(L, top, "set");
    if (lua_type(L, -1) == LUA_TTABLE) {
        int m = lua_gettop(L);
        long long cnt = 0;
        void *h = reply_defer(c);
        lua_pushnil(L);
        while (lua_next(L, m)) {
            lua_pop(L, 1);
            lua_pushvalue(L, -1);
            lua_to_resp(L, c, script_resp, depth + 1);
            lua_pop(L, 1);
            cnt++;
        }
        reply_fill_set(c, h, cnt);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    raw_field(L, top, "verbatim_string");
    if (lua_type(L, -1) == LUA_TTABLE) {
        raw_field(L, -1, "format");
        raw_field(L, -2, "string");
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING) {
            size_t sl;
            const char *f = lua_tostring(L, -2);
            const char *s = lua_tolstring(L, -1, &sl);
            /* As Redis: three characters, cut there, blank-padded after
             * the end of a shorter format. */
            char fmt[4] = "   ";
            for (int i = 0; i < 3 && f[i]; i++) fmt[i] = f[i];
            reply_verbatim(c, s, sl, fmt);
            lua_pop(L, 3);
            return;
        }
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    /* An array, up to the first nil. */
    long long n = array_len(L, top);
    reply_array(c, n);
    for (long long i = 1; i <= n; i++) {
        lua_rawgeti(L, top, (int)i);
        lua_to_resp(L, c, script_resp, depth + 1);
        lua_pop(L, 1);
    }
}

/* ---- the redis library ------------------------------------------------------ */

/* A Lua number as a command argument: integers without a fraction, others
 * in their shortest exact form. */
static size_t number_arg(lua_Number d, char *buf, size_t size) {
    if (d == floor(d) && fabs(d) < 1e17) return (size_t)snprintf(buf, size, "%lld", (long long)d);
    for (int prec = 15; prec <= 17; prec++) {
        int n = snprintf(buf, size, "%.*g", prec, d);
        if (strtod(buf, NULL) == d || prec == 17) return (size_t)n;
    }
    return 0;
}

#define CALL_ARGS_INLINE 16

/* Whether a call reaches a shard that none of the script's KEYS lives in
 * (or every shard). */
static int call_undeclared(const struct script_run *run, const struct command *cmd, const hk_slice *argv, int argc) {
    if (cmd->flags & (CMD_ALL_SHARDS | CMD_SHARDWISE | CMD_MAY_LOCK_ALL)) return 1;
    if (cmd->key_kind == KEYS_NONE) return 0;
    int inl[CALL_ARGS_INLINE];
    int *idx = argc <= CALL_ARGS_INLINE ? inl : hk_malloc((size_t)argc * sizeof(int));
    int n = command_keys(cmd, argv, argc, idx), out = 0;
    for (int i = 0; i < n && !out; i++) {
        unsigned s = ks_shard_of(argv[idx[i]].ptr, argv[idx[i]].len);
        int found = 0;
        for (int j = 0; j < run->nkeys && !found; j++) found = ks_shard_of(run->keys[j].ptr, run->keys[j].len) == s;
        out = !found;
    }
    if (idx != inl) hk_free(idx);
    return out;
}

/* An error of redis.call's own (its arguments, not the command's reply):
 * raised by redis.call, returned as an {err=...} table by redis.pcall. */
static int call_error(lua_State *L, int raise, const char *msg) {
    if (raise) return raise_errc(L, msg);
    lua_newtable(L);
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "err");
    return 1;
}

static void count_hook(lua_State *L, lua_Debug *ar);

/* redis.call / redis.pcall. raise: errors are raised (call) or returned
 * as {err=...} tables (pcall). What this allocates lives on the Lua stack,
 * so that a Lua error (out of memory) thrown half-way leaks nothing. */
static int redis_generic_call(lua_State *L, int raise) {
    struct lua_env *e = env_of(L);
    struct script_run *run = e->run;
    int argc = lua_gettop(L);
    if (!run) return raise_errc(L, "ERR redis.call is not available outside a script");
    if (run->restart || run->killed) return raise_errc(L, run->killed ? "ERR Script killed by user with SCRIPT KILL..." : "ERR script restarted");
    if (argc == 0) return call_error(L, raise, "ERR Please specify at least one argument for this redis lib call");
    for (int i = 1; i <= argc; i++) {
        int t = lua_type(L, i);
        if (t != LUA_TNUMBER && t != LUA_TSTRING)
            return call_error(L, raise, "ERR Lua redis lib command arguments must be strings or integers");
    }
    /* Two slots at most are pushed before the arguments are dropped, which
     * the LUA_MINSTACK slots every C function starts with cover (even with
     * more arguments than lua_checkstack would grant). */
    hk_slice inl[CALL_ARGS_INLINE];
    hk_slice *argv = argc <= CALL_ARGS_INLINE ? inl : lua_newuserdata(L, (size_t)argc * sizeof(hk_slice));
    /* Numbers are turned into strings kept in their stack slots, so every
     * slice stays valid until the call returns. */
    for (int i = 1; i <= argc; i++) {
        if (lua_type(L, i) == LUA_TNUMBER) {
            char buf[64];
            size_t n = number_arg(lua_tonumber(L, i), buf, sizeof(buf));
            lua_pushlstring(L, buf, n);
            lua_replace(L, i);
        }
        size_t n;
        argv[i - 1].ptr = lua_tolstring(L, i, &n);
        argv[i - 1].len = n;
    }
    struct cmd_ctx *sc = &run->sctx;
    struct outbuf *cap = &e->cap;
    /* What a conversion cut short by a Lua error left behind. */
    if (cap->pending) ob_consume(cap, cap->pending);
    sc->argv = argv;
    sc->argc = argc;
    sc->out = cap;
    sc->resp = run->resp;
    sc->errors = 0;
    unsigned who = run->ro ? ADM_NO_WRITES : 0;
    if (sc->acl_of && !(acl_client_user(sc->acl_of, sc->acl_of->user ? sc->acl_of->user : &acl_default_ident,
                                        sc->acl_of->acl, sc->acl_of->acl_gen)->flags & USER_ALLPERM))
        who |= ADM_ACL;
    /* Redis's scriptVerifyOOM: only before the script's first write. */
    if (run->oom && !run->wrote && !(run->flags & SCRIPT_FLAG_ALLOW_OOM)) who |= ADM_OOM;
    int adm = exec_admit(sc, ADMIT_SCRIPT, who, 0);
    int conflict = 0;
    if (adm == ADMIT_OK) {
        const struct command *cmd = sc->cmd;
        if (cmd->flags & CMD_WRITE) run->wrote = 1;
        if (run->learning && !run->undeclared) run->undeclared = call_undeclared(run, cmd, argv, argc);
        struct prop_mark before;
        exec_prop_mark(sc, &before);
        int st = exec_nested(sc, cmd, argv, argc);
        if (st == HK_ERR_LOCK_CONFLICT) conflict = 1;
        /* MONITOR shows what a script ran as "[db lua]", after the EVAL. */
        if (atomic_load_explicit(&monitor_count, memory_order_relaxed) && !(cmd->flags & (CMD_SKIP_MONITOR | CMD_ADMIN)))
            monitor_feed(NULL, cmd, argv, argc, sc->db);
        /* redis.set_repl(REPL_NONE): the write happens, nothing of it
         * propagates. */
        if (run->repl == REPL_NONE && (sc->flags & CTX_JOURNAL)) {
            sc->prop->out.len = before.off;
            sc->prop->ncmds = before.ncmds;
        }
        if (sc->w) {
            struct cmdstat *cs = &sc->w->cmdstats[cmd->id];
            stat_add(&cs->calls, 1);
            if (sc->errors) stat_add(&cs->failed, 1);
        }
    }
    /* The arguments are done with: their slots are the reply's. */
    lua_settop(L, 0);
    /* Shards it could not have while nothing was written yet: abandon the
     * run, the caller takes every shard and runs the script again. */
    if (conflict && !run->wrote && !(run->caller->flags & CTX_NESTED)) {
        run->restart = 1;
        ob_free(cap);
        ob_init(cap);
        /* From here on every line raises, so a pcall cannot keep it. */
        lua_sethook(L, count_hook, LUA_MASKLINE, 0);
        return raise_errc(L, "ERR script restarted");
    }
    /* The reply, flattened when it spans blocks. */
    const char *p;
    size_t len;
    if (cap->head && !cap->head->next) {
        p = cap->head->data + cap->head->sent;
        len = cap->head->len - cap->head->sent;
    } else {
        len = cap->pending;
        char *flat = lua_newuserdata(L, len ? len : 1);
        size_t off = 0;
        for (struct ob_block *b = cap->head; b; b = b->next) {
            memcpy(flat + off, b->data + b->sent, b->len - b->sent);
            off += b->len - b->sent;
        }
        p = flat;
    }
    struct rparse r = {p, p + len};
    int is_err = len > 0 && p[0] == '-';
    int ok = resp_to_lua(L, &r, 0);
    if (cap->nblocks > 4) {
        ob_free(cap);
        ob_init(cap);
    } else {
        ob_consume(cap, cap->pending);
    }
    if (!ok) return raise_errc(L, "ERR reply could not be converted for the script");
    if (is_err && raise) return raise_table_at(L, 1);
    return 1;
}

static int l_redis_call(lua_State *L) { return redis_generic_call(L, 1); }
static int l_redis_pcall(lua_State *L) { return redis_generic_call(L, 0); }

/* The redis.* functions below fail as Redis's do: a raised {err=...}
 * table (its line is added), never a luaL_error string, except where
 * Redis itself uses luaL_error (math.random). */

static int l_redis_sha1hex(lua_State *L) {
    if (lua_gettop(L) != 1) return raise_errc(L, "ERR wrong number of arguments");
    size_t n;
    const char *s = lua_tolstring(L, 1, &n);
    if (!s) s = "", n = 0;
    char hex[41];
    sha1_hex(s, n, hex);
    lua_pushstring(L, hex);
    return 1;
}

/* {field=<the one string argument>}; wrong arguments give back (do not
 * raise) an error table, as in Redis. */
static int reply_table(lua_State *L, const char *field) {
    if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) return call_error(L, 0, "ERR wrong number or type of arguments");
    lua_newtable(L);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, field);
    return 1;
}

/* redis.error_reply(msg): as Redis forms an error, a leading '-' is the
 * code's marker, the first word is the code (ERR when there is no second
 * word), and CR/LF around the rest are trimmed. */
static int l_redis_error_reply(lua_State *L) {
    if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) return call_error(L, 0, "ERR wrong number or type of arguments");
    size_t n;
    const char *s = lua_tolstring(L, 1, &n);
    if (n && s[0] == '-') s++, n--;
    const char *sp = memchr(s, ' ', n);
    const char *code = sp ? s : "ERR", *msg = sp ? sp + 1 : s;
    size_t codelen = sp ? (size_t)(sp - s) : 3, msglen = (size_t)(s + n - msg);
    while (msglen && (*msg == '\r' || *msg == '\n')) msg++, msglen--;
    while (msglen && (msg[msglen - 1] == '\r' || msg[msglen - 1] == '\n')) msglen--;
    lua_newtable(L);
    lua_pushlstring(L, code, codelen);
    lua_pushliteral(L, " ");
    lua_pushlstring(L, msg, msglen);
    lua_concat(L, 3);
    lua_setfield(L, -2, "err");
    return 1;
}

static int l_redis_status_reply(lua_State *L) { return reply_table(L, "ok"); }

static int l_redis_log(lua_State *L) {
    int argc = lua_gettop(L);
    if (argc < 2) return raise_errc(L, "ERR redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1)) return raise_errc(L, "ERR First argument must be a number (log level).");
    int level = (int)lua_tonumber(L, 1);
    if (level < LL_DEBUG || level > LL_WARNING) return raise_errc(L, "ERR Invalid log level.");
    char msg[1024];
    size_t off = 0;
    for (int i = 2; i <= argc && off < sizeof(msg) - 1; i++) {
        size_t n;
        const char *s = lua_tolstring(L, i, &n);
        if (!s) continue;
        if (i > 2 && off < sizeof(msg) - 1) msg[off++] = ' ';
        if (n > sizeof(msg) - 1 - off) n = sizeof(msg) - 1 - off;
        memcpy(msg + off, s, n);
        off += n;
    }
    msg[off] = '\0';
    struct lua_env *e = env_of(L);
    if (!(e->load && e->load->quiet)) hk_log(level, "%s", msg);
    return 0;
}

static int l_redis_setresp(lua_State *L) {
    struct lua_env *e = env_of(L);
    if (lua_gettop(L) != 1) return raise_errc(L, "ERR redis.setresp() requires one argument.");
    int v = (int)lua_tonumber(L, 1);
    if (v != 2 && v != 3) return raise_errc(L, "ERR RESP version must be 2 or 3.");
    if (e->run) e->run->resp = v;
    return 0;
}

static int l_redis_set_repl(lua_State *L) {
    struct lua_env *e = env_of(L);
    if (lua_gettop(L) != 1) return raise_errc(L, "ERR redis.set_repl() requires one argument.");
    int v = (int)lua_tonumber(L, 1);
    if (v & ~REPL_ALL)
        return raise_errc(L, "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    if (e->run) e->run->repl = v;
    return 0;
}

static int l_redis_replicate_commands(lua_State *L) {
    lua_pushboolean(L, 1);
    return 1;
}

/* redis.debug: a no-op outside the debugger, which HotKV does not have. */
static int l_redis_noop(lua_State *L) {
    (void)L;
    return 0;
}

/* redis.breakpoint: false, no debugging session being active. */
static int l_redis_breakpoint(lua_State *L) {
    lua_pushboolean(L, 0);
    return 1;
}

static int l_redis_acl_check_cmd(lua_State *L) {
    int argc = lua_gettop(L);
    if (argc < 1) return raise_errc(L, "ERR Please specify at least one argument for this redis lib call");
    for (int i = 1; i <= argc; i++)
        if (lua_type(L, i) != LUA_TNUMBER && lua_type(L, i) != LUA_TSTRING)
            return raise_errc(L, "ERR Lua redis lib command arguments must be strings or integers");
    size_t n;
    const char *name = lua_tolstring(L, 1, &n);
    struct command *cmd = cmd_lookup(name, n);
    if (cmd && cmd->nsubs && argc >= 2) {
        size_t sn;
        const char *sub = lua_tolstring(L, 2, &sn);
        cmd = sub ? cmd_lookup_sub(cmd, sub, sn) : NULL;
    }
    if (!cmd) return raise_errc(L, "ERR Invalid command passed to redis.acl_check_cmd()");
    struct lua_env *e = env_of(L);
    struct client *cl = e->run ? e->run->sctx.acl_of : NULL;
    int ok = 1;
    if (cl) {
        hk_slice stackv[16], *argv = argc <= 16 ? stackv : hk_malloc((size_t)argc * sizeof(hk_slice));
        for (int i = 1; i <= argc; i++) {
            size_t l;
            const char *p = lua_tolstring(L, i, &l);
            argv[i - 1] = (hk_slice){p, l};
        }
        struct acl_user *u = acl_client_user(cl, cl->user ? cl->user : &acl_default_ident, cl->acl, cl->acl_gen);
        int pos;
        ok = acl_check(u, cmd, argv, argc, &pos) == ACL_OK;
        if (argv != stackv) hk_free(argv);
    }
    lua_pushboolean(L, ok);
    return 1;
}

/* math.random / math.randomseed, deterministic as Redis makes them: the
 * same sequence at every script run (48-bit linear congruential). */
static int32_t rand31(struct lua_env *e) {
    e->rand_state = (e->rand_state * 0x5DEECE66DULL + 0xB) & ((1ULL << 48) - 1);
    return (int32_t)(e->rand_state >> 17);
}

static void rand_seed(struct lua_env *e, int32_t seed) { e->rand_state = ((uint64_t)(uint32_t)seed << 16) | 0x330E; }

static int l_math_random(lua_State *L) {
    struct lua_env *e = env_of(L);
    lua_Number r = (lua_Number)(rand31(e) % 2147483647) / (lua_Number)2147483647;
    switch (lua_gettop(L)) {
    case 0: lua_pushnumber(L, r); break;
    case 1: {
        int u = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= u, 1, "interval is empty");
        lua_pushnumber(L, floor(r * u) + 1);
        break;
    }
    case 2: {
        int l = luaL_checkint(L, 1), u = luaL_checkint(L, 2);
        luaL_argcheck(L, l <= u, 2, "interval is empty");
        lua_pushnumber(L, floor(r * (u - l + 1)) + l);
        break;
    }
    default: return luaL_error(L, "wrong number of arguments");
    }
    return 1;
}

static int l_math_randomseed(lua_State *L) {
    rand_seed(env_of(L), (int32_t)luaL_checkint(L, 1));
    return 0;
}

/* pcall as Redis 7 has it: an error that is an {err=...} table (a failed
 * redis.call, redis.error_reply raised) reaches the script as its message,
 * the string scripts written for older versions expect. */
static int l_pcall(lua_State *L) {
    int argc = lua_gettop(L);
    if (argc == 0) {
        /* What Redis answers: its pcall then calls its own placeholder. */
        lua_pushboolean(L, 0);
        lua_pushliteral(L, "attempt to call a boolean value");
        return 2;
    }
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) == 0) return lua_gettop(L);
    if (lua_istable(L, -1)) {
        raw_field(L, -1, "err");
        if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) lua_replace(L, -2);
        else lua_pop(L, 1);
    }
    lua_pushboolean(L, 0);
    lua_replace(L, 1);
    return 2;
}

/* load / loadstring: source text only (LuaJIT bytecode is not checked
 * when loaded: a crafted chunk could break the VM), and the chunk runs in
 * the scripts' environment, not with the real globals. Upvalue 1 is
 * LuaJIT's own load. */
static int l_load(lua_State *L) {
    int t = lua_type(L, 1);
    if (t != LUA_TSTRING && t != LUA_TNUMBER && t != LUA_TFUNCTION) return luaL_typerror(L, 1, "string");
    lua_settop(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_pushliteral(L, "t");
    lua_call(L, 3, 2);
    if (!lua_isfunction(L, 1)) return 2;
    lua_settop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_ENV);
    lua_setfenv(L, 1);
    return 1;
}

/* What a script's rewritten `return E` calls (retwrap.c): E's values,
 * unchanged. */
static int l_ret_pass(lua_State *L) { return lua_gettop(L); }

/* A copy of what FUNCTION STATS shows of a busy script. */
static struct busy_rec *busy_rec_new(const struct script_run *run) {
    const struct cmd_ctx *c = run->caller;
    size_t nl = strlen(run->name), bytes = nl + 1;
    for (int i = 0; i < c->argc; i++) bytes += c->argv[i].len;
    struct busy_rec *r = hk_malloc(sizeof(*r) + (size_t)c->argc * sizeof(hk_slice) + bytes);
    r->w = c->w;
    r->is_function = run->is_function;
    r->start_ns = run->start_ns;
    r->argc = c->argc;
    r->argv = (hk_slice *)(r + 1);
    char *p = (char *)(r->argv + c->argc);
    for (int i = 0; i < c->argc; i++) {
        if (c->argv[i].len) memcpy(p, c->argv[i].ptr, c->argv[i].len);
        r->argv[i].ptr = p;
        r->argv[i].len = c->argv[i].len;
        p += c->argv[i].len;
    }
    memcpy(p, run->name, nl + 1);
    r->name = p;
    return r;
}

/* Past busy-reply-threshold: other clients get -BUSY, waits for the
 * script's shards give up, the kill commands can reach it. */
static void run_begin_busy(struct script_run *run) {
    struct worker *w = run->caller->w;
    run->busy = 1;
    if (!w) return;
    atomic_store(&w->script_wrote, run->wrote);
    struct busy_rec *r = busy_rec_new(run);
    pthread_mutex_lock(&busy_mu);
    r->next = busy_list;
    busy_list = r;
    if (run->is_function) atomic_fetch_add(&functions_busy, 1);
    atomic_store(&w->script_busy, 1);
    pthread_mutex_unlock(&busy_mu);
    run->rec = r;
    atomic_fetch_add(&scripts_busy, 1);
    atomic_store(&ls_wait_abort, 1);
}

/* The instruction hook: busy-reply-threshold and SCRIPT KILL. */
static void count_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    struct lua_env *e = env_of(L);
    struct script_run *run = e->run;
    if (!run) return;
    struct worker *w = run->caller->w;
    if (!run->busy) {
        long long limit = CFG(busy_reply_threshold);
        if (limit > 0 && hk_clock_ns() - run->start_ns >= limit * 1000000LL) {
            run_begin_busy(run);
            hk_log(LL_WARNING, "Slow script detected: still in execution after %lld milliseconds. You can try "
                               "killing the script using the %s command. Script name is: %s.",
                   limit, run->is_function ? "FUNCTION KILL" : "SCRIPT KILL", run->name);
        }
    } else if (w) {
        atomic_store(&w->script_wrote, run->wrote);
    }
    if (run->busy && w) {
        /* Like Redis serving events while a script is busy: this worker's
         * other connections get -BUSY, or run SCRIPT KILL or SHUTDOWN. */
        worker_busy_poll(w);
    }
    if (atomic_load(&server.shutdown_asap) && !run->killed) {
        /* SHUTDOWN NOSAVE: the script ends here, written or not. */
        static const char gone[] = "ERR Script killed by SHUTDOWN";
        run->killed = 1;
        lua_sethook(L, count_hook, LUA_MASKLINE, 0);
        raise_err_at(L, gone, sizeof(gone) - 1, 0);
    }
    if (run->restart) {
        lua_sethook(L, count_hook, LUA_MASKLINE, 0);
        raise_err_at(L, "ERR script restarted", 20, 0);
    }
    if (run->killed || (w && atomic_load(&w->script_kill))) {
        static const char killed[] = "ERR Script killed by user with SCRIPT KILL...";
        run->killed = 1;
        lua_sethook(L, count_hook, LUA_MASKLINE, 0);
        raise_err_at(L, killed, sizeof(killed) - 1, 0);
    }
}

/* Globals a script may not create or read when missing (Redis's
 * protection), and the error handler that turns an error into a table
 * with where it happened. Also the environment of function libraries:
 * while a library's code is being loaded it sees only `redis`, the load
 * API (LR: register_function, log and the constants, read-only, a missing
 * field an error); its functions, when called, see what scripts see. */
static const char sandbox_lua[] =
    "local G, LR = ...\n"
    "local err_fn, rawget, rawset, setmt, getmt, tostring, type = error, rawget, rawset, setmetatable, getmetatable, tostring, type\n"
    "local dinfo = debug.getinfo\n"
    "local RO = 'Attempt to modify a readonly table'\n"
    "local env = {}\n"
    "local protected = setmt({}, {__mode = 'k'})\n"
    "local function ro_meta(m)\n"
    "  local face = setmt({}, {__index = m, __newindex = function() err_fn(RO, 2) end, __metatable = false})\n"
    "  m.__metatable = face\n"
    "  protected[face] = true\n"
    "  return m\n"
    "end\n"
    "setmt(env, ro_meta({\n"
    "  __index = function(_, k)\n"
    "    if k == '_G' then return env end\n"
    "    local v = rawget(G, k)\n"
    "    if v == nil then err_fn(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. \"'\", 2) end\n"
    "    return v\n"
    "  end,\n"
    "  __newindex = function() err_fn(RO, 2) end,\n"
    "}))\n"
    "protected[env] = true\n"
    "local loading = false\n"
    "local lredis = setmt({}, ro_meta({\n"
    "  __index = function(_, k)\n"
    "    local v = rawget(LR, k)\n"
    "    if v == nil then err_fn(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. \"'\", 2) end\n"
    "    return v\n"
    "  end,\n"
    "  __newindex = function() err_fn(RO, 2) end,\n"
    "}))\n"
    "protected[lredis] = true\n"
    "local fenv = {}\n"
    "setmt(fenv, ro_meta({\n"
    "  __index = function(_, k)\n"
    "    if loading then\n"
    "      if k == 'redis' then return lredis end\n"
    "      err_fn(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. \"'\", 2)\n"
    "    end\n"
    "    if k == '_G' then return fenv end\n"
    "    local v = rawget(G, k)\n"
    "    if v == nil then err_fn(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. \"'\", 2) end\n"
    "    return v\n"
    "  end,\n"
    "  __newindex = function() err_fn(RO, 2) end,\n"
    "}))\n"
    "protected[fenv] = true\n"
    "local function set_loading(on) loading = on end\n"
    "local smt = getmt('')\n"
    "ro_meta(smt)\n"
    "G.rawset = function(t, k, v)\n"
    "  if protected[t] then err_fn(RO, 0) end\n"
    "  return rawset(t, k, v)\n"
    "end\n"
    "G.setmetatable = function(t, m)\n"
    "  if protected[t] then err_fn(RO, 0) end\n"
    "  return setmt(t, m)\n"
    "end\n"
    "local function handler(e)\n"
    "  if type(e) ~= 'table' then e = {err = 'ERR ' .. tostring(e)}\n"
    "  elseif protected[e] then e = {err = rawget(e, 'err')} end\n"
    "  if rawget(e, 'source') == nil then\n"
    "    local lvl = 2\n"
    "    while true do\n"
    "      local w = dinfo(lvl, 'Sl')\n"
    "      if not w then break end\n"
    "      if w.what ~= 'C' and w.source:sub(1, 1) ~= '=' and w.currentline >= 0 then\n"
    "        rawset(e, 'source', w.source); rawset(e, 'line', w.currentline); break\n"
    "      end\n"
    "      lvl = lvl + 1\n"
    "    end\n"
    "  end\n"
    "  return e\n"
    "end\n"
    "local function protect(t) protected[t] = true; return t end\n"
    "local function lock()\n"
    "  smt.__index = rawget(G, 'string')\n"
    "  setmt(G, ro_meta({\n"
    "    __index = function(_, k)\n"
    "      err_fn(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. \"'\", 2)\n"
    "    end,\n"
    "    __newindex = function() err_fn(RO, 2) end,\n"
    "  }))\n"
    "  protected[G] = true\n"
    "end\n"
    "return env, handler, fenv, set_loading, protect, lock\n";

/* Make the table at the top of the stack read-only for scripts: writes
 * raise "Attempt to modify a readonly table". */
static const char readonly_lua[] =
    "local t, protect = ...\n"
    "local proxy = {}\n"
    "local face = setmetatable({}, {__newindex = function() error('Attempt to modify a readonly table', 2) end,\n"
    "  __metatable = false})\n"
    "setmetatable(proxy, {__index = t, __newindex = function() error('Attempt to modify a readonly table', 2) end,\n"
    "  __metatable = face})\n"
    "protect(proxy)\n"
    "return proxy\n";

/* Replace global `global` by a read-only face of it (protect: the
 * sandbox's function that makes rawset and setmetatable refuse it). */
static void make_readonly(lua_State *L, const char *global, int protect) {
    luaL_loadbuffer(L, readonly_lua, sizeof(readonly_lua) - 1, "=readonly");
    lua_getglobal(L, global);
    lua_pushvalue(L, protect);
    lua_call(L, 2, 1);
    lua_setglobal(L, global);
}

static void open_lib(lua_State *L, const char *name, lua_CFunction fn) {
    lua_pushcfunction(L, fn);
    lua_pushstring(L, name);
    lua_call(L, 1, 0);
}

/* redis.REDIS_VERSION and REDIS_VERSION_NUM into the table on top. */
static void set_version_fields(lua_State *L) {
    lua_pushstring(L, HK_REDIS_COMPAT_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    int a = 0, b = 0, c = 0;
    sscanf(HK_REDIS_COMPAT_VERSION, "%d.%d.%d", &a, &b, &c);
    lua_pushnumber(L, (a << 16) | (b << 8) | c);
    lua_setfield(L, -2, "REDIS_VERSION_NUM");
}

static int l_register_function(lua_State *L);

/* Push the `redis` a library's code sees while it loads (the sandbox
 * makes it read-only). */
static void push_load_api(lua_State *L) {
    lua_newtable(L);
    lua_pushcfunction(L, l_register_function);
    lua_setfield(L, -2, "register_function");
    lua_pushcfunction(L, l_redis_log);
    lua_setfield(L, -2, "log");
    static const struct {
        const char *name;
        int v;
    } levels[] = {{"LOG_DEBUG", LL_DEBUG}, {"LOG_VERBOSE", LL_VERBOSE}, {"LOG_NOTICE", LL_NOTICE}, {"LOG_WARNING", LL_WARNING}};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        lua_pushnumber(L, levels[i].v);
        lua_setfield(L, -2, levels[i].name);
    }
    set_version_fields(L);
}

static struct lua_env *env_new(struct worker *w) {
    struct lua_env *e = hk_calloc(1, sizeof(*e));
    lua_State *L = luaL_newstate();
    if (!L) {
        hk_log(LL_WARNING, "Lua: cannot create a state");
        abort();
    }
    e->L = L;
    ob_init(&e->cap);
    /* The interpreter only: compiled traces skip the instruction hook,
     * and SCRIPT KILL must reach every loop. */
    luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
    lua_pushlightuserdata(L, e);
    lua_setfield(L, LUA_REGISTRYINDEX, "hk_env");
    tl_env = e;
    open_lib(L, "", luaopen_base);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, LUA_DBLIBNAME, luaopen_debug);
    open_lib(L, LUA_BITLIBNAME, luaopen_bit);
    open_lib(L, LUA_OSLIBNAME, luaopen_os);
    hk_luaopen_cjson(L);
    lua_setglobal(L, "cjson");
    hk_luaopen_cmsgpack(L);
    lua_setglobal(L, "cmsgpack");
    hk_luaopen_struct(L);
    lua_setglobal(L, "struct");
    /* What scripts may not reach: files, processes, bytecode loading. */
    lua_pushnil(L);
    lua_setglobal(L, "loadfile");
    lua_pushnil(L);
    lua_setglobal(L, "dofile");
    lua_pushnil(L);
    lua_setglobal(L, "print");
    /* os: the clock only. */
    lua_getglobal(L, "os");
    lua_getfield(L, -1, "clock");
    lua_newtable(L);
    lua_insert(L, -2);
    lua_setfield(L, -2, "clock");
    lua_setglobal(L, "os");
    lua_pop(L, 1);
    /* Deterministic math.random. */
    lua_getglobal(L, "math");
    lua_pushcfunction(L, l_math_random);
    lua_setfield(L, -2, "random");
    lua_pushcfunction(L, l_math_randomseed);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_pcall);
    lua_setglobal(L, "pcall");
    lua_getglobal(L, "load");
    lua_pushcclosure(L, l_load, 1);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "load");
    lua_setglobal(L, "loadstring");
    /* Gone from Redis's scripts: they let a script reach and swap the
     * environments of functions it does not own. */
    static const char *removed[] = {"getfenv", "setfenv", "newproxy"};
    for (size_t i = 0; i < sizeof(removed) / sizeof(removed[0]); i++) {
        lua_pushnil(L);
        lua_setglobal(L, removed[i]);
    }
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_GLOBALS);

    /* The redis library. */
    lua_newtable(L);
    static const luaL_Reg fns[] = {
        {"call", l_redis_call},
        {"pcall", l_redis_pcall},
        {"sha1hex", l_redis_sha1hex},
        {"error_reply", l_redis_error_reply},
        {"status_reply", l_redis_status_reply},
        {"log", l_redis_log},
        {"setresp", l_redis_setresp},
        {"set_repl", l_redis_set_repl},
        {"replicate_commands", l_redis_replicate_commands},
        {"breakpoint", l_redis_breakpoint},
        {"debug", l_redis_noop},
        {"acl_check_cmd", l_redis_acl_check_cmd},
        {NULL, NULL},
    };
    for (const luaL_Reg *f = fns; f->name; f++) {
        lua_pushcfunction(L, f->func);
        lua_setfield(L, -2, f->name);
    }
    static const struct {
        const char *name;
        int v;
    } consts[] = {
        {"LOG_DEBUG", LL_DEBUG},   {"LOG_VERBOSE", LL_VERBOSE},   {"LOG_NOTICE", LL_NOTICE},
        {"LOG_WARNING", LL_WARNING}, {"REPL_NONE", REPL_NONE},     {"REPL_AOF", REPL_AOF},
        {"REPL_SLAVE", REPL_REPLICA}, {"REPL_REPLICA", REPL_REPLICA}, {"REPL_ALL", REPL_ALL},
    };
    for (size_t i = 0; i < sizeof(consts) / sizeof(consts[0]); i++) {
        lua_pushnumber(L, consts[i].v);
        lua_setfield(L, -2, consts[i].name);
    }
    set_version_fields(L);
    lua_setglobal(L, "redis");

    /* Sandbox: the environment of every script, and the error handler. */
    if (luaL_loadbuffer(L, sandbox_lua, sizeof(sandbox_lua) - 1, "=sandbox") != 0) {
        hk_log(LL_WARNING, "Lua sandbox: %s", lua_tostring(L, -1));
        abort();
    }
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    push_load_api(L);
    lua_call(L, 2, 6);
    int protect = lua_gettop(L) - 1;
    static const char *ro[] = {"redis", "cjson", "cmsgpack", "struct", "bit", "string", "table", "math", "os", "coroutine"};
    for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) make_readonly(L, ro[i], protect);
    /* debug is the handler's alone. */
    lua_pushnil(L);
    lua_setglobal(L, "debug");
    /* The real globals become read-only too (no script should reach them,
     * this is the second line of defence); from here on C sets globals
     * with rawset only. */
    lua_call(L, 0, 0);
    lua_pop(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_SET_LOADING);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_FENV);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_HANDLER);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_ENV);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_FN_NAMES);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_FN_LIBS);
    e->fn_gen = fn_generation();
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_FUNCS);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_FLAGS);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_GLOBALS);
    e->ref_globals = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_HANDLER);
    e->ref_handler = luaL_ref(L, LUA_REGISTRYINDEX);
    e->gen = atomic_load(&cache_gen);
    e->evict_gen = atomic_load(&cache_evict_gen);
    rand_seed(e, 0);
    (void)w;
    return e;
}

static struct lua_env *worker_env(struct worker *w) {
    if (!w->lua) w->lua = env_new(w);
    struct lua_env *e = w->lua;
    unsigned long long fg = fn_generation();
    if (e->fn_gen != fg) {
        /* The function registry changed: forget the libraries loaded here
         * (what a function learned about its keys goes with them). */
        lua_newtable(e->L);
        lua_setfield(e->L, LUA_REGISTRYINDEX, REG_FN_NAMES);
        lua_newtable(e->L);
        lua_setfield(e->L, LUA_REGISTRYINDEX, REG_FN_LIBS);
        e->fn_gen = fg;
    }
    unsigned long long g = atomic_load(&cache_gen);
    if (e->gen != g) {
        /* SCRIPT FLUSH: forget compiled scripts. */
        lua_newtable(e->L);
        lua_setfield(e->L, LUA_REGISTRYINDEX, REG_FUNCS);
        lua_newtable(e->L);
        lua_setfield(e->L, LUA_REGISTRYINDEX, REG_FLAGS);
        lua_gc(e->L, LUA_GCCOLLECT, 0);
        e->gen = g;
    }
    unsigned long long eg = atomic_load(&cache_evict_gen);
    if (e->evict_gen != eg) {
        /* EVAL scripts left the cache: so do their compiled copies. */
        e->evict_gen = eg;
        lua_State *L = e->L;
        lua_getfield(L, LUA_REGISTRYINDEX, REG_FLAGS);
        lua_getfield(L, LUA_REGISTRYINDEX, REG_FUNCS);
        int flags_t = lua_gettop(L) - 1, funcs_t = lua_gettop(L);
        lua_newtable(L);
        int gone = lua_gettop(L), ngone = 0;
        pthread_rwlock_rdlock(&cache_lock);
        lua_pushnil(L);
        while (lua_next(L, flags_t)) {
            lua_pop(L, 1);
            const char *sha = lua_tostring(L, -1);
            if (sha && !cache_find(sha)) {
                lua_pushvalue(L, -1);
                lua_rawseti(L, gone, ++ngone);
            }
        }
        pthread_rwlock_unlock(&cache_lock);
        for (int i = 1; i <= ngone; i++) {
            lua_rawgeti(L, gone, i);
            lua_pushnil(L);
            lua_settable(L, flags_t);
            lua_rawgeti(L, gone, i);
            lua_pushnil(L);
            lua_settable(L, funcs_t);
        }
        lua_settop(L, flags_t - 1);
    }
    return e;
}

void script_worker_free(struct worker *w) {
    struct lua_env *e = w->lua;
    if (!e) return;
    lua_close(e->L);
    if (tl_env == e) tl_env = NULL;
    ob_free(&e->cap);
    hk_free(e);
    w->lua = NULL;
}

/* Compile body as script sha into the worker's state and cache the
 * function (and its flags). Returns 0, or -1 with the error text. */
static int compile(struct lua_env *e, const char *sha, const char *body, size_t len, unsigned *flagsp, char *err,
                   size_t errlen) {
    lua_State *L = e->L;
    unsigned flags;
    size_t skip;
    if (parse_shebang(body, len, &flags, &skip, err, errlen) < 0) return -1;
    /* The body with its returns rewritten (retwrap.c: a C function called
     * in a return keeps the script's frame, so its errors name the line as
     * in Redis), as a vararg function made by a chunk that hands it the
     * pass-through function; the body as written when that does not
     * compile, which also gives a compile error its exact text. */
    size_t wlen;
    char *wrapped = hk_lua_wrap_returns(body + skip, len - skip, "local " RET_PASS " = ...; return function(...) ",
                                        "\nend", RET_PASS, &wlen);
    int tried = wrapped != NULL;
    int rc = tried ? luaL_loadbuffer(L, wrapped, wlen, "@user_script") : -1;
    hk_free(wrapped);
    if (rc == 0) {
        lua_getfield(L, LUA_REGISTRYINDEX, REG_ENV);
        lua_setfenv(L, -2);
        lua_pushcfunction(L, l_ret_pass);
        rc = lua_pcall(L, 1, 1, 0);
    }
    if (rc != 0) {
        if (tried) lua_pop(L, 1);
        if (luaL_loadbuffer(L, body + skip, len - skip, "@user_script") != 0) {
            snprintf(err, errlen, "ERR Error compiling script (new function): %s", lua_tostring(L, -1));
            lua_pop(L, 1);
            return -1;
        }
    }
    lua_getfield(L, LUA_REGISTRYINDEX, REG_ENV);
    lua_setfenv(L, -2);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_FUNCS);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, sha);
    lua_pop(L, 2);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_FLAGS);
    lua_pushnumber(L, flags);
    lua_setfield(L, -2, sha);
    lua_pop(L, 1);
    *flagsp = flags;
    return 0;
}

/* The script's function on the stack and its flags (*needs_all: it met a
 * shard it could not have before). Returns 0, or -1 when not cached. */
static int lookup_compiled(struct lua_env *e, const char *sha, unsigned *flags, int *needs_all) {
    lua_State *L = e->L;
    lua_getfield(L, LUA_REGISTRYINDEX, REG_FLAGS);
    lua_getfield(L, -1, sha);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 2);
        return -1;
    }
    unsigned long long v = (unsigned long long)lua_tonumber(L, -1);
    lua_pop(L, 2);
    *flags = (unsigned)(v & 0xffff);
    *needs_all = (int)((v >> 16) & 3);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_FUNCS);
    lua_getfield(L, -1, sha);
    lua_remove(L, -2);
    return 0;
}

/* What this worker learned of a script's keys: SHARDS_UNKNOWN (never run
 * here), SHARDS_DECLARED (stays within its KEYS' shards), SHARDS_ALL. */
enum { SHARDS_UNKNOWN = 0, SHARDS_DECLARED = 1, SHARDS_ALL = 2 };

static void mark_shards(struct lua_env *e, const char *sha, unsigned flags, int state) {
    lua_State *L = e->L;
    lua_getfield(L, LUA_REGISTRYINDEX, REG_FLAGS);
    lua_pushnumber(L, flags | ((unsigned)state << 16));
    lua_setfield(L, -2, sha);
    lua_pop(L, 1);
}

void script_load(struct cmd_ctx *c, const hk_slice *body) {
    char sha[41], err[1024];
    sha1_hex(body->ptr, body->len, sha);
    struct lua_env *e = worker_env(c->w);
    unsigned flags;
    /* Compiled here to check it (and ready for this worker). */
    if (compile(e, sha, body->ptr, body->len, &flags, err, sizeof(err)) < 0) {
        reply_error(c, err);
        return;
    }
    pthread_rwlock_wrlock(&cache_lock);
    cache_add(sha, body->ptr, body->len, flags, 0);
    pthread_rwlock_unlock(&cache_lock);
    reply_bulk(c, sha, 40);
}

/* Set global `name` (KEYS, ARGV) to the n strings at a, or to nil when a
 * is NULL. Raw: the global table refuses writes from scripts. */
static void set_args(lua_State *L, const char *name, const hk_slice *a, int n) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, tl_env->ref_globals);
    lua_pushstring(L, name);
    if (a) {
        lua_createtable(L, n, 0);
        for (int i = 0; i < n; i++) {
            lua_pushlstring(L, a[i].ptr, a[i].len);
            lua_rawseti(L, -2, i + 1);
        }
    } else {
        lua_pushnil(L);
    }
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* Push a table of the n strings at a (a function's KEYS or ARGV). */
static void push_strings(lua_State *L, const hk_slice *a, int n) {
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, a[i].ptr, a[i].len);
        lua_rawseti(L, -2, i + 1);
    }
}

/* Reply the error table (or string) at the top of the stack. */
static void reply_script_error(lua_State *L, struct cmd_ctx *c, const char *name, int is_function) {
    if (lua_istable(L, -1)) {
        raw_field(L, -1, "err");
        raw_field(L, -2, "source");
        raw_field(L, -3, "line");
        size_t ml = 0;
        const char *msg = lua_tolstring(L, -3, &ml);
        const char *src = lua_tostring(L, -2);
        const char *line = lua_tostring(L, -1);
        if (!msg) msg = "ERR unknown error", ml = strlen(msg);
        size_t size = ml + 128 + strlen(name) + (src && line ? strlen(src) + strlen(line) : 0);
        char *buf = hk_malloc(size);
        int n;
        if (src && line) n = snprintf(buf, size, "%.*s script: %s, on %s:%s.", (int)ml, msg, name, src, line);
        else n = snprintf(buf, size, "%.*s", (int)ml, msg);
        if (n < 0) n = 0;
        if ((size_t)n >= size) n = (int)size - 1;
        /* Redis sends the text as it is; CR/LF become spaces here so that
         * the reply stays one line. */
        for (int i = 0; i < n; i++)
            if (buf[i] == '\r' || buf[i] == '\n') buf[i] = ' ';
        lua_pop(L, 3);
        error_reply_of(L, lua_gettop(L), c, buf, (size_t)n);
        hk_free(buf);
    } else {
        const char *m = lua_tostring(L, -1);
        if (is_function) reply_errorf(c, "ERR Error running script %s, %.100s", name, m ? m : "execution failure");
        else reply_errorf(c, "ERR Error running script (call to f_%s): @%s", name, m ? m : "unknown error");
    }
}

static void run_end_busy(struct script_run *run) {
    if (!run->busy) return;
    struct worker *w = run->caller->w;
    run->busy = 0;
    if (!run->rec) return;
    pthread_mutex_lock(&busy_mu);
    for (struct busy_rec **pp = &busy_list; *pp; pp = &(*pp)->next)
        if (*pp == run->rec) {
            *pp = run->rec->next;
            break;
        }
    atomic_store(&w->script_busy, 0);
    atomic_store(&w->script_kill, 0);
    pthread_mutex_unlock(&busy_mu);
    if (atomic_fetch_sub(&scripts_busy, 1) == 1) atomic_store(&ls_wait_abort, 0);
    if (run->is_function) atomic_fetch_sub(&functions_busy, 1);
    hk_free(run->rec);
    run->rec = NULL;
}

/* How to run a script or a function (run_script). */
struct run_spec {
    const char *name; /* the sha of an EVAL script, or the function's name */
    unsigned flags;
    int ro;           /* an _RO command */
    int shards;       /* what this worker learned of its keys (SHARDS_*) */
    long long numkeys;
    int entry;        /* a function's entry table (stack index); 0 for EVAL */
};

/* Record what this worker learned of the script's keys. */
static void learn(struct lua_env *e, const struct run_spec *rs, int state) {
    if (!rs->entry) {
        mark_shards(e, rs->name, rs->flags, state);
        return;
    }
    lua_pushnumber(e->L, state);
    lua_setfield(e->L, rs->entry, "learn");
}

/* Run the function at stack index fn (an EVAL script's body, or a
 * function with KEYS and ARGV as its two arguments) on c: under its
 * declared keys' shards, or every shard while this worker has not
 * learned that it stays within them; again from the start under every
 * shard when it meets one it cannot take before it wrote. Replies its
 * result or error into c; what it wrote propagates as its effects. The
 * stack is left below fn. */
static void run_script(struct cmd_ctx *c, struct lua_env *e, int fn, const struct run_spec *rs) {
    lua_State *L = e->L;
    int is_function = rs->entry != 0;
    long long numkeys = rs->numkeys;
    /* The first run here takes every shard and learns whether the script
     * stays within its KEYS; later runs take what it learned. */
    int shards = rs->shards;
    if (shards != SHARDS_DECLARED && !exec_holds_all(c) && !(c->flags & CTX_NESTED)) exec_lock_all_shards(c);

    struct script_run run;
    struct prop_mark mark;
    exec_prop_mark(c, &mark);
    for (int attempt = 0;; attempt++) {
        memset(&run, 0, sizeof(run));
        run.caller = c;
        run.name = rs->name;
        run.is_function = is_function;
        run.flags = rs->flags;
        run.ro = rs->ro || (rs->flags & SCRIPT_FLAG_NO_WRITES);
        run.oom = script_oom();
        run.resp = 2;
        run.repl = REPL_ALL;
        run.start_ns = hk_clock_ns();
        run.learning = shards == SHARDS_UNKNOWN;
        run.keys = c->argv + 3;
        run.nkeys = (int)numkeys;
        /* The script's own view of the context: the caller's locks,
         * journal and write sink, its own database, protocol and sink. */
        struct cmd_ctx *sc = &run.sctx;
        ctx_init(sc);
        sc->db = c->db;
        sc->now_ms = c->now_ms;
        sc->flags = (c->flags & (CTX_NO_TOUCH | CTX_JOURNAL | CTX_REPLAY)) | CTX_DENY_BLOCKING;
        sc->ls = c->ls;
        sc->prop = c->prop;
        sc->cl = NULL;
        /* redis.call is checked against the connection's ACL user. */
        sc->acl_of = c->cl ? c->cl : c->acl_of;
        sc->w = c->w;
        sc->frozen_us = hk_ustime();
        e->run = &run;
        int nargs = 0;
        if (!is_function) {
            set_args(L, "KEYS", c->argv + 3, (int)numkeys);
            set_args(L, "ARGV", c->argv + 3 + numkeys, c->argc - 3 - (int)numkeys);
        }
        lua_rawgeti(L, LUA_REGISTRYINDEX, e->ref_handler);
        lua_pushvalue(L, fn);
        if (is_function) {
            push_strings(L, c->argv + 3, (int)numkeys);
            push_strings(L, c->argv + 3 + numkeys, c->argc - 3 - (int)numkeys);
            nargs = 2;
        }
        /* While it runs, a busy poll of this worker must not read the
         * connection whose arguments the script is reading. */
        if (c->cl) c->cl->flags |= CLIENT_IN_SCRIPT;
        /* The instruction hook stays installed between scripts (it does
         * nothing without a run): installing it costs more than a short
         * script. A kill or a library load may have changed it. */
        if (lua_gethook(L) != count_hook || lua_gethookmask(L) != LUA_MASKCOUNT)
            lua_sethook(L, count_hook, LUA_MASKCOUNT, 100000);
        int rc = lua_pcall(L, nargs, 1, fn + 1);
        if (c->cl) c->cl->flags &= ~CLIENT_IN_SCRIPT;
        e->run = NULL;
        run_end_busy(&run);
        /* What the script's calls did counts as the command's. */
        c->sink.dirty += sc->sink.dirty;
        c->flags |= sc->flags & (CTX_JOURNAL | CTX_PROP_CUSTOM);
        exec_adopt_deferred(c, sc);
        if (run.restart && attempt == 0) {
            /* Nothing written: let everything go, take every shard, and
             * run it again; remember that it needs them. */
            lua_settop(L, fn);
            ctx_destroy(sc);
            learn(e, rs, SHARDS_ALL);
            shards = SHARDS_ALL;
            exec_lock_all_shards(c);
            continue;
        }
        if (run.learning && rc == 0) learn(e, rs, run.undeclared ? SHARDS_ALL : SHARDS_DECLARED);
        if (rc != 0 && run.killed && atomic_load(&server.shutdown_asap)) {
            /* Ended by SHUTDOWN: the server is going, as in Redis the
             * script's caller gets no reply, only the closed connection. */
            if (c->cl) c->cl->flags |= CLIENT_CLOSE_ASAP;
        } else if (rc != 0) {
            reply_script_error(L, c, rs->name, is_function);
        } else {
            lua_to_resp(L, c, run.resp, 0);
        }
        ctx_destroy(sc);
        break;
    }
    lua_settop(L, fn - 1);
    if (!is_function) {
        set_args(L, "KEYS", NULL, 0);
        set_args(L, "ARGV", NULL, 0);
    }
    exec_prop_wrap(c, &mark);
    /* A script that propagated nothing of its own: EVAL's argv must not
     * stand in for the effects. */
    c->flags |= CTX_PROP_CUSTOM;
    /* The collector runs as the Lua heap grows; an explicit step after
     * every script cost three times the script itself. A small one every
     * 64 scripts keeps an idle worker's garbage from lingering. */
    if ((++e->runs & 63) == 0) lua_gc(L, LUA_GCSTEP, 1);
    vm_account(L);
}

void script_eval(struct cmd_ctx *c, int by_sha, int ro) {
    const hk_slice *code = &c->argv[1];
    long long numkeys;
    /* As Redis: a digest of the wrong length is unknown before anything
     * else is looked at. */
    if (by_sha && code->len != 40) {
        reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
        return;
    }
    if (!hk_str2ll(c->argv[2].ptr, c->argv[2].len, &numkeys)) {
        reply_error(c, "ERR value is not an integer or out of range");
        return;
    }
    if (numkeys > c->argc - 3) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        reply_error(c, "ERR Number of keys can't be negative");
        return;
    }
    if (!c->w) {
        reply_error(c, "ERR scripts run on worker threads only");
        return;
    }
    char sha[41], err[1024];
    if (by_sha) {
        for (int i = 0; i < 40; i++) {
            char ch = code->ptr[i];
            sha[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        }
        sha[40] = '\0';
    } else {
        sha1_hex(code->ptr, code->len, sha);
    }
    struct lua_env *e = worker_env(c->w);
    lua_State *L = e->L;
    unsigned flags = 0;
    int needs_all = 0;
    if (lookup_compiled(e, sha, &flags, &needs_all) < 0) {
        if (by_sha) {
            pthread_rwlock_rdlock(&cache_lock);
            struct script_entry *ent = cache_find(sha);
            char *body = NULL;
            size_t blen = 0;
            if (ent) {
                blen = ent->len;
                body = hk_malloc(blen + 1);
                memcpy(body, ent->body, blen);
            }
            pthread_rwlock_unlock(&cache_lock);
            if (!body) {
                reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
                return;
            }
            int rc = compile(e, sha, body, blen, &flags, err, sizeof(err));
            hk_free(body);
            if (rc < 0) {
                reply_error(c, err);
                return;
            }
        } else {
            if (compile(e, sha, code->ptr, code->len, &flags, err, sizeof(err)) < 0) {
                reply_error(c, err);
                return;
            }
            pthread_rwlock_wrlock(&cache_lock);
            cache_add(sha, code->ptr, code->len, flags, 1);
            pthread_rwlock_unlock(&cache_lock);
        }
        lookup_compiled(e, sha, &flags, &needs_all);
    } else if (!by_sha) {
        /* Compiled here before, but a SCRIPT FLUSH elsewhere may have
         * dropped it from the shared cache since: EVAL puts it back. */
        pthread_rwlock_rdlock(&cache_lock);
        struct script_entry *have = cache_find(sha);
        if (have) atomic_store_explicit(&have->last_used, atomic_fetch_add(&cache_tick, 1), memory_order_relaxed);
        pthread_rwlock_unlock(&cache_lock);
        if (!have) {
            pthread_rwlock_wrlock(&cache_lock);
            cache_add(sha, code->ptr, code->len, flags, 1);
            pthread_rwlock_unlock(&cache_lock);
        }
    }
    /* The function is on the stack. */
    int fn = lua_gettop(L);
    /* A script with a shebang says whether it may write: the _RO forms
     * refuse one that may before it runs, even if it would only read. */
    const char *derr;
    /* A script whose flags let it write is a denyoom command, unless it
     * says allow-oom. */
    if (!(flags & (SCRIPT_FLAG_EVAL_COMPAT | SCRIPT_FLAG_NO_WRITES | SCRIPT_FLAG_ALLOW_OOM)) && script_oom()) {
        lua_settop(L, fn - 1);
        reply_error(c, OOM_ERROR);
        return;
    }
    if (!(flags & (SCRIPT_FLAG_EVAL_COMPAT | SCRIPT_FLAG_NO_WRITES)) && (derr = exec_script_disk_error())) {
        lua_settop(L, fn - 1);
        reply_error(c, derr);
        return;
    }
    if (ro && !(flags & (SCRIPT_FLAG_EVAL_COMPAT | SCRIPT_FLAG_NO_WRITES))) {
        lua_settop(L, fn - 1);
        reply_error(c, "ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    struct run_spec rs = {sha, flags, ro, needs_all, numkeys, 0};
    run_script(c, e, fn, &rs);
}

/* ---- functions: the load context, FCALL ---------------------------------- */

/* An error of redis.register_function or of the load context: a table
 * {err = "ERR msg"} without a line, as Redis raises them. */
static int load_error(lua_State *L, const char *msg) {
    lua_newtable(L);
    lua_pushstring(L, "ERR ");
    lua_pushstring(L, msg);
    lua_concat(L, 2);
    lua_setfield(L, -2, "err");
    return lua_error(L);
}

/* A value Redis reads as a string (a string, or a number turned into
 * one): pushed as a string, or nothing pushed and 0. */
static int push_as_string(lua_State *L, int idx) {
    if (!lua_isstring(L, idx)) return 0;
    lua_pushvalue(L, idx);
    lua_tostring(L, -1);
    return 1;
}

/* The flags table at idx (an array of flag names, any case). Returns 0,
 * or -1 for anything that is not a known flag. */
static int read_flags(lua_State *L, int idx, unsigned *flags) {
    *flags = 0;
    for (int j = 1;; j++) {
        lua_rawgeti(L, idx, j);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            return 0;
        }
        const char *f = lua_isstring(L, -1) ? lua_tostring(L, -1) : NULL;
        unsigned got = 0, bit;
        const char *fl;
        for (int i = 0; f && (fl = script_flag_name(i, &bit)); i++)
            if (strcasecmp(fl, f) == 0) got = bit;
        lua_pop(L, 1);
        if (!got) return -1;
        *flags |= got;
    }
}

/* redis.register_function(name, callback) or
 * redis.register_function{function_name=, callback=, flags=, description=}:
 * while a library loads, record the function. Errors and their order are
 * Redis's. */
static int l_register_function(lua_State *L) {
    struct lua_env *e = env_of(L);
    if (!e->load) return load_error(L, "redis.register_function can only be called on FUNCTION LOAD command");
    int argc = lua_gettop(L);
    if (argc < 1 || argc > 2) return load_error(L, "wrong number of arguments to redis.register_function");
    unsigned flags = 0;
    /* Slots 3, 4, 5: name, callback, description. */
    if (argc == 2) {
        lua_settop(L, 5);
        if (!push_as_string(L, 1)) return load_error(L, "first argument to redis.register_function must be a string");
        lua_replace(L, 3);
        if (!lua_isfunction(L, 2)) return load_error(L, "second argument to redis.register_function must be a function");
        lua_pushvalue(L, 2);
        lua_replace(L, 4);
    } else {
        if (!lua_istable(L, 1))
            return load_error(L, "calling redis.register_function with a single argument is only applicable to Lua "
                                 "table (representing named arguments).");
        lua_settop(L, 5);
        lua_pushnil(L);
        while (lua_next(L, 1)) {
            int kt = lua_type(L, -2);
            if (kt != LUA_TSTRING && kt != LUA_TNUMBER)
                return load_error(L, "named argument key given to redis.register_function is not a string");
            const char *key = kt == LUA_TSTRING ? lua_tostring(L, -2) : "";
            if (strcasecmp(key, "function_name") == 0) {
                if (!push_as_string(L, -1))
                    return load_error(L, "function_name argument given to redis.register_function must be a string");
                lua_replace(L, 3);
            } else if (strcasecmp(key, "description") == 0) {
                if (!push_as_string(L, -1))
                    return load_error(L, "description argument given to redis.register_function must be a string");
                lua_replace(L, 5);
            } else if (strcasecmp(key, "callback") == 0) {
                if (!lua_isfunction(L, -1))
                    return load_error(L, "callback argument given to redis.register_function must be a function");
                lua_pushvalue(L, -1);
                lua_replace(L, 4);
            } else if (strcasecmp(key, "flags") == 0) {
                if (!lua_istable(L, -1))
                    return load_error(L, "flags argument to redis.register_function must be a table representing "
                                         "function flags");
                if (read_flags(L, lua_gettop(L), &flags) < 0) return load_error(L, "unknown flag given");
            } else {
                return load_error(L, "unknown argument given to redis.register_function");
            }
            lua_pop(L, 1);
        }
        if (lua_isnil(L, 3)) return load_error(L, "redis.register_function must get a function name argument");
        if (lua_isnil(L, 4)) return load_error(L, "redis.register_function must get a callback argument");
    }
    size_t nl;
    const char *name = lua_tolstring(L, 3, &nl);
    if (!fn_valid_name(name, nl))
        return load_error(L, "Library names can only contain letters, numbers, or underscores(_) and must be at "
                             "least one character long");
    lua_getfield(L, LUA_REGISTRYINDEX, REG_LOAD_NAMES);
    lua_pushvalue(L, 3);
    lua_rawget(L, -2);
    if (!lua_isnil(L, -1)) return load_error(L, "Function already exists in the library");
    lua_pop(L, 1);
    lua_pushvalue(L, 3);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_LOAD_LIST);
    lua_createtable(L, 0, 4);
    lua_pushvalue(L, 3);
    lua_setfield(L, -2, "name");
    lua_pushvalue(L, 4);
    lua_setfield(L, -2, "cb");
    lua_pushnumber(L, flags);
    lua_setfield(L, -2, "flags");
    lua_pushvalue(L, 5);
    lua_setfield(L, -2, "desc");
    lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
    return 0;
}

/* The load context's hook: a library's code may not run past its time. */
static void load_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    struct lua_env *e = env_of(L);
    struct load_ctx *ld = e->load;
    if (!ld || ld->timeout_ms <= 0 || hk_clock_ns() - ld->start_ns <= ld->timeout_ms * 1000000LL) return;
    /* Every line from here on raises: nothing can catch it and go on. */
    lua_sethook(L, load_hook, LUA_MASKLINE, 0);
    lua_newtable(L);
    lua_pushliteral(L, "ERR FUNCTION LOAD timeout");
    lua_setfield(L, -2, "err");
    lua_error(L);
}

static void set_loading(lua_State *L, int on) {
    lua_getfield(L, LUA_REGISTRYINDEX, REG_SET_LOADING);
    lua_pushboolean(L, on);
    lua_call(L, 1, 0);
}

/* Compile a library's body and run it in the load context. Returns 0
 * with the list of what it registered ({name, cb, flags, desc} each) on
 * the stack, or -1 with the error text. */
static int lib_run(struct lua_env *e, const char *body, size_t len, long long timeout_ms, int quiet, char *err,
                   size_t errlen) {
    lua_State *L = e->L;
    int base = lua_gettop(L);
    /* Its returns rewritten as a script's are (see compile()). */
    size_t wlen;
    char *wrapped = hk_lua_wrap_returns(body, len, "local " RET_PASS " = ...; return function(...) ", "\nend",
                                        RET_PASS, &wlen);
    int rc = wrapped ? luaL_loadbuffer(L, wrapped, wlen, "@user_function") : -1;
    hk_free(wrapped);
    if (rc == 0) {
        lua_getfield(L, LUA_REGISTRYINDEX, REG_FENV);
        lua_setfenv(L, -2);
        lua_pushcfunction(L, l_ret_pass);
        rc = lua_pcall(L, 1, 1, 0);
    }
    if (rc != 0) {
        lua_settop(L, base);
        if (luaL_loadbuffer(L, body, len, "@user_function") != 0) {
            snprintf(err, errlen, "Error compiling function: %s", lua_tostring(L, -1));
            lua_settop(L, base);
            return -1;
        }
    }
    lua_getfield(L, LUA_REGISTRYINDEX, REG_FENV);
    lua_setfenv(L, -2);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_LOAD_LIST);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_LOAD_NAMES);
    struct load_ctx ld = {hk_clock_ns(), timeout_ms, quiet};
    e->load = &ld;
    set_loading(L, 1);
    lua_sethook(L, load_hook, LUA_MASKCOUNT, 100000);
    rc = lua_pcall(L, 0, 0, 0);
    lua_sethook(L, NULL, 0, 0);
    set_loading(L, 0);
    e->load = NULL;
    if (rc != 0) {
        const char *msg = NULL;
        if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) {
            snprintf(err, errlen, "Error registering functions: ERR %s", lua_tostring(L, -1));
        } else {
            if (lua_istable(L, -1)) raw_field(L, -1, "err");
            else lua_pushnil(L);
            msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "ERR unknown error";
            snprintf(err, errlen, "Error registering functions: %s", msg);
        }
        lua_settop(L, base);
    } else {
        lua_settop(L, base);
        lua_getfield(L, LUA_REGISTRYINDEX, REG_LOAD_LIST);
    }
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_LOAD_LIST);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_LOAD_NAMES);
    return rc != 0 ? -1 : 0;
}

int script_lib_check(struct worker *w, const char *body, size_t len, long long timeout_ms, struct fn_def **fns,
                     int *nfn, char *err, size_t errlen) {
    struct lua_env *e = worker_env(w);
    lua_State *L = e->L;
    *fns = NULL;
    *nfn = 0;
    if (lib_run(e, body, len, timeout_ms, 0, err, errlen) < 0) return -1;
    int list = lua_gettop(L), n = (int)lua_objlen(L, list);
    struct fn_def *d = hk_calloc(n ? (size_t)n : 1, sizeof(*d));
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, list, i + 1);
        int ent = lua_gettop(L);
        size_t sl;
        raw_field(L, ent, "name");
        const char *sv = lua_tolstring(L, -1, &sl);
        d[i].name = hk_strndup(sv, sl);
        raw_field(L, ent, "flags");
        d[i].flags = (unsigned)lua_tonumber(L, -1);
        raw_field(L, ent, "desc");
        if (lua_isstring(L, -1)) {
            sv = lua_tolstring(L, -1, &sl);
            d[i].desc = hk_malloc(sl + 1);
            memcpy(d[i].desc, sv, sl);
            d[i].desc[sl] = '\0';
            d[i].desc_len = sl;
        }
        lua_settop(L, list);
    }
    lua_settop(L, list - 1);
    /* What the run made is garbage now (see script_eval). */
    if ((++e->runs & 63) == 0) lua_gc(L, LUA_GCSTEP, 1);
    vm_account(L);
    *fns = d;
    *nfn = n;
    return 0;
}

/* The entry of function `name` ({cb, flags, name, learn}) on the stack:
 * from what this worker loaded, or found in the registry and its library
 * loaded here. Returns 0, or -1 after replying the error. */
static int fn_entry(struct cmd_ctx *c, struct lua_env *e, const hk_slice *name) {
    lua_State *L = e->L;
    int base = lua_gettop(L);
    char *low = hk_malloc(name->len + 1);
    for (size_t i = 0; i < name->len; i++) {
        char ch = name->ptr[i];
        low[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
    }
    lua_getfield(L, LUA_REGISTRYINDEX, REG_FN_NAMES);
    int names = lua_gettop(L);
    lua_pushlstring(L, low, name->len);
    hk_free(low);
    int key = lua_gettop(L);
    lua_pushvalue(L, key);
    lua_rawget(L, names);
    if (lua_istable(L, -1)) {
        lua_replace(L, base + 1);
        lua_settop(L, base + 1);
        return 0;
    }
    lua_pop(L, 1);
    struct fn_found f;
    if (fn_find(name->ptr, name->len, &f) < 0) {
        lua_settop(L, base);
        reply_error(c, "ERR Function not found");
        return -1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, REG_FN_LIBS);
    int libs = lua_gettop(L);
    lua_pushnumber(L, (lua_Number)f.lib_id);
    lua_rawget(L, libs);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        char err[1024];
        /* The library ran to its end when it was loaded: no time limit,
         * and its redis.log lines are not written again. */
        if (lib_run(e, f.code + f.body, f.code_len - f.body, 0, 1, err, sizeof(err)) < 0) {
            fn_found_free(&f);
            lua_settop(L, base);
            reply_errorf(c, "ERR %s", err);
            return -1;
        }
        int list = lua_gettop(L), n = (int)lua_objlen(L, list);
        lua_createtable(L, 0, n);
        for (int i = 1; i <= n; i++) {
            lua_rawgeti(L, list, i);
            raw_field(L, -1, "name");
            raw_field(L, -2, "cb");
            lua_rawset(L, -4);
            lua_pop(L, 1);
        }
        lua_remove(L, list);
        lua_pushnumber(L, (lua_Number)f.lib_id);
        lua_pushvalue(L, -2);
        lua_rawset(L, libs);
    }
    lua_getfield(L, -1, f.name);
    if (!lua_isfunction(L, -1)) {
        fn_found_free(&f);
        lua_settop(L, base);
        reply_error(c, "ERR Function not found");
        return -1;
    }
    int cb = lua_gettop(L);
    lua_createtable(L, 0, 4);
    lua_pushvalue(L, cb);
    lua_setfield(L, -2, "cb");
    lua_pushnumber(L, f.flags);
    lua_setfield(L, -2, "flags");
    lua_pushstring(L, f.name);
    lua_setfield(L, -2, "name");
    lua_pushnumber(L, SHARDS_UNKNOWN);
    lua_setfield(L, -2, "learn");
    fn_found_free(&f);
    lua_pushvalue(L, key);
    lua_pushvalue(L, -2);
    lua_rawset(L, names);
    lua_replace(L, base + 1);
    lua_settop(L, base + 1);
    return 0;
}

void script_fcall(struct cmd_ctx *c, int ro) {
    if (!c->w) {
        reply_error(c, "ERR scripts run on worker threads only");
        return;
    }
    struct lua_env *e = worker_env(c->w);
    lua_State *L = e->L;
    int base = lua_gettop(L);
    /* As Redis: an unknown function before anything else is looked at. */
    if (fn_entry(c, e, &c->argv[1]) < 0) return;
    int entry = lua_gettop(L);
    long long numkeys;
    if (!hk_str2ll(c->argv[2].ptr, c->argv[2].len, &numkeys)) {
        lua_settop(L, base);
        reply_error(c, "ERR Bad number of keys provided");
        return;
    }
    if (numkeys > c->argc - 3) {
        lua_settop(L, base);
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        lua_settop(L, base);
        reply_error(c, "ERR Number of keys can't be negative");
        return;
    }
    raw_field(L, entry, "flags");
    unsigned flags = (unsigned)lua_tonumber(L, -1);
    raw_field(L, entry, "learn");
    int learned = (int)lua_tonumber(L, -1);
    raw_field(L, entry, "name");
    const char *fname = lua_tostring(L, -1);
    const char *derr;
    if (!(flags & (SCRIPT_FLAG_NO_WRITES | SCRIPT_FLAG_ALLOW_OOM)) && script_oom()) {
        lua_settop(L, base);
        reply_error(c, OOM_ERROR);
        return;
    }
    if (!(flags & SCRIPT_FLAG_NO_WRITES) && (derr = exec_script_disk_error())) {
        lua_settop(L, base);
        reply_error(c, derr);
        return;
    }
    if (ro && !(flags & SCRIPT_FLAG_NO_WRITES)) {
        lua_settop(L, base);
        reply_error(c, "ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    raw_field(L, entry, "cb");
    struct run_spec rs = {fname, flags, ro, learned, numkeys, entry};
    run_script(c, e, lua_gettop(L), &rs);
    lua_settop(L, base);
}

void script_kill(struct cmd_ctx *c, int functions) {
    pthread_mutex_lock(&busy_mu);
    /* The oldest busy script of the kind asked for, or else any. */
    struct busy_rec *r = NULL;
    for (struct busy_rec *x = busy_list; x; x = x->next)
        if (!r || (x->is_function == functions) || r->is_function != functions) r = x;
    if (!r) {
        reply_error(c, "NOTBUSY No scripts in execution right now.");
    } else if (atomic_load(&r->w->script_wrote)) {
        reply_error(c, "UNKILLABLE Sorry the script already executed write commands against the dataset. You "
                       "can either wait the script termination or kill the server in a hard way using the "
                       "SHUTDOWN NOSAVE command.");
    } else if (r->is_function != functions) {
        /* A function is stopped by FUNCTION KILL, an EVAL script by
         * SCRIPT KILL: the error names the one to use. */
        reply_error(c, r->is_function ? BUSY_FUNCTION_TEXT : BUSY_EVAL_TEXT);
    } else {
        atomic_store(&r->w->script_kill, 1);
        reply_ok(c);
    }
    pthread_mutex_unlock(&busy_mu);
}

const char *script_busy_error(void) {
    int f = atomic_load(&functions_busy), s = atomic_load(&scripts_busy);
    return f > 0 && f >= s ? BUSY_FUNCTION_TEXT : BUSY_EVAL_TEXT;
}

int script_eval_busy(void) { return atomic_load(&scripts_busy) > atomic_load(&functions_busy); }

void script_reply_running(struct cmd_ctx *c) {
    pthread_mutex_lock(&busy_mu);
    struct busy_rec *r = NULL;
    for (struct busy_rec *x = busy_list; x; x = x->next)
        if (x->is_function) r = x;
    if (!r) {
        reply_null(c);
    } else {
        reply_map(c, 3);
        reply_bulk_cstr(c, "name");
        reply_bulk_cstr(c, r->name);
        reply_bulk_cstr(c, "command");
        reply_array(c, r->argc);
        for (int i = 0; i < r->argc; i++) reply_bulk(c, r->argv[i].ptr, r->argv[i].len);
        reply_bulk_cstr(c, "duration_ms");
        reply_int(c, (hk_clock_ns() - r->start_ns) / 1000000);
    }
    pthread_mutex_unlock(&busy_mu);
}
