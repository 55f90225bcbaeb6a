/* rdb.h - values in Redis's RDB encoding: the writer and reader that the
 * type_ops save/load slots use, shared by RDB files (src/server/snapshot.c),
 * the AOF's RDB preamble, and DUMP/RESTORE payloads.
 *
 * Writing. A struct rdb_out appends to an in-memory buffer: a snapshot
 * serialises entries into it under their shard's lock and writes the bytes
 * to the file after releasing it, DUMP returns them. `version` is the RDB
 * version being written and decides which value encodings may be used:
 * 10 (what Redis 7.0 reads: no SET_LISTPACK, streams as STREAM_LISTPACKS_2)
 * or 12 (adds the hash-field-TTL records Redis 7.4+ write). A value is
 * written as its type byte (rdb_value_type) then its body (rdb_save_value).
 *
 * Reading. A struct rdb_in is a window of bytes, refilled from a file by
 * `refill` when the window runs dry (NULL for a payload held in memory).
 * Every read is bounds-checked: a truncated or corrupt input makes the
 * reader return an error with `err` saying what was wrong, never read past
 * the input or allocate what the input cannot back. `version` is the RDB
 * version of the input (it decides, for instance, how stream metadata is
 * laid out); `deep` asks the loaders to validate packed blobs (listpacks,
 * ziplists, intsets, stream nodes) entry by entry before trusting them,
 * as Redis does with sanitize-dump-payload.
 *
 * The types layer knows no keyspace: loading returns a new entry (kv.h),
 * which the caller links. */
#ifndef HK_RDB_H
#define HK_RDB_H

#include "../core/buf.h"
#include "../core/listpack.h"

#include <stddef.h>
#include <stdint.h>

struct kv;
struct intset;

/* Value types, as Redis's rdb.h numbers them. */
enum {
    RDB_TYPE_STRING = 0,
    RDB_TYPE_LIST = 1,
    RDB_TYPE_SET = 2,
    RDB_TYPE_ZSET = 3,
    RDB_TYPE_HASH = 4,
    RDB_TYPE_ZSET_2 = 5,
    RDB_TYPE_MODULE_PRE_GA = 6,
    RDB_TYPE_MODULE_2 = 7,
    RDB_TYPE_HASH_ZIPMAP = 9,
    RDB_TYPE_LIST_ZIPLIST = 10,
    RDB_TYPE_SET_INTSET = 11,
    RDB_TYPE_ZSET_ZIPLIST = 12,
    RDB_TYPE_HASH_ZIPLIST = 13,
    RDB_TYPE_LIST_QUICKLIST = 14,
    RDB_TYPE_STREAM_LISTPACKS = 15,
    RDB_TYPE_HASH_LISTPACK = 16,
    RDB_TYPE_ZSET_LISTPACK = 17,
    RDB_TYPE_LIST_QUICKLIST_2 = 18,
    RDB_TYPE_STREAM_LISTPACKS_2 = 19,
    RDB_TYPE_SET_LISTPACK = 20,
    RDB_TYPE_STREAM_LISTPACKS_3 = 21,
    RDB_TYPE_HASH_METADATA_PRE_GA = 22,
    RDB_TYPE_HASH_LISTPACK_EX_PRE_GA = 23,
    RDB_TYPE_HASH_METADATA = 24,
    RDB_TYPE_HASH_LISTPACK_EX = 25,
    RDB_TYPE_LAST = 25
};

/* File opcodes. */
enum {
    RDB_OPCODE_SLOT_INFO = 244,
    RDB_OPCODE_FUNCTION2 = 245,
    RDB_OPCODE_FUNCTION_PRE_GA = 246,
    RDB_OPCODE_MODULE_AUX = 247,
    RDB_OPCODE_IDLE = 248,
    RDB_OPCODE_FREQ = 249,
    RDB_OPCODE_AUX = 250,
    RDB_OPCODE_RESIZEDB = 251,
    RDB_OPCODE_EXPIRETIME_MS = 252,
    RDB_OPCODE_EXPIRETIME = 253,
    RDB_OPCODE_SELECTDB = 254,
    RDB_OPCODE_EOF = 255
};

/* Module value opcodes (RDB_TYPE_MODULE_2 bodies). */
enum { RDB_MODULE_OPCODE_EOF = 0, RDB_MODULE_OPCODE_SINT = 1, RDB_MODULE_OPCODE_UINT = 2,
       RDB_MODULE_OPCODE_FLOAT = 3, RDB_MODULE_OPCODE_DOUBLE = 4, RDB_MODULE_OPCODE_STRING = 5 };

/* The versions HotKV writes and the newest it reads. */
#define RDB_VERSION_BASE 10
#define RDB_VERSION_HFE 12
#define RDB_VERSION_MAX 12

