/* vexpr.c - compiler and evaluator of the vector-set FILTER language.
 *
 * Compilation tokenizes the expression and turns it into postfix code with
 * an operator-precedence pass (the shunting-yard method Redis uses, with
 * its operand-count check, so the same texts are accepted and refused).
 * Distinct field names become numbered slots. Evaluation first locates
 * every slot's value in one pass over the top-level JSON object, skipping
 * the values of other keys without decoding them and stopping as soon as
 * all slots are found; then it decodes those values and runs the code on a
 * value stack. Nothing recurses, neither the compiler nor the JSON reader,
 * so no input can exhaust the C stack, and an evaluation allocates nothing
 * once its scratch has grown to the sizes it needs.
 *
 * What this is not: a JSON validator (text after the wanted fields is
 * never read, as in Redis), nor a general JSON path language (only
 * top-level fields). */
#include "vexpr.h"

#include "alloc.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- values */

enum { VT_NUM, VT_STR, VT_TUPLE, VT_NULL };

/* One value on the evaluation stack, a constant, a field value or an
 * element of a tuple. Strings and tuple elements are borrowed: from the
 * compiled expression, from the attribute string or from the scratch. */
struct vx_val {
    int type;
    union {
        double num;
        struct {
            const char *p;
            size_t len;
        } str;
        struct {
            const struct vx_val *ele;
            size_t len;
        } tup;
    };
};

/* ------------------------------------------------------------- operators */

enum {
    OP_OPAREN,
    OP_CPAREN,
    OP_NOT,
    OP_POW,
    OP_MUL,
    OP_DIV,
    OP_MOD,
    OP_ADD,
    OP_SUB,
    OP_GT,
    OP_GTE,
    OP_LT,
    OP_LTE,
    OP_EQ,
    OP_NEQ,
    OP_IN,
    OP_AND,
    OP_OR,
    OP_COUNT
};

static const struct {
    const char *name;
    unsigned char len;
    unsigned char op;
} op_names[] = {
    {"(", 1, OP_OPAREN}, {")", 1, OP_CPAREN}, {"!", 1, OP_NOT},   {"not", 3, OP_NOT}, {"**", 2, OP_POW},
    {"*", 1, OP_MUL},    {"/", 1, OP_DIV},    {"%", 1, OP_MOD},   {"+", 1, OP_ADD},   {"-", 1, OP_SUB},
    {">", 1, OP_GT},     {">=", 2, OP_GTE},   {"<", 1, OP_LT},    {"<=", 2, OP_LTE},  {"==", 2, OP_EQ},
    {"!=", 2, OP_NEQ},   {"in", 2, OP_IN},    {"and", 3, OP_AND}, {"&&", 2, OP_AND},  {"or", 2, OP_OR},
    {"||", 2, OP_OR},
};

static const unsigned char op_prec[OP_COUNT] = {
    [OP_OPAREN] = 7, [OP_CPAREN] = 7, [OP_NOT] = 6, [OP_POW] = 5, [OP_MUL] = 4, [OP_DIV] = 4,
    [OP_MOD] = 4,    [OP_ADD] = 3,    [OP_SUB] = 3, [OP_GT] = 2,  [OP_GTE] = 2, [OP_LT] = 2,
    [OP_LTE] = 2,    [OP_EQ] = 2,     [OP_NEQ] = 2, [OP_IN] = 2,  [OP_AND] = 1, [OP_OR] = 0,
};

static int op_arity(int op) {
    if (op == OP_OPAREN || op == OP_CPAREN) return 0;
    return op == OP_NOT ? 1 : 2;
}

