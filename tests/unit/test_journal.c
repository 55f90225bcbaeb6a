/* test_journal.c - unit tests of the journal (src/server/journal.c): the
 * merge of several worker streams keeps, for every key, the order in
 * which the writes ran, including records that hold several shards or
 * all of them; databases are announced with SELECT; the per-stream limit
 * reports lost records instead of stalling. Writers here are threads that
 * lock their shards, bump a per-key counter, append, and unlock, as the
 * execution core does. */
#include "core/alloc.h"
#include "server/journal.h"
#include "store/db.h"
#include "store/lockset.h"
#include "test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSHARDS 16
#define NKEYS 40
#define WRITERS 4
#define ROUNDS 3000

/* Per-key execution counter, protected by the key's shard lock. */
static unsigned long seq_of[NKEYS];
static unsigned key_shard[NKEYS];

static void lock_all(struct lockset *ls) {
    ls_init(ls);
    ls_add_all(ls);
    ls_acquire(ls);
}

/* Start recording as DEBUG JOURNAL START does: the reader lock, then
 * every shard. */
static void start(size_t limit) {
    struct lockset all;
    journal_reader_lock();
    lock_all(&all);
    journal_start(limit);
    ls_release(&all);
    journal_reader_unlock();
    ls_destroy(&all);
}

/* A record naming the keys it wrote and each one's counter:
 * *2 $1 W $<n> "k1=s1,k2=s2," */
static void append_record(int w, struct lockset *ls, const int *keys, int nk) {
    char body[512];
    int bl = 0;
    for (int i = 0; i < nk; i++) bl += snprintf(body + bl, sizeof(body) - (size_t)bl, "%d=%lu,", keys[i], ++seq_of[keys[i]]);
    char rec[600];
    int rl = snprintf(rec, sizeof(rec), "*2\r\n$1\r\nW\r\n$%d\r\n%s\r\n", bl, body);
    journal_append(w, ls, 0, 0, 0, rec, (size_t)rl);
}

static void *writer_main(void *arg) {
    int w = (int)(uintptr_t)arg;
    unsigned seed = (unsigned)w * 7919u + 1;
    struct lockset ls;
    ls_init(&ls);
    for (int r = 0; r < ROUNDS; r++) {
        int keys[3], nk = 1 + rand_r(&seed) % 3;
        ls_clear(&ls);
        int all = rand_r(&seed) % 200 == 0;
        for (int i = 0; i < nk; i++) {
            keys[i] = rand_r(&seed) % NKEYS;
            /* No key twice in one record. */
            for (int j = 0; j < i; j++)
                if (keys[j] == keys[i]) keys[i] = (keys[i] + 1) % NKEYS, j = -1;
            ls_add(&ls, key_shard[keys[i]]);
        }
        if (all) ls_add_all(&ls);
        ls_acquire(&ls);
        append_record(w, &ls, keys, nk);
        ls_release(&ls);
    }
    ls_destroy(&ls);
    return NULL;
}

/* Walk the merged RESP: every W record's counters must continue each key's
 * sequence exactly (1, 2, 3, ... per key). */
static void check_order(const char *p, size_t len, unsigned long *next, long *records) {
    const char *end = p + len;
    while (p < end) {
        if (strncmp(p, "*2\r\n$6\r\nSELECT\r\n", 16) == 0) {
            p = strstr(p + 16, "\r\n") + 2; /* $<n> */
            p = strstr(p, "\r\n") + 2;      /* the index */
            continue;
        }
        CHECK(strncmp(p, "*2\r\n$1\r\nW\r\n$", 12) == 0);
        if (strncmp(p, "*2\r\n$1\r\nW\r\n$", 12) != 0) return;
        p += 12;
        int bl = atoi(p);
        p = strstr(p, "\r\n") + 2;
        const char *q = p, *qe = p + bl;
        while (q < qe) {
            int key = atoi(q);
            q = strchr(q, '=') + 1;
            unsigned long s = strtoul(q, NULL, 10);
            q = strchr(q, ',') + 1;
            CHECK_EQ_LL(s, next[key]);
            next[key] = s + 1;
        }
        p = qe + 2;
        (*records)++;
    }
}

static void test_merge_keeps_per_key_order(void) {
    for (int i = 0; i < NKEYS; i++) {
        char k[16];
        int n = snprintf(k, sizeof(k), "k%d", i);
        key_shard[i] = ks_shard_of(k, (size_t)n);
        seq_of[i] = 0;
    }
    start(64 * 1024 * 1024);
    unsigned long next[NKEYS];
    for (int i = 0; i < NKEYS; i++) next[i] = 1;
    long records = 0;
    pthread_t th[WRITERS];
    for (int w = 0; w < WRITERS; w++) pthread_create(&th[w], NULL, writer_main, (void *)(uintptr_t)w);
    /* Read while they write, too: a partial merge must be consistent. */
    for (int i = 0; i < 20; i++) {
        char *out;
        size_t len;
        CHECK_EQ_LL(journal_read(&out, &len), 0);
        check_order(out ? out : "", len, next, &records);
        hk_free(out);
    }
    for (int w = 0; w < WRITERS; w++) pthread_join(th[w], NULL);
    char *out;
    size_t len;
    CHECK_EQ_LL(journal_read(&out, &len), 0);
    check_order(out ? out : "", len, next, &records);
    hk_free(out);
    CHECK_EQ_LL(records, (long)WRITERS * ROUNDS);
    for (int i = 0; i < NKEYS; i++) CHECK_EQ_LL(next[i] - 1, seq_of[i]);
}

static void test_select_between_databases(void) {
    struct lockset all;
    start(1024 * 1024);
    lock_all(&all);
    const char *a = "*1\r\n$1\r\nA\r\n", *b = "*1\r\n$1\r\nB\r\n";
    journal_append(0, NULL, 3, 2, 2, a, strlen(a));
    journal_append(1, NULL, 3, 5, 5, b, strlen(b));
    journal_append(0, NULL, 3, 5, 5, a, strlen(a));
    ls_release(&all);
    ls_destroy(&all);
    char *out;
    size_t len;
    CHECK_EQ_LL(journal_read(&out, &len), 0);
    CHECK_MEM(out, len,
              "*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*1\r\n$1\r\nA\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n5\r\n*1\r\n$1\r\nB\r\n"
              "*1\r\n$1\r\nA\r\n");
    hk_free(out);
}

static void test_limit_reports_loss(void) {
    struct lockset all;
    start(256);
    lock_all(&all);
    char big[200];
    memset(big, 'x', sizeof(big));
    journal_append(0, NULL, 1, 0, 0, big, sizeof(big));
    journal_append(0, NULL, 1, 0, 0, big, sizeof(big));
    ls_release(&all);
    ls_destroy(&all);
    char *out;
    size_t len;
    CHECK_EQ_LL(journal_read(&out, &len), -1);
    hk_free(out);
    /* Starting again clears the condition. */
    start(1024);
    lock_all(&all);
    journal_stop();
    ls_release(&all);
    ls_destroy(&all);
    CHECK_EQ_LL(journal_read(&out, &len), 0);
    CHECK_EQ_LL(len, 0);
    hk_free(out);
}

int main(void) {
    ks_init(16, NSHARDS);
    journal_init(WRITERS);
    TEST_RUN(test_merge_keeps_per_key_order);
    TEST_RUN(test_select_between_databases);
    TEST_RUN(test_limit_reports_loss);
    return TEST_REPORT();
}
