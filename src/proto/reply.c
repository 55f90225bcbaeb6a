/* reply.c - RESP encoders; see reply.h. */
#include "reply.h"

#include "../core/util.h"

#include <string.h>

static void header(struct outbuf *ob, char type, long long n) {
    char buf[32];
    buf[0] = type;
    int l = 1 + hk_ll2str(buf + 1, n);
    buf[l++] = '\r';
    buf[l++] = '\n';
    ob_append(ob, buf, (size_t)l);
}

void rw_simple(struct outbuf *ob, const char *s, size_t len) {
    char buf[128];
    if (len + 3 <= sizeof(buf)) {
        buf[0] = '+';
        memcpy(buf + 1, s, len);
        buf[len + 1] = '\r';
        buf[len + 2] = '\n';
        ob_append(ob, buf, len + 3);
        return;
    }
    ob_append(ob, "+", 1);
    ob_append(ob, s, len);
    ob_append(ob, "\r\n", 2);
}

void rw_error(struct outbuf *ob, const char *s, size_t len) {
    /* Newlines would break the protocol; Redis turns them into spaces. */
    char buf[512];
    ob_append(ob, "-", 1);
    while (len) {
        size_t n = len < sizeof(buf) ? len : sizeof(buf);
        for (size_t i = 0; i < n; i++) buf[i] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
        ob_append(ob, buf, n);
        s += n;
        len -= n;
    }
    ob_append(ob, "\r\n", 2);
}

void rw_bulk(struct outbuf *ob, const void *p, size_t len) {
    char buf[128];
    if (len <= 64) {
        /* Short values: one append for header, data and trailer. */
        buf[0] = '$';
        int l = 1 + hk_ull2str(buf + 1, len);
        buf[l++] = '\r';
        buf[l++] = '\n';
        memcpy(buf + l, p, len);
        l += (int)len;
        buf[l++] = '\r';
        buf[l++] = '\n';
        ob_append(ob, buf, (size_t)l);
        return;
    }
    header(ob, '$', (long long)len);
    ob_append(ob, p, len);
    ob_append(ob, "\r\n", 2);
}

void rw_int(struct outbuf *ob, long long v) { header(ob, ':', v); }

void rw_null(struct outbuf *ob, int resp) {
    if (resp >= 3) ob_append(ob, "_\r\n", 3);
    else ob_append(ob, "$-1\r\n", 5);
}

void rw_null_array(struct outbuf *ob, int resp) {
    if (resp >= 3) ob_append(ob, "_\r\n", 3);
    else ob_append(ob, "*-1\r\n", 5);
}

void rw_agg(struct outbuf *ob, char type, long long n) { header(ob, type, n); }
void rw_array(struct outbuf *ob, long long n) { header(ob, '*', n); }
void rw_map(struct outbuf *ob, int resp, long long n) {
    if (resp >= 3) header(ob, '%', n);
    else header(ob, '*', n * 2);
}
void rw_set(struct outbuf *ob, int resp, long long n) { header(ob, resp >= 3 ? '~' : '*', n); }
void rw_push(struct outbuf *ob, int resp, long long n) { header(ob, resp >= 3 ? '>' : '*', n); }

void rw_double(struct outbuf *ob, int resp, double d) {
    char num[64];
    int n = hk_d2str(num, sizeof(num), d);
    if (resp >= 3) {
        ob_append(ob, ",", 1);
        ob_append(ob, num, (size_t)n);
        ob_append(ob, "\r\n", 2);
    } else {
        rw_bulk(ob, num, (size_t)n);
    }
}

void rw_bool(struct outbuf *ob, int resp, int v) {
    if (resp >= 3) ob_append(ob, v ? "#t\r\n" : "#f\r\n", 4);
    else ob_append(ob, v ? ":1\r\n" : ":0\r\n", 4);
}

void rw_verbatim(struct outbuf *ob, int resp, const char *fmt3, const char *p, size_t len) {
    if (resp < 3) {
        rw_bulk(ob, p, len);
        return;
    }
    header(ob, '=', (long long)len + 4);
    ob_append(ob, fmt3, 3);
    ob_append(ob, ":", 1);
    ob_append(ob, p, len);
    ob_append(ob, "\r\n", 2);
}

void rw_bignum(struct outbuf *ob, int resp, const char *digits, size_t len) {
    if (resp < 3) {
        rw_bulk(ob, digits, len);
        return;
    }
    ob_append(ob, "(", 1);
    ob_append(ob, digits, len);
    ob_append(ob, "\r\n", 2);
}

void *rw_defer(struct outbuf *ob) { return ob_defer(ob); }

void rw_fill_agg(struct outbuf *ob, void *handle, char type, long long n) {
    char buf[32];
    buf[0] = type;
    int l = 1 + hk_ll2str(buf + 1, n);
    buf[l++] = '\r';
    buf[l++] = '\n';
    ob_fill_deferred(ob, handle, buf, (size_t)l);
}
