/* rdb_stream.c - the stream value in Redis's RDB encoding, written as
 * Redis 7.0 (STREAM_LISTPACKS_2, RDB version 10) or 7.2 and later
 * (STREAM_LISTPACKS_3) write it, read in any of the three stream types.
 * Not the stream itself (stream.c, stream_cg.c): this file converts its
 * nodes, counters, groups, consumers and pending entries to and from the
 * bytes.
 *
 * The body:
 *
 *   len nodes, then per node: the master id (16 bytes, ms and seq big
 *     endian, as an RDB string) and the node as a Redis listpack:
 *     [live, deleted, nfields, field..., 0] then per entry
 *     [flags, ms - master ms, seq - master seq, nfields unless flag 2,
 *      fields and values (values alone with flag 2), element count]
 *     (flags: 1 deleted, 2 the master's fields)
 *   len length, len last id ms, len last id seq
 *   type 19 and 21: len first id ms/seq, len max deleted id ms/seq,
 *     len entries added
 *   len groups, then per group: name, len last id ms/seq, (19, 21) len
 *     entries read (-1 as 2^64-1), len pending, per pending entry its
 *     16-byte id, delivery time (8 bytes little endian) and len delivery
 *     count; len consumers, per consumer: name, seen time (8 bytes), (21)
 *     active time (8 bytes), len pending and its 16-byte ids, each one of
 *     the group's.
 *
 * A node converts one to one: a Redis listpack's first entry carries its
 * master id, and so does a HotKV node (whose image is rebuilt from the
 * absolute ids, so a listpack whose first entry does not sit at its key
 * loads as well). Everything read is checked: each listpack whole
 * (rdb_blob_open) and against the stream layout, each built node by
 * stream_node_validate, nodes in id order, counters against the nodes,
 * pending entries against the group's (a consumer's entry must be the
 * group's, owned once, and every group entry must have an owner). A node
 * whose entries are all deleted is dropped. */
#include "rdb.h"

#include "../core/alloc.h"
#include "../core/listpack.h"
#include "kv.h"
#include "stream.h"
#include "types.h"

#include <stdlib.h>
#include <string.h>

#define SFLAG_DELETED 1
#define SFLAG_SAME 2

static void put_id_raw(struct rdb_out *o, const streamid *id) {
    unsigned char b[16];
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)(id->ms >> (56 - 8 * i));
        b[8 + i] = (unsigned char)(id->seq >> (56 - 8 * i));
    }
    rdb_put_raw(o, b, 16);
}

static streamid id_from_raw(const unsigned char *b) {
    streamid id = {0, 0};
    for (int i = 0; i < 8; i++) {
        id.ms = id.ms << 8 | b[i];
        id.seq = id.seq << 8 | b[8 + i];
    }
    return id;
}

/* ---- writing ---- */

/* Node i as a Redis stream listpack, written as an RDB string. */
static int put_node(struct rdb_out *o, const struct stream *s, size_t i) {
    size_t len;
    const unsigned char *img = stream_node_image(s, i, &len);
    struct stream_node_walk w;
    stream_node_walk_init(&w, img, len);
    struct rdb_lpw lp;
    rdb_lpw_init(&lp);
    rdb_lpw_add_int(&lp, w.live);
    rdb_lpw_add_int(&lp, (long long)w.count - w.live);
    rdb_lpw_add_int(&lp, w.master_nf);
    for (long long k = 0; k < w.master_nf; k++) {
        const char *f;
        size_t fl;
        stream_node_walk_master(&w, &f, &fl);
        rdb_lpw_add(&lp, f, fl);
    }
    rdb_lpw_add_int(&lp, 0);
    while (stream_node_walk_next(&w)) {
        rdb_lpw_add_int(&lp, (w.deleted ? SFLAG_DELETED : 0) | (w.same ? SFLAG_SAME : 0));
        rdb_lpw_add_int(&lp, (long long)(w.id.ms - w.master.ms));
        rdb_lpw_add_int(&lp, (long long)(w.id.seq - w.master.seq));
        if (!w.same) rdb_lpw_add_int(&lp, w.nfields);
        for (long long k = 0; k < w.nfields; k++) {
            const char *f, *v;
            size_t fl, vl;
            stream_node_walk_field(&w, &f, &fl, &v, &vl);
            if (!w.same) rdb_lpw_add(&lp, f, fl);
            rdb_lpw_add(&lp, v, vl);
        }
        rdb_lpw_add_int(&lp, w.same ? w.nfields + 3 : 2 * w.nfields + 4);
    }
    return rdb_put_lpw(o, &lp);
}

