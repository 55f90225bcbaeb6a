"""List commands: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LINDEX,
LSET, LRANGE, LINSERT, LREM, LTRIM, LPOS, LMOVE, RPOPLPUSH, LMPOP, and the
listpack <-> quicklist conversions driven by list-max-listpack-size.

Replies and error strings are Redis 7.2's, byte for byte; RESP2 and RESP3
null shapes are checked on the wire. A randomized run per node-size setting
compares every command against a Python list, which exercises the quicklist
node splitting, merging and conversion paths."""
import random

import pytest
from resp import Error, Simple

OK = Simple("OK")
SYNTAX = Error("ERR syntax error")
NOT_INT = Error("ERR value is not an integer or out of range")
POSITIVE = Error("ERR value is out of range, must be positive")
WRONGTYPE = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
RANK_ZERO = Error(
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
    "or use negative to start from the end of the list")
RANGE_LONG = Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


def encoding(conn, key):
    return conn.cmd("OBJECT", "ENCODING", key)


def lrange(conn, key):
    return conn.cmd("LRANGE", key, 0, -1)


def push_many(conn, key, items, side="RPUSH"):
    for i in range(0, len(items), 5000):
        conn.cmd(side, key, *items[i:i + 5000])


@pytest.fixture
def limits(conn):
    """Restore the list settings a test changes on the shared server."""
    yield
    assert conn.cmd("CONFIG", "SET", "list-max-listpack-size", "-2") == OK


# ---- push / len / range ---------------------------------------------------------


def test_push_order_and_len(conn):
    assert conn.cmd("RPUSH", "l", "a", "b") == 2
    assert conn.cmd("LPUSH", "l", "x", "y") == 4
    assert lrange(conn, "l") == [b"y", b"x", b"a", b"b"]
    assert conn.cmd("LLEN", "l") == 4
    assert conn.cmd("LLEN", "nokey") == 0
    assert conn.cmd("TYPE", "l") == Simple("list")
    assert encoding(conn, "l") == b"listpack"


def test_pushx(conn):
    assert conn.cmd("LPUSHX", "l", "a") == 0
    assert conn.cmd("RPUSHX", "l", "a", "b") == 0
    assert conn.cmd("EXISTS", "l") == 0
    conn.cmd("RPUSH", "l", "m")
    assert conn.cmd("LPUSHX", "l", "a", "b") == 3
    assert conn.cmd("RPUSHX", "l", "z") == 4
    assert lrange(conn, "l") == [b"b", b"a", b"m", b"z"]


def test_push_arity(conn):
    for c in ("LPUSH", "RPUSH", "LPUSHX", "RPUSHX"):
        assert conn.cmd(c, "l") == arity(c.lower())


def test_integers_and_odd_strings_roundtrip(conn):
    vals = ["0", "-1", "127", "128", "-2048", "65536", str(LLONG_MAX), str(LLONG_MIN), "01", "-0", "+1",
            " 1", "1.5", "", "9223372036854775808", "abc"]
    conn.cmd("RPUSH", "l", *vals)
    assert lrange(conn, "l") == [v.encode() for v in vals]
    for i, v in enumerate(vals):
        assert conn.cmd("LINDEX", "l", i) == v.encode()
        assert conn.cmd("LPOS", "l", v) == i
    # "1" is stored as an integer: it must not match "01" or "+1".
    conn.cmd("RPUSH", "l2", "1")
    assert conn.cmd("LPOS", "l2", "01") is None
    assert conn.cmd("LPOS", "l2", "+1") is None
    assert conn.cmd("LPOS", "l2", "1") == 0


def test_lrange(conn):
    conn.cmd("RPUSH", "l", *"abcdefg")
    cases = [((0, -1), "abcdefg"), ((0, 0), "a"), ((-1, -1), "g"), ((2, 4), "cde"), ((-3, -1), "efg"),
             ((-100, 1), "ab"), ((5, 100), "fg"), ((4, 2), ""), ((7, 10), ""), ((-100, -50), ""),
             ((0, -8), ""), ((-7, -7), "a"), ((LLONG_MIN, LLONG_MAX), "abcdefg")]
    for (s, e), want in cases:
        assert conn.cmd("LRANGE", "l", s, e) == [ch.encode() for ch in want], (s, e)
    assert conn.cmd("LRANGE", "nokey", 0, -1) == []
    assert conn.cmd("LRANGE", "l", "x", 1) == NOT_INT
    assert conn.cmd("LRANGE", "nokey", 0, "1.5") == NOT_INT
    assert conn.cmd("LRANGE", "l", 0) == arity("lrange")


