"""Redis 7 functions: FUNCTION LOAD / DELETE / FLUSH / LIST / DUMP / RESTORE /
STATS / KILL / HELP, FCALL and FCALL_RO, the load context of a library
(only redis.register_function, redis.log and the constants), function
flags, RESP2 and RESP3 reply shapes, DUMP payloads exchanged with a real
redis-server both ways, FUNCTION KILL of a busy function, functions that
reach keys they did not declare, and many clients calling functions at
once on several threads.

Replies and error strings are Redis's, byte for byte; every test that does
not start its own server also passes against redis-server 7.0 (--host /
--port). Where 8.x answers differently the test takes the `redis8` fixture
(skipped against a 7.x server): FUNCTION HELP lost its "Library
description" line, and RESTORE reads payloads of RDB versions 11 and 12.

Libraries are listed in no order Redis promises (its hash order; HotKV
lists them in the order they were created), so the tests sort them.
"""
import random
import struct
import threading
import time

import pytest
from conftest import real_redis, ref_conn
from resp import Error, Map, Set, Simple, encode
from test_scripting import redis8, run_threads, server_version, wait_busy  # noqa: F401 - redis8 is a fixture

OK = Simple("OK")
NAME_RULE = ("Library names can only contain letters, numbers, or underscores(_) and must be at least one "
             "character long")
BAD_PAYLOAD = Error("ERR DUMP payload version or checksum are wrong")
BUSY_FUNCTION = Error("BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.")
BUSY_EVAL = Error("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
NOTBUSY = Error("NOTBUSY No scripts in execution right now.")
UNKILLABLE = Error("UNKILLABLE Sorry the script already executed write commands against the dataset. "
                   "You can either wait the script termination or kill the server in a hard way using "
                   "the SHUTDOWN NOSAVE command.")
KILLED = "ERR Script killed by user with SCRIPT KILL..."


def lib(name, body):
    return "#!lua name=%s\n%s" % (name, body)


def fn_error(msg, fname, line):
    """The error a client gets when `msg` is raised out of function `fname`."""
    return Error("%s script: %s, on @user_function:%d." % (msg, fname, line))


def reg_error(msg):
    return Error("ERR Error registering functions: " + msg)


@pytest.fixture
def fc(conn):
    """A RESP2 connection with no libraries loaded before or after."""
    assert conn.cmd("FUNCTION", "FLUSH") == OK
    yield conn
    conn.cmd("FUNCTION", "FLUSH")


@pytest.fixture
def fc3(conn3):
    assert conn3.cmd("FUNCTION", "FLUSH") == OK
    yield conn3
    conn3.cmd("FUNCTION", "FLUSH")


def load(conn, name, body, *opts):
    return conn.cmd("FUNCTION", "LOAD", *opts, lib(name, body))


def pairs(flat):
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def listing(conn, *args):
    """FUNCTION LIST as {library: {fields, functions: {name: {fields}}}} (RESP2)."""
    out = {}
    for entry in conn.cmd("FUNCTION", "LIST", *args):
        e = pairs(entry)
        e[b"functions"] = {f[b"name"]: f for f in (pairs(x) for x in e[b"functions"])}
        out[e[b"library_name"]] = e
    return out


# ---- CRC-64 and payloads built by hand ------------------------------------------

def crc64(data):
    """Redis's CRC-64 (Jones polynomial, reflected, no final xor)."""
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x95AC9329AC4BC9B5 if crc & 1 else 0)
    return crc


def rdb_string(s):
    if isinstance(s, str):
        s = s.encode()
    n = len(s)
    if n < 64:
        head = bytes([n])
    elif n < 16384:
        head = bytes([0x40 | (n >> 8), n & 0xff])
    else:
        head = b"\x80" + struct.pack(">I", n)
    return head + s


def payload(body, version=10):
    data = body + struct.pack("<H", version)
    return data + struct.pack("<Q", crc64(data))


def lib_payload(*codes, opcode=245, version=10):
    return payload(b"".join(bytes([opcode]) + rdb_string(c) for c in codes), version)


def test_crc64_is_redis():
    assert crc64(b"123456789") == 0xe9c6d914c4b8d9ca


# ---- FUNCTION LOAD ---------------------------------------------------------------

def test_load_and_call(fc):
    body = ("redis.register_function('echo', function(keys, args) return {keys, args} end)\n"
            "redis.register_function{function_name='Named', callback=function(keys, args) return #keys + #args end,"
            " description='counts', flags={'no-writes'}}")
    assert load(fc, "mylib", body) == b"mylib"
    assert fc.cmd("FCALL", "echo", 2, "k1", "k2", "a1") == [[b"k1", b"k2"], [b"a1"]]
    assert fc.cmd("FCALL", "echo", 0) == [[], []]
    assert fc.cmd("FCALL", "echo", 0, "a", "b") == [[], [b"a", b"b"]]
    # Function names are found in any case; FCALL_RO runs a no-writes one.
    assert fc.cmd("FCALL", "named", 1, "k", "a", "b") == 3
    assert fc.cmd("FCALL", "NAMED", 0) == 0
    assert fc.cmd("FCALL_RO", "Named", 0, "x") == 1
    assert fc.cmd("FCALL", "ECHO", 1, "k") == [[b"k"], []]
    # Binary-safe keys and arguments.
    assert fc.cmd("FCALL", "echo", 1, b"\x00k\r\n", b"\xff") == [[b"\x00k\r\n"], [b"\xff"]]


def test_load_metadata_errors(fc):
    cases = [
        ("return 1", "ERR Missing library metadata"),
        ("", "ERR Missing library metadata"),
        ("#!lua", "ERR Invalid library metadata"),
        ("#!lua name=\"x\n", "ERR Invalid library metadata"),
        ("#!lua name=\"abc\"x\n", "ERR Invalid library metadata"),
        ("#!lua\n", "ERR Library name was not given"),
        ("#!lua name=a name=b\n", "ERR Invalid metadata value, name argument was given multiple times"),
        ("#!lua foo=bar\n", "ERR Invalid metadata value given: foo=bar"),
        ("#!lua name=x flags=no-writes\n", "ERR Invalid metadata value given: flags=no-writes"),
        ("#!lua name=x-y\n", "ERR " + NAME_RULE),
        ("#!lua name=\n", "ERR " + NAME_RULE),
        ("#!lua name=\"a b\"\n", "ERR " + NAME_RULE),
        ("#!lua name=\"a\\x00b\"\n", "ERR " + NAME_RULE),
        ("#!js name=x\n", "ERR Engine 'js' not found"),
        ("#! name=x\n", "ERR Engine '' not found"),
        ("#!lua name=x\n", "ERR No functions registered"),
        ("#!lua name=x\nlocal a = 1", "ERR No functions registered"),
        ("#!lua name=x\n;;;(", "ERR Error compiling function: user_function:2: unexpected symbol near ';'"),
    ]
    for code, err in cases:
        assert fc.cmd("FUNCTION", "LOAD", code) == Error(err), code
    assert fc.cmd("FUNCTION", "LIST") == []


