"""The string and bitmap additions of Redis 8.2-8.4: SET's compare-and-set
conditions (IFEQ, IFNE, IFDEQ, IFDNE), DELEX, DIGEST, MSETEX, and BITOP's
DIFF, DIFF1, ANDOR and ONE.

Debian's redis-server (7.0) has none of these, so the expected replies are
Redis 8.4's as its documentation and its own test suite give them, byte for
byte: DIGEST is XXH3-64 as 16 lowercase hex digits with leading zeros, a
digest argument is compared case-insensitively and only its length (16) is
checked, a missing key passes IFNE/IFDNE and fails IFEQ/IFDEQ, and so on.
Where the library is installed, digests are also checked against the
reference XXH3 (libxxhash) over values of every length class."""
import ctypes
import ctypes.util
import random
import threading
import time

import pytest
import redis
from resp import Error, Simple, parse_commands

OK = Simple("OK")
SYNTAX = Error("ERR syntax error")
NOT_INT = Error("ERR value is not an integer or out of range")
WRONGTYPE = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
DIGEST_LEN = Error("ERR must be exactly 16 hexadecimal characters")
DELEX_TYPE = Error("ERR Key should be of string type if conditions are specified")
DELEX_COND = Error("ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE")
NUMKEYS = Error("ERR invalid numkeys value")
PAIRS = Error("ERR wrong number of key-value pairs")

HELLO = b"9555e8555c62dcfd"  # DIGEST of "hello"
# Values whose digests Redis 8.4's documentation and tests show.
KNOWN = [(b"hello", HELLO), (b"", b"2d06800538d394c2"), (b"123", b"404a763b3f4c8c9a"),
         (b"v8", b"0cc76dbb41381419"), (b"Hello world", b"b6acb9d84a38ff74"), (b"test", b"9ec9f7918d7dfc40"),
         (b"v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzkjytls2kwlj7626sd",
          b"00006c38adf31777")]


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


def bad_expire(name):
    return Error("ERR invalid expire time in '%s' command" % name)


def wrong_digest(d):
    """A digest of the right length that is not d."""
    return b"%016x" % ((int(d, 16) + 1) % (1 << 64))


def reference_xxh3():
    """XXH3_64bits from the system's libxxhash, or None."""
    for name in (ctypes.util.find_library("xxhash"), "libxxhash.so.0"):
        if not name:
            continue
        try:
            fn = ctypes.CDLL(name).XXH3_64bits
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_uint64
        fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        return lambda b: b"%016x" % fn(b, len(b))
    return None


@pytest.fixture
def other(conn):
    conn.cmd("RPUSH", "list", "a")
    return "list"


# ---- DIGEST ------------------------------------------------------------------------


def test_digest_known_values(conn):
    for value, digest in KNOWN:
        conn.cmd("SET", "k", value)
        assert conn.cmd("DIGEST", "k") == digest, value


def test_digest_integer_encoding_is_its_digits(conn):
    conn.cmd("SET", "n", "12345")
    assert conn.cmd("OBJECT", "ENCODING", "n") == b"int"
    conn.cmd("SET", "t", "12345x")
    conn.cmd("SETRANGE", "t", 5, "")  # same bytes, raw
    conn.cmd("SET", "s", "12345")
    conn.cmd("APPEND", "s", "")
    assert conn.cmd("DIGEST", "n") == conn.cmd("DIGEST", "s")
    conn.cmd("SET", "neg", "-999")
    conn.cmd("SET", "negs", b"-999")
    assert conn.cmd("DIGEST", "neg") == conn.cmd("DIGEST", "negs")


def test_digest_missing_wrong_type_arity(conn, other):
    assert conn.cmd("DIGEST", "nokey") is None
    assert conn.cmd("DIGEST", other) == WRONGTYPE
    assert conn.cmd("DIGEST") == arity("digest")
    assert conn.cmd("DIGEST", "a", "b") == arity("digest")


def test_digest_wire(conn, conn3):
    conn.cmd("SET", "k", "hello")
    assert conn.cmd_raw("DIGEST", "k") == b"$16\r\n" + HELLO + b"\r\n"
    assert conn.cmd_raw("DIGEST", "nokey") == b"$-1\r\n"
    assert conn3.cmd_raw("DIGEST", "k") == b"$16\r\n" + HELLO + b"\r\n"
    assert conn3.cmd_raw("DIGEST", "nokey") == b"_\r\n"


def test_digest_matches_reference_xxh3(conn):
    ref = reference_xxh3()
    if ref is None:
        pytest.skip("libxxhash not installed")
    rnd = random.Random(84)
    lengths = list(range(0, 260)) + [511, 512, 1023, 1024, 1025, 4095, 4096, 4097, 65536, 100001, 1 << 20]
    for n in lengths:
        value = rnd.randbytes(n)
        conn.cmd("SET", "k", value)
        assert conn.cmd("DIGEST", "k") == ref(value), n


def test_digest_leading_zeros_kept(conn):
    ref = reference_xxh3()
    conn.cmd("SET", "k", KNOWN[-1][0])
    assert conn.cmd("DIGEST", "k") == b"00006c38adf31777"
    if ref is not None:
        # Find a few more with a leading zero digit.
        found = 0
        for i in range(2000):
            v = b"z%d" % i
            if ref(v).startswith(b"0"):
                conn.cmd("SET", "k", v)
                assert conn.cmd("DIGEST", "k") == ref(v)
                found += 1
        assert found > 10


# ---- SET IFEQ / IFNE / IFDEQ / IFDNE -----------------------------------------------------