def test_lindex(conn):
    conn.cmd("RPUSH", "l", "a", "b", "c")
    assert conn.cmd("LINDEX", "l", 0) == b"a"
    assert conn.cmd("LINDEX", "l", 2) == b"c"
    assert conn.cmd("LINDEX", "l", -1) == b"c"
    assert conn.cmd("LINDEX", "l", -3) == b"a"
    assert conn.cmd("LINDEX", "l", 3) is None
    assert conn.cmd("LINDEX", "l", -4) is None
    assert conn.cmd("LINDEX", "l", LLONG_MIN) is None
    assert conn.cmd("LINDEX", "nokey", 0) is None
    assert conn.cmd("LINDEX", "l", "x") == NOT_INT
    # The key is checked before the index, as Redis does.
    assert conn.cmd("LINDEX", "nokey", "x") is None
    assert conn.cmd_raw("LINDEX", "l", 10) == b"$-1\r\n"


# ---- pop ----------------------------------------------------------------------------


def test_pop_single(conn):
    conn.cmd("RPUSH", "l", "a", "b", "c")
    assert conn.cmd("LPOP", "l") == b"a"
    assert conn.cmd("RPOP", "l") == b"c"
    assert conn.cmd("LPOP", "l") == b"b"
    assert conn.cmd("EXISTS", "l") == 0
    assert conn.cmd("LPOP", "l") is None
    assert conn.cmd("RPOP", "l") is None


def test_pop_count(conn):
    conn.cmd("RPUSH", "l", *"abcdef")
    assert conn.cmd("LPOP", "l", 2) == [b"a", b"b"]
    assert conn.cmd("RPOP", "l", 2) == [b"f", b"e"]
    assert conn.cmd("LPOP", "l", 0) == []
    assert conn.cmd("RPOP", "l", 100) == [b"d", b"c"]
    assert conn.cmd("EXISTS", "l") == 0
    assert conn.cmd("LPOP", "l", 0) is None
    assert conn.cmd("LPOP", "l", 5) is None


def test_pop_errors(conn):
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("LPOP", "l", -1) == POSITIVE
    assert conn.cmd("RPOP", "l", "x") == POSITIVE
    assert conn.cmd("LPOP", "nokey", -1) == POSITIVE
    assert conn.cmd("LPOP", "l", 1, 2) == arity("lpop")
    assert conn.cmd("RPOP", "l", 1, 2) == arity("rpop")
    assert conn.cmd("LPOP") == arity("lpop")
    assert lrange(conn, "l") == [b"a"]


def test_pop_null_shapes(conn, conn3):
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd_raw("LPOP", "nokey") == b"$-1\r\n"
    assert conn.cmd_raw("LPOP", "nokey", 1) == b"*-1\r\n"
    assert conn.cmd_raw("RPOP", "nokey", 0) == b"*-1\r\n"
    assert conn.cmd_raw("LPOP", "l", 0) == b"*0\r\n"
    assert conn3.cmd_raw("LPOP", "nokey") == b"_\r\n"
    assert conn3.cmd_raw("RPOP", "nokey", 2) == b"_\r\n"
    assert conn3.cmd_raw("LPOP", "l", 0) == b"*0\r\n"
    assert conn3.cmd_raw("LPOP", "l", 1) == b"*1\r\n$1\r\na\r\n"
    assert conn3.cmd_raw("LINDEX", "nokey", 0) == b"_\r\n"
    assert conn3.cmd_raw("LMPOP", 1, "nokey", "LEFT") == b"_\r\n"
    assert conn3.cmd_raw("LPOS", "nokey", "a") == b"_\r\n"
    assert conn3.cmd_raw("LMOVE", "nokey", "d", "LEFT", "LEFT") == b"_\r\n"


# ---- LSET LINSERT LREM LTRIM ---------------------------------------------------------------


def test_lset(conn):
    conn.cmd("RPUSH", "l", "a", "b", "c")
    assert conn.cmd("LSET", "l", 0, "x") == OK
    assert conn.cmd("LSET", "l", -1, "z") == OK
    assert conn.cmd("LSET", "l", 1, "12345") == OK
    assert lrange(conn, "l") == [b"x", b"12345", b"z"]
    assert conn.cmd("LSET", "l", 3, "q") == Error("ERR index out of range")
    assert conn.cmd("LSET", "l", -4, "q") == Error("ERR index out of range")
    assert conn.cmd("LSET", "nokey", 0, "q") == Error("ERR no such key")
    assert conn.cmd("LSET", "l", "x", "q") == NOT_INT
    assert conn.cmd("LSET", "nokey", "x", "q") == Error("ERR no such key")
    assert conn.cmd("EXISTS", "nokey") == 0


def test_linsert(conn):
    conn.cmd("RPUSH", "l", "a", "b", "c")
    assert conn.cmd("LINSERT", "l", "BEFORE", "a", "0") == 4
    assert conn.cmd("LINSERT", "l", "after", "c", "d") == 5
    assert conn.cmd("LINSERT", "l", "AFTER", "a", "a2") == 6
    assert conn.cmd("LINSERT", "l", "before", "c", "b2") == 7
    assert lrange(conn, "l") == [b"0", b"a", b"a2", b"b", b"b2", b"c", b"d"]
    assert conn.cmd("LINSERT", "l", "BEFORE", "zz", "x") == -1
    assert conn.cmd("LINSERT", "nokey", "BEFORE", "a", "x") == 0
    assert conn.cmd("EXISTS", "nokey") == 0
    assert conn.cmd("LINSERT", "l", "MIDDLE", "a", "x") == SYNTAX
    assert conn.cmd("LINSERT", "nokey", "MIDDLE", "a", "x") == SYNTAX
    # Only the first pivot match counts.
    conn.cmd("RPUSH", "d", "p", "p")
    assert conn.cmd("LINSERT", "d", "AFTER", "p", "x") == 3
    assert lrange(conn, "d") == [b"p", b"x", b"p"]


