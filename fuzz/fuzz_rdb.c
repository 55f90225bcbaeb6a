/* fuzz_rdb.c - libFuzzer target for RESTORE's decoding path: the RDB value
 * reader (src/types/rdb.c) and the types' load slots, fed arbitrary bytes.
 *
 * The input's first byte picks the RDB version the bytes claim to be
 * (10, 11 or 12, bits 0-1); the rest is what a DUMP payload holds before
 * its footer: a type byte, then the value's body. Every input is loaded
 * twice, with deep validation (sanitize-dump-payload yes) and without.
 * Checked on every load: it returns an entry or fails with a message, it
 * never reads outside the exact-size copy of the input (ASan), and what
 * it built is freed through the type's own free (LeakSanitizer).
 *
 * A value accepted with deep validation must also be usable: it is
 * fingerprinted as DEBUG DIGEST-VALUE does (which walks every element),
 * written back through its type's save slot, and what was written must
 * load again, deeply validated, to the same fingerprint. Without deep
 * validation packed blobs are trusted, as Redis trusts them under
 * sanitize-dump-payload no, so only loading and freeing are exercised
 * there. This is not a test of RESTORE's arguments or footer check
 * (src/cmd/dump.c, tests/integration/test_dump.py). */
#include "../src/core/alloc.h"
#include "../src/core/buf.h"
#include "../src/types/kv.h"
#include "../src/types/rdb.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char fuzz_key[] = "fuzzkey";

/* Load `size` bytes (type byte, then body) claiming RDB version `ver`;
 * the entry, or NULL after checking that the failure was explained. */
static struct kv *load(const unsigned char *p, size_t size, int ver, int deep) {
    struct rdb_in in;
    rdb_in_mem(&in, p, size, ver);
    in.deep = deep;
    unsigned char type;
    if (rdb_get_byte(&in, &type) < 0) {
        if (!in.err[0]) abort();
        return NULL;
    }
    if (!rdb_is_value_type(type)) return NULL;
    struct kv *e = rdb_load_value(&in, type, fuzz_key, sizeof(fuzz_key) - 1, -1);
    if (!e && !in.err[0]) abort();
    if (e && (kv_keylen(e) != sizeof(fuzz_key) - 1 || memcmp(kv_key(e), fuzz_key, kv_keylen(e)) != 0)) abort();
    if (e && kv_expire(e) != -1) abort();
    return e;
}

/* Write e back as a payload body and load it again: it must come back,
 * with the same fingerprint. */
static void round_trip(struct kv *e) {
    unsigned char before[20] = {0}, after[20] = {0};
    kv_digest_value(e, before);
    struct hk_buf b = {0};
    struct rdb_out o = {.b = &b, .version = RDB_VERSION_HFE, .compress = 1};
    int t = rdb_value_type(e, &o);
    if (t < 0) abort();
    rdb_put_byte(&o, (unsigned char)t);
    if (rdb_save_value(e, &o) < 0) abort();
    /* An exact-size copy, so a read past the written bytes is caught. */
    unsigned char *copy = malloc(b.len ? b.len : 1);
    memcpy(copy, b.p, b.len);
    struct kv *again = load(copy, b.len, RDB_VERSION_HFE, 1);
    if (!again) abort();
    kv_digest_value(again, after);
    if (memcmp(before, after, sizeof(before)) != 0) abort();
    kv_free(again);
    free(copy);
    hk_free(b.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    static const int versions[4] = {RDB_VERSION_BASE, 11, RDB_VERSION_HFE, RDB_VERSION_HFE};
    int ver = versions[data[0] & 3];
    data++;
    size--;
    unsigned char *buf = malloc(size);
    memcpy(buf, data, size);
    struct kv *e = load(buf, size, ver, 1);
    if (e) {
        round_trip(e);
        kv_free(e);
    }
    e = load(buf, size, ver, 0);
    if (e) kv_free(e);
    free(buf);
    return 0;
}
