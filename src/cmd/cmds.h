/* cmds.h - prototypes of every command handler, generated from
 * commands.def, plus the custom key finders. */
#ifndef HK_CMDS_H
#define HK_CMDS_H

#include "../server/exec.h"

#define CMD(n, p, ...) void p(struct cmd_ctx *c);
#define SUB(par, n, p, ...) void p(struct cmd_ctx *c);
#define CONTAINER(...)
#include "commands.def"
#undef CMD
#undef SUB
#undef CONTAINER

/* geo.c: GEORADIUS / GEORADIUSBYMEMBER key finder (source + STORE target). */
int geo_radius_getkeys(const hk_slice *argv, int argc, int *keys, int max);

/* sort.c: SORT (sorted key + STORE destination) and SORT_RO key finders. */
int sort_getkeys(const hk_slice *argv, int argc, int *keys, int max);
int sort_ro_getkeys(const hk_slice *argv, int argc, int *keys, int max);

/* string.c: MSETEX's keys, every other argument after numkeys. */
int msetex_getkeys(const hk_slice *argv, int argc, int *keys, int max);

/* stream.c: XREAD and XREADGROUP key finder (the keys after STREAMS). */
int xread_getkeys(const hk_slice *argv, int argc, int *keys, int max);

#endif
