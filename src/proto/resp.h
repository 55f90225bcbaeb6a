/* resp.h - the incremental RESP request parser.
 *
 * Parses one request at a time from a connection's query buffer: RESP
 * arrays of bulk strings ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n") or inline
 * commands ("GET k\r\n", split like a shell with quotes and escapes).
 * Arguments are reported as (offset, length) pairs from the start of the
 * request, so they stay valid when the buffer is moved; no argument is
 * copied. The state survives between reads, so a request that arrives in
 * many pieces is not re-parsed from its start, and a large bulk string
 * reports how many bytes it needs so the caller can size the buffer once.
 * Inline requests are unescaped in place (the buffer is written). */
#ifndef HK_RESP_H
#define HK_RESP_H

#include <stddef.h>

#define RESP_INLINE_MAX (64 * 1024)

enum resp_status { RESP_DONE = 0, RESP_MORE = 1, RESP_ERR = 2 };

struct resp_limits {
    long long max_bulk; /* proto-max-bulk-len */
    int authed;         /* unauthenticated clients get tighter limits */
};

struct resp_req {
    long long multibulk; /* -1 until the header is read */
    long long bulklen;   /* -1 when a "$n" header comes next */
    size_t pos;          /* bytes of the request parsed so far */
    int inl;             /* inline request */
    int argc, cap;
    size_t *off, *len;   /* argument slices, offsets from request start */
    size_t need;         /* on RESP_MORE: total bytes wanted, 0 if unknown */
    char err[96];        /* on RESP_ERR: message without the "ERR " */
};

void resp_req_init(struct resp_req *r);
void resp_req_free(struct resp_req *r);
/* Forget the current request (after RESP_DONE), keeping the arrays. */
void resp_req_reset(struct resp_req *r);
/* Continue parsing the request that starts at buf (len bytes available). */
enum resp_status resp_parse(struct resp_req *r, char *buf, size_t len, const struct resp_limits *lim);

/* A quick look at the request at the start of buf (len bytes), for a caller
 * that only peeks ahead (dispatch's key prefetch) and must not disturb the
 * parser: takes only the plain form clients send, "*N\r\n" (N >= 1) then N
 * times "$L\r\n" + L bytes + 2, numbers of plain digits without leading
 * zeros. Returns 1 with the request's length in *reqlen, its argument count
 * in *argc and the offsets and lengths of its first `max` arguments, or 0
 * for anything else (incomplete, inline, any other spelling, errors): that
 * is resp_parse's business. Where it returns 1 resp_parse would give the
 * same arguments and length (or refuse the request over a limit). */
int resp_skim(const char *buf, size_t len, size_t *off, size_t *lens, int max, int *argc, size_t *reqlen);

/* Split buf[s, e) into arguments like a shell (quotes, \\x escapes),
 * unescaping in place; push receives each argument's offset and length.
 * Returns 0 on unbalanced quotes. Used for inline requests and for
 * configuration files. */
int resp_split_line(char *buf, size_t s, size_t e, void (*push)(void *ctx, size_t off, size_t len), void *ctx);

#endif