int stream_rdb_save(const struct kv *e, struct rdb_out *o) {
    const struct stream *s = stream_of(e);
    int v3 = rdb_value_type(e, o) == RDB_TYPE_STREAM_LISTPACKS_3;
    size_t nn = stream_node_count(s);
    rdb_put_len(o, nn);
    for (size_t i = 0; i < nn; i++) {
        streamid m = stream_node_master(s, i);
        unsigned char key[16];
        for (int k = 0; k < 8; k++) {
            key[k] = (unsigned char)(m.ms >> (56 - 8 * k));
            key[8 + k] = (unsigned char)(m.seq >> (56 - 8 * k));
        }
        rdb_put_string(o, key, 16);
        if (put_node(o, s, i) < 0) return -1;
    }
    rdb_put_len(o, s->length);
    rdb_put_len(o, s->last_id.ms);
    rdb_put_len(o, s->last_id.seq);
    rdb_put_len(o, s->first_id.ms);
    rdb_put_len(o, s->first_id.seq);
    rdb_put_len(o, s->max_deleted_id.ms);
    rdb_put_len(o, s->max_deleted_id.seq);
    rdb_put_len(o, s->entries_added);
    rdb_put_len(o, s->ngroups);
    static const streamid zero = {0, 0};
    for (size_t g = 0; g < s->ngroups; g++) {
        const struct stream_cg *cg = s->groups[g];
        rdb_put_string(o, cg->name, cg->nlen);
        rdb_put_len(o, cg->last_id.ms);
        rdb_put_len(o, cg->last_id.seq);
        rdb_put_len(o, (uint64_t)cg->entries_read);
        rdb_put_len(o, cg->pel_count);
        for (const struct stream_nack *n = stream_pel_seek(cg, &zero); n; n = stream_pel_next(cg, n)) {
            put_id_raw(o, &n->id);
            rdb_put_u64le(o, (uint64_t)n->delivery_time);
            rdb_put_len(o, n->delivery_count);
        }
        rdb_put_len(o, cg->nconsumers);
        for (size_t c = 0; c < cg->nconsumers; c++) {
            const struct stream_consumer *cons = cg->consumers[c];
            rdb_put_string(o, cons->name, cons->nlen);
            rdb_put_u64le(o, (uint64_t)cons->seen_time);
            if (v3) rdb_put_u64le(o, (uint64_t)cons->active_time);
            rdb_put_len(o, cons->pel_count);
            for (const struct stream_nack *n = stream_cons_seek(cons, &zero); n; n = stream_cons_next(cons, n))
                put_id_raw(o, &n->id);
        }
    }
    return 0;
}

/* ---- reading ---- */

/* The next listpack element, which must be an integer. */
static int lp_int(struct rdb_in *in, struct rdb_blob *b, long long *v, const char *what) {
    struct lp_val x;
    if (!rdb_blob_next(b, &x)) return rdb_fail(in, "Stream listpack ends before its %s", what);
    if (!x.is_int) return rdb_fail(in, "Stream listpack %s is not an integer", what);
    *v = x.v;
    return 0;
}

/* An entry's header: flags, id, field count. */
struct ent_hdr {
    long long flags, nf;
    streamid id;
};