def test_set_ifeq(conn):
    conn.cmd("SET", "k", "hello")
    assert conn.cmd("SET", "k", "world", "IFEQ", "hello") == OK
    assert conn.cmd("GET", "k") == b"world"
    assert conn.cmd("SET", "k", "again", "IFEQ", "hello") is None
    assert conn.cmd("GET", "k") == b"world"
    # A missing key is never equal: not created.
    assert conn.cmd("SET", "nokey", "v", "IFEQ", "") is None
    assert conn.cmd("EXISTS", "nokey") == 0
    # Bytes, not numbers: "0123" is not "123".
    conn.cmd("SET", "n", "0123")
    assert conn.cmd("SET", "n", "x", "IFEQ", "123") is None
    conn.cmd("SET", "n", "123")
    assert conn.cmd("OBJECT", "ENCODING", "n") == b"int"
    assert conn.cmd("SET", "n", "x", "IFEQ", "123") == OK
    # Empty and binary values.
    conn.cmd("SET", "e", "")
    assert conn.cmd("SET", "e", "full", "ifeq", "") == OK
    binary = b"\x00\x01\xff\xfe\r\n"
    conn.cmd("SET", "b", binary)
    assert conn.cmd("SET", "b", "x", "IfEq", binary[:-1]) is None
    assert conn.cmd("SET", "b", "x", "IFEQ", binary) == OK


def test_set_ifne(conn):
    conn.cmd("SET", "k", "hello")
    assert conn.cmd("SET", "k", "world", "IFNE", "hello") is None
    assert conn.cmd("GET", "k") == b"hello"
    assert conn.cmd("SET", "k", "world", "IFNE", "other") == OK
    assert conn.cmd("GET", "k") == b"world"
    # A missing key is different from anything: created.
    assert conn.cmd("SET", "nokey", "v", "IFNE", "x") == OK
    assert conn.cmd("GET", "nokey") == b"v"
    conn.cmd("SET", "e", "")
    assert conn.cmd("SET", "e", "x", "IFNE", "") is None
    assert conn.cmd("GET", "e") == b""


def test_set_ifdeq_ifdne(conn):
    conn.cmd("SET", "k", "hello")
    assert conn.cmd("SET", "k", "x", "IFDEQ", wrong_digest(HELLO)) is None
    assert conn.cmd("GET", "k") == b"hello"
    assert conn.cmd("SET", "k", "world", "IFDEQ", HELLO) == OK
    assert conn.cmd("GET", "k") == b"world"
    d = conn.cmd("DIGEST", "k")
    assert conn.cmd("SET", "k", "x", "IFDNE", d) is None
    assert conn.cmd("SET", "k", "again", "IFDNE", HELLO) == OK
    assert conn.cmd("GET", "k") == b"again"
    # A missing key: IFDEQ does not create, IFDNE does.
    assert conn.cmd("SET", "m1", "v", "IFDEQ", HELLO) is None
    assert conn.cmd("EXISTS", "m1") == 0
    assert conn.cmd("SET", "m2", "v", "IFDNE", HELLO) == OK
    assert conn.cmd("GET", "m2") == b"v"


def test_set_digest_case_and_format(conn):
    conn.cmd("SET", "k", "hello")
    assert conn.cmd("SET", "k", "x", "IFDNE", HELLO.upper()) is None
    assert conn.cmd("SET", "k", "world", "IFDEQ", HELLO.upper()) == OK
    # Only the length is checked: 16 characters that are not hex never match.
    conn.cmd("SET", "k", "hello")
    assert conn.cmd("SET", "k", "x", "IFDEQ", "z" * 16) is None
    assert conn.cmd("SET", "k", "y", "IFDNE", "z" * 16) == OK
    # Another length is an error on an existing key...
    conn.cmd("SET", "k", "hello")
    for bad in (b"", b"0123", HELLO[1:], b"0" + HELLO, b"0x" + HELLO):
        assert conn.cmd("SET", "k", "x", "IFDEQ", bad) == DIGEST_LEN, bad
        assert conn.cmd("SET", "k", "x", "IFDNE", bad) == DIGEST_LEN, bad
        assert conn.cmd("SET", "k", "x", "IFDEQ", bad, "GET") == DIGEST_LEN, bad
    assert conn.cmd("GET", "k") == b"hello"
    # ...but not checked on a missing one, as in Redis.
    assert conn.cmd("SET", "m1", "v", "IFDEQ", "1234567890") is None
    assert conn.cmd("SET", "m2", "v", "IFDNE", "1234567890") == OK
    assert conn.cmd("GET", "m2") == b"v"


def test_set_if_with_get(conn):
    conn.cmd("SET", "k", "hello")
    # GET replies the old value whether or not the write happened.
    assert conn.cmd("SET", "k", "world", "IFEQ", "different", "GET") == b"hello"
    assert conn.cmd("GET", "k") == b"hello"
    assert conn.cmd("SET", "k", "world", "GET", "IFEQ", "hello") == b"hello"
    assert conn.cmd("GET", "k") == b"world"
    assert conn.cmd("SET", "k", "x", "IFNE", "world", "GET") == b"world"
    assert conn.cmd("SET", "k", "x", "IFNE", "other", "GET") == b"world"
    assert conn.cmd("GET", "k") == b"x"
    d = conn.cmd("DIGEST", "k")
    assert conn.cmd("SET", "k", "y", "IFDEQ", d, "GET") == b"x"
    assert conn.cmd("SET", "k", "z", "IFDNE", conn.cmd("DIGEST", "k"), "GET") == b"y"
    assert conn.cmd("GET", "k") == b"y"
    # Missing key: null, created or not.
    assert conn.cmd("SET", "m1", "v", "IFEQ", "a", "GET") is None
    assert conn.cmd("EXISTS", "m1") == 0
    assert conn.cmd("SET", "m2", "v", "IFNE", "a", "GET") is None
    assert conn.cmd("GET", "m2") == b"v"
    assert conn.cmd("SET", "m3", "v", "IFDEQ", HELLO, "GET") is None
    assert conn.cmd("SET", "m4", "v", "IFDNE", HELLO, "GET") is None
    assert conn.cmd("EXISTS", "m3", "m4") == 1
    # An integer value is replied as its digits.
    conn.cmd("SET", "n", "42")
    assert conn.cmd("SET", "n", "43", "IFEQ", "42", "GET") == b"42"


