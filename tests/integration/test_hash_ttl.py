"""Hash field expiration (Redis 7.4 / 8.0): HEXPIRE, HPEXPIRE, HEXPIREAT,
HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST, HGETDEL,
HGETEX and HSETEX, with exact RESP2/RESP3 replies and error texts; every
other hash command honouring field TTLs; lazy expiry (with the active
cycle off) and active expiry (fields go without being touched, the hash
goes with its last field, DBSIZE drops, INFO's subexpiry follows);
propagation through DEBUG JOURNAL and a replay that reproduces the
dataset; DEBUG DIGEST's marker for fields with a TTL; and concurrent
clients while fields expire.

These tests run private servers with DEBUG enabled (one per module, and
one per concurrency test), so they are skipped with --host."""
import threading
import time

import pytest
import redis

from conftest import start_server, stop_checked
from resp import Error, Map, RespConn

WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
FIELDS_MISSING = b"-ERR Mandatory argument FIELDS is missing or not at the right position\r\n"
NUMFIELDS_ARGS = b"-ERR The `numfields` parameter must match the number of arguments\r\n"
NUMFIELDS = b"-ERR Number of fields must be a positive integer\r\n"
NUMFIELDS_HFE = b"-ERR Parameter `numFields` should be greater than 0\r\n"
NOT_INT = b"-ERR value is not an integer or out of range\r\n"
NEGATIVE = b"-ERR invalid expire time, must be >= 0\r\n"
HFE_MAX_MS = ((1 << 48) - 1) >> 2


def invalid_expire(cmd):
    return b"-ERR invalid expire time in '%s' command\r\n" % cmd.encode()


def arity(cmd):
    return b"-ERR wrong number of arguments for '%s' command\r\n" % cmd.encode()


def now_ms():
    return int(time.time() * 1000)


def start_debug_server(request, threads=2):
    if request.config.getoption("--host"):
        pytest.skip("needs its own server")
    return start_server(request.config.getoption("--server-bin"), "--enable-debug-command", "yes", threads=threads)


@pytest.fixture(scope="module")
def ds(request):
    srv = start_debug_server(request)
    yield srv
    stop_checked(srv)


@pytest.fixture
def r(ds):
    c = ds.client()
    c.flushall()
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    yield c
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    c.close()


@pytest.fixture
def c2(ds, r):
    c = RespConn(ds.host, ds.port)
    yield c
    c.close()


@pytest.fixture
def c3(ds, r):
    c = RespConn(ds.host, ds.port)
    assert not isinstance(c.cmd("HELLO", "3"), Error)
    yield c
    c.close()


@pytest.fixture
def lazy(r):
    """Only lazy expiry: the active cycle is off for the test."""
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    return r


def journal_cmds(r):
    from test_exec import parse_commands
    cmds = parse_commands(r.execute_command("DEBUG", "JOURNAL", "READ"))
    return [[a.upper() if j == 0 else a for j, a in enumerate(c)] for c in cmds if c[0].upper() != b"SELECT"]


@pytest.fixture
def jr(r):
    assert r.execute_command("DEBUG", "JOURNAL", "START") == b"OK"
    r.execute_command("DEBUG", "JOURNAL", "READ")
    yield r
    r.execute_command("DEBUG", "JOURNAL", "STOP")


