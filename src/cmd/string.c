/* string.c - string commands: GET, SET and the family. */
#include "../core/alloc.h"
#include "cmds.h"
#include "cmdutil.h"

#include <limits.h>
#include <string.h>

void cmd_get(struct client *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_null(c);
        return;
    }
    if (!check_type(c, e, OBJ_STRING)) return;
    char nb[HK_LONG_STR_SIZE];
    const char *p;
    size_t len;
    kv_str(e, nb, &p, &len);
    reply_bulk(c, p, len);
}

#define SET_NX (1 << 0)
#define SET_XX (1 << 1)
#define SET_GET (1 << 2)
#define SET_EX (1 << 3)
#define SET_PX (1 << 4)
#define SET_EXAT (1 << 5)
#define SET_PXAT (1 << 6)
#define SET_KEEPTTL (1 << 7)
#define SET_ANY_EXPIRE (SET_EX | SET_PX | SET_EXAT | SET_PXAT | SET_KEEPTTL)

int parse_expire_arg(struct client *c, const hk_slice *a, int unit_seconds, int absolute, long long *when_ms) {
    long long v;
    if (!hk_str2ll(a->ptr, a->len, &v)) {
        reply_error(c, ERR_NOT_INT);
        return 0;
    }
    if (v <= 0 || (unit_seconds && v > LLONG_MAX / 1000)) {
        reply_errorf(c, ERR_INVALID_EXPIRE, c->cmd->fullname);
        return 0;
    }
    if (unit_seconds) v *= 1000;
    if (!absolute) {
        if (v > LLONG_MAX - c->now_ms) {
            reply_errorf(c, ERR_INVALID_EXPIRE, c->cmd->fullname);
            return 0;
        }
        v += c->now_ms;
    }
    *when_ms = v;
    return 1;
}

void cmd_set(struct client *c) {
    int flags = 0;
    int exp_arg = -1;
    for (int j = 3; j < c->argc; j++) {
        const hk_slice *a = &c->argv[j];
        int has_next = j + 1 < c->argc;
        if (arg_is(a, "NX") && !(flags & SET_XX)) flags |= SET_NX;
        else if (arg_is(a, "XX") && !(flags & SET_NX)) flags |= SET_XX;
        else if (arg_is(a, "GET")) flags |= SET_GET;
        else if (arg_is(a, "KEEPTTL") && !(flags & SET_ANY_EXPIRE)) flags |= SET_KEEPTTL;
        else if (arg_is(a, "EX") && !(flags & SET_ANY_EXPIRE) && has_next) {
            flags |= SET_EX;
            exp_arg = ++j;
        } else if (arg_is(a, "PX") && !(flags & SET_ANY_EXPIRE) && has_next) {
            flags |= SET_PX;
            exp_arg = ++j;
        } else if (arg_is(a, "EXAT") && !(flags & SET_ANY_EXPIRE) && has_next) {
            flags |= SET_EXAT;
            exp_arg = ++j;
        } else if (arg_is(a, "PXAT") && !(flags & SET_ANY_EXPIRE) && has_next) {
            flags |= SET_PXAT;
            exp_arg = ++j;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    long long when = -1;
    if (exp_arg > 0 && !parse_expire_arg(c, &c->argv[exp_arg], (flags & (SET_EX | SET_EXAT)) != 0,
                                         (flags & (SET_EXAT | SET_PXAT)) != 0, &when))
        return;

    struct keyref k;
    key_of(c, 1, &k);
    struct kv *old = lookup_write(c, &k);
    if ((flags & SET_GET) && old && kv_type(old) != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    int ok = !((flags & SET_NX) && old) && !((flags & SET_XX) && !old);
    if (flags & SET_GET) {
        if (old) {
            char nb[HK_LONG_STR_SIZE];
            const char *p;
            size_t len;
            kv_str(old, nb, &p, &len);
            reply_bulk(c, p, len);
        } else {
            reply_null(c);
        }
    }
    if (!ok) {
        if (!(flags & SET_GET)) reply_null(c);
        return;
    }
    if ((flags & SET_KEEPTTL) && old) when = kv_expire(old);
    const hk_slice *v = &c->argv[2];
    if (when >= 0 && when <= c->now_ms) {
        /* Already expired: the write deletes the key. */
        if (old) db_delete(&k, c->now_ms);
        db_touch_write(&k);
    } else {
        db_put(&k, kv_new_str(k.key, k.klen, v->ptr, v->len, when));
        db_touch_write(&k);
    }
    if (!(flags & SET_GET)) reply_ok(c);
}
