/* command.c - the COMMAND command: COMMAND, COUNT, INFO, DOCS, LIST,
 * GETKEYS, GETKEYSANDFLAGS and HELP.
 *
 * Everything here is read from the one command table (struct command,
 * built by src/server/commands.c from the .def rows) and shaped like Redis
 * 7.2's replies, so cluster-aware clients and tools that introspect the
 * server work unchanged. Key specs are derived from the rows' legacy key
 * range (first, last, step) and their KS_* flags; commands with a custom key
 * finder report an "unknown" key spec, which is what Redis says of key
 * positions it cannot describe statically. COMMAND DOCS has no argument
 * descriptions yet. */
#include "../core/alloc.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"

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
    {CMD_MAY_REPLICATE, "may_replicate"},
    {CMD_NO_MANDATORY_KEYS, "no_mandatory_keys"},
    {CMD_NO_ASYNC_LOADING, "no_async_loading"},
    {CMD_NO_MULTI, "no_multi"},
    {CMD_MOVABLE_KEYS, "movablekeys"},
    {CMD_ALLOW_BUSY, "allow_busy"},
};

static const struct named_bit acl_names[] = {
    {ACL_KEYSPACE, "keyspace"},   {ACL_READ, "read"},       {ACL_WRITE, "write"},
    {ACL_SET, "set"},             {ACL_SORTEDSET, "sortedset"}, {ACL_LIST, "list"},
    {ACL_HASH, "hash"},           {ACL_STRING, "string"},   {ACL_BITMAP, "bitmap"},
    {ACL_HYPERLOGLOG, "hyperloglog"}, {ACL_GEO, "geo"},     {ACL_STREAM, "stream"},
    {ACL_PUBSUB, "pubsub"},       {ACL_ADMIN, "admin"},     {ACL_FAST, "fast"},
    {ACL_SLOW, "slow"},           {ACL_BLOCKING, "blocking"}, {ACL_DANGEROUS, "dangerous"},
    {ACL_CONNECTION, "connection"}, {ACL_TRANSACTION, "transaction"}, {ACL_SCRIPTING, "scripting"},
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

static uint64_t cmd_flags(const struct command *cmd) {
    uint64_t f = cmd->flags;
    if (cmd->getkeys || cmd->numkeys_at) f |= CMD_MOVABLE_KEYS;
    return f;
}

static int has_keys(const struct command *cmd) { return cmd->getkeys || cmd->first > 0 || cmd->numkeys_at > 0; }

/* Key-spec flags of a command: the row's KS_* bits, or derived from its
 * read/write flags when the row gives none. */
static uint64_t key_flags(const struct command *cmd) {
    uint64_t f = cmd->flags & KS_MASK;
    if (f) return f;
    if (cmd->flags & CMD_WRITE) return KS_RW | KS_UPDATE;
    return KS_RO | KS_ACCESS;
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

/* One key spec up to its find_keys spec: flags, then begin_search by
 * index, or "unknown" when index is 0 (positions found by code). */
static void reply_spec_head(struct cmd_ctx *c, const struct command *cmd, int index,
                            const char *find_type) {
    reply_map(c, 3);
    reply_bulk_cstr(c, "flags");
    reply_bits_set(c, key_flags(cmd), keyflag_names, NELEM(keyflag_names), "");
    reply_bulk_cstr(c, "begin_search");
    if (index > 0) {
        reply_search(c, "index");
        reply_map(c, 1);
        reply_bulk_cstr(c, "index");
        reply_int(c, index);
    } else {
        reply_search(c, "unknown");
        reply_map(c, 0);
    }
    reply_bulk_cstr(c, "find_keys");
    reply_search(c, find_type);
}

static void reply_key_specs(struct cmd_ctx *c, const struct command *cmd) {
    if (!has_keys(cmd)) {
        reply_set(c, 0);
        return;
    }
    if (cmd->getkeys) {
        reply_set(c, 1);
        reply_spec_head(c, cmd, 0, "unknown");
        reply_map(c, 0);
        return;
    }
    reply_set(c, (cmd->first > 0) + (cmd->numkeys_at > 0));
    if (cmd->first > 0) {
        reply_spec_head(c, cmd, cmd->first, "range");
        reply_map(c, 3);
        reply_bulk_cstr(c, "lastkey");
        reply_int(c, cmd->last < 0 ? cmd->last : cmd->last - cmd->first);
        reply_bulk_cstr(c, "keystep");
        reply_int(c, cmd->step);
        reply_bulk_cstr(c, "limit");
        reply_int(c, 0);
    }
    if (cmd->numkeys_at > 0) {
        reply_spec_head(c, cmd, cmd->numkeys_at, "keynum");
        reply_map(c, 3);
        reply_bulk_cstr(c, "keynumidx");
        reply_int(c, 0);
        reply_bulk_cstr(c, "firstkey");
        reply_int(c, 1);
        reply_bulk_cstr(c, "keystep");
        reply_int(c, 1);
    }
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
    reply_bits_set(c, cmd->acl, acl_names, NELEM(acl_names), "@");
    reply_tips(c, cmd);
    reply_key_specs(c, cmd);
    if (!cmd->nsubs) {
        reply_set(c, 0);
        return;
    }
    reply_array(c, cmd->nsubs);
    for (int i = 0; i < cmd->nsubs; i++) reply_command_info(c, cmd->subs[i]);
}

static void reply_command_docs(struct cmd_ctx *c, const struct command *cmd) {
    int n = 0;
    if (cmd->summary) n++;
    if (cmd->since) n++;
    if (cmd->group) n++;
    if (cmd->complexity) n++;
    if (cmd->nsubs) n++;
    reply_map(c, n);
    if (cmd->summary) {
        reply_bulk_cstr(c, "summary");
        reply_bulk_cstr(c, cmd->summary);
    }
    if (cmd->since) {
        reply_bulk_cstr(c, "since");
        reply_bulk_cstr(c, cmd->since);
    }
    if (cmd->group) {
        reply_bulk_cstr(c, "group");
        reply_bulk_cstr(c, cmd->group);
    }
    if (cmd->complexity) {
        reply_bulk_cstr(c, "complexity");
        reply_bulk_cstr(c, cmd->complexity);
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
            for (size_t i = 0; i < NELEM(acl_names); i++)
                if (hk_eqi(pat->ptr, pat->len, acl_names[i].name)) cat = acl_names[i].bit;
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
 * and find its key positions (as indexes into c->argv). Replies the error
 * and returns -1 on failure. *idx is allocated; the caller frees it. */
static int getkeys_common(struct cmd_ctx *c, const struct command **out, int **idx) {
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
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        reply_error(c, "ERR Invalid number of arguments specified for command");
        return -1;
    }
    /* The key finders read argv alone: show them the inner command. */
    *idx = hk_malloc((size_t)argc * sizeof(int));
    int n = command_keys(cmd, c->argv + 2, argc, *idx);
    if (n <= 0 && !(n == 0 && (cmd->flags & CMD_NO_MANDATORY_KEYS))) {
        reply_error(c, "ERR Invalid arguments specified for command");
        hk_free(*idx);
        return -1;
    }
    for (int i = 0; i < n; i++) (*idx)[i] += 2;
    *out = cmd;
    return n;
}

void cmd_command_getkeys(struct cmd_ctx *c) {
    const struct command *cmd;
    int *idx;
    int n = getkeys_common(c, &cmd, &idx);
    if (n < 0) return;
    reply_array(c, n);
    for (int i = 0; i < n; i++) reply_bulk(c, c->argv[idx[i]].ptr, c->argv[idx[i]].len);
    hk_free(idx);
}

void cmd_command_getkeysandflags(struct cmd_ctx *c) {
    const struct command *cmd;
    int *idx;
    int n = getkeys_common(c, &cmd, &idx);
    if (n < 0) return;
    uint64_t kf = key_flags(cmd);
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        reply_array(c, 2);
        reply_bulk(c, c->argv[idx[i]].ptr, c->argv[idx[i]].len);
        reply_bits_set(c, kf, keyflag_names, NELEM(keyflag_names), "");
    }
    hk_free(idx);
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
