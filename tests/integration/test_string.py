"""String commands: GET, SET (all options), SETNX, SETEX, PSETEX, GETSET,
GETDEL, GETEX, MGET, MSET, MSETNX, APPEND, STRLEN, INCR/DECR/INCRBY/DECRBY,
INCRBYFLOAT, GETRANGE, SUBSTR, SETRANGE, LCS.

Replies and error strings are Redis 7.2's, byte for byte. Bitmap commands
are in test_bitmap.py."""
import threading
import time

import pytest
from resp import Error, Map, Simple

OK = Simple("OK")
SYNTAX = Error("ERR syntax error")
NOT_INT = Error("ERR value is not an integer or out of range")
NOT_FLOAT = Error("ERR value is not a valid float")
OVERFLOW = Error("ERR increment or decrement would overflow")
NAN_INF = Error("ERR increment would produce NaN or Infinity")
WRONGTYPE = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
TOO_BIG = Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


def bad_expire(name):
    return Error("ERR invalid expire time in '%s' command" % name)


def need(conn, *args):
    """Run a command that another family provides; skip when it is absent."""
    reply = conn.cmd(*args)
    if isinstance(reply, Error) and reply.startswith("ERR unknown command"):
        pytest.skip("%s not available yet" % args[0])
    return reply


def encoding(conn, key):
    return need(conn, "OBJECT", "ENCODING", key)


@pytest.fixture
def other_type(conn):
    """Name of a key holding a non-string value; skipped until some other
    type's command exists."""
    for args in (("LPUSH", "otherkey", "x"), ("SADD", "otherkey", "x"),
                 ("HSET", "otherkey", "f", "v"), ("ZADD", "otherkey", "1", "x")):
        reply = conn.cmd(*args)
        if not isinstance(reply, Error):
            return "otherkey"
    pytest.skip("no non-string type available yet")


# ---- GET / SET ---------------------------------------------------------------

def test_get_set_basic(conn):
    assert conn.cmd("GET", "k") is None
    assert conn.cmd("SET", "k", "hello") == OK
    assert conn.cmd("GET", "k") == b"hello"
    assert conn.cmd("SET", "k", "") == OK
    assert conn.cmd("GET", "k") == b""
    binary = bytes(range(256)) * 3
    assert conn.cmd("SET", "bin", binary) == OK
    assert conn.cmd("GET", "bin") == binary
    assert conn.cmd("GET") == arity("get")
    assert conn.cmd("GET", "a", "b") == arity("get")
    assert conn.cmd("SET", "k") == arity("set")


def test_set_encodings(conn):
    conn.cmd("SET", "i", "12345")
    conn.cmd("SET", "neg", "-9223372036854775808")
    conn.cmd("SET", "lead0", "012")
    conn.cmd("SET", "e", "x" * 44)
    conn.cmd("SET", "r", "x" * 45)
    assert conn.cmd("GET", "i") == b"12345"
    assert conn.cmd("GET", "neg") == b"-9223372036854775808"
    assert conn.cmd("GET", "lead0") == b"012"
    assert conn.cmd("GET", "r") == b"x" * 45
    assert encoding(conn, "i") == b"int"
    assert encoding(conn, "neg") == b"int"
    assert encoding(conn, "lead0") == b"embstr"
    assert encoding(conn, "e") == b"embstr"
    assert encoding(conn, "r") == b"raw"


def test_set_overwrite_every_shape(conn):
    # A SET over a value of the same shape reuses the entry in place: the
    # result must be what a SET on a fresh key gives (value, encoding, TTL,
    # MEMORY USAGE; both keys have names of one length), whatever the old entry was.
    cases = [
        ("1", "99"), ("-5", "123456789"), ("12345", "012"), ("abc", "xyz"), ("abc", "abcd"),
        ("x" * 44, "y" * 44), ("x" * 45, "y" * 45), ("x" * 64, "y" * 64), ("x" * 64, "y" * 65),
        ("x" * 64, "7"), ("7", "z" * 64), ("x" * 100, "q" * 50), ("a" * 3000, "b" * 3000),
    ]
    for old, new in cases:
        for old_ttl in (None, "100"):
            for new_ttl in (None, "200"):
                conn.cmd("DEL", "ka", "kb")
                conn.cmd("SET", "ka", old, *(("EX", old_ttl) if old_ttl else ()))
                assert conn.cmd("SET", "ka", new, *(("EX", new_ttl) if new_ttl else ())) == OK
                conn.cmd("SET", "kb", new, *(("EX", new_ttl) if new_ttl else ()))
                assert conn.cmd("GET", "ka") == new.encode()
                assert encoding(conn, "ka") == encoding(conn, "kb")
                assert need(conn, "TTL", "ka") == (-1 if new_ttl is None else 200)
                assert conn.cmd("MEMORY", "USAGE", "ka") == conn.cmd("MEMORY", "USAGE", "kb")
    # A string grown by APPEND has slack: SET gives a fresh, tight one.
    conn.cmd("DEL", "ka")
    conn.cmd("SET", "ka", "x" * 50)
    for _ in range(20):
        conn.cmd("APPEND", "ka", "y" * 50)
    conn.cmd("SET", "ka", "z" * 1050)
    conn.cmd("SET", "kb", "z" * 1050)
    assert conn.cmd("GET", "ka") == b"z" * 1050
    assert conn.cmd("MEMORY", "USAGE", "ka") == conn.cmd("MEMORY", "USAGE", "kb")
    # MSET takes the same path.
    conn.cmd("MSET", "m1", "x" * 64, "m2", "5")
    assert conn.cmd("MSET", "m1", "w" * 64, "m2", "6") == OK
    assert conn.cmd("MGET", "m1", "m2") == [b"w" * 64, b"6"]


