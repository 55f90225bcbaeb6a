"""Hash commands: HSET, HSETNX, HMSET, HGET, HMGET, HGETALL, HDEL, HEXISTS,
HLEN, HSTRLEN, HKEYS, HVALS, HINCRBY, HINCRBYFLOAT, HRANDFIELD, HSCAN, and
the listpack -> hashtable conversion driven by hash-max-listpack-entries
and hash-max-listpack-value.

Replies and error strings are Redis 7.2's, byte for byte; RESP3 shapes are
checked on the wire through `conn3`."""
import pytest
from resp import Error, Map, Simple

OK = Simple("OK")
SYNTAX = Error("ERR syntax error")
NOT_INT = Error("ERR value is not an integer or out of range")
NOT_FLOAT = Error("ERR value is not a valid float")
OVERFLOW = Error("ERR increment or decrement would overflow")
WRONGTYPE = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


def encoding(conn, key):
    return conn.cmd("OBJECT", "ENCODING", key)


@pytest.fixture
def limits(conn):
    """Restore the hash thresholds a test changes on the shared server."""
    yield
    assert conn.cmd("CONFIG", "SET", "hash-max-listpack-entries", "512") == OK
    assert conn.cmd("CONFIG", "SET", "hash-max-listpack-value", "64") == OK


def fill(conn, key, n, prefix="f", value=None):
    args = []
    for i in range(n):
        args += ["%s%d" % (prefix, i), value if value is not None else "v%d" % i]
    for i in range(0, len(args), 2000):
        conn.cmd("HSET", key, *args[i:i + 2000])


def big(conn, key, n=300):
    # Callers take the `limits` fixture: the threshold is lowered to 128 here.
    assert conn.cmd("CONFIG", "SET", "hash-max-listpack-entries", "128") == OK
    fill(conn, key, n)
    assert encoding(conn, key) == b"hashtable"


# ---- HSET HMSET HSETNX HGET -----------------------------------------------------------


def test_hset_hget(conn):
    assert conn.cmd("HSET", "h", "a", "1") == 1
    assert conn.cmd("HSET", "h", "a", "2", "b", "3") == 1
    assert conn.cmd("HGET", "h", "a") == b"2"
    assert conn.cmd("HGET", "h", "b") == b"3"
    assert conn.cmd("HGET", "h", "zz") is None
    assert conn.cmd("HGET", "nokey", "a") is None
    # A field repeated in one call counts once and keeps the last value.
    assert conn.cmd("HSET", "h2", "x", "1", "x", "2") == 1
    assert conn.cmd("HGET", "h2", "x") == b"2"
    assert conn.cmd("TYPE", "h") == Simple("hash")


def test_hset_arity(conn):
    assert conn.cmd("HSET", "h", "a") == arity("hset")
    assert conn.cmd("HSET", "h", "a", "1", "b") == arity("hset")
    assert conn.cmd("HMSET", "h", "a", "1", "b") == arity("hmset")
    assert conn.cmd("HSET", "h") == arity("hset")
    assert conn.cmd("EXISTS", "h") == 0


def test_hmset(conn):
    assert conn.cmd("HMSET", "h", "a", "1", "b", "2") == OK
    assert conn.cmd("HMSET", "h", "a", "9") == OK
    assert conn.cmd("HMGET", "h", "a", "b") == [b"9", b"2"]


def test_hsetnx(conn):
    assert conn.cmd("HSETNX", "h", "a", "1") == 1
    assert conn.cmd("HSETNX", "h", "a", "2") == 0
    assert conn.cmd("HGET", "h", "a") == b"1"
    assert conn.cmd("HSETNX", "h", "b", "2") == 1
    assert conn.cmd("HLEN", "h") == 2


def test_binary_and_empty(conn):
    assert conn.cmd("HSET", "h", "", "", b"\x00\xff\r\n", b"v\x00") == 2
    assert conn.cmd("HGET", "h", "") == b""
    assert conn.cmd("HGET", "h", b"\x00\xff\r\n") == b"v\x00"
    assert conn.cmd("HSTRLEN", "h", "") == 0
    assert conn.cmd("HEXISTS", "h", "") == 1


