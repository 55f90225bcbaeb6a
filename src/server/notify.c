/* notify.c - keyspace notifications (notify.h): the notify-keyspace-events
 * setting and the publishing of the write hook's events.
 *
 * Not here: which command raises which event (the handlers report their
 * changes through the store's write hook, events.h names them) and the
 * delivery of messages (pubsub.c). */
#include "notify.h"

#include "../store/db.h"
#include "pubsub.h"
#include "server.h"

#include "../core/alloc.h"

#include <stdio.h>
#include <string.h>

_Atomic int notify_flags;

/* The classes 'A' stands for; 'm', 'n', 'o' and 'c' are left out on
 * purpose, as in Redis (a catch-all rarely wants them). */
#define NOTIFY_ALL                                                                                               \
    (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | NOTIFY_ZSET | NOTIFY_EXPIRED |    \
     NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

/* A class letter's flag; 0 for a character that names no class. */
static int letter_flag(int ch) {
    switch (ch) {
    case 'A': return NOTIFY_ALL;
    case 'g': return NOTIFY_GENERIC;
    case '$': return NOTIFY_STRING;
    case 'l': return NOTIFY_LIST;
    case 's': return NOTIFY_SET;
    case 'h': return NOTIFY_HASH;
    case 'z': return NOTIFY_ZSET;
    case 'x': return NOTIFY_EXPIRED;
    case 'e': return NOTIFY_EVICTED;
    case 'K': return NOTIFY_KEYSPACE;
    case 'E': return NOTIFY_KEYEVENT;
    case 't': return NOTIFY_STREAM;
    case 'm': return NOTIFY_KEY_MISS;
    case 'd': return NOTIFY_MODULE;
    case 'n': return NOTIFY_NEW;
    case 'o': return NOTIFY_OVERWRITTEN;
    case 'c': return NOTIFY_TYPE_CHANGED;
    default: return 0;
    }
}

int notify_parse(const char *s) {
    int flags = 0;
    for (; *s; s++) {
        int f = letter_flag((unsigned char)*s);
        if (!f) return -1;
        flags |= f;
    }
    return flags;
}

void notify_format(int flags, char *buf, size_t size) {
    /* Redis's order: the classes (or 'A' for all of them), then the
     * channel kinds, then 'm'. */
    static const struct {
        int flag;
        char ch;
    } classes[] = {{NOTIFY_GENERIC, 'g'}, {NOTIFY_STRING, '$'}, {NOTIFY_LIST, 'l'},    {NOTIFY_SET, 's'},
                   {NOTIFY_HASH, 'h'},    {NOTIFY_ZSET, 'z'},   {NOTIFY_EXPIRED, 'x'}, {NOTIFY_EVICTED, 'e'},
                   {NOTIFY_STREAM, 't'},  {NOTIFY_MODULE, 'd'}, {NOTIFY_NEW, 'n'},    {NOTIFY_OVERWRITTEN, 'o'},
                   {NOTIFY_TYPE_CHANGED, 'c'}};
    char out[32];
    size_t n = 0;
    /* As in Redis, 'A' hides an 'n' set with it ("KEAn" reads "AKE"). */
    if ((flags & NOTIFY_ALL) == NOTIFY_ALL) {
        out[n++] = 'A';
    } else {
        for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
            if (flags & classes[i].flag) out[n++] = classes[i].ch;
    }
    if (flags & NOTIFY_KEYSPACE) out[n++] = 'K';
    if (flags & NOTIFY_KEYEVENT) out[n++] = 'E';
    if (flags & NOTIFY_KEY_MISS) out[n++] = 'm';
    out[n] = '\0';
    snprintf(buf, size, "%s", out);
}

int notify_config_set(const char *value, char *err, size_t errsize) {
    int flags = notify_parse(value);
    if (flags < 0) {
        /* Redis 8.4's text, which does not list 'o' and 'c'. */
        snprintf(err, errsize, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
        return 0;
    }
    atomic_store(&notify_flags, flags);
    return 1;
}

void notify_config_get(char *buf, size_t size) { notify_format(atomic_load(&notify_flags), buf, size); }

/* An event class letter (events.h) as a flag. */
static int class_flag(char cls) {
    switch (cls) {
    case KEVC_GENERIC: return NOTIFY_GENERIC;
    case KEVC_STRING: return NOTIFY_STRING;
    case KEVC_LIST: return NOTIFY_LIST;
    case KEVC_SET: return NOTIFY_SET;
    case KEVC_HASH: return NOTIFY_HASH;
    case KEVC_ZSET: return NOTIFY_ZSET;
    case KEVC_EXPIRED: return NOTIFY_EXPIRED;
    case KEVC_EVICTED: return NOTIFY_EVICTED;
    case KEVC_STREAM: return NOTIFY_STREAM;
    case KEVC_NEW: return NOTIFY_NEW;
    case KEVC_KEYMISS: return NOTIFY_KEY_MISS;
    case KEVC_OVERWRITTEN: return NOTIFY_OVERWRITTEN;
    case KEVC_TYPE_CHANGED: return NOTIFY_TYPE_CHANGED;
    default: return 0;
    }
}

/* "<prefix><db>__:<suffix>" into buf (cap bytes), or into a fresh block
 * when it does not fit; returns the text (the caller frees it when it is
 * not buf) and its length in *len. */
static char *channel(char *buf, size_t cap, const char *prefix, int db, const char *suffix, size_t slen,
                     size_t *len) {
    char head[40];
    int hl = snprintf(head, sizeof(head), "%s%d__:", prefix, db);
    size_t need = (size_t)hl + slen;
    char *out = need <= cap ? buf : hk_malloc(need);
    memcpy(out, head, (size_t)hl);
    memcpy(out + hl, suffix, slen);
    *len = need;
    return out;
}

void notify_event(const struct keyref *k, int ev) {
    if (!k || ev <= KEV_NONE || ev >= KEV_COUNT) return;
    const struct kev_info *ki = &kev_info[ev];
    if (!ki->name) return;
    int flags = atomic_load_explicit(&notify_flags, memory_order_relaxed);
    if (!(flags & class_flag(ki->cls)) || !(flags & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT))) return;
    /* Nobody to tell: the common case when notifications are on but no
     * one listens costs only this. */
    if (atomic_load_explicit(&pubsub_total_subs, memory_order_relaxed) == 0) return;
    size_t nlen = strlen(ki->name), clen;
    char buf[256];
    /* Keyspace channel first, then keyevent, as Redis publishes them. */
    if (flags & NOTIFY_KEYSPACE) {
        char *ch = channel(buf, sizeof(buf), "__keyspace@", k->db, k->key, k->klen, &clen);
        pubsub_publish(current_worker, PS_CHANNEL, ch, clen, ki->name, nlen);
        if (ch != buf) hk_free(ch);
    }
    if (flags & NOTIFY_KEYEVENT) {
        char *ch = channel(buf, sizeof(buf), "__keyevent@", k->db, ki->name, nlen, &clen);
        pubsub_publish(current_worker, PS_CHANNEL, ch, clen, k->key, k->klen);
        if (ch != buf) hk_free(ch);
    }
}
