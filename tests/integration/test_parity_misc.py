"""Small parity points with Redis 8: GETRANGE's index edge cases, the
argument checks of BITCOUNT and BITPOS on missing keys, and glob patterns
(KEYS, SCAN/HSCAN/SSCAN/ZSCAN MATCH) that would make a naive matcher run
for ages. Where Redis 7.0 answers the same, the reference redis-server is
asked too."""
import itertools
import time

import pytest
from conftest import real_redis
from resp import Error, RespConn

SYNTAX = Error("ERR syntax error")
NOT_INT = Error("ERR value is not an integer or out of range")
WRONGTYPE = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
BIT_ARG = Error("ERR The bit argument must be 1 or 0.")


# ---- GETRANGE -------------------------------------------------------------------

# Redis 8 keeps the historic clamping (its test suite pins it: a negative
# end beyond the start becomes 0, so "0 -100" is the first byte), and an
# empty answer when both ends are negative and start > end.
GETRANGE_CASES = [
    (0, 3, b"Hell"), (0, -1, b"Hello World"), (-4, -1, b"orld"), (5, 3, b""),
    (5, 5000, b" World"), (-5000, 10000, b"Hello World"), (0, -100, b"H"),
    (1, -100, b""), (-1, -100, b""), (-100, -99, b"H"), (-100, -100, b"H"),
    (-100, -101, b""), (11, 11, b""), (10, 10, b"d"), (-1, 0, b""), (0, 0, b"H"),
    (-9223372036854775808, 9223372036854775807, b"Hello World"),
]


def test_getrange_edges(conn):
    conn.cmd("SET", "mykey", "Hello World")
    for start, end, want in GETRANGE_CASES:
        assert conn.cmd("GETRANGE", "mykey", str(start), str(end)) == want, (start, end)
    conn.cmd("SET", "num", "1234")
    assert conn.cmd("OBJECT", "ENCODING", "num") == b"int"
    assert conn.cmd("GETRANGE", "num", "0", "2") == b"123"
    assert conn.cmd("GETRANGE", "num", "-3", "-1") == b"234"
    assert conn.cmd("GETRANGE", "num", "0", "-100") == b"1"
    assert conn.cmd("GETRANGE", "num", "5", "3") == b""
    conn.cmd("SET", "empty", "")
    for start, end in [(0, 0), (0, -1), (-1, -1), (-1, 0), (-100, 100)]:
        assert conn.cmd("GETRANGE", "empty", str(start), str(end)) == b""
    assert conn.cmd("GETRANGE", "missing", "0", "-100") == b""
    assert conn.cmd("GETRANGE", "mykey", "a", "1") == NOT_INT
    assert conn.cmd("GETRANGE", "mykey", "0", "9223372036854775808") == NOT_INT
    assert conn.cmd("GETRANGE", "missing", "x", "1") == NOT_INT
    conn.cmd("RPUSH", "list", "a")
    assert conn.cmd("GETRANGE", "list", "0", "-1") == WRONGTYPE
    assert conn.cmd("GETRANGE", "list", "x", "-1") == NOT_INT


def test_getrange_against_reference(conn):
    with real_redis() as port:
        if port is None:
            pytest.skip("no reference redis-server")
        ref = RespConn(port=port)
        try:
            for val in ["Hello World", "1234", "x", ""]:
                for c in (conn, ref):
                    c.cmd("SET", "k", val)
                for start, end in itertools.product(range(-14, 15), repeat=2):
                    a = conn.cmd("GETRANGE", "k", str(start), str(end))
                    b = ref.cmd("GETRANGE", "k", str(start), str(end))
                    assert a == b, (val, start, end)
        finally:
            ref.close()


# ---- BITCOUNT / BITPOS on missing keys -----------------------------------------------

