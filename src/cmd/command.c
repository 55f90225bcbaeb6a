/* command.c - the COMMAND command: COMMAND, COUNT, INFO, DOCS, LIST,
 * GETKEYS, GETKEYSANDFLAGS and HELP.
 *
 * Everything here is read from the one command table (struct command,
 * built by src/server/commands.c from the .def rows, which
 * src/app/cmdtable.c hands it) and shaped like Redis 8's replies, so
 * cluster-aware clients and tools that introspect the server work
 * unchanged. Key specs come from keyspecs.def or the rows' key columns
 * (src/server/commands.c); COMMAND GETKEYS and GETKEYSANDFLAGS follow
 * them as Redis does, falling back to the command's own key positions
 * where a spec cannot be followed. COMMAND DOCS argument trees come from
 * cmddocs.def (src/server/cmddocs.c). */
#include "../core/alloc.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"
#include "../server/acl.h"

#include <stdio.h>
#include <string.h>

struct named_bit {
    uint64_t bit;
    const char *name;
};

/* In Redis's reply order. */
static const struct named_bit flag_names[] = {
    {CMD_WRITE, "write"},
    {CMD_READONLY, "readonly"},
    {CMD_DENYOOM, "denyoom"},
    {CMD_MODULE, "module"},
    {CMD_ADMIN, "admin"},
    {CMD_PUBSUB, "pubsub"},
    {CMD_NOSCRIPT, "noscript"},
    {CMD_BLOCKING, "blocking"},
    {CMD_LOADING, "loading"},
    {CMD_STALE, "stale"},
    {CMD_SKIP_MONITOR, "skip_monitor"},
    {CMD_SKIP_SLOWLOG, "skip_slowlog"},
    {CMD_ASKING, "asking"},
    {CMD_FAST, "fast"},
    {CMD_NO_AUTH, "no_auth"},
    /* may_replicate is not shown, as Redis hides it. */
    {CMD_NO_MANDATORY_KEYS, "no_mandatory_keys"},
    {CMD_NO_ASYNC_LOADING, "no_async_loading"},
    {CMD_NO_MULTI, "no_multi"},
    {CMD_MOVABLE_KEYS, "movablekeys"},
    {CMD_ALLOW_BUSY, "allow_busy"},
};

