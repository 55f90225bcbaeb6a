/* tmpl.h - request templates of the load generator.
 *
 * A template is a command line in resp-benchmark's syntax: words separated
 * by spaces (a word may be "double quoted" to hold spaces), each word literal
 * text mixed with placeholders:
 *   {key uniform N}   key_%010d with the number uniform in [0, N)
 *   {key sequence N}  0, 1, ... N-1, 0, ... shared by every thread, so a
 *                     preload of N requests writes every key once
 *   {key zipfian N}   Zipf distributed, exponent 1.03, number 0 the hottest
 *   {value N}         N random printable bytes
 *   {rand N}          a decimal integer uniform in [0, N)
 *   {key last}        the key number drawn last in this request (by an
 *                     earlier {key ...} of it); in a template parsed with
 *                     TMPL_KEY_GIVEN it may come first and then names the
 *                     key the caller gives (tmpl_ctx.key): the key of the
 *                     GET that missed, for hotkv-bench --miss
 *   {range N W}       two arguments a and a+W, a uniform in [0, N-W)
 *   {conn}            the number of the connection sending the request
 *                     (0 .. connections-1 over all threads), e.g. a consumer
 *                     name per connection: "XREADGROUP GROUP g c{conn} ..."
 *   {reply id}        a stream entry id taken from an earlier reply on the
 *                     same connection (the caller keeps them: tmpl_ctx), or
 *                     0-0 when there is none, e.g. "XACK s g {reply id}"
 * ({range} expands to two arguments, so it must be a word of its own.)
 * A bare ";" word separates commands: "MULTI ; SET {key uniform 10} x ;
 * GET {key last} ; EXEC" is one request of four commands, written
 * together and complete when all four replies are in (tmpl_replies).
 * tmpl_gen appends one RESP request to a growable buffer; it reads the
 * template only (the sequence counters are atomics), so threads share a
 * template and each bring their own random state. */
#ifndef HB_TMPL_H
#define HB_TMPL_H

#include <stddef.h>
#include <stdint.h>

struct gbuf {
    char *p;
    size_t len, cap;
};

void gbuf_reserve(struct gbuf *b, size_t more);
void gbuf_append(struct gbuf *b, const void *p, size_t n);
void gbuf_free(struct gbuf *b);

/* xoshiro256** state; one per thread. */
struct rng {
    uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, n), n > 0. */
uint64_t rng_below(struct rng *r, uint64_t n);
/* Uniform in [0, 1). */
double rng_double(struct rng *r);

/* Zipf sampler over ranks 1..n with exponent s > 0 (rejection-inversion,
 * constant time per sample, no table). */
struct zipf {
    uint64_t n;
    double s, h_x1, h_n, cut;
};

void zipf_init(struct zipf *z, uint64_t n, double s);
uint64_t zipf_sample(const struct zipf *z, struct rng *r);

struct tmpl;

/* Parse src. On error returns NULL and writes a message into err. */
struct tmpl *tmpl_parse(const char *src, char *err, size_t errlen);
/* tmpl_parse with flags: TMPL_KEY_GIVEN lets {key last} come before any
 * {key ...}; it then repeats the key number of tmpl_ctx.key. */
#define TMPL_KEY_GIVEN 1
struct tmpl *tmpl_parse_flags(const char *src, int flags, char *err, size_t errlen);
void tmpl_free(struct tmpl *t);
/* The template text as given, and its first word (the command name). */
const char *tmpl_source(const struct tmpl *t);
const char *tmpl_command(const struct tmpl *t);
/* Commands in a request, so replies to wait for: 1, or the length of a
 * ";" sequence. */
int tmpl_replies(const struct tmpl *t);
/* Whether the template has a {reply id}: then the caller should collect
 * ids from replies (rscan_find_id) and hand one to each request. */
int tmpl_uses_reply_id(const struct tmpl *t);
/* Whether the template draws a key number ({key uniform|sequence|zipfian
 * ...}), so that tmpl_gen_ctx has one to return. */
int tmpl_draws_key(const struct tmpl *t);

/* What the per-connection placeholders expand to in one request. */
struct tmpl_ctx {
    uint64_t conn;               /* {conn} */
    const char *id;              /* {reply id}; NULL or idlen 0: "0-0" */
    size_t idlen;
    int has_key;                 /* TMPL_KEY_GIVEN: {key last} before any {key ...} */
    uint64_t key;                /*   repeats this key number */
};

/* Append one request (a RESP array of bulk strings per command) to out.
 * tmpl_gen is tmpl_gen_ctx with {conn} 0 and {reply id} 0-0. tmpl_gen_ctx
 * returns the key number drawn last in the request (what a {key last} at
 * its end would repeat; the given key, or 0, when it draws none). */
void tmpl_gen(const struct tmpl *t, struct rng *r, struct gbuf *out);
uint64_t tmpl_gen_ctx(const struct tmpl *t, struct rng *r, struct gbuf *out, const struct tmpl_ctx *ctx);

#endif
