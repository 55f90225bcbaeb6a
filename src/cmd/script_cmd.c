/* script_cmd.c - EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT: argument
 * syntax and replies. The Lua runtime, the script cache and how a script
 * runs under its command's locks are src/server/script.c. */
#include "../server/creply.h"
#include "../server/script.h"
#include "cmds.h"
#include "cmdutil.h"

void cmd_eval(struct cmd_ctx *c) { script_eval(c, 0, 0); }
void cmd_evalsha(struct cmd_ctx *c) { script_eval(c, 1, 0); }
void cmd_eval_ro(struct cmd_ctx *c) { script_eval(c, 0, 1); }
void cmd_evalsha_ro(struct cmd_ctx *c) { script_eval(c, 1, 1); }

void cmd_script_load(struct cmd_ctx *c) { script_load(c, &c->argv[2]); }

void cmd_script_exists(struct cmd_ctx *c) {
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) reply_int(c, script_exists(c->argv[i].ptr, c->argv[i].len));
}

void cmd_script_flush(struct cmd_ctx *c) {
    if (c->argc > 3 || (c->argc == 3 && !arg_is(&c->argv[2], "async") && !arg_is(&c->argv[2], "sync"))) {
        reply_error(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    script_flush();
    reply_ok(c);
}

void cmd_script_kill(struct cmd_ctx *c) { script_kill(c, 0); }

/* SCRIPT DEBUG: HotKV has no Lua debugger, so only NO (the state every
 * connection is in) is accepted; YES and SYNC are refused rather than
 * answered OK and then ignored. */
void cmd_script_debug(struct cmd_ctx *c) {
    if (arg_is(&c->argv[2], "no")) reply_ok(c);
    else if (arg_is(&c->argv[2], "yes") || arg_is(&c->argv[2], "sync"))
        reply_error(c, "ERR the Lua debugger is not supported by this server: SCRIPT DEBUG YES/SYNC refused");
    else reply_error(c, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
}

void cmd_script_help(struct cmd_ctx *c) {
    static const char *help[] = {
        "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        "HELP",
        "    Prints this help.",
    };
    size_t n = sizeof(help) / sizeof(help[0]);
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) reply_simple(c, help[i]);
}