def test_lrem(conn):
    conn.cmd("RPUSH", "l", *"axbxcxdx")
    assert conn.cmd("LREM", "l", 2, "x") == 2
    assert lrange(conn, "l") == [b"a", b"b", b"c", b"x", b"d", b"x"]
    assert conn.cmd("LREM", "l", -1, "x") == 1
    assert lrange(conn, "l") == [b"a", b"b", b"c", b"x", b"d"]
    assert conn.cmd("LREM", "l", 0, "x") == 1
    assert conn.cmd("LREM", "l", 0, "zz") == 0
    assert conn.cmd("LREM", "l", 0, "a") == 1
    assert lrange(conn, "l") == [b"b", b"c", b"d"]
    assert conn.cmd("LREM", "nokey", 0, "a") == 0
    assert conn.cmd("LREM", "l", "x", "a") == NOT_INT
    assert conn.cmd("LREM", "l", LLONG_MIN, "a") == RANGE_LONG
    assert conn.cmd("LREM", "l", LLONG_MAX, "b") == 1
    assert conn.cmd("LREM", "l", -LLONG_MAX, "c") == 1
    assert conn.cmd("LREM", "l", 0, "d") == 1
    assert conn.cmd("EXISTS", "l") == 0
    conn.cmd("RPUSH", "n", "1", "01", "1", "+1")
    assert conn.cmd("LREM", "n", 0, "1") == 2
    assert lrange(conn, "n") == [b"01", b"+1"]


def test_lrem_negative_from_tail(conn):
    conn.cmd("RPUSH", "l", "x", "a", "x", "b", "x")
    assert conn.cmd("LREM", "l", -2, "x") == 2
    assert lrange(conn, "l") == [b"x", b"a", b"b"]


def test_ltrim(conn):
    cases = [((1, -2), "bcdef"), ((0, 0), "a"), ((-2, -1), "fg"), ((5, 100), "fg"), ((-100, 1), "ab"),
             ((0, -1), "abcdefg"), ((3, 2), ""), ((7, 9), ""), ((0, -8), "")]
    for (s, e), want in cases:
        conn.cmd("DEL", "l")
        conn.cmd("RPUSH", "l", *"abcdefg")
        assert conn.cmd("LTRIM", "l", s, e) == OK
        assert lrange(conn, "l") == [ch.encode() for ch in want], (s, e)
        assert conn.cmd("EXISTS", "l") == (1 if want else 0)
    assert conn.cmd("LTRIM", "nokey", 0, 1) == OK
    assert conn.cmd("EXISTS", "nokey") == 0
    assert conn.cmd("LTRIM", "nokey", "x", 1) == NOT_INT


# ---- LPOS ------------------------------------------------------------------------------


def test_lpos(conn):
    conn.cmd("RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c")
    assert conn.cmd("LPOS", "l", "a") == 0
    assert conn.cmd("LPOS", "l", "c") == 2
    assert conn.cmd("LPOS", "l", "zz") is None
    assert conn.cmd("LPOS", "l", "c", "RANK", 1) == 2
    assert conn.cmd("LPOS", "l", "c", "RANK", 2) == 6
    assert conn.cmd("LPOS", "l", "c", "RANK", 4) is None
    assert conn.cmd("LPOS", "l", "c", "RANK", -1) == 7
    assert conn.cmd("LPOS", "l", "c", "RANK", -3) == 2
    assert conn.cmd("LPOS", "l", "c", "COUNT", 0) == [2, 6, 7]
    assert conn.cmd("LPOS", "l", "c", "COUNT", 2) == [2, 6]
    assert conn.cmd("LPOS", "l", "c", "COUNT", 2, "RANK", -1) == [7, 6]
    assert conn.cmd("LPOS", "l", "c", "COUNT", 0, "RANK", 2) == [6, 7]
    assert conn.cmd("LPOS", "l", "zz", "COUNT", 0) == []
    assert conn.cmd("LPOS", "l", "c", "MAXLEN", 2) is None
    assert conn.cmd("LPOS", "l", "c", "MAXLEN", 3) == 2
    assert conn.cmd("LPOS", "l", "c", "COUNT", 0, "MAXLEN", 7) == [2, 6]
    assert conn.cmd("LPOS", "l", "c", "RANK", -1, "MAXLEN", 1) == 7
    assert conn.cmd("LPOS", "l", "a", "RANK", -1, "MAXLEN", 7) is None
    assert conn.cmd("LPOS", "l", "3") == 5
    assert conn.cmd("LPOS", "l", "c", "rank", LLONG_MAX) is None
    assert conn.cmd("LPOS", "l", "c", "RANK", -LLONG_MAX) is None
    assert conn.cmd("LPOS", "nokey", "a") is None
    assert conn.cmd("LPOS", "nokey", "a", "COUNT", 1) == []