def test_set_if_wrong_type(conn, other):
    for cond, arg in (("IFEQ", "a"), ("IFNE", "a"), ("IFDEQ", HELLO), ("IFDNE", HELLO), ("IFDEQ", "short")):
        assert conn.cmd("SET", other, "v", cond, arg) == WRONGTYPE, cond
        assert conn.cmd("SET", other, "v", cond, arg, "GET") == WRONGTYPE, cond
    assert conn.cmd("TYPE", other) == "list"
    assert conn.cmd("LRANGE", other, 0, -1) == [b"a"]


def test_set_if_expiry(conn):
    conn.cmd("SET", "k", "hello")
    assert conn.cmd("SET", "k", "world", "IFEQ", "hello", "EX", 100) == OK
    assert 90 <= conn.cmd("TTL", "k") <= 100
    # The TTL goes with a plain write, stays with KEEPTTL.
    assert conn.cmd("SET", "k", "a", "IFNE", "x") == OK
    assert conn.cmd("TTL", "k") == -1
    conn.cmd("SET", "k", "a", "PX", 100000)
    assert conn.cmd("SET", "k", "b", "IFEQ", "a", "KEEPTTL") == OK
    assert 90000 <= conn.cmd("PTTL", "k") <= 100000
    assert conn.cmd("SET", "k", "c", "KEEPTTL", "IFDEQ", conn.cmd("DIGEST", "k")) == OK
    assert conn.cmd("PTTL", "k") > 0
    # A failed condition leaves value and TTL alone.
    assert conn.cmd("SET", "k", "d", "IFEQ", "nope", "EX", 5) is None
    assert conn.cmd("PTTL", "k") > 10000 and conn.cmd("GET", "k") == b"c"
    # An absolute time already past deletes the key; the reply is still OK.
    assert conn.cmd("SET", "k", "e", "IFEQ", "c", "PXAT", 1) == OK
    assert conn.cmd("EXISTS", "k") == 0
    # Expiry errors come first.
    conn.cmd("SET", "k", "v")
    assert conn.cmd("SET", "k", "w", "IFEQ", "v", "EX", 0) == bad_expire("set")
    assert conn.cmd("SET", "k", "w", "IFEQ", "v", "EX", "x") == NOT_INT
    assert conn.cmd("SET", "k", "w", "IFDEQ", "bad", "EX", -1) == bad_expire("set")
    assert conn.cmd("GET", "k") == b"v"


def test_set_if_syntax(conn):
    conn.cmd("SET", "k", "v")
    bad = [("IFEQ",), ("IFEQ", "v", "IFNE", "v"), ("IFEQ", "v", "NX"), ("NX", "IFEQ", "v"),
           ("XX", "IFDEQ", HELLO), ("IFDNE", HELLO, "XX"), ("IFNE", "v", "IFDEQ", HELLO),
           ("IFEQ", "v", "EX"), ("IFEQ", "v", "KEEPTTL", "EX", 10), ("IFEQ", "v", "PERSIST"),
           ("IFXX", "v"), ("NX", "XX")]
    for opts in bad:
        assert conn.cmd("SET", "k", "w", *opts) == SYNTAX, opts
    assert conn.cmd("GET", "k") == b"v"
    # The same condition given twice: the last value counts.
    assert conn.cmd("SET", "k", "w", "IFEQ", "nope", "IFEQ", "v") == OK
    assert conn.cmd("GET", "k") == b"w"
    # A condition's value may look like an option.
    conn.cmd("SET", "k", "GET")
    assert conn.cmd("SET", "k", "EX", "IFEQ", "GET") == OK
    assert conn.cmd("GET", "k") == b"EX"
    assert conn.cmd("TTL", "k") == -1


def test_set_if_resp3(conn3):
    conn3.cmd("SET", "k", "v")
    assert conn3.cmd_raw("SET", "k", "w", "IFEQ", "nope") == b"_\r\n"
    assert conn3.cmd_raw("SET", "nokey", "w", "IFEQ", "x", "GET") == b"_\r\n"
    assert conn3.cmd_raw("SET", "k", "w", "IFEQ", "v") == b"+OK\r\n"
    assert conn3.cmd_raw("SET", "k", "x", "IFNE", "v", "GET") == b"$1\r\nw\r\n"


def test_set_if_breaks_watch_only_when_it_writes(r):
    r.set("k", "v")
    with r.pipeline() as p:
        p.watch("k")
        assert r.execute_command("SET", "k", "w", "IFEQ", "nope") is None
        p.multi()
        p.get("k")
        assert p.execute() == [b"v"]
    with r.pipeline() as p:
        p.watch("k")
        assert r.execute_command("SET", "k", "w", "IFEQ", "v") is True
        p.multi()
        p.get("k")
        with pytest.raises(redis.WatchError):
            p.execute()


def test_set_if_concurrent_compare_and_set(server):
    """Many clients increment one counter with GET + SET IFEQ retries on
    several threads: every increment lands exactly once."""
    clients, rounds = 8, 60
    setup = server.client()
    setup.set("cas", 0)

    def worker():
        c = server.client()
        for _ in range(rounds):
            while True:
                cur = c.get("cas")
                if c.execute_command("SET", "cas", int(cur) + 1, "IFEQ", cur):
                    break
        c.close()

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert int(setup.get("cas")) == clients * rounds
    setup.close()