/* ASCII classes as the C locale has them; bytes >= 0x80 are in none. */
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_space(int c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static int is_op_char(int c) { return c != 0 && strchr("+-*%/!()<>=|&", c) != NULL; }
static int is_sel_char(int c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '-'; }

/* ------------------------------------------------------- compiled form */

enum { IN_CONST, IN_SLOT, IN_OP };

struct vx_ins {
    unsigned char kind;
    unsigned char op;
    uint32_t arg; /* constant index or slot number */
};

struct vx_field {
    const char *name; /* into strbuf */
    size_t len;
};

struct vexpr {
    struct vx_ins *code;
    size_t ncode;
    struct vx_val *consts;
    size_t nconsts;
    struct vx_val *elems; /* elements of constant tuples */
    size_t nelems;
    struct vx_field *fields;
    size_t nfields;
    char *strbuf;    /* unescaped string constants and field names */
    size_t maxdepth; /* deepest evaluation stack */
    int never;       /* holds an empty selector: nothing matches */
    uint32_t *fhash; /* open addressing over fields: index + 1, 0 empty */
    size_t fhash_mask;
};

/* Fields are looked up by hash past this many, linearly below. */
#define FIELDS_LINEAR 8

static uint64_t name_hash(const char *s, size_t len) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

/* The slot of a field name, or -1. */
static long field_find(const struct vexpr *e, const char *name, size_t len) {
    if (e->nfields <= FIELDS_LINEAR || !e->fhash) {
        if (len == 0) return -1;
        for (size_t i = 0; i < e->nfields; i++) {
            const struct vx_field *f = &e->fields[i];
            if (f->len == len && f->name[0] == name[0] && memcmp(f->name, name, len) == 0) return (long)i;
        }
        return -1;
    }
    if (len == 0) return -1;
    for (size_t h = (size_t)name_hash(name, len) & e->fhash_mask;; h = (h + 1) & e->fhash_mask) {
        uint32_t v = e->fhash[h];
        if (v == 0) return -1;
        const struct vx_field *f = &e->fields[v - 1];
        if (f->len == len && memcmp(f->name, name, len) == 0) return (long)(v - 1);
    }
}

/* Rebuild the field hash for the current fields (table at most half full). */
static void field_rehash(struct vexpr *e) {
    size_t cap = 16;
    while (cap < e->nfields * 2) cap *= 2;
    hk_free(e->fhash);
    e->fhash = hk_calloc(cap, sizeof(uint32_t));
    e->fhash_mask = cap - 1;
    for (size_t i = 0; i < e->nfields; i++) {
        size_t h = (size_t)name_hash(e->fields[i].name, e->fields[i].len) & e->fhash_mask;
        while (e->fhash[h]) h = (h + 1) & e->fhash_mask;
        e->fhash[h] = (uint32_t)(i + 1);
    }
}

/* The slot of the empty selector (a dot at the very end). */
#define NO_SLOT UINT32_MAX

/* ------------------------------------------------------------ the scratch */

struct vexpr_scratch {
    struct vx_val *stack;
    size_t stack_cap;
    struct vx_val *slots;
    const char **slot_pos;
    size_t *slot_off; /* tuple slots: first element in elems */
    size_t slots_cap;
    char *bytes; /* unescaped JSON strings of one evaluation */
    size_t bytes_cap, bytes_used;
    struct vx_val *elems; /* JSON array elements of one evaluation */
    size_t elems_cap, elems_used;
};

struct vexpr_scratch *vexpr_scratch_new(void) {
    return hk_calloc(1, sizeof(struct vexpr_scratch));
}

void vexpr_scratch_free(struct vexpr_scratch *s) {
    if (!s) return;
    hk_free(s->stack);
    hk_free(s->slots);
    hk_free(s->slot_pos);
    hk_free(s->slot_off);
    hk_free(s->bytes);
    hk_free(s->elems);
    hk_free(s);
}

/* Grow an array of n-byte items to hold at least want items. */
static void *grow(void *p, size_t *cap, size_t want, size_t item) {
    if (want <= *cap) return p;
    size_t nc = *cap ? *cap : 8;
    while (nc < want) nc *= 2;
    p = hk_realloc(p, nc * item);
    *cap = nc;
    return p;
}

/* -------------------------------------------------------------- compiler */

enum { TK_NUM, TK_STR, TK_TUPLE, TK_SEL, TK_OP, TK_NULL };

struct vx_tok {
    unsigned char kind;
    unsigned char op;
    uint32_t arg; /* constant index (values) or slot (selectors) */
};

struct cstate {
    const char *t; /* NUL-terminated copy of the expression */
    size_t pos;
    struct vexpr *e;
    size_t consts_cap, elems_cap, fields_cap, code_cap;
    size_t strused;
    struct vx_tok *toks;
    size_t ntoks, toks_cap;
    size_t *tup_off; /* constant tuples: first element, fixed up at the end */
};

static size_t add_const(struct cstate *c, struct vx_val v) {
    c->e->consts = grow(c->e->consts, &c->consts_cap, c->e->nconsts + 1, sizeof(struct vx_val));
    c->e->consts[c->e->nconsts] = v;
    return c->e->nconsts++;
}

static void push_tok(struct cstate *c, int kind, int op, size_t arg) {
    c->toks = grow(c->toks, &c->toks_cap, c->ntoks + 1, sizeof(struct vx_tok));
    c->toks[c->ntoks].kind = (unsigned char)kind;
    c->toks[c->ntoks].op = (unsigned char)op;
    c->toks[c->ntoks].arg = (uint32_t)arg;
    c->ntoks++;
}

/* A number as Redis reads one: digits, '.', 'e', 'E' and a leading '-',
 * at most 255 characters, all of them consumed by strtod. On failure the
 * position stays where reading stopped (Redis reports from there). */
static int lex_number(struct cstate *c, double *out) {
    char num[256];
    size_t idx = 0;
    const char *t = c->t;
    for (;;) {
        int ch = (unsigned char)t[c->pos];
        if (!(is_digit(ch) || ch == '.' || ch == 'e' || ch == 'E' || (idx == 0 && ch == '-'))) break;
        if (idx >= sizeof(num) - 1) return 0;
        num[idx++] = (char)ch;
        c->pos++;
    }
    num[idx] = 0;
    char *endp;
    *out = strtod(num, &endp);
    return *endp == 0;
}

/* Copy p..end into dst with the escapes strings take, in expressions and
 * in JSON alike: \n \r \t, and any other escaped character stands for
 * itself (a backslash that ends the text is kept). Returns the bytes
 * written. */
static size_t unescape(const char *p, const char *end, char *dst) {
    size_t n = 0;
    for (; p < end; p++) {
        char ch = *p;
        if (ch == '\\' && p + 1 < end) {
            ch = *++p;
            if (ch == 'n')
                ch = '\n';
            else if (ch == 'r')
                ch = '\r';
            else if (ch == 't')
                ch = '\t';
        }
        dst[n++] = ch;
    }
    return n;
}

/* A quoted string; its unescaped bytes go to strbuf (never longer than
 * the raw text, and strbuf is as long as the expression). */
static int lex_string(struct cstate *c, struct vx_val *out) {
    const char *t = c->t;
    char quote = t[c->pos++];
    size_t start = c->pos;
    for (;;) {
        if (t[c->pos] == 0) return 0;
        if (t[c->pos] == '\\' && t[c->pos + 1] != 0) {
            c->pos += 2;
            continue;
        }
        if (t[c->pos] == quote) break;
        c->pos++;
    }
    size_t end = c->pos++;
    char *dst = c->e->strbuf + c->strused;
    size_t n = unescape(t + start, t + end, dst);
    c->strused += n;
    out->type = VT_STR;
    out->str.p = dst;
    out->str.len = n;
    return 1;
}

static void skip_spaces(struct cstate *c) {
    while (is_space((unsigned char)c->t[c->pos])) c->pos++;
}

/* [elem, elem, ...] of numbers and strings; a trailing comma before ']' is
 * accepted, as in Redis. */
static int lex_tuple(struct cstate *c) {
    const char *t = c->t;
    size_t first = c->e->nelems, n = 0;
    c->pos++;
    for (;;) {
        skip_spaces(c);
        if (t[c->pos] == ']') {
            c->pos++;
            break;
        }
        struct vx_val v;
        int ch = (unsigned char)t[c->pos];
        if (is_digit(ch) || ch == '-') {
            v.type = VT_NUM;
            if (!lex_number(c, &v.num)) return 0;
        } else if (ch == '"' || ch == '\'') {
            if (!lex_string(c, &v)) return 0;
        } else {
            return 0;
        }
        c->e->elems = grow(c->e->elems, &c->elems_cap, c->e->nelems + 1, sizeof(struct vx_val));
        c->e->elems[c->e->nelems++] = v;
        n++;
        skip_spaces(c);
        if (t[c->pos] == ']') {
            c->pos++;
            break;
        }
        if (t[c->pos] != ',') return 0;
        c->pos++;
    }
    struct vx_val tv;
    tv.type = VT_TUPLE;
    tv.tup.ele = NULL; /* fixed once elems stops moving */
    tv.tup.len = n;
    size_t idx = add_const(c, tv);
    c->tup_off = hk_realloc(c->tup_off, c->consts_cap * sizeof(size_t));
    c->tup_off[idx] = first;
    push_tok(c, TK_TUPLE, 0, idx);
    return 1;
}

static size_t field_slot(struct cstate *c, const char *name, size_t len) {
    struct vexpr *e = c->e;
    long found = field_find(e, name, len);
    if (found >= 0) return (size_t)found;
    char *dst = e->strbuf + c->strused;
    memcpy(dst, name, len);
    c->strused += len;
    e->fields = grow(e->fields, &c->fields_cap, e->nfields + 1, sizeof(struct vx_field));
    e->fields[e->nfields].name = dst;
    e->fields[e->nfields].len = len;
    e->nfields++;
    if (e->nfields > FIELDS_LINEAR && (!e->fhash || e->nfields * 2 > e->fhash_mask + 1)) {
        field_rehash(e);
    } else if (e->fhash) {
        size_t h = (size_t)name_hash(dst, len) & e->fhash_mask;
        while (e->fhash[h]) h = (h + 1) & e->fhash_mask;
        e->fhash[h] = (uint32_t)e->nfields;
    }
    return e->nfields - 1;
}

/* An operator, by the longest name that prefixes the run of letters and
 * operator characters, or the literal null (the whole run). */
static int lex_operator(struct cstate *c) {
    const char *t = c->t;
    size_t start = c->pos;
    while (t[c->pos] && (is_alpha((unsigned char)t[c->pos]) || is_op_char((unsigned char)t[c->pos]))) c->pos++;
    size_t run = c->pos - start;
    if (run == 4 && memcmp(t + start, "null", 4) == 0) {
        struct vx_val v;
        v.type = VT_NULL;
        v.num = 0;
        push_tok(c, TK_NULL, 0, add_const(c, v));
        return 1;
    }
    size_t best = 0;
    int op = 0;
    for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++) {
        size_t l = op_names[i].len;
        if (l > run || memcmp(op_names[i].name, t + start, l) != 0) continue;
        if (l > best) {
            best = l;
            op = op_names[i].op;
        }
    }
    if (best == 0) return 0;
    c->pos = start + best;
    push_tok(c, TK_OP, op, 0);
    return 1;
}