struct rdb_out {
    struct hk_buf *b; /* bytes are appended here */
    int version;      /* RDB_VERSION_BASE or RDB_VERSION_HFE */
    int compress;     /* rdbcompression: LZF strings longer than 20 bytes when it pays */
    /* With b NULL nothing is stored and the bytes are only counted here
     * (DEBUG OBJECT's serializedlength): so writers go through the
     * rdb_put_* calls, never to b directly. */
    size_t counted;
};

void rdb_put_byte(struct rdb_out *o, unsigned char c);
void rdb_put_raw(struct rdb_out *o, const void *p, size_t n);
/* A length in the shortest form. */
void rdb_put_len(struct rdb_out *o, uint64_t n);
/* A string: integer-encoded when it is the canonical decimal form of an
 * int32 (as Redis does), LZF-compressed when o->compress and it saves
 * space, plain otherwise. */
void rdb_put_string(struct rdb_out *o, const void *p, size_t n);
/* An integer written as a string (integer encoding when it fits 32 bits). */
void rdb_put_ll(struct rdb_out *o, long long v);
/* A double as 8 little-endian IEEE bytes (RDB_TYPE_ZSET_2 scores). */
void rdb_put_double_bin(struct rdb_out *o, double d);
/* 8 little-endian bytes (expiry times, module uint64s). */
void rdb_put_u64le(struct rdb_out *o, uint64_t v);
/* The type byte e's value is written with at o->version. */
int rdb_value_type(const struct kv *e, const struct rdb_out *o);
/* The value body (not the type byte) through its type's save slot;
 * 0, or -1 when the type cannot be written. */
int rdb_save_value(const struct kv *e, struct rdb_out *o);
/* Append e's DUMP payload to b: type byte, body, the RDB version (10, or
 * 12 for a hash with field TTLs) and the CRC64 of those bytes. 0, or -1
 * when the value's type cannot be written (b then holds garbage). DUMP
 * replies with it; an AOF base without the RDB preamble RESTOREs it. */
int rdb_dump_payload(const struct kv *e, int compress, struct hk_buf *b);

struct rdb_in {
    const unsigned char *p; /* the window */
    size_t len, pos;        /* bytes in the window, read so far */
    /* Make at least `need` unread bytes available (moving or replacing
     * the window); 0, or -1 at the end of input / on a read error (with
     * err set). NULL: the window is all there is. */
    int (*refill)(struct rdb_in *in, size_t need);
    void *ctx;
    int version; /* RDB version of the input */
    int deep;    /* validate packed blobs entry by entry */
    uint64_t total; /* bytes consumed before the current window (offsets in errors) */
    /* Loading a file: the clock against which hash fields past their TTL
     * are dropped (a key left with no field is then skipped, `empty`
     * set). -1 (RESTORE, the default) keeps every field. */
    long long now_ms;
    char err[160];
    /* Set when a load failed only because the value had no elements (see
     * rdb_fail_empty): Redis skips such a key in a file, with a warning,
     * and RESTORE refuses it. The cursor is past the value. */
    int empty;
};

/* The most a reader asks `refill` for at once: longer strings and raw
 * runs are read in pieces of this size, so a refill buffer of this size
 * (plus what a caller keeps unread) always suffices. */
#define RDB_IN_CHUNK (64u * 1024)

