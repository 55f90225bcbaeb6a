/* creply.h - per-client reply helpers used by command handlers.
 *
 * Thin wrappers over the RESP writer (proto/reply.h) that pick the
 * client's protocol version, honour CLIENT REPLY OFF/SKIP, and count error
 * replies for INFO errorstats and the failed_calls statistic. Errors are
 * given whole, code first and without the leading '-':
 * reply_error(c, "ERR syntax error"). */
#ifndef HK_CREPLY_H
#define HK_CREPLY_H

#include "server.h"

#include <string.h>

static inline int reply_muted(struct client *c) {
    return (c->flags & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)) != 0;
}

void reply_error_len(struct client *c, const char *msg, size_t len);
static inline void reply_error(struct client *c, const char *msg) { reply_error_len(c, msg, strlen(msg)); }
void reply_errorf(struct client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void reply_simple(struct client *c, const char *s) {
    if (!reply_muted(c)) rw_simple(&c->out, s, strlen(s));
}
static inline void reply_ok(struct client *c) {
    if (!reply_muted(c)) ob_append(&c->out, "+OK\r\n", 5);
}
static inline void reply_bulk(struct client *c, const void *p, size_t len) {
    if (!reply_muted(c)) rw_bulk(&c->out, p, len);
}
static inline void reply_bulk_cstr(struct client *c, const char *s) { reply_bulk(c, s, strlen(s)); }
static inline void reply_bulk_ll(struct client *c, long long v) {
    char buf[HK_LONG_STR_SIZE];
    int n = hk_ll2str(buf, v);
    reply_bulk(c, buf, (size_t)n);
}
static inline void reply_int(struct client *c, long long v) {
    if (!reply_muted(c)) rw_int(&c->out, v);
}
static inline void reply_null(struct client *c) {
    if (!reply_muted(c)) rw_null(&c->out, c->resp);
}
static inline void reply_null_array(struct client *c) {
    if (!reply_muted(c)) rw_null_array(&c->out, c->resp);
}
static inline void reply_array(struct client *c, long long n) {
    if (!reply_muted(c)) rw_array(&c->out, n);
}
static inline void reply_map(struct client *c, long long n) {
    if (!reply_muted(c)) rw_map(&c->out, c->resp, n);
}
static inline void reply_set(struct client *c, long long n) {
    if (!reply_muted(c)) rw_set(&c->out, c->resp, n);
}
static inline void reply_push(struct client *c, long long n) {
    if (!reply_muted(c)) rw_push(&c->out, c->resp, n);
}
static inline void reply_double(struct client *c, double d) {
    if (!reply_muted(c)) rw_double(&c->out, c->resp, d);
}
static inline void reply_bool(struct client *c, int v) {
    if (!reply_muted(c)) rw_bool(&c->out, c->resp, v);
}
static inline void reply_verbatim(struct client *c, const char *p, size_t len, const char *fmt3) {
    if (!reply_muted(c)) rw_verbatim(&c->out, c->resp, fmt3, p, len);
}
static inline void reply_raw(struct client *c, const void *p, size_t len) {
    if (!reply_muted(c)) ob_append(&c->out, p, len);
}

/* Deferred aggregate headers: the handle is NULL while replies are muted. */
static inline void *reply_defer(struct client *c) { return reply_muted(c) ? NULL : rw_defer(&c->out); }
static inline void reply_fill_array(struct client *c, void *h, long long n) {
    if (h) rw_fill_agg(&c->out, h, '*', n);
}
static inline void reply_fill_map(struct client *c, void *h, long long pairs) {
    if (h) rw_fill_agg(&c->out, h, c->resp >= 3 ? '%' : '*', c->resp >= 3 ? pairs : pairs * 2);
}
static inline void reply_fill_set(struct client *c, void *h, long long n) {
    if (h) rw_fill_agg(&c->out, h, c->resp >= 3 ? '~' : '*', n);
}

/* Shared error texts, byte for byte as Redis sends them. */
#define ERR_SYNTAX "ERR syntax error"
#define ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_NOT_INT "ERR value is not an integer or out of range"
#define ERR_NOT_FLOAT "ERR value is not a valid float"
#define ERR_OVERFLOW "ERR increment or decrement would overflow"
#define ERR_NO_KEY "ERR no such key"
#define ERR_DB_INDEX "ERR DB index is out of range"
#define ERR_INVALID_EXPIRE "ERR invalid expire time in '%s' command"
#define ERR_NOAUTH "NOAUTH Authentication required."

/* Parse helpers that reply with the standard error on failure and return 0. */
int arg_ll_or_reply(struct client *c, const hk_slice *a, long long *out, const char *err);
int arg_double_or_reply(struct client *c, const hk_slice *a, double *out, const char *err);
int arg_range_or_reply(struct client *c, const hk_slice *a, long long min, long long max, long long *out,
                       const char *err);
static inline int arg_is(const hk_slice *a, const char *word) { return hk_eqi(a->ptr, a->len, word); }

/* Error counting (INFO errorstats): index for an error code, -1 when full. */
int errstat_index(const char *code, size_t len);
const char *errstat_name(int idx);
int errstat_count(void);
#define HK_MAX_ERRSTATS 128

#endif
