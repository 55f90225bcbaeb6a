/* util.c - number parsing/formatting, glob matching, clocks, randomness. */
#include "util.h"
#include "alloc.h"

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
    /* strtod needs a terminated copy; any length is a valid spelling (the
     * largest double written out in full is 309 digits and more), so a
     * long one is copied to the heap. */
    char stack[128];
    if (len == 0 || isspace((unsigned char)s[0])) return 0;
    char *buf = len < sizeof(stack) ? stack : hk_malloc(len + 1);
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    int ok = (size_t)(end - buf) == len;
    /* Overflow/underflow: Redis accepts the rounded value only for
     * explicit infinities, which strtod reports without ERANGE. */
    if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || fpclassify(v) == FP_ZERO)) ok = 0;
    if (isnan(v)) ok = 0;
    if (buf != stack) hk_free(buf);
    if (ok) *out = v;
    return ok;
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
    if (isnan(v)) return 0;
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

/* Shortest digits that read back as d, laid out the way Redis 7.2 prints
 * doubles (its grisu-based dtoa): plain integers up to 7 trailing zeros
 * past the digits ("100", "10000000"), plain decimals down to 1e-6
 * ("0.000001"), scientific otherwise with an unpadded exponent ("1e+21",
 * "1e-7", "1.5e+300"). The digits come from %.*e at the smallest precision
 * that round-trips. */
