/* cmddocs.c - the COMMAND DOCS table: the rows of cmddocs.def (src/cmd/),
 * handed over by commands_init, their history lines and argument lists
 * parsed into trees once at start-up and attached to the commands they
 * name. Replies are written by src/cmd/command.c; this file only builds
 * the data, which nothing changes after commands_init returns (so every
 * thread reads it freely).
 *
 * The argument language is described at the top of cmddocs.def. A row
 * that does not parse, a key_spec_index past the command's key specs, or a
 * command without a row stops the server at start-up: the check that
 * keeps the table complete as commands are added. */
#include "../core/alloc.h"
#include "server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const arg_types[] = {"key",    "string",  "integer",    "double", "pattern",
                                        "unix-time", "pure-token", "oneof",  "block"};

static void __attribute__((noreturn)) doc_fail(const char *name, const char *what, const char *at) {
    fprintf(stderr, "cmddocs.def: %s: %s near \"%.30s\"\n", name, what, at ? at : "");
    exit(1);
}

struct parser {
    const char *name; /* the row, for messages */
    const char *p;
    int nspecs;
};

static void skip_space(struct parser *ps) {
    while (*ps->p == ' ') ps->p++;
}

/* A word: up to a space, parenthesis or bracket. Returns a copy. */
static char *word(struct parser *ps) {
    const char *s = ps->p;
    while (*ps->p && !strchr(" ()[]", *ps->p)) ps->p++;
    if (ps->p == s) doc_fail(ps->name, "word expected", s);
    return hk_strndup(s, (size_t)(ps->p - s));
}

static void parse_list(struct parser *ps, char close, struct cmdarg **out, int *n);

static void parse_arg(struct parser *ps, struct cmdarg *a) {
    memset(a, 0, sizeof(*a));
    a->key_spec_index = -1;
    ps->p++; /* '(' */
    skip_space(ps);
    a->name = word(ps);
    skip_space(ps);
    char *type = word(ps);
    a->type = NULL;
    for (size_t i = 0; i < sizeof(arg_types) / sizeof(arg_types[0]); i++)
        if (!strcmp(type, arg_types[i])) a->type = arg_types[i];
    hk_free(type);
    if (!a->type) doc_fail(ps->name, "unknown argument type", ps->p);
    a->is_container = !strcmp(a->type, "oneof") || !strcmp(a->type, "block");
    for (;;) {
        skip_space(ps);
        if (*ps->p == ')') {
            ps->p++;
            break;
        }
        if (*ps->p == '[') {
            if (!a->is_container || a->subs) doc_fail(ps->name, "sub-arguments on a plain argument", ps->p);
            ps->p++;
            parse_list(ps, ']', &a->subs, &a->nsubs);
            if (!a->nsubs) doc_fail(ps->name, "empty sub-argument list", ps->p);
            continue;
        }
        char *w = word(ps);
        if (!strncmp(w, "ks=", 3)) {
            char *end;
            long v = strtol(w + 3, &end, 10);
            if (*end || v < 0 || v >= ps->nspecs) doc_fail(ps->name, "key_spec_index past the key specs", w);
            a->key_spec_index = (int)v;
        } else if (!strncmp(w, "tok=", 4)) a->token = hk_strdup(w + 4);
        else if (!strncmp(w, "since=", 6)) a->since = hk_strdup(w + 6);
        else if (!strncmp(w, "dep=", 4)) a->deprecated_since = hk_strdup(w + 4);
        else if (!strncmp(w, "disp=", 5)) a->display = hk_strdup(w + 5);
        else if (!strcmp(w, "opt")) a->flags |= ARGF_OPTIONAL;
        else if (!strcmp(w, "multi")) a->flags |= ARGF_MULTIPLE;
        else if (!strcmp(w, "multitok")) a->flags |= ARGF_MULTIPLE_TOKEN;
        else doc_fail(ps->name, "unknown attribute", w);
        hk_free(w);
    }
    if (a->is_container && !a->subs) doc_fail(ps->name, "oneof or block without sub-arguments", ps->p);
    if (!strcmp(a->type, "key") && a->key_spec_index < 0) doc_fail(ps->name, "key argument without ks=", ps->p);
}

/* Arguments up to `close` (']' or the end of the string, '\0'). */
static void parse_list(struct parser *ps, char close, struct cmdarg **out, int *n) {
    int cap = 0;
    *out = NULL;
    *n = 0;
    for (;;) {
        skip_space(ps);
        if (*ps->p == close) {
            if (close) ps->p++;
            return;
        }
        if (*ps->p != '(') doc_fail(ps->name, "'(' expected", ps->p);
        if (*n == cap) {
            cap = cap ? cap * 2 : 4;
            *out = hk_realloc(*out, (size_t)cap * sizeof(**out));
        }
        parse_arg(ps, &(*out)[(*n)++]);
    }
}

static void parse_history(struct cmddoc *d) {
    if (!d->history_src) return;
    const char *s = d->history_src;
    while (*s) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        const char *sp = memchr(s, ' ', len);
        if (!sp) doc_fail(d->name, "history line without a version", s);
        d->history = hk_realloc(d->history, (size_t)(d->nhistory + 1) * sizeof(*d->history));
        d->history[d->nhistory].version = hk_strndup(s, (size_t)(sp - s));
        d->history[d->nhistory].text = hk_strndup(sp + 1, len - (size_t)(sp - s) - 1);
        d->nhistory++;
        s += len;
        if (*s) s++;
    }
}

static struct command *find_fullname(const char *name) {
    const char *bar = strchr(name, '|');
    if (!bar) return cmd_lookup(name, strlen(name));
    struct command *p = cmd_lookup(name, (size_t)(bar - name));
    return p ? cmd_lookup_sub(p, bar + 1, strlen(bar + 1)) : NULL;
}

void cmddocs_init(struct cmddoc *docs, size_t ndocs) {
    for (size_t i = 0; i < ndocs; i++) {
        struct cmddoc *d = &docs[i];
        struct command *cmd = find_fullname(d->name);
        if (!cmd) continue; /* documented ahead of the command */
        if (cmd->doc) doc_fail(d->name, "second row for the command", NULL);
        parse_history(d);
        if (d->args_src) {
            struct parser ps = {.name = d->name, .p = d->args_src, .nspecs = cmd->nspecs};
            parse_list(&ps, '\0', &d->args, &d->nargs);
        }
        cmd->doc = d;
    }
    for (int id = 0; id < commands_total(); id++) {
        struct command *cmd = command_by_id(id);
        if (!cmd->doc) doc_fail(cmd->fullname, "command without a COMMAND DOCS row in cmddocs.def", NULL);
    }
}