# ---- DELEX ------------------------------------------------------------------------------


def test_delex_without_condition(conn, other):
    assert conn.cmd("DELEX", "nokey") == 0
    conn.cmd("SET", "k", "v")
    assert conn.cmd("DELEX", "k") == 1
    assert conn.cmd("EXISTS", "k") == 0
    assert conn.cmd("DELEX", other) == 1
    assert conn.cmd("EXISTS", other) == 0
    conn.cmd("HSET", "h", "f", "v")
    assert conn.cmd("DELEX", "h") == 1


def test_delex_conditions(conn):
    conn.cmd("SET", "k", "hello")
    assert conn.cmd("DELEX", "k", "IFEQ", "world") == 0
    assert conn.cmd("DELEX", "k", "IFNE", "hello") == 0
    assert conn.cmd("DELEX", "k", "IFDEQ", wrong_digest(HELLO)) == 0
    assert conn.cmd("DELEX", "k", "IFDNE", HELLO) == 0
    assert conn.cmd("GET", "k") == b"hello"
    assert conn.cmd("DELEX", "k", "ifeq", "hello") == 1
    assert conn.cmd("EXISTS", "k") == 0
    conn.cmd("SET", "k", "hello")
    assert conn.cmd("DELEX", "k", "IfNe", "world") == 1
    conn.cmd("SET", "k", "hello")
    assert conn.cmd("DELEX", "k", "IFDEQ", HELLO.upper()) == 1
    conn.cmd("SET", "k", "hello")
    assert conn.cmd("DELEX", "k", "IFDNE", "0" * 16) == 1
    assert conn.cmd("EXISTS", "k") == 0
    # Bytes, not numbers; integer values compare as their digits.
    conn.cmd("SET", "n", "0123")
    assert conn.cmd("DELEX", "n", "IFEQ", "123") == 0
    assert conn.cmd("DELEX", "n", "IFNE", "123") == 1
    conn.cmd("SET", "n", -999)
    assert conn.cmd("DELEX", "n", "IFEQ", "-999") == 1
    conn.cmd("SET", "e", "")
    assert conn.cmd("DELEX", "e", "IFEQ", "") == 1
    # Only the digest's length is checked.
    conn.cmd("SET", "k", "hello")
    assert conn.cmd("DELEX", "k", "IFDEQ", "z" * 16) == 0
    assert conn.cmd("DELEX", "k", "IFDNE", "z" * 16) == 1


def test_delex_missing_key_whatever_the_condition(conn):
    for cond in ("IFEQ", "IFNE", "IFDEQ", "IFDNE", "FOO"):
        assert conn.cmd("DELEX", "nokey", cond, "bar") == 0, cond
    assert conn.cmd("DELEX", "nokey", "IFDEQ", "short") == 0


def test_delex_errors(conn, other):
    conn.cmd("SET", "k", "hello")
    for cond in ("IFEQ", "IFNE", "IFDEQ", "IFDNE", "FOO"):
        assert conn.cmd("DELEX", other, cond, "a") == DELEX_TYPE, cond
    assert conn.cmd("EXISTS", other) == 1
    assert conn.cmd("DELEX", "k", "FOO", "hello") == DELEX_COND
    assert conn.cmd("DELEX", "k", "IF", "hello") == DELEX_COND
    for bad in (b"", b"0123", HELLO[1:], b"0" + HELLO):
        assert conn.cmd("DELEX", "k", "IFDEQ", bad) == DIGEST_LEN
        assert conn.cmd("DELEX", "k", "IFDNE", bad) == DIGEST_LEN
    for key in ("k", "nokey"):
        assert conn.cmd("DELEX", key, "IFEQ") == arity("delex")
        assert conn.cmd("DELEX", key, "IFEQ", "hello", "extra") == arity("delex")
    assert conn.cmd("DELEX") == arity("delex")
    assert conn.cmd("GET", "k") == b"hello"


def test_delex_resp3(conn3):
    conn3.cmd("SET", "k", "v")
    assert conn3.cmd_raw("DELEX", "k", "IFEQ", "x") == b":0\r\n"
    assert conn3.cmd_raw("DELEX", "k", "IFEQ", "v") == b":1\r\n"


def test_delex_breaks_watch(r):
    r.set("k", "hello")
    with r.pipeline() as p:
        p.watch("k")
        assert r.execute_command("DELEX", "k", "IFEQ", "hello") == 1
        p.multi()
        p.set("other", "x")
        with pytest.raises(redis.WatchError):
            p.execute()


def test_delex_lock_release(server):
    """The lock-release pattern: SET NX PX to take, DELEX IFEQ token to
    release; a client whose lock was taken over releases nothing."""
    a, b = server.client(), server.client()
    assert a.set("lock", "token-a", nx=True, px=50)
    assert not b.set("lock", "token-b", nx=True, px=5000)
    time.sleep(0.1)
    assert b.set("lock", "token-b", nx=True, px=5000)
    assert a.execute_command("DELEX", "lock", "IFEQ", "token-a") == 0
    assert b.get("lock") == b"token-b"
    assert b.execute_command("DELEX", "lock", "IFEQ", "token-b") == 1
    a.close()
    b.close()


# ---- MSETEX --------------------------------------------------------------------------