static int read_ent_hdr(struct rdb_in *in, struct rdb_blob *b, const streamid *key, long long master_nf,
                        struct ent_hdr *h) {
    long long msd, seqd;
    if (lp_int(in, b, &h->flags, "entry flags") < 0 || lp_int(in, b, &msd, "entry id") < 0 ||
        lp_int(in, b, &seqd, "entry id") < 0)
        return -1;
    if (h->flags & ~(long long)(SFLAG_DELETED | SFLAG_SAME)) return rdb_fail(in, "Stream entry flags %lld", h->flags);
    if (msd < 0 || (uint64_t)msd > UINT64_MAX - key->ms) return rdb_fail(in, "Stream entry id out of its node");
    h->id.ms = key->ms + (uint64_t)msd;
    h->id.seq = key->seq + (uint64_t)seqd;
    if (h->flags & SFLAG_SAME) {
        h->nf = master_nf;
    } else {
        if (lp_int(in, b, &h->nf, "entry field count") < 0) return -1;
        if (h->nf < 1 || (uint64_t)h->nf > b->count) return rdb_fail(in, "Stream entry with %lld fields", h->nf);
    }
    return 0;
}

/* One Redis stream listpack (its key: `key`) appended to s as a node.
 * *live gets its live entries, *last the id of its last entry. A node
 * with no live entry is dropped (*live 0). */
static int load_node(struct rdb_in *in, struct stream *s, const streamid *key, struct rdb_blob *b, uint64_t *live,
                     streamid *last) {
    long long nlive, ndel, mnf;
    if (b->count == 0) return rdb_fail(in, "Empty listpack inside stream");
    if (lp_int(in, b, &nlive, "entry count") < 0 || lp_int(in, b, &ndel, "deleted count") < 0 ||
        lp_int(in, b, &mnf, "master field count") < 0)
        return -1;
    if (nlive < 0 || ndel < 0 || nlive + ndel < 1 || (uint64_t)(nlive + ndel) > b->count || mnf < 1 ||
        (uint64_t)mnf > b->count)
        return rdb_fail(in, "Stream listpack master entry is malformed");
    size_t fields_pos = b->pos;
    struct lp_val x;
    for (long long i = 0; i < mnf; i++)
        if (!rdb_blob_next(b, &x)) return rdb_fail(in, "Stream listpack ends in its master fields");
    long long zero;
    if (lp_int(in, b, &zero, "master terminator") < 0) return -1;
    if (zero != 0) return rdb_fail(in, "Stream listpack master entry is not terminated");
    size_t entries_pos = b->pos;

    /* The first entry's id is the node's master id. */
    struct ent_hdr h;
    if (read_ent_hdr(in, b, key, mnf, &h) < 0) return -1;
    struct stream_node_build nb;
    stream_node_build_init(&nb, &h.id, (uint64_t)mnf);
    b->pos = fields_pos;
    for (long long i = 0; i < mnf; i++) {
        rdb_blob_next(b, &x);
        stream_node_build_field(&nb, lp_val_ptr(&x), x.len);
    }
    b->pos = entries_pos;
    long long total = nlive + ndel;
    uint64_t got_live = 0;
    for (long long k = 0; k < total; k++) {
        if (read_ent_hdr(in, b, key, mnf, &h) < 0) goto bad;
        int same = (h.flags & SFLAG_SAME) != 0;
        stream_node_build_entry(&nb, &h.id, (h.flags & SFLAG_DELETED) != 0, same, (uint64_t)h.nf);
        long long ne = same ? h.nf : 2 * h.nf;
        for (long long i = 0; i < ne; i++) {
            if (!rdb_blob_next(b, &x)) {
                rdb_fail(in, "Stream listpack ends inside an entry");
                goto bad;
            }
            stream_node_build_elem(&nb, lp_val_ptr(&x), x.len);
        }
        long long lpc;
        if (lp_int(in, b, &lpc, "entry element count") < 0) goto bad;
        if (lpc != (same ? h.nf + 3 : 2 * h.nf + 4)) {
            rdb_fail(in, "Stream listpack entry element count does not match");
            goto bad;
        }
        if (!(h.flags & SFLAG_DELETED)) got_live++;
        *last = h.id;
    }
    if (rdb_blob_next(b, &x)) {
        rdb_fail(in, "Stream listpack has elements past its entries");
        goto bad;
    }
    *live = got_live;
    if (!got_live) {
        stream_node_build_free(&nb);
        return 0;
    }
    if (stream_node_adopt(s, &nb) < 0)
        return rdb_fail(in, "Stream listpack integrity check failed (entry ids or sizes)");
    return 0;
bad:
    stream_node_build_free(&nb);
    return -1;
}