def test_lpos_errors(conn):
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("LPOS", "l", "a", "RANK", 0) == RANK_ZERO
    assert conn.cmd("LPOS", "l", "a", "RANK", LLONG_MIN) == RANGE_LONG
    assert conn.cmd("LPOS", "l", "a", "RANK", "x") == NOT_INT
    assert conn.cmd("LPOS", "l", "a", "COUNT", -1) == Error("ERR COUNT can't be negative")
    assert conn.cmd("LPOS", "l", "a", "COUNT", "x") == Error("ERR COUNT can't be negative")
    assert conn.cmd("LPOS", "l", "a", "MAXLEN", -1) == Error("ERR MAXLEN can't be negative")
    assert conn.cmd("LPOS", "l", "a", "MAXLEN") == SYNTAX
    assert conn.cmd("LPOS", "l", "a", "FOO", 1) == SYNTAX
    # Options are checked before the key.
    assert conn.cmd("LPOS", "nokey", "a", "RANK", 0) == RANK_ZERO
    conn.cmd("SET", "s", "x")
    assert conn.cmd("LPOS", "s", "a", "COUNT", -1) == Error("ERR COUNT can't be negative")
    assert conn.cmd("LPOS", "l") == arity("lpos")


# ---- LMOVE RPOPLPUSH -------------------------------------------------------------------


def test_lmove_directions(conn):
    for src, dst, want_src, want_dst, val in [
        ("LEFT", "LEFT", [b"b", b"c"], [b"a", b"x", b"y"], b"a"),
        ("LEFT", "RIGHT", [b"b", b"c"], [b"x", b"y", b"a"], b"a"),
        ("RIGHT", "LEFT", [b"a", b"b"], [b"c", b"x", b"y"], b"c"),
        ("right", "right", [b"a", b"b"], [b"x", b"y", b"c"], b"c"),
    ]:
        conn.cmd("DEL", "s", "d")
        conn.cmd("RPUSH", "s", "a", "b", "c")
        conn.cmd("RPUSH", "d", "x", "y")
        assert conn.cmd("LMOVE", "s", "d", src, dst) == val
        assert lrange(conn, "s") == want_src
        assert lrange(conn, "d") == want_dst


def test_lmove_creates_and_deletes(conn):
    conn.cmd("RPUSH", "s", "only")
    assert conn.cmd("LMOVE", "s", "d", "LEFT", "RIGHT") == b"only"
    assert conn.cmd("EXISTS", "s") == 0
    assert lrange(conn, "d") == [b"only"]
    assert encoding(conn, "d") == b"listpack"
    assert conn.cmd("LMOVE", "s", "d", "LEFT", "RIGHT") is None
    assert conn.cmd("RPOPLPUSH", "s", "d") is None
    assert conn.cmd("EXISTS", "s") == 0


def test_lmove_same_key_rotates(conn):
    conn.cmd("RPUSH", "l", "a", "b", "c")
    assert conn.cmd("LMOVE", "l", "l", "LEFT", "RIGHT") == b"a"
    assert lrange(conn, "l") == [b"b", b"c", b"a"]
    assert conn.cmd("RPOPLPUSH", "l", "l") == b"a"
    assert lrange(conn, "l") == [b"a", b"b", b"c"]
    assert conn.cmd("LMOVE", "l", "l", "LEFT", "LEFT") == b"a"
    assert lrange(conn, "l") == [b"a", b"b", b"c"]
    conn.cmd("RPUSH", "one", "x")
    assert conn.cmd("LMOVE", "one", "one", "RIGHT", "LEFT") == b"x"
    assert lrange(conn, "one") == [b"x"]


def test_lmove_errors(conn):
    conn.cmd("RPUSH", "s", "a", "b")
    conn.cmd("SET", "str", "x")
    assert conn.cmd("LMOVE", "s", "str", "LEFT", "LEFT") == WRONGTYPE
    assert conn.cmd("RPOPLPUSH", "s", "str") == WRONGTYPE
    assert lrange(conn, "s") == [b"a", b"b"]
    assert conn.cmd("LMOVE", "str", "s", "LEFT", "LEFT") == WRONGTYPE
    assert conn.cmd("LMOVE", "s", "d", "UP", "LEFT") == SYNTAX
    assert conn.cmd("LMOVE", "s", "d", "LEFT", "DOWN") == SYNTAX
    assert conn.cmd("LMOVE", "nokey", "d", "UP", "LEFT") == SYNTAX
    # A missing source answers nil even when the destination has the wrong type.
    assert conn.cmd("LMOVE", "nokey", "str", "LEFT", "LEFT") is None
    assert conn.cmd("RPOPLPUSH", "s") == arity("rpoplpush")