def test_load_metadata_forms(fc):
    f = "redis.register_function('f%d', function() return %d end)"
    # The option's name in any case, quotes and escapes as at a prompt,
    # blanks and a CR around the words, any case for the engine.
    assert fc.cmd("FUNCTION", "LOAD", "#!lua NAME=up\n" + f % (1, 1)) == b"up"
    assert fc.cmd("FUNCTION", "LOAD", "#!lua name='quoted'\n" + f % (2, 2)) == b"quoted"
    assert fc.cmd("FUNCTION", "LOAD", "#!lua name=\"ab\\x41\"\n" + f % (3, 3)) == b"abA"
    assert fc.cmd("FUNCTION", "LOAD", "#!lua  \t name=spaced \r\n" + f % (4, 4)) == b"spaced"
    assert fc.cmd("FUNCTION", "LOAD", "#!LUA name=Upper\n" + f % (5, 5)) == b"Upper"
    # Library names are case-sensitive.
    assert fc.cmd("FUNCTION", "LOAD", "#!lua name=upper\n" + f % (6, 6)) == b"upper"
    assert sorted(listing(fc)) == [b"Upper", b"abA", b"quoted", b"spaced", b"up", b"upper"]
    # Line numbers count the first line.
    assert load(fc, "lines", "\n\nredis.register_function('fl', function() error('x') end)") == b"lines"
    assert fc.cmd("FCALL", "fl", 0) == fn_error("ERR user_function:4: x", "fl", 4)


def test_load_options(fc):
    code = lib("o", "redis.register_function('o', function() return 1 end)")
    assert fc.cmd("FUNCTION", "LOAD", "foo", code) == Error("ERR Unknown option given: foo")
    assert fc.cmd("FUNCTION", "LOAD", "replace", "replace", code) == b"o"
    assert fc.cmd("FUNCTION", "LOAD", "REPLACE") == Error("ERR Missing library metadata")
    assert fc.cmd("FUNCTION", "LOAD") == Error("ERR wrong number of arguments for 'function|load' command")


def test_load_context(fc):
    reg = "redis.register_function('f', function() return 1 end)\n"
    nonexistent = "ERR user_function:3: Script attempted to access nonexistent global variable '%s'"
    for stmt, name in [("local a = tostring(1)", "tostring"), ("return math.random()", "math"),
                       ("return redis.call('ping')", "call"), ("redis.setresp(3)", "setresp"),
                       ("redis.set_repl(redis.REPL_ALL)", "set_repl"), ("local y = redis.REPL_ALL", "REPL_ALL"),
                       ("local g = _G", "_G"), ("local p = pcall", "pcall"), ("error('boom')", "error"),
                       ("local x = KEYS", "KEYS"), ("local y = undefined_thing", "undefined_thing")]:
        assert load(fc, "ctx", reg + stmt) == reg_error(nonexistent % name), stmt
    ro = "ERR user_function:3: Attempt to modify a readonly table"
    assert load(fc, "ctx", reg + "a = 1") == reg_error(ro)
    assert load(fc, "ctx", reg + "redis.foo = 1") == reg_error(ro)
    assert load(fc, "ctx", reg + "redis.register_function = nil") == reg_error(ro)
    # What the load context has.
    ok = ("redis.log(redis.LOG_NOTICE, 'loading', 'lib')\n"
          "local v = redis.REDIS_VERSION .. redis.REDIS_VERSION_NUM\n"
          "local l = redis.LOG_DEBUG + redis.LOG_VERBOSE + redis.LOG_WARNING\n"
          "local s = ('abc'):upper()\n"
          "redis.register_function('ver', function() return {type(v), s, l} end)\n"
          "return 1")
    assert load(fc, "ctx", ok) == b"ctx"
    assert fc.cmd("FCALL", "ver", 0) == [b"string", b"ABC", 4]


def test_load_timeout(fc):
    started = time.time()
    assert load(fc, "slow", "local a = 1\nwhile 1 do a = a + 1 end") == reg_error("ERR FUNCTION LOAD timeout")
    assert time.time() - started < 10
    assert fc.cmd("FUNCTION", "LIST") == []
    assert fc.cmd("PING") == Simple("PONG")


def test_register_function_errors(fc):
    cb = "function() return 1 end"
    cases = [
        ("redis.register_function('f-g', %s)" % cb, NAME_RULE),
        ("redis.register_function('', %s)" % cb, NAME_RULE),
        ("redis.register_function('a b', %s)" % cb, NAME_RULE),
        ("redis.register_function('f', %s)\nredis.register_function('f', %s)" % (cb, cb),
         "Function already exists in the library"),
        ("redis.register_function('f', 1)", "second argument to redis.register_function must be a function"),
        ("redis.register_function({}, %s)" % cb, "first argument to redis.register_function must be a string"),
        ("redis.register_function()", "wrong number of arguments to redis.register_function"),
        ("redis.register_function(1, 2, 3)", "wrong number of arguments to redis.register_function"),
        ("redis.register_function('a')",
         "calling redis.register_function with a single argument is only applicable to Lua table (representing "
         "named arguments)."),
        ("redis.register_function{function_name='a'}", "redis.register_function must get a callback argument"),
        ("redis.register_function{callback=%s}" % cb, "redis.register_function must get a function name argument"),
        ("redis.register_function{function_name='a', callback=%s, flags={'bad'}}" % cb, "unknown flag given"),
        ("redis.register_function{function_name='a', callback=%s, flags={1}}" % cb, "unknown flag given"),
        ("redis.register_function{function_name='a', callback=%s, flags={{}}}" % cb, "unknown flag given"),
        ("redis.register_function{function_name='a', callback=%s, flags='no-writes'}" % cb,
         "flags argument to redis.register_function must be a table representing function flags"),
        ("redis.register_function{function_name='a', callback=%s, foo=1}" % cb,
         "unknown argument given to redis.register_function"),
        ("redis.register_function{[1]='a', callback=%s}" % cb, "unknown argument given to redis.register_function"),
        ("redis.register_function{function_name={}, callback=%s}" % cb,
         "function_name argument given to redis.register_function must be a string"),
        ("redis.register_function{function_name='a', callback=1}",
         "callback argument given to redis.register_function must be a function"),
        ("redis.register_function{function_name='a', callback=%s, description={}}" % cb,
         "description argument given to redis.register_function must be a string"),
    ]
    for body, err in cases:
        assert load(fc, "bad", body) == reg_error("ERR " + err), body
    assert fc.cmd("FUNCTION", "LIST") == []


