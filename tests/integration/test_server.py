"""Server commands: DBSIZE, FLUSHDB, FLUSHALL, TIME, LASTSAVE, SHUTDOWN,
MEMORY USAGE / HELP. INFO, CONFIG and COMMAND have their own files."""
import os
import time

import pytest
from resp import Error, RespConn

SYNTAX = Error("ERR syntax error")


def arity(name):
    return Error("ERR wrong number of arguments for '%s' command" % name)


# ---- DBSIZE, FLUSHDB, FLUSHALL ------------------------------------------------

def test_dbsize(conn):
    assert conn.cmd("DBSIZE") == 0
    for i in range(10):
        conn.cmd("SET", "k%d" % i, "v")
    assert conn.cmd("DBSIZE") == 10
    conn.cmd("SELECT", "1")
    assert conn.cmd("DBSIZE") == 0
    conn.cmd("SELECT", "0")
    assert conn.cmd("DBSIZE", "x") == arity("dbsize")


@pytest.mark.parametrize("mode", [None, "SYNC", "ASYNC", "async"])
def test_flushdb(conn, mode):
    conn.cmd("SET", "a", "1")
    conn.cmd("SELECT", "2")
    conn.cmd("SET", "b", "1")
    args = ["FLUSHDB"] + ([mode] if mode else [])
    assert conn.cmd(*args) == "OK"
    assert conn.cmd("DBSIZE") == 0
    conn.cmd("SELECT", "0")
    assert conn.cmd("DBSIZE") == 1  # other databases untouched


@pytest.mark.parametrize("mode", [None, "SYNC", "ASYNC"])
def test_flushall(conn, mode):
    conn.cmd("SET", "a", "1")
    conn.cmd("SELECT", "5")
    conn.cmd("SET", "b", "1")
    args = ["FLUSHALL"] + ([mode] if mode else [])
    assert conn.cmd(*args) == "OK"
    assert conn.cmd("DBSIZE") == 0
    conn.cmd("SELECT", "0")
    assert conn.cmd("DBSIZE") == 0


def test_flush_syntax(conn):
    assert conn.cmd("FLUSHALL", "FOO") == SYNTAX
    assert conn.cmd("FLUSHDB", "SYNC", "ASYNC") == SYNTAX


# ---- TIME, LASTSAVE --------------------------------------------------------------

def test_time(conn, conn3):
    reply = conn.cmd("TIME")
    assert isinstance(reply, list) and len(reply) == 2
    secs, usecs = int(reply[0]), int(reply[1])
    assert abs(secs + usecs / 1e6 - time.time()) < 5
    assert 0 <= usecs < 1_000_000
    assert conn.cmd_raw("TIME").startswith(b"*2\r\n$")
    assert conn3.cmd_raw("TIME").startswith(b"*2\r\n$")
    assert conn.cmd("TIME", "x") == arity("time")
    # Monotone enough across calls.
    a = conn.cmd("TIME")
    b = conn.cmd("TIME")
    assert (int(b[0]), int(b[1])) >= (int(a[0]), int(a[1]))


def test_lastsave(server, conn):
    v = conn.cmd("LASTSAVE")
    assert isinstance(v, int)
    assert v <= time.time() + 1
    if server.proc:
        # No save has happened: the start-up time.
        assert v >= time.time() - 24 * 3600
    assert conn.cmd("LASTSAVE", "x") == arity("lastsave")


# ---- MEMORY ----------------------------------------------------------------------

def test_memory_usage(conn, conn3):
    conn.cmd("SET", "small", "v")
    conn.cmd("SET", "big", "x" * 10000)
    small = conn.cmd("MEMORY", "USAGE", "small")
    big = conn.cmd("MEMORY", "USAGE", "big")
    assert isinstance(small, int) and 0 < small < 200
    assert big >= 10000
    assert conn.cmd("MEMORY", "USAGE", "big", "SAMPLES", "0") == big
    assert conn.cmd("MEMORY", "USAGE", "big", "samples", "10") == big
    assert conn.cmd("MEMORY", "USAGE", "nokey") is None
    assert conn.cmd_raw("MEMORY", "USAGE", "nokey") == b"$-1\r\n"
    assert conn3.cmd_raw("MEMORY", "USAGE", "nokey") == b"_\r\n"


def test_memory_usage_errors(conn):
    conn.cmd("SET", "k", "v")
    assert conn.cmd("MEMORY", "USAGE") == arity("memory|usage")
    assert conn.cmd("MEMORY", "USAGE", "k", "SAMPLES") == SYNTAX
    assert conn.cmd("MEMORY", "USAGE", "k", "SAMPLES", "x") == Error("ERR value is not an integer or out of range")
    assert conn.cmd("MEMORY", "USAGE", "k", "SAMPLES", "-1") == SYNTAX
    assert conn.cmd("MEMORY", "USAGE", "k", "FOO", "1") == SYNTAX
    assert conn.cmd("MEMORY") == arity("memory")
    assert conn.cmd("MEMORY", "NOSUCH") == Error("ERR unknown subcommand 'NOSUCH'. Try MEMORY HELP.")


