/* fuzz_resp.c - libFuzzer target for the RESP request parser
 * (src/proto/resp.c).
 *
 * The input's first two bytes choose the parser limits and a seed for the
 * points at which the rest is split; the rest is the byte stream a client
 * sent. The stream is parsed twice, once whole and once fed in growing
 * prefixes as a slow network would deliver it, and both runs must yield the
 * same requests. Checked on every request: argument slices lie inside the
 * consumed bytes, the position only moves forward, `need` is beyond what
 * was available, and an error has a message. ASan catches reads outside the
 * exact-size buffer; LeakSanitizer catches argument arrays not freed. Bit 3
 * of the first byte also runs resp_split_line (the config file splitter) on
 * the input alone. This is not a test of dispatch or of the server's
 * reaction to errors. */
#include "../src/proto/resp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REQS 256

struct outcome {
    int nreq;
    int status[MAX_REQS];
    int argc[MAX_REQS];
    uint64_t digest[MAX_REQS]; /* of the argument bytes and lengths */
};

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

/* Parse `data` as a stream of requests. With split != 0 the parser sees the
 * stream in prefixes that grow by pseudo-random steps. */
static void run(const uint8_t *data, size_t size, const struct resp_limits *lim, uint32_t split,
                struct outcome *out) {
    /* An exact-size copy: the parser writes into it (inline unescaping) and
     * any read past the end is an ASan error. */
    char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    struct resp_req r;
    resp_req_init(&r);
    size_t base = 0;
    uint32_t rnd = split | 1;
    memset(out, 0, sizeof(*out));
    size_t avail = split ? 0 : size - base;
    while (base < size && out->nreq < MAX_REQS) {
        size_t left = size - base;
        if (split) {
            rnd = rnd * 1103515245u + 12345u;
            size_t step = (rnd >> 16) % 7 == 0 ? (rnd >> 8) % 300 : (rnd >> 16) % 4;
            avail += step;
            if (avail > left) avail = left;
        } else {
            avail = left;
        }
        size_t before = r.pos;
        enum resp_status st = resp_parse(&r, buf + base, avail, lim);
        if (r.pos < before) abort(); /* the position never goes back */
        if (r.pos > avail) abort();
        if (st == RESP_MORE) {
            if (r.need && r.need <= avail) abort(); /* need must ask for more */
            if (avail == left) break;               /* truncated stream */
            continue;
        }
        out->status[out->nreq] = st;
        if (st == RESP_ERR) {
            if (!r.err[0]) abort();
            out->nreq++;
            break;
        }
        if (r.argc < 0 || r.pos == 0) abort();
        uint64_t h = 0;
        for (int i = 0; i < r.argc; i++) {
            if (r.off[i] > r.pos || r.len[i] > r.pos - r.off[i]) abort();
            h = mix(h, r.len[i]);
            for (size_t j = 0; j < r.len[i]; j++) h = mix(h, (unsigned char)buf[base + r.off[i] + j]);
        }
        out->argc[out->nreq] = r.argc;
        out->digest[out->nreq] = h;
        out->nreq++;
        base += r.pos;
        avail -= r.pos;
        resp_req_reset(&r);
    }
    resp_req_free(&r);
    free(buf);
}

struct split_check {
    size_t s, e;
    int bad;
};

static void split_push(void *ctx, size_t off, size_t len) {
    struct split_check *k = ctx;
    if (off < k->s || off > k->e || len > k->e - off) k->bad = 1;
}

/* resp_split_line on its own, as the config loader calls it: every
 * argument lies inside the range, and unescaping only shrinks. */
static void check_split(const uint8_t *data, size_t size) {
    char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    struct split_check k = {size / 4, size - size / 4, 0};
    resp_split_line(buf, k.s, k.e, split_push, &k);
    if (k.bad) abort();
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    if (data[0] & 8) check_split(data + 2, size - 2);
    struct resp_limits lim;
    /* Small bulk limits reach the "invalid bulk length" path; the
     * unauthenticated limits are a different code path again. */
    static const long long bulk_limits[4] = {512LL * 1024 * 1024, 64, 1, 0};
    lim.max_bulk = bulk_limits[data[0] & 3];
    lim.authed = (data[0] >> 2) & 1;
    uint32_t seed = (uint32_t)data[1] * 2654435761u + 1;
    data += 2;
    size -= 2;
    static struct outcome whole, split;
    run(data, size, &lim, 0, &whole);
    run(data, size, &lim, seed, &split);
    /* A split stream may stop early only because it was truncated; what
     * both runs produced must agree. */
    int n = whole.nreq < split.nreq ? whole.nreq : split.nreq;
    if (whole.nreq != split.nreq) abort();
    for (int i = 0; i < n; i++) {
        if (whole.status[i] != split.status[i]) abort();
        if (whole.argc[i] != split.argc[i]) abort();
        if (whole.digest[i] != split.digest[i]) abort();
    }
    return 0;
}
