/* cmdutil.c - argument parsing shared by several command families: the
 * SCAN-family cursor and options. */
#include "cmdutil.h"

#include <errno.h>
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
    for (int i = first; i < c->argc; i++) {
        const hk_slice *a = &c->argv[i];
        int more = i + 1 < c->argc;
        if (arg_is(a, "COUNT") && more) {
            if (!hk_str2ll(c->argv[i + 1].ptr, c->argv[i + 1].len, &o->count)) {
                reply_error(c, ERR_NOT_INT);
                return 0;
            }
            if (o->count < 1) {
                reply_error(c, ERR_SYNTAX);
                return 0;
            }
            i++;
        } else if (arg_is(a, "MATCH") && more) {
            o->pat = c->argv[i + 1].ptr;
            o->plen = c->argv[i + 1].len;
            i++;
        } else if ((allow & SCAN_ALLOW_TYPE) && arg_is(a, "TYPE") && more) {
            o->type = c->argv[i + 1].ptr;
            o->tlen = c->argv[i + 1].len;
            i++;
        } else if ((allow & SCAN_ALLOW_NOVALUES) && arg_is(a, "NOVALUES")) {
            o->novalues = 1;
        } else {
            reply_error(c, ERR_SYNTAX);
            return 0;
        }
    }
    /* "*" matches everything: skip the matcher. */
    if (o->pat && o->plen == 1 && o->pat[0] == '*') o->pat = NULL;
    return 1;
}
