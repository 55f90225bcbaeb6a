/* pubsub.c - SUBSCRIBE and friends, PUBLISH, SPUBLISH and PUBSUB. The
 * registry and delivery are src/server/pubsub.c's. */
#include "../server/creply.h"
#include "../server/pubsub.h"
#include "../server/server.h"
#include "cmds.h"
#include "cmdutil.h"
#include "srvcmd.h"

#include <string.h>

/* Redis refuses subscriptions to a client that must not block (a
 * script's or a module's), except SUBSCRIBE and PSUBSCRIBE inside MULTI,
 * which it runs for compatibility with older versions. */
static int subscribe_allowed(struct cmd_ctx *c, const char *name, int in_multi_ok) {
    if (!c->cl || ((c->flags & CTX_DENY_BLOCKING) && !(in_multi_ok && (c->flags & CTX_NESTED)))) {
        reply_errorf(c, "ERR %s isn't allowed for a DENY BLOCKING client", name);
        return 0;
    }
    return 1;
}

void cmd_subscribe(struct cmd_ctx *c) {
    if (subscribe_allowed(c, "SUBSCRIBE", 1)) pubsub_subscribe(c, PS_CHANNEL, 0);
}

void cmd_psubscribe(struct cmd_ctx *c) {
    if (subscribe_allowed(c, "PSUBSCRIBE", 1)) pubsub_subscribe(c, PS_CHANNEL, 1);
}

void cmd_ssubscribe(struct cmd_ctx *c) {
    if (subscribe_allowed(c, "SSUBSCRIBE", 0)) pubsub_subscribe(c, PS_SHARD, 0);
}

void cmd_unsubscribe(struct cmd_ctx *c) {
    if (c->cl) pubsub_unsubscribe(c, PS_CHANNEL, 0);
}

void cmd_punsubscribe(struct cmd_ctx *c) {
    if (c->cl) pubsub_unsubscribe(c, PS_CHANNEL, 1);
}

void cmd_sunsubscribe(struct cmd_ctx *c) {
    if (c->cl) pubsub_unsubscribe(c, PS_SHARD, 0);
}

static void publish(struct cmd_ctx *c, int ns) {
    long long n = pubsub_publish(c->w, ns, c->argv[1].ptr, c->argv[1].len, c->argv[2].ptr, c->argv[2].len);
    /* Replicas (and the journal's readers) see every publication, as
     * Redis propagates it, whether anyone received it here or not. */
    prop_keyless(c);
    reply_int(c, n);
}

void cmd_publish(struct cmd_ctx *c) { publish(c, PS_CHANNEL); }

void cmd_spublish(struct cmd_ctx *c) { publish(c, PS_SHARD); }

/* ---- PUBSUB ------------------------------------------------------------- */

struct chlist {
    struct cmd_ctx *c;
    long long n;
};

static void add_channel(const char *ch, size_t len, void *arg) {
    struct chlist *l = arg;
    reply_bulk(l->c, ch, len);
    l->n++;
}

static void channels(struct cmd_ctx *c, int ns) {
    if (c->argc > 3) {
        reply_subcommand_error(c);
        return;
    }
    struct chlist l = {c, 0};
    void *h = reply_defer(c);
    if (c->argc == 3) pubsub_each_channel(ns, c->argv[2].ptr, c->argv[2].len, add_channel, &l);
    else pubsub_each_channel(ns, NULL, 0, add_channel, &l);
    reply_fill_array(c, h, l.n);
}

static void numsub(struct cmd_ctx *c, int ns) {
    reply_array(c, (long long)(c->argc - 2) * 2);
    for (int j = 2; j < c->argc; j++) {
        reply_bulk(c, c->argv[j].ptr, c->argv[j].len);
        reply_int(c, pubsub_numsub(ns, c->argv[j].ptr, c->argv[j].len));
    }
}

void cmd_pubsub_channels(struct cmd_ctx *c) { channels(c, PS_CHANNEL); }
void cmd_pubsub_shardchannels(struct cmd_ctx *c) { channels(c, PS_SHARD); }
void cmd_pubsub_numsub(struct cmd_ctx *c) { numsub(c, PS_CHANNEL); }
void cmd_pubsub_shardnumsub(struct cmd_ctx *c) { numsub(c, PS_SHARD); }
void cmd_pubsub_numpat(struct cmd_ctx *c) { reply_int(c, pubsub_numpat()); }

void cmd_pubsub_help(struct cmd_ctx *c) {
    static const char *const lines[] = {
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        NULL,
    };
    reply_help(c, "PUBSUB", lines);
}
