/* status.h - result codes of the value and keyspace layers, and the one
 * table that turns a code into Redis's error text.
 *
 * Data-type functions (src/types/) and store helpers return one of these
 * instead of writing replies; a command handler passes a failure to
 * reply_status(), which looks the text up here. Every Redis error string
 * that more than one place can produce lives in this table, byte for byte
 * as Redis sends it (clients match on them). Texts that need a parameter
 * (the command name of "wrong number of arguments") have a code too and a
 * printf format; reply_status() fills in the command's name. This file
 * knows nothing of clients or replies. */
#ifndef HK_STATUS_H
#define HK_STATUS_H

enum hk_status {
    HK_OK = 0,
    /* Generic. */
    HK_ERR_SYNTAX,
    HK_ERR_WRONGTYPE,
    HK_ERR_NOT_INT,
    HK_ERR_NOT_FLOAT,
    HK_ERR_OUT_OF_RANGE,     /* "value is out of range" */
    HK_ERR_NOT_POSITIVE,     /* "value is out of range, must be positive" */
    HK_ERR_OVERFLOW,         /* increment or decrement would overflow */
    HK_ERR_NAN_INF,          /* increment would produce NaN or Infinity */
    HK_ERR_NO_KEY,
    HK_ERR_SAME_OBJECT,
    HK_ERR_DB_INDEX,
    HK_ERR_INDEX_RANGE,      /* LSET / LINDEX style "index out of range" */
    HK_ERR_STRING_TOO_LONG,
    HK_ERR_ARITY,            /* format: command full name */
    HK_ERR_INVALID_EXPIRE,   /* format: command full name */
    /* Counts and key lists. */
    HK_ERR_NUMKEYS,          /* numkeys should be greater than 0 */
    HK_ERR_NUMKEYS_ARGS,     /* Number of keys can't be greater than number of args */
    HK_ERR_COUNT_POSITIVE,   /* count should be greater than 0 */
    HK_ERR_LIMIT_NEGATIVE,
    /* Blocking timeouts. */
    HK_ERR_TIMEOUT_FLOAT,
    HK_ERR_TIMEOUT_INT,
    HK_ERR_TIMEOUT_NEGATIVE,
    HK_ERR_TIMEOUT_RANGE,
    /* Hashes. */
    HK_ERR_HASH_NOT_INT,
    HK_ERR_HASH_NOT_FLOAT,
    HK_ERR_FIELDS_MISSING,   /* Mandatory argument FIELDS is missing ... */
    HK_ERR_NUMFIELDS_ARGS,   /* The `numfields` parameter must match ... */
    HK_ERR_NUMFIELDS,        /* Number of fields must be a positive integer */
    HK_ERR_NUMFIELDS_HFE,    /* Parameter `numFields` should be greater than 0 (HEXPIRE family) */
    HK_ERR_EXPIRE_NEGATIVE,  /* invalid expire time, must be >= 0 */
    /* Sorted sets. */
    HK_ERR_MINMAX_FLOAT,
    HK_ERR_MINMAX_LEX,
    HK_ERR_NAN_SCORE,
    HK_ERR_WEIGHT_FLOAT,
    HK_ERR_ZSET_DECODE,
    /* Bits. */
    HK_ERR_BIT_OFFSET,
    HK_ERR_BIT_VALUE,
    /* Lists. */
    HK_ERR_INT_RANGE,        /* an integer outside a C int (database indexes) */
    HK_ERR_LONG_RANGE,       /* an integer outside [-LLONG_MAX, LLONG_MAX] (LREM count, LPOS RANK, *RANDMEMBER counts) */
    HK_ERR_RANK_ZERO,
    HK_ERR_COUNT_NEGATIVE,   /* LPOS COUNT */
    HK_ERR_MAXLEN_NEGATIVE,  /* LPOS MAXLEN */
    /* Connection. */
    HK_ERR_NOAUTH,
    HK_ERR_UNBLOCKED,
    /* Locking (nested execution that cannot take a shard safely). */
    HK_ERR_LOCK_CONFLICT,
    HK_STATUS_COUNT
};

/* Redis's error text for st, code word first and without the leading
 * '-' ("ERR syntax error"). For HK_ERR_ARITY and HK_ERR_INVALID_EXPIRE it
 * is a printf format taking the command's full name. HK_OK and unknown
 * codes give "ERR unknown error". */
const char *hk_status_text(int st);
/* Whether hk_status_text(st) is a format that wants the command name. */
int hk_status_wants_name(int st);

#endif
