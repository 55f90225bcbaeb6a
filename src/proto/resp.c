/* resp.c - incremental RESP2 request parser; see resp.h. */
#include "resp.h"

#include "../core/alloc.h"
#include "../core/util.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

void resp_req_init(struct resp_req *r) {
    memset(r, 0, sizeof(*r));
    r->multibulk = -1;
    r->bulklen = -1;
}

void resp_req_free(struct resp_req *r) {
    hk_free(r->off);
    hk_free(r->len);
    resp_req_init(r);
}

void resp_req_reset(struct resp_req *r) {
    r->multibulk = -1;
    r->bulklen = -1;
    r->pos = 0;
    r->inl = 0;
    r->argc = 0;
    r->need = 0;
    /* Large argument arrays from one huge request are not kept forever. */
    if (r->cap > 1024) {
        hk_free(r->off);
        hk_free(r->len);
        r->off = r->len = NULL;
        r->cap = 0;
    }
}

static void push_arg(void *ctx, size_t off, size_t len) {
    struct resp_req *r = ctx;
    if (r->argc == r->cap) {
        int ncap = r->cap ? r->cap * 2 : 8;
        r->off = hk_realloc(r->off, (size_t)ncap * sizeof(size_t));
        r->len = hk_realloc(r->len, (size_t)ncap * sizeof(size_t));
        r->cap = ncap;
    }
    r->off[r->argc] = off;
    r->len[r->argc] = len;
    r->argc++;
}

