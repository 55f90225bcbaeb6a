/* string_lcs.c - LCS, the longest common subsequence of two string
 * values, with Redis's LEN, IDX, MINMATCHLEN and WITHMATCHLEN forms and
 * its bound on the transient table (proto-max-bulk-len). Part of the
 * string family (string.c); it only reads, and runs with both keys'
 * shards locked by the execution core. */
#include "../core/alloc.h"
#include "../core/util.h"
#include "../server/config.h"
#include "cmds.h"
#include "cmdutil.h"

#include <stdint.h>
#include <string.h>

/* Bytes of the string at argv[i] for LCS: "" when absent. Returns 0 when
 * the key holds another type. nb keeps an integer's digits. */
static int lcs_operand(struct cmd_ctx *c, int i, char *nb, const char **p, size_t *len) {
    struct keyref k;
    key_of(c, i, &k);
    struct kv *e = lookup_read(c, &k);
    *p = "";
    *len = 0;
    if (!e) return 1;
    if (kv_type(e) != OBJ_STRING) return 0;
    kv_str(e, nb, p, len);
    return 1;
}

/* LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]. The classic
 * dynamic programming table (uint32 cells, bounded by proto-max-bulk-len)
 * is walked back from the end; matching ranges are reported from the end
 * of the strings towards the start, as Redis reports them. */
void cmd_lcs(struct cmd_ctx *c) {
    char nba[HK_LONG_STR_SIZE], nbb[HK_LONG_STR_SIZE];
    const char *a, *b;
    size_t alen, blen;
    int oka = lcs_operand(c, 1, nba, &a, &alen);
    int okb = lcs_operand(c, 2, nbb, &b, &blen);
    if (!oka || !okb) {
        reply_error(c, "ERR The specified keys must contain string values");
        return;
    }
    int getlen = 0, getidx = 0, withmatchlen = 0;
    long long minmatchlen = 0;
    for (int j = 3; j < c->argc; j++) {
        const hk_slice *o = &c->argv[j];
        if (arg_is(o, "IDX")) {
            getidx = 1;
        } else if (arg_is(o, "LEN")) {
            getlen = 1;
        } else if (arg_is(o, "WITHMATCHLEN")) {
            withmatchlen = 1;
        } else if (arg_is(o, "MINMATCHLEN") && j + 1 < c->argc) {
            if (!arg_ll_or_reply(c, &c->argv[j + 1], &minmatchlen, NULL)) return;
            if (minmatchlen < 0) minmatchlen = 0;
            j++;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (getlen && getidx) {
        reply_error(c, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    if (alen >= UINT32_MAX - 1 || blen >= UINT32_MAX - 1) {
        reply_error(c, "ERR String too long for LCS");
        return;
    }
    unsigned long long cells = (unsigned long long)(alen + 1) * (blen + 1);
    if (cells > (unsigned long long)CFG(proto_max_bulk_len) / sizeof(uint32_t)) {
        reply_error(c, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
        return;
    }
    uint32_t *t = hk_malloc((size_t)cells * sizeof(uint32_t));
    size_t w = blen + 1;
#define LCS_AT(i, j) t[(size_t)(i) * w + (j)]
    for (size_t i = 0; i <= alen; i++) {
        for (size_t j = 0; j <= blen; j++) {
            if (i == 0 || j == 0) LCS_AT(i, j) = 0;
            else if (a[i - 1] == b[j - 1]) LCS_AT(i, j) = LCS_AT(i - 1, j - 1) + 1;
            else LCS_AT(i, j) = LCS_AT(i - 1, j) > LCS_AT(i, j - 1) ? LCS_AT(i - 1, j) : LCS_AT(i, j - 1);
        }
    }
    uint32_t total = LCS_AT(alen, blen);
    if (getlen) {
        hk_free(t);
        reply_int(c, total);
        return;
    }
    char *res = hk_malloc(total + 1);
    void *h = NULL;
    long long nranges = 0;
    if (getidx) {
        reply_map(c, 2);
        reply_bulk_cstr(c, "matches");
        h = reply_defer(c);
    }
    /* Walk back from the end. A range is open while matches follow each
     * other on the diagonal; it is closed by a mismatch step or by
     * reaching the first byte of either string. */
    size_t i = alen, j = blen, pos = total;
    int open = 0;
    size_t as = 0, ae = 0, bs = 0, be = 0;
    while (i > 0 && j > 0) {
        int emit = 0;
        if (a[i - 1] == b[j - 1]) {
            res[--pos] = a[i - 1];
            if (open && as == i && bs == j) {
                as--;
                bs--;
            } else {
                open = 1;
                as = ae = i - 1;
                bs = be = j - 1;
            }
            if (as == 0 || bs == 0) emit = 1;
            i--;
            j--;
        } else {
            if (LCS_AT(i - 1, j) > LCS_AT(i, j - 1)) i--;
            else j--;
            if (open) emit = 1;
        }
        if (emit) {
            long long mlen = (long long)(ae - as + 1);
            if (getidx && (minmatchlen == 0 || mlen >= minmatchlen)) {
                reply_array(c, 2 + withmatchlen);
                reply_array(c, 2);
                reply_int(c, (long long)as);
                reply_int(c, (long long)ae);
                reply_array(c, 2);
                reply_int(c, (long long)bs);
                reply_int(c, (long long)be);
                if (withmatchlen) reply_int(c, mlen);
                nranges++;
            }
            open = 0;
        }
    }
#undef LCS_AT
    if (getidx) {
        reply_fill_array(c, h, nranges);
        reply_bulk_cstr(c, "len");
        reply_int(c, total);
    } else {
        reply_bulk(c, res, total);
    }
    hk_free(res);
    hk_free(t);
}