static int get_id(struct rdb_in *in, streamid *id) {
    if (rdb_get_len(in, &id->ms, NULL) < 0 || rdb_get_len(in, &id->seq, NULL) < 0) return -1;
    return 0;
}

/* A group's pending entry as read, before its consumer is known. */
struct gpel {
    streamid id;
    long long time;
    uint64_t count;
    int owned;
};

static int cmp_gpel(const void *a, const void *b) {
    return streamid_cmp(&((const struct gpel *)a)->id, &((const struct gpel *)b)->id);
}

static int load_group(struct rdb_in *in, struct stream *s, int rdb_type) {
    size_t nlen;
    char *name = rdb_get_string(in, &nlen);
    if (!name) return -1;
    streamid last;
    uint64_t er;
    long long entries_read;
    if (get_id(in, &last) < 0) goto fail_name;
    if (rdb_type >= RDB_TYPE_STREAM_LISTPACKS_2) {
        if (rdb_get_len(in, &er, NULL) < 0) goto fail_name;
        entries_read = (long long)er < 0 ? STREAM_ENTRIES_READ_INVALID : (long long)er;
    } else {
        entries_read = stream_estimate_entries_read(s, &last);
    }
    struct stream_cg *cg = stream_cg_create(s, name, nlen, &last, entries_read);
    hk_free(name);
    if (!cg) return rdb_fail(in, "Duplicated consumer group name");

    uint64_t npel;
    if (rdb_get_len(in, &npel, NULL) < 0) return -1;
    struct gpel *pel = NULL;
    size_t n = 0, cap = 0;
    int rc = -1;
    for (uint64_t i = 0; i < npel; i++) {
        unsigned char raw[16];
        uint64_t t, cnt;
        if (rdb_get_raw(in, raw, 16) < 0 || rdb_get_u64le(in, &t) < 0 || rdb_get_len(in, &cnt, NULL) < 0) goto out;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            pel = hk_realloc(pel, cap * sizeof(*pel));
        }
        pel[n++] = (struct gpel){id_from_raw(raw), (long long)t, cnt, 0};
    }
    if (n) qsort(pel, n, sizeof(*pel), cmp_gpel);
    for (size_t i = 1; i < n; i++)
        if (streamid_cmp(&pel[i - 1].id, &pel[i].id) == 0) {
            rdb_fail(in, "Duplicated global PEL entry loading stream consumer group");
            goto out;
        }

    uint64_t ncons;
    if (rdb_get_len(in, &ncons, NULL) < 0) goto out;
    for (uint64_t c = 0; c < ncons; c++) {
        size_t cl;
        char *cname = rdb_get_string(in, &cl);
        if (!cname) goto out;
        struct stream_consumer *cons = stream_consumer_create(cg, cname, cl, 0);
        hk_free(cname);
        if (!cons) {
            rdb_fail(in, "Duplicate stream consumer detected");
            goto out;
        }
        uint64_t seen, active, cnp;
        if (rdb_get_u64le(in, &seen) < 0) goto out;
        if (rdb_type >= RDB_TYPE_STREAM_LISTPACKS_3) {
            if (rdb_get_u64le(in, &active) < 0) goto out;
        } else {
            active = seen; /* the best estimate there is, as Redis does */
        }
        cons->seen_time = (long long)seen;
        cons->active_time = (long long)active;
        if (rdb_get_len(in, &cnp, NULL) < 0) goto out;
        for (uint64_t k = 0; k < cnp; k++) {
            unsigned char raw[16];
            if (rdb_get_raw(in, raw, 16) < 0) goto out;
            struct gpel key = {id_from_raw(raw), 0, 0, 0};
            struct gpel *g = n ? bsearch(&key, pel, n, sizeof(*pel), cmp_gpel) : NULL;
            if (!g) {
                rdb_fail(in, "Consumer entry not found in group global PEL");
                goto out;
            }
            if (g->owned) {
                rdb_fail(in, "Duplicated consumer PEL entry loading a stream consumer group");
                goto out;
            }
            g->owned = 1;
            struct stream_nack *nk = stream_pel_add(cg, cons, &g->id, g->time);
            nk->delivery_count = g->count;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (!pel[i].owned) {
            rdb_fail(in, "Stream CG PEL entry without consumer");
            goto out;
        }
    rc = 0;
out:
    hk_free(pel);
    return rc;
fail_name:
    hk_free(name);
    return -1;
}

struct kv *stream_rdb_load(struct rdb_in *in, int rdb_type, const char *key, size_t klen, long long expire) {
    struct stream *s = stream_new();
    uint64_t nn, live_sum = 0, length, ngroups;
    streamid last_seen = {0, 0}, last_id, first_id, maxdel = {0, 0};
    int any = 0;
    if (rdb_get_len(in, &nn, NULL) < 0) goto fail;
    for (uint64_t i = 0; i < nn; i++) {
        size_t kl;
        char *k = rdb_get_string(in, &kl);
        if (!k) goto fail;
        if (kl != 16) {
            hk_free(k);
            rdb_fail(in, "Stream node key entry is not the size of a stream ID");
            goto fail;
        }
        streamid master = id_from_raw((const unsigned char *)k);
        hk_free(k);
        struct rdb_blob b;
        char *owned;
        if (rdb_get_blob(in, &b, RDB_BLOB_LISTPACK, &owned) < 0) goto fail;
        uint64_t live = 0;
        streamid last = {0, 0};
        int r = load_node(in, s, &master, &b, &live, &last);
        hk_free(owned);
        if (r < 0) goto fail;
        if (any && streamid_cmp(&last, &last_seen) <= 0) {
            rdb_fail(in, "Stream nodes out of order");
            goto fail;
        }
        any = 1;
        last_seen = last;
        live_sum += live;
    }
    if (rdb_get_len(in, &length, NULL) < 0 || get_id(in, &last_id) < 0) goto fail;
    s->entries_added = length;
    if (rdb_type >= RDB_TYPE_STREAM_LISTPACKS_2) {
        if (get_id(in, &first_id) < 0 || get_id(in, &maxdel) < 0 || rdb_get_len(in, &s->entries_added, NULL) < 0)
            goto fail;
    }
    if (length != live_sum) {
        rdb_fail(in, "Stream length %llu does not match its %llu entries", (unsigned long long)length,
                 (unsigned long long)live_sum);
        goto fail;
    }
    if (any && streamid_cmp(&last_id, &last_seen) < 0) {
        rdb_fail(in, "Stream last id is behind its entries");
        goto fail;
    }
    if (s->entries_added < length) {
        rdb_fail(in, "Stream entries added is below its length");
        goto fail;
    }
    s->length = length;
    s->last_id = last_id;
    s->max_deleted_id = maxdel;
    /* The first live entry, from the nodes themselves. */
    stream_first(s, &s->first_id);

    if (rdb_get_len(in, &ngroups, NULL) < 0) goto fail;
    for (uint64_t g = 0; g < ngroups; g++)
        if (load_group(in, s, rdb_type) < 0) goto fail;
    return kv_new_ptr(key, klen, OBJ_STREAM, ENC_STREAM, s, expire);
fail:
    if (!in->err[0]) rdb_fail(in, "Malformed stream value");
    stream_free(s);
    return NULL;
}