def test_register_function_forms(fc):
    # Numbers are taken as strings; flags in any case, listed in Redis's
    # order; the same name in another case is another function of the
    # library.
    body = ("redis.register_function(123, function() return 'num' end)\n"
            "redis.register_function{FUNCTION_NAME='Ab', CALLBACK=function() return 'ab' end,"
            " FLAGS={'NO-WRITES', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'},"
            " Description=7}\n"
            "redis.register_function{function_name='empty', callback=function() return 'e' end, description='',"
            " flags={}}")
    assert load(fc, "forms", body) == b"forms"
    fns = listing(fc)[b"forms"][b"functions"]
    assert fns[b"123"] == {b"name": b"123", b"description": None, b"flags": []}
    assert fns[b"Ab"] == {b"name": b"Ab", b"description": b"7",
                         b"flags": ["no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"]}
    assert fns[b"empty"][b"description"] == b""
    assert fc.cmd("FCALL", "123", 0) == b"num"
    assert fc.cmd("FCALL_RO", "aB", 0) == b"ab"


def test_library_exists_replace_and_clashes(fc):
    v1 = "redis.register_function('f1', function() return 1 end)\nredis.register_function('g1', function() return 1 end)"
    v2 = "redis.register_function('f1', function() return 2 end)\nredis.register_function('h2', function() return 2 end)"
    assert load(fc, "lib", v1) == b"lib"
    assert load(fc, "lib", v2) == Error("ERR Library 'lib' already exists")
    assert fc.cmd("FCALL", "f1", 0) == 1
    assert load(fc, "lib", v2, "REPLACE") == b"lib"
    assert fc.cmd("FCALL", "f1", 0) == 2
    assert fc.cmd("FCALL", "h2", 0) == 2
    assert fc.cmd("FCALL", "g1", 0) == Error("ERR Function not found")
    # Another library may not take a function's name, in any case.
    assert load(fc, "other", "redis.register_function('F1', function() return 3 end)") == \
        Error("ERR Function F1 already exists")
    assert load(fc, "other", "redis.register_function('x', function() end)\nredis.register_function('h2', function() end)") \
        == Error("ERR Function h2 already exists")
    # A REPLACE that fails keeps the library it would have replaced.
    assert load(fc, "other", "redis.register_function('o', function() return 'o' end)") == b"other"
    assert load(fc, "other", "redis.register_function('f1', function() end)", "REPLACE") == \
        Error("ERR Function f1 already exists")
    assert load(fc, "other", "redis.register_function('o', function() return", "REPLACE").startswith(
        "ERR Error compiling function: ")
    assert fc.cmd("FCALL", "o", 0) == b"o"
    assert sorted(listing(fc)) == [b"lib", b"other"]


def test_library_code_is_kept_as_given(fc):
    code = lib("kept", "-- a comment\r\nredis.register_function('k', function() return 'k' end)\n\n")
    assert fc.cmd("FUNCTION", "LOAD", code) == b"kept"
    assert listing(fc, "WITHCODE")[b"kept"][b"library_code"] == code.encode()


# ---- FCALL / FCALL_RO -------------------------------------------------------------

def test_fcall_errors(fc):
    assert load(fc, "e", "redis.register_function('f', function(keys, args) return #keys end)") == b"e"
    assert fc.cmd("FCALL", "nope", 0) == Error("ERR Function not found")
    # An unknown function is reported before its arguments are looked at.
    assert fc.cmd("FCALL", "nope", "x") == Error("ERR Function not found")
    assert fc.cmd("FCALL_RO", "nope", 0) == Error("ERR Function not found")
    assert fc.cmd("FCALL", "f", "x") == Error("ERR Bad number of keys provided")
    assert fc.cmd("FCALL", "f", "1.5") == Error("ERR Bad number of keys provided")
    assert fc.cmd("FCALL", "f", 3, "a", "b") == Error("ERR Number of keys can't be greater than number of args")
    assert fc.cmd("FCALL", "f", -1) == Error("ERR Number of keys can't be negative")
    assert fc.cmd("FCALL", "f") == Error("ERR wrong number of arguments for 'fcall' command")
    assert fc.cmd("FCALL_RO", "f") == Error("ERR wrong number of arguments for 'fcall_ro' command")
    assert fc.cmd("FCALL", "f", 2, "a", "b") == 2


def test_fcall_ro_and_no_writes(fc):
    body = ("redis.register_function('w', function(keys, args) return redis.call('SET', keys[1], args[1]) end)\n"
            "redis.register_function{function_name='r', callback=function(keys, args)"
            " return redis.call('GET', keys[1]) end, flags={'no-writes'}}\n"
            "redis.register_function{function_name='rw', callback=function(keys, args)"
            " return redis.call('SET', keys[1], 'x') end, flags={'no-writes'}}")
    assert load(fc, "rw", body) == b"rw"
    assert fc.cmd("FCALL_RO", "w", 1, "k", "v") == \
        Error("ERR Can not execute a script with write flag using *_ro command.")
    assert fc.cmd("FCALL", "w", 1, "k", "v") == OK
    assert fc.cmd("FCALL_RO", "r", 1, "k") == b"v"
    assert fc.cmd("FCALL", "r", 1, "k") == b"v"
    not_allowed = "ERR Write commands are not allowed from read-only scripts."
    assert fc.cmd("FCALL", "rw", 1, "k") == fn_error(not_allowed, "rw", 4)
    assert fc.cmd("FCALL_RO", "rw", 1, "k") == fn_error(not_allowed, "rw", 4)
    assert fc.cmd("GET", "k") == b"v"


def test_function_runtime(fc):
    body = "\n".join([
        "redis.register_function('err', function() error('oops') end)",
        "redis.register_function('unknown', function() return redis.call('nosuch') end)",
        "redis.register_function('argc', function() return redis.call('set', 'x') end)",
        "redis.register_function('pnosuch', function() return redis.pcall('nosuch') end)",
        "redis.register_function('keys', function() return KEYS end)",
        "redis.register_function('glob', function() x = 1 end)",
        "redis.register_function('reply', function() return redis.error_reply('MY err') end)",
        "redis.register_function('tbl', function() error({err='MY err2'}) end)",
        "redis.register_function('nested', function() return redis.register_function('z', function() end) end)",
        "redis.register_function('field', function() return redis.register_function end)",
        "local function helper(x) return x * 2 end",
        "redis.register_function('helper', function(keys, args) return helper(tonumber(args[1])) end)",
        "redis.register_function('pc', function() local ok, e = pcall(error, 'boom') return e end)",
        "redis.register_function('types', function() return {type(_G), type(getmetatable), 3.9, true, false} end)",
        "redis.register_function('status', function() return redis.status_reply('FINE') end)",
        "redis.register_function('wrongtype', function(keys) redis.call('lpush', keys[1], 1)"
        " return redis.call('get', keys[1]) end)",
    ])
    assert load(fc, "rt", body) == b"rt"
    assert fc.cmd("FCALL", "err", 0) == fn_error("ERR user_function:2: oops", "err", 2)
    assert fc.cmd("FCALL", "unknown", 0) == fn_error("ERR Unknown Redis command called from script", "unknown", 3)
    assert fc.cmd("FCALL", "argc", 0) == fn_error("ERR Wrong number of args calling Redis command from script",
                                                  "argc", 4)
    assert fc.cmd("FCALL", "pnosuch", 0) == Error("ERR Unknown Redis command called from script")
    assert fc.cmd("FCALL", "keys", 0) == fn_error(
        "ERR user_function:6: Script attempted to access nonexistent global variable 'KEYS'", "keys", 6)
    assert fc.cmd("FCALL", "glob", 0) == fn_error("ERR user_function:7: Attempt to modify a readonly table",
                                                  "glob", 7)
    assert fc.cmd("FCALL", "reply", 0) == Error("MY err")
    assert fc.cmd("FCALL", "tbl", 0) == fn_error("MY err2", "tbl", 9)
    assert fc.cmd("FCALL", "nested", 0) == fn_error(
        "ERR user_function:10: attempt to call field 'register_function' (a nil value)", "nested", 10)
    assert fc.cmd("FCALL", "field", 0) is None
    assert fc.cmd("FCALL", "helper", 0, 21) == 42
    assert fc.cmd("FCALL", "pc", 0) == b"boom"
    assert fc.cmd("FCALL", "types", 0) == [b"table", b"function", 3, 1, None]
    assert fc.cmd("FCALL", "status", 0) == Simple("FINE")
    assert fc.cmd("FCALL", "wrongtype", 1, "wt") == fn_error(
        "WRONGTYPE Operation against a key holding the wrong kind of value", "wrongtype", 17)