int hk_d2str(char *buf, size_t size, double d) {
    if (isnan(d)) return snprintf(buf, size, "nan");
    if (isinf(d)) return snprintf(buf, size, d > 0 ? "inf" : "-inf");
    if (d == 0) return snprintf(buf, size, signbit(d) ? "-0" : "0");
    /* Integral values below 10^15 (scores and counters, mostly) are exact
     * in a double and their shortest form is their own digits: print them
     * as integers instead of searching precisions with snprintf/strtod.
     * More than 7 trailing zeros switches to exponent form below, so
     * those take the general path. */
    if (fabs(d) < 1e15 && d == (double)(long long)d) {
        char tmp[HK_LONG_STR_SIZE];
        int n = hk_ll2str(tmp, (long long)d);
        int tz = 0;
        while (tz < n && tmp[n - 1 - tz] == '0') tz++;
        if (tz <= 7) return snprintf(buf, size, "%s", tmp);
    }
    char sci[40];
    for (int prec = 0; prec <= 16; prec++) {
        snprintf(sci, sizeof(sci), "%.*e", prec, d);
        if (strtod(sci, NULL) == d) break;
    }
    /* sci is "[-]D[.DDD]e[+-]XX": collect the digits and the exponent. */
    char digits[24];
    int nd = 0, neg = sci[0] == '-';
    const char *q = sci + neg;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9') digits[nd++] = *q;
    int e10 = atoi(q + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    int k = e10 - (nd - 1); /* value = digits * 10^k */
    int aexp = e10 < 0 ? -e10 : e10;
    char out[64];
    int o = 0;
    if (neg) out[o++] = '-';
    if (k >= 0 && aexp < nd + 7) {
        memcpy(out + o, digits, (size_t)nd);
        o += nd;
        memset(out + o, '0', (size_t)k);
        o += k;
    } else if (k < 0 && (k > -7 || aexp < 4)) {
        int intpart = nd + k;
        if (intpart <= 0) {
            out[o++] = '0';
            out[o++] = '.';
            memset(out + o, '0', (size_t)-intpart);
            o += -intpart;
            memcpy(out + o, digits, (size_t)nd);
            o += nd;
        } else {
            memcpy(out + o, digits, (size_t)intpart);
            o += intpart;
            out[o++] = '.';
            memcpy(out + o, digits + intpart, (size_t)(nd - intpart));
            o += nd - intpart;
        }
    } else {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            memcpy(out + o, digits + 1, (size_t)(nd - 1));
            o += nd - 1;
        }
        o += snprintf(out + o, sizeof(out) - (size_t)o, "e%c%d", e10 < 0 ? '-' : '+', aexp);
    }
    out[o] = '\0';
    return snprintf(buf, size, "%s", out);
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

/* Does the single-character token at *p (a literal, an escape, '?' or a
 * [set]) match c? Advances *p and *pl past the token. A set left open at
 * the end of the pattern ends there, as in Redis. */
static int glob_token(const unsigned char **pp, size_t *plp, int c, int nocase) {
    const unsigned char *p = *pp;
    size_t pl = *plp;
    int match = 0;
    c = lower(c, nocase);
    if (*p == '?') {
        match = 1;
    } else if (*p == '[') {
        p++;
        pl--;
        int neg = 0;
        if (pl && *p == '^') {
            neg = 1;
            p++;
            pl--;
        }
        while (pl && *p != ']') {
            if (*p == '\\' && pl >= 2) {
                p++;
                pl--;
                if (lower(*p, nocase) == c) match = 1;
            } else if (pl >= 3 && p[1] == '-') {
                int a = lower(p[0], nocase), b = lower(p[2], nocase);
                if (a > b) {
                    int t = a;
                    a = b;
                    b = t;
                }
                if (c >= a && c <= b) match = 1;
                p += 2;
                pl -= 2;
            } else if (lower(*p, nocase) == c) {
                match = 1;
            }
            p++;
            pl--;
        }
        if (neg) match = !match;
        if (!pl) { /* unterminated set: the pattern ends here */
            *pp = p;
            *plp = 0;
            return match;
        }
    } else {
        if (*p == '\\' && pl >= 2) {
            p++;
            pl--;
        }
        match = lower(*p, nocase) == c;
    }
    *pp = p + 1;
    *plp = pl - 1;
    return match;
}

/* Redis's matcher recurses once per run of '*' and gives up (no match)
 * past this depth; its answer is part of what clients observe. */
#define GLOB_MAX_STARS 1000

/* Glob matching in O(pattern * string) time: every token but '*' eats one
 * character, so on a mismatch it is enough to let the most recent '*' eat
 * one more character and retry from just after it (an earlier '*' can never
 * do better). The recursive form is exponential on patterns like
 * "a*a*a*a*...b", which a client could send to KEYS or SCAN MATCH.
 *
 * Redis answers as if its recursion limit were part of the language: a
 * pattern with more than GLOB_MAX_STARS runs of '*' followed by something
 * never matches (a run that ends the pattern still matches the rest of
 * the string). Runs are met in pattern order and backtracking never
 * returns before the latest one, so counting them as they are entered
 * gives that answer, and stops pathological patterns early. */
static int glob_match(const unsigned char *p, size_t pl, const unsigned char *s, size_t sl, int nocase) {
    const unsigned char *star_p = NULL, *star_s = NULL;
    size_t star_pl = 0, star_sl = 0;
    unsigned stars = 0;
    for (;;) {
        if (pl && *p == '*') {
            while (pl && *p == '*') {
                p++;
                pl--;
            }
            if (!pl) return 1;
            if (++stars > GLOB_MAX_STARS) return 0;
            star_p = p;
            star_pl = pl;
            star_s = s;
            star_sl = sl;
            continue;
        }
        if (!pl && !sl) return 1;
        if (pl && sl) {
            if (glob_token(&p, &pl, *s, nocase)) {
                s++;
                sl--;
                continue;
            }
        } else if (pl && !sl) {
            return 0; /* a later star eating less cannot help */
        }
        /* Mismatch: let the last star eat one more character. */
        if (!star_p || !star_sl) return 0;
        star_s++;
        star_sl--;
        p = star_p;
        pl = star_pl;
        s = star_s;
        sl = star_sl;
    }
}

int hk_globmatch(const char *pat, size_t plen, const char *str, size_t slen, int nocase) {
    return glob_match((const unsigned char *)pat, plen, (const unsigned char *)str, slen, nocase);
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

long long hk_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

uint64_t hk_tsc_mult;

void hk_clock_init(void) {
#if defined(__x86_64__)
    char src[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f) return;
    if (!fgets(src, sizeof(src), f)) src[0] = '\0';
    fclose(f);
    if (strcmp(src, "tsc\n") != 0) return;
    /* 2 ms against CLOCK_MONOTONIC: an error of a few parts in 10^5, far
     * below what commandstats can show. */
    long long n0 = hk_monotonic_ns(), n1;
    uint64_t t0 = __builtin_ia32_rdtsc(), t1;
    do {
        n1 = hk_monotonic_ns();
        t1 = __builtin_ia32_rdtsc();
    } while (n1 - n0 < 2000000);
    if (t1 > t0) hk_tsc_mult = ((uint64_t)(n1 - n0) << 32) / (t1 - t0);
#endif
}

void hk_clock_describe(char *buf, size_t size) {
    if (hk_tsc_mult)
        snprintf(buf, size, "X86 TSC @ %llu ticks/us", (unsigned long long)((1000ULL << 32) / hk_tsc_mult));
    else
        snprintf(buf, size, "POSIX clock_gettime");
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
    /* The state moves linearly over GF(2), and the low bits of a plain
     * xorshift64* output depend only on low state bits: two consecutive
     * draws reduced modulo a small power of two (a bucket, then a depth in
     * it) are then tied to each other. A full avalanche (splitmix64's
     * finalizer) makes every output bit depend on the whole state. */
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

int hk_bytes_cmp(const char *a, size_t alen, const char *b, size_t blen) {
    size_t m = alen < blen ? alen : blen;
    int r = m ? memcmp(a, b, m) : 0;
    if (r) return r;
    return alen < blen ? -1 : (alen > blen ? 1 : 0);
}
