/* buf.h - a growable byte buffer (doubling), for building protocol text:
 * propagated commands, the merged journal. Not a string type: no NUL is
 * kept, and the owner frees `p` with hk_free. */
#ifndef HK_BUF_H
#define HK_BUF_H

#include <stddef.h>

struct hk_buf {
    char *p;
    size_t len, cap;
};

/* Append n bytes, growing to at least `min_cap` (then doubling) as needed. */
void hk_buf_add(struct hk_buf *b, const void *data, size_t n, size_t min_cap);

#endif