/* Split the expression into tokens. Returns -1, or the offset at which
 * reading failed. */
static long tokenize(struct cstate *c) {
    const char *t = c->t;
    for (;;) {
        skip_spaces(c);
        int minus_is_number =
            c->ntoks == 0 || (c->toks[c->ntoks - 1].kind == TK_OP && c->toks[c->ntoks - 1].op != OP_CPAREN);
        int ch = (unsigned char)t[c->pos];
        int ok;
        if (ch == 0) return -1;
        if (is_digit(ch) || (minus_is_number && ch == '-' && is_digit((unsigned char)t[c->pos + 1]))) {
            struct vx_val v;
            v.type = VT_NUM;
            ok = lex_number(c, &v.num);
            if (ok) push_tok(c, TK_NUM, 0, add_const(c, v));
        } else if (ch == '"' || ch == '\'') {
            struct vx_val v;
            ok = lex_string(c, &v);
            if (ok) push_tok(c, TK_STR, 0, add_const(c, v));
        } else if (ch == '.' && (is_sel_char((unsigned char)t[c->pos + 1]) || t[c->pos + 1] == 0)) {
            /* A dot ending the text is a selector with an empty name, as in
             * Redis; it compiles and makes every evaluation fail. */
            size_t start = ++c->pos;
            while (is_sel_char((unsigned char)t[c->pos])) c->pos++;
            if (c->pos == start) {
                c->e->never = 1;
                push_tok(c, TK_SEL, 0, NO_SLOT);
            } else {
                push_tok(c, TK_SEL, 0, field_slot(c, t + start, c->pos - start));
            }
            ok = 1;
        } else if (ch == '[') {
            ok = lex_tuple(c);
        } else if (is_alpha(ch) || is_op_char(ch)) {
            ok = lex_operator(c);
        } else {
            ok = 0;
        }
        if (!ok) return (long)c->pos;
    }
}

