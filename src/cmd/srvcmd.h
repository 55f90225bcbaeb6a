/* srvcmd.h - helpers shared by the server administration commands
 * (server.c, info.c, config_cmd.c, command.c). Not for data commands. */
#ifndef HK_SRVCMD_H
#define HK_SRVCMD_H

#include "../server/server.h"

#include <stdarg.h>
#include <stddef.h>

/* Reply Redis's HELP array: "<CMD> <subcommand> ...", the given lines
 * (NULL-terminated), then the closing HELP entry. */
void reply_help(struct cmd_ctx *c, const char *cmd, const char *const *lines);

/* A growable text buffer for INFO and similar reports. */
struct sbuf {
    char *p;
    size_t len, cap;
};
void sb_catf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_cat(struct sbuf *b, const char *s, size_t len);
void sb_free(struct sbuf *b);
/* INFO's latencystats section (observe.c). */
void info_latencystats(struct sbuf *b);

#include "../server/stats.h"

#endif