def test_long_names(fc):
    fname = "f" * 500
    body = "redis.register_function('%s', function() error('long') end)" % fname
    assert load(fc, "l" * 300, body) == b"l" * 300
    assert fc.cmd("FCALL", fname.upper(), 0) == fn_error("ERR user_function:2: long", fname, 2)
    assert sorted(listing(fc)) == [b"l" * 300]


def test_register_function_outside_load(fc):
    body = ("local r = redis\n"
            "redis.register_function('late', function() r.register_function('g', function() end) return 1 end)\n"
            "redis.register_function('logs', function() r.log(r.LOG_NOTICE, 'from a function') return r.LOG_WARNING"
            " end)")
    assert load(fc, "cap", body) == b"cap"
    assert fc.cmd("FCALL", "late", 0) == fn_error(
        "ERR redis.register_function can only be called on FUNCTION LOAD command", "late", 3)
    assert fc.cmd("FCALL", "logs", 0) == 3


def test_fcall_resp3(fc3):
    body = ("redis.register_function('h', function(keys) redis.setresp(3) return redis.call('hgetall', keys[1]) end)\n"
            "redis.register_function('d', function() return {double=3.5} end)\n"
            "redis.register_function('m', function() return {map={a=1}} end)")
    assert load(fc3, "r3", body) == b"r3"
    assert fc3.cmd("HSET", "hh", "a", "1") == 1
    assert fc3.cmd("FCALL", "h", 1, "hh") == Map([(b"a", b"1")])
    assert fc3.cmd("FCALL", "d", 0) == 3.5
    assert fc3.cmd("FCALL", "m", 0) == Map([(b"a", 1)])


def test_fcall_keys_and_getkeys(fc):
    assert load(fc, "k", "redis.register_function('k', function(keys) return #keys end)") == b"k"
    assert fc.cmd("COMMAND", "GETKEYS", "FCALL", "k", 2, "a", "b", "c") == [b"a", b"b"]
    assert fc.cmd("COMMAND", "GETKEYS", "FCALL_RO", "k", 1, "a", "b") == [b"a"]


def test_fcall_in_transaction(fc):
    code = lib("tx", "redis.register_function('incr2', function(keys) redis.call('INCR', keys[1])"
                     " return redis.call('INCR', keys[2]) end)")
    fc.send(b"".join(encode(*c) for c in (("MULTI",), ("FUNCTION", "LOAD", code), ("FCALL", "incr2", 2, "a", "b"),
                                          ("FCALL", "incr2", 2, "b", "c"), ("EXEC",))))
    assert [fc.read() for _ in range(5)] == [OK, Simple("QUEUED"), Simple("QUEUED"), Simple("QUEUED"),
                                             [b"tx", 1, 1]]
    assert [fc.cmd("GET", k) for k in "abc"] == [b"1", b"2", b"1"]


def test_functions_reach_undeclared_keys(fc):
    body = ("redis.register_function('move', function(keys, args)\n"
            "  local v = redis.call('GET', args[1])\n"
            "  redis.call('SET', args[2], v or 'none')\n"
            "  redis.call('INCR', keys[1])\n"
            "  return v\n"
            "end)")
    assert load(fc, "u", body) == b"u"
    assert fc.cmd("SET", "src", "val") == OK
    for i in range(20):
        assert fc.cmd("FCALL", "move", 1, "calls", "src", "dst%d" % i) == b"val"
    assert fc.cmd("GET", "calls") == b"20"
    assert [fc.cmd("GET", "dst%d" % i) for i in range(20)] == [b"val"] * 20
    assert fc.cmd("FCALL", "move", 0, "nothing", "dst") == fn_error(
        "ERR Lua redis lib command arguments must be strings or integers", "move", 5)
    assert fc.cmd("GET", "dst") == b"none"


# ---- FUNCTION LIST / DELETE / FLUSH / STATS / HELP -----------------------------------

def test_list(fc):
    assert fc.cmd("FUNCTION", "LIST") == []
    a = "redis.register_function{function_name='fa', callback=function() end, description='A', flags={'no-writes'}}"
    assert load(fc, "alpha", a) == b"alpha"
    assert load(fc, "beta", "redis.register_function('fb1', function() end)\n"
                            "redis.register_function('fb2', function() end)") == b"beta"
    assert load(fc, "Gamma", "redis.register_function('fg', function() end)") == b"Gamma"
    everything = fc.cmd("FUNCTION", "LIST")
    alpha = [e for e in everything if e[1] == b"alpha"][0]
    assert alpha == [b"library_name", b"alpha", b"engine", b"LUA", b"functions",
                     [[b"name", b"fa", b"description", b"A", b"flags", ["no-writes"]]]]
    assert isinstance(alpha[5][0][5][0], Simple)
    got = listing(fc)
    assert sorted(got) == [b"Gamma", b"alpha", b"beta"]
    assert sorted(got[b"beta"][b"functions"]) == [b"fb1", b"fb2"]
    assert all(b"library_code" not in e for e in got.values())
    # The pattern matches library names, in any case.
    assert sorted(listing(fc, "LIBRARYNAME", "*a")) == [b"Gamma", b"alpha", b"beta"]
    assert sorted(listing(fc, "LIBRARYNAME", "g*")) == [b"Gamma"]
    assert sorted(listing(fc, "libraryname", "?eta", "withcode")) == [b"beta"]
    assert listing(fc, "WITHCODE", "LIBRARYNAME", "alpha")[b"alpha"][b"library_code"] == lib("alpha", a).encode()
    assert fc.cmd("FUNCTION", "LIST", "LIBRARYNAME", "nomatch") == []
    assert fc.cmd("FUNCTION", "LIST", "LIBRARYNAME") == Error("ERR library name argument was not given")
    assert fc.cmd("FUNCTION", "LIST", "foo") == Error("ERR Unknown argument foo")
    assert fc.cmd("FUNCTION", "LIST", "WITHCODE", "WITHCODE") == Error("ERR Unknown argument WITHCODE")
    assert fc.cmd("FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b") == \
        Error("ERR Unknown argument LIBRARYNAME")