def test_rpoplpush(conn):
    conn.cmd("RPUSH", "s", "a", "b", "c")
    assert conn.cmd("RPOPLPUSH", "s", "d") == b"c"
    assert conn.cmd("RPOPLPUSH", "s", "d") == b"b"
    assert lrange(conn, "d") == [b"b", b"c"]
    assert lrange(conn, "s") == [b"a"]


# ---- LMPOP ------------------------------------------------------------------------------


def test_lmpop(conn):
    conn.cmd("RPUSH", "b", "1", "2", "3")
    assert conn.cmd("LMPOP", 2, "a", "b", "LEFT") == [b"b", [b"1"]]
    assert conn.cmd("LMPOP", 2, "a", "b", "RIGHT", "COUNT", 5) == [b"b", [b"3", b"2"]]
    assert conn.cmd("EXISTS", "b") == 0
    assert conn.cmd("LMPOP", 2, "a", "b", "LEFT") is None
    assert conn.cmd_raw("LMPOP", 2, "a", "b", "LEFT") == b"*-1\r\n"
    conn.cmd("RPUSH", "a", "x", "y")
    conn.cmd("RPUSH", "b", "z")
    assert conn.cmd("LMPOP", 2, "a", "b", "left", "count", 1) == [b"a", [b"x"]]
    assert conn.cmd("LMPOP", 1, "b", "RIGHT") == [b"b", [b"z"]]


def test_lmpop_errors(conn):
    conn.cmd("RPUSH", "k", "a")
    conn.cmd("SET", "s", "x")
    numkeys = Error("ERR numkeys should be greater than 0")
    count = Error("ERR count should be greater than 0")
    assert conn.cmd("LMPOP", 0, "k", "LEFT") == numkeys
    assert conn.cmd("LMPOP", -1, "k", "LEFT") == numkeys
    assert conn.cmd("LMPOP", "x", "k", "LEFT") == numkeys
    assert conn.cmd("LMPOP", 3, "k", "LEFT") == SYNTAX
    assert conn.cmd("LMPOP", 2, "k", "LEFT") == SYNTAX
    assert conn.cmd("LMPOP", 1, "k", "UP") == SYNTAX
    assert conn.cmd("LMPOP", 1, "k", "LEFT", "COUNT", 0) == count
    assert conn.cmd("LMPOP", 1, "k", "LEFT", "COUNT", "x") == count
    assert conn.cmd("LMPOP", 1, "k", "LEFT", "COUNT") == SYNTAX
    assert conn.cmd("LMPOP", 1, "k", "LEFT", "COUNT", 1, "COUNT", 1) == SYNTAX
    assert conn.cmd("LMPOP", 1, "k", "LEFT", "FOO") == SYNTAX
    assert conn.cmd("LMPOP", 1, "k") == arity("lmpop")
    # WRONGTYPE on the first non-empty key that is not a list.
    assert conn.cmd("LMPOP", 2, "s", "k", "LEFT") == WRONGTYPE
    assert conn.cmd("LMPOP", 2, "nokey", "s", "LEFT") == WRONGTYPE
    assert conn.cmd("LMPOP", 2, "k", "s", "LEFT") == [b"k", [b"a"]]


def test_lmpop_getkeys(conn):
    assert conn.cmd("COMMAND", "GETKEYS", "LMPOP", 2, "a", "b", "LEFT") == [b"a", b"b"]
    assert conn.cmd("COMMAND", "GETKEYS", "LMPOP", 1, "a", "RIGHT", "COUNT", 3) == [b"a"]
    assert isinstance(conn.cmd("COMMAND", "GETKEYS", "LMPOP", 3, "a", "LEFT"), Error)
    assert isinstance(conn.cmd("COMMAND", "GETKEYS", "LMPOP", 0, "a", "LEFT"), Error)
    info = conn.cmd("COMMAND", "INFO", "LMPOP")[0]
    assert info[0] == b"lmpop" and info[1] == -4
    assert Simple("movablekeys") in info[2]


def test_lmpop_many_keys(conn):
    keys = ["k%d" % i for i in range(100)]
    conn.cmd("RPUSH", "k77", "v")
    assert conn.cmd("LMPOP", len(keys), *keys, "LEFT") == [b"k77", [b"v"]]


# ---- types and keys ----------------------------------------------------------------------


def test_wrongtype_everywhere(conn):
    conn.cmd("SET", "s", "x")
    calls = [("LPUSH", "s", "a"), ("RPUSH", "s", "a"), ("LPUSHX", "s", "a"), ("RPUSHX", "s", "a"),
             ("LPOP", "s"), ("RPOP", "s"), ("LPOP", "s", 1), ("RPOP", "s", 0), ("LLEN", "s"), ("LINDEX", "s", 0),
             ("LSET", "s", 0, "a"), ("LRANGE", "s", 0, -1), ("LINSERT", "s", "BEFORE", "a", "b"),
             ("LREM", "s", 0, "a"), ("LTRIM", "s", 0, 1), ("LPOS", "s", "a"), ("LPOS", "s", "a", "COUNT", 0),
             ("LMOVE", "s", "d", "LEFT", "LEFT"), ("RPOPLPUSH", "s", "d"), ("LMPOP", 1, "s", "LEFT")]
    for call in calls:
        assert conn.cmd(*call) == WRONGTYPE, call
    assert conn.cmd("GET", "s") == b"x"
    assert conn.cmd("EXISTS", "d") == 0
    conn.cmd("RPUSH", "l", "a")
    assert conn.cmd("GET", "l") == WRONGTYPE


