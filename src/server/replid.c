/* replid.c - the replication ID; see replid.h. Read by INFO on any worker
 * and changed by DEBUG CHANGE-REPL-ID on any worker: replid_lock guards it
 * (a leaf lock, never held while taking another). */
#include "replid.h"

#include "../core/util.h"

#include <pthread.h>
#include <string.h>

static pthread_mutex_t replid_lock = PTHREAD_MUTEX_INITIALIZER;
static char replid[REPLID_LEN + 1];

void replid_get(char out[REPLID_LEN + 1]) {
    pthread_mutex_lock(&replid_lock);
    if (!replid[0]) hk_random_hex(replid, REPLID_LEN);
    memcpy(out, replid, REPLID_LEN + 1);
    pthread_mutex_unlock(&replid_lock);
}

void replid_change(void) {
    pthread_mutex_lock(&replid_lock);
    hk_random_hex(replid, REPLID_LEN);
    pthread_mutex_unlock(&replid_lock);
}