def test_list_resp3(fc3):
    a = "redis.register_function{function_name='fa', callback=function() end, flags={'no-writes', 'allow-oom'}}"
    assert load(fc3, "alpha", a) == b"alpha"
    got = fc3.cmd("FUNCTION", "LIST", "WITHCODE")
    assert got == [Map([(b"library_name", b"alpha"), (b"engine", b"LUA"),
                        (b"functions", [Map([(b"name", b"fa"), (b"description", None),
                                             (b"flags", Set(["no-writes", "allow-oom"]))])]),
                        (b"library_code", lib("alpha", a).encode())])]
    assert isinstance(got[0], Map) and isinstance(got[0][2][1][0][2][1], Set)


def test_delete_and_flush(fc):
    assert load(fc, "d1", "redis.register_function('d1', function() return 1 end)") == b"d1"
    assert load(fc, "d2", "redis.register_function('d2', function() return 2 end)") == b"d2"
    assert fc.cmd("FUNCTION", "DELETE", "nope") == Error("ERR Library not found")
    assert fc.cmd("FUNCTION", "DELETE", "D1") == Error("ERR Library not found")
    assert fc.cmd("FUNCTION", "DELETE", "d1") == OK
    assert fc.cmd("FCALL", "d1", 0) == Error("ERR Function not found")
    assert fc.cmd("FCALL", "d2", 0) == 2
    assert fc.cmd("FUNCTION", "DELETE") == Error("ERR wrong number of arguments for 'function|delete' command")
    # The name is free again.
    assert load(fc, "d1", "redis.register_function('d2x', function() return 3 end)") == b"d1"
    assert fc.cmd("FUNCTION", "FLUSH", "x") == Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
    assert fc.cmd("FUNCTION", "FLUSH", "sync", "x") == \
        Error("ERR unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP.")
    assert fc.cmd("FUNCTION", "FLUSH", "ASYNC") == OK
    assert fc.cmd("FUNCTION", "LIST") == []
    assert fc.cmd("FCALL", "d2", 0) == Error("ERR Function not found")
    assert load(fc, "d3", "redis.register_function('d3', function() return 3 end)") == b"d3"
    assert fc.cmd("FUNCTION", "FLUSH", "sync") == OK
    assert fc.cmd("FUNCTION", "FLUSH") == OK
    # FLUSHALL leaves functions alone.
    assert load(fc, "d4", "redis.register_function('d4', function() return 4 end)") == b"d4"
    assert fc.cmd("FLUSHALL") == OK
    assert fc.cmd("FCALL", "d4", 0) == 4


def test_stats(fc, fc3):
    assert fc.cmd("FUNCTION", "STATS") == [b"running_script", None, b"engines",
                                           [b"LUA", [b"libraries_count", 0, b"functions_count", 0]]]
    assert load(fc, "s1", "redis.register_function('a', function() end)\n"
                          "redis.register_function('b', function() end)") == b"s1"
    assert load(fc, "s2", "redis.register_function('c', function() end)") == b"s2"
    assert fc.cmd("FUNCTION", "STATS") == [b"running_script", None, b"engines",
                                           [b"LUA", [b"libraries_count", 2, b"functions_count", 3]]]
    assert fc3.cmd("FUNCTION", "STATS") == Map([
        (b"running_script", None),
        (b"engines", Map([(b"LUA", Map([(b"libraries_count", 2), (b"functions_count", 3)]))]))])
    assert fc.cmd("FUNCTION", "STATS", "x") == Error("ERR wrong number of arguments for 'function|stats' command")
    assert fc.cmd("FUNCTION", "KILL") == NOTBUSY
    assert fc.cmd("SCRIPT", "KILL") == NOTBUSY


HELP = [
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE "
    "command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
]


def test_help(fc, redis8):
    assert fc.cmd("FUNCTION", "HELP") == HELP


def test_help_and_unknown_subcommand(fc):
    help_ = fc.cmd("FUNCTION", "HELP")
    assert help_[:7] == HELP[:7] and help_[-8:] == HELP[-8:]
    assert all(isinstance(line, Simple) for line in help_)
    assert fc.cmd("FUNCTION", "FOO") == Error("ERR unknown subcommand 'FOO'. Try FUNCTION HELP.")
    assert fc.cmd("FUNCTION") == Error("ERR wrong number of arguments for 'function' command")


# ---- FUNCTION DUMP / RESTORE ------------------------------------------------------------

LIB_A = lib("liba", "redis.register_function('fa', function() return 'a' end)")
LIB_B = lib("libb", "redis.register_function{function_name='fb', callback=function() return 'b' end,"
                    " flags={'no-writes'}, description='the b'}")


def test_dump_restore_round_trip(fc):
    empty = fc.cmd("FUNCTION", "DUMP")
    assert empty[-10:-8] in (b"\x0a\x00", b"\x0b\x00", b"\x0c\x00") and len(empty) == 10
    assert fc.cmd("FUNCTION", "LOAD", LIB_A) == b"liba"
    assert fc.cmd("FUNCTION", "LOAD", LIB_B) == b"libb"
    before = listing(fc, "WITHCODE")
    dump = fc.cmd("FUNCTION", "DUMP")
    assert dump[0] == 245
    assert crc64(dump[:-8]) == struct.unpack("<Q", dump[-8:])[0]
    assert fc.cmd("FUNCTION", "FLUSH") == OK
    assert fc.cmd("FUNCTION", "RESTORE", dump) == OK
    assert listing(fc, "WITHCODE") == before
    assert fc.cmd("FCALL", "fa", 0) == b"a"
    assert fc.cmd("FCALL_RO", "fb", 0) == b"b"
    # APPEND (the default) refuses a library that exists; REPLACE takes it.
    # (Which one is named depends on the order the payload is read in.)
    exists = {Error("ERR Library liba already exists"), Error("ERR Library libb already exists")}
    assert fc.cmd("FUNCTION", "RESTORE", dump) in exists
    assert fc.cmd("FUNCTION", "RESTORE", dump, "APPEND") in exists
    assert fc.cmd("FUNCTION", "RESTORE", dump, "replace") == OK
    assert listing(fc, "WITHCODE") == before
    # FLUSH drops what is not in the payload.
    assert fc.cmd("FUNCTION", "LOAD", lib("libc", "redis.register_function('fc', function() end)")) == b"libc"
    assert fc.cmd("FUNCTION", "RESTORE", dump, "FLUSH") == OK
    assert listing(fc, "WITHCODE") == before
    # An empty payload: APPEND changes nothing, FLUSH empties.
    assert fc.cmd("FUNCTION", "RESTORE", empty) == OK
    assert sorted(listing(fc)) == [b"liba", b"libb"]
    assert fc.cmd("FUNCTION", "RESTORE", empty, "FLUSH") == OK
    assert fc.cmd("FUNCTION", "LIST") == []


