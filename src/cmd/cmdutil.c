/* cmdutil.c - argument parsing shared by several command families: the
 * SCAN-family cursor and options. */
#include "cmdutil.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int scan_cursor_or_reply(struct cmd_ctx *c, const hk_slice *a, uint64_t *out) {
    char tmp[64];
    if (a->len >= sizeof(tmp) || memchr(a->ptr, '\0', a->len)) goto bad;
    memcpy(tmp, a->ptr, a->len);
    tmp[a->len] = '\0';
    if (tmp[0] == ' ' || (tmp[0] >= '\t' && tmp[0] <= '\r')) goto bad;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(tmp, &end, 10);
    if (*end != '\0' || errno == ERANGE) goto bad;
    *out = v;
    return 1;
bad:
    reply_error(c, "ERR invalid cursor");
    return 0;
}

int scan_args_or_reply(struct cmd_ctx *c, int first, unsigned allow, struct scan_args *o) {
    memset(o, 0, sizeof(*o));
    o->count = 10;
    struct argcur a;
    ac_init(&a, c, first);
    while (ac_more(&a)) {
        if (ac_is_with(&a, "COUNT", 1)) {
            ac_ll_min(&a, 1, &o->count, HK_ERR_SYNTAX);
        } else if (ac_is_with(&a, "MATCH", 1)) {
            const hk_slice *p = ac_next(&a);
            o->pat = p->ptr;
            o->plen = p->len;
        } else if ((allow & SCAN_ALLOW_TYPE) && ac_is_with(&a, "TYPE", 1)) {
            const hk_slice *t = ac_next(&a);
            o->type = t->ptr;
            o->tlen = t->len;
        } else if ((allow & SCAN_ALLOW_NOVALUES) && ac_is(&a, "NOVALUES")) {
            o->novalues = 1;
        } else {
            ac_fail(&a, HK_ERR_SYNTAX);
        }
    }
    if (!ac_ok(&a)) return 0;
    /* "*" matches everything: skip the matcher. */
    if (o->pat && o->plen == 1 && o->pat[0] == '*') o->pat = NULL;
    return 1;
}

void key_write_fire(struct pre_change *pc) {
    struct key_write *w = (struct key_write *)pc;
    db_written(w->k, w->ev);
}

int parse_timeout(struct cmd_ctx *c, int idx, int in_ms, long long now_ms, long long *deadline_ms) {
    const hk_slice *a = &c->argv[idx];
    long long ms;
    if (in_ms) {
        if (!hk_str2ll(a->ptr, a->len, &ms)) {
            reply_status(c, HK_ERR_TIMEOUT_INT);
            return 0;
        }
    } else {
        long double t;
        if (!hk_str2ld(a->ptr, a->len, &t)) {
            reply_status(c, HK_ERR_TIMEOUT_FLOAT);
            return 0;
        }
        t *= 1000.0L;
        if (t > (long double)LLONG_MAX) {
            reply_status(c, HK_ERR_TIMEOUT_RANGE);
            return 0;
        }
        /* -inf and other values below any long long are negative. */
        ms = t < (long double)LLONG_MIN ? -1 : (long long)ceill(t);
    }
    if (ms < 0) {
        reply_status(c, HK_ERR_TIMEOUT_NEGATIVE);
        return 0;
    }
    if (ms > 0) {
        if (ms > LLONG_MAX - now_ms) {
            reply_status(c, HK_ERR_TIMEOUT_RANGE);
            return 0;
        }
        ms += now_ms;
    }
    *deadline_ms = ms;
    return 1;
}

void set_deadline(struct cmd_ctx *c, const struct keyref *k, struct kv *e, long long when) {
    hk_slice key = {k->key, k->klen};
    if (when <= c->now_ms && !(c->flags & CTX_REPLAY)) {
        db_delete(k, c->now_ms, KEV_DEL);
        prop_cmd(c, "DEL", 1, &key);
        return;
    }
    db_set_expire(k, e, when, KEV_EXPIRE);
    prop_begin(c, 3);
    prop_arg_cstr(c, "PEXPIREAT");
    prop_arg_slice(c, &key);
    prop_arg_ll(c, when);
}