def test_copy_rename_del_expire(conn):
    conn.cmd("RPUSH", "l", "a", "b")
    assert conn.cmd("COPY", "l", "c") == 1
    conn.cmd("RPUSH", "c", "z")
    assert lrange(conn, "l") == [b"a", b"b"]
    assert lrange(conn, "c") == [b"a", b"b", b"z"]
    big = ["e%d" % i for i in range(2000)]
    push_many(conn, "q", big)
    assert encoding(conn, "q") == b"quicklist"
    assert conn.cmd("COPY", "q", "q2") == 1
    assert encoding(conn, "q2") == b"quicklist"
    conn.cmd("LPOP", "q", 10)
    assert conn.cmd("LLEN", "q2") == 2000
    assert conn.cmd("LINDEX", "q2", 1999) == b"e1999"
    assert conn.cmd("RENAME", "q2", "q3") == OK
    assert conn.cmd("LLEN", "q3") == 2000
    usage = conn.cmd("MEMORY", "USAGE", "q3")
    assert isinstance(usage, int) and usage > 2000 * 5
    assert conn.cmd("DEL", "q3", "c") == 2
    assert conn.cmd("PEXPIRE", "l", 1) == 1
    import time
    time.sleep(0.05)
    assert conn.cmd("LLEN", "l") == 0
    assert conn.cmd("RPUSHX", "l", "x") == 0


# ---- encodings ------------------------------------------------------------------------------


def test_listpack_to_quicklist_by_bytes(conn):
    # The default -2 limits a listpack to 8 KB.
    conn.cmd("RPUSH", "l", *["x" * 50 for _ in range(100)])
    assert encoding(conn, "l") == b"listpack"
    conn.cmd("RPUSH", "l", *["x" * 50 for _ in range(100)])
    assert encoding(conn, "l") == b"quicklist"
    # A single large element converts at once.
    conn.cmd("RPUSH", "m", "a")
    conn.cmd("RPUSH", "m", "y" * 9000)
    assert encoding(conn, "m") == b"quicklist"
    # Shrinking below half the limit in one node converts back.
    conn.cmd("RPOP", "m")
    assert encoding(conn, "m") == b"listpack"
    assert lrange(conn, "m") == [b"a"]


def test_conversion_by_count(conn, limits):
    conn.cmd("CONFIG", "SET", "list-max-listpack-size", "3")
    assert conn.cmd("CONFIG", "GET", "list-max-ziplist-size") == [b"list-max-ziplist-size", b"3"]
    conn.cmd("RPUSH", "l", "a", "b", "c")
    assert encoding(conn, "l") == b"listpack"
    conn.cmd("RPUSH", "l", "d")
    assert encoding(conn, "l") == b"quicklist"
    # Each push path converts a full listpack.
    for cmd in (("LPUSH", "k", "x"), ("RPUSHX", "k", "x"), ("LINSERT", "k", "AFTER", "a", "x"),
                ("LMOVE", "src", "k", "LEFT", "LEFT")):
        conn.cmd("DEL", "k", "src")
        conn.cmd("RPUSH", "k", "a", "b", "c")
        conn.cmd("RPUSH", "src", "s")
        assert encoding(conn, "k") == b"listpack"
        conn.cmd(*cmd)
        assert encoding(conn, "k") == b"quicklist", cmd
        assert conn.cmd("LLEN", "k") == 4


def test_quicklist_to_listpack(conn, limits):
    conn.cmd("CONFIG", "SET", "list-max-listpack-size", "3")

    def make(items):
        conn.cmd("DEL", "l")
        conn.cmd("RPUSH", "l", *items)
        assert encoding(conn, "l") == b"quicklist"

    make("abcd")
    conn.cmd("RPOP", "l", 3)
    assert encoding(conn, "l") == b"listpack"
    make("abcd")
    conn.cmd("RPOP", "l", 2)  # two left: above half of 3
    assert encoding(conn, "l") == b"quicklist"
    make("aaad")
    assert conn.cmd("LREM", "l", 3, "a") == 3
    assert encoding(conn, "l") == b"listpack"
    make("abcd")
    conn.cmd("LTRIM", "l", 1, 1)
    assert encoding(conn, "l") == b"listpack"
    assert lrange(conn, "l") == [b"b"]
    make("abcd")
    conn.cmd("LMPOP", 1, "l", "LEFT", "COUNT", 3)
    assert encoding(conn, "l") == b"listpack"
    make("abcd")
    conn.cmd("LMOVE", "l", "other", "LEFT", "LEFT")
    conn.cmd("LMOVE", "l", "other", "LEFT", "LEFT")
    conn.cmd("LMOVE", "l", "other", "LEFT", "LEFT")
    assert encoding(conn, "l") == b"listpack"
    assert lrange(conn, "l") == [b"d"]

    conn.cmd("CONFIG", "SET", "list-max-listpack-size", "-1")
    conn.cmd("DEL", "l")
    conn.cmd("RPUSH", "l", "b" * 3000, "c" * 3000)
    assert encoding(conn, "l") == b"quicklist"
    conn.cmd("RPOP", "l")
    assert encoding(conn, "l") == b"quicklist"  # one node, but above half of 4 KB
    assert conn.cmd("LSET", "l", 0, "a") == OK
    assert encoding(conn, "l") == b"listpack"
    conn.cmd("RPUSH", "l", "c")
    assert lrange(conn, "l") == [b"a", b"c"]
    # LSET of a large value converts a listpack up front.
    assert conn.cmd("LSET", "l", 0, "z" * 5000) == OK
    assert encoding(conn, "l") == b"quicklist"
    assert lrange(conn, "l") == [b"z" * 5000, b"c"]