static void emit(struct cstate *c, int kind, int op, size_t arg) {
    struct vexpr *e = c->e;
    e->code = grow(e->code, &c->code_cap, e->ncode + 1, sizeof(struct vx_ins));
    e->code[e->ncode].kind = (unsigned char)kind;
    e->code[e->ncode].op = (unsigned char)op;
    e->code[e->ncode].arg = (uint32_t)arg;
    e->ncode++;
}

/* Operator-precedence pass. `items` is the number of values the code
 * emitted so far leaves on the stack: an operator finding fewer operands
 * than it takes is a syntax error, as is anything but one value at the
 * end. Returns 1 on success. */
static int build_code(struct cstate *c) {
    unsigned char *ops = hk_malloc(VEXPR_MAX_NESTING);
    size_t nops = 0, items = 0, maxitems = 0;
    int ok = 0;
    for (size_t i = 0; i < c->ntoks; i++) {
        struct vx_tok *tk = &c->toks[i];
        if (tk->kind == TK_SEL) {
            emit(c, IN_SLOT, 0, tk->arg);
            if (++items > maxitems) maxitems = items;
            continue;
        }
        if (tk->kind != TK_OP) {
            emit(c, IN_CONST, 0, tk->arg);
            if (++items > maxitems) maxitems = items;
            continue;
        }
        int op = tk->op;
        if (op == OP_CPAREN) {
            for (;;) {
                if (nops == 0) goto done;
                int top = ops[--nops];
                if (top == OP_OPAREN) break;
                size_t ar = (size_t)op_arity(top);
                if (items < ar) goto done;
                emit(c, IN_OP, top, 0);
                items = items - ar + 1;
            }
            continue;
        }
        if (op != OP_OPAREN && op != OP_NOT) {
            /* A prefix operator takes nothing already on the stack, so
             * "!!x" stacks both; ** is right associative. */
            int prec = op_prec[op];
            while (nops > 0) {
                int top = ops[nops - 1];
                if (top == OP_OPAREN) break;
                int tp = op_prec[top];
                if (tp < prec) break;
                if (op == OP_POW && tp <= prec) break;
                nops--;
                size_t ar = (size_t)op_arity(top);
                if (items < ar) goto done;
                emit(c, IN_OP, top, 0);
                items = items - ar + 1;
            }
        }
        if (nops == VEXPR_MAX_NESTING) goto done;
        ops[nops++] = (unsigned char)op;
    }
    while (nops > 0) {
        int top = ops[--nops];
        if (top == OP_OPAREN) goto done;
        size_t ar = (size_t)op_arity(top);
        if (items < ar) goto done;
        emit(c, IN_OP, top, 0);
        items = items - ar + 1;
    }
    if (items == 1) {
        ok = 1;
        c->e->maxdepth = maxitems;
    }
done:
    hk_free(ops);
    return ok;
}

