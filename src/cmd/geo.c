/* geo.c - the GEO commands: GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH,
 * GEOSEARCHSTORE and the GEORADIUS family.
 *
 * A geo set is an ordinary sorted set whose scores are 52-bit geohashes
 * (src/core/geohash.h); everything here goes through the zset helpers of
 * zset.h, so the encodings, thresholds and OBJECT ENCODING are the zset
 * ones. A search scores the up-to-nine cells covering the shape, walks
 * each cell's score interval, keeps the points inside the shape and sorts
 * them by distance when asked. Replies follow Redis byte for byte:
 * distances as "%.4f" bulk strings, coordinates in the human long double
 * form (RESP3 doubles), hashes as integers. */
#include "../core/alloc.h"
#include "../core/geohash.h"
#include "../core/skiplist.h"
#include "../core/util.h"
#include "../server/config.h"
#include "cmdutil.h"
#include "../types/zset.h"
#include "zset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- argument helpers ---- */

/* Longitude and latitude from argv[i], argv[i+1]; replies on error. */
static int geo_arg_lonlat(struct cmd_ctx *c, int i, double xy[2]) {
    for (int j = 0; j < 2; j++)
        if (!arg_double_or_reply(c, &c->argv[i + j], &xy[j], NULL)) return 0;
    if (xy[0] < GEO_LON_MIN || xy[0] > GEO_LON_MAX || xy[1] < GEO_LAT_MIN || xy[1] > GEO_LAT_MAX) {
        reply_errorf(c, "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return 0;
    }
    return 1;
}

/* Metres per unit for argv[i]; replies and returns -1 when unknown. */
static double geo_arg_unit(struct cmd_ctx *c, int i) {
    const hk_slice *a = &c->argv[i];
    if (arg_is(a, "m")) return 1;
    if (arg_is(a, "km")) return 1000;
    if (arg_is(a, "ft")) return 0.3048;
    if (arg_is(a, "mi")) return 1609.34;
    reply_error(c, "ERR unsupported unit provided. please use M, KM, FT, MI");
    return -1;
}

/* "<radius> <unit>" at argv[i]. */
static int geo_arg_radius(struct cmd_ctx *c, int i, struct geo_shape *s) {
    double r;
    if (!arg_double_or_reply(c, &c->argv[i], &r, "ERR need numeric radius")) return 0;
    if (r < 0) {
        reply_error(c, "ERR radius cannot be negative");
        return 0;
    }
    double conv = geo_arg_unit(c, i + 1);
    if (conv < 0) return 0;
    s->type = GEO_SHAPE_RADIUS;
    s->radius = r;
    s->conversion = conv;
    return 1;
}

/* "<width> <height> <unit>" at argv[i]. */
static int geo_arg_box(struct cmd_ctx *c, int i, struct geo_shape *s) {
    double w, h;
    if (!arg_double_or_reply(c, &c->argv[i], &w, "ERR need numeric width") ||
        !arg_double_or_reply(c, &c->argv[i + 1], &h, "ERR need numeric height"))
        return 0;
    if (h < 0 || w < 0) {
        reply_error(c, "ERR height or width cannot be negative");
        return 0;
    }
    double conv = geo_arg_unit(c, i + 2);
    if (conv < 0) return 0;
    s->type = GEO_SHAPE_BOX;
    s->width = w;
    s->height = h;
    s->conversion = conv;
    return 1;
}

/* The position of a member, 0 when it is absent or undecodable. */
static int geo_member_pos(struct kv *e, const hk_slice *m, double xy[2]) {
    double score;
    if (!zs_score(e, m->ptr, m->len, &score)) return 0;
    return geo_score_decode(score, xy);
}

/* ---- reply helpers ---- */

/* A distance: always a bulk string with four decimals. */
static void geo_reply_dist(struct cmd_ctx *c, double d) {
    char buf[128];
    int n = snprintf(buf, sizeof(buf), "%.4f", d);
    reply_bulk(c, buf, (size_t)n);
}

/* A coordinate in the human long double form: bulk in RESP2, a RESP3
 * double otherwise (not the shortest round-trip form reply_double uses). */
static void geo_reply_coord(struct cmd_ctx *c, double d) {
    char buf[160];
    int n = hk_ld2str(buf + 1, sizeof(buf) - 3, (long double)d);
    if (c->resp >= 3) {
        buf[0] = ',';
        buf[n + 1] = '\r';
        buf[n + 2] = '\n';
        reply_raw(c, buf, (size_t)n + 3);
    } else {
        reply_bulk(c, buf + 1, (size_t)n);
    }
}

/* ---- GEOADD ---- */

void cmd_geoadd(struct cmd_ctx *c) {
    int nx = 0, xx = 0, ch = 0, first = 2;
    for (; first < c->argc; first++) {
        const hk_slice *a = &c->argv[first];
        if (arg_is(a, "nx"))
            nx = 1;
        else if (arg_is(a, "xx"))
            xx = 1;
        else if (arg_is(a, "ch"))
            ch = 1;
        else
            break;
    }
    int nargs = c->argc - first;
    if (nargs % 3 || (nx && xx) || nargs == 0) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    int n = nargs / 3;
    double stack_scores[16];
    double *scores = n <= 16 ? stack_scores : hk_malloc((size_t)n * sizeof(double));
    size_t maxlen = 0;
    for (int j = 0; j < n; j++) {
        double xy[2];
        int base = first + 3 * j;
        if (!geo_arg_lonlat(c, base, xy)) goto done;
        geo_score_of(xy[0], xy[1], &scores[j]);
        if (c->argv[base + 2].len > maxlen) maxlen = c->argv[base + 2].len;
    }
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_write(c, &k);
    if (e && !check_type(c, e, OBJ_ZSET)) goto done;
    long long added = 0, changed = 0;
    /* As ZADD: a change per member added or moved. */
    unsigned long long mark = dirty_mark(c);
    struct key_write kw;
    key_write_init(&kw, &k, KEV_ZADD, 0);
    if (!e) {
        if (xx) {
            reply_int(c, 0);
            goto done;
        }
        e = zs_create(&k, (unsigned long)n, maxlen, KEV_ZADD);
        kw.pc.fired = 1;
    }
    int flags = (nx ? ZS_NX : 0) | (xx ? ZS_XX : 0);
    for (int j = 0; j < n; j++) {
        const hk_slice *m = &c->argv[first + 3 * j + 2];
        int out = 0;
        double ns = scores[j];
        /* Reported before the first member that changes. Scores are finite
         * integers below 2^54: no NaN can arise. */
        zs_add(e, scores[j], m->ptr, m->len, flags, &out, &ns, &kw.pc);
        if (out & ZS_ADDED) added++;
        if (out & ZS_UPDATED) changed++;
    }
    if (zs_len(e) == 0) db_delete(&k, c->now_ms, KEV_DEL);
    dirty_settle(c, mark, added + changed);
    reply_int(c, ch ? added + changed : added);
done:
    if (scores != stack_scores) hk_free(scores);
}

/* ---- GEODIST / GEOHASH / GEOPOS ---- */

void cmd_geodist(struct cmd_ctx *c) {
    double conv = 1;
    if (c->argc == 5) {
        conv = geo_arg_unit(c, 4);
        if (conv < 0) return;
    } else if (c->argc > 5) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (!e) {
        reply_null(c);
        return;
    }
    if (!check_type(c, e, OBJ_ZSET)) return;
    double a[2], b[2];
    if (!geo_member_pos(e, &c->argv[2], a) || !geo_member_pos(e, &c->argv[3], b)) {
        reply_null(c);
        return;
    }
    geo_reply_dist(c, geo_distance(a[0], a[1], b[0], b[1]) / conv);
}

void cmd_geohash(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (e && !check_type(c, e, OBJ_ZSET)) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double score;
        char buf[12];
        if (e && zs_score(e, c->argv[j].ptr, c->argv[j].len, &score) && geo_score_hashstr(score, buf))
            reply_bulk(c, buf, 11);
        else
            reply_null(c);
    }
}

