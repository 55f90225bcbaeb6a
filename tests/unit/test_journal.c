/* test_journal.c - unit tests of the journal (src/server/journal.c): the
 * merge of several worker streams keeps, for every key, the order in
 * which the writes ran, including records that hold several shards or
 * all of them; databases are announced with SELECT; the per-stream limit
 * reports lost records instead of stalling; the continuous consumer (the
 * AOF's sink) sees every record once, in order, next to a DEBUG session
 * that starts at a cut; cuts split the records exactly; consumed record
 * counts are what group commit publishes. Writers here are threads that
 * lock their shards, bump a per-key counter, append, and unlock, as the
 * execution core does. */
#include "core/alloc.h"
#include "core/buf.h"
#include "server/journal.h"
#include "store/db.h"
#include "store/lockset.h"
#include "test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The continuous consumer's side: a sink gathering RESP like the AOF does,
 * and whether each record came after a cut. */
struct sink_state {
    struct hk_buf out;
    struct journal_cut *cut;
    long before, after, records;
};

static void test_sink(void *arg, const struct journal_rec *r) {
    struct sink_state *st = arg;
    st->records++;
    if (st->cut) {
        if (journal_after_cut(st->cut, r)) st->after++;
        else st->before++;
    }
    hk_buf_add(&st->out, r->resp, r->len, 4096);
}

static void attach(journal_sink_fn fn, void *arg) {
    struct lockset all;
    journal_reader_lock();
    lock_all(&all);
    journal_attach(fn, arg);
    ls_release(&all);
    journal_reader_unlock();
    ls_destroy(&all);
}

static void test_sink_sees_every_record_in_order(void) {
    for (int i = 0; i < NKEYS; i++) seq_of[i] = 0;
    struct sink_state st = {0};
    attach(test_sink, &st);
    unsigned long next[NKEYS];
    for (int i = 0; i < NKEYS; i++) next[i] = 1;
    long records = 0;
    pthread_t th[WRITERS];
    for (int w = 0; w < WRITERS; w++) pthread_create(&th[w], NULL, writer_main, (void *)(uintptr_t)w);
    for (int i = 0; i < 50; i++) journal_merge();
    for (int w = 0; w < WRITERS; w++) pthread_join(th[w], NULL);
    journal_merge();
    check_order(st.out.p ? st.out.p : "", st.out.len, next, &records);
    CHECK_EQ_LL(records, (long)WRITERS * ROUNDS);
    CHECK_EQ_LL(st.records, (long)WRITERS * ROUNDS);
    /* Every record appended was consumed: the counts group commit uses. */
    uint64_t consumed[WRITERS];
    journal_reader_lock();
    journal_consumed(consumed);
    journal_reader_unlock();
    for (int w = 0; w < WRITERS; w++) CHECK_EQ_LL(consumed[w], journal_recs(w));
    attach(NULL, NULL);
    hk_free(st.out.p);
}

/* Records written while a cut is taken (every shard held, as a snapshot's
 * cut is) fall on one side of it each: the sink counts exactly the ones
 * appended after it as after. */
static _Atomic int cut_stop;

static void *cut_writer(void *arg) {
    int w = (int)(uintptr_t)arg;
    unsigned seed = (unsigned)w + 99;
    struct lockset ls;
    ls_init(&ls);
    while (!atomic_load(&cut_stop)) {
        int k = rand_r(&seed) % NKEYS;
        ls_clear(&ls);
        ls_add(&ls, key_shard[k]);
        ls_acquire(&ls);
        append_record(w, &ls, &k, 1);
        ls_release(&ls);
    }
    ls_destroy(&ls);
    return NULL;
}

static void test_cut_splits_records(void) {
    for (int i = 0; i < NKEYS; i++) seq_of[i] = 0;
    struct journal_cut cut = {0};
    struct sink_state st = {0};
    attach(test_sink, &st);
    atomic_store(&cut_stop, 0);
    pthread_t th[WRITERS];
    for (int w = 0; w < WRITERS; w++) pthread_create(&th[w], NULL, cut_writer, (void *)(uintptr_t)w);
    usleep(20000);
    struct lockset all;
    lock_all(&all);
    /* Every shard held: no writer is between its seq and its append. */
    journal_cut_take(&cut);
    ls_release(&all);
    ls_destroy(&all);
    journal_reader_lock();
    st.cut = &cut;
    journal_reader_unlock();
    usleep(20000);
    atomic_store(&cut_stop, 1);
    for (int w = 0; w < WRITERS; w++) pthread_join(th[w], NULL);
    journal_merge();
    journal_reader_lock();
    CHECK(journal_cut_passed(&cut));
    journal_reader_unlock();
    /* What the sink saw after the cut is exactly what the counters say
     * was written after it: the sum of per-shard seqs past the cut. */
    long after = 0;
    for (unsigned s = 0; s < NSHARDS; s++) after += (long)(ks.shards[s].jseq - cut.seq[s]);
    CHECK_EQ_LL(st.after, after);
    CHECK(st.after > 0);
    attach(NULL, NULL);
    journal_cut_free(&cut);
    hk_free(st.out.p);
}

/* DEBUG JOURNAL START while the sink is attached: the session starts at
 * its cut and the sink keeps everything. */
static void test_debug_session_beside_sink(void) {
    struct sink_state st = {0};
    attach(test_sink, &st);
    struct lockset all;
    lock_all(&all);
    const char *a = "*1\r\n$1\r\nA\r\n", *b = "*1\r\n$1\r\nB\r\n";
    journal_append(0, NULL, 3, 0, 0, a, strlen(a));
    ls_release(&all);
    start(1024 * 1024);
    lock_all(&all);
    journal_append(1, NULL, 3, 0, 0, b, strlen(b));
    ls_release(&all);
    char *out;
    size_t len;
    CHECK_EQ_LL(journal_read(&out, &len), 0);
    CHECK_MEM(out, len, "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*1\r\n$1\r\nB\r\n");
    hk_free(out);
    CHECK_MEM(st.out.p, st.out.len, "*1\r\n$1\r\nA\r\n*1\r\n$1\r\nB\r\n");
    lock_all(&all);
    journal_stop();
    ls_release(&all);
    ls_destroy(&all);
    /* The AOF still records. */
    CHECK(journal_enabled());
    attach(NULL, NULL);
    CHECK(!journal_enabled());
    hk_free(st.out.p);
}

int main(void) {
    ks_init(16, NSHARDS);
    journal_init(WRITERS);
    TEST_RUN(test_merge_keeps_per_key_order);
    TEST_RUN(test_select_between_databases);
    TEST_RUN(test_limit_reports_loss);
    TEST_RUN(test_sink_sees_every_record_in_order);
    TEST_RUN(test_cut_splits_records);
    TEST_RUN(test_debug_session_beside_sink);
    return TEST_REPORT();
}
