/* outbuf.c - chained output blocks; see outbuf.h. */
#include "outbuf.h"

#include "../core/alloc.h"

#include <stdint.h>
#include <string.h>

void ob_init(struct outbuf *ob) { memset(ob, 0, sizeof(*ob)); }

static void block_free(struct ob_block *b) {
    if (b->ext) b->ext->release(b->ext->ref);
    hk_free(b);
}

void ob_free(struct outbuf *ob) {
    struct ob_block *b = ob->head;
    while (b) {
        struct ob_block *n = b->next;
        block_free(b);
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
    b->ext = NULL;
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

void ob_append_shared(struct outbuf *ob, const struct ob_shared *sh) {
    struct ob_block *b = new_block(ob, 0);
    b->ext = sh;
    b->len = b->cap = sh->len;
    ob->pending += sh->len;
}

/* Handles below this value name inline slots (index + 1); others are
 * separate header blocks. */
#define OB_INLINE_HANDLES ((uintptr_t)(OB_MAX_OPEN + 1))

void *ob_defer(struct outbuf *ob) {
    int i;
    for (i = 0; i < OB_MAX_OPEN && ob->open[i].b; i++) {
    }
    if (i == OB_MAX_OPEN) {
        /* Too many open at once: a block of its own, marked full (cap 0)
         * so nothing is appended to it until it is filled. */
        struct ob_block *b = new_block(ob, 32);
        b->cap = 0;
        return b;
    }
    struct ob_block *b = ob->tail;
    if (!b || b->cap - b->len < OB_SLOT) b = new_block(ob, ob->head ? OB_BLOCK_SIZE : 1024);
    ob->open[i].b = b;
    ob->open[i].off = b->len;
    b->len += OB_SLOT;
    ob->nopen++;
    return (void *)(uintptr_t)(i + 1);
}

void ob_fill_deferred(struct outbuf *ob, void *handle, const void *data, size_t len) {
    if ((uintptr_t)handle >= OB_INLINE_HANDLES) {
        struct ob_block *b = handle;
        if (len > 32) len = 32; /* headers are short: "*<n>\r\n" */
        memcpy(b->data, data, len);
        b->len = len;
        b->cap = len;
        ob->pending += len;
        return;
    }
    int i = (int)((uintptr_t)handle - 1);
    struct ob_block *b = ob->open[i].b;
    size_t off = ob->open[i].off;
    if (len > OB_SLOT) len = OB_SLOT;
    size_t gap = OB_SLOT - len;
    memcpy(b->data + off, data, len);
    /* Close the gap: what follows in this block moves back; later blocks
     * are untouched. Other open slots behind it in the block move too. */
    memmove(b->data + off + len, b->data + off + OB_SLOT, b->len - off - OB_SLOT);
    b->len -= gap;
    ob->pending += len;
    ob->open[i].b = NULL;
    ob->nopen--;
    for (int j = 0; j < OB_MAX_OPEN; j++)
        if (ob->open[j].b == b && ob->open[j].off > off) ob->open[j].off -= gap;
}

/* The offset of the first unfilled inline slot in block b, or b->len. */
static size_t open_slot_in(const struct outbuf *ob, const struct ob_block *b) {
    size_t end = b->len;
    for (int i = 0; i < OB_MAX_OPEN; i++)
        if (ob->open[i].b == b && ob->open[i].off < end) end = ob->open[i].off;
    return end;
}

/* ob_iov while headers are open: nothing after an unfilled one is offered. */
static int iov_open(struct outbuf *ob, struct iovec *iov, int max) {
    int n = 0;
    for (struct ob_block *b = ob->head; b && n < max; b = b->next) {
        size_t end = open_slot_in(ob, b);
        size_t avail = end - b->sent;
        if (avail) {
            iov[n].iov_base = (char *)ob_block_bytes(b) + b->sent;
            iov[n].iov_len = avail;
            n++;
        }
        if (end != b->len || (!avail && b->cap == 0)) break;
    }
    return n;
}

int ob_iov(struct outbuf *ob, struct iovec *iov, int max) {
    if (ob->nopen) return iov_open(ob, iov, max);
    int n = 0;
    for (struct ob_block *b = ob->head; b && n < max; b = b->next) {
        size_t avail = b->len - b->sent;
        if (!avail) {
            if (b->cap == 0) break; /* unfilled deferred header block: stop here */
            continue;
        }
        iov[n].iov_base = (char *)ob_block_bytes(b) + b->sent;
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
        block_free(b);
        if (!n) return;
    }
}
