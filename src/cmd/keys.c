/* keys.c - generic keyspace commands: DEL, EXISTS, TOUCH, expiry, SCAN... */
#include "cmds.h"
#include "cmdutil.h"

void cmd_del(struct client *c) {
    long long n = 0;
    for (int i = 1; i < c->argc; i++) {
        struct keyref k;
        key_of(c, i, &k);
        if (db_delete(&k, c->now_ms)) {
            db_touch_write(&k);
            n++;
        }
    }
    reply_int(c, n);
}

void cmd_exists(struct client *c) {
    long long n = 0;
    for (int i = 1; i < c->argc; i++) {
        struct keyref k;
        key_of(c, i, &k);
        if (lookup_read(c, &k)) n++;
    }
    reply_int(c, n);
}

void cmd_touch(struct client *c) {
    long long n = 0;
    for (int i = 1; i < c->argc; i++) {
        struct keyref k;
        key_of(c, i, &k);
        if (lookup_write(c, &k)) n++;
    }
    reply_int(c, n);
}
