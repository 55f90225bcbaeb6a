/* outbuf.c - chained output blocks; see outbuf.h. */
#include "outbuf.h"

#include "../core/alloc.h"

#include <string.h>

void ob_init(struct outbuf *ob) { memset(ob, 0, sizeof(*ob)); }

void ob_free(struct outbuf *ob) {
    struct ob_block *b = ob->head;
    while (b) {
        struct ob_block *n = b->next;
        hk_free(b);
        b = n;
    }
    ob_init(ob);
}

static struct ob_block *new_block(struct outbuf *ob, size_t cap) {
    struct ob_block *b = hk_malloc(sizeof(*b) + cap);
    b->next = NULL;
    b->len = b->sent = 0;
    b->cap = cap;
    b->bytes = sizeof(*b) + cap;
    if (ob->tail) ob->tail->next = b;
    else ob->head = b;
    ob->tail = b;
    ob->alloc += sizeof(*b) + cap;
    ob->nblocks++;
    return b;
}

void ob_append(struct outbuf *ob, const void *data, size_t len) {
    const char *p = data;
    ob->pending += len;
    while (len) {
        struct ob_block *b = ob->tail;
        if (!b || b->len == b->cap) {
            size_t cap = len > OB_BLOCK_SIZE ? len : OB_BLOCK_SIZE;
            /* Start small for a connection that has only short replies. */
            if (!ob->head && len < 1024) cap = 1024;
            b = new_block(ob, cap);
        }
        size_t n = b->cap - b->len;
        if (n > len) n = len;
        memcpy(b->data + b->len, p, n);
        b->len += n;
        p += n;
        len -= n;
    }
}

void *ob_defer(struct outbuf *ob) {
    struct ob_block *b = new_block(ob, 32);
    /* Mark the deferred block as full so nothing else is appended to it
     * until it is filled: len stays 0, cap is reset on fill. */
    b->cap = 0;
    return b;
}

void ob_fill_deferred(struct outbuf *ob, void *handle, const void *data, size_t len) {
    struct ob_block *b = handle;
    if (len > 32) len = 32; /* headers are short: "*<n>\r\n" */
    memcpy(b->data, data, len);
    b->len = len;
    b->cap = len;
    ob->pending += len;
}

int ob_iov(struct outbuf *ob, struct iovec *iov, int max) {
    int n = 0;
    for (struct ob_block *b = ob->head; b && n < max; b = b->next) {
        size_t avail = b->len - b->sent;
        if (!avail) {
            if (b->cap == 0) break; /* unfilled deferred header: stop here */
            continue;
        }
        iov[n].iov_base = b->data + b->sent;
        iov[n].iov_len = avail;
        n++;
    }
    return n;
}

void ob_consume(struct outbuf *ob, size_t n) {
    ob->pending -= n;
    while (ob->head) {
        struct ob_block *b = ob->head;
        size_t avail = b->len - b->sent;
        if (n < avail) {
            b->sent += n;
            return;
        }
        n -= avail;
        b->sent = b->len;
        if (b->cap == 0) return; /* deferred and not filled yet */
        ob->head = b->next;
        if (!ob->head) ob->tail = NULL;
        ob->alloc -= b->bytes;
        ob->nblocks--;
        hk_free(b);
        if (!n) return;
    }
}
