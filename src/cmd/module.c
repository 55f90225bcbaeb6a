/* module.c - the MODULE command: LIST and HELP.
 *
 * HotKV has no module loader: what Redis ships as modules is built in.
 * Redis 8 lists its bundled vector sets as a module named "vectorset" with
 * an empty path and no arguments, and clients probe MODULE LIST to learn
 * whether the V* commands exist, so LIST answers the same for HotKV's
 * built-in vector sets. LOAD, LOADEX and UNLOAD are not offered. */
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"

/* What is built in, listed as Redis 8 lists its bundled modules. */
static const struct {
    const char *name;
    long long ver;
} builtin_modules[] = {
    {"vectorset", 1},
};

void cmd_module_list(struct cmd_ctx *c) {
    size_t n = sizeof(builtin_modules) / sizeof(builtin_modules[0]);
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) {
        reply_map(c, 4);
        reply_bulk_cstr(c, "name");
        reply_bulk_cstr(c, builtin_modules[i].name);
        reply_bulk_cstr(c, "ver");
        reply_int(c, builtin_modules[i].ver);
        reply_bulk_cstr(c, "path");
        reply_bulk_cstr(c, "");
        reply_bulk_cstr(c, "args");
        reply_array(c, 0);
    }
}

void cmd_module_help(struct cmd_ctx *c) {
    static const char *const lines[] = {
        "LIST",
        "    Return a list of loaded modules.",
        "LOAD <path> [<arg> ...]",
        "    Load a module library from <path>, passing to it any optional arguments.",
        "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
        "    Load a module library from <path>, while passing it module configurations and optional arguments.",
        "UNLOAD <name>",
        "    Unload a module.",
        NULL,
    };
    reply_help(c, "MODULE", lines);
}
