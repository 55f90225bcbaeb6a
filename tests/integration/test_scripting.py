"""Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT LOAD / EXISTS /
FLUSH / KILL / HELP, the redis.* API, the sandbox, the bundled libraries
(cjson, cmsgpack, bit, struct), type conversion both ways in RESP2 and RESP3,
SCRIPT KILL of busy scripts, and scripts under concurrent load.

Replies and error strings are Redis's, byte for byte; every test that does not
start its own server also passes against redis-server 7.0 (--host/--port).
The target is Redis 8.4: where 8.x answers differently from 7.0 the test
checks 8.x and takes the `redis8` fixture, which skips it when the server
under test reports a 7.x redis_version. Those differences:

- numbers passed to redis.call are formatted shortest-round-trip (0.1 ->
  "0.1", 7.0 sends "0.10000000000000001"), and so are double replies;
- `os` exists and holds only os.clock (7.0 has no `os` at all);
- TIME is frozen for the length of a script;
- redis.log and redis.set_repl error texts were corrected;
- an error() table without an `err` field gets an error reply (7.0 crashes);
- EVAL (not SCRIPT LOAD) scripts are kept in a 500-entry LRU cache;
- cjson.decode_array_with_array_mt.

An error raised out of a script carries the suffix
" script: <sha1 of the body>, on @user_script:<line>."; `script_error` builds
it. redis.pcall and Lua's pcall see the same error without the suffix.
"""
import hashlib
import json
import socket
import threading
import time

import pytest
from resp import BigNum, Double, Error, Map, Set, Simple, Verbatim, encode

