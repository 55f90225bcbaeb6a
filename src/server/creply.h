/* creply.h - the reply helpers command handlers write with.
 *
 * Thin wrappers over the RESP writer (proto/reply.h) that write into the
 * context's reply sink (a connection's output buffer or a capture buffer),
 * pick its protocol version, honour muting (CLIENT REPLY OFF/SKIP), and
 * count error replies for INFO errorstats and the failed_calls statistic.
 * Errors are given whole, code first and without the leading '-':
 * reply_error(c, "ERR syntax error"); shared texts come from the status
 * table (core/status.h) through reply_status. */
#ifndef HK_CREPLY_H
#define HK_CREPLY_H

#include "server.h"

#include <string.h>

static inline int reply_muted(const struct cmd_ctx *c) { return (c->flags & CTX_MUTED) != 0; }

void reply_error_len(struct cmd_ctx *c, const char *msg, size_t len);
static inline void reply_error(struct cmd_ctx *c, const char *msg) { reply_error_len(c, msg, strlen(msg)); }
void reply_errorf(struct cmd_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void reply_simple(struct cmd_ctx *c, const char *s) {
    if (!reply_muted(c)) rw_simple(c->out, s, strlen(s));
}
static inline void reply_ok(struct cmd_ctx *c) {
    if (!reply_muted(c)) ob_append(c->out, "+OK\r\n", 5);
}
static inline void reply_bulk(struct cmd_ctx *c, const void *p, size_t len) {
    if (!reply_muted(c)) rw_bulk(c->out, p, len);
}
static inline void reply_bulk_cstr(struct cmd_ctx *c, const char *s) { reply_bulk(c, s, strlen(s)); }
static inline void reply_bulk_ll(struct cmd_ctx *c, long long v) {
    char buf[HK_LONG_STR_SIZE];
    int n = hk_ll2str(buf, v);
    reply_bulk(c, buf, (size_t)n);
}
static inline void reply_int(struct cmd_ctx *c, long long v) {
    if (!reply_muted(c)) rw_int(c->out, v);
}
static inline void reply_null(struct cmd_ctx *c) {
    if (!reply_muted(c)) rw_null(c->out, c->resp);
}
static inline void reply_null_array(struct cmd_ctx *c) {
    if (!reply_muted(c)) rw_null_array(c->out, c->resp);
}
static inline void reply_array(struct cmd_ctx *c, long long n) {
    if (!reply_muted(c)) rw_array(c->out, n);
}
static inline void reply_map(struct cmd_ctx *c, long long n) {
    if (!reply_muted(c)) rw_map(c->out, c->resp, n);
}
static inline void reply_set(struct cmd_ctx *c, long long n) {
    if (!reply_muted(c)) rw_set(c->out, c->resp, n);
}
static inline void reply_push(struct cmd_ctx *c, long long n) {
    if (!reply_muted(c)) rw_push(c->out, c->resp, n);
}
static inline void reply_double(struct cmd_ctx *c, double d) {
    if (!reply_muted(c)) rw_double(c->out, c->resp, d);
}
static inline void reply_bool(struct cmd_ctx *c, int v) {
    if (!reply_muted(c)) rw_bool(c->out, c->resp, v);
}
static inline void reply_verbatim(struct cmd_ctx *c, const char *p, size_t len, const char *fmt3) {
    if (!reply_muted(c)) rw_verbatim(c->out, c->resp, fmt3, p, len);
}
static inline void reply_raw(struct cmd_ctx *c, const void *p, size_t len) {
    if (!reply_muted(c)) ob_append(c->out, p, len);
}

/* Deferred aggregate headers: the handle is NULL while replies are muted. */
static inline void *reply_defer(struct cmd_ctx *c) { return reply_muted(c) ? NULL : rw_defer(c->out); }
static inline void reply_fill_array(struct cmd_ctx *c, void *h, long long n) {
    if (h) rw_fill_agg(c->out, h, '*', n);
}
static inline void reply_fill_map(struct cmd_ctx *c, void *h, long long pairs) {
    if (h) rw_fill_agg(c->out, h, c->resp >= 3 ? '%' : '*', c->resp >= 3 ? pairs : pairs * 2);
}
static inline void reply_fill_set(struct cmd_ctx *c, void *h, long long n) {
    if (h) rw_fill_agg(c->out, h, c->resp >= 3 ? '~' : '*', n);
}

/* The error text of a status (core/status.h), with the command's name
 * filled in where the text wants it. Replies nothing for HK_OK. */
void reply_status(struct cmd_ctx *c, int st);
/* "wrong number of arguments for '<cmd>' command", for c->cmd. */
static inline void reply_arity(struct cmd_ctx *c) { reply_status(c, HK_ERR_ARITY); }
/* "unknown subcommand or wrong number of arguments for '<argv[1]>'. Try
 * <CONTAINER> HELP.", for a subcommand whose arguments are wrong. */
void reply_subcommand_error(struct cmd_ctx *c);
/* A container's subcommand (argv[1]) is not one of its own: "ERR unknown
 * subcommand 'x'. Try CONFIG HELP." (c->cmd is the container). */
void reply_unknown_subcommand(struct cmd_ctx *c);
/* The same texts as macros, for the places that pass a string. */
#define ERR_SYNTAX (hk_status_text(HK_ERR_SYNTAX))
#define ERR_WRONGTYPE (hk_status_text(HK_ERR_WRONGTYPE))
#define ERR_NOT_INT (hk_status_text(HK_ERR_NOT_INT))
#define ERR_NOT_FLOAT (hk_status_text(HK_ERR_NOT_FLOAT))
#define ERR_OVERFLOW (hk_status_text(HK_ERR_OVERFLOW))
#define ERR_NO_KEY (hk_status_text(HK_ERR_NO_KEY))
#define ERR_DB_INDEX (hk_status_text(HK_ERR_DB_INDEX))
#define ERR_NOAUTH (hk_status_text(HK_ERR_NOAUTH))

/* Parse helpers that reply with the standard error on failure and return 0. */
int arg_ll_or_reply(struct cmd_ctx *c, const hk_slice *a, long long *out, const char *err);
int arg_double_or_reply(struct cmd_ctx *c, const hk_slice *a, double *out, const char *err);
static inline int arg_is(const hk_slice *a, const char *word) { return hk_eqi(a->ptr, a->len, word); }

/* Error counting (INFO errorstats): index for an error code, -1 when full. */
int errstat_index(const char *code, size_t len);
const char *errstat_name(int idx);
int errstat_count(void);
#define HK_MAX_ERRSTATS 128

#endif
