/* buf.c - the growable byte buffer; see buf.h. */
#include "buf.h"

#include "alloc.h"

#include <string.h>

void hk_buf_add(struct hk_buf *b, const void *data, size_t n, size_t min_cap) {
    if (n == 0) return; /* an empty buffer has no p to offset */
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : min_cap;
        while (cap < b->len + n) cap *= 2;
        b->p = hk_realloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}
