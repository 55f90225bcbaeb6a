/* args.h - one argument cursor for option parsing.
 *
 * Handlers parse their options by walking argv with a cursor instead of a
 * hand-written loop each: ac_is() consumes a keyword when it is next,
 * the typed readers consume and convert a value, and the first failure is
 * kept (as a status) while every later call
 * does nothing. A handler parses, then asks ac_ok() once: on failure it
 * has replied the first error and returns. So every option error takes
 * one path and the texts come from the status table.
 *
 *     struct argcur a;
 *     ac_init(&a, c, 3);
 *     while (ac_more(&a)) {
 *         if (ac_is(&a, "COUNT")) ac_ll_min(&a, 1, &count, HK_ERR_COUNT_POSITIVE);
 *         else if (ac_is(&a, "WITHSCORES")) withscores = 1;
 *         else ac_fail(&a, HK_ERR_SYNTAX);
 *     }
 *     if (!ac_ok(&a)) return;
 *
 * Also here: the "numkeys key [key ...] <word> [COUNT n]" form shared by
 * LMPOP, ZMPOP, BLMPOP and BZMPOP. */
#ifndef HK_ARGS_H
#define HK_ARGS_H

#include "../core/status.h"
#include "../server/exec.h"

struct argcur {
    struct cmd_ctx *c;
    int i;          /* next argument */
    int st;         /* first failure (HK_OK while none) */
};

static inline void ac_init(struct argcur *a, struct cmd_ctx *c, int first) {
    a->c = c;
    a->i = first;
    a->st = HK_OK;
}
/* Arguments left and no failure yet. */
static inline int ac_more(const struct argcur *a) { return a->st == HK_OK && a->i < a->c->argc; }
/* Arguments left (even after a failure). */
static inline int ac_left(const struct argcur *a) { return a->c->argc - a->i; }
/* Record a failure (the first one wins); returns 0. */
int ac_fail(struct argcur *a, int st);
/* Consume the next argument when it equals `word` (case-insensitively). */
int ac_is(struct argcur *a, const char *word);
/* Same, only when at least `after` more arguments follow it (an option
 * that takes values, so "COUNT" as the last word is not the option). */
int ac_is_with(struct argcur *a, const char *word, int after);
/* The next argument, consumed; NULL (and HK_ERR_SYNTAX) when none. */
const hk_slice *ac_next(struct argcur *a);
/* The next argument as an integer: HK_ERR_NOT_INT (or st_bad) when it is
 * not one. */
int ac_ll(struct argcur *a, long long *v);
/* An integer of at least min; below it `st_low`. */
int ac_ll_min(struct argcur *a, long long min, long long *v, int st_low);
/* An integer in [min, max]; outside it `st_range`. */
int ac_ll_range(struct argcur *a, long long min, long long max, long long *v, int st_range);
/* An integer in [min, max], `st` for anything else (Redis's
 * get...FromObjectOrReply with a message of its own). */
int ac_ll_in(struct argcur *a, long long min, long long max, long long *v, int st);
/* A database index as Redis reads one (an int, then a database that
 * exists): HK_ERR_NOT_INT, HK_ERR_INT_RANGE, then HK_ERR_DB_INDEX. */
int ac_db(struct argcur *a, int *db);
/* A float (Redis's strtod rules): HK_ERR_NOT_FLOAT (or st_bad). */
int ac_double(struct argcur *a, double *v, int st_bad);
/* 1 while no failure; otherwise reply it once and return 0. */
int ac_ok(struct argcur *a);

/* "count [<with>]" of HRANDFIELD (WITHVALUES) and ZRANDMEMBER
 * (WITHSCORES), as Redis checks it: an integer (LLONG_MIN cannot be
 * negated: HK_ERR_LONG_RANGE), the optional word (*with set), nothing
 * after it, and with the word twice the count must still fit (two reply
 * elements per pick: HK_ERR_OUT_OF_RANGE). */
void ac_rand_count(struct argcur *a, const char *with, long long *count, int *withflag);

/* "numkeys key... <w0|w1> [COUNT count]" from argv[at] (the MPOP family):
 * *numkeys, *first_key (argv index), *which (0 for w0, 1 for w1) and
 * *count (1 when absent). Replies Redis's errors and returns 0 on bad
 * input. */
int parse_mpop(struct cmd_ctx *c, int at, const char *w0, const char *w1, long long *numkeys, int *first_key,
               int *which, long long *count);

#endif
