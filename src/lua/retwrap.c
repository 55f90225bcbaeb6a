/* retwrap.c - a source rewrite that keeps the frame of a script alive
 * while the functions in its `return` statements run.
 *
 * LuaJIT compiles `return f(x)` into a true tail call even when f is a C
 * function, so f runs in place of its caller: an error it raises has no
 * calling line ("user_script:1: "), luaL_argerror names it '?', and a
 * handler cannot find the script's line. PUC Lua 5.1, which Redis runs,
 * keeps the caller for a C callee, and scripts compare error texts. The
 * rewrite turns `return <explist>` into `return P(<explist>)`, where P
 * names a function that returns its arguments (the caller's prefix and
 * suffix bind it): the expressions are evaluated by ordinary calls inside
 * the caller, and the values pass through unchanged. Only the body's own
 * returns and, inside functions, returns whose expression starts with a
 * library name are rewritten: a Lua function calling itself (or another)
 * in tail position keeps its constant stack, as in Lua 5.1. Lines are
 * kept: nothing is inserted but text on the same line.
 *
 * This is a token scan, not a parser: it knows strings, comments, brackets
 * and the keywords that open and close blocks, which is all it takes to
 * find where a return's expression list ends (a return is always the last
 * statement of its block). The result is only meant for source that
 * already compiles; the caller compiles the original when the rewrite does
 * not. Nothing here knows the server. */
#include "lualibs.h"

#include "../core/alloc.h"

enum { TK_EOF, TK_NAME, TK_OPEN, TK_CLOSE, TK_SEMI, TK_OTHER };

struct tok {
    int kind;
    size_t start, end;
};

/* Length of the long bracket "[==[" at p (its level plus two), or 0. */
static size_t long_open(const char *p, const char *e) {
    if (p >= e || *p != '[') return 0;
    const char *q = p + 1;
    while (q < e && *q == '=') q++;
    return q < e && *q == '[' ? (size_t)(q - p + 1) : 0;
}

/* Skip past the closing bracket of a long string or comment whose opening
 * bracket was `open` bytes long (level open - 2). */
static size_t long_skip(const char *s, size_t len, size_t i, size_t open) {
    size_t level = open - 2;
    for (; i < len; i++) {
        if (s[i] != ']') continue;
        size_t j = i + 1, n = 0;
        while (j < len && s[j] == '=') j++, n++;
        if (n == level && j < len && s[j] == ']') return j + 1;
    }
    return len;
}

static int is_ident(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

/* The token at or after *pos (comments and blanks skipped). */
static void next_tok(const char *s, size_t len, size_t *pos, struct tok *t) {
    size_t i = *pos;
    for (;;) {
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n' || s[i] == '\v' ||
                           s[i] == '\f'))
            i++;
        if (i + 1 < len && s[i] == '-' && s[i + 1] == '-') {
            size_t open = long_open(s + i + 2, s + len);
            if (open) {
                i = long_skip(s, len, i + 2 + open, open);
            } else {
                while (i < len && s[i] != '\n') i++;
            }
            continue;
        }
        break;
    }
    t->start = i;
    if (i >= len) {
        t->kind = TK_EOF;
        t->end = *pos = len;
        return;
    }
    unsigned char c = (unsigned char)s[i];
    size_t open;
    if (is_ident(c)) {
        int number = c >= '0' && c <= '9';
        while (i < len && (is_ident((unsigned char)s[i]) || (number && s[i] == '.') ||
                           (number && (s[i] == '+' || s[i] == '-') && strchr("eEpP", s[i - 1]))))
            i++;
        t->kind = number ? TK_OTHER : TK_NAME;
    } else if (c == '"' || c == '\'') {
        /* A backslash escapes the next byte (a newline too); "\z" skips
         * the blanks and newlines after it, as LuaJIT reads it. */
        for (i++; i < len && s[i] != (char)c && s[i] != '\n'; i++) {
            if (s[i] != '\\' || i + 1 >= len) continue;
            i++;
            if (s[i] == 'z')
                while (i + 1 < len && s[i + 1] && strchr(" \t\r\n\v\f", s[i + 1])) i++;
        }
        if (i < len && s[i] == (char)c) i++;
        t->kind = TK_OTHER;
    } else if ((open = long_open(s + i, s + len)) != 0) {
        i = long_skip(s, len, i + open, open);
        t->kind = TK_OTHER;
    } else {
        if (c == '(' || c == '{' || c == '[') t->kind = TK_OPEN;
        else if (c == ')' || c == '}' || c == ']') t->kind = TK_CLOSE;
        else if (c == ';') t->kind = TK_SEMI;
        else t->kind = TK_OTHER;
        i++;
    }
    t->end = *pos = i;
}