def test_big_list_round_trip(conn):
    n = 100000
    items = [str(i) if i % 3 else "item-%d" % i for i in range(n)]
    push_many(conn, "l", items)
    assert conn.cmd("LLEN", "l") == n
    assert encoding(conn, "l") == b"quicklist"
    for i in (0, 1, 2, 3, 4999, 50000, 77777, n - 1):
        assert conn.cmd("LINDEX", "l", i) == items[i].encode()
        assert conn.cmd("LINDEX", "l", i - n) == items[i].encode()
    assert conn.cmd("LRANGE", "l", 49990, 50010) == [x.encode() for x in items[49990:50011]]
    assert conn.cmd("LRANGE", "l", -5, -1) == [x.encode() for x in items[-5:]]
    assert conn.cmd("LPOS", "l", "99998") == 99998
    assert conn.cmd("LPOS", "l", "item-99999") == 99999
    assert conn.cmd("LPOS", "l", "item-3", "RANK", -1) == 3
    assert conn.cmd("LSET", "l", 60000, "changed") == OK
    assert conn.cmd("LINDEX", "l", 60000) == b"changed"
    assert conn.cmd("LINSERT", "l", "BEFORE", "changed", "ins") == n + 1
    assert conn.cmd("LINDEX", "l", 60000) == b"ins"
    assert conn.cmd("LREM", "l", 0, "ins") == 1
    all_items = lrange(conn, "l")
    items[60000] = "changed"
    assert all_items == [x.encode() for x in items]
    assert conn.cmd("LTRIM", "l", 10, -11) == OK
    assert conn.cmd("LLEN", "l") == n - 20
    assert conn.cmd("LINDEX", "l", 0) == items[10].encode()
    popped = conn.cmd("RPOP", "l", n)
    assert len(popped) == n - 20 and popped[0] == items[-11].encode()
    assert conn.cmd("EXISTS", "l") == 0


def test_large_elements(conn):
    big1 = b"a" * 70000
    big2 = b"b" * 200000
    conn.cmd("RPUSH", "l", "x", big1, "y")
    assert encoding(conn, "l") == b"quicklist"
    assert conn.cmd("LINDEX", "l", 1) == big1
    assert conn.cmd("LINSERT", "l", "AFTER", "x", big2) == 4
    assert lrange(conn, "l") == [b"x", big2, big1, b"y"]
    assert conn.cmd("LSET", "l", 3, big2) == OK
    assert conn.cmd("LPOS", "l", big2, "COUNT", 0) == [1, 3]
    assert conn.cmd("LREM", "l", 0, big2) == 2
    assert lrange(conn, "l") == [b"x", big1]
    assert conn.cmd("LMOVE", "l", "d", "RIGHT", "LEFT") == big1
    assert lrange(conn, "d") == [big1]
    assert conn.cmd("RPOP", "d") == big1
    # Many large elements in a row, then small ones in between.
    conn.cmd("DEL", "l")
    model = []
    for i in range(20):
        v = bytes([97 + i]) * (65 * 1024 + i)
        conn.cmd("LPUSH" if i % 2 else "RPUSH", "l", v)
        model = [v] + model if i % 2 else model + [v]
    conn.cmd("LINSERT", "l", "BEFORE", model[5], "small")
    model.insert(5, b"small")
    assert lrange(conn, "l") == model
    assert conn.cmd("LTRIM", "l", 3, 6) == OK
    assert lrange(conn, "l") == model[3:7]


# ---- randomized model check ------------------------------------------------------------------


def _value(rng, fill):
    k = rng.random()
    if k < 0.3:
        return str(rng.randint(-3000, 3000))
    if k < 0.5:
        return rng.choice(["a", "b", "c", "dd"])
    if k < 0.93:
        return "v" * rng.randint(0, 60)
    return "L" * rng.choice([3000, 5000, 9000, 17000])