static const struct named_bit keyflag_names[] = {
    {KS_RO, "RO"},
    {KS_RW, "RW"},
    {KS_OW, "OW"},
    {KS_RM, "RM"},
    {KS_ACCESS, "access"},
    {KS_UPDATE, "update"},
    {KS_INSERT, "insert"},
    {KS_DELETE, "delete"},
    {KS_NOT_KEY, "not_key"},
    {KS_INCOMPLETE, "incomplete"},
    {KS_VARIABLE_FLAGS, "variable_flags"},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const req_policy[] = {NULL, "all_nodes", "all_shards", "multi_shard", "special"};
static const char *const resp_policy[] = {NULL,      "one_succeeded", "all_succeeded", "agg_logical_and",
                                          "agg_logical_or", "agg_min", "agg_max", "agg_sum", "special"};

/* Redis's movablekeys: the keys cannot be found from first/last/step
 * alone, because a spec searches by keyword, counts keys from an argument
 * or cannot be described at all, or a finder locates them. */
static int movable_keys(const struct command *cmd) {
    if (cmd->getkeys) return 1;
    for (int i = 0; i < cmd->nspecs; i++)
        if (cmd->specs[i].bs != KSB_INDEX || cmd->specs[i].fk != KSF_RANGE) return 1;
    return 0;
}

static uint64_t cmd_flags(const struct command *cmd) {
    uint64_t f = cmd->flags;
    if (movable_keys(cmd)) f |= CMD_MOVABLE_KEYS;
    return f;
}

static int has_keys(const struct command *cmd) {
    if (cmd->getkeys) return 1;
    for (int i = 0; i < cmd->nspecs; i++)
        if (!(cmd->specs[i].flags & KS_NOT_KEY)) return 1;
    return 0;
}

static void reply_bits_set(struct cmd_ctx *c, uint64_t bits, const struct named_bit *names, size_t n, const char *prefix) {
    int count = 0;
    for (size_t i = 0; i < n; i++)
        if (bits & names[i].bit) count++;
    reply_set(c, count);
    char buf[64];
    for (size_t i = 0; i < n; i++) {
        if (!(bits & names[i].bit)) continue;
        snprintf(buf, sizeof(buf), "%s%s", prefix, names[i].name);
        reply_simple(c, buf);
    }
}

static void reply_tips(struct cmd_ctx *c, const struct command *cmd) {
    const char *tips[4];
    char req[48], resp[48];
    int n = 0;
    if (cmd->flags & TIP_NONDET_OUTPUT) tips[n++] = "nondeterministic_output";
    if (cmd->flags & TIP_NONDET_ORDER) tips[n++] = "nondeterministic_output_order";
    unsigned rq = (unsigned)((cmd->flags >> TIP_REQ_SHIFT) & 7), rs = (unsigned)((cmd->flags >> TIP_RESP_SHIFT) & 15);
    if (rq && rq < NELEM(req_policy)) {
        snprintf(req, sizeof(req), "request_policy:%s", req_policy[rq]);
        tips[n++] = req;
    }
    if (rs && rs < NELEM(resp_policy)) {
        snprintf(resp, sizeof(resp), "response_policy:%s", resp_policy[rs]);
        tips[n++] = resp;
    }
    reply_set(c, n);
    for (int i = 0; i < n; i++) reply_bulk_cstr(c, tips[i]);
}

/* A {type, spec} map; the caller then writes the spec map itself. */
static void reply_search(struct cmd_ctx *c, const char *type) {
    reply_map(c, 2);
    reply_bulk_cstr(c, "type");
    reply_bulk_cstr(c, type);
    reply_bulk_cstr(c, "spec");
}

static void reply_int_field(struct cmd_ctx *c, const char *name, long long v) {
    reply_bulk_cstr(c, name);
    reply_int(c, v);
}

/* One key spec as Redis 7+ reports it: [notes], flags, begin_search,
 * find_keys. */
static void reply_key_spec(struct cmd_ctx *c, const struct keyspec *ks) {
    reply_map(c, ks->notes ? 4 : 3);
    if (ks->notes) {
        reply_bulk_cstr(c, "notes");
        reply_bulk_cstr(c, ks->notes);
    }
    reply_bulk_cstr(c, "flags");
    reply_bits_set(c, ks->flags, keyflag_names, NELEM(keyflag_names), "");
    reply_bulk_cstr(c, "begin_search");
    switch (ks->bs) {
    case KSB_INDEX:
        reply_search(c, "index");
        reply_map(c, 1);
        reply_int_field(c, "index", ks->bs_pos);
        break;
    case KSB_KEYWORD:
        reply_search(c, "keyword");
        reply_map(c, 2);
        reply_bulk_cstr(c, "keyword");
        reply_bulk_cstr(c, ks->keyword);
        reply_int_field(c, "startfrom", ks->bs_pos);
        break;
    default:
        reply_search(c, "unknown");
        reply_map(c, 0);
    }
    reply_bulk_cstr(c, "find_keys");
    switch (ks->fk) {
    case KSF_RANGE:
        reply_search(c, "range");
        reply_map(c, 3);
        reply_int_field(c, "lastkey", ks->fk_a);
        reply_int_field(c, "keystep", ks->fk_b);
        reply_int_field(c, "limit", ks->fk_c);
        break;
    case KSF_KEYNUM:
        reply_search(c, "keynum");
        reply_map(c, 3);
        reply_int_field(c, "keynumidx", ks->fk_a);
        reply_int_field(c, "firstkey", ks->fk_b);
        reply_int_field(c, "keystep", ks->fk_c);
        break;
    default:
        reply_search(c, "unknown");
        reply_map(c, 0);
    }
}

static void reply_key_specs(struct cmd_ctx *c, const struct command *cmd) {
    reply_set(c, cmd->nspecs);
    for (int i = 0; i < cmd->nspecs; i++) reply_key_spec(c, &cmd->specs[i]);
}

/* One command's COMMAND INFO entry: the ten-element array of Redis 7. */
static void reply_command_info(struct cmd_ctx *c, const struct command *cmd) {
    reply_array(c, 10);
    reply_bulk_cstr(c, cmd->fullname);
    reply_int(c, cmd->arity);
    reply_bits_set(c, cmd_flags(cmd), flag_names, NELEM(flag_names), "");
    /* The legacy key range as the row gives it (Redis's, also for most
     * movable-key commands: SORT says 1 1 1, EVAL 0 0 0). */
    reply_int(c, cmd->first);
    reply_int(c, cmd->last);
    reply_int(c, cmd->step);
    /* The categories, named and ordered as ACL CAT lists them. */
    int ncat = 0;
    for (int i = 0; i < acl_category_count(); i++)
        if (cmd->acl & acl_category_bit(i)) ncat++;
    reply_set(c, ncat);
    for (int i = 0; i < acl_category_count(); i++) {
        if (!(cmd->acl & acl_category_bit(i))) continue;
        char buf[64];
        snprintf(buf, sizeof(buf), "@%s", acl_category_name(i));
        reply_simple(c, buf);
    }
    reply_tips(c, cmd);
    reply_key_specs(c, cmd);
    if (!cmd->nsubs) {
        reply_set(c, 0);
        return;
    }
    reply_array(c, cmd->nsubs);
    for (int i = 0; i < cmd->nsubs; i++) reply_command_info(c, cmd->subs[i]);
}

static void reply_arg_list(struct cmd_ctx *c, const struct cmdarg *args, int n) {
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        const struct cmdarg *a = &args[i];
        int len = 2 + !a->is_container + (a->key_spec_index >= 0) + (a->token != NULL) + (a->since != NULL) +
                  (a->deprecated_since != NULL) + (a->flags != 0) + a->is_container;
        reply_map(c, len);
        reply_bulk_cstr(c, "name");
        reply_bulk_cstr(c, a->name);
        reply_bulk_cstr(c, "type");
        reply_bulk_cstr(c, a->type);
        if (!a->is_container) {
            reply_bulk_cstr(c, "display_text");
            reply_bulk_cstr(c, a->display ? a->display : a->name);
        }
        if (a->key_spec_index >= 0) reply_int_field(c, "key_spec_index", a->key_spec_index);
        if (a->token) {
            reply_bulk_cstr(c, "token");
            reply_bulk_cstr(c, a->token);
        }
        if (a->since) {
            reply_bulk_cstr(c, "since");
            reply_bulk_cstr(c, a->since);
        }
        if (a->deprecated_since) {
            reply_bulk_cstr(c, "deprecated_since");
            reply_bulk_cstr(c, a->deprecated_since);
        }
        if (a->flags) {
            reply_bulk_cstr(c, "flags");
            static const struct named_bit arg_flags[] = {
                {ARGF_OPTIONAL, "optional"}, {ARGF_MULTIPLE, "multiple"}, {ARGF_MULTIPLE_TOKEN, "multiple_token"}};
            reply_bits_set(c, a->flags, arg_flags, NELEM(arg_flags), "");
        }
        if (a->is_container) {
            reply_bulk_cstr(c, "arguments");
            reply_arg_list(c, a->subs, a->nsubs);
        }
    }
}