def test_restore_function_clashes(fc):
    assert fc.cmd("FUNCTION", "LOAD", LIB_A) == b"liba"
    clash = lib_payload(lib("other", "redis.register_function('FA', function() end)"))
    assert fc.cmd("FUNCTION", "RESTORE", clash) == Error("ERR Function FA already exists")
    assert fc.cmd("FUNCTION", "RESTORE", clash, "REPLACE") == Error("ERR Function FA already exists")
    assert fc.cmd("FUNCTION", "RESTORE", clash, "FLUSH") == OK
    assert sorted(listing(fc)) == [b"other"]
    assert fc.cmd("FUNCTION", "DELETE", "other") == OK
    # REPLACE takes the name from the library it replaces.
    assert fc.cmd("FUNCTION", "LOAD", LIB_A) == b"liba"
    moved = lib_payload(lib("liba", "redis.register_function('moved', function() return 'm' end)"),
                        lib("libz", "redis.register_function('fa', function() return 'z' end)"))
    assert fc.cmd("FUNCTION", "RESTORE", moved) == Error("ERR Library liba already exists")
    assert fc.cmd("FUNCTION", "RESTORE", moved, "REPLACE") == OK
    assert fc.cmd("FCALL", "fa", 0) == b"z"
    assert fc.cmd("FCALL", "moved", 0) == b"m"
    # Nothing changes when one library of the payload cannot go in.
    bad = lib_payload(lib("libq", "redis.register_function('q', function() end)"),
                      lib("libr", "redis.register_function('moved', function() end)"))
    assert fc.cmd("FUNCTION", "RESTORE", bad) == Error("ERR Function moved already exists")
    assert sorted(listing(fc)) == [b"liba", b"libz"]


def test_restore_payload_errors(fc):
    good = lib_payload(LIB_A)
    assert fc.cmd("FUNCTION", "RESTORE", good[:-1] + bytes([good[-1] ^ 1])) == BAD_PAYLOAD
    assert fc.cmd("FUNCTION", "RESTORE", b"") == BAD_PAYLOAD
    assert fc.cmd("FUNCTION", "RESTORE", b"short") == BAD_PAYLOAD
    assert fc.cmd("FUNCTION", "RESTORE", lib_payload(LIB_A, version=13)) == BAD_PAYLOAD
    assert fc.cmd("FUNCTION", "RESTORE", lib_payload(LIB_A, version=0x100 + 10)) == BAD_PAYLOAD
    assert fc.cmd("FUNCTION", "RESTORE", good, "bad") == \
        Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
    assert fc.cmd("FUNCTION", "RESTORE", good, "APPEND", "x") == \
        Error("ERR unknown subcommand or wrong number of arguments for 'RESTORE'. Try FUNCTION HELP.")
    assert fc.cmd("FUNCTION", "RESTORE") == Error("ERR wrong number of arguments for 'function|restore' command")
    assert fc.cmd("FUNCTION", "RESTORE", lib_payload(LIB_A, opcode=0)) == Error("ERR given type is not a function")
    # A string running past the end of the payload.
    assert fc.cmd("FUNCTION", "RESTORE", payload(b"\xf5\x80\x00\x01\x00\x00" + b"#!lua")) == \
        Error("ERR Failed loading library payload")
    # An unknown string encoding.
    assert fc.cmd("FUNCTION", "RESTORE", payload(b"\xf5\xc5" + b"x" * 20)) == \
        Error("ERR Failed loading library payload")
    # An integer-encoded string is read as its decimal form.
    assert fc.cmd("FUNCTION", "RESTORE", payload(b"\xf5\xc0\x05")) == Error("ERR Missing library metadata")
    # What FUNCTION LOAD refuses, RESTORE refuses with the same text.
    assert fc.cmd("FUNCTION", "RESTORE", lib_payload("#!lua name=x\n")) == Error("ERR No functions registered")
    assert fc.cmd("FUNCTION", "RESTORE", lib_payload("#!lua name=x\nerror(1)")) == reg_error(
        "ERR user_function:2: Script attempted to access nonexistent global variable 'error'")
    assert fc.cmd("FUNCTION", "RESTORE", lib_payload("#!js name=x\n")) == Error("ERR Engine 'js' not found")
    # The same library, or one function name, twice in one payload.
    assert fc.cmd("FUNCTION", "RESTORE", lib_payload(LIB_A, LIB_A)) == Error("ERR Library 'liba' already exists")
    assert fc.cmd("FUNCTION", "RESTORE", lib_payload(
        LIB_A, lib("x", "redis.register_function('fa', function() end)"))) == Error("ERR Function fa already exists")
    assert fc.cmd("FUNCTION", "LIST") == []
    # Lengths in their 14- and 32-bit forms.
    long_lib = lib("long", "redis.register_function('long', function() return 'l' end)\n" + "-- pad\n" * 3000)
    assert len(long_lib) > 16384
    assert fc.cmd("FUNCTION", "RESTORE", lib_payload(LIB_A, long_lib)) == OK
    assert fc.cmd("FCALL", "long", 0) == b"l"
    assert listing(fc, "WITHCODE")[b"long"][b"library_code"] == long_lib.encode()


def test_restore_applies_the_load_time_limit(new_server):
    """Redis runs a restored library without a time limit (so a payload
    whose code loops hangs it); HotKV stops it as FUNCTION LOAD does."""
    c = new_server().conn()
    looping = lib_payload("#!lua name=x\nlocal a = 1 while 1 do a = a + 1 end")
    assert c.cmd("FUNCTION", "RESTORE", looping) == reg_error("ERR FUNCTION LOAD timeout")
    assert c.cmd("FUNCTION", "LIST") == []


def test_restore_newer_rdb_versions(fc, redis8):
    # Redis 7.0 still read the format of its release candidates.
    assert fc.cmd("FUNCTION", "RESTORE", lib_payload(LIB_A, opcode=246)) == \
        Error("ERR Pre-GA function format not supported")
    assert fc.cmd("FUNCTION", "RESTORE", lib_payload(LIB_A, version=12)) == OK
    assert fc.cmd("FUNCTION", "RESTORE", lib_payload(LIB_B, version=11)) == OK
    assert sorted(listing(fc)) == [b"liba", b"libb"]


# A library long enough that redis-server stores its code LZF-compressed.
BIG_LIB = lib("big", "\n".join(
    "redis.register_function('big%d', function(keys, args) return 'value number %d of the big library' end)"
    % (i, i) for i in range(40)))


