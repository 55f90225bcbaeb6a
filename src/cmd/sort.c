/* sort.c - SORT and SORT_RO: the elements of a list, set or sorted set,
 * ordered by their own value or by weights read from other keys, with
 * LIMIT, GET projections and (SORT only) STORE into a list.
 *
 * Patterns. "BY w_*" and "GET v_*" name other keys: the first '*' is
 * replaced by the element, and "...->f" reads field f of the hash so
 * named; "GET #" is the element itself. A pattern without '*' names no
 * key: BY such a pattern means "do not sort", GET one gives nil. The keys
 * a pattern names are not in the command's key spec (Redis declares it
 * incomplete), so they may live in any shard: a command whose patterns
 * can reach another shard widens its lock set to every shard before it
 * reads anything (exec_lock_all_shards), so the sort stays atomic. A
 * pattern whose {hash tag} comes before any wildcard only names keys of
 * that tag's slot (Redis's patternHashSlot); when that slot's shard is
 * the sorted key's own, the command stays on its one shard, as a plain
 * SORT does.
 *
 * This file is not the types layer: it reads values through their
 * iterators and builds the stored list through the list view. */
#include "../core/alloc.h"
#include "../core/buf.h"
#include "../core/hash.h"
#include "../core/util.h"
#include "../types/hash.h"
#include "../types/list.h"
#include "../types/set.h"
#include "../types/zset.h"
#include "args.h"
#include "cmds.h"
#include "cmdutil.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- key finders ---------------------------------------------------------- */

/* The sorted key, then the last STORE destination, skipping the values of
 * LIMIT, GET and BY so that a pattern spelled "store" is not taken for
 * the option (Redis's sortGetKeys). */
int sort_getkeys(const hk_slice *argv, int argc, int *keys, int max) {
    if (argc < 2 || max < 2) return -1;
    int n = 1, store = 0;
    keys[0] = 1;
    for (int i = 2; i < argc; i++) {
        const hk_slice *a = &argv[i];
        if (arg_is(a, "limit")) i += 2;
        else if (arg_is(a, "get") || arg_is(a, "by")) i += 1;
        else if (arg_is(a, "store") && i + 1 < argc) store = ++i;
    }
    if (store) keys[n++] = store;
    return n;
}

int sort_ro_getkeys(const hk_slice *argv, int argc, int *keys, int max) {
    (void)argv;
    if (argc < 2 || max < 1) return -1;
    keys[0] = 1;
    return 1;
}

/* ---- patterns ------------------------------------------------------------- */

/* Whether keys named by pattern p may live outside `shard`: 0 only when a
 * non-empty {tag} closes before any wildcard or escape and that tag's
 * shard is `shard`. */
static int pattern_leaves_shard(const hk_slice *p, unsigned shard) {
    size_t open = (size_t)-1;
    for (size_t i = 0; i < p->len; i++) {
        char ch = p->ptr[i];
        if (ch == '*' || ch == '?' || ch == '[' || ch == '\\') return 1;
        if (open == (size_t)-1 && ch == '{') {
            open = i;
        } else if (open != (size_t)-1 && open != (size_t)-2 && ch == '}') {
            if (i == open + 1) {
                open = (size_t)-2; /* "{}": the whole key is hashed */
                continue;
            }
            unsigned slot = hk_key_slot(p->ptr + open, i - open + 1);
            return (slot & (ks.nshards - 1)) != shard;
        }
    }
    return 1;
}

static int is_hash_pattern(const hk_slice *p) { return p->len == 1 && p->ptr[0] == '#'; }

static const char *find_star(const hk_slice *p) { return memchr(p->ptr, '*', p->len); }

/* Working memory of the pattern lookups: the substituted key name, and
 * digits of an integer-encoded value. */
struct sort_scratch {
    struct hk_buf key;
    char num[HK_LONG_STR_SIZE];
    struct hashv_val hv;
};