/* One command's COMMAND DOCS map, in Redis's field order. */
static void reply_command_docs(struct cmd_ctx *c, const struct command *cmd) {
    const struct cmddoc *d = cmd->doc;
    int n = 1 + (cmd->summary != NULL) + (cmd->since != NULL) + (cmd->complexity != NULL) + (d->flags != 0) +
            (d->deprecated_since != NULL) + (d->replaced_by != NULL) + (d->nhistory > 0) + (d->nargs > 0) +
            (cmd->nsubs > 0) + ((cmd->flags & CMD_MODULE) != 0);
    reply_map(c, n);
    if (cmd->summary) {
        reply_bulk_cstr(c, "summary");
        reply_bulk_cstr(c, cmd->summary);
    }
    if (cmd->since) {
        reply_bulk_cstr(c, "since");
        reply_bulk_cstr(c, cmd->since);
    }
    reply_bulk_cstr(c, "group");
    reply_bulk_cstr(c, cmd->group ? cmd->group : "generic");
    if (cmd->flags & CMD_MODULE) {
        /* Redis names the module that serves it. */
        reply_bulk_cstr(c, "module");
        reply_bulk_cstr(c, "vectorset");
    }
    if (cmd->complexity) {
        reply_bulk_cstr(c, "complexity");
        reply_bulk_cstr(c, cmd->complexity);
    }
    if (d->flags) {
        static const struct named_bit doc_flags[] = {{DOC_DEPRECATED, "deprecated"}, {DOC_SYSCMD, "syscmd"}};
        reply_bulk_cstr(c, "doc_flags");
        reply_bits_set(c, d->flags, doc_flags, NELEM(doc_flags), "");
    }
    if (d->deprecated_since) {
        reply_bulk_cstr(c, "deprecated_since");
        reply_bulk_cstr(c, d->deprecated_since);
    }
    if (d->replaced_by) {
        reply_bulk_cstr(c, "replaced_by");
        reply_bulk_cstr(c, d->replaced_by);
    }
    if (d->nhistory) {
        reply_bulk_cstr(c, "history");
        reply_array(c, d->nhistory);
        for (int i = 0; i < d->nhistory; i++) {
            reply_array(c, 2);
            reply_bulk_cstr(c, d->history[i].version);
            reply_bulk_cstr(c, d->history[i].text);
        }
    }
    if (d->nargs) {
        reply_bulk_cstr(c, "arguments");
        reply_arg_list(c, d->args, d->nargs);
    }
    if (cmd->nsubs) {
        reply_bulk_cstr(c, "subcommands");
        reply_map(c, cmd->nsubs);
        for (int i = 0; i < cmd->nsubs; i++) {
            reply_bulk_cstr(c, cmd->subs[i]->fullname);
            reply_command_docs(c, cmd->subs[i]);
        }
    }
}

