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

/* Sorted sets: value lifecycle registration and numkeys key finders. */
void zset_init(void);
int zset_getkeys_numkeys(struct client *c, int *keys, int max);
int zset_getkeys_store(struct client *c, int *keys, int max);

/* list.c: value lifecycle registration and LMPOP's key finder. */
void list_init(void);
int list_lmpop_getkeys(struct client *c, int *keys, int max);

/* blocking.c: BLMPOP/BZMPOP key finder (numkeys at argv[2]). */
int block_mpop_getkeys(struct client *c, int *keys, int max);

/* hash.c: value lifecycle registration. */
void hash_init(void);

/* set.c: value lifecycle registration and SINTERCARD's key finder. */
void set_init(void);
int set_intercard_keys(struct client *c, int *keys, int max);

/* geo.c: GEORADIUS / GEORADIUSBYMEMBER key finder (source + STORE target). */
int geo_radius_getkeys(struct client *c, int *keys, int max);

#endif