void cmd_geopos(struct cmd_ctx *c) {
    struct keyref k;
    key_of(c, 1, &k);
    struct kv *e = lookup_read(c, &k);
    if (e && !check_type(c, e, OBJ_ZSET)) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double xy[2];
        if (e && geo_member_pos(e, &c->argv[j], xy)) {
            reply_array(c, 2);
            geo_reply_coord(c, xy[0]);
            geo_reply_coord(c, xy[1]);
        } else {
            reply_null_array(c);
        }
    }
}

/* ---- searches ---- */

struct geo_point {
    double lon, lat, dist, score;
    size_t idx; /* discovery order: keeps the sort stable */
    char *member;
    size_t mlen;
};

struct geo_points {
    struct geo_point *a;
    size_t used, cap;
};

static void gp_add(struct geo_points *g, const char *m, size_t mlen, double score, const double xy[2], double dist) {
    if (g->used == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 16;
        g->a = hk_realloc(g->a, g->cap * sizeof(*g->a));
    }
    struct geo_point *p = &g->a[g->used];
    p->lon = xy[0];
    p->lat = xy[1];
    p->dist = dist;
    p->score = score;
    p->idx = g->used;
    p->member = hk_malloc(mlen ? mlen : 1);
    memcpy(p->member, m, mlen);
    p->mlen = mlen;
    g->used++;
}

