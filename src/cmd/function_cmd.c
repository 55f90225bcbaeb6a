/* function_cmd.c - FCALL, FCALL_RO and the FUNCTION subcommands: argument
 * syntax and the texts of its errors. The library registry, DUMP and
 * RESTORE are src/server/function.c; loading a library's code and running
 * a function are src/server/script.c. */
#include "../server/creply.h"
#include "../server/function.h"
#include "../server/script.h"
#include "cmds.h"
#include "cmdutil.h"

void cmd_fcall(struct cmd_ctx *c) { script_fcall(c, 0); }
void cmd_fcall_ro(struct cmd_ctx *c) { script_fcall(c, 1); }

/* FUNCTION LOAD [REPLACE] code: the last argument is the code, every one
 * before it an option. */
void cmd_function_load(struct cmd_ctx *c) {
    int replace = 0;
    for (int i = 2; i < c->argc - 1; i++) {
        if (arg_is(&c->argv[i], "replace")) {
            replace = 1;
            continue;
        }
        reply_errorf(c, "ERR Unknown option given: %.*s", (int)c->argv[i].len, c->argv[i].ptr);
        return;
    }
    fn_load(c, &c->argv[c->argc - 1], replace);
}

void cmd_function_delete(struct cmd_ctx *c) { fn_delete(c, &c->argv[2]); }

void cmd_function_flush(struct cmd_ctx *c) {
    if (c->argc > 3) {
        reply_subcommand_error(c);
        return;
    }
    if (c->argc == 3 && !arg_is(&c->argv[2], "sync") && !arg_is(&c->argv[2], "async")) {
        reply_error(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    fn_flush(c);
}

/* FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE], each option once, in
 * any order. */
void cmd_function_list(struct cmd_ctx *c) {
    int withcode = 0;
    const hk_slice *pattern = NULL;
    for (int i = 2; i < c->argc; i++) {
        const hk_slice *a = &c->argv[i];
        if (!withcode && arg_is(a, "withcode")) {
            withcode = 1;
            continue;
        }
        if (!pattern && arg_is(a, "libraryname")) {
            if (i >= c->argc - 1) {
                reply_error(c, "ERR library name argument was not given");
                return;
            }
            pattern = &c->argv[++i];
            continue;
        }
        reply_errorf(c, "ERR Unknown argument %.*s", (int)a->len, a->ptr);
        return;
    }
    fn_list(c, pattern, withcode);
}

void cmd_function_dump(struct cmd_ctx *c) { fn_dump(c); }

void cmd_function_restore(struct cmd_ctx *c) {
    if (c->argc > 4) {
        reply_subcommand_error(c);
        return;
    }
    int policy = FN_RESTORE_APPEND;
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "append")) policy = FN_RESTORE_APPEND;
        else if (arg_is(&c->argv[3], "replace")) policy = FN_RESTORE_REPLACE;
        else if (arg_is(&c->argv[3], "flush")) policy = FN_RESTORE_FLUSH;
        else {
            reply_error(c, "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
            return;
        }
    }
    fn_restore(c, &c->argv[2], policy);
}

void cmd_function_stats(struct cmd_ctx *c) { fn_stats(c); }
void cmd_function_kill(struct cmd_ctx *c) { script_kill(c, 1); }

void cmd_function_help(struct cmd_ctx *c) {
    static const char *help[] = {
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        ("    Return a serialized payload representing the current libraries, can be restored using FUNCTION "
         "RESTORE command"),
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
        "      libraries with the new libraries (notice that even on this option there is a chance of failure",
        "      in case of functions name collision with another library).",
        "HELP",
        "    Prints this help.",
    };
    size_t n = sizeof(help) / sizeof(help[0]);
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) reply_simple(c, help[i]);
}
