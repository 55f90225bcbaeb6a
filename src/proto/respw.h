/* respw.h - RESP written into a growable buffer.
 *
 * The encoder for what the server itself writes in Redis protocol outside
 * a reply: commands propagated to the journal and the AOF, an AOF base
 * without the RDB preamble, MIGRATE's requests, pub/sub frames and
 * tracking messages built once for many receivers. `grow` is the least
 * capacity the buffer takes when it must grow (hk_buf_add's min_cap). */
#ifndef HK_RESPW_H
#define HK_RESPW_H

#include "../core/buf.h"

#include <stddef.h>

/* "<type><n>\r\n": an array ('*'), push ('>') or bulk ('$') header. */
void respw_header(struct hk_buf *b, char type, long long n, size_t grow);
/* "$<n>\r\n<bytes>\r\n". */
void respw_bulk(struct hk_buf *b, const void *p, size_t n, size_t grow);
/* A bulk string holding the decimal form of v. */
void respw_bulk_ll(struct hk_buf *b, long long v, size_t grow);
/* A command: an array of argc bulk strings. */
void respw_cmd(struct hk_buf *b, int argc, const char *const *argv, const size_t *len, size_t grow);

#endif