def test_integer_like_values(conn):
    # Canonical integers are stored packed; they read back as written.
    assert conn.cmd("HSET", "h", "1", "123", "-5", "-9223372036854775808", "007", "0") == 3
    assert conn.cmd("HGET", "h", "1") == b"123"
    assert conn.cmd("HGET", "h", "-5") == b"-9223372036854775808"
    assert conn.cmd("HGET", "h", "007") == b"0"
    assert conn.cmd("HGET", "h", "7") is None
    assert conn.cmd("HSTRLEN", "h", "1") == 3
    assert conn.cmd("HSTRLEN", "h", "-5") == 20
    assert sorted(conn.cmd("HKEYS", "h")) == [b"-5", b"007", b"1"]


# ---- reads ------------------------------------------------------------------------------


def test_hmget(conn):
    conn.cmd("HSET", "h", "a", "1", "b", "2")
    assert conn.cmd("HMGET", "h", "a", "x", "b") == [b"1", None, b"2"]
    assert conn.cmd("HMGET", "nokey", "a", "b") == [None, None]
    assert conn.cmd_raw("HMGET", "nokey", "a") == b"*1\r\n$-1\r\n"


def test_hmget_resp3(conn3):
    conn3.cmd("HSET", "h", "a", "1")
    assert conn3.cmd_raw("HMGET", "h", "a", "x") == b"*2\r\n$1\r\n1\r\n_\r\n"
    assert conn3.cmd_raw("HGET", "h", "x") == b"_\r\n"


def test_hexists_hlen_hstrlen(conn):
    conn.cmd("HSET", "h", "a", "hello", "b", "")
    assert conn.cmd("HEXISTS", "h", "a") == 1
    assert conn.cmd("HEXISTS", "h", "x") == 0
    assert conn.cmd("HEXISTS", "nokey", "a") == 0
    assert conn.cmd("HLEN", "h") == 2
    assert conn.cmd("HLEN", "nokey") == 0
    assert conn.cmd("HSTRLEN", "h", "a") == 5
    assert conn.cmd("HSTRLEN", "h", "b") == 0
    assert conn.cmd("HSTRLEN", "h", "x") == 0
    assert conn.cmd("HSTRLEN", "nokey", "x") == 0


@pytest.mark.parametrize("n", [3, 300])
def test_hgetall_hkeys_hvals(conn, n):
    fill(conn, "h", n)
    flat = conn.cmd("HGETALL", "h")
    assert len(flat) == 2 * n
    got = dict(zip(flat[::2], flat[1::2]))
    assert got == {b"f%d" % i: b"v%d" % i for i in range(n)}
    keys = conn.cmd("HKEYS", "h")
    vals = conn.cmd("HVALS", "h")
    # The three walk the hash in the same order.
    assert keys == flat[::2]
    assert vals == flat[1::2]


def test_hgetall_empty(conn):
    assert conn.cmd_raw("HGETALL", "nokey") == b"*0\r\n"
    assert conn.cmd_raw("HKEYS", "nokey") == b"*0\r\n"
    assert conn.cmd_raw("HVALS", "nokey") == b"*0\r\n"


def test_hgetall_resp3(conn3):
    assert conn3.cmd_raw("HGETALL", "nokey") == b"%0\r\n"
    assert conn3.cmd_raw("HKEYS", "nokey") == b"*0\r\n"
    conn3.cmd("HSET", "h", "a", "1")
    assert conn3.cmd_raw("HGETALL", "h") == b"%1\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert conn3.cmd_raw("HKEYS", "h") == b"*1\r\n$1\r\na\r\n"
    assert conn3.cmd_raw("HVALS", "h") == b"*1\r\n$1\r\n1\r\n"
    fill(conn3, "big", 200)
    m = conn3.cmd("HGETALL", "big")
    assert isinstance(m, Map) and len(m) == 200
    assert m.dict()[b"f7"] == b"v7"


# ---- HDEL -------------------------------------------------------------------------------


