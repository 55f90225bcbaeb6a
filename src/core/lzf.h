/* lzf.h - LZF compression in the liblzf stream format, the one Redis uses
 * for compressed quicklist nodes and for compressed strings in RDB files,
 * so bytes written here can be read by Redis and the other way round.
 *
 * The stream is a sequence of items, each opening with a control byte:
 * below 32 it is a literal run of control+1 bytes that follow; otherwise
 * its top three bits hold a match length minus 2 (7: one more length byte
 * follows) and its low five bits the high bits of a distance below 8192,
 * whose low eight bits come next: copy length bytes from that far back in
 * the output. The compressor is our own greedy one (its output need not
 * match liblzf's byte for byte; any valid stream decodes the same). The
 * decompressor checks every read and write against the buffers it is
 * given, so corrupt input yields an error, never an overrun. Pure
 * functions: no allocation, no shared state. */
#ifndef HK_LZF_H
#define HK_LZF_H

#include <stddef.h>

/* An output size that always suffices for lzf_compress of n bytes (one
 * control byte per 32 literals at worst). */
#define LZF_BOUND(n) ((n) + (n) / 32 + 1)

/* Compress in/in_len into out (room for out_len bytes). Returns the
 * compressed length, or 0 when it does not fit in out_len (or in_len is
 * 0): callers pass the input size as out_len to keep only what shrinks. */
size_t lzf_compress(const void *in, size_t in_len, void *out, size_t out_len);

/* Decompress in/in_len into out (room for out_len bytes). Returns the
 * decompressed length, or 0 when the input is malformed (a truncated
 * item, a distance before the start of the output) or the output would
 * pass out_len. */
size_t lzf_decompress(const void *in, size_t in_len, void *out, size_t out_len);

#endif
