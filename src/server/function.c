/* function.c - the function library registry and the FUNCTION subcommands;
 * see function.h.
 *
 * Not the Lua side: running a library's code to learn what it registers,
 * and running a function for FCALL, are script.c's (script_lib_check,
 * script_fcall). Not the command syntax either (src/cmd/function_cmd.c).
 * The DUMP payload is Redis's: for each library the RDB opcode of a
 * function library and the code as an RDB string, then the RDB version
 * (two bytes, little-endian) and the CRC-64 of everything before it. */
#include "function.h"

#include "../core/alloc.h"
#include "../core/crc64.h"
#include "../core/rdbstr.h"
#include "../core/util.h"
#include "creply.h"
#include "script.h"
#include "server.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* A FUNCTION LOAD or RESTORE that runs longer than this is stopped. */
#define LOAD_TIMEOUT_MS 500

#define RDB_OPCODE_FUNCTION_PRE_GA 246
#define RDB_OPCODE_FUNCTION2 245
/* What FUNCTION DUMP writes: the version Redis 7.0 reads. */
#define DUMP_RDB_VERSION 10
/* The newest one RESTORE accepts (Redis 8's). */
#define RESTORE_RDB_VERSION_MAX 12


struct fn_lib {
    struct fn_lib *next;
    char *name;
    char *code;
    size_t code_len, body;
    uint64_t id;
    int nfn;
    struct fn_def *fn;
};

/* The registry: libraries in creation order. Writers hold every shard
 * (when they run as a command) and then the write lock. */
static pthread_rwlock_t reg_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct fn_lib *reg_head;
static unsigned long long reg_nlibs, reg_nfns;
static uint64_t reg_next_id = 1;
static _Atomic unsigned long long reg_gen;

unsigned long long fn_generation(void) { return atomic_load(&reg_gen); }

void fn_counts(unsigned long long *libraries, unsigned long long *functions) {
    pthread_rwlock_rdlock(&reg_lock);
    *libraries = reg_nlibs;
    *functions = reg_nfns;
    pthread_rwlock_unlock(&reg_lock);
}

size_t fn_memory(void) {
    size_t n = 0;
    pthread_rwlock_rdlock(&reg_lock);
    for (struct fn_lib *l = reg_head; l; l = l->next)
        n += hk_usable_size(l) + hk_usable_size(l->code) + hk_usable_size(l->name) + hk_usable_size(l->fn);
    pthread_rwlock_unlock(&reg_lock);
    return n;
}

static void lib_free(struct fn_lib *l) {
    if (!l) return;
    fn_defs_free(l->fn, l->nfn);
    hk_free(l->name);
    hk_free(l->code);
    hk_free(l);
}

void fn_defs_free(struct fn_def *fns, int n) {
    for (int i = 0; i < n; i++) {
        hk_free(fns[i].name);
        hk_free(fns[i].desc);
    }
    hk_free(fns);
}

/* Under the lock. */
static struct fn_lib *reg_lib(const char *name) {
    for (struct fn_lib *l = reg_head; l; l = l->next)
        if (strcmp(l->name, name) == 0) return l;
    return NULL;
}

/* Under the write lock: link l at the end, or in place of `old`. */
static void reg_link(struct fn_lib *l, struct fn_lib *old) {
    l->id = reg_next_id++;
    struct fn_lib **pp = &reg_head;
    while (*pp && *pp != old) pp = &(*pp)->next;
    if (old) {
        l->next = old->next;
        reg_nlibs--;
        reg_nfns -= (unsigned long long)old->nfn;
        lib_free(old);
    } else {
        l->next = NULL;
    }
    *pp = l;
    reg_nlibs++;
    reg_nfns += (unsigned long long)l->nfn;
}

/* Under the write lock. */
static void reg_unlink(struct fn_lib *l) {
    for (struct fn_lib **pp = &reg_head; *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            reg_nlibs--;
            reg_nfns -= (unsigned long long)l->nfn;
            return;
        }
}

static void reg_clear(void) {
    for (struct fn_lib *l = reg_head, *nx; l; l = nx) {
        nx = l->next;
        lib_free(l);
    }
    reg_head = NULL;
    reg_nlibs = reg_nfns = 0;
}