OK = Simple("OK")
NOSCRIPT = Error("NOSCRIPT No matching script. Please use EVAL.")
NOT_INT = Error("ERR value is not an integer or out of range")
KEYS_GT_ARGS = Error("ERR Number of keys can't be greater than number of args")
KEYS_NEG = Error("ERR Number of keys can't be negative")
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
BUSY = Error("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
NOTBUSY = Error("NOTBUSY No scripts in execution right now.")
UNKILLABLE = Error("UNKILLABLE Sorry the script already executed write commands against the dataset. "
                   "You can either wait the script termination or kill the server in a hard way using "
                   "the SHUTDOWN NOSAVE command.")
READONLY_TABLE = "Attempt to modify a readonly table"
NOT_ALLOWED = "ERR This Redis command is not allowed from script"


def sha1(body):
    if isinstance(body, str):
        body = body.encode()
    return hashlib.sha1(body).hexdigest()


def script_error(msg, body, line=1):
    """The error a client gets when `msg` is raised out of script `body`."""
    return Error("%s script: %s, on @user_script:%d." % (msg, sha1(body), line))


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


def ev(conn, body, *args):
    """EVAL body with no keys (args, if given, start with numkeys)."""
    return conn.cmd("EVAL", body, *(args or (0,)))


def assert_error(reply, expected):
    assert isinstance(reply, Error), reply
    assert reply == expected


def server_version(conn):
    info = conn.cmd("INFO", "server")
    for line in bytes(info).decode().split("\r\n"):
        if line.startswith("redis_version:"):
            return line.split(":", 1)[1]
    return ""


@pytest.fixture
def redis8(conn):
    """Marks a test of Redis 8.x behaviour: skipped against a 7.x server."""
    version = server_version(conn)
    if version.startswith("7"):
        pytest.skip("Redis 8.x behaviour; the server is %s" % version)


def read_flat(conn):
    """Read one reply without recursion (nesting can be thousands deep).
    Returns (deepest array nesting, leaves in order), a leaf being the bulk
    payload (None for null) or the raw line of any other type."""
    pending, deepest, leaves = [1], 0, []
    while pending:
        line = conn._line()
        pending[-1] -= 1
        kind = line[:1]
        if kind in (b"*", b"%", b"~"):
            n = int(line[1:])
            if kind == b"%":
                n *= 2
            if n > 0:
                pending.append(n)
                deepest = max(deepest, len(pending) - 1)
            elif n == 0:
                deepest = max(deepest, len(pending))
        elif kind == b"$":
            n = int(line[1:])
            leaves.append(conn._exact(n) if n >= 0 else None)
        else:
            leaves.append(line)
        while pending and pending[-1] == 0:
            pending.pop()
    return deepest, leaves


# ---- EVAL / EVALSHA / SCRIPT LOAD / EXISTS / FLUSH ---------------------------

def test_eval_keys_and_argv(conn):
    body = "return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}"
    assert ev(conn, body, 2, "a", "b", "c", "d") == [b"a", b"b", b"c", b"d", 2, 2]
    # KEYS[1] is nil with no keys: the array stops there.
    assert ev(conn, body, 0, "c", "d") == []
    assert ev(conn, "return {#KEYS, #ARGV, ARGV[1]}", 0, "c", "d") == [0, 2, b"c"]
    assert ev(conn, "return {#KEYS, #ARGV}", 3, "a", "b", "c") == [3, 0]
    assert ev(conn, "return ARGV[1]", 0, b"\x00bin\xffary\r\n") == b"\x00bin\xffary\r\n"
    assert ev(conn, "return KEYS[1] .. ARGV[1]", "1", "k", "v") == b"kv"
    # KEYS and ARGV are fresh tables each call.
    assert ev(conn, "KEYS[1] = 'changed'; return KEYS[1]", 1, "a") == b"changed"
    assert ev(conn, "return KEYS[1]", 1, "a") == b"a"
    assert ev(conn, "return 'hello' --trailing comment") == b"hello"


def test_eval_numkeys_errors(conn):
    assert_error(ev(conn, "return 1", 2, "a"), KEYS_GT_ARGS)
    assert_error(ev(conn, "return 1", 1), KEYS_GT_ARGS)
    assert_error(ev(conn, "return 1", -1), KEYS_NEG)
    assert_error(ev(conn, "return 1", -12), KEYS_NEG)
    assert_error(ev(conn, "return 1", "x"), NOT_INT)
    assert_error(ev(conn, "return 1", "1.5"), NOT_INT)
    assert_error(ev(conn, "return 1", ""), NOT_INT)
    assert_error(ev(conn, "return 1", "99999999999999999999"), NOT_INT)
    assert_error(conn.cmd("EVAL", "return 1"), arity("eval"))
    assert_error(conn.cmd("EVAL"), arity("eval"))
    assert_error(conn.cmd("EVALSHA", "x"), arity("evalsha"))
    assert_error(conn.cmd("EVAL_RO", "return 1"), arity("eval_ro"))
    assert_error(conn.cmd("EVALSHA_RO", "x"), arity("evalsha_ro"))
    sha = conn.cmd("SCRIPT", "LOAD", "return 1")
    assert_error(conn.cmd("EVALSHA", sha, 2, "a"), KEYS_GT_ARGS)
    assert_error(conn.cmd("EVALSHA", sha, -1), KEYS_NEG)
    assert_error(conn.cmd("EVALSHA", sha, "x"), NOT_INT)
    assert_error(conn.cmd("EVALSHA_RO", sha, 3, "a"), KEYS_GT_ARGS)


def test_script_load_and_evalsha(conn):
    body = "return 'loaded'"
    sha = conn.cmd("SCRIPT", "LOAD", body)
    assert sha == b"b534286061d4b9e4026607613b95c06c06015ae8" == sha1(body).encode()
    assert conn.cmd("EVALSHA", sha, 0) == b"loaded"
    assert conn.cmd("EVALSHA", sha.upper(), 0) == b"loaded"
    assert conn.cmd("EVALSHA_RO", sha, 0) == b"loaded"
    # Loading again gives the same digest; the digest covers the exact bytes.
    assert conn.cmd("SCRIPT", "LOAD", body) == sha
    assert conn.cmd("SCRIPT", "LOAD", body + " ") == sha1(body + " ").encode()
    keyed = "return {KEYS[1], ARGV[1]}"
    ksha = conn.cmd("SCRIPT", "LOAD", keyed)
    assert conn.cmd("EVALSHA", ksha, 1, "k", "v") == [b"k", b"v"]
    # A script that does not compile is refused and not cached.
    bad = "return +"
    assert_error(conn.cmd("SCRIPT", "LOAD", bad),
                 Error("ERR Error compiling script (new function): user_script:1: unexpected symbol near '+'"))
    assert conn.cmd("SCRIPT", "EXISTS", sha1(bad)) == [0]
    # An empty script is a valid script returning nil.
    assert conn.cmd("SCRIPT", "LOAD", "") == sha1("").encode()
    assert conn.cmd("EVALSHA", sha1(""), 0) is None


def test_evalsha_noscript(conn):
    conn.cmd("SCRIPT", "FLUSH")
    assert_error(conn.cmd("EVALSHA", "ffd632c7d33e571e9f24556ebed26c3479a87130", 0), NOSCRIPT)
    assert_error(conn.cmd("EVALSHA", "NotValidShaSUM", 0), NOSCRIPT)
    assert_error(conn.cmd("EVALSHA", "", 0), NOSCRIPT)
    assert_error(conn.cmd("EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8" + "0", 0), NOSCRIPT)
    # numkeys is checked before the lookup, except for a sha that is not
    # 40 characters long.
    assert_error(conn.cmd("EVALSHA", "ffd632c7d33e571e9f24556ebed26c3479a87130", -1), KEYS_NEG)
    assert_error(conn.cmd("EVALSHA", "ffd632c7d33e571e9f24556ebed26c3479a87130", 1), KEYS_GT_ARGS)
    assert_error(conn.cmd("EVALSHA", "abc", "x"), NOSCRIPT)
    assert_error(conn.cmd("EVALSHA", "abc", -1), NOSCRIPT)
    assert_error(conn.cmd("EVALSHA_RO", "ffd632c7d33e571e9f24556ebed26c3479a87130", 0), NOSCRIPT)


def test_eval_caches_script(conn):
    conn.cmd("SCRIPT", "FLUSH")
    body = "return 1+1"
    assert ev(conn, body) == 2
    assert conn.cmd("SCRIPT", "EXISTS", sha1(body)) == [1]
    assert conn.cmd("EVALSHA", sha1(body), 0) == 2
    # A script that fails at run time is still cached; one that does not
    # compile is not.
    failing = "return redis.call('nosuchcommand')"
    assert isinstance(ev(conn, failing), Error)
    assert conn.cmd("SCRIPT", "EXISTS", sha1(failing)) == [1]
    broken = "return 'abc"
    assert_error(ev(conn, broken),
                 Error("ERR Error compiling script (new function): user_script:1: unfinished string near '<eof>'"))
    assert conn.cmd("SCRIPT", "EXISTS", sha1(broken)) == [0]


def test_script_exists(conn):
    conn.cmd("SCRIPT", "FLUSH")
    a = conn.cmd("SCRIPT", "LOAD", "return 'a'").decode()
    b = "a27e7e8a43702b7046d4f6a7ccf5b60cef6b9bda"
    assert conn.cmd("SCRIPT", "EXISTS", a) == [1]
    assert conn.cmd("SCRIPT", "EXISTS", a, b, a.upper(), "x", "") == [1, 0, 1, 0, 0]
    assert conn.cmd("SCRIPT", "exists", b) == [0]
    assert_error(conn.cmd("SCRIPT", "EXISTS"), arity("script|exists"))


def test_script_flush(conn):
    for mode in ((), ("ASYNC",), ("SYNC",), ("async",), ("sync",)):
        sha = conn.cmd("SCRIPT", "LOAD", "return 'x'")
        ev(conn, "return 'y'")
        assert conn.cmd("SCRIPT", "FLUSH", *mode) == OK
        assert conn.cmd("SCRIPT", "EXISTS", sha, sha1("return 'y'")) == [0, 0]
        assert_error(conn.cmd("EVALSHA", sha, 0), NOSCRIPT)
    bad = Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
    assert_error(conn.cmd("SCRIPT", "FLUSH", "x"), bad)
    assert_error(conn.cmd("SCRIPT", "FLUSH", "SYNC", "ASYNC"), bad)
    assert_error(conn.cmd("SCRIPT", "FLUSH", "ASYNC", "ASYNC"), bad)
    # The cache works again after a flush.
    assert ev(conn, "return 'after'") == b"after"
    assert conn.cmd("EVALSHA", sha1("return 'after'"), 0) == b"after"


def test_script_flush_does_not_touch_data(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("SCRIPT", "FLUSH") == OK
    assert conn.cmd("GET", "k") == b"v"


def test_script_subcommand_errors(conn):
    assert_error(conn.cmd("SCRIPT"), arity("script"))
    assert_error(conn.cmd("SCRIPT", "FOO"), Error("ERR unknown subcommand 'FOO'. Try SCRIPT HELP."))
    assert_error(conn.cmd("SCRIPT", "LOAD"), arity("script|load"))
    assert_error(conn.cmd("SCRIPT", "LOAD", "a", "b"), arity("script|load"))
    assert_error(conn.cmd("SCRIPT", "KILL", "x"), arity("script|kill"))
    assert_error(conn.cmd("SCRIPT", "KILL"), NOTBUSY)
    assert_error(conn.cmd("SCRIPT", "DEBUG", "x"), Error("ERR Use SCRIPT DEBUG YES/SYNC/NO"))


def test_script_help(conn):
    help_ = conn.cmd("SCRIPT", "HELP")
    assert isinstance(help_, list) and all(isinstance(line, Simple) for line in help_)
    assert help_[0] == "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    for line in ("EXISTS <sha1> [<sha1> ...]",
                 "    Return information about the existence of the scripts in the script cache.",
                 "FLUSH [ASYNC|SYNC]",
                 "    Flush the Lua scripts cache. Very dangerous on replicas.",
                 "KILL", "    Kill the currently executing Lua script.",
                 "LOAD <script>", "    Load a script into the scripts cache without executing it."):
        assert line in help_
    # Redis 7.0 says "Prints this help.", 7.2 and later "Print this help.".
    assert help_[-2] == "HELP" and help_[-1] in ("    Print this help.", "    Prints this help.")
    assert_error(conn.cmd("SCRIPT", "HELP", "x"), arity("script|help"))


def test_eval_inside_multi(conn):
    sha = conn.cmd("SCRIPT", "LOAD", "return redis.call('incr', KEYS[1])")
    assert conn.cmd("MULTI") == OK
    assert conn.cmd("EVAL", "return redis.call('incr', KEYS[1])", 1, "c") == Simple("QUEUED")
    assert conn.cmd("EVALSHA", sha, 1, "c") == Simple("QUEUED")
    assert conn.cmd("EVAL", "return redis.call('get', KEYS[1])", 1, "c") == Simple("QUEUED")
    assert conn.cmd("EXEC") == [1, 2, b"2"]


# ---- EVAL_RO / EVALSHA_RO / shebang flags ------------------------------------

def test_eval_ro_refuses_writes(conn):
    conn.cmd("SET", "x", "val")
    body = "return redis.call('set', KEYS[1], 'y')"
    msg = "ERR Write commands are not allowed from read-only scripts."
    assert_error(conn.cmd("EVAL_RO", body, 1, "x"), script_error(msg, body))
    body2 = "redis.call('del', KEYS[1]);"
    assert_error(conn.cmd("EVAL_RO", body2, 1, "x"), script_error(msg, body2))
    # redis.pcall sees the error without the script suffix.
    assert_error(conn.cmd("EVAL_RO", "return redis.pcall('set', KEYS[1], 'y')", 1, "x"), Error(msg))
    assert conn.cmd("EVAL_RO", "local t = redis.pcall('set', KEYS[1], 'y'); return t.err", 1, "x") == msg.encode()
    assert conn.cmd("GET", "x") == b"val"
    # Reads are fine.
    assert conn.cmd("EVAL_RO", "return redis.call('get', KEYS[1])", 1, "x") == b"val"
    sha = conn.cmd("SCRIPT", "LOAD", body)
    assert_error(conn.cmd("EVALSHA_RO", sha, 1, "x"), script_error(msg, body))
    rsha = conn.cmd("SCRIPT", "LOAD", "return redis.call('get', KEYS[1])")
    assert conn.cmd("EVALSHA_RO", rsha, 1, "x") == b"val"
    # The same script writes through EVALSHA.
    assert conn.cmd("EVALSHA", sha, 1, "x") == OK
    assert conn.cmd("GET", "x") == b"y"


def test_shebang_no_writes(conn):
    conn.cmd("SET", "x", "val")
    body = "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'y')"
    # The shebang is line 1 of the script.
    assert_error(ev(conn, body, 1, "x"),
                 script_error("ERR Write commands are not allowed from read-only scripts.", body, line=2))
    assert conn.cmd("GET", "x") == b"val"
    ro = "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])"
    assert ev(conn, ro, 1, "x") == b"val"
    assert conn.cmd("EVAL_RO", ro, 1, "x") == b"val"
    sha = conn.cmd("SCRIPT", "LOAD", ro)
    assert sha == sha1(ro).encode()
    assert conn.cmd("EVALSHA_RO", sha, 1, "x") == b"val"
    assert ev(conn, "#!lua flags=no-writes,allow-stale\nreturn 1") == 1


def test_shebang_plain_and_empty_flags(conn):
    assert ev(conn, "#!lua\nreturn 1") == 1
    assert ev(conn, "#!lua\nreturn redis.call('set', KEYS[1], '1')", 1, "x") == OK
    assert ev(conn, "#!lua flags=\nreturn redis.call('set', KEYS[1], '2')", 1, "x") == OK
    assert conn.cmd("GET", "x") == b"2"
    assert ev(conn, "#!lua flags=allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 2") == 2
    body = "#!lua\n\nreturn redis.call('nosuchcommand')"
    assert_error(ev(conn, body), script_error("ERR Unknown Redis command called from script", body, line=3))
    # A shebang without no-writes declares a script that may write: the *_RO
    # commands refuse it before it runs, even if it only reads.
    ro_refused = Error("ERR Can not execute a script with write flag using *_ro command.")
    assert_error(conn.cmd("EVAL_RO", "#!lua\nreturn redis.call('get', KEYS[1])", 1, "x"), ro_refused)
    sha = conn.cmd("SCRIPT", "LOAD", "#!lua flags=allow-stale\nreturn 1")
    assert_error(conn.cmd("EVALSHA_RO", sha, 0), ro_refused)
    # Without a shebang EVAL_RO runs it and refuses only actual writes.
    assert conn.cmd("EVAL_RO", "return redis.call('get', KEYS[1])", 1, "x") == b"2"


def test_shebang_errors(conn):
    assert_error(ev(conn, "#!lua flags=bogus\nreturn 1"), Error("ERR Unexpected flag in script shebang: bogus"))
    assert_error(ev(conn, "#!lua flags=no-writes,bogus\nreturn 1"),
                 Error("ERR Unexpected flag in script shebang: bogus"))
    assert_error(ev(conn, "#!lua flags=allow-oom,what?\nreturn 1"),
                 Error("ERR Unexpected flag in script shebang: what?"))
    assert_error(ev(conn, "#!lua name=x\nreturn 1"), Error("ERR Unknown lua shebang option: name=x"))
    assert_error(ev(conn, "#!lua"), Error("ERR Invalid script shebang"))
    assert_error(ev(conn, "#!python\nreturn 1"), Error("ERR Unexpected engine in script shebang: #!python"))
    assert_error(ev(conn, "#! lua\nreturn 1"), Error("ERR Unexpected engine in script shebang: #!"))
    assert_error(conn.cmd("SCRIPT", "LOAD", "#!lua flags=bogus\nreturn 1"),
                 Error("ERR Unexpected flag in script shebang: bogus"))
    assert conn.cmd("SCRIPT", "EXISTS", sha1("#!lua flags=bogus\nreturn 1")) == [0]


# ---- Lua -> RESP2 ------------------------------------------------------------

def test_lua_numbers_become_integers(conn):
    assert ev(conn, "return 3.99") == 3
    assert ev(conn, "return -3.99") == -3
    assert ev(conn, "return 100.5") == 100
    assert ev(conn, "return 0.5") == 0
    assert ev(conn, "return 42") == 42
    assert ev(conn, "return -7") == -7
    assert ev(conn, "return 9007199254740991") == 9007199254740991
    assert ev(conn, "return 2^53") == 9007199254740992
    assert ev(conn, "return {1.5, 2.5, -0.9}") == [1, 2, 0]
    assert conn.cmd_raw("EVAL", "return -0.9", 0) == b":0\r\n"


def test_lua_strings_booleans_nil(conn):
    assert ev(conn, "return 'hello world'") == b"hello world"
    assert ev(conn, "return ''") == b""
    assert ev(conn, "return 'a\\0b'") == b"a\x00b"
    assert ev(conn, "return true") == 1
    assert ev(conn, "return false") is None
    assert ev(conn, "return nil") is None
    assert ev(conn, "return") is None
    assert ev(conn, "local x = 1") is None
    assert conn.cmd_raw("EVAL", "return false", 0) == b"$-1\r\n"
    assert conn.cmd_raw("EVAL", "return nil", 0) == b"$-1\r\n"
    assert conn.cmd_raw("EVAL", "return true", 0) == b":1\r\n"
    assert conn.cmd_raw("EVAL", "return 'ab'", 0) == b"$2\r\nab\r\n"
    # Values that have no RESP form become nil.
    assert ev(conn, "return function() end") is None
    assert ev(conn, "return coroutine.create(function() end)") is None


def test_lua_tables_become_arrays(conn):
    assert ev(conn, "return {1, 2, 3, 'ciao', {1, 2}}") == [1, 2, 3, b"ciao", [1, 2]]
    assert ev(conn, "return {1, 2, nil, 4}") == [1, 2]
    assert ev(conn, "return {nil, 2}") == []
    assert ev(conn, "return {}") == []
    assert ev(conn, "return {1, {2, {3, 'a', {}}}, 'b'}") == [1, [2, [3, b"a", []]], b"b"]
    assert ev(conn, "return {true, false, 1.5, 'x'}") == [1, None, 1, b"x"]
    # Only the array part counts.
    assert ev(conn, "return {1, x='a', 2}") == [1, 2]
    assert ev(conn, "return {x='a'}") == []
    assert ev(conn, "local t = {} t[2] = 'b' return t") == []
    assert conn.cmd_raw("EVAL", "return {1, 'a', {}, false}", 0) == b"*4\r\n:1\r\n$1\r\na\r\n*0\r\n$-1\r\n"
    big = ev(conn, "local t = {} for i = 1, 10000 do t[i] = i end return t")
    assert big == list(range(1, 10001))


def test_lua_status_and_error_tables(conn):
    ok = ev(conn, "return {ok='fine'}")
    assert isinstance(ok, Simple) and ok == "fine"
    assert conn.cmd_raw("EVAL", "return {ok='fine'}", 0) == b"+fine\r\n"
    assert conn.cmd_raw("EVAL", "return redis.status_reply('FINE')", 0) == b"+FINE\r\n"
    assert conn.cmd_raw("EVAL", "return redis.status_reply('MY_OK_CODE custom msg')", 0) == \
        b"+MY_OK_CODE custom msg\r\n"
    # CR and LF in a status become spaces.
    assert conn.cmd_raw("EVAL", "return {ok='a\\r\\nb'}", 0) == b"+a  b\r\n"
    assert conn.cmd_raw("EVAL", "return redis.status_reply('a\\r\\nb')", 0) == b"+a  b\r\n"
    # {err=...} is sent as it is: no ERR code is added.
    assert conn.cmd_raw("EVAL", "return {err='x'}", 0) == b"-x\r\n"
    assert_error(ev(conn, "return {err='this is an error'}"), Error("this is an error"))
    assert_error(ev(conn, "return {err='ERR this is an error'}"), Error("ERR this is an error"))
    assert_error(ev(conn, "return {err='-x y'}"), Error("-x y"))
    # redis.error_reply adds nothing to a message with a code, and strips a
    # leading dash.
    assert_error(ev(conn, "return redis.error_reply('My Error')"), Error("My Error"))
    assert_error(ev(conn, "return redis.error_reply('-My Error')"), Error("My Error"))
    assert_error(ev(conn, "return redis.error_reply('MY_ERR_CODE custom msg')"), Error("MY_ERR_CODE custom msg"))
    assert_error(ev(conn, "return redis.error_reply('ERR x')"), Error("ERR x"))
    assert ev(conn, "local e = redis.error_reply('X y'); return {type(e), e.err}") == [b"table", b"X y"]
    assert ev(conn, "local s = redis.status_reply('X'); return {type(s), s.ok}") == [b"table", b"X"]
    # Wrong arguments give back an error table (not raised).
    args_err = Error("ERR wrong number or type of arguments")
    assert_error(ev(conn, "return redis.error_reply()"), args_err)
    assert_error(ev(conn, "return redis.error_reply(1)"), args_err)
    assert_error(ev(conn, "return redis.status_reply(1)"), args_err)
    assert_error(ev(conn, "return redis.status_reply('a', 'b')"), args_err)
    # err takes precedence over ok; a non-string field is not a status.
    assert_error(ev(conn, "return {ok='a', err='b'}"), Error("b"))
    assert ev(conn, "return {1, ok='a'}") == Simple("a")
    assert ev(conn, "return {ok=1}") == []
    assert ev(conn, "return {err=1}") == []
    # An error nested in an array is an element, not the reply.
    reply = ev(conn, "return {1, {err='inner'}, 3}")
    assert reply[0] == 1 and reply[2] == 3
    assert isinstance(reply[1], Error) and reply[1] == "inner"


def test_lua_typed_tables_on_resp2(conn):
    assert conn.cmd_raw("EVAL", "return {double=3.5}", 0) == b"$3\r\n3.5\r\n"
    assert ev(conn, "return {double=3}") == b"3"
    assert ev(conn, "return {double=-0.25}") == b"-0.25"
    assert ev(conn, "return {double='x'}") == []
    assert ev(conn, "return {big_number='123456789012345678901234567890'}") == b"123456789012345678901234567890"
    assert conn.cmd_raw("EVAL", "return {big_number='1\\r\\n2'}", 0) == b"$4\r\n1  2\r\n"
    assert conn.cmd_raw("EVAL", "return {verbatim_string={format='txt', string='hello'}}", 0) == \
        b"$5\r\nhello\r\n"
    assert ev(conn, "return {map={a=1}}") == [b"a", 1]
    flat = ev(conn, "return {map={a=1, b='x'}}")
    assert dict(zip(flat[::2], flat[1::2])) == {b"a": 1, b"b": b"x"}
    assert ev(conn, "return {set={a=true}}") == [b"a"]
    assert sorted(ev(conn, "return {set={a=true, b=true}}")) == [b"a", b"b"]
    assert conn.cmd_raw("EVAL", "return {map={}}", 0) == b"*0\r\n"
    assert conn.cmd_raw("EVAL", "return {set={}}", 0) == b"*0\r\n"


# ---- RESP2 -> Lua ------------------------------------------------------------

def test_redis_replies_to_lua(conn):
    conn.cmd("SET", "x", "0")
    assert ev(conn, "local v = redis.pcall('incr', KEYS[1]); return {type(v), v}", 1, "x") == [b"number", 1]
    conn.cmd("SET", "s", "myval")
    assert ev(conn, "local v = redis.call('get', KEYS[1]); return {type(v), v}", 1, "s") == [b"string", b"myval"]
    # A nil bulk and a nil array become false.
    assert ev(conn, "local v = redis.call('get', 'nokey'); return {type(v), tostring(v)}") == \
        [b"boolean", b"false"]
    assert ev(conn, "return tostring(redis.call('lmpop', 1, 'nokey', 'left'))") == b"false"
    conn.cmd("RPUSH", "l", "a", "b", "c")
    assert ev(conn, "local v = redis.call('lrange', KEYS[1], 0, -1); return {type(v), v[1], v[2], v[3], #v}",
              1, "l") == [b"table", b"a", b"b", b"c", 3]
    assert ev(conn, "local v = redis.call('lrange', 'nokey', 0, -1); return {type(v), #v}") == [b"table", 0]
    # A status reply becomes a table with ok.
    assert ev(conn, "local v = redis.call('set', KEYS[1], 'myval'); return {type(v), v.ok}", 1, "k") == \
        [b"table", b"OK"]
    assert ev(conn, "local v = redis.call('ping'); return {type(v), v.ok}") == [b"table", b"PONG"]
    # An error (pcall) becomes a table with err.
    assert ev(conn, "local v = redis.pcall('incr', KEYS[1]); return {type(v), v.err}", 1, "s") == \
        [b"table", NOT_INT.encode()]
    # Nested arrays, integers inside arrays.
    conn.cmd("ZADD", "z", "1", "a", "2", "b")
    assert ev(conn, "return redis.call('zrange', KEYS[1], 0, -1, 'withscores')", 1, "z") == [b"a", b"1", b"b", b"2"]
    assert ev(conn, "local v = redis.call('lmpop', 1, KEYS[1], 'left'); return {v[1], v[2][1], #v[2]}", 1, "l") == \
        [b"l", b"a", 1]


def test_round_trips(conn):
    assert ev(conn, "return redis.call('set', KEYS[1], ARGV[1])", 1, "k", "v1") == OK
    assert ev(conn, "return redis.call('get', KEYS[1])", 1, "k") == b"v1"
    assert ev(conn, "return redis.call('get', 'nokey')") is None
    assert ev(conn, "return redis.call('incr', KEYS[1])", 1, "n") == 1
    assert ev(conn, "return redis.call('incrby', KEYS[1], 41)", 1, "n") == 42
    assert conn.cmd("GET", "n") == b"42"
    assert ev(conn, "return redis.call('rpush', KEYS[1], 'a', 'b', 3)", 1, "l") == 3
    assert ev(conn, "return redis.call('lrange', KEYS[1], 0, -1)", 1, "l") == [b"a", b"b", b"3"]
    assert ev(conn, "return redis.call('hset', KEYS[1], 'f1', 'v1', 'f2', 2)", 1, "h") == 2
    flat = ev(conn, "return redis.call('hgetall', KEYS[1])", 1, "h")
    assert dict(zip(flat[::2], flat[1::2])) == {b"f1": b"v1", b"f2": b"2"}
    assert ev(conn, "return redis.call('sadd', KEYS[1], 'x', 'y')", 1, "s") == 2
    assert sorted(ev(conn, "return redis.call('smembers', KEYS[1])", 1, "s")) == [b"x", b"y"]
    assert ev(conn, "return redis.call('zadd', KEYS[1], 1.5, 'm')", 1, "z") == 1
    assert ev(conn, "return redis.call('zscore', KEYS[1], 'm')", 1, "z") == b"1.5"
    assert ev(conn, "return redis.call('del', KEYS[1], KEYS[2])", 2, "k", "nokey") == 1
    assert ev(conn, "return redis.call('exists', KEYS[1])", 1, "k") == 0
    assert ev(conn, "return redis.call('type', KEYS[1])", 1, "h") == Simple("hash")
    # A script is a normal client: a long reply is passed through whole.
    conn.cmd("SET", "big", "x" * 100000)
    assert ev(conn, "return redis.call('get', KEYS[1])", 1, "big") == b"x" * 100000
    assert ev(conn, "return #redis.call('get', KEYS[1])", 1, "big") == 100000
    # Strings holding numbers keep their digits.
    assert ev(conn, "redis.call('set', 'key', '12039611435714932082'); return redis.call('get', 'key')") == \
        b"12039611435714932082"


def test_number_arguments(conn):
    cases = [("3.0", b"3"), ("3.5", b"3.5"), ("-0.5", b"-0.5"), ("1e15", b"1000000000000000"),
             ("1e9", b"1000000000"), ("9007199254740991", b"9007199254740991"), ("-42", b"-42"), ("0", b"0")]
    for lua, stored in cases:
        assert ev(conn, "return redis.call('set', KEYS[1], %s)" % lua, 1, "f") == OK
        assert conn.cmd("GET", "f") == stored, lua
    assert ev(conn, "return redis.call('expire', KEYS[1], 1e3)", 1, "f") == 1
    assert 990 <= conn.cmd("TTL", "f") <= 1000
    assert ev(conn, "return redis.call('incrby', KEYS[1], 2.0)", 1, "n") == 2


def test_number_arguments_shortest_repr(conn, redis8):
    for lua, stored in (("0.1", b"0.1"), ("1.1", b"1.1"), ("3.14", b"3.14"), ("-0.3", b"-0.3")):
        assert ev(conn, "return redis.call('set', KEYS[1], %s)" % lua, 1, "f") == OK
        assert conn.cmd("GET", "f") == stored, lua
    assert ev(conn, "return redis.call('incrbyfloat', KEYS[1], 0.1)", 1, "g") == b"0.1"


# ---- RESP3 -------------------------------------------------------------------

def test_setresp3_hgetall_is_a_map(conn, conn3):
    conn.cmd("HSET", "h", "f1", "v1", "f2", "v2")
    body = ("redis.setresp(3); local r = redis.call('hgetall', KEYS[1]); "
            "return {type(r), type(r.map), r.map.f1, r.map.f2}")
    assert ev(conn, body, 1, "h") == [b"table", b"table", b"v1", b"v2"]
    assert ev(conn, "local r = redis.call('hgetall', KEYS[1]); return {#r, tostring(r.map)}", 1, "h") == \
        [4, b"nil"]
    passthrough = "redis.setresp(3); return redis.call('hgetall', KEYS[1])"
    reply = conn3.cmd("EVAL", passthrough, 1, "h")
    assert isinstance(reply, Map) and reply.dict() == {b"f1": b"v1", b"f2": b"v2"}
    flat = conn.cmd("EVAL", passthrough, 1, "h")
    assert isinstance(flat, list) and dict(zip(flat[::2], flat[1::2])) == {b"f1": b"v1", b"f2": b"v2"}
    # A RESP2 script gives a RESP3 client a flat array, in field order.
    assert conn3.cmd("EVAL", "return redis.call('hgetall', KEYS[1])", 1, "h") == [b"f1", b"v1", b"f2", b"v2"]
    assert conn3.cmd_raw("EVAL", passthrough, 1, "nokey") == b"%0\r\n"
    assert conn.cmd_raw("EVAL", passthrough, 1, "nokey") == b"*0\r\n"


def test_setresp3_other_types(conn, conn3):
    conn.cmd("SADD", "s", "a")
    conn.cmd("ZADD", "z", "1.5", "m")
    body = "redis.setresp(3); local r = redis.call('smembers', KEYS[1]); return {type(r.set), tostring(r.set.a)}"
    assert ev(conn, body, 1, "s") == [b"table", b"true"]
    body = "redis.setresp(3); local r = redis.call('zscore', KEYS[1], 'm'); return {type(r), tostring(r.double)}"
    assert ev(conn, body, 1, "z") == [b"table", b"1.5"]
    reply = conn3.cmd("EVAL", "redis.setresp(3); return redis.call('zscore', KEYS[1], 'm')", 1, "z")
    assert isinstance(reply, Double) and reply == 1.5
    assert conn.cmd("EVAL", "redis.setresp(3); return redis.call('zscore', KEYS[1], 'm')", 1, "z") == b"1.5"
    reply = conn3.cmd("EVAL", "redis.setresp(3); return redis.call('smembers', KEYS[1])", 1, "s")
    assert isinstance(reply, Set) and reply == [b"a"]
    # RESP3 null is Lua nil (RESP2 null is false).
    assert ev(conn, "redis.setresp(3); return tostring(redis.call('get', 'nokey'))") == b"nil"
    assert ev(conn, "redis.setresp(2); return tostring(redis.call('get', 'nokey'))") == b"false"
    assert conn3.cmd_raw("EVAL", "redis.setresp(3); return redis.call('get', 'nokey')", 0) == b"_\r\n"
    # Integers and bulk strings are the same in both.
    conn.cmd("SET", "k", "v")
    assert ev(conn, "redis.setresp(3); return {redis.call('get', KEYS[1]), redis.call('strlen', KEYS[1])}", 1, "k") == \
        [b"v", 1]
    # setresp affects only the rest of this script.
    assert ev(conn, "return type(redis.call('zscore', KEYS[1], 'm'))", 1, "z") == b"string"


def test_setresp3_verbatim_from_info(conn):
    body = ("redis.setresp(3); local r = redis.call('info', 'server'); "
            "return {type(r), r.verbatim_string.format, string.sub(r.verbatim_string.string, 1, 8)}")
    assert ev(conn, body) == [b"table", b"txt", b"# Server"]
    assert ev(conn, "local r = redis.call('info', 'server'); return {type(r), string.sub(r, 1, 8)}") == \
        [b"string", b"# Server"]


def test_resp3_replies_from_lua(conn3):
    reply = conn3.cmd("EVAL", "return {map={f='v', g=1}}", 0)
    assert isinstance(reply, Map) and reply.dict() == {b"f": b"v", b"g": 1}
    reply = conn3.cmd("EVAL", "return {map={f={1, 2}}}", 0)
    assert reply == Map([(b"f", [1, 2])])
    assert conn3.cmd("EVAL", "return {{map={a=1}}}", 0) == [[(b"a", 1)]]
    reply = conn3.cmd("EVAL", "return {set={x=true, y=true}}", 0)
    assert isinstance(reply, Set) and sorted(reply) == [b"x", b"y"]
    assert conn3.cmd_raw("EVAL", "return {map={}}", 0) == b"%0\r\n"
    assert conn3.cmd_raw("EVAL", "return {set={}}", 0) == b"~0\r\n"
    assert conn3.cmd_raw("EVAL", "return {double=3.5}", 0) == b",3.5\r\n"
    assert conn3.cmd_raw("EVAL", "return {double=-0.25}", 0) == b",-0.25\r\n"
    assert conn3.cmd_raw("EVAL", "return {double=1/0}", 0) == b",inf\r\n"
    assert conn3.cmd_raw("EVAL", "return {double=-1/0}", 0) == b",-inf\r\n"
    reply = conn3.cmd("EVAL", "return {big_number='123456789012345678901234567890'}", 0)
    assert isinstance(reply, BigNum) and reply == 123456789012345678901234567890
    assert conn3.cmd_raw("EVAL", "return {big_number='-12'}", 0) == b"(-12\r\n"
    conn3.send(encode("EVAL", "return {big_number='1\\r\\n2'}", 0))
    assert conn3._line() == b"(1  2"
    reply = conn3.cmd("EVAL", "return {verbatim_string={format='mkd', string='# hi'}}", 0)
    assert isinstance(reply, Verbatim) and reply.fmt == b"mkd" and reply == b"# hi"
    assert conn3.cmd_raw("EVAL", "return {verbatim_string={format='txt', string='hello'}}", 0) == \
        b"=9\r\ntxt:hello\r\n"
    # Booleans: a RESP2 script (the default) gives null / 1; after setresp(3)
    # they are RESP3 booleans.
    assert conn3.cmd_raw("EVAL", "return false", 0) == b"_\r\n"
    assert conn3.cmd_raw("EVAL", "return nil", 0) == b"_\r\n"
    assert conn3.cmd_raw("EVAL", "return true", 0) == b":1\r\n"
    assert conn3.cmd("EVAL", "redis.setresp(3); return true", 0) is True
    assert conn3.cmd("EVAL", "redis.setresp(3); return false", 0) is False
    assert conn3.cmd_raw("EVAL", "return {1, false, true, nil}", 0) == b"*3\r\n:1\r\n_\r\n:1\r\n"
    assert conn3.cmd_raw("EVAL", "redis.setresp(3); return {1, false, true, nil}", 0) == b"*3\r\n:1\r\n#f\r\n#t\r\n"
    assert conn3.cmd_raw("EVAL", "return {err='x'}", 0) == b"-x\r\n"
    assert conn3.cmd_raw("EVAL", "return {ok='x'}", 0) == b"+x\r\n"
    assert conn3.cmd_raw("EVAL", "return 'x'", 0) == b"$1\r\nx\r\n"
    assert conn3.cmd_raw("EVAL", "return 3.7", 0) == b":3\r\n"


def test_resp3_booleans_on_resp2_client(conn):
    assert conn.cmd_raw("EVAL", "redis.setresp(3); return true", 0) == b":1\r\n"
    assert conn.cmd_raw("EVAL", "redis.setresp(3); return false", 0) == b":0\r\n"
    assert conn.cmd_raw("EVAL", "redis.setresp(3); return nil", 0) == b"$-1\r\n"
    assert conn.cmd_raw("EVAL", "return {map={a=true}}", 0) == b"*2\r\n$1\r\na\r\n:1\r\n"


def test_setresp_errors(conn):
    for body in ("return redis.setresp(1)", "return redis.setresp(4)", "return redis.setresp(0)"):
        assert_error(ev(conn, body), script_error("ERR RESP version must be 2 or 3.", body))
    for body in ("return redis.setresp()", "return redis.setresp(2, 3)"):
        assert_error(ev(conn, body), script_error("ERR redis.setresp() requires one argument.", body))
    assert ev(conn, "redis.setresp(2); redis.setresp(3); redis.setresp(2); return 1") == 1
    assert ev(conn, "return redis.setresp('3')") is None


def test_double_replies_shortest_repr(conn, conn3, redis8):
    assert ev(conn, "return {double=0.1}") == b"0.1"
    assert ev(conn, "return {double=3.14}") == b"3.14"
    assert conn3.cmd_raw("EVAL", "return {double=3.14}", 0) == b",3.14\r\n"
    assert conn3.cmd_raw("EVAL", "return {double=0.1}", 0) == b",0.1\r\n"


# ---- errors ------------------------------------------------------------------

def test_call_unknown_command(conn):
    body = "return redis.call('nosuchcommand')"
    assert_error(ev(conn, body), script_error("ERR Unknown Redis command called from script", body))
    body = "redis.call('nosuchcommand')"
    assert_error(ev(conn, body), script_error("ERR Unknown Redis command called from script", body))
    assert_error(ev(conn, "return redis.pcall('nosuchcommand')"), Error("ERR Unknown Redis command called from script"))
    assert ev(conn, "local t = redis.pcall('nosuchcommand'); return {type(t), t.err}") == \
        [b"table", b"ERR Unknown Redis command called from script"]
    # Execution stops at a failing redis.call.
    body = "redis.call('set', KEYS[1], '1'); redis.call('nosuchcommand'); redis.call('set', KEYS[1], '2')"
    assert isinstance(ev(conn, body, 1, "x"), Error)
    assert conn.cmd("GET", "x") == b"1"
    # ... and goes on after a failing redis.pcall.
    body = "redis.call('set', KEYS[1], '1'); redis.pcall('nosuchcommand'); return redis.call('set', KEYS[1], '2')"
    assert ev(conn, body, 1, "x") == OK
    assert conn.cmd("GET", "x") == b"2"


def test_call_wrong_arity(conn):
    msg = "ERR Wrong number of args calling Redis command from script"
    for body in ("return redis.call('get')", "return redis.call('set', 'invalid')", "redis.call('incr')",
                 "return redis.call('get', 'a', 'b', 'c')"):
        assert_error(ev(conn, body), script_error(msg, body))
    assert ev(conn, "local t = redis.pcall('get'); return t.err") == msg.encode()
    # Multi-line script: the line of the failing call.
    body = "local a = 1\nlocal b = 2\nreturn redis.call('get')"
    assert_error(ev(conn, body), script_error(msg, body, line=3))


def test_call_without_arguments(conn):
    msg = "ERR Please specify at least one argument for this redis lib call"
    body = "return redis.call()"
    assert_error(ev(conn, body), script_error(msg, body))
    assert_error(ev(conn, "return redis.pcall()"), Error(msg))


def test_call_argument_types(conn):
    msg = "ERR Lua redis lib command arguments must be strings or integers"
    for body in ("return redis.call({})", "return redis.call('set', 'k', {})", "return redis.call('set', 'k', nil)",
                 "return redis.call('set', 'k', true)", "return redis.call('ping', function() end)",
                 "local x = {} return redis.call('ping', x)"):
        assert_error(ev(conn, body), script_error(msg, body))
    assert_error(ev(conn, "return redis.pcall('set', 'k', true)"), Error(msg))
    assert conn.cmd("EXISTS", "k") == 0
    # The next call works (arguments are not left behind).
    assert ev(conn, "return redis.call('ping', 'asdf')") == b"asdf"
    assert ev(conn, "return redis.call('ping')") == Simple("PONG")


def test_wrongtype_propagates(conn):
    conn.cmd("SET", "s", "v")
    body = "return redis.call('lpush', KEYS[1], 'x')"
    assert_error(ev(conn, body, 1, "s"), script_error(WRONGTYPE, body))
    assert_error(ev(conn, "return redis.pcall('lpush', KEYS[1], 'x')", 1, "s"), Error(WRONGTYPE))
    assert ev(conn, "local t = redis.pcall('lpush', KEYS[1], 'x'); return {type(t), t.err}", 1, "s") == \
        [b"table", WRONGTYPE.encode()]
    body = "return redis.call('incr', KEYS[1])"
    assert_error(ev(conn, body, 1, "s"), script_error("ERR value is not an integer or out of range", body))
    assert conn.cmd("GET", "s") == b"v"


def test_pcall_returns_error_tables(conn):
    conn.cmd("SET", "s", "v")
    body = """
        local errs = {}
        local r1 = redis.pcall('incr', KEYS[1])
        local r2 = redis.pcall('hget', KEYS[1], 'f')
        local r3 = redis.pcall('nosuch')
        local r4 = redis.pcall('get', KEYS[1])
        return {r1.err, r2.err, r3.err, r4}
    """
    assert ev(conn, body, 1, "s") == [NOT_INT.encode(), WRONGTYPE.encode(),
                                       b"ERR Unknown Redis command called from script", b"v"]
    # Returning the table returns the error.
    assert_error(ev(conn, "return redis.pcall('incr', KEYS[1])", 1, "s"), NOT_INT)


def test_error_function(conn):
    body = "error('x')"
    assert_error(ev(conn, body), script_error("ERR user_script:1: x", body))
    body = "error('x', 0)"
    assert_error(ev(conn, body), script_error("ERR x", body))
    body = "error({err='MY err'})"
    assert_error(ev(conn, body), script_error("MY err", body))
    body = "error({err='ERR custom failure'})"
    assert_error(ev(conn, body), script_error("ERR custom failure", body))
    body = "error(12)"
    assert_error(ev(conn, body), script_error("ERR user_script:1: 12", body))
    body = "error()"
    assert_error(ev(conn, body), script_error("ERR nil", body))
    body = "local t = nil\nreturn t.x"
    assert_error(ev(conn, body), script_error("ERR user_script:2: attempt to index local 't' (a nil value)", body, 2))
    body = "return 1 + {}"
    assert_error(ev(conn, body),
                 script_error("ERR user_script:1: attempt to perform arithmetic on a table value", body))
    body = "assert(false, 'my assertion')"
    assert_error(ev(conn, body), script_error("ERR user_script:1: my assertion", body))


def test_lua_pcall_catches_errors(conn):
    assert ev(conn, "local ok, err = pcall(function() error('boom') end); return {tostring(ok), err}") == \
        [b"false", b"user_script:1: boom"]
    # redis.call errors and error tables reach Lua's pcall as their message.
    assert ev(conn, "local ok, err = pcall(function() redis.call('nosuch') end); return {tostring(ok), err}") == \
        [b"false", b"ERR Unknown Redis command called from script"]
    assert ev(conn, "local ok, err = pcall(function() error({err='X y'}) end); return {tostring(ok), err}") == \
        [b"false", b"X y"]
    body = "local ok, res = pcall(function() return 1 end); return 'status: ' .. tostring(ok) .. ' result: ' .. res"
    assert ev(conn, body) == b"status: true result: 1"
    assert ev(conn, "local ok, err = pcall(function() return foo end); return err") == \
        b"user_script:1: Script attempted to access nonexistent global variable 'foo'"
    assert ev(conn, "local ok, a, b = pcall(function() return 1, 2 end); return {tostring(ok), a, b}") == \
        [b"true", 1, 2]
    assert ev(conn, "local ok, err = xpcall(function() error('e') end, function(m) return 'handled: ' .. m end); "
                    "return {tostring(ok), err}") == [b"false", b"handled: user_script:1: e"]


def test_compile_errors(conn):
    prefix = "ERR Error compiling script (new function): "
    assert_error(ev(conn, "return 3 +"), Error(prefix + "user_script:1: unexpected symbol near '<eof>'"))
    assert_error(ev(conn, "return 'abc"), Error(prefix + "user_script:1: unfinished string near '<eof>'"))
    assert_error(ev(conn, "local x = = 1"), Error(prefix + "user_script:1: unexpected symbol near '='"))
    assert_error(ev(conn, "\n\nfor"), Error(prefix + "user_script:3: '<name>' expected near '<eof>'"))
    assert_error(ev(conn, "if true then"), Error(prefix + "user_script:1: 'end' expected near '<eof>'"))


def test_error_table_without_err_field(conn, redis8):
    # Redis 7.0 crashes on these; 8.x answers with an error.
    for body in ("error({x=1})", "error({})", "error({err=12})", "return {err={}}"):
        reply = ev(conn, body)
        assert isinstance(reply, (Error, list)), (body, reply)
    assert conn.cmd("PING") == Simple("PONG")


# ---- sandbox -----------------------------------------------------------------

def test_missing_libraries_and_functions(conn):
    for name, body in (("io", "return io.open('x')"), ("loadfile", "return loadfile('x')"),
                       ("dofile", "return dofile('x')"), ("print", "print('some data')"),
                       ("require", "return require('x')"), ("package", "return package"),
                       ("debug", "return debug"), ("module", "return module('x')"), ("y", "return y")):
        msg = "ERR user_script:1: Script attempted to access nonexistent global variable '%s'" % name
        assert_error(ev(conn, body), script_error(msg, body))


def test_os_has_only_clock(conn, redis8):
    assert ev(conn, "return type(os.clock())") == b"number"
    assert ev(conn, "local t = os.clock(); local x = 0; for i = 1, 100000 do x = x + i end; "
                    "return tostring(os.clock() >= t)") == b"true"
    for fn in ("execute", "exit", "getenv", "remove", "rename", "tmpname", "time", "date"):
        body = "os.%s()" % fn
        assert_error(ev(conn, body),
                     script_error("ERR user_script:1: attempt to call field '%s' (a nil value)" % fn, body))
    body = "os.x = 1"
    assert_error(ev(conn, body), script_error("ERR user_script:1: " + READONLY_TABLE, body))


def test_globals_are_protected(conn):
    for body in ("x = 1", "a=10", "function f() return 1 end; return f()", "redis = 1", "KEYS = 1",
                 "_G = {}", "_G.x = 1", "redis = function() return 1 end", "cjson = nil"):
        assert_error(ev(conn, body), script_error("ERR user_script:1: " + READONLY_TABLE, body))
    # From a C function the error has no position.
    for body in ("rawset(_G, 'x', 1)", "setmetatable(_G, {})"):
        assert_error(ev(conn, body), script_error("ERR " + READONLY_TABLE, body))
    body = "local g = getmetatable(_G); g.__index = {}"
    assert_error(ev(conn, body), script_error("ERR user_script:1: " + READONLY_TABLE, body))
    # Locals are fine, and a failed script left nothing behind.
    assert ev(conn, "local x = 1; local function f() return x + 1 end; return f()") == 2
    body = "return x"
    assert_error(ev(conn, body),
                 script_error("ERR user_script:1: Script attempted to access nonexistent global variable 'x'", body))


def test_library_tables_are_readonly(conn):
    for body in ("redis.call = function() return 1 end", "redis.x = 1", "redis.REDIS_VERSION = 'x'",
                 "cjson.encode = function() return 1 end", "cmsgpack.pack = function() return 1 end",
                 "bit.lshift = function() return 1 end", "struct.pack = 1", "string.x = 1",
                 "math.random = 1", "table.insert = nil", "coroutine.x = 1",
                 "local t = getmetatable('') ; t.__index = nil"):
        assert_error(ev(conn, body), script_error("ERR user_script:1: " + READONLY_TABLE, body))
    # Still intact afterwards.
    assert ev(conn, "return redis.call('ping', 'x')") == b"x"
    assert ev(conn, "return ('abc'):upper()") == b"ABC"


def test_returning_special_tables(conn):
    assert ev(conn, "return _G") == []
    assert ev(conn, "local a = {}; setmetatable(a, {__index=function() foo() end}) return a") == []
    assert ev(conn, "local a = {}; setmetatable(a, {__index=function() redis.call('set', 'x', '1') end}) return a",
              1, "x") == []
    assert conn.cmd("GET", "x") is None
    assert conn.cmd("PING") == Simple("PONG")


def test_bytecode_is_refused(conn):
    assert ev(conn, "return loadstring('return 1+1')()") == 2
    assert ev(conn, "return type(loadstring)") == b"function"
    body = "return loadstring(string.dump(function() return 1 end))()"
    assert_error(ev(conn, body), script_error("ERR user_script:1: attempt to call a nil value", body))


def test_builtins_present(conn):
    assert ev(conn, "return {type(coroutine), type(table.getn), type(unpack), type(select), type(pcall), "
                    "type(xpcall), type(tostring), type(tonumber), type(setmetatable), type(getmetatable), "
                    "type(rawget), type(rawequal), type(next), type(ipairs), type(pairs), type(assert), "
                    "type(error), type(load), type(gcinfo), type(collectgarbage), _VERSION}") == \
        [b"table"] + [b"function"] * 19 + [b"Lua 5.1"]
    assert ev(conn, "return {string.format('%5.2f', 3.14159), string.rep('ab', 3), string.upper('x'), "
                    "('abc'):sub(2), table.concat({1, 2, 3}, ','), math.floor(3.7), tostring(math.huge), "
                    "math.max(1, 5, 3), string.byte('A'), string.char(72, 105)}") == \
        [b" 3.14", b"ababab", b"X", b"bc", b"1,2,3", 3, b"inf", 5, 65, b"Hi"]
    assert ev(conn, "local co = coroutine.wrap(function() coroutine.yield(1) return 2 end); return {co(), co()}") == \
        [1, 2]
    assert ev(conn, "return {unpack({1, 2, 3}, 2)}") == [2, 3]
    assert ev(conn, "return select('#', 1, nil, 3)") == 3
    assert ev(conn, "return tonumber('0x10')") == 16


def test_math_random(conn):
    # Not reseeded per script (Redis 7+): successive scripts differ.
    values = {ev(conn, "return tostring(math.random())") for _ in range(5)}
    assert len(values) > 1
    # Seeding gives Redis's own rand48 sequence, the same everywhere.
    body = "math.randomseed(ARGV[1]); return {tostring(math.random()), math.random(100), math.random(5, 10)}"
    assert ev(conn, body, 0, 10) == [b"0.87885112309775", 80, 7]
    assert ev(conn, body, 0, 10) == [b"0.87885112309775", 80, 7]
    assert ev(conn, body, 0, 20) == [b"0.58687420961767", 85, 10]
    body = "return math.random(0)"
    assert_error(ev(conn, body),
                 script_error("ERR user_script:1: bad argument #1 to 'random' (interval is empty)", body))
    body = "return math.random(3, 1)"
    assert_error(ev(conn, body),
                 script_error("ERR user_script:1: bad argument #2 to 'random' (interval is empty)", body))
    body = "return math.random(1, 2, 3)"
    assert_error(ev(conn, body), script_error("ERR user_script:1: wrong number of arguments", body))
    assert all(1 <= v <= 6 for v in ev(conn, "local t = {} for i = 1, 100 do t[i] = math.random(6) end return t"))


# ---- the redis API -----------------------------------------------------------

def test_sha1hex(conn):
    assert ev(conn, "return redis.sha1hex('')") == b"da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert ev(conn, "return redis.sha1hex('Pizza & Mandolino')") == b"74822d82031af7493c20eefa13bd07ec4fada82f"
    assert ev(conn, "return redis.sha1hex(ARGV[1])", 0, b"\x00\xff") == sha1(b"\x00\xff").encode()
    assert ev(conn, "return redis.sha1hex(1)") == sha1("1").encode()
    body = "return redis.sha1hex()"
    assert_error(ev(conn, body), script_error("ERR wrong number of arguments", body))
    body = "return redis.sha1hex('a', 'b')"
    assert_error(ev(conn, body), script_error("ERR wrong number of arguments", body))


def test_redis_log(conn):
    assert ev(conn, "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}") == [0, 1, 2, 3]
    assert ev(conn, "redis.log(redis.LOG_WARNING, 'hello from', 'a script'); return 1") == 1
    assert ev(conn, "redis.log(redis.LOG_DEBUG, 'not shown'); return 1") == 1
    assert ev(conn, "return redis.log(redis.LOG_NOTICE, 'x', 1, 2.5)") is None
    body = "return redis.log(redis.LOG_WARNING)"
    assert_error(ev(conn, body), script_error("ERR redis.log() requires two arguments or more.", body))
    body = "return redis.log('x', 'y')"
    assert_error(ev(conn, body), script_error("ERR First argument must be a number (log level).", body))


def test_redis_log_invalid_level(conn, redis8):
    for body in ("return redis.log(99, 'y')", "return redis.log(-1, 'y')"):
        assert_error(ev(conn, body), script_error("ERR Invalid log level.", body))


def test_redis_version(conn):
    version = server_version(conn)
    assert ev(conn, "return {type(redis.REDIS_VERSION), type(redis.REDIS_VERSION_NUM)}") == [b"string", b"number"]
    assert ev(conn, "return redis.REDIS_VERSION") == version.encode()
    major, minor, patch = (int(p) for p in version.split("."))
    assert ev(conn, "return redis.REDIS_VERSION_NUM") == (major << 16) | (minor << 8) | patch


def test_set_repl_and_replicate_commands(conn):
    body = "return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}"
    assert ev(conn, body) == [0, 1, 2, 2, 3]
    body = ("redis.call('set', KEYS[1], '1'); redis.set_repl(redis.REPL_NONE); redis.call('set', KEYS[2], '2'); "
            "redis.set_repl(redis.REPL_AOF); redis.set_repl(redis.REPL_REPLICA); redis.set_repl(redis.REPL_ALL); "
            "return redis.call('set', KEYS[3], '3')")
    assert ev(conn, body, 3, "a", "b", "c") == OK
    assert conn.cmd("MGET", "a", "b", "c") == [b"1", b"2", b"3"]
    assert ev(conn, "return redis.set_repl(redis.REPL_ALL)") is None
    body = "redis.set_repl(12345)"
    msg = "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."
    assert_error(ev(conn, body), script_error(msg, body))
    assert ev(conn, "return redis.replicate_commands()") == 1
    assert ev(conn, "redis.call('set', KEYS[1], 'bar'); return redis.replicate_commands()", 1, "foo") == 1


def test_set_repl_arity(conn, redis8):
    body = "redis.set_repl()"
    assert_error(ev(conn, body), script_error("ERR redis.set_repl() requires one argument.", body))


def test_breakpoint_and_debug_are_noops(conn):
    assert ev(conn, "return tostring(redis.breakpoint())") == b"false"
    assert ev(conn, "redis.debug('x', 1, {}); return 'ok'") == b"ok"
    assert ev(conn, "return redis.debug()") is None


def test_acl_check_cmd(conn):
    assert ev(conn, "return redis.acl_check_cmd('set', 'k', 'v')") == 1
    assert ev(conn, "return redis.acl_check_cmd('get', 'k')") == 1
    body = "return redis.acl_check_cmd('invalid-cmd', 'arg')"
    assert_error(ev(conn, body), script_error("ERR Invalid command passed to redis.acl_check_cmd()", body))
    body = "return redis.acl_check_cmd()"
    assert_error(ev(conn, body), script_error("ERR Please specify at least one argument for this redis lib call", body))


def test_expiry_time_is_frozen_in_script(conn):
    body = ("redis.call('set', KEYS[1], 'v', 'PX', 1); local x = 0; for i = 1, 5000000 do x = x + i end; "
            "return redis.call('exists', KEYS[1])")
    assert ev(conn, body, 1, "k") == 1
    time.sleep(0.01)
    assert conn.cmd("EXISTS", "k") == 0


def test_time_is_frozen_in_script(conn, redis8):
    body = ("local t = redis.call('TIME'); local x = 0; for i = 1, 5000000 do x = x + i end; "
            "local t2 = redis.call('TIME'); return {t[1], t[2], t2[1], t2[2]}")
    t1s, t1us, t2s, t2us = ev(conn, body)
    assert (t1s, t1us) == (t2s, t2us)


def test_script_uses_callers_db(conn):
    assert conn.cmd("SELECT", "2") == OK
    conn.cmd("SET", "k", "db2")
    assert ev(conn, "return redis.call('get', KEYS[1])", 1, "k") == b"db2"
    # SELECT inside a script does not change the caller's db.
    assert ev(conn, "redis.call('select', 3); return redis.call('set', KEYS[1], 'db3')", 1, "k") == OK
    assert conn.cmd("GET", "k") == b"db2"
    assert conn.cmd("SELECT", "3") == OK
    assert conn.cmd("GET", "k") == b"db3"
    assert conn.cmd("SELECT", "0") == OK
    assert conn.cmd("GET", "k") is None
    body = "return redis.call('select', 99)"
    assert_error(ev(conn, body), script_error("ERR DB index is out of range", body))


# ---- libraries ---------------------------------------------------------------

def test_cjson_round_trip(conn):
    assert ev(conn, "return cjson.encode({1, 2, 'a'})") == b'[1,2,"a"]'
    assert ev(conn, "return cjson.encode({a=1})") == b'{"a":1}'
    assert ev(conn, "return cjson.encode('a\"b')") == b'"a\\"b"'
    assert ev(conn, "return cjson.encode(3.5)") == b"3.5"
    assert ev(conn, "return cjson.encode(true)") == b"true"
    # The order of several keys is the table's traversal order, which
    # LuaJIT randomises per Lua state (its string hash is seeded): compare
    # the object, not the bytes.
    assert json.loads(ev(conn, """return cjson.encode(cjson.decode('{"k":"v","n":[1,2,3]}'))""")) == \
        {"k": "v", "n": [1, 2, 3]}
    assert ev(conn, """local d = cjson.decode('{"keya": "a", "keyb": "b"}') return {d.keya, d.keyb}""") == [b"a", b"b"]
    assert ev(conn, """return table.concat(cjson.decode("[0.0, -5e3, -1, 0.3e-3, 1023.2, 0e10]"), " ")""") == \
        b"0 -5000 -1 0.0003 1023.2 0"
    assert ev(conn, """local t = cjson.decode('[1,2,{"a":[true,null]}]'); """
                    "return {t[1], t[2], type(t[3]), tostring(t[3].a[1]), tostring(t[3].a[2] == cjson.null)}") == \
        [1, 2, b"table", b"true", b"true"]
    assert ev(conn, "return cjson.decode(ARGV[1]).x", 0, '{"x":"\\u00e9"}') == "\u00e9".encode()


def test_cjson_null_and_empty_array(conn):
    assert ev(conn, "return type(cjson.null)") == b"userdata"
    assert ev(conn, "return cjson.encode(cjson.null)") == b"null"
    assert ev(conn, "return cjson.encode({1, cjson.null, 3})") == b"[1,null,3]"
    assert ev(conn, "return tostring(cjson.decode('null') == cjson.null)") == b"true"
    assert ev(conn, "local t = cjson.decode('[1,null,3]'); return {#t, tostring(t[2] == cjson.null)}") == [3, b"true"]
    # An empty array decodes to an empty table, which encodes as an object.
    assert ev(conn, "local t = cjson.decode('[]'); return {type(t), #t, cjson.encode(t)}") == [b"table", 0, b"{}"]
    assert ev(conn, "return cjson.encode(cjson.decode('{}'))") == b"{}"
    assert ev(conn, "return cjson.encode({})") == b"{}"


def test_cjson_decode_array_with_array_mt(conn, redis8):
    body = ("cjson.decode_array_with_array_mt(true); "
            "local s = cjson.encode(cjson.decode('{\"a\":[]}')); "
            "cjson.decode_array_with_array_mt(false); "
            "return {s, cjson.encode(cjson.decode('{\"a\":[]}'))}")
    assert ev(conn, body) == [b'{"a":[]}', b'{"a":{}}']


def test_cjson_errors(conn):
    body = "return cjson.decode('[1,2')"
    assert_error(ev(conn, body),
                 script_error("ERR user_script:1: Expected comma or array end but found T_END at character 5", body))
    body = """return cjson.decode('{"a":1')"""
    assert_error(ev(conn, body),
                 script_error("ERR user_script:1: Expected comma or object end but found T_END at character 7", body))
    body = "return cjson.encode(function() end)"
    assert_error(ev(conn, body),
                 script_error("ERR user_script:1: Cannot serialise function: type not supported", body))
    body = "local t = {} t[1] = t return cjson.encode(t)"
    assert_error(ev(conn, body),
                 script_error("ERR user_script:1: Cannot serialise, excessive nesting (1001)", body))


def test_cmsgpack_round_trip(conn):
    body = "local t = cmsgpack.unpack(cmsgpack.pack({1, 2, 'x', {a=1}})); return {t[1], t[2], t[3], t[4].a}"
    assert ev(conn, body) == [1, 2, b"x", 1]
    assert ev(conn, "local x, y = cmsgpack.unpack(cmsgpack.pack(1, 'a')); return {x, y}") == [1, b"a"]
    assert ev(conn, "return cmsgpack.pack({1, 2, 3})") == b"\x93\x01\x02\x03"
    assert ev(conn, "return cmsgpack.pack('abc')") == b"\xa3abc"
    assert ev(conn, "return cmsgpack.pack(0.1)") == bytes.fromhex("cb3fb999999999999a")
    assert ev(conn, "return cmsgpack.pack(-1099511627776)") == bytes.fromhex("d3ffffff0000000000")
    assert ev(conn, "return cmsgpack.unpack(ARGV[1])", 0, b"\x93\x01\x02\x03") == [1, 2, 3]
    assert ev(conn, "return cmsgpack.unpack(cmsgpack.pack(ARGV[1]))", 0, b"\x00bin\xff") == b"\x00bin\xff"
    body = "return cmsgpack.unpack(ARGV[1])"
    assert_error(ev(conn, body, 0, b"\xc1"), script_error("ERR user_script:1: Bad data format in input.", body))
    # Cycles are packed to a depth of 16.
    body = """local a = {x=nil, y=5}
        local b = {x=a}
        a['x'] = b
        local re = cmsgpack.unpack(cmsgpack.pack(a))
        return {re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.y == re.y, re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x == nil, re.y}"""
    assert ev(conn, body) == [1, 1, 5]


def test_bit_library(conn):
    assert ev(conn, "return {bit.band(12, 10), bit.bor(12, 10), bit.bxor(12, 10), bit.tohex(255), bit.tohex(255, 4), "
                    "bit.tohex(-1), bit.lshift(1, 4), bit.rshift(256, 4), bit.bnot(0), bit.tobit(2^32 + 5), "
                    "bit.arshift(-256, 4), bit.rol(1, 33), bit.bswap(1), bit.tohex(255, -2)}") == \
        [8, 14, 6, b"000000ff", b"00ff", b"ffffffff", 16, 16, -1, 5, -16, 2, 16777216, b"FF"]
    assert ev(conn, "return {bit.tobit(1), bit.band(1), bit.bxor(1, 2), bit.bor(1, 2, 4, 8, 16, 32, 64, 128)}") == \
        [1, 1, 3, 255]


def test_struct_library(conn):
    assert ev(conn, "return {struct.pack('>I2', 258), struct.pack('<i4', -2), struct.size('>I2i4')}") == \
        [b"\x01\x02", b"\xfe\xff\xff\xff", 6]
    assert ev(conn, "return {struct.unpack('>I2', ARGV[1])}", 0, b"\x01\x02") == [258, 3]
    assert ev(conn, "return {struct.unpack('<i4', struct.pack('<i4', -2))}") == [-2, 5]
    assert ev(conn, "return {struct.unpack('>I2c3', struct.pack('>I2c3', 7, 'abc'))}") == [7, b"abc", 6]
    body = "return struct.unpack('>I4', 'ab')"
    assert_error(ev(conn, body),
                 script_error("ERR user_script:1: bad argument #2 to 'unpack' (data string too short)", body))


# ---- commands scripts may not run ---------------------------------------------

def test_commands_not_allowed(conn):
    for args in (("multi",), ("exec",), ("discard",), ("watch", "k"), ("unwatch",),
                 ("eval", "return 1", "0"), ("evalsha", "a", "0"), ("eval_ro", "return 1", "0"),
                 ("script", "load", "return 1"), ("script", "flush"), ("script", "kill"),
                 ("blpop", "l", "0"), ("brpop", "l", "0"), ("brpoplpush", "l", "m", "0"),
                 ("blmove", "l", "m", "left", "left", "0"), ("bzpopmin", "z", "0"), ("bzpopmax", "z", "0"),
                 ("auth", "x"), ("hello",), ("monitor",), ("reset",), ("quit",),
                 ("config", "get", "maxmemory"), ("debug", "sleep", "0")):
        lua_args = ", ".join("'%s'" % a for a in args)
        assert_error(ev(conn, "return redis.pcall(%s)" % lua_args), Error(NOT_ALLOWED))
        body = "return redis.call(%s)" % lua_args
        assert_error(ev(conn, body), script_error(NOT_ALLOWED, body))
    # The connection is not left in MULTI or watching.
    assert conn.cmd("SET", "k", "v") == OK


def test_shutdown_not_allowed_from_script(new_server):
    srv = new_server()
    c = srv.conn(timeout=20)
    body = "return redis.call('shutdown', 'nosave')"
    assert_error(c.cmd("EVAL", body, 0), script_error(NOT_ALLOWED, body))
    assert_error(c.cmd("EVAL", "return redis.pcall('shutdown')", 0), Error(NOT_ALLOWED))
    assert c.cmd("PING") == Simple("PONG")


def test_blocking_commands_do_not_block(conn):
    start = time.time()
    assert ev(conn, "return redis.call('blmpop', 0, 1, KEYS[1], 'left')", 1, "l") is None
    assert ev(conn, "return redis.call('bzmpop', 0, 1, KEYS[1], 'min')", 1, "z") is None
    assert time.time() - start < 2
    conn.cmd("RPUSH", "l", "a")
    assert ev(conn, "return redis.call('blmpop', 0, 1, KEYS[1], 'left')", 1, "l") == [b"l", [b"a"]]
    assert ev(conn, "return redis.call('blmpop', 0, 1, KEYS[1], 'left')", 1, "l") is None
    conn.cmd("ZADD", "z", "1", "m")
    assert ev(conn, "return redis.call('bzmpop', 0, 1, KEYS[1], 'min')", 1, "z") == [b"z", [[b"m", b"1"]]]


def test_script_push_wakes_blocked_client(server, conn):
    waiter = server.conn()
    try:
        waiter.send(encode("BLPOP", "q", "5"))
        deadline = time.time() + 5
        while time.time() < deadline:
            clients = conn.cmd("CLIENT", "LIST")
            if b"cmd=blpop" in clients:
                break
            time.sleep(0.01)
        body = "redis.call('lpush', KEYS[1], '1'); redis.call('lpush', KEYS[1], '2'); return 1"
        assert ev(conn, body, 1, "q") == 1
        # The waiter is served after the script, with the script's last push.
        assert waiter.read() == [b"q", b"2"]
        assert conn.cmd("LRANGE", "q", 0, -1) == [b"1"]
    finally:
        waiter.close()


# ---- bad input -----------------------------------------------------------------

def test_deeply_nested_table_reply(conn):
    conn.send(encode("EVAL", "local t = 'x' for i = 1, 1000 do t = {t} end return t", 0))
    depth, leaves = read_flat(conn)
    # Redis sends it whole; an error instead is acceptable, a crash is not.
    assert (depth, leaves) == (1000, [b"x"]) or (len(leaves) == 1 and leaves[0].startswith(b"-"))
    conn.send(encode("EVAL", "local t = 'x' for i = 1, 100000 do t = {t} end return t", 0))
    depth, leaves = read_flat(conn)
    assert leaves == [b"x"] and depth == 100000 or leaves[-1].startswith(b"-ERR")
    assert conn.cmd("PING") == Simple("PONG")


def test_cyclic_table_reply(conn, conn3):
    for c, body in ((conn, "local a = {}; local b = {a}; a[1] = b; return a"),
                    (conn, "local t = {} t[1] = t return t"),
                    (conn, "local t = {} t.map = t return t"),
                    (conn3, "local t = {} t.map = {a = t} return t"),
                    (conn3, "local t = {} t.set = {} t.set[t] = true return t")):
        c.send(encode("EVAL", body, 0))
        depth, leaves = read_flat(c)
        assert any(isinstance(leaf, bytes) and leaf.startswith(b"-") for leaf in leaves), body
        assert c.cmd("PING") == Simple("PONG")


def test_huge_argument_counts(conn):
    body = "local a = {} for i = 1, 7999 do a[i] = i end return redis.call('rpush', KEYS[1], unpack(a))"
    assert ev(conn, body, 1, "l") == 7999
    assert conn.cmd("LLEN", "l") == 7999
    assert conn.cmd("LINDEX", "l", -1) == b"7999"
    body = "local a = {'mset'} for i = 1, 7998 do a[#a + 1] = 'k' .. i end return redis.call(unpack(a))"
    assert ev(conn, body) == OK
    assert conn.cmd("GET", "k1") == b"k2" and conn.cmd("GET", "k7997") == b"k7998"
    body = "local a = {} for i = 1, 100000 do a[i] = i end return redis.call('rpush', KEYS[1], unpack(a))"
    assert_error(ev(conn, body, 1, "l"), script_error("ERR user_script:1: too many results to unpack", body))
    body = "return unpack({}, -2147483648, 2147483647)"
    assert_error(ev(conn, body), script_error("ERR user_script:1: too many results to unpack", body))
    assert conn.cmd("LLEN", "l") == 7999
    # Many calls in one script.
    body = "for i = 1, 20000 do redis.call('incr', KEYS[1]) end return redis.call('get', KEYS[1])"
    assert ev(conn, body, 1, "n") == b"20000"


def test_many_keys_and_args(conn):
    n = 5000
    keys = ["k%d" % i for i in range(n)]
    body = "for i = 1, #KEYS do redis.call('set', KEYS[i], ARGV[i]) end return #KEYS + #ARGV"
    assert ev(conn, body, n, *keys, *("v%d" % i for i in range(n))) == 2 * n
    assert conn.cmd("DBSIZE") == n
    assert conn.cmd("GET", "k4999") == b"v4999"


def test_eval_scripts_lru(conn, redis8):
    # EVAL keeps at most 500 scripts (least recently used goes first);
    # SCRIPT LOAD scripts are never evicted.
    assert conn.cmd("SCRIPT", "FLUSH") == OK
    loaded = conn.cmd("SCRIPT", "LOAD", "return 'loaded'")
    for i in range(500):
        assert ev(conn, "return %d" % i) == i
    assert conn.cmd("SCRIPT", "EXISTS", sha1("return 0"), sha1("return 499")) == [1, 1]
    assert ev(conn, "return 0") == 0  # now the most recently used
    assert ev(conn, "return 500") == 500
    assert conn.cmd("SCRIPT", "EXISTS", sha1("return 1"), sha1("return 0"), sha1("return 2"),
                    sha1("return 500"), loaded) == [0, 1, 1, 1, 1]
    assert_error(conn.cmd("EVALSHA", sha1("return 1"), 0), NOSCRIPT)
    for i in range(501, 1100):
        ev(conn, "return %d" % i)
    assert conn.cmd("EVALSHA", loaded, 0) == b"loaded"
    assert conn.cmd("SCRIPT", "FLUSH") == OK


# ---- SCRIPT KILL ---------------------------------------------------------------

def busy_server(new_server, **kw):
    srv = new_server(**kw)
    ctl = srv.conn(timeout=20)
    assert ctl.cmd("CONFIG", "SET", "busy-reply-threshold", "100") == OK
    return srv, ctl


def wait_busy(conn, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        reply = conn.cmd("PING")
        if isinstance(reply, Error) and reply.startswith("BUSY"):
            return reply
        time.sleep(0.02)
    pytest.fail("the script never made the server busy")


def test_script_kill(new_server):
    srv, ctl = busy_server(new_server)
    runner = srv.conn(timeout=20)
    body = "while true do end"
    runner.send(encode("EVAL", body, 0))
    assert_error(wait_busy(ctl), BUSY)
    for args in (("GET", "x"), ("SET", "x", "1"), ("EVAL", "return 1", "0"), ("SCRIPT", "LOAD", "return 1")):
        assert_error(ctl.cmd(*args), BUSY)
    other = srv.conn(timeout=20)
    assert_error(other.cmd("PING"), BUSY)
    assert ctl.cmd("SCRIPT", "KILL") == OK
    assert_error(runner.read(), script_error("ERR Script killed by user with SCRIPT KILL...", body))
    assert ctl.cmd("PING") == Simple("PONG")
    assert runner.cmd("PING") == Simple("PONG")
    assert other.cmd("SET", "x", "1") == OK
    assert_error(ctl.cmd("SCRIPT", "KILL"), NOTBUSY)
    # A script under the threshold just runs.
    assert runner.cmd("EVAL", "local t = 0 for i = 1, 1000000 do t = t + i end return t", 0) == 500000500000


def test_script_kill_through_pcall(new_server):
    srv, ctl = busy_server(new_server)
    runner = srv.conn(timeout=20)
    body = "local f = function() while 1 do redis.call('ping') end end while 1 do pcall(f) end"
    runner.send(encode("EVAL", body, 0))
    assert_error(wait_busy(ctl), BUSY)
    assert ctl.cmd("SCRIPT", "KILL") == OK
    reply = runner.read()
    assert isinstance(reply, Error) and reply.startswith("ERR Script killed by user with SCRIPT KILL..."), reply
    assert ctl.cmd("PING") == Simple("PONG")


def test_script_kill_allocating_loop(new_server):
    srv, ctl = busy_server(new_server)
    runner = srv.conn(timeout=20)
    body = "local t = {} local i = 0 while true do i = i + 1; t[i % 50000] = string.rep('x', 64) .. i end"
    runner.send(encode("EVAL", body, 0))
    assert_error(wait_busy(ctl), BUSY)
    time.sleep(0.2)
    assert ctl.cmd("SCRIPT", "KILL") == OK
    assert_error(runner.read(), script_error("ERR Script killed by user with SCRIPT KILL...", body))
    assert runner.cmd("EVAL", "return #string.rep('y', 1000)", 0) == 1000
    assert ctl.cmd("PING") == Simple("PONG")


def test_script_kill_pipelined_commands_after_script(new_server):
    srv, ctl = busy_server(new_server)
    runner = srv.conn(timeout=20)
    runner.send(encode("EVAL", "while 1 do redis.call('ping') end", 0) + encode("PING") + encode("SET", "y", "1"))
    assert_error(wait_busy(ctl), BUSY)
    assert ctl.cmd("SCRIPT", "KILL") == OK
    assert runner.read().startswith("ERR Script killed by user with SCRIPT KILL...")
    assert runner.read() == Simple("PONG")
    assert runner.read() == OK
    assert ctl.cmd("GET", "y") == b"1"


def test_script_kill_refused_after_write(new_server):
    srv, ctl = busy_server(new_server)
    runner = srv.conn(timeout=20)
    runner.send(encode("EVAL", "redis.call('set', KEYS[1], 'y'); while true do end", 1, "x"))
    assert_error(wait_busy(ctl), BUSY)
    assert_error(ctl.cmd("SCRIPT", "KILL"), UNKILLABLE)
    assert_error(ctl.cmd("PING"), BUSY)
    # Only SHUTDOWN NOSAVE ends it.
    ctl.send(encode("SHUTDOWN", "NOSAVE"))
    with pytest.raises((ConnectionError, OSError)):
        ctl.read()
    with pytest.raises((ConnectionError, OSError)):
        runner.read()
    if srv.proc is not None:
        assert srv.proc.wait(20) == 0


# ---- concurrency -----------------------------------------------------------------

def run_threads(targets, timeout=60):
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))
        return run

    threads = [threading.Thread(target=wrap(fn), daemon=True) for fn in targets]
    for t in threads:
        t.start()
    deadline = time.time() + timeout
    for t in threads:
        t.join(max(0.1, deadline - time.time()))
    assert not any(t.is_alive() for t in threads), "threads still running after %ss" % timeout
    assert not errors, errors[:5]


