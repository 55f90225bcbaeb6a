/* hfe.c - the per-shard sets of hashes with field TTLs and the active
 * field-expiry cycle; see hfe.h. */
#include "hfe.h"

#include "../core/alloc.h"
#include "../types/hash.h"

#include <string.h>

/* One tracked hash: its key (and the key's hash, so a resize needs no
 * rehashing of the bytes). */
struct hfe_key {
    struct hnode node;
    uint64_t hash;
    size_t klen;
    char key[];
};

struct hfe_shard {
    struct htable *keys; /* one set per database */
    uint64_t cursor;     /* active expiry progress in `db`'s set */
    int db;
};

static uint64_t hfe_key_hash(const struct hnode *n, void *ctx) {
    (void)ctx;
    return ((const struct hfe_key *)n)->hash;
}

static int hfe_key_match(const struct hnode *n, const void *key) {
    const struct hfe_key *h = (const struct hfe_key *)n;
    const struct keyref *k = key;
    return h->klen == k->klen && memcmp(h->key, k->key, k->klen) == 0;
}

static void hfe_key_free(struct hnode *n, void *ctx) {
    (void)ctx;
    hk_free(n);
}

void hfe_track(const struct keyref *k) {
    HK_ASSERT_HELD(k->shard);
    struct shard *s = &ks.shards[k->shard];
    if (!s->hfe) {
        s->hfe = hk_calloc(1, sizeof(*s->hfe));
        s->hfe->keys = hk_calloc((size_t)ks.ndb, sizeof(struct htable));
    }
    struct htable *t = &s->hfe->keys[k->db];
    if (ht_find_link(t, k->hash, hfe_key_match, k)) return;
    struct hfe_key *h = hk_malloc(sizeof(*h) + k->klen);
    h->node.next = NULL;
    h->hash = k->hash;
    h->klen = k->klen;
    if (k->klen) memcpy(h->key, k->key, k->klen);
    ht_insert(t, &h->node, k->hash, hfe_key_hash, NULL);
}

void hfe_untrack(const struct keyref *k) {
    HK_ASSERT_HELD(k->shard);
    struct shard *s = &ks.shards[k->shard];
    if (!s->hfe) return;
    struct htable *t = &s->hfe->keys[k->db];
    struct hnode **link = ht_find_link(t, k->hash, hfe_key_match, k);
    if (!link) return;
    struct hnode *n = *link;
    ht_unlink(t, link);
    hk_free(n);
    ht_maybe_shrink(t, hfe_key_hash, NULL);
}

void hfe_flush_db(struct shard *s, int db) {
    if (!s->hfe) return;
    ht_drain(&s->hfe->keys[db], hfe_key_free, NULL);
    if (s->hfe->db == db) s->hfe->cursor = 0;
}

void hfe_swapdb(struct shard *s, int a, int b) {
    if (!s->hfe) return;
    struct htable t = s->hfe->keys[a];
    s->hfe->keys[a] = s->hfe->keys[b];
    s->hfe->keys[b] = t;
    if (s->hfe->db == a || s->hfe->db == b) s->hfe->cursor = 0;
}

unsigned long long ks_hfe_count(int db, int locked) {
    unsigned long long n = 0;
    for (unsigned i = 0; i < ks.nshards; i++) {
        if (!locked) shard_lock(i);
        HK_ASSERT_HELD(i);
        if (ks.shards[i].hfe) n += ks.shards[i].hfe->keys[db].count;
        if (!locked) shard_unlock(i);
    }
    return n;
}

void db_field_expired(const struct keyref *k, const char *f, size_t fl, int report) {
    if (report) db_written(k, KEV_HEXPIRED);
    struct db_sink *sink = db_sink;
    if (sink && sink->on_field_expired) sink->on_field_expired(sink, k, f, fl);
}

/* ---- active expiry ---------------------------------------------------------------- */

/* ht_scan callback: count the visit against the budget and keep the
 * tracked hashes that have a field due (or that are stale) for after the
 * scan step, when the set may change. */
struct hfe_pick {
    unsigned shard;
    int db;
    long long now_ms;
    unsigned budget;
    struct hfe_key **picked;
    size_t n, cap;
};

static void hfe_pick_due(struct hnode *n, void *ctx) {
    struct hfe_pick *p = ctx;
    struct hfe_key *h = (struct hfe_key *)n;
    p->budget = p->budget ? p->budget - 1 : 0;
    struct keyref k = {.db = p->db, .shard = p->shard, .key = h->key, .klen = h->klen, .hash = h->hash};
    const struct kv *e = db_peek(&k);
    if (e && kv_hfe(e) && hashv_next_expire(e) > p->now_ms) return;
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 16;
        p->picked = hk_realloc(p->picked, p->cap * sizeof(*p->picked));
    }
    p->picked[p->n++] = h;
}

void hfe_batch_field(void *ctx, const char *f, size_t fl) {
    struct hfe_batch *b = ctx;
    db_field_expired(b->k, f, fl, !b->reported);
    b->reported = 1;
}

/* Expire up to `quota` due fields of the tracked hash h; returns how many.
 * h may be freed (the hash left the set). */
static unsigned hfe_expire_hash(unsigned shard, int db, struct hfe_key *h, long long now_ms, unsigned quota) {
    /* The key is copied: leaving the set frees h while k is in use. */
    char small[128];
    char *key = h->klen <= sizeof(small) ? small : hk_malloc(h->klen);
    memcpy(key, h->key, h->klen);
    struct keyref k = {.db = db, .shard = shard, .key = key, .klen = h->klen, .hash = h->hash};
    unsigned got = 0;
    struct kv *e = db_peek(&k);
    if (!e || !kv_hfe(e)) {
        hfe_untrack(&k);
    } else if (!kv_has_expire(e) || kv_expire(e) > now_ms) {
        /* (A key past its own deadline is the key cycle's.) */
        struct hfe_batch b = {&k, 0};
        got = hashv_expire_due(e, now_ms, quota, hfe_batch_field, &b);
        if (hashv_len(e) == 0) db_delete(&k, now_ms, KEV_DEL_EMPTIED);
        else if (hashv_ttl_trim(e)) hfe_untrack(&k);
        else hashv_shrink(e);
    }
    if (key != small) hk_free(key);
    return got;
}

unsigned shard_active_expire_fields(unsigned si, long long now_ms, unsigned budget) {
    HK_ASSERT_HELD(si);
    struct hfe_shard *hs = ks.shards[si].hfe;
    if (!hs) return 0;
    unsigned expired = 0, quota = budget;
    for (int tries = 0; tries < ks.ndb && budget && quota; tries++) {
        int d = hs->db;
        struct htable *t = &hs->keys[d];
        if (!t->count) {
            hs->db = (d + 1) % ks.ndb;
            hs->cursor = 0;
            continue;
        }
        struct hfe_pick p = {si, d, now_ms, budget, NULL, 0, 0};
        uint64_t cur = hs->cursor;
        do {
            cur = ht_scan(t, cur, hfe_pick_due, &p);
        } while (cur != 0 && p.budget);
        hs->cursor = cur;
        if (cur == 0) hs->db = (d + 1) % ks.ndb;
        budget = p.budget;
        for (size_t i = 0; i < p.n && quota; i++) {
            unsigned got = hfe_expire_hash(si, d, p.picked[i], now_ms, quota);
            quota -= got < quota ? got : quota;
            expired += got;
        }
        hk_free(p.picked);
    }
    return expired;
}
