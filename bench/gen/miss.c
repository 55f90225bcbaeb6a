/* miss.c - set-on-miss helpers of hotkv-bench; see miss.h. */
#include "miss.h"

#include "rscan.h"

#include <stdio.h>
#include <stdlib.h>

void keyq_push(struct keyq *q, uint64_t key) {
    if (q->count == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 16;
        uint64_t *v = malloc(cap * sizeof(*v));
        if (!v) {
            fprintf(stderr, "hotkv-bench: out of memory\n");
            exit(1);
        }
        for (size_t i = 0; i < q->count; i++) v[i] = q->v[(q->head + i) % q->cap];
        free(q->v);
        q->v = v;
        q->head = 0;
        q->cap = cap;
    }
    q->v[(q->head + q->count) % q->cap] = key;
    q->count++;
}

uint64_t keyq_pop(struct keyq *q) {
    uint64_t k = q->v[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return k;
}

void keyq_free(struct keyq *q) {
    free(q->v);
    q->v = NULL;
    q->head = q->count = q->cap = 0;
}

enum miss_kind miss_classify(const char *p, size_t len, char type) {
    if (type == '-' || type == '!') return MISS_ERR;
    return rscan_is_nil(p, len) ? MISS_NIL : MISS_HIT;
}

double miss_hit_ratio(uint64_t hits, uint64_t misses) {
    return hits + misses ? (double)hits / (double)(hits + misses) : -1;
}

void miss_batch(size_t pending, size_t pipeline, uint64_t quota, size_t *nmiss, size_t *nnew) {
    *nmiss = pending < pipeline ? pending : pipeline;
    size_t room = pipeline - *nmiss;
    *nnew = quota < (uint64_t)room ? (size_t)quota : room;
}