RMW = "local v = tonumber(redis.call('GET', KEYS[1]) or '0') + tonumber(ARGV[1]) redis.call('SET', KEYS[1], v) return v"
TRANSFER = ("local a = tonumber(redis.call('GET', KEYS[1]) or '0') "
            "local b = tonumber(redis.call('GET', KEYS[2]) or '0') "
            "redis.call('SET', KEYS[1], a - 1) redis.call('SET', KEYS[2], b + 1) return 1")


def test_concurrent_read_modify_write(new_server):
    srv = new_server(threads=4)
    ctl = srv.conn(timeout=20)
    rmw = ctl.cmd("SCRIPT", "LOAD", RMW)
    transfer = ctl.cmd("SCRIPT", "LOAD", TRANSFER)
    nclients, rounds, ncounters = 50, 40, 8
    counters = ["ctr:%d" % i for i in range(ncounters)]
    accounts = ["acct:%d" % i for i in range(ncounters)]

    def client(idx):
        def run():
            c = srv.conn(timeout=20)
            try:
                for i in range(rounds):
                    key = counters[(idx + i) % ncounters]
                    assert isinstance(c.cmd("EVALSHA", rmw, 1, key, 1), int)
                    src, dst = accounts[(idx + i) % ncounters], accounts[(idx * 3 + i + 1) % ncounters]
                    if src != dst:
                        assert c.cmd("EVALSHA", transfer, 2, src, dst) == 1
            finally:
                c.close()
        return run

    run_threads([client(i) for i in range(nclients)])
    values = [int(v or 0) for v in ctl.cmd("MGET", *counters)]
    assert sum(values) == nclients * rounds
    expected = [0] * ncounters
    for idx in range(nclients):
        for i in range(rounds):
            expected[(idx + i) % ncounters] += 1
    assert values == expected
    assert sum(int(v or 0) for v in ctl.cmd("MGET", *accounts)) == 0


