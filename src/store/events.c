/* events.c - the keyspace-event table; see events.h. */
#include "events.h"

const struct kev_info kev_info[KEV_COUNT] = {
#define KEV_ROW(id, name, cls, ready) [id] = {name, cls, ready},
    KEV_LIST(KEV_ROW)
#undef KEV_ROW
};
