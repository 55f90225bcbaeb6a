/* rscan.h - finds where one RESP reply ends, without building it.
 *
 * The load generator only needs to count replies, tell errors apart, and,
 * for pub/sub, read the payload of a message push; so this walks a reply of
 * any RESP2 or RESP3 type in place. Nesting is limited to RSCAN_MAX_DEPTH. */
#ifndef HB_RSCAN_H
#define HB_RSCAN_H

#include <stddef.h>

#define RSCAN_MAX_DEPTH 64

struct rscan_item {
    char type;                 /* first byte: '+', '-', '$', '*', '>', ... */
    const char *payload;       /* simple/blob string body; NULL otherwise */
    size_t payload_len;
};

/* Length of the complete reply at the start of p[0..n), 0 when more bytes
 * are needed, -1 when the bytes are not RESP. The top-level type and, for a
 * string reply, its body are stored in *top. */
long rscan_reply(const char *p, size_t n, struct rscan_item *top);

/* Whether the complete reply of length len at p is a nil: the null bulk
 * string "$-1" or null array "*-1" of RESP2, or RESP3's null "_" (a GET
 * of a missing key). An empty string "$0" is not nil. */
int rscan_is_nil(const char *p, size_t len);

/* For a complete aggregate reply of length len at p, store its element
 * `idx` (strings only) in *out; returns 1 when found. */
int rscan_element(const char *p, size_t len, int idx, struct rscan_item *out);

/* In a complete reply of length len at p, the first string, in reply
 * order at any depth, that reads as a stream entry id ("<ms>-<seq>", both
 * decimal, at most RSCAN_ID_MAX bytes) goes to *out; returns 1 when there
 * is one. In an XREADGROUP or XRANGE reply that is the first entry's id (a
 * key name that itself looks like an id would be found first). */
#define RSCAN_ID_MAX 41
int rscan_find_id(const char *p, size_t len, struct rscan_item *out);

#endif
