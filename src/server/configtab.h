/* configtab.h - the configuration table's row type, for config.c and the
 * CONFIG command. */
#ifndef HK_CONFIGTAB_H
#define HK_CONFIGTAB_H

#include <stddef.h>

enum cfg_type { CFG_BOOL, CFG_INT, CFG_MEM, CFG_OCTAL, CFG_ENUM, CFG_STRING, CFG_SPECIAL };

#define CFG_IMMUTABLE 1u  /* only from the file or command line */
#define CFG_SENSITIVE 2u  /* value not logged */
#define CFG_MULTI_ARG 4u  /* takes several words: bind, save, buffer limits */
#define CFG_HIDDEN 8u     /* not matched by CONFIG GET patterns, only by its name */
#define CFG_PROTECTED 16u /* CONFIG SET only with enable-protected-configs (Redis's PROTECTED_CONFIG) */

struct cfg_enum {
    const char *name;
    long long value;
};

struct cfg_entry {
    const char *name, *alias;
    enum cfg_type type;
    unsigned flags;
    _Atomic long long *ival;
    char **sval;
    long long min, max;
    const char *def;
    const struct cfg_enum *enums;
    /* Validate (CFG_STRING) or parse and store (CFG_SPECIAL). */
    int (*check)(const char *value, char *err, size_t errsize);
    void *unused;
    void (*get)(char *buf, size_t size);
    /* Run after the value was stored (any type): makes the server act on
     * it. On failure writes the reason to err (or leaves it empty) and
     * returns 0; CONFIG SET then restores the old values (config_cmd.c). */
    int (*apply)(char *err, size_t errsize);
};

extern const struct cfg_entry cfg_table[];
const struct cfg_entry *cfg_find(const char *name, size_t len);
/* Parse and store, without the apply step; on failure writes the reason
 * to err and returns 0 (the stored value is unchanged). */
int cfg_store(const struct cfg_entry *e, const char *value, char *err, size_t errsize);
/* cfg_store, then the row's apply callback. */
int cfg_set(const struct cfg_entry *e, const char *value, char *err, size_t errsize);
void cfg_get(const struct cfg_entry *e, char *buf, size_t size);
int cfg_parse_memory(const char *s, long long *out);
/* CONFIG REWRITE; on failure err holds the whole error reply text. */
int config_rewrite(char *err, size_t errsize);

#endif
