/* outbuf.h - a connection's pending output: a chain of byte blocks.
 *
 * Replies are appended at the tail; the writer drains from the head with
 * writev. A deferred slot lets a reply's header (an array length not known
 * until its elements are written) be filled in later. No locking: an
 * output buffer belongs to its connection's thread. */
#ifndef HK_OUTBUF_H
#define HK_OUTBUF_H

#include <stddef.h>
#include <sys/uio.h>

#define OB_BLOCK_SIZE (16 * 1024)

struct ob_block {
    struct ob_block *next;
    size_t len;  /* bytes written into data */
    size_t sent; /* bytes of data already sent (head block only) */
    size_t cap;
    size_t bytes; /* allocation size, for accounting */
    char data[];
};

struct outbuf {
    struct ob_block *head, *tail;
    size_t pending; /* bytes not yet sent, over all blocks */
    size_t alloc;   /* bytes allocated for blocks */
    int nblocks;
};

void ob_init(struct outbuf *ob);
void ob_free(struct outbuf *ob);
void ob_append(struct outbuf *ob, const void *data, size_t len);
/* Reserve a tiny block for a header written later; returns its handle. */
void *ob_defer(struct outbuf *ob);
void ob_fill_deferred(struct outbuf *ob, void *handle, const void *data, size_t len);
/* Fill up to max iovecs with unsent data; returns the count. */
int ob_iov(struct outbuf *ob, struct iovec *iov, int max);
/* Drop n sent bytes from the head, freeing emptied blocks. */
void ob_consume(struct outbuf *ob, size_t n);

#endif