def test_dump_restore_with_redis_server(fc):
    with real_redis() as port:
        if port is None:
            pytest.skip("redis-server not installed")
        ref = ref_conn(port)
        # Redis's payload into this server: compressed code included.
        assert ref.cmd("FUNCTION", "LOAD", BIG_LIB) == b"big"
        assert ref.cmd("FUNCTION", "LOAD", LIB_B) == b"libb"
        theirs = ref.cmd("FUNCTION", "DUMP")
        assert fc.cmd("FUNCTION", "RESTORE", theirs) == OK
        assert listing(fc, "WITHCODE") == listing(ref, "WITHCODE")
        assert fc.cmd("FCALL", "big17", 0) == b"value number 17 of the big library"
        assert fc.cmd("FCALL_RO", "fb", 0) == b"b"
        # This server's payload into Redis.
        assert fc.cmd("FUNCTION", "LOAD", LIB_A) == b"liba"
        ours = fc.cmd("FUNCTION", "DUMP")
        assert ref.cmd("FUNCTION", "RESTORE", ours) in {Error("ERR Library big already exists"),
                                                        Error("ERR Library libb already exists")}
        assert ref.cmd("FUNCTION", "RESTORE", ours, "FLUSH") == OK
        assert listing(ref, "WITHCODE") == listing(fc, "WITHCODE")
        assert ref.cmd("FCALL", "fa", 0) == b"a"
        assert ref.cmd("FCALL", "big3", 0) == b"value number 3 of the big library"
        # And back again.
        assert ref.cmd("FUNCTION", "DELETE", "liba") == OK
        assert fc.cmd("FUNCTION", "RESTORE", ref.cmd("FUNCTION", "DUMP"), "FLUSH") == OK
        assert sorted(listing(fc)) == [b"big", b"libb"]
        ref.close()


# ---- COMMAND rows -----------------------------------------------------------------

def test_command_info(conn):
    fcall = conn.cmd("COMMAND", "INFO", "fcall")[0]
    assert fcall[:2] == [b"fcall", -3] and fcall[3:6] == [0, 0, 0]
    assert sorted(fcall[2]) == sorted(["noscript", "stale", "skip_monitor", "no_mandatory_keys", "movablekeys"])
    assert fcall[8] == [[b"notes", b"We cannot tell how the keys will be used so we assume the worst, RW and UPDATE",
                         b"flags", ["RW", "access", "update"], b"begin_search", [b"type", b"index", b"spec",
                                                                                 [b"index", 2]],
                         b"find_keys", [b"type", b"keynum", b"spec", [b"keynumidx", 0, b"firstkey", 1,
                                                                      b"keystep", 1]]]]
    ro = conn.cmd("COMMAND", "INFO", "fcall_ro")[0]
    assert sorted(ro[2]) == sorted(["readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys",
                                    "movablekeys"])
    subs = {s[0]: s for s in conn.cmd("COMMAND", "INFO", "function")[0][9]}
    assert sorted(subs) == [b"function|delete", b"function|dump", b"function|flush", b"function|help",
                            b"function|kill", b"function|list", b"function|load", b"function|restore",
                            b"function|stats"]
    assert subs[b"function|load"][1] == -3
    assert sorted(subs[b"function|load"][2]) == ["denyoom", "noscript", "write"]
    assert sorted(subs[b"function|stats"][2]) == ["allow_busy", "noscript"]
    assert subs[b"function|stats"][7] == [b"nondeterministic_output", b"request_policy:all_shards",
                                          b"response_policy:special"]
    assert subs[b"function|list"][7] == [b"nondeterministic_output_order"]
    docs = pairs(conn.cmd("COMMAND", "DOCS", "fcall")[1])
    assert docs[b"since"] == b"7.0.0" and docs[b"group"] == b"scripting"
    assert [pairs(a)[b"name"] for a in docs[b"arguments"]] == [b"function", b"numkeys", b"key", b"arg"]


def test_command_rows_same_as_redis(conn, redis_ref):
    if redis_ref is None:
        pytest.skip("redis-server not installed")
    ref = ref_conn(redis_ref)
    def row(e):
        return [e[0], e[1], sorted(e[2]), e[3:6], sorted(e[6]), e[7], e[8]]

    for name in ("fcall", "fcall_ro", "function"):
        mine, theirs = conn.cmd("COMMAND", "INFO", name)[0], ref.cmd("COMMAND", "INFO", name)[0]
        # The container's categories are HotKV's (as for SCRIPT).
        assert row(mine)[:4] + row(mine)[5:] == row(theirs)[:4] + row(theirs)[5:], name
        assert sorted(row(s) for s in mine[9]) == sorted(row(s) for s in theirs[9]), name
    ref.close()


# ---- many clients, several threads ------------------------------------------------------

COUNTERS = ("redis.register_function('bump', function(keys, args)\n"
            "  local v = tonumber(redis.call('GET', keys[1]) or '0') + 1\n"
            "  redis.call('SET', keys[1], v)\n"
            "  local t = tonumber(redis.call('GET', keys[2]) or '0') + 1\n"
            "  redis.call('SET', keys[2], t)\n"
            "  return v\n"
            "end)\n"
            "redis.register_function('bump_undeclared', function(keys, args)\n"
            "  local v = tonumber(redis.call('GET', args[1]) or '0') + 1\n"
            "  redis.call('SET', args[1], v)\n"
            "  redis.call('SET', args[2], tonumber(redis.call('GET', args[2]) or '0') + 1)\n"
            "  return v\n"
            "end)\n"
            "redis.register_function{function_name='read', callback=function(keys) return redis.call('GET', keys[1])"
            " end, flags={'no-writes'}}")


def test_concurrent_read_modify_write(new_server):
    srv = new_server(threads=4)
    c = srv.conn()
    assert c.cmd("FUNCTION", "LOAD", lib("counters", COUNTERS)) == b"counters"
    clients, rounds = 20, 150
    names = ["c%d" % i for i in range(5)] + ["{t}c%d" % i for i in range(3)]
    expected = {}
    lock = threading.Lock()

    def client(i):
        def run():
            rnd = random.Random(i)
            conn = srv.conn(timeout=30)
            mine = {}
            for n in range(rounds):
                k = rnd.choice(names)
                if n % 3 == 0:
                    reply = conn.cmd("FCALL", "bump_undeclared", 0, "u:" + k, "u:total")
                else:
                    reply = conn.cmd("FCALL", "bump", 2, k, "total")
                assert isinstance(reply, int) and reply >= 1, reply
                key = ("u:" + k) if n % 3 == 0 else k
                mine[key] = mine.get(key, 0) + 1
                if n % 10 == 0:
                    assert isinstance(conn.cmd("FCALL_RO", "read", 1, k), (bytes, type(None)))
            conn.close()
            with lock:
                for key, v in mine.items():
                    expected[key] = expected.get(key, 0) + v
        return run

    run_threads([client(i) for i in range(clients)], timeout=120)
    for key, v in expected.items():
        assert c.cmd("GET", key) == str(v).encode(), key
    declared = sum(v for key, v in expected.items() if not key.startswith("u:"))
    undeclared = sum(v for key, v in expected.items() if key.startswith("u:"))
    assert declared + undeclared == clients * rounds
    assert c.cmd("GET", "total") == str(declared).encode()
    assert c.cmd("GET", "u:total") == str(undeclared).encode()