/* A command by name: "get", or "config|get" for a subcommand. */
static struct command *lookup_fullname(const hk_slice *a) {
    const char *bar = memchr(a->ptr, '|', a->len);
    if (!bar) return cmd_lookup(a->ptr, a->len);
    struct command *p = cmd_lookup(a->ptr, (size_t)(bar - a->ptr));
    if (!p || !p->nsubs) return NULL;
    return cmd_lookup_sub(p, bar + 1, a->len - (size_t)(bar - a->ptr) - 1);
}

void cmd_command(struct cmd_ctx *c) {
    int n = commands_count();
    reply_array(c, n);
    for (int i = 0; i < n; i++) reply_command_info(c, command_by_id(i));
}

void cmd_command_count(struct cmd_ctx *c) { reply_int(c, commands_count()); }

void cmd_command_info(struct cmd_ctx *c) {
    if (c->argc == 2) {
        cmd_command(c);
        return;
    }
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        struct command *cmd = lookup_fullname(&c->argv[i]);
        if (cmd) reply_command_info(c, cmd);
        else reply_null(c);
    }
}

void cmd_command_docs(struct cmd_ctx *c) {
    if (c->argc == 2) {
        int n = commands_count();
        reply_map(c, n);
        for (int i = 0; i < n; i++) {
            struct command *cmd = command_by_id(i);
            reply_bulk_cstr(c, cmd->fullname);
            reply_command_docs(c, cmd);
        }
        return;
    }
    void *h = reply_defer(c);
    long long found = 0;
    for (int i = 2; i < c->argc; i++) {
        struct command *cmd = lookup_fullname(&c->argv[i]);
        if (!cmd) continue;
        reply_bulk_cstr(c, cmd->fullname);
        reply_command_docs(c, cmd);
        found++;
    }
    reply_fill_map(c, h, found);
}

enum { FILTER_NONE, FILTER_MODULE, FILTER_ACLCAT, FILTER_PATTERN };

static int list_match(const struct command *cmd, int filter, uint64_t cat, const hk_slice *pat) {
    switch (filter) {
    case FILTER_NONE: return 1;
    case FILTER_MODULE: return 0; /* no modules */
    case FILTER_ACLCAT: return (cmd->acl & cat) != 0;
    default: return hk_globmatch(pat->ptr, pat->len, cmd->fullname, strlen(cmd->fullname), 1);
    }
}

/* COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]:
 * names of commands and subcommands ("config|get"). */
