/* args.c - the argument cursor; see args.h. */
#include "args.h"

#include "../core/util.h"
#include "../server/creply.h"

#include <limits.h>

int ac_fail(struct argcur *a, int st) {
    if (a->st == HK_OK) a->st = st;
    return 0;
}

int ac_is(struct argcur *a, const char *word) {
    if (!ac_more(a)) return 0;
    const hk_slice *s = &a->c->argv[a->i];
    if (!hk_eqi(s->ptr, s->len, word)) return 0;
    a->i++;
    return 1;
}

int ac_is_with(struct argcur *a, const char *word, int after) {
    if (!ac_more(a) || a->c->argc - a->i - 1 < after) return 0;
    return ac_is(a, word);
}

const hk_slice *ac_next(struct argcur *a) {
    if (a->st != HK_OK) return NULL;
    if (a->i >= a->c->argc) {
        ac_fail(a, HK_ERR_SYNTAX);
        return NULL;
    }
    return &a->c->argv[a->i++];
}

int ac_ll(struct argcur *a, long long *v) {
    const hk_slice *s = ac_next(a);
    if (!s) return 0;
    if (!hk_str2ll(s->ptr, s->len, v)) return ac_fail(a, HK_ERR_NOT_INT);
    return 1;
}

int ac_ll_min(struct argcur *a, long long min, long long *v, int st_low) {
    if (!ac_ll(a, v)) return 0;
    if (*v < min) return ac_fail(a, st_low);
    return 1;
}

int ac_ll_range(struct argcur *a, long long min, long long max, long long *v, int st_range) {
    if (!ac_ll(a, v)) return 0;
    if (*v < min || *v > max) return ac_fail(a, st_range);
    return 1;
}

int ac_ll_in(struct argcur *a, long long min, long long max, long long *v, int st) {
    const hk_slice *s = ac_next(a);
    if (!s) return 0;
    if (!hk_str2ll(s->ptr, s->len, v) || *v < min || *v > max) return ac_fail(a, st);
    return 1;
}

int ac_db(struct argcur *a, int *db) {
    long long v;
    if (!ac_ll_range(a, INT_MIN, INT_MAX, &v, HK_ERR_INT_RANGE)) return 0;
    if (v < 0 || v >= ks.ndb) return ac_fail(a, HK_ERR_DB_INDEX);
    *db = (int)v;
    return 1;
}

int ac_double(struct argcur *a, double *v, int st_bad) {
    const hk_slice *s = ac_next(a);
    if (!s) return 0;
    if (!hk_str2d(s->ptr, s->len, v)) return ac_fail(a, st_bad ? st_bad : HK_ERR_NOT_FLOAT);
    return 1;
}

void ac_rand_count(struct argcur *a, const char *with, long long *count, int *withflag) {
    *withflag = 0;
    ac_ll_range(a, -LLONG_MAX, LLONG_MAX, count, HK_ERR_LONG_RANGE);
    if (ac_is(a, with)) *withflag = 1;
    if (ac_more(a)) ac_fail(a, HK_ERR_SYNTAX);
    if (*withflag && (*count < -(LLONG_MAX / 2) || *count > LLONG_MAX / 2)) ac_fail(a, HK_ERR_OUT_OF_RANGE);
}

int ac_ok(struct argcur *a) {
    if (a->st == HK_OK) return 1;
    reply_status(a->c, a->st);
    return 0;
}

int parse_mpop(struct cmd_ctx *c, int at, const char *w0, const char *w1, long long *numkeys, int *first_key,
               int *which, long long *count) {
    const hk_slice *n = &c->argv[at];
    if (!hk_str2ll(n->ptr, n->len, numkeys) || *numkeys < 1) {
        reply_status(c, HK_ERR_NUMKEYS);
        return 0;
    }
    /* numkeys keys, then the direction word. */
    if (*numkeys > c->argc - at - 2) {
        reply_status(c, HK_ERR_SYNTAX);
        return 0;
    }
    *first_key = at + 1;
    struct argcur a;
    ac_init(&a, c, at + 1 + (int)*numkeys);
    if (ac_is(&a, w0)) *which = 0;
    else if (ac_is(&a, w1)) *which = 1;
    else ac_fail(&a, HK_ERR_SYNTAX);
    *count = 1;
    int have_count = 0;
    while (ac_more(&a)) {
        if (!have_count && ac_is_with(&a, "COUNT", 1)) {
            ac_ll_in(&a, 1, LLONG_MAX, count, HK_ERR_COUNT_POSITIVE);
            have_count = 1;
        } else {
            ac_fail(&a, HK_ERR_SYNTAX);
        }
    }
    return ac_ok(&a);
}