def test_every_worker_sees_changes(new_server):
    srv = new_server(threads=4)
    conns = [srv.conn() for _ in range(12)]
    c = conns[0]
    assert c.cmd("FUNCTION", "LOAD", lib("v", "redis.register_function('ver', function() return 1 end)")) == b"v"
    assert [x.cmd("FCALL", "ver", 0) for x in conns] == [1] * 12
    assert c.cmd("FUNCTION", "LOAD", "REPLACE",
                 lib("v", "redis.register_function('ver', function() return 2 end)")) == b"v"
    assert [x.cmd("FCALL", "ver", 0) for x in conns] == [2] * 12
    payload_ = c.cmd("FUNCTION", "DUMP")
    assert c.cmd("FUNCTION", "DELETE", "v") == OK
    assert [x.cmd("FCALL", "ver", 0) for x in conns] == [Error("ERR Function not found")] * 12
    assert conns[5].cmd("FUNCTION", "RESTORE", payload_) == OK
    assert [x.cmd("FCALL", "ver", 0) for x in conns] == [2] * 12
    assert c.cmd("FUNCTION", "FLUSH") == OK
    assert [x.cmd("FCALL_RO", "ver", 0) for x in conns] == [Error("ERR Function not found")] * 12


def test_concurrent_loads_and_calls(new_server):
    """Libraries loaded, replaced and deleted while other clients call
    them: every call answers the function's value or 'not found'."""
    srv = new_server(threads=4)
    stop = time.time() + 2

    def loader(i):
        def run():
            conn = srv.conn(timeout=30)
            n = 0
            while time.time() < stop:
                n += 1
                body = "redis.register_function('f%d', function() return %d end)" % (i, n)
                assert conn.cmd("FUNCTION", "LOAD", "REPLACE", lib("l%d" % i, body)) == b"l%d" % i
                if n % 5 == 0:
                    assert conn.cmd("FUNCTION", "DELETE", "l%d" % i) == OK
            conn.close()
        return run

    def caller(i):
        def run():
            conn = srv.conn(timeout=30)
            while time.time() < stop:
                reply = conn.cmd("FCALL", "f%d" % (i % 3), 0)
                assert isinstance(reply, int) or reply == Error("ERR Function not found"), reply
            conn.close()
        return run

    run_threads([loader(i) for i in range(3)] + [caller(i) for i in range(6)], timeout=60)
    assert srv.conn().cmd("PING") == Simple("PONG")


# ---- busy functions -----------------------------------------------------------------

def busy_server(new_server, threads=4):
    srv = new_server(threads=threads)
    ctl = srv.conn(timeout=20)
    assert ctl.cmd("CONFIG", "SET", "busy-reply-threshold", "100") == OK
    body = ("redis.register_function('spin', function() local i = 0 while true do i = i + 1 end end)\n"
            "redis.register_function('spinw', function(keys) redis.call('SET', keys[1], '1') while true do end end)\n"
            "redis.register_function{function_name='spinro', callback=function() while true do end end,"
            " flags={'no-writes'}}")
    assert ctl.cmd("FUNCTION", "LOAD", lib("busy", body)) == b"busy"
    return srv, ctl


def test_function_kill(new_server):
    srv, ctl = busy_server(new_server)
    runner = srv.conn(timeout=20)
    runner.send(encode("FCALL", "spin", 0))
    assert wait_busy(ctl) == BUSY_FUNCTION
    others = [srv.conn(timeout=20) for _ in range(8)]
    for o in others:
        assert o.cmd("GET", "x") == BUSY_FUNCTION
    # A function is stopped by FUNCTION KILL, not SCRIPT KILL.
    assert ctl.cmd("SCRIPT", "KILL") == BUSY_FUNCTION
    assert ctl.cmd("FUNCTION", "KILL") == OK
    assert runner.read() == fn_error(KILLED, "spin", 2)
    assert ctl.cmd("FUNCTION", "KILL") == NOTBUSY
    assert runner.cmd("PING") == Simple("PONG")
    assert all(o.cmd("SET", "x", "1") == OK for o in others)
    # The read-only one too, through FCALL_RO.
    runner.send(encode("FCALL_RO", "spinro", 0))
    assert wait_busy(ctl) == BUSY_FUNCTION
    assert ctl.cmd("FUNCTION", "KILL") == OK
    assert runner.read() == fn_error(KILLED, "spinro", 4)


def test_function_kill_refused_after_write(new_server):
    srv, ctl = busy_server(new_server)
    runner = srv.conn(timeout=20)
    runner.send(encode("FCALL", "spinw", 1, "w"))
    assert wait_busy(ctl) == BUSY_FUNCTION
    assert ctl.cmd("FUNCTION", "KILL") == UNKILLABLE
    assert ctl.cmd("SCRIPT", "KILL") == UNKILLABLE
    ctl.send(encode("SHUTDOWN", "NOSAVE"))
    srv.proc.wait(20)


def test_busy_eval_and_function_kill(new_server):
    srv, ctl = busy_server(new_server)
    runner = srv.conn(timeout=20)
    runner.send(encode("EVAL", "while true do end", 0))
    assert wait_busy(ctl) == BUSY_EVAL
    # FUNCTION KILL does not stop an EVAL script; FUNCTION STATS is the
    # same BUSY error while one is busy.
    assert ctl.cmd("FUNCTION", "KILL") == BUSY_EVAL
    assert ctl.cmd("FUNCTION", "STATS") == BUSY_EVAL
    assert ctl.cmd("SCRIPT", "KILL") == OK
    assert runner.read().startswith(KILLED)


def test_function_stats_while_busy(new_server):
    srv, ctl = busy_server(new_server)
    runner = srv.conn(timeout=20)
    runner.send(encode("FCALL", "spin", 0, "arg"))
    assert wait_busy(ctl) == BUSY_FUNCTION
    # The worker running the function serves only the kill commands
    # meanwhile; from any other worker FUNCTION STATS describes it.
    stats = None
    for _ in range(16):
        reply = srv.conn(timeout=20).cmd("FUNCTION", "STATS")
        if not isinstance(reply, Error):
            stats = reply
            break
    assert stats is not None
    s = pairs(stats)
    running = pairs(s[b"running_script"])
    assert running[b"name"] == b"spin"
    assert running[b"command"] == [b"FCALL", b"spin", b"0", b"arg"]
    assert running[b"duration_ms"] >= 100
    assert s[b"engines"] == [b"LUA", [b"libraries_count", 1, b"functions_count", 3]]
    assert ctl.cmd("FUNCTION", "KILL") == OK
    assert runner.read() == fn_error(KILLED, "spin", 2)
    assert pairs(ctl.cmd("FUNCTION", "STATS"))[b"running_script"] is None


def test_server_stays_up(server):
    c = server.conn()
    assert c.cmd("PING") == Simple("PONG")
    assert server_version(c)
    c.close()
