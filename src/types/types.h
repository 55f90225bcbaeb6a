/* types.h - the value types as one static table, and the limits that
 * choose their encodings.
 *
 * A key entry (kv.h) holds a type and an encoding; what can be done with a
 * value of each type without knowing the type is described here, once, in
 * a table built at compile time: free it (and say what freeing it costs),
 * copy it, measure it, fingerprint it (DEBUG DIGEST), and, when
 * persistence lands, save and load it. Nothing registers at run time, so
 * no entry can be created for a type whose lifecycle is missing: kv_free
 * and kv_dup always find their functions, and kv.c never switches on a
 * type. The types' own operations (quicklist, hash, set, sorted set
 * encodings) live in the other files of src/types/; none of them knows a
 * client, a reply or the keyspace. */
#ifndef HK_TYPES_H
#define HK_TYPES_H

#include <stdatomic.h>
#include <stddef.h>

struct kv;
/* Later: the RDB writer and reader (persistence issue). */
struct rdb_out;
struct rdb_in;

struct type_ops {
    const char *name; /* TYPE's answer */
    /* Free the value behind the entry (not the entry itself). */
    void (*free)(struct kv *e);
    /* What `free` costs, in allocations as Redis counts them
     * (lazyfreeGetFreeEffort), in constant time: it decides whether a
     * value is freed on the request path or by the lazyfree thread. NULL:
     * the value is one allocation (strings, listpacks, intsets), effort 1. */
    size_t (*free_effort)(const struct kv *e);
    /* A deep copy of e's value under another key: a new, unlinked entry. */
    struct kv *(*dup)(const struct kv *e, const char *key, size_t klen, long long expire);
    /* Bytes the value uses beyond the entry; for big aggregates `samples`
     * elements (0 = all) are measured and scaled, as MEMORY USAGE does. */
    size_t (*usage)(const struct kv *e, size_t samples);
    /* Mix the value into a 20-byte digest as Redis's DEBUG DIGEST does
     * (types/digest.h): order matters for lists, not for sets or hashes. */
    void (*digest)(const struct kv *e, unsigned char digest[20]);
    /* Persistence slots, NULL until RDB support: write the value in the
     * RDB encoding of its type; rebuild an entry from it. */
    int (*save)(const struct kv *e, struct rdb_out *out);
    struct kv *(*load)(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire);
    /* DEBUG OBJECT: the fields Redis adds after its common ones for this
     * type's encoding (" ql_nodes:... ql_avg_node:..." for a quicklist),
     * written into buf (size bytes) as one NUL-terminated string that
     * starts with a space; left empty when the encoding has none. NULL:
     * the type adds nothing. */
    void (*debug_fields)(const struct kv *e, char *buf, size_t size);
};

/* Told before a value first changes. A mutator that takes one calls
 * pre_change() once, immediately before its first change to the value,
 * and not at all when it changes nothing: the command layer reports the
 * write there (db_written), before it happens, without looking the
 * member up a second time. NULL: nobody to tell. */
struct pre_change {
    void (*fn)(struct pre_change *pc);
    int fired;
};
static inline void pre_change(struct pre_change *pc) {
    if (pc && !pc->fired) {
        pc->fired = 1;
        pc->fn(pc);
    }
}
/* Whether a pre_change is still waiting to fire (worth a dry lookup). */
static inline int pre_change_pending(const struct pre_change *pc) { return pc && !pc->fired; }

#define OBJ_TYPE_MAX 8
/* Indexed by OBJ_* (kv.h); NULL for types HotKV does not have. */
extern const struct type_ops *const type_table[OBJ_TYPE_MAX];

extern const struct type_ops string_type_ops, list_type_ops, set_type_ops, zset_type_ops, hash_type_ops,
    stream_type_ops, vset_type_ops;

/* Encoding thresholds, as Redis names them. The configuration table
 * (CONFIG GET/SET) points at these atomics; the types read them. */
struct type_limits {
    _Atomic long long hash_max_listpack_entries, hash_max_listpack_value;
    _Atomic long long zset_max_listpack_entries, zset_max_listpack_value;
    _Atomic long long list_max_listpack_size, list_compress_depth;
    _Atomic long long set_max_intset_entries, set_max_listpack_entries, set_max_listpack_value;
    _Atomic long long stream_node_max_bytes, stream_node_max_entries;
};
extern struct type_limits type_limits;
#define TLIM(field) atomic_load_explicit(&type_limits.field, memory_order_relaxed)

#endif
