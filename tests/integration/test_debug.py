"""DEBUG: who may run it (enable-debug-command no/yes/local), and each
subcommand HotKV has, with Redis's replies in RESP2 and RESP3. Servers are
private (new_server) since DEBUG is refused by default."""
import re
import socket
import subprocess
import time

import pytest
from resp import Error, RespConn, encode

REFUSED = Error('ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can '
                'run it from a local connection, otherwise you need to set this option in the configuration '
                'file, and then restart the server.')


def subcommand_error(name):
    return Error("ERR unknown subcommand or wrong number of arguments for '%s'. Try DEBUG HELP." % name)


@pytest.fixture
def dbg(new_server):
    srv = new_server("--enable-debug-command", "yes")
    c = srv.conn()
    yield srv, c
    c.close()


def non_loopback_address():
    """An address of this machine that is not loopback, or None."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    for a in out:
        if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", a) and not a.startswith("127."):
            return a
    return None


# ---- who may run DEBUG ----------------------------------------------------------------

def test_refused_by_default_even_before_auth(new_server):
    srv = new_server("--requirepass", "pw")
    c = srv.conn()
    # Protected commands are refused before the authentication check.
    assert c.cmd("DEBUG", "HELP") == REFUSED
    assert c.cmd("DEBUG", "OBJECT", "k") == REFUSED
    assert c.cmd("GET", "k") == Error("NOAUTH Authentication required.")
    assert c.cmd("AUTH", "pw") == "OK"
    assert c.cmd("DEBUG", "SLEEP", "0") == REFUSED
    # The arity check comes first.
    assert c.cmd("DEBUG") == Error("ERR wrong number of arguments for 'debug' command")
    c.close()


def test_local_allows_loopback_and_unix(new_server):
    srv = new_server("--enable-debug-command", "local")
    c = srv.conn()
    assert c.cmd("DEBUG", "SLEEP", "0") == "OK"
    c.close()
    u = RespConn(unix=srv.unix)
    assert u.cmd("DEBUG", "SLEEP", "0") == "OK"
    u.close()


def test_local_refuses_other_addresses(new_server):
    addr = non_loopback_address()
    if addr is None:
        pytest.skip("no non-loopback address on this machine")
    srv = new_server("--enable-debug-command", "local", "--bind", "127.0.0.1 " + addr, "--protected-mode", "no")
    remote = RespConn(addr, srv.port)
    assert remote.cmd("DEBUG", "SLEEP", "0") == REFUSED
    assert remote.cmd("PING") == "PONG"
    remote.close()
    local = srv.conn()
    assert local.cmd("DEBUG", "SLEEP", "0") == "OK"
    local.close()
    everyone = new_server("--enable-debug-command", "yes", "--bind", "127.0.0.1 " + addr, "--protected-mode", "no")
    remote = RespConn(addr, everyone.port)
    assert remote.cmd("DEBUG", "SLEEP", "0") == "OK"
    remote.close()


# ---- OBJECT -------------------------------------------------------------------------

LINE = re.compile(r"Value at:0x[0-9a-f]+ refcount:1 encoding:(\S+) serializedlength:(\d+) lru:(\d+) "
                  r"lru_seconds_idle:(\d+)(.*)")


def debug_object(c, key):
    reply = c.cmd("DEBUG", "OBJECT", key)
    assert isinstance(reply, str) and not isinstance(reply, Error), reply
    m = LINE.fullmatch(reply)
    assert m, reply
    return m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), m.group(5)


def test_object_line(dbg):
    srv, c = dbg
    c.cmd("SET", "s", "hello")
    c.cmd("SET", "n", "12345")
    c.cmd("RPUSH", "l", "a", "b", "1")
    c.cmd("SADD", "st", "x")
    c.cmd("ZADD", "z", "1", "a")
    c.cmd("HSET", "h", "f", "v")
    enc = {k: debug_object(c, k)[0] for k in ("s", "n", "l", "st", "z", "h")}
    assert enc == {k: c.cmd("OBJECT", "ENCODING", k).decode() for k in enc}
    # The value's RDB serialization as Redis 8 writes it (a listpack set is
    # SET_LISTPACK, 11 bytes; Redis 7.0 wrote a plain SET, 3).
    assert {k: debug_object(c, k)[1] for k in enc} == {"s": 6, "n": 3, "l": 18, "st": 11, "z": 13, "h": 14}
    assert c.cmd("DEBUG", "OBJECT", "nokey") == Error("ERR no such key")
    assert c.cmd("DEBUG", "OBJECT") == subcommand_error("OBJECT")
    assert c.cmd("DEBUG", "OBJECT", "s", "x") == subcommand_error("OBJECT")
    assert c.cmd_raw("DEBUG", "OBJECT", "s").startswith(b"+Value at:0x")


def test_object_resp3(dbg):
    srv, c = dbg
    c.cmd("HELLO", "3")
    c.cmd("SET", "s", "hello")
    assert c.cmd_raw("DEBUG", "OBJECT", "s").startswith(b"+Value at:0x")
    assert c.cmd_raw("DEBUG", "OBJECT", "nokey") == b"-ERR no such key\r\n"


def test_object_clock_is_not_touched(dbg):
    srv, c = dbg
    c.cmd("SET", "k", "v")
    time.sleep(1.2)
    _, _, lru, idle, _ = debug_object(c, "k")
    assert idle >= 1
    assert debug_object(c, "k")[3] >= 1
    assert c.cmd("OBJECT", "IDLETIME", "k") >= 1
    c.cmd("GET", "k")
    _, _, lru2, idle2, _ = debug_object(c, "k")
    assert idle2 == 0 and lru2 >= lru + 1


def test_object_sees_logically_expired_keys(dbg):
    srv, c = dbg
    assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
    c.cmd("SET", "gone", "v", "PX", "30")
    time.sleep(0.2)
    # As Redis's dictFind: the entry is still there until something reaps it.
    assert debug_object(c, "gone")[0] == "embstr"
    assert c.cmd("DEBUG", "LISTPACK", "gone") == Error("ERR no such key")
    assert c.cmd("GET", "gone") is None
    assert c.cmd("DEBUG", "OBJECT", "gone") == Error("ERR no such key")


def test_string_serializedlength_as_redis(dbg):
    """Strings have one RDB form when LZF is off: compare with Redis."""
    from conftest import real_redis
    srv, c = dbg
    values = ["", "a", "hello", "0", "-1", "127", "128", "-128", "-129", "32767", "32768", "-32768", "2147483647",
              "2147483648", "-2147483648", "-2147483649", "12345678901", "007", "+1", "1.5", "x" * 63, "x" * 64,
              "x" * 16383, "x" * 16384]
    with real_redis("--enable-debug-command", "yes", "--rdbcompression", "no") as port:
        if port is None:
            pytest.skip("no reference redis-server")
        ref = RespConn(port=port)
        assert c.cmd("CONFIG", "SET", "rdbcompression", "no") == "OK"
        for i, v in enumerate(values):
            c.cmd("SET", "k%d" % i, v)
            ref.cmd("SET", "k%d" % i, v)
            ours = debug_object(c, "k%d" % i)
            # Redis's shared small integers show refcount INT_MAX.
            m = re.search(r"encoding:(\S+) serializedlength:(\d+)", ref.cmd("DEBUG", "OBJECT", "k%d" % i))
            assert (ours[0], ours[1]) == (m.group(1), int(m.group(2))), v[:20]
        ref.close()


# ---- LISTPACK ------------------------------------------------------------------------------

def test_listpack(dbg):
    srv, c = dbg
    c.cmd("HSET", "h", "f", "v", "n", "12")
    c.cmd("SET", "s", "v")
    assert c.cmd("DEBUG", "LISTPACK", "h") == "Listpack structure printed on stdout"
    assert c.cmd("DEBUG", "LISTPACK", "s") == Error("ERR Not a listpack encoded object.")
    assert c.cmd("DEBUG", "LISTPACK", "nokey") == Error("ERR no such key")
    assert c.cmd("DEBUG", "LISTPACK") == subcommand_error("LISTPACK")
    c.cmd("CONFIG", "SET", "hash-max-listpack-entries", "0")
    c.cmd("HSET", "big", "f", "v")
    assert c.cmd("DEBUG", "LISTPACK", "big") == Error("ERR Not a listpack encoded object.")


# ---- PROTOCOL -------------------------------------------------------------------------------

RESP2 = {
    "string": b"$11\r\nHello World\r\n",
    "integer": b":12345\r\n",
    "double": b"$5\r\n3.141\r\n",
    "bignum": b"$37\r\n1234567999999999999999999999999999999\r\n",
    "null": b"$-1\r\n",
    "array": b"*3\r\n:0\r\n:1\r\n:2\r\n",
    "set": b"*3\r\n:0\r\n:1\r\n:2\r\n",
    "map": b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n",
    "attrib": b"$39\r\nSome real reply following the attribute\r\n",
    "push": b"-ERR RESP2 is not supported by this command\r\n",
    "verbatim": b"$25\r\nThis is a verbatim\nstring\r\n",
    "true": b":1\r\n",
    "false": b":0\r\n",
}
RESP3 = {
    "string": b"$11\r\nHello World\r\n",
    "integer": b":12345\r\n",
    "double": b",3.141\r\n",
    "bignum": b"(1234567999999999999999999999999999999\r\n",
    "null": b"_\r\n",
    "array": b"*3\r\n:0\r\n:1\r\n:2\r\n",
    "set": b"~3\r\n:0\r\n:1\r\n:2\r\n",
    "map": b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n",
    "attrib": b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"
              b"$39\r\nSome real reply following the attribute\r\n",
    "push": b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n$40\r\nSome real reply following the push reply\r\n",
    "verbatim": b"=29\r\ntxt:This is a verbatim\nstring\r\n",
    "true": b"#t\r\n",
    "false": b"#f\r\n",
}
WRONG_TYPE = (b"-ERR Wrong protocol type name. Please use one of the following: "
              b"string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false\r\n")


def exchange(sock, args, expect_len):
    """Send one command, read exactly expect_len bytes (and check nothing
    more arrives soon after)."""
    sock.sendall(encode(*args))
    data = b""
    deadline = time.time() + 10
    while len(data) < expect_len and time.time() < deadline:
        data += sock.recv(65536)
    return data


@pytest.mark.parametrize("resp", [2, 3])
def test_protocol(dbg, resp):
    srv, _ = dbg
    sock = socket.create_connection((srv.host, srv.port), timeout=10)
    if resp == 3:
        sock.sendall(encode("HELLO", "3"))
        time.sleep(0.2)
        sock.recv(65536)
    table = RESP3 if resp == 3 else RESP2
    for name, want in table.items():
        assert exchange(sock, ("DEBUG", "PROTOCOL", name), len(want)) == want, name
        assert exchange(sock, ("DEBUG", "PROTOCOL", name.upper()), len(want)) == want, name
    assert exchange(sock, ("DEBUG", "PROTOCOL", "nosuch"), len(WRONG_TYPE)) == WRONG_TYPE
    ping = exchange(sock, ("PING",), 7)
    assert ping == b"+PONG\r\n"  # nothing was left over
    sock.close()


@pytest.mark.parametrize("resp", [2, 3])
def test_protocol_same_as_redis(dbg, resp):
    from conftest import real_redis
    srv, _ = dbg
    with real_redis("--enable-debug-command", "yes") as port:
        if port is None:
            pytest.skip("no reference redis-server")
        ours = socket.create_connection((srv.host, srv.port), timeout=10)
        ref = socket.create_connection(("127.0.0.1", port), timeout=10)
        if resp == 3:
            for s in (ours, ref):
                s.sendall(encode("HELLO", "3"))
            time.sleep(0.3)
            ours.recv(65536)
            ref.recv(65536)
        table = RESP3 if resp == 3 else RESP2
        for name, want in table.items():
            assert exchange(ref, ("DEBUG", "PROTOCOL", name), len(want)) == want, name
            assert exchange(ours, ("DEBUG", "PROTOCOL", name), len(want)) == want, name
        ours.close()
        ref.close()


# ---- SLEEP, SET-ACTIVE-EXPIRE, CHANGE-REPL-ID ----------------------------------------

def test_sleep_blocks_the_worker(new_server):
    srv = new_server("--enable-debug-command", "yes", threads=1)
    a, b = srv.conn(), srv.conn()
    a.send(encode("DEBUG", "SLEEP", "0.5"))
    time.sleep(0.05)
    t0 = time.time()
    assert b.cmd("PING") == "PONG"
    assert time.time() - t0 >= 0.3  # answered only once the worker woke
    assert a.read() == "OK"
    t0 = time.time()
    assert a.cmd("DEBUG", "SLEEP", "0.2") == "OK"
    assert time.time() - t0 >= 0.19
    for lenient in ("0", "-1", "abc", "0.0001"):
        assert a.cmd("DEBUG", "SLEEP", lenient) == "OK"
    assert a.cmd("DEBUG", "SLEEP") == subcommand_error("SLEEP")
    a.close()
    b.close()


def expired_keys(c):
    text = c.cmd("INFO", "stats").decode()
    return int(re.search(r"expired_keys:(\d+)", text).group(1))


def test_set_active_expire(dbg):
    srv, c = dbg
    assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "0") == "OK"
    for i in range(20):
        c.cmd("SET", "k%d" % i, "v", "PX", "50")
    time.sleep(0.8)  # several expiry cycles at hz 10
    assert expired_keys(c) == 0
    assert c.cmd("DBSIZE") == 20
    assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1") == "OK"
    deadline = time.time() + 5
    while time.time() < deadline and c.cmd("DBSIZE"):
        time.sleep(0.05)
    assert c.cmd("DBSIZE") == 0
    assert expired_keys(c) == 20
    # Read with atoi, as Redis reads it.
    assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "abc") == "OK"
    c.cmd("SET", "x", "v", "PX", "30")
    time.sleep(0.6)
    assert c.cmd("DBSIZE") == 1
    assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE", "1") == "OK"
    assert c.cmd("DEBUG", "SET-ACTIVE-EXPIRE") == subcommand_error("SET-ACTIVE-EXPIRE")


def replication(c):
    text = c.cmd("INFO", "replication").decode()
    return dict(ln.split(":", 1) for ln in text.split("\r\n") if ":" in ln)


def test_change_repl_id(dbg):
    srv, c = dbg
    before = replication(c)
    assert re.fullmatch(r"[0-9a-f]{40}", before["master_replid"])
    assert replication(c)["master_replid"] == before["master_replid"]
    assert c.cmd("DEBUG", "CHANGE-REPL-ID") == "OK"
    after = replication(c)
    assert re.fullmatch(r"[0-9a-f]{40}", after["master_replid"])
    assert after["master_replid"] != before["master_replid"]
    assert after["master_replid2"] == "0" * 40
    assert after["second_repl_offset"] == "-1"
    # Seen the same from another worker's connection.
    other = srv.conn()
    assert replication(other)["master_replid"] == after["master_replid"]
    other.close()
    assert c.cmd("DEBUG", "CHANGE-REPL-ID", "x") == subcommand_error("CHANGE-REPL-ID")


# ---- STRINGMATCH-LEN, ERROR, LOG, what HotKV has not ------------------------------

@pytest.mark.parametrize("name", ["STRINGMATCH-LEN", "STRINGMATCH-TEST"])
def test_stringmatch_fuzz(dbg, name):
    """STRINGMATCH-LEN (Redis 8), also under Redis 7.0's name."""
    srv, _ = dbg
    c = srv.conn(timeout=300)
    assert c.cmd("DEBUG", name) == "Apparently Redis did not crash: test passed"
    assert c.cmd("PING") == "PONG"
    assert c.cmd("DEBUG", name, "x") == subcommand_error(name)
    c.close()