void rdb_in_mem(struct rdb_in *in, const void *p, size_t len, int version);
/* Set in->err (printf-style) and return -1; keeps the first error. */
int rdb_fail(struct rdb_in *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* rdb_fail for a value that was read whole but holds nothing ("Empty
 * list" for what = "list"), setting in->empty. */
int rdb_fail_empty(struct rdb_in *in, const char *what);
/* Each returns 0, or -1 with in->err set. */
int rdb_get_byte(struct rdb_in *in, unsigned char *c);
int rdb_get_raw(struct rdb_in *in, void *dst, size_t n);
/* A length; *encoded (may be NULL when not expected: then an encoded
 * length is an error) is set when the top bits were 11. */
int rdb_get_len(struct rdb_in *in, uint64_t *n, int *encoded);
/* A string in any encoding, as a new hk_malloc'd buffer (NUL-terminated,
 * not counted in *len). Lengths past what a string may hold (512 MB
 * proto-max-bulk-len is not the limit here: the input's own size is) are
 * refused before allocating: a length is only trusted as far as the input
 * can back it. */
char *rdb_get_string(struct rdb_in *in, size_t *len);
/* A string that is an integer (any encoding; decimal text accepted). */
int rdb_get_ll(struct rdb_in *in, long long *v);
/* Scores: binary (ZSET_2) and the old length-prefixed text form
 * (RDB_TYPE_ZSET, with 253/254/255 for nan/+inf/-inf). */
int rdb_get_double_bin(struct rdb_in *in, double *d);
int rdb_get_double_text(struct rdb_in *in, double *d);
int rdb_get_u64le(struct rdb_in *in, uint64_t *v);
/* Skip n bytes. */
int rdb_skip(struct rdb_in *in, size_t n);

/* Rebuild an entry for key/klen (expiry `expire`, -1 none) from a value of
 * RDB type `rdb_type` at the cursor; NULL with in->err set when the value
 * is malformed or of a type HotKV does not have (the message names it,
 * e.g. a module's name). `now_ms` lets hash loaders drop fields whose TTL
 * already passed; -1 keeps them. */
struct kv *rdb_load_value(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire);
/* Module values (RDB_TYPE_MODULE_2): the type's save slot writes the
 * whole body, the module type id (rdb_module_id) first; rdb_load_value
 * looks at the id without consuming it, fails naming any module but the
 * vector set one, and hands the cursor, still at the id, to the vector
 * set type's load slot. Vector sets are Redis 8's "vectorset" module. */
#define RDB_VSET_MODULE_NAME "vectorset"

/* Nonzero for a byte that is a value type HotKV reads (not an opcode). */
int rdb_is_value_type(int t);

/* The 9-character name a module type id carries (Redis packs it in the
 * id's upper 54 bits, then a 10-bit encoding version). out: 10 bytes. */
void rdb_module_name(uint64_t id, char out[10], int *encver);
/* The id for `name` (9 characters) and encoding version. */
uint64_t rdb_module_id(const char *name, int encver);

/* ---- packed blobs, in Redis's layouts (rdb_ziplist.c) ----
 * Not HotKV's in-memory listpack or intset: values are converted element
 * by element. */

/* A listpack being built: init, add elements, then finish (the blob is
 * w->b.p / w->b.len, hk_free'd by the caller) or rdb_put_lpw. A string
 * that is a canonical integer is stored as an integer, as Redis does. */
struct rdb_lpw {
    struct hk_buf b;
    uint64_t count;
};
void rdb_lpw_init(struct rdb_lpw *w);
void rdb_lpw_add(struct rdb_lpw *w, const char *s, size_t len);
void rdb_lpw_add_int(struct rdb_lpw *w, long long v);
void rdb_lpw_add_val(struct rdb_lpw *w, const struct lp_val *v);
/* 0, or -1 when the blob passes the 4 GB a listpack can describe. */
int rdb_lpw_finish(struct rdb_lpw *w);
/* Finish w, write it as an RDB string and free it; 0 or -1 (too big:
 * nothing written). */
int rdb_put_lpw(struct rdb_out *o, struct rdb_lpw *w);
/* HotKV's listpack lp written as one blob in Redis's layout (lists'
 * packed nodes, small sorted sets); 0 or -1 as rdb_put_lpw. */
int rdb_put_lpack(struct rdb_out *o, const lpack *lp);

/* Reading a listpack or a ziplist held in memory. rdb_blob_open checks
 * the whole blob (header size, count and tail, every entry's encoding,
 * bounds and back length or previous-entry size) and fails with in->err
 * set; after that rdb_blob_next yields the elements in order into v
 * (strings point into the blob, integers are in v->buf as well). */
enum { RDB_BLOB_LISTPACK, RDB_BLOB_ZIPLIST };
struct rdb_blob {
    const unsigned char *p;
    size_t len, pos, prev;
    int kind;
    uint32_t count; /* elements, counted by rdb_blob_open */
};
int rdb_blob_open(struct rdb_in *in, struct rdb_blob *b, int kind, const void *p, size_t len);
/* 1 with the next element in v, 0 at the end. */
int rdb_blob_next(struct rdb_blob *b, struct lp_val *v);
/* Back to the first element. */
void rdb_blob_rewind(struct rdb_blob *b);
/* An RDB string at the cursor opened as a blob of `kind`; *owned gets the
 * buffer to hk_free once the blob is no longer read. 0 or -1. */
int rdb_get_blob(struct rdb_in *in, struct rdb_blob *b, int kind, char **owned);
/* Fail (naming `what`, e.g. "Zset listpack") unless every stride-th
 * element from the first (members of a set: 1; fields or members of
 * pairs: 2) is distinct, and, for stride > 1, the count is a multiple of
 * it. Rewinds b. */
int rdb_blob_check_unique(struct rdb_in *in, struct rdb_blob *b, unsigned stride, const char *what);

/* An intset blob: checked (width 2, 4 or 8, size, strictly ascending),
 * then read by index. */
int rdb_intset_open(struct rdb_in *in, const void *p, size_t len, uint32_t *width, uint32_t *count);
int64_t rdb_intset_at(const void *p, uint32_t width, uint32_t i);
/* A HotKV intset written as an intset blob in an RDB string. */
void rdb_put_intset(struct rdb_out *o, const struct intset *s);

#endif
