/* rscan.c - RESP reply boundaries; see rscan.h. */
#include "rscan.h"

#include <string.h>

/* Parse the signed decimal line starting at p (after the type byte) up to
 * CRLF. Returns bytes to the start of the next element, 0 if incomplete,
 * -1 if malformed. */
static long line_int(const char *p, size_t n, long long *v) {
    const char *cr = memchr(p, '\r', n);
    if (!cr) return n > 32 ? -1 : 0;
    if ((size_t)(cr - p) + 1 >= n) return 0;
    if (cr[1] != '\n') return -1;
    const char *s = p;
    int neg = 0;
    if (s < cr && *s == '-') {
        neg = 1;
        s++;
    }
    if (s == cr) return -1;
    long long x = 0;
    for (; s < cr; s++) {
        if (*s < '0' || *s > '9' || x > 100000000000000LL) return -1;
        x = x * 10 + (*s - '0');
    }
    *v = neg ? -x : x;
    return (long)(cr - p) + 2;
}

static long scan(const char *p, size_t n, int depth, struct rscan_item *top) {
    if (n == 0) return 0;
    if (depth > RSCAN_MAX_DEPTH) return -1;
    char t = p[0];
    if (top) {
        top->type = t;
        top->payload = NULL;
        top->payload_len = 0;
    }
    switch (t) {
    case '+': case '-': case ':': case '_': case ',': case '#': case '(': {
        const char *cr = memchr(p + 1, '\r', n - 1);
        if (!cr || (size_t)(cr - p) + 1 >= n) return 0;
        if (cr[1] != '\n') return -1;
        if (top && (t == '+' || t == '-')) {
            top->payload = p + 1;
            top->payload_len = (size_t)(cr - p - 1);
        }
        return (long)(cr - p) + 2;
    }
    case '$': case '!': case '=': {
        long long len;
        long h = line_int(p + 1, n - 1, &len);
        if (h <= 0) return h;
        if (len == -1) return 1 + h;
        if (len < 0) return -1;
        size_t total = 1 + (size_t)h + (size_t)len + 2;
        if (n < total) return 0;
        if (top) {
            top->payload = p + 1 + h;
            top->payload_len = (size_t)len;
        }
        return (long)total;
    }
    case '*': case '~': case '>': case '%': case '|': {
        long long cnt;
        long h = line_int(p + 1, n - 1, &cnt);
        if (h <= 0) return h;
        if (cnt == -1) return 1 + h;
        if (cnt < 0) return -1;
        if (t == '%' || t == '|') cnt *= 2;
        size_t off = 1 + (size_t)h;
        for (long long i = 0; i < cnt; i++) {
            long e = scan(p + off, n - off, depth + 1, NULL);
            if (e <= 0) return e;
            off += (size_t)e;
        }
        /* An attribute map precedes the reply it annotates. */
        if (t == '|') {
            long e = scan(p + off, n - off, depth + 1, top);
            if (e <= 0) return e;
            off += (size_t)e;
        }
        return (long)off;
    }
    default:
        return -1;
    }
}

long rscan_reply(const char *p, size_t n, struct rscan_item *top) {
    struct rscan_item dummy;
    return scan(p, n, 0, top ? top : &dummy);
}

int rscan_is_nil(const char *p, size_t len) {
    if (len == 3) return !memcmp(p, "_\r\n", 3);
    return len == 5 && (p[0] == '$' || p[0] == '*') && !memcmp(p + 1, "-1\r\n", 4);
}

int rscan_element(const char *p, size_t len, int idx, struct rscan_item *out) {
    if (len == 0 || (p[0] != '*' && p[0] != '>')) return 0;
    long long cnt;
    long h = line_int(p + 1, len - 1, &cnt);
    if (h <= 0 || idx >= cnt) return 0;
    size_t off = 1 + (size_t)h;
    for (int i = 0; i <= idx; i++) {
        long e = scan(p + off, len - off, 1, i == idx ? out : NULL);
        if (e <= 0) return 0;
        off += (size_t)e;
    }
    return 1;
}

static int is_stream_id(const char *s, size_t n) {
    size_t i = 0, ms = 0, sq = 0;
    if (n > RSCAN_ID_MAX) return 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) ms++;
    if (!ms || i == n || s[i] != '-') return 0;
    for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) sq++;
    return sq && i == n;
}

/* Depth-first search of the reply at p (complete, len bytes). */
static int find_id(const char *p, size_t len, int depth, struct rscan_item *out) {
    struct rscan_item it;
    if (depth > RSCAN_MAX_DEPTH || scan(p, len, depth, &it) <= 0) return 0;
    char t = p[0];
    if (t == '$' || t == '+') {
        if (!it.payload || !is_stream_id(it.payload, it.payload_len)) return 0;
        *out = it;
        return 1;
    }
    if (t != '*' && t != '~' && t != '>' && t != '%') return 0;
    long long cnt;
    long h = line_int(p + 1, len - 1, &cnt);
    if (h <= 0 || cnt <= 0) return 0;
    if (t == '%') cnt *= 2;
    size_t off = 1 + (size_t)h;
    for (long long i = 0; i < cnt; i++) {
        long e = scan(p + off, len - off, depth + 1, NULL);
        if (e <= 0) return 0;
        if (find_id(p + off, (size_t)e, depth + 1, out)) return 1;
        off += (size_t)e;
    }
    return 0;
}

int rscan_find_id(const char *p, size_t len, struct rscan_item *out) {
    return len ? find_id(p, len, 0, out) : 0;
}