def test_set_nx_xx(conn):
    assert conn.cmd("SET", "k", "v1", "XX") is None
    assert conn.cmd("GET", "k") is None
    assert conn.cmd("SET", "k", "v1", "NX") == OK
    assert conn.cmd("SET", "k", "v2", "NX") is None
    assert conn.cmd("GET", "k") == b"v1"
    assert conn.cmd("SET", "k", "v3", "xx") == OK
    assert conn.cmd("GET", "k") == b"v3"
    assert conn.cmd("SET", "k", "v", "NX", "XX") == SYNTAX
    assert conn.cmd("SET", "k", "v", "XX", "NX") == SYNTAX
    # Repeating the same flag is fine.
    assert conn.cmd("SET", "k", "v4", "XX", "XX") == OK


def test_set_get_option(conn):
    assert conn.cmd("SET", "k", "v1", "GET") is None
    assert conn.cmd("SET", "k", "v2", "GET") == b"v1"
    assert conn.cmd("GET", "k") == b"v2"
    # NX with GET: the old value is returned and nothing is written.
    assert conn.cmd("SET", "k", "v3", "NX", "GET") == b"v2"
    assert conn.cmd("GET", "k") == b"v2"
    assert conn.cmd("SET", "new", "n", "NX", "GET") is None
    assert conn.cmd("GET", "new") == b"n"
    # XX with GET on a missing key: null and no write.
    assert conn.cmd("SET", "missing", "v", "XX", "GET") is None
    assert conn.cmd("EXISTS", "missing") == 0
    assert conn.cmd("SET", "k", "v5", "GET", "GET") == b"v2"
    conn.cmd("SET", "i", "42")
    assert conn.cmd("SET", "i", "x", "GET") == b"42"


def test_set_get_wrongtype(conn, other_type):
    assert conn.cmd("SET", other_type, "v", "GET") == WRONGTYPE
    # Plain SET overwrites any type.
    assert conn.cmd("SET", other_type, "v") == OK
    assert conn.cmd("GET", other_type) == b"v"


def test_set_expire_options(conn):
    assert conn.cmd("SET", "k", "v", "EX", "100") == OK
    assert 99 <= need(conn, "TTL", "k") <= 100
    assert conn.cmd("SET", "k", "v", "PX", "100000") == OK
    assert 99000 <= need(conn, "PTTL", "k") <= 100000
    now = int(time.time())
    assert conn.cmd("SET", "k", "v", "EXAT", str(now + 100)) == OK
    assert 98 <= need(conn, "TTL", "k") <= 100
    assert conn.cmd("SET", "k", "v", "PXAT", str(now * 1000 + 100000)) == OK
    assert 98000 <= need(conn, "PTTL", "k") <= 100000
    # The same option twice: the last value wins.
    assert conn.cmd("SET", "k", "v", "EX", "10", "EX", "200") == OK
    assert 199 <= need(conn, "TTL", "k") <= 200
    # Plain SET drops the TTL.
    assert conn.cmd("SET", "k", "v2") == OK
    assert need(conn, "TTL", "k") == -1


def test_set_expire_in_the_past(conn):
    conn.cmd("SET", "k", "old")
    assert conn.cmd("SET", "k", "v", "EXAT", "1") == OK
    assert conn.cmd("GET", "k") is None
    assert conn.cmd("EXISTS", "k") == 0
    assert conn.cmd("SET", "k2", "v", "PXAT", "1", "GET") is None
    assert conn.cmd("EXISTS", "k2") == 0


def test_set_px_expires(conn):
    t0 = time.time()
    assert conn.cmd("SET", "k", "v", "PX", "100") == OK
    # Still there unless 100 ms did pass (a loaded machine may stall us).
    assert conn.cmd("GET", "k") == b"v" or time.time() - t0 >= 0.1
    time.sleep(0.15)
    assert conn.cmd("GET", "k") is None