void cmd_command_list(struct cmd_ctx *c) {
    int filter = FILTER_NONE;
    uint64_t cat = 0;
    const hk_slice *pat = NULL;
    if (c->argc == 5 && arg_is(&c->argv[2], "filterby")) {
        const hk_slice *kind = &c->argv[3];
        pat = &c->argv[4];
        if (arg_is(kind, "module")) filter = FILTER_MODULE;
        else if (arg_is(kind, "aclcat")) {
            filter = FILTER_ACLCAT;
            if (!acl_category_by_name(pat->ptr, pat->len, &cat)) cat = 0;
        } else if (arg_is(kind, "pattern")) filter = FILTER_PATTERN;
        else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    } else if (c->argc != 2) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    void *h = reply_defer(c);
    long long n = 0;
    int total = commands_count();
    for (int i = 0; i < total; i++) {
        const struct command *cmd = command_by_id(i);
        if (list_match(cmd, filter, cat, pat)) {
            reply_bulk_cstr(c, cmd->fullname);
            n++;
        }
        for (int s = 0; s < cmd->nsubs; s++) {
            if (!list_match(cmd->subs[s], filter, cat, pat)) continue;
            reply_bulk_cstr(c, cmd->subs[s]->fullname);
            n++;
        }
    }
    reply_fill_array(c, h, n);
}

/* Shared by GETKEYS and GETKEYSANDFLAGS: resolve the command in argv[2..]
 * and find its keys as indexes into c->argv, with their key-spec flags:
 * by the key specs, else by the command's own key positions (also used
 * for the few commands whose flags depend on their arguments). Replies the
 * error and returns -1 on failure. *idx and *kf are allocated; the caller
 * frees them. */
static int getkeys_common(struct cmd_ctx *c, const struct command **out, int **idx, uint64_t **kf) {
    struct command *cmd = cmd_lookup(c->argv[2].ptr, c->argv[2].len);
    if (cmd && cmd->nsubs && c->argc >= 4) cmd = cmd_lookup_sub(cmd, c->argv[3].ptr, c->argv[3].len);
    if (!cmd) {
        reply_error(c, "ERR Invalid command specified");
        return -1;
    }
    if (!has_keys(cmd)) {
        reply_error(c, "ERR The command has no key arguments");
        return -1;
    }
    int argc = c->argc - 2;
    const hk_slice *argv = c->argv + 2;
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        reply_error(c, "ERR Invalid number of arguments specified for command");
        return -1;
    }
    size_t cap = command_keys_flags_cap(cmd, argc);
    *idx = hk_malloc(cap * sizeof(int));
    *kf = hk_malloc(cap * sizeof(uint64_t));
    int n = command_keys_flags(cmd, argv, argc, *idx, *kf);
    if (n <= 0 && !(n == 0 && (cmd->flags & CMD_NO_MANDATORY_KEYS))) {
        reply_error(c, "ERR Invalid arguments specified for command");
        hk_free(*idx);
        hk_free(*kf);
        return -1;
    }
    for (int i = 0; i < n; i++) (*idx)[i] += 2;
    *out = cmd;
    return n;
}

void cmd_command_getkeys(struct cmd_ctx *c) {
    const struct command *cmd;
    int *idx;
    uint64_t *kf;
    int n = getkeys_common(c, &cmd, &idx, &kf);
    if (n < 0) return;
    reply_array(c, n);
    for (int i = 0; i < n; i++) reply_bulk(c, c->argv[idx[i]].ptr, c->argv[idx[i]].len);
    hk_free(idx);
    hk_free(kf);
}

void cmd_command_getkeysandflags(struct cmd_ctx *c) {
    const struct command *cmd;
    int *idx;
    uint64_t *kf;
    int n = getkeys_common(c, &cmd, &idx, &kf);
    if (n < 0) return;
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        reply_array(c, 2);
        reply_bulk(c, c->argv[idx[i]].ptr, c->argv[idx[i]].len);
        reply_bits_set(c, kf[i], keyflag_names, NELEM(keyflag_names), "");
    }
    hk_free(idx);
    hk_free(kf);
}

void cmd_command_help(struct cmd_ctx *c) {
    static const char *const lines[] = {
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
        NULL,
    };
    reply_help(c, "COMMAND", lines);
}