static void gp_free(struct geo_points *g) {
    for (size_t i = 0; i < g->used; i++) hk_free(g->a[i].member);
    hk_free(g->a);
}

/* Keep the point when it lies inside the shape. */
static void gp_consider(struct geo_points *g, const struct geo_shape *s, const char *m, size_t mlen, double score) {
    double xy[2], dist;
    if (!geo_score_decode(score, xy)) return;
    if (!geo_in_shape(s, xy[0], xy[1], &dist)) return;
    gp_add(g, m, mlen, score, xy, dist);
}

/* Collect the members with scores in [min, max) that lie inside the
 * shape, in score order, stopping once `limit` points are held (0: no
 * limit). */
static void geo_scan_cell(struct kv *e, double min, double max, const struct geo_shape *s, struct geo_points *g,
                          size_t limit) {
    if (kv_enc(e) == ENC_LISTPACK) {
        struct zit it;
        zit_init(&it, e);
        zit_seek(&it, 0);
        for (; zit_valid(&it); zit_next(&it)) {
            const char *m;
            size_t len;
            double score;
            zit_get(&it, &m, &len, &score);
            if (score < min) continue;
            if (score >= max) break;
            if (limit && g->used >= limit) break;
            gp_consider(g, s, m, len, score);
        }
        return;
    }
    struct zsl *z = kv_ptr(e);
    struct zrange r = {min, max, 0, 1};
    for (struct zsl_node *n = zsl_first_in_range(z, &r); n && zrange_lte_max(n->score, &r); n = n->level[0].forward) {
        if (limit && g->used >= limit) break;
        gp_consider(g, s, zsl_ele(n), n->elen, n->score);
    }
}

/* All points of the zset inside the shape, cell by cell. */
static void geo_collect(struct kv *e, struct geo_shape *s, struct geo_points *g, size_t limit) {
    struct geo_cell cells[9];
    geo_cover(s, cells);
    int last = 0;
    for (int i = 0; i < 9; i++) {
        if (cells[i].step == 0) continue;
        /* Very large shapes can make neighbours coincide; a cell equal to
         * the previous one scanned would duplicate its points. */
        if (last && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step) continue;
        if (limit && g->used >= limit) break;
        double min, max;
        geo_cell_scores(cells[i], &min, &max);
        geo_scan_cell(e, min, max, s, g, limit);
        last = i;
    }
}

static int gp_cmp_asc(const void *pa, const void *pb) {
    const struct geo_point *a = pa, *b = pb;
    if (a->dist != b->dist) return a->dist > b->dist ? 1 : -1;
    return a->idx > b->idx ? 1 : (a->idx < b->idx ? -1 : 0);
}

static int gp_cmp_desc(const void *pa, const void *pb) {
    const struct geo_point *a = pa, *b = pb;
    if (a->dist != b->dist) return a->dist < b->dist ? 1 : -1;
    return a->idx > b->idx ? 1 : (a->idx < b->idx ? -1 : 0);
}

enum { SORT_NONE, SORT_ASC, SORT_DESC };

#define GEO_FROM_COORDS 1 /* GEORADIUS: centre and radius are positional */
#define GEO_FROM_MEMBER 2 /* GEORADIUSBYMEMBER */
#define GEO_NOSTORE 4     /* the _RO variants */
#define GEO_SEARCH 8      /* GEOSEARCH syntax */
#define GEO_SEARCHSTORE 16