def test_msetex_basic(conn):
    assert conn.cmd("MSETEX", 2, "{m}a", "1", "{m}b", "four") == 1
    assert conn.cmd("MGET", "{m}a", "{m}b") == [b"1", b"four"]
    assert conn.cmd("TTL", "{m}a") == -1 and conn.cmd("TTL", "{m}b") == -1
    # Overwrites, removes an old TTL, and takes any type.
    conn.cmd("SET", "{m}a", "old", "EX", 100)
    conn.cmd("RPUSH", "{m}l", "x")
    assert conn.cmd("MSETEX", 2, "{m}a", "new", "{m}l", "str") == 1
    assert conn.cmd("TTL", "{m}a") == -1
    assert conn.cmd("GET", "{m}l") == b"str"
    # The same key twice: the last value stays.
    assert conn.cmd("MSETEX", 2, "{m}d", "x", "{m}d", "y") == 1
    assert conn.cmd("GET", "{m}d") == b"y"
    # Values are encoded as SET encodes them.
    conn.cmd("MSETEX", 1, "{m}n", "12345")
    assert conn.cmd("OBJECT", "ENCODING", "{m}n") == b"int"


def test_msetex_expirations(conn):
    assert conn.cmd("MSETEX", 2, "{m}a", "1", "{m}b", "2", "EX", 100) == 1
    assert 90 <= conn.cmd("TTL", "{m}a") <= 100 and 90 <= conn.cmd("TTL", "{m}b") <= 100
    assert conn.cmd("MSETEX", 1, "{m}c", "3", "PX", 60000) == 1
    assert 50000 <= conn.cmd("PTTL", "{m}c") <= 60000
    at = int(time.time()) + 200
    assert conn.cmd("MSETEX", 2, "{m}d", "4", "{m}e", "5", "EXAT", at) == 1
    assert conn.cmd("EXPIRETIME", "{m}e") == at
    pat = int(time.time() * 1000) + 300000
    assert conn.cmd("MSETEX", 1, "{m}f", "6", "pxat", pat) == 1
    assert conn.cmd("PEXPIRETIME", "{m}f") == pat
    # KEEPTTL keeps each key's own TTL; a key without one stays without.
    conn.cmd("SET", "{m}g", "old", "EX", 50)
    assert conn.cmd("MSETEX", 2, "{m}g", "new", "{m}h", "x", "KEEPTTL") == 1
    assert conn.cmd("GET", "{m}g") == b"new" and 40 <= conn.cmd("TTL", "{m}g") <= 50
    assert conn.cmd("TTL", "{m}h") == -1
    # A time already past: the keys are gone, the reply is still 1.
    conn.cmd("SET", "{m}p", "v")
    assert conn.cmd("MSETEX", 2, "{m}p", "1", "{m}q", "2", "PXAT", 1) == 1
    assert conn.cmd("EXISTS", "{m}p", "{m}q") == 0


def test_msetex_nx_xx(conn):
    conn.cmd("SET", "{m}old", "v", "EX", 100)
    # NX: all keys absent or nothing happens.
    assert conn.cmd("MSETEX", 2, "{m}old", "x", "{m}new", "y", "NX", "EX", 10) == 0
    assert conn.cmd("GET", "{m}old") == b"v" and conn.cmd("EXISTS", "{m}new") == 0
    assert conn.cmd("TTL", "{m}old") > 10
    assert conn.cmd("MSETEX", 2, "{m}new", "y", "{m}new2", "z", "NX") == 1
    assert conn.cmd("MGET", "{m}new", "{m}new2") == [b"y", b"z"]
    # XX: all keys present or nothing happens.
    assert conn.cmd("MSETEX", 2, "{m}old", "x", "{m}none", "y", "XX") == 0
    assert conn.cmd("GET", "{m}old") == b"v" and conn.cmd("EXISTS", "{m}none") == 0
    assert conn.cmd("MSETEX", 2, "{m}old", "x", "{m}new", "w", "EX", 30, "XX") == 1
    assert conn.cmd("MGET", "{m}old", "{m}new") == [b"x", b"w"]
    assert 20 <= conn.cmd("TTL", "{m}new") <= 30
    # A key of another type exists for NX and XX.
    conn.cmd("RPUSH", "{m}list", "a")
    assert conn.cmd("MSETEX", 1, "{m}list", "s", "NX") == 0
    assert conn.cmd("MSETEX", 1, "{m}list", "s", "XX") == 1
    assert conn.cmd("GET", "{m}list") == b"s"
    # Options in any order.
    assert conn.cmd("MSETEX", 1, "{m}o", "v", "PX", 5000, "NX") == 1
    assert conn.cmd("MSETEX", 1, "{m}o", "w", "KEEPTTL", "XX") == 1
    assert 0 < conn.cmd("PTTL", "{m}o") <= 5000


def test_msetex_errors(conn):
    assert conn.cmd("MSETEX") == arity("msetex")
    assert conn.cmd("MSETEX", 1, "k") == arity("msetex")
    for n in ("k", "0", "-1", "2147483648", "1.5", ""):
        assert conn.cmd("MSETEX", n, "k", "v", "EX", 10) == NUMKEYS, n
    assert conn.cmd("MSETEX", 2, "k1", "v1", "k2") == PAIRS
    assert conn.cmd("MSETEX", 5, "1", "1", "2", "2") == PAIRS
    assert conn.cmd("MSETEX", 2147483647, "k", "v", "EX", 10) == PAIRS
    # Arguments past the pairs are options.
    assert conn.cmd("MSETEX", 1, "1", "1", "2", "2", "EX", 10, "XX", "NX") == SYNTAX
    for opts in (("invalid",), ("NX", "XX"), ("XX", "NX"), ("EX", 10, "PX", 5000), ("EXAT", 1, "PXAT", 1000),
                 ("KEEPTTL", "EX", 10), ("EX", 10, "KEEPTTL"), ("GET",), ("IFEQ", "v"), ("PERSIST",), ("EX",)):
        assert conn.cmd("MSETEX", 2, "k1", "v1", "k2", "v2", *opts) == SYNTAX, opts
    assert conn.cmd("MSETEX", 2, "k1", "v1", "k2", "v2", "EX", -1) == bad_expire("msetex")
    assert conn.cmd("MSETEX", 2, "k1", "v1", "k2", "v2", "PX", 0) == bad_expire("msetex")
    assert conn.cmd("MSETEX", 2, "k1", "v1", "k2", "v2", "EX", "ten") == NOT_INT
    assert conn.cmd("EXISTS", "k1", "k2", "1", "2") == 0