@pytest.mark.parametrize("fill", ["-2", "-1", "1", "2", "3", "5", "0"])
def test_random_against_model(conn, limits, fill):
    conn.cmd("CONFIG", "SET", "list-max-listpack-size", fill)
    rng = random.Random(1000 + int(fill))
    model = []
    other = []
    for step in range(700):
        op = rng.randrange(13)
        v = _value(rng, fill)
        if op < 3 or not model:
            vals = [_value(rng, fill) for _ in range(rng.randint(1, 6))]
            if rng.random() < 0.5:
                assert conn.cmd("RPUSH", "l", *vals) == len(model) + len(vals)
                model += vals
            else:
                assert conn.cmd("LPUSH", "l", *vals) == len(model) + len(vals)
                model = vals[::-1] + model
        elif op == 3:
            cnt = rng.randint(1, 4)
            want = model[:cnt]
            model = model[cnt:]
            assert conn.cmd("LPOP", "l", cnt) == [x.encode() for x in want]
        elif op == 4:
            want = model.pop()
            assert conn.cmd("RPOP", "l") == want.encode()
        elif op == 5:
            i = rng.randrange(len(model))
            assert conn.cmd("LSET", "l", i - (len(model) if rng.random() < 0.5 else 0), v) == OK
            model[i] = v
        elif op == 6:
            i = rng.randrange(len(model))
            pivot = model[i]
            j = model.index(pivot)
            after = rng.random() < 0.5
            assert conn.cmd("LINSERT", "l", "AFTER" if after else "BEFORE", pivot, v) == len(model) + 1
            model.insert(j + 1 if after else j, v)
        elif op == 7:
            target = rng.choice(model)
            cnt = rng.choice([0, 1, 2, -1, -2])
            idxs = [i for i, x in enumerate(model) if x == target]
            if cnt < 0:
                idxs = idxs[::-1]
            if cnt:
                idxs = idxs[:abs(cnt)]
            for i in sorted(idxs, reverse=True):
                del model[i]
            assert conn.cmd("LREM", "l", cnt, target) == len(idxs)
        elif op == 8:
            if len(model) > 6:
                s = rng.randint(0, 2)
                e = -rng.randint(1, 3)
                assert conn.cmd("LTRIM", "l", s, e) == OK
                model = model[s:len(model) + e + 1]
        elif op == 9:
            frm, to = rng.choice(["LEFT", "RIGHT"]), rng.choice(["LEFT", "RIGHT"])
            x = model.pop(0) if frm == "LEFT" else model.pop()
            assert conn.cmd("LMOVE", "l", "o", frm, to) == x.encode()
            other = [x] + other if to == "LEFT" else other + [x]
        elif op == 10 and other:
            x = other.pop()
            assert conn.cmd("RPOPLPUSH", "o", "l") == x.encode()
            model.insert(0, x)
        elif op == 11:
            i = rng.randrange(len(model))
            assert conn.cmd("LINDEX", "l", i) == model[i].encode()
            assert conn.cmd("LPOS", "l", model[i]) == model.index(model[i])
        else:
            s = rng.randint(-len(model) - 2, len(model) + 2)
            e = rng.randint(-len(model) - 2, len(model) + 2)
            ps, pe = s if s >= 0 else max(len(model) + s, 0), e if e >= 0 else len(model) + e
            want = model[ps:pe + 1] if pe >= ps else []
            assert conn.cmd("LRANGE", "l", s, e) == [x.encode() for x in want]
        assert conn.cmd("LLEN", "l") == len(model), step
        if step % 25 == 0 or not model:
            assert lrange(conn, "l") == [x.encode() for x in model], step
            assert conn.cmd("EXISTS", "l") == (1 if model else 0)
    assert lrange(conn, "o") == [x.encode() for x in other]


def test_list_settings(conn, limits):
    assert conn.cmd("CONFIG", "GET", "list-max-listpack-size") == [b"list-max-listpack-size", b"-2"]
    assert conn.cmd("CONFIG", "GET", "list-compress-depth") == [b"list-compress-depth", b"0"]
    assert isinstance(conn.cmd("CONFIG", "SET", "list-max-listpack-size", "x"), Error)
    # Byte levels past -5 act as -5 (64 KB).
    assert conn.cmd("CONFIG", "SET", "list-max-ziplist-size", "-100") == OK
    conn.cmd("RPUSH", "l", *["x" * 100 for _ in range(600)])
    assert encoding(conn, "l") == b"listpack"
    conn.cmd("RPUSH", "l", *["x" * 100 for _ in range(100)])
    assert encoding(conn, "l") == b"quicklist"
    # A positive count limit still caps a node at 8 KB.
    assert conn.cmd("CONFIG", "SET", "list-max-listpack-size", "1000") == OK
    conn.cmd("RPUSH", "c", *["y" * 100 for _ in range(70)])
    assert encoding(conn, "c") == b"listpack"
    conn.cmd("RPUSH", "c", *["y" * 100 for _ in range(20)])
    assert encoding(conn, "c") == b"quicklist"