def test_bitcount_checks_arguments_first(conn):
    assert conn.cmd("BITCOUNT", "nokey") == 0
    assert conn.cmd("BITCOUNT", "nokey", "0", "-1") == 0
    assert conn.cmd("BITCOUNT", "nokey", "0", "-1", "BIT") == 0
    assert conn.cmd("BITCOUNT", "nokey", "0", "-1", "byte") == 0
    assert conn.cmd("BITCOUNT", "nokey", "-1", "-5") == 0
    assert conn.cmd("BITCOUNT", "nokey", "0") == SYNTAX
    assert conn.cmd("BITCOUNT", "nokey", "0", "1", "2", "3") == SYNTAX
    assert conn.cmd("BITCOUNT", "nokey", "a", "1") == NOT_INT
    assert conn.cmd("BITCOUNT", "nokey", "1", "b") == NOT_INT
    assert conn.cmd("BITCOUNT", "nokey", "1", "2", "BITS") == SYNTAX
    assert conn.cmd("BITCOUNT", "nokey", "-1", "-5", "FOO") == SYNTAX
    # Integers first, then the unit.
    assert conn.cmd("BITCOUNT", "nokey", "a", "1", "FOO") == NOT_INT
    conn.cmd("SADD", "set", "m")
    assert conn.cmd("BITCOUNT", "set", "0") == SYNTAX
    assert conn.cmd("BITCOUNT", "set", "0", "x") == NOT_INT
    assert conn.cmd("BITCOUNT", "set", "0", "1") == WRONGTYPE
    assert conn.cmd("BITCOUNT", "set", "-1", "-5") == WRONGTYPE
    assert conn.cmd("BITCOUNT", "set") == WRONGTYPE


def test_bitpos_checks_arguments_first(conn):
    assert conn.cmd("BITPOS", "nokey", "0") == 0
    assert conn.cmd("BITPOS", "nokey", "1") == -1
    assert conn.cmd("BITPOS", "nokey", "1", "5") == -1
    assert conn.cmd("BITPOS", "nokey", "0", "1", "2", "BIT") == 0
    assert conn.cmd("BITPOS", "nokey", "2") == BIT_ARG
    assert conn.cmd("BITPOS", "nokey", "x") == NOT_INT
    assert conn.cmd("BITPOS", "nokey", "1", "x") == NOT_INT
    assert conn.cmd("BITPOS", "nokey", "1", "0", "x") == NOT_INT
    assert conn.cmd("BITPOS", "nokey", "1", "0", "1", "FOO") == SYNTAX
    # The unit is read before the end.
    assert conn.cmd("BITPOS", "nokey", "1", "0", "x", "FOO") == SYNTAX
    assert conn.cmd("BITPOS", "nokey", "1", "x", "1", "FOO") == NOT_INT
    assert conn.cmd("BITPOS", "nokey", "1", "0", "1", "BIT", "extra") == SYNTAX
    conn.cmd("SADD", "set", "m")
    assert conn.cmd("BITPOS", "set", "1", "0", "1", "FOO") == SYNTAX
    assert conn.cmd("BITPOS", "set", "1", "0", "1") == WRONGTYPE
    assert conn.cmd("BITPOS", "set", "3") == BIT_ARG


def test_bit_commands_on_existing_keys_against_reference(conn):
    cases = [("BITCOUNT", "k"), ("BITCOUNT", "k", "0", "-1"), ("BITCOUNT", "k", "1", "2"),
             ("BITCOUNT", "k", "-2", "-1"), ("BITCOUNT", "k", "-1", "-2"), ("BITCOUNT", "k", "5", "30", "BIT"),
             ("BITPOS", "k", "1"), ("BITPOS", "k", "0"), ("BITPOS", "k", "0", "1"), ("BITPOS", "k", "1", "1", "2"),
             ("BITPOS", "k", "0", "3", "20", "BIT"), ("BITPOS", "k", "1", "-10", "-1", "BIT"),
             ("BITCOUNT", "k", "a", "1"), ("BITPOS", "k", "1", "a")]
    with real_redis() as port:
        if port is None:
            pytest.skip("no reference redis-server")
        ref = RespConn(port=port)
        try:
            for c in (conn, ref):
                c.cmd("SET", "k", b"\xff\xf0\x00\x0f")
            for cmd in cases:
                assert conn.cmd(*cmd) == ref.cmd(*cmd), cmd
        finally:
            ref.close()