/* Every search command. srcidx is the source key's argv index. */
static void geo_search(struct cmd_ctx *c, int srcidx, int flags) {
    struct keyref k;
    key_of(c, srcidx, &k);
    struct kv *e = lookup_read(c, &k);
    if (e && !check_type(c, e, OBJ_ZSET)) return;

    struct geo_shape s;
    memset(&s, 0, sizeof(s));
    int base, storeidx = -1, storedist = 0;
    if (flags & GEO_FROM_COORDS) {
        base = 6;
        if (!geo_arg_lonlat(c, 2, s.xy) || !geo_arg_radius(c, 4, &s)) return;
    } else if (flags & GEO_FROM_MEMBER) {
        base = 5;
        /* A missing key still has its options parsed: they decide whether
         * the reply is an empty array or a count. */
        if (e) {
            if (!geo_member_pos(e, &c->argv[2], s.xy)) {
                reply_status(c, HK_ERR_ZSET_DECODE);
                return;
            }
            if (!geo_arg_radius(c, 3, &s)) return;
        }
    } else {
        base = 2;
        if (flags & GEO_SEARCHSTORE) {
            base = 3;
            storeidx = 1;
        }
    }

    int withdist = 0, withhash = 0, withcoord = 0, any = 0, sort = SORT_NONE;
    int frommember = 0, fromlonlat = 0, byradius = 0, bybox = 0;
    long long count = 0;
    int search = (flags & GEO_SEARCH) != 0;
    int canstore = !(flags & GEO_NOSTORE) && !search;
    for (int i = base; i < c->argc; i++) {
        const hk_slice *a = &c->argv[i];
        int left = c->argc - i - 1; /* arguments after this one */
        if (arg_is(a, "withdist")) {
            withdist = 1;
        } else if (arg_is(a, "withhash")) {
            withhash = 1;
        } else if (arg_is(a, "withcoord")) {
            withcoord = 1;
        } else if (arg_is(a, "any")) {
            any = 1;
        } else if (arg_is(a, "asc")) {
            sort = SORT_ASC;
        } else if (arg_is(a, "desc")) {
            sort = SORT_DESC;
        } else if (arg_is(a, "count") && left >= 1) {
            if (!arg_ll_or_reply(c, &c->argv[i + 1], &count, NULL)) return;
            if (count <= 0) {
                reply_error(c, "ERR COUNT must be > 0");
                return;
            }
            i++;
        } else if (arg_is(a, "store") && left >= 1 && canstore) {
            storeidx = i + 1;
            storedist = 0;
            i++;
        } else if (arg_is(a, "storedist") && left >= 1 && canstore) {
            storeidx = i + 1;
            storedist = 1;
            i++;
        } else if (arg_is(a, "storedist") && (flags & GEO_SEARCHSTORE)) {
            storedist = 1;
        } else if (arg_is(a, "frommember") && left >= 1 && search && !fromlonlat) {
            if (e && !geo_member_pos(e, &c->argv[i + 1], s.xy)) {
                reply_status(c, HK_ERR_ZSET_DECODE);
                return;
            }
            frommember = 1;
            i++;
        } else if (arg_is(a, "fromlonlat") && left >= 2 && search && !frommember) {
            if (!geo_arg_lonlat(c, i + 1, s.xy)) return;
            fromlonlat = 1;
            i += 2;
        } else if (arg_is(a, "byradius") && left >= 2 && search && !bybox) {
            if (!geo_arg_radius(c, i + 1, &s)) return;
            byradius = 1;
            i += 2;
        } else if (arg_is(a, "bybox") && left >= 3 && search && !byradius) {
            if (!geo_arg_box(c, i + 1, &s)) return;
            bybox = 1;
            i += 3;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }

    if (storeidx >= 0 && (withdist || withhash || withcoord)) {
        reply_errorf(c, "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                     (flags & GEO_SEARCHSTORE) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        return;
    }
    if (search && !(frommember || fromlonlat)) {
        reply_errorf(c, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %.*s",
                     (int)c->argv[0].len, c->argv[0].ptr);
        return;
    }
    if (search && !(byradius || bybox)) {
        reply_errorf(c, "ERR exactly one of BYRADIUS and BYBOX can be specified for %.*s", (int)c->argv[0].len,
                     c->argv[0].ptr);
        return;
    }
    if (any && !count) {
        reply_error(c, "ERR the ANY argument requires COUNT argument");
        return;
    }

    struct keyref dk;
    if (storeidx >= 0) key_of(c, storeidx, &dk);
    if (!e) {
        if (storeidx >= 0) {
            db_delete(&dk, c->now_ms, KEV_DEL);
            reply_int(c, 0);
        } else {
            reply_array(c, 0);
        }
        return;
    }
    /* COUNT keeps the nearest points, so it implies ASC unless ANY. */
    if (count && sort == SORT_NONE && !any) sort = SORT_ASC;

    struct geo_points g = {NULL, 0, 0};
    geo_collect(e, &s, &g, any ? (size_t)count : 0);
    size_t n = g.used;
    if (count && (unsigned long long)count < n) n = (size_t)count;
    if (sort != SORT_NONE && g.used > 1) qsort(g.a, g.used, sizeof(*g.a), sort == SORT_ASC ? gp_cmp_asc : gp_cmp_desc);

    if (storeidx < 0) {
        int opts = withdist + withhash + withcoord;
        reply_array(c, (long long)n);
        for (size_t i = 0; i < n; i++) {
            struct geo_point *p = &g.a[i];
            if (opts) reply_array(c, opts + 1);
            reply_bulk(c, p->member, p->mlen);
            if (withdist) geo_reply_dist(c, p->dist / s.conversion);
            if (withhash) reply_int(c, (long long)p->score);
            if (withcoord) {
                reply_array(c, 2);
                geo_reply_coord(c, p->lon);
                geo_reply_coord(c, p->lat);
            }
        }
    } else {
        struct zsl *z = zsl_new();
        for (size_t i = 0; i < n; i++) {
            struct geo_point *p = &g.a[i];
            zsl_insert(z, storedist ? p->dist / s.conversion : p->score, p->member, p->mlen);
        }
        /* The source entry may be the destination; it is not used again.
         * A stored result counts a change per member, as in Redis. */
        unsigned long long mark = dirty_mark(c);
        zs_store_result(c, &dk, z, (flags & GEO_SEARCHSTORE) ? KEV_GEOSEARCHSTORE : KEV_GEORADIUSSTORE);
        if (n) dirty_settle(c, mark, (long long)n);
        reply_int(c, (long long)n);
    }
    gp_free(&g);
}

void cmd_georadius(struct cmd_ctx *c) { geo_search(c, 1, GEO_FROM_COORDS); }
void cmd_georadiusbymember(struct cmd_ctx *c) { geo_search(c, 1, GEO_FROM_MEMBER); }
void cmd_georadius_ro(struct cmd_ctx *c) { geo_search(c, 1, GEO_FROM_COORDS | GEO_NOSTORE); }
void cmd_georadiusbymember_ro(struct cmd_ctx *c) { geo_search(c, 1, GEO_FROM_MEMBER | GEO_NOSTORE); }
void cmd_geosearch(struct cmd_ctx *c) { geo_search(c, 1, GEO_SEARCH); }
void cmd_geosearchstore(struct cmd_ctx *c) { geo_search(c, 2, GEO_SEARCH | GEO_SEARCHSTORE); }

/* Position of the key after the first `word` at or past argv[from], -1
 * when there is none (how a keyword key spec finds it). */
static int geo_keyword_key(const hk_slice *argv, int argc, int from, const char *word) {
    for (int i = from; i + 1 < argc; i++)
        if (arg_is(&argv[i], word)) return i + 1;
    return -1;
}

/* Keys of GEORADIUS / GEORADIUSBYMEMBER, as Redis's key specs report them:
 * the source, the key after the first STORE and the key after the first
 * STOREDIST; plus the target the command really writes (the last STORE or
 * STOREDIST wins) when that is another one, so its shard is locked. */
int geo_radius_getkeys(const hk_slice *argv, int argc, int *keys, int max) {
    if (max < 4 || argc < 2) return -1;
    int from = arg_is(&argv[0], "georadius") ? 6 : 5;
    int n = 0, target = -1;
    keys[n++] = 1;
    int st = geo_keyword_key(argv, argc, from, "store"), sd = geo_keyword_key(argv, argc, from, "storedist");
    if (st > 0) keys[n++] = st;
    if (sd > 0) keys[n++] = sd;
    for (int i = 5; i + 1 < argc; i++) {
        if (arg_is(&argv[i], "store") || arg_is(&argv[i], "storedist")) {
            target = i + 1;
            i++;
        }
    }
    if (target > 0 && target != st && target != sd) keys[n++] = target;
    return n;
}
