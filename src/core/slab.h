/* slab.h - small blocks in 8-byte size classes, named by 32-bit handles.
 *
 * The keyspace keeps one allocation per key (the entry, src/types/kv.h)
 * and links entries into its tables by handle, not pointer: a handle is
 * the block's offset in one reserved address range, in 8-byte units, so
 * it takes 4 bytes where a pointer takes 8, and 0 is never a block. The
 * general allocator rounds small sizes up to 16-byte steps; here every
 * multiple of 8 up to SLAB_MAX is its own class, so a 40-byte entry costs
 * 40 bytes, not 48.
 *
 * The range (SLAB_RESERVE bytes of address space, reserved at start-up
 * without committing memory) is cut into 64 KB pages; a page belongs to
 * one class for good, and the class of a block is looked up from its
 * page, so slab_free needs no size. Each thread keeps a small cache of
 * free handles per class and trades half of it with the class's shared
 * free list (one lock per class) when it runs empty or full, so most
 * allocations and frees touch nothing shared. Any thread may free a block
 * another allocated.
 *
 * Blocks are counted in the calling thread's slot of src/core/alloc.h, as
 * hk_malloc's are, so used_memory includes them at their class size.
 * Pages are never given back (the free blocks of a class serve its next
 * allocations): slab_committed_bytes says how much the range holds. */
#ifndef HK_SLAB_H
#define HK_SLAB_H

#include <stddef.h>
#include <stdint.h>

#define SLAB_GRAIN 8
#define SLAB_MAX 1024

typedef uint32_t slab_h;

/* Start of the range; set before main runs. */
extern char *slab_base;

static inline void *slab_ptr(slab_h h) { return slab_base + ((size_t)h << 3); }
static inline slab_h slab_handle(const void *p) { return (slab_h)((size_t)((const char *)p - slab_base) >> 3); }

/* A block of at least `size` bytes (1..SLAB_MAX), 8-byte aligned; NULL
 * when the range is exhausted. */
void *slab_alloc(size_t size);
void slab_free(void *p);
/* The class size of a block, and the one slab_alloc(size) would give. */
size_t slab_usable(const void *p);
static inline size_t slab_good_size(size_t size) { return (size + SLAB_GRAIN - 1) & ~(size_t)(SLAB_GRAIN - 1); }
/* Bytes of pages handed to classes so far (what the range commits). */
size_t slab_committed_bytes(void);
/* Put the calling thread's cached handles back on the shared lists (a
 * thread that ends does it itself). */
void slab_thread_flush(void);

#endif
