/* util.h - small string and number helpers shared by every layer.
 *
 * Number parsing here is strict in the way Redis clients rely on: no
 * leading or trailing spaces, no '+', no leading zeros, overflow rejected.
 * Nothing here allocates except where stated. */
#ifndef HK_UTIL_H
#define HK_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define HK_LONG_STR_SIZE 21

/* Parse a whole buffer as a signed 64-bit integer. Returns 1 on success. */
int hk_str2ll(const char *s, size_t len, long long *out);
/* Same, for unsigned 64-bit values. */
int hk_str2ull(const char *s, size_t len, unsigned long long *out);
/* Parse a double the way Redis does: strtod over the whole buffer, no
 * spaces, NaN rejected; "inf"/"-inf" accepted. Returns 1 on success. */
int hk_str2d(const char *s, size_t len, double *out);
/* Parse a long double as Redis's string2ld does (INCRBYFLOAT,
 * HINCRBYFLOAT, timeouts): strtold over the whole buffer, no leading
 * space, no overflow, NaN rejected; "inf"/"-inf" accepted (the callers
 * refuse an infinite result or timeout with their own errors). */
int hk_str2ld(const char *s, size_t len, long double *out);

/* Write v in decimal into buf (at least HK_LONG_STR_SIZE bytes), return length. */
int hk_ll2str(char *buf, long long v);
int hk_ull2str(char *buf, unsigned long long v);
/* Number of decimal digits of v (for reply headers). */
int hk_digits10(unsigned long long v);

/* Shortest decimal form of d that reads back as d; "inf", "-inf", "nan". */
int hk_d2str(char *buf, size_t size, double d);
/* Human form of a long double for INCRBYFLOAT: fixed notation, 17 digits,
 * trailing zeros removed. */
int hk_ld2str(char *buf, size_t size, long double d);

/* Byte-wise order of two strings (memcmp, the shorter first on a tie):
 * <0, 0 or >0. */
int hk_bytes_cmp(const char *a, size_t alen, const char *b, size_t blen);

/* Glob match as KEYS/SCAN MATCH do: * ? [set] [^set] [a-z] and \ escapes. */
int hk_globmatch(const char *pat, size_t plen, const char *str, size_t slen, int nocase);

/* Case-insensitive compare of a buffer against a NUL-terminated word. */
int hk_eqi(const char *s, size_t len, const char *word);

/* Monotonic and wall clocks. */
long long hk_mstime(void);
long long hk_ustime(void);
long long hk_monotonic_us(void);
long long hk_monotonic_ns(void);

/* A cheap monotonic clock in nanoseconds for timing every command (INFO
 * commandstats): two vDSO clock_gettime calls per command cost ~8% of a
 * pipelined PING. On x86-64 it reads the time-stamp counter, but only when
 * the kernel itself uses the TSC as its clock source (so the counter is
 * invariant and synchronised across CPUs); hk_clock_init calibrates it once
 * against CLOCK_MONOTONIC. Elsewhere, and before hk_clock_init, it is
 * hk_monotonic_ns. Meant for short intervals on one thread. */
void hk_clock_init(void);
/* What hk_clock_ns reads, for INFO's monotonic_clock field. */
void hk_clock_describe(char *buf, size_t size);
extern uint64_t hk_tsc_mult; /* ns per TSC tick, 32.32 fixed point; 0: no TSC */
static inline long long hk_clock_ns(void) {
#if defined(__x86_64__)
    if (hk_tsc_mult) return (long long)(((unsigned __int128)__builtin_ia32_rdtsc() * hk_tsc_mult) >> 32);
#endif
    return hk_monotonic_ns();
}

/* Fill buf with n random bytes from the kernel. */
void hk_random_bytes(void *buf, size_t n);
/* Random hex id of len characters (plus NUL) into buf. */
void hk_random_hex(char *buf, size_t len);
/* Per-thread xorshift generator, its output fully mixed (every bit
 * depends on the whole state), so draws reduced modulo small numbers are
 * independent of each other. */
uint64_t hk_rand64(void);

#endif