# ---- glob patterns --------------------------------------------------------------------

def star_runs(n, tail=""):
    return "*?" * n + tail


def timed(conn, *cmd):
    t0 = time.monotonic()
    reply = conn.cmd(*cmd)
    return reply, time.monotonic() - t0


def test_keys_pathological_pattern_is_fast(conn):
    big = "x" * 50000
    conn.cmd("SET", big, "1")
    conn.cmd("SET", "x" * 3000, "1")
    reply, dt = timed(conn, "KEYS", star_runs(50000))
    assert reply == [] and dt < 1.0, dt
    # Up to 1000 runs a pattern matches as glob says; past that Redis's
    # matcher gives up, and so do we (a final run still matches).
    assert sorted(len(k) for k in conn.cmd("KEYS", star_runs(1000))) == [3000, 50000]
    assert conn.cmd("KEYS", star_runs(1001)) == []
    assert sorted(len(k) for k in conn.cmd("KEYS", star_runs(1000, "*"))) == [3000, 50000]
    assert conn.cmd("KEYS", star_runs(1000, "*?")) == []
    # Exponential for a backtracking matcher, linear here.
    reply, dt = timed(conn, "KEYS", "a*" * 500 + "b")
    assert reply == [] and dt < 1.0, dt
    reply, dt = timed(conn, "KEYS", "*x" * 900 + "y")
    assert reply == [] and dt < 1.0, dt


def test_scan_family_pathological_patterns(conn):
    big = "x" * 50000
    conn.cmd("SET", big, "1")
    conn.cmd("HSET", "h", big, "v", "x" * 10, "v")
    conn.cmd("SADD", "s", big, "x" * 10)
    conn.cmd("ZADD", "z", "1", big, "2", "x" * 10)
    pat = star_runs(50000)
    t0 = time.monotonic()
    cursor, found = "0", []
    while True:
        cursor, page = conn.cmd("SCAN", cursor, "MATCH", pat, "COUNT", "1000")
        found += page
        if cursor == b"0":
            break
    assert found == []
    for cmd in ("HSCAN", "SSCAN", "ZSCAN"):
        key = {"HSCAN": "h", "SSCAN": "s", "ZSCAN": "z"}[cmd]
        assert conn.cmd(cmd, key, "0", "MATCH", pat) == [b"0", []]
    assert time.monotonic() - t0 < 2.0
    # A pattern within the limit still matches the long member.
    got = conn.cmd("SSCAN", "s", "0", "MATCH", star_runs(1000))
    assert got == [b"0", [big.encode()]]
    got = conn.cmd("HSCAN", "h", "0", "MATCH", star_runs(5), "NOVALUES")
    assert got[0] == b"0" and sorted(got[1]) == sorted([big.encode(), b"x" * 10])


def test_glob_limit_against_reference(conn):
    with real_redis() as port:
        if port is None:
            pytest.skip("no reference redis-server")
        ref = RespConn(port=port)
        try:
            for c in (conn, ref):
                c.cmd("SET", "x" * 5000, "1")
                c.cmd("SET", "x" * 1200, "1")
                c.cmd("SET", "a" * 10 + "b", "1")
            pats = [star_runs(999), star_runs(1000), star_runs(1001), star_runs(1000, "*"),
                    star_runs(1001, "*"), star_runs(1000, "*?"), "**?" * 1001, "\\*" * 1500 + "*",
                    "*" * 5000, "a*" * 10 + "b", "[x]*" * 1001, "*[x]" * 1000]
            for p in pats:
                assert sorted(conn.cmd("KEYS", p)) == sorted(ref.cmd("KEYS", p)), p[:20]
        finally:
            ref.close()
