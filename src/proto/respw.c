/* respw.c - RESP written into a growable buffer (see respw.h). */
#include "respw.h"

#include "../core/util.h"

void respw_header(struct hk_buf *b, char type, long long n, size_t grow) {
    char head[32];
    head[0] = type;
    int l = hk_ll2str(head + 1, n);
    head[1 + l] = '\r';
    head[2 + l] = '\n';
    hk_buf_add(b, head, (size_t)l + 3, grow);
}

void respw_bulk(struct hk_buf *b, const void *p, size_t n, size_t grow) {
    respw_header(b, '$', (long long)n, grow);
    hk_buf_add(b, p, n, grow);
    hk_buf_add(b, "\r\n", 2, grow);
}

void respw_bulk_ll(struct hk_buf *b, long long v, size_t grow) {
    char num[HK_LONG_STR_SIZE];
    int l = hk_ll2str(num, v);
    respw_bulk(b, num, (size_t)l, grow);
}

void respw_cmd(struct hk_buf *b, int argc, const char *const *argv, const size_t *len, size_t grow) {
    respw_header(b, '*', argc, grow);
    for (int i = 0; i < argc; i++) respw_bulk(b, argv[i], len[i], grow);
}
