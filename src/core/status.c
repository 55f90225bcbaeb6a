/* status.c - the status-to-error-text table; see status.h. */
#include "status.h"

static const char *const texts[HK_STATUS_COUNT] = {
    [HK_ERR_SYNTAX] = "ERR syntax error",
    [HK_ERR_WRONGTYPE] = "WRONGTYPE Operation against a key holding the wrong kind of value",
    [HK_ERR_NOT_INT] = "ERR value is not an integer or out of range",
    [HK_ERR_NOT_FLOAT] = "ERR value is not a valid float",
    [HK_ERR_OUT_OF_RANGE] = "ERR value is out of range",
    [HK_ERR_NOT_POSITIVE] = "ERR value is out of range, must be positive",
    [HK_ERR_OVERFLOW] = "ERR increment or decrement would overflow",
    [HK_ERR_NAN_INF] = "ERR increment would produce NaN or Infinity",
    [HK_ERR_NO_KEY] = "ERR no such key",
    [HK_ERR_SAME_OBJECT] = "ERR source and destination objects are the same",
    [HK_ERR_DB_INDEX] = "ERR DB index is out of range",
    [HK_ERR_INDEX_RANGE] = "ERR index out of range",
    [HK_ERR_STRING_TOO_LONG] = "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
    [HK_ERR_ARITY] = "ERR wrong number of arguments for '%s' command",
    [HK_ERR_INVALID_EXPIRE] = "ERR invalid expire time in '%s' command",
    [HK_ERR_NUMKEYS] = "ERR numkeys should be greater than 0",
    [HK_ERR_NUMKEYS_ARGS] = "ERR Number of keys can't be greater than number of args",
    [HK_ERR_COUNT_POSITIVE] = "ERR count should be greater than 0",
    [HK_ERR_LIMIT_NEGATIVE] = "ERR LIMIT can't be negative",
    [HK_ERR_TIMEOUT_FLOAT] = "ERR timeout is not a float or out of range",
    [HK_ERR_TIMEOUT_INT] = "ERR timeout is not an integer or out of range",
    [HK_ERR_TIMEOUT_NEGATIVE] = "ERR timeout is negative",
    [HK_ERR_TIMEOUT_RANGE] = "ERR timeout is out of range",
    [HK_ERR_HASH_NOT_INT] = "ERR hash value is not an integer",
    [HK_ERR_HASH_NOT_FLOAT] = "ERR hash value is not a float",
    [HK_ERR_FIELDS_MISSING] = "ERR Mandatory argument FIELDS is missing or not at the right position",
    [HK_ERR_NUMFIELDS_ARGS] = "ERR The `numfields` parameter must match the number of arguments",
    [HK_ERR_NUMFIELDS] = "ERR Number of fields must be a positive integer",
    [HK_ERR_NUMFIELDS_HFE] = "ERR Parameter `numFields` should be greater than 0",
    [HK_ERR_EXPIRE_NEGATIVE] = "ERR invalid expire time, must be >= 0",
    [HK_ERR_MINMAX_FLOAT] = "ERR min or max is not a float",
    [HK_ERR_MINMAX_LEX] = "ERR min or max not valid string range item",
    [HK_ERR_NAN_SCORE] = "ERR resulting score is not a number (NaN)",
    [HK_ERR_WEIGHT_FLOAT] = "ERR weight value is not a float",
    [HK_ERR_ZSET_DECODE] = "ERR could not decode requested zset member",
    [HK_ERR_BIT_OFFSET] = "ERR bit offset is not an integer or out of range",
    [HK_ERR_BIT_VALUE] = "ERR bit is not an integer or out of range",
    [HK_ERR_INT_RANGE] = "ERR value is out of range, value must between -2147483648 and 2147483647",
    [HK_ERR_LONG_RANGE] = "ERR value is out of range, value must between -9223372036854775807 and "
                          "9223372036854775807",
    [HK_ERR_RANK_ZERO] = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
                         "negative to start from the end of the list",
    [HK_ERR_COUNT_NEGATIVE] = "ERR COUNT can't be negative",
    [HK_ERR_MAXLEN_NEGATIVE] = "ERR MAXLEN can't be negative",
    [HK_ERR_NOAUTH] = "NOAUTH Authentication required.",
    [HK_ERR_UNBLOCKED] = "UNBLOCKED client unblocked via CLIENT UNBLOCK",
    [HK_ERR_LOCK_CONFLICT] = "ERR command needs a keyspace shard that the running transaction or script does not "
                             "hold and cannot take safely",
};

const char *hk_status_text(int st) {
    if (st <= HK_OK || st >= HK_STATUS_COUNT || !texts[st]) return "ERR unknown error";
    return texts[st];
}

int hk_status_wants_name(int st) { return st == HK_ERR_ARITY || st == HK_ERR_INVALID_EXPIRE; }
