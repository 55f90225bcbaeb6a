/* cmdtable.c - the rows of the .def files of src/cmd/ as the arrays the
 * server's command table is built from (struct command_rows, server.h).
 *
 * Each .def row becomes one initialiser here, through X-macros: commands
 * and containers, subcommands with their parent's name, the listed key
 * specs and the COMMAND DOCS rows. Nothing is computed: ids, full names,
 * ACL categories, derived key specs and parsed docs are the server's work
 * (src/server/commands.c, cmddocs.c). */
#include "cmdtable.h"

#include "../cmd/cmds.h"
#include "../server/server.h"

static struct command top[] = {
#define CMD(n, p, ar, fl, f, l, s, nk, gk, acl_, grp, since_, cx, sum)                                            \
    {.name = n, .proc = p, .arity = ar, .flags = fl, .first = f, .last = l, .step = s, .numkeys_at = nk,            \
     .getkeys = gk, .acl = acl_, .group = grp, .since = since_, .complexity = cx, .summary = sum},
#define CONTAINER(n, ar, fl, acl_, grp, since_, sum)                                                              \
    {.name = n, .arity = ar, .flags = fl, .acl = acl_, .group = grp, .since = since_, .summary = sum},
#define SUB(...)
#include "../cmd/commands.def"
#undef CMD
#undef CONTAINER
#undef SUB
};

static struct subcommand subs[] = {
#define CMD(...)
#define CONTAINER(...)
#define SUB(par, n, p, ar, fl, f, l, s, nk, gk, acl_, since_, cx, sum)                                            \
    {par,                                                                                                         \
     {.name = n, .proc = p, .arity = ar, .flags = fl, .first = f, .last = l, .step = s, .numkeys_at = nk,           \
      .getkeys = gk, .acl = acl_, .since = since_, .complexity = cx, .summary = sum}},
#include "../cmd/commands.def"
#undef CMD
#undef CONTAINER
#undef SUB
};

static const struct keyspec specs[] = {
#define KSPEC(n, fl, bs, fk, nt) {n, fl, bs, fk, nt},
#include "../cmd/keyspecs.def"
#undef KSPEC
};

static struct cmddoc docs[] = {
#define DOC(n, fl, dep, rep, hist, args)                                                                          \
    {.name = n, .flags = fl, .deprecated_since = dep, .replaced_by = rep, .history_src = hist, .args_src = args},
#include "../cmd/cmddocs.def"
#undef DOC
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

void cmdtable_init(void) {
    struct command_rows rows = {
        .top = top,
        .ntop = COUNT(top),
        .subs = subs,
        .nsubs = COUNT(subs),
        .specs = specs,
        .nspecs = COUNT(specs),
        .docs = docs,
        .ndocs = COUNT(docs),
    };
    commands_init(&rows);
}