static enum resp_status fail(struct resp_req *r, const char *msg) {
    snprintf(r->err, sizeof(r->err), "Protocol error: %s", msg);
    return RESP_ERR;
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int resp_split_line(char *base, size_t s, size_t e, void (*push)(void *ctx, size_t off, size_t len), void *ctx) {
    size_t i = s;
    for (;;) {
        while (i < e && isspace((unsigned char)base[i])) i++;
        if (i >= e) return 1;
        size_t out = i, start = i;
        int inq = 0, insq = 0, done = 0;
        while (!done) {
            if (inq) {
                if (i >= e) return 0;
                if (base[i] == '\\' && i + 3 < e && base[i + 1] == 'x' && hexval(base[i + 2]) >= 0 &&
                    hexval(base[i + 3]) >= 0) {
                    base[out++] = (char)(hexval(base[i + 2]) * 16 + hexval(base[i + 3]));
                    i += 4;
                } else if (base[i] == '\\' && i + 1 < e) {
                    char c;
                    switch (base[i + 1]) {
                    case 'n': c = '\n'; break;
                    case 'r': c = '\r'; break;
                    case 't': c = '\t'; break;
                    case 'b': c = '\b'; break;
                    case 'a': c = '\a'; break;
                    default: c = base[i + 1]; break;
                    }
                    base[out++] = c;
                    i += 2;
                } else if (base[i] == '"') {
                    /* The closing quote must end the argument. */
                    if (i + 1 < e && !isspace((unsigned char)base[i + 1])) return 0;
                    i++;
                    done = 1;
                } else {
                    base[out++] = base[i++];
                }
            } else if (insq) {
                if (i >= e) return 0;
                if (base[i] == '\\' && i + 1 < e && base[i + 1] == '\'') {
                    base[out++] = '\'';
                    i += 2;
                } else if (base[i] == '\'') {
                    if (i + 1 < e && !isspace((unsigned char)base[i + 1])) return 0;
                    i++;
                    done = 1;
                } else {
                    base[out++] = base[i++];
                }
            } else {
                if (i >= e || isspace((unsigned char)base[i])) {
                    done = 1;
                } else if (base[i] == '"') {
                    inq = 1;
                    i++;
                } else if (base[i] == '\'') {
                    insq = 1;
                    i++;
                } else {
                    base[out++] = base[i++];
                }
            }
        }
        push(ctx, start, out - start);
    }
}

static enum resp_status parse_inline(struct resp_req *r, char *buf, size_t len) {
    /* Already split (a request parsed again after CLIENT PAUSE held it
     * back): the buffer was unescaped in place, so splitting it a second
     * time would unescape twice. The arguments found the first time stand. */
    if (r->pos) return RESP_DONE;
    char *nl = memchr(buf, '\n', len);
    if (!nl) {
        if (len > RESP_INLINE_MAX) return fail(r, "too big inline request");
        r->need = 0;
        return RESP_MORE;
    }
    size_t e = (size_t)(nl - buf);
    size_t end = e;
    if (end > 0 && buf[end - 1] == '\r') end--;
    r->argc = 0;
    if (!resp_split_line(buf, 0, end, push_arg, r)) return fail(r, "unbalanced quotes in request");
    r->pos = e + 1;
    return RESP_DONE;
}

/* Read a "<c><number>\r\n" line at r->pos. Returns 1 and advances, 0 when
 * more data is needed, -1 when the line is too long. */
static int read_number_line(struct resp_req *r, char *buf, size_t len, long long *out, int *ok) {
    size_t start = r->pos + 1;
    if (start > len) return 0;
    /* Fast path for what clients send: 1..18 plain digits, no leading zero,
     * then "\r\n". Anything else (signs, zeros, a split line) takes the
     * general path below, whose answer is the reference. */
    size_t i = start;
    unsigned long long v = 0;
    while (i < len && i - start < 18 && (unsigned char)(buf[i] - '0') <= 9) v = v * 10 + (unsigned)(buf[i++] - '0');
    if (i > start && i + 1 < len && buf[i] == '\r' && buf[i + 1] == '\n' && (buf[start] != '0' || i - start == 1)) {
        *out = (long long)v;
        *ok = 1;
        r->pos = i + 2;
        return 1;
    }
    char *cr = memchr(buf + start, '\r', len - start);
    if (!cr) return (len - r->pos > RESP_INLINE_MAX) ? -1 : 0;
    size_t crpos = (size_t)(cr - buf);
    if (crpos + 1 >= len) return 0; /* need the '\n' too */
    *ok = hk_str2ll(buf + start, crpos - start, out);
    r->pos = crpos + 2;
    return 1;
}

/* "<digits>\r\n" at *pos as read_number_line's fast path takes it. */
static inline __attribute__((always_inline)) int skim_number(const char *buf, size_t len, size_t *pos, unsigned long long *out) {
    size_t i = *pos, start = i;
    unsigned long long v = 0;
    while (i < len && i - start < 18 && (unsigned char)(buf[i] - '0') <= 9) v = v * 10 + (unsigned)(buf[i++] - '0');
    if (i == start || i + 1 >= len || buf[i] != '\r' || buf[i + 1] != '\n' || (buf[start] == '0' && i - start > 1))
        return 0;
    *out = v;
    *pos = i + 2;
    return 1;
}

int resp_skim(const char *buf, size_t len, size_t *off, size_t *lens, int max, int *argc, size_t *reqlen) {
    if (len == 0 || buf[0] != '*') return 0;
    size_t pos = 1;
    unsigned long long n;
    if (!skim_number(buf, len, &pos, &n) || n == 0 || n > 2147483647ULL) return 0;
    for (unsigned long long i = 0; i < n; i++) {
        if (pos >= len || buf[pos] != '$') return 0;
        pos++;
        unsigned long long l;
        if (!skim_number(buf, len, &pos, &l)) return 0;
        /* The bulk and its trailing two bytes (resp_parse skips them
         * unread, so this does too). */
        if (l > len - pos || len - pos - l < 2) return 0;
        if (i < (unsigned long long)max) {
            off[i] = pos;
            lens[i] = (size_t)l;
        }
        pos += (size_t)l + 2;
    }
    *argc = (int)n;
    *reqlen = pos;
    return 1;
}

enum resp_status resp_parse(struct resp_req *r, char *buf, size_t len, const struct resp_limits *lim) {
    r->need = 0;
    if (r->multibulk < 0 && !r->inl) {
        if (len == 0) return RESP_MORE;
        if (buf[0] != '*') {
            r->inl = 1;
        } else {
            long long n;
            int ok = 0;
            int st = read_number_line(r, buf, len, &n, &ok);
            if (st < 0) return fail(r, "too big mbulk count string");
            if (st == 0) return RESP_MORE;
            if (!ok || n > 2147483647LL) return fail(r, "invalid multibulk length");
            if (n > 10 && !lim->authed) return fail(r, "unauthenticated multibulk length");
            if (n <= 0) {
                r->argc = 0;
                return RESP_DONE; /* empty request, skipped */
            }
            r->multibulk = n;
        }
    }
    if (r->inl) return parse_inline(r, buf, len);

    while (r->argc < r->multibulk) {
        if (r->bulklen < 0) {
            if (r->pos >= len) return RESP_MORE;
            if (buf[r->pos] != '$') {
                char m[48];
                snprintf(m, sizeof(m), "expected '$', got '%c'", buf[r->pos]);
                return fail(r, m);
            }
            long long n;
            int ok = 0;
            int st = read_number_line(r, buf, len, &n, &ok);
            if (st < 0) return fail(r, "too big bulk count string");
            if (st == 0) return RESP_MORE;
            if (!ok || n < 0 || n > lim->max_bulk) return fail(r, "invalid bulk length");
            if (n > 16384 && !lim->authed) return fail(r, "unauthenticated bulk length");
            r->bulklen = n;
        }
        size_t want = r->pos + (size_t)r->bulklen + 2;
        if (len < want) {
            r->need = want;
            return RESP_MORE;
        }
        push_arg(r, r->pos, (size_t)r->bulklen);
        r->pos = want;
        r->bulklen = -1;
    }
    return RESP_DONE;
}