def test_set_keepttl(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    assert conn.cmd("SET", "k", "v2", "KEEPTTL") == OK
    assert conn.cmd("GET", "k") == b"v2"
    assert 99 <= need(conn, "TTL", "k") <= 100
    assert conn.cmd("SET", "nottl", "v", "KEEPTTL") == OK
    assert need(conn, "TTL", "nottl") == -1
    assert conn.cmd("SET", "k", "v", "KEEPTTL", "KEEPTTL") == OK


def test_set_option_errors(conn):
    for opts in (["EX"], ["PX"], ["EXAT"], ["PXAT"], ["FOO"], ["EX", "10", "PX", "100"],
                 ["PX", "10", "EX", "10"], ["EX", "10", "KEEPTTL"], ["KEEPTTL", "EX", "10"],
                 ["EXAT", "10", "PXAT", "10"], ["PERSIST"], ["EX", "10", "EXAT", "10"]):
        assert conn.cmd("SET", "k", "v", *opts) == SYNTAX, opts
    assert conn.cmd("SET", "k", "v", "EX", "abc") == NOT_INT
    assert conn.cmd("SET", "k", "v", "EX", "1.5") == NOT_INT
    assert conn.cmd("SET", "k", "v", "EX", "0") == bad_expire("set")
    assert conn.cmd("SET", "k", "v", "PX", "-1") == bad_expire("set")
    assert conn.cmd("SET", "k", "v", "EXAT", "0") == bad_expire("set")
    assert conn.cmd("SET", "k", "v", "EX", str(LLONG_MAX // 1000 + 1)) == bad_expire("set")
    assert conn.cmd("SET", "k", "v", "PX", str(LLONG_MAX)) == bad_expire("set")
    assert conn.cmd("SET", "k", "v", "EX", str(LLONG_MAX // 1000)) == bad_expire("set")
    # Nothing was written by the failed commands.
    assert conn.cmd("EXISTS", "k") == 0
    # An expiry error wins over NX/XX and GET.
    conn.cmd("SET", "k", "v")
    assert conn.cmd("SET", "k", "v2", "NX", "GET", "EX", "0") == bad_expire("set")
    assert conn.cmd("GET", "k") == b"v"


def test_setnx(conn):
    assert conn.cmd("SETNX", "k", "v1") == 1
    assert conn.cmd("SETNX", "k", "v2") == 0
    assert conn.cmd("GET", "k") == b"v1"
    assert conn.cmd("SETNX", "k") == arity("setnx")


def test_setnx_against_expired(conn):
    conn.cmd("SET", "k", "old", "PX", "20")
    time.sleep(0.05)
    assert conn.cmd("SETNX", "k", "new") == 1
    assert conn.cmd("GET", "k") == b"new"


def test_setex_psetex(conn):
    assert conn.cmd("SETEX", "k", "100", "v") == OK
    assert conn.cmd("GET", "k") == b"v"
    assert 99 <= need(conn, "TTL", "k") <= 100
    assert conn.cmd("PSETEX", "p", "100000", "v") == OK
    assert 99000 <= need(conn, "PTTL", "p") <= 100000
    assert conn.cmd("SETEX", "k", "0", "v") == bad_expire("setex")
    assert conn.cmd("SETEX", "k", "-10", "v") == bad_expire("setex")
    assert conn.cmd("PSETEX", "k", "0", "v") == bad_expire("psetex")
    assert conn.cmd("SETEX", "k", "x", "v") == NOT_INT
    assert conn.cmd("SETEX", "k", str(LLONG_MAX), "v") == bad_expire("setex")
    assert conn.cmd("SETEX", "k", "10") == arity("setex")
    assert conn.cmd("PSETEX", "k", "10") == arity("psetex")
    assert conn.cmd("GET", "k") == b"v"


def test_psetex_expires(conn):
    t0 = time.time()
    assert conn.cmd("PSETEX", "k", "100", "v") == OK
    # Still there unless 100 ms did pass (a loaded machine may stall us).
    assert conn.cmd("GET", "k") == b"v" or time.time() - t0 >= 0.1
    time.sleep(0.15)
    assert conn.cmd("GET", "k") is None


def test_getset(conn):
    assert conn.cmd("GETSET", "k", "v1") is None
    assert conn.cmd("GETSET", "k", "v2") == b"v1"
    assert conn.cmd("GET", "k") == b"v2"
    conn.cmd("SET", "t", "v", "EX", "100")
    assert conn.cmd("GETSET", "t", "w") == b"v"
    assert need(conn, "TTL", "t") == -1
    assert conn.cmd("GETSET", "k") == arity("getset")


def test_getset_wrongtype(conn, other_type):
    assert conn.cmd("GETSET", other_type, "v") == WRONGTYPE


def test_getdel(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("GETDEL", "k") == b"v"
    assert conn.cmd("EXISTS", "k") == 0
    assert conn.cmd("GETDEL", "k") is None
    conn.cmd("SET", "i", "100")
    assert conn.cmd("GETDEL", "i") == b"100"
    assert conn.cmd("GETDEL") == arity("getdel")


def test_getdel_wrongtype(conn, other_type):
    assert conn.cmd("GETDEL", other_type) == WRONGTYPE
    assert conn.cmd("EXISTS", other_type) == 1


def test_getex(conn):
    assert conn.cmd("GETEX", "missing") is None
    conn.cmd("SET", "k", "v")
    assert conn.cmd("GETEX", "k") == b"v"
    assert need(conn, "TTL", "k") == -1
    assert conn.cmd("GETEX", "k", "EX", "100") == b"v"
    assert 99 <= need(conn, "TTL", "k") <= 100
    assert conn.cmd("GETEX", "k", "PX", "200000") == b"v"
    assert 199000 <= need(conn, "PTTL", "k") <= 200000
    now = int(time.time())
    assert conn.cmd("GETEX", "k", "EXAT", str(now + 300)) == b"v"
    assert 298 <= need(conn, "TTL", "k") <= 300
    assert conn.cmd("GETEX", "k", "PXAT", str(now * 1000 + 400000)) == b"v"
    assert 398 <= need(conn, "TTL", "k") <= 400
    assert conn.cmd("GETEX", "k", "PERSIST") == b"v"
    assert need(conn, "TTL", "k") == -1
    assert conn.cmd("GETEX", "k", "PERSIST") == b"v"
    assert conn.cmd("GETEX") == arity("getex")


def test_getex_past_time_deletes(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("GETEX", "k", "EXAT", "1") == b"v"
    assert conn.cmd("EXISTS", "k") == 0
    conn.cmd("SET", "k", "v")
    assert conn.cmd("GETEX", "k", "PXAT", "1") == b"v"
    assert conn.cmd("EXISTS", "k") == 0


def test_getex_errors(conn):
    conn.cmd("SET", "k", "v")
    for opts in (["EX"], ["NX"], ["XX"], ["GET"], ["KEEPTTL"], ["EX", "10", "PX", "10"],
                 ["PERSIST", "EX", "10"], ["EX", "10", "PERSIST"], ["FOO"]):
        assert conn.cmd("GETEX", "k", *opts) == SYNTAX, opts
    assert conn.cmd("GETEX", "k", "EX", "x") == NOT_INT
    assert conn.cmd("GETEX", "k", "EX", "0") == bad_expire("getex")
    assert conn.cmd("GETEX", "k", "PX", "-5") == bad_expire("getex")
    # The expiry is only checked when the key exists; syntax always.
    assert conn.cmd("GETEX", "nokey", "EX", "-5") is None
    assert conn.cmd("GETEX", "nokey", "EX", "x") is None
    assert conn.cmd("GETEX", "nokey", "FOO") == SYNTAX
    assert need(conn, "TTL", "k") == -1


def test_getex_wrongtype(conn, other_type):
    assert conn.cmd("GETEX", other_type, "EX", "10") == WRONGTYPE


def test_resp3_nulls(conn3):
    assert conn3.cmd_raw("GET", "nokey") == b"_\r\n"
    assert conn3.cmd_raw("GETDEL", "nokey") == b"_\r\n"
    assert conn3.cmd_raw("GETEX", "nokey") == b"_\r\n"
    assert conn3.cmd_raw("GETSET", "k", "v") == b"_\r\n"
    assert conn3.cmd_raw("SET", "k", "v", "NX") == b"_\r\n"
    assert conn3.cmd_raw("SET", "n", "v", "GET") == b"_\r\n"
    assert conn3.cmd_raw("MGET", "k", "nokey") == b"*2\r\n$1\r\nv\r\n_\r\n"
    assert conn3.cmd_raw("INCRBYFLOAT", "f", "1.5") == b"$3\r\n1.5\r\n"


def test_resp2_wire(conn):
    assert conn.cmd_raw("GET", "nokey") == b"$-1\r\n"
    assert conn.cmd_raw("SET", "k", "v") == b"+OK\r\n"
    assert conn.cmd_raw("SET", "k", "v", "NX") == b"$-1\r\n"
    assert conn.cmd_raw("MGET", "k", "nokey") == b"*2\r\n$1\r\nv\r\n$-1\r\n"
    assert conn.cmd_raw("SETNX", "k", "v") == b":0\r\n"
    assert conn.cmd_raw("GETRANGE", "nokey", "0", "-1") == b"$0\r\n\r\n"


# ---- MGET / MSET / MSETNX -----------------------------------------------------

def test_mget(conn):
    conn.cmd("SET", "a", "1")
    conn.cmd("SET", "b", "two")
    assert conn.cmd("MGET", "a", "nokey", "b", "a") == [b"1", None, b"two", b"1"]
    assert conn.cmd("MGET") == arity("mget")


def test_mget_non_string_is_null(conn, other_type):
    conn.cmd("SET", "a", "1")
    assert conn.cmd("MGET", "a", other_type) == [b"1", None]


def test_mset(conn):
    assert conn.cmd("MSET", "a", "1", "b", "2", "{t}c", "3") == OK
    assert conn.cmd("MGET", "a", "b", "{t}c") == [b"1", b"2", b"3"]
    # Later pairs win for a repeated key.
    assert conn.cmd("MSET", "a", "x", "a", "y") == OK
    assert conn.cmd("GET", "a") == b"y"
    assert conn.cmd("MSET", "a") == arity("mset")
    assert conn.cmd("MSET", "a", "1", "b") == arity("mset")
    conn.cmd("SET", "t", "v", "EX", "100")
    conn.cmd("MSET", "t", "w")
    assert need(conn, "TTL", "t") == -1


def test_mset_overwrites_other_types(conn, other_type):
    assert conn.cmd("MSET", other_type, "v") == OK
    assert conn.cmd("GET", other_type) == b"v"


def test_msetnx(conn):
    assert conn.cmd("MSETNX", "a", "1", "b", "2") == 1
    assert conn.cmd("MSETNX", "b", "x", "c", "3") == 0
    assert conn.cmd("MGET", "a", "b", "c") == [b"1", b"2", None]
    assert conn.cmd("MSETNX", "c", "x", "c", "y") == 1
    assert conn.cmd("GET", "c") == b"y"
    assert conn.cmd("MSETNX", "d") == arity("msetnx")
    assert conn.cmd("MSETNX", "d", "1", "e") == arity("msetnx")
    assert conn.cmd("EXISTS", "d") == 0


def test_mset_many_keys(conn):
    args = []
    for i in range(500):
        args += ["key:%d" % i, "val:%d" % i]
    assert conn.cmd("MSET", *args) == OK
    got = conn.cmd("MGET", *["key:%d" % i for i in range(500)])
    assert got == [b"val:%d" % i for i in range(500)]


def test_mset_atomic_under_concurrent_mget(server, r):
    """MSET of 10 keys in different shards is never seen half applied."""
    keys = ["atomic:%d" % i for i in range(10)]
    r.mset({k: "0" for k in keys})
    stop = threading.Event()
    errors = []

    def writer():
        c = server.client()
        n = 0
        while not stop.is_set():
            n += 1
            c.mset({k: str(n) for k in keys})
        c.close()

    def reader():
        c = server.client()
        for _ in range(1500):
            vals = c.mget(keys)
            if len(set(vals)) != 1:
                errors.append(vals)
                break
        c.close()

    w = threading.Thread(target=writer)
    readers = [threading.Thread(target=reader) for _ in range(3)]
    w.start()
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    stop.set()
    w.join()
    assert not errors, errors[:1]


# ---- APPEND / STRLEN ------------------------------------------------------------

def test_append(conn):
    assert conn.cmd("APPEND", "k", "hello") == 5
    assert conn.cmd("APPEND", "k", " world") == 11
    assert conn.cmd("GET", "k") == b"hello world"
    assert conn.cmd("APPEND", "k", "") == 11
    assert conn.cmd("APPEND", "e", "") == 0
    assert conn.cmd("EXISTS", "e") == 1
    assert conn.cmd("GET", "e") == b""
    assert conn.cmd("APPEND", "k") == arity("append")


def test_append_encodings(conn):
    # A new key gets SET's encoding; appending makes the value raw.
    conn.cmd("APPEND", "i", "10")
    assert encoding(conn, "i") == b"int"
    assert conn.cmd("APPEND", "i", "5") == 3
    assert conn.cmd("GET", "i") == b"105"
    assert encoding(conn, "i") == b"raw"
    assert conn.cmd("INCR", "i") == 106
    assert encoding(conn, "i") == b"int"
    conn.cmd("SET", "e", "abc")
    conn.cmd("APPEND", "e", "")
    assert encoding(conn, "e") == b"raw"


def test_append_grows_in_place(conn):
    expect = b""
    for i in range(300):
        piece = (b"%d-" % i) * (i % 7 + 1)
        expect += piece
        assert conn.cmd("APPEND", "k", piece) == len(expect)
    assert conn.cmd("GET", "k") == expect
    assert conn.cmd("STRLEN", "k") == len(expect)


def test_append_large(conn):
    # Past 1MB the raw string grows by fixed steps instead of doubling.
    chunk = bytes(range(256)) * 400
    for i in range(30):
        assert conn.cmd("APPEND", "big", chunk) == len(chunk) * (i + 1)
    total = len(chunk) * 30
    assert conn.cmd("STRLEN", "big") == total
    assert conn.cmd("GETRANGE", "big", str(total - 3), "-1") == chunk[-3:]
    assert conn.cmd("GETRANGE", "big", str(len(chunk) * 17), str(len(chunk) * 17 + 255)) == bytes(range(256))
    assert conn.cmd("SETRANGE", "big", str(total + 1000000), "end") == total + 1000003
    assert conn.cmd("GETRANGE", "big", str(total - 1), str(total + 1)) == chunk[-1:] + b"\x00\x00"
    assert conn.cmd("GET", "big") == chunk * 30 + b"\x00" * 1000000 + b"end"


def test_append_concurrent(server, r):
    """Concurrent APPENDs to one key lose nothing."""
    def work(tag):
        c = server.client()
        p = c.pipeline(transaction=False)
        for _ in range(500):
            p.append("log", tag)
        p.execute()
        c.close()

    threads = [threading.Thread(target=work, args=(t,)) for t in "abcdefgh"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    value = r.get("log")
    assert len(value) == 4000
    for t in "abcdefgh":
        assert value.count(t.encode()) == 500


def test_append_keeps_ttl(conn):
    conn.cmd("SET", "k", "v", "EX", "100")
    conn.cmd("APPEND", "k", "more")
    assert conn.cmd("GET", "k") == b"vmore"
    assert 99 <= need(conn, "TTL", "k") <= 100


def test_append_wrongtype(conn, other_type):
    assert conn.cmd("APPEND", other_type, "x") == WRONGTYPE


def test_strlen(conn):
    assert conn.cmd("STRLEN", "nokey") == 0
    conn.cmd("SET", "k", "hello")
    assert conn.cmd("STRLEN", "k") == 5
    conn.cmd("SET", "i", "-12345")
    assert conn.cmd("STRLEN", "i") == 6
    conn.cmd("SET", "e", "")
    assert conn.cmd("STRLEN", "e") == 0
    conn.cmd("SET", "r", "x" * 1000)
    assert conn.cmd("STRLEN", "r") == 1000
    assert conn.cmd("STRLEN") == arity("strlen")


def test_strlen_wrongtype(conn, other_type):
    assert conn.cmd("STRLEN", other_type) == WRONGTYPE


# ---- INCR family ------------------------------------------------------------------

def test_incr_decr(conn):
    assert conn.cmd("INCR", "n") == 1
    assert conn.cmd("INCR", "n") == 2
    assert conn.cmd("DECR", "n") == 1
    assert conn.cmd("DECR", "m") == -1
    assert conn.cmd("INCRBY", "n", "10") == 11
    assert conn.cmd("INCRBY", "n", "-20") == -9
    assert conn.cmd("DECRBY", "n", "1") == -10
    assert conn.cmd("DECRBY", "n", "-100") == 90
    assert conn.cmd("GET", "n") == b"90"
    assert encoding(conn, "n") == b"int"
    assert conn.cmd("INCR") == arity("incr")
    assert conn.cmd("INCRBY", "n") == arity("incrby")


def test_incr_string_forms(conn):
    conn.cmd("SET", "s", "17179869184")
    assert conn.cmd("INCR", "s") == 17179869185
    conn.cmd("SET", "r", "1" + "0" * 18)  # long number stored as int
    assert conn.cmd("INCRBY", "r", "5") == 10 ** 18 + 5
    for bad in ("abc", "1.5", " 1", "1 ", "+1", "01", "", "-0", "1e3",
                "99999999999999999999"):
        conn.cmd("SET", "bad", bad)
        assert conn.cmd("INCR", "bad") == NOT_INT, bad
        assert conn.cmd("GET", "bad") == bad.encode()
    conn.cmd("SET", "raw", "x" * 50)
    assert conn.cmd("INCR", "raw") == NOT_INT
    assert conn.cmd("INCRBY", "n", "abc") == NOT_INT
    assert conn.cmd("INCRBY", "n", "1.0") == NOT_INT
    assert conn.cmd("DECRBY", "n", "") == NOT_INT
    assert conn.cmd("EXISTS", "n") == 0


def test_incr_overflow(conn):
    conn.cmd("SET", "n", str(LLONG_MAX))
    assert conn.cmd("INCR", "n") == OVERFLOW
    assert conn.cmd("INCRBY", "n", "1") == OVERFLOW
    assert conn.cmd("INCRBY", "n", "0") == LLONG_MAX
    assert conn.cmd("DECRBY", "n", "-1") == OVERFLOW
    conn.cmd("SET", "n", str(LLONG_MIN))
    assert conn.cmd("DECR", "n") == OVERFLOW
    assert conn.cmd("INCRBY", "n", "-1") == OVERFLOW
    assert conn.cmd("INCRBY", "n", str(LLONG_MAX)) == -1
    assert conn.cmd("INCRBY", "n", str(LLONG_MIN)) == OVERFLOW
    assert conn.cmd("GET", "n") == b"-1"
    assert conn.cmd("DECRBY", "n", str(LLONG_MIN)) == Error("ERR decrement would overflow")
    assert conn.cmd("DECRBY", "z", str(LLONG_MIN)) == Error("ERR decrement would overflow")
    assert conn.cmd("DECRBY", "n", str(LLONG_MAX)) == LLONG_MIN
    assert conn.cmd("INCRBY", "x", str(LLONG_MIN)) == LLONG_MIN


def test_incr_keeps_ttl(conn):
    conn.cmd("SET", "n", "5", "EX", "100")
    assert conn.cmd("INCR", "n") == 6
    assert 99 <= need(conn, "TTL", "n") <= 100
    conn.cmd("SET", "s", "x" * 3, "EX", "100")
    conn.cmd("SET", "s", "7", "KEEPTTL")
    assert conn.cmd("INCRBY", "s", "3") == 10
    assert 99 <= need(conn, "TTL", "s") <= 100


def test_incr_wrongtype(conn, other_type):
    for args in (("INCR",), ("DECR",), ("INCRBY", "1"), ("DECRBY", "1"), ("INCRBYFLOAT", "1")):
        assert conn.cmd(args[0], other_type, *args[1:]) == WRONGTYPE


def test_incr_concurrent(server, r):
    """Many clients incrementing one key end at the exact sum."""
    def work():
        c = server.client()
        p = c.pipeline(transaction=False)
        for _ in range(2000):
            p.incr("counter")
        p.execute()
        c.close()

    threads = [threading.Thread(target=work) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert r.get("counter") == b"20000"


def test_incrbyfloat(conn):
    assert conn.cmd("INCRBYFLOAT", "f", "10.5") == b"10.5"
    assert conn.cmd("INCRBYFLOAT", "f", "0.1") == b"10.6"
    assert conn.cmd("INCRBYFLOAT", "f", "-10.6") == b"0"
    assert conn.cmd("INCRBYFLOAT", "f", "-0.5") == b"-0.5"
    assert conn.cmd("INCRBYFLOAT", "f", "5.0e3") == b"4999.5"
    assert conn.cmd("INCRBYFLOAT", "f", "2.0e2") == b"5199.5"
    assert conn.cmd("GET", "f") == b"5199.5"
    conn.cmd("SET", "i", "10")
    assert conn.cmd("INCRBYFLOAT", "i", "0") == b"10"
    assert conn.cmd("INCRBYFLOAT", "i", "-10") == b"0"
    conn.cmd("SET", "s", "3.0e3")
    assert conn.cmd("INCRBYFLOAT", "s", "1") == b"3001"
    conn.cmd("SET", "h", "0x10")
    assert conn.cmd("INCRBYFLOAT", "h", "1") == b"17"
    assert conn.cmd("INCRBYFLOAT", "p", "1e-17") == b"0.00000000000000001"
    assert conn.cmd("INCRBYFLOAT", "q", "1e20") == b"100000000000000000000"
    assert conn.cmd("INCRBYFLOAT", "f") == arity("incrbyfloat")


def test_incrbyfloat_encoding_and_ttl(conn):
    # The result is a string, never integer-encoded, and keeps the TTL.
    conn.cmd("SET", "f", "1", "EX", "100")
    assert conn.cmd("INCRBYFLOAT", "f", "2") == b"3"
    assert encoding(conn, "f") == b"embstr"
    assert 99 <= need(conn, "TTL", "f") <= 100
    assert conn.cmd("INCR", "f") == 4
    assert encoding(conn, "f") == b"int"


def test_incrbyfloat_errors(conn):
    conn.cmd("SET", "f", "1.5")
    assert conn.cmd("INCRBYFLOAT", "f", "abc") == NOT_FLOAT
    assert conn.cmd("INCRBYFLOAT", "f", "") == NOT_FLOAT
    assert conn.cmd("INCRBYFLOAT", "f", " 1") == NOT_FLOAT
    assert conn.cmd("INCRBYFLOAT", "f", "1 ") == NOT_FLOAT
    assert conn.cmd("INCRBYFLOAT", "f", "nan") == NOT_FLOAT
    assert conn.cmd("INCRBYFLOAT", "f", "1e99999") == NOT_FLOAT
    assert conn.cmd("INCRBYFLOAT", "f", "inf") == NAN_INF
    assert conn.cmd("INCRBYFLOAT", "f", "-inf") == NAN_INF
    conn.cmd("SET", "s", "abc")
    assert conn.cmd("INCRBYFLOAT", "s", "1") == NOT_FLOAT
    conn.cmd("SET", "s", "1.5 ")
    assert conn.cmd("INCRBYFLOAT", "s", "1") == NOT_FLOAT
    conn.cmd("SET", "inf", "inf")
    assert conn.cmd("INCRBYFLOAT", "inf", "1") == NAN_INF
    conn.cmd("SET", "big", "1e4932")
    assert conn.cmd("INCRBYFLOAT", "big", "1e4932") == NAN_INF
    assert conn.cmd("GET", "f") == b"1.5"
    assert conn.cmd("EXISTS", "nokey") == 0
    assert conn.cmd("INCRBYFLOAT", "nokey", "x") == NOT_FLOAT
    assert conn.cmd("EXISTS", "nokey") == 0


# ---- GETRANGE / SUBSTR / SETRANGE ---------------------------------------------------

@pytest.mark.parametrize("cmd", ["GETRANGE", "SUBSTR"])
def test_getrange(conn, cmd):
    conn.cmd("SET", "k", "Hello World")
    cases = [
        ((0, 4), b"Hello"), ((0, -1), b"Hello World"), ((-5, -1), b"World"),
        ((-3, -1), b"rld"), ((0, 100), b"Hello World"), ((5, 3), b""),
        ((-1, -5), b""), ((-100, -99), b"H"), ((0, -100), b"H"),
        ((-100, 2), b"Hel"), ((11, 20), b""), ((10, 10), b"d"), ((3, 3), b"l"),
        ((LLONG_MIN, LLONG_MAX), b"Hello World"), ((LLONG_MAX, LLONG_MAX), b""),
    ]
    for (s, e), want in cases:
        assert conn.cmd(cmd, "k", str(s), str(e)) == want, (s, e)
    conn.cmd("SET", "i", "1234")
    assert conn.cmd(cmd, "i", "0", "2") == b"123"
    assert conn.cmd(cmd, "i", "-2", "-1") == b"34"
    conn.cmd("SET", "e", "")
    assert conn.cmd(cmd, "e", "0", "-1") == b""
    assert conn.cmd(cmd, "e", "-1", "0") == b""
    assert conn.cmd(cmd, "nokey", "0", "-1") == b""
    assert conn.cmd(cmd, "k", "a", "1") == NOT_INT
    assert conn.cmd(cmd, "k", "0", "1.5") == NOT_INT
    assert conn.cmd(cmd, "nokey", "x", "1") == NOT_INT
    assert conn.cmd(cmd, "k", "0") == arity(cmd.lower())


def test_getrange_wrongtype(conn, other_type):
    assert conn.cmd("GETRANGE", other_type, "0", "-1") == WRONGTYPE


def test_setrange(conn):
    conn.cmd("SET", "k", "Hello World")
    assert conn.cmd("SETRANGE", "k", "6", "Redis") == 11
    assert conn.cmd("GET", "k") == b"Hello Redis"
    assert conn.cmd("SETRANGE", "k", "9", "xxxx") == 13
    assert conn.cmd("GET", "k") == b"Hello Redxxxx"
    assert conn.cmd("SETRANGE", "new", "5", "ab") == 7
    assert conn.cmd("GET", "new") == b"\x00" * 5 + b"ab"
    assert conn.cmd("SETRANGE", "k2", "0", "abc") == 3
    assert conn.cmd("GET", "k2") == b"abc"
    # Setting nothing: the length of what is there, nothing created.
    assert conn.cmd("SETRANGE", "nokey", "10", "") == 0
    assert conn.cmd("EXISTS", "nokey") == 0
    assert conn.cmd("SETRANGE", "k", "100", "") == 13
    assert conn.cmd("STRLEN", "k") == 13
    conn.cmd("SET", "i", "1234")
    assert conn.cmd("SETRANGE", "i", "1", "9") == 4
    assert conn.cmd("GET", "i") == b"1934"
    assert conn.cmd("SETRANGE", "k", "-1", "x") == Error("ERR offset is out of range")
    assert conn.cmd("SETRANGE", "k", "x", "x") == NOT_INT
    assert conn.cmd("SETRANGE", "k", "1") == arity("setrange")


def test_setrange_encoding_and_ttl(conn):
    conn.cmd("SET", "k", "abc", "EX", "100")
    conn.cmd("SETRANGE", "k", "1", "X")
    assert conn.cmd("GET", "k") == b"aXc"
    assert encoding(conn, "k") == b"raw"
    assert 99 <= need(conn, "TTL", "k") <= 100
    conn.cmd("SETRANGE", "n", "0", "a")
    assert encoding(conn, "n") == b"raw"
    # An empty value does not touch the encoding.
    conn.cmd("SET", "i", "12")
    conn.cmd("SETRANGE", "i", "5", "")
    assert encoding(conn, "i") == b"int"


def test_setrange_size_limit(conn):
    limit = 512 * 1024 * 1024
    assert conn.cmd("SETRANGE", "k", str(limit), "x") == TOO_BIG
    assert conn.cmd("SETRANGE", "k", str(limit - 1), "xy") == TOO_BIG
    assert conn.cmd("SETRANGE", "k", str(LLONG_MAX), "x") == TOO_BIG
    assert conn.cmd("EXISTS", "k") == 0
    conn.cmd("SET", "k", "v")
    assert conn.cmd("SETRANGE", "k", str(limit - 1), "xy") == TOO_BIG
    assert conn.cmd("GET", "k") == b"v"


def test_size_limit_configured(new_server):
    srv = new_server("--proto-max-bulk-len", "1mb")
    c = srv.conn()
    mb = 1024 * 1024
    assert c.cmd("SETRANGE", "k", str(mb - 1), "x") == mb
    assert c.cmd("SETRANGE", "k", str(mb), "x") == TOO_BIG
    assert c.cmd("APPEND", "k", "y") == TOO_BIG
    assert c.cmd("SET", "a", "x" * (mb - 10)) == OK
    assert c.cmd("APPEND", "a", "y" * 10) == mb
    assert c.cmd("APPEND", "a", "z") == TOO_BIG
    assert c.cmd("STRLEN", "a") == mb
    c.close()


def test_setrange_wrongtype(conn, other_type):
    assert conn.cmd("SETRANGE", other_type, "0", "x") == WRONGTYPE
    assert conn.cmd("SETRANGE", other_type, "0", "") == WRONGTYPE


# ---- LCS ----------------------------------------------------------------------------

def test_lcs(conn):
    conn.cmd("MSET", "{l}a", "ohmytext", "{l}b", "mynewtext")
    assert conn.cmd("LCS", "{l}a", "{l}b") == b"mytext"
    assert conn.cmd("LCS", "{l}a", "{l}b", "LEN") == 6
    assert conn.cmd("LCS", "{l}a", "{l}nokey") == b""
    assert conn.cmd("LCS", "{l}nokey", "{l}b", "LEN") == 0
    assert conn.cmd("LCS", "{l}a", "{l}a") == b"ohmytext"
    conn.cmd("MSET", "{l}i", "12345", "{l}j", "2x4")
    assert conn.cmd("LCS", "{l}i", "{l}j") == b"24"


def test_lcs_idx(conn):
    conn.cmd("MSET", "{l}a", "ohmytext", "{l}b", "mynewtext")
    assert conn.cmd("LCS", "{l}a", "{l}b", "IDX") == [
        b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]
    assert conn.cmd("LCS", "{l}a", "{l}b", "IDX", "MINMATCHLEN", "4") == [
        b"matches", [[[4, 7], [5, 8]]], b"len", 6]
    assert conn.cmd("LCS", "{l}a", "{l}b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN") == [
        b"matches", [[[4, 7], [5, 8], 4]], b"len", 6]
    assert conn.cmd("LCS", "{l}a", "{l}b", "IDX", "WITHMATCHLEN") == [
        b"matches", [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], b"len", 6]
    assert conn.cmd("LCS", "{l}a", "{l}b", "IDX", "MINMATCHLEN", "-5") == [
        b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]
    assert conn.cmd("LCS", "{l}a", "{l}b", "IDX", "MINMATCHLEN", "100") == [
        b"matches", [], b"len", 6]
    assert conn.cmd("LCS", "{l}a", "{l}nokey", "IDX") == [b"matches", [], b"len", 0]
    # WITHMATCHLEN alone is ignored.
    assert conn.cmd("LCS", "{l}a", "{l}b", "WITHMATCHLEN") == b"mytext"


def test_lcs_idx_resp3(conn3):
    conn3.cmd("MSET", "{l}a", "ohmytext", "{l}b", "mynewtext")
    reply = conn3.cmd("LCS", "{l}a", "{l}b", "IDX")
    assert isinstance(reply, Map)
    assert reply.dict() == {b"matches": [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len": 6}


def test_lcs_matches_redis_walk(conn):
    # Reference results computed with Redis 7 for inputs with ties.
    conn.cmd("MSET", "{l}a", "abcabcabc", "{l}b", "cbacba")
    assert conn.cmd("LCS", "{l}a", "{l}b") == b"cbac"
    assert conn.cmd("LCS", "{l}a", "{l}b", "IDX", "WITHMATCHLEN") == [
        b"matches", [[[8, 8], [3, 3], 1], [[6, 6], [2, 2], 1], [[4, 4], [1, 1], 1],
                     [[2, 2], [0, 0], 1]], b"len", 4]
    conn.cmd("MSET", "{l}x", "aaaa", "{l}y", "aa")
    assert conn.cmd("LCS", "{l}x", "{l}y", "IDX") == [b"matches", [[[2, 3], [0, 1]]], b"len", 2]


def test_lcs_errors(conn):
    conn.cmd("MSET", "{l}a", "abc", "{l}b", "abd")
    assert conn.cmd("LCS", "{l}a", "{l}b", "LEN", "IDX") == Error(
        "ERR If you want both the length and indexes, please just use IDX.")
    assert conn.cmd("LCS", "{l}a", "{l}b", "FOO") == SYNTAX
    assert conn.cmd("LCS", "{l}a", "{l}b", "MINMATCHLEN") == SYNTAX
    assert conn.cmd("LCS", "{l}a", "{l}b", "IDX", "MINMATCHLEN", "x") == NOT_INT
    assert conn.cmd("LCS", "{l}a") == arity("lcs")


def test_lcs_wrongtype(conn, other_type):
    conn.cmd("SET", "s", "abc")
    err = Error("ERR The specified keys must contain string values")
    assert conn.cmd("LCS", "s", other_type) == err
    assert conn.cmd("LCS", other_type, "s", "FOO") == err


def test_lcs_memory_limit(new_server):
    srv = new_server("--proto-max-bulk-len", "1mb")
    c = srv.conn()
    c.cmd("SET", "{l}a", "x" * 500)
    c.cmd("SET", "{l}b", "y" * 500)
    assert c.cmd("LCS", "{l}a", "{l}b", "LEN") == 0
    c.cmd("SET", "{l}b", "y" * 1000)
    assert c.cmd("LCS", "{l}a", "{l}b") == Error(
        "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
    c.close()
