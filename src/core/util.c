/* util.c - number parsing/formatting, glob matching, clocks, randomness. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

int hk_str2ull(const char *s, size_t len, unsigned long long *out) {
    if (len == 0 || len > 20) return 0;
    if (len == 1 && s[0] == '0') {
        *out = 0;
        return 1;
    }
    if (s[0] < '1' || s[0] > '9') return 0;
    unsigned long long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

int hk_str2ll(const char *s, size_t len, long long *out) {
    if (len == 0) return 0;
    int neg = 0;
    if (s[0] == '-') {
        neg = 1;
        s++;
        len--;
        if (len == 0 || s[0] == '0') return 0;
    }
    unsigned long long u;
    if (!hk_str2ull(s, len, &u)) return 0;
    if (neg) {
        if (u > (unsigned long long)INT64_MAX + 1) return 0;
        *out = (long long)(0 - u);
    } else {
        if (u > (unsigned long long)INT64_MAX) return 0;
        *out = (long long)u;
    }
    return 1;
}

int hk_str2d(const char *s, size_t len, double *out) {
    char buf[256];
    if (len == 0 || len >= sizeof(buf)) return 0;
    if (isspace((unsigned char)s[0])) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if ((size_t)(end - buf) != len) return 0;
    if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || fpclassify(v) == FP_ZERO)) {
        /* Overflow/underflow: Redis accepts the rounded value only for
         * explicit infinities, which strtod reports without ERANGE. */
        return 0;
    }
    if (isnan(v)) return 0;
    *out = v;
    return 1;
}

int hk_str2ld(const char *s, size_t len, long double *out) {
    char buf[5120];
    if (len == 0 || len >= sizeof(buf)) return 0;
    if (isspace((unsigned char)s[0])) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long double v = strtold(buf, &end);
    if ((size_t)(end - buf) != len) return 0;
    if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO))
        return 0;
    if (isnan(v) || isinf(v)) return 0;
    *out = v;
    return 1;
}

int hk_ull2str(char *buf, unsigned long long v) {
    char tmp[HK_LONG_STR_SIZE];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
    return n;
}

int hk_ll2str(char *buf, long long v) {
    if (v < 0) {
        buf[0] = '-';
        return 1 + hk_ull2str(buf + 1, 0 - (unsigned long long)v);
    }
    return hk_ull2str(buf, (unsigned long long)v);
}

int hk_digits10(unsigned long long v) {
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

int hk_d2str(char *buf, size_t size, double d) {
    if (isnan(d)) return snprintf(buf, size, "nan");
    if (isinf(d)) return snprintf(buf, size, d > 0 ? "inf" : "-inf");
    if (d == 0) return snprintf(buf, size, signbit(d) ? "-0" : "0");
    /* The shortest precision that reads back to the same double. */
    for (int prec = 1; prec <= 17; prec++) {
        int n = snprintf(buf, size, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) return n;
    }
    return snprintf(buf, size, "%.17g", d);
}

int hk_ld2str(char *buf, size_t size, long double d) {
    if (isinf(d)) return snprintf(buf, size, d > 0 ? "inf" : "-inf");
    int n = snprintf(buf, size, "%.17Lf", d);
    if (n <= 0 || (size_t)n >= size) return snprintf(buf, size, "%.17Lg", d);
    if (strchr(buf, '.')) {
        while (n > 0 && buf[n - 1] == '0') n--;
        if (n > 0 && buf[n - 1] == '.') n--;
        buf[n] = '\0';
    }
    if (n == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        buf[1] = '\0';
        n = 1;
    }
    return n;
}

static int lower(int c, int nocase) { return nocase ? tolower(c) : c; }

static int glob_rec(const char *p, size_t pl, const char *s, size_t sl, int nocase, int depth) {
    if (depth > 1000) return 0; /* pathological patterns give up rather than recurse forever */
    while (pl) {
        switch (*p) {
        case '*':
            while (pl > 1 && p[1] == '*') {
                p++;
                pl--;
            }
            if (pl == 1) return 1;
            for (size_t i = 0; i <= sl; i++)
                if (glob_rec(p + 1, pl - 1, s + i, sl - i, nocase, depth + 1)) return 1;
            return 0;
        case '?':
            if (!sl) return 0;
            s++;
            sl--;
            break;
        case '[': {
            if (!sl) return 0;
            p++;
            pl--;
            int neg = 0, match = 0;
            if (pl && *p == '^') {
                neg = 1;
                p++;
                pl--;
            }
            while (pl && *p != ']') {
                if (*p == '\\' && pl >= 2) {
                    p++;
                    pl--;
                    if (lower(*p, nocase) == lower(*s, nocase)) match = 1;
                } else if (pl >= 3 && p[1] == '-') {
                    int a = lower((unsigned char)p[0], nocase), b = lower((unsigned char)p[2], nocase);
                    int c = lower((unsigned char)*s, nocase);
                    if (a > b) {
                        int t = a;
                        a = b;
                        b = t;
                    }
                    if (c >= a && c <= b) match = 1;
                    p += 2;
                    pl -= 2;
                } else if (lower(*p, nocase) == lower(*s, nocase)) {
                    match = 1;
                }
                p++;
                pl--;
            }
            if (neg) match = !match;
            if (!match) return 0;
            s++;
            sl--;
            if (!pl) return sl == 0; /* unterminated set ends the pattern */
            break;
        }
        case '\\':
            if (pl >= 2) {
                p++;
                pl--;
            }
            /* fallthrough */
        default:
            if (!sl || lower(*p, nocase) != lower(*s, nocase)) return 0;
            s++;
            sl--;
            break;
        }
        p++;
        pl--;
    }
    return sl == 0;
}

int hk_globmatch(const char *pat, size_t plen, const char *str, size_t slen, int nocase) {
    return glob_rec(pat, plen, str, slen, nocase, 0);
}

int hk_eqi(const char *s, size_t len, const char *word) {
    size_t wl = strlen(word);
    return wl == len && strncasecmp(s, word, len) == 0;
}

long long hk_ustime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

long long hk_mstime(void) { return hk_ustime() / 1000; }

long long hk_monotonic_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

void hk_random_bytes(void *buf, size_t n) {
    unsigned char *p = buf;
    while (n) {
        ssize_t r = getrandom(p, n, 0);
        if (r <= 0) {
            /* Fall back to a clock-seeded mix; only reached without getrandom. */
            for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(hk_monotonic_us() >> (i % 8));
            return;
        }
        p += r;
        n -= (size_t)r;
    }
}

void hk_random_hex(char *buf, size_t len) {
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[64];
    size_t n = len < sizeof(raw) ? len : sizeof(raw);
    hk_random_bytes(raw, n);
    for (size_t i = 0; i < len; i++) buf[i] = hex[raw[i % n] & 15];
    buf[len] = '\0';
}

uint64_t hk_rand64(void) {
    static _Thread_local uint64_t state;
    if (state == 0) {
        hk_random_bytes(&state, sizeof(state));
        state |= 1;
    }
    uint64_t x = state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    state = x;
    return x * 0x2545F4914F6CDD1DULL;
}