def test_msetex_resp3(conn3):
    assert conn3.cmd_raw("MSETEX", 1, "k", "v", "EX", 10) == b":1\r\n"
    assert conn3.cmd_raw("MSETEX", 1, "k", "v", "NX") == b":0\r\n"


def test_msetex_is_atomic(server):
    """Readers on other threads never see one MSETEX half applied."""
    keys = ["{x}%d" % i for i in range(8)] + ["k%d" % i for i in range(8)]  # one shard and many
    stop = threading.Event()
    seen = []

    def writer():
        c = server.client()
        i = 0
        while not stop.is_set():
            i += 1
            args = [x for k in keys for x in (k, i)]
            c.execute_command("MSETEX", len(keys), *args, "EX", 100)
        c.close()

    def reader():
        c = server.client()
        while not stop.is_set():
            vals = c.mget(keys)
            if vals[0] is not None:
                seen.append(len(set(vals)))
        c.close()

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    stop.set()
    for t in threads:
        t.join()
    assert seen and all(n == 1 for n in seen)


# ---- command table ----------------------------------------------------------------------


def test_command_info(conn):
    info = {e[0]: e for e in conn.cmd("COMMAND", "INFO", "msetex", "delex", "digest")}
    m, d, g = info[b"msetex"], info[b"delex"], info[b"digest"]
    assert m[1] == -4 and sorted(m[2]) == ["denyoom", "movablekeys", "write"] and m[3:6] == [0, 0, 0]
    assert d[1] == -2 and sorted(d[2]) == ["fast", "write"] and d[3:6] == [1, 1, 1]
    assert g[1] == 2 and sorted(g[2]) == ["fast", "readonly"] and g[3:6] == [1, 1, 1]
    assert sorted(m[6]) == ["@slow", "@string", "@write"]
    assert sorted(d[6]) == ["@fast", "@string", "@write"]
    assert sorted(g[6]) == ["@fast", "@read", "@string"]
    assert m[7] == [b"request_policy:multi_shard", b"response_policy:all_succeeded"]
    assert m[8] == [[b"flags", ["OW", "update"], b"begin_search", [b"type", b"index", b"spec", [b"index", 1]],
                     b"find_keys", [b"type", b"keynum", b"spec",
                                    [b"keynumidx", 0, b"firstkey", 1, b"keystep", 2]]]]
    assert d[8] == [[b"flags", ["RW", "delete", "variable_flags"], b"begin_search",
                     [b"type", b"index", b"spec", [b"index", 1]], b"find_keys",
                     [b"type", b"range", b"spec", [b"lastkey", 0, b"keystep", 1, b"limit", 0]]]]
    assert g[8][0][1] == ["RO", "access"]


def test_command_getkeys(conn):
    assert conn.cmd("COMMAND", "GETKEYS", "MSETEX", 2, "a", "1", "b", "2", "EX", 100) == [b"a", b"b"]
    assert conn.cmd("COMMAND", "GETKEYS", "MSETEX", 1, "a", "1", "NX") == [b"a"]
    assert conn.cmd("COMMAND", "GETKEYSANDFLAGS", "MSETEX", 3, "a", "1", "b", "2", "c", "3") == [
        [b"a", ["OW", "update"]], [b"b", ["OW", "update"]], [b"c", ["OW", "update"]]]
    assert conn.cmd("COMMAND", "GETKEYS", "MSETEX", 3, "a", "1") == Error(
        "ERR Invalid arguments specified for command")
    assert conn.cmd("COMMAND", "GETKEYS", "DELEX", "k", "IFEQ", "v") == [b"k"]
    assert conn.cmd("COMMAND", "GETKEYS", "DIGEST", "k") == [b"k"]
    assert conn.cmd("COMMAND", "GETKEYS", "BITOP", "DIFF", "d", "a", "b") == [b"d", b"a", b"b"]


def test_command_docs(conn):
    def pairs(flat):
        return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}

    docs = pairs(conn.cmd("COMMAND", "DOCS", "msetex", "delex", "digest", "bitop"))
    m = pairs(docs[b"msetex"])
    assert m[b"since"] == b"8.4.0" and m[b"group"] == b"string"
    assert [pairs(a)[b"name"] for a in m[b"arguments"]] == [b"numkeys", b"data", b"condition", b"expiration"]
    d = pairs(docs[b"delex"])
    cond = pairs(d[b"arguments"][1])
    assert cond[b"flags"] == ["optional"]
    assert [pairs(a)[b"token"] for a in cond[b"arguments"]] == [b"IFEQ", b"IFNE", b"IFDEQ", b"IFDNE"]
    assert pairs(docs[b"digest"])[b"complexity"] == b"O(N) where N is the length of the string value."
    op = pairs(pairs(docs[b"bitop"])[b"arguments"][0])
    assert op[b"type"] == b"oneof"
    assert [pairs(a)[b"token"] for a in op[b"arguments"]] == [
        b"AND", b"OR", b"XOR", b"NOT", b"DIFF", b"DIFF1", b"ANDOR", b"ONE"]


# ---- BITOP DIFF, DIFF1, ANDOR, ONE ---------------------------------------------------