/* The value pattern p names for element s/len (see the file comment):
 * 1 with out and olen set (valid until the next lookup or the next change
 * to the keyspace), 0 when there is none (no '*', a missing key, a value
 * of the wrong type, a missing field or one past its deadline, which goes
 * as HGET would delete it). */
static int sort_lookup(struct cmd_ctx *c, const hk_slice *p, const char *s, size_t len, struct sort_scratch *w,
                       const char **out, size_t *olen) {
    if (is_hash_pattern(p)) {
        *out = s;
        *olen = len;
        return 1;
    }
    const char *star = find_star(p);
    if (!star) return 0;
    const char *end = p->ptr + p->len;
    const char *field = NULL;
    size_t flen = 0;
    for (const char *q = star + 1; q + 2 < end; q++)
        if (q[0] == '-' && q[1] == '>') {
            field = q + 2;
            flen = (size_t)(end - field);
            break;
        }
    size_t prefix = (size_t)(star - p->ptr);
    size_t postfix = (size_t)(end - star - 1) - (field ? flen + 2 : 0);
    w->key.len = 0;
    hk_buf_add(&w->key, p->ptr, prefix, 64);
    hk_buf_add(&w->key, s, len, 64);
    hk_buf_add(&w->key, star + 1, postfix, 64);
    struct keyref k;
    keyref_init(&k, c->db, w->key.p ? w->key.p : "", w->key.len);
    struct kv *e = lookup_read(c, &k);
    if (!e) return 0;
    if (field) {
        if (kv_type(e) != OBJ_HASH || hash_expire_field(c, &k, &e, field, flen) ||
            !hashv_get(e, field, flen, &w->hv))
            return 0;
        *out = w->hv.s;
        *olen = w->hv.len;
        return 1;
    }
    if (kv_type(e) != OBJ_STRING) return 0;
    kv_str(e, w->num, out, olen);
    return 1;
}

/* ---- the sort vector ----------------------------------------------------- */

/* One element: its bytes (copied into the arena, as offsets until the
 * vector is complete), and its weight: a number, or for ALPHA BY the
 * bytes of the weight (has_cmp 0 when the pattern named nothing). */
struct sort_item {
    size_t off, len;
    double score;
    size_t coff, clen;
    int has_cmp;
};

struct sort_vec {
    struct sort_item *v;
    size_t n, cap;
    struct hk_buf arena;
};

static void vec_push(struct sort_vec *sv, const char *s, size_t len) {
    if (sv->n == sv->cap) {
        sv->cap = sv->cap ? sv->cap * 2 : 16;
        sv->v = hk_realloc(sv->v, sv->cap * sizeof(*sv->v));
    }
    struct sort_item *it = &sv->v[sv->n++];
    memset(it, 0, sizeof(*it));
    it->off = sv->arena.len;
    it->len = len;
    hk_buf_add(&sv->arena, s, len, 256);
}

static const char *item_ptr(const struct sort_vec *sv, const struct sort_item *it) {
    return sv->arena.p ? sv->arena.p + it->off : "";
}

struct sort_order {
    const struct sort_vec *sv;
    int desc, alpha, by;
    /* Equal ALPHA weights fall back to the elements: a set's reading
     * order means nothing and differs between servers, so a stored
     * result replays the same only this way. Lists and sorted sets keep
     * the order they were read in (a stable sort, as Redis's). */
    int ties_by_element;
};

static int item_cmp(const struct sort_order *o, const struct sort_item *a, const struct sort_item *b) {
    const struct sort_vec *sv = o->sv;
    int r;
    if (!o->alpha) {
        if (a->score > b->score) r = 1;
        else if (a->score < b->score) r = -1;
        else r = hk_bytes_cmp(item_ptr(sv, a), a->len, item_ptr(sv, b), b->len);
    } else if (o->by) {
        if (!a->has_cmp || !b->has_cmp) r = a->has_cmp - b->has_cmp;
        else {
            const char *ar = sv->arena.p ? sv->arena.p : ""; /* empty when every weight is */
            r = hk_bytes_cmp(ar + a->coff, a->clen, ar + b->coff, b->clen);
        }
        if (r == 0 && o->ties_by_element) r = hk_bytes_cmp(item_ptr(sv, a), a->len, item_ptr(sv, b), b->len);
    } else {
        r = hk_bytes_cmp(item_ptr(sv, a), a->len, item_ptr(sv, b), b->len);
    }
    return o->desc ? -r : r;
}

