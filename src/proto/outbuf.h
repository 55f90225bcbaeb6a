/* outbuf.h - a connection's pending output: a chain of byte blocks.
 *
 * Replies are appended at the tail; the writer drains from the head with
 * writev. A deferred slot lets a reply's header (an array length not known
 * until its elements are written) be filled in later: the slot is reserved
 * inline in the current block (OB_SLOT bytes) and, when filled, the bytes
 * after it in that block move back over the unused part, so a reply costs
 * its own bytes and no block of its own. Slots must be filled before the
 * buffer is written out (a command fills its headers before it returns).
 * No locking: an output buffer belongs to its connection's thread. */
#ifndef HK_OUTBUF_H
#define HK_OUTBUF_H

#include <stddef.h>
#include <sys/uio.h>

#define OB_BLOCK_SIZE (16 * 1024)

/* A shared, reference-counted byte string that several output buffers
 * may hold at once (a pub/sub frame sent to many subscribers): the
 * buffer that lets go of it calls release(ref). */
struct ob_shared {
    const char *p;
    size_t len;
    void (*release)(void *ref);
    void *ref;
};

struct ob_block {
    struct ob_block *next;
    size_t len;  /* bytes written into data */
    size_t sent; /* bytes of data already sent (head block only) */
    size_t cap;
    size_t bytes; /* allocation size, for accounting */
    /* A block that holds a shared string instead of bytes of its own:
     * its bytes are ext (len == cap, nothing is appended to it). */
    const struct ob_shared *ext;
    char data[];
};

static inline const char *ob_block_bytes(const struct ob_block *b) { return b->ext ? b->ext->p : b->data; }

/* Room reserved for a deferred header: "*" + 20 digits + CRLF. */
#define OB_SLOT 24
/* Open (unfilled) inline slots at once; deeper nesting falls back to a
 * small block per header. */
#define OB_MAX_OPEN 8

struct ob_open {
    struct ob_block *b;
    size_t off;
};

struct outbuf {
    struct ob_block *head, *tail;
    size_t pending; /* bytes not yet sent, over all blocks */
    size_t alloc;   /* bytes allocated for blocks */
    int nblocks;
    int nopen;      /* slots of open[] in use */
    struct ob_open open[OB_MAX_OPEN];
};

void ob_init(struct outbuf *ob);
void ob_free(struct outbuf *ob);
void ob_append(struct outbuf *ob, const void *data, size_t len);
/* Queue a shared string by reference (the caller took a reference for
 * this buffer; the buffer releases it once sent or freed). *sh must stay
 * valid until then (it usually lives inside the referenced object). */
void ob_append_shared(struct outbuf *ob, const struct ob_shared *sh);
/* Reserve room for a header written later; returns its handle. */
void *ob_defer(struct outbuf *ob);
void ob_fill_deferred(struct outbuf *ob, void *handle, const void *data, size_t len);
/* Fill up to max iovecs with unsent data; returns the count. */
int ob_iov(struct outbuf *ob, struct iovec *iov, int max);
/* Drop n sent bytes from the head, freeing emptied blocks. */
void ob_consume(struct outbuf *ob, size_t n);

#endif