def test_memory_usage_counts_no_keyspace_hit(conn):
    conn.cmd("SET", "k", "v")

    def hits():
        text = conn.cmd("INFO", "stats").decode()
        return [int(text.split(f + ":")[1].split("\r\n")[0]) for f in ("keyspace_hits", "keyspace_misses")]

    before = hits()
    assert conn.cmd("MEMORY", "USAGE", "k") > 0
    assert conn.cmd("MEMORY", "USAGE", "nokey") is None
    assert hits() == before


def test_memory_usage_expired_key(server, conn):
    if not server.proc:
        pytest.skip("Redis reports a logically expired key until it is reclaimed")
    conn.cmd("SET", "t", "v", "PX", "1")
    time.sleep(0.01)
    assert conn.cmd("MEMORY", "USAGE", "t") is None


def test_memory_help(conn):
    lines = conn.cmd("MEMORY", "HELP")
    assert lines[0] == "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert "USAGE <key> [SAMPLES <count>]" in lines
    assert lines[-2:] == ["HELP", "    Prints this help."]


# ---- SHUTDOWN --------------------------------------------------------------------

def test_shutdown_errors(new_server):
    srv = new_server("--enable-protected-configs", "yes")
    c = srv.conn()
    assert c.cmd("SHUTDOWN", "FOO") == SYNTAX
    assert c.cmd("SHUTDOWN", "SAVE", "NOSAVE") == SYNTAX
    assert c.cmd("SHUTDOWN", "ABORT", "NOW") == SYNTAX
    assert c.cmd("SHUTDOWN", "ABORT") == Error("ERR No shutdown in progress.")
    # A save that cannot be written (its directory is gone) keeps the
    # server running.
    gone = os.path.join(srv.workdir, "gone")
    os.mkdir(gone)
    assert c.cmd("CONFIG", "SET", "dir", gone) == "OK"
    os.rmdir(gone)
    assert c.cmd("SHUTDOWN", "SAVE") == Error("ERR Errors trying to SHUTDOWN. Check logs.")
    assert "Error trying to save the DB, can't exit." in srv.log()
    assert c.cmd("PING") == "PONG"
    assert srv.alive()
    c.close()


@pytest.mark.parametrize("args", [(), ("NOSAVE",), ("NOW",), ("NOSAVE", "NOW", "FORCE"), ("SAVE", "FORCE")])
def test_shutdown_exits_cleanly(new_server, args):
    srv = new_server()
    c = srv.conn()
    bystander = srv.conn()
    assert bystander.cmd("PING") == "PONG"
    c.send(b"*%d\r\n$8\r\nSHUTDOWN\r\n" % (1 + len(args)) + b"".join(
        b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in args))
    # No reply: the connection just closes.
    with pytest.raises(ConnectionError):
        c.read()
    assert srv.proc.wait(20) == 0
    with pytest.raises((ConnectionError, OSError)):
        bystander.cmd("PING")
    log = srv.log()
    assert "User requested shutdown" in log
    assert "ready to exit" in log
    c.close()
    bystander.close()


# ---- DEBUG -----------------------------------------------------------------------

DEBUG_REFUSED = Error('ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can '
                      'run it from a local connection, otherwise you need to set this option in the configuration '
                      'file, and then restart the server.')


def test_debug_refused_by_default(new_server):
    srv = new_server()
    c = srv.conn()
    assert c.cmd("DEBUG", "SLEEP", "0") == DEBUG_REFUSED
    assert c.cmd("CONFIG", "GET", "enable-debug-command") == [b"enable-debug-command", b"no"]
    assert c.cmd("CONFIG", "SET", "enable-debug-command", "yes") == Error(
        "ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - can't set immutable config")
    c.close()


@pytest.mark.parametrize("mode", ["yes", "local"])
def test_debug_sleep(new_server, mode):
    srv = new_server("--enable-debug-command", mode)
    c = srv.conn()
    t0 = time.time()
    assert c.cmd("DEBUG", "SLEEP", "0.2") == "OK"
    assert time.time() - t0 >= 0.19
    assert c.cmd("DEBUG", "SLEEP", "0") == "OK"
    assert c.cmd("debug", "sleep", "notanumber") == "OK"  # read leniently, as Redis does
    assert c.cmd("DEBUG", "NOSUCH") == Error(
        "ERR unknown subcommand or wrong number of arguments for 'NOSUCH'. Try DEBUG HELP.")
    assert c.cmd("DEBUG", "SLEEP") == Error(
        "ERR unknown subcommand or wrong number of arguments for 'SLEEP'. Try DEBUG HELP.")
    assert c.cmd("DEBUG") == arity("debug")
    help_ = c.cmd("DEBUG", "HELP")
    assert help_[0] == "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert "SLEEP <seconds>" in help_
    c.close()
    # Over the unix socket too.
    u = RespConn(unix=srv.unix)
    assert u.cmd("DEBUG", "SLEEP", "0") == "OK"
    u.close()


def test_redis_py_helpers(r):
    r.set("k", "v")
    secs, usecs = r.time()
    assert abs(secs - time.time()) < 5
    assert r.lastsave().year >= 2020
    assert r.memory_usage("k") > 0
    assert r.memory_usage("nokey") is None
    assert r.dbsize() == 1