def test_undeclared_keys_under_concurrent_writes(new_server):
    srv = new_server(threads=4)
    ctl = srv.conn(timeout=20)
    # The script names no keys: it builds them from ARGV.
    body = ("for i = 1, 8 do local k = ARGV[1] .. i "
            "local v = tonumber(redis.call('GET', k) or '0') redis.call('SET', k, v + 1) end "
            "redis.call('SET', ARGV[1] .. 'a', ARGV[2]) redis.call('SET', ARGV[1] .. 'b', ARGV[2]) "
            "return redis.call('GET', ARGV[1] .. 'a') == redis.call('GET', ARGV[1] .. 'b')")
    sha = ctl.cmd("SCRIPT", "LOAD", body)
    prefix, nscripters, nwriters, rounds = "u:", 10, 10, 30
    stop = threading.Event()
    mismatches = []

    def scripter(idx):
        def run():
            c = srv.conn(timeout=20)
            try:
                for i in range(rounds):
                    assert c.cmd("EVALSHA", sha, 0, prefix, "%d-%d" % (idx, i)) == 1
            finally:
                c.close()
        return run

    def writer():
        c = srv.conn(timeout=20)
        try:
            for _ in range(rounds):
                for i in range(1, 9):
                    assert isinstance(c.cmd("INCR", prefix + str(i)), int)
        finally:
            c.close()

    def checker():
        c = srv.conn(timeout=20)
        try:
            while not stop.is_set():
                a, b = c.cmd("MGET", prefix + "a", prefix + "b")
                if a != b:
                    mismatches.append((a, b))
        finally:
            c.close()

    checkers = [threading.Thread(target=checker, daemon=True) for _ in range(4)]
    for t in checkers:
        t.start()
    try:
        run_threads([scripter(i) for i in range(nscripters)] + [writer for _ in range(nwriters)])
    finally:
        stop.set()
        for t in checkers:
            t.join(20)
    assert not mismatches, mismatches[:5]
    expected = nscripters * rounds + nwriters * rounds
    assert [int(v) for v in ctl.cmd("MGET", *(prefix + str(i) for i in range(1, 9)))] == [expected] * 8


