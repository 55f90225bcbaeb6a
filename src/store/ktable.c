/* ktable.c - the keyspace table's functions; see ktable.h. */
#define KT_INSTANTIATE
#include "ktable.h"

#include "../core/alloc.h"

#include <string.h>

#include "../core/htable_impl.h"
