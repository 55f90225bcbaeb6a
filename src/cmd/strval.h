/* strval.h - helpers the string and bitmap families share for string
 * values: the size limit of a string, turning an entry's value into a
 * growable raw string for in-place edits (APPEND, SETRANGE, SETBIT,
 * BITFIELD), and building entries with Redis's choice of encoding. It is
 * not a string library: values live in kv entries (types/kv.h) and every
 * function here runs with the key's shard locked by dispatch. */
#ifndef HK_STRVAL_H
#define HK_STRVAL_H

#include "../store/db.h"

#include <stddef.h>
#include <string.h>

/* Largest string a command may build: proto-max-bulk-len, capped by the
 * 32-bit length of a rawstr. */
long long strval_max_len(void);

/* Make the value of string entry *ep (found for k) a rawstr with room for
 * at least `reserve` bytes, keeping its bytes and its TTL, and return it.
 * An inline (int/embstr) value is copied out and the entry is replaced, so
 * *ep is updated; the old entry must not be used afterwards. The rawstr
 * stays owned by the entry. */
struct rawstr *strval_unshare(const struct keyref *k, struct kv **ep, size_t reserve);

/* New entry for k holding a raw string of `len` zero bytes, exactly sized
 * (as Redis sizes a string that SETRANGE/SETBIT create). Not inserted. */
struct kv *strval_new_zeroed(const struct keyref *k, size_t len, struct rawstr **out);

/* New string entry that is never integer-encoded: embstr up to 44 bytes,
 * raw beyond (Redis's createStringObject, used for INCRBYFLOAT results). */
struct kv *strval_new_noint(const char *key, size_t klen, const char *p, size_t len, long long expire);

/* Extend s (whose capacity must allow it) to `len` bytes, zero filling the
 * new tail; a no-op when s is already that long. */
static inline void rawstr_growzero(struct rawstr *s, size_t len) {
    if (len <= s->len) return;
    memset(s->buf + s->len, 0, len - s->len);
    s->len = (uint32_t)len;
    s->buf[len] = '\0';
}

#endif