def test_long_script_does_not_lose_concurrent_writes(new_server):
    srv = new_server(threads=4)
    ctl = srv.conn(timeout=20)
    # Others wait for the script rather than get BUSY, however slow the build.
    assert ctl.cmd("CONFIG", "SET", "busy-reply-threshold", "60000") == OK
    body = "for i = 1, 100000 do redis.call('incr', KEYS[1]) end return redis.call('get', KEYS[1])"
    results = {}

    def scripter():
        c = srv.conn(timeout=30)
        try:
            results["script"] = c.cmd("EVAL", body, 1, "hot")
        finally:
            c.close()

    def incr():
        c = srv.conn(timeout=30)
        try:
            for _ in range(500):
                assert isinstance(c.cmd("INCR", "hot"), int)
        finally:
            c.close()

    run_threads([scripter] + [incr] * 4)
    assert ctl.cmd("GET", "hot") == b"102000"
    # The script saw its own 100000 increments on top of what came before.
    assert int(results["script"]) >= 100000


def test_server_stays_up_after_scripts(server):
    # Nothing above killed the shared server.
    s = socket.create_connection((server.host, server.port), timeout=5)
    s.sendall(encode("PING"))
    assert s.recv(100) == b"+PONG\r\n"
    s.close()


def test_script_reaching_undeclared_keys_after_writing(new_server):
    """A script learned to stay within its KEYS (its first runs did) later
    writes its declared key and then keys it builds itself, as job-queue
    scripts do (a lock key named after the job). Under contention from
    multi-key commands and other such scripts on every thread, the shard it
    needs below one it holds is taken by escalation, never refused: no
    error, and every write lands."""
    srv = new_server(threads=4)
    ctl = srv.conn(timeout=30)
    body = ("redis.call('INCR', KEYS[1]) "
            "if ARGV[1] == '0' then return 0 end "
            "for i = 1, 6 do redis.call('INCR', 'lock:' .. ARGV[1] .. ':' .. i) end "
            "return 1")
    sha = ctl.cmd("SCRIPT", "LOAD", body)
    # Learning runs: declared keys only.
    for i in range(20):
        assert ctl.cmd("EVALSHA", sha, 1, "q:%d" % i, "0") == 0
    nscripters, nwriters, rounds = 8, 6, 60
    errors = []

    def scripter(idx):
        def run():
            c = srv.conn(timeout=30)
            try:
                for i in range(rounds):
                    rep = c.cmd("EVALSHA", sha, 1, "q:%d" % (i % 20), str(i % 7 + 1))
                    if rep != 1:
                        errors.append(rep)
            finally:
                c.close()
        return run

    def writer(idx):
        def run():
            c = srv.conn(timeout=30)
            try:
                for i in range(rounds):
                    keys = ["lock:%d:%d" % (j % 7 + 1, j % 6 + 1) for j in range(idx, idx + 12)]
                    rep = c.cmd("MSET", *[x for k in keys for x in (k + ":w", i)])
                    if rep != "OK":
                        errors.append(rep)
                    c.cmd("MGET", *["q:%d" % j for j in range(20)] + keys)
            finally:
                c.close()
        return run

    run_threads([scripter(i) for i in range(nscripters)] + [writer(i) for i in range(nwriters)])
    assert not errors, errors[:3]
    total = sum(int(v) for v in ctl.cmd("MGET", *["q:%d" % i for i in range(20)]))
    assert total == 20 + nscripters * rounds
    locks = sum(int(v or 0) for v in ctl.cmd("MGET", *["lock:%d:%d" % (a, b) for a in range(1, 8)
                                                      for b in range(1, 7)]))
    assert locks == nscripters * rounds * 6