def wait_until(cond, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


# ---- HEXPIRE family ------------------------------------------------------


@pytest.mark.parametrize("cmd,unit,absolute", [
    ("HEXPIRE", 1000, False), ("HPEXPIRE", 1, False), ("HEXPIREAT", 1000, True), ("HPEXPIREAT", 1, True)])
def test_hexpire_family_codes(c2, cmd, unit, absolute):
    c2.cmd("HSET", "h", "a", "1", "b", "2", "c", "3")
    t = 100000 // unit
    if absolute:
        t = (now_ms() + 100000) // unit
    assert c2.cmd_raw(cmd, "h", t, "FIELDS", 3, "a", "b", "nope") == b"*3\r\n:1\r\n:1\r\n:-2\r\n"
    ttl = c2.cmd("HPTTL", "h", "FIELDS", 3, "a", "b", "c")
    assert 98000 <= ttl[0] <= 100000 and 98000 <= ttl[1] <= 100000 and ttl[2] == -1
    # A time at or before now deletes the field (code 2); the last field
    # takes the hash with it.
    past = 0
    assert c2.cmd(cmd, "h", past, "FIELDS", 2, "a", "nope") == [2, -2]
    assert c2.cmd("HEXISTS", "h", "a") == 0
    assert c2.cmd(cmd, "h", past, "FIELDS", 2, "b", "c") == [2, 2]
    assert c2.cmd("EXISTS", "h") == 0
    # A missing key: -2 per field.
    assert c2.cmd_raw(cmd, "nokey", t, "FIELDS", 2, "a", "b") == b"*2\r\n:-2\r\n:-2\r\n"


def test_hexpire_conditions(c2):
    c2.cmd("HSET", "h", "f1", "v", "f2", "v", "f3", "v")
    assert c2.cmd("HPEXPIRE", "h", 100000, "NX", "FIELDS", 1, "f1") == [1]
    assert c2.cmd("HPEXPIRE", "h", 100000, "NX", "FIELDS", 2, "f1", "f2") == [0, 1]
    assert c2.cmd("HPEXPIRE", "h", 100000, "XX", "FIELDS", 2, "f1", "f3") == [1, 0]
    # GT: a field without a TTL counts as infinite, so GT never sets it.
    assert c2.cmd("HPEXPIRE", "h", 200000, "GT", "FIELDS", 3, "f1", "f2", "f3") == [1, 1, 0]
    assert c2.cmd("HPEXPIRE", "h", 150000, "GT", "FIELDS", 1, "f1") == [0]
    # LT: always sets a field without a TTL.
    assert c2.cmd("HPEXPIRE", "h", 150000, "LT", "FIELDS", 3, "f1", "f2", "f3") == [1, 1, 1]
    assert c2.cmd("HPEXPIRE", "h", 190000, "lt", "FIELDS", 1, "f1") == [0]
    ttl = c2.cmd("HPTTL", "h", "FIELDS", 3, "f1", "f2", "f3")
    assert all(140000 < t <= 150000 for t in ttl)
    # A condition not met on a past time deletes nothing.
    assert c2.cmd("HPEXPIRE", "h", 0, "NX", "FIELDS", 1, "f1") == [0]
    assert c2.cmd("HEXISTS", "h", "f1") == 1
    assert c2.cmd("HPEXPIRE", "h", 0, "XX", "FIELDS", 1, "f1") == [2]


def test_hexpire_errors(c2):
    c2.cmd("HSET", "h", "f", "v")
    c2.cmd("SET", "s", "x")
    assert c2.cmd_raw("HEXPIRE", "s", 10, "FIELDS", 1, "f") == WRONGTYPE
    # WRONGTYPE comes before argument checks, as in Redis.
    assert c2.cmd_raw("HEXPIRE", "s", "abc", "FIELDS", 1, "f") == WRONGTYPE
    assert c2.cmd_raw("HEXPIRE", "h", "abc", "FIELDS", 1, "f") == NOT_INT
    assert c2.cmd_raw("HEXPIRE", "h", -1, "FIELDS", 1, "f") == NEGATIVE
    assert c2.cmd_raw("HEXPIRE", "h", HFE_MAX_MS // 1000 + 1, "FIELDS", 1, "f") == invalid_expire("hexpire")
    assert c2.cmd_raw("HPEXPIRE", "h", HFE_MAX_MS, "FIELDS", 1, "f") == invalid_expire("hpexpire")
    assert c2.cmd_raw("HPEXPIREAT", "h", HFE_MAX_MS + 1, "FIELDS", 1, "f") == invalid_expire("hpexpireat")
    assert c2.cmd_raw("HEXPIREAT", "h", 99999999999999, "FIELDS", 1, "f") == invalid_expire("hexpireat")
    assert c2.cmd("HPEXPIREAT", "h", HFE_MAX_MS, "FIELDS", 1, "f") == [1]
    assert c2.cmd("HPEXPIRETIME", "h", "FIELDS", 1, "f") == [HFE_MAX_MS]
    assert c2.cmd_raw("HEXPIRE", "h", 10, "FIELDS", 0, "f") == NUMFIELDS_HFE
    assert c2.cmd_raw("HEXPIRE", "h", 10, "FIELDS", "abc", "f") == NUMFIELDS_HFE
    assert c2.cmd_raw("HEXPIRE", "h", 10, "FIELDS", -1, "f") == NUMFIELDS_HFE
    assert c2.cmd_raw("HEXPIRE", "h", 10, "FIELDS", 2, "f") == NUMFIELDS_ARGS
    assert c2.cmd_raw("HEXPIRE", "h", 10, "FIELDS", 1, "f", "g") == NUMFIELDS_ARGS
    assert c2.cmd_raw("HEXPIRE", "h", 10, "NX", "XX", "FIELDS", 1, "f") == FIELDS_MISSING
    assert c2.cmd_raw("HEXPIRE", "h", 10, "BOGUS", "FIELDS", 1, "f") == FIELDS_MISSING
    assert c2.cmd_raw("HEXPIRE", "h", 10, "1", "f") == arity("hexpire")
    assert c2.cmd_raw("HPEXPIRE", "h", 10, "FIELDS", 1) == arity("hpexpire")
    # Errors change nothing.
    assert c2.cmd("HPEXPIRETIME", "h", "FIELDS", 1, "f") == [HFE_MAX_MS]


# ---- HTTL family ---------------------------------------------------------


def test_httl_family(c2, c3):
    c2.cmd("HSET", "h", "a", "1", "b", "2")
    at = now_ms() + 10500
    assert c2.cmd("HPEXPIREAT", "h", at, "FIELDS", 1, "a") == [1]
    ttl = c2.cmd("HTTL", "h", "FIELDS", 3, "a", "b", "x")
    assert ttl[1:] == [-1, -2] and ttl[0] in (10, 11)
    pttl = c2.cmd("HPTTL", "h", "FIELDS", 1, "a")[0]
    assert 9000 < pttl <= 10500
    # Seconds round up, as Redis does.
    assert c2.cmd("HEXPIRETIME", "h", "FIELDS", 2, "a", "b") == [(at + 999) // 1000, -1]
    assert c2.cmd("HPEXPIRETIME", "h", "FIELDS", 2, "b", "a") == [-1, at]
    assert c2.cmd_raw("HTTL", "nokey", "FIELDS", 2, "a", "b") == b"*2\r\n:-2\r\n:-2\r\n"
    assert c3.cmd_raw("HPEXPIRETIME", "h", "FIELDS", 2, "a", "zz") == b"*2\r\n:%d\r\n:-2\r\n" % at
    for cmd in ("HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME"):
        c2.cmd("SET", "s", "x")
        assert c2.cmd_raw(cmd, "s", "FIELDS", 1, "a") == WRONGTYPE
        assert c2.cmd_raw(cmd, "h", "FIELD", 1, "a") == FIELDS_MISSING
        assert c2.cmd_raw(cmd, "h", "FIELDS", 0, "a") == NUMFIELDS
        assert c2.cmd_raw(cmd, "h", "FIELDS", "x", "a") == NUMFIELDS
        assert c2.cmd_raw(cmd, "h", "FIELDS", 2, "a") == NUMFIELDS_ARGS
        assert c2.cmd_raw(cmd, "h", "FIELDS", 1) == arity(cmd.lower())


def test_hpersist(c2, c3):
    c2.cmd("HSET", "h", "a", "1", "b", "2")
    assert c2.cmd_raw("HPERSIST", "h", "FIELDS", 2, "a", "x") == b"*2\r\n:-1\r\n:-2\r\n"
    assert c2.cmd("OBJECT", "ENCODING", "h") == b"listpack"
    c2.cmd("HEXPIRE", "h", 100, "FIELDS", 2, "a", "b")
    assert c2.cmd("OBJECT", "ENCODING", "h") == b"listpackex"
    assert c3.cmd_raw("HPERSIST", "h", "FIELDS", 3, "a", "a", "nope") == b"*3\r\n:1\r\n:-1\r\n:-2\r\n"
    assert c2.cmd("HTTL", "h", "FIELDS", 2, "a", "b") == [-1, 100]
    assert c2.cmd("HPERSIST", "h", "FIELDS", 1, "b") == [1]
    # No TTL left: the side table goes with it.
    assert c2.cmd("OBJECT", "ENCODING", "h") == b"listpack"
    assert c2.cmd("HGETALL", "h") == [b"a", b"1", b"b", b"2"]
    assert c2.cmd_raw("HPERSIST", "nokey", "FIELDS", 1, "a") == b"*1\r\n:-2\r\n"
    c2.cmd("SET", "s", "x")
    assert c2.cmd_raw("HPERSIST", "s", "FIELDS", 1, "a") == WRONGTYPE
    assert c2.cmd_raw("HPERSIST", "h", "FIELDS", 0, "a") == NUMFIELDS
    assert c2.cmd_raw("HPERSIST", "h", "FIELDS", 3, "a") == NUMFIELDS_ARGS
    assert c2.cmd_raw("HPERSIST", "h", "a", 1, "a") == FIELDS_MISSING


# ---- HGETDEL HGETEX HSETEX -----------------------------------------------


def test_hgetdel(c2, c3):
    c2.cmd("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert c2.cmd_raw("HGETDEL", "h", "FIELDS", 3, "a", "x", "a") == b"*3\r\n$1\r\n1\r\n$-1\r\n$-1\r\n"
    assert c3.cmd_raw("HGETDEL", "h", "FIELDS", 2, "b", "zz") == b"*2\r\n$1\r\n2\r\n_\r\n"
    assert c2.cmd("HGETALL", "h") == [b"c", b"3"]
    assert c2.cmd("HGETDEL", "h", "FIELDS", 1, "c") == [b"3"]
    assert c2.cmd("EXISTS", "h") == 0
    assert c2.cmd_raw("HGETDEL", "h", "FIELDS", 2, "a", "b") == b"*2\r\n$-1\r\n$-1\r\n"
    c2.cmd("SET", "s", "x")
    assert c2.cmd_raw("HGETDEL", "s", "FIELDS", 1, "a") == WRONGTYPE
    assert c2.cmd_raw("HGETDEL", "h", "FIELD", 1, "a") == FIELDS_MISSING
    assert c2.cmd_raw("HGETDEL", "h", "FIELDS", 0, "a") == NUMFIELDS
    assert c2.cmd_raw("HGETDEL", "h", "FIELDS", 1, "a", "b") == NUMFIELDS_ARGS
    assert c2.cmd_raw("HGETDEL", "h", "FIELDS", 1) == arity("hgetdel")


def test_hgetex(c2, c3):
    c2.cmd("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert c2.cmd_raw("HGETEX", "h", "FIELDS", 2, "a", "x") == b"*2\r\n$1\r\n1\r\n$-1\r\n"
    assert c2.cmd("HTTL", "h", "FIELDS", 1, "a") == [-1]
    assert c2.cmd("HGETEX", "h", "EX", 100, "FIELDS", 2, "a", "x") == [b"1", None]
    assert c2.cmd("HTTL", "h", "FIELDS", 2, "a", "x") == [100, -2]
    assert c2.cmd("HGETEX", "h", "PX", 50000, "FIELDS", 1, "b") == [b"2"]
    assert 49000 < c2.cmd("HPTTL", "h", "FIELDS", 1, "b")[0] <= 50000
    at = now_ms() + 70000
    assert c2.cmd("HGETEX", "h", "PXAT", at, "FIELDS", 1, "c") == [b"3"]
    assert c2.cmd("HPEXPIRETIME", "h", "FIELDS", 1, "c") == [at]
    assert c2.cmd("HGETEX", "h", "EXAT", at // 1000 + 5, "FIELDS", 1, "c") == [b"3"]
    assert c2.cmd("HEXPIRETIME", "h", "FIELDS", 1, "c") == [at // 1000 + 5]
    assert c3.cmd_raw("HGETEX", "h", "PERSIST", "FIELDS", 2, "a", "nope") == b"*2\r\n$1\r\n1\r\n_\r\n"
    assert c2.cmd("HTTL", "h", "FIELDS", 1, "a") == [-1]
    # A past time deletes what it finds, the last field the hash.
    assert c2.cmd("HGETEX", "h", "PX", 0, "FIELDS", 2, "a", "b") == [b"1", b"2"]
    assert c2.cmd("HKEYS", "h") == [b"c"]
    assert c2.cmd("HGETEX", "h", "EXAT", 1, "FIELDS", 1, "c") == [b"3"]
    assert c2.cmd("EXISTS", "h") == 0
    assert c2.cmd_raw("HGETEX", "h", "EX", 10, "FIELDS", 1, "a") == b"*1\r\n$-1\r\n"
    c2.cmd("HSET", "h", "a", "1")
    c2.cmd("SET", "s", "x")
    assert c2.cmd_raw("HGETEX", "s", "EX", 10, "FIELDS", 1, "a") == WRONGTYPE
    assert c2.cmd_raw("HGETEX", "h", "EX", "abc", "FIELDS", 1, "a") == NOT_INT
    assert c2.cmd_raw("HGETEX", "h", "PX", -5, "FIELDS", 1, "a") == NEGATIVE
    assert c2.cmd_raw("HGETEX", "h", "EX", HFE_MAX_MS, "FIELDS", 1, "a") == invalid_expire("hgetex")
    assert c2.cmd_raw("HGETEX", "h", "EX", 10, "FIELD", 1, "a") == FIELDS_MISSING
    assert c2.cmd_raw("HGETEX", "h", "BOGUS", "FIELDS", 1, "a") == FIELDS_MISSING
    assert c2.cmd_raw("HGETEX", "h", "PERSIST", "FIELDS", 0, "a") == NUMFIELDS
    assert c2.cmd_raw("HGETEX", "h", "FIELDS", 2, "a") == NUMFIELDS_ARGS
    assert c2.cmd_raw("HGETEX", "h", "EX", 10, "FIELDS") == NUMFIELDS_ARGS
    assert c2.cmd("HTTL", "h", "FIELDS", 1, "a") == [-1]


def test_hsetex(c2, c3):
    assert c2.cmd_raw("HSETEX", "h", "FIELDS", 2, "a", "1", "b", "2") == b":1\r\n"
    assert c2.cmd("OBJECT", "ENCODING", "h") == b"listpack"
    assert c2.cmd("HSETEX", "h", "EX", 100, "FIELDS", 1, "a", "10") == 1
    assert c2.cmd("HTTL", "h", "FIELDS", 2, "a", "b") == [100, -1]
    assert c2.cmd("OBJECT", "ENCODING", "h") == b"listpackex"
    # KEEPTTL keeps it; a plain set drops it, as HSET does.
    assert c2.cmd("HSETEX", "h", "KEEPTTL", "FIELDS", 1, "a", "11") == 1
    assert c2.cmd("HTTL", "h", "FIELDS", 1, "a") == [100]
    assert c2.cmd("HSETEX", "h", "FIELDS", 1, "a", "12") == 1
    assert c2.cmd("HTTL", "h", "FIELDS", 1, "a") == [-1]
    assert c2.cmd("OBJECT", "ENCODING", "h") == b"listpack"
    # FNX: only when none exists; FXX: only when all exist.
    assert c3.cmd_raw("HSETEX", "h", "FNX", "PX", 50000, "FIELDS", 2, "a", "x", "c", "3") == b":0\r\n"
    assert c2.cmd("HSETEX", "h", "FNX", "PX", 50000, "FIELDS", 2, "c", "3", "d", "4") == 1
    assert c2.cmd("HSETEX", "h", "FXX", "FIELDS", 2, "a", "x", "zz", "y") == 0
    assert c2.cmd("HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", 2, "a", "x", "c", "y") == 1
    assert c2.cmd("HGETALL", "h") == [b"a", b"x", b"b", b"2", b"c", b"y", b"d", b"4"]
    assert 49000 < c2.cmd("HPTTL", "h", "FIELDS", 1, "c")[0] <= 50000
    assert c2.cmd("HSETEX", "nokey", "FXX", "FIELDS", 1, "a", "1") == 0
    assert c2.cmd("EXISTS", "nokey") == 0
    at = now_ms() + 80000
    assert c2.cmd("HSETEX", "h2", "PXAT", at, "FIELDS", 1, "a", "1") == 1
    assert c2.cmd("HPEXPIRETIME", "h2", "FIELDS", 1, "a") == [at]
    assert c2.cmd("HSETEX", "h2", "EXAT", at // 1000, "FIELDS", 1, "b", "1") == 1
    assert c2.cmd("HPEXPIRETIME", "h2", "FIELDS", 1, "b") == [at // 1000 * 1000]
    # A past time: the fields are set and deleted at once.
    assert c2.cmd("HSETEX", "h2", "PX", 0, "FIELDS", 1, "c", "1") == 1
    assert c2.cmd("HEXISTS", "h2", "c") == 0
    assert c2.cmd("HSETEX", "h3", "EXAT", 1, "FIELDS", 1, "c", "1") == 1
    assert c2.cmd("EXISTS", "h3") == 0


def test_hsetex_errors(c2):
    c2.cmd("SET", "s", "x")
    assert c2.cmd_raw("HSETEX", "s", "FIELDS", 1, "a", "1") == WRONGTYPE
    # Options are checked before the key, as in Redis.
    assert c2.cmd_raw("HSETEX", "s", "BOGUS", "FIELDS", 1, "a", "1") == b"-ERR unknown argument: BOGUS\r\n"
    assert c2.cmd_raw("HSETEX", "h", "FIELDS", 0, "a", "1") == b"-ERR invalid number of fields\r\n"
    assert c2.cmd_raw("HSETEX", "h", "FIELDS", "x", "a", "1") == b"-ERR invalid number of fields\r\n"
    assert c2.cmd_raw("HSETEX", "h", "FIELDS", 2, "a", "1") == arity("hsetex")
    assert c2.cmd_raw("HSETEX", "h", "FIELDS", 1, "a", "1", "b") == arity("hsetex")
    assert c2.cmd_raw("HSETEX", "h", "FIELDS", 1, "a") == arity("hsetex")
    assert c2.cmd_raw("HSETEX", "h", "EX", 10, "PX", 10, "FIELDS", 1, "a", "1") == \
        b"-ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified\r\n"
    assert c2.cmd_raw("HSETEX", "h", "KEEPTTL", "EX", 10, "FIELDS", 1, "a", "1") == \
        b"-ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified\r\n"
    assert c2.cmd_raw("HSETEX", "h", "FNX", "FXX", "FIELDS", 1, "a", "1") == \
        b"-ERR Only one of FXX or FNX arguments can be specified\r\n"
    assert c2.cmd_raw("HSETEX", "h", "EX", "x", "FIELDS", 1, "a", "1") == NOT_INT
    assert c2.cmd_raw("HSETEX", "h", "EX", -1, "FIELDS", 1, "a", "1") == NEGATIVE
    assert c2.cmd_raw("HSETEX", "h", "PXAT", HFE_MAX_MS + 1, "FIELDS", 1, "a", "1") == invalid_expire("hsetex")
    assert c2.cmd_raw("HSETEX", "h", "FNX", "FXX", "EX") == arity("hsetex")
    assert c2.cmd_raw("HSETEX", "h", "FNX", "FNX", "PX", "1") == \
        b"-ERR Only one of FXX or FNX arguments can be specified\r\n"
    assert c2.cmd_raw("HSETEX", "h", "FNX", "x", "PX", "1") == b"-ERR unknown argument: x\r\n"
    assert c2.cmd_raw("HSETEX", "h", "FNX", "EX", "1", "PX") == \
        b"-ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified\r\n"
    assert c2.cmd_raw("HSETEX", "h", "FXX", "FIELDS", "1", "PX") == arity("hsetex")
    assert c2.cmd("EXISTS", "h") == 0


# ---- the other hash commands honour field TTLs ---------------------------


def test_lazy_expiry_every_command(lazy, c2, c3):
    r = lazy
    r.hset("h", mapping={"a": "1", "b": "22", "c": "333", "n": "5"})
    assert r.execute_command("HPEXPIRE", "h", 30, "FIELDS", 3, "a", "b", "n") == [1, 1, 1]
    time.sleep(0.06)
    # HLEN counts fields that nothing deleted yet, as Redis 8 does.
    assert r.hlen("h") == 4
    assert r.hget("h", "a") is None
    assert r.hlen("h") == 3
    assert r.hmget("h", "a", "b", "c") == [None, None, b"333"]
    assert r.hlen("h") == 2
    assert r.hexists("h", "n") == 0
    assert r.hlen("h") == 1
    assert c2.cmd("HGETALL", "h") == [b"c", b"333"]
    assert c3.cmd("HGETALL", "h") == Map([(b"c", b"333")])
    r.execute_command("HPEXPIRE", "h", 20, "FIELDS", 1, "c")
    r.hset("h", "d", "4")
    time.sleep(0.04)
    assert r.hkeys("h") == [b"d"]
    assert r.hlen("h") == 1
    assert r.exists("h") == 1
    r.execute_command("HPEXPIRE", "h", 20, "FIELDS", 1, "d")
    time.sleep(0.04)
    # The last field expiring takes the hash with it.
    assert r.hvals("h") == []
    assert r.exists("h") == 0


def test_lazy_expiry_reads(lazy, c2):
    r = lazy

    def fresh():
        r.delete("h")
        r.hset("h", mapping={"a": "1", "b": "22", "keep": "v"})
        r.execute_command("HPEXPIRE", "h", 20, "FIELDS", 2, "a", "b")
        time.sleep(0.04)

    fresh()
    assert r.hstrlen("h", "b") == 0
    assert r.hstrlen("h", "keep") == 1
    fresh()
    assert r.hscan("h") == (0, {b"keep": b"v"})
    assert r.hlen("h") == 1
    fresh()
    assert r.hrandfield("h") == b"keep"
    fresh()
    assert r.hrandfield("h", -10) == [b"keep"] * 10
    fresh()
    assert r.hrandfield("h", 5, withvalues=True) == [b"keep", b"v"]
    fresh()
    assert c2.cmd("HTTL", "h", "FIELDS", 2, "a", "keep") == [-2, -1]
    assert r.hlen("h") == 3  # HTTL only reads
    # HPERSIST does not bring a field back, nor delete it (as Redis).
    assert c2.cmd("HPERSIST", "h", "FIELDS", 1, "a") == [-2]
    assert r.hlen("h") == 3
    assert r.hget("h", "a") is None
    fresh()
    assert r.hincrby("h", "a", 5) == 5
    assert c2.cmd("HTTL", "h", "FIELDS", 1, "a") == [-1]
    assert r.hsetnx("h", "b", "new") == 1
    assert r.hget("h", "b") == b"new"
    fresh()
    assert r.hdel("h", "a", "keep") == 1
    assert r.hgetall("h") == {}
    assert r.exists("h") == 0
    # All fields gone: commands that create start a fresh hash.
    r.hset("h", "a", "1")
    r.execute_command("HPEXPIRE", "h", 20, "FIELDS", 1, "a")
    time.sleep(0.04)
    assert r.hincrbyfloat("h", "a", 1.5) == 1.5
    assert r.hgetall("h") == {b"a": b"1.5"}
    r.execute_command("HPEXPIRE", "h", 20, "FIELDS", 1, "a")
    time.sleep(0.04)
    assert r.hset("h", "a", "2") == 1
    assert r.execute_command("HTTL", "h", "FIELDS", 1, "a") == [-1]


def test_hset_clears_ttl_hincrby_keeps(c2):
    c2.cmd("HSET", "h", "a", "1", "b", "1", "c", "1.5")
    c2.cmd("HEXPIRE", "h", 100, "FIELDS", 3, "a", "b", "c")
    assert c2.cmd("HINCRBY", "h", "a", 2) == 3
    assert c2.cmd("HINCRBYFLOAT", "h", "c", "1") == b"2.5"
    assert c2.cmd("HSET", "h", "b", "9") == 0
    assert c2.cmd("HTTL", "h", "FIELDS", 3, "a", "b", "c") == [100, -1, 100]
    assert c2.cmd("HMSET", "h", "a", "x", "c", "y") == "OK"
    assert c2.cmd("HTTL", "h", "FIELDS", 3, "a", "b", "c") == [-1, -1, -1]
    assert c2.cmd("OBJECT", "ENCODING", "h") == b"listpack"


def test_hashtable_encoding(r, c2):
    r.config_set("hash-max-listpack-entries", 4)
    try:
        r.hset("h", mapping={"f%d" % i: i for i in range(10)})
        assert r.object("encoding", "h") == b"hashtable"
        assert r.execute_command("HPEXPIRE", "h", 50, "FIELDS", 3, "f1", "f2", "f3") == [1, 1, 1]
        assert r.object("encoding", "h") == b"hashtable"
        # Listpackex converts to a table keeping its TTLs.
        r.hset("small", mapping={"a": 1, "b": 2})
        r.execute_command("HEXPIRE", "small", 100, "FIELDS", 1, "a")
        assert r.object("encoding", "small") == b"listpackex"
        r.hset("small", mapping={"c": 3, "d": 4, "e": 5})
        assert r.object("encoding", "small") == b"hashtable"
        assert r.execute_command("HTTL", "small", "FIELDS", 2, "a", "b") == [100, -1]
        assert wait_until(lambda: r.hlen("h") == 7)
        assert sorted(r.hkeys("h")) == sorted(b"f%d" % i for i in range(10) if i not in (1, 2, 3))
    finally:
        r.config_set("hash-max-listpack-entries", 128)


def test_key_commands_carry_field_ttls(r):
    r.hset("h", mapping={"a": 1, "b": 2})
    r.execute_command("HEXPIRE", "h", 100, "FIELDS", 1, "a")
    assert r.copy("h", "h2") == 1
    r.rename("h", "h3")
    assert r.execute_command("HTTL", "h2", "FIELDS", 1, "a") == [100]
    assert r.execute_command("HTTL", "h3", "FIELDS", 1, "a") == [100]
    assert r.info("keyspace")["db0"]["subexpiry"] == 2
    assert r.move("h3", 1) == 1
    assert r.info("keyspace")["db0"]["subexpiry"] == 1
    assert r.info("keyspace")["db1"]["subexpiry"] == 1
    # Renamed, moved and copied hashes still expire actively.
    r.execute_command("HPEXPIRE", "h2", 10, "FIELDS", 2, "a", "b")
    r2 = redis.Redis(host=r.connection_pool.connection_kwargs["host"],
                     port=r.connection_pool.connection_kwargs["port"], db=1)
    r2.execute_command("HPEXPIRE", "h3", 10, "FIELDS", 2, "a", "b")
    assert wait_until(lambda: r.dbsize() == 0 and r2.dbsize() == 0)
    r.hset("x", "a", 1)
    r.execute_command("HEXPIRE", "x", 100, "FIELDS", 1, "a")
    r.swapdb(0, 1)
    assert "db0" not in r.info("keyspace")
    assert r.info("keyspace")["db1"]["subexpiry"] == 1
    r.set("x2", "v")
    r2.set("x", "string now")
    assert r.info("keyspace")["db1"]["subexpiry"] == 0
    r2.close()


def test_lazyfree_of_hashes_with_field_ttls(r):
    """A big hash with field TTLs freed by the background thread (UNLINK),
    and one whose key expires with lazyfree-lazy-expire on."""
    r.hset("big", mapping={"f%d" % i: i for i in range(2000)})
    fields = ["f%d" % i for i in range(0, 2000, 2)]
    r.execute_command("HEXPIRE", "big", 100, "FIELDS", len(fields), *fields)
    assert r.info("keyspace")["db0"]["subexpiry"] == 1
    before = r.info("memory")["lazyfreed_objects"]
    assert r.unlink("big") == 1
    assert wait_until(lambda: r.info("memory")["lazyfreed_objects"] == before + 1)
    assert "db0" not in r.info("keyspace")
    r.config_set("lazyfree-lazy-expire", "yes")
    try:
        r.hset("big", mapping={"f%d" % i: i for i in range(2000)})
        r.execute_command("HEXPIRE", "big", 100, "FIELDS", len(fields), *fields)
        r.pexpire("big", 20)
        assert wait_until(lambda: r.exists("big") == 0)
        assert wait_until(lambda: r.info("memory")["lazyfreed_objects"] == before + 2)
        assert "db0" not in r.info("keyspace")
    finally:
        r.config_set("lazyfree-lazy-expire", "no")


def test_digest_marks_field_ttls(r):
    """As Redis 8's DEBUG DIGEST: a field with a TTL has a marker mixed in,
    whatever its deadline."""
    r.hset("h", mapping={"a": 1, "b": 2})
    r.hset("g", mapping={"a": 1, "b": 2})
    plain = r.execute_command("DEBUG", "DIGEST-VALUE", "h")
    r.execute_command("HEXPIRE", "h", 100, "FIELDS", 1, "a")
    r.execute_command("HEXPIRE", "g", 900, "FIELDS", 1, "a")
    marked = r.execute_command("DEBUG", "DIGEST-VALUE", "h")
    assert marked != plain
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "g") == marked
    r.execute_command("HPERSIST", "h", "FIELDS", 1, "a")
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "h") == plain


def test_memory_usage_without_ttls(r):
    """A hash that never had a TTL (or lost its last) uses what it did
    before field TTLs existed: no side table, no per-field bytes."""
    r.hset("h1", mapping={"f%d" % i: "v" for i in range(5)})
    r.hset("h2", mapping={"f%d" % i: "v" for i in range(5)})
    base = r.memory_usage("h1")
    assert r.memory_usage("h2") == base
    r.execute_command("HEXPIRE", "h2", 100, "FIELDS", 2, "f1", "f2")
    assert r.memory_usage("h2") > base
    r.execute_command("HPERSIST", "h2", "FIELDS", 2, "f1", "f2")
    assert r.memory_usage("h2") == base


# ---- active expiry -------------------------------------------------------


def test_active_expiry(r):
    # Loaded with the cycle off, so slow (sanitizer) builds see it whole.
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    for i in range(40):
        fields = ["f%d" % j for j in range(i % 5 + 1)]
        r.hset("same%d" % i, mapping={f: 1 for f in fields})
        r.execute_command("HPEXPIRE", "same%d" % i, 100, "FIELDS", len(fields), *fields)
        r.hset("mix%d" % i, mapping={"a": 1, "keep": 2})
        r.execute_command("HPEXPIRE", "mix%d" % i, 100, "FIELDS", 1, "a")
    assert r.dbsize() == 80
    assert r.info("keyspace")["db0"]["subexpiry"] == 80
    time.sleep(0.15)
    assert r.dbsize() == 80
    # Nothing touches the keys: the active cycle deletes the fields, and
    # the hashes that lose every field.
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    assert wait_until(lambda: r.dbsize() == 40)
    assert wait_until(lambda: r.info("keyspace")["db0"]["subexpiry"] == 0)
    for i in range(40):
        assert r.exists("same%d" % i) == 0
        assert r.hlen("mix%d" % i) == 1
        assert r.object("encoding", "mix%d" % i) == b"listpack"


def test_flushall_with_pending_fields(r):
    r.hset("h", mapping={"a": 1, "b": 2})
    r.execute_command("HPEXPIRE", "h", 10000, "FIELDS", 2, "a", "b")
    r.flushall()
    assert "db0" not in r.info("keyspace")
    r.hset("h", mapping={"a": 1})
    r.execute_command("HPEXPIRE", "h", 10000, "FIELDS", 1, "a")
    r.flushdb()
    r.hset("h", "a", "1")
    assert r.info("keyspace")["db0"]["subexpiry"] == 0


def test_command_info(r, c2):
    info = c2.cmd("COMMAND", "INFO", "hexpire", "httl", "hpersist", "hgetdel", "hgetex", "hsetex")
    by = {x[0]: x for x in info}
    assert by[b"hexpire"][1] == -6 and by[b"hsetex"][1] == -6
    assert by[b"httl"][1] == -5 and by[b"hgetex"][1] == -5 and by[b"hgetdel"][1] == -5
    assert set(by[b"hexpire"][2]) == {"write", "denyoom", "fast"}
    assert set(by[b"httl"][2]) == {"readonly", "fast"}
    assert set(by[b"hgetdel"][2]) == {"write", "fast"}
    assert by[b"hgetex"][3:6] == [1, 1, 1]
    assert c2.cmd("COMMAND", "GETKEYS", "HSETEX", "k", "FIELDS", 1, "f", "v") == [b"k"]


# ---- propagation ---------------------------------------------------------


def test_propagation(jr):
    r = jr
    r.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    journal_cmds(r)
    t0 = now_ms()
    r.execute_command("HEXPIRE", "h", 100, "NX", "FIELDS", 3, "a", "zz", "b")
    cmds = journal_cmds(r)
    assert len(cmds) == 1 and cmds[0][0] == b"HPEXPIREAT" and cmds[0][1] == b"h"
    assert t0 + 100000 <= int(cmds[0][2]) <= now_ms() + 100000
    assert cmds[0][3:] == [b"NX", b"FIELDS", b"2", b"a", b"b"]
    # Nothing set: nothing propagates.
    r.execute_command("HEXPIRE", "h", 100, "NX", "FIELDS", 1, "a")
    assert journal_cmds(r) == []
    # A past time: HDELs only.
    r.execute_command("HPEXPIREAT", "h", 1, "FIELDS", 2, "a", "zz")
    assert journal_cmds(r) == [[b"HDEL", b"h", b"a"]]
    r.execute_command("HPERSIST", "h", "FIELDS", 1, "b")
    assert journal_cmds(r) == [[b"HPERSIST", b"h", b"FIELDS", b"1", b"b"]]
    r.execute_command("HGETEX", "h", "EX", 50, "FIELDS", 2, "b", "c")
    cmds = journal_cmds(r)
    assert cmds[0][0] == b"HPEXPIREAT" and cmds[0][3:] == [b"FIELDS", b"2", b"b", b"c"]
    assert abs(int(cmds[0][2]) - (now_ms() + 50000)) < 5000
    r.execute_command("HGETEX", "h", "PERSIST", "FIELDS", 1, "c")
    assert journal_cmds(r) == [[b"HPERSIST", b"h", b"FIELDS", b"1", b"c"]]
    r.execute_command("HGETEX", "h", "FIELDS", 1, "c")
    assert journal_cmds(r) == []
    r.execute_command("HSETEX", "h", "FNX", "EX", 10, "FIELDS", 1, "d", "4")
    cmds = journal_cmds(r)
    assert cmds[0][:4] == [b"HSETEX", b"h", b"FNX", b"PXAT"]
    assert cmds[0][5:] == [b"FIELDS", b"1", b"d", b"4"]
    r.execute_command("HSETEX", "h", "KEEPTTL", "FIELDS", 1, "d", "5")
    assert journal_cmds(r) == [[b"HSETEX", b"h", b"KEEPTTL", b"FIELDS", b"1", b"d", b"5"]]
    r.execute_command("HSETEX", "h", "FXX", "FIELDS", 1, "zz", "5")
    assert journal_cmds(r) == []
    r.execute_command("HSETEX", "h", "PX", 0, "FIELDS", 1, "e", "5")
    assert journal_cmds(r) == [[b"HDEL", b"h", b"e"]]
    # HINCRBYFLOAT on a field with a TTL keeps it on replay.
    r.hincrbyfloat("h", "d", 1)
    assert journal_cmds(r) == [[b"HSETEX", b"h", b"KEEPTTL", b"FIELDS", b"1", b"d", b"6"]]
    r.hincrbyfloat("h", "c", 1)
    assert journal_cmds(r) == [[b"HSET", b"h", b"c", b"4"]]
    r.execute_command("HGETDEL", "h", "FIELDS", 2, "c", "nope")
    assert journal_cmds(r) == [[b"HDEL", b"h", b"c", b"nope"]]
    r.execute_command("HGETDEL", "h", "FIELDS", 1, "nope")
    assert journal_cmds(r) == []


def test_propagation_of_expiry(jr):
    r = jr
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    r.hset("h", mapping={"a": 1, "b": 2})
    r.execute_command("HPEXPIRE", "h", 20, "FIELDS", 2, "a", "b")
    journal_cmds(r)
    time.sleep(0.04)
    # A read that meets an expired field propagates its HDEL, not itself.
    assert r.hget("h", "a") is None
    assert journal_cmds(r) == [[b"HDEL", b"h", b"a"]]
    assert r.hgetall("h") == {}
    assert journal_cmds(r) == [[b"HDEL", b"h", b"b"]]
    assert r.exists("h") == 0
    # The active cycle: HDEL per field.
    r.hset("h2", mapping={"a": 1, "b": 2, "c": 3})
    r.execute_command("HPEXPIRE", "h2", 20, "FIELDS", 2, "a", "b")
    journal_cmds(r)
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    assert wait_until(lambda: r.hlen("h2") == 1)
    assert sorted(journal_cmds(r)) == [[b"HDEL", b"h2", b"a"], [b"HDEL", b"h2", b"b"]]


def test_journal_replay_matches(jr, ds, request):
    """Everything above, replayed from the journal into a fresh server,
    gives the same dataset (DEBUG DIGEST) and the same deadlines."""
    from test_exec import replay
    r = jr
    r.execute_command("DEBUG", "JOURNAL", "READ")
    r.hset("h", mapping={"f%d" % i: i for i in range(20)})
    r.execute_command("HEXPIRE", "h", 1000, "FIELDS", 3, "f1", "f2", "f3")
    r.execute_command("HPEXPIRE", "h", 40, "FIELDS", 3, "f4", "f5", "f6")
    r.execute_command("HPEXPIREAT", "h", 1, "FIELDS", 1, "f7")
    r.execute_command("HGETEX", "h", "PX", 500000, "FIELDS", 2, "f8", "f9")
    r.execute_command("HGETEX", "h", "PERSIST", "FIELDS", 1, "f8")
    r.execute_command("HSETEX", "h", "EX", 900, "FIELDS", 2, "n1", "1", "n2", "2")
    r.execute_command("HSETEX", "h", "KEEPTTL", "FIELDS", 1, "n1", "x")
    r.execute_command("HGETDEL", "h", "FIELDS", 2, "f10", "f11")
    r.hincrbyfloat("h", "f1", "0.5")
    r.hincrby("h", "f2", 3)
    r.execute_command("HPERSIST", "h", "FIELDS", 1, "f3")
    r.hset("g", mapping={"a": 1})
    r.execute_command("HPEXPIRE", "g", 30, "FIELDS", 1, "a")
    assert wait_until(lambda: r.exists("g") == 0 and r.hlen("h") == 16)
    data = r.execute_command("DEBUG", "JOURNAL", "READ")
    fresh = start_debug_server(request)
    try:
        assert replay(fresh.port, data) == []
        f = fresh.client()
        assert f.execute_command("DEBUG", "DIGEST") == r.execute_command("DEBUG", "DIGEST")
        fields = ["f%d" % i for i in range(20)] + ["n1", "n2"]
        assert f.execute_command("HPEXPIRETIME", "h", "FIELDS", len(fields), *fields) == \
            r.execute_command("HPEXPIRETIME", "h", "FIELDS", len(fields), *fields)
        f.close()
    finally:
        stop_checked(fresh)


# ---- concurrency ---------------------------------------------------------


def test_concurrent_clients_while_fields_expire(request):
    """Clients on several workers write fields with short TTLs and read
    them back while the active cycle expires them: no error, no wrong
    value, and no field returned well after its deadline."""
    srv = start_debug_server(request, threads=4)
    errors = []
    stop = time.time() + 3.0
    # The server reads its clock once per loop turn; sanitizer builds take
    # longer turns.
    sanitized = any(x in request.config.getoption("--server-bin") for x in ("address", "thread"))
    slack_ms = 100 if sanitized else 25

    def worker(n):
        c = srv.client()
        try:
            i = 0
            deadlines = {}
            while time.time() < stop:
                key = "h%d" % (i % 8)
                field = "w%d-%d" % (n, i)
                ttl = 5 + i % 20
                p = c.pipeline(transaction=False)
                p.hset(key, field, field)
                p.execute_command("HPEXPIRE", key, ttl, "FIELDS", 1, field)
                p.hset(key, "stable%d" % n, n)
                res = p.execute()
                # The server's deadline is at most the reply time plus the TTL.
                deadlines[field] = time.time() * 1000 + ttl
                if res[1] != [1]:
                    errors.append(("hpexpire", res))
                # Read an older field of ours (same key) and check it.
                old = "w%d-%d" % (n, max(0, i - 8))
                asked_at = time.time() * 1000
                v = c.hget(key, old)
                if v is not None and v != old.encode():
                    errors.append(("wrong value", old, v))
                if v is not None and asked_at > deadlines[old] + slack_ms:
                    errors.append(("expired field returned", old, asked_at - deadlines[old]))
                deadlines.pop("w%d-%d" % (n, i - 20), None)
                if c.hget(key, "stable%d" % n) != str(n).encode():
                    errors.append(("stable field", key))
                if i % 50 == 0:
                    for f, val in c.hgetall(key).items():
                        if f.startswith(b"w") and f != val:
                            errors.append(("hgetall", f, val))
                    c.hscan(key)
                    c.hrandfield(key, 5, withvalues=True)
                    c.hlen(key)
                i += 1
        except Exception as e:  # noqa: BLE001 - any error fails the test
            errors.append(("exception", repr(e)))
        finally:
            c.close()

    try:
        threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        r = srv.client()
        # Every short-lived field goes, without being read.
        def only_stable():
            return all(all(f.startswith(b"stable") for f in r.hkeys("h%d" % k)) for k in range(8))
        time.sleep(0.2)
        assert wait_until(lambda: r.info("keyspace")["db0"]["subexpiry"] == 0)
        assert only_stable()
        r.close()
    finally:
        stop_checked(srv)


def test_debug_listpack_of_listpackex(c2):
    # A listpack hash with field TTLs is still a listpack to DEBUG LISTPACK,
    # as in Redis 8; a table hash with TTLs is not.
    c2.cmd("HSET", "h", "a", "1", "b", "2")
    c2.cmd("HPEXPIRE", "h", "100000", "FIELDS", "1", "a")
    assert c2.cmd("OBJECT", "ENCODING", "h") == b"listpackex"
    assert c2.cmd("DEBUG", "LISTPACK", "h") == "Listpack structure printed on stdout"
    c2.cmd("CONFIG", "SET", "hash-max-listpack-entries", "1")
    try:
        c2.cmd("HSET", "t", "a", "1", "b", "2")
        c2.cmd("HPEXPIRE", "t", "100000", "FIELDS", "1", "a")
        assert c2.cmd("OBJECT", "ENCODING", "t") == b"hashtable"
        assert c2.cmd("DEBUG", "LISTPACK", "t") == Error("ERR Not a listpack encoded object.")
    finally:
        c2.cmd("CONFIG", "SET", "hash-max-listpack-entries", "128")