def bitop_model(op, vals):
    m = max((len(v) for v in vals), default=0)
    pad = [v + b"\x00" * (m - len(v)) for v in vals]
    out = bytearray(m)
    for i in range(m):
        x = pad[0][i]
        y = 0
        for v in pad[1:]:
            y |= v[i]
        if op == "DIFF":
            out[i] = x & ~y & 0xff
        elif op == "DIFF1":
            out[i] = ~x & y & 0xff
        elif op == "ANDOR":
            out[i] = x & y
        else:
            ones = 0
            for bit in range(8):
                if sum((v[i] >> bit) & 1 for v in pad) == 1:
                    ones |= 1 << bit
            out[i] = ones
    return bytes(out)


def test_bitop_new_operations(conn):
    conn.cmd("MSET", "{b}x", b"\xf0\xaa", "{b}y1", b"\x0f\x55", "{b}y2", b"\x3c")
    assert conn.cmd("BITOP", "DIFF", "{b}d", "{b}x", "{b}y1", "{b}y2") == 2
    assert conn.cmd("GET", "{b}d") == b"\xc0\xaa"
    assert conn.cmd("BITOP", "DIFF1", "{b}d", "{b}x", "{b}y1", "{b}y2") == 2
    assert conn.cmd("GET", "{b}d") == b"\x0f\x55"
    assert conn.cmd("BITOP", "ANDOR", "{b}d", "{b}x", "{b}y1", "{b}y2") == 2
    assert conn.cmd("GET", "{b}d") == b"\x30\x00"
    assert conn.cmd("BITOP", "ONE", "{b}d", "{b}x", "{b}y1", "{b}y2") == 2
    assert conn.cmd("GET", "{b}d") == b"\xc3\xff"
    # ONE over one key is that key; over a key and itself, nothing.
    assert conn.cmd("BITOP", "one", "{b}d", "{b}x") == 2
    assert conn.cmd("GET", "{b}d") == b"\xf0\xaa"
    assert conn.cmd("BITOP", "ONE", "{b}d", "{b}x", "{b}x") == 2
    assert conn.cmd("GET", "{b}d") == b"\x00\x00"
    # Missing keys are empty strings; the result is as long as the longest input.
    assert conn.cmd("BITOP", "DIFF", "{b}d", "{b}none", "{b}x") == 2
    assert conn.cmd("GET", "{b}d") == b"\x00\x00"
    assert conn.cmd("BITOP", "DIFF1", "{b}d", "{b}none", "{b}y2") == 1
    assert conn.cmd("GET", "{b}d") == b"\x3c"
    # All empty: the destination goes.
    conn.cmd("SET", "{b}d", "old")
    assert conn.cmd("BITOP", "ANDOR", "{b}d", "{b}none", "{b}none2") == 0
    assert conn.cmd("EXISTS", "{b}d") == 0
    # The destination may be a source, and loses its TTL.
    conn.cmd("SET", "{b}s", b"\xff", "EX", 100)
    assert conn.cmd("BITOP", "DIFF", "{b}s", "{b}s", "{b}y1") == 2
    assert conn.cmd("GET", "{b}s") == b"\xf0\x00" and conn.cmd("TTL", "{b}s") == -1


def test_bitop_new_operations_errors(conn, other):
    for op in ("DIFF", "DIFF1", "ANDOR"):
        assert conn.cmd("BITOP", op, "d", "a") == Error(
            "ERR BITOP %s must be called with at least two source keys." % op)
        assert conn.cmd("BITOP", op.lower(), "d", "a") == Error(
            "ERR BITOP %s must be called with at least two source keys." % op)
    assert conn.cmd("BITOP", "NOT", "d", "a", "b") == Error("ERR BITOP NOT must be called with a single source key.")
    assert conn.cmd("BITOP", "DIFF2", "d", "a", "b") == SYNTAX
    assert conn.cmd("BITOP", "ONE", "d") == arity("bitop")
    conn.cmd("SET", "a", "x")
    for op in ("DIFF", "DIFF1", "ANDOR", "ONE"):
        assert conn.cmd("BITOP", op, "d", "a", other) == WRONGTYPE
    assert conn.cmd("EXISTS", "d") == 0


def test_bitop_new_operations_match_model(conn):
    rnd = random.Random(82)
    for _ in range(60):
        n = rnd.randrange(2, 7)
        vals = [rnd.randbytes(rnd.choice([0, 1, 7, 31, 32, 33, 100, 257])) for _ in range(n)]
        keys = ["{b}s%d" % i for i in range(n)]
        conn.cmd("DEL", *keys)
        for k, v in zip(keys, vals):
            if v or rnd.random() < 0.5:
                conn.cmd("SET", k, v)
        for op in ("DIFF", "DIFF1", "ANDOR", "ONE"):
            want = bitop_model(op, vals)
            assert conn.cmd("BITOP", op, "{b}d", *keys) == len(want)
            assert conn.cmd("GET", "{b}d") == (want if want else None), (op, vals)


# ---- propagation --------------------------------------------------------------------


@pytest.fixture
def jr(new_server):
    srv = new_server("--enable-debug-command", "yes")
    r = srv.client()
    assert r.execute_command("DEBUG", "JOURNAL", "START") == b"OK"
    yield r
    r.execute_command("DEBUG", "JOURNAL", "STOP")


def journal_cmds(r):
    cmds = parse_commands(r.execute_command("DEBUG", "JOURNAL", "READ"))
    return [[a.upper() if j == 0 else a for j, a in enumerate(c)] for c in cmds if c[0].upper() != b"SELECT"]