/* Stable merge sort of v[0..n) through tmp (room for n). Stable, so that
 * elements of equal ALPHA weights keep the order they were read in. */
static void merge_sort(const struct sort_order *o, struct sort_item *v, struct sort_item *tmp, size_t n) {
    if (n < 2) return;
    if (n <= 8) {
        for (size_t i = 1; i < n; i++) {
            struct sort_item x = v[i];
            size_t j = i;
            while (j > 0 && item_cmp(o, &v[j - 1], &x) > 0) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    merge_sort(o, v, tmp, h);
    merge_sort(o, v + h, tmp, n - h);
    if (item_cmp(o, &v[h - 1], &v[h]) <= 0) return;
    memcpy(tmp, v, h * sizeof(*v));
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) v[k++] = item_cmp(o, &v[j], &tmp[i]) < 0 ? v[j++] : tmp[i++];
    while (i < h) v[k++] = tmp[i++];
}

/* A weight as SORT reads one (Redis 8 parses it with fast_float over the
 * C string): the whole text must be a decimal or inf/infinity number, no
 * leading space or '+', no hex; the empty string reads as 0; NaN is
 * refused. Returns 1 on success. */
static int sort_weight(const char *s, size_t len, double *out) {
    *out = 0;
    if (len == 0) return 1;
    const char *q = s;
    if (*q == '-') q++;
    if (q == s + len) return 0;
    if (!((*q >= '0' && *q <= '9') || *q == '.' || *q == 'i' || *q == 'I' || *q == 'n' || *q == 'N')) return 0;
    if (q + 1 < s + len && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) return 0;
    char tmp[128];
    char *buf = len < sizeof(tmp) ? tmp : hk_malloc(len + 1);
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    double d = strtod(buf, &end);
    int ok = end == buf + len && !isnan(d);
    if (buf != tmp) hk_free(buf);
    if (!ok) return 0;
    *out = d;
    return 1;
}

/* ---- loading the elements ------------------------------------------------ */

static uint64_t setv_size_of(const struct kv *e) {
    struct setv o = setv_of(e);
    return setv_size(&o);
}

static void load_list(struct sort_vec *sv, struct kv *e, long start, long count, int desc) {
    struct listv v;
    listv_open(&v, e);
    unsigned long len = listv_len(&v);
    struct ql_cur cur;
    if (count > 0 && len > 0 &&
        listv_seek(&v, desc ? len - 1 - (unsigned long)start : (unsigned long)start, &cur) == HK_OK) {
        struct lp_val val;
        for (long i = 0; i < count && cur.pos != LP_NONE; i++) {
            ql_cur_get(&cur, &val);
            vec_push(sv, lp_val_ptr(&val), val.len);
            if (desc) ql_cur_prev(&cur);
            else ql_cur_next(&cur);
        }
    }
    /* A node the cursor decompressed is compressed again, as after LRANGE. */
    listv_done(&v);
}

static void load_set(struct sort_vec *sv, struct kv *e) {
    struct setv o = setv_of(e);
    struct setv_iter it;
    struct lp_val val;
    setv_iter_init(&it, &o);
    while (setv_iter_next(&it, &val)) vec_push(sv, lp_val_ptr(&val), val.len);
}

static void load_zset(struct sort_vec *sv, struct kv *e, long start, long count, int desc) {
    unsigned long len = zs_len(e);
    if (count <= 0 || len == 0) return;
    struct zit it;
    zit_init(&it, e);
    zit_seek(&it, desc ? len - 1 - (unsigned long)start : (unsigned long)start);
    for (long i = 0; i < count && zit_valid(&it); i++) {
        const char *ele;
        size_t el;
        zit_get(&it, &ele, &el, NULL);
        vec_push(sv, ele, el);
        zit_move(&it, desc);
    }
}

/* ---- the command ------------------------------------------------------------ */

#define SORT_GETS_INLINE 8

static void sort_generic(struct cmd_ctx *c, int readonly) {
    int desc = 0, alpha = 0, dontsort = 0;
    long long lstart = 0, lcount = -1;
    const hk_slice *by = NULL;
    int store_at = 0;
    int gets_inl[SORT_GETS_INLINE], *gets = gets_inl, ngets = 0;
    struct argcur a;
    ac_init(&a, c, 2);
    while (ac_more(&a)) {
        if (ac_is(&a, "ASC")) {
            desc = 0;
        } else if (ac_is(&a, "DESC")) {
            desc = 1;
        } else if (ac_is(&a, "ALPHA")) {
            alpha = 1;
        } else if (ac_is_with(&a, "LIMIT", 2)) {
            ac_ll(&a, &lstart);
            ac_ll(&a, &lcount);
        } else if (!readonly && ac_is_with(&a, "STORE", 1)) {
            store_at = a.i++;
        } else if (ac_is_with(&a, "BY", 1)) {
            by = &c->argv[a.i++];
            /* A pattern without '*' is a constant: nothing to sort by (and,
             * as in Redis, a later BY does not undo that). */
            if (!find_star(by)) dontsort = 1;
        } else if (ac_is_with(&a, "GET", 1)) {
            if (gets == gets_inl && ngets == SORT_GETS_INLINE) {
                gets = hk_malloc((size_t)c->argc * sizeof(int));
                memcpy(gets, gets_inl, sizeof(gets_inl));
            }
            gets[ngets++] = a.i++;
        } else {
            ac_fail(&a, HK_ERR_SYNTAX);
        }
    }
    if (!ac_ok(&a)) goto out;

    /* Patterns that can name keys outside the sorted key's shard need
     * every shard held; take them before reading anything. */
    struct keyref k;
    key_of(c, 1, &k);
    int wide = by && !dontsort && pattern_leaves_shard(by, k.shard);
    for (int i = 0; i < ngets && !wide; i++) {
        const hk_slice *g = &c->argv[gets[i]];
        wide = !is_hash_pattern(g) && find_star(g) && pattern_leaves_shard(g, k.shard);
    }
    if (wide) {
        int st = exec_lock_all_shards(c);
        if (st != HK_OK) {
            reply_status(c, st);
            goto out;
        }
    }

    struct kv *e = lookup_read(c, &k);
    int type = e ? kv_type(e) : OBJ_LIST;
    if (e && type != OBJ_LIST && type != OBJ_SET && type != OBJ_ZSET) {
        reply_error(c, ERR_WRONGTYPE);
        goto out;
    }
    /* An unsorted set has no order of its own that a replica or a replay
     * would reproduce: a stored result is sorted by the members. */
    if (dontsort && type == OBJ_SET && store_at) {
        dontsort = 0;
        alpha = 1;
        by = NULL;
    }
    long vlen = 0;
    if (e) vlen = type == OBJ_LIST ? (long)listv_len_of(e) : type == OBJ_SET ? (long)setv_size_of(e) : (long)zs_len(e);

    /* LIMIT, clamped to the value as Redis does. */
    long start = lstart < 0 ? 0 : lstart > vlen ? vlen : (long)lstart;
    long cnt = lcount < -1 ? -1 : lcount > vlen ? vlen : (long)lcount;
    long end = cnt < 0 ? vlen - 1 : start + cnt - 1;
    if (start >= vlen) {
        start = vlen - 1;
        end = vlen - 2;
    }
    if (end >= vlen) end = vlen - 1;

    struct sort_vec sv = {0};
    if (e) {
        if (dontsort && type != OBJ_SET) {
            /* Native order: read just the range, in the asked direction. */
            long n = end - start + 1;
            if (type == OBJ_LIST) load_list(&sv, e, start, n, desc);
            else load_zset(&sv, e, start, n, desc);
            end -= start;
            start = 0;
        } else if (type == OBJ_LIST) {
            load_list(&sv, e, 0, vlen, 0);
        } else if (type == OBJ_SET) {
            load_set(&sv, e);
        } else {
            load_zset(&sv, e, 0, vlen, 0);
        }
    }

    struct sort_scratch w = {0};
    int bad_weight = 0;
    if (!dontsort && sv.n) {
        for (size_t j = 0; j < sv.n; j++) {
            struct sort_item *it = &sv.v[j];
            const char *p;
            size_t pl;
            if (by) {
                if (!sort_lookup(c, by, item_ptr(&sv, it), it->len, &w, &p, &pl)) continue;
            } else {
                p = item_ptr(&sv, it);
                pl = it->len;
            }
            if (alpha) {
                if (by) {
                    /* The arena may move: p must not point into it. */
                    it->coff = sv.arena.len;
                    it->clen = pl;
                    it->has_cmp = 1;
                    hk_buf_add(&sv.arena, p, pl, 256);
                }
            } else if (!sort_weight(p, pl, &it->score)) {
                bad_weight = 1;
            }
        }
        struct sort_order o = {&sv, desc, alpha, by != NULL, type == OBJ_SET};
        struct sort_item *tmp = hk_malloc(sv.n * sizeof(*tmp));
        merge_sort(&o, sv.v, tmp, sv.n);
        hk_free(tmp);
    }

    long span = end - start + 1;
    if (span < 0) span = 0;
    long long outlen = ngets ? (long long)ngets * span : span;
    if (bad_weight) {
        reply_error(c, "ERR One or more scores can't be converted into double");
    } else if (!store_at) {
        reply_array(c, outlen);
        for (long j = start; j <= end; j++) {
            const struct sort_item *it = &sv.v[j];
            const char *s = item_ptr(&sv, it);
            if (!ngets) reply_bulk(c, s, it->len);
            for (int g = 0; g < ngets; g++) {
                const char *p;
                size_t pl;
                if (sort_lookup(c, &c->argv[gets[g]], s, it->len, &w, &p, &pl)) reply_bulk(c, p, pl);
                else reply_null(c);
            }
        }
    } else {
        struct keyref kd;
        key_of(c, store_at, &kd);
        if (outlen) {
            /* Built as a quicklist, then turned into a listpack when it
             * fits the full limit: the encoding Redis gives a stored SORT
             * result. */
            struct kv *le = listv_new_entry(kd.key, kd.klen);
            struct listv v;
            listv_open(&v, le);
            listv_grow(&v, SIZE_MAX / 4, ULONG_MAX / 4);
            for (long j = start; j <= end; j++) {
                const struct sort_item *it = &sv.v[j];
                const char *s = item_ptr(&sv, it);
                if (!ngets) listv_push(&v, s, it->len, 0);
                for (int g = 0; g < ngets; g++) {
                    const char *p;
                    size_t pl;
                    if (!sort_lookup(c, &c->argv[gets[g]], s, it->len, &w, &p, &pl)) {
                        p = "";
                        pl = 0;
                    }
                    listv_push(&v, p, pl, 0);
                }
            }
            listv_settle(&v);
            listv_done(&v);
            db_put(&kd, le, KEV_SORTSTORE);
            /* A change per element stored, as Redis counts them. */
            db_dirty_add((long long)outlen - 1);
        } else {
            db_delete(&kd, c->now_ms, KEV_DEL);
        }
        reply_int(c, outlen);
    }
    hk_free(w.key.p);
    hk_free(sv.v);
    hk_free(sv.arena.p);
out:
    if (gets != gets_inl) hk_free(gets);
}

void cmd_sort(struct cmd_ctx *c) { sort_generic(c, 0); }
void cmd_sort_ro(struct cmd_ctx *c) { sort_generic(c, 1); }