int fn_find(const char *name, size_t len, struct fn_found *f) {
    int found = -1;
    pthread_rwlock_rdlock(&reg_lock);
    for (struct fn_lib *l = reg_head; l && found < 0; l = l->next)
        for (int i = 0; i < l->nfn; i++) {
            const struct fn_def *d = &l->fn[i];
            if (!hk_eqi(name, len, d->name)) continue;
            f->lib_id = l->id;
            f->name = hk_strdup(d->name);
            f->flags = d->flags;
            f->code = hk_malloc(l->code_len + 1);
            memcpy(f->code, l->code, l->code_len);
            f->code[l->code_len] = '\0';
            f->code_len = l->code_len;
            f->body = l->body;
            found = 0;
            break;
        }
    pthread_rwlock_unlock(&reg_lock);
    return found;
}

void fn_found_free(struct fn_found *f) {
    hk_free(f->name);
    hk_free(f->code);
    f->name = f->code = NULL;
}

/* ---- library metadata ------------------------------------------------------ */

int fn_valid_name(const char *s, size_t n) {
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'))
            return 0;
    }
    return 1;
}

#define NAME_RULE                                                                                                  \
    "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

static int hexval(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* The words of the first line, split as Redis splits a command line typed
 * at its prompt (blanks separate, "double" quotes with \n \xHH escapes,
 * 'single' quotes, a closing quote must end the word). Returns the
 * number of words (up to max, each an hk_malloc'd NUL-terminated copy,
 * its length in lens: an escape may put a NUL inside), or -1 for
 * unbalanced quotes. */
static int split_words(const char *s, size_t len, char **out, size_t *lens, int max) {
    size_t i = 0;
    int n = 0;
    for (;;) {
        while (i < len && isspace((unsigned char)s[i])) i++;
        if (i >= len) return n;
        struct hk_buf w = {0};
        int inq = 0, insq = 0, done = 0;
        while (!done) {
            if (inq) {
                if (i >= len) goto bad;
                if (s[i] == '\\' && i + 3 < len && s[i + 1] == 'x' && hexval(s[i + 2]) >= 0 && hexval(s[i + 3]) >= 0) {
                    char ch = (char)(hexval(s[i + 2]) * 16 + hexval(s[i + 3]));
                    hk_buf_add(&w, &ch, 1, 32);
                    i += 3;
                } else if (s[i] == '\\' && i + 1 < len) {
                    char ch;
                    i++;
                    switch (s[i]) {
                    case 'n': ch = '\n'; break;
                    case 'r': ch = '\r'; break;
                    case 't': ch = '\t'; break;
                    case 'b': ch = '\b'; break;
                    case 'a': ch = '\a'; break;
                    default: ch = s[i]; break;
                    }
                    hk_buf_add(&w, &ch, 1, 32);
                } else if (s[i] == '"') {
                    if (i + 1 < len && !isspace((unsigned char)s[i + 1])) goto bad;
                    done = 1;
                } else {
                    hk_buf_add(&w, &s[i], 1, 32);
                }
            } else if (insq) {
                if (i >= len) goto bad;
                if (s[i] == '\\' && i + 1 < len && s[i + 1] == '\'') {
                    i++;
                    hk_buf_add(&w, "'", 1, 32);
                } else if (s[i] == '\'') {
                    if (i + 1 < len && !isspace((unsigned char)s[i + 1])) goto bad;
                    done = 1;
                } else {
                    hk_buf_add(&w, &s[i], 1, 32);
                }
            } else if (i >= len || isspace((unsigned char)s[i])) {
                done = 1;
            } else if (s[i] == '"') {
                inq = 1;
            } else if (s[i] == '\'') {
                insq = 1;
            } else {
                hk_buf_add(&w, &s[i], 1, 32);
            }
            if (i < len) i++;
        }
        if (n < max) {
            char *word = hk_malloc(w.len + 1);
            if (w.len) memcpy(word, w.p, w.len);
            word[w.len] = '\0';
            out[n] = word;
            lens[n] = w.len;
        }
        n++;
        hk_free(w.p);
        continue;
    bad:
        hk_free(w.p);
        for (int k = 0; k < n && k < max; k++) hk_free(out[k]);
        return -1;
    }
}

#define META_WORDS 64

/* The library's name and where its body starts (*body: the newline that
 * ends the first line), from "#!<engine> name=<lib>", checked as Redis
 * checks it: the line, its options, the name's characters, the engine.
 * Returns 0 with *name (hk_malloc'd), or -1 with the error text. */
static int lib_meta(const char *code, size_t len, char **name, size_t *body, char *err, size_t errlen) {
    *name = NULL;
    if (len < 2 || code[0] != '#' || code[1] != '!') {
        snprintf(err, errlen, "Missing library metadata");
        return -1;
    }
    const char *nl = memchr(code, '\n', len);
    if (!nl) {
        snprintf(err, errlen, "Invalid library metadata");
        return -1;
    }
    char *words[META_WORDS];
    size_t lens[META_WORDS];
    int n = split_words(code, (size_t)(nl - code), words, lens, META_WORDS);
    if (n <= 0) {
        snprintf(err, errlen, "Invalid library metadata");
        return -1;
    }
    int kept = n < META_WORDS ? n : META_WORDS, rc = -1;
    char *lib = NULL;
    size_t lib_len = 0;
    for (int i = 1; i < kept; i++) {
        if (lens[i] >= 5 && strncasecmp(words[i], "name=", 5) == 0) {
            if (lib) {
                snprintf(err, errlen, "Invalid metadata value, name argument was given multiple times");
                goto out;
            }
            lib = words[i] + 5;
            lib_len = lens[i] - 5;
            continue;
        }
        snprintf(err, errlen, "Invalid metadata value given: %s", words[i]);
        goto out;
    }
    if (!lib) {
        snprintf(err, errlen, "Library name was not given");
        goto out;
    }
    if (!fn_valid_name(lib, lib_len)) {
        snprintf(err, errlen, NAME_RULE);
        goto out;
    }
    const char *engine = strlen(words[0]) >= 2 ? words[0] + 2 : "";
    if (strcasecmp(engine, "lua") != 0) {
        snprintf(err, errlen, "Engine '%s' not found", engine);
        goto out;
    }
    *name = hk_strdup(lib);
    *body = (size_t)(nl - code);
    rc = 0;
out:
    for (int i = 0; i < kept; i++) hk_free(words[i]);
    return rc;
}

/* A library not yet linked: the code run in this worker's Lua state to
 * learn its functions. Returns it, or NULL with the error text. */
static struct fn_lib *lib_build(struct cmd_ctx *c, char *name, const char *code, size_t len, size_t body,
                                long long timeout_ms, char *err, size_t errlen) {
    struct fn_def *fns = NULL;
    int nfn = 0;
    /* Off the workers (an AOF or RDB being loaded) the code is checked in a
     * Lua state of its own, a zeroed worker that only ever holds it. */
    struct worker *tmp = c->w ? NULL : hk_calloc(1, sizeof(*tmp));
    int rc = script_lib_check(c->w ? c->w : tmp, code + body, len - body, timeout_ms, &fns, &nfn, err, errlen);
    if (tmp) {
        script_worker_free(tmp);
        hk_free(tmp);
    }
    if (rc < 0) return NULL;
    if (nfn == 0) {
        fn_defs_free(fns, nfn);
        snprintf(err, errlen, "No functions registered");
        return NULL;
    }
    struct fn_lib *l = hk_calloc(1, sizeof(*l));
    l->name = name;
    l->code = hk_malloc(len + 1);
    memcpy(l->code, code, len);
    l->code[len] = '\0';
    l->code_len = len;
    l->body = body;
    l->fn = fns;
    l->nfn = nfn;
    return l;
}

/* Whether l's function i has a name (any case) among the functions of
 * `libs` (a list through next), skipping the libraries in skip[0..nskip). */
static int name_taken(const char *fname, const struct fn_lib *libs, struct fn_lib *const *skip, int nskip) {
    size_t n = strlen(fname);
    for (const struct fn_lib *l = libs; l; l = l->next) {
        int skipped = 0;
        for (int k = 0; k < nskip; k++) skipped |= skip[k] == l;
        if (skipped) continue;
        for (int i = 0; i < l->nfn; i++)
            if (hk_eqi(fname, n, l->fn[i].name)) return 1;
    }
    return 0;
}

/* Take every shard for a change to the registry: EXEC and the journal
 * then see it between whole commands, and it propagates (the command
 * counts as a write). */
static void change_begin(struct cmd_ctx *c) { exec_lock_all_shards(c); }

static void change_done(struct cmd_ctx *c) {
    atomic_fetch_add(&reg_gen, 1);
    /* One change in rdb_changes_since_last_save too, as Redis counts it
     * (the handler runs with its own context as the write sink). */
    db_dirty_add(1);
}

static long long load_timeout(const struct cmd_ctx *c) { return (c->flags & CTX_REPLAY) ? 0 : LOAD_TIMEOUT_MS; }

/* ---- FUNCTION LOAD / DELETE / FLUSH ----------------------------------------- */

void fn_load(struct cmd_ctx *c, const hk_slice *code, int replace) {
    char err[1024], *name;
    size_t body;
    if (lib_meta(code->ptr, code->len, &name, &body, err, sizeof(err)) < 0) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    pthread_rwlock_rdlock(&reg_lock);
    int exists = reg_lib(name) != NULL;
    pthread_rwlock_unlock(&reg_lock);
    if (exists && !replace) {
        reply_errorf(c, "ERR Library '%s' already exists", name);
        hk_free(name);
        return;
    }
    struct fn_lib *l = lib_build(c, name, code->ptr, code->len, body, load_timeout(c), err, sizeof(err));
    if (!l) {
        hk_free(name);
        reply_errorf(c, "ERR %s", err);
        return;
    }
    change_begin(c);
    pthread_rwlock_wrlock(&reg_lock);
    /* Checked again: another worker may have loaded it meanwhile. */
    struct fn_lib *old = reg_lib(l->name);
    const char *clash = NULL;
    if (old && !replace) {
        snprintf(err, sizeof(err), "ERR Library '%s' already exists", l->name);
        clash = err;
    } else {
        for (int i = 0; i < l->nfn && !clash; i++)
            if (name_taken(l->fn[i].name, reg_head, &old, 1)) {
                snprintf(err, sizeof(err), "ERR Function %s already exists", l->fn[i].name);
                clash = err;
            }
    }
    if (!clash) reg_link(l, old);
    pthread_rwlock_unlock(&reg_lock);
    if (clash) {
        lib_free(l);
        reply_error(c, clash);
        return;
    }
    change_done(c);
    reply_bulk_cstr(c, l->name);
}

void fn_delete(struct cmd_ctx *c, const hk_slice *name) {
    change_begin(c);
    pthread_rwlock_wrlock(&reg_lock);
    struct fn_lib *l = NULL;
    for (struct fn_lib *x = reg_head; x && !l; x = x->next)
        if (strlen(x->name) == name->len && memcmp(x->name, name->ptr, name->len) == 0) l = x;
    if (l) reg_unlink(l);
    pthread_rwlock_unlock(&reg_lock);
    if (!l) {
        reply_error(c, "ERR Library not found");
        return;
    }
    lib_free(l);
    change_done(c);
    reply_ok(c);
}

void fn_flush(struct cmd_ctx *c) {
    change_begin(c);
    pthread_rwlock_wrlock(&reg_lock);
    reg_clear();
    pthread_rwlock_unlock(&reg_lock);
    change_done(c);
    reply_ok(c);
}

/* ---- FUNCTION LIST / STATS -------------------------------------------------- */

static void reply_flags(struct cmd_ctx *c, unsigned flags) {
    int n = 0;
    unsigned bit;
    for (int i = 0; script_flag_name(i, &bit); i++) n += (flags & bit) != 0;
    reply_set(c, n);
    const char *fl;
    for (int i = 0; (fl = script_flag_name(i, &bit)); i++)
        if (flags & bit) reply_simple(c, fl);
}

void fn_list(struct cmd_ctx *c, const hk_slice *pattern, int withcode) {
    pthread_rwlock_rdlock(&reg_lock);
    long long n = 0;
    for (const struct fn_lib *l = reg_head; l; l = l->next)
        if (!pattern || hk_globmatch(pattern->ptr, pattern->len, l->name, strlen(l->name), 1)) n++;
    reply_array(c, n);
    for (const struct fn_lib *l = reg_head; l; l = l->next) {
        if (pattern && !hk_globmatch(pattern->ptr, pattern->len, l->name, strlen(l->name), 1)) continue;
        reply_map(c, withcode ? 4 : 3);
        reply_bulk_cstr(c, "library_name");
        reply_bulk_cstr(c, l->name);
        reply_bulk_cstr(c, "engine");
        reply_bulk_cstr(c, "LUA");
        reply_bulk_cstr(c, "functions");
        reply_array(c, l->nfn);
        for (int i = 0; i < l->nfn; i++) {
            const struct fn_def *d = &l->fn[i];
            reply_map(c, 3);
            reply_bulk_cstr(c, "name");
            reply_bulk_cstr(c, d->name);
            reply_bulk_cstr(c, "description");
            if (d->desc) reply_bulk(c, d->desc, d->desc_len);
            else reply_null(c);
            reply_bulk_cstr(c, "flags");
            reply_flags(c, d->flags);
        }
        if (withcode) {
            reply_bulk_cstr(c, "library_code");
            reply_bulk(c, l->code, l->code_len);
        }
    }
    pthread_rwlock_unlock(&reg_lock);
}

void fn_stats(struct cmd_ctx *c) {
    /* As Redis: while an EVAL script is busy, this is its BUSY error. */
    if (script_eval_busy()) {
        reply_error(c, BUSY_EVAL_TEXT);
        return;
    }
    unsigned long long libs, fns;
    fn_counts(&libs, &fns);
    reply_map(c, 2);
    reply_bulk_cstr(c, "running_script");
    script_reply_running(c);
    reply_bulk_cstr(c, "engines");
    reply_map(c, 1);
    reply_bulk_cstr(c, "LUA");
    reply_map(c, 2);
    reply_bulk_cstr(c, "libraries_count");
    reply_int(c, (long long)libs);
    reply_bulk_cstr(c, "functions_count");
    reply_int(c, (long long)fns);
}

/* ---- FUNCTION DUMP / RESTORE -------------------------------------------------- */

static int reg_join(struct fn_lib *libs, int policy, char *err, size_t errlen);

void fn_rdb_records(struct hk_buf *b) {
    pthread_rwlock_rdlock(&reg_lock);
    for (const struct fn_lib *l = reg_head; l; l = l->next) {
        unsigned char op = RDB_OPCODE_FUNCTION2;
        hk_buf_add(b, &op, 1, 256);
        rdb_write_string(b, l->code, l->code_len);
    }
    pthread_rwlock_unlock(&reg_lock);
}

int fn_load_rdb(const char *code, size_t len, char *err, size_t errlen) {
    char *name;
    size_t body;
    if (lib_meta(code, len, &name, &body, err, errlen) < 0) return -1;
    struct cmd_ctx c;
    memset(&c, 0, sizeof(c));
    struct fn_lib *l = lib_build(&c, name, code, len, body, 0, err, errlen);
    if (!l) {
        hk_free(name);
        return -1;
    }
    pthread_rwlock_wrlock(&reg_lock);
    int rc = reg_join(l, FN_RESTORE_REPLACE, err, errlen);
    pthread_rwlock_unlock(&reg_lock);
    if (rc < 0) {
        lib_free(l);
        return -1;
    }
    atomic_fetch_add(&reg_gen, 1);
    return 0;
}

void fn_dump(struct cmd_ctx *c) {
    struct hk_buf b = {0};
    fn_rdb_records(&b);
    unsigned char foot[10];
    foot[0] = DUMP_RDB_VERSION & 0xff;
    foot[1] = (DUMP_RDB_VERSION >> 8) & 0xff;
    hk_buf_add(&b, foot, 2, 256);
    uint64_t crc = crc64(0, b.p, b.len);
    for (int i = 0; i < 8; i++) foot[2 + i] = (unsigned char)(crc >> (8 * i));
    hk_buf_add(&b, foot + 2, 8, 256);
    reply_bulk(c, b.p, b.len);
    hk_free(b.p);
}

/* The footer: a version this server reads and the right checksum. */
static int payload_ok(const unsigned char *p, size_t len) {
    if (len < 10) return 0;
    const unsigned char *foot = p + len - 10;
    unsigned ver = (unsigned)foot[0] | ((unsigned)foot[1] << 8);
    if (ver > RESTORE_RDB_VERSION_MAX) return 0;
    uint64_t crc = crc64(0, p, len - 8), got = 0;
    for (int i = 0; i < 8; i++) got |= (uint64_t)foot[2 + i] << (8 * i);
    return crc == got;
}

/* The libraries of a payload, each built as FUNCTION LOAD would into a
 * set of its own (so two of the same name, or two functions of one name,
 * in one payload are refused). Returns the list, or NULL with err (an
 * empty payload gives NULL and an empty err). */
static struct fn_lib *payload_libs(struct cmd_ctx *c, const unsigned char *p, size_t len, char *err, size_t errlen) {
    struct fn_lib *head = NULL, **tail = &head;
    struct rdb_reader r;
    rdb_reader_init(&r, p, len);
    err[0] = '\0';
    while (len - r.pos > 10) {
        unsigned char type;
        if (rdb_read_byte(&r, &type) < 0) {
            snprintf(err, errlen, "can not read data type");
            goto fail;
        }
        if (type == RDB_OPCODE_FUNCTION_PRE_GA) {
            snprintf(err, errlen, "Pre-GA function format not supported");
            goto fail;
        }
        if (type != RDB_OPCODE_FUNCTION2) {
            snprintf(err, errlen, "given type is not a function");
            goto fail;
        }
        size_t clen;
        char *code = rdb_read_string(&r, &clen);
        if (!code) {
            snprintf(err, errlen, "Failed loading library payload");
            goto fail;
        }
        char *name;
        size_t body;
        if (lib_meta(code, clen, &name, &body, err, errlen) < 0) {
            hk_free(code);
            goto fail;
        }
        int dup = 0;
        for (struct fn_lib *l = head; l; l = l->next) dup |= strcmp(l->name, name) == 0;
        if (dup) {
            snprintf(err, errlen, "Library '%s' already exists", name);
            hk_free(name);
            hk_free(code);
            goto fail;
        }
        struct fn_lib *l = lib_build(c, name, code, clen, body, load_timeout(c), err, errlen);
        hk_free(code);
        if (!l) {
            hk_free(name);
            goto fail;
        }
        for (int i = 0; i < l->nfn; i++)
            if (name_taken(l->fn[i].name, head, NULL, 0)) {
                snprintf(err, errlen, "Function %s already exists", l->fn[i].name);
                lib_free(l);
                goto fail;
            }
        *tail = l;
        tail = &l->next;
    }
    return head;
fail:
    while (head) {
        struct fn_lib *nx = head->next;
        lib_free(head);
        head = nx;
    }
    return NULL;
}

/* Under the write lock: add `libs` to the registry by the policy, or
 * change nothing and fill err. */
static int reg_join(struct fn_lib *libs, int policy, char *err, size_t errlen) {
    if (policy == FN_RESTORE_FLUSH) {
        reg_clear();
        for (struct fn_lib *l = libs, *nx; l; l = nx) {
            nx = l->next;
            reg_link(l, NULL);
        }
        return 0;
    }
    int n = 0;
    for (struct fn_lib *l = libs; l; l = l->next) n++;
    struct fn_lib **old = hk_calloc((size_t)n + 1, sizeof(*old));
    int i = 0, rc = -1;
    for (struct fn_lib *l = libs; l; l = l->next, i++) {
        old[i] = reg_lib(l->name);
        if (old[i] && policy != FN_RESTORE_REPLACE) {
            snprintf(err, errlen, "Library %s already exists", l->name);
            goto out;
        }
    }
    for (struct fn_lib *l = libs; l; l = l->next)
        for (int k = 0; k < l->nfn; k++)
            if (name_taken(l->fn[k].name, reg_head, old, n)) {
                snprintf(err, errlen, "Function %s already exists", l->fn[k].name);
                goto out;
            }
    i = 0;
    for (struct fn_lib *l = libs, *nx; l; l = nx, i++) {
        nx = l->next;
        reg_link(l, old[i]);
    }
    rc = 0;
out:
    hk_free(old);
    return rc;
}

void fn_restore(struct cmd_ctx *c, const hk_slice *payload, int policy) {
    char err[1024];
    const unsigned char *p = (const unsigned char *)payload->ptr;
    if (!payload_ok(p, payload->len)) {
        reply_error(c, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    struct fn_lib *libs = payload_libs(c, p, payload->len, err, sizeof(err));
    if (!libs && err[0]) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    change_begin(c);
    pthread_rwlock_wrlock(&reg_lock);
    int rc = reg_join(libs, policy, err, sizeof(err));
    pthread_rwlock_unlock(&reg_lock);
    if (rc < 0) {
        while (libs) {
            struct fn_lib *nx = libs->next;
            lib_free(libs);
            libs = nx;
        }
        reply_errorf(c, "ERR %s", err);
        return;
    }
    change_done(c);
    reply_ok(c);
}
