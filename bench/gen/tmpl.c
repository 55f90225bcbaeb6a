/* tmpl.c - template parsing and request generation; see tmpl.h. */
#include "tmpl.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- growable buffer ---- */

void gbuf_reserve(struct gbuf *b, size_t more) {
    if (b->cap - b->len >= more) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < more) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        fprintf(stderr, "hotkv-bench: out of memory\n");
        exit(1);
    }
    b->p = p;
    b->cap = cap;
}

void gbuf_append(struct gbuf *b, const void *p, size_t n) {
    gbuf_reserve(b, n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void gbuf_free(struct gbuf *b) {
    free(b->p);
    memset(b, 0, sizeof(*b));
}

/* ---- random numbers ---- */

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = splitmix(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r) {
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

uint64_t rng_below(struct rng *r, uint64_t n) {
    /* Multiply-shift: the bias is below 2^-32 for any n we use. */
    return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

double rng_double(struct rng *r) {
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* ---- Zipf: rejection-inversion sampling (Hoermann and Derflinger 1996).
 * h(x) = x^-s is the unnormalised density, H its antiderivative. A sample
 * inverts H at a uniform point and accepts the rounded rank when it falls
 * under the histogram of h, which happens almost always. ---- */

/* expm1(t)/t and log1p(t)/t, continuous at t == 0. */
static double zipf_expm1_ratio(double t) {
    return fabs(t) > 1e-8 ? expm1(t) / t : 1 + t / 2;
}

static double zipf_log1p_ratio(double t) {
    return fabs(t) > 1e-8 ? log1p(t) / t : 1 - t / 2;
}

static double zipf_H(const struct zipf *z, double x) {
    double lx = log(x);
    return zipf_expm1_ratio((1 - z->s) * lx) * lx;
}

static double zipf_Hinv(const struct zipf *z, double y) {
    double t = (1 - z->s) * y;
    if (t < -1) t = -1;
    return exp(zipf_log1p_ratio(t) * y);
}

static double zipf_h(const struct zipf *z, double x) {
    return exp(-z->s * log(x));
}

void zipf_init(struct zipf *z, uint64_t n, double s) {
    z->n = n;
    z->s = s;
    z->h_x1 = zipf_H(z, 1.5) - 1;
    z->h_n = zipf_H(z, (double)n + 0.5);
    z->cut = 2 - zipf_Hinv(z, zipf_H(z, 2.5) - zipf_h(z, 2));
}

uint64_t zipf_sample(const struct zipf *z, struct rng *r) {
    for (;;) {
        double u = z->h_n + rng_double(r) * (z->h_x1 - z->h_n);
        double x = zipf_Hinv(z, u);
        double kd = floor(x + 0.5);
        if (kd < 1) kd = 1;
        if (kd > (double)z->n) kd = (double)z->n;
        if (kd - x <= z->cut || u >= zipf_H(z, kd + 0.5) - zipf_h(z, kd)) return (uint64_t)kd;
    }
}

/* ---- templates ---- */

enum part_kind { PART_LIT, PART_KEY, PART_VALUE, PART_RAND, PART_RANGE, PART_CONN, PART_REPLY_ID };
enum key_dist { DIST_UNIFORM, DIST_SEQUENCE, DIST_ZIPFIAN, DIST_LAST };

struct part {
    enum part_kind kind;
    enum key_dist dist;
    const char *lit;             /* PART_LIT: points into the template's copy */
    size_t litlen;
    uint64_t n, w;
    struct zipf zipf;
    _Atomic uint64_t *seq;       /* DIST_SEQUENCE: shared counter */
    char *pool;                  /* PART_VALUE: random bytes to take slices of */
    size_t poollen;
};

struct word {
    struct part *parts;
    int nparts;
    /* Bytes that never change, encoded once at parse time: the whole bulk
     * of a literal word, or the "$len\r\n" header of a single {key ...}
     * or {value N} word (their lengths are fixed). */
    char *pre;
    size_t prelen;
};

/* One command of a template: a template is one command, or a sequence of
 * them separated by ";" words, sent together as one request. */
struct cmd {
    struct word *words;
    int nwords;
    int nargs;                   /* arguments of the command ({range} counts 2) */
    char head[16];               /* "*nargs\r\n" */
    size_t headlen;
};

struct tmpl {
    char *src;                   /* as given */
    char *text;                  /* unquoted literal storage */
    char *cmd;
    struct cmd *cmds;
    int ncmds;
    int uses_reply_id;
    int draws_key;               /* a {key uniform|sequence|zipfian N} */
};

const char *tmpl_source(const struct tmpl *t) {
    return t->src;
}

const char *tmpl_command(const struct tmpl *t) {
    return t->cmd;
}

int tmpl_replies(const struct tmpl *t) {
    return t->ncmds;
}

int tmpl_uses_reply_id(const struct tmpl *t) {
    return t->uses_reply_id;
}

int tmpl_draws_key(const struct tmpl *t) {
    return t->draws_key;
}

void tmpl_free(struct tmpl *t) {
    if (!t) return;
    for (int c = 0; c < t->ncmds; c++) {
        struct cmd *cm = &t->cmds[c];
        for (int i = 0; i < cm->nwords; i++) {
            for (int j = 0; j < cm->words[i].nparts; j++) {
                free(cm->words[i].parts[j].seq);
                free(cm->words[i].parts[j].pool);
            }
            free(cm->words[i].parts);
            free(cm->words[i].pre);
        }
        free(cm->words);
    }
    free(t->cmds);
    free(t->text);
    free(t->cmd);
    free(t->src);
    free(t);
}

/* Parse "N" (a positive integer up to 10^15) from a placeholder field. */
static int parse_count(const char *s, uint64_t *out, int allow_zero) {
    char *end;
    if (*s < '0' || *s > '9') return 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v > 1000000000000000ULL || (!allow_zero && v == 0)) return 0;
    *out = v;
    return 1;
}

/* Parse the inside of one {...} into p. */
static int parse_placeholder(char *in, struct part *p, char *err, size_t errlen) {
    char *f[5];
    int nf = 0;
    char *save = NULL;
    for (char *tok = strtok_r(in, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (nf == 5) goto bad;
        f[nf++] = tok;
    }
    if (nf == 2 && !strcmp(f[0], "key") && !strcmp(f[1], "last")) {
        /* The number of the key drawn last in this request (an earlier
         * {key ...} of the same command or of an earlier command of the
         * sequence): SET k v ; GET k with the same k. */
        p->kind = PART_KEY;
        p->dist = DIST_LAST;
        return 1;
    }
    if ((nf == 3 || (nf == 4 && !strcmp(f[1], "zipfian"))) && !strcmp(f[0], "key")) {
        p->kind = PART_KEY;
        if (!strcmp(f[1], "uniform")) p->dist = DIST_UNIFORM;
        else if (!strcmp(f[1], "sequence")) p->dist = DIST_SEQUENCE;
        else if (!strcmp(f[1], "zipfian")) p->dist = DIST_ZIPFIAN;
        else {
            snprintf(err, errlen, "unknown key distribution '%s' (uniform, sequence, zipfian)", f[1]);
            return 0;
        }
        if (!parse_count(f[2], &p->n, 0)) goto bad;
        if (p->dist == DIST_ZIPFIAN) {
            /* Optional exponent (skew), 1.03 by default; the sampler's
             * integral stays finite for any positive one, 1 included. */
            double s = 1.03;
            if (nf == 4) {
                char *end;
                s = strtod(f[3], &end);
                if (*end || !(s > 0) || s > 10) goto bad;
            }
            zipf_init(&p->zipf, p->n, s);
        }
        if (p->dist == DIST_SEQUENCE) {
            p->seq = malloc(sizeof(*p->seq));
            atomic_init(p->seq, 0);
        }
        return 1;
    }
    if (nf == 2 && !strcmp(f[0], "value")) {
        p->kind = PART_VALUE;
        if (!parse_count(f[1], &p->n, 1) || p->n > 512 * 1024 * 1024) goto bad;
        /* Values are slices at random offsets of a pool twice their size
         * (at least 64 KiB): random enough to defeat compression and
         * deduplication, without generating bytes per request. */
        p->poollen = p->n * 2 > 65536 ? p->n * 2 : 65536;
        p->pool = malloc(p->poollen);
        static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        struct rng r;
        rng_seed(&r, 0x5eed + p->n);
        for (size_t i = 0; i < p->poollen; i++) p->pool[i] = alnum[rng_below(&r, sizeof(alnum) - 1)];
        return 1;
    }
    if (nf == 1 && !strcmp(f[0], "conn")) {
        p->kind = PART_CONN;
        return 1;
    }
    if (nf == 2 && !strcmp(f[0], "reply") && !strcmp(f[1], "id")) {
        p->kind = PART_REPLY_ID;
        return 1;
    }
    if (nf == 2 && !strcmp(f[0], "rand")) {
        p->kind = PART_RAND;
        if (!parse_count(f[1], &p->n, 0)) goto bad;
        return 1;
    }
    if (nf == 3 && !strcmp(f[0], "range")) {
        p->kind = PART_RANGE;
        if (!parse_count(f[1], &p->n, 0) || !parse_count(f[2], &p->w, 1) || p->w >= p->n) goto bad;
        return 1;
    }
bad:
    snprintf(err, errlen,
             "bad placeholder (expected {key uniform|sequence|zipfian N}, {key zipfian N S}, {key last}, {value N}, "
             "{rand N}, {range N W}, {conn} or {reply id})");
    return 0;
}

static void precompute(struct word *w) {
    if (w->nparts != 1) return;
    const struct part *p = &w->parts[0];
    char hdr[32];
    if (p->kind == PART_LIT) {
        int hl = snprintf(hdr, sizeof(hdr), "$%zu\r\n", p->litlen);
        w->prelen = (size_t)hl + p->litlen + 2;
        w->pre = malloc(w->prelen);
        memcpy(w->pre, hdr, (size_t)hl);
        memcpy(w->pre + hl, p->lit, p->litlen);
        memcpy(w->pre + hl + p->litlen, "\r\n", 2);
    } else if ((p->kind == PART_KEY && p->dist != DIST_LAST && p->n <= 10000000000ULL) || p->kind == PART_VALUE) {
        /* key_ and ten digits: every key number below 10^10 has 14 bytes. */
        size_t len = p->kind == PART_KEY ? 14 : p->n;
        int hl = snprintf(hdr, sizeof(hdr), "$%zu\r\n", len);
        w->prelen = (size_t)hl;
        w->pre = strdup(hdr);
    }
}

/* Start a new, empty command at the end of t's sequence. */
static struct cmd *add_cmd(struct tmpl *t, int *ccap) {
    if (t->ncmds == *ccap) {
        *ccap = *ccap ? *ccap * 2 : 2;
        t->cmds = realloc(t->cmds, (size_t)*ccap * sizeof(*t->cmds));
    }
    struct cmd *cm = &t->cmds[t->ncmds++];
    memset(cm, 0, sizeof(*cm));
    return cm;
}

struct tmpl *tmpl_parse(const char *src, char *err, size_t errlen) {
    return tmpl_parse_flags(src, 0, err, errlen);
}

struct tmpl *tmpl_parse_flags(const char *src, int flags, char *err, size_t errlen) {
    struct tmpl *t = calloc(1, sizeof(*t));
    size_t n = strlen(src);
    t->src = strdup(src);
    t->text = malloc(n + 1);
    size_t tl = 0;
    const char *s = src, *end = src + n;
    int ccap = 0, wcap = 0, have_key = (flags & TMPL_KEY_GIVEN) != 0;
    struct cmd *cm = add_cmd(t, &ccap);
    while (s < end) {
        while (s < end && *s == ' ') s++;
        if (s == end) break;
        /* A bare ";" word ends a command; the next one follows in the
         * same request. */
        if (*s == ';' && (s + 1 == end || s[1] == ' ')) {
            if (cm->nwords == 0) {
                snprintf(err, errlen, "empty command in a ';' sequence");
                goto fail;
            }
            cm = add_cmd(t, &ccap);
            wcap = 0;
            s++;
            continue;
        }
        if (cm->nwords == wcap) {
            wcap = wcap ? wcap * 2 : 8;
            cm->words = realloc(cm->words, (size_t)wcap * sizeof(*cm->words));
        }
        struct word *w = &cm->words[cm->nwords++];
        memset(w, 0, sizeof(*w));
        int pcap = 0, quoted = 0;
        if (*s == '"') {
            quoted = 1;
            s++;
        }
        while (s < end && (quoted ? *s != '"' : *s != ' ')) {
            if (w->nparts == pcap) {
                pcap = pcap ? pcap * 2 : 4;
                w->parts = realloc(w->parts, (size_t)pcap * sizeof(*w->parts));
            }
            struct part *p = &w->parts[w->nparts];
            memset(p, 0, sizeof(*p));
            if (*s == '{') {
                const char *close = memchr(s, '}', (size_t)(end - s));
                if (!close) {
                    snprintf(err, errlen, "unclosed '{' in template");
                    goto fail;
                }
                char in[128];
                size_t il = (size_t)(close - s - 1);
                if (il >= sizeof(in)) {
                    snprintf(err, errlen, "placeholder too long");
                    goto fail;
                }
                memcpy(in, s + 1, il);
                in[il] = 0;
                w->nparts++;
                if (!parse_placeholder(in, p, err, errlen)) goto fail;
                if (p->kind == PART_KEY && p->dist == DIST_LAST && !have_key) {
                    snprintf(err, errlen, "{key last} needs a {key ...} before it");
                    goto fail;
                }
                have_key |= p->kind == PART_KEY;
                t->draws_key |= p->kind == PART_KEY && p->dist != DIST_LAST;
                t->uses_reply_id |= p->kind == PART_REPLY_ID;
                s = close + 1;
            } else {
                p->kind = PART_LIT;
                p->lit = t->text + tl;
                while (s < end && *s != '{' && (quoted ? *s != '"' : *s != ' ')) t->text[tl++] = *s++;
                p->litlen = (size_t)(t->text + tl - p->lit);
                w->nparts++;
            }
        }
        if (quoted) {
            if (s == end) {
                snprintf(err, errlen, "unclosed '\"' in template");
                goto fail;
            }
            s++;
        }
        int has_range = 0;
        for (int j = 0; j < w->nparts; j++) has_range |= w->parts[j].kind == PART_RANGE;
        if (has_range && w->nparts != 1) {
            snprintf(err, errlen, "{range N W} must be a word of its own");
            goto fail;
        }
        cm->nargs += has_range ? 2 : 1;
    }
    if (t->ncmds > 1 && cm->nwords == 0) {
        snprintf(err, errlen, "empty command in a ';' sequence");
        goto fail;
    }
    for (int c = 0; c < t->ncmds; c++) {
        cm = &t->cmds[c];
        if (cm->nwords == 0 || cm->words[0].nparts != 1 || cm->words[0].parts[0].kind != PART_LIT) {
            snprintf(err, errlen, "a template starts with a command name");
            goto fail;
        }
        for (int i = 0; i < cm->nwords; i++) precompute(&cm->words[i]);
        snprintf(cm->head, sizeof(cm->head), "*%d\r\n", cm->nargs);
        cm->headlen = strlen(cm->head);
    }
    t->cmd = strndup(t->cmds[0].words[0].parts[0].lit, t->cmds[0].words[0].parts[0].litlen);
    return t;
fail:
    tmpl_free(t);
    return NULL;
}

/* Write v as exactly `width` zero-padded digits (wider values keep all
 * their digits); returns the length. */
static size_t put_padded(char *out, uint64_t v, int width) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    int len = n > width ? n : width;
    for (int i = 0; i < len - n; i++) out[i] = '0';
    for (int i = 0; i < n; i++) out[len - n + i] = tmp[n - 1 - i];
    return (size_t)len;
}

static void put_bulk(struct gbuf *out, const char *p, size_t n) {
    char hdr[32];
    size_t hl = 0;
    hdr[hl++] = '$';
    hl += put_padded(hdr + hl, n, 1);
    hdr[hl++] = '\r';
    hdr[hl++] = '\n';
    gbuf_reserve(out, hl + n + 2);
    memcpy(out->p + out->len, hdr, hl);
    memcpy(out->p + out->len + hl, p, n);
    memcpy(out->p + out->len + hl + n, "\r\n", 2);
    out->len += hl + n + 2;
}

/* The number of key part p; *last is the request's last drawn key number,
 * which {key last} repeats and every other key part sets. */
static uint64_t key_number(const struct part *p, struct rng *r, uint64_t *last) {
    switch (p->dist) {
    case DIST_LAST:
        return *last;
    case DIST_SEQUENCE:
        return *last = atomic_fetch_add_explicit(p->seq, 1, memory_order_relaxed) % p->n;
    case DIST_ZIPFIAN:
        return *last = zipf_sample(&p->zipf, r) - 1;
    default:
        return *last = rng_below(r, p->n);
    }
}

/* Append the text of part p (not PART_RANGE) to b. */
static void gen_part(const struct part *p, struct rng *r, struct gbuf *b, uint64_t *last, const struct tmpl_ctx *ctx) {
    char num[32];
    switch (p->kind) {
    case PART_LIT:
        gbuf_append(b, p->lit, p->litlen);
        break;
    case PART_KEY:
        memcpy(num, "key_", 4);
        gbuf_append(b, num, 4 + put_padded(num + 4, key_number(p, r, last), 10));
        break;
    case PART_VALUE: {
        size_t off = p->n ? (size_t)rng_below(r, p->poollen - p->n + 1) : 0;
        gbuf_append(b, p->pool + off, p->n);
        break;
    }
    case PART_RAND:
        gbuf_append(b, num, put_padded(num, rng_below(r, p->n), 1));
        break;
    case PART_CONN:
        gbuf_append(b, num, put_padded(num, ctx ? ctx->conn : 0, 1));
        break;
    case PART_REPLY_ID:
        if (ctx && ctx->id && ctx->idlen) gbuf_append(b, ctx->id, ctx->idlen);
        else gbuf_append(b, "0-0", 3);
        break;
    case PART_RANGE:
        break;
    }
}

/* Append one command of a template; *last carries {key last} across the
 * commands of a sequence. */
static void gen_cmd(const struct cmd *cm, struct rng *r, struct gbuf *out, uint64_t *last,
                    const struct tmpl_ctx *ctx) {
    gbuf_append(out, cm->head, cm->headlen);
    struct gbuf word = {0};
    char wbuf[256];
    for (int i = 0; i < cm->nwords; i++) {
        const struct word *w = &cm->words[i];
        const struct part *p0 = &w->parts[0];
        if (w->nparts == 1 && p0->kind == PART_LIT) {
            gbuf_append(out, w->pre, w->prelen);
        } else if (w->pre && p0->kind == PART_KEY) {
            uint64_t k = key_number(p0, r, last);
            gbuf_reserve(out, w->prelen + 16);
            char *o = out->p + out->len;
            memcpy(o, w->pre, w->prelen);
            o += w->prelen;
            memcpy(o, "key_", 4);
            for (int d = 13; d >= 4; d--) {
                o[d] = (char)('0' + k % 10);
                k /= 10;
            }
            o[14] = '\r';
            o[15] = '\n';
            out->len += w->prelen + 16;
        } else if (w->pre && p0->kind == PART_VALUE) {
            size_t off = p0->n ? (size_t)rng_below(r, p0->poollen - p0->n + 1) : 0;
            gbuf_reserve(out, w->prelen + p0->n + 2);
            char *o = out->p + out->len;
            memcpy(o, w->pre, w->prelen);
            memcpy(o + w->prelen, p0->pool + off, p0->n);
            memcpy(o + w->prelen + p0->n, "\r\n", 2);
            out->len += w->prelen + p0->n + 2;
        } else if (w->nparts == 1 && p0->kind == PART_RANGE) {
            uint64_t a = rng_below(r, p0->n - p0->w);
            char num[24];
            put_bulk(out, num, put_padded(num, a, 1));
            put_bulk(out, num, put_padded(num, a + p0->w, 1));
        } else {
            /* Mixed word: build it in a stack buffer when it fits. */
            word.p = wbuf;
            word.cap = sizeof(wbuf);
            word.len = 0;
            int on_stack = 1;
            for (int j = 0; j < w->nparts; j++) {
                const struct part *p = &w->parts[j];
                size_t need = p->kind == PART_VALUE      ? p->n
                              : p->kind == PART_LIT      ? p->litlen
                              : p->kind == PART_REPLY_ID ? (ctx && ctx->idlen > 3 ? ctx->idlen : 3)
                                                         : 32;
                if (on_stack && word.cap - word.len < need) {
                    char *heap = malloc(word.len + need + 256);
                    memcpy(heap, wbuf, word.len);
                    word.p = heap;
                    word.cap = word.len + need + 256;
                    on_stack = 0;
                }
                gen_part(p, r, &word, last, ctx);
            }
            put_bulk(out, word.p, word.len);
            if (!on_stack) free(word.p);
        }
    }
}

uint64_t tmpl_gen_ctx(const struct tmpl *t, struct rng *r, struct gbuf *out, const struct tmpl_ctx *ctx) {
    uint64_t last = ctx && ctx->has_key ? ctx->key : 0;
    for (int c = 0; c < t->ncmds; c++) gen_cmd(&t->cmds[c], r, out, &last, ctx);
    return last;
}

void tmpl_gen(const struct tmpl *t, struct rng *r, struct gbuf *out) {
    tmpl_gen_ctx(t, r, out, NULL);
}