static int tok_is(const char *s, const struct tok *t, const char *word) {
    size_t n = strlen(word);
    return t->kind == TK_NAME && t->end - t->start == n && memcmp(s + t->start, word, n) == 0;
}

/* A token that ends the block a return is the last statement of. */
static int ends_return(const char *s, const struct tok *t) {
    return t->kind == TK_EOF || t->kind == TK_SEMI || tok_is(s, t, "end") || tok_is(s, t, "else") ||
           tok_is(s, t, "elseif") || tok_is(s, t, "until");
}

/* Globals of the script environment: a return inside a function whose
 * expression starts with one of them calls into C, never recurses. */
static int library_name(const char *s, const struct tok *t) {
    static const char *const names[] = {
        "redis",   "math",     "string", "table",  "cjson",    "cmsgpack", "struct",       "bit",
        "os",      "coroutine", "unpack", "error", "assert",   "tostring", "tonumber",     "select",
        "type",    "rawget",   "rawset", "rawequal", "next",   "pcall",    "xpcall",       "loadstring",
        "load",    "ipairs",   "pairs",  "gcinfo", "collectgarbage", "setmetatable", "getmetatable",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (tok_is(s, t, names[i])) return 1;
    return 0;
}

struct out {
    char *p;
    size_t len, cap;
};

static void out_add(struct out *o, const char *s, size_t n) {
    if (o->len + n > o->cap) {
        size_t cap = o->cap * 2 > o->len + n ? o->cap * 2 : o->len + n;
        o->p = hk_realloc(o->p, cap);
        o->cap = cap;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

#define RW_MAX_DEPTH 256

char *hk_lua_wrap_returns(const char *src, size_t len, const char *prefix, const char *suffix, const char *fn,
                          size_t *outlen) {
    /* Open blocks (1: a function body) and open rewritten returns (the
     * bracket and block depth they were opened at). */
    unsigned char blocks[RW_MAX_DEPTH];
    int nblocks = 0, nfuncs = 0, paren = 0;
    struct {
        int paren, block;
    } rets[RW_MAX_DEPTH];
    int nrets = 0, wrapped = 0;
    struct out o = {hk_malloc(len + 64), 0, len + 64};
    out_add(&o, prefix, strlen(prefix));
    /* prev_end: where the token before t ends. A closing bracket goes
     * there, before any comment, which could run to the end of the line. */
    size_t pos = 0, copied = 0, prev_end = 0, fnlen = strlen(fn);
    struct tok t;
    for (;;) {
        next_tok(src, len, &pos, &t);
        if (ends_return(src, &t)) {
            while (nrets && rets[nrets - 1].paren == paren && rets[nrets - 1].block == nblocks) {
                out_add(&o, src + copied, prev_end - copied);
                copied = prev_end;
                out_add(&o, ")", 1);
                nrets--;
            }
        }
        prev_end = t.end;
        if (t.kind == TK_EOF) break;
        if (t.kind == TK_OPEN) {
            paren++;
        } else if (t.kind == TK_CLOSE) {
            if (paren) paren--;
        } else if (tok_is(src, &t, "function") || tok_is(src, &t, "if") || tok_is(src, &t, "do") ||
                   tok_is(src, &t, "repeat")) {
            if (nblocks == RW_MAX_DEPTH) goto give_up;
            int is_fn = tok_is(src, &t, "function");
            blocks[nblocks++] = (unsigned char)is_fn;
            nfuncs += is_fn;
        } else if (tok_is(src, &t, "end") || tok_is(src, &t, "until")) {
            if (nblocks) nfuncs -= blocks[--nblocks];
        } else if (tok_is(src, &t, "return")) {
            size_t after = pos;
            struct tok n;
            next_tok(src, len, &after, &n);
            if (!ends_return(src, &n) && (nfuncs == 0 || library_name(src, &n))) {
                if (nrets == RW_MAX_DEPTH) goto give_up;
                out_add(&o, src + copied, t.end - copied);
                copied = t.end;
                out_add(&o, " ", 1);
                out_add(&o, fn, fnlen);
                out_add(&o, "(", 1);
                rets[nrets].paren = paren;
                rets[nrets].block = nblocks;
                nrets++;
                wrapped++;
            }
        }
    }
    if (!wrapped || nrets) goto give_up;
    out_add(&o, src + copied, len - copied);
    out_add(&o, suffix, strlen(suffix));
    *outlen = o.len;
    return o.p;
give_up:
    hk_free(o.p);
    return NULL;
}