def test_hdel(conn):
    conn.cmd("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert conn.cmd("HDEL", "h", "a", "x", "a") == 1
    assert conn.cmd("HDEL", "h", "zz") == 0
    assert conn.cmd("HDEL", "nokey", "a") == 0
    assert conn.cmd("HGETALL", "h") == [b"b", b"2", b"c", b"3"]
    assert conn.cmd("HDEL", "h", "b", "c") == 2
    assert conn.cmd("EXISTS", "h") == 0


def test_hdel_empties_hashtable(conn, limits):
    big(conn, "h", 200)
    fields = ["f%d" % i for i in range(200)]
    assert conn.cmd("HDEL", "h", *fields[:150]) == 150
    assert conn.cmd("HLEN", "h") == 50
    assert conn.cmd("HGET", "h", "f160") == b"v160"
    assert conn.cmd("HGET", "h", "f10") is None
    assert encoding(conn, "h") == b"hashtable"  # never converts back
    assert conn.cmd("HDEL", "h", *fields) == 50
    assert conn.cmd("EXISTS", "h") == 0


# ---- HINCRBY HINCRBYFLOAT ---------------------------------------------------------------


def test_hincrby(conn):
    assert conn.cmd("HINCRBY", "h", "n", "5") == 5
    assert conn.cmd("HINCRBY", "h", "n", "-7") == -2
    assert conn.cmd("HGET", "h", "n") == b"-2"
    conn.cmd("HSET", "h", "s", "abc", "sp", " 1", "big", str(LLONG_MAX), "small", str(LLONG_MIN))
    assert conn.cmd("HINCRBY", "h", "s", "1") == Error("ERR hash value is not an integer")
    assert conn.cmd("HINCRBY", "h", "sp", "1") == Error("ERR hash value is not an integer")
    assert conn.cmd("HINCRBY", "h", "big", "1") == OVERFLOW
    assert conn.cmd("HINCRBY", "h", "small", "-1") == OVERFLOW
    assert conn.cmd("HINCRBY", "h", "big", "-1") == LLONG_MAX - 1
    assert conn.cmd("HINCRBY", "h", "n", "x") == NOT_INT
    assert conn.cmd("HINCRBY", "h", "n", "1.5") == NOT_INT
    assert conn.cmd("HINCRBY", "new", "n", "x") == NOT_INT
    assert conn.cmd("EXISTS", "new") == 0
    assert conn.cmd("HINCRBY", "h", "n", "0") == -2


def test_hincrby_hashtable(conn, limits):
    big(conn, "h")
    conn.cmd("HSET", "h", "n", "10", "s", "x")
    assert conn.cmd("HINCRBY", "h", "n", "5") == 15
    assert conn.cmd("HINCRBY", "h", "new", "-3") == -3
    assert conn.cmd("HINCRBY", "h", "s", "1") == Error("ERR hash value is not an integer")
    assert conn.cmd("HLEN", "h") == 303


def test_hincrbyfloat(conn):
    assert conn.cmd("HSET", "h", "f", "10.50") == 1
    assert conn.cmd("HINCRBYFLOAT", "h", "f", "0.1") == b"10.6"
    assert conn.cmd("HINCRBYFLOAT", "h", "f", "-5") == b"5.6"
    conn.cmd("HSET", "h", "f", "5.0e3")
    assert conn.cmd("HINCRBYFLOAT", "h", "f", "2.0e2") == b"5200"
    assert conn.cmd("HGET", "h", "f") == b"5200"
    assert conn.cmd("HINCRBYFLOAT", "h", "new", "1.5") == b"1.5"
    conn.cmd("HSET", "h", "i", "3")
    assert conn.cmd("HINCRBYFLOAT", "h", "i", "1") == b"4"
    conn.cmd("HSET", "h", "s", "abc", "nan", "nan", "inf", "inf")
    assert conn.cmd("HINCRBYFLOAT", "h", "s", "1") == Error("ERR hash value is not a float")
    assert conn.cmd("HINCRBYFLOAT", "h", "nan", "1") == Error("ERR hash value is not a float")
    assert conn.cmd("HINCRBYFLOAT", "h", "inf", "1") == Error("ERR increment would produce NaN or Infinity")
    assert conn.cmd("HINCRBYFLOAT", "h", "f", "abc") == NOT_FLOAT
    assert conn.cmd("HINCRBYFLOAT", "h", "f", "") == NOT_FLOAT
    assert conn.cmd("HINCRBYFLOAT", "h", "f", " 1") == NOT_FLOAT
    assert conn.cmd("HINCRBYFLOAT", "h", "f", "nan") == NOT_FLOAT
    assert conn.cmd("HINCRBYFLOAT", "h", "f", "inf") == Error("ERR value is NaN or Infinity")
    assert conn.cmd("HINCRBYFLOAT", "h", "f", "-inf") == Error("ERR value is NaN or Infinity")
    assert conn.cmd("HGET", "h", "f") == b"5200"


def test_hincrbyfloat_resp3_is_bulk(conn3):
    assert conn3.cmd_raw("HINCRBYFLOAT", "h", "f", "1.25") == b"$4\r\n1.25\r\n"


def test_incr_long_result_converts(conn, limits):
    assert conn.cmd("CONFIG", "SET", "hash-max-listpack-value", "3") == OK
    conn.cmd("HSET", "h", "n", "999")
    assert encoding(conn, "h") == b"listpack"
    assert conn.cmd("HINCRBY", "h", "n", "1") == 1000
    assert encoding(conn, "h") == b"hashtable"
    assert conn.cmd("HGET", "h", "n") == b"1000"
    conn.cmd("HSET", "g", "n", "1")
    assert conn.cmd("HINCRBYFLOAT", "g", "n", "0.25") == b"1.25"
    assert encoding(conn, "g") == b"hashtable"


# ---- WRONGTYPE --------------------------------------------------------------------------


def test_wrongtype_every_command(conn):
    conn.cmd("SET", "s", "x")
    cmds = [
        ("HSET", "s", "a", "1"), ("HSETNX", "s", "a", "1"), ("HMSET", "s", "a", "1"),
        ("HGET", "s", "a"), ("HMGET", "s", "a"), ("HGETALL", "s"), ("HDEL", "s", "a"),
        ("HEXISTS", "s", "a"), ("HLEN", "s"), ("HSTRLEN", "s", "a"), ("HKEYS", "s"),
        ("HVALS", "s"), ("HINCRBY", "s", "a", "1"), ("HINCRBYFLOAT", "s", "a", "1"),
        ("HRANDFIELD", "s"), ("HRANDFIELD", "s", "2"), ("HRANDFIELD", "s", "-2", "WITHVALUES"),
        ("HSCAN", "s", "0"),
    ]
    for c in cmds:
        assert conn.cmd(*c) == WRONGTYPE, c
    assert conn.cmd("GET", "s") == b"x"
    # Argument errors come before the type check where Redis checks them first.
    assert conn.cmd("HINCRBY", "s", "a", "x") == NOT_INT
    assert conn.cmd("HINCRBYFLOAT", "s", "a", "x") == NOT_FLOAT
    assert conn.cmd("HSCAN", "s", "x") == Error("ERR invalid cursor")
    assert conn.cmd("HRANDFIELD", "s", "x") == NOT_INT
    assert conn.cmd("HSET", "s", "a") == arity("hset")


# ---- encodings --------------------------------------------------------------------------


def test_encoding_entries_threshold(conn):
    # Redis's built-in default is 512 (redis.conf ships 128).
    assert conn.cmd("CONFIG", "GET", "hash-max-listpack-entries") == [b"hash-max-listpack-entries", b"512"]
    fill(conn, "h", 512)
    assert encoding(conn, "h") == b"listpack"
    conn.cmd("HSET", "h", "f0", "again")  # an update adds nothing
    assert encoding(conn, "h") == b"listpack"
    assert conn.cmd("HSET", "h", "f512", "x") == 1
    assert encoding(conn, "h") == b"hashtable"
    assert conn.cmd("HLEN", "h") == 513
    assert conn.cmd("HGET", "h", "f5") == b"v5"
    assert conn.cmd("HGET", "h", "f0") == b"again"


def test_encoding_value_threshold(conn):
    conn.cmd("HSET", "h", "a", "x" * 64)
    assert encoding(conn, "h") == b"listpack"
    conn.cmd("HSET", "h", "b", "x" * 65)
    assert encoding(conn, "h") == b"hashtable"
    assert conn.cmd("HGET", "h", "a") == b"x" * 64
    assert conn.cmd("HGET", "h", "b") == b"x" * 65
    conn.cmd("HSET", "g", "y" * 65, "1")
    assert encoding(conn, "g") == b"hashtable"
    conn.cmd("HSETNX", "k", "f", "z" * 65)
    assert encoding(conn, "k") == b"hashtable"


def test_encoding_many_pairs_in_one_call(conn):
    # Redis 7.2 (not 7.0) compares the number of pairs with the limit before it knows
    # about duplicates, so this converts with a single field.
    args = []
    for i in range(513):
        args += ["same", str(i)]
    assert conn.cmd("HSET", "h", *args) == 1
    assert encoding(conn, "h") == b"hashtable"
    assert conn.cmd("HGETALL", "h") == [b"same", b"512"]


def test_encoding_config_set(conn, limits):
    assert conn.cmd("CONFIG", "SET", "hash-max-listpack-entries", "4") == OK
    assert conn.cmd("CONFIG", "GET", "hash-max-listpack-entries") == [b"hash-max-listpack-entries", b"4"]
    assert conn.cmd("CONFIG", "GET", "hash-max-ziplist-entries") == [b"hash-max-ziplist-entries", b"4"]
    fill(conn, "h", 4)
    assert encoding(conn, "h") == b"listpack"
    conn.cmd("HSET", "h", "f4", "x")
    assert encoding(conn, "h") == b"hashtable"
    assert conn.cmd("CONFIG", "SET", "hash-max-ziplist-value", "2") == OK
    assert conn.cmd("CONFIG", "GET", "hash-max-listpack-value") == [b"hash-max-listpack-value", b"2"]
    conn.cmd("HSET", "g", "ab", "cd")
    assert encoding(conn, "g") == b"listpack"
    conn.cmd("HSET", "g", "abc", "d")
    assert encoding(conn, "g") == b"hashtable"
    assert conn.cmd("CONFIG", "SET", "hash-max-listpack-value", "1kb") == OK
    assert conn.cmd("CONFIG", "GET", "hash-max-listpack-value") == [b"hash-max-listpack-value", b"1024"]
    assert conn.cmd("CONFIG", "SET", "hash-max-listpack-entries", "0") == OK
    conn.cmd("HSET", "z", "a", "1")
    assert encoding(conn, "z") == b"hashtable"
    err = conn.cmd("CONFIG", "SET", "hash-max-listpack-entries", "-1")
    assert isinstance(err, Error) and "argument must be between 0 and 9223372036854775807 inclusive" in err


def test_copy_and_memory_usage(conn, limits):
    conn.cmd("HSET", "small", "a", "1", "b", "2")
    big(conn, "large")
    assert conn.cmd("COPY", "small", "small2") == 1
    assert conn.cmd("COPY", "large", "large2") == 1
    conn.cmd("HSET", "small", "a", "changed")
    conn.cmd("HDEL", "large", "f1")
    assert conn.cmd("HGET", "small2", "a") == b"1"
    assert conn.cmd("HLEN", "large2") == 300
    assert conn.cmd("HGET", "large2", "f1") == b"v1"
    assert encoding(conn, "large2") == b"hashtable"
    assert encoding(conn, "small2") == b"listpack"
    small = conn.cmd("MEMORY", "USAGE", "small")
    large = conn.cmd("MEMORY", "USAGE", "large", "SAMPLES", "0")
    assert 0 < small < 300
    assert 300 * 20 < large < 300 * 200
    assert conn.cmd("DEL", "large", "large2", "small", "small2") == 4


# ---- HRANDFIELD -------------------------------------------------------------------------


@pytest.mark.parametrize("n", [5, 300])
def test_hrandfield(conn, n):
    fill(conn, "h", n)
    fields = {b"f%d" % i for i in range(n)}
    for _ in range(20):
        assert conn.cmd("HRANDFIELD", "h") in fields
    assert conn.cmd("HRANDFIELD", "nokey") is None
    assert conn.cmd("HRANDFIELD", "nokey", "3") == []
    assert conn.cmd("HRANDFIELD", "nokey", "-3", "WITHVALUES") == []
    assert conn.cmd("HRANDFIELD", "h", "0") == []
    # Positive counts: distinct fields, at most the whole hash.
    for count in (1, 2, 3, n // 2, n - 1, n, n + 10):
        got = conn.cmd("HRANDFIELD", "h", str(count))
        assert len(got) == min(count, n)
        assert len(set(got)) == len(got)
        assert set(got) <= fields
    assert len(conn.cmd("HRANDFIELD", "h", str(n // 4))) == n // 4
    # Negative counts: exactly |count| picks, repeats allowed.
    got = conn.cmd("HRANDFIELD", "h", "-50")
    assert len(got) == 50 and set(got) <= fields
    # WITHVALUES pairs each field with its own value.
    for count in ("-20", "3", str(n), str(n * 2), "1", "-1"):
        flat = conn.cmd("HRANDFIELD", "h", count, "WITHVALUES")
        assert len(flat) == 2 * min(abs(int(count)), n if int(count) > 0 else abs(int(count)))
        for f, v in zip(flat[::2], flat[1::2]):
            assert v == b"v" + f[1:]


def test_hrandfield_repeats_cover(conn):
    conn.cmd("HSET", "h", "a", "1", "b", "2", "c", "3")
    got = conn.cmd("HRANDFIELD", "h", "-300")
    assert len(got) == 300 and set(got) == {b"a", b"b", b"c"}


def test_hrandfield_errors(conn):
    conn.cmd("HSET", "h", "a", "1")
    assert conn.cmd("HRANDFIELD", "h", "x") == NOT_INT
    assert conn.cmd("HRANDFIELD", "h", str(LLONG_MIN)) == Error(
        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    assert conn.cmd("HRANDFIELD", "h", "1", "WITHVALUE") == SYNTAX
    assert conn.cmd("HRANDFIELD", "h", "1", "WITHVALUES", "x") == SYNTAX
    assert conn.cmd("HRANDFIELD", "h", str(LLONG_MAX // 2 + 1), "WITHVALUES") == Error("ERR value is out of range")
    assert conn.cmd("HRANDFIELD", "h", str(-(LLONG_MAX // 2) - 1), "withvalues") == Error(
        "ERR value is out of range")
    assert conn.cmd("HRANDFIELD", "h", str(LLONG_MAX // 2), "WITHVALUES") == [b"a", b"1"]
    assert conn.cmd("HRANDFIELD", "nokey", "x") == NOT_INT


@pytest.mark.parametrize("n", [3, 300])
def test_hrandfield_resp3(conn3, n):
    fill(conn3, "h", n)
    assert conn3.cmd_raw("HRANDFIELD", "nokey") == b"_\r\n"
    assert conn3.cmd_raw("HRANDFIELD", "nokey", "2", "WITHVALUES") == b"*0\r\n"
    for count in ("2", "-5", str(n + 1), "1"):
        got = conn3.cmd("HRANDFIELD", "h", count, "WITHVALUES")
        assert len(got) == (n if int(count) > n else abs(int(count)))
        for pair in got:
            assert isinstance(pair, list) and len(pair) == 2
            assert pair[1] == b"v" + pair[0][1:]
    got = conn3.cmd("HRANDFIELD", "h", "2")
    assert len(got) == 2 and all(isinstance(x, bytes) for x in got)


# ---- HSCAN ------------------------------------------------------------------------------


def test_hscan_listpack_whole(conn):
    conn.cmd("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert conn.cmd("HSCAN", "h", "0") == [b"0", [b"a", b"1", b"b", b"2", b"c", b"3"]]
    # The cursor is ignored for a packed hash: everything, cursor 0.
    assert conn.cmd("HSCAN", "h", "12345", "COUNT", "1") == [b"0", [b"a", b"1", b"b", b"2", b"c", b"3"]]
    assert conn.cmd("HSCAN", "h", "0", "MATCH", "[ab]") == [b"0", [b"a", b"1", b"b", b"2"]]
    assert conn.cmd("HSCAN", "h", "0", "NOVALUES") == [b"0", [b"a", b"b", b"c"]]
    assert conn.cmd("HSCAN", "h", "0", "match", "c", "novalues") == [b"0", [b"c"]]
    assert conn.cmd("HSCAN", "h", "0", "MATCH", "zz*") == [b"0", []]


def test_hscan_errors(conn):
    conn.cmd("HSET", "h", "a", "1")
    assert conn.cmd("HSCAN", "nokey", "0") == [b"0", []]
    assert conn.cmd_raw("HSCAN", "nokey", "0") == b"*2\r\n$1\r\n0\r\n*0\r\n"
    # A missing key answers before its options are read, as in Redis.
    assert conn.cmd("HSCAN", "nokey", "0", "BOGUS") == [b"0", []]
    assert conn.cmd("HSCAN", "h", "x") == Error("ERR invalid cursor")
    # strtoul semantics: a minus sign wraps around instead of failing.
    assert conn.cmd("HSCAN", "h", "-1") == [b"0", [b"a", b"1"]]
    assert conn.cmd("HSCAN", "h", " 1") == Error("ERR invalid cursor")
    assert conn.cmd("HSCAN", "h", "") == [b"0", [b"a", b"1"]]
    assert conn.cmd("HSCAN", "h", "18446744073709551616") == Error("ERR invalid cursor")
    assert conn.cmd("HSCAN", "h", "0", "COUNT", "0") == SYNTAX
    assert conn.cmd("HSCAN", "h", "0", "COUNT", "x") == NOT_INT
    assert conn.cmd("HSCAN", "h", "0", "COUNT") == SYNTAX
    assert conn.cmd("HSCAN", "h", "0", "MATCH") == SYNTAX
    assert conn.cmd("HSCAN", "h", "0", "TYPE", "hash") == SYNTAX
    assert conn.cmd("HSCAN", "h", "0", "BOGUS") == SYNTAX


def scan_all(conn, key, *opts):
    cursor, seen, calls = b"0", {}, 0
    while True:
        cursor, items = conn.cmd("HSCAN", key, cursor, *opts)
        calls += 1
        if "NOVALUES" in opts:
            for f in items:
                seen[f] = None
        else:
            for f, v in zip(items[::2], items[1::2]):
                seen[f] = v
        if cursor == b"0":
            return seen, calls


def test_hscan_hashtable_complete(conn):
    n = 10000
    fill(conn, "h", n)
    assert encoding(conn, "h") == b"hashtable"
    seen, calls = scan_all(conn, "h", "COUNT", "100")
    assert calls > 10  # really incremental
    assert seen == {b"f%d" % i: b"v%d" % i for i in range(n)}
    seen, _ = scan_all(conn, "h", "MATCH", "f99*", "COUNT", "500")
    assert set(seen) == {b"f99"} | {b"f99%d" % i for i in range(10)} | {b"f99%02d" % i for i in range(100)}
    seen, _ = scan_all(conn, "h", "COUNT", "1000", "NOVALUES")
    assert len(seen) == n and all(v is None for v in seen.values())


def test_hscan_survives_changes(conn):
    # Fields present for the whole scan are returned even while the table
    # grows and shrinks between calls.
    fill(conn, "h", 2000, prefix="keep")
    cursor, seen, step = b"0", set(), 0
    while True:
        cursor, items = conn.cmd("HSCAN", "h", cursor, "COUNT", "50")
        seen.update(items[::2])
        step += 1
        if step == 3:
            fill(conn, "h", 6000, prefix="grow")
        if step == 8:
            conn.cmd("HDEL", "h", *["grow%d" % i for i in range(6000)])
        if cursor == b"0":
            break
    assert {b"keep%d" % i for i in range(2000)} <= seen


def test_hscan_resp3(conn3):
    conn3.cmd("HSET", "h", "a", "1")
    assert conn3.cmd_raw("HSCAN", "h", "0") == b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert conn3.cmd_raw("HSCAN", "nokey", "0") == b"*2\r\n$1\r\n0\r\n*0\r\n"


# ---- interplay with the keyspace ----------------------------------------------------------


def test_ttl_kept_across_writes_and_conversion(conn):
    conn.cmd("HSET", "h", "a", "1")
    assert conn.cmd("EXPIRE", "h", "100") == 1
    conn.cmd("HSET", "h", "b", "x" * 100)  # converts to a hash table
    conn.cmd("HINCRBY", "h", "n", "1")
    conn.cmd("HDEL", "h", "a")
    assert encoding(conn, "h") == b"hashtable"
    assert 0 < conn.cmd("TTL", "h") <= 100
    assert conn.cmd("RENAME", "h", "h2") == OK
    assert conn.cmd("HGET", "h2", "b") == b"x" * 100
    assert 0 < conn.cmd("TTL", "h2") <= 100
    assert conn.cmd("HDEL", "h2", "b", "n") == 2
    assert conn.cmd("EXISTS", "h2") == 0


def test_concurrent_hincrby(server, r):
    import threading
    fill_conn = server.conn()
    fill(fill_conn, "big", 200)  # hashtable encoding
    fill_conn.close()
    errors = []

    def work():
        c = server.conn()
        try:
            for i in range(300):
                c.cmd("HINCRBY", "small", "n", "1")
                c.cmd("HINCRBY", "big", "n%d" % (i % 7), "2")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
        finally:
            c.close()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    c = server.conn()
    assert c.cmd("HGET", "small", "n") == b"1200"
    assert sum(int(c.cmd("HGET", "big", "n%d" % i)) for i in range(7)) == 2400
    c.close()
