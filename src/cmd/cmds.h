/* cmds.h - prototypes of every command handler, generated from
 * commands.def, plus the custom key finders. */
#ifndef HK_CMDS_H
#define HK_CMDS_H

struct client;

#define CMD(n, p, ...) void p(struct client *c);
#define SUB(par, n, p, ...) void p(struct client *c);
#define CONTAINER(...)
#include "commands.def"
#undef CMD
#undef SUB
#undef CONTAINER

#endif