/* Redis's reply for a malformed expression: the text from errpos (from the
 * start when errpos is past the end) up to its first NUL, newlines made
 * spaces and trailing ones dropped as addReplyErrorFormat does. */
static void write_error(char *err, size_t errsize, const char *s, size_t len, size_t n, size_t errpos) {
    if (!err || errsize == 0) return;
    if (errpos >= len) errpos = 0;
    size_t restlen = n - errpos;
    const char *rest = s + errpos;
    while (restlen > 0 && (rest[restlen - 1] == '\r' || rest[restlen - 1] == '\n')) restlen--;
    size_t w = 0;
    for (size_t i = 0; i < VEXPR_ERR_PREFIX_LEN && w + 1 < errsize; i++) err[w++] = VEXPR_ERR_PREFIX[i];
    for (size_t i = 0; i < restlen && w + 1 < errsize; i++) {
        char ch = rest[i];
        err[w++] = (ch == '\r' || ch == '\n') ? ' ' : ch;
    }
    err[w] = 0;
}

void vexpr_free(struct vexpr *e) {
    if (!e) return;
    hk_free(e->code);
    hk_free(e->consts);
    hk_free(e->elems);
    hk_free(e->fields);
    hk_free(e->strbuf);
    hk_free(e->fhash);
    hk_free(e);
}

struct vexpr *vexpr_compile(const char *s, size_t len, char *err, size_t errsize) {
    const char *nul = memchr(s, 0, len);
    size_t n = nul ? (size_t)(nul - s) : len;
    char *t = hk_malloc(n + 2);
    memcpy(t, s, n);
    t[n] = t[n + 1] = 0; /* lookahead of one past the end stays in bounds */

    struct cstate c;
    memset(&c, 0, sizeof(c));
    c.t = t;
    c.e = hk_calloc(1, sizeof(struct vexpr));
    c.e->strbuf = hk_malloc(n + 1);

    long bad = tokenize(&c);
    size_t errpos = 0;
    int ok = 0;
    if (bad >= 0) {
        errpos = (size_t)bad;
    } else {
        ok = build_code(&c);
    }
    if (ok) {
        for (size_t i = 0; i < c.e->nconsts; i++)
            if (c.e->consts[i].type == VT_TUPLE && c.e->consts[i].tup.len > 0)
                c.e->consts[i].tup.ele = c.e->elems + c.tup_off[i];
    }
    hk_free(c.toks);
    hk_free(c.tup_off);
    hk_free(t);
    if (!ok) {
        write_error(err, errsize, s, len, n, errpos);
        vexpr_free(c.e);
        return NULL;
    }
    return c.e;
}

size_t vexpr_memory(const struct vexpr *e) {
    if (!e) return 0;
    size_t m = hk_usable_size((void *)e) + hk_usable_size(e->strbuf);
    if (e->code) m += hk_usable_size(e->code);
    if (e->consts) m += hk_usable_size(e->consts);
    if (e->elems) m += hk_usable_size(e->elems);
    if (e->fields) m += hk_usable_size(e->fields);
    if (e->fhash) m += hk_usable_size(e->fhash);
    return m;
}

/* ---------------------------------------------------------- JSON reading
 *
 * The reader mirrors Redis's fastjson: skipping a value checks only what
 * it must to find the value's end (strings honour backslashes, brackets
 * are counted, literals are matched by prefix, numbers are any run of
 * number characters); decoding a value is strict about its own text. */

static inline const char *js_ws(const char *p, const char *end) {
    /* Most calls find a non-blank byte or a single space. */
    if (p < end && (unsigned char)*p > ' ') return p;
    while (p < end && is_space((unsigned char)*p)) p++;
    return p;
}