def test_set_if_propagates_the_plain_write(jr):
    jr.set("k", "v", ex=100)
    journal_cmds(jr)
    assert jr.execute_command("SET", "k", "w", "IFEQ", "nope") is None
    jr.execute_command("SET", "k", "w", "IFNE", "v", "GET")  # replies "v", writes nothing
    assert jr.get("k") == b"v"
    assert journal_cmds(jr) == []
    jr.execute_command("SET", "k", "w", "IFEQ", "v", "KEEPTTL")
    jr.execute_command("SET", "k", "x", "GET", "IFDEQ", jr.execute_command("DIGEST", "k"))
    jr.execute_command("SET", "new", "y", "IFNE", "z")
    t0 = int(time.time() * 1000)
    jr.execute_command("SET", "k", "e", "IFEQ", "x", "EX", 100)
    cmds = journal_cmds(jr)
    assert cmds[:3] == [[b"SET", b"k", b"w", b"KEEPTTL"], [b"SET", b"k", b"x"], [b"SET", b"new", b"y"]]
    assert cmds[3][:4] == [b"SET", b"k", b"e", b"PXAT"] and t0 + 100000 <= int(cmds[3][4]) <= t0 + 102000
    jr.execute_command("SET", "k", "gone", "IFEQ", "e", "PXAT", 1)
    assert journal_cmds(jr) == [[b"DEL", b"k"]]


def test_delex_propagates_del(jr):
    jr.set("a", "v")
    jr.set("b", "v")
    jr.rpush("l", "x")
    journal_cmds(jr)
    assert jr.execute_command("DELEX", "a", "IFEQ", "nope") == 0
    assert jr.execute_command("DELEX", "nokey") == 0
    assert journal_cmds(jr) == []
    jr.execute_command("DELEX", "a", "IFEQ", "v")
    jr.execute_command("DELEX", "b", "IFDNE", "0" * 16)
    jr.execute_command("DELEX", "l")
    assert journal_cmds(jr) == [[b"DEL", b"a"], [b"DEL", b"b"], [b"DEL", b"l"]]


def test_msetex_propagation(jr):
    t0 = int(time.time() * 1000)
    jr.execute_command("MSETEX", 2, "a", "1", "b", "2", "NX", "EX", 100)
    jr.execute_command("MSETEX", 1, "c", "3", "PX", 5000, "XX")  # c is missing: nothing
    jr.execute_command("MSETEX", 1, "a", "4", "PXAT", t0 + 50000)
    jr.execute_command("MSETEX", 2, "a", "5", "c", "6", "KEEPTTL")
    jr.execute_command("MSETEX", 2, "a", "7", "nokey", "8", "EXAT", 1)
    jr.execute_command("MSETEX", 1, "nokey", "9", "PXAT", 1)  # nothing existed: nothing
    cmds = journal_cmds(jr)
    assert cmds[0][:7] == [b"MSETEX", b"2", b"a", b"1", b"b", b"2", b"NX"]
    assert cmds[0][7] == b"PXAT" and t0 + 100000 <= int(cmds[0][8]) <= t0 + 102000
    assert cmds[1:] == [[b"MSETEX", b"1", b"a", b"4", b"PXAT", b"%d" % (t0 + 50000)],
                        [b"MSETEX", b"2", b"a", b"5", b"c", b"6", b"KEEPTTL"],
                        [b"DEL", b"a", b"nokey"]]


def test_journal_replays_to_the_same_dataset(new_server):
    """A workload of the new commands, recorded and replayed into a fresh
    server, gives the same DEBUG DIGEST."""
    src = new_server("--enable-debug-command", "yes", threads=4)
    dst = new_server("--enable-debug-command", "yes")
    r = src.client()
    assert r.execute_command("DEBUG", "JOURNAL", "START") == b"OK"
    rnd = random.Random(7)
    keys = ["k%d" % i for i in range(20)]
    for i in range(1500):
        k, v = rnd.choice(keys), str(rnd.randrange(5))
        op = rnd.randrange(8)
        if op == 0:
            r.execute_command("SET", k, v, rnd.choice(["IFEQ", "IFNE"]), str(rnd.randrange(5)))
        elif op == 1:
            cur = r.get(k)
            if cur is None or r.type(k) != b"string":
                continue
            d = r.execute_command("DIGEST", k)
            r.execute_command("SET", k, v, rnd.choice(["IFDEQ", "IFDNE"]), d, "KEEPTTL")
        elif op == 2:
            try:
                r.execute_command("DELEX", k, rnd.choice(["IFEQ", "IFNE"]), v)
            except redis.ResponseError:
                pass
        elif op == 3:
            ks = rnd.sample(keys, 3)
            r.execute_command("MSETEX", 3, *[x for kk in ks for x in (kk, rnd.randrange(9))],
                              *rnd.choice([[], ["NX"], ["XX"]]), *rnd.choice([[], ["EX", 500], ["KEEPTTL"]]))
        elif op == 4:
            r.execute_command("BITOP", rnd.choice(["DIFF", "DIFF1", "ANDOR", "ONE"]), k, *rnd.sample(keys, 3))
        elif op == 5:
            # Long enough that nothing expires between the journal read and
            # the digest, however slow the machine.
            r.execute_command("SET", k, v, "PX", rnd.randrange(600000, 900000))
        elif op == 6:
            r.execute_command("DELEX", k)
        else:
            r.rpush(k + "l", v)
    data = r.execute_command("DEBUG", "JOURNAL", "READ")
    want = r.execute_command("DEBUG", "DIGEST")
    r.execute_command("DEBUG", "JOURNAL", "STOP")
    from resp import RespConn
    c = RespConn("127.0.0.1", dst.port, timeout=60)
    assert c.cmd("DEBUG", "JOURNAL", "APPLY", "ON") == "OK"
    n = len(parse_commands(data))
    c.send(data)
    errors = [rep for rep in (c.read() for _ in range(n)) if isinstance(rep, Error)]
    c.close()
    assert errors == []
    assert dst.client().execute_command("DEBUG", "DIGEST") == want
