/* reply.h - the RESP2/RESP3 reply writer.
 *
 * Each function appends one encoded element to an output buffer; `resp` is
 * the protocol version the connection negotiated (2 or 3) and picks the
 * wire form where the two differ (nulls, maps, sets, doubles, booleans).
 * Callers in the server wrap these with per-client helpers; nothing here
 * knows about clients. */
#ifndef HK_REPLY_H
#define HK_REPLY_H

#include "outbuf.h"

#include <stddef.h>

void rw_simple(struct outbuf *ob, const char *s, size_t len);  /* +s */
void rw_error(struct outbuf *ob, const char *s, size_t len);   /* -s (s without '-') */
void rw_bulk(struct outbuf *ob, const void *p, size_t len);    /* $len data */
void rw_int(struct outbuf *ob, long long v);                   /* :v */
void rw_null(struct outbuf *ob, int resp);                     /* $-1 or _ */
void rw_null_array(struct outbuf *ob, int resp);               /* *-1 or _ */
void rw_agg(struct outbuf *ob, char type, long long n);        /* *n %n ~n >n |n */
void rw_array(struct outbuf *ob, long long n);
void rw_map(struct outbuf *ob, int resp, long long n);         /* n pairs */
void rw_set(struct outbuf *ob, int resp, long long n);
void rw_push(struct outbuf *ob, int resp, long long n);
void rw_double(struct outbuf *ob, int resp, double d);         /* ,d or bulk */
void rw_bool(struct outbuf *ob, int resp, int v);              /* #t/#f or :1/:0 */
void rw_verbatim(struct outbuf *ob, int resp, const char *fmt3, const char *p, size_t len);
void rw_bignum(struct outbuf *ob, int resp, const char *digits, size_t len);
/* Header written after its elements: returns a handle for rw_fill_agg. */
void *rw_defer(struct outbuf *ob);
void rw_fill_agg(struct outbuf *ob, void *handle, char type, long long n);

#endif