static int js_num_char(int c) { return is_digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

/* *pp at '"'; on success *pp is past the closing quote. A backslash takes
 * the next byte with it, so a quote closes the string when an even number
 * of backslashes precedes it. */
static int js_skip_string(const char **pp, const char *end) {
    const char *p = *pp + 1;
    for (;;) {
        const char *q = p < end ? memchr(p, '"', (size_t)(end - p)) : NULL;
        if (!q) return 0;
        const char *b = q;
        while (b > p && b[-1] == '\\') b--;
        if (((q - b) & 1) == 0) {
            *pp = q + 1;
            return 1;
        }
        p = q + 1;
    }
}

static int js_skip_bracketed(const char **pp, const char *end, char open, char close) {
    const char *p = *pp + 1;
    size_t depth = 1;
    while (p < end && depth > 0) {
        if (*p == '"') {
            if (!js_skip_string(&p, end)) return 0;
            continue;
        }
        if (*p == open)
            depth++;
        else if (*p == close)
            depth--;
        p++;
    }
    *pp = p;
    return depth == 0;
}

static int js_skip_literal(const char **pp, const char *end, const char *lit, size_t l) {
    if ((size_t)(end - *pp) < l || memcmp(*pp, lit, l) != 0) return 0;
    *pp += l;
    return 1;
}

static int js_skip_value(const char **pp, const char *end) {
    const char *p = js_ws(*pp, end);
    *pp = p;
    if (p >= end) return 0;
    switch (*p) {
    case '"': return js_skip_string(pp, end);
    case '{': return js_skip_bracketed(pp, end, '{', '}');
    case '[': return js_skip_bracketed(pp, end, '[', ']');
    case 't': return js_skip_literal(pp, end, "true", 4);
    case 'f': return js_skip_literal(pp, end, "false", 5);
    case 'n': return js_skip_literal(pp, end, "null", 4);
    default: {
        const char *q = p;
        while (q < end && js_num_char((unsigned char)*q)) q++;
        *pp = q;
        return q > p;
    }
    }
}

/* Make sure the scratch can take every unescaped string of one attribute
 * string without moving: their total never exceeds its length. Called
 * before the first string of an evaluation is written. */
static void js_reserve_bytes(struct vexpr_scratch *s, size_t jsonlen) {
    if (s->bytes_used == 0 && s->bytes_cap < jsonlen) {
        hk_free(s->bytes);
        s->bytes = hk_malloc(jsonlen);
        s->bytes_cap = jsonlen;
    }
}

static int js_string(const char **pp, const char *end, struct vx_val *out, struct vexpr_scratch *s, size_t jsonlen) {
    const char *start = *pp + 1, *q = start;
    size_t len = 0;
    int esc = 0, has_esc = 0;
    while (q < end) {
        if (esc) {
            esc = 0;
            has_esc = 1;
            q++;
            len++;
            continue;
        }
        if (*q == '\\') {
            esc = 1;
            q++;
            continue;
        }
        if (*q == '"') break;
        q++;
        len++;
    }
    if (q >= end) return 0;
    out->type = VT_STR;
    out->str.len = len;
    if (!has_esc) {
        out->str.p = start;
    } else {
        js_reserve_bytes(s, jsonlen);
        char *dst = s->bytes + s->bytes_used;
        size_t w = unescape(start, q, dst);
        s->bytes_used += w;
        out->str.p = dst;
    }
    *pp = q + 1;
    return 1;
}

/* The common forms "-123" and "-12.5" with at most 15 digits: the digits
 * and the power of ten are exact doubles, so one IEEE multiplication or
 * division gives the correctly rounded value, the one strtod gives.
 * Returns 0 to leave anything else to strtod. */
static int quick_decimal(const char *s, size_t n, double *out) {
    size_t i = 0, digits = 0, frac = 0;
    int neg = 0, dot = 0;
    uint64_t m = 0;
    if (i < n && s[i] == '-') {
        neg = 1;
        i++;
    }
    if (i >= n || !is_digit((unsigned char)s[i])) return 0;
    for (; i < n; i++) {
        char ch = s[i];
        if (is_digit((unsigned char)ch)) {
            if (++digits > 15) return 0;
            m = m * 10 + (uint64_t)(ch - '0');
            if (dot) frac++;
        } else if (ch == '.' && !dot) {
            dot = 1;
        } else {
            return 0;
        }
    }
    static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    double v = (double)m / pow10[frac];
    *out = neg ? -v : v;
    return 1;
}

static int js_number(const char **pp, const char *end, struct vx_val *out) {
    char buf[256];
    size_t idx = 0;
    const char *p = *pp;
    while (p < end && idx < sizeof(buf) - 1 && js_num_char((unsigned char)*p)) {
        p++;
        idx++;
    }
    double v;
    if (!quick_decimal(*pp, idx, &v)) {
        memcpy(buf, *pp, idx);
        buf[idx] = 0;
        char *ep;
        v = strtod(buf, &ep);
        if (idx == 0 || *ep != 0) return 0;
    }
    out->type = VT_NUM;
    out->num = v;
    *pp = p;
    return 1;
}

/* true, false, null: the next byte must end the literal. */
static int js_literal(const char **pp, const char *end, const char *lit, size_t l, int type, double num,
                      struct vx_val *out) {
    const char *p = *pp;
    if ((size_t)(end - p) < l || memcmp(p, lit, l) != 0) return 0;
    if (p + l < end) {
        char nx = p[l];
        if (!is_space((unsigned char)nx) && nx != ',' && nx != ']' && nx != '}') return 0;
    }
    out->type = type;
    out->num = num;
    *pp = p + l;
    return 1;
}

/* A value that is not an array. */
static int js_scalar(const char **pp, const char *end, struct vx_val *out, struct vexpr_scratch *s, size_t jsonlen) {
    const char *p = *pp;
    switch (*p) {
    case '"': return js_string(pp, end, out, s, jsonlen);
    case 't': return js_literal(pp, end, "true", 4, VT_NUM, 1, out);
    case 'f': return js_literal(pp, end, "false", 5, VT_NUM, 0, out);
    case 'n': return js_literal(pp, end, "null", 4, VT_NULL, 0, out);
    default:
        if (is_digit((unsigned char)*p) || *p == '-' || *p == '+') return js_number(pp, end, out);
        return 0; /* objects and anything else */
    }
}

/* *pp at '['. The elements of the outer array go to s->elems from
 * s->elems_used on; an inner array is checked to its end and stands as one
 * tuple element whose contents no operator can observe (a tuple reads as
 * 0 and as true whatever it holds). Iterative: depth is only a count. */
static int js_array(const char **pp, const char *end, size_t *count, struct vexpr_scratch *s, size_t jsonlen) {
    const char *p = js_ws(*pp + 1, end);
    size_t depth = 1, n = 0;
    if (p < end && *p == ']') {
        *pp = p + 1;
        *count = 0;
        return 1;
    }
    for (;;) {
        /* A value. */
        p = js_ws(p, end);
        if (p >= end) return 0;
        struct vx_val v;
        if (*p == '[') {
            v.type = VT_TUPLE;
            v.tup.ele = NULL;
            v.tup.len = 0;
            p = js_ws(p + 1, end);
            if (p < end && *p == ']') {
                p++;
            } else {
                if (depth == 1) {
                    s->elems = grow(s->elems, &s->elems_cap, s->elems_used + n + 1, sizeof(struct vx_val));
                    s->elems[s->elems_used + n++] = v;
                }
                depth++;
                continue;
            }
        } else if (!js_scalar(&p, end, &v, s, jsonlen)) {
            return 0;
        }
        if (depth == 1) {
            s->elems = grow(s->elems, &s->elems_cap, s->elems_used + n + 1, sizeof(struct vx_val));
            s->elems[s->elems_used + n++] = v;
        }
        /* After a value: ',' for another, ']' to close this level. */
        for (;;) {
            p = js_ws(p, end);
            if (p >= end) return 0;
            if (*p == ',') {
                p++;
                break;
            }
            if (*p != ']') return 0;
            p++;
            if (--depth == 0) {
                *pp = p;
                *count = n;
                return 1;
            }
        }
    }
}

/* Find the values of all of e's fields in the top-level object: slot_pos
 * gets each first occurrence. Returns 1 when all were found. */
static int js_locate(const struct vexpr *e, const char *json, const char *end, struct vexpr_scratch *s) {
    size_t nf = e->nfields, found = 0;
    for (size_t i = 0; i < nf; i++) s->slot_pos[i] = NULL;
    const char *p = js_ws(json, end);
    if (p >= end || *p != '{') return 0;
    p++;
    for (;;) {
        p = js_ws(p, end);
        if (p >= end || *p != '"') return 0; /* end, '}' or malformed */
        const char *key = p + 1, *q = p;
        if (!js_skip_string(&q, end)) return 0;
        size_t klen = (size_t)(q - 1 - key);
        p = js_ws(q, end);
        if (p >= end || *p != ':') return 0;
        p = js_ws(p + 1, end);
        if (p >= end) return 0;
        long i = field_find(e, key, klen);
        if (i >= 0 && !s->slot_pos[i]) {
            s->slot_pos[i] = p;
            if (++found == nf) return 1;
        }
        if (!js_skip_value(&p, end)) return 0;
        p = js_ws(p, end);
        if (p >= end || *p != ',') return 0;
        p++;
    }
}

/* Decode each located field into s->slots. Returns 0 when one cannot be. */
static int js_decode(const struct vexpr *e, const char *end, struct vexpr_scratch *s, size_t jsonlen) {
    for (size_t i = 0; i < e->nfields; i++) {
        const char *p = s->slot_pos[i];
        struct vx_val *v = &s->slots[i];
        if (*p == '[') {
            size_t n;
            s->slot_off[i] = s->elems_used;
            if (!js_array(&p, end, &n, s, jsonlen)) return 0;
            s->elems_used += n;
            v->type = VT_TUPLE;
            v->tup.len = n;
            v->tup.ele = NULL;
        } else if (!js_scalar(&p, end, v, s, jsonlen)) {
            return 0;
        }
    }
    /* s->elems has stopped moving: point the tuples at their elements. */
    for (size_t i = 0; i < e->nfields; i++)
        if (s->slots[i].type == VT_TUPLE && s->slots[i].tup.len > 0) s->slots[i].tup.ele = s->elems + s->slot_off[i];
    return 1;
}

/* ------------------------------------------------------------ evaluation */

static double to_num(const struct vx_val *v) {
    if (v->type == VT_NUM) return v->num;
    if (v->type == VT_STR && v->str.len < 256) {
        char buf[256];
        memcpy(buf, v->str.p, v->str.len);
        buf[v->str.len] = 0;
        char *ep;
        double d = strtod(buf, &ep);
        return *ep == 0 ? d : 0;
    }
    return 0;
}

static int to_bool(const struct vx_val *v) {
    switch (v->type) {
    case VT_NUM: return v->num != 0;
    case VT_STR: return v->str.len != 0;
    case VT_NULL: return 0;
    default: return 1;
    }
}

static int vals_equal(const struct vx_val *a, const struct vx_val *b) {
    if (a->type == VT_STR && b->type == VT_STR)
        return a->str.len == b->str.len && memcmp(a->str.p, b->str.p, a->str.len) == 0;
    if (a->type == VT_NUM && b->type == VT_NUM) return a->num == b->num;
    if (a->type == VT_NULL || b->type == VT_NULL) return a->type == b->type;
    return to_num(a) == to_num(b);
}

static int str_in(const struct vx_val *a, const struct vx_val *b) {
    size_t n = a->str.len, h = b->str.len;
    if (n == 0) return 1;
    if (n > h) return 0;
    return memmem(b->str.p, h, a->str.p, n) != NULL;
}

static double apply(int op, const struct vx_val *a, const struct vx_val *b) {
    switch (op) {
    case OP_NOT: return to_bool(b) ? 0 : 1;
    case OP_POW: return pow(to_num(a), to_num(b));
    case OP_MUL: return to_num(a) * to_num(b);
    case OP_DIV: return to_num(a) / to_num(b);
    case OP_MOD: return fmod(to_num(a), to_num(b));
    case OP_ADD: return to_num(a) + to_num(b);
    case OP_SUB: return to_num(a) - to_num(b);
    case OP_GT: return to_num(a) > to_num(b);
    case OP_GTE: return to_num(a) >= to_num(b);
    case OP_LT: return to_num(a) < to_num(b);
    case OP_LTE: return to_num(a) <= to_num(b);
    case OP_EQ: return vals_equal(a, b);
    case OP_NEQ: return !vals_equal(a, b);
    case OP_IN:
        if (b->type == VT_TUPLE) {
            for (size_t j = 0; j < b->tup.len; j++)
                if (vals_equal(a, &b->tup.ele[j])) return 1;
            return 0;
        }
        if (a->type == VT_STR && b->type == VT_STR) return str_in(a, b);
        return 0;
    case OP_AND: return to_bool(a) && to_bool(b);
    case OP_OR: return to_bool(a) || to_bool(b);
    default: return 0;
    }
}

int vexpr_eval(const struct vexpr *e, const char *json, size_t len, struct vexpr_scratch *s) {
    if (!json || len == 0 || e->never) return 0;
    s->stack = grow(s->stack, &s->stack_cap, e->maxdepth, sizeof(struct vx_val));
    if (e->nfields) {
        if (s->slots_cap < e->nfields) {
            size_t cap = e->nfields;
            s->slots = hk_realloc(s->slots, cap * sizeof(struct vx_val));
            s->slot_pos = hk_realloc(s->slot_pos, cap * sizeof(const char *));
            s->slot_off = hk_realloc(s->slot_off, cap * sizeof(size_t));
            s->slots_cap = cap;
        }
        const char *end = json + len;
        s->bytes_used = 0;
        s->elems_used = 0;
        if (!js_locate(e, json, end, s)) return 0;
        if (!js_decode(e, end, s, len)) return 0;
    }
    struct vx_val *st = s->stack;
    size_t sp = 0;
    for (size_t i = 0; i < e->ncode; i++) {
        const struct vx_ins *in = &e->code[i];
        if (in->kind == IN_CONST) {
            st[sp++] = e->consts[in->arg];
        } else if (in->kind == IN_SLOT) {
            st[sp++] = s->slots[in->arg];
        } else {
            struct vx_val r;
            r.type = VT_NUM;
            if (in->op == OP_NOT) {
                r.num = apply(OP_NOT, NULL, &st[sp - 1]);
                st[sp - 1] = r;
            } else {
                r.num = apply(in->op, &st[sp - 2], &st[sp - 1]);
                sp--;
                st[sp - 1] = r;
            }
        }
    }
    return to_bool(&st[0]);
}