def test_error_and_log(dbg):
    srv, c = dbg
    assert c.cmd_raw("DEBUG", "ERROR", "MYERR something\r\nhappened") == b"-MYERR something  happened\r\n"
    assert c.cmd("DEBUG", "ERROR", "ERR plain") == Error("ERR plain")
    assert c.cmd("DEBUG", "LOG", "hello from the test") == "OK"
    deadline = time.time() + 5
    while time.time() < deadline and "DEBUG LOG: hello from the test" not in srv.log():
        time.sleep(0.05)
    assert "DEBUG LOG: hello from the test" in srv.log()


@pytest.mark.parametrize("args", [("MALLCTL", "x"), ("MALLCTL", "x", "1"), ("MALLCTL-STR", "x"), ("JMAP",),
                                  ("NOSUCH",), ("QUICKLIST-PACKED-THRESHOLD",)])
def test_missing_subcommands(dbg, args):
    """A mimalloc build has no MALLCTL (Redis's needs jemalloc): the answer
    is the unknown-subcommand error, as from a Redis built without it."""
    srv, c = dbg
    assert c.cmd("DEBUG", *args) == subcommand_error(args[0])


def test_help(dbg):
    srv, c = dbg
    help_ = c.cmd("DEBUG", "HELP")
    assert help_[0] == "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert help_[-2:] == ["HELP", "    Prints this help."]
    names = [ln.split(" ")[0] for ln in help_[1:] if not ln.startswith(" ")]
    assert names == ["CHANGE-REPL-ID", "DIGEST", "DIGEST-VALUE", "ERROR", "JOURNAL", "JOURNAL", "LOG", "OBJECT",
                     "RELOAD", "PROTOCOL", "QUICKLIST-PACKED-THRESHOLD", "SET-ACTIVE-EXPIRE", "SLEEP", "STRINGMATCH-LEN",
                     "LISTPACK", "HELP"]
    assert c.cmd("DEBUG", "HELP", "x") == subcommand_error("HELP")
